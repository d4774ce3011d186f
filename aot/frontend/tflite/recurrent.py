"""UNIDIRECTIONAL_SEQUENCE_LSTM (float) -> ONNX ops in TFLite's arithmetic: a Gemm and a Loop.

TFLite's LSTM clips the cell state (cell_clip; the converter writes 10 for a Keras LSTM), which
ONNX's LSTM cannot say (its `clip` bounds the gate inputs), so the step is written out as the body
of an ONNX Loop (compiled once, as a C loop: aot/frontend/onnx/loops.py): the input projection of every
step is one Gemm before the loop; each step adds h R^T, takes the four gates, c = f c + i g
clipped, h = o act(c). Peepholes, CIFG (no input gate), layer normalisation (each gate's sum
normalised over the cells, scaled, then biased) and projection are TFLite's optional inputs.

The state: TFLite keeps h and c in variable tensors that persist from one invoke to the next (a
Keras LSTM converted by TFLiteConverter continues where the previous call stopped). aotc's library
keeps no state between calls, so each LSTM's h and c become graph inputs (`<name>_h`, `<name>_c`)
and their values after the last step graph outputs (`<name>_h_next`, `<name>_c_next`): the caller
carries them, as docs/firmware.md describes, and starts a new sequence from where a fresh interpreter
starts (state.py: 0 for float, the zero point for an int8 h), which `<model>_reset_state` writes.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from aot.frontend.tflite.builder import NHWC, OnnxBuilder, float_weights, op_error
from aot.frontend.tflite.hybrid import hybrid_fc
from aot.frontend.tflite.lowering import const_input
from aot.frontend.tflite.quant import checked_log2, quantize_multiplier
from aot.frontend.tflite.reader import TflOp
from aot.frontend.tflite.state import record_state, reset_source, reset_value, variable_input
from aot.ir import tflite_ops as tfl

# input indices of UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite's lstm_shared.h)
_X, _W = 0, (1, 2, 3, 4)  # input-to-{input, forget, cell, output} weights
_R = (5, 6, 7, 8)  # recurrent-to-{input, forget, cell, output}
_PEEP = (9, 10, 11)  # cell-to-{input, forget, output}
_B = (12, 13, 14, 15)  # {input, forget, cell, output} gate bias
_PROJ_W, _PROJ_B, _H, _C = 16, 17, 18, 19
_LAYER_NORM = (20, 21, 22, 23)
_ACT = {0: None, 1: "Relu", 3: "relu6", 4: "Tanh", 6: "Sigmoid"}


def lower_lstm(b: OnnxBuilder, op: TflOp) -> None:
    def has(k: int) -> bool:
        return len(op.inputs) > k and op.inputs[k] >= 0

    o = op.options
    x = b.tensor(op.inputs[_X])
    if x.dtype != "float32":
        raise op_error(op, f"quantized ({x.dtype}) UNIDIRECTIONAL_SEQUENCE_LSTM is not supported yet (float only)")
    if getattr(o, "diagonalRecurrentTensors", False):
        raise op_error(op, "UNIDIRECTIONAL_SEQUENCE_LSTM with diagonal recurrent weights is not supported")
    act = _ACT.get(int(o.fusedActivationFunction), "?")
    if act == "?":
        raise op_error(op, f"LSTM activation {o.fusedActivationFunction} is not supported")
    cifg = not has(_W[0])
    gates = [g for g in range(4) if not (cifg and g == 0)]
    hidden = b.tensor(op.inputs[_W[1]]).shape[0]
    out_t = b.tensor(op.outputs[0])
    n_out = out_t.shape[-1]  # hidden, or the projection's size
    one_step = op.op == "LSTM"  # the builtin LSTM op: one step of [batch, n_in], its output [batch, n_out]
    if one_step and (int(getattr(o, "kernelType", 0)) != 0 or len(op.outputs) != 1):
        raise op_error(op, "LSTM of the basic kernel type or with more than one output is not supported (the full "
                       "kernel with one output is)")
    time_major = not one_step and bool(o.timeMajor)
    if time_major:
        steps, batch = x.shape[0], x.shape[1]
    else:
        batch, steps = x.shape[0], 1 if one_step else x.shape[1]
    n_in = x.shape[-1]
    gh = len(gates) * hidden
    name = b.names[op.outputs[0]]
    const = lambda v, hint: b.const(np.asarray(v, np.float32 if np.asarray(v).dtype.kind == "f" else np.int64),  # noqa: E731
                                    f"{name}_{hint}")
    # hybrid (int8 weights, dynamic-range quantisation): the products as LiteRT's LstmStepHybrid computes them,
    # x and h quantized at each step (a scale per batch row), int32 sums against the int8 weights
    hybrid = b.tensor(op.inputs[_W[1]]).dtype == "int8"
    asym = bool(getattr(o, "asymmetricQuantizeInputs", False))
    w, w_scale = _stacked(b, op, [_W[g] for g in gates], hybrid)  # [gh, n_in]
    r, r_scale = _stacked(b, op, [_R[g] for g in gates], hybrid)  # [gh, n_out]
    biases = {g: float_weights(b, op, _B[g]) if has(_B[g]) else np.zeros(hidden, np.float32) for g in gates}
    norm = {g: float_weights(b, op, _LAYER_NORM[g]) for g in gates if has(_LAYER_NORM[g])}
    if norm and sorted(norm) != gates:
        raise op_error(op, "UNIDIRECTIONAL_SEQUENCE_LSTM with layer normalisation of some gates only is not supported")
    wrong = [f"weights {list(w.shape)}"] if w.shape != (gh, n_in) else []
    wrong += [f"recurrent weights {list(r.shape)}"] if r.shape[0] != gh else []
    wrong += [f"biases {list(v.shape)}" for v in biases.values() if v.shape != (hidden,)]
    wrong += [f"layer norm weights {list(v.shape)}" for v in norm.values() if v.shape != (hidden,)]
    if wrong:
        raise op_error(op, f"its {wrong[0]} do not fit {len(gates)} gates of {hidden} units on {n_in} inputs")
    # with layer normalisation the bias is added after it (LiteRT's CalculateLstmGateFloat), not before
    bias = np.concatenate([np.zeros(hidden, np.float32) if norm else biases[g] for g in gates])

    # the state: graph inputs, and graph outputs after the last step
    h0, c0 = variable_input(b, op, _H, f"{name}_h"), variable_input(b, op, _C, f"{name}_c")
    for state, size in ((h0, n_out), (c0, hidden)):
        b.used.add(state)
        b.extra_inputs.append(helper.make_tensor_value_info(state, helper.TensorProto.FLOAT, [batch, size]))

    xs = b.value(op.inputs[_X], NHWC)
    flat = b.node("Reshape", [xs, const([-1, n_in], "flat")], hint=f"{name}_flat")
    if hybrid:
        proj = hybrid_fc(b, f"{name}_xw", flat, (batch * steps, n_in), w, w_scale, const(bias, "b"), asym)
    else:
        proj = b.node("Gemm", [flat, const(w, "w"), const(bias, "b")], hint=f"{name}_xw", transB=1)
    proj = b.node("Reshape", [proj, const([steps, batch, gh] if time_major else [batch, steps, gh], "xw_shape")],
                  hint=f"{name}_xw3")
    r_name = None if hybrid else const(r.T.copy(), "r")  # [n_out, gh]
    peep = {g: const(_float_or_dequantized(b, op, _PEEP[k]), f"peep{g}") for k, g in enumerate((0, 1, 3))
            if has(_PEEP[k])}
    clip = float(o.cellClip)
    axis = 0 if time_major else 1

    # one step, as the body of an ONNX Loop over the steps (compiled once: aot/frontend/onnx/loops.py)
    outer, b.nodes, declared = b.nodes, [], len(b.value_infos)
    it, cond, h, c = (b.fresh(f"{name}_{v}") for v in ("t", "cond", "h_in", "c_in"))
    xt = b.node("Gather", [proj, it], hint=f"{name}_xt", axis=axis)  # [batch, gh]
    hr = hybrid_fc(b, f"{name}_hr", h, (batch, n_out), r, r_scale, None, asym) if hybrid else \
        b.node("MatMul", [h, r_name], hint=f"{name}_hr")
    z = b.node("Add", [xt, hr], hint=f"{name}_z")
    split = [b.fresh(f"{name}_gate{g}") for g in gates]
    b.node("Split", [z, const([hidden] * len(gates), "split")], split, hint=f"{name}_split", axis=1)
    pre = dict(zip(gates, split, strict=True))
    if norm:  # each gate's sum normalised over the cells, times its coefficients, plus its bias
        ln = {g: (const(norm[g], f"ln{g}"), const(biases[g], f"lnb{g}")) for g in gates}
        pre = {g: v if g != 2 else _layer_norm(b, v, *ln[2], f"{name}_ln2", const) for g, v in pre.items()}
    else:
        ln = {}
    f = _gate(b, pre[1], peep.get(1), c, f"{name}_f", ln.get(1), const)
    i = b.node("Sub", [const(np.float32(1.0), "one"), f], hint=f"{name}_cifg") if cifg else \
        _gate(b, pre[0], peep.get(0), c, f"{name}_i", ln.get(0), const)
    g_act = _apply(b, act, pre[2], f"{name}_cell", const)
    c_new = b.node("Add", [b.node("Mul", [f, c], hint=f"{name}_fc"), b.node("Mul", [i, g_act], hint=f"{name}_ig")],
                   hint=f"{name}_c")
    if clip > 0:  # TFLite clips the cell state, which ONNX's LSTM cannot say
        c_new = b.node("Clip", [c_new, const(np.float32(-clip), "lo"), const(np.float32(clip), "hi")],
                       hint=f"{name}_clip")
    o_gate = _gate(b, pre[3], peep.get(3), c_new, f"{name}_o", ln.get(3), const)  # its peephole reads the new c
    h_new = b.node("Mul", [o_gate, _apply(b, act, c_new, f"{name}_hact", const)], hint=f"{name}_h")
    if has(_PROJ_W) and hybrid:
        pw, pw_scale = _stacked(b, op, [_PROJ_W], True)
        h_new = hybrid_fc(b, f"{name}_proj", h_new, (batch, hidden), pw, pw_scale,
                          const(float_weights(b, op, _PROJ_B), "proj_b") if has(_PROJ_B) else None, asym)
    elif has(_PROJ_W):
        h_new = b.node("Gemm", [h_new, const(float_weights(b, op, _PROJ_W), "proj_w"),
                                *([const(float_weights(b, op, _PROJ_B), "proj_b")] if has(_PROJ_B) else [])],
                       hint=f"{name}_proj", transB=1)
        if float(o.projClip) > 0:
            h_new = b.node("Clip", [h_new, const(np.float32(-o.projClip), "plo"),
                                    const(np.float32(o.projClip), "phi")], hint=f"{name}_pclip")
    cond_out = b.node("Identity", [cond], hint=f"{name}_cond_out")
    y_t = b.node("Identity", [h_new], hint=f"{name}_y")
    f32 = helper.TensorProto.FLOAT
    body = helper.make_graph(
        b.nodes, f"{name}_step",
        [helper.make_tensor_value_info(it, helper.TensorProto.INT64, []),
         helper.make_tensor_value_info(cond, helper.TensorProto.BOOL, []),
         helper.make_tensor_value_info(h, f32, [batch, n_out]), helper.make_tensor_value_info(c, f32, [batch, hidden])],
        [helper.make_tensor_value_info(cond_out, helper.TensorProto.BOOL, []),
         helper.make_tensor_value_info(h_new, f32, [batch, n_out]),
         helper.make_tensor_value_info(c_new, f32, [batch, hidden]),
         helper.make_tensor_value_info(y_t, f32, [batch, n_out])],
        value_info=b.value_infos[declared:])  # the body's aotc.tflite outputs (hybrid), declared in the body
    del b.value_infos[declared:]
    b.nodes = outer
    h_last, c_last = f"{h0}_next", f"{c0}_next"
    b.used.update((h_last, c_last))
    ys = b.fresh(f"{name}_steps")
    b.node("Loop", [const(np.int64(steps), "steps"), "", h0, c0], [h_last, c_last, ys], hint=f"{name}_loop",
           body=body)
    out = b.names[op.outputs[0]]
    if time_major:
        b.node("Identity", [ys], [out], hint=name)
    elif one_step:  # [1, batch, n_out] -> [batch, n_out]
        b.node("Reshape", [ys, const(list(out_t.shape), "out_shape")], [out], hint=name)
    else:  # the scan output is [steps, batch, n_out]
        b.node("Transpose", [ys], [out], hint=name, perm=[1, 0, 2])
    b.values[op.outputs[0]] = {NHWC: out}
    for state, size in ((h_last, n_out), (c_last, hidden)):
        b.extra_outputs.append(helper.make_tensor_value_info(state, f32, [batch, size]))
    for state, nxt, k, size in ((h0, h_last, _H, n_out), (c0, c_last, _C, hidden)):
        var = b.tensor(op.inputs[k])
        record_state(b, state, nxt, "float32", [batch, size], reset_value(var), reset_source(var), op.inputs[k])


def _stacked(b: OnnxBuilder, op: TflOp, ks: list[int], hybrid: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Inputs `ks` of op stacked by rows: float32 weights, or (hybrid) the int8 ones and each row's scale (LiteRT's
    hybrid LSTM takes one scale per weight tensor, zero point 0)."""
    shapes = [b.tensor(op.inputs[k]).shape for k in ks]
    if any(len(s) != 2 or s[1] != shapes[0][1] for s in shapes):
        raise op_error(op, f"its gates' weights are {[list(s) for s in shapes]}: matrices of as many columns needed")
    if not hybrid:
        return np.concatenate([float_weights(b, op, k) for k in ks], axis=0), None
    data, scales = [], []
    for k in ks:
        t = b.tensor(op.inputs[k])
        if t.dtype != "int8" or t.data is None or t.quant is None or t.quant.per_channel or t.quant.zero_point[0]:
            raise op_error(op, f"hybrid {op.op} needs constant int8 weights with one scale and zero point 0, "
                           f"'{t.name}' is not")
        data.append(t.data)
        scales.append(np.full(t.shape[0], t.quant.scale[0], np.float32))
    return np.concatenate(data, axis=0), np.concatenate(scales)


