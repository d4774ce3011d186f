/* TFLite's DEPTHWISE_CONV_2D, int8 and 16x8 (aotc_tflite_int8.h): plain loops and, on cores with the DSP
 * extension (depth multiplier 1) 4 channels at a time, each tap's 4 input bytes and 4 weight bytes
 * widened to [c0, c2] / [c1, c3] halves, and SMLABB / SMLATT per channel (requantised by Helium's
 * vectors on the M55); a 3 x 3 window of dilation 1 and column stride 1 or 2 by bands of input rows
 * (tfl_dsp_dw_band), two positions at a time. */
#define AOTC_TFL_CONV_DECLS 1 /* declares this file's entry points (aotc_tflite_int8.h) */
#include "tflite_int8_internal.h"
#include "tflite_int8_dsp.h" /* the DSP extension's paths (Cortex-M4, M33, M55) and Helium's (M55) */
#include <stddef.h>          /* ptrdiff_t */
/* the portable loops' dot products (and requantisation) by Helium: the M55's portable-mve levels (issue 67) */
#define TFL_PMVE (TFL_PMVE_ISA && AOTC_TFL_PORTABLE_MVE)
#define TFL_PMVE_RQ (TFL_PMVE && AOTC_TFL_PORTABLE_MVE_RQ && AOTC_TFL_PORTABLE_MVE_RQ_DW)

#if AOTC_QUANT_DSP

