/* Depthwise ONNX Conv, 1-D or 2-D, kernel width 3, 5 or 7 (any height), column stride 1 or 2 (any
 * row stride), any pads, no dilation, without scratch: aotc_conv_depthwise_kxk_f32. Each output row goes in blocks
 * of AOTC_DWK_BLOCK outputs summed in registers, the taps read straight from the input; a block
 * whose taps cross the row's ends reads a copy of its inputs on the stack, zero outside the image.
 * Tap rows outside the image are skipped. */
#include "conv_internal.h"

/* The unrolling is spelled out so that a build at -Os (Cortex-M) still gets it: the taps of a row
 * (KW, a constant in each instance below) and the outputs of a block. clang reads its own pragma. */
#if defined(__clang__)
#define DWK_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define DWK_UNROLL _Pragma("GCC unroll 16")
#else
#define DWK_UNROLL
#endif

/* Blocks of DWK_B outputs; rows shorter than that in blocks of DWK_BN (half as many lanes wasted
 * on EfficientNet's 14- and 7-wide planes). */
#define DWK_B AOTC_DWK_BLOCK
#if AOTC_DWK_BLOCK > 8
#define DWK_BN 8
#else
#define DWK_BN AOTC_DWK_BLOCK
#endif

/* Planes that, zero-padded to every block's reach (rows and columns), fit in this many floats are
 * first copied so, on the stack (16 KB on targets with vector units; none elsewhere): then no block reads a
 * row end, and each input row is copied once instead of by every block and tap row that crosses
 * its ends (EfficientNet's 14- and 7-wide planes cross them in every block). */
#ifndef AOTC_DWK_PLANE
#if AOTC_DWK_BLOCK > 8
#define AOTC_DWK_PLANE 4096
#else
#define AOTC_DWK_PLANE 0
#endif
#endif

/* What one output row needs. */
typedef struct {
    const float *x;  /* input column 0 of the plane's row 0 */
    const float *w;  /* the plane's KH x KW weights */
    const float *res; /* the residual row, or NULL */
    float *y;        /* the output row */
    int32_t IW, ld, c_min, c_max; /* row length; row stride; columns [c_min, c_max) readable at x */
    int32_t iy0, pl;              /* input row of tap row 0; left pad */
    float b, lo, hi, alpha;       /* bias; clamp; slope below 0 (1: none) */
} dwk_row;

