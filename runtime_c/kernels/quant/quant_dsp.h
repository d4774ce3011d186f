/* The int8 kernels' helpers for cores with the Arm DSP extension (__ARM_FEATURE_DSP: Cortex-M4,
 * M33, M55; also ARMv7-A): dual 16-bit multiply-accumulates (SMLAD: two products of 16-bit halves
 * added to a 32-bit sum in one instruction) on bytes widened to 16-bit pairs (SXTB16 / UXTB16: bytes
 * 0 and 2 of a word, or 1 and 3 after a rotate by 8). Included by quant_config.h before quant_impl.h, whose
 * AOTC_QUANT_DSP paths use them; results are the integer sums of the plain paths, bit for bit.
 *
 * The data the multiply-accumulates read are widened once, not in the inner loop:
 *   - a convolution's patches are gathered as 16-bit pairs (quant_impl.h, qconv_gather_pairs):
 *     for rows 4q .. 4q + 3 of one position, the words E = [row 4q, row 4q + 2] and
 *     O = [row 4q + 1, row 4q + 3] (low half first);
 *   - the weight rows of two output channels are widened (into the QLinearConv path's work past its patch
 *     block, aotc_qconv_dsp_work_bytes) per block of positions (aotc_dsp_widen_weights), in the same pairing, so SMLAD(E, wE) + SMLAD(O, wO)
 *     is the sum over the four rows.
 * The 2 x 2 block (2 channels x 2 positions) of aotc_dsp_mac2x2 then loads 4 words of patches and
 * 4 of weights for 8 SMLADs (16 multiply-accumulates). */
#ifndef AOTC_QUANT_DSP_H
#define AOTC_QUANT_DSP_H

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_DSP) && !defined(AOTC_NO_INTRINSICS)
#define AOTC_QUANT_DSP 1
#else
#define AOTC_QUANT_DSP 0
#endif

#if AOTC_QUANT_DSP
#include <arm_acle.h>

/* The inner loops in GNU inline assembly (Thumb-2: LDRD with any two registers and post-increment),
 * which gcc's own scheduling of the same intrinsics does not reach (it splits the loads and
 * advances pointers separately: 19 instructions a quad instead of 13); C intrinsics otherwise. Not
 * at -O0, where the frame pointer leaves too few registers for the 13 operands, nor with
 * AOTC_DSP_NO_ASM (the tests build both). */
#if defined(__GNUC__) && defined(__thumb2__) && defined(__OPTIMIZE__) && !defined(AOTC_DSP_NO_ASM)
#define AOTC_DSP_ASM 1
#else
#define AOTC_DSP_ASM 0
#endif

/* 1 on a Cortex-M7 (dual issue: two instructions a cycle, SXTB16 and the like first of a pair only, one
 * multiply-accumulate a cycle), where some loops take a schedule of their own (the same instructions in
 * another order; the M4's loads stay back to back, which its pipelining rewards and the M7's pairing
 * does not need). gcc defines nothing that tells an M7 from an M4; an ARMv7E-M core with a
 * double-precision FPU (FPv5-D16, __ARM_FP bit 3) is an M7, and a build may set AOTC_DSP_M7 itself
 * (an M7 without that FPU: 1; 0 to keep the M4's schedules). */
#ifndef AOTC_DSP_M7
#if defined(__ARM_ARCH) && __ARM_ARCH == 7 && defined(__ARM_FP) && (__ARM_FP & 8)
#define AOTC_DSP_M7 1
#else
#define AOTC_DSP_M7 0
#endif
#endif

/* 1 on an Armv8-M mainline core with the DSP extension and no Helium (a Cortex-M33 or M35P: loads in 1 cycle, an
 * instruction that reads what the load just before loaded waits 1, an LDM or STM of N words 1 + N), whose 4 x 2 block
 * takes a quad of its own and its pairs' epilogues single LDRs, not LDMs (tflite_int8_dsp.h); a build may set
 * AOTC_DSP_M33 itself. */
#ifndef AOTC_DSP_M33
#if defined(__ARM_ARCH_8M_MAIN__) && !defined(__ARM_FEATURE_MVE)
#define AOTC_DSP_M33 1
#else
#define AOTC_DSP_M33 0
#endif
#endif

/* Four bytes at p (any alignment: the cores with the DSP extension load unaligned words). */
static inline uint32_t aotc_dsp_load32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint32_t aotc_dsp_ror8(uint32_t v) { return (v >> 8) | (v << 24); }

/* Bytes 1 and 3 of v widened to 16-bit halves: one instruction (the extends' own rotate) where
 * assembly is allowed. */
static inline uint32_t aotc_dsp_sxtb16_hi(uint32_t v) {
#if AOTC_DSP_ASM
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
#else
    return (uint32_t)__sxtb16(aotc_dsp_ror8(v));
#endif
}

static inline uint32_t aotc_dsp_uxtb16_hi(uint32_t v) {
#if AOTC_DSP_ASM
    uint32_t r;
    __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
#else
    return (uint32_t)__uxtb16(aotc_dsp_ror8(v));
#endif
}

/* Weight rows w0, w1 (int8, quads [0, nq)) widened: wx[4q .. 4q + 3] = [w0 bytes 0, 2],
 * [w0 bytes 1, 3], [w1 bytes 0, 2], [w1 bytes 1, 3] of quad q, as signed 16-bit halves. */
