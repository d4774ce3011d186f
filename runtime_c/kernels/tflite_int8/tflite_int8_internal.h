/* What the strategy files of TFLite's integer kernels share (tflite_int8_*.c; aotc_tflite_int8.h is their
 * API): TFLite's fixed-point requantisation, the clamps, and the ADD's arithmetic that a CONV_2D with a
 * fused residual ADD repeats. Internal to runtime_c/kernels: no generated code includes it.
 *
 * The strategies, one file each (a bundle compiles those defining a function its model calls):
 *   tflite_int8_conv.c             CONV_2D (and with its residual ADD fused): plain loops, the DSP path, Helium's
 *   tflite_int8_depthwise.c        DEPTHWISE_CONV_2D: plain loops, the DSP path (4 channels at a time)
 *   tflite_int8_fc.c               FULLY_CONNECTED: plain loops, the DSP path, Helium's
 *   tflite_int8_transpose_conv.c   TRANSPOSE_CONV, its sums gathered per output
 *   tflite_int8_pool.c             AVERAGE_POOL_2D, MAX_POOL_2D and MEAN over H and W
 *   tflite_int8_elementwise.c      ADD / SUB (the DSP path's tables), MUL, MAXIMUM, MINIMUM (broadcast in runs;
 *                                  x86's vector lanes), the lookup table, 16x8 LOGISTIC, TANH and LEAKY_RELU
 *   tflite_int8_quantize.c         QUANTIZE, DEQUANTIZE and the requantisations between integer types
 *   tflite_int8_softmax.c          SOFTMAX: gemmlowp's fixed point (int8; its exps tabulated a call, the rows in
 *                                  AVX-512 lanes), LiteRT's tables (16x8)
 *   tflite_int8_recurrent.c        the integer UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF
 *   tflite_int8_matmul.c           BATCH_MATMUL (int8, 16x8; int8 by AVX-512 VNNI tiles)
 *   tflite_int8_resize.c           RESIZE_BILINEAR (int8, int16), LiteRT's integer interpolation
 *   tflite_int8_mobile.c           the comparisons, PRELU and SQUARED_DIFFERENCE
 * each for int8 and, where TFLite has it, 16x8 (int16 activations). The M-profile paths: tflite_int8_dsp.h
 * (the DSP extension's shared requantisation), tflite_int8_mve.h (Helium's dot products); x86's:
 * tflite_int8_x86.h (the requantisation in AVX-512 and AVX2 lanes). */
#ifndef AOTC_TFLITE_INT8_INTERNAL_H
#define AOTC_TFLITE_INT8_INTERNAL_H

#ifndef AOTC_TFL_CONV_DECLS /* the conv's and the depthwise's declarations: only their own files want them */
#define AOTC_TFL_CONV_DECLS 0
#endif
#include "aotc_tflite_int8.h"

/* On cores with the DSP extension the int8 kernels are the network: at -Os, gcc stops inlining and
 * if-converting their inner loops (10-15 % more instructions than at -O2), so these files are built
 * at -O2 whatever the level (issue 27: speed that does not depend on it). */
#if defined(__OPTIMIZE_SIZE__) && defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")
#endif

#include <math.h>
#include <string.h>

/* A static function here that not every file including it calls. */
#if defined(__GNUC__) || defined(__clang__)
#define TFL_UNUSED __attribute__((unused))
#else
#define TFL_UNUSED
#endif

/* TFLite's SaturatingRoundingDoublingHighMul, (a * b + nudge) / 2^31 with C's truncating division
 * and nudge 2^30 (a * b >= 0) or 1 - 2^30: that is floor((a * b + 2^30) / 2^31) either way, one
 * arithmetic shift (a multiply-long, an add and two shifts on a 32-bit core, no sign tests);
 * INT32_MIN * INT32_MIN saturates */
TFL_UNUSED static int32_t high_mul(int32_t a, int32_t b) {
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    return (int32_t)(((int64_t)a * (int64_t)b + ((int64_t)1 << 30)) >> 31);
}

/* x / 2^e rounded to nearest, ties away from zero (the shift of a negative value is arithmetic on
 * every compiler aotc targets) */
