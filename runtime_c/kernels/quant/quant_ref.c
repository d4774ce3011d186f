/* Reference kernels of the quant family (declared in kernels_ref.h): the QLinear ops as onnxruntime
 * defines their arithmetic (aotc_quant.h, op by op), written as plain loops over each output element:
 * integer sums of (x - x_zero)(w - w_zero) in int64 with the model's own bias (no zero point folded
 * in, weights unpadded and unpacked), requantised as MlasRequantizeOutput does (a float product,
 * clamped, rounded half to even by libm's nearbyintf); QLinearAdd's fused multiply-adds by libm's
 * fmaf. quant_int8.c, quant_uint8.c and quant.c are checked against these, on the host and on every Cortex-M board. */
#include "kernels_ref.h"

#include <math.h>

int32_t aotc_requant_ref(int64_t acc, float scale, float lo, float hi, int32_t zero_point) {
    float f = (float)acc * scale;
    f = f < lo ? lo : f; /* lo, then hi: where lo > hi, hi */
    f = f > hi ? hi : f;
    return (int32_t)nearbyintf(f) + zero_point;
}

/* ---- per element type: QT, its range and suffix -------------------------------------------------------- */
#define QUANT_REF(SFX, QT, QMIN, QMAX)                                                                            \
    void aotc_quantize_##SFX##_ref(const aotc_qaxis *p, const float *x, QT *y) {                                 \
        int64_t o, c, i;                                                                                        \
        for (o = 0; o < p->outer; ++o) {                                                                        \
            for (c = 0; c < p->channels; ++c) {                                                                 \
                for (i = 0; i < p->inner; ++i) {                                                                \
                    const int64_t at = (o * p->channels + c) * p->inner + i;                                    \
                    const float q = nearbyintf(x[at] / p->scale[c]); /* NaN: the zero point */                 \
                    const float v = q != q ? 0.0f : q < (float)(QMIN - p->zero[c]) ? (float)(QMIN - p->zero[c]) \
                                    : q > (float)(QMAX - p->zero[c]) ? (float)(QMAX - p->zero[c]) : q;          \
                    y[at] = (QT)((int32_t)v + p->zero[c]);                                                      \
                }                                                                                               \
            }                                                                                                   \
        }                                                                                                       \
    }                                                                                                           \
    void aotc_dequantize_##SFX##_ref(const aotc_qaxis *p, const QT *x, float *y) {                               \
        int64_t o, c, i;                                                                                        \
        for (o = 0; o < p->outer; ++o)                                                                          \
            for (c = 0; c < p->channels; ++c)                                                                   \
                for (i = 0; i < p->inner; ++i) {                                                                \
                    const int64_t at = (o * p->channels + c) * p->inner + i;                                    \
                    y[at] = (float)((int32_t)x[at] - p->zero[c]) * p->scale[c];                                 \
                }                                                                                               \
    }                                                                                                           \
    /* output (n, oc, oh, ow): the model's bias plus the sum over its taps (the padding x_zero), requantised */   \
    static QT qconv_value_##SFX(const aotc_qconv_params *p, const QT *x, const int8_t *w, int64_t w_row,         \
                                const int32_t *bias, int64_t n, int64_t oc, int64_t oh, int64_t ow) {           \
        const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;                                        \
        int64_t acc = bias != NULL ? bias[oc] : 0, ic, kh, kw;                                                  \
        for (ic = 0; ic < cg; ++ic)                                                                             \
            for (kh = 0; kh < p->k_h; ++kh)                                                                     \
                for (kw = 0; kw < p->k_w; ++kw) {                                                               \
                    const int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;                           \
                    const int64_t iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;                          \
                    const int32_t wv = w[oc * w_row + (ic * p->k_h + kh) * p->k_w + kw];                        \
                    int32_t xv = p->x_zero;                                                                     \
                    if (ih >= 0 && ih < p->in_h && iw >= 0 && iw < p->in_w)                                     \
                        xv = x[((n * p->in_c + oc / mg * cg + ic) * p->in_h + ih) * p->in_w + iw];              \
                    acc += (int64_t)(wv - p->w_zero[oc]) * (xv - p->x_zero);                                    \
                }                                                                                               \
        return (QT)aotc_requant_ref(acc, p->scale[oc], p->y_lo, p->y_hi, p->y_zero);                            \
    }                                                                                                           \
    void aotc_qconv_##SFX##_ref(const aotc_qconv_params *p, const QT *x, const int8_t *w, int64_t w_row,         \
                                const int32_t *bias, QT *y) {                                                   \
        int64_t n, oc, oh, ow;                                                                                  \
        for (n = 0; n < p->batch; ++n)                                                                          \
            for (oc = 0; oc < p->out_c; ++oc)                                                                   \
                for (oh = 0; oh < p->out_h; ++oh)                                                               \
                    for (ow = 0; ow < p->out_w; ++ow)                                                           \
                        y[((n * p->out_c + oc) * p->out_h + oh) * p->out_w + ow] =                              \
                            qconv_value_##SFX(p, x, w, w_row, bias, n, oc, oh, ow);                             \
    }                                                                                                           \
    void aotc_qgemm_##SFX##_ref(const aotc_qgemm_params *p, int32_t a_zero, const QT *a, const int8_t *bt,       \
                                const int32_t *bias, QT *y) {                                                   \
        int64_t m, n, k;                                                                                        \
        for (m = 0; m < p->m; ++m)                                                                              \
            for (n = 0; n < p->n; ++n) {                                                                        \
                int64_t acc = bias[n];                                                                          \
                const int32_t bz = p->b_zero != NULL ? p->b_zero[n] : 0;                                        \
                for (k = 0; k < p->k; ++k) acc += (int64_t)(a[m * p->k + k] - a_zero) * (bt[n * p->k + k] - bz); \
                y[m * p->n + n] = (QT)aotc_requant_ref(acc, p->scale[p->per_column ? n : 0], p->y_lo, p->y_hi,   \
                                                       p->y_zero);                                              \
            }                                                                                                   \
    }                                                                                                           \
    /* element i of y by the broadcast; the fused multiply-adds in onnxruntime's order (a's product first    \
     * where a is the same across the innermost run), clamped and rounded to nearest even */                    \
    void aotc_qadd_##SFX##_ref(const aotc_qbinary_params *p, const QT *a, const QT *b, QT *y) {                  \
        const aotc_broadcast *s = &p->shape;                                                                    \
        const int a_scalar = s->a_strides[s->rank - 1] == 0;                                                    \
        int64_t total = 1, i, rest, ao, bo;                                                                     \
        int32_t d;                                                                                              \
        for (d = 0; d < s->rank; ++d) total *= s->shape[d];                                                     \
        for (i = 0; i < total; ++i) {                                                                           \
            float xa, xb, f;                                                                                    \
            for (d = s->rank - 1, rest = i, ao = 0, bo = 0; d >= 0; --d) {                                      \
                ao += rest % s->shape[d] * s->a_strides[d], bo += rest % s->shape[d] * s->b_strides[d];         \
                rest /= s->shape[d];                                                                            \
            }                                                                                                   \
            xa = (float)a[ao], xb = (float)b[bo];                                                               \
            f = a_scalar ? fmaf(xb, p->b_mult, fmaf(xa, p->a_mult, p->bias))                                    \
                         : fmaf(xa, p->a_mult, fmaf(xb, p->b_mult, p->bias));                                   \
            f = f < p->y_lo + (float)p->y_zero ? p->y_lo + (float)p->y_zero : f;                                \
            f = f > p->y_hi + (float)p->y_zero ? p->y_hi + (float)p->y_zero : f;                                \
            y[i] = (QT)nearbyintf(f);                                                                           \
        }                                                                                                       \
    }                                                                                                           \
    void aotc_qmul_##SFX##_ref(const aotc_qbinary_params *p, const QT *a, const QT *b, QT *y) {                  \
        const aotc_broadcast *s = &p->shape;                                                                    \
        int64_t total = 1, i, rest, ao, bo;                                                                     \
        int32_t d;                                                                                              \
        for (d = 0; d < s->rank; ++d) total *= s->shape[d];                                                     \
        for (i = 0; i < total; ++i) {                                                                           \
            for (d = s->rank - 1, rest = i, ao = 0, bo = 0; d >= 0; --d) {                                      \
                ao += rest % s->shape[d] * s->a_strides[d], bo += rest % s->shape[d] * s->b_strides[d];         \
                rest /= s->shape[d];                                                                            \
            }                                                                                                   \
            y[i] = (QT)aotc_requant_ref((int64_t)(a[ao] - p->a_zero) * (b[bo] - p->b_zero), p->a_mult, p->y_lo,  \
                                        p->y_hi, p->y_zero);                                                    \
        }                                                                                                       \
    }                                                                                                           \
    /* each output the conv value requantised, then added to the residual element (read first: y may be res) */ \
    void aotc_qconv_add_##SFX##_ref(const aotc_qconv_params *p, const aotc_qresidual_params *r, const QT *x,     \
                                    const int8_t *w, int64_t w_row, const int32_t *bias, const QT *res, QT *y) { \
        const int64_t total = (int64_t)p->batch * p->out_c * p->out_h * p->out_w;                               \
        int64_t i;                                                                                              \
        for (i = 0; i < total; ++i) {                                                                           \
            const int64_t plane = (int64_t)p->out_h * p->out_w;                                                 \
            const QT v = qconv_value_##SFX(p, x, w, w_row, bias, i / (p->out_c * plane), i / plane % p->out_c,  \
                                           i % plane / p->out_w, i % p->out_w);                                  \
            const QT rv = res[i];                                                                               \
            float f;                                                                                            \
            f = r->conv_a ? fmaf((float)v, r->add.a_mult, fmaf((float)rv, r->add.b_mult, r->add.bias))          \
                          : fmaf((float)rv, r->add.a_mult, fmaf((float)v, r->add.b_mult, r->add.bias));         \
            f = f < r->add.y_lo + (float)r->add.y_zero ? r->add.y_lo + (float)r->add.y_zero : f;                \
            f = f > r->add.y_hi + (float)r->add.y_zero ? r->add.y_hi + (float)r->add.y_zero : f;                \
            y[i] = (QT)nearbyintf(f);                                                                           \
        }                                                                                                       \
    }                                                                                                           \
    void aotc_qglobal_avgpool_##SFX##_ref(int32_t planes, int32_t size, float scale, int32_t x_zero,             \
                                          int32_t y_zero, const QT *x, QT *y) {                                 \
        int64_t c, i;                                                                                           \
        for (c = 0; c < planes; ++c) {                                                                          \
            int64_t sum = 0;                                                                                    \
            for (i = 0; i < size; ++i) sum += x[c * size + i] - x_zero;                                         \
            y[c] = (QT)aotc_requant_ref(sum, scale, (float)(QMIN - y_zero), (float)(QMAX - y_zero), y_zero);   \
        }                                                                                                       \
    }                                                                                                           \
    /* the window's dequantized inputs summed in float in row-major order, over the count, then             \
     * round_half_even(mean / y_scale + y_zero) saturated */                                                    \
    void aotc_qavgpool_##SFX##_ref(const aotc_pool_params *p, const float *lut, float y_scale, int32_t y_zero,  \
                                   const QT *x, QT *y) {                                                        \
        int64_t c, o[3], k[3], total = (int64_t)p->out[0] * p->out[1] * p->out[2], i;                           \
        for (c = 0; c < p->planes; ++c)                                                                         \
            for (i = 0; i < total; ++i) {                                                                       \
                float sum = 0.0f, q;                                                                            \
                int32_t inside = 0;                                                                             \
                o[0] = i / ((int64_t)p->out[1] * p->out[2]), o[1] = i / p->out[2] % p->out[1], o[2] = i % p->out[2]; \
                for (k[0] = 0; k[0] < p->kernel[0]; ++k[0])                                                     \
                    for (k[1] = 0; k[1] < p->kernel[1]; ++k[1])                                                 \
                        for (k[2] = 0; k[2] < p->kernel[2]; ++k[2]) {                                           \
                            int64_t at[3], d;                                                                   \
                            int in = 1;                                                                         \
                            for (d = 0; d < 3; ++d) {                                                           \
                                at[d] = o[d] * p->strides[d] - p->pads_begin[d] + k[d];                         \
                                in &= at[d] >= 0 && at[d] < p->in[d];                                           \
                            }                                                                                   \
                            if (!in) continue;                                                                  \
                            sum += lut[(uint8_t)x[((c * p->in[0] + at[0]) * p->in[1] + at[1]) * p->in[2] + at[2]]]; \
                            ++inside;                                                                           \
                        }                                                                                       \
                q = nearbyintf(sum / (float)(p->count_include_pad ? p->kernel[0] * p->kernel[1] * p->kernel[2]   \
                                                                  : inside) / y_scale + (float)y_zero);         \
                y[c * total + i] = (QT)(q < QMIN ? QMIN : q > QMAX ? QMAX : q);                                 \
            }                                                                                                   \
    }                                                                                                           \
    /* table[(x - max) + 255] (uint8's index; int8's table sits 128 entries round: index x - max + 127,     \
     * taken modulo 256), each output (t y_scale + sum / 2) / sum + y_zero in uint32, 255 past 255 */         \
    void aotc_qsoftmax_##SFX##_ref(int32_t rows, int32_t n, const uint32_t *table, uint32_t y_scale,             \
                                   int32_t y_zero, const QT *x, QT *y) {                                        \
        int64_t r, i;                                                                                           \
        for (r = 0; r < rows; ++r) {                                                                            \
            const QT *xr = x + r * n;                                                                           \
            int32_t top = xr[0];                                                                                \
            uint32_t sum = 0;                                                                                   \
            for (i = 0; i < n; ++i) top = xr[i] > top ? xr[i] : top;                                            \
            for (i = 0; i < n; ++i) sum += table[(255 + QMIN + xr[i] - top) & 255];                             \
            for (i = 0; i < n; ++i) {                                                                           \
                const uint32_t q = (table[(255 + QMIN + xr[i] - top) & 255] * y_scale + sum / 2) / sum + (uint32_t)y_zero; \
                const int over = QMIN < 0 ? (q & 0x80000000u) == 0 && q > 255u : q > 255u;                      \
                const int32_t v = over ? 255 : (int32_t)(q & 255u); /* then read as QT: 128..255 negative */    \
                y[r * n + i] = (QT)(v > QMAX ? v - 256 : v);                                                    \
            }                                                                                                   \
        }                                                                                                       \
    }                                                                                                           \
    void aotc_qlookup_##SFX##_ref(size_t n, const QT *x, const QT *table, QT *y) {                               \
        size_t i;                                                                                               \
        for (i = 0; i < n; ++i) y[i] = table[x[i] - QMIN];                                                      \
    }                                                                                                           \
    void aotc_qrequant_copy_##SFX##_ref(int32_t outer, int32_t inner, int32_t out_stride, const QT *table,      \
                                        const QT *x, QT *y) {                                                   \
        int64_t o, i;                                                                                           \
        for (o = 0; o < outer; ++o)                                                                             \
            for (i = 0; i < inner; ++i) y[o * out_stride + i] = table[x[o * inner + i] - QMIN];                 \
    }                                                                                                           \
    void aotc_matmul_integer_##SFX##_ref(int32_t m, int32_t n, int32_t k, const QT *a, const QT *a_zero,         \
                                         const int8_t *bt, const int32_t *b_zero, const int32_t *b_sums,        \
                                         int32_t *y) {                                                          \
        int64_t i, j, r;                                                                                        \
        (void)b_sums; /* the definition needs no sums */                                                        \
        for (i = 0; i < m; ++i)                                                                                 \
            for (j = 0; j < n; ++j) {                                                                           \
                int64_t acc = 0;                                                                                \
                for (r = 0; r < k; ++r) acc += (int64_t)(a[i * k + r] - (a_zero ? *a_zero : 0)) * (bt[j * k + r] - b_zero[j]); \
                y[i * n + j] = (int32_t)acc;                                                                    \
            }                                                                                                   \
    }                                                                                                           \
    void aotc_conv_integer_##SFX##_ref(const aotc_qconv_params *p, const QT *x, const QT *x_zero,                \
                                       const int8_t *w, int32_t *y) {                                           \
        const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;                                        \
        const int32_t xz = x_zero != NULL ? *x_zero : p->x_zero;                                                \
        int64_t n, oc, oh, ow, ic, kh, kw;                                                                      \
        for (n = 0; n < p->batch; ++n)                                                                          \
            for (oc = 0; oc < p->out_c; ++oc)                                                                   \
                for (oh = 0; oh < p->out_h; ++oh)                                                               \
                    for (ow = 0; ow < p->out_w; ++ow) {                                                         \
                        int64_t acc = 0;                                                                        \
                        for (ic = 0; ic < cg; ++ic)                                                             \
                            for (kh = 0; kh < p->k_h; ++kh)                                                     \
                                for (kw = 0; kw < p->k_w; ++kw) {                                               \
                                    const int64_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;           \
                                    const int64_t iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;          \
                                    const int32_t xv = ih >= 0 && ih < p->in_h && iw >= 0 && iw < p->in_w       \
                                        ? x[((n * p->in_c + oc / mg * cg + ic) * p->in_h + ih) * p->in_w + iw]  \
                                        : xz;                                                                   \
                                    acc += (int64_t)(xv - xz) * (w[((oc * cg + ic) * p->k_h + kh) * p->k_w + kw] - p->w_zero[oc]); \
                                }                                                                               \
                        y[((n * p->out_c + oc) * p->out_h + oh) * p->out_w + ow] = (int32_t)acc;                \
                    }                                                                                           \
    }
