"""dnnl: Intel oneDNN through its C API, for the compute-heavy parts of a model on x86 (docs/dnnl.md).

Checkers and composites decide what oneDNN takes (convolutions with fused bias, residual sum and
activation; dense layers; pooling; normalisation; softmax; elementwise; concat; reshapes as
views; int8 convolutions, dense layers and residual adds with oneDNN's zero points and
requantising post-ops, quant.py); codegen emits each region as tables that runtime_c/vendor/dnnl/
turns into primitives once, at init. Needs oneDNN 3.x: `pip install aotc[dnnl]`.
"""

import platform
from collections.abc import Sequence

from aot.ir import Graph, Node
from aot.targets import Target
from aot.vendor.base import Vendor
from aot.vendor.dnnl.checkers import CHECKERS, ELTWISE, VIEWS
from aot.vendor.dnnl.codegen import codegen
from aot.vendor.dnnl.patterns import PATTERNS

_LIGHT = {*ELTWISE, *VIEWS}  # ops not worth a call into oneDNN on their own


def keep_region(nodes: Sequence[Node], graph: Graph) -> bool:
    """A region of only views and unary elementwise ops goes back to the host: the call and its
    boundary reorders would cost more than host C's loop (TVM's prune_dnnl_subgraphs)."""
    return any(n.op not in _LIGHT for n in nodes)


def target_reason(target: Target) -> str | None:
    """oneDNN is linked from this machine's pip package: there is none to link for a cross target."""
    if target.kind != "host":
        return ("oneDNN links against this machine's pip package (the aotc[dnnl] extra), and there is no oneDNN "
                "build for a cross target; compile for --target host, or offload with another vendor")
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"aotc's dnnl vendor is for x86-64 hosts, this one is {platform.machine()}"
    return None


VENDOR = Vendor(
    name="dnnl",
    checkers=CHECKERS,
    patterns=PATTERNS,
    codegen=codegen,
    keep_region=keep_region,
    target_reason=target_reason,
    description="Intel oneDNN 3.x (x86): convolutions, dense layers, pooling, normalisation, softmax; int8 too",
)
