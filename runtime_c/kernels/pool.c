/* ONNX MaxPool (values and Indices) and AveragePool, float32, NCHW: portable C99, no allocation, no
 * globals. (The global pools: pool_global.c; MaxPool on 8-bit integers: pool_int8.c; the float
 * MaxPool in AVX-512 registers: pool_x86.h.)
 *
 * Window pools compute one output row (fixed d, h) at a time, using the row
 * itself as the accumulator. For each window tap, the stretch of outputs
 * whose tap lands inside the input is worked out once; the inner loop then
 * runs over that stretch with no padding test in it, and vectorises when the
 * stride is 1. The float MaxPool of 2-D windows takes two passes per output row
 * instead, down the rows then across the columns, through a padded row on the stack
 * (maxpool_rows_f32); with AVX-512F in registers (pool_x86.h), as kernels of their own. */
#include "pool_internal.h"

#include <float.h>


/* ys[i] = max(ys[i], xs[i * step]) for i < n. */
static void max_into(float *AOTC_RESTRICT ys, const float *AOTC_RESTRICT xs, int32_t step, int32_t n) {
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
static void add_into(float *AOTC_RESTRICT ys, const float *AOTC_RESTRICT xs, int32_t step, int32_t n) {
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

static void window_row(float *AOTC_RESTRICT yrow, const float *AOTC_RESTRICT xrow, int32_t out_w, int32_t in_w,
                       int32_t k, int32_t s, int32_t dl, int32_t pad, int is_max, int init) {
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
static void pool_row(const aotc_pool_params *p, const float *xplane, int32_t od, int32_t oh, int is_max,
                     float *yrow) {
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

/* The max across one padded row of column maxima b: y[i] = b[s i] then, tap by tap, b[s i + t]
 * (t < k) when larger. Inlined with k and s constant for the usual windows: loops compilers
 * vectorise (stride-2 loads split into even and odd lanes). */
static inline void max_across(float *AOTC_RESTRICT y, const float *AOTC_RESTRICT b, int32_t n, int32_t k, int32_t s) {
    int32_t i, t;
    for (i = 0; i < n; ++i) {
        float v = b[(int64_t)s * i];
        for (t = 1; t < k; ++t) v = MAX_OF(v, b[(int64_t)s * i + t]);
        y[i] = v;
    }
}

/* Planes [c0, c1) of a 2-D MaxPool with no dilation whose padded rows fit POOL_ROW_MAX, in two
 * passes per output row with no test inside either: the max down the window's input rows into a
 * row on the stack (from -FLT_MAX, in row order), whose padding columns hold -FLT_MAX, then across
 * it (max_across). The same order and steps as pool_row, so the same bits; 0 (nothing done) for
 * other pools. */
static int maxpool_rows_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y,
                            int32_t c0, int32_t c1) {
    const int32_t in_h = p->in[1], in_w = p->in[2], out_h = p->out[1], out_w = p->out[2];
    const int32_t kh = p->kernel[1], kw = p->kernel[2], sh = p->strides[1], sw = p->strides[2];
    const int32_t ph = p->pads_begin[1], pw = p->pads_begin[2];
    const int64_t span = (int64_t)(out_w - 1) * sw + kw; /* padded columns the windows cover */
    float row[POOL_ROW_MAX];
    float *AOTC_RESTRICT body = row + pw;
    int32_t c, oh, i, r;
    if (p->in[0] != 1 || p->out[0] != 1 || p->kernel[0] != 1 || p->pads_begin[0] != 0 || p->dilations[1] != 1 ||
        p->dilations[2] != 1 || span > POOL_ROW_MAX || (int64_t)pw + in_w > POOL_ROW_MAX) {
        return 0;
    }
    for (i = 0; i < POOL_ROW_MAX; ++i) row[i] = -FLT_MAX; /* the padding never wins */
    x += (int64_t)c0 * in_h * in_w, y += (int64_t)c0 * out_h * out_w;
    for (c = c0; c < c1; ++c, x += (int64_t)in_h * in_w) {
        for (oh = 0; oh < out_h; ++oh, y += out_w) {
            const int32_t h = oh * sh - ph, h0 = h < 0 ? 0 : h, h1 = h + kh < in_h ? h + kh : in_h;
            const float *AOTC_RESTRICT r0 = x + (int64_t)h0 * in_w;
            if (h1 - h0 == 3) {
                const float *AOTC_RESTRICT r1 = r0 + in_w, *AOTC_RESTRICT r2 = r1 + in_w;
                for (i = 0; i < in_w; ++i) body[i] = MAX_OF(MAX_OF(MAX_OF(-FLT_MAX, r0[i]), r1[i]), r2[i]);
            } else if (h1 - h0 == 2) {
                const float *AOTC_RESTRICT r1 = r0 + in_w;
                for (i = 0; i < in_w; ++i) body[i] = MAX_OF(MAX_OF(-FLT_MAX, r0[i]), r1[i]);
            } else {
                for (i = 0; i < in_w; ++i) body[i] = -FLT_MAX;
                for (r = h0; r < h1; ++r) max_into(body, x + (int64_t)r * in_w, 1, in_w);
            }
            if (kw == 3 && sw == 2) {
                max_across(y, row, out_w, 3, 2);
            } else if (kw == 2 && sw == 2) {
                max_across(y, row, out_w, 2, 2);
            } else if (kw == 3 && sw == 1) {
                max_across(y, row, out_w, 3, 1);
            } else if (kw == 2 && sw == 1) {
                max_across(y, row, out_w, 2, 1);
            } else {
                max_across(y, row, out_w, kw, sw);
            }
        }
    }
    return 1;
}

/* aotc_maxpool_f32's work for aotc_parallel_for: planes [begin, end), through maxpool_rows_f32 when
 * they fit, else pool_row */
typedef struct {
    const aotc_pool_params *p;
    const float *x;
    float *y;
} maxpool_job;

static void maxpool_planes(void *ctx, int32_t begin, int32_t end) {
    const maxpool_job *J = (const maxpool_job *)ctx;
    const aotc_pool_params *p = J->p;
    const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];
    const int32_t out_w = p->out[2];
    float *y = J->y + (int64_t)begin * p->out[0] * p->out[1] * out_w;
    int32_t c, od, oh;
    if (maxpool_rows_f32(p, J->x, J->y, begin, end)) return;
    for (c = begin; c < end; ++c) {
        const float *xplane = J->x + c * in_plane;
        for (od = 0; od < p->out[0]; ++od) {
            for (oh = 0; oh < p->out[1]; ++oh, y += out_w) pool_row(p, xplane, od, oh, 1, y);
        }
    }
}

/* Planes split across the thread pool of a --threads bundle (one call otherwise). */
void aotc_maxpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    maxpool_job J;
    J.p = p, J.x = x, J.y = y;
    aotc_parallel_for(maxpool_planes, &J, p->planes);
}

/* The flattened spatial index of position pos in a plane of dims in (d, h, w): row major
 * (w fastest), or column major (d fastest) when column_major. */
static int64_t spatial_index(const int32_t *in, const int32_t *pos, int32_t column_major) {
    if (column_major) return pos[0] + (int64_t)pos[1] * in[0] + (int64_t)pos[2] * in[0] * in[1];
    return ((int64_t)pos[0] * in[1] + pos[1]) * in[2] + pos[2];
}

void aotc_maxpool_indices_f32(const aotc_pool_params *p, int32_t spatial_rank, int32_t storage_order,
                              const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y, int64_t *AOTC_RESTRICT indices) {
    const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];
    int32_t c, o[3], k[3], pos[3], best[3], d, inside, found;
    for (c = 0; c < p->planes; ++c) {
        const float *xplane = x + c * in_plane;
        for (o[0] = 0; o[0] < p->out[0]; ++o[0]) {
            for (o[1] = 0; o[1] < p->out[1]; ++o[1]) {
                for (o[2] = 0; o[2] < p->out[2]; ++o[2]) {
                    float v = -FLT_MAX;
                    /* no tap inside: -1 on the real spatial dims, 0 on the leading 1s of a 1-D or 2-D pool */
                    for (d = 0; d < 3; ++d) best[d] = d < 3 - spatial_rank ? 0 : -1;
                    found = 0;
                    for (k[0] = 0; k[0] < p->kernel[0]; ++k[0]) {
                        for (k[1] = 0; k[1] < p->kernel[1]; ++k[1]) {
                            for (k[2] = 0; k[2] < p->kernel[2]; ++k[2]) {
                                inside = 1;
                                for (d = 0; d < 3; ++d) {
                                    pos[d] = o[d] * p->strides[d] - p->pads_begin[d] + k[d] * p->dilations[d];
                                    if (pos[d] < 0 || pos[d] >= p->in[d]) inside = 0;
                                }
                                if (inside) {
                                    const float t = xplane[spatial_index(p->in, pos, 0)];
                                    if (!found || t > v) { /* the first tap, then only a larger value */
                                        v = t;
                                        found = 1;
                                        best[0] = pos[0], best[1] = pos[1], best[2] = pos[2];
                                    }
                                }
                            }
                        }
                    }
                    *y++ = v;
                    *indices++ = c * in_plane + spatial_index(p->in, best, storage_order);
                }
            }
        }
    }
}


