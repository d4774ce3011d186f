/* TFLite's SOFTMAX (aotc_tflite_int8.h): int8 in gemmlowp's fixed point (to int8 or int16), 16x8 by
 * LiteRT's interpolated tables.
 *
 * int8's exp depends on x - max alone, one of 256 values: outside the M profile, a call of 256 elements or more
 * tabulates it once (issue 64: the encoder's attention, 65,536 elements a call, spent half its time in
 * exp_negative), with 0 for a difference under diff_min, which then adds 0 to the sum and gives the lowest output
 * as the plain loop's test does; with AVX-512 the rows then go 16 elements a vector, the table gathered. */
#include "tflite_int8_internal.h"
#include "tflite_int8_x86.h"

#if !(defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M') /* (2 KB of stack) */
#define TFL_SOFTMAX_TABLE 1
#else
#define TFL_SOFTMAX_TABLE 0
#endif

/* --- softmax: fixed point in the style of gemmlowp, Q<integer bits>.<31 - integer bits> in int32 ----- */
static int32_t wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t wrap_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

/* x * 2^e, saturating */
static int32_t shl_sat(int32_t x, int32_t e) {
    int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
    if (x > threshold) return INT32_MAX;
    if (x < -threshold) return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

/* exp(a) for a in [-1/4, 0), Q0.31: Taylor series around -1/8 */
static int32_t exp_quarter(int32_t a) {
    const int32_t exp_minus_eighth = 1895147668;  /* exp(-1/8) in Q0.31 */
    const int32_t one_third = 715827883;          /* 1/3 in Q0.31 */
    int32_t x = wrap_add(a, 1 << 28);
    int32_t x2 = high_mul(x, x), x3 = high_mul(x2, x), x4 = high_mul(x2, x2);
    int32_t poly = divide_by_pot(wrap_add(high_mul(wrap_add(divide_by_pot(x4, 2), x3), one_third), x2), 1);
    return wrap_add(exp_minus_eighth, high_mul(exp_minus_eighth, wrap_add(x, poly)));
}

/* exp(a) for a <= 0 in Q5.26 -> Q0.31: exp of a mod 1/4, times exp(-2^k) for each bit k of the rest */
static int32_t exp_negative(int32_t a) {
    /* exp(-1/4), exp(-1/2), exp(-1), exp(-2), exp(-4), exp(-8), exp(-16) in Q0.31 */
    static const int32_t factors[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    const int32_t quarter = 1 << 24;
    int32_t a_mod = wrap_sub(a & (quarter - 1), quarter);
    int32_t result = exp_quarter(shl_sat(a_mod, 5));
    int32_t remainder = wrap_sub(a_mod, a);
    for (int32_t k = 0; k < 7; ++k)
        if (remainder & (1 << (24 + k))) result = high_mul(result, factors[k]);
    return a == 0 ? INT32_MAX : result;
}

/* 1 / x for a positive x with `integer_bits` integer bits: Q0.31 and the bits it is over one */
static int32_t reciprocal(int32_t x, int32_t integer_bits, int32_t *bits_over) {
    int32_t headroom = 0;
#if defined(__GNUC__) || defined(__clang__)
    headroom = x == 0 ? 32 : __builtin_clz((uint32_t)x); /* (one instruction where the core counts zeros) */
#else
    while (headroom < 32 && !((uint32_t)x & (0x80000000u >> headroom))) ++headroom;
#endif
    *bits_over = integer_bits - headroom;
    int32_t a = (int32_t)(((uint32_t)x << headroom) - 0x80000000u);
    int64_t sum = (int64_t)a + INT32_MAX;
    int32_t half = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t y = wrap_add(1515870810, high_mul(half, -1010580540));  /* 48/17 - 32/17 * half, Q2.29 */
    for (int32_t i = 0; i < 3; ++i) {
        int32_t e = wrap_sub(1 << 29, high_mul(half, y));
        y = wrap_add(y, shl_sat(high_mul(y, e), 2));
    }
    return shl_sat(y, 1);
}

/* divide_by_pot for the output's exponent bits_over + 31 - BITS, which passes 31 when the exps' sum
 * has more than BITS bits over one (1000 classes: 33): x / 2^e with |x| <= 2^31 then rounds to 0, or
 * to -1 for INT32_MIN / 2^32 (half away from zero), where a 32-bit shift by e would be undefined */
static int32_t divide_by_pot_wide(int32_t x, int32_t e) {
    if (e > 31) return e == 32 && x == INT32_MIN ? -1 : 0;
    return divide_by_pot(x, e);
}

/* int8 SOFTMAX to int8 (BITS 8) or int16 (BITS 16, LiteRT's int8-in, int16-out case): the output is
 * the probability in Q0.BITS less 2^(BITS - 1) (zero point -128 or -32768) */
#define TFL_SOFTMAX8_PLAIN(NAME, TO, BITS, LO, HI)                                                        \
    static void NAME(const aotc_tfl_softmax_params *p, const int8_t *x, TO *y) {                         \
        for (int32_t r = 0; r < p->rows; ++r) {                                                         \
            const int8_t *xr = x + (int64_t)r * p->depth;                                               \
            TO *yr = y + (int64_t)r * p->depth;                                                         \
            int32_t top = -128, sum = 0, bits_over;                                                     \
            for (int32_t k = 0; k < p->depth; ++k) top = xr[k] > top ? xr[k] : top;                     \
            for (int32_t k = 0; k < p->depth; ++k) {                                                    \
                int32_t diff = xr[k] - top;                                                             \
                if (diff >= p->diff_min)                                                                \
                    sum = wrap_add(sum,                                                                 \
                                   divide_by_pot(exp_negative(high_mul(diff * (1 << p->shift), p->mult)), 12)); \
            }                                                                                           \
            int32_t scale = reciprocal(sum, 12, &bits_over);                                            \
            for (int32_t k = 0; k < p->depth; ++k) {                                                    \
                int32_t diff = xr[k] - top;                                                             \
                if (diff < p->diff_min) {                                                               \
                    yr[k] = (TO)(LO);                                                                   \
                    continue;                                                                           \
                }                                                                                       \
                int32_t e = exp_negative(high_mul(diff * (1 << p->shift), p->mult));                    \
                int32_t v = divide_by_pot_wide(high_mul(scale, e), bits_over + 31 - (BITS)) + (LO);     \
                yr[k] = (TO)(v < (LO) ? (LO) : v > (HI) ? (HI) : v);                                    \
            }                                                                                           \
        }                                                                                               \
    }
TFL_SOFTMAX8_PLAIN(tfl_softmax_s8_plain, int8_t, 8, -128, 127)
TFL_SOFTMAX8_PLAIN(tfl_softmax_s8_s16_plain, int16_t, 16, -32768, 32767)

#if TFL_SOFTMAX_TABLE
/* t[d]: the exp of the difference -d (0 under diff_min), t12[d]: its term of the sum */
static void tfl_softmax8_table(const aotc_tfl_softmax_params *p, int32_t *t, int32_t *t12) {
    for (int32_t d = 0; d < 256; ++d) {
        t[d] = -d >= p->diff_min ? exp_negative(high_mul(-d * (1 << p->shift), p->mult)) : 0;
        t12[d] = divide_by_pot(t[d], 12);
    }
}

#if TFL_X86_AVX512
#define TFL_SOFTMAX_KEEP 1024 /* the longest row whose exps are kept on the stack */

/* one row by the tables, 16 elements a vector: max by bytes, the sum's terms and the exps gathered; the output
 * divide_by_pot_wide(high_mul(scale, e), sh) of e >= 0 and scale > 0 (reciprocal's) is floor((scale e + 2^30 +
 * 2^(30 + sh)) / 2^(31 + sh)) in 64-bit lanes (floor(floor(A / B) + n) / C) = floor((A + n B) / (B C))), 0 where
 * sh > 31 (high_mul's value is under 2^31) and high_mul itself where sh is 0 */
static void tfl_softmax8_row_x86(const int8_t *x, void *y, int32_t n, int wide, const int32_t *t, const int32_t *t12,
                                 int32_t lo, int32_t hi) {
    __m512i vmax = _mm512_set1_epi8(-128), vsum = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi32(1);
    int32_t kept[TFL_SOFTMAX_KEEP + 16];
    int32_t k, top, sum, bits_over, sh;
    for (k = 0; k < n; k += 64) {
        const __mmask64 m = n - k >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - k)) - 1);
        vmax = _mm512_max_epi8(vmax, _mm512_mask_loadu_epi8(_mm512_set1_epi8(-128), m, x + k));
    }
    top = _mm512_reduce_max_epi32(_mm512_cvtepi8_epi32(_mm_max_epi8(
        _mm_max_epi8(_mm512_castsi512_si128(vmax), _mm512_extracti32x4_epi32(vmax, 1)),
        _mm_max_epi8(_mm512_extracti32x4_epi32(vmax, 2), _mm512_extracti32x4_epi32(vmax, 3)))));
    const __m512i vtop = _mm512_set1_epi32(top);
    const int keep = n <= TFL_SOFTMAX_KEEP; /* the exps kept for the output pass: one gather an element, not two */
    for (k = 0; k < n; k += 16) {
        const __mmask16 m = n - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - k)) - 1u);
        const __m512i d = _mm512_sub_epi32(vtop, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x + k)));
        if (keep) { /* divide_by_pot(e, 12) of e >= 0 in lanes: (e >> 12) + bit 11 of e */
            const __m512i e = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, d, t, 4);
            _mm512_storeu_si512(kept + k, e);
            vsum = _mm512_add_epi32(vsum, _mm512_add_epi32(_mm512_srli_epi32(e, 12),
                                                           _mm512_and_si512(_mm512_srli_epi32(e, 11), one)));
        } else {
            vsum = _mm512_add_epi32(vsum, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, d, t12, 4));
        }
    }
    sum = _mm512_reduce_add_epi32(vsum); /* (wrapping, as wrap_add) */
    const int32_t scale = reciprocal(sum, 12, &bits_over);
    sh = bits_over + 31 - (wide ? 16 : 8);
    const __m512i vscale = _mm512_set1_epi64(scale), vlo = _mm512_set1_epi32(lo), vhi = _mm512_set1_epi32(hi);
    const __m512i k0 = _mm512_set1_epi64(((int64_t)1 << 30) + (sh > 0 && sh <= 31 ? (int64_t)1 << (30 + sh) : 0));
    const __m128i cnt = _mm_cvtsi32_si128(31 + sh);
    for (k = 0; k < n; k += 16) {
        const __mmask16 m = n - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - k)) - 1u);
        const __m512i d = _mm512_sub_epi32(vtop, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x + k)));
        const __m512i e = keep ? _mm512_loadu_si512(kept + k) : _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, d, t, 4);
        __m512i v = _mm512_setzero_si512();
        if (sh <= 31) {
            const __m512i pe = _mm512_add_epi64(_mm512_mul_epu32(e, vscale), k0);
            const __m512i po = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(e, 32), vscale), k0);
            v = _mm512_mask_blend_epi32(0xAAAA, _mm512_srl_epi64(pe, cnt), _mm512_slli_epi64(_mm512_srl_epi64(po, cnt), 32));
        }
        v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, vlo), vlo), vhi);
        if (wide) _mm256_mask_storeu_epi16((int16_t *)y + k, m, _mm512_cvtepi32_epi16(v));
        else _mm_mask_storeu_epi8((int8_t *)y + k, m, _mm512_cvtepi32_epi8(v));
    }
}
#endif /* TFL_X86_AVX512 */

