/* AVX-512F GEMM tiles with the vectors along output positions, for NCHW convs of modest K (input
 * channels x taps). Included by conv_pointwise.c (1 x 1, stride 1) and conv_ig_avx512.h (the implicit
 * GEMM's other shapes); other targets compile none of it. Internal to runtime_c/kernels.
 *
 * Why: on KWS DS-CNN's 64 -> 64 1 x 1 convs over 25 x 5 positions the GEMM core (tiles of 6 x 16,
 * weights broadcast one at a time, 125 columns = 7 panels and a tail) ran at 75-85 % of the FMA
 * peak, and its 10 x 4 stride-2 stem over one input channel (the implicit GEMM, 6 positions x 16
 * channels, stored transposed) at about 50 %. Here a register tile is 8 output channels x 32
 * positions (16 accumulators): per k, two vector loads of the input and eight multiply-adds with a
 * weight broadcast from memory each, so the loads stay under the FMA rate; a block of 32
 * positions' K inputs (K <= 128: at most 16 KiB) stays in L1 while every output channel passes
 * over it. The 1 x 1 conv reads the input in place; one-channel convs (stems) first copy a chunk
 * of output rows' patches (zero where a tap falls in the padding) into a buffer on the stack.
 * Bias, residual and activation (none, clamp, leaky) are applied in registers, one store. */
#ifndef AOTC_CONV_POSX_AVX512_H
#define AOTC_CONV_POSX_AVX512_H

#include "conv_internal.h"
#include "paths_avx512.h" /* AOTC_X86_PATHS */

#if AOTC_X86_PATHS
#include <immintrin.h>
#define AOTC_CONV_POSX 1

#define POSX_KMAX 128 /* largest K: a block of 32 positions (16 KiB) stays in L1 */

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

/* One output channel's 32 sums (r0, r1) + the residual's (res, or NULL), the activation, stored to y (lanes mk0,
 * mk1; full: all 32, loaded and stored without masks) */
static MK_INLINE void posx_finish(const posx_tile *T, __m512 r0, __m512 r1, const float *res, float *y, __mmask16 mk0,
                                  __mmask16 mk1, int full) {
    if (res != NULL) {
        r0 = _mm512_add_ps(r0, full ? _mm512_loadu_ps(res) : _mm512_maskz_loadu_ps(mk0, res));
        r1 = _mm512_add_ps(r1, full ? _mm512_loadu_ps(res + 16) : _mm512_maskz_loadu_ps(mk1, res + 16));
    }
    if (T->act == AOTC_ACT_LEAKY) {
        const __m512 lk = _mm512_set1_ps(T->leak);
        r0 = _mm512_mask_mul_ps(r0, _mm512_cmp_ps_mask(r0, _mm512_setzero_ps(), _CMP_LT_OQ), r0, lk);
        r1 = _mm512_mask_mul_ps(r1, _mm512_cmp_ps_mask(r1, _mm512_setzero_ps(), _CMP_LT_OQ), r1, lk);
    } else {
        const __m512 lo = _mm512_set1_ps(T->lo), hi = _mm512_set1_ps(T->hi);
        r0 = _mm512_min_ps(_mm512_max_ps(r0, lo), hi);
        r1 = _mm512_min_ps(_mm512_max_ps(r1, lo), hi);
    }
    if (full) {
        _mm512_storeu_ps(y, r0);
        _mm512_storeu_ps(y + 16, r1);
    } else {
        _mm512_mask_storeu_ps(y, mk0, r0);
        _mm512_mask_storeu_ps(y + 16, mk1, r1);
    }
}

/* MR output channels x 32 positions (lanes mk0, mk1; FULL: all 32, loaded and stored without
 * masks, which took 4 % off KWS's 1 x 1 convs on Zen 4). ROWS: W is [m][K] rows ldw apart; else
 * W^T's packed panels (k rows of PANEL, MR | PANEL). */
