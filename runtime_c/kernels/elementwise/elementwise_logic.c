/* ONNX And, Or, Xor and Not on bools (uint8_t), and the float NaN/Inf tests IsNaN and IsInf (see
 * elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_BINARY(and, b8, uint8_t, uint8_t, (x0 != 0) & (x1 != 0))
AOTC_BINARY(or, b8, uint8_t, uint8_t, (x0 != 0) | (x1 != 0))
AOTC_BINARY(xor, b8, uint8_t, uint8_t, (x0 != 0) ^ (x1 != 0))
AOTC_UNARY(isnan, f32, float, uint8_t, v != v)
AOTC_UNARY(isinf, f32, float, uint8_t, isinf(v) != 0)
AOTC_UNARY(isinf_pos, f32, float, uint8_t, isinf(v) && v > 0.0f)
AOTC_UNARY(isinf_neg, f32, float, uint8_t, isinf(v) && v < 0.0f)
AOTC_UNARY(not, b8, uint8_t, uint8_t, v == 0)
