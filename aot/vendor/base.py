"""The bring-your-own-codegen interface: what a vendor declares and what its codegen returns.

A vendor is one object (usually a module-level `VENDOR = Vendor(...)` in its own
package) found by name through the `aotc.vendors` entry-point group. It says
which ONNX ops it takes (checkers), which multi-node patterns it wants as one
unit (composites), optionally rewrites its functions (transform), and turns each
partitioned function into C (codegen). The core never names a vendor or its ops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aot.ir import Function, Graph, Node
from aot.partition.pattern import Composite


@dataclass(frozen=True)
class Verdict:
    """A checker's answer; the reason of a refusal shows in `aotc partition --show --explain`."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


ACCEPT = Verdict(True)


def Reject(reason: str) -> Verdict:  # noqa: N802 - reads like a constructor, as Verdict's twin
    return Verdict(False, reason)


Checker = Callable[[Node, Graph], "bool | Verdict"]


@dataclass
class Artifact:
    """What codegen returns for one function: C files, and what the bundle must do with them.

    The function's C signature is fixed (DESIGN.md: DLTensor at every boundary):

        int32_t <symbol>(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace);
        int32_t <symbol>_init(void);   /* only when has_init */

    inputs/outputs are in the order of Function.graph.inputs/outputs; workspace points at
    `workspace_bytes` of planned arena memory (NULL when 0). A non-zero return is an error code
    that <model>_run returns to its caller.
    """

    files: dict[str, str | bytes] = field(default_factory=dict)  # paths relative to bundle/vendor/<name>/
    sources: list[str] = field(default_factory=list)  # which of `files` the library compiles
    header: str = ""  # one of `files`: declares the function(s); included by the model's C
    cmake: str = ""  # CMake lines for the library target `${AOTC_TARGET}` (find_package, link, defines)
    workspace_bytes: int = 0
    has_init: bool = False
    report: dict[str, Any] = field(default_factory=dict)  # per-function facts for metadata.json
    # Counters of the last run the runner prints after it (e.g. a simulator's cycles): name ->
    # a C function `uint64_t f(void)` among the vendor's sources.
    counters: dict[str, str] = field(default_factory=dict)


@dataclass
class CodegenContext:
    """What codegen may know beyond the function itself."""

    model_name: str
    target: str
    vendor_dir: str  # bundle-relative folder of this vendor's files, e.g. "vendor/cref"


@dataclass
class Vendor:
    name: str
    checkers: dict[str, Checker] = field(default_factory=dict)  # ONNX op -> (node, graph) -> bool | Verdict
    patterns: tuple[Composite, ...] = ()  # tried in order: list longer chains before their prefixes
    codegen: Callable[[Function, CodegenContext], Artifact] | None = None
    transform: Callable[[Function], Function] | None = None
    keep_region: Callable[[Function], bool] | None = None  # False sends a region back to the host
    description: str = ""

    def check(self, node: Node, graph: Graph) -> Verdict:
        checker = self.checkers.get(node.op)
        if checker is None:
            return Reject(f"{self.name} does not take {node.op}")
        verdict = checker(node, graph)
        if isinstance(verdict, Verdict):
            return verdict
        return ACCEPT if verdict else Reject(f"{self.name}'s {node.op} checker refused it")
