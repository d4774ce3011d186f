/* ONNX Resize / Upsample, float32. Reference kernels: portable C99, no
 * allocation, no globals; all coordinate arithmetic was done by the compiler. One
 * kernel per op, already the plain loop: it is the family's reference (no resize_ref.c; see
 * kernels_ref.h). GridSample, whose coordinates are data, lives here too. */
#include "aotc_resize.h"

#include <math.h>

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
