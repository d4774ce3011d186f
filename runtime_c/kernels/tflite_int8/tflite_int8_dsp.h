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

/* aotc_dsp_mac4x2 with the sums started at the bias and requantised and stored in its epilogue, where
 * every channel takes tfl_dsp_requant_run's SMMLAR path with right > 0 and the clamp is SSAT's alone
 * (y_min -128, y_max 127; right > 0 makes the left shift 0): for each of `count` position pairs i (the
 * patches as aotc_dsp_mac4x2's) and channel j < 4, with rq = {bias[4], then mult, ra, right of each
 * channel} (ra: tfl_dsp_requant_run's rounding term and zero point), a = (bias_j + sums) << 1,
 * y[2 i oc + t oc + j] = SSAT8((ra + ((a mult + 2^31) >> 32) + (a >> 31)) >> right) for t = 0, 1.
 * The sums never go to memory: a pair is one LDM of w, its sums at the biases and the PC (into the loop, no BX;
 * conditional on the pairs left, counted by the patch pointer), its quads and, per channel, one LDM of its 3
 * terms and 5 instructions an output, then 8 byte stores. In assembly naked, as aotc_dsp_mac4x2 (the same
 * quads, entered past (-nq) mod 8); its locals, walked by r0 from sp in the epilogue (the patch pointer kept
 * at [sp, #60] across it): [sp .. #44] the channels' terms, [sp, #48] y, [sp, #52] oc, [sp, #56] the patches'
 * end, [sp, #64] w, [sp, #68 .. #96] each bias twice, [sp, #100] the loop's entry, [sp, #104] the weights'
 * end. */
#if AOTC_DSP_ASM
/* (aotc_dsp_mac4x2_rq2's: the sums come doubled, by doubled weights or patches, so no shift before the SMMLAR) */
#define TFL_DSP_RQ2_DOUBLED_MATH(a, b)                                                                   \
    "smmlar lr, " a ", r1, r2\n\t"                                                                      \
    "add " a ", lr, " a ", asr #31\n\t"                                                                 \
    "asr " a ", " a ", r3\n\t"                                                                          \
    "ssat " a ", #8, " a "\n\t"                                                                         \
    "smmlar lr, " b ", r1, r2\n\t"                                                                      \
    "add " b ", lr, " b ", asr #31\n\t"                                                                 \
    "asr " b ", " b ", r3\n\t"                                                                          \
    "ssat " b ", #8, " b "\n\t"
#define TFL_DSP_RQ2_MATH(a, b)                                                                           \
    "lsl lr, " a ", #1\n\t"                                                                             \
    "smmlar " a ", lr, r1, r2\n\t"                                                                      \
    "add " a ", " a ", lr, asr #31\n\t"                                                                 \
    "asr " a ", " a ", r3\n\t"                                                                          \
    "ssat " a ", #8, " a "\n\t"                                                                         \
    "lsl lr, " b ", #1\n\t"                                                                             \
    "smmlar " b ", lr, r1, r2\n\t"                                                                      \
    "add " b ", " b ", lr, asr #31\n\t"                                                                 \
    "asr " b ", " b ", r3\n\t"                                                                          \
    "ssat " b ", #8, " b "\n\t"
#define TFL_DSP_RQ2_TERMS "ldmia r0!, {r1, r2, r3}\n\t" /* the channel's mult, ra, right */
/* a pair's 8 outputs: position 0's 4 channels at y (r1), position 1's at y + oc (lr) */
#define TFL_DSP_RQ_STORES                                                                                \
    "strb r4, [r1]\n\t"                                                                                \
    "strb r6, [r1, #1]\n\t"                                                                            \
    "strb r8, [r1, #2]\n\t"                                                                            \
    "strb r10, [r1, #3]\n\t"                                                                           \
    "strb r5, [lr]\n\t"                                                                                \
    "strb r7, [lr, #1]\n\t"                                                                            \
    "strb r9, [lr, #2]\n\t"                                                                            \
    "strb r11, [lr, #3]\n\t"
#if AOTC_DSP_M33
/* The M33's epilogue of a pair of aotc_dsp_mac4x2_rq and _rq2 (M: their requantisation of a channel's two sums, lr
 * its temporary) and of tflite_int8_conv.c's tfl_dsp_mac4x2_rqa (the same frame to #60, LOAD_NEXT its next pair's
 * start after its test of the patches' end): each word of the frame by a single LDR from sp (the M33 loads a word in 1 cycle, an LDM of N in 1 + N),
 * so the patch pointer r0 stays put, not stored and loaded again around a walk of the terms; the pair's end test a
 * BEQ (to 9), not taken but at the last pair: the next pair by LDRs and an LDR of the PC, not the LDMNE after its IT.
 * Each requantisation's first instruction reads the terms loaded before its last LDR only (no load-use stall). */
#define TFL_DSP_RQ_TERMS_M33(off)                                                                        \
    "ldr r1, [sp, #" #off "]\n\t"                                                                      \
    "ldr r2, [sp, #(" #off " + 4)]\n\t"                                                                \
    "ldr r3, [sp, #(" #off " + 8)]\n\t"
#define TFL_DSP_RQ_PAIR_END_AT(M, LOAD_NEXT)                                                             \
    TFL_DSP_RQ_TERMS_M33(0) M("r4", "r5") TFL_DSP_RQ_TERMS_M33(12) M("r6", "r7")                         \
    TFL_DSP_RQ_TERMS_M33(24) M("r8", "r9") TFL_DSP_RQ_TERMS_M33(36) M("r10", "r11")                      \
    "ldr r1, [sp, #48]\n\t" /* y, oc, the patches' end */                                              \
    "ldr r2, [sp, #52]\n\t"                                                                            \
    "ldr r3, [sp, #56]\n\t"                                                                            \
    "add lr, r1, r2\n\t" TFL_DSP_RQ_STORES                                                             \
    "add r1, lr, r2\n\t"                                                                              \
    "str r1, [sp, #48]\n\t"                                                                           \
    "cmp r0, r3\n\t" LOAD_NEXT
/* (aotc_dsp_mac4x2_rq's next pair: w at #64, its sums at the biases #68 .. #96, the loop's entry at #100) */
#define TFL_DSP_RQ_PAIR_END(M)                                                                           \
    TFL_DSP_RQ_PAIR_END_AT(M, "beq 9f\n\t"                                                             \
                              "ldr r1, [sp, #64]\n\t"                                                  \
                              "ldr r4, [sp, #68]\n\t"                                                  \
                              "ldr r5, [sp, #72]\n\t"                                                  \
                              "ldr r6, [sp, #76]\n\t"                                                  \
                              "ldr r7, [sp, #80]\n\t"                                                  \
                              "ldr r8, [sp, #84]\n\t"                                                  \
                              "ldr r9, [sp, #88]\n\t"                                                  \
                              "ldr r10, [sp, #92]\n\t"                                                 \
                              "ldr r11, [sp, #96]\n\t"                                                 \
                              "ldr pc, [sp, #100]\n")
#else
#define TFL_DSP_RQ_PAIR_END(M)                                                                           \
    "str r0, [sp, #60]\n\t" /* the epilogue: channel 0's terms at sp, then r0 walks the rest */         \
    "ldm sp, {r1, r2, r3}\n\t"                                                                         \
    "add r0, sp, #12\n\t"                                                                              \
    M("r4", "r5") TFL_DSP_RQ2_TERMS M("r6", "r7") TFL_DSP_RQ2_TERMS M("r8", "r9") TFL_DSP_RQ2_TERMS         \
    M("r10", "r11")                                                                                      \
    "ldmia r0!, {r1, r2, r3}\n\t" /* y, oc, the patches' end */                                         \
    "add lr, r1, r2\n\t" TFL_DSP_RQ_STORES                                                             \
    "add r1, lr, r2\n\t"                                                                              \
    "str r1, [r0, #-12]\n\t"                                                                          \
    "ldr r0, [r0]\n\t"                                                                                \
    "add r12, sp, #64\n\t"                                                                            \
    "cmp r0, r3\n\t"                                                                                  \
    "it ne\n\t"                                                                                       \
    "ldmne r12, {r1, r4-r11, pc}\n" /* the next pair */
