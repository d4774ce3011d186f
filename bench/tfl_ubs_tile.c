/* Issue 64: the .tflite CONV_2D's AVX2 tile alone, by vpmaddwd (as tflite_int8_packed.c now) against vpmaddubsw on
 * weights clipped by aot/kernels/quant_ubs.py with their fix entries (exact), in two layouts. Data from
 * bench/tfl_ubs_tile.py (a block of 16 channels, 64 positions of kq quads; its reference sums). Built and run by it:
 *   A: tfl_pk_avx2_pair16's design: channels in lanes, the weights widened once, a quad of each of two positions
 *      broadcast and widened by a shuffle, vpmaddwd (exact);
 *   B: channels in lanes, vpmaddubsw on the clipped weights, two quads a 16-bit lane (vpaddw, vpmaddwd by ones):
 *      no fixes, so not exact: the ceiling of the clipping;
 *   C: B and its fix entries (a quad x 16 channels each, pair-safe parts) a position at a time (exact);
 *   D: A with the patches widened to 16 bits once, each quad one vpbroadcastq (no shuffle) (exact);
 *   E: positions in lanes (quant_impl.h qconv_patches_ubs's layout: 8 positions' quads a vector, the patches
 *      transposed once, not timed), 4 channels x 16 positions on the clipped words broadcast, then each fix entry
 *      (one channel's quad) over the 16 positions (exact).
 *   F: vpmaddwd with positions in lanes (quant_impl.h qavx2_lanes's design), everything timed: the weights widened, the
 *      patch block made from the positions' bytes (8 x 8 transposes), 4 channels x 16 positions, the sums transposed
 *      back; F_BLOCKS=4 takes the 16 channels 4 times a patch block, as a run of 64 channels would (exact).
 * GMAC/s on this thread's CPU time, the best of 7 timings; each tile's sums checked against the reference. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int32_t kq, npos, nfix;
static int8_t *w, *wc, *fixv;
static int32_t *fixq, *ref;
static uint8_t *x;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void tile_a(int32_t *out) {
    static int16_t w16[2048 * 64] __attribute__((aligned(32)));
    const __m256i widen = _mm256_setr_epi8(0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1,
                                           3, -1, 0, -1, 1, -1, 2, -1, 3, -1);
    int32_t i, t, q, u, v;
    for (i = 0; i < kq * 4; ++i)
        _mm256_store_si256((__m256i *)(w16 + 16 * i), _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 16 * i))));
    for (t = 0; t < npos; t += 2) {
        const uint8_t *x0 = x + (int64_t)t * kq * 4, *x1 = x0 + kq * 4;
        __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
        const int16_t *wb = w16;
        for (q = 0; q < kq; ++q, wb += 64) {
            const __m256i w0 = _mm256_load_si256((const __m256i *)wb), w1 = _mm256_load_si256((const __m256i *)(wb + 16));
            const __m256i w2 = _mm256_load_si256((const __m256i *)(wb + 32)), w3 = _mm256_load_si256((const __m256i *)(wb + 48));
            __m256i a, b;
            memcpy(&u, x0 + 4 * q, 4), memcpy(&v, x1 + 4 * q, 4);
            a = _mm256_shuffle_epi8(_mm256_set1_epi32(u), widen), b = _mm256_shuffle_epi8(_mm256_set1_epi32(v), widen);
            s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(a, w0)), t0 = _mm256_add_epi32(t0, _mm256_madd_epi16(b, w0));
            s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(a, w1)), t1 = _mm256_add_epi32(t1, _mm256_madd_epi16(b, w1));
            s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(a, w2)), t2 = _mm256_add_epi32(t2, _mm256_madd_epi16(b, w2));
            s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(a, w3)), t3 = _mm256_add_epi32(t3, _mm256_madd_epi16(b, w3));
        }
        _mm256_storeu_si256((__m256i *)(out + 16 * t), _mm256_permute4x64_epi64(_mm256_hadd_epi32(s0, s1), 0xD8));
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 8), _mm256_permute4x64_epi64(_mm256_hadd_epi32(s2, s3), 0xD8));
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 16), _mm256_permute4x64_epi64(_mm256_hadd_epi32(t0, t1), 0xD8));
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 24), _mm256_permute4x64_epi64(_mm256_hadd_epi32(t2, t3), 0xD8));
    }
}

static void tile_d(int32_t *out) {
    static int16_t w16[2048 * 64] __attribute__((aligned(32)));
    static int16_t x16[64 * 2048 * 4] __attribute__((aligned(32)));
    int32_t i, t, q;
    for (i = 0; i < kq * 4; ++i)
        _mm256_store_si256((__m256i *)(w16 + 16 * i), _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 16 * i))));
    for (i = 0; i < npos * kq * 4; i += 16)
        _mm256_store_si256((__m256i *)(x16 + i), _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(x + i))));
    for (t = 0; t < npos; t += 2) {
        const int16_t *x0 = x16 + (int64_t)t * kq * 4, *x1 = x0 + kq * 4;
        __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
        const int16_t *wb = w16;
        for (q = 0; q < kq; ++q, wb += 64) {
            const __m256i w0 = _mm256_load_si256((const __m256i *)wb), w1 = _mm256_load_si256((const __m256i *)(wb + 16));
            const __m256i w2 = _mm256_load_si256((const __m256i *)(wb + 32)), w3 = _mm256_load_si256((const __m256i *)(wb + 48));
            const __m256i a = _mm256_set1_epi64x(*(const int64_t *)(const void *)(x0 + 4 * q));
            const __m256i b = _mm256_set1_epi64x(*(const int64_t *)(const void *)(x1 + 4 * q));
            s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(a, w0)), t0 = _mm256_add_epi32(t0, _mm256_madd_epi16(b, w0));
            s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(a, w1)), t1 = _mm256_add_epi32(t1, _mm256_madd_epi16(b, w1));
            s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(a, w2)), t2 = _mm256_add_epi32(t2, _mm256_madd_epi16(b, w2));
            s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(a, w3)), t3 = _mm256_add_epi32(t3, _mm256_madd_epi16(b, w3));
        }
        _mm256_storeu_si256((__m256i *)(out + 16 * t), _mm256_permute4x64_epi64(_mm256_hadd_epi32(s0, s1), 0xD8));
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 8), _mm256_permute4x64_epi64(_mm256_hadd_epi32(s2, s3), 0xD8));
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 16), _mm256_permute4x64_epi64(_mm256_hadd_epi32(t0, t1), 0xD8));
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 24), _mm256_permute4x64_epi64(_mm256_hadd_epi32(t2, t3), 0xD8));
    }
}

static int32_t *uw, *fx, nuw, nfx;
static uint8_t *xt;
#define EFIX(c)                                                                                                   \
    case c:                                                                                                       \
        a##c##0 = _mm256_add_epi32(a##c##0, _mm256_madd_epi16(_mm256_maddubs_epi16(p0, wv), ones));              \
        a##c##1 = _mm256_add_epi32(a##c##1, _mm256_madd_epi16(_mm256_maddubs_epi16(p1, wv), ones));              \
        break;
#define ECH(c)                                                                                                    \
    {                                                                                                             \
        const __m256i wa = _mm256_set1_epi32(wg[2 * c]), wb = _mm256_set1_epi32(wg[2 * c + 1]);                   \
        a##c##0 = _mm256_add_epi32(a##c##0, _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(xa0, wa),     \
                                                                               _mm256_maddubs_epi16(xb0, wb)), ones)); \
        a##c##1 = _mm256_add_epi32(a##c##1, _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(xa1, wa),     \
                                                                               _mm256_maddubs_epi16(xb1, wb)), ones)); \
    }
static void tile_e(int32_t *out) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int32_t ng = kq / 2, *ent = fx + 5;
    int32_t t, b, g, e;
    for (t = 0; t < npos; t += 16) {
        const uint8_t *x0 = xt + (int64_t)(t / 8) * kq * 32, *x1 = x0 + kq * 32;
        for (b = 0; b < 4; ++b) {
            __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
            for (g = 0; g < ng; ++g) {
                const int32_t *wg = uw + (b * ng + g) * 8;
                const __m256i xa0 = _mm256_loadu_si256((const __m256i *)(x0 + 64 * g));
                const __m256i xb0 = _mm256_loadu_si256((const __m256i *)(x0 + 64 * g + 32));
                const __m256i xa1 = _mm256_loadu_si256((const __m256i *)(x1 + 64 * g));
                const __m256i xb1 = _mm256_loadu_si256((const __m256i *)(x1 + 64 * g + 32));
                ECH(0) ECH(1) ECH(2) ECH(3)
            }
            for (e = fx[b]; e < fx[b + 1]; ++e) {
                const int32_t key = ent[2 * e], q = key >> 2;
                const __m256i wv = _mm256_set1_epi32(ent[2 * e + 1]);
                const __m256i p0 = _mm256_loadu_si256((const __m256i *)(x0 + 32 * q));
                const __m256i p1 = _mm256_loadu_si256((const __m256i *)(x1 + 32 * q));
                switch (key & 3) { EFIX(0) EFIX(1) EFIX(2) EFIX(3) }
            }
            /* [channel][position] within the block: out_t[(b * 4 + c) * npos + t ..] */
            _mm256_storeu_si256((__m256i *)(out + (b * 4 + 0) * npos + t), a00), _mm256_storeu_si256((__m256i *)(out + (b * 4 + 0) * npos + t + 8), a01);
            _mm256_storeu_si256((__m256i *)(out + (b * 4 + 1) * npos + t), a10), _mm256_storeu_si256((__m256i *)(out + (b * 4 + 1) * npos + t + 8), a11);
            _mm256_storeu_si256((__m256i *)(out + (b * 4 + 2) * npos + t), a20), _mm256_storeu_si256((__m256i *)(out + (b * 4 + 2) * npos + t + 8), a21);
            _mm256_storeu_si256((__m256i *)(out + (b * 4 + 3) * npos + t), a30), _mm256_storeu_si256((__m256i *)(out + (b * 4 + 3) * npos + t + 8), a31);
        }
    }
}

