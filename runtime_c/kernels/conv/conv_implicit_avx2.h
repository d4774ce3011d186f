/* The implicit GEMM's (conv_implicit.c) path on x86 with AVX (a host build): full tiles finished in
 * the kernel and stored straight into Y's channel planes, transposed in registers; with AVX-512F
 * and VL the additions of conv_implicit_avx512.h. The contract is the portable kernel's: no
 * scratch, the same packed W^T, every conv it takes; only the instructions differ. Internal to
 * conv_implicit.c: included once, after the general tiles' macros (IG_SUM, ...). */
#ifndef AOTC_CONV_IMPLICIT_AVX2_H
#define AOTC_CONV_IMPLICIT_AVX2_H

/* x86 with AVX (the host build): a full tile of IG_MR consecutive positions x 16 channels is
 * finished in the kernel and stored straight into Y's 16 channel planes, transposed in registers
 * (ig_put8). Stored into t and copied out position by position (ig_store), each channel's six
 * values were gathered from t with scalar loads that wait on the tile's vector stores: 14 % of
 * ResNet-8's time, as much as its 16-channel convs' partial tiles. */
#if IG_MR == 6 && IG_NR == 16 && defined(__AVX__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(AOTC_NO_INTRINSICS)
#define IG_DIRECT 1
#include <immintrin.h>

/* Where a finished tile goes: channel j of position i at y[j * plane + i]; the activation. */
typedef struct {
    ptrdiff_t plane;
    int32_t act;
    float lo, hi, leak;
#if IG_PF
    const float *pre; /* this tile's share of the next block's W^T, a line a step into L2 (ig_pf_tile) */
    int32_t npre;
    int32_t pf_lines, pf_full, pf_done; /* the next block's W^T lines, this block's full tiles, those done */
#endif
} ig_dst;

/* Rows r0..r5 (6 positions x 8 channels) stored as 8 runs of 6 floats, y + j * plane. Per
 * 128-bit lane, the unpacks and shuffles turn the first 4 rows into columns (u0..u3) and pair
 * rows 4 and 5 (t4, t5: two columns each). */
static MK_INLINE void ig_put8(__m256 r0, __m256 r1, __m256 r2, __m256 r3, __m256 r4, __m256 r5, float *y,
                              ptrdiff_t plane) {
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
#define IG_PUT_LANE(L, GET)                                                                       \
    {                                                                                             \
        float *y_ = y + (ptrdiff_t)(4 * (L)) * plane;                                             \
        const __m128 a4 = GET(t4), a5 = GET(t5);                                                  \
        _mm_storeu_ps(y_, GET(u0));                                                               \
        _mm_storel_pi((__m64 *)(void *)(y_ + 4), a4);                                             \
        _mm_storeu_ps(y_ + plane, GET(u1));                                                       \
        _mm_storeh_pi((__m64 *)(void *)(y_ + plane + 4), a4);                                     \
        _mm_storeu_ps(y_ + 2 * plane, GET(u2));                                                   \
        _mm_storel_pi((__m64 *)(void *)(y_ + 2 * plane + 4), a5);                                 \
        _mm_storeu_ps(y_ + 3 * plane, GET(u3));                                                   \
        _mm_storeh_pi((__m64 *)(void *)(y_ + 3 * plane + 4), a5);                                 \
    }
#define IG_LO(v) _mm256_castps256_ps128(v)
#define IG_HI(v) _mm256_extractf128_ps(v, 1)
    IG_PUT_LANE(0, IG_LO)
    IG_PUT_LANE(1, IG_HI)
#undef IG_LO
#undef IG_HI
#undef IG_PUT_LANE
}

#include "conv_implicit_avx512.h" /* IG_RUNS: ig_put8_runs; IG_PEND: ig_tile1x4 */

#define IG_Y_HALF(i, W) _mm256_loadu_ps(c##i + h_)
#define IG_CLAMP(i, W) MK_UNROLL for (j = 0; j < W; ++j) { const float v = c##i[j] < lo ? lo : c##i[j]; c##i[j] = v > hi ? hi : v; }
#define IG_LEAK(i, W) MK_UNROLL for (j = 0; j < W; ++j) c##i[j] = c##i[j] < 0.0f ? leak * c##i[j] : c##i[j];

