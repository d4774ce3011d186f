/* TFLite's integer kernels, int8, NHWC (issue 29): FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D,
 * AVERAGE_POOL_2D and MAX_POOL_2D with TFLite's fixed-point requantisation, bit-exact with its
 * reference kernels (and so with TFLM and CMSIS-NN). The compiler computes every multiplier and
 * shift (aot/frontend/tflite/quant.py); these loops only accumulate and requantise:
 *
 *   acc = bias[c] + sum (x - x_zero) * w          out-of-bounds taps add nothing
 *   y   = clamp(requant(acc, mult[c], shift[c]) + y_zero, y_min, y_max)
 *
 * requant is TFLite's MultiplyByQuantizedMultiplier, x * m * 2^(s - 31), in the rounding LiteRT's
 * reference kernels (BUILTIN_REF, the reference) use for the op, measured bit for bit:
 *   conv, depthwise: double rounding, RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2^max(s,0), m),
 *                    max(-s,0)) (its single rounding differs on ~0.1% of elements);
 *   fully connected: single rounding, (x * m + 2^(30 - s)) >> (31 - s) in 64 bits (its double rounding differs
 *                    on ~0.5% of elements). */
#ifndef AOTC_TFLITE_INT8_H
#define AOTC_TFLITE_INT8_H

#include "aotc_common.h"
#include "aotc_quant.h" /* AOTC_DSP_IL: the FC's interleaved weights, as QGemm's */

typedef struct {
    int32_t n, h, w, c;                 /* x: N x H x W x C */
    int32_t oh, ow, oc;                 /* y: N x OH x OW x OC */
    int32_t kh, kw, sh, sw, dh, dw;     /* window, strides, dilations */
    int32_t pad_top, pad_left;
    int32_t depth_multiplier;           /* depthwise: oc = c * depth_multiplier */
    int32_t x_zero, y_zero, y_min, y_max;
    const int32_t *mult, *shift;        /* per output channel */
    int32_t dsp_tile;                   /* the DSP paths' output positions a tile (CONV_2D) or run of sums
                                         * (DEPTHWISE_CONV_2D): the memory plan's; 0: their own */
    const uint32_t *dsp_wx;             /* CONV_2D's weights widened at compile time (--widened-weights), for
                                         * the DSP path: per group of 4 output channels, (k + 3) / 4 quads of
                                         * aotc_dsp_widen_weights4's 8 words (rows past k zeros); NULL: widened
                                         * at run time into the scratch */
    int32_t dsp_wx_dbl;                 /* dsp_wx's weights doubled (the fused requantisation's sums) */
    const int32_t *dsp_rq;              /* with dsp_wx_dbl (where the MAC kernel requantises): its terms at
                                         * compile time, read in place: per group of 4 output channels, 16 words
                                         * (each bias doubled, then each channel's mult, ra, right: their rq);
                                         * given only where every channel takes the DSP path's usual
                                         * requantisation (tfl_dsp_usual, which the kernel then does not check
                                         * again); NULL: built at run time a group and tile */
    const uint32_t *dsp_dw;             /* DEPTHWISE_CONV_2D's fused 3 x 3 set-up at compile time (--widened-weights;
                                         * TFL_DSP_DW_BAND, every group tfl_dsp_dw_usual's): per group of 4 channels
                                         * TFL_DSP_DW_BLOCK words, the 9 taps' weights widened and doubled (wq's
                                         * 18), the terms (mult, ra, right a channel: 12), the sums' start (the
                                         * bias doubled less 2 x_zero times the weights' sum: 4); NULL: built at
                                         * run time a group */
    int32_t dsp_usual;                  /* CONV_2D: 1 where the compiler found every channel's requantisation the
                                         * DSP path's usual one (tfl_dsp_usual, which the kernel then does not check
                                         * again a call: a loop over every output channel, ~18 cycles each on the
                                         * M33); 0: checked at run time */
    const int32_t *dsp_dwb;             /* DEPTHWISE_CONV_2D (depth multiplier 1, 3 x 3): each channel's bias less
                                         * x_zero times its 9 weights' sum at compile time, half the ring path's
                                         * sums' start, given only where every channel's is in [-2^29, 2^29), its
                                         * right shift in [1, 22] and its multiplier not negative (the ring's
                                         * set-up's tests, which it then does not make, nor the weights' sums,
                                         * a group a call); NULL: at run time */
} aotc_tfl_conv_params;

#define TFL_DSP_DW_BLOCK 34 /* dsp_dw's words a group of 4 channels */

typedef struct {
    int32_t rows, in, out;              /* x: rows x in, w: out x in, y: rows x out */
    int32_t x_zero, y_zero, y_min, y_max;
    const int32_t *mult, *shift;        /* per output channel */
    int32_t il4;                        /* w in blocks of 4 rows, each quad of in the 4 rows' 4 bytes in turn
                                         * (AOTC_DSP_IL; in and out multiples of 4) */
    int32_t kq, ob;                     /* a RAM budget's smaller scratch for the DSP path (out a multiple of 4):
                                         * x widened kq quads at a time, the sums of ob outputs (a multiple of 4)
                                         * at a time: AOTC_TFL_FC_SCRATCH_KQ(kq, ob); 0: whole rows, all outputs */
} aotc_tfl_fc_params;

typedef struct {
    int32_t n, h, w, c, oh, ow;
    int32_t kh, kw, sh, sw, pad_top, pad_left;
    int32_t y_min, y_max;               /* the fused activation; scale and zero point are the input's */
} aotc_tfl_pool_params;

typedef struct {
    int32_t rows, depth;                /* softmax over the last axis, of depth elements */
    int32_t mult, shift, diff_min;      /* beta * input scale, as TFLite's PreprocessSoftmaxScaling */
} aotc_tfl_softmax_params;

typedef struct {
    int32_t n, hw, c;                   /* x: N x (H*W) x C; y: N x C */
    int32_t x_zero, y_zero, mult, shift; /* mult, shift: x/y scale over H*W (TFLite's MEAN) */
} aotc_tfl_mean_params;

typedef struct {
    int64_t count;                      /* elements of y */
    int32_t x1_zero, x2_zero, y_zero, y_min, y_max;
    int32_t m1, s1, m2, s2, mult, shift; /* ADD/SUB: per input and out; MUL: mult, shift only */
    int32_t subtract;                   /* SUB: 1 */
    int32_t broadcast;                  /* 0: both inputs have y's shape; 1: dims/st1/st2 below */
    int32_t dims[6], st1[6], st2[6];    /* y's shape padded to 6-D; each input's element steps, 0 where broadcast */
} aotc_tfl_binary_params;

typedef struct {
    int64_t count;
    const int8_t *table;                /* 256 outputs, indexed by the input's byte ((uint8_t)x) */
} aotc_tfl_lut_params;

typedef struct {
    int64_t count;
    float scale;                        /* quantize, dequantize: the int8 side's scale */
    int32_t x_zero, y_zero, mult, shift; /* requantize: x scale / y scale as multiplier and shift */
    float y_scale;                      /* 16x8 SQRT: the output's scale (scale: the input's) */
} aotc_tfl_quantize_params;

/* scratch: AOTC_TFL_FC_SCRATCH(in, out) bytes, word-aligned, on cores with the Arm DSP extension (x
 * widened to 16-bit pairs and the outputs' sums); NULL elsewhere */
#define AOTC_TFL_FC_SCRATCH(in, out) (8 * ((in) / 4) + 4 * (out))
#define AOTC_TFL_FC_SCRATCH_KQ(kq, ob) (8 * (kq) + 4 * (ob)) /* with p->kq and p->ob */
void aotc_tfl_fc_s8(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                    uint32_t *scratch);
/* the mean of the in-bounds elements, rounded half away from zero */
void aotc_tfl_avgpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_maxpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y);
/* TFLite's reference int8 softmax (output scale 1/256, zero point -128): gemmlowp's fixed-point exp of
 * the scaled differences from the row's maximum, their sum with 12 integer bits, its reciprocal by
 * Newton-Raphson. */
/* MEAN over H and W: (sum - x_zero * H * W) requantised once (double rounding), plus y_zero */
void aotc_tfl_mean_s8(const aotc_tfl_mean_params *p, const int8_t *x, int8_t *y);
/* ADD / SUB: each input less its zero point, times 2^20, rescaled to twice the larger input scale; the
 * sum (difference) rescaled to the output; every requantisation double-rounded. scratch: on cores with
 * the DSP extension, AOTC_TFL_ADD_SCRATCH words from the memory plan for same-shape inputs of
 * AOTC_TFL_ADD_MIN elements or more (each input's rescaling tabulated by byte, and a run of sums); NULL
 * elsewhere (the plain loop then runs). */
#define AOTC_TFL_ADD_SCRATCH 768
#define AOTC_TFL_ADD_MIN 512
void aotc_tfl_add_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y,
                     uint32_t *scratch);
