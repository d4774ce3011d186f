/* TFLite's int8 kernels (tflite_int8_*.c) with Helium (MVE, Cortex-M55: __ARM_FEATURE_MVE), written
 * with arm_mve.h; AOTC_NO_MVE, or a core without it, keeps the DSP / plain paths. Bit for bit the
 * plain loops' outputs:
 *   - the sums: sum (x - x_zero) w = sum x w - x_zero sum w, the first by VMLADAVA.S8 (16 byte
 *     products added to a 32-bit scalar a instruction), the weight sums once per call (VADDVA.S8);
 *     a tap in the padding holds x_zero (adding 0, as TFLite's kernels skip it);
 *   - the requantisation of 4 channels at a time: VQRDMULH is TFLite's
 *     SaturatingRoundingDoublingHighMul (saturation included), and RoundingDivideByPOT's
 *     half-away-from-zero is the rounding shift (half up) after adding -1 to negative values
 *     when the shift is not 0 (floor((r - 1 + 2^(e-1)) / 2^e) = q + (m > 2^(e-1)) for
 *     r = q 2^e + m, as the reference's remainder test; INT32_MIN saturates to itself).
 * The paths (CONV_2D's and its fused ADD's in tflite_int8_conv.c, DEPTHWISE_CONV_2D's in
 * tflite_int8_depthwise.c, FULLY_CONNECTED's in tflite_int8_fc.c) return 0 when they do not take the
 * case; this header holds their dot products and requantisations, the DSP depthwise path's too. The
 * hot loops are inline assembly (gcc grouped the loads before the multiplies and reloaded pointers
 * from the stack): tail-predicated DLSTP / LETP loops whose loads and multiply-accumulates alternate
 * pipes (the M55 overlaps them: docs/firmware.md's cycle model), 4 output channels a loop, and the
 * usual requantisation (every shift right, int8's own clamp) by saturating narrows. Included by
 * tflite_int8_dsp.h. */
#ifndef AOTC_TFLITE_INT8_MVE_H
#define AOTC_TFLITE_INT8_MVE_H

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && !defined(AOTC_NO_MVE) && !defined(AOTC_NO_INTRINSICS)
#define AOTC_TFL_MVE 1
#include <arm_mve.h>
/* The assembly loops that take every general register but sp and pc (tfl_mve_pw_group, tfl_mve_dot_groups, the
 * depthwise rows): not where gcc keeps a frame pointer (-O0, a Debug build), which then runs their C forms (or the
 * DSP path) */
#if defined(__OPTIMIZE__)
#define TFL_MVE_ALL_REGS 1
#else
#define TFL_MVE_ALL_REGS 0
#endif

/* TFL_MVE_K, TFL_MVE_OC: the CONV_2D path's limits, with the scratch it takes, in aotc_tflite_int8.h */

/* acc[j] = sum over i < k of x[i] * w[j * ld + i], j < 4 (k >= 1), as one vector, by a tail-predicated
 * low-overhead loop (DLSTP/LETP: the last partial vector's lanes past k load as zeros and add
 * nothing) whose loads and VMLADAVAs alternate, so that each starts in the other's second beat
 * (the M55 overlaps instructions of different pipes): 9 instructions, about 10 cycles, per 64 MACs.
 * Written out because gcc groups the five loads before the four VMLADAVAs (17 cycles). */
