"""The facts the compiler shares with the C kernels have one source each.

  - Numbers (block sizes, limits, thresholds): the compiler reads them from the kernels' #define lines
    (aot/kernels/c_defines.py). Its reader is tested here on its own, and every number it read while the
    kernel modules loaded is checked against what gcc's preprocessor makes of that name in that file.
  - Scratch sizes: each kernel's C function <kernel>_scratch_bytes (aotc_conv.h, aotc_gemm.h,
    aotc_tflite_int8.h, aotc_quant.h) is what the kernel lays out and what tests/kernels_c/ allocate; the
    compiler's Python
    formulas, run as the compiler runs them (its candidates' fits, over random shapes, budgets and
    targets), must give the C functions' sizes for the params it would write (tests/kernels_c/scratch_facts.c,
    built for the host and loaded with ctypes). A mismatch is a buffer overrun on some shape.
"""

from __future__ import annotations

import ctypes
import math
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from aot.ir import Graph, Node, Tensor
from aot.kernels import c_defines, conv, gemm, quant, quant_gemm, tflite_int8, winograd
from aot.kernels.base import TargetTraits
from aot.paths import kernel_file, kernel_include_flags

TESTS_C = Path(__file__).resolve().parent
FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O1"]

# the targets whose choices differ: an AVX-512 host, a plain host, the machine's without AVX-512, a Cortex-M4
# (scalar tiles, DSP), a Cortex-M55 (Helium), and a host with threads (Winograd's lanes)
TARGETS = (
    TargetTraits(avx512=True, fast_math=True),
    TargetTraits(),
    TargetTraits(host=True),
    TargetTraits(vector_unit=False, scalar_tiles=True, dsp=True),
    TargetTraits(helium=True),
    TargetTraits(threads=2, fast_math=True),
)
# Conv's kernels that take scratch, by their C function (the others must ask for none)
SCRATCH_KERNELS = {"aotc_conv_f32", "aotc_conv_s1_f32", "aotc_conv_pointwise_f32", "aotc_conv_pointwise_t_f32",
                   "aotc_conv_pointwise_strided_f32",
                   "aotc_conv_depthwise3x3_f32", "aotc_conv3x3_flat_f32", "aotc_conv_transpose_f32",
                   "aotc_conv_winograd_f32", "aotc_conv_winograd4_f32"}


# --- the #define reader -----------------------------------------------------------------------------

def test_reader_takes_integer_defines_only():
    text = """#define A 3 /* a comment */
    #  define B 0x10u // another
#define C (64)
#define D(x) ((x) + 1)
#define E (A + 1)
#define F 7 /* a comment that goes
             * on */
#ifdef X
#define G 1
#else
#define G 2
#endif
#define H 5
#define H 5
"""
    assert c_defines.parse_defines(text) == {"A": 3, "B": 16, "C": 64, "F": 7, "G": None, "H": 5}


def test_define_refuses_what_is_not_one_integer():
    assert c_defines.define("aotc_gemm.h", "AOTC_GEMM_PANEL") == gemm.PANEL
    with pytest.raises(LookupError, match="more than once"):
        c_defines.define("aotc_gemm.h", "AOTC_GEMM_MR")  # one per target
    with pytest.raises(LookupError, match="no #define"):
        c_defines.define("aotc_gemm.h", "AOTC_NO_SUCH_NAME")


