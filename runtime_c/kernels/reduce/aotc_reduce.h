/* Reduction kernels, float32: ONNX ReduceSum, ReduceMean, ReduceMax, ReduceMin,
 * ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp.
 * The compiler drops size-1 dims and merges neighbouring dims that are both
 * kept or both reduced, so any set of axes becomes a short list of blocks
 * (e.g. kept, reduced, kept). keepdims does not change the memory layout of y. */
#ifndef AOTC_REDUCE_H
#define AOTC_REDUCE_H

#include "aotc_common.h"

typedef struct {
    int32_t rank;                      /* merged dims, >= 1 */
    int32_t shape[AOTC_MAX_RANK];      /* input dims after merging (x is contiguous) */
    int32_t y_strides[AOTC_MAX_RANK];  /* element stride in y of each dim; 0 for a reduced dim */
    int64_t y_size;                    /* elements of y */
    int64_t count;                     /* input elements folded into each element of y */
} aotc_reduce_params;

/* y = reduction of x over the reduced blocks of p. */
void aotc_reduce_sum_f32(const aotc_reduce_params *p, const float *x, float *y);
void aotc_reduce_mean_f32(const aotc_reduce_params *p, const float *x, float *y);
void aotc_reduce_max_f32(const aotc_reduce_params *p, const float *x, float *y);
void aotc_reduce_min_f32(const aotc_reduce_params *p, const float *x, float *y);
void aotc_reduce_prod_f32(const aotc_reduce_params *p, const float *x, float *y);
void aotc_reduce_l1_f32(const aotc_reduce_params *p, const float *x, float *y);          /* sum |x| */
void aotc_reduce_l2_f32(const aotc_reduce_params *p, const float *x, float *y);          /* sqrt(sum x^2) */
void aotc_reduce_sum_square_f32(const aotc_reduce_params *p, const float *x, float *y);  /* sum x^2 */
void aotc_reduce_log_sum_f32(const aotc_reduce_params *p, const float *x, float *y);     /* log(sum x) */
/* log(sum exp(x)), computed as m + log(sum exp(x - m)) with m the maximum, so
 * large inputs do not overflow; `scratch` holds y_size floats (the maxima). */
void aotc_reduce_log_sum_exp_f32(const aotc_reduce_params *p, const float *x, float *y, float *scratch);
/* Swish then each plane's mean of its result: y[0, planes hw) = x sigmoid(alpha x) (aotc_swish_f32's bits), mean[c] =
 * the mean of y's plane c (hw floats). The SiLU -> ReduceMean over H, W of squeeze-excite (fuse_swish_mean.py).
 * y may be x. */
void aotc_swish_mean_f32(int64_t planes, int32_t hw, const float *x, float *y, float *mean, float alpha);
/* float64: the same ops in double (scratch: one double per output) */
void aotc_reduce_sum_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_mean_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_max_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_min_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_prod_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_l1_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_l2_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_sum_square_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_log_sum_f64(const aotc_reduce_params *p, const double *x, double *y);
void aotc_reduce_log_sum_exp_f64(const aotc_reduce_params *p, const double *x, double *y, double *scratch);
/* integers: max and min only (exact on any integer type) */
void aotc_reduce_max_i8(const aotc_reduce_params *p, const int8_t *x, int8_t *y);
void aotc_reduce_min_i8(const aotc_reduce_params *p, const int8_t *x, int8_t *y);
void aotc_reduce_max_u8(const aotc_reduce_params *p, const uint8_t *x, uint8_t *y);
void aotc_reduce_min_u8(const aotc_reduce_params *p, const uint8_t *x, uint8_t *y);
void aotc_reduce_max_i32(const aotc_reduce_params *p, const int32_t *x, int32_t *y);
void aotc_reduce_min_i32(const aotc_reduce_params *p, const int32_t *x, int32_t *y);

/* ONNX Det: y[b] = the determinant of x's n x n matrix b (batch of them, row-major), by Gaussian
 * elimination with partial pivoting in double (LAPACK's getrf, which numpy's det runs, pivots the
 * same way); `scratch` holds n * n doubles. A zero pivot column gives 0. */
void aotc_det_f32(int32_t batch, int32_t n, const float *x, float *y, double *scratch);

#endif /* AOTC_REDUCE_H */
