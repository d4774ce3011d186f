"""Which single ONNX nodes the dnnl vendor takes. One small predicate per op; a refusal says why.

Attributes are canonical (aot/frontend/onnx/canonical/): pads are explicit, Clip's bounds are
attributes, Softmax carries (outer, n, inner). What is refused here runs in host C instead.
"""

from __future__ import annotations

from aot.ir import Graph, Node
from aot.vendor.base import ACCEPT, Reject, Verdict
from aot.vendor.dnnl.probe import int8_exact
from aot.vendor.dnnl.quant import INT8, gemm_inputs, why_not

MAX_RANK = 6  # aotc_dnnl_tensor holds this many dims
MAX_CONCAT_INPUTS = 16  # AOTC_DNNL_MAX_INPUTS in aotc_dnnl.h

# ONNX unary op -> (oneDNN eltwise algorithm, alpha, beta) from the node's canonical attributes.
ELTWISE = {
    "Relu": lambda a: ("dnnl_eltwise_relu", 0.0, 0.0),
    "LeakyRelu": lambda a: ("dnnl_eltwise_relu", a["alpha"], 0.0),
    "Elu": lambda a: ("dnnl_eltwise_elu", a["alpha"], 0.0),
    "Sigmoid": lambda a: ("dnnl_eltwise_logistic", 0.0, 0.0),
    "Tanh": lambda a: ("dnnl_eltwise_tanh", 0.0, 0.0),
    "Clip": lambda a: ("dnnl_eltwise_clip", a["min"], a["max"]),
    "HardSwish": lambda a: ("dnnl_eltwise_hardswish", 1.0 / 6.0, 0.5),
    "HardSigmoid": lambda a: ("dnnl_eltwise_hardsigmoid", a["alpha"], a["beta"]),
    "Exp": lambda a: ("dnnl_eltwise_exp", 0.0, 0.0),
    "Abs": lambda a: ("dnnl_eltwise_abs", 0.0, 0.0),
    "Sqrt": lambda a: ("dnnl_eltwise_sqrt", 0.0, 0.0),
    "Swish": lambda a: ("dnnl_eltwise_swish", a.get("alpha", 1.0), 0.0),  # x * sigmoid(alpha x): FuseActivation's SiLU
}
BINARY = {"Add": "dnnl_binary_add", "Sub": "dnnl_binary_sub", "Mul": "dnnl_binary_mul",
          "Div": "dnnl_binary_div", "Max": "dnnl_binary_max", "Min": "dnnl_binary_min"}
COMMUTATIVE = {"Add", "Mul", "Max", "Min"}
VIEWS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")


def _shape(graph: Graph, t: str) -> tuple[int, ...]:
    return graph.tensors[t].shape


def _first(*verdicts: Verdict | None) -> Verdict | None:
    """The first verdict given (a Reject is falsy, so `or` cannot chain them)."""
    return next((v for v in verdicts if v is not None), None)


def _float32(node: Node, graph: Graph, dtypes: tuple[str, ...] = ("float32",)) -> Verdict | None:
    """Every input and output float32 (or, where `dtypes` says so, of one of those types) and of
    a rank the runtime's tables hold."""
    for t in [*node.inputs, *node.outputs]:
        if t and graph.tensors[t].dtype not in dtypes:
            return Reject(f"dnnl takes {' or '.join(dtypes)} here ({t} is {graph.tensors[t].dtype})")
        if t and len(graph.tensors[t].shape) > MAX_RANK:
            return Reject(f"dnnl takes tensors of rank <= {MAX_RANK}")
    return None


def _same_dtype(node: Node, graph: Graph) -> Verdict | None:
    """float32, or int8 / uint8 with the output of the input's type (ops that move integers as they are)."""
    dtype = graph.tensors[node.inputs[0]].dtype
    if dtype in INT8:
        return _float32(node, graph, (dtype,))
    return _float32(node, graph)


