"""--threads N: the pool of runtime_c/kernels/threads/threads.c and the kernels that split their work over it.

One small net whose convs take every split the threaded kernels make: the implicit GEMM by
blocks of 16 output channels (a narrow last block), by row bands where a conv has too few blocks
(8 channels), with a fused residual in bands, Winograd in a lane per thread (by bands, and by blocks of
output channels), the scratch-free depthwise
3 x 3 by output planes at stride 1 and 2, the depthwise 5 x 5 by input channels (by blocks of 16 on
AVX-512), 1 x 1 convs by runs of positions (on AVX-512 the register tiles of conv_posx_avx512.h; elsewhere
the GEMM core by column blocks: 400 positions with a fused residual; 25,
whose last tile is shifted), a SiLU by runs of elements, a 1 x 1 conv whose only block of
channels is cut into runs of positions, a MatMul by column blocks and a batched one by its products, and a Gemm by
column blocks, for a batch of 2.
One bundle (--threads 2) is built three ways, all with -Werror: under ASan/UBSan, under TSan, and
for aarch64 Linux under qemu-user. Each build runs
its runner with the pool and without it (AOTC_NO_POOL): the results must be the same bytes (the
same summation order per output element), and match onnxruntime."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from modelcheck import RELEASE_AT_O0, RELEASE_AT_O1, aotc, build_bundle
from opcheck import assert_close

from aot.kernels.winograd import LANE_M, PITCH_PAD
from aot.targets import get_target, host_has_avx512


def split_net() -> onnx.ModelProto:
    b = zoo.Builder("split_net", opset=13)
    x = b.input("input", (2, 3, 20, 20))
    a = b.relu(b.conv(x, 40, 3))  # 3 blocks of 16 channels (the last 8 wide): row bands too
    w = b.conv(a, 128, 3)
    # Winograd by bands, with a residual: 10 tile rows in two bands, each thread a band's three steps in its lane
    g = b.relu(b.add(b.conv(w, 128, 3), w))
    # Winograd by blocks of 64 output channels: a 12 x 12 plane's 36 tiles in one band (3 panels), which as two
    # bands of 18 tiles would run 2 panels on each thread
    o = b.gap(b.relu(b.conv(b.pool("MaxPool", g, 9, 1), 128, 3)))
    g = b._node("Mul", [g, b.act("Sigmoid", g)], b.shapes[g])  # SiLU (Swish): 25 runs of 4096 elements
    d = b.relu6(b.conv(g, 128, 3, group=128))  # depthwise 3 x 3, stride 1: 256 planes
    d = b.relu6(b.conv(d, 128, 5, group=128))  # depthwise 5 x 5: 16 blocks of 16 channels (AVX-512), or 256 planes
    r = b.relu(b.add(b.conv(d, 8, 1, pad=0), b.conv(a, 8, 1, pad=0)))  # one block: bands, with a residual
    e = b.relu6(b.conv(r, 8, 3, stride=2, group=8))  # depthwise, stride 2
    f = b.conv(e, 64, 3, stride=2)  # 4 blocks, 5 x 5 outputs
    h = b.conv(f, 24, 1, pad=0)  # 1 x 1 on the GEMM core: 25 positions, a shifted last tile
    m = b.pool("MaxPool", h, 3, 2, pad=1)  # 48 planes split across the threads
    # a 1 x 1 conv on a 6 x 6 plane (conv_pwc_avx512.c): two blocks of 48 channels, whose runs of tiles are cut
    # (a part's one or two tiles prefetch more lines of the next block's W^T than the 128 input channels)
    k = b.gap(b.conv(b.pool("MaxPool", g, 3, 3), 96, 1, pad=0))
    # MatMuls as a transformer's: a linear layer (the batches folded into 256 rows) by 3 column blocks, and a
    # product of two activations per batch (2 products: one each)
    t = b._node("Reshape", [g, b.const(np.array([2, 128, 400], np.int64), "shape")], (2, 128, 400))
    mm = b._node("MatMul", [t, b.const(b.weights((400, 48), 400))], (2, 128, 48))
    mm = b._node("MatMul", [b._node("Transpose", [mm], (2, 48, 128), perm=[0, 2, 1]), mm], (2, 48, 48))
    # a fully connected layer: 2 column blocks, the last 24 wide
    return b.build([b.gemm(b.concat([b.flatten(m), b.flatten(k), b.flatten(mm), b.flatten(o)]), 40)])


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, (f"{' '.join(map(str, cmd))} -> exit {r.returncode}\n"
                               f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


@pytest.fixture(scope="module")
def net(tmp_path_factory) -> tuple[Path, onnx.ModelProto, dict[str, np.ndarray], np.ndarray]:
    """The model file, the model, its inputs and onnxruntime's output."""
    import onnxruntime as ort

    d = tmp_path_factory.mktemp("threads")
    model = split_net()
    onnx.save(model, d / "split_net.onnx")
    feeds = zoo.random_inputs(model)
    feeds["input"].tofile(d / "in.bin")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    return d, model, feeds, ref


