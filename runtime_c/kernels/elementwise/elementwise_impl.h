/* Internal to the elementwise kernel files (elementwise*.c): the one loop body of each kernel shape,
 * stamped out per op and dtype. The ops live in files by use, so that a bundle compiles only the files
 * it calls (aot/emit_c/runtime_files.py): a file of every op for every dtype took gcc -O3 longer to
 * compile than the rest of a model's kernels. elementwise.c (the float32 arithmetic and activations most
 * float models use), elementwise_minmax.c (Max, Min, PRelu), elementwise_f64.c (float64 arithmetic),
 * elementwise_math.c (trigonometric, hyperbolic and the rarer float ops), elementwise_int.c (int32/int64
 * arithmetic: the shape arithmetic of exported graphs), elementwise_int_arith.c (that arithmetic on the
 * other integer dtypes), elementwise_int_mod.c (integer Pow and Mod), elementwise_int_bits.c (bitwise ops
 * and shifts), elementwise_int_unary.c (integer Neg, Abs, Sign, BitwiseNot), elementwise_equal.c,
 * elementwise_less.c and elementwise_greater.c (the comparisons) and elementwise_logic.c (bool logic,
 * NaN/Inf tests). */
#ifndef AOTC_ELEMENTWISE_IMPL_H
#define AOTC_ELEMENTWISE_IMPL_H

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

/* The integer dtypes split by use: int32/int64 (shape arithmetic: sizes, offsets, indices, which
 * exported detection and transformer graphs compute) in elementwise_int.c, the rest in
 * elementwise_int_arith.c. */
#define AOTC_WIDE_SIGNED(X, NAME, EXPR) X(NAME, i32, int32_t, int32_t, EXPR) X(NAME, i64, int64_t, int64_t, EXPR)
#define AOTC_OTHER_INTS(X, NAME, EXPR)                                                      \
    X(NAME, i8, int8_t, int8_t, EXPR) X(NAME, i16, int16_t, int16_t, EXPR) AOTC_UNSIGNED(X, NAME, EXPR)
#define AOTC_OTHER_SIGNED(X, NAME, EXPR) X(NAME, i8, int8_t, int8_t, EXPR) X(NAME, i16, int16_t, int16_t, EXPR)

/* wrapping integer arithmetic */
#define WRAP_ADD (in_t)((uint64_t)x0 + (uint64_t)x1)
#define WRAP_SUB (in_t)((uint64_t)x0 - (uint64_t)x1)
#define WRAP_MUL (in_t)((uint64_t)x0 * (uint64_t)x1)
#define SIGNED_DIV (x1 == 0 ? (in_t)0 : x1 == -1 ? (in_t)(0u - (uint64_t)x0) : (in_t)(x0 / x1))
/* truncated remainder (C's %, ONNX fmod=1) and floored remainder (sign of the divisor, fmod=0) */
#define SIGNED_REM (x1 == 0 || x1 == -1 ? (in_t)0 : (in_t)(x0 % x1))
#define SIGNED_MOD aotc_floor_mod(SIGNED_REM, x1)
#define aotc_floor_mod(rem, d) ((rem) != 0 && (((rem) < 0) != ((d) < 0)) ? (in_t)((rem) + (d)) : (rem))

#endif
