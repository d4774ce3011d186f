/* ONNX Gemm and MatMul, float32, and the GEMM core shared with the conv kernels.
 *
 * The core computes C = alpha * A * B (+ beta * C_in) in blocks: AOTC_GEMM_KC rows of B
 * at a time (a B panel block stays in L1), up to 192 KiB of rows of A at a time (they stay
 * in L2), and a register tile of MR x NR outputs in the innermost kernel. The kernel
 * is plain C written so that gcc -O3 keeps the tile in vector registers (checked for
 * x86-64 SSE2 and AVX2+FMA, and aarch64); no intrinsics. No allocation, no globals. */
#include "aotc_gemm.h"

#include <math.h>
#include <string.h>

/* Register tile: MR rows of A times NR columns of B, NR dividing AOTC_GEMM_PANEL, MR 4
 * or 6; the MR x NR accumulators must fit the vector registers. 6 x 16: 12 AVX or 24
 * NEON registers; 6 x 8: 12 SSE registers; 4 x 4: 16 scalar FPU registers. Override both
 * with -DAOTC_GEMM_MR=.. -DAOTC_GEMM_NR=.. for other targets. */
#ifndef AOTC_GEMM_MR
#if defined(__AVX__) || defined(__aarch64__)
#define AOTC_GEMM_MR 6
#define AOTC_GEMM_NR 16
#elif defined(__x86_64__) || defined(_M_X64)
#define AOTC_GEMM_MR 6
#define AOTC_GEMM_NR 8
#else
#define AOTC_GEMM_MR 4
#define AOTC_GEMM_NR 4
#endif
#endif
#define MR AOTC_GEMM_MR
#define NR AOTC_GEMM_NR
#define KC AOTC_GEMM_KC
#define PANEL AOTC_GEMM_PANEL
#define A_BLOCK_FLOATS (48 * 1024) /* rows of A per block: as many as fit 192 KiB (in L2) */

#if AOTC_GEMM_PANEL % AOTC_GEMM_NR != 0
#error "AOTC_GEMM_NR must divide AOTC_GEMM_PANEL"
#endif
#if AOTC_GEMM_MR != 4 && AOTC_GEMM_MR != 6
#error "AOTC_GEMM_MR must be 4 or 6"
#endif

/* a * b + c, fused where the target has a fast fma (FP_FAST_FMAF is C99) */
#if defined(FP_FAST_FMAF)
#define MADD(a, b, c) fmaf((a), (b), (c))
#else
#define MADD(a, b, c) ((a) * (b) + (c))
#endif

#if MR == 6
#define FOR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#else
#define FOR_ROWS(X) X(0) X(1) X(2) X(3)
#endif

/* The kernels stay separate functions: inlined into the blocking loops (gcc does that
 * for -fPIC builds) they lose their registers to the loops' variables. */
#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

/* Where a finished tile goes: C = alpha * tile (+ beta * C_in), or C += alpha * tile. */
typedef struct {
    float *c;           /* the tile's first element in C */
    ptrdiff_t ldc;      /* C's row step */
    float alpha, beta;  /* as in aotc_sgemm_params */
    int accumulate;     /* a later k-block: add to C */
    const float *ci;    /* C_in at the tile's first element, or NULL */
    ptrdiff_t ci_rs;    /* C_in's row step */
    int32_t ci_cs;      /* 1: C_in has a row of values; 0: one value per row (a bias) */
} tile_dst;

/* t[i * NR + j] = the sum over p < kc of A(i, p) * B(p, j), a full MR x NR tile.
 * A(i, p) = a[i * a_rs + p * a_cs]; B(p, j) = b[p * b_rs + j], NR readable columns. */
