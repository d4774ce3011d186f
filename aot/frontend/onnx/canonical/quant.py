"""Canonical forms of the quantization ops (the rules of the other families, for int8).

After these rules every QuantizeLinear / DequantizeLinear has its zero point as a constant input
of the integer type (the spec's default 0 made explicit) and a non-negative `axis` (used only
when the scale is a vector: per-channel), and scales and zero points are constants; QLinearConv
and QLinearAveragePool carry the same explicit window attributes as Conv and AveragePool.
Everything the int8 kernels read of a quantized tensor is then a constant known at compile time.
"""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import Builder, Rule, positive_axis, shape_of
from aot.frontend.onnx.canonical.conv import conv
from aot.frontend.onnx.canonical.norm import softmax
from aot.frontend.onnx.canonical.pool import pool
from aot.ir import Graph, Node, Tensor
from aot.qmath import lookup_table

# the scale/zero-point inputs of each op, as (scale index, zero point index, integer tensor index)
QPARAMS: dict[str, tuple[tuple[int, int, int], ...]] = {
    "QuantizeLinear": ((1, 2, -1),),  # -1: the output
    "DequantizeLinear": ((1, 2, 0),),
    "QLinearConv": ((1, 2, 0), (4, 5, 3), (6, 7, -1)),
    "QLinearMatMul": ((1, 2, 0), (4, 5, 3), (6, 7, -1)),
    "QGemm": ((1, 2, 0), (4, 5, 3), (7, 8, -1)),
    "QLinearAdd": ((1, 2, 0), (4, 5, 3), (6, 7, -1)),
    "QLinearMul": ((1, 2, 0), (4, 5, 3), (6, 7, -1)),
    "QLinearGlobalAveragePool": ((1, 2, 0), (3, 4, -1)),
    "QLinearAveragePool": ((1, 2, 0), (3, 4, -1)),
    "QLinearSigmoid": ((1, 2, 0), (3, 4, -1)),
    "QLinearLeakyRelu": ((1, 2, 0), (3, 4, -1)),
    "QLinearSoftmax": ((1, 2, 0), (3, 4, -1)),
}


def _zero_point(node: Node, graph: Graph, scale_at: int, zp_at: int, of: str) -> None:
    """Make an omitted zero point an explicit constant of the integer tensor's type."""
    while len(node.inputs) <= zp_at:
        node.inputs.append("")
    if node.inputs[zp_at]:
        if graph.const(node.inputs[zp_at]) is None:
            raise AotcError(f"zero point (input {zp_at}) must be a constant", node=node)
        return
    dtype = graph.tensors[of].dtype
    name = f"{node.name}__zero_point{zp_at}"
    shape = graph.tensors[node.inputs[scale_at]].shape
    graph.tensors[name] = Tensor(name, shape, dtype, np.zeros(shape, dtype))
    node.inputs[zp_at] = name


def quant_params(node: Node, graph: Graph, opset: int) -> None:
    for scale_at, zp_at, of in QPARAMS[node.op]:
        if scale_at >= len(node.inputs) or not node.inputs[scale_at]:
            if node.op == "QGemm" and scale_at == 7:  # QGemm without y_scale: float output
                continue
            raise AotcError(f"scale (input {scale_at}) is missing", node=node)
        if graph.const(node.inputs[scale_at]) is None:
            raise AotcError(f"scale (input {scale_at}) must be a constant", node=node)
        _zero_point(node, graph, scale_at, zp_at, node.outputs[0] if of == -1 else node.inputs[of])


def quantize_linear(node: Node, graph: Graph, opset: int) -> None:
    """QuantizeLinear / DequantizeLinear: explicit zero point, non-negative axis; blocked scales and a
    division in another precision than float32 (QuantizeLinear-23's `precision`) refused."""
    if node.attrs.get("block_size", 0):
        raise AotcError("blocked quantization (block_size) is not supported", node=node)
    precision = int(node.attrs.get("precision", 0))  # QuantizeLinear-23: the type x / y_scale is computed in
    if precision not in (0, 1):
        raise AotcError(f"precision {precision} (x / y_scale computed in a type other than float32) is not supported",
                        node=node)
    quant_params(node, graph, opset)
    x = graph.tensors[node.inputs[0]]
    scale = graph.tensors[node.inputs[1]]
    axis = int(node.attrs.get("axis", 1))
    if scale.size > 1:
        rank = len(x.shape)
        if not -rank <= axis < rank:
            raise AotcError(f"axis {axis} is out of range for rank {rank}", node=node)
        axis %= rank
        if len(scale.shape) != 1 or scale.shape[0] != x.shape[axis]:
            raise AotcError(f"scale shape {list(scale.shape)} does not match axis {axis} of {list(x.shape)}",
                            node=node)
    node.attrs = {"axis": axis}


