/* Depthwise K x K Conv (K = 3, 5, 7) on AVX-512F, stride 1 or 2, any pads, long rows:
 * aotc_conv_dwk_avx512 runs it and returns 1, or returns 0 and the caller goes on as before (always
 * without AVX-512F). Called by the depthwise kernels after conv_dw3_avx512.c's aotc_conv_dw3_avx512 (small
 * planes, short rows) has declined; a file of its own so that a bundle compiles it once, not once
 * per kernel that calls it (three: 1 s each at -O3). No kernel choice or scratch size depends on it.
 * Internal to runtime_c/kernels.
 *
 * Why: EfficientNet-B0's 5 x 5 depthwise convs ran at about 11 % of the FMA peak in the portable
 * kernel (blocks of outputs summed in scalar-indexed registers, copies of the taps that cross a
 * row's ends), and the 3 x 3 stride-2 ones of MobileNet-v2 and EfficientNet (112 -> 56) at
 * about 8 %. Here an output row goes in vectors of 16 outputs, four rows at a time (four
 * independent chains of multiply-adds); per tap one masked load at stride 1 (zero where the tap
 * falls outside the row or the image: AVX-512's masked loads do not touch masked-off lanes, so a
 * vector may point outside the tensor). At stride 2 the 16 outputs' window of a tap row comes in
 * three loads, split into its even and odd columns by two vpermt2ps; tap 2 j (2 j + 1) is the
 * even (odd) vector moved j lanes by valignd (EfficientNet's 5 x 5 at 56 -> 28: 253 -> 150 us
 * against two loads and a vpermt2ps per tap). The column masks depend on the vector's columns
 * only and are made once per call. */
#include "conv_common_avx512.h"

#if defined(__AVX512F__) && !defined(AOTC_NO_X86_DWK)
#define DWKX_ON 1

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
} dwkx_job;

#define DWKX_ROWS 4
#define DWKX_MAX_COLS 16 /* column blocks of 16 outputs: rows of at most 256 */

