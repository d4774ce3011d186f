"""The bundle: every file of the generated C project, built in memory, then written at once."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from aot import __version__
from aot.csource.format import C_TYPES, c_array_body, c_comment, c_scalar, c_string
from aot.emit_c.model import ModelEmitter
from aot.emit_c.runtime_files import (
    SymbolConfig,
    aotc_symbols_header,
    defining_files,
    family_files,
    runtime_symbols_all,
    sources_by_build,
    vendor_digest,
)
from aot.emit_c.weights_file import ERRORS as WEIGHT_ERRORS
from aot.emit_c.weights_file import FORMAT_VERSION, HEADER_BYTES, LOAD_ALIGN, weights_file
from aot.errors import VendorError
from aot.ir import Graph
from aot.kernels.base import KernelChoice, kept_scratch_bytes
from aot.kernels.dsp_paths import layers, work
from aot.paths import kernel_file, runtime_dir
from aot.plan import ALIGNMENT, Plan
from aot.plan.pools import pool_array
from aot.select import Selection
from aot.vendor.base import Artifact

_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("aot.emit_c", "templates"),
    trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
)
# ONNX names reach the templates' C only through these (aot/csource/names.py).
_TEMPLATES.filters["c_comment"] = c_comment
_TEMPLATES.filters["c_string"] = c_string
_TEMPLATES.filters["c_type"] = lambda dtype: C_TYPES[dtype]


@dataclass
class Bundle:
    name: str
    files: dict[str, str | bytes | bytearray] = field(default_factory=dict)  # relative path -> content
    metadata: dict[str, Any] = field(default_factory=dict)
    # the sources of the layers with little of the model's work (aot/kernels/dsp_paths.py cold_sources) and the
    # model's own .c: what a --flash-budget level compiles for size (aot/flash.py); not written
    cold_sources: list[str] = field(default_factory=list)

    def write(self, directory: Path) -> None:
        """Write the bundle to `directory`, replacing it whole; nothing is left half-written."""
        directory = Path(directory)
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".aotc-", dir=directory.parent))
        try:
            for rel, content in self.files.items():
                path = tmp / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(content, (bytes, bytearray)):  # a weights blob is a bytearray
                    path.write_bytes(content)
                else:
                    path.write_text(content)
            if directory.exists():
                old = directory.with_name(directory.name + ".old-aotc")
                shutil.rmtree(old, ignore_errors=True)
                os.replace(directory, old)
                os.replace(tmp, directory)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, directory)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _io(graph: Graph, names: list[str], slots: dict[str, int], em: ModelEmitter) -> list[dict[str, Any]]:
    out = []
    for n in names:
        t = graph.tensors[n]
        out.append({"name": n, "field": em.io_field(n), "shape": list(t.shape), "dtype": t.dtype,
                    "nbytes": t.nbytes, "arena_offset": slots[n]})
        axis = graph.info.bounded.get(n)
        if axis is not None and n in graph.outputs:  # rows known at run time: the struct reports how many
            out[-1]["extent"] = {"axis": axis, "max": t.shape[axis], "field": em.extent_field(n)}
        if n in graph.outputs and n in graph.info.output_notes:  # e.g. ZipMap's maps given as their tensor
            out[-1].update(graph.info.output_notes[n])
        q = graph.info.io_quantization.get(n)
        if q is not None:  # a quantized input or output: real = scale * (q - zero_point)
            out[-1].update(scale=q["scale"], zero_point=q["zero_point"])
        st = graph.info.state.get(n)
        if st is not None and n in graph.inputs:  # state the caller carries: its next value and its start
            out[-1]["state"] = {"next": st["next"] if st["next"] in graph.outputs else None, **(
                {"fill": st["fill"]} if "fill" in st else {"file": f"state/{out[-1]['field']}.bin"}),
                "source": st["source"]}
    return out


def _states(graph: Graph, inputs: list[dict[str, Any]], name: str) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """What `<name>_reset_state` writes into each state input (issue 48), and the files of the start
    values that are not one value repeated (state/<field>.bin, the input's bytes)."""
    states, files = [], {}
    for io in inputs:
        st = io.get("state")
        if st is None:
            continue
        ctype, count = C_TYPES[io["dtype"]], io["nbytes"] // np.dtype(io["dtype"]).itemsize
        at = f"(uintptr_t)inputs->{io['field']}"  # the caller's buffer (the struct's pointers are const)
        ptr = f"(void *){at}"
        entry = {"name": io["name"], "field": io["field"], "next": st["next"], "source": st["source"]}
        if "fill" in st:
            value = np.array(st["fill"], io["dtype"])
            entry["what"] = f"{value.item()!r} in every element"
            if not value.tobytes().strip(b"\0"):
                entry["lines"] = [f"memset({ptr}, 0, {io['nbytes']}u);"]
            else:
                fill = c_scalar(value.item(), io["dtype"])
                entry["lines"] = [f"{ctype} *s = ({ctype} *){at};", "uint32_t i;",
                                  f"for (i = 0; i < {count}u; ++i) s[i] = ({ctype})({fill});"]
        else:
            values = np.array(graph.info.state[io["name"]]["values"], io["dtype"])
            array = f"{name}_{io['field']}_start"
            entry["what"] = f"{count} values ({st['file']})"
            entry["decl"] = f"static const {ctype} {array}[{count}] = {{\n{c_array_body(values)}\n}};"
            entry["lines"] = [f"memcpy({ptr}, {array}, {io['nbytes']}u);"]
            files[st["file"]] = values.astype(values.dtype.newbyteorder("<")).tobytes()
        states.append(entry)
    return states, files


def build_bundle(graph: Graph, selection: Selection, plan: Plan, *, target: str = "host",
                 source: str = "model.onnx", artifacts: dict[str, Artifact] | None = None,
                 threads: int = 1, fast_math: bool = False, host_isa: str | None = None,
                 widened_weights: bool = False, separate_weights: bool = False, portable: bool = False,
                 toolchain: str = "", general_paths: bool = False, plain_depthwise: bool = False,
                 compact_depthwise: bool = False, compact_conv: bool = False, portable_small: bool = False,
                 compact_fc: bool = False, small_fc: bool = False, fc_pairs: bool = False,
                 small_conv: int = 0, helium: bool = False, single_dwm: bool = False,
                 mve_off: tuple[str, ...] = (), portable_mve: int = 0, rq_conv_only: bool = False,
                 plain_m1: bool = True) -> Bundle:
    """Write the C project for `graph` (simplified and partitioned) as `plan` places it, with the
    kernels it chose; `artifacts` are the vendors' codegen results, by function symbol. `threads` > 1
    adds the thread pool (runtime_c/kernels/threads/aotc_threads.h) and its init/teardown to the C API; 1
    writes the same files as before threads existed. `fast_math` (--fast-math) is recorded in the
    metadata with the nodes whose kernels it let round more; `host_isa`, the ISA level a host bundle's
    kernels assume (aot/targets.py HOST_ISAS), as "host_isa"; `widened_weights` (--widened-weights) with the nodes
    whose weights are stored widened and their bytes; `separate_weights` (--separate-weights) writes every constant
    of the model's own code into src/<name>_weights.bin with a header (aot/emit_c/weights_file.py), which the
    library does not link: <name>_load_weights takes it at run time; `portable`, a --flash-budget level's
    portable kernels (built with AOTC_NO_INTRINSICS), and `toolchain`, a digest of the target's compile flags
    (targets.toolchain_digest): part of the kernel configuration that prefixes the runtime's names, as are the
    M-profile paths no layer takes (aot/kernels/dsp_paths.py; `general_paths`, a --flash-budget level: the
    specialised ones too; `plain_depthwise`: the depthwise ones all; `compact_depthwise`: all but the compact one;
    `compact_conv`: the conv's all but the compact one and the fused ADD's; `compact_fc`: FULLY_CONNECTED's DSP path,
    the compact one instead (`small_fc`: in its smallest loop); `fc_pairs`: in the portable kernels' smallest loops,
    FULLY_CONNECTED two outputs a turn where it does half the model's work; `small_conv` (1, 2): the compact conv one
    position at a time (2: one channel a turn) where the portable kernels' faster loops do not pay (else a level
    slower and larger than portable); `single_dwm`: the compact multiplier path one position a turn; `plain_m1`
    (with `plain_depthwise`): the plain depthwise loop's faster form takes depth multiplier 1 without divisions;
    `portable_small`: the portable kernels' smallest loops, AOTC_TFL_PORTABLE_FAST); `helium`: the target runs
    Helium's kernels (the M55), which change what those levels leave out (dsp_paths.left_out) and the params that only
    paths it does not run would read; `mve_off`: Helium's kernel families a level of the M55 leaves out
    (dsp_paths.MVE_FAMILIES), where the compact conv's smaller forms (`small_conv`) then apply whatever the portable
    loops (those take the smallest loops there); `portable_mve`: with `portable` on the M55, the portable conv and
    depthwise loops' dot products by Helium intrinsics (dsp_paths.PORTABLE_MVE, left out at the other portable
    levels there): 3 those and their outputs requantised 4 channels a vector (PORTABLE_MVE_RQ; the conv's fused ADD
    too, compiled only where the model has one), 2 the dot products alone, 1 the conv's alone (PORTABLE_MVE_DW 0); 4 as
    3, the conv 4 channels over every position by 8-bit dot products (PORTABLE_MVE_S8); 5 as 3, the convs 4
    channels over every position by 8-bit dot products in less code, where their layers are (dsp_paths.dot8_paths);
    `rq_conv_only` (with 3): the
    conv's outputs alone requantised by vectors, the depthwise's and fused ADD's in C (dsp_paths.rq_conv_only_paths).
    With `helium` (not `portable`), Helium's FULLY_CONNECTED one output at a time wherever it is
    (dsp_paths.fc_one_paths)."""
    artifacts = artifacts or {}
    name = graph.name
    from aot.kernels.dsp_paths import (
        PORTABLE_FAST,
        PORTABLE_MVE,
        PORTABLE_MVE_DW,
        PORTABLE_MVE_PW,
        PORTABLE_MVE_RQ,
        PORTABLE_MVE_S8,
        PORTABLE_MVE_WIN,
        dot8_paths,
        fc_one_paths,
        fc_pairs_pay,
        layers,
        left_out,
        mult4_layers,
        portable_fast_pays,
        rq_conv_only_paths,
    )

    paths = left_out(graph, plan.choices, general_paths, plain_depthwise, compact_depthwise, compact_conv, compact_fc,
                     small_fc, small_conv if small_conv and (mve_off or not portable_fast_pays(graph)) else 0, helium,
                     single_dwm, mve_off, plain_m1)
    if helium and not portable:
        paths = tuple(sorted({*paths, *fc_one_paths(graph, plan.choices)}))
    if portable_small or portable and (helium or not portable_fast_pays(graph)):  # the portable kernels' smallest
        # loops (a --flash-budget level's, aot/flash.py; at the portable level too where the faster ones take little
        # work, and on the M55, where gcc's own vectorising of the small loops ran KWS DS-CNN 13 % faster)
        paths = tuple(sorted({*paths, PORTABLE_FAST,
                              *([] if fc_pairs and fc_pairs_pay(graph) else ["AOTC_TFL_FC_PAIRS"])}))
    if portable and helium:  # the forms the M55's portable levels leave out (aot/flash.py), the conv's fused ADD where
        # the model has none (its code then not compiled: about 330 B on KWS DS-CNN)
        fused = any(c.kernel == "aotc_tfl_conv_add_s8" for _, c in layers(graph, plan.choices))
        paths = tuple(sorted({*paths, *([PORTABLE_MVE] if not portable_mve else []),
                              *([PORTABLE_MVE_RQ] if portable_mve < 3 else []),
                              *([PORTABLE_MVE_DW] if portable_mve < 2 else []),
                              *([PORTABLE_MVE_S8] if portable_mve != 4 else []),
                              *(dot8_paths(graph) if portable_mve == 5 else [PORTABLE_MVE_PW, PORTABLE_MVE_WIN]),
                              *(rq_conv_only_paths(graph, fused) if rq_conv_only else []),
                              *([] if fused else ["AOTC_TFL_CONV_RESIDUAL"])}))
    if portable and not mult4_layers(graph):  # (the portable kernels' plain depthwise path for multipliers 4, 8, ...)
        paths = tuple(sorted({*paths, "AOTC_TFL_DW_LOOP_MULT4"}))
    em = ModelEmitter(graph, name, selection, plan, artifacts, separate_weights=separate_weights,
                      paths_left_out=paths, helium=helium)
    em.emit_nodes()
    separate = None
    if separate_weights:
        wf = weights_file(name, em.weights.blob_layout(), bytes(em.weights.blob),
                          "\n".join([*em.weight_decls(), *em.decls, *em.body]))
        separate = {"model_id": ", ".join(f"0x{b:02x}" for b in wf.model_id), "model_hex": wf.model_id.hex(),
                    "nbytes": wf.nbytes, "file_bytes": len(wf.data), "header": HEADER_BYTES,
                    "version": FORMAT_VERSION, "align": LOAD_ALIGN, "errors": list(WEIGHT_ERRORS.items()),
                    "crc32": wf.crc32, "data": wf.data}
    inputs, outputs = _io(graph, graph.inputs, plan.offsets, em), _io(graph, graph.outputs, plan.output_offsets, em)
    states, state_files = _states(graph, inputs, name)
    copy_in, copy_out = em.io_copies()
    weights_bytes = em.weights.nbytes
    weights_bytes += sum(art.weights_bytes if (art := artifacts.get(sym)) is not None and art.weights_bytes is not None
                         else sum(fn.graph.tensors[t].nbytes for t in fn.graph.constants_read())
                         for sym, fn in graph.functions.items())
    families = sorted(em.families | ({"threads"} if threads > 1 else set()))
    kernel_files = list(dict.fromkeys(f for fam in families for f in family_files(fam)))  # in runtime_c/kernels
    vendor_files: dict[str, str | bytes] = {}
    written_by: dict[str, str] = {}  # vendor file -> the first function whose artifact has it
    vendor_headers, vendor_sources, vendor_cmake, vendor_dirs = [], [], [], []
    for sym, art in artifacts.items():
        vdir = f"vendor/{graph.functions[sym].compiler}"
        for rel, content in art.files.items():
            path = f"{vdir}/{rel}"
            if path in vendor_files and vendor_files[path] != content:  # a library file shared by functions
                raise VendorError(graph.functions[sym].compiler, f"codegen of {sym}",
                                  f"writes {path} with other contents than {written_by[path]}'s codegen did; "
                                  "files shared by functions must be the same, give a function's own file a name "
                                  "of its own (its symbol)")
            vendor_files[path] = content
            written_by.setdefault(path, sym)
        vendor_sources += [f"{vdir}/{s}" for s in art.sources]
        if art.header and art.header not in vendor_headers:
            vendor_headers.append(art.header)
        if art.cmake and art.cmake not in vendor_cmake:
            vendor_cmake.append(art.cmake)
        if vdir not in vendor_dirs:
            vendor_dirs.append(vdir)
    config = symbol_config(SymbolConfig(target, host_isa, threads, portable, toolchain, paths=paths), graph, artifacts)
    ctx = dict(
        version=__version__, source=c_comment(Path(source).name), name=name, NAME=name.upper(),
        opset=graph.info.opset if graph.info.opset is not None else "?",
        arena_bytes=plan.arena_bytes, arena_align=ALIGNMENT,
        lower_bound_bytes=plan.lower_bound_bytes, peak_step=plan.peak_step, weights_bytes=weights_bytes,
        inputs=inputs, outputs=outputs, headers=[f"aotc_{f}.h" for f in families],
        weight_decls=em.weight_decls(), decls=em.decls, body=em.body, pointer_decls=em.pointer_decls(),
        copy_in=copy_in, copy_out=copy_out, assumes=_assumptions(plan),
        symbols_config=config.hash8, host_isa=host_isa,
        kernels=families, threads=threads,
        blob=bool(em.weights.blob_offsets) and not separate_weights, nbytes=len(em.weights.blob), separate=separate,
        blob_sha256=hashlib.sha256(em.weights.blob).hexdigest(),
        inputs_bytes=sum(i["nbytes"] for i in inputs), outputs_bytes=sum(o["nbytes"] for o in outputs),
        vendor_headers=vendor_headers, vendor_sources=sorted(dict.fromkeys(vendor_sources)),
        vendor_cmake="\n".join(vendor_cmake), vendor_include_dirs=vendor_dirs,
        vendor_state_bytes=plan.arena_bytes - min(plan.state_offsets.values(), default=plan.arena_bytes),
        vendor_inits=[{"fn": s, "state": plan.state_offsets.get(s)} for s, a in artifacts.items()
                      if a.has_init or a.state_bytes > 0],
        vendor_counters=[{"name": f"{s}.{k}", "fn": f} for s, a in artifacts.items() for k, f in a.counters.items()],
        states=states,
        pools=[{"name": p.name, "nbytes": p.nbytes, "section": p.section, "array": pool_array(name, p.name)}
               for p in plan.pools],
    )
    b = Bundle(name)
    b.files[f"include/{name}.h"] = _TEMPLATES.get_template("header.h.j2").render(ctx)
    b.files[f"src/{name}.c"] = _TEMPLATES.get_template("model.c.j2").render(ctx)
    b.files["src/runner.c"] = _TEMPLATES.get_template("runner.c.j2").render(ctx)
    calling = [b.files[f"src/{name}.c"], *(c for c in vendor_files.values() if isinstance(c, str))]
    ctx["kernel_sources"], ctx["kernel_sources_without_avx512f"] = sources_by_build(
        [f for f in kernel_files if f.endswith(".c")], calling)
    shipped = {*ctx["kernel_sources"], *ctx["kernel_sources_without_avx512f"]}
    kernel_files = [f for f in kernel_files if not f.endswith(".c") or f in shipped]
    b.files["CMakeLists.txt"] = _TEMPLATES.get_template("CMakeLists.txt.j2").render(ctx)
    # the sources of the layers with little of the work: a --flash-budget level compiles them for size
    b.cold_sources = [f"src/{name}.c", *(f"runtime/{f}" for f in cold_sources(
        graph, plan.choices, [*ctx["kernel_sources"], *ctx["kernel_sources_without_avx512f"]]))]
    if separate is not None:  # the weights file, apart from the library; the runner links it as firmware would
        b.files[f"src/{name}_weights.bin"] = separate["data"]
        b.files[f"src/{name}_runner_weights.S"] = _TEMPLATES.get_template("runner_weights.S.j2").render(ctx)
    elif em.weights.blob_offsets:
        b.files[f"src/{name}_weights.S"] = _TEMPLATES.get_template("weights.S.j2").render(ctx)
        b.files[f"src/{name}_weights.bin"] = em.weights.blob
    b.files.update(vendor_files)
    b.files.update(state_files)
    rt = runtime_dir()
    for h in ("aotc_common.h", "dltensor.h"):
        b.files[f"runtime/{h}"] = (rt / "include" / h).read_text()
    # every global symbol of the runtime's C under its kernel configuration's prefix (SymbolConfig): one file
    # for every bundle of the configuration
    b.files["runtime/aotc_symbols.h"] = aotc_symbols_header(config)
    for f in kernel_files:
        b.files[f"runtime/{f}"] = kernel_file(f).read_text()
    b.metadata = {
        "name": name,
        "aotc_version": __version__,
        "source": str(source),
        "opset": graph.info.opset,
        "target": target,
        **({"host_isa": host_isa} if host_isa else {}),
        # the prefix of the runtime C's global names in the objects (runtime/aotc_symbols.h): its kernel
        # configuration's; bundles with the same one share their kernels' code when linked into one program
        "symbol_prefix": config.prefix,
        "inputs": inputs,
        "outputs": outputs,
        # inputs the model declares empty (a zero-size dimension): constants, not arguments of <name>_run
        **({"pruned_inputs": graph.info.pruned_inputs} if graph.info.pruned_inputs else {}),
        # inputs pinned at compile time (--input-value): constants of the value recorded, not arguments
        **({"pinned_inputs": graph.info.pinned_inputs} if graph.info.pinned_inputs else {}),
        # sequence / optional inputs and outputs: which of "inputs" / "outputs" hold each (a sequence x of N
        # tensors is x.0 .. x.N-1; an absent optional is none)
        **({"structured_io": graph.info.structured_io} if graph.info.structured_io else {}),
        "memory": {
            "arena_bytes": plan.arena_bytes,
            "weights_bytes": weights_bytes,
            # --separate-weights: the model's weights in a file apart from the library (<name>_load_weights)
            **({"separate_weights": {"file": f"src/{name}_weights.bin", "bytes": separate["file_bytes"],
                                     "weights_bytes": separate["nbytes"], "model_id": separate["model_hex"],
                                     "crc32": separate["crc32"], "format_version": FORMAT_VERSION,
                                     "alignment": LOAD_ALIGN}} if separate is not None else {}),
            "lower_bound_bytes": plan.lower_bound_bytes,
            "tight_bound_bytes": plan.tight_bound_bytes,
            "io_bytes": plan.io_bytes,
            "io_in_arena": True,  # inputs and outputs have slots in the arena (arena_offset)
            "peak_step": plan.peak_step,
            "alignment": ALIGNMENT,
            # vendor functions' persistent state (Artifact.state_bytes), in the arena's last bytes: symbol -> offset
            **({"vendor_state": {s: {"offset": o, "bytes": artifacts[s].state_bytes}
                                 for s, o in plan.state_offsets.items()}} if plan.state_offsets else {}),
            # --ram-budget: the budget, the arena without it, and what meeting it traded
            **({"ram_budget": plan.budget} if plan.budget is not None else {}),
            # --memory-pool or a board's memory map (aot/plan/pools.py): bytes per pool, fastest first; the
            # first is the arena (arena_bytes), the others static arrays in sections of their own
            **({"pools": [p.as_dict(plan) for p in plan.pools]} if plan.pools else {}),
        },
        # the arena's bytes per thread: the Winograd kernels' lanes (KernelChoice.kept), else none; the pool's
        # own state is static memory of threads.c, not arena
        **({"threads": {"count": threads, "pool": "pthreads, N - 1 workers started by <name>_threads_init",
                        "threaded_kernels": sorted({c.kernel for c in plan.choices.values() if c.facts.threaded}),
                        "arena_bytes_per_thread": kept_scratch_bytes(plan.choices.values()) // threads}}
           if threads > 1 else {}),
        # --fast-math: the nodes that took a kernel rounding more than a direct sum
        **({"fast_math": {"nodes": sorted(n for n, c in plan.choices.items() if c.facts.rounds_more)}}
           if fast_math else {}),
        # --widened-weights: the nodes whose weights are stored widened too, and those constants' bytes (in
        # weights_bytes); none where a --flash-budget dropped them
        **({"widened_weights": _widened(graph, plan)} if widened_weights else {}),
        # --quantized-io: the inputs and outputs made integer, and why the others stayed float
        **({"quantized_io": graph.info.quantized_io} if graph.info.quantized_io is not None else {}),
        # the vendors' graph passes that changed the model before partitioning (Vendor.graph_passes)
        **({"vendor_graph_passes": graph.info.vendor_graph_passes} if graph.info.vendor_graph_passes else {}),
        "partition": [_function_entry(graph, sym, artifacts.get(sym)) for sym in graph.functions],
        "nodes": [{"name": n.name, "op": n.op, "compiler": "host"} for n in graph.nodes],
    }
    b.metadata["source_map"] = _source_map(b.files[f"src/{name}.c"], graph)
    b.files["plan.txt"] = plan.chart()
    b.files["metadata.json"] = json.dumps(b.metadata, indent=2) + "\n"
    return b


def cold_sources(graph: Graph, choices: dict[str, KernelChoice], sources: Iterable[str],
                 share: float = 0.05) -> list[str]:
    """The bundle's kernel sources (runtime/<file>.c) whose layers do under `share` of the model's work
    (aot/kernels/dsp_paths.py work), the files a --flash-budget level compiles for size (aot/flash.py "cold-Os"): a
    KWS DS-CNN's pool, FULLY_CONNECTED and softmax, under 1 % of its multiply-accumulates."""
    by_file: dict[str, int] = {}
    total = 0
    for node, c in layers(graph, choices):
        w = work(node, graph)
        total += w
        for f in defining_files(c.kernel):
            by_file[f] = by_file.get(f, 0) + w
    return sorted(s for s in sources if by_file.get(Path(s).name, 0) < share * max(total, 1))


def symbol_config(base: SymbolConfig, graph: Graph, artifacts: dict[str, Artifact]) -> SymbolConfig:
    """The bundle's kernel configuration: `base` with, for a vendor whose runtime defines global symbols beyond
    the built-in vendors' (Artifact.symbols), those and a digest of that runtime's files."""
    builtin = set(runtime_symbols_all())
    extra: set[str] = set()
    keyed: list[tuple[str, str | bytes]] = []
    for sym, art in artifacts.items():
        if own := set(art.symbols) - builtin:
            extra |= own
            vdir = f"vendor/{graph.functions[sym].compiler}"
            keyed += [(f"{vdir}/{rel}", c) for rel, c in art.files.items() if not art.runtime or rel in art.runtime]
    if not extra:
        return base
    return dataclasses.replace(base, vendor_symbols=tuple(sorted(extra)),
                               vendor_digest=vendor_digest(dict(keyed).items()))


def _widened(graph: Graph, plan: Plan) -> dict[str, Any]:
    """metadata.json's widened_weights: the nodes whose kernels read weights widened at compile time, and the
    flash those take (with their requantisation's terms where emitted)."""
    from aot.kernels.tflite_bands import run_nodes
    from aot.kernels.tflite_int8 import widened_bytes

    nodes = []
    for n in graph.nodes:
        if (c := plan.choices.get(n.name)) is None:
            continue
        inner = getattr(c.detail, "inner", None)  # a run in row bands (aot/kernels/tflite_bands.py): its layers'
        layers = [(m, inner[m.name]) for m in run_nodes(n)] if inner else [(n, c)]
        nodes += [(m, mc.detail) for m, mc in layers if mc.facts.widened_weights]
    return {"nodes": [n.name for n, _ in nodes], "bytes": sum(widened_bytes(n, graph, t) for n, t in nodes)}


_NODE_COMMENT = re.compile(r"^\s*/\* node (\d+): ")


def _source_map(c_text: str, graph: Graph) -> list[dict[str, Any]]:
    """Which lines of src/<name>.c run which ONNX node: each node's code starts at its
    `/* node K: ...` comment and runs to the next one (1-based, inclusive)."""
    starts = [(n, int(m.group(1))) for n, line in enumerate(c_text.splitlines(), 1)
              if (m := _NODE_COMMENT.match(line))]
    last_line = next(n for n, line in reversed(list(enumerate(c_text.splitlines(), 1))) if "return 0;" in line)
    out = []
    for k, (line, index) in enumerate(starts):
        node = graph.nodes[index]
        end = starts[k + 1][0] - 1 if k + 1 < len(starts) else last_line - 1
        out.append({"node": node.name, "op": node.op, "onnx_nodes": list(node.sources()),
                    "lines": [line, end]})
    return out


def _assumptions(plan: Plan) -> list[tuple[str, int]]:
    """The kernel-header macros the chosen kernels rely on, each once."""
    seen: dict[str, int] = {}
    for choice in plan.choices.values():
        for macro, value in choice.assumes.items():
            if seen.setdefault(macro, value) != value:
                raise AssertionError(f"kernel choices disagree on {macro}: {seen[macro]} and {value}")
    return sorted(seen.items())


def _function_entry(graph: Graph, symbol: str, art: Artifact | None) -> dict[str, Any]:
    fn = graph.functions[symbol]
    g = fn.graph
    entry: dict[str, Any] = {
        "symbol": symbol,
        "compiler": fn.compiler,
        "nodes": [s for n in g.nodes for s in n.sources()],
        "composites": [{"name": n.attrs["composite"], "nodes": list(n.sources())}
                       for n in g.nodes if n.op == "Composite"],
        "ops": [n.attrs["composite"] if n.op == "Composite" else n.op for n in g.nodes],
        "inputs": [{"name": t, "nbytes": g.tensors[t].nbytes} for t in g.inputs],
        "outputs": [{"name": t, "nbytes": g.tensors[t].nbytes} for t in g.outputs],
    }
    if art is not None:
        entry["workspace_bytes"] = art.workspace_bytes
        entry.update(art.report)
        if art.taps:  # tensors inside the function its debug build reports (aotc compare)
            entry["taps"] = art.taps
    return entry
