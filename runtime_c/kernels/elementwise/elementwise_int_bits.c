/* ONNX BitwiseAnd, BitwiseOr, BitwiseXor and BitShift on integers of every width (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_INTS(AOTC_BINARY, bitwise_and, x0 & x1)
AOTC_INTS(AOTC_BINARY, bitwise_or, x0 | x1)
AOTC_INTS(AOTC_BINARY, bitwise_xor, x0 ^ x1)
/* BitShift, unsigned: shifting by the width or more gives 0 */
#define UNSIGNED_OUT (x1 >= 8 * sizeof(in_t))
AOTC_UNSIGNED(AOTC_BINARY, shift_left, UNSIGNED_OUT ? 0 : (in_t)((uint64_t)x0 << x1))
AOTC_UNSIGNED(AOTC_BINARY, shift_right, UNSIGNED_OUT ? 0 : (in_t)((uint64_t)x0 >> x1))
/* signed (opset 28): the right shift is arithmetic (written on ~x for negative x, so no C
 * implementation-defined shift); a shift below 0 or by the width or more leaves only the sign fill */
#define SHIFT_OUT (x1 < 0 || (int64_t)x1 >= (int64_t)(8 * sizeof(in_t)))
#define SIGNED_SHL (SHIFT_OUT ? (in_t)0 : (in_t)((uint64_t)x0 << x1))
#define SIGNED_SHR (SHIFT_OUT ? (in_t)(x0 < 0 ? -1 : 0) : x0 < 0 ? (in_t)~((in_t)~x0 >> x1) : (in_t)(x0 >> x1))
AOTC_SIGNED(AOTC_BINARY, shift_left, SIGNED_SHL)
AOTC_SIGNED(AOTC_BINARY, shift_right, SIGNED_SHR)