/* CONV_2D whose only reader is a residual ADD (aot/passes/fuse_residual.py): each conv output is
 * requantised to the conv's int8 exactly as aotc_tfl_conv_s8 does, then added to the residual element
 * exactly as aotc_tfl_add_s8 does, and the sum stored. y may be res itself: each residual element is
 * read before the sum is written over it, so the ADD's output needs no buffer of its own. */
typedef struct {
    aotc_tfl_binary_params add;         /* the ADD's (y's shape for both inputs: no broadcasting) */
    int32_t conv_x1;                    /* 1: the conv's value is the ADD's first input and res its second; 0: the
                                         * other way round */
#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
    /* The host's packed kernel (tflite_int8_packed.c): where lin_sh > 0, the compiler has checked on every pair of
     * the conv's clamped output v (y_min .. y_max of the conv) and residual byte e that the ADD's output is
     * (lin_a v + lin_b e + lin_c) >> lin_sh (arithmetic shift; no int32 overflow), clamped to the ADD's range
     * (aot/kernels/tflite_int8.py, residual_linear). 0: the ADD's own arithmetic. (Not on M-profile cores, whose
     * kernels never read it: their parameters stay as they were in flash.) */
    int32_t lin_a, lin_b, lin_c, lin_sh;
#endif
} aotc_tfl_residual_params;
/* scratch: on cores with the DSP extension, AOTC_TFL_RESIDUAL_TABLES words (the ADD's rescaled inputs
 * by byte), then CONV_2D's scratch, then (the DSP path's) a tile of its outputs, positions x oc bytes,
 * or (Helium's) its scratch for a fused ADD; aot/kernels/tflite_int8.py sizes it. NULL elsewhere: the
 * plain loops then run. */
#define AOTC_TFL_RESIDUAL_TABLES 512
/* MUL: the product of the inputs less their zero points, requantised once (double rounding) */
void aotc_tfl_mul_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
/* MAXIMUM / MINIMUM of two inputs of one scale and zero point (TFLite requantises neither) */
void aotc_tfl_max_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
void aotc_tfl_min_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
/* y = table[x]: an elementwise int8 op whose output depends on its one input only (LOGISTIC, TANH,
 * LEAKY_RELU, HARD_SWISH, RELU, RELU6, RELU_N1_TO_1), its table computed by the compiler with the
 * reference kernel's own arithmetic on all 256 inputs (aot/frontend/tflite/quant.py) */
void aotc_tfl_lut_s8(const aotc_tfl_lut_params *p, const int8_t *x, int8_t *y);
/* TRANSPOSE_CONV: w OC x KH x KW x C; y[oy][ox][oc] = requant(bias + sum over the taps that reach it of
 * (x - x_zero) * w) as TFLite's reference kernel (which scatters into an int32 buffer; gathering gives the
 * same int32 sums and needs no buffer); double rounding */
void aotc_tfl_transpose_conv_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                const int32_t *bias, int8_t *y);
/* 16x8 (int16 activations, zero point 0; int8 weights; int64 bias): the same loops with int64 sums.
 * LiteRT's reference requantises conv and depthwise with its int64 MultiplyByQuantizedMultiplier
 * (the multiplier rounded to 16 bits, one rounding: (acc * m16 + 2^(14 - s)) >> (15 - s), their
 * declarations below) and fully connected with the full 32-bit multiplier, rounded once (measured bit
 * for bit). */
void aotc_tfl_fc_s16(const aotc_tfl_fc_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                     int16_t *y);
void aotc_tfl_avgpool_s16(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_maxpool_s16(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_quantize_f32_s16(const aotc_tfl_quantize_params *p, const float *x, int16_t *y);
void aotc_tfl_dequantize_s16_f32(const aotc_tfl_quantize_params *p, const int16_t *x, float *y);
/* QUANTIZE int16 -> int16: (q - x_zero) requantised (double rounding) + y_zero, clamped */
void aotc_tfl_requantize_s16(const aotc_tfl_quantize_params *p, const int16_t *x, int16_t *y);
/* QUANTIZE float -> int8: round(x / scale) (float division, half away from zero) + y_zero, clamped */
void aotc_tfl_quantize_f32_s8(const aotc_tfl_quantize_params *p, const float *x, int8_t *y);
/* DEQUANTIZE int8 -> float: (float)((double)scale * (q - x_zero)) */
void aotc_tfl_dequantize_s8_f32(const aotc_tfl_quantize_params *p, const int8_t *x, float *y);
/* QUANTIZE int8 -> int8: (q - x_zero) requantised (double rounding) + y_zero, clamped */
void aotc_tfl_requantize_s8(const aotc_tfl_quantize_params *p, const int8_t *x, int8_t *y);
/* QUANTIZE between integer types (int8, int16, int32, and int8 <-> uint8; LiteRT's Requantize, in int32 as its, clamped to
 * y's type): LiteRT runs all but int8 -> int32, which TFLM runs with the same Requantize */
void aotc_tfl_requantize_s8_s16(const aotc_tfl_quantize_params *p, const int8_t *x, int16_t *y);
void aotc_tfl_requantize_s16_s8(const aotc_tfl_quantize_params *p, const int16_t *x, int8_t *y);
void aotc_tfl_requantize_s8_s32(const aotc_tfl_quantize_params *p, const int8_t *x, int32_t *y);
void aotc_tfl_requantize_s16_s32(const aotc_tfl_quantize_params *p, const int16_t *x, int32_t *y);
void aotc_tfl_requantize_s32_s8(const aotc_tfl_quantize_params *p, const int32_t *x, int8_t *y);
void aotc_tfl_requantize_s32_s16(const aotc_tfl_quantize_params *p, const int32_t *x, int16_t *y);
/* int8 <-> uint8 (a uint8 model output, as microWakeWord's): LiteRT's Requantize too, whose
 * same-scale fast path (an xor of 0x80 when the zero points differ by 128) it gives bit for bit */
void aotc_tfl_requantize_s8_u8(const aotc_tfl_quantize_params *p, const int8_t *x, uint8_t *y);
void aotc_tfl_requantize_u8_s8(const aotc_tfl_quantize_params *p, const uint8_t *x, int8_t *y);
void aotc_tfl_softmax_s8(const aotc_tfl_softmax_params *p, const int8_t *x, int8_t *y);
/* int8 in, int16 out (zero point -32768, scale 1/65536): the same arithmetic, 16 output bits */
void aotc_tfl_softmax_s8_s16(const aotc_tfl_softmax_params *p, const int8_t *x, int16_t *y);

/* 16x8 LOGISTIC and TANH (LiteRT's reference_integer_ops, output scale 2^-15): the input brought to the
 * table's scale, (x * mult + 2^(shift - 1)) >> shift, its magnitude interpolated linearly between the
 * 256 anchors of sigmoid(i / 24) (9 fraction bits for LOGISTIC; 8 for TANH, at 3/4 of the scale, as
 * tanh(x) = 2 sigmoid(2x) - 1), reflected for a negative input. The compiler computes mult, shift and
 * the table (aot/frontend/tflite/quant.py). */
typedef struct {
    int64_t count;
    int32_t mult, shift;
    const uint16_t *table;              /* 256 anchors, 0.16 fixed point */
} aotc_tfl_act16_params;

/* 16x8 SOFTMAX (output scale 2^-15): each difference from the row's maximum requantised onto [-10, 0]
 * (double rounding) and looked up in a 513-anchor exp table; the sum's reciprocal from a 1 / (1 + x)
 * table; both tables interpolate 128 steps between anchors. */
typedef struct {
    int32_t rows, depth, mult, shift;
    const int16_t *exp_table, *recip_table; /* 513 anchors each */
} aotc_tfl_softmax16_params;

void aotc_tfl_logistic_s16(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_tanh_s16(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_softmax_s16(const aotc_tfl_softmax16_params *p, const int16_t *x, int16_t *y);
/* 16x8 ADD and SUB (p->subtract): as int8's, with a left shift of 15 (zero points 0, int32 sums) */
void aotc_tfl_add_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
/* 16x8 MAXIMUM / MINIMUM of two inputs of one scale (zero point 0) */
void aotc_tfl_max_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
void aotc_tfl_min_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
/* 16x8 MUL: int8's product requantisation on int16 (zero points 0) */
void aotc_tfl_mul_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
/* 16x8 TRANSPOSE_CONV: int64 sums and biases, rounded as CONV_2D's (the 16-bit multiplier) */
void aotc_tfl_transpose_conv_s16(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w,
                                 const int64_t *bias, int16_t *y);
/* 16x8 MEAN over H and W: as int8's (int32 sum, double rounding) */
void aotc_tfl_mean_s16(const aotc_tfl_mean_params *p, const int16_t *x, int16_t *y);

/* The converter's integer UNIDIRECTIONAL_SEQUENCE_LSTM, LiteRT's "8x8_16" (no CIFG, peepholes, layer norm
 * or projection): each step, per gate, bias + W x and b' + R h requantised to Q3.12 (double rounding) and
 * added saturating; gemmlowp's int16 logistic (input, forget, output gates) and tanh (cell gate); the
 * cell (f c >> 15) + (i g >> cell_shift), each cast to int16, added saturating and clipped; h the
 * requantised product of the output gate and tanh of the cell. LiteRT's tanh takes 0..6 integer bits:
 * with tanh_bits < 0 (a cell scale below 2^-15) it writes nothing and the input gate is read in its
 * place, which is copied here too. x: batch x steps x n_input; w*: the four gates' rows, i f c o. */
typedef struct {
    int32_t batch, steps, n_input, n_cell;
    int32_t mult[8], shift[8];          /* input products of gates i f c o, then recurrent ones */
    int32_t hidden_mult, hidden_shift, hidden_zero, cell_shift, tanh_bits, clip;
} aotc_tfl_lstm8_params;

void aotc_tfl_lstm_s8(const aotc_tfl_lstm8_params *p, const int8_t *x, const int8_t *wx, const int8_t *wh,
                      const int32_t *bx, const int32_t *bh, const int8_t *h0, const int16_t *c0, int8_t *y,
                      int8_t *h_next, int16_t *c_next);

/* 16x8 LEAKY_RELU (zero points 0): x requantised by m1/s1 (x >= 0) or by |m2|/s2 and negated when m2 < 0
 * (alpha's), double rounding, as int8's table computes; p->count elements, y_min..y_max the int16 range */
void aotc_tfl_leaky_relu_s16(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y);

/* issue 50's int8 ops with arithmetic of their own (tflite_int8_mobile.c), on aotc_tfl_binary_params
 * (inputs broadcast as ADD's):
 * comparisons: each input less its zero point, times 2^8, requantised by its own scale (m1/s1, m2/s2:
 * TFLite's MultiplyByQuantizedMultiplierSmallerThanOneExp, double rounding), then compared; y is bool
 * (one byte, 0 or 1) */
void aotc_tfl_equal_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, uint8_t *y);
void aotc_tfl_not_equal_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, uint8_t *y);
void aotc_tfl_less_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, uint8_t *y);
void aotc_tfl_less_equal_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, uint8_t *y);
void aotc_tfl_greater_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, uint8_t *y);
void aotc_tfl_greater_equal_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, uint8_t *y);
/* the comparisons of int16 (16x8): the same arithmetic (LiteRT's ComparisonQuantized<int16_t>, left shift 8) */
void aotc_tfl_equal_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, uint8_t *y);
void aotc_tfl_not_equal_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, uint8_t *y);
void aotc_tfl_less_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, uint8_t *y);
void aotc_tfl_less_equal_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, uint8_t *y);
void aotc_tfl_greater_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, uint8_t *y);
void aotc_tfl_greater_equal_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, uint8_t *y);
/* PRELU (x1: the input, x2: alpha): x - x_zero requantised by m1/s1 where it is >= 0, else its product
 * with alpha - alpha_zero (x2_zero) by m2/s2 (double rounding); plus y_zero, clamped to y_min..y_max */
