/* Reference kernels, one file per family (<family>_ref.c), each declared in a section below: conv, gemm
 * and pool, then reduce, signal, resize, norm, attention, recurrent, elementwise, fused, shape, index,
 * detect, loss, random, philox, quant, tflite_int8 and tflite_hybrid. Each is the plain loop of the definition over the same params
 * struct as the kernels it stands for: portable C99, simple on purpose, slow, no scratch, no allocation
 * (recurrent_ref.c's states excepted), no globals. Any target can run them.
 *
 * They are not shipped in bundles (aot/emit_c/runtime_files.py): the C tests in tests/kernels_c/
 * compare every kernel with them over random shapes. */
#ifndef AOTC_KERNELS_REF_H
#define AOTC_KERNELS_REF_H

#include "aotc_conv.h"
#include "aotc_gemm.h"
#include "aotc_pool.h"

/* The fused activation (AOTC_ACT_*) of aotc_conv_params and aotc_sgemm_params on one value. */
static inline float aotc_activate_ref(float v, int32_t act, float lo, float hi, float alpha) {
    if (act == AOTC_ACT_CLAMP) return v < lo ? lo : v > hi ? hi : v;
    if (act == AOTC_ACT_LEAKY) return v < 0.0f ? alpha * v : v;
    return v;
}

/* ONNX Conv (any aotc_conv_params: 1-D to 3-D, groups, strides, dilations, pads):
 * y = act(bias + conv(x, w) + res), w in ONNX layout [out_c][in_c / group][KD][KH][KW];
 * bias and res may be NULL. kc and nc are ignored. What every aotc_conv_*_f32 computes. */
void aotc_conv_ref_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                       const float *res, float *y);

/* ONNX ConvTranspose: y = bias + the sum, over input positions and kernel taps, of x times w
 * placed at output position in * stride - pad + tap * dilation (positions outside the output
 * are dropped), w in ONNX layout [in_c][out_c / group][KD][KH][KW]; bias may be NULL. No
 * fused epilogue (act, kc, nc are ignored), as aotc_conv_transpose_f32. */
void aotc_conv_transpose_ref_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                 float *y);

/* C = act(alpha * A * B + beta * C_in + res) by the rules of aotc_sgemm_params (B read
 * through its panels, c_in NULL or C itself allowed), as aotc_sgemm_f32; no work memory. */
void aotc_sgemm_ref_f32(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in, float *c);

/* ONNX Gemm as aotc_gemm_f32 (pack_b: B is the run-time n x k matrix, read transposed). */
void aotc_gemm_ref_f32(const aotc_gemm_params *p, const float *a, const float *b, const float *c, const float *res,
                       float *y);

/* ONNX MatMul with batch dims as aotc_matmul_f32. */
void aotc_matmul_ref_f32(const aotc_matmul_params *p, const float *a, const float *b, float *c);

/* ONNX MaxPool and AveragePool as aotc_maxpool_f32 / aotc_avgpool_f32: each output is its
 * window's max (-FLT_MAX when no tap lies inside the input) or mean (divided by the taps
 * inside the input, or with count_include_pad inside the padded input; 0 when none). */
void aotc_maxpool_ref_f32(const aotc_pool_params *p, const float *x, float *y);
void aotc_avgpool_ref_f32(const aotc_pool_params *p, const float *x, float *y);

/* ---- reduce (reduce_ref.c) ----------------------------------------------------------------
 * ONNX Reduce* as aotc_reduce_*: each output the fold of the input elements whose kept indices
 * are its own, taken output by output, summed in double (float64: in double, in input order);
 * the empty fold's value for a zero-size reduction. No scratch (log_sum_exp's is the kernel's). */
#include "aotc_reduce.h"

#define AOTC_DECLARE_REDUCE_REF(OP) \
    void aotc_reduce_##OP##_ref_f32(const aotc_reduce_params *p, const float *x, float *y); \
    void aotc_reduce_##OP##_ref_f64(const aotc_reduce_params *p, const double *x, double *y);
AOTC_DECLARE_REDUCE_REF(sum)
AOTC_DECLARE_REDUCE_REF(mean)
AOTC_DECLARE_REDUCE_REF(max)
AOTC_DECLARE_REDUCE_REF(min)
AOTC_DECLARE_REDUCE_REF(prod)
AOTC_DECLARE_REDUCE_REF(l1)
AOTC_DECLARE_REDUCE_REF(l2)
AOTC_DECLARE_REDUCE_REF(sum_square)
AOTC_DECLARE_REDUCE_REF(log_sum)
AOTC_DECLARE_REDUCE_REF(log_sum_exp)
#undef AOTC_DECLARE_REDUCE_REF
/* ONNX Det by cofactor expansion along the first row, in double (n up to 7): a different algorithm
 * from the kernel's elimination. */
void aotc_det_ref_f32(int32_t batch, int32_t n, const float *x, float *y);
/* Swish, then each plane's mean of its result, the sums in double */
void aotc_swish_mean_ref_f32(int64_t planes, int32_t hw, const float *x, float *y, float *mean, float alpha);

/* ---- signal (signal_ref.c) ----------------------------------------------------------------
 * The DFT's complex linear map as aotc_dft_f32: y[j] = sum over t < m of W[j][t] * a[t] along n,
 * summed in double. */
#include "aotc_signal.h"

void aotc_dft_ref_f32(const aotc_dft_params *p, const float *x, float *y);

