/* ONNX Conv (1-D, 2-D) as an implicit GEMM, aotc_conv_implicit_f32: register tiles of output
 * positions x output channels read the patch matrix straight from the input, no scratch. */
#include "conv_internal.h"
#include "conv_stem_mve.h"

/* ---- 2-D Conv as an implicit GEMM: register tiles straight from the input, no scratch ---- */

/* Y^T = P * W^T, P the patch matrix (a row per output position), never built: a register tile
 * of IG_MR positions x IG_NR output channels reads each position's patch element from the input
 * through the position's own pointer, and W^T (packed at compile time, aot/kernels/conv.py)
 * a vector at a time. Positions go by class: those whose kernel taps lie inside the input for
 * the same ranges of rows and columns (the interior; each border row and column; the corners)
 * share the loops over taps, so no tap is ever tested or read from padding. */
#define IG_MR AOTC_GEMM_MR
#define IG_NR AOTC_GEMM_NR
#define IG_NH (IG_NR / 2)

/* The sum over one class's patch elements, as three nested loops (innermost last): n
 * iterations, each stepping the input offset by xs and the W^T row by ws floats. */
typedef struct {
    int32_t n[3];
    ptrdiff_t xs[3];
    ptrdiff_t ws[3];
} ig_loops;

/* the tile's rows (microkernel.h): row i's accumulators, and its position's pointer into the input */
#define IG_DECL(i, W) MK_DECL(i, W) const float *AOTC_RESTRICT x##i = xp[i];
#define IG_INIT(i, W) memcpy(c##i, b0, sizeof c##i);
#define IG_FMA(i, W) MK_AXPY(i, W, x##i[xo], w)
#define IG_OUT(i, W) MK_STORE(i, W, t, IG_NR)

/* x86 with AVX (the host build): 3 x 3 taps inside (the two inner loops of 3) go unrolled, one
 * loop over the channels: loops of 3 cost about as much as their taps (ResNet-8's 16-channel
 * convs, whose channels go outermost because their planes crowd L1's sets; the RGB stems). Not
 * on cores without vector units, where code size counts and the loops cost less. Only the full
 * tiles of IG_MR positions (U = IG_UNROLL3 below): a class's last tile of 1 to 5 positions runs once
 * per plane, and unrolling those tiles too took 0.9 s of this file's 2.2 s compile at -O3 (issue 24's
 * build time). */
#if defined(__AVX__) && !defined(AOTC_IG_NO_UNROLL3)
#define IG_UNROLL3 1
#else
#define IG_UNROLL3 0
#endif

/* c<i> += the sums over the loops of L, for the rows ROWS (their pointers x<i>, W columns), W^T
 * from wp. The innermost loop steps a pointer to its end (see gemm.c: so that compilers
 * vectorise j, not the sum). */
#define IG_TAP(ROWS, W, B, K)                                                                     \
    {                                                                                             \
        const float *w_ = w + (B) * ws1 + (K) * ws2;                                              \
        const ptrdiff_t o_ = xa + (B) * xs1 + (K) * xs2;                                          \
        ROWS(IG_FMA3, W)                                                                          \
    }
