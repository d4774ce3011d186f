/* 1 x 1 Conv on x86 with AVX2 and FMA, no AVX-512 (--host-isa generic built for x86-64-v3), in register tiles
 * of up to 6 output channels x 16 positions on the NCHW input as it is: each step of the sum one input channel,
 * its 16 positions loaded once (two vectors) for the tile's channels, each weight broadcast from memory; the bias
 * starts the sums and the residual and the activation finish them before the one store. For conv_pointwise.c.
 * Why (issue 64): there the GEMM core's generic 6 x 16 tiles copied each 16 columns of the input into `work` and
 * spent their fixed costs (a call through a pointer, the tile's C written and read back) on sums of few input
 * channels: MobileNetV2's 16 -> 96 conv on 112 x 112 ran at 60 GFLOP/s, 1.5x OpenVINO's time at AVX2. */
#ifndef AOTC_CONV_PW_AVX2_H
#define AOTC_CONV_PW_AVX2_H
#include "conv_internal.h"

/* input channels up to which the tiles were faster than the GEMM core (even at 512; at 2048 a block's inputs
 * outgrow L1: 1.3x its time); the compiler reads it (aot/kernels/conv.py), whatever the build's ISA */
#define PW2_MAX_K 256

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__) && !defined(AOTC_NO_X86_PW) && \
    (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define PW2_ON 1

typedef struct {
    const float *x, *w, *bias, *res;
    float *y;
    ptrdiff_t npos;
    int32_t m, k, act;
    float lo, hi, leak;
} pw2_job;

/* the sums of rows [0, MT) of w (k weights a row) times 16 positions (an input channel's at xb, the next channel's
 * xs floats on), finished and stored at y (rows npos apart); lanes beyond the positions' end (masks lo8, hi8) not
 * written, nor read in res, nor in xb where xmask */
static inline __attribute__((always_inline)) void pw2_tile(const pw2_job *J, int32_t mt, const float *xb,
                                                           ptrdiff_t xs, int xmask, const float *w, const float *bias,
                                                           const float *res, float *y, int full, __m256i lo8,
                                                           __m256i hi8) {
    const ptrdiff_t npos = J->npos;
    const int32_t k = J->k;
    __m256 a[6][2];
    int32_t r, q;
#pragma GCC unroll 6
    for (r = 0; r < 6; ++r)
        if (r < mt) a[r][0] = a[r][1] = bias != NULL ? _mm256_broadcast_ss(bias + r) : _mm256_setzero_ps();
    for (q = 0; q < k; ++q, xb += xs) {
        const __m256 x0 = xmask ? _mm256_maskload_ps(xb, lo8) : _mm256_loadu_ps(xb);
        const __m256 x1 = xmask ? _mm256_maskload_ps(xb + 8, hi8) : _mm256_loadu_ps(xb + 8);
#pragma GCC unroll 6
        for (r = 0; r < 6; ++r)
            if (r < mt) {
                const __m256 wv = _mm256_broadcast_ss(w + (ptrdiff_t)r * k + q);
                a[r][0] = _mm256_fmadd_ps(wv, x0, a[r][0]);
                a[r][1] = _mm256_fmadd_ps(wv, x1, a[r][1]);
            }
    }
#pragma GCC unroll 6
    for (r = 0; r < 6; ++r)
        if (r < mt) {
            __m256 v0 = a[r][0], v1 = a[r][1];
            float *yr = y + (ptrdiff_t)r * npos;
            if (res != NULL) {
                const float *rr = res + (ptrdiff_t)r * npos;
                v0 = _mm256_add_ps(v0, full ? _mm256_loadu_ps(rr) : _mm256_maskload_ps(rr, lo8));
                v1 = _mm256_add_ps(v1, full ? _mm256_loadu_ps(rr + 8) : _mm256_maskload_ps(rr + 8, hi8));
            }
            if (J->act == AOTC_ACT_LEAKY) {
                const __m256 s = _mm256_set1_ps(J->leak), z = _mm256_setzero_ps();
                v0 = _mm256_blendv_ps(v0, _mm256_mul_ps(v0, s), _mm256_cmp_ps(v0, z, _CMP_LT_OQ));
                v1 = _mm256_blendv_ps(v1, _mm256_mul_ps(v1, s), _mm256_cmp_ps(v1, z, _CMP_LT_OQ));
            } else if (J->act == AOTC_ACT_CLAMP) {
                const __m256 lo = _mm256_set1_ps(J->lo), hi = _mm256_set1_ps(J->hi);
                v0 = _mm256_min_ps(_mm256_max_ps(v0, lo), hi);
                v1 = _mm256_min_ps(_mm256_max_ps(v1, lo), hi);
            }
            if (full) {
                _mm256_storeu_ps(yr, v0);
                _mm256_storeu_ps(yr + 8, v1);
            } else {
                _mm256_maskstore_ps(yr, lo8, v0);
                _mm256_maskstore_ps(yr + 8, hi8, v1);
            }
        }
}

/* one block of 16 positions (p0) through every output channel: tiles of 6 rows; where m leaves 1 to 3 rows over,
 * the last 7 to 9 rows as two tiles of 3 to 5 (a tile of 1 to 3 rows holds 2 to 6 sums, too few chains to keep both
 * multiply-add units busy). With xb (pw2_copies), the block's inputs are first copied there, 16 floats an input
 * channel (zeros past the positions' end), and the tiles read the copy. */
static inline __attribute__((always_inline)) void pw2_block(const pw2_job *J, ptrdiff_t p0, int full, __m256i lo8,
                                                            __m256i hi8, float *AOTC_RESTRICT xb) {
    const int32_t m = J->m, k = J->k, rem = m % 6;
    const int32_t split = m > 6 && rem > 0 && rem < 4 ? m - 6 - rem : m - rem; /* rows before the last one or two tiles */
    const float *x = J->x + p0, *xt = xb != NULL ? xb : x;
    const ptrdiff_t xs = xb != NULL ? 16 : J->npos;
    const int xmask = xb == NULL && !full;
    int32_t r0 = 0, q;
    if (xb != NULL)
        for (q = 0; q < k; ++q, x += J->npos) {
            _mm256_store_ps(xb + 16 * q, full ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, lo8));
            _mm256_store_ps(xb + 16 * q + 8, full ? _mm256_loadu_ps(x + 8) : _mm256_maskload_ps(x + 8, hi8));
        }
#define PW2_AT(MT, R0)                                                                                     \
    pw2_tile(J, (MT), xt, xs, xmask, J->w + (ptrdiff_t)(R0) * k, J->bias != NULL ? J->bias + (R0) : NULL,      \
             J->res != NULL ? J->res + (ptrdiff_t)(R0) * J->npos + p0 : NULL, J->y + (ptrdiff_t)(R0) * J->npos + p0, \
             full, lo8, hi8)
    for (; r0 < split; r0 += 6) PW2_AT(6, r0);
    if (m - r0 > 6) { /* 7 to 9 rows: two tiles */
        const int32_t t = (m - r0) / 2;
        if (t == 3) {
            PW2_AT(3, r0);
        } else {
            PW2_AT(4, r0);
        }
        r0 += t;
    }
    switch (m - r0) {
    case 0: break;
    case 1: PW2_AT(1, r0); break;
    case 2: PW2_AT(2, r0); break;
    case 3: PW2_AT(3, r0); break;
    case 4: PW2_AT(4, r0); break;
    case 5: PW2_AT(5, r0); break;
    default: PW2_AT(6, r0); break;
    }
#undef PW2_AT
}

