/* ONNX normalisation ops, float32: BatchNormalization (inference),
 * InstanceNormalization, LayerNormalization, RMSNormalization, LRN, Softmax, LogSoftmax. Reference kernels:
 * portable C99, no allocation, no globals; the inner loops run along
 * contiguous memory so the compiler can vectorise them. Sums are kept in
 * float (MCUs with a single-precision FPU emulate double in software). One kernel per
 * op, already the plain loop: it is the family's reference (no norm_ref.c; see kernels_ref.h). */
#include "aotc_norm.h"
#include "fast_math.h"

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

/* ---- LayerNormalization, RMSNormalization ------------------------------------------ */

/* a + b into the compensated float sum (*sum, *carry): Neumaier's variant of Kahan's. */
static void add_compensated(float *sum, float *carry, float v) {
    const float t = *sum + v;
    if (fabsf(*sum) >= fabsf(v)) {
        *carry += (*sum - t) + v;
    } else {
        *carry += (v - t) + *sum;
    }
    *sum = t;
}

/* AVX-512F (without AOTC_NO_INTRINSICS): the row kernels' two passes 32 floats at a time, the tail under a
 * mask. Why (issue 64): gcc made ymm loops of the AOTC_NORM_LANES lanes, and the row's end scalar; ViT-tiny's
 * LayerNormalizations (197 rows of 192) took 17.7 us each against onnxruntime's 17, 0.47 ns a float. */
#if defined(__AVX512F__) && !defined(AOTC_NO_INTRINSICS)
#define NORM_X86 1
#include <immintrin.h>

/* the first `n` of 16 lanes (n <= 16) */
static __mmask16 norm_mask(int32_t n) { return (__mmask16)((1u << n) - 1u); }

/* The lane sums of one chunk of shifted_sums_f32: of d = x - pivot and of d * d, in two vectors each. */
static void chunk_sums_avx512(const float *x, int32_t len, float pivot, float *cs, float *cq) {
    const __m512 pv = _mm512_set1_ps(pivot);
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), q0 = _mm512_setzero_ps(), q1 = _mm512_setzero_ps();
    int32_t i = 0;
    for (; i + 32 <= len; i += 32) {
        const __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(x + i), pv), d1 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), pv);
        s0 = _mm512_add_ps(s0, d0), s1 = _mm512_add_ps(s1, d1);
        q0 = _mm512_fmadd_ps(d0, d0, q0), q1 = _mm512_fmadd_ps(d1, d1, q1);
    }
    for (; i < len; i += 16) {
        const __mmask16 m = norm_mask(len - i < 16 ? len - i : 16);
        const __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), pv);
        s0 = _mm512_add_ps(s0, d);
        q0 = _mm512_fmadd_ps(d, d, q0);
    }
    *cs = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    *cq = _mm512_reduce_add_ps(_mm512_add_ps(q0, q1));
}

/* y = (x - mean) * a * scale + bias over one row (bias may be NULL), 16 at a time. */
static void normalize_row_avx512(const float *x, int32_t n, float mean, float a, const float *scale,
                                 const float *bias, float *y) {
    const __m512 vm = _mm512_set1_ps(mean), va = _mm512_set1_ps(a);
    int32_t i;
    for (i = 0; i < n; i += 16) {
        const __mmask16 m = norm_mask(n - i < 16 ? n - i : 16);
        const __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vm), va);
        const __m512 b = bias ? _mm512_maskz_loadu_ps(m, bias + i) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, scale + i), b));
    }
}
#else
#define NORM_X86 0
#endif

/* Sums of d = x[i] - pivot and of d * d over one row, in float (see aotc_norm.h). */
static void shifted_sums_f32(const float *x, int32_t n, float pivot, float *sum_d, float *sum_dd) {
    float s = 0.0f, sc = 0.0f, q = 0.0f, qc = 0.0f;
    int32_t start, i, l;
    for (start = 0; start < n; start += AOTC_NORM_CHUNK) {
        const int32_t len = n - start < AOTC_NORM_CHUNK ? n - start : AOTC_NORM_CHUNK;
        const float *xc = x + start;
        float ls[AOTC_NORM_LANES], lq[AOTC_NORM_LANES], cs = 0.0f, cq = 0.0f;
#if NORM_X86
        chunk_sums_avx512(xc, len, pivot, &cs, &cq);
        add_compensated(&s, &sc, cs);
        add_compensated(&q, &qc, cq);
        continue;
#endif
        for (l = 0; l < AOTC_NORM_LANES; ++l) ls[l] = lq[l] = 0.0f;
        for (i = 0; i + AOTC_NORM_LANES <= len; i += AOTC_NORM_LANES) {
            for (l = 0; l < AOTC_NORM_LANES; ++l) {
                const float d = xc[i + l] - pivot;
                ls[l] += d;
                lq[l] += d * d;
            }
        }
        for (l = 0; i < len; ++i, ++l) {
            const float d = xc[i] - pivot;
            ls[l] += d;
            lq[l] += d * d;
        }
        for (l = 0; l < AOTC_NORM_LANES; ++l) {
            cs += ls[l];
            cq += lq[l];
        }
        add_compensated(&s, &sc, cs);
        add_compensated(&q, &qc, cq);
    }
    *sum_d = s + sc;
    *sum_dd = q + qc;
}

