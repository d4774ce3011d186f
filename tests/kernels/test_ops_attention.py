"""Attention (opsets 23-25) against onnxruntime, error relative to each output's own scale: 3-D and
4-D inputs, causal, bool and float masks of every broadcast rank (shorter than the keys too),
grouped- and multi-query heads, the key/value cache with its present outputs, softcap, scale, the
qk_matmul_output modes, rows the mask empties, and the kernel under ASan/UBSan (test_sanitized_ops).
RotaryEmbedding (23), LinearAttention (27) and ai.onnx.preview's FlexAttention, compiled as onnx's
function bodies (issue 51)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from opcheck import model_case, node_case, shared_build

rng = np.random.default_rng(23)


def _t(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def attention_case(case_id: str, *, b=2, qh=4, kvh=4, sq=5, skv=5, d=8, dv=8, rank=4, past=0, mask=None,
                   outputs=("y",), opset=23, **attrs):
    """One Attention node; `mask`: (dtype, shape) of attn_mask; `outputs`: which of Y, present_key,
    present_value, qk_matmul_output (by name y, pk, pv, qk) the graph reads."""
    if rank == 4:
        feeds = {"q": _t(b, qh, sq, d), "k": _t(b, kvh, skv, d), "v": _t(b, kvh, skv, dv)}
    else:
        feeds = {"q": _t(b, sq, qh * d), "k": _t(b, skv, kvh * d), "v": _t(b, skv, kvh * dv)}
        attrs = {"q_num_heads": qh, "kv_num_heads": kvh, **attrs}
    inputs = ["q", "k", "v", "", "", ""]
    if mask is not None:
        dtype, shape = mask
        feeds["m"] = rng.random(shape) > 0.3 if dtype == "bool" else (_t(*shape) * 2).astype(np.float32)
        inputs[3] = "m"
    if past:
        feeds["past_k"], feeds["past_v"] = _t(b, kvh, past, d), _t(b, kvh, past, dv)
        inputs[4:6] = ["past_k", "past_v"]
    while inputs and not inputs[-1]:
        inputs.pop()
    names = {"y": 0, "pk": 1, "pv": 2, "qk": 3}
    outs = [""] * 4
    for o in outputs:
        outs[names[o]] = o
    while not outs[-1]:
        outs.pop()
    node = helper.make_node("Attention", inputs, outs, name="att", **attrs)
    vi = [helper.make_tensor_value_info(n, TensorProto.BOOL if v.dtype == bool else TensorProto.FLOAT, v.shape)
          for n, v in feeds.items()]
    g = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                                          for o in outputs])
    case = model_case(case_id, g, feeds, opset=opset)
    case.relative = True
    return case


CASES = [
    attention_case("plain"),
    attention_case("causal", is_causal=1),
    attention_case("scale_softcap", scale=0.3, softcap=2.0),
    attention_case("gqa", qh=8, kvh=2),
    attention_case("mqa_3d", qh=4, kvh=1, rank=3),
    attention_case("3d_dv", rank=3, d=8, dv=4),
    attention_case("cross", sq=3, skv=7),
    attention_case("mask_bool_2d", mask=("bool", (5, 5))),
    attention_case("mask_float_3d", mask=("float", (4, 5, 5))),
    attention_case("mask_float_causal", mask=("float", (2, 4, 5, 5)), is_causal=1),
    attention_case("mask_bool_causal", mask=("bool", (5, 5)), is_causal=1),
    attention_case("past", past=3, sq=2, skv=2, outputs=("y", "pk", "pv")),
    attention_case("past_causal_gqa_3d", past=4, sq=3, skv=3, qh=6, kvh=3, rank=3, is_causal=1,
                   outputs=("y", "pk", "pv")),
    attention_case("present_only_key", outputs=("y", "pk")),
    attention_case("qk_mode0", outputs=("y", "qk"), mask=("float", (5, 5))),
    attention_case("qk_mode1", outputs=("y", "qk"), qk_matmul_output_mode=1, mask=("bool", (5, 5))),
    attention_case("qk_mode2", outputs=("y", "qk"), qk_matmul_output_mode=2, mask=("float", (5, 5))),
    attention_case("qk_mode3", outputs=("y", "qk"), qk_matmul_output_mode=3, is_causal=1),
    attention_case("opset24", opset=24, is_causal=1, past=2, sq=2, skv=2, outputs=("y", "pk", "pv")),
]
def with_onnx_reference(case):
    """onnxruntime 1.32 refuses what the spec allows here (a mask shorter than the keys, a cache
    without present outputs): onnx's reference evaluator gives the expected outputs."""
    from onnx.reference import ReferenceEvaluator

    case.expected = ReferenceEvaluator(case.model).run(None, case.feeds)
    return case


CASES += [with_onnx_reference(attention_case("mask_bool_4d_short", mask=("bool", (2, 1, 5, 3)))),
          with_onnx_reference(attention_case("mask_float_short_causal", mask=("float", (5, 2)), is_causal=1)),
          with_onnx_reference(attention_case("past_no_present", past=2, sq=1, skv=1)),
          with_onnx_reference(attention_case("window", opset=25, left_window_size=2, right_window_size=1)),
          with_onnx_reference(attention_case("window_causal_past", opset=25, left_window_size=1, is_causal=1, past=3,
                                             sq=2, skv=2, outputs=("y", "pk", "pv")))]
