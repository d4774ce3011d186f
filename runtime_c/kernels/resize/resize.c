/* ONNX Resize / Upsample, float32. Reference kernels: portable C99, no
 * allocation, no globals; all coordinate arithmetic was done by the compiler. One
 * kernel per op, already the plain loop: it is the family's reference (no resize_ref.c; see
 * kernels_ref.h). GridSample, whose coordinates are data, lives here too. */
#include "aotc_resize.h"

#include <math.h>
#include <string.h>

/* Gather: the innermost dim is a table lookup per element; outer dims advance
 * an odometer that keeps the summed offset of the current source row. */
/* Nearest is a gather: one kernel per element type (floats, and the 8-bit integers of quantized
 * models). */
#define AOTC_RESIZE_NEAREST(SUFFIX, T)                                                      \
void aotc_resize_nearest_##SUFFIX(const aotc_resize_nearest_params *p, const T *x, T *y) {  \
    const int32_t r = p->rank, n = p->out_shape[r - 1];                                     \
    const int32_t *last = p->offsets + p->start[r - 1];                                     \
    int32_t idx[AOTC_MAX_RANK] = {0};                                                       \
    int64_t outer = 1, o, base = 0;                                                         \
    int32_t i, k;                                                                           \
    for (k = 0; k < r - 1; ++k) {                                                           \
        outer *= p->out_shape[k];                                                           \
        base += p->offsets[p->start[k]];                                                    \
    }                                                                                       \
    for (o = 0; o < outer; ++o) {                                                           \
        const T *src = x + base;                                                            \
        for (i = 0; i < n; ++i) y[i] = src[last[i]];                                        \
        y += n;                                                                             \
        for (k = r - 2; k >= 0; --k) { /* next output row */                                \
            const int32_t *t = p->offsets + p->start[k];                                    \
            base -= t[idx[k]];                                                              \
            if (++idx[k] < p->out_shape[k]) {                                               \
                base += t[idx[k]];                                                          \
                break;                                                                      \
            }                                                                               \
            idx[k] = 0;                                                                     \
            base += t[0];                                                                   \
        }                                                                                   \
    }                                                                                       \
}

AOTC_RESIZE_NEAREST(f32, float)
AOTC_RESIZE_NEAREST(i8, int8_t)
AOTC_RESIZE_NEAREST(u8, uint8_t)
#undef AOTC_RESIZE_NEAREST

/* Blend: each output element (a run of `inner` contiguous elements) is the
 * weighted sum of taps_h * taps_w source runs. */
void aotc_resize_f32(const aotc_resize_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    const int32_t inner = p->inner;
    int32_t o, j, m, i, s, t, c;
    for (o = 0; o < p->outer; ++o) {
        const float *xo = x + (int64_t)o * p->x_outer_stride;
        for (j = 0; j < p->out_h; ++j) {
            const int32_t *off_h = p->offset_h + (int64_t)j * p->taps_h;
            const float *w_h = p->weight_h + (int64_t)j * p->taps_h;
            for (m = 0; m < p->mid; ++m) {
                const float *xm = xo + (int64_t)m * p->x_mid_stride;
                for (i = 0; i < p->out_w; ++i) {
                    const int32_t *off_w = p->offset_w + (int64_t)i * p->taps_w;
                    const float *w_w = p->weight_w + (int64_t)i * p->taps_w;
                    for (c = 0; c < inner; ++c) y[c] = 0.0f;
                    for (s = 0; s < p->taps_h; ++s) {
                        for (t = 0; t < p->taps_w; ++t) {
                            const float w = w_h[s] * w_w[t];
                            const float *src = xm + off_h[s] + off_w[t];
                            for (c = 0; c < inner; ++c) y[c] += w * src[c];
                        }
                    }
                    y += inner;
                }
            }
        }
    }
}

/* ---- GridSample ---------------------------------------------------------------------------- */

