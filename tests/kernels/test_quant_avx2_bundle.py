"""ONNX QDQ convs in a bundle built as on an x86-64 machine without AVX-512 (`--host-isa generic`, -march=x86-64-v3:
quant_impl.h's AOTC_QUANT_AVX2 paths), against onnxruntime. The planner gives such convs the weights for vpmaddubsw
(qconv_patches_ubs: clipped at compile time by aot/kernels/quant_ubs.py, the rest added by a list of quads); these
layers cover groups, strides, pads, 5 x 5 taps, a pointwise conv, channel counts that leave a block of 4 channels
short, a plane of one block, an odd number of weight quads, int8 activations, and weights made to hit every case of
the clipping: pairs of one sign summing 129 to 256 (-128 among them), and lanes of 4 past 128 on either side. The
depthwise convs of DEPTHWISE take each of the AVX2 depthwise paths."""

from __future__ import annotations

import json
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
    "small": (16, 9, 3, 1, 1, 1, (7, 7)),       # one block of positions
    "clipped": (3, 64, 3, 2, 1, 1, (21, 23)),   # 27 taps: 7 quads (odd); weights made to clip (clipping_weights)
    "clipped_i8": (6, 36, 3, 1, 1, 2, (12, 13)),  # the same with int8 activations (x + 128 in the patches), 2 groups
}
# depthwise convs (groups = channels), each path of quant_impl.h's AVX2 depthwise: 16 channels in the lanes on small
# planes (qconv_depthwise_avx2_cl: 3 x 3 and 5 x 5, stride 1 and 2, blocks of channels short), one run across output
# rows (qconv_depthwise_avx2_flat: stride 1 and 2), row by row (qconv_depthwise_avx2: stride 1 and 2)
DEPTHWISE = {
    "dw_7x7": (24, 24, 3, 1, 1, 24, (7, 7)),
    "dw_s2_14_i8": (20, 20, 3, 2, 1, 20, (14, 14)),
    "dw_5x5_s2": (18, 18, 5, 2, 2, 18, (13, 13)),
    "dw_28": (12, 12, 3, 1, 1, 12, (28, 28)),
    "dw_s2_40": (10, 10, 3, 2, 1, 10, (40, 41)),
    "dw_110": (6, 6, 3, 1, 1, 6, (110, 110)),
    "dw_s2_120": (5, 5, 3, 2, 1, 5, (120, 120)),
}
INT8_INPUT = {"clipped_i8", "dw_s2_14_i8"}