#endif
#define TFL_DSP_ARG __attribute__((unused)) /* a naked function's arguments are its assembly's registers */
/* The body of aotc_dsp_mac4x2_rq and aotc_dsp_mac4x2_rq2, M their requantisation of a channel's two sums */
#define TFL_DSP_MAC4X2_RQ_ASM(M) \
    "push {r4-r11, lr}\n\t" \
    "sub sp, sp, #108\n\t" AOTC_DSP_MAC4X2_WPRE \
    "cmp r1, #0\n\t" \
    "ble 9f\n\t" \
    "str r2, [sp, #64]\n\t" \
    "add r4, r2, r3, lsl #5\n\t" \
    "str r4, [sp, #104]\n\t" \
    "mul r7, r1, r3\n\t" /* the patches' end: 16 bytes a quad and pair */ \
    "add r7, r0, r7, lsl #4\n\t" \
    "ldr r5, [sp, #148]\n\t" \
    "ldr r6, [sp, #152]\n\t" \
    "add r4, sp, #48\n\t" \
    "stmia r4, {r5, r6, r7}\n\t" /* y, oc, the patches' end */ \
    "rsbs r5, r3, #0\n\t" \
    "and r5, r5, #7\n\t" \
    "movs r6, #104\n\t" \
    "adr.w r4, 1f\n\t" \
    "mla r4, r5, r6, r4\n\t" \
    "orr r4, r4, #1\n\t" \
    "str r4, [sp, #100]\n\t" \
    "ldr r12, [sp, #144]\n\t" \
    "ldmia r12!, {r4, r6, r8, r10}\n\t" /* the biases, each twice */ \
    "mov r5, r4\n\t" \
    "mov r7, r6\n\t" \
    "mov r9, r8\n\t" \
    "mov r11, r10\n\t" \
    "add r1, sp, #68\n\t" \
    "stmia r1, {r4-r11}\n\t" \
    "ldmia r12, {r1-r11, lr}\n\t" /* the 12 terms */ \
    "add r12, sp, #64\n\t" \
    "stmia sp, {r1-r11, lr}\n\t" \
    "ldm r12, {r1, r4-r11, pc}\n\t" /* the first pair: w, its sums at the biases, into the loop */ \
    ".p2align 2\n" \
    "1:\n\t" AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD \
    AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD \
    "ldr r2, [sp, #104]\n\t" \
    "cmp r1, r2\n\t" \
    "bne 1b\n\t" \
    TFL_DSP_RQ_PAIR_END(M) \
    "9:\n\t" \
    "add sp, sp, #108\n\t" \
    "pop {r4-r11, pc}\n\t"
__attribute__((naked, noinline, unused)) static void aotc_dsp_mac4x2_rq(TFL_DSP_ARG const uint32_t *p,
                                                                        TFL_DSP_ARG int32_t count,
                                                                        TFL_DSP_ARG const uint32_t *w,
                                                                        TFL_DSP_ARG int32_t nq,
                                                                        TFL_DSP_ARG const int32_t *rq,
                                                                        TFL_DSP_ARG int8_t *y, TFL_DSP_ARG int32_t oc) {
    /* r0 p, r1 count, r2 w, r3 nq; rq, y, oc on the stack at [sp, #144], #148, #152 after the prologue */
    __asm__ volatile(TFL_DSP_MAC4X2_RQ_ASM(TFL_DSP_RQ2_MATH));
}
/* aotc_dsp_mac4x2_rq on doubled sums: the weights (or the patches) doubled and rq's biases twice the bias, so the
 * requantisation's left shift of 1 is already made (4 instructions an output, not 5) */
__attribute__((naked, noinline, unused)) static void aotc_dsp_mac4x2_rq2(TFL_DSP_ARG const uint32_t *p,
                                                                         TFL_DSP_ARG int32_t count,
                                                                         TFL_DSP_ARG const uint32_t *w,
                                                                         TFL_DSP_ARG int32_t nq,
                                                                         TFL_DSP_ARG const int32_t *rq,
                                                                         TFL_DSP_ARG int8_t *y, TFL_DSP_ARG int32_t oc) {
    __asm__ volatile(TFL_DSP_MAC4X2_RQ_ASM(TFL_DSP_RQ2_DOUBLED_MATH));
}
/* aotc_dsp_mac4x2_rq2 where the lower clamp is the zero point -128 (a ReLU's, or none with that zero point): a sum
 * whose product term r is negative gives (r - 1 + 2^(right-1)) >> right <= 0 with TFLite's sign term and
 * (r + 2^(right-1)) >> right <= 0 without it, so both land at or below the zero point and SSAT makes them -128: the
 * sign term goes (3 instructions an output, not 4), and with it the epilogue's temporary, so the patch pointer r0
 * stays put. Its locals (walked by r12 from sp in the epilogue, so that each part is one LDM): [sp .. #44] the
 * channels' terms, [sp, #48] y, [sp, #52] oc, [sp, #56] the patches' end, [sp, #60] w, [sp, #64 .. #92] each bias
 * twice (the sums' start), [sp, #96] the loop's entry, [sp, #100] the weights' end. A pair starts with one LDM of w,
 * the sums and the PC (13 cycles: no BX), conditional on the pairs left (counted by the patch pointer); its end
 * is an LDM of y, oc and that end, the stores and y's store back: 29 cycles beyond the requantisation's 40, not
 * 34 (the terms' pointer r12 no longer stalls the first LDM: channel 0's are at sp). The quads: a pair's last 16 in
 * a block that falls into the epilogue (no test), those before in a loop of 16 a turn entered past (-nq) mod 16
 * (a turn 6 cycles, 4 the one into the last block); nq <= 16 enters the last block past (-nq) mod 16 itself, so a
 * pair of at most 16 quads tests nothing, one of 32 (a 128-channel layer's) once: 4 and 6 cycles fewer than one
 * loop of 16 tested each turn, for 16 quads of code (1.7 KB). [sp, #100] is the weights' end less a block's 512.
 * A tile's groups of 4 channels in one call (tfl_dsp_groups_rqb, on the compile-time weights and terms, dsp_wx's and
 * dsp_rq's layouts), their count less 1 in oc's upper half: group g's weights 8 nq g words on (where the last group's
 * ended), its terms 16 g words on, its outputs 4 g bytes on; [sp, #104] p, each group restarting there, rq, y and
 * the groups left stepped in their argument slots, a group's terms and biases copied to the frame as a call's were.
 * A call a group cost its push, pop, set-up (the patches' end, the loop's entry) and the C loop's turn: VWW -O3
 * --widened-weights 796 calls, now 105 (a tile each), 11,641,235 -> 11,587,822 est. cycles (aotc_dsp_mac4x2_rq3
 * 7,979,968 -> 7,958,915, tfl_conv_s8_dsp 140,998 -> ~108 K); a call of one group (without --widened-weights,
 * tfl_dsp_group_rq) pays the groups' test, 5 cycles (VWW +4 K of its +4.8 K at -O3). What is left beyond the quads (7.96 M - 6.61 M of
 * quads at 32 cycles) is the pairs' epilogue: 17,792 pairs at 72 cycles (24 of SMMLAR/ASR/SSAT, 16 of the terms'
 * 4 LDMs, 8 STRB, 24 of y's and the next pair's frame), near what 14 registers allow: 2 channels x 4 positions (a
 * channel's terms serving 4 outputs) would save about 6 of them (the terms 8 cycles less, the stores' addresses 3
 * more) but needs a 15th register (the second pair's patch) or a kernel a count of quads (its offset an immediate):
 * not tried. */
#if AOTC_DSP_M7
/* (the M7's order of the same 6: the two outputs' steps interleaved, so that neither waits on the other's SMMLAR and
 * SSAT results, 2 cycles each on the dual-issue model: 5 cycles, not 7) */
#define TFL_DSP_RQ3_MATH(a, b)                                                                           \
    "smmlar " a ", " a ", r1, r2\n\t"                                                                   \
    "smmlar " b ", " b ", r1, r2\n\t"                                                                   \
    "asr " a ", " a ", r3\n\t"                                                                          \
    "asr " b ", " b ", r3\n\t"                                                                          \
    "ssat " a ", #8, " a "\n\t"                                                                         \
    "ssat " b ", #8, " b "\n\t"
#else
#define TFL_DSP_RQ3_MATH(a, b)                                                                           \
    "smmlar " a ", " a ", r1, r2\n\t"                                                                   \
    "asr " a ", " a ", r3\n\t"                                                                          \
    "ssat " a ", #8, " a "\n\t"                                                                         \
    "smmlar " b ", " b ", r1, r2\n\t"                                                                   \
    "asr " b ", " b ", r3\n\t"                                                                          \
    "ssat " b ", #8, " b "\n\t"