QUANT_REF(i8, int8_t, -128, 127)
QUANT_REF(u8, uint8_t, 0, 255)

void aotc_dequantize_i32_ref(const aotc_qaxis *p, const int32_t *x, float *y) {
    int64_t o, c, i;
    for (o = 0; o < p->outer; ++o)
        for (c = 0; c < p->channels; ++c)
            for (i = 0; i < p->inner; ++i) {
                const int64_t at = (o * p->channels + c) * p->inner + i;
                y[at] = (float)(x[at] - p->zero[c]) * p->scale[c];
            }
}

/* DynamicQuantizeLinear: the range [min(0, min x), max(0, max x)] over 255 levels (scale 1 when empty),
 * the zero point -min / scale clamped and rounded; then as QuantizeLinear */
void aotc_dynamic_quantize_u8_ref(int32_t n, const float *x, uint8_t *y, float *y_scale, uint8_t *y_zero) {
    float lo = 0.0f, hi = 0.0f, scale, zero;
    int32_t i;
    for (i = 0; i < n; ++i) lo = x[i] < lo ? x[i] : lo, hi = x[i] > hi ? x[i] : hi;
    scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    zero = nearbyintf(fminf(fmaxf(-lo / scale, 0.0f), 255.0f));
    for (i = 0; i < n; ++i) {
        const float q = nearbyintf(x[i] / scale) + zero;
        y[i] = (uint8_t)(q < 0.0f ? 0.0f : q > 255.0f ? 255.0f : q);
    }
    *y_scale = scale;
    *y_zero = (uint8_t)zero;
}
