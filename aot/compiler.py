"""The pipeline, one plain function per stage: ONNX -> IR -> simplified -> planned C bundle."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from aot import flash
from aot.emit_c import Bundle, build_bundle
from aot.errors import AotcError, in_vendor
from aot.frontend import import_model, load_model, sanitize
from aot.frontend.onnx.bounded import check_bounded
from aot.ir import Function, Graph, Node
from aot.ir.held import held_copy, holding
from aot.ir.vendor_ops import known_vendor_ops
from aot.kernels import nchw_bands, tflite_cost
from aot.kernels.base import KernelChoice, TargetTraits
from aot.kernels.conv import on_gemm_core
from aot.kernels.dsp_paths import layers as dsp_layers
from aot.kernels.dsp_paths import windowed_convs_lead
from aot.kernels.tflite_bands import layer_of
from aot.partition import Partitioned, partition_for
from aot.partition.layout import apply_boundary_layouts
from aot.partition.manual import load_annotations
from aot.partition.serialize import from_onnx, function_from_proto, stored_name, transformed_functions
from aot.passes import DEFAULT_PIPELINE, HOST_PIPELINE, DepthwiseAsConv, FoldChannelScale, Pass, simplify, verify_graph
from aot.passes.base import run_passes_tracked
from aot.passes.quantized_io import integer_io
from aot.plan import ALIGNMENT, BudgetError, OpMemory, Plan, plan_memory
from aot.plan.bands import plan_with_bands, replanned
from aot.plan.buffers import reserve_state
from aot.plan.choice import Option, cheapest, tighter_schedules
from aot.plan.pools import PoolSpec, assign_pools
from aot.select import Selection, fuse_in_bands, op_memory, select_kernels, transpose_in_place
from aot.targets import (
    AVX512_ISAS,
    Target,
    board_pools,
    check_pools,
    fit_bundle,
    get_target,
    host_isa,
    toolchain_digest,
)
from aot.vendor import Artifact, CodegenContext, Vendor, check_vendor, find_vendor


@dataclass(frozen=True)
class Options:
    name: str | None = None  # C prefix of the bundle; default: the model file's stem
    target: str = "host"
    vendors: tuple[str | Vendor, ...] = ()  # names (found by entry point) or Vendor objects, by priority
    annotate: str | None = None  # manual annotation file (JSON)
    vendor_options: tuple[tuple[str, str, str], ...] = ()  # (vendor, key, value): --vendor-opt V.KEY=VALUE
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # static shapes for dynamic inputs
    dims: tuple[tuple[str, int], ...] = ()  # named (symbolic) dimensions fixed wherever they appear: --dim
    # inputs pinned at compile time: ((name, value), ...), value text as --input-value NAME=VALUE takes
    # it ("16000", "1,0,2") or numbers; each becomes a constant (what it decides folds), which the
    # bundle no longer takes (metadata.json's pinned_inputs)
    input_values: tuple[tuple[str, object], ...] = ()
    # kernel scratch any step may have beyond its spare memory (aot/plan/planner.py). 0, the
    # default, holds the arena to the tight bound: the conv and GEMM kernels need no scratch to be
    # fast, and the others size theirs to the memory spare at their step. More lets kernels take
    # their largest blocks everywhere (a few percent on some models, for RAM).
    scratch_floor: int = 0
    # bounds of data-dependent dims: ((tensor, axis, rows), ...) (--max-dim; aot/frontend/onnx/bounded.py)
    max_dims: tuple[tuple[str, int, int], ...] = ()
    # threads a run uses (--threads; Linux targets): N > 1 adds a pool of N - 1 workers to the bundle
    # (runtime_c/kernels/threads/aotc_threads.h) and takes the conv kernels that split their work over it
    threads: int = 1
    # --quantized-io: a graph input read only by per-tensor QuantizeLinear nodes (one scale and zero
    # point) takes their integers, and an output made by a per-tensor DequantizeLinear gives the ones it
    # reads (aot/passes/quantized_io.py); the rest stay float, with a note why (metadata.json's
    # quantized_io.notes)
    quantized_io: bool = False
    # --fast-math: the kernels that are faster but round more than a direct sum may be taken, their
    # results no longer within DESIGN.md's tolerance on every input: Winograd's F(4 x 4, 3 x 3) for 3 x 3
    # convs (aot/kernels/winograd.py). Off, every kernel keeps to the tolerance.
    fast_math: bool = False
    # --host-isa: the ISA level a --target host bundle's kernels assume (aot/targets.py HOST_ISAS); None, the
    # default, takes the compiling machine's (/proc/cpuinfo). Named, the bundle is the same on any machine.
    host_isa: str | None = None
    # --ram-budget: the arena within these bytes, by in-place ops and outputs overlapping their inputs where
    # needed, or an AotcError naming the peak (aot/plan/planner.py plan_memory); None, the default, plans as
    # without it. metadata.json's memory.ram_budget says what was traded.
    ram_budget: int | None = None
    # --memory-pool NAME:BYTES, fastest first (aot/plan/pools.py): the buffers split over these pools, each
    # in its own linker section; () on a bare-metal board takes the board's memory map (aot/targets.py
    # board_pools) where no one region holds the arena, elsewhere plans one arena.
    memory_pools: tuple[PoolSpec, ...] = ()
    # --flash-budget: the library's flash (code and constants, as aotc footprint counts them) within these
    # bytes, by a lower optimisation level and then the portable kernels (aot/flash.py), measured by building
    # the library at compile time at `build_type`; or an AotcError naming what takes the flash. None: as without.
    flash_budget: int | None = None
    # the CMake build type the bundle will be built at (--build-type): what --flash-budget measures at
    build_type: str = "Release"
    # --widened-weights: on cores with SMLAD, the int8 CONV_2D weights the DSP path reads also stored widened to
    # 16-bit halves in its layout (flash for the run-time widening; metadata.json's widened_weights); a
    # --flash-budget drops them first (aot/flash.py)
    widened_weights: bool = False
    # --separate-weights: the constants of the model's own code in one file apart from the library
    # (src/<name>_weights.bin, a header the bundle checks), handed over at run time by <name>_load_weights from
    # any address (external flash, a file, an update partition); the vendors' functions keep theirs linked
    separate_weights: bool = False


def default_pipeline(target: Target) -> tuple[Pass, ...]:
    """The graph rewrites before partitioning for a target: DEFAULT_PIPELINE, without DepthwiseAsConv where the
    depthwise kernels have a DSP path for depth multipliers above 1 (the M-profile cores with the DSP extension
    but not Helium: tfl_depthwise_s8_mult, faster and smaller there than the conv's patches: TFLM's micro_speech
    est. cycles on the M4 1,066,163 -> 538,169); elsewhere the conv's path is the faster (on the M55 Helium's
    CONV_2D since its assembly dot products: micro_speech 486,358 -> 426,171 against the multiplier path,
    measured at aotc ebeafee; 2,744,143 against 489,882 before them)."""
    if target.dsp and not target.helium:
        return tuple(p for p in DEFAULT_PIPELINE if not isinstance(p, DepthwiseAsConv))
    return DEFAULT_PIPELINE


def partition_model(model: onnx.ModelProto, options: Options = Options(),
                    source: str = "model.onnx", *, keep_onnx: bool = True, owned: bool = False) -> Partitioned:
    """Frontend, simplification and partitioning: the graph whose functions go to vendors, with the
    vendors (by priority) whose codegen takes them and why nodes stayed on the host.

    A model written by `aotc partition` carries its regions, their symbols and its C name; they are
    honoured like manual annotations, and what it left on the host stays there. `keep_onnx`: the
    folded ONNX stays in the graph's meta, for writing the partition back (aotc partition -o).
    `owned`: `model` was loaded for this call and may be changed in place (a copy of the weights less)."""
    file_name = stored_name(model)
    written, transformed = model, transformed_functions(model)
    owned = owned and not transformed  # their constants are read from the file as written, below
    model, annotations, file_vendors = from_onnx(model)
    vendors: list[Vendor] = []
    target = get_target(options.target)
    for v in [*options.vendors, *file_vendors]:
        v = find_vendor(v) if isinstance(v, str) else v
        check_vendor(v)
        v.check_target(target)
        if all(v.name != known.name for known in vendors):
            vendors.append(v)
    vendor_options(vendors, options.vendor_options)  # a wrong option is refused before any work
    if options.annotate:
        annotations = annotations + load_annotations(options.annotate)
    name = sanitize(options.name or file_name or Path(source).stem)
    max_dims = {(t, a): n for t, a, n in options.max_dims}
    with known_vendor_ops([op for v in vendors for op in v.ops]):  # the vendors' own ops, read by the import
        graph = simplify(import_model(model, name, dict(options.input_shapes), max_dims, keep_onnx=keep_onnx,
                                      owned=owned, input_values=_input_values(options.input_values),
                                      dims=dict(options.dims)), default_pipeline(target))
    if options.quantized_io:  # after the QDQ pass, which hoists an input's Q above the views it read
        graph, _ = integer_io(graph)
    graph = vendor_graph_passes(graph, vendors, vendor_options(vendors, options.vendor_options))
    parted = partition_for(graph, vendors, annotations, name)
    _refuse_vendor_ops_left(parted)
    for symbol, proto in transformed.items():  # written after their vendor's transform
        if symbol in parted.graph.functions:
            parted.graph.functions[symbol] = function_from_proto(proto, parted.graph.functions[symbol], written)
    return replace(parted, options=vendor_options(vendors, options.vendor_options))


def vendor_graph_passes(graph: Graph, vendors: Sequence[Vendor], options: Mapping[str, Mapping[str, str]]) -> Graph:
    """Each vendor's graph passes (Vendor.graph_passes), in the vendors' priority order, before partitioning;
    each verified after it runs. Those that changed the graph are recorded in graph.info (for --show and
    metadata.json)."""
    fired: dict[str, list[str]] = {}
    for v in vendors:
        for p in v.passes_for(options[v.name]):
            with in_vendor(v.name, f"graph pass {p.name}"):
                graph, changed = run_passes_tracked(graph, [p])
            if changed:
                fired.setdefault(v.name, []).append(p.name)
    if fired:
        graph.info = replace(graph.info, vendor_graph_passes=fired)
    return graph


def _refuse_vendor_ops_left(parted: Partitioned) -> None:
    """A vendor's own op its vendor did not take: the host has no kernel for it."""
    own = {op.ir_name: op for v in parted.vendors for op in v.ops}
    for n in parted.graph.nodes:
        if n.op in own:
            op = own[n.op]
            why = parted.refusals.get(n.name, {}).get(op.vendor, "placed on the host by hand")
            raise AotcError(f"an op of vendor {op.vendor}'s domain '{op.domain}', which only {op.vendor} runs, and "
                            f"it did not take this one: {why}", node=n)