NOINLINE static void kernel_tile(int32_t kc, const float *AOTC_RESTRICT a, int32_t a_rs, int32_t a_cs,
                                 const float *AOTC_RESTRICT b, int32_t b_rs, float *AOTC_RESTRICT t) {
#define DECLARE(i) float c##i[NR];
    FOR_ROWS(DECLARE)
#undef DECLARE
    const float *const b_end = b + (ptrdiff_t)kc * b_rs;
    int32_t j;
    for (j = 0; j < NR; ++j) {
#define ZERO(i) c##i[j] = 0.0f;
        FOR_ROWS(ZERO)
#undef ZERO
    }
    /* One loop per row, vectorised along the row. The k loop steps a pointer by a
     * run-time stride until it reaches its end: compilers cannot count its trips, so
     * they vectorise the rows instead of k (an in-order reduction over k, much slower). */
    for (; b != b_end; b += b_rs, a += a_cs) {
#define ROW(i)                                                          \
        {                                                               \
            const float av = a[(i) * a_rs];                             \
            for (j = 0; j < NR; ++j) c##i[j] = MADD(av, b[j], c##i[j]); \
        }
        FOR_ROWS(ROW)
#undef ROW
    }
#define STORE(i) memcpy(t + (i) * NR, c##i, sizeof c##i);
    FOR_ROWS(STORE)
#undef STORE
}

/* A full MR x NR tile t into C by the rules of dst (constant sizes: unrolled and
 * vectorised; a separate function so that the kernel's loop keeps its registers). */
NOINLINE static void store_full_tile(const tile_dst *dst, const float *AOTC_RESTRICT t) {
    const float alpha = dst->alpha, beta = dst->beta;
    int32_t i, j;
    for (i = 0; i < MR; ++i, t += NR) {
        float *cr = dst->c + i * dst->ldc; /* not restrict: C_in may be C */
        if (dst->accumulate) {
            for (j = 0; j < NR; ++j) cr[j] += alpha * t[j];
        } else if (dst->ci == NULL) {
            for (j = 0; j < NR; ++j) cr[j] = alpha * t[j];
        } else if (dst->ci_cs == 1) {
            const float *cir = dst->ci + i * dst->ci_rs;
            for (j = 0; j < NR; ++j) cr[j] = alpha * t[j] + beta * cir[j];
        } else {
            const float bias = beta * dst->ci[i * dst->ci_rs];
            for (j = 0; j < NR; ++j) cr[j] = alpha * t[j] + bias;
        }
    }
}

/* One row of the tile (the rows past the last multiple of MR): t[j] = sum A(0, p) B(p, j).
 * Two partial sums over even and odd p keep two independent chains in flight; the k loop
 * is written as in kernel_tile. */
NOINLINE static void kernel_row(int32_t kc, const float *AOTC_RESTRICT a, int32_t a_cs,
                                const float *AOTC_RESTRICT b, int32_t b_rs, float *AOTC_RESTRICT t) {
    const float *const b_end = b + (ptrdiff_t)(kc / 2 * 2) * b_rs;
    float c0[NR], c1[NR];
    int32_t j;
    for (j = 0; j < NR; ++j) c0[j] = c1[j] = 0.0f;
    for (; b != b_end; b += 2 * b_rs, a += 2 * a_cs) {
        const float a0 = a[0], a1 = a[a_cs];
        for (j = 0; j < NR; ++j) c0[j] = MADD(a0, b[j], c0[j]);
        for (j = 0; j < NR; ++j) c1[j] = MADD(a1, b[b_rs + j], c1[j]);
    }
    if (kc % 2) {
        const float a0 = a[0];
        for (j = 0; j < NR; ++j) c0[j] = MADD(a0, b[j], c0[j]);
    }
    for (j = 0; j < NR; ++j) t[j] = c0[j] + c1[j];
}

/* Any mr x nr tile, B with only nr readable columns (no scratch to pad it): plain loops. */
static void kernel_generic(int32_t kc, int32_t mr, int32_t nr, const float *a, int32_t a_rs, int32_t a_cs,
                           const float *b, int32_t b_rs, float *t) {
    int32_t i, j, p;
    for (i = 0; i < mr; ++i) {
        for (j = 0; j < nr; ++j) {
            float s = 0.0f;
            for (p = 0; p < kc; ++p) s = MADD(a[i * a_rs + p * a_cs], b[p * b_rs + j], s);
            t[i * NR + j] = s;
        }
    }
}

