/* The losses as inference ops: ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 * Scores are viewed as [n, c, d] (d: the product of the dims after the class dim), targets as
 * [n, d]. A target equal to ignore_index (when the model sets one) or outside [0, c) adds
 * nothing, so no target value can make the kernels read out of bounds. */
#ifndef AOTC_LOSS_H
#define AOTC_LOSS_H

#include "aotc_common.h"

typedef enum { AOTC_LOSS_NONE = 0, AOTC_LOSS_SUM = 1, AOTC_LOSS_MEAN = 2 } aotc_loss_reduction;

typedef struct {
    int32_t n, c, d;
    aotc_loss_reduction reduction; /* none: y is [n, d]; sum, mean: y is a scalar */
    int32_t has_ignore;
    int64_t ignore_index;
} aotc_loss_params;

/* y = -x[target] * weight[target] (weight NULL: 1), reduced; mean divides by the summed weights. */
#define AOTC_DECLARE_LOSS(SFX, T, TI)                                                                  \
    void aotc_nll_loss_##SFX(const aotc_loss_params *p, const T *x, const TI *target, const T *weight, \
                             T *y);                                                                    \
    void aotc_softmax_cross_entropy_##SFX(const aotc_loss_params *p, const T *scores, const TI *target,\
                                          const T *weight, T *y, T *log_prob);
AOTC_DECLARE_LOSS(f32_i64, float, int64_t)
AOTC_DECLARE_LOSS(f32_i32, float, int32_t)
AOTC_DECLARE_LOSS(f64_i64, double, int64_t)
AOTC_DECLARE_LOSS(f64_i32, double, int32_t)

#endif /* AOTC_LOSS_H */