/* Sums of 4 channels at one output position, any window, taps in the padding reading x_zero (zb). */
static void tfl_dsp_dw_one(const aotc_tfl_conv_params *p, const int8_t *xb, int32_t iy0, int32_t ix0,
                           const uint32_t *wq, const int32_t *base, uint32_t zb, int32_t *acc) {
    const int32_t c = p->c;
    int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3], ky, kx;
    for (ky = 0; ky < p->kh; ++ky) {
        const int32_t iy = iy0 + ky * p->dh;
        for (kx = 0; kx < p->kw; ++kx, wq += 2) {
            const int32_t ix = ix0 + kx * p->dw;
            AOTC_DSP_DW_TAP(iy >= 0 && iy < p->h && ix >= 0 && ix < p->w
                               ? aotc_dsp_load32(xb + ((int64_t)iy * p->w + ix) * c)
                               : zb,
                           wq);
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

#if !AOTC_TFL_MVE
/* One channel's n sums (acc[0], acc[4], ...) requantised to y[0], y[ys], ... where the activation
 * clamps nothing past int8 (y_min -128, y_max 127: no activation, or a ReLU whose zero point is
 * -128, as in the MLPerf Tiny models): tfl_dsp_requant_run's SMMLAR form (same conditions: see
 * there), its clamp one SSAT, two positions a pass. About 11 instructions an output instead of
 * the general loop's 15 (its compare-and-select for y_min, an IT block each). */
static void tfl_dsp_dw_requant_ssat(const int32_t *acc, int32_t n, int32_t s, int32_t mult, int32_t ra,
                                    int32_t right, int8_t *y, int32_t ys) {
    int32_t i;
    for (i = 0; i + 2 <= n; i += 2, acc += 8, y += 2 * ys) {
        const int32_t a = (int32_t)((uint32_t)acc[0] << s), b = (int32_t)((uint32_t)acc[4] << s);
        const int32_t qa = (tfl_dsp_smmlar(a, mult, ra) + (a >> 31)) >> right;
        const int32_t qb = (tfl_dsp_smmlar(b, mult, ra) + (b >> 31)) >> right;
        y[0] = (int8_t)__ssat(qa, 8);
        y[ys] = (int8_t)__ssat(qb, 8);
    }
    if (i < n) {
        const int32_t a = (int32_t)((uint32_t)acc[0] << s);
        y[0] = (int8_t)__ssat((tfl_dsp_smmlar(a, mult, ra) + (a >> 31)) >> right, 8);
    }
}
#endif

/* The sums of n positions' 4 channels [ch, ch + 4) requantised to yo (the first position's channel
 * ch), channel by channel; bound: at least every |sum| (tfl_dsp_requant_run). */
__attribute__((noinline)) static void tfl_dsp_dw_store(const aotc_tfl_conv_params *p, const int32_t *acc, int32_t n,
                                                       int32_t ch, int8_t *yo, int64_t bound) {
    int32_t j;
    (void)bound;
#if AOTC_TFL_MVE /* the 4 channels are one vector */
    for (j = 0; j < n; ++j)
        tfl_mve_requant4(vld1q_s32(acc + 4 * j), p->mult + ch, p->shift + ch, p->y_zero, p->y_min, p->y_max,
                         yo + (int64_t)j * p->oc);
#else
    for (j = 0; j < 4; ++j) {
        const int32_t mult = p->mult[ch + j], shift = p->shift[ch + j];
        const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
        /* tfl_dsp_requant_run's SMMLAR conditions, with a clamp that SSAT alone makes */
        if (p->y_min == -128 && p->y_max == 127 && mult != INT32_MIN && left < 30 &&
            bound < ((int64_t)1 << (30 - left)) && right > 0 && right <= 22) {
            const int32_t ra = (1 << (right - 1)) + p->y_zero * (1 << right);
            tfl_dsp_dw_requant_ssat(acc + j, n, left + 1, mult, ra, right, yo + j, p->oc);
        } else {
            tfl_dsp_requant_run(acc + j, 4, n, 0, mult, shift, p->y_zero, p->y_min, p->y_max, yo + j, p->oc, bound);
        }
    }
#endif
}

#if AOTC_DSP_ASM
/* m pairs of a band's columns (tfl_dsp_dw_band) from s (rows `row` bytes apart, columns c) to d: their 6 loads back
 * to back (7 cycles), 6 stores and one branch a pair (10 cycles a column, not 13). Not inlined: its 13 registers
 * would crowd the caller's (a narrow row's bands then take longer). */
__attribute__((noinline)) static void tfl_dsp_dw_band_cols(const int8_t *s, int32_t row1, int32_t c, int32_t m,
                                                           uint32_t *d) {
    const int32_t row2 = 2 * row1;
    const int8_t *s2 = s + c;
    uint32_t v0, v1, v2, v3, v4, v5;
    __asm__ volatile("1:\n\t"
                     "ldr %[v0], [%[s]]\n\t"
                     "ldr %[v1], [%[s], %[row1]]\n\t"
                     "ldr %[v2], [%[s], %[row2]]\n\t"
                     "ldr %[v3], [%[s2]]\n\t"
                     "ldr %[v4], [%[s2], %[row1]]\n\t"
                     "ldr %[v5], [%[s2], %[row2]]\n\t"
                     "add %[s], %[s], %[c], lsl #1\n\t"
                     "add %[s2], %[s2], %[c], lsl #1\n\t"
                     "str %[v0], [%[d]]\n\t"
                     "str %[v1], [%[d], #4]\n\t"
                     "str %[v2], [%[d], #8]\n\t"
                     "str %[v3], [%[d], #12]\n\t"
                     "str %[v4], [%[d], #16]\n\t"
                     "str %[v5], [%[d], #20]\n\t"
                     "add %[d], %[d], #24\n\t"
                     "subs %[m], %[m], #1\n\t"
                     "bne 1b\n\t"
                     : [s] "+r"(s), [s2] "+r"(s2), [d] "+r"(d), [m] "+r"(m), [v0] "=&r"(v0), [v1] "=&r"(v1),
                       [v2] "=&r"(v2), [v3] "=&r"(v3), [v4] "=&r"(v4), [v5] "=&r"(v5)
                     : [row1] "r"(row1), [row2] "r"(row2), [c] "r"(c)
                     : "cc", "memory");
}
#endif

/* The band of output row oy's windows (TFL_DSP_DW_BAND): input rows iy0, iy0 + 1, iy0 + 2 of 4
 * channels (xb: the image's first position, channel ch) over the pw columns the row's windows span
 * from -pad_left, column by column: band[3 j + k] = row iy0 + k, column j - pad_left, or zb (x_zero
 * 4 times) in the padding. A window's tap (ky, kx) is then band[3 (j + kx) + ky], word offsets known
 * when compiling (tfl_dsp_dw3x3_band). */
static void tfl_dsp_dw_band(const aotc_tfl_conv_params *p, const int8_t *xb, int32_t iy0, uint32_t zb, int32_t pw,
                            uint32_t *AOTC_RESTRICT band) {
    const int32_t c = p->c, pl = p->pad_left, lo = pl < pw ? pl : pw, hi = pl + p->w < pw ? pl + p->w : pw;
    const int64_t row = (int64_t)p->w * c;
    int32_t k, j;
    if (iy0 >= 0 && iy0 + 2 < p->h) { /* the 3 rows inside: a column is 3 loads and 3 stores */
        const int8_t *s = xb + (int64_t)iy0 * row - (int64_t)pl * c;
        uint32_t *d = band;
        for (j = 0; j < lo; ++j, d += 3) d[0] = d[1] = d[2] = zb;
        s += (int64_t)lo * c;
#if AOTC_DSP_ASM
        if (hi - j >= 8) { /* a wide row: two columns a turn, by a call */
            const int32_t m = (hi - j) / 2;
            tfl_dsp_dw_band_cols(s, (int32_t)row, c, m, d);
            s += 2 * m * c, d += 6 * m, j += 2 * m;
        }
        if (hi > j) { /* a last column: its 3 loads back to back (4 cycles, not 6 as gcc interleaves them with the stores) */
            int32_t m = hi - j;
            const int32_t row1 = (int32_t)row, row2 = 2 * (int32_t)row;
            uint32_t v0, v1, v2;
            __asm__ volatile("1:\n\t"
                             "ldr %[v0], [%[s]]\n\t"
                             "ldr %[v1], [%[s], %[row1]]\n\t"
                             "ldr %[v2], [%[s], %[row2]]\n\t"
                             "add %[s], %[s], %[c]\n\t"
                             "str %[v0], [%[d]]\n\t"
                             "str %[v1], [%[d], #4]\n\t"
                             "str %[v2], [%[d], #8]\n\t"
                             "add %[d], %[d], #12\n\t"
                             "subs %[m], %[m], #1\n\t"
                             "bne 1b\n\t"
                             : [s] "+r"(s), [d] "+r"(d), [m] "+r"(m), [v0] "=&r"(v0), [v1] "=&r"(v1), [v2] "=&r"(v2)
                             : [row1] "r"(row1), [row2] "r"(row2), [c] "r"(c)
                             : "cc", "memory");
            j = hi;
        }
#else
        for (; j < hi; ++j, d += 3, s += c) {
            const uint32_t v0 = aotc_dsp_load32(s), v1 = aotc_dsp_load32(s + row), v2 = aotc_dsp_load32(s + 2 * row);
            d[0] = v0, d[1] = v1, d[2] = v2;
        }
#endif
        for (; j < pw; ++j, d += 3) d[0] = d[1] = d[2] = zb;
        return;
    }
    for (k = 0; k < 3; ++k) {
        const int32_t iy = iy0 + k;
        uint32_t *d = band + k;
        if (iy < 0 || iy >= p->h) {
            for (j = 0; j < pw; ++j) d[3 * j] = zb;
            continue;
        }
        const int8_t *s = xb + (int64_t)iy * row - (int64_t)pl * c;
        for (j = 0; j < lo; ++j) d[3 * j] = zb;
        for (; j < hi; ++j) d[3 * j] = aotc_dsp_load32(s + (int64_t)j * c);
        for (; j < pw; ++j) d[3 * j] = zb;
    }
}

/* The pairs' assembly takes 14 registers, which gcc allocates around it and clang's allocator does not
 * (it fails to compile): with clang every position goes by the one-position assembly. */
#if AOTC_DSP_ASM && !defined(__clang__)
#define TFL_DW_PAIR_ASM 1
#else
#define TFL_DW_PAIR_ASM 0
#endif

#if AOTC_DSP_ASM
/* One tap (t = 3 ky + kx) of two positions A and B, sw columns apart, in a band: the tap's widened
 * weights (wq[2t], wq[2t + 1]) loaded once for both, each position's input word widened to [c0, c2]
 * / [c1, c3] and multiplied channel by channel (SMLABB / SMLATT): 16 instructions, 18 cycles for 8
 * multiply-accumulates (a tap of one position alone: 8 and 11 for 4, the weights loaded each time). */
#define TFL_DW_TAP2(t, ky, kx, sw)                                                                        \
    "ldr %[w0], [%[wp], #(8 * " #t ")]\n\t"                                                               \
    "ldr %[w1], [%[wp], #(8 * " #t " + 4)]\n\t"                                                           \
    "ldr %[v], [%[r], #(12 * " #kx " + 4 * " #ky ")]\n\t"                                                 \
    "sxtb16 %[e], %[v]\n\t"                                                                               \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                                       \
    "smlabb %[a0], %[e], %[w0], %[a0]\n\t"                                                                \
    "smlatt %[a2], %[e], %[w0], %[a2]\n\t"                                                                \
    "smlabb %[a1], %[v], %[w1], %[a1]\n\t"                                                                \
    "smlatt %[a3], %[v], %[w1], %[a3]\n\t"                                                                \
    "ldr %[v], [%[r], #(12 * " #kx " + 4 * " #ky " + 12 * " #sw ")]\n\t"                                  \
    "sxtb16 %[e], %[v]\n\t"                                                                               \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                                       \
    "smlabb %[b0], %[e], %[w0], %[b0]\n\t"                                                                \
    "smlatt %[b2], %[e], %[w0], %[b2]\n\t"                                                                \
    "smlabb %[b1], %[v], %[w1], %[b1]\n\t"                                                                \
    "smlatt %[b3], %[v], %[w1], %[b3]\n\t"
#define TFL_DW_WINDOW2(sw) TFL_DW_WINDOW2_##sw
#define TFL_DW_WINDOW2_1                                                                                  \
    TFL_DW_TAP2(0, 0, 0, 1) TFL_DW_TAP2(1, 0, 1, 1) TFL_DW_TAP2(2, 0, 2, 1) TFL_DW_TAP2(3, 1, 0, 1)       \
    TFL_DW_TAP2(4, 1, 1, 1) TFL_DW_TAP2(5, 1, 2, 1) TFL_DW_TAP2(6, 2, 0, 1) TFL_DW_TAP2(7, 2, 1, 1)       \
    TFL_DW_TAP2(8, 2, 2, 1)
/* a tap of position x (a or b: its sums) from the widened word in e, v and the tap's weights in w0, w1 */
#define TFL_DW_MUL(x)                                                                                     \
    "smlabb %[" #x "0], %[e], %[w0], %[" #x "0]\n\t"                                                     \
    "smlatt %[" #x "2], %[e], %[w0], %[" #x "2]\n\t"                                                     \
    "smlabb %[" #x "1], %[v], %[w1], %[" #x "1]\n\t"                                                     \
    "smlatt %[" #x "3], %[v], %[w1], %[" #x "3]\n\t"
/* tap t's weights; the band's word at byte off, widened */
#define TFL_DW_W(t) "ldr %[w0], [%[wp], #(8 * (" #t "))]\n\tldr %[w1], [%[wp], #(8 * (" #t ") + 4)]\n\t"
#define TFL_DW_X(off) "ldr %[v], [%[r], #(" off ")]\n\tsxtb16 %[e], %[v]\n\tsxtb16 %[v], %[v], ror #8\n\t"
/* At column stride 2, kernel row ky of A (columns 0 .. 2) and B (columns 2 .. 4): the column both read (A's tap kx 2,
 * B's kx 0) loaded and widened once, between the two taps' weights: 5 columns a row, not 6, 51 cycles, not 54 */
#define TFL_DW_ROW2S2(ky)                                                                                 \
    TFL_DW_W(3 * ky) TFL_DW_X("4 * " #ky) TFL_DW_MUL(a) TFL_DW_X("24 + 4 * " #ky) TFL_DW_MUL(b)           \
    TFL_DW_W(3 * ky + 2) TFL_DW_MUL(a) TFL_DW_X("48 + 4 * " #ky) TFL_DW_MUL(b)                            \
    TFL_DW_W(3 * ky + 1) TFL_DW_X("12 + 4 * " #ky) TFL_DW_MUL(a) TFL_DW_X("36 + 4 * " #ky) TFL_DW_MUL(b)
#define TFL_DW_WINDOW2_2 TFL_DW_ROW2S2(0) TFL_DW_ROW2S2(1) TFL_DW_ROW2S2(2)
/* one tap of one position (a last odd one): 9 instructions, 10 cycles for 4 multiply-accumulates */
#define TFL_DW_TAP1(t, ky, kx)                                                                            \
    "ldr %[w0], [%[wp], #(8 * " #t ")]\n\t"                                                               \
    "ldr %[w1], [%[wp], #(8 * " #t " + 4)]\n\t"                                                           \
    "ldr %[v], [%[r], #(12 * " #kx " + 4 * " #ky ")]\n\t"                                                 \
    "sxtb16 %[e], %[v]\n\t"                                                                               \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                                       \
    "smlabb %[a0], %[e], %[w0], %[a0]\n\t"                                                                \
    "smlatt %[a2], %[e], %[w0], %[a2]\n\t"                                                                \
    "smlabb %[a1], %[v], %[w1], %[a1]\n\t"                                                                \
    "smlatt %[a3], %[v], %[w1], %[a3]\n\t"
/* the pairs of positions of a band at column stride sw (a literal: the offsets are the assembler's) */
#define TFL_DW_PAIRS(sw)                                                                                  \
    for (; n >= 2; n -= 2, r += 24 * (sw), acc += 8) {                                                    \
        int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3], b0 = a0, b1 = a1, b2 = a2, b3 = a3; \
        uint32_t v, e, w0, w1;                                                                            \
        __asm__(TFL_DW_WINDOW2(sw)                                                                        \
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [b0] "+r"(b0), [b1] "+r"(b1), \
                  [b2] "+r"(b2), [b3] "+r"(b3), [v] "=&r"(v), [e] "=&r"(e), [w0] "=&r"(w0), [w1] "=&r"(w1) \
                : [r] "r"(r), [wp] "r"(wq)                                                                \
                : "memory");                                                                              \
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3; \
    }
#endif

/* The sums of n positions' 4 channels from a band (tfl_dsp_dw_band; band: the first position's
 * window's first column, positions sw columns apart) into acc, each from base (wq: the taps' widened
 * weights, 2 words a tap): in assembly two positions at a time, each tap's weights loaded once for
 * both, a last odd position (with clang every one) by itself; without assembly by aotc_dsp_dw3x3_run. */
__attribute__((noinline)) static void tfl_dsp_dw3x3_band(const uint32_t *band, int32_t n, int32_t sw,
                                                          const uint32_t *wq, const int32_t *base, int32_t *acc) {
    const uint8_t *r = (const uint8_t *)band;
#if AOTC_DSP_ASM
#if TFL_DW_PAIR_ASM
    if (sw == 1) {
        TFL_DW_PAIRS(1)
    } else {
        TFL_DW_PAIRS(2)
    }
#endif
    for (; n > 0; --n, r += 12 * sw, acc += 4) {
        int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3];
        uint32_t v, e, w0, w1;
        __asm__(TFL_DW_TAP1(0, 0, 0) TFL_DW_TAP1(1, 0, 1) TFL_DW_TAP1(2, 0, 2) TFL_DW_TAP1(3, 1, 0)
                    TFL_DW_TAP1(4, 1, 1) TFL_DW_TAP1(5, 1, 2) TFL_DW_TAP1(6, 2, 0) TFL_DW_TAP1(7, 2, 1)
                        TFL_DW_TAP1(8, 2, 2)
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [v] "=&r"(v), [e] "=&r"(e),
                  [w0] "=&r"(w0), [w1] "=&r"(w1)
                : [r] "r"(r), [wp] "r"(wq)
                : "memory");
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
    }
#else
    if (n > 0) aotc_dsp_dw3x3_run((const int8_t *)r, 12 * sw, n, 12, 4, wq, base, acc);
#endif
}

/* Where the 4 channels' requantisation is the usual one (tfl_dsp_dw_usual), the band's sums are
 * requantised as they are made and stored (no run of sums): rq = wq + 18 holds each channel's mult, ra
 * and right (tfl_dsp_dw_requant_ssat's terms); its left shift of 1 is in the weights and base, doubled
 * (2 w fits a halfword), so the sums come doubled: one instruction an output less. One position's 4
 * doubled sums a[0 .. 3] to y. */
#if !AOTC_DSP_ASM
static inline void tfl_dsp_dw_rq1(const int32_t *a, const uint32_t *rq, int8_t *y) {
    int32_t j;
    for (j = 0; j < 4; ++j, rq += 3) {
        y[j] = (int8_t)__ssat((tfl_dsp_smmlar(a[j], (int32_t)rq[0], (int32_t)rq[1]) + (a[j] >> 31)) >> rq[2], 8);
    }
}
#endif

#if TFL_DW_PAIR_ASM
/* one channel's two sums (a, b) requantised in place by the terms at rq + 12 j bytes past the weights */
#define TFL_DW_RQ2(j, a, b)                                                                               \
    "ldr %[w0], [%[wp], #(72 + 12 * " #j ")]\n\t"                                                       \
    "ldr %[w1], [%[wp], #(76 + 12 * " #j ")]\n\t"                                                       \
    "ldr %[e], [%[wp], #(80 + 12 * " #j ")]\n\t"                                                        \
    "smmlar %[v], %[" a "], %[w0], %[w1]\n\t"                                                           \
    "add %[" a "], %[v], %[" a "], asr #31\n\t"                                                         \
    "asr %[" a "], %[" a "], %[e]\n\t"                                                                  \
    "ssat %[" a "], #8, %[" a "]\n\t"                                                                   \
    "smmlar %[v], %[" b "], %[w0], %[w1]\n\t"                                                           \
    "add %[" b "], %[v], %[" b "], asr #31\n\t"                                                         \
    "asr %[" b "], %[" b "], %[e]\n\t"                                                                  \
    "ssat %[" b "], #8, %[" b "]\n\t"
/* TFL_DW_RQ2 where the lower clamp is the zero point -128: without the sign term (aotc_dsp_mac4x2_rq3's reasoning:
 * a negative product term gives the zero point or below either way, which SSAT makes -128) */
#define TFL_DW_RQ2F(j, a, b)                                                                              \
    "ldr %[w0], [%[wp], #(72 + 12 * " #j ")]\n\t"                                                       \
    "ldr %[w1], [%[wp], #(76 + 12 * " #j ")]\n\t"                                                       \
    "ldr %[e], [%[wp], #(80 + 12 * " #j ")]\n\t"                                                        \
    "smmlar %[" a "], %[" a "], %[w0], %[w1]\n\t"                                                       \
    "asr %[" a "], %[" a "], %[e]\n\t"                                                                  \
    "ssat %[" a "], #8, %[" a "]\n\t"                                                                   \
    "smmlar %[" b "], %[" b "], %[w0], %[w1]\n\t"                                                       \
    "asr %[" b "], %[" b "], %[e]\n\t"                                                                  \
    "ssat %[" b "], #8, %[" b "]\n\t"
/* the pairs of a band, their 8 outputs requantised in registers (RQ: TFL_DW_RQ2 or TFL_DW_RQ2F) and packed into a
 * word a position */
#define TFL_DW_PAIRS_RQ(sw, RQ)                                                                           \
    for (; n >= 2; n -= 2, r += 24 * (sw), y += 2 * oc) {                                                 \
        int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3], b0 = a0, b1 = a1, b2 = a2, b3 = a3; \
        uint32_t v, e, w0, w1;                                                                            \
        __asm__(TFL_DW_WINDOW2(sw) RQ(0, "a0", "b0") RQ(1, "a1", "b1") RQ(2, "a2", "b2") RQ(3, "a3", "b3")   \
                "bfi %[a0], %[a1], #8, #8\n\t"                                                            \
                "bfi %[a0], %[a2], #16, #8\n\t"                                                           \
                "bfi %[a0], %[a3], #24, #8\n\t"                                                           \
                "bfi %[b0], %[b1], #8, #8\n\t"                                                            \
                "bfi %[b0], %[b2], #16, #8\n\t"                                                           \
                "bfi %[b0], %[b3], #24, #8\n\t"                                                           \
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [b0] "+r"(b0), [b1] "+r"(b1), \
                  [b2] "+r"(b2), [b3] "+r"(b3), [v] "=&r"(v), [e] "=&r"(e), [w0] "=&r"(w0), [w1] "=&r"(w1) \
                : [r] "r"(r), [wp] "r"(wq)                                                                \
                : "memory");                                                                              \
        memcpy(y, &a0, 4);                                                                                \
        memcpy(y + oc, &b0, 4);                                                                           \
    }
#endif

#if AOTC_DSP_ASM
/* one channel's sum requantised in place (TFL_DW_RQ2's, one position) */
#define TFL_DW_RQ1(j, a)                                                                                  \
    "ldr %[w0], [%[wp], #(72 + 12 * " #j ")]\n\t"                                                       \
    "ldr %[w1], [%[wp], #(76 + 12 * " #j ")]\n\t"                                                       \
    "ldr %[e], [%[wp], #(80 + 12 * " #j ")]\n\t"                                                        \
    "smmlar %[v], %[" a "], %[w0], %[w1]\n\t"                                                           \
    "add %[" a "], %[v], %[" a "], asr #31\n\t"                                                         \
    "asr %[" a "], %[" a "], %[e]\n\t"                                                                  \
    "ssat %[" a "], #8, %[" a "]\n\t"
#endif

/* tfl_dsp_dw3x3_band where tfl_dsp_dw_usual holds: the n positions' outputs to y (the first's channel
 * ch), oc bytes apart, instead of their sums; with gcc's assembly two positions at a time, those without the
 * sign term where the lower clamp is the zero point -128 (floor; a last odd position with it: the same outputs). */
__attribute__((noinline)) static void tfl_dsp_dw3x3_band_rq(const uint32_t *band, int32_t n, int32_t sw,
                                                             const uint32_t *wq, const int32_t *base, int8_t *y,
                                                             int32_t oc, int floor) {
    const uint8_t *r = (const uint8_t *)band;
    int32_t acc[4];
#if TFL_DW_PAIR_ASM
    if (floor && sw == 1) {
        TFL_DW_PAIRS_RQ(1, TFL_DW_RQ2F)
    } else if (floor) {
        TFL_DW_PAIRS_RQ(2, TFL_DW_RQ2F)
    } else if (sw == 1) {
        TFL_DW_PAIRS_RQ(1, TFL_DW_RQ2)
    } else {
        TFL_DW_PAIRS_RQ(2, TFL_DW_RQ2)
    }
#else
    (void)floor;
#endif
#if AOTC_DSP_ASM
    (void)acc;
    for (; n > 0; --n, r += 12 * sw, y += oc) { /* one position: its taps, then its 4 outputs in a word */
        int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3];
        uint32_t v, e, w0, w1;
        __asm__(TFL_DW_TAP1(0, 0, 0) TFL_DW_TAP1(1, 0, 1) TFL_DW_TAP1(2, 0, 2) TFL_DW_TAP1(3, 1, 0)
                    TFL_DW_TAP1(4, 1, 1) TFL_DW_TAP1(5, 1, 2) TFL_DW_TAP1(6, 2, 0) TFL_DW_TAP1(7, 2, 1)
                        TFL_DW_TAP1(8, 2, 2) TFL_DW_RQ1(0, "a0") TFL_DW_RQ1(1, "a1") TFL_DW_RQ1(2, "a2")
                            TFL_DW_RQ1(3, "a3")
                "bfi %[a0], %[a1], #8, #8\n\t"
                "bfi %[a0], %[a2], #16, #8\n\t"
                "bfi %[a0], %[a3], #24, #8\n\t"
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [v] "=&r"(v), [e] "=&r"(e),
                  [w0] "=&r"(w0), [w1] "=&r"(w1)
                : [r] "r"(r), [wp] "r"(wq)
                : "memory");
        memcpy(y, &a0, 4);
    }
#else
    for (; n > 0; --n, r += 12 * sw, y += oc) {
        tfl_dsp_dw3x3_band(band + (r - (const uint8_t *)band) / 4, 1, sw, wq, base, acc);
        tfl_dsp_dw_rq1(acc, wq + 18, y);
    }
#endif
}

#if TFL_DW_PAIR_ASM
/* The fused 3 x 3 rows at column stride 1 by SMLAD on column pairs. A ring of the 3 input rows a window spans, each
 * arranged once (not once for each output row that reads it, as the bands of words are copied): for each pair of
 * columns (2i, 2i + 1) of input row iy (from column -pad_left) the 4 channels' words P = [x(2i, c), x(2i + 1, c)]
 * (halfwords) at ring[12 i + 4 (iy mod 3) + c]. The block of a turn of the ring: wp[8 s + c] = [w(ky, 0), w(ky, 1)]
 * and wp[8 s + 4 + c] = [w(ky, 1), w(ky, 2)] of channel c for the kernel row ky whose input row is in slot s,
 * doubled as the fused path's, then the 4 channels' requantisation terms (tfl_dsp_dw_usual's) by kind: wp[24 + c]
 * mult, wp[28 + c] ra, wp[32 + c] right, then their sums' start wp[36 + c] (base), so a channel's words are 4 bytes
 * past the one before. Two positions A = column 2i, B = 2i + 1 from pairs i, i + 1, per channel and row
 * SMLAD(P_i, w01) + SMLABT(P_i+1, w12) for A, SMLATB(P_i, w01) + SMLAD(P_i+1, w12) for B, where the band of words
 * (tfl_dsp_dw3x3_band_rq) takes 4 loads and 8 multiplies (18 cycles) for 8 of a tap. (At column stride 2 a position
 * takes twice the columns, whose arranging costs more than the multiplies save: the bands. Measured on VWW -O3: a
 * turn of 4 positions of 2 channels, per channel and row SMLAD(P_ox, w01) + SMLABT(P_ox+1, w12) from pairs ox .. ox
 * + 4 (18 cycles for 12 multiply-accumulates), took its 3 ring-sized stride-2 layers' kernel from 628 K est. cycles
 * (bands and their copies) to 399 K, but their rows' arranging added 256 K and the set-up and calls 60 K: 12.79 ->
 * 12.86 M in all.) */
/* TFL_DW_RQ2 (the sign term, lr its temporary) and TFL_DW_RQ2F on one sum a: mult r1, ra r3, right r12 */
#define TFL_DWP_RQ1(a)                                                                                    \
    "smmlar lr, " a ", r1, r3\n\t"                                                                      \
    "add " a ", lr, " a ", asr #31\n\t"                                                                 \
    "asr " a ", " a ", r12\n\t"                                                                         \
    "ssat " a ", #8, " a "\n\t"
#define TFL_DWP_RQ1F(a)                                                                                   \
    "smmlar " a ", " a ", r1, r3\n\t"                                                                   \
    "asr " a ", " a ", r12\n\t"                                                                         \
    "ssat " a ", #8, " a "\n\t"
#define TFL_DSP_ARG __attribute__((unused)) /* a naked function's arguments are its assembly's registers */
/* a row kernel: ring r0, positions n r1, weights wp r2, sums' start base r3, then y and oc on the stack */
#define TFL_DWP_ROW_FN(name, text)                                                                              \
    __attribute__((naked, noinline)) static void name(TFL_DSP_ARG const uint32_t *ring, TFL_DSP_ARG int32_t n,    \
                                                      TFL_DSP_ARG const uint32_t *wp,                             \
                                                      TFL_DSP_ARG const int32_t *base, TFL_DSP_ARG int8_t *y,     \
                                                      TFL_DSP_ARG int32_t oc) {                                   \
        __asm__ volatile(text);                                                                                  \
    }
/* A row's last n mod 6 positions (TFL_DWP6_ROW_ASM's turns take 6), and rows narrower than 6, take the 4 channels
 * two positions at a time: per channel and row SMLAD + SMLABT for A, SMLATB + SMLAD for B, 4 loads and 4 multiplies
 * (9 cycles) for 6 multiply-accumulates. */
#define TFL_DWP2_CH(ky, c, a, b) /* r0 the ring at the pair, r2 the weights; r1, r3, r12, lr the words */       \
    "ldr r1, [r0, #(16 * " #ky " + 4 * " #c ")]\n\t"                                                    \
    "ldr r3, [r0, #(48 + 16 * " #ky " + 4 * " #c ")]\n\t"                                               \
    "ldr r12, [r2, #(32 * " #ky " + 4 * " #c ")]\n\t"                                                   \
    "ldr lr, [r2, #(32 * " #ky " + 16 + 4 * " #c ")]\n\t"                                               \
    "smlad " a ", r1, r12, " a "\n\t"                                                                   \
    "smlabt " a ", r3, lr, " a "\n\t"                                                                   \
    "smlatb " b ", r1, r12, " b "\n\t"                                                                  \
    "smlad " b ", r3, lr, " b "\n\t"
#define TFL_DWP2_WINDOW                                                                                     \
    TFL_DWP2_CH(0, 0, "r4", "r8") TFL_DWP2_CH(0, 1, "r5", "r9") TFL_DWP2_CH(0, 2, "r6", "r10")                \
    TFL_DWP2_CH(0, 3, "r7", "r11") TFL_DWP2_CH(1, 0, "r4", "r8") TFL_DWP2_CH(1, 1, "r5", "r9")                \
    TFL_DWP2_CH(1, 2, "r6", "r10") TFL_DWP2_CH(1, 3, "r7", "r11") TFL_DWP2_CH(2, 0, "r4", "r8")               \
    TFL_DWP2_CH(2, 1, "r5", "r9") TFL_DWP2_CH(2, 2, "r6", "r10") TFL_DWP2_CH(2, 3, "r7", "r11")
/* TFL_DW_RQ2 and TFL_DW_RQ2F on the registers of TFL_DWP2_ROW_ASM (wp in r2, temporaries r1, r3, r12, lr), channel
 * j's terms at wp[24 + j], wp[28 + j], wp[32 + j] */
#define TFL_DWP2_RQ(j, a, b)                                                                                \
    "ldr r1, [r2, #(96 + 4 * " #j ")]\n\t"                                                             \
    "ldr r3, [r2, #(112 + 4 * " #j ")]\n\t"                                                            \
    "ldr r12, [r2, #(128 + 4 * " #j ")]\n\t"                                                           \
    "smmlar lr, " a ", r1, r3\n\t"                                                                      \
    "add " a ", lr, " a ", asr #31\n\t"                                                                 \
    "asr " a ", " a ", r12\n\t"                                                                         \
    "ssat " a ", #8, " a "\n\t"                                                                         \
    "smmlar lr, " b ", r1, r3\n\t"                                                                      \
    "add " b ", lr, " b ", asr #31\n\t"                                                                 \
    "asr " b ", " b ", r12\n\t"                                                                         \
    "ssat " b ", #8, " b "\n\t"
#define TFL_DWP2_RQF(j, a, b)                                                                               \
    "ldr r1, [r2, #(96 + 4 * " #j ")]\n\t"                                                             \
    "ldr r3, [r2, #(112 + 4 * " #j ")]\n\t"                                                            \
    "ldr r12, [r2, #(128 + 4 * " #j ")]\n\t"                                                           \
    "smmlar " a ", " a ", r1, r3\n\t"                                                                   \
    "asr " a ", " a ", r12\n\t"                                                                         \
    "ssat " a ", #8, " a "\n\t"                                                                         \
    "smmlar " b ", " b ", r1, r3\n\t"                                                                   \
    "asr " b ", " b ", r12\n\t"                                                                         \
    "ssat " b ", #8, " b "\n\t"
/* One output row's n positions (n >= 1) from the ring r0, two at a time (a last odd one as a pair, B not stored),
 * weights wp r2, the sums from base r3 (its 4 words), outputs to y and y + oc (on the stack): in assembly naked, the
 * row's loop with it (gcc's loop around the window's 14 registers kept its own on the stack, 40 cycles a pair).
 * a0 .. a3 in r4 .. r7, b0 .. b3 in r8 .. r11; locals [sp] n left, [sp, #4] base, [sp, #8] y; y and oc at
 * [sp, #52], [sp, #56]. */
#define TFL_DWP2_ROW_ASM(RQ)                                                                                \
    "push {r4-r11, lr}\n\t"                                                                               \
    "sub sp, sp, #16\n\t"                                                                                 \
    "str r1, [sp]\n\t"                                                                                    \
    "str r3, [sp, #4]\n\t"                                                                                \
    "ldr r1, [sp, #52]\n\t"                                                                               \
    "str r1, [sp, #8]\n"                                                                                  \
    "2:\n\t"                                                                                              \
    "ldr lr, [sp, #4]\n\t"                                                                                \
    "ldm lr, {r4-r7}\n\t"                                                                                 \
    "mov r8, r4\n\t"                                                                                      \
    "mov r9, r5\n\t"                                                                                      \
    "mov r10, r6\n\t"                                                                                     \
    "mov r11, r7\n\t"                                                                                     \
    TFL_DWP2_WINDOW RQ(0, "r4", "r8") RQ(1, "r5", "r9") RQ(2, "r6", "r10") RQ(3, "r7", "r11")             \
    "bfi r4, r5, #8, #8\n\t"                                                                              \
    "bfi r4, r6, #16, #8\n\t"                                                                             \
    "bfi r4, r7, #24, #8\n\t"                                                                             \
    "bfi r8, r9, #8, #8\n\t"                                                                              \
    "bfi r8, r10, #16, #8\n\t"                                                                            \
    "bfi r8, r11, #24, #8\n\t"                                                                            \
    "ldr r12, [sp, #8]\n\t"                                                                               \
    "ldr r1, [sp]\n\t"                                                                                    \
    "str r4, [r12]\n\t"                                                                                   \
    "cmp r1, #2\n\t"                                                                                      \
    "blt 9f\n\t"                                                                                          \
    "ldr r3, [sp, #56]\n\t"                                                                               \
    "str r8, [r12, r3]\n\t"                                                                               \
    "add r12, r12, r3, lsl #1\n\t"                                                                        \
    "str r12, [sp, #8]\n\t"                                                                               \
    "adds r0, r0, #48\n\t"                                                                                \
    "subs r1, r1, #2\n\t"                                                                                 \
    "str r1, [sp]\n\t"                                                                                    \
    "bgt 2b\n"                                                                                            \
    "9:\n\t"                                                                                              \
    "add sp, sp, #16\n\t"                                                                                 \
    "pop {r4-r11, pc}\n\t"
TFL_DWP_ROW_FN(tfl_dsp_dwp2_row_floor, TFL_DWP2_ROW_ASM(TFL_DWP2_RQF))
TFL_DWP_ROW_FN(tfl_dsp_dwp2_row_sign, TFL_DWP2_ROW_ASM(TFL_DWP2_RQ))
/* A row's first 6 q positions, 6 a turn: a turn's 4 channels one after the other (unrolled, their offsets constants),
 * a channel's 6 positions at once from pairs 3j .. 3j + 3 (r10, r11, r12, lr), the kernel row's 2 weight words in r1,
 * r3: per kernel row 7 loads (the first with the sums' start) and 12 multiplies (19 cycles for 18
 * multiply-accumulates, where 2 channels of 4 positions took 15 for 12 and 4 channels of 2 took 9 for 6), the terms
 * loaded once for 6 outputs, each stored as made (STRB at y and y + oc, then y += 2 oc: no BFI packing). The sums
 * start as the base in r9, the one written last: each sum's first multiply adds it (SMLAD a, x, w, r9), no moves.
 * About 95 cycles a channel's 6 outputs by the tables; measured on VWW -O3, its 69,120 outputs at stride 1 (48 x 48
 * x 8, 24 x 24 x 32, 12 x 12 x 64, five 6 x 6 x 128) took 1,170,720 est. cycles with the calls (16.9 an output),
 * where a turn of 4 positions x 2 channels (167 for 8: the terms loaded a turn, BFI packing, its counter and y in
 * memory) and a 6-wide row a channel at a time (122 for 6: its loop of channels around each) took 1,425,600 (20.6). Sums a0 .. a5 in r4 .. r9; locals [sp, #4 c] channel
 * c's y (y + c, then 6 oc further each turn), [sp, #16] oc, [sp, #20] the ring's end (r0 + 144 q); y and oc at
 * [sp, #60], [sp, #64]. */
#define TFL_DWP6_KY0_AT(bp, off, c) /* kernel row 0: each sum's first multiply adds the base [bp, off], r9 */ \
    "ldr r9, [" bp ", #(" off " + 4 * " #c ")]\n\t"                                                     \
    "ldr r10, [r0, #(4 * " #c ")]\n\t"                                                                   \
    "ldr r11, [r0, #(48 + 4 * " #c ")]\n\t"                                                              \
    "ldr r12, [r0, #(96 + 4 * " #c ")]\n\t"                                                              \
    "ldr lr, [r0, #(144 + 4 * " #c ")]\n\t"                                                              \
    "ldr r1, [r2, #(4 * " #c ")]\n\t"                                                                    \
    "ldr r3, [r2, #(16 + 4 * " #c ")]\n\t"                                                               \
    "smlad r4, r10, r1, r9\n\t"                                                                          \
    "smlabt r4, r11, r3, r4\n\t"                                                                         \
    "smlatb r5, r10, r1, r9\n\t"                                                                         \
    "smlad r5, r11, r3, r5\n\t"                                                                          \
    "smlad r6, r11, r1, r9\n\t"                                                                          \
    "smlabt r6, r12, r3, r6\n\t"                                                                         \
    "smlatb r7, r11, r1, r9\n\t"                                                                         \
    "smlad r7, r12, r3, r7\n\t"                                                                          \
    "smlad r8, r12, r1, r9\n\t"                                                                          \
    "smlabt r8, lr, r3, r8\n\t"                                                                          \
    "smlatb r9, r12, r1, r9\n\t"                                                                         \
    "smlad r9, lr, r3, r9\n\t"
#define TFL_DWP6_KY0(c) TFL_DWP6_KY0_AT("r2", "144", c)
#define TFL_DWP6_KY(ky, c)                                                                                  \
    "ldr r10, [r0, #(16 * " #ky " + 4 * " #c ")]\n\t"                                                   \
    "ldr r11, [r0, #(48 + 16 * " #ky " + 4 * " #c ")]\n\t"                                              \
    "ldr r12, [r0, #(96 + 16 * " #ky " + 4 * " #c ")]\n\t"                                              \
    "ldr lr, [r0, #(144 + 16 * " #ky " + 4 * " #c ")]\n\t"                                              \
    "ldr r1, [r2, #(32 * " #ky " + 4 * " #c ")]\n\t"                                                    \
    "ldr r3, [r2, #(32 * " #ky " + 16 + 4 * " #c ")]\n\t"                                               \
    "smlad r4, r10, r1, r4\n\t"                                                                         \
    "smlabt r4, r11, r3, r4\n\t"                                                                        \
    "smlatb r5, r10, r1, r5\n\t"                                                                        \
    "smlad r5, r11, r3, r5\n\t"                                                                         \
    "smlad r6, r11, r1, r6\n\t"                                                                         \
    "smlabt r6, r12, r3, r6\n\t"                                                                        \
    "smlatb r7, r11, r1, r7\n\t"                                                                        \
    "smlad r7, r12, r3, r7\n\t"                                                                         \
    "smlad r8, r12, r1, r8\n\t"                                                                         \
    "smlabt r8, lr, r3, r8\n\t"                                                                         \
    "smlatb r9, r12, r1, r9\n\t"                                                                        \
    "smlad r9, lr, r3, r9\n\t"
#if AOTC_DSP_M7
/* The M7's order of a channel's kernel rows (the same multiplies, the loads moved): each load beside a multiply (one
 * MAC unit: a multiply a cycle), kernel row ky + 1's pairs r10, r11 and weights r1, r3 loaded in row ky once its
 * multiplies are done with them (TFL_DWP6_NEXT_M7), r12 and lr beside the row's first two multiplies: 12 cycles a
 * kernel row on the dual-issue model, 14 the first (its base and first loads), where the M4's order (6 loads, then
 * 12 multiplies) took 15. */
#define TFL_DWP6_NEXT_M7(ky, c, reg, at) "ldr " reg ", [" at ", #(" #ky " + 4 * " #c ")]\n\t"
#define TFL_DWP6_KY0_M7(bp, off, c)                                                                          \
    "ldr r9, [" bp ", #(" off " + 4 * " #c ")]\n\t"                                                     \
    "ldr r10, [r0, #(4 * " #c ")]\n\t"                                                                   \
    "ldr r1, [r2, #(4 * " #c ")]\n\t"                                                                    \
    "ldr r11, [r0, #(48 + 4 * " #c ")]\n\t"                                                              \
    "smlad r4, r10, r1, r9\n\t"                                                                          \
    "ldr r3, [r2, #(16 + 4 * " #c ")]\n\t"                                                               \
    "smlabt r4, r11, r3, r4\n\t"                                                                         \
    "ldr r12, [r0, #(96 + 4 * " #c ")]\n\t"                                                              \
    "smlatb r5, r10, r1, r9\n\t"                                                                         \
    "ldr lr, [r0, #(144 + 4 * " #c ")]\n\t"                                                              \
    "smlad r5, r11, r3, r5\n\t" TFL_DWP6_NEXT_M7(16, c, "r10", "r0")                                     \
    "smlad r6, r11, r1, r9\n\t"                                                                          \
    "smlabt r6, r12, r3, r6\n\t"                                                                         \
    "smlatb r7, r11, r1, r9\n\t" TFL_DWP6_NEXT_M7(64, c, "r11", "r0")                                    \
    "smlad r7, r12, r3, r7\n\t"                                                                          \
    "smlad r8, r12, r1, r9\n\t"                                                                          \
    "smlabt r8, lr, r3, r8\n\t"                                                                          \
    "smlatb r9, r12, r1, r9\n\t" TFL_DWP6_NEXT_M7(32, c, "r1", "r2")                                     \
    "smlad r9, lr, r3, r9\n\t" TFL_DWP6_NEXT_M7(48, c, "r3", "r2")
/* kernel row ky (r10, r11, r1, r3 loaded); N1 .. N4: the next row's loads, or nothing for the last */
#define TFL_DWP6_KY_M7(ky, c, N1, N2, N3, N4)                                                                \
    "smlad r4, r10, r1, r4\n\t"                                                                         \
    "ldr r12, [r0, #(96 + 16 * " #ky " + 4 * " #c ")]\n\t"                                              \
    "smlabt r4, r11, r3, r4\n\t"                                                                        \
    "ldr lr, [r0, #(144 + 16 * " #ky " + 4 * " #c ")]\n\t"                                              \
    "smlatb r5, r10, r1, r5\n\t"                                                                        \
    "smlad r5, r11, r3, r5\n\t" N1                                                                      \
    "smlad r6, r11, r1, r6\n\t"                                                                         \
    "smlabt r6, r12, r3, r6\n\t"                                                                        \
    "smlatb r7, r11, r1, r7\n\t" N2                                                                     \
    "smlad r7, r12, r3, r7\n\t"                                                                         \
    "smlad r8, r12, r1, r8\n\t"                                                                         \
    "smlabt r8, lr, r3, r8\n\t"                                                                         \
    "smlatb r9, r12, r1, r9\n\t" N3                                                                     \
    "smlad r9, lr, r3, r9\n\t" N4
/* the 3 kernel rows, then the channel's y (r10), oc (r11) and terms (r1, r3, r12): the last row's loads y, oc, r1 and
 * r3 beside its multiplies (once each register is free), r12 after */
#define TFL_DWP6_ROWS_TERMS_AT(bp, base, c, t0, t1, t2)                                                      \
    TFL_DWP6_KY0_M7(bp, base, c)                                                                             \
    TFL_DWP6_KY_M7(1, c, TFL_DWP6_NEXT_M7(32, c, "r10", "r0"), TFL_DWP6_NEXT_M7(80, c, "r11", "r0"),          \
                   TFL_DWP6_NEXT_M7(64, c, "r1", "r2"), TFL_DWP6_NEXT_M7(80, c, "r3", "r2"))                 \
    TFL_DWP6_KY_M7(2, c, "ldr r10, [sp, #(4 * " #c ")]\n\t", "ldr r11, [sp, #16]\n\t",                      \
                   "ldr r1, [" bp ", #(" t0 " + 4 * " #c ")]\n\t", "ldr r3, [" bp ", #(" t1 " + 4 * " #c ")]\n\t") \
    "ldr r12, [" bp ", #(" t2 " + 4 * " #c ")]\n\t"
/* two outputs' requantisations: TFL_DWP_RQ1F's interleaved (neither waits on the other's SMMLAR and SSAT results);
 * TFL_DWP_RQ1's one after the other (its temporary lr is the only free register) */
#define TFL_DWP_RQ1F2(a, b)                                                                                 \
    "smmlar " a ", " a ", r1, r3\n\t"                                                                   \
    "smmlar " b ", " b ", r1, r3\n\t"                                                                   \
    "asr " a ", " a ", r12\n\t"                                                                         \
    "asr " b ", " b ", r12\n\t"                                                                         \
    "ssat " a ", #8, " a "\n\t"                                                                         \
    "ssat " b ", #8, " b "\n\t"
#define TFL_DWP_RQ12(a, b) TFL_DWP_RQ1(a) TFL_DWP_RQ1(b)
#define TFL_DWP6_RQ_PAIR(R, a, b) R##2(a, b)
#else
#define TFL_DWP6_ROWS_TERMS_AT(bp, base, c, t0, t1, t2)                                                      \
    TFL_DWP6_KY0_AT(bp, base, c) TFL_DWP6_KY(1, c) TFL_DWP6_KY(2, c)                                         \
    "ldr r1, [" bp ", #(" t0 " + 4 * " #c ")]\n\t"                                                       \
    "ldr r3, [" bp ", #(" t1 " + 4 * " #c ")]\n\t"                                                       \
    "ldr r12, [" bp ", #(" t2 " + 4 * " #c ")]\n\t"                                                      \
    "ldr r10, [sp, #(4 * " #c ")]\n\t"                                                                   \
    "ldr r11, [sp, #16]\n\t"
#define TFL_DWP6_RQ_PAIR(R, a, b) R(a) R(b)
#endif
/* channel c of a turn: the window, its terms, y (r10) and oc (r11), the 6 outputs requantised and stored in pairs
 * (the pointer's add two instructions' groups before its store: no stall on the address) */
#define TFL_DWP6_CH_AT(R, c, bp, base, t0, t1, t2) /* base, the terms at [bp, #off + 4 c] */              \
    TFL_DWP6_ROWS_TERMS_AT(bp, base, c, t0, t1, t2) TFL_DWP6_RQ_PAIR(R, "r4", "r5")                       \
    "strb r4, [r10]\n\t"                                                                                  \
    "strb r5, [r10, r11]\n\t"                                                                             \
    "add r10, r10, r11, lsl #1\n\t" TFL_DWP6_RQ_PAIR(R, "r6", "r7")                                    \
    "strb r6, [r10]\n\t"                                                                                  \
    "strb r7, [r10, r11]\n\t"                                                                             \
    "add r10, r10, r11, lsl #1\n\t" TFL_DWP6_RQ_PAIR(R, "r8", "r9")                                    \
    "strb r8, [r10]\n\t"                                                                                  \
    "strb r9, [r10, r11]\n\t"                                                                             \
    "add r10, r10, r11, lsl #1\n\t"                                                                       \
    "str r10, [sp, #(4 * " #c ")]\n\t"
#define TFL_DWP6_CH(R, c) TFL_DWP6_CH_AT(R, c, "r2", "144", "96", "112", "128")
/* ring r0, q r1 (>= 1 turns), the block r2; y and oc on the stack */
#define TFL_DWP6_ROW_ASM(R) /* R: TFL_DWP_RQ1 or TFL_DWP_RQ1F (mult r1, ra r3, right r12, lr a temporary) */      \
    "push {r4-r11, lr}\n\t"                                                                               \
    "sub sp, sp, #24\n\t"                                                                                 \
    "ldr r4, [sp, #60]\n\t"                                                                               \
    "ldr r8, [sp, #64]\n\t"                                                                               \
    "add r1, r1, r1, lsl #3\n\t"                                                                          \
    "add r9, r0, r1, lsl #4\n\t"                                                                          \
    "adds r5, r4, #1\n\t"                                                                                 \
    "adds r6, r4, #2\n\t"                                                                                 \
    "adds r7, r4, #3\n\t"                                                                                 \
    "stm sp, {r4-r9}\n"                                                                                   \
    "2:\n\t" TFL_DWP6_CH(R, 0) TFL_DWP6_CH(R, 1) TFL_DWP6_CH(R, 2) TFL_DWP6_CH(R, 3)                      \
    "ldr r1, [sp, #20]\n\t"                                                                               \
    "adds r0, r0, #144\n\t"                                                                               \
    "cmp r0, r1\n\t"                                                                                      \
    "bne 2b\n\t"                                                                                          \
    "add sp, sp, #24\n\t"                                                                                 \
    "pop {r4-r11, pc}\n\t"
TFL_DWP_ROW_FN(tfl_dsp_dwp6_row_floor, TFL_DWP6_ROW_ASM(TFL_DWP_RQ1F))
TFL_DWP_ROW_FN(tfl_dsp_dwp6_row_sign, TFL_DWP6_ROW_ASM(TFL_DWP_RQ1))
/* A rest of 3 positions (ow mod 6 = 3: a MobileNet's 3 x 3 layer, ow = 3), where TFL_DWP2_ROW_ASM took two turns of 2
 * (the second's B made and dropped: about 32 cycles an output): a channel's 3 positions at once from pairs 0 .. 2
 * (r10, r11, r12), the kernel row's 2 weight words in r1, r3, per kernel row 5 loads and 6 multiplies; the sums
 * a0, b0, a1 in r4, r5, r6 (the base in r6, written last, as TFL_DWP6_KY0's r9), the outputs' rows y, y + oc,
 * y + 2 oc in r7, r8, r9 for the 4 channels (STRB at the channel's offset): about 53 cycles a channel's 3 outputs. */
#define TFL_DWP3_KY(ky, c, a0, b0, a1)                                                                      \
    "ldr r10, [r0, #(16 * " #ky " + 4 * " #c ")]\n\t"                                                   \
    "ldr r11, [r0, #(48 + 16 * " #ky " + 4 * " #c ")]\n\t"                                              \
    "ldr r12, [r0, #(96 + 16 * " #ky " + 4 * " #c ")]\n\t"                                              \
    "ldr r1, [r2, #(32 * " #ky " + 4 * " #c ")]\n\t"                                                    \
    "ldr r3, [r2, #(32 * " #ky " + 16 + 4 * " #c ")]\n\t"                                               \
    "smlad r4, r10, r1, " a0 "\n\t"                                                                     \
    "smlabt r4, r11, r3, r4\n\t"                                                                        \
    "smlatb r5, r10, r1, " b0 "\n\t"                                                                    \
    "smlad r5, r11, r3, r5\n\t"                                                                         \
    "smlad r6, r11, r1, " a1 "\n\t"                                                                     \
    "smlabt r6, r12, r3, r6\n\t"
#define TFL_DWP3_CH(R, c)                                                                                   \
    "ldr r6, [r2, #(144 + 4 * " #c ")]\n\t" TFL_DWP3_KY(0, c, "r6", "r6", "r6")                           \
        TFL_DWP3_KY(1, c, "r4", "r5", "r6") TFL_DWP3_KY(2, c, "r4", "r5", "r6")                             \
    "ldr r1, [r2, #(96 + 4 * " #c ")]\n\t"                                                               \
    "ldr r3, [r2, #(112 + 4 * " #c ")]\n\t"                                                              \
    "ldr r12, [r2, #(128 + 4 * " #c ")]\n\t" R("r4") R("r5") R("r6")                                      \
    "strb r4, [r7, #" #c "]\n\t"                                                                          \
    "strb r5, [r8, #" #c "]\n\t"                                                                          \
    "strb r6, [r9, #" #c "]\n\t"
/* ring r0 (at the rest's first pair), the block r2; y and oc on the stack */
#define TFL_DWP3_ROW_ASM(R)                                                                                 \
    "push {r4-r11, lr}\n\t"                                                                               \
    "ldr r7, [sp, #36]\n\t"                                                                               \
    "ldr r3, [sp, #40]\n\t"                                                                               \
    "add r8, r7, r3\n\t"                                                                                  \
    "add r9, r8, r3\n\t" TFL_DWP3_CH(R, 0) TFL_DWP3_CH(R, 1) TFL_DWP3_CH(R, 2) TFL_DWP3_CH(R, 3)          \
    "pop {r4-r11, pc}\n\t"
TFL_DWP_ROW_FN(tfl_dsp_dwp3_row_floor, TFL_DWP3_ROW_ASM(TFL_DWP_RQ1F))
TFL_DWP_ROW_FN(tfl_dsp_dwp3_row_sign, TFL_DWP3_ROW_ASM(TFL_DWP_RQ1))
/* A SAME stride-1 group of 4 channels whose rows are a multiple of 6 wide (ow = w = 6 q: every stride-1 layer of
 * VWW but the 3 x 3), the whole group in one naked function: its set-up from the weights, then row iy arranged into
 * slot iy mod 3 (tfl_dsp_dwp_row_p1's pairs: each word loaded once, 6 instructions a pair) and output row iy - 1
 * made by TFL_DWP6S_CH's turns, row h of x_zero. One copy of the kernel rows, [W1 W2 W0 W1 W2] (32 bytes each): turn t
 * (first row in slot t) is the 3 from row 2 - t; the terms and the sums' start once, on the stack (the blocks of
 * tfl_dsp_dwp: 3 copies of 40 words, about 300 instructions of gcc's a group). In C the rows' loop kept 20 values on
 * the stack (about 45 instructions a row around the arranging and the call) and each row's call pushed and set up
 * its frame again. Arguments: tfl_dsp_dwp_same_args. Locals past TFL_DWP6_CH's ([sp] .. [sp, #20]): [sp, #24] the
 * arguments, [sp, #28] rows left to arrange (-1: row h's done), [sp, #32] the slot's offset (16 (iy mod 3)), [sp,
 * #36] the next row, [sp, #40] y, [sp, #44] 1 before the first row's turn, [sp, #48 + 16 k + 4 c] channel c's term
 * k (mult, ra, right, the sums' start), [sp, #112] the kernel rows, [sp, #272] a pair of x_zero's 4 words.
 * Measured on VWW -O3 (its 69,120 such outputs): 1,418,454 est. cycles with the set-up and the arranging (20.5 an
 * output); the ring's stride-1 layers in all (with the 3 x 3's tfl_dsp_dwp3_same_floor and tfl_dsp_dwp's test)
 * 1,531,196, where tfl_dsp_dwp, TFL_DWP6_ROW_ASM and TFL_DWP3_ROW_ASM took 399,350 + 1,170,720 + 45,888. The row
 * loop's bookkeeping (VWW's 1,626 rows): the channels' y set once, not each row (a row's turns leave them at the
 * next row's: 6 q oc on), 1,418,454 -> 1,401,594; the row's loads in one run, the first row's test falling through
 * (TFL_DWPS_FIRST past the return), the arguments kept in r12 from 1 to 9: 1,394,070 (tfl_dsp_dwp3_same_floor
 * 77,184 -> 76,544). Row -1 not filled with x_zero where the last group's row h left it in the ring (zslot: its
 * slot, the next group's row 0 in the slot after; -1 at a layer's first group, or after a group by another path,
 * which may take the scratch): the fill took 9 cycles a pair, 36 a 6 x 6 group; 1,394,070 -> 1,387,447 (the
 * dispatcher's reset on the unfused groups' path only: on every other path it cost 2 K there). */
typedef struct {
    const int8_t *s;    /* 0: row 0's first word */
    int32_t c;          /* 4 */
    int32_t h;          /* 8 */
    uint32_t zb;        /* 12 */
    uint32_t *ring;     /* 16 */
    int32_t q;          /* 20: ow / 6 */
    const int8_t *w;    /* 24: the weights at the group's channel */
    int8_t *y;          /* 28 */
    int32_t oc;         /* 32 */
    const uint32_t *rq; /* 36: the terms by channel */
    int32_t row;        /* 40: w c */
    int32_t ystep;      /* 44: ow oc */
    int32_t np;         /* 48: 3 q + 1 pairs */
    const int32_t *base; /* 52 */
    int32_t zslot;      /* 56: the ring's slot (16 k) holding x_zero's row from the last group (its row h), or -1 */
} tfl_dsp_dwp_same_args;
/* TFL_DWP6_KY0 and TFL_DWP6_CH with the terms and the sums' start on the stack */
#define TFL_DWP6S_CH(R, c) TFL_DWP6_CH_AT(R, c, "sp", "96", "48", "64", "80")
#if AOTC_DSP_M33
/* The M33's turn of the SAME group (TFL_DWP6S_CH's multiplies, loads and requantisation): a kernel row's pairs in two
 * registers, A r10 and B lr, each loaded again after its last multiply (pair 2 into A, 3 into B; the next row's 0 and
 * 1 and its weights after the row's last two), no load's result read by the next instruction (the M33's load-use
 * cycle); which frees r11 for oc and r12 for the channel's y through the turn (y + c: y and oc not loaded and y not
 * stored a channel): 84 instructions a channel's 6 outputs, not 88, and 3 a turn to the next one's y (the M4 keeps
 * its order: its loads pipelined back to back). VWW an505 -O3 tfl_dsp_dwp6_same_floor 1,275,470 -> 1,253,870 est.
 * cycles; the outputs stored by oc shifted (STRB's register offset), one ADD of y a channel less: -> 1,242,350. */
#define TFL_DWP6M_KY(ky, c, a0, a1, a2, a3, a4, a5, NA, NB)                                                 \
    "smlad r4, r10, r1, " a0 "\n\t"                                                                      \
    "smlabt r4, lr, r3, r4\n\t"                                                                         \
    "smlatb r5, r10, r1, " a1 "\n\t"                                                                    \
    "ldr r10, [r0, #(96 + 16 * " #ky " + 4 * " #c ")]\n\t"                                            \
    "smlad r5, lr, r3, r5\n\t"                                                                          \
    "smlad r6, lr, r1, " a2 "\n\t"                                                                      \
    "smlabt r6, r10, r3, r6\n\t"                                                                        \
    "smlatb r7, lr, r1, " a3 "\n\t"                                                                     \
    "ldr lr, [r0, #(144 + 16 * " #ky " + 4 * " #c ")]\n\t"                                            \
    "smlad r7, r10, r3, r7\n\t"                                                                         \
    "smlad r8, r10, r1, " a4 "\n\t"                                                                     \
    "smlabt r8, lr, r3, r8\n\t"                                                                         \
    "smlatb r9, r10, r1, " a5 "\n\t" NA                                                                 \
    "smlad r9, lr, r3, r9\n\t" NB
/* the next kernel row's pair 0 into A and weights w01 into r1 (NA), pair 1 into B and w12 into r3 (NB) */
#define TFL_DWP6M_NA(ky, c) "ldr r10, [r0, #(16 * " #ky " + 4 * " #c ")]\n\tldr r1, [r2, #(32 * " #ky " + 4 * " #c ")]\n\t"
#define TFL_DWP6M_NB(ky, c)                                                                                 \
    "ldr lr, [r0, #(48 + 16 * " #ky " + 4 * " #c ")]\n\tldr r3, [r2, #(32 * " #ky " + 16 + 4 * " #c ")]\n\t"
/* TFL_DWP_RQ1F and TFL_DWP_RQ1 with mult in r1, ra in r10, right in lr (TFL_DWP_RQ1's temporary r3) */
#define TFL_DWP_RQ1F_M33(a)                                                                                 \
    "smmlar " a ", " a ", r1, r10\n\t"                                                                \
    "asr " a ", " a ", lr\n\t"                                                                        \
    "ssat " a ", #8, " a "\n\t"
#define TFL_DWP_RQ1_M33(a)                                                                                  \
    "smmlar r3, " a ", r1, r10\n\t"                                                                   \
    "add " a ", r3, " a ", asr #31\n\t"                                                               \
    "asr " a ", " a ", lr\n\t"                                                                        \
    "ssat " a ", #8, " a "\n\t"
#define TFL_DWP6M_RQ_TFL_DWP_RQ1F(a) TFL_DWP_RQ1F_M33(a)
#define TFL_DWP6M_RQ_TFL_DWP_RQ1(a) TFL_DWP_RQ1_M33(a)
/* channel c: its base (r9), row 0's pairs and weights, the 3 rows, the terms (mult r1 and ra r10 once the row's last
 * multiply by A and r1 is done, right lr once B's is), the 6 outputs requantised, then stored from y + c (r12) by
 * oc (r11) shifted: positions 0, 1, 2, 4 from r12, 3 and 5 from r1 = r12 + oc; r12 on to the next channel's */
#define TFL_DWP6M_CH(R, c)                                                                                  \
    "ldr r9, [sp, #(96 + 4 * " #c ")]\n\t" TFL_DWP6M_NA(0, c) TFL_DWP6M_NB(0, c)                          \
    TFL_DWP6M_KY(0, c, "r9", "r9", "r9", "r9", "r9", "r9", TFL_DWP6M_NA(1, c), TFL_DWP6M_NB(1, c))          \
    TFL_DWP6M_KY(1, c, "r4", "r5", "r6", "r7", "r8", "r9", TFL_DWP6M_NA(2, c), TFL_DWP6M_NB(2, c))          \
    TFL_DWP6M_KY(2, c, "r4", "r5", "r6", "r7", "r8", "r9",                                                   \
                 "ldr r1, [sp, #(48 + 4 * " #c ")]\n\tldr r10, [sp, #(64 + 4 * " #c ")]\n\t",              \
                 "ldr lr, [sp, #(80 + 4 * " #c ")]\n\t")                                                   \
    TFL_DWP6M_RQ_##R("r4") TFL_DWP6M_RQ_##R("r5") TFL_DWP6M_RQ_##R("r6") TFL_DWP6M_RQ_##R("r7")             \
    TFL_DWP6M_RQ_##R("r8") TFL_DWP6M_RQ_##R("r9")                                                          \
    "add r1, r12, r11\n\t"                                                                               \
    "strb r4, [r12]\n\t"                                                                                 \
    "strb r5, [r12, r11]\n\t"                                                                            \
    "strb r6, [r12, r11, lsl #1]\n\t"                                                                    \
    "strb r8, [r12, r11, lsl #2]\n\t"                                                                    \
    "strb r7, [r1, r11, lsl #1]\n\t"                                                                     \
    "strb r9, [r1, r11, lsl #2]\n\t"                                                                     \
    "add r12, r12, #1\n\t"
/* a row's turns: oc in r11 and y (the row's, channel 0's: [sp]) in r12, back to [sp] after them */
#define TFL_DWP6S_TURNS(R)                                                                                  \
    "ldr r11, [sp, #16]\n\t"                                                                             \
    "ldr r12, [sp]\n"                                                                                     \
    "4:\n\t" TFL_DWP6M_CH(R, 0) TFL_DWP6M_CH(R, 1) TFL_DWP6M_CH(R, 2) TFL_DWP6M_CH(R, 3)                  \
    "add r12, r12, r11, lsl #2\n\t"                                                                      \
    "ldr r1, [sp, #20]\n\t"                                                                              \
    "add r12, r12, r11, lsl #1\n\t"                                                                      \
    "adds r0, r0, #144\n\t"                                                                              \
    "subs r12, r12, #4\n\t"                                                                              \
    "cmp r0, r1\n\t"                                                                                     \
    "bne 4b\n\t"                                                                                         \
    "str r12, [sp]\n\t"
#else
#define TFL_DWP6S_TURNS(R)                                                                                  \
    "4:\n\t" TFL_DWP6S_CH(R, 0) TFL_DWP6S_CH(R, 1) TFL_DWP6S_CH(R, 2) TFL_DWP6S_CH(R, 3)                  \
    "ldr r1, [sp, #20]\n\t"                                                                              \
    "adds r0, r0, #144\n\t"                                                                              \
    "cmp r0, r1\n\t"                                                                                     \
    "bne 4b\n\t"
#endif
/* a column pair [a, b] widened to [ea, r9, eb, r10] at [r3, #off] (TFL_DWP_PAIR's on named registers) */
#define TFL_DWPS_PAIR(a, b, ea, eb, off)                                                                    \
    "pkhbt r9, " a ", " b ", lsl #16\n\t"                                                               \
    "pkhtb r10, " b ", " a ", asr #16\n\t"                                                              \
    "sxtb16 " ea ", r9\n\t"                                                                             \
    "sxtb16 r9, r9, ror #8\n\t"                                                                         \
    "sxtb16 " eb ", r10\n\t"                                                                            \
    "sxtb16 r10, r10, ror #8\n\t"                                                                       \
    "str " ea ", [r3, #" #off "]\n\t"                                                                   \
    "str r9, [r3, #(" #off " + 4)]\n\t"                                                                 \
    "str " eb ", [r3, #(" #off " + 8)]\n\t"                                                             \
    "str r10, [r3, #(" #off " + 12)]\n\t"
/* two taps' words a, b of the 4 channels into their 4 pairs r7 .. r10, doubled (tfl_dsp_dwp_put2's) */
#define TFL_DWPS_WPAIR(a, b)                                                                                \
    "pkhbt r11, " a ", " b ", lsl #16\n\t"                                                              \
    "pkhtb r12, " b ", " a ", asr #16\n\t"                                                              \
    "sxtb16 r7, r11\n\t"                                                                                \
    "sxtb16 r8, r11, ror #8\n\t"                                                                        \
    "sxtb16 r9, r12\n\t"                                                                                \
    "sxtb16 r10, r12, ror #8\n\t"                                                                       \
    "sadd16 r7, r7, r7\n\t"                                                                             \
    "sadd16 r8, r8, r8\n\t"                                                                             \
    "sadd16 r9, r9, r9\n\t"                                                                             \
    "sadd16 r10, r10, r10\n\t"
#define TFL_DWPS_W4(off)                                                                                    \
    "str r7, [sp, #(" #off ")]\n\t"                                                                     \
    "str r8, [sp, #(" #off " + 4)]\n\t"                                                                 \
    "str r9, [sp, #(" #off " + 8)]\n\t"                                                                 \
    "str r10, [sp, #(" #off " + 12)]\n\t"
/* kernel row r1 (taps oc = r2 bytes apart) to its block(s) at B1 (and B2: TFL_DWPS_W4 or nothing); r1 to the next */
#define TFL_DWPS_WROW(B1, B2A, B2B)                                                                         \
    "ldr r3, [r1]\n\t"                                                                                    \
    "ldr r4, [r1, r2]\n\t"                                                                                \
    "ldr r5, [r1, r2, lsl #1]\n\t"                                                                        \
    "add r1, r1, r6\n\t" TFL_DWPS_WPAIR("r3", "r4") TFL_DWPS_W4(B1) B2A TFL_DWPS_WPAIR("r4", "r5")       \
        TFL_DWPS_W4(B1 + 16) B2B
/* the set-up: the terms by kind, one copy of the kernel rows, x_zero's pair, the locals */
#define TFL_DWPS_SETUP                                                                                      \
    "push {r4-r11, lr}\n\t"                                                                               \
    "sub sp, sp, #288\n\t"                                                                                \
    "str r0, [sp, #24]\n\t"                                                                               \
    "ldr r1, [r0, #36]\n\t" /* the terms by kind */                                                       \
    "ldm r1, {r2-r12, lr}\n\t"                                                                            \
    "str r2, [sp, #48]\n\t"                                                                               \
    "str r5, [sp, #52]\n\t"                                                                               \
    "str r8, [sp, #56]\n\t"                                                                               \
    "str r11, [sp, #60]\n\t"                                                                              \
    "str r3, [sp, #64]\n\t"                                                                               \
    "str r6, [sp, #68]\n\t"                                                                               \
    "str r9, [sp, #72]\n\t"                                                                               \
    "str r12, [sp, #76]\n\t"                                                                              \
    "str r4, [sp, #80]\n\t"                                                                               \
    "str r7, [sp, #84]\n\t"                                                                               \
    "str r10, [sp, #88]\n\t"                                                                              \
    "str lr, [sp, #92]\n\t"                                                                               \
    "ldr r1, [r0, #52]\n\t"                                                                               \
    "ldm r1, {r2-r5}\n\t"                                                                                 \
    "add r1, sp, #96\n\t"                                                                                 \
    "stm r1, {r2-r5}\n\t"                                                                                 \
    "ldr r1, [r0, #24]\n\t" /* kernel rows 0 (block 2), 1 (blocks 0, 3), 2 (1, 4) */                      \
    "ldr r2, [r0, #32]\n\t"                                                                               \
    "add r6, r2, r2, lsl #1\n\t" TFL_DWPS_WROW(176, , )                                                   \
        TFL_DWPS_WROW(112, TFL_DWPS_W4(208), TFL_DWPS_W4(224))                                            \
            TFL_DWPS_WROW(144, TFL_DWPS_W4(240), TFL_DWPS_W4(256))                                        \
    "ldr r3, [r0, #12]\n\t" /* x_zero's pair (not doubled) */                                             \
    "pkhbt r11, r3, r3, lsl #16\n\t"                                                                      \
    "pkhtb r12, r3, r3, asr #16\n\t"                                                                      \
    "sxtb16 r7, r11\n\t"                                                                                  \
    "sxtb16 r8, r11, ror #8\n\t"                                                                          \
    "sxtb16 r9, r12\n\t"                                                                                  \
    "sxtb16 r10, r12, ror #8\n\t"                                                                         \
    "add r1, sp, #272\n\t"                                                                                \
    "stm r1, {r7-r10}\n\t"                                                                                \
    "ldr r1, [r0]\n\t"                                                                                    \
    "ldr r2, [r0, #28]\n\t"                                                                               \
    "ldr r3, [r0, #8]\n\t"                                                                                \
    "movs r4, #0\n\t"                                                                                     \
    "movs r5, #1\n\t"                                                                                     \
    "str r1, [sp, #36]\n\t"                                                                               \
    "str r2, [sp, #40]\n\t"                                                                               \
    "str r3, [sp, #28]\n\t"                                                                               \
    "str r4, [sp, #32]\n\t"                                                                               \
    "str r5, [sp, #44]\n\t"
/* the next slot ([sp, #32] in r4); before the first row's turn back to 1 */
#define TFL_DWPS_NEXT                                                                                       \
    "ldr r4, [sp, #32]\n\t"                                                                               \
    "ldr r5, [sp, #44]\n\t"                                                                               \
    "adds r4, r4, #16\n\t"                                                                                \
    "cmp r4, #48\n\t"                                                                                     \
    "it eq\n\t"                                                                                           \
    "moveq r4, #0\n\t"                                                                                    \
    "str r4, [sp, #32]\n\t"                                                                               \
    "cmp r5, #0\n\t"                                                                                      \
    "bne 10f\n" /* the first row: no turn yet (TFL_DWPS_FIRST, past the return) */
/* after TFL_DWPS_NEXT's first row (its test falls through to the turns: a taken branch a row less) */
#define TFL_DWPS_FIRST                                                                                      \
    "10:\n\t"                                                                                             \
    "movs r5, #0\n\t"                                                                                     \
    "str r5, [sp, #44]\n\t"                                                                               \
    "b 1b\n\t"
/* A row 6 wide (q = 1: a MobileNet's 6 x 6 layers, most of VWW's rows), its 4 pairs [x_zero, x(0)], [x(1), x(2)],
 * [x(3), x(4)], [x(5), x_zero] in a straight line (r0 the row, r1 c, r2 3 c, r3 the slot, r5 and r11 x_zero's word),
 * not by the odd pair's, the loop's and the last pair's tests and branches: VWW an505 -O3 tfl_dsp_dwp6_same_floor
 * 1,282,190 -> 1,275,470 est. cycles */
#define TFL_DWPS_ROW6                                                                                       \
    "13:\n\t"                                                                                             \
    "ldr r6, [r0]\n\t"                                                                                    \
    "ldr r7, [r0, r1]\n\t"                                                                                \
    "ldr r8, [r0, r1, lsl #1]\n\t"                                                                        \
    "ldr r4, [r0, r2]\n\t" TFL_DWPS_PAIR("r5", "r6", "r6", "r5", 0)                                       \
    "ldr r5, [r0, r1, lsl #2]\n\t"                                                                        \
    "add r0, r0, r1, lsl #2\n\t" TFL_DWPS_PAIR("r7", "r8", "r7", "r8", 48)                                \
    "ldr r6, [r0, r1]\n\t" TFL_DWPS_PAIR("r4", "r5", "r4", "r5", 96) TFL_DWPS_PAIR("r6", "r11", "r6", "r7", 144) \
    "b 7b\n\t"
#define TFL_DWP6_SAME_ASM(R)                                                                                \
    TFL_DWPS_SETUP                                                                                        \
    "ldr r3, [r0, #16]\n\t" /* oc and the ring's end (r0 + 144 q) once */                                 \
    "ldr r1, [r0, #20]\n\t"                                                                               \
    "ldr r2, [r0, #32]\n\t"                                                                               \
    "ldr r4, [r0, #56]\n\t"                                                                               \
    "add r1, r1, r1, lsl #3\n\t"                                                                          \
    "add r1, r3, r1, lsl #4\n\t"                                                                          \
    "str r2, [sp, #16]\n\t"                                                                               \
    "str r1, [sp, #20]\n\t"                                                                               \
    "cmp r4, #0\n\t" /* x_zero's row h of the last group still in its slot: row -1's, row 0 in the next */ \
    "blt 11f\n\t"                                                                                         \
    "adds r4, r4, #16\n\t"                                                                                \
    "cmp r4, #48\n\t"                                                                                     \
    "it eq\n\t"                                                                                           \
    "moveq r4, #0\n\t"                                                                                    \
    "str r4, [sp, #32]\n\t"                                                                               \
    "b 12f\n"                                                                                             \
    "11:\n\t" /* else row -1 of x_zero in slot 2 */                                                       \
    "adds r3, r3, #32\n\t"                                                                                \
    "ldr r2, [r0, #48]\n\t"                                                                               \
    "add r1, sp, #272\n\t"                                                                                \
    "ldm r1, {r4-r7}\n"                                                                                   \
    "5:\n\t"                                                                                              \
    "str r4, [r3]\n\t"                                                                                    \
    "str r5, [r3, #4]\n\t"                                                                                \
    "str r6, [r3, #8]\n\t"                                                                                \
    "str r7, [r3, #12]\n\t"                                                                               \
    "adds r3, r3, #48\n\t"                                                                                \
    "subs r2, r2, #1\n\t"                                                                                 \
    "bgt 5b\n"                                                                                            \
    "12:\n\t"                                                                                             \
    "ldr r4, [sp, #40]\n\t" /* the channels' y once: a row's turns leave them at the next row's (6 q oc on) */ \
    "adds r5, r4, #1\n\t"                                                                                 \
    "adds r6, r4, #2\n\t"                                                                                 \
    "adds r7, r4, #3\n\t"                                                                                 \
    "stm sp, {r4-r7}\n"                                                                                   \
    "1:\n\t" /* the next row into the slot at [sp, #32] */                                                \
    "ldr r12, [sp, #24]\n\t"                                                                              \
    "ldr r4, [sp, #28]\n\t"                                                                               \
    "ldr r3, [sp, #32]\n\t"                                                                               \
    "ldr r0, [sp, #36]\n\t"                                                                               \
    "ldr r2, [r12, #16]\n\t"                                                                              \
    "ldr r1, [r12, #4]\n\t"                                                                               \
    "ldr r11, [r12, #12]\n\t"                                                                             \
    "ldr r5, [r12, #40]\n\t"                                                                              \
    "ldr r6, [r12, #20]\n\t"                                                                              \
    "add r3, r3, r2\n\t"                                                                                  \
    "subs r4, r4, #1\n\t"                                                                                 \
    "str r4, [sp, #28]\n\t"                                                                               \
    "blt 6f\n\t"                                                                                          \
    "add r5, r0, r5\n\t"                                                                                  \
    "str r5, [sp, #36]\n\t"                                                                               \
    "add r2, r1, r1, lsl #1\n\t"                                                                          \
    "mov r5, r11\n\t"                                                                                     \
    "cmp r6, #1\n\t" /* a row 6 wide: TFL_DWPS_ROW6, past the return */                                  \
    "beq 13f\n\t"                                                                                         \
    "add r4, r6, r6, lsl #1\n\t"                                                                          \
    "lsrs r4, r4, #1\n\t"                                                                                 \
    "bcc 2f\n\t"                                                                                          \
    "ldr r6, [r0]\n\t"                                                                                    \
    "ldr r7, [r0, r1]\n\t"                                                                                \
    "add r0, r0, r1, lsl #1\n\t" TFL_DWPS_PAIR("r5", "r6", "r6", "r8", 0)                                 \
    "mov r5, r7\n\t"                                                                                      \
    "add r3, r3, #48\n\t"                                                                                 \
    "cmp r4, #0\n\t"                                                                                      \
    "beq 3f\n"                                                                                            \
    "2:\n\t"                                                                                              \
    "ldr r6, [r0]\n\t"                                                                                    \
    "ldr r7, [r0, r1]\n\t"                                                                                \
    "ldr r8, [r0, r1, lsl #1]\n\t" TFL_DWPS_PAIR("r5", "r6", "r6", "r5", 0)                               \
    "ldr r5, [r0, r2]\n\t"                                                                                \
    "add r0, r0, r1, lsl #2\n\t" TFL_DWPS_PAIR("r7", "r8", "r7", "r8", 48)                                \
    "add r3, r3, #96\n\t"                                                                                 \
    "subs r4, r4, #1\n\t"                                                                                 \
    "bne 2b\n"                                                                                            \
    "3:\n\t" TFL_DWPS_PAIR("r5", "r11", "r6", "r7", 0) /* [x(w - 1), x_zero] */                          \
    "b 7f\n"                                                                                              \
    "6:\n\t" /* row h of x_zero; its slot for the next group (its row -1) */                              \
    "sub r1, r3, r2\n\t"                                                                                  \
    "str r1, [r12, #56]\n\t"                                                                              \
    "ldr r2, [r12, #48]\n\t"                                                                              \
    "add r1, sp, #272\n\t"                                                                                \
    "ldm r1, {r4-r7}\n"                                                                                   \
    "8:\n\t"                                                                                              \
    "str r4, [r3]\n\t"                                                                                    \
    "str r5, [r3, #4]\n\t"                                                                                \
    "str r6, [r3, #8]\n\t"                                                                                \
    "str r7, [r3, #12]\n\t"                                                                               \
    "adds r3, r3, #48\n\t"                                                                                \
    "subs r2, r2, #1\n\t"                                                                                 \
    "bgt 8b\n"                                                                                            \
    "7:\n\t" TFL_DWPS_NEXT /* the next slot; the turn whose first row is in it */                         \
    "9:\n\t" /* turn t = slot / 16: its kernel rows from row 2 - t of the copy (r12 the arguments since 1) */ \
    "add r2, sp, #176\n\t"                                                                                \
    "sub r2, r2, r4, lsl #1\n\t"                                                                          \
    "ldr r0, [r12, #16]\n\t" TFL_DWP6S_TURNS(R)                                        \
    "ldr r4, [sp, #28]\n\t"                                                                               \
    "cmp r4, #0\n\t"                                                                                      \
    "bge 1b\n\t"                                                                                          \
    "add sp, sp, #288\n\t"                                                                                \
    "pop {r4-r11, pc}\n\t"                                                                                \
    TFL_DWPS_FIRST TFL_DWPS_ROW6
#define TFL_DWP6_SAME_FN(name, text)                                                                        \
    __attribute__((naked, noinline)) static void name(TFL_DSP_ARG const tfl_dsp_dwp_same_args *a) {       \
        __asm__ volatile(text);                                                                          \
    }
TFL_DWP6_SAME_FN(tfl_dsp_dwp6_same_floor, TFL_DWP6_SAME_ASM(TFL_DWP_RQ1F))
TFL_DWP6_SAME_FN(tfl_dsp_dwp6_same_sign, TFL_DWP6_SAME_ASM(TFL_DWP_RQ1))
/* The same for rows 3 wide (ow = w = 3: a MobileNet's 3 x 3 layer, VWW's 3 x 3 x 256), where tfl_dsp_dwp_rows took
 * its set-up, its C loop and TFL_DWP3_ROW_ASM's calls: the pairs [x_zero, x(0)], [x(1), x(2)], then one of x_zero,
 * the same in every row (stored once, with row -1's), TFL_DWP3_CH's outputs (the terms from the stack). Measured
 * on VWW -O3: 77,184 est. cycles for its 64 groups, where tfl_dsp_dwp_rows and TFL_DWP3_ROW_ASM took 59,840 + 45,888 */
#define TFL_DWP3S_CH(R, c)                                                                                  \
    "ldr r6, [sp, #(96 + 4 * " #c ")]\n\t" TFL_DWP3_KY(0, c, "r6", "r6", "r6")                            \
        TFL_DWP3_KY(1, c, "r4", "r5", "r6") TFL_DWP3_KY(2, c, "r4", "r5", "r6")                             \
    "ldr r1, [sp, #(48 + 4 * " #c ")]\n\t"                                                               \
    "ldr r3, [sp, #(64 + 4 * " #c ")]\n\t"                                                               \
    "ldr r12, [sp, #(80 + 4 * " #c ")]\n\t" R("r4") R("r5") R("r6")                                       \
    "strb r4, [r7, #" #c "]\n\t"                                                                          \
    "strb r5, [r8, #" #c "]\n\t"                                                                          \
    "strb r6, [r9, #" #c "]\n\t"
#define TFL_DWP3_SAME_ASM(R)                                                                                \
    TFL_DWPS_SETUP                                                                                        \
    "ldr r3, [r0, #16]\n\t" /* the ring's 3 pairs of x_zero */                                            \
    "movs r2, #9\n\t"                                                                                     \
    "add r1, sp, #272\n\t"                                                                                \
    "ldm r1, {r4-r7}\n"                                                                                   \
    "5:\n\t"                                                                                              \
    "str r4, [r3]\n\t"                                                                                    \
    "str r5, [r3, #4]\n\t"                                                                                \
    "str r6, [r3, #8]\n\t"                                                                                \
    "str r7, [r3, #12]\n\t"                                                                               \
    "adds r3, r3, #16\n\t"                                                                                \
    "subs r2, r2, #1\n\t"                                                                                 \
    "bgt 5b\n"                                                                                            \
    "1:\n\t"                                                                                              \
    "ldr r12, [sp, #24]\n\t"                                                                              \
    "ldr r4, [sp, #32]\n\t"                                                                               \
    "ldr r3, [r12, #16]\n\t"                                                                              \
    "add r3, r3, r4\n\t"                                                                                  \
    "ldr r4, [sp, #28]\n\t"                                                                               \
    "subs r4, r4, #1\n\t"                                                                                 \
    "str r4, [sp, #28]\n\t"                                                                               \
    "blt 6f\n\t"                                                                                          \
    "ldr r0, [sp, #36]\n\t"                                                                               \
    "ldr r1, [r12, #4]\n\t"                                                                               \
    "ldr r2, [r12, #40]\n\t"                                                                              \
    "ldr r11, [r12, #12]\n\t"                                                                             \
    "add r2, r0, r2\n\t"                                                                                  \
    "str r2, [sp, #36]\n\t"                                                                               \
    "ldr r5, [r0]\n\t"                                                                                    \
    "ldr r6, [r0, r1]\n\t"                                                                                \
    "ldr r7, [r0, r1, lsl #1]\n\t" TFL_DWPS_PAIR("r11", "r5", "r5", "r8", 0)                              \
        TFL_DWPS_PAIR("r6", "r7", "r6", "r7", 48)                                                         \
    "b 7f\n"                                                                                              \
    "6:\n\t" /* row h of x_zero */                                                                        \
    "add r1, sp, #272\n\t"                                                                                \
    "ldm r1, {r4-r7}\n\t"                                                                                 \
    "str r4, [r3]\n\t"                                                                                    \
    "str r5, [r3, #4]\n\t"                                                                                \
    "str r6, [r3, #8]\n\t"                                                                                \
    "str r7, [r3, #12]\n\t"                                                                               \
    "str r4, [r3, #48]\n\t"                                                                               \
    "str r5, [r3, #52]\n\t"                                                                               \
    "str r6, [r3, #56]\n\t"                                                                               \
    "str r7, [r3, #60]\n"                                                                                 \
    "7:\n\t" TFL_DWPS_NEXT                                                                                \
    "9:\n\t"                                                                                              \
    "add r2, sp, #176\n\t"                                                                                \
    "sub r2, r2, r4, lsl #1\n\t"                                                                          \
    "ldr r0, [r12, #16]\n\t"                                                                              \
    "ldr r3, [r12, #44]\n\t"                                                                              \
    "ldr r7, [sp, #40]\n\t"                                                                               \
    "add r3, r7, r3\n\t"                                                                                  \
    "str r3, [sp, #40]\n\t"                                                                               \
    "ldr r3, [r12, #32]\n\t"                                                                              \
    "add r8, r7, r3\n\t"                                                                                  \
    "add r9, r8, r3\n\t" TFL_DWP3S_CH(R, 0) TFL_DWP3S_CH(R, 1) TFL_DWP3S_CH(R, 2) TFL_DWP3S_CH(R, 3)      \
    "ldr r4, [sp, #28]\n\t"                                                                               \
    "cmp r4, #0\n\t"                                                                                      \
    "bge 1b\n\t"                                                                                          \
    "add sp, sp, #288\n\t"                                                                                \
    "pop {r4-r11, pc}\n\t"                                                                                \
    TFL_DWPS_FIRST
TFL_DWP6_SAME_FN(tfl_dsp_dwp3_same_floor, TFL_DWP3_SAME_ASM(TFL_DWP_RQ1F))
TFL_DWP6_SAME_FN(tfl_dsp_dwp3_same_sign, TFL_DWP3_SAME_ASM(TFL_DWP_RQ1))
#undef TFL_DWP6_SAME_FN
#undef TFL_DWP3_SAME_ASM
#undef TFL_DWP3S_CH
#undef TFL_DWPS_SETUP
#undef TFL_DWPS_NEXT
#undef TFL_DWPS_FIRST
#undef TFL_DWPS_ROW6
#undef TFL_DWP6_SAME_ASM
#undef TFL_DWPS_WROW
#undef TFL_DWPS_W4
#undef TFL_DWPS_WPAIR
#undef TFL_DWPS_PAIR
#undef TFL_DWP6S_CH
#undef TFL_DWP6S_TURNS

#undef TFL_DWP3_ROW_ASM
#undef TFL_DWP3_CH
#undef TFL_DWP3_KY
#undef TFL_DWP6_ROW_ASM
#undef TFL_DWP6_CH
#undef TFL_DWP6_CH_AT
#undef TFL_DWP6_KY
#undef TFL_DWP6_KY0
#undef TFL_DWP6_KY0_AT
#undef TFL_DWP2_ROW_ASM
#undef TFL_DWP2_RQ
#undef TFL_DWP2_RQF
#undef TFL_DWP2_WINDOW
#undef TFL_DWP2_CH
#undef TFL_DSP_ARG
#undef TFL_DWP_ROW_FN
#undef TFL_DWP_RQ1
#undef TFL_DWP_RQ1F

/* The column pairs of the ring (the turns read up to the pair past their last position's: TFL_DWP6_ROW_ASM's turn
 * of 6 positions ends with its pair 3, TFL_DWP2_ROW_ASM's of 2 with its pair 1) */
#define TFL_DSP_DWP_PAIRS(p) (((p)->ow + 1) / 2 + 1)

/* Whether the fused path at stride 1 goes by the ring: it fits the scratch (the run of sums and the band) */
static inline int tfl_dsp_dwp_fits(const aotc_tfl_conv_params *p, int32_t run, int32_t pw) {
    return p->sw == 1 && 12 * (int64_t)TFL_DSP_DWP_PAIRS(p) <= 4 * (int64_t)run + 3 * (int64_t)pw;
}

/* One column pair's 4 channels of two words (columns 2i, 2i + 1) to d: [c0 of both], [c1], [c2], [c3]; doubled
 * with dbl (a constant where it is inlined). The words' low halves first (PKHBT: bytes [c0, c1] of 2i, then of
 * 2i + 1), their high halves (PKHTB: [c2, c3] of each), then each widened twice (SXTB16, by 0 and 8 bits): 6
 * instructions, not 8 (4 widened words put together by 4 PKH). In assembly the row's loop's (gcc's masks and
 * shifts took 14, and the selects of a row's edge pairs spilled around them) */
static inline __attribute__((always_inline)) void tfl_dsp_dwp_put2(uint32_t v0, uint32_t v1, uint32_t *d, int dbl) {
#if AOTC_DSP_ASM
    uint32_t lo, hi;
    __asm__("pkhbt %[lo], %[v0], %[v1], lsl #16\n\t"
            "pkhtb %[hi], %[v1], %[v0], asr #16\n\t"
            : [lo] "=&r"(lo), [hi] "=r"(hi)
            : [v0] "r"(v0), [v1] "r"(v1));
#else
    const uint32_t lo = (v0 & 0xffffu) | (v1 << 16), hi = (v1 & 0xffff0000u) | (v0 >> 16);
#endif
    uint32_t a = (uint32_t)__sxtb16(lo), b = aotc_dsp_sxtb16_hi(lo);
    uint32_t e = (uint32_t)__sxtb16(hi), o = aotc_dsp_sxtb16_hi(hi);
    if (dbl) {
        a = (uint32_t)__sadd16((int32_t)a, (int32_t)a), b = (uint32_t)__sadd16((int32_t)b, (int32_t)b);
        e = (uint32_t)__sadd16((int32_t)e, (int32_t)e), o = (uint32_t)__sadd16((int32_t)o, (int32_t)o);
    }
    d[0] = a, d[1] = b, d[2] = e, d[3] = o;
}
#define tfl_dsp_dwp_put(v0, v1, d) tfl_dsp_dwp_put2(v0, v1, d, 0)

/* The ring's row loops' column pair [a, b] (the two columns' words, as operand names) into its 4 words at d + off:
 * tfl_dsp_dwp_put2's 6 instructions, widened into ea, eb (either may be a or b) and the temporaries t0, t1, then 4
 * stores */
#define TFL_DWP_PAIR(a, b, ea, eb, off)                                                                   \
    "pkhbt %[t0], %[" a "], %[" b "], lsl #16\n\t"                                                      \
    "pkhtb %[t1], %[" b "], %[" a "], asr #16\n\t"                                                      \
    "sxtb16 %[" ea "], %[t0]\n\t"                                                                       \
    "sxtb16 %[t0], %[t0], ror #8\n\t"                                                                   \
    "sxtb16 %[" eb "], %[t1]\n\t"                                                                       \
    "sxtb16 %[t1], %[t1], ror #8\n\t"                                                                   \
    "str %[" ea "], [%[d], #" #off "]\n\t"                                                              \
    "str %[t0], [%[d], #(" #off " + 4)]\n\t"                                                            \
    "str %[" eb "], [%[d], #(" #off " + 8)]\n\t"                                                        \
    "str %[t1], [%[d], #(" #off " + 12)]\n\t"

/* np pairs of x_zero's words z (a row in the padding) into the ring from d: in assembly 4 stores, the step and the
 * count a pair (9 cycles; gcc's loop reloaded z from the stack a pair, 29) */
static inline __attribute__((always_inline)) void tfl_dsp_dwp_zero(uint32_t *d, int32_t np, const uint32_t *z) {
#if AOTC_DSP_ASM
    __asm__ volatile("1:\n\t"
                     "str %[a], [%[d]]\n\t"
                     "str %[b], [%[d], #4]\n\t"
                     "str %[e], [%[d], #8]\n\t"
                     "str %[f], [%[d], #12]\n\t"
                     "adds %[d], %[d], #48\n\t"
                     "subs %[n], %[n], #1\n\t"
                     "bgt 1b\n\t"
                     : [d] "+r"(d), [n] "+r"(np)
                     : [a] "r"(z[0]), [b] "r"(z[1]), [e] "r"(z[2]), [f] "r"(z[3])
                     : "cc", "memory");
#else
    for (; np > 0; --np, d += 12) d[0] = z[0], d[1] = z[1], d[2] = z[2], d[3] = z[3];
#endif
}

/* Input row iy (xb: the image's first position, channel ch) into its slot of the ring, np column pairs: the pairs
 * inside the row in assembly, two a turn (4 loads, 12 instructions and 8 stores: about 31 cycles, where a pair a
 * turn took 21), the others from zb where outside */
__attribute__((noinline)) static void tfl_dsp_dwp_row_in(const aotc_tfl_conv_params *p, const int8_t *xb, int32_t iy, uint32_t zb, int32_t np,
                               uint32_t *d) { /* d: the ring at the row's slot (iy mod 3) */
    const int32_t c = p->c, pl = p->pad_left, wd = p->w;
    int32_t i = 0;
    if (iy < 0 || iy >= p->h) { /* a row of x_zero: one pair's words, stored np times */
        uint32_t z[4];
        tfl_dsp_dwp_put(zb, zb, z);
        tfl_dsp_dwp_zero(d, np, z);
        return;
    }
    const int8_t *s = xb + ((int64_t)iy * wd - pl) * c;
    for (; i < np && 2 * i - pl < 0; ++i, d += 12, s += 2 * c) { /* left of the row: its first column x_zero */
        const int32_t x1 = 2 * i - pl + 1;
        tfl_dsp_dwp_put(zb, x1 >= 0 && x1 < wd ? aotc_dsp_load32(s + c) : zb, d);
    }
    int32_t m = (wd + pl) / 2 - i; /* the pairs wholly inside: 2 i' - pl + 1 < wd */
    if (m > np - i) m = np - i;
    if (m > 0) { /* tfl_dsp_dwp_put2's 6 instructions a pair; m odd: a pair first by itself */
        const int32_t c3 = 3 * c;
        uint32_t v0, v1, v2, v3, t0, t1;
        i += m;
        __asm__ volatile("lsrs %[m], %[m], #1\n\t"
                         "bcc 2f\n\t"
                         "ldr %[v0], [%[s]]\n\t"
                         "ldr %[v1], [%[s], %[c]]\n\t"
                         "add %[s], %[s], %[c], lsl #1\n\t"
                         TFL_DWP_PAIR("v0", "v1", "v0", "v1", 0)
                         "add %[d], %[d], #48\n\t"
                         "cmp %[m], #0\n\t"
                         "beq 3f\n"
                         "2:\n\t"
                         "ldr %[v0], [%[s]]\n\t"
                         "ldr %[v1], [%[s], %[c]]\n\t"
                         "ldr %[v2], [%[s], %[c], lsl #1]\n\t"
                         "ldr %[v3], [%[s], %[c3]]\n\t"
                         "add %[s], %[s], %[c], lsl #2\n\t"
                         TFL_DWP_PAIR("v0", "v1", "v0", "v1", 0)
                         TFL_DWP_PAIR("v2", "v3", "v2", "v3", 48)
                         "add %[d], %[d], #96\n\t"
                         "subs %[m], %[m], #1\n\t"
                         "bne 2b\n"
                         "3:\n\t"
                         : [s] "+r"(s), [d] "+r"(d), [m] "+r"(m), [v0] "=&r"(v0), [v1] "=&r"(v1), [v2] "=&r"(v2),
                           [v3] "=&r"(v3), [t0] "=&r"(t0), [t1] "=&r"(t1)
                         : [c] "r"(c), [c3] "r"(c3)
                         : "cc", "memory");
    }
    /* the rest reach past the row (2 i - pl + 1 >= wd, as m's pairs end there or before np), from 2 i - pl >= 0: its
     * second column x_zero, its first where past the row */
    for (; i < np; ++i, d += 12, s += 2 * c) tfl_dsp_dwp_put(2 * i - pl < wd ? aotc_dsp_load32(s) : zb, zb, d);
}

/* tfl_dsp_dwp_row_in where the row is padded by one column a side (SAME at stride 1: ow == w, pad_left 1), inlined in
 * the rows' loop (no call, no bounds a pair): pair i is [x(2i - 1), x(2i)], so the row's words are loaded once each in
 * order, a pair's second with its first's successor carried to the next (v0, x_zero's first): k = w / 2 pairs (w >= 2)
 * in assembly, one then two a turn (4 loads, 12 instructions and 8 stores, about 31 cycles), then [x(w - 1), x_zero]
 * where w is even, [x(w - 2), x(w - 1)] and one pair of x_zero where odd. s: the row's first word. */
static inline __attribute__((always_inline)) void tfl_dsp_dwp_row_p1(const int8_t *s, int32_t c, int32_t wd, uint32_t zb,
                                                                     uint32_t *d) {
    int32_t k = wd / 2;
    uint32_t v0 = zb;
    const int32_t c3 = 3 * c;
    uint32_t v1, v2, v3, t0, t1;
    __asm__ volatile("lsrs %[k], %[k], #1\n\t"
                     "bcc 2f\n\t"
                     "ldr %[v1], [%[s]]\n\t"
                     "ldr %[v2], [%[s], %[c]]\n\t"
                     "add %[s], %[s], %[c], lsl #1\n\t"
                     TFL_DWP_PAIR("v0", "v1", "v1", "v3", 0)
                     "mov %[v0], %[v2]\n\t"
                     "add %[d], %[d], #48\n\t"
                     "cmp %[k], #0\n\t"
                     "beq 3f\n"
                     "2:\n\t"
                     "ldr %[v1], [%[s]]\n\t"
                     "ldr %[v2], [%[s], %[c]]\n\t"
                     "ldr %[v3], [%[s], %[c], lsl #1]\n\t"
                     TFL_DWP_PAIR("v0", "v1", "v1", "v0", 0) /* the carry consumed: its successor next */
                     "ldr %[v0], [%[s], %[c3]]\n\t"
                     "add %[s], %[s], %[c], lsl #2\n\t"
                     TFL_DWP_PAIR("v2", "v3", "v2", "v3", 48)
                     "add %[d], %[d], #96\n\t"
                     "subs %[k], %[k], #1\n\t"
                     "bne 2b\n"
                     "3:\n\t"
                     : [s] "+r"(s), [d] "+r"(d), [k] "+r"(k), [v0] "+r"(v0), [v1] "=&r"(v1), [v2] "=&r"(v2),
                       [v3] "=&r"(v3), [t0] "=&r"(t0), [t1] "=&r"(t1)
                     : [c] "r"(c), [c3] "r"(c3)
                     : "cc", "memory");
    if (wd & 1) {
        tfl_dsp_dwp_put(v0, aotc_dsp_load32(s), d);
        tfl_dsp_dwp_put(zb, zb, d + 12);
    } else {
        tfl_dsp_dwp_put(v0, zb, d);
    }
}

#undef TFL_DWP_PAIR

/* The fused path's rows by the ring but tfl_dsp_dwp6_same_floor's (tfl_dsp_dwp_same): the weights of its 3 turns, each input
 * row arranged once (at row stride 2, two a row of outputs) */
__attribute__((noinline)) static void tfl_dsp_dwp_rows(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                                       int32_t ch, const uint32_t *rq, const int32_t *base, int8_t *y,
                                                       uint32_t zb, uint32_t *ring) {
    const int32_t oc = p->oc, np = TFL_DSP_DWP_PAIRS(p), pt = p->pad_top;
    uint32_t wp[3][40]; /* turn: the block of TFL_DWP6_ROW_ASM and TFL_DWP2_ROW_ASM */
    int32_t r, t, j, b, oy;
    /* kernel row r's words (its 3 taps' words of the 4 channels, paired as a column pair's) stored as made at slot
     * (r + t) mod 3 of each turn t, then the requantisation's terms and the sums' start, each word made or loaded
     * once for its 3 turns (the blocks copied from one set of rows took a load and a store a word, gcc's spills around
     * them more). The loops unrolled at every level (constant slots and offsets: -O2 and -Os took the slots' modulo a
     * word) */
#pragma GCC unroll 3
    for (r = 0; r < 3; ++r) {
        const int8_t *wt = w + (ptrdiff_t)3 * r * oc + ch;
        const uint32_t w0 = aotc_dsp_load32(wt), w1 = aotc_dsp_load32(wt + oc), w2 = aotc_dsp_load32(wt + 2 * oc);
        uint32_t k[8];
        tfl_dsp_dwp_put2(w0, w1, k, 1);
        tfl_dsp_dwp_put2(w1, w2, k + 4, 1);
#pragma GCC unroll 3
        for (t = 0; t < 3; ++t) {
            const int32_t s = r + t < 3 ? r + t : r + t - 3;
#pragma GCC unroll 8
            for (j = 0; j < 8; ++j) wp[t][8 * s + j] = k[j];
        }
    }
    /* the terms by kind (rq: by channel), then the sums' start */
#pragma GCC unroll 16
    for (j = 0; j < 16; ++j) {
        const uint32_t v = j < 12 ? rq[3 * (j & 3) + (j >> 2)] : (uint32_t)base[j - 12];
        wp[0][24 + j] = v, wp[1][24 + j] = v, wp[2][24 + j] = v;
    }
    /* the row kernels by the zero point, chosen once; the slots of the rows tracked, not taken mod 3 a row */
    typedef void (*tfl_dsp_dwp_fn)(const uint32_t *, int32_t, const uint32_t *, const int32_t *, int8_t *, int32_t);
    const int floor = TFL_DSP_DW_FLOOR(p);
    const tfl_dsp_dwp_fn row6 = floor ? tfl_dsp_dwp6_row_floor : tfl_dsp_dwp6_row_sign;
    /* the rest: 3 by TFL_DWP3_ROW_ASM, else 2 at a time */
    const tfl_dsp_dwp_fn row2 = floor ? tfl_dsp_dwp2_row_floor : tfl_dsp_dwp2_row_sign;
    const tfl_dsp_dwp_fn row3 = floor ? tfl_dsp_dwp3_row_floor : tfl_dsp_dwp3_row_sign;
    const int32_t oh = p->oh, ow = p->ow, sh = p->sh, slot0 = (3 - pt % 3) % 3; /* -pt's slot */
    const int32_t q = ow / 6, rest = ow - 6 * q;
    const tfl_dsp_dwp_fn rowr = rest == 3 ? row3 : row2;
    const ptrdiff_t ystep = (ptrdiff_t)ow * oc;
    /* SAME at stride 1 (one column of padding a side, np pairs: (w + 1) / 2 + 1): tfl_dsp_dwp_row_p1 */
    const int32_t h = p->h, wd = p->w, c = p->c, same = p->pad_left == 1 && ow == wd && wd >= 2;
    const ptrdiff_t row = (ptrdiff_t)wd * c;
    uint32_t z[4];
    tfl_dsp_dwp_put(zb, zb, z);
    if (same && pt == 1 && sh == 1 && oh == h) {
        /* SAME at stride 1 (every stride-1 layer of a MobileNet): row iy in slot iy mod 3 (row -1 in 2), output row
         * iy - 1 made once row iy is in, on turn (iy + 1) mod 3 (its first row's slot); row h of x_zero. The general
         * loop below tracks the next row to arrange and the first row's slot a row of outputs (gcc kept them and the
         * calls' arguments on the stack) */
        /* twice: rows a multiple of 6 wide (even, no rest: gcc drops those branches), and the others */
#define TFL_DWP_SAME_ROWS(WD, REST)                                                                         \
    for (b = 0; b < p->n; ++b) {                                                                          \
        const int8_t *s = x + (int64_t)b * h * row + ch;                                                  \
        int8_t *yr = y + (int64_t)b * oh * ow * oc + ch;                                                  \
        int32_t iy, sl = 0;                                                                               \
        uint32_t *d;                                                                                      \
        tfl_dsp_dwp_zero(ring + 8, np, z);                                                                \
        for (iy = 0; iy <= h; ++iy, s += row) {                                                           \
            d = ring + 4 * sl;                                                                            \
            if (iy < h) {                                                                                 \
                tfl_dsp_dwp_row_p1(s, c, WD, zb, d);                                                      \
            } else {                                                                                      \
                tfl_dsp_dwp_zero(d, np, z);                                                               \
            }                                                                                             \
            sl = sl == 2 ? 0 : sl + 1;                                                                    \
            if (iy > 0) {                                                                                 \
                const uint32_t *k = wp[sl];                                                               \
                if ((REST) == 0 || q > 0) row6(ring, q, k, NULL, yr, oc);                                 \
                if ((REST) > 0) rowr(ring + 36 * q, REST, k, (const int32_t *)k + 36, yr + 6 * q * oc, oc); \
                yr += ystep;                                                                              \
            }                                                                                             \
        }                                                                                                 \
    }
        if (rest == 0) {
            TFL_DWP_SAME_ROWS(wd & ~1, 0)
        } else {
            TFL_DWP_SAME_ROWS(wd, rest)
        }
#undef TFL_DWP_SAME_ROWS
        return;
    }
    for (b = 0; b < p->n; ++b) {
        const int8_t *xb = x + (int64_t)b * p->h * p->w * p->c + ch;
        int8_t *yr = y + (int64_t)b * oh * ow * oc + ch;
        int32_t iy = -pt, iys = slot0; /* the next input row to arrange, its slot */
        int32_t iy0 = -pt, s0 = slot0; /* the output row's first input row, its slot (its turn) */
        for (oy = 0; oy < oh; ++oy, yr += ystep) {
            /* rows iy0 .. iy0 + 2: the ones not yet in the ring */
            if (iy < iy0) iy = iy0, iys = s0;
            for (; iy <= iy0 + 2; ++iy, iys = iys == 2 ? 0 : iys + 1) {
                uint32_t *d = ring + 4 * iys;
                if (!same) {
                    tfl_dsp_dwp_row_in(p, xb, iy, zb, np, d);
                } else if (iy < 0 || iy >= h) { /* a row of x_zero: one pair's words, np times */
                    tfl_dsp_dwp_zero(d, np, z);
                } else {
                    tfl_dsp_dwp_row_p1(xb + (ptrdiff_t)iy * row, c, wd, zb, d);
                }
            }
            /* 6 positions a turn, then the rest (ow mod 6) two at a time from pair 3 q */
            if (q > 0) row6(ring, q, wp[s0], NULL, yr, oc);
            if (rest > 0) rowr(ring + 36 * q, rest, wp[s0], (const int32_t *)wp[s0] + 36, yr + 6 * q * oc, oc);
            iy0 += sh;
            for (s0 += sh; s0 >= 3;) s0 -= 3;
        }
    }
}

/* The fused path's rows by the ring: SAME with rows a multiple of 6 wide or 3 wide, the group in one function, its
 * set-up with it (tfl_dsp_dwp6_same_floor, tfl_dsp_dwp3_same_floor); the others by tfl_dsp_dwp_rows. The test, the
 * function and its arguments once a layer in the dispatcher (tfl_dsp_dwp_same), a group setting s, w and y: where
 * tfl_dsp_dwp, a call a group, tested and built the 14 words each time (VWW -O3: 35,558 est. cycles, 142 a call).
 * With the ring's groups' weight sums by SXTAB16 (tfl_dsp_dwp_wsum) and tfl_dsp_dw_usual without a branch a
 * channel, VWW -O3 tflite-ww: tfl_depthwise_s8_dsp 178,751 + tfl_dsp_dwp 35,558 -> 153,255 est. cycles. */
static inline int tfl_dsp_dwp_same(const aotc_tfl_conv_params *p) {
    return p->pad_left == 1 && p->ow == p->w && p->pad_top == 1 && p->sh == 1 && p->oh == p->h &&
           (p->ow % 6 == 0 || p->ow == 3);
}

/* The 4 channels' sums of the 9 taps' weights as halfwords, [c0, c2] in *se and [c1, c3] in *so (not doubled):
 * the ring's groups, whose kernels widen the weights themselves (TFL_DWPS_SETUP), need only these for the base,
 * not the dispatcher's widened copy: SXTAB16 a half a tap (4 instructions a tap, not 9 with the stores). In
 * assembly with its own pointer: in C gcc kept the 9 taps' addresses on the stack (shared with the widening loop's,
 * a load each): VWW -O3 tfl_depthwise_s8_dsp 153,255 -> 145,558 est. cycles. */
/* a tap of tfl_dsp_dwp_wsum: its word of 4 channels, the pointer on by oc, each half summed */
#define TFL_DWP_WSUM_TAP                                                                                  \
    "ldr %[v], [%[w]]\n\t"                                                                              \
    "add %[w], %[w], %[oc]\n\t"                                                                         \
    "sxtab16 %[e], %[e], %[v]\n\t"                                                                      \
    "sxtab16 %[o], %[o], %[v], ror #8\n\t"
static inline __attribute__((always_inline)) void tfl_dsp_dwp_wsum(const int8_t *wt, int32_t oc, uint32_t *se,
                                                                    uint32_t *so) {
    uint32_t e = 0, o = 0, v;
    __asm__(TFL_DWP_WSUM_TAP TFL_DWP_WSUM_TAP TFL_DWP_WSUM_TAP TFL_DWP_WSUM_TAP TFL_DWP_WSUM_TAP TFL_DWP_WSUM_TAP
                TFL_DWP_WSUM_TAP TFL_DWP_WSUM_TAP TFL_DWP_WSUM_TAP
            : [e] "+r"(e), [o] "+r"(o), [v] "=&r"(v), [w] "+r"(wt)
            : [oc] "r"(oc)
            : "memory");
    *se = e, *so = o;
}
#endif

#if TFL_DW_PAIR_ASM
/* The fused 3 x 3 rows at column stride 2 read from x itself, no band: the bands of words (tfl_dsp_dw_band) copied
 * each output row's 3 input rows (10 cycles a column, 3 of each 4 input rows twice) for tfl_dsp_dw3x3_band_rq's
 * immediate offsets; here a position's columns are c bytes apart in its input row ([s], [s, c], [s, c, lsl #1],
 * [s, c, lsl #2], the fourth by an ADD), the rows row bytes apart (an ADD between kernel rows), c kept in r2 by
 * taking the weights and terms from the stack (copied there once a call) instead of a pointer. The turn is
 * TFL_DW_ROW2S2's (two positions A, B, the column both read widened once; 51 cycles a kernel row), then
 * TFL_DW_RQ2 / TFL_DW_RQ2F and each position's 4 outputs packed into a word: about 240 cycles a turn. Measured on
 * VWW -O3 tflite-ww (its 4 stride-2 layers, 48 x 48 x 16 .. 6 x 6 x 128, SAME: every row's windows by pairs and the
 * edge pair, the last row by two kernel rows): the bands' kernel tfl_dsp_dw3x3_band_rq 527,904 est. cycles and their
 * copies tfl_dsp_dw_band_cols 80,600 (and the dispatcher's inlined band loops) became tfl_dsp_dws2_floor 555,696, the
 * dispatcher 238,168 -> 178,751: 11.641 -> 11.529 M in all (the 6 x 6 layer's third position by itself, where its
 * pair ends at the second, took 6 K more: tfl_dsp_dws2_one and its band). (Counted, not written: the column pairs P_i = [x(2i), x(2i+1)] arranged in
 * registers, SMLAD(P_i, w01) + SMLABB(P_i+1, w2): at stride 2 a pair serves one position's SMLAD and the previous
 * one's SMLABB only, so a kernel row of two positions takes 5 loads, 18 ALU (the pairs' SXTB16 and PKH), 16
 * multiplies and 12 weight words, 51 cycles as the widened columns' 5 loads, 10 SXTB16, 24 multiplies and 6 weight
 * words: the multiplies saved go to arranging. Two output rows at once, sharing the row between them, read 15
 * columns a turn as two positions of a row do.) The turn's bookkeeping, VWW -O3 tflite-ww tfl_dsp_dws2_floor 555,696
 * -> 527,320 est. cycles (about 13 a turn): base twice at the frame's bottom (LDM sp, for ADD, LDM and 4 MOV), the
 * third kernel row's test in the second row advance (row2 -1 carries: ADDS, BCS for LDR, ADD, LDR, CMP, BNE), the
 * fourth column's ADD away from its load (its address stalled a cycle, 3 a turn), s kept in r0 from turn to turn and
 * the pairs counted by s against the row's end (no counter's LDR and STR), y's, oc's and the next s's loads in one
 * run; the row's loop with fewer reloads (c in r2 once a call), the edge and back in one argument. */
#define TFL_DWS2_W(t) "ldr r12, [sp, #(32 + 8 * (" #t "))]\n\tldr lr, [sp, #(36 + 8 * (" #t "))]\n\t"
#define TFL_DWS2_X(addr) "ldr r1, " addr "\n\tsxtb16 r3, r1\n\tsxtb16 r1, r1, ror #8\n\t"
#define TFL_DWS2_MUL(x0, x1, x2, x3)                                                                        \
    "smlabb " x0 ", r3, r12, " x0 "\n\t"                                                                \
    "smlatt " x2 ", r3, r12, " x2 "\n\t"                                                                \
    "smlabb " x1 ", r1, lr, " x1 "\n\t"                                                                 \
    "smlatt " x3 ", r1, lr, " x3 "\n\t"
#define TFL_DWS2_A TFL_DWS2_MUL("r4", "r5", "r6", "r7")
#define TFL_DWS2_B TFL_DWS2_MUL("r8", "r9", "r10", "r11")
/* kernel row ky from r0 (the row's column of A); X4: B's last column (x's, or x_zero's word where padding). The
 * fourth column's address (r0 + 3 c) by an ADD between A's multiplies of the second column, once r3 is free: just
 * before its load it stalled the address phase a cycle (3 a turn) */
#if AOTC_DSP_M33
/* The M33's order of a kernel row (the same instructions, T too: on the M33 a load's result is a cycle late for the
 * next instruction, 5 a row and the rows' steps 2 a turn on its model): each column's load two instructions or more
 * before its SXTB16s (a weight load between, or the multiplies of r1 first, the load of the next column between
 * them and those of r3: TFL_DWS2_AX), the fourth column's address in r1, and T (the next row's step into r1) inside
 * B's multiplies (TFL_DWS2_BT). tfl_dsp_dws2_floor on VWW -O3, its model: 508,864 -> 478,784 est. cycles. The fourth
 * column's load then A's last multiply of the third (SMLATT r6 reads r3 before its SXTB16 writes it), not the load
 * right before its SXTB16 (a load-use stall a kernel row): 478,784 -> 472,368. */
#define TFL_DWS2_WX(t, addr)                                                                              \
    "ldr r12, [sp, #(32 + 8 * (" #t "))]\n\tldr r1, " addr "\n\tldr lr, [sp, #(36 + 8 * (" #t "))]\n\t"       \
    "sxtb16 r3, r1\n\tsxtb16 r1, r1, ror #8\n\t"
#define TFL_DWS2_AXS(addr, a4, a5, a6, a7) /* A's sums r4 .. r7 from a4 .. a7 */                             \
    "smlabb r5, r1, lr, " a5 "\n\t"                                                                       \
    "smlatt r7, r1, lr, " a7 "\n\t"                                                                       \
    "ldr r1, " addr "\n\t"                                                                               \
    "smlabb r4, r3, r12, " a4 "\n\t"                                                                      \
    "smlatt r6, r3, r12, " a6 "\n\t"                                                                      \
    "sxtb16 r3, r1\n\tsxtb16 r1, r1, ror #8\n\t"
#define TFL_DWS2_AX(addr) TFL_DWS2_AXS(addr, "r4", "r5", "r6", "r7")
#define TFL_DWS2_BT(T)                                                                                    \
    "smlabb r9, r1, lr, r9\n\t"                                                                           \
    "smlatt r11, r1, lr, r11\n\t" T                                                                       \
    "smlabb r8, r3, r12, r8\n\t"                                                                          \
    "smlatt r10, r3, r12, r10\n\t"
#define TFL_DWS2_ROW_AT(ky, X4, T, AX1) /* AX1: the first column's multiplies of A */                      \
    TFL_DWS2_WX(3 * ky, "[r0]") AX1 TFL_DWS2_B                                                               \
    "ldr lr, [sp, #(36 + 8 * (3 * " #ky " + 2))]\n\tldr r12, [sp, #(32 + 8 * (3 * " #ky " + 2))]\n\t"       \
    TFL_DWS2_AX(X4) TFL_DWS2_B TFL_DWS2_WX(3 * ky + 1, "[r0, r2]")                                           \
    "smlabb r5, r1, lr, r5\n\t"                                                                           \
    "smlatt r7, r1, lr, r7\n\t"                                                                           \
    "add r1, r0, r2, lsl #1\n\t"                                                                          \
    "smlabb r4, r3, r12, r4\n\t"                                                                          \
    "ldr r1, [r1, r2]\n\t"                                                                               \
    "smlatt r6, r3, r12, r6\n\t"                                                                          \
    "sxtb16 r3, r1\n\tsxtb16 r1, r1, ror #8\n\t" TFL_DWS2_BT(T)
#define TFL_DWS2_ROW(ky, X4, T) TFL_DWS2_ROW_AT(ky, X4, T, TFL_DWS2_AX("[r0, r2, lsl #1]"))
/* The turn's sums from the base once, not twice (an LDM of 8 words, 9 cycles): B's 4 by single loads (4 cycles), A's
 * first multiplies taking them as their accumulators (SMLABB's accumulator need not be its destination) before B's
 * own add to them. VWW an505 -O3 tfl_dsp_dws2_floor 472,368 -> 461,328 est. cycles. */
#define TFL_DWS2_ROW0(X4, T) TFL_DWS2_ROW_AT(0, X4, T, TFL_DWS2_AXS("[r0, r2, lsl #1]", "r8", "r9", "r10", "r11"))
#define TFL_DWS2_BASE "ldr r8, [sp]\n\tldr r9, [sp, #4]\n\tldr r10, [sp, #8]\n\tldr r11, [sp, #12]\n\t"
#else
/* (T: an instruction after the row, a load into r1: the M33's order takes it inside the row) */
#define TFL_DWS2_ROW(ky, X4, T)                                                                           \
    TFL_DWS2_W(3 * ky) TFL_DWS2_X("[r0]") TFL_DWS2_A TFL_DWS2_X("[r0, r2, lsl #1]") TFL_DWS2_B                \
    TFL_DWS2_W(3 * ky + 2) TFL_DWS2_A TFL_DWS2_X(X4) TFL_DWS2_B                                              \
    TFL_DWS2_W(3 * ky + 1) TFL_DWS2_X("[r0, r2]")                                                            \
    "smlabb r4, r3, r12, r4\n\t"                                                                          \
    "smlatt r6, r3, r12, r6\n\t"                                                                          \
    "add r3, r0, r2, lsl #1\n\t"                                                                          \
    "smlabb r5, r1, lr, r5\n\t"                                                                           \
    "smlatt r7, r1, lr, r7\n\t"                                                                           \
    TFL_DWS2_X("[r3, r2]") TFL_DWS2_B T
/* the first row's first multiplies of A from B's sums, the base (the M33's TFL_DWS2_ROW0, TFL_DWS2_BASE; on the M4 4
 * loads pipelined, 5 cycles, not the LDM's 9): VWW -O3 an386 11,126,338 -> 11,115,145 est. cycles, an500 6,549,046 ->
 * 6,544,345 */
#define TFL_DWS2_ROW0(X4, T)                                                                              \
    TFL_DWS2_W(0) TFL_DWS2_X("[r0]")                                                                      \
    "smlabb r4, r3, r12, r8\n\t"                                                                          \
    "smlatt r6, r3, r12, r10\n\t"                                                                         \
    "smlabb r5, r1, lr, r9\n\t"                                                                           \
    "smlatt r7, r1, lr, r11\n\t" TFL_DWS2_X("[r0, r2, lsl #1]") TFL_DWS2_B                                  \
    TFL_DWS2_W(2) TFL_DWS2_A TFL_DWS2_X(X4) TFL_DWS2_B                                                     \
    TFL_DWS2_W(1) TFL_DWS2_X("[r0, r2]")                                                                   \
    "smlabb r4, r3, r12, r4\n\t"                                                                          \
    "smlatt r6, r3, r12, r6\n\t"                                                                          \
    "add r3, r0, r2, lsl #1\n\t"                                                                          \
    "smlabb r5, r1, lr, r5\n\t"                                                                           \
    "smlatt r7, r1, lr, r7\n\t"                                                                           \
    TFL_DWS2_X("[r3, r2]") TFL_DWS2_B T
#define TFL_DWS2_BASE "ldr r8, [sp]\n\tldr r9, [sp, #4]\n\tldr r10, [sp, #8]\n\tldr r11, [sp, #12]\n\t"
#endif
#define TFL_DWS2_RQS(a) /* TFL_DW_RQ2's, mult r12, ra lr, right r3, r1 a temporary */                       \
    "smmlar r1, " a ", r12, lr\n\t"                                                                     \
    "add " a ", r1, " a ", asr #31\n\t"                                                                 \
    "asr " a ", " a ", r3\n\t"                                                                          \
    "ssat " a ", #8, " a "\n\t"
#define TFL_DWS2_RQF(a) /* TFL_DW_RQ2F's */                                                               \
    "smmlar " a ", " a ", r12, lr\n\t"                                                                  \
    "asr " a ", " a ", r3\n\t"                                                                          \
    "ssat " a ", #8, " a "\n\t"
#define TFL_DWS2_RQ(R, j, a, b)                                                                           \
    "ldr r12, [sp, #(104 + 12 * " #j ")]\n\t"                                                           \
    "ldr lr, [sp, #(108 + 12 * " #j ")]\n\t"                                                            \
    "ldr r3, [sp, #(112 + 12 * " #j ")]\n\t" R(a) R(b)
/* the 8 sums' requantisation with the sign term: 4 runs of the 3 terms (mult r12, ra lr, right r3, r1 a temporary) */
#define TFL_DWS2_RQS8                                                                                     \
    TFL_DWS2_RQ(TFL_DWS2_RQS, 0, "r4", "r8") TFL_DWS2_RQ(TFL_DWS2_RQS, 1, "r5", "r9")                     \
        TFL_DWS2_RQ(TFL_DWS2_RQS, 2, "r6", "r10") TFL_DWS2_RQ(TFL_DWS2_RQS, 3, "r7", "r11")
/* floor's, no temporary: two channels' 6 terms a run (r12, lr, r3 and r0, r1, r2; c again in r2 after), 2 runs of 7
 * cycles for 4 of 4 (VWW -O3 tflite-ww tfl_dsp_dws2_floor 527,320 -> 525,112 est. cycles) */
#define TFL_DWS2_RQF2(a, b, m, r, sh)                                                                     \
    "smmlar " a ", " a ", " m ", " r "\n\t"                                                               \
    "smmlar " b ", " b ", " m ", " r "\n\t"                                                               \
    "asr " a ", " a ", " sh "\n\t"                                                                        \
    "asr " b ", " b ", " sh "\n\t"                                                                        \
    "ssat " a ", #8, " a "\n\t"                                                                           \
    "ssat " b ", #8, " b "\n\t"
#define TFL_DWS2_RQF8_RUN(j)                                                                              \
    "ldr r12, [sp, #(104 + 24 * " #j ")]\n\t"                                                             \
    "ldr lr, [sp, #(108 + 24 * " #j ")]\n\t"                                                              \
    "ldr r3, [sp, #(112 + 24 * " #j ")]\n\t"                                                              \
    "ldr r0, [sp, #(116 + 24 * " #j ")]\n\t"                                                              \
    "ldr r1, [sp, #(120 + 24 * " #j ")]\n\t"                                                              \
    "ldr r2, [sp, #(124 + 24 * " #j ")]\n\t"
#define TFL_DWS2_RQF8                                                                                     \
    TFL_DWS2_RQF8_RUN(0) TFL_DWS2_RQF2("r4", "r8", "r12", "lr", "r3") TFL_DWS2_RQF2("r5", "r9", "r0", "r1", "r2") \
        TFL_DWS2_RQF8_RUN(1) TFL_DWS2_RQF2("r6", "r10", "r12", "lr", "r3") TFL_DWS2_RQF2("r7", "r11", "r0", "r1", "r2")
/* a turn from r0 (its s, also at #152): the sums from base (twice at the frame's bottom: one LDM), the 3 kernel rows
 * (the third skipped where the frame's row2 is -1: adding it to r0 carries, a row's never does), the
 * requantisation, A's word to y and B's to y + oc, y on by 2 oc; then r0 = s + 4 c (also at #152, the next pair's)
 * and r12 = the row's end of pairs (#156) for the loop's test */
#define TFL_DWS2_TURN(R8, E, X4) /* R8: the 8 sums' requantisation, E: a load after it (floor's c) */     \
    TFL_DWS2_BASE TFL_DWS2_ROW0(X4, "ldr r1, [sp, #220]\n\t")                                               \
    "add r0, r0, r1\n\t" TFL_DWS2_ROW(1, X4, "ldr r1, [sp, #244]\n\t")                                     \
    "adds r0, r0, r1\n\t"                                                                                 \
    "bcs 5f\n\t" TFL_DWS2_ROW(2, X4, "") "5:\n\t" R8                                                      \
    "bfi r4, r5, #8, #8\n\t"                                                                              \
    "bfi r4, r6, #16, #8\n\t"                                                                             \
    "bfi r4, r7, #24, #8\n\t"                                                                             \
    "bfi r8, r9, #8, #8\n\t"                                                                              \
    "bfi r8, r10, #16, #8\n\t"                                                                            \
    "bfi r8, r11, #24, #8\n\t"                                                                            \
    "ldr r3, [sp, #160]\n\t"                                                                              \
    "ldr r1, [sp, #212]\n\t"                                                                              \
    "ldr r0, [sp, #152]\n\t"                                                                              \
    "ldr r12, [sp, #156]\n\t" E                                                                           \
    "str r8, [r3, r1]\n\t"                                                                                \
    "str r4, [r3]\n\t"                                                                                    \
    "add r3, r3, r1, lsl #1\n\t"                                                                          \
    "str r3, [sp, #160]\n\t"                                                                              \
    "add r0, r0, r2, lsl #2\n\t"                                                                          \
    "str r0, [sp, #152]\n\t"
/* rows output rows of m pairs of positions (and an edge pair where edge: B's last column the padding's first) from
 * s (the first row's first position's window's first byte; rows xstep bytes apart, outputs ystep), in assembly
 * naked. Frame: [sp .. #32) base twice, [#32 .. #104) wq's 18 weight words, [#104 .. #152) its 12 terms, #152 the
 * turn's s, #156 the row's end of pairs (its s + m 4 c), #160 the turn's y, #164 the row's s, #168 m 4 c; the
 * arguments past r3 from #208: y (the row's), oc, c, row, rows, xstep, ystep, edge (0 none, 1 after the pairs, 2
 * one position back), zb, row2 (row, or -1: the third kernel row skipped). r2 = c throughout. */
#define TFL_DWS2_ASM(R8, E)                                                                               \
    "push {r4-r11, lr}\n\t"                                                                               \
    "sub sp, sp, #172\n\t"                                                                                \
    "mov r12, sp\n\t"                                                                                     \
    "ldm r3, {r4-r7}\n\t"                                                                                 \
    "stm r12!, {r4-r7}\n\t"                                                                               \
    "stm r12!, {r4-r7}\n\t"                                                                               \
    "ldm r2!, {r4-r11}\n\t"                                                                               \
    "stm r12!, {r4-r11}\n\t"                                                                              \
    "ldm r2!, {r4-r11}\n\t"                                                                               \
    "stm r12!, {r4-r11}\n\t"                                                                              \
    "ldm r2!, {r4-r11}\n\t"                                                                               \
    "stm r12!, {r4-r11}\n\t"                                                                              \
    "ldm r2!, {r4-r9}\n\t"                                                                                \
    "stm r12!, {r4-r9}\n\t"                                                                               \
    "ldr r2, [sp, #216]\n\t"                                                                              \
    "lsl r1, r1, #2\n\t"                                                                                  \
    "mul r1, r1, r2\n\t"                                                                                  \
    "str r1, [sp, #168]\n\t"                                                                              \
    "ldr r3, [sp, #208]\n"                                                                                \
    "1:\n\t"                                                                                              \
    "ldr r1, [sp, #168]\n\t"                                                                              \
    "str r0, [sp, #164]\n\t"                                                                              \
    "str r0, [sp, #152]\n\t"                                                                              \
    "str r3, [sp, #160]\n\t"                                                                              \
    "add r12, r0, r1\n\t"                                                                                 \
    "str r12, [sp, #156]\n\t"                                                                             \
    "cmp r0, r12\n\t"                                                                                     \
    "beq 3f\n"                                                                                            \
    "2:\n\t" TFL_DWS2_TURN(R8, E, "[r0, r2, lsl #2]")                                                     \
    "cmp r0, r12\n\t"                                                                                     \
    "bne 2b\n"                                                                                            \
    "3:\n\t"                                                                                              \
    "ldr r1, [sp, #236]\n\t"                                                                              \
    "cmp r1, #1\n\t"                                                                                      \
    "blt 4f\n\t"                                                                                          \
    "beq 6f\n\t"                                                                                          \
    "sub r0, r0, r2, lsl #1\n\t"                                                                          \
    "str r0, [sp, #152]\n\t"                                                                              \
    "ldr r3, [sp, #160]\n\t"                                                                              \
    "ldr r1, [sp, #212]\n\t"                                                                              \
    "sub r3, r3, r1\n\t"                                                                                  \
    "str r3, [sp, #160]\n"                                                                                \
    "6:\n\t" TFL_DWS2_TURN(R8, E, "[sp, #240]")                                                           \
    "4:\n\t"                                                                                              \
    "ldr r0, [sp, #164]\n\t"                                                                              \
    "ldr r1, [sp, #228]\n\t"                                                                              \
    "ldr r3, [sp, #208]\n\t"                                                                              \
    "ldr r12, [sp, #232]\n\t"                                                                             \
    "ldr lr, [sp, #224]\n\t"                                                                              \
    "add r0, r0, r1\n\t"                                                                                  \
    "add r3, r3, r12\n\t"                                                                                 \
    "str r3, [sp, #208]\n\t"                                                                              \
    "subs lr, lr, #1\n\t"                                                                                 \
    "str lr, [sp, #224]\n\t"                                                                              \
    "bne 1b\n\t"                                                                                          \
    "add sp, sp, #172\n\t"                                                                                \
    "pop {r4-r11, pc}\n\t"
#define TFL_DWS2_ARG __attribute__((unused)) /* a naked function's arguments are its assembly's registers */
#define TFL_DWS2_FN(name, R8, E)                                                                                   \
    __attribute__((naked, noinline)) static void name(                                                             \
        TFL_DWS2_ARG const int8_t *s, TFL_DWS2_ARG int32_t m, TFL_DWS2_ARG const uint32_t *wq,                      \
        TFL_DWS2_ARG const int32_t *base, TFL_DWS2_ARG int8_t *y, TFL_DWS2_ARG int32_t oc, TFL_DWS2_ARG int32_t c, \
        TFL_DWS2_ARG int32_t row, TFL_DWS2_ARG int32_t rows, TFL_DWS2_ARG int32_t xstep,                            \
        TFL_DWS2_ARG int32_t ystep, TFL_DWS2_ARG int32_t edge, TFL_DWS2_ARG uint32_t zb,                          \
        TFL_DWS2_ARG int32_t row2) {                                                                              \
        __asm__ volatile(TFL_DWS2_ASM(R8, E));                                                            \
    }
TFL_DWS2_FN(tfl_dsp_dws2_floor, TFL_DWS2_RQF8, "ldr r2, [sp, #216]\n\t")
TFL_DWS2_FN(tfl_dsp_dws2_sign, TFL_DWS2_RQS8, "")
#undef TFL_DWS2_FN
#undef TFL_DWS2_ARG
#undef TFL_DWS2_ASM
#undef TFL_DWS2_TURN
#undef TFL_DWS2_RQ
#undef TFL_DWS2_RQS8
#undef TFL_DWS2_RQF8
#undef TFL_DWS2_RQF8_RUN
#undef TFL_DWS2_RQF2
#undef TFL_DWS2_RQF
#undef TFL_DWS2_RQS
#undef TFL_DWS2_ROW
#undef TFL_DWS2_ROW0
#undef TFL_DWS2_ROW_AT
#undef TFL_DWS2_BASE
#undef TFL_DWS2_AXS
#undef TFL_DWS2_WX
#undef TFL_DWS2_AX
#undef TFL_DWS2_BT
#undef TFL_DWS2_B
#undef TFL_DWS2_A
#undef TFL_DWS2_MUL
#undef TFL_DWS2_X
#undef TFL_DWS2_W

/* One position's window (its first input row iy0, column ix0) into a band of 3 columns (tfl_dsp_dw_band's layout:
 * band[3 kx + ky], x_zero's word in the padding), its outputs by tfl_dsp_dw3x3_band_rq */
static void tfl_dsp_dws2_one(const aotc_tfl_conv_params *p, const int8_t *xb, int32_t iy0, int32_t ix0, uint32_t zb,
                             const uint32_t *wq, const int32_t *base, int8_t *y, int floor) {
    uint32_t band[9];
    int32_t ky, kx;
    for (kx = 0; kx < 3; ++kx)
        for (ky = 0; ky < 3; ++ky) {
            const int32_t iy = iy0 + ky, ix = ix0 + kx;
            band[3 * kx + ky] = iy >= 0 && iy < p->h && ix >= 0 && ix < p->w
                                    ? aotc_dsp_load32(xb + ((ptrdiff_t)iy * p->w + ix) * p->c)
                                    : zb;
        }
    tfl_dsp_dw3x3_band_rq(band, 1, 2, wq, base, y, p->oc, floor);
}

/* tfl_dsp_dws2's facts of a layer (the same for each of its groups: worked out once, not a group, where the
 * dispatcher's loop over the groups reloaded p's fields and walked the rows for oy_hi each time) */
typedef struct {
    int32_t oy_lo, oy_hi; /* the output rows whose windows' rows are inside */
    int32_t ox_lo, m;     /* the kernel's first position, its pairs */
    int32_t ke, ecode;    /* the kernel's positions [ox_lo, ke); its edge argument: none, after the pairs, back */
    int32_t whole;        /* the inside rows by one call: y apart from x, or the kernel's positions the rows' all */
} tfl_dsp_dws2_facts;

static inline __attribute__((always_inline)) void tfl_dsp_dws2_layer(const aotc_tfl_conv_params *p, int32_t ox_lo,
                                                                      int32_t ox_hi, int apart, tfl_dsp_dws2_facts *f) {
    const int32_t oh = p->oh, ow = p->ow, sh = p->sh, pt = p->pad_top, pl = p->pad_left;
    int32_t oy_lo = (pt + sh - 1) / sh, oy_hi = 0;
    while (oy_hi < oh && oy_hi * sh - pt + 2 < p->h) ++oy_hi;
    if (oy_lo > oy_hi) oy_lo = oy_hi;
    const int32_t m = (ox_hi - ox_lo) / 2;
    /* the edge pair (ox_hi - 1, ox_hi): after the pairs, or where they end at ox_hi one position back (ox_hi - 1 again,
     * the same outputs: its window not yet overwritten, as ox_hi's is not) */
    const int back = !((ox_hi - ox_lo) & 1), edge = (!back || m > 0) && ox_hi < ow && 2 * ox_hi - pl + 2 == p->w;
    const int32_t ke = edge ? ox_hi + 1 : ox_lo + 2 * m;
    f->oy_lo = oy_lo, f->oy_hi = oy_hi, f->ox_lo = ox_lo, f->m = m, f->ke = ke, f->ecode = edge ? 1 + back : 0;
    f->whole = apart || (ox_lo == 0 && ke == ow);
}

/* The fused path at column stride 2 (4 channels, xb / yb at channel ch of the image): the output rows whose windows'
 * rows are inside by tfl_dsp_dws2_* over the positions whose windows' columns are (pairs, and an edge pair whose
 * last column is the padding's first: SAME on an even width), and so a last row whose third row is the padding's
 * first (SAME on an even height), by its first two kernel rows from base2: base plus x_zero times the third row's
 * weights, the share of the taps it skips (they read x_zero: base takes x_zero times every tap's weight off); the
 * other positions of those rows one at a time (tfl_dsp_dws2_one), the other rows by their bands. In the positions'
 * order (a RAM budget's overlap, aot/kernels/tflite_int8.py overlap_bytes): a call a row unless y is apart from x or
 * the kernel takes every position of the rows, then one call for them, the loop past them (a row's turn of the loop
 * took about 120 cycles: VWW -O3 the dispatcher 196,939 -> 178,751 est. cycles). Inlined in its two callers (the
 * dispatcher, tfl_depthwise_s8_pre), as it was in its one before: out of line it cost VWW -O3 about 4.7 K est. cycles. */
static inline __attribute__((always_inline)) void tfl_dsp_dws2(const aotc_tfl_conv_params *p,
                                                                const tfl_dsp_dws2_facts *f, const int8_t *xb,
                                                                const uint32_t *wq, const int32_t *base, int8_t *yb,
                                                                uint32_t zb, int32_t pw, uint32_t *band) {
    const int32_t oh = p->oh, ow = p->ow, oc = p->oc, c = p->c, sh = p->sh, pt = p->pad_top, pl = p->pad_left;
    const int floor = TFL_DSP_DW_FLOOR(p);
    const ptrdiff_t row = (ptrdiff_t)p->w * c;
    const int32_t oy_lo = f->oy_lo, oy_hi = f->oy_hi, ox_lo = f->ox_lo, m = f->m, ke = f->ke, ecode = f->ecode;
    const int whole = f->whole;
    int32_t oy, ox, j;
    void (*const fn)(const int8_t *, int32_t, const uint32_t *, const int32_t *, int8_t *, int32_t, int32_t, int32_t,
                     int32_t, int32_t, int32_t, int32_t, uint32_t, int32_t) =
        floor ? tfl_dsp_dws2_floor : tfl_dsp_dws2_sign;
    int32_t base2[4];
    for (j = 0; j < 4; ++j) { /* the third kernel row's 3 doubled weights of channel j, times x_zero */
        const int32_t k = j & 1, sh16 = j < 2 ? 0 : 16; /* [c0, c2] at wq[2 t], [c1, c3] at wq[2 t + 1] */
        const int32_t sum = (int16_t)(wq[12 + k] >> sh16) + (int16_t)(wq[14 + k] >> sh16) + (int16_t)(wq[16 + k] >> sh16);
        base2[j] = (int32_t)((uint32_t)base[j] + (uint32_t)(p->x_zero * sum));
    }
    for (oy = 0; oy < oh; ++oy) {
        int8_t *yr = yb + (ptrdiff_t)oy * ow * oc;
        const int32_t iy0 = oy * sh - pt;
        /* 3: the window's rows inside; 2: its third the padding's first */
        const int kind = ke == ox_lo ? 0 : oy >= oy_lo && oy < oy_hi ? 3 : oy == oy_hi && iy0 >= 0 && iy0 + 2 == p->h ? 2 : 0;
        if (!kind) {
            tfl_dsp_dw_band(p, xb, iy0, zb, pw, band);
            tfl_dsp_dw3x3_band_rq(band, ow, 2, wq, base, yr, oc, floor);
            continue;
        }
        for (ox = 0; ox < ox_lo; ++ox) tfl_dsp_dws2_one(p, xb, iy0, 2 * ox - pl, zb, wq, base, yr + ox * oc, floor);
        if (kind == 2 || !whole || oy == oy_lo)
            fn(xb + ((ptrdiff_t)iy0 * p->w + 2 * ox_lo - pl) * c, m, wq, kind == 2 ? base2 : base, yr + ox_lo * oc,
               oc, c, (int32_t)row, kind == 2 || !whole ? 1 : oy_hi - oy_lo, (int32_t)(sh * row), ow * oc,
               ecode, zb, kind == 2 ? -1 : (int32_t)row);
        if (kind == 3 && whole && ox_lo == 0 && ke == ow) { /* no single positions: past the inside rows */
            oy = oy_hi - 1;
            continue;
        }
        for (ox = ke; ox < ow; ++ox) tfl_dsp_dws2_one(p, xb, iy0, 2 * ox - pl, zb, wq, base, yr + ox * oc, floor);
    }
}
#endif

/* An image taller than wide (a KWS DS-CNN's 25 x 5) by columns instead of rows: output column ox's band is its
 * 3 input columns over the ph rows the windows span, row by row (band[3 t + k] = span row t, column ix0 + k, or
 * zb in the padding), so a window's tap (ky, kx) is band[3 (oy sh + ky) + kx]: tfl_dsp_dw3x3_band_rq's layout with
 * the roles of rows and columns swapped, which the taps' weights transposed undo (tfl_dsp_dw_columns). A band a
 * column, not a row: fewer and longer bands. */
static void tfl_dsp_dw_band_t(const aotc_tfl_conv_params *p, const int8_t *xb, int32_t ix0, uint32_t zb, int32_t ph,
                              uint32_t *AOTC_RESTRICT band) {
    const int32_t c = p->c, pt = p->pad_top;
    const ptrdiff_t row = (ptrdiff_t)p->w * c;
    const int32_t lo = pt < ph ? pt : ph, hi = pt + p->h < ph ? pt + p->h : ph;
    int32_t t;
    for (t = 0; t < lo; ++t, band += 3) band[0] = band[1] = band[2] = zb;
    if (ix0 >= 0 && ix0 + 2 < p->w) { /* the 3 columns inside: a row's 3 words c bytes apart */
        const int8_t *s = xb + (ptrdiff_t)(t - pt) * row + (ptrdiff_t)ix0 * c;
        for (; t < hi; ++t, band += 3, s += row) {
            const uint32_t v0 = aotc_dsp_load32(s), v1 = aotc_dsp_load32(s + c), v2 = aotc_dsp_load32(s + 2 * c);
            band[0] = v0, band[1] = v1, band[2] = v2;
        }
    } else { /* a column at the edge: each of its 3 words from x down the rows, or x_zero's (a word read again) */
        const uint32_t zw = zb;
        const int8_t *s0 = (const int8_t *)&zw, *s1 = s0, *s2 = s0;
        ptrdiff_t st0 = 0, st1 = 0, st2 = 0;
        const int8_t *r = xb + (ptrdiff_t)(t - pt) * row;
        if (ix0 >= 0 && ix0 < p->w) s0 = r + (ptrdiff_t)ix0 * c, st0 = row;
        if (ix0 + 1 >= 0 && ix0 + 1 < p->w) s1 = r + (ptrdiff_t)(ix0 + 1) * c, st1 = row;
        if (ix0 + 2 >= 0 && ix0 + 2 < p->w) s2 = r + (ptrdiff_t)(ix0 + 2) * c, st2 = row;
        for (; t < hi; ++t, band += 3, s0 += st0, s1 += st1, s2 += st2) {
            const uint32_t v0 = aotc_dsp_load32(s0), v1 = aotc_dsp_load32(s1), v2 = aotc_dsp_load32(s2);
            band[0] = v0, band[1] = v1, band[2] = v2;
        }
    }
    for (; t < ph; ++t, band += 3) band[0] = band[1] = band[2] = zb;
}

/* A group of 4 channels (ch) of a fused 3 x 3 layer by output columns (tfl_dsp_dw_band_t): wq's taps transposed
 * (tap (ky, kx)'s two words where (kx, ky)'s were, the requantisation's terms after them as before), then each
 * column's band and its oh windows, sh rows apart, their outputs ow oc bytes apart in y. */
static void tfl_dsp_dw_columns(const aotc_tfl_conv_params *p, const int8_t *xb, const uint32_t *wq, const int32_t *base,
                               int8_t *yb, uint32_t zb, int32_t ph, uint32_t *band) {
    uint32_t wt[2 * TFL_DSP_TAPS + 12];
    int32_t ky, kx, ox;
    for (ky = 0; ky < 3; ++ky)
        for (kx = 0; kx < 3; ++kx) wt[2 * (3 * kx + ky)] = wq[2 * (3 * ky + kx)], wt[2 * (3 * kx + ky) + 1] = wq[2 * (3 * ky + kx) + 1];
    for (kx = 0; kx < 12; ++kx) wt[18 + kx] = wq[18 + kx];
    for (ox = 0; ox < p->ow; ++ox) {
        tfl_dsp_dw_band_t(p, xb, ox * p->sw - p->pad_left, zb, ph, band);
        tfl_dsp_dw3x3_band_rq(band, p->oh, p->sh, wt, base, yb + (ptrdiff_t)ox * p->oc, p->ow * p->oc,
                              p->y_zero == -128);
    }
}

/* Channels [ch, ch + 4) (depth multiplier 1) by the plain loop: a bundle whose layers the fused 3 x 3 paths take
 * leaves the others out (AOTC_TFL_DW_PLAIN 0: aot/kernels/dsp_paths.py); a group they do not take then comes here,
 * the same results (each path is LiteRT's reference arithmetic), more instructions. */
static void tfl_dsp_dw_group_plain(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                   const int32_t *bias, int8_t *y, int32_t ch) {
    int32_t b, oy, ox, o, i, j;
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox)
                for (o = ch; o < ch + 4; ++o) {
                    int32_t acc = bias ? bias[o] : 0;
                    for (i = 0; i < p->kh; ++i) {
                        const int32_t iy = oy * p->sh - p->pad_top + i * p->dh;
                        if (iy < 0 || iy >= p->h) continue;
                        for (j = 0; j < p->kw; ++j) {
                            const int32_t ix = ox * p->sw - p->pad_left + j * p->dw;
                            if (ix < 0 || ix >= p->w) continue;
                            acc += (x[(((ptrdiff_t)b * p->h + iy) * p->w + ix) * p->c + o] - p->x_zero) *
                                   w[((ptrdiff_t)i * p->kw + j) * p->oc + o];
                        }
                    }
                    const int32_t v = requant_double(acc, p->mult[o], p->shift[o]) + p->y_zero;
                    y[(((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * p->oc + o] = clamp8(v, p->y_min, p->y_max);
                }
}

/* Whether channels [ch, ch + 4) take tfl_dsp_dw_store's SSAT form (tfl_dsp_dw_requant_ssat's conditions),
 * their terms then put at rq: mult, ra, right a channel. The layer's conditions (the clamp, the bound) first, then
 * the channels' without a branch each (right - 1 in [0, 21] unsigned, a shift > 0 or 0 out of it; the terms stored
 * anyway, ra's shift masked: rq is not read where it fails): gcc's loop of 5 tests a channel, bound's 64-bit compare
 * reloaded each time, took 133 est. cycles a group on VWW -O3 (38 K of the dispatcher's 179 K). ra as one shift of
 * 1 + 2 y_zero (where right - 1 is in [0, 21], y_zero << right is (2 y_zero) << (right - 1)), not two shifts, two
 * masks and an add: VWW an505 -O3 tflite 9,799,749 -> 9,792,136 est. cycles (out of line, not spilling the
 * dispatcher's registers, about 700 fewer there, but 1.6 K more on KWS an505 -Os). */
static int tfl_dsp_dw_usual(const aotc_tfl_conv_params *p, int32_t ch, int64_t bound,
                                                    uint32_t *rq) {
    if (p->y_min != -128 || p->y_max != 127 || bound >= ((int64_t)1 << 30)) return 0;
    const int32_t *mp = p->mult + ch, *sp = p->shift + ch;
    const uint32_t ra1 = 1u + 2u * (uint32_t)p->y_zero; /* ra = 2^(right - 1) + y_zero 2^right = ra1 << (right - 1) */
    uint32_t bad = 0;
    int32_t j;
    for (j = 0; j < 4; ++j) {
        const int32_t mult = mp[j];
        const uint32_t r1 = ~(uint32_t)sp[j]; /* right - 1, right = -shift */
        bad |= (uint32_t)(r1 > 21u) | (uint32_t)(mult == INT32_MIN);
        rq[3 * j] = (uint32_t)mult;
        rq[3 * j + 1] = ra1 << (r1 & 31u);
        rq[3 * j + 2] = r1 + 1u;
    }
    return !bad;
}

#if TFL_DW_PAIR_ASM
/* A ring group's set-up in one pass (the stride-1 fused path, its layer's own conditions checked once by the
 * caller: TFL_DSP_DW_BAND, 3 x 3, y_min -128 and y_max 127): tfl_dsp_dw_usual's terms into rq, the sums' start into
 * base (the bias doubled less 2 x_zero times the weights' sum: xzn2 = -2 x_zero), and whether the group takes the
 * path: each channel's right shift in [1, 22] (r1 = right - 1 in [0, 21] iff neither r1 nor r1 + 10 has a bit from
 * 5 up), its multiplier not negative and its bias in [-2^29, 2^29) (one SSAT; tighter than tfl_dsp_dw_usual's
 * INT32_MIN and 2^30 less the 9 taps' products: a group past them, none in practice, is set up by the dispatcher's
 * general path, which tests those), no branch. In assembly, a channel's 19 instructions: in C, inlined in the
 * dispatcher, gcc hoisted the 4 channels' loads and spilled them. Was tfl_dsp_dw_usual, the bound's pass, the layer's
 * tests and the base's loop a group (about 200 cycles on the M33's model; in C in one pass 137, here about 90).
 * bp: the group's 4 biases (tfl_dsp_dw_nobias where the layer has none). */
static const int32_t tfl_dsp_dw_nobias[4] = {0, 0, 0, 0};
/* channel j: its shift, mult and bias; rq's 3 terms; base[j] (x_zero's share, stored first) plus the bias doubled */
#define TFL_DW_RSET_CH(j)                                                                                   \
    "ldr %[r], [%[sp], #(4 * " #j ")]\n\t"                                                               \
    "ldr %[m], [%[mp], #(4 * " #j ")]\n\t"                                                               \
    "ldr %[b], [%[bp], #(4 * " #j ")]\n\t"                                                               \
    "mvn %[r], %[r]\n\t"                                                                                 \
    "str %[m], [%[rq], #(12 * " #j ")]\n\t"                                                              \
    "orr %[bad], %[bad], %[m], asr #31\n\t"                                                              \
    "ldr %[m], [%[base], #(4 * " #j ")]\n\t"                                                             \
    "add %[t], %[r], #10\n\t"                                                                            \
    "orr %[bad], %[bad], %[r]\n\t"                                                                       \
    "orr %[bad], %[bad], %[t]\n\t"                                                                       \
    "add %[m], %[m], %[b], lsl #1\n\t"                                                                   \
    "str %[m], [%[base], #(4 * " #j ")]\n\t"                                                             \
    "lsl %[t], %[ra1], %[r]\n\t"                                                                         \
    "str %[t], [%[rq], #(12 * " #j " + 4)]\n\t"                                                          \
    "add %[t], %[r], #1\n\t"                                                                             \
    "str %[t], [%[rq], #(12 * " #j " + 8)]\n\t"                                                          \
    "ssat %[t], #30, %[b]\n\t"                                                                           \
    "eor %[t], %[t], %[b]\n\t"                                                                           \
    "orr %[bad], %[bad], %[t]\n\t"
static inline __attribute__((always_inline)) int tfl_dsp_dw_ring_setup(const int32_t *AOTC_RESTRICT mp,
                                                                       const int32_t *AOTC_RESTRICT sp,
                                                                       const int32_t *AOTC_RESTRICT bp, uint32_t ra1,
                                                                       int32_t xzn2, uint32_t se, uint32_t so,
                                                                       uint32_t *AOTC_RESTRICT rq,
                                                                       int32_t *AOTC_RESTRICT base) {
    uint32_t bad = 0, m, r, b, t;
    base[0] = (int32_t)((uint32_t)xzn2 * (uint32_t)(int32_t)(int16_t)se);
    base[1] = (int32_t)((uint32_t)xzn2 * (uint32_t)(int32_t)(int16_t)so);
    base[2] = (int32_t)((uint32_t)xzn2 * (uint32_t)((int32_t)se >> 16));
    base[3] = (int32_t)((uint32_t)xzn2 * (uint32_t)((int32_t)so >> 16));
    __asm__ volatile(TFL_DW_RSET_CH(0) TFL_DW_RSET_CH(1) TFL_DW_RSET_CH(2) TFL_DW_RSET_CH(3)
                     : [bad] "+&r"(bad), [m] "=&r"(m), [r] "=&r"(r), [b] "=&r"(b), [t] "=&r"(t)
                     : [mp] "r"(mp), [sp] "r"(sp), [bp] "r"(bp), [rq] "r"(rq), [base] "r"(base), [ra1] "r"(ra1)
                     : "memory");
    return !(bad & ~31u);
}
#undef TFL_DW_RSET_CH
/* tfl_dsp_dw_ring_setup's terms and base from p->dsp_dwb (hp: the group's 4 biases less x_zero times the weights'
 * sums), none of its tests: the compiler gives dsp_dwb only where every channel passes them (aot/kernels/tflite_int8.py
 * _dw_half_base). A channel's 11 instructions, not 19 and the base's 4 multiplies of x_zero. */
#define TFL_DW_RTERMS_CH(j)                                                                                 \
    "ldr %[r], [%[sp], #(4 * " #j ")]\n\t"                                                               \
    "ldr %[m], [%[mp], #(4 * " #j ")]\n\t"                                                               \
    "ldr %[b], [%[hp], #(4 * " #j ")]\n\t"                                                               \
    "mvn %[r], %[r]\n\t"                                                                                 \
    "str %[m], [%[rq], #(12 * " #j ")]\n\t"                                                              \
    "lsl %[t], %[ra1], %[r]\n\t"                                                                         \
    "add %[r], %[r], #1\n\t"                                                                             \
    "lsl %[b], %[b], #1\n\t"                                                                             \
    "str %[t], [%[rq], #(12 * " #j " + 4)]\n\t"                                                          \
    "str %[r], [%[rq], #(12 * " #j " + 8)]\n\t"                                                          \
    "str %[b], [%[base], #(4 * " #j ")]\n\t"
static inline __attribute__((always_inline)) void tfl_dsp_dw_ring_terms(const int32_t *AOTC_RESTRICT mp,
                                                                        const int32_t *AOTC_RESTRICT sp,
                                                                        const int32_t *AOTC_RESTRICT hp, uint32_t ra1,
                                                                        uint32_t *AOTC_RESTRICT rq,
                                                                        int32_t *AOTC_RESTRICT base) {
    uint32_t m, r, b, t;
    __asm__ volatile(TFL_DW_RTERMS_CH(0) TFL_DW_RTERMS_CH(1) TFL_DW_RTERMS_CH(2) TFL_DW_RTERMS_CH(3)
                     : [m] "=&r"(m), [r] "=&r"(r), [b] "=&r"(b), [t] "=&r"(t)
                     : [mp] "r"(mp), [sp] "r"(sp), [hp] "r"(hp), [rq] "r"(rq), [base] "r"(base), [ra1] "r"(ra1)
                     : "memory");
}
#undef TFL_DW_RTERMS_CH
#endif

/* DEPTHWISE_CONV_2D's fused 3 x 3 path on its set-up at compile time (--widened-weights: p->dsp_dw, every group
 * fused: the emitter checked tfl_dsp_dw_usual's conditions), read in place: a group's 9 taps' doubled words (wq's), its
 * terms (wq + 18's) and its sums' start at TFL_DSP_DW_BLOCK words a group; by the ring at stride 1 (SAME by one
 * function a group, else tfl_dsp_dwp_rows), a layer taller than wide by columns, at stride 2 from x itself, else each
 * output row's band and its outputs at once: tfl_depthwise_s8_dsp's fused paths, their layer's facts as it finds them.
 * Its own function, called before it: in its loop a test a group (a loop of its own there still 1.3 K) cost VWW -O3
 * tflite (no dsp_dw) 2.4 K est. cycles. Where it ran the set-up at run time (VWW -O3 tflite-ww, its 310 groups):
 * tfl_depthwise_s8_dsp 145,558 est. cycles, the bias's bound, tfl_dsp_dw_usual's terms (about 98 a group), the weights'
 * sums (tfl_dsp_dwp_wsum) or their widening (stride 2, by columns) and the base. */
__attribute__((noinline)) static int tfl_depthwise_s8_pre(const aotc_tfl_conv_params *p, const int8_t *x,
                                                          const int8_t *w, int8_t *y, uint32_t *AOTC_RESTRICT scratch) {
    const uint32_t *const dwb = p->dsp_dw;
    const int32_t h = p->h, wd = p->w, c = p->c, oc = p->oc;
    const uint32_t zb = (uint32_t)(uint8_t)p->x_zero * 0x01010101u;
    const int32_t ph = TFL_DSP_DW_SPAN(p->oh, p->sh, 3, 1), pw = TFL_DSP_DW_SPAN(p->ow, p->sw, 3, 1);
    const int32_t run = tfl_dsp_dw_run(p);
    uint32_t *pad = scratch + 4 * run;
    const ptrdiff_t xstep = (ptrdiff_t)h * wd * c, ystep = (ptrdiff_t)p->oh * p->ow * oc;
    int32_t ch, b, oy;
    if (!AOTC_TFL_DW_PRE || scratch == NULL || p->depth_multiplier != 1 || c % 4 != 0 || !TFL_DSP_DW_BAND(p)) return 0;
    int32_t ox_lo = (p->pad_left + p->sw - 1) / p->sw, ox_hi = 0;
    while (ox_hi < p->ow && ox_hi * p->sw - p->pad_left + 2 < wd) ++ox_hi;
    if (ox_lo > ox_hi) ox_lo = ox_hi;
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y;
    const int apart = ya >= xa + (uintptr_t)p->n * h * wd * c || xa >= ya + (uintptr_t)p->n * p->oh * p->ow * oc;
    const int columns = AOTC_TFL_DW_COLUMNS && p->sh <= 2 && p->ow < p->oh && apart &&
                        3 * (int64_t)ph <= 3 * (int64_t)pw + 4 * (int64_t)run;
#if TFL_DW_PAIR_ASM
    tfl_dsp_dws2_facts s2f; /* the stride-2 path's facts of the layer, once (tfl_dsp_dws2_layer) */
    tfl_dsp_dws2_layer(p, ox_lo, ox_hi, apart, &s2f);
    const int ring = AOTC_TFL_DW_RING && TFL_DSP_DW_ROUNDING(p) && !columns && tfl_dsp_dwp_fits(p, run, pw);
    const int same = AOTC_TFL_DW_SAME && ring && tfl_dsp_dwp_same(p);
    void (*const same_fn)(const tfl_dsp_dwp_same_args *) =
        p->ow == 3 ? (TFL_DSP_DW_FLOOR(p) ? tfl_dsp_dwp3_same_floor : tfl_dsp_dwp3_same_sign)
                   : (TFL_DSP_DW_FLOOR(p) ? tfl_dsp_dwp6_same_floor : tfl_dsp_dwp6_same_sign);
    tfl_dsp_dwp_same_args da = {x, c, h, zb, scratch, p->ow / 6, w, y, oc, NULL, wd * c, p->ow * oc,
                                TFL_DSP_DWP_PAIRS(p), NULL, -1}; /* every group the ring's: zslot kept throughout */
#else
    (void)w, (void)ox_lo, (void)ox_hi, (void)apart;
#endif
    for (ch = 0; ch < c; ch += 4) {
        const uint32_t *const wg = dwb + (ptrdiff_t)(ch / 4) * TFL_DSP_DW_BLOCK;
        const int32_t *const bg = (const int32_t *)(wg + 30);
#if TFL_DW_PAIR_ASM
        if (ring) {
            if (same) {
                da.s = x + ch, da.w = w + ch, da.y = y + ch, da.rq = wg + 18, da.base = bg;
                for (b = 0; b < p->n; ++b, da.s += xstep, da.y += ystep) same_fn(&da);
            } else {
                tfl_dsp_dwp_rows(p, x, w, ch, wg + 18, bg, y, zb, scratch);
            }
            continue;
        }
#endif
        if (columns) {
            for (b = 0; b < p->n; ++b)
                tfl_dsp_dw_columns(p, x + b * xstep + ch, wg, bg, y + b * ystep + ch, zb, ph, scratch);
            continue;
        }
#if TFL_DW_PAIR_ASM
        if (AOTC_TFL_DW_S2 && TFL_DSP_DW_ROUNDING(p) && p->sw == 2) { /* at stride 2 from x itself (tfl_dsp_dws2) */
            for (b = 0; b < p->n; ++b)
                tfl_dsp_dws2(p, &s2f, x + b * xstep + ch, wg, bg, y + b * ystep + ch, zb, pw, pad);
            continue;
        }
#endif
        for (b = 0; b < p->n; ++b)
            for (oy = 0; oy < p->oh; ++oy) {
                tfl_dsp_dw_band(p, x + b * xstep + ch, oy * p->sh - p->pad_top, zb, pw, pad);
                tfl_dsp_dw3x3_band_rq(pad, p->ow, p->sw, wg, bg, y + b * ystep + ch + (ptrdiff_t)oy * p->ow * oc, oc,
                                      p->y_zero == -128);
            }
    }
    return 1;
}

/* DEPTHWISE_CONV_2D, depth multiplier 1, channels a multiple of 4, windows up to TFL_DSP_TAPS:
 * 4 channels at a time over every position, their weights widened once. The input zero point's
 * share of the sums is in the base (a tap in the padding reads x_zero, adding 0 to the sum of
 * (x - x_zero) * w), so a 3 x 3 window inside the image is plain loads. Where TFL_DSP_DW_BAND
 * holds, each output row's windows go by its band (tfl_dsp_dw3x3_band); else such windows of one
 * output row go by runs (aotc_dsp_dw3x3_run), the others one at a time. The sums are then
 * requantised channel by channel, each channel's multiplier and shifts split once. */
/* A group of 4 channels by the 3 x 3 path on the windows' span copied padded (TFL_DSP_DW_PADDED): the span's words,
 * then whole rows into the sums, stored when the next would not fit (the padded span is at most TFL_DSP_DW_PAD
 * words, so a row is at most that many positions). tfl_depthwise_s8_dsp's step, apart to keep it short */
static inline __attribute__((always_inline)) void tfl_dsp_dw_group_padded(
    const aotc_tfl_conv_params *p, const int8_t *x, int8_t *y, int32_t ch, const uint32_t *wq, const int32_t *base,
    uint32_t zb, int32_t ph, int32_t pw, int32_t run, int32_t *acc, uint32_t *pad, int64_t bound, int32_t h, int32_t wd,
    int32_t c, int32_t oc) {
    for (int32_t b = 0; b < p->n; ++b) {
        const int8_t *xb = x + (int64_t)b * h * wd * c + ch;
        int8_t *yb = y + (int64_t)b * p->oh * p->ow * oc + ch;
        for (int32_t t = 0; t < ph; ++t) {
            const int32_t iy = t - p->pad_top;
            for (int32_t j = 0; j < pw; ++j) {
                const int32_t ix = j - p->pad_left;
                pad[t * pw + j] =
                    iy >= 0 && iy < h && ix >= 0 && ix < wd ? aotc_dsp_load32(xb + ((int64_t)iy * wd + ix) * c) : zb;
            }
        }
        int32_t t = 0;
        for (int32_t oy = 0; oy < p->oh; ++oy) {
            if (t + p->ow > run) {
                tfl_dsp_dw_store(p, acc, t, ch, yb + ((int64_t)oy * p->ow - t) * oc, bound);
                t = 0;
            }
            aotc_dsp_dw3x3_run((const int8_t *)(pad + oy * p->sh * pw), 4 * p->sw, p->ow, 4 * p->dw, 4 * p->dh * pw,
                               wq, base, acc + 4 * t);
            t += p->ow;
        }
        tfl_dsp_dw_store(p, acc, t, ch, yb + ((int64_t)p->oh * p->ow - t) * oc, bound);
    }
}

static int tfl_depthwise_s8_dsp(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                const int32_t *bias, int8_t *y, uint32_t *AOTC_RESTRICT scratch) {
    uint32_t wq[2 * TFL_DSP_TAPS];
    const int32_t taps = p->kh * p->kw, kh = p->kh, kw = p->kw, h = p->h, wd = p->w, c = p->c, oc = p->oc;
    const uint32_t zb = (uint32_t)(uint8_t)p->x_zero * 0x01010101u;
    const int32_t fast = kh == 3 && kw == 3;
    /* the rows and columns the windows span, from (-pad_top, -pad_left) */
    const int32_t ph = TFL_DSP_DW_SPAN(p->oh, p->sh, kh, p->dh), pw = TFL_DSP_DW_SPAN(p->ow, p->sw, kw, p->dw);
    /* scratch (the memory plan's: aotc_tfl_depthwise_s8_dsp_scratch_bytes): the sums of up to `run`
     * positions' 4 channels, then the band (3 pw words) or the padded span where the 3 x 3 paths copy
     * them */
    const int32_t run = tfl_dsp_dw_run(p);
    int32_t *acc = (int32_t *)scratch;
    uint32_t *pad = scratch + 4 * run;
    int32_t ch, b, oy, ox, t, j;
    if (scratch == NULL || p->depth_multiplier != 1 || c % 4 != 0 || taps > TFL_DSP_TAPS) return 0;
    if (!AOTC_TFL_DW_PLAIN && !TFL_DSP_DW_BAND(p)) return 0; /* the plain paths left out: the plain loop's */
    /* output columns [ox_lo, ox_hi) have the whole window inside the row */
    int32_t ox_lo = (p->pad_left + p->sw - 1) / p->sw, ox_hi = 0;
    while (ox_hi < p->ow && ox_hi * p->sw - p->pad_left + (kw - 1) * p->dw < wd) ++ox_hi;
    if (ox_lo > ox_hi) ox_lo = ox_hi;
    /* a fused layer taller than wide by columns (tfl_dsp_dw_columns), where its band of 3 ph words fits the
     * scratch (the run of sums, unused there, and the row band's 3 pw words), and y does not overlap x (a RAM
     * budget's plan may start y below x by what the row order allows: aot/kernels/tflite_int8.py overlap_bytes) */
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y;
    const int apart = ya >= xa + (uintptr_t)p->n * h * wd * c || xa >= ya + (uintptr_t)p->n * p->oh * p->ow * oc;
    const int columns = AOTC_TFL_DW_COLUMNS && TFL_DSP_DW_BAND(p) && p->sh <= 2 && p->ow < p->oh && apart &&
                        3 * (int64_t)ph <= 3 * (int64_t)pw + 4 * (int64_t)run;
#if TFL_DW_PAIR_ASM
    tfl_dsp_dws2_facts s2f; /* the stride-2 path's facts of the layer, once (tfl_dsp_dws2_layer) */
    tfl_dsp_dws2_layer(p, ox_lo, ox_hi, apart, &s2f);
    /* the fused path at stride 1 by the ring (TFL_DSP_DW_BAND, 3 x 3), SAME by one function a group (its arguments
     * here, a group's s, w and y set at its turn), else tfl_dsp_dwp_rows */
    const int ring = AOTC_TFL_DW_RING && TFL_DSP_DW_ROUNDING(p) && TFL_DSP_DW_BAND(p) && taps == 9 &&
                     tfl_dsp_dwp_fits(p, run, pw);
    const int same = AOTC_TFL_DW_SAME && ring && tfl_dsp_dwp_same(p);
    void (*const same_fn)(const tfl_dsp_dwp_same_args *) =
        p->ow == 3 ? (TFL_DSP_DW_FLOOR(p) ? tfl_dsp_dwp3_same_floor : tfl_dsp_dwp3_same_sign)
                   : (TFL_DSP_DW_FLOOR(p) ? tfl_dsp_dwp6_same_floor : tfl_dsp_dwp6_same_sign);
    const ptrdiff_t xstep = (ptrdiff_t)h * wd * c, ystep = (ptrdiff_t)p->oh * p->ow * oc;
#endif
    int32_t base[4];
#if TFL_DW_PAIR_ASM
    tfl_dsp_dwp_same_args da = {x, c, h, zb, scratch, p->ow / 6, w, y, oc, wq + 18, wd * c, p->ow * oc,
                                TFL_DSP_DWP_PAIRS(p), base, -1};
#endif
#if TFL_DW_PAIR_ASM
    /* at stride 1 by the ring (a layer taller than wide by columns first): the weights' sums for the base, no widened
     * copy, each group's set-up in one pass (tfl_dsp_dw_ring_setup), the layer's tests here once; a group it
     * refuses by the paths below */
    const int ring_fast = ring && !columns && taps == 9 && p->y_min == -128 && p->y_max == 127;
    const uint32_t ra1 = 1u + 2u * (uint32_t)p->y_zero;
    const int32_t xzn2 = -2 * p->x_zero;
#endif
    for (ch = 0; ch < c; ch += 4) {
#if TFL_DW_PAIR_ASM
        if (ring_fast) {
            /* where the compiler gives each channel's bias less x_zero times its weights' sum (p->dsp_dwb, and so its
             * word that every group takes the ring's usual requantisation), the terms and the base without the
             * weights' sums or the tests (tfl_dsp_dw_ring_terms) */
            uint32_t se, so;
            if (p->dsp_dwb ? (tfl_dsp_dw_ring_terms(p->mult + ch, p->shift + ch, p->dsp_dwb + ch, ra1, wq + 18, base), 1)
                           : (tfl_dsp_dwp_wsum(w + ch, oc, &se, &so),
                              tfl_dsp_dw_ring_setup(p->mult + ch, p->shift + ch, bias ? bias + ch : tfl_dsp_dw_nobias,
                                                    ra1, xzn2, se, so, wq + 18, base))) {
                if (same) {
                    da.s = x + ch, da.w = w + ch, da.y = y + ch;
                    for (b = 0; b < p->n; ++b, da.s += xstep, da.y += ystep) same_fn(&da);
                } else {
                    tfl_dsp_dwp_rows(p, x, w, ch, wq + 18, base, y, zb, scratch);
                }
                continue;
            }
            da.zslot = -1; /* the group by a path below, which may take the scratch: the ring's row of x_zero not kept */
        }
#endif
        /* the sums' bound: the taps' products and the largest bias in size (in 32 bits: INT32_MIN's fits) */
        uint32_t b_max = 0;
        if (bias)
            for (j = 0; j < 4; ++j) {
                const uint32_t a = bias[ch + j] < 0 ? 0u - (uint32_t)bias[ch + j] : (uint32_t)bias[ch + j];
                b_max = a > b_max ? a : b_max;
            }
        const int64_t bound = (int64_t)taps * TFL_DSP_PRODUCT_MAX + (int64_t)b_max;
        /* by output rows (TFL_DSP_DW_BAND): fused, the outputs at once, where the requantisation takes SSAT's form
         * (its terms at wq + 18, past the 9 taps' words); its sums doubled (the requantisation's left shift of 1) */
        const int fused = TFL_DSP_DW_BAND(p) && kh * kw == 9 && tfl_dsp_dw_usual(p, ch, bound, wq + 18);
        if (!AOTC_TFL_DW_PLAIN && !fused) { /* the plain paths left out: the group by the plain loop */
            tfl_dsp_dw_group_plain(p, x, w, bias, y, ch);
            continue;
        }
        {
            /* the taps' weights widened (doubled where fused), and summed as halfwords (at most TFL_DSP_TAPS x 256
             * in size) for the input zero point's share: channels 0 and 2 in se, 1 and 3 in so */
            const int8_t *wt = w + ch;
            const int32_t xzn = -p->x_zero;
            uint32_t se = 0, so = 0;
            if (fused || !AOTC_TFL_DW_PLAIN) {
                for (t = 0; t < taps; ++t, wt += oc) {
                    const uint32_t v = aotc_dsp_load32(wt);
                    uint32_t e = (uint32_t)__sxtb16(v), o = aotc_dsp_sxtb16_hi(v);
                    e = (uint32_t)__sadd16((int32_t)e, (int32_t)e), o = (uint32_t)__sadd16((int32_t)o, (int32_t)o);
                    wq[2 * t] = e, wq[2 * t + 1] = o;
                    se = (uint32_t)__sadd16((int32_t)se, (int32_t)e), so = (uint32_t)__sadd16((int32_t)so, (int32_t)o);
                }
            } else {
#if TFL_DW_PAIR_ASM
                da.zslot = -1; /* its path takes the scratch: tfl_dsp_dwp6_same_*'s row of x_zero not kept */
#endif
                for (t = 0; t < taps; ++t, wt += oc) {
                    const uint32_t v = aotc_dsp_load32(wt), e = (uint32_t)__sxtb16(v), o = aotc_dsp_sxtb16_hi(v);
                    wq[2 * t] = e, wq[2 * t + 1] = o;
                    se = (uint32_t)__sadd16((int32_t)se, (int32_t)e), so = (uint32_t)__sadd16((int32_t)so, (int32_t)o);
                }
            }
            const int32_t sum[4] = {(int16_t)se, (int16_t)so, (int32_t)se >> 16, (int32_t)so >> 16};
            for (j = 0; j < 4; ++j) /* the bias (doubled where fused) less x_zero times the weights' sum */
                base[j] = (int32_t)(((uint32_t)(bias ? bias[ch + j] : 0) << (fused ? 1 : 0)) + (uint32_t)(xzn * sum[j]));
        }
        if (!AOTC_TFL_DW_PLAIN || TFL_DSP_DW_BAND(p)) {
            /* by output rows: the row's band, then its positions' sums into the run, which is stored
             * when full (a run may end inside a row); or its outputs at once (fused) */
            if (fused) {
                if (columns) {
                    for (b = 0; b < p->n; ++b)
                        tfl_dsp_dw_columns(p, x + (ptrdiff_t)b * h * wd * c + ch, wq, base,
                                           y + (ptrdiff_t)b * p->oh * p->ow * oc + ch, zb, ph, scratch);
                    continue;
                }
            }
#if TFL_DW_PAIR_ASM
            if (AOTC_TFL_DW_S2 && TFL_DSP_DW_ROUNDING(p) && fused && p->sw == 2) { /* at stride 2 from x itself */
                for (b = 0; b < p->n; ++b)
                    tfl_dsp_dws2(p, &s2f, x + (ptrdiff_t)b * h * wd * c + ch, wq, base,
                                 y + (ptrdiff_t)b * p->oh * p->ow * oc + ch, zb, pw, pad);
                continue;
            }
#endif
            for (b = 0; b < p->n; ++b) {
                const int8_t *xb = x + (int64_t)b * h * wd * c + ch;
                int8_t *yb = y + (int64_t)b * p->oh * p->ow * oc + ch;
                for (oy = 0, t = 0; oy < p->oh; ++oy) {
                    tfl_dsp_dw_band(p, xb, oy * p->sh - p->pad_top, zb, pw, pad);
                    if (fused || !AOTC_TFL_DW_PLAIN) {
                        tfl_dsp_dw3x3_band_rq(pad, p->ow, p->sw, wq, base, yb + (int64_t)oy * p->ow * oc, oc,
                                              p->y_zero == -128);
                        continue;
                    }
                    for (ox = 0; ox < p->ow;) {
                        const int32_t n = p->ow - ox < run - t ? p->ow - ox : run - t;
                        tfl_dsp_dw3x3_band(pad + 3 * ox * p->sw, n, p->sw, wq, base, acc + 4 * t);
                        t += n, ox += n;
                        if (t == run) {
                            tfl_dsp_dw_store(p, acc, t, ch, yb + ((int64_t)oy * p->ow + ox - t) * oc, bound);
                            t = 0;
                        }
                    }
                }
                if (t > 0) tfl_dsp_dw_store(p, acc, t, ch, yb + ((int64_t)p->oh * p->ow - t) * oc, bound);
            }
            continue;
        }
        if (fast && TFL_DSP_DW_PADDED(ph, pw, p->ow, run)) {
            tfl_dsp_dw_group_padded(p, x, y, ch, wq, base, zb, ph, pw, run, acc, pad, bound, h, wd, c, oc);
            continue;
        }
        for (b = 0; b < p->n; ++b) {
            const int8_t *xb = x + (int64_t)b * h * wd * c + ch;
            int8_t *yb = y + (int64_t)b * p->oh * p->ow * oc + ch;
            for (oy = 0; oy < p->oh; ++oy) {
                const int32_t iy0 = oy * p->sh - p->pad_top;
                const int32_t inside = fast && iy0 >= 0 && iy0 + (kh - 1) * p->dh < h;
                for (ox = 0; ox < p->ow;) {
                    int32_t n = 1;
                    if (inside && ox >= ox_lo && ox < ox_hi) {
                        n = ox_hi - ox < run ? ox_hi - ox : run;
                        aotc_dsp_dw3x3_run(xb + ((int64_t)iy0 * wd + ox * p->sw - p->pad_left) * c, p->sw * c, n,
                                          p->dw * c, p->dh * wd * c, wq, base, acc);
                    } else {
                        tfl_dsp_dw_one(p, xb, iy0, ox * p->sw - p->pad_left, wq, base, zb, acc);
                    }
                    tfl_dsp_dw_store(p, acc, n, ch, yb + ((int64_t)oy * p->ow + ox) * oc, bound);
                    ox += n;
                }
            }
        }
    }
    return 1;
}

/* ---- Depth multiplier m > 1 (AOTC_TFL_DW_MULT: aotc_tflite_int8.h's TFL_DSP_DWM_*) ------------------------------
 * Output channel ci m + j reads input channel ci alone, so an input channel's windows serve its m outputs: its input
 * rows are widened once into a ring of 16-bit values (the padding x_zero's), each window row's columns read in pairs
 * (a word: SMLAD's two halves), and each pair, loaded once, is multiplied by 4 output channels' pairs of weights, two
 * positions at a time (their 8 sums in registers). The weights are widened once an input channel, in blocks of 4 of
 * its outputs, each block's sums started at the bias less x_zero times the weights' sum (a tap in the padding then
 * adds 0, as in the other paths); where its requantisation is the usual one (tfl_dsp_dw_usual) the pairs' sums are
 * requantised and stored in the assembly. TFLM's micro_speech (1 channel, 10 x 8 windows at stride 2, m 8) took the
 * conv's path after DepthwiseAsConv: its patches (im2col) cost more than the multiply-accumulates. */

/* The pairs of positions A, B of a run: B two columns (one word) after A in the ring, so that one code serves both
 * strides: at stride 2 B is A's next position, at stride 1 the one after (the run's positions then in two passes,
 * those 0 and 1 mod 4 as A). Each pair's A in the ring is sstep bytes after the last's, its sums (or outputs) astep
 * bytes, B's boff bytes after A's; a B past the run (an odd count) is computed and not read: the ring has a word more
 * a row and the sums 2 positions more (TFL_DSP_DWM_ROW, tfl_dsp_dwm_words). */
typedef struct {
    const uint32_t *wb;         /* the block: its 4 sums' start, then kh x kq pairs of 4 channels' weight pairs */
    int32_t kq, rstep, rows;    /* pairs a window row; bytes from a row's last pair to the next window row's first; a
                                 * window's rows in bytes (the ring rows they span) */
    int32_t sstep, astep, boff; /* (above) */
    const uint32_t *rq;         /* the 4 channels' mult, ra, right (tfl_dsp_dw_usual): the sums requantised and stored
                                 * as int8 outputs (astep and boff then bytes of y); NULL: stored as sums */
} tfl_dsp_dwm_args;

#if AOTC_DSP_ASM
#define TFL_DWM_KQMAX 5 /* the assembly's unrolled pairs of a window row: windows up to 10 wide */
/* one pair of a window row: A's word at r0 (then past it), B's after it, 4 channels' weight pairs at r1 (then past
 * them) into A's sums r4 .. r7 and B's r8 .. r11; 48 bytes (every instruction 32-bit: the row's entry is computed),
 * 17 cycles for 16 multiply-accumulates */
#define TFL_DWM_PAIR                                                                                              \
    "ldr.w lr, [r0, #4]\n\t"                                                                                      \
    "ldr.w r12, [r0], #4\n\t"                                                                                     \
    "ldrd r2, r3, [r1], #8\n\t"                                                                                   \
    "smlad r4, r12, r2, r4\n\t"                                                                                   \
    "smlad r8, lr, r2, r8\n\t"                                                                                    \
    "smlad r5, r12, r3, r5\n\t"                                                                                   \
    "smlad r9, lr, r3, r9\n\t"                                                                                    \
    "ldrd r2, r3, [r1], #8\n\t"                                                                                   \
    "smlad r6, r12, r2, r6\n\t"                                                                                   \
    "smlad r10, lr, r2, r10\n\t"                                                                                  \
    "smlad r7, r12, r3, r7\n\t"                                                                                   \
    "smlad r11, lr, r3, r11\n\t"
/* one channel's sums a, b requantised in place (tfl_dsp_dw_requant_ssat's arithmetic: doubled, SMMLAR by mult r1 with
 * ra r2, the sign term, shifted right by r3, SSAT; lr a temporary), its 3 terms first loaded from r0 on */
#define TFL_DWM_RQ2(a, b)                                                                                         \
    "ldmia r0!, {r1, r2, r3}\n\t"                                                                                 \
    "lsl lr, " a ", #1\n\t"                                                                                      \
    "smmlar " a ", lr, r1, r2\n\t"                                                                               \
    "add " a ", " a ", lr, asr #31\n\t"                                                                          \
    "asr " a ", " a ", r3\n\t"                                                                                   \
    "ssat " a ", #8, " a "\n\t"                                                                                  \
    "lsl lr, " b ", #1\n\t"                                                                                      \
    "smmlar " b ", lr, r1, r2\n\t"                                                                               \
    "add " b ", " b ", lr, asr #31\n\t"                                                                          \
    "asr " b ", " b ", r3\n\t"                                                                                   \
    "ssat " b ", #8, " b "\n\t"
#define TFL_DWM_ARG __attribute__((unused)) /* a naked function's arguments are its assembly's registers */
/* pairs pairs of positions from s (r0) into out (r2: sums, or with a->rq outputs), the args a at r3. Frame: [sp] s,
 * [#4] pairs left, [#8] out, [#12] a, [#16] the window's end (A's pointer after its last row), [#20] the row's entry,
 * [#24] rstep. A row enters the unrolled pairs at TFL_DWM_KQMAX - kq and loops by loading the PC (no branch back):
 * 10 cycles a row; the outputs' requantisation TFL_DWM_RQ2's. */
__attribute__((naked, noinline)) static void tfl_dsp_dwm_pairs(TFL_DWM_ARG const int16_t *s, TFL_DWM_ARG int32_t pairs,
                                                             TFL_DWM_ARG void *out,
                                                             TFL_DWM_ARG const tfl_dsp_dwm_args *a) {
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #28\n\t"
        "stmia sp, {r0, r1, r2, r3}\n\t"
        "ldr r5, [r3, #4]\n\t" /* kq */
        "ldr r6, [r3, #8]\n\t" /* rstep */
        "rsb r5, r5, #5\n\t"   /* TFL_DWM_KQMAX */
        "movs r7, #48\n\t"
        "adr.w r4, 2f\n\t"
        "mla r4, r5, r7, r4\n\t"
        "orr r4, r4, #1\n\t"
        "str r4, [sp, #20]\n\t"
        "str r6, [sp, #24]\n\t"
        "1:\n\t" /* a pair: its sums from the block's start, its window's end, into the first row */
        "ldr r3, [sp, #12]\n\t"
        "ldr r0, [sp, #0]\n\t"
        "ldr r1, [r3, #0]\n\t"
        "ldr r2, [r3, #12]\n\t"
        "ldmia r1!, {r4-r7}\n\t"
        "add r2, r2, r0\n\t"
        "str r2, [sp, #16]\n\t"
        "mov r8, r4\n\t"
        "mov r9, r5\n\t"
        "mov r10, r6\n\t"
        "mov r11, r7\n\t"
        "ldr pc, [sp, #20]\n\t"
        ".p2align 2\n"
        "2:\n\t" TFL_DWM_PAIR TFL_DWM_PAIR TFL_DWM_PAIR TFL_DWM_PAIR TFL_DWM_PAIR
        "ldr r2, [sp, #24]\n\t" /* the next row */
        "ldr r3, [sp, #16]\n\t"
        "add r0, r0, r2\n\t"
        "cmp r0, r3\n\t"
        "it ne\n\t"
        "ldrne pc, [sp, #20]\n\t"
        "ldr r3, [sp, #12]\n\t" /* the pair's sums, or its outputs */
        "ldr r0, [r3, #28]\n\t"
        "cbnz r0, 3f\n\t"
        "ldr r2, [sp, #8]\n\t"
        "ldr r12, [r3, #24]\n\t"
        "stmia r2, {r4-r7}\n\t"
        "add r12, r12, r2\n\t"
        "stmia r12, {r8-r11}\n\t"
        "b 4f\n"
        "3:\n\t" TFL_DWM_RQ2("r4", "r8") TFL_DWM_RQ2("r5", "r9") TFL_DWM_RQ2("r6", "r10") TFL_DWM_RQ2("r7", "r11")
        "ldr r3, [sp, #12]\n\t"
        "ldr r2, [sp, #8]\n\t"
        "ldr r12, [r3, #24]\n\t"
        "strb r4, [r2]\n\t"
        "strb r5, [r2, #1]\n\t"
        "strb r6, [r2, #2]\n\t"
        "strb r7, [r2, #3]\n\t"
        "add r12, r12, r2\n\t"
        "strb r8, [r12]\n\t"
        "strb r9, [r12, #1]\n\t"
        "strb r10, [r12, #2]\n\t"
        "strb r11, [r12, #3]\n"
        "4:\n\t" /* the next pair */
        "ldr lr, [r3, #20]\n\t"
        "ldr r12, [r3, #16]\n\t"
        "add r2, r2, lr\n\t"
        "ldr r0, [sp, #0]\n\t"
        "ldr r1, [sp, #4]\n\t"
        "add r0, r0, r12\n\t"
        "str r2, [sp, #8]\n\t"
        "subs r1, r1, #1\n\t"
        "str r0, [sp, #0]\n\t"
        "str r1, [sp, #4]\n\t"
        "bne 1b\n\t"
        "add sp, sp, #28\n\t"
        "pop {r4-r11, pc}\n\t");
}
#endif

#if !AOTC_DSP_ASM || AOTC_TFL_DW_MULT_WIDE
/* tfl_dsp_dwm_pairs in C, the sums only (no assembly, or windows wider than its rows: AOTC_TFL_DW_MULT_WIDE) */
static void tfl_dsp_dwm_pairs_c(const int16_t *s, int32_t pairs, void *out, const tfl_dsp_dwm_args *a) {
    const int32_t rs = (a->rstep + 4 * a->kq) / 2; /* halfwords from a window row to the next */
    int32_t ky, q, *acc = (int32_t *)out;
    for (; pairs > 0; --pairs, s += a->sstep / 2, acc += a->astep / 4) {
        int32_t a0 = (int32_t)a->wb[0], a1 = (int32_t)a->wb[1], a2 = (int32_t)a->wb[2], a3 = (int32_t)a->wb[3];
        int32_t b0 = a0, b1 = a1, b2 = a2, b3 = a3, *bs = acc + a->boff / 4;
        const uint32_t *wp = a->wb + 4;
        const int16_t *r = s;
        for (ky = 0; ky < a->rows / (2 * rs); ++ky, r += rs)
            for (q = 0; q < a->kq; ++q, wp += 4) {
                const int32_t xa = (int32_t)aotc_dsp_load32(r + 2 * q), xb = (int32_t)aotc_dsp_load32(r + 2 * q + 2);
                a0 = __smlad(xa, (int32_t)wp[0], a0), b0 = __smlad(xb, (int32_t)wp[0], b0);
                a1 = __smlad(xa, (int32_t)wp[1], a1), b1 = __smlad(xb, (int32_t)wp[1], b1);
                a2 = __smlad(xa, (int32_t)wp[2], a2), b2 = __smlad(xb, (int32_t)wp[2], b2);
                a3 = __smlad(xa, (int32_t)wp[3], a3), b3 = __smlad(xb, (int32_t)wp[3], b3);
            }
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, bs[0] = b0, bs[1] = b1, bs[2] = b2, bs[3] = b3;
    }
}
#endif

/* A tap's weights of 4 output channels from w (1 byte each), those past the n left 0 */
static inline uint32_t tfl_dsp_dwm_w4(const int8_t *w, int32_t n) {
    uint32_t v = 0;
    int32_t j;
    if (n >= 4) return aotc_dsp_load32(w);
    for (j = 0; j < n; ++j) v |= (uint32_t)(uint8_t)w[j] << (8 * j);
    return v;
}

/* Input row iy of input channel xb[0] (channels c bytes apart) widened into the ring row d: pr columns from -pad_left,
 * x_zero where the row or a column is outside the image; a 1-channel row 4 bytes a word (SXTB16 twice) */
__attribute__((noinline)) static void tfl_dsp_dwm_row(const aotc_tfl_conv_params *p, const int8_t *xb, int32_t iy, int32_t pr, int16_t *d) {
    const int32_t c = p->c;
    int32_t j = p->pad_left < pr ? p->pad_left : pr, end = p->pad_left + p->w < pr ? p->pad_left + p->w : pr, i;
    const uint32_t z = (uint16_t)p->x_zero * 0x10001u; /* (pr is even) */
    for (i = 0; i < pr; i += 2) memcpy(d + i, &z, 4);
    if (iy < 0 || iy >= p->h) return;
    const int8_t *s = xb + ((ptrdiff_t)iy * p->w + j - p->pad_left) * c;
    if (c == 1)
        for (; j + 4 <= end; j += 4, s += 4) {
            const uint32_t v = aotc_dsp_load32(s), e = (uint32_t)__sxtb16(v), o = aotc_dsp_sxtb16_hi(v);
            const uint32_t w01 = (e & 0xFFFFu) | o << 16, w23 = (o & 0xFFFF0000u) | e >> 16;
            memcpy(d + j, &w01, 4), memcpy(d + j + 2, &w23, 4);
        }
    for (; j < end; ++j, s += c) d[j] = *s;
}

/* DEPTHWISE_CONV_2D at a depth multiplier above 1, column dilation 1 (aotc_tflite_int8.h: TFL_DSP_DWM_*): input
 * channel by input channel, its weights widened, then output row by output row the input rows its windows span
 * widened into the ring (each once: a ring of the span's rows, each written twice, so that any span is contiguous)
 * and each block of 4 outputs' runs. A's positions are every sa-th of a pass: at stride 1 two passes (0, 4, ... and
 * 1, 5, ...), B two after A; at stride 2 one, B the next; above, one of every position, B's sums in the next A's place
 * (then taken by it). Windows past TFL_DWM_KQMAX pairs (AOTC_TFL_DW_MULT_WIDE; and every window without the
 * assembly) by tfl_dsp_dwm_pairs_c. Sums not stored by the assembly (a run's last positions, blocks whose requantisation is not the
 * usual one, strides above 2) are requantised by tfl_dsp_dw_store where the depth multiplier 1 paths are compiled
 * (AOTC_TFL_DW_DSP), else, and in a last block of fewer than 4 channels, by TFLite's requant_double: less code where a
 * model's depthwise layers are all of multipliers above 1 (micro_speech's sums all go by the assembly). Returns 0
 * where it does not take p (the plain loop then runs). */
static int tfl_depthwise_s8_mult(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                                 int8_t *y, uint32_t *AOTC_RESTRICT scratch) {
    const int32_t m = p->depth_multiplier, kh = p->kh, kw = p->kw, oc = p->oc, kq = TFL_DSP_DWM_KQ(p), sw = p->sw;
    const int32_t pr = TFL_DSP_DWM_ROW(p), run = tfl_dsp_dwm_run(p), blocks = (m + 3) / 4, bw = 16 + 4 * kh * kq;
    const int32_t span = (kh - 1) * p->dh + 1; /* the ring's rows (each twice) */
    const int32_t sa = sw == 1 ? 4 : sw == 2 ? 2 : 1, passes = sw == 1 ? 2 : 1, bpos = sw == 1 ? 2 : 1;
    int32_t *const acc = (int32_t *)scratch;
    uint32_t *const wq = scratch + 4 * (run + 2);
    int16_t *const ring = (int16_t *)(wq + blocks * bw);
    tfl_dsp_dwm_args da = {wq, kq, 2 * pr * p->dh - 4 * kq, 2 * pr * p->dh * kh, 2 * sw * sa, 16 * sa, 16 * bpos,
                           NULL};
    tfl_dsp_dwm_args dy = {wq, kq, da.rstep, da.rows, da.sstep, sa * oc, bpos * oc, NULL};
#if AOTC_DSP_ASM && AOTC_TFL_DW_MULT_WIDE
    const int asm_rows = kq <= TFL_DWM_KQMAX;
    void (*const pairs_fn)(const int16_t *, int32_t, void *, const tfl_dsp_dwm_args *) =
        asm_rows ? tfl_dsp_dwm_pairs : tfl_dsp_dwm_pairs_c;
#elif AOTC_DSP_ASM /* (windows wider than the assembly's rows left out: the plain loop's) */
    const int asm_rows = kq <= TFL_DWM_KQMAX;
    void (*const pairs_fn)(const int16_t *, int32_t, void *, const tfl_dsp_dwm_args *) = tfl_dsp_dwm_pairs;
#else
    const int asm_rows = 0;
    void (*const pairs_fn)(const int16_t *, int32_t, void *, const tfl_dsp_dwm_args *) = tfl_dsp_dwm_pairs_c;
#endif
    int32_t ci, b, oy, ox, blk, j, t, i;
    if (!AOTC_TFL_DW_MULT || scratch == NULL || m < 2 || p->dw != 1 || (AOTC_DSP_ASM && !AOTC_TFL_DW_MULT_WIDE && !asm_rows))
        return 0;
    for (ci = 0; ci < p->c; ++ci) {
        /* the weights of outputs ci m .. ci m + m - 1 (each block: the terms, the sums' start, the pairs), the bound
         * of their sums (tfl_dsp_requant_run's) */
        uint32_t b_max = 0;
        for (blk = 0; blk < blocks; ++blk) {
            uint32_t *const d = wq + blk * bw + 16, *const base = wq + blk * bw + 12;
            const int32_t ch = ci * m + 4 * blk, nch = m - 4 * blk;
            uint32_t se = 0, so = 0; /* the weights' sums as halfwords: channels 0, 2 and 1, 3 */
            for (t = 0; t < kh * kq; ++t) { /* a tap's 4 weights a word, two taps' into 4 pairs (SXTB16, packed) */
                const int32_t kx = 2 * (t % kq);
                const int8_t *w0 = w + (ptrdiff_t)(t / kq * kw + kx) * oc + ch;
                const uint32_t v0 = tfl_dsp_dwm_w4(w0, nch), v1 = kx + 1 < kw ? tfl_dsp_dwm_w4(w0 + oc, nch) : 0u;
                const uint32_t e0 = (uint32_t)__sxtb16(v0), o0 = aotc_dsp_sxtb16_hi(v0);
                const uint32_t e1 = (uint32_t)__sxtb16(v1), o1 = aotc_dsp_sxtb16_hi(v1);
                d[4 * t] = (e0 & 0xFFFFu) | e1 << 16, d[4 * t + 1] = (o0 & 0xFFFFu) | o1 << 16;
                d[4 * t + 2] = (e1 & 0xFFFF0000u) | e0 >> 16, d[4 * t + 3] = (o1 & 0xFFFF0000u) | o0 >> 16;
                se = (uint32_t)__sadd16(__sadd16((int32_t)se, (int32_t)e0), (int32_t)e1);
                so = (uint32_t)__sadd16(__sadd16((int32_t)so, (int32_t)o0), (int32_t)o1);
            }
            const int32_t sum[4] = {(int16_t)se, (int16_t)so, (int32_t)se >> 16, (int32_t)so >> 16};
            for (j = 0; j < 4; ++j) { /* the sums' start: the bias less x_zero times the weights' sum */
                const uint32_t bo = 4 * blk + j < m && bias ? (uint32_t)bias[ch + j] : 0u;
                const uint32_t mag = (int32_t)bo < 0 ? 0u - bo : bo;
                b_max = mag > b_max ? mag : b_max;
                base[j] = bo - (uint32_t)p->x_zero * (uint32_t)sum[j];
            }
        }
        const int64_t bound = (int64_t)kh * kw * TFL_DSP_PRODUCT_MAX + (int64_t)b_max;
        for (b = 0; b < p->n; ++b) {
            const int8_t *xb = x + (ptrdiff_t)b * p->h * p->w * p->c + ci;
            int32_t next = 0; /* the next input row into the ring, counted from -pad_top */
            for (oy = 0; oy < p->oh; ++oy) {
                int8_t *yr = y + ((ptrdiff_t)b * p->oh + oy) * p->ow * oc + (ptrdiff_t)ci * m;
                const int32_t first = oy * p->sh;
                for (next = next > first ? next : first; next < first + span; ++next) {
                    int16_t *d = ring + (ptrdiff_t)(next % span) * pr;
                    tfl_dsp_dwm_row(p, xb, next - p->pad_top, pr, d);
                    memcpy(d + (ptrdiff_t)span * pr, d, 2 * (size_t)pr);
                }
                const int16_t *s0 = ring + (ptrdiff_t)(first % span) * pr;
                for (blk = 0; blk < blocks; ++blk) {
                    const int32_t nch = m - 4 * blk < 4 ? m - 4 * blk : 4, ch = ci * m + 4 * blk;
                    uint32_t *const rq = wq + blk * bw;
                    /* the outputs by the assembly: whole groups of 4 positions (stride 1) or pairs (stride 2) */
                    const int fused = asm_rows && sw <= 2 && nch == 4 && tfl_dsp_dw_usual(p, ch, bound, rq);
                    da.wb = dy.wb = rq + 12;
                    dy.rq = rq;
                    for (ox = 0; ox < p->ow; ox += run) {
                        int32_t n = p->ow - ox < run ? p->ow - ox : run, q;
                        const int16_t *s = s0 + ox * sw;
                        int8_t *yo = yr + (ptrdiff_t)ox * oc + 4 * blk;
                        if (fused) {
                            const int32_t full = n / sa * sa;
                            for (q = 0; q < passes && full > 0; ++q) pairs_fn(s + q * sw, full / sa, yo + q * oc, &dy);
                            s += full * sw, yo += (ptrdiff_t)full * oc, n -= full;
                        }
                        for (q = 0; q < passes && q < n; ++q) pairs_fn(s + q * sw, (n - q + sa - 1) / sa, acc + 4 * q, &da);
                        if (n > 0 && AOTC_TFL_DW_DSP && nch == 4) { /* (compiled for the other paths anyway) */
                            tfl_dsp_dw_store(p, acc, n, ch, yo, bound);
                            continue;
                        }
                        for (j = 0; j < nch; ++j)
                            for (i = 0; i < n; ++i)
                                yo[(ptrdiff_t)i * oc + j] = clamp8(requant_double(acc[4 * i + j], p->mult[ch + j],
                                                                                  p->shift[ch + j]) + p->y_zero,
                                                                   p->y_min, p->y_max);
                    }
                }
            }
        }
    }
    return 1;
}
#endif /* AOTC_QUANT_DSP */

#if AOTC_TFL_MVE && AOTC_TFL_MVE_DW
/* Helium's DEPTHWISE_CONV_2D: a 3 x 3 window, dilation 1, column stride 1 or 2, depth multiplier 1, channels a
 * multiple of 4, rows of 2 positions or more, and the usual requantisation (tfl_mve_requant4u's: every shift right,
 * int8's own clamp; the DSP path takes the others). 4 channels at a time (int32 lanes), for each the output rows in
 * order; the 3 input rows a row of windows reads are kept in a ring of bands in the scratch (the DSP path's, where it
 * holds 4 of them), each a row's 4 channels column by column (4 bytes a column, x_zero in the padding), so that a
 * column is one VLDRB.S32 at an immediate offset and a band's row of windows needs no bounds; the 9 taps' weights of
 * the 4 channels in 36 bytes with the requantisation's terms after them, also read at immediate offsets (low
 * registers: the widening VLDRB's). A row by blocks of 3 positions in one assembly loop (tfl_mve_dw3_row: 8 vector
 * registers), each column's load, VMULs and VADDs alternating pipes, the sums then requantised there; a row of
 * 3 n + 2 ends with a block of 2, one of 3 n + 1 with its last 3 again. The sums are sum x w + bias - x_zero sum w
 * over the window (a tap in the padding reads x_zero: adds 0, as the reference skips it): bit-exact. The output
 * overlap bound (overlap_bytes) holds channel by channel: a channel's outputs are written position by position, each
 * after the rows its window reads are copied. */
#define TFL_MVE_DW_MAC(acc, xv, wv) "vmul.i32 %q[t], " xv ", " wv "\n\tvadd.i32 %q[" acc "], %q[" acc "], %q[t]\n\t"
/* nb blocks of 3 positions of a row (the usual requantisation, tfl_mve_requant4u's), in one assembly loop: band rows
 * r0, r1, r2 at the block's first column, k the 4 channels' terms (weights, then mult, neg_right and the sums' base
 * at bytes 48, 64, 80), outputs to y, y + c, y + 2 c, then the next block 3 columns on (6 at stride 2). */
#define TFL_MVE_DWR_LDX(r, o) "vldrb.s32 %q[x], [%[" r "], #" #o "]\n\t"
#define TFL_MVE_DWR_ROW_S1(r, o)                                                                                  \
    "vldrb.s32 %q[w0], [%[k], #(" #o ")]\n\t"                                                                      \
    "vldrb.s32 %q[w1], [%[k], #(" #o " + 4)]\n\t"                                                                  \
    "vldrb.s32 %q[w2], [%[k], #(" #o " + 8)]\n\t" TFL_MVE_DWR_LDX(r, 0) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w0]")      \
        TFL_MVE_DWR_LDX(r, 4) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w1]") TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w0]")         \
            TFL_MVE_DWR_LDX(r, 8) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w2]") TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w1]")     \
                TFL_MVE_DW_MAC("a2", "%q[x]", "%q[w0]") TFL_MVE_DWR_LDX(r, 12)                                     \
                    TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w2]") TFL_MVE_DW_MAC("a2", "%q[x]", "%q[w1]")                \
                        TFL_MVE_DWR_LDX(r, 16) TFL_MVE_DW_MAC("a2", "%q[x]", "%q[w2]")
