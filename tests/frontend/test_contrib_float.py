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


def test_fused_matmul_trans_batch_is_refused():
    case = _model("tb", [_node("FusedMatMul", ["a", "b"], ["y"], transBatchA=1)],
                  {"a": _rand(3, 2, 4), "b": _rand(3, 4, 5)}, ["y"])
    with pytest.raises(AotcError, match="FusedMatMul transBatchA=1 is not supported"):
        compile_model(case.model, Options(name="tb"))


def test_skip_layer_norm_read_mean_is_refused():
    case = _model("m", [_node("SkipLayerNormalization", ["x", "s", "g"], ["y", "mean"])],
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


def test_attention_mask_index_is_refused():
    case = _model("am", [_node("Attention", ["x", "w", "b", "m"], ["y"], num_heads=4)],
                  {"x": XA, "m": np.array([6, 4], np.int32)}, ["y"],
                  {"w": _rand(16, 48, seed=31), "b": _rand(48, seed=32)})
    with pytest.raises(AotcError, match="Attention's input mask_index is not supported"):
        compile_model(case.model, Options(name="am"))


def test_onnx_attention_is_not_taken_for_the_contrib_one():
    """ONNX's own Attention (opset 23: Q, K, V inputs) keeps its kernel, whatever com.microsoft's is."""
    q = _rand(1, 2, 4, 8, seed=36)
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"])
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, q.shape) for n in "qkv"]
    graph = helper.make_graph([node], "a", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    compile_model(model, Options(name="onnx_attention"))
