"""The vendor test kit's catalogue: small cases of the ops a vendor is likely to claim, each with the
attributes that trip codegen up (groups, strides, asymmetric pads, dilations, broadcasting, ceil mode,
per-channel parameters), and the short chains vendors fuse (Conv+Relu, Conv+Add+Relu, MatMul+Add).

Every case runs on aotc's host kernels too, so a case the vendor does not claim still builds; each
is small, so the whole catalogue builds into one library in seconds. Data is seeded by the case's
name: a case is the same whichever others are built with it.

    from aot.testing.cases import catalogue
    cases = catalogue(ops={"Conv", "Relu"})     # the cases made only of these ops
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from aot.testing.shared import Case, model_case, op_case

I64 = np.int64


def _rng(case_id: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case_id.encode()))


def _seed(case_id: str) -> int:
    return zlib.crc32(case_id.encode())


class _Graph:
    """A small float32 graph under construction: run-time inputs, constants, nodes (the chains)."""

    def __init__(self, case_id: str) -> None:
        self.id, self.rng = case_id, _rng(case_id)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.feeds: dict[str, np.ndarray] = {}

    def input(self, shape: tuple[int, ...]) -> str:
        name = f"x{len(self.inputs)}"
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.feeds[name] = self.rng.standard_normal(shape).astype(np.float32)
        return name

    def const(self, value: np.ndarray | tuple[int, ...], scale: float = 0.3, positive: bool = False) -> str:
        name = f"c{len(self.inits)}"
        if isinstance(value, tuple):
            data = self.rng.standard_normal(value) * scale
            value = (np.abs(data) + 0.5 if positive else data).astype(np.float32)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], **attrs: object) -> str:
        out = f"t{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"n{len(self.nodes)}_{op.lower()}", **attrs))
        return out

    def case(self, output: str, opset: int = 13) -> Case:
        g = helper.make_graph(self.nodes, self.id, self.inputs,
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)], self.inits)
        return model_case(self.id, g, self.feeds, opset)


def _w(case_id: str, *shape: int, scale: float = 0.3) -> np.ndarray:
    return (_rng(case_id + "/w").standard_normal(shape) * scale).astype(np.float32)


# --- float32 ops -----------------------------------------------------------------------------------

def conv(case_id: str, x: tuple[int, ...], w: tuple[int, ...], bias: bool = True, **attrs: object) -> Case:
    """Conv of input x by constant weights of ONNX's shape [M, C/group, k...], a constant bias."""
    consts = {"w": _w(case_id, *w)}
    if bias:
        consts["b"] = _w(case_id + "/b", w[0], scale=0.1)
    return op_case(case_id, "Conv", {"x": x}, consts=consts, attrs=attrs, seed=_seed(case_id))


def gemm(case_id: str, m: int, k: int, n: int, *, trans_a: int = 0, trans_b: int = 0, c: tuple | None = (-1,),
         const_b: bool = True, **attrs: object) -> Case:
    """Gemm of op(A) m x k by op(B) k x n; C a constant of shape `c` (-1: n), None for no C."""
    b = _w(case_id, *((n, k) if trans_b else (k, n)))
    inputs: dict = {"a": (k, m) if trans_a else (m, k)}
    consts: dict = {}
    (consts if const_b else inputs)["b"] = b if const_b else b.shape
    order = ["a", "b"]
    if c is not None:
        consts["c"] = _w(case_id + "/c", *[n if d == -1 else d for d in c], scale=0.1)
        order.append("c")
    attrs = {**attrs, **({"transA": 1} if trans_a else {}), **({"transB": 1} if trans_b else {})}
    return op_case(case_id, "Gemm", inputs, consts=consts, attrs=attrs, input_order=order, seed=_seed(case_id))


def matmul(case_id: str, a: tuple[int, ...], b: tuple[int, ...], const_b: bool = True) -> Case:
    if const_b:
        return op_case(case_id, "MatMul", {"a": a}, consts={"b": _w(case_id, *b)}, seed=_seed(case_id))
    return op_case(case_id, "MatMul", {"a": a, "b": b}, seed=_seed(case_id))


def unary(case_id: str, op: str, shape: tuple[int, ...] = (2, 3, 4, 5), scale: float = 3.0,
          consts: dict | None = None, order: list[str] | None = None, opset: int = 13, **attrs: object) -> Case:
    """An activation over values wide enough (`scale`) to reach its saturations and kinks."""
    x = (_rng(case_id).standard_normal(shape) * scale).astype(np.float32)
    return op_case(case_id, op, {"x": x}, consts=consts, attrs=attrs, opset=opset, input_order=order)


