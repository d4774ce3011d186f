/* AVX-512F paths of aotc_conv_implicit_f32 (conv_implicit.c), taken first where they apply; other
 * targets compile exactly the code they did. Internal to runtime_c/kernels.
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
 *          export's pads of 1), output channels a multiple of 16, output rows of 8 (two to a vector,
 *          input rows <= 16) or of a multiple of 16: per input channel and tap row two loads, the
 *          even and odd columns by vpermt2ps, the third tap by valignd (or a masked vpermt2ps on rows
 *          of 8; with a left pad, the first tap the odd columns a lane on). ResNet-8's torch-form
 *          convs: 16 -> 32 32 x 32 30.1 -> 22.9 us, 32 -> 64 16 x 16 25.8 -> 22.4 us.
 *   rgb    3 x 3 same size on a channels-last 3-channel input (a Keras stem, its NHWC -> NCHW
 *          Transpose folded), rows of a multiple of 16: per tap three loads (masked to the row)
 *          split into the channels' vectors by two vpermt2ps each.
 *   igx1   1 x 1, stride 2, no pads, 8, 16, 24 or 32 input channels per group, output rows of 8
 *          or a multiple of 16: the K inputs of 16 positions (every second column of one row,
 *          or of two rows of 8) gathered into K registers by one vpermt2ps from two loads, then
 *          every output channel summed from them, as aotc_conv_pointwise_f32 does at stride 1.
 *
 *   pwc    1 x 1 with 64+ input channels per group, strides 1 or 2 along the rows (conv_pwc_x86.h):
 *          vectors along 16 output channels, tiles of 4 to 8 positions x 48 channels, transposed on
 *          the store; on planes of at most 16 x 16 before posx (1 x 1 stride 1 of K <= 128, 8 output
 *          channels x 32 positions, conv_posx_x86.h), on larger ones after it.
 *
 * All add the bias, the residual and the activation (none, clamp, leaky) in registers and store
 * once. W^T is the implicit GEMM's packing: per group, panels of PANEL output channels, each
 * k_rows rows of PANEL floats, row (c, ky, kx) (channels last: (ky, kx, c)). */
#ifndef AOTC_CONV_IG_X86_H
#define AOTC_CONV_IG_X86_H

#include "conv_internal.h"
#include "conv_posx_x86.h"
#include "conv_pwc_x86.h"
#include "conv_x86_common.h" /* x86c_finish, x86c_act_ok */

#if defined(__AVX512F__) && !defined(AOTC_NO_X86_IG)
#include <immintrin.h>

typedef struct {
    const aotc_conv_params *p;
    const float *x, *wt, *bias, *res;
    float *y;
    int32_t nvec; /* vectors of 16 positions per output plane */
} igx_job;

/* a plain 2-D conv on an NCHW input */
static int igx_plain2d(const aotc_conv_params *p) {
    return p->in_nhwc == 0 && p->in_size[0] == 1 && p->out_size[0] == 1 && p->kernel[0] == 1 && p->pads[0] == 0;
}

/* ---- 3 x 3, stride 1, same size ---- */

#define IGX3_TAP(T, DY, DX)                                                                           \
    {                                                                                                 \
        const __m512 v = _mm512_maskz_loadu_ps(mk[T], xc + (DY) * W + (DX));                           \
        const float *wr = wc + (T) * PANEL;                                                           \
        _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m) acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(wr[m]), v, acc[m]); \
    }

