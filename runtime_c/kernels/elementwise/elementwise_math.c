/* ONNX elementwise ops, the rarer float ones: Pow, Mod, trigonometric and hyperbolic functions,
 * Softplus/Softsign, and the float64 maths onnx's function bodies use (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_BINARY(pow, f32, float, float, powf(x0, x1))
AOTC_BINARY(pow, f64, double, double, pow(x0, x1))
/* Mod: fmod=1 is C's fmod/% (sign of the dividend), fmod=0 Python's (sign of the divisor) */
AOTC_BINARY(fmod, f32, float, float, fmodf(x0, x1))
AOTC_BINARY(fmod, f64, double, double, fmod(x0, x1))
/* floored (fmod=0; numpy's np.mod): the remainder takes the divisor's sign, a zero one too */
#define FLOAT_MOD(FMOD, R) ((R) = FMOD(x0, x1), (R) == 0 ? copysign(0.0, x1) : (((R) < 0) != (x1 < 0)) ? (R) + x1 : (R))
static float aotc_mod_float(float x0, float x1) { float r; return (float)FLOAT_MOD(fmodf, r); }
static double aotc_mod_double(double x0, double x1) { double r; return FLOAT_MOD(fmod, r); }
AOTC_BINARY(mod, f32, float, float, aotc_mod_float(x0, x1))
AOTC_BINARY(mod, f64, double, double, aotc_mod_double(x0, x1))

AOTC_UNARY_F32(softplus, v > 20.0f ? v : log1pf(expf(v)))
AOTC_UNARY_F32(softsign, v / (1.0f + fabsf(v)))
AOTC_UNARY_F32(sin, sinf(v))
AOTC_UNARY_F32(cos, cosf(v))
AOTC_UNARY_F32(tan, tanf(v))
AOTC_UNARY_F32(asin, asinf(v))
AOTC_UNARY_F32(acos, acosf(v))
AOTC_UNARY_F32(atan, atanf(v))
AOTC_UNARY_F32(sinh, sinhf(v))
AOTC_UNARY_F32(cosh, coshf(v))
AOTC_UNARY_F32(asinh, asinhf(v))
AOTC_UNARY_F32(acosh, acoshf(v))
AOTC_UNARY_F32(atanh, atanhf(v))
/* float64: the ones onnx's function bodies use when they cast to double */
AOTC_UNARY(exp, f64, double, double, exp(v))
AOTC_UNARY(log, f64, double, double, log(v))
AOTC_UNARY(sqrt, f64, double, double, sqrt(v))
