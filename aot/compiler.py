"""The pipeline, one plain function per stage: ONNX -> IR -> simplified -> planned C bundle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import onnx

from aot.emit_c import Bundle, build_bundle
from aot.errors import AotcError
from aot.frontend import import_model, load_model, sanitize
from aot.ir import Graph
from aot.kernels.base import TargetTraits
from aot.partition import Partitioned, partition_for
from aot.partition.manual import load_annotations
from aot.partition.serialize import from_onnx, stored_name
from aot.passes import HOST_PIPELINE, simplify
from aot.plan import Plan, plan_memory
from aot.select import Selection, op_memory, select_kernels
from aot.targets import fit_bundle, get_target
from aot.vendor import Artifact, CodegenContext, Vendor, check_vendor, find_vendor


@dataclass(frozen=True)
class Options:
    name: str | None = None  # C prefix of the bundle; default: the model file's stem
    target: str = "host"
    vendors: tuple[str | Vendor, ...] = ()  # names (found by entry point) or Vendor objects, by priority
    annotate: str | None = None  # manual annotation file (JSON)
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # static shapes for dynamic inputs
    # kernel scratch any step may have beyond its spare memory (aot/plan/planner.py). 0, the
    # default, holds the arena to the tight bound: the conv and GEMM kernels need no scratch to be
    # fast, and the others size theirs to the memory spare at their step. More lets kernels take
    # their largest blocks everywhere (a few percent on some models, for RAM).
    scratch_floor: int = 0


def partition_model(model: onnx.ModelProto, options: Options = Options(),
                    source: str = "model.onnx") -> Partitioned:
    """Frontend, simplification and partitioning: the graph whose functions go to vendors, with the
    vendors (by priority) whose codegen takes them and why nodes stayed on the host.

    A model written by `aotc partition` carries its regions, their symbols and its C name; they are
    honoured like manual annotations, and what it left on the host stays there."""
    file_name = stored_name(model)
    model, annotations, file_vendors = from_onnx(model)
    vendors: list[Vendor] = []
    target = get_target(options.target)
    for v in [*options.vendors, *file_vendors]:
        v = find_vendor(v) if isinstance(v, str) else v
        check_vendor(v)
        v.check_target(target)
        if all(v.name != known.name for known in vendors):
            vendors.append(v)
    if options.annotate:
        annotations = annotations + load_annotations(options.annotate)
    name = sanitize(options.name or file_name or Path(source).stem)
    graph = simplify(import_model(model, name, dict(options.input_shapes)))
    return partition_for(graph, vendors, annotations, name)


def codegen_functions(graph: Graph, target: str, vendors: Sequence[Vendor]) -> dict[str, Artifact]:
    """Each vendor's transform and codegen over its functions (`vendors`: Partitioned.vendors).
    Constants a codegen put in its context's weight store ship with its artifact: the blob, the
    file that links it in and CMake lines, when the store has a blob."""
    by_name = {v.name: v for v in vendors}
    artifacts: dict[str, Artifact] = {}
    for symbol, fn in list(graph.functions.items()):
        v = by_name.get(fn.compiler)
        if v is None:
            raise AotcError(f"function {symbol} is for vendor {fn.compiler}, which is not among the vendors "
                            f"({', '.join(by_name) or 'none'})")
        if v.transform:
            fn = graph.functions[symbol] = v.transform(fn)
        ctx = CodegenContext(graph.name, target, f"vendor/{v.name}", symbol)
        art = _with_weights(v.codegen(fn, ctx), ctx)
        artifacts[symbol] = replace(art, taps=list(ctx.taps)) if ctx.taps else art
    return artifacts


def _with_weights(art: Artifact, ctx: CodegenContext) -> Artifact:
    files = ctx.weights.files()
    if not files or all(f in art.files for f in files):
        return art
    cmake = "\n".join(c for c in (art.cmake.rstrip("\n"), ctx.weights.cmake(ctx.vendor_dir)) if c)
    return replace(art, files={**art.files, **files}, sources=[*art.sources, *ctx.weights.sources()], cmake=cmake)


def select_and_plan(graph: Graph, target: str, artifacts: dict[str, Artifact],
                    scratch_floor: int = 0) -> tuple[Selection, Plan]:
    """The host kernels each node may run (select), then the arena, with the kernel each node
    runs at the memory its step can spare (plan)."""
    workspace = {symbol: a.workspace_bytes for symbol, a in artifacts.items()}
    selection = select_kernels(graph, TargetTraits(vector_unit=get_target(target).vector_unit), workspace)
    return selection, plan_memory(graph, op_memory(selection), scratch_floor)


def compile_model(model: onnx.ModelProto, options: Options = Options(), source: str = "model.onnx") -> Bundle:
    parted = partition_model(model, options, source)
    graph = simplify(parted.graph, HOST_PIPELINE)  # fusion for the host kernels, after vendors took their nodes
    artifacts = codegen_functions(graph, options.target, parted.vendors)
    selection, plan = select_and_plan(graph, options.target, artifacts, options.scratch_floor)
    bundle = build_bundle(graph, selection, plan, target=options.target, source=source, artifacts=artifacts)
    return fit_bundle(bundle, options.target)  # refuses a model too big for the board


def compile_file(path: str | Path, options: Options = Options()) -> Bundle:
    get_target(options.target)  # an unknown target is refused before any work
    return compile_model(load_model(path), options, source=str(Path(path).resolve()))


def lower(model: onnx.ModelProto, name: str = "model") -> Graph:
    """The IR as the code generator sees it (for tests and tools)."""
    return simplify(import_model(model, name))