static void igx3_items(void *arg, int32_t begin, int32_t end) {
    const igx_job *J = (const igx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t H = p->out_size[1], W = p->out_size[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, blocks = mg / 16;
    const ptrdiff_t plane = (ptrdiff_t)H * W, k_rows = (ptrdiff_t)cg * 9, group_w = (ptrdiff_t)mg * k_rows;
    int32_t item, m, c;
    for (item = begin; item < end; ++item) {
        const int32_t v = item % J->nvec, jb = item / J->nvec % blocks, gi = item / J->nvec / blocks;
        const int32_t g = gi % p->group, n = gi / p->group;
        const ptrdiff_t p0 = 16 * (ptrdiff_t)v;
        const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * plane + p0;
        const float *wb = J->wt + g * group_w + (ptrdiff_t)jb * k_rows * PANEL;
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + (ptrdiff_t)jb * 16) * plane + p0;
        __mmask16 mk[9], in;
        __m512 acc[16];
        x86c_masks3x3(p0, H, W, mk); /* the lanes' masks: inside the plane; a row above, below; a column left, right */
        in = mk[4];
        for (m = 0; m < 16; ++m) acc[m] = _mm512_set1_ps(J->bias != NULL ? J->bias[g * mg + jb * 16 + m] : 0.0f);
        /* the residual's lines on their way while the taps run. Measured, not designed: with this loop gcc (12)
         * also keeps different masks of the tap loop in registers, and ResNet-8's 16-channel convs took 1.4 us
         * less each with or without a residual (43.5 -> 42.1 us; 96 % of the FMA peak) */
        if (J->res != NULL)
            for (m = 0; m < 16; ++m) _mm_prefetch((const char *)(J->res + yo + m * plane), _MM_HINT_T1);
        for (c = 0; c < cg; ++c) {
            const float *xc = xg + (ptrdiff_t)c * plane, *wc = wb + (ptrdiff_t)c * 9 * PANEL;
            IGX3_TAP(0, -1, -1) IGX3_TAP(1, -1, 0) IGX3_TAP(2, -1, 1)
            IGX3_TAP(3, 0, -1) IGX3_TAP(4, 0, 0) IGX3_TAP(5, 0, 1)
            IGX3_TAP(6, 1, -1) IGX3_TAP(7, 1, 0) IGX3_TAP(8, 1, 1)
        }
        x86c_finish16(p, acc, in, J->res != NULL ? J->res + yo : NULL, J->y + yo, plane);
    }
}
#undef IGX3_TAP

/* ---- 3 x 3, stride 2, pads of 0 or 1 at the start ---- */

/* lanes [0, n) of 16, n clamped to [0, 16] */
static inline __mmask16 igx_lanes(ptrdiff_t n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

#define IGX3S2_TAP(T, V)                                                                              \
    {                                                                                                 \
        const __m512 v_ = (V);                                                                        \
        const float *wr = wc + (T) * PANEL;                                                           \
        _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m) acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(wr[m]), v_, acc[m]); \
    }

/* R8: output rows of 8, two to a vector (the third tap of each row's last output is padding, IW <= 16);
 * else 16 outputs of one row. L1: rows of 8 with a left pad of 1 (a function of its own: no test in the
 * loop over the taps, where one cost ResNet-8's 8 x 8 conv 7 %) */