def _input_values(given: Sequence[tuple[str, object]]) -> dict[str, object]:
    """--input-value's pairs by name; one input given two different values is refused."""
    values: dict[str, object] = {}
    for name, value in given:
        if name in values and str(values[name]) != str(value):
            raise AotcError(f"--input-value {name} given twice ({values[name]}, {value})")
        values[name] = value
    return values


def vendor_options(vendors: Sequence[Vendor], given: Sequence[tuple[str, str, str]]) -> dict[str, dict[str, str]]:
    """Each vendor's options, defaults filled in. An option for a vendor not in use, an option it
    does not declare or a value it does not take is refused in one line."""
    per: dict[str, dict[str, str]] = {}
    names = [v.name for v in vendors]
    for vendor, key, value in given:
        if vendor not in names:
            raise AotcError(f"--vendor-opt {vendor}.{key}: vendor {vendor} is not in use "
                            f"(give --vendor {vendor}; in use: {', '.join(names) or 'none'})")
        if key in per.setdefault(vendor, {}) and per[vendor][key] != value:
            raise AotcError(f"--vendor-opt {vendor}.{key} given twice ({per[vendor][key]}, {value})")
        per[vendor][key] = value
    return {v.name: v.resolve_options(per.get(v.name, {})) for v in vendors}


