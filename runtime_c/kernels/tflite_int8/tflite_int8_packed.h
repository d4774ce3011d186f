/* What the packed int8 kernels' files share (tflite_int8_packed.c: CONV_2D and DEPTHWISE_CONV_2D;
 * tflite_int8_packed_fc.c: FULLY_CONNECTED): the ISA each compiles for, a row of x made unsigned, the AVX2 pair of
 * dot products and the size below which a kernel keeps to the calling thread. Two files, not one, so that a bundle
 * of FULLY_CONNECTED layers alone (an MLP, a keyword model's head) does not compile the convolutions: the one file
 * took 4.5-5.2 s of gcc -O3 -march=native (8.6-9.3 s at the fast tests' -O2 -g), its FULLY_CONNECTED 0.8 s (1.1-1.3).
 * Internal to runtime_c/kernels. */
#ifndef AOTC_TFLITE_INT8_PACKED_H
#define AOTC_TFLITE_INT8_PACKED_H

#include "aotc_threads.h"
#include "tflite_int8_internal.h"

#if defined(__AVX512VNNI__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#define TFL_PK_VNNI 1
#else
#define TFL_PK_VNNI 0
#endif
/* AVX2 without AVX-512 VNNI (an x86-64-v3 build): the sums by vpmaddwd (tfl_pk_avx2_pair) */
#if !TFL_PK_VNNI && defined(__AVX2__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#define TFL_PK_AVX2 1
#else
#define TFL_PK_AVX2 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TFL_PK_INLINE static inline __attribute__((always_inline))
#else
#define TFL_PK_INLINE static inline
#endif

/* n bytes made unsigned, x ^ 0x80 (x + 128, which the folded bias undoes): words of 8 bytes and then single bytes
 * for the last few (a kernel row of a stem is a few bytes, and masked stores and calls of memcpy cost more) */
TFL_PK_INLINE void tfl_pk_xor_copy(uint8_t *d, const int8_t *s, int32_t n) {
    uint64_t v;
#if TFL_PK_VNNI
    const __m512i top = _mm512_set1_epi8((char)0x80);
    for (; n >= 64; n -= 64, d += 64, s += 64) _mm512_storeu_si512(d, _mm512_xor_si512(_mm512_loadu_si512(s), top));
#endif
    for (; n >= 8; n -= 8, d += 8, s += 8) {
        memcpy(&v, s, 8);
        v ^= 0x8080808080808080u;
        memcpy(d, &v, 8);
    }
    for (; n > 0; --n) *d++ = (uint8_t)((uint8_t)*s++ ^ 0x80u);
}

/* the fewest multiply-adds a conv splits over a --threads pool: below, a region's wake and the lines that pass
 * between the cores (a few to 20 us on a VM whose vCPUs sit on different dies, README "Threads") cost about what
 * the second thread saves, and the calling thread runs it alone */
#ifndef TFL_PK_POOL_MIN_MACS
#define TFL_PK_POOL_MIN_MACS (1 << 20)
#endif

#if TFL_PK_AVX2
/* two positions' patches (a0, a1: `rows` runs of rq quads, run j at + j rowstep) x one block of 16 channels' packed
 * weights (wb: rows x rq quads of 16 x 4 bytes) to their 16 sums each (sums[0 ..], sums[16 ..]). No VNNI: a quad's
 * bytes zero-extended to 16 bits by a broadcast, the weights sign-extended, and vpmaddwd's pairs (exact: |255 w| +
 * |255 w| < 2^31), each channel's two pair sums added at the end */
TFL_PK_INLINE void tfl_pk_avx2_pair(const uint8_t *a0, const uint8_t *a1, int32_t rows, int64_t rowstep, int32_t rq,
                                    const int8_t *wb, int32_t *sums) {
    /* a quad's bytes to 16 bits in every 64-bit quarter: a broadcast, then one byte shuffle (6 % faster than a
     * widening and a second broadcast, in a loop of the pair alone) */
    const __m256i widen = _mm256_setr_epi8(0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1,
                                           3, -1, 0, -1, 1, -1, 2, -1, 3, -1);
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
    int32_t j, q, u, v;
    for (j = 0; j < rows; ++j)
        for (q = 0; q < rq; ++q, wb += 64) {
            const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)wb));
            const __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wb + 16)));
            const __m256i w2 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wb + 32)));
            const __m256i w3 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wb + 48)));
            __m256i x, z;
            memcpy(&u, a0 + j * rowstep + 4 * q, 4);
            memcpy(&v, a1 + j * rowstep + 4 * q, 4);
            x = _mm256_shuffle_epi8(_mm256_set1_epi32(u), widen);
            z = _mm256_shuffle_epi8(_mm256_set1_epi32(v), widen);
            s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(x, w0)), t0 = _mm256_add_epi32(t0, _mm256_madd_epi16(z, w0));
            s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(x, w1)), t1 = _mm256_add_epi32(t1, _mm256_madd_epi16(z, w1));
            s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(x, w2)), t2 = _mm256_add_epi32(t2, _mm256_madd_epi16(z, w2));
            s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(x, w3)), t3 = _mm256_add_epi32(t3, _mm256_madd_epi16(z, w3));
        }
    /* s0's lanes: channels 0, 1 | 2, 3 as two pair sums each; hadd gives 0 1 4 5 | 2 3 6 7, the permute 0 .. 7 */
    _mm256_storeu_si256((__m256i *)sums, _mm256_permute4x64_epi64(_mm256_hadd_epi32(s0, s1), 0xD8));
    _mm256_storeu_si256((__m256i *)(sums + 8), _mm256_permute4x64_epi64(_mm256_hadd_epi32(s2, s3), 0xD8));
    _mm256_storeu_si256((__m256i *)(sums + 16), _mm256_permute4x64_epi64(_mm256_hadd_epi32(t0, t1), 0xD8));
    _mm256_storeu_si256((__m256i *)(sums + 24), _mm256_permute4x64_epi64(_mm256_hadd_epi32(t2, t3), 0xD8));
}
#endif

#endif /* AOTC_TFLITE_INT8_PACKED_H */