#define POSX_TILE(NAME, MR, ROWS, FULL)                                                                \
    static MK_NOINLINE void NAME(const posx_tile *T, const float *w, const float *bias, const float *res, float *y, \
                                 __mmask16 mk0, __mmask16 mk1) {                                       \
        __m512 a0[MR], a1[MR];                                                                         \
        const float *xp = T->x;                                                                        \
        const ptrdiff_t xs = T->xs, ldw = T->ldw;                                                      \
        const int32_t K = T->k;                                                                        \
        int32_t i, k;                                                                                  \
        _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) a0[i] = a1[i] = _mm512_set1_ps(bias != NULL ? bias[i] : 0.0f); \
        for (k = 0; k < K; ++k, xp += xs) {                                                            \
            const __m512 x0 = (FULL) ? _mm512_loadu_ps(xp) : _mm512_maskz_loadu_ps(mk0, xp);          \
            const __m512 x1 = (FULL) ? _mm512_loadu_ps(xp + 16) : _mm512_maskz_loadu_ps(mk1, xp + 16); \
            _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) {                                       \
                const __m512 wv = _mm512_set1_ps((ROWS) ? w[i * ldw + k] : w[k * PANEL + i]);          \
                a0[i] = _mm512_fmadd_ps(wv, x0, a0[i]);                                                \
                a1[i] = _mm512_fmadd_ps(wv, x1, a1[i]);                                                \
            }                                                                                          \
        }                                                                                              \
        _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i)                                             \
            posx_finish(T, a0[i], a1[i], res != NULL ? res + i * T->ys : NULL, y + i * T->ys, mk0, mk1, FULL); \
    }
POSX_TILE(posx_rows8, 8, 1, 0)
POSX_TILE(posx_rows8_full, 8, 1, 1)
POSX_TILE(posx_rows1, 1, 1, 0)
POSX_TILE(posx_panel8, 8, 0, 0)
POSX_TILE(posx_panel8_full, 8, 0, 1)
POSX_TILE(posx_panel1, 1, 0, 0)
#undef POSX_TILE

/* Every output channel of T over the 32 positions from T->x, T->y, T->res on (lanes mk0, mk1).
 * ROWS: T->w is [m][K]; else W^T's panels. */