#define TFL_MVE_DWR_ROW_S2(r, o)                                                                                  \
    "vldrb.s32 %q[w0], [%[k], #(" #o ")]\n\t"                                                                      \
    "vldrb.s32 %q[w1], [%[k], #(" #o " + 4)]\n\t"                                                                  \
    "vldrb.s32 %q[w2], [%[k], #(" #o " + 8)]\n\t" TFL_MVE_DWR_LDX(r, 0) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w0]")      \
        TFL_MVE_DWR_LDX(r, 4) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w1]") TFL_MVE_DWR_LDX(r, 8)                           \
            TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w2]") TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w0]") TFL_MVE_DWR_LDX(r, 12)    \
                TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w1]") TFL_MVE_DWR_LDX(r, 16)                                     \
                    TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w2]") TFL_MVE_DW_MAC("a2", "%q[x]", "%q[w0]")                \
                        TFL_MVE_DWR_LDX(r, 20) TFL_MVE_DW_MAC("a2", "%q[x]", "%q[w1]") TFL_MVE_DWR_LDX(r, 24)      \
                            TFL_MVE_DW_MAC("a2", "%q[x]", "%q[w2]")
/* ... two positions (the last two of a row of 3 n + 2): columns 0 .. 3 (0 .. 4 at stride 2) */
#define TFL_MVE_DWR_ROW2_S1(r, o)                                                                                 \
    "vldrb.s32 %q[w0], [%[k], #(" #o ")]\n\t"                                                                      \
    "vldrb.s32 %q[w1], [%[k], #(" #o " + 4)]\n\t"                                                                  \
    "vldrb.s32 %q[w2], [%[k], #(" #o " + 8)]\n\t" TFL_MVE_DWR_LDX(r, 0) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w0]")      \
        TFL_MVE_DWR_LDX(r, 4) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w1]") TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w0]")         \
            TFL_MVE_DWR_LDX(r, 8) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w2]") TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w1]")     \
                TFL_MVE_DWR_LDX(r, 12) TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w2]")