def build_and_run(d: Path, name: str, target: str = "host", cflags: str = "",
                  env: dict[str, str] | None = None, options: tuple[str, ...] = ()) -> tuple[dict, bytes, bytes]:
    """Compile split_net with --threads 2 (and `options`) for `target`, build it with `cflags`, and run the
    runner with the pool and without: (metadata, outputs with, outputs without)."""
    out = d / name
    # sanitized builds at -O0 (Debug adds only -g): conv_implicit.c compiles in 2.8 s of CPU, against 8 at -O1
    flags = (f"-DCMAKE_C_FLAGS=-O0 {cflags}", "-DCMAKE_BUILD_TYPE=Debug") if cflags else ()
    # scratch to spare for the other kernels' largest blocks (Winograd's lanes are sized apart)
    meta = build_bundle(d / "split_net.onnx", out, "--threads", "2", "--scratch-floor", "2000000", *options,
                        target=target, cmake_args=flags)
    emulator = list(get_target(target).emulator)
    results = []
    for no_pool in (False, True):
        e = {**os.environ, **(env or {})}
        e.pop("AOTC_NO_POOL", None)
        if no_pool:
            e["AOTC_NO_POOL"] = "1"
        res = out / f"out{int(no_pool)}.bin"
        run([*emulator, str(out / "runner"), str(d / "in.bin"), str(res), "3"], env=e)
        results.append(res.read_bytes())
    return meta, results[0], results[1]


def check(meta: dict, pooled: bytes, alone: bytes, ref: np.ndarray, *, host: bool = True,
          winograd: str = "aotc_conv_winograd_f32") -> None:
    """`host`: built for this machine, whose AVX-512 (if it has it) sends the 6 x 6 1 x 1 conv and the 40 -> 128
    3 x 3 one to their paths;
    `winograd`: the Winograd kernel the 20 x 20 conv takes (the 12 x 12 one takes F(2 x 2) either way)."""
    assert meta["threads"]["count"] == 2
    # (AVX-512: the 40 -> 128 3 x 3 conv on conv_igb_avx512.c's blocks, the stride-2 one on the implicit GEMM's)
    pwc, igb = (["aotc_conv_pwc_f32"], ["aotc_conv_igb_f32"]) if host and host_has_avx512() else ([], [])
    winograds = sorted({winograd, "aotc_conv_winograd_f32"})
    assert meta["threads"]["threaded_kernels"] == [
        "aotc_conv_depthwise3x3_direct_f32", "aotc_conv_depthwise_kxk_f32", *igb, "aotc_conv_implicit_f32",
        "aotc_conv_pointwise_f32", *pwc, *winograds, "aotc_gemm_f32", "aotc_matmul_f32"]
    # the lanes, each matrix padded by PITCH_PAD floats (4 KiB aliasing, aotc_conv.h), the bands' tiles rounded
    # up to panels of 16: the 20 x 20 conv's by bands, a band's transformed inputs and the products of all 128
    # output channels (F(2 x 2): 16 products, 6 of 10 tile rows, 60 tiles; F(4 x 4): 36, 3 of 5 rows, 15
    # tiles); the 12 x 12 conv's by blocks, its 128 transformed inputs and LANE_M products of 36 tiles. The
    # arena holds the larger lane a thread.
    products, tiles = (16, 64) if winograd == "aotc_conv_winograd_f32" else (36, 16)
    by_bands = products * ((128 + 128) * tiles + 2 * PITCH_PAD)
    by_blocks = 16 * ((128 + LANE_M) * 48 + 2 * PITCH_PAD)
    assert meta["threads"]["arena_bytes_per_thread"] == max(by_bands, by_blocks) * 4
    assert pooled == alone, "the pool changed the results: a split changed some element's summation order"
    assert_close(np.frombuffer(pooled, np.float32).reshape(ref.shape), ref, "split_net --threads 2")


