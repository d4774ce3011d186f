/* TFLite's int8 comparisons, PRELU, DIV and SQUARED_DIFFERENCE (issue 50): see aotc_tflite_int8.h. Each is LiteRT's reference
 * kernel's integer arithmetic, written from its definition; the compiler computes every multiplier
 * and shift (aot/frontend/tflite/quant.py). Inputs broadcast as ADD's (6-D element steps). */
#define AOTC_TFL_CONV_DECLS 0 /* (the conv's and depthwise's declarations: aotc_tflite_int8.h) */
#include "aotc_tflite_int8.h"

#include <math.h>
#include <string.h>

#include "tflite_int8_x86.h" /* the requantisation in AVX-512 lanes (SQUARED_DIFFERENCE's runs) */

/* SaturatingRoundingDoublingHighMul: floor((a * b + 2^30) / 2^31); INT32_MIN * INT32_MIN saturates */
static int32_t mob_high_mul(int32_t a, int32_t b) {
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    return (int32_t)(((int64_t)a * (int64_t)b + ((int64_t)1 << 30)) >> 31);
}

/* RoundingDivideByPOT: x / 2^e rounded to nearest, ties away from zero */
static int32_t mob_divide_by_pot(int32_t x, int32_t e) {
    const int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    const int32_t remainder = x & mask, threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

/* MultiplyByQuantizedMultiplier, double rounding (the left shift multiplies in int32, wrapping as TFLite's) */
static int32_t mob_requant(int32_t acc, int32_t mult, int32_t shift) {
    const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return mob_divide_by_pot(mob_high_mul((int32_t)((uint32_t)acc << left), mult), right);
}

/* the offsets of y's element k in x1 and x2 (6-D, zero steps where broadcast) */
typedef struct { int32_t i[6]; int64_t o1, o2; } mob_iter;

static void mob_next(const aotc_tfl_binary_params *p, mob_iter *it) {
    for (int32_t d = 5; d >= 0; --d) {
        it->o1 += p->st1[d];
        it->o2 += p->st2[d];
        if (++it->i[d] < p->dims[d]) return;
        it->o1 -= (int64_t)p->st1[d] * p->dims[d];
        it->o2 -= (int64_t)p->st2[d] * p->dims[d];
        it->i[d] = 0;
    }
}

#define TFL_COMPARE(NAME, T, OP)                                                                          \
    void NAME(const aotc_tfl_binary_params *p, const T *x1, const T *x2, uint8_t *y) {                   \
        mob_iter it = {{0, 0, 0, 0, 0, 0}, 0, 0};                                                         \
        for (int64_t k = 0; k < p->count; ++k) {                                                          \
            const int64_t o1 = p->broadcast ? it.o1 : k, o2 = p->broadcast ? it.o2 : k;                   \
            const int32_t a = mob_requant((x1[o1] - p->x1_zero) * 256, p->m1, p->s1);                     \
            const int32_t b = mob_requant((x2[o2] - p->x2_zero) * 256, p->m2, p->s2);                     \
            y[k] = (uint8_t)(a OP b);                                                                     \
            if (p->broadcast) mob_next(p, &it);                                                           \
        }                                                                                                 \
    }

TFL_COMPARE(aotc_tfl_equal_s8, int8_t, ==)
TFL_COMPARE(aotc_tfl_equal_s16, int16_t, ==)
TFL_COMPARE(aotc_tfl_not_equal_s8, int8_t, !=)
TFL_COMPARE(aotc_tfl_not_equal_s16, int16_t, !=)
TFL_COMPARE(aotc_tfl_less_s8, int8_t, <)
TFL_COMPARE(aotc_tfl_less_s16, int16_t, <)
TFL_COMPARE(aotc_tfl_less_equal_s8, int8_t, <=)
TFL_COMPARE(aotc_tfl_less_equal_s16, int16_t, <=)
TFL_COMPARE(aotc_tfl_greater_s8, int8_t, >)
TFL_COMPARE(aotc_tfl_greater_s16, int16_t, >)
TFL_COMPARE(aotc_tfl_greater_equal_s8, int8_t, >=)
TFL_COMPARE(aotc_tfl_greater_equal_s16, int16_t, >=)

#define TFL_PRELU(NAME, T, LO, HI)                                                                        \
    void NAME(const aotc_tfl_binary_params *p, const T *x, const int8_t *alpha, T *y) {                   \
        mob_iter it = {{0, 0, 0, 0, 0, 0}, 0, 0};                                                         \
        for (int64_t k = 0; k < p->count; ++k) {                                                          \
            const int64_t o1 = p->broadcast ? it.o1 : k, o2 = p->broadcast ? it.o2 : k;                   \
            const int32_t v = x[o1] - p->x1_zero;                                                         \
            int32_t out = v >= 0 ? mob_requant(v, p->m1, p->s1)                                           \
                                 : mob_requant(v * (alpha[o2] - p->x2_zero), p->m2, p->s2);               \
            out += p->y_zero;                                                                             \
            y[k] = (T)(out < p->y_min ? p->y_min : out > p->y_max ? p->y_max : out);                      \
            if (p->broadcast) mob_next(p, &it);                                                           \
        }                                                                                                 \
    }

TFL_PRELU(aotc_tfl_prelu_s8, int8_t, -128, 127)
TFL_PRELU(aotc_tfl_prelu_s16, int16_t, -32768, 32767)

/* x / 2^e rounded half away from zero for any e >= 0 (past 31: 0, or -1 for INT32_MIN / 2^32) */
static int32_t mob_divide_by_pot_wide(int32_t x, int32_t e) {
    if (e > 31) return e == 32 && x == INT32_MIN ? -1 : 0;
    return mob_divide_by_pot(x, e);
}

/* GetReciprocal(x, 31, &bits_over) of a positive x: 1 / x in Q0.31 and the bits it is over one (gemmlowp's
 * one_over_one_plus_x_for_x_in_0_1: three Newton-Raphson steps from 48/17 - 32/17 d) */
static int32_t mob_reciprocal(int32_t x, int32_t *bits_over) {
    int32_t headroom = 0, y, i;
    int32_t a, half;
    int64_t sum;
    while (headroom < 32 && !((uint32_t)x & (0x80000000u >> headroom))) ++headroom;
    *bits_over = 31 - headroom;
    a = (int32_t)(((uint32_t)x << headroom) - 0x80000000u);
    sum = (int64_t)a + INT32_MAX;
    half = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    y = (int32_t)((uint32_t)1515870810 + (uint32_t)mob_high_mul(half, -1010580540));
    for (i = 0; i < 3; ++i) {
        const int32_t e = (int32_t)((uint32_t)(1 << 29) - (uint32_t)mob_high_mul(half, y));
        const int32_t step = mob_high_mul(y, e);
        const int32_t step4 = step > (INT32_MAX >> 2) ? INT32_MAX : step < -(INT32_MAX >> 2) ? INT32_MIN : step * 4;
        y = (int32_t)((uint32_t)y + (uint32_t)step4);
    }
    return y > (INT32_MAX >> 1) ? INT32_MAX : y < -(INT32_MAX >> 1) ? INT32_MIN : y * 2;
}

/* CountLeadingSignBits: the redundant sign bits of x (31 for 0 and -1) */
static int32_t mob_sign_bits(int32_t x) {
    const uint32_t u = x < 0 ? ~(uint32_t)x : (uint32_t)x;
    int32_t n = 0;
    while (n < 31 && !(u & (0x40000000u >> n))) ++n;
    return n;
}

#define TFL_DIV(NAME, T)                                                                                  \
    int32_t NAME(const aotc_tfl_binary_params *p, const T *x1, const T *x2, T *y) {                       \
        mob_iter it = {{0, 0, 0, 0, 0, 0}, 0, 0};                                                         \
        int64_t k;                                                                                        \
        for (k = 0; k < p->count; ++k) {                                                                  \
            if (x2[p->broadcast ? it.o2 : k] == p->x2_zero) return AOTC_ERR_SHAPE;                        \
            if (p->broadcast) mob_next(p, &it);                                                           \
        }                                                                                                 \
        memset(&it, 0, sizeof it);                                                                        \
        for (k = 0; k < p->count; ++k) {                                                                  \
            const int64_t o1 = p->broadcast ? it.o1 : k, o2 = p->broadcast ? it.o2 : k;                   \
            int32_t v1 = x1[o1] - p->x1_zero, v2 = x2[o2] - p->x2_zero, bits_over, headroom, inv, q, out; \
            if (v2 < 0) v1 = -v1, v2 = -v2;                                                               \
            inv = mob_reciprocal(v2, &bits_over);                                                         \
            headroom = mob_sign_bits(v1);                                                                 \
            q = mob_high_mul((int32_t)((uint32_t)v1 << headroom), inv);                                   \
            out = mob_divide_by_pot_wide(mob_high_mul(q, p->mult), bits_over + headroom - p->shift);      \
            out += p->y_zero;                                                                             \
            y[k] = (T)(out < p->y_min ? p->y_min : out > p->y_max ? p->y_max : out);                      \
            if (p->broadcast) mob_next(p, &it);                                                           \
        }                                                                                                 \
        return 0;                                                                                         \
    }

TFL_DIV(aotc_tfl_div_s8, int8_t)
TFL_DIV(aotc_tfl_div_s16, int16_t)

/* SQUARED_DIFFERENCE's output of one pair of inputs */
static int8_t mob_sqdiff_one(const aotc_tfl_binary_params *p, int32_t x1, int32_t x2) {
    const int32_t a = mob_requant((x1 - p->x1_zero) * (1 << 7), p->m1, p->s1);
    const int32_t b = mob_requant((x2 - p->x2_zero) * (1 << 7), p->m2, p->s2);
    const int32_t out = mob_requant((a - b) * (a - b), p->mult, p->shift) + p->y_zero;
    return (int8_t)(out < p->y_min ? p->y_min : out > p->y_max ? p->y_max : out);
}

#if TFL_X86_AVX512
/* whether the lanes take the call's multipliers (tflite_int8_x86.h: no INT32_MIN, shifts within 31) */
static int mob_x86_takes(const aotc_tfl_binary_params *p) {
    return p->m1 != INT32_MIN && p->m2 != INT32_MIN && p->mult != INT32_MIN && p->s1 >= -31 && p->s1 <= 31 &&
           p->s2 >= -31 && p->s2 <= 31 && p->shift >= -31 && p->shift <= 31;
}

/* n outputs, x1 stepping by 1 (fa 0) or staying (fa 1), x2 likewise (fb), 16 a vector (issue 64: the layer norm's
 * (x - mean)^2, 6 ns an element through the odometer): mob_sqdiff_one's arithmetic in lanes, bit for bit */
TFL_X86_INLINE void mob_sqdiff_run_x86(const aotc_tfl_binary_params *p, const tfl_x86_rq *r1, const tfl_x86_rq *r2,
                                       const tfl_x86_rq *ro, const int8_t *a, int fa, const int8_t *b, int fb,
                                       int8_t *y, int64_t n) {
    const __m512i z1 = _mm512_set1_epi32(p->x1_zero), z2 = _mm512_set1_epi32(p->x2_zero);
    const __m512i yz = _mm512_set1_epi32(p->y_zero), lo = _mm512_set1_epi32(p->y_min - p->y_zero),
                  hi = _mm512_set1_epi32(p->y_max - p->y_zero);
    const __m512i ca = _mm512_set1_epi32(mob_requant((*a - p->x1_zero) * (1 << 7), p->m1, p->s1));
    const __m512i cb = _mm512_set1_epi32(mob_requant((*b - p->x2_zero) * (1 << 7), p->m2, p->s2));
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
        __m512i va = ca, vb = cb, d;
        if (!fa)
            va = tfl_x86_requant(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, a + i)), z1), 7), r1);
        if (!fb)
            vb = tfl_x86_requant(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, b + i)), z2), 7), r2);
        d = _mm512_sub_epi32(va, vb);
        d = tfl_x86_requant(_mm512_mullo_epi32(d, d), ro);
        /* clamped before the zero point is added (no overflow), then the same value as the plain clamp's */
        d = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(d, lo), hi), yz);
        _mm_mask_storeu_epi8(y + i, m, _mm512_cvtepi32_epi8(d));
    }
}