/* Whether a block's inputs are copied before its tiles read them (pw2_block): where the input's k rows, a plane
 * apart, fall in at most 4 of L1's 64 sets (64-byte lines, 8 ways), 4 or more to a set. On planes of a power of
 * two all of them share one set (MobileViT's 128 x 128 and 64 x 64: 64 KiB and 16 KiB), and evicted each other
 * for every 6 output channels: MobileViT's 16 -> 32 on 128 x 128 took 1.5x the GEMM core's time (which copies its
 * blocks), 0.5x with the copy. Where they spread over 16 sets or more the copy cost 3-7 % (medians of 7 alternating
 * runs: 56 x 56, 144 -> 24 209 -> 224 us, 256 -> 64 957 -> 979, 96 -> 24 137 -> 147; 28 x 28 192 -> 32 90 -> 95).
 * On 4 sets (112 x 112) it gained where many tiles read the copy, lost a little where few do: 16 -> 96 426 -> 402,
 * 32 -> 16 136 -> 140. */
static int pw2_copies(const pw2_job *J) {
    /* rows k apart share a set where k * the row's bytes is a multiple of 4096: the first 4096 / gcd(bytes, 4096)
     * rows fall in that many sets (at most L1's 64) */
    int32_t a = (int32_t)((J->npos * (ptrdiff_t)sizeof(float)) % 4096), b = 4096, sets;
    while (a != 0) {
        const int32_t t = b % a;
        b = a, a = t;
    }
    sets = 4096 / b < 64 ? 4096 / b : 64;
    return sets <= 4 && J->k >= 4 * sets;
}

/* Output channels a pass over the positions takes: as many as keep their weights within PW2_W_BYTES (whole tiles of
 * 6), so that the weights stay in L2 while the blocks of positions go by, rather than all of them streaming from
 * memory for every block (ResNet-50's 256 -> 1024 on 14 x 14: 1 MiB of weights, 13 blocks). */
#ifndef PW2_W_BYTES
#define PW2_W_BYTES (64 * 1024)
#endif
static int32_t pw2_chunk(const pw2_job *J) {
    const int32_t rows = (int32_t)(PW2_W_BYTES / ((ptrdiff_t)J->k * (ptrdiff_t)sizeof(float))) / 6 * 6;
    return rows < 6 ? 6 : rows;
}

/* blocks [begin, end) of 16 positions (aotc_parallel_for's items), a chunk of output channels at a time */
static void pw2_run(void *arg, int32_t begin, int32_t end) {
    const pw2_job *J0 = (const pw2_job *)arg;
    const __m256i ones = _mm256_set1_epi32(-1);
    const int32_t chunk = pw2_chunk(J0);
    float copy[PW2_MAX_K * 16] __attribute__((aligned(32)));
    float *xb = pw2_copies(J0) ? copy : NULL;
    int32_t blk, m0;
    for (m0 = 0; m0 < J0->m; m0 += chunk) {
        pw2_job J = *J0;
        J.m = J0->m - m0 < chunk ? J0->m - m0 : chunk;
        J.w = J0->w + (ptrdiff_t)m0 * J0->k;
        J.bias = J0->bias != NULL ? J0->bias + m0 : NULL;
        J.res = J0->res != NULL ? J0->res + (ptrdiff_t)m0 * J0->npos : NULL;
        J.y = J0->y + (ptrdiff_t)m0 * J0->npos;
        for (blk = begin; blk < end; ++blk) {
            const ptrdiff_t p0 = 16 * (ptrdiff_t)blk, left = J.npos - p0;
            if (left >= 16) {
                pw2_block(&J, p0, 1, ones, ones, xb);
            } else {
                const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
                const __m256i lo8 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)left), lane);
                const __m256i hi8 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)left - 8), lane);
                pw2_block(&J, p0, 0, lo8, hi8, xb);
            }
        }
    }
}
#else
#define PW2_ON 0
#endif

#endif /* AOTC_CONV_PW_AVX2_H */
