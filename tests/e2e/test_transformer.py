"""Transformer blocks as exporters write them (issue 15), against onnxruntime, error relative to each
output's own scale.

- LayerNorm and Gelu decomposed as torch's TorchScript exporter writes them (opset < 17) compile, match,
  and fuse back into one LayerNormalization / Gelu (aot/passes/fuse_norm.py); chains that must not fuse
  (an intermediate read elsewhere) still compile and match.
- The committed encoder block (tests/models/encoder_block.onnx, written by examples/transformers.py)
  through the path a user takes: aotc -> cmake --build -> aotc run.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from modelcheck import build_bundle, run_bundle
from onnx import TensorProto, helper, numpy_helper
from opcheck import Case, assert_close, model_case, shared_build

from aot.compiler import lower
from aot.passes import HOST_PIPELINE, simplify

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import transformers  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"
rng = np.random.default_rng(15)


def _f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _const(name: str, value: float) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, np.float32)))


def _case(case_id: str, nodes: list[onnx.NodeProto], x: np.ndarray, consts: dict[str, np.ndarray] | None = None,
          opset: int = 14, outputs: tuple[str, ...] = ("y",)) -> Case:
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                              [numpy_helper.from_array(v, k) for k, v in (consts or {}).items()])
    case = model_case(case_id, graph, {"x": x}, opset)
    case.relative = True
    return case


def torchscript_layer_norm(d: int, axes: tuple[int, ...] = (-1,), square: str = "Pow", weight: bool = True,
                           bias: bool = True, opset: int = 14, eps: float = 1e-5) -> tuple[list, dict]:
    """x -> y as torch.onnx.export (TorchScript) writes nn.LayerNorm below opset 17."""
    def reduce_mean(src: str, dst: str) -> list[onnx.NodeProto]:
        if opset >= 18:
            return [helper.make_node("ReduceMean", [src, "axes"], [dst], keepdims=1)]
        return [helper.make_node("ReduceMean", [src], [dst], axes=list(axes), keepdims=1)]

    consts: dict[str, np.ndarray] = {"axes": np.array(axes, np.int64)} if opset >= 18 else {}
    nodes = [*reduce_mean("x", "mean"), helper.make_node("Sub", ["x", "mean"], ["d"])]
    if square == "Pow":
        nodes += [_const("two", 2.0), helper.make_node("Pow", ["d", "two"], ["sq"])]
    else:
        nodes += [helper.make_node("Mul", ["d", "d"], ["sq"])]
    nodes += [*reduce_mean("sq", "var"), _const("eps", eps), helper.make_node("Add", ["var", "eps"], ["ve"]),
              helper.make_node("Sqrt", ["ve"], ["std"])]
    last = "y" if not weight else "n"
    nodes.append(helper.make_node("Div", ["d", "std"], [last]))
    if weight:
        consts["w"] = 1.0 + 0.1 * _f32(*d) if isinstance(d, tuple) else 1.0 + 0.1 * _f32(d)
        nodes.append(helper.make_node("Mul", ["n", "w"], ["y" if not bias else "nw"]))
        if bias:
            consts["b"] = 0.1 * _f32(*d) if isinstance(d, tuple) else 0.1 * _f32(d)
            nodes.append(helper.make_node("Add", ["nw", "b"], ["y"]))
    return nodes, consts


def torchscript_gelu(form: str = "torch") -> list[onnx.NodeProto]:
    """x -> y: erf Gelu decomposed. torch: Mul(Mul(x, 1 + erf(x / sqrt 2)), 0.5) (symbolic_opset9.gelu);
    half_first: Mul(Mul(x, 0.5), 1 + erf); half_of_sum: Mul(x, Mul(1 + erf, 0.5)); by a Mul with 1/sqrt 2."""
    scaled = ([_const("rsqrt2", 1 / math.sqrt(2)), helper.make_node("Mul", ["x", "rsqrt2"], ["s"])] if form == "mul"
              else [_const("sqrt2", math.sqrt(2)), helper.make_node("Div", ["x", "sqrt2"], ["s"])])
    nodes = [*scaled, helper.make_node("Erf", ["s"], ["e"]), _const("one", 1.0),
             helper.make_node("Add", ["e", "one"], ["e1"]), _const("half", 0.5)]
    if form == "half_first":
        return nodes + [helper.make_node("Mul", ["x", "half"], ["h"]), helper.make_node("Mul", ["h", "e1"], ["y"])]
    if form == "half_of_sum":
        return nodes + [helper.make_node("Mul", ["e1", "half"], ["h"]), helper.make_node("Mul", ["x", "h"], ["y"])]
    return nodes + [helper.make_node("Mul", ["x", "e1"], ["m"]), helper.make_node("Mul", ["m", "half"], ["y"])]


def tf2onnx_gelu_tanh(cube: str = "pow") -> list[onnx.NodeProto]:
    """x -> y: Keras' gelu(approximate=True) as tf2onnx writes it, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715
    x^3))), x^3 as Pow(x, 3) or (cube="mul") Mul(x, Mul(x, x))."""
    cubed = ([_const("three", 3.0), helper.make_node("Pow", ["x", "three"], ["x3"])] if cube == "pow"
             else [helper.make_node("Mul", ["x", "x"], ["x2"]), helper.make_node("Mul", ["x2", "x"], ["x3"])])
    return [*cubed, _const("c2", 0.044715), helper.make_node("Mul", ["c2", "x3"], ["m"]),
            helper.make_node("Add", ["x", "m"], ["w"]), _const("c1", math.sqrt(2 / math.pi)),
            helper.make_node("Mul", ["c1", "w"], ["u"]), helper.make_node("Tanh", ["u"], ["t"]), _const("one", 1.0),
            helper.make_node("Add", ["one", "t"], ["t1"]), _const("half", 0.5),
            helper.make_node("Mul", ["half", "x"], ["h"]), helper.make_node("Mul", ["h", "t1"], ["y"])]


def jax2tf_gelu_tanh() -> list[onnx.NodeProto]:
    """x -> y: GELU's tanh form as jax2tf writes it (Magika's file-type classifier): x (0.5 (1 + tanh(sqrt(2 / pi)
    (x + x (x (0.044715 x)))))), the constant inside the cube's Muls."""
    return [_const("c2", 0.044715), helper.make_node("Mul", ["c2", "x"], ["v0"]),
            helper.make_node("Mul", ["x", "v0"], ["v1"]), helper.make_node("Mul", ["x", "v1"], ["v2"]),
            helper.make_node("Add", ["x", "v2"], ["w"]), _const("c1", math.sqrt(2 / math.pi)),
            helper.make_node("Mul", ["c1", "w"], ["u"]), helper.make_node("Tanh", ["u"], ["t"]), _const("one", 1.0),
            helper.make_node("Add", ["one", "t"], ["t1"]), _const("half", 0.5),
            helper.make_node("Mul", ["half", "t1"], ["h"]), helper.make_node("Mul", ["x", "h"], ["y"])]