def test_compiler_reads_the_values_gcc_sees(tmp_path):
    """Each number the compiler took from a kernel file is that file's value for gcc's preprocessor (for a core
    with AVX-512 and VNNI, so that the x86 paths' definitions count): the name expanded on a line after its
    #define (a .c file may #undef its names at its end), which must survive the file's #if branches."""
    require_tool("gcc")
    read = c_defines.read()  # the kernel modules are loaded by now
    assert {"aotc_gemm.h", "aotc_conv.h", "aotc_tflite_int8.h", "conv_pwc_avx512.c", "aotc_quant.h"} <= read.keys()
    for file, names in read.items():
        lines = kernel_file(file).read_text().splitlines()
        for name in names:
            at = next(i for i, line in enumerate(lines) if re.match(rf"\s*#\s*define\s+{name}\b", line))
            lines.insert(at + 1, f'@fact "{name}" = {name}')
        src = tmp_path / f"check_{file.replace('.', '_')}.c"
        src.write_text("\n".join(lines) + "\n")
        run = subprocess.run(["gcc", "-E", "-P", "-march=sapphirerapids", *kernel_include_flags(),
                              str(src)], capture_output=True, text=True, check=True)
        seen = {m[0]: c_defines.parse_defines(f"#define X {m[1]}").get("X")
                for m in re.findall(r'@fact "(\w+)" = (.*)', run.stdout)}
        assert seen == names, file


# --- scratch sizes ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def facts(tmp_path_factory) -> ctypes.CDLL:
    require_tool("gcc")
    lib = tmp_path_factory.mktemp("facts") / "scratch_facts.so"
    subprocess.run(["gcc", *FLAGS, "-shared", "-fPIC", *kernel_include_flags(),
                    str(TESTS_C / "scratch_facts.c"), "-o", str(lib)], check=True)
    so = ctypes.CDLL(str(lib))
    for name in ("facts_conv", "facts_sgemm_work", "facts_tfl", "facts_tfl_fc", "facts_tfl_fc_packed", "facts_tfl_add",
                 "facts_qconv"):
        getattr(so, name).restype = ctypes.c_int64
    return so


def _ints(field: str) -> list[int]:
    return [int(v) for v in re.findall(r"-?\d+", field)]


def _c_conv(facts: ctypes.CDLL, kernel: str, fields: dict[str, str], threads: int) -> int:
    f = [int(fields["batch"]), int(fields["group"]), int(fields["in_c"]), int(fields["out_c"])]
    for key in ("in_size", "out_size", "kernel", "strides", "dilations", "pads"):
        f += _ints(fields[key])
    f += [int(fields["kc"]), int(fields["nc"])]
    return facts.facts_conv(kernel.encode(), (ctypes.c_int32 * len(f))(*f), threads)