/* ---- tflm_signal (tflm_signal_ref.c) ---------------------------------------------------------
 * TFLM's signal library ops from their definitions, another way than the kernels: the real FFT as
 * kissfft's recursion (up to AOTC_TFLM_FFT_REF_MAX complex points, on the stack), the square root by
 * bisection with TFLM's rounding rule, the log in 64-bit arithmetic. */
#include "aotc_tflm_signal.h"

#define AOTC_TFLM_FFT_REF_MAX 1024
void aotc_tflm_window_ref_i16(int32_t rows, int32_t n, int32_t shift, const int16_t *x, const int16_t *w, int16_t *y);
void aotc_tflm_fft_auto_scale_ref_i16(int32_t n, const int16_t *x, int16_t *y, int32_t *scale_bits);
void aotc_tflm_rfft_ref_i16(const aotc_tflm_rfft_params *p, const int16_t *x, int16_t *y);
void aotc_tflm_irfft_ref_i16(const aotc_tflm_rfft_params *p, const int16_t *x, int16_t *y);
void aotc_tflm_energy_ref_i16(int32_t n, int32_t start, int32_t end, const int16_t *x, uint32_t *y);
void aotc_tflm_filter_bank_ref(const aotc_tflm_filter_bank_params *p, const uint32_t *x, uint64_t *y);
void aotc_tflm_filter_bank_sqrt_ref(int32_t n, const uint64_t *x, const int32_t *scale_bits, uint32_t *y);
void aotc_tflm_spectral_subtraction_ref(const aotc_tflm_spectral_subtraction_params *p, const uint32_t *x,
                                        const uint32_t *noise, uint32_t *y, uint32_t *noise_next);
void aotc_tflm_pcan_ref(int32_t n, int32_t snr_shift, const uint32_t *x, const uint32_t *noise, const int16_t *lut,
                        uint32_t *y);
void aotc_tflm_filter_bank_log_ref(int32_t n, int32_t output_scale, int32_t correction_bits, const uint16_t *log_lut,
                                   const uint32_t *x, int16_t *y);
/* the streaming ops through TFLM's own circular buffer (read and write positions that wrap; up to 4096
 * samples a buffer), loaded from the state row and stored back */
void aotc_tflm_framer_ref_i16(const aotc_tflm_framer_params *p, const int16_t *x, const int16_t *state, int16_t *y,
                              uint8_t *valid, int16_t *state_next);
void aotc_tflm_stacker_ref_i16(const aotc_tflm_stacker_params *p, const int16_t *x, const int16_t *state, int16_t *y,
                               uint8_t *valid, int16_t *state_next);
void aotc_tflm_overlap_add_ref_i16(const aotc_tflm_overlap_add_params *p, const int16_t *x, const int16_t *state,
                                   int16_t *y, int16_t *state_next);

/* ---- resize (resize_ref.c) ----------------------------------------------------------------
 * Resize as its kernels: nearest, each output the x element its per-dim table entries sum to; the
 * blend, each output the sum of its taps' weights times sources, in double; GridSample from the
 * ONNX definition (aotc_resize.h's choices: coordinates unnormalised in float as the op's float32
 * arithmetic, then padding, taps and Keys' cubic weights in double). */
#include "aotc_resize.h"

void aotc_resize_nearest_ref_f32(const aotc_resize_nearest_params *p, const float *x, float *y);
void aotc_resize_nearest_ref_i8(const aotc_resize_nearest_params *p, const int8_t *x, int8_t *y);
void aotc_resize_nearest_ref_u8(const aotc_resize_nearest_params *p, const uint8_t *x, uint8_t *y);
void aotc_resize_ref_f32(const aotc_resize_params *p, const float *x, float *y);
void aotc_grid_sample_ref_f32(const aotc_grid_sample_params *p, const float *x, const float *grid, float *y);
/* DeformConv as aotc_deform_conv_f32, each output on its own: every tap's position and bilinear read worked
 * out where it is summed, in double */
void aotc_deform_conv_ref_f32(const aotc_deform_conv_params *p, const float *x, const float *w, const float *offset,
                              const float *bias, const float *mask, float *y);

/* ---- norm (norm_ref.c) --------------------------------------------------------------------
 * The normalisations as their ONNX definitions over aotc_norm.h's params, statistics and sums in
 * double (two passes: mean, then the biased variance of x - mean), the outputs rounded once; the
 * _f64stats kernels' float steps after the statistics (stash_type double: normalised in double,
 * cast to float, then scaled and shifted in float) as the op's function body has them. y must not
 * overlap x; Softmax and LogSoftmax take no scratch. */
#include "aotc_norm.h"

void aotc_batchnorm_ref_f32(int32_t batch, int32_t channels, int32_t inner, const float *x, const float *scale,
                            const float *shift, float *y);
void aotc_batchnorm_prepare_ref_f32(const aotc_batchnorm_prepare_params *p, const float *gamma, const float *beta,
                                    const float *mean, const float *var, float *scale, float *shift);
void aotc_instance_norm_ref_f32(const aotc_instance_norm_params *p, const float *x, const float *scale,
                                const float *bias, float *y);
void aotc_layer_norm_ref_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, const float *bias,
                             float *y, float *mean, float *inv_std_dev);
void aotc_layer_norm_f64stats_ref_f32(const aotc_layer_norm_params *p, const float *x, const float *scale,
                                      const float *bias, float *y, double *mean, double *inv_std_dev);
