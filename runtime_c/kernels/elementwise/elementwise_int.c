/* ONNX elementwise ops on int32 and int64, the shape arithmetic of exported graphs: Add, Sub, Mul,
 * Div, Max, Min and Neg, wrapping as onnxruntime's do (done in uint64_t and narrowed), division by
 * zero giving 0. The other integer dtypes and ops: elementwise_int_*.c (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_WIDE_SIGNED(AOTC_BINARY, add, WRAP_ADD)
AOTC_WIDE_SIGNED(AOTC_BINARY, sub, WRAP_SUB)
AOTC_WIDE_SIGNED(AOTC_BINARY, mul, WRAP_MUL)
AOTC_WIDE_SIGNED(AOTC_BINARY, div, SIGNED_DIV)
AOTC_WIDE_SIGNED(AOTC_BINARY, max, x0 > x1 ? x0 : x1)
AOTC_WIDE_SIGNED(AOTC_BINARY, min, x0 < x1 ? x0 : x1)
AOTC_WIDE_SIGNED(AOTC_UNARY, neg, (in_t)(0u - (uint64_t)v))
