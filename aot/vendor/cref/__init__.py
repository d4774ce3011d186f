"""cref: the worked example of a vendor (docs/vendor-guide.md walks through it).

It takes elementwise ops and dense layers, fuses dense+bias+ReLU, and emits its
own C against its own small runtime (runtime_c/vendor/cref/), through the same
interface a third-party vendor uses.
"""

from collections.abc import Sequence

from aot.ir import Graph, Node
from aot.vendor.base import Vendor
from aot.vendor.cref.checkers import CHECKERS
from aot.vendor.cref.codegen import codegen
from aot.vendor.cref.patterns import PATTERNS


def keep_region(nodes: Sequence[Node], graph: Graph) -> bool:
    """A region with no dense layer is not worth a call across the DLTensor boundary: leave it to the host."""
    return any(n.op in ("Gemm", "MatMul", "Composite") for n in nodes)


VENDOR = Vendor(
    name="cref",
    checkers=CHECKERS,
    patterns=PATTERNS,
    codegen=codegen,
    keep_region=keep_region,
    description="reference C vendor: elementwise ops and dense layers (worked example)",
)
