"""TFLM's audio front end and keyword spotter (tests/models/tflite/tflm_*.tflite, issue 50): the host bundle's time
per call against TFLM's own interpreter (pip tflite-micro, in a venv of its own), one thread each, in alternating
rounds; medians.

    python bench/tflm_signal.py --tflm-python /work/venvs/tflm/bin/python [--rounds 5] [--repeat 2000]

The bundle is timed by its runner (the median of `repeat` runs, aotc.build.run_bundle); TFLM by
perf_counter_ns around each interpreter.invoke() (the median of `repeat`), which includes the pybind call into
TFLM's C++ (about a microsecond). Both run the same frame; the bundle's state input is its start value on every
run, TFLM's noise estimate moves on from run to run (the same arithmetic either way).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models" / "tflite"
_TFLM = """
import sys, time, numpy as np
from tflite_micro.python.tflite_micro import runtime
model, repeat = sys.argv[1], int(sys.argv[2])
feeds = np.load(sys.argv[3])
interp = runtime.Interpreter.from_file(model, arena_size=1 << 20)
for k in range(len(feeds.files)):
    interp.set_input(feeds[f"input_{k}"], k)
interp.invoke()
times = []
for _ in range(repeat):
    t = time.perf_counter_ns(); interp.invoke(); times.append(time.perf_counter_ns() - t)
print(sorted(times)[len(times) // 2])
"""


def main() -> None:
    from aot.build import cmake_exe, run_bundle

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tflm-python", required=True, help="a Python with pip tflite-micro")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=2000)
    p.add_argument("models", nargs="*", default=["tflm_frontend_int8", "tflm_frontend_float", "tflm_frontend_v2",
                                                 "tflm_kws_float", "tflm_kws_int8", "tflm_streaming", "tflm_fft"])
    a = p.parse_args()
    ref = np.load(MODELS / "tflm_signal_ref.npz")
    work = Path(tempfile.mkdtemp(prefix="aotc-tflm-signal-"))
    print("| model | aotc host us | TFLM us | aotc / TFLM |\n|---|---:|---:|---:|")
    for name in a.models:
        out = work / name
        subprocess.run([sys.executable, "-m", "aot.cli", str(MODELS / f"{name}.tflite"), "-o", str(out)], check=True,
                       capture_output=True)
        subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
        meta = json.loads((out / "bundle" / "metadata.json").read_text())
        key = f"frames{meta['inputs'][0]['shape'][-1]}"
        frame = ref[key][3].reshape(meta["inputs"][0]["shape"]) if key in ref.files else \
            ref[f"{name}/in0"][0].reshape(meta["inputs"][0]["shape"])  # (a model of the streaming ops)
        extra = [ref[f"{name}/in{k}"][0] if f"{name}/in{k}" in ref.files else np.zeros(s["shape"], s["dtype"])
                 for k, s in enumerate(meta["inputs"][1:], start=1)]
        n_file = 1 + sum("state" not in s for s in meta["inputs"][1:])
        np.savez(work / "in.npz", **{f"input_{k}": v for k, v in enumerate([frame, *extra][:n_file])})
        ours, theirs = [], []
        for _ in range(a.rounds):
            _, ns = run_bundle(out, meta, [frame, *extra], repeat=a.repeat)
            ours.append(ns / 1e3)
            r = subprocess.run([a.tflm_python, "-c", _TFLM, str(MODELS / f"{name}.tflite"), str(a.repeat),
                                str(work / "in.npz")], check=True, capture_output=True, text=True)
            theirs.append(int(r.stdout.split()[-1]) / 1e3)
        o, t = statistics.median(ours), statistics.median(theirs)
        print(f"| {name} | {o:.2f} | {t:.2f} | {o / t:.3f} |", flush=True)


if __name__ == "__main__":
    main()
