/* Reference kernels of the norm family (declared in kernels_ref.h): each op's ONNX definition, a
 * channel, row or softmax line at a time, its statistics in double (the mean, then the biased
 * variance of x - mean: two passes, no shift, nothing to cancel). */
#include "kernels_ref.h"

#include <math.h>

void aotc_batchnorm_ref_f32(int32_t batch, int32_t channels, int32_t inner, const float *x, const float *scale,
                            const float *shift, float *y) {
    int32_t b, c, i;
    for (b = 0; b < batch; ++b) {
        for (c = 0; c < channels; ++c) {
            for (i = 0; i < inner; ++i) {
                const ptrdiff_t at = ((ptrdiff_t)b * channels + c) * inner + i;
                y[at] = (float)((double)x[at] * scale[c] + shift[c]);
            }
        }
    }
}

void aotc_batchnorm_prepare_ref_f32(const aotc_batchnorm_prepare_params *p, const float *gamma, const float *beta,
                                    const float *mean, const float *var, float *scale, float *shift) {
    int32_t c;
    for (c = 0; c < p->channels; ++c) { /* gamma (x - mean) / sqrt(var + epsilon) + beta = x scale + shift */
        const double s = (double)gamma[c] / sqrt((double)var[c] + (double)p->epsilon);
        scale[c] = (float)s;
        shift[c] = (float)((double)beta[c] - (double)mean[c] * s);
    }
}

/* Mean and biased variance of n values, in double. */
static void moments(const float *x, int32_t n, double *mean, double *var) {
    double s = 0.0, q = 0.0;
    int32_t i;
    for (i = 0; i < n; ++i) s += x[i];
    *mean = s / n;
    for (i = 0; i < n; ++i) q += (x[i] - *mean) * (x[i] - *mean);
    *var = q / n;
}

void aotc_instance_norm_ref_f32(const aotc_instance_norm_params *p, const float *x, const float *scale,
                                const float *bias, float *y) {
    const int32_t n = p->spatial;
    int32_t b, c, i;
    for (b = 0; b < p->batch; ++b) {
        for (c = 0; c < p->channels; ++c) {
            const ptrdiff_t at = ((ptrdiff_t)b * p->channels + c) * n;
            double mean, var;
            moments(x + at, n, &mean, &var);
            for (i = 0; i < n; ++i) {
                y[at + i] = (float)(scale[c] * (x[at + i] - mean) / sqrt(var + p->epsilon) + bias[c]);
            }
        }
    }
}

void aotc_layer_norm_ref_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, const float *bias,
                             float *y, float *mean, float *inv_std_dev) {
    int32_t r, i;
    for (r = 0; r < p->rows; ++r, x += p->n, y += p->n) {
        double m, var, a;
        moments(x, p->n, &m, &var);
        a = 1.0 / sqrt(var + p->epsilon);
        for (i = 0; i < p->n; ++i) y[i] = (float)((x[i] - m) * a * scale[i] + (bias != NULL ? bias[i] : 0.0));
        if (mean != NULL) mean[r] = (float)m;
        if (inv_std_dev != NULL) inv_std_dev[r] = (float)a;
    }
}

void aotc_layer_norm_f64stats_ref_f32(const aotc_layer_norm_params *p, const float *x, const float *scale,
                                      const float *bias, float *y, double *mean, double *inv_std_dev) {
    int32_t r, i;
    for (r = 0; r < p->rows; ++r, x += p->n, y += p->n) {
        double m, var, a;
        moments(x, p->n, &m, &var);
        a = 1.0 / sqrt(var + p->epsilon);
        for (i = 0; i < p->n; ++i) { /* the function body: Cast(normalised, float), then Mul, Add in float */
            const float v = (float)((x[i] - m) * a) * scale[i];
            y[i] = bias != NULL ? v + bias[i] : v;
        }
        if (mean != NULL) mean[r] = m;
        if (inv_std_dev != NULL) inv_std_dev[r] = a;
    }
}

/* 1 / sqrt(mean(x^2) + epsilon) of a row, in double. */
static double inv_rms(const float *x, int32_t n, float epsilon) {
    double q = 0.0;
    int32_t i;
    for (i = 0; i < n; ++i) q += (double)x[i] * x[i];
    return 1.0 / sqrt(q / n + epsilon);
}

void aotc_rms_norm_ref_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, float *y) {
    int32_t r, i;
    for (r = 0; r < p->rows; ++r, x += p->n, y += p->n) {
        const double a = inv_rms(x, p->n, p->epsilon);
        for (i = 0; i < p->n; ++i) y[i] = (float)(x[i] * a * scale[i]);
    }
}

void aotc_rms_norm_f64stats_ref_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, float *y) {
    int32_t r, i;
    for (r = 0; r < p->rows; ++r, x += p->n, y += p->n) {
        const double a = inv_rms(x, p->n, p->epsilon);
        for (i = 0; i < p->n; ++i) y[i] = (float)(x[i] * a) * scale[i];
    }
}

void aotc_lrn_ref_f32(const aotc_lrn_params *p, const float *x, float *y) {
    int32_t b, c, k, i;
    for (b = 0; b < p->batch; ++b) {
        for (c = 0; c < p->channels; ++c) {
            for (i = 0; i < p->spatial; ++i) {
                const ptrdiff_t at = ((ptrdiff_t)b * p->channels + c) * p->spatial + i;
                double sq = 0.0;
                for (k = c - p->before; k <= c + p->after; ++k) { /* the window, clipped to the channels */
                    if (k < 0 || k >= p->channels) continue;
                    sq += (double)x[at + (ptrdiff_t)(k - c) * p->spatial] * x[at + (ptrdiff_t)(k - c) * p->spatial];
                }
                y[at] = (float)(x[at] / pow(p->bias + (double)p->alpha_over_size * sq, p->beta));
            }
        }
    }
}

/* Softmax (log_softmax 0) or LogSoftmax (1) along the middle dim of [outer, n, inner], in double. */
static void softmax_ref(const aotc_softmax_params *p, const float *x, float *y, int log_softmax) {
    int32_t o, k, i;
    for (o = 0; o < p->outer; ++o) {
        for (i = 0; i < p->inner; ++i) {
            const ptrdiff_t base = (ptrdiff_t)o * p->n * p->inner + i;
            double m = -INFINITY, sum = 0.0;
            for (k = 0; k < p->n; ++k) m = x[base + (ptrdiff_t)k * p->inner] > m ? x[base + (ptrdiff_t)k * p->inner] : m;
            for (k = 0; k < p->n; ++k) sum += exp(x[base + (ptrdiff_t)k * p->inner] - m);
            for (k = 0; k < p->n; ++k) {
                const double d = x[base + (ptrdiff_t)k * p->inner] - m;
                y[base + (ptrdiff_t)k * p->inner] = (float)(log_softmax ? d - log(sum) : exp(d) / sum);
            }
        }
    }
}

void aotc_softmax_ref_f32(const aotc_softmax_params *p, const float *x, float *y) { softmax_ref(p, x, y, 0); }

void aotc_log_softmax_ref_f32(const aotc_softmax_params *p, const float *x, float *y) { softmax_ref(p, x, y, 1); }
