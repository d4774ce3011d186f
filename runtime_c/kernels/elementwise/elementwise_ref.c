/* Reference kernels of the elementwise family (declared in kernels_ref.h): each op's definition on
 * one element, the output's elements in order, each operand's element found from the output's
 * multi-index and the operand's strides. Integers in 64 bits (wrapping as two's complement, by
 * unsigned arithmetic); float math in double. Stamped per dtype, as the kernels are. */
#include "kernels_ref.h"

#include <math.h>

/* ---- binary ops: y[e] = OP(a at e, b at e) ------------------------------------------------- */
#define REF_BINARY(NAME, SFX, T, TO, OP)                                                            \
    void aotc_##NAME##_ref_##SFX(const aotc_broadcast *p, const T *a, const T *b, TO *y) {         \
        int64_t total = 1, e, rest, ai, bi;                                                         \
        int32_t k;                                                                                  \
        for (k = 0; k < p->rank; ++k) total *= p->shape[k];                                         \
        for (e = 0; e < total; ++e) {                                                               \
            for (rest = e, ai = bi = 0, k = p->rank - 1; k >= 0; --k) {                             \
                ai += rest % p->shape[k] * p->a_strides[k];                                         \
                bi += rest % p->shape[k] * p->b_strides[k];                                         \
                rest /= p->shape[k];                                                                \
            }                                                                                       \
            y[e] = (TO)OP(a[ai], b[bi]);                                                            \
        }                                                                                           \
    }
#define REF_UNARY(NAME, SFX, T, TO, OP)                                                             \
    void aotc_##NAME##_ref_##SFX(size_t n, const T *x, TO *y) {                                     \
        size_t i;                                                                                   \
        for (i = 0; i < n; ++i) y[i] = (TO)OP(x[i]);                                                \
    }

/* dtype lists: X(NAME, suffix, type, output type, OP) */
#define FLOATS(X, NAME, OP) X(NAME, f32, float, float, OP) X(NAME, f64, double, double, OP)
#define SIGNED(X, NAME, OP)                                                                         \
    X(NAME, i8, int8_t, int8_t, OP) X(NAME, i16, int16_t, int16_t, OP) X(NAME, i32, int32_t, int32_t, OP) \
    X(NAME, i64, int64_t, int64_t, OP)
#define UNSIGNED(X, NAME, OP)                                                                       \
    X(NAME, u8, uint8_t, uint8_t, OP) X(NAME, u16, uint16_t, uint16_t, OP)                          \
    X(NAME, u32, uint32_t, uint32_t, OP) X(NAME, u64, uint64_t, uint64_t, OP)
#define COMPARE(NAME, OP)                                                                           \
    REF_BINARY(NAME, f32, float, uint8_t, OP) REF_BINARY(NAME, f64, double, uint8_t, OP)             \
    REF_BINARY(NAME, i8, int8_t, uint8_t, OP) REF_BINARY(NAME, i16, int16_t, uint8_t, OP)            \
    REF_BINARY(NAME, i32, int32_t, uint8_t, OP) REF_BINARY(NAME, i64, int64_t, uint8_t, OP)          \
    REF_BINARY(NAME, u8, uint8_t, uint8_t, OP) REF_BINARY(NAME, u16, uint16_t, uint8_t, OP)          \
    REF_BINARY(NAME, u32, uint32_t, uint8_t, OP) REF_BINARY(NAME, u64, uint64_t, uint8_t, OP)

/* arithmetic: floats in double, rounded once (exact for +, -, *, / of floats); integers wrap */
#define ADD(x, y) ((x) + (y))
#define SUB(x, y) ((x) - (y))
#define MUL(x, y) ((x) * (y))
#define DIV(x, y) ((x) / (y))
#define FADD(x, y) ((double)(x) + (double)(y))
#define FSUB(x, y) ((double)(x) - (double)(y))
#define FMUL(x, y) ((double)(x) * (double)(y))
#define FDIV(x, y) ((double)(x) / (double)(y))
#define WADD(x, y) ((uint64_t)(x) + (uint64_t)(y))
#define WSUB(x, y) ((uint64_t)(x) - (uint64_t)(y))
#define WMUL(x, y) ((uint64_t)(x) * (uint64_t)(y))
FLOATS(REF_BINARY, add, FADD) SIGNED(REF_BINARY, add, WADD) UNSIGNED(REF_BINARY, add, WADD)
FLOATS(REF_BINARY, sub, FSUB) SIGNED(REF_BINARY, sub, WSUB) UNSIGNED(REF_BINARY, sub, WSUB)
FLOATS(REF_BINARY, mul, FMUL) SIGNED(REF_BINARY, mul, WMUL) UNSIGNED(REF_BINARY, mul, WMUL)