def _float_or_dequantized(b: OnnxBuilder, op: TflOp, k: int) -> np.ndarray:
    """Float32 weights, or int8 ones times their scale in float (LiteRT's hybrid peepholes: VectorScalarMultiply)."""
    t = b.tensor(op.inputs[k])
    if t.dtype == "int8" and t.quant is not None and t.data is not None:
        return t.data.astype(np.float32) * np.float32(t.quant.scale[0])
    return float_weights(b, op, k)


def _gate(b: OnnxBuilder, pre: str, peephole: str | None, c: str, hint: str, ln: tuple[str, str] | None,
          const) -> str:
    """sigmoid(pre + peephole * c), layer-normalised before the sigmoid when `ln` (coefficients, bias)."""
    if peephole is not None:
        pre = b.node("Add", [pre, b.node("Mul", [c, peephole], hint=f"{hint}_peep")], hint=f"{hint}_pre")
    if ln is not None:
        pre = _layer_norm(b, pre, *ln, f"{hint}_ln", const)
    return b.node("Sigmoid", [pre], hint=hint)


def _layer_norm(b: OnnxBuilder, v: str, coef: str, bias: str, hint: str, const) -> str:
    """LiteRT's MeanStddevNormalization over the cells ((v - mean) / sqrt(variance + 1e-8)), times the
    gate's coefficients, plus its bias."""
    mean = b.node("ReduceMean", [v, const(np.array([1], np.int64), "axis")], hint=f"{hint}_mean", keepdims=1)
    diff = b.node("Sub", [v, mean], hint=f"{hint}_diff")
    var = b.node("ReduceMean", [b.node("Mul", [diff, diff], hint=f"{hint}_sq"), const(np.array([1], np.int64), "axis")],
                 hint=f"{hint}_var", keepdims=1)
    std = b.node("Sqrt", [b.node("Add", [var, const(np.float32(1e-8), "eps")], hint=f"{hint}_veps")],
                 hint=f"{hint}_std")
    inv = b.node("Div", [const(np.float32(1.0), "one"), std], hint=f"{hint}_inv")
    norm = b.node("Mul", [diff, inv], hint=f"{hint}_norm")
    return b.node("Add", [b.node("Mul", [norm, coef], hint=f"{hint}_scale"), bias], hint=hint)


