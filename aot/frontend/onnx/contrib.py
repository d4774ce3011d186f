"""The com.microsoft operators aotc reads: the quantized (QOperator) set that onnxruntime's quantizer
writes, the float ops its transformer optimizer writes (FLOAT_OPS, rewritten onto ONNX ops by
aot/frontend/onnx/canonical/contrib.py), and their output shapes, which onnx's shape inference does not know.

Only these ops of the domain are accepted; any other com.microsoft op is refused at import. Their
shapes are filled in as value_info between rounds of onnx's inference (`fill_shapes`), so the
standard ops after them are inferred as usual. aotc's own TFLite integer ops (domain aotc.tflite,
aot/ir/tflite_ops.py) are accepted too; the TFLite frontend declares their outputs as value_info.
"""

from __future__ import annotations

import math

import onnx
from onnx import helper

from aot.errors import AotcError, OnnxNodeName, in_vendor
from aot.ir import np_dtype
from aot.ir import tflite_ops as tfl
from aot.ir.vendor_ops import VendorOp, vendor_op

DOMAIN = "com.microsoft"

# the QOperator ops of onnxruntime's quantizer
CONTRIB_OPS = ("QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearConcat",
               "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax", "QGemm")
# the float-output ops of onnxruntime's transformer optimizer; its session's fusions of quantize_dynamic's
# DynamicQuantizeLinear / MatMulInteger / Mul (DynamicQuantizeMatMul, MatMulIntegerToFloat); and the LSTM
# quantize_dynamic writes (DynamicQuantizeLSTM)
FLOAT_OPS = ("Gelu", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd", "FusedMatMul", "SkipLayerNormalization",
             "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization",
             "Attention", "MultiHeadAttention", "DynamicQuantizeMatMul", "MatMulIntegerToFloat",
             "DynamicQuantizeLSTM", "QAttention", "QEmbedLayerNormalization", "RotaryEmbedding")

# onnxruntime's contrib ops that it registers in the ONNX domain (its optimizer writes them there): shapes
# filled here as for com.microsoft's
ONNX_DOMAIN_OPS = ("SimplifiedLayerNormalization",)


# com.microsoft ops whose name an ONNX op of another meaning has: their IR op names
_IR_NAMES = {"Attention": "com.microsoft.Attention", "RotaryEmbedding": "com.microsoft.RotaryEmbedding"}


def ir_op(node: onnx.NodeProto) -> str:
    """The IR op of a node: its op_type, but for the com.microsoft ops named as ONNX ops of another meaning and
    a vendor's own ops (aot/ir/vendor_ops.py), named with their domain."""
    if (vop := vendor_op(node.domain, node.op_type)) is not None:
        return vop.ir_name
    return _IR_NAMES.get(node.op_type, node.op_type) if node.domain == DOMAIN else node.op_type


