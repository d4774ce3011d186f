"""accel_sim: a simulated accelerator with its own ISA, compiler and bare-metal runtime.

The device is specified in docs/accel_sim-isa.md. This package is its compiler: checkers and
patterns choose what it takes, lower.py turns each partitioned function into a program (a
binary the core never looks into), codegen.py wraps the program in C that calls the device
runtime (runtime_c/vendor/accel_sim/). `make_vendor(DeviceConfig(...))` targets another
configuration of the device (another scratchpad size, other cost parameters).
"""

from __future__ import annotations

from collections.abc import Sequence

from aot.ir import Graph, Node
from aot.vendor.accel_sim.checkers import HEAVY, make_checkers
from aot.vendor.accel_sim.codegen import make_codegen
from aot.vendor.accel_sim.device import DeviceConfig
from aot.vendor.accel_sim.isa import MAX_REGIONS
from aot.vendor.accel_sim.patterns import make_patterns
from aot.vendor.accel_sim.transform import OPTIONS, make_transform
from aot.vendor.base import Vendor


def boundary_tensors(nodes: Sequence[Node], graph: Graph) -> int:
    """How many tensors a region reads from or gives to the rest of the graph (its DLTensors)."""
    inside = {n.name for n in nodes}
    made = {o for n in nodes for o in n.outputs if o}
    ins = {i for n in nodes for i in n.inputs if i and i not in made and graph.const(i) is None}
    used_outside = {i for n in graph.nodes if n.name not in inside for i in n.inputs}
    return len(ins) + len({o for o in made if o in used_outside or o in graph.outputs})


def worth_offloading(nodes: Sequence[Node], graph: Graph) -> bool:
    """A region without a MAC-array or pooling layer would cost a device round trip for
    elementwise work the host does as fast: it stays on the host. So does a region with more
    inputs and outputs than the device has main-memory regions for (besides constants and scratch)."""
    heavy = any(n.op in HEAVY or (n.op == "Composite" and n.attrs["composite"].startswith(("accel_sim.conv",
                                                                                         "accel_sim.dense",
                                                                                         "accel_sim.qconv")))
                for n in nodes)
    return heavy and boundary_tensors(nodes, graph) <= MAX_REGIONS - 2


def make_vendor(config: DeviceConfig | None = None, name: str = "accel_sim") -> Vendor:
    config = config or DeviceConfig()
    return Vendor(name=name, checkers=make_checkers(config), patterns=make_patterns(config),
                  codegen=make_codegen(config), transform=make_transform(config), options=dict(OPTIONS),
                  keep_region=worth_offloading,
                  description=f"simulated NPU: {config.spm_bytes // 1024} KiB scratchpad, "
                              f"{config.mac_rows}x{config.mac_cols} fp32 MAC array "
                              f"({2 * config.mac_rows}x{2 * config.mac_cols} int8)")


VENDOR = make_vendor()

__all__ = ["VENDOR", "DeviceConfig", "make_vendor"]
