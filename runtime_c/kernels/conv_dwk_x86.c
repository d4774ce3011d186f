/* Depthwise K x K Conv (K = 3, 5, 7) on AVX-512F, stride 1 or 2, any pads, long rows:
 * aotc_conv_dwk_x86 runs it and returns 1, or returns 0 and the caller goes on as before (always
 * without AVX-512F). Called by the depthwise kernels after conv_dw3_x86.c's aotc_conv_dw3_x86 (small
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
#include "conv_x86_common.h"

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

/* ---- small planes, K = 5 or 7: 16 channels per vector ---- */

#define DWKX_C_VECS 1024 /* positions of a block's padded input: 64 KiB for its 16 channels */
#define DWKX_C_R 7       /* outputs per register block: EfficientNet's and MobileNet's rows are multiples */

/* r[j] <- column j of the 16 x 16 matrix whose rows were r[0..15] (64 shuffles) */
static inline void dwkx_transpose16(__m512 r[16]) {
    __m512 t[16];
    int32_t i, j;
    _Pragma("GCC unroll 8") for (i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* r[4 g + j], 128-bit lane l: column 4 l + j of rows 4 g .. 4 g + 3 */
    _Pragma("GCC unroll 4") for (i = 0; i < 4; ++i) {
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    _Pragma("GCC unroll 4") for (j = 0; j < 4; ++j) {
        const __m512 v = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), w = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
        const __m512 v2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
        const __m512 w2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
        t[j] = _mm512_shuffle_f32x4(v, v2, 0x88);
        t[8 + j] = _mm512_shuffle_f32x4(v, v2, 0xDD);
        t[4 + j] = _mm512_shuffle_f32x4(w, w2, 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(w, w2, 0xDD);
    }
    _Pragma("GCC unroll 16") for (i = 0; i < 16; ++i) r[i] = t[i];
}

/* 16 x 16 blocks of floats: rows [q0, q0 + 16) of `rows` (each `n` floats, `stride` apart, rows past `rows` read as
 * zeros), columns [j0, j0 + 16) of n, transposed into v: v[j] holds column j0 + j of the 16 rows */
static inline void dwkx_load_t(const float *a, ptrdiff_t stride, int32_t rows, ptrdiff_t j0, ptrdiff_t n, __m512 v[16]) {
    const __mmask16 cols = x86c_lanes(j0, 0, n);
    int32_t j;
    _Pragma("GCC unroll 16") for (j = 0; j < 16; ++j)
        v[j] = j < rows ? _mm512_maskz_loadu_ps(cols, a + j * stride + j0) : _mm512_setzero_ps();
    dwkx_transpose16(v);
}

/* Output rows per band of dwkx_c: as many as buf (their input rows) and out hold, 0 if not one */
static inline int32_t dwkx_c_band(int32_t OH, int32_t OW, int32_t wp, int32_t K, int32_t S) {
    int32_t ob = (DWKX_C_VECS / wp - K) / S + 1;
    if (DWKX_C_VECS / wp < K) return 0;
    if (ob > DWKX_C_VECS / OW) ob = DWKX_C_VECS / OW;
    return ob < OH ? ob : OH;
}

/* The parts of dwkx_c that do not depend on K and S, compiled once (inlined into each of the four kernels,
 * their transposes tripled the file's compile time). */

/* wt[t] <- tap t's weights, a vector of the block's nc channels (w: the block's first channel's K x K) */
static MK_NOINLINE void dwkx_c_weights(const float *w, int32_t kk, int32_t nc, __m512 *wt) {
    __m512 v[16];
    int32_t i, j;
    for (i = 0; i < kk; i += 16) {
        dwkx_load_t(w, kk, nc, i, kk, v);
        for (j = 0; j < 16; ++j) wt[i + j] = v[j];
    }
}

/* buf rows iy0 - y0 .. iy1 - y0 (columns pl ..) <- input rows [iy0, iy1) of the block's nc channels (xb, planes
 * in_plane apart), transposed; the band's rows outside the image zeroed if `rezero` (buf row 0: input row y0) */
static MK_NOINLINE void dwkx_c_load(const float *xb, ptrdiff_t in_plane, int32_t nc, int32_t IH, int32_t IW,
                                    int32_t y0, int32_t hb, int32_t wp, int32_t pl, int rezero, __m512 *buf) {
    const int32_t iy0 = y0 > 0 ? y0 : 0, iy1 = y0 + hb < IH ? y0 + hb : IH;
    const ptrdiff_t q_end = (ptrdiff_t)iy1 * IW;
    const int whole = IW + pl <= wp; /* every input column in buf (a same-size conv) */
    __m512 v[16];
    ptrdiff_t q0, at;
    int32_t r, i, j, ix;
    for (r = 0; r < hb && rezero; ++r) /* rows above or below the image */
        if (y0 + r < 0 || y0 + r >= IH)
            for (i = 0; i < wp; ++i) buf[r * wp + i] = _mm512_setzero_ps();
    for (q0 = (ptrdiff_t)iy0 * IW, ix = 0, at = (ptrdiff_t)(iy0 - y0) * wp + pl; q0 < q_end; q0 += 16) {
        dwkx_load_t(xb, in_plane, nc, q0, q_end, v);
        for (j = 0; j < 16 && q0 + j < q_end; ++j, ++at) { /* at: (iy - y0) wp + ix + pl */
            if (whole || ix + pl < wp) buf[at] = v[j];
            if (++ix == IW) ix = 0, at += wp - IW;
        }
    }
}

/* The block's outputs q .. q + n of its nc channels (planes out_plane apart) <- out[0 .. n), transposed back,
 * with the residual (rb, or NULL) and the activation */
static MK_NOINLINE void dwkx_c_store(const aotc_conv_params *p, const __m512 *out, ptrdiff_t n, int32_t nc,
                                     ptrdiff_t out_plane, ptrdiff_t q, const float *rb, float *yb) {
    __m512 v[16];
    ptrdiff_t q0;
    int32_t j;
    for (q0 = 0; q0 < n; q0 += 16) {
        const __mmask16 lanes = x86c_lanes(q0, 0, n);
        const ptrdiff_t at = q + q0;
        for (j = 0; j < 16; ++j) v[j] = q0 + j < n ? out[q0 + j] : _mm512_setzero_ps();
        dwkx_transpose16(v);
        if (nc == 16) {
            x86c_finish16(p, v, lanes, rb != NULL ? rb + at : NULL, yb + at, out_plane);
        } else {
            for (j = 0; j < nc; ++j)
                x86c_finish(p, v[j], lanes, rb != NULL ? rb + j * out_plane + at : NULL, yb + j * out_plane + at);
        }
    }
}

/* Items [begin, end): blocks of 16 channels of one image. Each block's input is transposed into buf, a
 * zero-padded plane of vectors of its 16 channels (positions of the conv's padded input, rows wp apart), so
 * that a tap is one unmasked load and one multiply-add per output and channel vector: no masks, no idle lanes,
 * any stride. Per output row, blocks of DWKX_C_R outputs load a tap row's input vectors once and reuse them
 * across its K taps. The input, the outputs and the weights go through 16 x 16 transposes of the plane taken
 * flat (a 7 x 7 plane: 4 of them, not 7), in bands of output rows whose input rows buf holds. Why: on small
 * planes the flat kernel above ran a mask AND, a mask load and a masked load per multiply-add, and its last
 * vectors partly idle (EfficientNet's 672-channel 5 x 5 convs on 14 x 14: 177 us, 99 here). */
#define DWKX_C_KERNEL(NAME, K, S)                                                                      \
    static void NAME(void *arg, int32_t begin, int32_t end) {                                          \
        const dwkx_job *J = (const dwkx_job *)arg;                                                     \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t C = p->out_c, IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1];      \
        const int32_t OW = p->out_size[2], pt = p->pads[1], pl = p->pads[2];                           \
        const int32_t wp = (OW - 1) * (S) + (K), blocks = (C + 15) / 16;                               \
        const int32_t ob = dwkx_c_band(OH, OW, wp, K, S), hb = (ob - 1) * (S) + (K); /* a band's rows */ \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;                 \
        __m512 buf[DWKX_C_VECS], out[DWKX_C_VECS], wt[(K) * (K) + 15];                                \
        int32_t item, i, r, oy, oy0, ox0, ky, kx;                                                      \
        /* the columns' padding (and with one band, the rows'); each band overwrites the rest */     \
        for (i = 0; i < hb * wp; ++i) buf[i] = _mm512_setzero_ps();                                    \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t n = item / blocks, c0 = item % blocks * 16, nc = C - c0 < 16 ? C - c0 : 16;  \
            const float *xb = J->x + ((ptrdiff_t)n * C + c0) * in_plane;                               \
            float *yb = J->y + ((ptrdiff_t)n * C + c0) * out_plane;                                    \
            const float *rb = J->res != NULL ? J->res + ((ptrdiff_t)n * C + c0) * out_plane : NULL;    \
            const __m512 bias = J->bias != NULL ? _mm512_maskz_loadu_ps(x86c_lanes(c0, 0, C), J->bias + c0) \
                                                : _mm512_setzero_ps();                                 \
            dwkx_c_weights(J->w + (ptrdiff_t)c0 * (K) * (K), (K) * (K), nc, wt);                        \
            for (oy0 = 0; oy0 < OH; oy0 += ob) {                                                       \
                const int32_t oh = OH - oy0 < ob ? OH - oy0 : ob;                                      \
                dwkx_c_load(xb, in_plane, nc, IH, IW, oy0 * (S) - pt, hb, wp, pl, ob < OH, buf);       \
                for (oy = 0; oy < oh; ++oy)                                                            \
                    for (ox0 = 0; ox0 < OW; ox0 += DWKX_C_R) {                                         \
                        const int32_t o0 = ox0 + DWKX_C_R <= OW ? ox0 : OW - DWKX_C_R; /* the last block ends at OW */ \
                        __m512 acc[DWKX_C_R];                                                          \
                        _Pragma("GCC unroll 8") for (r = 0; r < DWKX_C_R; ++r) acc[r] = bias;          \
                        _Pragma("GCC unroll 7") for (ky = 0; ky < (K); ++ky) {                         \
                            const __m512 *row = buf + (oy * (S) + ky) * wp + o0 * (S);                 \
                            __m512 wk[K];                                                              \
                            _Pragma("GCC unroll 7") for (kx = 0; kx < (K); ++kx) wk[kx] = wt[ky * (K) + kx]; \
                            /* each input vector loaded once, into the outputs whose taps it is */     \
                            _Pragma("GCC unroll 19") for (i = 0; i < (DWKX_C_R - 1) * (S) + (K); ++i) { \
                                const __m512 xi = row[i];                                              \
                                _Pragma("GCC unroll 7") for (kx = 0; kx < (K); ++kx)                   \
                                    if ((i - kx) % (S) == 0 && i - kx >= 0 && (i - kx) / (S) < DWKX_C_R) \
                                        acc[(i - kx) / (S)] = _mm512_fmadd_ps(xi, wk[kx], acc[(i - kx) / (S)]); \
                            }                                                                          \
                        }                                                                              \
                        _Pragma("GCC unroll 8") for (r = 0; r < DWKX_C_R; ++r) out[oy * OW + o0 + r] = acc[r]; \
                    }                                                                                  \
                dwkx_c_store(p, out, (ptrdiff_t)oh * OW, nc, out_plane, (ptrdiff_t)oy0 * OW, rb, yb);  \
            }                                                                                          \
        }                                                                                              \
    }