#define TFL_MVE_DWR_ROW2_S2(r, o)                                                                                 \
    "vldrb.s32 %q[w0], [%[k], #(" #o ")]\n\t"                                                                      \
    "vldrb.s32 %q[w1], [%[k], #(" #o " + 4)]\n\t"                                                                  \
    "vldrb.s32 %q[w2], [%[k], #(" #o " + 8)]\n\t" TFL_MVE_DWR_LDX(r, 0) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w0]")      \
        TFL_MVE_DWR_LDX(r, 4) TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w1]") TFL_MVE_DWR_LDX(r, 8)                           \
            TFL_MVE_DW_MAC("a0", "%q[x]", "%q[w2]") TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w0]") TFL_MVE_DWR_LDX(r, 12)    \
                TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w1]") TFL_MVE_DWR_LDX(r, 16) TFL_MVE_DW_MAC("a1", "%q[x]", "%q[w2]")
#define TFL_MVE_DWR_RQ(a)                                                                                         \
    "vshr.s32 %q[t], %q[" a "], #31\n\t"                                                                           \
    "vqadd.s32 %q[" a "], %q[" a "], %q[t]\n\t"                                                                    \
    "vrshl.s32 %q[" a "], %q[" a "], %q[w1]\n\t"                                                                   \
    "vadd.i32 %q[" a "], %q[" a "], %[yz]\n\t"                                                                     \
    "vqmovnb.s32 %q[" a "], %q[" a "]\n\t"                                                                         \
    "vqmovnb.s16 %q[" a "], %q[" a "]\n\t"                                                                         \
    "vstrb.32 %q[" a "], [%[y]]\n\t"                                                                               \
    "add %[y], %[y], %[c]\n\t"
