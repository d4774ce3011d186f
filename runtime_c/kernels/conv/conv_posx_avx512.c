/* aotc_conv_posx_f32: the AVX-512F tiles of 8 output channels x 32 positions (conv_posx_avx512.h) as a
 * path of the implicit GEMM, on its packed W^T: 1 x 1 convs at stride 1 of at most POSX_KMAX input
 * channels (on planes past 16 x 16, or too few channels for conv_pwc_avx512.c), and one-channel stems.
 * aot/kernels/conv_avx512.py picks it; built without AVX-512F it runs the implicit GEMM
 * (paths_avx512.h). */
#include "conv_posx_avx512.h"
#include "conv_common_avx512.h" /* X86_PATH_MISSED */

void aotc_conv_posx_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                        const float *res, float *y) {
#if AOTC_X86_PATHS /* paths_avx512.h; conv_posx_avx512.h's tiles are on */
    const int pointwise = p->kernel[1] == 1 && p->kernel[2] == 1 && p->strides[1] == 1 && p->strides[2] == 1 &&
                          p->pads[1] == 0 && p->pads[2] == 0 && p->in_size[1] == p->out_size[1] &&
                          p->in_size[2] == p->out_size[2];
    if (pointwise ? p->in_nhwc == 0 && p->out_nhwc == 0 && p->in_size[0] == 1 && p->out_size[0] == 1 &&
                        p->kernel[0] == 1 && p->pads[0] == 0 && posx_pointwise(p, x, wt, bias, res, y, 1, 0)
                  : posx_stem(p, x, wt, bias, res, y) || posx_line(p, x, wt, bias, res, y))
        return;
    X86_PATH_MISSED("aotc_conv_posx_f32");
#else
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}
