"""The float com.microsoft ops onnxruntime's transformer optimizer writes (issue 51): each compiled by
its rewrite onto ONNX ops (aot/frontend/onnx/canonical/contrib.py) and compared with onnxruntime's own
kernels; and the BERT-like models the optimizer itself wrote (examples/optimize_transformers.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from opcheck import Case, shared_build, tensor_type

from aot.compiler import Options, compile_model
from aot.errors import AotcError

MODELS = Path(__file__).resolve().parents[1] / "models"
MS = "com.microsoft"


def _model(case_id: str, nodes: list, inputs: dict[str, np.ndarray], outputs: list[str],
           consts: dict[str, np.ndarray] | None = None, opset: int = 17) -> Case:
    graph = helper.make_graph(
        nodes, case_id,
        [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [onnx.numpy_helper.from_array(v, k) for k, v in (consts or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return Case(case_id, model, inputs)


def _rand(*shape: int, seed: int = 0, scale: float = 2.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _node(op: str, ins: list[str], outs: list[str], **attrs) -> onnx.NodeProto:
    return helper.make_node(op, ins, outs, name=f"{op.lower()}_node", domain=MS, **attrs)


def _expected(case: Case, outputs: list[np.ndarray]) -> Case:
    case.expected = outputs
    return case


X = _rand(2, 5, 8)
BIAS = _rand(8, seed=1)
SKIP = _rand(2, 5, 8, seed=2)
CASES = [
    _model("gelu", [_node("Gelu", ["x"], ["y"])], {"x": X}, ["y"]),
    _model("fast_gelu", [_node("FastGelu", ["x"], ["y"])], {"x": X}, ["y"]),
    _model("fast_gelu_bias", [_node("FastGelu", ["x", "b"], ["y"])], {"x": X}, ["y"], {"b": BIAS}),
    _model("bias_gelu", [_node("BiasGelu", ["x", "b"], ["y"])], {"x": X}, ["y"], {"b": BIAS}),
    _model("quick_gelu", [_node("QuickGelu", ["x"], ["y"])], {"x": X}, ["y"]),
    _model("quick_gelu_alpha", [_node("QuickGelu", ["x"], ["y"], alpha=0.5)], {"x": X}, ["y"]),
    # onnxruntime's BiasAdd has a CUDA kernel only: the reference is its definition, (X + bias) + skip
    _expected(_model("bias_add", [_node("BiasAdd", ["x", "b", "s"], ["y"])], {"x": X, "s": SKIP}, ["y"], {"b": BIAS}),
              [(X + BIAS) + SKIP]),
    _model("fused_matmul", [_node("FusedMatMul", ["a", "b"], ["y"])], {"a": X, "b": _rand(8, 3, seed=3)}, ["y"]),
    _model("fused_matmul_trans_alpha", [_node("FusedMatMul", ["a", "b"], ["y"], transA=1, transB=1, alpha=0.125)],
           {"a": _rand(2, 8, 5, seed=4), "b": _rand(2, 3, 8, seed=5)}, ["y"]),
    _model("fused_matmul_batch_bcast", [_node("FusedMatMul", ["a", "b"], ["y"], transB=1, alpha=2.0)],
           {"a": _rand(2, 1, 4, 6, seed=6), "b": _rand(3, 5, 6, seed=7)}, ["y"]),
    _model("skip_ln", [_node("SkipLayerNormalization", ["x", "s", "g", "be"], ["y"], epsilon=1e-5)],
           {"x": X, "s": _rand(2, 5, 8, seed=8)}, ["y"], {"g": _rand(8, seed=9), "be": _rand(8, seed=10)}),
    _model("skip_ln_bias_sum", [_node("SkipLayerNormalization", ["x", "s", "g", "be", "b"], ["y", "", "", "sum"])],
           {"x": X, "s": _rand(2, 5, 8, seed=8)}, ["y", "sum"],
           {"g": _rand(8, seed=9), "be": _rand(8, seed=10), "b": BIAS}),
    _model("skip_ln_skip_broadcast", [_node("SkipLayerNormalization", ["x", "s", "g", "be"], ["y"])],
           {"x": X, "s": _rand(5, 8, seed=13)}, ["y"], {"g": _rand(8, seed=9), "be": _rand(8, seed=10)}),
    _model("skip_ln_no_beta", [_node("SkipLayerNormalization", ["x", "s", "g"], ["y"])],
           {"x": X, "s": _rand(2, 5, 8, seed=8)}, ["y"], {"g": _rand(8, seed=9)}),
    # onnxruntime registers SimplifiedLayerNormalization in the ONNX domain, where its optimizer writes it
    _model("simplified_ln", [helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y"], epsilon=1e-6)],
           {"x": X}, ["y"], {"g": _rand(8, seed=14)}),
    _model("simplified_ln_axis1", [helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y"], axis=1)],
           {"x": X}, ["y"], {"g": _rand(5, 8, seed=15)}),
    _model("skip_simplified_ln", [_node("SkipSimplifiedLayerNormalization", ["x", "s", "g"], ["y"], epsilon=1e-6)],
           {"x": X, "s": _rand(2, 5, 8, seed=8)}, ["y"], {"g": _rand(8, seed=9)}),
    _model("skip_simplified_ln_bias_sum",
           [_node("SkipSimplifiedLayerNormalization", ["x", "s", "g", "b"], ["y", "", "", "sum"])],
           {"x": X, "s": _rand(5, 8, seed=16)}, ["y", "sum"], {"g": _rand(8, seed=9), "b": BIAS}),
    # the moments onnxruntime's kernel gives as extra outputs (training's; read here)
    _model("skip_ln_mean_inv_std", [_node("SkipLayerNormalization", ["x", "s", "g", "be", "b"],
                                          ["y", "mean", "inv_std", "sum"], epsilon=1e-5)],
           {"x": X, "s": _rand(2, 5, 8, seed=8)}, ["y", "mean", "inv_std", "sum"],
           {"g": _rand(8, seed=9), "be": _rand(8, seed=10), "b": BIAS}),
    _model("skip_simplified_ln_inv_std", [_node("SkipSimplifiedLayerNormalization", ["x", "s", "g"],
                                                ["y", "", "inv_std"], epsilon=1e-6)],
           {"x": X, "s": _rand(2, 5, 8, seed=8)}, ["y", "inv_std"], {"g": _rand(8, seed=9)}),
    _model("skip_ln_then_gelu", [_node("SkipLayerNormalization", ["x", "s", "g", "", "b"], ["n", "", "", "sum"]),
                                 _node("BiasGelu", ["n", "b"], ["h"]),
                                 helper.make_node("Add", ["h", "sum"], ["y"])],
           {"x": X, "s": _rand(2, 5, 8, seed=8)}, ["y"], {"g": _rand(8, seed=9), "b": BIAS}),
]


def _int(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)


W8 = _int((8, 6), "int8", 20)
CASES += [
    _model("dq_matmul", [_node("DynamicQuantizeMatMul", ["a", "w", "ws"], ["y"])], {"a": X}, ["y"],
           {"w": W8, "ws": np.float32(0.02)}),
    _model("dq_matmul_zero_bias_per_column",
           [_node("DynamicQuantizeMatMul", ["a", "w", "ws", "wz", "b"], ["y"])], {"a": _rand(3, 8, seed=21)}, ["y"],
           {"w": W8, "ws": np.linspace(0.01, 0.03, 6, dtype=np.float32), "wz": _int((6,), "int8", 22),
            "b": _rand(6, seed=23)}),
    _model("dq_matmul_positive_a", [_node("DynamicQuantizeMatMul", ["a", "w", "ws", "", "b"], ["y"])],
           {"a": np.abs(X) + 0.5}, ["y"], {"w": W8, "ws": np.float32(0.05), "b": _rand(6, seed=24)}),
    _model("matmul_int_to_float",
           [_node("MatMulIntegerToFloat", ["a", "w", "as", "ws", "az", "wz", "b"], ["y"])],
           {"a": _int((2, 4, 8), "uint8", 25)}, ["y"], {"w": W8, "as": np.float32(0.03),
                       "ws": np.linspace(0.01, 0.03, 6, dtype=np.float32), "az": np.uint8(131),
                       "wz": _int((6,), "int8", 26), "b": _rand(6, seed=27)}),
]
# the int8 A of MatMulIntegerToFloat read at run time: quantized by a DynamicQuantizeLinear before it
CASES.append(_model("dql_then_matmul_int_to_float",
                    [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
                     _node("MatMulIntegerToFloat", ["xq", "w", "xs", "ws", "xz"], ["y"])],
                    {"x": X}, ["y"], {"w": W8.astype(np.uint8), "ws": np.float32(0.01)}))

# Attention: input [B, S, H_in], packed QKV weights and bias
XA = _rand(2, 6, 16, seed=30, scale=1.0)
CASES += [
    _model("attention", [_node("Attention", ["x", "w", "b"], ["y"], num_heads=4)], {"x": XA}, ["y"],
           {"w": _rand(16, 48, seed=31, scale=0.3), "b": _rand(48, seed=32, scale=0.3)}),
    _model("attention_causal_scale_no_bias",
           [_node("Attention", ["x", "w"], ["y"], num_heads=2, unidirectional=1, scale=0.3)], {"x": XA}, ["y"],
           {"w": _rand(16, 48, seed=33, scale=0.3)}),
    _model("attention_qkv_sizes", [_node("Attention", ["x", "w", "b"], ["y"], num_heads=2,
                                         qkv_hidden_sizes=[8, 8, 12])], {"x": XA}, ["y"],
           {"w": _rand(16, 28, seed=34, scale=0.3), "b": _rand(28, seed=35, scale=0.3)}),
]



def _qlstm(case_id: str, seq: int, batch: int, inp: int, hid: int, direction: str = "forward",
           weights: str = "int8", per_unit: bool = False, bias: bool = True, states: bool = False,
           peephole: bool = False, **attrs) -> Case:
    """One DynamicQuantizeLSTM as quantize_dynamic writes it: W [dirs, input, 4 hidden], R [dirs, hidden,
    4 hidden] quantized from float weights (int8 symmetric, or uint8 with a zero point), a scale per
    direction or per gate unit."""
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(40 + seq + hid)
    consts: dict[str, np.ndarray] = {}
    for name, rows in (("w", inp), ("r", hid)):
        f = rng.standard_normal((dirs, rows, 4 * hid)).astype(np.float32) * 0.4
        lo, hi = (f.min(axis=1), f.max(axis=1)) if per_unit else (f.min(axis=(1, 2)), f.max(axis=(1, 2)))
        if weights == "int8":
            scale = (np.maximum(np.abs(lo), np.abs(hi)) / 127).astype(np.float32)
            zero = np.zeros(scale.shape, np.int8)
        else:  # one zero point a direction (onnxruntime's kernel reads only the first)
            scale = ((hi - lo) / 255).astype(np.float32)
            zero = np.broadcast_to(np.round(-lo.min(axis=-1, keepdims=True) / scale.max(axis=-1, keepdims=True)),
                                   scale.shape).astype(np.uint8)
        s = scale[:, None, :] if per_unit else scale[:, None, None]
        z = zero[:, None, :] if per_unit else zero[:, None, None]
        q = np.clip(np.round(f / s) + z.astype(np.int32), *((-127, 127) if weights == "int8" else (0, 255)))
        consts |= {name: q.astype(weights), f"{name}_scale": scale, f"{name}_zero": zero}
    names = ["x", "w", "r", "b" if bias else "", "", "h0" if states else "", "c0" if states else "",
             "p" if peephole else "", "w_scale", "w_zero", "r_scale", "r_zero"]
    if bias:
        consts["b"] = rng.standard_normal((dirs, 8 * hid)).astype(np.float32) * 0.3
    if peephole:
        consts["p"] = rng.standard_normal((dirs, 3 * hid)).astype(np.float32) * 0.3
    feeds = {"x": rng.standard_normal((seq, batch, inp)).astype(np.float32)}
    if states:
        feeds |= {"h0": rng.standard_normal((dirs, batch, hid)).astype(np.float32) * 0.5,
                  "c0": rng.standard_normal((dirs, batch, hid)).astype(np.float32)}
    node = _node("DynamicQuantizeLSTM", names, ["y", "y_h", "y_c"], hidden_size=hid, direction=direction, **attrs)
    return _model(case_id, [node], feeds, ["y", "y_h", "y_c"], consts)


# quantize_dynamic's LSTM (examples/quantize_recurrent.py over the torch-exported keyword spotters), and
# single DynamicQuantizeLSTMs of each form; onnxruntime's float tolerance: 1e-5 of the outputs' scale
QLSTM = [
    _qlstm("qlstm", 7, 1, 10, 16),
    _qlstm("qlstm_batch_per_unit_states", 5, 3, 6, 8, per_unit=True, states=True),
    _qlstm("qlstm_reverse_uint8", 6, 2, 5, 12, direction="reverse", weights="uint8"),
    _qlstm("qlstm_bidirectional_peephole", 4, 2, 8, 8, direction="bidirectional", per_unit=True, states=True,
           peephole=True),
    _qlstm("qlstm_no_bias_clip_input_forget", 6, 1, 4, 8, bias=False, clip=0.8, input_forget=1),
    _qlstm("qlstm_activations", 5, 2, 4, 8, activations=["HardSigmoid", "Tanh", "Softsign"],
           activation_alpha=[0.25], activation_beta=[0.4]),
    # longer than a chunk of steps whose X W are one product (aot/kernels/recurrent.py's Q8_CHUNK): whole chunks
    # and a last partial one, forward, reverse and both ways
    _qlstm("qlstm_chunks_reverse", 37, 2, 9, 16, direction="reverse"),
    _qlstm("qlstm_chunks_bidirectional", 35, 1, 20, 8, direction="bidirectional", states=True),
    _qlstm("qlstm_chunks_forward_uint8", 33, 3, 6, 12, weights="uint8", per_unit=True),
]
for _name in ("kws_lstm_qdyn", "kws_lstm_stream_qdyn"):
    _m = onnx.load(MODELS / f"{_name}.onnx")
    _feeds = {i.name: _rand(*[d.dim_value for d in i.type.tensor_type.shape.dim], seed=41, scale=1.0)
              for i in _m.graph.input}
    QLSTM.append(Case(_name, _m, _feeds))
for _case in QLSTM:
    _case.atol_scale, _case.relative = 1e-5, True
CASES += QLSTM

# onnxruntime's transformer optimizer on the encoder block (examples/optimize_transformers.py)
for _name in ("encoder_block_ort", "encoder_block_ort_fastgelu", "encoder_block_qdyn_ort"):
    CASES.append(Case(_name, onnx.load(MODELS / f"{_name}.onnx"), {"x": _rand(1, 16, 64, seed=11, scale=1.0)},
                      relative=True))
CASES.append(Case("vit_tiny_ts_ort", onnx.load(MODELS / "vit_tiny_ts_ort.onnx"),
                  {"image": _rand(1, 3, 32, 32, seed=12, scale=1.0)}, relative=True))


def test_optimized_models_hold_the_contrib_ops():
    """The committed models are what the optimizer writes: its fused ops, not the spelled-out ones."""
    ops = {name: {n.op_type for n in onnx.load(MODELS / f"{name}.onnx").graph.node if n.domain == MS}
           for name in ("encoder_block_ort", "encoder_block_ort_fastgelu", "encoder_block_qdyn_ort", "vit_tiny_ts_ort")}
    assert ops == {"encoder_block_ort": {"SkipLayerNormalization", "BiasGelu"},
                   "encoder_block_ort_fastgelu": {"SkipLayerNormalization", "FastGelu"},
                   "encoder_block_qdyn_ort": {"DynamicQuantizeMatMul", "MatMulIntegerToFloat", "FusedMatMul"},
                   "vit_tiny_ts_ort": {"SkipLayerNormalization", "BiasGelu"}}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("contrib_float"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_contrib_float_op(results, case_id):
    results.check(case_id)


@pytest.fixture(scope="module")
def results_native(tmp_path_factory):
    return shared_build(QLSTM, tmp_path_factory.mktemp("contrib_float_native"), extra_flags=("-march=native",))


@pytest.mark.full
@pytest.mark.parametrize("case_id", [c.id for c in QLSTM])
def test_dynamic_quantize_lstm_native(results_native, case_id):
    """The quantized LSTM built as a host bundle is (-march=native): on a CPU with AVX-512 VNNI its products by
    VPDPBUSD (recurrent.c's panel_sums), pairs of quads and the tails of inputs and hidden sizes not a multiple
    of 4 or of a panel; the build above runs the plain C."""
    results_native.check(case_id)


def test_quantize_dynamic_writes_dynamic_quantize_lstm():
    """The committed models are what quantize_dynamic writes: the LSTM as DynamicQuantizeLSTM, int8 W and R."""
    for name in ("kws_lstm_qdyn", "kws_lstm_stream_qdyn"):
        model = onnx.load(MODELS / f"{name}.onnx")
        node = next(n for n in model.graph.node if n.op_type == "DynamicQuantizeLSTM")
        inits = {i.name: i for i in model.graph.initializer}
        assert node.domain == MS and "LSTM" not in {n.op_type for n in model.graph.node}
        assert inits[node.input[1]].data_type == inits[node.input[2]].data_type == TensorProto.INT8


@pytest.mark.parametrize("edit, message", [
    (lambda n: n.input.__setitem__(4, "lens"), "input sequence_lens is not supported"),
    (lambda n: n.input.__setitem__(9, "w_zero_mixed"), "W_zero_point differs within a direction"),
    (lambda n: n.input.__setitem__(10, "x"), "R_scale and R_zero_point must be constants"),
])
def test_dynamic_quantize_lstm_refusals(edit, message):
    case = _qlstm("qlstm_refused", 3, 2, 4, 4, weights="uint8", per_unit=True)
    graph = case.model.graph
    graph.initializer.extend([onnx.numpy_helper.from_array(np.array([3, 3], np.int32), "lens"),
                              onnx.numpy_helper.from_array(np.arange(16, dtype=np.uint8)[None], "w_zero_mixed")])
    edit(graph.node[0])
    with pytest.raises(AotcError, match=message):
        compile_model(case.model, Options(name="qlstm_refused"))


def test_fused_matmul_trans_batch_is_refused():
    case = _model("tb", [_node("FusedMatMul", ["a", "b"], ["y"], transBatchA=1)],
                  {"a": _rand(3, 2, 4), "b": _rand(3, 4, 5)}, ["y"])
    with pytest.raises(AotcError, match="FusedMatMul transBatchA=1 is not supported"):
        compile_model(case.model, Options(name="tb"))


def test_skip_simplified_layer_norm_read_mean_is_refused():
    case = _model("m", [_node("SkipSimplifiedLayerNormalization", ["x", "s", "g"], ["y", "mean"])],
                  {"x": X, "s": X}, ["y", "mean"], {"g": BIAS})
    with pytest.raises(AotcError, match="output mean is not supported"):
        compile_model(case.model, Options(name="m"))


@pytest.mark.parametrize("op, ins, consts", [
    ("SkipLayerNormalization", ["x", "s"], {}),  # no gamma
    ("BiasAdd", ["x", "b"], {"b": BIAS}),  # no skip
    ("DynamicQuantizeMatMul", ["x", "w"], {"w": W8}),  # no b_scale
])
def test_missing_required_input_is_refused(op, ins, consts):
    feeds = {k: X for k in ins if k not in consts}
    case = _model("missing", [_node(op, ins, ["y"])], feeds, ["y"], consts)
    with pytest.raises(AotcError, match=f"{op} needs its first"):
        compile_model(case.model, Options(name="missing"))


def test_onnx_attention_is_not_taken_for_the_contrib_one():
    """ONNX's own Attention (opset 23: Q, K, V inputs) keeps its kernel, whatever com.microsoft's is."""
    q = _rand(1, 2, 4, 8, seed=36)
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"])
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, q.shape) for n in "qkv"]
    graph = helper.make_graph([node], "a", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    compile_model(model, Options(name="onnx_attention"))


def test_simplified_layer_norm_file_passes_the_checker(tmp_path):
    """A file with onnxruntime's ONNX-domain SimplifiedLayerNormalization is read (onnx's checker knows no
    such ONNX op: it was 'malformed'), and the model read keeps the node in its own domain."""
    from aot.frontend.onnx.load import load_model

    node = helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y"])
    graph = helper.make_graph([node], "sln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, X.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, X.shape)],
                              [onnx.numpy_helper.from_array(_rand(8, seed=14), "g")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "sln.onnx")
    model = load_model(tmp_path / "sln.onnx")
    assert [(n.op_type, n.domain) for n in model.graph.node] == [("SimplifiedLayerNormalization", "")]
    compile_model(model, Options(name="sln"))