#define TFL_MVE_DWR_LOOP(ROW, step)                                                                               \
    __asm__ volatile("1:\n\t"                                                                                     \
                     "vldrw.32 %q[a0], [%[k], #80]\n\t"                                                           \
                     "vldrw.32 %q[a1], [%[k], #80]\n\t"                                                           \
                     "vldrw.32 %q[a2], [%[k], #80]\n\t" ROW("r0", 0) ROW("r1", 12) ROW("r2", 24)                  \
                     "vldrw.32 %q[w0], [%[k], #48]\n\t"                                                           \
                     "vldrw.32 %q[w1], [%[k], #64]\n\t"                                                           \
                     "vqrdmulh.s32 %q[a0], %q[a0], %q[w0]\n\t"                                                    \
                     "vqrdmulh.s32 %q[a1], %q[a1], %q[w0]\n\t"                                                    \
                     "vqrdmulh.s32 %q[a2], %q[a2], %q[w0]\n\t" TFL_MVE_DWR_RQ("a0") TFL_MVE_DWR_RQ("a1")          \
                         TFL_MVE_DWR_RQ("a2")                                                                     \
                     "add %[r0], %[r0], #" #step "\n\t"                                                           \
                     "add %[r1], %[r1], #" #step "\n\t"                                                           \
                     "add %[r2], %[r2], #" #step "\n\t"                                                           \
                     "subs %[nb], %[nb], #1\n\t"                                                                  \
                     "bne 1b"                                                                                     \
                     : [a0] "=&w"(a0), [a1] "=&w"(a1), [a2] "=&w"(a2), [w0] "=&w"(w0), [w1] "=&w"(w1),            \
                       [w2] "=&w"(w2), [x] "=&w"(xv), [t] "=&w"(t), [r0] "+l"(r0), [r1] "+l"(r1), [r2] "+l"(r2),  \
                       [y] "+l"(y), [nb] "+r"(nb)                                                                 \
                     : [k] "l"(k), [c] "r"(c), [yz] "r"(yz)                                                       \
                     : "cc", "memory")