/* the rows by the tables (TFL_SOFTMAX8_PLAIN's arithmetic, each exp looked up) */
#define TFL_SOFTMAX8_TABLE(NAME, TO, BITS, LO, HI)                                                         \
    static void NAME(const aotc_tfl_softmax_params *p, const int8_t *x, TO *y) {                          \
        int32_t t[256], t12[256];                                                                       \
        tfl_softmax8_table(p, t, t12);                                                                  \
        for (int32_t r = 0; r < p->rows; ++r) {                                                         \
            const int8_t *xr = x + (int64_t)r * p->depth;                                               \
            TO *yr = y + (int64_t)r * p->depth;                                                         \
            int32_t top = -128, sum = 0, bits_over;                                                     \
            if (TFL_X86_AVX512) {                                                                       \
                TFL_SOFTMAX8_X86(xr, yr, p->depth, (BITS) == 16, t, t12, LO, HI);                        \
                continue;                                                                               \
            }                                                                                           \
            for (int32_t k = 0; k < p->depth; ++k) top = xr[k] > top ? xr[k] : top;                     \
            for (int32_t k = 0; k < p->depth; ++k) sum = wrap_add(sum, t12[top - xr[k]]);               \
            int32_t scale = reciprocal(sum, 12, &bits_over);                                            \
            for (int32_t k = 0; k < p->depth; ++k) {                                                    \
                int32_t v = divide_by_pot_wide(high_mul(scale, t[top - xr[k]]), bits_over + 31 - (BITS)) + (LO); \
                yr[k] = (TO)(v < (LO) ? (LO) : v > (HI) ? (HI) : v);                                    \
            }                                                                                           \
        }                                                                                               \
    }