static inline void aotc_dsp_widen_weights(const int8_t *w0, const int8_t *w1, int32_t nq, uint32_t *wx) {
    const int8_t *end = w0 + 4 * nq;
    while (w0 < end) {
        const uint32_t a = aotc_dsp_load32(w0), b = aotc_dsp_load32(w1);
#if AOTC_DSP_ASM
        __asm__ volatile("strd %1, %2, [%0], #8\n\tstrd %3, %4, [%0], #8"
                : "+r"(wx)
                : "r"(__sxtb16(a)), "r"(aotc_dsp_sxtb16_hi(a)), "r"(__sxtb16(b)), "r"(aotc_dsp_sxtb16_hi(b))
                : "memory");
#else
        wx[0] = (uint32_t)__sxtb16(a);
        wx[1] = aotc_dsp_sxtb16_hi(a);
        wx[2] = (uint32_t)__sxtb16(b);
        wx[3] = aotc_dsp_sxtb16_hi(b);
        wx += 4;
#endif
        w0 += 4;
        w1 += 4;
    }
}

/* One quad of the 2 x 2 block: p = E(t0), O(t0), E(t1), O(t1); w = widened weights of c0, c1. */
#define AOTC_DSP_MAC2X2_STEP(p, w, a00, a01, a10, a11)                                                  \
    do {                                                                                               \
        a00 = __smlad((int32_t)(p)[0], (int32_t)(w)[0], a00);                                          \
        a00 = __smlad((int32_t)(p)[1], (int32_t)(w)[1], a00);                                          \
        a01 = __smlad((int32_t)(p)[2], (int32_t)(w)[0], a01);                                          \
        a01 = __smlad((int32_t)(p)[3], (int32_t)(w)[1], a01);                                          \
        a10 = __smlad((int32_t)(p)[0], (int32_t)(w)[2], a10);                                          \
        a10 = __smlad((int32_t)(p)[1], (int32_t)(w)[3], a10);                                          \
        a11 = __smlad((int32_t)(p)[2], (int32_t)(w)[2], a11);                                          \
        a11 = __smlad((int32_t)(p)[3], (int32_t)(w)[3], a11);                                          \
    } while (0)

/* For each of `count` position pairs i (their patch words `stride` words apart from p):
 * acc[4i + 2j + t] += the sum over quads q < nq (nq >= 1) of channel j's weights times the patch of
 * the pair's position t, where a pair's patch holds 4 words a quad (consecutive, word-aligned) and
 * w the widened weights, 4 words a quad (word-aligned). In assembly, a quad is one LDM of the 4
 * patch words (into r4, r5, r6, r8: an LDM's registers ascend), two LDRDs of weights and 8 SMLADs;
 * the loop does two quads a turn, entered at the second for an odd count. Not inlined: the 13
 * registers of the loop are then free whatever the caller holds. */
