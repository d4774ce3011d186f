"""Host ops of the 'quant' family: int8 / uint8 kernels (runtime_c/kernels/quant/: quant_impl.h instantiated per type).

The QLinear ops arrive canonical (aot/frontend/onnx/canonical/quant.py): every scale and zero point is a
constant, so all of a node's quantisation arithmetic is done here, once: the requantisation scales
x_scale * w_scale / y_scale (in onnxruntime's float order), the bias with the input's zero point
folded in (QGemm), weights transposed and shifted to int8, tables for lookups and requantising
copies. The kernels only accumulate integers and requantise. QDQ models reach the same ops through
aot/passes/qdq.py, so there is one set of kernels for both forms of int8 model.

A fused Relu / Clip is the node's `qmin` / `qmax` (the output's integer range narrowed).
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import numpy as np

from aot.csource.format import c_float, c_ints
from aot.ir import Graph, Node
from aot.kernels.base import Candidate, HostOp, KernelChoice, KernelFacts, NodeContext, TargetTraits
from aot.kernels.c_defines import define
from aot.kernels.elementwise import broadcast_layout
from aot.kernels.pool import pool_params
from aot.qmath import (
    INT_RANGE,
    dequantize,
    global_avgpool_scale,
    qadd_constants,
    quantize,
    requant_scale,
    softmax_output_scale,
    softmax_table,
)

INT8 = ("int8", "uint8")
SUFFIX = {"int8": "i8", "uint8": "u8", "int32": "i32"}  # as DTYPE_SUFFIX
LANES = define("aotc_quant.h", "AOTC_QCONV_LANES")


def _scalar(ctx: NodeContext, k: int) -> float | int:
    return ctx.const(ctx.inputs[k]).reshape(-1)[0].item()


def out_range(ctx: NodeContext, y_zero: int) -> tuple[str, str]:
    """(y_lo, y_hi): the output clamp less the zero point (a fused activation narrows the range)."""
    lo, hi = INT_RANGE[ctx.dtype(ctx.outputs[0])]
    lo, hi = max(lo, ctx.attrs.get("qmin", lo)), min(hi, ctx.attrs.get("qmax", hi))
    return c_float(float(lo - y_zero)), c_float(float(hi - y_zero))


def int8_weights(w: np.ndarray, w_zero: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights as int8 and their zero points as int32: uint8 weights less 128, with their zero
    points less 128, so w - w_zero is unchanged and one kernel takes both."""
    if w.dtype == np.uint8:
        return (w.astype(np.int16) - 128).astype(np.int8), w_zero.astype(np.int32) - 128
    return w.astype(np.int8), w_zero.astype(np.int32)


