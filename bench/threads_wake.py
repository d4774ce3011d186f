"""Wake latency of the --threads pool (runtime_c/kernels/threads/threads.c): the time of one parallel
region on two threads, for a region of no work and for regions of a few microseconds of work split
in two, with the pool's spin-then-park wait (AOTC_SPIN_US microseconds, 50 by default) and
with parking at once (AOTC_SPIN_US=0, a condition variable each time: the pool as it was before the spin). The gap
between two regions is also varied: a worker that spins longer than the gap never parks.

    python bench/threads_wake.py [--regions 20000] [--rounds 5]

Each configuration is a separate build of threads.c with a small driver, run in interleaved rounds;
the table gives the median (min - max) over rounds of the mean microseconds per region.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DRIVER = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "aotc_threads.h"

static volatile float sink;
static void work(void *ctx, int32_t b, int32_t e) {  /* ~`ctx` ns of arithmetic per item */
    const long n = (long)(intptr_t)ctx;
    int32_t i;
    for (i = b; i < e; ++i) {
        float x = (float)i;
        long k;
        for (k = 0; k < n; ++k) x = x * 0.999f + 1.0f;
        sink = x;
    }
}
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
int main(int argc, char **argv) {
    const int regions = atoi(argv[1]);
    const long per_item = atol(argv[2]), gap = atol(argv[3]);
    int r;
    double t0;
    if (aotc_threads_start() != 0) return 1;
    for (r = 0; r < 200; ++r) aotc_parallel_for(work, (void *)(intptr_t)per_item, 2);
    t0 = now();
    for (r = 0; r < regions; ++r) {
        aotc_parallel_for(work, (void *)(intptr_t)per_item, 2);
        if (gap) work((void *)(intptr_t)gap, 0, 1); /* single-threaded work between regions */
    }
    printf("%.3f\n", (now() - t0) / regions);
    aotc_threads_stop();
    return 0;
}
"""


def build(work: Path, spin: int | None) -> Path:
    exe = work / f"wake_{'default' if spin is None else spin}"
    (work / "driver.c").write_text(DRIVER)
    defs = ["-DAOTC_THREADS=2"] + ([] if spin is None else [f"-DAOTC_SPIN_US={spin}"])
    subprocess.run(["cc", "-O2", "-std=c99", *defs, f"-I{ROOT / 'runtime_c/include'}",
                    f"-I{ROOT / 'runtime_c/kernels/threads'}", str(work / "driver.c"),
                    str(ROOT / "runtime_c/kernels/threads/threads.c"), "-o", str(exe), "-lpthread"], check=True)
    return exe


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--regions", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aotc-wake-"))
    exes = {"park at once (AOTC_SPIN_US=0)": build(work, 0), "spin 10 us": build(work, 10),
            "spin 50 us (default)": build(work, None), "spin 200 us": build(work, 200)}
    cases = [(0, 0), (1000, 0), (10000, 0), (1000, 2000), (1000, 50000)]  # (inner loop steps per item, gap)
    print("| wait | " + " | ".join(f"work {w} steps/item, gap {g}" for w, g in cases) + " |")
    print("|---|" + "---:|" * len(cases))
    res: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.rounds):
        for label, exe in exes.items():
            for k, (w, g) in enumerate(cases):
                n = args.regions if w + g <= 1000 else max(200, args.regions // 20)
                out = subprocess.run([str(exe), str(n), str(w), str(g)], check=True, capture_output=True, text=True)
                res.setdefault((label, k), []).append(float(out.stdout))
    for label in exes:
        cells = []
        for k in range(len(cases)):
            xs = res[(label, k)]
            cells.append(f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\nmicroseconds per region (the gap's own time included), median (min-max) of rounds")


if __name__ == "__main__":
    main()
