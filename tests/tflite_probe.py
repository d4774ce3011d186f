"""Which quantized forms of TFLite's builtins LiteRT's reference resolver (BUILTIN_REF) runs: a one-op
model per (op, type), written with the schema, invoked in a subprocess of its own (a kernel may abort).

    python tests/tflite_probe.py            prints {op: (int8, int16)} for aot/frontend/tflite/reference_types.py
    python tests/tflite_probe.py --kernels  prints which builtins each resolver has no kernel for (KERNELS there)

"int8": int8 activations (the converter's full-int8); "int16": 16x8's int16 activations (zero point 0).
An op "runs" when allocate_tensors and invoke succeed on the model. Each model is the form the converter
writes (output scales the kernel requires: LOGISTIC's 1/256, LOG_SOFTMAX's 16/256, ...), so a refusal
is the kernel's type dispatch, not a bad model. tests/frontend/test_tflite_reference_types.py (slow)
holds the table equal to this probe on the installed LiteRT.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

# (op, inputs, output, options): inputs "x" / "x2" (the tested type, quantized), "w" (an int8 constant
# [4, 4], the 16x8 weights' type), or a constant numpy array; output "T" (the tested type, default
# quantization), ("T", scale_int8, zero_int8, scale_int16), or another type's name ("bool", "int32")
SPECS: list[tuple] = []


def _spec(op: str, inputs: tuple = ("x",), out: object = "T", options: tuple | None = None) -> None:
    SPECS.append((op, inputs, out, options))


_AXES = np.array([1, 2], np.int32)
for _op in ("ABS", "CEIL", "COS", "ELU", "EXP", "FLOOR", "HARD_SWISH", "LOG", "NEG", "RELU", "RELU6",
            "RELU_N1_TO_1", "RELU_0_TO_1", "ROUND", "RSQRT", "SIN", "SIGN", "SQRT", "SQUARE", "ZEROS_LIKE"):
    _spec(_op)
_spec("LOGISTIC", out=("T", 1 / 256, -128, 1 / 32768))
_spec("TANH", out=("T", 1 / 128, 0, 1 / 32768))
_spec("SOFTMAX", out=("T", 1 / 256, -128, 1 / 32768), options=("SoftmaxOptions", {"beta": 1.0}))
_spec("LOG_SOFTMAX", out=("T", 16 / 256, 127, 16 / 32768), options=("LogSoftmaxOptions", {}))
_spec("L2_NORMALIZATION", out=("T", 1 / 128, 0, 1 / 32768), options=("L2NormOptions", {}))
_spec("LEAKY_RELU", options=("LeakyReluOptions", {"alpha": 0.2}))
_spec("GELU", options=("GeluOptions", {"approximate": False}))
for _op in ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "FLOOR_DIV", "FLOOR_MOD", "POW",
            "ATAN2"):
    _spec(_op, ("x", "x2"))
_spec("PRELU", ("x", "x2"))
_spec("BATCH_MATMUL", ("x", "x2"), options=("BatchMatMulOptions", {}))
for _op in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"):
    _spec(_op, ("x", "x2"), "bool")
for _op in ("MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN"):
    _spec(_op, ("x", _AXES), options=("ReducerOptions", {"keepDims": True}))
_spec("ARG_MAX", ("x", np.array([3], np.int32)), "int32", ("ArgMaxOptions", {"outputType": 2}))
_spec("ARG_MIN", ("x", np.array([3], np.int32)), "int32", ("ArgMinOptions", {"outputType": 2}))
_spec("CUMSUM", ("x", np.array(1, np.int32)), options=("CumsumOptions", {}))
_spec("RESIZE_BILINEAR", ("x", np.array([8, 8], np.int32)), options=("ResizeBilinearOptions", {}))
_spec("RESIZE_NEAREST_NEIGHBOR", ("x", np.array([8, 8], np.int32)), options=("ResizeNearestNeighborOptions", {}))
_spec("SPACE_TO_DEPTH", options=("SpaceToDepthOptions", {"blockSize": 2}))
_spec("DEPTH_TO_SPACE", options=("DepthToSpaceOptions", {"blockSize": 2}))
_spec("FULLY_CONNECTED", ("x", "w"), options=("FullyConnectedOptions", {}))
_spec("ADD_N", ("x", "x"))
_spec("CAST", out="float32", options=("CastOptions", {}))
_spec("DEQUANTIZE", out="float32")


def model(spec: tuple, dtype: str, version: int = 1) -> bytes:
    """The one-op model of `spec` on `dtype` ("int8" or "int16") activations, the op at `version`."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch

    op, inputs, out, options = spec
    m, sg = sch.ModelT(), sch.SubGraphT()
    m.version, m.buffers, m.subgraphs, m.operatorCodes, sg.tensors, sg.operators = 3, [sch.BufferT()], [sg], [], [], []
    types = {"int8": sch.TensorType.INT8, "int16": sch.TensorType.INT16, "int32": sch.TensorType.INT32,
             "bool": sch.TensorType.BOOL, "float32": sch.TensorType.FLOAT32}
    wide = dtype == "int16"

    def tensor(shape, t, scale=None, zero=0, data=None) -> int:
        x = sch.TensorT()
        x.shape, x.type, x.name, x.buffer = list(shape), types[t], f"t{len(sg.tensors)}".encode(), len(m.buffers)
        if scale is not None:
            x.quantization = sch.QuantizationParametersT()
            x.quantization.scale, x.quantization.zeroPoint = [scale], [zero]
        buf = sch.BufferT()
        if data is not None:
            buf.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        m.buffers.append(buf)
        sg.tensors.append(x)
        return len(sg.tensors) - 1

    shape = [1, 4, 4, 4]
    ins, feeds = [], []
    for i in inputs:
        if isinstance(i, str) and i in ("x", "x2"):
            ins.append(tensor(shape, dtype, 0.05 if i == "x" else 0.04, 0 if wide else (-3 if i == "x" else 5)))
            feeds.append(ins[-1])
        elif isinstance(i, str) and i == "w":
            ins.append(tensor([4, 4], "int8", 0.02, 0, np.arange(16, dtype=np.int8).reshape(4, 4)))
        else:
            ins.append(tensor(i.shape, "int32", data=i))
    y_shape = {"ARG_MAX": [1, 4, 4], "ARG_MIN": [1, 4, 4], "RESIZE_BILINEAR": [1, 8, 8, 4],
               "RESIZE_NEAREST_NEIGHBOR": [1, 8, 8, 4], "SPACE_TO_DEPTH": [1, 2, 2, 16], "DEPTH_TO_SPACE": [1, 8, 8, 1],
               "FULLY_CONNECTED": [1, 4, 4, 4], "MEAN": [1, 1, 1, 4], "SUM": [1, 1, 1, 4], "REDUCE_PROD": [1, 1, 1, 4],
               "REDUCE_MAX": [1, 1, 1, 4], "REDUCE_MIN": [1, 1, 1, 4]}.get(op, shape)
    if out == "T":
        y = tensor(y_shape, dtype, 0.05, 0 if wide else -3)
    elif isinstance(out, tuple):
        y = tensor(y_shape, dtype, out[3] if wide else out[1], 0 if wide else out[2])
    else:
        y = tensor(y_shape, out)
    code = getattr(sch.BuiltinOperator, op)
    c = sch.OperatorCodeT()
    c.builtinCode, c.deprecatedBuiltinCode, c.version = code, min(code, 127), version
    m.operatorCodes.append(c)
    o = sch.OperatorT()
    o.opcodeIndex, o.inputs, o.outputs = 0, ins, [y]
    if options is not None:
        name, fields = options
        opts = getattr(sch, f"{name}T")()
        for k, v in fields.items():
            setattr(opts, k, v)
        o.builtinOptionsType, o.builtinOptions = getattr(sch.BuiltinOptions, name), opts
    sg.operators.append(o)
    sg.inputs, sg.outputs = feeds, [y]
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def runs(path: str) -> None:
    """Exit 0 when BUILTIN_REF allocates and invokes the model (on zeros), else nonzero."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interp = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF, num_threads=1)
    interp.allocate_tensors()
    for d in interp.get_input_details():
        interp.set_tensor(d["index"], np.ones(d["shape"], d["dtype"]))
    interp.invoke()


def probe(tmp: Path) -> dict[str, tuple[bool, bool]]:
    """{op: (runs on int8, runs on int16)} over SPECS."""
    found = {}
    for spec in SPECS:
        ok = []
        for dtype in ("int8", "int16"):
            path = tmp / f"{spec[0]}_{dtype}.tflite"
            path.write_bytes(model(spec, dtype))
            r = subprocess.run([sys.executable, __file__, "--run", str(path)], capture_output=True)
            ok.append(r.returncode == 0)
        found[spec[0]] = (ok[0], ok[1])
    return found


def registered(path: str, resolver: str) -> None:
    """Exit 0 when `resolver` ("ref": BUILTIN_REF, "default": the default builtins) has a kernel for the model's op
    (constructing the interpreter looks every op up; no allocation, so options and types play no part), 3 when it
    reports none, else nonzero."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = OpResolverType.BUILTIN_REF if resolver == "ref" else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    try:
        Interpreter(model_path=path, experimental_op_resolver_type=kind, num_threads=1)
    except ValueError as e:
        sys.exit(3 if "Didn't find op for builtin opcode" in str(e) else 4)


