"""A .tflite file checked against itself before the reader uses it (issue 69).

A model file is input a user often did not make; the flatbuffer's own verifier only proves that its
tables can be read, not that they agree. This module checks, on the schema's object API (ModelT), every
value the reader and the lowerings would otherwise index, slice, reshape or divide by:

- tensor indices (op inputs, outputs, intermediates; subgraph inputs and outputs), opcode indices,
  buffer indices, the subgraph indices of WHILE / IF / CALL_ONCE / the StableHLO region ops (in range,
  and no subgraph calling itself);
- buffers: a buffer after the flatbuffer (offset, size) inside the file; a constant's bytes against
  its shape times its element size;
- shapes: no negative dimension, no tensor of 2 GiB or more (aot/limits.py, as for ONNX);
- quantisation: scales finite and positive, zero points in their type's range, per-channel axis and
  lengths that fit the tensor;
- options: an op's builtin options table of the type that op reads (or none, where the lowering has a
  default for every field).

Each refusal is one AotcError naming the tensor or the operator.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from aot.errors import AotcError
from aot.limits import MAX_TENSOR_BYTES, human, tensor_bytes

# the ops whose options table's name is not their own (CONV_2D -> Conv2DOptions is found by name)
_OPTIONS_BY_HAND = {
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions", "L2_POOL_2D": "Pool2DOptions",
    "L2_NORMALIZATION": "L2NormOptions", "MAXIMUM": "MaximumMinimumOptions", "MINIMUM": "MaximumMinimumOptions",
    "MEAN": "ReducerOptions", "SUM": "ReducerOptions", "REDUCE_PROD": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions", "REDUCE_ANY": "ReducerOptions",
    "REDUCE_ALL": "ReducerOptions", "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
    "RANDOM_STANDARD_NORMAL": "RandomOptions", "RANDOM_UNIFORM": "RandomOptions", "MULTINOMIAL": "RandomOptions",
    "CONV_3D_TRANSPOSE": "Conv3DOptions",
}
# ops whose lowering reads its options table without a default for an absent one (strides, axes, subgraphs ...):
# the converter always writes it; every other op's absent table is read as TFLite reads it (defaults)
_OPTIONS_REQUIRED = frozenset({
    "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "CONV_3D", "CONV_3D_TRANSPOSE", "AVERAGE_POOL_2D",
    "MAX_POOL_2D", "L2_POOL_2D", "FULLY_CONNECTED", "LOCAL_RESPONSE_NORMALIZATION", "CONCATENATION", "PACK",
    "UNPACK", "GATHER", "STRIDED_SLICE", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "SPACE_TO_DEPTH",
    "DEPTH_TO_SPACE", "LEAKY_RELU", "REVERSE_SEQUENCE", "BUCKETIZE", "CUMSUM", "FAKE_QUANT", "SVDF", "RNN",
    "UNIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_RNN", "LSTM", "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "BIDIRECTIONAL_SEQUENCE_LSTM", "WHILE", "IF", "CALL_ONCE", "STABLEHLO_COMPOSITE", "STABLEHLO_GATHER",
    "STABLEHLO_SCATTER", "STABLEHLO_REDUCE", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_WHILE", "STABLEHLO_SORT",
})
# the options fields (of the conv and pool tables) that must be positive
_AT_LEAST_ONE = ("strideH", "strideW", "strideD", "dilationHFactor", "dilationWFactor", "dilationDFactor",
                 "filterHeight", "filterWidth")
# integer ranges of zero points, by the numpy dtype the reader gives a tensor
_ZERO_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535)}


class _Op:
    """Just enough of a TflOp for OpName (reader imports this module: no cycle through it)."""

    def __init__(self, index: int, op: str):
        self.index, self.op = index, op

    @property
    def name(self) -> str:
        return f"{self.op.split(':')[-1]}_{self.index}"

    def describe(self) -> str:
        return f"node '{self.name}' ({self.op.split(':')[0]})"


def _text(v: Any, default: str) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) if v is not None else default


def _ints(v: Any) -> list[int]:
    return [int(i) for i in v] if v is not None else []


def expected_options(sch: ModuleType, op: str) -> str | None:
    """The name of the options table `op` (a BuiltinOperator name) reads, or None if it reads none."""
    if op in _OPTIONS_BY_HAND:
        return _OPTIONS_BY_HAND[op]
    key = op.replace("_", "").lower()
    for union in (sch.BuiltinOptions, sch.BuiltinOptions2):
        for name in vars(union):
            if name.endswith("Options") and name[:-len("Options")].lower() == key:
                return name
    return None


def validate(sch: ModuleType, model: Any, buf: bytes, codes: list[str], path: str,
             dtypes: dict[int, str], packed: dict[int, tuple[str, int]]) -> None:
    """Refuse `model` (ModelT read from the bytes `buf`) in one line where its tables disagree (module doc).
    `codes`: the op name of each operator code; `dtypes` and `packed`: the reader's TensorType tables."""
    buffers = model.buffers or []
    for j, b in enumerate(buffers):
        if int(b.offset) > 1 and int(b.offset) + int(b.size) > len(buf):
            raise AotcError(f"cannot read model '{path}': buffer {j} lies at bytes {int(b.offset)}.."
                            f"{int(b.offset) + int(b.size)} of a {len(buf)}-byte file")
    nsub = len(model.subgraphs)
    calls: dict[int, list[tuple[int, Any]]] = {}
    for k, sg in enumerate(model.subgraphs):
        tensors = sg.tensors or []
        where = "" if k == 0 else f" in subgraph {k}"
        for i, t in enumerate(tensors):
            _tensor(i, t, buffers, buf, dtypes, packed, where)
        for what in ("inputs", "outputs"):
            listed = _ints(getattr(sg, what))
            for i in listed:
                if not 0 <= i < len(tensors):
                    raise AotcError(f"cannot read model '{path}': subgraph {k}'s {what} name tensor {i}, but it has "
                                    f"{len(tensors)} tensors")
            empty = next((i for i in listed if k == 0 and what == "inputs" and 0 in _ints(tensors[i].shape)), None)
            if empty is not None:  # (a batch of 0: the loops it would run 0 times are not lowered for it)
                raise AotcError(f"input '{_text(tensors[empty].name, f'tensor_{empty}')}' is "
                                f"{_ints(tensors[empty].shape)}: an input with no elements")
            twice = next((i for n, i in enumerate(listed) if i in listed[:n]), None)
            if twice is not None:
                raise AotcError(f"tensor '{_text(tensors[twice].name, f'tensor_{twice}')}' is listed twice among "
                                f"subgraph {k}'s {what}")
        for j, op in enumerate(sg.operators or []):
            if not 0 <= int(op.opcodeIndex) < len(codes):
                raise AotcError(f"cannot read model '{path}': operator {j}{where} has opcode index "
                                f"{int(op.opcodeIndex)}, but the file has {len(codes)} operator codes")
            node = _Op(j, codes[op.opcodeIndex])
            for what, lowest in (("inputs", -1), ("outputs", 0), ("intermediates", 0)):
                for i in _ints(getattr(op, what)):
                    if not lowest <= i < len(tensors):
                        raise AotcError(f"its {what} name tensor {i}, but {f'subgraph {k}' if k else 'the subgraph'} "
                                        f"has {len(tensors)} tensors", node=node)
            _options(sch, op, node)
            calls[k] = calls.get(k, []) + [(s, node) for s in _subgraph_indices(op)]
    for called in calls.values():
        for s, node in called:
            if not 0 < s < nsub:
                raise AotcError(f"its options name subgraph {s}, but the file has subgraphs 0..{nsub - 1} "
                                "(0 being the main one)", node=node)
    _no_cycle(calls)