static inline __attribute__((always_inline)) int32x4_t tfl_mve_dot4q(const int8_t *x, int32_t k, const int8_t *w,
                                                                    int32_t ld) {
    const int8_t *w0 = w, *w1 = w + ld, *w2 = w + 2 * ld, *w3 = w + 3 * ld;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32x4_t r, xv, v1, v2;
    __asm__ volatile("dlstp.8 lr, %[k]\n"
                     "1:\n\t"
                     "vldrb.8 %q[xv], [%[x]], #16\n\t"
                     "vldrb.8 %q[v1], [%[w0]], #16\n\t"
                     "vmladava.s8 %[a0], %q[xv], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w1]], #16\n\t"
                     "vmladava.s8 %[a1], %q[xv], %q[v2]\n\t"
                     "vldrb.8 %q[v1], [%[w2]], #16\n\t"
                     "vmladava.s8 %[a2], %q[xv], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w3]], #16\n\t"
                     "vmladava.s8 %[a3], %q[xv], %q[v2]\n\t"
                     "letp lr, 1b\n\t"
                     "vmov %q[r][2], %q[r][0], %[a0], %[a2]\n\t"
                     "vmov %q[r][3], %q[r][1], %[a1], %[a3]"
                     : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [x] "+r"(x), [w0] "+r"(w0),
                       [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [r] "=&w"(r), [xv] "=&w"(xv), [v1] "=&w"(v1),
                       [v2] "=&w"(v2)
                     : [k] "r"(k)
                     : "lr", "memory");
    return r;
}

/* sum over i < k of x[i] * w[i] (k >= 1) as tfl_mve_dot4q's one row, 16 bytes a turn in 8-bit lanes (VLDRB.8,
 * VMLADAVA.S8; a last partial turn's lanes past k load as zeros): Helium's CONV_2D one channel a dot product
 * (tflite_int8_conv.c, the M55's "mve-conv-single8" and "mve-conv-single" --flash-budget levels), less code around it
 * than tfl_mve_dot4q; the same size as 8 bytes a turn widened to 16 bits, in half the turns (IC ResNet-8 1.72x level
 * none's est. cycles against 2.51x) */
TFL_UNUSED static inline __attribute__((always_inline)) int32_t tfl_mve_dot1_8(const int8_t *x, int32_t k,
                                                                              const int8_t *w) {
    int32_t a = 0;
    int8x16_t xv, wv;
    __asm__ volatile("dlstp.8 lr, %[k]\n"
                     "1:\n\t"
                     "vldrb.8 %q[xv], [%[x]], #16\n\t"
                     "vldrb.8 %q[wv], [%[w]], #16\n\t"
                     "vmladava.s8 %[a], %q[xv], %q[wv]\n\t"
                     "letp lr, 1b"
                     : [a] "+Te"(a), [x] "+r"(x), [w] "+r"(w), [xv] "=&w"(xv), [wv] "=&w"(wv)
                     : [k] "r"(k)
                     : "lr", "memory");
    return a;
}

/* sum over i < k of x[i] * w[i] (k >= 1), and of w[i] into *ws, 16 bytes a turn in 8-bit lanes: each weight load
 * then its sum (VADDVA.S8), the input's load then the products' (VMLADAVA.S8), alternating pipes; a last partial
 * turn's lanes past k load as zeros. Helium's FULLY_CONNECTED one output at a time (tflite_int8_fc.c, the M55's
 * "mve-fc-compact" --flash-budget level, issue 67): the least code a Helium dot product with x's zero point takes. */
TFL_UNUSED static inline __attribute__((always_inline)) int32_t tfl_mve_dot1_sum8(const int8_t *x, int32_t k,
                                                                                 const int8_t *w, int32_t *ws) {
    int32_t a = 0, s = 0;
    int8x16_t xv, wv;
    __asm__ volatile("dlstp.8 lr, %[k]\n"
                     "1:\n\t"
                     "vldrb.8 %q[wv], [%[w]], #16\n\t"
                     "vaddva.s8 %[s], %q[wv]\n\t"
                     "vldrb.8 %q[xv], [%[x]], #16\n\t"
                     "vmladava.s8 %[a], %q[xv], %q[wv]\n\t"
                     "letp lr, 1b"
                     : [a] "+Te"(a), [s] "+Te"(s), [x] "+r"(x), [w] "+r"(w), [xv] "=&w"(xv), [wv] "=&w"(wv)
                     : [k] "r"(k)
                     : "lr", "memory");
    *ws = s;
    return a;
}

/* requant_single, (acc * mult + 2^(t - 1)) >> t with t = 31 - shift (1 .. 62), by one rounding shift of the 64-bit
 * product (SQRSHRL by register: its right shift rounds half up as that sum does, and never saturates): fewer
 * instructions than the sum's 64-bit shifts */
TFL_UNUSED static inline __attribute__((always_inline)) int32_t tfl_mve_requant_single(int32_t acc, int32_t mult,
                                                                                      int32_t shift) {
    return (int32_t)sqrshrl((int64_t)acc * mult, 31 - shift);
}

/* The sums of 4 rows of k weights (ld bytes apart) as one vector, tfl_mve_dot4q's loop with VADDVA: each load
 * then its sum, alternating pipes (gcc grouped the loads: FULLY_CONNECTED's weight sums cost more than its MACs) */
static inline __attribute__((always_inline)) int32x4_t tfl_mve_sum4q(int32_t k, const int8_t *w, int32_t ld) {
    const int8_t *w0 = w, *w1 = w + ld, *w2 = w + 2 * ld, *w3 = w + 3 * ld;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int32x4_t r, v1, v2;
    __asm__ volatile("dlstp.8 lr, %[k]\n"
                     "1:\n\t"
                     "vldrb.8 %q[v1], [%[w0]], #16\n\t"
                     "vaddva.s8 %[s0], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w1]], #16\n\t"
                     "vaddva.s8 %[s1], %q[v2]\n\t"
                     "vldrb.8 %q[v1], [%[w2]], #16\n\t"
                     "vaddva.s8 %[s2], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w3]], #16\n\t"
                     "vaddva.s8 %[s3], %q[v2]\n\t"
                     "letp lr, 1b\n\t"
                     "vmov %q[r][2], %q[r][0], %[s0], %[s2]\n\t"
                     "vmov %q[r][3], %q[r][1], %[s1], %[s3]"
                     : [s0] "+Te"(s0), [s1] "+Te"(s1), [s2] "+Te"(s2), [s3] "+Te"(s3), [w0] "+r"(w0), [w1] "+r"(w1),
                       [w2] "+r"(w2), [w3] "+r"(w3), [r] "=&w"(r), [v1] "=&w"(v1), [v2] "=&w"(v2)
                     : [k] "r"(k)
                     : "lr", "memory");
    return r;
}

/* sum over i < k of w[i] */
TFL_UNUSED static int32_t tfl_mve_sum(const int8_t *w, int32_t k) {
    int32_t s = 0, i = 0;
    for (; i + 16 <= k; i += 16) s = vaddvaq_s8(s, vldrbq_s8(w + i));
    if (i < k) s = vaddvaq_s8(s, vldrbq_z_s8(w + i, vctp8q((uint32_t)(k - i))));
    return s;
}
/* Four channels' sums (plus their biases) requantised as requant_double does, plus the zero point,
 * clamped, stored to y[0 .. 3]. */
static inline void tfl_mve_requant4(int32x4_t v, const int32_t *mult, const int32_t *shift, int32_t zero, int32_t lo,
                                    int32_t hi, int8_t *y) {
    const int32x4_t sh = vld1q_s32(shift), zero4 = vdupq_n_s32(0);
    const int32x4_t left = vmaxq_s32(sh, zero4), neg_right = vminq_s32(sh, zero4); /* -right */
    int32x4_t r = vqrdmulhq_s32(vshlq_s32(v, left), vld1q_s32(mult));
    r = vqaddq_s32(r, vshrq_n_s32(vandq_s32(r, neg_right), 31)); /* -1 where r < 0 and right > 0 */
    r = vaddq_n_s32(vrshlq_s32(r, neg_right), zero);
    r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(lo)), vdupq_n_s32(hi));
    vstrbq_s32(y, r);
}
/* requant_double of 4 lanes (tfl_mve_requant4's arithmetic), before the zero point and the clamp */
static inline __attribute__((always_inline)) int32x4_t tfl_mve_rq(int32x4_t v, int32x4_t mult, int32x4_t left,
                                                                  int32x4_t neg_right) {
    const int32x4_t r = vqrdmulhq_s32(vshlq_s32(v, left), mult);
    return vrshlq_s32(vqaddq_s32(r, vshrq_n_s32(vandq_s32(r, neg_right), 31)), neg_right);
}