/* The same sums in double (stash_type double). */
static void shifted_sums_f64(const float *x, int32_t n, double pivot, double *sum_d, double *sum_dd) {
    double ls[AOTC_NORM_LANES], lq[AOTC_NORM_LANES], s = 0.0, q = 0.0;
    int32_t i, l;
    for (l = 0; l < AOTC_NORM_LANES; ++l) ls[l] = lq[l] = 0.0;
    for (i = 0; i + AOTC_NORM_LANES <= n; i += AOTC_NORM_LANES) {
        for (l = 0; l < AOTC_NORM_LANES; ++l) {
            const double d = (double)x[i + l] - pivot;
            ls[l] += d;
            lq[l] += d * d;
        }
    }
    for (l = 0; i < n; ++i, ++l) {
        const double d = (double)x[i] - pivot;
        ls[l] += d;
        lq[l] += d * d;
    }
    for (l = 0; l < AOTC_NORM_LANES; ++l) {
        s += ls[l];
        q += lq[l];
    }
    *sum_d = s;
    *sum_dd = q;
}

/* The Mean output, when it is read: summed in double, since a mean near zero beside the spread
 * has a float sum's error (a few ulp of the spread) as a large relative error of its own. Y does
 * not need it (that error, relative to the spread, is as small as float rounding). */
static float row_mean_f64(const float *x, int32_t n) {
    double s = 0.0;
    int32_t i;
    for (i = 0; i < n; ++i) s += (double)x[i];
    return (float)(s / (double)n);
}

/* y = (x - mean) * a * scale + bias over one row (bias may be NULL). */
static void normalize_row(const float *x, int32_t n, float mean, float a, const float *scale, const float *bias,
                          float *y) {
    int32_t i;
#if NORM_X86
    normalize_row_avx512(x, n, mean, a, scale, bias, y);
    return;
#endif
    if (bias) {
        for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * a * scale[i] + bias[i];
    } else {
        for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * a * scale[i];
    }
}

void aotc_layer_norm_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, const float *bias,
                         float *y, float *mean, float *inv_std_dev) {
    const int32_t n = p->n;
    int32_t r;
    for (r = 0; r < p->rows; ++r, x += n, y += n) {
        const float pivot = x[0];
        float s, q, m, var, a;
        shifted_sums_f32(x, n, pivot, &s, &q);
        m = s / (float)n;
        var = q / (float)n - m * m; /* of x - pivot, which has the variance of x */
        var = var > 0.0f ? var : 0.0f;
        a = 1.0f / sqrtf(var + p->epsilon);
        m += pivot;
        if (mean) mean[r] = row_mean_f64(x, n);
        if (inv_std_dev) inv_std_dev[r] = a;
        normalize_row(x, n, m, a, scale, bias, y);
    }
}

void aotc_layer_norm_f64stats_f32(const aotc_layer_norm_params *p, const float *x, const float *scale,
                                  const float *bias, float *y, double *mean, double *inv_std_dev) {
    const int32_t n = p->n;
    int32_t r, i;
    for (r = 0; r < p->rows; ++r, x += n, y += n) {
        const double pivot = (double)x[0];
        double s, q, m, var, a;
        shifted_sums_f64(x, n, pivot, &s, &q);
        m = s / (double)n;
        var = q / (double)n - m * m;
        var = var > 0.0 ? var : 0.0;
        a = 1.0 / sqrt(var + (double)p->epsilon);
        m += pivot;
        if (mean) mean[r] = m;
        if (inv_std_dev) inv_std_dev[r] = a;
        for (i = 0; i < n; ++i) { /* normalised in double, cast to float, then scaled: the spec's function */
            const float v = (float)(((double)x[i] - m) * a);
            y[i] = bias ? v * scale[i] + bias[i] : v * scale[i];
        }
    }
}

void aotc_rms_norm_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, float *y) {
    const int32_t n = p->n;
    int32_t r;
    for (r = 0; r < p->rows; ++r, x += n, y += n) {
        float s, q;
        shifted_sums_f32(x, n, 0.0f, &s, &q); /* no shift: the mean of squares, not a variance */
        normalize_row(x, n, 0.0f, 1.0f / sqrtf(q / (float)n + p->epsilon), scale, NULL, y);
    }
}

void aotc_rms_norm_f64stats_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, float *y) {
    const int32_t n = p->n;
    int32_t r, i;
    for (r = 0; r < p->rows; ++r, x += n, y += n) {
        double s, q, a;
        shifted_sums_f64(x, n, 0.0, &s, &q);
        a = 1.0 / sqrt(q / (double)n + (double)p->epsilon);
        for (i = 0; i < n; ++i) y[i] = (float)((double)x[i] * a) * scale[i];
    }
}