#endif
/* a pair's 8 outputs: position 0's 4 channels at y (r1), position 1's at y + oc (lr) */
#define TFL_DSP_RQ3_STORES                                                                               \
    "strb r4, [r1]\n\t"                                                                                \
    "strb r6, [r1, #1]\n\t"                                                                            \
    "strb r8, [r1, #2]\n\t"                                                                            \
    "strb r10, [r1, #3]\n\t"                                                                           \
    "strb r5, [lr]\n\t"                                                                                \
    "strb r7, [lr, #1]\n\t"                                                                            \
    "strb r9, [lr, #2]\n\t"                                                                            \
    "strb r11, [lr, #3]\n\t"
#define TFL_DSP_RQ3(a, b)                                                                                \
    "ldmia r12!, {r1, r2, r3}\n\t" /* the channel's mult, ra, right */                                    \
    TFL_DSP_RQ3_MATH(a, b)
#if AOTC_DSP_M33
/* The M33's epilogue of a pair: every word of the frame by a single LDR at its offset from sp, not an LDM (the M33
 * loads a word in 1 cycle, an LDM of N in 1 + N: the terms 12 LDRs, not 4 LDMs of 3 and r12's ADD, 17 cycles; y, oc and
 * the end 3, not 4; the next pair's w, 8 sums and PC 9 LDRs and an LDR of the PC, 11 cycles, not the LDMNE's 12 after
 * its IT), each SMMLAR after the LDR of the channel's right shift, which it does not read (no load-use stall); the
 * pair's end test a BEQ not taken, taken once a group: 63 cycles a pair, not 70 (VWW -O3: 17,792 pairs) */
#define TFL_DSP_RQ3_M33(off, a, b)                                                                       \
    "ldr r1, [sp, #" #off "]\n\t"                                                                      \
    "ldr r2, [sp, #(" #off " + 4)]\n\t"                                                                  \
    "ldr r3, [sp, #(" #off " + 8)]\n\t" TFL_DSP_RQ3_MATH(a, b)
#define TFL_DSP_RQ3_PAIR_END                                                                             \
    TFL_DSP_RQ3_M33(0, "r4", "r5") TFL_DSP_RQ3_M33(12, "r6", "r7") TFL_DSP_RQ3_M33(24, "r8", "r9")        \
    TFL_DSP_RQ3_M33(36, "r10", "r11")                                                                    \
    "ldr r1, [sp, #48]\n\t" /* y, oc, the patches' end */                                              \
    "ldr r2, [sp, #52]\n\t"                                                                            \
    "ldr r3, [sp, #56]\n\t"                                                                            \
    "add lr, r1, r2\n\t" TFL_DSP_RQ3_STORES                                                            \
    "add r1, lr, r2\n\t"                                                                              \
    "str r1, [sp, #48]\n\t"                                                                           \
    "cmp r0, r3\n\t"                                                                                  \
    "beq 7f\n\t"                                                                                      \
    "ldr r1, [sp, #60]\n\t" /* the next pair: w, the 4 biases, its first quad, into the loop */      \
    "ldr r4, [sp, #64]\n\t"                                                                           \
    "ldr r6, [sp, #72]\n\t"                                                                           \
    "ldr r8, [sp, #80]\n\t"                                                                           \
    "ldr r10, [sp, #88]\n\t" TFL_DSP_RQ3_QUAD_FIRST                                                   \
    "ldr pc, [sp, #96]\n"                                                                              \
    "7:\n\t"
/* a group's start (r12 at its 16 words: the 4 biases, then the 12 terms): the biases each twice to the frame and
 * into the first pair's sums, the terms to [sp .. #44], by single LDRs and STRs (each store two or more
 * instructions after its load), then w and the loop's entry: 43 cycles, not the LDMs' and STMs' 58 */
#define TFL_DSP_RQ3_TERMS4(off)                                                                          \
    "ldr r1, [r12, #(16 + " #off ")]\n\t"                                                              \
    "ldr r2, [r12, #(20 + " #off ")]\n\t"                                                              \
    "ldr r3, [r12, #(24 + " #off ")]\n\t"                                                              \
    "ldr lr, [r12, #(28 + " #off ")]\n\t"                                                              \
    "str r1, [sp, #" #off "]\n\t"                                                                      \
    "str r2, [sp, #(4 + " #off ")]\n\t"                                                                \
    "str r3, [sp, #(8 + " #off ")]\n\t"                                                                \
    "str lr, [sp, #(12 + " #off ")]\n\t"
#define TFL_DSP_RQ3_GROUP_START                                                                          \
    "ldr r4, [r12]\n\t"                                                                                \
    "ldr r6, [r12, #4]\n\t"                                                                            \
    "ldr r8, [r12, #8]\n\t"                                                                            \
    "ldr r10, [r12, #12]\n\t"                                                                          \
    "str r4, [sp, #64]\n\t"                                                                            \
    "str r6, [sp, #72]\n\t"                                                                            \
    "str r8, [sp, #80]\n\t"                                                                            \
    "str r10, [sp, #88]\n\t" TFL_DSP_RQ3_TERMS4(0) TFL_DSP_RQ3_TERMS4(16) TFL_DSP_RQ3_TERMS4(32)        \
    "ldr r1, [sp, #60]\n\t" TFL_DSP_RQ3_QUAD_FIRST                                                     \
    "ldr pc, [sp, #96]\n\t"
/* A pair's first quad (AOTC_DSP_MAC4X2_QUAD's), each channel's two sums started from its bias in r4, r6, r8, r10:
 * position 1's E multiply-accumulate reads the bias before position 0's adds to it (SMLAD's accumulator need not
 * be its destination), so a pair loads 4 biases, not 8 sums; the loads reordered so that no multiply reads the load
 * just before it. The loop is entered past (-(nq - 1)) mod 16 quads (TFL_DSP_RQ3_ENTRY), nq 1 at the epilogue. */
#define TFL_DSP_RQ3_QUAD_FIRST                                                                           \
    "ldr r2, [r1, #32]!\n\t"                                                                           \
    "ldr lr, [r0, #8]\n\t"    /* E(t1) */                                                              \
    "ldr r12, [r0], #16\n\t"  /* E(t0) */                                                              \
    "ldr r3, [r1, #4]\n\t"                                                                             \
    "smlad r5, lr, r2, r4\n\t"                                                                         \
    "smlad r4, r12, r2, r4\n\t"                                                                        \
    "ldr r2, [r1, #8]\n\t"                                                                             \
    "smlad r7, lr, r3, r6\n\t"                                                                         \
    "smlad r6, r12, r3, r6\n\t"                                                                        \
    "ldr r3, [r1, #12]\n\t"                                                                            \
    "smlad r9, lr, r2, r8\n\t"                                                                         \
    "smlad r8, r12, r2, r8\n\t"                                                                        \
    "ldr r2, [r1, #16]\n\t"   /* channel 0's O */                                                      \
    "smlad r11, lr, r3, r10\n\t"                                                                       \
    "smlad r10, r12, r3, r10\n\t"                                                                      \
    "ldr r12, [r0, #-12]\n\t" /* O(t0) */                                                              \
    "ldr r3, [r1, #20]\n\t"                                                                            \
    "smlad r4, r12, r2, r4\n\t"                                                                        \
    "ldr lr, [r0, #-4]\n\t"   /* O(t1) */                                                              \
    "smlad r6, r12, r3, r6\n\t"                                                                        \
    "smlad r5, lr, r2, r5\n\t"                                                                         \
    "ldr r2, [r1, #24]\n\t"                                                                            \
    "smlad r7, lr, r3, r7\n\t"                                                                         \
    "ldr r3, [r1, #28]\n\t"                                                                            \
    "smlad r8, r12, r2, r8\n\t"                                                                        \
    "smlad r10, r12, r3, r10\n\t"                                                                      \
    "smlad r9, lr, r2, r9\n\t"                                                                         \
    "smlad r11, lr, r3, r11\n\t"
/* the loop's entry (r4, before its Thumb bit) for the nq - 1 quads after the first: past (-(nq - 1)) mod 16 quads, in
 * the last block with nq - 1 <= 16, at its end (the epilogue) with nq 1 */
#define TFL_DSP_RQ3_ENTRY                                                                                \
    "sub r7, r3, #1\n\t"                                                                               \
    "rsbs r5, r7, #0\n\t"                                                                              \
    "and r5, r5, #15\n\t"                                                                              \
    "cmp r7, #0\n\t"                                                                                   \
    "it eq\n\t"                                                                                        \
    "moveq r5, #16\n\t"                                                                                \
    "movs r6, #104\n\t"                                                                                \
    "cmp r7, #16\n\t"                                                                                  \
    "ite gt\n\t"                                                                                       \
    "adrgt.w r4, 1f\n\t"                                                                               \
    "adrle.w r4, 3f\n\t"                                                                               \
    "mla r4, r5, r6, r4\n\t"
