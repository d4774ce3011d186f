"""mynpu's composites, longest first: a conv with what its epilogue does as it writes each output.

    Conv -> Add(residual) -> Relu     mynpu.conv_add_relu   (ResNet's block end)
    Conv -> Add(residual)             mynpu.conv_add
    Conv -> Relu                      mynpu.conv_relu

The residual is any computed tensor of the conv's output shape; mynpu's transform (transform.py,
pass mynpu.fuse_residual) turns each composite into one mynpu.Conv node that reads it.
"""

from __future__ import annotations

from aot.ir import Graph, Node
from aot.partition.pattern import Composite, P, X
from aot.vendor import Verdict
from aotc_mynpu.checkers import check_add, check_conv


def _conv_read_once(node: Node, graph: Graph) -> bool | Verdict:
    """A conv mynpu takes whose output only the next node of the chain reads. Checked while matching, so a
    commutative Add whose first operand is a conv read elsewhere too tries its second operand."""
    reads = sum(node.outputs[0] in n.inputs for n in graph.nodes)
    return reads == 1 and node.outputs[0] not in graph.outputs and check_conv(node, graph)


_conv = P("Conv", check=_conv_read_once)
_residual = P("Add", _conv, X, commutative=True, check=check_add)

PATTERNS = (
    Composite("mynpu.conv_add_relu", P("Relu", _residual)),
    Composite("mynpu.conv_add", _residual),
    Composite("mynpu.conv_relu", P("Relu", _conv)),
)
