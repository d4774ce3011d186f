/* The Philox4x32-10 generator and TFLite's RANDOM_UNIFORM / RANDOM_STANDARD_NORMAL / MULTINOMIAL on it, and
 * STABLEHLO_RNG_BIT_GENERATOR's raw bits of Philox4x32-10 or ThreeFry2x32-20 (aotc_philox.h). */
#include "aotc_philox.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* With AVX2 (x86 hosts), STABLEHLO_RNG_BIT_GENERATOR's Philox takes 8 blocks at a time, one in each 32-bit lane */
#if defined(__AVX2__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#define AOTC_PHILOX_AVX2 1
#else
#define AOTC_PHILOX_AVX2 0
#endif

/* Philox4x32's round multipliers and Weyl key increments (the published constants) */
#define PHILOX_MUL0 0xD2511F53u
#define PHILOX_MUL1 0xCD9E8D57u
#define PHILOX_WEYL0 0x9E3779B9u
#define PHILOX_WEYL1 0xBB67AE85u
#define PHILOX_ROUNDS 10

/* the block of 4 words at counter c under key (k0, k1) */
static void philox_block(const uint32_t c[4], uint32_t k0, uint32_t k1, uint32_t out[4]) {
    uint32_t x0 = c[0], x1 = c[1], x2 = c[2], x3 = c[3];
    int r;
    for (r = 0; r < PHILOX_ROUNDS; ++r) {
        const uint64_t p0 = (uint64_t)PHILOX_MUL0 * x0, p1 = (uint64_t)PHILOX_MUL1 * x2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
        x1 = (uint32_t)p1;
        x3 = (uint32_t)p0;
        x0 = n0;
        x2 = n2;
        k0 += PHILOX_WEYL0;
        k1 += PHILOX_WEYL1;
    }
    out[0] = x0;
    out[1] = x1;
    out[2] = x2;
    out[3] = x3;
}

/* the 128-bit counter plus one */
static void philox_step(uint32_t c[4]) {
    int i;
    for (i = 0; i < 4; ++i)
        if (++c[i] != 0u) break;
}

/* a word's low 23 bits as a float in [0, 1) */
static float word_to_unit(uint32_t w) {
    const uint32_t bits = (127u << 23) | (w & 0x7fffffu);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f - 1.0f;
}

static void philox_fill(size_t n, uint32_t key0, uint32_t key1, const uint32_t *counter, float *y,
                        uint32_t *counter_next, int normal) {
    uint32_t c[4], w[4];
    size_t i = 0;
    memcpy(c, counter, sizeof c);
    while (i < n) {
        const size_t take = n - i < 4 ? n - i : 4;
        size_t j;
        philox_block(c, key0, key1, w);
        philox_step(c);
        if (!normal) {
            for (j = 0; j < take; ++j) y[i + j] = word_to_unit(w[j]);
        } else {
            for (j = 0; j < take; j += 2) {
                float u1 = word_to_unit(w[j]);
                float t, r;
                if (u1 < 1.0e-7f) u1 = 1.0e-7f;
                t = (float)(2.0 * 3.14159265358979323846 * (double)word_to_unit(w[j + 1]));
                r = sqrtf(-2.0f * logf(u1));
                y[i + j] = sinf(t) * r;
                if (j + 1 < take) y[i + j + 1] = cosf(t) * r;
            }
        }
        i += take;
    }
    memcpy(counter_next, c, sizeof c);
}

void aotc_philox_uniform_f32(size_t n, uint32_t key0, uint32_t key1, const uint32_t *counter, float *y,
                             uint32_t *counter_next) {
    philox_fill(n, key0, key1, counter, y, counter_next, 0);
}

void aotc_philox_normal_f32(size_t n, uint32_t key0, uint32_t key1, const uint32_t *counter, float *y,
                            uint32_t *counter_next) {
    philox_fill(n, key0, key1, counter, y, counter_next, 1);
}

/* 128-bit counter plus a 64-bit count */
static void philox_skip(uint32_t c[4], uint64_t count) {
    const uint64_t lo = (uint64_t)c[0] + (uint32_t)count;
    const uint64_t mid = (uint64_t)c[1] + (uint32_t)(count >> 32) + (lo >> 32);
    c[0] = (uint32_t)lo;
    c[1] = (uint32_t)mid;
    if (mid >> 32)
        if (++c[2] == 0u) ++c[3];
}