#else
#define TFL_DSP_RQ3_PAIR_END                                                                             \
    "ldm sp, {r1, r2, r3}\n\t" /* channel 0's terms, then r12 walks the rest */                          \
    "add r12, sp, #12\n\t"                                                                              \
    TFL_DSP_RQ3_MATH("r4", "r5") TFL_DSP_RQ3("r6", "r7") TFL_DSP_RQ3("r8", "r9") TFL_DSP_RQ3("r10", "r11")  \
    "ldmia r12!, {r1, r2, r3}\n\t" /* y, oc, the patches' end; r12 at the next pair's block */            \
    "add lr, r1, r2\n\t" TFL_DSP_RQ3_STORES                                                            \
    "add r1, lr, r2\n\t"                                                                              \
    "str r1, [r12, #-12]\n\t"                                                                         \
    "cmp r0, r3\n\t"                                                                                  \
    "it ne\n\t"                                                                                       \
    "ldmne r12, {r1, r4-r11, pc}\n\t" /* the next pair */
#define TFL_DSP_RQ3_ENTRY                                                                                \
    "rsbs r5, r3, #0\n\t"                                                                              \
    "and r5, r5, #15\n\t"                                                                              \
    "movs r6, #104\n\t"                                                                                \
    "cmp r3, #16\n\t" /* the loop's entry past (-nq) mod 16 quads: the last block's with nq <= 16 */     \
    "ite gt\n\t"                                                                                       \
    "adrgt.w r4, 1f\n\t"                                                                               \
    "adrle.w r4, 3f\n\t"                                                                               \
    "mla r4, r5, r6, r4\n\t"
#define TFL_DSP_RQ3_GROUP_START                                                                          \
    "ldmia r12!, {r4, r6, r8, r10}\n\t" /* the biases, each twice */                                    \
    "mov r5, r4\n\t"                                                                                   \
    "mov r7, r6\n\t"                                                                                   \
    "mov r9, r8\n\t"                                                                                   \
    "mov r11, r10\n\t"                                                                                 \
    "add r1, sp, #64\n\t"                                                                              \
    "stmia r1, {r4-r11}\n\t"                                                                           \
    "ldmia r12, {r1-r11, lr}\n\t" /* the 12 terms */                                                    \
    "add r12, sp, #60\n\t"                                                                             \
    "stmia sp, {r1-r11, lr}\n\t"                                                                       \
    "ldm r12, {r1, r4-r11, pc}\n\t" /* the first pair: w, its sums at the biases, into the loop */
#endif
__attribute__((naked, noinline, unused)) static void aotc_dsp_mac4x2_rq3(TFL_DSP_ARG const uint32_t *p,
                                                                         TFL_DSP_ARG int32_t count,
                                                                         TFL_DSP_ARG const uint32_t *w,
                                                                         TFL_DSP_ARG int32_t nq,
                                                                         TFL_DSP_ARG const int32_t *rq,
                                                                         TFL_DSP_ARG int8_t *y, TFL_DSP_ARG int32_t oc) {
    /* r0 p, r1 count, r2 w, r3 nq; rq, y, oc at [sp, #156], #160, #164 after the prologue (rq and y stepped there a
     * group, oc's upper half counting the groups left less 1 down) */
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #120\n\t" AOTC_DSP_MAC4X2_WPRE
        "cmp r1, #0\n\t"
        "ble 9f\n\t"
        "mul r7, r1, r3\n\t" /* the patches' end: 16 bytes a quad and pair */
        "add r7, r0, r7, lsl #4\n\t"
        "ldr r5, [sp, #160]\n\t"
        "ldrh r6, [sp, #164]\n\t" /* oc, its lower half */
        "add r4, sp, #48\n\t"
        "stmia r4, {r5, r6, r7}\n\t" /* y, oc, the patches' end */
        TFL_DSP_RQ3_ENTRY
        "orr r4, r4, #1\n\t"
        "str r4, [sp, #96]\n\t"
        "str r0, [sp, #104]\n\t"
        "ldr r12, [sp, #156]\n"
        "5:\n\t" /* a group: r2 its weights, r3 nq, r12 its terms */
        "str r2, [sp, #60]\n\t"
        "add r4, r2, r3, lsl #5\n\t"
        "sub r4, r4, #512\n\t"
        "str r4, [sp, #100]\n\t"
        TFL_DSP_RQ3_GROUP_START /* the group's biases and terms to the frame, its first pair into the loop */
        ".p2align 2\n"
        "1:\n\t" AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
            AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
                AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
                    AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
        "ldr r2, [sp, #100]\n\t"
        "cmp r1, r2\n\t"
        "bne 1b\n\t"
        ".p2align 2\n"
        "3:\n\t" AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
            AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
                AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
                    AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
        TFL_DSP_RQ3_PAIR_END /* the epilogue, then the next pair (or on past it at the patches' end) */
        "ldrh r1, [sp, #166]\n\t" /* the groups left less 1 */
        "subs r1, r1, #1\n\t"
        "bpl 6f\n"
        "9:\n\t"
        "add sp, sp, #120\n\t"
        "pop {r4-r11, pc}\n"
        "6:\n\t" /* the next group: its weights where this one's ended, its terms 16 words on, its y 4 bytes on */
        "strh r1, [sp, #166]\n\t"
        "ldr r12, [sp, #156]\n\t"
        "ldr r1, [sp, #160]\n\t"
        "ldr r0, [sp, #104]\n\t"
        "ldr r2, [sp, #100]\n\t"
        "ldr r3, [sp, #60]\n\t"
        "add r12, r12, #64\n\t"
        "add r1, r1, #4\n\t"
        "add r2, r2, #512\n\t"
        "sub r3, r2, r3\n\t"
        "lsr r3, r3, #5\n\t"
        "str r12, [sp, #156]\n\t"
        "str r1, [sp, #160]\n\t"
        "str r1, [sp, #48]\n\t"
        "b 5b\n\t");
}
/* aotc_dsp_mac4x2_rq3 for one position (an odd tile's last), not a pair repeating it: p its patch as a pair's (quad
 * q's E at p[4q], O at p[4q + 1]), the 4 channels' sums from rq's biases, their 4 outputs to y[0 .. 3]; nq's upper
 * half the groups of 4 channels less 1, as aotc_dsp_mac4x2_rq3's oc (group g's weights 8 nq g words on, its terms
 * 16 g words on, its outputs 4 g bytes on: where the last group's ended, for w and rq). A quad is single LDRs, each
 * after a load (pipelined): E, the channels' E weights and O, 4 SMLADs, the O weights, 4 SMLADs (20 cycles for 16
 * multiply-accumulates; an LDRD of the patch and two LDMs of the weights took 21; the pair's block takes 32 for the
 * same 16 and 16 wasted), sixteen quads a turn entered past (-nq) mod 16 (a turn's test 4 cycles for 16 quads),
 * two channels' terms by one LDM of 6 (7 cycles, not two LDMs of 3's 8). Four quads a turn and a call a group took
 * 149,248 -> 137,856 est. cycles on VWW -O3 (128 calls, 32 and 64 quads; VWW 11,587,822 -> 11,575,922); a call a
 * tile (the groups in the kernel: no push, pop, entry and C loop a group) and eight quads a turn, 137,856 -> 132,942
 * (2 calls; tfl_conv_s8_dsp 45,051 -> 42,387); sixteen a turn and the LDMs of 6, 131,150 (1.2 KB of quads): what is
 * left beyond the quads' 122,880 is about 65 cycles a group (26 of the requantisation, the biases, y's bytes, the
 * entry and the turns' tests). Its locals: [sp] the loop's entry, [sp, #4] p, [sp, #8] a group's bytes of
 * weights, [sp, #12] the groups left less 1; y at [sp, #52]. */
