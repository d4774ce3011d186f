/* Reference kernel of the signal family (declared in kernels_ref.h): the DFT as its tabulated
 * complex linear map, one output element at a time, in double. */
#include "kernels_ref.h"

void aotc_dft_ref_f32(const aotc_dft_params *p, const float *x, float *y) {
    int32_t o, j, c, t;
    for (o = 0; o < p->outer; ++o) {
        for (j = 0; j < p->k; ++j) {
            for (c = 0; c < p->inner; ++c) {
                double re = 0.0, im = 0.0;
                float *out = y + (((ptrdiff_t)o * p->k + j) * p->inner + c) * p->out_c;
                for (t = 0; t < p->m; ++t) { /* (wr + i wi) (ar + i ai) */
                    const float *a = x + (((ptrdiff_t)o * p->n + t) * p->inner + c) * p->in_c;
                    const double wr = p->wr[(ptrdiff_t)j * p->m + t], wi = p->wi[(ptrdiff_t)j * p->m + t];
                    const double ar = a[0], ai = p->in_c == 2 ? a[1] : 0.0;
                    re += wr * ar - wi * ai;
                    im += wr * ai + wi * ar;
                }
                out[0] = (float)re;
                if (p->out_c == 2) out[1] = (float)im;
            }
        }
    }
}
