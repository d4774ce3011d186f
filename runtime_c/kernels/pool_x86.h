/* The float MaxPool of 2-D windows with AVX-512F (x86 hosts built with -march=native on a core that
 * has it): pool.c's aotc_maxpool_f32 takes it for windows of any height at any row stride, at column
 * stride 1 (up to 17 columns) or 2 (up to 33 columns), no dilation, any padding and ceil_mode.
 * Internal to runtime_c/kernels; without AVX-512F (or with AOTC_NO_INTRINSICS) nothing here is
 * compiled and pool.c's portable pool_row runs instead.
 *
 * Each output row goes 16 outputs at a time, all in registers (no scratch, no stack buffer):
 *   1. down the rows: the max, lane by lane, over the window's input rows of the input columns
 *      under the 16 windows (16 columns at stride 1, 32 at stride 2), starting from -FLT_MAX;
 *      lanes left of the row (the leading padding) or past its end (trailing padding, ceil_mode
 *      windows) stay -FLT_MAX, so the pass across needs no test;
 *   2. across the columns: at stride 2 the 32 row maxima split into their even and odd columns
 *      (vpermt2ps), window tap 2m being the even ones shifted by m, tap 2m + 1 the odd ones; at
 *      stride 1 tap t is the row maxima shifted by t. A shift takes lanes from the next 16
 *      outputs' row maxima, computed once and carried to the next step.
 * The result is bit for bit pool_row's, NaN, infinities and signed zeros included: both take the
 * rows first (in row order, from -FLT_MAX), then the taps in column order, and each step is
 * `x > m ? x : m` (_mm512_max_ps(x, m)): a NaN never wins, -inf gives -FLT_MAX, and of equal
 * values (+0 and -0) the earlier stays. */
#ifndef AOTC_POOL_X86_H
#define AOTC_POOL_X86_H

#include "aotc_pool.h"

#if defined(__AVX512F__) && !defined(AOTC_NO_INTRINSICS)
#include <float.h>
#include <immintrin.h>

#define AOTC_MAXPOOL_F32_AVX512 1
#define MP16_INLINE static inline __attribute__((always_inline))

/* lanes j of 16 with 0 <= a + j < n */
MP16_INLINE __mmask16 mp16_lanes(int32_t a, int32_t n) {
    const int32_t first = a < 0 ? -a : 0, end = n - a < 16 ? n - a : 16;
    if (end <= first) return 0;
    return (__mmask16)((((uint32_t)1 << end) - 1u) & ~(((uint32_t)1 << first) - 1u));
}

/* lanes s .. s + 15 of the 32 lanes lo, hi (0 <= s <= 16) */
MP16_INLINE __m512 mp16_shift(__m512 lo, __m512 hi, int32_t s) {
    if (s == 0) return lo;
    return _mm512_permutex2var_ps(lo, _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                       _mm512_set1_epi32(s)), hi);
}

/* Lane j: the max over rows r < nr (row r at x + r * w, w columns) of column a + j, folded from
 * -FLT_MAX in row order; -FLT_MAX for columns outside the row. Vectors inside the row take plain
 * loads, those past its end masked loads; one starting left of the row (leading padding) loads
 * columns 0 .. 15 + a and shifts the maxima up by -a lanes, so no address left of the row is formed. */
MP16_INLINE __m512 mp16_down(const float *x, int32_t w, int32_t nr, int32_t a) {
    const __m512 lowest = _mm512_set1_ps(-FLT_MAX);
    __m512 m = lowest;
    int32_t r;
    if (a >= 0 && a + 16 <= w) {
        for (r = 0; r < nr; ++r) m = _mm512_max_ps(_mm512_loadu_ps(x + (int64_t)r * w + a), m);
    } else if (a >= 0) {
        const __mmask16 in = mp16_lanes(a, w);
        if (in == 0) return lowest;
        for (r = 0; r < nr; ++r) m = _mm512_max_ps(_mm512_mask_loadu_ps(lowest, in, x + (int64_t)r * w + a), m);
    } else { /* columns 0 .. 15 + a into lanes 0 .. 15 + a, then moved up to lanes -a .. 15 */
        const __mmask16 in = mp16_lanes(0, 16 + a < w ? 16 + a : w);
        if (a <= -16) return lowest;
        for (r = 0; r < nr; ++r) m = _mm512_max_ps(_mm512_mask_loadu_ps(lowest, in, x + (int64_t)r * w), m);
        m = mp16_shift(lowest, m, 16 + a);
    }
    return m;
}

/* The row maxima (mp16_down) under 16 outputs at column stride sw from input column a: at
 * stride 1 the 16 columns in *e; at stride 2 the even columns of the 32 in *e, the odd in *o. */
MP16_INLINE void mp16_block(const float *x, int32_t w, int32_t nr, int32_t a, int32_t sw, __m512 *e, __m512 *o) {
    if (a >= w) { /* past the row: padding only */
        *e = *o = _mm512_set1_ps(-FLT_MAX);
    } else if (sw == 1) {
        *e = mp16_down(x, w, nr, a);
    } else {
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        const __m512 lo = mp16_down(x, w, nr, a), hi = mp16_down(x, w, nr, a + 16);
        *e = _mm512_permutex2var_ps(lo, even, hi);
        *o = _mm512_permutex2var_ps(lo, _mm512_add_epi32(even, _mm512_set1_epi32(1)), hi);
    }
}

/* The 16 outputs from their row maxima (mp16_block) e, o and the next 16's en, on: the max over
 * the kw taps in column order, from tap 0 (already folded from -FLT_MAX, so no NaN). */
