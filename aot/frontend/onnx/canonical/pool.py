"""MaxPool, AveragePool and LpPool: explicit window attributes (aot/kernels/pool.py); LpPool as the
ops aotc runs."""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import shape_of, window_attrs
from aot.ir import Graph, Node, Tensor


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
    x = shape_of(graph, node.inputs[0])
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
    window_attrs(node, x, tuple(kernel))  # SAME_* totals below zero become 0, as above: same windows
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
    y = shape_of(graph, node.outputs[0])
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