def codegen_functions(graph: Graph, target: str, vendors: Sequence[Vendor],
                      options: dict[str, dict[str, str]] | None = None, threads: int = 1,
                      place_boundary: bool = False) -> dict[str, Artifact]:
    """Each vendor's transform and codegen over its functions (`vendors`: Partitioned.vendors;
    `options`: Partitioned.options, each vendor's defaults when not given; `threads`: --threads).
    Constants a codegen put in its context's weight store ship with its artifact: the blob, the
    file that links it in and CMake lines, when the store has a blob. `place_boundary`: offer each
    codegen's plan_workspace the call's tensors the host may lay inside the workspace (_placeable_boundary)."""
    by_name = {v.name: v for v in vendors}
    artifacts: dict[str, Artifact] = {}
    for symbol, fn in list(graph.functions.items()):
        v = by_name.get(fn.compiler)
        if v is None:
            raise AotcError(f"function {symbol} is for vendor {fn.compiler}, which is not among the vendors "
                            f"({', '.join(by_name) or 'none'})")
        opts = (options or {}).get(v.name) or v.resolve_options({})
        fn = graph.functions[symbol] = transform_function(fn, v, opts)
        ctx = CodegenContext(graph.name, target, f"vendor/{v.name}", symbol, dict(opts), threads,
                             boundary=_placeable_boundary(graph, symbol) if place_boundary else frozenset())
        with in_vendor(v.name, f"codegen of {symbol}"):
            art = v.codegen(fn, ctx)
            if not isinstance(art, Artifact):
                raise AotcError(f"codegen returned a {type(art).__name__}, not an aot.vendor.Artifact")
        if len(ctx.workspace_plans) == 1 and ctx.workspace_plans[0].boundary \
                and ctx.workspace_plans[0].nbytes == art.workspace_bytes:  # its workspace is that plan
            art = replace(art, workspace_boundary=dict(ctx.workspace_plans[0].boundary))
        if art.weights_bytes is None:
            stored = ctx.weights.nbytes if len(ctx.weights) else \
                sum(fn.graph.tensors[t].nbytes for t in fn.graph.constants_read())
            art = replace(art, weights_bytes=stored)
        art = _with_weights(art, ctx)
        artifacts[symbol] = replace(art, taps=list(ctx.taps)) if ctx.taps else art
    return artifacts


def _placeable_boundary(graph: Graph, symbol: str) -> frozenset[str]:
    """The tensors of the one call of `symbol` that the host may place inside its workspace: an input the
    call is the last to read (not a graph input or output, not a constant), an output the host reads later
    (not a graph output). The planner checks again (plan_memory: a tensor sharing bytes with another stays out)."""
    calls = [k for k, n in enumerate(graph.nodes) if n.op == "Call" and n.attrs.get("function") == symbol]
    if len(calls) != 1:
        return frozenset()
    call = graph.nodes[calls[0]]
    later = {t for n in graph.nodes[calls[0] + 1:] for t in n.inputs if t}
    io = {*graph.inputs, *graph.outputs}
    ins = {t for t in call.inputs if t and t not in io and not graph.tensors[t].is_const and t not in later
           and call.inputs.count(t) == 1}
    outs = {t for t in call.outputs if t and t not in io and t in later}
    return frozenset(ins | outs)


def transform_function(fn: Function, vendor: Vendor, options: dict[str, str]) -> Function:
    """The vendor's transform of one of its functions (the function itself when it has none); the
    result must still be a function the call verifies against (same inputs and outputs)."""
    if vendor.transform is None:
        return fn
    with in_vendor(vendor.name, f"transform of {fn.global_symbol}"):
        out = vendor.transform(fn, dict(options))
    if not isinstance(out, Function) or list(out.graph.inputs) != list(fn.graph.inputs) \
            or list(out.graph.outputs) != list(fn.graph.outputs) or out.global_symbol != fn.global_symbol:
        raise AotcError(f"vendor {vendor.name}'s transform of {fn.global_symbol} changed its symbol, inputs or outputs")
    verify_graph(out.graph)
    return out