__attribute__((noinline, unused)) static void aotc_dsp_mac2x2(const uint32_t *p, int32_t stride, int32_t count,
                                                              const uint32_t *w, int32_t nq, int32_t *acc) {
    int32_t i;
    for (i = 0; i < count; ++i, p += stride, acc += 4) {
        const uint32_t *pp = p, *ww = w;
        int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
#if AOTC_DSP_ASM
        const uint32_t *end = w + 4 * nq;
        register uint32_t x0 __asm__("r4");
        register uint32_t x1 __asm__("r5");
        register uint32_t x2 __asm__("r6");
        register uint32_t x3 __asm__("r8");
        uint32_t v0, v1;
#define AOTC_DSP_MAC2X2_ASM                                                                             \
    "ldmia %[p]!, {%[x0], %[x1], %[x2], %[x3]}\n\t"                                                   \
    "ldrd %[v0], %[v1], [%[w]], #8\n\t"                                                               \
    "smlad %[a00], %[x0], %[v0], %[a00]\n\t"                                                          \
    "smlad %[a01], %[x2], %[v0], %[a01]\n\t"                                                          \
    "smlad %[a00], %[x1], %[v1], %[a00]\n\t"                                                          \
    "smlad %[a01], %[x3], %[v1], %[a01]\n\t"                                                          \
    "ldrd %[v0], %[v1], [%[w]], #8\n\t"                                                               \
    "smlad %[a10], %[x0], %[v0], %[a10]\n\t"                                                          \
    "smlad %[a11], %[x2], %[v0], %[a11]\n\t"                                                          \
    "smlad %[a10], %[x1], %[v1], %[a10]\n\t"                                                          \
    "smlad %[a11], %[x3], %[v1], %[a11]\n\t"
        __asm__("sub %[v0], %[end], %[w]\n\t"
                "tst %[v0], #16\n\t" /* an odd number of quads (16 bytes each) */
                "bne 2f\n"
                "1:\n\t" AOTC_DSP_MAC2X2_ASM
                "2:\n\t" AOTC_DSP_MAC2X2_ASM
                "cmp %[w], %[end]\n\t"
                "bne 1b"
                : [p] "+r"(pp), [w] "+r"(ww), [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
                  [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [v0] "=&r"(v0), [v1] "=&r"(v1)
                : [end] "r"(end)
                : "cc", "memory");
#undef AOTC_DSP_MAC2X2_ASM
#else
        int32_t q;
        for (q = 0; q < nq; ++q) {
            AOTC_DSP_MAC2X2_STEP(pp, ww, a00, a01, a10, a11);
            pp += 4;
            ww += 4;
        }
#endif
        acc[0] = a00, acc[1] = a01, acc[2] = a10, acc[3] = a11;
    }
}

/* Weight rows w0 .. w3 of four output channels (int8, quads [0, nq)) widened for aotc_dsp_mac4x2:
 * wx[8q .. 8q + 3] = bytes 0 and 2 of quad q of rows 0 .. 3, wx[8q + 4 .. 8q + 7] = bytes 1 and 3, as
 * signed 16-bit halves. */
static inline void aotc_dsp_widen_weights4(const int8_t *w0, const int8_t *w1, const int8_t *w2, const int8_t *w3,
                                           int32_t nq, uint32_t *wx) {
    int32_t q;
    for (q = 0; q < nq; ++q, wx += 8) {
        const uint32_t a = aotc_dsp_load32(w0 + 4 * q), b = aotc_dsp_load32(w1 + 4 * q);
        const uint32_t c = aotc_dsp_load32(w2 + 4 * q), d = aotc_dsp_load32(w3 + 4 * q);
        wx[0] = (uint32_t)__sxtb16(a), wx[1] = (uint32_t)__sxtb16(b);
        wx[2] = (uint32_t)__sxtb16(c), wx[3] = (uint32_t)__sxtb16(d);
        wx[4] = aotc_dsp_sxtb16_hi(a), wx[5] = aotc_dsp_sxtb16_hi(b);
        wx[6] = aotc_dsp_sxtb16_hi(c), wx[7] = aotc_dsp_sxtb16_hi(d);
    }
}

/* The 4 x 2 block: for each of `count` position pairs i, whose patches follow one another (4 nq words
 * each: quad q's words E(t0), O(t0), E(t1), O(t1), as aotc_dsp_mac2x2 reads them),
 * acc[8i + 2j + t] += the sum over quads q < nq (nq >= 1) of channel j's weights (w: 8 words a quad,
 * aotc_dsp_widen_weights4's) times the patch of the pair's position t. Each patch word serves 4
 * SMLADs and each weight word 2 (the 2 x 2 block: 2 and 2), so a quad is two runs of 4 LDRs (each
 * after the first pipelined, none right after a writeback of its base: 5 cycles), two LDRDs (3 each, as two LDRs) and 16 SMLADs: 32 cycles for
 * 32 multiply-accumulates on the M4 (aotc_dsp_mac2x2: 19 for 16, plus its loop's 4 a turn of 2).
 *
 * In assembly the function is naked: its loop takes all 14 registers (8 sums, 2 patch and 2 weight
 * words, the two pointers), so the weights' end, the pairs left, the loop's entry and the sums'
 * pointer live on the stack; the loop does 16 quads a turn (one load, a compare and a branch a
 * turn: 6 cycles, 1 % of the turn's; at 4 a turn ResNet-8 took 1.3 % more cycles than at 8, and at 8 IC02's
 * wide layers (90 to 360 quads a patch, in blocks of 64) 0.9 % more than at 16), entered past the
 * first (-nq) mod 16 quads (every quad is the same 104 bytes of 32-bit
 * instructions; the pointers advance by post-indexed loads). After a pair's quads the patch
 * pointer is at the next pair's patch. */
#if AOTC_DSP_ASM
#if AOTC_DSP_M7
/* The M7's quad (the same sums, 104 bytes too): every SMLAD but the first's neighbours beside a load (LDRs, not LDRDs,
 * which issue alone), each load at least an instruction before what reads it; the weights in r2 and r3 at positive
 * offsets (6 of them 16-bit LDRs, so that the 12 loads, the ADD of the weights' pointer and the 16 SMLADs are 104
 * bytes), the patches in r12 and lr. 17 cycles for 32 multiply-accumulates on the dual-issue model (the M4's
 * order: 21, its LDRDs alone in their cycles and SMLADs back to back on the one MAC unit). */
#define AOTC_DSP_MAC4X2_QUAD                                                                            \
    "ldr.w r12, [r0], #16\n\t" /* E(t0) */                                                            \
    "ldr r2, [r1]\n\t"         /* channel 0's E */                                                    \
    "smlad r4, r12, r2, r4\n\t"                                                                      \
    "ldr lr, [r0, #-8]\n\t"    /* E(t1) */                                                            \
    "smlad r5, lr, r2, r5\n\t"                                                                       \
    "ldr r3, [r1, #4]\n\t"                                                                           \
    "smlad r6, r12, r3, r6\n\t"                                                                      \
    "ldr r2, [r1, #8]\n\t"                                                                           \
    "smlad r7, lr, r3, r7\n\t"                                                                       \
    "ldr r3, [r1, #12]\n\t"                                                                          \
    "smlad r8, r12, r2, r8\n\t"                                                                      \
    "smlad r9, lr, r2, r9\n\t"                                                                       \
    "ldr r2, [r1, #16]\n\t"   /* channel 0's O */                                                     \
    "smlad r10, r12, r3, r10\n\t"                                                                    \
    "ldr r12, [r0, #-12]\n\t"   /* O(t0) */                                                           \
    "smlad r11, lr, r3, r11\n\t"                                                                     \
    "ldr r3, [r1, #20]\n\t"                                                                          \
    "smlad r4, r12, r2, r4\n\t"                                                                      \
    "ldr lr, [r0, #-4]\n\t"    /* O(t1) */                                                            \
    "smlad r6, r12, r3, r6\n\t"                                                                      \
    "smlad r5, lr, r2, r5\n\t"                                                                       \
    "ldr.w r2, [r1, #24]\n\t"                                                                        \
    "smlad r7, lr, r3, r7\n\t"                                                                       \
    "ldr.w r3, [r1, #28]\n\t"                                                                        \
    "add.w r1, r1, #32\n\t"                                                                          \
    "smlad r8, r12, r2, r8\n\t"                                                                      \
    "smlad r10, r12, r3, r10\n\t"                                                                    \
    "smlad r9, lr, r2, r9\n\t"                                                                       \
    "smlad r11, lr, r3, r11\n\t"
#elif AOTC_DSP_M33
/* The M33's quad: 12 LDRs (no LDRD, which takes 3 cycles there as on the M4), each load two instructions or more
 * before what reads it (no load-use stall), and no ADD of the weights' pointer: the quad's first weight load is
 * pre-indexed with writeback ([r1, #32]!), so r1 enters each quad 32 bytes before its weights (the kernels start it
 * at w - 32, AOTC_DSP_MAC4X2_WPRE, and their ends are biased alike) and the other 7 are at positive offsets from
 * where it lands. The next instruction after it does not read r1 (the model counts a written-back base as loaded).
 * 28 cycles for 32 multiply-accumulates on its model (with an ADD of the pointer: 29; the M4's order: 30, its two
 * LDRDs 3 each; VWW -O3's aotc_dsp_mac4x2_rq3 7,533,884 est. cycles in the M4's order, 7,327,292 with the ADD,
 * 7,121,354); 104 bytes as the other cores' quads (three loads .w), so the kernels' entries past (-nq) mod 16 quads
 * are the same. */
#define AOTC_DSP_MAC4X2_QUAD                                                                            \
    "ldr r2, [r1, #32]!\n\t"    /* channel 0's E; r1 at the quad's weights */                          \
    "ldr.w r12, [r0], #16\n\t" /* E(t0) */                                                            \
    "ldr.w r3, [r1, #4]\n\t"                                                                           \
    "ldr lr, [r0, #-8]\n\t"    /* E(t1) */                                                            \
    "smlad r4, r12, r2, r4\n\t"                                                                      \
    "smlad r5, lr, r2, r5\n\t"                                                                       \
    "ldr.w r2, [r1, #8]\n\t"                                                                           \
    "smlad r6, r12, r3, r6\n\t"                                                                      \
    "smlad r7, lr, r3, r7\n\t"                                                                       \
    "ldr.w r3, [r1, #12]\n\t"                                                                          \
    "smlad r8, r12, r2, r8\n\t"                                                                      \
    "smlad r9, lr, r2, r9\n\t"                                                                       \
    "ldr r2, [r1, #16]\n\t"   /* channel 0's O */                                                     \
    "smlad r10, r12, r3, r10\n\t"                                                                    \
    "ldr r12, [r0, #-12]\n\t"   /* O(t0) */                                                           \
    "smlad r11, lr, r3, r11\n\t"                                                                     \
    "ldr r3, [r1, #20]\n\t"                                                                          \
    "smlad r4, r12, r2, r4\n\t"                                                                      \
    "ldr lr, [r0, #-4]\n\t"    /* O(t1) */                                                            \
    "smlad r6, r12, r3, r6\n\t"                                                                      \
    "smlad r5, lr, r2, r5\n\t"                                                                       \
    "ldr r2, [r1, #24]\n\t"                                                                          \
    "smlad r7, lr, r3, r7\n\t"                                                                       \
    "ldr r3, [r1, #28]\n\t"                                                                          \
    "smlad r8, r12, r2, r8\n\t"                                                                      \
    "smlad r10, r12, r3, r10\n\t"                                                                    \
    "smlad r9, lr, r2, r9\n\t"                                                                       \
    "smlad r11, lr, r3, r11\n\t"
#define AOTC_DSP_MAC4X2_WPRE "sub r2, r2, #32\n\t" /* w (r2 at a kernel's entry) less 32: the quads' pre-index */
#else
#define AOTC_DSP_MAC4X2_QUAD                                                                            \
    "ldr.w r2, [r0], #16\n\t"  /* E(t0); the bases alternate: a load after one whose writeback */ \
    "ldr.w r12, [r1], #32\n\t" /* E of channel 0; formed its address would not pipeline */      \
    "ldr r3, [r0, #-8]\n\t"    /* E(t1) */                                                     \
    "ldr lr, [r1, #-28]\n\t"   /* E of channel 1 */                                                   \
    "smlad r4, r2, r12, r4\n\t"                                                                        \
    "smlad r5, r3, r12, r5\n\t"                                                                        \
    "smlad r6, r2, lr, r6\n\t"                                                                         \
    "smlad r7, r3, lr, r7\n\t"                                                                         \
    "ldrd r12, lr, [r1, #-24]\n\t" /* channels 2, 3: as fast as two LDRs */                              \
    "smlad r8, r2, r12, r8\n\t"                                                                        \
    "smlad r9, r3, r12, r9\n\t"                                                                        \
    "smlad r10, r2, lr, r10\n\t"                                                                       \
    "smlad r11, r3, lr, r11\n\t"                                                                       \
    "ldr r2, [r0, #-12]\n\t"   /* O(t0) */                                                            \
    "ldr r3, [r0, #-4]\n\t"    /* O(t1) */                                                            \
    "ldr r12, [r1, #-16]\n\t"                                                                          \
    "ldr lr, [r1, #-12]\n\t"                                                                           \
    "smlad r4, r2, r12, r4\n\t"                                                                        \
    "smlad r5, r3, r12, r5\n\t"                                                                        \
    "smlad r6, r2, lr, r6\n\t"                                                                         \
    "smlad r7, r3, lr, r7\n\t"                                                                         \
    "ldrd r12, lr, [r1, #-8]\n\t" /* channels 2, 3: as fast as two LDRs */                              \
    "smlad r8, r2, r12, r8\n\t"                                                                        \
    "smlad r9, r3, r12, r9\n\t"                                                                        \
    "smlad r10, r2, lr, r10\n\t"                                                                       \
    "smlad r11, r3, lr, r11\n\t"
#endif
#ifndef AOTC_DSP_MAC4X2_WPRE
#define AOTC_DSP_MAC4X2_WPRE "" /* the M4's and M7's quads step r1 themselves from w */
#endif
#define AOTC_DSP_ARG __attribute__((unused)) /* a naked function's arguments are its assembly's registers */
__attribute__((naked, noinline, unused)) static void aotc_dsp_mac4x2(AOTC_DSP_ARG const uint32_t *p,
                                                                     AOTC_DSP_ARG int32_t count,
                                                                     AOTC_DSP_ARG const uint32_t *w,
                                                                     AOTC_DSP_ARG int32_t nq, AOTC_DSP_ARG int32_t *acc) {
    /* r0 p, r1 count (then w), r2 w, r3 nq; acc on the stack. Locals: [sp] the weights' end, [sp, #4]
     * the sums' end, [sp, #8] the loop's entry (Thumb bit set), [sp, #12] w, [sp, #16] the pair's sums. Between
     * pairs the sums' pointer stays in r2 (the STM's writeback is the next pair's LDM's), the count is the pointer
     * against the end and the PC is loaded: 33 est. cycles, not 36 (IC02's multi-block layers take it ~45 K times) */
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #20\n\t" AOTC_DSP_MAC4X2_WPRE
        "cmp r1, #0\n\t"
        "ble 9f\n\t"
        "ldr r4, [sp, #56]\n\t"
        "str r4, [sp, #16]\n\t"
        "add r5, r4, r1, lsl #5\n\t" /* the sums' end: 8 words a pair */
        "str r5, [sp, #4]\n\t"
        "add r4, r2, r3, lsl #5\n\t"
        "str r4, [sp]\n\t"
        "str r2, [sp, #12]\n\t"
        "rsbs r5, r3, #0\n\t"
        "and r5, r5, #15\n\t"
        "movs r6, #104\n\t"
        "adr.w r4, 1f\n\t"
        "mla r4, r5, r6, r4\n\t"
        "orr r4, r4, #1\n\t"
        "str r4, [sp, #8]\n"
        "ldr r2, [sp, #16]\n"
        "2:\n\t" /* a pair (r2 its sums): its sums into r4 .. r11, w to the start, into the loop */
        "ldm r2, {r4-r11}\n\t"
        "str r2, [sp, #16]\n\t"
        "ldr r1, [sp, #12]\n\t"
        "ldr pc, [sp, #8]\n\t"
        ".p2align 2\n"
        "1:\n\t" AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
            AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
                AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
                    AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
        "ldr r2, [sp]\n\t"
        "cmp r1, r2\n\t"
        "bne 1b\n\t"
        "ldr r2, [sp, #16]\n\t"
        "stmia r2!, {r4-r11}\n\t"
        "ldr r3, [sp, #4]\n\t"
        "cmp r2, r3\n\t"
        "bne 2b\n"
        "9:\n\t"
        "add sp, sp, #20\n\t"
        "pop {r4-r11, pc}\n\t");
}
/* (AOTC_DSP_MAC4X2_QUAD stays defined: tflite_int8_dsp.h's aotc_dsp_mac4x2_rq runs the same quads) */
#undef AOTC_DSP_ARG
#else
__attribute__((noinline, unused)) static void aotc_dsp_mac4x2(const uint32_t *p, int32_t count, const uint32_t *w,
                                                              int32_t nq, int32_t *acc) {
    int32_t i, q, j;
    for (i = 0; i < count; ++i, acc += 8) {
        const uint32_t *ww = w;
        int32_t a[8];
        for (j = 0; j < 8; ++j) a[j] = acc[j];
        for (q = 0; q < nq; ++q, p += 4, ww += 8) {
            for (j = 0; j < 4; ++j) {
                a[2 * j] = __smlad((int32_t)p[0], (int32_t)ww[j], a[2 * j]);
                a[2 * j] = __smlad((int32_t)p[1], (int32_t)ww[4 + j], a[2 * j]);
                a[2 * j + 1] = __smlad((int32_t)p[2], (int32_t)ww[j], a[2 * j + 1]);
                a[2 * j + 1] = __smlad((int32_t)p[3], (int32_t)ww[4 + j], a[2 * j + 1]);
            }
        }
        for (j = 0; j < 8; ++j) acc[j] = a[j];
    }
}
#endif

/* A dense layer's four outputs at once: acc[j] += the sum over quads q < nq (nq >= 1) of the 16-bit
 * pairs xw[2q] = [x(4q), x(4q + 2)], xw[2q + 1] = [x(4q + 1), x(4q + 3)] (word-aligned) times
 * weight row j's int8 bytes 4q .. 4q + 3, rows `ld` bytes apart from w (any alignment), widened as
 * loaded. In assembly a quad is one LDRD of x, four weight words, 8 SXTB16s and 8 SMLADs (21
 * instructions for 16 multiply-accumulates), two quads a turn (entered at the second for an odd
 * count); not inlined, for the 13 registers. */
__attribute__((noinline, unused)) static void aotc_dsp_gemv4(const uint32_t *xw, int32_t nq, const int8_t *w, int32_t ld,
                                                     int32_t *acc) {
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
#if AOTC_DSP_ASM
    const uint32_t *end = xw + 2 * nq;
    const int8_t *wa = w, *wb = w + 2 * ld;
    uint32_t x0, x1, v, t;
#define AOTC_DSP_GEMV4_ASM                                                                              \
    "ldrd %[x0], %[x1], [%[xp]], #8\n\t"                                                             \
    "ldr %[v], [%[wa], %[ld]]\n\t"                                                                   \
    "sxtb16 %[t], %[v]\n\t"                                                                          \
    "smlad %[a1], %[x0], %[t], %[a1]\n\t"                                                            \
    "sxtb16 %[t], %[v], ror #8\n\t"                                                                  \
    "smlad %[a1], %[x1], %[t], %[a1]\n\t"                                                            \
    "ldr %[v], [%[wa]], #4\n\t"                                                                      \
    "sxtb16 %[t], %[v]\n\t"                                                                          \
    "smlad %[a0], %[x0], %[t], %[a0]\n\t"                                                            \
    "sxtb16 %[t], %[v], ror #8\n\t"                                                                  \
    "smlad %[a0], %[x1], %[t], %[a0]\n\t"                                                            \
    "ldr %[v], [%[wb], %[ld]]\n\t"                                                                   \
    "sxtb16 %[t], %[v]\n\t"                                                                          \
    "smlad %[a3], %[x0], %[t], %[a3]\n\t"                                                            \
    "sxtb16 %[t], %[v], ror #8\n\t"                                                                  \
    "smlad %[a3], %[x1], %[t], %[a3]\n\t"                                                            \
    "ldr %[v], [%[wb]], #4\n\t"                                                                      \
    "sxtb16 %[t], %[v]\n\t"                                                                          \
    "smlad %[a2], %[x0], %[t], %[a2]\n\t"                                                            \
    "sxtb16 %[t], %[v], ror #8\n\t"                                                                  \
    "smlad %[a2], %[x1], %[t], %[a2]\n\t"
    __asm__("sub %[v], %[end], %[xp]\n\t"
            "tst %[v], #8\n\t" /* an odd number of quads (8 bytes of x each) */
            "bne 2f\n"
            "1:\n\t" AOTC_DSP_GEMV4_ASM
            "2:\n\t" AOTC_DSP_GEMV4_ASM
            "cmp %[xp], %[end]\n\t"
            "bne 1b"
            : [xp] "+r"(xw), [wa] "+r"(wa), [wb] "+r"(wb), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2),
              [a3] "+r"(a3), [x0] "=&r"(x0), [x1] "=&r"(x1), [v] "=&r"(v), [t] "=&r"(t)
            : [end] "r"(end), [ld] "r"(ld)
            : "cc", "memory");
#undef AOTC_DSP_GEMV4_ASM
#else
    int32_t q;
    for (q = 0; q < nq; ++q, w += 4) {
        const uint32_t e = xw[2 * q], o = xw[2 * q + 1];
        const uint32_t v0 = aotc_dsp_load32(w), v1 = aotc_dsp_load32(w + ld), v2 = aotc_dsp_load32(w + 2 * ld),
                       v3 = aotc_dsp_load32(w + 3 * ld);
        a0 = __smlad((int32_t)e, (int32_t)__sxtb16(v0), __smlad((int32_t)o, (int32_t)aotc_dsp_sxtb16_hi(v0), a0));
        a1 = __smlad((int32_t)e, (int32_t)__sxtb16(v1), __smlad((int32_t)o, (int32_t)aotc_dsp_sxtb16_hi(v1), a1));
        a2 = __smlad((int32_t)e, (int32_t)__sxtb16(v2), __smlad((int32_t)o, (int32_t)aotc_dsp_sxtb16_hi(v2), a2));
        a3 = __smlad((int32_t)e, (int32_t)__sxtb16(v3), __smlad((int32_t)o, (int32_t)aotc_dsp_sxtb16_hi(v3), a3));
    }
#endif
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/* A dense layer's n >= 4 outputs: sums[o] = init[o] (0 where init is NULL) plus the product of xw
 * (aotc_dsp_gemv4's pairs, nq quads; none if nq is 0) and weight row o (rows `ld` bytes apart from
 * w), four rows at a time, the last block of four overlapping the one before. The sums go to
 * memory so that the caller's requantisation is one tight loop over them, not four outputs'
 * worth of code per call. */
__attribute__((unused)) static void aotc_dsp_gemv_rows(const uint32_t *xw, int32_t nq, const int8_t *w, int32_t ld,
                                                       int32_t n, const int32_t *init, int32_t *sums) {
    int32_t o, j;
    for (o = 0; o < n; o += 4) {
        const int32_t o0 = o + 4 <= n ? o : n - 4;
        for (j = 0; j < 4; ++j) sums[o0 + j] = init ? init[o0 + j] : 0;
        if (nq > 0) aotc_dsp_gemv4(xw, nq, w + (int64_t)o0 * ld, ld, sums + o0);
    }
}

/* One tap of 4 channels: input word v, widened weights wt[0] = [c0, c2], wt[1] = [c1, c3]. */
#define AOTC_DSP_DW_TAP(v, wt)                                                                           \
    do {                                                                                               \
        const uint32_t v_ = (v), e_ = (uint32_t)__sxtb16(v_), o_ = aotc_dsp_sxtb16_hi(v_);              \
        a0 = __smlabb((int32_t)e_, (int32_t)(wt)[0], a0);                                             \
        a2 = __smlatt((int32_t)e_, (int32_t)(wt)[0], a2);                                             \
        a1 = __smlabb((int32_t)o_, (int32_t)(wt)[1], a1);                                             \
        a3 = __smlatt((int32_t)o_, (int32_t)(wt)[1], a3);                                             \
    } while (0)

/* A depthwise convolution's sums of 4 channels at `count` output positions whose 3 x 3 window lies inside the image:
 * acc[4i + j] = base[j] + the window's taps at x + i * pstep (x: the first window's top-left
 * input, channel ch; step: a tap's bytes, row: an input row's). In assembly a tap is one LDR of
 * the input, one LDRD of the widened weights, 2 SXTB16s and 4 multiply-accumulates (8
 * instructions for 4 MACs); not inlined, for the 13 registers. The input holds 4 channels' bytes a
 * position (NHWC, or quant_impl.h's interleaved copy of 4 NCHW planes). */
__attribute__((noinline, unused)) static void aotc_dsp_dw3x3_run(const int8_t *x, int32_t pstep, int32_t count, int32_t step,
                                                       int32_t row, const uint32_t *wq, const int32_t *base,
                                                       int32_t *acc) {
    int32_t i;
    for (i = 0; i < count; ++i, x += pstep, acc += 4) {
        int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3];
#if AOTC_DSP_ASM
        const int8_t *r = x;
        const uint32_t *wp = wq;
        const int32_t step2 = 2 * step;
        uint32_t v, e, w0, w1;
#define AOTC_DSP_DW_TAP_ASM(off)                                                                         \
    "ldr %[v], [%[r]" off "]\n\t"                                                                       \
    "ldrd %[w0], %[w1], [%[wp]], #8\n\t"                                                                \
    "sxtb16 %[e], %[v]\n\t"                                                                             \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                                     \
    "smlabb %[a0], %[e], %[w0], %[a0]\n\t"                                                              \
    "smlatt %[a2], %[e], %[w0], %[a2]\n\t"                                                              \
    "smlabb %[a1], %[v], %[w1], %[a1]\n\t"                                                              \
    "smlatt %[a3], %[v], %[w1], %[a3]\n\t"
#define TFL_DSP_DW_ROW_ASM AOTC_DSP_DW_TAP_ASM("") AOTC_DSP_DW_TAP_ASM(", %[s1]") AOTC_DSP_DW_TAP_ASM(", %[s2]")
        __asm__(TFL_DSP_DW_ROW_ASM "add %[r], %[r], %[row]\n\t" TFL_DSP_DW_ROW_ASM "add %[r], %[r], %[row]\n\t"
                TFL_DSP_DW_ROW_ASM
                : [r] "+r"(r), [wp] "+r"(wp), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),
                  [v] "=&r"(v), [e] "=&r"(e), [w0] "=&r"(w0), [w1] "=&r"(w1)
                : [s1] "r"(step), [s2] "r"(step2), [row] "r"(row)
                : "memory");
#undef TFL_DSP_DW_ROW_ASM
#undef AOTC_DSP_DW_TAP_ASM
#else
        int32_t ky;
        const int8_t *r = x;
        for (ky = 0; ky < 3; ++ky, r += row) {
            AOTC_DSP_DW_TAP(aotc_dsp_load32(r), wq + 6 * ky);
            AOTC_DSP_DW_TAP(aotc_dsp_load32(r + step), wq + 6 * ky + 2);
            AOTC_DSP_DW_TAP(aotc_dsp_load32(r + 2 * step), wq + 6 * ky + 4);
        }
#endif
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
    }
}

