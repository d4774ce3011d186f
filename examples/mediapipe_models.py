"""MediaPipe's own models through aotc (issue 50; not run in CI): fetch the mediapipe wheel that still
ships them (mediapipe/modules/*/*.tflite), compile, build and run each, and compare it with LiteRT.

    python examples/mediapipe_models.py [--dir /tmp/mediapipe_models] [--only selfie]

The reference is LiteRT's reference kernels (BUILTIN_REF). LiteRT does not register MediaPipe's custom
ops, so for a model that has them it runs a copy without them, their outputs given as inputs and their
inputs read as outputs, and tests/mediapipe_numpy.py (the published kernels in numpy) computes them in
between, again until nothing changes. The model files are MediaPipe's (Apache-2.0) and are not part of
aotc: they stay in --dir.
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


def _cut(path: Path, out: Path) -> tuple[Path, list[tuple[str, list[int], list[int], bytes]], int]:
    """A copy LiteRT can run: the custom ops taken out, their outputs made inputs (after the model's own)
    and their run-time inputs outputs (after the model's own). Also the custom ops (name, inputs,
    outputs, options) in order, and how many outputs the model has."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    sg = m.subgraphs[0]
    custom = {k for k, c in enumerate(m.operatorCodes)
              if max(c.builtinCode, c.deprecatedBuiltinCode) == sch.BuiltinOperator.CUSTOM}
    kept_codes = [k for k in range(len(m.operatorCodes)) if k not in custom]
    ops, kept = [], []
    for op in sg.operators:
        if op.opcodeIndex in custom:
            ops.append((m.operatorCodes[op.opcodeIndex].customCode.decode(), [int(i) for i in op.inputs],
                        [int(i) for i in op.outputs], bytes(op.customOptions) if op.customOptions is not None else b""))
        else:
            op.opcodeIndex = kept_codes.index(op.opcodeIndex)
            kept.append(op)
    m.operatorCodes = [m.operatorCodes[k] for k in kept_codes]
    sg.operators = kept
    n_out = len(sg.outputs)
    made = [o for _, _, outs, _ in ops for o in outs]

    def constant(i: int) -> bool:
        b = m.buffers[sg.tensors[i].buffer]
        return b.data is not None and len(b.data) > 0 or b.offset > 1

    read = [i for _, ins, _, _ in ops for i in ins if not constant(i)]
    sg.inputs = [*sg.inputs, *made]
    sg.outputs = [*sg.outputs, *dict.fromkeys(read)]
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    out.write_bytes(bytes(fb.Output()))
    return out, ops, n_out


def _custom(name: str, xs: list[np.ndarray], options: bytes) -> list[np.ndarray]:
    """One custom op by the numpy reference of tests/mediapipe_numpy.py."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import mediapipe_numpy as mp
    from flatbuffers import flexbuffers

    ints = [int(v) for v in np.frombuffer(options[:24], "<i4")] if len(options) >= 12 else []
    if name == "Convolution2DTransposeBias":
        return [mp.transpose_conv_bias(xs[0], xs[1], xs[2], *ints[:3])]
    if name == "MaxPoolingWithArgmax2D":
        return list(mp.max_pool_argmax(xs[0], *ints[:6]))
    if name == "MaxUnpooling2D":
        return [mp.max_unpooling(xs[0], xs[1], *ints[:5])]
    if name == "TransformLandmarks":
        return [mp.transform_landmarks(xs[0], xs[1])]
    o = flexbuffers.Loads(options)
    if name == "TransformTensorBilinear":
        h, w = o["output_size"][:2] if "output_size" in o else (o["output_height"], o["output_width"])
        return [mp.transform_tensor_bilinear(xs[0], xs[1], h, w, align_corners="output_size" not in o)]
    if name == "Landmarks2TransformMatrix":
        return [mp.landmarks_to_transform_matrix(xs[0], [int(v) for v in o["subset_idxs"]], o["left_rotation_idx"],
                                                 o["right_rotation_idx"], o["target_rotation_radians"],
                                                 o["output_height"], o["output_width"], o["scale_x"], o["scale_y"])]
    raise ValueError(f"no reference for {name}")


def reference(path: Path, feeds: list[np.ndarray], work: Path) -> list[np.ndarray]:
    """The model's outputs, then its custom ops' (in order): LiteRT's reference kernels for its builtins,
    the numpy references for its custom ops. LiteRT runs the cut copy again until the custom ops' inputs
    stop changing (once per custom op that feeds another, at most)."""
    from ai_edge_litert import schema_py_generated as sch
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    cut, ops, n_out = _cut(path, work / "litert.tflite")
    m = sch.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    tensors = m.subgraphs[0].tensors
    interp = Interpreter(model_path=str(cut), experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                         num_threads=1)
    interp.allocate_tensors()
    ins, outs = interp.get_input_details(), interp.get_output_details()
    made = {o: np.zeros(tensors[o].shape, np.float32) for _, _, os_, _ in ops for o in os_}
    for _ in range(len(ops) + 1):
        for d, x in zip(ins, [*feeds, *made.values()], strict=True):
            interp.set_tensor(d["index"], x)
        interp.invoke()
        values = {int(d["index"]): interp.get_tensor(d["index"]).copy() for d in outs}
        values.update(made)
        for name, op_ins, op_outs, options in ops:
            xs = []
            for i in op_ins:
                if i in values:
                    xs.append(values[i])
                else:  # a constant
                    buf = m.buffers[tensors[i].buffer]
                    xs.append(np.frombuffer(bytes(buf.data), np.float32).reshape(tensors[i].shape))
            for o, y in zip(op_outs, _custom(name, xs, options), strict=True):
                values[o] = y
        changed = any(not np.array_equal(values[o], made[o]) for o in made)
        made = {o: values[o] for o in made}
        if not changed:
            break
    return [interp.get_tensor(d["index"]).copy() for d in outs[:n_out]] + [made[o] for o in made]


def exposed(path: Path, out: Path) -> Path:
    """The model with its custom ops' outputs also model outputs (after its own), so each is compared."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    sg = m.subgraphs[0]
    custom = {k for k, c in enumerate(m.operatorCodes)
              if max(c.builtinCode, c.deprecatedBuiltinCode) == sch.BuiltinOperator.CUSTOM}
    made = [int(o) for op in sg.operators if op.opcodeIndex in custom for o in op.outputs]
    sg.outputs = [*sg.outputs, *(o for o in made if o not in list(sg.outputs))]
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    out.write_bytes(bytes(fb.Output()))
    return out


def check(path: Path, work: Path) -> str:
    """One model: compiled? built and run? Its largest error against the reference, relative to
    max(1, |output|), over the model's outputs and over its custom ops' outputs."""
    work.mkdir(parents=True, exist_ok=True)
    model = exposed(path, work / "model.tflite")
    run = subprocess.run([*AOTC, str(model), "-o", str(work / "out")], capture_output=True, text=True)
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
    wanted = reference(path, feeds, work)
    errors = []
    for got, want in zip(ours, wanted, strict=True):
        if got.shape != want.shape:
            return f"output shape {got.shape}, the reference's {want.shape}"
        errors.append(float(np.abs(got.astype(np.float64) - want).max()) / max(1.0, float(np.abs(want).max())))
    n = _cut(path, work / "litert.tflite")[2]
    text = f"max error {max(errors[:n]):.2g} of max(1, |output|) against the reference"
    return text + (f"; its custom ops' outputs {max(errors[n:]):.2g}" if errors[n:] else "")


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
