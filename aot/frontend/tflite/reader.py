"""Read a .tflite flatbuffer with TFLite's official schema into plain records.

The schema is the generated Python module ai-edge-litert ships (schema_py_generated.py), read with
the `flatbuffers` package: no parser of our own. ai-edge-litert is an optional dependency (the
`tflite` extra); without it a .tflite file is refused with the pip command that adds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from aot.errors import AotcError
from aot.frontend.tflite.quant import QuantParams, quant_params
from aot.frontend.tflite.sparse import densify
from aot.frontend.tflite.validate import validate

# TensorType -> numpy dtype, for the types aotc can hold
NUMPY_DTYPE = {0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 6: "bool", 7: "int16", 8: "complex64",
               9: "int8", 10: "float64", 12: "uint64", 15: "uint32", 16: "uint16"}
# (uint32, uint64: TFLM's signal ops too; complex64: held as float32 pairs between RFFT2D and COMPLEX_ABS, complex64.py)
# packed sub-byte constants (TensorType -> the numpy dtype they are held as, bits an element): INT4, INT2 and UINT4,
# as the converter and ai-edge-quantizer write int4 weights, unpacked when read (LiteRT's UnpackPackedIntToInt8)
PACKED = {17: ("int8", 4), 19: ("int8", 2), 20: ("uint8", 4)}
RESOURCE = 13  # a resource variable's handle (VAR_HANDLE's output): no data, read as "resource"
# the custom ops the frontend lowers (detect.py, mediapipe.py, signal.py; ops.py's table); any other is refused here
CUSTOM_OPS = (
    "TFLite_Detection_PostProcess",
    "Convolution2DTransposeBias",
    "MaxPoolingWithArgmax2D",
    "MaxUnpooling2D",
    "Landmarks2TransformMatrix",
    "TransformTensorBilinear",
    "TransformLandmarks",
    # TFLM's signal library: its audio front end (signal.py)
    "SignalWindow", "SignalFftAutoScale", "SignalRfft", "SignalEnergy", "SignalFilterBank",
    "SignalFilterBankSquareRoot", "SignalFilterBankSpectralSubtraction", "SignalPCAN", "SignalFilterBankLog",
    "SignalFramer", "SignalStacker", "SignalOverlapAdd", "SignalDelay", "SignalIrfft",
)
CUSTOM_LOWERED = frozenset(CUSTOM_OPS)


def schema() -> ModuleType:
    """TFLite's generated schema module, or a one-line error naming the pip command that adds it."""
    try:
        from ai_edge_litert import schema_py_generated
    except ImportError as e:
        from aot.paths import install_command

        raise AotcError(f"reading .tflite files needs ai-edge-litert (TFLite's schema); install it with: "
                        f"{install_command('tflite')}") from e
    return schema_py_generated


@dataclass
class TflTensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    data: np.ndarray | None  # constant data (from its buffer), else None
    quant: QuantParams | None
    variable: bool = False
    blockwise: bool = False  # quantized by blocks (QuantizationDetails BlockwiseQuantization): refused where read
    signature: tuple[int, ...] = ()  # shape_signature: -1 where the converter leaves a dimension to the run


@dataclass
class TflOp:
    index: int
    op: str  # BuiltinOperator name, e.g. "CONV_2D"
    inputs: list[int]  # tensor indices, -1 for an omitted optional input
    outputs: list[int]
    options: Any  # the op's *OptionsT object (None if it has none)
    intermediates: list[int] = field(default_factory=list)  # tensor indices (the integer LSTM's scales)
    custom: bytes = b""  # a custom op's custom_options, as the file holds them

    @property
    def name(self) -> str:
        return f"{self.op.split(':')[-1]}_{self.index}"


class OpName:
    """A TFLite op as the node an AotcError names: node 'CONV_2D_3' (CONV_2D)."""

    def __init__(self, op: TflOp):
        self.name, self.op_type = op.name, op.op.split(":")[0]

    def describe(self) -> str:
        return f"node '{self.name}' ({self.op_type})"


@dataclass
class TflModel:
    path: str
    tensors: list[TflTensor]
    ops: list[TflOp]
    inputs: list[int]
    outputs: list[int]
    description: str = ""
    subgraphs: int = 1
    extra: dict[str, Any] = field(default_factory=dict)