/* aotc_dsp_gemv4 on weights stored interleaved: w holds quad q of the 4 rows as 16 consecutive bytes
 * (row 0's 4 bytes, then rows 1, 2, 3; word-aligned). In assembly a quad is one run of 6 LDRs (the 2
 * words of x, the 4 of weights; each after the first pipelined, none right after a writeback of its
 * base: 7 cycles on the M4, where an LDRD of x
 * and two of weights took 9), 8 SXTB16s and 8 SMLADs: 23 cycles for 16 multiply-accumulates. The
 * function is naked: the loop takes 14 registers (4 sums, 2 words of x, 4 of weights, the widened
 * one, the two pointers and x's end), 4 quads a turn (a compare and a branch), entered past the
 * first (-nq) mod 4 quads (every quad the same 88 bytes of 32-bit instructions). */
#if AOTC_DSP_ASM
#define AOTC_DSP_GEMV4_IL_ROW(v, a)                                                                      \
    "sxtb16 r3, " v "\n\t"                                                                             \
    "smlad " a ", r8, r3, " a "\n\t"                                                                   \
    "sxtb16 " v ", " v ", ror #8\n\t"                                                                  \
    "smlad " a ", r9, " v ", " a "\n\t"
#if AOTC_DSP_M7
/* The M7's quad: each SXTB16 (first of a pair only) beside the SMLAD of the one before it (the in-place
 * widening of a weight word's odd bytes keeps r3 the only temporary), the quad's last SMLAD beside the
 * next quad's first load, its last weight load beside its first SXTB16: 11 cycles for 16 multiply-accumulates
 * on the dual-issue model (the M4's order: 20, each SMLAD right after the SXTB16 it reads) */