@st.composite
def convs(draw) -> tuple[Node, Graph]:
    """A Conv or ConvTranspose, NCHW, 1 to 3 spatial dims (mostly 2), of the shapes the C tests and the zoo
    have: depthwise and grouped, 1 x 1 and 3 x 3 mostly, strides 1 and 2, some dilation and odd pads."""
    op = draw(st.sampled_from(["Conv"] * 6 + ["ConvTranspose"]))
    nd = draw(st.sampled_from([2, 2, 2, 2, 1, 3]))
    group = draw(st.sampled_from([1, 1, 1, 2, 3]))
    cg = draw(st.sampled_from([1, 1, 2, 3, 4, 8, 16, 40, 64, 300]))
    mg = draw(st.sampled_from([1, 2, 4, 8, 16, 17, 32, 48, 64, 100]))
    depthwise = op == "Conv" and draw(st.booleans())
    if depthwise:
        group, cg, mg = draw(st.integers(1, 40)), 1, draw(st.sampled_from([1, 1, 2]))
    big = 96 if nd == 2 else 400 if nd == 1 else 12
    size = [draw(st.integers(1, big if i == nd - 1 else max(1, big // 3 if nd == 2 else big))) for i in range(nd)]
    kernel = [draw(st.sampled_from([1, 3, 3, 3, 5, 7])) if draw(st.booleans()) else 3 for _ in range(nd)]
    if draw(st.booleans()):
        kernel = [kernel[0]] * nd
    strides = [draw(st.sampled_from([1, 1, 2])) for _ in range(nd)]
    if draw(st.booleans()):
        strides = [strides[0]] * nd
    dil = [draw(st.sampled_from([1, 1, 1, 2])) for _ in range(nd)]
    pads = [draw(st.integers(0, 2)) for _ in range(2 * nd)]
    if draw(st.booleans()):
        pads = [pads[0]] * (2 * nd)
    # the shapes of the kernels with scratch: 3 x 3 same size (flat, Winograd), 1 x 1 (the GEMM core's work
    # block; on a few positions X^T * W^T)
    shape = draw(st.sampled_from(["any", "any", "same3x3", "winograd", "1x1", "1x1 small"]))
    if shape == "winograd":  # the channels and planes where it gains (winograd.best)
        op, nd, group, depthwise = "Conv", 2, 1, False
        cg, mg = draw(st.sampled_from([16, 32, 64, 128, 256])), draw(st.sampled_from([16, 32, 64, 128, 256]))
        size = [draw(st.integers(4, 64)), draw(st.integers(4, 300))]
    if shape in ("same3x3", "winograd"):
        kernel, strides, dil, pads = [3] * nd, [1] * nd, [1] * nd, [1] * (2 * nd)
    elif shape.startswith("1x1"):
        kernel, strides, dil, pads = [1] * nd, [1] * nd, [1] * nd, [0] * (2 * nd)
        if shape == "1x1 small":
            size = [draw(st.integers(1, 4)) for _ in range(nd)]
    if op == "ConvTranspose":
        out = [(size[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - pads[i] - pads[nd + i] for i in range(nd)]
    else:
        out = [(size[i] + pads[i] + pads[nd + i] - dil[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(nd)]
    assume(min(out) >= 1 and all(p < k * d for p, k, d in zip(pads, kernel * 2, dil * 2, strict=True)))
    batch = draw(st.sampled_from([1, 1, 2]))
    in_c, out_c = cg * group, mg * group
    w_shape = (in_c, mg, *kernel) if op == "ConvTranspose" else (out_c, cg, *kernel)
    const = shape == "winograd" or draw(st.sampled_from([True, True, False]))
    tensors = {"x": Tensor("x", (batch, in_c, *size), "float32"),
               "w": Tensor("w", w_shape, "float32", np.zeros(w_shape, np.float32) if const else None),
               "y": Tensor("y", (batch, out_c, *out), "float32")}
    attrs = {"group": group, "kernel_shape": kernel, "strides": strides, "dilations": dil, "pads": pads}
    node = Node(op, "conv", ["x", "w"], ["y"], attrs)
    return node, Graph("g", [node], tensors, ["x"] if const else ["x", "w"], ["y"])


BUDGETS = st.one_of(st.sampled_from([0, 64, 4096, 9216, 65536, 1 << 20, 1 << 62]), st.integers(0, 1 << 22))


@pytest.mark.full
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_=convs(), budget=BUDGETS)
def test_conv_scratch_is_the_kernels(facts, conv_, budget):
    """Every conv kernel a target may take for the node, fitted to the budget as the compiler fits it: its
    scratch is what the kernel's C function gives for the params the compiler writes (the GEMM core's work
    block: that, or none where the budget lacks it), and the kernels without one take none."""
    node, graph = conv_
    seen = set()
    for target in TARGETS:
        for cand in conv.KERNELS:
            if not cand.applies(node, graph, target):
                continue
            choice = cand.fit_on(node, graph, budget, target) if cand.fit_on else cand.fit(node, graph, budget)
            if choice is None or (choice.kernel, target.threads) in seen:
                continue
            seen.add((choice.kernel, target.threads))
            plan = choice.detail
            if choice.kernel not in SCRATCH_KERNELS:
                assert choice.scratch == 0 and _c_conv(facts, choice.kernel, plan.fields, 1) == -1, choice.kernel
                continue
            c_bytes = _c_conv(facts, choice.kernel, plan.fields, target.threads if choice.kept else 1)
            if choice.kernel == "aotc_conv_pointwise_f32":
                assert choice.scratch in (0, c_bytes)
            else:
                assert choice.scratch == c_bytes, (choice.kernel, plan.fields, choice.scratch, c_bytes)


@given(k=st.integers(1, 5000), budget=BUDGETS)
def test_gemm_work_is_the_cores(facts, k, budget):
    work = gemm.work_bytes(k, budget)
    assert work in (0, facts.facts_sgemm_work(k)) and (work > 0) == (facts.facts_sgemm_work(k) <= budget)


@st.composite
def tfl_convs(draw) -> tuple[Node, Graph]:
    """A TFLite CONV_2D, CONV_2D with its ADD fused, or DEPTHWISE_CONV_2D, int8 NHWC: KWS-, ResNet-8- and
    MobileNet-sized, and the limits of the paths (Helium's 512 channels and 2304-byte patches, the DSP
    depthwise path's 5 x 5 window and 1024-word span)."""
    op = draw(st.sampled_from(["TflConv2D", "TflConv2DAdd", "TflDepthwiseConv2D"]))
    n = draw(st.sampled_from([1, 1, 2]))
    h, w = draw(st.integers(1, 64)), draw(st.integers(1, 64))
    kh, kw = draw(st.sampled_from([(1, 1), (3, 3), (3, 3), (5, 5), (7, 7), (10, 4), (1, 3), (6, 6)]))
    sh, sw = draw(st.sampled_from([(1, 1), (2, 2), (1, 2)]))
    dh, dw = draw(st.sampled_from([(1, 1), (1, 1), (2, 2)]))
    c = draw(st.sampled_from([1, 3, 4, 8, 16, 32, 64, 100, 256, 300]))
    if op == "TflDepthwiseConv2D":
        oc = c * draw(st.sampled_from([1, 1, 1, 2, 3, 8]))  # (multipliers above 1: tfl_depthwise_s8_mult)
    else:
        oc = draw(st.sampled_from([1, 2, 3, 4, 5, 6, 7, 12, 13, 16, 64, 65, 66, 130, 255, 256, 510, 512, 513, 1000]))
    same = draw(st.booleans())
    oh = -(-h // sh) if same else (h - dh * (kh - 1) - 1) // sh + 1
    ow = -(-w // sw) if same else (w - dw * (kw - 1) - 1) // sw + 1
    assume(oh >= 1 and ow >= 1)
    pads = [max(0, ((oh - 1) * sh + dh * (kh - 1) + 1 - h) // 2), max(0, ((ow - 1) * sw + dw * (kw - 1) + 1 - w) // 2)]
    w_shape = (1, kh, kw, oc) if op == "TflDepthwiseConv2D" else (oc, kh, kw, c)
    tensors = {"x": Tensor("x", (n, h, w, c), "int8"), "w": Tensor("w", w_shape, "int8", np.zeros(w_shape, np.int8)),
               "y": Tensor("y", (n, oh, ow, oc), "int8"), "r": Tensor("r", (n, oh, ow, oc), "int8")}
    attrs = {"kernel": [kh, kw], "strides": [sh, sw], "dilations": [dh, dw], "pads": pads}
    inputs = ["x", "w", "", "r"] if op == "TflConv2DAdd" else ["x", "w"]
    node = Node(op, "conv", inputs, ["y"], attrs)
    return node, Graph("g", [node], tensors, ["x"], ["y"])


def _tfl_params(node: Node, graph: Graph, dsp_tile: int) -> ctypes.Array:
    n, h, w, c = graph.tensors["x"].shape
    _, oh, ow, oc = graph.tensors["y"].shape
    a = node.attrs
    f = [n, h, w, c, oh, ow, oc, *a["kernel"], *a["strides"], *a["dilations"], *a["pads"],
         oc // c if node.op == "TflDepthwiseConv2D" else 1, dsp_tile]
    return (ctypes.c_int32 * len(f))(*f)


@settings(max_examples=1500, deadline=None)
@given(conv_=tfl_convs(), budget=BUDGETS)
def test_tflite_scratch_is_the_kernels(facts, conv_, budget):
    """The M-profile paths' scratch as the compiler fits it to the budget (the DSP CONV_2D's tile, written
    to p->dsp_tile) is what aotc_tflite_int8.h's functions give for those params, on the M4 (DSP) and the
    M55 (Helium, else DSP); and the tile the plan chose is the one the kernel takes."""
    node, graph = conv_
    for target in (TargetTraits(vector_unit=False, scalar_tiles=True, dsp=True), TargetTraits(helium=True)):
        cand = next(k for k in tflite_int8.OPS[node.op].kernels if k.applies_on(node, graph, target))
        # and a RAM budget's "tiles": CONV_2D's tiles below the usual floor, the depthwise path's shorter runs
        least = [cand.fit_least(node, graph, budget)] if cand.fit_least else []
        for choice, is_least in ((cand.fit(node, graph, budget), False), *((c, True) for c in least)):
            if is_least and choice.scratch == 0 and node.op == "TflDepthwiseConv2D":
                continue  # below the multiplier path's least scratch: none, the kernel gets NULL (its plain loop)
            dsp = cand.facts.isa == "m-profile"  # the DSP path's tile; Helium's path ("mve") has none
            np_ = ctypes.c_int32()
            if node.op == "TflDepthwiseConv2D":
                path = "depthwise_dsp"
            else:
                path = ("conv_add_" if node.op == "TflConv2DAdd" else "conv_") + ("dsp" if dsp else "mve")
            tile = choice.detail if dsp and choice.detail else 0
            c_bytes = facts.facts_tfl(path.encode(), _tfl_params(node, graph, tile), ctypes.byref(np_))
            assert choice.scratch == c_bytes, (path, choice, c_bytes)
            if dsp and node.op != "TflDepthwiseConv2D" and c_bytes:
                assert np_.value == choice.detail  # the tile the kernel takes is the plan's


@settings(max_examples=800, deadline=None)
@given(conv_=tfl_convs())
def test_tflite_packed_scratch_is_the_kernels(facts, conv_):
    """The host's packed kernels' scratch (tflite_int8_packed.c: CONV_2D's span and tile of patches, the depthwise
    band) as the compiler sizes it is what aotc_tflite_int8.h's functions give."""
    node, graph = conv_
    node.attrs.update(mult=[1 << 30], add={"m": [1 << 30, -1] * 3})
    host = TargetTraits(host=True)
    cand = next(k for k in tflite_int8.OPS[node.op].kernels if k.applies_on(node, graph, host))
    if node.op == "TflDepthwiseConv2D" and graph.tensors["y"].shape[3] != graph.tensors["x"].shape[3]:
        assert not cand.kernel.endswith("_packed")  # (depth multiplier 1 only)
        return
    assert cand.kernel.endswith("_packed"), cand.kernel
    path = {"TflConv2D": "conv_packed", "TflConv2DAdd": "conv_add_packed", "TflDepthwiseConv2D": "depthwise_packed"}
    np_ = ctypes.c_int32()
    c_bytes = facts.facts_tfl(path[node.op].encode(), _tfl_params(node, graph, 0), ctypes.byref(np_))
    assert cand.fit(node, graph, 0).scratch == c_bytes


@given(k=st.integers(1, 4000), n=st.integers(1, 1000))
def test_fc_packed_scratch_is_the_kernels(facts, k, n):
    x, y = Tensor("x", (1, k), "int8"), Tensor("y", (1, n), "int8")
    w = Tensor("w", (n, k), "int8", np.zeros((n, k), np.int8))
    node = Node("TflFullyConnected", "fc", ["x", "w"], ["y"], {"mult": [1 << 30]})
    graph = Graph("g", [node], {"x": x, "w": w, "y": y}, ["x"], ["y"])
    cand = tflite_int8.OPS["TflFullyConnected"].kernels[0]
    assert cand.applies_on(node, graph, TargetTraits(host=True))
    assert cand.fit(node, graph, 0).scratch == facts.facts_tfl_fc_packed(k, n)


@given(k=st.integers(0, 4000), n=st.integers(1, 1000))
def test_dense_dsp_scratch_is_the_kernels(facts, k, n):
    assert quant_gemm.dsp_gemv_scratch(k, n) == facts.facts_tfl_fc(k, n)


def test_add_dsp_scratch_is_the_kernels(facts):
    for count in (tflite_int8.ADD_MIN - 1, tflite_int8.ADD_MIN, 10**6):
        want = 4 * tflite_int8.ADD_SCRATCH_WORDS if count >= tflite_int8.ADD_MIN else 0
        assert facts.facts_tfl_add(count, 0) == want
    assert facts.facts_tfl_add(10**6, 1) == 0


@st.composite
def qconvs(draw) -> tuple[Node, Graph]:
    """A QLinearConv (or with its residual QLinearAdd fused), NCHW int8 / uint8, 1-D or 2-D: depthwise and
    grouped, 1 x 1 to 7 x 7, deep patches (past the DSP path's chunk of widened weights and the AVX-512 paths'
    buffers), blocks of 16 output channels (the dense path's packed weights), weight zero points or none."""
    op = draw(st.sampled_from(["QLinearConv"] * 3 + ["QLinearConvAdd"]))
    dtype, wtype = draw(st.sampled_from(["int8", "uint8"])), draw(st.sampled_from(["int8", "uint8"]))
    depthwise = op == "QLinearConv" and draw(st.booleans())
    group = draw(st.integers(2, 64)) if depthwise else draw(st.sampled_from([1, 1, 1, 2, 4]))
    cg = 1 if depthwise else draw(st.sampled_from([1, 2, 3, 8, 16, 64, 100, 256, 600]))
    mg = 1 if depthwise else draw(st.sampled_from([1, 4, 8, 16, 17, 32, 48, 64, 128, 256]))
    one_d = draw(st.integers(0, 5)) == 0
    k_h = 1 if one_d else draw(st.sampled_from([1, 3, 3, 5, 7]))
    k_w = draw(st.sampled_from([1, 3, 3, 5, 7, 17]))
    s_h, s_w = (1 if one_d else draw(st.sampled_from([1, 2]))), draw(st.sampled_from([1, 2]))
    d_h, d_w = (1 if one_d else draw(st.sampled_from([1, 1, 2]))), draw(st.sampled_from([1, 1, 2, 40]))
    h = 1 if one_d else draw(st.integers(1, 40))
    w = draw(st.integers(1, 60))
    pads = [draw(st.integers(0, 2)) for _ in range(4)]
    oh = (h + pads[0] + pads[2] - d_h * (k_h - 1) - 1) // s_h + 1
    ow = (w + pads[1] + pads[3] - d_w * (k_w - 1) - 1) // s_w + 1
    assume(oh >= 1 and ow >= 1 and all(p < k * d for p, k, d in zip(pads, [k_h, k_w] * 2, [d_h, d_w] * 2,
                                                                        strict=True)))
    batch = draw(st.sampled_from([1, 1, 2]))
    cin, cout = cg * group, mg * group
    kernel = [k_w] if one_d else [k_h, k_w]
    x_shape, y_shape = ((batch, cin, w), (batch, cout, ow)) if one_d else ((batch, cin, h, w), (batch, cout, oh, ow))
    shift = 128 if wtype == "uint8" else 0
    w_zero = np.full(cout, shift, np.int64) + (draw(st.sampled_from([0, 0, 3])) if draw(st.booleans()) else 0)
    scalar = lambda name, v, t: Tensor(name, (), t, np.asarray(v, t))  # noqa: E731
    tensors = {"x": Tensor("x", x_shape, dtype), "w": Tensor("w", (cout, cg, *kernel), wtype,
                                                              np.zeros((cout, cg, *kernel), wtype)),
               "xs": scalar("xs", 0.1, "float32"), "xz": scalar("xz", 0, dtype), "ws": scalar("ws", 0.1, "float32"),
               "wz": Tensor("wz", (cout,), wtype, w_zero.astype(wtype)), "ys": scalar("ys", 0.1, "float32"),
               "yz": scalar("yz", 0, dtype), "y": Tensor("y", y_shape, dtype), "r": Tensor("r", y_shape, dtype)}
    attrs = {"group": group, "kernel_shape": kernel, "strides": [s_w] if one_d else [s_h, s_w],
             "dilations": [d_w] if one_d else [d_h, d_w], "pads": [pads[1], pads[3]] if one_d else pads}
    inputs = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", ""] + (["r"] if op == "QLinearConvAdd" else [])
    node = Node(op, "conv", inputs, ["y"], attrs)
    return node, Graph("g", [node], tensors, ["x"], ["y"])


def _qconv_fields(node: Node, graph: Graph, packed: bool, dw4: int, work: int) -> ctypes.Array:
    a = node.attrs
    x, y = graph.tensors["x"].shape, graph.tensors["y"].shape
    (n, c, h, w), (_, m, oh, ow) = ((x[:2] + (1, x[2]), y[:2] + (1, y[2])) if len(x) == 3 else (x, y))
    pair = lambda v, fill: [fill] * (2 - len(v)) + list(v)  # noqa: E731
    w_zero = graph.tensors["wz"].data.astype(np.int64) - (128 if graph.tensors["w"].dtype == "uint8" else 0)
    f = [n, c, h, w, m, oh, ow, a["group"], *pair(a["kernel_shape"], 1), *pair(a["strides"], 1),
         *pair(a["dilations"], 1), *pair(a["pads"][:len(a["kernel_shape"])], 0), int(w_zero.any()), int(packed),
         dw4, work]
    return (ctypes.c_int32 * len(f))(*f)


@pytest.mark.full
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_=qconvs(), budget=BUDGETS)
def test_qconv_scratch_is_the_kernels(facts, conv_, budget):
    """QLinearConv's kernels on each target, fitted to the budget as the compiler fits them: the work it gives
    the target's paths past the patch block or the rows (aotc_qconv_params.work) is what the kernel takes of
    it by aotc_quant.h's function for those paths (all of it; none on targets whose paths take none), all
    they can use where the budget is unlimited, and the scratch is what the kernel lays out
    (aotc_qconv_*_scratch_bytes), plus the ADD's tmp on hosts."""
    node, graph = conv_
    kernels = quant.OPS[node.op].kernels
    for target in TARGETS[:4]:
        cand = next(k for k in kernels if k.applies_on(node, graph, target))
        choice = cand.fit(node, graph, budget)
        if choice is None:  # (the DSP depthwise path, where no run fits: the next candidate)
            cand = next(k for k in kernels[kernels.index(cand) + 1:] if k.applies_on(node, graph, target))
            choice = cand.fit(node, graph, budget)
        plan, isa = choice.detail, cand.facts.isa
        patches = isinstance(plan, quant.PatchPlan)
        kind = "patches" if patches else "depthwise"
        tile, packed, dw4 = (plan.tile, plan.packed, 0) if patches else (0, False, plan.run)
        fields = _qconv_fields(node, graph, packed, dw4, plan.work)
        # the work the kernel takes of what the plan gives is all of it (none where the target's paths take none)
        taken = facts.facts_qconv(f"{kind}_{isa}".encode(), fields, tile) if isa in ("avx512", "arm-dsp") else 0
        assert plan.work == taken, (kind, isa, plan, taken)
        tmp = graph.tensors["y"].nbytes if patches and plan.tmp else 0
        assert choice.scratch == facts.facts_qconv(kind.encode(), fields, tile) + tmp, (kind, isa, plan, choice)
        if isa == "avx512":  # beside a patch block, the AVX-512 paths' work only where the step spares it
            assert plan.work == 0 or tile == 0 or choice.scratch - tmp <= budget - tmp
            if budget >= 1 << 40:
                most = facts.facts_qconv(f"{kind}_{isa}".encode(), _qconv_fields(node, graph, packed, dw4, 2**31 - 1),
                                         tile)
                assert plan.work == most, (kind, plan, most)


def test_winograd_limits_are_the_headers():
    """The limits each variant's bands keep to are the ones its generated code checks (winograd.assumes)."""
    for v in winograd.VARIANTS:
        for attr, name in v.macros.items():
            assert getattr(v, attr) == c_defines.define("aotc_conv.h", name) == winograd.assumes(v)[name]
    assert math.prod([gemm.PANEL, gemm.KC, 4]) == gemm.WORK_BYTES