__attribute__((naked, noinline, unused)) static void aotc_dsp_mac4x1_rq3(TFL_DSP_ARG const uint32_t *p,
                                                                         TFL_DSP_ARG const uint32_t *w,
                                                                         TFL_DSP_ARG int32_t nq,
                                                                         TFL_DSP_ARG const int32_t *rq,
                                                                         TFL_DSP_ARG int8_t *y) {
    /* r0 p, r1 w, r2 nq (its upper half the groups less 1), r3 rq; y at [sp, #52] after the prologue */
#if AOTC_DSP_M7
/* (the M7's order of the same 18 instructions, 72 bytes: each SMLAD but the first beside a load, each load a cycle
 * or more before what reads it: 10 cycles a quad on the dual-issue model, not 12) */
#define TFL_DSP_MAC4X1_QUAD                                                                              \
    "ldr.w r8, [r0], #16\n\t"                                                                           \
    "ldr.w r2, [r1], #32\n\t"                                                                           \
    "ldr r9, [r0, #-12]\n\t"                                                                            \
    "ldr r10, [r1, #-28]\n\t"                                                                           \
    "smlad r4, r8, r2, r4\n\t"                                                                          \
    "ldr r11, [r1, #-24]\n\t"                                                                           \
    "smlad r5, r8, r10, r5\n\t"                                                                         \
    "ldr r2, [r1, #-16]\n\t"                                                                            \
    "smlad r6, r8, r11, r6\n\t"                                                                         \
    "ldr lr, [r1, #-20]\n\t"                                                                            \
    "smlad r7, r8, lr, r7\n\t"                                                                          \
    "ldr r10, [r1, #-12]\n\t"                                                                           \
    "smlad r4, r9, r2, r4\n\t"                                                                          \
    "ldr r11, [r1, #-8]\n\t"                                                                            \
    "smlad r5, r9, r10, r5\n\t"                                                                         \
    "ldr lr, [r1, #-4]\n\t"                                                                             \
    "smlad r6, r9, r11, r6\n\t"                                                                         \
    "smlad r7, r9, lr, r7\n\t"
#else
#define TFL_DSP_MAC4X1_QUAD /* 72 bytes: every instruction 32-bit */                                     \
    "ldr.w r8, [r0], #16\n\t"                                                                            \
    "ldr.w r2, [r1], #32\n\t"                                                                            \
    "ldr r9, [r0, #-12]\n\t"                                                                             \
    "ldr r10, [r1, #-28]\n\t"                                                                            \
    "ldr r11, [r1, #-24]\n\t"                                                                            \
    "ldr lr, [r1, #-20]\n\t"                                                                             \
    "smlad r4, r8, r2, r4\n\t"                                                                           \
    "smlad r5, r8, r10, r5\n\t"                                                                          \
    "smlad r6, r8, r11, r6\n\t"                                                                          \
    "smlad r7, r8, lr, r7\n\t"                                                                           \
    "ldr r2, [r1, #-16]\n\t"                                                                             \
    "ldr r10, [r1, #-12]\n\t"                                                                            \
    "ldr r11, [r1, #-8]\n\t"                                                                             \
    "ldr lr, [r1, #-4]\n\t"                                                                              \
    "smlad r4, r9, r2, r4\n\t"                                                                           \
    "smlad r5, r9, r10, r5\n\t"                                                                          \
    "smlad r6, r9, r11, r6\n\t"                                                                          \
    "smlad r7, r9, lr, r7\n\t"
#endif
#define TFL_DSP_RQ1X2(a, b) /* two channels' mult, ra, right by one LDM (the patch pointer r0 reloaded after) */   \
    "ldmia r3!, {r0, r2, r8, r9, r10, r11}\n\t"                                                         \
    "smmlar " a ", " a ", r0, r2\n\t"                                                                   \
    "asr " a ", " a ", r8\n\t"                                                                          \
    "ssat " a ", #8, " a "\n\t"                                                                         \
    "smmlar " b ", " b ", r9, r10\n\t"                                                                  \
    "asr " b ", " b ", r11\n\t"                                                                         \
    "ssat " b ", #8, " b "\n\t"
#define TFL_DSP_MAC4X1_QUAD4 TFL_DSP_MAC4X1_QUAD TFL_DSP_MAC4X1_QUAD TFL_DSP_MAC4X1_QUAD TFL_DSP_MAC4X1_QUAD
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #16\n\t"
        "lsr r8, r2, #16\n\t"
        "uxth r2, r2\n\t"
        "lsl r9, r2, #5\n\t"
        "add r10, sp, #4\n\t"
        "stmia r10, {r0, r9}\n\t" /* p, a group's bytes of weights */
        "str r8, [sp, #12]\n\t"
        "rsbs r8, r2, #0\n\t"
        "and r8, r8, #15\n\t"
        "adr.w r9, 1f\n\t"
        "movs r10, #72\n\t"
        "mla r9, r8, r10, r9\n\t"
        "orr r9, r9, #1\n\t"
        "str r9, [sp]\n"
        "5:\n\t" /* a group: r0 the patch, r1 its weights, r3 its terms */
        "ldmia r3!, {r4-r7}\n\t"
        "ldr r12, [sp, #8]\n\t"
        "ldr r9, [sp]\n\t"
        "add r12, r1, r12\n\t"
        "bx r9\n\t"
        ".p2align 2\n"
        "1:\n\t" TFL_DSP_MAC4X1_QUAD4 TFL_DSP_MAC4X1_QUAD4 TFL_DSP_MAC4X1_QUAD4 TFL_DSP_MAC4X1_QUAD4
        "cmp r1, r12\n\t"
        "bne 1b\n\t"
        TFL_DSP_RQ1X2("r4", "r5") TFL_DSP_RQ1X2("r6", "r7")
        "ldr r12, [sp, #52]\n\t"
        "strb r4, [r12]\n\t"
        "strb r5, [r12, #1]\n\t"
        "strb r6, [r12, #2]\n\t"
        "strb r7, [r12, #3]\n\t"
        "add r12, r12, #4\n\t"
        "str r12, [sp, #52]\n\t"
        "ldr r0, [sp, #4]\n\t"
        "ldr r8, [sp, #12]\n\t"
        "subs r8, r8, #1\n\t"
        "str r8, [sp, #12]\n\t"
        "bpl 5b\n\t"
        "add sp, sp, #16\n\t"
        "pop {r4-r11, pc}\n\t");
#undef TFL_DSP_MAC4X1_QUAD4
#undef TFL_DSP_MAC4X1_QUAD
#undef TFL_DSP_RQ1X2
}
#if AOTC_DSP_M33
/* The M33's 2 x 4 block (issue 68): a tile's positions in blocks of 4, each block's 4 patches interleaved a quad at a
 * time (tfl_dsp_rows4's layout: quad q of block i at p + 32 (nq i + q) bytes, the words E(t0), O(t0), E(t1), O(t1),
 * E(t2), O(t2), E(t3), O(t3)), and 2 output channels, each half of a group of 4 in dsp_wx's layout (its E words at
 * 0 and 4 bytes and its O words at 16 and 20 from the quad's, the half's 8 bytes on for channels 2 and 3): a quad is
 * 4 weight and 8 patch loads and 16 SMLADs, 28 cycles for 32 multiply-accumulates as the 4 x 2 block's, but a
 * channel's 3 requantisation terms serve 4 outputs, not 2, and a block loads 2 biases, not 4: the epilogue of 8
 * outputs 6 term loads and 2 bias loads fewer than aotc_dsp_mac4x2_rq3's (its stores' addresses 2 ADDs more). The
 * same requantisation as aotc_dsp_mac4x2_rq3 (doubled sums, the lower clamp the zero point -128), so the same
 * outputs: y[(4 i + t) oc + 2 h + j] for block i < count, position t < 4, half h < H and channel j < 2, with
 * rq = dsp_rq's (a group's 4 biases, then its 4 channels' mult, ra, right), oc's upper half H - 1 (the halves in one
 * call: each restarts at p, its weights, biases, terms and y stepped). 112 bytes a quad (every instruction 32-bit),
 * sixteen a turn in two blocks as aotc_dsp_mac4x2_rq3's (a loop tested a turn, then the last 16 into the epilogue),
 * entered past (-(nq - 1)) mod 16 quads after the block's first quad, which starts the sums at the biases. Locals:
 * [sp .. #20] the half's terms, [sp, #24] the block's y, [sp, #28] oc, [sp, #32] the patches' end, [sp, #36] the
 * half's weights less 32, [sp, #40] and #44 its biases, [sp, #48] the loop's entry, [sp, #52] the weights' end less
 * a block of quads and 32, [sp, #56] p, [sp, #60] the half h, [sp, #64] H - 1, [sp, #68] the group's rq, [sp, #72]
 * the half's y, [sp, #76] nq. */
