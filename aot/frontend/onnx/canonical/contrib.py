"""The float com.microsoft ops onnxruntime's transformer optimizer writes (aot/frontend/onnx/contrib.py
lets them in): each rewritten onto ONNX ops aotc compiles, in their canonical forms, computing what
onnxruntime's CPU kernels compute. Gelu needs no rule: com.microsoft's Gelu is ONNX Gelu (the erf form)."""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import Builder, Rule, shape_of
from aot.frontend.onnx.canonical.contrib_attention import (
    attention,
    embed_layer_norm,
    multi_head_attention,
    q_attention,
    q_embed_layer_norm,
    rotary_embedding,
)
from aot.frontend.onnx.canonical.norm import layer_norm
from aot.ir import Graph, Node


def _float32(node: Node, graph: Graph) -> None:
    for name in node.inputs:
        if name and graph.tensors[name].dtype != "float32":
            raise AotcError(f"{node.op} of {graph.tensors[name].dtype} is not supported (float32 only)", node=node)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b, strict=True))


def fast_gelu(node: Node, graph: Graph, opset: int) -> list[Node]:
    """FastGelu(X, bias?) -> Gelu(X + bias) of the tanh approximation, the formula onnxruntime's kernel uses."""
    _float32(node, graph)
    b, x = Builder(node, graph), node.inputs[0]
    if len(node.inputs) > 1 and node.inputs[1]:
        x = b.add("Add", [x, node.inputs[1]], _broadcast(shape_of(graph, x), shape_of(graph, node.inputs[1])))
    b.add("Gelu", [x], None, {"approximate": "tanh"}, out=node.outputs[0])
    return b.nodes


def bias_gelu(node: Node, graph: Graph, opset: int) -> list[Node]:
    """BiasGelu(A, B) -> Gelu(A + B), the erf form."""
    _float32(node, graph)
    b = Builder(node, graph)
    s = b.add("Add", node.inputs[:2], _broadcast(shape_of(graph, node.inputs[0]), shape_of(graph, node.inputs[1])))
    b.add("Gelu", [s], None, {"approximate": "none"}, out=node.outputs[0])
    return b.nodes


def quick_gelu(node: Node, graph: Graph, opset: int) -> list[Node]:
    """QuickGelu(X) -> X * Sigmoid(alpha * X), alpha 1.702 by default."""
    _float32(node, graph)
    b, x = Builder(node, graph), node.inputs[0]
    shape = shape_of(graph, x)
    alpha = float(node.attrs.get("alpha", 1.702))
    scaled = x if alpha == 1.0 else b.add("Mul", [x, b.tensor((), np.array(alpha, np.float32))], shape)
    b.add("Mul", [x, b.add("Sigmoid", [scaled], shape)], None, out=node.outputs[0])
    return b.nodes


def bias_add(node: Node, graph: Graph, opset: int) -> list[Node]:
    """BiasAdd(X, bias, skip) -> (X + bias) + skip."""
    _float32(node, graph)
    b = Builder(node, graph)
    x, bias, skip = node.inputs[:3]
    s = b.add("Add", [x, bias], _broadcast(shape_of(graph, x), shape_of(graph, bias)))
    b.add("Add", [s, skip], None, out=node.outputs[0])
    return b.nodes


def fused_matmul(node: Node, graph: Graph, opset: int) -> list[Node]:
    """FusedMatMul(A, B) -> alpha * MatMul(A or its last two dims swapped, B likewise). transBatchA /
    transBatchB (the batch dims moved) are refused."""
    _float32(node, graph)
    for name in ("transBatchA", "transBatchB"):
        if int(node.attrs.get(name, 0)):
            raise AotcError(f"FusedMatMul {name}=1 is not supported", node=node)
    b = Builder(node, graph)
    ins = []
    for k, flag in ((0, "transA"), (1, "transB")):
        name, shape = node.inputs[k], shape_of(graph, node.inputs[k])
        if int(node.attrs.get(flag, 0)) and len(shape) >= 2:
            perm = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
            name = b.add("Transpose", [name], tuple(shape[p] for p in perm), {"perm": perm})
        ins.append(name)
    alpha = float(node.attrs.get("alpha", 1.0))
    if alpha == 1.0:
        b.add("MatMul", ins, None, out=node.outputs[0])
        return b.nodes
    prod = b.add("MatMul", ins, shape_of(graph, node.outputs[0]))
    b.add("Mul", [prod, b.tensor((), np.array(alpha, np.float32))], None, out=node.outputs[0])
    return b.nodes


