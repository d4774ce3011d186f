"""The losses as inference ops (issue 16): NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
(kernels in runtime_c/kernels/loss/loss.c). Training graphs export them, and their node tests (with the
'_expanded' function bodies, which use NegativeLogLikelihoodLoss too) are a sixth of the missing ops'
cases. SoftmaxCrossEntropyLoss computes its log-probabilities into its second output when the model
asks for it, into scratch when not.
"""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_int
from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext, fixed_scratch
from aot.kernels.shape import INT32_MAX

REDUCTIONS = {"none": "AOTC_LOSS_NONE", "sum": "AOTC_LOSS_SUM", "mean": "AOTC_LOSS_MEAN"}


def _reduction(node: Node) -> str:
    r = node.attrs.get("reduction", "mean")
    return r.decode() if isinstance(r, bytes) else r


def _emit(ctx: NodeContext) -> None:
    x, target = ctx.inputs[0], ctx.inputs[1]
    weight = ctx.inputs[2] if len(ctx.inputs) > 2 else ""
    shape = ctx.shape(x)
    ignore = ctx.attrs.get("ignore_index")
    p = ctx.params("aotc_loss_params", {
        "n": c_int(shape[0]), "c": c_int(shape[1]), "d": c_int(int(np.prod(shape[2:], dtype=np.int64))),
        "reduction": REDUCTIONS[_reduction(ctx.node)], "has_ignore": str(int(ignore is not None)),
        "ignore_index": c_int(ignore or 0),
    }, comment=f"{ctx.node.op} of {list(shape)}, reduction {_reduction(ctx.node)}, ignore_index {ignore}")
    sfx = f"{ctx.suffix(x)}_{ctx.suffix(target)}"
    y = ctx.ptr(ctx.outputs[0])
    if ctx.node.op == "NegativeLogLikelihoodLoss":
        ctx.call(f"aotc_nll_loss_{sfx}", p, ctx.ptr(x), ctx.ptr(target), ctx.ptr(weight), y)
        return
    log_prob = ctx.outputs[1] if len(ctx.outputs) > 1 and ctx.outputs[1] else ""
    lp = ctx.ptr(log_prob) if log_prob else ctx.scratch(ctx.ctype(x))
    ctx.call(f"aotc_softmax_cross_entropy_{sfx}", p, ctx.ptr(x), ctx.ptr(target), ctx.ptr(weight), y, lp)


def _scratch(node: Node, graph: Graph) -> int:
    """SoftmaxCrossEntropyLoss without its log_prob output keeps the log-probabilities in scratch."""
    if node.op != "SoftmaxCrossEntropyLoss" or (len(node.outputs) > 1 and node.outputs[1]):
        return 0
    return graph.tensors[node.inputs[0]].nbytes


def _check(node: Node, graph: Graph) -> str | None:
    x, target = graph.tensors[node.inputs[0]], graph.tensors[node.inputs[1]]
    if len(x.shape) < 2:
        return f"scores {list(x.shape)} need a class dimension"
    if target.dtype not in ("int64", "int32"):
        return f"targets of dtype {target.dtype} are not supported (int64, int32)"
    if len(node.inputs) > 2 and node.inputs[2] and graph.tensors[node.inputs[2]].dtype != x.dtype:
        return "weights of another dtype than the scores"
    if _reduction(node) not in REDUCTIONS:
        return f"reduction '{_reduction(node)}' is not one of {', '.join(REDUCTIONS)}"
    if x.size > INT32_MAX:
        return f"{x.size} scores (at most {INT32_MAX})"
    return None


def _loss() -> HostOp:
    return HostOp(_emit, family="loss", dtypes=("float32", "float64"), check=_check,
                  kernels=(fixed_scratch("", _scratch),))


OPS: dict[str, HostOp] = {
    "NegativeLogLikelihoodLoss": _loss(),
    "SoftmaxCrossEntropyLoss": _loss(),
}