void aotc_avgpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];
    const int32_t out_w = p->out[2];
    /* the divisor counts the taps in [lo, hi) on each dim: the input, or the padded input */
    int32_t lo[3], hi[3], full0, full1, k, c, od, oh, i;
    int one = 1;
    for (k = 0; k < 3; ++k) { /* one window per plane, wholly inside the input, taps adjacent */
        one = one && p->out[k] == 1 && p->pads_begin[k] == 0 && p->kernel[k] <= p->in[k] &&
              (p->dilations[k] == 1 || p->kernel[k] == 1);
    }
    if (one) { /* the pool to 1 x 1 that ends a classifier: a sum per plane, in lanes */
        const float count = (float)(p->kernel[0] * p->kernel[1] * p->kernel[2]);
        for (c = 0; c < p->planes; ++c, x += in_plane) {
            float s = 0.0f;
            for (od = 0; od < p->kernel[0]; ++od) {
                s += sum_runs(x + (int64_t)od * p->in[1] * p->in[2], p->kernel[1], p->kernel[2], p->in[2]);
            }
            y[c] = s / count;
        }
        return;
    }
    for (k = 0; k < 3; ++k) {
        lo[k] = p->count_include_pad ? -p->pads_begin[k] : 0;
        hi[k] = p->in[k] + (p->count_include_pad ? p->pads_end[k] : 0);
    }
    /* outputs [full0, full1) along w have every tap in [lo, hi): no need to count them */
    tap_range(-p->pads_begin[2], p->strides[2], out_w, lo[2], hi[2] - (p->kernel[2] - 1) * p->dilations[2],
              &full0, &full1);
    for (c = 0; c < p->planes; ++c) {
        const float *xplane = x + c * in_plane;
        for (od = 0; od < p->out[0]; ++od) {
            const int32_t taps_d = tap_count(od * p->strides[0] - p->pads_begin[0], p->dilations[0],
                                             p->kernel[0], lo[0], hi[0]);
            for (oh = 0; oh < p->out[1]; ++oh, y += out_w) {
                const int32_t taps_dh = taps_d * tap_count(oh * p->strides[1] - p->pads_begin[1], p->dilations[1],
                                                           p->kernel[1], lo[1], hi[1]);
                pool_row(p, xplane, od, oh, 0, y);
                for (i = 0; i < out_w; ++i) {
                    const int32_t taps_w = i >= full0 && i < full1
                                               ? p->kernel[2]
                                               : tap_count(i * p->strides[2] - p->pads_begin[2], p->dilations[2],
                                                           p->kernel[2], lo[2], hi[2]);
                    const int32_t taps = taps_dh * taps_w;
                    y[i] = taps > 0 ? y[i] / (float)taps : 0.0f;
                }
            }
        }
    }
}