static inline void posx_block(const posx_tile *T, int rows, __mmask16 mk0, __mmask16 mk1) {
    const int full = mk0 == 0xFFFF && mk1 == 0xFFFF;
    int32_t m = 0;
    for (; m + 8 <= T->m; m += 8) {
        const float *w = rows ? T->w + m * T->ldw : T->w + (ptrdiff_t)(m / PANEL) * T->k * PANEL + m % PANEL;
        const float *b = T->bias != NULL ? T->bias + m : NULL, *r = T->res != NULL ? T->res + m * T->ys : NULL;
        if (rows) (full ? posx_rows8_full : posx_rows8)(T, w, b, r, T->y + m * T->ys, mk0, mk1);
        else (full ? posx_panel8_full : posx_panel8)(T, w, b, r, T->y + m * T->ys, mk0, mk1);
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

/* The order of a 1 x 1 conv's tiles. Where its output planes fit in L2, a block of 32 positions at a time, every
 * output channel over it (the block's inputs stay in L1). Where they do not (POSX_OUT_BYTES or more), each group of 8
 * output channels runs over a span of positions before the next group starts, the span's inputs (at most
 * POSX_SPAN_BYTES) staying in L2 for every group: each output plane is then written (and its residual read) in long
 * runs, not 128 bytes a block into every plane. Why (issue 64), on an Intel Xeon (Sapphire Rapids class, 2 MB of L2),
 * single convs, min of 100 runs: ResNet-50's 64 -> 256 on 56 x 56 with its residual 1087 -> 910 us, MobileNetV2's
 * 16 -> 96 on 112 x 112 853 -> 636 us; 24 -> 144 on 56 x 56 (1.8 MB of outputs) even either way, 32 -> 192 on 28 x 28
 * 80 -> 82 us the new way (hence the threshold). The sums are the same either way. */
#ifndef POSX_OUT_BYTES
#define POSX_OUT_BYTES (2 * 1024 * 1024)
#endif
#ifndef POSX_SPAN_BYTES
#define POSX_SPAN_BYTES (1024 * 1024)
#endif

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    int32_t span;   /* positions a span (whole blocks of 32, but the plane's last span) */
    int32_t nspan;  /* spans per plane */
    int32_t ngrp;   /* groups of 8 output channels (the last one may have fewer) */
    int32_t gper;   /* groups an item: all of them on blocks of 32, one on longer spans */
    int32_t nblk;   /* posx_stem: output rows a chunk */
    int32_t packed; /* w is the implicit GEMM's W^T (panels of PANEL channels, K rows each), else [m][K] */
} posx_job;

/* items: (image, group, span, chunk of gper groups of 8 output channels), the last varying fastest: posx_block
 * runs the chunk's channels on each block of the span in turn */
MK_UNUSED static void posx_pw_items(void *arg, int32_t begin, int32_t end) {
    const posx_job *J = (const posx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, nchunk = (J->ngrp + J->gper - 1) / J->gper;
    const ptrdiff_t npos = (ptrdiff_t)p->out_size[0] * p->out_size[1] * p->out_size[2];
    int32_t item;
    posx_tile T;
    T.xs = npos, T.ys = npos, T.ldw = cg, T.k = cg;
    posx_set_act(&T, p);
    for (item = begin; item < end; ++item) {
        const int32_t ch = item % nchunk, si = item / nchunk, s = si % J->nspan, gi = si / J->nspan;
        const int32_t g = gi % p->group, n = gi / p->group;
        const ptrdiff_t p0 = (ptrdiff_t)J->span * s, p1 = p0 + J->span < npos ? p0 + J->span : npos;
        const ptrdiff_t xo = ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
        const float *wg = J->w + (ptrdiff_t)g * (J->packed ? (mg + PANEL - 1) / PANEL * PANEL : mg) * cg;
        const int32_t m0 = 8 * ch * J->gper;
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + m0) * npos;
        ptrdiff_t b;
        T.m = min_i32(mg - m0, 8 * J->gper);
        T.w = J->packed ? wg + (ptrdiff_t)(m0 / PANEL) * cg * PANEL + m0 % PANEL : wg + (ptrdiff_t)m0 * cg;
        T.bias = J->bias != NULL ? J->bias + (ptrdiff_t)g * mg + m0 : NULL;
        for (b = p0; b < p1; b += 32) {
            T.x = J->x + xo + b, T.y = J->y + yo + b, T.res = J->res != NULL ? J->res + yo + b : NULL;
            posx_block(&T, !J->packed, posx_lanes(p1 - b), posx_lanes(p1 - b - 16));
        }
    }
}

/* The 1 x 1 stride-1 conv (aotc_conv_pointwise_f32's shapes) if this path takes it: 1, else 0.
 * packed: w is the implicit GEMM's W^T (a 1 x 1 conv the plan gave aotc_conv_implicit_f32: its
 * positions end in a partial panel, SqueezeNet's 55 x 55 squeeze and expand convs), else [m][K].
 * any_positions: taken whatever the lanes the last block of 32 leaves idle, so that whether this path
 * takes a conv does not depend on its positions (a RAM budget's row bands call a layer on fewer rows than
 * its whole call, and each output must be summed in the same order: aot/kernels/nchw_bands.py) */
MK_UNUSED static int posx_pointwise(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                          const float *res, float *y, int packed, int any_positions) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t npos = (ptrdiff_t)p->out_size[0] * p->out_size[1] * p->out_size[2];
    posx_job J;
    /* K past 128 or weights past 64 KiB: the GEMM core's packed, cache-blocked loops do better; and
     * where the last block of 32 would leave more than 1/8 of all lanes idle (VWW's 6 x 6 planes) */
    if (!posx_act_ok(p) || cg > POSX_KMAX || (ptrdiff_t)cg * mg > 16384 || mg < 8 ||
        (!any_positions && 8 * npos < 7 * 32 * ((npos + 31) / 32)))
        return 0;
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y, J.packed = packed;
    J.span = 32;
    if ((ptrdiff_t)mg * npos * 4 >= POSX_OUT_BYTES) { /* spans of balanced length, whole blocks */
        const ptrdiff_t spans = ((ptrdiff_t)cg * npos * 4 + POSX_SPAN_BYTES - 1) / POSX_SPAN_BYTES;
        J.span = (int32_t)((npos + 32 * spans - 1) / (32 * spans)) * 32;
    }
    J.nspan = (int32_t)((npos + J.span - 1) / J.span);
    J.ngrp = (mg + 7) / 8, J.gper = J.span == 32 ? J.ngrp : 1;
    aotc_parallel_for(posx_pw_items, &J, p->batch * p->group * J.nspan * ((J.ngrp + J.gper - 1) / J.gper));
    return 1;
}

/* ---- 1-D convs along a run of positions: each tap a shifted load of the input's rows ---- */

#define POSX_LINE_TMAX 16 /* most taps (the edge blocks' load masks live on the stack) */

/* The conv's positions as one line (a 1-D conv, or a 2-D one whose other axis is 1 in input, output and kernel, as
 * jax2tf writes a Conv1D): its length in and out, taps, dilation and start pad; 0 where the conv is not such a
 * line at stride 1 in NCHW, or has more than POSX_LINE_TMAX taps. */