/* Channel items [begin, end): every output row of each, DWKX_ROWS rows at a time, K and S constant. */
#define DWKX_KERNEL(NAME, K, S)                                                                        \
    static void NAME(void *arg, int32_t begin, int32_t end) {                                          \
        const dwkx_job *J = (const dwkx_job *)arg;                                                     \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2]; \
        const int32_t pt = p->pads[1], pl = p->pads[2], sy = p->strides[1];                            \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;                 \
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0); \
        const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));                              \
        __mmask16 mc[DWKX_MAX_COLS]; /* stride 2: the window's third load (columns 32 on) */          \
        __mmask16 ma[DWKX_MAX_COLS][K], mb[DWKX_MAX_COLS][K]; /* per column block and tap column: the loads' lanes inside the row */ \
        int32_t item, ox0, oy, kx, ky, r;                                                              \
        (void)even, (void)odd, (void)mc;                                                               \
        for (ox0 = 0; ox0 < OW; ox0 += 16)                                                             \
            for (kx = 0; kx < K; ++kx) {                                                               \
                const ptrdiff_t c0 = (ptrdiff_t)ox0 * (S) + kx - pl;                                   \
                ma[ox0 / 16][kx] = x86c_lanes(c0, 0, IW);                                              \
                mb[ox0 / 16][kx] = (S) == 2 ? x86c_lanes(c0 + 16, 0, IW) : 0;                          \
                if (kx == 0) mc[ox0 / 16] = (S) == 2 ? x86c_lanes(c0 + 32, 0, IW) : 0;                 \
            }                                                                                          \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t n = item / p->out_c, o = item % p->out_c;                                    \
            const float *xc = J->x + ((ptrdiff_t)n * p->in_c + o) * in_plane;                          \
            const float *wc = J->w + (ptrdiff_t)o * K * K;                                             \
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + o) * out_plane;                            \
            const __m512 b0 = _mm512_set1_ps(J->bias != NULL ? J->bias[o] : 0.0f);                     \
            if (item + 2 < end) /* the weights two planes ahead */                                     \
                x86c_prefetch_plane(J->w + (ptrdiff_t)((item + 2) % p->out_c) * K * K, K * K,            \
                                    J->bias != NULL ? J->bias + (item + 2) % p->out_c : NULL);           \
            for (ox0 = 0; ox0 < OW; ox0 += 16) {                                                       \
                const __mmask16 out = x86c_lanes(ox0, 0, OW);                                          \
                const __mmask16 *mac = ma[ox0 / 16], *mbc = mb[ox0 / 16], mcc = mc[ox0 / 16];          \
                for (oy = 0; oy < OH; oy += DWKX_ROWS) {                                               \
                    __m512 acc[DWKX_ROWS];                                                             \
                    _Pragma("GCC unroll 4") for (r = 0; r < DWKX_ROWS; ++r) acc[r] = b0;               \
                    for (ky = 0; ky < K; ++ky) {                                                       \
                        const float *wr = wc + ky * K;                                                 \
                        __mmask16 rok[DWKX_ROWS];                                                      \
                        const float *xr[DWKX_ROWS];                                                    \
                        _Pragma("GCC unroll 4") for (r = 0; r < DWKX_ROWS; ++r) {                      \
                            const int32_t iy = (oy + r) * sy + ky - pt;                                \
                            rok[r] = oy + r < OH && iy >= 0 && iy < IH ? (__mmask16)0xFFFF : (__mmask16)0; \
                            xr[r] = xc + (ptrdiff_t)iy * IW + (ptrdiff_t)ox0 * (S) - pl;               \
                        }                                                                              \
                        if ((S) == 1) {                                                                \
                            _Pragma("GCC unroll 7") for (kx = 0; kx < K; ++kx) {                       \
                                const __m512 wv = _mm512_set1_ps(wr[kx]);                              \
                                _Pragma("GCC unroll 4") for (r = 0; r < DWKX_ROWS; ++r)                \
                                    acc[r] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(mac[kx] & rok[r], xr[r] + kx), acc[r]); \
                            }                                                                          \
                        } else { /* the row's window of 16 outputs (3 masked loads) -> its K taps */   \
                            _Pragma("GCC unroll 4") for (r = 0; r < DWKX_ROWS; ++r) {                  \
                                const __m512 a = _mm512_maskz_loadu_ps(mac[0] & rok[r], xr[r]);        \
                                const __m512 b = _mm512_maskz_loadu_ps(mbc[0] & rok[r], xr[r] + 16);   \
                                const __m512 c = _mm512_maskz_loadu_ps(mcc & rok[r], xr[r] + 32);      \
                                const __m512 e = _mm512_permutex2var_ps(a, even, b), o = _mm512_permutex2var_ps(a, odd, b); \
                                const __m512i ce = _mm512_castps_si512((K) > 3 ? _mm512_permutexvar_ps(even, c) : c); \
                                const __m512i co = _mm512_castps_si512((K) > 3 ? _mm512_permutexvar_ps(odd, c) : c); \
                                const __m512i ei = _mm512_castps_si512(e), oi = _mm512_castps_si512(o); \
                                acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wr[0]), e, acc[r]);            \
                                acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wr[1]), o, acc[r]);            \
                                acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wr[2]), _mm512_castsi512_ps(_mm512_alignr_epi32(ce, ei, 1)), acc[r]); \
                                if ((K) > 3) {                                                         \
                                    acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wr[3 % (K)]), _mm512_castsi512_ps(_mm512_alignr_epi32(co, oi, 1)), acc[r]); \
                                    acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wr[4 % (K)]), _mm512_castsi512_ps(_mm512_alignr_epi32(ce, ei, 2)), acc[r]); \
                                }                                                                      \
                                if ((K) > 5) {                                                         \
                                    acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wr[5 % (K)]), _mm512_castsi512_ps(_mm512_alignr_epi32(co, oi, 2)), acc[r]); \
                                    acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(wr[6 % (K)]), _mm512_castsi512_ps(_mm512_alignr_epi32(ce, ei, 3)), acc[r]); \
                                }                                                                      \
                            }                                                                          \
                        }                                                                              \
                    }                                                                                  \
                    for (r = 0; r < DWKX_ROWS && oy + r < OH; ++r) {                                   \
                        const ptrdiff_t q = yo + (ptrdiff_t)(oy + r) * OW + ox0;                       \
                        x86c_finish(p, acc[r], out, J->res != NULL ? J->res + q : NULL, J->y + q);     \
                    }                                                                                  \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }
