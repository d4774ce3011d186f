"""accel_sim's composites, longest first: a MAC-array layer with the work its output stage
does for free (bias, a residual add on the vector unit, ReLU/Clip), or an add with its
activation; for 8-bit models, a QLinearConv with the QLinearAdd of a residual (the add done
on the requantised tile before it is stored). Fusion facts travel in the composite's body
(layers.layer_of reads them)."""

from __future__ import annotations

from aot.ir import Graph, Node
from aot.partition.pattern import Alt, Composite, Const, Opt, P, X
from aot.vendor.accel_sim.checkers import check_batchnorm, check_binary, check_conv, check_gemm, check_qadd, check_qconv
from aot.vendor.accel_sim.device import DeviceConfig


def _residual_matches(nodes: list[Node], graph: Graph) -> bool:
    """The tensor added to the convolution has the convolution's shape (no broadcast)."""
    conv = next(n for n in nodes if n.op == "Conv")
    add = next(n for n in nodes if n.op == "Add")
    other = next(i for i in add.inputs if i != conv.outputs[0])
    return graph.const(other) is None and graph.tensors[other].shape == graph.tensors[conv.outputs[0]].shape


def _bias_is_a_row(nodes: list[Node], graph: Graph) -> bool:
    """The Add after a MatMul adds a constant [N] or [1, N] bias."""
    mm = next(n for n in nodes if n.op == "MatMul")
    add = next(n for n in nodes if n.op == "Add")
    bias = next(i for i in add.inputs if i != mm.outputs[0])
    n = graph.tensors[mm.outputs[0]].shape[-1]
    return len(graph.tensors[mm.outputs[0]].shape) == 2 and graph.tensors[bias].shape in ((n,), (1, n))


def _qresidual_matches(nodes: list[Node], graph: Graph) -> bool:
    """The QLinearAdd adds the convolution's output to another tensor, of the same type."""
    conv = next(n for n in nodes if n.op == "QLinearConv")
    add = next(n for n in nodes if n.op == "QLinearAdd")
    a, b = add.inputs[0], add.inputs[3]
    other = b if a == conv.outputs[0] else a
    return a != b and graph.tensors[other].dtype == graph.tensors[conv.inputs[0]].dtype


def _used_once(node: Node, graph: Graph) -> bool:
    """The node's output feeds one node and is not a graph output (else a match through it fails,
    and an Alt would not try its other option)."""
    out = node.outputs[0]
    return out not in graph.outputs and sum(i == out for n in graph.nodes for i in n.inputs) == 1


def make_patterns(cfg: DeviceConfig) -> tuple[Composite, ...]:
    conv = P("Conv", check=check_conv(cfg))
    conv_res = P("Conv", check=check_conv(cfg, residual=True))
    gemm = check_gemm(cfg)
    matmul_bias = P("Add", P("MatMul", X, Const(), check=gemm), Const(), commutative=True)
    act = "Relu|Clip"
    qconv_check = check_qconv(cfg, residual=True)
    qconv_res = P("QLinearConv", check=lambda node, graph: _used_once(node, graph) and bool(qconv_check(node, graph)))
    qadd_of_conv = Alt(P("QLinearAdd", qconv_res, X, X, X, X, X, X, X, check=check_qadd),
                       P("QLinearAdd", X, X, X, qconv_res, X, X, X, X, check=check_qadd))
    return (
        Composite("accel_sim.qconv_add", qadd_of_conv, check=_qresidual_matches),
        Composite("accel_sim.conv_add_act", P(act, P("Add", conv_res, X, commutative=True)), check=_residual_matches),
        Composite("accel_sim.conv_add", P("Add", conv_res, X, commutative=True), check=_residual_matches),
        Composite("accel_sim.conv_act", P(act, conv)),
        Composite("accel_sim.dense_act", P(act, Opt(matmul_bias, P("Gemm", check=gemm))),
                  check=lambda nodes, g: all(n.op != "MatMul" for n in nodes) or _bias_is_a_row(nodes, g)),
        Composite("accel_sim.dense", matmul_bias, check=_bias_is_a_row),
        Composite("accel_sim.add_act", P(act, P("Add|Mul|Max", X, X, check=check_binary))),
        Composite("accel_sim.batchnorm_act", P(act, P("BatchNormalization", check=check_batchnorm(cfg)))),
    )