typedef struct {
    int32_t len, out_len, taps, dil, pad;
} posx_line_shape;

static int posx_line_of(const aotc_conv_params *p, posx_line_shape *ls) {
    int32_t a = p->kernel[1] > 1 || p->in_size[2] == 1 ? 1 : 2; /* the axis of the line: H, or W */
    const int32_t o = 3 - a;                                     /* the other: its size 1 everywhere */
    if (p->in_nhwc != 0 || p->out_nhwc != 0 || p->in_size[0] != 1 || p->out_size[0] != 1 || p->kernel[0] != 1 ||
        p->pads[0] != 0 || p->in_size[o] != 1 || p->out_size[o] != 1 || p->kernel[o] != 1 || p->pads[o] != 0 ||
        p->strides[a] != 1 || p->kernel[a] > POSX_LINE_TMAX)
        return 0;
    ls->len = p->in_size[a], ls->out_len = p->out_size[a], ls->taps = p->kernel[a];
    ls->dil = p->dilations[a], ls->pad = p->pads[a];
    return 1;
}

/* MR output channels x 32 positions of a line conv: per input channel and tap two loads of the input (FULL: no
 * masks; else tap t's masks mk[2 t], mk[2 t + 1], zero where the tap falls outside the line, and the store's masks
 * mk[2 T], mk[2 T + 1]) and 2 MR multiply-adds with weights broadcast from W^T's packed panel (row (c, t)) */
#define POSX_LINE_TILE(NAME, MR, FULL)                                                                 \
    static MK_NOINLINE void NAME(const posx_tile *T, const posx_line_shape *ls, const float *w, const float *bias, \
                                 const float *res, float *y, const __mmask16 *mk) {                    \
        __m512 a0[MR], a1[MR];                                                                         \
        const float *xc = T->x;                                                                        \
        const int32_t taps = ls->taps, dil = ls->dil, cg = T->k / taps;                                \
        int32_t i, c, t;                                                                               \
        _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) a0[i] = a1[i] = _mm512_set1_ps(bias != NULL ? bias[i] : 0.0f); \
        for (c = 0; c < cg; ++c, xc += T->xs) {                                                        \
            for (t = 0; t < taps; ++t, w += PANEL) {                                                   \
                const float *xp = xc + (ptrdiff_t)t * dil;                                             \
                const __m512 x0 = (FULL) ? _mm512_loadu_ps(xp) : _mm512_maskz_loadu_ps(mk[2 * t], xp); \
                const __m512 x1 = (FULL) ? _mm512_loadu_ps(xp + 16) : _mm512_maskz_loadu_ps(mk[2 * t + 1], xp + 16); \
                _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) {                                   \
                    const __m512 wv = _mm512_set1_ps(w[i]);                                            \
                    a0[i] = _mm512_fmadd_ps(wv, x0, a0[i]);                                            \
                    a1[i] = _mm512_fmadd_ps(wv, x1, a1[i]);                                            \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
        _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i)                                             \
            posx_finish(T, a0[i], a1[i], res != NULL ? res + i * T->ys : NULL, y + i * T->ys, mk[2 * taps],     \
                        mk[2 * taps + 1], FULL);                                                       \
    }
POSX_LINE_TILE(posx_line8, 8, 0)
POSX_LINE_TILE(posx_line8_full, 8, 1)
POSX_LINE_TILE(posx_line1, 1, 0)
#undef POSX_LINE_TILE

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    posx_line_shape ls;
    int32_t nblk; /* blocks of 32 output positions */
} posx_line_job;

