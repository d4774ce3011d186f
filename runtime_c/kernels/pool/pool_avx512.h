/* The float MaxPool of 2-D windows with AVX-512F (x86 hosts built with -march=native on a core that
 * has it), for windows of any height at any row stride, at column stride 1 (up to 17 columns) or 2
 * (up to 33 columns), no dilation, any padding and ceil_mode: kernels of their own, which
 * aot/kernels/pool.py picks (paths_avx512.h), so that a bundle compiles the window shapes its pools
 * have: one per usual window, its loops unrolled (MP16_ENTRY: aotc_maxpool_k3s2p1_f32 in
 * pool_max_k3s2p1_avx512.c, ResNet's 3 x 3 / 2 with pads of 1, and 3 x 3 with no leading pad, 2 x 2,
 * each at column stride 2 or 1), and aotc_maxpool_avx512_f32 (pool_max_avx512.c: any other). A window
 * each, as a file of three cost ResNet-18's build 0.35 s of CPU for the two it did not use. Internal to runtime_c/kernels; without AVX-512F (or with
 * AOTC_NO_INTRINSICS) nothing here is compiled and each runs pool_max.c's aotc_maxpool_f32, whose
 * maxpool_rows_f32 makes the same two passes through a row on the stack, in loops compilers vectorise.
 *
 * Each output row goes 16 outputs at a time, all in registers (no scratch, no stack buffer):
 *   1. down the rows: the max, lane by lane, over the window's input rows of 16 input columns
 *      (vectors at columns 16 v: only the last one masked, at the row's end), starting from
 *      -FLT_MAX; columns left of the row (leading padding) or past its end (trailing padding,
 *      ceil_mode windows) are whole vectors of -FLT_MAX, so the pass across needs no test;
 *   2. across the columns: at stride 2 two vectors of row maxima (32 columns) split into their
 *      even and odd columns (vpermt2ps); the tap t of an output 2 j - pw + t is an even or odd
 *      column, shifted by (t - pw) >> 1 lanes; at stride 1 the row maxima shifted by t - pw.
 *      A shift takes lanes from the previous or next 16 outputs' columns, carried from one step
 *      to the next, so each vector of row maxima is computed once.
 * The result is bit for bit pool_row's, NaN, infinities and signed zeros included: both take the
 * rows first (in row order, from -FLT_MAX), then the taps in column order, and each step is
 * `x > m ? x : m` (_mm512_max_ps(x, m)): a NaN never wins, -inf gives -FLT_MAX, and of equal
 * values (+0 and -0) the earlier stays.
 * The window sizes, strides and leading pads of the usual pools (3 x 3 and 2 x 2 at stride 1 or 2,
 * pads 0 or 1) are compile-time constants in a function each (mp16_planes_*), their loops unrolled:
 * one function for all ran out of registers, and the per-row work of a 13 x 13 output was more
 * bookkeeping than maxima. */
#ifndef AOTC_POOL_AVX512_H
#define AOTC_POOL_AVX512_H

#include "aotc_pool.h"
#include "aotc_threads.h"
#include "paths_avx512.h" /* X86_PATH_MISSED */

#if AOTC_X86_PATHS /* paths_avx512.h: __AVX512F__ and not AOTC_NO_INTRINSICS */
#include <float.h>
#include <immintrin.h>

#define AOTC_MAXPOOL_F32_AVX512 1
#define MP16_INLINE static inline __attribute__((always_inline))

/* lanes s .. s + 15 of the 32 lanes lo, hi (0 <= s <= 16) */
MP16_INLINE __m512 mp16_shift(__m512 lo, __m512 hi, int32_t s) {
    if (s == 0) return lo;
    if (s == 16) return hi;
    return _mm512_permutex2var_ps(lo, _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                       _mm512_set1_epi32(s)), hi);
}

/* The columns of one row of input: `full` whole vectors of 16, then `tail` (lanes of the last,
 * partial vector; 0 if none). */