def binary(case_id: str, op: str, a: tuple[int, ...], b: tuple[int, ...], const_b: bool = False) -> Case:
    """A broadcasting binary op; Div's divisor kept away from zero."""
    rng = _rng(case_id)
    xa = rng.standard_normal(a).astype(np.float32)
    xb = rng.standard_normal(b).astype(np.float32)
    if op == "Div":
        xb = (np.abs(xb) + 0.5) * np.where(rng.random(b) < 0.5, -1, 1).astype(np.float32)
    if const_b:
        return op_case(case_id, op, {"a": xa}, consts={"b": xb})
    return op_case(case_id, op, {"a": xa, "b": xb})


def pool(case_id: str, op: str, shape: tuple[int, ...], opset: int = 13, **attrs: object) -> Case:
    return op_case(case_id, op, {"x": shape}, attrs=attrs, opset=opset, seed=_seed(case_id))


def batchnorm(case_id: str, shape: tuple[int, ...], opset: int = 15, **attrs: object) -> Case:
    c = shape[1]
    rng = _rng(case_id + "/stats")
    stats = {"scale": rng.standard_normal(c).astype(np.float32), "bias": rng.standard_normal(c).astype(np.float32),
             "mean": rng.standard_normal(c).astype(np.float32),
             "var": (np.abs(rng.standard_normal(c)) + 0.1).astype(np.float32)}
    return op_case(case_id, "BatchNormalization", {"x": shape}, consts=stats, attrs=attrs, opset=opset,
                   seed=_seed(case_id))