def tabulated(node: Node, graph: Graph, opset: int) -> list[Node]:
    """QLinearSigmoid / QLinearLeakyRelu: a function of one 8-bit input becomes a QLookup of its
    256 answers (onnxruntime's kernels tabulate them the same way)."""
    quant_params(node, graph, opset)
    x, xs, xz, ys, yz = node.inputs[:5]
    op = node.op.removeprefix("QLinear")
    attrs = {"alpha": float(node.attrs.get("alpha", 0.01))} if op == "LeakyRelu" else {}
    out_dtype = graph.tensors[node.outputs[0]].dtype
    table = lookup_table(op, attrs, graph.tensors[x].dtype, graph.const(xs).item(), int(graph.const(xz).item()),
                         graph.const(ys).item(), int(graph.const(yz).item()), out_dtype, opset)
    if table is None:
        raise AotcError(f"cannot tabulate {op} over the 8-bit inputs", node=node)
    name = f"{node.name}__table"
    graph.tensors[name] = Tensor(name, (256,), out_dtype, table)
    return [Node("QLookup", node.name, [x, name], node.outputs, {"function": op}, node.sources())]


RULES = {
    "QuantizeLinear": quantize_linear,
    "DequantizeLinear": quantize_linear,
    **{op: quant_params for op in QPARAMS if op not in ("QuantizeLinear", "DequantizeLinear")},
    "QLinearSigmoid": tabulated,
    "QLinearLeakyRelu": tabulated,
}


_QRANGE = {"int16": (-32768, 32767), "uint16": (0, 65535), "int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1),
           "uint2": (0, 3), "int8": (-128, 127), "uint8": (0, 255)}


