"""onnxruntime's attention ops and EmbedLayerNormalization (issue 51), rewritten onto ONNX ops
(aot/frontend/onnx/canonical/contrib_attention.py) and compared with onnxruntime's own CPU kernels: every
form of Attention's mask_index, past and present, attention_bias, unidirectional; MultiHeadAttention's
masks, cross attention and past; EmbedLayerNormalization's mask_index, position_ids and embedding_sum; and
the tiny BERT onnxruntime's optimizer wrote three ways (examples/optimize_transformers.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import require_tool
from modelcheck import compile_build_run, reference
from onnx import TensorProto, helper
from opcheck import Case, assert_close, shared_build, tensor_type

from aot.build import cmake_exe
from aot.compiler import Options, compile_model
from aot.errors import AotcError
from aot.targets import get_target

MODELS = Path(__file__).resolve().parents[1] / "models"
MS = "com.microsoft"


def _rand(*shape: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _model(case_id: str, node: onnx.NodeProto, feeds: dict[str, np.ndarray], outputs: dict[str, int],
           consts: dict[str, np.ndarray] | None = None) -> Case:
    """One com.microsoft node; `outputs` maps each graph output to its element type."""
    graph = helper.make_graph(
        [node], case_id,
        [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in feeds.items()],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()],
        [onnx.numpy_helper.from_array(v, k) for k, v in (consts or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return Case(case_id, model, feeds)


F = TensorProto.FLOAT
B, S, HIN, HEADS = 2, 6, 16, 4
X = _rand(B, S, HIN, seed=1)
W = _rand(HIN, 48, seed=2, scale=0.4)
BIAS = _rand(48, seed=3, scale=0.3)


def _attention(case_id: str, feeds: dict[str, np.ndarray], inputs: list[str], outputs: dict[str, int] | None = None,
               **attrs) -> Case:
    node = helper.make_node("Attention", inputs, list(outputs or {"y": F}), name="attention_node", domain=MS,
                            num_heads=HEADS, **attrs)
    return _model(case_id, node, {"x": X, **feeds}, outputs or {"y": F}, {"w": W, "b": BIAS})


def _i32(values) -> np.ndarray:
    return np.array(values, np.int32)


MASK_2D = _i32([[1, 1, 1, 1, 0, 0], [0, 1, 1, 0, 1, 1]])
MASK_3D = np.random.default_rng(4).integers(0, 2, (B, S, S)).astype(np.int32)
MASK_3D[1, 2] = 0  # a query row that sees no key
PAST = _rand(2, B, HEADS, 5, 4, seed=5)
CASES = [
    _attention("attention_mask_end", {"m": _i32([6, 3])}, ["x", "w", "b", "m"]),
    # a batch whose every key is masked, and causality on top: onnxruntime adds the fill value twice
    _attention("attention_mask_end_zero_causal", {"m": _i32([0, 4])}, ["x", "w", "b", "m"], unidirectional=1),
    _attention("attention_mask_end_start", {"m": _i32([6, 5, 0, 2])}, ["x", "w", "b", "m"]),
    _attention("attention_mask_2d", {"m": MASK_2D}, ["x", "w", "b", "m"]),
    _attention("attention_mask_2d_causal_filter", {"m": MASK_2D}, ["x", "w", "b", "m"], unidirectional=1,
               mask_filter_value=-30.0),
    _attention("attention_mask_3d", {"m": MASK_3D}, ["x", "w", "b", "m"]),
    _attention("attention_mask_3d_causal_scale", {"m": MASK_3D}, ["x", "w", "", "m"], unidirectional=1, scale=0.2),
    _attention("attention_bias", {"ab": _rand(1, HEADS, S, S, seed=6)}, ["x", "w", "b", "", "", "ab"]),
    _attention("attention_bias_and_mask", {"m": _i32([5, 6]), "ab": _rand(B, 1, S, S, seed=7)},
               ["x", "w", "b", "m", "", "ab"]),
    _attention("attention_present", {}, ["x", "w", "b"], {"y": F, "present": F}, unidirectional=1),
    _attention("attention_past_causal_mask", {"m": _i32([[1] * 11, [0, 0] + [1] * 9]), "past": PAST},
               ["x", "w", "b", "m", "past"], {"y": F, "present": F}, unidirectional=1),
    # onnxruntime's GPT-2 converter fills with the lowest float: padding and causality then sum to -inf
    _attention("attention_past_causal_mask_lowest_filter", {"m": _i32([[1] * 11, [0, 0] + [1] * 9]), "past": PAST},
               ["x", "w", "b", "m", "past"], {"y": F, "present": F}, unidirectional=1,
               mask_filter_value=float(np.finfo(np.float32).min)),
]
# one decoding step: a single query against the cache and itself, keys counted by a 1-D mask_index
XD = _rand(B, 1, HIN, seed=8)
CASES.append(_model("attention_decode_step",
                    helper.make_node("Attention", ["x", "w", "b", "m", "past"], ["y", "present"], name="attention_node",
                                     domain=MS, num_heads=HEADS, unidirectional=1),
                    {"x": XD, "m": _i32([6, 4]), "past": PAST}, {"y": F, "present": F}, {"w": W, "b": BIAS}))


def _mha(case_id: str, feeds: dict[str, np.ndarray], inputs: list[str], outputs: dict[str, int] | None = None,
         consts: dict[str, np.ndarray] | None = None, **attrs) -> Case:
    node = helper.make_node("MultiHeadAttention", inputs, list(outputs or {"y": F}), name="mha_node", domain=MS,
                            num_heads=HEADS, **attrs)
    return _model(case_id, node, feeds, outputs or {"y": F}, consts)


Q, K, V = _rand(B, S, HIN, seed=9), _rand(B, S, HIN, seed=10), _rand(B, S, HIN, seed=11)
KC, VC = _rand(B, 7, HIN, seed=12), _rand(B, 7, 8, seed=13)
PK, PV = _rand(B, HEADS, 5, 4, seed=14), _rand(B, HEADS, 5, 4, seed=15)
Q3, K3, V3 = (np.ascontiguousarray(a[:, :3]) for a in (Q, K, V))
# with a past, onnxruntime's CPU kernel reads past_value only when present_value is an output: the cases ask for both
CASES += [
    _mha("mha_bias_mask_end", {"q": Q, "k": K, "v": V, "m": _i32([4, 6])}, ["q", "k", "v", "bb", "m"],
         consts={"bb": BIAS}),
    _mha("mha_mask_2d", {"q": Q, "k": K, "v": V, "m": MASK_2D}, ["q", "k", "v", "", "m"]),
    _mha("mha_mask_3d_scale", {"q": Q, "k": K, "v": V, "m": MASK_3D}, ["q", "k", "v", "", "m"], scale=0.3),
    _mha("mha_cross", {"q": Q, "k": KC, "v": VC, "m": _i32([[1] * 7, [1] * 5 + [0] * 2])},
         ["q", "k", "v", "", "m"]),
    _mha("mha_cross_bias_attention_bias", {"q": Q, "k": KC, "v": VC, "ab": _rand(B, HEADS, S, 7, seed=16)},
         ["q", "k", "v", "bb", "", "ab"], consts={"bb": _rand(40, seed=17, scale=0.3)}),
    _mha("mha_past_causal", {"q": Q3, "k": K3, "v": V3, "pk": PK, "pv": PV},
         ["q", "k", "v", "", "", "", "pk", "pv"], {"y": F, "present_key": F, "present_value": F}, unidirectional=1),
    _mha("mha_past_mask", {"q": Q3, "k": K3, "v": V3, "m": _i32([[1] * 8, [0] * 2 + [1] * 6]),
                           "pk": PK, "pv": PV},
         ["q", "k", "v", "bb", "m", "", "pk", "pv"], {"y": F, "present_key": F, "present_value": F},
         consts={"bb": BIAS}),
]


def _eln(case_id: str, feeds: dict[str, np.ndarray], inputs: list[str], outputs: dict[str, int], **attrs) -> Case:
    node = helper.make_node("EmbedLayerNormalization", inputs, list(outputs), name="eln_node", domain=MS, **attrs)
    consts = {"word": _rand(30, HIN, seed=20), "pos": _rand(12, HIN, seed=21), "seg": _rand(2, HIN, seed=22),
              "gamma": _rand(HIN, seed=23), "beta": _rand(HIN, seed=24)}
    return _model(case_id, node, feeds, outputs, consts)


IDS = np.random.default_rng(25).integers(0, 30, (B, 7)).astype(np.int32)
SEG = _i32([[0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1, 1]])
CASES += [
    # mask_index counts the ones of each row (a 2 is not one)
    _eln("eln_mask", {"ids": IDS, "segs": SEG, "mask": _i32([[1, 1, 1, 1, 1, 0, 0], [1, 2, 1, 0, 1, 1, 1]])},
         ["ids", "segs", "word", "pos", "seg", "gamma", "beta", "mask"],
         {"y": F, "mask_index": TensorProto.INT32, "sum": F}, epsilon=1e-5),
    _eln("eln_position_ids_broadcast", {"ids": IDS, "pids": _i32([[11, 3, 0, 5, 2, 9, 1]])},
         ["ids", "", "word", "pos", "", "gamma", "beta", "", "pids"], {"y": F, "": 0, "sum": F}),
    _eln("eln_position_ids", {"ids": IDS, "segs": SEG, "pids": (IDS % 12).astype(np.int32)},
         ["ids", "segs", "word", "pos", "seg", "gamma", "beta", "", "pids"], {"y": F, "mask_index": TensorProto.INT32}),
    _eln("eln_mask_index_without_mask", {"ids": IDS, "segs": SEG},
         ["ids", "segs", "word", "pos", "seg", "gamma", "beta"], {"y": F, "mask_index": TensorProto.INT32}),
]


def _qattention(case_id: str, feeds: dict[str, np.ndarray], mask: str = "", past: str = "",
                per_column: bool = False, **attrs) -> Case:
    """DynamicQuantizeLinear then QAttention, as quantize_dynamic writes Attention: int8 weight, a scale (and
    zero point) per tensor or per column."""
    rng = np.random.default_rng(40)
    if per_column:
        scale = (np.abs(W).max(axis=0) / 127).astype(np.float32)
        zero = rng.integers(-3, 4, 48).astype(np.int8)
    else:
        scale, zero = np.float32(np.abs(W).max() / 127), np.int8(0)
    wq = np.clip(np.round(W / scale) + zero.astype(np.int32), -128, 127).astype(np.int8)
    outputs = {"y": F, "present": F} if past else {"y": F}
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             helper.make_node("QAttention", ["xq", "wq", "b", "xs", "ws", mask, "xz", "wz", past], list(outputs),
                              name="qattention_node", domain=MS, num_heads=HEADS, **attrs)]
    feeds = {"x": X, **feeds}
    graph = helper.make_graph(
        nodes, case_id, [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in feeds.items()],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()],
        [onnx.numpy_helper.from_array(np.asarray(v), k) for k, v in
         {"wq": wq, "b": BIAS, "ws": scale, "wz": zero}.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return Case(case_id, model, feeds)


def _qembed(case_id: str, feeds: dict[str, np.ndarray], segments: bool, outputs: dict[str, int]) -> Case:
    """QEmbedLayerNormalization as quantize_dynamic writes EmbedLayerNormalization: uint8 tables, gamma and beta,
    each with its own scale and zero point."""
    tables = {"word": _rand(30, HIN, seed=20), "pos": _rand(12, HIN, seed=21), "seg": _rand(2, HIN, seed=22),
              "gamma": _rand(HIN, seed=23), "beta": _rand(HIN, seed=24)}
    consts = {}
    for name, t in tables.items():
        scale = np.float32((t.max() - t.min()) / 255)
        zero = np.uint8(np.round(-t.min() / scale))
        consts |= {f"{name}_q": np.clip(np.round(t / scale) + zero, 0, 255).astype(np.uint8),
                   f"{name}_s": scale, f"{name}_z": zero}
    order = ["word", "pos", "seg", "gamma", "beta"] if segments else ["word", "pos", "gamma", "beta"]
    seg = "seg" in order
    ins = ["ids", "segs" if seg else "", "word_q", "pos_q", "seg_q" if seg else "", "gamma_q", "beta_q",
           "mask" if "mask" in feeds else ""]
    ins += [f"{n}_s" if n in order else "" for n in ("word", "pos", "seg", "gamma", "beta")]
    ins += [f"{n}_z" if n in order else "" for n in ("word", "pos", "seg", "gamma", "beta")]
    node = helper.make_node("QEmbedLayerNormalization", ins, list(outputs), name="qeln_node", domain=MS,
                            epsilon=1e-5)
    return _model(case_id, node, feeds, outputs, {k: np.asarray(v) for k, v in consts.items()
                                                  if k.split("_")[0] in order})


CASES += [
    _qattention("qattention", {}),
    _qattention("qattention_per_column_mask", {"m": _i32([6, 3])}, mask="m", per_column=True),
    _qattention("qattention_past_causal_mask_2d", {"m": _i32([[1] * 11, [0, 0] + [1] * 9]), "past": PAST},
                mask="m", past="past", unidirectional=1),
    _qembed("qeln_mask", {"ids": IDS, "segs": SEG, "mask": _i32([[1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 1, 1, 1]])},
            True, {"y": F, "mask_index": TensorProto.INT32}),
    _qembed("qeln_no_segments", {"ids": IDS}, False, {"y": F, "mask_index": TensorProto.INT32}),
]


def _rotary(case_id: str, x: np.ndarray, positions: np.ndarray, half: int, **attrs) -> Case:
    """com.microsoft RotaryEmbedding with cos/sin caches of 20 positions, as LLaMA-style models' exporters make them."""
    angles = np.arange(20)[:, None] / (10000.0 ** (np.arange(half)[None] / half))
    node = helper.make_node("RotaryEmbedding", ["x", "p", "cos", "sin"], ["y"], name="rotary_node", domain=MS,
                            **attrs)
    return _model(case_id, node, {"x": x, "p": positions}, {"y": F},
                  {"cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32)})


POS = np.array([[3, 4, 5, 6, 7, 8], [0, 2, 4, 6, 8, 19]], np.int64)
CASES += [
    _rotary("rotary_3d_start", X, np.array([5], np.int64), 2, num_heads=HEADS),
    _rotary("rotary_3d_positions_interleaved", X, POS, 2, num_heads=HEADS, interleaved=1),
    _rotary("rotary_4d", _rand(B, HEADS, S, 8, seed=41), POS, 4),
    _rotary("rotary_partial_dim", _rand(B, S, 32, seed=42), np.array([0], np.int64), 2, num_heads=4,
            rotary_embedding_dim=4),
    _rotary("rotary_interleaved_heads_from_cache", _rand(B, S, 32, seed=43), POS, 4,
            interleaved=1),
]


def bert_feeds(seed: int = 0) -> dict[str, np.ndarray]:
    """Two sequences of 16 tokens, the second padded after 11; two segments."""
    mask = np.ones((2, 16), np.int64)
    mask[1, 11:] = 0
    return {"input_ids": np.random.default_rng(seed).integers(0, 128, (2, 16)).astype(np.int64),
            "attention_mask": mask, "token_type_ids": np.repeat((np.arange(16) >= 8)[None], 2, 0).astype(np.int64)}


BERT = ("bert_tiny_ort", "bert_tiny_ort_raw_mask", "bert_tiny_ort_mha", "bert_tiny_qdyn_ort")
CASES += [Case(name, onnx.load(MODELS / f"{name}.onnx"), bert_feeds(), relative=True)
          for name in ("bert_tiny", *BERT)]  # the export as torch wrote it, and as the optimizer fused it


def gpt2_feeds(seed: int = 0) -> dict[str, np.ndarray]:
    """One decoding step of two sequences after 7 tokens, the second left-padded by 3."""
    rng = np.random.default_rng(seed)
    mask = np.ones((2, 8), np.int32)
    mask[1, :3] = 0
    feeds = {"input_ids": rng.integers(0, 128, (2, 1)).astype(np.int32),
             "position_ids": np.array([[7], [4]], np.int32), "attention_mask": mask}
    return feeds | {f"past_{k}": rng.standard_normal((2, 2, 4, 7, 8)).astype(np.float32) for k in (0, 1)}


CASES.append(Case("gpt2_tiny_past_ort", onnx.load(MODELS / "gpt2_tiny_past_ort.onnx"), gpt2_feeds(), relative=True))


def _fix_outputs(case: Case) -> Case:
    """The "" key of an outputs dict marks an omitted output: drop it from the graph's outputs."""
    outs = [o for o in case.model.graph.output if o.name]
    del case.model.graph.output[:]
    case.model.graph.output.extend(outs)
    return case


CASES = [_fix_outputs(c) for c in CASES]


def test_bert_models_hold_the_fused_ops():
    """The committed models are what the optimizer writes: the embedding, attention and norm fusions (GPT-2's
    by onnxruntime's converter: Attention unidirectional with the mask and past)."""
    ops = {name: sorted({n.op_type for n in onnx.load(MODELS / f"{name}.onnx").graph.node if n.domain == MS})
           for name in BERT}
    assert ops == {"bert_tiny_ort": ["Attention", "BiasGelu", "EmbedLayerNormalization", "SkipLayerNormalization"],
                   "bert_tiny_ort_raw_mask": ["Attention", "BiasGelu", "EmbedLayerNormalization",
                                              "SkipLayerNormalization"],
                   "bert_tiny_ort_mha": ["BiasGelu", "EmbedLayerNormalization", "MultiHeadAttention",
                                         "SkipLayerNormalization"],
                   "bert_tiny_qdyn_ort": ["BiasGelu", "DynamicQuantizeMatMul", "QAttention", "QEmbedLayerNormalization",
                                          "SkipLayerNormalization"]}
    gpt2 = onnx.load(MODELS / "gpt2_tiny_past_ort.onnx")
    assert sorted({n.op_type for n in gpt2.graph.node if n.domain == MS}) == [
        "Attention", "EmbedLayerNormalization", "FastGelu", "SkipLayerNormalization"]
    attention = next(n for n in gpt2.graph.node if n.op_type == "Attention")
    assert attention.input[3] == "attention_mask" and attention.input[4] == "past_0"
    assert {a.name: helper.get_attribute_value(a) for a in attention.attribute}["unidirectional"] == 1
    for name in BERT:  # every attention reads a mask
        node = next(i for i in onnx.load(MODELS / f"{name}.onnx").graph.node if "Attention" in i.op_type)
        assert node.input[{"Attention": 3, "MultiHeadAttention": 4, "QAttention": 5}[node.op_type]]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("contrib_attention"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_contrib_attention(results, case_id):
    results.check(case_id)


@pytest.mark.parametrize("case_id, feeds, inputs, attrs, message", [
    ("mask_4d", {"m": np.ones((B, 1, S, S), np.int32)}, ["x", "w", "b", "m"], {},
     "mask of shape \\[2, 1, 6, 6\\] is not supported"),
    ("mask_int64", {"m": np.array([6, 3], np.int64)}, ["x", "w", "b", "m"], {}, "mask of int64 is not supported"),
    ("rotary", {}, ["x", "w", "b"], {"do_rotary": 1}, "do_rotary=1 is not supported"),
    ("share_buffer", {"p": PAST}, ["x", "w", "b", "", "p"], {"past_present_share_buffer": 1},
     "past_present_share_buffer"),
])
def test_attention_refusals(case_id, feeds, inputs, attrs, message):
    case = _attention(case_id, feeds, inputs, **attrs)
    with pytest.raises(AotcError, match=message):
        compile_model(case.model, Options(name=case_id))


def test_multi_head_attention_packed_qkv_is_refused():
    case = _mha("packed", {"q": _rand(B, S, HEADS, 3, 4, seed=30)}, ["q"])
    with pytest.raises(AotcError, match="packed QKV or KV"):
        compile_model(case.model, Options(name="packed"))


@pytest.mark.full
def test_quantized_bert_the_users_path(tmp_path):
    """The quantized, fused BERT through aotc -> cmake --build (-Werror) -> aotc run, as a user runs it: its
    int64 inputs in, onnxruntime's answer out."""
    model = onnx.load(MODELS / "bert_tiny_qdyn_ort.onnx")
    feeds = bert_feeds(seed=3)
    meta, ours = compile_build_run(tmp_path, model, feeds, "bert_tiny_qdyn_ort",
                                   cmake_args=("-DAOTC_WARNINGS_AS_ERRORS=ON",))
    assert [i["name"] for i in meta["inputs"]] == ["input_ids", "attention_mask", "token_type_ids"]
    for out, ref in zip(model.graph.output, reference(model, feeds), strict=True):
        assert_close(ours[out.name], ref, f"bert_tiny_qdyn_ort {out.name}", relative=True)


@pytest.mark.full
def test_fused_bert_on_a_cortex_m55_board(tmp_path):
    """The fused float BERT (EmbedLayerNormalization's int32 gathers, the masked attention) built for the
    Corstone-300 board (Cortex-M55) and run under qemu-system-arm: onnxruntime's answer."""
    target = get_target("mps3-an547")
    require_tool(target.compiler, target.emulator[0])
    model = onnx.load(MODELS / "bert_tiny_ort.onnx")
    feeds = bert_feeds(seed=4)
    out = tmp_path / "out"
    aotc = [sys.executable, "-m", "aot.cli"]
    subprocess.run([*aotc, str(MODELS / "bert_tiny_ort.onnx"), "-o", str(out), "--target", "mps3-an547"], check=True)
    subprocess.run([cmake_exe(), "--build", str(out)], check=True, capture_output=True)
    np.savez(tmp_path / "in.npz", **feeds)
    subprocess.run([*aotc, "run", str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs",
                    str(tmp_path / "res.npz")], check=True)
    ours = np.load(tmp_path / "res.npz")
    for o, ref in zip(model.graph.output, reference(model, feeds), strict=True):
        assert_close(ours[o.name], ref, f"bert_tiny_ort on mps3-an547 {o.name}", relative=True)
