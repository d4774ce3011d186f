"""Checks shared by the int8 tests: onnxruntime as users run it, and integer tensors compared in LSB."""

from __future__ import annotations

import numpy as np
import onnx
from opcheck import Case

from aot.qmath import dequantize, quantize


def reference(case: Case) -> list[np.ndarray]:
    """onnxruntime with its default optimisations (QDQ groups fused to integer kernels), one thread."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(case.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, case.feeds)


def compare_integers(case: Case, ours: list[np.ndarray], refs: list[np.ndarray]) -> tuple[float, int]:
    """(share of integers identical, largest difference in LSB); float outputs must match closely."""
    equal = total = worst = 0
    for k, (o, r) in enumerate(zip(ours, refs, strict=True)):
        assert o.shape == r.shape and o.dtype == r.dtype, (case.id, k, o.shape, r.shape, o.dtype, r.dtype)
        if r.dtype.kind in "iu":
            diff = np.abs(o.astype(np.int64) - r.astype(np.int64))
            equal += int((diff == 0).sum())
            total += diff.size
            worst = max(worst, int(diff.max(initial=0)))
    return (equal / total if total else 1.0), worst


def output_lsb(model: onnx.ModelProto) -> list[float | None]:
    """Per graph output, the scale of the per-tensor DequantizeLinear that makes it (None if none)."""
    producers = {o: n for n in model.graph.node for o in n.output}
    consts = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    consts |= {n.output[0]: onnx.numpy_helper.to_array(n.attribute[0].t) for n in model.graph.node
               if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value"}
    scales: list[float | None] = []
    for out in model.graph.output:
        dq = producers.get(out.name)
        scale = consts.get(dq.input[1]) if dq is not None and dq.op_type == "DequantizeLinear" else None
        scales.append(float(scale) if scale is not None and scale.size == 1 else None)
    return scales


def float_reference(case: Case) -> bool:
    """Whether onnxruntime runs some quantized conv of the model in float (DequantizeLinear -> Conv ->
    QuantizeLinear). It leaves some QDQ convs with int8 activations unfused on x86, and every QDQ group
    whose tensors are graph outputs (expose_integers). Its float sums then round differently from exact
    integer sums at a few elements, by 1 LSB, which later layers can grow."""
    import tempfile

    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.optimized_model_filepath = f"{tmp}/optimized.onnx"
        so.log_severity_level = 3
        ort.InferenceSession(case.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return any(n.op_type in ("Conv", "Gemm", "MatMul") for n in onnx.load(so.optimized_model_filepath).graph.node)


def residual_block(residual_first: bool = False, hw: int = 10, channels: int = 8, seed: int = 3,
                   inner_relu: bool = True) -> onnx.ModelProto:
    """A float ResNet block for the fused conv + residual ADD (aot/passes/fuse_residual.py): x -> Conv 3 x 3
    -> Relu -> Conv 3 x 3 -> Add with x (x first where residual_first) -> Relu. A 10 x 10 plane is no whole
    number of 64-position patch blocks, so the plain path's last block re-reads positions of the one
    before (which the fused store must not write twice). Without inner_relu the fused conv's input has
    a zero point inside its range (after a Relu it is the type's least value)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits = []
    for k in (1, 2):
        w = rng.standard_normal((channels, channels, 3, 3)).astype(np.float32) * 0.3
        inits += [numpy_helper.from_array(w, f"w{k}"),
                  numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32) * 0.1, f"b{k}")]
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], **conv),
             helper.make_node("Relu" if inner_relu else "Identity", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], **conv),
             helper.make_node("Add", ["x", "c2"] if residual_first else ["c2", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    shape = [1, channels, hw, hw]
    g = helper.make_graph(nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


# --- --quantized-io: the model's boundary in integers ------------------------------------------------

def _boundary(model: onnx.ModelProto) -> tuple[dict[str, tuple[float, int, np.dtype]],
                                                 dict[str, tuple[float, int, np.dtype]]]:
    """(scale, zero point, integer dtype) of the QuantizeLinear reading each graph input, and of the
    DequantizeLinear making each graph output, as onnxruntime's quantizer wrote them."""
    consts = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    inputs = {i.name for i in model.graph.input}
    producers = {o: n for n in model.graph.node for o in n.output}

    def params(n: onnx.NodeProto) -> tuple[float, int, np.dtype]:
        zp = consts[n.input[2]]
        return float(consts[n.input[1]]), int(zp), zp.dtype

    ins = {n.input[0]: params(n) for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] in inputs}
    outs = {o.name: params(producers[o.name]) for o in model.graph.output
            if producers[o.name].op_type == "DequantizeLinear"}
    return ins, outs


def _quantize(x: np.ndarray, scale: float, zp: int, dt: np.dtype) -> np.ndarray:
    return quantize(x, scale, zp, np.dtype(dt).name)


def quantized_feeds(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Float feeds as the integers the model's own input QuantizeLinear makes of them."""
    params = _boundary(model)[0]
    return {k: _quantize(x, *params[k]) for k, x in feeds.items()}


def integer_reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's integers before each output's DequantizeLinear, the model run as users run it
    (nothing exposed: exposing the last Q's output changes what onnxruntime fuses) on the dequantized
    integer `feeds`: its QuantizeLinear gives those back exactly, and its float outputs, DQ's
    scale * (q - zero point), quantize back exactly to q."""
    import onnxruntime as ort

    ins, outs = _boundary(model)
    floats = {k: dequantize(x, np.float32(ins[k][0]), np.int64(ins[k][1]), 0) for k, x in feeds.items()}
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in model.graph.output]
    return [_quantize(y, *outs[n]) if n in outs else y for n, y in zip(names, sess.run(names, floats), strict=True)]