@pytest.mark.full
def test_pool_is_bit_identical_and_matches_onnxruntime_under_asan_ubsan(net):
    """ASan and UBSan (the Release build's -Werror is checked by the aarch64 one)."""
    d, _, _, ref = net
    check(*build_and_run(d, "asan", cflags="-fsanitize=address,undefined -fno-sanitize-recover=all "
                                            "-fno-omit-frame-pointer"), ref)


@pytest.mark.full
def test_pool_runs_winograd4_with_fast_math(net):
    """--fast-math's F(4 x 4, 3 x 3) through the pool (its 20 x 20 conv by bands of 3 and 2 tile rows, a panel each),
    under ASan and UBSan: bit-identical to one thread, and within the tolerance on this net."""
    d, _, _, ref = net
    check(*build_and_run(d, "fast", cflags="-fsanitize=address,undefined -fno-sanitize-recover=all "
                                            "-fno-omit-frame-pointer", options=("--fast-math",)), ref,
          winograd="aotc_conv_winograd4_f32")


@pytest.mark.full
def test_pool_under_tsan(net):
    d, _, _, ref = net
    check(*build_and_run(d, "tsan", cflags="-fsanitize=thread",
                         env={"TSAN_OPTIONS": "halt_on_error=1 exitcode=66"}), ref)


@pytest.mark.full
def test_pool_on_aarch64_linux(net):
    d, _, _, ref = net
    t = get_target("aarch64-linux")
    require_tool(t.compiler, t.emulator[0])
    check(*build_and_run(d, "aarch64", target="aarch64-linux"), ref, host=False)


def test_one_thread_writes_no_pool(net, tmp_path):
    """--threads 1 (the default) writes the bundle as before threads existed: no pool, no pthreads."""
    d, _, _, _ = net
    for args, out in (([], tmp_path / "default"), (["--threads", "1"], tmp_path / "one")):
        aotc(d / "split_net.onnx", "-o", out, "--no-configure", *args)
    files = sorted(p.relative_to(tmp_path / "default") for p in (tmp_path / "default").rglob("*") if p.is_file())
    for f in files:
        assert (tmp_path / "default" / f).read_bytes() == (tmp_path / "one" / f).read_bytes(), f
    bundle = tmp_path / "one" / "bundle"
    assert "Threads" not in (bundle / "CMakeLists.txt").read_text()
    assert not (bundle / "runtime" / "threads.c").exists()
    assert "threads" not in json.loads((bundle / "metadata.json").read_text())


def test_threads_refused_on_bare_metal(net, tmp_path):
    d, _, _, _ = net
    r = aotc(d / "split_net.onnx", "-o", tmp_path / "o", "--threads", "2", "--target", "mps2-an386", "--no-configure",
             check=False)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "bare metal" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


# The int8 .tflite convs on packed weights (tflite_int8_packed.c) split over the pool too: CONV_2D by runs of 64
# positions x chunks of 64 channels after the span's rows, DEPTHWISE_CONV_2D by blocks of 16 channels x output rows
# (each thread's band on its stack). split_int8.tflite (examples/make_tflite_models_keras.py's `split`) has both
# chunks, a partial last run, a fused residual ADD, the depthwise byte path (3 x 3) and 16-bit path (5 x 5,
# stride 2), and a dilated conv (its tiles of patches stay on one thread).
SPLIT_INT8 = Path(__file__).resolve().parents[1] / "models" / "tflite" / "split_int8.tflite"