void aotc_philox_multinomial(const aotc_philox_multinomial_params *p, const uint32_t *counter, const float *logits,
                             void *out, uint32_t *counter_next, double *scratch) {
    uint32_t c[4], next[4], w[4];
    int used = 4;
    int32_t b;
    memcpy(c, counter, sizeof c);
    memcpy(next, counter, sizeof next);
    philox_skip(next, (uint64_t)p->batch * (((uint64_t)p->samples + 3u) / 4u * 4u) * 2u * 256u);
    for (b = 0; b < p->batch; ++b) {
        const float *row = logits + (size_t)b * (size_t)p->classes;
        float max = -FLT_MAX;
        double total = 0.0;
        int32_t i, j;
        for (i = 0; i < p->classes; ++i)
            if (isfinite(row[i]) && row[i] > max) max = row[i];
        for (i = 0; i < p->classes; ++i) {
            if (isfinite(row[i])) total += exp((double)row[i] - (double)max);
            scratch[i] = total;
        }
        for (j = 0; j < p->samples; ++j) {
            double u, find;
            int32_t lo = 0, hi = p->classes;
            uint64_t bits;
            if (used == 4) {
                philox_block(c, p->key0, p->key1, w);
                philox_step(c);
                used = 0;
            }
            bits = ((uint64_t)1023u << 52) | ((uint64_t)(w[used] & 0xfffffu) << 32) | w[used + 1];
            used += 2;
            memcpy(&u, &bits, sizeof u);
            find = (u - 1.0) * total;
            while (lo < hi) { /* the first cdf entry above find */
                const int32_t mid = lo + (hi - lo) / 2;
                if (scratch[mid] > find) hi = mid; else lo = mid + 1;
            }
            if (p->out64) ((int64_t *)out)[(size_t)b * (size_t)p->samples + (size_t)j] = lo;
            else ((int32_t *)out)[(size_t)b * (size_t)p->samples + (size_t)j] = lo;
        }
    }
    memcpy(counter_next, next, sizeof next);
}

/* ---- STABLEHLO_RNG_BIT_GENERATOR ---- */

/* the n elements' words [i, i + take) from a block w: whole 32-bit elements, or 64-bit ones of two words (i and
 * take are even then: a block's 4 or 2 words hold whole elements) */
static void put_words(void *y, int wide, size_t i, size_t take, const uint32_t *w) {
    size_t j;
    if (wide) {
        uint64_t *y64 = (uint64_t *)y + i / 2;
        for (j = 0; j < take; j += 2) y64[j / 2] = (uint64_t)w[j] | (uint64_t)w[j + 1] << 32;
    } else {
        uint32_t *y32 = (uint32_t *)y + i;
        for (j = 0; j < take; ++j) y32[j] = w[j];
    }
}

#if AOTC_PHILOX_AVX2
/* the 32-bit lanes' products by m: low and high halves */
static void mulhilo8(__m256i x, __m256i m, __m256i *lo, __m256i *hi) {
    const __m256i even = _mm256_mul_epu32(x, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), m);
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

/* the blocks at counters ctr .. ctr + 7 (modulo 2^64; the upper words c2, c3), their 32 words to y in order: the
 * bytes of both output layouts on a little-endian x86 */