def kernels(tmp: Path, ops: list[str]) -> dict[str, tuple[bool, bool]]:
    """{op: (BUILTIN_REF has a kernel, the default resolver has one)} over `ops`, a float32 one-op model each, at
    versions 1 to 3 until one is found (BROADCAST_TO starts at 2)."""
    found = {}
    for op in ops:
        has = [False, False]
        for version in (1, 2, 3):
            path = tmp / f"{op}_kernel{version}.tflite"
            path.write_bytes(model((op, ("x",), "float32", None), "int8", version))
            for k, r in enumerate(("ref", "default")):
                has[k] = has[k] or subprocess.run([sys.executable, __file__, "--registered", str(path), r],
                                                  capture_output=True).returncode != 3
            if all(has):
                break
        found[op] = (has[0], has[1])
    return found


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        runs(sys.argv[2])
    elif sys.argv[1:2] == ["--registered"]:
        registered(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["--kernels"]:
        import tempfile

        from ai_edge_litert import schema_py_generated as sch

        names = sorted(k for k, v in vars(sch.BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int))
        with tempfile.TemporaryDirectory() as d:
            for op, (ref, default) in kernels(Path(d), names).items():
                if not (ref and default):
                    print(f"    {op!r}: ({ref}, {default}),")
    else:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            for op, (i8, i16) in probe(Path(d)).items():
                print(f"    {op!r}: ({i8}, {i16}),")