#define IGX3S2_KERNEL(NAME, R8, L1)                                                                    \
    static void NAME(void *arg, int32_t begin, int32_t end) {                                          \
        const igx_job *J = (const igx_job *)arg;                                                       \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2]; \
        const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, blocks = mg / 16;             \
        const int32_t pt = p->pads[1], pl = p->pads[2];                                                \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)OH * OW, k_rows = (ptrdiff_t)cg * 9; \
        const ptrdiff_t group_w = (ptrdiff_t)mg * k_rows;                                              \
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0); \
        const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));                              \
        const __m512i even2 = _mm512_set_epi32(0, 30, 28, 26, 24, 22, 20, 18, 0, 14, 12, 10, 8, 6, 4, 2); \
        const __m512i oddm1 = _mm512_set_epi32(29, 27, 25, 23, 21, 19, 17, 0, 13, 11, 9, 7, 5, 3, 1, 0); \
        int32_t item, m, c, ky;                                                                        \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t v = item % J->nvec, jb = item / J->nvec % blocks, gi = item / J->nvec / blocks; \
            const int32_t g = gi % p->group, n = gi / p->group;                                        \
            const ptrdiff_t p0 = 16 * (ptrdiff_t)v;                                                    \
            const int32_t oy = (int32_t)(p0 / OW), ox = (int32_t)(p0 % OW);                            \
            const __mmask16 in = igx_lanes(plane - p0);                                                \
            const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;          \
            const float *wb = J->wt + g * group_w + (ptrdiff_t)jb * k_rows * PANEL;                    \
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + (ptrdiff_t)jb * 16) * plane + p0; \
            ptrdiff_t ao[3], bo[3], co[3];                                                             \
            __mmask16 am[3], bm[3], cm[3];                                                             \
            __m512 acc[16];                                                                            \
            for (ky = 0; ky < 3; ++ky) { /* per tap row: the loads' offsets and masks (0: padding) */ \
                const int32_t r0 = 2 * oy + ky - pt;                                                   \
                if (R8) { /* lanes 0..7 from output row oy, 8..15 from oy + 1, from column 0 */        \
                    const int32_t r1 = r0 + 2;                                                         \
                    ao[ky] = (ptrdiff_t)r0 * IW, bo[ky] = (ptrdiff_t)r1 * IW, co[ky] = 0;              \
                    am[ky] = r0 >= 0 && r0 < IH ? igx_lanes(IW) : 0;                                   \
                    bm[ky] = r1 >= 0 && r1 < IH && oy + 1 < OH ? igx_lanes(IW) : 0;                    \
                    cm[ky] = 0;                                                                        \
                } else { /* columns 2 ox - pl .. 2 ox - pl + 32 of one row (lane 0 off at column -1) */ \
                    const int32_t ok = r0 >= 0 && r0 < IH, c0 = 2 * ox - pl;                          \
                    ao[ky] = (ptrdiff_t)r0 * IW + c0, bo[ky] = ao[ky] + 16, co[ky] = ao[ky] + 32;      \
                    am[ky] = ok ? (__mmask16)(igx_lanes(IW - c0) & ~igx_lanes(-c0)) : 0;               \
                    bm[ky] = ok ? igx_lanes(IW - c0 - 16) : 0;                                         \
                    cm[ky] = ok ? igx_lanes(IW - c0 - 32) & 1 : 0;                                     \
                }                                                                                      \
            }                                                                                          \
            for (m = 0; m < 16; ++m) acc[m] = _mm512_set1_ps(J->bias != NULL ? J->bias[g * mg + jb * 16 + m] : 0.0f); \
            for (c = 0; c < cg; ++c) {                                                                 \
                const float *xc = xg + (ptrdiff_t)c * in_plane;                                        \
                _Pragma("GCC unroll 3") for (ky = 0; ky < 3; ++ky) {                                   \
                    const float *wc = wb + ((ptrdiff_t)c * 9 + ky * 3) * PANEL;                        \
                    const __m512 a = _mm512_maskz_loadu_ps(am[ky], xc + ao[ky]);                       \
                    const __m512 b = _mm512_maskz_loadu_ps(bm[ky], xc + bo[ky]);                       \
                    const __m512 e0 = _mm512_permutex2var_ps(a, even, b);                              \
                    if (L1) { /* taps at columns 2 ox - 1 (odd, a lane on; column -1: 0), 2 ox, 2 ox + 1 */ \
                        IGX3S2_TAP(0, _mm512_maskz_permutex2var_ps((__mmask16)0xFEFE, a, oddm1, b))    \
                        IGX3S2_TAP(1, e0)                                                              \
                        IGX3S2_TAP(2, _mm512_permutex2var_ps(a, odd, b))                               \
                    } else {                                                                           \
                        const __m512 e2 = (R8) ? _mm512_maskz_permutex2var_ps((__mmask16)0x7F7F, a, even2, b) \
                                               : _mm512_castsi512_ps(_mm512_alignr_epi32(              \
                                                     _mm512_castps_si512(_mm512_maskz_loadu_ps(cm[ky], xc + co[ky])), \
                                                     _mm512_castps_si512(e0), 1));                     \
                        IGX3S2_TAP(0, e0)                                                              \
                        IGX3S2_TAP(1, _mm512_permutex2var_ps(a, odd, b))                               \
                        IGX3S2_TAP(2, e2)                                                              \
                    }                                                                                  \
                }                                                                                      \
            }                                                                                          \
            x86c_finish16(p, acc, in, J->res != NULL ? J->res + yo : NULL, J->y + yo, plane);               \
        }                                                                                              \
    }
IGX3S2_KERNEL(igx3s2_rows, 0, 0)
IGX3S2_KERNEL(igx3s2_rows8, 1, 0)
IGX3S2_KERNEL(igx3s2_rows8_pad1, 1, 1)
#undef IGX3S2_KERNEL
#undef IGX3S2_TAP

/* ---- 3 x 3, stride 1, same size, on a channels-last RGB input (a Keras stem) ---- */

#define IGX_RGB_WMAX 512 /* widest row: the ring of deinterleaved rows (18.5 KiB) lives on the stack */
#define IGX_RGB_RS (IGX_RGB_WMAX + 2) /* floats per channel row: a zero column on each side */

/* ring[c][0 .. W + 1] = input row iy's channel c with a zero column at each end (all zero for a pad
 * row): 16 positions' 48 floats come in three loads and go into the channels' vectors by two
 * vpermt2ps each. */
