/* Reference kernels of the tflite_hybrid family (declared in kernels_ref.h): LiteRT's hybrid reference
 * loops from their definitions. The quantisation in double throughout where LiteRT's symmetric one is
 * float (the same values: a float32 max, its quotient by 127 and 127 by it rounded once either way); each
 * output from every tap of its window in order, out-of-bounds taps skipped, the offset subtracted per tap. */
#include "kernels_ref.h"

#include <math.h>

static float ref_clamp(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

void aotc_tfl_hybrid_quantize_ref(const aotc_tfl_hybrid_quantize_params *p, const float *x, int8_t *q,
                                  float *scale, int32_t *offset) {
    int32_t b, i;
    for (b = 0; b < p->batches; ++b) {
        const float *xb = x + (ptrdiff_t)b * p->size;
        int8_t *qb = q + (ptrdiff_t)b * p->size;
        float lo = xb[0], hi = xb[0];
        for (i = 0; i < p->size; ++i) lo = xb[i] < lo ? xb[i] : lo, hi = xb[i] > hi ? xb[i] : hi;
        if (!p->asymmetric) {
            const float range = fabsf(lo) > fabsf(hi) ? fabsf(lo) : fabsf(hi);
            offset[b] = 0;
            scale[b] = range == 0.0f ? 1.0f : (float)((double)range / 127.0);
            for (i = 0; i < p->size; ++i) {
                const float inv = range == 0.0f ? 0.0f : (float)(127.0 / (double)range);
                const float v = roundf(xb[i] * inv);
                qb[i] = (int8_t)(v < -127.0f ? -127 : v > 127.0f ? 127 : (int32_t)v);
            }
        } else {
            const float lo0 = lo < 0.0f ? lo : 0.0f, hi0 = hi > 0.0f ? hi : 0.0f;
            const double rmin = lo0, rmax = hi0;
            double zp, s;
            float inv;
            if (rmin == rmax) {
                scale[b] = 1.0f, offset[b] = 0;
                for (i = 0; i < p->size; ++i) qb[i] = 0;
                continue;
            }
            scale[b] = (float)((double)(hi0 - lo0) / 255.0); /* (the float quotient, rounded once either way) */
            s = scale[b];
            zp = fabs(rmin / s) + 128.0 < fabs(rmax / s) + 127.0 ? -128.0 - rmin / s : 127.0 - rmax / s;
            offset[b] = zp <= -128.0 ? -128 : zp >= 127.0 ? 127 : (int32_t)round(zp);
            inv = 1.0f / scale[b];
            for (i = 0; i < p->size; ++i) {
                const float v = roundf((float)offset[b] + xb[i] * inv);
                qb[i] = (int8_t)(v < -128.0f ? -128 : v > 127.0f ? 127 : (int32_t)v);
            }
        }
    }
}

void aotc_tfl_hybrid_fc_ref(const aotc_tfl_hybrid_fc_params *p, const int8_t *q, const float *scale,
                            const int32_t *offset, const int8_t *w, const float *bias, float *y) {
    int32_t r, o, i;
    for (r = 0; r < p->rows; ++r) {
        for (o = 0; o < p->out; ++o) {
            int32_t acc = 0;
            float v;
            for (i = 0; i < p->in; ++i) acc += w[(ptrdiff_t)o * p->in + i] * (q[(ptrdiff_t)r * p->in + i] - offset[r]);
            v = (float)acc * (scale[r] * p->w_scale[o]);
            y[(ptrdiff_t)r * p->out + o] = ref_clamp((bias ? bias[o] : 0.0f) + v, p->y_min, p->y_max);
        }
    }
}

static float ref_scaled(const aotc_tfl_hybrid_conv_params *p, int32_t acc, float s, int32_t c, const float *bias) {
    float v = (float)acc;
    if (p->order) {
        v = v * p->w_scale[c];
        v = v * s;
    } else {
        v = v * (p->w_scale[c] * s);
    }
    return ref_clamp(bias ? v + bias[c] : v, p->y_min, p->y_max);
}

void aotc_tfl_hybrid_conv_ref(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                              const int32_t *offset, const int8_t *w, const float *bias, float *y) {
    const int32_t per_group = p->oc / (p->c / p->in_c);
    int32_t b, oy, ox, oc, ky, kx, i;
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox)
                for (oc = 0; oc < p->oc; ++oc) {
                    int32_t acc = 0;
                    for (ky = 0; ky < p->kh; ++ky)
                        for (kx = 0; kx < p->kw; ++kx)
                            for (i = 0; i < p->in_c; ++i) {
                                const int32_t iy = oy * p->sh - p->pad_top + ky * p->dh;
                                const int32_t ix = ox * p->sw - p->pad_left + kx * p->dw;
                                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                                acc += w[(((ptrdiff_t)oc * p->kh + ky) * p->kw + kx) * p->in_c + i] *
                                       (q[(((ptrdiff_t)b * p->h + iy) * p->w + ix) * p->c + (oc / per_group) * p->in_c + i] -
                                        offset[b]);
                            }
                    y[(((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * p->oc + oc] = ref_scaled(p, acc, scale[b], oc, bias);
                }
}

void aotc_tfl_hybrid_depthwise_ref(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                                   const int32_t *offset, const int8_t *w, const float *bias, float *y) {
    int32_t b, oy, ox, ic, m, ky, kx;
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox)
                for (ic = 0; ic < p->c; ++ic)
                    for (m = 0; m < p->depth_multiplier; ++m) {
                        const int32_t oc = m + ic * p->depth_multiplier;
                        int32_t acc = 0;
                        for (ky = 0; ky < p->kh; ++ky)
                            for (kx = 0; kx < p->kw; ++kx) {
                                const int32_t iy = oy * p->sh - p->pad_top + ky * p->dh;
                                const int32_t ix = ox * p->sw - p->pad_left + kx * p->dw;
                                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                                acc += w[((ptrdiff_t)ky * p->kw + kx) * p->oc + oc] *
                                       (q[(((ptrdiff_t)b * p->h + iy) * p->w + ix) * p->c + ic] - offset[b]);
                            }
                        y[(((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * p->oc + oc] = ref_scaled(p, acc, scale[b], oc, bias);
                    }
}

/* LiteRT's HybridTransposeConv literally: the output zeroed, each input element's products scattered into it in
 * float, then the bias and the clamp. */
void aotc_tfl_hybrid_transpose_conv_ref(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                                        const int32_t *offset, const int8_t *w, const float *bias, float *y) {
    const ptrdiff_t total = (ptrdiff_t)p->n * p->oh * p->ow * p->oc;
    ptrdiff_t i;
    int32_t b, iy, ix, ic, ky, kx, oc;
    for (i = 0; i < total; ++i) y[i] = 0.0f;
    for (b = 0; b < p->n; ++b)
        for (iy = 0; iy < p->h; ++iy)
            for (ix = 0; ix < p->w; ++ix)
                for (ic = 0; ic < p->c; ++ic)
                    for (ky = 0; ky < p->kh; ++ky)
                        for (kx = 0; kx < p->kw; ++kx)
                            for (oc = 0; oc < p->oc; ++oc) {
                                const int32_t oy = iy * p->sh - p->pad_top + ky, ox = ix * p->sw - p->pad_left + kx;
                                int32_t acc;
                                if (oy < 0 || oy >= p->oh || ox < 0 || ox >= p->ow) continue;
                                acc = (q[(((ptrdiff_t)b * p->h + iy) * p->w + ix) * p->c + ic] - offset[b]) *
                                      w[(((ptrdiff_t)oc * p->kh + ky) * p->kw + kx) * p->c + ic];
                                y[(((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * p->oc + oc] +=
                                    (float)acc * p->w_scale[oc] * scale[b];
                            }
    for (i = 0; i < total; ++i) {
        const float v = bias ? y[i] + bias[i % p->oc] : y[i];
        y[i] = ref_clamp(v, p->y_min, p->y_max);
    }
}