/* the call as runs along y's last axis (x1 and x2 each stepping by 1 or staying there; else element by element),
 * an odometer over the other five */
static void mob_sqdiff_x86(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    const tfl_x86_rq r1 = tfl_x86_rq_set1(p->m1, p->s1), r2 = tfl_x86_rq_set1(p->m2, p->s2);
    const tfl_x86_rq ro = tfl_x86_rq_set1(p->mult, p->shift);
    const int64_t n = p->broadcast ? p->dims[5] : p->count, s1 = p->broadcast ? p->st1[5] : 1,
                  s2 = p->broadcast ? p->st2[5] : 1;
    int32_t i[5] = {0, 0, 0, 0, 0}, d;
    int64_t o1 = 0, o2 = 0, k = 0, j;
    if (n <= 0) return;
    for (; k < p->count; k += n) {
        if (s1 == 1 && s2 == 1) mob_sqdiff_run_x86(p, &r1, &r2, &ro, x1 + o1, 0, x2 + o2, 0, y + k, n);
        else if (s1 == 1 && s2 == 0) mob_sqdiff_run_x86(p, &r1, &r2, &ro, x1 + o1, 0, x2 + o2, 1, y + k, n);
        else if (s1 == 0 && s2 == 1) mob_sqdiff_run_x86(p, &r1, &r2, &ro, x1 + o1, 1, x2 + o2, 0, y + k, n);
        else
            for (j = 0; j < n; ++j) y[k + j] = mob_sqdiff_one(p, x1[o1 + j * s1], x2[o2 + j * s2]);
        for (d = 4; d >= 0; --d) { /* the next run's first elements */
            o1 += p->st1[d], o2 += p->st2[d];
            if (++i[d] < p->dims[d]) break;
            o1 -= (int64_t)p->st1[d] * p->dims[d], o2 -= (int64_t)p->st2[d] * p->dims[d], i[d] = 0;
        }
    }
}
#endif /* TFL_X86_AVX512 */

