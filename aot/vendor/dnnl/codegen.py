"""dnnl codegen: a function becomes static const tables that the dnnl runtime turns into oneDNN
primitives once (in <symbol>_init) and executes on every call.

    lower()      graph -> tensors, ops (with post-ops), constants          (lower.py)
    tables       those as C: aotc_dnnl_tensor[], aotc_dnnl_op[]
    probe        the tables + runtime, run once here to size the workspace (probe.py)
    C file       weights, tables, the workspace plan, <symbol>_init and <symbol>

Weights go through the context's weight store: small ones printed as exact hex floats, large
ones in a binary blob linked in with .incbin (the host's policy), so big models never pass
through the C compiler as text. C text comes from the context's `format` helpers.
"""

from __future__ import annotations

from types import ModuleType

from aot.ir import Function
from aot.paths import kernel_file, runtime_dir
from aot.vendor.base import Artifact, CodegenContext, runtime_symbols
from aot.vendor.dnnl.lower import Lowered, Op, lower
from aot.vendor.dnnl.probe import ProbeResult, find_onednn, plan, run_probe

CMAKE = """\
# dnnl vendor: oneDNN 3.x (pip install aotc[dnnl]: the onednn-cpu-gomp wheels, found through
# CMAKE_PREFIX_PATH=<python prefix>, which `aotc` passes when it configures this build).
# DNNL_ROOT, as `aotc` read it to size the workspace, is the only place looked at when set.
if(NOT "$ENV{DNNL_ROOT}" STREQUAL "")
  find_package(dnnl 3 CONFIG QUIET PATHS "$ENV{DNNL_ROOT}" NO_DEFAULT_PATH)
  set(AOTC_DNNL_WHERE " (with its CMake config) in DNNL_ROOT=$ENV{DNNL_ROOT}")
else()
  find_package(dnnl 3 CONFIG QUIET)
endif()
if(NOT TARGET DNNL::dnnl)
  message(FATAL_ERROR "aotc dnnl vendor: oneDNN 3.x not found${AOTC_DNNL_WHERE}; "
                      "install it with pip: the aotc[dnnl] extra (in a checkout: pip install -e '.[dnnl]') "
                      "(and configure with -DCMAKE_PREFIX_PATH=<that python's sys.prefix>)")
endif()
# dlopen and dladdr (the runtime finds OpenMP's thread count functions through them): libdl before glibc 2.34
target_link_libraries(${AOTC_TARGET} PUBLIC DNNL::dnnl ${CMAKE_DL_LIBS})
"""


DNNL_TYPES = {"float32": "dnnl_f32", "int8": "dnnl_s8", "uint8": "dnnl_u8", "int32": "dnnl_s32"}


def _ints(values: list[int] | tuple[int, ...]) -> str:
    return "{" + ", ".join(str(int(v)) for v in values) + "}"


def _op_fields(lo: Lowered, op: Op, c: ModuleType) -> list[str]:
    f = [f".kind = AOTC_DNNL_{op.kind}"]
    if op.alg != "0":
        f.append(f".alg = {op.alg}")
    ids = [lo.tensor_id(i) if i else -1 for i in op.inputs]
    f += [f".n_inputs = {len(ids)}", f".inputs = {_ints(ids)}", f".output = {lo.tensor_id(op.output)}"]
    for key, value in op.fields.items():
        if key in ("strides", "kernel", "dilation", "pad_l", "pad_r"):
            f.append(f".{key} = {_ints(value)}")
        elif key in ("alpha", "beta", "k", "epsilon"):
            f.append(f".{key} = {c.c_float(value)}")
        else:
            f.append(f".{key} = {value}")
    if op.post:
        posts = []
        for p in op.post:
            if p.kind == "SUM":
                posts.append(f"{{.kind = AOTC_DNNL_POST_SUM, .tensor = {lo.tensor_id(p.tensor)}}}")
            elif p.kind == "SWISH":
                posts.append(f"{{.kind = AOTC_DNNL_POST_SWISH, .alpha = {c.c_float(p.alpha)}}}")
            elif p.kind == "BINARY":
                posts.append(f"{{.kind = AOTC_DNNL_POST_BINARY, .alg = {p.alg}, .tensor = {lo.tensor_id(p.tensor)}}}")
            else:
                posts.append(f"{{.kind = AOTC_DNNL_POST_ELTWISE, .alg = {p.alg}, .alpha = {c.c_float(p.alpha)}, "
                             f".beta = {c.c_float(p.beta)}}}")
        f += [f".n_post = {len(op.post)}", f".post = {{{', '.join(posts)}}}"]
    return f