static inline __attribute__((always_inline)) void tfl_mve_dw3_row(const int8_t *r0, const int8_t *r1,
                                                                  const int8_t *r2, const int8_t *k, int8_t *y,
                                                                  int32_t c, int32_t nb, int32_t yz, int32_t sw) {
#if TFL_MVE_ALL_REGS
    int32x4_t a0, a1, a2, w0, w1, w2, xv, t;
    if (sw == 1) TFL_MVE_DWR_LOOP(TFL_MVE_DWR_ROW_S1, 12);
    else TFL_MVE_DWR_LOOP(TFL_MVE_DWR_ROW_S2, 24);
#else /* (not called: tfl_depthwise_s8_mve takes nothing there) */
    (void)r0, (void)r1, (void)r2, (void)k, (void)y, (void)c, (void)nb, (void)yz, (void)sw;
#endif
}

/* the row's last two positions (tfl_mve_dw3_row's, two accumulators) */
static inline __attribute__((always_inline)) void tfl_mve_dw3_two(const int8_t *r0, const int8_t *r1,
                                                                  const int8_t *r2, const int8_t *k, int8_t *y,
                                                                  int32_t c, int32_t yz, int32_t sw) {
    int32x4_t a0, a1, w0, w1, w2, xv, t;
#define TFL_MVE_DWR_TWO(ROW)                                                                                      \
    __asm__ volatile("vldrw.32 %q[a0], [%[k], #80]\n\t"                                                           \
                     "vldrw.32 %q[a1], [%[k], #80]\n\t" ROW("r0", 0) ROW("r1", 12) ROW("r2", 24)                  \
                     "vldrw.32 %q[w0], [%[k], #48]\n\t"                                                           \
                     "vldrw.32 %q[w1], [%[k], #64]\n\t"                                                           \
                     "vqrdmulh.s32 %q[a0], %q[a0], %q[w0]\n\t"                                                    \
                     "vqrdmulh.s32 %q[a1], %q[a1], %q[w0]\n\t" TFL_MVE_DWR_RQ("a0") TFL_MVE_DWR_RQ("a1")          \
                     : [a0] "=&w"(a0), [a1] "=&w"(a1), [w0] "=&w"(w0), [w1] "=&w"(w1), [w2] "=&w"(w2),            \
                       [x] "=&w"(xv), [t] "=&w"(t), [y] "+l"(y)                                                   \
                     : [r0] "l"(r0), [r1] "l"(r1), [r2] "l"(r2), [k] "l"(k), [c] "r"(c), [yz] "r"(yz)             \
                     : "memory")
#if TFL_MVE_ALL_REGS
    if (sw == 1) TFL_MVE_DWR_TWO(TFL_MVE_DWR_ROW2_S1);
    else TFL_MVE_DWR_TWO(TFL_MVE_DWR_ROW2_S2);
#else
    (void)a0, (void)a1, (void)w0, (void)w1, (void)w2, (void)xv, (void)t;
    (void)r0, (void)r1, (void)r2, (void)k, (void)y, (void)c, (void)yz, (void)sw;
#endif
#undef TFL_MVE_DWR_TWO
}
#undef TFL_MVE_DWR_LOOP
#undef TFL_MVE_DWR_RQ
#undef TFL_MVE_DWR_ROW2_S2
#undef TFL_MVE_DWR_ROW2_S1
#undef TFL_MVE_DWR_ROW_S2
#undef TFL_MVE_DWR_ROW_S1
#undef TFL_MVE_DWR_LDX