def interleave_rows(w: np.ndarray, block: int) -> np.ndarray:
    """Rows [n, k] (n a multiple of block, k of 4) in blocks of `block` rows, each quad of k the block's
    rows' 4 bytes in turn: the same bytes, laid out as a kernel reads them. Blocks of 4 for the DSP
    dense paths (quant_dsp.h's aotc_dsp_gemv4_il: two 8-byte loads a quad instead of four word
    loads); blocks of 16 for the dense VNNI conv (quant_avx512vnni.h's qconv_dense, aotc_qconv_wrow)."""
    n, k = w.shape
    return np.ascontiguousarray(w.reshape(n // block, block, k // 4, 4).transpose(0, 2, 1, 3)).reshape(n, k)


def check_8bit(node: Node, graph: Graph, data: tuple[int, ...]) -> str | None:
    """Inputs `data` 8-bit, and the output of the first one's type."""
    reason = check_8bit_inputs(node, graph, data)
    if reason:
        return reason
    x, y = graph.tensors[node.inputs[data[0]]].dtype, graph.tensors[node.outputs[0]].dtype
    if x != y:
        return f"input {x} and output {y} differ in type: not supported"
    return None


# --- QuantizeLinear / DequantizeLinear ------------------------------------------------------

def _qaxis(ctx: NodeContext, data: str) -> str:
    shape = ctx.shape(data)
    scale = np.asarray(ctx.const(ctx.inputs[1]), np.float32).reshape(-1)
    zero = np.asarray(ctx.const(ctx.inputs[2]), np.int32).reshape(-1)
    if scale.size == 1:
        outer, channels, inner = 1, 1, math.prod(shape)
    else:
        axis = ctx.attrs["axis"]
        outer, channels, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    return ctx.params("aotc_qaxis", {
        "outer": str(outer), "channels": str(channels), "inner": str(inner),
        "scale": ctx.const_array("scale", scale), "zero": ctx.const_array("zero", zero),
    }, comment=f"{ctx.node.op} {list(shape)}: "
               + ("per tensor" if scale.size == 1 else f"along axis {ctx.attrs['axis']}"))


def _emit_quantize(ctx: NodeContext) -> None:
    y = ctx.outputs[0]
    ctx.call(f"aotc_quantize_{SUFFIX[ctx.dtype(y)]}", _qaxis(ctx, ctx.inputs[0]), ctx.ptr(ctx.inputs[0]), ctx.ptr(y))


def _emit_dequantize(ctx: NodeContext) -> None:
    x = ctx.inputs[0]
    ctx.call(f"aotc_dequantize_{SUFFIX[ctx.dtype(x)]}", _qaxis(ctx, x), ctx.ptr(x), ctx.ptr(ctx.outputs[0]))


def _check_quantize(node: Node, graph: Graph) -> str | None:
    y = graph.tensors[node.outputs[0]].dtype
    return None if y in INT8 else f"quantizing to {y} is not supported (int8 and uint8 are)"


def _check_dequantize(node: Node, graph: Graph) -> str | None:
    x = graph.tensors[node.inputs[0]].dtype
    return None if x in SUFFIX else f"dequantizing {x} is not supported (int8, uint8 and int32 are)"


# --- QLinearConv --------------------------------------------------------------------------

def _conv_dims(ctx: NodeContext) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Input and output as N, C, H, W (a 1-D conv has height 1)."""
    xs, ys = ctx.shape(ctx.inputs[0]), ctx.shape(ctx.outputs[0])
    if len(xs) == 3:
        return (*xs[:2], 1, xs[2]), (*ys[:2], 1, ys[2])
    return xs, ys


def _pair(values: list[int], fill: int) -> list[int]:
    return [fill] * (2 - len(values)) + list(values)


def _patch_length(node: Node, graph: Graph) -> int:
    """cin / group x kernel taps, rounded up to whole quads (the kernel's 4-way byte dot products)."""
    return -(-math.prod(graph.tensors[node.inputs[3]].shape[1:]) // 4) * 4


class PatchPlan(NamedTuple):
    """QLinearConv on patches: output positions a patch block (0: no scratch), and whether the
    weights are packed for AVX-512 VNNI's dense path (aotc_qconv_params.w_packed)."""

    tile: int
    packed: bool = False
    # packed in the order of quant_avx512vnni.h's qconv_rows (w_packed 2: quads of 4 input channels at one tap),
    # which takes the conv (_rows_fit)
    rows: bool = False
    # a QLinearConvAdd on hosts: the conv first fills tmp, the scratch's last output-size bytes (_fit_residual)
    tmp: bool = False
    work: int = 0  # bytes past the patch block for the path's own buffers (aotc_qconv_params.work)
    lanes: int = 1  # --threads: a lane of scratch (the patch block, then the work) a thread (aotc_qconv_params.lanes)


class DepthwisePlan(NamedTuple):
    """Depthwise QLinearConv: the DSP path's run of output positions (aotc_qconv_params.dw4; 0: its
    one-channel path or another core's), and the bytes past the rows for the path's own buffers (work)."""

    run: int = 0
    work: int = 0
    lanes: int = 1  # --threads: a lane of scratch (the rows, then the work) a thread (aotc_qconv_params.lanes)


# aotc_quant.h's limits of the AVX-512 VNNI paths (quant_avx512vnni.h) and of the DSP extension's conv path,
# whose buffers are the plan's scratch (aotc_qconv_*_work_bytes, which the functions below compute as well)
QX86 = {n: define("aotc_quant.h", f"AOTC_QX86_{n}")
        for n in ("DBUF", "DKEEP", "DHEAD", "KH", "PAT", "WBUF", "KG", "CACHE", "ALIGN", "RSLACK")}
QDW_FLAT_WORDS, DSP_KCHUNK = define("aotc_quant.h", "AOTC_QDW_FLAT_WORDS"), define("aotc_quant.h", "AOTC_DSP_KCHUNK")
# aotc_qx86_wcache: the windows of the last blocks (int32 col, lanes, base, next; their byte indices; offsets)
QX86_WCACHE = (4 * (2 * QX86["CACHE"] + QX86["CACHE"] * QX86["KG"] + 1) + QX86["CACHE"] * QX86["KG"] * 64
               + 4 * QX86["KG"] * 64)


class ConvShape(NamedTuple):
    """A QLinearConv as aotc_qconv_params has it (a 1-D conv with height 1)."""

    cg: int  # input channels a group
    mg: int  # output channels a group
    k_h: int
    k_w: int
    dil_w: int
    out_h: int
    out_w: int
    w_zero_any: bool  # some weight zero point is not 0 (uint8 weights: not 128)


def _conv_shape(node: Node, graph: Graph) -> ConvShape:
    a = node.attrs
    x, y = graph.tensors[node.inputs[0]].shape, graph.tensors[node.outputs[0]].shape
    k_h, k_w = _pair(a["kernel_shape"], 1)
    out_h, out_w = (1, y[-1]) if len(y) == 3 else y[2:]
    w_zero = graph.const(node.inputs[5])
    shift = 128 if graph.tensors[node.inputs[3]].dtype == "uint8" else 0
    w_zero_any = w_zero is None or bool((np.asarray(w_zero, np.int64) - shift).any())
    return ConvShape(x[1] // a["group"], y[1] // a["group"], k_h, k_w, _pair(a["dilations"], 1)[1], out_h, out_w,
                     w_zero_any)


def _dense_plan(s: ConvShape, packed: bool) -> tuple[int, int, int] | None:
    """qconv_dense's kept blocks' stride, its work before them (alignment and a pass's weights) and the most
    blocks it keeps (aotc_qx86_dense_plan); None where the path does not take the shape."""
    taps = s.k_h * s.k_w
    kq = -(-s.cg * taps // 4)
    period = taps // (4 if taps % 4 == 0 else 2 if taps % 2 == 0 else 1)
    npat = min(period, kq)
    stride = QX86["DHEAD"] + npat * 128
    room = QX86["DBUF"] - QX86["DKEEP"] * stride
    if (s.k_w < 3 or taps > 64 or s.k_h > QX86["KH"] or npat > QX86["PAT"] or (s.k_w - 1) * s.dil_w > 62
            or kq * 32 > room or (packed and s.mg % 16)):
        return None
    nmax = 16 if packed or kq * 64 <= room else 8
    pass_ = max(room // (kq * 64), 1) * 16 if packed else room // (kq * 4 * nmax) * nmax
    wbytes = 0 if packed else (pass_ if pass_ < s.mg else -(-s.mg // nmax) * nmax) * kq * 4
    wb64 = -(-wbytes // 64) * 64
    count = min((QX86["DBUF"] - wb64) // stride, s.out_h * s.out_w)
    return stride, QX86["ALIGN"] + wb64, count


def _dense_vnni(node: Node, graph: Graph) -> bool:
    """The shapes quant_avx512vnni.h's qconv_dense takes, in whole blocks of 16 output channels: their
    weights are packed at compile time as that path reads them (else it re-orders them every run).
    The same tests as the C (aotc_qx86_dense_plan), on its constants (AOTC_QX86_*)."""
    s = _conv_shape(node, graph)
    return s.mg % 16 == 0 and _dense_plan(s, True) is not None


def _rows_fit(node: Node, graph: Graph, avail: int) -> int:
    """The output rows a range of qconv_rows takes in `avail` bytes of scratch (aotc_qx86_rows_fit, the same tests on
    its constants); 0 where that path does not take the conv: weights in its order run on it or on plain loops."""
    a = node.attrs
    x, y = graph.tensors[node.inputs[0]].shape, graph.tensors[node.outputs[0]].shape
    if len(x) != 4 or len(y) != 4:
        return 0
    s = _conv_shape(node, graph)
    if (a["group"] != 1 or x[1] % 4 or y[1] % 16 or list(a["strides"]) != [1, 1] or _pair(a["dilations"], 1) != [1, 1]
            or s.w_zero_any or s.out_w < 16 or not (2 <= s.k_h <= 16 and 2 <= s.k_w <= 16) or min(a["pads"]) < 0):
        return 0
    rows = (avail - QX86["ALIGN"] - QX86["RSLACK"]) // (x[1] * _rows_width(node, graph)) - s.k_h
    return 0 if rows < 1 else min(rows, s.out_h)


def _rows_pays(node: Node, graph: Graph) -> bool:
    """Whether qconv_rows saves more than it costs against qconv_dense: its grid computes wp - out_w positions a row
    that no output takes (and copies the input rows once: about 2 % more), where the dense path makes each block's
    patch quads while summing the first 8 of the mg output channels (x86_dense_dotq3x8, about 1.8 x the time of its
    multiply-adds: 0.8 x 8 / mg of the conv). ResNet-18 QDQ (Zen 5): 56 x 56 with 64 channels 5-6 % less, 28 x 28
    with 128 1-2 % more (the grid's 29th column)."""
    s, wp = _conv_shape(node, graph), _rows_width(node, graph)
    return (wp - s.out_w) / wp + 0.02 < 6.4 / s.mg


def _rows_width(node: Node, graph: Graph) -> int:
    """The width of qconv_rows's interleaved input rows: the left pad, the row, the right pad past the left's."""
    pl, pr = node.attrs["pads"][1], node.attrs["pads"][3]
    return pl + graph.tensors[node.inputs[0]].shape[-1] + max(pr - pl, 0)


def _windows_work(s: ConvShape, tile: int) -> int:
    """qconv_windows's work bytes with a patch block of `tile` positions (aotc_qconv_windows_work_bytes, all it
    takes); 0 where the path does not take the shape."""
    kg = s.k_h * -(-s.k_w // 4)
    kq = s.cg * kg
    kp = -(-s.cg * s.k_h * s.k_w // 4) * 4
    slots = -(-tile // LANES) * LANES * kp // (64 * kq)
    chunk = min(QX86["WBUF"] // (kq * 4) // 8 * 8, s.mg)
    if (s.cg < 2 or kg > QX86["KG"] or slots > 16 or (slots < 1 and s.w_zero_any) or chunk < 8
            or 3 * s.dil_w >= 64 or s.k_h * s.k_w < 2):
        return 0
    return QX86["ALIGN"] + QX86_WCACHE + 4 * (16 * QX86["KG"] + 16 * 16) + chunk * kq * 4


def x86_patches_work(node: Node, graph: Graph, tile: int, packed: bool, room: int) -> int:
    """The work an AVX-512 host's QLinearConv on patches takes past its patch block of `tile` positions, of the
    `room` bytes its step spares (as aotc_qconv_patches_x86_work_bytes takes it, in the kernel's order): the
    dense path's with as many kept blocks as fit (all it can use where they do), else the windows path's (not
    with packed weights), else with no patch block one block of 16 positions' patch; where none fits, with a
    patch block none (qconv_patches_vnni then runs on it), without one the least of those, above `room`."""
    s = _conv_shape(node, graph)
    dense = _dense_plan(s, packed)
    windows = 0 if packed else _windows_work(s, tile)
    block = QX86["ALIGN"] + 16 * _patch_length(node, graph)
    block = block if tile == 0 and block - QX86["ALIGN"] <= QX86["WBUF"] else 0

    def taken(work: int) -> int:  # what the kernel takes of `work` (aotc_qconv_patches_x86_work_bytes)
        if dense and work >= dense[1] + dense[0]:
            stride, front, count = dense
            return front + min(count, (work - front) // stride) * stride
        return windows if windows and work >= windows else block if block and work >= block else 0

    if taken(room):
        return taken(room)
    # where nothing fits beside a patch block, qconv_patches_vnni runs on it; without one the plain loops would
    # (8x slower on a ResNet's convs): the least work that keeps a VNNI path, above the step's spare memory
    least = [w for w in (dense[1] + dense[0] if dense else 0, windows, block) if w]
    return taken(min(least)) if tile == 0 and least else 0


def dsp_patches_work(node: Node, graph: Graph) -> int:
    """The DSP extension's conv path: a channel pair's weights widened, up to DSP_KCHUNK quads at a time
    (aotc_qconv_dsp_work_bytes)."""
    return 16 * min(_patch_length(node, graph) // 4, DSP_KCHUNK)


def _patches_kernel(node: Node, graph: Graph) -> str:
    """The C function that runs a QLinearConv (QLinearConvAdd: with its residual ADD) on patches, by input type."""
    kind = "patches_add" if node.op == "QLinearConvAdd" else "patches"
    return f"aotc_qconv_{kind}_{SUFFIX[graph.tensors[node.inputs[0]].dtype]}"


def avx2_patches_work(node: Node, graph: Graph, tile: int, room: int) -> int:
    """The work of the AVX2 path (quant_impl.h qconv_patches_avx2, which a generic host's build with AVX2 takes):
    every output channel's weights widened to 16-bit pairs once a call (aotc_qconv_avx2_work_bytes), where `room`
    holds them and the plane takes more than two of the path's blocks (half the tile's positions: pairs of 16
    bits in the patch block's bytes); else 0, and the path widens each block's weights again for every block of
    positions (8 % of ResNet-18 QDQ's time at x86-64-v3)."""
    s = _conv_shape(node, graph)
    block = -(-tile // LANES) * LANES // 2 // LANES * LANES
    need = node.attrs["group"] * -(-s.mg // 4) * _patch_length(node, graph) // 4 * 32
    return need if block >= LANES and s.out_h * s.out_w > 2 * block and need <= room else 0


def _fit_patches(node: Node, graph: Graph, budget: int, host: bool = True, isa: str = "",
                 least: bool = False, vnni: bool = False) -> KernelChoice | None:
    """The largest tile of output positions whose patches fit the step's spare memory; where none fits, on
    hosts no patch block (tile 0: the kernels take the patch in the work block or need none). On hosts, the
    weights packed where the dense VNNI path takes the shape. isa: the paths whose work past the patch block
    the plan gives (aotc_qconv_params.work): "avx512" (quant_avx512vnni.h's, which a build with AVX-512 VNNI
    takes: what fits beside the patches), "arm-dsp" (the DSP extension's widened weights: always, 2 KiB at
    most), "avx2" (the AVX2 path's widened weights where they fit beside the patches: a generic host's plan), ""
    none. `least`: a RAM budget's "tiles", on the M-profile cores down to one lane of positions. `vnni`: the
    build has AVX-512 VNNI (TargetTraits.vnni), so qconv_rows may take the conv (without VNNI its w_packed 2 weights
    are gathered by the slower paths)."""
    k = _patch_length(node, graph)
    positions = math.prod(graph.tensors[node.outputs[0]].shape[2:])
    packed = host and _dense_vnni(node, graph)
    kernel = _patches_kernel(node, graph)
    def choice(tile: int) -> KernelChoice:  # the kernel gathers whole lanes of positions
        tile = min(tile, positions)
        patch = -(-tile // LANES) * LANES * k
        work = (x86_patches_work(node, graph, tile, packed, budget - patch) if isa == "avx512"
                else dsp_patches_work(node, graph) if isa == "arm-dsp"
                else avx2_patches_work(node, graph, tile, budget - patch) if isa == "avx2" else 0)
        rows = (isa == "avx512" and vnni and packed and _rows_fit(node, graph, patch + work) > 0
                and _rows_pays(node, graph))
        return KernelChoice(kernel, patch + work, detail=PatchPlan(tile, packed, work=work, rows=rows))

    # on the M-profile cores (small stacks, and the speed there is counted) never a smaller block than the
    # largest whose patches take at most PATCH_FLOOR bytes, even above the tight bound: the DSP path widens
    # each channel pair's weights once a block, and blocks of 8 positions cost ResNet-8 1.2x the
    # instructions of blocks of 32
    patches = lambda c: c.scratch - c.detail.work  # noqa: E731
    floor = None if host else PATCH_TILES[-1] if least else \
        next((t for t in PATCH_TILES if patches(choice(t)) <= PATCH_FLOOR), PATCH_TILES[-1])
    for tile in PATCH_TILES:
        if patches(choice(tile)) <= budget or tile == floor:
            return choice(tile)
    # on hosts the kernels' paths without a patch block (the dense VNNI one is as fast as with one)
    return choice(0)


# output positions per patch block, largest first (the kernel reads each weight row once per
# block); at most AOTC_QCONV_PATCH_TILE
PATCH_TILES = (64, 32, 16)
PATCH_FLOOR = 9216  # bytes of patches the M-profile plan gives a conv where its step spares less (_fit_patches)
def _is_depthwise(node: Node, graph: Graph) -> bool:
    x, y = graph.tensors[node.inputs[0]].shape, graph.tensors[node.outputs[0]].shape
    return node.attrs["group"] == x[1] == y[1] > 1


def _depthwise_scratch(node: Node, graph: Graph) -> int:
    """k_h padded input rows (AOTC_QCONV_DW_ROW), one byte an element."""
    a = node.attrs
    out_w = graph.tensors[node.outputs[0]].shape[-1]
    k_h, k_w = _pair(a["kernel_shape"], 1)
    _, sw = _pair(a["strides"], 1)
    _, dw = _pair(a["dilations"], 1)
    return k_h * (-(-out_w // LANES) * LANES * sw + (k_w - 1) * dw)


DW_SPAN, DW_RUN = define("aotc_quant.h", "AOTC_QCONV_DW_SPAN"), define("aotc_quant.h", "AOTC_QCONV_DW_RUN")


def _depthwise4_runs(node: Node, graph: Graph) -> tuple[int, list[int]]:
    """The 4-channel path's span bytes (4 channels' padded plane, a word a position) and the runs of
    output positions it can sum at once, largest first: whole output rows, up to DW_RUN positions or
    the plane. (0, []) where the kernel keeps its one-channel path (not int8, not 3 x 3 with dilation
    1, channels not a multiple of 4, or a span over DW_SPAN words)."""
    a = node.attrs
    y = graph.tensors[node.outputs[0]].shape
    oh, ow = (1, y[-1]) if len(y) == 3 else y[2:]
    sh, sw = _pair(a["strides"], 1)
    if (graph.tensors[node.inputs[0]].dtype != "int8" or list(_pair(a["kernel_shape"], 1)) != [3, 3]
            or _pair(a.get("dilations", [1, 1]), 1) != [1, 1] or y[1] % 4):
        return 0, []
    span = ((oh - 1) * sh + 3) * ((ow - 1) * sw + 3)
    if span > DW_SPAN:
        return 0, []
    most = min(oh * ow, max(ow, DW_RUN))
    return 4 * span, [ow * r for r in range(max(most // ow, 1), 0, -1)]


def _depthwise_kernel(node: Node, graph: Graph) -> str:
    return f"aotc_qconv_depthwise_{SUFFIX[graph.tensors[node.inputs[0]].dtype]}"


def _depthwise_dsp(node: Node, graph: Graph, budget: int) -> KernelChoice | None:
    """The 4-channel path with the longest run whose scratch (AOTC_QCONV_DW4_SCRATCH) fits the memory
    the step can spare (else the next candidate: one channel at a time, its few padded rows)."""
    rows = _depthwise_scratch(node, graph)
    span, runs = _depthwise4_runs(node, graph)
    for run in runs:
        if span + 16 * run <= budget:
            return KernelChoice(_depthwise_kernel(node, graph), max(rows, span + 16 * run), detail=DepthwisePlan(run))
    return None


def x86_depthwise_work(node: Node, graph: Graph) -> int:
    """An AVX-512 host's depthwise path over the plane (depthwise_flat, with VBMI): the window cache, each
    channel's weight words and the start of its sums (aotc_qconv_depthwise_x86_work_bytes); 0 where it
    does not take the node (the path over padded rows, which needs none, then runs)."""
    s = _conv_shape(node, graph)
    channels, kg = graph.tensors[node.outputs[0]].shape[1], s.k_h * -(-s.k_w // 4)
    if s.w_zero_any or kg > QX86["KG"] or channels * kg > QDW_FLAT_WORDS or 3 * s.dil_w >= 64:
        return 0
    return QX86["ALIGN"] + QX86_WCACHE + 4 * channels * (kg + 1)


def _depthwise_rows(node: Node, graph: Graph, budget: int, isa: str = "") -> KernelChoice:
    """One channel at a time through its padded rows; on AVX-512 hosts the work of the path over the plane past
    them, above the step's spare memory if need be (without it the path over padded rows runs: on MobileNet-v2's
    first depthwise conv that cost the whole network 13 % more time)."""
    rows = _depthwise_scratch(node, graph)
    work = x86_depthwise_work(node, graph) if isa == "avx512" else 0
    return KernelChoice(_depthwise_kernel(node, graph), rows + work, detail=DepthwisePlan(work=work))


# --threads: the fewest multiply-adds a conv, and taps a depthwise conv, splits over the pool (the C checks them too)
POOL_MIN_MACS = define("aotc_quant.h", "AOTC_QCONV_POOL_MIN_MACS")
POOL_MIN_TAPS = define("aotc_quant.h", "AOTC_QCONV_POOL_MIN_TAPS")


def conv_macs(node: Node, graph: Graph) -> int:
    """A QLinearConv's multiply-adds: output elements x input channels a group x kernel taps (as the C counts them)."""
    w = graph.tensors[node.inputs[3]].shape
    return math.prod(graph.tensors[node.outputs[0]].shape) * math.prod(w[1:])


def pool_lanes(node: Node, graph: Graph, threads: int) -> int:
    """The lanes of scratch a conv takes on an AVX-512 host: one a thread where it splits over a --threads pool
    (quant_avx512vnni.h: output positions, or channels, a thread each in its own lane), else 1."""
    least = POOL_MIN_TAPS if _is_depthwise(node, graph) else POOL_MIN_MACS
    return threads if threads > 1 and conv_macs(node, graph) >= least else 1


def on_lanes(choice: KernelChoice, lanes: int, extra: int = 0) -> KernelChoice:
    """`choice` (one lane's scratch, and `extra` bytes after the lanes) with `lanes` lanes of it, each rounded up to
    64 bytes (aotc_qconv_lane_bytes)."""
    if lanes <= 1:
        return choice
    lane = -(-(choice.scratch - extra) // 64) * 64
    one = {"rows": False} if isinstance(choice.detail, PatchPlan) else {}  # qconv_rows runs on one thread
    return KernelChoice(choice.kernel, lanes * lane + extra, detail=choice.detail._replace(lanes=lanes, **one))


# --threads: the bytes a lane may take whatever the step spares (the arena grows by the other lanes): with its share
# of the spare memory alone, ResNet-18's first residual convs had no patch block (tile 0) at two threads, and ran
# their slower path (13 % more work than one thread's)
LANE_FLOOR = 128 * 1024


def lane_budget(budget: int, lanes: int) -> int:
    """The spare memory each of `lanes` lanes of a conv's scratch is fitted to."""
    return budget if lanes <= 1 else max(budget // lanes, LANE_FLOOR)


def _x86_patches_on(node: Node, graph: Graph, budget: int, t: TargetTraits) -> KernelChoice | None:
    """A lane a thread, each fitted to its share of the step's spare memory; but on the dense path each keeps at
    least the blocks of index vectors of an output row's columns and two more (the arena grows by a few KiB where
    the step spares less): with less, ResNet-18's stem kept 2 blocks a thread for its 7 columns and made each of
    its 784 blocks again (3 % of the run), or none, and ran the slower patch path (12 %)."""
    lanes = pool_lanes(node, graph, t.threads)
    choice = _fit_patches(node, graph, lane_budget(budget, lanes), isa="avx512", vnni=t.vnni)
    dense = _dense_plan(s := _conv_shape(node, graph), choice.detail.packed)
    if lanes > 1 and dense:
        stride, front, count = dense
        least = front + min(count, -(-s.out_w // 16) + 2) * stride
        if choice.detail.work < least:
            choice = KernelChoice(choice.kernel, choice.scratch + least - choice.detail.work,
                                  detail=choice.detail._replace(work=least))
    return on_lanes(choice, lanes)


def _x86_depthwise_on(node: Node, graph: Graph, budget: int, t: TargetTraits) -> KernelChoice | None:
    return on_lanes(_depthwise_rows(node, graph, budget, "avx512"), pool_lanes(node, graph, t.threads))


# a RAM budget's "tiles" (Candidate.fit_least) for the M-profile patch paths: blocks below PATCH_FLOOR
_DSP_LEAST = partial(_fit_patches, host=False, isa="arm-dsp", least=True)
_M_LEAST = partial(_fit_patches, host=False, least=True)
M_PROFILE = KernelFacts(isa="m-profile")  # the Cortex-M cores' paths: small stacks, blocks in the plan's scratch
ARM_DSP = KernelFacts(isa="arm-dsp")  # ... with the DSP extension: its conv path's widened weights in the scratch too
# an AVX-512 host: quant_avx512vnni.h's paths (a build with VNNI takes them) have their buffers in the scratch, and
# with --threads split the larger convs over the pool (a lane of scratch a thread)
AVX512 = KernelFacts(isa="avx512", threaded=True)
QCONV_KERNELS = (
    # On the M-profile boards (the DSP extension's SMLAD) 4 channels at a time where the shape allows
    Candidate("aotc_qconv_depthwise_i8", _depthwise_dsp, applies=lambda n, g, t: _is_depthwise(n, g),
              facts=M_PROFILE, also=("aotc_qconv_depthwise_u8",)),
    Candidate("aotc_qconv_depthwise_i8", lambda n, g, budget: _depthwise_rows(n, g, budget, "avx512"),
              applies=lambda n, g, t: _is_depthwise(n, g), facts=AVX512, also=("aotc_qconv_depthwise_u8",),
              fit_on=_x86_depthwise_on),
    Candidate("aotc_qconv_depthwise_i8", _depthwise_rows,
              applies=lambda n, g, t: _is_depthwise(n, g), also=("aotc_qconv_depthwise_u8",)),
    Candidate("aotc_qconv_patches_i8", lambda n, g, budget: _fit_patches(n, g, budget, host=False, isa="arm-dsp"),
              facts=ARM_DSP, also=("aotc_qconv_patches_u8",), fit_least=_DSP_LEAST),
    Candidate("aotc_qconv_patches_i8", lambda n, g, budget: _fit_patches(n, g, budget, host=False), facts=M_PROFILE,
              also=("aotc_qconv_patches_u8",), fit_least=_M_LEAST),
    Candidate("aotc_qconv_patches_i8", lambda n, g, budget: _fit_patches(n, g, budget, isa="avx512"), facts=AVX512,
              also=("aotc_qconv_patches_u8",), fit_on=_x86_patches_on),
    # (the AVX2 path's widened weights where the bundle is for this machine: a generic x86 host's build takes it)
    Candidate("aotc_qconv_patches_i8", _fit_patches, also=("aotc_qconv_patches_u8",),
              fit_on=lambda n, g, budget, t: _fit_patches(n, g, budget, isa="avx2" if t.host else "")),
)


def conv_geometry(ctx: NodeContext) -> dict[str, str]:
    """The shape fields of aotc_qconv_params (QLinearConv and ConvInteger alike)."""
    a = ctx.attrs
    (n, c, h, w), (_, m, oh, ow) = _conv_dims(ctx)
    kh, kw = _pair(a["kernel_shape"], 1)
    sh, sw = _pair(a["strides"], 1)
    dh, dw = _pair(a["dilations"], 1)
    pt, pl = _pair(a["pads"][:len(a["kernel_shape"])], 0)
    return {"batch": str(n), "in_c": str(c), "in_h": str(h), "in_w": str(w), "out_c": str(m), "out_h": str(oh),
            "out_w": str(ow), "group": str(a["group"]), "k_h": str(kh), "k_w": str(kw), "stride_h": str(sh),
            "stride_w": str(sw), "dil_h": str(dh), "dil_w": str(dw), "pad_top": str(pt), "pad_left": str(pl)}


def _emit_qconv(ctx: NodeContext) -> None:
    p, w_arg, patches = _qconv_parts(ctx)
    if patches:
        ctx.call(ctx.choice.kernel, p, str(ctx.choice.detail.tile), ctx.ptr(ctx.inputs[0]), w_arg,
                 ctx.ptr(ctx.outputs[0]), ctx.scratch("uint8_t"))
    else:
        ctx.call(ctx.choice.kernel, p, ctx.ptr(ctx.inputs[0]), w_arg, ctx.ptr(ctx.outputs[0]),
                 ctx.scratch(ctx.ctype(ctx.inputs[0])))


def _qconv_parts(ctx: NodeContext) -> tuple[str, str, bool]:
    """A QLinearConv's aotc_qconv_params, its weights argument, and whether it runs on patches."""
    a = ctx.attrs
    m = ctx.shape(ctx.outputs[0])[1]
    w_zero = np.broadcast_to(ctx.const(ctx.inputs[5]).reshape(-1), (m,))
    weights, w_zero = int8_weights(ctx.const(ctx.inputs[3]), w_zero)
    scale = np.broadcast_to(requant_scale(_scalar(ctx, 1), ctx.const(ctx.inputs[4]), _scalar(ctx, 6)), (m,))
    bias = ctx.const(ctx.inputs[8]) if len(ctx.inputs) > 8 and ctx.inputs[8] else np.zeros(m, np.int32)
    bias = np.asarray(bias, np.int64).reshape(-1)
    x_zero = int(_scalar(ctx, 2))
    patches = isinstance(ctx.choice.detail, PatchPlan)  # else the depthwise kernel (detail: a DepthwisePlan)
    if patches:
        # the patches hold x + offset (unsigned bytes) with rows padded to kp by the zero point, and
        # the weight rows are padded with zeros; then with zp = x_zero + offset,
        # sum (w - wz)(x - xz) = sum w x' - wz sum x' + (kp zp wz - zp sum w), the last part constant
        kp = _patch_length(ctx.node, ctx.graph)
        zp = x_zero + (128 if ctx.dtype(ctx.inputs[0]) == "int8" else 0)
        rows = weights.reshape(m, -1)
        weights = np.zeros((m, kp), np.int8)
        weights[:, :rows.shape[1]] = rows
        bias = bias + kp * zp * w_zero.astype(np.int64) - zp * rows.astype(np.int64).sum(1)
        if ctx.choice.detail.rows:  # qconv_rows's quads: 4 input channels at one tap (kp: whole quads of channels)
            taps = math.prod(ctx.attrs["kernel_shape"])
            weights = np.ascontiguousarray(weights.reshape(m, -1, 4, taps).transpose(0, 1, 3, 2)).reshape(m, kp)
        if ctx.choice.detail.packed:
            weights = interleave_rows(weights, 16)
    y_zero = int(_scalar(ctx, 7))
    lo, hi = out_range(ctx, y_zero)
    p = ctx.params("aotc_qconv_params", {
        **conv_geometry(ctx),
        "x_zero": str(x_zero), "y_zero": str(y_zero), "y_lo": lo, "y_hi": hi,
        "scale": ctx.const_array("scale", np.ascontiguousarray(scale, np.float32)),
        "bias": ctx.const_array("bias", bias.astype(np.int32)),
        "w_zero": ctx.const_array("w_zero", np.ascontiguousarray(w_zero, np.int32)),
        "w_zero_any": str(int(bool(w_zero.any()))),
        "dw4": "0" if patches else str(ctx.choice.detail.run),
        "w_packed": str(2 if patches and ctx.choice.detail.rows else int(patches and ctx.choice.detail.packed)),
        **({"work": str(ctx.choice.detail.work)} if ctx.choice.detail.work else {}),
        **({"lanes": str(ctx.choice.detail.lanes)} if ctx.choice.detail.lanes > 1 else {}),
    }, comment=f"QLinearConv {list(ctx.shape(ctx.inputs[0]))} -> {list(ctx.shape(ctx.outputs[0]))}: kernel "
               f"{a['kernel_shape']}, strides {a['strides']}, pads {a['pads']}, group {a['group']}"
               + ("; bias with the input zero point folded in" if patches else "")
               + ("; weights in blocks of 16 channels, quad-major" if patches and ctx.choice.detail.packed else "")
               + (", quads of 4 input channels a tap" if patches and ctx.choice.detail.rows else ""))
    as_stored = not patches and ctx.dtype(ctx.inputs[3]) == "int8"
    if patches and ctx.choice.detail.packed:  # int32 words, as the dense path reads them
        w_arg = f"(const int8_t *){ctx.const_array('w', weights.view(np.int32))}"
    else:
        w_arg = ctx.ptr(ctx.inputs[3]) if as_stored else ctx.const_array("w", weights)
    return p, w_arg, patches


def _emit_qconv_add(ctx: NodeContext) -> None:
    """QLinearConv with its residual QLinearAdd fused (aot/passes/fuse_residual.py): the output written over
    the residual where the plan put them in one buffer; on hosts the conv first fills tmp, the scratch's
    last output-size bytes (_fit_residual)."""
    p, w_arg, _ = _qconv_parts(ctx)
    y, res = ctx.outputs[0], ctx.inputs[9]
    conv_a = bool(ctx.attrs["conv_is_a"])
    y_zero = int(_scalar(ctx, 15))
    lo, hi = INT_RANGE[ctx.dtype(y)]
    lo, hi = max(lo, ctx.attrs.get("add_qmin", lo)), min(hi, ctx.attrs.get("add_qmax", hi))
    fields = _qadd_fields(ctx, y, y, y, *(_scalar(ctx, k) for k in (10, 11, 12, 13, 14)), y_zero,
                          (c_float(float(lo - y_zero)), c_float(float(hi - y_zero))))
    r = ctx.params("aotc_qresidual_params", {
        "add": "{" + ", ".join(f".{k} = {v}" for k, v in fields.items()) + "}", "conv_a": str(int(conv_a)),
    }, comment=f"the residual QLinearAdd fused into the conv: {'conv + residual' if conv_a else 'residual + conv'}")
    scratch = ctx.scratch("uint8_t")
    tmp_at = ctx.choice.scratch - ctx.tensor(y).nbytes if ctx.choice.detail.tmp else None
    tmp = f"({ctx.ctype(y)} *)({scratch} + {tmp_at})" if tmp_at is not None else "NULL"
    ctx.call(ctx.choice.kernel, p, r, str(ctx.choice.detail.tile), ctx.ptr(ctx.inputs[0]), w_arg,
             ctx.ptr(res), ctx.ptr(y), scratch, tmp)


def _fit_residual(node: Node, graph: Graph, budget: int, isa: str = "", lanes: int = 1,
                  vnni: bool = False) -> KernelChoice:
    """On hosts: _fit_patches's block (and work) in what the step spares beyond tmp, the conv's whole output
    that the ADD then reads where the conv does not take the dense VNNI path (which adds the residual in its
    stores; the others do not); `lanes` of them with a --threads pool (on_lanes), tmp after them; `vnni` as there."""
    out = graph.tensors[node.outputs[0]].nbytes
    choice = _fit_patches(node, graph, lane_budget(max(budget - out, 0), lanes), isa=isa, vnni=vnni)
    choice = KernelChoice(choice.kernel, choice.scratch + out, detail=choice.detail._replace(tmp=True))
    return on_lanes(choice, lanes, out)


QCONV_ADD_KERNELS = (
    Candidate("aotc_qconv_patches_add_i8", lambda n, g, budget: _fit_patches(n, g, budget, host=False, isa="arm-dsp"),
              facts=ARM_DSP, also=("aotc_qconv_patches_add_u8",), fit_least=_DSP_LEAST),
    Candidate("aotc_qconv_patches_add_i8", lambda n, g, budget: _fit_patches(n, g, budget, host=False),
              facts=M_PROFILE, also=("aotc_qconv_patches_add_u8",), fit_least=_M_LEAST),
    Candidate("aotc_qconv_patches_add_i8", lambda n, g, budget: _fit_residual(n, g, budget, "avx512"),
              facts=AVX512, also=("aotc_qconv_patches_add_u8",),
              fit_on=lambda n, g, budget, t: _fit_residual(n, g, budget, "avx512", pool_lanes(n, g, t.threads),
                                                           t.vnni)),
    Candidate("aotc_qconv_patches_add_i8", _fit_residual, also=("aotc_qconv_patches_add_u8",),
              fit_on=lambda n, g, budget, t: _fit_residual(n, g, budget, isa="avx2" if t.host else "")),
)


def _check_qconv(node: Node, graph: Graph) -> str | None:
    if len(node.attrs["kernel_shape"]) > 2:
        return "3-D QLinearConv is not supported (1-D and 2-D are)"
    if graph.const(node.inputs[3]) is None:
        return "weights computed at run time are not supported"
    return check_8bit(node, graph, (0, 3))


# --- QLinearAdd / QLinearMul -----------------------------------------------------------------

def _qadd_fields(ctx: NodeContext, a: str, b: str, y: str, a_scale: float, a_zero: int, b_scale: float,
                 b_zero: int, y_scale: float, y_zero: int, out_range: tuple[str, str], kernel: str = "qadd",
                 ) -> dict[str, str]:
    """aotc_qbinary_params of a QLinearAdd (or, kernel 'qmul', a QLinearMul) of a and b into y."""
    shape, sa, sb = broadcast_layout(ctx.shape(y), ctx.shape(a), ctx.shape(b))
    layout = (f"{{ .rank = {len(shape)}, .shape = {c_ints(shape)}, .a_strides = {c_ints(sa)}, "
              f".b_strides = {c_ints(sb)} }}")
    a_scale, b_scale, y_scale = np.float32(a_scale), np.float32(b_scale), np.float32(y_scale)
    a_zero, b_zero = int(a_zero), int(b_zero)
    if kernel == "qadd":  # MlasQLinearAdd (AVX2): the ratios to the output scale, zero points in the bias
        # (which operand onnxruntime takes as the scalar fixes the bias's rounding: the C loop takes a
        # as the scalar when its innermost stride is 0, whatever b's)
        a_mult, b_mult, bias = qadd_constants(a_scale, a_zero, b_scale, b_zero, y_scale, y_zero,
                                              scalar_a=sa[-1] == 0)
    else:  # MlasQLinearMul: one ratio on the product of the centred integers
        a_mult, b_mult, bias = a_scale * b_scale / y_scale, np.float32(0), np.float32(0)
    return {"shape": layout, "a_mult": c_float(float(a_mult)), "b_mult": c_float(float(b_mult)),
            "bias": c_float(float(bias)), "a_zero": str(a_zero), "b_zero": str(b_zero), "y_zero": str(y_zero),
            "y_lo": out_range[0], "y_hi": out_range[1]}


def _emit_qbinary(kernel: str):
    def emit(ctx: NodeContext) -> None:
        a, b, y = ctx.inputs[0], ctx.inputs[3], ctx.outputs[0]
        y_zero = int(_scalar(ctx, 7))
        fields = _qadd_fields(ctx, a, b, y, *(_scalar(ctx, k) for k in (1, 2, 4, 5, 6)), y_zero,
                              out_range(ctx, y_zero), kernel)
        p = ctx.params("aotc_qbinary_params", fields,
                       comment=f"{ctx.node.op}: {list(ctx.shape(a))} with {list(ctx.shape(b))} -> {list(ctx.shape(y))}")
        ctx.call(f"aotc_{kernel}_{SUFFIX[ctx.dtype(a)]}", p, ctx.ptr(a), ctx.ptr(b), ctx.ptr(y))
    return emit


def _check_qbinary(node: Node, graph: Graph) -> str | None:
    for k in (1, 4, 6):
        if graph.tensors[node.inputs[k]].size != 1:
            return "per-channel scales are not supported here (per-tensor are)"
    return check_8bit(node, graph, (0, 3))


# --- pools, lookups, concat -------------------------------------------------------------------

def _emit_qgap(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    xs = ctx.shape(x)
    size = math.prod(xs[2:])
    scale = global_avgpool_scale(_scalar(ctx, 1), _scalar(ctx, 3), size)
    ctx.call(f"aotc_qglobal_avgpool_{SUFFIX[ctx.dtype(x)]}", str(xs[0] * xs[1]), str(size), c_float(float(scale)),
             str(int(_scalar(ctx, 2))), str(int(_scalar(ctx, 4))), ctx.ptr(x), ctx.ptr(y))


def _check_qgap(node: Node, graph: Graph) -> str | None:
    if node.attrs.get("channels_last", 0):
        return "channels_last is not supported"
    return check_8bit(node, graph, (0,))


def _whole_plane(node: Node, graph: Graph) -> bool:
    """A QLinearAveragePool whose one window is the whole plane, unpadded: onnxruntime computes it as
    QLinearGlobalAveragePool (integer sums), and so does aotc."""
    a = node.attrs
    return list(a["kernel_shape"]) == list(graph.tensors[node.inputs[0]].shape[2:]) and not any(a["pads"])


def _emit_qavgpool(ctx: NodeContext) -> None:
    if _whole_plane(ctx.node, ctx.graph):
        _emit_qgap(ctx)
        return
    x = ctx.inputs[0]
    x_scale, x_zero = np.float32(_scalar(ctx, 1)), int(_scalar(ctx, 2))
    values = np.arange(256).astype(np.uint8).view(ctx.dtype(x)).astype(np.int32)  # byte b holds value values[b]
    lut = x_scale * (values - x_zero).astype(np.float32)
    ctx.comment("onnxruntime's QLinearAveragePool: float sums of the dequantized inputs (table), mean, quantized")
    ctx.call(f"aotc_qavgpool_{SUFFIX[ctx.dtype(x)]}", pool_params(ctx),
             ctx.const_array("dequantized", lut.astype(np.float32), "x_scale * (x - x_zero) for each byte x"),
             c_float(float(_scalar(ctx, 3))), str(int(_scalar(ctx, 4))), ctx.ptr(x), ctx.ptr(ctx.outputs[0]))


def _check_qavgpool(node: Node, graph: Graph) -> str | None:
    if node.attrs.get("channels_last", 0):
        return "channels_last is not supported"
    rank = len(graph.tensors[node.inputs[0]].shape)
    if not 3 <= rank <= 5:
        return f"input rank {rank}: 1-D, 2-D and 3-D pools are supported"
    if any(d != 1 for d in node.attrs.get("dilations", [])):
        return "dilations are not supported (onnxruntime's QLinearAveragePool has none)"
    return check_8bit(node, graph, (0,))


def _emit_lookup(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    ctx.comment(f"{ctx.attrs.get('function', 'function')} of each 8-bit input, tabulated at compile time")
    ctx.call(f"aotc_qlookup_{SUFFIX[ctx.dtype(x)]}", f"{math.prod(ctx.shape(y))}u", ctx.ptr(x), ctx.ptr(ctx.inputs[1]),
             ctx.ptr(y))


def _emit_qconcat(ctx: NodeContext) -> None:
    y = ctx.outputs[0]
    axis = ctx.attrs["axis"]
    out_shape = ctx.shape(y)
    dtype = ctx.dtype(y)
    y_scale, y_zero = _scalar(ctx, 0), int(_scalar(ctx, 1))
    outer, stride = math.prod(out_shape[:axis]), math.prod(out_shape[axis:])
    offset = 0
    lo, hi = INT_RANGE[dtype]
    for k in range(2, len(ctx.inputs), 3):
        x = ctx.inputs[k]
        values = np.arange(lo, hi + 1).astype(dtype)
        table = quantize(dequantize(values, ctx.const(ctx.inputs[k + 1]), ctx.const(ctx.inputs[k + 2]), 0),
                         y_scale, y_zero, dtype)
        inner = math.prod(ctx.shape(x)[axis:])
        name = ctx.const_array(f"table{k // 3}", table, comment=f"input '{x}' requantised to the output's scale")
        ctx.call(f"aotc_qrequant_copy_{SUFFIX[dtype]}", str(outer), str(inner), str(stride), name, ctx.ptr(x),
                 f"{ctx.ptr(y)} + {offset}")
        offset += inner


def _emit_qsoftmax(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    dtype = ctx.dtype(x)
    table = softmax_table(_scalar(ctx, 1), ctx.attrs["n"], dtype == "int8")
    ctx.call(f"aotc_qsoftmax_{SUFFIX[dtype]}", str(ctx.attrs["outer"]), str(ctx.attrs["n"]),
             ctx.const_array("exp", table, comment="exp(v - max) over the 8-bit distances, scaled to 32 bits"),
             f"{softmax_output_scale(_scalar(ctx, 3))}u", str(int(_scalar(ctx, 4))), ctx.ptr(x), ctx.ptr(y))


def _check_qconcat(node: Node, graph: Graph) -> str | None:
    return check_8bit(node, graph, (2,))


def check_8bit_inputs(node: Node, graph: Graph, data: tuple[int, ...]) -> str | None:
    for k in data:
        dtype = graph.tensors[node.inputs[k]].dtype
        if dtype not in INT8:
            return f"input {k} has dtype {dtype} (the integer kernels take int8 and uint8)"
    return None


OPS: dict[str, HostOp] = {
    "QuantizeLinear": HostOp(_emit_quantize, family="quant", check=_check_quantize),
    "DequantizeLinear": HostOp(_emit_dequantize, family="quant", dtypes=("int8", "uint8", "int32"),
                               check=_check_dequantize),
    "QLinearConv": HostOp(_emit_qconv, family="quant", dtypes=INT8, check=_check_qconv,
                          kernels=QCONV_KERNELS),
    # input 9, the residual, is read at each element just before the sum is written there
    "QLinearConvAdd": HostOp(_emit_qconv_add, family="quant", dtypes=INT8, check=_check_qconv, inplace=9,
                             kernels=QCONV_ADD_KERNELS),
    "QLinearAdd": HostOp(_emit_qbinary("qadd"), family="quant", dtypes=INT8, check=_check_qbinary),
    "QLinearMul": HostOp(_emit_qbinary("qmul"), family="quant", dtypes=INT8, check=_check_qbinary),
    "QLinearGlobalAveragePool": HostOp(_emit_qgap, family="quant", dtypes=INT8, check=_check_qgap),
    "QLinearAveragePool": HostOp(_emit_qavgpool, family="quant", dtypes=INT8, check=_check_qavgpool),
    "QLinearSoftmax": HostOp(_emit_qsoftmax, family="quant", dtypes=INT8, check=lambda n, g: check_8bit(n, g, (0,))),
    "QLookup": HostOp(_emit_lookup, family="quant", dtypes=INT8, inplace=0),
    "QLinearConcat": HostOp(_emit_qconcat, family="quant", dtypes=("float32",), check=_check_qconcat),
}
