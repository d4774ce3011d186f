/* AVX-512F GEMM tiles with the vectors along output positions, for NCHW convs of modest K (input
 * channels x taps). Included by conv_pointwise.c (1 x 1, stride 1) and conv_ig_x86.h (the implicit
 * GEMM's other shapes); other targets compile none of it. Internal to runtime_c/kernels.
 *
 * Why: on KWS DS-CNN's 64 -> 64 1 x 1 convs over 25 x 5 positions the GEMM core (tiles of 6 x 16,
 * weights broadcast one at a time, 125 columns = 7 panels and a tail) ran at 75-85 % of the FMA
 * peak, and its 10 x 4 stride-2 stem over one input channel (the implicit GEMM, 6 positions x 16
 * channels, stored transposed) at about 50 %. Here a register tile is 8 output channels x 32
 * positions (16 accumulators): per k, two vector loads of the input and eight multiply-adds with a
 * weight broadcast from memory each, so the loads stay under the FMA rate; a block of 32
 * positions' K inputs (K <= 128: at most 16 KiB) stays in L1 while every output channel passes
 * over it. The 1 x 1 conv reads the input in place; other convs first gather a block's patches
 * (zero where a tap falls in the padding) into a buffer on the stack, K rows of 32 floats.
 * Bias, residual and activation (none, clamp, leaky) are applied in registers, one store. */
#ifndef AOTC_CONV_POSX_X86_H
#define AOTC_CONV_POSX_X86_H

#include "conv_internal.h"

#if defined(__AVX512F__) && !defined(AOTC_NO_X86_POSX)
#include <immintrin.h>
#define AOTC_CONV_POSX 1

#define POSX_KMAX 128 /* largest K of a gathered block (K x 32 floats on the stack) */

typedef struct {
    const float *x, *w, *bias, *res;
    float *y;
    ptrdiff_t xs;     /* floats from one k row of the input block to the next */
    ptrdiff_t ys;     /* floats from one output channel plane to the next */
    ptrdiff_t ldw;    /* weights (rows layout): floats from one output channel's row to the next */
    int32_t k, m, act; /* K, output channels */
    float lo, hi, leak;
} posx_tile;

static inline __mmask16 posx_lanes(ptrdiff_t n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* MR output channels x 32 positions (lanes mk0, mk1). WIDX(i, k): weight (m0 + i, k) from w.
 * ROWS: W is [m][K] rows ldw apart; else W^T's packed panels (k rows of PANEL, MR | PANEL). */
#define POSX_TILE(NAME, MR, ROWS)                                                                      \
    static MK_NOINLINE void NAME(const posx_tile *T, const float *w, const float *bias, const float *res, float *y, \
                                 __mmask16 mk0, __mmask16 mk1) {                                       \
        __m512 a0[MR], a1[MR];                                                                         \
        const float *xp = T->x;                                                                        \
        const ptrdiff_t xs = T->xs, ldw = T->ldw;                                                      \
        const int32_t K = T->k;                                                                        \
        int32_t i, k;                                                                                  \
        _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) a0[i] = a1[i] = _mm512_set1_ps(bias != NULL ? bias[i] : 0.0f); \
        for (k = 0; k < K; ++k, xp += xs) {                                                            \
            const __m512 x0 = _mm512_maskz_loadu_ps(mk0, xp);                                          \
            const __m512 x1 = _mm512_maskz_loadu_ps(mk1, xp + 16);                                     \
            _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) {                                       \
                const __m512 wv = _mm512_set1_ps((ROWS) ? w[i * ldw + k] : w[k * PANEL + i]);          \
                a0[i] = _mm512_fmadd_ps(wv, x0, a0[i]);                                                \
                a1[i] = _mm512_fmadd_ps(wv, x1, a1[i]);                                                \
            }                                                                                          \
        }                                                                                              \
        _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) {                                           \
            __m512 r0 = a0[i], r1 = a1[i];                                                             \
            if (res != NULL) {                                                                         \
                r0 = _mm512_add_ps(r0, _mm512_maskz_loadu_ps(mk0, res + i * T->ys));                   \
                r1 = _mm512_add_ps(r1, _mm512_maskz_loadu_ps(mk1, res + i * T->ys + 16));              \
            }                                                                                          \
            if (T->act == AOTC_ACT_LEAKY) {                                                            \
                const __m512 lk = _mm512_set1_ps(T->leak);                                             \
                r0 = _mm512_mask_mul_ps(r0, _mm512_cmp_ps_mask(r0, _mm512_setzero_ps(), _CMP_LT_OQ), r0, lk); \
                r1 = _mm512_mask_mul_ps(r1, _mm512_cmp_ps_mask(r1, _mm512_setzero_ps(), _CMP_LT_OQ), r1, lk); \
            } else {                                                                                   \
                const __m512 lo = _mm512_set1_ps(T->lo), hi = _mm512_set1_ps(T->hi);                   \
                r0 = _mm512_min_ps(_mm512_max_ps(r0, lo), hi);                                         \
                r1 = _mm512_min_ps(_mm512_max_ps(r1, lo), hi);                                         \
            }                                                                                          \
            _mm512_mask_storeu_ps(y + i * T->ys, mk0, r0);                                             \
            _mm512_mask_storeu_ps(y + i * T->ys + 16, mk1, r1);                                        \
        }                                                                                              \
    }
