"""Issue 50's quantized builtins (aot/frontend/tflite/int8_math.py): BATCH_MATMUL int8 and 16x8, RESIZE_BILINEAR
int8 and int16, SQUARED_DIFFERENCE int8, EXP / GELU / NEG int8 tables and EXP / LOG / GELU / RSQRT int16 tables;
int16 ABS, SQRT, RELU, RELU6, MAXIMUM, MINIMUM and the six comparisons (int8.py), CAST of the integers,
bit-exact with LiteRT's reference kernels (BUILTIN_REF). One model per width holds every case (written with the
schema: shapes, adj_x / adj_y, batch broadcasting, constant operands, every int8 and every int16 input of the
tables), so each is one build; the host build runs under AddressSanitizer and UndefinedBehaviorSanitizer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool, tiered
from modelcheck import aotc, build_bundle
from tflite_reference import reference

HERE = Path(__file__).resolve().parents[1]


class Written:
    """A TFLite model written op by op with the schema."""

    def __init__(self):
        from ai_edge_litert import schema_py_generated as sch

        self.sch = sch
        self.m, self.sg = sch.ModelT(), sch.SubGraphT()
        self.m.version, self.m.buffers, self.m.subgraphs, self.m.operatorCodes = 3, [sch.BufferT()], [self.sg], []
        self.sg.tensors, self.sg.operators, self.outputs = [], [], []

    def tensor(self, shape, dtype: str, scale=None, zero=0, data=None) -> int:
        sch, t = self.sch, self.sch.TensorT()
        t.shape, t.type = list(shape), getattr(sch.TensorType, dtype.upper())
        t.name = f"t{len(self.sg.tensors)}".encode()
        if scale is not None:
            t.quantization = sch.QuantizationParametersT()
            t.quantization.scale, t.quantization.zeroPoint = [scale], [zero]
        buf = sch.BufferT()
        if data is not None:
            buf.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        t.buffer = len(self.m.buffers)
        self.m.buffers.append(buf)
        self.sg.tensors.append(t)
        return len(self.sg.tensors) - 1

    def op(self, name: str, inputs: list[int], out: tuple, options: tuple | None = None) -> None:
        """An op reading `inputs` whose output (shape, dtype, scale, zero) is a model output."""
        sch = self.sch
        code = getattr(sch.BuiltinOperator, name)
        if code not in [c.builtinCode for c in self.m.operatorCodes]:
            c = sch.OperatorCodeT()
            c.builtinCode, c.deprecatedBuiltinCode, c.version = code, min(code, 127), 1
            self.m.operatorCodes.append(c)
        o = sch.OperatorT()
        o.opcodeIndex = [c.builtinCode for c in self.m.operatorCodes].index(code)
        o.inputs, o.outputs = inputs, [self.tensor(*out)]
        if options is not None:
            kind, fields = options
            opts = getattr(sch, f"{kind}T")()
            for k, v in fields.items():
                setattr(opts, k, v)
            o.builtinOptionsType, o.builtinOptions = getattr(sch.BuiltinOptions, kind), opts
        self.sg.operators.append(o)
        self.outputs.append(o.outputs[0])

    def finish(self, inputs: list[int]) -> bytes:
        import flatbuffers

        self.sg.inputs, self.sg.outputs = inputs, self.outputs
        fb = flatbuffers.Builder(0)
        fb.Finish(self.m.Pack(fb), file_identifier=b"TFL3")
        return bytes(fb.Output())


def _bmm(adj_x=False, adj_y=False) -> tuple:
    return ("BatchMatMulOptions", {"adjX": adj_x, "adjY": adj_y})


def _resize(align=False, half=False) -> tuple:
    return ("ResizeBilinearOptions", {"alignCorners": align, "halfPixelCenters": half})


def int8_model() -> tuple[bytes, list[np.ndarray]]:
    """Every int8 case on one model; its inputs (the last holds each int8 value once)."""
    w, rng = Written(), np.random.default_rng(0)
    a = w.tensor([2, 3, 5, 7], "int8", 0.05, -3)
    bm = w.tensor([3, 7, 4], "int8", 0.04, 5)
    at = w.tensor([1, 7, 5], "int8", 0.03, 10)
    x = w.tensor([1, 4, 4, 8], "int8", 0.05, -3)
    xb = w.tensor([8], "int8", 0.04, 5)
    u = w.tensor([1, 256], "int8", 0.05, -3)
    const = w.tensor([4, 7], "int8", 0.02, -1, rng.integers(-128, 128, (4, 7)).astype(np.int8))
    w.op("BATCH_MATMUL", [a, bm], ([2, 3, 5, 4], "int8", 0.3, 2), _bmm())  # batch dims broadcast
    w.op("BATCH_MATMUL", [a, const], ([2, 3, 5, 4], "int8", 0.2, -7), _bmm(adj_y=True))  # constant, transposed
    w.op("BATCH_MATMUL", [at, bm], ([3, 5, 4], "int8", 0.25, 0), _bmm(adj_x=True))
    w.op("BATCH_MATMUL", [const, bm], ([3, 4, 4], "int8", 0.1, 3), _bmm())  # constant left
    w.op("SQUARED_DIFFERENCE", [x, xb], ([1, 4, 4, 8], "int8", 0.5, -128))
    w.op("SQUARED_DIFFERENCE", [x, x], ([1, 4, 4, 8], "int8", 0.01, -100))
    w.op("RESIZE_BILINEAR", [x, w.tensor([2], "int32", data=np.array([7, 9], np.int32))],
         ([1, 7, 9, 8], "int8", 0.05, -3), _resize(half=True))
    w.op("RESIZE_BILINEAR", [x, w.tensor([2], "int32", data=np.array([8, 8], np.int32))],
         ([1, 8, 8, 8], "int8", 0.05, -3), _resize(align=True))
    w.op("RESIZE_BILINEAR", [x, w.tensor([2], "int32", data=np.array([3, 5], np.int32))],
         ([1, 3, 5, 8], "int8", 0.05, -3), _resize())
    w.op("EXP", [u], ([1, 256], "int8", 2.6, -128))
    w.op("GELU", [u], ([1, 256], "int8", 0.03, -20), ("GeluOptions", {"approximate": False}))
    w.op("GELU", [u], ([1, 256], "int8", 0.035, -10), ("GeluOptions", {"approximate": True}))
    w.op("NEG", [u], ([1, 256], "int8", 0.05, -3))
    for dtype in ("float32", "int16", "int32"):  # CAST: the raw integers
        w.op("CAST", [u], ([1, 256], dtype), ("CastOptions", {}))
    feeds = [rng.integers(-128, 128, s).astype(np.int8) for s in ([2, 3, 5, 7], [3, 7, 4], [1, 7, 5], [1, 4, 4, 8],
                                                                  [8])]
    feeds.append(np.arange(-128, 128).astype(np.int8).reshape(1, 256))
    return w.finish([a, bm, at, x, xb, u]), feeds


def int16_model() -> tuple[bytes, list[np.ndarray]]:
    """Every 16x8 case on one model; its input u holds each int16 value once, up each one from 0."""
    w, rng = Written(), np.random.default_rng(1)
    a = w.tensor([2, 5, 7], "int16", 0.001)
    bm = w.tensor([7, 4], "int16", 0.0005)
    x = w.tensor([1, 4, 4, 3], "int16", 0.01)
    u = w.tensor([1, 256, 256], "int16", 1 / 4096)
    up = w.tensor([1, 128, 256], "int16", 1 / 1024)  # RSQRT: LiteRT fails on negative inputs
    const = w.tensor([7, 4], "int8", 0.02, 0, rng.integers(-127, 128, (7, 4)).astype(np.int8))
    w.op("BATCH_MATMUL", [a, bm], ([2, 5, 4], "int16", 0.0001), _bmm())
    w.op("BATCH_MATMUL", [a, const], ([2, 5, 4], "int16", 0.002), _bmm())  # 16x8: int8 weights
    w.op("RESIZE_BILINEAR", [x, w.tensor([2], "int32", data=np.array([7, 6], np.int32))],
         ([1, 7, 6, 3], "int16", 0.01), _resize(half=True))
    w.op("RESIZE_BILINEAR", [x, w.tensor([2], "int32", data=np.array([9, 9], np.int32))],
         ([1, 9, 9, 3], "int16", 0.01), _resize(align=True))
    w.op("EXP", [u], ([1, 256, 256], "int16", 3000 / 32768))
    w.op("LOG", [u], ([1, 256, 256], "int16", 12 / 32768))
    w.op("GELU", [u], ([1, 256, 256], "int16", 8 / 32768), ("GeluOptions", {"approximate": False}))
    w.op("GELU", [u], ([1, 256, 256], "int16", 8 / 32768), ("GeluOptions", {"approximate": True}))
    w.op("RSQRT", [up], ([1, 128, 256], "int16", 64 / 32768))
    for dtype in ("float32", "int8", "int32"):  # CAST: the raw integers (to int8: wrapping)
        w.op("CAST", [u], ([1, 256, 256], dtype), ("CastOptions", {}))
    w.op("ABS", [u], ([1, 256, 256], "int16", 1 / 5000))
    w.op("ABS", [u], ([1, 256, 256], "int16", 1 / 4096))  # the input's scale: no rescaling
    w.op("SQRT", [up], ([1, 128, 256], "int16", 1 / 8192))
    w.op("RELU", [u], ([1, 256, 256], "int16", 1 / 3000))
    w.op("RELU6", [u], ([1, 256, 256], "int16", 6 / 32767))
    c1, c2 = w.tensor([1, 64, 64], "int16", 0.0005), w.tensor([1, 64, 64], "int16", 0.001)
    c3 = w.tensor([64], "int16", 0.001)
    w.op("MAXIMUM", [c2, c3], ([1, 64, 64], "int16", 0.001))
    w.op("MINIMUM", [c2, c3], ([1, 64, 64], "int16", 0.001))
    for name in ("EQUAL", "NOT_EQUAL"):  # by value: inputs quantized unlike
        w.op(name, [c1, c2], ([1, 64, 64], "bool"))
    for name in ("LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"):  # LiteRT orders int16 by the raw integers
        w.op(name, [c2, c3], ([1, 64, 64], "bool"))
    feeds = [rng.integers(-32768, 32768, s).astype(np.int16) for s in ([2, 5, 7], [7, 4], [1, 4, 4, 3])]
    feeds.append(np.random.default_rng(2).permutation(np.arange(-32768, 32768)).astype(np.int16).reshape(1, 256, 256))
    feeds.append(np.arange(0, 32768).astype(np.int16).reshape(1, 128, 256))
    c2v = rng.integers(-32768, 32768, (1, 64, 64))
    near = np.clip(c2v * 2 + rng.integers(-2, 3, c2v.shape), -32768, 32767)  # c1 = 2 c2 in value, often tied
    feeds += [near.astype(np.int16), c2v.astype(np.int16), rng.integers(-32768, 32768, 64).astype(np.int16)]
    return w.finish([a, bm, x, u, up, c1, c2, c3]), feeds


MODELS = {"int8": int8_model, "int16": int16_model}


def compile_and_compare(tmp_path: Path, width: str, target: str = "host", sanitize: bool = False) -> None:
    """Compile the width's model for `target`, build (-Werror; with `sanitize`, under ASan and UBSan), run on its
    inputs; every output equal to BUILTIN_REF's."""
    data, feeds = MODELS[width]()
    bit_exact_with_builtin_ref(tmp_path, f"math_{width}", data, feeds, target, sanitize)