@pytest.mark.full
@pytest.mark.parametrize("sanitizer", ["address,undefined", "thread"])
def test_int8_tflite_convs_split_bit_exact_with_litert(tmp_path, sanitizer):
    from tflite_reference import reference

    x = np.random.default_rng(7).integers(-128, 128, (1, 20, 20, 8), dtype=np.int8)
    x.tofile(tmp_path / "in.bin")
    out = tmp_path / "out"
    recover = " -fno-sanitize-recover=all" if "undefined" in sanitizer else ""
    # every conv split, however small (TFL_PK_POOL_MIN_MACS: by default the calling thread runs the 5 x 5 alone), and
    # both depthwise convs (80 channels, 20 and 10 rows) a run of rows across the blocks at a time, as on an input past
    # TFL_PK_DW_ACROSS_BYTES
    flags = (f"-fsanitize={sanitizer} -fno-omit-frame-pointer{recover} -DTFL_PK_POOL_MIN_MACS=0 "
             "-DTFL_PK_DW_ACROSS_BYTES=0")
    meta = build_bundle(SPLIT_INT8, out, "--threads", "2", cmake_args=(f"-DCMAKE_C_FLAGS={flags}", RELEASE_AT_O1))
    assert meta["threads"]["threaded_kernels"] == ["aotc_tfl_conv_add_s8_packed", "aotc_tfl_conv_s8_packed",
                                                   "aotc_tfl_depthwise_s8_packed", "aotc_tfl_fc_s8_packed"]
    results = []
    for no_pool in (False, True):
        env = {k: v for k, v in os.environ.items() if k != "AOTC_NO_POOL"}
        env["TSAN_OPTIONS"] = "halt_on_error=1 exitcode=66"
        if no_pool:
            env["AOTC_NO_POOL"] = "1"
        run([str(out / "runner"), str(tmp_path / "in.bin"), str(tmp_path / f"y{int(no_pool)}.bin"), "3"], env=env)
        results.append((tmp_path / f"y{int(no_pool)}.bin").read_bytes())
    assert results[0] == results[1], "the pool changed the int8 convs' results"
    ref = reference(SPLIT_INT8, [x], tmp_path)["output_0"]
    np.testing.assert_array_equal(np.frombuffer(results[0], np.int8).reshape(ref.shape), ref)