#define BC(p) _mm256_set1_epi32(*(const int32_t *)(const void *)(p))
#define STEP(r, xa, xb)                                                                                           \
    {                                                                                                             \
        const __m256i ea = BC(xa), eb = BC(xb);                                                                   \
        const __m256i lo = _mm256_add_epi16(_mm256_maddubs_epi16(ea, wa0), _mm256_maddubs_epi16(eb, wb0));        \
        const __m256i hi = _mm256_add_epi16(_mm256_maddubs_epi16(ea, wa1), _mm256_maddubs_epi16(eb, wb1));        \
        s##r##0 = _mm256_add_epi32(s##r##0, _mm256_madd_epi16(lo, ones));                                         \
        s##r##1 = _mm256_add_epi32(s##r##1, _mm256_madd_epi16(hi, ones));                                         \
    }
#define FIX(r, xq)                                                                                                \
    {                                                                                                             \
        const __m256i e = BC(xq);                                                                                 \
        s##r##0 = _mm256_add_epi32(s##r##0, _mm256_madd_epi16(_mm256_maddubs_epi16(e, f0), ones));                \
        s##r##1 = _mm256_add_epi32(s##r##1, _mm256_madd_epi16(_mm256_maddubs_epi16(e, f1), ones));                \
    }

static void tile_b(int32_t *out, int fixes) {
    const __m256i ones = _mm256_set1_epi16(1);
    int32_t t, g, e;
    for (t = 0; t < npos; t += 4) {
        const uint8_t *x0 = x + (int64_t)t * kq * 4, *x1 = x0 + kq * 4, *x2 = x1 + kq * 4, *x3 = x2 + kq * 4;
        __m256i s00 = _mm256_setzero_si256(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00, s31 = s00;
        for (g = 0; g < kq; g += 2) {
            const int8_t *wb = wc + 64 * g;
            const __m256i wa0 = _mm256_loadu_si256((const __m256i *)wb), wa1 = _mm256_loadu_si256((const __m256i *)(wb + 32));
            const __m256i wb0 = _mm256_loadu_si256((const __m256i *)(wb + 64)), wb1 = _mm256_loadu_si256((const __m256i *)(wb + 96));
            STEP(0, x0 + 4 * g, x0 + 4 * g + 4) STEP(1, x1 + 4 * g, x1 + 4 * g + 4)
            STEP(2, x2 + 4 * g, x2 + 4 * g + 4) STEP(3, x3 + 4 * g, x3 + 4 * g + 4)
        }
        if (fixes)
            for (e = 0; e < nfix; ++e) {
                const int32_t q = fixq[e];
                const __m256i f0 = _mm256_loadu_si256((const __m256i *)(fixv + 64 * e));
                const __m256i f1 = _mm256_loadu_si256((const __m256i *)(fixv + 64 * e + 32));
                FIX(0, x0 + 4 * q) FIX(1, x1 + 4 * q) FIX(2, x2 + 4 * q) FIX(3, x3 + 4 * q)
            }
        _mm256_storeu_si256((__m256i *)(out + 16 * t), s00), _mm256_storeu_si256((__m256i *)(out + 16 * t + 8), s01);
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 16), s10), _mm256_storeu_si256((__m256i *)(out + 16 * t + 24), s11);
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 32), s20), _mm256_storeu_si256((__m256i *)(out + 16 * t + 40), s21);
        _mm256_storeu_si256((__m256i *)(out + 16 * t + 48), s30), _mm256_storeu_si256((__m256i *)(out + 16 * t + 56), s31);
    }
}