#define TFL_DSP_MAC2X4 1
/* (the patch words' offsets from r0 after a quad's first, post-indexed load: here aotc_dsp_mac2x4_rq3's layout) */
#define TFL_DSP_M24_PS "32"
#define TFL_DSP_M24_E1 "-24"
#define TFL_DSP_M24_E2 "-16"
#define TFL_DSP_M24_E3 "-8"
#define TFL_DSP_M24_O0 "-28"
#define TFL_DSP_M24_O1 "-20"
#define TFL_DSP_M24_O2 "-12"
#define TFL_DSP_M24_O3 "-4"
#define TFL_DSP_MAC2X4_QUAD                                                                              \
    "ldr r2, [r1, #32]!\n\t" /* channel 0's E; r1 at the quad's weights */                           \
    "ldr.w r12, [r0], #" TFL_DSP_M24_PS "\n\t" /* E(t0) */                                                            \
    "ldr.w r3, [r1, #4]\n\t"                                                                           \
    "ldr lr, [r0, #" TFL_DSP_M24_E1 "]\n\t" /* E(t1) */                                                            \
    "smlad r4, r12, r2, r4\n\t"                                                                        \
    "smlad r8, r12, r3, r8\n\t"                                                                        \
    "ldr r12, [r0, #" TFL_DSP_M24_E2 "]\n\t" /* E(t2) */                                                           \
    "smlad r5, lr, r2, r5\n\t"                                                                         \
    "smlad r9, lr, r3, r9\n\t"                                                                         \
    "ldr lr, [r0, #" TFL_DSP_M24_E3 "]\n\t" /* E(t3) */                                                             \
    "smlad r6, r12, r2, r6\n\t"                                                                        \
    "smlad r10, r12, r3, r10\n\t"                                                                      \
    "ldr r12, [r0, #" TFL_DSP_M24_O0 "]\n\t" /* O(t0) */                                                           \
    "smlad r7, lr, r2, r7\n\t"                                                                         \
    "smlad r11, lr, r3, r11\n\t" TFL_DSP_MAC2X4_O
/* the quad's O half: channel 0's and 1's O weights, O(t1), O(t2), O(t3) (O(t0) in r12) */
#define TFL_DSP_MAC2X4_O                                                                                 \
    "ldr.w r2, [r1, #16]\n\t"                                                                          \
    "ldr.w r3, [r1, #20]\n\t"                                                                          \
    "ldr lr, [r0, #" TFL_DSP_M24_O1 "]\n\t" /* O(t1) */                                                            \
    "smlad r4, r12, r2, r4\n\t"                                                                        \
    "smlad r8, r12, r3, r8\n\t"                                                                        \
    "ldr r12, [r0, #" TFL_DSP_M24_O2 "]\n\t" /* O(t2) */                                                           \
    "smlad r5, lr, r2, r5\n\t"                                                                         \
    "smlad r9, lr, r3, r9\n\t"                                                                         \
    "ldr lr, [r0, #" TFL_DSP_M24_O3 "]\n\t" /* O(t3) */                                                             \
    "smlad r6, r12, r2, r6\n\t"                                                                        \
    "smlad r10, r12, r3, r10\n\t"                                                                      \
    "smlad r7, lr, r2, r7\n\t"                                                                         \
    "smlad r11, lr, r3, r11\n\t"
/* a block's first quad, the sums started at the biases in r4 and r8: E(t2) and E(t3) into r6 and r7 (their sums not
 * yet started), each bias read by positions 1 to 3 before position 0's SMLAD writes it */
#define TFL_DSP_MAC2X4_FIRST                                                                             \
    "ldr r2, [r1, #32]!\n\t"                                                                         \
    "ldr.w r12, [r0], #" TFL_DSP_M24_PS "\n\t" /* E(t0) */                                                            \
    "ldr.w r3, [r1, #4]\n\t"                                                                           \
    "ldr lr, [r0, #" TFL_DSP_M24_E1 "]\n\t" /* E(t1) */                                                            \
    "ldr r6, [r0, #" TFL_DSP_M24_E2 "]\n\t" /* E(t2) */                                                            \
    "ldr r7, [r0, #" TFL_DSP_M24_E3 "]\n\t"  /* E(t3) */                                                            \
    "smlad r5, lr, r2, r4\n\t"                                                                         \
    "smlad r9, lr, r3, r8\n\t"                                                                         \
    "smlad r10, r6, r3, r8\n\t"                                                                        \
    "smlad r6, r6, r2, r4\n\t"                                                                         \
    "smlad r11, r7, r3, r8\n\t"                                                                        \
    "smlad r7, r7, r2, r4\n\t"                                                                         \
    "smlad r4, r12, r2, r4\n\t"                                                                        \
    "smlad r8, r12, r3, r8\n\t"                                                                        \
    "ldr r12, [r0, #" TFL_DSP_M24_O0 "]\n\t" /* O(t0) */ TFL_DSP_MAC2X4_O