def _const(graph: Graph, node: Node, idx: int, what: str) -> Verdict | None:
    if idx < len(node.inputs) and node.inputs[idx] and graph.const(node.inputs[idx]) is None:
        return Reject(f"dnnl needs the {what} to be a constant")
    return None


def check_conv(node: Node, graph: Graph) -> Verdict:
    """Conv -> convolution_forward: 1-D, 2-D or 3-D, constant weights and bias, any groups."""
    r = _first(_float32(node, graph), _const(graph, node, 1, "weights"), _const(graph, node, 2, "bias"))
    if r is not None:
        return r
    rank = len(_shape(graph, node.inputs[0]))
    if not 3 <= rank <= 5:
        return Reject(f"dnnl convolves 1-D to 3-D data (rank 3..5), not rank {rank}")
    if any(p < 0 for p in node.attrs["pads"]):
        return Reject("dnnl takes no negative pads")
    return ACCEPT


def _window_fits(node: Node, graph: Graph) -> Verdict | None:
    nd = len(node.attrs["kernel_shape"])
    for i in range(nd):
        extent = (node.attrs["kernel_shape"][i] - 1) * node.attrs["dilations"][i] + 1
        if max(node.attrs["pads"][i], node.attrs["pads"][i + nd]) >= extent:
            return Reject("dnnl pooling needs pads smaller than the window")
    return None


def check_pool(node: Node, graph: Graph) -> Verdict:
    """MaxPool/AveragePool -> pooling_forward (2-D and 3-D windows, 1-D too); MaxPool of int8 or
    uint8 too (the largest integer of each window: exact)."""
    if (r := (_same_dtype(node, graph) if node.op == "MaxPool" else _float32(node, graph))) is not None:
        return r
    rank = len(_shape(graph, node.inputs[0]))
    if not 3 <= rank <= 5:
        return Reject(f"dnnl pools rank 3..5 data, not rank {rank}")
    a = node.attrs
    if node.op == "AveragePool" and any(d != 1 for d in a["dilations"]):
        return Reject("dnnl's dilated average pooling is not checked against onnxruntime; host C takes it")
    if node.op == "AveragePool" and a["count_include_pad"] and a["ceil_mode"]:
        return Reject("AveragePool with count_include_pad and ceil_mode divides differently in oneDNN")
    return _first(_window_fits(node, graph), ACCEPT)


def check_global_pool(node: Node, graph: Graph) -> Verdict:
    if (r := _float32(node, graph)) is not None:
        return r
    rank = len(_shape(graph, node.inputs[0]))
    return ACCEPT if 3 <= rank <= 5 else Reject(f"dnnl pools rank 3..5 data, not rank {rank}")


def check_reduce_mean(node: Node, graph: Graph) -> Verdict:
    """ReduceMean over every spatial axis (squeeze-excite's) -> average pooling over the whole
    image, as GlobalAveragePool: it stays inside the region, in the layout its producer chose."""
    if (r := _float32(node, graph)) is not None:
        return r
    rank = len(_shape(graph, node.inputs[0]))
    if not 3 <= rank <= 5:
        return Reject(f"dnnl averages rank 3..5 data over its spatial axes, not rank {rank}")
    if list(node.attrs["axes"]) != list(range(2, rank)):
        return Reject("dnnl takes ReduceMean over all spatial axes (2..rank-1) only")
    return ACCEPT


def check_gemm(node: Node, graph: Graph) -> Verdict:
    """Gemm -> matmul with B (and C) folded at compile time into [K, N] weights and a bias row."""
    r = _first(_float32(node, graph), _const(graph, node, 1, "B matrix"), _const(graph, node, 2, "C bias"))
    if r is not None:
        return r
    if node.attrs.get("transA", 0):
        return Reject("dnnl Gemm needs transA=0")
    m, n = _shape(graph, node.outputs[0])
    if len(node.inputs) > 2 and node.inputs[2]:
        c = _shape(graph, node.inputs[2])
        if c not in ((), (1,), (n,), (1, n), (m, n)):
            return Reject(f"dnnl cannot take Gemm bias of shape {list(c)}")
    return ACCEPT


