/* ONNX Reduce* ops, float32 (and float64, the same passes in double). Reference kernels: portable C99, no allocation, no
 * globals. Each op is one pass over x in memory order (plus a short pass over
 * y to finish), so reads are always contiguous whichever axes are reduced. One kernel
 * per op, already the plain loop: it is the family's reference (no reduce_ref.c; see kernels_ref.h). */
#include "aotc_reduce.h"

#include <math.h>

#define AOTC_ADD(a, b) ((a) + (b))
#define AOTC_MUL(a, b) ((a) * (b))
/* NaN in either operand propagates, as in ONNX. */
#define AOTC_MAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define AOTC_MIN(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))

/* Independent partial results for a contiguous reduced run: more accurate than
 * one running sum on long rows, and vectorisable without reassociating. */
#define AOTC_LANES 8

/* Defines `static void NAME(p, x, y, m)`: y[j] = INIT, then every x folds
 * into its output: y[o] = FOLD(y[o], MAP) with v the input value and c = m[o]
 * (a per-output value, read only when USE_M is 1). The innermost merged dim is
 * either reduced (a contiguous run folds into one accumulator, then into y) or
 * kept (x[i] folds into y[yo + i]); outer dims advance an odometer. */
#define AOTC_REDUCE_PASS(NAME, T, INIT, MAP, FOLD, USE_M)                                \
    static void NAME(const aotc_reduce_params *p, const T *x, T *y,                     \
                     const T *m) {                                                      \
        const int32_t r = p->rank, n = p->shape[r - 1];                                  \
        int32_t idx[AOTC_MAX_RANK] = {0};                                               \
        int64_t outer = 1, o, j, yo = 0;                                                \
        int32_t i, k;                                                                   \
        for (k = 0; k < r - 1; ++k) outer *= p->shape[k];                               \
        for (j = 0; j < p->y_size; ++j) y[j] = (INIT);                                  \
        for (o = 0; o < outer; ++o) {                                                   \
            if (p->y_strides[r - 1] == 0) { /* reduced run: AOTC_LANES partial results */ \
                const T c = USE_M ? m[yo] : (T)0;                                      \
                T acc[AOTC_LANES];                                                      \
                int32_t l;                                                              \
                (void)c;                                                                \
                for (l = 0; l < AOTC_LANES; ++l) acc[l] = (INIT);                       \
                for (i = 0; i + AOTC_LANES <= n; i += AOTC_LANES) {                     \
                    for (l = 0; l < AOTC_LANES; ++l) {                                  \
                        const T v = x[i + l];                                           \
                        acc[l] = FOLD(acc[l], (MAP));                                   \
                    }                                                                   \
                }                                                                       \
                for (; i < n; ++i) { const T v = x[i]; acc[0] = FOLD(acc[0], (MAP)); } \
                for (l = AOTC_LANES / 2; l > 0; l /= 2) { /* pairwise */                \
                    int32_t q;                                                          \
                    for (q = 0; q < l; ++q) acc[q] = FOLD(acc[q], acc[q + l]);          \
                }                                                                       \
                y[yo] = FOLD(y[yo], acc[0]);                                            \
            } else { /* kept run: contiguous in y too */                                \
                for (i = 0; i < n; ++i) {                                               \
                    const T c = USE_M ? m[yo + i] : (T)0, v = x[i];                     \
                    (void)c;                                                            \
                    y[yo + i] = FOLD(y[yo + i], (MAP));                                 \
                }                                                                       \
            }                                                                           \
            x += n;                                                                     \
            for (k = r - 2; k >= 0; --k) { /* next outer index */                       \
                yo += p->y_strides[k];                                                  \
                if (++idx[k] < p->shape[k]) break;                                      \
                yo -= (int64_t)p->y_strides[k] * p->shape[k];                           \
                idx[k] = 0;                                                             \
            }                                                                           \
        }                                                                               \
    }

AOTC_REDUCE_PASS(pass_sum, float, 0.0f, v, AOTC_ADD, 0)

#if defined(__AVX512F__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>

/* One row's sum as pass_sum makes it (its AOTC_LANES partial sums the 8 lanes of acc, the tail into the first, the
 * pairwise fold), plus the output's start y0 */