typedef struct {
    int32_t full;
    __mmask16 tail;
} mp16_cols;

/* Lane j: the max over rows r < nr (row r at x + r * w) of column 16 v + j (v >= 0), folded from
 * -FLT_MAX in row order; -FLT_MAX for columns past the row. */
MP16_INLINE __m512 mp16_down(const float *x, int64_t w, int32_t nr, int32_t v, mp16_cols c) {
    const __m512 lowest = _mm512_set1_ps(-FLT_MAX);
    __m512 m = lowest;
    int32_t r;
    if (v < c.full) {
        for (r = 0; r < nr; ++r) m = _mm512_max_ps(_mm512_loadu_ps(x + r * w + 16 * v), m);
    } else if (v == c.full && c.tail != 0) {
        for (r = 0; r < nr; ++r) m = _mm512_max_ps(_mm512_mask_loadu_ps(lowest, c.tail, x + r * w + 16 * v), m);
    }
    return m;
}

/* The row maxima under input block b >= 0: at stride 1 columns 16 b .. 16 b + 15 in *e; at stride 2
 * columns 32 b .. 32 b + 31, the even ones in *e, the odd ones in *o. */
MP16_INLINE void mp16_block(const float *x, int64_t w, int32_t nr, int32_t b, int32_t sw, mp16_cols c, __m512 *e,
                            __m512 *o) {
    if (sw == 1) {
        *e = mp16_down(x, w, nr, b, c);
    } else {
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        __m512 lo, hi;
        if (2 * b >= c.full + (c.tail != 0)) { /* past the row: padding only */
            *e = *o = _mm512_set1_ps(-FLT_MAX);
            return;
        }
        lo = mp16_down(x, w, nr, 2 * b, c), hi = mp16_down(x, w, nr, 2 * b + 1, c);
        *e = _mm512_permutex2var_ps(lo, even, hi);
        *o = _mm512_permutex2var_ps(lo, _mm512_add_epi32(even, _mm512_set1_epi32(1)), hi);
    }
}

/* One output row y[0 .. out_w) from the nr input rows at x (w columns: c) under its windows: kw
 * taps at column stride sw, pw columns of leading padding. Output block j (outputs 16 j ..)
 * reads input block j and, for taps left of it or past it, the blocks before and after. */
MP16_INLINE void mp16_row(float *y, const float *x, int64_t w, mp16_cols c, int32_t nr, int32_t out_w, int32_t kw,
                          int32_t sw, int32_t pw, int32_t narrow) {
    const __m512 lowest = _mm512_set1_ps(-FLT_MAX);
    const int32_t first = sw == 1 ? -pw : (-pw) >> 1, last = sw == 1 ? kw - 1 - pw : (kw - 1 - pw) >> 1;
    const int32_t blocks = narrow ? 1 : (out_w + 15) / 16;
    __m512 ep = lowest, op = lowest, e, o = lowest, en = lowest, on = lowest, m, tap;
    int32_t b, t;
    mp16_block(x, w, nr, 0, sw, c, &e, &o);
    for (b = 0; b < blocks; ++b) {
        if (last > 0 || b + 1 < blocks) mp16_block(x, w, nr, b + 1, sw, c, &en, &on);
        m = lowest;
        for (t = 0; t < kw; ++t) {
            const int32_t u = t - pw, s = sw == 1 ? u : u >> 1;
            const int odd = sw == 2 && (u & 1);
            const __m512 cur = odd ? o : e;
            if (s < 0) {
                tap = mp16_shift(odd ? op : ep, cur, 16 + s);
            } else {
                tap = mp16_shift(cur, odd ? on : en, s);
            }
            m = t == 0 ? tap : _mm512_max_ps(tap, m); /* tap 0 from -FLT_MAX already: no NaN */
        }
        if (16 * b + 16 <= out_w) {
            _mm512_storeu_ps(y + 16 * b, m);
        } else {
            _mm512_mask_storeu_ps(y + 16 * b, (__mmask16)(((uint32_t)1 << (out_w - 16 * b)) - 1u), m);
        }
        if (first < 0) ep = e, op = o;
        e = en, o = on;
    }
}

