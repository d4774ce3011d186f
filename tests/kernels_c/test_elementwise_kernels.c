/* The elementwise kernels (aotc_elementwise.h, elementwise*.c) against the references
 * (elementwise_ref.c): every entry point of every dtype. Binary ops over random broadcasts (ranks 1
 * to 8, either operand broadcast on any dims, a scalar, or read through permuted strides: each of
 * the kernel's four inner loops), in place (y = a) half of the time where the output has the
 * input's type and layout; unary ops on 0 to 9,000 elements (past Swish's runs of 4096), in place
 * half of the time. Inputs: floats of magnitudes 2^-4 to 2^4, integers and halves (Floor, Round's
 * ties), and one in 16 a special value (NaN, +-inf, +-0, +-FLT_MAX, subnormals); integers small
 * (0, +-1: division by zero, INT_MIN / -1), extreme (MIN, MAX) or random over the type; shift
 * amounts from -2 to the width + 2, exponents from -3 to 40; bools 0 and 1. Buffers of exactly their
 * size; the inputs must come back unchanged (unless written in place).
 * Exact: integers, bools, comparisons, float64 (the same double arithmetic and libm calls), and the
 * float ops that are one IEEE operation or a selection (+ - * / sqrt, 1 / x, Max, Min, Relu, Abs,
 * Floor, Ceil, Round, Fmod, Clip, HardSigmoid, ...: the reference's double result rounds to the
 * same float). Within a tolerance, u = 2^-24, ulps of the reference:
 *   libm's float functions (Exp, Log, Sin, ..., Erf, Pow, Softplus): 4 ulp (C does not require
 *     them correctly rounded; glibc's and newlib's are within 1 to 3);
 *   fast_math.h (its documented bounds, + the float steps around them): Sigmoid 3.5 ulp (+ 1.2e-38
 *     below e^-87.3, where it gives 0), Tanh 3, Elu 3, Selu and Celu 4 (Celu's x / alpha rounded:
 *     < 1 ulp more), Swish 6 (its AVX-512 path within 5 of x sigmoid(alpha x); + |x| 1.2e-38),
 *     Gelu |x| 2e-7 + 3 ulp (erf's absolute 1.5e-7 times x / 2, and the rounding of x / sqrt 2),
 *     Gelu tanh |x| 2.5e-7 + 3 ulp (tanh's 2.6 ulp and its argument's rounding, times x / 2);
 *   HardSwish 4 u |x| + 2 ulp (x / 6 + 1/2 rounded in float near its zero at -3); Softsign 2 ulp
 *     (two roundings); floored Mod 1 ulp (the reference's r + divisor rounds twice).
 *
 *     test_elementwise_kernels [seed] [shapes per entry point] */
#include "aotc_elementwise.h"
#include "kernels_ref.h"
#include "test_compare.h"

#define U (1.0 / 16777216.0)

#define T_f32 float
#define T_f64 double
#define T_i8 int8_t
#define T_i16 int16_t
#define T_i32 int32_t
#define T_i64 int64_t
#define T_u8 uint8_t
#define T_u16 uint16_t
#define T_u32 uint32_t
#define T_u64 uint64_t
#define T_b8 uint8_t

/* ---- values -------------------------------------------------------------------------------- */
enum { PLAIN, SHIFT, EXPONENT };

static uint64_t rand64(void) { return (uint64_t)test_next() << 32 | test_next(); }

static float gen_f32(int role) {
    (void)role;
    if (chance(1, 16)) return test_special_float(1);
    if (chance(1, 8)) return (float)rand_int(-20, 20) * 0.5f;
    return test_scaled_float(-4, 4);
}
static double gen_f64(int role) {
    (void)role;
    if (chance(1, 16)) return (double)test_special_float(1);
    if (chance(1, 8)) return (double)rand_int(-20, 20) * 0.5;
    return ldexp((double)rand_float() + (double)rand_float() * (1.0 / 16777216.0), (int)rand_int(-4, 4));
}
static uint8_t gen_b8(int role) {
    (void)role;
    return (uint8_t)chance(1, 2);
}
/* an integer of the type: small, extreme or random bits (the cast keeps the low bits) */
#define GEN_INT(SFX, T, BITS, IS_SIGNED, MIN, MAX)                                                  \
    static T gen_##SFX(int role) {                                                                  \
        const int32_t kind = rand_int(0, 7);                                                        \
        if (role == SHIFT) return (T)rand_int(IS_SIGNED ? -2 : 0, BITS + 2);                        \
        if (role == EXPONENT) return (T)rand_int(-3, 40);                                           \
        if (kind <= 1) return (T)(IS_SIGNED ? rand_int(-3, 3) : rand_int(0, 6));                    \
        if (kind == 2) return (T)(chance(1, 2) ? (MIN) : (MAX));                                    \
        return (T)rand64();                                                                         \
    }
