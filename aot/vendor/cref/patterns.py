"""cref's composites, longest first: a Gemm or MatMul with its bias and ReLU fused into one call."""

from __future__ import annotations

from aot.ir import Graph, Node
from aot.partition.pattern import Composite, Const, Opt, P, X
from aot.vendor.cref.checkers import check_gemm


def _bias_is_a_row(nodes: list[Node], graph: Graph) -> bool:
    """The Add after MatMul must add a [N] (or [1, N]) bias, which the gemm fuses."""
    adds = [n for n in nodes if n.op == "Add"]
    if not adds:
        return True
    mm = next(n for n in nodes if n.op == "MatMul")
    bias = next(i for i in adds[0].inputs if i != mm.outputs[0])
    n = graph.tensors[mm.outputs[0]].shape[-1]
    return graph.tensors[bias].shape in ((n,), (1, n))


_matmul_bias = Opt(P("Add", P("MatMul", X, Const(), check=check_gemm), Const(), commutative=True),
                   P("Gemm", check=check_gemm))

PATTERNS = (
    Composite("cref.dense_relu", P("Relu", _matmul_bias), check=_bias_is_a_row),  # Relu(x @ W + b), Relu(Gemm)
    Composite("cref.dense", P("Add", P("MatMul", X, Const(), check=check_gemm), Const(), commutative=True),
              check=_bias_is_a_row),
)