MP16_INLINE __m512 mp16_taps(__m512 e, __m512 o, __m512 en, __m512 on, int32_t kw, int32_t sw) {
    __m512 m = e;
    int32_t t;
    for (t = 1; t < kw; ++t) {
        const __m512 tap = sw == 1 ? mp16_shift(e, en, t) : (t & 1) ? mp16_shift(o, on, t >> 1) : mp16_shift(e, en, t >> 1);
        m = _mm512_max_ps(tap, m);
    }
    return m;
}

/* y[j .. j + 16) = m, cut at out_w */
MP16_INLINE void mp16_store(float *y, int32_t j, int32_t out_w, __m512 m) {
    if (j + 16 <= out_w) {
        _mm512_storeu_ps(y + j, m);
    } else {
        _mm512_mask_storeu_ps(y + j, (__mmask16)(((uint32_t)1 << (out_w - j)) - 1u), m);
    }
}

/* One output row y[0 .. out_w) from the nr input rows at x under its windows: kw taps at column
 * stride sw, pw columns of leading padding. Inlined with nr, kw and sw constant for the usual
 * windows. The last outputs' windows may reach into the next 16's columns (spill). */
MP16_INLINE void mp16_row(float *y, const float *x, int32_t w, int32_t nr, int32_t out_w, int32_t kw, int32_t sw,
                          int32_t pw) {
    const __m512 lowest = _mm512_set1_ps(-FLT_MAX);
    const int spill = sw == 1 ? kw > 1 : kw > 2;
    __m512 e, o = lowest, en = lowest, on = lowest;
    int32_t j;
    mp16_block(x, w, nr, -pw, sw, &e, &o);
    for (j = 0; j < out_w; j += 16) {
        if (j + 16 < out_w || spill) mp16_block(x, w, nr, (j + 16) * sw - pw, sw, &en, &on);
        mp16_store(y, j, out_w, mp16_taps(e, o, en, on, kw, sw));
        e = en, o = on;
    }
}

/* Whether aotc_maxpool_f32 takes p through mp16_planes: 2-D windows, no dilation, column stride 1
 * with at most 17 taps or 2 with at most 33 (a shift reaches 16 lanes into the next vector). */
static inline int mp16_fits(const aotc_pool_params *p) {
    const int32_t kw = p->kernel[2], sw = p->strides[2];
    return p->in[0] == 1 && p->out[0] == 1 && p->kernel[0] == 1 && p->pads_begin[0] == 0 && p->dilations[1] == 1 &&
           p->dilations[2] == 1 && ((sw == 1 && kw <= 17) || (sw == 2 && kw <= 33));
}

/* One plane of the pool (mp16_fits(p)), row by row through mp16_row; with kw and sw constant, the
 * rows whose window is all inside the input (nr == kw: the usual square windows) take mp16_row with
 * nr constant too, its loops down the rows and across the taps unrolled. */
MP16_INLINE void mp16_plane(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y,
                            int32_t kw, int32_t sw) {
    const int32_t in_h = p->in[1], in_w = p->in[2], out_h = p->out[1], out_w = p->out[2];
    const int32_t kh = p->kernel[1], sh = p->strides[1], ph = p->pads_begin[1], pw = p->pads_begin[2];
    int32_t oh;
    for (oh = 0; oh < out_h; ++oh, y += out_w) {
        const int32_t h = oh * sh - ph, h0 = h < 0 ? 0 : h, h1 = h + kh < in_h ? h + kh : in_h;
        const int32_t nr = h1 > h0 ? h1 - h0 : 0;
        const float *rows = x + (int64_t)h0 * in_w;
        if (nr == kw) {
            mp16_row(y, rows, in_w, kw, out_w, kw, sw, pw);
        } else {
            mp16_row(y, rows, in_w, nr, out_w, kw, sw, pw);
        }
    }
}

/* mp16_plane for the usual windows (2 or 3 columns at stride 1 or 2) and any other, each its own
 * function: one holding them all ran out of registers and spilled in its inner loops */
#define MP16_PLANE(NAME, KW, SW)                                                                             \
    static __attribute__((noinline)) void NAME(const aotc_pool_params *p, const float *x, float *y) {        \
        mp16_plane(p, x, y, KW, SW);                                                                         \
    }
MP16_PLANE(mp16_plane_k3s2, 3, 2)
MP16_PLANE(mp16_plane_k2s2, 2, 2)
MP16_PLANE(mp16_plane_k3s1, 3, 1)
MP16_PLANE(mp16_plane_k2s1, 2, 1)
MP16_PLANE(mp16_plane_any, p->kernel[2], p->strides[2])
#undef MP16_PLANE

/* Planes [c0, c1) of the pool (mp16_fits(p)). */
static inline void mp16_planes(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y,
                               int32_t c0, int32_t c1) {
    const int32_t kw = p->kernel[2], sw = p->strides[2];
    const int64_t in_plane = (int64_t)p->in[1] * p->in[2], out_plane = (int64_t)p->out[1] * p->out[2];
    void (*plane)(const aotc_pool_params *, const float *, float *) =
        sw == 2 && kw == 3   ? mp16_plane_k3s2
        : sw == 2 && kw == 2 ? mp16_plane_k2s2
        : sw == 1 && kw == 3 ? mp16_plane_k3s1
        : sw == 1 && kw == 2 ? mp16_plane_k2s1
                             : mp16_plane_any;
    int32_t c;
    for (c = c0; c < c1; ++c) plane(p, x + c * in_plane, y + c * out_plane);
}
#else
#define AOTC_MAXPOOL_F32_AVX512 0
#endif
#endif /* AOTC_POOL_X86_H */