#define IG_FMA3(i, W) MK_AXPY(i, W, x##i[o_], w_)
#define IG_SUM(ROWS, W, U)                                                                        \
    if ((U) && L->n[1] == 3 && L->n[2] == 3) {                                             \
        const ptrdiff_t xs0 = L->xs[0], xs1 = L->xs[1], ws0 = L->ws[0], ws1 = L->ws[1];           \
        const float *w = wp;                                                                      \
        ptrdiff_t xa = 0;                                                                         \
        for (a = 0; a < L->n[0]; ++a, w += ws0, xa += xs0) {                                      \
            IG_TAP(ROWS, W, 0, 0) IG_TAP(ROWS, W, 0, 1) IG_TAP(ROWS, W, 0, 2)                     \
            IG_TAP(ROWS, W, 1, 0) IG_TAP(ROWS, W, 1, 1) IG_TAP(ROWS, W, 1, 2)                     \
            IG_TAP(ROWS, W, 2, 0) IG_TAP(ROWS, W, 2, 1) IG_TAP(ROWS, W, 2, 2)                     \
        }                                                                                         \
    } else {                                                                                      \
        for (a = 0; a < L->n[0]; ++a) {                                                           \
            for (b = 0; b < L->n[1]; ++b) {                                                       \
                ptrdiff_t xo = a * L->xs[0] + b * L->xs[1];                                       \
                const float *w = wp + a * L->ws[0] + b * L->ws[1];                                \
                const float *const w_end = w + L->n[2] * ws2;                                     \
                for (; w != w_end; w += ws2, xo += xs2) {                                         \
                    ROWS(IG_FMA, W)                                                               \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

/* t[i * IG_NR + j] = b0[j] + sum over the loops of xp[i][xo] * w[j], j < W. */
#define IG_KERNEL(NAME, ROWS, W, U)                                                               \
    MK_NOINLINE static void NAME(const float *const *xp, const ig_loops *L, const float *AOTC_RESTRICT wp, \
                                 const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t) {          \
        ROWS(IG_DECL, W)                                                                          \
        const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];                                           \
        int32_t j, a, b;                                                                          \
        ROWS(IG_INIT, W)                                                                          \
        IG_SUM(ROWS, W, U)                                                                        \
        ROWS(IG_OUT, W)                                                                           \
    }
#if IG_MR == 6
IG_KERNEL(ig_tile, MK_ROWS6, IG_NR, IG_UNROLL3)
IG_KERNEL(ig_tile_narrow, MK_ROWS6, IG_NH, IG_UNROLL3)
#endif
/* AVX-512 hosts: a class's last 5 positions as one tile of 5 chains, not 3 + 2 (SqueezeNet's 13 x 13
 * convs, whose border rows and columns are 11 positions: 6 + 5) */
#if IG_MR == 6 && defined(__AVX512F__)
#define IG_TILE5 1
IG_KERNEL(ig_tile5, MK_ROWS5, IG_NR, 0)
IG_KERNEL(ig_tile5_narrow, MK_ROWS5, IG_NH, 0)
#else
#define IG_TILE5 0
#endif
IG_KERNEL(ig_tile4, MK_ROWS4, IG_NR, 0)
IG_KERNEL(ig_tile4_narrow, MK_ROWS4, IG_NH, 0)
IG_KERNEL(ig_tile3, MK_ROWS3, IG_NR, 0)
IG_KERNEL(ig_tile3_narrow, MK_ROWS3, IG_NH, 0)
IG_KERNEL(ig_tile2, MK_ROWS2, IG_NR, 0)
IG_KERNEL(ig_tile2_narrow, MK_ROWS2, IG_NH, 0)
IG_KERNEL(ig_tile1, MK_ROWS1, IG_NR, 0)
IG_KERNEL(ig_tile1_narrow, MK_ROWS1, IG_NH, 0)
#if IG_MR != 6
#define ig_tile ig_tile4
#define ig_tile_narrow ig_tile4_narrow
#endif

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

#if IG_RUNS
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
#else
#define IG_PEND 0
#endif
#else
#define IG_DIRECT 0
#define IG_PEND 0
#endif
#undef IG_KERNEL
#undef IG_SUM
#undef IG_TAP
#undef IG_FMA3

#if MK_SCALAR_TILES
/* Runs: IG_RUN positions whose inputs lie 1 or 2 floats apart (SX, the column stride: a row's
 * positions, or whole rows of a 1 x 1 conv), on targets whose tiles live in scalar registers (a
 * Cortex-M4/M7/M33: 32 single-precision registers). One pointer reads the run's patch elements
 * at constant offsets, where the general tiles step a pointer per position, and 6 x 4 sums share
 * each load: per step 6 + 4 loads, 24 multiply-adds and 4 for the loop, 1.6 instructions per
 * MAC on the M4 (the 4 x 4 general tile: 1.9). */
#define IG_RUN 5
/* The sums are scalars a<i>_<j> (position i, channel j), named, not arrays: gcc kept arrays of
 * this tile in memory at every step. X(j) for the columns j of a run 4 or 2 channels wide. */
#define IGR_COLS4(X) X(0) X(1) X(2) X(3)
#define IGR_COLS2(X) X(0) X(1)
#define IGR_DECL(j) float a0_##j, a1_##j, a2_##j, a3_##j, a4_##j;
#define IGR_INIT(j) a0_##j = a1_##j = a2_##j = a3_##j = a4_##j = b0[j];
#define IGR_MAC(j)                                                                                  \
    a0_##j = MK_MADD(v0, u##j, a0_##j), a1_##j = MK_MADD(v1, u##j, a1_##j);                          \
    a2_##j = MK_MADD(v2, u##j, a2_##j), a3_##j = MK_MADD(v3, u##j, a3_##j);                          \
    a4_##j = MK_MADD(v4, u##j, a4_##j);
#define IGR_TO_T(j) t[j] = a0_##j, t[IG_NR + j] = a1_##j, t[2 * IG_NR + j] = a2_##j, t[3 * IG_NR + j] = a3_##j, \
                    t[4 * IG_NR + j] = a4_##j;
#define IGR_LO1(v) v = v < lo ? lo : v;
#define IGR_HI1(v) v = v > hi ? hi : v;
#define IGR_LO(j) IGR_LO1(a0_##j) IGR_LO1(a1_##j) IGR_LO1(a2_##j) IGR_LO1(a3_##j) IGR_LO1(a4_##j)
#define IGR_HI(j) IGR_HI1(a0_##j) IGR_HI1(a1_##j) IGR_HI1(a2_##j) IGR_HI1(a3_##j) IGR_HI1(a4_##j)
#define IGR_PUT(j)                                                                                  \
    {                                                                                               \
        float *AOTC_RESTRICT yj = y + (j) * plane;                                                  \
        yj[0] = a0_##j, yj[1] = a1_##j, yj[2] = a2_##j, yj[3] = a3_##j, yj[4] = a4_##j;             \
    }
/* A Relu (lo 0; HI_ 0) or a Relu6 (lo 0, hi finite; HI_ 1) on the bits, in integer registers: a
 * non-negative float orders as its bits do as an int32, a negative one (sign bit set) becomes +0
 * in one instruction, the min with hi's bits hb is an integer compare; the float clamp takes a
 * compare, a move of the flags and a conditional move per bound (8 instructions for a Relu6
 * against 4 here). Only a NaN sum comes out otherwise (0 or hi). */
#define IGR_BITS1(v, dst, HI_)                                                                      \
    {                                                                                               \
        int32_t i_;                                                                                 \
        memcpy(&i_, &(v), sizeof i_);                                                               \
        i_ = i_ < 0 ? 0 : i_;                                                                       \
        if (HI_) i_ = i_ > hb ? hb : i_;                                                            \
        memcpy(&(dst), &i_, sizeof i_);                                                             \
    }
#define IGR_PUT_BITS(j, HI_)                                                                        \
    {                                                                                               \
        float *AOTC_RESTRICT yj = y + (j) * plane;                                                  \
        IGR_BITS1(a0_##j, yj[0], HI_) IGR_BITS1(a1_##j, yj[1], HI_) IGR_BITS1(a2_##j, yj[2], HI_)  \
        IGR_BITS1(a3_##j, yj[3], HI_) IGR_BITS1(a4_##j, yj[4], HI_)                                 \
    }
#define IGR_PUT_RELU(j) IGR_PUT_BITS(j, 0)
#define IGR_PUT_RELU6(j) IGR_PUT_BITS(j, 1)
/* a step's weights of the 4 (one load of 4) or 2 output channels */
#define IGR_W4 float u0, u1, u2, u3; MK_LDM4(w, u)
#define IGR_W2 const float u0 = w[0], u1 = w[1];
/* a step's patch elements of the 5 positions: consecutive at sx = 1 (one load of 5) */
#define IGR_X1 float v0, v1, v2, v3, v4; MK_LDM5(xq, v)
#define IGR_X2 const float v0 = xq[0], v1 = xq[2], v2 = xq[4], v3 = xq[6], v4 = xq[8];
/* Where a run's finished sums go: y (output channel j of position i at y[i + j * plane]), after
 * a clamp to [lo, hi] (hi infinite: a Relu) when clamp is set. */
typedef struct {
    float *y;
    ptrdiff_t plane;
    int clamp;
    float lo, hi;
} ig_fin;
/* The run's finished sums: the activation (f->clamp), then stored to f->y. */
#define IGR_FINISH(COLS)                                                                             \
        if (f->clamp && f->lo == 0.0f && f->hi > 0.0f) { /* a Relu or a Relu6 */                  \
            float *AOTC_RESTRICT y = f->y;                                                           \
            const ptrdiff_t plane = f->plane;                                                        \
            int32_t hb;                                                                              \
            memcpy(&hb, &f->hi, sizeof hb);                                                          \
            if (f->hi == INFINITY) {                                                                 \
                COLS(IGR_PUT_RELU)                                                                   \
            } else {                                                                                 \
                COLS(IGR_PUT_RELU6)                                                                  \
            }                                                                                        \
            return;                                                                                  \
        }                                                                                            \
        if (f->clamp) {                                                                              \
            const float lo = f->lo, hi = f->hi;                                                      \
            COLS(IGR_LO)                                                                             \
            if (hi != INFINITY) {                                                                    \
                COLS(IGR_HI)                                                                         \
            }                                                                                        \
        }                                                                                            \
        {                                                                                            \
            float *AOTC_RESTRICT y = f->y;                                                           \
            const ptrdiff_t plane = f->plane;                                                        \
            COLS(IGR_PUT)                                                                            \
        }
/* The run's sums start from b0 and go to t (rows IG_NR apart) when f is NULL, else they are
 * finished in registers and stored by f: no pass over a copy. */
#define IG_RUN_KERNEL(NAME, COLS, LOAD_W, LOAD_X)                                                    \
    MK_NOINLINE static void NAME(const float *AOTC_RESTRICT x0, const ig_loops *L, const float *AOTC_RESTRICT wp, \
                                 const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t, const ig_fin *f) { \
        COLS(IGR_DECL)                                                                               \
        const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];                                              \
        int32_t a, b;                                                                                \
        COLS(IGR_INIT)                                                                               \
        for (a = 0; a < L->n[0]; ++a) {                                                              \
            for (b = 0; b < L->n[1]; ++b) {                                                          \
                const float *AOTC_RESTRICT xq = x0 + a * L->xs[0] + b * L->xs[1];                    \
                const float *w = wp + a * L->ws[0] + b * L->ws[1];                                   \
                const float *const w_end = w + L->n[2] * ws2;                                        \
                for (; w != w_end; w += ws2, xq += xs2) {                                            \
                    LOAD_X LOAD_W COLS(IGR_MAC)                                                      \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
        if (f == NULL) {                                                                             \
            COLS(IGR_TO_T)                                                                           \
            return;                                                                                  \
        }                                                                                            \
        IGR_FINISH(COLS)                                                                             \
    }
IG_RUN_KERNEL(ig_run1, IGR_COLS4, IGR_W4, IGR_X1)
IG_RUN_KERNEL(ig_run1_narrow, IGR_COLS2, IGR_W2, IGR_X1)
IG_RUN_KERNEL(ig_run2, IGR_COLS4, IGR_W4, IGR_X2)
IG_RUN_KERNEL(ig_run2_narrow, IGR_COLS2, IGR_W2, IGR_X2)
/* A 1 x 1 conv's run (no pads, stride 1: ig_items_body's flat loop): n input channels in_plane
 * floats apart, W^T's rows PANEL apart, finished by f; no loops over kernel rows and columns to
 * set up (issue 27: 40 instructions a call of 20 sums, MobileNet-v2's 1 x 1 convs of 8 channels). */
#define IG_PW_KERNEL(NAME, COLS, LOAD_W)                                                             \
    MK_NOINLINE static void NAME(const float *AOTC_RESTRICT xq, ptrdiff_t in_plane, int32_t n,       \
                                 const float *AOTC_RESTRICT w, const float *AOTC_RESTRICT b0, const ig_fin *f) { \
        COLS(IGR_DECL)                                                                               \
        const float *const w_end = w + (ptrdiff_t)n * PANEL;                                         \
        COLS(IGR_INIT)                                                                               \
        for (; w != w_end; w += PANEL, xq += in_plane) {                                             \
            IGR_X1 LOAD_W COLS(IGR_MAC)                                                              \
        }                                                                                            \
        IGR_FINISH(COLS)                                                                             \
    }
IG_PW_KERNEL(ig_pw, IGR_COLS4, IGR_W4)
IG_PW_KERNEL(ig_pw_narrow, IGR_COLS2, IGR_W2)
#undef IG_PW_KERNEL
#undef IGR_FINISH
#undef IG_RUN_KERNEL
typedef void (*ig_run_kernel)(const float *, const ig_loops *, const float *, const float *, float *,
                              const ig_fin *);
#elif MK_HELIUM
#include <arm_mve.h>
/* Helium's runs: 6 positions x 4 output channels in 6 vectors of sums, per step 6 patch elements
 * (scalars: at SX 1 one LDM, MK_LDMR6) times one vector of 4 weights (one load), a VFMA by a
 * scalar each (no broadcast). W^T's panels are 16 wide and zero-padded, so a narrow block (2 channels) reads 4
 * too; its stores are predicated. About 0.7 instructions per MAC on the M55. */
#define IG_RUN 6
typedef struct {
    float *y;
    ptrdiff_t plane;
    int clamp;
    float lo, hi;
    int32_t width; /* output channels to store (the vectors' first lanes) */
} ig_fin;
#define IGV_MAC(i) a##i = vfmaq_n_f32(a##i, u, xq[(i) * SX]);
#define IGV_MAC1(i) a##i = vfmaq_n_f32(a##i, u, v##i); /* at SX 1: the six loaded at once (MK_LDMR6) */
#define IGV_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define IGV_TO_T(i) vst1q_f32(t + (i) * IG_NR, a##i);
#define IGV_CLAMP(i) a##i = vminnmq_f32(vmaxnmq_f32(a##i, lo), hi);
#define IGV_PUT(i) vstrwq_scatter_shifted_offset_p_f32(y + (i), off, a##i, keep);
#define IGV_PUTB(i) vstrwq_scatter_base_f32(at, 4 * (i), a##i);
#define IGV_PUTBP(i) vstrwq_scatter_base_p_f32(at, 4 * (i), a##i, keep);
#define IG_RUN_KERNEL(NAME, SX_)                                                                     \
    MK_NOINLINE static void NAME(const float *AOTC_RESTRICT x0, const ig_loops *L, const float *AOTC_RESTRICT wp, \
                                 const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t, const ig_fin *f) { \
        enum { SX = SX_ };                                                                           \
        const float32x4_t bias = vld1q_f32(b0);                                                      \
        float32x4_t a0 = bias, a1 = bias, a2 = bias, a3 = bias, a4 = bias, a5 = bias;                \
        const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];                                              \
        int32_t a, b;                                                                                \
        for (a = 0; a < L->n[0]; ++a) {                                                              \
            for (b = 0; b < L->n[1]; ++b) {                                                          \
                const float *AOTC_RESTRICT xq = x0 + a * L->xs[0] + b * L->xs[1];                    \
                const float *w = wp + a * L->ws[0] + b * L->ws[1];                                   \
                int32_t n = L->n[2];                                                                 \
                for (; n > 0; --n, w += ws2, xq += xs2) {                                            \
                    const float32x4_t u = vld1q_f32(w);                                              \
                    if (SX == 1) {                                                                   \
                        float v0, v1, v2, v3, v4, v5;                                                \
                        MK_LDMR6(xq, v)                                                              \
                        IGV_ROWS(IGV_MAC1)                                                           \
                    } else {                                                                         \
                        IGV_ROWS(IGV_MAC)                                                            \
                    }                                                                                \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
        if (f == NULL) {                                                                             \
            IGV_ROWS(IGV_TO_T)                                                                       \
            return;                                                                                  \
        }                                                                                            \
        if (f->clamp) {                                                                              \
            const float32x4_t lo = vdupq_n_f32(f->lo), hi = vdupq_n_f32(f->hi);                                                      \
            IGV_ROWS(IGV_CLAMP)                                                                      \
        }                                                                                            \
        {                                                                                            \
            float *y = f->y;                                                                         \
            const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)f->plane);              \
            const mve_pred16_t keep = vctp32q((uint32_t)f->width);                                   \
            IGV_ROWS(IGV_PUT)                                                                        \
        }                                                                                            \
    }
IG_RUN_KERNEL(ig_run1, 1)
IG_RUN_KERNEL(ig_run2, 2)
#undef IG_RUN_KERNEL
#define ig_run1_narrow ig_run1
#define ig_run2_narrow ig_run2
/* A 1 x 1 conv's band of rows (no pads, stride 1: ig_items_body's flat loop), positions [0, count)
 * (at least IG_RUN) of n input channels in_plane floats apart from xq, W^T's rows PANEL apart from
 * w, finished by f, in runs of R (6 or 7) positions, the last ending at count (computing a few
 * outputs again). One call per band, the runs' loop here: a call per run cost as much as 8 input
 * channels' sums (issue 27: MobileNet-v2's 1 x 1 convs of 8 channels). A run's R x 4 sums go to
 * Y's 4 channel planes by scatter stores, each position at an immediate offset from one vector of
 * the planes' addresses. Runs of 7 take all 8 vector registers (7 sums and the weights): 11
 * instructions a step of 28 MACs against 10 for 24, and fewer runs to finish; ig_pw takes them
 * where they need fewer instructions (large planes, not 6 x 6 or 3 x 3). */
#define IGV_ROWS7(X) IGV_ROWS(X) X(6)
#define IGV_MAX(i) a##i = vmaxnmq_f32(a##i, lo);
#define IGV_MIN(i) a##i = vminnmq_f32(a##i, hi);
#define IG_PW_RUNS(NAME, R, ROWS, LDM)                                                               \
    MK_NOINLINE static void NAME(const float *AOTC_RESTRICT xq, ptrdiff_t in_plane, int32_t n,       \
                                 const float *AOTC_RESTRICT w, const float *AOTC_RESTRICT b0,       \
                                 const ig_fin *f, ptrdiff_t count) {                                \
        float *const y = f->y;                                                                       \
        const uint32_t plane = (uint32_t)f->plane * (uint32_t)sizeof(float); /* (bytes) */          \
        const int clamp = f->clamp, full = f->width >= 4;                                            \
        const float lo_ = f->lo, hi_ = f->hi;                                                        \
        const mve_pred16_t keep = vctp32q((uint32_t)f->width);                                       \
        ptrdiff_t q = 0;                                                                             \
        for (;;) {                                                                                   \
            const float *AOTC_RESTRICT xp = xq + q, *wp = w;                                         \
            const float32x4_t bias = vld1q_f32(b0);                                                  \
            float32x4_t a0 = bias, a1 = bias, a2 = bias, a3 = bias, a4 = bias, a5 = bias, a6 = bias; \
            int32_t k;                                                                               \
            (void)a6;                                                                                \
            for (k = n; k > 0; --k, wp += PANEL, xp += in_plane) {                                   \
                const float32x4_t u = vld1q_f32(wp);                                                 \
                float v0, v1, v2, v3, v4, v5, v6;                                                    \
                (void)v6;                                                                            \
                LDM(xp, v)                                                                           \
                ROWS(IGV_MAC1)                                                                       \
            }                                                                                        \
            if (clamp) { /* (the bounds one after the other: 7 sums and both would not fit) */       \
                {                                                                                    \
                    const float32x4_t lo = vdupq_n_f32(lo_);                                         \
                    ROWS(IGV_MAX)                                                                    \
                }                                                                                    \
                {                                                                                    \
                    const float32x4_t hi = vdupq_n_f32(hi_);                                         \
                    ROWS(IGV_MIN)                                                                    \
                }                                                                                    \
            }                                                                                        \
            { /* lane j: channel j's plane, at position q */                                         \
                const uint32x4_t at = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0, 1), plane),            \
                                                  (uint32_t)(uintptr_t)(y + q));                     \
                if (full) {                                                                          \
                    ROWS(IGV_PUTB)                                                                   \
                } else {                                                                             \
                    ROWS(IGV_PUTBP)                                                                  \
                }                                                                                    \
            }                                                                                        \
            if (q + (R) >= count) break;                                                             \
            q = q + 2 * (R) <= count ? q + (R) : count - (R);                                        \
        }                                                                                            \
    }
IG_PW_RUNS(ig_pw6, 6, IGV_ROWS, MK_LDMR6)
IG_PW_RUNS(ig_pw7, 7, IGV_ROWS7, MK_LDMR7)
#undef IG_PW_RUNS
MK_NOINLINE static void ig_pw(const float *AOTC_RESTRICT xq, ptrdiff_t in_plane, int32_t n,
                              const float *AOTC_RESTRICT w, const float *AOTC_RESTRICT b0, const ig_fin *f,
                              ptrdiff_t count) {
    /* runs of 7 where their steps (11 instructions) add up to fewer than runs of 6 (10) */
    if (count >= 7 && (count + 6) / 7 * 11 < (count + 5) / 6 * 10) {
        ig_pw7(xq, in_plane, n, w, b0, f, count);
    } else {
        ig_pw6(xq, in_plane, n, w, b0, f, count);
    }
}
#define ig_pw_narrow ig_pw
/* Runs down a column class (the positions of a conv's left or right edge, a row apart: their
 * inputs sv floats apart), sums to t: against the general tiles of 4 positions, no pointer per
 * position (issue 27: ResNet-8's 8 x 8 convs have 28 edge positions for 36 inside; on the M55
 * at -O2 10.09 -> 9.58 M instructions). (On the M4, without a VLDM for the patch elements,
 * they took more than the tiles.) */
#define IGV_MACV(i) a##i = vfmaq_n_f32(a##i, u, xq[(i) * sv]);
MK_NOINLINE static void ig_runv(const float *AOTC_RESTRICT x0, const ig_loops *L, const float *AOTC_RESTRICT wp,
                                const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t, ptrdiff_t sv) {
    const float32x4_t bias = vld1q_f32(b0);
    float32x4_t a0 = bias, a1 = bias, a2 = bias, a3 = bias, a4 = bias, a5 = bias;
    const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];
    int32_t a, b;
    for (a = 0; a < L->n[0]; ++a) {
        for (b = 0; b < L->n[1]; ++b) {
            const float *AOTC_RESTRICT xq = x0 + a * L->xs[0] + b * L->xs[1];
            const float *w = wp + a * L->ws[0] + b * L->ws[1];
            int32_t n = L->n[2];
            for (; n > 0; --n, w += ws2, xq += xs2) {
                const float32x4_t u = vld1q_f32(w);
                IGV_ROWS(IGV_MACV)
            }
        }
    }
    IGV_ROWS(IGV_TO_T)
}
#undef IGV_MACV
#define ig_runv_narrow ig_runv
typedef void (*ig_run_kernel)(const float *, const ig_loops *, const float *, const float *, float *,
                              const ig_fin *);
#else
#define IG_RUN IG_MR
#endif
/* runs of positions, finished in their kernel where they can be: on the M4 a full block of
 * channels (the kernels store all W), with Helium any (predicated stores) */
#define IG_MCU_RUNS (MK_SCALAR_TILES || MK_HELIUM)
#if MK_HELIUM
#define IG_FIN_WIDTH(width, narrow) 1
#else
#define IG_FIN_WIDTH(width, narrow) ((width) == ((narrow) ? IG_NH : IG_NR))
#endif

/* Positions of the next tile when `left` are left in a class: IG_MR while that leaves at least 3
 * (a tile of 1 or 2 runs its sums' chains at a fraction of the machine's rate), else 3 + 2 for 5
 * (one tile of 5 with IG_TILE5), 4 + 3 for 7, 4 + 4 for 8. */
static int32_t ig_rows(int32_t left) {
    static const int8_t few[9] = {0, 1, 2, 3, 4, IG_TILE5 ? 5 : 3, IG_MR, 4, 4};
    return left >= 9 ? IG_MR : few[left];
}

typedef void (*ig_kernel)(const float *const *, const ig_loops *, const float *, const float *, float *);

/* Whether the input channels' rows crowd the L1 cache's sets when read channel after channel:
 * planes a multiple of 4 KiB apart (32 x 32 floats) map every channel's row to the same set of a
 * 32 KiB 8-way L1 with 64-byte lines (64 sets), and a loop over 16 channels innermost missed at
 * every read (ResNet-8's 16-channel 32 x 32 convs). Crowded: more rows per set than its 8 ways. */
static int crowds_l1(ptrdiff_t in_plane, int32_t cg) {
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) /* cores with such caches */
    const ptrdiff_t lines = in_plane * (ptrdiff_t)sizeof(float) / 64; /* plane step in lines, if whole */
    ptrdiff_t a = 64, b = lines % 64, t;
    if (in_plane * (ptrdiff_t)sizeof(float) % 64 != 0) return 0;
    while (b != 0) t = a % b, a = b, b = t; /* a = gcd(64, lines mod 64): the channels fill 64 / a sets */
    return cg > 8 * (64 / a);
#else /* a Cortex-M reads its SRAM without a cache: the longer innermost loop costs fewer instructions */
    (void)in_plane, (void)cg;
    return 0;
#endif
}

/* tap_run (conv_internal.h) out of line: inlined at its two calls, it would cost the loops below
 * registers for a function called a few times per plane. */
MK_NOINLINE static int32_t ig_tap_run(int32_t o, int32_t n_out, int32_t n_in, int32_t K, int32_t s, int32_t d,
                                      int32_t pad, int32_t *k0, int32_t *k1) {
    return tap_run(o, n_out, n_in, K, s, d, pad, k0, k1);
}

/* The finished tile t (rows positions q[i] by output channels [0, width), channel planes
 * `plane` apart in y): + the residual, the activation (vectorised along t's rows), stored.
 * A full tile of consecutive positions (most of them) moves with constant offsets. */
MK_SPEED static void ig_store(const aotc_conv_params *p, float *t, const ptrdiff_t *q, int32_t rows, int32_t width,
                     ptrdiff_t plane, const float *res, float *y) {
    int32_t i, j;
    if (rows == IG_MR && q[IG_MR - 1] - q[0] == IG_MR - 1) {
        res = res != NULL ? res + q[0] : NULL;
        y += q[0];
        if (res != NULL)
            for (j = 0; j < width; ++j, res += plane)
                for (i = 0; i < IG_MR; ++i) t[i * IG_NR + j] += res[i];
        aotc_activate_f32(t, (ptrdiff_t)IG_MR * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
        for (j = 0; j < width; ++j, y += plane)
            for (i = 0; i < IG_MR; ++i) y[i] = t[i * IG_NR + j];
        return;
    }
#if IG_MCU_RUNS
    if (rows == IG_RUN && q[IG_RUN - 1] - q[0] == IG_RUN - 1) {
        y += q[0];
        aotc_activate_f32(t, (ptrdiff_t)IG_RUN * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
        for (j = 0; j < width; ++j, y += plane)
            for (i = 0; i < IG_RUN; ++i) y[i] = t[i * IG_NR + j];
        return;
    }
#endif
    if (res != NULL)
        for (j = 0; j < width; ++j, res += plane)
            for (i = 0; i < rows; ++i) t[i * IG_NR + j] += res[q[i]];
    aotc_activate_f32(t, (ptrdiff_t)rows * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
    for (j = 0; j < width; ++j, y += plane)
        for (i = 0; i < rows; ++i) y[q[i]] = t[i * IG_NR + j];
}

/* ig_store for a channels-last Y (p->out_nhwc, no residual): position q[i]'s width channels are
 * one run at y + q[i] * out_c. */
static void ig_store_nhwc(const aotc_conv_params *p, float *t, const ptrdiff_t *q, int32_t rows, int32_t width,
                          float *y) {
    int32_t i, j;
    aotc_activate_f32(t, (ptrdiff_t)rows * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
    for (i = 0; i < rows; ++i) {
        float *yq = y + q[i] * p->out_c;
        for (j = 0; j < width; ++j) yq[j] = t[i * IG_NR + j];
    }
}

/* p->out_nhwc: where the block's channel 0 of position 0 goes (no residual then) */
#define IG_Y_NHWC (y + (ptrdiff_t)n * p->out_c * out_plane + (ptrdiff_t)g * mg + j0)

/* A conv's work for the pool (aotc_threads.h): items of (image, group, block of IG_NR output
 * channels, band of output rows), `bands` bands per block. Every output element is summed by the
 * same loops whichever item holds it, so any split gives the single-threaded results. */
typedef struct {
    const aotc_conv_params *p;
    const float *x, *wt, *bias, *res;
    float *y;
    int32_t blocks, bands; /* blocks of IG_NR channels per group; row bands per block */
} ig_job;

/* onhwc: p->out_nhwc, a constant in each of the two copies below on x86 (NCHW's tiles pay no test) */
MK_SPEED static MK_INLINE void ig_items_body(void *arg, int32_t begin, int32_t end, const int onhwc) {
    const ig_job *J = (const ig_job *)arg;
    const aotc_conv_params *p = J->p;
    const float *x = J->x, *wt = J->wt, *bias = J->bias, *res = J->res;
    float *y = J->y;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KH = p->kernel[1], KW = p->kernel[2], taps = KH * KW;
    const int32_t sy = p->strides[1], sx = p->strides[2], dy = p->dilations[1], dx = p->dilations[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    const ptrdiff_t k_rows = (ptrdiff_t)cg * taps, group_w = (mg + PANEL - 1) / PANEL * PANEL * k_rows;
    /* the input's steps between channels, columns and rows: NCHW, or NHWC (channels last) */
    const int nhwc = p->in_nhwc != 0;
    const ptrdiff_t cs = nhwc ? 1 : in_plane, ps = nhwc ? p->in_c : 1, rs = nhwc ? (ptrdiff_t)IW * p->in_c : IW;
    /* A residual and the activation after it go in a pass of their own over each block of output
     * planes, vectorised: added tile by tile, the residual is read across planes a position at a
     * time (ResNet-8's 16-channel 32 x 32 conv with its shortcut took 15 % longer than without).
     * The output never shares the residual's memory (Conv writes no input in place). */
    aotc_conv_params bare = *p;
    const aotc_conv_params *tp = res != NULL ? &bare : p; /* the params the tiles store by */
    int32_t n, g, j0, ra, rb, ca, cb, ky0, ky1, kx0, kx1, item;
#if IG_DIRECT
    ig_dst dst;
#endif
    bare.act = AOTC_ACT_NONE;
#if IG_MCU_RUNS
    ig_fin fin; /* runs finished in their kernel: clamp -1 where they cannot be (a LeakyRelu) */
    fin.plane = out_plane;
    fin.clamp = tp->act == AOTC_ACT_NONE ? 0 : tp->act == AOTC_ACT_CLAMP ? 1 : -1;
    fin.lo = tp->act_lo;
    fin.hi = tp->act_hi;
#if MK_HELIUM
    fin.width = 0;
#endif
#endif
#if IG_DIRECT
    dst.plane = out_plane, dst.act = tp->act, dst.lo = tp->act_lo, dst.hi = tp->act_hi, dst.leak = tp->act_alpha;
#endif
#if MK_HELIUM
    if (KH == 1 && KW == 1 && sy == 1 && sx == 1 && IH == OH && IW == OW && !nhwc && !onhwc && fin.clamp >= 0 &&
        J->bands == 1 && out_plane >= IG_RUN) {
        /* a 1 x 1 conv (no pads, stride 1): each item (a block of 4 output channels) is one ig_pw
         * call over the whole plane, without the general loop's set-up below (issue 27: 470 k of
         * MobileNet-v2's 6.4 M instructions went to it, blocks of its 1 x 1 convs on 6 x 6 and 3 x 3
         * planes) */
        for (item = begin; item < end; ++item) {
            const float *xg, *wj;
            float b0[IG_NR];
            ptrdiff_t yo;
            int32_t j;
            n = item / J->blocks / p->group, g = item / J->blocks % p->group, j0 = item % J->blocks * IG_NR;
            xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
            yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + j0) * out_plane;
            wj = wt + g * group_w + (ptrdiff_t)(j0 / PANEL) * k_rows * PANEL + j0 % PANEL;
            fin.width = min_i32(IG_NR, mg - j0);
            for (j = 0; j < IG_NR; ++j) b0[j] = bias != NULL && j < fin.width ? bias[g * mg + j0 + j] : 0.0f;
            fin.y = y + yo;
            ig_pw(xg, in_plane, cg, wj, b0, &fin, out_plane);
            if (res != NULL) { /* the block's planes: + the residual, then the activation */
                const ptrdiff_t nb = (ptrdiff_t)fin.width * out_plane;
                float *AOTC_RESTRICT yb = y + yo;
                const float *AOTC_RESTRICT rb = res + yo;
                ptrdiff_t e;
                for (e = 0; e < nb; ++e) yb[e] += rb[e];
                aotc_activate_f32(yb, nb, p->act, p->act_lo, p->act_hi, p->act_alpha);
            }
        }
        return;
    }
#endif
    for (item = begin; item < end; ++item) {
        const int32_t band = item % J->bands, block = item / J->bands;
        /* output rows [row0, row1) of the block */
        /* (one band: no 64-bit divisions, a library call each on 32-bit cores) */
        const int32_t row0 = J->bands == 1 ? 0 : (int32_t)((int64_t)OH * band / J->bands);
        const int32_t row1 = J->bands == 1 ? OH : (int32_t)((int64_t)OH * (band + 1) / J->bands);
        n = block / J->blocks / p->group, g = block / J->blocks % p->group, j0 = block % J->blocks * IG_NR;
        {
            const float *xg = x + (ptrdiff_t)n * p->in_c * in_plane + (ptrdiff_t)g * cg * cs;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * out_plane;
            { /* output channels [j0, j0 + width) */
                const int32_t width = min_i32(IG_NR, mg - j0);
                const int narrow = width <= IG_NH;
                /* the group's W^T: panels of k_rows x PANEL; columns j0.. start at this row's j0 % PANEL */
                const float *wj = wt + g * group_w + (ptrdiff_t)(j0 / PANEL) * k_rows * PANEL + j0 % PANEL;
                float b0[IG_NR];
                int32_t j;
#if IG_PEND
                /* single-position tiles put off to run four at a time (ig_tile1x4): their classes' loops
                 * (the first's), input and W^T pointers, positions */
                ig_loops pend_l;
                const float *pend_x[4], *pend_w[4];
                /* IG_MR entries, not 4: ig_store reads q[IG_MR - 1] where rows == IG_MR, which gcc -O3 cannot
                 * see never holds for these (rows = npend <= 4), and -Warray-bounds would fail the build */
                ptrdiff_t pend_q[IG_MR > 4 ? IG_MR : 4];
                int32_t npend = 0;
#define IG_FLUSH                                                                                    \
    if (npend > 0) {                                                                                \
        float t_[(IG_MR > 4 ? IG_MR : 4) * IG_NR]; /* as pend_q: rows past npend are never read */   \
        int32_t i_;                                                                                 \
        for (i_ = npend; i_ < 4; ++i_) pend_x[i_] = pend_x[0], pend_w[i_] = pend_w[0];              \
        ig_tile1x4(pend_x, &pend_l, pend_w, b0, t_);                                                \
        ig_store(tp, t_, pend_q, npend, width, out_plane, NULL, y + yo + (ptrdiff_t)j0 * out_plane); \
        npend = 0;                                                                                  \
    }
#endif
                for (j = 0; j < IG_NR; ++j) b0[j] = bias != NULL && j < width ? bias[g * mg + j0 + j] : 0.0f;
#if IG_MCU_RUNS
                if (KH == 1 && KW == 1 && sy == 1 && sx == 1 && IH == OH && IW == OW && !nhwc && !onhwc &&
                    fin.clamp >= 0 && IG_FIN_WIDTH(width, narrow) && row1 - row0 >= 1 && (row1 - row0) * OW >= IG_RUN) {
                    /* a 1 x 1 conv (no pads, stride 1): its band of rows is one run of positions, input
                     * and output alike, so it goes in runs straight to the kernels, the last ending
                     * at the band's end (computing a few outputs again); the general loop below costs
                     * 140 instructions a run of 20 MACs on the M4 (MobileNet-v2's 1 x 1 convs of 8
                     * input channels) */
#if MK_HELIUM
                    fin.width = width;
                    fin.y = y + yo + (ptrdiff_t)j0 * out_plane + (ptrdiff_t)row0 * OW;
                    ig_pw(xg + (ptrdiff_t)row0 * OW, in_plane, cg, wj, b0, &fin, (ptrdiff_t)(row1 - row0) * OW);
#else
                    const ptrdiff_t q_end = (ptrdiff_t)row1 * OW;
                    ptrdiff_t q;
                    for (q = (ptrdiff_t)row0 * OW; q < q_end; q += IG_RUN) {
                        const ptrdiff_t q0 = q + IG_RUN <= q_end ? q : q_end - IG_RUN;
                        fin.y = y + yo + (ptrdiff_t)j0 * out_plane + q0;
                        (narrow ? ig_pw_narrow : ig_pw)(xg + q0, in_plane, cg, wj, b0, &fin);
                    }
#endif
                    ra = row1; /* the loop below has nothing left */
                } else {
                    ra = row0;
                }
                for (; ra < row1; ra = rb) {
#else
                for (ra = row0; ra < row1; ra = rb) {
#endif
                    rb = min_i32(ig_tap_run(ra, OH, IH, KH, sy, dy, p->pads[1], &ky0, &ky1), row1);
                    for (ca = 0; ca < OW; ca = cb) {
                        const int32_t cols = (cb = ig_tap_run(ca, OW, IW, KW, sx, dx, p->pads[2], &kx0, &kx1)) - ca;
                        const int32_t count = (rb - ra) * cols, nky = ky1 - ky0, nkx = kx1 - kx0;
                        const float *wc = wj + (ptrdiff_t)(ky0 * KW + kx0) * (nhwc ? cg : 1) * PANEL;
                        const int32_t y0 = ky0 * dy - p->pads[1], x0 = kx0 * dx - p->pads[2];
                        ig_loops L;
                        int32_t r = 0, oy = ra, ox = ca;
                        if (nky <= 0 || nkx <= 0) { /* no tap inside: the bias alone */
                            L.n[0] = L.n[1] = L.n[2] = 0;
                        } else if (nhwc) { /* rows; a row's columns and channels are one run when dense */
                            const int dense = dx == 1 && cg == p->in_c; /* group 1: columns abut */
                            L.n[0] = nky, L.xs[0] = (ptrdiff_t)dy * rs, L.ws[0] = (ptrdiff_t)KW * cg * PANEL;
                            L.n[1] = dense ? 1 : nkx, L.xs[1] = (ptrdiff_t)dx * ps, L.ws[1] = (ptrdiff_t)cg * PANEL;
                            L.n[2] = dense ? nkx * cg : cg, L.xs[2] = 1, L.ws[2] = PANEL;
                        } else if (cg >= nkx && !(nkx >= 3 && crowds_l1(in_plane, cg))) {
                            /* rows, columns, then the input channels innermost */
                            L.n[0] = nky, L.xs[0] = (ptrdiff_t)dy * IW, L.ws[0] = (ptrdiff_t)KW * PANEL;
                            L.n[1] = nkx, L.xs[1] = dx, L.ws[1] = PANEL;
                            L.n[2] = cg, L.xs[2] = in_plane, L.ws[2] = (ptrdiff_t)taps * PANEL;
                        } else { /* few channels, wide kernels, or crowded sets: the columns innermost */
                            L.n[0] = cg, L.xs[0] = in_plane, L.ws[0] = (ptrdiff_t)taps * PANEL;
                            L.n[1] = nky, L.xs[1] = (ptrdiff_t)dy * IW, L.ws[1] = (ptrdiff_t)KW * PANEL;
                            L.n[2] = nkx, L.xs[2] = dx, L.ws[2] = PANEL;
                        }
                        while (r < count) { /* tiles of positions, row by row through the class */
                            int32_t rows = ig_rows(count - r);
#if IG_MCU_RUNS
                            if (count - r == IG_RUN - 1 && r > 0 && L.n[0] > 0 && ps == 1 && sx <= 2) {
                                /* the class's last 4 positions (as many as a run of 5 costs): the run that ends at its end, if
                                 * its inputs lie sx apart (it computes some outputs again, and
                                 * stores the same values) */
                                const int32_t b_ = count - IG_RUN, by = ra + b_ / (cb - ca), bx = ca + b_ % (cb - ca);
                                const int32_t ly = ra + (count - 1) / (cb - ca), lx = ca + (count - 1) % (cb - ca);
                                if (((ptrdiff_t)(ly - by) * sy) * rs + (ptrdiff_t)(lx - bx) * sx == (IG_RUN - 1) * sx)
                                    r = b_, oy = by, ox = bx;
                            }
                            if (count - r >= IG_RUN && L.n[0] > 0 && ps == 1 && sx <= 2) {
                                /* a run: IG_RUN positions whose inputs lie sx apart (the first and
                                 * last tell: positions go row by row through the class's rectangle) */
                                const int32_t span = cb - ca, ex = ox - ca + IG_RUN - 1;
                                const int32_t ry = oy + ex / span, rx = ca + ex % span; /* the last one */
                                const ptrdiff_t x_first = (ptrdiff_t)(oy * sy + y0) * rs + (ptrdiff_t)(ox * sx + x0);
                                const ptrdiff_t x_last = (ptrdiff_t)(ry * sy + y0) * rs + (ptrdiff_t)(rx * sx + x0);
                                const ptrdiff_t q0 = (ptrdiff_t)oy * OW + ox, q_last = (ptrdiff_t)ry * OW + rx;
                                if (x_last - x_first == (IG_RUN - 1) * sx) {
                                    const ig_run_kernel k = sx == 1 ? (narrow ? ig_run1_narrow : ig_run1)
                                                                    : (narrow ? ig_run2_narrow : ig_run2);
                                    float t[IG_RUN * IG_NR];
                                    if (!onhwc && fin.clamp >= 0 && q_last - q0 == IG_RUN - 1 && IG_FIN_WIDTH(width, narrow)) {
                                        fin.y = y + yo + (ptrdiff_t)j0 * out_plane + q0; /* finished in the kernel */
#if MK_HELIUM
                                        fin.width = width;
#endif
                                        k(xg + x_first, &L, wc, b0, t, &fin);
                                    } else {
                                        ptrdiff_t q[IG_RUN];
                                        int32_t i, qy = oy, qx = ox;
                                        for (i = 0; i < IG_RUN; ++i) {
                                            q[i] = (ptrdiff_t)qy * OW + qx;
                                            if (++qx == cb) qx = ca, ++qy;
                                        }
                                        k(xg + x_first, &L, wc, b0, t, NULL);
                                        if (onhwc) ig_store_nhwc(tp, t, q, IG_RUN, width, IG_Y_NHWC);
                                        else ig_store(tp, t, q, IG_RUN, width, out_plane, NULL, y + yo + (ptrdiff_t)j0 * out_plane);
                                    }
                                    r += IG_RUN, oy = ry, ox = rx + 1;
                                    if (ox == cb) ox = ca, ++oy;
                                    continue;
                                }
                                if (span >= IG_RUN && cb - ox < IG_RUN) /* to the row's end: the next row's runs */
                                    rows = cb - ox > 4 ? 3 : cb - ox; /* (a tile is 1 to 4 rows) */
                            }
#endif
#if MK_HELIUM
                            if (cb - ca == 1 && count >= IG_RUN && L.n[0] > 0 && ps == 1) {
                                /* a column class: runs down it, the last ending at its end (computing
                                 * a few outputs again) */
                                const int32_t b_ = count - r < IG_RUN ? count - IG_RUN : r, by = ra + b_;
                                const ptrdiff_t x_first = (ptrdiff_t)(by * sy + y0) * rs + (ptrdiff_t)(ca * sx + x0);
                                ptrdiff_t q[IG_RUN];
                                float t[IG_RUN * IG_NR];
                                int32_t i;
                                for (i = 0; i < IG_RUN; ++i) q[i] = (ptrdiff_t)(by + i) * OW + ca;
                                (narrow ? ig_runv_narrow : ig_runv)(xg + x_first, &L, wc, b0, t, (ptrdiff_t)sy * rs);
                                if (onhwc) ig_store_nhwc(tp, t, q, IG_RUN, width, IG_Y_NHWC);
                                else ig_store(tp, t, q, IG_RUN, width, out_plane, NULL, y + yo + (ptrdiff_t)j0 * out_plane);
                                r = b_ + IG_RUN, oy = ra + r, ox = ca;
                                continue;
                            }
#endif
                            {
                            const ig_kernel k = rows == IG_MR ? (narrow ? ig_tile_narrow : ig_tile)
#if IG_TILE5
                                                : rows == 5   ? (narrow ? ig_tile5_narrow : ig_tile5)
#endif
                                                : rows == 4   ? (narrow ? ig_tile4_narrow : ig_tile4)
                                                : rows == 3   ? (narrow ? ig_tile3_narrow : ig_tile3)
                                                : rows == 2   ? (narrow ? ig_tile2_narrow : ig_tile2)
                                                              : (narrow ? ig_tile1_narrow : ig_tile1);
                            const float *xp[IG_MR];
                            ptrdiff_t q[IG_MR];
                            float t[IG_MR * IG_NR];
                            int32_t i;
                            for (i = 0; i < rows; ++i, ++r) {
                                /* the position's first tap inside: input row oy * sy + y0, column ox * sx + x0 */
                                q[i] = (ptrdiff_t)oy * OW + ox;
                                xp[i] = L.n[0] > 0 ? xg + (ptrdiff_t)(oy * sy + y0) * rs + (ptrdiff_t)(ox * sx + x0) * ps : xg;
                                if (++ox == cb) ox = ca, ++oy;
                            }
#if IG_PEND
                            if (!onhwc && rows == 1 && width == IG_NR && L.n[0] > 0) {
                                if (npend > 0 && !ig_same_loops(&pend_l, &L)) {
                                    IG_FLUSH
                                }
                                pend_l = L, pend_x[npend] = xp[0], pend_w[npend] = wc, pend_q[npend] = q[0];
                                if (++npend == 4) {
                                    IG_FLUSH
                                }
                                continue;
                            }
#endif
#if IG_DIRECT
                            if (!onhwc && rows == IG_MR && width == IG_NR && L.n[0] > 0) {
                                int8_t st[IG_MR + 1];
                                int32_t runs = 1;
                                st[0] = 0;
                                for (i = 1; i < IG_MR; ++i)
                                    if (q[i] != q[i - 1] + 1) st[runs++] = (int8_t)i;
                                st[runs] = IG_MR;
                                if (runs == 1 || IG_RUNS) {
                                    ig_tile_y(xp, &L, wc, b0, y + yo + (ptrdiff_t)j0 * out_plane, &dst, q, st, runs);
                                    continue;
                                }
                            }
#endif
                            if (L.n[0] > 0) {
                                k(xp, &L, wc, b0, t);
                            } else {
                                for (i = 0; i < rows * IG_NR; ++i) t[i] = b0[i % IG_NR];
                            }
                            if (onhwc) ig_store_nhwc(tp, t, q, rows, width, IG_Y_NHWC);
                            else ig_store(tp, t, q, rows, width, out_plane, NULL, y + yo + (ptrdiff_t)j0 * out_plane);
                            }
                        }
                    }
                }
#if IG_PEND
                IG_FLUSH
#undef IG_FLUSH
#endif
                if (res != NULL && J->bands == 1) { /* the block's planes: + the residual, then the activation */
                    float *AOTC_RESTRICT yb = y + yo + (ptrdiff_t)j0 * out_plane;
                    const float *AOTC_RESTRICT rb = res + yo + (ptrdiff_t)j0 * out_plane;
                    const ptrdiff_t nb = (ptrdiff_t)width * out_plane;
                    ptrdiff_t e;
                    for (e = 0; e < nb; ++e) yb[e] += rb[e];
                    aotc_activate_f32(yb, nb, p->act, p->act_lo, p->act_hi, p->act_alpha);
                } else if (res != NULL) { /* the same, on the band's rows of each plane */
                    const ptrdiff_t nb = (ptrdiff_t)(row1 - row0) * OW;
                    int32_t j;
                    for (j = 0; j < width; ++j) {
                        const ptrdiff_t o = yo + (ptrdiff_t)(j0 + j) * out_plane + (ptrdiff_t)row0 * OW;
                        float *AOTC_RESTRICT yb = y + o;
                        const float *AOTC_RESTRICT rb = res + o;
                        ptrdiff_t e;
                        for (e = 0; e < nb; ++e) yb[e] += rb[e];
                        aotc_activate_f32(yb, nb, p->act, p->act_lo, p->act_hi, p->act_alpha);
                    }
                }
            }
        }
    }
}

#if IG_DIRECT
MK_SPEED static void ig_items(void *arg, int32_t begin, int32_t end) { ig_items_body(arg, begin, end, 0); }
MK_SPEED static void ig_items_nhwc(void *arg, int32_t begin, int32_t end) { ig_items_body(arg, begin, end, 1); }
#else /* one copy where code size counts: a test per tile (ResNet-8 on a Cortex-M4: +0.09 % instructions,
       * +752 B of .text; two copies there: +0.02 %, +3,184 B) */
MK_SPEED static void ig_items(void *arg, int32_t begin, int32_t end) {
    ig_items_body(arg, begin, end, ((const ig_job *)arg)->p->out_nhwc != 0);
}
#define ig_items_nhwc ig_items
#endif

MK_SPEED void aotc_conv_implicit_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                            const float *res, float *y) {
    ig_job J;
    if (igm(p, x, wt, bias, res, y)) return; /* Helium: few input channels at stride 2, narrow outputs (conv_stem_mve.h) */
    const int32_t items = p->batch * p->group * ((p->out_c / p->group + IG_NR - 1) / IG_NR);
    J.p = p, J.x = x, J.wt = wt, J.bias = bias, J.res = res, J.y = y;
    J.blocks = (p->out_c / p->group + IG_NR - 1) / IG_NR;
    J.bands = 1;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    /* too few channel blocks to keep every thread busy (4 items each): the rows go in bands too */
    if (items < 4 * AOTC_THREADS) J.bands = min_i32(p->out_size[1], (4 * AOTC_THREADS + items - 1) / items);
#endif
    aotc_parallel_for(p->out_nhwc ? ig_items_nhwc : ig_items, &J, items * J.bands);
}