/* Fold v into [lo, hi] by reflecting about the nearer border, as often as it takes. */
static float grid_reflect(float v, float lo, float hi) {
    const float range = hi - lo;
    float d, r;
    int64_t k;
    if (range <= 0.0f) return lo;
    if (v < lo) {
        d = lo - v;
        k = (int64_t)(d / range);
        r = d - (float)k * range;
        return (k % 2 == 0) ? lo + r : hi - r;
    }
    if (v > hi) {
        d = v - hi;
        k = (int64_t)(d / range);
        r = d - (float)k * range;
        return (k % 2 == 0) ? hi - r : lo + r;
    }
    return v;
}

/* The index a tap reads along an axis of length len, or -1 for a zero (padding zeros). */
static int32_t grid_tap(int64_t i, int32_t len, int32_t padding, float lo, float hi) {
    if (padding == AOTC_GRID_ZEROS) return (i >= 0 && i < len) ? (int32_t)i : -1;
    if (padding == AOTC_GRID_BORDER) return i < 0 ? 0 : i >= len ? len - 1 : (int32_t)i;
    i = (int64_t)grid_reflect((float)i, lo, hi);
    return i < 0 ? 0 : i >= len ? len - 1 : (int32_t)i;
}

static void grid_cubic_weights(float t, float *w) {
    const float a = -0.75f;
    const float t1 = t + 1.0f, u = 1.0f - t, u1 = 2.0f - t;
    w[0] = ((a * t1 - 5.0f * a) * t1 + 8.0f * a) * t1 - 4.0f * a;
    w[1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
    w[2] = ((a + 2.0f) * u - (a + 3.0f)) * u * u + 1.0f;
    w[3] = ((a * u1 - 5.0f * a) * u1 + 8.0f * a) * u1 - 4.0f * a;
}

void aotc_grid_sample_f32(const aotc_grid_sample_params *p, const float *x, const float *grid, float *y) {
    const int32_t nd = p->nd, taps = p->mode == AOTC_GRID_CUBIC ? 4 : p->mode == AOTC_GRID_LINEAR ? 2 : 1;
    int64_t plane = 1;
    int32_t b, ch, o, d;
    for (d = 0; d < nd; ++d) plane *= p->in[d];
    for (b = 0; b < p->n; ++b) {
        const float *g = grid + (int64_t)b * p->out_count * nd;
        for (o = 0; o < p->out_count; ++o, g += nd) {
            /* per axis: the taps' indices (-1: a zero) and weights */
            int32_t idx[3][4];
            float wt[3][4];
            int64_t count = 1, t;
            for (d = 0; d < nd; ++d) {
                const int32_t len = p->in[d];
                const float gv = g[nd - 1 - d]; /* the grid holds x (innermost axis) first */
                const float lo = p->align_corners ? 0.0f : -0.5f;
                const float hi = p->align_corners ? (float)(len - 1) : (float)len - 0.5f;
                float v = p->align_corners ? (gv + 1.0f) / 2.0f * (float)(len - 1)
                                           : ((gv + 1.0f) * (float)len - 1.0f) / 2.0f;
                int32_t k;
                if (p->mode == AOTC_GRID_NEAREST) v = nearbyintf(v);
                /* cubic pads each tap, not the coordinate (onnxruntime and PyTorch; onnx's reference pads
                 * both, which differs only with border or reflection padding) */
                if ((v < lo || v > hi) && p->mode != AOTC_GRID_CUBIC) {
                    if (p->padding == AOTC_GRID_BORDER) v = v < 0.0f ? 0.0f : v > (float)(len - 1) ? (float)(len - 1) : v;
                    else if (p->padding == AOTC_GRID_REFLECTION) v = grid_reflect(v, lo, hi);
                }
                if (v != v) { /* NaN coordinate: no tap reads anything */
                    for (k = 0; k < taps; ++k) { idx[d][k] = -1; wt[d][k] = 0.0f; }
                    count *= taps;
                    continue;
                }
                if (p->mode == AOTC_GRID_NEAREST) {
                    idx[d][0] = grid_tap((int64_t)v, len, p->padding, lo, hi);
                    wt[d][0] = 1.0f;
                } else {
                    const float f = floorf(v), tt = v - f;
                    const int64_t base = (int64_t)f - (taps == 4 ? 1 : 0);
                    if (taps == 4) {
                        grid_cubic_weights(tt, wt[d]);
                    } else {
                        wt[d][0] = 1.0f - tt;
                        wt[d][1] = tt;
                    }
                    for (k = 0; k < taps; ++k) idx[d][k] = grid_tap(base + k, len, p->padding, lo, hi);
                }
                count *= taps;
            }
            for (ch = 0; ch < p->c; ++ch) {
                const float *xp = x + ((int64_t)b * p->c + ch) * plane;
                float sum = 0.0f;
                for (t = 0; t < count; ++t) { /* every combination of one tap per axis */
                    int64_t rest = t, off = 0;
                    float w = 1.0f;
                    int32_t zero = 0;
                    for (d = nd - 1; d >= 0; --d) {
                        const int32_t k = (int32_t)(rest % taps);
                        rest /= taps;
                        if (idx[d][k] < 0) zero = 1;
                        w *= wt[d][k];
                    }
                    if (zero) continue;
                    rest = t;
                    {
                        int64_t stride = 1;
                        for (d = nd - 1; d >= 0; --d) {
                            off += (int64_t)idx[d][rest % taps] * stride;
                            rest /= taps;
                            stride *= p->in[d];
                        }
                    }
                    sum += w * xp[off];
                }
                y[((int64_t)b * p->c + ch) * p->out_count + o] = sum;
            }
        }
    }
}

/* --- scales read at run time ------------------------------------------------------------------
 * The formulas of aot/kernels/resize.py (source_coordinate, nearest_index, linear_taps, cubic_taps), in
 * the same float32 steps: one operation a statement where a fused multiply-add could change a result. */

static float resize_coordinate(int32_t ctm, int32_t j, float s, int32_t n_in, int32_t n_out, const float *r) {
    const float x = (float)j;
    float t;
    if (r) { /* tf_crop_and_resize: r is the axis's roi start and end (onnxruntime's float steps) */
        const float span = (float)(n_in - 1);
        if (n_out <= 1) return (float)(0.5 * (double)(r[0] + r[1]) * (double)span);
        t = r[1] - r[0];
        t = x * t;
        t = t * span;
        t = t / (float)(n_out - 1);
        return r[0] * span + t;
    }
    switch (ctm) {
    case AOTC_CTM_ASYMMETRIC:
        return x / s;
    case AOTC_CTM_PYTORCH_HALF_PIXEL: /* onnxruntime: 0 for a 1-long output */
        if (n_out <= 1) return 0.0f;
        t = x + 0.5f;
        t = t / s;
        return t - 0.5f;
    case AOTC_CTM_TF_HALF_PIXEL_FOR_NN:
        t = x + 0.5f;
        return t / s;
    case AOTC_CTM_ALIGN_CORNERS:
        if (n_out <= 1) return 0.0f;
        t = x * (float)(n_in - 1);
        return t / (float)(n_out - 1);
    case AOTC_CTM_HALF_PIXEL_SYMMETRIC: {
        const float in_len = s * (float)n_in;
        const float adjustment = (float)n_out / in_len;
        const float half_in = (float)n_in / 2.0f;
        const float offset = half_in * (1.0f - adjustment);
        const double q = ((double)j + 0.5) / (double)s; /* onnxruntime: this line in double */
        const double sum = (double)offset + q;
        return (float)(sum - 0.5);
    }
    default: /* AOTC_CTM_HALF_PIXEL */
        t = x + 0.5f;
        t = t / s;
        return t - 0.5f;
    }
}

/* x limited to [lo, hi] (as a double), so that the conversions below stay in range. */
static double resize_limit(double x, double lo, double hi) {
    return x < lo ? lo : x > hi ? hi : x;
}

static int32_t resize_clamp_index(int64_t i, int32_t n) {
    return (int32_t)(i < 0 ? 0 : i > n - 1 ? n - 1 : i);
}

/* Input index of each output index along one axis, times `mult`. */
static void resize_nearest_table(const aotc_resize_scales_params *p, float s, int32_t n_in, int32_t n_out,
                                 int32_t mult, const float *r, int32_t *offsets) {
    int32_t j;
    for (j = 0; j < n_out; ++j) {
        int64_t i = j;
        if (s != 1.0f || r) {
            const double x = resize_limit(resize_coordinate(p->ctm, j, s, n_in, n_out, r), -4.0, (double)n_in + 4.0);
            const double below = floor(x), frac = x - below;
            const int tie = fabs(frac - 0.5) <= 1e-6; /* onnxruntime's tie window (resize.py HALF_TIE) */
            switch (p->nearest_mode) {
            case AOTC_NEAREST_FLOOR:
                i = (int64_t)below;
                break;
            case AOTC_NEAREST_CEIL:
                i = (int64_t)ceil(x);
                break;
            case AOTC_NEAREST_SIMPLE:
                i = s < 1.0f ? (int64_t)ceil(x) : (int64_t)below;
                break;
            case AOTC_NEAREST_ROUND_PREFER_CEIL:
                i = (int64_t)below + (frac > 0.5 || tie);
                break;
            default: /* AOTC_NEAREST_ROUND_PREFER_FLOOR */
                i = (int64_t)below + (frac > 0.5 && !tie);
                break;
            }
        }
        offsets[j] = resize_clamp_index(i, n_in) * mult;
    }
}

/* Keys cubic weights of the samples at -1, 0, 1, 2 for fraction t. */
static void resize_cubic_coefficients(float t, float a, float *c) {
    float d[4];
    int32_t k;
    d[0] = t + 1.0f;
    d[1] = t;
    d[2] = 1.0f - t;
    d[3] = 2.0f - t;
    for (k = 0; k < 4; ++k) {
        float v, u;
        if (k == 0 || k == 3) { /* 1 < |d| < 2: ((a d - 5a) d + 8a) d - 4a */
            v = a * d[k];
            u = 5.0f * a;
            v = v - u;
            v = v * d[k];
            u = 8.0f * a;
            v = v + u;
            v = v * d[k];
            u = 4.0f * a;
            c[k] = v - u;
        } else { /* |d| <= 1: ((a + 2) d - (a + 3)) d d + 1 */
            v = a + 2.0f;
            v = v * d[k];
            u = a + 3.0f;
            v = v - u;
            v = v * d[k];
            v = v * d[k];
            c[k] = v + 1.0f;
        }
    }
}

/* The linear (triangle) or Keys cubic kernel at distance d, in double (resize.py antialias_weight). */
static double resize_antialias_weight(int32_t mode, double d, double a) {
    double d2, d3, v;
    d = fabs(d);
    if (mode == AOTC_RESIZE_LINEAR) {
        v = 1.0 - d;
        return v < 0.0 ? 0.0 : v;
    }
    d2 = d * d;
    d3 = d * d2;
    if (d <= 1.0) return (a + 2.0) * d3 - (a + 3.0) * d2 + 1.0;
    if (d < 2.0) return a * d3 - 5.0 * a * d2 + 8.0 * a * d - 4.0 * a;
    return 0.0;
}

/* Antialias on an axis that shrinks (resize.py antialias_taps): the kernel widened by 1 / s over `taps`
 * samples, weights normalised to sum 1, edge samples repeating. Returns the taps, or 0 when the tables
 * would not fit in `cap` entries. */
static int32_t resize_antialias_table(const aotc_resize_scales_params *p, float s, int32_t n_in, int32_t n_out,
                                      int32_t mult, int32_t cap, const float *r, int32_t *offsets, float *weights) {
    const double sd = (double)s, support = p->mode == AOTC_RESIZE_LINEAR ? 1.0 : 2.0;
    const double a = (double)p->cubic_a;
    const int64_t first = (int64_t)floor(-support / sd) + 1, taps = 2 - 2 * first;
    int32_t j;
    int64_t k;
    if (taps * n_out > cap) return 0;
    for (j = 0; j < n_out; ++j) {
        const double x = resize_limit(resize_coordinate(p->ctm, j, s, n_in, n_out, r), -1.0e9, 1.0e9);
        double base = floor(x), ratio = x - base, total = 0.0, kept = 0.0;
        if (ratio == 0.0) { /* the reference takes the sample left of a whole coordinate as base */
            base -= 1.0;
            ratio = 1.0;
        }
        for (k = 0; k < taps; ++k) total += resize_antialias_weight(p->mode, sd * ((double)(first + k) - ratio), a);
        for (k = 0; k < taps; ++k) { /* exclude_outside: the weights of the taps inside, renormalised */
            const int64_t tap = (int64_t)base + first + k;
            if (tap >= 0 && tap < n_in) kept += resize_antialias_weight(p->mode, sd * ((double)(first + k) - ratio), a) / total;
        }
        for (k = 0; k < taps; ++k) {
            const int64_t tap = (int64_t)base + first + k;
            double c = resize_antialias_weight(p->mode, sd * ((double)(first + k) - ratio), a) / total;
            if (p->exclude_outside) {
                if (tap < 0 || tap >= n_in) c = 0.0;
                else if (kept != 0.0) c = c / kept;
            }
            offsets[taps * j + k] = resize_clamp_index(tap, n_in) * mult;
            weights[taps * j + k] = (float)c;
        }
    }
    return (int32_t)taps;
}

/* Sources (times `mult`) and weights of each output index along one axis: 2 (linear) or 4 (cubic). */
static void resize_interp_table(const aotc_resize_scales_params *p, float s, int32_t n_in, int32_t n_out,
                                int32_t mult, const float *r, int32_t *offsets, float *weights) {
    int32_t j, k;
    for (j = 0; j < n_out; ++j) {
        const float x = s == 1.0f && !r ? (float)j : resize_coordinate(p->ctm, j, s, n_in, n_out, r);
        if (p->mode == AOTC_RESIZE_LINEAR) {
            const float top = (float)(n_in - 1);
            const float xc = x < 0.0f ? 0.0f : x > top ? top : x;
            int32_t x1 = (int32_t)xc, x2;
            float d1, d2;
            if (x1 > n_in - 1) x1 = n_in - 1;
            x2 = x1 + 1 > n_in - 1 ? n_in - 1 : x1 + 1;
            d1 = fabsf(xc - (float)x1);
            d2 = fabsf(xc - (float)x2);
            if (x1 == x2) d1 = d2 = 0.5f;
            offsets[2 * j] = x1 * mult;
            offsets[2 * j + 1] = x2 * mult;
            weights[2 * j] = d2;
            weights[2 * j + 1] = d1;
        } else {
            const int64_t base = (int64_t)floor(resize_limit(x, -8.0, (double)n_in + 8.0));
            const float t = x - (float)base;
            float c[4], total = 0.0f;
            resize_cubic_coefficients(t, p->cubic_a, c);
            if (p->exclude_outside) {
                for (k = 0; k < 4; ++k) {
                    const int64_t tap = base - 1 + k;
                    if (tap < 0 || tap >= n_in) c[k] = 0.0f;
                    total = total + c[k];
                }
                for (k = 0; k < 4; ++k) c[k] = c[k] / total;
            }
            for (k = 0; k < 4; ++k) {
                offsets[4 * j + k] = resize_clamp_index(base - 1 + k, n_in) * mult;
                weights[4 * j + k] = c[k];
            }
        }
    }
}

static int64_t resize_product(const int32_t *dims, int32_t from, int32_t to) {
    int64_t n = 1;
    int32_t k;
    for (k = from; k < to; ++k) n *= dims[k];
    return n;
}

/* Resize by the per-axis scales s, whose output shape the caller checked. */
static int32_t resize_by_scales(const aotc_resize_scales_params *p, const float *s, const float *roi,
                                const float *x, float *y, void *scratch);

int32_t aotc_resize_scales_f32(const aotc_resize_scales_params *p, const float *scales, const float *x, float *y,
                               void *scratch) {
    float s[AOTC_MAX_RANK];
    int32_t k;
    if (p->n_scales < 0 || p->n_scales > p->rank) return AOTC_ERR_SHAPE;
    for (k = 0; k < p->rank; ++k) s[k] = 1.0f;
    for (k = 0; k < p->n_scales; ++k) s[p->axes[k]] = scales[k];
    for (k = 0; k < p->rank; ++k) {
        float size;
        if (!(s[k] > 0.0f) || !(s[k] <= 3.0e38f)) return AOTC_ERR_SHAPE; /* also NaN */
        size = s[k] * (float)p->in_shape[k];
        if (!(size < 2147483648.0f) || (int32_t)size != p->out_shape[k]) return AOTC_ERR_SHAPE;
    }
    return resize_by_scales(p, s, NULL, x, y, scratch);
}

int32_t aotc_resize_sizes_f32(const aotc_resize_scales_params *p, const int64_t *sizes, const float *x, float *y,
                              void *scratch) {
    float s[AOTC_MAX_RANK], common = 0.0f;
    int32_t k;
    if (p->n_scales < 1 || p->n_scales > p->rank) return AOTC_ERR_SHAPE;
    for (k = 0; k < p->n_scales; ++k) {
        float r;
        if (sizes[k] < 1 || sizes[k] > INT32_MAX) return AOTC_ERR_SHAPE;
        r = (float)sizes[k] / (float)p->in_shape[p->axes[k]];
        if (k == 0 || (p->policy == AOTC_KEEP_NOT_LARGER ? r < common : r > common)) common = r;
    }
    for (k = 0; k < p->rank; ++k) s[k] = 1.0f;
    for (k = 0; k < p->n_scales; ++k) {
        const int32_t ax = p->axes[k];
        const float size = common * (float)p->in_shape[ax];
        const double rounded = floor((double)size + 0.5); /* half away from zero: size > 0 */
        if (!(rounded < 2147483648.0) || (int32_t)rounded != p->out_shape[ax]) return AOTC_ERR_SHAPE;
        s[ax] = common;
    }
    for (k = 0; k < p->rank; ++k) {
        if (s[k] == 1.0f && p->in_shape[k] != p->out_shape[k]) return AOTC_ERR_SHAPE;
    }
    return resize_by_scales(p, s, NULL, x, y, scratch);
}

/* tf_crop_and_resize: flag the output indices along one axis whose coordinate falls outside the input. */
static void resize_outside(const aotc_resize_scales_params *p, float s, int32_t n_in, int32_t n_out, const float *r,
                           int32_t *outside) {
    int32_t j;
    for (j = 0; j < n_out; ++j) {
        const float c = resize_coordinate(p->ctm, j, s, n_in, n_out, r);
        outside[j] = !(c >= 0.0f && c <= (float)(n_in - 1));
    }
}

/* tf_crop_and_resize: output elements whose coordinate along any axis falls outside the input (flagged per
 * axis and output index in `outside`) take the extrapolation value. */
static void resize_extrapolate(const aotc_resize_scales_params *p, const int32_t *outside, float *y) {
    int32_t idx[AOTC_MAX_RANK] = {0}, start[AOTC_MAX_RANK], k, at = 0;
    const int64_t total = resize_product(p->out_shape, 0, p->rank);
    int64_t e;
    for (k = 0; k < p->rank; ++k) {
        start[k] = at;
        at += p->out_shape[k];
    }
    for (e = 0; e < total; ++e) {
        for (k = 0; k < p->rank; ++k) {
            if (outside[start[k] + idx[k]]) {
                y[e] = p->extrapolation;
                break;
            }
        }
        for (k = p->rank - 1; k >= 0; --k) { /* next output index */
            if (++idx[k] < p->out_shape[k]) break;
            idx[k] = 0;
        }
    }
}

int32_t aotc_resize_crop_f32(const aotc_resize_scales_params *p, const float *roi, const float *x, float *y,
                             void *scratch) {
    float s[AOTC_MAX_RANK], crop[2 * AOTC_MAX_RANK];
    int32_t k;
    if (p->n_scales < 1 || p->n_scales > p->rank) return AOTC_ERR_SHAPE;
    for (k = 0; k < p->rank; ++k) {
        s[k] = (float)p->out_shape[k] / (float)p->in_shape[k];
        crop[2 * k] = 0.0f;
        crop[2 * k + 1] = 1.0f;
    }
    for (k = 0; k < p->n_scales; ++k) {
        crop[2 * p->axes[k]] = roi[k];
        crop[2 * p->axes[k] + 1] = roi[p->n_scales + k];
    }
    return resize_by_scales(p, s, crop, x, y, scratch);
}

/* Resize by the per-axis scales s; roi (tf_crop_and_resize): each axis's start and end, else NULL. */
static int32_t resize_by_scales(const aotc_resize_scales_params *p, const float *s, const float *roi,
                                const float *x, float *y, void *scratch) {
    int32_t k, same = 1, max_out = 1, sum_out = 0;
    int64_t region = 1;
    for (k = 0; k < p->rank; ++k) {
        sum_out += p->out_shape[k];
        same = same && p->in_shape[k] == p->out_shape[k] && (!roi || (roi[2 * k] == 0.0f && roi[2 * k + 1] == 1.0f));
        if (p->out_shape[k] > max_out) max_out = p->out_shape[k];
        region *= p->in_shape[k] > p->out_shape[k] ? p->in_shape[k] : p->out_shape[k];
    }
    if (same) { /* onnxruntime copies whenever no dim changes, whatever the scales */
        memcpy(y, x, (size_t)resize_product(p->out_shape, 0, p->rank) * sizeof(float));
        return 0;
    }
    if (p->mode == AOTC_RESIZE_NEAREST) {
        aotc_resize_nearest_params q;
        int32_t *table = (int32_t *)scratch, *outside = table + sum_out, at = 0;
        q.rank = p->rank;
        q.offsets = table;
        for (k = 0; k < p->rank; ++k) {
            q.out_shape[k] = p->out_shape[k];
            q.start[k] = at;
            resize_nearest_table(p, s[k], p->in_shape[k], p->out_shape[k],
                                 (int32_t)resize_product(p->in_shape, k + 1, p->rank), roi ? roi + 2 * k : NULL,
                                 table + at);
            if (roi) resize_outside(p, s[k], p->in_shape[k], p->out_shape[k], roi + 2 * k, outside + at);
            at += p->out_shape[k];
        }
        aotc_resize_nearest_f32(&q, x, y);
        if (roi) resize_extrapolate(p, outside, y);
        return 0;
    }
    {
        const int32_t taps = p->mode == AOTC_RESIZE_LINEAR ? 2 : 4;
        int32_t cap = 4 * max_out; /* entries of each table (aotc_resize.h) */
        float *regions[2];
        int32_t *offset_h, *offset_w;
        float *weight_h, *weight_w;
        int32_t axes[AOTC_MAX_RANK], n_axes = 0, shape[AOTC_MAX_RANK], end, pass = 0, at, *outside;
        const float *src = x;
        regions[0] = (float *)scratch;
        regions[1] = regions[0] + region;
        if (p->antialias) {
            for (k = 0; k < p->rank; ++k) {
                const int64_t need = 4 * (int64_t)p->in_shape[k] + 2 * (int64_t)p->out_shape[k] + 8;
                if (need > cap) cap = (int32_t)need;
            }
        }
        offset_h = (int32_t *)(regions[1] + region);
        weight_h = (float *)(offset_h + cap);
        offset_w = (int32_t *)(weight_h + cap);
        weight_w = (float *)(offset_w + cap);
        outside = (int32_t *)(weight_w + cap);
        for (k = 0, at = 0; k < p->rank; ++k) {
            shape[k] = p->in_shape[k];
            if (roi) {
                resize_outside(p, s[k], p->in_shape[k], p->out_shape[k], roi + 2 * k, outside + at);
                at += p->out_shape[k];
                if (p->in_shape[k] != p->out_shape[k] || roi[2 * k] != 0.0f || roi[2 * k + 1] != 1.0f) {
                    axes[n_axes++] = k;
                }
            } else if (s[k] != 1.0f) {
                axes[n_axes++] = k;
            }
        }
        for (end = n_axes; end > 0; end -= 2, ++pass) { /* axes in pairs from the innermost */
            const int32_t w = axes[end - 1], h = end >= 2 ? axes[end - 2] : -1;
            aotc_resize_params r;
            float *dst = end <= 2 ? y : regions[pass % 2];
            r.inner = (int32_t)resize_product(shape, w + 1, p->rank);
            r.out_w = p->out_shape[w];
            r.taps_w = taps;
            r.x_mid_stride = shape[w] * r.inner;
            if (p->antialias && s[w] < 1.0f) {
                r.taps_w = resize_antialias_table(p, s[w], shape[w], p->out_shape[w], r.inner, cap, NULL, offset_w,
                                                  weight_w);
                if (r.taps_w == 0) return AOTC_ERR_SHAPE;
            } else {
                resize_interp_table(p, s[w], shape[w], p->out_shape[w], r.inner, roi ? roi + 2 * w : NULL, offset_w,
                                    weight_w);
            }
            if (h < 0) {
                r.outer = (int32_t)resize_product(shape, 0, w);
                r.mid = 1;
                r.out_h = 1;
                r.taps_h = 1;
                r.x_outer_stride = r.x_mid_stride;
                offset_h[0] = 0;
                weight_h[0] = 1.0f;
            } else {
                r.outer = (int32_t)resize_product(shape, 0, h);
                r.mid = (int32_t)resize_product(shape, h + 1, w);
                r.out_h = p->out_shape[h];
                r.taps_h = taps;
                r.x_outer_stride = shape[h] * r.mid * r.x_mid_stride;
                if (p->antialias && s[h] < 1.0f) {
                    r.taps_h = resize_antialias_table(p, s[h], shape[h], p->out_shape[h], r.mid * r.x_mid_stride, cap,
                                                      NULL, offset_h, weight_h);
                    if (r.taps_h == 0) return AOTC_ERR_SHAPE;
                } else {
                    resize_interp_table(p, s[h], shape[h], p->out_shape[h], r.mid * r.x_mid_stride,
                                        roi ? roi + 2 * h : NULL, offset_h, weight_h);
                }
                shape[h] = p->out_shape[h];
            }
            shape[w] = p->out_shape[w];
            r.offset_h = offset_h;
            r.weight_h = weight_h;
            r.offset_w = offset_w;
            r.weight_w = weight_w;
            aotc_resize_f32(&r, src, dst);
            src = dst;
        }
        if (roi) resize_extrapolate(p, outside, y);
    }
    return 0;
}
