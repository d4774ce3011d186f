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

/* aotc_maxpool_f32 in AVX-512F registers (pool_avx512.h), for the 2-D windows without dilation of at most
 * 17 columns at column stride 1 or 33 at 2 (aot/kernels/pool.py says which pool takes which): one
 * kernel per usual window, k<columns>s<column stride>p<leading pad columns>, and one for any other.
 * Built without AVX-512F each runs aotc_maxpool_f32. */
void aotc_maxpool_k3s2p1_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);
void aotc_maxpool_k3s2p0_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);
void aotc_maxpool_k2s2p0_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);
void aotc_maxpool_k3s1p1_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);
void aotc_maxpool_k3s1p0_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);
void aotc_maxpool_k2s1p0_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);
void aotc_maxpool_avx512_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);

/* aotc_maxpool_f32 on channels-last tensors: x [N, in..., C], y [N, out..., C], p->planes = N (the
 * host side of a vendor's NHWC boundary: aot/passes/push_transpose.py). */
void aotc_maxpool_nhwc_f32(const aotc_pool_params *p, int32_t channels, const float *AOTC_RESTRICT x,
                           float *AOTC_RESTRICT y);

/* ONNX MaxPool with its Indices output, as onnxruntime computes both: each window starts from
 * its first tap inside the input (in window order) and takes a later tap only if it is larger,
 * so the first of equal values wins, a leading NaN stays and a later one never wins, and a
 * window of -inf gives -inf. indices[i] is that tap's position flattened over the whole
 * N x C x spatial input: plane * (in[0] * in[1] * in[2]) + the spatial position, row major
 * (storage_order 0) or column major (storage_order 1) over the spatial_rank trailing dims.
 * Padding never wins; a window with no tap inside the input gives -FLT_MAX and counts
 * position -1 on every spatial dim. One window at a time: Indices is rarely read in
 * inference, so this is the reference loop and has no faster sibling. */
void aotc_maxpool_indices_f32(const aotc_pool_params *p, int32_t spatial_rank, int32_t storage_order,
                              const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y, int64_t *AOTC_RESTRICT indices);

/* ONNX AveragePool: the sum of the input values under each window divided by
 * the number of taps inside the input (count_include_pad = 0) or inside the
 * padded input (count_include_pad = 1; taps that a ceil_mode window puts past
 * the end padding are never counted). A window with nothing to count gives 0. */
void aotc_avgpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);

/* ONNX GlobalMaxPool / GlobalAveragePool: y[i] = max / mean of x[i * size .. (i + 1) * size). */
void aotc_global_maxpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);
void aotc_global_avgpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);

/* ONNX MaxPool on 8-bit integers (int8 and uint8 tensors of quantized models: the largest
 * integer is the largest value, the scale being positive). A window with no input under it
 * gives the type's minimum. */
void aotc_maxpool_i8(const aotc_pool_params *p, const int8_t *AOTC_RESTRICT x, int8_t *AOTC_RESTRICT y);
void aotc_maxpool_u8(const aotc_pool_params *p, const uint8_t *AOTC_RESTRICT x, uint8_t *AOTC_RESTRICT y);

#endif /* AOTC_POOL_H */
