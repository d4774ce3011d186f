"""Every .tflite file in a TFLM checkout through aotc, against LiteRT's reference kernels.

    python bench/tflm_models.py CHECKOUT [--grep TEXT] [--runs 2] [--keep DIR]

CHECKOUT is a tensorflow/tflite-micro tree (or any folder of .tflite files). Each model is compiled
with `aotc`, built with CMake, and run on `--runs` random inputs; the same inputs go through LiteRT's
BUILTIN_REF interpreter (tests/tflite_reference.py, in a process of its own), which TFLM's kernels
match bit for bit. TFLM's integration-test models come with their inputs and TFLM's own output
(CSV files beside them): run 0 takes those inputs, and its output is compared with TFLM's too.
Integer outputs are compared element by element (share equal, largest difference in LSB), float
outputs by the largest error relative to max(1, |reference|).

Prints one line per model and a summary: how many compile, how many are bit-exact, and the
refusals grouped by their message (the op a user would have to wait for). LiteRT has no kernels for TFLM's
signal library (micro_speech's audio_preprocessor_*.tflite): with --tflm-python PY (a Python with pip
tflite-micro) those files are compared with TFLM's own interpreter instead, one invoke per run
(bench/tflm_reference.py), the state carried.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
AOTC = [sys.executable, "-m", "aot.cli"]


def random_inputs(meta: dict, runs: int) -> list[np.ndarray]:
    """One array per input, with a leading axis of `runs` (tflite_reference.py --runs)."""
    rng = np.random.default_rng(0)
    feeds = []
    for spec in meta["inputs"]:
        shape, dtype = (runs, *spec["shape"]), np.dtype(spec["dtype"])
        if dtype.kind == "f":
            feeds.append(rng.uniform(-1, 1, shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            feeds.append(rng.integers(info.min, info.max + 1, shape).astype(dtype))
    return feeds


def tflm_vectors(model: Path, meta: dict) -> tuple[list[np.ndarray | None], np.ndarray | None]:
    """TFLM's integration tests ship each model's inputs and TFLM's own output as CSV files beside it
    (<stem>_input<k>_<type>.csv, <stem>_golden_<type>.csv): (the inputs, or None each, and the golden
    output, or None)."""
    def load(path: Path, dtype: str, shape: list[int]) -> np.ndarray | None:
        if not path.exists():
            return None
        values = np.array([int(v) for v in path.read_text().replace("\n", ",").split(",") if v.strip()])
        return values.astype(dtype).reshape(shape) if values.size == int(np.prod(shape)) else None
    inputs = [load(model.with_name(f"{model.stem}_input{k}_{s['dtype']}.csv"), s["dtype"], s["shape"])
              for k, s in enumerate(meta["inputs"])]
    out = meta["outputs"][0]
    return inputs, load(model.with_name(f"{model.stem}_golden_{out['dtype']}.csv"), out["dtype"], out["shape"])


def litert_copy(model: Path, work: Path) -> Path:
    """The file LiteRT's reference runs: older files (person_detect) set quantized_dimension 3 on
    rank-1 per-tensor parameters, which TFLM ignores and LiteRT refuses; the copy resets it to 0
    (it means nothing per tensor). Any other file runs as it is."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(model.read_bytes(), 0)
    bad = [t.quantization for g in m.subgraphs for t in g.tensors if t.quantization is not None
           and t.shape is not None and t.quantization.quantizedDimension >= max(len(t.shape), 1)]
    if not bad:
        return model
    for q in bad:
        q.quantizedDimension = 0
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    path = work / f"litert_{model.name}"
    path.write_bytes(bytes(fb.Output()))
    return path