#define AOTC_DSP_GEMV4_IL_QUAD                                                                          \
    "ldr.w r8, [r0], #8\n\t"                                                                           \
    "ldr.w r10, [r1], #16\n\t"                                                                         \
    "ldr r9, [r0, #-4]\n\t"                                                                            \
    "ldr r11, [r1, #-12]\n\t"                                                                          \
    "ldr r12, [r1, #-8]\n\t"                                                                           \
    "sxtb16 r3, r10\n\t"                                                                               \
    "ldr lr, [r1, #-4]\n\t"                                                                            \
    "sxtb16 r10, r10, ror #8\n\t"                                                                      \
    "smlad r4, r8, r3, r4\n\t"                                                                         \
    "sxtb16 r3, r11\n\t"                                                                               \
    "smlad r4, r9, r10, r4\n\t"                                                                        \
    "sxtb16 r11, r11, ror #8\n\t"                                                                      \
    "smlad r5, r8, r3, r5\n\t"                                                                         \
    "sxtb16 r3, r12\n\t"                                                                               \
    "smlad r5, r9, r11, r5\n\t"                                                                        \
    "sxtb16 r12, r12, ror #8\n\t"                                                                      \
    "smlad r6, r8, r3, r6\n\t"                                                                         \
    "sxtb16 r3, lr\n\t"                                                                                \
    "smlad r6, r9, r12, r6\n\t"                                                                        \
    "sxtb16 lr, lr, ror #8\n\t"                                                                        \
    "smlad r7, r8, r3, r7\n\t"                                                                         \
    "smlad r7, r9, lr, r7\n\t"
