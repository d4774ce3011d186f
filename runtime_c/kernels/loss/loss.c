/* The losses (aotc_loss.h): portable C99, no allocation, no globals; one kernel per op, a plain
 * loop, checked against loss_ref.c (tests/kernels_c/test_loss_kernels.c). Sums are kept in double,
 * whatever T is. */
#include "aotc_loss.h"

#include <math.h>

#define AOTC_LOSS(SFX, T, TI)                                                                          \
    void aotc_nll_loss_##SFX(const aotc_loss_params *p, const T *x, const TI *target, const T *weight, \
                             T *y) {                                                                   \
        double sum = 0.0, wsum = 0.0;                                                                  \
        int32_t i, j;                                                                                  \
        for (i = 0; i < p->n; ++i) {                                                                   \
            for (j = 0; j < p->d; ++j) {                                                               \
                const int64_t t = (int64_t)target[(int64_t)i * p->d + j];                              \
                double loss = 0.0, w = 0.0;                                                            \
                if (!(p->has_ignore && t == p->ignore_index) && t >= 0 && t < p->c) {                  \
                    w = weight ? (double)weight[t] : 1.0;                                              \
                    loss = -(double)x[((int64_t)i * p->c + t) * p->d + j] * w;                         \
                }                                                                                      \
                if (p->reduction == AOTC_LOSS_NONE) {                                                  \
                    y[(int64_t)i * p->d + j] = (T)loss;                                                \
                }                                                                                      \
                sum += loss;                                                                           \
                wsum += w;                                                                             \
            }                                                                                          \
        }                                                                                              \
        if (p->reduction == AOTC_LOSS_SUM) y[0] = (T)sum;                                              \
        if (p->reduction == AOTC_LOSS_MEAN) y[0] = (T)(sum / wsum);                                    \
    }                                                                                                  \
                                                                                                       \
    /* log_prob = LogSoftmax(scores) over the class dim, then the NLL of it */                         \
    void aotc_softmax_cross_entropy_##SFX(const aotc_loss_params *p, const T *scores, const TI *target,\
                                          const T *weight, T *y, T *log_prob) {                        \
        int32_t i, j, k;                                                                               \
        for (i = 0; i < p->n; ++i) {                                                                   \
            for (j = 0; j < p->d; ++j) {                                                               \
                const int64_t base = (int64_t)i * p->c * p->d + j;                                     \
                double m = (double)scores[base], s = 0.0, lse;                                         \
                for (k = 1; k < p->c; ++k) {                                                           \
                    const double v = (double)scores[base + (int64_t)k * p->d];                         \
                    if (v > m) m = v;                                                                  \
                }                                                                                      \
                for (k = 0; k < p->c; ++k) s += exp((double)scores[base + (int64_t)k * p->d] - m);     \
                lse = m + log(s);                                                                      \
                for (k = 0; k < p->c; ++k) {                                                           \
                    const int64_t at = base + (int64_t)k * p->d;                                       \
                    log_prob[at] = (T)((double)scores[at] - lse);                                      \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
        aotc_nll_loss_##SFX(p, log_prob, target, weight, y);                                           \
    }

AOTC_LOSS(f32_i64, float, int64_t)
AOTC_LOSS(f32_i32, float, int32_t)
AOTC_LOSS(f64_i64, double, int64_t)
AOTC_LOSS(f64_i32, double, int32_t)