#define TFL_DSP_MAC2X4_QUAD4 TFL_DSP_MAC2X4_QUAD TFL_DSP_MAC2X4_QUAD TFL_DSP_MAC2X4_QUAD TFL_DSP_MAC2X4_QUAD
__attribute__((naked, noinline, unused)) static void aotc_dsp_mac2x4_rq3(TFL_DSP_ARG const uint32_t *p,
                                                                         TFL_DSP_ARG int32_t count,
                                                                         TFL_DSP_ARG const uint32_t *w,
                                                                         TFL_DSP_ARG int32_t nq,
                                                                         TFL_DSP_ARG const int32_t *rq,
                                                                         TFL_DSP_ARG int8_t *y, TFL_DSP_ARG int32_t oc) {
    /* r0 p, r1 count (blocks of 4 positions), r2 w, r3 nq; rq, y, oc at [sp, #116], #120, #124 after the prologue */
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #80\n\t" AOTC_DSP_MAC4X2_WPRE
        "cmp r1, #0\n\t"
        "ble 9f\n\t"
        "mul r7, r1, r3\n\t" /* the patches' end: 32 bytes a quad and block */
        "add r7, r0, r7, lsl #5\n\t"
        "ldr r5, [sp, #120]\n\t"
        "ldrh r6, [sp, #124]\n\t" /* oc, its lower half */
        "ldrh r8, [sp, #126]\n\t" /* the halves less 1 */
        "str r7, [sp, #32]\n\t"
        "str r5, [sp, #72]\n\t"
        "str r6, [sp, #28]\n\t"
        "str r8, [sp, #64]\n\t"
        "str r0, [sp, #56]\n\t"
        "str r3, [sp, #76]\n\t"
        "movs r8, #0\n\t"
        "str r8, [sp, #60]\n\t"
        "sub r7, r3, #1\n\t" /* the loop's entry: past (-(nq - 1)) mod 16 quads, the epilogue with nq 1 */
        "rsbs r5, r7, #0\n\t"
        "and r5, r5, #15\n\t"
        "cmp r7, #0\n\t"
        "it eq\n\t"
        "moveq r5, #16\n\t"
        "movs r6, #112\n\t"
        "cmp r7, #16\n\t"
        "ite gt\n\t"
        "adrgt.w r4, 1f\n\t"
        "adrle.w r4, 3f\n\t"
        "mla r4, r5, r6, r4\n\t"
        "orr r4, r4, #1\n\t"
        "str r4, [sp, #48]\n\t"
        "ldr r12, [sp, #116]\n\t"
        "str r12, [sp, #68]\n"
        "5:\n\t" /* a half: r2 its weights less 32, r3 nq, r12 its group's rq */
        "str r2, [sp, #36]\n\t"
        "add r4, r2, r3, lsl #5\n\t"
        "sub r4, r4, #512\n\t"
        "str r4, [sp, #52]\n\t"
        "ldr r4, [sp, #60]\n\t"
        "ldr r1, [sp, #72]\n\t"
        "lsls r4, r4, #31\n\t" /* ne: the second half (channels 2, 3): biases 2 words on, terms 6 */
        "itte ne\n\t"
        "addne lr, r12, #40\n\t"
        "addne r12, r12, #8\n\t"
        "addeq lr, r12, #16\n\t"
        "str r1, [sp, #24]\n\t"
        "ldr r4, [r12]\n\t"
        "ldr r8, [r12, #4]\n\t"
        "ldr r5, [lr]\n\t"
        "ldr r6, [lr, #4]\n\t"
        "ldr r7, [lr, #8]\n\t"
        "ldr r9, [lr, #12]\n\t"
        "ldr r10, [lr, #16]\n\t"
        "ldr r11, [lr, #20]\n\t"
        "str r4, [sp, #40]\n\t"
        "str r8, [sp, #44]\n\t"
        "str r5, [sp]\n\t"
        "str r6, [sp, #4]\n\t"
        "str r7, [sp, #8]\n\t"
        "str r9, [sp, #12]\n\t"
        "str r10, [sp, #16]\n\t"
        "str r11, [sp, #20]\n\t"
        "ldr r0, [sp, #56]\n\t"
        "ldr r1, [sp, #36]\n\t" TFL_DSP_MAC2X4_FIRST
        "ldr pc, [sp, #48]\n\t"
        ".p2align 2\n"
        "1:\n\t" TFL_DSP_MAC2X4_QUAD4 TFL_DSP_MAC2X4_QUAD4 TFL_DSP_MAC2X4_QUAD4 TFL_DSP_MAC2X4_QUAD4
        "ldr r2, [sp, #52]\n\t"
        "cmp r1, r2\n\t"
        "bne 1b\n\t"
        ".p2align 2\n"
        "3:\n\t" TFL_DSP_MAC2X4_QUAD4 TFL_DSP_MAC2X4_QUAD4 TFL_DSP_MAC2X4_QUAD4 TFL_DSP_MAC2X4_QUAD4
        "ldr r1, [sp]\n\t" /* the epilogue: channel 0's 4 outputs, then channel 1's */
        "ldr r2, [sp, #4]\n\t"
        "ldr r3, [sp, #8]\n\t" TFL_DSP_RQ3_MATH("r4", "r5") TFL_DSP_RQ3_MATH("r6", "r7")
        "ldr r1, [sp, #12]\n\t"
        "ldr r2, [sp, #16]\n\t"
        "ldr r3, [sp, #20]\n\t" TFL_DSP_RQ3_MATH("r8", "r9") TFL_DSP_RQ3_MATH("r10", "r11")
        "ldr r1, [sp, #24]\n\t" /* y, oc, the patches' end */
        "ldr r2, [sp, #28]\n\t"
        "ldr r3, [sp, #32]\n\t"
        "bfi r4, r8, #8, #8\n\t" /* a position's 2 outputs one halfword (y, oc and 2 h even) */
        "bfi r5, r9, #8, #8\n\t"
        "bfi r6, r10, #8, #8\n\t"
        "bfi r7, r11, #8, #8\n\t"
        "add r12, r2, r2, lsl #1\n\t"
        "strh r4, [r1]\n\t"
        "strh r5, [r1, r2]\n\t"
        "strh r6, [r1, r2, lsl #1]\n\t"
        "strh r7, [r1, r12]\n\t"
        "add r1, r1, r2, lsl #2\n\t"
        "str r1, [sp, #24]\n\t"
        "cmp r0, r3\n\t"
        "beq 7f\n\t"
        "ldr r1, [sp, #36]\n\t" /* the next block: the half's weights, its 2 biases, its first quad, into the loop */
        "ldr r4, [sp, #40]\n\t"
        "ldr r8, [sp, #44]\n\t" TFL_DSP_MAC2X4_FIRST
        "ldr pc, [sp, #48]\n"
        "7:\n\t" /* the next half: after the first, its weights 8 bytes on; after the second, the next group's */
        "ldr r4, [sp, #60]\n\t"
        "ldr r5, [sp, #64]\n\t"
        "ldr r12, [sp, #68]\n\t"
        "cmp r4, r5\n\t"
        "beq 9f\n\t"
        "ldr r2, [sp, #36]\n\t"
        "ldr r3, [sp, #76]\n\t"
        "ldr r1, [sp, #72]\n\t"
        "lsls r6, r4, #31\n\t" /* ne: this half the second of its group */
        "itte ne\n\t"
        "addne r12, r12, #64\n\t"
        "subne r2, r2, #8\n\t"
        "addeq r2, r2, #8\n\t"
        "it ne\n\t"
        "addne r2, r2, r3, lsl #5\n\t"
        "add r1, r1, #2\n\t"
        "add r4, r4, #1\n\t"
        "str r12, [sp, #68]\n\t"
        "str r1, [sp, #72]\n\t"
        "str r4, [sp, #60]\n\t"
        "b 5b\n"
        "9:\n\t"
        "add sp, sp, #80\n\t"
        "pop {r4-r11, pc}\n\t");
}
/* aotc_dsp_mac2x4_rq3 on the pairs' layout of patches of 7 quads (an RGB stem's 3 x 3 windows of 3 channels,
 * tfl_dsp_rgb_tile's, nq 7): a block of 4 positions two pairs, the second 112 bytes on, so its patch words are at
 * immediate offsets from the one pointer; a block is its first quad and 6 more (no loop, no entry), then the
 * epilogue, r0 stepped past the second pair. The same frame, outputs and rq as aotc_dsp_mac2x4_rq3's (nq 7 only). */