void aotc_rms_norm_ref_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, float *y);
void aotc_rms_norm_f64stats_ref_f32(const aotc_layer_norm_params *p, const float *x, const float *scale, float *y);
void aotc_lrn_ref_f32(const aotc_lrn_params *p, const float *x, float *y);
void aotc_softmax_ref_f32(const aotc_softmax_params *p, const float *x, float *y);
void aotc_log_softmax_ref_f32(const aotc_softmax_params *p, const float *x, float *y);

/* ---- attention (attention_ref.c) ----------------------------------------------------------
 * ONNX Attention as aotc_attention_f32, one query row at a time from the definition: scores
 * q . k scaled and softcapped, the qk output (by qk_mode), each key kept or dropped by the causal,
 * window, mask-length and valid-key rules, the mask, a softmax and the sum of the values, all in
 * double; a row that sees no key gives zeros. No scratch. */
#include "aotc_attention.h"

void aotc_attention_ref_f32(const aotc_attention_params *p, const float *q, const float *k, const float *v,
                            const void *mask, const float *past_key, const float *past_value,
                            const int64_t *nonpad_kv_len, float *y, float *present_key, float *present_value,
                            float *qk_out);

/* ---- recurrent (recurrent_ref.c) ----------------------------------------------------------
 * ONNX LSTM, GRU and RNN from their equations over the ONNX tensors W [dirs][gates*hidden][input],
 * R [dirs][gates*hidden][hidden], B [dirs][2*gates*hidden] (or NULL) whatever aotc_rnn_params packs:
 * it reads only the op's attributes from p (cell, sizes, directions, layout, clip, activations,
 * linear_before_reset, input_forget), a batch entry and a step at a time, in double. Allocates
 * its states (malloc): test code only. */
#include "aotc_recurrent.h"

void aotc_rnn_ref_f32(const aotc_rnn_params *p, const float *x, const float *w, const float *r, const float *b,
                      const int32_t *seq_lens, const float *initial_h, const float *initial_c, const float *peep,
                      float *y, float *y_h, float *y_c);

/* ---- elementwise (elementwise_ref.c) --------------------------------------------------------
 * A reference per elementwise kernel, aotc_<op>_ref_<dtype>, stamped by dtype as the kernels are:
 * the op's ONNX definition on one element, over the output's elements in order, each operand's
 * element found from the output's index and its strides (no odometer, no inner-loop variants);
 * float math in double (libm's double functions, rounded once to float), integers in 64 bits,
 * wrapping; x / 0 and x % 0 give 0 and negative integer exponents trunc(b^e) (aotc_elementwise.h).
 * y must not overlap the inputs. */
#include "aotc_elementwise.h"

#define AOTC_DECLARE_BINARY_REF(NAME, SFX, T, TO) \
    void aotc_##NAME##_ref_##SFX(const aotc_broadcast *p, const T *a, const T *b, TO *y);
#define AOTC_DECLARE_UNARY_REF(NAME, SFX, T, TO) void aotc_##NAME##_ref_##SFX(size_t n, const T *x, TO *y);
#define AOTC_DECLARE_COMPARE_REF(NAME) \
    AOTC_DECLARE_BINARY_REF(NAME, f32, float, uint8_t) AOTC_DECLARE_BINARY_REF(NAME, f64, double, uint8_t) \
    AOTC_DECLARE_BINARY_REF(NAME, i8, int8_t, uint8_t) AOTC_DECLARE_BINARY_REF(NAME, i16, int16_t, uint8_t) \
    AOTC_DECLARE_BINARY_REF(NAME, i32, int32_t, uint8_t) AOTC_DECLARE_BINARY_REF(NAME, i64, int64_t, uint8_t) \
    AOTC_DECLARE_BINARY_REF(NAME, u8, uint8_t, uint8_t) AOTC_DECLARE_BINARY_REF(NAME, u16, uint16_t, uint8_t) \
    AOTC_DECLARE_BINARY_REF(NAME, u32, uint32_t, uint8_t) AOTC_DECLARE_BINARY_REF(NAME, u64, uint64_t, uint8_t)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY_REF, add)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY_REF, sub)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY_REF, mul)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY_REF, div)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY_REF, max)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY_REF, min)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_BINARY_REF, pow)