POSX_TILE(posx_rows8, 8, 1)
POSX_TILE(posx_rows1, 1, 1)
POSX_TILE(posx_panel8, 8, 0)
POSX_TILE(posx_panel1, 1, 0)
#undef POSX_TILE

/* Every output channel of T over the 32 positions from T->x, T->y, T->res on (lanes mk0, mk1).
 * ROWS: T->w is [m][K]; else W^T's panels. */
static inline void posx_block(const posx_tile *T, int rows, __mmask16 mk0, __mmask16 mk1) {
    int32_t m = 0;
    for (; m + 8 <= T->m; m += 8) {
        const float *w = rows ? T->w + m * T->ldw : T->w + (ptrdiff_t)(m / PANEL) * T->k * PANEL + m % PANEL;
        const float *b = T->bias != NULL ? T->bias + m : NULL, *r = T->res != NULL ? T->res + m * T->ys : NULL;
        if (rows) posx_rows8(T, w, b, r, T->y + m * T->ys, mk0, mk1);
        else posx_panel8(T, w, b, r, T->y + m * T->ys, mk0, mk1);
    }
    for (; m < T->m; ++m) {
        const float *w = rows ? T->w + m * T->ldw : T->w + (ptrdiff_t)(m / PANEL) * T->k * PANEL + m % PANEL;
        const float *b = T->bias != NULL ? T->bias + m : NULL, *r = T->res != NULL ? T->res + m * T->ys : NULL;
        if (rows) posx_rows1(T, w, b, r, T->y + m * T->ys, mk0, mk1);
        else posx_panel1(T, w, b, r, T->y + m * T->ys, mk0, mk1);
    }
}

MK_UNUSED static void posx_set_act(posx_tile *T, const aotc_conv_params *p) {
    T->act = p->act;
    T->lo = p->act == AOTC_ACT_CLAMP ? p->act_lo : -INFINITY;
    T->hi = p->act == AOTC_ACT_CLAMP ? p->act_hi : INFINITY;
    T->leak = p->act_alpha;
}

MK_UNUSED static int posx_act_ok(const aotc_conv_params *p) {
    return p->act == AOTC_ACT_NONE || p->act == AOTC_ACT_CLAMP || p->act == AOTC_ACT_LEAKY;
}

/* ---- 1 x 1, stride 1: the input in place ---- */

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    int32_t nblk; /* blocks of 32 positions per plane */
} posx_job;