/* mr rows of n values of tile t into C at cp: C = alpha * t, plus beta * C_in (row ci,
 * or its first value broadcast when ci_cs == 0), or C += alpha * t when accumulating. */
static void store_rows(float *cp, ptrdiff_t ldc, const float *t, int32_t mr, int32_t n, float alpha, int accumulate,
                       const float *ci, ptrdiff_t ci_rs, int32_t ci_cs, float beta) {
    int32_t i, j;
    for (i = 0; i < mr; ++i, cp += ldc, t += NR) {
        if (accumulate) {
            for (j = 0; j < n; ++j) cp[j] += alpha * t[j];
        } else if (ci == NULL) {
            for (j = 0; j < n; ++j) cp[j] = alpha * t[j];
        } else if (ci_cs == 1) {
            for (j = 0; j < n; ++j) cp[j] = alpha * t[j] + beta * ci[j];
            ci += ci_rs;
        } else {
            const float bias = beta * ci[0]; /* a per-row bias */
            for (j = 0; j < n; ++j) cp[j] = alpha * t[j] + bias;
            ci += ci_rs;
        }
    }
}

/* Writes the mr x nr corner of tile t to C at (i0, j0). The first k-block sets
 * C = alpha * t (+ beta * C_in); later ones add alpha * t. c_in may be c itself. */
static void store_tile(const aotc_sgemm_params *p, const float *t, int32_t mr, int32_t nr, int32_t i0,
                       int32_t j0, int first, const float *c_in, float *c) {
    float *cp = c + (ptrdiff_t)i0 * p->ldc + j0;
    const float *ci = first && c_in != NULL ? c_in + (ptrdiff_t)i0 * p->cin_rs + (ptrdiff_t)j0 * p->cin_cs : NULL;
    if (nr == NR) { /* a constant width: the compiler unrolls and vectorises the rows */
        store_rows(cp, p->ldc, t, mr, NR, p->alpha, !first, ci, p->cin_rs, p->cin_cs, p->beta);
    } else {
        store_rows(cp, p->ldc, t, mr, nr, p->alpha, !first, ci, p->cin_rs, p->cin_cs, p->beta);
    }
}