def _float_cases() -> list[Case]:
    ints = lambda *v: np.array(v, I64)  # noqa: E731
    f32 = lambda v: np.array(v, np.float32)  # noqa: E731
    cases = [
        # Conv: 1x1, 3x3, 5x5, strides, asymmetric and automatic pads, dilations, groups, depthwise, 1-D, batch
        conv("conv_3x3_pad1", (1, 4, 8, 8), (6, 4, 3, 3), pads=[1, 1, 1, 1]),
        conv("conv_3x3_valid_nobias", (1, 3, 7, 7), (5, 3, 3, 3), bias=False),
        conv("conv_1x1", (1, 8, 5, 5), (16, 8, 1, 1)),
        conv("conv_stride2_pad1", (1, 4, 9, 9), (8, 4, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1]),
        conv("conv_asym_pads", (1, 3, 6, 7), (4, 3, 3, 2), pads=[0, 1, 2, 0]),
        conv("conv_dilation2", (1, 4, 9, 9), (4, 4, 3, 3), dilations=[2, 2], pads=[2, 2, 2, 2]),
        conv("conv_5x5_stride2", (1, 2, 12, 12), (4, 2, 5, 5), strides=[2, 2], pads=[2, 2, 2, 2]),
        conv("conv_rect_kernel", (1, 3, 8, 6), (4, 3, 1, 3), pads=[0, 1, 0, 1]),
        conv("conv_same_upper_stride2", (1, 3, 7, 7), (4, 3, 3, 3), strides=[2, 2], auto_pad="SAME_UPPER"),
        conv("conv_groups2", (1, 8, 6, 6), (6, 4, 3, 3), group=2, pads=[1, 1, 1, 1]),
        conv("conv_groups4_1x1", (1, 8, 5, 5), (8, 2, 1, 1), group=4),
        conv("conv_depthwise_3x3", (1, 8, 7, 7), (8, 1, 3, 3), group=8, pads=[1, 1, 1, 1]),
        conv("conv_depthwise_stride2", (1, 6, 9, 9), (6, 1, 3, 3), group=6, strides=[2, 2], pads=[1, 1, 1, 1]),
        conv("conv_depthwise_multiplier2", (1, 4, 6, 6), (8, 1, 3, 3), group=4, pads=[1, 1, 1, 1]),
        conv("conv_depthwise_5x5", (1, 4, 10, 10), (4, 1, 5, 5), group=4, pads=[2, 2, 2, 2]),
        conv("conv_batch2", (2, 3, 6, 6), (4, 3, 3, 3), pads=[1, 1, 1, 1]),
        conv("conv_many_channels", (1, 32, 4, 4), (24, 32, 3, 3), pads=[1, 1, 1, 1]),
        conv("conv_1d", (1, 4, 16), (6, 4, 3), pads=[1, 1]),
        # Gemm and MatMul: transposes, alpha and beta, C's shapes, a run-time B, batches
        gemm("gemm_bias", 4, 16, 10),
        gemm("gemm_trans_b", 3, 12, 8, trans_b=1),
        gemm("gemm_trans_a", 5, 12, 6, trans_a=1),
        gemm("gemm_no_c", 5, 7, 6, c=None),
        gemm("gemm_alpha_beta", 4, 9, 7, alpha=0.5, beta=2.0),
        gemm("gemm_bias_1xn", 3, 8, 10, c=(1, -1)),
        gemm("gemm_bias_mxn", 3, 8, 10, c=(3, -1)),
        gemm("gemm_runtime_b", 4, 6, 5, const_b=False),
        gemm("gemm_fc", 1, 256, 64, trans_b=1),
        matmul("matmul_const_b", (4, 16), (16, 10)),
        matmul("matmul_one_row", (1, 32), (32, 8)),
        matmul("matmul_3d_const_b", (2, 5, 12), (12, 7)),
        matmul("matmul_runtime_b", (4, 6), (6, 5), const_b=False),
        matmul("matmul_batched", (2, 3, 4), (2, 4, 5), const_b=False),
        # activations
        unary("relu", "Relu"),
        unary("relu_2d", "Relu", (3, 7)),
        unary("sigmoid", "Sigmoid"),
        unary("tanh", "Tanh"),
        unary("leakyrelu_default", "LeakyRelu"),
        unary("leakyrelu_alpha", "LeakyRelu", alpha=0.2),
        unary("hardsigmoid_default", "HardSigmoid"),
        unary("hardsigmoid_attrs", "HardSigmoid", alpha=0.3, beta=0.4),
        unary("clip_0_6", "Clip", consts={"lo": f32(0), "hi": f32(6)}),
        unary("clip_neg_bounds", "Clip", consts={"lo": f32(-0.5), "hi": f32(0.5)}),
        unary("clip_min_only", "Clip", consts={"lo": f32(-0.1)}),
        unary("clip_max_only", "Clip", consts={"hi": f32(0.2)}, order=["x", "", "hi"]),
        unary("clip_attrs_opset7", "Clip", opset=7, min=-1.0, max=1.0),
        # softmax: over the last axis, over another, opset 11's flattening semantics; wide values
        unary("softmax_last", "Softmax", (3, 10), axis=-1),
        unary("softmax_axis1", "Softmax", (2, 5, 3), axis=1),
        unary("softmax_opset11_axis1", "Softmax", (2, 3, 4), opset=11, axis=1),
        unary("softmax_wide_values", "Softmax", (4, 16), scale=30.0, axis=-1),
        # normalisation
        batchnorm("batchnorm_4d", (2, 4, 5, 5)),
        batchnorm("batchnorm_2d", (6, 8)),
        batchnorm("batchnorm_3d_opset9", (2, 4, 9), opset=9, epsilon=1e-3),
    ]
    # binary ops: same shapes, a per-channel constant, a scalar, trailing and two-sided broadcasts
    for op in ("Add", "Mul", "Sub", "Div"):
        t = op.lower()
        cases += [
            binary(f"{t}_same", op, (2, 3, 4, 5), (2, 3, 4, 5)),
            binary(f"{t}_channel_const", op, (1, 6, 4, 4), (1, 6, 1, 1), const_b=True),
            binary(f"{t}_scalar_const", op, (2, 8), (), const_b=True),
            binary(f"{t}_row_broadcast", op, (3, 4, 5), (5,)),
            binary(f"{t}_both_broadcast", op, (2, 1, 4), (1, 3, 1)),
            binary(f"{t}_first_broadcast", op, (1, 3, 1, 5), (2, 3, 4, 5)),
        ]
    # pooling: windows, strides, pads, ceil mode, whether padding counts
    for op, t in (("MaxPool", "maxpool"), ("AveragePool", "avgpool")):
        cases += [
            pool(f"{t}_k2s2", op, (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2]),
            pool(f"{t}_k3s1_pad1", op, (1, 4, 7, 7), kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            pool(f"{t}_k3s2_pad1", op, (2, 4, 9, 9), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
            pool(f"{t}_k3s2_ceil", op, (1, 2, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
            pool(f"{t}_asym", op, (1, 2, 7, 6), kernel_shape=[3, 2], strides=[1, 2], pads=[1, 0, 1, 1]),
        ]
    cases += [
        pool("avgpool_count_include_pad", "AveragePool", (1, 3, 6, 6), kernel_shape=[3, 3], pads=[1, 1, 1, 1],
             count_include_pad=1),
        pool("globalavgpool", "GlobalAveragePool", (1, 8, 5, 5)),
        pool("globalavgpool_batch2", "GlobalAveragePool", (2, 3, 7, 7)),
        pool("globalmaxpool", "GlobalMaxPool", (1, 8, 5, 5)),
    ]
    # data movement: Concat, views, Transpose
    cases += [
        op_case("concat_axis1", "Concat", {"a": (1, 3, 4, 4), "b": (1, 5, 4, 4)}, attrs={"axis": 1}),
        op_case("concat_three", "Concat", {"a": (1, 2, 3, 3), "b": (1, 4, 3, 3), "c": (1, 1, 3, 3)},
                attrs={"axis": 1}),
        op_case("concat_last_axis", "Concat", {"a": (3, 4), "b": (3, 2)}, attrs={"axis": -1}),
        op_case("concat_axis0", "Concat", {"a": (2, 5), "b": (3, 5)}, attrs={"axis": 0}),
        op_case("concat_with_const", "Concat", {"a": (1, 3, 4, 4)}, consts={"b": _w("concat_with_const", 1, 2, 4, 4)},
                attrs={"axis": 1}),
        op_case("reshape_minus1", "Reshape", {"x": (2, 3, 4, 5)}, consts={"s": ints(6, -1)}),
        op_case("reshape_keep_dim", "Reshape", {"x": (2, 3, 4, 5)}, consts={"s": ints(0, -1)}),
        op_case("reshape_4d", "Reshape", {"x": (2, 60)}, consts={"s": ints(2, 3, 5, 4)}),
        op_case("flatten_axis1", "Flatten", {"x": (2, 3, 4, 5)}),
        op_case("flatten_axis2", "Flatten", {"x": (2, 3, 4, 5)}, attrs={"axis": 2}),
        op_case("flatten_axis0", "Flatten", {"x": (2, 3, 4)}, attrs={"axis": 0}),
        op_case("squeeze_axis2", "Squeeze", {"x": (2, 3, 1, 5)}, consts={"axes": ints(2)}),
        op_case("unsqueeze_axis1", "Unsqueeze", {"x": (2, 3, 5)}, consts={"axes": ints(1)}),
        op_case("transpose_nchw_nhwc", "Transpose", {"x": (1, 3, 4, 5)}, attrs={"perm": [0, 2, 3, 1]}),
        op_case("transpose_nhwc_nchw", "Transpose", {"x": (2, 4, 5, 3)}, attrs={"perm": [0, 3, 1, 2]}),
        op_case("transpose_2d", "Transpose", {"x": (6, 9)}, attrs={"perm": [1, 0]}),
        op_case("transpose_default", "Transpose", {"x": (2, 3, 4)}),
    ]
    return cases


# --- int8: one QLinear / Quantize / Dequantize node, integers in and out -----------------------------

def _q(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    lo, hi = (-128, 128) if dtype == "int8" else (0, 256)
    return rng.integers(lo, hi, shape).astype(dtype)


def _qcase(case_id: str, op: str, feeds: dict[str, np.ndarray], consts: dict[str, np.ndarray], order: list[str],
           out_dtype: str, opset: int = 13, **attrs: object) -> Case:
    """One quantized node; integers may be 1 LSB from onnxruntime's (its float rounding of a product an
    integer kernel computes exactly: aotc's own tolerance, tests/kernels/test_quant.py)."""
    case = op_case(case_id, op, feeds, consts=consts, attrs=attrs, opset=opset, input_order=order,
                   out_dtype=out_dtype)
    case.lsb = 1
    return case


def qlinearconv(case_id: str, dtype: str, x: tuple[int, ...], cout: int, k: int, group: int = 1,
                per_channel: bool = False, bias: bool = True, **attrs: object) -> Case:
    """QLinearConv with symmetric int8 weights (zero point 0, the form quantizers write), activations of `dtype`."""
    rng = _rng(case_id)
    xz, yz = (3, -5) if dtype == "int8" else (128, 120)
    w = rng.integers(-100, 100, (cout, x[1] // group, k, k)).astype(np.int8)
    ws = (rng.random(cout) * 0.004 + 0.002).astype(np.float32) if per_channel else np.array(0.004, np.float32)
    consts = {"xs": np.array(0.02, np.float32), "xz": np.array(xz, dtype), "w": w, "ws": ws,
              "wz": np.zeros(cout, np.int8) if per_channel else np.array(0, np.int8),
              "ys": np.array(0.05, np.float32), "yz": np.array(yz, dtype)}
    order = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        consts["b"] = rng.integers(-500, 500, cout).astype(np.int32)
        order.append("b")
    return _qcase(case_id, "QLinearConv", {"x": _q(rng, dtype, x)}, consts, order, dtype, group=group, **attrs)


def qlinearmatmul(case_id: str, dtype: str, a: tuple[int, ...], n: int) -> Case:
    """QLinearMatMul by a constant symmetric int8 matrix, activations of `dtype`."""
    rng = _rng(case_id)
    az, yz = (-4, 6) if dtype == "int8" else (130, 125)
    consts = {"as": np.array(0.02, np.float32), "az": np.array(az, dtype),
              "b": rng.integers(-120, 120, (a[-1], n)).astype(np.int8), "bs": np.array(0.005, np.float32),
              "bz": np.array(0, np.int8), "ys": np.array(0.06, np.float32), "yz": np.array(yz, dtype)}
    return _qcase(case_id, "QLinearMatMul", {"a": _q(rng, dtype, a)}, consts,
                  ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], dtype)


def quantize(case_id: str, dtype: str, shape: tuple[int, ...], axis: int | None = None) -> Case:
    rng = _rng(case_id)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    if axis is None:
        s, z = np.array(0.03, np.float32), np.array(-10 if dtype == "int8" else 128, dtype)
    else:
        s = (rng.random(shape[axis]) * 0.03 + 0.01).astype(np.float32)
        z = _q(rng, dtype, (shape[axis],)) // 4
    return _qcase(case_id, "QuantizeLinear", {"x": x}, {"s": s, "z": z}, ["x", "s", "z"], dtype,
                  **({} if axis is None else {"axis": axis}))


def dequantize(case_id: str, dtype: str, shape: tuple[int, ...], axis: int | None = None) -> Case:
    rng = _rng(case_id)
    if axis is None:
        s, z = np.array(0.03, np.float32), np.array(-10 if dtype == "int8" else 128, dtype)
    else:
        s = (rng.random(shape[axis]) * 0.03 + 0.01).astype(np.float32)
        z = _q(rng, dtype, (shape[axis],)) // 4
    return op_case(case_id, "DequantizeLinear", {"x": _q(rng, dtype, shape)}, consts={"s": s, "z": z},
                   input_order=["x", "s", "z"], attrs={} if axis is None else {"axis": axis})


def _quant_cases() -> list[Case]:
    return [
        qlinearconv("qlinearconv_uint8", "uint8", (1, 4, 8, 8), 6, 3, pads=[1, 1, 1, 1]),
        qlinearconv("qlinearconv_int8", "int8", (1, 4, 8, 8), 6, 3, pads=[1, 1, 1, 1]),
        qlinearconv("qlinearconv_int8_stride2", "int8", (1, 3, 9, 9), 8, 3, strides=[2, 2], pads=[1, 1, 1, 1]),
        qlinearconv("qlinearconv_int8_1x1_nobias", "int8", (1, 8, 5, 5), 8, 1, bias=False),
        qlinearconv("qlinearconv_int8_depthwise", "int8", (1, 8, 7, 7), 8, 3, group=8, pads=[1, 1, 1, 1]),
        qlinearconv("qlinearconv_uint8_per_channel", "uint8", (1, 4, 6, 6), 8, 3, per_channel=True,
                    pads=[1, 1, 1, 1]),
        qlinearmatmul("qlinearmatmul_uint8", "uint8", (4, 16), 10),
        qlinearmatmul("qlinearmatmul_int8", "int8", (3, 24), 8),
        quantize("quantizelinear_uint8", "uint8", (2, 3, 4, 5)),
        quantize("quantizelinear_int8_per_channel", "int8", (1, 4, 3, 3), axis=1),
        dequantize("dequantizelinear_int8", "int8", (2, 3, 4, 5)),
        dequantize("dequantizelinear_uint8_per_channel", "uint8", (1, 4, 3, 3), axis=1),
    ]


# --- chains vendors fuse -----------------------------------------------------------------------------

def _chain_cases() -> list[Case]:
    cases = []

    def chain(case_id: str, build) -> None:  # build(g) -> the output tensor
        g = _Graph(case_id)
        cases.append(g.case(build(g)))

    def conv_node(g: _Graph, x: str, cin: int, cout: int, group: int = 1, bias: bool = True) -> str:
        ins = [x, g.const((cout, cin // group, 3, 3))] + ([g.const((cout,), 0.1)] if bias else [])
        return g.node("Conv", ins, pads=[1, 1, 1, 1], group=group)

    chain("conv_relu", lambda g: g.node("Relu", [conv_node(g, g.input((1, 4, 8, 8)), 4, 8)]))
    chain("conv_clip6", lambda g: g.node("Clip", [conv_node(g, g.input((1, 4, 8, 8)), 4, 8),
                                                  g.const(np.array(0, np.float32)),
                                                  g.const(np.array(6, np.float32))]))
    chain("depthwise_relu", lambda g: g.node("Relu", [conv_node(g, g.input((1, 8, 6, 6)), 8, 8, group=8)]))
    chain("conv_sigmoid", lambda g: g.node("Sigmoid", [conv_node(g, g.input((1, 3, 6, 6)), 3, 4)]))

    def residual(g: _Graph) -> str:  # Conv -> Add(the block's input) -> Relu
        x = g.input((1, 6, 6, 6))
        return g.node("Relu", [g.node("Add", [conv_node(g, x, 6, 6), x])])

    chain("conv_add_relu", residual)
    chain("conv_bias_add_relu", lambda g: g.node("Relu", [g.node("Add", [
        conv_node(g, g.input((1, 4, 6, 6)), 4, 6, bias=False), g.const((1, 6, 1, 1), 0.1)])]))

    def conv_bn_relu(g: _Graph) -> str:
        y = conv_node(g, g.input((1, 4, 6, 6)), 4, 6)
        stats = [g.const((6,), positive=True), g.const((6,)), g.const((6,)), g.const((6,), positive=True)]
        return g.node("Relu", [g.node("BatchNormalization", [y, *stats])])

    chain("conv_bn_relu", conv_bn_relu)
    chain("conv_relu_maxpool", lambda g: g.node("MaxPool", [g.node("Relu", [conv_node(g, g.input((1, 3, 8, 8)),
                                                                                       3, 6)])],
                                                kernel_shape=[2, 2], strides=[2, 2]))
    chain("matmul_add", lambda g: g.node("Add", [g.node("MatMul", [g.input((4, 12)), g.const((12, 8))]),
                                                 g.const((8,), 0.1)]))
    chain("matmul_add_relu", lambda g: g.node("Relu", [g.node("Add", [g.node("MatMul", [g.input((3, 16)),
                                                                                        g.const((16, 10))]),
                                                                      g.const((10,), 0.1)])]))
    chain("gemm_relu", lambda g: g.node("Relu", [g.node("Gemm", [g.input((2, 20)), g.const((20, 12)),
                                                                 g.const((12,), 0.1)])]))
    chain("gemm_sigmoid", lambda g: g.node("Sigmoid", [g.node("Gemm", [g.input((2, 20)), g.const((12, 20)),
                                                                       g.const((12,), 0.1)], transB=1)]))

    def bn_relu(g: _Graph) -> str:
        stats = [g.const((5,), positive=True), g.const((5,)), g.const((5,)), g.const((5,), positive=True)]
        return g.node("Relu", [g.node("BatchNormalization", [g.input((2, 5, 4, 4)), *stats], epsilon=1e-3)])

    chain("batchnorm_relu", bn_relu)
    chain("add_relu", lambda g: g.node("Relu", [g.node("Add", [g.input((2, 4, 5)), g.input((2, 4, 5))])]))
    chain("mul_add", lambda g: g.node("Add", [g.node("Mul", [g.input((2, 6)), g.const((6,))]), g.const((6,))]))
    return cases


def select(cases: Iterable[Case], ops: Iterable[str] | None) -> list[Case]:
    """The cases made of `ops` alone (e.g. {"Conv", "Relu"}: the Conv cases, the Relu cases and Conv+Relu);
    all of them when None."""
    if ops is None:
        return list(cases)
    wanted = set(ops)
    return [c for c in cases if set(c.ops) <= wanted]


def catalogue(ops: Iterable[str] | None = None) -> list[Case]:
    """The catalogue, built afresh (a caller may change its cases); with `ops`, only the cases made of those
    ops alone (`select`)."""
    return select(_float_cases() + _quant_cases() + _chain_cases(), ops)


def catalogue_ops() -> list[str]:
    """Every op some case of the catalogue holds, sorted."""
    return sorted({op for c in catalogue() for op in c.ops})
