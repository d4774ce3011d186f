"""Float builtins of LiteRT's reference resolver (BuiltinRefOpResolver) that the families' modules did not map
(issue 50): RIGHT_SHIFT, BITCAST, SPARSE_TO_DENSE, RANK, RANGE of constants, DILATE, and the elementwise STABLEHLO ops
the resolver registers (STABLEHLO_ADD, _MULTIPLY, _MAXIMUM, _MINIMUM) and STABLEHLO_PAD, onto ONNX operators;
LSH_PROJECTION onto aotc.tflite's TflLshProjection (aot/kernels/hash.py: farmhash's Fingerprint64 in C);
RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL with a seed onto TflRandom and MULTINOMIAL onto TflMultinomial
(aot/kernels/philox.py), their Philox counters state the caller carries; STABLEHLO_RNG_BIT_GENERATOR onto
TflRngBitGenerator (the same family), a pure function of its state input.

REFUSED says, for `aotc ops --tflite`, why each builtin that cannot be a static-arena bundle stays refused.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import helper

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error
from aot.frontend.tflite.lowering import binary_inputs, finish
from aot.frontend.tflite.reader import TflOp
from aot.frontend.tflite.state import record_state
from aot.ir import tflite_ops as tfl

_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32}


def _right_shift(b: OnnxBuilder, op: TflOp) -> None:
    """LiteRT's RightShift: x >> clamp(y, 0, bits - 1), arithmetic for signed types: ONNX BitShift RIGHT for the
    unsigned ones; for the signed ones (which opset 17's BitShift does not take) in int64, t = x or -1 - x,
    whichever is not negative, divided by 2^y (truncating, so the floor), the sign restored as -1 - q."""
    x, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1])
    bits = _BITS.get(x.dtype)
    if bits is None or y.dtype != x.dtype:
        raise op_error(op, f"RIGHT_SHIFT of {x.dtype} by {y.dtype} is not supported (LiteRT's integer types, the "
                       "amounts of the same type)")
    signed = np.dtype(x.dtype).kind == "i"
    if y.data is not None:
        clamped = np.clip(y.data, 0, bits - 1)
        amount = b.const(np.left_shift(np.int64(1), clamped.astype(np.int64)) if signed else clamped.astype(y.dtype),
                         f"{op.name}_amount")
    else:
        amount = b.node("Clip", [b.value(op.inputs[1], NHWC), b.const(np.array(0, x.dtype), "lo"),
                                 b.const(np.array(bits - 1, x.dtype), "hi")], hint=f"{op.name}_clamp")
        if signed:
            amount = b.node("Cast", [b.node("BitShift", [b.const(np.uint64(1), "one"), b.node(
                "Cast", [amount], hint=f"{op.name}_u64", to=helper.TensorProto.UINT64)], hint=f"{op.name}_pow2",
                direction="LEFT")], hint=f"{op.name}_divisor", to=helper.TensorProto.INT64)
    if not signed:
        finish(b, op, "BitShift", [b.value(op.inputs[0], NHWC), amount], NHWC, direction="RIGHT")
        return
    wide = b.node("Cast", [b.value(op.inputs[0], NHWC)], hint=f"{op.name}_x64", to=helper.TensorProto.INT64)
    minus_one = b.const(np.int64(-1), "minus_one")
    neg = b.node("Less", [wide, b.const(np.int64(0), "zero")], hint=f"{op.name}_negative")
    t = b.node("Where", [neg, b.node("Sub", [minus_one, wide], hint=f"{op.name}_flip"), wide], hint=f"{op.name}_t")
    q = b.node("Div", [t, amount], hint=f"{op.name}_div")
    y64 = b.node("Where", [neg, b.node("Sub", [minus_one, q], hint=f"{op.name}_unflip"), q], hint=f"{op.name}_y")
    finish(b, op, "Cast", [y64], NHWC, to=helper.np_dtype_to_tensor_dtype(np.dtype(x.dtype)))


def _bitcast(b: OnnxBuilder, op: TflOp) -> None:
    """BITCAST between types of one width: the same bytes (ONNX BitCast). Between widths the shape changes by
    the ratio of the last axis, as in TensorFlow, which is refused."""
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    if np.dtype(x.dtype).itemsize != np.dtype(y.dtype).itemsize or x.shape != y.shape:
        raise op_error(op, f"BITCAST from {x.dtype} to {y.dtype} (another width) is not supported")
    finish(b, op, "BitCast", [b.value(op.inputs[0], NHWC)], NHWC,
           to=helper.np_dtype_to_tensor_dtype(np.dtype(y.dtype)))


def _sparse_to_dense(b: OnnxBuilder, op: TflOp) -> None:
    """SPARSE_TO_DENSE(indices, output_shape, values, default): the default everywhere, then each index given its
    value in order (ONNX ScatterND over an Expand of the default; a scalar value is broadcast to every index)."""
    idx, shape_t, values = (b.tensor(op.inputs[k]) for k in range(3))
    y = b.tensor(op.outputs[0])
    if idx.data is None:
        raise op_error(op, "SPARSE_TO_DENSE with indices computed at run time is not supported")
    rank = len(y.shape)
    indices = np.asarray(idx.data, np.int64).reshape(-1, rank) if rank else np.zeros((0, 0), np.int64)
    n = indices.shape[0]
    if rank == 0 or len(np.unique(indices, axis=0)) != n or np.any(indices < 0) or np.any(indices >= y.shape):
        raise op_error(op, "SPARSE_TO_DENSE with repeated or out-of-range indices is not supported (LiteRT "
                       "refuses the latter)")
    base = b.node("Expand", [b.node("Reshape", [b.value(op.inputs[3], NHWC), b.const(np.array([1], np.int64),
                                                                                     "one")],
                                    hint=f"{op.name}_default"), b.const(np.array(y.shape, np.int64), "shape")],
                  hint=f"{op.name}_fill")
    vals = b.value(op.inputs[2], NHWC)
    if int(np.prod(values.shape)) != n:
        vals = b.node("Expand", [vals, b.const(np.array([n], np.int64), "n")], hint=f"{op.name}_values")
    finish(b, op, "ScatterND", [base, b.const(indices, f"{op.name}_indices"), vals], NHWC)


def _rank(b: OnnxBuilder, op: TflOp) -> None:
    """RANK: the input's rank, known at compile time (int32 scalar)."""
    y = b.tensor(op.outputs[0])
    rank = np.array(len(b.tensor(op.inputs[0]).shape), y.dtype)
    b.values[op.outputs[0]] = {NHWC: b.const(rank, b.names[op.outputs[0]])}


def _range(b: OnnxBuilder, op: TflOp) -> None:
    """RANGE of constant start, limit and delta (the only kind with a static output size): a constant."""
    ts = [b.tensor(i) for i in op.inputs[:3]]
    y = b.tensor(op.outputs[0])
    if any(t.data is None for t in ts):
        raise op_error(op, "RANGE of limits computed at run time is not supported (its size would be data-dependent)")
    if any(t.data.size != 1 for t in ts):
        raise op_error(op, "RANGE's start, limit and delta must be scalars")
    start, limit, delta = (t.data.reshape(()).item() for t in ts)
    if delta == 0 or not all(math.isfinite(v) for v in (start, limit, delta)):
        raise op_error(op, f"RANGE({start}, {limit}, {delta}) has no end")
    count = max(0, math.ceil((limit - start) / delta))  # before allocating it
    if count != int(np.prod(y.shape, dtype=np.int64)):
        raise op_error(op, f"RANGE gives {count} elements where the file declares {list(y.shape)}")
    data = np.arange(start, limit, delta).astype(y.dtype)
    if data.shape != tuple(y.shape):
        raise op_error(op, f"RANGE gives {data.size} elements where the file declares {list(y.shape)}")
    b.values[op.outputs[0]] = {NHWC: b.const(data, b.names[op.outputs[0]])}


def _dilated(b: OnnxBuilder, op: TflOp, cur: str, shape: list[int], factors: list[int], value: str) -> str:
    """`cur` (of `shape`, updated in place) with factor - 1 copies of the scalar `value` between neighbours along
    each axis: per dilated axis a new axis after it padded to the factor, merged into the axis, the tail cut."""
    for axis, k in enumerate(factors):
        if k == 1 or shape[axis] == 0:
            continue
        rank = len(shape)
        grown = b.node("Unsqueeze", [cur, b.const(np.array([axis + 1], np.int64), "axis")], hint=f"{op.name}_grow")
        pads = np.zeros(2 * (rank + 1), np.int64)
        pads[rank + 1 + axis + 1] = k - 1
        padded = b.node("Pad", [grown, b.const(pads, "pads"), value], hint=f"{op.name}_pad{axis}", mode="constant")
        merged = shape[:axis] + [shape[axis] * k] + shape[axis + 1:]
        flat = b.node("Reshape", [padded, b.const(np.array(merged, np.int64), "shape")], hint=f"{op.name}_merge{axis}")
        shape[axis] = (shape[axis] - 1) * k + 1
        cur = b.node("Slice", [flat, b.const(np.array([0], np.int64), "start"),
                               b.const(np.array([shape[axis]], np.int64), "end"),
                               b.const(np.array([axis], np.int64), "axis")], hint=f"{op.name}_cut{axis}")
    return cur


def _scalar(b: OnnxBuilder, op: TflOp, k: int) -> str:
    return b.node("Reshape", [b.value(op.inputs[k], NHWC), b.const(np.array([], np.int64), "scalar")],
                  hint=f"{op.name}_value")


def _dilate(b: OnnxBuilder, op: TflOp) -> None:
    """DILATE(x, dilations, padding_value): d - 1 padding values between neighbours along each axis, size (n - 1) d
    + 1 (_dilated)."""
    x, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0])
    d = b.tensor(op.inputs[1]).data
    if d is None or np.any(d.reshape(-1) < 1):
        raise op_error(op, "DILATE with dilations computed at run time (or below 1) is not supported")
    if d.size != len(x.shape):
        raise op_error(op, f"{d.size} dilations for a rank-{len(x.shape)} input")
    shape = list(x.shape)
    cur = _dilated(b, op, b.value(op.inputs[0], NHWC), shape, [int(v) for v in d.reshape(-1)], _scalar(b, op, 2))
    if shape != list(y.shape):
        raise op_error(op, f"DILATE gives {shape} where the file declares {list(y.shape)}")
    finish(b, op, "Identity", [cur], NHWC)