def transform_functions(graph: Graph, vendors: Sequence[Vendor],
                        options: dict[str, dict[str, str]] | None = None) -> dict[str, Function]:
    """Each function as its vendor's transform leaves it (for `aotc partition --transform`)."""
    by_name = {v.name: v for v in vendors}
    return {symbol: transform_function(fn, by_name[fn.compiler],
                                       (options or {}).get(fn.compiler) or by_name[fn.compiler].resolve_options({}))
            for symbol, fn in graph.functions.items()}


def _with_weights(art: Artifact, ctx: CodegenContext) -> Artifact:
    files = ctx.weights.files()
    if not files or all(f in art.files for f in files):
        return art
    cmake = "\n".join(c for c in (art.cmake.rstrip("\n"), ctx.weights.cmake(ctx.vendor_dir)) if c)
    return replace(art, files={**art.files, **files}, sources=[*art.sources, *ctx.weights.sources()], cmake=cmake)


def _band_layer(node: Node, graph: Graph) -> Any:
    """A node as a layer of a run in row bands: a TFLite int8 conv (NHWC) or an ONNX QLinearConv / float Conv
    (NCHW), else None."""
    return layer_of(node, graph) or nchw_bands.layer_of(node, graph)


def _banded(graph: Graph, selection: Selection, ops: OpMemory, scratch_floor: int, budget: int,
            traits: TargetTraits) -> tuple[Graph, Plan]:
    """The planner's greedy trades under `budget`, then runs of layers in row bands where those do not reach it
    (aot/plan/bands.py plan_with_bands): the fused graph and its plan."""
    return plan_with_bands(graph, lambda g, b: plan_memory(g, ops, scratch_floor, b), _band_layer,
                           lambda g, i, j, grouped=False: fuse_in_bands(g, i, j, selection, grouped), budget,
                           _plan_estimate(traits) if _estimates(traits) else None,
                           lambda g, i: transpose_in_place(g, i, selection))


def _tighter_greedy(graph: Graph, selection: Selection, ops: OpMemory, scratch_floor: int, budget: int,
                    traits: TargetTraits) -> tuple[Graph, Plan]:
    """_banded's schedules at tighter budgets than `budget`, each also planned again at it, the least estimate
    (aot/plan/choice.py tighter_schedules)."""
    return tighter_schedules(lambda b: _banded(graph, selection, ops, scratch_floor, b, traits), budget,
                             lambda g, p: replanned(g, p, lambda g, b: plan_memory(g, ops, scratch_floor, b), budget),
                             _plan_estimate(traits))


def _budget_options(graph: Graph, selection: Selection, ops: OpMemory, scratch_floor: int, ram_budget: int,
                    traits: TargetTraits) -> list[Option]:
    """The schedules a --ram-budget is met by, compared by their estimated cycles (aot/plan/choice.py): the
    planner's greedy trades (in-place ops, overlapping outputs, smaller kernel blocks, then row bands where
    those do not reach the budget) first, as before; on the M-profile DSP kernels, whose choices
    aot/kernels/tflite_cost.py estimates, also: row bands before smaller blocks (where the greedy plan took
    smaller blocks: else it is the same plan); the greedy trades without the overlaps that slow a kernel down
    (tflite_cost.overlap_costs); every trade that adds no work taken whatever the budget, the room saved
    given to the kernels' blocks; and, where the greedy trades without the slower overlaps do not meet the
    budget, those with row bands; the greedy trades' schedules at tighter budgets (choice.tighter_schedules: the
    greedy search is not monotone in the budget). The third and fourth without row bands (a search takes
    seconds)."""
    def banded(o: OpMemory) -> tuple[Graph, Plan]:
        return _banded(graph, selection, o, scratch_floor, ram_budget, traits)

    def tighter() -> tuple[Graph, Plan]:
        return _tighter_greedy(graph, selection, ops, scratch_floor, ram_budget, traits)

    first = _once(lambda: banded(ops))

    def bands_first() -> tuple[Graph, Plan]:
        try:
            g, p = first()
        except BudgetError:
            return banded(replace(ops, choose_least=None))
        traded = (p.budget or {}).get("traded", {})
        if "tiles_bytes_saved" not in traded.get("scratch", {}) and "bands" not in traded:
            return g, p  # no smaller blocks taken: without them the planner makes this plan again
        return banded(replace(ops, choose_least=None))

    options: list[Option] = [("greedy", first)]
    if not _estimated(graph, traits):
        return options  # no choice the estimate tells apart: all would tie, and the greedy plan is kept
    free = _no_slower_overlaps(ops, traits)
    no_slower_overlaps = _once(lambda: (graph, plan_memory(graph, free, scratch_floor, ram_budget)))

    def banded_no_slower_overlaps() -> tuple[Graph, Plan]:
        # where the budget needs more than the trades that slow no kernel, row bands may cost less than the
        # overlaps that do (the M55's VWW: a 1 x 1 conv over its input, 94 K est. cycles, against a run in bands
        # that a tighter budget takes anyway); where it does not, the same plan as the option before
        try:
            return no_slower_overlaps()
        except BudgetError:
            return banded(free)

    return [*options, ("bands before smaller blocks", bands_first),
            ("greedy, no slower overlaps", no_slower_overlaps),
            ("every free trade", lambda: (graph, _every_free_trade(graph, ops, scratch_floor, ram_budget, traits))),
            ("bands, no slower overlaps", banded_no_slower_overlaps),
            ("a tighter budget's greedy", tighter)]


