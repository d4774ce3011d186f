/* ONNX elementwise ops on integers, all but int32/int64 arithmetic (elementwise_int.c): the 8- and
 * 16-bit and unsigned arithmetic, Pow by squaring, Mod, Abs, Sign, bitwise ops and shifts, wrapping as
 * onnxruntime's do; division and modulo by zero give 0 (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_OTHER_INTS(AOTC_BINARY, add, WRAP_ADD)
AOTC_OTHER_INTS(AOTC_BINARY, sub, WRAP_SUB)
AOTC_OTHER_INTS(AOTC_BINARY, mul, WRAP_MUL)
AOTC_OTHER_SIGNED(AOTC_BINARY, div, SIGNED_DIV)
AOTC_UNSIGNED(AOTC_BINARY, div, x1 == 0 ? 0 : x0 / x1)
AOTC_OTHER_INTS(AOTC_BINARY, max, x0 > x1 ? x0 : x1)
AOTC_OTHER_INTS(AOTC_BINARY, min, x0 < x1 ? x0 : x1)
/* integer Pow: by squaring, wrapping; a negative exponent gives what trunc(b^e) is (0 but for |b| = 1) */
static int64_t aotc_ipow(int64_t b, int64_t e) {
    uint64_t r = 1, x = (uint64_t)b;
    if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
    for (; e; e >>= 1) {
        if (e & 1) r *= x;
        x *= x;
    }
    return r <= (uint64_t)INT64_MAX ? (int64_t)r : (int64_t)(r - 9223372036854775808u) + INT64_MIN;
}
AOTC_SIGNED(AOTC_BINARY, pow, (in_t)aotc_ipow(x0, x1))
AOTC_SIGNED(AOTC_BINARY, fmod, SIGNED_REM)
AOTC_SIGNED(AOTC_BINARY, mod, SIGNED_MOD)
AOTC_UNSIGNED(AOTC_BINARY, fmod, x1 == 0 ? 0 : x0 % x1)
AOTC_UNSIGNED(AOTC_BINARY, mod, x1 == 0 ? 0 : x0 % x1)
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

AOTC_OTHER_SIGNED(AOTC_UNARY, neg, (in_t)(0u - (uint64_t)v))
AOTC_SIGNED(AOTC_UNARY, abs, v < 0 ? (in_t)(0u - (uint64_t)v) : v)
AOTC_UNSIGNED(AOTC_UNARY, abs, v)
AOTC_SIGNED(AOTC_UNARY, sign, (v > 0) - (v < 0))
AOTC_UNSIGNED(AOTC_UNARY, sign, v != 0)
AOTC_INTS(AOTC_UNARY, bitwise_not, ~v)