static int tfl_depthwise_s8_mve(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                                int8_t *y, uint32_t *scratch) {
    const int32_t c = p->c, h = p->h, wd = p->w, sw = p->sw, ow = p->ow, pl = p->pad_left, yz = p->y_zero;
    const int32_t pw = (ow - 1) * sw + 3; /* the columns a row of windows spans, from -pad_left */
    const uint32_t zb = (uint32_t)(uint8_t)p->x_zero * 0x01010101u;
    int32_t b, oy, ch, t, m;
    if (!TFL_MVE_ALL_REGS || scratch == NULL || p->depth_multiplier != 1 || c % 4 != 0 || p->oc != c || p->kh != 3 ||
        p->kw != 3 || p->dh != 1 || p->dw != 1 || sw > 2 || ow < 2 ||
        aotc_tfl_depthwise_s8_dsp_scratch_bytes(p) < 16 * (int64_t)pw ||
        !tfl_mve_requant_usual(p->shift, c, p->y_min, p->y_max))
        return 0;
    uint32_t *ring = scratch, *zrow = scratch + 3 * pw; /* 3 bands, a band of x_zero */
    /* the columns of a row inside the image: [m0, m1) of a band */
    const int32_t m0 = pl < pw ? pl : pw, m1 = pl + wd < pw ? pl + wd : pw;
    for (m = 0; m < 4 * pw; ++m) scratch[m] = zb; /* the bands' padding columns stay x_zero */
    for (ch = 0; ch < c; ch += 4) {
        /* tap t's 4 weights at 4 t; the requantisation's terms at 48 (mult), 64 (-right: every shift is) and the
         * sums' base at 80 (tfl_mve_dw3_row) */
        int8_t kq[96] __attribute__((aligned(16)));
        int32x4_t ws = vdupq_n_s32(0);
        for (t = 0; t < 9; ++t) {
            memcpy(kq + 4 * t, w + t * c + ch, 4);
            ws = vaddq_s32(ws, vldrbq_s32(kq + 4 * t));
        }
        vst1q_s32((int32_t *)(kq + 48), vld1q_s32(p->mult + ch));
        vst1q_s32((int32_t *)(kq + 64), vld1q_s32(p->shift + ch));
        vst1q_s32((int32_t *)(kq + 80), vsubq_s32(bias ? vld1q_s32(bias + ch) : vdupq_n_s32(0),
                                                 vmulq_n_s32(ws, p->x_zero)));
        for (b = 0; b < p->n; ++b) {
            const int8_t *xb = x + (int64_t)b * h * wd * c + ch + (int64_t)(m0 - pl) * c;
            int32_t next = 0, si = 0; /* the next input row to copy (rows are read in order) and its band */
            for (oy = 0; oy < p->oh; ++oy) {
                const int32_t iy0 = oy * p->sh - p->pad_top;
                const int8_t *band[3];
                if (next < iy0) next = iy0; /* (rows skipped at a row stride above 3) */
                for (; next <= iy0 + 2 && next < h; ++next) { /* copy row `next`'s 4 channels */
                    const int8_t *sp = xb + (int64_t)next * wd * c;
                    uint32_t *d = ring + si * pw + m0;
                    for (m = m0; m < m1; ++m, sp += c) *d++ = aotc_dsp_load32(sp);
                    si = si == 2 ? 0 : si + 1;
                }
                for (t = 0; t < 3; ++t) { /* row iy0 + t: next - iy0 - t bands before band si */
                    const int32_t iy = iy0 + t;
                    int32_t at = si - (next - iy);
                    at += at < 0 ? 3 : 0;
                    band[t] = iy < 0 || iy >= h ? (const int8_t *)zrow : (const int8_t *)(ring + at * pw);
                }
                int8_t *const yr = y + (((int64_t)b * p->oh + oy) * ow) * c + ch;
                if (ow >= 3) tfl_mve_dw3_row(band[0], band[1], band[2], kq, yr, c, ow / 3, yz, sw);
                if (ow % 3 == 2) { /* the last two */
                    const int32_t at = 4 * (ow - 2) * sw;
                    tfl_mve_dw3_two(band[0] + at, band[1] + at, band[2] + at, kq, yr + (int64_t)(ow - 2) * c, c, yz,
                                    sw);
                } else if (ow % 3 == 1) { /* the last 3 again (the same values: from the bands) */
                    const int32_t at = 4 * (ow - 3) * sw;
                    tfl_mve_dw3_row(band[0] + at, band[1] + at, band[2] + at, kq, yr + (int64_t)(ow - 3) * c, c, 1, yz,
                                    sw);
                }
            }
        }
    }
    return 1;
}
#undef TFL_MVE_DW_MAC
#endif /* AOTC_TFL_MVE && AOTC_TFL_MVE_DW */

#if AOTC_TFL_MVE && !AOTC_TFL_MVE_DW && AOTC_TFL_MVE_DW_COMPACT
/* ---- Helium's compact depthwise (AOTC_TFL_MVE_DW_COMPACT, issue 67) ------------------------------------------------
 * The M55's --flash-budget level "mve-dw-compact" (aot/flash.py), where Helium's 3 x 3 depthwise is left out: one
 * generic loop instead of its assembly, for a depth multiplier of 1, 8 channels or more and any window, stride or
 * dilation (the others return 0: the compact DSP paths, which dsp_paths.left_out keeps for them, or the plain loop).
 * 8 channels a vector in 16-bit lanes (a last part of under 8 the last 8 channels again: no predication); each
 * position's window clipped to the image once (no tap reads the padding); each tap's 8 bytes of x, less x_zero, and
 * of w widened by VLDRB.S16 and multiplied by VMULLB / VMULLT into the even and the odd channels' 32-bit sums (the
 * compact DSP path takes 4 channels a tap in about twice the instructions, and requantises channel by channel). The
 * sums, from the bias, requantised as requant_double (tfl_mve_rq) 4 lanes at a time, narrowed back into the
 * channels' order (VMOVNB / VMOVNT) and stored by one VSTRB.16: LiteRT's integers. */
__attribute__((noinline)) static int tfl_depthwise_s8_mvec(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                                 int8_t *y) {
    /* (p's fields read once: y's int8 stores could alias them) */
    const int32_t c = p->c, h = p->h, wd = p->w, kh = p->kh, kw = p->kw, dh = p->dh, dw = p->dw, oh = p->oh, ow = p->ow;
    const int32_t sh = p->sh, sw = p->sw, pt = p->pad_top, pl = p->pad_left, yz = p->y_zero;
    const ptrdiff_t xstep = (ptrdiff_t)dw * c, xrow = (ptrdiff_t)dh * wd * c, wrow = (ptrdiff_t)kw * c;
    const int16x8_t xz = vdupq_n_s16((int16_t)p->x_zero);
    const int32x4_t lo = vdupq_n_s32(p->y_min), hi = vdupq_n_s32(p->y_max);
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y;
    /* a RAM budget's plan may start y below x (overlap_bytes): each channel is then read and written once, position by
     * position, which the last part's channels done again would break */
    const int apart = ya >= xa + (uintptr_t)p->n * h * wd * c || xa >= ya + (uintptr_t)p->n * oh * ow * c;
    if (p->depth_multiplier != 1 || p->oc != c || c < 8 || (c % 8 != 0 && !apart)) return 0;
    for (int32_t o0 = 0; o0 < c; o0 += 8) {
        const int32_t o = o0 + 8 <= c ? o0 : c - 8;
        /* the group's terms, the even channels' lanes then the odd ones': the bias, mult, left shift, -right shift */
        int32_t t[4][2][4] __attribute__((aligned(16)));
        for (int32_t j = 0; j < 8; ++j) {
            const int32_t s = p->shift[o + j];
            t[0][j & 1][j >> 1] = bias ? bias[o + j] : 0, t[1][j & 1][j >> 1] = p->mult[o + j];
            t[2][j & 1][j >> 1] = s > 0 ? s : 0, t[3][j & 1][j >> 1] = s > 0 ? 0 : s;
        }
        int8_t *yp = y + o;
        for (int32_t b = 0; b < p->n; ++b)
            for (int32_t oy = 0; oy < oh; ++oy) {
                const int32_t iy0 = oy * sh - pt;
                int32_t ky0 = 0, ky1 = kh;
                tfl_taps_inside(iy0, dh, h, &ky0, &ky1);
                /* the row's first window row in x (column 0, channel o) */
                const int8_t *const xy = x + ((ptrdiff_t)b * h + iy0 + ky0 * dh) * wd * c + o;
                for (int32_t ox = 0; ox < ow; ++ox, yp += c) {
                    const int32_t ix0 = ox * sw - pl;
                    int32_t kx0 = 0, kx1 = kw;
                    tfl_taps_inside(ix0, dw, wd, &kx0, &kx1);
                    const int8_t *xr = xy + (ptrdiff_t)(ix0 + kx0 * dw) * c;
                    const int8_t *wr = w + ((ptrdiff_t)ky0 * kw + kx0) * c + o;
                    int32x4_t ae = vld1q_s32(t[0][0]), ao = vld1q_s32(t[0][1]);
                    for (int32_t i = ky0; i < ky1; ++i, xr += xrow, wr += wrow) {
                        const int8_t *xp = xr, *wp = wr;
                        for (int32_t j = kx0; j < kx1; ++j, xp += xstep, wp += c) {
                            const int16x8_t xv = vsubq_s16(vldrbq_s16(xp), xz), wv = vldrbq_s16(wp);
                            ae = vaddq_s32(ae, vmullbq_int_s16(xv, wv));
                            ao = vaddq_s32(ao, vmulltq_int_s16(xv, wv));
                        }
                    }
                    ae = vaddq_n_s32(tfl_mve_rq(ae, vld1q_s32(t[1][0]), vld1q_s32(t[2][0]), vld1q_s32(t[3][0])), yz);
                    ao = vaddq_n_s32(tfl_mve_rq(ao, vld1q_s32(t[1][1]), vld1q_s32(t[2][1]), vld1q_s32(t[3][1])), yz);
                    ae = vminq_s32(vmaxq_s32(ae, lo), hi), ao = vminq_s32(vmaxq_s32(ao, lo), hi);
                    vstrbq_s16(yp, vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), ae), ao));
                }
            }
    }
    return 1;
}
#endif /* AOTC_TFL_MVE && !AOTC_TFL_MVE_DW && AOTC_TFL_MVE_DW_COMPACT */

#if AOTC_QUANT_DSP && AOTC_TFL_DW_LOOP_SMALL && AOTC_TFL_MVE && !AOTC_TFL_MVE_DW && !AOTC_TFL_MVE_DW_COMPACT
/* The depthwise loop of last resort on the M55 where Helium's 3 x 3 depthwise and its compact loop are left out (the
 * level "mve-dw-small", aot/flash.py: every layer), in place of the scalar smallest loop: every shape, 4 output channels a vector in 32-bit lanes. Their input channels' bytes gathered by one VLDRB.S32 with
 * offsets (any depth multiplier; a last part's lanes read the last channel's and are not stored) less x_zero, their
 * weights loaded (the lanes past the channels as 0), multiplied and added lane by lane, each position's window clipped
 * to the image once; the sums requantised as requant_double 4 lanes a vector (tfl_mve_rq): LiteRT's integers. */
__attribute__((noinline)) static void tfl_depthwise_s8_mves(const aotc_tfl_conv_params *p, const int8_t *x,
                                                          const int8_t *w, const int32_t *bias, int8_t *y,
                                                          const int32_t r[6]) {
    /* (p's fields read once: y's int8 stores could alias them); images [r0, r1), rows [r2, r3), columns [r4, r5) */
    const int32_t c = p->c, oc = p->oc, h = p->h, wd = p->w, kh = p->kh, kw = p->kw, dh = p->dh, dw = p->dw;
    const int32_t oh = p->oh, ow = p->ow, sh = p->sh, sw = p->sw, pt = p->pad_top, pl = p->pad_left, yz = p->y_zero;
    const ptrdiff_t xstep = (ptrdiff_t)dw * c, xrow = (ptrdiff_t)dh * wd * c, wrow = (ptrdiff_t)kw * oc;
    const int32x4_t xz = vdupq_n_s32(p->x_zero), lo = vdupq_n_s32(p->y_min), hi = vdupq_n_s32(p->y_max);
    for (int32_t o = 0; o < oc; o += 4) {
        const mve_pred16_t pr = vctp32q((uint32_t)(oc - o));
        /* each lane's input channel (a lane past oc: the last output channel's) and terms */
        int32_t t[5][4] __attribute__((aligned(16)));
        for (int32_t j = 0; j < 4; ++j) {
            const int32_t q = o + j < oc ? o + j : oc - 1, s = p->shift[q];
            t[0][j] = q / p->depth_multiplier, t[1][j] = bias ? bias[q] : 0, t[2][j] = p->mult[q];
            t[3][j] = s > 0 ? s : 0, t[4][j] = s > 0 ? 0 : s;
        }
        const uint32x4_t at = vreinterpretq_u32_s32(vld1q_s32(t[0]));
        for (int32_t b = r[0]; b < r[1]; ++b)
            for (int32_t oy = r[2]; oy < r[3]; ++oy) {
                const int32_t iy0 = oy * sh - pt;
                int32_t ky0 = 0, ky1 = kh;
                tfl_taps_inside(iy0, dh, h, &ky0, &ky1);
                const int8_t *const xy = x + ((ptrdiff_t)b * h + iy0 + ky0 * dh) * wd * c; /* (column 0, channel 0) */
                int8_t *yp = y + (((ptrdiff_t)b * oh + oy) * ow + r[4]) * oc + o;
                for (int32_t ox = r[4]; ox < r[5]; ++ox, yp += oc) {
                    const int32_t ix0 = ox * sw - pl;
                    int32_t kx0 = 0, kx1 = kw;
                    tfl_taps_inside(ix0, dw, wd, &kx0, &kx1);
                    const int8_t *xr = xy + (ptrdiff_t)(ix0 + kx0 * dw) * c;
                    const int8_t *wr = w + ((ptrdiff_t)ky0 * kw + kx0) * oc + o;
                    int32x4_t acc = vld1q_s32(t[1]);
                    for (int32_t i = ky0; i < ky1; ++i, xr += xrow, wr += wrow) {
                        const int8_t *xp = xr, *wp = wr;
                        for (int32_t j = kx0; j < kx1; ++j, xp += xstep, wp += oc)
                            acc = vaddq_s32(acc, vmulq_s32(vsubq_s32(vldrbq_gather_offset_s32(xp, at), xz),
                                                           vldrbq_z_s32(wp, pr)));
                    }
                    acc = vaddq_n_s32(tfl_mve_rq(acc, vld1q_s32(t[2]), vld1q_s32(t[3]), vld1q_s32(t[4])), yz);
                    vstrbq_p_s32(yp, vminq_s32(vmaxq_s32(acc, lo), hi), pr);
                }
            }
    }
}

/* tfl_depthwise_s8_mves over every position: each 4 channels in one pass over the positions, or, where a RAM budget's
 * plan may start y below x (overlap_bytes) at a depth multiplier above 1 (an input of one channel), the positions one
 * at a time, every channel of one before the next (the bound overlap_bytes takes there) */
static void tfl_depthwise_s8_mves_all(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                      const int32_t *bias, int8_t *y) {
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y;
    const int apart = ya >= xa + (uintptr_t)p->n * p->h * p->w * p->c ||
                      xa >= ya + (uintptr_t)p->n * p->oh * p->ow * p->oc;
    if (apart || p->depth_multiplier == 1 || p->oc <= 4) {
        const int32_t all[6] = {0, p->n, 0, p->oh, 0, p->ow};
        tfl_depthwise_s8_mves(p, x, w, bias, y, all);
        return;
    }
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t one[6] = {b, b + 1, oy, oy + 1, ox, ox + 1};
                tfl_depthwise_s8_mves(p, x, w, bias, y, one);
            }
}
#endif

#if AOTC_QUANT_DSP && AOTC_TFL_DW_COMPACT && !AOTC_TFL_DW_DSP && !AOTC_TFL_DW_MULT
/* ---- The compact path (AOTC_TFL_DW_COMPACT, issue 67) --------------------------------------------------------------
 * A --flash-budget level's depthwise (aot/flash.py "dw-compact"), between the general DSP paths and the plain loop:
 * compiled only where every other depthwise DSP path is left out. Any depthwise shape: 4 output channels at a time
 * (any depth multiplier; a last group of fewer than 4 repeats its last channel, not stored), each tap one word of the 4
 * channels' input bytes, 2 SXTB16s and 4 multiply-accumulates on the weights widened once a group. A run of positions
 * whose windows lie inside the image is read in place (a 3 x 3 window by aotc_dsp_dw3x3_run's assembly, others by
 * tfl_dsp_dwc_taps); any other position's window is first copied as words (x_zero's bytes in the padding, whose share
 * the base takes off as tfl_dsp_dw_one's; the 4 channels' bytes gathered where they are not 4 adjacent inputs). No
 * ring, band, columns, stride-2 or doubled-sum code: about 2 KB of code at -Os. A run's sums requantised channel by
 * channel by tfl_dsp_requant_run: LiteRT's integers. */
#define TFL_DWC_RUN 16 /* the positions whose sums are requantised at a time (on the stack) */

/* aotc_dsp_dw3x3_run for any window (kh x kw taps; in C) */
__attribute__((noinline)) static void tfl_dsp_dwc_taps(const int8_t *x, int32_t pstep, int32_t count, int32_t step,
                                                       int32_t row, int32_t kh, int32_t kw, const uint32_t *wq,
                                                       const int32_t *base, int32_t *acc) {
    int32_t i, ky, kx;
    for (i = 0; i < count; ++i, x += pstep, acc += 4) {
        int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3];
        const uint32_t *wp = wq;
        const int8_t *r = x;
        for (ky = 0; ky < kh; ++ky, r += row)
            for (kx = 0; kx < kw; ++kx, wp += 2) AOTC_DSP_DW_TAP(aotc_dsp_load32(r + kx * step), wp);
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
    }
}

/* the bytes at p[at[0]], ..., p[at[3]] as one word (lane j in byte j) */
static inline uint32_t tfl_dsp_dwc_gather(const int8_t *p, const int32_t *at) {
    return (uint32_t)(uint8_t)p[at[0]] | (uint32_t)(uint8_t)p[at[1]] << 8 | (uint32_t)(uint8_t)p[at[2]] << 16 |
           (uint32_t)(uint8_t)p[at[3]] << 24;
}

/* A lane's requantisation, set once a group: tfl_dsp_dw_requant_ssat's terms where it takes SSAT's form */
typedef struct {
    int32_t ch, ssat, s, mult, ra, right;
    int64_t bound; /* at least every |sum| */
} tfl_dsp_dwc_rq;

/* The sums of n positions' lanes (acc[4 i + j]) requantised to yo (the first position's lane 0), the first `lanes`
 * of them: SSAT's form where the lane takes it, else tfl_dsp_requant_run (one copy of it). */
__attribute__((noinline)) static void tfl_dsp_dwc_store(const aotc_tfl_conv_params *p, const int32_t *acc, int32_t n,
                                                        const tfl_dsp_dwc_rq *rq, int32_t lanes, int8_t *yo) {
    int32_t j;
    for (j = 0; j < lanes; ++j, ++rq) {
#if !AOTC_TFL_MVE
        if (rq->ssat) {
            tfl_dsp_dw_requant_ssat(acc + j, n, rq->s, rq->mult, rq->ra, rq->right, yo + j, p->oc);
            continue;
        }
#endif
        tfl_dsp_requant_run(acc + j, 4, n, 0, p->mult[rq->ch], p->shift[rq->ch], p->y_zero, p->y_min, p->y_max, yo + j,
                            p->oc, rq->bound);
    }
}

/* The window of the position whose top-left input is (iy0, ix0) as words (tfl_depthwise_s8_compact's 4 lanes each:
 * mode 0 the 4 bytes from xo[0], 1 gathered from xo[0..3], 2 xo[0]'s byte in all 4), x_zero's bytes (zb) in the
 * padding. */
__attribute__((noinline)) static void tfl_dsp_dwc_window(const aotc_tfl_conv_params *p, const int8_t *xb, int32_t iy0,
                                                         int32_t ix0, const int32_t *xo, int mode, uint32_t zb,
                                                         uint32_t *win) {
    /* (p's fields and xo's read once: the stores to win could alias them) */
    const int32_t c = p->c, wd = p->w, h = p->h, kh = p->kh, kw = p->kw, dh = p->dh, dw = p->dw, step = dw * c;
    const int32_t x0 = xo[0];
    int32_t ky, kx;
    for (ky = 0; ky < kh; ++ky) {
        const int32_t iy = iy0 + ky * dh;
        if ((uint32_t)iy >= (uint32_t)h) {
            for (kx = 0; kx < kw; ++kx) *win++ = zb;
            continue;
        }
        const int8_t *xp = xb + ((ptrdiff_t)iy * wd + ix0) * c + x0;
        for (kx = 0; kx < kw; ++kx, xp += step) {
            const uint32_t ix = (uint32_t)(ix0 + kx * dw);
            *win++ = ix >= (uint32_t)wd ? zb
                     : mode == 0       ? aotc_dsp_load32(xp)
                     : mode == 1       ? tfl_dsp_dwc_gather(xp - x0, xo)
                                       : (uint32_t)(uint8_t)*xp * 0x01010101u;
        }
    }
}

__attribute__((noinline)) static int tfl_depthwise_s8_compact(const aotc_tfl_conv_params *p, const int8_t *x,
                                                              const int8_t *w, const int32_t *bias, int8_t *y,
                                                              uint32_t *scratch) {
    uint32_t local[3 * TFL_DSP_TAPS + 4 * TFL_DWC_RUN];
    int32_t q[4], xo[4], base[4];
    tfl_dsp_dwc_rq rq[4];
    const int32_t kh = p->kh, kw = p->kw, taps = kh * kw, c = p->c, oc = p->oc, h = p->h, wd = p->w;
    const int32_t step = p->dw * c, row = p->dh * wd * c, pstep = p->sw * c;
    const uint32_t zb = (uint32_t)(uint8_t)p->x_zero * 0x01010101u;
    int32_t o, i, j, k, t, b, oy, ox, n;
    /* the widened weights, a window's words and a run's sums: on the stack up to TFL_DSP_TAPS taps, else in the
     * layer's scratch where the plan gave enough (micro_speech's 10 x 8 windows: tfl_depthwise_s8_mult's) */
    uint32_t *const wq = taps <= TFL_DSP_TAPS ? local : scratch, *const win = wq + 2 * taps;
    int32_t *const acc = (int32_t *)(win + taps);
    if (taps > TFL_DSP_TAPS &&
        (scratch == NULL || aotc_tfl_depthwise_s8_dsp_scratch_bytes(p) < 4 * (3 * (int64_t)taps + 4 * TFL_DWC_RUN)))
        return 0;
    /* output columns [ox_lo, ox_hi) have the whole window inside the row */
    int32_t ox_lo = (p->pad_left + p->sw - 1) / p->sw, ox_hi = 0;
    while (ox_hi < p->ow && ox_hi * p->sw - p->pad_left + (kw - 1) * p->dw < wd) ++ox_hi;
    for (o = 0; o < oc; o += 4) {
        const int32_t lanes = oc - o < 4 ? oc - o : 4;
        const int gather = p->depth_multiplier != 1 || lanes < 4;
        int32_t ws[4] = {0, 0, 0, 0};
        uint32_t b_max = 0;
        for (j = 0; j < 4; ++j) {
            q[j] = o + j < oc ? o + j : oc - 1;
            xo[j] = q[j] / p->depth_multiplier;
        }
        const int one = xo[0] == xo[3]; /* the 4 outputs of one input channel (a depth multiplier of 4 or more) */
        for (t = 0; t < taps; ++t) { /* the 4 channels' weights of each tap widened, and summed */
            const uint32_t v = tfl_dsp_dwc_gather(w + (ptrdiff_t)t * oc, q);
            wq[2 * t] = (uint32_t)__sxtb16(v), wq[2 * t + 1] = aotc_dsp_sxtb16_hi(v);
            for (j = 0; j < 4; ++j) ws[j] += (int8_t)(v >> (8 * j));
        }
        for (j = 0; j < 4; ++j) { /* the base: the bias less x_zero's share; the bias's largest size for the bound */
            const int32_t bj = bias ? bias[q[j]] : 0;
            const uint32_t mag = bj < 0 ? 0u - (uint32_t)bj : (uint32_t)bj;
            base[j] = (int32_t)((uint32_t)bj - (uint32_t)p->x_zero * (uint32_t)ws[j]);
            b_max = mag > b_max ? mag : b_max;
        }
        const int64_t bound = (int64_t)taps * TFL_DSP_PRODUCT_MAX + (int64_t)b_max;
        for (j = 0; j < 4; ++j) { /* each lane's requantisation: SSAT's form (tfl_dsp_dw_store's test), else none */
            const int32_t mult = p->mult[q[j]], shift = p->shift[q[j]];
            const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
            rq[j].ch = q[j], rq[j].mult = mult, rq[j].s = left + 1, rq[j].right = right;
            rq[j].ssat = !AOTC_TFL_MVE && p->y_min == -128 && p->y_max == 127 && mult != INT32_MIN && left < 30 &&
                         bound < ((int64_t)1 << (30 - left)) && right > 0 && right <= 22;
            rq[j].ra = rq[j].ssat ? (1 << (right - 1)) + p->y_zero * (1 << right) : 0;
            rq[j].bound = bound;
        }
        for (b = 0; b < p->n; ++b) {
            const int8_t *xb = x + (ptrdiff_t)b * h * wd * c;
            int8_t *yo = y + (ptrdiff_t)b * p->oh * p->ow * oc + o;
            int32_t m = 0; /* the sums in acc (a run may span rows: y's positions follow each other) */
            for (oy = 0; oy < p->oh; ++oy) {
                const int32_t iy0 = oy * p->sh - p->pad_top;
                const int inside = !gather && iy0 >= 0 && iy0 + (kh - 1) * p->dh < h;
                for (ox = 0; ox < p->ow; ox += n) {
                    n = p->ow - ox < TFL_DWC_RUN - m ? p->ow - ox : TFL_DWC_RUN - m;
                    for (i = 0; i < n; i += k) {
                        const int32_t at = ox + i, ix0 = at * p->sw - p->pad_left;
                        const int8_t *src = (const int8_t *)win;
                        int32_t sx = 4, sy = 4 * kw;
                        k = 1;
                        if (inside && at >= ox_lo && at < ox_hi) { /* read in place */
                            k = ox_hi - at < n - i ? ox_hi - at : n - i;
                            src = xb + ((ptrdiff_t)iy0 * wd + ix0) * c + o, sx = step, sy = row;
                        } else { /* the window's words, x_zero's bytes in the padding */
                            tfl_dsp_dwc_window(p, xb, iy0, ix0, xo, gather + one, zb, win);
                        }
                        if (kh == 3 && kw == 3)
                            aotc_dsp_dw3x3_run(src, pstep, k, sx, sy, wq, base, acc + 4 * (m + i));
                        else
                            tfl_dsp_dwc_taps(src, pstep, k, sx, sy, kh, kw, wq, base, acc + 4 * (m + i));
                    }
                    m += n;
                    if (m == TFL_DWC_RUN) {
                        tfl_dsp_dwc_store(p, acc, m, rq, lanes, yo);
                        yo += m * oc, m = 0;
                    }
                }
            }
            if (m > 0) tfl_dsp_dwc_store(p, acc, m, rq, lanes, yo);
        }
    }
    return 1;
}
#endif

#if AOTC_QUANT_DSP && AOTC_TFL_DW_MULT_COMPACT && !AOTC_TFL_DW_MULT
/* ---- The compact multiplier path (AOTC_TFL_DW_MULT_COMPACT, issue 67) -----------------------------------------------
 * A --flash-budget level's depthwise at a depth multiplier above 1 (aot/flash.py "dw-compact"), compiled only where
 * tfl_depthwise_s8_mult is left out: its arithmetic (an input channel's window rows widened to 16 bits, x_zero in the
 * padding, each word of two columns multiplied by 4 output channels' pairs of weights by SMLAD, two positions at a
 * time, the sums started at the bias less x_zero times the weights' sum) in C, without its ring (the kh window rows of
 * an output row widened again for each, into the ring's place in the same scratch), its assembly or its runs of
 * sums: each pair of positions' sums requantised at once (SSAT's form where tfl_dsp_dw_usual allows, else LiteRT's
 * requant_double). TFLM's micro_speech (one input channel, 10 x 8 windows at stride 2, m 8): about 1.6 KB of code at
 * -Os against the multiplier path's 3 KB. Column dilation 1 and the plan's scratch, as tfl_depthwise_s8_mult; returns 0
 * elsewhere (the plain loop then runs). With AOTC_TFL_DW_MULTC_PAIRS 0 (the "dwm-single" level) one position a turn, each
 * output by requant_double. */

/* Two positions' sums of 4 channels: A's window from s, B's two columns (a word) after it (tfl_dsp_dwm_pairs' pair), by
 * the block wb (the sums' start, then kh x kq pairs of the 4 channels' weight pairs), window rows pr halfwords apart;
 * A's 4 sums then B's into acc */