void aotc_tfl_prelu_s8(const aotc_tfl_binary_params *p, const int8_t *x, const int8_t *alpha, int8_t *y);
/* the same on 16x8's int16 x and y, alpha int8 (LiteRT's Prelu<int16_t, int8_t>) */
void aotc_tfl_prelu_s16(const aotc_tfl_binary_params *p, const int16_t *x, const int8_t *alpha, int16_t *y);
/* DIV (LiteRT's DivElementwise, int8 and int16): v1 = x1 - x1_zero over v2 = x2 - x2_zero (both negated where v2
 * < 0), by v2's reciprocal in Q0.31 (GetReciprocal: gemmlowp's Newton-Raphson 1 / (1 + x)) with v1 shifted by its
 * redundant sign bits, then requantised by mult (x1 scale / (x2 scale * y scale)) and the shift left over (double
 * rounding; a right shift past 31 rounds to 0 or -1, where LiteRT's is undefined: its x86 build differs there),
 * plus y_zero, clamped to y_min..y_max. Returns AOTC_ERR_SHAPE, writing nothing, when some x2 is its zero point
 * (LiteRT's invoke fails: CheckNonZero), else 0. */
int32_t aotc_tfl_div_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
int32_t aotc_tfl_div_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
/* quantized SUM's last step, as LiteRT's default kernel (optimized_ops::QuantizedMeanOrSum; its reference reads
 * the data as uint8): each int32 sum of the raw integers times scale (x scale / y scale) plus bias
 * (-x_zero * scale * count), in float32, rounded half away from zero, plus y_zero, clamped to y_min..y_max */
typedef struct {
    int64_t count;                      /* elements of y */
    float scale, bias;
    int32_t y_zero, y_min, y_max;
} aotc_tfl_sum_params;

void aotc_tfl_sum_requant_s8(const aotc_tfl_sum_params *p, const int32_t *x, int8_t *y);
void aotc_tfl_sum_requant_s16(const aotc_tfl_sum_params *p, const int32_t *x, int16_t *y);
/* the whole quantized SUM where the reduced axes are consecutive (or moved last): x viewed as [outer, n, inner],
 * y[o][j] the int32 sum of x[o][0..n-1][j] (exact: the compiler keeps n * 128, n * 32768 for int16, below 2^31)
 * rescaled as aotc_tfl_sum_requant's */
typedef struct {
    int32_t outer, n, inner;
    float scale, bias;
    int32_t y_zero, y_min, y_max;
} aotc_tfl_reduce_sum_params;