def _stablehlo_pad(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_PAD(x, value): interior padding (_dilated by interior + 1), then each edge padded with the value
    (a positive amount) or cut (a negative one), as StableHLO's pad."""
    x, y, o = b.tensor(op.inputs[0]), b.tensor(op.outputs[0]), op.options
    low, high, inner = (list(map(int, getattr(o, f) if getattr(o, f) is not None else [0] * len(x.shape)))
                        for f in ("edgePaddingLow", "edgePaddingHigh", "interiorPadding"))
    if not len(low) == len(high) == len(inner) == len(x.shape):
        raise op_error(op, f"paddings of {len(low)}, {len(high)} and {len(inner)} values for a rank-{len(x.shape)} "
                       "input")
    if any(v < 0 for v in inner):
        raise op_error(op, "STABLEHLO_PAD with negative interior padding is not supported")
    value, shape = _scalar(b, op, 1), list(x.shape)
    cur = _dilated(b, op, b.value(op.inputs[0], NHWC), shape, [v + 1 for v in inner], value)
    pos = [max(v, 0) for v in low] + [max(v, 0) for v in high]
    if any(pos):
        cur = b.node("Pad", [cur, b.const(np.array(pos, np.int64), "pads"), value], hint=f"{op.name}_edges",
                     mode="constant")
        shape = [n + a + z for n, a, z in zip(shape, pos[:len(shape)], pos[len(shape):], strict=True)]
    if any(v < 0 for v in low + high):
        starts = [-min(v, 0) for v in low]
        ends = [n + min(v, 0) for n, v in zip(shape, high, strict=True)]
        cur = b.node("Slice", [cur, b.const(np.array(starts, np.int64), "starts"),
                               b.const(np.array(ends, np.int64), "ends")], hint=f"{op.name}_cut")
        shape = [e - s0 for s0, e in zip(starts, ends, strict=True)]
    if shape != list(y.shape):
        raise op_error(op, f"STABLEHLO_PAD gives {shape} where the file declares {list(y.shape)}")
    finish(b, op, "Identity", [cur], NHWC)


def _stablehlo(onnx_op: str):
    def lower(b: OnnxBuilder, op: TflOp) -> None:
        names, layout = binary_inputs(b, op)
        finish(b, op, onnx_op, names, layout)
    return lower


def _stablehlo_and(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_AND (LiteRT's default resolver; its reference one has no kernel): logical on bool, bitwise on the
    integer types."""
    names, layout = binary_inputs(b, op)
    finish(b, op, "And" if b.tensor(op.inputs[0]).dtype == "bool" else "BitwiseAnd", names, layout)


def _stablehlo_shift_left(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_SHIFT_LEFT of int8, int16, int32 (LiteRT's default resolver): C's x << y in int, truncated to the
    type: ONNX BitShift LEFT of the bits as the unsigned type (0 from the type's width up, as LiteRT's truncation
    gives for int8 / int16), cast back. LiteRT's shift is undefined outside [0, 31]; aotc's gives 0 there."""
    x, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1])
    if x.dtype not in ("int8", "int16", "int32") or y.dtype != x.dtype:
        raise op_error(op, f"STABLEHLO_SHIFT_LEFT of {x.dtype} by {y.dtype} is not supported (int8, int16, int32 by "
                       "the same type, as LiteRT's kernel)")
    names, layout = binary_inputs(b, op)
    unsigned = helper.np_dtype_to_tensor_dtype(np.dtype(f"u{x.dtype}"))  # BitShift (opset 17) takes unsigned types
    x_u, y_u = (b.node("Cast", [n], hint=f"{op.name}_u{k}", to=unsigned) for k, n in enumerate(names))
    shifted = b.node("BitShift", [x_u, y_u], hint=f"{op.name}_shl", direction="LEFT")
    finish(b, op, "Cast", [shifted], layout, to=helper.np_dtype_to_tensor_dtype(np.dtype(x.dtype)))


def fake_quant_range(lo: float, hi: float, bits: int) -> tuple[np.float32, np.float32, np.float32]:
    """(nudged min, nudged max, nudged scale) as LiteRT's NudgeQuantizationRange computes them, in float32: the
    range [lo, hi] moved so that 0 falls on a step of the [0, 2^bits - 1] grid."""
    f = np.float32
    qmin, qmax = f(0), f((1 << bits) - 1)
    scale = f(f(hi) - f(lo)) / f(qmax - qmin)
    from_min = f(qmin - f(f(lo) / scale))
    half_away = f(np.floor(abs(float(from_min)) + 0.5))  # std::round (from_min is not negative here); exact in double
    zero = qmin if from_min < qmin else qmax if from_min > qmax else half_away
    return f(f(qmin - zero) * scale), f(f(qmax - zero) * scale), f(scale)


def _fake_quant(b: OnnxBuilder, op: TflOp) -> None:
    """FAKE_QUANT (float32): x clamped to the nudged range, quantized to its grid and back, as LiteRT's
    FakeQuantizeArray: round((clamp(x) - min) * (1 / scale)) * scale + min, its round half away from zero (the
    value is never negative: half-to-even Round, and ties taken up)."""
    o = op.options
    if b.tensor(op.inputs[0]).dtype != "float32":
        raise op_error(op, f"FAKE_QUANT of {b.tensor(op.inputs[0]).dtype} is not supported (float32, as LiteRT)")
    if o is None or o.narrowRange:
        raise op_error(op, "FAKE_QUANT with narrow_range is not supported (LiteRT's kernel refuses it)")
    bits = int(o.numBits)
    if not 2 <= bits <= 16 or not float(o.max) > float(o.min):
        raise op_error(op, f"FAKE_QUANT of {bits} bits over [{o.min}, {o.max}] is not supported (2 to 16 bits over a "
                       "nonempty range)")
    lo, hi, scale = fake_quant_range(float(o.min), float(o.max), bits)
    f = np.float32
    x = b.value(op.inputs[0], NHWC)
    clamped = b.node("Min", [b.node("Max", [x, b.const(lo, "lo")], hint=f"{op.name}_lo"), b.const(hi, "hi")],
                     hint=f"{op.name}_clamp")
    v = b.node("Mul", [b.node("Sub", [clamped, b.const(lo, "lo")], hint=f"{op.name}_shift"),
                       b.const(f(f(1) / scale), "inv_scale")], hint=f"{op.name}_steps")
    down = b.node("Floor", [v], hint=f"{op.name}_floor")
    tie = b.node("Equal", [b.node("Sub", [v, down], hint=f"{op.name}_frac"), b.const(f(0.5), "half")],
                 hint=f"{op.name}_tie")
    q = b.node("Where", [tie, b.node("Add", [down, b.const(f(1), "one")], hint=f"{op.name}_up"),
                         b.node("Round", [v], hint=f"{op.name}_round")], hint=f"{op.name}_q")
    finish(b, op, "Add", [b.node("Mul", [q, b.const(scale, "scale")], hint=f"{op.name}_back"), b.const(lo, "lo")],
           NHWC)


_LSH_SPARSE, _LSH_DENSE = 1, 2  # the schema's LSHProjectionType


def _lsh_projection(b: OnnxBuilder, op: TflOp) -> None:
    """LSH_PROJECTION(hash, input, weight?): TflLshProjection, int32 [num_hash] signatures (SPARSE) or
    [num_hash * num_bits] bits (DENSE), each bit the sign of the (weighted) sum of the rows' Fingerprint64s."""
    kind = int(getattr(op.options, "type", 0)) if op.options is not None else 0
    if kind not in (_LSH_SPARSE, _LSH_DENSE):
        raise op_error(op, f"LSH_PROJECTION type {kind} is neither SPARSE nor DENSE (LiteRT's kernel fails on it)")
    hash_, x = b.tensor(op.inputs[0]), b.tensor(op.inputs[1])
    if hash_.dtype != "float32" or len(hash_.shape) != 2 or hash_.shape[1] > 32:
        raise op_error(op, f"hash {hash_.dtype} {list(hash_.shape)} is not float32 [num_hash, num_bits <= 32]")
    if kind == _LSH_SPARSE and hash_.shape[1] > 31:
        raise op_error(op, "SPARSE of 32 bits shifts 1 by 32 in LiteRT's kernel (undefined), not supported")
    if not x.shape or x.dtype in ("string", "object"):
        raise op_error(op, f"its input {x.dtype} {list(x.shape)} is not a tensor of rows of numbers")
    weighted = len(op.inputs) > 2 and op.inputs[2] >= 0
    if weighted and (b.tensor(op.inputs[2]).dtype != "float32" or b.tensor(op.inputs[2]).shape != x.shape[:1]):
        raise op_error(op, f"weight {list(b.tensor(op.inputs[2]).shape)} is not float32 [{x.shape[0]}]")
    ins = [b.value(i, NHWC) for i in op.inputs[:3] if i >= 0]
    y = b.names[op.outputs[0]]
    b.nodes.append(helper.make_node(tfl.LSH_PROJECTION, ins, [y], name=b.fresh(op.name), domain=tfl.DOMAIN,
                                    sparse=int(kind == _LSH_SPARSE)))
    shape = [hash_.shape[0] if kind == _LSH_SPARSE else hash_.shape[0] * hash_.shape[1]]
    b.value_infos.append(helper.make_tensor_value_info(y, helper.TensorProto.INT32, shape))
    b.values[op.outputs[0]] = {NHWC: y}


def _int32(word: int) -> int:
    """A 32-bit word as the int32 of its bits (an attribute aotc's kernels take)."""
    return word - 2**32 if word >= 2**31 else word


def _seeds(op: TflOp) -> tuple[int, int]:
    """The op's seed and seed2 as LiteRT's kernel reads them: the file's int64s pass through TfLiteRandomParams'
    ints (their low 32 bits, signed), then widen back to int64 (sign-extended), read as the generator's uint64."""
    seed, seed2 = (_int32(int(getattr(op.options, k, 0) or 0) % 2**32) if op.options is not None else 0
                   for k in ("seed", "seed2"))
    if seed == 0 and seed2 == 0:
        raise op_error(op, "seed and seed2 are 0: LiteRT seeds it from the clock")
    return seed % 2**64, seed2 % 2**64


def _counter(b: OnnxBuilder, op: TflOp, seed2: int) -> tuple[str, str]:
    """The op's Philox counter as state the caller carries: input `<out>_state` (uint32[4]) starting where LiteRT's
    starts it, (0, 0, seed2's low and high words), and output `<out>_state_next`."""
    name = b.names[op.outputs[0]]
    s_in, s_out = f"{name}_state", f"{name}_state_next"
    b.used.update((s_in, s_out))
    b.extra_inputs.append(helper.make_tensor_value_info(s_in, helper.TensorProto.UINT32, [4]))
    b.extra_outputs.append(helper.make_tensor_value_info(s_out, helper.TensorProto.UINT32, [4]))
    b.value_infos.append(helper.make_tensor_value_info(s_out, helper.TensorProto.UINT32, [4]))
    record_state(b, s_in, s_out, "uint32", [4], np.array([0, 0, seed2 % 2**32, seed2 >> 32], np.uint32),
                 f"the Philox counter LiteRT's {op.op} starts at: 0, 0, then seed2 {seed2:#x}'s low and high words")
    return s_in, s_out


def _multinomial(b: OnnxBuilder, op: TflOp) -> None:
    """MULTINOMIAL(logits, num_samples) with a seed: TflMultinomial, LiteRT's draws from its Philox stream, the
    counter carried as RANDOM_UNIFORM's; int32 or int64 [batch, num_samples] class indices."""
    seed, seed2 = _seeds(op)
    logits, count, y = b.tensor(op.inputs[0]), b.tensor(op.inputs[1]), b.tensor(op.outputs[0])
    if logits.dtype != "float32" or len(logits.shape) != 2 or logits.shape[1] < 1:
        raise op_error(op, f"logits {logits.dtype} {list(logits.shape)} are not float32 [batch, classes >= 1]")
    if count.dtype != "int32" or count.data is None or np.asarray(count.data).size != 1:
        raise op_error(op, "num_samples is not a constant int32 scalar")
    samples = int(np.asarray(count.data).reshape(-1)[0])
    if samples < 0 or y.dtype not in ("int32", "int64"):
        raise op_error(op, f"{samples} samples to {y.dtype}: num_samples >= 0 to int32 or int64 expected")
    s_in, s_out = _counter(b, op, seed2)
    name = b.names[op.outputs[0]]
    b.nodes.append(helper.make_node(tfl.MULTINOMIAL, [b.value(op.inputs[0], NHWC), s_in], [name, s_out],
                                    name=b.fresh(op.name), domain=tfl.DOMAIN, key0=_int32(seed % 2**32),
                                    key1=_int32(seed >> 32)))
    kind = helper.TensorProto.INT64 if y.dtype == "int64" else helper.TensorProto.INT32
    b.value_infos.append(helper.make_tensor_value_info(name, kind, [logits.shape[0], samples]))
    b.values[op.outputs[0]] = {NHWC: name}


def _random(b: OnnxBuilder, op: TflOp) -> None:
    """RANDOM_UNIFORM / RANDOM_STANDARD_NORMAL(shape) with a seed: TflRandom, LiteRT's Philox4x32-10 stream
    keyed by seed and started at counter (0, 0, seed2), whose counter the caller carries between calls (state
    `<out>_state`, uint32[4], and `<out>_state_next`), so the calls give LiteRT's invokes one after the other."""
    seed, seed2 = _seeds(op)
    shape = b.tensor(op.inputs[0])
    if shape.dtype != "int32" or len(shape.shape) != 1 or shape.data is None:
        raise op_error(op, f"its shape {shape.dtype} {list(shape.shape)} is not a constant int32 vector")
    dims = [int(d) for d in np.asarray(shape.data).reshape(-1)]
    y = b.tensor(op.outputs[0])
    if y.dtype != "float32" or any(d < 0 for d in dims):
        raise op_error(op, f"output {y.dtype} {dims}: float32 of a non-negative shape expected (LiteRT's kernel)")
    name = b.names[op.outputs[0]]
    s_in, s_out = _counter(b, op, seed2)
    b.nodes.append(helper.make_node(tfl.RANDOM, [s_in], [name, s_out], name=b.fresh(op.name), domain=tfl.DOMAIN,
                                    normal=int(op.op == "RANDOM_STANDARD_NORMAL"), key0=_int32(seed % 2**32),
                                    key1=_int32(seed >> 32)))
    b.value_infos.append(helper.make_tensor_value_info(name, helper.TensorProto.FLOAT, dims))
    b.values[op.outputs[0]] = {NHWC: name}


_RNG_TYPES = {"int32": helper.TensorProto.INT32, "uint32": helper.TensorProto.UINT32,
              "int64": helper.TensorProto.INT64, "uint64": helper.TensorProto.UINT64}


def _rng_bit_generator(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_RNG_BIT_GENERATOR(initial_state) -> (output_state, output): TflRngBitGenerator, LiteRT's kernel:
    PHILOX and DEFAULT (Philox4x32-10, a uint64 state of 2 or 3 words) or THREEFRY (ThreeFry2x32-20, 2 words);
    output int32, uint32, int64 or uint64 of the file's static shape. The state is an input like any other:
    nothing is kept between calls."""
    algorithm = int(getattr(op.options, "algorithm", 0) or 0) if op.options is not None else 0
    if algorithm not in (0, 1, 2):
        raise op_error(op, f"algorithm {algorithm} is not DEFAULT, PHILOX or THREEFRY")
    threefry = algorithm == 2
    state, nxt, y = b.tensor(op.inputs[0]), b.tensor(op.outputs[0]), b.tensor(op.outputs[1])
    sizes = (2,) if threefry else (2, 3)
    if state.dtype != "uint64" or len(state.shape) != 1 or state.shape[0] not in sizes:
        kind = "THREEFRY" if threefry else "PHILOX"
        raise op_error(op, f"its state {state.dtype} {list(state.shape)} is not uint64 of "
                       f"{' or '.join(map(str, sizes))} words (LiteRT's kernel, {kind})")
    if nxt.dtype != "uint64" or list(nxt.shape) != list(state.shape):
        raise op_error(op, f"its output state {nxt.dtype} {list(nxt.shape)} is not the state's uint64 "
                       f"{list(state.shape)}")
    if y.dtype not in _RNG_TYPES or any(d < 0 for d in y.shape):
        raise op_error(op, f"output {y.dtype} {list(y.shape)}: int32, uint32, int64 or uint64 of a static shape "
                       "expected (LiteRT's kernel)")
    names = [b.names[op.outputs[0]], b.names[op.outputs[1]]]
    b.nodes.append(helper.make_node(tfl.RNG_BIT_GENERATOR, [b.value(op.inputs[0], NHWC)], names,
                                    name=b.fresh(op.name), domain=tfl.DOMAIN, threefry=int(threefry)))
    b.value_infos.append(helper.make_tensor_value_info(names[0], helper.TensorProto.UINT64, list(state.shape)))
    b.value_infos.append(helper.make_tensor_value_info(names[1], _RNG_TYPES[y.dtype], list(y.shape)))
    b.values[op.outputs[0]] = {NHWC: names[0]}
    b.values[op.outputs[1]] = {NHWC: names[1]}


OPS = {
    "RANDOM_UNIFORM": _random, "RANDOM_STANDARD_NORMAL": _random, "MULTINOMIAL": _multinomial,
    "STABLEHLO_RNG_BIT_GENERATOR": _rng_bit_generator, "LSH_PROJECTION": _lsh_projection,
    "FAKE_QUANT": _fake_quant,
    "RIGHT_SHIFT": _right_shift, "BITCAST": _bitcast, "SPARSE_TO_DENSE": _sparse_to_dense, "RANK": _rank,
    "RANGE": _range, "DILATE": _dilate, "STABLEHLO_PAD": _stablehlo_pad,
    # StableHLO's elementwise ops of LiteRT's reference resolver: TFLite's ADD, MUL, MAXIMUM, MINIMUM with no options
    "STABLEHLO_ADD": _stablehlo("Add"), "STABLEHLO_MULTIPLY": _stablehlo("Mul"),
    "STABLEHLO_MAXIMUM": _stablehlo("Max"), "STABLEHLO_MINIMUM": _stablehlo("Min"),
    "STABLEHLO_AND": _stablehlo_and, "STABLEHLO_SHIFT_LEFT": _stablehlo_shift_left,
}

# builtins a static-arena C bundle cannot be, for `aotc ops --tflite`: why each stays refused
REFUSED = {
    **{op: "hash tables (a run-time map of strings)" for op in ("HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT",
                                                               "HASHTABLE_LOOKUP", "HASHTABLE_SIZE")},
    "SKIP_GRAM": "strings",
    "DELEGATE": "a delegate's node, not an op", "CUSTOM": "see the custom ops below",
    "PLACEHOLDER_FOR_GREATER_OP_CODES": "not an op",
}
