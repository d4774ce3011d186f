"""Per-node times of a host bundle beside onnxruntime's own profile of the same model, one thread each.

    python bench/node_profile.py OUT [--model MODEL.onnx] [--repeat 100]

OUT is a directory `aotc MODEL -o OUT` wrote for the host. A copy of OUT/bundle is built with AOTC_TAP
(aotc_common.h), the hook the generated code calls right after each node, defined as a clock read: each
node's time is the time since the previous tap. onnxruntime (CPU provider, one intra-op thread, all graph
optimisations) runs with its profiler on, which reports each kernel's time. Both sides take the minimum
over --repeat runs (the least disturbed by other load on the machine) and onnxruntime's median too. The
first node's time includes the start of a run (the inputs copied into the arena).

onnxruntime fuses and renames nodes; a row pairs our node with the onnxruntime node that writes the same
tensor (its name, or its name plus "_nchwc" where onnxruntime reorders to its blocked layout). What pairs
with nothing is listed at the end (onnxruntime's layout reorders and the like; our nodes that cost no time,
such as a Concat whose inputs were written in place). Why this exists: a whole-model ratio says how far
off a bundle is, this says where (issue 24's Winograd and depthwise work came from such tables).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aot.bench import seeded_inputs  # noqa: E402
from aot.build import cmake_exe  # noqa: E402

# appended to the copy's runner.c: min and sum per tap point (node and tensor: a node of two outputs taps twice, the
# second time right after the first), printed at exit
TIMER_C = r"""
#include <time.h>
static const char *prof_node[4096], *prof_tensor[4096];
static double prof_min[4096], prof_sum[4096], prof_last;
static long prof_runs[4096];
static int prof_n;
static double prof_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static void prof_dump(void) {
    int i;
    for (i = 0; i < prof_n; ++i)
        if (prof_runs[i] > 0)
            printf("aotc-prof\t%s\t%s\t%.3f\t%.3f\n", prof_node[i], prof_tensor[i], prof_min[i] / 1e3,
                   prof_sum[i] / prof_runs[i] / 1e3);
}
void aotc_prof_tap(const char *node, const char *tensor) {
    const double t = prof_now();
    int i;
    if (prof_n == 0) atexit(prof_dump);
    for (i = 0; i < prof_n; ++i)
        if ((prof_node[i] == node || strcmp(prof_node[i], node) == 0) &&
            (prof_tensor[i] == tensor || strcmp(prof_tensor[i], tensor) == 0)) break; /* a node's outputs apart */
    if (i == prof_n && prof_n < 4096) prof_node[prof_n] = node, prof_tensor[prof_n] = tensor, ++prof_n;
    if (i < prof_n && prof_last > 0) {
        const double d = t - prof_last;
        if (prof_runs[i] == 0 || d < prof_min[i]) prof_min[i] = d;
        prof_sum[i] += d;
        ++prof_runs[i];
    }
    prof_last = prof_now();
}
"""


def bundle_profile(out: Path, repeat: int, cflags: str | None = None) -> list[tuple[str, str, float]]:
    """(node, tensor it writes, min us) per node of the bundle in OUT, in run order; cflags (e.g.
    -march=x86-64-v3) builds it as for another machine (AOTC_NATIVE off), as bench/host_models.py --isa does."""
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(out / "bundle", work / "bundle")
        runner = work / "bundle" / "src" / "runner.c"
        runner.write_text(runner.read_text() + TIMER_C)
        (work / "tap.h").write_text("void aotc_prof_tap(const char *node, const char *tensor);\n"
                                    "#define AOTC_TAP(node, tensor, type, data, nbytes) aotc_prof_tap(node, tensor)\n")
        flags = f"-include {work / 'tap.h'}" + (f" {cflags}" if cflags else "")
        isa = ["-DAOTC_NATIVE=OFF"] if cflags else []
        subprocess.run([cmake_exe(), "-S", str(work / "bundle"), "-B", str(work / "build"), *isa,
                        "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_C_FLAGS={flags}"], check=True, capture_output=True)
        subprocess.run([cmake_exe(), "--build", str(work / "build"), "-j2"], check=True, capture_output=True)
        inputs = seeded_inputs(meta)
        (work / "in.bin").write_bytes(b"".join(np.ascontiguousarray(a).tobytes() for a in inputs))
        exe = next(p for p in (work / "build").iterdir() if p.name == "runner")
        r = subprocess.run([str(exe), str(work / "in.bin"), str(work / "out.bin"), str(repeat)], check=True,
                           capture_output=True, text=True)
    rows = [ln.split("\t") for ln in r.stdout.splitlines() if ln.startswith("aotc-prof\t")]
    return [(node, tensor, float(mn)) for _, node, tensor, mn, _ in rows]


def ort_profile(model: Path, meta: dict, repeat: int) -> dict[str, tuple[str, float, float]]:
    """onnxruntime's kernels by node name: (op, min us, median us) over `repeat` runs, one thread."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = str(Path(tempfile.gettempdir()) / f"aotc_node_profile_{os.getpid()}")
    sess = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(sess.get_inputs(), seeded_inputs(meta), strict=True)}
    for _ in range(5):
        sess.run(None, feeds)
    for _ in range(repeat):
        sess.run(None, feeds)
    path = Path(sess.end_profiling())
    events = json.loads(path.read_text())
    path.unlink()
    times: dict[str, list[float]] = {}
    ops: dict[str, str] = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"][: -len("_kernel_time")]
            times.setdefault(name, []).append(float(e["dur"]))
            ops[name] = e["args"].get("op_name", "?")
    return {n: (ops[n], min(t), statistics.median(t)) for n, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="a host bundle's output directory")
    ap.add_argument("--model", type=Path, help="the ONNX model (default: the one OUT was compiled from)")
    ap.add_argument("--repeat", type=int, default=100)
    args = ap.parse_args()
    meta = json.loads((args.out / "bundle" / "metadata.json").read_text())
    model = args.model or Path(meta["source"])
    ours = bundle_profile(args.out, args.repeat)
    theirs = ort_profile(model, meta, args.repeat)
    pairs = pair_nodes(ours, theirs, {n["name"]: n["op"] for n in meta["nodes"]})
    print("| node | aotc us (min) | onnxruntime node | op | ort us (min) | ort us (median) | aotc / ort |")
    print("|---|---:|---|---|---:|---:|---:|")
    for node, t in ((n, t) for n, _, t in ours):
        match = pairs.get(node)
        if match is None:
            print(f"| {node} | {t:.1f} | - | | | | |")
            continue
        op, mn, med = theirs[match]
        print(f"| {node} | {t:.1f} | {match} | {op} | {mn:.1f} | {med:.1f} | {t / mn:.2f} |" if mn > 0 else
              f"| {node} | {t:.1f} | {match} | {op} | {mn:.1f} | {med:.1f} | |")
    for n, (op, mn, med) in theirs.items():
        if n not in pairs.values():
            print(f"| - | | {n} | {op} | {mn:.1f} | {med:.1f} | |")
    total_a, total_o = sum(t for _, _, t in ours), sum(mn for _, mn, _ in theirs.values())
    print(f"| **sum** | {total_a:.1f} | | | {total_o:.1f} | | {total_a / total_o:.2f} |")