static inline float row_sum8(__m256 acc, const float *x, int32_t i, int32_t n, float y0) {
    float a0 = _mm_cvtss_f32(_mm256_castps256_ps128(acc));
    __m128 h;
    for (; i < n; ++i) a0 += x[i];
    acc = _mm256_blend_ps(acc, _mm256_set1_ps(a0), 1);
    h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return y0 + (_mm_cvtss_f32(h) + _mm_cvtss_f32(_mm_shuffle_ps(h, h, 1)));
}

/* pass_sum where each row of x (the last axis) sums into its own output in turn (a [rows, n] reduce over its last
 * axis, as a global average pool's ReduceMean over H and W): four rows at a time, their partial sums in vectors of 8,
 * so that their chains of adds overlap (pass_sum's odometer did one row at a time: a QDQ MobileNetV2's ReduceMean of
 * 1280 rows of 49, 10.5 us; 2.4 us so). The same sums, in the same order. 0 (nothing done) for other shapes. (Out of
 * line: tests/kernels_c reads that a build for AVX-512 has it.) */
static __attribute__((noinline)) int pass_sum_rows(const aotc_reduce_params *p, const float *x, float *y) {
    const int32_t r = p->rank, n = p->shape[r - 1], in = n / AOTC_LANES * AOTC_LANES;
    int64_t rows = 1, o;
    int32_t k, i;
    if (AOTC_LANES != 8 || r < 2 || n < AOTC_LANES || p->y_strides[r - 1] != 0) return 0;
    for (k = 0; k < r - 1; ++k) rows *= p->shape[k];
    if (p->y_size != rows || p->y_strides[r - 2] != 1) return 0;
    for (k = 0; k < r - 2; ++k) {
        if (p->shape[k] != 1) return 0;
    }
    for (o = 0; o + 4 <= rows; o += 4) {
        const float *x0 = x + o * n, *x1 = x0 + n, *x2 = x1 + n, *x3 = x2 + n;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (i = 0; i < in; i += AOTC_LANES) {
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x0 + i)), a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x1 + i));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x2 + i)), a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x3 + i));
        }
        y[o] = row_sum8(a0, x0, in, n, 0.0f), y[o + 1] = row_sum8(a1, x1, in, n, 0.0f);
        y[o + 2] = row_sum8(a2, x2, in, n, 0.0f), y[o + 3] = row_sum8(a3, x3, in, n, 0.0f);
    }
    for (; o < rows; ++o) {
        const float *x0 = x + o * n;
        __m256 a0 = _mm256_setzero_ps();
        for (i = 0; i < in; i += AOTC_LANES) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x0 + i));
        y[o] = row_sum8(a0, x0, in, n, 0.0f);
    }
    return 1;
}
#endif
AOTC_REDUCE_PASS(pass_abs_sum, float, 0.0f, fabsf(v), AOTC_ADD, 0)
AOTC_REDUCE_PASS(pass_square_sum, float, 0.0f, v * v, AOTC_ADD, 0)
AOTC_REDUCE_PASS(pass_exp_sum, float, 0.0f, expf(v - c), AOTC_ADD, 1)
AOTC_REDUCE_PASS(pass_prod, float, 1.0f, v, AOTC_MUL, 0)
AOTC_REDUCE_PASS(pass_max, float, -INFINITY, v, AOTC_MAX, 0)
AOTC_REDUCE_PASS(pass_min, float, INFINITY, v, AOTC_MIN, 0)

void aotc_reduce_sum_f32(const aotc_reduce_params *p, const float *x, float *y) {
    pass_sum(p, x, y, NULL);
}

void aotc_reduce_mean_f32(const aotc_reduce_params *p, const float *x, float *y) {
    const float n = (float)p->count;
    int64_t j;
#if defined(__AVX512F__) && !defined(AOTC_NO_INTRINSICS)
    if (!pass_sum_rows(p, x, y))
#endif
    pass_sum(p, x, y, NULL);
    for (j = 0; j < p->y_size; ++j) y[j] /= n;
}

