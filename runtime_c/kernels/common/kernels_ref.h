/* Reference kernels of the families that have optimised ones: conv (conv_ref.c), gemm
 * (gemm_ref.c) and pool (pool_ref.c). Each is the plain loop of the ONNX definition over the
 * same params struct as the optimised kernels it stands for: portable C99, simple on
 * purpose, slow, no scratch, no allocation, no globals. Any target can run them.
 *
 * They are not shipped in bundles (aot/emit_c/runtime_files.py): the C tests in tests/kernels_c/
 * compare every optimised kernel with them over random shapes. The other families
 * (elementwise, norm, reduce, resize, shape) have only one kernel per op, already a plain
 * loop, so it is their reference. */
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

#endif /* AOTC_KERNELS_REF_H */