void aotc_tfl_squared_difference_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    mob_iter it = {{0, 0, 0, 0, 0, 0}, 0, 0};
#if TFL_X86_AVX512
    if (mob_x86_takes(p)) {
        mob_sqdiff_x86(p, x1, x2, y);
        return;
    }
#endif
    for (int64_t k = 0; k < p->count; ++k) {
        const int64_t o1 = p->broadcast ? it.o1 : k, o2 = p->broadcast ? it.o2 : k;
        y[k] = mob_sqdiff_one(p, x1[o1], x2[o2]);
        if (p->broadcast) mob_next(p, &it);
    }
}

/* one int32 sum to the output: the product and the sum are two statements: no compiler fuses them (LiteRT's x86
 * build does not) */
static int32_t mob_sum_out(int32_t sum, float scale, float bias, int32_t y_zero, int32_t y_min, int32_t y_max) {
    float t = (float)sum * scale;
    int32_t v;
    t = t + bias;
    t = roundf(t);
    v = t > 1e9f ? 1000000000 : t < -1e9f ? -1000000000 : (int32_t)t; /* past int32: clamped */
    v += y_zero;
    return v < y_min ? y_min : v > y_max ? y_max : v;
}

#define TFL_SUM_REQUANT(NAME, T)                                                                          \
    void NAME(const aotc_tfl_sum_params *p, const int32_t *x, T *y) {                                     \
        for (int64_t k = 0; k < p->count; ++k)                                                            \
            y[k] = (T)mob_sum_out(x[k], p->scale, p->bias, p->y_zero, p->y_min, p->y_max);                \
    }

