/* ONNX comparisons and logic: bool (uint8_t) results for every dtype, And/Or/Xor/Not, and the
 * float NaN/Inf tests (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_CMP_ALL(equal, x0 == x1)
AOTC_BINARY(equal, b8, uint8_t, uint8_t, (x0 != 0) == (x1 != 0))
AOTC_CMP_ALL(less, x0 < x1)
AOTC_CMP_ALL(less_equal, x0 <= x1)
AOTC_CMP_ALL(greater, x0 > x1)
AOTC_CMP_ALL(greater_equal, x0 >= x1)

AOTC_BINARY(and, b8, uint8_t, uint8_t, (x0 != 0) & (x1 != 0))
AOTC_BINARY(or, b8, uint8_t, uint8_t, (x0 != 0) | (x1 != 0))
AOTC_BINARY(xor, b8, uint8_t, uint8_t, (x0 != 0) ^ (x1 != 0))
AOTC_UNARY(isnan, f32, float, uint8_t, v != v)
AOTC_UNARY(isinf, f32, float, uint8_t, isinf(v) != 0)
AOTC_UNARY(isinf_pos, f32, float, uint8_t, isinf(v) && v > 0.0f)
AOTC_UNARY(isinf_neg, f32, float, uint8_t, isinf(v) && v < 0.0f)
AOTC_UNARY(not, b8, uint8_t, uint8_t, v == 0)
