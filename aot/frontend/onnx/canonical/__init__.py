"""Canonical attributes: resolve ONNX opset differences once, in one place.

ONNX moved many parameters from attributes to inputs over its versions (Clip's
min/max, Slice's starts/ends, Pad's pads, Squeeze's axes, Reduce axes, Resize's
scales ...) and changed some meanings (Softmax's axis before and after opset 13).
Each rule here turns a node of any supported opset into one canonical form:
constant parameter inputs become attributes, defaults are filled in, negative
axes are made positive, auto_pad becomes explicit pads. Kernels, passes and
vendors then see a single form and never look at the opset.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical import quant as canonical_quant
from aot.frontend.onnx.canonical.einsum import einsum
from aot.frontend.onnx.canonical.halves import compute_halves_in_float
from aot.frontend.onnx.canonical.recurrent import recurrent
from aot.ir import Graph, Node, Tensor
from aot.ir.evaluate import evaluate_node
from aot.ir.schemas import dft_out_shape
from aot.unsupported import UnsupportedNodes

Rule = Callable[[Node, Graph, int], "list[Node] | None"]


def canonicalize(graph: Graph, opset: int) -> None:
    """Every node in its canonical form. A node a rule refuses does not stop the others: one such
    node is refused with its rule's message, several in one line grouped by op (UnsupportedNodes)."""
    new_nodes: list[Node] = []
    refused: list[tuple[AotcError, Node]] = []
    for node in graph.nodes:
        rule = RULES.get(node.op)
        try:
            replaced = rule(node, graph, opset) if rule else None
        except AotcError as e:
            if getattr(e.node, "name", None) != node.name:  # a shim of the node (QLinear ops) counts as it
                raise
            refused.append((e, node))
            continue
        new_nodes.extend(replaced if replaced is not None else [node])
    if len(refused) == 1:
        raise refused[0][0]
    if refused:
        raise UnsupportedNodes([(node, e.message) for e, node in refused])
    graph.nodes = new_nodes
    compute_halves_in_float(graph)  # float16/bfloat16: every op but Cast and the byte movers in float32


# --- helpers ------------------------------------------------------------------

def _const(graph: Graph, node: Node, idx: int, what: str) -> np.ndarray | None:
    """Constant value of optional input `idx`; None when omitted; error when computed at run time."""
    if idx >= len(node.inputs) or not node.inputs[idx]:
        return None
    value = graph.const(node.inputs[idx])
    if value is None:
        raise AotcError(f"{what} (input {idx}) must be a constant", node=node)
    return value


def _shape(graph: Graph, name: str) -> tuple[int, ...]:
    return graph.tensors[name].shape


def _axis(axis: int, rank: int, node: Node) -> int:
    if not -rank <= axis < max(rank, 1):
        raise AotcError(f"axis {axis} is out of range for rank {rank}", node=node)
    return axis + rank if axis < 0 else axis


def _data_only(node: Node, n: int = 1) -> None:
    node.inputs = node.inputs[:n]


# --- convolution and pooling ----------------------------------------------------

def _spatial_pads(node: Node, in_spatial: tuple[int, ...], kernel: tuple[int, ...],
                  strides: list[int], dilations: list[int]) -> list[int]:
    """Explicit ONNX pads [begin..., end...] with auto_pad resolved."""
    nd = len(in_spatial)
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = list(node.attrs.get("pads", [0] * 2 * nd))
        if len(pads) != 2 * nd:
            raise AotcError(f"pads has {len(pads)} values, expected {2 * nd}", node=node)
        return pads
    if auto_pad == "VALID":
        return [0] * 2 * nd
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise AotcError(f"auto_pad '{auto_pad}' is not valid", node=node)
    begin, end = [], []
    for i in range(nd):
        out = math.ceil(in_spatial[i] / strides[i])
        eff_k = (kernel[i] - 1) * dilations[i] + 1
        total = max(0, (out - 1) * strides[i] + eff_k - in_spatial[i])
        small, big = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else big)
        end.append(big if auto_pad == "SAME_UPPER" else small)
    return begin + end


def _window_attrs(node: Node, in_shape: tuple[int, ...], kernel: tuple[int, ...]) -> None:
    nd = len(kernel)
    strides = list(node.attrs.get("strides", [1] * nd))
    dilations = list(node.attrs.get("dilations", [1] * nd))
    pads = _spatial_pads(node, in_shape[2:], kernel, strides, dilations)
    node.attrs.update(kernel_shape=list(kernel), strides=strides, dilations=dilations, pads=pads)
    node.attrs.pop("auto_pad", None)


