/* Convolutions, float32, NCHW: ONNX Conv and ConvTranspose with 1 to 3 spatial dims,
 * groups, strides, dilations, padding and an optional bias. The products run on the
 * GEMM core (aotc_gemm.h). */
#ifndef AOTC_CONV_H
#define AOTC_CONV_H

#include "aotc_common.h"

/* One convolution, worked out by the compiler. Spatial dims are (D, H, W); a 2-D conv
 * has D = 1 everywhere, a 1-D conv D = H = 1. For ConvTranspose, "in" and "out" are
 * still the node's input and output. */
typedef struct {
    int32_t batch;        /* N */
    int32_t group;        /* ONNX group; channels split into this many independent groups */
    int32_t in_c;         /* input channels, all groups */
    int32_t out_c;        /* output channels, all groups */
    int32_t in_size[3];   /* input D, H, W */
    int32_t out_size[3];  /* output D, H, W */
    int32_t kernel[3];    /* kernel D, H, W */
    int32_t strides[3];   /* ONNX strides */
    int32_t dilations[3]; /* ONNX dilations; 1 means dense */
    int32_t pads[3];      /* ONNX pads at the start of each dim (the end pads only shape out_size) */
    int32_t kc;           /* aotc_conv_f32: patch-matrix rows (input channel x tap) per pass */
    int32_t nc;           /* aotc_conv_f32: output positions per pass; aotc_conv_transpose_f32: input
                           * positions per pass */
} aotc_conv_params;

/* ONNX Conv, general case: for each image, group and block of nc output positions,
 * the patch matrix (im2col) is built kc rows at a time in `scratch` and multiplied by
 * the group's weights, accumulating into Y (which starts as the bias).
 * scratch: kc rows of nc floats, each rounded up to an odd number of AOTC_GEMM_PANEL
 * panels (rows an odd number of cache lines apart use every L1 set). */
void aotc_conv_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias, float *y,
                   float *scratch);

/* ONNX Conv with a 1 x 1 kernel, stride 1 and no padding: per image and group,
 * Y = W * X with X read in place. work: AOTC_SGEMM_WORK_BYTES for the GEMM core. */
void aotc_conv_pointwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             float *y, float *work);

/* ONNX Conv with one input channel per group (depthwise: group == in_c, and single-
 * channel inputs): a direct loop, out_c / group outputs per input channel. */
void aotc_conv_depthwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             float *y);

/* ONNX ConvTranspose: per image, group and block of nc input positions, the GEMM
 * core computes W^T * X (one row per output channel and kernel tap) into scratch,
 * which is then added into Y at the strided positions (col2im). Y starts as the bias.
 * scratch: out_c / group * taps * nc floats, then AOTC_SGEMM_WORK_BYTES for the core. */
void aotc_conv_transpose_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             float *y, float *scratch);

#endif /* AOTC_CONV_H */