def bit_exact_with_builtin_ref(tmp_path: Path, name: str, data: bytes, feeds: list[np.ndarray], target: str = "host",
                               sanitize: bool = False) -> None:
    """The written model `data` compiled for `target`, built and run on `feeds`: every output equal to BUILTIN_REF's."""
    from aot.build import run_bundle

    model = tmp_path / f"{name}.tflite"
    model.write_bytes(data)
    out = tmp_path / "out"
    meta = build_bundle(model, out, target=target, sanitize=sanitize)
    refs = reference(model, feeds, tmp_path).values()
    ours, _ = run_bundle(out, meta, feeds)
    bad = []
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        got = ours[spec["name"]]
        assert got.dtype == ref.dtype and got.shape == ref.shape, (spec["name"], got.dtype, ref.dtype)
        if not np.array_equal(got, ref):
            bad.append(f"{spec['name']}: {(got != ref).sum()} of {ref.size} differ")
    assert not bad, bad


@pytest.mark.parametrize("width", tiered(["int8", "int16"], {"int8"}))
def test_bit_exact_with_builtin_ref_sanitized(tmp_path, width):
    pytest.importorskip("ai_edge_litert")
    compile_and_compare(tmp_path, width, sanitize=True)


@pytest.mark.full
@pytest.mark.parametrize("width", ["int8", "int16"])
def test_bit_exact_with_builtin_ref_on_cortex_m4(tmp_path, width):

    """The same models for mps2-an386 (Cortex-M4F) under qemu."""
    pytest.importorskip("ai_edge_litert")
    require_tool("qemu-system-arm")
    require_tool("arm-none-eabi-gcc")
    compile_and_compare(tmp_path, width, target="mps2-an386")