/* Whether these rows take p (aot/kernels/pool.py's mp16_fits): 2-D windows, no dilation, column stride 1
 * with at most 17 taps or 2 with at most 33 (a shift reaches at most 16 lanes either way). */
static inline int mp16_fits(const aotc_pool_params *p) {
    const int32_t kw = p->kernel[2], sw = p->strides[2];
    return p->in[0] == 1 && p->out[0] == 1 && p->kernel[0] == 1 && p->pads_begin[0] == 0 && p->dilations[1] == 1 &&
           p->dilations[2] == 1 && p->pads_begin[2] < kw && ((sw == 1 && kw <= 17) || (sw == 2 && kw <= 33));
}

/* Output rows [oh0, oh1) of `planes` planes through mp16_row: nr input rows each when nr > 0 (all
 * inside the input), else clipped to the input. */
MP16_INLINE void mp16_rows(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y,
                           int32_t planes, int32_t oh0, int32_t oh1, int32_t nr, int32_t kw, int32_t sw, int32_t pw) {
    const int32_t in_h = p->in[1], in_w = p->in[2], out_h = p->out[1], out_w = p->out[2];
    const int32_t kh = p->kernel[1], sh = p->strides[1], ph = p->pads_begin[1];
    const int64_t in_plane = (int64_t)in_h * in_w, out_plane = (int64_t)out_h * out_w;
    mp16_cols c;
    int32_t pl, oh;
    c.full = in_w / 16;
    c.tail = (__mmask16)(((uint32_t)1 << (in_w % 16)) - 1u);
    for (pl = 0; pl < planes; ++pl) {
        const float *xp = x + pl * in_plane;
        float *yrow = y + pl * out_plane + (int64_t)oh0 * out_w;
        for (oh = oh0; oh < oh1; ++oh, yrow += out_w) {
            const int32_t h = oh * sh - ph, h0 = h < 0 ? 0 : h, h1 = h + kh < in_h ? h + kh : in_h;
            const float *rows = xp + (int64_t)h0 * in_w;
            if (nr > 0 && out_w <= 16) {
                mp16_row(yrow, rows, in_w, c, nr, out_w, kw, sw, pw, 1);
            } else if (nr > 0) {
                mp16_row(yrow, rows, in_w, c, nr, out_w, kw, sw, pw, 0);
            } else {
                mp16_row(yrow, rows, in_w, c, h1 > h0 ? h1 - h0 : 0, out_w, kw, sw, pw, 0);
            }
        }
    }
}

/* Output rows [oh0, oh1) of `planes` planes of the pool (mp16_fits(p)): with kw, sw and pw constant, the rows
 * whose window is all inside the input (with a square window, kh == kw: the usual ones) take mp16_row with its
 * count of input rows constant too; the rows at the top and bottom edges any count. All that does not change
 * from plane to plane is worked out once (a 13 x 13 plane is only 13 rows). */
MP16_INLINE void mp16_some_planes(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y,
                                  int32_t planes, int32_t kw, int32_t sw, int32_t pw, int32_t oh0, int32_t oh1) {
    const int32_t in_h = p->in[1], out_h = p->out[1], kh = p->kernel[1], sh = p->strides[1], ph = p->pads_begin[1];
    /* the rows oh with 0 <= oh * sh - ph and oh * sh - ph + kh <= in_h: [inside0, inside1) */
    int32_t inside0 = (ph + sh - 1) / sh, inside1 = in_h - kh + ph >= 0 ? (in_h - kh + ph) / sh + 1 : 0;
    if (inside1 > out_h) inside1 = out_h;
    if (kh != kw || inside1 <= inside0) {
        mp16_rows(p, x, y, planes, oh0, oh1, 0, kw, sw, pw);
        return;
    }
    /* the three runs clipped to [oh0, oh1) */
    if (inside0 > oh1) inside0 = oh1;
    if (inside1 > oh1) inside1 = oh1;
    if (inside0 < oh0) inside0 = oh0;
    if (inside1 < inside0) inside1 = inside0;
    mp16_rows(p, x, y, planes, oh0, inside0, 0, kw, sw, pw);
    mp16_rows(p, x, y, planes, inside0, inside1, kw, kw, sw, pw);
    mp16_rows(p, x, y, planes, inside1, oh1, 0, kw, sw, pw);
}