MK_UNUSED static void posx_pw_items(void *arg, int32_t begin, int32_t end) {
    const posx_job *J = (const posx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t npos = (ptrdiff_t)p->out_size[0] * p->out_size[1] * p->out_size[2];
    int32_t item;
    posx_tile T;
    T.xs = npos, T.ys = npos, T.ldw = cg, T.k = cg, T.m = mg;
    posx_set_act(&T, p);
    for (item = begin; item < end; ++item) {
        const int32_t b = item % J->nblk, gi = item / J->nblk, g = gi % p->group, n = gi / p->group;
        const ptrdiff_t p0 = 32 * (ptrdiff_t)b;
        const ptrdiff_t xo = ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos + p0;
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * npos + p0;
        T.x = J->x + xo, T.y = J->y + yo, T.res = J->res != NULL ? J->res + yo : NULL;
        T.w = J->w + (ptrdiff_t)g * mg * cg, T.bias = J->bias != NULL ? J->bias + (ptrdiff_t)g * mg : NULL;
        posx_block(&T, 1, posx_lanes(npos - p0), posx_lanes(npos - p0 - 16));
    }
}

/* The 1 x 1 stride-1 conv (aotc_conv_pointwise_f32's shapes) if this path takes it: 1, else 0. */
MK_UNUSED static int posx_pointwise(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                          const float *res, float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t npos = (ptrdiff_t)p->out_size[0] * p->out_size[1] * p->out_size[2];
    posx_job J;
    /* K past 128 or weights past 64 KiB: the GEMM core's packed, cache-blocked loops do better; and
     * where the last block of 32 would leave more than 1/8 of all lanes idle (VWW's 6 x 6 planes) */
    if (!posx_act_ok(p) || cg > POSX_KMAX || (ptrdiff_t)cg * mg > 16384 || mg < 8 ||
        8 * npos < 7 * 32 * ((npos + 31) / 32))
        return 0;
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    J.nblk = (int32_t)((npos + 31) / 32);
    aotc_parallel_for(posx_pw_items, &J, p->batch * p->group * J.nblk);
    return 1;
}

/* ---- any 2-D conv: patches gathered per block of 32 positions ---- */

MK_UNUSED static void posx_gather_items(void *arg, int32_t begin, int32_t end) {
    const posx_job *J = (const posx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OW = p->out_size[2];
    const int32_t KH = p->kernel[1], KW = p->kernel[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, K = cg * KH * KW;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)p->out_size[1] * OW;
    const ptrdiff_t group_w = (ptrdiff_t)(mg + PANEL - 1) / PANEL * PANEL * K;
    float col[POSX_KMAX * 32] __attribute__((aligned(64)));
    int32_t item, v, c, ky, kx, k;
    posx_tile T;
    T.x = col, T.xs = 32, T.ys = plane, T.ldw = 0, T.k = K, T.m = mg;
    posx_set_act(&T, p);
    for (item = begin; item < end; ++item) {
        const int32_t b = item % J->nblk, gi = item / J->nblk, g = gi % p->group, n = gi / p->group;
        const ptrdiff_t p0 = 32 * (ptrdiff_t)b;
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * plane + p0;
        const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
        __m512i iy0[2], ix0[2];
        __mmask16 in[2];
        for (v = 0; v < 2; ++v) { /* the lanes' first input row and column */
            int32_t ty[16], tx[16], l;
            for (l = 0; l < 16; ++l) {
                const ptrdiff_t q = p0 + 16 * v + l < plane ? p0 + 16 * v + l : 0;
                ty[l] = (int32_t)(q / OW) * p->strides[1] - p->pads[1];
                tx[l] = (int32_t)(q % OW) * p->strides[2] - p->pads[2];
            }
            iy0[v] = _mm512_loadu_si512(ty), ix0[v] = _mm512_loadu_si512(tx);
            in[v] = posx_lanes(plane - p0 - 16 * v);
        }
        k = 0;
        for (c = 0; c < cg; ++c) {
            const float *xc = xg + (ptrdiff_t)c * in_plane;
            for (ky = 0; ky < KH; ++ky) {
                for (v = 0; v < 2; ++v) {
                    const __m512i iy = _mm512_add_epi32(iy0[v], _mm512_set1_epi32(ky * p->dilations[1]));
                    const __mmask16 rok = in[v] & _mm512_cmpge_epi32_mask(iy, _mm512_setzero_si512()) &
                                          _mm512_cmplt_epi32_mask(iy, _mm512_set1_epi32(IH));
                    const __m512i rowo = _mm512_mullo_epi32(iy, _mm512_set1_epi32(IW));
                    for (kx = 0; kx < KW; ++kx) {
                        const __m512i ix = _mm512_add_epi32(ix0[v], _mm512_set1_epi32(kx * p->dilations[2]));
                        const __mmask16 ok = rok & _mm512_cmpge_epi32_mask(ix, _mm512_setzero_si512()) &
                                             _mm512_cmplt_epi32_mask(ix, _mm512_set1_epi32(IW));
                        _mm512_store_ps(col + (k + ky * KW + kx) * 32 + 16 * v,
                                        _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok, _mm512_add_epi32(rowo, ix), xc, 4));
                    }
                }
            }
            k += KH * KW;
        }
        T.y = J->y + yo, T.res = J->res != NULL ? J->res + yo : NULL;
        T.w = J->w + g * group_w, T.bias = J->bias != NULL ? J->bias + (ptrdiff_t)g * mg : NULL;
        posx_block(&T, 0, in[0], in[1]);
    }
}

/* A plain 2-D NCHW conv with K = channels x taps <= POSX_KMAX, weights as W^T's packed panels
 * (rows (c, ky, kx)): 1, else 0. */
MK_UNUSED static int posx_gather(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                       const float *res, float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t K = cg * p->kernel[1] * p->kernel[2];
    posx_job J;
    if (!posx_act_ok(p) || p->in_nhwc != 0 || p->out_nhwc != 0 || p->in_size[0] != 1 || p->out_size[0] != 1 ||
        p->kernel[0] != 1 || p->pads[0] != 0 || K > POSX_KMAX || mg < 8)
        return 0;
    /* Only one input channel with at least 32 output channels (KWS's 10 x 4 stem over a spectrogram):
     * the gathers cost about as much as the multiply-adds of 16 channels (ResNet-8's RGB stem and
     * 1 x 1 stride-2 shortcuts ran slower here than in the implicit GEMM). */
    if (cg != 1 || mg < 32) return 0;
    J.p = p, J.x = x, J.w = wt, J.bias = bias, J.res = res, J.y = y;
    J.nblk = (p->out_size[1] * p->out_size[2] + 31) / 32;
    aotc_parallel_for(posx_gather_items, &J, p->batch * p->group * J.nblk);
    return 1;
}

#endif
#endif