def _once(build: Callable[[], tuple[Graph, Plan]]) -> Callable[[], tuple[Graph, Plan]]:
    """An option's schedule built at its first call only (another option reuses it), its BudgetError too."""
    done: list[tuple[Graph, Plan] | BudgetError] = []

    def get() -> tuple[Graph, Plan]:
        if not done:
            try:
                done.append(build())
            except BudgetError as e:
                done.append(e)
        if isinstance(done[0], BudgetError):
            raise done[0]
        return done[0]
    return get


def _estimates(traits: TargetTraits) -> bool:
    """Whether aot/kernels/tflite_cost.py has an estimate for the target's int8 kernels: the M-profile DSP
    extension's (M4, M33, M7) and Helium's (M55)."""
    return traits.dsp or traits.helium


def _estimated(graph: Graph, traits: TargetTraits) -> bool:
    """Whether aot/kernels/tflite_cost.py estimates this graph's kernel choices."""
    return _estimates(traits) and any(n.op in tflite_cost.ESTIMATED for n in graph.nodes)


def _estimate(traits: TargetTraits) -> Callable[..., float]:
    """OpMemory.cost for the target's kernels (tflite_cost.estimate, Helium's terms on the M55)."""
    return partial(tflite_cost.estimate, helium=traits.helium)


def _plan_estimate(traits: TargetTraits) -> Callable[[Graph, Plan], float]:
    return partial(tflite_cost.plan_estimate, helium=traits.helium)


def _no_slower_overlaps(ops: OpMemory, traits: TargetTraits) -> OpMemory:
    """ops without the overlapping outputs that slow a kernel down (tflite_cost.overlap_costs)."""
    return replace(ops, overlap=lambda n, g: None if tflite_cost.overlap_costs(n, g, traits.helium)
                   else ops.overlap(n, g))


def _every_free_trade(graph: Graph, ops: OpMemory, scratch_floor: int, budget: int, traits: TargetTraits) -> Plan:
    """Every trade of room for no work (in-place ops, the overlaps that slow no kernel; no smaller blocks) taken
    whatever the budget, the room saved given to the kernels' blocks, their scratch sized for `budget`."""
    return plan_memory(graph, replace(_no_slower_overlaps(ops, traits), choose_least=None), scratch_floor, budget,
                       trade_to=0)


def _unbudgeted_plan(graph: Graph, ops: OpMemory, scratch_floor: int, traits: TargetTraits) -> Plan:
    """The plan without a budget; on the M-profile DSP kernels whose cycles aot/kernels/tflite_cost.py estimates,
    the plan that takes every trade of room for no work (the overlaps that slow no kernel) within the same arena,
    the room saved given to the kernels' blocks, where that is estimated faster: a budget would otherwise buy
    speed the default leaves (KWS DS-CNN at a 19,294 B budget ran 2.5 % faster than without one), and a looser
    budget must never be slower than a tighter one (issue 67)."""
    plan = plan_memory(graph, ops, scratch_floor)
    if not _estimated(graph, traits):
        return plan
    try:
        traded = _every_free_trade(graph, replace(ops, cost=_estimate(traits)), scratch_floor, plan.arena_bytes,
                                   traits)
    except BudgetError:
        return plan
    if (traded.arena_bytes <= plan.arena_bytes
            and _plan_estimate(traits)(graph, traded) < _plan_estimate(traits)(graph, plan)):
        traded.budget = None  # no budget was asked for: metadata.json says nothing of one
        return traded
    return plan


def _unbudgeted_bands(graph: Graph, selection: Selection, ops: OpMemory, scratch_floor: int, traits: TargetTraits,
                      plan: Plan) -> tuple[Graph, Plan]:
    """The plan without a budget, or where estimated faster in no more memory the schedule of "bands before smaller
    blocks" at a tighter budget than the plan's own arena (_tighter_greedy without smaller blocks), its runs in row
    bands: a run's line buffers free the tensors between its layers and its kernels share one scratch, so their
    blocks may grow (IC ResNet-8, CONV_2D_1..2 in bands: --ram-budget 43443 ran 16,851,355 est. cycles under qemu
    against 16,941,694 without a budget, which must never be slower than a budget, issue 67). Without smaller
    blocks the greedy trades stop at the overlaps where those meet the budget (no search: TFLM person_detect)."""
    try:
        fused, banded = _tighter_greedy(graph, selection, replace(ops, choose_least=None), scratch_floor,
                                        plan.arena_bytes, traits)
    except BudgetError:
        return graph, plan
    estimate = _plan_estimate(traits)
    if banded.arena_bytes <= plan.arena_bytes and estimate(fused, banded) < estimate(graph, plan):
        banded.budget = None  # no budget was asked for: metadata.json says nothing of one
        return fused, banded
    return graph, plan