void aotc_reduce_max_f32(const aotc_reduce_params *p, const float *x, float *y) {
    pass_max(p, x, y, NULL);
}

void aotc_reduce_min_f32(const aotc_reduce_params *p, const float *x, float *y) {
    pass_min(p, x, y, NULL);
}

void aotc_reduce_prod_f32(const aotc_reduce_params *p, const float *x, float *y) {
    pass_prod(p, x, y, NULL);
}

void aotc_reduce_l1_f32(const aotc_reduce_params *p, const float *x, float *y) {
    pass_abs_sum(p, x, y, NULL);
}

void aotc_reduce_l2_f32(const aotc_reduce_params *p, const float *x, float *y) {
    int64_t j;
    pass_square_sum(p, x, y, NULL);
    for (j = 0; j < p->y_size; ++j) y[j] = sqrtf(y[j]);
}

void aotc_reduce_sum_square_f32(const aotc_reduce_params *p, const float *x, float *y) {
    pass_square_sum(p, x, y, NULL);
}

void aotc_reduce_log_sum_f32(const aotc_reduce_params *p, const float *x, float *y) {
    int64_t j;
    pass_sum(p, x, y, NULL);
    for (j = 0; j < p->y_size; ++j) y[j] = logf(y[j]);
}

void aotc_reduce_log_sum_exp_f32(const aotc_reduce_params *p, const float *x, float *y, float *scratch) {
    int64_t j;
    pass_max(p, x, scratch, NULL);
    for (j = 0; j < p->y_size; ++j) { /* an infinite maximum shifts nothing: the sum is 0 or inf */
        if (isinf(scratch[j])) scratch[j] = 0.0f;
    }
    pass_exp_sum(p, x, y, scratch);
    for (j = 0; j < p->y_size; ++j) y[j] = logf(y[j]) + scratch[j];
}

/* ---- float64: the same passes in double (onnx's expanded function bodies cast to it) ---------- */
AOTC_REDUCE_PASS(pass_sum_d, double, 0.0, v, AOTC_ADD, 0)
AOTC_REDUCE_PASS(pass_abs_sum_d, double, 0.0, fabs(v), AOTC_ADD, 0)
AOTC_REDUCE_PASS(pass_square_sum_d, double, 0.0, v * v, AOTC_ADD, 0)
AOTC_REDUCE_PASS(pass_exp_sum_d, double, 0.0, exp(v - c), AOTC_ADD, 1)
AOTC_REDUCE_PASS(pass_prod_d, double, 1.0, v, AOTC_MUL, 0)
AOTC_REDUCE_PASS(pass_max_d, double, -INFINITY, v, AOTC_MAX, 0)
AOTC_REDUCE_PASS(pass_min_d, double, INFINITY, v, AOTC_MIN, 0)

void aotc_reduce_sum_f64(const aotc_reduce_params *p, const double *x, double *y) { pass_sum_d(p, x, y, NULL); }
void aotc_reduce_max_f64(const aotc_reduce_params *p, const double *x, double *y) { pass_max_d(p, x, y, NULL); }
void aotc_reduce_min_f64(const aotc_reduce_params *p, const double *x, double *y) { pass_min_d(p, x, y, NULL); }
void aotc_reduce_prod_f64(const aotc_reduce_params *p, const double *x, double *y) { pass_prod_d(p, x, y, NULL); }
void aotc_reduce_l1_f64(const aotc_reduce_params *p, const double *x, double *y) { pass_abs_sum_d(p, x, y, NULL); }
void aotc_reduce_sum_square_f64(const aotc_reduce_params *p, const double *x, double *y) {
    pass_square_sum_d(p, x, y, NULL);
}

void aotc_reduce_mean_f64(const aotc_reduce_params *p, const double *x, double *y) {
    const double n = (double)p->count;
    int64_t j;
    pass_sum_d(p, x, y, NULL);
    for (j = 0; j < p->y_size; ++j) y[j] /= n;
}

void aotc_reduce_l2_f64(const aotc_reduce_params *p, const double *x, double *y) {
    int64_t j;
    pass_square_sum_d(p, x, y, NULL);
    for (j = 0; j < p->y_size; ++j) y[j] = sqrt(y[j]);
}