/* tfl_mve_requant4 with the channels' terms as vectors (a loop over positions keeps them): left = max(shift, 0),
 * neg_right = min(shift, 0) */
static inline __attribute__((always_inline)) void tfl_mve_requant4v(int32x4_t v, int32x4_t mult, int32x4_t left,
                                                                    int32x4_t neg_right, int32_t zero, int32_t lo,
                                                                    int32_t hi, int8_t *y) {
    int32x4_t r = vqrdmulhq_s32(vshlq_s32(v, left), mult);
    r = vqaddq_s32(r, vshrq_n_s32(vandq_s32(r, neg_right), 31));
    r = vaddq_n_s32(vrshlq_s32(r, neg_right), zero);
    r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(lo)), vdupq_n_s32(hi));
    vstrbq_s32(y, r);
}
/* tfl_mve_requant4's usual case in fewer instructions, where every channel shifts right (shift < 0: no left shift,
 * and -1 added to every negative value) and the clamp is int8's own (y_min -128, y_max 127: the saturating narrows
 * make it); tfl_mve_requant_usual tells whether p's outputs are all so. */
static inline __attribute__((always_inline)) void tfl_mve_requant4u(int32x4_t v, int32x4_t mult, int32x4_t neg_right,
                                                                    int32_t zero, int8_t *y) {
    int32x4_t r = vqrdmulhq_s32(v, mult);
    r = vaddq_n_s32(vrshlq_s32(vqaddq_s32(r, vshrq_n_s32(r, 31)), neg_right), zero);
    const int16x8_t h = vqmovnbq_s32(vreinterpretq_s16_s32(r), r);
    vstrbq_s32(y, vreinterpretq_s32_s8(vqmovnbq_s16(vreinterpretq_s8_s16(h), h)));
}
/* A 1 x 1 CONV_2D's group of 4 output channels over n positions in one assembly loop (every GPR but sp and pc:
 * the positions' count kept in memory), where the patches are whole vectors (k a multiple of 16, each position's
 * k bytes right after the one before) and the requantisation is the usual one (tfl_mve_requant4u's): per position
 * the weights' 4 rows from wb, k / 16 turns of tfl_mve_dot4q's loop, the sums plus ws requantised and stored
 * to y (then y + oc, ...). No scalar work of gcc's between positions (its loop took 45 cycles a position for
 * what is here about 20). */
