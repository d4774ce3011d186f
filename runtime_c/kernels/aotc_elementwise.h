/* Elementwise kernels, float32: unary activations and broadcasting binary ops.
 * Input and output may be the same buffer (the planner runs these in place),
 * so no pointer here is restrict. */
#ifndef AOTC_ELEMENTWISE_H
#define AOTC_ELEMENTWISE_H

#include "aotc_common.h"

/* Numpy broadcasting, prepared at compile time: dims of size 1 in the output
 * are dropped and dims that broadcast alike are merged, so rank is small. */
typedef struct {
    int32_t rank;                      /* >= 1 */
    int32_t shape[AOTC_MAX_RANK];      /* output dims */
    int32_t a_strides[AOTC_MAX_RANK];  /* element strides of a; 0 where a broadcasts */
    int32_t b_strides[AOTC_MAX_RANK];  /* element strides of b; 0 where b broadcasts */
} aotc_broadcast;

/* y = a (op) b with broadcasting. */
void aotc_add_f32(const aotc_broadcast *p, const float *a, const float *b, float *y);
void aotc_sub_f32(const aotc_broadcast *p, const float *a, const float *b, float *y);
void aotc_mul_f32(const aotc_broadcast *p, const float *a, const float *b, float *y);
void aotc_div_f32(const aotc_broadcast *p, const float *a, const float *b, float *y);
void aotc_max_f32(const aotc_broadcast *p, const float *a, const float *b, float *y);
void aotc_min_f32(const aotc_broadcast *p, const float *a, const float *b, float *y);
void aotc_pow_f32(const aotc_broadcast *p, const float *a, const float *b, float *y);
void aotc_prelu_f32(const aotc_broadcast *p, const float *a, const float *b, float *y); /* b = slope */

/* y[i] = f(x[i]) for i < n. */
void aotc_relu_f32(size_t n, const float *x, float *y);
void aotc_sigmoid_f32(size_t n, const float *x, float *y);
void aotc_tanh_f32(size_t n, const float *x, float *y);
void aotc_hard_swish_f32(size_t n, const float *x, float *y);
void aotc_exp_f32(size_t n, const float *x, float *y);
void aotc_log_f32(size_t n, const float *x, float *y);
void aotc_sqrt_f32(size_t n, const float *x, float *y);
void aotc_neg_f32(size_t n, const float *x, float *y);
void aotc_abs_f32(size_t n, const float *x, float *y);
void aotc_erf_f32(size_t n, const float *x, float *y);
void aotc_reciprocal_f32(size_t n, const float *x, float *y);
void aotc_floor_f32(size_t n, const float *x, float *y);
void aotc_ceil_f32(size_t n, const float *x, float *y);
void aotc_softplus_f32(size_t n, const float *x, float *y);
/* ONNX Gelu: x / 2 * (1 + erf(x / sqrt(2))) (approximate "none"), and
 * x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) (approximate "tanh"). */
void aotc_gelu_f32(size_t n, const float *x, float *y);
void aotc_gelu_tanh_f32(size_t n, const float *x, float *y);
void aotc_leaky_relu_f32(size_t n, const float *x, float *y, float alpha);
void aotc_elu_f32(size_t n, const float *x, float *y, float alpha);
void aotc_clip_f32(size_t n, const float *x, float *y, float lo, float hi);
void aotc_hard_sigmoid_f32(size_t n, const float *x, float *y, float alpha, float beta);

#endif /* AOTC_ELEMENTWISE_H */