def tables(lo: Lowered, sym: str, c: ModuleType) -> str:
    """The region as C data: what the probe and the final file share (`c`: CodegenContext.format)."""
    lines = [f"static const aotc_dnnl_tensor {sym}_tensors[] = {{"]
    for k, (name, t) in enumerate(lo.tensors.items()):
        shape = ",".join(map(str, t.shape))
        lines.append(f'    /* {k}: "{c.c_comment(name)}" {t.dtype}[{shape}] */')
        lines.append(f"    {{.ndims = {len(t.shape)}, .dims = {_ints(t.shape or (1,))}, "
                     f".dtype = {DNNL_TYPES[t.dtype]}, .kind = AOTC_DNNL_{t.kind}, .index = {t.index}, "
                     f".last_use = {t.last_use}}},")
    lines += ["};", "", f"static const aotc_dnnl_op {sym}_ops[] = {{"]
    for k, op in enumerate(lo.ops):
        lines.append(f"    /* {k}: {c.c_comment(op.what)} */")
        lines.append("    {" + ", ".join(_op_fields(lo, op, c)) + "},")
    lines.append("};")
    return "\n".join(lines)


def _capacity(lo: Lowered) -> tuple[int, int]:
    """Static room for slots and steps: every op may add boundary reorders, views, a scratchpad."""
    return len(lo.tensors) + 8 * len(lo.ops) + 8, 4 * len(lo.ops) + 4


def _state(lo: Lowered, sym: str, weights: str, plan_name: str, n_plan: int) -> str:
    slots, steps = _capacity(lo)
    return (f"static aotc_dnnl_slot {sym}_slots[{slots}];\n"
            f"static aotc_dnnl_step {sym}_steps[{steps}];\n"
            f"static int32_t {sym}_tensor_slot[{len(lo.tensors)}];\n"
            f"static const aotc_dnnl_net_desc {sym}_desc = {{\"{sym}\", {sym}_tensors, {len(lo.tensors)}, "
            f"{sym}_ops, {len(lo.ops)}, {weights}, {plan_name}, {n_plan}}};\n"
            f"static aotc_dnnl_net {sym}_net = {{NULL, {sym}_slots, 0, {slots}, {sym}_steps, 0, {steps}, "
            f"{sym}_tensor_slot, 0, 0}};")


def probe_source(lo: Lowered, sym: str, c: ModuleType) -> str:
    return "\n".join([
        "/* Workspace probe (aot/vendor/dnnl/probe.py): builds the region without weights, prints its buffers. */",
        "#include <math.h>", "#include <stdio.h>", '#include "aotc_dnnl.h"', "",
        tables(lo, sym, c), "", _state(lo, sym, "NULL", "NULL", 0), "",
        "int main(void) {",
        f"    if (aotc_dnnl_net_init(&{sym}_net, &{sym}_desc) != 0) return 1;",
        f"    aotc_dnnl_net_print_plan(&{sym}_net);",
        "    return 0;",
        "}", ""])


def _weights(lo: Lowered, ctx: CodegenContext) -> list[str]:
    """The C expression of each constant, from the context's weight store."""
    exprs = []
    for k, (name, arr) in enumerate(lo.consts):
        shape = ",".join(map(str, arr.shape))
        exprs.append(ctx.weights.add(f"{ctx.symbol}_w{k}", arr, f'"{name}" {arr.dtype.name}[{shape}]'))
    return exprs


def _reorders(probed: ProbeResult) -> str:
    """Reorders each run pays, by place: "3 (entry 1, exit 1, inside 1)" (`aotc partition --show`);
    weights are reordered once, at init, and are not counted."""
    r = probed.reorders()
    return f"{sum(r.values())} (entry {r['entry']}, exit {r['exit']}, inside {r['inside']})"


def _layout_hints(lo: Lowered, probed: ProbeResult) -> list[Op]:
    """Ask convolutions for the layout their result is later reordered into, where the probe saw
    such a reorder between two primitives of the region: a tensor some op reads in another layout
    than its producer picked ("any") is traced back through ops that keep their source's layout
    (pooling, eltwise, normalisation, binary) to the convolution that chose it. EfficientNet's and
    MobileNet's stems chose nChw16c and their depthwise convolutions read nhwc; ResNet-18's stem
    and max pooling chose nChw16c, its 3x3 convolutions (brgemm) nhwc. Returns the ops given a
    hint (`layout`: 1 + the runtime's LAYOUTS index; the runtime falls back to "any" when oneDNN
    has no kernel for it)."""
    producer = {op.output: op for op in lo.ops}
    names = list(lo.tensors)
    hinted: list[Op] = []
    for step in probed.trace:
        if step.kind != "reorder" or step.where != "inside" or step.tensor < 0 or step.layout < 1:
            continue  # plain (a view, a matmul) is no layout to ask a convolution for
        name, seen = names[step.tensor], set()
        while (op := producer.get(name)) is not None and name not in seen:
            seen.add(name)
            if op.kind == "CONV":
                if not op.fields.get("quant") and "layout" not in op.fields:
                    op.fields["layout"] = step.layout + 1
                    hinted.append(op)
                break
            if op.kind not in ("POOL", "ELTWISE", "BNORM", "BINARY"):
                break
            name = op.inputs[0]
    return hinted