def skip_layer_norm(node: Node, graph: Graph, opset: int) -> list[Node]:
    """SkipLayerNormalization(input, skip, gamma, beta?, bias?) -> LayerNormalization over the last axis
    of input + skip (+ bias), that sum being the optional fourth output; SkipSimplifiedLayerNormalization
    (input, skip, gamma, bias?) the same with RMSNormalization (no mean taken, no beta). The mean and
    inv_std_var outputs, when read, as onnxruntime's kernel computes them from the sum's moments: the mean,
    and 1 / sqrt(E[x^2] - mean^2 + epsilon) (E[x^2] alone for the simplified op, whose mean is not given)."""
    _float32(node, graph)
    simplified = node.op == "SkipSimplifiedLayerNormalization"
    read = set(graph.consumers()) | set(graph.outputs)
    if simplified and len(node.outputs) > 1 and node.outputs[1] in read:
        raise AotcError(f"{node.op}'s output mean is not supported (onnxruntime does not compute it)", node=node)
    ins = list(node.inputs) + [""] * (5 - len(node.inputs))
    x, skip, gamma, beta, bias = ins[:5]
    if simplified:
        beta, bias = "", ins[3]
    shape = shape_of(graph, x)
    b = Builder(node, graph)
    sum_out = node.outputs[3] if len(node.outputs) > 3 and node.outputs[3] in read else None
    s = b.add("Add", [x, skip], shape, out=None if bias else sum_out)
    if bias:
        s = b.add("Add", [s, bias], shape, out=sum_out)
    b.nodes[-1].name = f"{node.name}__sum"  # the node's own name is the LayerNormalization's
    norm = Node("RMSNormalization" if simplified else "LayerNormalization", node.name,
                [s, gamma] + ([beta] if beta else []), [node.outputs[0]],
                {"axis": -1, "epsilon": float(node.attrs.get("epsilon", 1e-12))}, node.sources())
    layer_norm(norm, graph, opset)
    b.nodes.append(norm)
    stats = [node.outputs[k] if len(node.outputs) > k and node.outputs[k] in read else None for k in (1, 2)]
    if any(stats):
        _moments(b, s, shape, float(norm.attrs["epsilon"]), simplified, *stats)
    return b.nodes


def _moments(b: Builder, s: str, shape: tuple[int, ...], epsilon: float, simplified: bool, mean_out: str | None,
             inv_out: str | None) -> None:
    """SkipLayerNormalization's mean and inv_std_var of the rows of s (the last axis): onnxruntime's one-pass
    moments, E[x] and 1 / sqrt(E[x^2] - E[x]^2 + epsilon) (without the E[x]^2 when simplified)."""
    row = (*shape[:-1], 1)
    reduce = {"axes": [len(shape) - 1], "keepdims": 1}
    square = b.add("ReduceMean", [b.add("Mul", [s, s], shape)], row, reduce)
    if not simplified:
        mean = b.add("ReduceMean", [s], row, reduce, out=mean_out)
        if mean_out:
            b.nodes[-1].name = f"{b.node.name}__mean"
        square = b.add("Sub", [square, b.add("Mul", [mean, mean], row)], row)
    if inv_out:
        root = b.add("Sqrt", [b.add("Add", [square, b.tensor((), np.array(epsilon, np.float32))], row)], row)
        b.add("Div", [b.tensor((), np.array(1.0, np.float32)), root], row, out=inv_out)
        b.nodes[-1].name = f"{b.node.name}__inv_std_var"


def simplified_layer_norm(node: Node, graph: Graph, opset: int) -> list[Node]:
    """SimplifiedLayerNormalization(X, scale) -> RMSNormalization (ONNX's since opset 23: X over the root
    of the mean of its squares plus epsilon, times scale), the same attributes. inv_std_var is refused
    when read."""
    _float32(node, graph)
    if len(node.outputs) > 1 and node.outputs[1] in (set(graph.consumers()) | set(graph.outputs)):
        raise AotcError("SimplifiedLayerNormalization's output inv_std_var is not supported", node=node)
    norm = Node("RMSNormalization", node.name, node.inputs[:2], [node.outputs[0]],
                {"axis": int(node.attrs.get("axis", -1)), "epsilon": float(node.attrs.get("epsilon", 1e-5)),
                 "stash_type": int(node.attrs.get("stash_type", 1))}, node.sources())
    layer_norm(norm, graph, opset)
    return [norm]


def _integer_to_float(b: Builder, node: Node, graph: Graph, a: str, a_zero: str, a_scale: str, b_ins: list[str],
                      bias: str) -> list[Node]:
    """MatMulInteger(A, B, a_zero, b_zero) as float times (a_scale * b_scale), plus bias: onnxruntime's
    order (its multiplier is a_scale * b_scale in float, applied to each int32 sum, then the bias added)."""
    b_mat, b_scale, b_zero = b_ins
    shape = shape_of(graph, node.outputs[0])
    ins = [a, b_mat, a_zero, b_zero]
    while not ins[-1]:
        ins.pop()
    acc = b.add("MatMulInteger", ins, shape, dtype="int32")
    as_float = b.add("Cast", [acc], shape, {"to": "float32", "saturate": 1})
    scale = b.add("Mul", [a_scale, b_scale], _broadcast(shape_of(graph, a_scale), shape_of(graph, b_scale)))
    out = node.outputs[0]
    y = b.add("Mul", [as_float, scale], shape, out=None if bias else out)
    if bias:
        b.add("Add", [y, bias], None, out=out)
    return b.nodes


