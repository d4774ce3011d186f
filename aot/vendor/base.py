"""The bring-your-own-codegen interface: what a vendor declares and what its codegen returns.

A vendor is one object (usually a module-level `VENDOR = Vendor(...)` in its own
package) found by name through the `aotc.vendors` entry-point group. It says
which ONNX ops it takes (checkers), which multi-node patterns it wants as one
unit (composites), optionally rewrites its functions (transform), and turns each
partitioned function into C (codegen). The core never names a vendor or its ops.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from aot.csource import format as cformat
from aot.csource.tap import c_tap
from aot.csource.weights import C_INCLUDES, WeightStore
from aot.errors import AotcError, in_vendor
from aot.ir import Function, Graph, Node, Tensor
from aot.ir.vendor_ops import VendorOp
from aot.partition.pattern import Composite
from aot.passes.base import Pass
from aot.paths import runtime_dir
from aot.plan.workspace import WorkspacePlan, plan_workspace

if TYPE_CHECKING:
    from aot.partition.layout import Layout
    from aot.targets import Target


@dataclass(frozen=True)
class Verdict:
    """A checker's answer; the reason of a refusal shows in `aotc partition --show --explain`."""

    ok: bool  # whether the vendor takes the node
    reason: str = ""  # why not, in a few words ("mine takes float32 only")

    def __bool__(self) -> bool:
        return self.ok


# A checker's yes.
ACCEPT = Verdict(True)


def Reject(reason: str) -> Verdict:  # noqa: N802 - reads like a constructor, as Verdict's twin
    """A checker's no, saying why: `return Reject("mine takes float32 only")`."""
    return Verdict(False, reason)


# Vendor.checkers' values: (node, the graph it is in) -> whether the vendor takes the node. It may read the
# node's canonical attrs and any tensor's shape, dtype and constant value; it must not change either.
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
    workspace_bytes: int = 0  # the scratch memory the function needs (CodegenContext.plan_workspace's nbytes)
    has_init: bool = False  # `<symbol>_init` exists: `<model>_init` calls it (non-zero fails the init)
    # per-function facts for metadata.json; "simulated": True says the function runs in a simulator on
    # the host, so `aotc bench` and `aotc run --repeat` tell the reader their time is not the device's
    report: dict[str, Any] = field(default_factory=dict)
    # Counters of the last run the runner prints after it (e.g. a simulator's cycles): name ->
    # a C function `uint64_t f(void)` among the vendor's sources.
    counters: dict[str, str] = field(default_factory=dict)
    # The tensors inside the function that codegen exposed with CodegenContext.tap (filled by aotc:
    # node, op, onnx_nodes, tensor), for metadata.json and `aotc compare`.
    taps: list[dict[str, Any]] = field(default_factory=list)
    # The call's inputs and outputs laid inside the workspace (filled by aotc from the one plan_workspace the
    # codegen made, when its nbytes is workspace_bytes): tensor -> offset. The host then places the workspace
    # and those tensors as one block, each tensor live only where it is, as in its arena.
    workspace_boundary: dict[str, int] = field(default_factory=dict)
    # The bytes of constant data the function's files store (metadata.json's memory.weights_bytes, which a
    # board's flash check reads). None: aotc counts them, as what the codegen context's weight store holds when
    # codegen used it, else the constants the function's nodes read.
    weights_bytes: int | None = None
    # Persistent bytes of this function's own per model instance (pre-packed weights, a device handle, a
    # recurrent state): reserved in the arena for it alone, kept from <model>_init through every run (TFLM's
    # persistent arena). When > 0 the function's signatures take it:
    #     int32_t <symbol>(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace, void *state);
    #     int32_t <symbol>_init(void *state);   /* always, called by <model>_init */
    state_bytes: int = 0
    # The global symbols `sources` define besides the function's own (<symbol>, <symbol>_*, which carry the
    # model's name already): a runtime the vendor's functions share under fixed names, e.g. accel_sim.c's entry
    # points (runtime_symbols() gives those of a file under runtime_c/vendor/). The bundle renames each to
    # aotc_<hash8>_<name> in its objects, as it does its kernels' (runtime/aotc_symbols.h, which dltensor.h
    # includes first), so that several bundles link into one program; hash8 keys the kernel configuration,
    # which then includes these names and the content of `runtime` (emit_c/runtime_files.py SymbolConfig).
    symbols: list[str] = field(default_factory=list)
    # Which of `files` are that runtime (the same for every model): their content keys the prefix of `symbols`,
    # so that bundles of one vendor runtime share one copy of it. Empty: every file of `files` keys it (safe,
    # but then each model's bundle has names of its own). The built-in vendors need none: their runtimes are
    # aotc's runtime C (runtime_c/vendor/), which keys every bundle's prefix, and every bundle's aotc_symbols.h
    # renames their symbols already.
    runtime: list[str] = field(default_factory=list)


