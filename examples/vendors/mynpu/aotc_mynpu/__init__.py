"""mynpu: a complete third-party aotc vendor, its own pip package (docs/vendor-guide.md is written around it).

mynpu is an imaginary NPU: float32, activations channels last (NHWC), a conv unit for 3x3 and 1x1 kernels
(stride 1 or 2, group 1 or depthwise) whose epilogue adds a residual and rectifies, an adder, and an int8
store of activations (its own op, com.mynpu.Requant). Its device library is C in device/. Every hook of
aot.vendor.Vendor is used, each for a reason:

    checkers        checkers.py     Conv, Relu, Add, each refusal with its reason
    patterns        patterns.py     conv + residual Add (+ Relu), conv + Relu
    graph_passes    graph_passes.py a Gemm becomes a 1x1 conv before partitioning (mynpu has no dense unit)
    ops             ops.py          com.mynpu.Requant, which only mynpu runs
    keep_region     here            a region without a conv is not worth a call (one of mynpu's ops stays)
    boundary_layout here            "NHWC": aotc transposes on the host side, the transform folds the rest
    transform       transform.py    fuse the residual into the conv, NHWC inside, weights blocked OIHW<B>o
    codegen         codegen.py      C calls into device/, workspace planned by aotc, state = device handle
    options         here            block = 4 | 8 (and graph_passes = on | off, which aotc adds)
    target_reason   here            mynpu sits on three boards only, one of them its own
and it registers its own board (board.py, entry-point group aotc.targets).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from aot.ir import Graph, Node
from aot.vendor import Vendor, VendorOption
from aotc_mynpu.checkers import CHECKERS
from aotc_mynpu.codegen import codegen
from aotc_mynpu.graph_passes import GRAPH_PASSES
from aotc_mynpu.ops import OPS
from aotc_mynpu.patterns import PATTERNS
from aotc_mynpu.transform import transform

if TYPE_CHECKING:
    from aot.targets import Target

# The Cortex-M boards mynpu is attached to (its own devkit, board.py, and two of Arm's FPGA boards); the host and
# Linux targets run its device library as C.
BOARDS = ("mynpu-devkit", "mps2-an386", "mps3-an547")


def keep_region(nodes: Sequence[Node], graph: Graph) -> bool:
    """A call costs a DLTensor boundary and a transpose to NHWC and back on the host's side: worth it for a
    conv, not for a lone Relu or Add. A region holding one of mynpu's own ops stays: the host cannot run it."""
    own = {op.ir_name for op in OPS}
    return any(n.op in ("Conv", "Composite") or n.op in own for n in nodes)


def target_reason(target: Target) -> str | None:
    """mynpu is on three Cortex-M boards; any other bare-metal target has none to run on."""
    if target.kind == "bare-metal" and target.name not in BOARDS:
        return f"mynpu is attached to the {', '.join(BOARDS)} boards only"
    return None


VENDOR = Vendor(
    name="mynpu",
    description="example NPU vendor (examples/vendors/mynpu): NHWC float32 convs, residuals, com.mynpu ops",
    checkers=CHECKERS,
    patterns=PATTERNS,
    graph_passes=GRAPH_PASSES,
    ops=OPS,
    keep_region=keep_region,
    boundary_layout="NHWC",
    transform=transform,
    codegen=codegen,
    options={"block": VendorOption(("4", "8"), "output channels per weight block: OIHW4o or OIHW8o")},
    target_reason=target_reason,
)