def _probe(lo: Lowered, sym: str, c: ModuleType, threads: int) -> ProbeResult:
    """The probe, run again with layout hints when the first run found reorders inside the region;
    the hints are kept only when they remove some and move none to the region's entry. A stem
    convolution on 3 channels asked for nhwc also reads its input in nhwc (a reorder at entry
    instead of inside), and is slower writing it: ResNet-18's took 2.27 ms instead of 2.10 ms for
    the 0.05 ms of reorders it saved (oneDNN 3.2, AVX-512, minimum over runs)."""
    probed = run_probe(probe_source(lo, sym, c), sym, threads)
    hinted = _layout_hints(lo, probed)
    if hinted:
        again = run_probe(probe_source(lo, sym, c), sym, threads)
        before, after = probed.reorders(), again.reorders()
        if after["inside"] < before["inside"] and after["entry"] <= before["entry"] \
                and sum(after.values()) < sum(before.values()):
            return again
        for op in hinted:
            del op.fields["layout"]
    return probed


def codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    c = ctx.format
    sym = c.c_ident(fn.global_symbol)
    lo = lower(fn)
    probed = _probe(lo, sym, c, ctx.threads)
    offsets, workspace = plan(probed.buffers, probed.steps)
    n_plan = max((b.slot for b in probed.buffers), default=-1) + 1
    entries = {b.slot: (offsets[b.slot], b.bytes) for b in probed.buffers}
    plan_rows = [f"    {{{entries[s][0]}u, {entries[s][1]}u}}," if s in entries else "    {0u, 0u},"
                 for s in range(n_plan)]
    exprs = _weights(lo, ctx)
    weights = f"{sym}_consts" if exprs else "NULL"
    dnnl = find_onednn()
    header = f"{sym}.h"
    proto = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace)"
    source = "\n".join([
        f"/* Generated by the dnnl vendor for function {sym} of model {ctx.model_name}. Do not edit.",
        f" * {len(lo.ops)} oneDNN ops; the tables below are turned into primitives by {sym}_init",
        " * (runtime_c/vendor/dnnl/aotc_dnnl.c).",
        f" * Workspace: {workspace} bytes for {len(probed.buffers)} buffers, measured by running this",
        f" * region's init on the compiling machine (oneDNN {dnnl.version if dnnl else '?'}); init checks they fit. */",
        "#include <math.h>", "#include <stddef.h>", *ctx.weights_includes, "",
        '#include "aotc_dnnl.h"', f'#include "{header}"', "",
        *[d + "\n" for d in ctx.weights.declarations()],
        *([f"static const void *const {sym}_consts[] = {{\n" + "".join(f"    {e},\n" for e in exprs) + "};\n"]
          if exprs else []),
        tables(lo, sym, c), "",
        "/* workspace buffers by slot: {offset, bytes} */",
        f"static const aotc_dnnl_plan_entry {sym}_plan[{max(n_plan, 1)}] = {{",
        *(plan_rows or ["    {0u, 0u},"]),
        "};", "",
        _state(lo, sym, weights, f"{sym}_plan", n_plan), "",
        f"int32_t {sym}_init(void) {{ return aotc_dnnl_net_init(&{sym}_net, &{sym}_desc); }}", "",
        f"{proto} {{",
        f"    return aotc_dnnl_net_run(&{sym}_net, inputs, outputs, workspace);",
        "}", ""])
    guard = sym.upper() + "_H"
    header_text = (f"/* dnnl function {sym}: DLTensor in, DLTensor out (see aot/vendor/base.py). */\n"
                   f"#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n\n#include \"dltensor.h\"\n\n"
                   f"int32_t {sym}_init(void);\n{proto};\n\n#endif /* {guard} */\n")
    rt = runtime_dir() / "vendor" / "dnnl"
    counts = {}
    for op in lo.ops:
        counts[op.kind.lower()] = counts.get(op.kind.lower(), 0) + 1
    return Artifact(
        files={f"{sym}.c": source, header: header_text,
               "aotc_dnnl.h": (rt / "aotc_dnnl.h").read_text(), "aotc_dnnl.c": (rt / "aotc_dnnl.c").read_text(),
               "fast_math.h": kernel_file("fast_math.h").read_text()},
        sources=[f"{sym}.c", "aotc_dnnl.c"],
        symbols=runtime_symbols("dnnl/aotc_dnnl.c"),
        header=header,
        cmake=CMAKE,
        workspace_bytes=workspace,
        has_init=True,
        report={"dnnl_ops": counts, "primitives": sum(s.kind != "reorder" for s in probed.trace),
                "reorders": _reorders(probed), "dnnl_buffers": len(probed.buffers),
                "runtime_swish": sum(1 for op in lo.ops for p in op.post if p.kind == "SWISH"),
                "onednn_version": dnnl.version if dnnl else None,
                "weights_in_blob": bool(ctx.weights.blob)},
    )

