"""One-op (or few-op) TFLite models written with LiteRT's schema, for builtins the converter does not write
(StableHLO ops, FAKE_QUANT, EMBEDDING_LOOKUP_SPARSE, quantized FLOOR_DIV ...), and a check of aotc's bundle
against LiteRT on given inputs (tests/frontend/test_tflite_builtins.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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

    def per_channel(self, t: int, scales, axis: int, sg=None) -> None:
        """Tensor t quantized per channel along `axis` (zero points 0): an int8 conv's weights and int32 bias."""
        q = self.sch.QuantizationParametersT()
        q.scale, q.zeroPoint, q.quantizedDimension = [float(s) for s in scales], [0] * len(scales), axis
        (sg or self.sg).tensors[t].quantization = q

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


def compare(model: Path, feeds: list[np.ndarray], builtin: bool = False, sanitize: bool = False) -> None:
    """aotc's outputs against LiteRT's (BUILTIN_REF, or with `builtin` its default kernels): integers bit for bit,
    floats within 1e-5 of each output's scale. The bundle built warning-free (-Werror; with `sanitize`, under ASan
    and UBSan)."""
    # tests/'s helpers, imported here: bench/tflite_rng_bits.py imports Written with tests/frontend/ alone on its path
    from modelcheck import build_bundle, run_bundle
    from tflite_reference import reference

    refs = list(reference(model, feeds, model.parent, builtin=builtin).values())
    out = model.parent / f"{model.stem}_out"
    meta = build_bundle(model, out, sanitize=sanitize)
    res = run_bundle(out, feeds)
    ours = [res[s["name"]] for s in meta["outputs"]]
    for k, (got, ref) in enumerate(zip(ours, refs, strict=True)):
        assert got.shape == ref.shape and got.dtype == ref.dtype, (k, got.shape, ref.shape, got.dtype, ref.dtype)
        if ref.dtype.kind == "f":
            scale = max(1.0, float(np.abs(ref).max()))
            assert float(np.abs(got.astype(np.float64) - ref).max()) <= 1e-5 * scale, (k, got, ref)
        else:
            assert np.array_equal(got, ref), (k, got, ref)
