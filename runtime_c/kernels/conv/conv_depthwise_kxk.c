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

/* ---- x86 with AVX2 and FMA, no AVX-512: 5 x 5 and 7 x 7 in vectors of 8 channels ----
 * conv_dwkc_avx512.c's design at 8 lanes (a host without AVX-512: --host-isa generic built for x86-64-v3). The row
 * blocks above spend a block of 8 or 16 outputs' 25 multiply-adds on reading its weights, its four sums' reductions
 * and scalar stores under the activation: EfficientNet-B0's 5 x 5 convs on 28 x 28 to 7 x 7 planes took 30 % of its
 * time at --isa avx2 (issue 64). Here each block of 8 channels is transposed into a zero-padded plane of vectors
 * (a position's 8 channels), so that a tap is one load and one multiply-add per output and 8 channels, no idle
 * lanes and no row ends; the outputs are transposed back in 8 x 8 blocks. */
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__) && !defined(AOTC_NO_X86_DWK) && \
    (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define DWK8_ON 1
#define DWK8_VECS 1024 /* positions of a band's padded input (32 KiB), and of its outputs */
#define DWK8_R 7       /* outputs per register block: EfficientNet's and MobileNet's rows are multiples */

/* r[j] <- column j of the 8 x 8 matrix whose rows were r[0..7] */
static inline void dwk8_transpose(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* the lanes j of a vector of floats [j0, j0 + 8) that are below n, as VMASKMOVPS's mask */
static inline __m256i dwk8_lanes(ptrdiff_t j0, ptrdiff_t n) {
    const ptrdiff_t k = n - j0 > 8 ? 8 : n - j0;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* v[j] <- the nc rows' (`stride` apart; zeros past nc) floats j0 + j, of each row's n (zeros past n) */
static inline void dwk8_load_t(const float *a, ptrdiff_t stride, int32_t nc, ptrdiff_t j0, ptrdiff_t n, __m256 v[8]) {
    const __m256i m = dwk8_lanes(j0, n);
    int32_t j;
    for (j = 0; j < 8; ++j) v[j] = j < nc ? _mm256_maskload_ps(a + j * stride + j0, m) : _mm256_setzero_ps();
    dwk8_transpose(v);
}

/* Output rows per band: as many as the input buffer (their input rows, wp wide) and the outputs hold, 0 if not one */
static inline int32_t dwk8_band(int32_t OH, int32_t OW, int32_t wp, int32_t K, int32_t S) {
    int32_t ob = (DWK8_VECS / wp - K) / S + 1;
    if (DWK8_VECS / wp < K) return 0;
    if (ob > DWK8_VECS / OW) ob = DWK8_VECS / OW;
    return ob < OH ? ob : OH;
}

/* buf rows [iy0 - y0, iy1 - y0) (from column pl) <- input rows [iy0, iy1) of nc channels (planes in_plane apart),
 * transposed; the band's rows outside the image zeroed if `rezero` (buf row 0: input row y0) */
static MK_NOINLINE void dwk8_load(const float *xb, ptrdiff_t in_plane, int32_t nc, int32_t IH, int32_t IW, int32_t y0,
                                  int32_t hb, int32_t wp, int32_t pl, int rezero, __m256 *buf) {
    const int32_t iy0 = y0 > 0 ? y0 : 0, iy1 = y0 + hb < IH ? y0 + hb : IH;
    const int32_t cols = IW + pl <= wp ? IW : wp - pl; /* the input columns any tap reads */
    __m256 v[8];
    int32_t r, i, j, iy, ix;
    for (r = 0; r < hb && rezero; ++r) /* rows above or below the image */
        if (y0 + r < 0 || y0 + r >= IH)
            for (i = 0; i < wp; ++i) buf[r * wp + i] = _mm256_setzero_ps();
    for (iy = iy0; iy < iy1; ++iy) {
        __m256 *row = buf + (ptrdiff_t)(iy - y0) * wp + pl;
        for (ix = 0; ix < cols; ix += 8) {
            dwk8_load_t(xb + (ptrdiff_t)iy * IW, in_plane, nc, ix, cols, v);
            for (j = 0; j < 8 && ix + j < cols; ++j) row[ix + j] = v[j];
        }
    }
}

/* The nc channels' (planes out_plane apart) outputs q .. q + n <- out[0 .. n), transposed back, with the residual
 * (rb, or NULL) and the activation (r's lo, hi and alpha, as the row blocks apply them) */
static MK_NOINLINE void dwk8_store(const dwk_row *r, const __m256 *out, ptrdiff_t n, int32_t nc, ptrdiff_t out_plane,
                                   ptrdiff_t q, const float *rb, float *yb) {
    const __m256 lo = _mm256_set1_ps(r->lo), hi = _mm256_set1_ps(r->hi), alpha = _mm256_set1_ps(r->alpha);
    __m256 v[8];
    ptrdiff_t q0;
    int32_t j;
    for (q0 = 0; q0 < n; q0 += 8) {
        const __m256i m = dwk8_lanes(q0, n);
        const ptrdiff_t at = q + q0;
        for (j = 0; j < 8; ++j) v[j] = q0 + j < n ? out[q0 + j] : _mm256_setzero_ps();
        dwk8_transpose(v);
        if (rb != NULL) /* every residual loaded before the first store (conv_common_avx512.h: 4K aliasing) */
            for (j = 0; j < nc; ++j) v[j] = _mm256_add_ps(v[j], _mm256_maskload_ps(rb + j * out_plane + at, m));
        for (j = 0; j < nc; ++j) {
            /* lo where below it, hi where above (NaN kept, as the row blocks' selects), alpha u below 0 */
            const __m256 u = _mm256_min_ps(hi, _mm256_max_ps(lo, v[j]));
            const __m256 below = _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_LT_OQ);
            _mm256_maskstore_ps(yb + j * out_plane + at, m, _mm256_blendv_ps(u, _mm256_mul_ps(alpha, u), below));
        }
    }
}

/* Items [begin, end): blocks of 8 channels of one image; per band of output rows, blocks of DWK8_R outputs load a
 * tap row's input vectors once and reuse them across its K taps (7 sums, K weights and the input in 16 registers) */
#define DWK8_KERNEL(NAME, K, S)                                                                        \
    static void NAME(void *arg, int32_t begin, int32_t end) {                                          \
        const dwk_job *J = (const dwk_job *)arg;                                                       \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t C = p->out_c, IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1];      \
        const int32_t OW = p->out_size[2], pt = p->pads[1], pl = p->pads[2];                           \
        const int32_t wp = (OW - 1) * (S) + (K), blocks = (C + 7) / 8;                                 \
        const int32_t ob = dwk8_band(OH, OW, wp, K, S), hb = (ob - 1) * (S) + (K); /* a band's rows */ \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;                 \
        __m256 buf[DWK8_VECS], out[DWK8_VECS], wt[(K) * (K)];                                          \
        dwk_row act;                                                                                   \
        int32_t item, i, r, oy, oy0, ox0, ky, kx;                                                      \
        act.lo = p->act == AOTC_ACT_CLAMP ? p->act_lo : -INFINITY;                                     \
        act.hi = p->act == AOTC_ACT_CLAMP ? p->act_hi : INFINITY;                                      \
        act.alpha = p->act == AOTC_ACT_LEAKY ? p->act_alpha : 1.0f;                                    \
        /* the columns' padding (and with one band, the rows'); each band overwrites the rest */     \
        for (i = 0; i < hb * wp; ++i) buf[i] = _mm256_setzero_ps();                                    \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t n = item / blocks, c0 = item % blocks * 8, nc = C - c0 < 8 ? C - c0 : 8;     \
            const float *xb = J->x + ((ptrdiff_t)n * C + c0) * in_plane;                               \
            float *yb = J->y + ((ptrdiff_t)n * C + c0) * out_plane;                                    \
            const float *rb = J->res != NULL ? J->res + ((ptrdiff_t)n * C + c0) * out_plane : NULL;    \
            float bs[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};                            \
            __m256 bias;                                                                               \
            for (i = 0; i < nc && J->bias != NULL; ++i) bs[i] = J->bias[c0 + i];                       \
            bias = _mm256_loadu_ps(bs);                                                                \
            for (i = 0; i < (K) * (K); ++i) { /* tap i's weights, a vector of the nc channels */      \
                float t[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};                         \
                for (r = 0; r < nc; ++r) t[r] = J->w[(ptrdiff_t)(c0 + r) * (K) * (K) + i];            \
                wt[i] = _mm256_loadu_ps(t);                                                            \
            }                                                                                          \
            for (oy0 = 0; oy0 < OH; oy0 += ob) {                                                       \
                const int32_t oh = OH - oy0 < ob ? OH - oy0 : ob;                                      \
                dwk8_load(xb, in_plane, nc, IH, IW, oy0 * (S) - pt, hb, wp, pl, ob < OH, buf);         \
                for (oy = 0; oy < oh; ++oy)                                                            \
                    for (ox0 = 0; ox0 < OW; ox0 += DWK8_R) {                                           \
                        const int32_t o0 = ox0 + DWK8_R <= OW ? ox0 : OW - DWK8_R; /* the last ends at OW */ \
                        __m256 acc[DWK8_R];                                                            \
                        _Pragma("GCC unroll 8") for (r = 0; r < DWK8_R; ++r) acc[r] = bias;            \
                        for (ky = 0; ky < (K); ++ky) {                                                 \
                            const __m256 *row = buf + (oy * (S) + ky) * wp + o0 * (S);                 \
                            __m256 wk[K];                                                              \
                            _Pragma("GCC unroll 7") for (kx = 0; kx < (K); ++kx) wk[kx] = wt[ky * (K) + kx]; \
                            /* each input vector loaded once, into the outputs whose taps it is */     \
                            _Pragma("GCC unroll 19") for (i = 0; i < (DWK8_R - 1) * (S) + (K); ++i) {  \
                                const __m256 xi = row[i];                                              \
                                _Pragma("GCC unroll 7") for (kx = 0; kx < (K); ++kx)                   \
                                    if ((i - kx) % (S) == 0 && i - kx >= 0 && (i - kx) / (S) < DWK8_R)  \
                                        acc[(i - kx) / (S)] = _mm256_fmadd_ps(xi, wk[kx], acc[(i - kx) / (S)]); \
                            }                                                                          \
                        }                                                                              \
                        _Pragma("GCC unroll 8") for (r = 0; r < DWK8_R; ++r) out[oy * OW + o0 + r] = acc[r]; \
                    }                                                                                  \
                dwk8_store(&act, out, (ptrdiff_t)oh * OW, nc, out_plane, (ptrdiff_t)oy0 * OW, rb, yb);  \
            }                                                                                          \
        }                                                                                              \
    }