GEN_INT(i8, int8_t, 8, 1, INT8_MIN, INT8_MAX)
GEN_INT(i16, int16_t, 16, 1, INT16_MIN, INT16_MAX)
GEN_INT(i32, int32_t, 32, 1, INT32_MIN, INT32_MAX)
GEN_INT(i64, int64_t, 64, 1, INT64_MIN, INT64_MAX)
GEN_INT(u8, uint8_t, 8, 0, 0, UINT8_MAX)
GEN_INT(u16, uint16_t, 16, 0, 0, UINT16_MAX)
GEN_INT(u32, uint32_t, 32, 0, 0, UINT32_MAX)
GEN_INT(u64, uint64_t, 64, 0, 0, UINT64_MAX)

/* ---- tolerances (float32 outputs; v the input of a unary op, r the reference) ------------- */
typedef double (*tol_fn)(double v, double r);
static double tol_exact(double v, double r) { (void)v, (void)r; return 0.0; }
static double tol_libm(double v, double r) { (void)v; return test_ulps(r, 4.0); }
static double tol_mod(double v, double r) { (void)v; return test_ulps(r, 1.0); }
static double tol_softsign(double v, double r) { (void)v; return test_ulps(r, 2.0); }
static double tol_sigmoid(double v, double r) { (void)v; return test_ulps(r, 3.5) + 1.2e-38; }
static double tol_tanh(double v, double r) { (void)v; return test_ulps(r, 3.0); }
static double tol_hard_swish(double v, double r) { return 4.0 * U * fabs(v) + test_ulps(r, 2.0); }
static double tol_gelu(double v, double r) { return 2e-7 * fabs(v) + test_ulps(r, 3.0); }
static double tol_gelu_tanh(double v, double r) { return 2.5e-7 * fabs(v) + test_ulps(r, 3.0); }
static double tol_swish(double v, double r) { return test_ulps(r, 6.0) + 1.2e-38 * fabs(v); }
static double tol_elu(double v, double r) { (void)v; return test_ulps(r, 3.0); }
static double tol_selu(double v, double r) { (void)v; return test_ulps(r, 4.0); }

/* ---- comparisons --------------------------------------------------------------------------- */
static int differs_f32(const char *what, const float *x, const float *y, const float *ref, size_t n, tol_fn tol) {
    size_t i;
    for (i = 0; i < n; ++i) {
        const double t = tol(x != NULL ? (double)x[i] : 0.0, (double)ref[i]);
        if (!(y[i] == ref[i]) && !(y[i] != y[i] && ref[i] != ref[i]) && !(fabs((double)y[i] - (double)ref[i]) <= t)) {
            printf("%s: element %lu of %lu is %.9g, reference %.9g (tolerance %.3g)", what, (unsigned long)i,
                   (unsigned long)n, (double)y[i], (double)ref[i], t);
            if (x != NULL) printf(", input %.9g", (double)x[i]);
            printf("\n");
            return 1;
        }
    }
    return 0;
}
static int differs_f64(const char *what, const double *x, const double *y, const double *ref, size_t n, tol_fn tol) {
    size_t i;
    (void)tol; /* float64: exact */
    for (i = 0; i < n; ++i) {
        if (!(y[i] == ref[i]) && !(y[i] != y[i] && ref[i] != ref[i])) {
            printf("%s: element %lu of %lu is %.17g, reference %.17g", what, (unsigned long)i, (unsigned long)n, y[i], ref[i]);
            if (x != NULL) printf(", input %.17g", x[i]);
            printf("\n");
            return 1;
        }
    }
    return 0;
}
#define DIFFERS_INT(SFX)                                                                            \
    static int differs_##SFX(const char *what, const T_##SFX *x, const T_##SFX *y, const T_##SFX *ref, size_t n, \
                             tol_fn tol) {                                                          \
        size_t i;                                                                                   \
        (void)x, (void)tol;                                                                         \
        for (i = 0; i < n; ++i) {                                                                   \
            if (y[i] != ref[i]) {                                                                   \
                printf("%s: element %lu of %lu is %lld, reference %lld\n", what, (unsigned long)i,  \
                       (unsigned long)n, (long long)y[i], (long long)ref[i]);                       \
                return 1;                                                                           \
            }                                                                                       \
        }                                                                                           \
        return 0;                                                                                   \
    }
