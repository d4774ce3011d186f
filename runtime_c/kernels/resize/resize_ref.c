/* Reference kernels of the resize family (declared in kernels_ref.h): Resize's gather and blend one
 * output element at a time from the compiler's tables, and GridSample from the ONNX definition,
 * one output and one tap at a time. */
#include "kernels_ref.h"

#include <math.h>

/* Output element e of a nearest resize: its index along each dim (last fastest) picks a table
 * entry; the source is x at the sum of the entries. */
#define NEAREST_REF(SUFFIX, T)                                                                         \
    void aotc_resize_nearest_ref_##SUFFIX(const aotc_resize_nearest_params *p, const T *x, T *y) {    \
        int64_t total = 1, e, rest, src;                                                               \
        int32_t k;                                                                                     \
        for (k = 0; k < p->rank; ++k) total *= p->out_shape[k];                                        \
        for (e = 0; e < total; ++e) {                                                                  \
            for (rest = e, src = 0, k = p->rank - 1; k >= 0; --k) {                                    \
                src += p->offsets[p->start[k] + rest % p->out_shape[k]];                               \
                rest /= p->out_shape[k];                                                               \
            }                                                                                          \
            y[e] = x[src];                                                                             \
        }                                                                                              \
    }
NEAREST_REF(f32, float)
NEAREST_REF(i8, int8_t)
NEAREST_REF(u8, uint8_t)

void aotc_resize_ref_f32(const aotc_resize_params *p, const float *x, float *y) {
    int32_t o, j, m, i, c, s, t;
    for (o = 0; o < p->outer; ++o) {
        for (j = 0; j < p->out_h; ++j) {
            for (m = 0; m < p->mid; ++m) {
                for (i = 0; i < p->out_w; ++i) {
                    for (c = 0; c < p->inner; ++c) {
                        double sum = 0.0;
                        for (s = 0; s < p->taps_h; ++s) {
                            for (t = 0; t < p->taps_w; ++t) {
                                const ptrdiff_t at = (ptrdiff_t)o * p->x_outer_stride + (ptrdiff_t)m * p->x_mid_stride +
                                                     p->offset_h[j * p->taps_h + s] + p->offset_w[i * p->taps_w + t] + c;
                                sum += (double)p->weight_h[j * p->taps_h + s] * p->weight_w[i * p->taps_w + t] * x[at];
                            }
                        }
                        *y++ = (float)sum;
                    }
                }
            }
        }
    }
}

/* v reflected about lo and hi until it lies between them (lo when they meet). */
static double reflect(double v, double lo, double hi) {
    if (hi <= lo) return lo;
    while (v < lo || v > hi) v = v < lo ? 2.0 * lo - v : 2.0 * hi - v;
    return v;
}

/* Keys' cubic convolution weight (a = -0.75) of a tap at distance d from the coordinate. */
static double keys(double d) {
    const double a = -0.75;
    d = fabs(d);
    if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
    if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
    return 0.0;
}

/* The input index tap i of an axis of length len reads, by the padding, or -1 for a zero. */
static int32_t tap_index(const aotc_grid_sample_params *p, int64_t i, int32_t len) {
    if (i >= 0 && i < len) return (int32_t)i;
    if (p->padding == AOTC_GRID_ZEROS) return -1;
    if (p->padding == AOTC_GRID_REFLECTION) {
        i = (int64_t)reflect((double)i, p->align_corners ? 0.0 : -0.5, p->align_corners ? len - 1.0 : len - 0.5);
    }
    return i < 0 ? 0 : i >= len ? len - 1 : (int32_t)i;
}