DWK8_KERNEL(dwk8_5s1, 5, 1)
DWK8_KERNEL(dwk8_5s2, 5, 2)
DWK8_KERNEL(dwk8_7s1, 7, 1)
DWK8_KERNEL(dwk8_7s2, 7, 2)
#undef DWK8_KERNEL

/* Runs the conv if a kernel above takes it: 1, else 0. Unlike conv_dwkc_avx512.c, stride 2 in several bands too
 * (their input rows transposed again where bands overlap): the 16-output row blocks took 5.9 instructions a
 * multiply-add on EfficientNet-B0's 56 -> 28, this 0.65 (its time at --isa avx2: 12.9 -> 11.9 ms). */
static int dwk8(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                float *y) {
    const int32_t K = p->kernel[2], s = p->strides[2], H = p->out_size[1], W = p->out_size[2];
    dwk_job J;
    if (p->in_nhwc != 0 || p->out_nhwc != 0 || p->group != p->in_c || p->out_c != p->in_c || p->in_size[0] != 1 ||
        p->out_size[0] != 1 || p->kernel[0] != 1 || p->pads[0] != 0 || p->kernel[1] != K || p->strides[1] != s ||
        p->dilations[1] != 1 || p->dilations[2] != 1 || (s != 1 && s != 2) || (K != 5 && K != 7) || W < DWK8_R ||
        p->pads[1] < 0 || p->pads[2] < 0 ||
        (p->act != AOTC_ACT_NONE && p->act != AOTC_ACT_CLAMP && p->act != AOTC_ACT_LEAKY) ||
        dwk8_band(H, W, (W - 1) * s + K, K, s) < 1)
        return 0;
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    aotc_parallel_for(K == 5 ? (s == 1 ? dwk8_5s1 : dwk8_5s2) : (s == 1 ? dwk8_7s1 : dwk8_7s2), &J,
                      p->batch * ((p->out_c + 7) / 8));
    return 1;
}
#undef DWK8_VECS
#undef DWK8_R
#else
#define DWK8_ON 0
#endif

void aotc_conv_depthwise_kxk_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                 const float *res, float *y) {
    dwk_job J;
    if (aotc_conv_dwkc_avx512(p, x, w, bias, res, y) || aotc_conv_dwk_avx512(p, x, w, bias, res, y, 1))
        return; /* on AVX-512 (conv_dwkc_avx512.c, conv_dwk_avx512.c) */
#if DWK8_ON
    if (dwk8(p, x, w, bias, res, y)) return; /* AVX2 without AVX-512 */
#endif
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    aotc_parallel_for(dwk_items, &J, p->batch * p->in_c);
}
