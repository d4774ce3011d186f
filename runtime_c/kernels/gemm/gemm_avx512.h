/* The GEMM core's AVX-512F register tiles (gemm.c includes this where __AVX512F__ is defined and
 * AOTC_NO_INTRINSICS is not): 12 rows of A times two B panels (32 columns), 24 of the 32 zmm
 * registers accumulating; a panel's last columns, partial rows and a plain B's edge by masks.
 * Internal to runtime_c/kernels.
 *
 * Why (issue 64): the plain kernels' tile is AOTC_GEMM_MR x AOTC_GEMM_NR = 6 x 16 with AVX, 6 accumulators
 * on AVX-512 (a zmm holds a row of 16): per step of k 6 broadcasts and a B load for 6 multiply-adds; 12 x
 * 32 takes 12 broadcasts and 2 B loads for 24. Measured with bench/gemm_bench.py (gcc 12 -O2 and -O3
 * -march=native, one core of a loaded 2-core Xeon VM, the two builds in alternating rounds): ViT-tiny's
 * products (197 x 192 x 576, 197 x 768 x 192, a head's q k^T and attn v) 1.28 to 1.5 x as fast, other
 * shapes 1.3 to 1.8 x, up to 85 % of the rate of independent FMA chains timed in the same rounds (65 %
 * before); bench/vit_tiny.py's model spent 17.2 ms in its MatMuls instead of 22.3. The tile reads B as it
 * is laid out (panels of AOTC_GEMM_PANEL columns, the second at b + b_ps), so packed weights, the
 * compiler's layout facts (AOTC_GEMM_PANEL, AOTC_GEMM_KC) and AOTC_GEMM_MR x AOTC_GEMM_NR, which the conv
 * kernels share, are those of every other x86 build. Intrinsics, not plain arrays: gcc 12 does keep a
 * plain 12 x 32 tile with fmaf in zmm registers, but without fmaf (-std=c99 does not contract a * b + c)
 * its -O3 split the rows into xmm pieces and spilled; and the masks finish a plain B's last panel and
 * partial tiles in place, where the plain path copies the panel into `work` and stores partial tiles row
 * by row (store_rows). The k loops keep their sums in zmm registers, nothing on the stack, at -O2, -O3 and
 * -Os (objdump, gcc 12 and clang 14 -march=native). */
#ifndef AOTC_GEMM_AVX512_H
#define AOTC_GEMM_AVX512_H

#include <immintrin.h>

#define G512_MR 12 /* rows of a full tile */
/* Rows of B per k-block on this path, at most: the tile's B block (G512_KC x 32 floats, 32 KiB) stays in L1
 * (48 KiB) while the block's rows of A go by. 128 measured the same (within 2 %) on the shapes of
 * bench/gemm_bench.py, 256 saves a pass over C where k is 129 to 256 (ViT's 192) */
#define G512_KC 256

#define G512_ROWS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define G512_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define G512_ROWS4(X) X(0) X(1) X(2) X(3)
#define G512_ROWS3(X) X(0) X(1) X(2)
#define G512_ROWS2(X) X(0) X(1)
#define G512_ROWS1(X) X(0)

/* Row i's accumulators: u<i> (columns 0-15), v<i> (16-31, G512_NP == 2). Each macro body does what it says to
 * both; with G512_NP == 1 the v's are dead code gcc drops. */
#define G512_COUNT(i) +1
#define G512_DECL(i) __m512 u##i, v##i;
#define G512_ZERO(i) u##i = _mm512_setzero_ps(), v##i = _mm512_setzero_ps();
#define G512_LOAD(i, P)                                                                                         \
    u##i = _mm512_maskz_loadu_ps(m0, (P) + (i) * rs),                                                         \
    v##i = G512_NP == 2 ? _mm512_maskz_loadu_ps(m1, (P) + (i) * rs + 16) : u##i;