static void posx_line_items(void *arg, int32_t begin, int32_t end) {
    const posx_line_job *J = (const posx_line_job *)arg;
    const aotc_conv_params *p = J->p;
    const posx_line_shape *ls = &J->ls;
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, K = cg * ls->taps;
    const ptrdiff_t group_w = (ptrdiff_t)(mg + PANEL - 1) / PANEL * PANEL * K;
    __mmask16 mk[2 * POSX_LINE_TMAX + 2];
    int32_t item, t, m, v;
    posx_tile T;
    T.xs = ls->len, T.ys = ls->out_len, T.ldw = 0, T.k = K, T.m = mg;
    posx_set_act(&T, p);
    for (item = begin; item < end; ++item) {
        const int32_t b = item % J->nblk, gi = item / J->nblk, g = gi % p->group, n = gi / p->group;
        const int32_t h0 = 32 * b, i0 = h0 - ls->pad; /* the first output position, the input position of its tap 0 */
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * ls->out_len + h0;
        /* interior: every tap's 32 inputs inside the line, 32 outputs */
        const int full = i0 >= 0 && i0 + 31 + (ls->taps - 1) * ls->dil < ls->len && h0 + 32 <= ls->out_len;
        for (t = 0; t <= ls->taps; ++t) /* tap t's load masks, then (t = taps) the store's */
            for (v = 0; v < 2; ++v) {
                const int32_t first = i0 + 16 * v + t * ls->dil; /* the input position of lane 0 */
                const int32_t outs = ls->out_len - h0 - 16 * v;  /* lanes that are outputs */
                mk[2 * t + v] = t == ls->taps ? posx_lanes(outs)
                                              : (__mmask16)(posx_lanes(ls->len - first) & posx_lanes(outs) &
                                                            (__mmask16)~posx_lanes(-first));
            }
        T.x = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * ls->len + i0;
        T.y = J->y + yo, T.res = J->res != NULL ? J->res + yo : NULL;
        for (m = 0; m < mg; m += m + 8 <= mg ? 8 : 1) {
            const float *w = J->w + g * group_w + (ptrdiff_t)(m / PANEL) * K * PANEL + m % PANEL;
            const float *bias = J->bias != NULL ? J->bias + (ptrdiff_t)g * mg + m : NULL;
            const float *res = T.res != NULL ? T.res + m * T.ys : NULL;
            if (m + 8 <= mg) (full ? posx_line8_full : posx_line8)(&T, ls, w, bias, res, T.y + m * T.ys, mk);
            else posx_line1(&T, ls, w, bias, res, T.y + m * T.ys, mk);
        }
    }
}

/* A 1-D conv at stride 1 (posx_line_of) into at least 8 output channels per group, weights as W^T's packed
 * panels: 1, else 0. Why (issue 64): a file-type classifier's 256 -> 512 Conv1D of 5 taps over 512 positions
 * (jax2tf's [5, 1] kernel on a W of 1) took 84 % of its time in the implicit GEMM's tiles of 6 positions x 16
 * channels, at 85 % of the FMA peak; here a tap is a vector load of 16 neighbouring inputs, shared by 8 channels. */
MK_UNUSED static int posx_line(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                               const float *res, float *y) {
    posx_line_job J;
    if (!posx_act_ok(p) || p->out_c / p->group < 8 || !posx_line_of(p, &J.ls)) return 0;
    J.p = p, J.x = x, J.w = wt, J.bias = bias, J.res = res, J.y = y;
    J.nblk = (J.ls.out_len + 31) / 32;
    aotc_parallel_for(posx_line_items, &J, p->batch * p->group * J.nblk);
    return 1;
}

/* ---- one-channel 2-D convs: patches copied row by row into a buffer on the stack ---- */

#define POSX_COL_FLOATS 8192 /* the patch buffer: K rows of a chunk's positions, 32 KiB */

/* Output rows per chunk: as many as the patch buffer holds, each patch row padded to 32 floats. */
static int32_t posx_chunk_rows(const aotc_conv_params *p, int32_t K) {
    const int32_t OH = p->out_size[1], OW = p->out_size[2];
    int32_t r = OH;
    while (r > 1 && (ptrdiff_t)K * ((r * OW + 31) / 32 * 32) > POSX_COL_FLOATS) --r;
    return r;
}

/* n rows of a patch row: d[r * OW + ox] = xr[r * xs + ox * sx], zero where column c0 + ox * sx lies
 * outside [0, IW). Narrow: one load and one vpermps per row, all 16 lanes stored (what follows d's
 * rows is written after, and the patch buffer has 16 floats of slack). */
static MK_NOINLINE void posx_patch_rows(float *d, const float *xr, int32_t n, ptrdiff_t xs, int32_t c0, int32_t IW,
                                        int32_t OW, int32_t sx, __m512i idx, int narrow) {
    const __mmask16 cols = posx_lanes(IW - c0) & (__mmask16)~posx_lanes(-c0);
    int32_t r, ox;
    if (narrow) {
        for (r = 0; r < n; ++r, xr += xs, d += OW) _mm512_storeu_ps(d, _mm512_permutexvar_ps(idx, _mm512_maskz_loadu_ps(cols, xr)));
        return;
    }
    for (r = 0; r < n; ++r, xr += xs, d += OW) {
        for (ox = 0; ox < OW; ++ox) {
            const int32_t ix = c0 + ox * sx;
            d[ox] = ix >= 0 && ix < IW ? xr[ox * sx] : 0.0f;
        }
    }
}

