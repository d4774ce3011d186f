"""Which nodes accel_sim takes. One small predicate per ONNX op; a refusal says why.

The device computes float32 layers and the 8-bit integer ops aotc lowers int8 models to
(QLinearConv, QGemm, QLinearMatMul, QLinearGlobalAveragePool, QLinearAdd, MaxPool and copies on
int8 / uint8 tensors); every layer must be cut into tiles that fit the scratchpad, so the
checkers of the heavy ops ask the same tiling planner the lowering uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from aot.ir import Graph, Node
from aot.vendor.accel_sim.device import DeviceConfig
from aot.vendor.accel_sim.layers import (
    EIGHT_BIT,
    VIEW_OPS,
    binary_operands,
    conv_geom,
    pool_geom,
    qmac_inputs,
    qweights,
)
from aot.vendor.accel_sim.tiling import plan_conv, plan_gemm, plan_pool
from aot.vendor.base import ACCEPT, Reject, Verdict

_FIELD = 0xFFFF  # kernel, stride, dilation and padding are 16-bit register fields


def float32_only(node: Node, graph: Graph) -> Verdict | None:
    for t in [*node.inputs, *node.outputs]:
        if t and graph.tensors[t].dtype != "float32":
            return Reject(f"accel_sim computes float32 only ({t} is {graph.tensors[t].dtype})")
    return None


def _first(*verdicts: Verdict | None) -> Verdict | None:
    """The first verdict given (a Reject is falsy, so neither `or` nor `if r := ...` can test for one)."""
    return next((v for v in verdicts if v is not None), None)


def _window(node: Node) -> Verdict | None:
    a = node.attrs
    values = [*a["kernel_shape"], *a["strides"], *a["dilations"], *a["pads"]]
    if len(a["kernel_shape"]) != 2:
        return Reject("accel_sim windows are 2-D")
    if max(values) > _FIELD:
        return Reject("kernel, stride, dilation or padding above 65535")
    return None


def check_conv(cfg: DeviceConfig, residual: bool = False) -> Callable[[Node, Graph], Verdict]:
    def check(node: Node, graph: Graph) -> Verdict:
        """Conv, 2-D, constant weights and bias; some tiling must fit the scratchpad."""
        if (r := _first(float32_only(node, graph), _window(node))) is not None:
            return r
        if graph.const(node.inputs[1]) is None:
            return Reject("accel_sim needs constant weights")
        if len(node.inputs) > 2 and node.inputs[2] and graph.const(node.inputs[2]) is None:
            return Reject("accel_sim needs a constant bias")
        g = conv_geom(node, graph)
        if plan_conv(g, cfg, residual) is None:
            return Reject(f"no tile of this convolution fits the {cfg.spm_bytes}-byte scratchpad "
                          f"(one output channel of a {g.kh}x{g.kw} kernel over {g.cin_g} input channels)")
        return ACCEPT
    return check


def check_gemm(cfg: DeviceConfig) -> Callable[[Node, Graph], Verdict]:
    def check(node: Node, graph: Graph) -> Verdict:
        """Gemm (transA=0, constant B and a per-column or scalar C) or MatMul by a constant matrix."""
        if (r := float32_only(node, graph)) is not None:
            return r
        a_shape = graph.tensors[node.inputs[0]].shape
        b_shape = graph.tensors[node.inputs[1]].shape
        if graph.const(node.inputs[1]) is None or len(b_shape) != 2:
            return Reject("accel_sim multiplies by a constant 2-D matrix only")
        if node.op == "Gemm":
            if node.attrs.get("transA", 0):
                return Reject("accel_sim Gemm needs transA=0")
            if len(node.inputs) > 2 and node.inputs[2]:
                n = graph.tensors[node.outputs[0]].shape[1]
                c = graph.tensors[node.inputs[2]]
                if c.data is None or c.size not in (1, n) or (c.shape and c.shape[-1] != c.size):
                    return Reject("accel_sim Gemm needs a constant C of shape [N], [1, N] or a scalar")
        elif len(a_shape) < 2:
            return Reject("accel_sim MatMul needs a matrix input")
        k = a_shape[-1]
        m = math.prod(a_shape[:-1])
        n = graph.tensors[node.outputs[0]].shape[-1]
        if plan_gemm(m, n, k, cfg) is None:
            return Reject(f"no tile of this matrix product fits the {cfg.spm_bytes}-byte scratchpad")
        return ACCEPT
    return check


def check_pool(cfg: DeviceConfig) -> Callable[[Node, Graph], Verdict]:
    def check(node: Node, graph: Graph) -> Verdict:
        """Max/average pooling over 2-D windows; global pooling of one channel must fit."""
        if (r := float32_only(node, graph)) is not None:
            return r
        if len(graph.tensors[node.inputs[0]].shape) != 4:
            return Reject("accel_sim pools 2-D images only")
        if not node.op.startswith("Global"):
            if (r := _window(node)) is not None:
                return r
            a = node.attrs
            if any(p >= k for p, k in zip(a["pads"], a["kernel_shape"] * 2, strict=True)):
                return Reject("accel_sim needs pads smaller than the kernel")
            if node.op == "AveragePool" and a.get("count_include_pad", 0) and (any(a["pads"]) or a["ceil_mode"]):
                return Reject("accel_sim averages over the taps inside the input only (count_include_pad=0)")
        g = pool_geom(node, graph)
        if max(g.kh, g.kw) > _FIELD:
            return Reject("pooling window above 65535")
        if plan_pool(g, cfg) is None:
            return Reject(f"one channel's {g.kh}x{g.kw} window does not fit the {cfg.spm_bytes}-byte scratchpad")
        return ACCEPT
    return check


def check_binary(node: Node, graph: Graph) -> Verdict:
    """Add/Mul/Max, and Sub of a constant: one operand of the output's shape, the other equal
    to it, a scalar, or varying along one contiguous block of axes (a per-channel bias)."""
    if (r := float32_only(node, graph)) is not None:
        return r
    if node.op == "Sub" and graph.const(node.inputs[1]) is None:
        return Reject("accel_sim subtracts constants only (as an add of their negation)")
    if binary_operands(node, graph) is None:
        shapes = " and ".join(str(list(graph.tensors[i].shape)) for i in node.inputs)
        return Reject(f"accel_sim cannot broadcast {shapes} on its vector unit")
    return ACCEPT


def check_batchnorm(cfg: DeviceConfig) -> Callable[[Node, Graph], Verdict]:
    def check(node: Node, graph: Graph) -> Verdict:
        """Inference BatchNormalization with constant statistics: a per-channel multiply-add."""
        if (r := float32_only(node, graph)) is not None:
            return r
        if any(graph.const(i) is None for i in node.inputs[1:5]):
            return Reject("accel_sim needs constant BatchNormalization parameters")
        if len(graph.tensors[node.inputs[0]].shape) < 2:
            return Reject("accel_sim normalises tensors with a channel axis")
        if 2 * 4 * graph.tensors[node.inputs[0]].shape[1] > cfg.spm_bytes // 4:
            return Reject("the per-channel constants do not fit a quarter of the scratchpad")
        return ACCEPT
    return check


def check_unary(node: Node, graph: Graph) -> Verdict:
    return _first(float32_only(node, graph), ACCEPT)


def check_concat(node: Node, graph: Graph) -> Verdict:
    return _first(float32_only(node, graph), ACCEPT)


# --- copies and 8-bit layers -------------------------------------------------------------------

def check_copy(node: Node, graph: Graph) -> Verdict:
    """Concat, Transpose and the views move bytes: float32, int8 or uint8, one type throughout."""
    data = node.inputs if node.op == "Concat" else node.inputs[:1]
    dtypes = {graph.tensors[t].dtype for t in [*data, *node.outputs] if t}
    if not dtypes <= {"float32", *EIGHT_BIT} or len(dtypes) != 1:
        return Reject(f"accel_sim moves float32, int8 or uint8 tensors of one type (not {', '.join(sorted(dtypes))})")
    return ACCEPT


def _eight_bit(node: Node, graph: Graph, *data: int) -> Verdict | None:
    """The activations of an integer op: int8 or uint8, the output of the inputs' type."""
    dtypes = {graph.tensors[node.inputs[k]].dtype for k in data} | {graph.tensors[node.outputs[0]].dtype}
    if len(dtypes) != 1 or not dtypes <= set(EIGHT_BIT):
        return Reject(f"accel_sim's integer layers take int8 or uint8 activations of one type "
                      f"(not {', '.join(sorted(dtypes))})")
    return None


