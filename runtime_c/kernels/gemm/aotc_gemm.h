/* Matrix products, float32: a cache-blocked single-precision GEMM core (also used
 * by the conv kernels), ONNX Gemm and ONNX MatMul (batched, with broadcasting). */
#ifndef AOTC_GEMM_H
#define AOTC_GEMM_H

#include "aotc_common.h"

/* B matrices are read in panels of AOTC_GEMM_PANEL columns: column j of B lives
 * in panel j / AOTC_GEMM_PANEL. A plain row-major B is the special case
 * b_ps = AOTC_GEMM_PANEL, b_rs = ldb; a packed B (constant weights packed at compile
 * time, im2col output) stores each panel as k rows of AOTC_GEMM_PANEL floats,
 * zero-padded past column n. */
#define AOTC_GEMM_PANEL 16

/* The register tile of the GEMM core (and of aotc_conv_implicit_f32): AOTC_GEMM_MR rows of A
 * times AOTC_GEMM_NR columns of B, NR even and dividing AOTC_GEMM_PANEL,
 * MR 4 or 6; the MR x NR accumulators must fit the vector registers. 6 x 16: 12 AVX or 24
 * NEON registers; 6 x 8: 12 SSE registers; 4 x 4: 16 scalar FPU registers. Override both
 * with -DAOTC_GEMM_MR=.. -DAOTC_GEMM_NR=.. for other targets. With AVX-512F the GEMM core itself
 * takes tiles of 12 x 32 (two panels: gemm_avx512.h); this tile stays the conv kernels'. */
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

/* Rows of B (the k dimension) the core takes at a time: a k-block of a B panel
 * (AOTC_GEMM_KC x AOTC_GEMM_PANEL floats, 16 KiB) stays in L1 while it is used. */
#define AOTC_GEMM_KC 256

/* C = alpha * A * B + beta * C_in, with A m x k, B k x n, C m x n.
 * Operands are described by strides, so transposed and broadcast forms cost nothing. */
typedef struct {
    int32_t m;        /* rows of A and C */
    int32_t n;        /* columns of B and C */
    int32_t k;        /* columns of A, rows of B: the sum runs over k */
    int32_t a_rs;     /* A(i, p) = a[i * a_rs + p * a_cs]: row-major A has (k, 1), transposed (1, m) */
    int32_t a_cs;
    int32_t b_rs;     /* B(p, j) = b[(j / PANEL) * b_ps + p * b_rs + j % PANEL]: step between rows */
    int32_t b_ps;     /* step between panels: PANEL for a plain row-major B, k * PANEL when packed */
    int32_t b_padded; /* 1: B is packed and zero-padded, so its last panel has PANEL readable columns */
    int32_t ldc;      /* C(i, j) = c[i * ldc + j] */
    int32_t cin_rs;   /* C_in(i, j) = c_in[i * cin_rs + j * cin_cs]; 0 broadcasts: a bias */
    int32_t cin_cs;   /* row is (0, 1), a per-row bias (1, 0), a full matrix (ldc, 1) */
    float alpha;      /* scales A * B */
    float beta;       /* scales C_in; unused when c_in is NULL */
    /* The epilogue, applied as each finished tile is written (no extra pass over C): */
    const float *res; /* a residual added once (after alpha * A * B + beta * C_in), R(i, j) =
                       * res[i * res_rs + j], or NULL; the callers set it at run time */
    int32_t res_rs;
    int32_t act;      /* AOTC_ACT_*: applied last, after the residual */
    float act_lo;     /* AOTC_ACT_CLAMP: C = min(max(C, act_lo), act_hi) (Relu: 0, INFINITY) */
    float act_hi;
    float act_alpha;  /* AOTC_ACT_LEAKY: C = C < 0 ? act_alpha * C : C */
} aotc_sgemm_params;

/* Activations the GEMM and conv kernels fuse into their output stores. */
#define AOTC_ACT_NONE 0
#define AOTC_ACT_CLAMP 1
#define AOTC_ACT_LEAKY 2

/* Applies activation `act` (AOTC_ACT_*) to x[0, n) in place. */
void aotc_activate_f32(float *x, ptrdiff_t n, int32_t act, float lo, float hi, float alpha);

