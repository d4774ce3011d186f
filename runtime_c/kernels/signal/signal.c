/* ONNX DFT as a dense complex linear map along one axis (aotc_signal.h): the weights are compile-time
 * tables, so no trigonometry runs here. Reference kernel: portable C99, no allocation, no globals;
 * O(k * m) per line, meant for the short signals of small models. */
#include "aotc_signal.h"

void aotc_dft_f32(const aotc_dft_params *p, const float *x, float *y) {
    const int64_t in_line = (int64_t)p->inner * p->in_c, out_line = (int64_t)p->inner * p->out_c;
    int32_t o, j, c, t;
    for (o = 0; o < p->outer; ++o) {
        const float *xo = x + (int64_t)o * p->n * in_line;
        float *yo = y + (int64_t)o * p->k * out_line;
        for (j = 0; j < p->k; ++j) {
            const float *wr = p->wr + (int64_t)j * p->m, *wi = p->wi + (int64_t)j * p->m;
            for (c = 0; c < p->inner; ++c) {
                float re = 0.0f, im = 0.0f;
                for (t = 0; t < p->m; ++t) {
                    const float *a = xo + (int64_t)t * in_line + (int64_t)c * p->in_c;
                    const float ar = a[0], ai = p->in_c == 2 ? a[1] : 0.0f;
                    re += wr[t] * ar - wi[t] * ai;
                    im += wi[t] * ar + wr[t] * ai;
                }
                yo[(int64_t)j * out_line + (int64_t)c * p->out_c] = re;
                if (p->out_c == 2) yo[(int64_t)j * out_line + (int64_t)c * p->out_c + 1] = im;
            }
        }
    }
}
