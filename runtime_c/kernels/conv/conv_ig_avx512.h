/* The AVX-512F paths of the implicit GEMM (conv_implicit.c), each its own kernel: aot/kernels/conv_avx512.py
 * picks one per conv, so a bundle compiles only the paths its convs take (conv_igx3_avx512.c,
 * conv_igx3s2_avx512.c, conv_igx1_avx512.c, conv_pwc_avx512.c, conv_posx_avx512.c, conv_igb_avx512.c,
 * conv_stemx_avx512.c). This header holds what the igx paths and igb share, and says why each exists.
 * Internal to runtime_c/kernels; other targets compile none of it.
 *
 * Why: the implicit GEMM's tiles of 6 positions x 16 output channels read the input a float at a
 * time (one broadcast per position and patch element) and store transposed; on ResNet-8's narrow
 * convs (16 to 64 channels) that ran at about 65 % of the FMA peak, and its 1 x 1 stride-2
 * shortcuts (K = 16, 32) spent most of their time in per-tile costs. Here the vectors run along
 * 16 output positions instead, so the input comes in whole vectors and the output goes out in
 * whole vectors, NCHW as it is:
 *
 *   igx3   3 x 3, stride 1, pads of 1 (same size), output channels a multiple of 16: a register
 *          block of 16 positions (a flat run of the plane) x 16 output channels. Per input
 *          channel and tap one masked load (zero where the tap falls outside the image: rows
 *          above or below, columns past a row's ends; AVX-512's masked loads do not touch
 *          masked-off lanes, so the first and last vectors may point outside the plane) and 16
 *          multiply-adds with the weights broadcast from W^T's packed rows. At most 32 input
 *          channels per group, or 128 on planes of at least 28 x 28: ResNet-8's 64-channel 8 x 8
 *          conv (4 vectors a plane) ran 10 % slower here than in the implicit GEMM, ResNet-18's
 *          256-channel 14 x 14 ones 4 % slower, its 64-channel 56 x 56 and 128-channel 28 x 28
 *          ones 5 % and 7 % faster (minimum times of single convs, interleaved rounds).
 *   igx3s2 3 x 3, stride 2, pads of 0 or 1 at the start (Keras 'same' on even sizes, or a torch
 *          export's pads of 1), output channels a multiple of 16: runs of 16 outputs (across a row's
 *          end only with a left pad of 1) or pairs of rows of 6 to 8 (conv_igx3s2_avx512.c says which
 *          rows take which). Per input channel and tap row two loads, the even and odd columns by
 *          vpermt2ps, the third tap by valignd (on pairs of rows, each tap by its own vpermt2ps).
 *          ResNet-8's torch-form convs: 16 -> 32 32 x 32 30.1 -> 22.9 us, 32 -> 64 16 x 16 25.8 ->
 *          22.4 us; ResNet-18's 64 -> 128 28 x 28, 128 -> 256 14 x 14 and 256 -> 512 7 x 7 ran as
 *          fast here as in the implicit GEMM, taken together (1139, 1299, 1404 against 1136, 1214,
 *          1475 us), and a bundle without the implicit GEMM builds 1.4 s of CPU faster.
 *   rgb    3 x 3 same size on a channels-last 3-channel input (a Keras stem, its NHWC -> NCHW
 *          Transpose folded), rows of a multiple of 16: per tap three loads (masked to the row)
 *          split into the channels' vectors by two vpermt2ps each.
 *   igx1   1 x 1, stride 2, no pads, 8, 16, 24 or 32 input channels per group, output rows of 8
 *          or a multiple of 16: the K inputs of 16 positions (every second column of one row,
 *          or of two rows of 8) gathered into K registers by one vpermt2ps from two loads, then
 *          every output channel summed from them, as aotc_conv_pointwise_f32 does at stride 1.
 *
 *   pwc    1 x 1 with 64+ input channels per group, strides 1 or 2 along the rows (conv_pwc_avx512.c):
 *          vectors along 16 output channels, tiles of 4 to 8 positions x 48 channels, transposed on
 *          the store; on planes of at most 16 x 16 before posx (1 x 1 stride 1 of K <= 128, 8 output
 *          channels x 32 positions, conv_posx_avx512.h), on larger ones after it.
 *
 * All add the bias, the residual and the activation (none, clamp, leaky) in registers and store
 * once. W^T is the implicit GEMM's packing: per group, panels of PANEL output channels, each
 * k_rows rows of PANEL floats, row (c, ky, kx) (channels last: (ky, kx, c)). */
#ifndef AOTC_CONV_IG_AVX512_H
#define AOTC_CONV_IG_AVX512_H

#include "conv_internal.h"
#include "conv_common_avx512.h" /* x86c_finish, x86c_act_ok, X86_PATH_MISSED */

#if AOTC_X86_PATHS /* paths_avx512.h: __AVX512F__ and not AOTC_NO_INTRINSICS */
#define IGX_ON 1
#include <immintrin.h>

typedef struct {
    const aotc_conv_params *p;
    const float *x, *wt, *bias, *res;
    float *y;
    int32_t nvec; /* vectors of 16 positions per output plane */
} igx_job;

/* a plain 2-D conv on an NCHW input */
MK_UNUSED static int igx_plain2d(const aotc_conv_params *p) {
    return p->in_nhwc == 0 && p->in_size[0] == 1 && p->out_size[0] == 1 && p->kernel[0] == 1 && p->pads[0] == 0;
}

/* lanes [0, n) of 16, n clamped to [0, 16] */
static inline __mmask16 igx_lanes(ptrdiff_t n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* the job of an igx path (and igb's) */
static inline igx_job igx_job_for(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                                  const float *res, float *y) {
    igx_job J;
    J.p = p, J.x = x, J.wt = wt, J.bias = bias, J.res = res, J.y = y;
    J.nvec = (int32_t)(((ptrdiff_t)p->out_size[1] * p->out_size[2] + 15) / 16);
    return J;
}
#else
#define IGX_ON 0
#endif
#endif
