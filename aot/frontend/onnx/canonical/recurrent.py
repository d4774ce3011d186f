"""LSTM, GRU and RNN in one canonical form, whatever the opset (layout arrived in opset 14).

The rule checks the shapes once and resolves the attributes the spec leaves implicit: the
per-direction activation list (defaults filled in), each function's alpha and beta (the
attribute lists are consumed, in order, only by the functions that take them, as onnxruntime
reads them), clip, layout, and the sizes the kernel loops over. Kernels then never look at
the raw attributes.
"""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.ir import Graph, Node

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
DEFAULT_ACTIVATIONS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"), "RNN": ("Tanh",)}
# the spec's activation functions: (takes alpha, takes beta, default alpha, default beta)
ACTIVATIONS: dict[str, tuple[bool, bool, float, float]] = {
    "Relu": (False, False, 0.0, 0.0),
    "Tanh": (False, False, 0.0, 0.0),
    "Sigmoid": (False, False, 0.0, 0.0),
    "Affine": (True, True, 1.0, 0.0),
    "LeakyRelu": (True, False, 0.01, 0.0),
    "ThresholdedRelu": (True, False, 1.0, 0.0),
    "ScaledTanh": (True, True, 1.0, 1.0),
    "HardSigmoid": (True, True, 0.2, 0.5),
    "Elu": (True, False, 1.0, 0.0),
    "Softsign": (False, False, 0.0, 0.0),
    "Softplus": (False, False, 0.0, 0.0),
}
_BY_LOWER = {k.lower(): k for k in ACTIVATIONS}


def _activations(node: Node, cell: str, directions: int) -> list[list[tuple[str, float, float]]]:
    """Per direction, each function as (name, alpha, beta)."""
    per_dir = len(DEFAULT_ACTIVATIONS[cell])
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in node.attrs.get("activations", [])]
    if not names:
        names = list(DEFAULT_ACTIVATIONS[cell]) * directions
    if len(names) != per_dir * directions:
        raise AotcError(f"activations lists {len(names)} functions; {cell} with {directions} direction(s) "
                        f"needs {per_dir * directions}", node=node)
    alphas = [float(v) for v in node.attrs.get("activation_alpha", [])]
    betas = [float(v) for v in node.attrs.get("activation_beta", [])]
    funcs = []
    for name in names:
        canon = _BY_LOWER.get(name.lower())
        if canon is None:
            raise AotcError(f"activation '{name}' is not one of the spec's ({', '.join(ACTIVATIONS)})", node=node)
        takes_a, takes_b, alpha, beta = ACTIVATIONS[canon]
        if takes_a and alphas:
            alpha = alphas.pop(0)
        if takes_b and betas:
            beta = betas.pop(0)
        funcs.append((canon, alpha, beta))
    return [funcs[d * per_dir:(d + 1) * per_dir] for d in range(directions)]


def _expect(node: Node, graph: Graph, k: int, what: str, shape: tuple[int, ...]) -> None:
    if k < len(node.inputs) and node.inputs[k]:
        got = graph.tensors[node.inputs[k]].shape
        if tuple(got) != shape:
            raise AotcError(f"{what} has shape {list(got)}, expected {list(shape)}", node=node)


def recurrent(node: Node, graph: Graph, opset: int) -> None:
    """LSTM/GRU/RNN -> attrs cell, gates, seq, batch, input, hidden, directions, reverse,
    layout, clip (0: none), linear_before_reset, input_forget, activations."""
    _canonical(node, graph, node.op, transposed=False)


