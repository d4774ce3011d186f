/* The implicit GEMM's (conv_implicit.c) additions on x86 with AVX-512F and AVX-512VL, to its AVX
 * path (conv_implicit_avx2.h, which includes this header where they fit in): a full tile stored
 * straight into Y wherever its positions' rows end, by masked stores (ig_put8_runs), and a class's
 * single positions put off and summed four at a time (ig_tile1x4). The contract is the portable
 * kernel's: no scratch, the same packed W^T, every conv it takes; only the instructions differ.
 * Internal to conv_implicit.c. */
#ifndef AOTC_CONV_IMPLICIT_AVX512_H
#define AOTC_CONV_IMPLICIT_AVX512_H

#if defined(__AVX512F__) && defined(__AVX512VL__)
/* Any full tile (positions in up to IG_MR runs, wherever a class's rows end): the rows
 * transposed whole into 8 columns of 8 (rows 6 and 7 repeat 4 and 5), each column stored by
 * masked stores, a run of positions each: run r is positions [s[r], s[r + 1]), which start at
 * y + q[s[r]]. */
static MK_INLINE void ig_put8_runs(__m256 r0, __m256 r1, __m256 r2, __m256 r3, __m256 r4, __m256 r5, float *y,
                                   ptrdiff_t plane, const ptrdiff_t *q, const int8_t *s, int32_t runs) {
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t4, 0x44), u5 = _mm256_shuffle_ps(t4, t4, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t5, 0x44), u7 = _mm256_shuffle_ps(t5, t5, 0xEE);
    __m256 col[8];
    int32_t j, r;
    col[0] = _mm256_permute2f128_ps(u0, u4, 0x20), col[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    col[1] = _mm256_permute2f128_ps(u1, u5, 0x20), col[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    col[2] = _mm256_permute2f128_ps(u2, u6, 0x20), col[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    col[3] = _mm256_permute2f128_ps(u3, u7, 0x20), col[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
    for (r = 0; r < runs; ++r) {
        const int32_t a = s[r], b = s[r + 1];
        const __mmask8 m = (__mmask8)(((1u << b) - 1u) & ~((1u << a) - 1u));
        float *yr = y + q[a] - a;
        for (j = 0; j < 8; ++j) _mm256_mask_storeu_ps(yr + (ptrdiff_t)j * plane, m, col[j]);
    }
}
#define IG_RUNS 1

/* Up to 4 single-position tiles whose classes share the loops L (a 3 x 3 conv's four corners; an
 * interior's last position) as one call: t[i * IG_NR + j] = b0[j] + the sums over L of
 * xp[i][xo] * wp[i][wo + j]. Alone, each runs one chain of dependent multiply-adds (ResNet-8's
 * 8 x 8 64-channel conv spent 5 % of its time in its corners); here four independent ones, each
 * summed in the order ig_tile1 sums it, so the results are the same to the bit. Rows past `rows`
 * repeat row 0. */
#define IG_FMA_W(i, W) MK_AXPY(i, W, x##i[xo], w##i + wo)
#define IG_DECL_W(i, W) const float *AOTC_RESTRICT w##i = wp[i];
MK_NOINLINE static void ig_tile1x4(const float *const *xp, const ig_loops *L, const float *const *wp,
                                   const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t) {
    MK_ROWS4(IG_DECL, IG_NR)
    MK_ROWS4(IG_DECL_W, IG_NR)
    const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];
    int32_t j, a, b, k;
    MK_ROWS4(IG_INIT, IG_NR)
    for (a = 0; a < L->n[0]; ++a) {
        for (b = 0; b < L->n[1]; ++b) {
            ptrdiff_t xo = a * L->xs[0] + b * L->xs[1], wo = a * L->ws[0] + b * L->ws[1];
            for (k = 0; k < L->n[2]; ++k, xo += xs2, wo += ws2) {
                MK_ROWS4(IG_FMA_W, IG_NR)
            }
        }
    }
    MK_ROWS4(IG_OUT, IG_NR)
}
#undef IG_FMA_W
#undef IG_DECL_W

static int ig_same_loops(const ig_loops *a, const ig_loops *b) {
    int32_t i;
    for (i = 0; i < 3; ++i)
        if (a->n[i] != b->n[i] || a->xs[i] != b->xs[i] || a->ws[i] != b->ws[i]) return 0;
    return 1;
}
#define IG_PEND 1

/* Single-position tiles put off to run four at a time (ig_tile1x4): their classes' loops (the
 * first's), input and W^T pointers, positions. IG_MR entries of q, not 4: ig_store reads
 * q[IG_MR - 1] where rows == IG_MR, which gcc -O3 cannot see never holds for these (rows <= 4),
 * and -Warray-bounds would fail the build. */
typedef struct {
    ig_loops l;
    const float *x[4], *w[4];
    ptrdiff_t q[IG_MR > 4 ? IG_MR : 4];
} ig_pend;

/* The *n pending tiles, if any, summed as one (rows past *n repeat row 0) and stored by o. */
static MK_INLINE void ig_pend_flush_avx512(ig_pend *pd, int32_t *n, const float *b0, const ig_out *o) {
    if (*n > 0) {
        float t[(IG_MR > 4 ? IG_MR : 4) * IG_NR]; /* as pd->q: rows past *n are never read */
        int32_t i;
        for (i = *n; i < 4; ++i) pd->x[i] = pd->x[0], pd->w[i] = pd->w[0];
        ig_tile1x4(pd->x, &pd->l, pd->w, b0, t);
        ig_store(o->tp, t, pd->q, *n, o->width, o->plane, NULL, o->y);
        *n = 0;
    }
}

/* A single-position tile (its input xp, W^T wc, position q, loops L) put off: the pending ones
 * run first if their loops differ, and all four once there are four. */
static MK_INLINE void ig_pend_add_avx512(ig_pend *pd, int32_t *n, const ig_loops *L, const float *xp,
                                         const float *wc, ptrdiff_t q, const float *b0, const ig_out *o) {
    if (*n > 0 && !ig_same_loops(&pd->l, L)) ig_pend_flush_avx512(pd, n, b0, o);
    pd->l = *L, pd->x[*n] = xp, pd->w[*n] = wc, pd->q[*n] = q;
    if (++*n == 4) ig_pend_flush_avx512(pd, n, b0, o);
}
#else
#define IG_RUNS 0
#define IG_PEND 0
#endif

#endif
