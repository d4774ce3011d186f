/* ONNX Gemm and MatMul on float64: a plain blocked GEMM in double (no packing, no scratch, no threads).
 *
 * Where B's rows are contiguous (b_cs = 1: a plain or compile-time transposed B) a tile of DGEMM_MR rows
 * of C by up to DGEMM_NB columns is summed in place, one row of B at a time (i-k-j: the inner loop runs along
 * contiguous rows of B and C, so it vectorises, and each row of B read serves DGEMM_MR rows of C); the tile
 * (4 x 256 doubles, 8 KiB) stays in L1. A B read by columns (a run-time B with transB = 1) is summed as dot
 * products along its contiguous columns instead. alpha and beta * C_in are applied once a row is complete.
 * Portable C99, no allocation, no globals: slow on a core without a double FPU, but exact as a double sum. */
#include "aotc_gemm.h"

#define DGEMM_MR 4   /* rows of C per tile */
#define DGEMM_NB 256 /* columns of C per tile */

static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

/* C(i0 .. i0 + rows, j0 .. j0 + nb) = A * B over all k, B's rows contiguous (b_cs = 1). */
static void tile_rows_of_b(const aotc_dgemm_params *p, const double *a, const double *b, double *c, int32_t i0,
                           int32_t rows, int32_t j0, int32_t nb) {
    double *cr[DGEMM_MR];
    const double *ar[DGEMM_MR];
    int32_t r, q, j;
    for (r = 0; r < DGEMM_MR; ++r) { /* rows past `rows` repeat the last one: summed again, same values */
        const int32_t i = i0 + min_i32(r, rows - 1);
        cr[r] = c + (ptrdiff_t)i * p->ldc + j0;
        ar[r] = a + (ptrdiff_t)i * p->a_rs;
    }
    for (r = 0; r < rows; ++r)
        for (j = 0; j < nb; ++j) cr[r][j] = 0.0;
    if (rows < DGEMM_MR) { /* a short tile: one row at a time, so no row is written twice */
        for (r = 0; r < rows; ++r) {
            for (q = 0; q < p->k; ++q) {
                const double *AOTC_RESTRICT br = b + (ptrdiff_t)q * p->b_rs + j0;
                const double av = ar[r][(ptrdiff_t)q * p->a_cs];
                double *AOTC_RESTRICT c0 = cr[r];
                for (j = 0; j < nb; ++j) c0[j] += av * br[j];
            }
        }
        return;
    }
    for (q = 0; q < p->k; ++q) {
        const double *AOTC_RESTRICT br = b + (ptrdiff_t)q * p->b_rs + j0;
        const ptrdiff_t ao = (ptrdiff_t)q * p->a_cs;
        const double a0 = ar[0][ao], a1 = ar[1][ao], a2 = ar[2][ao], a3 = ar[3][ao];
        double *AOTC_RESTRICT c0 = cr[0], *AOTC_RESTRICT c1 = cr[1], *AOTC_RESTRICT c2 = cr[2],
               *AOTC_RESTRICT c3 = cr[3];
        for (j = 0; j < nb; ++j) {
            const double v = br[j];
            c0[j] += a0 * v;
            c1[j] += a1 * v;
            c2[j] += a2 * v;
            c3[j] += a3 * v;
        }
    }
}

/* Row i of C = A * B as dot products, B read along its columns (b_rs = 1 when transB). */
static void row_of_dots(const aotc_dgemm_params *p, const double *a, const double *b, double *c, int32_t i) {
    const double *ai = a + (ptrdiff_t)i * p->a_rs;
    double *ci = c + (ptrdiff_t)i * p->ldc;
    int32_t j, q;
    for (j = 0; j < p->n; ++j) {
        const double *bj = b + (ptrdiff_t)j * p->b_cs;
        double s = 0.0;
        for (q = 0; q < p->k; ++q) s += ai[(ptrdiff_t)q * p->a_cs] * bj[(ptrdiff_t)q * p->b_rs];
        ci[j] = s;
    }
}

void aotc_dgemm_f64(const aotc_dgemm_params *p, const double *a, const double *b, const double *c_in, double *c) {
    int32_t i, j, j0;
    if (p->b_cs == 1) {
        for (j0 = 0; j0 < p->n; j0 += DGEMM_NB)
            for (i = 0; i < p->m; i += DGEMM_MR)
                tile_rows_of_b(p, a, b, c, i, min_i32(DGEMM_MR, p->m - i), j0, min_i32(DGEMM_NB, p->n - j0));
    } else {
        for (i = 0; i < p->m; ++i) row_of_dots(p, a, b, c, i);
    }
    if (p->alpha == 1.0 && c_in == NULL) return;
    for (i = 0; i < p->m; ++i) {
        double *ci = c + (ptrdiff_t)i * p->ldc;
        if (c_in == NULL) {
            for (j = 0; j < p->n; ++j) ci[j] *= p->alpha;
        } else {
            const double *ri = c_in + (ptrdiff_t)i * p->cin_rs;
            for (j = 0; j < p->n; ++j) ci[j] = p->alpha * ci[j] + p->beta * ri[(ptrdiff_t)j * p->cin_cs];
        }
    }
}

void aotc_matmul_f64(const aotc_dmatmul_params *p, const double *a, const double *b, double *c) {
    const ptrdiff_t step = (ptrdiff_t)p->gemm.m * p->gemm.n;
    int32_t t;
    for (t = 0; t < p->batch; ++t) aotc_dgemm_f64(&p->gemm, a + p->a_offsets[t], b + p->b_offsets[t], NULL, c + t * step);
}