def _per_tensor(node: Node, graph: Graph, *params: str) -> Verdict | None:
    for t in params:
        if t and graph.tensors[t].size != 1:
            return Reject(f"accel_sim needs per-tensor activation scales and zero points ({t} has "
                          f"{graph.tensors[t].size} values)")
    return None


def _symmetric_weights(node: Node, graph: Graph) -> Verdict | None:
    names = qmac_inputs(node)
    w = graph.tensors[names["w"]]
    if w.data is None or w.dtype not in EIGHT_BIT:
        return Reject("accel_sim needs constant int8 or uint8 weights")
    if names["bias"] and graph.const(names["bias"]) is None:
        return Reject("accel_sim needs a constant bias")
    if qweights(node, graph)[1].any():
        return Reject("accel_sim takes symmetric weights only (zero point 0; 128 for uint8)")
    return None


def check_qconv(cfg: DeviceConfig, residual: bool = False) -> Callable[[Node, Graph], Verdict]:
    def check(node: Node, graph: Graph) -> Verdict:
        """QLinearConv, 2-D: 8-bit activations, constant symmetric 8-bit weights, an int32 bias;
        some tiling must fit the scratchpad."""
        names = qmac_inputs(node)
        for r in (_eight_bit(node, graph, 0), _window(node),
                  _per_tensor(node, graph, names["x_scale"], names["x_zero"], names["y_scale"], names["y_zero"]),
                  _symmetric_weights(node, graph)):
            if r is not None:
                return r
        g = conv_geom(node, graph)
        if plan_conv(g, cfg, residual, eight_bit=True) is None:
            return Reject(f"no tile of this convolution fits the {cfg.spm_bytes}-byte scratchpad "
                          f"(one output channel of a {g.kh}x{g.kw} kernel over {g.cin_g} input channels)")
        return ACCEPT
    return check


