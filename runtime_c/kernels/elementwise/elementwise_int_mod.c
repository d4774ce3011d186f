/* ONNX Pow, Mod and Mod(fmod=1) on integers of every width: Pow by squaring, wrapping as onnxruntime's
 * does; modulo by zero gives 0 (see elementwise_impl.h). */
#include "elementwise_impl.h"

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
