/* ONNX elementwise ops: float32 activations, and broadcasting binary ops, comparisons and the
 * integer, logical and bitwise ops for every dtype the IR holds (float32/64, int8/16/32/64,
 * uint8/16/32/64, bool as uint8_t). Reference kernels: portable C99, written so the compiler vectorises
 * the contiguous loops; no allocation, no globals. One kernel per op and dtype, already the
 * plain loop: it is the family's reference (no elementwise_ref.c; see kernels_ref.h).
 *
 * The per-dtype kernels come from one macro body each (AOTC_BINARY, AOTC_UNARY) instantiated
 * over type lists, so every dtype runs the same loop. Integer arithmetic is done in uint64_t
 * and narrowed, so overflow wraps as in onnxruntime instead of being undefined behaviour;
 * division and modulo by zero give 0 (onnxruntime traps), INT_MIN / -1 wraps. */
#include "aotc_elementwise.h"
#include "fast_math.h"

#include <math.h>

/* ---- binary ops with broadcasting ------------------------------------------
 * The innermost dim is a plain loop (three variants so each one vectorises:
 * both contiguous, a broadcast, b broadcast); outer dims advance an odometer.
 * EXPR reads x0 (of a) and x1 (of b), both of type in_t. */
#define AOTC_BINARY(NAME, SFX, T, TO, EXPR)                                                \
    void aotc_##NAME##_##SFX(const aotc_broadcast *p, const T *a, const T *b, TO *y) {    \
        typedef T in_t;                                                                   \
        typedef TO out_t;                                                                 \
        const int32_t r = p->rank;                                                        \
        const int32_t n = p->shape[r - 1];                                                \
        const int32_t sa = p->a_strides[r - 1], sb = p->b_strides[r - 1];                 \
        int32_t idx[AOTC_MAX_RANK] = {0};                                                 \
        int64_t outer = 1, ao = 0, bo = 0, o;                                             \
        int32_t i, k;                                                                     \
        for (k = 0; k < r - 1; ++k) outer *= p->shape[k];                                 \
        for (o = 0; o < outer; ++o) {                                                     \
            const in_t *pa = a + ao, *pb = b + bo;                                        \
            if (sa == 1 && sb == 1) {                                                     \
                for (i = 0; i < n; ++i) { const in_t x0 = pa[i], x1 = pb[i]; y[i] = (out_t)(EXPR); } \
            } else if (sa == 0 && sb == 1) {                                              \
                const in_t x0 = pa[0];                                                    \
                for (i = 0; i < n; ++i) { const in_t x1 = pb[i]; y[i] = (out_t)(EXPR); } \
            } else if (sa == 1 && sb == 0) {                                              \
                const in_t x1 = pb[0];                                                    \
                for (i = 0; i < n; ++i) { const in_t x0 = pa[i]; y[i] = (out_t)(EXPR); } \
            } else {                                                                      \
                for (i = 0; i < n; ++i) {                                                 \
                    const in_t x0 = pa[(int64_t)i * sa], x1 = pb[(int64_t)i * sb];        \
                    y[i] = (out_t)(EXPR);                                                 \
                }                                                                         \
            }                                                                             \
            y += n;                                                                       \
            for (k = r - 2; k >= 0; --k) { /* next outer index */                         \
                ao += p->a_strides[k];                                                    \
                bo += p->b_strides[k];                                                    \
                if (++idx[k] < p->shape[k]) break;                                        \
                ao -= (int64_t)p->a_strides[k] * p->shape[k];                             \
                bo -= (int64_t)p->b_strides[k] * p->shape[k];                             \
                idx[k] = 0;                                                               \
            }                                                                             \
        }                                                                                 \
    }

/* Type lists: X(NAME, suffix, C type, output C type, EXPR). */
#define AOTC_FLOATS(X, NAME, EXPR) X(NAME, f32, float, float, EXPR) X(NAME, f64, double, double, EXPR)
#define AOTC_SIGNED(X, NAME, EXPR)                                                          \
    X(NAME, i8, int8_t, int8_t, EXPR) X(NAME, i16, int16_t, int16_t, EXPR)                  \
    X(NAME, i32, int32_t, int32_t, EXPR) X(NAME, i64, int64_t, int64_t, EXPR)
