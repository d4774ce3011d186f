/* ONNX elementwise arithmetic on float64 (what onnx's function bodies and some exported graphs
 * compute in double): elementwise.c's float32 kernels, the same loops over doubles. */
#include "elementwise_impl.h"

AOTC_BINARY(add, f64, double, double, x0 + x1)
AOTC_BINARY(sub, f64, double, double, x0 - x1)
AOTC_BINARY(mul, f64, double, double, x0 * x1)
AOTC_BINARY(div, f64, double, double, x0 / x1)
AOTC_UNARY(neg, f64, double, double, -v)
AOTC_UNARY(abs, f64, double, double, fabs(v))
AOTC_UNARY(sign, f64, double, double, (v > 0) - (v < 0))
