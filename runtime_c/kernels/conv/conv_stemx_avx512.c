/* The AVX-512F stem tiles (conv_stem_avx512.h: 16 outputs of a row x 16 output channels): for the flat
 * 3 x 3 kernel (aotc_conv_stem_avx512, weights OIHW), and as a path of the implicit GEMM on its packed
 * W^T (aotc_conv_stemx_f32): 3 x 3 and 7 x 7 convs at stride 2 on a few input channels (ResNet-18's
 * 7 x 7 3 -> 64, SqueezeNet 1.1's unpadded 3 -> 64). aot/kernels/conv_avx512.py picks it; built without
 * AVX-512F it runs the implicit GEMM (paths_avx512.h). */
#include "conv_stem_avx512.h"

int aotc_conv_stem_avx512(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                       float *y, int packed) {
#if AOTC_X86_PATHS
    return stemx(p, x, w, bias, res, y, packed);
#else
    (void)p, (void)x, (void)w, (void)bias, (void)res, (void)y, (void)packed;
    return 0;
#endif
}

void aotc_conv_stemx_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                         const float *res, float *y) {
#if AOTC_X86_PATHS
    if (stemx(p, x, wt, bias, res, y, 1)) return;
    X86_PATH_MISSED("aotc_conv_stemx_f32");
#else
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}