TFL_SUM_REQUANT(aotc_tfl_sum_requant_s8, int8_t)
TFL_SUM_REQUANT(aotc_tfl_sum_requant_s16, int16_t)

/* SUM over n of [outer, n, inner]: the sums of up to 64 consecutive outputs at a time in acc, each row of n added
 * to them in turn (contiguous, so the compiler vectorises it), then rescaled */
#define TFL_REDUCE_SUM(NAME, T)                                                                           \
    void NAME(const aotc_tfl_reduce_sum_params *p, const T *x, T *y) {                                    \
        const int32_t n = p->n, inner = p->inner;                                                         \
        int32_t acc[64];                                                                                  \
        for (int32_t o = 0; o < p->outer; ++o) {                                                          \
            const T *xo = x + (int64_t)o * n * inner;                                                     \
            if (inner == 1) { /* the reduced axes last: one contiguous run */                             \
                int32_t sum = 0;                                                                          \
                for (int32_t i = 0; i < n; ++i) sum += xo[i];                                             \
                y[o] = (T)mob_sum_out(sum, p->scale, p->bias, p->y_zero, p->y_min, p->y_max);             \
                continue;                                                                                 \
            }                                                                                             \
            for (int32_t j0 = 0; j0 < inner; j0 += 64) {                                                  \
                const int32_t w = inner - j0 < 64 ? inner - j0 : 64;                                      \
                for (int32_t j = 0; j < w; ++j) acc[j] = 0;                                               \
                if (w == 64 && sizeof(T) == 1) /* int8: runs of 256 rows summed in int16 first (exact: */ \
                    for (int32_t i0 = 0; i0 < n; i0 += 256) { /* -32768 .. 32512), twice the lanes */     \
                        const int32_t m = n - i0 < 256 ? n - i0 : 256;                                    \
                        int16_t part[64];                                                                 \
                        for (int32_t j = 0; j < 64; ++j) part[j] = 0;                                     \
                        for (int32_t i = i0; i < i0 + m; ++i) {                                           \
                            const T *xr = xo + (int64_t)i * inner + j0;                                   \
                            for (int32_t j = 0; j < 64; ++j) part[j] = (int16_t)(part[j] + xr[j]);        \
                        }                                                                                 \
                        for (int32_t j = 0; j < 64; ++j) acc[j] += part[j];                               \
                    }                                                                                     \
                else                                                                                      \
                    for (int32_t i = 0; i < n; ++i) {                                                     \
                        const T *xr = xo + (int64_t)i * inner + j0;                                       \
                        for (int32_t j = 0; j < w; ++j) acc[j] += xr[j];                                  \
                    }                                                                                     \
                for (int32_t j = 0; j < w; ++j)                                                           \
                    y[(int64_t)o * inner + j0 + j] =                                                      \
                        (T)mob_sum_out(acc[j], p->scale, p->bias, p->y_zero, p->y_min, p->y_max);         \
            }                                                                                             \
        }                                                                                                 \
    }