/* F: vpmaddwd with positions in lanes (quant_impl.h qavx2_lanes's design) on the .tflite conv's data, everything
 * timed: the block's weights widened to 16 bits (as A), the patch block made from the positions' byte rows (8
 * positions x 4 quads loaded, zero-extended, an 8 x 8 transpose of 32-bit pairs: pair row j holds pair j of each
 * position), 4 channels x 16 positions in 8 registers with each channel's pair of weights broadcast, the sums
 * transposed back to [position][channel] for the .tflite output stage. KC quads a chunk (patch block 64 x 2 KC x 4 B). */
#ifndef F_KC
#define F_KC 64
#endif
static int f_skip, f_blocks = 1; /* F_SKIP=1 (diagnostic): the patch block made and the weights widened once, not timed; F_BLOCKS: the 16 channels taken that many times a patch block, as a run of 16 F_BLOCKS channels would */
static inline void tr8(__m256i *r) {
    const __m256i a0 = _mm256_unpacklo_epi32(r[0], r[1]), a1 = _mm256_unpackhi_epi32(r[0], r[1]);
    const __m256i a2 = _mm256_unpacklo_epi32(r[2], r[3]), a3 = _mm256_unpackhi_epi32(r[2], r[3]);
    const __m256i a4 = _mm256_unpacklo_epi32(r[4], r[5]), a5 = _mm256_unpackhi_epi32(r[4], r[5]);
    const __m256i a6 = _mm256_unpacklo_epi32(r[6], r[7]), a7 = _mm256_unpackhi_epi32(r[6], r[7]);
    const __m256i b0 = _mm256_unpacklo_epi64(a0, a2), b1 = _mm256_unpackhi_epi64(a0, a2);
    const __m256i b2 = _mm256_unpacklo_epi64(a1, a3), b3 = _mm256_unpackhi_epi64(a1, a3);
    const __m256i b4 = _mm256_unpacklo_epi64(a4, a6), b5 = _mm256_unpackhi_epi64(a4, a6);
    const __m256i b6 = _mm256_unpacklo_epi64(a5, a7), b7 = _mm256_unpackhi_epi64(a5, a7);
    r[0] = _mm256_permute2x128_si256(b0, b4, 0x20), r[1] = _mm256_permute2x128_si256(b1, b5, 0x20);
    r[2] = _mm256_permute2x128_si256(b2, b6, 0x20), r[3] = _mm256_permute2x128_si256(b3, b7, 0x20);
    r[4] = _mm256_permute2x128_si256(b0, b4, 0x31), r[5] = _mm256_permute2x128_si256(b1, b5, 0x31);
    r[6] = _mm256_permute2x128_si256(b2, b6, 0x31), r[7] = _mm256_permute2x128_si256(b3, b7, 0x31);
}

