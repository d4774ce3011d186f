/* TFLite's hybrid kernels (aotc_tflite_hybrid.h): the run-time quantisation of a float input, and
 * FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D summing int8 products in int32, scaled back to float. */
#include "aotc_tflite_hybrid.h"

#include <math.h>
#include <string.h>

static float hybrid_clamp(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* LiteRT's SymmetricQuantizeFloats: s = max(|lo|, |hi|) / 127 (1 for an all-zero input, quantized to 0). */
static void quantize_symmetric(const float *x, int32_t n, int8_t *q, float *scale, int32_t *offset) {
    float lo = x[0], hi = x[0], range, inv;
    int32_t i;
    for (i = 1; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    lo = fabsf(lo), hi = fabsf(hi);
    range = lo < hi ? hi : lo;
    *offset = 0;
    if (range == 0.0f) {
        memset(q, 0, (size_t)n);
        *scale = 1.0f;
        return;
    }
    *scale = range / 127.0f;
    inv = 127.0f / range;
    for (i = 0; i < n; ++i) {
        const int32_t v = (int32_t)roundf(x[i] * inv);
        q[i] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
    }
}

/* LiteRT's AsymmetricQuantizeFloats: the range [min(0, lo), max(0, hi)] onto [-128, 127], its scale in float
 * (as ai-edge-litert 2.3 computes it: its source's double quotient differs by an ulp on half the batches), the
 * zero point in double from the end whose error is smaller, nudged into the range; then q in float. */
static void quantize_asymmetric(const float *x, int32_t n, int8_t *q, float *scale, int32_t *offset) {
    float lo = x[0], hi = x[0], inv, zero;
    double rmin, rmax, s, zp;
    int32_t i, nudged;
    for (i = 1; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    lo = lo < 0.0f ? lo : 0.0f;
    hi = 0.0f < hi ? hi : 0.0f;
    if (lo == hi) {
        memset(q, 0, (size_t)n);
        *scale = 1.0f;
        *offset = 0;
        return;
    }
    *scale = (hi - lo) / 255.0f;
    rmin = lo, rmax = hi, s = *scale;
    zp = 128.0 + fabs(rmin / s) < 127.0 + fabs(rmax / s) ? -128.0 - rmin / s : 127.0 - rmax / s;
    nudged = zp <= -128.0 ? -128 : zp >= 127.0 ? 127 : (int32_t)round(zp);
    *offset = nudged;
    inv = 1.0f / *scale;
    zero = (float)nudged;
    for (i = 0; i < n; ++i) {
        const int32_t v = (int32_t)roundf(zero + x[i] * inv);
        q[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
}

void aotc_tfl_hybrid_quantize_f32(const aotc_tfl_hybrid_quantize_params *p, const float *x, int8_t *q,
                                  float *scale, int32_t *offset) {
    int32_t b;
    for (b = 0; b < p->batches; ++b) {
        const ptrdiff_t at = (ptrdiff_t)b * p->size;
        if (p->asymmetric)
            quantize_asymmetric(x + at, p->size, q + at, scale + b, offset + b);
        else
            quantize_symmetric(x + at, p->size, q + at, scale + b, offset + b);
    }
}

/* y = clamp(acc * (s * w_scale) + bias): 4 outputs a pass over the row of q, then the rest one by one. */
void aotc_tfl_hybrid_fc_f32(const aotc_tfl_hybrid_fc_params *p, const int8_t *q, const float *scale,
                            const int32_t *offset, const int8_t *w, const float *bias, float *y) {
    const int32_t in = p->in, out = p->out;
    int32_t r, o, i;
    for (r = 0; r < p->rows; ++r) {
        const int8_t *x = q + (ptrdiff_t)r * in;
        const float s = scale[r];
        const int32_t off = offset[r];
        float *yr = y + (ptrdiff_t)r * out;
        for (o = 0; o + 4 <= out; o += 4) {
            const int8_t *w0 = w + (ptrdiff_t)o * in, *w1 = w0 + in, *w2 = w1 + in, *w3 = w2 + in;
            int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, k;
            for (i = 0; i < in; ++i) {
                const int32_t v = x[i];
                a0 += w0[i] * v, a1 += w1[i] * v, a2 += w2[i] * v, a3 += w3[i] * v;
            }
            a0 -= p->w_sums[o] * off, a1 -= p->w_sums[o + 1] * off;
            a2 -= p->w_sums[o + 2] * off, a3 -= p->w_sums[o + 3] * off;
            {
                const int32_t acc[4] = {a0, a1, a2, a3};
                for (k = 0; k < 4; ++k) {
                    const float v = (float)acc[k] * (s * p->w_scale[o + k]);
                    yr[o + k] = hybrid_clamp(bias ? bias[o + k] + v : v, p->y_min, p->y_max);
                }
            }
        }
        for (; o < out; ++o) {
            const int8_t *wo = w + (ptrdiff_t)o * in;
            int32_t acc = 0;
            float v;
            for (i = 0; i < in; ++i) acc += wo[i] * x[i];
            acc -= p->w_sums[o] * off;
            v = (float)acc * (s * p->w_scale[o]);
            yr[o] = hybrid_clamp(bias ? bias[o] + v : v, p->y_min, p->y_max);
        }
    }
}

/* The taps of a window that fall inside the input along one axis: [*first, *last). */
static void hybrid_taps(int32_t origin, int32_t dilation, int32_t taps, int32_t size, int32_t *first, int32_t *last) {
    int32_t t0 = 0, t1 = taps;
    while (t0 < taps && origin + t0 * dilation < 0) ++t0;
    while (t1 > t0 && origin + (t1 - 1) * dilation >= size) --t1;
    *first = t0, *last = t1;
}

static float hybrid_scaled(const aotc_tfl_hybrid_conv_params *p, int32_t acc, float s, int32_t c, const float *bias) {
    const float v = p->order ? (float)acc * p->w_scale[c] * s : (float)acc * (s * p->w_scale[c]);
    return hybrid_clamp(bias ? v + bias[c] : v, p->y_min, p->y_max);
}

/* The int32 sums of 4 output channels at one position over its in-bounds taps, sum w * q; and the offset's
 * share, sum w * offset, from the channels' whole-filter sums (w_sums) when no tap is outside. */
static void conv_sums4(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const int8_t *w, int32_t oc, int32_t g,
                       int32_t b, int32_t iy0, int32_t ix0, int32_t ky0, int32_t ky1, int32_t kx0, int32_t kx1,
                       int32_t off, int32_t acc[4]) {
    const ptrdiff_t filter = (ptrdiff_t)p->kh * p->kw * p->in_c;
    const int whole = ky0 == 0 && kx0 == 0 && ky1 == p->kh && kx1 == p->kw;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0, ky, kx, i;
    for (ky = ky0; ky < ky1; ++ky) {
        const int8_t *row = q + (((ptrdiff_t)b * p->h + iy0 + ky * p->dh) * p->w) * p->c + (ptrdiff_t)g * p->in_c;
        for (kx = kx0; kx < kx1; ++kx) {
            const int8_t *xq = row + (ptrdiff_t)(ix0 + kx * p->dw) * p->c;
            const int8_t *w0 = w + (((ptrdiff_t)oc * p->kh + ky) * p->kw + kx) * p->in_c;
            const int8_t *w1 = w0 + filter, *w2 = w1 + filter, *w3 = w2 + filter;
            for (i = 0; i < p->in_c; ++i) {
                const int32_t v = xq[i];
                a0 += w0[i] * v, a1 += w1[i] * v, a2 += w2[i] * v, a3 += w3[i] * v;
            }
            if (!whole)
                for (i = 0; i < p->in_c; ++i) s0 += w0[i], s1 += w1[i], s2 += w2[i], s3 += w3[i];
        }
    }
    if (whole) s0 = p->w_sums[oc], s1 = p->w_sums[oc + 1], s2 = p->w_sums[oc + 2], s3 = p->w_sums[oc + 3];
    acc[0] = a0 - s0 * off, acc[1] = a1 - s1 * off, acc[2] = a2 - s2 * off, acc[3] = a3 - s3 * off;
}

/* Each output position's in-bounds taps found once; its channels 4 at a time (each q element loaded once for
 * the 4), the rest one by one, the input channels of a tap contiguous in both q and w. */
void aotc_tfl_hybrid_conv_f32(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                              const int32_t *offset, const int8_t *w, const float *bias, float *y) {
    const int32_t per_group = p->oc / (p->c / p->in_c);
    int32_t b, oy, ox, oc, ky, kx, i, k;
    for (b = 0; b < p->n; ++b) {
        const int32_t off = offset[b];
        for (oy = 0; oy < p->oh; ++oy) {
            int32_t ky0, ky1;
            const int32_t iy0 = oy * p->sh - p->pad_top;
            hybrid_taps(iy0, p->dh, p->kh, p->h, &ky0, &ky1);
            for (ox = 0; ox < p->ow; ++ox) {
                int32_t kx0, kx1;
                const int32_t ix0 = ox * p->sw - p->pad_left;
                float *yo = y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * p->oc;
                hybrid_taps(ix0, p->dw, p->kw, p->w, &kx0, &kx1);
                for (oc = 0; oc < p->oc;) {
                    const int32_t g = oc / per_group;
                    if (oc + 4 <= (g + 1) * per_group) { /* 4 channels of one group */
                        int32_t acc[4];
                        conv_sums4(p, q, w, oc, g, b, iy0, ix0, ky0, ky1, kx0, kx1, off, acc);
                        for (k = 0; k < 4; ++k) yo[oc + k] = hybrid_scaled(p, acc[k], scale[b], oc + k, bias);
                        oc += 4;
                        continue;
                    }
                    {
                        int32_t acc = 0;
                        for (ky = ky0; ky < ky1; ++ky) {
                            const int32_t iy = iy0 + ky * p->dh;
                            for (kx = kx0; kx < kx1; ++kx) {
                                const int32_t ix = ix0 + kx * p->dw;
                                const int8_t *xq = q + (((ptrdiff_t)b * p->h + iy) * p->w + ix) * p->c +
                                                   (ptrdiff_t)g * p->in_c;
                                const int8_t *wq = w + (((ptrdiff_t)oc * p->kh + ky) * p->kw + kx) * p->in_c;
                                for (i = 0; i < p->in_c; ++i) acc += wq[i] * (xq[i] - off);
                            }
                        }
                        yo[oc] = hybrid_scaled(p, acc, scale[b], oc, bias);
                        ++oc;
                    }
                }
            }
        }
    }
}

/* Each output position's in-bounds taps found once; its output channels' int32 sums built tap by tap, 64
 * channels at a time (the filter's taps hold the channels contiguous); with a depth multiplier of 1 the
 * offset's share comes from the channels' whole-filter sums where no tap is outside. */
void aotc_tfl_hybrid_depthwise_f32(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                                   const int32_t *offset, const int8_t *w, const float *bias, float *y) {
    int32_t b, oy, ox, ky, kx, c0, k;
    int32_t acc[64];
    for (b = 0; b < p->n; ++b) {
        const int32_t off = offset[b];
        for (oy = 0; oy < p->oh; ++oy) {
            int32_t ky0, ky1;
            const int32_t iy0 = oy * p->sh - p->pad_top;
            hybrid_taps(iy0, p->dh, p->kh, p->h, &ky0, &ky1);
            for (ox = 0; ox < p->ow; ++ox) {
                int32_t kx0, kx1;
                const int32_t ix0 = ox * p->sw - p->pad_left;
                float *yo = y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * p->oc;
                int whole;
                hybrid_taps(ix0, p->dw, p->kw, p->w, &kx0, &kx1);
                whole = p->depth_multiplier == 1 && ky0 == 0 && kx0 == 0 && ky1 == p->kh && kx1 == p->kw;
                for (c0 = 0; c0 < p->oc; c0 += 64) {
                    const int32_t n = p->oc - c0 < 64 ? p->oc - c0 : 64;
                    for (k = 0; k < n; ++k) acc[k] = whole ? -p->w_sums[c0 + k] * off : 0;
                    for (ky = ky0; ky < ky1; ++ky) {
                        const int32_t iy = iy0 + ky * p->dh;
                        for (kx = kx0; kx < kx1; ++kx) {
                            const int32_t ix = ix0 + kx * p->dw;
                            const int8_t *xq = q + (((ptrdiff_t)b * p->h + iy) * p->w + ix) * p->c;
                            const int8_t *wq = w + ((ptrdiff_t)ky * p->kw + kx) * p->oc + c0;
                            if (whole)
                                for (k = 0; k < n; ++k) acc[k] += wq[k] * xq[c0 + k];
                            else
                                for (k = 0; k < n; ++k) acc[k] += wq[k] * (xq[(c0 + k) / p->depth_multiplier] - off);
                        }
                    }
                    for (k = 0; k < n; ++k) yo[c0 + k] = hybrid_scaled(p, acc[k], scale[b], c0 + k, bias);
                }
            }
        }
    }
}

/* Each output gathers the terms LiteRT's scatter adds to it: the input positions i with o + pad - i * stride a tap
 * in [0, k), in ascending order (row, column, then channel), as the scatter visits them. */
void aotc_tfl_hybrid_transpose_conv_f32(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                                        const int32_t *offset, const int8_t *w, const float *bias, float *y) {
    int32_t b, oy, ox, oc, iy, ix, ic;
    for (b = 0; b < p->n; ++b) {
        const int32_t off = offset[b];
        const float s = scale[b];
        for (oy = 0; oy < p->oh; ++oy) {
            /* input rows reaching oy: oy + pad_top - iy * sh in [0, kh), in ascending iy */
            const int32_t ry = oy + p->pad_top;
            const int32_t iy0 = ry - (p->kh - 1) > 0 ? (ry - (p->kh - 1) + p->sh - 1) / p->sh : 0;
            const int32_t iy1 = ry >= 0 ? (ry / p->sh < p->h - 1 ? ry / p->sh : p->h - 1) : -1;
            for (ox = 0; ox < p->ow; ++ox) {
                const int32_t rx = ox + p->pad_left;
                const int32_t ix0 = rx - (p->kw - 1) > 0 ? (rx - (p->kw - 1) + p->sw - 1) / p->sw : 0;
                const int32_t ix1 = rx >= 0 ? (rx / p->sw < p->w - 1 ? rx / p->sw : p->w - 1) : -1;
                float *yo = y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * p->oc;
                for (oc = 0; oc < p->oc; ++oc) {
                    const float ws = p->w_scale[oc];
                    float sum = 0.0f;
                    for (iy = iy0; iy <= iy1; ++iy) {
                        const int8_t *wy = w + ((ptrdiff_t)oc * p->kh + (ry - iy * p->sh)) * p->kw * p->c;
                        for (ix = ix0; ix <= ix1; ++ix) {
                            const int8_t *xq = q + (((ptrdiff_t)b * p->h + iy) * p->w + ix) * p->c;
                            const int8_t *wq = wy + (ptrdiff_t)(rx - ix * p->sw) * p->c;
                            for (ic = 0; ic < p->c; ++ic) sum += (float)((xq[ic] - off) * wq[ic]) * ws * s;
                        }
                    }
                    yo[oc] = hybrid_clamp(bias ? sum + bias[oc] : sum, p->y_min, p->y_max);
                }
            }
        }
    }
}