@pytest.mark.parametrize(("op", "dtype", "scales", "says"), [
    ("LESS", "int16", (0.001, 0.002), "LiteRT compares the raw int16 integers"),
    ("SQUARED_DIFFERENCE", "int16", (0.001, 0.001), "LiteRT's reference kernels do not define it"),
    ("RESIZE_BILINEAR", "int8", (0.05, 0.1), "does not requantise"),
])
def test_refused_by_name(tmp_path, op, dtype, scales, says):
    """What LiteRT's reference refuses, or computes on the raw integers where they do not stand for the values, is
    refused in one line naming the op (exit 2)."""
    pytest.importorskip("ai_edge_litert")
    w = Written()
    shape = [1, 4, 4, 2]
    x1 = w.tensor(shape, dtype, scales[0])
    if op == "RESIZE_BILINEAR":
        w.op(op, [x1, w.tensor([2], "int32", data=np.array([8, 8], np.int32))], ([1, 8, 8, 2], dtype, scales[1]),
             _resize())
        inputs = [x1]
    else:
        x2 = w.tensor(shape, dtype, scales[1])
        w.op(op, [x1, x2], (shape, "bool" if op == "LESS" else dtype) + (() if op == "LESS" else (0.01,)))
        inputs = [x1, x2]
    model = tmp_path / "m.tflite"
    model.write_bytes(w.finish(inputs))
    run = aotc(model, "-o", tmp_path / "out", "--no-configure", check=False)
    assert run.returncode == 2 and op in run.stderr and says in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_committed_copy_is_the_int16_model():
    """tests/models/tflite/math16_16x8.tflite is int16_model() as written here (the ops tests read the committed
    models: it is the one with 16x8 SQRT, which the converter does not write)."""
    pytest.importorskip("ai_edge_litert")
    assert (HERE / "models" / "tflite" / "math16_16x8.tflite").read_bytes() == int16_model()[0]