/* acc[c][t0, t0 + 16) (+)= the sums of pair rows [0, nj) of positions [t0, t0 + 16) (pairs: rows of 64 words) with 4
 * channels' pairs of 16-bit weights (ww: pair row j's channel c at word (j / 2) 32 + 2 c + j % 2: the widened block) */
static inline void f_lanes(const int32_t *pairs, int32_t t0, int32_t nj, const int32_t *ww, int first, int32_t (*acc)[64]) {
    __m256i a00, a01, a10, a11, a20, a21, a30, a31;
    int32_t j;
    if (first) {
        a00 = a01 = a10 = a11 = a20 = a21 = a30 = a31 = _mm256_setzero_si256();
    } else {
        a00 = _mm256_load_si256((const __m256i *)(acc[0] + t0)), a01 = _mm256_load_si256((const __m256i *)(acc[0] + t0 + 8));
        a10 = _mm256_load_si256((const __m256i *)(acc[1] + t0)), a11 = _mm256_load_si256((const __m256i *)(acc[1] + t0 + 8));
        a20 = _mm256_load_si256((const __m256i *)(acc[2] + t0)), a21 = _mm256_load_si256((const __m256i *)(acc[2] + t0 + 8));
        a30 = _mm256_load_si256((const __m256i *)(acc[3] + t0)), a31 = _mm256_load_si256((const __m256i *)(acc[3] + t0 + 8));
    }
    for (j = 0; j < nj; ++j) {
        const int32_t *wj = ww + (j >> 1) * 32 + (j & 1);
        const __m256i x0 = _mm256_load_si256((const __m256i *)(pairs + j * 64 + t0));
        const __m256i x1 = _mm256_load_si256((const __m256i *)(pairs + j * 64 + t0 + 8));
        const __m256i w0 = _mm256_set1_epi32(wj[0]), w1 = _mm256_set1_epi32(wj[2]);
        const __m256i w2 = _mm256_set1_epi32(wj[4]), w3 = _mm256_set1_epi32(wj[6]);
        a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(x0, w0)), a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(x1, w0));
        a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(x0, w1)), a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(x1, w1));
        a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(x0, w2)), a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(x1, w2));
        a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(x0, w3)), a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(x1, w3));
    }
    _mm256_store_si256((__m256i *)(acc[0] + t0), a00), _mm256_store_si256((__m256i *)(acc[0] + t0 + 8), a01);
    _mm256_store_si256((__m256i *)(acc[1] + t0), a10), _mm256_store_si256((__m256i *)(acc[1] + t0 + 8), a11);
    _mm256_store_si256((__m256i *)(acc[2] + t0), a20), _mm256_store_si256((__m256i *)(acc[2] + t0 + 8), a21);
    _mm256_store_si256((__m256i *)(acc[3] + t0), a30), _mm256_store_si256((__m256i *)(acc[3] + t0 + 8), a31);
}