/* integer Div truncates toward 0; x / 0 gives 0 and INT_MIN / -1 wraps (to INT_MIN) */
static int64_t sdiv(int64_t x, int64_t y) { return y == 0 ? 0 : y == -1 ? (int64_t)(0u - (uint64_t)x) : x / y; }
static uint64_t udiv(uint64_t x, uint64_t y) { return y == 0 ? 0 : x / y; }
#define SDIV(x, y) sdiv(x, y)
#define UDIV(x, y) udiv(x, y)
FLOATS(REF_BINARY, div, FDIV) SIGNED(REF_BINARY, div, SDIV) UNSIGNED(REF_BINARY, div, UDIV)

/* Max, Min: NaN in either operand is the result (the first's when both are) */
#define FMAX(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) > (y) ? (x) : (y))
#define FMIN(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) < (y) ? (x) : (y))
#define IMAX(x, y) ((x) > (y) ? (x) : (y))
#define IMIN(x, y) ((x) < (y) ? (x) : (y))
FLOATS(REF_BINARY, max, FMAX) SIGNED(REF_BINARY, max, IMAX) UNSIGNED(REF_BINARY, max, IMAX)
FLOATS(REF_BINARY, min, FMIN) SIGNED(REF_BINARY, min, IMIN) UNSIGNED(REF_BINARY, min, IMIN)

/* Pow: floats by libm's pow in double; integers b^e multiplied out e times, wrapping; e < 0 gives
 * trunc(b^e): 1 for b = 1, +-1 for b = -1, else 0 (0^e included: x / 0 gives 0) */
static int64_t ipow(int64_t b, int64_t e) {
    uint64_t r = 1;
    int64_t i;
    if (e < 0) return b == 1 ? 1 : b == -1 ? (e % 2 == 0 ? 1 : -1) : 0;
    for (i = 0; i < e; ++i) r *= (uint64_t)b;
    return (int64_t)r;
}
#define FPOW(x, y) pow((double)(x), (double)(y))
#define IPOW(x, y) ipow(x, y)
FLOATS(REF_BINARY, pow, FPOW) SIGNED(REF_BINARY, pow, IPOW)

#define PRELU(x, s) ((x) < 0.0f ? (double)(x) * (double)(s) : (double)(x))
REF_BINARY(prelu, f32, float, float, PRELU)

/* Mod, fmod = 1: the remainder of truncated division (sign of the dividend); fmod = 0: of floored
 * division (sign of the divisor). Floats: fmod is exact; the floored one adds the divisor to a
 * remainder of the other sign, in the tensor's type, and a zero takes the divisor's sign. */
static int64_t srem(int64_t x, int64_t y) { return y == 0 || y == -1 ? 0 : x - y * (x / y); }
static int64_t smod(int64_t x, int64_t y) {
    const int64_t r = srem(x, y);
    return r != 0 && (r < 0) != (y < 0) ? r + y : r;
}
static float fmod_floored_f(float x, float y) {
    const float r = (float)fmod(x, y);
    return r == 0.0f ? (float)copysign(0.0, y) : (r < 0.0f) != (y < 0.0f) ? r + y : r;
}
static double fmod_floored_d(double x, double y) {
    const double r = fmod(x, y);
    return r == 0.0 ? copysign(0.0, y) : (r < 0.0) != (y < 0.0) ? r + y : r;
}
#define FREM(x, y) fmod((double)(x), (double)(y))
#define SREM(x, y) srem(x, y)
#define UREM(x, y) ((y) == 0 ? 0 : (x) % (y))
#define SMOD(x, y) smod(x, y)
REF_BINARY(fmod, f32, float, float, FREM) REF_BINARY(fmod, f64, double, double, FREM)
SIGNED(REF_BINARY, fmod, SREM) UNSIGNED(REF_BINARY, fmod, UREM)
REF_BINARY(mod, f32, float, float, fmod_floored_f) REF_BINARY(mod, f64, double, double, fmod_floored_d)
SIGNED(REF_BINARY, mod, SMOD) UNSIGNED(REF_BINARY, mod, UREM)

