/* Reference kernels of the loss family (declared in kernels_ref.h), by the ONNX function bodies:
 * NegativeLogLikelihoodLoss element by element (the loss of every target, then the reduction, sums
 * in double in index order), SoftmaxCrossEntropyLoss as LogSoftmax's body (x - max, less the log of
 * the sum of the exponentials; in double) stored as T, then the NLL of that. loss.c is checked
 * against these. */
#include "kernels_ref.h"

#include <math.h>

/* element (i, j)'s target and weight: w 0 (it adds nothing) for ignore_index or a class outside [0, c) */
#define LOSS_REF(SFX, T, TI)                                                                                  \
    void aotc_nll_loss_##SFX##_ref(const aotc_loss_params *p, const T *x, const TI *target, const T *weight,  \
                                   T *y) {                                                                    \
        double sum = 0.0, wsum = 0.0;                                                                         \
        int64_t i, j;                                                                                         \
        for (i = 0; i < p->n; ++i) {                                                                          \
            for (j = 0; j < p->d; ++j) {                                                                      \
                const int64_t t = (int64_t)target[i * p->d + j];                                              \
                const int counted = !(p->has_ignore && t == p->ignore_index) && t >= 0 && t < p->c;           \
                const double w = !counted ? 0.0 : weight != NULL ? (double)weight[t] : 1.0;                   \
                const double loss = counted ? -(double)x[(i * p->c + t) * p->d + j] * w : 0.0;               \
                if (p->reduction == AOTC_LOSS_NONE) y[i * p->d + j] = (T)loss;                                \
                sum += loss;                                                                                  \
                wsum += w;                                                                                    \
            }                                                                                                 \
        }                                                                                                     \
        if (p->reduction == AOTC_LOSS_SUM) y[0] = (T)sum;                                                     \
        if (p->reduction == AOTC_LOSS_MEAN) y[0] = (T)(sum / wsum);                                           \
    }                                                                                                         \
    void aotc_softmax_cross_entropy_##SFX##_ref(const aotc_loss_params *p, const T *scores, const TI *target, \
                                                const T *weight, T *y, T *log_prob) {                         \
        int64_t i, j, k;                                                                                      \
        for (i = 0; i < p->n; ++i) {                                                                          \
            for (j = 0; j < p->d; ++j) {                                                                      \
                const T *s = scores + i * p->c * p->d + j;                                                    \
                double top = (double)s[0], sum = 0.0;                                                         \
                for (k = 0; k < p->c; ++k) top = (double)s[k * p->d] > top ? (double)s[k * p->d] : top;       \
                for (k = 0; k < p->c; ++k) sum += exp((double)s[k * p->d] - top);                             \
                for (k = 0; k < p->c; ++k) {                                                                  \
                    log_prob[(i * p->c + k) * p->d + j] = (T)(((double)s[k * p->d] - top) - log(sum));        \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        aotc_nll_loss_##SFX##_ref(p, log_prob, target, weight, y);                                            \
    }
LOSS_REF(f32_i64, float, int64_t)
LOSS_REF(f32_i32, float, int32_t)
LOSS_REF(f64_i64, double, int64_t)
LOSS_REF(f64_i32, double, int32_t)