#define AOTC_UNSIGNED(X, NAME, EXPR)                                                        \
    X(NAME, u8, uint8_t, uint8_t, EXPR) X(NAME, u16, uint16_t, uint16_t, EXPR)              \
    X(NAME, u32, uint32_t, uint32_t, EXPR) X(NAME, u64, uint64_t, uint64_t, EXPR)
#define AOTC_INTS(X, NAME, EXPR) AOTC_SIGNED(X, NAME, EXPR) AOTC_UNSIGNED(X, NAME, EXPR)
/* comparisons: same inputs, bool (uint8_t) output */
#define AOTC_CMP_ALL(NAME, EXPR)                                                            \
    AOTC_BINARY(NAME, f32, float, uint8_t, EXPR) AOTC_BINARY(NAME, f64, double, uint8_t, EXPR) \
    AOTC_BINARY(NAME, i8, int8_t, uint8_t, EXPR) AOTC_BINARY(NAME, i16, int16_t, uint8_t, EXPR) \
    AOTC_BINARY(NAME, i32, int32_t, uint8_t, EXPR) AOTC_BINARY(NAME, i64, int64_t, uint8_t, EXPR) \
    AOTC_BINARY(NAME, u8, uint8_t, uint8_t, EXPR) AOTC_BINARY(NAME, u16, uint16_t, uint8_t, EXPR) \
    AOTC_BINARY(NAME, u32, uint32_t, uint8_t, EXPR) AOTC_BINARY(NAME, u64, uint64_t, uint8_t, EXPR)

/* wrapping integer arithmetic */
#define WRAP_ADD (in_t)((uint64_t)x0 + (uint64_t)x1)
#define WRAP_SUB (in_t)((uint64_t)x0 - (uint64_t)x1)
#define WRAP_MUL (in_t)((uint64_t)x0 * (uint64_t)x1)
#define SIGNED_DIV (x1 == 0 ? (in_t)0 : x1 == -1 ? (in_t)(0u - (uint64_t)x0) : (in_t)(x0 / x1))
/* truncated remainder (C's %, ONNX fmod=1) and floored remainder (sign of the divisor, fmod=0) */
#define SIGNED_REM (x1 == 0 || x1 == -1 ? (in_t)0 : (in_t)(x0 % x1))
#define SIGNED_MOD aotc_floor_mod(SIGNED_REM, x1)
#define aotc_floor_mod(rem, d) ((rem) != 0 && (((rem) < 0) != ((d) < 0)) ? (in_t)((rem) + (d)) : (rem))

AOTC_FLOATS(AOTC_BINARY, add, x0 + x1)
AOTC_FLOATS(AOTC_BINARY, sub, x0 - x1)
AOTC_FLOATS(AOTC_BINARY, mul, x0 * x1)
AOTC_FLOATS(AOTC_BINARY, div, x0 / x1)
AOTC_INTS(AOTC_BINARY, add, WRAP_ADD)
AOTC_INTS(AOTC_BINARY, sub, WRAP_SUB)
AOTC_INTS(AOTC_BINARY, mul, WRAP_MUL)
AOTC_SIGNED(AOTC_BINARY, div, SIGNED_DIV)
AOTC_UNSIGNED(AOTC_BINARY, div, x1 == 0 ? 0 : x0 / x1)
/* NaN propagates, as in ONNX */
AOTC_FLOATS(AOTC_BINARY, max, (x0 > x1 || x0 != x0) ? x0 : x1)
AOTC_FLOATS(AOTC_BINARY, min, (x0 < x1 || x0 != x0) ? x0 : x1)
AOTC_INTS(AOTC_BINARY, max, x0 > x1 ? x0 : x1)
AOTC_INTS(AOTC_BINARY, min, x0 < x1 ? x0 : x1)
AOTC_BINARY(pow, f32, float, float, powf(x0, x1))
AOTC_BINARY(pow, f64, double, double, pow(x0, x1))
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
AOTC_BINARY(prelu, f32, float, float, x0 < 0.0f ? x0 * x1 : x0)
/* Mod: fmod=1 is C's fmod/% (sign of the dividend), fmod=0 Python's (sign of the divisor) */
AOTC_BINARY(fmod, f32, float, float, fmodf(x0, x1))
AOTC_BINARY(fmod, f64, double, double, fmod(x0, x1))
/* floored (fmod=0; numpy's np.mod): the remainder takes the divisor's sign, a zero one too */
#define FLOAT_MOD(FMOD, R) ((R) = FMOD(x0, x1), (R) == 0 ? copysign(0.0, x1) : (((R) < 0) != (x1 < 0)) ? (R) + x1 : (R))
static float aotc_mod_float(float x0, float x1) { float r; return (float)FLOAT_MOD(fmodf, r); }
static double aotc_mod_double(double x0, double x1) { double r; return FLOAT_MOD(fmod, r); }
AOTC_BINARY(mod, f32, float, float, aotc_mod_float(x0, x1))
AOTC_BINARY(mod, f64, double, double, aotc_mod_double(x0, x1))
AOTC_SIGNED(AOTC_BINARY, fmod, SIGNED_REM)
AOTC_SIGNED(AOTC_BINARY, mod, SIGNED_MOD)
AOTC_UNSIGNED(AOTC_BINARY, fmod, x1 == 0 ? 0 : x0 % x1)
AOTC_UNSIGNED(AOTC_BINARY, mod, x1 == 0 ? 0 : x0 % x1)