def _apply(b: OnnxBuilder, act: str | None, x: str, hint: str, const) -> str:
    if act is None:
        return x
    if act == "relu6":
        return b.node("Clip", [x, const(np.float32(0.0), "zero"), const(np.float32(6.0), "six")], hint=hint)
    return b.node(act, [x], hint=hint)


def lower_lstm_int8(b: OnnxBuilder, op: TflOp) -> None:
    """The converter's integer UNIDIRECTIONAL_SEQUENCE_LSTM (int8 input, weights and hidden state; int16 gates,
    in Q3.12, and cell state, at a power-of-two scale) as one node whose kernel runs every step in LiteRT's
    arithmetic (runtime_c/kernels/tflite_int8/tflite_int8_recurrent.c). Each gate's two products are requantised
    to Q3.12 by multipliers computed here as LiteRT's lstm.cc does (float scales), with the input's and the
    state's zero points folded into the biases. The h and c that LiteRT keeps between invokes become graph
    inputs `<lstm>_h` (int8; its zero point on the first call, which `<model>_reset_state` writes) and
    `<lstm>_c` (int16; 0), and outputs `<lstm>_h_next` / `<lstm>_c_next`, as for the float LSTM."""

    def has(k: int) -> bool:
        return len(op.inputs) > k and op.inputs[k] >= 0

    o = op.options
    x = b.tensor(op.inputs[_X])
    refuse = [what for what, present in (
        ("CIFG (no input gate)", not has(_W[0])), ("peepholes", any(has(k) for k in _PEEP)),
        ("layer normalisation", any(has(k) for k in _LAYER_NORM)), ("a projection", has(_PROJ_W)),
        ("time-major input", bool(o.timeMajor)), ("an activation other than tanh", int(o.fusedActivationFunction) != 4),
        ("diagonal recurrent weights", bool(getattr(o, "diagonalRecurrentTensors", False))),
        ("no hidden-scale intermediate", len(op.intermediates) < 5)) if present]
    if x.dtype != "int8" or refuse:
        raise op_error(op, f"{x.dtype} UNIDIRECTIONAL_SEQUENCE_LSTM with {', '.join(refuse) or 'these types'} is not "
                       "supported (aotc's integer LSTM: int8, no CIFG, peepholes, layer norm or projection)")
    h_t, c_t, hidden_t = b.tensor(op.inputs[_H]), b.tensor(op.inputs[_C]), b.tensor(op.intermediates[4])
    if c_t.dtype != "int16" or h_t.dtype != "int8" or None in (hidden_t.quant, c_t.quant, h_t.quant, x.quant):
        raise op_error(op, "integer UNIDIRECTIONAL_SEQUENCE_LSTM needs an int8 hidden and an int16 cell state")
    pot, c_log2 = checked_log2(float(c_t.quant.scale[0]))
    if not pot or c_log2 > -11:  # tanh(c) in Q(15 + c_log2): gemmlowp's exp, as written here, takes <= 5 bits
        raise op_error(op, "integer UNIDIRECTIONAL_SEQUENCE_LSTM needs a power-of-two cell state scale of at most "
                       f"2^-11, not {float(c_t.quant.scale[0]):g}")
    f32 = np.float32
    x_scale, x_zp = f32(x.quant.scale[0]), int(x.quant.zero_point[0])
    h_scale, h_zp = f32(h_t.quant.scale[0]), int(h_t.quant.zero_point[0])
    gate_scale = f32(2.0 ** -12)  # Q3.12 for the activations (no layer norm)
    mult, shift, wx, wh, bx, bh = [], [], [], [], [], []
    for g in range(4):  # input, forget, cell, output
        w, r = b.tensor(op.inputs[_W[g]]), b.tensor(op.inputs[_R[g]])
        if w.data is None or r.data is None or w.dtype != "int8" or r.dtype != "int8" or None in (w.quant, r.quant):
            raise op_error(op, "integer UNIDIRECTIONAL_SEQUENCE_LSTM needs constant int8 weights, quantized")
        wd, rd = w.data.astype(np.int64), r.data.astype(np.int64)
        bias = const_input(b, op, _B[g], "biases").astype(np.int64) if has(_B[g]) else np.zeros(len(wd), np.int64)
        wx.append(wd)
        wh.append(rd)
        bx.append(bias - x_zp * wd.sum(1))
        bh.append(-h_zp * rd.sum(1))
        for weight, scale in ((w, x_scale), (r, h_scale)):
            m, s = quantize_multiplier(float(f32(f32(weight.quant.scale[0]) * scale) / gate_scale))
            mult.append(m)
            shift.append(s)
    order = [0, 2, 4, 6, 1, 3, 5, 7]  # the four input products, then the four recurrent ones
    mult, shift = [mult[k] for k in order], [shift[k] for k in order]
    hid_m, hid_s = quantize_multiplier(float(f32(2.0 ** -15 / float(f32(hidden_t.quant.scale[0])) * 2.0 ** -15)))
    clip = int(min(max(f32(o.cellClip) / f32(c_t.quant.scale[0]), -32768.0), 32767.0)) if o.cellClip > 0 else 0
    batch, steps, _ = x.shape
    n_cell = wx[0].shape[0]
    name = b.names[op.outputs[0]]
    h0, c0 = variable_input(b, op, _H, f"{name}_h"), variable_input(b, op, _C, f"{name}_c")
    for state, t in ((h0, helper.TensorProto.INT8), (c0, helper.TensorProto.INT16)):
        b.used.add(state)
        b.extra_inputs.append(helper.make_tensor_value_info(state, t, [batch, n_cell]))
    h_last, c_last = f"{h0}_next", f"{c0}_next"
    b.used.update((h_last, c_last))
    for state, t in ((h0, h_t), (h_last, h_t), (c0, c_t), (c_last, c_t)):  # the header's SCALE and ZERO_POINT
        b.extra_quant[state] = {"scale": float(t.quant.scale[0]), "zero_point": int(t.quant.zero_point[0])}
    inputs = [b.value(op.inputs[_X], NHWC), b.const(np.concatenate(wx).astype(np.int8), f"{name}_wx"),
              b.const(np.concatenate(wh).astype(np.int8), f"{name}_wh"),
              b.const(np.concatenate(bx).astype(np.int32), f"{name}_bx"),
              b.const(np.concatenate(bh).astype(np.int32), f"{name}_bh"), h0, c0]
    out = b.names[op.outputs[0]]
    b.nodes.append(helper.make_node(
        tfl.LSTM8, inputs, [out, h_last, c_last], name=b.fresh(op.name), domain=tfl.DOMAIN, mult=mult, shift=shift,
        hidden_mult=hid_m, hidden_shift=hid_s, hidden_zero=int(hidden_t.quant.zero_point[0]), cell_shift=30 + c_log2,
        tanh_bits=15 + c_log2, clip=clip))
    i8, i16 = helper.TensorProto.INT8, helper.TensorProto.INT16
    b.value_infos.append(helper.make_tensor_value_info(out, i8, [batch, steps, n_cell]))
    b.values[op.outputs[0]] = {NHWC: out}
    b.extra_outputs.append(helper.make_tensor_value_info(h_last, i8, [batch, n_cell]))
    b.extra_outputs.append(helper.make_tensor_value_info(c_last, i16, [batch, n_cell]))
    record_state(b, h0, h_last, "int8", [batch, n_cell], reset_value(h_t), reset_source(h_t), op.inputs[_H])
    record_state(b, c0, c_last, "int16", [batch, n_cell], reset_value(c_t), reset_source(c_t), op.inputs[_C])


