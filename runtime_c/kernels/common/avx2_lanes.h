/* The int8 convs' register block on AVX2 without VNNI, shared by the two families that sum 16-bit pairs by VPMADDWD
 * with positions in lanes: tflite_int8_packed.c's CONV_2D (tfl_pk_avx2_lanes16) and quant_impl.h's QDQ / QLinearConv
 * convs (qavx2_lanes). 4 output channels' sums over 16 positions (two 8-lane registers a channel: 8 accumulators, 2
 * rows of x and 4 broadcast weights of AVX2's 16 registers), each pair row a position's two 16-bit values of x against
 * a channel's pair of 16-bit weights, exact in 32 bits. The families lay out their operands differently (the stride of
 * x's pair rows and of the weights' rows, the accumulators' rows, a bias or zero to start from): the caller gives
 * them, and the block is inlined into each family's own function, where most of them are constants. Internal to
 * runtime_c/kernels. */
#ifndef AOTC_AVX2_LANES_H
#define AOTC_AVX2_LANES_H

#if defined(__AVX2__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define AOTC_AVX2_LANES_INLINE static inline __attribute__((always_inline))
#else
#define AOTC_AVX2_LANES_INLINE static inline
#endif

/* acc[c * acc_step + t] (+)= for t in [0, 16): the sum over pair rows j < nj of x's pair at px[j * x_step + t] times
 * channel c's pair of weights w[j * w_step + c], c < 4; started from init[c] (0 where init is NULL) where first */
AOTC_AVX2_LANES_INLINE void aotc_avx2_lanes16(const int32_t *px, int64_t x_step, const int32_t *w, int64_t w_step,
                                              int32_t nj, const int32_t *init, int first, int32_t *acc,
                                              int64_t acc_step) {
    int32_t *r0 = acc, *r1 = acc + acc_step, *r2 = acc + 2 * acc_step, *r3 = acc + 3 * acc_step;
    const int32_t *end = w + w_step * nj;
    __m256i a00, a01, a10, a11, a20, a21, a30, a31;
    if (first) {
        a00 = a01 = _mm256_set1_epi32(init ? init[0] : 0), a10 = a11 = _mm256_set1_epi32(init ? init[1] : 0);
        a20 = a21 = _mm256_set1_epi32(init ? init[2] : 0), a30 = a31 = _mm256_set1_epi32(init ? init[3] : 0);
    } else {
        a00 = _mm256_loadu_si256((const __m256i *)(void *)r0), a01 = _mm256_loadu_si256((const __m256i *)(void *)(r0 + 8));
        a10 = _mm256_loadu_si256((const __m256i *)(void *)r1), a11 = _mm256_loadu_si256((const __m256i *)(void *)(r1 + 8));
        a20 = _mm256_loadu_si256((const __m256i *)(void *)r2), a21 = _mm256_loadu_si256((const __m256i *)(void *)(r2 + 8));
        a30 = _mm256_loadu_si256((const __m256i *)(void *)r3), a31 = _mm256_loadu_si256((const __m256i *)(void *)(r3 + 8));
    }
    for (; w < end; w += w_step, px += x_step) {
        const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)px);
        const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(px + 8));
        const __m256i w0 = _mm256_set1_epi32(w[0]), w1 = _mm256_set1_epi32(w[1]);
        const __m256i w2 = _mm256_set1_epi32(w[2]), w3 = _mm256_set1_epi32(w[3]);
        a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(x0, w0)), a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(x1, w0));
        a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(x0, w1)), a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(x1, w1));
        a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(x0, w2)), a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(x1, w2));
        a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(x0, w3)), a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(x1, w3));
    }
    _mm256_storeu_si256((__m256i *)(void *)r0, a00), _mm256_storeu_si256((__m256i *)(void *)(r0 + 8), a01);
    _mm256_storeu_si256((__m256i *)(void *)r1, a10), _mm256_storeu_si256((__m256i *)(void *)(r1 + 8), a11);
    _mm256_storeu_si256((__m256i *)(void *)r2, a20), _mm256_storeu_si256((__m256i *)(void *)(r2 + 8), a21);
    _mm256_storeu_si256((__m256i *)(void *)r3, a30), _mm256_storeu_si256((__m256i *)(void *)(r3 + 8), a31);
}

/* aotc_avx2_lanes16 on 8 positions (a run's last, where its width is 8 past a multiple of 16) */
AOTC_AVX2_LANES_INLINE void aotc_avx2_lanes8(const int32_t *px, int64_t x_step, const int32_t *w, int64_t w_step,
                                             int32_t nj, const int32_t *init, int first, int32_t *acc,
                                             int64_t acc_step) {
    int32_t *r0 = acc, *r1 = acc + acc_step, *r2 = acc + 2 * acc_step, *r3 = acc + 3 * acc_step;
    const int32_t *end = w + w_step * nj;
    __m256i a0, a1, a2, a3;
    if (first) {
        a0 = _mm256_set1_epi32(init ? init[0] : 0), a1 = _mm256_set1_epi32(init ? init[1] : 0);
        a2 = _mm256_set1_epi32(init ? init[2] : 0), a3 = _mm256_set1_epi32(init ? init[3] : 0);
    } else {
        a0 = _mm256_loadu_si256((const __m256i *)(void *)r0), a1 = _mm256_loadu_si256((const __m256i *)(void *)r1);
        a2 = _mm256_loadu_si256((const __m256i *)(void *)r2), a3 = _mm256_loadu_si256((const __m256i *)(void *)r3);
    }
    for (; w < end; w += w_step, px += x_step) {
        const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)px);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x0, _mm256_set1_epi32(w[0])));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x0, _mm256_set1_epi32(w[1])));
        a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(x0, _mm256_set1_epi32(w[2])));
        a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(x0, _mm256_set1_epi32(w[3])));
    }
    _mm256_storeu_si256((__m256i *)(void *)r0, a0), _mm256_storeu_si256((__m256i *)(void *)r1, a1);
    _mm256_storeu_si256((__m256i *)(void *)r2, a2), _mm256_storeu_si256((__m256i *)(void *)r3, a3);
}

#endif
#endif