AOTC_CMP_ALL(equal, x0 == x1)
AOTC_BINARY(equal, b8, uint8_t, uint8_t, (x0 != 0) == (x1 != 0))
AOTC_CMP_ALL(less, x0 < x1)
AOTC_CMP_ALL(less_equal, x0 <= x1)
AOTC_CMP_ALL(greater, x0 > x1)
AOTC_CMP_ALL(greater_equal, x0 >= x1)

AOTC_BINARY(and, b8, uint8_t, uint8_t, (x0 != 0) & (x1 != 0))
AOTC_BINARY(or, b8, uint8_t, uint8_t, (x0 != 0) | (x1 != 0))
AOTC_BINARY(xor, b8, uint8_t, uint8_t, (x0 != 0) ^ (x1 != 0))
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

/* ---- unary ops -----------------------------------------------------------
 * EXPR reads v, of type in_t. In place (x == y) the loops still vectorise: the compiler's
 * run-time overlap check lets a distance of 0 through. */
#define AOTC_UNARY(NAME, SFX, T, TO, EXPR)                           \
    void aotc_##NAME##_##SFX(size_t n, const T *x, TO *y) {         \
        typedef T in_t;                                              \
        typedef TO out_t;                                            \
        size_t i;                                                    \
        for (i = 0; i < n; ++i) {                                    \
            const in_t v = x[i];                                     \
            y[i] = (out_t)(EXPR);                                    \
        }                                                            \
    }
#define AOTC_UNARY_F32(NAME, EXPR) AOTC_UNARY(NAME, f32, float, float, EXPR)

AOTC_UNARY_F32(relu, v > 0.0f ? v : 0.0f)
/* Sigmoid, Tanh and the activations made of e^x: fast_math.h, so the loops vectorise (within 3 ulp) */
AOTC_UNARY_F32(sigmoid, aotc_sigmoid_poly(v))
AOTC_UNARY_F32(tanh, aotc_tanh_poly(v))
AOTC_UNARY_F32(hard_swish, v * fminf(fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f))
AOTC_UNARY_F32(exp, expf(v))
AOTC_UNARY_F32(log, logf(v))
AOTC_UNARY_F32(sqrt, sqrtf(v))
AOTC_UNARY_F32(erf, erff(v))
AOTC_UNARY_F32(reciprocal, 1.0f / v)
AOTC_UNARY_F32(floor, floorf(v))
AOTC_UNARY_F32(ceil, ceilf(v))
/* Round: half to even, as rintf in the default rounding mode */
AOTC_UNARY_F32(round, rintf(v))
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
AOTC_UNARY(isnan, f32, float, uint8_t, v != v)
AOTC_UNARY(isinf, f32, float, uint8_t, isinf(v) != 0)
AOTC_UNARY(isinf_pos, f32, float, uint8_t, isinf(v) && v > 0.0f)
AOTC_UNARY(isinf_neg, f32, float, uint8_t, isinf(v) && v < 0.0f)
/* ONNX Gelu (opset 20): approximate "none" with erf, "tanh" with the tanh formula */
AOTC_UNARY_F32(gelu, 0.5f * v * (1.0f + aotc_erf_poly(v * 0.70710678118654752440f))) /* GELU: erf in registers (fast_math.h) */
AOTC_UNARY_F32(gelu_tanh, 0.5f * v * (1.0f + aotc_tanh_poly(0.79788456080286535588f * (v + 0.044715f * v * v * v))))