def check_qgemm(cfg: DeviceConfig) -> Callable[[Node, Graph], Verdict]:
    def check(node: Node, graph: Graph) -> Verdict:
        """QGemm (transA=0, alpha=1, an 8-bit output) or QLinearMatMul by a constant matrix; all of
        K in one tile (its requantisation is per output column)."""
        names = qmac_inputs(node)
        for r in (_eight_bit(node, graph, 0),
                  _per_tensor(node, graph, names["x_scale"], names["x_zero"], names["y_scale"], names["y_zero"])):
            if r is not None:
                return r
        if node.attrs.get("transA", 0) or node.attrs.get("alpha", 1.0) != 1.0:
            return Reject("accel_sim QGemm needs transA=0 and alpha=1")
        if node.op == "QGemm" and not names["y_scale"]:
            return Reject("accel_sim QGemm needs an 8-bit output (a y_scale)")
        a_shape, b = graph.tensors[names["x"]].shape, graph.tensors[names["w"]]
        if b.data is None or len(b.shape) != 2 or len(a_shape) < 2 or (node.op == "QGemm" and len(a_shape) != 2):
            return Reject("accel_sim multiplies a matrix by a constant 2-D matrix only")
        if (r := _symmetric_weights(node, graph)) is not None:
            return r
        k, n = a_shape[-1], graph.tensors[node.outputs[0]].shape[-1]
        if plan_gemm(math.prod(a_shape[:-1]), n, k, cfg, eight_bit=True) is None:
            return Reject(f"no tile of this matrix product (all {k} of its inner dimension) fits the "
                          f"{cfg.spm_bytes}-byte scratchpad")
        return ACCEPT
    return check