/* comparisons (any NaN compares false), logic on bools (non-zero is true), bitwise ops */
#define EQ(x, y) ((x) == (y))
#define LT(x, y) ((x) < (y))
#define LE(x, y) ((x) <= (y))
#define GT(x, y) ((x) > (y))
#define GE(x, y) ((x) >= (y))
COMPARE(equal, EQ) COMPARE(less, LT) COMPARE(less_equal, LE) COMPARE(greater, GT) COMPARE(greater_equal, GE)
#define BEQ(x, y) (((x) != 0) == ((y) != 0))
#define BAND(x, y) ((x) != 0 && (y) != 0)
#define BOR(x, y) ((x) != 0 || (y) != 0)
#define BXOR(x, y) (((x) != 0) != ((y) != 0))
REF_BINARY(equal, b8, uint8_t, uint8_t, BEQ)
REF_BINARY(and, b8, uint8_t, uint8_t, BAND) REF_BINARY(or, b8, uint8_t, uint8_t, BOR)
REF_BINARY(xor, b8, uint8_t, uint8_t, BXOR)
#define AND(x, y) ((x) & (y))
#define OR(x, y) ((x) | (y))
#define XOR(x, y) ((x) ^ (y))
SIGNED(REF_BINARY, bitwise_and, AND) UNSIGNED(REF_BINARY, bitwise_and, AND)
SIGNED(REF_BINARY, bitwise_or, OR) UNSIGNED(REF_BINARY, bitwise_or, OR)
SIGNED(REF_BINARY, bitwise_xor, XOR) UNSIGNED(REF_BINARY, bitwise_xor, XOR)

/* BitShift by s of a `bits`-bit value: left, x * 2^s wrapped; right, floor(x / 2^s) (signed: the
 * sign fills in); a shift below 0 or of the width or more leaves 0, or (signed right) the sign. */
static int64_t shl(int64_t x, int64_t s, int bits) { return s < 0 || s >= bits ? 0 : (int64_t)((uint64_t)x << s); }
static int64_t sshr(int64_t x, int64_t s, int bits) {
    int64_t d, q;
    if (s < 0 || s >= bits || s >= 63) return x < 0 ? -1 : 0;
    d = (int64_t)1 << s, q = x / d;
    return q * d != x && x < 0 ? q - 1 : q; /* floor */
}
static uint64_t ushr(uint64_t x, uint64_t s, int bits) { return s >= (uint64_t)bits ? 0 : x >> s; }
#define SHL(x, y) shl(x, y, (int)(8 * sizeof(x)))
#define USHL(x, y) ((y) >= 8 * sizeof(x) ? 0 : (uint64_t)(x) << (y))
#define SSHR(x, y) sshr(x, y, (int)(8 * sizeof(x)))
#define USHR(x, y) ushr(x, y, (int)(8 * sizeof(x)))
SIGNED(REF_BINARY, shift_left, SHL) UNSIGNED(REF_BINARY, shift_left, USHL)
SIGNED(REF_BINARY, shift_right, SSHR) UNSIGNED(REF_BINARY, shift_right, USHR)

/* ---- unary ops ------------------------------------------------------------------------------ */
/* rint's half to even, written out: the nearest integer, the even one of two at a tie */
static double round_half_even(double v) {
    const double f = floor(v), d = v - f;
    if (!(fabs(v) < 4503599627370496.0)) return v; /* 2^52 and up (and inf, NaN): already integers */
    if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0)) return f + 1.0;
    return f;
}
static double hard_swish(double v) { return v * fmax(0.0, fmin(1.0, v / 6.0 + 0.5)); }
static double softplus(double v) { return v > 0.0 ? v + log1p(exp(-v)) : log1p(exp(v)); }
static double gelu(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }
static double gelu_tanh(double v) { return 0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v))); }
static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }
#define RELU(v) ((v) != (v) ? (double)(v) : (v) < 0.0f ? 0.0 : (double)(v))
#define D(F) static double F##_d(float v) { return F((double)v); }
D(sigmoid) D(tanh) D(hard_swish) D(exp) D(log) D(sqrt) D(erf) D(floor) D(ceil) D(round_half_even) D(softplus)
D(sin) D(cos) D(tan) D(asin) D(acos) D(atan) D(sinh) D(cosh) D(asinh) D(acosh) D(atanh) D(gelu) D(gelu_tanh)
#undef D
#define RECIP(v) (1.0 / (double)(v))
#define SOFTSIGN(v) ((double)(v) / (1.0 + fabs((double)(v))))
#define U32(NAME, OP) REF_UNARY(NAME, f32, float, float, OP)
U32(relu, RELU) U32(sigmoid, sigmoid_d) U32(tanh, tanh_d) U32(hard_swish, hard_swish_d) U32(exp, exp_d)
U32(log, log_d) U32(sqrt, sqrt_d) U32(erf, erf_d) U32(reciprocal, RECIP) U32(floor, floor_d) U32(ceil, ceil_d)
U32(round, round_half_even_d) U32(softplus, softplus_d) U32(softsign, SOFTSIGN) U32(sin, sin_d) U32(cos, cos_d)
U32(tan, tan_d) U32(asin, asin_d) U32(acos, acos_d) U32(atan, atan_d) U32(sinh, sinh_d) U32(cosh, cosh_d)
U32(asinh, asinh_d) U32(acosh, acosh_d) U32(atanh, atanh_d) U32(gelu, gelu_d) U32(gelu_tanh, gelu_tanh_d)
REF_UNARY(exp, f64, double, double, exp) REF_UNARY(log, f64, double, double, log)
REF_UNARY(sqrt, f64, double, double, sqrt)
#define ISNAN(v) ((v) != (v))
#define ISINF(v) ((v) == INFINITY || (v) == -INFINITY)
#define ISINF_POS(v) ((v) == INFINITY)
#define ISINF_NEG(v) ((v) == -INFINITY)
REF_UNARY(isnan, f32, float, uint8_t, ISNAN) REF_UNARY(isinf, f32, float, uint8_t, ISINF)
REF_UNARY(isinf_pos, f32, float, uint8_t, ISINF_POS) REF_UNARY(isinf_neg, f32, float, uint8_t, ISINF_NEG)
/* Sign: -1, 0 or 1 (NaN: 0); Neg and Abs of the most negative integer wrap to itself */
#define SIGN(v) (((v) > 0) - ((v) < 0))
#define USIGN(v) ((v) != 0)
#define NEG(v) (-(v))
#define WNEG(v) (0u - (uint64_t)(v))
#define FABS(v) fabs((double)(v))
#define IABS(v) ((v) < 0 ? 0u - (uint64_t)(v) : (uint64_t)(v))
#define UABS(v) (v)
FLOATS(REF_UNARY, sign, SIGN) SIGNED(REF_UNARY, sign, SIGN) UNSIGNED(REF_UNARY, sign, USIGN)
FLOATS(REF_UNARY, neg, NEG) SIGNED(REF_UNARY, neg, WNEG)
FLOATS(REF_UNARY, abs, FABS) SIGNED(REF_UNARY, abs, IABS) UNSIGNED(REF_UNARY, abs, UABS)
#define NOT(v) ((v) == 0)
#define BNOT(v) (~(v))
REF_UNARY(not, b8, uint8_t, uint8_t, NOT)
SIGNED(REF_UNARY, bitwise_not, BNOT) UNSIGNED(REF_UNARY, bitwise_not, BNOT)