static void tile_f(int32_t *out) {
    static int16_t w16[2048 * 64] __attribute__((aligned(32)));
    static int32_t pairs[2 * F_KC * 64] __attribute__((aligned(32)));
    static int32_t acc[16][64] __attribute__((aligned(32)));
    const int32_t *ww = (const int32_t *)(const void *)w16;
    const int32_t n = npos, k = kq, reps = f_blocks;
    int32_t i, t, q, g0, b, c, rep;
    for (i = 0; i < k * 4 && f_skip < 2; ++i)
        _mm256_store_si256((__m256i *)(w16 + 16 * i), _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 16 * i))));
    f_skip += f_skip > 0;
    for (g0 = 0; g0 < k; g0 += F_KC) {
        const int32_t g1 = k - g0 < F_KC ? k : g0 + F_KC, nj = 2 * (g1 - g0);
        for (t = 0; t < n && (f_skip < 2 || F_KC < k); t += 8)
            for (q = g0; q < g1; q += 4) {
                __m256i r[8];
                for (i = 0; i < 8; ++i)
                    r[i] = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(x + (int64_t)(t + i) * k * 4 + 4 * q)));
                tr8(r);
                for (i = 0; i < 8 && i < 2 * (g1 - q); ++i)
                    _mm256_store_si256((__m256i *)(pairs + (2 * (q - g0) + i) * 64 + t), r[i]);
            }
        for (rep = 0; rep < reps; ++rep) /* (rep > 0: the diagnostic's repeats, their sums wrong where k > F_KC) */
            for (b = 0; b < 4; ++b)
                for (t = 0; t < n; t += 16) f_lanes(pairs, t, nj, ww + g0 * 32 + 8 * b, g0 == 0, acc + 4 * b);
    }
    for (t = 0; t < n; t += 8) /* [channel][position] to [position][channel], 8 x 8 at a time */
        for (c = 0; c < 16; c += 8) {
            __m256i r[8];
            for (i = 0; i < 8; ++i) r[i] = _mm256_load_si256((const __m256i *)(acc[c + i] + t));
            tr8(r);
            for (i = 0; i < 8; ++i) _mm256_storeu_si256((__m256i *)(out + 16 * (t + i) + c), r[i]);
        }
}