#define G512_FROM_C(i) { const ptrdiff_t rs = ldc; G512_LOAD(i, c) }
#define G512_FROM_CIN(i) G512_LOAD(i, ci) u##i = _mm512_mul_ps(u##i, vb), v##i = _mm512_mul_ps(v##i, vb);
#define G512_FROM_ONE(i) u##i = v##i = _mm512_set1_ps(beta * ci[(i) * rs]);
/* A(i0 + i, p): from three row pointers (a4 and a8 in tiles of more than 4 and 8 rows), so that the twelve
 * rows' loads need few registers: with one, gcc 12 -O2 kept some rows' offsets on the stack (2-5 % slower) */
#define G512_A(i) ((i) < 4 ? a[(i) * a_rs] : (i) < 8 ? a4[((i) - 4) * a_rs] : a8[((i) - 8) * a_rs])
#define G512_FMA(i)                                                                                             \
    {                                                                                                         \
        const __m512 a_ = _mm512_set1_ps(G512_A(i));                                                            \
        u##i = _mm512_fmadd_ps(a_, b0, u##i);                                                                 \
        if (G512_NP == 2) v##i = _mm512_fmadd_ps(a_, b1, v##i);                                                 \
    }
#define G512_SCALE(i) u##i = _mm512_mul_ps(u##i, va), v##i = _mm512_mul_ps(v##i, va);
#define G512_ADD2(i, X0, X1) u##i = _mm512_add_ps(u##i, X0), v##i = G512_NP == 2 ? _mm512_add_ps(v##i, X1) : v##i;
#define G512_ADD(i, P)                                                                                          \
    G512_ADD2(i, _mm512_maskz_loadu_ps(m0, (P) + (i) * rs), _mm512_maskz_loadu_ps(m1, (P) + (i) * rs + 16))
#define G512_ADD_C(i) { const ptrdiff_t rs = ldc; G512_ADD(i, c) }
#define G512_ADD_CIN(i)                                                                                         \
    u##i = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, ci + (i) * rs), u##i);                               \
    if (G512_NP == 2) v##i = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, ci + (i) * rs + 16), v##i);
#define G512_ADD_BIAS(i) { const __m512 e_ = _mm512_set1_ps(beta * ci[(i) * rs]); G512_ADD2(i, e_, e_) }
#define G512_ADD_RES(i) G512_ADD(i, r)
/* as the plain kernels' v < lo ? lo : v, then v > hi ? hi : v: max and min return their second operand
 * where either is NaN, so a NaN stays NaN */
#define G512_CLAMP(i)                                                                                           \
    u##i = _mm512_min_ps(vh, _mm512_max_ps(vl, u##i));                                                        \
    if (G512_NP == 2) v##i = _mm512_min_ps(vh, _mm512_max_ps(vl, v##i));
#define G512_LEAK(i)                                                                                            \
    u##i = _mm512_mask_mul_ps(u##i, _mm512_cmp_ps_mask(u##i, zero, _CMP_LT_OQ), u##i, vk);                    \
    if (G512_NP == 2) v##i = _mm512_mask_mul_ps(v##i, _mm512_cmp_ps_mask(v##i, zero, _CMP_LT_OQ), v##i, vk);