#undef TFL_DSP_M24_PS
#undef TFL_DSP_M24_E1
#undef TFL_DSP_M24_E2
#undef TFL_DSP_M24_E3
#undef TFL_DSP_M24_O0
#undef TFL_DSP_M24_O1
#undef TFL_DSP_M24_O2
#undef TFL_DSP_M24_O3
#define TFL_DSP_M24_PS "16"
#define TFL_DSP_M24_E1 "-8"
#define TFL_DSP_M24_E2 "96"
#define TFL_DSP_M24_E3 "104"
#define TFL_DSP_M24_O0 "-12"
#define TFL_DSP_M24_O1 "-4"
#define TFL_DSP_M24_O2 "100"
#define TFL_DSP_M24_O3 "108"
__attribute__((naked, noinline, unused)) static void aotc_dsp_mac2x4p7_rq3(TFL_DSP_ARG const uint32_t *p,
                                                                           TFL_DSP_ARG int32_t count,
                                                                           TFL_DSP_ARG const uint32_t *w,
                                                                           TFL_DSP_ARG int32_t nq,
                                                                           TFL_DSP_ARG const int32_t *rq,
                                                                           TFL_DSP_ARG int8_t *y, TFL_DSP_ARG int32_t oc) {
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #80\n\t" AOTC_DSP_MAC4X2_WPRE
        "cmp r1, #0\n\t"
        "ble 9f\n\t"
        "mul r7, r1, r3\n\t" /* the patches' end: 32 bytes a quad and block (two pairs) */
        "add r7, r0, r7, lsl #5\n\t"
        "ldr r5, [sp, #120]\n\t"
        "ldrh r6, [sp, #124]\n\t" /* oc, its lower half */
        "ldrh r8, [sp, #126]\n\t" /* the halves less 1 */
        "str r7, [sp, #32]\n\t"
        "str r5, [sp, #72]\n\t"
        "str r6, [sp, #28]\n\t"
        "str r8, [sp, #64]\n\t"
        "str r0, [sp, #56]\n\t"
        "str r3, [sp, #76]\n\t"
        "movs r8, #0\n\t"
        "str r8, [sp, #60]\n\t"
        "ldr r12, [sp, #116]\n\t"
        "str r12, [sp, #68]\n"
        "5:\n\t" /* a half: r2 its weights less 32, r3 nq, r12 its group's rq */
        "str r2, [sp, #36]\n\t"
        "add r4, r2, r3, lsl #5\n\t"
        "sub r4, r4, #512\n\t"
        "str r4, [sp, #52]\n\t"
        "ldr r4, [sp, #60]\n\t"
        "ldr r1, [sp, #72]\n\t"
        "lsls r4, r4, #31\n\t" /* ne: the second half (channels 2, 3): biases 2 words on, terms 6 */
        "itte ne\n\t"
        "addne lr, r12, #40\n\t"
        "addne r12, r12, #8\n\t"
        "addeq lr, r12, #16\n\t"
        "str r1, [sp, #24]\n\t"
        "ldr r4, [r12]\n\t"
        "ldr r8, [r12, #4]\n\t"
        "ldr r5, [lr]\n\t"
        "ldr r6, [lr, #4]\n\t"
        "ldr r7, [lr, #8]\n\t"
        "ldr r9, [lr, #12]\n\t"
        "ldr r10, [lr, #16]\n\t"
        "ldr r11, [lr, #20]\n\t"
        "str r4, [sp, #40]\n\t"
        "str r8, [sp, #44]\n\t"
        "str r5, [sp]\n\t"
        "str r6, [sp, #4]\n\t"
        "str r7, [sp, #8]\n\t"
        "str r9, [sp, #12]\n\t"
        "str r10, [sp, #16]\n\t"
        "str r11, [sp, #20]\n\t"
        "ldr r0, [sp, #56]\n\t"
        "8:\n\t" /* a block: the half's weights, its 2 biases, its first quad and 6 more */
        "ldr r1, [sp, #36]\n\t"
        "ldr r4, [sp, #40]\n\t"
        "ldr r8, [sp, #44]\n\t" TFL_DSP_MAC2X4_FIRST TFL_DSP_MAC2X4_QUAD TFL_DSP_MAC2X4_QUAD TFL_DSP_MAC2X4_QUAD
            TFL_DSP_MAC2X4_QUAD TFL_DSP_MAC2X4_QUAD TFL_DSP_MAC2X4_QUAD
        "ldr r1, [sp]\n\t" /* the epilogue: channel 0's 4 outputs, then channel 1's */
        "ldr r2, [sp, #4]\n\t"
        "ldr r3, [sp, #8]\n\t" TFL_DSP_RQ3_MATH("r4", "r5") TFL_DSP_RQ3_MATH("r6", "r7")
        "ldr r1, [sp, #12]\n\t"
        "ldr r2, [sp, #16]\n\t"
        "ldr r3, [sp, #20]\n\t" TFL_DSP_RQ3_MATH("r8", "r9") TFL_DSP_RQ3_MATH("r10", "r11")
        "ldr r1, [sp, #24]\n\t" /* y, oc, the patches' end */
        "ldr r2, [sp, #28]\n\t"
        "ldr r3, [sp, #32]\n\t"
        "bfi r4, r8, #8, #8\n\t" /* a position's 2 outputs one halfword (y, oc and 2 h even) */
        "bfi r5, r9, #8, #8\n\t"
        "bfi r6, r10, #8, #8\n\t"
        "bfi r7, r11, #8, #8\n\t"
        "add r12, r2, r2, lsl #1\n\t"
        "strh r4, [r1]\n\t"
        "strh r5, [r1, r2]\n\t"
        "strh r6, [r1, r2, lsl #1]\n\t"
        "strh r7, [r1, r12]\n\t"
        "add r1, r1, r2, lsl #2\n\t"
        "str r1, [sp, #24]\n\t"
        "add r0, r0, #112\n\t" /* past the block's second pair */
        "cmp r0, r3\n\t"
        "bne 8b\n"
        "7:\n\t" /* the next half: after the first, its weights 8 bytes on; after the second, the next group's */
        "ldr r4, [sp, #60]\n\t"
        "ldr r5, [sp, #64]\n\t"
        "ldr r12, [sp, #68]\n\t"
        "cmp r4, r5\n\t"
        "beq 9f\n\t"
        "ldr r2, [sp, #36]\n\t"
        "ldr r3, [sp, #76]\n\t"
        "ldr r1, [sp, #72]\n\t"
        "lsls r6, r4, #31\n\t" /* ne: this half the second of its group */
        "itte ne\n\t"
        "addne r12, r12, #64\n\t"
        "subne r2, r2, #8\n\t"
        "addeq r2, r2, #8\n\t"
        "it ne\n\t"
        "addne r2, r2, r3, lsl #5\n\t"
        "add r1, r1, #2\n\t"
        "add r4, r4, #1\n\t"
        "str r12, [sp, #68]\n\t"
        "str r1, [sp, #72]\n\t"
        "str r4, [sp, #60]\n\t"
        "b 5b\n"
        "9:\n\t"
        "add sp, sp, #80\n\t"
        "pop {r4-r11, pc}\n\t");
}
#undef TFL_DSP_M24_PS
#undef TFL_DSP_M24_E1
#undef TFL_DSP_M24_E2
#undef TFL_DSP_M24_E3
#undef TFL_DSP_M24_O0
#undef TFL_DSP_M24_O1
#undef TFL_DSP_M24_O2
#undef TFL_DSP_M24_O3
#undef TFL_DSP_MAC2X4_QUAD4
#undef TFL_DSP_MAC2X4_FIRST
#undef TFL_DSP_MAC2X4_O
#undef TFL_DSP_MAC2X4_QUAD
#endif
#undef TFL_DSP_ARG
#undef TFL_DSP_RQ2_DOUBLED_MATH
/* (TFL_DSP_RQ2_MATH and TFL_DSP_RQ2_TERMS stay: tflite_int8_conv.c's tfl_dsp_mac4x2_rqa runs them too) */
#undef TFL_DSP_RQ3
#undef TFL_DSP_RQ3_MATH
#undef TFL_DSP_RQ3_STORES
#undef TFL_DSP_RQ3_PAIR_END
#undef TFL_DSP_RQ3_M33
#undef TFL_DSP_RQ3_GROUP_START
#undef TFL_DSP_RQ_PAIR_END
#undef TFL_DSP_RQ3_TERMS4
#undef TFL_DSP_RQ3_QUAD_FIRST
#undef TFL_DSP_RQ3_ENTRY
#undef TFL_DSP_MAC4X2_RQ_ASM
#else
static inline void tfl_dsp_mac4x2_rq_c(const uint32_t *p, int32_t count, const uint32_t *w, int32_t nq,
                                       const int32_t *rq, int8_t *y, int32_t oc, int doubled) {
    int32_t i, q, j, t;
    for (i = 0; i < count; ++i, y += 2 * oc) {
        const uint32_t *ww = w;
        int32_t a[8];
        for (j = 0; j < 4; ++j) a[2 * j] = a[2 * j + 1] = rq[j];
        for (q = 0; q < nq; ++q, p += 4, ww += 8) {
            for (j = 0; j < 4; ++j) {
                a[2 * j] = __smlad((int32_t)p[0], (int32_t)ww[j], a[2 * j]);
                a[2 * j] = __smlad((int32_t)p[1], (int32_t)ww[4 + j], a[2 * j]);
                a[2 * j + 1] = __smlad((int32_t)p[2], (int32_t)ww[j], a[2 * j + 1]);
                a[2 * j + 1] = __smlad((int32_t)p[3], (int32_t)ww[4 + j], a[2 * j + 1]);
            }
        }
        for (j = 0; j < 4; ++j) {
            const int32_t mult = rq[4 + 3 * j], ra = rq[5 + 3 * j], right = rq[6 + 3 * j];
            for (t = 0; t < 2; ++t) {
                const int32_t v = doubled ? a[2 * j + t] : (int32_t)((uint32_t)a[2 * j + t] << 1);
                y[t * oc + j] = (int8_t)__ssat((tfl_dsp_smmlar(v, mult, ra) + (v >> 31)) >> right, 8);
            }
        }
    }
}
__attribute__((noinline, unused)) static void aotc_dsp_mac4x2_rq(const uint32_t *p, int32_t count, const uint32_t *w,
                                                                 int32_t nq, const int32_t *rq, int8_t *y, int32_t oc) {
    tfl_dsp_mac4x2_rq_c(p, count, w, nq, rq, y, oc, 0);
}
__attribute__((noinline, unused)) static void aotc_dsp_mac4x2_rq2(const uint32_t *p, int32_t count, const uint32_t *w,
                                                                  int32_t nq, const int32_t *rq, int8_t *y, int32_t oc) {
    tfl_dsp_mac4x2_rq_c(p, count, w, nq, rq, y, oc, 1);
}
/* (aotc_dsp_mac4x2_rq3's outputs are aotc_dsp_mac4x2_rq2's wherever it is called: the same loop, a group of 4
 * channels at a time, (oc >> 16) + 1 of them: weights 8 nq words, terms 16 words and outputs 4 bytes on) */
__attribute__((noinline, unused)) static void aotc_dsp_mac4x2_rq3(const uint32_t *p, int32_t count, const uint32_t *w,
                                                                  int32_t nq, const int32_t *rq, int8_t *y, int32_t oc) {
    int32_t g;
    for (g = 0; g <= oc >> 16; ++g)
        tfl_dsp_mac4x2_rq_c(p, count, w + 8 * g * nq, nq, rq + 16 * g, y + 4 * g, oc & 0xffff, 1);
}
/* (aotc_dsp_mac4x1_rq3: the pair's loop on a pair repeating the position, its first output kept, a group of 4
 * channels at a time, (nq >> 16) + 1 of them) */
__attribute__((noinline, unused)) static void aotc_dsp_mac4x1_rq3(const uint32_t *p, const uint32_t *w, int32_t nq,
                                                                  const int32_t *rq, int8_t *y) {
    const int32_t m = nq & 0xffff;
    int32_t g;
    int8_t two[8];
    for (g = 0; g <= nq >> 16; ++g) {
        tfl_dsp_mac4x2_rq_c(p, 1, w + 8 * g * m, m, rq + 16 * g, two, 4, 1);
        memcpy(y + 4 * g, two, 4);
    }
}
#endif
#endif /* AOTC_QUANT_DSP */
#endif /* AOTC_TFLITE_INT8_DSP_H */