TFL_UNUSED static int32_t divide_by_pot(int32_t x, int32_t e) {
    int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

/* double rounding: RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc * 2^left, mult), right) */
TFL_UNUSED static int32_t requant_double(int32_t acc, int32_t mult, int32_t shift) {
    int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int32_t scaled = (int32_t)((uint32_t)acc << left);  /* TFLite multiplies in int32: it wraps */
    return divide_by_pot(high_mul(scaled, mult), right);
}

/* single rounding: (acc * mult + 2^(30 - shift)) >> (31 - shift) in 64 bits, half up */
TFL_UNUSED static int32_t requant_single(int32_t acc, int32_t mult, int32_t shift) {
    int32_t total = 31 - shift;  /* 1..62: the compiler keeps shift in [-31, 30] */
    int64_t v = (int64_t)acc * (int64_t)mult + ((int64_t)1 << (total - 1));
    return (int32_t)(v >> total);
}

TFL_UNUSED static int8_t clamp8(int32_t v, int32_t lo, int32_t hi) {
    return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* 16x8: int16 activations (zero point 0), int8 weights, int64 sums and biases */
TFL_UNUSED static int16_t clamp16(int64_t v, int32_t lo, int32_t hi) {
    return (int16_t)(v < lo ? lo : v > hi ? hi : v);
}

/* LiteRT's int64 MultiplyByQuantizedMultiplier: the multiplier rounded to its top 16 bits, one rounding */
TFL_UNUSED static int64_t requant_reduced(int64_t acc, int32_t mult, int32_t shift) {
    int64_t m16 = mult < 0x7FFF0000 ? (mult + (1 << 15)) >> 16 : 0x7FFF;
    int32_t total = 15 - shift;
    return (acc * m16 + ((int64_t)1 << (total - 1))) >> total;
}

/* the full multiplier, one rounding: (acc * mult + 2^(30 - shift)) >> (31 - shift) */
TFL_UNUSED static int64_t requant_full64(int64_t acc, int32_t mult, int32_t shift) {
    int32_t total = 31 - shift;
    return (acc * mult + ((int64_t)1 << (total - 1))) >> total;
}

/* A window's clip along one axis: narrows the taps [*k0, *k1) to those whose input index i0 + k d lies in [0, n)
 * (d > 0; the range may come out empty), so that the loops over the taps test no edges. */
static inline __attribute__((always_inline)) void tfl_taps_inside(int32_t i0, int32_t d, int32_t n, int32_t *k0,
                                                                  int32_t *k1) {
    int32_t a = *k0, b = *k1;
    while (a < b && i0 + a * d < 0) ++a;
    while (b > a && i0 + (b - 1) * d >= n) --b;
    *k0 = a, *k1 = b;
}

/* ADD / SUB of two elements: aotc_tfl_add_s8's plain loop, and a conv's fused residual ADD */
TFL_UNUSED static int32_t add_one(const aotc_tfl_binary_params *p, int32_t x1, int32_t x2) {
    int32_t a = requant_double((x1 - p->x1_zero) * (1 << 20), p->m1, p->s1);
    int32_t b = requant_double((x2 - p->x2_zero) * (1 << 20), p->m2, p->s2);
    return requant_double(p->subtract ? a - b : a + b, p->mult, p->shift) + p->y_zero;
}

#if defined(AOTC_NO_INTRINSICS)
/* requant_double's arithmetic inlined in the portable loops, its per-channel terms taken apart (tfl_rq_terms) so
 * that a loop over positions takes them once: at -Os the call, its argument moves and the registers saved around
 * it cost about as much as the arithmetic (issue 67: the portable level) */
typedef struct {
    int32_t mult, left, right, mask, half; /* half: mask >> 1, the remainder's threshold for x >= 0 */
} tfl_rq1;

static inline __attribute__((always_inline)) tfl_rq1 tfl_rq_terms(int32_t mult, int32_t shift) {
    tfl_rq1 r;
    r.mult = mult, r.left = shift > 0 ? shift : 0, r.right = shift > 0 ? 0 : -shift;
    r.mask = (int32_t)(((int64_t)1 << r.right) - 1), r.half = r.mask >> 1;
    return r;
}

static inline __attribute__((always_inline)) int32_t tfl_rq_apply(int32_t acc, const tfl_rq1 *r) {
    const int32_t a = (int32_t)((uint32_t)acc << r->left); /* TFLite multiplies in int32: it wraps */
    const int32_t h = a == INT32_MIN && r->mult == INT32_MIN
                          ? INT32_MAX
                          : (int32_t)(((int64_t)a * (int64_t)r->mult + ((int64_t)1 << 30)) >> 31);
    return (h >> r->right) + ((h & r->mask) > r->half + (h < 0 ? 1 : 0) ? 1 : 0);
}

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
/* the portable loops' dot products by Helium (where the conv's and the depthwise's files take them: their TFL_PMVE,
 * the M55's portable-mve levels, issue 67): gcc 12 keeps them scalar at -Os and -O3, a plain loop then taking the M55
 * about 3 instructions a MAC; these are a handful of instructions a call site. Unused static functions elsewhere */
#define TFL_PMVE_ISA 1
#include <arm_mve.h>
#include <stddef.h> /* ptrdiff_t */

/* s[j] += sum over i < n of (x[i] - xz) * w[o_j + i], j < 4, o = {0, k1, k2, k3}: 8 bytes a turn widened to 16 bits
 * (VLDRB.S16), x's offset subtracted there (9 bits), by VMLADAVA.S16 into each channel's sum, in a tail-predicated
 * low-overhead loop (DLSTP / LETP: the last turn's lanes past n load as 0 and add nothing): 10 instructions a 32 MACs.
 * Written out because gcc 12 spilled the sums of the intrinsics' form (about 45 instructions a 16 bytes). The
 * widening loads take low registers for their addresses, the sums even ones. */
static inline __attribute__((always_inline)) void tfl_pmve_dot4(const int8_t *x, const int8_t *w, ptrdiff_t k1,
                                                                ptrdiff_t k2, ptrdiff_t k3, int32_t n, int32_t xz,
                                                                int32_t s[4]) {
    if (n <= 0)
        return;
    const int8_t *w0 = w, *w1 = w + k1, *w2 = w + k2, *w3 = w + k3;
    int32_t a0 = s[0], a1 = s[1], a2 = s[2], a3 = s[3];
    const int16x8_t zv = vdupq_n_s16((int16_t)xz); /* (in a vector register: the loop takes 10 general ones) */
    int16x8_t xv, v1, v2;
    __asm__ volatile("dlstp.16 lr, %[n]\n"
                     "1:\n\t"
                     "vldrb.s16 %q[xv], [%[x]], #8\n\t"
                     "vldrb.s16 %q[v1], [%[w0]], #8\n\t"
                     "vsub.i16 %q[xv], %q[xv], %q[zv]\n\t"
                     "vldrb.s16 %q[v2], [%[w1]], #8\n\t"
                     "vmladava.s16 %[a0], %q[xv], %q[v1]\n\t"
                     "vldrb.s16 %q[v1], [%[w2]], #8\n\t"
                     "vmladava.s16 %[a1], %q[xv], %q[v2]\n\t"
                     "vldrb.s16 %q[v2], [%[w3]], #8\n\t"
                     "vmladava.s16 %[a2], %q[xv], %q[v1]\n\t"
                     "vmladava.s16 %[a3], %q[xv], %q[v2]\n\t"
                     "letp lr, 1b"
                     : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [x] "+l"(x), [w0] "+l"(w0),
                       [w1] "+l"(w1), [w2] "+l"(w2), [w3] "+l"(w3), [xv] "=&w"(xv), [v1] "=&w"(v1), [v2] "=&w"(v2)
                     : [n] "r"(n), [zv] "w"(zv)
                     : "lr", "memory");
    s[0] = a0, s[1] = a1, s[2] = a2, s[3] = a3;
}

/* 4 adjacent channels' depthwise sums over a window's taps (rows of `cols` taps, xstep and wstep bytes apart in x
 * and w, xrow and wrow from a row to the next), each tap's 4 bytes of x and of w widened into 32-bit lanes:
 * (x - xz) * w added lane by lane (VLDRB.S32, VSUB, VMUL, VADD) */
static inline int32x4_t tfl_pmve_dw4(const int8_t *x, const int8_t *w, int32_t rows, int32_t cols, ptrdiff_t xstep,
                                     ptrdiff_t wstep, ptrdiff_t xrow, ptrdiff_t wrow, int32_t xz) {
    int32x4_t acc = vdupq_n_s32(0);
    for (int32_t i = 0; i < rows; ++i, x += xrow, w += wrow) {
        const int8_t *xp = x, *wp = w;
        for (int32_t j = 0; j < cols; ++j, xp += xstep, wp += wstep)
            acc = vaddq_s32(acc, vmulq_s32(vsubq_n_s32(vldrbq_s32(xp), xz), vldrbq_s32(wp)));
    }
    return acc;
}

/* requant_double of 4 lanes by the same multiplier and shift (tfl_mve_rq's arithmetic: VQRDMULH is
 * SaturatingRoundingDoublingHighMul, the rounding divide the rounding shift after -1 on negative values) */
static inline int32x4_t tfl_pmve_rq(int32x4_t v, int32x4_t mult, int32x4_t shift) {
    const int32x4_t zero4 = vdupq_n_s32(0), neg_right = vminq_s32(shift, zero4); /* -right */
    const int32x4_t r = vqrdmulhq_s32(vshlq_s32(v, vmaxq_s32(shift, zero4)), mult);
    return vrshlq_s32(vqaddq_s32(r, vshrq_n_s32(vandq_s32(r, neg_right), 31)), neg_right); /* -1 where r < 0, right > 0 */
}
/* 4 channels' sums (biases added) requantised as requant_double does, plus the zero point, clamped: about 15
 * instructions for the scalar form's 4 x 40 */
static inline int32x4_t tfl_pmve_requant4(int32x4_t v, const int32_t *mult, const int32_t *shift, int32_t zero,
                                          int32_t lo, int32_t hi) {
    const int32x4_t r = vaddq_n_s32(tfl_pmve_rq(v, vld1q_s32(mult), vld1q_s32(shift)), zero);
    return vminq_s32(vmaxq_s32(r, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}
#endif
#endif
#ifndef TFL_PMVE_ISA /* (the portable loops' Helium dot products: only with AOTC_NO_INTRINSICS, on a core with Helium) */
#define TFL_PMVE_ISA 0
#endif

#endif /* AOTC_TFLITE_INT8_INTERNAL_H */
