/* ONNX elementwise ops on float64 (what onnx's function bodies, scikit-learn and double-precision exports
 * compute in double): elementwise.c's and elementwise_math.c's float32 kernels, the same loops over doubles.
 * The maths is libm's double functions throughout (no fast_math.h polynomials: those are float32-accurate),
 * so each element is as onnxruntime's or numpy's double result within an ulp or so. */
#include "elementwise_impl.h"

#define AOTC_UNARY_F64(NAME, EXPR) AOTC_UNARY(NAME, f64, double, double, EXPR)

AOTC_BINARY(add, f64, double, double, x0 + x1)
AOTC_BINARY(sub, f64, double, double, x0 - x1)
AOTC_BINARY(mul, f64, double, double, x0 * x1)
AOTC_BINARY(div, f64, double, double, x0 / x1)
AOTC_BINARY(prelu, f64, double, double, x0 < 0.0 ? x0 * x1 : x0)
AOTC_UNARY_F64(neg, -v)
AOTC_UNARY_F64(abs, fabs(v))
AOTC_UNARY_F64(sign, (v > 0) - (v < 0))

/* the activations: NaN stays NaN, as the float32 kernels' compares keep it */
AOTC_UNARY_F64(relu, v < 0.0 ? 0.0 : v)
AOTC_UNARY_F64(sigmoid, 1.0 / (1.0 + exp(-v))) /* exp(-v) = inf below about -709: 0, as it should be */
AOTC_UNARY_F64(tanh, tanh(v))
AOTC_UNARY_F64(erf, erf(v))
AOTC_UNARY_F64(gelu, 0.5 * v * (1.0 + erf(v * 0.70710678118654752440)))
AOTC_UNARY_F64(gelu_tanh, 0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v))))
AOTC_UNARY_F64(reciprocal, 1.0 / v)
AOTC_UNARY_F64(floor, floor(v))
AOTC_UNARY_F64(ceil, ceil(v))
AOTC_UNARY_F64(round, rint(v)) /* half to even in the default rounding mode */
/* log(1 + e^v) without overflow: v + log1p(e^-v) above 0 */
AOTC_UNARY_F64(softplus, v > 0.0 ? v + log1p(exp(-v)) : log1p(exp(v)))
AOTC_UNARY_F64(softsign, v / (1.0 + fabs(v)))
AOTC_UNARY_F64(sin, sin(v))
AOTC_UNARY_F64(cos, cos(v))
AOTC_UNARY_F64(tan, tan(v))
AOTC_UNARY_F64(asin, asin(v))
AOTC_UNARY_F64(acos, acos(v))
AOTC_UNARY_F64(atan, atan(v))
AOTC_UNARY_F64(sinh, sinh(v))
AOTC_UNARY_F64(cosh, cosh(v))
AOTC_UNARY_F64(asinh, asinh(v))
AOTC_UNARY_F64(acosh, acosh(v))
AOTC_UNARY_F64(atanh, atanh(v))
AOTC_UNARY(isnan, f64, double, uint8_t, v != v)
AOTC_UNARY(isinf, f64, double, uint8_t, isinf(v) != 0)
AOTC_UNARY(isinf_pos, f64, double, uint8_t, isinf(v) && v > 0.0)
AOTC_UNARY(isinf_neg, f64, double, uint8_t, isinf(v) && v < 0.0)

/* min(max(v, lo), hi), in that order (lo > hi gives hi, as ONNX says); NaN stays NaN */
static inline double clamp_f64(double v, double lo, double hi) {
    const double a = v < lo ? lo : v;
    return a > hi ? hi : a;
}

AOTC_UNARY_F64(hard_swish, v * clamp_f64(v / 6.0 + 0.5, 0.0, 1.0))

/* The kernels with parameters (doubles, as the compiler writes them): y[i] = EXPR of v = x[i]. */
#define AOTC_MAP_F64(EXPR)                                                  \
    do {                                                                    \
        size_t i;                                                           \
        for (i = 0; i < n; ++i) { const double v = x[i]; y[i] = (EXPR); }   \
    } while (0)

void aotc_leaky_relu_f64(size_t n, const double *x, double *y, double alpha) { AOTC_MAP_F64(v >= 0.0 ? v : alpha * v); }
void aotc_elu_f64(size_t n, const double *x, double *y, double alpha) { AOTC_MAP_F64(v >= 0.0 ? v : alpha * expm1(v)); }
void aotc_selu_f64(size_t n, const double *x, double *y, double alpha, double gamma) {
    AOTC_MAP_F64(gamma * (v > 0.0 ? v : alpha * expm1(v)));
}
void aotc_thresholded_relu_f64(size_t n, const double *x, double *y, double alpha) { AOTC_MAP_F64(v > alpha ? v : 0.0); }
void aotc_shrink_f64(size_t n, const double *x, double *y, double lambd, double bias) {
    AOTC_MAP_F64(v < -lambd ? v + bias : v > lambd ? v - bias : 0.0);
}
void aotc_clip_f64(size_t n, const double *x, double *y, double lo, double hi) { AOTC_MAP_F64(clamp_f64(v, lo, hi)); }
void aotc_hard_sigmoid_f64(size_t n, const double *x, double *y, double alpha, double beta) {
    AOTC_MAP_F64(clamp_f64(alpha * v + beta, 0.0, 1.0));
}
