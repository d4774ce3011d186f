/* TFLite's double-rounding requantisation (tflite_int8_internal.h's requant_double) in x86 vector lanes: 16 int32
 * lanes with AVX-512 (TFL_X86_AVX512: F, BW and VL, for the byte and word masked loads and stores of its users),
 * 8 with AVX2 (TFL_X86_AVX2, where AVX-512 is not there); neither with AOTC_NO_INTRINSICS or on other targets.
 * Used by the packed kernels' output stage (tflite_int8_packed.c), the elementwise MUL / ADD / SUB's runs
 * (tflite_int8_elementwise.c), SQUARED_DIFFERENCE's (tflite_int8_mobile.c) and the VNNI BATCH_MATMUL's output
 * (tflite_int8_matmul.c); SOFTMAX's rows read TFL_X86_AVX512 alone (tflite_int8_softmax.c). Bit for bit requant_double: its two roundings are one exact 64-bit shift,
 *
 *   RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(a, m), e), a = acc << left (wrapping in int32):
 *   floor((a m + 2^30 + n 2^31) / 2^(31 + e)) with n = 2^(e - 1) - [a m < -2^30] (0 for e = 0),
 *
 * as floor((floor(A / B) + n) / C) = floor((A + n B) / (B C)) for integers n, B, C > 0, the high product being
 * floor((a m + 2^30) / 2^31) for either sign of a m (internal.h's high_mul), negative exactly where a m < -2^30,
 * and RoundingDivideByPOT(r, e) = floor((r + 2^(e - 1) - [r < 0]) / 2^e). |a m| <= 2^62 and |n 2^31| <= 2^61:
 * no overflow; the quotient fits an int32, the low half of the 64-bit lane. (AVX2 has no arithmetic 64-bit shift:
 * there the sum is biased by 2^63, which makes it unsigned, and the logical shift's result less 2^(63 - 31 - e).)
 * SaturatingRoundingDoublingHighMul saturates
 * only for a = m = INT32_MIN, which this does not: a caller takes these lanes only where no multiplier is
 * INT32_MIN (quantize_multiplier never gives one; the compiler checks the packed kernels', the elementwise
 * kernels check theirs each call). Internal to runtime_c/kernels. */
#ifndef AOTC_TFLITE_INT8_X86_H
#define AOTC_TFLITE_INT8_X86_H

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && !defined(AOTC_NO_INTRINSICS)
#define TFL_X86_AVX512 1
#define TFL_X86_AVX2 0
#elif defined(__AVX2__) && !defined(AOTC_NO_INTRINSICS)
#define TFL_X86_AVX512 0
#define TFL_X86_AVX2 1
#else
#define TFL_X86_AVX512 0
#define TFL_X86_AVX2 0
#endif

/* with VBMI too (Ice Lake, Zen 4 and later): byte permutes across a register (the int8 lookup table's) */
#if TFL_X86_AVX512 && defined(__AVX512VBMI__)
#define TFL_X86_VBMI 1
#else
#define TFL_X86_VBMI 0
#endif

#if TFL_X86_AVX512 || TFL_X86_AVX2
#include <immintrin.h>
#if defined(__GNUC__) || defined(__clang__)
#define TFL_X86_INLINE static inline __attribute__((always_inline))
#else
#define TFL_X86_INLINE static inline
#endif
#endif

#if TFL_X86_AVX512
/* the constants of 16 lanes' requantisations (each lane its own multiplier and shift): even lanes' 64-bit
 * products sit in the even 64-bit halves, odd lanes' in the odd ones (_e, _o) */
typedef struct {
    __m512i left, mult, mult_odd, sh_e, sh_o, k_e, k_o, fix_e, fix_o;
} tfl_x86_rq;

