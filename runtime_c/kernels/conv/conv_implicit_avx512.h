/* The implicit GEMM's (conv_implicit.c) additions on x86 with AVX-512F and AVX-512VL, to its AVX
 * path (conv_implicit_avx2.h, which includes this header where they fit in): a full tile stored
 * straight into Y wherever its positions' rows end, by masked stores (ig_put8_runs), and a class's
 * single positions put off and summed four at a time (ig_tile1x4: plain C, with AVX2 too). The contract is the portable
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
#else
#define IG_RUNS 0
#endif

/* The single positions put off below are plain C, and pay on AVX2 too (a host without AVX-512: issue 64,
 * ResNet-50's 7 x 7 3 x 3 convs, whose corners are single positions: 4 of 49 outputs, each a chain of
 * dependent multiply-adds). This header is included only where the AVX path is (IG_DIRECT). */
#if defined(__AVX__)
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
#define IG_PEND 0
#endif

#if defined(__AVX512F__) && defined(__AVX512VL__)

/* A channels-last stem (a few input channels, aotc_in_nhwc: ResNet-50's 7 x 7 stride-2 3 -> 64 from a
 * .tflite or tf2onnx) into NCHW: a register tile of 6 positions of an output row x 64 channels (24
 * accumulators, the 4 panels' W^T rows loaded once per tap element for 24 multiply-adds, each position's
 * element broadcast), over the K rows of the output row copied once into a zero-padded stack buffer,
 * so every position, the borders' too, runs the same two loops (K rows, then a row's K x C elements,
 * contiguous in NHWC and in W^T's (ky, kx, c) rows). The general tiles (6 positions x 16 channels) ran
 * it at about two thirds of the FMA peak: 6 chains are fewer than the FMA units' latency x width, and
 * each input element was read once per block of 16 channels. */
#define IG_S64_FLOATS 8192 /* the stack buffer: K rows of (OW + 5) sx + KW columns of C floats */

typedef struct {
    const aotc_conv_params *p;
    const float *x, *wt, *bias;
    float *y;
    int32_t wb; /* the buffer's columns per row */
} ig_s64_job;

#define IG_S64_ACC(i) __m512 a##i##0 = b0, a##i##1 = b1, a##i##2 = b2, a##i##3 = b3;
#define IG_S64_FMA(i)                                                                             \
    {                                                                                             \
        const __m512 xv = _mm512_set1_ps(xr[(i) * ps + e]);                                       \
        a##i##0 = _mm512_fmadd_ps(xv, w0, a##i##0), a##i##1 = _mm512_fmadd_ps(xv, w1, a##i##1);   \
        a##i##2 = _mm512_fmadd_ps(xv, w2, a##i##2), a##i##3 = _mm512_fmadd_ps(xv, w3, a##i##3);   \
    }
#define IG_S64_ACT(i)                                                                             \
    a##i##0 = _mm512_min_ps(hi, _mm512_max_ps(lo, a##i##0));                                      \
    a##i##1 = _mm512_min_ps(hi, _mm512_max_ps(lo, a##i##1));                                      \
    a##i##2 = _mm512_min_ps(hi, _mm512_max_ps(lo, a##i##2));                                      \
    a##i##3 = _mm512_min_ps(hi, _mm512_max_ps(lo, a##i##3));