def check_qgap(cfg: DeviceConfig) -> Callable[[Node, Graph], Verdict]:
    def check(node: Node, graph: Graph) -> Verdict:
        """QLinearGlobalAveragePool, NCHW: a requantised sum of each plane, which must fit."""
        if (r := _eight_bit(node, graph, 0)) is not None:
            return r
        if node.attrs.get("channels_last", 0) or len(graph.tensors[node.inputs[0]].shape) != 4:
            return Reject("accel_sim pools 2-D NCHW images only")
        g = pool_geom(node, graph)
        if plan_pool(g, cfg, 1, table=True) is None:
            return Reject(f"one channel's {g.kh}x{g.kw} plane does not fit the {cfg.spm_bytes}-byte scratchpad")
        return ACCEPT
    return check


def check_qadd(node: Node, graph: Graph) -> Verdict:
    """QLinearAdd of two tensors of the output's shape (a residual), per-tensor parameters."""
    if (r := _eight_bit(node, graph, 0, 3)) is not None:
        return r
    if any(graph.tensors[node.inputs[k]].size != 1 for k in (1, 2, 4, 5, 6, 7)):
        return Reject("accel_sim's quantized add takes per-tensor scales and zero points")
    y = graph.tensors[node.outputs[0]]
    if any(graph.tensors[node.inputs[k]].shape != y.shape for k in (0, 3)) or y.size < 2:
        return Reject("accel_sim's quantized add takes two operands of the output's shape (no broadcast)")
    return ACCEPT


def check_pool_8bit(cfg: DeviceConfig, float_check: Callable[[Node, Graph], Verdict]
                    ) -> Callable[[Node, Graph], Verdict]:
    def check(node: Node, graph: Graph) -> Verdict:
        """MaxPool / GlobalMaxPool: float32 as the other pools, or on int8 / uint8 tensors."""
        if graph.tensors[node.inputs[0]].dtype == "float32":
            return float_check(node, graph)
        if (r := _eight_bit(node, graph, 0)) is not None:
            return r
        if len(graph.tensors[node.inputs[0]].shape) != 4:
            return Reject("accel_sim pools 2-D images only")
        if not node.op.startswith("Global"):
            if (r := _window(node)) is not None:
                return r
            if any(p >= k for p, k in zip(node.attrs["pads"], node.attrs["kernel_shape"] * 2, strict=True)):
                return Reject("accel_sim needs pads smaller than the kernel")
        g = pool_geom(node, graph)
        if max(g.kh, g.kw) > _FIELD:
            return Reject("pooling window above 65535")
        if plan_pool(g, cfg, 1) is None:
            return Reject(f"one channel's {g.kh}x{g.kw} window does not fit the {cfg.spm_bytes}-byte scratchpad")
        return ACCEPT
    return check


def make_checkers(cfg: DeviceConfig) -> dict[str, Callable[[Node, Graph], Verdict]]:
    pool, gemm, qgemm = check_pool(cfg), check_gemm(cfg), check_qgemm(cfg)
    max_pool = check_pool_8bit(cfg, pool)
    return {
        "Conv": check_conv(cfg), "Gemm": gemm, "MatMul": gemm,
        "MaxPool": max_pool, "AveragePool": pool, "GlobalAveragePool": pool, "GlobalMaxPool": max_pool,
        "Add": check_binary, "Sub": check_binary, "Mul": check_binary, "Max": check_binary,
        "Relu": check_unary, "Clip": check_unary, "Concat": check_copy, "Transpose": check_copy,
        "BatchNormalization": check_batchnorm(cfg),
        **{op: check_copy for op in VIEW_OPS},
        "QLinearConv": check_qconv(cfg), "QGemm": qgemm, "QLinearMatMul": qgemm,
        "QLinearGlobalAveragePool": check_qgap(cfg), "QLinearAdd": check_qadd,
    }


HEAVY = ("Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
         "QLinearConv", "QGemm", "QLinearMatMul", "QLinearGlobalAveragePool")