def lower_svdf_int8(b: OnnxBuilder, op: TflOp) -> None:
    """The full-integer SVDF (int8 input and feature weights, int16 time weights and state, int32 bias;
    TFLM's keyword_scrambled) as one node whose kernel is LiteRT's EvalIntegerSVDF. Its two multipliers
    are computed from the float32 scales in float, as SVDF's Prepare does. The state LiteRT keeps
    between invokes becomes graph input `<out>_state` (int16, zeros to start) and output
    `<out>_state_next`, as the LSTM's h and c."""

    x, wf, wt = (b.tensor(op.inputs[k]) for k in (0, 1, 2))
    y = b.tensor(op.outputs[0])
    state = b.tensor(op.inputs[4])
    has_bias = len(op.inputs) > 3 and op.inputs[3] >= 0
    types = (x.dtype, wf.dtype, wt.dtype, state.dtype, y.dtype)
    if types == ("int8",) * 5:
        raise op_error(op, "SVDF with int8 time weights and state (TFLM's 8-bit SVDF) is not supported: LiteRT's "
                       "reference kernel reads them as int16, so there is no reference to be exact with")
    if types != ("int8", "int8", "int16", "int16", "int8") or wf.data is None or wt.data is None or (
            has_bias and (b.tensor(op.inputs[3]).dtype != "int32" or b.tensor(op.inputs[3]).data is None)):
        raise op_error(op, f"SVDF of types {', '.join(types)} is not supported (aotc's: int8 input, constant int8 "
                       "feature and int16 time weights, int32 bias, int16 state, int8 output)")
    unquantized = next((t for t in (x, wf, wt, state, y) if t.quant is None), None)
    if unquantized is not None:
        raise op_error(op, f"integer SVDF needs quantization parameters on tensor '{unquantized.name}'")
    if int(state.quant.zero_point[0]) != 0 or int(op.options.fusedActivationFunction) != 1:
        raise op_error(op, "integer SVDF needs a symmetric state and a RELU activation (LiteRT's)")
    if len(x.shape) != 2:
        raise op_error(op, f"SVDF of a rank-{len(x.shape)} input is not supported")
    f32 = np.float32

    def scale(t) -> np.float32:
        return f32(t.quant.scale[0])
    m1, s1 = quantize_multiplier(float(f32(scale(x) * scale(wf)) / scale(state)))
    m2, s2 = quantize_multiplier(float(f32(scale(state) * scale(wt)) / scale(y)))
    name = b.names[op.outputs[0]]
    s_in, s_out = variable_input(b, op, 4, f"{name}_state"), f"{name}_state_next"
    b.used.update((s_in, s_out))
    for v in (s_in, s_out):
        b.extra_quant[v] = {"scale": float(state.quant.scale[0]), "zero_point": 0}
    b.extra_inputs.append(helper.make_tensor_value_info(s_in, helper.TensorProto.INT16, list(state.shape)))
    inputs = [b.value(op.inputs[0], NHWC), b.const(wf.data, f"{name}_wf"), b.const(wt.data, f"{name}_wt"),
              b.const(b.tensor(op.inputs[3]).data, f"{name}_bias") if has_bias else "", s_in]
    b.nodes.append(helper.make_node(
        tfl.SVDF, inputs, [name, s_out], name=b.fresh(op.name), domain=tfl.DOMAIN, rank=int(op.options.rank),
        x_zero=int(x.quant.zero_point[0]), y_zero=int(y.quant.zero_point[0]), mult1=m1, shift1=s1, mult2=m2,
        shift2=s2))
    b.value_infos.append(helper.make_tensor_value_info(name, helper.TensorProto.INT8, list(y.shape)))
    b.values[op.outputs[0]] = {NHWC: name}
    b.extra_outputs.append(helper.make_tensor_value_info(s_out, helper.TensorProto.INT16, list(state.shape)))
    record_state(b, s_in, s_out, "int16", list(state.shape), reset_value(state), reset_source(state), op.inputs[4])