#if TFL_X86_AVX512
#define TFL_SOFTMAX8_X86 tfl_softmax8_row_x86
#else
#define TFL_SOFTMAX8_X86(x, y, n, wide, t, t12, lo, hi) ((void)0)
#endif
TFL_SOFTMAX8_TABLE(tfl_softmax_s8_table, int8_t, 8, -128, 127)
TFL_SOFTMAX8_TABLE(tfl_softmax_s8_s16_table, int16_t, 16, -32768, 32767)
#endif /* TFL_SOFTMAX_TABLE */

/* the tables where they pay: an element a table entry or more (the plain loop takes two exps an element, the table
 * one an entry; issue 64: an int8 MobileNetV2's 1000 classes, 1.5 % of its time in the plain loop) */
void aotc_tfl_softmax_s8(const aotc_tfl_softmax_params *p, const int8_t *x, int8_t *y) {
#if TFL_SOFTMAX_TABLE
    if ((int64_t)p->rows * p->depth >= 256) {
        tfl_softmax_s8_table(p, x, y);
        return;
    }
#endif
    tfl_softmax_s8_plain(p, x, y);
}

void aotc_tfl_softmax_s8_s16(const aotc_tfl_softmax_params *p, const int8_t *x, int16_t *y) {
#if TFL_SOFTMAX_TABLE
    if ((int64_t)p->rows * p->depth >= 256) {
        tfl_softmax_s8_s16_table(p, x, y);
        return;
    }
#endif
    tfl_softmax_s8_s16_plain(p, x, y);
}

