"""Issue 64 end to end: Keras's EfficientNet-B0 (random weights) as a full-int8 .tflite, its aotc bundle timed against
LiteRT on the host, with this tree's runtime kernels and with another revision's.

    /tmp/tfvenv/bin/python bench/efficientnet_b0_int8.py --make /tmp/effnet_b0_int8.tflite
    python3 bench/efficientnet_b0_int8.py /tmp/effnet_b0_int8.tflite [--before main] [--rounds 5]

--make (in a Python with TensorFlow, which neither aotc nor its tests need): keras.applications.EfficientNetB0
(weights=None, seeded, 224 x 224 x 3) through tf.lite.TFLiteConverter with full-int8 post-training quantisation
(TFLITE_BUILTINS_INT8, int8 input and output) and a representative dataset of `--samples` seeded uniform images
in [0, 255] (the network's own Rescaling and Normalization take pixels). About 5 MB: not committed.

Without --make: `aotc FILE -o OUT` (the host, its own ISA), built, then `aotc bench OUT` (the bundle against LiteRT
on the file, one thread each, back to back in each round, medians); then, with --before REV, the same bundle with
REV's copies of the runtime files this branch changed (tflite_int8_*.c and .h; the generated code is the same, as
tests/replay.json shows), rebuilt and timed again. Also prints the bundle's top functions under perf where perf is
installed (--perf).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make(path: Path, samples: int, seed: int = 0) -> None:
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(seed)
    model = keras.applications.EfficientNetB0(weights=None, input_shape=(224, 224, 3))

    def representative():
        rng = np.random.default_rng(1)
        for _ in range(samples):
            yield [rng.uniform(0, 255, (1, 224, 224, 3)).astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    path.write_bytes(conv.convert())
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")


def _run(cmd: list[str], **kw) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r.stdout


def swap_runtime(out: Path, rev: str) -> list[str]:
    """Replace the bundle's copies of the tflite_int8 runtime files that differ at rev; the names replaced."""
    runtime = out / "bundle" / "runtime"
    changed = _run(["git", "-C", str(ROOT), "diff", "--name-only", rev, "--", "runtime_c/kernels/tflite_int8"]).split()
    done = []
    for rel in changed:
        name = Path(rel).name
        if not (runtime / name).is_file():
            continue
        old = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{rel}"], capture_output=True)
        if old.returncode == 0:
            (runtime / name).write_bytes(old.stdout)
            done.append(name)
    return done


def bench(out: Path, rounds: int) -> str:
    _run(["cmake", "--build", str(out), "-j", "2"])
    return _run([sys.executable, "-m", "aot.cli", "bench", str(out), "--rounds", str(rounds)], cwd=ROOT)


def perf_top(out: Path) -> str:
    """The bundle's runner under perf record (20 inferences): its top functions by samples."""
    import numpy as np

    from aot.bench import seeded_inputs
    from aot.build import runner_path

    if shutil.which("perf") is None:
        return "(perf is not installed)"
    meta = json.loads((out / "bundle" / "metadata.json").read_text())

    with tempfile.TemporaryDirectory() as tmp:
        ins = Path(tmp) / "in.bin"
        ins.write_bytes(b"".join(np.asarray(x, order="C").tobytes() for x in seeded_inputs(meta)))
        data = Path(tmp) / "perf.data"
        _run(["perf", "record", "-q", "-o", str(data), str(runner_path(out, meta)), str(ins), str(Path(tmp) / "o.bin"),
              "20"])
        report = _run(["perf", "report", "-q", "-i", str(data), "--stdio", "--sort", "symbol"])
    return "\n".join(ln for ln in report.splitlines()[:12] if ln.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tflite", type=Path)
    ap.add_argument("--make", action="store_true", help="write the .tflite (needs TensorFlow)")
    ap.add_argument("--samples", type=int, default=20, help="representative images (--make)")
    ap.add_argument("--before", help="also time the bundle with this revision's tflite_int8 runtime files")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--perf", action="store_true", help="the top functions of each bundle under perf")
    args = ap.parse_args()
    if args.make:
        make(args.tflite, args.samples)
        return
    sys.path[:0] = [str(ROOT)]
    with tempfile.TemporaryDirectory(prefix="aotc-effnet-") as tmp:
        out = Path(tmp) / "effnet"
        _run([sys.executable, "-m", "aot.cli", str(args.tflite.resolve()), "-o", str(out)], cwd=ROOT)
        print(f"== this tree's kernels\n{bench(out, args.rounds)}", flush=True)
        if args.perf:
            print(perf_top(out), flush=True)
        if args.before:
            names = swap_runtime(out, args.before)
            print(f"== {args.before}'s {', '.join(names)}\n{bench(out, args.rounds)}", flush=True)
            if args.perf:
                print(perf_top(out), flush=True)


if __name__ == "__main__":
    main()