static void philox_blocks8(uint64_t ctr, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1, void *y) {
    const __m256i m0 = _mm256_set1_epi32((int)PHILOX_MUL0), m1 = _mm256_set1_epi32((int)PHILOX_MUL1);
    uint32_t lo[8], hi[8];
    __m256i x0, x1, x2, x3, t0, t1, t2, t3, u0, u1, u2, u3;
    int i;
    for (i = 0; i < 8; ++i) {
        const uint64_t c = ctr + (uint64_t)i;
        lo[i] = (uint32_t)c;
        hi[i] = (uint32_t)(c >> 32);
    }
    x0 = _mm256_loadu_si256((const __m256i *)(const void *)lo);
    x1 = _mm256_loadu_si256((const __m256i *)(const void *)hi);
    x2 = _mm256_set1_epi32((int)c2);
    x3 = _mm256_set1_epi32((int)c3);
    for (i = 0; i < PHILOX_ROUNDS; ++i) {
        __m256i lo0, hi0, lo1, hi1;
        mulhilo8(x0, m0, &lo0, &hi0);
        mulhilo8(x2, m1, &lo1, &hi1);
        x0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1), _mm256_set1_epi32((int)k0));
        x2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3), _mm256_set1_epi32((int)k1));
        x1 = lo1;
        x3 = lo0;
        k0 += PHILOX_WEYL0;
        k1 += PHILOX_WEYL1;
    }
    /* lanes (blocks) to rows of 4 words: 128-bit halves hold blocks 0-3 and 4-7 */
    t0 = _mm256_unpacklo_epi32(x0, x1); /* x0 x1 of blocks 0, 1 | 4, 5 */
    t1 = _mm256_unpackhi_epi32(x0, x1); /* 2, 3 | 6, 7 */
    t2 = _mm256_unpacklo_epi32(x2, x3);
    t3 = _mm256_unpackhi_epi32(x2, x3);
    u0 = _mm256_unpacklo_epi64(t0, t2); /* block 0 | 4 */
    u1 = _mm256_unpackhi_epi64(t0, t2); /* 1 | 5 */
    u2 = _mm256_unpacklo_epi64(t1, t3); /* 2 | 6 */
    u3 = _mm256_unpackhi_epi64(t1, t3); /* 3 | 7 */
    _mm256_storeu_si256((__m256i *)y, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256((__m256i *)y + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256((__m256i *)y + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256((__m256i *)y + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
}
#endif

void aotc_rng_bits_philox(size_t state_len, const uint64_t *state, uint64_t *state_next, size_t n, int wide,
                          void *y) {
    const uint64_t key = state[0], high = state_len == 3 ? state[2] : state[0];
    const uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    const size_t words = wide ? 2u * n : n;
    uint64_t ctr = state[1];
    uint32_t c[4], w[4];
    size_t i = 0;
    c[2] = (uint32_t)high;
    c[3] = (uint32_t)(high >> 32);
#if AOTC_PHILOX_AVX2
    for (; i + 32 <= words; i += 32, ctr += 8) philox_blocks8(ctr, c[2], c[3], k0, k1, (uint32_t *)y + i);
#endif
    for (; i < words; i += 4) { /* whole blocks (4 words stored, unrolled), then a short last one */
        c[0] = (uint32_t)ctr;
        c[1] = (uint32_t)(ctr >> 32);
        philox_block(c, k0, k1, w);
        ++ctr;
        if (words - i >= 4) put_words(y, wide, i, 4, w);
        else put_words(y, wide, i, words - i, w);
    }
    state_next[0] = key;
    state_next[1] = ctr;
    if (state_len == 3) state_next[2] = high;
}

/* ThreeFry2x32-20: four rounds of add, rotate (by R0 .. R3), xor between injections of the key schedule (the key
 * words ks0, ks1 and their parity word ks2 = ks0 ^ ks1 ^ THREEFRY_PARITY in turn, plus the injection's number),
 * the rotation distances alternating between the two sets of four */
#define THREEFRY_PARITY 0x1BD11BDAu
#define THREEFRY_ROTL(v, r) (((v) << (r)) | ((v) >> (32 - (r))))
#define THREEFRY_MIX(r) (x0 += x1, x1 = THREEFRY_ROTL(x1, r), x1 ^= x0)
#define THREEFRY_FOUR(r0, r1, r2, r3, a, b, s) \
    (THREEFRY_MIX(r0), THREEFRY_MIX(r1), THREEFRY_MIX(r2), THREEFRY_MIX(r3), x0 += (a), x1 += (b) + (s))
#define THREEFRY_20(ks0, ks1, ks2)                     \
    (THREEFRY_FOUR(13, 15, 26, 6, ks1, ks2, 1u),  \
     THREEFRY_FOUR(17, 29, 16, 24, ks2, ks0, 2u), \
     THREEFRY_FOUR(13, 15, 26, 6, ks0, ks1, 3u),  \
     THREEFRY_FOUR(17, 29, 16, 24, ks1, ks2, 4u), \
     THREEFRY_FOUR(13, 15, 26, 6, ks2, ks0, 5u))

/* the block of 2 words at counter (c0, c1) under key ks[0], ks[1] (ks[2] their parity word) */
static void threefry_block(uint32_t c0, uint32_t c1, const uint32_t ks[3], uint32_t out[2]) {
    uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
    THREEFRY_20(ks[0], ks[1], ks[2]);
    out[0] = x0;
    out[1] = x1;
}

#if AOTC_PHILOX_AVX2
/* the blocks at counters ctr .. ctr + 7 (modulo 2^64), one in each 32-bit lane, their 16 words to y in order */
static void threefry_blocks8(uint64_t ctr, const uint32_t ks[3], void *y) {
    const __m256i k0 = _mm256_set1_epi32((int)ks[0]), k1 = _mm256_set1_epi32((int)ks[1]);
    const __m256i k2 = _mm256_set1_epi32((int)ks[2]);
    uint32_t lo[8], hi[8];
    __m256i x0, x1, t0, t1;
    int i;
    for (i = 0; i < 8; ++i) {
        const uint64_t c = ctr + (uint64_t)i;
        lo[i] = (uint32_t)c;
        hi[i] = (uint32_t)(c >> 32);
    }
    x0 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)lo), k0);
    x1 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)hi), k1);