#define IG_S64_ROWS(M) M(0) M(1) M(2) M(3) M(4) M(5)
#define IG_S64_LO(v) _mm512_castps512_ps256(v)
#define IG_S64_HI(v) _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))
#define IG_S64_PUT(v)                                                                             \
    ig_put8(IG_S64_LO(a0##v), IG_S64_LO(a1##v), IG_S64_LO(a2##v), IG_S64_LO(a3##v), IG_S64_LO(a4##v), \
            IG_S64_LO(a5##v), y + (ptrdiff_t)(16 * (v)) * plane, plane);                          \
    ig_put8(IG_S64_HI(a0##v), IG_S64_HI(a1##v), IG_S64_HI(a2##v), IG_S64_HI(a3##v), IG_S64_HI(a4##v), \
            IG_S64_HI(a5##v), y + (ptrdiff_t)(16 * (v) + 8) * plane, plane);
#define IG_S64_T(i)                                                                               \
    _mm512_storeu_ps(t + 64 * (i), a##i##0), _mm512_storeu_ps(t + 64 * (i) + 16, a##i##1);        \
    _mm512_storeu_ps(t + 64 * (i) + 32, a##i##2), _mm512_storeu_ps(t + 64 * (i) + 48, a##i##3);

/* (the clamp's operands in this order: a NaN stays NaN, as in aotc_activate_f32) */
/* Positions [0, n) (n <= 6) of the tile, position i's window at xb + i ps (K rows bs apart, each `len`
 * floats), W^T's 4 panels pstep apart from w: activated (clamp to [lo, hi]) and stored from y (channel
 * 0 of position 0; planes `plane` apart). */
MK_NOINLINE static void ig_s64_tile(const float *xb, ptrdiff_t ps, ptrdiff_t bs, int32_t K, int32_t len,
                                    const float *w, ptrdiff_t pstep, const float *bias, int clamp, float flo,
                                    float fhi, float *y, ptrdiff_t plane, int32_t n) {
    const __m512 b0 = _mm512_loadu_ps(bias), b1 = _mm512_loadu_ps(bias + 16), b2 = _mm512_loadu_ps(bias + 32),
                 b3 = _mm512_loadu_ps(bias + 48);
    int32_t ky, e, i;
    IG_S64_ROWS(IG_S64_ACC)
    for (ky = 0; ky < K; ++ky) {
        const float *xr = xb + ky * bs, *wr = w + (ptrdiff_t)ky * len * 16;
        for (e = 0; e < len; ++e) {
            const __m512 w0 = _mm512_loadu_ps(wr + 16 * e), w1 = _mm512_loadu_ps(wr + pstep + 16 * e);
            const __m512 w2 = _mm512_loadu_ps(wr + 2 * pstep + 16 * e), w3 = _mm512_loadu_ps(wr + 3 * pstep + 16 * e);
            IG_S64_ROWS(IG_S64_FMA)
        }
    }
    if (clamp) {
        const __m512 lo = _mm512_set1_ps(flo), hi = _mm512_set1_ps(fhi);
        IG_S64_ROWS(IG_S64_ACT)
    }
    if (n == 6) {
        IG_S64_PUT(0) IG_S64_PUT(1) IG_S64_PUT(2) IG_S64_PUT(3)
    } else {
        float t[6 * 64];
        int32_t j;
        IG_S64_ROWS(IG_S64_T)
        for (j = 0; j < 64; ++j)
            for (i = 0; i < n; ++i) y[(ptrdiff_t)j * plane + i] = t[64 * i + j];
    }
}
#undef IG_S64_ACC
#undef IG_S64_FMA
#undef IG_S64_ACT
#undef IG_S64_ROWS
#undef IG_S64_LO
#undef IG_S64_HI
#undef IG_S64_PUT
#undef IG_S64_T

/* items: (image, output row) */
static void ig_s64_items(void *arg, int32_t begin, int32_t end) {
    const ig_s64_job *J = (const ig_s64_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t C = p->in_c, IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KH = p->kernel[1], KW = p->kernel[2], sy = p->strides[1], sx = p->strides[2];
    const int32_t pt = p->pads[1], pl = p->pads[2], wb = J->wb, len = KW * C;
    const ptrdiff_t bs = (ptrdiff_t)wb * C, plane = (ptrdiff_t)OH * OW, k_rows = (ptrdiff_t)KH * KW * C;
    const ptrdiff_t pstep = k_rows * PANEL;
    const int clamp = p->act == AOTC_ACT_CLAMP;
    float buf[IG_S64_FLOATS], zero[64] = {0.0f};
    int32_t item, ky, blk, ox;
    for (item = begin; item < end; ++item) {
        const int32_t n = item / OH, oy = item % OH;
        const float *xn = J->x + (ptrdiff_t)n * IH * IW * C;
        /* columns of the buffer: input column -pl .. wb - pl - 1, zero outside the image */
        const int32_t c0 = pl < wb ? pl : wb, ncopy = min_i32(IW, wb - c0);
        for (ky = 0; ky < KH; ++ky) {
            const int32_t iy = oy * sy - pt + ky;
            float *br = buf + ky * bs;
            if (iy < 0 || iy >= IH || ncopy <= 0) {
                memset(br, 0, (size_t)bs * sizeof(float));
                continue;
            }
            memset(br, 0, (size_t)c0 * C * sizeof(float));
            memcpy(br + (ptrdiff_t)c0 * C, xn + (ptrdiff_t)iy * IW * C, (size_t)ncopy * C * sizeof(float));
            memset(br + (ptrdiff_t)(c0 + ncopy) * C, 0, (size_t)(wb - c0 - ncopy) * C * sizeof(float));
        }
        for (blk = 0; blk < p->out_c / 64; ++blk) {
            const float *w = J->wt + (ptrdiff_t)blk * 4 * pstep;
            float *yb = J->y + ((ptrdiff_t)n * p->out_c + 64 * blk) * plane + (ptrdiff_t)oy * OW;
            const float *b = J->bias != NULL ? J->bias + 64 * blk : zero;
            for (ox = 0; ox < OW; ox += 6)
                ig_s64_tile(buf + (ptrdiff_t)ox * sx * C, (ptrdiff_t)sx * C, bs, KH, len, w, pstep, b, clamp,
                            p->act_lo, p->act_hi, yb + ox, plane, min_i32(6, OW - ox));
        }
    }
}

/* aotc_conv_implicit_f32 by ig_s64_items where it applies (see above): 1, else 0. */
static int ig_stem64(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                     const float *res, float *y) {
    ig_s64_job J;
    const int32_t OW = p->out_size[2];
    const int32_t wb = (OW + 5) * p->strides[2] + p->kernel[2];
    if (!p->in_nhwc || p->out_nhwc || p->group != 1 || res != NULL || p->in_c > 4 ||
        p->out_c % 64 != 0 || p->kernel[0] != 1 || p->in_size[0] != 1 || p->out_size[0] != 1 ||
        p->dilations[1] != 1 || p->dilations[2] != 1 || (p->act != AOTC_ACT_NONE && p->act != AOTC_ACT_CLAMP) ||
        (int64_t)p->kernel[1] * wb * p->in_c > IG_S64_FLOATS)
        return 0;
    J.p = p, J.x = x, J.wt = wt, J.bias = bias, J.y = y, J.wb = wb;
    aotc_parallel_for(ig_s64_items, &J, p->batch * p->out_size[1]);
    return 1;
}
#else
#define ig_stem64(p, x, wt, bias, res, y) 0
#endif

#endif