static void igx3_rgb_row(float *ring, const float *xn, int32_t iy, int32_t H, int32_t W, const __m512i *i1,
                         const __m512i *i2) {
    int32_t c, x0;
    for (c = 0; c < 3; ++c) ring[c * IGX_RGB_RS] = ring[c * IGX_RGB_RS + W + 1] = 0.0f;
    for (x0 = 0; x0 < W; x0 += 16) {
        if (iy < 0 || iy >= H) {
            for (c = 0; c < 3; ++c) _mm512_storeu_ps(ring + c * IGX_RGB_RS + 1 + x0, _mm512_setzero_ps());
        } else {
            const float *xr = xn + ((ptrdiff_t)iy * W + x0) * 3;
            const __m512 l0 = _mm512_loadu_ps(xr), l1 = _mm512_loadu_ps(xr + 16), l2 = _mm512_loadu_ps(xr + 32);
            for (c = 0; c < 3; ++c)
                _mm512_storeu_ps(ring + c * IGX_RGB_RS + 1 + x0,
                                 _mm512_permutex2var_ps(_mm512_permutex2var_ps(l0, i1[c], l1), i2[c], l2));
        }
    }
}

/* 16 positions x 16 output channels as igx3, rows of a multiple of 16 (at most IGX_RGB_WMAX). Items
 * (image, output row, block of 16 channels), the last innermost; the three input rows an output
 * row reads are kept deinterleaved (channel planes, zero columns at the ends) in a ring of three
 * on the stack, so each input row is split into channels once per run of items and every tap is
 * one unmasked load: the split per tap (two vpermt2ps per channel, as ResNet-8's stem did) took
 * about a fifth of the stem's time. W^T's rows go (ky, kx, c). */
static void igx3_rgb_items(void *arg, int32_t begin, int32_t end) {
    const igx_job *J = (const igx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t H = p->out_size[1], W = p->out_size[2], mg = p->out_c, blocks = mg / 16;
    const ptrdiff_t plane = (ptrdiff_t)H * W, k_rows = 27;
    float ring[3 * 3 * IGX_RGB_RS]; /* slot iy % 3: 3 channel rows */
    __m512i i1[3], i2[3];
    int32_t item, m, c, j, ky, kx, x0, ring_n = -1, top = 0; /* the ring holds rows top - 2 .. top of image ring_n */
    for (c = 0; c < 3; ++c) { /* channel c's lane j: float 3 j + c of the 48 */
        int32_t a[16], b[16];
        for (j = 0; j < 16; ++j) {
            const int32_t f = 3 * j + c;
            a[j] = f < 32 ? f : 0;
            b[j] = f < 32 ? j : 16 + f - 32;
        }
        i1[c] = _mm512_loadu_si512(a), i2[c] = _mm512_loadu_si512(b);
    }
    for (item = begin; item < end; ++item) {
        const int32_t jb = item % blocks, oy = item / blocks % H, n = item / blocks / H;
        const float *xn = J->x + (ptrdiff_t)n * 3 * plane;
        const float *wb = J->wt + (ptrdiff_t)jb * k_rows * PANEL;
        int32_t iy = ring_n == n && top >= oy - 1 ? top + 1 : oy - 1; /* the first row not in the ring */
        for (; iy <= oy + 1; ++iy) igx3_rgb_row(ring + (iy + 3) % 3 * 3 * IGX_RGB_RS, xn, iy, H, W, i1, i2);
        ring_n = n, top = oy + 1;
        for (x0 = 0; x0 < W; x0 += 16) {
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)jb * 16) * plane + (ptrdiff_t)oy * W + x0;
            __m512 acc[16];
            _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m)
                acc[m] = _mm512_set1_ps(J->bias != NULL ? J->bias[jb * 16 + m] : 0.0f);
            for (ky = 0; ky < 3; ++ky) {
                const float *r = ring + (oy + ky + 2) % 3 * 3 * IGX_RGB_RS + x0; /* row oy + ky - 1, column -1 */
                _Pragma("GCC unroll 3") for (kx = 0; kx < 3; ++kx) {
                    _Pragma("GCC unroll 3") for (c = 0; c < 3; ++c) {
                        const __m512 xv = _mm512_loadu_ps(r + c * IGX_RGB_RS + kx);
                        const float *wr = wb + (ptrdiff_t)((ky * 3 + kx) * 3 + c) * PANEL;
                        _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m)
                            acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(wr[m]), xv, acc[m]);
                    }
                }
            }
            x86c_finish16(p, acc, 0xFFFF, J->res != NULL ? J->res + yo : NULL, J->y + yo, plane);
        }
    }
}
#undef IGX_RGB_RS