def _family(op: str) -> str:
    return "Conv" if op in ("Conv", "FusedConv", "NhwcConv", "FusedConvNchwc") else op


def pair_nodes(ours: list[tuple[str, str, float]], theirs: dict[str, tuple[str, float, float]],
               ops: dict[str, str]) -> dict[str, str]:
    """Our node -> onnxruntime's: by the tensor written (or the node's name), with or without onnxruntime's
    "_nchwc" or the suffix of its fusions; then what is left in run order, where the ops agree and
    onnxruntime's name is none of ours (a conv whose residual add onnxruntime fused under the conv's own
    output name)."""
    pairs: dict[str, str] = {}
    base = {}  # onnxruntime's names without what its fusions append ("mul5/QuickGeluFusion/" -> "mul5")
    for n in theirs:
        base.setdefault(n.split("/")[0], n)
    for node, tensor, _ in ours:
        match = next((base[n] for n in (tensor, f"{tensor}_nchwc", node, f"{node}_nchwc")
                      if n in base and base[n] not in pairs.values()), None)
        if match is not None:
            pairs[node] = match
    known = {t for _, t, _ in ours} | {n for n, _, _ in ours}
    left = [n for n in theirs if n not in pairs.values() and n.split("/")[0].removesuffix("_nchwc") not in known]
    for node, _, _ in ours:
        if node in pairs:
            continue
        match = next((n for n in left if _family(theirs[n][0]) == _family(ops.get(node, ""))), None)
        if match is not None:
            pairs[node] = match
            left.remove(match)
    return pairs


if __name__ == "__main__":
    main()