DWKX_KERNEL(dwkx_k3s1, 3, 1)
DWKX_KERNEL(dwkx_k3s2, 3, 2)
DWKX_KERNEL(dwkx_k5s1, 5, 1)
DWKX_KERNEL(dwkx_k5s2, 5, 2)
DWKX_KERNEL(dwkx_k7s1, 7, 1)
DWKX_KERNEL(dwkx_k7s2, 7, 2)
#undef DWKX_KERNEL

/* ---- stride 1, same size, small planes: the plane as one flat run of vectors ---- */

#define DWKX_FLAT_VECS 64 /* vectors of 16 positions a plane: HW <= 1024 */

/* Channel items [begin, end) of a same-size stride-1 conv (pads (K - 1) / 2), the plane in flat
 * vectors of 16 positions, DWKX_ROWS vectors at a time: tap (ky, kx) of position q reads q +
 * (ky - P) W + kx - P, masked to the lanes whose tap row and column lie inside the image (the
 * masks of each vector made once per call, rows' and columns' apart). */
#define DWKX_FLAT_KERNEL(NAME, K)                                                                      \
    static void NAME(void *arg, int32_t begin, int32_t end) {                                          \
        const dwkx_job *J = (const dwkx_job *)arg;                                                     \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t H = p->out_size[1], W = p->out_size[2], P = (K - 1) / 2;                         \
        const ptrdiff_t plane = (ptrdiff_t)H * W;                                                      \
        const int32_t nvec = (int32_t)((plane + 15) / 16), ngrp = (nvec + DWKX_ROWS - 1) / DWKX_ROWS;  \
        /* per vector (DWKX_ROWS past the last: none), tap row and tap column: the lanes inside */    \
        __mmask16 rm[DWKX_FLAT_VECS + DWKX_ROWS][K], cm[DWKX_FLAT_VECS + DWKX_ROWS][K];                \
        int32_t item, v, g, i, k, r, ky, kx;                                                           \
        for (v = 0; v < ngrp * DWKX_ROWS; ++v) {                                                       \
            for (k = 0; k < K; ++k) rm[v][k] = cm[v][k] = 0;                                           \
            for (i = 0; i < 16 && (ptrdiff_t)16 * v + i < plane; ++i) {                                \
                const int32_t oy = (16 * v + i) / W, ox = (16 * v + i) % W;                            \
                for (k = 0; k < K; ++k) {                                                              \
                    if (oy + k - P >= 0 && oy + k - P < H) rm[v][k] |= (__mmask16)(1u << i);           \
                    if (ox + k - P >= 0 && ox + k - P < W) cm[v][k] |= (__mmask16)(1u << i);           \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t n = item / p->out_c, o = item % p->out_c;                                    \
            const float *xc = J->x + ((ptrdiff_t)n * p->in_c + o) * plane;                             \
            const float *wc = J->w + (ptrdiff_t)o * K * K;                                             \
            float *yc = J->y + ((ptrdiff_t)n * p->out_c + o) * plane;                                  \
            const float *rc = J->res != NULL ? J->res + ((ptrdiff_t)n * p->out_c + o) * plane : NULL;  \
            const __m512 b0 = _mm512_set1_ps(J->bias != NULL ? J->bias[o] : 0.0f);                     \
            if (item + 2 < end) /* the weights two planes ahead */                                     \
                x86c_prefetch_plane(J->w + (ptrdiff_t)((item + 2) % p->out_c) * K * K, K * K,            \
                                    J->bias != NULL ? J->bias + (item + 2) % p->out_c : NULL);           \
            for (g = 0; g < ngrp; ++g) {                                                               \
                const int32_t v0 = g * DWKX_ROWS;                                                      \
                __m512 acc[DWKX_ROWS];                                                                 \
                _Pragma("GCC unroll 4") for (r = 0; r < DWKX_ROWS; ++r) acc[r] = b0;                   \
                _Pragma("GCC unroll 7") for (ky = 0; ky < K; ++ky) {                                   \
                    const float *xr = xc + (ptrdiff_t)16 * v0 + (ptrdiff_t)(ky - P) * W - P;           \
                    _Pragma("GCC unroll 7") for (kx = 0; kx < K; ++kx) {                               \
                        const __m512 wv = _mm512_set1_ps(wc[ky * K + kx]);                             \
                        _Pragma("GCC unroll 4") for (r = 0; r < DWKX_ROWS; ++r)                        \
                            acc[r] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(rm[v0 + r][ky] & cm[v0 + r][kx], xr + 16 * r + kx), acc[r]); \
                    }                                                                                  \
                }                                                                                      \
                for (r = 0; r < DWKX_ROWS && v0 + r < nvec; ++r) {                                     \
                    const ptrdiff_t q = (ptrdiff_t)16 * (v0 + r);                                      \
                    x86c_finish(p, acc[r], x86c_lanes(q, 0, plane), rc != NULL ? rc + q : NULL, yc + q); \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }
DWKX_FLAT_KERNEL(dwkx_flat3, 3)
DWKX_FLAT_KERNEL(dwkx_flat5, 5)
DWKX_FLAT_KERNEL(dwkx_flat7, 7)
#undef DWKX_FLAT_KERNEL


/* Runs the conv if a path above takes it: 1, else 0 (the caller goes on). s1: whether to take
 * stride 1 (the 3 x 3 callers' own stride-1 paths were faster on large planes). */
static int dwkx(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                float *y, int s1) {
    const int32_t K = p->kernel[2], s = p->strides[2], H = p->out_size[1], W = p->out_size[2];
    dwkx_job J;
    aotc_task_fn fn;
    if (p->in_nhwc != 0 || p->out_nhwc != 0 || p->group != p->in_c || p->out_c != p->in_c || p->in_size[0] != 1 ||
        p->out_size[0] != 1 || p->kernel[0] != 1 || p->pads[0] != 0 || p->kernel[1] != K || p->strides[1] != s ||
        p->dilations[1] != 1 || p->dilations[2] != 1 || (s != 1 && s != 2) || (s == 1 && !s1) || W > 16 * DWKX_MAX_COLS)
        return 0;
    if (!x86c_act_ok(p)) return 0;
    if (K == 3) fn = s == 1 ? dwkx_k3s1 : dwkx_k3s2;
    else if (K == 5) fn = s == 1 ? dwkx_k5s1 : dwkx_k5s2;
    else if (K == 7) fn = s == 1 ? dwkx_k7s1 : dwkx_k7s2;
    else return 0;
    if (s == 1 && H == p->in_size[1] && W == p->in_size[2] && p->pads[1] == (K - 1) / 2 &&
        p->pads[2] == (K - 1) / 2 && (ptrdiff_t)H * W <= 16 * DWKX_FLAT_VECS)
        fn = K == 3 ? dwkx_flat3 : K == 5 ? dwkx_flat5 : dwkx_flat7;
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    aotc_parallel_for(fn, &J, p->batch * p->out_c);
    return 1;
}
#undef DWKX_ROWS
#undef DWKX_MAX_COLS
#undef DWKX_FLAT_VECS
#else
#define DWKX_ON 0
#endif

int aotc_conv_dwk_avx512(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                      float *y, int s1) {
#if DWKX_ON
    return dwkx(p, x, w, bias, res, y, s1);
#else
    (void)p, (void)x, (void)w, (void)bias, (void)res, (void)y, (void)s1;
    return 0;
#endif
}