__attribute__((noinline)) static void tfl_dsp_dwmc_sums(const int16_t *s, int32_t kh, int32_t kq, int32_t pr,
                                                        const uint32_t *wb, int32_t *acc) {
    int32_t a0 = (int32_t)wb[0], a1 = (int32_t)wb[1], a2 = (int32_t)wb[2], a3 = (int32_t)wb[3];
#if AOTC_TFL_DW_MULTC_PAIRS
    int32_t b0 = a0, b1 = a1, b2 = a2, b3 = a3;
#endif
    const uint32_t *wp = wb + 4, *const we = wp + 4 * kh * kq;
    const int16_t *re = s + 2 * kq; /* the window row's end (then the next row's: pr halfwords on) */
#if !AOTC_TFL_DW_MULTC_PAIRS && AOTC_DSP_ASM /* (gcc -Os put each weight load by its SMLAD: 1.03x the cycles) */
    const ptrdiff_t skip = 2 * (pr - 2 * (ptrdiff_t)kq), row = 2 * (ptrdiff_t)pr; /* (bytes) */
    uint32_t xv, u, v;
    __asm__("1:\n\t"
            "ldr %[xv], [%[s]], #4\n\t"
            "ldr %[u], [%[wp]], #4\n\t"
            "ldr %[v], [%[wp]], #4\n\t"
            "smlad %[a0], %[xv], %[u], %[a0]\n\t"
            "smlad %[a1], %[xv], %[v], %[a1]\n\t"
            "ldr %[u], [%[wp]], #4\n\t"
            "ldr %[v], [%[wp]], #4\n\t"
            "smlad %[a2], %[xv], %[u], %[a2]\n\t"
            "smlad %[a3], %[xv], %[v], %[a3]\n\t"
            "cmp %[s], %[re]\n\t"
            "bne 1b\n\t"
            "cmp %[wp], %[we]\n\t"
            "beq 2f\n\t"
            "add %[s], %[s], %[skip]\n\t"
            "add %[re], %[re], %[row]\n\t"
            "b 1b\n"
            "2:\n\t"
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [s] "+r"(s), [wp] "+r"(wp), [re] "+r"(re),
              [xv] "=&r"(xv), [u] "=&r"(u), [v] "=&r"(v)
            : [we] "r"(we), [skip] "r"(skip), [row] "r"(row)
            : "cc", "memory");
#else
    for (;;) { /* one loop over the window's pairs, a row's end its one test more */
#if AOTC_TFL_DW_MULTC_PAIRS
        const int32_t xa = (int32_t)aotc_dsp_load32(s), xb = (int32_t)aotc_dsp_load32(s + 2);
        a0 = __smlad(xa, (int32_t)wp[0], a0), b0 = __smlad(xb, (int32_t)wp[0], b0);
        a1 = __smlad(xa, (int32_t)wp[1], a1), b1 = __smlad(xb, (int32_t)wp[1], b1);
        a2 = __smlad(xa, (int32_t)wp[2], a2), b2 = __smlad(xb, (int32_t)wp[2], b2);
        a3 = __smlad(xa, (int32_t)wp[3], a3), b3 = __smlad(xb, (int32_t)wp[3], b3);
#else
        const int32_t xa = (int32_t)aotc_dsp_load32(s);
        a0 = __smlad(xa, (int32_t)wp[0], a0), a1 = __smlad(xa, (int32_t)wp[1], a1);
        a2 = __smlad(xa, (int32_t)wp[2], a2), a3 = __smlad(xa, (int32_t)wp[3], a3);
#endif
        s += 2, wp += 4;
        if (s == re) {
            if (wp == we) break;
            s += pr - 2 * kq, re += pr;
        }
    }
#endif
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
#if AOTC_TFL_DW_MULTC_PAIRS
    acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;
#endif
}

#if AOTC_TFL_DW_MULTC_PAIRS
/* Two positions' sums of the block's nch channels [ch, ch + nch) (acc: A's 4, B's 4) requantised to ya and yb (NULL:
 * A's alone): by the terms rq where rq[0] is not 0 (tfl_dsp_dw_requant_ssat's arithmetic at left 0), else by
 * requant_double */
__attribute__((noinline)) static void tfl_dsp_dwmc_store(const aotc_tfl_conv_params *p, const int32_t *acc,
                                                         const uint32_t *rq, int32_t ch, int32_t nch, int8_t *ya,
                                                         int8_t *yb) {
    int32_t j;
    for (; ya != NULL; ya = yb, yb = NULL, acc += 4) {
        if (rq[0] != 0) {
            const uint32_t *r = rq;
            for (j = 0; j < nch; ++j, r += 3) {
                const int32_t s2 = (int32_t)((uint32_t)acc[j] << 1);
                ya[j] = (int8_t)__ssat((tfl_dsp_smmlar(s2, (int32_t)r[0], (int32_t)r[1]) + (s2 >> 31)) >> r[2], 8);
            }
        } else {
            for (j = 0; j < nch; ++j)
                ya[j] = clamp8(requant_double(acc[j], p->mult[ch + j], p->shift[ch + j]) + p->y_zero, p->y_min,
                               p->y_max);
        }
    }
}

#else
/* One position's sums of the block's channels [ch, ch + nch) requantised to ya by requant_double (one position a
 * turn, AOTC_TFL_DW_MULTC_PAIRS 0: no SSAT terms, smaller; the layer's terms in registers) */
__attribute__((noinline)) static void tfl_dsp_dwmc_store1(const aotc_tfl_conv_params *p, const int32_t *acc, int32_t ch,
                                                          int32_t nch, int8_t *ya) {
    const int32_t *const mu = p->mult + ch, *const sh = p->shift + ch, yz = p->y_zero, lo = p->y_min, hi = p->y_max;
    for (int32_t j = 0; j < nch; ++j) ya[j] = clamp8(requant_double(acc[j], mu[j], sh[j]) + yz, lo, hi);
}
#endif

__attribute__((noinline)) static int tfl_depthwise_s8_multc(const aotc_tfl_conv_params *p, const int8_t *x,
                                                            const int8_t *w, const int32_t *bias, int8_t *y,
                                                            uint32_t *AOTC_RESTRICT scratch) {
    const int32_t m = p->depth_multiplier, kh = p->kh, kw = p->kw, oc = p->oc, kq = TFL_DSP_DWM_KQ(p), sw = p->sw;
    const int32_t pr = TFL_DSP_DWM_ROW(p), blocks = (m + 3) / 4, bw = 16 + 4 * kh * kq;
    int16_t *const band = (int16_t *)(scratch + blocks * bw); /* (within the ring's words: kh rows, not 2 x span) */
    /* A's positions: at stride 1 ox and ox + 1 of each 4 (B two on), at 2 every other (B the next), above every one
     * (B none: computed, not stored) */
    const int32_t adv = sw == 1 ? 4 : sw == 2 ? 2 : 1, na = sw == 1 ? 2 : 1, bs = sw == 1 ? 2 : 1;
    int32_t acc[8], ci, b, oy, ox, blk, j, t, k;
    if (scratch == NULL || p->dw != 1) return 0;
    for (ci = 0; ci < p->c; ++ci) {
        /* the blocks of outputs ci m .. ci m + m - 1: each the 4 channels' terms (rq[0] 0: requant_double's), the
         * sums' start, the pairs of weights (the channels past m 0) */
        uint32_t b_max = 0;
        for (blk = 0; blk < blocks; ++blk) {
            uint32_t *const wb = scratch + blk * bw;
            const int32_t ch = ci * m + 4 * blk;
            for (j = 0; j < 4; ++j) {
                const int on = 4 * blk + j < m;
                int32_t sum = 0;
                for (t = 0; t < kh * kq; ++t) {
                    const int32_t kx = 2 * (t % kq);
                    const int8_t *w0 = w + (ptrdiff_t)(t / kq * kw + kx) * oc + ch + j;
                    const int32_t lo = on ? w0[0] : 0, hi = on && kx + 1 < kw ? w0[oc] : 0;
                    wb[16 + 4 * t + j] = (uint16_t)lo | (uint32_t)hi << 16;
                    sum += lo + hi;
                }
                const uint32_t bo = on && bias ? (uint32_t)bias[ch + j] : 0u, mag = (int32_t)bo < 0 ? 0u - bo : bo;
                b_max = mag > b_max ? mag : b_max;
                wb[12 + j] = bo - (uint32_t)p->x_zero * (uint32_t)sum;
            }
        }
        const int64_t bound = (int64_t)kh * kw * TFL_DSP_PRODUCT_MAX + (int64_t)b_max;
        for (blk = 0; blk < blocks; ++blk) /* (after every block's bias: the bound is the input channel's) */
            if (!(AOTC_TFL_DW_MULTC_PAIRS && 4 * blk + 4 <= m &&
                  tfl_dsp_dw_usual(p, ci * m + 4 * blk, bound, scratch + blk * bw)))
                scratch[blk * bw] = 0;
        for (b = 0; b < p->n; ++b) {
            const int8_t *xb = x + (ptrdiff_t)b * p->h * p->w * p->c + ci;
            for (oy = 0; oy < p->oh; ++oy) {
                int8_t *yr = y + ((ptrdiff_t)b * p->oh + oy) * p->ow * oc + (ptrdiff_t)ci * m;
                /* the band's rows: at row dilation 1 the kh - sh the output row before read moved up (once a
                 * row, not widened again), the others widened */
                k = oy > 0 && p->dh == 1 && p->sh < kh ? kh - p->sh : 0;
                if (k > 0) memmove(band, band + p->sh * pr, 2 * (size_t)k * (size_t)pr);
                for (; k < kh; ++k) tfl_dsp_dwm_row(p, xb, oy * p->sh - p->pad_top + k * p->dh, pr, band + k * pr);
                for (blk = 0; blk < blocks; ++blk) {
                    const uint32_t *const rq = scratch + blk * bw;
                    const int32_t nch = m - 4 * blk < 4 ? m - 4 * blk : 4, ch = ci * m + 4 * blk;
#if AOTC_TFL_DW_MULTC_PAIRS
                    for (ox = 0; ox < p->ow; ox += adv)
                        for (t = ox; t < ox + na && t < p->ow; ++t) {
                            int8_t *const ya = yr + (ptrdiff_t)t * oc + 4 * blk;
                            tfl_dsp_dwmc_sums(band + t * sw, kh, kq, pr, rq + 12, acc);
                            tfl_dsp_dwmc_store(p, acc, rq, ch, nch, ya,
                                               sw <= 2 && t + bs < p->ow ? ya + bs * oc : NULL);
                        }
#else
                    const int16_t *bt = band;
                    int8_t *ya = yr + 4 * blk;
                    (void)adv, (void)na, (void)bs, (void)ox;
                    for (t = 0; t < p->ow; ++t, bt += sw, ya += oc) { /* one position a turn */
                        tfl_dsp_dwmc_sums(bt, kh, kq, pr, rq + 12, acc);
                        tfl_dsp_dwmc_store1(p, acc, ch, nch, ya);
                    }
#endif
                }
            }
        }
    }
    return 1;
}
#endif

/* tfl_depthwise_s8_m4 beside the plain loop's smallest form (DW_SMALL_MULT4), not where Helium's loop of last resort
 * takes that form's place (aotc_tfl_depthwise_s8's first branch below) */
#define TFL_DW_SMALL_M4                                                                                            \
    (AOTC_QUANT_DSP && AOTC_TFL_DW_LOOP_SMALL && AOTC_TFL_DW_SMALL_MULT4 && AOTC_TFL_DW_LOOP_MULT4 &&               \
     !(AOTC_TFL_MVE && !AOTC_TFL_MVE_DW && !AOTC_TFL_MVE_DW_COMPACT))
#if AOTC_QUANT_DSP && AOTC_TFL_DW_LOOP_MULT4 && (!AOTC_TFL_DW_LOOP_SMALL || TFL_DW_SMALL_M4)
/* The plain loop's steps at a depth multiplier of 4, 8, ... (DW_LOOP_MULT4): x's and w's from a tap to the next in a
 * window row and from a window row to the next, and x_zero */
typedef struct {
    ptrdiff_t xstep, wstep, xrow, wrow;
    int32_t xz;
} tfl_dw_m4_steps;

/* The sums of 4 output channels of one input value over a (clipped) window of rows x cols taps from xr and wr: two taps
 * a turn, each tap's 4 weights one word widened by SXTB16 into SMLABB / SMLATB (issue 67: a function of its own, so
 * that -Os keeps its steps and sums in registers) */
__attribute__((noinline)) static void tfl_dw_m4_window(const int8_t *xr, const int8_t *wr, int32_t rows, int32_t cols,
                                                       const tfl_dw_m4_steps *st, int32_t *acc) {
    const ptrdiff_t xs = st->xstep, ws = st->wstep;
    const int32_t xz = st->xz;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, n;
#define TFL_DW_M4_TAP(xv, u)                                                                                    \
    do {                                                                                                        \
        const int32_t e_ = __sxtb16((int32_t)(u)), o_ = (int32_t)aotc_dsp_sxtb16_hi(u);                        \
        a0 = __smlabb(e_, (xv), a0), a2 = __smlatb(e_, (xv), a2);                                             \
        a1 = __smlabb(o_, (xv), a1), a3 = __smlatb(o_, (xv), a3);                                             \
    } while (0)
    for (; rows > 0; --rows, xr += st->xrow, wr += st->wrow) {
        const int8_t *xp = xr, *wp = wr;
        n = cols;
#if AOTC_DSP_ASM /* (gcc -Os kept the steps on the stack: 3 loads more a turn) */
        int32_t t0, t1, t2;
#define TFL_DW_M4_ASM(xa, wa)                                                                                   \
    "ldrsb %[t0], " xa "\n\t"                                                                                  \
    "ldr %[t1], " wa "\n\t"                                                                                    \
    "sub %[t0], %[t0], %[xz]\n\t"                                                                               \
    "sxtb16 %[t2], %[t1]\n\t"                                                                                   \
    "sxtb16 %[t1], %[t1], ror #8\n\t"                                                                           \
    "smlabb %[a0], %[t2], %[t0], %[a0]\n\t"                                                                     \
    "smlatb %[a2], %[t2], %[t0], %[a2]\n\t"                                                                     \
    "smlabb %[a1], %[t1], %[t0], %[a1]\n\t"                                                                     \
    "smlatb %[a3], %[t1], %[t0], %[a3]\n\t"
        __asm__("subs %[n], %[n], #2\n\t"
                "blt 2f\n"
                "1:\n\t" TFL_DW_M4_ASM("[%[xp]]", "[%[wp]]") TFL_DW_M4_ASM("[%[xp], %[xs]]", "[%[wp], %[ws]]")
                "add %[xp], %[xp], %[xs], lsl #1\n\t"
                "add %[wp], %[wp], %[ws], lsl #1\n\t"
                "subs %[n], %[n], #2\n\t"
                "bge 1b\n"
                "2:\n\t"
                "adds %[n], %[n], #2\n\t"
                "beq 3f\n\t" TFL_DW_M4_ASM("[%[xp]]", "[%[wp]]")
                "3:\n\t"
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xp] "+r"(xp), [wp] "+r"(wp),
                  [n] "+r"(n), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2)
                : [xs] "r"(xs), [ws] "r"(ws), [xz] "r"(xz)
                : "cc", "memory");
#undef TFL_DW_M4_ASM
#else
        for (; n >= 2; n -= 2, xp += 2 * xs, wp += 2 * ws) {
            const int32_t x0 = xp[0] - xz, x1 = xp[xs] - xz;
            const uint32_t u = aotc_dsp_load32(wp), v = aotc_dsp_load32(wp + ws);
            TFL_DW_M4_TAP(x0, u);
            TFL_DW_M4_TAP(x1, v);
        }
        if (n > 0) TFL_DW_M4_TAP(xp[0] - xz, aotc_dsp_load32(wp));
#endif
    }
#undef TFL_DW_M4_TAP
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}
#endif

#if TFL_DW_SMALL_M4
/* One position's oc outputs at a depth multiplier of 4, 8, ...: 4 channels of one input value a window of rows x cols
 * taps from xw and ww (tfl_dw_m4_window), requantised as requant_double (the plain loop's faster form does the same
 * inside its own loop) */
static inline __attribute__((always_inline)) void tfl_dw_m4_position(const aotc_tfl_conv_params *p, const int8_t *xw,
                                                                     const int8_t *ww, int32_t rows, int32_t cols,
                                                                     const tfl_dw_m4_steps *st, const int32_t *bias,
                                                                     int8_t *yp) {
    const int32_t oc = p->oc;
    for (int32_t o = 0; o < oc; o += 4) {
        int32_t sums[4];
        tfl_dw_m4_window(xw + o / p->depth_multiplier, ww + o, rows, cols, st, sums);
        for (int32_t j = 0; j < 4; ++j) {
            const int32_t acc = sums[j] + (bias ? bias[o + j] : 0);
            const int32_t v = requant_double(acc, p->mult[o + j], p->shift[o + j]) + p->y_zero;
            yp[o + j] = clamp8(v, p->y_min, p->y_max);
        }
    }
}

/* A depth multiplier of 4, 8, ... where the plain loop is compiled in its smallest form (SMALL_MULT4, issue 67): a
 * --ram-budget that leaves such a layer no scratch for tfl_depthwise_s8_mult ran it there at 35 est. cycles a MAC
 * on the M4 (TFLM micro_speech at 4,720 B: 11.67 M est. cycles in all against 0.54 M without the budget). Each
 * position's window clipped once, 4 output channels of one input value a window (tfl_dw_m4_position): 1.59 M, for
 * 1.5 KB more code where the plain loop's faster form (DW_LOOP_SMALL 0) took 3.2 KB. */
static void tfl_depthwise_s8_m4(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                                int8_t *y) {
    const int32_t c = p->c, kw = p->kw, oc = p->oc;
    const tfl_dw_m4_steps m4 = {(ptrdiff_t)p->dw * c, oc, (ptrdiff_t)p->dh * p->w * c, (ptrdiff_t)kw * oc, p->x_zero};
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy) {
            const int32_t iy0 = oy * p->sh - p->pad_top;
            int32_t ky0 = 0, ky1 = p->kh;
            tfl_taps_inside(iy0, p->dh, p->h, &ky0, &ky1);
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t ix0 = ox * p->sw - p->pad_left;
                int32_t kx0 = 0, kx1 = kw;
                tfl_taps_inside(ix0, p->dw, p->w, &kx0, &kx1);
                const int8_t *const xw = x + (((ptrdiff_t)b * p->h + iy0 + ky0 * p->dh) * p->w + ix0 + kx0 * p->dw) * c;
                const int8_t *const ww = w + ((ptrdiff_t)ky0 * kw + kx0) * oc;
                tfl_dw_m4_position(p, xw, ww, ky1 - ky0, kx1 - kx0, &m4, bias,
                                   y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * oc);
            }
        }
}
#endif

#if !(AOTC_QUANT_DSP && AOTC_TFL_DW_LOOP_SMALL) && (AOTC_QUANT_DSP || defined(AOTC_NO_INTRINSICS))
/* aotc_tfl_depthwise_s8 at the dw-plain and portable levels (issue 67): each position's window clipped once, 4
 * output channels a window (multipliers of 4 by their own loop; on the M55's portable-mve levels 4 channels of
 * multiplier 1 by Helium) */
static inline __attribute__((always_inline)) void tfl_depthwise_s8_plain(const aotc_tfl_conv_params *p,
                                                                         const int8_t *x, const int8_t *w,
                                                                         const int32_t *bias, int8_t *y) {
    /* the plain loop: each position's window clipped to the image once (the taps inside are a block of rows and
     * columns), then each output channel's taps by pointers (issue 67: 43 instructions a MAC on the M4 at -Os when
     * every tap tested its row and column and indexed x and w in 64 bits) */
    const int32_t c = p->c, oc = p->oc, kw = p->kw, xz = p->x_zero, xstep = p->dw * c, wstep = oc;
#if AOTC_QUANT_DSP && AOTC_TFL_DW_LOOP_MULT4
    const tfl_dw_m4_steps m4 = {xstep, wstep, (ptrdiff_t)p->dh * p->w * c, (ptrdiff_t)kw * oc, xz};
#endif
#if !AOTC_QUANT_DSP && AOTC_TFL_PORTABLE_FAST
    if (p->depth_multiplier == 1 && oc >= 4) {
        /* depth multiplier 1 (the portable level's): 4 channels at a time over every position, their requantisation
         * terms and biases taken once; the 4 channels 4 adjacent bytes in x and in w, no divisions; a last part of
         * under 4 the last 4 channels again (issue 67: KWS DS-CNN's depthwise layers at the portable level about 16
         * instructions a MAC before, most of them each output's and each window row's) */
        const ptrdiff_t xrow = (ptrdiff_t)p->dh * p->w * c, wrow = (ptrdiff_t)kw * oc;
        const int32_t yz = p->y_zero, lo = p->y_min, hi = p->y_max;
        for (int32_t o0 = 0; o0 < oc; o0 += 4) {
            const int32_t o = o0 + 4 <= oc ? o0 : oc - 4;
            tfl_rq1 rq[4];
            int32_t bs[4];
            for (int32_t j = 0; j < 4; ++j) rq[j] = tfl_rq_terms(p->mult[o + j], p->shift[o + j]), bs[j] = bias ? bias[o + j] : 0;
            for (int32_t b = 0; b < p->n; ++b)
                for (int32_t oy = 0; oy < p->oh; ++oy) {
                    const int32_t iy0 = oy * p->sh - p->pad_top;
                    int32_t ky0 = 0, ky1 = p->kh;
                    tfl_taps_inside(iy0, p->dh, p->h, &ky0, &ky1);
                    for (int32_t ox = 0; ox < p->ow; ++ox) {
                        const int32_t ix0 = ox * p->sw - p->pad_left;
                        int32_t kx0 = 0, kx1 = kw;
                        tfl_taps_inside(ix0, p->dw, p->w, &kx0, &kx1);
                        const int8_t *xr = x + (((ptrdiff_t)b * p->h + iy0 + ky0 * p->dh) * p->w + ix0 + kx0 * p->dw) * c + o;
                        const int8_t *wr = w + ((ptrdiff_t)ky0 * kw + kx0) * oc + o;
                        int32_t a0 = bs[0], a1 = bs[1], a2 = bs[2], a3 = bs[3];
                        for (int32_t i = ky0; i < ky1; ++i, xr += xrow, wr += wrow) {
                            /* (x's end, not a count: -Os then keeps the 4 sums in registers, issue 67) */
                            const int8_t *xp = xr, *wp = wr, *const xe = xr + (ptrdiff_t)(kx1 - kx0) * xstep;
                            for (; xp != xe; xp += xstep, wp += wstep) {
                                a0 += (xp[0] - xz) * wp[0], a1 += (xp[1] - xz) * wp[1];
                                a2 += (xp[2] - xz) * wp[2], a3 += (xp[3] - xz) * wp[3];
                            }
                        }
                        int8_t *const yp = y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * oc + o;
                        const int32_t sums[4] = {a0, a1, a2, a3};
                        for (int32_t j = 0; j < 4; ++j) yp[j] = clamp8(tfl_rq_apply(sums[j], &rq[j]) + yz, lo, hi);
                    }
                }
        }
        return;
    }
#endif
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
                int32_t ky0 = 0, ky1 = p->kh, kx0 = 0, kx1 = kw;
                tfl_taps_inside(iy0, p->dh, p->h, &ky0, &ky1);
                tfl_taps_inside(ix0, p->dw, p->w, &kx0, &kx1);
                int8_t *const yp = y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * oc;
                /* the window's first tap in x (channel 0) and in w, and the steps from a window row to the next */
                const int8_t *const xw = x + (((ptrdiff_t)b * p->h + iy0 + ky0 * p->dh) * p->w + ix0 + kx0 * p->dw) * c;
                const int8_t *const ww = w + ((ptrdiff_t)ky0 * kw + kx0) * oc;
                const ptrdiff_t xrow = (ptrdiff_t)p->dh * p->w * c, wrow = (ptrdiff_t)kw * oc;
#if AOTC_TFL_DW_LOOP_MULT4
                if (p->depth_multiplier % 4 == 0) {
                    /* a depth multiplier of 4, 8, ...: 4 output channels read one input value a tap, loaded and
                     * offset once for their 4 MACs (TFLM micro_speech's layer, multiplier 8: 6.5x -> 4.1x level none's
                     * est. cycles on the M4; the portable kernels' too, issue 67: 6.7x -> 4.2x); with the DSP extension
                     * two taps a turn, each tap's 4 weights one word widened by SXTB16 into SMLABB / SMLATB (4.1x ->
                     * 3.1x) */
                    for (int32_t o = 0; o < oc; o += 4) {
                        const int8_t *xr = xw + o / p->depth_multiplier, *wr = ww + o;
#if AOTC_QUANT_DSP
                        int32_t sums[4];
                        tfl_dw_m4_window(xr, wr, ky1 - ky0, kx1 - kx0, &m4, sums);
#else
                        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                        for (int32_t i = ky0; i < ky1; ++i, xr += xrow, wr += wrow) {
                            const int8_t *xp = xr, *wp = wr;
                            for (int32_t j = kx0; j < kx1; ++j, xp += xstep, wp += wstep) {
                                const int32_t xv = *xp - xz;
                                a0 += xv * wp[0], a1 += xv * wp[1], a2 += xv * wp[2], a3 += xv * wp[3];
                            }
                        }
                        const int32_t sums[4] = {a0, a1, a2, a3};
#endif
                        for (int32_t j = 0; j < 4; ++j) {
                            const int32_t acc = sums[j] + (bias ? bias[o + j] : 0);
                            const int32_t v = requant_double(acc, p->mult[o + j], p->shift[o + j]) + p->y_zero;
                            yp[o + j] = clamp8(v, p->y_min, p->y_max);
                        }
                    }
                    continue;
                }
#endif
                for (int32_t o = 0, n; o < oc; o += n) {
                    int32_t acc4[4] = {0, 0, 0, 0};
                    /* 4 channels at a time (adjacent in w; in x at depth multiplier 1, else their input channels
                     * d1, d2, d3 on from the first's): a window row's overhead once for 4 (issue 67: the dw-plain and
                     * portable levels); a last part channel by channel */
                    const int32_t m = p->depth_multiplier;
                    n = oc - o >= 4 ? 4 : 1;
                    {
#if AOTC_QUANT_DSP && AOTC_TFL_DW_LOOP_M1
                    /* depth multiplier 1 without divisions (the dw-plain level alone): four SDIVs of up to 12 cycles
                     * a 4 channels' window on the M4 (person_detect's dw-plain 1.504x -> 1.489x dwm-single's est.
                     * cycles, issue 67); the levels after it keep the smaller form below */
                    const int32_t one = m == 1;
                    const int32_t x0 = one ? o : o / m;
                    const int32_t d1 = n != 4 ? 0 : one ? 1 : (o + 1) / m - x0;
                    const int32_t d2 = n != 4 ? 0 : one ? 2 : (o + 2) / m - x0;
                    const int32_t d3 = n != 4 ? 0 : one ? 3 : (o + 3) / m - x0;
#else
                    const int32_t x0 = o / m;
                    const int32_t d1 = n == 4 ? (o + 1) / m - x0 : 0, d2 = n == 4 ? (o + 2) / m - x0 : 0;
                    const int32_t d3 = n == 4 ? (o + 3) / m - x0 : 0;
#endif
                    const int8_t *xr = xw + x0, *wr = ww + o;
#if !AOTC_QUANT_DSP && TFL_PMVE && AOTC_TFL_PORTABLE_MVE_DW /* 4 channels of multiplier 1 by Helium (the M55's
                                                              * portable-mve levels) */
                    if (n == 4 && m == 1) {
                        const int32x4_t v = tfl_pmve_dw4(xr, wr, ky1 - ky0, kx1 - kx0, xstep, wstep, xrow, wrow, xz);
#if TFL_PMVE_RQ
                        vstrbq_s32(yp + o, tfl_pmve_requant4(bias ? vaddq_s32(v, vld1q_s32(bias + o)) : v, p->mult + o,
                                                             p->shift + o, p->y_zero, p->y_min, p->y_max));
                        continue;
#else
                        vst1q_s32(acc4, v);
#endif
                    } else
#endif
                    for (int32_t i = ky0; i < ky1; ++i, xr += xrow, wr += wrow) {
                        const int8_t *xp = xr, *wp = wr;
                        if (n == 4)
                            for (int32_t j = kx0; j < kx1; ++j, xp += xstep, wp += wstep) {
                                acc4[0] += (xp[0] - xz) * wp[0], acc4[1] += (xp[d1] - xz) * wp[1];
                                acc4[2] += (xp[d2] - xz) * wp[2], acc4[3] += (xp[d3] - xz) * wp[3];
                            }
                        else
                            for (int32_t j = kx0; j < kx1; ++j, xp += xstep, wp += wstep) acc4[0] += (*xp - xz) * *wp;
                    }
                    }
                    for (int32_t j = 0; j < n; ++j) {
                        const int32_t acc = acc4[j] + (bias ? bias[o + j] : 0);
#if TFL_PMVE /* (requant_double inlined, its terms apart: the same integers) */
                        const tfl_rq1 r = tfl_rq_terms(p->mult[o + j], p->shift[o + j]);
                        const int32_t v = tfl_rq_apply(acc, &r) + p->y_zero;
#else
                        const int32_t v = requant_double(acc, p->mult[o + j], p->shift[o + j]) + p->y_zero;
#endif
                        yp[o + j] = clamp8(v, p->y_min, p->y_max);
                    }
                }
            }
}
#endif

void aotc_tfl_depthwise_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                           int8_t *y, uint32_t *scratch) {
#if AOTC_TFL_MVE && AOTC_TFL_MVE_DW /* with the DSP paths, or on its own at a --flash-budget level that leaves them out */
    if ((AOTC_TFL_DW_DSP || !AOTC_TFL_DW_MVE_WITH_DSP) && tfl_depthwise_s8_mve(p, x, w, bias, y, scratch)) return;
#endif
#if AOTC_TFL_MVE && !AOTC_TFL_MVE_DW && AOTC_TFL_MVE_DW_COMPACT /* a --flash-budget level's (issue 67) */
    if (tfl_depthwise_s8_mvec(p, x, w, bias, y)) return;
#endif
#if AOTC_QUANT_DSP
    if (AOTC_TFL_DW_DSP && p->dsp_dw != NULL && tfl_depthwise_s8_pre(p, x, w, y, scratch)) return;
    if (AOTC_TFL_DW_DSP && tfl_depthwise_s8_dsp(p, x, w, bias, y, scratch)) return;
    if (AOTC_TFL_DW_MULT && p->depth_multiplier > 1 && tfl_depthwise_s8_mult(p, x, w, bias, y, scratch)) return;
#endif
#if AOTC_QUANT_DSP && AOTC_TFL_DW_MULT_COMPACT && !AOTC_TFL_DW_MULT
    if (p->depth_multiplier > 1 && tfl_depthwise_s8_multc(p, x, w, bias, y, scratch)) return; /* (issue 67) */
#endif
#if AOTC_QUANT_DSP && AOTC_TFL_DW_COMPACT && !AOTC_TFL_DW_DSP && !AOTC_TFL_DW_MULT
    if (tfl_depthwise_s8_compact(p, x, w, bias, y, scratch)) return; /* a --flash-budget level's (issue 67) */
#endif
    (void)scratch;
#if AOTC_QUANT_DSP && AOTC_TFL_DW_LOOP_SMALL && AOTC_TFL_MVE && !AOTC_TFL_MVE_DW && !AOTC_TFL_MVE_DW_COMPACT /* (67) */
    tfl_depthwise_s8_mves_all(p, x, w, bias, y);
#elif AOTC_QUANT_DSP && AOTC_TFL_DW_LOOP_SMALL /* its smallest form where it is a DSP path's fallback */
#if TFL_DW_SMALL_M4
    if (p->depth_multiplier % 4 == 0) {
        tfl_depthwise_s8_m4(p, x, w, bias, y);
        return;
    }
#endif
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox)
                for (int32_t oc = 0; oc < p->oc; ++oc) {
                    int32_t ic = oc / p->depth_multiplier, acc = 0;
                    for (int32_t i = 0; i < p->kh; ++i) {
                        int32_t iy = oy * p->sh - p->pad_top + i * p->dh;
                        if (iy < 0 || iy >= p->h) continue;
                        for (int32_t j = 0; j < p->kw; ++j) {
                            int32_t ix = ox * p->sw - p->pad_left + j * p->dw;
                            if (ix < 0 || ix >= p->w) continue;
                            int32_t xv = x[(((int64_t)b * p->h + iy) * p->w + ix) * p->c + ic];
                            acc += (xv - p->x_zero) * w[((int64_t)i * p->kw + j) * p->oc + oc];
                        }
                    }
                    if (bias) acc += bias[oc];
                    int32_t v = requant_double(acc, p->mult[oc], p->shift[oc]) + p->y_zero;
                    y[(((int64_t)b * p->oh + oy) * p->ow + ox) * p->oc + oc] = clamp8(v, p->y_min, p->y_max);
                }
#elif AOTC_QUANT_DSP || defined(AOTC_NO_INTRINSICS) /* the dw-plain and portable levels' (issue 67) */
    tfl_depthwise_s8_plain(p, x, w, bias, y);
#else
    /* the plain loop: each position's window clipped to the image once (the taps inside are a block of rows and
     * columns), then each output channel's taps by pointers (issue 67: 43 instructions a MAC on the M4 at -Os when
     * every tap tested its row and column and indexed x and w in 64 bits) */
    const int32_t c = p->c, oc = p->oc, kw = p->kw, xz = p->x_zero, xstep = p->dw * c, wstep = oc;
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
                int32_t ky0 = 0, ky1 = p->kh, kx0 = 0, kx1 = kw;
                tfl_taps_inside(iy0, p->dh, p->h, &ky0, &ky1);
                tfl_taps_inside(ix0, p->dw, p->w, &kx0, &kx1);
                int8_t *const yp = y + (((ptrdiff_t)b * p->oh + oy) * p->ow + ox) * oc;
                for (int32_t o = 0; o < oc; ++o) {
                    int32_t acc = 0;
                    for (int32_t i = ky0; i < ky1; ++i) {
                        const int8_t *xp =
                            x + (((ptrdiff_t)b * p->h + iy0 + i * p->dh) * p->w + ix0 + kx0 * p->dw) * c +
                            o / p->depth_multiplier;
                        const int8_t *wp = w + ((ptrdiff_t)i * kw + kx0) * oc + o;
                        for (int32_t j = kx0; j < kx1; ++j, xp += xstep, wp += wstep) acc += (*xp - xz) * *wp;
                    }
                    if (bias) acc += bias[o];
                    const int32_t v = requant_double(acc, p->mult[o], p->shift[o]) + p->y_zero;
                    yp[o] = clamp8(v, p->y_min, p->y_max);
                }
            }
#endif
}

void aotc_tfl_depthwise_s16(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                            int16_t *y) {
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox)
                for (int32_t oc = 0; oc < p->oc; ++oc) {
                    int32_t ic = oc / p->depth_multiplier;
                    int64_t acc = 0;
                    for (int32_t i = 0; i < p->kh; ++i) {
                        int32_t iy = oy * p->sh - p->pad_top + i * p->dh;
                        if (iy < 0 || iy >= p->h) continue;
                        for (int32_t j = 0; j < p->kw; ++j) {
                            int32_t ix = ox * p->sw - p->pad_left + j * p->dw;
                            if (ix < 0 || ix >= p->w) continue;
                            int32_t xv = x[(((int64_t)b * p->h + iy) * p->w + ix) * p->c + ic];
                            acc += xv * w[((int64_t)i * p->kw + j) * p->oc + oc];
                        }
                    }
                    if (bias) acc += bias[oc];
                    y[(((int64_t)b * p->oh + oy) * p->ow + ox) * p->oc + oc] =
                        clamp16(requant_reduced(acc, p->mult[oc], p->shift[oc]), p->y_min, p->y_max);
                }
}