VENDOR_SYMBOLS_FILE = "symbols.json"  # in runtime_c/vendor/: {"<vendor>/<file>.c": {"defines": [...]}}


@functools.cache
def vendor_symbols_table() -> dict[str, dict[str, list[str]]]:
    """runtime_c/vendor/symbols.json: the global symbols each built-in vendor's runtime file defines."""
    return json.loads((runtime_dir() / "vendor" / VENDOR_SYMBOLS_FILE).read_text())


def runtime_symbols(path: str) -> list[str]:
    """The global symbols (functions and data) that runtime_c/vendor/`path` (e.g. "cref/cref.c") defines, as
    runtime_c/vendor/symbols.json records them from its object (tests/kernels_c/test_runtime_symbols.py keeps
    it current): what a built-in vendor's Artifact.symbols lists for the runtime file it ships."""
    try:
        return list(vendor_symbols_table()[path]["defines"])
    except KeyError:
        raise AotcError(f"runtime_c/vendor/{VENDOR_SYMBOLS_FILE} has no entry for {path}: run pytest "
                        "tests/kernels_c/test_runtime_symbols.py --update-symbols") from None


@dataclass
class CodegenContext:
    """What codegen may know beyond the function itself, and what every vendor shares with the
    host generator, so that no vendor reaches into aotc's internals:

    - `format`: the C text helpers (aot/csource/format.py): `c_float` (exact hex floats),
      `c_array_body`, `c_ident`, `c_comment`, `c_ints`, `C_TYPES` ...
    - `weights`: this function's WeightStore (aot/csource/weights.py). Add each constant with
      `ctx.weights.add(ident, array, comment)`, read it in C through the name it returns, and
      print `ctx.weights.declarations()` (after your last add) in your C file, which includes
      `ctx.weights_includes`. Small constants become C arrays; large ones go into a blob that
      aotc ships with your files (the host's policy: one for the whole bundle).
    - `tap(node, tensor, data)`: optional; a C statement to put right after your code computes
      `tensor` (a Tensor of your function's graph, produced by `node`), `data` the C expression of
      its bytes. It does nothing in a normal build; in the debug variant `aotc compare` builds it
      reports the tensor, so a divergence is located inside your function, not just at its outputs.
    """

    model_name: str  # the model's C name, the prefix of the bundle's functions (<model>_run)
    target: str  # the --target's name (e.g. "host", "mps2-an386", "aarch64-linux")
    vendor_dir: str  # bundle-relative folder of this vendor's files, e.g. "vendor/cref"
    symbol: str = "function"  # the function's global_symbol: the prefix of its blob's names
    # this vendor's options for the compile (Vendor.options; --vendor-opt V.KEY=VALUE), defaults filled in
    options: dict[str, str] = field(default_factory=dict)
    threads: int = 1  # the threads a run of the bundle uses (--threads N): a vendor library's own count too
    # the function's inputs and outputs the host may place inside its workspace (plan_workspace)
    boundary: frozenset[str] = frozenset()
    weights: WeightStore = field(init=False)  # where the function's constants go (see above)
    taps: list[dict[str, Any]] = field(init=False)  # what tap() exposed, in call order
    workspace_plans: list[WorkspacePlan] = field(init=False)  # what plan_workspace() gave, in call order
    format: ClassVar[ModuleType] = cformat  # aot.csource.format: the C text helpers (see above)
    weights_includes: ClassVar[tuple[str, ...]] = C_INCLUDES  # the headers a file holding the weights includes

    def __post_init__(self) -> None:
        self.weights = WeightStore(self.symbol)
        self.taps = []
        self.workspace_plans = []

    def plan_workspace(self, graph: Graph, scratch: Mapping[str, int] | None = None,
                       inplace: Callable[[Node], int | None] | None = None) -> WorkspacePlan:
        """Offsets in the function's workspace for its intermediates (lives from the node order) and for
        each node's `scratch` bytes (plan.scratch(node)), placed by aotc's arena planner, instead of one
        after another: report Artifact.workspace_bytes = plan.nbytes. `inplace(node)`: the input a node's
        output may be written over (elementwise ops), or None. Buffers of the vendor's own:
        `aot.plan.workspace.plan_lives([Life(name, nbytes, first, last), ...])`.

        The plan also holds those of the function's inputs and outputs the host can lay inside the workspace
        (`boundary`: an input the call reads last, an output the host reads; plan.boundary), so that the
        workspace reuses their bytes where they are dead, as the host's arena does layer by layer; your code
        reads and writes them through their DLTensors as ever. Run your nodes in `graph`'s order."""
        edge = [t for t in (*graph.inputs, *graph.outputs) if t in self.boundary]
        plan = plan_workspace(graph, scratch, inplace, edge)
        self.workspace_plans.append(plan)
        return plan

    def tap(self, node: Node, tensor: Tensor, data: str) -> str:
        """The C statement (AOTC_TAP, from "aotc_common.h" in `weights_includes`) that reports `tensor`,
        just computed by `node`, to `aotc compare`; `data` is the C expression of its bytes, which
        must hold the ONNX tensor's values in C order (tap no tensor kept in another layout)."""
        op = node.attrs["composite"] if node.op == "Composite" else node.op
        self.taps.append({"node": node.name, "op": op, "onnx_nodes": list(node.sources()), "tensor": tensor.name})
        return c_tap(f"{self.symbol}/{node.name}", tensor.name, tensor.dtype, tensor.shape, data, tensor.nbytes)


