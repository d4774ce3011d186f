/* ONNX integer arithmetic on the dtypes elementwise_int.c leaves out (int8, int16, the unsigned ones): Add,
 * Sub, Mul, Div, Max, Min, wrapping as onnxruntime's do; division by zero gives 0 (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_OTHER_INTS(AOTC_BINARY, add, WRAP_ADD)
AOTC_OTHER_INTS(AOTC_BINARY, sub, WRAP_SUB)
AOTC_OTHER_INTS(AOTC_BINARY, mul, WRAP_MUL)
AOTC_OTHER_SIGNED(AOTC_BINARY, div, SIGNED_DIV)
AOTC_UNSIGNED(AOTC_BINARY, div, x1 == 0 ? 0 : x0 / x1)
AOTC_OTHER_INTS(AOTC_BINARY, max, x0 > x1 ? x0 : x1)
AOTC_OTHER_INTS(AOTC_BINARY, min, x0 < x1 ? x0 : x1)
