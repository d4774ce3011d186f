"""ONNX QDQ convs in a bundle built as on an x86-64 machine without AVX-512 (`--host-isa generic`, -march=x86-64-v3:
quant_impl.h's AOTC_QUANT_AVX2 paths), against onnxruntime. The planner gives such convs the whole weights widened
once a call where the step spares them (aot/kernels/quant.py avx2_patches_work, aotc_qconv_avx2_work_bytes); these
layers cover groups, strides, pads, 5 x 5 taps, a pointwise conv, channel counts that leave a block of 4 channels
short, and a plane of one block (no such work)."""

from __future__ import annotations

import platform
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import require_tool
from modelcheck import build_bundle, run_bundle
from onnx import TensorProto, helper, numpy_helper

from aot.targets import host_cpu_flags

# name: input channels, output channels, kernel, stride, pad, group, input height and width
LAYERS = {
    "odd": (6, 10, 3, 1, 1, 1, (17, 19)),       # 10 channels: a block of 4 short; 323 positions
    "grouped": (8, 12, 3, 2, 1, 2, (29, 27)),   # 2 groups of 6 channels, stride 2: 15 x 14
    "wide": (5, 7, 5, 1, 2, 1, (15, 15)),       # 5 x 5 taps, 7 channels
    "pointwise": (24, 20, 1, 1, 0, 1, (16, 16)),
    "small": (16, 9, 3, 1, 1, 1, (7, 7)),       # one block of positions: no widened weights
}


def qdq_convs() -> onnx.ModelProto:
    """Each layer of LAYERS on its own input, as onnxruntime's quantizer writes a conv: uint8 activations, int8
    weights with per-channel scales, an int32 bias; the quantized output a graph output."""
    rng = np.random.default_rng(64)
    inits, nodes, inputs, outputs = [], [], [], []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    const("xs", np.float32(0.02)), const("xz", np.uint8(120))
    for name, (cin, cout, k, stride, pad, group, hw) in LAYERS.items():
        taps = cin // group * k * k
        w = rng.integers(-127, 128, (cout, cin // group, k, k), dtype=np.int8)
        ws = (rng.uniform(0.5, 1.5, cout) * 0.01).astype(np.float32)
        b = rng.integers(-3000, 3000, cout).astype(np.int32)
        nodes += [helper.make_node("QuantizeLinear", [f"{name}_x", "xs", "xz"], [f"{name}_xq"]),
                  helper.make_node("DequantizeLinear", [f"{name}_xq", "xs", "xz"], [f"{name}_xd"]),
                  helper.make_node("DequantizeLinear", [const(f"{name}_w", w), const(f"{name}_ws", ws),
                                                        const(f"{name}_wz", np.zeros(cout, np.int8))],
                                   [f"{name}_wd"], axis=0),
                  helper.make_node("DequantizeLinear", [const(f"{name}_b", b), const(f"{name}_bs", ws * 0.02),
                                                        const(f"{name}_bzs", np.zeros(cout, np.int32))],
                                   [f"{name}_bd"], axis=0),
                  helper.make_node("Conv", [f"{name}_xd", f"{name}_wd", f"{name}_bd"], [f"{name}_c"],
                                   kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group),
                  helper.make_node("QuantizeLinear", [f"{name}_c", const(f"{name}_ys", np.float32(
                      0.02 * 0.01 * 150 * np.sqrt(taps))), "xz"], [name])]
        inputs.append(helper.make_tensor_value_info(f"{name}_x", TensorProto.FLOAT, [1, cin, *hw]))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.UINT8, None))
    graph = helper.make_graph(nodes, "qdq_convs_avx2", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.full
def test_qdq_convs_at_avx2_match_onnxruntime(tmp_path: Path):
    """Every layer's outputs exactly onnxruntime's (its QLinearConv, integer sums and the same requantisation), and
    the convs of more than two blocks of positions planned with the widened weights (`.work`), the small one
    without."""
    import onnxruntime as ort

    require_tool("cmake", "gcc")
    if platform.machine() != "x86_64" or "avx2" not in host_cpu_flags():
        pytest.skip("an x86-64 host with AVX2")
    model = qdq_convs()
    onnx.save(model, tmp_path / "convs.onnx")
    rng = np.random.default_rng(1)
    feeds = {i.name: (rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]) * 1.5)
             .astype(np.float32) for i in model.graph.input}
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    refs = dict(zip([o.name for o in model.graph.output], ort.InferenceSession(
        model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds), strict=True))
    out = tmp_path / "out"
    # (a scratch floor: every step has the room, where the tight arena spares it at some steps only)
    build_bundle(tmp_path / "convs.onnx", out, "--host-isa", "generic", "--scratch-floor", 65536,
                 cmake_args=("-DAOTC_NATIVE=OFF", "-DCMAKE_C_FLAGS=-march=x86-64-v3"))
    ours = run_bundle(out, feeds)
    for name, ref in refs.items():
        assert np.mean((ref > 0) & (ref < 255)) > 0.9, name  # (outputs across the range, few saturated)
        np.testing.assert_array_equal(ours[name], ref, err_msg=name)
    source = next((out / "bundle" / "src").glob("*.c")).read_text()
    blocks = source.split("/* QLinearConv [1, ")[1:]  # each conv's parameters, from its comment on
    given = {int(b.split(",")[0]) for b in blocks if re.search(r"^\s*\.work = \d+,", b.split("};")[0], re.M)}
    assert given == {cin for name, (cin, *_) in LAYERS.items() if name != "small"}, given


def test_no_widened_weights_planned_off_the_host(tmp_path: Path):
    """The widened weights are the AVX2 path's alone: a bundle for another machine (an Arm or RISC-V Linux board,
    whose build has no such path) plans no `.work` for them, as before the path had it."""
    from aot.compiler import Options, compile_file

    onnx.save(qdq_convs(), tmp_path / "convs.onnx")
    for target in ("aarch64-linux", "riscv64-linux"):
        source = next(v for k, v in compile_file(tmp_path / "convs.onnx", Options(
            name="convs", target=target, scratch_floor=65536)).files.items() if k.startswith("src/") and k.endswith(
            ".c"))
        assert not re.search(r"^\s*\.work = [1-9]", source, re.M), target