AOTC_DECLARE_SIGNED(AOTC_DECLARE_BINARY_REF, pow)
AOTC_DECLARE_BINARY_REF(prelu, f32, float, float)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY_REF, fmod)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_BINARY_REF, mod)
AOTC_DECLARE_COMPARE_REF(equal)
AOTC_DECLARE_BINARY_REF(equal, b8, uint8_t, uint8_t)
AOTC_DECLARE_COMPARE_REF(less)
AOTC_DECLARE_COMPARE_REF(less_equal)
AOTC_DECLARE_COMPARE_REF(greater)
AOTC_DECLARE_COMPARE_REF(greater_equal)
AOTC_DECLARE_BINARY_REF(and, b8, uint8_t, uint8_t)
AOTC_DECLARE_BINARY_REF(or, b8, uint8_t, uint8_t)
AOTC_DECLARE_BINARY_REF(xor, b8, uint8_t, uint8_t)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY_REF, bitwise_and)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY_REF, bitwise_or)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY_REF, bitwise_xor)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY_REF, shift_left)
AOTC_DECLARE_INTS(AOTC_DECLARE_BINARY_REF, shift_right)
#define AOTC_DECLARE_UNARY_F32_REF(NAME) AOTC_DECLARE_UNARY_REF(NAME, f32, float, float)
AOTC_DECLARE_UNARY_F32_REF(relu) AOTC_DECLARE_UNARY_F32_REF(sigmoid) AOTC_DECLARE_UNARY_F32_REF(tanh)
AOTC_DECLARE_UNARY_F32_REF(hard_swish) AOTC_DECLARE_UNARY_F32_REF(exp) AOTC_DECLARE_UNARY_F32_REF(log)
AOTC_DECLARE_UNARY_F32_REF(sqrt) AOTC_DECLARE_UNARY_F32_REF(erf) AOTC_DECLARE_UNARY_F32_REF(reciprocal)
AOTC_DECLARE_UNARY_F32_REF(floor) AOTC_DECLARE_UNARY_F32_REF(ceil) AOTC_DECLARE_UNARY_F32_REF(round)
AOTC_DECLARE_UNARY_F32_REF(softplus) AOTC_DECLARE_UNARY_F32_REF(softsign) AOTC_DECLARE_UNARY_F32_REF(sin)
AOTC_DECLARE_UNARY_F32_REF(cos) AOTC_DECLARE_UNARY_F32_REF(tan) AOTC_DECLARE_UNARY_F32_REF(asin)
AOTC_DECLARE_UNARY_F32_REF(acos) AOTC_DECLARE_UNARY_F32_REF(atan) AOTC_DECLARE_UNARY_F32_REF(sinh)
AOTC_DECLARE_UNARY_F32_REF(cosh) AOTC_DECLARE_UNARY_F32_REF(asinh) AOTC_DECLARE_UNARY_F32_REF(acosh)
AOTC_DECLARE_UNARY_F32_REF(atanh) AOTC_DECLARE_UNARY_F32_REF(gelu) AOTC_DECLARE_UNARY_F32_REF(gelu_tanh)
AOTC_DECLARE_UNARY_REF(exp, f64, double, double)
AOTC_DECLARE_UNARY_REF(log, f64, double, double)
AOTC_DECLARE_UNARY_REF(sqrt, f64, double, double)
AOTC_DECLARE_UNARY_REF(isnan, f32, float, uint8_t)
AOTC_DECLARE_UNARY_REF(isinf, f32, float, uint8_t)
AOTC_DECLARE_UNARY_REF(isinf_pos, f32, float, uint8_t)
AOTC_DECLARE_UNARY_REF(isinf_neg, f32, float, uint8_t)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_UNARY_REF, sign)
AOTC_DECLARE_FLOATS(AOTC_DECLARE_UNARY_REF, neg)
AOTC_DECLARE_SIGNED(AOTC_DECLARE_UNARY_REF, neg)
AOTC_DECLARE_NUMERIC(AOTC_DECLARE_UNARY_REF, abs)
AOTC_DECLARE_UNARY_REF(not, b8, uint8_t, uint8_t)
AOTC_DECLARE_INTS(AOTC_DECLARE_UNARY_REF, bitwise_not)
#undef AOTC_DECLARE_UNARY_F32_REF
void aotc_swish_ref_f32(size_t n, const float *x, float *y, float alpha);
void aotc_leaky_relu_ref_f32(size_t n, const float *x, float *y, float alpha);
void aotc_elu_ref_f32(size_t n, const float *x, float *y, float alpha);
void aotc_selu_ref_f32(size_t n, const float *x, float *y, float alpha, float gamma);
void aotc_celu_ref_f32(size_t n, const float *x, float *y, float alpha);
void aotc_thresholded_relu_ref_f32(size_t n, const float *x, float *y, float alpha);
void aotc_shrink_ref_f32(size_t n, const float *x, float *y, float lambd, float bias);
void aotc_clip_ref_f32(size_t n, const float *x, float *y, float lo, float hi);
void aotc_hard_sigmoid_ref_f32(size_t n, const float *x, float *y, float alpha, float beta);

/* ---- fused (fused_ref.c) ------------------------------------------------------------------
 * A tree of float32 elementwise ops, which the code generator writes as one loop (aotc_fused.h,
 * aot/kernels/fused.py), run unfused: each op its own elementwise kernel over the whole tensor
 * (aotc_<op>_f32, a constant operand broadcast), its output a tensor of `values` (n floats per
 * step; the last step's into y). What the fused loop must give bit for bit. */
typedef void (*aotc_fused_unary_fn)(size_t n, const float *x, float *y);
typedef void (*aotc_fused_binary_fn)(const aotc_broadcast *p, const float *a, const float *b, float *y);
enum { AOTC_FUSED_INPUT, AOTC_FUSED_VALUE, AOTC_FUSED_CONSTANT };
typedef struct {
    aotc_fused_unary_fn unary;   /* the op's kernel: unary, or (NULL) binary */
    aotc_fused_binary_fn binary;
    int32_t kind[2];             /* each operand: AOTC_FUSED_INPUT, _VALUE (an earlier step's) or _CONSTANT */
    int32_t index[2];            /* the input or the step */
    float constant[2];
} aotc_fused_step;

void aotc_fused_ref_f32(const aotc_fused_step *steps, int32_t count, size_t n, const float *const *inputs,
                        float *values, float *y);
/* ---- shape (shape_ref.c): each output element's coordinates, the element it reads from them ---- */
#include "aotc_shape.h"

