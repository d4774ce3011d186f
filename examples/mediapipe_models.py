"""MediaPipe's own models through aotc (issue 50; not run in CI): fetch the mediapipe wheel that still
ships them (mediapipe/modules/*/*.tflite), compile, build and run each, and compare it with LiteRT.

    python examples/mediapipe_models.py [--dir /tmp/mediapipe_models] [--only selfie]

LiteRT does not register MediaPipe's custom ops, so a model that has them is compared with LiteRT running
a copy where each is the builtin that computes the same: Convolution2DTransposeBias as TRANSPOSE_CONV with
its bias (output shape as a constant; the same SAME padding, half before). A model with a custom op that
has no such builtin is compiled, built and run only. The model files are MediaPipe's (Apache-2.0) and are
not part of aotc: they stay in --dir.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

VERSION = "0.10.14"  # the last wheels with mediapipe/modules/*.tflite
AOTC = [sys.executable, "-m", "aot.cli"]


def fetch(where: Path) -> list[Path]:
    """MediaPipe's .tflite files, from its wheel (pip download, once)."""
    models = sorted(where.glob("modules/*/*.tflite"))
    if models:
        return models
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", f"mediapipe=={VERSION}", "--no-deps", "-d", str(where),
                    "-q"], check=True)
    wheel = next(where.glob(f"mediapipe-{VERSION}-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("mediapipe/modules/") and name.endswith(".tflite"):
                target = where / name[len("mediapipe/"):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(name))
    return sorted(where.glob("modules/*/*.tflite"))


def custom_ops(path: Path) -> list[str]:
    from ai_edge_litert import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    return sorted({c.customCode.decode() for c in m.operatorCodes
                   if max(c.builtinCode, c.deprecatedBuiltinCode) == sch.BuiltinOperator.CUSTOM})


def litert_copy(path: Path, out: Path) -> Path | None:
    """The model with each custom op as the builtin that computes it, or None if one has none."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    customs = {k: c.customCode.decode() for k, c in enumerate(m.operatorCodes)
               if max(c.builtinCode, c.deprecatedBuiltinCode) == sch.BuiltinOperator.CUSTOM}
    if not customs:
        return path
    if set(customs.values()) != {"Convolution2DTransposeBias"}:
        return None
    code = sch.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = sch.BuiltinOperator.TRANSPOSE_CONV
    code.version = 3  # the bias input
    m.operatorCodes.append(code)
    for sg in m.subgraphs:
        for op in sg.operators:
            if op.opcodeIndex not in customs:
                continue
            padding, stride_w, stride_h = np.frombuffer(bytes(op.customOptions)[:12], "<i4")
            shape = sch.TensorT()
            shape.shape, shape.type, shape.name, shape.buffer = [4], sch.TensorType.INT32, b"out_shape", len(m.buffers)
            buf = sch.BufferT()
            buf.data = np.frombuffer(np.array(sg.tensors[op.outputs[0]].shape, np.int32).tobytes(), np.uint8)
            m.buffers.append(buf)
            sg.tensors.append(shape)
            options = sch.TransposeConvOptionsT()
            options.padding = sch.Padding.SAME if padding == 1 else sch.Padding.VALID
            options.strideW, options.strideH = int(stride_w), int(stride_h)
            op.opcodeIndex = len(m.operatorCodes) - 1
            op.inputs = [len(sg.tensors) - 1, op.inputs[1], op.inputs[0], op.inputs[2]]
            op.builtinOptionsType, op.builtinOptions = sch.BuiltinOptions.TransposeConvOptions, options
            op.customOptions = None
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    out.write_bytes(bytes(fb.Output()))
    return out


def litert(path: Path, feeds: list[np.ndarray]) -> list[np.ndarray]:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         num_threads=1)
    interp.allocate_tensors()
    for d, x in zip(interp.get_input_details(), feeds, strict=True):
        interp.set_tensor(d["index"], x)
    interp.invoke()
    return [interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()]


def check(path: Path, work: Path) -> str:
    """One model: compiled? built and run? its largest error against LiteRT, relative to max(1, |output|)."""
    work.mkdir(parents=True, exist_ok=True)
    run = subprocess.run([*AOTC, str(path), "-o", str(work / "out")], capture_output=True, text=True)
    if run.returncode != 0:
        return f"refused: {run.stderr.strip().splitlines()[-1]}"
    build = subprocess.run(["cmake", "--build", str(work / "out"), "-j", "2"], capture_output=True, text=True)
    if build.returncode != 0:
        return f"compiled, build failed: {build.stderr.strip()[-300:]}"
    meta = json.loads((work / "out" / "bundle" / "metadata.json").read_text())
    rng = np.random.default_rng(0)
    feeds = [rng.uniform(-1, 1, s["shape"]).astype(s["dtype"]) for s in meta["inputs"]]
    np.savez(work / "in.npz", **{s["name"]: f for s, f in zip(meta["inputs"], feeds, strict=True)})
    ran = subprocess.run([*AOTC, "run", str(work / "out"), "--inputs", str(work / "in.npz"), "--outputs",
                          str(work / "res.npz")], capture_output=True, text=True)
    if ran.returncode != 0:
        return f"compiled and built, run failed: {ran.stderr.strip()[-300:]}"
    res = np.load(work / "res.npz")
    ours = [res[s["name"]] for s in meta["outputs"]]
    reference = litert_copy(path, work / "litert.tflite")
    if reference is None:
        return f"compiled, built, ran; no LiteRT reference for {', '.join(custom_ops(path))}"
    errors = []
    for got, want in zip(ours, litert(reference, feeds), strict=True):
        if got.shape != want.shape:
            return f"output shape {got.shape}, LiteRT's {want.shape}"
        errors.append(float(np.abs(got.astype(np.float64) - want).max()) / max(1.0, float(np.abs(want).max())))
    return f"matches LiteRT: max error {max(errors):.2g} (relative to max(1, |output|))"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/mediapipe_models"))
    parser.add_argument("--only", default="", help="models whose file name contains this")
    args = parser.parse_args()
    for path in fetch(args.dir):
        if args.only in path.name:
            customs = custom_ops(path)
            print(f"{path.stem} ({', '.join(customs) or 'no custom ops'}): "
                  f"{check(path, args.dir / 'work' / path.stem)}", flush=True)


if __name__ == "__main__":
    main()
