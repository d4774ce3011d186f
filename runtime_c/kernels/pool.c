/* ONNX pooling ops, float32, NCHW. Reference kernels: portable C99, no
 * allocation, no globals.
 *
 * Window pools compute one output row (fixed d, h) at a time, using the row
 * itself as the accumulator. For each window tap, the stretch of outputs
 * whose tap lands inside the input is worked out once; the inner loop then
 * runs over that stretch with no padding test in it, and vectorises when the
 * stride is 1. */
#include "aotc_pool.h"

#include <float.h>

/* The k in [0, count) for which start + k * step lies in [lo, hi), as
 * [*k0, *k1). Used both ways round: the taps of one window (step = dilation),
 * and the outputs whose window has a given tap inside the input (step = stride). */
static void tap_range(int32_t start, int32_t step, int32_t count, int32_t lo, int32_t hi,
                      int32_t *k0, int32_t *k1) {
    int32_t a = start < lo ? (lo - start + step - 1) / step : 0;
    int32_t b = start < hi ? (hi - start + step - 1) / step : 0;
    if (b > count) b = count;
    if (a > b) a = b;
    *k0 = a;
    *k1 = b;
}

static int32_t tap_count(int32_t start, int32_t step, int32_t count, int32_t lo, int32_t hi) {
    int32_t k0, k1;
    tap_range(start, step, count, lo, hi, &k0, &k1);
    return k1 - k0;
}

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

/* Combines into yrow (the output row at od, oh of one plane) every input
 * value under each output's window: max when is_max, else the sum. */
static void pool_row(const aotc_pool_params *p, const float *xplane, int32_t od, int32_t oh, int is_max,
                     float *yrow) {
    const int32_t in_h = p->in[1], in_w = p->in[2], out_w = p->out[2], sw = p->strides[2];
    const int32_t d_start = od * p->strides[0] - p->pads_begin[0];
    const int32_t h_start = oh * p->strides[1] - p->pads_begin[1];
    int32_t kd0, kd1, kh0, kh1, kd, kh, kw;
    tap_range(d_start, p->dilations[0], p->kernel[0], 0, p->in[0], &kd0, &kd1);
    tap_range(h_start, p->dilations[1], p->kernel[1], 0, in_h, &kh0, &kh1);
    for (kd = kd0; kd < kd1; ++kd) {
        const int32_t id = d_start + kd * p->dilations[0];
        for (kh = kh0; kh < kh1; ++kh) {
            const int32_t ih = h_start + kh * p->dilations[1];
            const float *xrow = xplane + ((int64_t)id * in_h + ih) * in_w;
            for (kw = 0; kw < p->kernel[2]; ++kw) {
                /* output ow reads xrow[ow * sw + shift]; only [ow0, ow1) land inside the row */
                const int32_t shift = kw * p->dilations[2] - p->pads_begin[2];
                int32_t ow0, ow1;
                tap_range(shift, sw, out_w, 0, in_w, &ow0, &ow1);
                if (ow0 >= ow1) continue;
                if (is_max) {
                    max_into(yrow + ow0, xrow + ((int64_t)ow0 * sw + shift), sw, ow1 - ow0);
                } else {
                    add_into(yrow + ow0, xrow + ((int64_t)ow0 * sw + shift), sw, ow1 - ow0);
                }
            }
        }
    }
}

void aotc_maxpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];
    const int32_t out_w = p->out[2];
    int32_t c, od, oh, i;
    for (c = 0; c < p->planes; ++c) {
        const float *xplane = x + c * in_plane;
        for (od = 0; od < p->out[0]; ++od) {
            for (oh = 0; oh < p->out[1]; ++oh, y += out_w) {
                for (i = 0; i < out_w; ++i) y[i] = -FLT_MAX;
                pool_row(p, xplane, od, oh, 1, y);
            }
        }
    }
}

void aotc_avgpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];
    const int32_t out_w = p->out[2];
    /* the divisor counts the taps in [lo, hi) on each dim: the input, or the padded input */
    int32_t lo[3], hi[3], full0, full1, k, c, od, oh, i;
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
                for (i = 0; i < out_w; ++i) y[i] = 0.0f;
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

void aotc_global_maxpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    int32_t c, i;
    for (c = 0; c < planes; ++c, x += size) {
        float m = -FLT_MAX;
        for (i = 0; i < size; ++i) m = x[i] > m ? x[i] : m;
        y[c] = m;
    }
}

void aotc_global_avgpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    int32_t c, i;
    for (c = 0; c < planes; ++c, x += size) {
        float s = 0.0f;
        for (i = 0; i < size; ++i) s += x[i];
        y[c] = s / (float)size;
    }
}