def compare(ours: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    if ours.shape != ref.shape:
        return False, f"shape {ours.shape} != {ref.shape}"
    if ref.dtype.kind == "f":
        scale = max(1.0, float(np.abs(ref).max(initial=0)))
        err = float(np.abs(ours.astype(np.float64) - ref).max(initial=0.0)) / scale
        return err <= 1e-5, f"rel err {err:.1e}"
    diff = np.abs(ours.astype(np.int64) - ref.astype(np.int64))
    equal = float((diff == 0).mean()) if diff.size else 1.0
    return bool(diff.max(initial=0) == 0), f"{100 * equal:.2f} % equal, max {int(diff.max(initial=0))} LSB"


def one(model: Path, work: Path, runs: int, tflm_python: str | None = None) -> tuple[str, str]:
    """(status, detail): status is exact, differs, refused or failed. With `tflm_python` (a Python with pip
    tflite-micro), a file LiteRT cannot run is compared with TFLM's interpreter instead."""
    from aot.build import cmake_exe, run_bundle

    out = work / "out"
    r = subprocess.run([*AOTC, str(model), "-o", str(out)], capture_output=True, text=True)
    if r.returncode != 0:
        line = (r.stderr.strip().splitlines() or ["?"])[-1]
        return ("refused" if r.returncode == 2 else "failed"), line.removeprefix("aotc: error: ")
    for cmd in ([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON"],
                [cmake_exe(), "--build", str(out), "-j", "2"]):
        b = subprocess.run(cmd, capture_output=True, text=True)
        if b.returncode != 0:
            return "failed", "build: " + (b.stdout + b.stderr).strip().splitlines()[-1][:200]
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    feeds = random_inputs(meta, runs)
    given, golden = tflm_vectors(model, meta)
    for f, g in zip(feeds, given, strict=True):
        if g is not None and g.dtype == np.int32:  # an output shape (TRANSPOSE_CONV's): every run
            f[:] = g
        elif g is not None:  # run 0 takes TFLM's test vector
            f[0] = g
    np.savez(work / "in.npz", **{f"input_{k}": v for k, v in enumerate(feeds)})
    ref = subprocess.run([sys.executable, str(ROOT / "tests" / "tflite_reference.py"), str(litert_copy(model, work)),
                          str(work / "in.npz"), str(work / "ref.npz"), "--runs"], capture_output=True, text=True)
    reference = "LiteRT"
    if ref.returncode != 0 and tflm_python:  # TFLM's own interpreter, for what LiteRT cannot run (signal ops)
        ref = subprocess.run([tflm_python, str(ROOT / "bench" / "tflm_reference.py"), str(model), str(work / "in.npz"),
                              str(work / "ref.npz")], capture_output=True, text=True)
        reference = "TFLM"
    if ref.returncode != 0:
        return "no reference", (ref.stderr.strip().splitlines() or ["?"])[-1][:200]
    refs = np.load(work / "ref.npz")
    verdicts, tflm = [], ""
    # state the interpreter keeps between invokes (an LSTM's h and c, resource variables) is carried by the
    # caller: inputs and outputs beyond the file's, from zero (the zero point when quantised)
    n_ref, n_out = len([k for k in refs.files if k.startswith("output_")]), len(meta["outputs"])
    states = [s for s in meta["inputs"] if s["name"] + "_next" in {o["name"] for o in meta["outputs"]}]
    state = {s["name"]: np.full(s["shape"], s.get("zero_point", 0), s["dtype"]) for s in states}
    for run in range(runs):
        ours, _ = run_bundle(out, meta, [state[s["name"]] if s["name"] in state else f[run]
                                         for s, f in zip(meta["inputs"], feeds, strict=True)])
        for k, spec in enumerate(meta["outputs"][:min(n_ref, n_out)]):
            verdicts.append(compare(ours[spec["name"]], refs[f"output_{k}"][run]))
        if run == 0 and golden is not None:  # TFLM's own output on its test vector
            same, detail = compare(ours[meta["outputs"][0]["name"]], golden)
            verdicts.append((same, "TFLM's golden output: " + detail))
            tflm = "; TFLM's golden output " + ("equal" if same else "differs")
        state = {s["name"]: ours[s["name"] + "_next"] for s in states}
    ok = all(v for v, _ in verdicts)
    worst = next((d for v, d in verdicts if not v), verdicts[0][1] if verdicts else "no outputs")
    return ("exact" if ok else "differs"), worst + tflm + ("" if reference == "LiteRT" else
                                                          f" (against TFLM's interpreter, {runs} invokes)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("checkout", type=Path)
    p.add_argument("--grep", default="", help="only models whose path contains this")
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--keep", type=Path, help="keep each model's bundle under this folder")
    p.add_argument("--tflm-python", help="a Python with pip tflite-micro: TFLM's interpreter is the reference for "
                   "the files LiteRT cannot run (TFLM's signal ops; bench/tflm_reference.py)")
    args = p.parse_args()
    models = sorted(m for m in args.checkout.rglob("*.tflite") if args.grep in str(m))
    base = args.keep or Path(tempfile.mkdtemp(prefix="aotc-tflm-"))
    results: dict[str, list[str]] = collections.defaultdict(list)
    refusals: collections.Counter[str] = collections.Counter()
    for k, model in enumerate(models):
        rel = str(model.relative_to(args.checkout))
        work = base / re.sub(r"[^A-Za-z0-9_.-]", "_", rel)
        work.mkdir(parents=True, exist_ok=True)
        status, detail = one(model, work, args.runs, args.tflm_python)
        results[status].append(rel)
        if status == "refused":
            refusals[re.sub(r"node '[^']*'", "node …", detail)] += 1
        print(f"[{k + 1}/{len(models)}] {status:8s} {rel}: {detail}", flush=True)
    print(f"\n{len(models)} models: " + ", ".join(f"{len(v)} {s}" for s, v in sorted(results.items())))
    for why, n in refusals.most_common():
        print(f"  refused {n}x: {why}")


if __name__ == "__main__":
    main()