void aotc_copy_ref(size_t nbytes, const void *src, void *dst);
void aotc_strided_copy_ref(const aotc_strided_copy_params *p, const void *src, void *dst);
void aotc_transpose2d_ref(const aotc_transpose2d_params *p, const void *src, void *dst);
/* ONNX Pad's modes by their definitions (reflect and wrap as periodic extensions of the input) */
void aotc_pad_ref(const aotc_pad_params *p, const void *src, const void *value, void *dst);
void aotc_gather_i64_ref(const aotc_gather_params *p, const void *data, const int64_t *indices, void *out);
void aotc_gather_i32_ref(const aotc_gather_params *p, const void *data, const int32_t *indices, void *out);
/* Cast by value: decoded to a real or an integer, encoded by aotc_shape.h's rules (rounding in double) */
void aotc_cast_ref(size_t n, aotc_cast_type from, aotc_cast_type to, const void *src, void *dst);
void aotc_cast_f8_ref(size_t n, aotc_cast_type from, aotc_cast_type to, int saturate, const void *src, void *dst);
void aotc_cast_e8m0_ref(size_t n, aotc_cast_type from, int saturate, aotc_round_mode mode, const void *src,
                        void *dst);
/* A float8 code's value by the ONNX spec (NaN for the NaN codes) */
double aotc_f8_decode_ref(aotc_cast_type t, uint8_t c);

/* ---- index (index_ref.c): each output element from its coordinates by the op's ONNX definition ---- */
#include "aotc_index.h"

void aotc_where_ref(const aotc_where_params *p, const uint8_t *cond, const void *x, const void *z, void *y);
/* ArgMax / ArgMin: the line's extreme value first, then the first (select_last: last) index holding it */
#define AOTC_DECLARE_ARG_REF(SFX, T)                                                \
    void aotc_argmax_##SFX##_ref(const aotc_arg_params *p, const T *x, int64_t *y); \
    void aotc_argmin_##SFX##_ref(const aotc_arg_params *p, const T *x, int64_t *y);
AOTC_DECLARE_ARG_REF(f32, float)
AOTC_DECLARE_ARG_REF(f64, double)
AOTC_DECLARE_ARG_REF(i8, int8_t)
AOTC_DECLARE_ARG_REF(u8, uint8_t)
AOTC_DECLARE_ARG_REF(i32, int32_t)
AOTC_DECLARE_ARG_REF(i64, int64_t)
void aotc_trilu_ref(const aotc_trilu_params *p, int64_t k, const void *x, void *y);
int32_t aotc_compress_ref(const aotc_compress_params *p, const uint8_t *cond, const void *x, void *y);
/* Unique as aotc_unique, with no scratch: the k-th distinct slice found as the smallest one after the
 * (k-1)-th (sorted) or the k-th slice equal to none before it, its occurrences counted where needed */
int32_t aotc_unique_ref(const aotc_unique_params *p, const void *x, void *y, int64_t *indices, int64_t *inverse,
                        int64_t *counts);
/* CumSum / CumProd: each prefix recomputed from the scan's start, in the scan's order */
#define AOTC_DECLARE_CUMULATE_REF(SFX, T)                                                         \
    void aotc_cumsum_##SFX##_ref(const aotc_cumsum_params *p, int64_t axis, const T *x, T *y); \
    void aotc_cumprod_##SFX##_ref(const aotc_cumsum_params *p, int64_t axis, const T *x, T *y);
AOTC_DECLARE_CUMULATE_REF(f32, float)
AOTC_DECLARE_CUMULATE_REF(f64, double)
AOTC_DECLARE_CUMULATE_REF(i32, int32_t)
AOTC_DECLARE_CUMULATE_REF(i64, int64_t)
void aotc_hardmax_f32_ref(const aotc_arg_params *p, const float *x, float *y);
void aotc_hardmax_f64_ref(const aotc_arg_params *p, const double *x, double *y);
void aotc_eye_ref(int32_t rows, int32_t cols, int64_t k, int32_t elem_size, const void *one, void *y);
void aotc_one_hot_i64_ref(const aotc_one_hot_params *p, const int64_t *indices, const void *values, void *y);
void aotc_one_hot_i32_ref(const aotc_one_hot_params *p, const int32_t *indices, const void *values, void *y);
void aotc_one_hot_f32_ref(const aotc_one_hot_params *p, const float *indices, const void *values, void *y);
#define AOTC_DECLARE_RANGE_REF(SFX, T) void aotc_range_##SFX##_ref(int64_t n, const T *start, const T *delta, T *y);
AOTC_DECLARE_RANGE_REF(f32, float)
AOTC_DECLARE_RANGE_REF(f64, double)
AOTC_DECLARE_RANGE_REF(i16, int16_t)
AOTC_DECLARE_RANGE_REF(i32, int32_t)
AOTC_DECLARE_RANGE_REF(i64, int64_t)
void aotc_gather_elements_i64_ref(const aotc_gather_elements_params *p, const void *data, const int64_t *indices,
                                  void *y);
void aotc_gather_elements_i32_ref(const aotc_gather_elements_params *p, const void *data, const int32_t *indices,
                                  void *y);
/* the scatters: data copied, then the updates applied in index order */
void aotc_scatter_elements_i64_ref(const aotc_gather_elements_params *p, aotc_scatter_reduction reduction,
                                   aotc_scatter_kind kind, size_t data_bytes, const void *data,
                                   const int64_t *indices, const void *updates, void *y);
