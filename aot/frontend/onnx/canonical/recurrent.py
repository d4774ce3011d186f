"""LSTM, GRU and RNN in one canonical form, whatever the opset (layout arrived in opset 14).

The rule checks the shapes once and resolves the attributes the spec leaves implicit: the
per-direction activation list (defaults filled in), each function's alpha and beta (the
attribute lists are consumed, in order, only by the functions that take them, as onnxruntime
reads them), clip, layout, and the sizes the kernel loops over. Kernels then never look at
the raw attributes.
"""

from __future__ import annotations

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


def _activations(node: Node, directions: int) -> list[list[tuple[str, float, float]]]:
    """Per direction, each function as (name, alpha, beta)."""
    per_dir = len(DEFAULT_ACTIVATIONS[node.op])
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in node.attrs.get("activations", [])]
    if not names:
        names = list(DEFAULT_ACTIVATIONS[node.op]) * directions
    if len(names) != per_dir * directions:
        raise AotcError(f"activations lists {len(names)} functions; {node.op} with {directions} direction(s) "
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
    gates = GATES[node.op]
    w = graph.tensors[node.inputs[1]].shape
    if len(w) != 3 or w[0] != directions or w[1] % gates or w[2] != x[2]:
        raise AotcError(f"W has shape {list(w)}, expected [{directions}, {gates} * hidden_size, {x[2]}]", node=node)
    hidden = w[1] // gates
    if "hidden_size" in a and int(a["hidden_size"]) != hidden:
        raise AotcError(f"hidden_size {a['hidden_size']} does not match W's {hidden}", node=node)
    _expect(node, graph, 2, "R", (directions, gates * hidden, hidden))
    _expect(node, graph, 3, "B", (directions, 2 * gates * hidden))
    _expect(node, graph, 4, "sequence_lens", (batch,))
    state = (directions, batch, hidden) if layout == 0 else (batch, directions, hidden)
    _expect(node, graph, 5, "initial_h", state)
    if node.op == "LSTM":
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
        "cell": node.op, "gates": gates, "seq": seq, "batch": batch, "input": x[2], "hidden": hidden,
        "directions": directions, "reverse": int(direction == "reverse"), "layout": layout, "clip": clip,
        "linear_before_reset": lbr if node.op == "GRU" else 0, "input_forget": forget if node.op == "LSTM" else 0,
        "activations": _activations(node, directions),
    }