TFL_REDUCE_SUM(aotc_tfl_reduce_sum_s8, int8_t)
TFL_REDUCE_SUM(aotc_tfl_reduce_sum_s16, int16_t)

/* gemmlowp's SaturatingRoundingMultiplyByPOT for e > 0: x * 2^e saturated to int32 */
static int32_t mob_shl_sat(int64_t x, int32_t e) {
    const int64_t threshold = ((int64_t)1 << (31 - e)) - 1;
    return x > threshold ? INT32_MAX : x < -threshold ? INT32_MIN : (int32_t)(x * ((int64_t)1 << e));
}

/* GetInvSqrtQuantizedMultiplierExp(v, reverse_shift -1): 1 / sqrt(v) as a Q31 multiplier and a left shift, by
 * five Newton-Raphson steps in Q3.28 (aot/frontend/tflite/quant.py inv_sqrt_multiplier is the same in Python) */
static int32_t mob_inv_sqrt(int32_t v, int32_t *left_shift) {
    int32_t shift = 11, clz = 0, pairs, half_in, x = 1 << 28, i;
    const int32_t half_three = (1 << 28) + (1 << 27);
    if (v <= 1) {
        *left_shift = 0;
        return INT32_MAX;
    }
    while (v >= (1 << 29)) v /= 4, ++shift;
    while (!((uint32_t)v & (0x80000000u >> clz))) ++clz;
    pairs = (clz - 1) / 2 - 1;
    shift -= pairs;
    v <<= 2 * pairs;
    half_in = mob_divide_by_pot(v >> 1, 1);
    for (i = 0; i < 5; ++i) {
        const int32_t x3 = mob_shl_sat(mob_high_mul(mob_high_mul(x, x), x), 6);
        x = mob_shl_sat((int64_t)mob_high_mul(half_three, x) - mob_high_mul(half_in, x3), 3);
    }
    x = mob_high_mul(x, 1518500250); /* times sqrt(2) / 2 */
    if (shift < 0) x = (int32_t)((uint32_t)x << -shift), shift = 0;
    *left_shift = -shift;
    return x;
}