#define G512_PUT(i)                                                                                             \
    if ((i) >= skip) {                                                                                        \
        _mm512_mask_storeu_ps(c + (i) * ldc, m0, u##i);                                                       \
        if (G512_NP == 2) _mm512_mask_storeu_ps(c + (i) * ldc + 16, m1, v##i);                                  \
    }

/* A tile of ROWS rows (from i0) by NP panels (the columns j0 + 0 .. 16 NP - 1, of which those in masks m0
 * and m1 are C's): C's tile by the rules of d, finished in registers: the sums start from C, C_in or the
 * bias (d->start), then the general rule (alpha), the residual and the activation, one masked store a
 * vector. B(p, j0 + j) = b[p * b_rs + j] for j < 16, b[b_ps + p * b_rs + j - 16] past; columns out of
 * the masks are not read. Rows below `skip` are summed but not stored: a tile that ends at a block's
 * last row recomputes rows stored before (cheaper than 1- to 3-row tiles). */
#define G512_KERNEL(NAME, ROWS, NP)                                                                             \
    MK_NOINLINE static void NAME(int32_t kc, const float *AOTC_RESTRICT a, ptrdiff_t a_rs, ptrdiff_t a_cs,    \
                                 const float *AOTC_RESTRICT b, ptrdiff_t b_ps, ptrdiff_t b_rs, __mmask16 m0,  \
                                 __mmask16 m1, int32_t skip, const tile_dst *d, int32_t i0, int32_t j0,      \
                                 const float *pf) {                                                           \
        enum { G512_NP = NP, G512_R = 0 ROWS(G512_COUNT) }; /* panels, rows */                                      \
        ROWS(G512_DECL)                                                                                         \
        const ptrdiff_t ldc = d->ldc;                                                                         \
        float *const c = d->c + (ptrdiff_t)i0 * ldc + j0; /* C_in may be C */                                 \
        const float *const b_end = b + (ptrdiff_t)kc * b_rs;                                                  \
        const float beta = d->beta;                                                                           \
        const __m512 vb = _mm512_set1_ps(beta);                                                               \
        if (d->start == START_C) {                                                                            \
            ROWS(G512_FROM_C)                                                                                   \
        } else if (d->start == START_CIN) {                                                                   \
            const ptrdiff_t rs = d->ci_rs;                                                                    \
            const float *ci = d->ci + (ptrdiff_t)i0 * rs + j0;                                                \
            ROWS(G512_FROM_CIN)                                                                                 \
        } else if (d->start == START_BIAS) {                                                                  \
            const ptrdiff_t rs = d->ci_rs;                                                                    \
            const float *ci = d->ci + (ptrdiff_t)i0 * rs;                                                     \
            ROWS(G512_FROM_ONE)                                                                                 \
        } else {                                                                                              \
            ROWS(G512_ZERO)                                                                                     \
        }                                                                                                     \
        const float *a4 = a + (G512_R > 4 ? 4 * a_rs : 0), *a8 = a + (G512_R > 8 ? 8 * a_rs : 0);                 \
        if (pf != NULL) { /* the same loop, each step also prefetching a row of the next columns' B */         \
            for (; b != b_end; b += b_rs, a += a_cs, a4 += a_cs, a8 += a_cs, pf += b_rs) {                     \
                const __m512 b0 = _mm512_maskz_loadu_ps(m0, b);                                               \
                const __m512 b1 = G512_NP == 2 ? _mm512_maskz_loadu_ps(m1, b + b_ps) : b0;                      \
                _mm_prefetch((const char *)pf, _MM_HINT_T0);                                                  \
                _mm_prefetch((const char *)(pf + b_ps), _MM_HINT_T0);                                         \
                ROWS(G512_FMA)                                                                                  \
            }                                                                                                 \
        }                                                                                                     \
        for (; b != b_end; b += b_rs, a += a_cs, a4 += a_cs, a8 += a_cs) {                                    \
            const __m512 b0 = _mm512_maskz_loadu_ps(m0, b);                                                   \
            const __m512 b1 = G512_NP == 2 ? _mm512_maskz_loadu_ps(m1, b + b_ps) : b0;                          \
            ROWS(G512_FMA)                                                                                      \
        }                                                                                                     \
        if (d->start == START_ZERO && (d->alpha != 1.0f || d->accumulate || d->ci != NULL)) {                 \
            const __m512 va = _mm512_set1_ps(d->alpha); /* the general rule, after the loop */                \
            ROWS(G512_SCALE)                                                                                    \
            if (d->accumulate) {                                                                              \
                ROWS(G512_ADD_C)                                                                                \
            } else if (d->ci != NULL) {                                                                       \
                const ptrdiff_t rs = d->ci_rs;                                                                \
                const float *ci = d->ci + (ptrdiff_t)i0 * rs + (ptrdiff_t)j0 * d->ci_cs;                      \
                if (d->ci_cs == 1) {                                                                          \
                    ROWS(G512_ADD_CIN)                                                                          \
                } else {                                                                                      \
                    ROWS(G512_ADD_BIAS)                                                                         \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        if (d->res != NULL) {                                                                                 \
            const ptrdiff_t rs = d->res_rs;                                                                   \
            const float *r = d->res + (ptrdiff_t)i0 * rs + j0;                                                \
            ROWS(G512_ADD_RES)                                                                                  \
        }                                                                                                     \
        if (d->act == AOTC_ACT_CLAMP) {                                                                       \
            const __m512 vl = _mm512_set1_ps(d->lo), vh = _mm512_set1_ps(d->hi);                              \
            ROWS(G512_CLAMP)                                                                                    \
        } else if (d->act == AOTC_ACT_LEAKY) {                                                                \
            const __m512 vk = _mm512_set1_ps(d->leak), zero = _mm512_setzero_ps();                            \
            ROWS(G512_LEAK)                                                                                     \
        }                                                                                                     \
        ROWS(G512_PUT)                                                                                          \
    }

G512_KERNEL(g512_tile12x2, G512_ROWS12, 2)
G512_KERNEL(g512_tile8x2, G512_ROWS8, 2)
G512_KERNEL(g512_tile4x2, G512_ROWS4, 2)
G512_KERNEL(g512_tile3x2, G512_ROWS3, 2)
G512_KERNEL(g512_tile2x2, G512_ROWS2, 2)
G512_KERNEL(g512_tile1x2, G512_ROWS1, 2)
G512_KERNEL(g512_tile12x1, G512_ROWS12, 1)
G512_KERNEL(g512_tile8x1, G512_ROWS8, 1)
G512_KERNEL(g512_tile4x1, G512_ROWS4, 1)
G512_KERNEL(g512_tile3x1, G512_ROWS3, 1)
G512_KERNEL(g512_tile2x1, G512_ROWS2, 1)
G512_KERNEL(g512_tile1x1, G512_ROWS1, 1)

typedef void (*g512_kernel)(int32_t, const float *, ptrdiff_t, ptrdiff_t, const float *, ptrdiff_t, ptrdiff_t,
                          __mmask16, __mmask16, int32_t, const tile_dst *, int32_t, int32_t, const float *);

/* The kernel of `rows` (12, 8 or 4; 3, 2 or 1 where A has no more) rows by np (1 or 2) panels. */
static g512_kernel g512_kernel_for(int32_t rows, int32_t np) {
    static const g512_kernel k2[] = {g512_tile1x2, g512_tile2x2, g512_tile3x2, g512_tile4x2},
                           k1[] = {g512_tile1x1, g512_tile2x1, g512_tile3x1, g512_tile4x1};
    if (rows <= 4) return np == 2 ? k2[rows - 1] : k1[rows - 1];
    if (np == 2) return rows == G512_MR ? g512_tile12x2 : g512_tile8x2;
    return rows == G512_MR ? g512_tile12x1 : g512_tile8x1;
}

/* the first `cols` of 16 lanes */
static __mmask16 g512_mask(int32_t cols) {
    return cols >= 16 ? (__mmask16)0xFFFF : cols <= 0 ? (__mmask16)0 : (__mmask16)((1u << cols) - 1u);
}

/* The rows [ic, ic + mc) of the k-block [pc, pc + kc) by the columns [jr, jr + nr), nr <= 32, into C by
 * the rules of d: tiles of 12 rows, then 8 and 4; the last 1 to 3 rows as a 4-row tile ending at the
 * block's last row (the rows above it stored already are not stored again) where A has 4 rows, else (m is
 * 1 to 3) a tile of m rows. The first tile also prefetches pf's rows (and pf + b_ps's), when not NULL. */
static void g512_rows(const aotc_sgemm_params *p, const float *a, const float *bp, ptrdiff_t b_rs, int32_t pc,
                    int32_t kc, int32_t ic, int32_t mc, int32_t jr, int32_t nr, const tile_dst *d, const float *pf) {
    const int32_t np = nr > 16 ? 2 : 1;
    const __mmask16 m0 = g512_mask(nr), m1 = g512_mask(nr - 16);
    int32_t ir = ic, end = ic + mc;
    while (ir < end) {
        const int32_t left = end - ir;
        int32_t rows = left >= G512_MR ? G512_MR : left >= 8 ? 8 : left >= 4 ? 4 : 0, skip = 0, at = ir;
        if (rows == 0 && p->m >= 4) { /* 1 to 3 rows: a 4-row tile ending at the last row */
            rows = 4, at = end - 4, skip = 4 - left;
        } else if (rows == 0) {
            rows = left;
        }
        g512_kernel_for(rows, np)(kc, a + (ptrdiff_t)at * p->a_rs + (ptrdiff_t)pc * p->a_cs, p->a_rs, p->a_cs, bp,
                                p->b_ps, b_rs, m0, m1, skip, d, at, jr, ir == ic ? pf : NULL);
        ir = at + rows;
    }
}

/* The product on AVX-512F: k-blocks of at most G512_KC rows, all of one size but the last (all of k for a
 * single row tile of a packed B), blocks of A's rows of up to A_BLOCK_FLOATS, and in each the columns 32 at
 * a time (a partial last block by masks, so no copy of a plain B's edge), each times the block's rows
 * (g512_rows). A padded B's last one or two columns go as dot products along k (dot_cols_avx512), as on the
 * other path: a tile would multiply 16. */
static void sgemm_avx512(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in,
                         float *c) {
    const int32_t m = p->m, n = p->n, k = p->k;
    const int32_t blocks = k > G512_KC ? (k + G512_KC - 1) / G512_KC : 1; /* k-blocks of equal size */
    const int32_t kb = k == 0 ? 1 : m <= G512_MR && p->b_padded ? k : (k + blocks - 1) / blocks;
    int32_t pc = 0;
    do { /* k-blocks; a single empty one when k == 0 (C = beta * C_in) */
        const int32_t kc = min_i32(kb, k - pc);
        const int32_t mb = kc > 0 && A_BLOCK_FLOATS / kc > G512_MR ? A_BLOCK_FLOATS / kc / G512_MR * G512_MR : G512_MR;
        tile_dst dst;
        int32_t ic, jr;
        block_target(p, pc == 0, pc + kb >= k, c_in, c, &dst);
        for (ic = 0; ic < m; ic += mb) {
            const int32_t mc = min_i32(mb, m - ic);
            for (jr = 0; jr < n; jr += 2 * PANEL) {
                const int32_t nr = min_i32(2 * PANEL, n - jr);
                const float *bp = b + (ptrdiff_t)(jr / PANEL) * p->b_ps + (ptrdiff_t)pc * p->b_rs;
                int32_t nt = nr; /* columns for the tiles */
#if DOT_COLS > 0
                if (p->b_padded && nr % PANEL <= DOT_COLS && nr % PANEL > 0 && p->a_cs == 1 && kc > 0 && kc <= KC) {
                    /* a last panel of 1 or 2 columns (as the other path's, so that a product split into blocks
                     * of whole panels, sgemm_cols, sums each output as the whole one does) */
                    const int32_t j0 = nr / PANEL * PANEL, nd = nr - j0;
                    float cols[DOT_COLS * KC], t[MR * NR];
                    int32_t ir;
                    gather_cols(kc, bp + (ptrdiff_t)(j0 / PANEL) * p->b_ps, p->b_rs, nd, cols);
                    for (ir = ic; ir < ic + mc; ir += MR) {
                        const int32_t h = min_i32(MR, ic + mc - ir);
                        dot_cols_avx512(kc, a + (ptrdiff_t)ir * p->a_rs + pc, p->a_rs, cols, nd, h, t);
                        store_rows(&dst, ir, jr + j0, t, h, nd);
                    }
                    nt = j0;
                }
#endif
                /* the first row tile prefetches the next 32 columns' B block (its k-block's rows, both panels)
                 * where the B block will be read by more than one tile: a constant B is read once an inference
                 * and comes from L3 or memory, the hardware's prefetch a few lines ahead of each stream */
                const float *pf = jr + 2 * PANEL < n && mc > G512_MR ? bp + 2 * p->b_ps : NULL;
                if (nt > 0) g512_rows(p, a, bp, p->b_rs, pc, kc, ic, mc, jr, nt, &dst, pf);
            }
        }
        pc += kb;
    } while (pc < k);
}

#endif /* AOTC_GEMM_AVX512_H */
