/* The float window pools' rows (pool.c's AveragePool, pool_max.c's MaxPool): one output row (fixed d,
 * h) at a time, the row itself the accumulator; for each window tap the stretch of outputs whose tap
 * lands inside the input is worked out once, so the inner loop runs with no padding test in it and
 * vectorises when the stride is 1. Each file compiles the rows it uses (is_max is a constant there).
 * Internal to runtime_c/kernels. */
#ifndef AOTC_POOL_ROWS_H
#define AOTC_POOL_ROWS_H

#include "pool_windows.h"

#include <float.h>

/* ys[i] = max(ys[i], xs[i * step]) for i < n. */
POOL_UNUSED static void max_into(float *AOTC_RESTRICT ys, const float *AOTC_RESTRICT xs, int32_t step,
                                  int32_t n) {
    int32_t i;
    if (step == 1) {
        for (i = 0; i < n; ++i) ys[i] = xs[i] > ys[i] ? xs[i] : ys[i];
    } else {
        for (i = 0; i < n; ++i) {
            const float v = xs[(int64_t)i * step];
            ys[i] = v > ys[i] ? v : ys[i];
        }
    }
}

/* ys[i] += xs[i * step] for i < n. */
POOL_UNUSED static void add_into(float *AOTC_RESTRICT ys, const float *AOTC_RESTRICT xs, int32_t step,
                                  int32_t n) {
    int32_t i;
    if (step == 1) {
        for (i = 0; i < n; ++i) ys[i] += xs[i];
    } else {
        for (i = 0; i < n; ++i) ys[i] += xs[(int64_t)i * step];
    }
}

/* One input row under a row of windows: yrow[ox] (or, with init, -FLT_MAX for a max and 0
 * for a sum) combined (max when is_max, else +) with xrow[ox * s - pad + kw * dl] for each
 * tap kw < k inside the row, in kw order (max: a NaN never wins, as it loses every
 * comparison). Outputs [lo, hi) have every tap inside: one loop over them (the usual 2- and
 * 3-wide windows at stride 1 or 2 with all taps in one pass, so that it vectorises); the few
 * outputs at the ends, tap by tap with a test. */
#define WINDOW_LOOP(COMBINE, K, S)                                                   \
    for (ox = lo; ox < hi; ++ox) {                                               \
        const float *xs = xrow + ox * (S) - pad;                                 \
        float v = init ? v0 : yrow[ox];                                          \
        v = COMBINE(v, xs[0]);                                                   \
        v = COMBINE(v, xs[1]);                                                   \
        if ((K) == 3) v = COMBINE(v, xs[2]);                                     \
        yrow[ox] = v;                                                            \
    }
/* WINDOW_LOOP with K and S as constants, for k in {2, 3} and s in {1, 2} */
#define WINDOW_LOOPS(COMBINE)                                                        \
    if (k == 3 && s == 2) {                                                      \
        WINDOW_LOOP(COMBINE, 3, 2)                                               \
    } else if (k == 3) {                                                         \
        WINDOW_LOOP(COMBINE, 3, 1)                                               \
    } else if (s == 2) {                                                         \
        WINDOW_LOOP(COMBINE, 2, 2)                                               \
    } else {                                                                     \
        WINDOW_LOOP(COMBINE, 2, 1)                                               \
    }
#define MAX_OF(v, x) ((x) > (v) ? (x) : (v))
#define SUM_OF(v, x) ((v) + (x))

POOL_UNUSED static void window_row(float *AOTC_RESTRICT yrow, const float *AOTC_RESTRICT xrow, int32_t out_w,
                                   int32_t in_w, int32_t k, int32_t s, int32_t dl, int32_t pad, int is_max, int init) {
    const float v0 = is_max ? -FLT_MAX : 0.0f;
    int32_t lo, hi, ox, kw;
    tap_range(-pad, s, out_w, 0, in_w - (k - 1) * dl, &lo, &hi);
    for (ox = 0; ox < out_w; ++ox) { /* the ends, tap by tap */
        float v;
        if (ox == lo && hi > lo) ox = hi;
        if (ox >= out_w) break;
        v = init ? v0 : yrow[ox];
        for (kw = 0; kw < k; ++kw) {
            const int32_t i = ox * s - pad + kw * dl;
            if (i < 0 || i >= in_w) continue;
            v = is_max ? MAX_OF(v, xrow[i]) : v + xrow[i];
        }
        yrow[ox] = v;
    }
    if (hi <= lo) return;
    if (dl == 1 && (k == 2 || k == 3) && (s == 1 || s == 2)) {
        if (is_max) {
            WINDOW_LOOPS(MAX_OF)
        } else {
            WINDOW_LOOPS(SUM_OF)
        }
        return;
    }
    if (init) {
        for (ox = lo; ox < hi; ++ox) yrow[ox] = v0;
    }
    for (kw = 0; kw < k; ++kw) { /* any other window: tap by tap over the interior */
        const float *xs = xrow + ((int64_t)lo * s - pad + kw * dl);
        if (is_max) {
            max_into(yrow + lo, xs, s, hi - lo);
        } else {
            add_into(yrow + lo, xs, s, hi - lo);
        }
    }
}
#undef WINDOW_LOOP