def select_and_plan(graph: Graph, target: str, artifacts: dict[str, Artifact],
                    scratch_floor: int = 0, threads: int = 1, fast_math: bool = False,
                    isa: str | None = None, ram_budget: int | None = None,
                    memory_pools: tuple[PoolSpec, ...] = (), portable: bool = False,
                    widened_weights: bool = False, mve_conv: bool = True, mve_fc: bool = True,
                    dsp_layers: bool = True) -> tuple[Selection, Plan]:
    """The host kernels each node may run (select), then the arena, with the kernel each node
    runs at the memory its step can spare (plan). `isa`: the host ISA level (Options.host_isa),
    None for the compiling machine's; `ram_budget`: Options.ram_budget, under which runs of layers may be
    fused into one node each (row bands): `graph.nodes` is then changed in place to the fused graph's;
    `memory_pools`: Options.memory_pools (the arena's buffers split over them); `portable`: no ISA-path
    candidates (a --flash-budget level, aot/flash.py: the bundle is then built with AOTC_NO_INTRINSICS);
    `widened_weights`: Options.widened_weights, unless a --flash-budget level dropped them; `mve_conv`: Helium's
    int8 CONV_2D candidates (a --flash-budget level of the M55 leaves them out, aot/flash.py); `mve_fc`: its
    FULLY_CONNECTED candidate (no scratch), likewise; `dsp_layers`: the convs
    and depthwise layers run the DSP paths whose blocks aot/kernels/tflite_cost.py estimates (not a flash level's
    compact or plain loops), so that the plan without a budget may take runs in row bands (_unbudgeted_bands)."""
    # a workspace holding the call's tensors (Artifact.workspace_boundary) is a block of the plan, not scratch
    workspace = {symbol: 0 if a.workspace_boundary else a.workspace_bytes for symbol, a in artifacts.items()}
    called = {n.name: artifacts[n.attrs["function"]] for n in graph.nodes
              if n.op == "Call" and n.attrs.get("function") in artifacts}
    blocks = {name: (a.workspace_bytes, a.workspace_boundary) for name, a in called.items() if a.workspace_boundary}
    t = get_target(target)
    level = host_isa(isa, t)
    traits = TargetTraits(vector_unit=t.vector_unit, scalar_tiles=not t.vector_unit and not t.helium,
                          helium=t.helium and not portable, dsp=t.dsp and not t.helium and not portable,
                          threads=threads, avx512=level in AVX512_ISAS and not portable,
                          vnni=level == "avx512vnni" and not portable,
                          host=t.kind == "host" and not portable, fast_math=fast_math, portable=portable,
                          widened_weights=widened_weights, mve_conv=mve_conv, mve_fc=mve_fc)
    selection = select_kernels(graph, traits, workspace)
    state = {symbol: a.state_bytes for symbol, a in artifacts.items() if a.state_bytes > 0}
    if state and ram_budget is not None:  # the states' bytes come off the budget the tensors are planned in
        ram_budget -= sum(-(-n // ALIGNMENT) * ALIGNMENT for n in state.values())
        if ram_budget < 0:
            raise AotcError(f"--ram-budget: the vendor functions' state alone ({sum(state.values()):,} B) exceeds it")
    if ram_budget is None:
        ops = replace(op_memory(selection), workspaces=blocks)
        plan = _unbudgeted_plan(graph, ops, scratch_floor, traits)
        if dsp_layers and _estimated(graph, traits):
            fused, plan = _unbudgeted_bands(graph, selection, replace(ops, cost=_estimate(traits)), scratch_floor,
                                            traits, plan)
            graph.nodes[:] = fused.nodes
            graph.tensors.update({t: v for t, v in fused.tensors.items() if t not in graph.tensors})
    else:
        # under a budget the planner may fuse runs of int8 convs in row bands (aot/plan/bands.py): the graph's
        # nodes are then those of the fused graph, the run's layers one node (and its tensors those a run's groups
        # of channels add: aot/kernels/tflite_bands.py Group)
        ops = replace(op_memory(selection), workspaces=blocks,
                      cost=_estimate(traits) if _estimates(traits) else None)
        fused, plan = cheapest(_budget_options(graph, selection, ops, scratch_floor, ram_budget, traits),
                               _plan_estimate(traits))
        graph.nodes[:] = fused.nodes
        graph.tensors.update({t: v for t, v in fused.tensors.items() if t not in graph.tensors})
    io_bytes = sum(graph.tensors[i].nbytes for i in graph.inputs if not graph.tensors[i].is_const)
    whole = max((n for _, n in board_pools(t, io_bytes, arena_in_each=True)), default=0)
    # the vendor functions' state: the arena's last bytes (pool 0's, when the buffers are split over pools)
    with_state = reserve_state(plan, state)
    if memory_pools:
        check_pools(t, tuple(p.name for p in memory_pools))
        plan = assign_pools(graph, plan, memory_pools, state)
    elif t.kind == "bare-metal" and with_state.arena_bytes > whole:  # no one region holds the arena: split it
        try:
            plan = assign_pools(graph, plan, tuple(PoolSpec(*p) for p in board_pools(t, io_bytes)), state)
        except AotcError as e:  # not even split: the board is too small, which the user must hear first
            raise AotcError(f"model '{graph.name}' does not fit target {t.name} ({t.memory_summary()}): "
                            f"{e.one_line()}") from e
    else:
        plan = with_state
    total = sum(p.nbytes for p in plan.pools)
    if ram_budget is not None and total > ram_budget:  # buffers in different pools cannot share bytes
        raise AotcError(f"--ram-budget {ram_budget:,} B: the memory pools need {total:,} B in all ("
                        + ", ".join(f"{p.name} {p.nbytes:,} B" for p in plan.pools)
                        + "): buffers in different pools cannot share bytes; give the first pool more room "
                          "or a larger budget")
    return selection, plan


def compile_model(model: onnx.ModelProto, options: Options = Options(), source: str = "model.onnx") -> Bundle:
    return compile_partitioned(partition_model(model, options, source, keep_onnx=False), options, source)


def compile_partitioned(parted: Partitioned, options: Options = Options(), source: str = "model.onnx") -> Bundle:
    """Host fusion, vendor codegen, kernel selection, memory plan and C, after partition_model."""
    graph = apply_boundary_layouts(parted.graph, parted.vendors)  # the layouts vendors take at their calls
    graph = simplify(graph, HOST_PIPELINE)  # fusion for the host kernels, after vendors took their nodes
    if get_target(options.target).kind == "host":  # a microcontroller's 1 x 1 convs take the implicit GEMM
        graph = simplify(graph, (FoldChannelScale(on_gemm_core),))
    check_bounded(graph)  # the passes kept every reader of data-dependent rows one that runs on their extent
    check_threads(options.threads, options.target)
    isa = host_isa(options.host_isa, get_target(options.target))
    artifacts = _codegen_with_blocks(graph, parted, options, isa)
    planned: dict[tuple[Any, ...], _Planned] = {}
    graph = _depthwise_form_under_budget(graph, options, artifacts, isa, planned)
    nodes = list(graph.nodes)  # select_and_plan may fuse runs in bands: each flash level starts from these

    def bundle_at(level: flash.FlashLevel) -> Bundle:
        graph.nodes[:] = nodes
        selection, plan = _select_and_plan_once(planned, graph, options.target, artifacts, options.scratch_floor,
                                                options.threads, options.fast_math, isa, options.ram_budget,
                                                options.memory_pools, portable=level.portable,
                                                widened_weights=options.widened_weights and level.widened,
                                                mve_conv="conv" not in level.mve_off,
                                                mve_fc="fc" not in level.mve_off,
                                                dsp_layers=not (level.compact_conv or level.small_conv
                                                                or level.plain_dw or level.compact_dw))
        bundle = build_bundle(graph, selection, plan, target=options.target, source=source, artifacts=artifacts,
                              threads=options.threads, fast_math=options.fast_math, host_isa=isa,
                              widened_weights=options.widened_weights, separate_weights=options.separate_weights,
                              portable=level.portable, toolchain=toolchain_digest(options.target),
                              general_paths=level.general, plain_depthwise=level.plain_dw,
                              compact_depthwise=level.compact_dw, compact_conv=level.compact_conv,
                              portable_small=level.small, compact_fc=level.compact_fc,
                              small_fc=level.small_fc, fc_pairs=level.fc_pairs, small_conv=level.small_conv,
                              single_dwm=level.single_dwm, plain_m1=level.plain_m1,
                              helium=get_target(options.target).helium, mve_off=level.mve_off,
                              portable_mve=level.mve_loops, rq_conv_only=level.rq_conv_only)
        return fit_bundle(bundle, options.target)  # refuses a model too big for the board

    if options.flash_budget is None:
        return bundle_at(flash.LEVELS[0])
    target = get_target(options.target)
    ladder = flash.levels(options.widened_weights, target.helium, o2=not (target.dsp and windowed_convs_lead(graph)))
    return flash.fit(options.flash_budget, ladder, bundle_at, options.target, options.build_type)


def _depthwise_form_under_budget(graph: Graph, options: Options, artifacts: dict[str, Artifact],
                                 isa: str | None, planned: dict[tuple[Any, ...], _Planned] | None = None) -> Graph:
    """On the cores with the DSP extension a depthwise layer of one input channel and a depth multiplier above 1
    stays depthwise (default_pipeline) for tfl_depthwise_s8_mult, whose least scratch is more than the conv's
    patches need (TFLM micro_speech's layer: 3,376 B). Under a --ram-budget that leaves such a layer no scratch,
    it would run the plain loop (34.7 est. cycles a MAC on the M4, against 1.6; at a multiplier of 4, 8, ... its
    own path, AOTC_TFL_DW_SMALL_MULT4, 4.8): the layers then take the conv form (DepthwiseAsConv) where the budget
    is met with it, its DSP patches at a few cycles a MAC (micro_speech: 1.50 M est. cycles at 5,216 B against
    1.59 M on that path at 4,720 B). `planned`: _select_and_plan_once's answers, which the bundle's own plan of the
    form kept then reuses."""
    if options.ram_budget is None or not get_target(options.target).dsp:
        return graph
    as_conv = DepthwiseAsConv().run(graph)
    rewritten = {n.name for n, m in zip(as_conv.nodes, graph.nodes, strict=True) if n.op != m.op}
    if not rewritten:
        return graph

    def plan(g: Graph) -> dict[str, KernelChoice] | None:
        nodes = list(g.nodes)  # select_and_plan may fuse runs in bands in place
        try:
            _, p = _select_and_plan_once({} if planned is None else planned, g, options.target, artifacts,
                                         options.scratch_floor, options.threads, options.fast_math, isa,
                                         options.ram_budget, options.memory_pools,
                                         widened_weights=options.widened_weights)
            return {n.name: c for n, c in dsp_layers(g, p.choices)}
        except BudgetError:
            return None
        finally:
            g.nodes[:] = nodes

    kept = plan(graph)
    if kept is not None and all(kept[n].scratch > 0 for n in rewritten if n in kept):
        return graph
    return as_conv if plan(as_conv) is not None else graph


@dataclass
class _Planned:
    """One select_and_plan's answer (or refusal): the graph and nodes it was given (kept so that an id reused by a
    later object never finds this one), the nodes it left (its runs in bands) and the tensors it added."""

    graph: Graph
    given: list[Node]
    answer: tuple[Selection, Plan] | AotcError
    nodes: list[Node]
    tensors: dict[str, Any]


def _select_and_plan_once(planned: dict[tuple[Any, ...], _Planned], graph: Graph, *args: Any,
                          **kwargs: Any) -> tuple[Selection, Plan]:
    """select_and_plan, remembered in `planned` by the graph (the object and its nodes) and the arguments (the
    artifacts by identity) until asked again once: _depthwise_form_under_budget plans the form the bundle then
    plans again with the same arguments (TFLM person_detect at its least budget: a fifth of the compile). A hit
    leaves the graph as the call did: its nodes the fused ones, the tensors it added."""
    given = _SELECT_AND_PLAN.bind(graph, *args, **kwargs)
    given.apply_defaults()
    key = (id(graph), tuple(map(id, graph.nodes)),
           tuple(id(a) if isinstance(a, dict) else a for a in list(given.arguments.values())[1:]))
    hit = planned.pop(key, None)  # used once: the bundle that takes it may change its plan (memory pools)
    if hit is None or hit.graph is not graph or any(a is not b for a, b in zip(hit.given, graph.nodes, strict=True)):
        given, before = list(graph.nodes), set(graph.tensors)
        try:
            answer: tuple[Selection, Plan] | AotcError = select_and_plan(graph, *args, **kwargs)
        except AotcError as e:
            answer = e
        hit = planned[key] = _Planned(graph, given, answer, list(graph.nodes),
                                      {t: v for t, v in graph.tensors.items() if t not in before})
    graph.nodes[:] = hit.nodes
    graph.tensors.update(hit.tensors)
    if isinstance(hit.answer, AotcError):
        raise hit.answer
    return hit.answer


_SELECT_AND_PLAN = inspect.signature(select_and_plan)


def _codegen_with_blocks(graph: Graph, parted: Partitioned, options: Options, isa: str | None) -> dict[str, Artifact]:
    """The vendors' codegen, each function's workspace its own; where a codegen planned its workspace with
    aotc (plan_workspace) and its call's tensors could lie inside it, the codegen again with them offered,
    kept if the host's arena is then smaller. (A block of a workspace with the call's tensors is rigid: its
    tensors cannot move apart, which can fragment the arena, so it is measured, not assumed.)"""
    functions = dict(graph.functions)
    own = codegen_functions(graph, options.target, parted.vendors, parted.options, options.threads)
    if not any(_placeable_boundary(graph, s) for s in functions):
        return own
    transformed = dict(graph.functions)
    graph.functions.clear()
    graph.functions.update(functions)
    inside = codegen_functions(graph, options.target, parted.vendors, parted.options, options.threads,
                               place_boundary=True)
    if not any(a.workspace_boundary for a in inside.values()):
        graph.functions.clear()
        graph.functions.update(transformed)
        return own
    nodes = list(graph.nodes)

    def arena(artifacts: dict[str, Artifact]) -> int | None:
        try:
            _, plan = select_and_plan(graph, options.target, artifacts, options.scratch_floor, options.threads,
                                      options.fast_math, isa, options.ram_budget, options.memory_pools)
            return sum(p.nbytes for p in plan.pools) if plan.pools else plan.arena_bytes
        except AotcError:  # a budget or a board it misses: the other may meet it
            return None
        finally:
            graph.nodes[:] = nodes
    with_blocks, without = arena(inside), arena(own)
    if with_blocks is not None and (without is None or with_blocks < without):
        return inside
    graph.functions.clear()
    graph.functions.update(transformed)
    return own


def check_threads(threads: int, target: str) -> None:
    """--threads N: at least 1, and more than 1 only where there are POSIX threads (host, Linux)."""
    if threads < 1:
        raise AotcError(f"--threads {threads}: give 1 or more")
    if threads > 1 and get_target(target).kind == "bare-metal":
        raise AotcError(f"--threads {threads}: target {target} is bare metal, which has no threads (give --threads 1)")


def compile_file(path: str | Path, options: Options = Options()) -> Bundle:
    host_isa(options.host_isa, get_target(options.target))  # an unknown target or level is refused before any work
    check_threads(options.threads, options.target)
    source = str(Path(path).resolve())
    # the loaded ModelProto goes at once: its large weights are held as arrays (aot/ir/held.py),
    # which the IR takes over, and the small proto left is freed once partitioned
    values: dict[str, np.ndarray] = {}
    model = held_copy(load_model(path, dict(options.input_shapes)), values)
    with holding(values):
        parted = partition_model(model, options, source, keep_onnx=False, owned=True)
    del model, values
    return compile_partitioned(parted, options, source)


def lower(model: onnx.ModelProto, name: str = "model") -> Graph:
    """The IR as the code generator sees it (for tests and tools)."""
    return simplify(import_model(model, name))