def quantize_in_float(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """QuantizeLinear/DequantizeLinear that the integer kernels do not take (a scale or zero point computed at
    run time; 16-, 4- and 2-bit integers; float8) -> float32 elementwise ops: DequantizeLinear is
    (x - zero_point) * scale; QuantizeLinear is Round(x / scale) + zero_point clipped to the type's range
    (to nearest even, saturating, as the spec says), or for float8 x / scale cast (saturate as asked).
    A per-axis scale or zero point is reshaped to broadcast along its axis; a blocked one is gathered to x's
    shape (each element's block's value)."""
    dq = node.op == "DequantizeLinear"
    ints = graph.tensors[node.inputs[0]].dtype if dq else graph.tensors[node.outputs[0]].dtype
    params = [i for i in node.inputs[1:3] if i]
    native = ints in (("int8", "uint8", "int32") if dq else ("int8", "uint8"))
    block = int(node.attrs.get("block_size", 0))
    if native and all(graph.const(i) is not None for i in params) and not block:
        return None  # quantize_linear's rule: the integer kernels
    if len(node.inputs) < 2 or not node.inputs[1]:
        raise AotcError("scale (input 1) is missing", node=node)
    x = graph.tensors[node.inputs[0]]
    rank, b = len(x.shape), Builder(node, graph)
    per_axis = block > 0 or any(graph.tensors[i].size > 1 for i in params)  # the axis matters only then
    axis = positive_axis(int(node.attrs.get("axis", 1)), rank, node) if per_axis else 0

    def along_axis(name: str) -> str:
        """A float32 copy of a scale or zero point, reshaped to broadcast along the axis when per-axis."""
        t = graph.tensors[name]
        if t.dtype != "float32":
            name = b.add("Cast", [name], t.shape, {"to": "float32", "saturate": 1})
        if block:  # one value per block of `block` along the axis: each element's gathered (issue 51)
            n = x.shape[axis]
            if len(t.shape) != rank or t.shape[axis] != -(-n // block) or \
                    any(d != e for k, (d, e) in enumerate(zip(t.shape, x.shape, strict=True)) if k != axis):
                raise AotcError(f"{list(t.shape)} is not one value per block of {block} along axis {axis} of "
                                f"{list(x.shape)}", node=node)
            at = b.tensor((n,), np.arange(n, dtype=np.int64) // block, dtype="int64")
            return b.add("Gather", [name, at], x.shape, {"axis": axis})
        if t.size > 1:
            if len(t.shape) != 1 or t.shape[0] != x.shape[axis]:
                raise AotcError(f"{list(t.shape)} does not match axis {axis} of {list(x.shape)}", node=node)
            name = b.add("Reshape", [name], (t.shape[0], *[1] * (rank - 1 - axis)))
        return name

    scale = along_axis(node.inputs[1])
    zp = along_axis(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if dq:
        xf = b.add("Cast", [x.name], x.shape, {"to": "float32", "saturate": 1})
        if zp is not None:
            xf = b.add("Sub", [xf, zp], x.shape)
        y = graph.tensors[node.outputs[0]]
        if y.dtype != "float32":  # a float16 scale: a float16 output (its rounding: halves.py)
            b.add("Cast", [b.add("Mul", [xf, scale], y.shape)], None, {"to": y.dtype, "saturate": 1},
                  out=node.outputs[0])
        else:
            b.add("Mul", [xf, scale], None, out=node.outputs[0])
        return b.nodes
    if x.dtype != "float32":
        raise AotcError(f"QuantizeLinear of {x.dtype} is not supported here (float32)", node=node)
    q = b.add("Div", [x.name, scale], x.shape)
    if ints.startswith(("float8", "float4")):
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


def _windowed(rule: Rule, data: tuple[int, ...]) -> Rule:
    """A QLinear op's quantization inputs made canonical, then its window attributes by the float
    op's rule, on the inputs at `data` (x, and w for a conv)."""
    def wrapped(node: Node, graph: Graph, opset: int) -> None:
        quant_params(node, graph, opset)
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
        quant_params(node, graph, opset)
        x, xs, xz, ys, yz = node.inputs[:5]
        y = node.outputs[0]
        op = node.op.removeprefix("QLinear")
        xf, yf = f"{node.name}__dequantized", f"{node.name}__float"
        graph.tensors[xf] = Tensor(xf, shape_of(graph, x), "float32")
        graph.tensors[yf] = Tensor(yf, shape_of(graph, y), "float32")
        dq = Node("DequantizeLinear", f"{node.name}__dequantize", [x, xs, xz], [xf], {"axis": 1}, node.sources())
        attrs = {k: v for k, v in node.attrs.items() if k not in ("opset", "channels_last")}
        if node.attrs.get("channels_last", 0):
            raise AotcError("channels_last is not supported", node=node)
        f = Node(op, node.name, [xf], [yf], attrs, node.sources())
        float_rule(f, graph, int(node.attrs.get("opset", opset)))
        q = Node("QuantizeLinear", f"{node.name}__quantize", [yf, ys, yz], [y], {"axis": 1}, node.sources())
        return [dq, f, q]
    return expand


def qlinear_softmax(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """QLinearSoftmax over the innermost axis stays an integer op (attributes: Softmax's outer, n,
    inner); over another axis it runs in float between DequantizeLinear and QuantizeLinear."""
    quant_params(node, graph, opset)
    shim = Node("Softmax", node.name, node.inputs[:1], node.outputs, dict(node.attrs))
    softmax(shim, graph, int(node.attrs.get("opset", opset)))
    if shim.attrs["inner"] != 1:
        return _through_float(softmax)(node, graph, opset)
    node.attrs = shim.attrs
    return None


def qlinear_matmul(node: Node, graph: Graph, opset: int) -> None:
    """QLinearMatMul whose B, scales or zero points are computed at run time -> QLinearMatMulValues, whose
    kernel reads them (per-tensor scales and zero points; aot/kernels/quant.py); else the integer kernels'."""
    ins = [*node.inputs, *[""] * (8 - len(node.inputs))]
    if all(not ins[k] or graph.const(ins[k]) is not None for k in (1, 2, 3, 4, 5, 6, 7)):
        quant_params(node, graph, opset)
        return
    for k in (1, 4, 6):
        if not ins[k]:
            raise AotcError(f"scale (input {k}) is missing", node=node)
    for k in (1, 2, 4, 5, 6, 7):
        if ins[k] and graph.tensors[ins[k]].size != 1:
            raise AotcError(f"a per-axis scale or zero point (input {k}) computed at run time is not supported",
                            node=node)
    scale_types = {graph.tensors[ins[k]].dtype for k in (1, 4, 6)}
    if not scale_types <= {"float32", "float16"} or len(scale_types) != 1:
        raise AotcError(f"scales of dtypes {sorted(scale_types)} are not supported (all float32 or all float16)",
                        node=node)
    node.op, node.inputs = "QLinearMatMulValues", ins
    node.attrs = {"half_scales": int(scale_types == {"float16"})}


def conv_integer(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """ConvInteger: Conv's window attributes (on its x and w); with weights computed at run time, the
    float32 Conv of the zero-point-shifted integers (integer_in_float)."""
    shim = Node("Conv", node.name, node.inputs[:2], node.outputs, node.attrs)
    conv(shim, graph, opset)
    node.attrs = shim.attrs
    if graph.const(node.inputs[1]) is None:
        return integer_in_float(node, graph)
    return None


def matmul_integer(node: Node, graph: Graph, opset: int) -> list[Node] | None:
    """MatMulInteger with B computed at run time: the float32 MatMul of the shifted integers (integer_in_float)."""
    return integer_in_float(node, graph) if graph.const(node.inputs[1]) is None else None


# float32 holds every integer below 2^24 exactly: sums of at most this many 8-bit products (each below
# 2^16 in magnitude, after the zero points' shift) stay exact in any order
_EXACT_TERMS = (1 << 24) // (255 * 255)


def integer_in_float(node: Node, graph: Graph) -> list[Node]:
    """MatMulInteger / ConvInteger whose second operand is computed at run time (the integer kernels take
    constant weights) -> Cast to float32, minus the zero points (a per-column / per-channel one of the
    weights shaped to broadcast), MatMul / Conv in float32, Cast to int32: exact while no sum has more terms than
    float32 holds exactly (_EXACT_TERMS), refused beyond."""
    a, w = node.inputs[:2]
    za = node.inputs[2] if len(node.inputs) > 2 and node.inputs[2] else ""
    zw = node.inputs[3] if len(node.inputs) > 3 and node.inputs[3] else ""
    ash, wsh = shape_of(graph, a), shape_of(graph, w)
    conv_op = node.op == "ConvInteger"
    terms = int(np.prod(wsh[1:])) if conv_op else ash[-1]
    if terms > _EXACT_TERMS:
        raise AotcError(f"weights computed at run time: sums of {terms} products would not be exact in float32 "
                        f"(at most {_EXACT_TERMS})", node=node)
    if za and graph.tensors[za].size > 1:  # onnx's reference and onnxruntime disagree on it, or refuse it
        raise AotcError("weights computed at run time: a per-row zero point of A is not supported", node=node)
    b = Builder(node, graph)

    def shifted(x: str, zp: str, zp_shape: tuple[int, ...]) -> str:
        xf = b.add("Cast", [x], shape_of(graph, x), {"to": "float32", "saturate": 1})
        if not zp:
            return xf
        zf = b.add("Cast", [zp], shape_of(graph, zp), {"to": "float32", "saturate": 1})
        if graph.tensors[zp].size > 1:
            zf = b.add("Reshape", [zf], zp_shape)
        return b.add("Sub", [xf, zf], shape_of(graph, x))

    rank_w = len(wsh)
    if conv_op:
        af = shifted(a, za, ())
        wf = shifted(w, zw, (wsh[0], *[1] * (rank_w - 1)))  # per output channel
        acc = b.add("Conv", [af, wf], shape_of(graph, node.outputs[0]), dict(node.attrs))
    else:
        af = shifted(a, za, ())
        wf = shifted(w, zw, (wsh[-1],))  # per column of B
        acc = b.add("MatMul", [af, wf], shape_of(graph, node.outputs[0]))
    b.add("Cast", [acc], None, {"to": "int32", "saturate": 1}, out=node.outputs[0], dtype="int32")
    return b.nodes


for _op in ("QuantizeLinear", "DequantizeLinear"):  # the float rewrite first, where the integer kernels cannot
    RULES[_op] = (lambda native: lambda node, graph, opset: (
        quantize_in_float(node, graph, opset) or native(node, graph, opset)))(RULES[_op])
RULES["QLinearConv"] = _windowed(conv, (0, 3))
RULES["QLinearAveragePool"] = _windowed(pool, (0,))
RULES["QLinearSoftmax"] = qlinear_softmax
RULES["QLinearMatMul"] = qlinear_matmul
RULES["ConvInteger"] = conv_integer
RULES["MatMulInteger"] = matmul_integer