def _optional(node: Node, k: int) -> str:
    return node.inputs[k] if len(node.inputs) > k else ""


def _check_scales(node: Node, graph: Graph, a_scale: str | None, b_scale: str) -> None:
    if a_scale is not None and graph.tensors[a_scale].size != 1:
        raise AotcError(f"{node.op}: a per-row a_scale is not supported (a scalar is)", node=node)
    n = shape_of(graph, node.inputs[1])[-1]
    if graph.tensors[b_scale].size not in (1, n) or len(shape_of(graph, b_scale)) > 1:
        raise AotcError(f"{node.op}: b_scale of shape {list(shape_of(graph, b_scale))} is not supported "
                        f"(a scalar, or one per column of B: [{n}])", node=node)


def dynamic_quantize_matmul(node: Node, graph: Graph, opset: int) -> list[Node]:
    """DynamicQuantizeMatMul(A, B, b_scale, b_zero?, bias?) -> DynamicQuantizeLinear(A) (uint8, its own
    range, as onnxruntime quantizes A) then MatMulIntegerToFloat's rewrite."""
    if graph.tensors[node.inputs[0]].dtype != "float32":
        raise AotcError(f"DynamicQuantizeMatMul of {graph.tensors[node.inputs[0]].dtype} is not supported", node=node)
    _check_scales(node, graph, None, node.inputs[2])
    b = Builder(node, graph)
    a_shape = shape_of(graph, node.inputs[0])
    aq, a_scale, a_zero = b.tensor(a_shape, dtype="uint8"), b.tensor(()), b.tensor((), dtype="uint8")
    b.nodes.append(Node("DynamicQuantizeLinear", f"{node.name}__quantize_a", [node.inputs[0]], [aq, a_scale, a_zero],
                        {}, node.sources()))
    return _integer_to_float(b, node, graph, aq, a_zero, a_scale,
                             [node.inputs[1], node.inputs[2], _optional(node, 3)], _optional(node, 4))


def matmul_integer_to_float(node: Node, graph: Graph, opset: int) -> list[Node]:
    """MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero?, b_zero?, bias?) -> MatMulInteger, Cast,
    Mul by a_scale * b_scale, Add bias."""
    _check_scales(node, graph, node.inputs[2], node.inputs[3])
    b = Builder(node, graph)
    return _integer_to_float(b, node, graph, node.inputs[0], _optional(node, 4), node.inputs[2],
                             [node.inputs[1], node.inputs[3], _optional(node, 5)], _optional(node, 6))


# the inputs each op requires (onnxruntime's schemas): fewer is refused before a rule reads them
_REQUIRED = {"com.microsoft.Attention": 2, "MultiHeadAttention": 1, "EmbedLayerNormalization": 1, "QAttention": 5,
             "QEmbedLayerNormalization": 1, "com.microsoft.RotaryEmbedding": 4,
             "FastGelu": 1, "BiasGelu": 2, "QuickGelu": 1, "BiasAdd": 3, "FusedMatMul": 2,
             "SkipLayerNormalization": 3, "DynamicQuantizeMatMul": 3, "MatMulIntegerToFloat": 4,
             "SimplifiedLayerNormalization": 2, "SkipSimplifiedLayerNormalization": 3}


def _checked(rule: Rule) -> Rule:
    def run(node: Node, graph: Graph, opset: int) -> list[Node] | None:
        need = _REQUIRED[node.op]
        if len(node.inputs) < need or not all(node.inputs[:need]):
            raise AotcError(f"{node.op} needs its first {need} inputs, has {sum(1 for i in node.inputs if i)}",
                            node=node)
        return rule(node, graph, opset)
    run.__doc__ = rule.__doc__
    return run


RULES: dict[str, Rule] = {
    "com.microsoft.Attention": attention,
    "MultiHeadAttention": multi_head_attention,
    "EmbedLayerNormalization": embed_layer_norm,
    "QAttention": q_attention,
    "QEmbedLayerNormalization": q_embed_layer_norm,
    "com.microsoft.RotaryEmbedding": rotary_embedding,
    "DynamicQuantizeMatMul": dynamic_quantize_matmul,
    "MatMulIntegerToFloat": matmul_integer_to_float,
    "FastGelu": fast_gelu,
    "BiasGelu": bias_gelu,
    "QuickGelu": quick_gelu,
    "BiasAdd": bias_add,
    "FusedMatMul": fused_matmul,
    "SkipLayerNormalization": skip_layer_norm,
    "SkipSimplifiedLayerNormalization": skip_layer_norm,
    "SimplifiedLayerNormalization": simplified_layer_norm,
}
RULES = {op: _checked(rule) for op, rule in RULES.items()}
