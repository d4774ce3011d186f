/* TFLite's int8 kernels (tflite_int8_*.c) on cores with the Arm DSP extension (Cortex-M4, M33, M55):
 * the sums by SMLAD through quant_dsp.h's blocks (aotc_dsp_mac4x2 for CONV_2D; the ONNX int8 path takes aotc_dsp_mac2x2),
 * the requantisation TFLite's own (tflite_int8_internal.h's requant_double), so the outputs are those
 * of the plain loops bit for bit. Each path lives with its op's plain loop (CONV_2D's in
 * tflite_int8_conv.c, DEPTHWISE_CONV_2D's in tflite_int8_depthwise.c, FULLY_CONNECTED's in
 * tflite_int8_fc.c, ADD's in tflite_int8_elementwise.c) and returns 0 when it does not take the case
 * (the plain loop then runs); this header holds what they share: the requantisation of a run of sums
 * in a few instructions an output (tfl_dsp_requant_run). Included after tflite_int8_internal.h. */
#ifndef AOTC_TFLITE_INT8_DSP_H
#define AOTC_TFLITE_INT8_DSP_H

#include "aotc_quant.h" /* aotc_round_even, for quant_dsp.h's plain rounding */
#include "quant_dsp.h"
#include "tflite_int8_mve.h" /* Helium's paths (Cortex-M55), which these use where the core has it */

#if AOTC_QUANT_DSP

/* TFL_DSP_KC, TFL_DSP_NP_MAX, ...: the blocks, with the scratch they take, in aotc_tflite_int8.h */

/* ra + ((a * m + 2^31) >> 32): SMMLAR, the high word of the product rounded, plus ra (exactly:
 * ra is added to the high word, below which the rounding carries). */
static inline __attribute__((always_inline)) int32_t tfl_dsp_smmlar(int32_t a, int32_t m, int32_t ra) {
#if AOTC_DSP_ASM
    int32_t r;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(m), "r"(ra));
    return r;
#else
    return ra + (int32_t)(((int64_t)a * m + ((int64_t)1 << 31)) >> 32);
#endif
}

/* The largest |x - x_zero| * w of int8 operands, for the sums' bounds (tfl_dsp_requant_run). */
#define TFL_DSP_PRODUCT_MAX 32640

/* n sums of one output channel (acc[0], acc[as], ...), each plus bias, requantised as TFLite's
 * requant_double does, plus the zero point, clamped to [lo, hi], to y[0], y[ys], ...: the shift
 * split and the rounding's mask worked out once, high_mul without its saturation test (only a
 * multiplier of INT32_MIN needs it: that channel takes requant_double itself).
 *
 * bound: at least every |sum + bias| (int64: a patch's length times TFL_DSP_PRODUCT_MAX plus
 * |bias| does not overflow). Below 2^(30 - left), the doubled sum (sum + bias) << (left + 1) fits
 * an int32, and high_mul(v, m) = (v m + 2^30) >> 31 = (2v m + 2^31) >> 32 is one SMMULR; TFLite's
 * rounding divide by 2^right (half away from zero) is then (r + (r < 0 ? -1 : 0) + 2^(right-1))
 * >> right, which cannot overflow (|r| < 2^30), the zero point's addition folded in. */
static inline __attribute__((always_inline)) void tfl_dsp_requant_run(const int32_t *acc, int32_t as, int32_t n,
                                                                      int32_t bias, int32_t mult, int32_t shift,
                                                                      int32_t zero, int32_t lo, int32_t hi,
                                                                      int8_t *y, int32_t ys, int64_t bound) {
    const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    const int32_t mask = (int32_t)(((int64_t)1 << right) - 1);
    int32_t i;
    if (mult == INT32_MIN) {
        for (i = 0; i < n; ++i, acc += as, y += ys)
            *y = clamp8(requant_double(*acc + bias, mult, shift) + zero, lo, hi);
        return;
    }
    if (left < 30 && bound < ((int64_t)1 << (30 - left)) && right <= 22) {
        /* r + 2^(right-1) + zero 2^right in one SMMLAR (|r| < 2^30, |zero| <= 255: no overflow up
         * to right = 22), the sign term from a (r < 0 only where a < 0; where a < 0 and r = 0 both
         * forms give 0), then the shift; with right = 0, r + zero */
        const int32_t s = left + 1, ra = (right > 0 ? 1 << (right - 1) : 0) + zero * (1 << right);
        if (right > 0 && hi == 127 && lo >= -128) {
            /* the usual clamp (no activation, or a ReLU's lower bound): SSAT to int8, then lo */
            for (i = 0; i < n; ++i, acc += as, y += ys) {
                const int32_t a = (int32_t)((uint32_t)(*acc + bias) << s);
                int32_t q = __ssat((tfl_dsp_smmlar(a, mult, ra) + (a >> 31)) >> right, 8);
                *y = (int8_t)(q < lo ? lo : q);
            }
        } else if (right > 0) {
            for (i = 0; i < n; ++i, acc += as, y += ys) {
                const int32_t a = (int32_t)((uint32_t)(*acc + bias) << s);
                int32_t q = (tfl_dsp_smmlar(a, mult, ra) + (a >> 31)) >> right;
                q = q < lo ? lo : q;
                *y = (int8_t)(q > hi ? hi : q);
            }
        } else {
            for (i = 0; i < n; ++i, acc += as, y += ys) {
                int32_t q = tfl_dsp_smmlar((int32_t)((uint32_t)(*acc + bias) << s), mult, ra);
                q = q < lo ? lo : q;
                *y = (int8_t)(q > hi ? hi : q);
            }
        }
        return;
    }
    lo -= zero, hi -= zero; /* the clamp before the zero point is added */
    if (left == 0) { /* the usual case (a multiplier below 1), with a register less */
        for (i = 0; i < n; ++i, acc += as, y += ys) {
            const int32_t r = (int32_t)(((int64_t)(*acc + bias) * mult + ((int64_t)1 << 30)) >> 31);
            int32_t q = (r >> right) + ((r & mask) > (mask >> 1) - (r >> 31));
            q = q < lo ? lo : q;
            *y = (int8_t)((q > hi ? hi : q) + zero);
        }
        return;
    }
    for (i = 0; i < n; ++i, acc += as, y += ys) {
        const int32_t a = (int32_t)((uint32_t)(*acc + bias) << left);
        const int32_t r = (int32_t)(((int64_t)a * mult + ((int64_t)1 << 30)) >> 31);
        int32_t q = (r >> right) + ((r & mask) > (mask >> 1) - (r >> 31));
        q = q < lo ? lo : q;
        *y = (int8_t)((q > hi ? hi : q) + zero);
    }
}

static inline int64_t tfl_dsp_abs64(int32_t v) { return v < 0 ? -(int64_t)v : (int64_t)v; }
#endif /* AOTC_QUANT_DSP */
#endif /* AOTC_TFLITE_INT8_DSP_H */