def read_tflite(path: str | Path) -> TflModel:
    """The main subgraph of a .tflite file, the others (WHILE's, IF's, CALL_ONCE's) in its
    extra['subgraphs']; refuses what the frontend cannot map (custom ops it does not lower, sparse tensors) by
    name."""
    sch = schema()
    path = Path(path)
    try:
        buf = path.read_bytes()
    except OSError as e:
        raise AotcError(f"cannot read model '{path}': {e.strerror or e}") from e
    try:
        if not sch.Model.ModelBufferHasIdentifier(buf, 0):
            raise ValueError("no TFL3 file identifier")
        model = sch.ModelT.InitFromPackedBuf(buf, 0)
    except Exception as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise AotcError(f"cannot read model '{path}': not a valid TFLite file ({why})") from e
    if not model.subgraphs:
        raise AotcError(f"cannot read model '{path}': the TFLite file has no subgraph")
    names = {v: k for k, v in vars(sch.BuiltinOperator).items() if not k.startswith("_")}
    codes = [op_code_name(c, names) for c in (model.operatorCodes or [])]
    validate(sch, model, buf, codes, str(path), NUMPY_DTYPE, PACKED)  # every index, size and table, before use
    subgraphs = [_subgraph(model, sg, k, codes, buf, path) for k, sg in enumerate(model.subgraphs)]
    main = subgraphs[0]
    main.description = (model.description or b"").decode("utf-8", "replace") \
        if isinstance(model.description, bytes) else str(model.description or "")
    main.subgraphs = len(model.subgraphs)
    main.extra["subgraphs"] = subgraphs  # WHILE's, IF's and CALL_ONCE's, by index
    return main


def _subgraph(model: Any, sg: Any, k: int, codes: list[str], buf: bytes, path: Path) -> TflModel:
    ops = []
    for j, op in enumerate(sg.operators or []):
        name = codes[op.opcodeIndex]
        # a custom op's options: its flexbuffer, as bytes
        options = bytes(bytearray(op.customOptions if op.customOptions is not None else [])) \
            if name.startswith("CUSTOM:") else op.builtinOptions if op.builtinOptions is not None \
            else getattr(op, "builtinOptions2", None)  # the StableHLO ops' options are in builtin_options_2
        ops.append(TflOp(j, name, [int(i) for i in (op.inputs if op.inputs is not None else [])],
                         [int(i) for i in (op.outputs if op.outputs is not None else [])], options,
                         [int(i) for i in (op.intermediates if op.intermediates is not None else [])],
                         bytes(op.customOptions) if op.customOptions is not None else b""))
    custom = next((o for o in ops if o.op.startswith("CUSTOM:") and o.op[7:] not in CUSTOM_LOWERED), None)
    if custom is not None:  # before the tensors, whose types (e.g. TFLM signal's uint32) may be the custom op's
        library = " (TFLM signal library)" if custom.op[7:].startswith("Signal") else ""
        raise AotcError(f"custom op '{custom.op[7:]}'{library} is not supported", node=OpName(custom))
    tensors = [_tensor(i, t, model.buffers or [], buf, path) for i, t in enumerate(sg.tensors or [])]
    for op in ops:  # blockwise scales (a float16 tensor of its own, per block of a row) are not read yet
        block = next((tensors[i] for i in op.inputs if i >= 0 and tensors[i].blockwise), None)
        if block is not None:
            raise AotcError(f"tensor '{block.name}' is quantized by blocks or a custom scheme (QuantizationDetails: "
                            "ai-edge-quantizer's blockwise recipes), which aotc does not support", node=OpName(op))
    ops = _fold_constants(ops, tensors)
    name = sg.name.decode("utf-8", "replace") if isinstance(sg.name, bytes) else str(sg.name or f"subgraph{k}")
    return TflModel(str(path), tensors, ops, [int(i) for i in (sg.inputs if sg.inputs is not None else [])],
                    [int(i) for i in (sg.outputs if sg.outputs is not None else [])],
                    extra={"name": name, "index": k})


def tensor_name(t: Any, k: int) -> str:
    """The name of tensor `k` (a schema TensorT): an empty name (b"" too) is the index's, since the ONNX the
    frontend writes names every value."""
    return (t.name.decode("utf-8", "replace") if isinstance(t.name, bytes) else str(t.name or "")) or f"tensor_{k}"