def lower_rnn(b: OnnxBuilder, op: TflOp) -> None:
    """RNN (one step) and UNIDIRECTIONAL_SEQUENCE_RNN: h = act(x W^T + bias + h R^T) per step, as LiteRT's
    RnnBatchStep (bias, then the input's product, then the state's); float, or hybrid (int8 W and R: x and h
    quantized each step, hybrid_fc). The state LiteRT keeps in its hidden_state variable tensor becomes the
    graph input `<out>_h` and output `<out>_h_next`, as the LSTM's."""
    o = op.options
    seq = op.op == "UNIDIRECTIONAL_SEQUENCE_RNN"
    x, var = b.tensor(op.inputs[0]), b.tensor(op.inputs[4])
    if x.dtype != "float32":
        raise op_error(op, f"quantized ({x.dtype}) {op.op} is not supported (float and hybrid)")
    act = _ACT.get(int(o.fusedActivationFunction), "?")
    if act == "?":
        raise op_error(op, f"{op.op} activation {o.fusedActivationFunction} is not supported")
    hybrid = b.tensor(op.inputs[1]).dtype == "int8"
    asym = bool(getattr(o, "asymmetricQuantizeInputs", False))
    w, w_scale = _stacked(b, op, [1], hybrid)
    r, r_scale = _stacked(b, op, [2], hybrid)
    units, n_in = w.shape
    time_major = seq and bool(o.timeMajor)
    steps, batch = (x.shape[0], x.shape[1]) if time_major else (x.shape[1], x.shape[0]) if seq else (1, x.shape[0])
    name = b.names[op.outputs[0]]
    const = lambda v, hint: b.const(np.asarray(v, np.float32 if np.asarray(v).dtype.kind == "f" else np.int64),  # noqa: E731
                                    f"{name}_{hint}")
    h0 = variable_input(b, op, 4, f"{name}_h")
    b.used.add(h0)
    b.extra_inputs.append(helper.make_tensor_value_info(h0, helper.TensorProto.FLOAT, [batch, units]))
    flat = b.node("Reshape", [b.value(op.inputs[0], NHWC), const([-1, n_in], "flat")], hint=f"{name}_flat")
    bias = const(float_weights(b, op, 3), "b")
    proj = hybrid_fc(b, f"{name}_xw", flat, (batch * steps, n_in), w, w_scale, bias, asym) if hybrid else \
        b.node("Gemm", [flat, const(w, "w"), bias], hint=f"{name}_xw", transB=1)
    r_name = None if hybrid else const(r.T.copy(), "r")

    def step(xt: str, h: str) -> str:
        hr = hybrid_fc(b, f"{name}_hr", h, (batch, units), r, r_scale, None, asym) if hybrid else \
            b.node("MatMul", [h, r_name], hint=f"{name}_hr")
        return _apply(b, act, b.node("Add", [xt, hr], hint=f"{name}_z"), f"{name}_act", const) if act else \
            b.node("Add", [xt, hr], hint=f"{name}_z")

    h_last, out = f"{h0}_next", b.names[op.outputs[0]]
    b.used.add(h_last)
    f32 = helper.TensorProto.FLOAT
    if not seq:  # one step: the output is the new state
        h_new = step(proj, h0)
        b.node("Identity", [h_new], [out], hint=name)
        b.node("Identity", [h_new], [h_last], hint=f"{name}_state")
    else:
        proj = b.node("Reshape", [proj, const([steps, batch, units] if time_major else [batch, steps, units],
                                              "xw_shape")], hint=f"{name}_xw3")
        outer, b.nodes, declared = b.nodes, [], len(b.value_infos)
        it, cond, h = (b.fresh(f"{name}_{v}") for v in ("t", "cond", "h_in"))
        h_new = step(b.node("Gather", [proj, it], hint=f"{name}_xt", axis=0 if time_major else 1), h)
        cond_out = b.node("Identity", [cond], hint=f"{name}_cond_out")
        y_t = b.node("Identity", [h_new], hint=f"{name}_y")
        body = helper.make_graph(
            b.nodes, f"{name}_step",
            [helper.make_tensor_value_info(it, helper.TensorProto.INT64, []),
             helper.make_tensor_value_info(cond, helper.TensorProto.BOOL, []),
             helper.make_tensor_value_info(h, f32, [batch, units])],
            [helper.make_tensor_value_info(cond_out, helper.TensorProto.BOOL, []),
             helper.make_tensor_value_info(h_new, f32, [batch, units]),
             helper.make_tensor_value_info(y_t, f32, [batch, units])],
            value_info=b.value_infos[declared:])
        del b.value_infos[declared:]
        b.nodes = outer
        ys = b.fresh(f"{name}_steps")
        b.node("Loop", [const(np.int64(steps), "steps"), "", h0], [h_last, ys], hint=f"{name}_loop", body=body)
        if time_major:
            b.node("Identity", [ys], [out], hint=name)
        else:
            b.node("Transpose", [ys], [out], hint=name, perm=[1, 0, 2])
    b.values[op.outputs[0]] = {NHWC: out}
    b.extra_outputs.append(helper.make_tensor_value_info(h_last, f32, [batch, units]))
    record_state(b, h0, h_last, "float32", [batch, units], reset_value(var), reset_source(var), op.inputs[4])


