"""Issue 26: ONNX Loops as exporters write them (tests/models, from examples/export_loops.py): compile
time, `aotc bench` (bundle / onnxruntime on one thread, median of rounds), max error over each output's
scale, the arena against the tensors' bound; and per step, the Keras 3 spotters' Loop against the same
net as an ONNX LSTM / GRU node (tests/models/kws_{lstm,gru}.onnx, torch's export) compiled by aotc.

    python bench/loops.py [WORK_DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recurrent import AOTC, REPO, compile_seconds, relative_error  # noqa: E402

MODELS = ["kws_lstm_keras", "kws_gru_keras", "kws_lstm_keras_stream", "loop_script", "loop_list", "loop_nested",
          "kws_lstm", "kws_gru", "kws_lstm_stream"]
STEPS = {"kws_lstm_keras": 49, "kws_gru_keras": 49, "kws_lstm": 49, "kws_gru": 49, "kws_lstm_keras_stream": 1,
         "kws_lstm_stream": 1}
NODE_FORM = {"kws_lstm_keras": "kws_lstm", "kws_gru_keras": "kws_gru", "kws_lstm_keras_stream": "kws_lstm_stream"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", nargs="?", default="/tmp/aotc_bench_loops")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    print("| model | compile s | bundle us | onnxruntime us | ratio | max err / scale | arena B | tensors bound B "
          "| arena / tensors |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    bundle_us: dict[str, float] = {}
    for name in MODELS:
        model = REPO / "tests" / "models" / f"{name}.onnx"
        out = work / name
        seconds = compile_seconds(model, out, [])
        subprocess.run(["cmake", "--build", str(out), "-j", "2"], check=True, capture_output=True)
        r = subprocess.run([*AOTC, "bench", str(out), "--repeat", "200", "--rounds", str(args.rounds)],
                           check=True, capture_output=True, text=True)
        row = [c.strip() for c in r.stdout.strip().splitlines()[-1].strip("|").split("|")]
        ours, ort_us, ratio, arena, tensors, ratio_t = row[1], row[2], row[3], row[7], row[8], row[10]
        bundle_us[name] = float(ours)
        err = relative_error(out, model, work)
        print(f"| {name} | {seconds:.2f} | {ours} | {ort_us} | {ratio} | {err:.2e} | {arena} | {tensors} | "
              f"{ratio_t} |", flush=True)
    print()
    print("| Loop model | us per step | node model | us per step | Loop / node |")
    print("|---|---:|---|---:|---:|")
    for loop, node in NODE_FORM.items():
        a, b = bundle_us[loop] / STEPS[loop], bundle_us[node] / STEPS[node]
        print(f"| {loop} | {a:.2f} | {node} | {b:.2f} | {a / b:.2f}x |")


if __name__ == "__main__":
    main()