@pytest.mark.full
def test_int8_tflite_attention_split_bit_identical(tmp_path):
    """An int8 encoder's products over the pool (test_tflite_int8_attention.py's model: BATCH_MATMUL of 3 heads by
    its products, FULLY_CONNECTED over 37 rows by panels of 64 outputs, 2 of them), every split however small, under
    ASan/UBSan: the same bytes with the pool as without (that test checks the values against LiteRT's reference)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
    from test_tflite_int8_attention import attention_model

    data, feeds = attention_model()
    model = tmp_path / "attention_int8.tflite"
    model.write_bytes(data)
    (tmp_path / "in.bin").write_bytes(b"".join(f.tobytes() for f in feeds))
    flags = ("-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all "
             "-DTFL_PK_POOL_MIN_MACS=0 -DTFL_MM_POOL_MIN_MACS=0")
    out = tmp_path / "out"
    meta = build_bundle(model, out, "--threads", "2", cmake_args=(f"-DCMAKE_C_FLAGS={flags}", RELEASE_AT_O1))
    assert {"aotc_tfl_batch_matmul_s8", "aotc_tfl_fc_s8_packed"} <= set(meta["threads"]["threaded_kernels"])
    results = []
    for no_pool in (False, True):
        env = {k: v for k, v in os.environ.items() if k != "AOTC_NO_POOL"}
        if no_pool:
            env["AOTC_NO_POOL"] = "1"
        run([str(out / "runner"), str(tmp_path / "in.bin"), str(tmp_path / f"y{int(no_pool)}.bin"), "3"], env=env)
        results.append((tmp_path / f"y{int(no_pool)}.bin").read_bytes())
    assert results[0] == results[1], "the pool changed the int8 products' results"


# The ONNX int8 convs (QDQ and QOperator models reach the same QLinearConv kernels) split over the pool on AVX-512 VNNI
# hosts (quant_avx512vnni.h): each conv of AOTC_QCONV_POOL_MIN_MACS or more takes a lane of scratch a thread
# (aotc_qconv_params.lanes) and runs its items (ranges of output positions x chunks of channels) there; smaller ones
# (AOTC_QCONV_POOL_MIN_TAPS for a depthwise conv) stay on the calling thread.
QCONV_LAYERS = (  # name, input, output channels, kernel, stride, group, residual (the output of that layer added)
    ("stem", "x", 32, 3, 1, 1, None),            # dense, quad rows made once (32 channels), 32 x 32: split
    ("res", "stem", 32, 3, 1, 1, "stem"),        # dense with the residual ADD in its stores: split
    ("narrow", "res", 16, 3, 1, 1, None),        # dense by passes, packed (16 channels): split
    ("odd", "narrow", 24, 3, 1, 1, None),        # dense, weights re-ordered (24 channels), weight zero points: split
    ("expand", "odd", 128, 1, 1, 1, None),       # 1 x 1, read from the planes: split
    ("dw", "expand", 128, 3, 1, 128, None),      # depthwise over the plane: split
    ("down", "dw", 128, 1, 2, 1, None),          # 1 x 1 at stride 2, 16 x 16: split
    ("up", "down", 256, 1, 1, 1, None),          # 1 x 1, 256 channels: split
    ("dw16", "up", 256, 3, 1, 256, None),        # depthwise on 16 x 16, 4 ranges: chunks of channels too: split
    ("dw2", "dw16", 256, 3, 2, 256, None),       # depthwise at stride 2, 8 x 8: 295 K taps: split
    ("wide", "dw2", 256, 1, 1, 1, None),         # 1 x 1 on 64 positions: one block, chunks of channels: split
    ("late", "wide", 32, 3, 1, 1, None),         # dense on 8 x 8, 256 input channels: split
    ("dw8", "late", 32, 3, 1, 32, None),         # depthwise, 37 K taps: below the threshold
    ("small", "dw8", 32, 3, 1, 1, "late"),       # 590 K multiply-adds with its residual: below the threshold
    ("square", "small", 32, 2, 1, 1, None),      # 2 x 2 (the windows path, which keeps one thread): below
)


def qconv_net(dtype: str) -> onnx.ModelProto:
    """QLinearConv layers of every path (QCONV_LAYERS) on a batch of 2, activations of `dtype` (int8 weights),
    per-channel weight scales, the residuals as QLinearAdd (aotc fuses them into the conv)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(64)
    act = {"int8": (TensorProto.INT8, np.int8, 0), "uint8": (TensorProto.UINT8, np.uint8, 128)}[dtype]
    inits, nodes, chans = [], [], {"x": 16}

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    const("s", np.float32(0.05)), const("z", np.array(act[2], act[1]))
    nodes.append(helper.make_node("QuantizeLinear", ["input", "s", "z"], ["x"]))
    for name, src, m, k, stride, group, res in QCONV_LAYERS:
        c = chans[src]
        taps = c // group * k * k
        w = rng.integers(-127, 128, (m, c // group, k, k), dtype=np.int8)
        wz = rng.integers(-3, 4, m).astype(np.int8) if name == "odd" else np.zeros(m, np.int8)
        ws = (rng.uniform(0.5, 1.5, m) * 0.01).astype(np.float32)
        ys = np.float32(0.05 * 0.01 * 70 * np.sqrt(taps))
        b = rng.integers(-2000, 2000, m).astype(np.int32)
        ins = [src, "s", "z", const(f"{name}_w", w), const(f"{name}_ws", ws), const(f"{name}_wz", wz),
               const(f"{name}_ys", ys), "z", const(f"{name}_b", b)]
        out = f"{name}_conv" if res else name
        nodes.append(helper.make_node("QLinearConv", ins, [out], kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4 if k % 2 else [0, 0, 1, 1], group=group))
        if res:  # the sum at the layer's output scale: "s" (inputs and sums share it)
            nodes.append(helper.make_node("QLinearAdd", [out, f"{name}_ys", "z", res, f"{res}_ys", "z", f"{name}_ys",
                                                          "z"], [name], domain="com.microsoft"))
        chans[name] = m
    last = QCONV_LAYERS[-1][0]
    nodes.append(helper.make_node("DequantizeLinear", [last, f"{last}_ys", "z"], ["output"]))
    graph = helper.make_graph(nodes, "qconv_split", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                                                    [2, 16, 32, 32])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                   helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.full
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_qlinear_convs_split_bit_identical(tmp_path, dtype):
    """Each QLinearConv path split over the pool where it has the work (dense: quad rows made once, by passes,
    re-ordered weights, a fused residual; 1 x 1 from the planes and at stride 2; depthwise; a plane of one block),
    under ASan/UBSan and TSan: the same bytes with the pool, without it (AOTC_NO_POOL) and from a --threads 1 bundle,
    and onnxruntime's."""
    import onnxruntime as ort

    if not host_has_avx512():
        pytest.skip("the int8 convs split on AVX-512 VNNI hosts (quant_avx512vnni.h)")
    model = qconv_net(dtype)
    onnx.save(model, tmp_path / "qconv.onnx")
    x = np.random.default_rng(1).standard_normal((2, 16, 32, 32)).astype(np.float32) * 3
    x.tofile(tmp_path / "in.bin")
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
        None, {"input": x})[0]
    one = tmp_path / "one"
    build_bundle(tmp_path / "qconv.onnx", one)
    run([str(one / "runner"), str(tmp_path / "in.bin"), str(tmp_path / "one.bin"), "1"])
    expected = (tmp_path / "one.bin").read_bytes()
    np.testing.assert_array_equal(np.frombuffer(expected, np.float32).reshape(ref.shape), ref)
    split = sum(1 for name, src, m, k, stride, group, _ in QCONV_LAYERS if name not in ("dw8", "small", "square"))
    # without VBMI (an AVX-512 VNNI CPU before Ice Lake) the 1 x 1 path gathers every conv's patches and the depthwise
    # convs take their ring of rows, by output planes
    no_vbmi = " -march=native -mno-avx512vbmi"
    builds = [("address,undefined", ""), ("thread", ""), ("address,undefined", no_vbmi)]
    # the split and the pool's hand-over are one code for both types (quant_impl.h's AOTC_Q): TSan on int8 only,
    # each type's paths (with VBMI and without) under ASan/UBSan
    for sanitizer, isa in [b for b in builds if dtype == "int8" or b[0] != "thread"]:
        out = tmp_path / (sanitizer.replace(",", "_") + isa.replace(" ", "_"))
        recover = " -fno-sanitize-recover=all" if "undefined" in sanitizer else ""
        flags = (f"-DCMAKE_C_FLAGS=-fsanitize={sanitizer} -fno-omit-frame-pointer{recover}{isa}", RELEASE_AT_O0,
                 *(("-DAOTC_NATIVE=OFF",) if isa else ()))
        meta = build_bundle(tmp_path / "qconv.onnx", out, "--threads", "2", cmake_args=flags)
        assert {"aotc_qconv_depthwise_i8", "aotc_qconv_patches_i8"} <= {
            k.replace("_u8", "_i8") for k in meta["threads"]["threaded_kernels"]}
        source = next((out / "bundle" / "src").glob("qconv*.c")).read_text()
        assert source.count(".lanes = 2") == split + 1  # (the 2 x 2 conv has the work: its path keeps one thread)
        for no_pool in (False, True):
            env = {k: v for k, v in os.environ.items() if k != "AOTC_NO_POOL"}
            env["TSAN_OPTIONS"] = "halt_on_error=1 exitcode=66"
            if no_pool:
                env["AOTC_NO_POOL"] = "1"
            res = tmp_path / f"{out.name}{int(no_pool)}.bin"
            run([str(out / "runner"), str(tmp_path / "in.bin"), str(res), "2"], env=env)
            assert res.read_bytes() == expected, f"{sanitizer}, pool {not no_pool}: not the one-thread bundle's bytes"