# BIDIRECTIONAL_SEQUENCE_LSTM's inputs (bidirectional_sequence_lstm.cc): each direction's 17 weights and biases
# in UNIDIRECTIONAL_SEQUENCE_LSTM's order, then its h and c, then the auxiliary input and its weights
_BIDI_LSTM = {"fw": (range(1, 18), 35, 36), "bw": (range(18, 35), 37, 38)}
_BIDI_RNN = {"fw": (range(1, 4), 4), "bw": (range(5, 8), 8)}


def lower_bidirectional(b: OnnxBuilder, op: TflOp) -> None:
    """BIDIRECTIONAL_SEQUENCE_LSTM / _RNN: the forward direction on x and the backward one on x reversed in time
    (its outputs reversed back), each the unidirectional op's lowering (float or hybrid), their outputs
    concatenated along the last axis with merge_outputs, else two outputs. Each direction's state is carried
    as the unidirectional op's. An auxiliary input is refused by name."""
    lstm = op.op == "BIDIRECTIONAL_SEQUENCE_LSTM"
    o = op.options
    aux = 39 if lstm else 9
    if len(op.inputs) > aux and op.inputs[aux] >= 0:
        raise op_error(op, f"{op.op} with an auxiliary input is not supported")
    x = b.tensor(op.inputs[0])
    time_axis = 0 if o.timeMajor else 1
    merge = bool(o.mergeOutputs)
    outs = []
    for k, (direction, spec) in enumerate((_BIDI_LSTM if lstm else _BIDI_RNN).items()):
        x_idx = op.inputs[0]
        if direction == "bw":
            x_idx = _virtual(b, x, f"{b.names[op.inputs[0]]}_reversed", x.shape)
            b.values[x_idx] = {NHWC: _reverse(b, b.value(op.inputs[0], NHWC), time_axis, x.shape, f"{op.name}_bw_x")}
        weights = [op.inputs[i] if len(op.inputs) > i else -1 for i in spec[0]]
        states = [op.inputs[i] for i in spec[1:]]
        # the recurrent weights: [units, units] (RNN); recurrent-to-forget [n_cell, n_output] (LSTM)
        n_out = b.tensor(weights[5]).shape[1] if lstm else b.tensor(weights[1]).shape[0]
        shape = (*x.shape[:-1], n_out)
        y_idx = _virtual(b, x, f"{b.names[op.outputs[0]]}_{direction}", shape)
        one = TflOp(op.index, "UNIDIRECTIONAL_SEQUENCE_LSTM" if lstm else "UNIDIRECTIONAL_SEQUENCE_RNN",
                    [x_idx, *weights, *states] + ([-1] * 4 if lstm else []), [y_idx], o)
        (lower_lstm if lstm else lower_rnn)(b, one)
        y = b.value(y_idx, NHWC)
        outs.append(_reverse(b, y, time_axis, shape, f"{op.name}_bw_y") if direction == "bw" else y)
        if not merge:
            b.node("Identity", [outs[-1]], [b.names[op.outputs[k]]], hint=f"{op.name}_{direction}")
            b.values[op.outputs[k]] = {NHWC: b.names[op.outputs[k]]}
    if merge:
        b.node("Concat", outs, [b.names[op.outputs[0]]], hint=op.name, axis=-1)
        b.values[op.outputs[0]] = {NHWC: b.names[op.outputs[0]]}