void aotc_scatter_elements_i32_ref(const aotc_gather_elements_params *p, aotc_scatter_reduction reduction,
                                   aotc_scatter_kind kind, size_t data_bytes, const void *data,
                                   const int32_t *indices, const void *updates, void *y);
void aotc_scatter_nd_ref(const aotc_scatter_nd_params *p, aotc_scatter_reduction reduction, aotc_scatter_kind kind,
                         size_t data_bytes, const void *data, const int64_t *indices, const void *updates, void *y);
void aotc_gather_nd_ref(const aotc_gather_nd_params *p, const void *data, const int64_t *indices, void *y);

/* ---- detect (detect_ref.c): no scratch; each pick the best of those ranked after the previous one ---- */
#include "aotc_detect.h"

#define AOTC_DECLARE_TOPK_REF(SFX, T)                                                                           \
    void aotc_topk_##SFX##_ref(const aotc_topk_params *p, const T *x, T *values, int64_t *indices);            \
    int64_t aotc_topk_rows_##SFX##_ref(const aotc_topk_params *p, int64_t n, int64_t k, const T *x, T *values, \
                                       int64_t *indices);
AOTC_DECLARE_TOPK_REF(f32, float)
AOTC_DECLARE_TOPK_REF(i64, int64_t)
AOTC_DECLARE_TOPK_REF(i32, int32_t)
AOTC_DECLARE_TOPK_REF(u64, uint64_t)
/* NonMaxSuppression as aotc_nms_f32 (no scratch: a candidate is tested against the rows written for its
 * class), IoU by onnxruntime's float arithmetic */
int64_t aotc_nms_f32_ref(const aotc_nms_params *p, int64_t n_boxes, const float *boxes, const float *scores,
                         int64_t max_per_class, float iou_threshold, int has_score_threshold, float score_threshold,
                         int64_t *selected);
int64_t aotc_nonzero_ref(const aotc_nonzero_params *p, const void *x, int64_t *y);
/* NON_MAX_SUPPRESSION_V4 / _V5 as aotc_tfl_nms_f32, each IoU formed from the boxes where it is needed (LiteRT's
 * ComputeIntersectionOverUnion, line for line); scratch: a score and an int32 a box */
void aotc_tfl_nms_f32_ref(const aotc_tfl_nms_params *p, const float *boxes, const float *scores, int32_t *indices,
                          float *selected_scores, int32_t *count, float *scratch);
/* TFLite_Detection_PostProcess as aotc_detection_postprocess_*: each box decoded where it is read, candidates
 * picked in rank order by rescanning; its one work array `kept` holds the boxes kept for a class (boxes int32) */
#define AOTC_DECLARE_DETECTION_REF(SFX, T)                                                                     \
    void aotc_detection_postprocess_##SFX##_ref(const aotc_detection_params *p, const T *box_encodings,       \
                                                const T *class_predictions, const float *anchors,             \
                                                float *y_boxes, float *y_classes, float *y_scores,            \
                                                float *num_detections, int32_t *kept);
AOTC_DECLARE_DETECTION_REF(f32, float)
AOTC_DECLARE_DETECTION_REF(u8, uint8_t)
AOTC_DECLARE_DETECTION_REF(i8, int8_t)
/* RoiAlign as aotc_roialign_f32: each output element on its own, its samples' taps read where they are
 * worked out */
int aotc_roialign_f32_ref(const aotc_roialign_params *p, const float *x, const float *rois,
                          const int64_t *batch_index, float *y);

/* ---- loss (loss_ref.c): the ONNX function bodies (SoftmaxCrossEntropyLoss: LogSoftmax's, then the NLL) ---- */
#include "aotc_loss.h"

#define AOTC_DECLARE_LOSS_REF(SFX, T, TI)                                                                        \
    void aotc_nll_loss_##SFX##_ref(const aotc_loss_params *p, const T *x, const TI *target, const T *weight,   \
                                   T *y);                                                                      \
    void aotc_softmax_cross_entropy_##SFX##_ref(const aotc_loss_params *p, const T *scores, const TI *target,  \
                                                const T *weight, T *y, T *log_prob);
AOTC_DECLARE_LOSS_REF(f32_i64, float, int64_t)
AOTC_DECLARE_LOSS_REF(f32_i32, float, int32_t)
AOTC_DECLARE_LOSS_REF(f64_i64, double, int64_t)
AOTC_DECLARE_LOSS_REF(f64_i32, double, int32_t)

/* ---- random (random_ref.c): MT19937 as its authors wrote it, one element at a time ---- */
#include "aotc_random.h"
void aotc_dropout_f32_ref(size_t n, uint32_t seed, const float *x, const float *ratio, const uint8_t *training_mode,
                          float *y, uint8_t *mask, uint32_t *scratch);

/* ---- philox (philox_ref.c): STABLEHLO_RNG_BIT_GENERATOR one output word at a time, each from the generator's
 * block it falls in (Philox4x32-10 and ThreeFry2x32-20 as Salmon et al. define them) ---- */
#include "aotc_philox.h"
/* the generators' blocks, for the test's known answers: Philox4x32-10 of counter c[4] under key k[2], and
 * ThreeFry2x32-20 of counter c[2] under key k[2] */
void aotc_philox4x32_ref(const uint32_t *c, const uint32_t *k, uint32_t *out);
void aotc_threefry2x32_ref(const uint32_t *c, const uint32_t *k, uint32_t *out);
void aotc_rng_bits_philox_ref(size_t state_len, const uint64_t *state, uint64_t *state_next, size_t n, int wide,
                              void *y);