/* mp16_some_planes for a window of KW columns at column stride SW after PW leading pad columns, as a
 * function (MP16_ENTRY defines one for its window, pool_max_avx512.c one for any other) */
#define MP16_PLANES(NAME, KW, SW, PW)                                                                        \
    static __attribute__((noinline)) void NAME(const aotc_pool_params *p, const float *x, float *y,          \
                                               int32_t planes, int32_t oh0, int32_t oh1) {                   \
        mp16_some_planes(p, x, y, planes, KW, SW, PW, oh0, oh1);                                             \
    }
/* output rows [oh0, oh1) of `planes` planes of a window shape: MP16_PLANES's functions */
typedef void (*mp16_planes_fn)(const aotc_pool_params *, const float *, float *, int32_t, int32_t, int32_t);

typedef struct {
    const aotc_pool_params *p;
    const float *x;
    float *y;
    mp16_planes_fn planes;
    int32_t by_rows; /* items: output rows of every plane, else planes */
} mp16_job;

static void mp16_items(void *ctx, int32_t begin, int32_t end) {
    const mp16_job *J = (const mp16_job *)ctx;
    const int64_t in_plane = (int64_t)J->p->in[1] * J->p->in[2], out_plane = (int64_t)J->p->out[1] * J->p->out[2];
    if (J->by_rows)
        J->planes(J->p, J->x, J->y, J->p->planes, begin, end);
    else
        J->planes(J->p, J->x + begin * in_plane, J->y + begin * out_plane, end - begin, 0, J->p->out[1]);
}

/* The pool (mp16_fits(p)) through `planes`, split across the thread pool of a --threads bundle (one call
 * otherwise): by output rows of every plane where there are at least 4 a thread, else by planes. Why rows: the
 * conv before it (ResNet's stem) splits by output rows, so each thread reads the rows it wrote; by planes, half
 * of each thread's input came from the other core. */
static inline void mp16_run(const aotc_pool_params *p, const float *x, float *y, mp16_planes_fn planes) {
    mp16_job J;
    J.p = p, J.x = x, J.y = y, J.planes = planes;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    J.by_rows = p->out[1] >= 4 * AOTC_THREADS;
#else
    J.by_rows = 0;
#endif
    aotc_parallel_for(mp16_items, &J, J.by_rows ? p->out[1] : p->planes);
}

/* The entry NAME for windows of KW columns at column stride SW after PW leading pad columns */
#define MP16_ENTRY(NAME, KW, SW, PW)                                                                         \
    MP16_PLANES(NAME##_planes, KW, SW, PW)                                                                   \
    void NAME(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {             \
        if (mp16_fits(p) && p->kernel[2] == (KW) && p->strides[2] == (SW) && p->pads_begin[2] == (PW)) {    \
            mp16_run(p, x, y, NAME##_planes);                                                                \
            return;                                                                                          \
        }                                                                                                    \
        X86_PATH_MISSED(#NAME);                                                                              \
    }
#else
#define AOTC_MAXPOOL_F32_AVX512 0
#define MP16_ENTRY(NAME, KW, SW, PW)                                                                         \
    void NAME(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {             \
        aotc_maxpool_f32(p, x, y);                                                                           \
    }
#endif
#endif /* AOTC_POOL_AVX512_H */
