"""LSTM, GRU and RNN against onnxruntime over the attribute space: directions, layouts,
sequence_lens, initial states, clip, activations, linear_before_reset, peepholes, optional
outputs, batch 1 and more, constant and run-time weights. Error relative to each output's scale."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import helper
from opcheck import Case, model_case, reference, shared_build

from aot.compiler import compile_model
from aot.errors import AotcError

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def rnn_case(case_id: str, op: str, seq: int = 5, batch: int = 2, inp: int = 3, hidden: int = 4, *,
             direction: str = "forward", layout: int = 0, bias: bool = True, seq_lens: list[int] | None = None,
             initial_h: bool = False, initial_c: bool = False, peep: bool = False, outputs: str = "y,y_h,y_c",
             runtime_weights: bool = False, opset: int = 14, seed: int = 0, **attrs) -> Case:
    """One recurrent node; `outputs` names those computed (the others are omitted)."""
    rng = np.random.default_rng(seed)
    d = 2 if direction == "bidirectional" else 1
    g = GATES[op]

    def f32(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    state = (d, batch, hidden)
    feeds = {"x": f32(seq, batch, inp)}  # layout 0; layout 1 is its transpose (below)
    consts = {"W": f32(d, g * hidden, inp, scale=0.5), "R": f32(d, g * hidden, hidden, scale=0.5)}
    names = ["x", "W", "R"]
    if bias:
        consts["B"] = f32(d, 2 * g * hidden, scale=0.5)
    names.append("B" if bias else "")
    if seq_lens is not None:
        feeds["seq_lens"] = np.asarray(seq_lens, np.int32)
    names.append("seq_lens" if seq_lens is not None else "")
    if initial_h:
        feeds["h0"] = f32(*state)
    names.append("h0" if initial_h else "")
    if op == "LSTM":
        if initial_c:
            feeds["c0"] = f32(*state)
        names.append("c0" if initial_c else "")
        if peep:
            consts["P"] = f32(d, 3 * hidden, scale=0.5)
        names.append("P" if peep else "")
    while names and not names[-1]:
        names.pop()
    if runtime_weights:
        feeds.update(consts)
        consts = {}
    slots = ["y", "y_h", "y_c"][:3 if op == "LSTM" else 2]
    wanted = outputs.split(",")
    outs = [s if s in wanted else "" for s in slots]
    while outs and not outs[-1]:
        outs.pop()

    def make(layout: int, feeds: dict[str, np.ndarray]) -> Case:
        node = helper.make_node(op, names, outs, name=f"{op.lower()}_node", hidden_size=hidden,
                                direction=direction, **attrs, **({"layout": 1} if layout else {}))
        graph = helper.make_graph(
            [node], case_id,
            [helper.make_tensor_value_info(k, onnx.TensorProto.INT32 if k == "seq_lens" else onnx.TensorProto.FLOAT,
                                           v.shape) for k, v in feeds.items()],
            [helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None) for o in outs if o],
            [onnx.numpy_helper.from_array(v, k) for k, v in consts.items()])
        return model_case(case_id, graph, feeds, opset)

    case = make(0, feeds)
    if layout:  # onnxruntime runs layout 0 only: the reference is the layout-0 twin's, transposed
        swap = {k: v.transpose(1, 0, 2) if k in ("x", "h0", "c0") else v for k, v in feeds.items()}
        ref = reference(case)
        case = make(1, swap)
        case.expected = [r.transpose(2, 0, 1, 3) if o == "y" else r.transpose(1, 0, 2)
                         for o, r in zip([o for o in outs if o], ref, strict=True)]
    case.relative = True
    return case


CASES = [
    *(rnn_case(f"{op.lower()}_{direction}_layout{layout}_b{batch}", op, batch=batch, direction=direction,
               layout=layout, initial_h=True, initial_c=True)
      for op in ("LSTM", "GRU", "RNN") for direction in ("forward", "reverse", "bidirectional")
      for layout in (0, 1) for batch in (1, 3)),
    *(rnn_case(f"{op.lower()}_seq_lens_{direction}_layout{layout}", op, seq=6, batch=3, direction=direction,
               layout=layout, seq_lens=[6, 2, 4], initial_h=True, initial_c=True)
      for op in ("LSTM", "GRU", "RNN") for direction in ("forward", "reverse", "bidirectional") for layout in (0, 1)),
    *(rnn_case(f"{op.lower()}_seq_len_zero_{direction}", op, seq=4, batch=3, direction=direction,
               seq_lens=[4, 0, 2], initial_h=True, initial_c=True)
      for op in ("LSTM", "GRU", "RNN") for direction in ("forward", "reverse")),
    *(rnn_case(f"{op.lower()}_no_bias_no_state", op, bias=False) for op in ("LSTM", "GRU", "RNN")),
    *(rnn_case(f"{op.lower()}_clip", op, clip=0.7, initial_h=True) for op in ("LSTM", "GRU", "RNN")),
    *(rnn_case(f"{op.lower()}_runtime_weights_{direction}", op, direction=direction, runtime_weights=True,
               initial_h=True) for op in ("LSTM", "GRU", "RNN") for direction in ("forward", "bidirectional")),
    rnn_case("lstm_peepholes_bidirectional", "LSTM", direction="bidirectional", peep=True, initial_c=True),
    rnn_case("lstm_peepholes_clip", "LSTM", peep=True, initial_c=True, clip=0.5),
    rnn_case("lstm_input_forget", "LSTM", input_forget=1, initial_c=True),
    rnn_case("gru_linear_before_reset", "GRU", linear_before_reset=1, initial_h=True),
    rnn_case("gru_linear_before_reset_bidirectional_seq_lens", "GRU", seq=4, batch=3, direction="bidirectional",
             linear_before_reset=1, seq_lens=[1, 4, 3]),
    rnn_case("gru_lbr_runtime_weights", "GRU", linear_before_reset=1, runtime_weights=True),
    # optional outputs: each alone (the others not computed)
    *(rnn_case(f"lstm_only_{o}", "LSTM", outputs=o, initial_c=True) for o in ("y", "y_h", "y_c")),
    *(rnn_case(f"gru_only_{o}", "GRU", outputs=o) for o in ("y", "y_h")),
    rnn_case("rnn_only_y_h", "RNN", outputs="y_h"),
    # activations the spec lists, with alpha and beta consumed by the functions that take them
    rnn_case("lstm_activations", "LSTM", activations=["HardSigmoid", "ScaledTanh", "Softsign"],
             activation_alpha=[0.3, 0.9], activation_beta=[0.4, 1.2]),
    rnn_case("lstm_activations_bidirectional", "LSTM", direction="bidirectional",
             activations=["Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Softsign", "Elu"],
             activation_alpha=[0.25, 0.8], activation_beta=[0.55]),
    rnn_case("gru_activations", "GRU", activations=["Sigmoid", "Affine"], activation_alpha=[0.5],
             activation_beta=[0.1]),
    rnn_case("gru_activations_relu", "GRU", activations=["HardSigmoid", "Relu"]),
    *(rnn_case(f"rnn_{act.lower()}", "RNN", activations=[act], **kw) for act, kw in (
        ("Relu", {}), ("Sigmoid", {}), ("LeakyRelu", {"activation_alpha": [0.2]}),
        ("ThresholdedRelu", {"activation_alpha": [0.3]}), ("Elu", {"activation_alpha": [0.7]}),
        ("Softplus", {}), ("Affine", {"activation_alpha": [0.6], "activation_beta": [-0.2]}))),
    # a streaming step: seq_len 1, the state in and out; larger sizes that cross the gemm's panels
    rnn_case("lstm_stream_step", "LSTM", seq=1, batch=1, inp=10, hidden=64, initial_h=True, initial_c=True,
             outputs="y_h,y_c"),
    rnn_case("gru_stream_step", "GRU", seq=1, batch=1, inp=10, hidden=64, initial_h=True, outputs="y_h"),
    rnn_case("lstm_kws_size", "LSTM", seq=49, batch=1, inp=10, hidden=64),
    rnn_case("gru_wide_bidirectional", "GRU", seq=7, batch=2, inp=33, hidden=37, direction="bidirectional",
             seq_lens=[7, 5], initial_h=True),
    rnn_case("lstm_opset7", "LSTM", opset=7, initial_h=True, initial_c=True),
    rnn_case("gru_opset22", "GRU", opset=22, direction="reverse"),
]


# the same cases with no scratch to spare (aotc's default): each step projects its own input
CASES += [dataclasses.replace(c, id=f"tight_{c.id}", scratch_floor=0) for c in CASES]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_loop_is_not_unrolled():
    """The sequence is one C call that loops; the emitted call names the ONNX node."""
    case = rnn_case("lstm_long", "LSTM", seq=200, batch=1, inp=8, hidden=16)
    bundle = compile_model(case.model)
    src = next(v for k, v in bundle.files.items() if k.endswith(".c") and "src/" in k)
    text = src.decode() if isinstance(src, bytes) else src
    assert text.count("aotc_rnn_f32(") == 1
    assert "ONNX node 'lstm_node' (LSTM)" in text


def test_bad_activation_refused():
    case = rnn_case("bad_act", "RNN", activations=["Swish"])
    with pytest.raises(AotcError, match="activation 'Swish'"):
        compile_model(case.model)