def _virtual(b: OnnxBuilder, like, name: str, shape: tuple[int, ...]) -> int:
    """A tensor the file does not have (one direction's input or output), added to the builder's model."""
    b.m.tensors.append(type(like)(len(b.m.tensors), name, tuple(shape), "float32", None, None))
    b.names.append(b.fresh(name))
    return len(b.m.tensors) - 1


def _reverse(b: OnnxBuilder, x: str, axis: int, shape: tuple[int, ...], hint: str) -> str:
    """x reversed along `axis` (a Slice of step -1)."""
    return b.node("Slice", [x, b.const(np.array([shape[axis] - 1], np.int64), "start"),
                            b.const(np.array([-shape[axis] - 1], np.int64), "end"),
                            b.const(np.array([axis], np.int64), "axis"), b.const(np.array([-1], np.int64), "step")],
                  hint=hint)


def lower_svdf(b: OnnxBuilder, op: TflOp) -> None:
    """SVDF, float or hybrid (int8 feature weights: the input quantized as LiteRT's EvalHybridSVDF, hybrid_fc; int8
    time weights dequantized in float), as LiteRT's EvalFloatSVDF: the state [batch, filters, memory] shifted one
    step, each filter's new feature value (x W_f^T) appended, its time weights' dot product with the state, the
    rank filters of each unit summed, the bias, the activation. The state is the graph input `<out>_state` and
    output `<out>_state_next` (as the integer SVDF's)."""
    o = op.options
    x, wf_t, wt_t, var = (b.tensor(op.inputs[k]) for k in (0, 1, 2, 4))
    if x.dtype != "float32":
        raise op_error(op, f"quantized ({x.dtype}) SVDF of these types is not supported")
    act = _ACT.get(int(o.fusedActivationFunction), "?")
    if act == "?":
        raise op_error(op, f"SVDF activation {o.fusedActivationFunction} is not supported")
    hybrid = wf_t.dtype == "int8"
    if len(x.shape) != 2 or len(wf_t.shape) != 2 or len(wt_t.shape) != 2 or int(o.rank) <= 0 \
            or wt_t.shape[0] % int(o.rank):
        raise op_error(op, f"SVDF of rank {int(o.rank)} on input {list(x.shape)}, feature weights {list(wf_t.shape)} "
                       f"and time weights {list(wt_t.shape)}: 2-D tensors, and filters a multiple of the rank needed")
    rank, (batch, n_in) = int(o.rank), x.shape
    filters, memory = wt_t.shape
    units = filters // rank
    name = b.names[op.outputs[0]]
    const = lambda v, hint: b.const(np.asarray(v, np.float32 if np.asarray(v).dtype.kind == "f" else np.int64),  # noqa: E731
                                    f"{name}_{hint}")
    s0, s_next = variable_input(b, op, 4, f"{name}_state"), f"{name}_state_next"
    b.used.update((s0, s_next))
    b.extra_inputs.append(helper.make_tensor_value_info(s0, helper.TensorProto.FLOAT, [batch, memory * filters]))
    xs = b.value(op.inputs[0], NHWC)
    if hybrid:
        wf, wf_scale = _stacked(b, op, [1], True)
        feat = hybrid_fc(b, f"{name}_feature", xs, (batch, n_in), wf, wf_scale, None,
                         bool(getattr(o, "asymmetricQuantizeInputs", False)))
    else:
        feat = b.node("Gemm", [xs, const(float_weights(b, op, 1), "wf")], hint=f"{name}_feature", transB=1)
    wt = _float_or_dequantized(b, op, 2)
    state = b.node("Reshape", [s0, const([batch, filters, memory], "state3")], hint=f"{name}_state3")
    kept = b.node("Slice", [state, const([1], "one"), const([memory], "memory"), const([2], "axis")],
                  hint=f"{name}_shift")
    new = b.node("Concat", [kept, b.node("Unsqueeze", [feat, const([2], "axis2")], hint=f"{name}_newest")],
                 hint=f"{name}_state_new", axis=2)
    b.node("Reshape", [new, const([batch, memory * filters], "state_flat")], [s_next], hint=f"{name}_state_out")
    timed = b.node("ReduceSum", [b.node("Mul", [new, const(wt, "wt")], hint=f"{name}_time"), const([2], "axes")],
                   hint=f"{name}_filters", keepdims=0)
    y = b.node("ReduceSum", [b.node("Reshape", [timed, const([batch, units, rank], "ranks")], hint=f"{name}_units"),
                             const([2], "axes")], hint=f"{name}_sum", keepdims=0)
    if len(op.inputs) > 3 and op.inputs[3] >= 0:
        y = b.node("Add", [y, const(float_weights(b, op, 3), "bias")], hint=f"{name}_bias")
    y = _apply(b, act, y, f"{name}_act", const) if act else y
    b.node("Identity", [y], [name], hint=name)
    b.values[op.outputs[0]] = {NHWC: name}
    b.extra_outputs.append(helper.make_tensor_value_info(s_next, helper.TensorProto.FLOAT, [batch, memory * filters]))
    record_state(b, s0, s_next, "float32", [batch, memory * filters], reset_value(var), reset_source(var),
                 op.inputs[4])