/* ---- 1 x 1, stride 2 ---- */

#define IGX1_KERNEL(K)                                                                                 \
    static void igx1_k##K(void *arg, int32_t begin, int32_t end) {                                     \
        const igx_job *J = (const igx_job *)arg;                                                       \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2]; \
        const int32_t mg = p->out_c / p->group;                                                        \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)OH * OW;                     \
        const ptrdiff_t group_w = (ptrdiff_t)(mg + PANEL - 1) / PANEL * PANEL * (K);                   \
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0); \
        int32_t item, k, m;                                                                            \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t v = item % J->nvec, gi = item / J->nvec, g = gi % p->group, n = gi / p->group; \
            const ptrdiff_t p0 = 16 * (ptrdiff_t)v;                                                    \
            const int32_t oy = (int32_t)(p0 / OW), ox = (int32_t)(p0 % OW);                            \
            const __mmask16 in = plane - p0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (plane - p0)) - 1u); \
            const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * (K)) * in_plane;         \
            const float *wg = J->wt + g * group_w;                                                     \
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * plane + p0;           \
            ptrdiff_t lo_o, hi_o;                                                                      \
            __mmask16 lo_m, hi_m;                                                                      \
            __m512 xk[K];                                                                              \
            if (OW == 8) { /* two output rows of 8: input rows 2 oy and 2 oy + 2 */                   \
                lo_o = (ptrdiff_t)2 * oy * IW, hi_o = lo_o + 2 * (ptrdiff_t)IW;                        \
                lo_m = (__mmask16)((1u << IW) - 1u), hi_m = oy + 1 < OH ? lo_m : (__mmask16)0;         \
            } else { /* 16 outputs of one row: input columns 2 ox .. 2 ox + 31 */                      \
                const int32_t rest = IW - 2 * ox - 16;                                                 \
                lo_o = (ptrdiff_t)2 * oy * IW + 2 * ox, hi_o = lo_o + 16;                              \
                lo_m = (__mmask16)0xFFFF, hi_m = rest >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rest) - 1u); \
            }                                                                                          \
            _Pragma("GCC unroll 32") for (k = 0; k < (K); ++k) {                                       \
                const float *xc = xg + k * in_plane;                                                   \
                xk[k] = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lo_m, xc + lo_o), even,           \
                                               _mm512_maskz_loadu_ps(hi_m, xc + hi_o));                \
            }                                                                                          \
            for (m = 0; m < mg; ++m) {                                                                 \
                const float *wm = wg + (ptrdiff_t)(m / PANEL) * (K) * PANEL + m % PANEL;               \
                __m512 a = _mm512_set1_ps(J->bias != NULL ? J->bias[g * mg + m] : 0.0f), c = _mm512_setzero_ps(); \
                _Pragma("GCC unroll 32") for (k = 0; k < (K); k += 2) {                                \
                    a = _mm512_fmadd_ps(_mm512_set1_ps(wm[k * PANEL]), xk[k], a);                      \
                    c = _mm512_fmadd_ps(_mm512_set1_ps(wm[(k + 1) * PANEL]), xk[k + 1], c);            \
                }                                                                                      \
                x86c_finish(p, _mm512_add_ps(a, c), in, J->res != NULL ? J->res + yo + m * plane : NULL, \
                           J->y + yo + m * plane);                                                     \
            }                                                                                          \
        }                                                                                              \
    }
IGX1_KERNEL(8)
IGX1_KERNEL(16)
IGX1_KERNEL(24)
IGX1_KERNEL(32)
#undef IGX1_KERNEL

