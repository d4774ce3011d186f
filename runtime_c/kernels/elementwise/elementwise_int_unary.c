/* ONNX Neg (int8, int16: elementwise_int.c has the wider ones), Abs, Sign and BitwiseNot on integers, wrapping
 * as onnxruntime's do (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_OTHER_SIGNED(AOTC_UNARY, neg, (in_t)(0u - (uint64_t)v))
AOTC_SIGNED(AOTC_UNARY, abs, v < 0 ? (in_t)(0u - (uint64_t)v) : v)
AOTC_UNSIGNED(AOTC_UNARY, abs, v)
AOTC_SIGNED(AOTC_UNARY, sign, (v > 0) - (v < 0))
AOTC_UNSIGNED(AOTC_UNARY, sign, v != 0)
AOTC_INTS(AOTC_UNARY, bitwise_not, ~v)
