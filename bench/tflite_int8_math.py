"""Issue 50's integer kernels against LiteRT, one op at a representative size each: host time (aotc bench: medians
of rounds, one thread, LiteRT's default kernels with XNNPACK where it takes the op) and instructions of one
inference on the Cortex-M4 (mps2-an386 under qemu, with the TRM's cycle estimate).

    python bench/tflite_int8_math.py [--no-m4] [CASE ...]

Cases: bmm_s8 (attention scores, 4 heads of 64 x 64 by 64 transposed, adj_y: 1.05 M MACs), bmm_nn_s8 (the
same without adj_y: scores by values), bmm_s16 (adj_y in 16x8),
resize_s8 (32 x 32 x 32 -> 64 x 64, half-pixel centers), sqdiff_s8 (32 x 32 x 64 less a broadcast 64),
exp_s16 (64 x 64 x 16 by the interpolated table); the previous stop's int8 kernels: div_s8 (32 x 32 x 64
by a broadcast constant 64), l2norm_s8 (1024 rows of 64), logsoftmax_s8 (1024 rows of 64), prod_s8 (32 x 32 x 64
over the last axis), sum_s8 (32 x 32 x 64 over the two spatial axes, keep_dims). The models are written with the schema
(tests/frontend/test_tflite_int8_math.py's Written).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "frontend"))
sys.path.insert(0, str(ROOT / "tests"))

from test_tflite_int8_math import Written, _bmm, _resize  # noqa: E402


def _model(case: str) -> bytes:
    w = Written()
    if case in ("bmm_s8", "bmm_s16", "bmm_nn_s8"):
        t, zq = ("int16", 0) if case == "bmm_s16" else ("int8", -3)
        q, k = w.tensor([1, 4, 64, 64], t, 0.05, zq), w.tensor([1, 4, 64, 64], t, 0.04, 0 if t == "int16" else 5)
        w.op("BATCH_MATMUL", [q, k], ([1, 4, 64, 64], t, 2.0 if t == "int8" else 0.01, 0 if t == "int16" else 2),
             _bmm(adj_y=case != "bmm_nn_s8"))
        return w.finish([q, k])
    if case == "resize_s8":
        x = w.tensor([1, 32, 32, 32], "int8", 0.05, -3)
        w.op("RESIZE_BILINEAR", [x, w.tensor([2], "int32", data=np.array([64, 64], np.int32))],
             ([1, 64, 64, 32], "int8", 0.05, -3), _resize(half=True))
        return w.finish([x])
    if case == "sqdiff_s8":
        x, m = w.tensor([1, 32, 32, 64], "int8", 0.05, -3), w.tensor([64], "int8", 0.04, 5)
        w.op("SQUARED_DIFFERENCE", [x, m], ([1, 32, 32, 64], "int8", 0.5, -128))
        return w.finish([x, m])
    if case == "exp_s16":
        x = w.tensor([1, 64, 64, 16], "int16", 1 / 4096)
        w.op("EXP", [x], ([1, 64, 64, 16], "int16", 3000 / 32768))
        return w.finish([x])
    if case == "div_s8":  # the divisor a constant off its zero point (a divisor at it fails both runs)
        divisor = np.random.default_rng(0).integers(10, 120, 64) * np.where(np.arange(64) % 2, 1, -1)
        x = w.tensor([1, 32, 32, 64], "int8", 0.05, -3)
        m = w.tensor([64], "int8", 0.05, 2, data=divisor.astype(np.int8))
        w.op("DIV", [x, m], ([1, 32, 32, 64], "int8", 0.1, 0), ("DivOptions", {"fusedActivationFunction": 0}))
        return w.finish([x])
    if case in ("l2norm_s8", "logsoftmax_s8"):
        x = w.tensor([1024, 64], "int8", 0.05, -3)
        if case == "l2norm_s8":
            w.op("L2_NORMALIZATION", [x], ([1024, 64], "int8", 1 / 128, 0),
                 ("L2NormOptions", {"fusedActivationFunction": 0}))
        else:
            w.op("LOG_SOFTMAX", [x], ([1024, 64], "int8", 16 / 256, 127), ("LogSoftmaxOptions", {}))
        return w.finish([x])
    if case in ("prod_s8", "sum_s8"):
        x = w.tensor([1, 32, 32, 64], "int8", 0.05, -3)
        axes, shape, op = ([3], [1, 32, 32], "REDUCE_PROD") if case == "prod_s8" else ([1, 2], [1, 1, 1, 64], "SUM")
        w.op(op, [x, w.tensor([len(axes)], "int32", data=np.array(axes, np.int32))],
             (shape, "int8", 0.02 if op == "REDUCE_PROD" else 2.0, 5), ("ReducerOptions", {"keepDims": op == "SUM"}))
        return w.finish([x])
    raise ValueError(case)


CASES = ["bmm_s8", "bmm_nn_s8", "bmm_s16", "resize_s8", "sqdiff_s8", "exp_s16", "div_s8", "l2norm_s8",
         "logsoftmax_s8", "prod_s8", "sum_s8"]


def _run(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=CASES)
    ap.add_argument("--no-m4", action="store_true")
    args = ap.parse_args()
    aotc = [sys.executable, "-m", "aot.cli"]
    with tempfile.TemporaryDirectory() as d:
        for case in args.cases:
            model = Path(d) / f"{case}.tflite"
            model.write_bytes(_model(case))
            for target in ("host", *(() if args.no_m4 else ("mps2-an386",))):
                out = Path(d) / f"{case}_{target}"
                _run([*aotc, str(model), "-o", str(out), "--target", target])
                _run(["cmake", "--build", str(out), "-j", "2"])
                print(f"== {case} {target}\n{_run([*aotc, 'bench', str(out), '--rounds', '5'])}", flush=True)


if __name__ == "__main__":
    main()
