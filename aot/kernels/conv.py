"""Host ops of the 'conv' family: Conv and ConvTranspose (kernels in runtime_c/kernels/conv_*.c, one
file per strategy, each checked against conv_ref.c by tests/kernels_c/test_conv_kernels.c).

One params struct (aotc_conv_params) describes every convolution as 3-D: a 1-D or
2-D conv gets unit leading spatial dims, so 3-D convs come for free. Per node the
compiler picks the kernel:

    flat 3x3    2-D 3 x 3, no dilation, stride 1 with pads of 1 or stride 2 with start pads of
                0 or 1, at most FLAT_MAX_CG input channels per group (depthwise convs, RGB
                stems): per input plane, one flat pass over each output plane of its group,
                every tap a unit-stride read of a copy of the plane (stride 2: split by row and
                column parity), taps past a row's ends dropped by a mask; output written once
    depthwise   (the other) one input channel per group (not a single-channel input with several
                outputs): 2-D 3 x 3 at stride 1 or 2 with pads of 0 or 1 straight from the
                input, no scratch (runs of output rows in blocks of 8 outputs summed in
                registers; also at stride 2 where that beats the flat kernel); other 2-D 3 x 3
                at stride 1 or 2 on a zero-padded copy of each plane (stride 2: split into
                even and odd columns); kernels 3, 5 or 7 wide at column stride 1 or 2, any pads,
                straight from the input in blocks of 16 outputs summed in registers, no scratch;
                other shapes a direct loop, no scratch
    pointwise   1 x 1 kernel, stride 1, no padding: the GEMM core on the input in place (with
                AVX2 and no AVX-512, up to 256 input channels, register tiles of 6 output channels
                x 16 positions: conv_pw_avx2.h); on fewer positions than a panel (a 3 x 3 plane)
                and constant weights, X^T * W^T (W^T packed here), so the vectors run along the
                output channels; positions ending in
                a partial panel of at most half its columns, or of any width with at least 256 input
                channels on at most 32 x 32 positions, go to the implicit GEMM
    winograd    2-D 3 x 3 same-size convs at stride 1, one group, where a model of its speed-up says it
                gains (winograd.py), on an OS target's vector unit, where the step can spare a band's
                scratch: Winograd's F(4 x 4, 3 x 3), 4 x fewer multiply-adds, or F(2 x 2, 3 x 3), 2.25 x
                fewer, on planes where F(4 x 4)'s larger tiles waste more (U = G g G^T of the weights,
                36/9 or 16/9 as large, transformed here); the products on the GEMM core
    implicit    every other 1-D or 2-D Conv with constant weights: Y^T = P * W^T with the patch
                matrix P never built (register tiles of positions x output channels read the
                input through a pointer per position; W^T packed here); no scratch, and faster
                than building patches. It alone reads a channels-last input in place (a Keras
                export's NHWC -> NCHW Transpose folded into the conv, aot/passes/conv_nhwc.py;
                W^T's rows then go (ky, kx, c)). It and `transpose` store a channels-last output
                (a Transpose to NHWC folded into the conv, ConvWritesNHWC in the same file).
                On an AVX-512 host the shapes one of its seven AVX-512 paths takes go to that path's
                own kernel (conv_avx512.py), so a bundle compiles only the paths its convs use;
                a widening 1 x 1 stride-2 conv on a large input, where the step can spare the
                copy, first copies its strided inputs into scratch and runs the 1 x 1 path's
                stride-1 tiles on them (aotc_conv_pwcs2_f32, the same sums).
                The rest (run-time weights, 3-D) take the three below:
    stride 1    2-D, stride 1, no dilation (narrow kernels): the input padded once in scratch,
                each patch-matrix row one copy from it, outputs on the padded width
    im2col      patch-matrix blocks of kc x nc in scratch, then the GEMM core
    direct      where the step has no memory to spare for even one patch block (the planner's
                scratch budget): direct loops, no scratch
    transpose   ConvTranspose: W^T * X into scratch, then added into the output (col2im)

Weights stay in ONNX layout for the GEMM paths (a group's [M/g, C/g * taps] block is already
the row-major A the GEMM core reads, and ConvTranspose reads it transposed by strides); the
implicit GEMM and X^T * W^T read each group's W^T, packed here in the core's panels.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from aot.ir import Graph, Node
from aot.ir.schemas import reads_nhwc, writes_nhwc
from aot.kernels import conv_avx512, winograd
from aot.kernels.base import (
    Candidate,
    HostOp,
    KernelChoice,
    KernelFacts,
    NodeContext,
    TargetTraits,
    kept_scratch_bytes,
)
from aot.kernels.c_defines import define
from aot.kernels.conv_geometry import ConvGeometry, ConvPlan, conv_geometry, x_shape, y_shape
from aot.kernels.gemm import FLOAT_DTYPES, KC, PANEL, WORK_BYTES, pack_b, residual, work_bytes

NC = 256  # output positions per im2col block: kc x nc floats of scratch (<= 256 KiB)
COLS_FLOATS = 64 * 1024  # ConvTranspose: floats of W^T * X kept in scratch per block
MAX_SPATIAL = 3
# 3 x 3 convs with at most this many input channels per group (depthwise, RGB stems) take the
# flat direct kernel: it costs a pass over each output plane per input channel, which beats
# im2col + GEMM (a copy of 9 x the input, and few rows per register tile) up to about here
FLAT_MAX_CG = 4
IMPLICIT_NR = 16  # aotc_conv_implicit_f32's output channels per register tile with AVX (AOTC_GEMM_NR)
# a 1 x 1 conv on at most PWC_PLANE_MAX positions ending in a partial panel, with at least PWC_WIDE_K
# input channels per group, takes the implicit GEMM (AVX-512: conv_pwc_avx512.c). Without AVX-512 the
# implicit GEMM's tiles did as well as the GEMM core or better there (13 x 13: 5 %, 27 x 27: 1-3 %), but
# 14-16 % worse on 28 x 28 (whole panels) and on fewer input channels.
PWC_PLANE_MAX = 1024
PW2_MAX_K = define("conv_pw_avx2.h", "PW2_MAX_K")  # conv_pw_avx2.h's most input channels per group
PWC_WIDE_K = 256
# aotc_conv_pwcs2_f32 (a stride-2 1 x 1 conv on a copy of its strided inputs) where the conv has at least
# PWCS2_MIN_M output channels per group, twice its input channels, and an input of PWCS2_MIN_BYTES or more.
# Measured on the Xeon (one thread, AVX-512, per-node minima of 7 alternating rounds in ResNet-50, load 9-11):
# ResNet-50's 256 -> 512 on 56 x 56 2096 -> 1747 us, 512 -> 1024 on 28 x 28 2027 -> 1448, 1024 -> 2048 on
# 14 x 14 1976 -> 1669, outputs identical; single convs (medians of 5 alternating runs): ResNet-18's 128 -> 256
# on 28 x 28 0.94 x the time; slower or even: 256 -> 512 on 14 x 14 (200 KiB of input) 1.06 x, 64 -> 128 on
# 56 x 56 1.01 x, narrowing ones (256 -> 128, 512 -> 256) 1.0-1.15 x
PWCS2_MIN_M = 256
PWCS2_MIN_BYTES = 256 * 1024
POINTWISE_T_NC = 256  # aotc_conv_pointwise_t_f32: output channels per block (positions x this in scratch)
# aotc_conv_depthwise3x3_direct_f32 computes an output row in blocks of dw3_block() outputs, the last
# one rounded up; at stride 2 it beats the flat kernel where that last block has at least this many
DIRECT_DW_S2_MIN_LAST = 5
WINOGRAD = {v.kernel: v for v in winograd.VARIANTS}
# what the conv kernels are besides when they apply (KernelFacts; by default a kernel takes a scratch argument,
# splits no work over a --threads pool and reads the weights as the model stores them)
SCRATCH_ARG = KernelFacts(scratch_arg=True)  # the kernels whose C function takes a scratch pointer
NO_SCRATCH_ARG = KernelFacts(scratch_arg=False)  # the direct loops
THREADED = KernelFacts(threaded=True, scratch_arg=True)  # the 1 x 1 conv on the GEMM core: column blocks
THREADED_DIRECT = KernelFacts(threaded=True, scratch_arg=False)  # the depthwise kernels straight from the input
# the implicit GEMM: W^T packed here, no scratch, output-channel tiles and row bands over the pool; it alone
# reads a channels-last input in place (and, with ConvTranspose's kernel, stores a channels-last output)
IMPLICIT = KernelFacts(threaded=True, scratch_arg=False, packed_weights=True)
X86_PATH = dataclasses.replace(IMPLICIT, isa="avx512")  # its AVX-512 paths (conv_avx512.py)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _balanced_block(total: int, limit: int, multiple: int = 1) -> int:
    """Block size <= limit (rounded to `multiple` when it splits) cutting `total` into equal blocks."""
    if total <= limit:
        return total
    block = _ceil_div(total, _ceil_div(total, limit))
    return min(limit, _ceil_div(block, multiple) * multiple)



def _patch_ldc(nc: int) -> int:
    """conv_im2col.c: patch rows are a whole, odd number of panels apart (no two rows of a panel share L1 sets)."""
    return (_ceil_div(nc, PANEL) | 1) * PANEL


def _blocks(k: int, npos: int, budget: int, fixed: int = 0, per_nc: int = 0) -> tuple[int, int] | None:
    """(kc, nc): patch-matrix blocks of kc <= KC rows by nc <= NC columns, as large as fit the
    budget with `fixed` more floats and `per_nc` more per column; None if not even 1 x PANEL fits."""
    kc = _balanced_block(k, KC)
    for limit in range(NC, 0, -PANEL):  # narrower blocks first: fewer columns cost little
        nc = _balanced_block(npos, limit, PANEL)
        if (fixed + kc * _patch_ldc(nc) + per_nc * nc) * 4 <= budget:
            return kc, nc
    nc = min(npos, PANEL)
    rows = (budget // 4 - fixed - per_nc * nc) // _patch_ldc(nc)  # then fewer rows
    return (_balanced_block(k, rows), nc) if rows >= 1 else None


def _fit_transpose(c: ConvGeometry, budget: int) -> KernelChoice:
    rows = c.out_c // c.group * math.prod(c.kernel)
    npos = math.prod(c.x[2:])
    nc = npos if rows * npos <= COLS_FLOATS else max(PANEL, COLS_FLOATS // rows // PANEL * PANEL)
    return c.choice("aotc_conv_transpose_f32", "", rows * nc * 4 + WORK_BYTES, nc=nc)


def _direct_dw_applies(c: ConvGeometry) -> bool:
    return c.dw and _direct_dw3x3(c.nd, c.kernel, c.strides, c.dilations, c.pads)


def _direct_dw_beats_flat(c: ConvGeometry, target: TargetTraits) -> bool:
    """At stride 2 the direct kernel beats the flat one (which first splits each input plane four
    ways) where its last block of an output row is nearly full: rows of OW outputs with
    OW % block >= DIRECT_DW_S2_MIN_LAST (x86-64 AVX2: 0.78 to 0.96 x the flat kernel's
    instructions there, 1.0 to 1.3 x on other rows and at stride 1). Without a vector unit the
    blocks are one output wide and no row ends in a partial block."""
    block = dw3_block(target)
    return _direct_dw_applies(c) and c.strides[-1] == 2 and c.y[-1] % block >= DIRECT_DW_S2_MIN_LAST


def _same_3x3(c: ConvGeometry) -> bool:
    """A 2-D 3 x 3 Conv at stride 1 with pads of 1 (same size), no dilation, constant weights, NCHW in and out."""
    return (c.node.op != "ConvTranspose" and c.nd == 2 and c.kernel == [3, 3] and c.strides == [1, 1]
            and c.dilations == [1, 1] and c.pads == [1, 1, 1, 1] and c.const_weights and not c.nhwc and not c.out_nhwc)


def _igx3_takes(c: ConvGeometry) -> bool:
    """A full (not depthwise) conv that aotc_conv_implicit_f32's AVX-512 igx3 tiles take (conv_ig_avx512.h:
    3 x 3 same size at stride 1, output channels a multiple of 16 per group, NCHW)."""
    return not c.dw and _same_3x3(c) and (c.out_c // c.group) % 16 == 0


def _fit_flat(c: ConvGeometry, budget: int) -> KernelChoice | None:
    flat = _flat3x3_floats(c.kernel, c.strides, c.dilations, c.pads, c.x[2:], c.y[2:])
    if flat is None or flat * 4 > budget:
        return None
    return c.choice("aotc_conv3x3_flat_f32", f"3x3, {c.in_c // c.group} input channel(s) per group: "
                    "a flat pass per plane", flat * 4)


def _fit_padded_dw(c: ConvGeometry, budget: int) -> KernelChoice | None:
    s = c.strides[-1]
    rows, cols = (c.y[-2] - 1) * s + 3, (c.y[-1] - 1) * s + 3  # conv_depthwise.c: aotc_conv_depthwise3x3_f32
    planes = rows * cols if s == 1 else 4 * _ceil_div(rows, 2) * _ceil_div(cols, 2)
    wide = c.y[-2] * (cols if s == 1 else _ceil_div(cols, 2))
    if (planes + wide) * 4 > budget:  # the direct loop below, without scratch
        return None
    return c.choice("aotc_conv_depthwise3x3_f32", "depthwise 3x3 on a padded plane", (planes + wide) * 4)


def _pointwise(c: ConvGeometry) -> bool:
    return all(k == 1 for k in c.kernel) and all(s == 1 for s in c.strides) and not any(c.pads)


def _scalar_implicit(c: ConvGeometry, target: TargetTraits) -> bool:
    """A 1 x 1 conv with constant weights on a Cortex-M (tiles in scalar registers, or Helium) takes
    the implicit GEMM: its runs of positions x 4 channels (conv_implicit.c) need fewer instructions
    per MAC than the GEMM core's 4 x 4 tiles, whose rows of W each step a pointer of their own
    (issue 27: on the M4, 1.3 against 2.2 per MAC in DS-CNN's 1 x 1 convs), and no scratch."""
    return (target.scalar_tiles or target.helium) and c.const_weights and c.nd <= 2


def _implicit_beats_pointwise(c: ConvGeometry, target: TargetTraits | None = None) -> bool:
    """A 1 x 1 conv on the implicit GEMM rather than the GEMM core: where the positions end in a
    partial panel of at most half its columns (a panel's worth of work for a few) and the output channels fill whole
    tiles of IMPLICIT_NR; or on a partial panel with many input channels (SqueezeNet 1.1's 512 -> 1000 on
    13 x 13 and 256 -> 32 on 27 x 27), which AVX-512 runs as tiles of positions x 48 output channels
    (conv_pwc_avx512.c: 7 % and 15 % faster than the GEMM core there). Not on a host without AVX-512 (taken to be
    x86 with AVX2, as Winograd's choice does) where conv_pw_avx2.h's tiles take the conv and its last block of 16
    positions wastes at most an eighth of the lanes: 14 x 14, 64 -> 384 117 -> 97 us, 112 -> 672 316 -> 288 (7 x 7,
    a quarter wasted: 160 -> 960 178 -> 197)."""
    npos = math.prod(c.y[2:])
    if target is not None and _avx2_host(target) and c.in_c // c.group <= PW2_MAX_K and not _pw2_wastes(c):
        return False
    return ((0 < npos % PANEL <= PANEL // 2 and (c.out_c // c.group) % IMPLICIT_NR == 0)
            or (npos % PANEL != 0 and npos <= PWC_PLANE_MAX and c.in_c // c.group >= PWC_WIDE_K))


def _fit_pointwise_t(c: ConvGeometry, budget: int) -> KernelChoice | None:
    """A few positions (a 3 x 3 plane): vectors along the output channels, W^T packed here,
    nc channels at a time through scratch."""
    npos = math.prod(c.y[2:])
    nc = min(_ceil_div(c.out_c // c.group, PANEL) * PANEL, POINTWISE_T_NC, budget // (npos * 4) // PANEL * PANEL)
    if nc <= 0:
        return None
    return c.choice("aotc_conv_pointwise_t_f32", f"1x1 on {npos} positions, as X^T * W^T", npos * nc * 4, nc=nc)


def _pwcs2_applies(c: ConvGeometry) -> bool:
    """A 1 x 1 stride-2 conv that conv_pwc_avx512.c would run in place, widening (at least twice its input
    channels, PWCS2_MIN_M or more) on an input of PWCS2_MIN_BYTES or more: there the tiles' strided reads
    of the input cost more than the copy, which is small beside the multiply-adds (mg per copied float)."""
    mg, cg = c.y[1] // c.group, c.x[1] // c.group
    return (c.nd == 2 and c.x[0] == 1 and tuple(c.strides) == (2, 2) and mg >= PWCS2_MIN_M and mg >= 2 * cg
            and math.prod(c.x) * 4 >= PWCS2_MIN_BYTES and conv_avx512.x86_kernel(c) == "aotc_conv_pwc_f32")


def _fit_pwcs2(c: ConvGeometry, budget: int) -> KernelChoice | None:
    """The strided positions of every input channel, copied: in_c x the output plane floats of scratch."""
    need = c.x[1] * math.prod(c.y[2:]) * 4
    return c.choice("aotc_conv_pwcs2_f32", "1x1 stride 2 on a copy of its strided positions, AVX-512 pwc path",
                    need) if need <= budget else None


def _avx2_host(target: TargetTraits) -> bool:
    """A host build without AVX-512, taken to be x86 with AVX2 (as Winograd's choice does): conv_pw_avx2.h's tiles."""
    return target.host and not target.avx512 and not target.portable


def _pw2_wastes(c: ConvGeometry) -> bool:
    """conv_pw_avx2.h's last block of 16 positions leaves more than an eighth of its lanes idle (7 x 7: a quarter)."""
    npos = math.prod(c.y[2:])
    return (-npos) % PANEL * 8 > -(-npos // PANEL) * PANEL


def _pointwise_strided(c: ConvGeometry, target: TargetTraits) -> bool:
    """A 1 x 1 conv at a stride above 1, no padding, on a host without AVX-512 (taken to be x86 with AVX2, as
    Winograd's choice does): its strided positions copied, then the pointwise kernel's tiles (conv_pw_avx2.h, or
    the GEMM core past PW2_MAX_K input channels). The implicit GEMM there reads the input a position at a time:
    ResNet-50's stride-2 shortcuts at --isa avx2 took 1.3-1.6x OpenVINO's time (512 -> 1024 onto 14 x 14:
    3.0 ms against 1.9). Not where the tiles would waste their last block (ResNet-18's 256 -> 512 onto 7 x 7: 161 ->
    234 us), unless the input channels take the GEMM core (ResNet-50's 1024 -> 2048 onto 7 x 7: 2871 -> 2561)."""
    return (_avx2_host(target) and target.vector_unit
            and not (c.in_c // c.group <= PW2_MAX_K and _pw2_wastes(c))
            and c.node.op != "ConvTranspose" and c.const_weights and all(k == 1 for k in c.kernel)
            and any(s > 1 for s in c.strides) and not any(c.pads) and all(d == 1 for d in c.dilations))


def _fit_pointwise_strided(c: ConvGeometry, budget: int) -> KernelChoice | None:
    """The copy of the strided inputs (every image's channels on the output plane) and the GEMM core's work block."""
    need = c.x[0] * c.x[1] * math.prod(c.y[2:]) * 4 + min(c.in_c // c.group, KC) * PANEL * 4
    return c.choice("aotc_conv_pointwise_strided_f32", "1x1 strided, on a copy of its strided positions",
                    need) if need <= budget else None


def _fit_stride1(c: ConvGeometry, budget: int) -> KernelChoice | None:
    """Patch rows copied whole from a padded plane (junk columns <= 1/4 of the work)."""
    oh, ow = c.y[-2], c.y[-1]
    pw = ow + c.kernel[-1] - 1
    k = c.in_c // c.group * math.prod(c.kernel)
    pad_floats = _ceil_div(c.in_c // c.group * (oh + c.kernel[0] - 1) * pw + c.kernel[-1], PANEL) * PANEL
    blocks = _blocks(k, oh * pw, budget, fixed=pad_floats, per_nc=c.out_c // c.group)
    if blocks is None:  # plain im2col needs no padded copy of the input
        return None
    kc, nc = blocks
    return c.choice("aotc_conv_s1_f32", f"stride 1 on a padded plane, blocks of {kc} x {nc}",
                    (pad_floats + kc * _patch_ldc(nc) + c.out_c // c.group * nc) * 4, kc=kc, nc=nc)


def _winograd_applies(v: winograd.Variant) -> Callable[[ConvGeometry, TargetTraits], bool]:
    """Winograd variant v: a 2-D 3 x 3 same-size conv at stride 1, one group, constant weights, NCHW, where
    v expects to gain (the best variant, or the one left where the best does not fit), on a vector unit
    of an OS target (its weights are (m + 2)^2 / 9 as large: not for a microcontroller's flash)."""
    def applies(c: ConvGeometry, target: TargetTraits) -> bool:
        if not (target.vector_unit and not target.helium and _same_3x3(c) and c.group == 1):
            return False
        avx2 = target.host and not target.avx512  # the machine's bundle without AVX-512 (a generic x86 host)
        best = winograd.best(c.in_c, c.out_c, c.y[-2], c.y[-1], target.fast_math, target.threads, avx2)
        return best is not None and (best is v or (not v.rounds_more and v.applies(c.y[-2], c.y[-1], avx2)
                                                   and v.gain(c.in_c, c.out_c, c.y[-2], c.y[-1]) >= winograd.MIN_GAIN
                                                   and winograd.threads_allow(v, c.in_c, c.out_c, c.y[-2], c.y[-1],
                                                                              target.threads)))
    return applies


def _fit_winograd(v: winograd.Variant) -> Callable[[Node, Graph, int, TargetTraits], KernelChoice | None]:
    """Bands of tile rows within v's limits and the budget (Variant.band_rows: the fewest GEMM columns); with
    threads, within a lane of the scratch every Winograd conv shares, kept for the whole run."""
    def fit(n: Node, g: Graph, budget: int, target: TargetTraits) -> KernelChoice | None:
        c = conv_geometry(n, g)
        lanes = target.threads > 1
        band = v.band_rows(c.y[-2], c.y[-1], c.in_c, c.out_c,
                           target.threads * winograd.LANE_FLOATS * 4 if lanes else budget, target.threads)
        if band is None:
            return None
        rows, scratch = band
        th, tw = v.tiles(c.y[-2], c.y[-1])
        by_bands = lanes and v.lane_floats(rows, tw, th, c.in_c, c.out_c, target.threads)[1]
        what = f"Winograd F({v.m}x{v.m}, 3x3), bands of {rows} tile rows" + (
            (", a band a thread" if by_bands else ", blocks of output channels") + ", a lane of scratch per thread"
            if lanes else "")
        choice = c.choice(v.kernel, what, scratch, nc=rows)
        assumes = {**choice.assumes, **winograd.assumes(v, target.threads)}
        return dataclasses.replace(choice, assumes=assumes, kept=lanes,
                                   detail=dataclasses.replace(choice.detail, lanes=target.threads if lanes else 0))
    return fit


def _fit_im2col(c: ConvGeometry, budget: int) -> KernelChoice | None:
    blocks = _blocks(c.in_c // c.group * math.prod(c.kernel), math.prod(c.y[2:]), budget)
    if blocks is None:  # no memory to spare at this step
        return None
    kc, nc = blocks
    return c.choice("aotc_conv_f32", f"im2col, blocks of {kc} x {nc}", kc * _patch_ldc(nc) * 4, kc=kc, nc=nc)


def _candidate(kernel: str, fit: Callable[[ConvGeometry, int], KernelChoice | None],
               applies: Callable[[ConvGeometry, TargetTraits], bool] = lambda c, t: True,
               assumes: Callable[[TargetTraits], dict[str, int]] = lambda t: {},
               facts: KernelFacts = SCRATCH_ARG, channels_last: bool = False) -> Candidate:
    """`channels_last`: the kernel reads a channels-last input in place and stores a channels-last output
    (the implicit GEMM, and ConvTranspose's kernel); the others take neither."""
    return Candidate(kernel, lambda n, g, budget: fit(conv_geometry(n, g), budget),
                     lambda n, g, t: not _f64(n, g) and (channels_last or not (reads_nhwc(n) or writes_nhwc(n)))
                     and applies(conv_geometry(n, g), t), assumes, facts=facts)


def _f64(node: Node, graph: Graph) -> bool:
    """A float64 conv: conv_f64.c's direct loop alone (the float32 kernels' packing and blocks do not apply)."""
    return graph.tensors[node.inputs[0]].dtype == "float64"


# float64 Conv (NCHW: aot/passes/conv_nhwc.py moves float32 convs only): a direct loop in double, no scratch
CONV_F64 = Candidate("aotc_conv_f64",
                     lambda n, g, budget: conv_geometry(n, g).choice("aotc_conv_f64", "direct, in double"),
                     lambda n, g, t: _f64(n, g) and n.op != "ConvTranspose" and not (reads_nhwc(n) or writes_nhwc(n)),
                     facts=NO_SCRATCH_ARG)


def _scratch_free(kernel: str, what: str) -> Callable[[ConvGeometry, int], KernelChoice]:
    """A kernel that needs no scratch: it fits any budget."""
    return lambda c, budget: c.choice(kernel, what)


def _implicit(what: str, applies: Callable[[ConvGeometry, TargetTraits], bool]) -> tuple[Candidate, ...]:
    """The implicit GEMM where `applies`, after its AVX-512 path for the conv if it has one (conv_avx512.py)."""
    paths = tuple(_candidate(k, _scratch_free(k, f"{what}, AVX-512 {k.removeprefix('aotc_conv_')[:-4]} path"),
                             lambda c, t, k=k: applies(c, t) and conv_avx512.x86_kernel(c) == k,
                             facts=X86_PATH, channels_last=True)
                  for k in conv_avx512.KERNELS)
    return (*paths, _candidate("aotc_conv_implicit_f32", _scratch_free("aotc_conv_implicit_f32", what), applies,
                               facts=IMPLICIT, channels_last=True))


# Conv's kernels, cheapest first: a node takes the first that applies and fits its step's spare memory
KERNELS: tuple[Candidate, ...] = (
    CONV_F64,
    _candidate("aotc_conv_transpose_f32", _fit_transpose, lambda c, t: c.node.op == "ConvTranspose",
               channels_last=True),
    # where the tiles live in scalar registers (a Cortex-M4), the depthwise kernel's rows go in blocks
    # of 8, 4 or 3 outputs summed a tap row at a time (conv_depthwise3x3_direct.c): 1.9 instructions
    # per MAC against the flat kernel's 4 or more; on the M55 Helium strips of 4 columns down the rows,
    # 0.5-0.9 (conv_dw3_mve.h, issue 27)
    _candidate("aotc_conv_depthwise3x3_direct_f32",
               _scratch_free("aotc_conv_depthwise3x3_direct_f32", "depthwise 3x3, rows in registers"),
               lambda c, t: (t.scalar_tiles or t.helium) and _direct_dw_applies(c),
               lambda t: {"AOTC_DW3_BLOCK": dw3_block(t)}, THREADED_DIRECT),
    # the scratch-free depthwise kernel where it beats the flat one ...
    _candidate("aotc_conv_depthwise3x3_direct_f32",
               _scratch_free("aotc_conv_depthwise3x3_direct_f32", "depthwise 3x3 straight from the input"),
               _direct_dw_beats_flat, lambda t: {"AOTC_DW3_BLOCK": dw3_block(t)}, THREADED_DIRECT),
    # (not a full conv on a Cortex-M: the implicit GEMM's runs take 2.1 instructions per MAC there
    # against the flat passes' 4.2, MobileNet-v2's RGB conv on the M4, issue 27)
    # (nor one conv_ig_avx512.h's igx3 takes on an AVX-512 host: ResNet-8's 3 -> 16 32 x 32 stem 15.4 -> 10.2 us;
    # without AVX-512 the implicit GEMM's tiles took 20.1)
    _candidate("aotc_conv3x3_flat_f32", _fit_flat,
               lambda c, t: c.nd == 2 and c.node.op != "ConvTranspose" and c.in_c // c.group <= FLAT_MAX_CG
               and not ((t.scalar_tiles or t.helium) and not c.dw) and not (t.avx512 and _igx3_takes(c))),
    # ... and where the flat one has no memory
    _candidate("aotc_conv_depthwise3x3_direct_f32",
               _scratch_free("aotc_conv_depthwise3x3_direct_f32", "depthwise 3x3 straight from the input"),
               lambda c, t: _direct_dw_applies(c), facts=THREADED_DIRECT),
    _candidate("aotc_conv_depthwise3x3_f32", _fit_padded_dw,
               lambda c, t: c.dw and _padded_dw3x3(c.nd, c.kernel, c.strides, c.dilations)),
    _candidate("aotc_conv_depthwise_kxk_f32",
               _scratch_free("aotc_conv_depthwise_kxk_f32", "depthwise k x k straight from the input"),
               lambda c, t: _direct_dwkxk(c), facts=THREADED_DIRECT),
    _candidate("aotc_conv_depthwise_f32", _scratch_free("aotc_conv_depthwise_f32", "depthwise"), lambda c, t: c.dw,
               facts=NO_SCRATCH_ARG),
    _candidate("aotc_conv_pointwise_t_f32", _fit_pointwise_t,
               lambda c, t: (c.node.op != "ConvTranspose" and _pointwise(c) and c.const_weights
                             and not _scalar_implicit(c, t)
                             and math.prod(c.y[2:]) < PANEL and math.prod(c.y[2:]) != PANEL // 2),
               facts=KernelFacts(scratch_arg=True, packed_weights=True)),
    # a 1 x 1 conv whose positions end in a partial panel, on a vector unit: the implicit GEMM's tiles
    # of 6 positions x 16 channels (stored straight into Y on x86) waste less than the GEMM's last panel
    *_implicit("1x1 as an implicit GEMM",
               lambda c, t: t.vector_unit and c.node.op != "ConvTranspose" and _pointwise(c) and c.const_weights
               and _implicit_beats_pointwise(c, t)),
    _candidate("aotc_conv_pointwise_f32",
               lambda c, budget: c.choice("aotc_conv_pointwise_f32", "1x1", work_bytes(c.in_c // c.group, budget)),
               lambda c, t: c.node.op != "ConvTranspose" and _pointwise(c) and not _scalar_implicit(c, t),
               facts=THREADED),
    # 3 x 3 same-size convs with enough channels: Winograd, F(4 x 4) (with --fast-math) or F(2 x 2), where the
    # step's spare memory holds a band's transforms (else the next variant, then the implicit GEMM below)
    *(dataclasses.replace(_candidate(v.kernel, lambda c, budget: None, _winograd_applies(v),
                                     facts=dataclasses.replace(THREADED, rounds_more=v.rounds_more)),
                          fit_on=_fit_winograd(v))
      for v in winograd.VARIANTS),
    # a 1 x 1 strided conv on a host without AVX-512: its input's strided positions copied into scratch, then the
    # pointwise kernel on the copy, where the step's spare memory holds the copy
    _candidate("aotc_conv_pointwise_strided_f32", _fit_pointwise_strided, _pointwise_strided, facts=THREADED),
    # a 1 x 1 stride-2 conv with many output channels on AVX-512: its input's strided positions copied into scratch,
    # then the stride-1 tiles of conv_pwc_avx512.c (the same sums), where the step's spare memory holds the copy
    _candidate("aotc_conv_pwcs2_f32", _fit_pwcs2,
               lambda c, t: c.node.op != "ConvTranspose" and c.const_weights and _pwcs2_applies(c),
               facts=dataclasses.replace(X86_PATH, scratch_arg=True)),
    *_implicit("implicit GEMM, no scratch",
               lambda c, t: c.node.op != "ConvTranspose" and c.nd <= 2 and c.const_weights),
    _candidate("aotc_conv_s1_f32", _fit_stride1,
               lambda c, t: (c.node.op != "ConvTranspose" and c.nd == 2 and c.strides == [1, 1]
                             and c.dilations == [1, 1] and (c.kernel[-1] - 1) * 4 <= c.y[-1])),
    _candidate("aotc_conv_f32", _fit_im2col, lambda c, t: c.node.op != "ConvTranspose"),
    _candidate("aotc_conv_direct_f32", _scratch_free("aotc_conv_direct_f32", "direct, no scratch to spare"),
               lambda c, t: c.node.op != "ConvTranspose", facts=NO_SCRATCH_ARG),
)


def dw3_block(target: TargetTraits) -> int:
    """AOTC_DW3_BLOCK: outputs per register block of aotc_conv_depthwise3x3_direct_f32 (aotc_conv.h)."""
    return 8 if target.vector_unit else 1


def _flat3x3_floats(kernel: list[int], strides: list[int], dilations: list[int], pads: list[int],
                    in_hw: tuple[int, ...], out_hw: tuple[int, ...]) -> int | None:
    """Scratch floats of aotc_conv3x3_flat_f32 (conv_flat3x3.c) for a 2-D conv, or None where it does
    not apply: a 3 x 3 kernel, no dilation, and stride 1 with pads of 1 on every side, or stride
    2 with pads of 0 or 1 at the start (a left pad of 0 only if no output reads past input
    column 2 OW - 1: the split planes are OW wide)."""
    (ih, iw), (oh, ow) = in_hw, out_hw
    if list(kernel) != [3, 3] or list(dilations) != [1, 1]:
        return None
    mask = _ceil_div(oh * ow + 1, 16) * 16
    if list(strides) == [1, 1] and list(pads) == [1, 1, 1, 1]:
        return mask + (ih + 2) * iw + 2
    top, left = pads[0], pads[1]
    if list(strides) == [2, 2] and top in (0, 1) and left in (0, 1) and (left or 2 * ow >= iw):
        return mask + 4 * ((oh + 2) * ow + 2)
    return None


def _direct_dw3x3(nd: int, kernel: list[int], strides: list[int], dilations: list[int], pads: list[int]) -> bool:
    """aotc_conv_depthwise3x3_direct_f32 (conv_depthwise3x3_direct.c): a 2-D 3 x 3 conv, strides (1, 1) or (2, 2), no
    dilation, pads of 0 or 1 on every side."""
    return _padded_dw3x3(nd, kernel, strides, dilations) and all(p in (0, 1) for p in pads)


def _direct_dwkxk(c: ConvGeometry) -> bool:
    """aotc_conv_depthwise_kxk_f32 (conv_depthwise_kxk.c): depthwise, 1-D or 2-D, kernel width 3, 5 or 7 (any
    height), column stride 1 or 2 (any row stride), no dilation, any pads."""
    return (c.dw and c.node.op != "ConvTranspose" and c.nd in (1, 2) and c.kernel[-1] in (3, 5, 7)
            and c.strides[-1] in (1, 2) and all(d == 1 for d in c.dilations))


def _padded_dw3x3(nd: int, kernel: list[int], strides: list[int], dilations: list[int]) -> bool:
    """A 2-D 3 x 3 depthwise conv with strides (1, 1) or (2, 2) and no dilation."""
    return nd == 2 and list(kernel) == [3, 3] and list(dilations) == [1, 1] and list(strides) in ([1, 1], [2, 2])


def _check(node: Node, graph: Graph) -> str | None:
    x = x_shape(node, graph)
    w = graph.tensors[node.inputs[1]].shape
    nd = len(x) - 2
    if not 1 <= nd <= MAX_SPATIAL:
        return f"{node.op} with {nd} spatial dims is not supported (1 to {MAX_SPATIAL})"
    if len(w) != len(x) or list(w[2:]) != list(node.attrs["kernel_shape"]):
        return f"{node.op} weight shape {list(w)} does not match kernel_shape {node.attrs['kernel_shape']}"
    group, in_c, out_c = node.attrs["group"], x[1], y_shape(node, graph)[1]
    if group < 1 or in_c % group or out_c % group:
        return f"{node.op} group {group} does not divide {in_c} input and {out_c} output channels"
    per_group = (w[0] == out_c and w[1] * group == in_c) if node.op != "ConvTranspose" else \
        (w[0] == in_c and w[1] * group == out_c)
    if not per_group:
        return f"{node.op} weight shape {list(w)} does not match {in_c} -> {out_c} channels in {group} groups"
    if any(p < 0 for p in node.attrs["pads"]):
        return f"{node.op} pads must not be negative, got {node.attrs['pads']}"
    if max(graph.tensors[t].size for t in (node.inputs[0], node.inputs[1], node.outputs[0])) > 2**31 - 1:
        return "tensor has more than 2^31 - 1 elements"
    return None


def _emit(ctx: NodeContext) -> None:
    plan: ConvPlan = ctx.choice.detail
    x, w = ctx.inputs[0], ctx.inputs[1]
    bias = ctx.inputs[2] if len(ctx.inputs) > 2 else ""
    fields = plan.fields
    if plan.lanes:  # the lanes' pitch: a thread's share of the scratch every Winograd conv keeps (the largest's)
        fields = {**fields, "kc": str(kept_scratch_bytes(ctx.emitter.choices.values()) // plan.lanes // 4)}
    p = ctx.params("aotc_conv_params", fields, comment=plan.what)
    if ctx.choice.facts.packed_weights:  # each group's W^T, packed (gemm.c's panels)
        group = ctx.attrs["group"]
        wv = np.asarray(ctx.const(w), np.float32)
        if reads_nhwc(ctx.node):  # W^T's rows in (ky, kx, c) order, as the channels-last input runs
            wv = np.moveaxis(wv, 1, -1)
        wg = wv.reshape(group, y_shape(ctx.node, ctx.graph)[1] // group, -1)
        w_ptr = ctx.const_array("wt_packed", np.stack([pack_b(m.T) for m in wg]),
                                comment=f"W^T of {ctx.node.name}, packed per group")
    elif plan.kernel in WINOGRAD:
        v = WINOGRAD[plan.kernel]
        w_ptr = ctx.const_array("wino_u", v.weights(ctx.const(w)),
                                comment=f"G g G^T of {ctx.node.name}'s filters, {v.products} x out_c x in_c")
    else:
        w_ptr = ctx.ptr(w)
    args = [p, ctx.ptr(x), w_ptr, ctx.ptr(bias)]
    if ctx.node.op != "ConvTranspose":
        args.append(ctx.ptr(residual(ctx.node)))
    args.append(ctx.ptr(ctx.outputs[0]))
    if ctx.choice.facts.scratch_arg:
        args.append(ctx.scratch("float") if plan.scratch else "NULL")
    ctx.call(plan.kernel, *args)


OPS: dict[str, HostOp] = {
    "Conv": HostOp(_emit, family="conv", needs=("gemm",), dtypes=FLOAT_DTYPES, kernels=KERNELS, check=_check),
    # Conv with a fused epilogue (aot/passes/fuse_epilogue.py): + residual input 3, then the activation
    "FusedConv": HostOp(_emit, family="conv", needs=("gemm",), dtypes=FLOAT_DTYPES, kernels=KERNELS, check=_check),
    "ConvTranspose": HostOp(_emit, family="conv", needs=("gemm",), kernels=KERNELS, check=_check),
}


def on_gemm_core(node: Node, graph: Graph) -> bool:
    """A 1 x 1 conv of one group that a host with a vector unit runs on the GEMM core (aotc_conv_pointwise_f32)
    with its weights as stored, whether they are constants or computed at run time: at least a panel of
    positions (fewer take X^T * W^T) and none of the shapes the implicit GEMM's tiles take
    (aot/passes/fold_channel_scale.py scales such a conv's weights in place of its input)."""
    c = conv_geometry(node, graph)
    return (node.op != "ConvTranspose" and _pointwise(c) and c.group == 1 and not c.nhwc and not c.out_nhwc
            and math.prod(c.y[2:]) >= PANEL and not _implicit_beats_pointwise(c))