def clipping_weights(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Weights whose pairs and lanes of 4 (quant_ubs.LANES) pass vpmaddubsw's exact range in every way: channel c's
    first pair sums to 129 + 2c (to 255 and then 256: -128, -128) with the sign alternating, its second is
    (-128, x) or (x, -128), and the rest are large (|w| 60-128) with random signs, so that most lanes of 4 pass
    128 on the positive side, the negative side or both."""
    m, taps = shape[0], int(np.prod(shape[1:]))
    w = rng.integers(60, 129, (m, taps)) * rng.choice([-1, 1], (m, taps))
    for c in range(m):
        total, sign = min(129 + 2 * c, 256), 1 if c % 2 == 0 else -1
        first = min(total // 2 + c % 3, 128)
        w[c, 0], w[c, 1] = sign * first, sign * (total - first)
        w[c, 2 + c % 2] = -128
    w = np.where(w > 0, np.minimum(w, 127), w)  # (int8: +128 is 127)
    return w.reshape(shape).astype(np.int8)


def qdq_convs() -> onnx.ModelProto:
    """Each layer of LAYERS on its own input, as onnxruntime's quantizer writes a conv: uint8 activations, int8
    weights with per-channel scales, an int32 bias; the quantized output a graph output."""
    rng = np.random.default_rng(64)
    inits, nodes, inputs, outputs = [], [], [], []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    const("xs", np.float32(0.02)), const("xz", np.uint8(120)), const("xz_i8", np.int8(-8))
    for name, (cin, cout, k, stride, pad, group, hw) in {**LAYERS, **DEPTHWISE}.items():
        taps = cin // group * k * k
        w = (clipping_weights(rng, (cout, cin // group, k, k)) if name.startswith("clipped")
             else rng.integers(-127, 128, (cout, cin // group, k, k), dtype=np.int8))
        xz = "xz_i8" if name in INT8_INPUT else "xz"
        ws = (rng.uniform(0.5, 1.5, cout) * 0.01).astype(np.float32)
        b = rng.integers(-3000, 3000, cout).astype(np.int32)
        nodes += [helper.make_node("QuantizeLinear", [f"{name}_x", "xs", xz], [f"{name}_xq"]),
                  helper.make_node("DequantizeLinear", [f"{name}_xq", "xs", xz], [f"{name}_xd"]),
                  helper.make_node("DequantizeLinear", [const(f"{name}_w", w), const(f"{name}_ws", ws),
                                                        const(f"{name}_wz", np.zeros(cout, np.int8))],
                                   [f"{name}_wd"], axis=0),
                  helper.make_node("DequantizeLinear", [const(f"{name}_b", b), const(f"{name}_bs", ws * 0.02),
                                                        const(f"{name}_bzs", np.zeros(cout, np.int32))],
                                   [f"{name}_bd"], axis=0),
                  helper.make_node("Conv", [f"{name}_xd", f"{name}_wd", f"{name}_bd"], [f"{name}_c"],
                                   kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group),
                  helper.make_node("QuantizeLinear", [f"{name}_c", const(f"{name}_ys", np.float32(
                      0.02 * 0.01 * 150 * np.sqrt(taps))), xz], [name])]
        inputs.append(helper.make_tensor_value_info(f"{name}_x", TensorProto.FLOAT, [1, cin, *hw]))
        y_type = TensorProto.INT8 if name in INT8_INPUT else TensorProto.UINT8
        outputs.append(helper.make_tensor_value_info(name, y_type, None))
    graph = helper.make_graph(nodes, "qdq_convs_avx2", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.full
@pytest.mark.parametrize("march", ["x86-64-v3", "x86-64"])
def test_qdq_convs_at_avx2_match_onnxruntime(tmp_path: Path, march: str):
    """Every layer's outputs exactly onnxruntime's (its QLinearConv, integer sums and the same requantisation), and
    every conv planned with the vpmaddubsw path's fixes (`.ubs_fix`); built with AVX2 (that path, its clipped
    weights made from w), and without (the same bundle's portable path, which reads w as it is)."""
    import onnxruntime as ort

    require_tool("cmake", "gcc")
    if platform.machine() != "x86_64" or (march == "x86-64-v3" and "avx2" not in host_cpu_flags()):
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
                 cmake_args=("-DAOTC_NATIVE=OFF", f"-DCMAKE_C_FLAGS=-march={march}"))
    ours = run_bundle(out, feeds)
    for name, ref in refs.items():
        lo, hi = np.iinfo(ref.dtype).min, np.iinfo(ref.dtype).max
        assert np.mean((ref > lo) & (ref < hi)) > 0.9, name  # (outputs across the range, few saturated)
        np.testing.assert_array_equal(ours[name], ref, err_msg=name)
    source = next((out / "bundle" / "src").glob("*.c")).read_text()
    blocks = source.split("/* QLinearConv [1, ")[1:]  # each conv's parameters, from its comment on
    given = {int(b.split(",")[0]) for b in blocks if re.search(r"^\s*\.ubs_fix = \w+,", b.split("};")[0], re.M)}
    assert given == {cin for cin, *_ in LAYERS.values()}, given


def test_generic_bundle_holds_the_weights_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A generic host's bundle holds each QDQ conv's weights once (w, which every build's path reads: the AVX2 one
    makes its clipped weights from w and the fixes into its scratch) plus the small fix lists: its weights are the
    bytes of the same bundle planned without the vpmaddubsw path (as main plans it) and the `ubs_fix` arrays, no
    more (planted: the clipped weights stored beside w again, as the branch first had it: 28424 bytes, not 20552)."""
    from aot.compiler import Options, compile_file
    from aot.kernels import quant

    onnx.save(qdq_convs(), tmp_path / "convs.onnx")

    def weights(name: str) -> tuple[int, str]:
        result = compile_file(tmp_path / "convs.onnx", Options(name=name, host_isa="generic", scratch_floor=65536))
        source = next(v for k, v in result.files.items() if k.startswith("src/") and k.endswith(".c"))
        return json.loads(result.files["metadata.json"])["memory"]["weights_bytes"], source

    with_ubs, source = weights("with_ubs")
    fixes = sum(4 * int(n) for n in re.findall(r"^static const int32_t \w+_ubs_fix\[(\d+)\]", source, re.M))
    assert source.count(".ubs_fix = ") == len(LAYERS) and fixes > 0
    monkeypatch.setattr(quant, "ubs_patches_work", lambda *args: None)  # (the pairs path on every conv: main's plan)
    without, plain = weights("without_ubs")
    assert ".ubs_fix" not in plain
    assert with_ubs <= without + fixes, (with_ubs, without, fixes)


def test_no_avx2_weights_planned_off_the_host(tmp_path: Path):
    """The vpmaddubsw weights (and the widened ones) are the AVX2 path's alone: a bundle for another machine (an Arm
    or RISC-V Linux board, whose build has no such path) has no `.ubs_fix` and plans no `.work` for them."""
    from aot.compiler import Options, compile_file

    onnx.save(qdq_convs(), tmp_path / "convs.onnx")
    for target in ("aarch64-linux", "riscv64-linux"):
        source = next(v for k, v in compile_file(tmp_path / "convs.onnx", Options(
            name="convs", target=target, scratch_floor=65536)).files.items() if k.startswith("src/") and k.endswith(
            ".c"))
        assert not re.search(r"^\s*\.work = [1-9]", source, re.M), target
        assert ".ubs_fix" not in source, target