/* the table's value at v: anchor 256 + v / 128, plus the slope to the next times v's 7 low bits */
static int16_t lut16(const int16_t *t, int32_t v) {
    int32_t i = 256 + (v >> 7), low = v & 0x7F;
    int32_t base = t[i], slope = t[i + 1] - t[i];
    return (int16_t)(base + ((slope * low + 64) >> 7));
}

static int16_t softmax16_exp(const aotc_tfl_softmax16_params *p, int32_t diff) {
    int32_t v = requant_double(diff, p->mult, p->shift) + 32767;
    return lut16(p->exp_table, v < -32768 ? -32768 : v > 32767 ? 32767 : v);
}

/* the exps are computed twice rather than kept in y, which may share x's memory */
void aotc_tfl_softmax_s16(const aotc_tfl_softmax16_params *p, const int16_t *x, int16_t *y) {
    for (int32_t r = 0; r < p->rows; ++r) {
        const int16_t *xr = x + (int64_t)r * p->depth;
        int16_t *yr = y + (int64_t)r * p->depth;
        int32_t top = -32768, sum = 0, zeros = 0;
        for (int32_t k = 0; k < p->depth; ++k) top = xr[k] > top ? xr[k] : top;
        for (int32_t k = 0; k < p->depth; ++k) sum += softmax16_exp(p, xr[k] - top);
        while (zeros < 32 && !((uint32_t)sum & (0x80000000u >> zeros))) ++zeros;  /* the max's exp > 0 */
        /* sum normalised to [1, 2) in Q.14, less 1, recentred on [-32768, 32767] */
        int32_t shifted = (int32_t)((((int64_t)sum << (zeros - 1)) + (1 << 13)) >> 14) - (1 << 15) - (1 << 16);
        int32_t scale = lut16(p->recip_table, shifted < -32768 ? -32768 : shifted > 32767 ? 32767 : shifted);
        int32_t right = 31 - zeros;
        for (int32_t k = 0; k < p->depth; ++k) {
            int64_t v = ((int64_t)softmax16_exp(p, xr[k] - top) * scale + ((int64_t)1 << (right - 1))) >> right;
            yr[k] = (int16_t)(v < 0 ? 0 : v > 32767 ? 32767 : v);
        }
    }
}