def _tensor(i: int, t: Any, buffers: list, buf: bytes, dtypes: dict[int, str], packed: dict[int, tuple[str, int]],
            where: str) -> None:
    name = _text(t.name, f"tensor_{i}")
    shape = _ints(t.shape)
    pack = packed.get(int(t.type))
    dtype = pack[0] if pack else dtypes.get(int(t.type))
    if any(d < 0 for d in shape):
        raise AotcError(f"tensor '{name}'{where} has shape {shape}: a negative dimension")
    itemsize = np.dtype(dtype).itemsize if dtype else 1
    nbytes = tensor_bytes(shape, itemsize)
    if nbytes > MAX_TENSOR_BYTES:
        raise AotcError(f"tensor '{name}'{where} is {dtype or 'type ' + str(int(t.type))}{shape}, {human(nbytes)}: "
                        "aotc refuses tensors of 2 GiB or more")
    if not 0 <= int(t.buffer) < len(buffers) and not (int(t.buffer) == 0 and not buffers):
        raise AotcError(f"tensor '{name}'{where} names buffer {int(t.buffer)}, but the file has {len(buffers)}")
    b = buffers[int(t.buffer)] if 0 < int(t.buffer) < len(buffers) else None
    if b is not None and dtype is not None:
        size = int(b.size) if int(b.offset) > 1 else len(b.data) if b.data is not None else 0
        if (int(b.offset) > 1 or size) and t.isVariable:
            raise AotcError(f"tensor '{name}'{where} is a variable (state an op writes) and also a constant")
        if int(b.offset) > 1 or size:
            count = math.prod(shape)
            if pack is not None:
                need = -(-count * pack[1] // 8)
                if size < need:
                    raise AotcError(f"tensor '{name}'{where} is {pack[1]}-bit {shape}: {need} bytes, but its buffer "
                                    f"holds {size}")
            elif t.sparsity is not None:
                if size % itemsize:
                    raise AotcError(f"sparse tensor '{name}'{where}: its buffer's {size} bytes are not a whole number "
                                    f"of {dtype} values")
            elif size != nbytes:
                raise AotcError(f"tensor '{name}'{where} is {dtype}{shape}: {nbytes} bytes, but its buffer holds "
                                f"{size}")
    _quantization(name + "'" + where, t.quantization, shape, dtype)


def _quantization(what: str, q: Any, shape: list[int], dtype: str | None) -> None:
    """Scales finite and positive, zero points in range, per-channel lengths and axis fitting `shape`."""
    if q is None or q.scale is None or len(q.scale) == 0:
        return
    scale = np.asarray(q.scale, np.float64)
    if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        bad = next(float(s) for s in scale if not (math.isfinite(s) and s > 0))
        raise AotcError(f"tensor '{what} has quantization scale {bad}: a scale must be finite and positive")
    zero = _ints(q.zeroPoint)
    if zero and len(zero) not in (1, scale.size):
        raise AotcError(f"tensor '{what} has {scale.size} quantization scales and {len(zero)} zero points")
    lo, hi = _ZERO_RANGE.get(dtype or "", (-(2**31), 2**31 - 1))
    bad_zero = next((z for z in zero if not lo <= z <= hi), None)
    if bad_zero is not None:
        raise AotcError(f"tensor '{what} ({dtype}) has zero point {bad_zero}, outside {lo}..{hi}")
    if scale.size > 1:
        axis = int(q.quantizedDimension)
        if len(shape) == 1 and axis > 0:  # older files' biases (person_detect: 3): a rank-1 tensor has one axis,
            axis = 0  # which TFLM and the reader (quant.py) take
        if not 0 <= axis < len(shape):
            raise AotcError(f"tensor '{what} is quantized per channel along dimension {axis} of a rank-{len(shape)} "
                            "tensor")
        if shape[axis] != scale.size:
            raise AotcError(f"tensor '{what} has {scale.size} quantization scales along dimension {axis}, of size "
                            f"{shape[axis]}")


def _options(sch: ModuleType, op: Any, node: _Op) -> None:
    """The op's options table is the one its op reads (or absent where the lowering has defaults)."""
    name = node.op
    if name.startswith("CUSTOM:") or name.startswith("builtin "):
        return
    want = expected_options(sch, name)
    got = op.builtinOptions if op.builtinOptions is not None else op.builtinOptions2
    if want is None:
        return
    if got is None:
        # the StableHLO ops' tables hold their dimensions and regions: required where they have fields
        hlo = name.startswith("STABLEHLO_") and name not in ("STABLEHLO_CASE", "STABLEHLO_RNG_BIT_GENERATOR") \
            and bool(vars(getattr(sch, want + "T")()))
        if name in _OPTIONS_REQUIRED or hlo:
            raise AotcError(f"it has no options table ({want})", node=node)
        return
    if type(got).__name__ != want + "T":
        raise AotcError(f"its options table is {type(got).__name__[:-1]}, not the {want} it reads", node=node)
    for f in _AT_LEAST_ONE:  # a stride, dilation or window of 0: no output size, or a division by zero
        if hasattr(got, f) and int(getattr(got, f)) < 1:
            raise AotcError(f"its option {f} is {int(getattr(got, f))}; it must be 1 or more", node=node)
    if isinstance(getattr(got, "padding", None), int) and int(got.padding) not in (0, 1):  # (the conv and pool enum)
        raise AotcError(f"its padding is {int(got.padding)}, neither SAME (0) nor VALID (1)", node=node)


def _subgraph_indices(op: Any) -> list[int]:
    """The subgraphs an op's options name (WHILE's cond and body, IF's branches, CALL_ONCE's init ...)."""
    found = []
    for o in (op.builtinOptions, op.builtinOptions2):
        if o is None:
            continue
        for field, v in vars(o).items():
            if field.endswith("SubgraphIndex") or (field == "subgraph" and type(o).__name__ == "CallOptionsT"):
                found.append(int(v))
            elif field.endswith("SubgraphIndices"):
                found += _ints(v)
    return found


def _no_cycle(calls: dict[int, list[tuple[int, Any]]]) -> None:
    """No subgraph runs itself, directly or through others (the lowering inlines them: it would not end)."""
    state: dict[int, int] = {}  # 1: being visited, 2: done

    def visit(k: int) -> None:
        state[k] = 1
        for s, node in calls.get(k, []):
            if state.get(s) == 1:
                raise AotcError(f"its options name subgraph {s}, which is already running it (a subgraph may not "
                                "call itself)", node=node)
            if s not in state:
                visit(s)
        state[k] = 2

    for k in list(calls):
        if k not in state:
            visit(k)


__all__ = ["expected_options", "validate"]
