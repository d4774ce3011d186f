"""UNIDIRECTIONAL_SEQUENCE_LSTM (float) -> ONNX ops in TFLite's arithmetic: a Gemm and a Loop.

TFLite's LSTM clips the cell state (cell_clip; the converter writes 10 for a Keras LSTM), which
ONNX's LSTM cannot say (its `clip` bounds the gate inputs), so the step is written out as the body
of an ONNX Loop (compiled once, as a C loop: aot/frontend/loops.py): the input projection of every
step is one Gemm before the loop; each step adds h R^T, takes the four gates, c = f c + i g
clipped, h = o act(c). Peepholes, CIFG (no input gate) and projection are TFLite's optional inputs.

The state: TFLite keeps h and c in variable tensors that persist from one invoke to the next (a
Keras LSTM converted by TFLiteConverter continues where the previous call stopped). aotc's library
keeps no state between calls, so each LSTM's h and c become graph inputs (`<name>_h`, `<name>_c`)
and their values after the last step graph outputs (`<name>_h_next`, `<name>_c_next`): the caller
carries them, as docs/firmware.md describes; zeros start a new sequence (a fresh interpreter).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from onnx import helper

from aot.frontend.tflite.reader import TflOp

if TYPE_CHECKING:
    from aot.frontend.tflite.ops import OnnxBuilder

# input indices of UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite's lstm_shared.h)
_X, _W = 0, (1, 2, 3, 4)  # input-to-{input, forget, cell, output} weights
_R = (5, 6, 7, 8)  # recurrent-to-{input, forget, cell, output}
_PEEP = (9, 10, 11)  # cell-to-{input, forget, output}
_B = (12, 13, 14, 15)  # {input, forget, cell, output} gate bias
_PROJ_W, _PROJ_B, _H, _C = 16, 17, 18, 19
_LAYER_NORM = (20, 21, 22, 23)
_ACT = {0: None, 1: "Relu", 3: "relu6", 4: "Tanh", 6: "Sigmoid"}


def lower_lstm(b: OnnxBuilder, op: TflOp) -> None:
    from aot.frontend.tflite.ops import NHWC, _err, _weights

    def has(k: int) -> bool:
        return len(op.inputs) > k and op.inputs[k] >= 0

    o = op.options
    x = b.tensor(op.inputs[_X])
    if x.dtype != "float32":
        raise _err(op, f"quantized ({x.dtype}) UNIDIRECTIONAL_SEQUENCE_LSTM is not supported yet (float only)")
    if any(has(k) for k in _LAYER_NORM):
        raise _err(op, "UNIDIRECTIONAL_SEQUENCE_LSTM with layer normalisation is not supported")
    if getattr(o, "diagonalRecurrentTensors", False):
        raise _err(op, "UNIDIRECTIONAL_SEQUENCE_LSTM with diagonal recurrent weights is not supported")
    act = _ACT.get(int(o.fusedActivationFunction), "?")
    if act == "?":
        raise _err(op, f"LSTM activation {o.fusedActivationFunction} is not supported")
    cifg = not has(_W[0])
    gates = [g for g in range(4) if not (cifg and g == 0)]
    hidden = b.tensor(op.inputs[_W[1]]).shape[0]
    out_t = b.tensor(op.outputs[0])
    n_out = out_t.shape[-1]  # hidden, or the projection's size
    time_major = bool(o.timeMajor)
    if time_major:
        steps, batch = x.shape[0], x.shape[1]
    else:
        batch, steps = x.shape[0], x.shape[1]
    n_in = x.shape[-1]
    gh = len(gates) * hidden
    name = b.names[op.outputs[0]]
    const = lambda v, hint: b.const(np.asarray(v, np.float32 if np.asarray(v).dtype.kind == "f" else np.int64),  # noqa: E731
                                    f"{name}_{hint}")
    w = np.concatenate([_weights(b, op, _W[g]) for g in gates], axis=0)  # [gh, n_in]
    r = np.concatenate([_weights(b, op, _R[g]) for g in gates], axis=0)  # [gh, n_out]
    bias = np.concatenate([_weights(b, op, _B[g]) if has(_B[g]) else np.zeros(hidden, np.float32) for g in gates])

    # the state: graph inputs, and graph outputs after the last step
    h0, c0 = f"{name}_h", f"{name}_c"
    for state, size in ((h0, n_out), (c0, hidden)):
        b.used.add(state)
        b.extra_inputs.append(helper.make_tensor_value_info(state, helper.TensorProto.FLOAT, [batch, size]))

    xs = b.value(op.inputs[_X], NHWC)
    flat = b.node("Reshape", [xs, const([-1, n_in], "flat")], hint=f"{name}_flat")
    proj = b.node("Gemm", [flat, const(w, "w"), const(bias, "b")], hint=f"{name}_xw", transB=1)
    proj = b.node("Reshape", [proj, const([steps, batch, gh] if time_major else [batch, steps, gh], "xw_shape")],
                  hint=f"{name}_xw3")
    r_name = const(r.T.copy(), "r")  # [n_out, gh]
    peep = {g: const(_weights(b, op, _PEEP[k]), f"peep{g}") for k, g in enumerate((0, 1, 3)) if has(_PEEP[k])}
    clip = float(o.cellClip)
    axis = 0 if time_major else 1

    # one step, as the body of an ONNX Loop over the steps (compiled once: aot/frontend/loops.py)
    outer, b.nodes = b.nodes, []
    it, cond, h, c = (b.fresh(f"{name}_{v}") for v in ("t", "cond", "h_in", "c_in"))
    xt = b.node("Gather", [proj, it], hint=f"{name}_xt", axis=axis)  # [batch, gh]
    z = b.node("Add", [xt, b.node("MatMul", [h, r_name], hint=f"{name}_hr")], hint=f"{name}_z")
    split = [b.fresh(f"{name}_gate{g}") for g in gates]
    b.node("Split", [z, const([hidden] * len(gates), "split")], split, hint=f"{name}_split", axis=1)
    pre = dict(zip(gates, split, strict=True))
    f = _gate(b, pre[1], peep.get(1), c, f"{name}_f")
    i = b.node("Sub", [const(np.float32(1.0), "one"), f], hint=f"{name}_cifg") if cifg else \
        _gate(b, pre[0], peep.get(0), c, f"{name}_i")
    g_act = _apply(b, act, pre[2], f"{name}_cell", const)
    c_new = b.node("Add", [b.node("Mul", [f, c], hint=f"{name}_fc"), b.node("Mul", [i, g_act], hint=f"{name}_ig")],
                   hint=f"{name}_c")
    if clip > 0:  # TFLite clips the cell state, which ONNX's LSTM cannot say
        c_new = b.node("Clip", [c_new, const(np.float32(-clip), "lo"), const(np.float32(clip), "hi")],
                       hint=f"{name}_clip")
    o_gate = _gate(b, pre[3], peep.get(3), c_new, f"{name}_o")  # its peephole reads the new c
    h_new = b.node("Mul", [o_gate, _apply(b, act, c_new, f"{name}_hact", const)], hint=f"{name}_h")
    if has(_PROJ_W):
        h_new = b.node("Gemm", [h_new, const(_weights(b, op, _PROJ_W), "proj_w"),
                                *([const(_weights(b, op, _PROJ_B), "proj_b")] if has(_PROJ_B) else [])],
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
         helper.make_tensor_value_info(y_t, f32, [batch, n_out])])
    b.nodes = outer
    h_last, c_last = f"{h0}_next", f"{c0}_next"
    b.used.update((h_last, c_last))
    ys = b.fresh(f"{name}_steps")
    b.node("Loop", [const(np.int64(steps), "steps"), "", h0, c0], [h_last, c_last, ys], hint=f"{name}_loop",
           body=body)
    out = b.names[op.outputs[0]]
    if time_major:
        b.node("Identity", [ys], [out], hint=name)
    else:  # the scan output is [steps, batch, n_out]
        b.node("Transpose", [ys], [out], hint=name, perm=[1, 0, 2])
    b.values[op.outputs[0]] = {NHWC: out}
    for state, size in ((h_last, n_out), (c_last, hidden)):
        b.extra_outputs.append(helper.make_tensor_value_info(state, f32, [batch, size]))


def _gate(b: OnnxBuilder, pre: str, peephole: str | None, c: str, hint: str) -> str:
    """sigmoid(pre + peephole * c)."""
    if peephole is not None:
        pre = b.node("Add", [pre, b.node("Mul", [c, peephole], hint=f"{hint}_peep")], hint=f"{hint}_pre")
    return b.node("Sigmoid", [pre], hint=hint)


def _apply(b: OnnxBuilder, act: str | None, x: str, hint: str, const) -> str:
    if act is None:
        return x
    if act == "relu6":
        return b.node("Clip", [x, const(np.float32(0.0), "zero"), const(np.float32(6.0), "six")], hint=hint)
    return b.node(act, [x], hint=hint)
