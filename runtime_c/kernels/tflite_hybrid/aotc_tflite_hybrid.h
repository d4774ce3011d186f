/* TFLite's hybrid kernels (issue 50): float32 activations, int8 weights, what the converter writes for
 * dynamic-range quantisation (Optimize.DEFAULT without a representative dataset). As LiteRT's
 * (fully_connected.cc EvalHybridDense, conv.cc EvalHybrid / EvalHybridPerChannel, depthwise_conv.cc
 * EvalHybridPerChannel), each batch of the float input is quantized to int8 at run time with its own
 * scale, the products are summed in int32 against the int8 weights kept in flash, and each sum is scaled
 * back to float:
 *
 *   quantize:  symmetric: s = max|x| / 127, q = round(x * (127 / max|x|)) in [-127, 127], offset 0;
 *              asymmetric: s = (max(0, hi) - min(0, lo)) / 255 in float, the offset TFLite's zero point nudged
 *              into [-128, 127] (in double), q = round(offset + x * (1 / s)) in [-128, 127];
 *              an input of zeros: q = 0, s = 1, offset 0
 *   acc = sum over the in-bounds taps of w * (q - offset)       (int32; a conv skips out-of-bounds taps)
 *   y   = clamp(acc * (s * w_scale[c]) + bias[c], y_min, y_max)  order 0 (FC, per-tensor conv, depthwise)
 *   y   = clamp(acc * w_scale[c] * s + bias[c], y_min, y_max)    order 1 (LiteRT's reference per-channel conv)
 *
 * round is half away from zero (TfLiteRound, std::round). A bias may be NULL. */
#ifndef AOTC_TFLITE_HYBRID_H
#define AOTC_TFLITE_HYBRID_H

#include "aotc_common.h"

typedef struct {
    int32_t batches, size;       /* x: batches x size floats, each batch quantized with its own scale */
    int32_t asymmetric;          /* 1: AsymmetricQuantizeFloats (with an offset), 0: SymmetricQuantizeFloats */
} aotc_tfl_hybrid_quantize_params;

typedef struct {
    int32_t rows, in, out;       /* q: rows x in (each row its own scale and offset), w: out x in, y: rows x out */
    const float *w_scale;        /* per output (a per-tensor scale repeated) */
    const int32_t *w_sums;       /* the sum of each row of w (the offset's share of the products) */
    float y_min, y_max;          /* the fused activation */
} aotc_tfl_hybrid_fc_params;

typedef struct {
    int32_t n, h, w, c;          /* q: N x H x W x C (each batch its own scale and offset) */
    int32_t oh, ow, oc;          /* y: N x OH x OW x OC */
    int32_t kh, kw, sh, sw, dh, dw, pad_top, pad_left;
    int32_t depth_multiplier;    /* depthwise: oc = c * depth_multiplier, w: 1 x KH x KW x OC */
    int32_t in_c;                /* conv: input channels a filter reads (c / groups), w: OC x KH x KW x in_c */
    int32_t order;               /* how the scales multiply the sum (above) */
    const float *w_scale;        /* per output channel */
    const int32_t *w_sums;       /* per output channel, the sum of its filter's weights over every tap: the
                                  * offset's share of a window wholly inside the input (the kernels' shortcut) */
    float y_min, y_max;
} aotc_tfl_hybrid_conv_params;

/* TRANSPOSE_CONV (conv params: h, w, c the input's; oh, ow, oc the output's; kh, kw, sh, sw, pad_top, pad_left; w:
 * OC x KH x KW x C), as LiteRT's HybridTransposeConv, which scatters each input element's products into the output
 * in float: y = clamp(sum over (iy, ix, ic) in that order of (float)(w * (q - offset)) * w_scale[c] * s + bias[c]).
 * Each output gathers its terms in that order, so the float sums round as LiteRT's. */
void aotc_tfl_hybrid_transpose_conv_f32(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                                        const int32_t *offset, const int8_t *w, const float *bias, float *y);
void aotc_tfl_hybrid_quantize_f32(const aotc_tfl_hybrid_quantize_params *p, const float *x, int8_t *q,
                                  float *scale, int32_t *offset);
void aotc_tfl_hybrid_fc_f32(const aotc_tfl_hybrid_fc_params *p, const int8_t *q, const float *scale,
                            const int32_t *offset, const int8_t *w, const float *bias, float *y);
void aotc_tfl_hybrid_conv_f32(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                              const int32_t *offset, const int8_t *w, const float *bias, float *y);
void aotc_tfl_hybrid_depthwise_f32(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                                   const int32_t *offset, const int8_t *w, const float *bias, float *y);

#endif /* AOTC_TFLITE_HYBRID_H */
