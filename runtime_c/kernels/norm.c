/* ONNX normalisation ops, float32: BatchNormalization (inference),
 * InstanceNormalization, LRN, Softmax, LogSoftmax. Reference kernels:
 * portable C99, no allocation, no globals; the inner loops run along
 * contiguous memory so the compiler can vectorise them. Sums are kept in
 * float (MCUs with a single-precision FPU emulate double in software). One kernel per
 * op, already the plain loop: it is the family's reference (no norm_ref.c; see kernels_ref.h). */
#include "aotc_norm.h"

#include <math.h>

/* ---- BatchNormalization ------------------------------------------------------ */

void aotc_batchnorm_f32(int32_t batch, int32_t channels, int32_t inner, const float *x, const float *scale,
                        const float *shift, float *y) {
    int32_t b, c, i;
    for (b = 0; b < batch; ++b) {
        for (c = 0; c < channels; ++c, x += inner, y += inner) {
            const float s = scale[c], t = shift[c];
            for (i = 0; i < inner; ++i) y[i] = x[i] * s + t;
        }
    }
}

void aotc_batchnorm_prepare_f32(const aotc_batchnorm_prepare_params *p, const float *gamma, const float *beta,
                                const float *mean, const float *var, float *AOTC_RESTRICT scale,
                                float *AOTC_RESTRICT shift) {
    int32_t c;
    for (c = 0; c < p->channels; ++c) {
        scale[c] = gamma[c] / sqrtf(var[c] + p->epsilon);
        shift[c] = beta[c] - mean[c] * scale[c];
    }
}

/* ---- InstanceNormalization ------------------------------------------------------ */

void aotc_instance_norm_f32(const aotc_instance_norm_params *p, const float *x, const float *scale,
                            const float *bias, float *y) {
    const int32_t n = p->spatial;
    int32_t b, c, i;
    for (b = 0; b < p->batch; ++b) {
        for (c = 0; c < p->channels; ++c, x += n, y += n) {
            /* sums of x - x[0] keep float precision when the mean is large beside the spread;
             * the variance is a second pass over x - mean, which cancels nothing */
            const float x0 = x[0];
            float sum = 0.0f, sq = 0.0f, mean, a, t;
            for (i = 0; i < n; ++i) sum += x[i] - x0;
            mean = x0 + sum / (float)n;
            for (i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
            a = scale[c] / sqrtf(sq / (float)n + p->epsilon);
            t = bias[c] - mean * a;
            for (i = 0; i < n; ++i) y[i] = x[i] * a + t;
        }
    }
}

/* ---- LRN --------------------------------------------------------------------------- */

void aotc_lrn_f32(const aotc_lrn_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    const int32_t nc = p->channels, n = p->spatial;
    int32_t b, c, k, i;
    for (b = 0; b < p->batch; ++b) {
        const float *xb = x + (int64_t)b * nc * n;
        float *yb = y + (int64_t)b * nc * n;
        for (c = 0; c < nc; ++c) {
            const int32_t c0 = c - p->before > 0 ? c - p->before : 0;
            const int32_t c1 = c + p->after < nc - 1 ? c + p->after : nc - 1;
            const float *xc = xb + (int64_t)c * n;
            float *yc = yb + (int64_t)c * n; /* holds the sum of squares until the last loop */
            for (i = 0; i < n; ++i) yc[i] = 0.0f;
            for (k = c0; k <= c1; ++k) {
                const float *xk = xb + (int64_t)k * n;
                for (i = 0; i < n; ++i) yc[i] += xk[i] * xk[i];
            }
            for (i = 0; i < n; ++i) yc[i] = xc[i] * powf(p->bias + p->alpha_over_size * yc[i], -p->beta);
        }
    }
}

/* ---- Softmax, LogSoftmax ------------------------------------------------------------ */

/* Max of one contiguous row. */
static float row_max(const float *x, int32_t n) {
    float m = x[0];
    int32_t i;
    for (i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

/* Column-wise max of an [n, inner] block into mx[inner]. */
static void column_max(const float *x, int32_t n, int32_t inner, float *AOTC_RESTRICT mx) {
    int32_t k, i;
    for (i = 0; i < inner; ++i) mx[i] = x[i];
    for (k = 1; k < n; ++k) {
        const float *row = x + (int64_t)k * inner;
        for (i = 0; i < inner; ++i) mx[i] = row[i] > mx[i] ? row[i] : mx[i];
    }
}

void aotc_softmax_f32(const aotc_softmax_params *p, const float *x, float *y, float *scratch) {
    const int32_t n = p->n, inner = p->inner;
    const int64_t block = (int64_t)n * inner;
    int32_t o, k, i;
    for (o = 0; o < p->outer; ++o, x += block, y += block) {
        if (inner == 1) {
            const float m = row_max(x, n);
            float sum = 0.0f, inv;
            for (i = 0; i < n; ++i) {
                const float e = expf(x[i] - m);
                y[i] = e;
                sum += e;
            }
            inv = 1.0f / sum;
            for (i = 0; i < n; ++i) y[i] *= inv;
        } else {
            float *mx = scratch, *sum = scratch + inner;
            column_max(x, n, inner, mx);
            for (i = 0; i < inner; ++i) sum[i] = 0.0f;
            for (k = 0; k < n; ++k) {
                const float *xr = x + (int64_t)k * inner;
                float *yr = y + (int64_t)k * inner;
                for (i = 0; i < inner; ++i) {
                    const float e = expf(xr[i] - mx[i]);
                    yr[i] = e;
                    sum[i] += e;
                }
            }
            for (i = 0; i < inner; ++i) sum[i] = 1.0f / sum[i];
            for (k = 0; k < n; ++k) {
                float *yr = y + (int64_t)k * inner;
                for (i = 0; i < inner; ++i) yr[i] *= sum[i];
            }
        }
    }
}

void aotc_log_softmax_f32(const aotc_softmax_params *p, const float *x, float *y, float *scratch) {
    const int32_t n = p->n, inner = p->inner;
    const int64_t block = (int64_t)n * inner;
    int32_t o, k, i;
    for (o = 0; o < p->outer; ++o, x += block, y += block) {
        if (inner == 1) {
            const float m = row_max(x, n);
            float sum = 0.0f, log_sum;
            for (i = 0; i < n; ++i) sum += expf(x[i] - m);
            log_sum = logf(sum);
            for (i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
        } else {
            float *mx = scratch, *log_sum = scratch + inner;
            column_max(x, n, inner, mx);
            for (i = 0; i < inner; ++i) log_sum[i] = 0.0f;
            for (k = 0; k < n; ++k) {
                const float *xr = x + (int64_t)k * inner;
                for (i = 0; i < inner; ++i) log_sum[i] += expf(xr[i] - mx[i]);
            }
            for (i = 0; i < inner; ++i) log_sum[i] = logf(log_sum[i]);
            for (k = 0; k < n; ++k) {
                const float *xr = x + (int64_t)k * inner;
                float *yr = y + (int64_t)k * inner;
                for (i = 0; i < inner; ++i) yr[i] = (xr[i] - mx[i]) - log_sum[i];
            }
        }
    }
}