/* Tap row KY into the sums A0 (even taps) and A1 (odd taps) of a block (DWK_DEFINE's variables). */
#define DWK_TAP_ROW(KW, S, B, KY, A0, A1)                                                           \
    {                                                                                               \
        const float *xr = r->x + (ptrdiff_t)(r->iy0 + (KY)) * r->ld;                                \
        const float *wk = r->w + (KY) * (KW);                                                       \
        const float *AOTC_RESTRICT t = seg;                                                         \
        int32_t kx;                                                                                 \
        if (inside) {                                                                               \
            t = xr + c0;                                                                            \
        } else { /* the taps cross a row end: zeros there */                                        \
            for (c = 0; c < c_lo; ++c) seg[c] = 0.0f;                                               \
            for (c = c_lo; c < c_hi; ++c) seg[c] = xr[c0 + c];                                      \
            for (c = c_hi; c < span; ++c) seg[c] = 0.0f;                                            \
        }                                                                                           \
        if ((S) == 1) {                                                                             \
            for (l = 0; l < (B); ++l) {                                                             \
                float a0 = A0[l], a1 = A1[l];                                                       \
                DWK_UNROLL for (kx = 0; kx < (KW); ++kx) {                                          \
                    if (kx % 2 == 0) {                                                              \
                        a0 = MK_MADD(wk[kx], t[l + kx], a0);                                        \
                    } else {                                                                        \
                        a1 = MK_MADD(wk[kx], t[l + kx], a1);                                        \
                    }                                                                               \
                }                                                                                   \
                A0[l] = a0;                                                                         \
                A1[l] = a1;                                                                         \
            }                                                                                       \
        } else {                                                                                    \
            /* even taps kx read ev[l + kx / 2], odd ones od[l + kx / 2] (KW odd) */                \
            float ev[(B) + (KW) / 2], od[(B) + (KW) / 2 - 1];                                       \
            DWK_UNROLL for (l = 0; l < (B) + (KW) / 2; ++l) ev[l] = t[2 * l];                            \
            DWK_UNROLL for (l = 0; l < (B) + (KW) / 2 - 1; ++l) od[l] = t[2 * l + 1];                    \
            DWK_UNROLL for (kx = 0; kx < (KW); ++kx) { /* (the lanes innermost: faster at stride 2) */\
                const float wv = wk[kx];                                                            \
                if (kx % 2 == 0) {                                                                  \
                    DWK_UNROLL for (l = 0; l < (B); ++l) A0[l] = MK_MADD(wv, ev[l + kx / 2], A0[l]);\
                } else {                                                                            \
                    DWK_UNROLL for (l = 0; l < (B); ++l) A1[l] = MK_MADD(wv, od[l + kx / 2], A1[l]);\
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
    }

/* Outputs [ox0, ox0 + B) of a row, of which the first `keep` are stored (keep < B only for rows
 * shorter than a block). Four sums per output (even and odd tap rows, even and odd taps) make four
 * chains of dependent multiply-adds per vector. At stride 2 each tap row's inputs are first split
 * into even and odd columns (compilers de-interleave them in registers): every tap is then a
 * unit-stride read. */
#define DWK_DEFINE(KW, S, B)                                                                        \
    static void dwk_block_##KW##_##S##_##B(const dwk_row *r, int32_t ox0, int32_t keep, int32_t ky0,\
                                           int32_t ky1) {                                           \
        float acc0[B], acc1[B], acc2[B], acc3[B];                                                   \
        float seg[2 * (B) + 6]; /* a tap row's (B - 1) S + KW inputs */                             \
        const int32_t c0 = ox0 * (S) - r->pl, span = ((B) - 1) * (S) + (KW);                        \
        const int inside = c0 >= r->c_min && c0 + span <= r->c_max;                                 \
        /* outside: seg[c] is input column c0 + c, zero outside [0, IW): zeros to c_lo, then a copy \
         * to c_hi, then zeros */                                                                   \
        const int32_t c_lo = c0 < 0 ? (-c0 < span ? -c0 : span) : 0;                                \
        const int32_t c_hi = r->IW - c0 < span ? (r->IW - c0 > c_lo ? r->IW - c0 : c_lo) : span;    \
        int32_t ky, l, c;                                                                           \
        if ((S) == 1 && ky0 == 0 && ky1 == (KW) && inside) {                                        \
            /* a square kernel whose taps all lie in a padded plane: the whole window of each lane  \
             * summed in registers (the lanes outermost: gcc vectorises that loop) */               \
            const float *AOTC_RESTRICT x0 = r->x + (ptrdiff_t)r->iy0 * r->ld + c0;                  \
            const float *wk = r->w;                                                                 \
            const ptrdiff_t ld = r->ld;                                                             \
            for (l = 0; l < (B); ++l) {                                                             \
                float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;                                   \
                int32_t kx;                                                                         \
                DWK_UNROLL for (ky = 0; ky < (KW); ++ky) {                                          \
                    DWK_UNROLL for (kx = 0; kx < (KW); ++kx) {                                      \
                        const float xv = x0[ky * ld + l + kx], wv = wk[ky * (KW) + kx];             \
                        if (ky % 2 == 0) {                                                          \
                            if (kx % 2 == 0) a0 = MK_MADD(wv, xv, a0); else a1 = MK_MADD(wv, xv, a1);\
                        } else {                                                                    \
                            if (kx % 2 == 0) a2 = MK_MADD(wv, xv, a2); else a3 = MK_MADD(wv, xv, a3);\
                        }                                                                           \
                    }                                                                               \
                }                                                                                   \
                acc0[l] = a0;                                                                       \
                acc1[l] = a1;                                                                       \
                acc2[l] = a2;                                                                       \
                acc3[l] = a3;                                                                       \
            }                                                                                       \
        } else {                                                                                    \
            DWK_UNROLL for (l = 0; l < (B); ++l) acc0[l] = acc1[l] = acc2[l] = acc3[l] = 0.0f;      \
            for (ky = ky0; ky + 1 < ky1; ky += 2) {                                                 \
                DWK_TAP_ROW(KW, S, B, ky, acc0, acc1)                                               \
                DWK_TAP_ROW(KW, S, B, ky + 1, acc2, acc3)                                           \
            }                                                                                       \
            if (ky < ky1) DWK_TAP_ROW(KW, S, B, ky, acc0, acc1)                                     \
        }                                                                                           \
        DWK_UNROLL for (l = 0; l < (B); ++l) acc0[l] = ((acc0[l] + acc1[l]) + (acc2[l] + acc3[l])) + r->b;\
        if (keep == (B)) {                                                                          \
            if (r->res != NULL) {                                                                   \
                DWK_UNROLL for (l = 0; l < (B); ++l) acc0[l] += r->res[ox0 + l];                    \
            }                                                                                       \
            DWK_UNROLL for (l = 0; l < (B); ++l) {                                                  \
                const float v = acc0[l] < r->lo ? r->lo : acc0[l];                                  \
                const float u = v > r->hi ? r->hi : v;                                              \
                r->y[ox0 + l] = u < 0.0f ? r->alpha * u : u;                                        \
            }                                                                                       \
        } else {                                                                                    \
            for (l = 0; l < keep; ++l) {                                                            \
                float v = acc0[l];                                                                  \
                if (r->res != NULL) v += r->res[ox0 + l];                                           \
                v = v < r->lo ? r->lo : v;                                                          \
                v = v > r->hi ? r->hi : v;                                                          \
                r->y[ox0 + l] = v < 0.0f ? r->alpha * v : v;                                        \
            }                                                                                       \
        }                                                                                           \
    }

#define DWK_DEFINE_ALL(B) \
    DWK_DEFINE(3, 1, B) DWK_DEFINE(3, 2, B) DWK_DEFINE(5, 1, B) DWK_DEFINE(5, 2, B) DWK_DEFINE(7, 1, B) DWK_DEFINE(7, 2, B)
DWK_DEFINE_ALL(AOTC_DWK_BLOCK)
#if DWK_BN != DWK_B
DWK_DEFINE_ALL(DWK_BN)
#endif

typedef void (*dwk_block_fn)(const dwk_row *, int32_t, int32_t, int32_t, int32_t);

#define DWK_PICK(B) \
    (KW == 3 ? (s == 1 ? dwk_block_3_1_##B : dwk_block_3_2_##B) \
     : KW == 5 ? (s == 1 ? dwk_block_5_1_##B : dwk_block_5_2_##B) : (s == 1 ? dwk_block_7_1_##B : dwk_block_7_2_##B))
#define DWK_PICK_X(B) DWK_PICK(B)

/* The block kernel for kernel width KW and stride s: narrow, for rows shorter than DWK_B. */
static dwk_block_fn pick(int32_t KW, int32_t s, int narrow) {
#if DWK_BN != DWK_B
    if (narrow) return DWK_PICK_X(DWK_BN);
#endif
    (void)narrow;
    return DWK_PICK_X(AOTC_DWK_BLOCK);
}

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
} dwk_job;

/* Items [begin, end): the input channels of each image (with a pool, split over its threads), each with its
 * mult output channels */
static void dwk_items(void *arg, int32_t begin, int32_t end) {
    const dwk_job *J = (const dwk_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KH = p->kernel[1], KW = p->kernel[2], s = p->strides[2];
    const int32_t mult = p->out_c / p->in_c; /* outputs per input channel */
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    const dwk_block_fn block = pick(KW, s, OW < DWK_B);
    const int32_t B = OW < DWK_B ? DWK_BN : DWK_B;
    /* the padded copy: pl zero columns on the left, and on the right as many as the last block reaches past */
    const int32_t pl = p->pads[2], reach = (OW >= B ? OW - B : 0) * s - pl + (B - 1) * s + KW;
    const int32_t pw = pl + IW + (reach > IW ? reach - IW : 0);
    /* and rows: pt zero rows on top, and below as many as the last output row's taps reach past */
    const int32_t pt = p->pads[1], below = (OH - 1) * p->strides[1] - pt + KH - IH;
    const int32_t ph = pt + IH + (below > 0 ? below : 0);
    const int padded = AOTC_DWK_PLANE > 0 && (ptrdiff_t)ph * pw <= AOTC_DWK_PLANE;
    float plane[AOTC_DWK_PLANE > 0 ? AOTC_DWK_PLANE : 1];
    dwk_row r;
    int32_t item, n, ci, o, oy, ox, iy, c;
    r.IW = IW;
    r.ld = padded ? pw : IW;
    r.c_min = padded ? -pl : 0;
    r.c_max = padded ? pw - pl : IW;
    r.pl = pl;
    r.lo = p->act == AOTC_ACT_CLAMP ? p->act_lo : -INFINITY;
    r.hi = p->act == AOTC_ACT_CLAMP ? p->act_hi : INFINITY;
    r.alpha = p->act == AOTC_ACT_LEAKY ? p->act_alpha : 1.0f;
    for (item = begin; item < end; ++item) {
        n = item / p->in_c, ci = item % p->in_c;
        r.x = J->x + ((ptrdiff_t)n * p->in_c + ci) * in_plane;
        if (padded) {
            for (iy = -pt; iy < ph - pt; ++iy) {
                float *row = plane + (ptrdiff_t)(iy + pt) * pw;
                if (iy < 0 || iy >= IH) {
                    for (c = 0; c < pw; ++c) row[c] = 0.0f;
                    continue;
                }
                for (c = 0; c < pl; ++c) row[c] = 0.0f;
                memcpy(row + pl, r.x + (ptrdiff_t)iy * IW, (size_t)IW * sizeof(float));
                for (c = pl + IW; c < pw; ++c) row[c] = 0.0f;
            }
            r.x = plane + (ptrdiff_t)pt * pw + pl;
        }
        for (o = ci * mult; o < (ci + 1) * mult; ++o) {
            const ptrdiff_t yoff = ((ptrdiff_t)n * p->out_c + o) * out_plane;
            r.w = J->w + (ptrdiff_t)o * KH * KW;
            r.b = J->bias != NULL ? J->bias[o] : 0.0f;
            for (oy = 0; oy < OH; ++oy) {
                int32_t ky0, ky1;
                r.iy0 = oy * p->strides[1] - p->pads[1];
                if (padded) { /* every tap row is in the padded plane */
                    ky0 = 0;
                    ky1 = KH;
                } else {
                    valid_range(KH, IH, 1, r.iy0, &ky0, &ky1); /* tap rows inside the image */
                }
                r.y = J->y + yoff + (ptrdiff_t)oy * OW;
                r.res = J->res != NULL ? J->res + yoff + (ptrdiff_t)oy * OW : NULL;
                if (OW < B) { /* one short block */
                    block(&r, 0, OW, ky0, ky1);
                    continue;
                }
                /* whole blocks; the last one moved left to end at OW (it recomputes a few outputs,
                 * which the residual and activation leave the same: each is written, not added to) */
                for (ox = 0; ox < OW; ox += B) block(&r, ox + B <= OW ? ox : OW - B, B, ky0, ky1);
            }
        }
    }
}

/* x86 with AVX2 and FMA, no AVX-512: 5 x 5 and 7 x 7 in vectors of 8 channels (conv_dwk8_avx2.h). Unlike
 * conv_dwkc_avx512.c, stride 2 in several bands too (their input rows transposed again where bands overlap): the
 * 16-output row blocks took 5.9 instructions a multiply-add on EfficientNet-B0's 56 -> 28, this 0.65 (its time at
 * --isa avx2: 12.9 -> 11.9 ms). */
#include "conv_dwk8_avx2.h"
#if DWK8_ON
DWK8_KERNEL(dwk8_5s1, 5, 1)
DWK8_KERNEL(dwk8_5s2, 5, 2)
DWK8_KERNEL(dwk8_7s1, 7, 1)
DWK8_KERNEL(dwk8_7s2, 7, 2)
#endif

void aotc_conv_depthwise_kxk_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                 const float *res, float *y) {
    dwk_job J;
    if (aotc_conv_dwkc_avx512(p, x, w, bias, res, y) || aotc_conv_dwk_avx512(p, x, w, bias, res, y, 1))
        return; /* on AVX-512 (conv_dwkc_avx512.c, conv_dwk_avx512.c) */
#if DWK8_ON
    if ((p->kernel[2] == 5 || p->kernel[2] == 7) && dwk8_fits(p)) { /* AVX2 without AVX-512 */
        const int32_t K = p->kernel[2], s = p->strides[2];
        dwk8_run(p, x, w, bias, res, y, K == 5 ? (s == 1 ? dwk8_5s1 : dwk8_5s2) : (s == 1 ? dwk8_7s1 : dwk8_7s2));
        return;
    }
#endif
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    aotc_parallel_for(dwk_items, &J, p->batch * p->in_c);
}