static void posx_rows_items(void *arg, int32_t begin, int32_t end) {
    const posx_job *J = (const posx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KH = p->kernel[1], KW = p->kernel[2], sy = p->strides[1], sx = p->strides[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, K = cg * KH * KW;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)OH * OW;
    const ptrdiff_t group_w = (ptrdiff_t)(mg + PANEL - 1) / PANEL * PANEL * K;
    const int32_t R = J->nblk, nch = (OH + R - 1) / R;
    const int narrow = (OW - 1) * sx < 16; /* a tap's columns for one output row: one load, one vpermps */
    const __m512i idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(sx));
    float col[POSX_COL_FLOATS + 16] __attribute__((aligned(64)));
    int32_t item, c, ky, kx;
    posx_tile T;
    T.ys = plane, T.ldw = 0, T.k = K, T.m = mg;
    posx_set_act(&T, p);
    for (item = begin; item < end; ++item) {
        const int32_t ch = item % nch, gi = item / nch, g = gi % p->group, n = gi / p->group;
        const int32_t oy0 = ch * R, rows = min_i32(R, OH - oy0), np = rows * OW, cp = (np + 31) / 32 * 32;
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * plane + (ptrdiff_t)oy0 * OW;
        const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
        float *d = col;
        int32_t b;
        for (c = 0; c < cg; ++c) {
            for (ky = 0; ky < KH; ++ky) {
                for (kx = 0; kx < KW; ++kx, d += cp) { /* patch row (c, ky, kx) */
                    const int32_t c0 = kx * p->dilations[2] - p->pads[2]; /* the input column of ox = 0 */
                    int32_t lo, hi;
                    valid_range(OH, IH, sy, ky * p->dilations[1] - p->pads[1], &lo, &hi); /* rows inside */
                    lo = min_i32(rows, lo > oy0 ? lo - oy0 : 0), hi = min_i32(rows, hi > oy0 ? hi - oy0 : 0);
                    hi = hi > lo ? hi : lo;
                    memset(d, 0, (size_t)lo * OW * sizeof(float));
                    if (hi > lo)
                        posx_patch_rows(d + lo * OW, xg + (ptrdiff_t)c * in_plane +
                                            (ptrdiff_t)((oy0 + lo) * sy - p->pads[1] + ky * p->dilations[1]) * IW + c0,
                                        hi - lo, (ptrdiff_t)sy * IW, c0, IW, OW, sx, idx, narrow);
                    memset(d + hi * OW, 0, (size_t)(rows - hi) * OW * sizeof(float)); /* after: see posx_patch_rows */
                }
            }
        }
        T.w = J->w + g * group_w, T.bias = J->bias != NULL ? J->bias + (ptrdiff_t)g * mg : NULL;
        T.xs = cp;
        for (b = 0; b < cp; b += 32) {
            T.x = col + b, T.y = J->y + yo + b, T.res = J->res != NULL ? J->res + yo + b : NULL;
            posx_block(&T, 0, posx_lanes(np - b), posx_lanes(np - b - 16));
        }
    }
}

/* A plain 2-D NCHW conv over one input channel per group into at least 32 output channels, with
 * K = taps <= POSX_KMAX and rows of at most 64 outputs, weights as W^T's packed panels: 1, else 0.
 * Why only one channel: ResNet-8's RGB stem and 1 x 1 stride-2 shortcuts ran slower here than in
 * the implicit GEMM (the copies cost about as much as the multiply-adds of 16 output channels). */
MK_UNUSED static int posx_stem(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                                 const float *res, float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t K = cg * p->kernel[1] * p->kernel[2];
    posx_job J;
    if (!posx_act_ok(p) || p->in_nhwc != 0 || p->out_nhwc != 0 || p->in_size[0] != 1 || p->out_size[0] != 1 ||
        p->kernel[0] != 1 || p->pads[0] != 0 || K > POSX_KMAX || cg != 1 || mg < 32 || p->out_size[2] > 64)
        return 0;
    J.p = p, J.x = x, J.w = wt, J.bias = bias, J.res = res, J.y = y;
    J.nblk = posx_chunk_rows(p, K); /* output rows per chunk */
    aotc_parallel_for(posx_rows_items, &J, p->batch * p->group * ((p->out_size[1] + J.nblk - 1) / J.nblk));
    return 1;
}

#endif
#endif
