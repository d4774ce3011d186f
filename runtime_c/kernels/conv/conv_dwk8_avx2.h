/* Depthwise k x k Conv on x86 with AVX2 and FMA, no AVX-512, in vectors of 8 channels: conv_dwkc_avx512.c's design
 * at 8 lanes (a host without AVX-512: --host-isa generic built for x86-64-v3), for conv_depthwise_kxk.c (5 x 5,
 * 7 x 7) and conv_depthwise3x3_direct.c (3 x 3 at stride 2), each with the DWK8_KERNEL instances it takes. The row
 * blocks of conv_depthwise_kxk.c spend a block of 8 or 16 outputs' 25 multiply-adds on reading its weights, its four
 * sums' reductions and scalar stores under the activation: EfficientNet-B0's 5 x 5 convs on 28 x 28 to 7 x 7 planes took 30 % of its
 * time at --isa avx2 (issue 64). Here each block of 8 channels is transposed into a zero-padded plane of vectors
 * (a position's 8 channels), so that a tap is one load and one multiply-add per output and 8 channels, no idle
 * lanes and no row ends; the outputs are transposed back in 8 x 8 blocks. */
#ifndef AOTC_CONV_DWK8_AVX2_H
#define AOTC_CONV_DWK8_AVX2_H
#include "conv_internal.h"

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__) && !defined(AOTC_NO_X86_DWK) && \
    (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define DWK8_ON 1
#define DWK8_VECS 1024 /* positions of a band's padded input (32 KiB), and of its outputs */
#define DWK8_R 7       /* outputs per register block: EfficientNet's and MobileNet's rows are multiples */

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
} dwk8_job;

typedef struct {
    float lo, hi, alpha; /* clamp; slope below 0 (1: none) */
} dwk8_act;

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
static MK_NOINLINE void dwk8_store(const dwk8_act *r, const __m256 *out, ptrdiff_t n, int32_t nc, ptrdiff_t out_plane,
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
        const dwk8_job *J = (const dwk8_job *)arg;                                                       \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t C = p->out_c, IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1];      \
        const int32_t OW = p->out_size[2], pt = p->pads[1], pl = p->pads[2];                           \
        const int32_t wp = (OW - 1) * (S) + (K), blocks = (C + 7) / 8;                                 \
        const int32_t ob = dwk8_band(OH, OW, wp, K, S), hb = (ob - 1) * (S) + (K); /* a band's rows */ \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;                 \
        __m256 buf[DWK8_VECS], out[DWK8_VECS], wt[(K) * (K)];                                          \
        dwk8_act act;                                                                                  \
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
/* Whether a kernel above takes the conv (kernel K x K, K the caller's; stride 1 or 2; a band of rows fits) */
static inline int dwk8_fits(const aotc_conv_params *p) {
    const int32_t K = p->kernel[2], s = p->strides[2], H = p->out_size[1], W = p->out_size[2];
    return !(p->in_nhwc != 0 || p->out_nhwc != 0 || p->group != p->in_c || p->out_c != p->in_c ||
             p->in_size[0] != 1 || p->out_size[0] != 1 || p->kernel[0] != 1 || p->pads[0] != 0 || p->kernel[1] != K ||
             p->strides[1] != s || p->dilations[1] != 1 || p->dilations[2] != 1 || (s != 1 && s != 2) ||
             W < DWK8_R || p->pads[1] < 0 || p->pads[2] < 0 ||
             (p->act != AOTC_ACT_NONE && p->act != AOTC_ACT_CLAMP && p->act != AOTC_ACT_LEAKY) ||
             dwk8_band(H, W, (W - 1) * s + K, K, s) < 1);
}

/* The conv by `kernel` (a DWK8_KERNEL instance for its K and stride), blocks of 8 channels split over the pool */
static inline void dwk8_run(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                            const float *res, float *y, void (*kernel)(void *, int32_t, int32_t)) {
    dwk8_job J;
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    aotc_parallel_for(kernel, &J, p->batch * ((p->out_c + 7) / 8));
}
#else
#define DWK8_ON 0
#endif

#endif