void aotc_tfl_reduce_sum_s8(const aotc_tfl_reduce_sum_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_reduce_sum_s16(const aotc_tfl_reduce_sum_params *p, const int16_t *x, int16_t *y);
/* int8 L2_NORMALIZATION over the last axis (LiteRT's reference_integer_ops::L2Normalization): each row's sum of
 * (x - x_zero)^2 in int32, its inverse square root by GetInvSqrtQuantizedMultiplierExp (gemmlowp's Newton-Raphson in
 * Q3.28), each x - x_zero requantised by it (double rounding) into the output's 1/128 scale, clamped to int8 */
typedef struct {
    int32_t rows, depth, x_zero;
} aotc_tfl_l2norm_params;

void aotc_tfl_l2norm_s8(const aotc_tfl_l2norm_params *p, const int8_t *x, int8_t *y);
/* REDUCE_PROD of int8 / int16 (LiteRT's reference_ops::QuantizedReduceProd) over the last axis of x [rows, n] (the
 * compiler moves the reduced axes last, in order): x0 - x_zero, then each next product with x - x_zero rescaled by
 * mult/shift (LiteRT's int64 MultiplyByQuantizedMultiplier: the multiplier rounded to 16 bits), the result rescaled
 * once more, plus y_zero, clamped to the type */
typedef struct {
    int32_t rows, n, x_zero, y_zero, mult, shift;
} aotc_tfl_prod_params;

void aotc_tfl_reduce_prod_s8(const aotc_tfl_prod_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_reduce_prod_s16(const aotc_tfl_prod_params *p, const int16_t *x, int16_t *y);
/* int8 LOG_SOFTMAX over the last axis (LiteRT's reference_integer_ops::LogSoftmax): each difference from the row's
 * maximum (those at least diff_min) scaled into Q5.26 by mult/shift, exp'd (gemmlowp's exp_on_negative_values)
 * and summed in Q12.19, the sum's log in Q5.26 (TFLite's log_x_for_x_greater_than_or_equal_to_1), each scaled
 * difference less it, rounded into the output's 16/256 scale less 127; below the adjusted diff_min (its bound
 * scaled back by reverse_mult/reverse_shift) -128 */
typedef struct {
    int32_t rows, depth, mult, shift, reverse_mult, reverse_shift, diff_min;
} aotc_tfl_log_softmax_params;

void aotc_tfl_log_softmax_s8(const aotc_tfl_log_softmax_params *p, const int8_t *x, int8_t *y);

/* issue 50's further integer ops, each LiteRT's reference kernel's arithmetic written from its definition.
 *
 * BATCH_MATMUL (tflite_int8_matmul.c): y[b][i][j] = requant(sum_k (x1(b, i, k) - x1_zero) (x2(b, k, j) - x2_zero))
 * + y_zero, clamped to y_min..y_max: int8 sums in int32, requantised with double rounding; 16x8 (int16 x1,
 * int16 or int8 x2, zero points 0) in int64 with the int64 MultiplyByQuantizedMultiplier (the multiplier
 * rounded to 16 bits). Element (i, k) of x1's matrix is at i a_row + k a_col (adj_x swaps them), (k, j) of
 * x2's at k b_row + j b_col; the batch dims broadcast by zero steps. */
typedef struct {
    int32_t batch[3];                   /* y's batch dims, padded to 3 */
    int32_t st1[3], st2[3];             /* each input's element steps along them, 0 where broadcast */
    int32_t m, k, n;                    /* y's matrices m x n, summed over k */
    int32_t a_row, a_col, b_row, b_col;
    int32_t x1_zero, x2_zero, y_zero, mult, shift, y_min, y_max;
} aotc_tfl_matmul_params;

void aotc_tfl_batch_matmul_s8(const aotc_tfl_matmul_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
void aotc_tfl_batch_matmul_s16(const aotc_tfl_matmul_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
void aotc_tfl_batch_matmul_s16_s8(const aotc_tfl_matmul_params *p, const int16_t *x1, const int8_t *x2, int16_t *y);

/* RESIZE_BILINEAR of int8 / int16 (tflite_int8_resize.c): LiteRT's ResizeBilinearInteger, the source position
 * in 10-bit fixed point (scale_h, scale_w: round(2^10 in / out), or of (in - 1) / (out - 1) with align_corners;
 * half_pixel_centers adds half a step less half a pixel), the four products summed in 20 fraction bits and
 * divided by 2^20 rounding half away from zero. The raw integers are interpolated (input and output share
 * their quantization). */
typedef struct {
    int32_t n, h, w, c, oh, ow;
    int32_t scale_h, scale_w, half_pixel;
} aotc_tfl_resize_params;

void aotc_tfl_resize_bilinear_s8(const aotc_tfl_resize_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_resize_bilinear_s16(const aotc_tfl_resize_params *p, const int16_t *x, int16_t *y);

/* SQUARED_DIFFERENCE of int8 (tflite_int8_mobile.c, aotc_tfl_binary_params broadcast as ADD's): each input
 * less its zero point times 2^7, rescaled by m1/s1, m2/s2 to twice the larger scale; the difference squared
 * in int32, requantised by mult/shift, plus y_zero, clamped (every rescaling double-rounded) */
void aotc_tfl_squared_difference_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);

/* a 16x8 elementwise op by LiteRT's interpolated table (LUTPopulate<int16_t>: 513 anchors over the int16
 * input range; EXP, LOG, GELU, RSQRT): y = t[i] + ((t[i + 1] - t[i]) (x & 127) + 64) >> 7 with i = 256 +
 * (x >> 7), the slope held in int16 as LiteRT's LUTLookup holds it (tflite_int8_elementwise.c) */
typedef struct {
    int64_t count;
    const int16_t *table;               /* 513 anchors */
} aotc_tfl_lut16_params;

void aotc_tfl_lut_s16(const aotc_tfl_lut16_params *p, const int16_t *x, int16_t *y);

/* 16x8 ABS (AbsEvalQuantized<int16_t>, zero points 0): |x| in int32, requantised by mult / shift (double rounding)
 * where mult is not 0, clamped to y_min..y_max (p->count elements) */
void aotc_tfl_abs_s16(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y);

/* 16x8 SQRT (SqrtEvalQuantized<int16_t>, zero points 0): (int)(sqrtf(scale x) / y_scale), clamped to int16, in
 * float32 (IEEE: sqrtf and the division correctly rounded, so every core gives LiteRT's); LiteRT fails on a
 * negative input, which gives 0 here (tflite_int8_elementwise.c) */
void aotc_tfl_sqrt_s16(const aotc_tfl_quantize_params *p, const int16_t *x, int16_t *y);

/* SVDF of int8 input and weights, int16 time weights and state (zero point 0), int32 bias: LiteRT's
 * EvalIntegerSVDF. The state the interpreter keeps ([batch][n_filter][n_memory]) is carried by the
 * caller: state in, state_next out (may be the same buffer). mult1/shift1: input x feature weights to
 * the state's scale; mult2/shift2: state x time weights to the output's (double rounding). LiteRT
 * requires a RELU activation and applies no clamp but int8's. */
typedef struct {
    int32_t batch, n_input, n_filter, n_memory, rank, x_zero, y_zero, mult1, shift1, mult2, shift2;
} aotc_tfl_svdf_params;

void aotc_tfl_svdf_s8(const aotc_tfl_svdf_params *p, const int8_t *x, const int8_t *wf, const int16_t *wt,
                      const int32_t *bias, const int16_t *state, int8_t *y, int16_t *state_next);

/* ---- Scratch of the M-profile paths: one formula each ---------------------------------------------
 * The DSP extension's paths (tflite_int8_dsp.h) and Helium's (tflite_int8_mve.h) take their scratch
 * from the memory plan; their blocks and limits, and the words they lay out, are defined here once:
 * the kernels place their blocks by these functions, aot/kernels/tflite_int8.py reads the #define lines
 * below (aot/kernels/c_defines.py) and sizes the plan by the same formulas, which
 * tests/kernels_c/test_scratch_facts.py holds equal to the *_scratch_bytes functions here. */
/* (TFL_DSP_ACC_WORDS: up to 32 KiB where the plan's step spares it, p->dsp_tile, so that a wide layer's weights are
 * widened for fewer tiles: IC02's 3 x 3 x 160 took 6 positions a tile at 4 KiB) */
/* (TFL_DSP_NP_MAX: CONV_2D's output positions a tile, even, where the plan gives none, p->dsp_tile 0; the plan,
 * aot/kernels/tflite_int8.py, gives up to 256 to 1 x 1 stride-1 convs: each tile widens every group's weights and
 * builds its terms again, so where the step spares the memory more positions cost fewer cycles (VWW an505 -O3
 * 9,703,790 -> 9,626,330 est. cycles, the arena the same; at 512 it grew), up to 64 to the others (at 256: IC02 on
 * the M7 +0.7 %, ResNet-8's stem +0.3 %); a #define's comment on its own line: test_scratch_facts.py reads the line
 * after it) */
#define TFL_DSP_KC 64            /* CONV_2D: quads of patch rows a block (1 KiB of widened weights) */
#define TFL_DSP_NP_MAX 256       /* CONV_2D: output positions a tile (even; above) */
#define TFL_DSP_PATCH_WORDS 4096 /* CONV_2D: the tile's patch block, at most 16 KiB */
#define TFL_DSP_ACC_WORDS 8192   /* CONV_2D: the sums of every channel when the rows take several blocks: 32 KiB */
/* The largest right shift of the conv's usual requantisation (tfl_dsp_store's, tfl_dsp_usual's; the fused kernels'
 * terms): ra = 2^(right-1) + zero 2^right is below 2^30 in size for an int8 zero point up to right = 23 (255 2^22 at
 * zero 127, 2^30 - 2^22 at -128), and |r| <= 2^30, so ra + r (less 1) fits an int32; tfl_dsp_requant_run's 22 also
 * takes uint8 zero points. At 23 IC02's stem (6 of its 40 channels at 23) takes the fused path; read by
 * aot/kernels/tflite_int8.py (which kernels a bundle compiles). */
#define TFL_DSP_CONV_RIGHT 23
#define TFL_DSP_TAPS 25          /* DEPTHWISE_CONV_2D: the largest window (5 x 5) */
#define TFL_DSP_DW_RUN 256       /* DEPTHWISE_CONV_2D: output positions a run of the 3 x 3 path (4 KiB of sums) */
#define TFL_DSP_DW_PAD 1024      /* DEPTHWISE_CONV_2D: words of the padded span of 4 channels (4 KiB) */
#define TFL_MVE_K 2304           /* Helium's CONV_2D: the most patch bytes (a 3 x 3 window over 256 channels) */
#define TFL_MVE_OC 512           /* Helium's CONV_2D: the most output channels (their weight sums: 2 KiB) */

/* CONV_2D's DSP path: quads of patch rows a block of a patch of kq quads: all of them up to TFL_DSP_KC, else the
 * fewest blocks of at most TFL_DSP_KC, balanced (IC02's 90 quads 45 + 45, not 64 + 26: the same blocks, a smaller
 * tile's patches, so more positions a tile in the scratch the plan spares, and each weight widened for fewer tiles) */
#define TFL_DSP_BLOCK_QUADS(kq) \
    ((kq) <= TFL_DSP_KC ? (kq) : ((kq) + ((kq) + TFL_DSP_KC - 1) / TFL_DSP_KC - 1) / (((kq) + TFL_DSP_KC - 1) / TFL_DSP_KC))

/* CONV_2D's DSP path: its scratch in words, the tile's patches (2 np kc words), a group of 4 channels'
 * widened weights (8 kc) and the sums (4 np per group of 4 channels when the rows take several blocks, else
 * 4 np), with *np_out = np positions a tile (below 2, or k 0: the path does not apply). Always inlined: gcc
 * then knows np's range where the conv passes it on. */
#if defined(__GNUC__) || defined(__clang__)
static inline __attribute__((always_inline)) int32_t tfl_dsp_conv_words(const aotc_tfl_conv_params *p, int32_t *np_out)
#else
static inline int32_t tfl_dsp_conv_words(const aotc_tfl_conv_params *p, int32_t *np_out)
#endif
{
    const int32_t k = p->kh * p->kw * p->c, kq = (k + 3) / 4, kc = TFL_DSP_BLOCK_QUADS(kq);
    const int32_t total = p->n * p->oh * p->ow, groups = (p->oc + 3) / 4;
    int32_t np = kc > 0 ? (TFL_DSP_PATCH_WORDS / (2 * kc)) & ~1 : 0;
    if (np > TFL_DSP_NP_MAX) np = TFL_DSP_NP_MAX;
    if (kq > kc && np * 4 * groups > TFL_DSP_ACC_WORDS) np = (TFL_DSP_ACC_WORDS / (4 * groups)) & ~1;
    if (np > ((total + 1) & ~1)) np = (total + 1) & ~1; /* no larger than the image */
    if (p->dsp_tile > 0 && np > p->dsp_tile) np = p->dsp_tile; /* the memory plan's */
    *np_out = k > 0 ? np : 0;
    return 2 * np * kc + 8 * kc + (kq > kc ? 4 * np * groups : 4 * np);
}

/* CONV_2D's Helium path: its scratch in words, the channels' weight sums (oc words), a position's patch
 * (k bytes) and, with a fused ADD (fused), a position's conv outputs (oc bytes); 0 where the path does not
 * apply (fewer than 4 output channels, more than TFL_MVE_OC, or patches over TFL_MVE_K bytes). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static int32_t tfl_mve_conv_words(const aotc_tfl_conv_params *p, int fused) {
    const int32_t k = p->kh * p->kw * p->c;
    if (p->oc < 4 || p->oc > TFL_MVE_OC || k > TFL_MVE_K) return 0;
    return p->oc + (k + 3) / 4 + (fused ? (p->oc + 3) / 4 : 0);
}

/* DEPTHWISE_CONV_2D's DSP path: the positions a run of sums holds (4 channels a word each), fewer where
 * the memory plan says (p->dsp_tile: a RAM budget's smaller scratch) ... */
static inline int32_t tfl_dsp_dw_run(const aotc_tfl_conv_params *p) {
    const int32_t run = p->oh * p->ow < TFL_DSP_DW_RUN ? p->oh * p->ow : TFL_DSP_DW_RUN;
    return p->dsp_tile > 0 && p->dsp_tile < run ? p->dsp_tile : run;
}

/* ... the rows (columns) the windows of o output rows (columns) span, at stride s, window k, dilation d ... */
#define TFL_DSP_DW_SPAN(o, s, k, d) (((o) - 1) * (s) + ((k) - 1) * (d) + 1)

/* ... and whether a 3 x 3 window copies the span of ph x pw positions, padded, after the sums: where it fits
 * TFL_DSP_DW_PAD words and a run holds an output row (macros: the kernel compiles as before) */
#define TFL_DSP_DW_PADDED(ph, pw, ow, run) ((ph) * (pw) <= TFL_DSP_DW_PAD && (ow) <= (run))

/* ... and whether a 3 x 3 window of dilation 1 and column stride 1 or 2 goes by bands (tflite_int8_depthwise.c):
 * each output row's 3 input rows of 4 channels copied, padded, column by column (3 pw words), instead; not
 * where a RAM budget shortens the run of sums (p->dsp_tile), which then takes the least scratch as before */
#define TFL_DSP_DW_BAND(p)                                                                                      \
    ((p)->kh == 3 && (p)->kw == 3 && (p)->dh == 1 && (p)->dw == 1 && (p)->sw >= 1 && (p)->sw <= 2 &&            \
     (p)->dsp_tile == 0)

/* CONV_2D's and DEPTHWISE_CONV_2D's entry points (tflite_int8_conv.c, tflite_int8_depthwise.c), apart from the
 * others: a bundle's names for them depend on the M-profile paths it compiles (runtime/aotc_symbols.h), and the
 * runtime's other files, which never call them, do not declare them (AOTC_TFL_CONV_DECLS 0, set by
 * tflite_int8_internal.h), so that those files compile to the same objects in bundles whose paths differ. */
#ifndef AOTC_TFL_CONV_DECLS
#define AOTC_TFL_CONV_DECLS 1
#endif
#if AOTC_TFL_CONV_DECLS
/* w: OC x KH x KW x C (conv) or 1 x KH x KW x OC (depthwise); bias: OC int32 or NULL. scratch: on
 * cores with the Arm DSP extension, the memory plan's block for the DSP paths (tflite_int8_dsp.h), or
 * on the M55 for Helium's CONV_2D where it takes the shape (tflite_int8_mve.h; its sizes from
 * aot/kernels/tflite_int8.py), NULL elsewhere (the plain loops then run). */
void aotc_tfl_conv_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                      int8_t *y, uint32_t *scratch);
void aotc_tfl_depthwise_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                           int8_t *y, uint32_t *scratch);
/* the conv requantised, then added to the residual (aotc_tfl_residual_params); scratch as
 * AOTC_TFL_RESIDUAL_TABLES says */
void aotc_tfl_conv_add_s8(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, const int8_t *x,
                          const int8_t *w, const int32_t *bias, const int8_t *res, int8_t *y, uint32_t *scratch);
/* 16x8 */
void aotc_tfl_conv_s16(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                       int16_t *y);
void aotc_tfl_depthwise_s16(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                            int16_t *y);
#endif

/* DEPTHWISE_CONV_2D's DSP path at a depth multiplier m above 1 (tfl_depthwise_s8_mult; column dilation 1, any window,
 * strides, row dilation, channels): an input channel's taps as 16-bit column pairs, a band of an output row's kh
 * window rows (TFL_DSP_DWM_ROW halfwords each: the columns its windows' pairs read and one pair more, an even
 * count), each pair read once for 4 of its m output channels, SMLAD on the 4 channels' weights of the pair. Its
 * positions a run of sums (an output row's at most, fewer where the plan says: tfl_dsp_dw_run) ... */
#define TFL_DSP_DWM_KQ(p) (((p)->kw + 1) / 2) /* the window's column pairs (an odd width's last with a 0 weight) */
#define TFL_DSP_DWM_ROW(p) ((((p)->ow - 1) * (p)->sw + 2 * TFL_DSP_DWM_KQ(p) + 3) & ~1)
static inline int32_t tfl_dsp_dwm_run(const aotc_tfl_conv_params *p) {
    const int32_t run = tfl_dsp_dw_run(p);
    return run < p->ow ? run : p->ow;
}

/* ... and its scratch in words: the run's sums (4 channels a position, 2 positions more), the input channel's weights
 * in blocks of 4 output channels (each the 4 channels' requantisation terms (12 words), their sums' start, then kh x
 * kq pairs x 4 channels; the last block's channels past m 0), the ring: the input rows a window spans, each twice */
static inline int64_t tfl_dsp_dwm_words(const aotc_tfl_conv_params *p) {
    const int64_t blocks = (p->depth_multiplier + 3) / 4, span = (int64_t)(p->kh - 1) * p->dh + 1;
    return 4 * ((int64_t)tfl_dsp_dwm_run(p) + 2) + blocks * (16 + 4 * (int64_t)p->kh * TFL_DSP_DWM_KQ(p)) +
           span * TFL_DSP_DWM_ROW(p);
}

/* The M-profile paths of CONV_2D and DEPTHWISE_CONV_2D a bundle compiles: every one (1), unless the bundle's kernel
 * configuration (runtime/aotc_symbols.h, which aotc_common.h includes first) leaves out those none of its model's
 * layers takes (aot/kernels/dsp_paths.py: the compiler knows each layer's shapes and requantisation), so that their
 * code is not in the library at all. A path left out never costs a result: where a layer would take it after all,
 * the dispatcher goes by one that is compiled (the band for the depthwise ring, columns and stride 2; the plain loop
 * for the plain paths), the same integers with more instructions.
 * DEPTHWISE_CONV_2D: DSP any DSP path at all (0: the plain loop, a --flash-budget level's); PRE the set-up at compile time (--widened-weights' dsp_dw); RING the ring at stride 1, SAME its
 * SAME functions; COLUMNS a layer taller than wide by columns; S2 stride 2 from x itself; PLAIN the paths of groups
 * the fused 3 x 3 paths do not take (other windows, requantisations out of SSAT's form, a RAM budget's shortened
 * run); FLOOR and SIGN the ring's and stride 2's kernels for an output zero point of -128 and for the others; MULT
 * a depth multiplier above 1 (tfl_depthwise_s8_mult; else the plain loop), MULT_WIDE its windows wider than 10
 * columns (the assembly's rows: in C).
 * CONV_2D: ROWS 1 x 1 by rows, RGB 3 channels 3 x 3; FUSED the sums requantised in the MAC kernel, SINGLE its sums
 * as they are, DBL doubled (FLOOR and SIGN: zero point -128's kernels, the others'), ODD a tile's odd last
 * position there; PLAIN the sums requantised apart (the layers FUSED does not take); RESIDUAL the fused residual
 * ADD (aotc_tfl_conv_add_s8). */
#ifndef AOTC_TFL_DW_DSP
#define AOTC_TFL_DW_DSP 1
#endif
/* Helium's kernels by family (issue 67: the M55's --flash-budget levels between them and the portable kernels,
 * aot/flash.py): MVE_FC FULLY_CONNECTED's (tfl_fc_s8_mve; 0: the DSP path's compact rows), MVE_DW the 3 x 3
 * depthwise's (tfl_depthwise_s8_mve; 0: the plain loop, or the DSP paths compiled), MVE_CONV CONV_2D's and the fused
 * ADD's conv (tfl_conv_s8_mve; 0: the DSP paths compiled, the compact one at those levels, with the scratch the
 * compiler then plans for them). 1 by default: every other bundle compiles what it did. */
#ifndef AOTC_TFL_MVE_FC
#define AOTC_TFL_MVE_FC 1
#endif
/* MVE_FC_QUAD: Helium's FULLY_CONNECTED 4 outputs a dot product (tfl_fc_s8_mve, tfl_mve_dot4q); 0: each output's dot
 * product and weight sum alone, 16 bytes a turn (tfl_mve_dot1_sum8), any number of outputs, no DSP or plain loop
 * beside it: less code than the portable kernels' loop, the M55's "mve-fc-compact" --flash-budget level (issue 67) */
#ifndef AOTC_TFL_MVE_FC_QUAD
#define AOTC_TFL_MVE_FC_QUAD 1
#endif
#ifndef AOTC_TFL_MVE_DW
#define AOTC_TFL_MVE_DW 1
#endif
/* MVE_DW_COMPACT: where MVE_DW is 0, Helium's compact depthwise (tfl_depthwise_s8_mvec: one generic loop, 8 channels a
 * vector, the M55's "mve-dw-compact" --flash-budget level); 0 too: the DSP paths compiled (the compact one) */
#ifndef AOTC_TFL_MVE_DW_COMPACT
#define AOTC_TFL_MVE_DW_COMPACT 1
#endif
#ifndef AOTC_TFL_MVE_CONV
#define AOTC_TFL_MVE_CONV 1
#endif
/* MVE_CONV_FAST: Helium's CONV_2D in its faster loops (1 x 1 convs over every position, whole groups of channels and
 * window rows in assembly loops, the usual requantisation's shorter form); 0: its general loop alone (a position's
 * patch, 4 channels a tfl_mve_dot4q, requantised by tfl_mve_requant4), a --flash-budget level's of the M55 */
#ifndef AOTC_TFL_MVE_CONV_FAST
#define AOTC_TFL_MVE_CONV_FAST 1
#endif
/* MVE_CONV_QUAD: Helium's CONV_2D's general loop 4 channels a dot product (tfl_mve_dot4q); 0: each channel's dot
 * product alone, 16 bytes a turn in 8-bit lanes (tfl_mve_dot1_8), less code for more cycles, the M55's
 * "mve-conv-single8" and "mve-conv-single" --flash-budget levels (issue 67) */
#ifndef AOTC_TFL_MVE_CONV_QUAD
#define AOTC_TFL_MVE_CONV_QUAD 1
#endif
/* Helium's 3 x 3 DEPTHWISE_CONV_2D (tfl_depthwise_s8_mve) compiled only where the DSP paths are (1), or on its own
 * (0: the --flash-budget levels that leave the DSP depthwise paths out on the M55, aot/kernels/dsp_paths.py) */
#ifndef AOTC_TFL_DW_MVE_WITH_DSP
#define AOTC_TFL_DW_MVE_WITH_DSP 1
#endif
#ifndef AOTC_TFL_DW_PRE
#define AOTC_TFL_DW_PRE 1
#endif
#ifndef AOTC_TFL_DW_RING
#define AOTC_TFL_DW_RING 1
#endif
#ifndef AOTC_TFL_DW_SAME
#define AOTC_TFL_DW_SAME 1
#endif
#ifndef AOTC_TFL_DW_COLUMNS
#define AOTC_TFL_DW_COLUMNS 1
#endif
#ifndef AOTC_TFL_DW_S2
#define AOTC_TFL_DW_S2 1
#endif
#ifndef AOTC_TFL_DW_PLAIN
#define AOTC_TFL_DW_PLAIN 1
#endif
#ifndef AOTC_TFL_DW_FLOOR
#define AOTC_TFL_DW_FLOOR 1
#endif
#ifndef AOTC_TFL_DW_SIGN
#define AOTC_TFL_DW_SIGN 1
#endif
#ifndef AOTC_TFL_DW_MULT
#define AOTC_TFL_DW_MULT 1
#endif
#ifndef AOTC_TFL_DW_MULT_WIDE
#define AOTC_TFL_DW_MULT_WIDE 1
#endif
/* COMPACT (issue 67): the compact depthwise path (tfl_depthwise_s8_compact), a --flash-budget level's, taken only
 * where DSP and MULT are left out (so with every macro 1 it is never compiled in) */
#ifndef AOTC_TFL_DW_COMPACT
#define AOTC_TFL_DW_COMPACT 1
#endif
/* DW_MULT_COMPACT (issue 67): the compact depthwise path at a depth multiplier above 1 (tfl_depthwise_s8_multc), a
 * --flash-budget level's, taken only where MULT is left out (so with every macro 1 it is never compiled in) */
#ifndef AOTC_TFL_DW_MULT_COMPACT
#define AOTC_TFL_DW_MULT_COMPACT 1
#endif
/* DW_MULTC_PAIRS (issue 67): the compact multiplier path two positions a turn (their sums of a window's column pairs
 * in one loop); 0 (the "dwm-single" --flash-budget level): one position a turn, about 0.1 KB less */
#ifndef AOTC_TFL_DW_MULTC_PAIRS
#define AOTC_TFL_DW_MULTC_PAIRS 1
#endif
/* CONV_COMPACT (issue 67): the compact conv path (tfl_conv_s8_compact), a --flash-budget level's, taken only where
 * FUSED and PLAIN are left out (so with every macro 1 it is never compiled in) */
#ifndef AOTC_TFL_CONV_COMPACT
#define AOTC_TFL_CONV_COMPACT 1
#endif
/* CONV_2X2 (issue 67): the compact conv path two positions by two output channels a turn (its 2 x 2 SMLAD kernel);
 * 0 (the "conv-small" --flash-budget level): one position at a time, its sums in C (tfl_conv_s8_small); CONV_PAIRS:
 * there two output channels a turn, 0 ("conv-smallest"): one (with CONV_COMPACT's conditions unmet never compiled in) */
#ifndef AOTC_TFL_CONV_2X2
#define AOTC_TFL_CONV_2X2 1
#endif
#ifndef AOTC_TFL_CONV_PAIRS
#define AOTC_TFL_CONV_PAIRS 1
#endif
/* DW_LOOP_SMALL (issue 67): DEPTHWISE_CONV_2D's plain loop in its smallest form on the cores with the DSP extension
 * (each tap tests its row and column); 0: each position's window clipped once, faster (a --flash-budget level's, where
 * the plain loop takes the depthwise layers) */
#ifndef AOTC_TFL_DW_LOOP_SMALL
#define AOTC_TFL_DW_LOOP_SMALL 1
#endif
/* DW_LOOP_M1 (issue 67): in the plain loop's faster form with the DSP extension (DW_LOOP_SMALL 0, the dw-plain level),
 * depth multiplier 1's 4 channels at offsets 0 to 3, not found by four divisions a window (about 36 B); 0 (the levels
 * after dw-plain, "fc-small" on, where a layer has multiplier 1): the divisions at every multiplier, the smaller form
 * (without DW_LOOP_SMALL 0 it is never compiled in) */
#ifndef AOTC_TFL_DW_LOOP_M1
#define AOTC_TFL_DW_LOOP_M1 1
#endif
/* DW_LOOP_MULT4 (issue 67): in the plain loop's faster form (DW_LOOP_SMALL 0, the dw-plain level), a path for depth
 * multipliers of 4, 8, ...: 4 output channels of one input value, loaded once a tap; left out where no layer has such a
 * multiplier (without DW_LOOP_SMALL 0 it is never compiled in) */
#ifndef AOTC_TFL_DW_LOOP_MULT4
#define AOTC_TFL_DW_LOOP_MULT4 1
#endif
/* DW_SMALL_MULT4 (issue 67): with the plain loop's smallest form (DW_LOOP_SMALL 1), DW_LOOP_MULT4's path for the layers
 * of a depth multiplier of 4, 8, ... all the same: compiled where a --ram-budget leaves such a layer no scratch for its
 * DSP path (aot/kernels/dsp_paths.py), left out elsewhere */
#ifndef AOTC_TFL_DW_SMALL_MULT4
#define AOTC_TFL_DW_SMALL_MULT4 1
#endif
/* FC_DSP (issue 67): FULLY_CONNECTED's DSP path's 4-output assembly (aotc_dsp_gemv_rows); 0 (a --flash-budget level's,
 * "fc-compact"): its compact rows instead (tfl_fc_rows_compact: two outputs a turn, a rolled SMLAD loop in C) */
#ifndef AOTC_TFL_FC_DSP
#define AOTC_TFL_FC_DSP 1
#endif
/* FC_PAIRS (issue 67): FULLY_CONNECTED two outputs a turn in the compact DSP path (FC_DSP 0) and in the portable
 * kernels' smallest loops (PORTABLE_FAST 0); 0: one a turn, the smallest (the "fc-small" --flash-budget level's DSP
 * path, no sums in scratch; the smallest portable loop where FULLY_CONNECTED does under half the model's work) */
#ifndef AOTC_TFL_FC_PAIRS
#define AOTC_TFL_FC_PAIRS 1
#endif
/* FC_SMALL and POOL_DSP (issue 67): FULLY_CONNECTED's smallest DSP path (where FC_DSP and FC_PAIRS are 0) and
 * AVERAGE_POOL_2D's DSP path (4 channels' sums a word); 0: their plain loops, the DSP extension's code left out where
 * they do little of the work (the M55's "mve-conv-single" --flash-budget level: about 1.6 KB less on KWS DS-CNN) */
#ifndef AOTC_TFL_FC_SMALL
#define AOTC_TFL_FC_SMALL 1
#endif
/* FC_BLOCKS (issue 67): FULLY_CONNECTED's DSP paths in a RAM budget's blocks (p->kq, p->ob); 0 where no layer takes
 * them (aot/kernels/dsp_paths.py): beside the whole rows' loop they cost an unbudgeted bundle cycles and flash */
#ifndef AOTC_TFL_FC_BLOCKS
#define AOTC_TFL_FC_BLOCKS 1
#endif
#ifndef AOTC_TFL_POOL_DSP
#define AOTC_TFL_POOL_DSP 1
#endif
/* PORTABLE_FAST (issue 67): the portable kernels' (AOTC_NO_INTRINSICS) faster loops: 1 x 1 convs in 2 x 2 blocks
 * (tfl_dot2x2), the requantisation's terms taken once a channel, the depthwise layers of multiplier 1 4 channels over
 * every position, FULLY_CONNECTED 4 outputs at a time; 0: the smallest loops (the "portable-small" --flash-budget
 * level, the least flash). Read by the conv's, the depthwise's and the FC's files (dsp_paths.FILE_PATHS) */
#ifndef AOTC_TFL_PORTABLE_FAST
#define AOTC_TFL_PORTABLE_FAST 1
#endif
/* PORTABLE_MVE (issue 67): on a core with Helium (__ARM_FEATURE_MVE), the portable kernels' (AOTC_NO_INTRINSICS) plain
 * conv and depthwise loops take their dot products by a few MVE intrinsics (tfl_pmve_dot4, tfl_pmve_dw4 in
 * tflite_int8_internal.h), their structure and requantisation kept (the M55's "portable-mve" --flash-budget level,
 * between Helium's kernels and plain C); 0: plain C alone (the portable levels after it). No other build reads it:
 * without Helium, or with the ISA paths (no AOTC_NO_INTRINSICS), it changes nothing */
#ifndef AOTC_TFL_PORTABLE_MVE
#define AOTC_TFL_PORTABLE_MVE 1
#endif
/* PORTABLE_MVE_RQ (with PORTABLE_MVE): those loops' outputs requantised 4 channels a vector (tfl_pmve_requant4), and
 * the conv's fused ADD (tfl_pmve_residual4); 0: one by one in C (the "portable-mve-dots" level). PORTABLE_MVE_DW: the
 * depthwise loop's by Helium; 0: the conv's alone (the "portable-mve-conv" level) */
#ifndef AOTC_TFL_PORTABLE_MVE_RQ
#define AOTC_TFL_PORTABLE_MVE_RQ 1
#endif
#ifndef AOTC_TFL_PORTABLE_MVE_DW
#define AOTC_TFL_PORTABLE_MVE_DW 1
#endif
/* PORTABLE_MVE_RQ_DW, _RQ_ADD (with PORTABLE_MVE_RQ): the depthwise loop's outputs requantised 4 channels a vector, and
 * the conv's fused ADD by vectors (tfl_pmve_residual4); 0 both: the conv's outputs alone by vectors, the depthwise's
 * one by one in C and the fused ADD by tfl_residual_run (the "portable-mve-rqconv" level) */
#ifndef AOTC_TFL_PORTABLE_MVE_RQ_DW
#define AOTC_TFL_PORTABLE_MVE_RQ_DW 1
#endif
#ifndef AOTC_TFL_PORTABLE_MVE_RQ_ADD
#define AOTC_TFL_PORTABLE_MVE_RQ_ADD 1
#endif
/* PORTABLE_MVE_S8 (with PORTABLE_MVE_RQ): the conv 4 output channels at a time over every position, its dot products of
 * x's bytes as they are (VMLADAVA.S8, 16 bytes a turn), x's zero point taken off by the weights' sums (the
 * "portable-mve-s8" level, tfl_conv_s8_pmve8); 0: the portable loop's widened dot products (tfl_pmve_dot4) */
#ifndef AOTC_TFL_PORTABLE_MVE_S8
#define AOTC_TFL_PORTABLE_MVE_S8 1
#endif
/* PORTABLE_MVE_PW, _WIN (with PORTABLE_MVE_RQ, without PORTABLE_MVE_S8): the portable conv's pointwise layers (1 x 1, stride 1, unpadded), and its
 * layers whose window rows are whole vectors (kw c a multiple of 16), 4 output channels at a time over every position
 * by dot products of x's bytes as they are (VMLADAVA.S8, 16 bytes a turn), x's zero point taken off by the weights'
 * sums (tfl_conv_s8_pmve_pw, tfl_conv_s8_pmve_win: the "portable-mve-dot8" level, each where its layers are); 0: the
 * portable loop's widened dot products (tfl_pmve_dot4) */
#ifndef AOTC_TFL_PORTABLE_MVE_PW
#define AOTC_TFL_PORTABLE_MVE_PW 1
#endif
#ifndef AOTC_TFL_PORTABLE_MVE_WIN
#define AOTC_TFL_PORTABLE_MVE_WIN 1
#endif
#ifndef AOTC_TFL_CONV_ROWS
#define AOTC_TFL_CONV_ROWS 1
#endif
#ifndef AOTC_TFL_CONV_RGB
#define AOTC_TFL_CONV_RGB 1
#endif
#ifndef AOTC_TFL_CONV_FUSED
#define AOTC_TFL_CONV_FUSED 1
#endif
#ifndef AOTC_TFL_CONV_SINGLE
#define AOTC_TFL_CONV_SINGLE 1
#endif
#ifndef AOTC_TFL_CONV_DBL
#define AOTC_TFL_CONV_DBL 1
#endif
#ifndef AOTC_TFL_CONV_FLOOR
#define AOTC_TFL_CONV_FLOOR 1
#endif
#ifndef AOTC_TFL_CONV_SIGN
#define AOTC_TFL_CONV_SIGN 1
#endif
#ifndef AOTC_TFL_CONV_ODD
#define AOTC_TFL_CONV_ODD 1
#endif
#ifndef AOTC_TFL_CONV_RESIDUAL
#define AOTC_TFL_CONV_RESIDUAL 1
#endif
#ifndef AOTC_TFL_CONV_PLAIN
#define AOTC_TFL_CONV_PLAIN 1
#endif
#ifndef AOTC_TFL_CONV_LAST
#define AOTC_TFL_CONV_LAST 1
#endif
/* whether the depthwise ring's and stride 2's kernels for p's output zero point are compiled, and which of them p
 * takes (the zero point -128's where only those are) */
#define TFL_DSP_DW_ROUNDING(p) ((p)->y_zero == -128 ? AOTC_TFL_DW_FLOOR : AOTC_TFL_DW_SIGN)
#define TFL_DSP_DW_FLOOR(p) (AOTC_TFL_DW_FLOOR && (!AOTC_TFL_DW_SIGN || (p)->y_zero == -128))
/* ... and the conv's doubled sums' (AOTC_TFL_CONV_DBL) */
#define TFL_DSP_CONV_FLOOR(p) (AOTC_TFL_CONV_FLOOR && (!AOTC_TFL_CONV_SIGN || (p)->y_zero == -128))

/* Bytes of scratch the plan gives each path, 0 where it does not take p (the plain loop then runs) */
static inline int64_t aotc_tfl_conv_s8_dsp_scratch_bytes(const aotc_tfl_conv_params *p) {
    int32_t np;
    const int32_t words = tfl_dsp_conv_words(p, &np);
    return np < 2 ? 0 : 4 * (int64_t)words;
}

static inline int64_t aotc_tfl_conv_s8_mve_scratch_bytes(const aotc_tfl_conv_params *p) {
    return 4 * (int64_t)tfl_mve_conv_words(p, 0);
}

/* the ADD's tables, the conv's scratch, then a tile of its outputs (np x oc bytes, whole words) */
static inline int64_t aotc_tfl_conv_add_s8_dsp_scratch_bytes(const aotc_tfl_conv_params *p) {
    int32_t np;
    const int32_t words = tfl_dsp_conv_words(p, &np);
    const int64_t tile = ((int64_t)(np < 2 ? 0 : np) * p->oc + 3) / 4;
    return 4 * (AOTC_TFL_RESIDUAL_TABLES + (np < 2 ? 0 : (int64_t)words) + tile);
}

/* the ADD's tables, then Helium's conv scratch with its row of outputs; 0 where the path does not apply */
static inline int64_t aotc_tfl_conv_add_s8_mve_scratch_bytes(const aotc_tfl_conv_params *p) {
    const int32_t words = tfl_mve_conv_words(p, 1);
    return words == 0 ? 0 : 4 * ((int64_t)AOTC_TFL_RESIDUAL_TABLES + words);
}

/* the sums of a run of positions' 4 channels, then the band or the padded span (depth multiplier 1,
 * channels a multiple of 4, windows up to TFL_DSP_TAPS); at a depth multiplier above 1 and column dilation 1,
 * tfl_dsp_dwm_words; else 0 */
static inline int64_t aotc_tfl_depthwise_s8_dsp_scratch_bytes(const aotc_tfl_conv_params *p) {
    const int32_t ph = TFL_DSP_DW_SPAN(p->oh, p->sh, p->kh, p->dh), pw = TFL_DSP_DW_SPAN(p->ow, p->sw, p->kw, p->dw);
    const int32_t run = tfl_dsp_dw_run(p);
    if (p->depth_multiplier > 1) return p->dw == 1 ? 4 * tfl_dsp_dwm_words(p) : 0;
    if (p->depth_multiplier != 1 || p->c % 4 != 0 || p->kh * p->kw > TFL_DSP_TAPS) return 0;
    const int32_t pad = TFL_DSP_DW_BAND(p)                                                 ? 3 * pw
                        : p->kh == 3 && p->kw == 3 && TFL_DSP_DW_PADDED(ph, pw, p->ow, run) ? ph * pw
                                                                                           : 0;
    return 4 * (4 * (int64_t)run + pad);
}

static inline int64_t aotc_tfl_fc_s8_dsp_scratch_bytes(const aotc_tfl_fc_params *p) {
    const int32_t nq = p->in / 4;
    if (p->out % 4 == 0 && ((p->kq > 0 && p->kq < nq) || (p->ob > 0 && p->ob < p->out)))
        return AOTC_TFL_FC_SCRATCH_KQ((int64_t)(p->kq > 0 && p->kq < nq ? p->kq : nq),
                                      (int64_t)(p->ob > 0 && p->ob < p->out ? p->ob : p->out));
    return AOTC_TFL_FC_SCRATCH((int64_t)p->in, (int64_t)p->out);
}

static inline int64_t aotc_tfl_add_s8_dsp_scratch_bytes(const aotc_tfl_binary_params *p) {
    return !p->broadcast && p->count >= AOTC_TFL_ADD_MIN ? 4 * (int64_t)AOTC_TFL_ADD_SCRATCH : 0;
}

/* ---- The host's packed kernels (tflite_int8_packed.c) --------------------------------------------------
 * On the host and the Linux targets CONV_2D (alone and with its residual ADD fused), DEPTHWISE_CONV_2D (depth
 * multiplier 1) and FULLY_CONNECTED of int8 with constant weights read them packed by the compiler
 * (aot/kernels/tflite_int8.py), with the zero points folded into the bias (sums modulo 2^32, as TFLite's int32):
 *   CONV_2D, FULLY_CONNECTED: wp[o / 16][q][o % 16][4] int8, q < kq = ceil(k / 4), the weights' rows (k = kh kw c,
 *     or in) in quads, 0 past k and past oc; bias[o] - (128 + x_zero) sum_k w[o][k], 0 past oc, whole blocks of 16
 *     (the patches' bytes are x + 128); a CONV_2D of dilation 1 across (tfl_pk_direct) pads each kernel row of a
 *     weights' row (kw c bytes) to whole quads instead, kq = kh tfl_pk_row_quads;
 *   DEPTHWISE_CONV_2D: wp[c / 16][tap][c % 16] int32, each (uint16_t)w, 0 past c; bias[c] - x_zero sum_tap w[tap][c],
 *     whole blocks of 16.
 * Scratch, from the memory plan: CONV_2D the span of x its windows read (tfl_pk_span_bytes), or a tile of patches
 * (kp = 4 kq bytes each, tfl_pk_conv_tile_positions of them); FULLY_CONNECTED a row of x (kp bytes);
 * DEPTHWISE_CONV_2D a band of an output row's kh input rows, 16 channels (aotc_tfl_depthwise_s8_packed_scratch_bytes). The multipliers are never INT32_MIN. */
#define TFL_PK_PATCH_BYTES 16384 /* CONV_2D: the tile of patches, about (at least 8 positions) */

static inline int32_t tfl_pk_kp(int32_t k) { return 4 * ((k + 3) / 4); }

/* CONV_2D's positions a tile: TFL_PK_PATCH_BYTES of patches in whole 8s, at least 8, at most the image */
static inline int32_t tfl_pk_conv_tile_positions(const aotc_tfl_conv_params *p) {
    const int32_t total = p->n * p->oh * p->ow;
    int32_t t = TFL_PK_PATCH_BYTES / tfl_pk_kp(p->kh * p->kw * p->c);
    t = t < 8 ? 8 : t - t % 8;
    return t < total ? t : total;
}

/* CONV_2D at dilation 1 across copies the span of x its windows read into scratch, unsigned and padded, and reads
 * each window's kernel rows there in place, as tfl_pk_row_quads(p) quads each (kw c bytes and up to 3 past them,
 * whose weights are 0: its weights' rows are packed a kernel row at a time, each padded to whole quads); other
 * CONV_2Ds gather a tile of patches */
static inline int tfl_pk_direct(const aotc_tfl_conv_params *p) { return p->dw == 1; }
static inline int32_t tfl_pk_row_quads(const aotc_tfl_conv_params *p) { return (p->kw * p->c + 3) / 4; }

/* the span's bytes (0 where none), TFL_PK_SLACK past its end (the last window's last quad reads past it; AMX
 * reads a run's last quads as a whole tile row of 64 bytes) */
#define TFL_PK_SLACK 64
static inline int64_t tfl_pk_span_bytes(const aotc_tfl_conv_params *p) {
    const int64_t ph = (int64_t)(p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1, pw = (int64_t)(p->ow - 1) * p->sw + p->kw;
    return tfl_pk_direct(p) ? p->n * ph * pw * p->c + TFL_PK_SLACK : 0;
}

/* the span, or a tile of patches */
static inline int64_t aotc_tfl_conv_s8_packed_scratch_bytes(const aotc_tfl_conv_params *p) {
    return tfl_pk_direct(p) ? tfl_pk_span_bytes(p)
                            : (int64_t)tfl_pk_conv_tile_positions(p) * tfl_pk_kp(p->kh * p->kw * p->c);
}

/* DEPTHWISE_CONV_2D's band: the columns an output row's windows span, kh rows of them, 16 bytes each */
static inline int32_t tfl_pk_dw_span(const aotc_tfl_conv_params *p) { return (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1; }

#define TFL_PK_DW_SLACK 64 /* past the band: the last window's row read as 64 bytes (4 columns) */
#define TFL_PK_DW_MAX_KH 32 /* the tallest DEPTHWISE_CONV_2D kernel the packed path takes (its band's rows) */
static inline int64_t aotc_tfl_depthwise_s8_packed_scratch_bytes(const aotc_tfl_conv_params *p) {
    return (int64_t)p->kh * tfl_pk_dw_span(p) * 16 + TFL_PK_DW_SLACK;
}

static inline int64_t aotc_tfl_fc_s8_packed_scratch_bytes(const aotc_tfl_fc_params *p) { return tfl_pk_kp(p->in); }

void aotc_tfl_conv_s8_packed(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *wp, const int32_t *bias,
                             int8_t *y, uint8_t *scratch);
void aotc_tfl_conv_add_s8_packed(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, const int8_t *x,
                                 const int8_t *wp, const int32_t *bias, const int8_t *res, int8_t *y, uint8_t *scratch);
void aotc_tfl_depthwise_s8_packed(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t *wp,
                                  const int32_t *bias, int8_t *y, uint8_t *scratch);
void aotc_tfl_fc_s8_packed(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *wp, const int32_t *bias,
                           int8_t *y, uint8_t *scratch);

#endif /* AOTC_TFLITE_INT8_H */