def _fold_constants(ops: list[TflOp], tensors: list[TflTensor]) -> list[TflOp]:
    """DEQUANTIZE and DENSIFY of a constant done now: the output becomes the constant the next op reads
    as weights (issue 50). The converter's float16 quantisation stores every weight as float16 behind a
    DEQUANTIZE (widened exactly), dynamic-range quantisation some as int8 with a scale: (q - zero point)
    * scale, in float64 and rounded once to float32, which is TFLite's float product (both round the
    exact product). A pruned model's sparse weights (made dense by the reader) sit behind a DENSIFY."""
    kept = []
    for op in ops:
        x = tensors[op.inputs[0]] if op.op in ("DEQUANTIZE", "DENSIFY") and op.inputs else None
        y = tensors[op.outputs[0]] if x is not None and op.outputs else None
        if x is None or y is None or x.data is None or y.data is not None or y.variable:
            kept.append(op)
            continue
        if x.data.size != int(np.prod(y.shape, dtype=np.int64)):
            raise AotcError(f"input '{x.name}' has {x.data.size} elements, output '{y.name}' {list(y.shape)}",
                            node=OpName(op))
        if op.op == "DENSIFY" and x.dtype == y.dtype:
            y.data = x.data.reshape(y.shape).copy()
        elif y.dtype != "float32":
            kept.append(op)
        elif x.dtype == "float16":
            y.data = x.data.astype(np.float32).reshape(y.shape)
        elif x.dtype in ("int8", "uint8", "int16") and x.quant is not None:
            q = x.quant
            shape = [1] * x.data.ndim
            if q.per_channel:
                shape[q.axis] = q.scale.size
            scale = q.scale.astype(np.float64).reshape(shape if q.per_channel else [])
            zero = q.zero_point.astype(np.float64).reshape(shape if q.per_channel else [])
            y.data = ((x.data.astype(np.float64) - zero) * scale).astype(np.float32).reshape(y.shape)
        else:
            kept.append(op)
    return kept


def op_code_name(code: Any, names: dict[int, str]) -> str:
    builtin = max(int(code.builtinCode), int(code.deprecatedBuiltinCode))  # old files set only the deprecated one
    name = names.get(builtin, f"builtin {builtin}")
    if name == "CUSTOM":
        custom = code.customCode.decode("utf-8", "replace") if isinstance(code.customCode, bytes) \
            else str(code.customCode)
        return f"CUSTOM:{custom}"
    return name


def unpack_bits(raw: np.ndarray, count: int, bits: int, signed: bool) -> np.ndarray:
    """`count` elements of `bits` bits packed in the bytes of `raw`, the first in each byte's lowest bits (LiteRT's
    UnpackPackedIntToInt8), as int8 (signed, two's complement) or uint8."""
    per = 8 // bits
    raw = np.asarray(raw, np.uint8).reshape(-1)
    if raw.size * per < count:
        raise AotcError(f"a {bits}-bit constant of {count} elements has only {raw.size} bytes")
    fields = np.stack([(raw >> (bits * k)) & ((1 << bits) - 1) for k in range(per)], axis=1).reshape(-1)[:count]
    if not signed:
        return fields.astype(np.uint8)
    return (fields.astype(np.int16) - ((fields >= 1 << (bits - 1)) << bits)).astype(np.int8)


def _tensor(k: int, t: Any, buffers: list, buf: bytes, path: Path) -> TflTensor:
    name = tensor_name(t, k)
    shape = tuple(int(d) for d in (t.shape if t.shape is not None else []))
    packed = PACKED.get(int(t.type))
    dtype = "resource" if int(t.type) == RESOURCE else packed[0] if packed else NUMPY_DTYPE.get(int(t.type))
    if dtype is None:
        raise AotcError(f"tensor '{name}' has TFLite type {int(t.type)}, which aotc does not support")
    if t.shapeSignature is not None and any(int(d) < 0 for d in t.shapeSignature) and k >= 0:
        pass  # a dynamic batch in the signature: the shape itself is static (1), which aotc compiles
    data = None
    b = buffers[t.buffer] if 0 < t.buffer < len(buffers) else None
    if b is not None and dtype != "resource":
        if b.offset > 1:  # large models keep buffers after the flatbuffer
            raw = np.frombuffer(buf, np.uint8, count=int(b.size), offset=int(b.offset))
        elif b.data is not None and len(b.data):
            raw = np.asarray(b.data, dtype=np.uint8)
        else:
            raw = None
        if raw is not None and packed is not None:
            data = unpack_bits(raw, int(np.prod(shape, dtype=np.int64)), packed[1], dtype == "int8").reshape(shape)
        elif raw is not None and t.sparsity is not None:  # a pruned model's weights: made dense here
            data = densify(np.frombuffer(raw.tobytes(), dtype=dtype), shape, t.sparsity, name)
        elif raw is not None:
            data = np.frombuffer(raw.tobytes(), dtype=dtype).reshape(shape).copy()
    if packed is not None and data is None:
        raise AotcError(f"tensor '{name}' is {packed[1]}-bit and computed at run time, which aotc does not support "
                        "(packed sub-byte tensors are read as constants)")
    if t.sparsity is not None and data is None:
        raise AotcError(f"tensor '{name}' is sparse and computed at run time, which aotc does not support")
    return TflTensor(k, name, shape, dtype, data, quant_params(t.quantization, len(shape)),
                     bool(t.isVariable), t.quantization is not None and int(t.quantization.detailsType or 0) != 0,
                     tuple(int(d) for d in t.shapeSignature) if t.shapeSignature is not None else ())
