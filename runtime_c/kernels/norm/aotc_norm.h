/* Normalisation kernels, float32: ONNX BatchNormalization (inference),
 * InstanceNormalization, LayerNormalization, RMSNormalization, LRN, Softmax and
 * LogSoftmax. */
#ifndef AOTC_NORM_H
#define AOTC_NORM_H

#include "aotc_common.h"

/* ONNX BatchNormalization, inference form, as one multiply-add per element:
 * y[b, c, i] = x[b, c, i] * scale[c] + shift[c] for b < batch, c < channels,
 * i < inner, with scale = gamma / sqrt(var + epsilon), shift = beta - mean * scale
 * (computed at compile time when the parameters are constants). x and y may be
 * the same buffer. */
void aotc_batchnorm_f32(int32_t batch, int32_t channels, int32_t inner, const float *x, const float *scale,
                        const float *shift, float *y);

/* The per-channel scale and shift of aotc_batchnorm_f32 from BatchNormalization
 * parameters known only at run time. */
typedef struct {
    int32_t channels; /* C: length of every parameter vector */
    float epsilon;    /* ONNX epsilon */
} aotc_batchnorm_prepare_params;

void aotc_batchnorm_prepare_f32(const aotc_batchnorm_prepare_params *p, const float *gamma, const float *beta,
                                const float *mean, const float *var, float *AOTC_RESTRICT scale,
                                float *AOTC_RESTRICT shift);

typedef struct {
    int32_t batch;    /* N */
    int32_t channels; /* C */
    int32_t spatial;  /* product of the dims after C: the elements normalised together */
    float epsilon;    /* ONNX epsilon */
} aotc_instance_norm_params;

/* ONNX InstanceNormalization: each (n, c) plane normalised by its own mean and
 * (biased) variance, then y = scale[c] * (x - mean) / sqrt(var + epsilon) + bias[c].
 * x and y may be the same buffer. */
void aotc_instance_norm_f32(const aotc_instance_norm_params *p, const float *x, const float *scale,
                            const float *bias, float *y);

/* ONNX LayerNormalization and RMSNormalization over x viewed as [rows, n]: each
 * row (the dims from `axis` on) is normalised by its own statistics, one pass
 * over the row for them and one to write y:
 *   LayerNormalization  y = (x - mean) * inv_std_dev * scale + bias,
 *                       inv_std_dev = 1 / sqrt(variance + epsilon) (biased variance)
 *   RMSNormalization    y = x * inv_rms * scale, inv_rms = 1 / sqrt(mean(x^2) + epsilon)
 * scale (and bias) hold n values, one per element of a row (broadcast at compile
 * time); bias may be NULL. mean and inv_std_dev, one value per row, may be NULL
 * (the optional outputs nobody reads). x and y may be the same buffer.
 *
 * The statistics are sums of x - x[0] (the shift keeps float precision when the
 * mean is large beside the spread) and of its squares, kept in AOTC_NORM_LANES
 * float lanes over chunks of AOTC_NORM_CHUNK elements, the chunk totals added
 * with compensation: float arithmetic only, vectorisable, and accurate to float
 * rounding relative to the spread for rows of any length. The Mean output, when
 * read, is summed in double in a second pass (a mean near zero needs it to be
 * accurate relative to itself). The _f64stats kernels (stash_type double) sum in
 * double and write mean and inv_std_dev as double. */
#define AOTC_NORM_LANES 8
#define AOTC_NORM_CHUNK 256

typedef struct {
    int32_t rows;  /* product of the dims before axis */
    int32_t n;     /* product of the dims from axis on: the elements normalised together */
    float epsilon; /* ONNX epsilon */
} aotc_layer_norm_params;

void aotc_layer_norm_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, const float *bias,
                         float *y, float *mean, float *inv_std_dev);
void aotc_layer_norm_f64stats_f32(const aotc_layer_norm_params *p, const float *x, const float *scale,
                                  const float *bias, float *y, double *mean, double *inv_std_dev);
void aotc_rms_norm_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, float *y);

/* LayerNormalization over the middle dim of x viewed as [rows, n, inner]: each of the rows * inner
 * vectors of n elements `inner` apart is normalised by its own statistics, y = (x - mean) * inv_std_dev *
 * scale + bias with scale and bias (may be NULL) n values. A channels-first LayerNorm (ConvNeXt's
 * LayerNorm2d: Transpose to NHWC, LayerNormalization over C, Transpose back) in place of the three
 * nodes (aot/passes/channel_norm.py): the statistics of AOTC_NORM_INNER_BLOCK neighbouring positions at a
 * time, a vector along them, from the mean's pass and the pass of squares of x - mean, then a pass to
 * write y. x and y may be the same buffer. */
#define AOTC_NORM_INNER_BLOCK 32
typedef struct {
    int32_t rows;  /* product of the dims before the normalised one */
    int32_t n;     /* the normalised dim */
    int32_t inner; /* product of the dims after it: the step between a vector's elements */
    float epsilon; /* ONNX epsilon */
} aotc_layer_norm_inner_params;

void aotc_layer_norm_inner_f32(const aotc_layer_norm_inner_params *p, const float *x, const float *scale,
                               const float *bias, float *y);
void aotc_rms_norm_f64stats_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, float *y);

typedef struct {
    int32_t batch;         /* N */
    int32_t channels;      /* C */
    int32_t spatial;       /* product of the dims after C */
    int32_t before;        /* channels summed before c: floor((size - 1) / 2) */
    int32_t after;         /* channels summed after c: ceil((size - 1) / 2) */
    float alpha_over_size; /* ONNX alpha / size */
    float beta;            /* ONNX beta */
    float bias;            /* ONNX bias */
} aotc_lrn_params;

/* ONNX LRN across channels: y = x / (bias + alpha / size * sum of x^2 over
 * channels [c - before, c + after] clipped to [0, C)) ^ beta. y must not
 * overlap x. */
void aotc_lrn_f32(const aotc_lrn_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);

/* Softmax over axis n of x viewed as [outer, n, inner] (both ONNX axis
 * semantics reduce to this shape). Numerically stable: the max is subtracted
 * before exp. When inner > 1, scratch holds 2 * inner floats (per-column max
 * and sum, so the loops run along contiguous rows); otherwise it may be NULL.
 * x and y may be the same buffer. */
typedef struct {
    int32_t outer; /* product of the dims before the axis */
    int32_t n;     /* length of the softmax axis (dims from the axis on, before opset 13) */
    int32_t inner; /* product of the dims after the axis; 1 before opset 13 */
} aotc_softmax_params;

/* y = exp(x - max) / sum(exp(x - max)) */
void aotc_softmax_f32(const aotc_softmax_params *p, const float *x, float *y, float *scratch);
/* y = x - max - log(sum(exp(x - max))) */
void aotc_log_softmax_f32(const aotc_softmax_params *p, const float *x, float *y, float *scratch);
/* float64 (norm_f64.c): the same, scratch 2 * inner doubles when inner > 1 */
void aotc_softmax_f64(const aotc_softmax_params *p, const double *x, double *y, double *scratch);
void aotc_log_softmax_f64(const aotc_softmax_params *p, const double *x, double *y, double *scratch);

#endif /* AOTC_NORM_H */