DWKX_C_KERNEL(dwkx_c5s1, 5, 1)
DWKX_C_KERNEL(dwkx_c5s2, 5, 2)
DWKX_C_KERNEL(dwkx_c7s1, 7, 1)
DWKX_C_KERNEL(dwkx_c7s2, 7, 2)
#undef DWKX_C_KERNEL

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
    /* at stride 2 only where one band holds the plane: a band's input rows are about 2 S of its output rows, and
     * their transposes cost more than the row kernels' shuffles (EfficientNet's 56 -> 28: 164 us against 146) */
    if ((K == 5 || K == 7) && W >= DWKX_C_R && p->pads[1] >= 0 && p->pads[2] >= 0 &&
        dwkx_c_band(H, W, (W - 1) * s + K, K, s) >= (s == 1 ? 1 : H)) {
        fn = K == 5 ? (s == 1 ? dwkx_c5s1 : dwkx_c5s2) : (s == 1 ? dwkx_c7s1 : dwkx_c7s2);
        aotc_parallel_for(fn, &J, p->batch * ((p->out_c + 15) / 16));
        return 1;
    }
    aotc_parallel_for(fn, &J, p->batch * p->out_c);
    return 1;
}
#undef DWKX_ROWS
#undef DWKX_MAX_COLS
#undef DWKX_FLAT_VECS
#undef DWKX_C_VECS
#undef DWKX_C_R
#else
#define DWKX_ON 0
#endif

int aotc_conv_dwk_x86(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                      float *y, int s1) {
#if DWKX_ON
    return dwkx(p, x, w, bias, res, y, s1);
#else
    (void)p, (void)x, (void)w, (void)bias, (void)res, (void)y, (void)s1;
    return 0;
#endif
}
