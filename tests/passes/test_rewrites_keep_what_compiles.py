"""No rewrite of aotc's refuses what the model it rewrites compiles (issue 69): a pass that fuses ops into one
(the QDQ pass's QGemm, QLinearConv, QLinearAdd, ...) must fuse only where the fused op's kernel takes the shapes.

Each small float graph below compiles; quantized by onnxruntime's quantize_static (as users quantize) in both
formats, it must compile too, or be refused only at an op the quantized model itself holds. A refusal of an op
the model does not hold is a pass that made a node no kernel takes. The graphs are the shapes such rewrites
meet in exported models: matrix products of 2 to 4 dims (a transformer's [batch, tokens, features] MatMul),
Gemm, 1-D and 2-D convolutions, broadcast arithmetic, Softmax on the last axis, pooling and concatenation."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import tiered
from onnx import TensorProto, helper, numpy_helper

from aot.compiler import Options, compile_model
from aot.unsupported import UnsupportedNodes

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from quantize import FORMATS, quantized  # noqa: E402

RNG = np.random.default_rng(69)


def _model(name: str, nodes: list[onnx.NodeProto], inputs: dict[str, list[int]], weights: dict[str, np.ndarray],
           output: str = "y") -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in inputs.items()],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model)


def _w(*shape: int) -> np.ndarray:
    return RNG.normal(0, 0.3, shape)


def _matmul(rank: int, bias: bool = True) -> onnx.ModelProto:
    """x [.., 4, 8] @ W [8, 6] (+ b, then Relu): a dense layer on a rank-`rank` input."""
    shape = [2, 3, 4, 8][4 - rank:]
    if not bias:
        return _model(f"matmul_{rank}d_alone", [helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": shape},
                      {"w": _w(8, 6)})
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    return _model(f"matmul_{rank}d", nodes, {"x": shape}, {"w": _w(8, 6), "b": _w(6)})


def _batched_matmul() -> onnx.ModelProto:
    """Attention's scores: two activations multiplied, [2, 4, 8] @ [2, 8, 4]."""
    nodes = [helper.make_node("MatMul", ["q", "k"], ["y"])]
    return _model("batched_matmul", nodes, {"q": [2, 4, 8], "k": [2, 8, 4]}, {})


def _gemm(trans_b: int) -> onnx.ModelProto:
    w = _w(6, 8) if trans_b else _w(8, 6)
    return _model(f"gemm_tb{trans_b}", [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=trans_b)],
                  {"x": [3, 8]}, {"w": w, "b": _w(6)})


def _conv(dims: int) -> onnx.ModelProto:
    x = [1, 4] + [9] * dims
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1] * 2 * dims),
             helper.make_node("Relu", ["c"], ["y"])]
    return _model(f"conv_{dims}d", nodes, {"x": x}, {"w": _w(6, 4, *[3] * dims), "b": _w(6)})


def _broadcast(op: str) -> onnx.ModelProto:
    nodes = [helper.make_node(op, ["x", "z"], ["y"])]
    return _model(f"{op.lower()}_broadcast", nodes, {"x": [2, 3, 4, 5], "z": [3, 1, 5]}, {})


def _softmax() -> onnx.ModelProto:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Softmax", ["m"], ["y"], axis=-1)]
    return _model("softmax", nodes, {"x": [2, 4, 8]}, {"w": _w(8, 6)})


def _pool_concat() -> onnx.ModelProto:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("AveragePool", ["c"], ["q"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Concat", ["p", "q"], ["y"], axis=1)]
    return _model("pool_concat", nodes, {"x": [1, 3, 8, 8]}, {"w": _w(4, 3, 3, 3)})


GRAPHS = {
    "matmul_2d": lambda: _matmul(2), "matmul_3d": lambda: _matmul(3), "matmul_4d": lambda: _matmul(4),
    "matmul_3d_alone": lambda: _matmul(3, bias=False),
    "batched_matmul": _batched_matmul, "gemm": lambda: _gemm(0), "gemm_transb": lambda: _gemm(1),
    "conv_1d": lambda: _conv(1), "conv_2d": lambda: _conv(2), "add_broadcast": lambda: _broadcast("Add"),
    "mul_broadcast": lambda: _broadcast("Mul"), "softmax": _softmax, "pool_concat": _pool_concat,
}


def _refused_ops(model: onnx.ModelProto) -> dict[str, str]:
    """The ops compiling `model` refuses, each with its first reason (none: it compiles)."""
    try:
        compile_model(model, Options(name="m"))
    except UnsupportedNodes as e:
        return {n.op: reason or "" for n, reason in reversed(e.refused)}
    return {}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", tiered(GRAPHS, {"matmul_3d_alone", "softmax"}))
def test_quantizing_a_graph_that_compiles_keeps_it_compiling(name, fmt):
    model = GRAPHS[name]()
    assert _refused_ops(model) == {}, f"the float graph {name} itself does not compile"
    q = quantized(model, fmt, activations="int8" if fmt == "QDQ" else "uint8")
    held = {n.op_type for n in q.graph.node}
    made = {op: why for op, why in _refused_ops(q).items() if op not in held}
    assert not made, f"{name} ({fmt}): a rewrite made nodes no kernel takes: {made}"