void aotc_grid_sample_ref_f32(const aotc_grid_sample_params *p, const float *x, const float *grid, float *y) {
    const int32_t nd = p->nd, taps = p->mode == AOTC_GRID_CUBIC ? 4 : p->mode == AOTC_GRID_LINEAR ? 2 : 1;
    int64_t plane = 1, combos = 1;
    int32_t b, ch, o, d;
    for (d = 0; d < nd; ++d) plane *= p->in[d], combos *= taps;
    for (b = 0; b < p->n; ++b) {
        for (ch = 0; ch < p->c; ++ch) {
            for (o = 0; o < p->out_count; ++o) {
                const float *g = grid + ((int64_t)b * p->out_count + o) * nd;
                int32_t first[3];
                double t[3], sum = 0.0;
                int64_t combo;
                for (d = 0; d < nd; ++d) { /* axis d (outermost first) is the grid's component nd - 1 - d */
                    const int32_t len = p->in[d];
                    const double lo = p->align_corners ? 0.0 : -0.5, hi = p->align_corners ? len - 1.0 : len - 0.5;
                    const float gv = g[nd - 1 - d];
                    double v = p->align_corners ? (double)((gv + 1.0f) / 2.0f * (float)(len - 1))
                                                : (double)(((gv + 1.0f) * (float)len - 1.0f) / 2.0f);
                    if (p->mode == AOTC_GRID_NEAREST) v = rint(v); /* half to even */
                    if (p->mode != AOTC_GRID_CUBIC && (v < lo || v > hi)) { /* cubic pads its taps only */
                        if (p->padding == AOTC_GRID_BORDER) v = v < 0.0 ? 0.0 : v > len - 1.0 ? len - 1.0 : v;
                        if (p->padding == AOTC_GRID_REFLECTION) v = reflect(v, lo, hi);
                    }
                    first[d] = (int32_t)floor(v) - (taps == 4 ? 1 : 0);
                    t[d] = v;
                }
                for (combo = 0; combo < combos; ++combo) { /* one tap per axis */
                    int64_t rest = combo, off = 0;
                    double w = 1.0;
                    for (d = 0; d < nd; ++d) {
                        const int32_t tap = first[d] + (int32_t)(rest % taps), at = tap_index(p, tap, p->in[d]);
                        rest /= taps;
                        w *= taps == 1 ? 1.0 : taps == 2 ? 1.0 - fabs(t[d] - tap) : keys(t[d] - tap);
                        if (at < 0) w = 0.0;
                        off = off * p->in[d] + (at < 0 ? 0 : at);
                    }
                    if (w != 0.0) sum += w * x[((int64_t)b * p->c + ch) * plane + off];
                }
                y[((int64_t)b * p->c + ch) * p->out_count + o] = (float)sum;
            }
        }
    }
}

/* ---- DeformConv: each output on its own, each tap's corners read where they are summed, in double ---- */
static double deform_corner_ref(const float *plane, int32_t height, int32_t width, int64_t r, int64_t c, double wt) {
    return r >= 0 && r < height && c >= 0 && c < width ? wt * (double)plane[r * width + c] : 0.0;
}

void aotc_deform_conv_ref_f32(const aotc_deform_conv_params *p, const float *x, const float *w, const float *offset,
                              const float *bias, const float *mask, float *y) {
    const int64_t taps = (int64_t)p->k_h * p->k_w, oplane = (int64_t)p->out_h * p->out_w;
    int64_t b, oc, oh, ow, ci, i, j;
    for (b = 0; b < p->n; ++b) {
        for (oc = 0; oc < p->out_c; ++oc) {
            const int64_t g = oc / (p->out_c / p->group), icg = p->in_c / p->group;
            for (oh = 0; oh < p->out_h; ++oh) {
                for (ow = 0; ow < p->out_w; ++ow) {
                    double acc = bias ? (double)bias[oc] : 0.0;
                    for (ci = 0; ci < icg; ++ci) {
                        const int64_t c = g * icg + ci, og = c / (p->in_c / p->offset_group);
                        const float *plane = x + (b * p->in_c + c) * p->in_h * p->in_w;
                        for (i = 0; i < p->k_h; ++i) {
                            for (j = 0; j < p->k_w; ++j) {
                                const int64_t at = (b * p->offset_group + og) * taps + i * p->k_w + j;
                                const double h = (double)(oh * p->stride_h - p->pad_top + i * p->dil_h) +
                                                 (double)offset[(at * 2) * oplane + oh * p->out_w + ow];
                                const double wq = (double)(ow * p->stride_w - p->pad_left + j * p->dil_w) +
                                                  (double)offset[(at * 2 + 1) * oplane + oh * p->out_w + ow];
                                const double m = mask ? (double)mask[at * oplane + oh * p->out_w + ow] : 1.0;
                                const double h0 = floor(h), w0 = floor(wq), lh = h - h0, lw = wq - w0;
                                double v = 0.0;
                                if (h > -1.0 && h < p->in_h + 1.0 && wq > -1.0 && wq < p->in_w + 1.0) {
                                    v = deform_corner_ref(plane, p->in_h, p->in_w, (int64_t)h0, (int64_t)w0, (1 - lh) * (1 - lw)) +
                                        deform_corner_ref(plane, p->in_h, p->in_w, (int64_t)h0, (int64_t)w0 + 1, (1 - lh) * lw) +
                                        deform_corner_ref(plane, p->in_h, p->in_w, (int64_t)h0 + 1, (int64_t)w0, lh * (1 - lw)) +
                                        deform_corner_ref(plane, p->in_h, p->in_w, (int64_t)h0 + 1, (int64_t)w0 + 1, lh * lw);
                                }
                                acc += (double)w[(oc * icg + ci) * taps + i * p->k_w + j] * v * m;
                            }
                        }
                    }
                    y[(b * p->out_c + oc) * oplane + oh * p->out_w + ow] = (float)acc;
                }
            }
        }
    }
}
