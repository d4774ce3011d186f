/* cref: the worked-example vendor's runtime. Its kernels are separate from the host's on
 * purpose: a vendor brings its own library and sees only DLTensors at the boundary. */
#ifndef AOTC_CREF_H
#define AOTC_CREF_H

#include <stdint.h>

#include "dltensor.h"

/* Error codes a cref function returns (0 = success). */
#define AOTC_CREF_BAD_TENSOR 0x43520001 /* a DLTensor's dtype, rank or shape is not what was compiled */

typedef struct {
    int32_t m, n, k;      /* y[m][n] = alpha * a[m][k] * b + beta * c */
    int32_t trans_b;      /* b is [n][k] when 1, [k][n] when 0 */
    float alpha, beta;
    int32_t c_kind;       /* 0: no c, 1: c[n] (a row), 2: c[m][n], 3: scalar */
    int32_t relu;         /* apply max(0, .) to the result */
} aotc_cref_gemm_params;

void aotc_cref_gemm_f32(const aotc_cref_gemm_params *p, const float *a, const float *b, const float *c, float *y);

enum { AOTC_CREF_ADD, AOTC_CREF_SUB, AOTC_CREF_MUL };
/* y[i] = a[i] op b[i % b_len] (b_len == n: same shape; 1: scalar; else a row repeated). */
void aotc_cref_binary_f32(int32_t op, int32_t n, const float *a, int32_t b_len, const float *b, float *y);

enum { AOTC_CREF_RELU, AOTC_CREF_SIGMOID, AOTC_CREF_TANH };
void aotc_cref_unary_f32(int32_t op, int32_t n, const float *x, float *y);

/* 0 when t is float32 with exactly this shape. */
int32_t aotc_cref_check(const DLTensor *t, int32_t ndim, const int64_t *shape);

#endif /* AOTC_CREF_H */