static inline __attribute__((always_inline)) void tfl_mve_pw_group(const int8_t *x, int32_t k, const int8_t *wb,
                                                                   int8_t *y, int32_t oc, int32_t n, int32x4_t ws,
                                                                   int32x4_t mult, int32x4_t nright, int32x4_t yzv) {
#if !TFL_MVE_ALL_REGS
    for (; n > 0; --n, x += k, y += oc)
        tfl_mve_requant4u(vaddq_s32(tfl_mve_dot4q(x, k, wb, k), ws), mult, nright, vgetq_lane_s32(yzv, 0), y);
#else
    int32_t a0, a1, a2, a3, cnt = n;
    const int8_t *w0, *w1, *w2, *w3;
    int32x4_t xv, v1, v2, r;
    __asm__ volatile("1:\n\t"
                     "mov %[w0], %[wb]\n\t"
                     "add %[w1], %[wb], %[k]\n\t"
                     "add %[w2], %[w1], %[k]\n\t"
                     "add %[w3], %[w2], %[k]\n\t"
                     "mov %[a0], #0\n\t"
                     "mov %[a1], #0\n\t"
                     "mov %[a2], #0\n\t"
                     "mov %[a3], #0\n\t"
                     "dlstp.8 lr, %[k]\n"
                     "2:\n\t"
                     "vldrb.8 %q[xv], [%[x]], #16\n\t"
                     "vldrb.8 %q[v1], [%[w0]], #16\n\t"
                     "vmladava.s8 %[a0], %q[xv], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w1]], #16\n\t"
                     "vmladava.s8 %[a1], %q[xv], %q[v2]\n\t"
                     "vldrb.8 %q[v1], [%[w2]], #16\n\t"
                     "vmladava.s8 %[a2], %q[xv], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w3]], #16\n\t"
                     "vmladava.s8 %[a3], %q[xv], %q[v2]\n\t"
                     "letp lr, 2b\n\t"
                     "vmov %q[r][2], %q[r][0], %[a0], %[a2]\n\t"
                     "vmov %q[r][3], %q[r][1], %[a1], %[a3]\n\t"
                     "vadd.i32 %q[r], %q[r], %q[ws]\n\t"
                     "vqrdmulh.s32 %q[r], %q[r], %q[m]\n\t"
                     "vshr.s32 %q[v1], %q[r], #31\n\t"
                     "vqadd.s32 %q[r], %q[r], %q[v1]\n\t"
                     "vrshl.s32 %q[r], %q[r], %q[nr]\n\t"
                     "vadd.i32 %q[r], %q[r], %q[yz]\n\t"
                     "vqmovnb.s32 %q[r], %q[r]\n\t"
                     "vqmovnb.s16 %q[r], %q[r]\n\t"
                     "vstrb.32 %q[r], [%[y]]\n\t"
                     "add %[y], %[y], %[oc]\n\t"
                     "ldr %[a0], %[cnt]\n\t"
                     "subs %[a0], %[a0], #1\n\t"
                     "str %[a0], %[cnt]\n\t"
                     "bne 1b"
                     : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [w0] "=&r"(w0),
                       [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [xv] "=&w"(xv), [v1] "=&w"(v1),
                       [v2] "=&w"(v2), [r] "=&w"(r), [x] "+r"(x), [y] "+l"(y), [cnt] "+m"(cnt)
                     : [wb] "r"(wb), [k] "r"(k), [oc] "r"(oc), [ws] "w"(ws), [m] "w"(mult), [nr] "w"(nright),
                       [yz] "w"(yzv)
                     : "lr", "cc", "memory");
#endif
}

/* The sums of ng groups of 4 channels (weights' rows of k bytes, consecutive from wg) over one patch x to
 * s[0 .. 4 ng), in one assembly loop: tfl_mve_dot4q's per group, the group's pointers set with 4 additions and its
 * sums stored with 2 STRDs (gcc's loop around tfl_mve_dot4q reloaded its pointers from the stack: about 30 cycles
 * a group more). Every GPR but sp and pc: the count kept in memory. */
static inline __attribute__((always_inline)) void tfl_mve_dot_groups(const int8_t *x, int32_t k, const int8_t *wg,
                                                                     int32_t ng, int32_t *s) {
#if !TFL_MVE_ALL_REGS
    for (; ng > 0; --ng, wg += 4 * k, s += 4) vst1q_s32(s, tfl_mve_dot4q(x, k, wg, k));
#else
    /* the sums in low registers, so that their zeroing is 16-bit MOVS, which the M55 issues two a cycle; the loop
     * counted by s against its end (no store of a count): ResNet-8 on the M55, 2 est. cycles a group fewer */
    register int32_t a0 __asm__("r0"), a1 __asm__("r2"), a2 __asm__("r4"), a3 __asm__("r6");
    const int32_t *send = s + 4 * ng;
    const int8_t *xp, *w0, *w1, *w2, *w3;
    int32x4_t xv, v1, v2;
    __asm__ volatile("1:\n\t"
                     "mov %[xp], %[x]\n\t"
                     "mov %[w0], %[wg]\n\t"
                     "add %[w1], %[wg], %[k]\n\t"
                     "add %[w2], %[w1], %[k]\n\t"
                     "add %[w3], %[w2], %[k]\n\t"
                     "movs %[a0], #0\n\t"
                     "movs %[a1], #0\n\t"
                     "movs %[a2], #0\n\t"
                     "movs %[a3], #0\n\t"
                     "dlstp.8 lr, %[k]\n"
                     "2:\n\t"
                     "vldrb.8 %q[xv], [%[xp]], #16\n\t"
                     "vldrb.8 %q[v1], [%[w0]], #16\n\t"
                     "vmladava.s8 %[a0], %q[xv], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w1]], #16\n\t"
                     "vmladava.s8 %[a1], %q[xv], %q[v2]\n\t"
                     "vldrb.8 %q[v1], [%[w2]], #16\n\t"
                     "vmladava.s8 %[a2], %q[xv], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w3]], #16\n\t"
                     "vmladava.s8 %[a3], %q[xv], %q[v2]\n\t"
                     "letp lr, 2b\n\t"
                     "strd %[a0], %[a1], [%[s]], #8\n\t"
                     "strd %[a2], %[a3], [%[s]], #8\n\t"
                     "add %[wg], %[wg], %[k], lsl #2\n\t"
                     "ldr %[a0], %[send]\n\t"
                     "cmp %[s], %[a0]\n\t"
                     "bne 1b"
                     : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [xp] "=&r"(xp),
                       [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [xv] "=&w"(xv),
                       [v1] "=&w"(v1), [v2] "=&w"(v2), [wg] "+r"(wg), [s] "+r"(s)
                     : [x] "r"(x), [k] "r"(k), [send] "m"(send)
                     : "lr", "cc", "memory");
#endif
}

/* ng groups of 4 sums s (plus ws) requantised the usual way (tfl_mve_requant4u's: mult, and shift < 0 as it is)
 * to y[0 .. 4 ng), in one low-overhead loop, every operand by a post-indexed load (gcc's loop reloaded its
 * pointers and copied the narrows' registers: about 40 cycles a group, here about 20). ng >= 1. */
static inline __attribute__((always_inline)) void tfl_mve_requant_groups(const int32_t *s, const int32_t *ws,
                                                                         const int32_t *mult, const int32_t *shift,
                                                                         int32x4_t yzv, int8_t *y, int32_t ng) {
    int32x4_t v, t;
    __asm__ volatile("dls lr, %[n]\n"
                     "1:\n\t"
                     "vldrw.32 %q[v], [%[s]], #16\n\t"
                     "vldrw.32 %q[t], [%[ws]], #16\n\t"
                     "vadd.i32 %q[v], %q[v], %q[t]\n\t"
                     "vldrw.32 %q[t], [%[m]], #16\n\t"
                     "vqrdmulh.s32 %q[v], %q[v], %q[t]\n\t"
                     "vshr.s32 %q[t], %q[v], #31\n\t"
                     "vqadd.s32 %q[v], %q[v], %q[t]\n\t"
                     "vldrw.32 %q[t], [%[sh]], #16\n\t"
                     "vrshl.s32 %q[v], %q[v], %q[t]\n\t"
                     "vadd.i32 %q[v], %q[v], %q[yz]\n\t"
                     "vqmovnb.s32 %q[v], %q[v]\n\t"
                     "vqmovnb.s16 %q[v], %q[v]\n\t"
                     "vstrb.32 %q[v], [%[y]], #4\n\t"
                     "le lr, 1b"
                     : [v] "=&w"(v), [t] "=&w"(t), [s] "+r"(s), [ws] "+r"(ws), [m] "+r"(mult), [sh] "+r"(shift),
                       [y] "+l"(y)
                     : [n] "r"(ng), [yz] "w"(yzv)
                     : "lr", "memory");
}

/* n bytes from s to d (a tail-predicated loop), and n bytes of v at d: 16 a vector, the last ones predicated (a
 * patch's rows: memcpy's call and word loop cost more for a few dozen bytes) */
static inline __attribute__((always_inline)) void tfl_mve_copy(int8_t *d, const int8_t *s, int32_t n) {
    int8x16_t v;
    if (n <= 0) return;
    __asm__ volatile("dlstp.8 lr, %[n]\n"
                     "1:\n\t"
                     "vldrb.8 %q[v], [%[s]], #16\n\t"
                     "vstrb.8 %q[v], [%[d]], #16\n\t"
                     "letp lr, 1b"
                     : [v] "=&w"(v), [s] "+r"(s), [d] "+r"(d)
                     : [n] "r"(n)
                     : "lr", "memory");
}
/* rows runs of n bytes (n >= 1, rows >= 1), step bytes apart from s, to d one after the other: a patch's window rows
 * inside the image in one assembly loop (the C loop around tfl_mve_copy, its tests and its pointers from the stack,
 * took about 18 instructions a row; ResNet-8's 3 x 3 layers on the M55) */
static inline __attribute__((always_inline)) void tfl_mve_copy_rows(int8_t *d, const int8_t *s, int32_t n,
                                                                    int32_t step, int32_t rows) {
    const int8_t *t;
    int8_t *u;
    int8x16_t v;
    __asm__ volatile("1:\n\t"
                     "mov %[t], %[s]\n\t"
                     "mov %[u], %[d]\n\t"
                     "dlstp.8 lr, %[n]\n"
                     "2:\n\t"
                     "vldrb.8 %q[v], [%[t]], #16\n\t"
                     "vstrb.8 %q[v], [%[u]], #16\n\t"
                     "letp lr, 2b\n\t"
                     "add %[s], %[s], %[step]\n\t"
                     "add %[d], %[d], %[n]\n\t"
                     "subs %[rows], %[rows], #1\n\t"
                     "bne 1b"
                     : [v] "=&w"(v), [t] "=&r"(t), [u] "=&r"(u), [s] "+r"(s), [d] "+r"(d), [rows] "+r"(rows)
                     : [n] "r"(n), [step] "r"(step)
                     : "lr", "cc", "memory");
}
static inline __attribute__((always_inline)) void tfl_mve_fill(int8_t *d, int32_t v, int32_t n) {
    const int8x16_t b = vdupq_n_s8((int8_t)v);
    int32_t i;
    for (i = 0; i < n; i += 16) vstrbq_p_s8(d + i, b, vctp8q((uint32_t)(n - i)));
}

TFL_UNUSED static int tfl_mve_requant_usual(const int32_t *shift, int32_t n, int32_t lo, int32_t hi) {
    int32_t i;
    if (lo != -128 || hi != 127) return 0;
    for (i = 0; i < n; ++i)
        if (shift[i] >= 0) return 0;
    return 1;
}
#else
#define AOTC_TFL_MVE 0
#endif
#endif /* AOTC_TFLITE_INT8_MVE_H */
