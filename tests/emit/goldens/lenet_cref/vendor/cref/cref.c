/* cref runtime: plain C99 kernels for the ops the cref vendor takes. */
#include "aotc_cref.h"

#include <math.h>

void aotc_cref_gemm_f32(const aotc_cref_gemm_params *p, const float *a, const float *b, const float *c, float *y) {
    int32_t i, j, k;
    for (i = 0; i < p->m; ++i) {
        for (j = 0; j < p->n; ++j) {
            float acc = 0.0f, v;
            for (k = 0; k < p->k; ++k) {
                const float bv = p->trans_b ? b[(int64_t)j * p->k + k] : b[(int64_t)k * p->n + j];
                acc += a[(int64_t)i * p->k + k] * bv;
            }
            v = p->alpha * acc;
            if (p->c_kind == 1) v += p->beta * c[j];
            if (p->c_kind == 2) v += p->beta * c[(int64_t)i * p->n + j];
            if (p->c_kind == 3) v += p->beta * c[0];
            y[(int64_t)i * p->n + j] = (p->relu && v < 0.0f) ? 0.0f : v;
        }
    }
}

void aotc_cref_binary_f32(int32_t op, int32_t n, const float *a, int32_t b_len, const float *b, float *y) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        const float x0 = a[i], x1 = b[i % b_len];
        y[i] = op == AOTC_CREF_ADD ? x0 + x1 : op == AOTC_CREF_SUB ? x0 - x1 : x0 * x1;
    }
}

void aotc_cref_unary_f32(int32_t op, int32_t n, const float *x, float *y) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = op == AOTC_CREF_RELU ? (v > 0.0f ? v : 0.0f) : op == AOTC_CREF_SIGMOID ? 1.0f / (1.0f + expf(-v))
                                                                                         : tanhf(v);
    }
}

int32_t aotc_cref_check(const DLTensor *t, int32_t ndim, const int64_t *shape) {
    int32_t d;
    if (t == 0 || t->data == 0 || t->ndim != ndim || t->dtype.code != kDLFloat || t->dtype.bits != 32 ||
        t->dtype.lanes != 1 || (t->strides != 0))
        return AOTC_CREF_BAD_TENSOR;
    for (d = 0; d < ndim; ++d)
        if (t->shape[d] != shape[d]) return AOTC_CREF_BAD_TENSOR;
    return 0;
}