def check_matmul(node: Node, graph: Graph) -> Verdict:
    """MatMul with constant 2-D B -> matmul over x viewed as [M, K]."""
    if (r := _first(_float32(node, graph), _const(graph, node, 1, "B matrix"))) is not None:
        return r
    if len(_shape(graph, node.inputs[1])) != 2 or len(_shape(graph, node.inputs[0])) < 2:
        return Reject("dnnl MatMul needs A of rank >= 2 and a 2-D B")
    return ACCEPT


def check_batchnorm(node: Node, graph: Graph) -> Verdict:
    """BatchNormalization (inference) -> batch_normalization_forward with global statistics."""
    if (r := _float32(node, graph)) is not None:
        return r
    for k, what in enumerate(("scale", "bias", "mean", "variance"), start=1):
        if (r := _const(graph, node, k, what)) is not None:
            return r
    rank = len(_shape(graph, node.inputs[0]))
    return ACCEPT if 2 <= rank <= 5 else Reject(f"dnnl normalises rank 2..5 data, not rank {rank}")


def check_lrn(node: Node, graph: Graph) -> Verdict:
    """LRN -> lrn_forward across channels; oneDNN centres an even window differently from ONNX."""
    if (r := _float32(node, graph)) is not None:
        return r
    if len(_shape(graph, node.inputs[0])) != 4:
        return Reject("dnnl LRN takes 4-D data")
    if node.attrs["size"] % 2 == 0:
        return Reject("dnnl LRN needs an odd size (oneDNN places an even window differently from ONNX)")
    return ACCEPT


def check_softmax(node: Node, graph: Graph) -> Verdict:
    return _first(_float32(node, graph), ACCEPT)


def check_eltwise(node: Node, graph: Graph) -> Verdict:
    return _first(_float32(node, graph), ACCEPT)


def binary_operands(node: Node, graph: Graph) -> tuple[str, str] | None:
    """(src0, src1) for oneDNN's binary, where src0 has the output's shape and src1 broadcasts
    to it (dims equal or 1); None when neither order works. QLinearAdd's operands are its
    inputs 0 and 3."""
    y = _shape(graph, node.outputs[0])
    a, b = (node.inputs[0], node.inputs[3]) if node.op == "QLinearAdd" else node.inputs[:2]
    orders = [(a, b), (b, a)] if node.op in (*COMMUTATIVE, "QLinearAdd") else [(a, b)]
    for s0, s1 in orders:
        shape0, shape1 = _shape(graph, s0), _shape(graph, s1)
        if shape0 != y or len(shape1) > len(y):
            continue
        padded = (1,) * (len(y) - len(shape1)) + shape1
        if all(d in (1, n) for d, n in zip(padded, y, strict=True)):
            return s0, s1
    return None


def check_binary(node: Node, graph: Graph) -> Verdict:
    if (r := _float32(node, graph)) is not None:
        return r
    if binary_operands(node, graph) is None:
        return Reject("dnnl binary ops broadcast the second operand only")
    return ACCEPT


def check_concat(node: Node, graph: Graph) -> Verdict:
    if (r := _float32(node, graph)) is not None:
        return r
    if len(node.inputs) > MAX_CONCAT_INPUTS:
        return Reject(f"dnnl concatenates at most {MAX_CONCAT_INPUTS} inputs")
    if any(graph.tensors[i].size == 0 for i in node.inputs):
        return Reject("dnnl cannot concatenate empty tensors")
    return ACCEPT


def check_view(node: Node, graph: Graph) -> Verdict:
    """Reshape-like ops: no data moves (a new descriptor over the same bytes); float32 or 8-bit."""
    return _first(_same_dtype(node, graph), ACCEPT)