/* ---- activations with attributes: y[i] = F(x[i]) ------------------------------------------- */
#define MAP(EXPR)                                                                                   \
    do {                                                                                            \
        size_t i;                                                                                   \
        for (i = 0; i < n; ++i) {                                                                   \
            const double v = x[i];                                                                  \
            y[i] = (float)(EXPR);                                                                   \
        }                                                                                           \
    } while (0)

/* Swish: x sigmoid(alpha x), alpha x the op's float product (its function body's Mul) */
void aotc_swish_ref_f32(size_t n, const float *x, float *y, float alpha) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = (float)(x[i] * sigmoid((double)(alpha * x[i])));
}
void aotc_leaky_relu_ref_f32(size_t n, const float *x, float *y, float alpha) { MAP(v >= 0.0 ? v : (float)(alpha * v)); }
void aotc_elu_ref_f32(size_t n, const float *x, float *y, float alpha) { MAP(v >= 0.0 ? v : alpha * expm1(v)); }
void aotc_selu_ref_f32(size_t n, const float *x, float *y, float alpha, float gamma) {
    MAP(v > 0.0 ? (float)(gamma * v) : gamma * (alpha * expm1(v)));
}
/* max(0, x) + min(0, alpha (e^(x / alpha) - 1)) */
void aotc_celu_ref_f32(size_t n, const float *x, float *y, float alpha) {
    MAP(v != v ? v : fmax(0.0, v) + fmin(0.0, alpha * expm1(v / alpha)));
}
void aotc_thresholded_relu_ref_f32(size_t n, const float *x, float *y, float alpha) { MAP(v > alpha ? v : 0.0); }
void aotc_shrink_ref_f32(size_t n, const float *x, float *y, float lambd, float bias) {
    MAP(v < -lambd ? (float)(x[i] + bias) : v > lambd ? (float)(x[i] - bias) : 0.0);
}
/* Clip: min(max(x, lo), hi) (lo > hi gives hi); NaN stays NaN */
void aotc_clip_ref_f32(size_t n, const float *x, float *y, float lo, float hi) {
    MAP(v != v ? v : fmin(fmax(v, lo), hi));
}
/* HardSigmoid: max(0, min(1, alpha x + beta)), alpha x + beta the op's float arithmetic; NaN stays NaN */
void aotc_hard_sigmoid_ref_f32(size_t n, const float *x, float *y, float alpha, float beta) {
    MAP(v != v ? v : fmax(0.0, fmin(1.0, (float)(alpha * x[i] + beta))));
}