# Vendor.codegen: (one of its functions, as its transform left it; the context) -> the C of that function.
Codegen = Callable[[Function, CodegenContext], Artifact]
# (function, this vendor's options) -> the function rewritten (its own passes, e.g. into its own nodes)
Transform = Callable[[Function, Mapping[str, str]], Function]


GRAPH_PASSES_OPTION = "graph_passes"  # the option every vendor with graph passes has: on | off


@dataclass(frozen=True)
class VendorOption:
    """An option a vendor declares, set per compile with `--vendor-opt V.KEY=VALUE`: the values it
    takes (the first is the default) and one line of help (`aotc --list-vendors` shows both)."""

    values: tuple[str, ...]  # what V.KEY may be set to; the first is the default
    help: str = ""  # one line, shown by `aotc --list-vendors`

    @property
    def default(self) -> str:
        """The value the option has when --vendor-opt does not set it: the first of `values`."""
        return self.values[0]


def _no_codegen(fn: Function, ctx: CodegenContext) -> Artifact:  # pragma: no cover - never called
    raise AssertionError("refused in Vendor.__post_init__")


@dataclass
class Vendor:
    """A backend. `codegen` is required: a vendor that cannot turn its functions into C is
    refused when it is created (so when it is found by name), not halfway through a compile."""

    name: str  # what --vendor names it by: its entry point's name, its functions' `compiler`
    checkers: dict[str, Checker] = field(default_factory=dict)  # ONNX op -> (node, graph) -> bool | Verdict
    patterns: tuple[Composite, ...] = ()  # tried in order: list longer chains before their prefixes
    codegen: Codegen = _no_codegen  # each of its functions -> an Artifact (its C)
    transform: Transform | None = None  # runs before codegen on each of its functions
    options: dict[str, VendorOption] = field(default_factory=dict)  # KEY -> what --vendor-opt V.KEY takes
    # (region's nodes in graph order, main graph) -> False sends the region back to the host
    keep_region: Callable[[Sequence[Node], Graph], bool] | None = None
    description: str = ""  # one line, shown by `aotc --list-vendors`
    # (target) -> why this vendor's code cannot be built for it, or None: checked before any work,
    # so that `--vendor V --target T` is refused in one line instead of failing at link time
    target_reason: Callable[[Target], str | None] | None = None
    # Passes over the whole graph, run before partitioning (TVM's partition_for_<name> rewrites): the
    # vendor's preferred form of the model (a residual Add fused into its conv as a node of its own, a
    # layer-norm rewrite) before any checker sees it. A sequence of aot.passes.base.Pass, or a function of the
    # vendor's options giving one. Each is verified after it runs; `--vendor-opt V.graph_passes=off` skips them,
    # and `aotc partition --show` lists those that changed the graph.
    graph_passes: Sequence[Pass] | Callable[[Mapping[str, str]], Sequence[Pass]] = ()
    # Ops of the vendor's own domain (aot.ir.vendor_ops.VendorOp: domain, op_type, infer): read from a model
    # when this vendor is given, named `<domain>.<op_type>` in the IR, taken by this vendor (its checker for
    # that name, if any, may still refuse one), refused by name anywhere else.
    ops: Sequence[VendorOp] = ()
    # The layout its functions take their tensors in and give them back (aot/partition/layout.py): "NHWC"
    # (channels last), "NCHW8c" (channels blocked by 8, any block size), or (function, boundary tensor) -> a
    # permutation, an aot.vendor.Layout (a split of the axes, then a permutation) or None. aotc transposes on the
    # host side of the call; the function's graph begins and ends with the inverse, for the vendor to fold.
    boundary_layout: str | Callable[[Function, Tensor], Sequence[int] | Layout | None] | None = None

    def __post_init__(self) -> None:
        self.ops = tuple(op if op.vendor == self.name else replace(op, vendor=self.name) for op in self.ops)
        if self.graph_passes and GRAPH_PASSES_OPTION not in self.options:
            self.options = {**self.options, GRAPH_PASSES_OPTION: VendorOption(
                ("on", "off"), "run this vendor's graph passes before partitioning")}
        check_vendor(self)

    def passes_for(self, options: Mapping[str, str]) -> list[Pass]:
        """The graph passes to run with these (resolved) options: none when they are switched off."""
        if not self.graph_passes or options.get(GRAPH_PASSES_OPTION, "on") == "off":
            return []
        with in_vendor(self.name, "graph_passes"):
            passes = list(self.graph_passes(options) if callable(self.graph_passes) else self.graph_passes)
            bad = [p for p in passes if not isinstance(p, Pass)]
            if bad:
                raise AotcError(f"graph_passes gave a {type(bad[0]).__name__}, not an aot.passes.base.Pass")
        return passes

    def check_target(self, target: Target) -> None:
        """Refuse a target this vendor's code cannot be built for."""
        with in_vendor(self.name, "target_reason"):
            reason = self.target_reason(target) if self.target_reason else None
        if reason:
            raise AotcError(f"vendor {self.name} does not support target {target.name}: {reason}")

    def resolve_options(self, given: Mapping[str, str]) -> dict[str, str]:
        """Every declared option, given or default; an unknown option or value is refused in one line."""
        for key, value in given.items():
            opt = self.options.get(key)
            if opt is None:
                known = ", ".join(sorted(self.options)) or "none"
                raise AotcError(f"vendor {self.name} has no option '{key}' (its options: {known})")
            if value not in opt.values:
                raise AotcError(f"vendor option {self.name}.{key} takes {' | '.join(opt.values)}, not '{value}'")
        return {key: given.get(key, opt.default) for key, opt in self.options.items()}

    def check(self, node: Node, graph: Graph) -> Verdict:
        """The vendor's verdict on one node, as partitioning asks it: its checker for node.op (run inside
        in_vendor, a bool answer made a Verdict), ACCEPT for one of its own ops without one, else a refusal."""
        checker = self.checkers.get(node.op)
        if checker is None:
            if any(op.ir_name == node.op for op in self.ops):
                return ACCEPT  # its own op
            return Reject(f"{self.name} does not take {node.op}")
        with in_vendor(self.name, f"checker for {node.op}", node):
            verdict = checker(node, graph)
        if isinstance(verdict, Verdict):
            return verdict
        return ACCEPT if verdict else Reject(f"{self.name}'s {node.op} checker refused it")


def check_vendor(vendor: object, name: str | None = None) -> None:
    """Refuse an object that cannot serve as a vendor, naming it (and the entry point it came from)."""
    label = f"vendor '{name or getattr(vendor, 'name', '?')}'"
    if not isinstance(vendor, Vendor):
        raise AotcError(f"{label} is a {type(vendor).__name__}, not an aot.vendor.Vendor")
    if name is not None and vendor.name != name:
        raise AotcError(f"{label} is registered under that name but calls itself '{vendor.name}'")
    if vendor.codegen is _no_codegen or not callable(vendor.codegen):
        raise AotcError(f"{label} has no codegen: every vendor must give codegen(function, context) -> Artifact "
                        "(docs/vendor-guide.md, section 5)")
    for key, opt in vendor.options.items():
        if not isinstance(opt, VendorOption) or not opt.values or not key.replace("_", "").isalnum():
            raise AotcError(f"{label}'s option '{key}' must be a VendorOption with at least one value, "
                            "its name letters, digits and '_'")
