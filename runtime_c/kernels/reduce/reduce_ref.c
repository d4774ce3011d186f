/* Reference kernels of the reduce family (declared in kernels_ref.h): ONNX Reduce* one output at a
 * time, the fold of every input element whose kept indices are the output's, in double (float64
 * too: in input order) whatever the kernel's lanes and order. Simple on purpose: reduce.c's one
 * pass in memory order is checked against these. */
#include "kernels_ref.h"

#include <math.h>

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUM_SQUARE, R_LOG_SUM, R_LOG_SUM_EXP };

/* The reduced elements of one output: its x offset (the kept indices' part) and the reduced dims
 * (y_strides 0) stepped through, last fastest. ONNX: max and min propagate NaN. */
static double fold(const aotc_reduce_params *p, const float *xf, const double *xd, const int64_t *xs, int64_t base,
                   int64_t count, int op, double shift) {
    double acc = op == R_PROD ? 1.0 : op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY : 0.0;
    int64_t g, rest, off;
    int32_t k;
    for (g = 0; g < count; ++g) {
        double v;
        for (rest = g, off = base, k = p->rank - 1; k >= 0; --k) {
            if (p->y_strides[k] != 0) continue;
            off += rest % p->shape[k] * xs[k];
            rest /= p->shape[k];
        }
        v = xf != NULL ? (double)xf[off] : xd[off];
        switch (op) {
        case R_MAX: acc = v != v || v > acc ? v : acc; break;
        case R_MIN: acc = v != v || v < acc ? v : acc; break;
        case R_PROD: acc *= v; break;
        case R_L1: acc += fabs(v); break;
        case R_L2: case R_SUM_SQUARE: acc += v * v; break;
        case R_LOG_SUM_EXP: acc += exp(v - shift); break;
        default: acc += v; break;
        }
        if (acc != acc) return acc; /* NaN stays NaN (max, min: nothing may replace it) */
    }
    return acc;
}

static void reduce_ref(const aotc_reduce_params *p, const float *xf, const double *xd, float *yf, double *yd, int op) {
    int64_t xs[AOTC_MAX_RANK], outputs = 1, count = 1, j, rest, base, yo;
    int32_t k;
    for (k = p->rank - 1; k >= 0; --k) {
        xs[k] = k == p->rank - 1 ? 1 : xs[k + 1] * p->shape[k + 1];
        if (p->y_strides[k] != 0) outputs *= p->shape[k];
        else count *= p->shape[k];
    }
    for (j = 0; j < outputs; ++j) {
        double v, m = 0.0;
        for (rest = j, base = 0, yo = 0, k = p->rank - 1; k >= 0; --k) { /* the output's kept indices */
            if (p->y_strides[k] == 0) continue;
            base += rest % p->shape[k] * xs[k];
            yo += rest % p->shape[k] * p->y_strides[k];
            rest /= p->shape[k];
        }
        if (op == R_LOG_SUM_EXP) { /* m + log(sum e^(x - m)), m the max: no overflow */
            m = fold(p, xf, xd, xs, base, count, R_MAX, 0.0);
            v = isinf(m) || m != m ? m : m + log(fold(p, xf, xd, xs, base, count, op, m));
        } else {
            v = fold(p, xf, xd, xs, base, count, op, 0.0);
            if (op == R_MEAN) v /= (double)count;
            if (op == R_L2) v = sqrt(v);
            if (op == R_LOG_SUM) v = log(v);
        }
        if (yf != NULL) yf[yo] = (float)v;
        else yd[yo] = v;
    }
}

#define REDUCE_REF(NAME, OP)                                                                          \
    void aotc_reduce_##NAME##_ref_f32(const aotc_reduce_params *p, const float *x, float *y) {       \
        reduce_ref(p, x, NULL, y, NULL, OP);                                                          \
    }                                                                                                 \
    void aotc_reduce_##NAME##_ref_f64(const aotc_reduce_params *p, const double *x, double *y) {     \
        reduce_ref(p, NULL, x, NULL, y, OP);                                                          \
    }
REDUCE_REF(sum, R_SUM)
REDUCE_REF(mean, R_MEAN)
REDUCE_REF(max, R_MAX)
REDUCE_REF(min, R_MIN)
REDUCE_REF(prod, R_PROD)
REDUCE_REF(l1, R_L1)
REDUCE_REF(l2, R_L2)
REDUCE_REF(sum_square, R_SUM_SQUARE)
REDUCE_REF(log_sum, R_LOG_SUM)
REDUCE_REF(log_sum_exp, R_LOG_SUM_EXP)

/* the determinant of the m x m minor of a (row stride n) on rows row.. and the columns in cols[0..m) */
static double det_minor(const double *a, int32_t n, int32_t row, const int32_t *cols, int32_t m) {
    int32_t rest[8], c, k, j;
    double sum = 0.0, sign = 1.0;
    if (m == 1) return a[row * n + cols[0]];
    for (c = 0; c < m; ++c, sign = -sign) {
        for (k = 0, j = 0; j < m; ++j)
            if (j != c) rest[k++] = cols[j];
        sum += sign * a[row * n + cols[c]] * det_minor(a, n, row + 1, rest, m - 1);
    }
    return sum;
}

void aotc_det_ref_f32(int32_t batch, int32_t n, const float *x, float *y) {
    double a[64];
    int32_t cols[8], b, i;
    for (b = 0; b < batch; ++b) {
        for (i = 0; i < n * n; ++i) a[i] = x[(int64_t)b * n * n + i];
        for (i = 0; i < n; ++i) cols[i] = i;
        y[b] = (float)det_minor(a, n, 0, cols, n);
    }
}

void aotc_swish_mean_ref_f32(int64_t planes, int32_t hw, const float *x, float *y, float *mean, float alpha) {
    int64_t c;
    int32_t i;
    for (c = 0; c < planes; ++c) {
        double s = 0.0;
        for (i = 0; i < hw; ++i) {
            const float v = x[c * hw + i];
            y[c * hw + i] = (float)(v / (1.0 + exp(-(double)(alpha * v))));
            s += y[c * hw + i];
        }
        mean[c] = (float)(s / hw);
    }
}