def is_supported(node: onnx.NodeProto) -> bool:
    return node.domain in ("", "ai.onnx") or (node.domain == DOMAIN and node.op_type in CONTRIB_OPS + FLOAT_OPS) \
        or (node.domain == tfl.DOMAIN and node.op_type in tfl.IMPORTED_OPS)


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def _pool_shape(node: onnx.NodeProto, x: tuple[int, ...]) -> tuple[int, ...] | None:
    channels_last = _attr(node, "channels_last", 0)
    spatial = x[1:-1] if channels_last else x[2:]
    kernel = list(_attr(node, "kernel_shape", []))
    nd = len(spatial)
    if len(kernel) != nd:
        return None
    strides = list(_attr(node, "strides", [1] * nd))
    pads = list(_attr(node, "pads", [0] * 2 * nd))
    auto_pad = _attr(node, "auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    ceil = _attr(node, "ceil_mode", 0)
    out = []
    for i in range(nd):
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out.append(math.ceil(spatial[i] / strides[i]))
            continue
        if auto_pad == "VALID":
            pads[i] = pads[i + nd] = 0
        span = spatial[i] + pads[i] + pads[i + nd] - kernel[i]
        out.append((math.ceil(span / strides[i]) if ceil else span // strides[i]) + 1)
    return (x[0], *out, x[-1]) if channels_last else (x[0], x[1], *out)


def _fused_matmul_shape(node: onnx.NodeProto, a: tuple[int, ...] | None, b: tuple[int, ...] | None,
                        elem: int | None) -> tuple[tuple[int, ...], int | None] | None:
    """MatMul's shape of A and B, each with its last two dims swapped when transA / transB (rank >= 2)."""
    if a is None or b is None or not a or not b:
        return None
    if _attr(node, "transA", 0) and len(a) >= 2:
        a = (*a[:-2], a[-1], a[-2])
    if _attr(node, "transB", 0) and len(b) >= 2:
        b = (*b[:-2], b[-1], b[-2])
    if len(a) == 1 and len(b) == 1:
        return (), elem
    if len(a) == 1:
        return (*b[:-2], b[-1]), elem
    if len(b) == 1:
        return a[:-1], elem
    batch = _broadcast(a[:-2], b[:-2])
    return ((*batch, a[-2], b[-1]), elem) if batch is not None else None


def _extra_outputs(node: onnx.NodeProto, first: tuple[int, ...], shapes: dict) -> list[tuple[int, ...]]:
    """Shapes of outputs after the first: SkipLayerNormalization's mean, inv_std_var (the input's dims,
    the last 1) and input_skip_bias_sum (the input's), the same of SkipSimplifiedLayerNormalization;
    SimplifiedLayerNormalization's inv_std_var; DynamicQuantizeLSTM's Y_h and Y_c ([dirs, batch,
    hidden] of its Y [seq, dirs, batch, hidden]); EmbedLayerNormalization's mask_index [batch] and
    embedding_sum; Attention's present and MultiHeadAttention's present_key and present_value."""
    if node.domain == DOMAIN and node.op_type in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization") \
            and first:
        return [(*first[:-1], 1), (*first[:-1], 1), first]
    if node.domain == DOMAIN and node.op_type in ("EmbedLayerNormalization", "QEmbedLayerNormalization") \
            and len(first) == 3:
        return [first[:1], first]
    if node.domain == DOMAIN and node.op_type in ("Attention", "MultiHeadAttention", "QAttention") \
            and len(first) == 3:
        return _present_shapes(node, first, shapes)
    if _onnx_domain_contrib(node) and node.op_type == "SimplifiedLayerNormalization" and first:
        return [(*first[:-1], 1)]
    if node.domain == DOMAIN and node.op_type == "DynamicQuantizeLSTM" and len(first) == 4:
        return [first[1:], first[1:]]
    return []


def _present_shapes(node: onnx.NodeProto, first: tuple[int, ...], shapes: dict) -> list[tuple[int, ...]]:
    """Attention's present [2, B, N, P + S, H] (P from past [2, B, N, P, H]); MultiHeadAttention's present_key
    and present_value [B, N, P + L, H] (L the keys' length: key [B, L, D], or query's packed [B, L, N, 3, H])."""
    ins = list(node.input) + [""] * 10
    heads = int(_attr(node, "num_heads", 0))
    if heads <= 0:
        return []
    if node.op_type in ("Attention", "QAttention"):
        w = shapes.get(ins[1])
        past_at = 4 if node.op_type == "Attention" else 8
        past = shapes.get(ins[past_at]) if ins[past_at] else None
        if w is None or len(w) != 2:
            return []
        sizes = list(_attr(node, "qkv_hidden_sizes", [])) or [w[1] // 3] * 3
        if len(sizes) != 3:
            return []
        length = first[1] + (past[3] if past is not None and len(past) == 5 else 0)
        return [(2, first[0], heads, length, sizes[1] // heads)]
    q, k, v = (shapes.get(ins[i]) if ins[i] else None for i in range(3))
    past = shapes.get(ins[6]) if ins[6] else None
    if q is None:
        return []
    if len(q) == 5:  # packed QKV [B, L, N, 3, H]
        kv_len, head, v_head = q[1], q[4], q[4]
    elif k is not None and v is not None and len(k) == 3 and len(v) == 3:
        kv_len, head, v_head = k[1], k[2] // heads, v[2] // heads
    elif k is not None and len(k) == 5:  # packed KV [B, L, N, 2, H]
        kv_len, head, v_head = k[1], k[4], k[4]
    else:
        return []
    length = kv_len + (past[2] if past is not None and len(past) == 4 else 0)
    return [(q[0], heads, length, head), (q[0], heads, length, v_head)]


def _extra_type(node: onnx.NodeProto, k: int, elem: int) -> int:
    """The element type of output k: EmbedLayerNormalization's mask_index is int32, the rest as the first."""
    if node.domain == DOMAIN and node.op_type in ("EmbedLayerNormalization", "QEmbedLayerNormalization") and k == 1:
        return onnx.TensorProto.INT32
    return elem


def _onnx_domain_contrib(node: onnx.NodeProto) -> bool:
    return node.domain in ("", "ai.onnx") and node.op_type in ONNX_DOMAIN_OPS


def output_type(node: onnx.NodeProto, shapes: dict, types: dict) -> tuple[tuple[int, ...], int] | None:
    """(shape, elem_type) of the first output of a com.microsoft op or of QuantizeLinear /
    DequantizeLinear (which onnx's reference evaluator cannot run below opset 19), or None while
    its inputs are unknown."""
    op, ins = node.op_type, list(node.input)
    if node.domain in ("", "ai.onnx") and op in ("QuantizeLinear", "DequantizeLinear"):
        x = shapes.get(ins[0])
        if x is None:
            return None
        if op == "DequantizeLinear":
            return x, types.get(ins[1], onnx.TensorProto.FLOAT)
        zero_type = types.get(ins[2]) if len(ins) > 2 and ins[2] else onnx.TensorProto.UINT8
        return x, _attr(node, "output_dtype", 0) or zero_type
    if node.domain != DOMAIN and not _onnx_domain_contrib(node):
        return None

    def shape(k: int):
        return shapes.get(ins[k]) if k < len(ins) and ins[k] else None

    x_type = types.get(ins[0])
    if op in ("QLinearAdd", "QLinearMul"):
        a, b = shape(0), shape(3)
        return (_broadcast(a, b), x_type) if a is not None and b is not None and _broadcast(a, b) else None
    if op in ("Gelu", "FastGelu", "QuickGelu", "BiasAdd", "SkipLayerNormalization", "SimplifiedLayerNormalization",
              "SkipSimplifiedLayerNormalization", "RotaryEmbedding"):
        return (shape(0), x_type) if shape(0) is not None else None
    if op == "BiasGelu":
        a, b = shape(0), shape(1)
        return (_broadcast(a, b), x_type) if a is not None and b is not None and _broadcast(a, b) else None
    if op == "FusedMatMul":
        return _fused_matmul_shape(node, shape(0), shape(1), x_type)
    if op == "Attention":
        x, w = shape(0), shape(1)
        if x is None or w is None or len(x) != 3 or len(w) != 2:
            return None
        sizes = list(_attr(node, "qkv_hidden_sizes", [])) or [w[1] // 3] * 3
        return ((x[0], x[1], sizes[2]), x_type) if len(sizes) == 3 else None
    if op in ("EmbedLayerNormalization", "QEmbedLayerNormalization"):  # input_ids [B, S], word_embedding [V, H]
        ids, words = shape(0), shape(2)
        if ids is None or words is None or len(ids) != 2 or len(words) != 2:
            return None
        return (ids[0], ids[1], words[1]), types.get(ins[2 if op == "EmbedLayerNormalization" else 8])
    if op == "QAttention":  # input [B, S, D] (uint8), weight [D, 3 H]: float [B, S, H]
        x, w = shape(0), shape(1)
        if x is None or w is None or len(x) != 3 or len(w) != 2:
            return None
        return (x[0], x[1], w[1] // 3), types.get(ins[3])
    if op == "MultiHeadAttention":  # query [B, S, D] or packed [B, S, N, 3, H]; value [B, L, Dv] or [B, N, L, Hv]
        q, v = shape(0), shape(2)
        heads = int(_attr(node, "num_heads", 0))
        if q is None:
            return None
        if len(q) == 5:
            return (q[0], q[1], q[2] * q[4]), x_type
        if len(q) != 3:
            return None
        if v is None:  # packed KV in key [B, L, N, 2, H], or no value: V as wide as Q
            k = shape(1)
            return ((q[0], q[1], k[2] * k[4]) if k is not None and len(k) == 5 else q), x_type
        return ((q[0], q[1], v[2]) if len(v) == 3 else (q[0], q[1], heads * v[3])), x_type
    if op == "DynamicQuantizeLSTM":  # X [seq, batch, input], W [dirs, input, 4 * hidden]: Y [seq, dirs, batch, hidden]
        x, w = shape(0), shape(1)
        if x is None or w is None or len(x) != 3 or len(w) != 3:
            return None
        return (x[0], w[0], x[1], w[2] // 4), x_type
    if op in ("DynamicQuantizeMatMul", "MatMulIntegerToFloat"):  # float out
        return _fused_matmul_shape(node, shape(0), shape(1), onnx.TensorProto.FLOAT)
    if op in ("QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"):
        return (shape(0), x_type) if shape(0) is not None else None
    if op == "QLinearGlobalAveragePool":
        x = shape(0)
        if x is None:
            return None
        if _attr(node, "channels_last", 0):
            return (x[0], *([1] * (len(x) - 2)), x[-1]), x_type
        return (x[0], x[1], *([1] * (len(x) - 2))), x_type
    if op == "QLinearAveragePool":
        x = shape(0)
        out = _pool_shape(node, x) if x is not None else None
        return (out, x_type) if out is not None else None
    if op == "QLinearConcat":
        parts = [shapes.get(ins[k]) for k in range(2, len(ins), 3)]
        if not parts or any(p is None for p in parts):
            return None
        axis = _attr(node, "axis", 0)
        axis = axis + len(parts[0]) if axis < 0 else axis
        out = list(parts[0])
        out[axis] = sum(p[axis] for p in parts)
        return tuple(out), types.get(ins[2])
    if op == "QGemm":
        a, b = shape(0), shape(3)
        if a is None or b is None or len(a) != 2 or len(b) != 2:
            return None
        m = a[1] if _attr(node, "transA", 0) else a[0]
        n = b[0] if _attr(node, "transB", 0) else b[1]
        has_y = len(ins) > 7 and ins[7]
        out_type = (types.get(ins[8]) if len(ins) > 8 and ins[8] else x_type) if has_y else onnx.TensorProto.FLOAT
        return (m, n), out_type
    return None


def fill_shapes(model: onnx.ModelProto) -> bool:
    """Add value_info for the outputs of contrib nodes whose input shapes are known; True if any was added."""
    g = model.graph
    shapes: dict[str, tuple[int, ...]] = {}
    types: dict[str, int] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        tt = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and tt.elem_type:
            types[vi.name] = tt.elem_type
        if tt.HasField("shape") and all(d.HasField("dim_value") for d in tt.shape.dim):
            shapes[vi.name] = tuple(int(d.dim_value) for d in tt.shape.dim)
    for init in g.initializer:
        shapes[init.name] = tuple(init.dims)
        types[init.name] = init.data_type
    known = {vi.name for vi in g.value_info}
    added = False
    for node in g.node:
        if (vop := vendor_op(node.domain, node.op_type)) is not None:
            added |= _fill_vendor_op(g, node, vop, shapes, types, known)
            continue
        if (node.domain != DOMAIN and not _onnx_domain_contrib(node)) or not node.output or not node.output[0] \
                or node.output[0] in shapes:
            continue
        result = output_type(node, shapes, types)
        if result is None or result[1] is None:
            continue
        out_shape, elem = result
        for k, (name, sh) in enumerate(zip(node.output, [out_shape, *_extra_outputs(node, out_shape, shapes)],
                                           strict=False)):
            if not name or name in shapes:
                continue
            shapes[name], types[name] = sh, _extra_type(node, k, elem)
            _declare(g, name, types[name], sh, known)
            added = True
    return added


def _fill_vendor_op(g: onnx.GraphProto, node: onnx.NodeProto, vop: VendorOp, shapes: dict[str, tuple[int, ...]],
                    types: dict[str, int], known: set[str]) -> bool:
    """A vendor op's outputs typed by its vendor's infer, once every input it reads is typed."""
    if not node.output or all(not o or o in shapes for o in node.output):
        return False
    if any(i and (i not in shapes or i not in types) for i in node.input):
        return False
    ins = [None if not i else (shapes[i], helper.tensor_dtype_to_np_dtype(types[i]).name) for i in node.input]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    with in_vendor(vop.vendor, f"infer of {vop.ir_name}", OnnxNodeName(node)):
        outs = list(vop.infer(attrs, ins))
        if len(outs) != len(node.output):
            raise AotcError(f"infer gave {len(outs)} output types for {len(node.output)} outputs")
    added = False
    for name, (shape, dtype) in zip(node.output, outs, strict=True):
        if not name or name in shapes:
            continue
        shapes[name] = tuple(int(d) for d in shape)
        types[name] = helper.np_dtype_to_tensor_dtype(np_dtype(dtype))
        _declare(g, name, types[name], shapes[name], known)
        added = True
    return added


def _declare(g: onnx.GraphProto, name: str, elem: int, shape: tuple[int, ...], known: set[str]) -> None:
    """value_info for `name` (replacing the one onnx's inference left, if any: it lacked the shape)."""
    vi = helper.make_tensor_value_info(name, elem, list(shape))
    if name in known:
        for old in g.value_info:
            if old.name == name:
                old.CopyFrom(vi)
    else:
        g.value_info.append(vi)