void aotc_reduce_log_sum_f64(const aotc_reduce_params *p, const double *x, double *y) {
    int64_t j;
    pass_sum_d(p, x, y, NULL);
    for (j = 0; j < p->y_size; ++j) y[j] = log(y[j]);
}

void aotc_reduce_log_sum_exp_f64(const aotc_reduce_params *p, const double *x, double *y, double *scratch) {
    int64_t j;
    pass_max_d(p, x, scratch, NULL);
    for (j = 0; j < p->y_size; ++j) {
        if (isinf(scratch[j])) scratch[j] = 0.0;
    }
    pass_exp_sum_d(p, x, y, scratch);
    for (j = 0; j < p->y_size; ++j) y[j] = log(y[j]) + scratch[j];
}

/* ---- integers: ReduceMax / ReduceMin pick an element, so they are exact on any integer type (TFLite's quantized
 * REDUCE_MAX / REDUCE_MIN, whose output keeps the input's scale and zero point, are these on the integers) ---- */
#define AOTC_IMAX(a, b) ((a) > (b) ? (a) : (b))
#define AOTC_IMIN(a, b) ((a) < (b) ? (a) : (b))
AOTC_REDUCE_PASS(pass_max_i8, int8_t, INT8_MIN, v, AOTC_IMAX, 0)
AOTC_REDUCE_PASS(pass_min_i8, int8_t, INT8_MAX, v, AOTC_IMIN, 0)
AOTC_REDUCE_PASS(pass_max_u8, uint8_t, 0, v, AOTC_IMAX, 0)
AOTC_REDUCE_PASS(pass_min_u8, uint8_t, UINT8_MAX, v, AOTC_IMIN, 0)
AOTC_REDUCE_PASS(pass_max_i32, int32_t, INT32_MIN, v, AOTC_IMAX, 0)
AOTC_REDUCE_PASS(pass_min_i32, int32_t, INT32_MAX, v, AOTC_IMIN, 0)

void aotc_reduce_max_i8(const aotc_reduce_params *p, const int8_t *x, int8_t *y) { pass_max_i8(p, x, y, NULL); }
void aotc_reduce_min_i8(const aotc_reduce_params *p, const int8_t *x, int8_t *y) { pass_min_i8(p, x, y, NULL); }
void aotc_reduce_max_u8(const aotc_reduce_params *p, const uint8_t *x, uint8_t *y) { pass_max_u8(p, x, y, NULL); }
void aotc_reduce_min_u8(const aotc_reduce_params *p, const uint8_t *x, uint8_t *y) { pass_min_u8(p, x, y, NULL); }
void aotc_reduce_max_i32(const aotc_reduce_params *p, const int32_t *x, int32_t *y) { pass_max_i32(p, x, y, NULL); }
void aotc_reduce_min_i32(const aotc_reduce_params *p, const int32_t *x, int32_t *y) { pass_min_i32(p, x, y, NULL); }

void aotc_det_f32(int32_t batch, int32_t n, const float *x, float *y, double *scratch) {
    const int64_t nn = (int64_t)n * n;
    int64_t b, i, j, k;

    for (b = 0; b < batch; ++b) {
        double *a = scratch, det = 1.0;
        for (i = 0; i < nn; ++i) a[i] = x[b * nn + i];
        for (k = 0; k < n && det != 0.0; ++k) {
            int64_t pivot = k;
            for (i = k + 1; i < n; ++i)
                if (fabs(a[i * n + k]) > fabs(a[pivot * n + k])) pivot = i;
            if (a[pivot * n + k] == 0.0) {
                det = 0.0;
                break;
            }
            if (pivot != k) {
                for (j = 0; j < n; ++j) {
                    const double t = a[k * n + j];
                    a[k * n + j] = a[pivot * n + j];
                    a[pivot * n + j] = t;
                }
                det = -det;
            }
            det *= a[k * n + k];
            for (i = k + 1; i < n; ++i) {
                const double f = a[i * n + k] / a[k * n + k];
                for (j = k + 1; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
            }
        }
        y[b] = (float)det;
    }
}