def _canonical(node: Node, graph: Graph, cell: str, transposed: bool) -> None:
    """recurrent()'s attributes for a `cell` whose W is [dirs, gates * hidden, input] and R [dirs, gates *
    hidden, hidden], or (transposed: com.microsoft DynamicQuantizeLSTM) [dirs, input, 4 * hidden] and
    [dirs, hidden, 4 * hidden]."""
    a = node.attrs
    direction = a.get("direction", "forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    if direction not in ("forward", "reverse", "bidirectional"):
        raise AotcError(f"direction '{direction}' is not forward, reverse or bidirectional", node=node)
    directions = 2 if direction == "bidirectional" else 1
    layout = int(a.get("layout", 0))
    if layout not in (0, 1):
        raise AotcError(f"layout {layout} is not 0 or 1", node=node)
    x = graph.tensors[node.inputs[0]].shape
    if len(x) != 3:
        raise AotcError(f"X has rank {len(x)}, expected 3", node=node)
    seq, batch = (x[0], x[1]) if layout == 0 else (x[1], x[0])
    gates = GATES[cell]
    w = graph.tensors[node.inputs[1]].shape
    if transposed and len(w) == 3:
        w = (w[0], w[2], w[1])
    if len(w) != 3 or w[0] != directions or w[1] % gates or w[2] != x[2]:
        raise AotcError(f"W has shape {list(w)}, expected [{directions}, {gates} * hidden_size, {x[2]}]", node=node)
    hidden = w[1] // gates
    if "hidden_size" in a and int(a["hidden_size"]) != hidden:
        raise AotcError(f"hidden_size {a['hidden_size']} does not match W's {hidden}", node=node)
    _expect(node, graph, 2, "R", (directions, hidden, gates * hidden) if transposed else
            (directions, gates * hidden, hidden))
    _expect(node, graph, 3, "B", (directions, 2 * gates * hidden))
    _expect(node, graph, 4, "sequence_lens", (batch,))
    state = (directions, batch, hidden) if layout == 0 else (batch, directions, hidden)
    _expect(node, graph, 5, "initial_h", state)
    if cell == "LSTM":
        _expect(node, graph, 6, "initial_c", state)
        _expect(node, graph, 7, "P", (directions, 3 * hidden))
    if seq < 1 or batch < 1 or hidden < 1:
        raise AotcError(f"X {list(x)} with hidden size {hidden}: every size must be at least 1", node=node)
    clip = float(a["clip"]) if "clip" in a else 0.0
    if "clip" in a and not clip > 0.0:
        raise AotcError(f"clip {clip} must be positive", node=node)
    lbr = int(a.get("linear_before_reset", 0))
    forget = int(a.get("input_forget", 0))
    node.attrs = {
        "cell": cell, "gates": gates, "seq": seq, "batch": batch, "input": x[2], "hidden": hidden,
        "directions": directions, "reverse": int(direction == "reverse"), "layout": layout, "clip": clip,
        "linear_before_reset": lbr if cell == "GRU" else 0, "input_forget": forget if cell == "LSTM" else 0,
        "activations": _activations(node, cell, directions),
    }


def dynamic_quantize_lstm(node: Node, graph: Graph, opset: int) -> None:
    """com.microsoft DynamicQuantizeLSTM (what onnxruntime's quantize_dynamic writes for an LSTM): an LSTM
    whose W [dirs, input, 4 * hidden] and R [dirs, hidden, 4 * hidden] are 8-bit constants with a scale per
    direction or per gate unit (inputs 8-11), X and each step's H quantized to uint8 at run time. Its
    attributes are LSTM's; the scales and zero points are checked here. sequence_lens is refused, and zero
    points that differ within a direction (onnxruntime's kernel reads only the first)."""
    ins = list(node.inputs) + [""] * (12 - len(node.inputs))
    missing = [what for k, what in ((0, "X"), (1, "W"), (2, "R"), (8, "W_scale"), (9, "W_zero_point"),
                                    (10, "R_scale"), (11, "R_zero_point")) if not ins[k]]
    if missing:
        raise AotcError(f"DynamicQuantizeLSTM needs {', '.join(missing)}", node=node)
    if ins[4]:
        raise AotcError("DynamicQuantizeLSTM's input sequence_lens is not supported", node=node)
    if graph.tensors[ins[0]].dtype != "float32":
        raise AotcError(f"DynamicQuantizeLSTM of {graph.tensors[ins[0]].dtype} X is not supported (float32)", node=node)
    _canonical(node, graph, "LSTM", transposed=True)
    dirs, units = node.attrs["directions"], 4 * node.attrs["hidden"]
    for k, what, at in ((1, "W", 8), (2, "R", 10)):  # the weights, then their scale and zero point inputs
        data = graph.const(ins[k])
        if data is None or data.dtype not in (np.int8, np.uint8):
            raise AotcError(f"DynamicQuantizeLSTM's {what} must be an int8 or uint8 constant", node=node)
        scale, zero = graph.const(ins[at]), graph.const(ins[at + 1])
        if scale is None or zero is None:
            raise AotcError(f"DynamicQuantizeLSTM's {what}_scale and {what}_zero_point must be constants", node=node)
        if scale.dtype != np.float32 or zero.dtype != data.dtype or scale.shape != zero.shape \
                or scale.shape not in ((dirs,), (dirs, units)):
            raise AotcError(f"DynamicQuantizeLSTM's {what}_scale {scale.dtype} {list(scale.shape)} and "
                            f"{what}_zero_point {zero.dtype} {list(zero.shape)} are not supported (float32 and "
                            f"{data.dtype}, [{dirs}] or [{dirs}, {units}])", node=node)
        if any(len(set(zero.reshape(dirs, -1)[d].tolist())) > 1 for d in range(dirs)):
            raise AotcError(f"DynamicQuantizeLSTM's {what}_zero_point differs within a direction: not supported "
                            "(onnxruntime reads only the first)", node=node)