/* Bytes of `work` that aotc_sgemm_f32 wants when B is plain (not padded) and n is not a
 * multiple of AOTC_GEMM_PANEL: the last, partial panel is copied there, zero-padded. */
#define AOTC_SGEMM_WORK_BYTES (AOTC_GEMM_KC * AOTC_GEMM_PANEL * sizeof(float))
/* The most of it a product over k rows of B reads: its copy of a panel is min(k, AOTC_GEMM_KC) rows
 * (aot/kernels/gemm.py's work_bytes gives the kernels this much, where the step can spare it). */
static inline int64_t aotc_sgemm_work_bytes(int32_t k) {
    return (int64_t)(k < AOTC_GEMM_KC ? k : AOTC_GEMM_KC) * AOTC_GEMM_PANEL * (int64_t)sizeof(float);
}

/* The GEMM core: C = alpha * A * B (+ beta * C_in when c_in is not NULL).
 * c_in may be c itself (accumulate into C); otherwise it must not overlap c.
 * work: AOTC_SGEMM_WORK_BYTES of scratch, or NULL (a slower path handles the last panel). */
void aotc_sgemm_f32(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in,
                    float *c, float *work);

/* ONNX Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast to m x n (all in `gemm`),
 * then + res (an m x n residual, or NULL) and the activation in `gemm` (fused Add / Relu).
 * A constant B arrives packed (the compiler transposed it if transB). A B computed at
 * run time with transB = 1 is stored n x k; pack_b = 1 packs it into `work` first
 * (k x n rounded up to whole panels, zero-padded). Otherwise `work` is the core's. */
typedef struct {
    aotc_sgemm_params gemm; /* the product; with pack_b, its B is the packed copy */
    int32_t pack_b;         /* 1: B is a run-time n x k matrix to pack into work */
} aotc_gemm_params;

void aotc_gemm_f32(const aotc_gemm_params *p, const float *a, const float *b, const float *c, const float *res,
                   float *y, float *work);

/* ONNX MatMul with batch dims: for each output matrix t < batch,
 *   C[t] = A[t] * B[t] with A[t] = a + a_offsets[t], B[t] = b + b_offsets[t], C[t] = c + t * m * n.
 * The offsets (in floats) carry numpy broadcasting of the batch dims; the compiler folds
 * batches into rows of A where it can, so this is only used for true batched products. */
typedef struct {
    aotc_sgemm_params gemm;    /* one product (alpha = 1, no C_in) */
    int32_t batch;             /* matrices in the output */
    const int32_t *a_offsets;  /* batch entries: start of A[t] in a */
    const int32_t *b_offsets;  /* batch entries: start of B[t] in b */
} aotc_matmul_params;

void aotc_matmul_f32(const aotc_matmul_params *p, const float *a, const float *b, float *c, float *work);

/* float64 (gemm_f64.c): C = alpha * A * B (+ beta * C_in when c_in is not NULL), every operand by
 * strides, B's too (B(p, j) = b[p * b_rs + j * b_cs]: a transposed B costs nothing); no packing, no
 * scratch. c must not overlap a, b or c_in. ONNX Gemm calls it directly, MatMul through aotc_matmul_f64. */
typedef struct {
    int32_t m, n, k;
    int32_t a_rs, a_cs;     /* A(i, p) = a[i * a_rs + p * a_cs] */
    int32_t b_rs, b_cs;     /* B(p, j) = b[p * b_rs + j * b_cs] */
    int32_t ldc;            /* C(i, j) = c[i * ldc + j] */
    int32_t cin_rs, cin_cs; /* C_in(i, j) = c_in[i * cin_rs + j * cin_cs]; 0 broadcasts */
    double alpha, beta;
} aotc_dgemm_params;

void aotc_dgemm_f64(const aotc_dgemm_params *p, const double *a, const double *b, const double *c_in, double *c);

/* ONNX MatMul on float64: C[t] = A[t] * B[t] for t < batch, as aotc_matmul_f32 (offsets in doubles). */
typedef struct {
    aotc_dgemm_params gemm;
    int32_t batch;
    const int32_t *a_offsets;
    const int32_t *b_offsets;
} aotc_dmatmul_params;

void aotc_matmul_f64(const aotc_dmatmul_params *p, const double *a, const double *b, double *c);

#endif /* AOTC_GEMM_H */