def check_qconv(node: Node, graph: Graph) -> Verdict:
    """QLinearConv -> an int8 convolution (1-D to 3-D, groups, depthwise) with oneDNN's zero points
    and the requantisation as post-ops (quant.py)."""
    if (reason := why_not(node, graph)) is not None:
        return Reject(reason)
    rank = len(_shape(graph, node.inputs[0]))
    if not 3 <= rank <= 5:
        return Reject(f"dnnl convolves 1-D to 3-D data (rank 3..5), not rank {rank}")
    if any(p < 0 for p in node.attrs["pads"]):
        return Reject("dnnl takes no negative pads")
    return _int8_here()


def _int8_here() -> Verdict:
    """int8 ops go to oneDNN only on a CPU where its int8 kernels are exact (probe.int8_exact)."""
    reason = int8_exact()
    return ACCEPT if reason is None else Reject(reason)


def check_qadd(node: Node, graph: Graph) -> Verdict:
    """QLinearAdd -> binary add of the integers with oneDNN's source scales and a linear post-op
    (onnxruntime's QLinearAdd arithmetic: quant.qadd)."""
    a, b, y = (graph.tensors[t].dtype for t in (node.inputs[0], node.inputs[3], node.outputs[0]))
    if not {a, b, y} <= set(INT8):
        return Reject(f"dnnl's QLinearAdd takes int8 and uint8 ({a} + {b} -> {y})")
    if any(graph.tensors[node.inputs[k]].size != 1 for k in (1, 2, 4, 5, 6, 7)):
        return Reject("dnnl's QLinearAdd takes per-tensor scales and zero points")
    if len(_shape(graph, node.outputs[0])) > MAX_RANK:
        return Reject(f"dnnl takes tensors of rank <= {MAX_RANK}")
    if binary_operands(node, graph) is None:
        return Reject("dnnl binary ops broadcast the second operand only")
    return ACCEPT


def check_qgemm(node: Node, graph: Graph) -> Verdict:
    """QGemm / QLinearMatMul with a constant 2-D B -> an int8 matmul over A viewed as [M, K]."""
    names = gemm_inputs(node)
    if node.op == "QGemm":
        if node.attrs.get("transA", 0):
            return Reject("dnnl QGemm needs transA=0")
        if node.attrs.get("alpha", 1.0) != 1.0:
            return Reject("dnnl QGemm needs alpha=1")
        if not names["y_scale"]:
            return Reject("dnnl QGemm needs an 8-bit output (a y_scale)")
    if len(_shape(graph, names["b"])) != 2 or len(_shape(graph, names["a"])) < 2:
        return Reject("dnnl needs A of rank >= 2 and a 2-D B")
    if len(_shape(graph, names["a"])) > MAX_RANK:
        return Reject(f"dnnl takes tensors of rank <= {MAX_RANK}")
    if (reason := why_not(node, graph)) is not None:
        return Reject(reason)
    return _int8_here()


def is_bias_for(graph: Graph, bias: str, channels: int, rank: int) -> bool:
    """A constant that adds one value per channel (axis 1) of a rank-`rank` tensor."""
    value = graph.const(bias)
    if value is None or value.size != channels or value.ndim > rank:
        return False
    padded = (1,) * (rank - value.ndim) + tuple(value.shape)
    return all(d == (channels if k == 1 else 1) for k, d in enumerate(padded))


CHECKERS = {
    "Conv": check_conv,
    "MaxPool": check_pool, "AveragePool": check_pool, "GlobalAveragePool": check_global_pool,
    "GlobalMaxPool": check_global_pool, "ReduceMean": check_reduce_mean,
    "Gemm": check_gemm, "MatMul": check_matmul,
    "BatchNormalization": check_batchnorm, "LRN": check_lrn,
    "Softmax": check_softmax, "LogSoftmax": check_softmax,
    "Concat": check_concat,
    **{op: check_binary for op in BINARY},
    **{op: check_eltwise for op in ELTWISE},
    **{op: check_view for op in VIEWS},
    "QLinearConv": check_qconv, "QGemm": check_qgemm, "QLinearMatMul": check_qgemm, "QLinearAdd": check_qadd,
}