def _ln_case(case_id: str, x: np.ndarray, ops: set[str], **kw) -> tuple[Case, set[str]]:
    nodes, consts = torchscript_layer_norm(kw.pop("d", x.shape[-1]), **kw)
    return _case(case_id, nodes, x, consts, opset=kw.get("opset", 14)), ops


def _gelu_case(case_id: str, form: str, x: np.ndarray) -> tuple[Case, set[str]]:
    return _case(case_id, torchscript_gelu(form), x, opset=13), {"Gelu"}


# (case, the ops the host graph is left with)
CASES: list[tuple[Case, set[str]]] = [
    _ln_case("ts_layer_norm", _f32(2, 7, 32), {"LayerNormalization"}),
    _ln_case("ts_layer_norm_mul_square", _f32(3, 48), {"LayerNormalization"}, square="Mul"),
    _ln_case("ts_layer_norm_no_affine", _f32(2, 5, 16), {"LayerNormalization"}, weight=False),
    _ln_case("ts_layer_norm_weight_only", _f32(2, 5, 16), {"LayerNormalization"}, bias=False),
    _ln_case("ts_layer_norm_two_axes", _f32(2, 3, 4, 5), {"LayerNormalization"}, d=(4, 5), axes=(-2, -1)),
    _ln_case("ts_layer_norm_opset18_axes_input", _f32(4, 24), {"LayerNormalization"}, opset=18),
    _ln_case("ts_layer_norm_large_mean", _f32(2, 384) + np.float32(200.0), {"LayerNormalization"}, eps=1e-6),
    # over a leading axis: not LayerNormalization's trailing dims, so not fused (and still right)
    # (what stays elementwise on one shape is one loop: FuseElementwise; the square Pow(d, 2) is one too)
    _ln_case("ts_layer_norm_axis0_not_fused", _f32(6, 5),
             {"ReduceMean", "Sub", "Add", "FusedElementwise", "Div", "Mul"}, d=(6, 1), axes=(0,)),
    _gelu_case("ts_gelu", "torch", _f32(3, 5, 64) * np.float32(3.0)),
    _gelu_case("ts_gelu_half_first", "half_first", _f32(4, 40)),
    _gelu_case("ts_gelu_half_of_sum", "half_of_sum", _f32(4, 40)),
    _gelu_case("ts_gelu_mul_rsqrt2", "mul", _f32(4, 40)),
    (_case("tf2onnx_gelu_tanh", tf2onnx_gelu_tanh(), _f32(3, 5, 67) * np.float32(3.0), opset=13), {"Gelu"}),
    (_case("tf2onnx_gelu_tanh_mul_cube", tf2onnx_gelu_tanh("mul"), _f32(4, 40), opset=13), {"Gelu"}),
    (_case("jax2tf_gelu_tanh", jax2tf_gelu_tanh(), _f32(4, 40) * np.float32(3.0), opset=13), {"Gelu"}),
]
# the mean is also a graph output: the chain cannot disappear into one node
_nodes, _consts = torchscript_layer_norm(16)
CASES.append((_case("ts_layer_norm_mean_read", _nodes, _f32(3, 16), _consts, outputs=("y", "mean")),
              {"ReduceMean", "Sub", "Add", "FusedElementwise", "Div", "Mul"}))