#else
#define AOTC_DSP_GEMV4_IL_QUAD                                                                          \
    "ldr.w r8, [r0], #8\n\t"                                                                           \
    "ldr.w r10, [r1], #16\n\t" /* the bases alternate (a writeback's next load would not pipeline) */ \
    "ldr r9, [r0, #-4]\n\t"                                                                            \
    "ldr r11, [r1, #-12]\n\t"                                                                          \
    "ldr r12, [r1, #-8]\n\t"                                                                           \
    "ldr lr, [r1, #-4]\n\t" AOTC_DSP_GEMV4_IL_ROW("r10", "r4") AOTC_DSP_GEMV4_IL_ROW("r11", "r5")       \
        AOTC_DSP_GEMV4_IL_ROW("r12", "r6") AOTC_DSP_GEMV4_IL_ROW("lr", "r7")
#endif
#define AOTC_DSP_ARG __attribute__((unused)) /* a naked function's arguments are its assembly's registers */
__attribute__((naked, noinline, unused)) static void aotc_dsp_gemv4_il(AOTC_DSP_ARG const uint32_t *xw,
                                                                       AOTC_DSP_ARG int32_t nq,
                                                                       AOTC_DSP_ARG const int8_t *w,
                                                                       AOTC_DSP_ARG int32_t *acc) {
    /* r0 x, r1 nq (then w), r2 w (then x's end), r3 acc (then the widened weight; acc on the stack) */
    __asm__ volatile(
        "push {r3-r11, lr}\n\t"
        "ldm r3, {r4-r7}\n\t"
        "add r3, r0, r1, lsl #3\n\t"
        "rsbs r1, r1, #0\n\t"
        "and r1, r1, #3\n\t"
        "movs r12, #88\n\t"
        "adr.w lr, 1f\n\t"
        "mla lr, r1, r12, lr\n\t"
        "orr lr, lr, #1\n\t"
        "mov r1, r2\n\t"
        "mov r2, r3\n\t"
        "bx lr\n\t"
        ".p2align 2\n"
        "1:\n\t" AOTC_DSP_GEMV4_IL_QUAD AOTC_DSP_GEMV4_IL_QUAD AOTC_DSP_GEMV4_IL_QUAD AOTC_DSP_GEMV4_IL_QUAD
        "cmp r0, r2\n\t"
        "bne 1b\n\t"
        "ldr r3, [sp]\n\t"
        "stm r3, {r4-r7}\n\t"
        "pop {r3-r11, pc}\n\t");
}
#undef AOTC_DSP_ARG
#undef AOTC_DSP_GEMV4_IL_QUAD
#undef AOTC_DSP_GEMV4_IL_ROW
#else
__attribute__((noinline, unused)) static void aotc_dsp_gemv4_il(const uint32_t *xw, int32_t nq, const int8_t *w,
                                                                int32_t *acc) {
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    int32_t q;
    for (q = 0; q < nq; ++q, w += 16) {
        const uint32_t e = xw[2 * q], o = xw[2 * q + 1];
        const uint32_t v0 = aotc_dsp_load32(w), v1 = aotc_dsp_load32(w + 4), v2 = aotc_dsp_load32(w + 8),
                       v3 = aotc_dsp_load32(w + 12);
        a0 = __smlad((int32_t)e, (int32_t)__sxtb16(v0), __smlad((int32_t)o, (int32_t)aotc_dsp_sxtb16_hi(v0), a0));
        a1 = __smlad((int32_t)e, (int32_t)__sxtb16(v1), __smlad((int32_t)o, (int32_t)aotc_dsp_sxtb16_hi(v1), a1));
        a2 = __smlad((int32_t)e, (int32_t)__sxtb16(v2), __smlad((int32_t)o, (int32_t)aotc_dsp_sxtb16_hi(v2), a2));
        a3 = __smlad((int32_t)e, (int32_t)__sxtb16(v3), __smlad((int32_t)o, (int32_t)aotc_dsp_sxtb16_hi(v3), a3));
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}
#endif

/* aotc_dsp_gemv_rows on interleaved weights (n and the row length 4 nq multiples of 4, nq >= 1):
 * block o / 4 of 4 rows at w + 4 nq o. */
__attribute__((unused)) static void aotc_dsp_gemv_rows_il(const uint32_t *xw, int32_t nq, const int8_t *w, int32_t n,
                                                          const int32_t *init, int32_t *sums) {
    int32_t o, j;
    for (o = 0; o < n; o += 4) {
        for (j = 0; j < 4; ++j) sums[o + j] = init ? init[o + j] : 0;
        aotc_dsp_gemv4_il(xw, nq, w + (int64_t)o * 4 * nq, sums + o);
    }
}

/* Round half to even (the FPU's default rounding mode: one VCVTR where there is a single-precision
 * FPU), saturated to 16 bits (a sum far out of range stays out of range). */
static inline int32_t aotc_dsp_round16(float f) {
#if defined(__ARM_FP) && (__ARM_FP & 4) && defined(__GNUC__)
    int32_t r;
    __asm__("vcvtr.s32.f32 %1, %1\n\tvmov %0, %1" : "=r"(r), "+t"(f));
    return __ssat(r, 16);
#else
    f = f < -32768.0f ? -32768.0f : f;
    f = f > 32767.0f ? 32767.0f : f;
    return aotc_round_even(f);
#endif
}

#endif /* AOTC_QUANT_DSP */
#endif /* AOTC_QUANT_DSP_H */