/* every dtype: neg and abs wrap for the most negative integer, as onnxruntime's do */
AOTC_FLOATS(AOTC_UNARY, neg, -v)
AOTC_SIGNED(AOTC_UNARY, neg, (in_t)(0u - (uint64_t)v))
AOTC_UNARY(abs, f32, float, float, fabsf(v))
AOTC_UNARY(abs, f64, double, double, fabs(v))
AOTC_SIGNED(AOTC_UNARY, abs, v < 0 ? (in_t)(0u - (uint64_t)v) : v)
AOTC_UNSIGNED(AOTC_UNARY, abs, v)
AOTC_FLOATS(AOTC_UNARY, sign, (v > 0) - (v < 0))
AOTC_SIGNED(AOTC_UNARY, sign, (v > 0) - (v < 0))
AOTC_UNSIGNED(AOTC_UNARY, sign, v != 0)
AOTC_UNARY(not, b8, uint8_t, uint8_t, v == 0)
AOTC_INTS(AOTC_UNARY, bitwise_not, ~v)

/* The float kernels with parameters: y[i] = EXPR of v = x[i]. */
#define AOTC_MAP_F32(EXPR)                                                  \
    do {                                                                    \
        size_t i;                                                           \
        for (i = 0; i < n; ++i) { const float v = x[i]; y[i] = (EXPR); }    \
    } while (0)

/* Swish (opset 24) x * sigmoid(alpha x); with alpha = 1 the SiLU that Sigmoid -> Mul is fused into
 * (aot/passes/fuse_activation.py). */
void aotc_swish_f32(size_t n, const float *x, float *y, float alpha) { AOTC_MAP_F32(v * aotc_sigmoid_poly(alpha * v)); }

void aotc_leaky_relu_f32(size_t n, const float *x, float *y, float alpha) { AOTC_MAP_F32(v >= 0.0f ? v : alpha * v); }

void aotc_elu_f32(size_t n, const float *x, float *y, float alpha) {
    AOTC_MAP_F32(v >= 0.0f ? v : alpha * aotc_expm1_poly(v));
}

void aotc_selu_f32(size_t n, const float *x, float *y, float alpha, float gamma) {
    AOTC_MAP_F32(gamma * (v > 0.0f ? v : alpha * aotc_expm1_poly(v)));
}

void aotc_celu_f32(size_t n, const float *x, float *y, float alpha) {
    AOTC_MAP_F32(fmaxf(0.0f, v) + fminf(0.0f, alpha * aotc_expm1_poly(v / alpha)));
}

void aotc_thresholded_relu_f32(size_t n, const float *x, float *y, float alpha) { AOTC_MAP_F32(v > alpha ? v : 0.0f); }

void aotc_shrink_f32(size_t n, const float *x, float *y, float lambd, float bias) {
    AOTC_MAP_F32(v < -lambd ? v + bias : v > lambd ? v - bias : 0.0f);
}

/* min(max(v, lo), hi), in that order (lo > hi gives hi, as ONNX says); NaN stays NaN */
static inline float clamp_f32(float v, float lo, float hi) {
    const float a = v < lo ? lo : v;
    return a > hi ? hi : a;
}

void aotc_clip_f32(size_t n, const float *x, float *y, float lo, float hi) { AOTC_MAP_F32(clamp_f32(v, lo, hi)); }

void aotc_hard_sigmoid_f32(size_t n, const float *x, float *y, float alpha, float beta) {
    AOTC_MAP_F32(fmaxf(0.0f, fminf(1.0f, alpha * v + beta)));
}
