/* ONNX Softmax and LogSoftmax on float64: norm.c's float32 kernels over doubles, with libm's exp and log
 * (fast_math.h's exponential is float32-accurate). The same [outer, n, inner] view and scratch layout
 * (2 * inner doubles when inner > 1); x and y may be the same buffer. */
#include "aotc_norm.h"

#include <math.h>

/* Column-wise max of an [n, inner] block into mx[inner] (inner = 1: the row's max). */
static void column_max_f64(const double *x, int32_t n, int32_t inner, double *AOTC_RESTRICT mx) {
    int32_t k, i;
    for (i = 0; i < inner; ++i) mx[i] = x[i];
    for (k = 1; k < n; ++k) {
        const double *row = x + (int64_t)k * inner;
        for (i = 0; i < inner; ++i) mx[i] = row[i] > mx[i] ? row[i] : mx[i];
    }
}

/* Per column of an [n, inner] block: its max into mx and the sum of e^(x - max) into sum; with `store`,
 * each e^(x - max) into y (which may be x). */
static void column_exp_sums(const double *x, double *y, int32_t n, int32_t inner, int store, double *AOTC_RESTRICT mx,
                            double *AOTC_RESTRICT sum) {
    int32_t k, i;
    column_max_f64(x, n, inner, mx);
    for (i = 0; i < inner; ++i) sum[i] = 0.0;
    for (k = 0; k < n; ++k) {
        const double *xr = x + (int64_t)k * inner;
        double *yr = y + (int64_t)k * inner;
        for (i = 0; i < inner; ++i) {
            const double e = exp(xr[i] - mx[i]);
            if (store) yr[i] = e;
            sum[i] += e;
        }
    }
}

void aotc_softmax_f64(const aotc_softmax_params *p, const double *x, double *y, double *scratch) {
    const int32_t n = p->n, inner = p->inner;
    const int64_t block = (int64_t)n * inner;
    double one[2]; /* inner = 1: the max and sum need no scratch */
    double *mx = inner > 1 ? scratch : one, *sum = inner > 1 ? scratch + inner : one + 1;
    int32_t o, k, i;
    for (o = 0; o < p->outer; ++o, x += block, y += block) {
        column_exp_sums(x, y, n, inner, 1, mx, sum);
        for (i = 0; i < inner; ++i) sum[i] = 1.0 / sum[i];
        for (k = 0; k < n; ++k) {
            double *yr = y + (int64_t)k * inner;
            for (i = 0; i < inner; ++i) yr[i] *= sum[i];
        }
    }
}

void aotc_log_softmax_f64(const aotc_softmax_params *p, const double *x, double *y, double *scratch) {
    const int32_t n = p->n, inner = p->inner;
    const int64_t block = (int64_t)n * inner;
    double one[2];
    double *mx = inner > 1 ? scratch : one, *log_sum = inner > 1 ? scratch + inner : one + 1;
    int32_t o, k, i;
    for (o = 0; o < p->outer; ++o, x += block, y += block) {
        column_exp_sums(x, y, n, inner, 0, mx, log_sum);
        for (i = 0; i < inner; ++i) log_sum[i] = log(log_sum[i]);
        for (k = 0; k < n; ++k) {
            const double *xr = x + (int64_t)k * inner;
            double *yr = y + (int64_t)k * inner;
            for (i = 0; i < inner; ++i) yr[i] = (xr[i] - mx[i]) - log_sum[i];
        }
    }
}
