/* Pooling kernels, float32, NCHW: ONNX MaxPool, AveragePool (1-D, 2-D, 3-D),
 * GlobalMaxPool, GlobalAveragePool (any spatial rank). */
#ifndef AOTC_POOL_H
#define AOTC_POOL_H

#include "aotc_common.h"

/* A window pool over up to three spatial dims (d, h, w). 1-D and 2-D pools
 * are described with leading 1s (in = out = kernel = 1, no padding). All
 * values come from the ONNX node with auto_pad already resolved into pads. */
typedef struct {
    int32_t planes;            /* N * C: independent (n, c) planes */
    int32_t in[3];             /* input spatial dims (d, h, w) */
    int32_t out[3];            /* output spatial dims (d, h, w) */
    int32_t kernel[3];         /* ONNX kernel_shape */
    int32_t strides[3];        /* ONNX strides */
    int32_t dilations[3];      /* ONNX dilations; 1 means dense */
    int32_t pads_begin[3];     /* ONNX pads, leading side (>= 0) */
    int32_t pads_end[3];       /* ONNX pads, trailing side (>= 0); read by the average's divisor only */
    int32_t count_include_pad; /* AveragePool: 1 counts padding taps in the divisor, 0 counts input taps only */
} aotc_pool_params;

/* ONNX MaxPool: the largest input value under each window; padding never wins.
 * A window with no input under it (possible with dilations) gives -FLT_MAX,
 * as onnxruntime does. */
void aotc_maxpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);

/* ONNX AveragePool: the sum of the input values under each window divided by
 * the number of taps inside the input (count_include_pad = 0) or inside the
 * padded input (count_include_pad = 1; taps that a ceil_mode window puts past
 * the end padding are never counted). A window with nothing to count gives 0. */
void aotc_avgpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);

/* ONNX GlobalMaxPool / GlobalAveragePool: y[i] = max / mean of x[i * size .. (i + 1) * size). */
void aotc_global_maxpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);
void aotc_global_avgpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);

#endif /* AOTC_POOL_H */