int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb");
    int32_t hdr[3], e, i, *out, mode, round;
    if (!f || fread(hdr, 4, 3, f) != 3) return 1;
    kq = hdr[0], npos = hdr[1], nfix = hdr[2];
    w = malloc(kq * 64), wc = malloc(kq * 64 + 128), fixv = malloc(nfix * 64 + 64), fixq = malloc(4 * nfix + 4);
    x = malloc(npos * kq * 4 + 64), ref = malloc(4 * npos * 16), out = malloc(4 * npos * 16);
    if (fread(w, 64, kq, f) != (size_t)kq || fread(wc, 64, kq, f) != (size_t)kq) return 1;
    for (e = 0; e < nfix; ++e)
        if (fread(fixq + e, 4, 1, f) != 1 || fread(fixv + 64 * e, 64, 1, f) != 1) return 1;
    if (fread(x, 4 * kq, npos, f) != (size_t)npos || fread(ref, 64, npos, f) != (size_t)npos) return 1;
    if (fread(&nuw, 4, 1, f) != 1 || fread(&nfx, 4, 1, f) != 1) return 1;
    uw = malloc(4 * nuw), fx = malloc(4 * nfx);
    if (fread(uw, 4, nuw, f) != (size_t)nuw || fread(fx, 4, nfx, f) != (size_t)nfx) return 1;
    fclose(f);
    f_skip = getenv("F_SKIP") != NULL;
    f_blocks = getenv("F_BLOCKS") != NULL ? atoi(getenv("F_BLOCKS")) : 1;
    xt = malloc((size_t)npos * kq * 4);
    for (i = 0; i < npos; ++i)
        for (e = 0; e < kq; ++e) memcpy(xt + ((int64_t)(i / 8) * kq + e) * 32 + 4 * (i % 8), x + ((int64_t)i * kq + e) * 4, 4);
    for (mode = 0; mode < 6; ++mode) {
        const long reps = 200000000L / ((long)npos * 16 * 4 * kq) + 1;
        double best = 1e30;
        int bad = 0;
        memset(out, 0, 4 * npos * 16);
        mode == 5 ? tile_f(out) : mode == 0 ? tile_a(out) : mode == 3 ? tile_d(out) : mode == 4 ? tile_e(out) : tile_b(out, mode == 2);
        for (i = 0; i < npos * 16; ++i) bad += (mode == 4 ? out[(i % 16) * npos + i / 16] : out[i]) != ref[i];
        for (round = 0; round < 7; ++round) {
            double t0 = now(), t;
            long r;
            for (r = 0; r < reps; ++r) mode == 5 ? tile_f(out) : mode == 0 ? tile_a(out) : mode == 3 ? tile_d(out) : mode == 4 ? tile_e(out) : tile_b(out, mode == 2);
            t = now() - t0;
            best = t < best ? t : best;
        }
        printf("| %s | %d | %s | %.1f | %d of %d |\n", argc > 2 ? argv[2] : argv[1], kq,
               mode == 0 ? "A vpmaddwd (now)" : mode == 1 ? "B vpmaddubsw clipped, no fixes (not exact)"
               : mode == 2 ? "C vpmaddubsw + fixes, channels in lanes" : mode == 3 ? "D vpmaddwd, patches in 16 bits"
                           : mode == 4 ? "E vpmaddubsw + fixes, positions in lanes" : "F vpmaddwd, positions in lanes (patches, sums transposed)",
               (double)reps * npos * 16 * 4 * kq * (mode == 5 ? f_blocks : 1) / best * 1e-9, bad, npos * 16);
    }
    return 0;
}