EMPTY_ROW = attention_case("empty_rows", mask=("bool", (1, 1, 5, 5)))
EMPTY_ROW.feeds["m"][0, 0, 2, :] = False  # query row 2 sees no key: Y's row is 0, not NaN
CASES.append(EMPTY_ROW)


def _rotary(case_id: str, x: np.ndarray, cache_rows: int, half: int, position_ids: bool = True, **attrs):
    """RotaryEmbedding of x ([B, N, S, H] or [B, S, hidden] with num_heads); caches [rows, half] read at
    position_ids, or [B, S, half] without them."""
    b, s = x.shape[0], x.shape[-2] if x.ndim == 4 else x.shape[1]
    shape = (cache_rows, half) if position_ids else (b, s, half)
    angles = rng.random(shape).astype(np.float32) * 6
    feeds = {"x": x, "cos": np.cos(angles), "sin": np.sin(angles)}
    if position_ids:
        feeds["pos"] = rng.integers(0, cache_rows, (b, s)).astype(np.int64)
    return node_case(case_id, "RotaryEmbedding", feeds, list(feeds), ["y"], 23, **attrs)


def _linear_attention(case_id: str, b=2, t=4, qh=4, kvh=4, dk=8, dv=8, past=False, decay=None, beta=False,
                      **attrs):
    """LinearAttention on 3-D query/key/value; decay per key dim ("dim") or per head ("head"), in log space."""
    feeds = {"q": _t(b, t, qh * dk), "k": _t(b, t, kvh * dk), "v": _t(b, t, kvh * dv)}
    inputs = ["q", "k", "v", "", "", ""]
    if past:
        feeds["past"], inputs[3] = _t(b, kvh, dk, dv) * 0.5, "past"
    if decay:
        feeds["decay"] = -np.abs(_t(b, t, kvh * dk if decay == "dim" else kvh)) * 0.1
        inputs[4] = "decay"
    if beta:
        feeds["beta"], inputs[5] = rng.random((b, t, kvh)).astype(np.float32), "beta"
    while not inputs[-1]:
        inputs.pop()
    case = node_case(case_id, "LinearAttention", feeds, inputs, ["y", "state"], 27, q_num_heads=qh,
                     kv_num_heads=kvh, **attrs)
    case.relative = True
    return case


CASES += [
    _rotary("rotary_4d", _t(2, 4, 3, 8), 50, 4),
    _rotary("rotary_4d_interleaved_partial", _t(2, 4, 3, 8), 50, 2, interleaved=1, rotary_embedding_dim=4),
    _rotary("rotary_3d_heads", _t(2, 3, 16), 10, 4, num_heads=2),
    _rotary("rotary_3d_no_position_ids_partial", _t(1, 5, 24), 0, 2, position_ids=False, num_heads=2,
            rotary_embedding_dim=4),
    _linear_attention("linear_attention_linear", update_rule="linear"),
    _linear_attention("linear_attention_gated_gqa_past", qh=8, kvh=4, past=True, decay="dim", update_rule="gated"),
    _linear_attention("linear_attention_gated_delta_per_head", decay="head", beta=True, update_rule="gated_delta"),
    _linear_attention("linear_attention_delta_scale", beta=True, update_rule="delta", scale=0.25),
]


def _flex(case_id: str, qh=4, kvh=4, sq=5, skv=6, d=8, score_mod: bool = False, **attrs):
    """ai.onnx.preview FlexAttention (its opset 1, beside the default opset 26), checked against onnx's
    reference evaluator: onnxruntime has no kernel for it. `score_mod`: a subgraph adding a bias to the scores."""
    feeds = {"q": _t(2, qh, sq, d), "k": _t(2, kvh, skv, d), "v": _t(2, kvh, skv, d)}
    if score_mod:
        body = helper.make_graph(
            [helper.make_node("Add", ["s", "bias"], ["s_out"])], "score_mod",
            [helper.make_tensor_value_info("s", TensorProto.FLOAT, ["B", "H", "L", "S"])],
            [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, ["B", "H", "L", "S"])],
            [helper.make_tensor("bias", TensorProto.FLOAT, [], [0.5])])
        attrs["score_mod"] = body
    node = helper.make_node("FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview", **attrs)
    g = helper.make_graph([node], case_id, [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape)
                                            for n, v in feeds.items()],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    case = model_case(case_id, g, feeds, opset=26)
    case.model.opset_import.append(helper.make_opsetid("ai.onnx.preview", 1))
    case.model.ir_version = 10
    case.relative = True
    return with_onnx_reference(case)


CASES += [_flex("flex_plain"), _flex("flex_gqa_scaled", qh=8, kvh=2, scale=0.1),
          _flex("flex_score_mod", score_mod=True)]
IDS = [c.id for c in CASES]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("attention"))


@pytest.mark.parametrize("case_id", IDS)
def test_attention_matches_onnxruntime(build, case_id):
    build.check(case_id)


def test_the_score_matrix_is_never_materialised():
    """Scratch is one row of scores and one head's keys (4 * (1 + D) bytes per key), not S_q x S_kv."""
    from aot.compiler import Options, compile_model

    case = attention_case("big", b=1, qh=2, kvh=2, sq=64, skv=64, d=16, dv=16)
    bundle = compile_model(case.model, Options(name="att"))
    mem = bundle.metadata["memory"]
    assert mem["arena_bytes"] - mem["tight_bound_bytes"] <= 64 * 4 * (1 + 16) + 16