/* ig_tile, then the activation and the transposed store into y (channel 0's plane): positions
 * at y + q[i], in `runs` runs of consecutive ones (s: where each starts, then IG_MR); without
 * AVX-512 (masked stores) only one run. */
MK_NOINLINE static void ig_tile_y(const float *const *xp, const ig_loops *L, const float *AOTC_RESTRICT wp,
                                  const float *AOTC_RESTRICT b0, float *y, const ig_dst *d, const ptrdiff_t *q,
                                  const int8_t *s, int32_t runs) {
    MK_ROWS6(IG_DECL, IG_NR)
    const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];
    int32_t j, a, b, h_;
    MK_ROWS6(IG_INIT, IG_NR)
#if IG_PF
    if (d->npre > 0 && L->n[0] == 1 && L->n[1] == 1) { /* a 1 x 1 conv's channels, prefetching */
        const float *w = wp, *const pre = d->pre;
        const int32_t npre = d->npre;
        ptrdiff_t xo = 0;
        int32_t k;
        for (k = 0; k < L->n[2]; ++k, w += ws2, xo += xs2) {
            if (k < npre) _mm_prefetch((const char *)(pre + (ptrdiff_t)PANEL * k), _MM_HINT_T1);
            MK_ROWS6(IG_FMA, IG_NR)
        }
    } else
#endif
    IG_SUM(MK_ROWS6, IG_NR, IG_UNROLL3)
    if (d->act == AOTC_ACT_CLAMP) {
        const float lo = d->lo, hi = d->hi;
        MK_ROWS6(IG_CLAMP, IG_NR)
    } else if (d->act == AOTC_ACT_LEAKY) {
        const float leak = d->leak;
        MK_ROWS6(IG_LEAK, IG_NR)
    }
#if IG_RUNS
    if (runs > 1) {
        for (h_ = 0; h_ < IG_NR; h_ += 8) {
            ig_put8_runs(IG_Y_HALF(0, 8), IG_Y_HALF(1, 8), IG_Y_HALF(2, 8), IG_Y_HALF(3, 8), IG_Y_HALF(4, 8),
                         IG_Y_HALF(5, 8), y + (ptrdiff_t)h_ * d->plane, d->plane, q, s, runs);
        }
        return;
    }
#else
    (void)s, (void)runs;
#endif
    for (h_ = 0; h_ < IG_NR; h_ += 8) {
        ig_put8(IG_Y_HALF(0, 8), IG_Y_HALF(1, 8), IG_Y_HALF(2, 8), IG_Y_HALF(3, 8), IG_Y_HALF(4, 8),
                IG_Y_HALF(5, 8), y + q[0] + (ptrdiff_t)h_ * d->plane, d->plane);
    }
}
#undef IG_Y_HALF
#undef IG_CLAMP
#undef IG_LEAK

/* A full tile (IG_MR positions q, their input pointers xp, IG_NR channels) summed, finished and
 * stored into o->y by ig_tile_y: 1, or 0 (nothing done) where its positions are more than one
 * run of consecutive ones and no masked stores (IG_RUNS) can store them. */
static MK_INLINE int ig_tile_y_avx2(const float *const *xp, const ig_loops *L, const float *wc, const float *b0,
                                    const ig_out *o, const ig_dst *d, const ptrdiff_t *q) {
    int8_t st[IG_MR + 1];
    int32_t runs = 1, i;
    st[0] = 0;
    for (i = 1; i < IG_MR; ++i)
        if (q[i] != q[i - 1] + 1) st[runs++] = (int8_t)i;
    st[runs] = IG_MR;
    if (runs == 1 || IG_RUNS) {
        ig_tile_y(xp, L, wc, b0, o->y, d, q, st, runs);
        return 1;
    }
    return 0;
}
#else
#define IG_DIRECT 0
#define IG_RUNS 0
#define IG_PEND 0
#define ig_stem64(p, x, wt, bias, res, y) 0
#endif

#endif
