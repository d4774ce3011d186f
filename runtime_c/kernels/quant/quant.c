/* Quantized kernels (aotc_quant.h) that do not depend on the activations' type; the kernels written over an
 * element type QT (quant_impl.h) are instantiated in quant_int8.c and quant_uint8.c. */
#include "aotc_quant.h"

#include <math.h>

void aotc_dequantize_i32(const aotc_qaxis *p, const int32_t *x, float *y) {
    int32_t o, c, i;
    for (o = 0; o < p->outer; ++o) {
        for (c = 0; c < p->channels; ++c) {
            const float s = p->scale[c];
            const int32_t z = p->zero[c];
            for (i = 0; i < p->inner; ++i) *y++ = (float)(*x++ - z) * s;
        }
    }
}

/* --- QLinearMatMul with run-time parameters --------------------------------------------------- */

static int32_t qmm_read(const void *p, int32_t is_signed, int64_t i) {
    if (!p) return 0;
    return is_signed ? (int32_t)((const int8_t *)p)[i] : (int32_t)((const uint8_t *)p)[i];
}

/* f rounded to the nearest float16 value (ties to even), as numpy's float16 arithmetic rounds a float
 * result; beyond float16's range: infinity. */
static float qmm_round_half(float f) {
    int e, q;
    if (!(fabsf(f) > 0.0f) || !(fabsf(f) < 3.0e38f)) return f; /* zero, infinity, NaN */
    (void)frexpf(f, &e);                                          /* f = m 2^e, 0.5 <= |m| < 1 */
    q = e - 1 >= -14 ? e - 11 : -24;                              /* the float16 quantum: 2^q */
    f = ldexpf(nearbyintf(ldexpf(f, -q)), q);
    return fabsf(f) > 65504.0f ? (f > 0.0f ? INFINITY : -INFINITY) : f;
}

void aotc_qlinear_matmul_values(const aotc_qlinear_matmul_values_params *p, const void *a, const float *a_scale,
                                const void *a_zero, const void *b, const float *b_scale, const void *b_zero,
                                const float *y_scale, const void *y_zero, void *y) {
    const int32_t za = qmm_read(a_zero, p->a_signed, 0), zb = qmm_read(b_zero, p->b_signed, 0);
    const int32_t zy = qmm_read(y_zero, p->y_signed, 0);
    const double lo = p->y_signed ? -128.0 : 0.0, hi = p->y_signed ? 127.0 : 255.0;
    float mult = a_scale[0] * b_scale[0];
    int32_t bt, i, j, t;
    if (p->half_scales) mult = qmm_round_half(mult);
    mult = mult / y_scale[0];
    if (p->half_scales) mult = qmm_round_half(mult);
    for (bt = 0; bt < p->batch; ++bt) {
        const int64_t a0 = (int64_t)bt * p->m * p->k, b0 = p->b_batched ? (int64_t)bt * p->k * p->n : 0;
        for (i = 0; i < p->m; ++i) {
            for (j = 0; j < p->n; ++j) {
                const int64_t at = ((int64_t)bt * p->m + i) * p->n + j;
                int32_t c = 0;
                double d;
                for (t = 0; t < p->k; ++t) {
                    c += (qmm_read(a, p->a_signed, a0 + (int64_t)i * p->k + t) - za) *
                         (qmm_read(b, p->b_signed, b0 + (int64_t)t * p->n + j) - zb);
                }
                d = (double)c * (double)mult;
                d = d + (double)zy;
                d = nearbyint(d);
                d = d < lo ? lo : d > hi ? hi : d; /* NaN (a zero y_scale) stays NaN: written as the low end */
                if (d != d) d = lo;
                if (p->y_signed) {
                    ((int8_t *)y)[at] = (int8_t)d;
                } else {
                    ((uint8_t *)y)[at] = (uint8_t)d;
                }
            }
        }
    }
}