TFL_X86_INLINE tfl_x86_rq tfl_x86_rq_init(__m512i mult, __m512i shift) {
    const __m512i zero = _mm512_setzero_si512(), half = _mm512_set1_epi64((int64_t)1 << 30);
    const __m512i right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
    const __m512i re = _mm512_and_si512(right, _mm512_set1_epi64(0xFFFFFFFF)), ro = _mm512_srli_epi64(right, 32);
    const __mmask8 pe = _mm512_cmpgt_epi64_mask(re, zero), po = _mm512_cmpgt_epi64_mask(ro, zero);
    tfl_x86_rq q;
    q.left = _mm512_max_epi32(shift, zero), q.mult = mult, q.mult_odd = _mm512_srli_epi64(mult, 32);
    q.sh_e = _mm512_add_epi64(re, _mm512_set1_epi64(31)), q.sh_o = _mm512_add_epi64(ro, _mm512_set1_epi64(31));
    q.k_e = _mm512_add_epi64(half, _mm512_maskz_sllv_epi64(pe, half, re));
    q.k_o = _mm512_add_epi64(half, _mm512_maskz_sllv_epi64(po, half, ro));
    q.fix_e = _mm512_maskz_mov_epi64(pe, _mm512_set1_epi64(-((int64_t)1 << 31)));
    q.fix_o = _mm512_maskz_mov_epi64(po, _mm512_set1_epi64(-((int64_t)1 << 31)));
    return q;
}

/* one multiplier and shift for all 16 lanes */
TFL_X86_INLINE tfl_x86_rq tfl_x86_rq_set1(int32_t mult, int32_t shift) {
    return tfl_x86_rq_init(_mm512_set1_epi32(mult), _mm512_set1_epi32(shift));
}

TFL_X86_INLINE __m512i tfl_x86_requant(__m512i acc, const tfl_x86_rq *q) {
    const __m512i low = _mm512_set1_epi64(-((int64_t)1 << 30));
    const __m512i a = _mm512_sllv_epi32(acc, q->left);
    const __m512i pe = _mm512_mul_epi32(a, q->mult), po = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), q->mult_odd);
    __m512i te = _mm512_add_epi64(pe, q->k_e), to = _mm512_add_epi64(po, q->k_o);
    te = _mm512_mask_add_epi64(te, _mm512_cmplt_epi64_mask(pe, low), te, q->fix_e);
    to = _mm512_mask_add_epi64(to, _mm512_cmplt_epi64_mask(po, low), to, q->fix_o);
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srav_epi64(te, q->sh_e),
                                   _mm512_slli_epi64(_mm512_srav_epi64(to, q->sh_o), 32));
}
#endif /* TFL_X86_AVX512 */

#if TFL_X86_AVX2 || TFL_X86_AVX512 /* (with AVX-512 too: an AVX-512 core without VNNI runs the packed kernels' AVX2 path) */
/* 8 lanes of one multiplier and shift (the elementwise kernels' case): the shifts' counts in a register; k the
 * rounding terms plus the bias 2^63 (mod 2^64), unbias the bias after the shift (mod 2^32) */
typedef struct {
    __m128i left, sh;
    __m256i mult, k, fix, unbias;
} tfl_x86_rq8;

TFL_X86_INLINE tfl_x86_rq8 tfl_x86_rq8_set1(int32_t mult, int32_t shift) {
    const int32_t left = shift > 0 ? shift : 0, e = shift > 0 ? 0 : -shift;
    const uint64_t k = ((uint64_t)1 << 30) + (e > 0 ? (uint64_t)1 << (30 + e) : 0) + ((uint64_t)1 << 63);
    tfl_x86_rq8 q;
    q.left = _mm_cvtsi32_si128(left), q.sh = _mm_cvtsi32_si128(31 + e), q.mult = _mm256_set1_epi32(mult);
    q.k = _mm256_set1_epi64x((int64_t)k);
    q.fix = _mm256_set1_epi64x(e > 0 ? -((int64_t)1 << 31) : 0);
    q.unbias = _mm256_set1_epi32((int32_t)(uint32_t)((uint64_t)1 << (32 - e))); /* 2^(63 - 31 - e) mod 2^32 */
    return q;
}