void aotc_rng_bits_threefry_ref(const uint64_t *state, uint64_t *state_next, size_t n, int wide, void *y);

/* ---- quant (quant_ref.c): onnxruntime's arithmetic (aotc_quant.h) op by op, one output element at a time.
 * The convolutions and QGemm take the model's own bias, the zero points as such and plain weight rows
 * (w_row bytes apart, or bt [n][k]): nothing folded, padded or packed as the compiler does for the kernels. */
#include "aotc_quant.h"

/* MlasRequantizeOutput: round_half_even(clamp((float)acc * scale, lo, hi)) + zero_point (lo, then hi) */
int32_t aotc_requant_ref(int64_t acc, float scale, float lo, float hi, int32_t zero_point);
void aotc_dequantize_i32_ref(const aotc_qaxis *p, const int32_t *x, float *y);
void aotc_dynamic_quantize_u8_ref(int32_t n, const float *x, uint8_t *y, float *y_scale, uint8_t *y_zero);
#define AOTC_DECLARE_QUANT_REF(SFX, QT)                                                                            \
    void aotc_quantize_##SFX##_ref(const aotc_qaxis *p, const float *x, QT *y);                                   \
    void aotc_dequantize_##SFX##_ref(const aotc_qaxis *p, const QT *x, float *y);                                 \
    /* QLinearConv (patches and depthwise alike): p's geometry, zero points, scale and clamp */                   \
    void aotc_qconv_##SFX##_ref(const aotc_qconv_params *p, const QT *x, const int8_t *w, int64_t w_row,          \
                                const int32_t *bias, QT *y);                                                    \
    /* QGemm: p's shape, b_zero, scale and clamp; a_zero and the bias as the model has them */                    \
    void aotc_qgemm_##SFX##_ref(const aotc_qgemm_params *p, int32_t a_zero, const QT *a, const int8_t *bt,        \
                                const int32_t *bias, QT *y);                                                    \
    void aotc_qadd_##SFX##_ref(const aotc_qbinary_params *p, const QT *a, const QT *b, QT *y);                    \
    void aotc_qmul_##SFX##_ref(const aotc_qbinary_params *p, const QT *a, const QT *b, QT *y);                    \
    /* aotc_qconv_patches_add_*: the conv as aotc_qconv_*_ref, each value then added as QLinearAdd */             \
    void aotc_qconv_add_##SFX##_ref(const aotc_qconv_params *p, const aotc_qresidual_params *r, const QT *x,      \
                                    const int8_t *w, int64_t w_row, const int32_t *bias, const QT *res, QT *y);  \
    void aotc_qglobal_avgpool_##SFX##_ref(int32_t planes, int32_t size, float scale, int32_t x_zero,              \
                                          int32_t y_zero, const QT *x, QT *y);                                  \
    void aotc_qavgpool_##SFX##_ref(const aotc_pool_params *p, const float *lut, float y_scale, int32_t y_zero,   \
                                   const QT *x, QT *y);                                                         \
    void aotc_qsoftmax_##SFX##_ref(int32_t rows, int32_t n, const uint32_t *table, uint32_t y_scale,              \
                                   int32_t y_zero, const QT *x, QT *y);                                         \
    void aotc_qlookup_##SFX##_ref(size_t n, const QT *x, const QT *table, QT *y);                                 \
    void aotc_qrequant_copy_##SFX##_ref(int32_t outer, int32_t inner, int32_t out_stride, const QT *table,       \
                                        const QT *x, QT *y);                                                    \
    /* MatMulInteger, ConvInteger: the sums of the definition (b_sums unused) */                                  \
    void aotc_matmul_integer_##SFX##_ref(int32_t m, int32_t n, int32_t k, const QT *a, const QT *a_zero,          \
                                         const int8_t *bt, const int32_t *b_zero, const int32_t *b_sums,        \
                                         int32_t *y);                                                           \
    void aotc_conv_integer_##SFX##_ref(const aotc_qconv_params *p, const QT *x, const QT *x_zero,                 \
                                       const int8_t *w, int32_t *y);
AOTC_DECLARE_QUANT_REF(i8, int8_t)
AOTC_DECLARE_QUANT_REF(u8, uint8_t)

/* ---- tflite_int8 (tflite_int8_ref.c): LiteRT's reference kernels on TFLite's fixed point, from its definitions.
 * No scratch: the DSP and Helium paths' layouts (il4, dsp_tile) are the kernels' own; w is plain. ---- */
#include "aotc_tflite_int8.h"