#define THREEFRY_MIX8(r)                                                                               \
    (x0 = _mm256_add_epi32(x0, x1),                                                                    \
     x1 = _mm256_xor_si256(_mm256_or_si256(_mm256_slli_epi32(x1, r), _mm256_srli_epi32(x1, 32 - (r))), x0))
#define THREEFRY_FOUR8(r0, r1, r2, r3, a, b, s)                                                        \
    (THREEFRY_MIX8(r0), THREEFRY_MIX8(r1), THREEFRY_MIX8(r2), THREEFRY_MIX8(r3), x0 = _mm256_add_epi32(x0, a), \
     x1 = _mm256_add_epi32(x1, _mm256_add_epi32(b, _mm256_set1_epi32(s))))
    THREEFRY_FOUR8(13, 15, 26, 6, k1, k2, 1);
    THREEFRY_FOUR8(17, 29, 16, 24, k2, k0, 2);
    THREEFRY_FOUR8(13, 15, 26, 6, k0, k1, 3);
    THREEFRY_FOUR8(17, 29, 16, 24, k1, k2, 4);
    THREEFRY_FOUR8(13, 15, 26, 6, k2, k0, 5);
#undef THREEFRY_MIX8
#undef THREEFRY_FOUR8
    t0 = _mm256_unpacklo_epi32(x0, x1); /* blocks 0, 1 | 4, 5 */
    t1 = _mm256_unpackhi_epi32(x0, x1); /* 2, 3 | 6, 7 */
    _mm256_storeu_si256((__m256i *)y, _mm256_permute2x128_si256(t0, t1, 0x20));
    _mm256_storeu_si256((__m256i *)y + 1, _mm256_permute2x128_si256(t0, t1, 0x31));
}
#endif

void aotc_rng_bits_threefry(const uint64_t *state, uint64_t *state_next, size_t n, int wide, void *y) {
    const uint64_t key = state[0];
    const size_t words = wide ? 2u * n : n;
    uint64_t ctr = state[1];
    uint32_t ks[3], w[2];
    size_t i = 0;
    ks[0] = (uint32_t)key;
    ks[1] = (uint32_t)(key >> 32);
    ks[2] = ks[0] ^ ks[1] ^ THREEFRY_PARITY;
#if AOTC_PHILOX_AVX2
    for (; i + 16 <= words; i += 16, ctr += 8) threefry_blocks8(ctr, ks, (uint32_t *)y + i);
#endif
    for (; i < words; i += 2) {
        threefry_block((uint32_t)ctr, (uint32_t)(ctr >> 32), ks, w);
        ++ctr;
        if (words - i >= 2) put_words(y, wide, i, 2, w);
        else put_words(y, wide, i, 1, w);
    }
    state_next[0] = key;
    state_next[1] = ctr;
}