DIFFERS_INT(i8) DIFFERS_INT(i16) DIFFERS_INT(i32) DIFFERS_INT(i64) DIFFERS_INT(u8) DIFFERS_INT(u16)
DIFFERS_INT(u32) DIFFERS_INT(u64)
/* bool outputs and the unary ops from floats to bools: x is not of the output's type */
static int differs_b8(const char *what, const void *x, const uint8_t *y, const uint8_t *ref, size_t n, tol_fn tol) {
    (void)x;
    return differs_u8(what, NULL, y, ref, n, tol);
}

/* ---- broadcasts ---------------------------------------------------------------------------- */
typedef struct {
    aotc_broadcast p;
    size_t an, bn, yn;
    int a_like_y; /* a has y's shape and layout: y may be a */
} bcase;

/* Strides of one operand over the output's dims: each dim broadcast (stride 0) with probability
 * `bcast` in 4, the rest contiguous, last dim fastest or (permuted) first dim fastest. */
static size_t operand_strides(const aotc_broadcast *p, int32_t *strides, int bcast, int permuted, int *like_y) {
    size_t n = 1;
    int32_t j, k;
    *like_y = !permuted;
    for (j = 0; j < p->rank; ++j) {
        k = permuted ? j : p->rank - 1 - j;
        if (p->shape[k] > 1 && chance(bcast, 4)) {
            strides[k] = 0, *like_y = 0;
        } else {
            strides[k] = (int32_t)n, n *= (size_t)p->shape[k];
        }
    }
    return n;
}

static void draw_broadcast(bcase *c) {
    aotc_broadcast *p = &c->p;
    int32_t k;
    int like_b;
    memset(c, 0, sizeof *c);
    do {
        p->rank = chance(1, 10) ? rand_int(5, AOTC_MAX_RANK) : rand_int(1, 4);
        c->yn = 1;
        for (k = 0; k < p->rank; ++k) {
            p->shape[k] = k == p->rank - 1 ? rand_int(1, chance(1, 2) ? 40 : 5) : rand_int(1, 4);
            c->yn *= (size_t)p->shape[k];
        }
    } while (c->yn > 4000);
    {
        const int mode_a = rand_int(0, 5), mode_b = rand_int(0, 5);
        /* 0-2: full; 3: broadcast dims; 4: scalar (all broadcast); 5: permuted */
        c->an = operand_strides(p, p->a_strides, mode_a == 3 ? 1 : mode_a == 4 ? 4 : 0, mode_a == 5, &c->a_like_y);
        c->bn = operand_strides(p, p->b_strides, mode_b == 3 ? 1 : mode_b == 4 ? 4 : 0, mode_b == 5, &like_b);
    }
}

static void print_broadcast(const aotc_broadcast *p) {
    int32_t k;
    printf("  shape");
    for (k = 0; k < p->rank; ++k) printf(" %d", (int)p->shape[k]);
    printf(", a strides");
    for (k = 0; k < p->rank; ++k) printf(" %d", (int)p->a_strides[k]);
    printf(", b strides");
    for (k = 0; k < p->rank; ++k) printf(" %d", (int)p->b_strides[k]);
    printf("\n");
}

/* ---- the checks, stamped per op and dtype ---------------------------------------------------- */
#define ALLOC(T, n) ((T *)test_alloc_bytes((n) * sizeof(T)))

/* aotc_NAME_SFX(broadcast, a, b, y) against aotc_NAME_ref_SFX; b drawn for ROLE; y = a when INPLACE
 * (output type = input type) half of the time. */
