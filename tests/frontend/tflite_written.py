"""One-op (or few-op) TFLite models written with LiteRT's schema, for builtins the converter does not write
(StableHLO ops, FAKE_QUANT, EMBEDDING_LOOKUP_SPARSE, quantized FLOOR_DIV ...), and a check of aotc's bundle
against LiteRT on given inputs (tests/frontend/test_tflite_builtins.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]
AOTC = [sys.executable, "-m", "aot.cli"]
_TYPES = {"float32": "FLOAT32", "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
          "bool": "BOOL", "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32", "uint64": "UINT64",
          "float16": "FLOAT16", "complex64": "COMPLEX64"}


class Written:
    """A model under construction: tensors, operators and subgraphs of LiteRT's schema (object API)."""

    def __init__(self) -> None:
        from ai_edge_litert import schema_py_generated as sch

        self.sch = sch
        self.m = sch.ModelT()
        self.m.version, self.m.buffers, self.m.subgraphs, self.m.operatorCodes = 3, [sch.BufferT()], [], []
        self.codes: dict[str, int] = {}
        self.sg = self.subgraph()

    def subgraph(self):
        sg = self.sch.SubGraphT()
        sg.tensors, sg.operators, sg.inputs, sg.outputs = [], [], [], []
        self.m.subgraphs.append(sg)
        return sg

    def tensor(self, shape, dtype: str, data=None, quant: tuple | None = None, sg=None,
               signature: list[int] | None = None) -> int:
        """A tensor of `sg` (the main subgraph by default); `data` makes it a constant; quant = (scale, zero);
        `signature`: the shape signature (-1 where the converter left a dimension dynamic)."""
        sg = sg or self.sg
        t = self.sch.TensorT()
        t.shape, t.type = list(shape), getattr(self.sch.TensorType, _TYPES[dtype])
        t.shapeSignature = signature
        t.name, t.buffer = f"t{len(sg.tensors)}".encode(), len(self.m.buffers)
        if quant is not None:
            t.quantization = self.sch.QuantizationParametersT()
            t.quantization.scale, t.quantization.zeroPoint = [float(quant[0])], [int(quant[1])]
        buf = self.sch.BufferT()
        if data is not None:
            buf.data = np.frombuffer(np.ascontiguousarray(np.asarray(data, dtype)).tobytes(), np.uint8)
        self.m.buffers.append(buf)
        sg.tensors.append(t)
        return len(sg.tensors) - 1

    def op(self, name: str, ins: list[int], outs: list[int], options: tuple | None = None, sg=None,
           version: int = 1) -> None:
        """An operator; options = (OptionsName, {field: value}), a BuiltinOptions2 union member when its name
        starts with "StableHLO"."""
        sg = sg or self.sg
        if name not in self.codes:
            code = getattr(self.sch.BuiltinOperator, name)
            c = self.sch.OperatorCodeT()
            c.builtinCode, c.deprecatedBuiltinCode, c.version = code, min(code, 127), version
            self.codes[name] = len(self.m.operatorCodes)
            self.m.operatorCodes.append(c)
        o = self.sch.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = self.codes[name], list(ins), list(outs)
        if options is not None:
            kind, fields = options
            opts = getattr(self.sch, f"{kind}T")()
            for k, v in fields.items():
                setattr(opts, k, v)
            if hasattr(self.sch.BuiltinOptions2, kind):
                o.builtinOptions2Type, o.builtinOptions2 = getattr(self.sch.BuiltinOptions2, kind), opts
            else:
                o.builtinOptionsType, o.builtinOptions = getattr(self.sch.BuiltinOptions, kind), opts
        sg.operators.append(o)

    def save(self, path: Path, inputs: list[int], outputs: list[int]) -> Path:
        import flatbuffers

        self.sg.inputs, self.sg.outputs = list(inputs), list(outputs)
        fb = flatbuffers.Builder(0)
        fb.Finish(self.m.Pack(fb), file_identifier=b"TFL3")
        path.write_bytes(bytes(fb.Output()))
        return path


def litert(model: Path, feeds: list[np.ndarray], builtin: bool = False) -> list[np.ndarray]:
    """LiteRT's outputs (BUILTIN_REF, or with `builtin` its default kernels), in a subprocess of its own."""
    tmp = model.parent
    np.savez(tmp / "ref_in.npz", **{f"input_{k}": v for k, v in enumerate(feeds)})
    run = subprocess.run([sys.executable, str(HERE / "tflite_reference.py"), str(model), str(tmp / "ref_in.npz"),
                          str(tmp / "ref_out.npz"), *(["--builtin"] if builtin else [])], capture_output=True,
                         text=True)
    assert run.returncode == 0, f"LiteRT failed on {model.name}: {run.stderr[-2000:]}"
    out = np.load(tmp / "ref_out.npz")
    return [out[f"output_{k}"] for k in range(len(out.files))]


def aotc(model: Path, feeds: list[np.ndarray], sanitize: bool = False) -> list[np.ndarray]:
    """aotc's bundle of `model` built warning-free (-Werror; with `sanitize`, under ASan and UBSan) and run on
    `feeds`."""
    from aot.build import cmake_exe

    tmp = model.parent
    out = tmp / f"{model.stem}_out"
    subprocess.run([*AOTC, str(model), "-o", str(out)], check=True)
    flags = ["-DCMAKE_C_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer",
             "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"] if sanitize else []
    subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON", *flags],
                   check=True, capture_output=True)
    subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    np.savez(tmp / "in.npz", **{s["name"]: v for s, v in zip(meta["inputs"], feeds, strict=True)})
    subprocess.run([*AOTC, "run", str(out), "--inputs", str(tmp / "in.npz"), "--outputs", str(tmp / "res.npz")],
                   check=True, capture_output=True)
    res = np.load(tmp / "res.npz")
    return [res[s["name"]] for s in meta["outputs"]]


def compare(model: Path, feeds: list[np.ndarray], builtin: bool = False, sanitize: bool = False) -> None:
    """aotc's outputs against LiteRT's: integers bit for bit, floats within 1e-5 of each output's scale."""
    refs, ours = litert(model, feeds, builtin), aotc(model, feeds, sanitize)
    for k, (got, ref) in enumerate(zip(ours, refs, strict=True)):
        assert got.shape == ref.shape and got.dtype == ref.dtype, (k, got.shape, ref.shape, got.dtype, ref.dtype)
        if ref.dtype.kind == "f":
            scale = max(1.0, float(np.abs(ref).max()))
            assert float(np.abs(got.astype(np.float64) - ref).max()) <= 1e-5 * scale, (k, got, ref)
        else:
            assert np.array_equal(got, ref), (k, got, ref)