/* len (<= AOTC_NORM_INNER_BLOCK) neighbouring positions of aotc_layer_norm_inner_f32: x and y at the
 * first one's first element, n elements `inner` apart each. Every loop runs along the positions, so it
 * vectorises; with len a constant (the full blocks) the compiler keeps the sums in registers. */
static inline void norm_inner_block(const float *x, float *y, int32_t n, ptrdiff_t inner,
                                    int32_t len, float epsilon, const float *scale, const float *bias) {
    float m[AOTC_NORM_INNER_BLOCK], a[AOTC_NORM_INNER_BLOCK];
    const float inv_n = 1.0f / (float)n;
    int32_t c, j;
    for (j = 0; j < len; ++j) m[j] = 0.0f;
    for (c = 0; c < n; ++c) { /* sums of x - x[0] (the shift keeps float precision, as in the row kernel) */
        const float *xc = x + c * inner;
        for (j = 0; j < len; ++j) m[j] += xc[j] - x[j];
    }
    for (j = 0; j < len; ++j) {
        m[j] = x[j] + m[j] * inv_n;
        a[j] = 0.0f;
    }
    for (c = 0; c < n; ++c) { /* the variance from x - mean: nothing cancels */
        const float *xc = x + c * inner;
        for (j = 0; j < len; ++j) a[j] += (xc[j] - m[j]) * (xc[j] - m[j]);
    }
    for (j = 0; j < len; ++j) a[j] = 1.0f / sqrtf(a[j] * inv_n + epsilon);
    for (c = 0; c < n; ++c) {
        const float *xc = x + c * inner;
        float *yc = y + c * inner;
        const float s = scale[c], b = bias ? bias[c] : 0.0f;
        for (j = 0; j < len; ++j) yc[j] = (xc[j] - m[j]) * a[j] * s + b;
    }
}

void aotc_layer_norm_inner_f32(const aotc_layer_norm_inner_params *p, const float *x, const float *scale,
                               const float *bias, float *y) {
    const ptrdiff_t inner = p->inner, block = (ptrdiff_t)p->n * inner;
    int32_t r;
    for (r = 0; r < p->rows; ++r, x += block, y += block) {
        ptrdiff_t i = 0;
        for (; i + AOTC_NORM_INNER_BLOCK <= inner; i += AOTC_NORM_INNER_BLOCK)
            norm_inner_block(x + i, y + i, p->n, inner, AOTC_NORM_INNER_BLOCK, p->epsilon, scale, bias);
        if (i < inner) norm_inner_block(x + i, y + i, p->n, inner, (int32_t)(inner - i), p->epsilon, scale, bias);
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
/* e^(x - max) by fast_math.h (within 1 ulp, and 0 for -inf), so the rows vectorise. */

/* Max of one contiguous row (16 at a time on AVX-512F: fast_math.h). */
static float row_max(const float *x, int32_t n) {
#if AOTC_SOFTMAX_X86
    return aotc_max_avx512(x, (size_t)n);
#elif AOTC_SOFTMAX_AVX2
    return aotc_max_avx2(x, (size_t)n);
#else
    float m = x[0];
    int32_t i;
    for (i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
#endif
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
#if AOTC_SOFTMAX_X86 || AOTC_SOFTMAX_AVX2
    if (inner == 1) { /* the rows two at a time (fast_math.h) */
#if AOTC_SOFTMAX_X86
        aotc_softmax_rows_avx512(x, y, (size_t)n, (size_t)p->outer);
#else
        aotc_softmax_rows_avx2(x, y, (size_t)n, (size_t)p->outer);
#endif
        return;
    }
#endif
    for (o = 0; o < p->outer; ++o, x += block, y += block) {
        if (inner == 1) {
            const float m = row_max(x, n);
            float part[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, sum, inv;
            for (i = 0; i < n; ++i) y[i] = aotc_exp_flush(x[i] - m); /* y may be x: same index */
            for (i = 0; i + 8 <= n; i += 8) { /* eight partial sums: a vector, not a serial chain */
                for (k = 0; k < 8; ++k) part[k] += y[i + k];
            }
            for (; i < n; ++i) part[0] += y[i];
            sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
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
                    const float e = aotc_exp_flush(xr[i] - mx[i]);
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
            for (i = 0; i < n; ++i) sum += aotc_exp_flush(x[i] - m);
            log_sum = logf(sum);
            for (i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
        } else {
            float *mx = scratch, *log_sum = scratch + inner;
            column_max(x, n, inner, mx);
            for (i = 0; i < inner; ++i) log_sum[i] = 0.0f;
            for (k = 0; k < n; ++k) {
                const float *xr = x + (int64_t)k * inner;
                for (i = 0; i < inner; ++i) log_sum[i] += aotc_exp_flush(xr[i] - mx[i]);
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