# Gelu's x / sqrt 2 is read elsewhere too: not fused
CASES.append((_case("ts_gelu_intermediate_read", torchscript_gelu(), _f32(4, 10), outputs=("y", "s"), opset=13),
              {"Div", "Erf", "FusedElementwise"}))
BY_ID = {c.id: (c, ops) for c, ops in CASES}


@pytest.fixture(scope="module")
def built():
    return shared_build([c for c, _ in CASES])


@pytest.mark.parametrize("case_id", list(BY_ID))
def test_decomposed_forms_match_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id", list(BY_ID))
def test_decomposed_forms_fuse(case_id):
    case, ops = BY_ID[case_id]
    host = simplify(lower(case.model), HOST_PIPELINE)
    assert {n.op for n in host.nodes} == ops, [n.op for n in host.nodes]
    fused = [n for n in host.nodes if n.op in ("LayerNormalization", "Gelu")]
    for n in fused:  # the fused node names the ONNX nodes it stands for
        assert len(n.sources()) >= 5, n.sources()


# --- the committed encoder block ------------------------------------------------------------------

def test_committed_model_is_what_the_script_writes():
    committed = onnx.load(str(MODELS / "encoder_block.onnx"))
    assert committed.graph.SerializeToString() == transformers.encoder_block().graph.SerializeToString()


@pytest.mark.parametrize("style", ["dynamo", "torchscript"])
def test_both_export_styles_become_the_same_host_graph(style):
    host = simplify(lower(transformers.encoder_block(style)), HOST_PIPELINE)
    ops = sorted(n.op for n in host.nodes)
    assert ops.count("LayerNormalization") == 2 and ops.count("Gelu") == 1, ops
    assert len(host.nodes) == 29, ops  # the dynamo form's 29 nodes, the TorchScript form's 57 fused


def test_encoder_block_through_the_cli(tmp_path):
    model = onnx.load(str(MODELS / "encoder_block.onnx"))
    out = tmp_path / "out"
    meta = build_bundle(MODELS / "encoder_block.onnx", out)
    x = np.random.default_rng(0).standard_normal((1, 16, 64)).astype(np.float32)
    res = run_bundle(out, {"x": x})
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    (ref,) = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert_close(res["y"], ref, "encoder_block:y", 1e-4, relative=True)
    mem = meta["memory"]
    assert mem["arena_bytes"] <= 1.10 * mem["lower_bound_bytes"], mem
    assert 0 < mem["tight_bound_bytes"] <= mem["arena_bytes"], mem
