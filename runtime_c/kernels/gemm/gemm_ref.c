/* Reference kernels of the gemm family (declared in kernels_ref.h): one output element at a
 * time, its sum over k in order, then the epilogue of aotc_sgemm_params. The optimised core
 * (gemm.c) is checked against these. */
#include "kernels_ref.h"

/* C(i, j) for every i, j by the rules of p; B(q, j) is b[j * k + q] when b_transposed (a run-time
 * n x k B^T), else read through its panels. */
static void sgemm_ref(const aotc_sgemm_params *p, const float *a, const float *b, int b_transposed,
                      const float *c_in, float *c) {
    int32_t i, j, q;
    for (i = 0; i < p->m; ++i) {
        for (j = 0; j < p->n; ++j) {
            float sum = 0.0f, v;
            for (q = 0; q < p->k; ++q) {
                const float bv = b_transposed ? b[(ptrdiff_t)j * p->k + q]
                                              : b[(ptrdiff_t)(j / AOTC_GEMM_PANEL) * p->b_ps + (ptrdiff_t)q * p->b_rs +
                                                  j % AOTC_GEMM_PANEL];
                sum += a[(ptrdiff_t)i * p->a_rs + (ptrdiff_t)q * p->a_cs] * bv;
            }
            v = p->alpha * sum;
            /* C_in(i, j) is read before C(i, j) is written: c_in may be c */
            if (c_in != NULL) v += p->beta * c_in[(ptrdiff_t)i * p->cin_rs + (ptrdiff_t)j * p->cin_cs];
            if (p->res != NULL) v += p->res[(ptrdiff_t)i * p->res_rs + j];
            c[(ptrdiff_t)i * p->ldc + j] = aotc_activate_ref(v, p->act, p->act_lo, p->act_hi, p->act_alpha);
        }
    }
}

void aotc_sgemm_ref_f32(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in, float *c) {
    sgemm_ref(p, a, b, 0, c_in, c);
}

void aotc_gemm_ref_f32(const aotc_gemm_params *p, const float *a, const float *b, const float *c, const float *res,
                       float *y) {
    aotc_sgemm_params gp = p->gemm;
    gp.res = res;
    gp.res_rs = gp.n;
    sgemm_ref(&gp, a, b, p->pack_b, c, y);
}

void aotc_matmul_ref_f32(const aotc_matmul_params *p, const float *a, const float *b, float *c) {
    const ptrdiff_t mn = (ptrdiff_t)p->gemm.m * p->gemm.n;
    int32_t t;
    for (t = 0; t < p->batch; ++t) sgemm_ref(&p->gemm, a + p->a_offsets[t], b + p->b_offsets[t], 0, NULL, c + t * mn);
}