def conv(node: Node, graph: Graph, opset: int) -> None:
    """auto_pad SAME_* is refused where onnxruntime departs from the ONNX spec: with dilations
    (it rejects them) and when the stride outgrows the kernel so that the total padding is
    below -1 (it shifts the windows; at -1 both agree with no padding)."""
    x = _shape(graph, node.inputs[0])
    kernel = tuple(node.attrs.get("kernel_shape", _shape(graph, node.inputs[1])[2:]))
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if any(d != 1 for d in node.attrs.get("dilations", [])):
            raise AotcError(f"Conv with auto_pad {auto_pad} and dilations > 1 is not supported "
                            "(onnxruntime rejects it)", node=node)
        strides = node.attrs.get("strides", [1] * len(kernel))
        for i, (n, k, s) in enumerate(zip(x[2:], kernel, strides, strict=True)):
            if (-(-n // s) - 1) * s + k - n < -1:
                raise AotcError(f"Conv with auto_pad {auto_pad}: on spatial axis {i} stride {s} outgrows kernel "
                                f"{k} so far that the padding is negative; not supported", node=node)
    _window_attrs(node, x, kernel)
    node.attrs.setdefault("group", 1)
    w = _shape(graph, node.inputs[1])  # W against X's channels: the kernel table's check (aot/kernels/conv.py)
    if len(node.inputs) > 2 and node.inputs[2] and _shape(graph, node.inputs[2]) != w[:1]:
        # onnx's inference does not look at B: a short one would be read past
        raise AotcError(f"B is {list(_shape(graph, node.inputs[2]))}, but W {list(w)} has {w[0]} filters", node=node)


def conv_transpose(node: Node, graph: Graph, opset: int) -> None:
    x = _shape(graph, node.inputs[0])
    w = _shape(graph, node.inputs[1])
    y = _shape(graph, node.outputs[0])
    nd = len(x) - 2
    kernel = list(node.attrs.get("kernel_shape", w[2:]))
    strides = list(node.attrs.get("strides", [1] * nd))
    dilations = list(node.attrs.get("dilations", [1] * nd))
    out_pad = list(node.attrs.get("output_padding", [0] * nd))
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER") and any(out_pad):
        raise AotcError("ConvTranspose with auto_pad SAME_* and output_padding is not supported "
                        "(onnx shape inference and onnxruntime disagree on its output size)", node=node)
    if "output_shape" in node.attrs or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        # total padding follows from the (known) output size
        begin, end = [], []
        for i in range(nd):
            total = strides[i] * (x[2 + i] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1 - y[2 + i]
            if total < 0:
                raise AotcError(f"ConvTranspose output size {y[2 + i]} is larger than the full output "
                                f"{y[2 + i] + total} (negative padding)", node=node)
            # ONNX (and onnxruntime): SAME_UPPER puts the odd unit at the end; SAME_LOWER and an
            # output_shape without auto_pad put it at the start (explicit pads are then ignored)
            if auto_pad == "SAME_UPPER":
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
        pads = begin + end
    elif auto_pad == "VALID":
        pads = [0] * 2 * nd
    else:
        pads = list(node.attrs.get("pads", [0] * 2 * nd))
    node.attrs = dict(kernel_shape=kernel, strides=strides, dilations=dilations, pads=pads,
                      output_padding=out_pad, group=node.attrs.get("group", 1))


def _trunc_div(a: int, b: int) -> int:
    """a / b rounded toward zero, as C and C++ do."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _pool_out_size(n: int, k: int, s: int, d: int, pad_begin: int, pad_end: int, ceil_mode: int) -> int:
    """Pooled size of one spatial axis, as onnxruntime computes it: the division rounds toward zero
    (so a window longer than the padded input still gives one output), and with ceil_mode a last
    window that would start past the end of the input is dropped."""
    span = n + pad_begin + pad_end - d * (k - 1) - 1
    out = -(-span // s) + 1 if ceil_mode else _trunc_div(span, s) + 1
    if ceil_mode and (out - 1) * s >= n + pad_begin:
        out -= 1
    return out


def pool(node: Node, graph: Graph, opset: int) -> None:
    """MaxPool / AveragePool -> kernel_shape, strides, dilations, pads [begin..., end...], ceil_mode,
    count_include_pad; the output shape is checked against the window arithmetic.

    auto_pad SAME_* is resolved as onnxruntime does: total padding (out - 1) * stride + kernel - in,
    the odd unit at the end (SAME_UPPER) or the start (SAME_LOWER), a negative total taken as 0.
    onnxruntime ignores dilations there (the ONNX spec does not), and shifts the windows when the
    total is so negative that the leading pad is below zero; both cases are refused rather than
    answered one way or the other.

    A MaxPool whose Indices output is read (an unread one was dropped on import) keeps it and
    storage_order (0: row major, 1: column major), which only that output depends on.
    """
    indices = node.op == "MaxPool" and len(node.outputs) > 1 and bool(node.outputs[1])
    x = _shape(graph, node.inputs[0])
    kernel = list(node.attrs["kernel_shape"])
    nd = len(kernel)
    if len(x) != nd + 2:
        raise AotcError(f"kernel_shape {kernel} does not match input rank {len(x)}", node=node)
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        strides = list(node.attrs.get("strides", [1] * nd))
        dilations = list(node.attrs.get("dilations", [1] * nd))
        for i in range(nd):
            if dilations[i] != 1 and kernel[i] != 1:
                raise AotcError(f"auto_pad {auto_pad} with dilations {dilations} is not supported (onnxruntime "
                                "pads for the undilated kernel, the ONNX spec for the dilated one)", node=node)
            n, s = x[2 + i], strides[i]
            total = (-(-n // s) - 1) * s + kernel[i] - n
            head = _trunc_div(total, 2) if auto_pad == "SAME_UPPER" else _trunc_div(total + 1, 2)
            if head < 0:
                raise AotcError(f"auto_pad {auto_pad} on spatial axis {i}: kernel {kernel[i]} is smaller than "
                                f"stride {s}, which needs negative padding; not supported", node=node)
    _window_attrs(node, x, tuple(kernel))  # SAME_* totals below zero become 0, as above: same windows
    a = node.attrs
    a.setdefault("ceil_mode", 0)
    a.setdefault("count_include_pad", 0)
    storage_order = int(a.pop("storage_order", 0))
    if indices:
        if storage_order not in (0, 1):
            raise AotcError(f"storage_order {storage_order} is not valid (0 row major, 1 column major)", node=node)
        if graph.tensors[node.outputs[1]].dtype != "int64":
            raise AotcError(f"MaxPool's Indices output is {graph.tensors[node.outputs[1]].dtype}, not int64",
                            node=node)
        a["storage_order"] = storage_order  # only the Indices output depends on it
    node.outputs = node.outputs[:2] if indices else node.outputs[:1]
    if any(p < 0 for p in a["pads"]):
        raise AotcError(f"negative pads {a['pads']} are not supported", node=node)
    y = _shape(graph, node.outputs[0])
    for i in range(nd):
        want = _pool_out_size(x[2 + i], kernel[i], a["strides"][i], a["dilations"][i], a["pads"][i],
                              a["pads"][nd + i], a["ceil_mode"])
        if want <= 0:
            raise AotcError(f"the window on spatial axis {i} is larger than the padded input: no output", node=node)
        longer = x[2 + i] + a["pads"][i] + a["pads"][nd + i] < a["dilations"][i] * (kernel[i] - 1) + 1
        if longer and node.op == "AveragePool" and a["count_include_pad"] and opset < 19 and not a["ceil_mode"]:
            # onnxruntime divides by the whole kernel here before opset 19 (unless ceil_mode), by the
            # taps inside the padded input from opset 19 on
            raise AotcError(f"count_include_pad=1 with a window longer than the padded input (spatial axis {i}) "
                            "is not supported before opset 19", node=node)
        if y[2 + i] != want:
            why = (" (with ceil_mode the last window would start past the end of the input: onnxruntime and "
                   "the ONNX reference drop it, ONNX shape inference keeps it)" if a["ceil_mode"] else "")
            raise AotcError(f"output size {y[2 + i]} on spatial axis {i} should be {want}{why}", node=node)


def lp_pool(node: Node, graph: Graph, opset: int) -> list[Node]:
    """LpPool -> (sum over the window of |x|^p)^(1/p), the sum as an AveragePool counting the pads (which
    add 0) times the window's size: Abs or x*x, AveragePool, Mul, then Sqrt or Pow(1/p)."""
    x = graph.tensors[node.inputs[0]]
    y = graph.tensors[node.outputs[0]]
    if x.dtype != "float32":
        raise AotcError(f"LpPool of {x.dtype} is not supported (float32)", node=node)
    p = int(node.attrs.get("p", 2))
    if p < 1:
        raise AotcError(f"LpPool p={p} is not supported (p >= 1)", node=node)
    attrs = {k: v for k, v in node.attrs.items() if k != "p"}
    if attrs.get("ceil_mode", 0):
        raise AotcError("LpPool with ceil_mode is not supported (a window past the input's end)", node=node)
    attrs["count_include_pad"] = 1
    size = int(np.prod(attrs["kernel_shape"]))
    base, src = f"{node.outputs[0]}__lp", node.sources()

    def tensor(tag: str, shape: tuple[int, ...], value: np.ndarray | None = None) -> str:
        graph.tensors[f"{base}_{tag}"] = Tensor(f"{base}_{tag}", shape, "float32", value)
        return f"{base}_{tag}"

    powered = tensor("pow", x.shape)
    if p == 2:
        nodes = [Node("Mul", f"{node.name}__square", [x.name, x.name], [powered], origin=src)]
    else:
        nodes = [Node("Abs", f"{node.name}__abs", [x.name], [powered], origin=src)]
        if p > 1:
            absolute, powered = powered, tensor("powp", x.shape)
            nodes.append(Node("Pow", f"{node.name}__pow", [absolute, tensor("p", (), np.array(p, np.float32))],
                              [powered], origin=src))
    mean = tensor("mean", y.shape)
    avg = Node("AveragePool", f"{node.name}__window", [powered], [mean], attrs, src)
    pool(avg, graph, opset)
    total = node.outputs[0] if p == 1 else tensor("sum", y.shape)
    nodes += [avg, Node("Mul", f"{node.name}__sum", [mean, tensor("size", (), np.array(size, np.float32))], [total],
                        origin=src)]
    if p == 2:
        nodes.append(Node("Sqrt", node.name, [total], node.outputs, origin=src))
    elif p > 2:
        nodes.append(Node("Pow", node.name, [total, tensor("inv_p", (), np.array(1.0 / p, np.float32))],
                          node.outputs, origin=src))
    return nodes


def _checked(node: Node, graph: Graph, data: str, values: str, expected: list[int], out: str) -> Node:
    """CheckValues: `out` is `data` once the run-time `values` are found to be `expected` (the values the
    declared output shape pins); other values make the run return AOTC_ERR_SHAPE (aot/kernels/shape.py)."""
    if graph.tensors[values].dtype not in ("int64", "int32") or graph.tensors[values].size != len(expected):
        raise AotcError(f"input '{values}' ({graph.tensors[values].dtype}{list(graph.tensors[values].shape)}) "
                        "must be a constant", node=node)
    return Node("CheckValues", f"{node.name}__check" if out != node.outputs[0] else node.name, [data, values], [out],
                {"expected": [int(v) for v in expected]}, node.sources())


def from_declared_shape(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """HannWindow/HammingWindow/BlackmanWindow and ConstantOfShape whose size or shape is computed at run
    time: the declared output shape pins it, so the output is a constant (onnx's reference on that size)
    copied out once the run-time value is checked to be it."""
    from onnx import helper


    arg = node.inputs[0]
    if graph.const(arg) is not None:
        return None
    y = graph.tensors[node.outputs[0]]
    expected = list(y.shape) if node.op == "ConstantOfShape" else [y.shape[0]] if len(y.shape) == 1 else None
    if expected is None:
        raise AotcError(f"{node.op}'s output must be 1-D", node=node)
    arg_t = graph.tensors[arg]
    proto = helper.make_node(node.op, ["in0"], ["out0"])
    for k, v in node.attrs.items():
        proto.attribute.append(helper.make_attribute(k, v))
    shown = np.array(expected if node.op == "ConstantOfShape" else expected[0], dtype=arg_t.dtype)
    value = evaluate_node(proto, [shown], [helper.make_opsetid("", opset)])[0]
    if value.shape != y.shape or value.dtype.name != y.dtype:
        raise AotcError(f"{node.op} gives {value.dtype.name}{list(value.shape)}, declared {y.dtype}{list(y.shape)}",
                        node=node)
    const = f"{node.outputs[0]}__value"
    graph.tensors[const] = Tensor(const, y.shape, y.dtype, value)
    return [_checked(node, graph, const, arg, expected, node.outputs[0])]


def center_crop_pad(node: Node, graph: Graph, opset: int) -> list[Node]:
    """CenterCropPad -> one Pad: negative pads crop (the start at (in - out) / 2, rounded down), positive
    ones pad with zeros (the begin (out - in) / 2, rounded down). A shape computed at run time is the
    declared output shape's, checked at run time (CheckValues)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    rank = len(x.shape)
    axes = [_axis(int(a), rank, node) for a in node.attrs.get("axes", range(rank))]
    shape_in = node.inputs[1]
    value = graph.const(shape_in)
    nodes, data = [], x.name
    if value is None:
        data = f"{node.outputs[0]}__checked"
        graph.tensors[data] = Tensor(data, x.shape, x.dtype)
        nodes.append(_checked(node, graph, x.name, shape_in, [y.shape[a] for a in axes], data))
        target = list(y.shape)
    else:
        if value.size != len(axes):
            raise AotcError(f"CenterCropPad has {value.size} sizes for {len(axes)} axes", node=node)
        target = list(x.shape)
        for k, a in enumerate(axes):
            target[a] = int(value.reshape(-1)[k])
    if tuple(target) != y.shape:
        raise AotcError(f"CenterCropPad to {target}, declared {list(y.shape)}", node=node)
    pads = [0] * 2 * rank
    for a in range(rank):
        diff = target[a] - x.shape[a]
        begin = diff // 2 if diff >= 0 else -((-diff) // 2)
        pads[a], pads[a + rank] = begin, diff - begin
    nodes.append(Node("Pad", node.name, [data], node.outputs, {"pads": pads, "mode": "constant", "value": 0},
                      node.sources()))
    return nodes


class _Builder:
    """Nodes of a rewrite in canonical form, with fresh float32 temporaries named after the node."""

    def __init__(self, node: Node, graph: Graph):
        self.node, self.graph, self.nodes, self.k = node, graph, [], 0

    def tensor(self, shape: tuple[int, ...], value: np.ndarray | None = None, dtype: str = "float32") -> str:
        self.k += 1
        name = f"{self.node.outputs[0]}__{self.node.op.lower()}{self.k}"
        self.graph.tensors[name] = Tensor(name, tuple(shape), dtype, value)
        return name

    def add(self, op: str, ins: list[str], shape: tuple[int, ...] | None, attrs: dict | None = None,
            out: str | None = None) -> str:
        """Append op(ins) -> a new tensor of `shape` (or `out`, the node's own output: the last step)."""
        out = out or self.tensor(shape)
        name = self.node.name if out in self.node.outputs else f"{self.node.name}__{len(self.nodes)}"
        self.nodes.append(Node(op, name, ins, [out], dict(attrs or {}), self.node.sources()))
        return out


def mish(node: Node, graph: Graph, opset: int) -> list[Node]:
    """Mish -> x * tanh(softplus(x))."""
    b, x = _Builder(node, graph), node.inputs[0]
    shape = _shape(graph, x)
    b.add("Mul", [x, b.add("Tanh", [b.add("Softplus", [x], shape)], shape)], None, out=node.outputs[0])
    return b.nodes


def mean_variance_normalization(node: Node, graph: Graph, opset: int) -> list[Node]:
    """MeanVarianceNormalization -> (x - mean) / sqrt(mean((x - mean)^2) + 1e-9) over the axes (kept);
    onnx's function body (mean of the squares minus the squared mean) differs in the last bits only."""
    b, x = _Builder(node, graph), node.inputs[0]
    shape = _shape(graph, x)
    axes = sorted({_axis(int(a), len(shape), node) for a in node.attrs.get("axes", [0, 2, 3])})
    kept = tuple(1 if k in axes else n for k, n in enumerate(shape))
    red = {"axes": axes, "keepdims": 1}
    d = b.add("Sub", [x, b.add("ReduceMean", [x], kept, red)], shape)
    var = b.add("ReduceMean", [b.add("Mul", [d, d], shape)], kept, red)
    eps = b.tensor((), np.array(1e-9, np.float32))
    b.add("Div", [d, b.add("Sqrt", [b.add("Add", [var, eps], kept)], kept)], None, out=node.outputs[0])
    return b.nodes


def affine_grid(node: Node, graph: Graph, opset: int) -> list[Node]:
    """AffineGrid -> theta [N, r, r+1] times the base grid's homogeneous points (a constant: onnx's
    reference on the identity theta), transposed and reshaped to [N, ..., r]. A size computed at run time
    is the declared output shape's, checked at run time (CheckValues)."""
    from onnx import helper


    theta, size = node.inputs[:2]
    y = graph.tensors[node.outputs[0]]
    n, r = _shape(graph, theta)[0], _shape(graph, theta)[1]
    spatial = y.shape[1:-1]
    dims = [n, 1, *spatial]  # the channel count does not matter: check it is what size says below
    b = _Builder(node, graph)
    value = graph.const(size)
    if value is not None:
        dims = [int(v) for v in value.reshape(-1)]
        if [dims[0], *dims[2:]] != [n, *spatial]:
            raise AotcError(f"AffineGrid size {dims} does not give the output {list(y.shape)}", node=node)
    else:
        checked = b.tensor(_shape(graph, theta))
        b.nodes.append(Node("CheckValues", f"{node.name}__check", [theta, size], [checked],
                            {"expected": [n, -1, *spatial], "skip": [1]}, node.sources()))
        theta = checked
    proto = helper.make_node("AffineGrid", ["in0", "in1"], ["out0"],
                             align_corners=int(node.attrs.get("align_corners", 0)))
    eye = np.eye(r, r + 1, dtype=np.float32)[None]
    base = evaluate_node(proto, [eye, np.array([1, 1, *spatial], np.int64)], [helper.make_opsetid("", opset)])[0]
    points = int(np.prod(spatial))
    homog = np.concatenate([base.reshape(points, r), np.ones((points, 1), np.float32)], axis=1).T  # [r+1, P]
    prod = b.add("MatMul", [theta, b.tensor(homog.shape, np.ascontiguousarray(homog, np.float32))], (n, r, points))
    moved = b.add("Transpose", [prod], (n, points, r), {"perm": [0, 2, 1]})
    b.add("Reshape", [moved], None, out=node.outputs[0])
    return b.nodes


_QRANGE = {"int16": (-32768, 32767), "uint16": (0, 65535), "int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1),
           "uint2": (0, 3), "int8": (-128, 127), "uint8": (0, 255)}


def quantize_in_float(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """QuantizeLinear/DequantizeLinear that the integer kernels do not take (a scale or zero point computed at
    run time; 16-, 4- and 2-bit integers; float8) -> float32 elementwise ops: DequantizeLinear is
    (x - zero_point) * scale; QuantizeLinear is Round(x / scale) + zero_point clipped to the type's range
    (to nearest even, saturating, as the spec says), or for float8 x / scale cast (saturate as asked).
    A per-axis scale or zero point is reshaped to broadcast along its axis; blocked ones are refused."""
    dq = node.op == "DequantizeLinear"
    ints = graph.tensors[node.inputs[0]].dtype if dq else graph.tensors[node.outputs[0]].dtype
    params = [i for i in node.inputs[1:3] if i]
    native = ints in (("int8", "uint8", "int32") if dq else ("int8", "uint8"))
    if native and all(graph.const(i) is not None for i in params) or node.attrs.get("block_size", 0):
        return None  # canonical_quant's rule: the integer kernels (or its refusal of blocked scales)
    if len(node.inputs) < 2 or not node.inputs[1]:
        raise AotcError("scale (input 1) is missing", node=node)
    x = graph.tensors[node.inputs[0]]
    rank, b = len(x.shape), _Builder(node, graph)
    per_axis = any(graph.tensors[i].size > 1 for i in params)  # the axis matters only then
    axis = _axis(int(node.attrs.get("axis", 1)), rank, node) if per_axis else 0

    def along_axis(name: str) -> str:
        """A float32 copy of a scale or zero point, reshaped to broadcast along the axis when per-axis."""
        t = graph.tensors[name]
        if t.dtype != "float32":
            name = b.add("Cast", [name], t.shape, {"to": "float32", "saturate": 1})
        if t.size > 1:
            if len(t.shape) != 1 or t.shape[0] != x.shape[axis]:
                raise AotcError(f"{list(t.shape)} does not match axis {axis} of {list(x.shape)} (blocked "
                                "quantization is not supported)", node=node)
            name = b.add("Reshape", [name], (t.shape[0], *[1] * (rank - 1 - axis)))
        return name

    scale = along_axis(node.inputs[1])
    zp = along_axis(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if dq:
        xf = b.add("Cast", [x.name], x.shape, {"to": "float32", "saturate": 1})
        if zp is not None:
            xf = b.add("Sub", [xf, zp], x.shape)
        y = graph.tensors[node.outputs[0]]
        if y.dtype != "float32":  # a float16 scale: a float16 output (its rounding: aot/frontend/onnx/halves.py)
            b.add("Cast", [b.add("Mul", [xf, scale], y.shape)], None, {"to": y.dtype, "saturate": 1},
                  out=node.outputs[0])
        else:
            b.add("Mul", [xf, scale], None, out=node.outputs[0])
        return b.nodes
    if x.dtype != "float32":
        raise AotcError(f"QuantizeLinear of {x.dtype} is not supported here (float32)", node=node)
    q = b.add("Div", [x.name, scale], x.shape)
    if ints.startswith("float8"):
        if zp is not None:
            q = b.add("Add", [q, zp], x.shape)
        b.add("Cast", [q], None, {"to": ints, "saturate": int(node.attrs.get("saturate", 1))}, out=node.outputs[0])
        return b.nodes
    if ints not in _QRANGE:
        raise AotcError(f"quantizing to {ints} is not supported", node=node)
    q = b.add("Round", [q], x.shape)
    if zp is not None:
        q = b.add("Add", [q, zp], x.shape)
    lo, hi = _QRANGE[ints]
    q = b.add("Clip", [q], x.shape, {"min": float(lo), "max": float(hi)})
    b.add("Cast", [q], None, {"to": ints, "saturate": 1}, out=node.outputs[0])
    return b.nodes


def dft(node: Node, graph: Graph, opset: int) -> None:
    """DFT -> attrs axis (non-negative), length (N), inverse, onesided. dft_length must be a constant; an
    axis given at run time (opset 20) is the one the shapes pin, or each axis they allow (axis_choices,
    the kernel picking the one the value names at run time)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    rank = len(x.shape)
    inverse, onesided = int(node.attrs.get("inverse", 0)), int(node.attrs.get("onesided", 0))
    length_v = _const(graph, node, 1, "DFT dft_length")
    axis_in = node.inputs[2] if opset >= 20 and len(node.inputs) > 2 and node.inputs[2] else ""
    if axis_in and graph.const(axis_in) is not None:
        candidates = [int(graph.const(axis_in).reshape(-1)[0])]
    elif axis_in:
        candidates = list(range(rank - 1))
    else:
        candidates = [int(node.attrs.get("axis", 1 if opset < 20 else -2))]
    fits = []
    for a in candidates:
        if not -rank <= a < rank - 1 or (a < 0 and a + rank >= rank - 1):
            continue
        a %= rank
        n = int(length_v.reshape(-1)[0]) if length_v is not None else (
            2 * (x.shape[a] - 1) if inverse and onesided else x.shape[a])
        if n > 0 and dft_out_shape(x.shape, a, n, bool(inverse), bool(onesided)) == y.shape:
            fits.append((a, n))
    if not fits:
        raise AotcError(f"DFT of {list(x.shape)} gives {list(y.shape)} along no axis it allows", node=node)
    node.attrs = {"axis": fits[0][0], "length": fits[0][1], "inverse": inverse, "onesided": onesided}
    node.inputs = [node.inputs[0]]
    if axis_in and len(fits) > 1:
        node.attrs["axis_choices"] = [[a, n] for a, n in fits]
        node.inputs.append(axis_in)


def lp_normalization(node: Node, graph: Graph, opset: int) -> list[Node]:
    """LpNormalization -> x / ReduceL1 or ReduceL2 of x along the axis (kept), the norm at least the least
    denormal, so a row of zeros stays zeros (onnx's reference and onnxruntime give 0 there, not NaN)."""
    x = graph.tensors[node.inputs[0]]
    p = int(node.attrs.get("p", 2))
    if p not in (1, 2):
        raise AotcError(f"LpNormalization p={p} is not valid (1 or 2)", node=node)
    if x.dtype != "float32":
        raise AotcError(f"LpNormalization of {x.dtype} is not supported (float32)", node=node)
    axis = _axis(int(node.attrs.get("axis", -1)), len(x.shape), node)
    norm = f"{node.outputs[0]}__norm"
    graph.tensors[norm] = Tensor(norm, tuple(1 if k == axis else n for k, n in enumerate(x.shape)), "float32")
    floor, tiny = f"{norm}_floor", f"{norm}_tiny"
    graph.tensors[floor] = Tensor(floor, graph.tensors[norm].shape, "float32")
    graph.tensors[tiny] = Tensor(tiny, (), "float32", np.array(np.finfo(np.float32).smallest_subnormal, np.float32))
    return [Node(f"ReduceL{p}", f"{node.name}__norm", [x.name], [norm], {"axes": [axis], "keepdims": 1},
                 node.sources()),
            Node("Max", f"{node.name}__floor", [norm, tiny], [floor], origin=node.sources()),
            Node("Div", node.name, [x.name, floor], node.outputs, origin=node.sources())]


# --- elementwise ---------------------------------------------------------------

def clip(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    x = graph.tensors[node.inputs[0]]
    bounds_in = [(k, node.inputs[k]) for k in (1, 2) if opset >= 11 and len(node.inputs) > k and node.inputs[k]]
    for k, what in ((1, "min"), (2, "max")):  # before opset 11 the bounds are attributes
        if opset < 11 and what in node.attrs:
            name = f"{node.name}__{what}"
            graph.tensors[name] = Tensor(name, (), x.dtype, np.array(node.attrs[what], dtype=x.dtype))
            bounds_in.append((k, name))
    if x.dtype != "float32" or any(graph.const(b) is None for _, b in bounds_in):
        return _clip_as_max_min(node, graph, x, bounds_in)
    if opset < 11:
        lo, hi = node.attrs.get("min", -np.inf), node.attrs.get("max", np.inf)
    else:
        bounds = []
        for k, what, default in ((1, "min", -np.inf), (2, "max", np.inf)):
            v = _const(graph, node, k, f"Clip {what}")
            if v is not None and v.size != 1:  # the spec says a scalar; onnxruntime takes any one value
                raise AotcError(f"Clip {what} has shape {list(v.shape)}: it must be a single value", node=node)
            bounds.append(float(v.reshape(())) if v is not None else default)
        lo, hi = bounds
    node.attrs = {"min": float(lo), "max": float(hi)}
    _data_only(node)


def _clip_as_max_min(node: Node, graph: Graph, x: Tensor, bounds: list[tuple[int, str]]) -> list[Node]:
    """Clip with a bound computed at run time, or of a dtype other than float32 -> Max(x, min) then
    Min(., max) (NaN stays NaN; min > max gives max, as onnxruntime's std::min(std::max(x, lo), hi))."""
    for k, b in bounds:
        if graph.tensors[b].size != 1:
            what = "min" if k == 1 else "max"
            raise AotcError(f"Clip {what} has shape {list(graph.tensors[b].shape)}: it must be a single value",
                            node=node)
    if not bounds:
        return [Node("Identity", node.name, node.inputs[:1], node.outputs, origin=node.sources())]
    nodes, acc = [], node.inputs[0]
    for j, (k, b) in enumerate(bounds):
        last = j == len(bounds) - 1
        dst = node.outputs[0] if last else f"{node.outputs[0]}__clip_min"
        if not last:
            graph.tensors[dst] = Tensor(dst, x.shape, x.dtype)
        if graph.tensors[b].shape != () and x.shape == ():  # a [1] bound would widen the output's shape
            raise AotcError("Clip of a scalar by a bound of shape [1] is not supported", node=node)
        nodes.append(Node("Max" if k == 1 else "Min", node.name if last else f"{node.name}__min", [acc, b], [dst],
                          origin=node.sources()))
        acc = dst
    return nodes


def _defaults(**defaults: object) -> Rule:
    def rule(node: Node, graph: Graph, opset: int) -> None:
        for k, v in defaults.items():
            node.attrs.setdefault(k, v)
    return rule


def variadic(binary_op: str) -> Rule:
    """Sum/Max/Min of n inputs -> a chain of n-1 broadcasting binary nodes."""
    def rule(node: Node, graph: Graph, opset: int) -> list[Node] | None:
        ins = [i for i in node.inputs if i]
        if len(ins) == 1:
            return [Node("Identity", node.name, ins, node.outputs, origin=node.sources())]
        if len(ins) == 2:
            node.op = binary_op
            return None
        out = graph.tensors[node.outputs[0]]
        chain: list[Node] = []
        acc = ins[0]
        for k, nxt in enumerate(ins[1:], start=1):
            last = k == len(ins) - 1
            dst = node.outputs[0] if last else f"{node.outputs[0]}__{binary_op.lower()}{k}"
            if not last:
                shape = np.broadcast_shapes(_shape(graph, acc), _shape(graph, nxt))
                graph.tensors[dst] = Tensor(dst, tuple(shape), out.dtype)
            chain.append(Node(binary_op, f"{node.name}" if last else f"{node.name}__{k}", [acc, nxt], [dst],
                              origin=node.sources()))
            acc = dst
        return chain
    return rule


def mean(node: Node, graph: Graph, opset: int) -> list[Node]:
    """Mean of n inputs -> their Sum (a chain of broadcasting Adds) divided by n."""
    ins = [i for i in node.inputs if i]
    if len(ins) == 1:
        return [Node("Identity", node.name, ins, node.outputs, origin=node.sources())]
    y = graph.tensors[node.outputs[0]]
    total, count = f"{y.name}__sum", f"{y.name}__count"
    graph.tensors[total] = Tensor(total, y.shape, y.dtype)
    graph.tensors[count] = Tensor(count, (), y.dtype, np.array(len(ins), dtype=y.dtype))
    add = Node("Sum", f"{node.name}__sum", ins, [total], origin=node.sources())
    adds = variadic("Add")(add, graph, opset) or [add]
    return [*adds, Node("Div", node.name, [total, count], node.outputs, origin=node.sources())]


def softmax(node: Node, graph: Graph, opset: int) -> None:
    """Both axis semantics as (outer, n, inner): reduce over n, for each outer and inner index."""
    shape = _shape(graph, node.inputs[0])
    rank = len(shape)
    if opset < 13:
        axis = _axis(node.attrs.get("axis", 1), rank, node)
        outer, n, inner = int(np.prod(shape[:axis])), int(np.prod(shape[axis:])), 1
    else:
        axis = _axis(node.attrs.get("axis", -1), rank, node)
        outer, n, inner = int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:]))
    node.attrs = {"outer": outer, "n": n, "inner": inner}


def layer_norm(node: Node, graph: Graph, opset: int) -> None:
    """LayerNormalization (opset 17) and RMSNormalization (opset 23) -> attrs axis (non-negative),
    epsilon, stash (the dtype the statistics are computed in: float32 or float64), and X as
    [rows, n]: n the product of the dims from the axis on, each row normalised on its own."""
    x = _shape(graph, node.inputs[0])
    if not x:
        raise AotcError(f"{node.op} of a scalar is not defined (X needs a rank of at least 1)", node=node)
    axis = _axis(int(node.attrs.get("axis", -1)), len(x), node)
    stash = int(node.attrs.get("stash_type", 1))
    if stash not in (1, 11):
        raise AotcError(f"stash_type {stash} is not supported (1: float, 11: double)", node=node)
    node.attrs = {"axis": axis, "epsilon": float(node.attrs.get("epsilon", 1e-5)),
                  "stash": "float32" if stash == 1 else "float64",
                  "rows": int(np.prod(x[:axis], dtype=np.int64)), "n": int(np.prod(x[axis:], dtype=np.int64))}


def gelu(node: Node, graph: Graph, opset: int) -> None:
    approximate = node.attrs.get("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise AotcError(f"Gelu approximate '{approximate}' is not valid (none, tanh)", node=node)
    node.attrs = {"approximate": approximate}


# --- data movement ---------------------------------------------------------------

def view(node: Node, graph: Graph, opset: int) -> None:
    """Reshape/Flatten/Squeeze/Unsqueeze: only the (known) output shape matters."""
    node.attrs = {}
    _data_only(node)


def concat(node: Node, graph: Graph, opset: int) -> None:
    node.attrs["axis"] = _axis(node.attrs["axis"], len(_shape(graph, node.outputs[0])), node)


def split(node: Node, graph: Graph, opset: int) -> None:
    rank = len(_shape(graph, node.inputs[0]))
    axis = _axis(node.attrs.get("axis", 0), rank, node)
    sizes = [_shape(graph, o)[axis] if o else None for o in node.outputs]
    if None in sizes:  # an unused output still occupies its part of the input
        raise AotcError("Split with an omitted output is not supported", node=node)
    node.attrs = {"axis": axis, "split": sizes}
    _data_only(node)


def slice_(node: Node, graph: Graph, opset: int) -> None:
    shape = _shape(graph, node.inputs[0])
    rank = len(shape)
    if opset < 10:
        starts, ends = node.attrs["starts"], node.attrs["ends"]
        axes = node.attrs.get("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = _const(graph, node, 1, "Slice starts").tolist()
        ends = _const(graph, node, 2, "Slice ends").tolist()
        axes_v = _const(graph, node, 3, "Slice axes")
        steps_v = _const(graph, node, 4, "Slice steps")
        axes = axes_v.tolist() if axes_v is not None else list(range(len(starts)))
        steps = steps_v.tolist() if steps_v is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise AotcError("Slice starts, ends, axes and steps differ in length", node=node)
    full_starts, full_steps = [0] * rank, [1] * rank
    seen: set[int] = set()
    for s, e, a, st in zip(starts, ends, axes, steps, strict=True):
        a = _axis(int(a), rank, node)
        if a in seen:
            raise AotcError(f"Slice axis {a} is repeated", node=node)
        seen.add(a)
        if st == 0:
            raise AotcError("Slice step 0 is not valid", node=node)
        if st < 0 and int(e) in (2**63 - 1, 2**31 - 1):
            # onnxruntime reads this end as "through index 0"; the ONNX spec (and its shape
            # inference, which gave the output shape) clamps it to dim - 1: an empty slice.
            raise AotcError(f"Slice on axis {a} with a negative step and end {int(e)} (INT_MAX) is not "
                            "supported: ONNX gives an empty slice, onnxruntime slices to index 0; "
                            "use INT_MIN as the end to slice to index 0", node=node)
        # ONNX clamps a start to [0, dim] (step > 0) or [0, dim - 1] (step < 0), unlike Python's
        # slice.indices (which yields an empty slice for a negative step and a start below -dim).
        # The end only sets the count, which the output shape already gives.
        dim, s = shape[a], int(s)
        s = s + dim if s < 0 else s
        full_starts[a] = min(max(s, 0), dim if st > 0 else dim - 1)
        full_steps[a] = int(st)
    node.attrs = {"starts": full_starts, "steps": full_steps}
    _data_only(node)


def pad(node: Node, graph: Graph, opset: int) -> None:
    rank = len(_shape(graph, node.inputs[0]))
    mode = node.attrs.get("mode", "constant")
    if opset < 11:
        pads, value = [int(p) for p in node.attrs["pads"]], float(node.attrs.get("value", 0.0))
    else:
        pads = _const(graph, node, 1, "Pad pads").astype(np.int64).reshape(-1).tolist()
        runtime_value = len(node.inputs) > 2 and node.inputs[2] and graph.const(node.inputs[2]) is None
        v = None if runtime_value else _const(graph, node, 2, "Pad constant_value")
        value = v.reshape(-1)[0].item() if v is not None and v.size else 0  # int, float or bool
        axes_v = _const(graph, node, 3, "Pad axes")
        if axes_v is not None:
            axes = [_axis(int(a), rank, node) for a in axes_v.reshape(-1).tolist()]
            if len(pads) != 2 * len(axes):
                raise AotcError(f"Pad has {len(pads)} pads for {len(axes)} axes", node=node)
            full = [0] * 2 * rank
            for k, a in enumerate(axes):
                full[a], full[a + rank] = pads[k], pads[k + len(axes)]
            pads = full
    if len(pads) != 2 * rank:
        raise AotcError(f"Pad has {len(pads)} pads for rank {rank}", node=node)
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise AotcError(f"Pad mode '{mode}' is not supported (constant, reflect, edge, wrap)", node=node)
    node.attrs = {"pads": pads, "mode": mode, "value": value}
    if opset >= 11 and runtime_value and mode == "constant":  # read at run time: the kernel takes its address
        if graph.tensors[node.inputs[2]].size != 1:
            raise AotcError("Pad constant_value must be a single value", node=node)
        node.inputs = [node.inputs[0], node.inputs[2]]
        return
    _data_only(node)


def transpose(node: Node, graph: Graph, opset: int) -> None:
    rank = len(_shape(graph, node.inputs[0]))
    perm = [int(p) for p in node.attrs.get("perm", reversed(range(rank)))]
    if sorted(perm) != list(range(rank)):
        raise AotcError(f"Transpose perm {perm} is not a permutation of 0..{rank - 1}", node=node)
    node.attrs = {"perm": perm}


def gather(node: Node, graph: Graph, opset: int) -> None:
    node.attrs["axis"] = _axis(node.attrs.get("axis", 0), len(_shape(graph, node.inputs[0])), node)


def reduce(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """Every Reduce* op -> attrs {axes: sorted unique non-negative, never empty; keepdims}.
    Axes come from the attribute before opset 18 (13 for ReduceSum), from input 1 after;
    no axes means all of them, unless noop_with_empty_axes makes the node an Identity."""
    rank = len(_shape(graph, node.inputs[0]))
    axes_from_input = opset >= 18 or (node.op == "ReduceSum" and opset >= 13)
    if axes_from_input and len(node.inputs) > 1 and node.inputs[1] and graph.const(node.inputs[1]) is None:
        return _reduce_runtime_axes(node, graph)
    if axes_from_input:
        v = _const(graph, node, 1, f"{node.op} axes")
        axes = v.tolist() if v is not None else []
    else:
        axes = list(node.attrs.get("axes", []))
    if not axes:
        if node.attrs.get("noop_with_empty_axes", 0):
            return [Node("Identity", node.name, node.inputs[:1], node.outputs, origin=node.sources())]
        axes = list(range(rank))
    node.attrs = {"axes": sorted({_axis(int(a), rank, node) for a in axes}),
                  "keepdims": int(node.attrs.get("keepdims", 1))}
    _data_only(node)
    return None


MAX_AXES_CHOICES = 8  # run-time Reduce axes: the axis sets the shapes allow, one compiled call each
def _reduce_bool(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """ReduceMax/ReduceMin of bool (opset 20: any, all) -> the float32 reduction between two Casts (exact)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    if x.dtype != "bool":
        return reduce(node, graph, opset)
    wide, result = f"{x.name}__as_f32_{node.name}", f"{y.name}__f32"
    graph.tensors[wide] = Tensor(wide, x.shape, "float32")
    graph.tensors[result] = Tensor(result, y.shape, "float32")
    widen = Node("Cast", f"{node.name}__widen", [x.name], [wide], {"to": "float32", "saturate": 1}, node.sources())
    narrow = Node("Cast", f"{node.name}__narrow", [result], [y.name], {"to": "bool", "saturate": 1}, node.sources())
    node.inputs = [wide, *node.inputs[1:]]
    node.outputs = [result]
    done = reduce(node, graph, opset)
    return [widen, *(done if done is not None else [node]), narrow]


# reductions that leave a single element as it is: over size-1 axes they are the identity
_IDENTITY_ON_ONE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd")


def _reduce_runtime_axes(node: Node, graph: Graph) -> list[Node] | None:
    """Reduce axes given at run time (issue 16): the static input and the declared output shape pin them,
    so they are compiled from the shapes and the run-time value is not read. Where the shapes leave a choice
    (e.g. [3, 3] -> [3]: axis 0 or 1), each axis set they allow is compiled and the kernel reads the axes to
    take the one they name; axes that name none of them make the run return AOTC_ERR_SHAPE."""
    x, y = _shape(graph, node.inputs[0]), _shape(graph, node.outputs[0])
    keepdims = int(node.attrs.get("keepdims", 1))
    zeros_shape = tuple(1 if k == 0 else n for k, n in enumerate(x)) if keepdims else tuple(x[1:])
    if y == zeros_shape:
        # An output shape the model does not declare was inferred by running the node on zeros (load.py):
        # axes [0], which says nothing of the run-time axes. A declared shape that is the same is refused too.
        raise AotcError(f"{node.op} axes (input 1) must be a constant (computed at run time, they are taken from "
                        f"the declared output shape, and {list(y)} cannot be told from a guess)", node=node)
    unpinned = AotcError(f"{node.op} axes (input 1) are computed at run time and the shapes {list(x)} -> "
                         f"{list(y)} do not pin them: make input 1 a constant", node=node)
    import itertools

    if keepdims:
        if len(x) != len(y) or any(o not in (1, i) for i, o in zip(x, y, strict=True)):
            raise unpinned
        axes = [k for k, (i, o) in enumerate(zip(x, y, strict=True)) if o == 1 and i != 1]
        ones = [k for k, n in enumerate(x) if n == 1]
        fits = [sorted({*axes, *a}) for r in range(len(ones) + 1) for a in itertools.combinations(ones, r)]
        if node.op in _IDENTITY_ON_ONE:  # over size-1 axes these leave each element as it is
            fits = [axes]
    else:
        fits = [sorted(a) for r in range(len(x) + 1) for a in itertools.combinations(range(len(x)), r)
                if [n for k, n in enumerate(x) if k not in a] == list(y)]
    if graph.tensors[node.inputs[1]].size:  # the axes name one axis at least (an empty one is a constant)
        fits = [f for f in fits if f] or fits
    if not fits or len(fits) > MAX_AXES_CHOICES or node.attrs.get("noop_with_empty_axes", 0) and len(fits) > 1:
        raise unpinned
    if len(fits) > 1:  # the shapes leave a choice: the kernel reads the axes and takes the one they name
        node.attrs = {"axes": fits[0], "keepdims": keepdims, "axes_choices": fits}
        node.inputs = node.inputs[:2]
        return None
    axes = fits[0]
    if not axes:
        return [Node("Identity", node.name, node.inputs[:1], node.outputs, origin=node.sources())]
    node.attrs = {"axes": axes, "keepdims": keepdims}
    _data_only(node)
    return None


def _round_half_away(v: np.float32) -> int:
    return int(np.floor(abs(float(v)) + 0.5)) * (1 if v >= 0 else -1)


def _resize_sizes(node: Node, graph: Graph, scales: np.ndarray | None, y: tuple[int, ...]) -> np.ndarray | None:
    """Resize's sizes: the constant, or, computed at run time with the default "stretch" policy and no
    scales, the output shape's sizes on the resized axes (issue 16): they are the output shape, so the run-time
    value is not read. An output shape the model does not declare was inferred on zero sizes (load.py): empty,
    and the Resize kernels refuse it."""
    inputs = node.inputs
    runtime = len(inputs) > 3 and inputs[3] and graph.const(inputs[3]) is None
    if not runtime:
        return _const(graph, node, 3, "Resize sizes")
    if (scales is not None and scales.size) or node.attrs.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise AotcError("Resize sizes (input 3) must be a constant (computed at run time, they are taken from "
                        "the output shape only with keep_aspect_ratio_policy 'stretch')", node=node)
    rank = len(y)
    return np.array([y[_axis(int(ax), rank, node)] for ax in node.attrs.get("axes", range(rank))], np.int64)


def resize(node: Node, graph: Graph, opset: int) -> None:
    """Upsample and every Resize version -> Resize with explicit per-axis float32 scales.

    attrs: mode (nearest, linear, cubic), coordinate_transformation_mode, nearest_mode,
    scales (one per axis: the given scales, or else float32(out) / float32(in) as
    onnxruntime computes them, with keep_aspect_ratio_policy applied), cubic_coeff_a,
    exclude_outside, extrapolation_value. Upsample and Resize-10 have no nearest_mode:
    onnxruntime rounds down when enlarging an axis and up when shrinking it, which is
    nearest_mode "simple" here (not an ONNX value). The output shape must be the one
    onnxruntime computes (float32 scale times input size, truncated); ONNX shape
    inference rounds in double and can differ by one, which is refused."""
    x = _shape(graph, node.inputs[0])
    y = _shape(graph, node.outputs[0])
    rank = len(x)
    a = node.attrs
    expected: list[int] | None = None  # onnxruntime's output shape when sizes define it
    if node.op == "Upsample" or opset < 11:
        scales = a.get("scales") if opset < 9 else _const(graph, node, 1, "scales")
        mode = a.get("mode", "nearest")
        ctm, nearest = "asymmetric", "simple"
        cubic_a, exclude, extrap = -0.75, 0, 0.0
    else:
        scales_v = _const(graph, node, 2, "Resize scales")
        sizes_v = _resize_sizes(node, graph, scales_v, y)
        scales = scales_v if scales_v is not None and scales_v.size else None
        if scales is None and (sizes_v is None or not sizes_v.size):
            raise AotcError("Resize needs scales or sizes", node=node)
        mode = a.get("mode", "nearest")
        ctm = a.get("coordinate_transformation_mode", "half_pixel")
        nearest = a.get("nearest_mode", "round_prefer_floor")
        cubic_a, exclude = a.get("cubic_coeff_a", -0.75), a.get("exclude_outside", 0)
        extrap = a.get("extrapolation_value", 0.0)
        if a.get("antialias", 0):
            raise AotcError("Resize antialias=1 is not supported", node=node)
        if ctm == "tf_crop_and_resize":
            raise AotcError("Resize coordinate_transformation_mode tf_crop_and_resize is not supported",
                            node=node)
        axes = [_axis(int(ax), rank, node) for ax in a.get("axes", range(rank))]
        given = scales if scales is not None else sizes_v
        if len(given) != len(axes):
            what = "scales" if scales is not None else "sizes"
            raise AotcError(f"Resize has {len(given)} {what} for {len(axes)} axes", node=node)
        full = [np.float32(1.0)] * rank
        if scales is not None:
            for k, ax in enumerate(axes):
                full[ax] = np.float32(scales[k])
        else:
            expected = list(x)
            for k, ax in enumerate(axes):
                expected[ax] = int(sizes_v[k])
                full[ax] = np.float32(expected[ax]) / np.float32(x[ax])
            policy = a.get("keep_aspect_ratio_policy", "stretch")
            if policy not in ("stretch", "not_larger", "not_smaller"):
                raise AotcError(f"Resize keep_aspect_ratio_policy '{policy}' is not valid", node=node)
            if policy != "stretch":  # one scale for all the listed axes
                common = (min if policy == "not_larger" else max)(full[ax] for ax in axes)
                full = [common if k in axes else np.float32(1.0) for k in range(rank)]
                expected = [_round_half_away(common * np.float32(n)) if k in axes else n for k, n in enumerate(x)]
        scales = full
    if scales is None:
        raise AotcError("Upsample needs scales", node=node)
    if len(scales) != rank:
        raise AotcError(f"Resize has {len(scales)} scales for a rank-{rank} input", node=node)
    if expected is None:
        expected = [int(np.float32(s) * np.float32(n)) for s, n in zip(scales, x, strict=True)]
    if tuple(expected) != tuple(y):
        raise AotcError(f"Resize output shape {list(y)} (ONNX shape inference) differs from onnxruntime's "
                        f"{expected} (float32 scale times input size); give sizes instead of scales", node=node)
    if mode not in ("nearest", "linear", "cubic"):
        raise AotcError(f"Resize mode '{mode}' is not supported", node=node)
    node.op = "Resize"
    node.attrs = {"mode": mode, "coordinate_transformation_mode": ctm, "nearest_mode": nearest,
                  "scales": [float(s) for s in scales], "cubic_coeff_a": float(cubic_a),
                  "exclude_outside": int(exclude), "extrapolation_value": float(extrap)}
    _data_only(node)


def batchnorm(node: Node, graph: Graph, opset: int) -> None:
    """Inference-form BatchNormalization (opsets 7..15) -> epsilon only; momentum does not apply.

    Training mode normalises by the batch's own mean and variance; aotc compiles inference only and
    refuses it in both of its spellings: training_mode=1 (opset 14+) here, and before opset 14 the
    statistics outputs being declared, on import (aot/frontend/onnx/optional_outputs.py, which also
    dropped the unread extra outputs of training_mode=0 and refused read ones)."""
    if opset < 9 and node.attrs.get("spatial", 1) == 0:
        raise AotcError("BatchNormalization spatial=0 is not supported", node=node)
    if node.attrs.get("training_mode", 0):
        raise AotcError("BatchNormalization with training_mode=1 is training mode (Y normalised by the batch's "
                        "own statistics); aotc compiles inference only", node=node)
    x = _shape(graph, node.inputs[0])
    channels = x[1] if len(x) > 1 else 1
    for name, what in zip(node.inputs[1:5], ("scale", "B", "mean", "var"), strict=False):
        if name and _shape(graph, name) != (channels,):  # onnx's inference does not look
            raise AotcError(f"BatchNormalization's {what} is {list(_shape(graph, name))}, but X {list(x)} has "
                            f"{channels} channels", node=node)
    node.attrs = {"epsilon": float(node.attrs.get("epsilon", 1e-5))}
    node.outputs = node.outputs[:1]


def dropout(node: Node, graph: Graph, opset: int) -> list[Node]:
    """Inference-mode Dropout -> Identity; a mask that is read (an unread one was dropped on import)
    becomes a constant: all true, as ONNX defines it from opset 12 (output = data * mask * scale with
    nothing dropped). A read mask before opset 12, which the spec leaves undefined in inference, was
    refused on import (aot/frontend/onnx/optional_outputs.py). Training (training_mode true or only known
    at run time, opset 12+) is random and refused; ratio does not matter in inference."""
    training = node.inputs[2] if len(node.inputs) > 2 else ""
    if training:
        value = graph.const(training)
        if value is None:
            raise AotcError("Dropout's training_mode (input 2) is computed at run time; aotc compiles "
                            "inference only (training_mode absent or a constant false)", node=node)
        if bool(np.asarray(value).reshape(-1)[0]):
            raise AotcError("Dropout with training_mode true (random) is training; aotc compiles inference only",
                            node=node)
    mask = node.outputs[1] if len(node.outputs) > 1 else ""
    if mask:
        t = graph.tensors[mask]
        graph.tensors[mask] = Tensor(mask, t.shape, t.dtype, np.ones(t.shape, dtype=t.dtype))
    return [Node("Identity", node.name, node.inputs[:1], node.outputs[:1], origin=node.sources())]


def cast(node: Node, graph: Graph, opset: int) -> None:
    saturate = int(node.attrs.get("saturate", 1))  # opset 19: to float8, clamp (1) or overflow to NaN/inf (0)
    if node.attrs.get("round_mode", "up") != "up":
        raise AotcError(f"Cast round_mode '{node.attrs['round_mode']}' is not supported (up)", node=node)
    node.attrs = {"to": graph.tensors[node.outputs[0]].dtype, "saturate": saturate}


def cast_like(node: Node, graph: Graph, opset: int) -> None:
    """CastLike (opset 15; ONNX's function bodies use it, e.g. Gelu's and LayerNormalization's) ->
    Cast to the dtype of its second input."""
    node.op = "Cast"
    _data_only(node)
    cast(node, graph, opset)


def pow_(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """Pow of a float base by an integer exponent (ONNX lets the exponent's type differ) -> the exponent
    Cast to the base's type first, so one float kernel serves; an integer base keeps its own kernel."""
    x, e = (graph.tensors[i] for i in node.inputs[:2])
    if x.dtype not in ("float32", "float64") or x.dtype == e.dtype or e.dtype.startswith("float"):
        return None
    cast_e = f"{e.name}__as_{x.dtype}"
    if e.is_const:
        graph.tensors[cast_e] = Tensor(cast_e, e.shape, x.dtype, e.data.astype(x.dtype))
        node.inputs = [node.inputs[0], cast_e]
        return None
    graph.tensors[cast_e] = Tensor(cast_e, e.shape, x.dtype)
    to_x = Node("Cast", f"{node.name}__exponent", [e.name], [cast_e], {"to": x.dtype}, node.sources())
    node.inputs = [node.inputs[0], cast_e]
    return [to_x, node]


def gemm(node: Node, graph: Graph, opset: int) -> None:
    a = node.attrs
    node.attrs = {"alpha": float(a.get("alpha", 1.0)), "beta": float(a.get("beta", 1.0)),
                  "transA": int(a.get("transA", 0)), "transB": int(a.get("transB", 0))}
    # onnx's inference checks the inner dimensions only from opset 13: a mismatch would read past A or B
    sa, sb = _shape(graph, node.inputs[0]), _shape(graph, node.inputs[1])
    if len(sa) != 2 or len(sb) != 2:
        raise AotcError(f"Gemm takes 2-D A and B, not {list(sa)} and {list(sb)}", node=node)
    (m, k), (k2, n) = sa[::-1] if node.attrs["transA"] else sa, sb[::-1] if node.attrs["transB"] else sb
    if k != k2:
        raise AotcError(f"A {list(sa)} (transA={node.attrs['transA']}) and B {list(sb)} (transB="
                        f"{node.attrs['transB']}) have inner dimensions {k} and {k2}", node=node)
    if len(node.inputs) > 2 and node.inputs[2]:
        sc = _shape(graph, node.inputs[2])
        if len(sc) > 2 or any(c not in (1, d) for c, d in zip(sc[::-1], (n, m), strict=False)):
            raise AotcError(f"C {list(sc)} does not broadcast to the output [{m},{n}]", node=node)


RULES: dict[str, Rule] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "MaxPool": pool,
    "AveragePool": pool,
    "LpPool": lp_pool,
    "HannWindow": from_declared_shape,
    "HammingWindow": from_declared_shape,
    "BlackmanWindow": from_declared_shape,
    "ConstantOfShape": from_declared_shape,
    "CenterCropPad": center_crop_pad,
    "Mish": mish,
    "DFT": dft,
    "MeanVarianceNormalization": mean_variance_normalization,
    "AffineGrid": affine_grid,
    "LpNormalization": lp_normalization,
    "Clip": clip,
    "LeakyRelu": _defaults(alpha=0.01),
    "Elu": _defaults(alpha=1.0),
    "HardSigmoid": _defaults(alpha=0.2, beta=0.5),
    "LRN": _defaults(alpha=1e-4, beta=0.75, bias=1.0),
    "InstanceNormalization": _defaults(epsilon=1e-5),
    "Sum": variadic("Add"),
    "Mean": mean,
    "Max": variadic("Max"),
    "Min": variadic("Min"),
    "Softmax": softmax,
    "LogSoftmax": softmax,
    "Hardmax": softmax,
    "Einsum": einsum,
    "LayerNormalization": layer_norm,
    "RMSNormalization": layer_norm,
    "Gelu": gelu,
    "Reshape": view,
    "Flatten": view,
    "Squeeze": view,
    "Unsqueeze": view,
    "Concat": concat,
    "Split": split,
    "Slice": slice_,
    "Pad": pad,
    "Transpose": transpose,
    "Gather": gather,
    "ReduceMean": reduce,
    "ReduceSum": reduce,
    "ReduceMax": lambda node, graph, opset: _reduce_bool(node, graph, opset),
    "ReduceMin": lambda node, graph, opset: _reduce_bool(node, graph, opset),
    "ReduceProd": reduce,
    "ReduceL1": reduce,
    "ReduceL2": reduce,
    "ReduceSumSquare": reduce,
    "ReduceLogSum": reduce,
    "ReduceLogSumExp": reduce,
    "Resize": resize,
    "Upsample": resize,
    "BatchNormalization": batchnorm,
    "Dropout": dropout,
    "Cast": cast,
    "Pow": pow_,
    "CastLike": cast_like,
    "Gemm": gemm,
    "LSTM": recurrent,
    "GRU": recurrent,
    "RNN": recurrent,
}


# --- quantization ops (aot/frontend/onnx/canonical/quant.py) ---------------------------

def _windowed(rule: Rule, data: tuple[int, ...]) -> Rule:
    """A QLinear op's quantization inputs made canonical, then its window attributes by the float
    op's rule, on the inputs at `data` (x, and w for a conv)."""
    def wrapped(node: Node, graph: Graph, opset: int) -> None:
        canonical_quant.quant_params(node, graph, opset)
        shim = Node(node.op.removeprefix("QLinear"), node.name, [node.inputs[k] for k in data], node.outputs,
                    node.attrs)
        rule(shim, graph, opset)
        node.attrs = shim.attrs
    return wrapped


def _through_float(float_rule: Rule) -> Rule:
    """A QLinear op with no integer kernel for its case (QLinearSoftmax over an outer axis) as
    DequantizeLinear -> the float op -> QuantizeLinear, which onnxruntime's own kernels match to
    the last bit or one."""
    def expand(node: Node, graph: Graph, opset: int) -> list[Node]:
        canonical_quant.quant_params(node, graph, opset)
        x, xs, xz, ys, yz = node.inputs[:5]
        y = node.outputs[0]
        op = node.op.removeprefix("QLinear")
        xf, yf = f"{node.name}__dequantized", f"{node.name}__float"
        graph.tensors[xf] = Tensor(xf, _shape(graph, x), "float32")
        graph.tensors[yf] = Tensor(yf, _shape(graph, y), "float32")
        dq = Node("DequantizeLinear", f"{node.name}__dequantize", [x, xs, xz], [xf], {"axis": 1}, node.sources())
        attrs = {k: v for k, v in node.attrs.items() if k not in ("opset", "channels_last")}
        if node.attrs.get("channels_last", 0):
            raise AotcError("channels_last is not supported", node=node)
        f = Node(op, node.name, [xf], [yf], attrs, node.sources())
        float_rule(f, graph, int(node.attrs.get("opset", opset)))
        q = Node("QuantizeLinear", f"{node.name}__quantize", [yf, ys, yz], [y], {"axis": 1}, node.sources())
        return [dq, f, q]
    return expand


RULES.update(canonical_quant.RULES)
for _op in ("QuantizeLinear", "DequantizeLinear"):  # the float rewrite first, where the integer kernels cannot
    RULES[_op] = (lambda native: lambda node, graph, opset: (
        quantize_in_float(node, graph, opset) or native(node, graph, opset)))(canonical_quant.RULES[_op])
RULES["QLinearConv"] = _windowed(conv, (0, 3))
RULES["QLinearAveragePool"] = _windowed(pool, (0,))


def qlinear_softmax(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """QLinearSoftmax over the innermost axis stays an integer op (attributes: Softmax's outer, n,
    inner); over another axis it runs in float between DequantizeLinear and QuantizeLinear."""
    canonical_quant.quant_params(node, graph, opset)
    shim = Node("Softmax", node.name, node.inputs[:1], node.outputs, dict(node.attrs))
    softmax(shim, graph, int(node.attrs.get("opset", opset)))
    if shim.attrs["inner"] != 1:
        return _through_float(softmax)(node, graph, opset)
    node.attrs = shim.attrs
    return None


RULES["QLinearSoftmax"] = qlinear_softmax


def conv_integer(node: Node, graph: Graph, opset: int) -> None:
    """ConvInteger: Conv's window attributes (on its x and w)."""
    shim = Node("Conv", node.name, node.inputs[:2], node.outputs, node.attrs)
    conv(shim, graph, opset)
    node.attrs = shim.attrs


RULES["ConvInteger"] = conv_integer