/* Longest input row pool_row combines on the stack first (2 KiB); longer rows go tap row by tap row. */
#define POOL_ROW_MAX 512

/* Writes yrow, the output row at (od, oh) of one plane: each output's window of the input
 * combined, max when is_max, else the sum. The input rows under the windows are combined
 * first, element by element (unit stride, two or three rows in one pass), into one row on
 * the stack, which then goes through the windows once. */
POOL_UNUSED static void pool_row(const aotc_pool_params *p, const float *xplane, int32_t od, int32_t oh,
                                 int is_max, float *yrow) {
    const int32_t in_h = p->in[1], in_w = p->in[2], out_w = p->out[2];
    const int32_t d_start = od * p->strides[0] - p->pads_begin[0];
    const int32_t h_start = oh * p->strides[1] - p->pads_begin[1];
    const float v0 = is_max ? -FLT_MAX : 0.0f;
    const float *first;
    float rows[POOL_ROW_MAX];
    int32_t kd0, kd1, kh0, kh1, kd, kh, i, n;
    tap_range(d_start, p->dilations[0], p->kernel[0], 0, p->in[0], &kd0, &kd1);
    tap_range(h_start, p->dilations[1], p->kernel[1], 0, in_h, &kh0, &kh1);
    n = (kd1 - kd0) * (kh1 - kh0); /* input rows under the windows */
    first = xplane + ((int64_t)(d_start + kd0 * p->dilations[0]) * in_h + h_start + kh0 * p->dilations[1]) * in_w;
    if (n == 0) {
        for (i = 0; i < out_w; ++i) yrow[i] = v0;
    } else if (n == 1) {
        window_row(yrow, first, out_w, in_w, p->kernel[2], p->strides[2], p->dilations[2], p->pads_begin[2],
                   is_max, 1);
    } else if (in_w <= POOL_ROW_MAX) {
        if (kd1 - kd0 == 1 && n <= 3) { /* one pass over two or three rows */
            const float *AOTC_RESTRICT r0 = first;
            const float *AOTC_RESTRICT r1 = first + (int64_t)p->dilations[1] * in_w;
            const float *AOTC_RESTRICT r2 = r1 + (int64_t)p->dilations[1] * in_w;
            if (n == 3 && is_max) {
                for (i = 0; i < in_w; ++i) rows[i] = MAX_OF(MAX_OF(MAX_OF(v0, r0[i]), r1[i]), r2[i]);
            } else if (n == 3) {
                for (i = 0; i < in_w; ++i) rows[i] = r0[i] + r1[i] + r2[i];
            } else if (is_max) {
                for (i = 0; i < in_w; ++i) rows[i] = MAX_OF(MAX_OF(v0, r0[i]), r1[i]);
            } else {
                for (i = 0; i < in_w; ++i) rows[i] = r0[i] + r1[i];
            }
        } else {
            for (i = 0; i < in_w; ++i) rows[i] = v0;
            for (kd = kd0; kd < kd1; ++kd) {
                const int32_t id = d_start + kd * p->dilations[0];
                for (kh = kh0; kh < kh1; ++kh) {
                    const float *xrow = xplane + ((int64_t)id * in_h + h_start + kh * p->dilations[1]) * in_w;
                    if (is_max) {
                        max_into(rows, xrow, 1, in_w);
                    } else {
                        add_into(rows, xrow, 1, in_w);
                    }
                }
            }
        }
        window_row(yrow, rows, out_w, in_w, p->kernel[2], p->strides[2], p->dilations[2], p->pads_begin[2], is_max,
                   1);
    } else { /* a long row: tap row by tap row into yrow */
        int init = 1;
        for (kd = kd0; kd < kd1; ++kd) {
            const int32_t id = d_start + kd * p->dilations[0];
            for (kh = kh0; kh < kh1; ++kh, init = 0) {
                const int32_t ih = h_start + kh * p->dilations[1];
                window_row(yrow, xplane + ((int64_t)id * in_h + ih) * in_w, out_w, in_w, p->kernel[2],
                           p->strides[2], p->dilations[2], p->pads_begin[2], is_max, init);
            }
        }
    }
}

#endif
