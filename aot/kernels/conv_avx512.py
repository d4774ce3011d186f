"""Which AVX-512F path of the implicit GEMM a conv takes (runtime_c/kernels/conv_*_avx512.c).

Each path is its own kernel, so a bundle compiles only the paths its convs take: ResNet-18 needs the
stem, the 1 x 1 and the blocked 3 x 3 paths, not the four others (issue 24: its host build compiled
every path, 4.6 s for conv_implicit.c alone). The choice is made here, in the order the C tried them
when it chose at run time, on the same conditions: conv_ig_avx512.h says why each path exists and where
it beats the implicit GEMM's tiles. Each C entry checks its conditions again; built with AVX-512F it
never calls the implicit GEMM, so that such a build does not compile conv_implicit.c, and a conv it
does not take stops the program (runtime_c/kernels/common/paths_avx512.h): every conv the op tests' native
builds pick a path for proves this module and the C agree. Built without AVX-512F, it runs the
implicit GEMM.

The conditions read the params the kernels get (aotc_conv_params): sizes as 3-D (a 2-D conv has a
unit depth), pads at the start only. Every fused activation (none, clamp, leaky) is one they apply.
"""

from __future__ import annotations

import math

from aot.kernels.base import as_3d
from aot.kernels.c_defines import define
from aot.kernels.conv_geometry import ConvGeometry

PWC_KMIN = define("conv_pwc_avx512.c", "PWC_KMIN")  # fewest input channels per group
PWC_SMALL_PLANE = 256  # output planes of at most 16 x 16 try pwc before posx
POSX_KMAX = define("conv_posx_avx512.h", "POSX_KMAX")  # largest K
POSX_LINE_TMAX = define("conv_posx_avx512.h", "POSX_LINE_TMAX")  # most taps of a 1-D conv
IGX_RGB_WMAX = define("conv_igx3_avx512.c", "IGX_RGB_WMAX")  # widest row of the channels-last RGB path
IGB_M = define("conv_igb_avx512.c", "IGB_M")  # output channels per block
STEMX_NHWC_FLOATS = define("conv_stem_avx512.h", "STEMX_NHWC_FLOATS")  # the channels-last stem's row buffer
STEMX_SLACK = define("conv_stem_avx512.h", "STEMX_SLACK")  # floats a split row takes beyond its width
STEMX_NHWC_ROWS = define("conv_stem_avx512.h", "STEMX_NHWC_ROWS")  # input rows the channels-last stem splits at once

KERNELS = ("aotc_conv_igx3_f32", "aotc_conv_igx3s2_f32", "aotc_conv_igx1_f32", "aotc_conv_pwc_f32",
           "aotc_conv_posx_f32", "aotc_conv_igb_f32", "aotc_conv_stemx_f32")


def _igx3s2_rows(ow: int, iw: int, pw: int) -> bool:
    """Whether conv_igx3s2_avx512.c lays its vectors on these output rows: pairs of rows of 6 to 8, or runs of
    16 outputs, which cross a row's end only with a left pad of 1 and never span three rows."""
    if ow <= 8 and iw <= 16:
        return ow >= 6
    return ow % 16 == 0 or (pw == 1 and ow >= 16 - math.gcd(16, ow))


def x86_kernel(c: ConvGeometry) -> str | None:
    """The path's kernel for an implicit-GEMM conv on an AVX-512F host, or None (the implicit GEMM)."""
    if c.out_nhwc:  # every path stores NCHW
        return None
    (idepth, ih, iw), (od, oh, ow) = as_3d(c.x[2:], 1), as_3d(c.y[2:], 1)
    (kd, kh, kw), (_, sh, sw) = as_3d(c.kernel, 1), as_3d(c.strides, 1)
    (_, dh, dw), (pd, ph, pw) = as_3d(c.dilations, 1), as_3d(c.pads[:c.nd], 0)
    cg, mg = c.x[1] // c.group, c.y[1] // c.group
    depth1 = idepth == 1 and od == 1 and kd == 1 and pd == 0  # a 2-D (or 1-D) conv
    plain2d = not c.nhwc and depth1
    k3s1same = ((kh, kw, sh, sw, dh, dw, ph, pw) == (3, 3, 1, 1, 1, 1, 1, 1) and oh == ih and ow == iw)
    k1 = (kh, kw) == (1, 1)
    if k3s1same and mg % 16 == 0:
        if c.nhwc and c.x[1] == 3 and c.group == 1 and depth1 and ow % 16 == 0 and ow <= IGX_RGB_WMAX:
            return "aotc_conv_igx3_f32"  # rgb
        if plain2d and (cg <= 32 or (cg <= 128 and oh * ow >= 784)):
            return "aotc_conv_igx3_f32"
    if plain2d and (kh, kw, sh, sw, dh, dw) == (3, 3, 2, 2, 1, 1) and ph <= 1 and pw <= 1 and mg % 16 == 0 and \
            _igx3s2_rows(ow, iw, pw):
        return "aotc_conv_igx3s2_f32"
    if plain2d and k1 and (sh, sw, ph, pw) == (2, 2, 0, 0) and cg in (8, 16, 24, 32) and (ow == 8 or ow % 16 == 0) \
            and 2 * ow - 1 <= iw <= 2 * ow and ih >= 2 * oh - 1 and (ow != 8 or iw <= 16):
        return "aotc_conv_igx1_f32"
    if plain2d and k1:
        flat = sw == 1 and sh == 1 and iw == ow
        pwc = cg >= PWC_KMIN and ph == 0 and pw == 0 and sw in (1, 2) and (oh * ow if flat else ow) >= 4 \
            and (oh - 1) * sh < ih and (ow - 1) * sw < iw
        npos = oh * ow
        posx = (sh, sw, ph, pw) == (1, 1, 0, 0) and ih == oh and iw == ow and cg <= POSX_KMAX and cg * mg <= 16384 \
            and mg >= 8 and 8 * npos >= 7 * 32 * math.ceil(npos / 32)
        if pwc and npos <= PWC_SMALL_PLANE:
            return "aotc_conv_pwc_f32"
        if posx:
            return "aotc_conv_posx_f32"
        if pwc:
            return "aotc_conv_pwc_f32"
    if not c.nhwc and depth1 and cg == 1 and cg * kh * kw <= POSX_KMAX and mg >= 32 and ow <= 64:
        return "aotc_conv_posx_f32"  # a one-channel stem
    if plain2d and not k1 and mg >= 8 and ((ih, oh, kh, ph, sw) == (1, 1, 1, 0, 1) and kw <= POSX_LINE_TMAX
                                           or (iw, ow, kw, pw, sh) == (1, 1, 1, 0, 1) and kh <= POSX_LINE_TMAX):
        return "aotc_conv_posx_f32"  # a 1-D conv (conv_posx_avx512.h's posx_line)
    if plain2d and k3s1same and mg % IGB_M == 0:  # (on any plane: conv_igb_avx512.c, "Why")
        return "aotc_conv_igb_f32"
    # channels last: 3 x 3, while the input rows of two output rows fit the kernel's stack buffer (conv_stem_avx512.h)
    if (not c.nhwc or (kh == 3 and STEMX_NHWC_ROWS * c.x[1] * (iw + STEMX_SLACK) <= STEMX_NHWC_FLOATS)) \
            and c.group == 1 and c.x[1] <= 8 \
            and c.y[1] % 16 == 0 and depth1 and kh == kw and kh in (3, 7) \
            and (sh, sw, dh, dw) == (2, 2, 1, 1) and 0 <= ph < kh and 0 <= pw < kw and ow >= 16:
        return "aotc_conv_stemx_f32"
    return None