#define CHECK_BINARY(NAME, SFX, OSFX, ROLE, TOL, INPLACE)                                           \
    static int check_##NAME##_##SFX(void) {                                                         \
        bcase c;                                                                                    \
        T_##SFX *a, *b, *a0, *b0;                                                                   \
        T_##OSFX *y, *ref;                                                                          \
        size_t i;                                                                                   \
        int bad, in_place;                                                                          \
        draw_broadcast(&c);                                                                         \
        in_place = INPLACE && c.a_like_y && chance(1, 2);                                           \
        a = ALLOC(T_##SFX, c.an), b = ALLOC(T_##SFX, c.bn), a0 = ALLOC(T_##SFX, c.an);              \
        b0 = ALLOC(T_##SFX, c.bn), ref = ALLOC(T_##OSFX, c.yn);                                     \
        for (i = 0; i < c.an; ++i) a[i] = gen_##SFX(PLAIN);                                         \
        for (i = 0; i < c.bn; ++i) b[i] = gen_##SFX(ROLE);                                          \
        memcpy(a0, a, c.an * sizeof(T_##SFX)), memcpy(b0, b, c.bn * sizeof(T_##SFX));               \
        y = in_place ? (T_##OSFX *)(void *)a : ALLOC(T_##OSFX, c.yn);                               \
        aotc_##NAME##_##SFX(&c.p, a, b, y);                                                         \
        aotc_##NAME##_ref_##SFX(&c.p, a0, b0, ref);                                                 \
        bad = differs_##OSFX("aotc_" #NAME "_" #SFX, NULL, y, ref, c.yn, TOL);                      \
        if (!bad && ((!in_place && memcmp(a, a0, c.an * sizeof(T_##SFX)) != 0) ||                   \
                     memcmp(b, b0, c.bn * sizeof(T_##SFX)) != 0)) {                                 \
            printf("aotc_" #NAME "_" #SFX ": changed an input\n");                                  \
            bad = 1;                                                                                \
        }                                                                                           \
        if (bad) print_broadcast(&c.p), printf("  in place %d\n", in_place);                        \
        if (!in_place) free(y);                                                                     \
        free(a), free(b), free(a0), free(b0), free(ref);                                            \
        return bad;                                                                                 \
    }

/* aotc_NAME_SFX(n, x, y) against its reference; y = x half of the time when INPLACE. */
#define CHECK_UNARY(NAME, SFX, OSFX, TOL, INPLACE)                                                  \
    static int check_##NAME##_##SFX(void) {                                                         \
        const size_t n = (size_t)(chance(1, 10) ? rand_int(4000, 9000) : rand_int(0, 300));         \
        const int in_place = INPLACE && chance(1, 2);                                               \
        T_##SFX *x = ALLOC(T_##SFX, n), *x0 = ALLOC(T_##SFX, n);                                    \
        T_##OSFX *y, *ref = ALLOC(T_##OSFX, n);                                                     \
        size_t i;                                                                                   \
        int bad;                                                                                    \
        for (i = 0; i < n; ++i) x[i] = gen_##SFX(PLAIN);                                            \
        memcpy(x0, x, n * sizeof(T_##SFX));                                                         \
        y = in_place ? (T_##OSFX *)(void *)x : ALLOC(T_##OSFX, n);                                  \
        aotc_##NAME##_##SFX(n, x, y);                                                               \
        aotc_##NAME##_ref_##SFX(n, x0, ref);                                                        \
        bad = differs_##OSFX("aotc_" #NAME "_" #SFX, x0, y, ref, n, TOL);                           \
        if (!bad && !in_place && memcmp(x, x0, n * sizeof(T_##SFX)) != 0) {                         \
            printf("aotc_" #NAME "_" #SFX ": changed its input\n");                                 \
            bad = 1;                                                                                \
        }                                                                                           \
        if (bad) printf("  n %lu, in place %d\n", (unsigned long)n, in_place);                      \
        if (!in_place) free(y);                                                                     \
        free(x), free(x0), free(ref);                                                               \
        return bad;                                                                                 \
    }

/* dtype lists (float32's tolerance TOL; float64 exact) */
#define B_FLOATS(NAME, TOL) CHECK_BINARY(NAME, f32, f32, PLAIN, TOL, 1) CHECK_BINARY(NAME, f64, f64, PLAIN, tol_exact, 1)
#define B_SIGNED(NAME, ROLE)                                                                        \
    CHECK_BINARY(NAME, i8, i8, ROLE, tol_exact, 1) CHECK_BINARY(NAME, i16, i16, ROLE, tol_exact, 1) \
    CHECK_BINARY(NAME, i32, i32, ROLE, tol_exact, 1) CHECK_BINARY(NAME, i64, i64, ROLE, tol_exact, 1)
#define B_UNSIGNED(NAME, ROLE)                                                                      \
    CHECK_BINARY(NAME, u8, u8, ROLE, tol_exact, 1) CHECK_BINARY(NAME, u16, u16, ROLE, tol_exact, 1) \
    CHECK_BINARY(NAME, u32, u32, ROLE, tol_exact, 1) CHECK_BINARY(NAME, u64, u64, ROLE, tol_exact, 1)
#define B_NUMERIC(NAME, TOL) B_FLOATS(NAME, TOL) B_SIGNED(NAME, PLAIN) B_UNSIGNED(NAME, PLAIN)
#define B_COMPARE(NAME)                                                                             \
    CHECK_BINARY(NAME, f32, b8, PLAIN, tol_exact, 0) CHECK_BINARY(NAME, f64, b8, PLAIN, tol_exact, 0) \
    CHECK_BINARY(NAME, i8, b8, PLAIN, tol_exact, 0) CHECK_BINARY(NAME, i16, b8, PLAIN, tol_exact, 0) \
    CHECK_BINARY(NAME, i32, b8, PLAIN, tol_exact, 0) CHECK_BINARY(NAME, i64, b8, PLAIN, tol_exact, 0) \
    CHECK_BINARY(NAME, u8, b8, PLAIN, tol_exact, 0) CHECK_BINARY(NAME, u16, b8, PLAIN, tol_exact, 0) \
    CHECK_BINARY(NAME, u32, b8, PLAIN, tol_exact, 0) CHECK_BINARY(NAME, u64, b8, PLAIN, tol_exact, 0)
#define U_SIGNED(NAME)                                                                              \
    CHECK_UNARY(NAME, i8, i8, tol_exact, 1) CHECK_UNARY(NAME, i16, i16, tol_exact, 1)               \
    CHECK_UNARY(NAME, i32, i32, tol_exact, 1) CHECK_UNARY(NAME, i64, i64, tol_exact, 1)
#define U_UNSIGNED(NAME)                                                                            \
    CHECK_UNARY(NAME, u8, u8, tol_exact, 1) CHECK_UNARY(NAME, u16, u16, tol_exact, 1)               \
    CHECK_UNARY(NAME, u32, u32, tol_exact, 1) CHECK_UNARY(NAME, u64, u64, tol_exact, 1)
#define U_FLOATS(NAME) CHECK_UNARY(NAME, f32, f32, tol_exact, 1) CHECK_UNARY(NAME, f64, f64, tol_exact, 1)

B_NUMERIC(add, tol_exact) B_NUMERIC(sub, tol_exact) B_NUMERIC(mul, tol_exact) B_NUMERIC(div, tol_exact)
B_NUMERIC(max, tol_exact) B_NUMERIC(min, tol_exact)
B_FLOATS(pow, tol_libm) B_SIGNED(pow, EXPONENT)
CHECK_BINARY(prelu, f32, f32, PLAIN, tol_exact, 1)
B_NUMERIC(fmod, tol_exact) B_NUMERIC(mod, tol_mod)
B_COMPARE(equal) CHECK_BINARY(equal, b8, b8, PLAIN, tol_exact, 1)
B_COMPARE(less) B_COMPARE(less_equal) B_COMPARE(greater) B_COMPARE(greater_equal)
CHECK_BINARY(and, b8, b8, PLAIN, tol_exact, 1) CHECK_BINARY(or, b8, b8, PLAIN, tol_exact, 1)
CHECK_BINARY(xor, b8, b8, PLAIN, tol_exact, 1)
B_SIGNED(bitwise_and, PLAIN) B_UNSIGNED(bitwise_and, PLAIN) B_SIGNED(bitwise_or, PLAIN) B_UNSIGNED(bitwise_or, PLAIN)
B_SIGNED(bitwise_xor, PLAIN) B_UNSIGNED(bitwise_xor, PLAIN)
B_SIGNED(shift_left, SHIFT) B_UNSIGNED(shift_left, SHIFT) B_SIGNED(shift_right, SHIFT) B_UNSIGNED(shift_right, SHIFT)

#define U32(NAME, TOL) CHECK_UNARY(NAME, f32, f32, TOL, 1)
U32(relu, tol_exact) U32(sigmoid, tol_sigmoid) U32(tanh, tol_tanh) U32(hard_swish, tol_hard_swish)
U32(exp, tol_libm) U32(log, tol_libm) U32(sqrt, tol_exact) U32(erf, tol_libm) U32(reciprocal, tol_exact)
U32(floor, tol_exact) U32(ceil, tol_exact) U32(round, tol_exact) U32(softplus, tol_libm) U32(softsign, tol_softsign)
U32(sin, tol_libm) U32(cos, tol_libm) U32(tan, tol_libm) U32(asin, tol_libm) U32(acos, tol_libm) U32(atan, tol_libm)
U32(sinh, tol_libm) U32(cosh, tol_libm) U32(asinh, tol_libm) U32(acosh, tol_libm) U32(atanh, tol_libm)
U32(gelu, tol_gelu) U32(gelu_tanh, tol_gelu_tanh)
CHECK_UNARY(exp, f64, f64, tol_exact, 1) CHECK_UNARY(log, f64, f64, tol_exact, 1) CHECK_UNARY(sqrt, f64, f64, tol_exact, 1)
CHECK_UNARY(isnan, f32, b8, tol_exact, 0) CHECK_UNARY(isinf, f32, b8, tol_exact, 0)
CHECK_UNARY(isinf_pos, f32, b8, tol_exact, 0) CHECK_UNARY(isinf_neg, f32, b8, tol_exact, 0)
U_FLOATS(sign) U_SIGNED(sign) U_UNSIGNED(sign)
U_FLOATS(neg) U_SIGNED(neg)
U_FLOATS(abs) U_SIGNED(abs) U_UNSIGNED(abs)
CHECK_UNARY(not, b8, b8, tol_exact, 1)
U_SIGNED(bitwise_not) U_UNSIGNED(bitwise_not)

/* the activations with attributes, each with random ones (and the usual values some of the time) */
enum { A_SWISH, A_LEAKY, A_ELU, A_SELU, A_CELU, A_THRESHOLDED, A_SHRINK, A_CLIP, A_HARD_SIGMOID, A_COUNT };
static int check_activation(int kind) {
    static const char *const NAMES[A_COUNT] = {"aotc_swish_f32", "aotc_leaky_relu_f32", "aotc_elu_f32",
                                               "aotc_selu_f32", "aotc_celu_f32", "aotc_thresholded_relu_f32",
                                               "aotc_shrink_f32", "aotc_clip_f32", "aotc_hard_sigmoid_f32"};
    static const tol_fn TOLS[A_COUNT] = {tol_swish, tol_exact, tol_elu, tol_selu, tol_selu,
                                         tol_exact, tol_exact, tol_exact, tol_exact};
    const size_t n = (size_t)(chance(1, 10) ? rand_int(4000, 9000) : rand_int(0, 300));
    const int in_place = chance(1, 2), usual = chance(1, 2);
    const float p1 = usual ? 1.0f : 0.25f + 1.75f * fabsf(rand_float()), p2 = rand_float();
    float *x = test_alloc(n), *x0, *y, *ref = test_alloc(n);
    size_t i;
    int bad;
    for (i = 0; i < n; ++i) x[i] = gen_f32(PLAIN);
    x0 = test_copy(x, n), y = in_place ? x : test_alloc_nan(n);
    switch (kind) {
    case A_SWISH: aotc_swish_f32(n, x, y, p1), aotc_swish_ref_f32(n, x0, ref, p1); break;
    case A_LEAKY: aotc_leaky_relu_f32(n, x, y, p2), aotc_leaky_relu_ref_f32(n, x0, ref, p2); break;
    case A_ELU: aotc_elu_f32(n, x, y, p1), aotc_elu_ref_f32(n, x0, ref, p1); break;
    case A_SELU: {
        const float alpha = usual ? 1.67326319217681884765625f : p1, gamma = usual ? 1.05070102214813232421875f : p1 + p2;
        aotc_selu_f32(n, x, y, alpha, gamma), aotc_selu_ref_f32(n, x0, ref, alpha, gamma);
        break;
    }
    case A_CELU: aotc_celu_f32(n, x, y, p1), aotc_celu_ref_f32(n, x0, ref, p1); break;
    case A_THRESHOLDED: aotc_thresholded_relu_f32(n, x, y, p2), aotc_thresholded_relu_ref_f32(n, x0, ref, p2); break;
    case A_SHRINK: {
        const float lambd = usual ? 0.5f : fabsf(p2), bias = usual ? 0.0f : rand_float();
        aotc_shrink_f32(n, x, y, lambd, bias), aotc_shrink_ref_f32(n, x0, ref, lambd, bias);
        break;
    }
    case A_CLIP: {
        const float lo = usual ? 0.0f : 4.0f * p2, hi = usual ? 6.0f : 4.0f * rand_float(); /* (lo > hi at times) */
        aotc_clip_f32(n, x, y, lo, hi), aotc_clip_ref_f32(n, x0, ref, lo, hi);
        break;
    }
    default: {
        const float alpha = usual ? 0.2f : p2, beta = usual ? 0.5f : rand_float();
        aotc_hard_sigmoid_f32(n, x, y, alpha, beta), aotc_hard_sigmoid_ref_f32(n, x0, ref, alpha, beta);
        break;
    }
    }
    bad = differs_f32(NAMES[kind], x0, y, ref, n, TOLS[kind]);
    if (!bad && !in_place && memcmp(x, x0, n * sizeof(float)) != 0) printf("%s: changed its input\n", NAMES[kind]), bad = 1;
    if (bad) printf("  n %lu, in place %d, parameters %.9g %.9g\n", (unsigned long)n, in_place, (double)p1, (double)p2);
    if (!in_place) free(y);
    free(x), free(x0), free(ref);
    return bad;
}
#define ACTIVATION(K, NAME) static int check_##NAME(void) { return check_activation(K); }
ACTIVATION(A_SWISH, swish) ACTIVATION(A_LEAKY, leaky_relu) ACTIVATION(A_ELU, elu) ACTIVATION(A_SELU, selu)
ACTIVATION(A_CELU, celu) ACTIVATION(A_THRESHOLDED, thresholded_relu) ACTIVATION(A_SHRINK, shrink)
ACTIVATION(A_CLIP, clip) ACTIVATION(A_HARD_SIGMOID, hard_sigmoid)

/* ---- the table: an op, its dtypes' checks ---------------------------------------------------- */
typedef int (*check_fn)(void);
typedef struct {
    const char *name;
    check_fn fns[11];
} op_checks;

#define FL(N) check_##N##_f32, check_##N##_f64
#define SI(N) check_##N##_i8, check_##N##_i16, check_##N##_i32, check_##N##_i64
#define UN(N) check_##N##_u8, check_##N##_u16, check_##N##_u32, check_##N##_u64
static const op_checks OPS[] = {
    {"aotc_add", {FL(add), SI(add), UN(add)}},
    {"aotc_sub", {FL(sub), SI(sub), UN(sub)}},
    {"aotc_mul", {FL(mul), SI(mul), UN(mul)}},
    {"aotc_div", {FL(div), SI(div), UN(div)}},
    {"aotc_max", {FL(max), SI(max), UN(max)}},
    {"aotc_min", {FL(min), SI(min), UN(min)}},
    {"aotc_pow", {FL(pow), SI(pow)}},
    {"aotc_prelu", {check_prelu_f32}},
    {"aotc_fmod", {FL(fmod), SI(fmod), UN(fmod)}},
    {"aotc_mod", {FL(mod), SI(mod), UN(mod)}},
    {"aotc_equal", {FL(equal), SI(equal), UN(equal), check_equal_b8}},
    {"aotc_less", {FL(less), SI(less), UN(less)}},
    {"aotc_less_equal", {FL(less_equal), SI(less_equal), UN(less_equal)}},
    {"aotc_greater", {FL(greater), SI(greater), UN(greater)}},
    {"aotc_greater_equal", {FL(greater_equal), SI(greater_equal), UN(greater_equal)}},
    {"aotc_and/or/xor", {check_and_b8, check_or_b8, check_xor_b8}},
    {"aotc_bitwise_and", {SI(bitwise_and), UN(bitwise_and)}},
    {"aotc_bitwise_or", {SI(bitwise_or), UN(bitwise_or)}},
    {"aotc_bitwise_xor", {SI(bitwise_xor), UN(bitwise_xor)}},
    {"aotc_shift_left", {SI(shift_left), UN(shift_left)}},
    {"aotc_shift_right", {SI(shift_right), UN(shift_right)}},
    {"aotc_relu/sigmoid/tanh/hard_swish", {check_relu_f32, check_sigmoid_f32, check_tanh_f32, check_hard_swish_f32}},
    {"aotc_exp/log/sqrt", {FL(exp), FL(log), FL(sqrt)}},
    {"aotc_erf/reciprocal/softplus/softsign", {check_erf_f32, check_reciprocal_f32, check_softplus_f32,
                                               check_softsign_f32}},
    {"aotc_floor/ceil/round", {check_floor_f32, check_ceil_f32, check_round_f32}},
    {"aotc_sin/cos/tan/asin/acos/atan", {check_sin_f32, check_cos_f32, check_tan_f32, check_asin_f32, check_acos_f32,
                                         check_atan_f32}},
    {"aotc_sinh/cosh/asinh/acosh/atanh", {check_sinh_f32, check_cosh_f32, check_asinh_f32, check_acosh_f32,
                                          check_atanh_f32}},
    {"aotc_gelu/gelu_tanh", {check_gelu_f32, check_gelu_tanh_f32}},
    {"aotc_isnan/isinf/_pos/_neg", {check_isnan_f32, check_isinf_f32, check_isinf_pos_f32, check_isinf_neg_f32}},
    {"aotc_sign", {FL(sign), SI(sign), UN(sign)}},
    {"aotc_neg", {FL(neg), SI(neg)}},
    {"aotc_abs", {FL(abs), SI(abs), UN(abs)}},
    {"aotc_not/bitwise_not", {check_not_b8, SI(bitwise_not), UN(bitwise_not)}},
    {"aotc_swish/leaky_relu/elu/selu/celu", {check_swish, check_leaky_relu, check_elu, check_selu, check_celu}},
    {"aotc_thresholded_relu/shrink/clip/hard_sigmoid", {check_thresholded_relu, check_shrink, check_clip,
                                                        check_hard_sigmoid}},
};

/* The references on values worked out by hand: integer Div, Mod and shifts at their edges, Round's
 * ties, a float floored Mod. */
static int check_reference(void) {
    static const int8_t a[6] = {-128, 7, -7, 7, -128, -1}, b[6] = {-1, 0, 2, -2, 1, 7};
    static const int8_t div[6] = {-128, 0, -3, -3, -128, 0}, mod[6] = {0, 0, 1, -1, 0, 6};
    static const int8_t shr[6] = {-1, 7, -2, 0, -64, -1};
    static const float r[6] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f}, rounded[6] = {0, 2, 2, -0.0f, -2, 3};
    static const float fx[2] = {-7.0f, 7.0f}, fy[2] = {2.0f, -2.0f}, fm[2] = {1.0f, -1.0f};
    aotc_broadcast p;
    int8_t y8[6];
    float yf[6];
    int bad = 0;
    memset(&p, 0, sizeof p);
    p.rank = 1, p.shape[0] = 6, p.a_strides[0] = p.b_strides[0] = 1;
    aotc_div_ref_i8(&p, a, b, y8);
    bad |= differs_i8("aotc_div_ref_i8", NULL, y8, div, 6, tol_exact);
    aotc_mod_ref_i8(&p, a, b, y8);
    bad |= differs_i8("aotc_mod_ref_i8", NULL, y8, mod, 6, tol_exact);
    aotc_shift_right_ref_i8(&p, a, b, y8); /* -128 >> -1: out of range, the sign; -1 >> 7 = -1 */
    bad |= differs_i8("aotc_shift_right_ref_i8", NULL, y8, shr, 6, tol_exact);
    aotc_round_ref_f32(6, r, yf);
    bad |= differs_f32("aotc_round_ref_f32", r, yf, rounded, 6, tol_exact);
    p.shape[0] = 2;
    aotc_mod_ref_f32(&p, fx, fy, yf);
    bad |= differs_f32("aotc_mod_ref_f32", fx, yf, fm, 2, tol_exact);
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 100);
    int failed = check_reference();
    size_t op;
    int32_t i;
    for (op = 0; op < sizeof OPS / sizeof OPS[0]; ++op) {
        int bad = 0, f, count = 0;
        for (f = 0; f < 11 && OPS[op].fns[f] != NULL; ++f, ++count) {
            for (i = 0; i < shapes && !bad; ++i) bad = OPS[op].fns[f]();
        }
        printf("%-40s %s (%d entry points, %d shapes each)\n", OPS[op].name, bad ? "MISMATCH" : "ok", count, (int)shapes);
        failed |= bad;
    }
    return failed;
}
