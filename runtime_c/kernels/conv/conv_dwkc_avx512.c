/* Depthwise 5 x 5 and 7 x 7 Conv on AVX-512F in vectors of 16 channels: aotc_conv_dwkc_avx512 runs it and returns 1,
 * or returns 0 and the caller (conv_depthwise_kxk.c) goes on, to conv_dwk_avx512.c's row kernels (always without
 * AVX-512F). A file of its own, called by the k x k kernel alone, so that bundles whose depthwise convs are all
 * 3 x 3 (MobileNet-v2's) do not compile it. No kernel choice or scratch size depends on it. Internal to
 * runtime_c/kernels.
 *
 * Why: EfficientNet-B0's 5 x 5 depthwise convs on 28 x 28 to 7 x 7 ran in conv_dwk_avx512.c's flat kernel at
 * about 37 GFLOP/s, onnxruntime's at 67: per multiply-add a mask AND, a mask load and a masked load, and a
 * plane's last vectors partly idle. For 3 x 3 the transposes here cost more than they save (1.2 to 1.8 x
 * conv_dw3_avx512.c's time), so 3 x 3 stays there. */
#include "conv_common_avx512.h"

#if defined(__AVX512F__) && !defined(AOTC_NO_X86_DWK)
#define DWKC_ON 1

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
} dwkx_job;

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

/* The next block's weights (w: its first channel's K x K, nc channels) into L1 while this block runs: they come
 * from L3 or memory (each read once an inference), and their loads were half of dwkx_c_weights' time (issue 64) */
static inline void dwkx_c_prefetch(const float *w, int32_t kk, int32_t nc) {
    const ptrdiff_t n = (ptrdiff_t)kk * (nc < 16 ? nc : 16);
    ptrdiff_t i;
    for (i = 0; i < n; i += 16) _mm_prefetch((const char *)(w + i), _MM_HINT_T0);
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
 * flat (a 7 x 7 plane: 4 of them, not 7), in bands of output rows whose input rows buf holds (EfficientNet's 672-channel 5 x 5 convs on
 * 14 x 14: 99 us, 177 in conv_dwk_avx512.c's flat kernel). */
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
            if (item + 1 < end) /* the next block's weights */                                         \
                dwkx_c_prefetch(J->w + (ptrdiff_t)((item + 1) % blocks) * 16 * (K) * (K), (K) * (K),    \
                                C - (item + 1) % blocks * 16);                                          \
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

/* Runs the conv if a kernel above takes it: 1, else 0. At stride 2 only where one band holds the plane: a band's
 * input rows are about 2 S of its output rows, and their transposes cost more than the row kernels' shuffles
 * (EfficientNet's 56 -> 28: 164 us against 146). */
static int dwkc(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                float *y) {
    const int32_t K = p->kernel[2], s = p->strides[2], H = p->out_size[1], W = p->out_size[2];
    dwkx_job J;
    if (p->in_nhwc != 0 || p->out_nhwc != 0 || p->group != p->in_c || p->out_c != p->in_c || p->in_size[0] != 1 ||
        p->out_size[0] != 1 || p->kernel[0] != 1 || p->pads[0] != 0 || p->kernel[1] != K || p->strides[1] != s ||
        p->dilations[1] != 1 || p->dilations[2] != 1 || (s != 1 && s != 2) || (K != 5 && K != 7) ||
        W < DWKX_C_R || p->pads[1] < 0 || p->pads[2] < 0 || !x86c_act_ok(p) ||
        dwkx_c_band(H, W, (W - 1) * s + K, K, s) < (s == 1 ? 1 : H))
        return 0;
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    aotc_parallel_for(K == 5 ? (s == 1 ? dwkx_c5s1 : dwkx_c5s2) : (s == 1 ? dwkx_c7s1 : dwkx_c7s2), &J,
                      p->batch * ((p->out_c + 15) / 16));
    return 1;
}
#undef DWKX_C_VECS
#undef DWKX_C_R
#else
#define DWKC_ON 0
#endif

int aotc_conv_dwkc_avx512(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                       float *y) {
#if DWKC_ON
    return dwkc(p, x, w, bias, res, y);
#else
    (void)p, (void)x, (void)w, (void)bias, (void)res, (void)y;
    return 0;
#endif
}
