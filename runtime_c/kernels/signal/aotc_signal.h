/* Signal ops: ONNX DFT, as a dense complex linear map along one axis whose weights the compiler
 * tabulates (forward, inverse, one-sided, inverse one-sided to a real signal, any dft_length). */
#ifndef AOTC_SIGNAL_H
#define AOTC_SIGNAL_H

#include "aotc_common.h"

#include <stddef.h>
#include <stdint.h>

/* x viewed as [outer][n][inner][in_c], y as [outer][k][inner][out_c]; in_c/out_c: 1 (real) or 2
 * (real, imaginary). With a = x_re + i x_im along n and W = wr + i wi ([k][m], row major, m <= n):
 *   y[j] = sum over t < m of W[j][t] * a[t]: out_c = 2 keeps both parts, out_c = 1 the real one. */
typedef struct {
    int32_t outer, n, m, inner, k;
    int32_t in_c, out_c;
    const float *wr;
    const float *wi;
} aotc_dft_params;

void aotc_dft_f32(const aotc_dft_params *p, const float *x, float *y);

#endif /* AOTC_SIGNAL_H */