/* Runs the conv if one of the paths above takes it: 1, else 0 (the caller goes on). */
static int igx(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
               float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    igx_job J;
    if (p->out_nhwc != 0) return 0; /* these paths store NCHW; the implicit GEMM's ig_store_nhwc does NHWC */
    J.p = p, J.x = x, J.wt = wt, J.bias = bias, J.res = res, J.y = y;
    J.nvec = (int32_t)(((ptrdiff_t)OH * OW + 15) / 16);
    if (p->in_nhwc != 0 && p->in_c == 3 && p->group == 1 && p->in_size[0] == 1 && p->out_size[0] == 1 &&
        p->kernel[0] == 1 && p->pads[0] == 0 && x86c_act_ok(p) && p->kernel[1] == 3 && p->kernel[2] == 3 &&
        p->strides[1] == 1 && p->strides[2] == 1 && p->dilations[1] == 1 && p->dilations[2] == 1 && p->pads[1] == 1 &&
        p->pads[2] == 1 && OH == IH && OW == IW && OW % 16 == 0 && OW <= IGX_RGB_WMAX && mg % 16 == 0) {
        aotc_parallel_for(igx3_rgb_items, &J, p->batch * OH * (mg / 16));
        return 1;
    }
    if (!igx_plain2d(p) || !x86c_act_ok(p)) return 0;
    if (p->kernel[1] == 3 && p->kernel[2] == 3 && p->strides[1] == 1 && p->strides[2] == 1 && p->dilations[1] == 1 &&
        p->dilations[2] == 1 && p->pads[1] == 1 && p->pads[2] == 1 && OH == IH && OW == IW && mg % 16 == 0 &&
        (cg <= 32 || (cg <= 128 && (ptrdiff_t)OH * OW >= 784))) {
        aotc_parallel_for(igx3_items, &J, p->batch * p->group * (mg / 16) * J.nvec);
        return 1;
    }
    if (p->kernel[1] == 3 && p->kernel[2] == 3 && p->strides[1] == 2 && p->strides[2] == 2 && p->dilations[1] == 1 &&
        p->dilations[2] == 1 && p->pads[1] <= 1 && p->pads[2] <= 1 && mg % 16 == 0 &&
        (OW % 16 == 0 || (OW == 8 && IW <= 16))) {
        aotc_parallel_for(OW != 8 ? igx3s2_rows : p->pads[2] ? igx3s2_rows8_pad1 : igx3s2_rows8, &J,
                          p->batch * p->group * (mg / 16) * J.nvec);
        return 1;
    }
    if (p->kernel[1] == 1 && p->kernel[2] == 1 && p->strides[1] == 2 && p->strides[2] == 2 && p->pads[1] == 0 &&
        p->pads[2] == 0 && (cg == 8 || cg == 16 || cg == 24 || cg == 32) && (OW == 8 || OW % 16 == 0) &&
        IW <= 2 * OW && IW >= 2 * OW - 1 && IH >= 2 * OH - 1 && (OW != 8 || IW <= 16)) {
        aotc_parallel_for(cg == 8 ? igx1_k8 : cg == 16 ? igx1_k16 : cg == 24 ? igx1_k24 : igx1_k32, &J,
                          p->batch * p->group * J.nvec);
        return 1;
    }
#undef IGX_RGB_WMAX
#if defined(AOTC_CONV_PWC)
    /* 1 x 1 with many input channels: 4-8 positions x 48 output channels in registers (conv_pwc_x86.h);
     * on planes past 16 x 16 after posx, whose 8 x 32 tiles ran 4-7 % faster there (SqueezeNet's
     * 64 and 128 -> 16 on 55 x 55, 128 -> 32 on 27 x 27) */
    if (p->kernel[1] == 1 && p->kernel[2] == 1 && cg >= PWC_KMIN && (ptrdiff_t)OH * OW <= PWC_SMALL_PLANE &&
        pwc(p, x, wt, bias, res, y))
        return 1;
#endif
#if defined(AOTC_CONV_POSX)
    if (p->kernel[1] == 1 && p->kernel[2] == 1 && p->strides[1] == 1 && p->strides[2] == 1 && p->pads[1] == 0 &&
        p->pads[2] == 0 && IH == OH && IW == OW && posx_pointwise(p, x, wt, bias, res, y, 1))
        return 1; /* a 1 x 1 conv: 8 output channels x 32 positions in registers (conv_posx_x86.h) */
#endif
#if defined(AOTC_CONV_PWC)
    if (p->kernel[1] == 1 && p->kernel[2] == 1 && cg >= PWC_KMIN && pwc(p, x, wt, bias, res, y)) return 1;
#endif
#if defined(AOTC_CONV_POSX)
    return posx_stem(p, x, wt, bias, res, y); /* one-channel stems: patches copied, 8 x 32 tiles (conv_posx_x86.h) */
#else
    return 0;
#endif
}
#endif
#endif