TFL_X86_INLINE __m256i tfl_x86_requant8(__m256i acc, const tfl_x86_rq8 *q) {
    const __m256i low = _mm256_set1_epi64x(-((int64_t)1 << 30));
    const __m256i a = _mm256_sll_epi32(acc, q->left);
    const __m256i pe = _mm256_mul_epi32(a, q->mult), po = _mm256_mul_epi32(_mm256_srli_epi64(a, 32), q->mult);
    const __m256i fe = _mm256_and_si256(_mm256_cmpgt_epi64(low, pe), q->fix);
    const __m256i fo = _mm256_and_si256(_mm256_cmpgt_epi64(low, po), q->fix);
    const __m256i te = _mm256_srl_epi64(_mm256_add_epi64(_mm256_add_epi64(pe, q->k), fe), q->sh);
    const __m256i to = _mm256_srl_epi64(_mm256_add_epi64(_mm256_add_epi64(po, q->k), fo), q->sh);
    return _mm256_sub_epi32(_mm256_blend_epi32(te, _mm256_slli_epi64(to, 32), 0xAA), q->unbias);
}

/* 8 lanes each with its own multiplier and shift (a conv's channels), the same arithmetic: the shifts as per-lane
 * counts (vpsllvd, vpsrlvq), even lanes' 64-bit products in the even halves, odd lanes' in the odd ones (_e, _o) */
typedef struct {
    __m256i left, mult, mult_odd, sh_e, sh_o, k_e, k_o, fix_e, fix_o, unbias;
} tfl_x86_rqv8;

TFL_X86_INLINE tfl_x86_rqv8 tfl_x86_rqv8_init(__m256i mult, __m256i shift) {
    const __m256i zero = _mm256_setzero_si256(), half = _mm256_set1_epi64x((int64_t)1 << 30);
    const __m256i bias = _mm256_set1_epi64x((int64_t)((uint64_t)1 << 63)), fix = _mm256_set1_epi64x(-((int64_t)1 << 31));
    const __m256i right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
    const __m256i re = _mm256_and_si256(right, _mm256_set1_epi64x(0xFFFFFFFF)), ro = _mm256_srli_epi64(right, 32);
    const __m256i pe = _mm256_cmpgt_epi64(re, zero), po = _mm256_cmpgt_epi64(ro, zero);
    tfl_x86_rqv8 q;
    q.left = _mm256_max_epi32(shift, zero), q.mult = mult, q.mult_odd = _mm256_srli_epi64(mult, 32);
    q.sh_e = _mm256_add_epi64(re, _mm256_set1_epi64x(31)), q.sh_o = _mm256_add_epi64(ro, _mm256_set1_epi64x(31));
    q.k_e = _mm256_add_epi64(_mm256_add_epi64(half, bias), _mm256_and_si256(pe, _mm256_sllv_epi64(half, re)));
    q.k_o = _mm256_add_epi64(_mm256_add_epi64(half, bias), _mm256_and_si256(po, _mm256_sllv_epi64(half, ro)));
    q.fix_e = _mm256_and_si256(pe, fix), q.fix_o = _mm256_and_si256(po, fix);
    /* 2^(63 - 31 - e) mod 2^32 a lane: 0 for e = 0 (vpsllvd gives 0 for a count of 32) */
    q.unbias = _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_sub_epi32(_mm256_set1_epi32(32), right));
    return q;
}

TFL_X86_INLINE __m256i tfl_x86_requantv8(__m256i acc, const tfl_x86_rqv8 *q) {
    const __m256i low = _mm256_set1_epi64x(-((int64_t)1 << 30));
    const __m256i a = _mm256_sllv_epi32(acc, q->left);
    const __m256i pe = _mm256_mul_epi32(a, q->mult), po = _mm256_mul_epi32(_mm256_srli_epi64(a, 32), q->mult_odd);
    const __m256i fe = _mm256_and_si256(_mm256_cmpgt_epi64(low, pe), q->fix_e);
    const __m256i fo = _mm256_and_si256(_mm256_cmpgt_epi64(low, po), q->fix_o);
    const __m256i te = _mm256_srlv_epi64(_mm256_add_epi64(_mm256_add_epi64(pe, q->k_e), fe), q->sh_e);
    const __m256i to = _mm256_srlv_epi64(_mm256_add_epi64(_mm256_add_epi64(po, q->k_o), fo), q->sh_o);
    return _mm256_sub_epi32(_mm256_blend_epi32(te, _mm256_slli_epi64(to, 32), 0xAA), q->unbias);
}
#endif /* TFL_X86_AVX2 || TFL_X86_AVX512 */

#endif /* AOTC_TFLITE_INT8_X86_H */
