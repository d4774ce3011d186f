/* Elementwise kernels: unary ops and broadcasting binary ops, comparisons, logical and bitwise ops.
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

/* Kernels by dtype suffix: f32 float, f64 double, i8/i16/i32/i64 signed, u8/u16/u32/u64 unsigned, b8 bool
 * (uint8_t, 0 or 1). The declarations come from type lists, as the definitions do. */
#define AOTC_DECLARE_BINARY(NAME, SFX, T, TO) \
    void aotc_##NAME##_##SFX(const aotc_broadcast *p, const T *a, const T *b, TO *y);
#define AOTC_DECLARE_UNARY(NAME, SFX, T, TO) void aotc_##NAME##_##SFX(size_t n, const T *x, TO *y);
#define AOTC_DECLARE_FLOATS(D, NAME) D(NAME, f32, float, float) D(NAME, f64, double, double)
#define AOTC_DECLARE_SIGNED(D, NAME) \
    D(NAME, i8, int8_t, int8_t) D(NAME, i16, int16_t, int16_t) D(NAME, i32, int32_t, int32_t) \
    D(NAME, i64, int64_t, int64_t)
#define AOTC_DECLARE_INTS(D, NAME) AOTC_DECLARE_SIGNED(D, NAME) \
    D(NAME, u8, uint8_t, uint8_t) D(NAME, u16, uint16_t, uint16_t) D(NAME, u32, uint32_t, uint32_t) \
    D(NAME, u64, uint64_t, uint64_t)
#define AOTC_DECLARE_NUMERIC(D, NAME) AOTC_DECLARE_FLOATS(D, NAME) AOTC_DECLARE_INTS(D, NAME)
#define AOTC_DECLARE_COMPARE(NAME) \
    AOTC_DECLARE_BINARY(NAME, f32, float, uint8_t) AOTC_DECLARE_BINARY(NAME, f64, double, uint8_t) \
    AOTC_DECLARE_BINARY(NAME, i8, int8_t, uint8_t) AOTC_DECLARE_BINARY(NAME, i16, int16_t, uint8_t) \
    AOTC_DECLARE_BINARY(NAME, i32, int32_t, uint8_t) AOTC_DECLARE_BINARY(NAME, i64, int64_t, uint8_t) \
    AOTC_DECLARE_BINARY(NAME, u8, uint8_t, uint8_t) AOTC_DECLARE_BINARY(NAME, u16, uint16_t, uint8_t) \
    AOTC_DECLARE_BINARY(NAME, u32, uint32_t, uint8_t) AOTC_DECLARE_BINARY(NAME, u64, uint64_t, uint8_t)

/* y = a (op) b with broadcasting: arithmetic (integers wrap; x / 0 and x % 0 give 0). */
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY, add)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY, sub)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY, mul)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY, div)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY, max)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY, min)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_BINARY, pow)
AOTC_DECLARE_SIGNED(AOTC_DECLARE_BINARY, pow) /* integers: wrapping, exponents below 0 give trunc(b^e) */
AOTC_DECLARE_FLOATS(AOTC_DECLARE_BINARY, prelu) /* b = slope */
/* ONNX Mod: fmod (sign of the dividend; fmod=1) and mod (sign of the divisor; integers, fmod=0) */
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY, fmod)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY, mod)
/* comparisons -> bool */
AOTC_DECLARE_COMPARE(equal)
AOTC_DECLARE_BINARY(equal, b8, uint8_t, uint8_t)
AOTC_DECLARE_COMPARE(less)
AOTC_DECLARE_COMPARE(less_equal)
AOTC_DECLARE_COMPARE(greater)
AOTC_DECLARE_COMPARE(greater_equal)
/* logical (bool) and bitwise (integers) */
AOTC_DECLARE_BINARY(and, b8, uint8_t, uint8_t)
AOTC_DECLARE_BINARY(or, b8, uint8_t, uint8_t)
AOTC_DECLARE_BINARY(xor, b8, uint8_t, uint8_t)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY, bitwise_and)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY, bitwise_or)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY, bitwise_xor)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY, shift_left)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY, shift_right) /* signed: arithmetic */

/* y[i] = f(x[i]) for i < n. */
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, relu)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, sigmoid)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, tanh)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, hard_swish)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, exp)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, log)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, sqrt)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, erf)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, reciprocal)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, floor)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, ceil)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, round) /* half to even */
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, softplus)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, softsign)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, sin)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, cos)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, tan)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, asin)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, acos)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, atan)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, sinh)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, cosh)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, asinh)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, acosh)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, atanh)
AOTC_DECLARE_UNARY(isnan, f32, float, uint8_t)
AOTC_DECLARE_UNARY(isnan, f64, double, uint8_t)
AOTC_DECLARE_UNARY(isinf, f32, float, uint8_t)
AOTC_DECLARE_UNARY(isinf, f64, double, uint8_t)
AOTC_DECLARE_UNARY(isinf_pos, f32, float, uint8_t) /* IsInf detect_negative=0 */
AOTC_DECLARE_UNARY(isinf_pos, f64, double, uint8_t)
AOTC_DECLARE_UNARY(isinf_neg, f32, float, uint8_t) /* IsInf detect_positive=0 */
AOTC_DECLARE_UNARY(isinf_neg, f64, double, uint8_t)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_UNARY, sign)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, neg)
AOTC_DECLARE_SIGNED(AOTC_DECLARE_UNARY, neg)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_UNARY, abs)
AOTC_DECLARE_UNARY(not, b8, uint8_t, uint8_t)
AOTC_DECLARE_INTS(AOTC_DECLARE_UNARY, bitwise_not)
/* ONNX Gelu: x / 2 * (1 + erf(x / sqrt(2))) (approximate "none"), and
 * x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) (approximate "tanh"). */
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, gelu)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY, gelu_tanh)
/* Swish (opset 24): x * sigmoid(alpha x); alpha = 1 is SiLU. */
void aotc_swish_f32(size_t n, const float *x, float *y, float alpha);
void aotc_leaky_relu_f32(size_t n, const float *x, float *y, float alpha);
void aotc_elu_f32(size_t n, const float *x, float *y, float alpha);
void aotc_selu_f32(size_t n, const float *x, float *y, float alpha, float gamma);
void aotc_celu_f32(size_t n, const float *x, float *y, float alpha);
void aotc_thresholded_relu_f32(size_t n, const float *x, float *y, float alpha);
void aotc_shrink_f32(size_t n, const float *x, float *y, float lambd, float bias);
void aotc_clip_f32(size_t n, const float *x, float *y, float lo, float hi);
void aotc_hard_sigmoid_f32(size_t n, const float *x, float *y, float alpha, float beta);
/* float64: the same, their parameters doubles */
void aotc_leaky_relu_f64(size_t n, const double *x, double *y, double alpha);
void aotc_elu_f64(size_t n, const double *x, double *y, double alpha);
void aotc_selu_f64(size_t n, const double *x, double *y, double alpha, double gamma);
void aotc_thresholded_relu_f64(size_t n, const double *x, double *y, double alpha);
void aotc_shrink_f64(size_t n, const double *x, double *y, double lambd, double bias);
void aotc_clip_f64(size_t n, const double *x, double *y, double lo, double hi);
void aotc_hard_sigmoid_f64(size_t n, const double *x, double *y, double alpha, double beta);

#endif /* AOTC_ELEMENTWISE_H */
