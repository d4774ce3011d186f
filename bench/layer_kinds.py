"""Time and rate of a host bundle's layers by kind: the 1 x 1 convs by plane size, the depthwise convs by kernel,
stride and plane, the stem, the elementwise passes (SiLU, hard-swish, squeeze-excite's Mul) and reductions.

    python bench/layer_kinds.py OUT [--repeat 200] [--peak GFLOPS]

OUT is a directory `aotc MODEL -o OUT` wrote for the host. Each node's time is bench/node_profile.py's (a copy of
the bundle built with AOTC_TAP as a clock read, the minimum over --repeat runs); the kind and the conv's work come
from the generated C (its aotc_conv_params and the kernel it calls). Convs: GFLOP/s (2 x MACs / time) and its
share of --peak (one core's FMA peak, measured by bench/host_models.py's loop when not given); the rest: GB/s of
the bytes the node writes plus as many read (a reduction: the output of the node before it, its input in these
nets; a binary op's second operand, squeeze-excite's scales, is left out). Why
(issue 64): a whole-net share of the peak says how far a depthwise net is from its goal, this says which kinds
are far from their own bound, the FMA peak for the convs, the caches' bandwidth for the passes.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.host_models import measure_peak  # noqa: E402
from bench.node_profile import bundle_profile  # noqa: E402

PARAMS = re.compile(r"static const aotc_conv_params p_(\w+) = \{(.*?)\n\};", re.S)
CALL = re.compile(r'\n    (aotc_\w+)\(.*?\);\n    AOTC_TAP\("([^"]+)", "[^"]*", "([^"]+)"')


def conv_params(src: str) -> dict[str, dict[str, list[int]]]:
    """Each conv node's (C name) group, channels, sizes, kernel and strides, from its aotc_conv_params."""
    out = {}
    for m in PARAMS.finditer(src):
        fields = {}
        for key in ("group", "in_c", "out_c", "out_size", "kernel", "strides"):
            value = re.search(rf"\.{key} = (\{{[^}}]*\}}|\d+)", m.group(2))
            fields[key] = [int(v) for v in re.findall(r"\d+", value.group(1))] if value else [0]
        out[m.group(1)] = fields
    return out


def floats(c_type: str) -> int:
    """Elements of a tap's type string, "float32[1,32,112,112]" -> 401408."""
    n = 1
    for d in re.findall(r"\d+", c_type.split("[", 1)[-1]):
        n *= int(d)
    return n


def conv_kind(p: dict[str, list[int]]) -> tuple[str, float]:
    """A conv's kind and its FLOPs (2 x MACs)."""
    oh, ow, kh, kw = p["out_size"][1], p["out_size"][2], p["kernel"][1], p["kernel"][2]
    flops = 2.0 * p["out_c"][0] * oh * ow * kh * kw * p["in_c"][0] / p["group"][0]
    if p["group"][0] > 1 and p["group"][0] == p["in_c"][0]:
        return f"depthwise {kh}x{kw} stride {p['strides'][1]} to {oh}x{ow}", flops
    if kh == 1 and oh * ow == 1:
        return "1x1 on one position (squeeze-excite, classifier)", flops
    if kh == 1:
        return f"1x1 {'expand' if p['out_c'][0] > p['in_c'][0] else 'project'} {oh}x{ow}", flops
    return f"{kh}x{kw} stride {p['strides'][1]} (stem)", flops


def kinds(out: Path, repeat: int) -> dict[str, list[float]]:
    """kind -> [us, FLOPs, nodes, bytes] summed over the bundle's nodes."""
    src = next(p for p in (out / "bundle" / "src").glob("*.c") if p.name != "runner.c").read_text()
    params, calls = conv_params(src), {m.group(2): (m.group(1), m.group(3)) for m in CALL.finditer(src)}
    table: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0, 0.0])
    prev_out = 0
    for node, _, us in bundle_profile(out, repeat):
        fn, c_type = calls.get(node, ("?", "?"))
        n, flops, nbytes = floats(c_type), 0.0, 0.0
        p = params.get(re.sub(r"\W", "_", node))
        if p is not None:
            kind, flops = conv_kind(p)
        else:
            name = fn.removeprefix("aotc_").removesuffix("_f32")
            reads = prev_out if name.startswith("reduce") else n
            kind, nbytes = f"{name} ({'large' if max(n, reads) > 4096 else 'small'})", 4.0 * (n + reads)
        row = table[kind]
        row[0] += us
        row[1] += flops
        row[2] += 1
        row[3] += nbytes
        prev_out = n
    return table


def print_table(table: dict[str, list[float]], peak: float) -> None:
    """Markdown rows, the most time first."""
    total = sum(r[0] for r in table.values())
    print(f"total {total:.0f} us (the taps' minima), one core's peak {peak:.0f} GFLOP/s")
    print("| kind | nodes | us | % of time | GFLOP/s | % of peak | GB/s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, (us, flops, nodes, nbytes) in sorted(table.items(), key=lambda kv: -kv[1][0]):
        rate = flops / us / 1e3 if flops else 0.0
        conv = f"{rate:.0f} | {100 * rate / peak:.0f}" if flops else "- | -"
        gbs = f"{nbytes / us / 1e3:.0f}" if nbytes else "-"
        print(f"| {kind} | {nodes} | {us:.0f} | {100 * us / total:.1f} | {conv} | {gbs} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="a host bundle's output directory")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--peak", type=float, help="one core's fp32 GFLOP/s (default: measured now)")
    args = ap.parse_args()
    peak = args.peak
    if peak is None:
        with tempfile.TemporaryDirectory() as tmp:
            peak = measure_peak(Path(tmp))["fp32_gflops"]
    print_table(kinds(args.out, args.repeat), peak)


if __name__ == "__main__":
    main()