void aotc_tfl_conv_s8_ref(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                          int8_t *y);
void aotc_tfl_depthwise_s8_ref(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                               int8_t *y);
void aotc_tfl_fc_s8_ref(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y);
void aotc_tfl_avgpool_s8_ref(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_maxpool_s8_ref(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_mean_s8_ref(const aotc_tfl_mean_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_add_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
void aotc_tfl_conv_add_s8_ref(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, const int8_t *x,
                              const int8_t *w, const int32_t *bias, const int8_t *res, int8_t *y);
void aotc_tfl_mul_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
void aotc_tfl_max_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
void aotc_tfl_min_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
void aotc_tfl_lut_s8_ref(const aotc_tfl_lut_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_transpose_conv_s8_ref(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                    const int32_t *bias, int8_t *y);
void aotc_tfl_conv_s16_ref(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                           int16_t *y);
void aotc_tfl_depthwise_s16_ref(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w,
                                const int64_t *bias, int16_t *y);
void aotc_tfl_fc_s16_ref(const aotc_tfl_fc_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                         int16_t *y);
void aotc_tfl_avgpool_s16_ref(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_maxpool_s16_ref(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_quantize_f32_s16_ref(const aotc_tfl_quantize_params *p, const float *x, int16_t *y);
void aotc_tfl_dequantize_s16_f32_ref(const aotc_tfl_quantize_params *p, const int16_t *x, float *y);
void aotc_tfl_requantize_s16_ref(const aotc_tfl_quantize_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_quantize_f32_s8_ref(const aotc_tfl_quantize_params *p, const float *x, int8_t *y);
void aotc_tfl_dequantize_s8_f32_ref(const aotc_tfl_quantize_params *p, const int8_t *x, float *y);
void aotc_tfl_requantize_s8_ref(const aotc_tfl_quantize_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_requantize_s8_s16_ref(const aotc_tfl_quantize_params *p, const int8_t *x, int16_t *y);
void aotc_tfl_requantize_s16_s8_ref(const aotc_tfl_quantize_params *p, const int16_t *x, int8_t *y);
void aotc_tfl_requantize_s8_s32_ref(const aotc_tfl_quantize_params *p, const int8_t *x, int32_t *y);
void aotc_tfl_requantize_s16_s32_ref(const aotc_tfl_quantize_params *p, const int16_t *x, int32_t *y);
void aotc_tfl_requantize_s32_s8_ref(const aotc_tfl_quantize_params *p, const int32_t *x, int8_t *y);
void aotc_tfl_requantize_s32_s16_ref(const aotc_tfl_quantize_params *p, const int32_t *x, int16_t *y);
void aotc_tfl_requantize_s8_u8_ref(const aotc_tfl_quantize_params *p, const int8_t *x, uint8_t *y);
void aotc_tfl_requantize_u8_s8_ref(const aotc_tfl_quantize_params *p, const uint8_t *x, int8_t *y);
void aotc_tfl_softmax_s8_ref(const aotc_tfl_softmax_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_softmax_s8_s16_ref(const aotc_tfl_softmax_params *p, const int8_t *x, int16_t *y);
void aotc_tfl_logistic_s16_ref(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_tanh_s16_ref(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_softmax_s16_ref(const aotc_tfl_softmax16_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_add_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
void aotc_tfl_mul_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
void aotc_tfl_max_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
void aotc_tfl_min_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y);
void aotc_tfl_transpose_conv_s16_ref(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w,
                                     const int64_t *bias, int16_t *y);
void aotc_tfl_mean_s16_ref(const aotc_tfl_mean_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_lstm_s8_ref(const aotc_tfl_lstm8_params *p, const int8_t *x, const int8_t *wx, const int8_t *wh,
                          const int32_t *bx, const int32_t *bh, const int8_t *h0, const int16_t *c0, int8_t *y,
                          int8_t *h_next, int16_t *c_next);
void aotc_tfl_leaky_relu_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_squared_difference_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2,
                                        int8_t *y);
void aotc_tfl_batch_matmul_s8_ref(const aotc_tfl_matmul_params *p, const int8_t *x1, const int8_t *x2, int8_t *y);
void aotc_tfl_batch_matmul_s16_ref(const aotc_tfl_matmul_params *p, const int16_t *x1, const int16_t *x2,
                                   int16_t *y);
void aotc_tfl_batch_matmul_s16_s8_ref(const aotc_tfl_matmul_params *p, const int16_t *x1, const int8_t *x2,
                                      int16_t *y);
void aotc_tfl_resize_bilinear_s8_ref(const aotc_tfl_resize_params *p, const int8_t *x, int8_t *y);
void aotc_tfl_resize_bilinear_s16_ref(const aotc_tfl_resize_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_abs_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_sqrt_s16_ref(const aotc_tfl_quantize_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_lut_s16_ref(const aotc_tfl_lut16_params *p, const int16_t *x, int16_t *y);
void aotc_tfl_svdf_s8_ref(const aotc_tfl_svdf_params *p, const int8_t *x, const int8_t *wf, const int16_t *wt,
                          const int32_t *bias, const int16_t *state, int8_t *y, int16_t *state_next);

/* ---- tflite_hybrid (tflite_hybrid_ref.c): LiteRT's hybrid reference loops (float activations, int8
 * weights), each output from every tap of its window in order, the offset subtracted per tap. ---- */
#include "aotc_tflite_hybrid.h"

void aotc_tfl_hybrid_quantize_ref(const aotc_tfl_hybrid_quantize_params *p, const float *x, int8_t *q,
                                  float *scale, int32_t *offset);
void aotc_tfl_hybrid_fc_ref(const aotc_tfl_hybrid_fc_params *p, const int8_t *q, const float *scale,
                            const int32_t *offset, const int8_t *w, const float *bias, float *y);
void aotc_tfl_hybrid_conv_ref(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                              const int32_t *offset, const int8_t *w, const float *bias, float *y);
void aotc_tfl_hybrid_depthwise_ref(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                                   const int32_t *offset, const int8_t *w, const float *bias, float *y);
void aotc_tfl_hybrid_transpose_conv_ref(const aotc_tfl_hybrid_conv_params *p, const int8_t *q, const float *scale,
                                        const int32_t *offset, const int8_t *w, const float *bias, float *y);

#endif /* AOTC_KERNELS_REF_H */