void aotc_tfl_l2norm_s8(const aotc_tfl_l2norm_params *p, const int8_t *x, int8_t *y) {
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *xr = x + (int64_t)r * p->depth;
        int8_t *yr = y + (int64_t)r * p->depth;
        int32_t acc = 0, mult, shift;
        for (int32_t k = 0; k < p->depth; ++k) acc += (xr[k] - p->x_zero) * (xr[k] - p->x_zero);
        mult = mob_inv_sqrt(acc, &shift);
        for (int32_t k = 0; k < p->depth; ++k) {
            const int32_t out = mob_requant(xr[k] - p->x_zero, mult, shift + 7);
            yr[k] = (int8_t)(out < -128 ? -128 : out > 127 ? 127 : out);
        }
    }
}

/* LiteRT's MultiplyByQuantizedMultiplier of an int64: the multiplier rounded to 16 bits, one rounding shift, the
 * result truncated to int32 */
static int32_t mob_requant64(int64_t x, int32_t mult, int32_t shift) {
    const int64_t reduced = mult < 0x7FFF0000 ? (mult + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total = 15 - shift;
    return (int32_t)(uint32_t)(uint64_t)((x * reduced + ((int64_t)1 << (total - 1))) >> total);
}

#define TFL_REDUCE_PROD(NAME, T, LO, HI)                                                                  \
    void NAME(const aotc_tfl_prod_params *p, const T *x, T *y) {                                          \
        for (int32_t r = 0; r < p->rows; ++r) {                                                           \
            const T *xr = x + (int64_t)r * p->n;                                                          \
            int32_t acc = xr[0] - p->x_zero, out;                                                         \
            for (int32_t k = 1; k < p->n; ++k)                                                            \
                acc = mob_requant64((int64_t)acc * (xr[k] - p->x_zero), p->mult, p->shift);               \
            out = mob_requant64(acc, p->mult, p->shift) + p->y_zero;                                      \
            y[r] = (T)(out < LO ? LO : out > HI ? HI : out);                                              \
        }                                                                                                 \
    }

TFL_REDUCE_PROD(aotc_tfl_reduce_prod_s8, int8_t, -128, 127)
TFL_REDUCE_PROD(aotc_tfl_reduce_prod_s16, int16_t, -32768, 32767)

/* --- LOG_SOFTMAX: gemmlowp's fixed point (Q<integer bits>.<31 - integer bits> in int32) ----------------------- */
static int32_t mob_wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

/* exp(a) for a in [-1/4, 0), Q0.31: Taylor series around -1/8 (as tflite_int8_softmax.c) */
static int32_t mob_exp_quarter(int32_t a) {
    const int32_t exp_minus_eighth = 1895147668, one_third = 715827883;
    const int32_t x = mob_wrap_add(a, 1 << 28);
    const int32_t x2 = mob_high_mul(x, x), x3 = mob_high_mul(x2, x), x4 = mob_high_mul(x2, x2);
    const int32_t poly = mob_divide_by_pot(
        mob_wrap_add(mob_high_mul(mob_wrap_add(mob_divide_by_pot(x4, 2), x3), one_third), x2), 1);
    return mob_wrap_add(exp_minus_eighth, mob_high_mul(exp_minus_eighth, mob_wrap_add(x, poly)));
}

/* exp(a) for a <= 0 in Q5.26 -> Q0.31 (gemmlowp's exp_on_negative_values) */
static int32_t mob_exp_negative(int32_t a) {
    static const int32_t factors[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    const int32_t quarter = 1 << 24;
    const int32_t a_mod = (int32_t)((uint32_t)(a & (quarter - 1)) - (uint32_t)quarter);
    int32_t result = mob_exp_quarter(mob_shl_sat(a_mod, 5));
    const int32_t remainder = (int32_t)((uint32_t)a_mod - (uint32_t)a);
    for (int32_t k = 0; k < 7; ++k)
        if (remainder & (1 << (24 + k))) result = mob_high_mul(result, factors[k]);
    return a == 0 ? INT32_MAX : result;
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT for any exponent: left saturating, right rounding */
static int32_t mob_pot(int32_t x, int32_t e) {
    return e > 0 ? mob_shl_sat(x, e) : e < 0 ? mob_divide_by_pot(x, -e) : x;
}

static int32_t mob_sat32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v; }

/* leading zeros of v (32 for 0) by halving steps */
static int32_t mob_clz(uint32_t v) {
    int32_t n = 0;
    if (!v) return 32;
    if (!(v & 0xFFFF0000u)) n += 16, v <<= 16;
    if (!(v & 0xFF000000u)) n += 8, v <<= 8;
    if (!(v & 0xF0000000u)) n += 4, v <<= 4;
    if (!(v & 0xC0000000u)) n += 2, v <<= 2;
    if (!(v & 0x80000000u)) n += 1;
    return n;
}

/* TFLite's log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>: ln(x) of x >= 1 in Q12.19 -> Q5.26, accumulated
 * in Q6.25 (a Pade approximant of ln around the sqrt(sqrt(2)) multiple of the power of two x lies past) */
static int32_t mob_log_q12_to_q5(int32_t x) {
    const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
    const int32_t shifted_quarter = mob_pot(536870912, -6); /* 1/4 in Q6.25 */
    const int32_t za_headroom = mob_clz((uint32_t)x);
    const int32_t ra_tmp = mob_pot(x, za_headroom - 1);
    const int32_t ra = mob_pot(mob_high_mul(ra_tmp, sqrt_half), 1);
    const int32_t za_adj = mob_sat32((int64_t)mob_pot(12 - za_headroom, 25) + shifted_quarter);
    const int32_t zb = mob_high_mul(x, sqrt_half);
    const int32_t zb_headroom = mob_clz((uint32_t)zb) - 1;
    const int32_t rb = mob_pot(x, zb_headroom);
    const int32_t zb_adj = mob_sat32((int64_t)mob_pot(12 - zb_headroom, 25) - shifted_quarter);
    const int32_t r = ra < rb ? ra : rb, z_adj = za_adj > zb_adj ? za_adj : zb_adj;
    const int64_t half_sum = (int64_t)r + sqrt_sqrt_half;
    const int32_t pp = (int32_t)((half_sum + (half_sum >= 0 ? 1 : -1)) / 2); /* RoundingHalfSum */
    int32_t q = (int32_t)((uint32_t)r - (uint32_t)sqrt_sqrt_half), common_sq, num, denom, recip;
    q = (int32_t)((uint32_t)q + (uint32_t)q);
    common_sq = mob_high_mul(q, q);
    num = mob_wrap_add(mob_high_mul(q, r), mob_high_mul(mob_high_mul(q, common_sq), alpha_n));
    denom = mob_wrap_add(mob_high_mul(pp, mob_wrap_add(mob_wrap_add(alpha_i, q), mob_high_mul(alpha_d, common_sq))),
                         mob_high_mul(alpha_f, q));
    /* one_over_one_plus_x_for_x_in_0_1(denom): mob_reciprocal's Newton-Raphson on 1 + denom */
    {
        const int64_t sum = (int64_t)denom + INT32_MAX;
        const int32_t half = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
        int32_t y = (int32_t)((uint32_t)1515870810 + (uint32_t)mob_high_mul(half, -1010580540));
        for (int32_t i = 0; i < 3; ++i) {
            const int32_t e = (int32_t)((uint32_t)(1 << 29) - (uint32_t)mob_high_mul(half, y));
            y = mob_wrap_add(y, mob_shl_sat(mob_high_mul(y, e), 2));
        }
        recip = mob_shl_sat(y, 1);
    }
    /* Rescale<5>(z_adj * log_2 (Q6.25) + Rescale<6>(num) * recip (Q6.25)) */
    return mob_pot(mob_wrap_add(mob_high_mul(z_adj, log_2), mob_high_mul(mob_pot(num, -6), recip)), 1);
}

/* Each term of a row's sum depends on its difference from the row's maximum alone (0 .. -255): scaled_of[-diff] is
 * the difference in Q5.26 and exp_of[-diff] its exp term in Q12.19 (0 .. 2^19; 0 below diff_min, which the sum
 * leaves out), computed the first time a difference comes (-1: not yet), so a call computes at most 256 exps however
 * many rows it has. The parameters are read into locals: the int8 stores may alias them. */
void aotc_tfl_log_softmax_s8(const aotc_tfl_log_softmax_params *p, const int8_t *x, int8_t *y) {
    const int32_t rows = p->rows, depth = p->depth, mult = p->mult, shift = p->shift, diff_min = p->diff_min;
    const int32_t reverse_mult = p->reverse_mult, reverse_shift = p->reverse_shift;
    const int32_t used = diff_min > 0 ? 0 : diff_min < -255 ? 256 : 1 - diff_min; /* differences diff_min .. 0 */
    int32_t exp_of[256], scaled_of[256];
    for (int32_t k = 0; k < 256; ++k) exp_of[k] = k < used ? -1 : 0, scaled_of[k] = 0;
    for (int32_t k = 0; k < used; ++k) scaled_of[k] = mob_requant(-k, mult, shift);
    for (int32_t r = 0; r < rows; ++r) {
        const int8_t *xr = x + (int64_t)r * depth;
        int8_t *yr = y + (int64_t)r * depth;
        int32_t top = -128, log_sum, adjusted, bound;
        uint32_t sum = 0; /* wraps as gemmlowp's */
        for (int32_t k = 0; k < depth; ++k) top = xr[k] > top ? xr[k] : top;
        for (int32_t k = 0; k < depth; ++k) {
            const int32_t back = top - xr[k];
            int32_t e = exp_of[back];
            if (e < 0) exp_of[back] = e = mob_divide_by_pot(mob_exp_negative(scaled_of[back]), 12);
            sum += (uint32_t)e;
        }
        log_sum = mob_log_q12_to_q5((int32_t)sum);
        bound = mob_requant((int32_t)((uint32_t)log_sum + 0x80000000u), reverse_mult, reverse_shift);
        adjusted = diff_min - 1 > bound ? diff_min - 1 : bound;
        for (int32_t k = 0; k < depth; ++k) {
            const int32_t back = top - xr[k];
            /* wrapping: where it would overflow the output is -128 (below adjusted) and out unused */
            const int32_t out = mob_divide_by_pot((int32_t)((uint32_t)scaled_of[back] - (uint32_t)log_sum), 22) + 127;
            yr[k] = (int8_t)(-back <= adjusted ? -128 : out < -128 ? -128 : out > 127 ? 127 : out);
        }
    }
}
