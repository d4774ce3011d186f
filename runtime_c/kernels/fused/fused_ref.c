/* Reference of the fused family (declared in kernels_ref.h): a fused tree's ops run one after the
 * other, each by its own elementwise kernel over whole tensors, as the graph ran before
 * aot/passes/fuse_elementwise.py fused it. */
#include "kernels_ref.h"

#include <string.h>

void aotc_fused_ref_f32(const aotc_fused_step *steps, int32_t count, size_t n, const float *const *inputs,
                        float *values, float *y) {
    int32_t s, k;
    for (s = 0; s < count; ++s) {
        const aotc_fused_step *st = &steps[s];
        float *out = s == count - 1 ? y : values + (size_t)s * n;
        const float *operand[2];
        aotc_broadcast p;
        memset(&p, 0, sizeof p);
        p.rank = 1, p.shape[0] = (int32_t)n;
        for (k = 0; k < (st->unary != NULL ? 1 : 2); ++k) { /* a tensor, or a constant broadcast (stride 0) */
            operand[k] = st->kind[k] == AOTC_FUSED_INPUT   ? inputs[st->index[k]]
                         : st->kind[k] == AOTC_FUSED_VALUE ? values + (size_t)st->index[k] * n
                                                           : &st->constant[k];
            if (k == 0) p.a_strides[0] = st->kind[k] != AOTC_FUSED_CONSTANT;
            else p.b_strides[0] = st->kind[k] != AOTC_FUSED_CONSTANT;
        }
        if (st->unary != NULL) st->unary(n, operand[0], out);
        else st->binary(&p, operand[0], operand[1], out);
    }
}