void aotc_sgemm_f32(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in,
                    float *c, float *work) {
    const int32_t m = p->m, n = p->n, k = p->k;
    /* k-blocks keep a B block in L1 for the row tiles that share it; a single row tile
     * (a matrix-vector product) streams B once, best in one pass */
    const int32_t kb = m <= MR && p->b_padded && k > 0 ? k : KC;
    int32_t pc = 0;
    do { /* k-blocks; a single empty one when k == 0 (C = beta * C_in) */
        const int32_t kc = min_i32(kb, k - pc);
        const int first = pc == 0;
        const int32_t mb = kc > 0 && A_BLOCK_FLOATS / kc > MR ? A_BLOCK_FLOATS / kc / MR * MR : MR;
        int32_t ic, jr, ir;
        for (ic = 0; ic < m; ic += mb) {
            const int32_t mc = min_i32(mb, m - ic);
            for (jr = 0; jr < n; jr += NR) {
                const int32_t nr = min_i32(NR, n - jr);
                const float *bp = b + (ptrdiff_t)(jr / PANEL) * p->b_ps + (ptrdiff_t)pc * p->b_rs + jr % PANEL;
                int32_t b_rs = p->b_rs;
                int readable = nr == NR || p->b_padded;
                if (!p->b_padded && work != NULL && (nr < NR || mc > MR)) {
                    /* a plain B used by several row tiles (or partial): copy this kc x NR
                     * block, zero-padded past n, so the kernel reads it contiguously
                     * (rows far apart in B would cost TLB and cache misses) */
                    int32_t q, j;
                    for (q = 0; q < kc; ++q) {
                        for (j = 0; j < NR; ++j) work[q * NR + j] = j < nr ? bp[(ptrdiff_t)q * b_rs + j] : 0.0f;
                    }
                    bp = work;
                    b_rs = NR;
                    readable = 1;
                }
                for (ir = ic; ir < ic + mc; ir += MR) {
                    float t[MR * NR];
                    const int32_t mr = min_i32(MR, ic + mc - ir);
                    const float *ap = a + (ptrdiff_t)ir * p->a_rs + (ptrdiff_t)pc * p->a_cs;
                    const float *tile = t;
                    if (!readable) {
                        kernel_generic(kc, mr, nr, ap, p->a_rs, p->a_cs, bp, b_rs, t);
                    } else if (mr == MR && nr == NR) {
                        tile_dst dst;
                        dst.c = c + (ptrdiff_t)ir * p->ldc + jr;
                        dst.ldc = p->ldc;
                        dst.alpha = p->alpha;
                        dst.beta = p->beta;
                        dst.accumulate = !first;
                        dst.ci = first && c_in != NULL ? c_in + (ptrdiff_t)ir * p->cin_rs + (ptrdiff_t)jr * p->cin_cs : NULL;
                        dst.ci_rs = p->cin_rs;
                        dst.ci_cs = p->cin_cs;
                        kernel_tile(kc, ap, p->a_rs, p->a_cs, bp, b_rs, t);
                        store_full_tile(&dst, t);
                        continue;
                    } else if (mr == MR) {
                        kernel_tile(kc, ap, p->a_rs, p->a_cs, bp, b_rs, t);
                    } else if (mc >= MR) {
                        /* the last rows of the block: a full tile ending at the last row (it
                         * recomputes rows already stored, faster than single rows) */
                        kernel_tile(kc, ap - (ptrdiff_t)(MR - mr) * p->a_rs, p->a_rs, p->a_cs, bp, b_rs, t);
                        tile = t + (MR - mr) * NR;
                    } else {
                        int32_t r;
                        for (r = 0; r < mr; ++r) kernel_row(kc, ap + (ptrdiff_t)r * p->a_rs, p->a_cs, bp, b_rs, t + r * NR);
                    }
                    store_tile(p, tile, mr, nr, ir, jr, first, c_in, c);
                }
            }
        }
        pc += kb;
    } while (pc < k);
}

/* packed <- the k x n matrix B(r, j) = b[j * k + r] (B stored transposed, n x k), in
 * panels of k x PANEL floats, zero-padded past column n. */
static void pack_transposed_b(int32_t k, int32_t n, const float *b, float *packed) {
    int32_t q, r, jj;
    for (q = 0; q * PANEL < n; ++q) {
        float *dst = packed + (ptrdiff_t)q * k * PANEL;
        for (jj = 0; jj < PANEL; ++jj) {
            const int32_t j = q * PANEL + jj;
            if (j < n) {
                const float *src = b + (ptrdiff_t)j * k;
                for (r = 0; r < k; ++r) dst[r * PANEL + jj] = src[r];
            } else {
                for (r = 0; r < k; ++r) dst[r * PANEL + jj] = 0.0f;
            }
        }
    }
}

void aotc_gemm_f32(const aotc_gemm_params *p, const float *a, const float *b, const float *c, float *y,
                   float *work) {
    if (p->pack_b) {
        pack_transposed_b(p->gemm.k, p->gemm.n, b, work);
        aotc_sgemm_f32(&p->gemm, a, work, c, y, NULL);
    } else {
        aotc_sgemm_f32(&p->gemm, a, b, c, y, work);
    }
}

void aotc_matmul_f32(const aotc_matmul_params *p, const float *a, const float *b, float *c, float *work) {
    const ptrdiff_t mn = (ptrdiff_t)p->gemm.m * p->gemm.n;
    int32_t t;
    for (t = 0; t < p->batch; ++t) {
        aotc_sgemm_f32(&p->gemm, a + p->a_offsets[t], b + p->b_offsets[t], NULL, c + t * mn, work);
    }
}
