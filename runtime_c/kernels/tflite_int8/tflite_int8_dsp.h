/* TFLite's int8 kernels (tflite_int8.c) on cores with the Arm DSP extension (Cortex-M4, M33, M55):
 * the sums by SMLAD through quant_dsp.h's 2 x 2 block (aotc_dsp_mac2x2, one body with the ONNX
 * int8 path), the requantisation TFLite's own (tflite_int8.c's requant_double), so the outputs are
 * those of the plain loops bit for bit. Included by tflite_int8.c after its fixed-point helpers;
 * each entry returns 0 when it does not take the case (the plain loop then runs).
 *
 * CONV_2D (groups 1, any window, stride and dilation) as quant_dsp.h lays out a patch: output
 * positions in pairs, for each quad of patch rows (r = (ky * kw + kx) * c + ch) the words
 * E(t0) = [x(r0), x(r2)], O(t0) = [x(r1), x(r3)], E(t1), O(t1) as 16-bit halves, holding x - x_zero
 * (0 under the padding, as TFLite's kernels skip those taps). A tile of positions is gathered once
 * per block of quads, and each pair of output channels' weights widened once per tile.
 *
 * DEPTHWISE_CONV_2D (depth multiplier 1): 4 channels at a time, each tap's 4 input bytes and 4
 * weight bytes widened to [c0, c2] / [c1, c3] halves, and SMLABB / SMLATT per channel. */
#ifndef AOTC_TFLITE_INT8_DSP_H
#define AOTC_TFLITE_INT8_DSP_H

#include "aotc_quant.h" /* aotc_round_even, for quant_dsp.h's plain rounding */
#include "quant_dsp.h"
#include "tflite_int8_mve.h" /* Helium's paths (Cortex-M55), which these use where the core has it */

#if AOTC_QUANT_DSP

/* TFL_DSP_KC, TFL_DSP_NP_MAX, ...: the blocks, with the scratch they take, in aotc_tflite_int8.h */

/* Patch rows [r0, r0 + 4 * nq) of output position `pos` (over n x oh x ow) as x - x_zero, E / O words
 * into dst[0], dst[1], dst[4], dst[5], ... (a quad's words of one position, the pair's other position
 * between them). */
static void tfl_dsp_patch(const aotc_tfl_conv_params *p, const int8_t *x, int32_t pos, int32_t r0, int32_t nq,
                          uint32_t *dst) {
    const int32_t ox = pos % p->ow, oy = (pos / p->ow) % p->oh, b = pos / (p->ow * p->oh);
    const uint32_t zz = (uint32_t)(uint16_t)p->x_zero * 0x10001u;
    const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
    int32_t q = 0;
    if (p->c % 4 == 0) { /* every quad lies in one tap: its 4 bytes are one word of x */
        const int32_t taps = p->kh * p->kw;
        int32_t tap = r0 / p->c, ch = r0 % p->c, ky = tap / p->kw, kx = tap % p->kw;
        for (; q < nq; ch = 0, ++tap, kx = kx + 1 == p->kw ? 0 : kx + 1, ky += kx == 0) { /* tap by tap */
            const int32_t iy = iy0 + ky * p->dh, ix = ix0 + kx * p->dw;
            int32_t run = (p->c - ch) / 4; /* quads left in this tap */
            run = run < nq - q ? run : nq - q;
            if (tap >= taps || iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) {
                for (; run > 0; --run, ++q, dst += 4) dst[0] = dst[1] = 0;
                continue;
            }
            const int8_t *xs = x + (((int64_t)b * p->h + iy) * p->w + ix) * p->c + ch;
            for (; run > 0; --run, ++q, dst += 4, xs += 4) {
                const uint32_t v = aotc_dsp_load32(xs);
                dst[0] = (uint32_t)__ssub16((int32_t)__sxtb16(v), (int32_t)zz);
                dst[1] = (uint32_t)__ssub16((int32_t)aotc_dsp_sxtb16_hi(v), (int32_t)zz);
            }
        }
        return;
    }
    { /* a tap's channels at a time into v (x - x_zero, 0 in the padding and past k; no per-row
       * tests), a whole kernel row's where its taps are contiguous in x (dilation 1, inside the
       * image), then each quad's 16-bit values paired: E = [v0, v2], O = [v1, v3] */
        const int32_t taps = p->kh * p->kw, c = p->c, xz = p->x_zero, rows = 4 * nq, kw = p->kw;
        const int32_t row_in = p->dw == 1 && ix0 >= 0 && ix0 + kw <= p->w; /* a kernel row inside */
        int16_t v[4 * TFL_DSP_KC];
        int32_t tap = r0 / c, ch = r0 % c, ky = tap / kw, kx = tap % kw, j = 0, i;
        while (j < rows) {
            const int32_t iy = iy0 + ky * p->dh, ix = ix0 + kx * p->dw;
            const int32_t y_in = tap < taps && iy >= 0 && iy < p->h;
            int32_t run;
            if (y_in && row_in && kx == 0 && ch == 0) { /* kw x c values at once */
                const int8_t *xs = x + (((int64_t)b * p->h + iy) * p->w + ix) * c;
                run = kw * c < rows - j ? kw * c : rows - j;
                for (i = 0; i < run; ++i) v[j + i] = (int16_t)(xs[i] - xz);
                j += run, tap += kw, ++ky; /* the next kernel row, kx and ch 0 */
                continue;
            }
            run = c - ch < rows - j ? c - ch : rows - j;
            if (!y_in || ix < 0 || ix >= p->w) {
                for (i = 0; i < run; ++i) v[j + i] = 0;
            } else {
                const int8_t *xs = x + (((int64_t)b * p->h + iy) * p->w + ix) * c + ch;
                for (i = 0; i < run; ++i) v[j + i] = (int16_t)(xs[i] - xz);
            }
            j += run;
            ch = 0, ++tap, kx = kx + 1 == kw ? 0 : kx + 1, ky += kx == 0;
        }
        for (q = 0; q < nq; ++q, dst += 4) {
            const uint32_t lo = (uint32_t)(uint16_t)v[4 * q] | (uint32_t)(uint16_t)v[4 * q + 1] << 16;
            const uint32_t hi = (uint32_t)(uint16_t)v[4 * q + 2] | (uint32_t)(uint16_t)v[4 * q + 3] << 16;
            dst[0] = (lo & 0xFFFFu) | hi << 16;
            dst[1] = lo >> 16 | (hi & 0xFFFF0000u);
        }
    }
}

/* The weights of channels c0, c1 over rows [r0, r0 + 4 * nq) widened as aotc_dsp_widen_weights does,
 * rows past k as zeros (not read). */
static void tfl_dsp_weights(const int8_t *w, int32_t k, int32_t c0, int32_t c1, int32_t r0, int32_t nq, uint32_t *wx) {
    const int32_t left = k - r0, full = left / 4 < nq ? left / 4 : nq;
    if (full > 0) aotc_dsp_widen_weights(w + (int64_t)c0 * k + r0, w + (int64_t)c1 * k + r0, full, wx);
    if (full < nq) {
        int8_t t0[4] = {0, 0, 0, 0}, t1[4] = {0, 0, 0, 0};
        int32_t j;
        for (j = 0; j < left - 4 * full && j < 4; ++j) {
            t0[j] = w[(int64_t)c0 * k + r0 + 4 * full + j];
            t1[j] = w[(int64_t)c1 * k + r0 + 4 * full + j];
        }
        aotc_dsp_widen_weights(t0, t1, 1, wx + 4 * full);
        for (j = 4 * (full + 1); j < 4 * nq; ++j) wx[j] = 0;
    }
}

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

/* Sums of channel pair (c0, c0 + 1) at np positions from p0 (acc: quant_dsp.h's layout, the bias
 * already in them) to y (not inlined: the requantisation loop then has the registers to itself). */
__attribute__((noinline)) static void tfl_dsp_store(const aotc_tfl_conv_params *p, const int32_t *bias,
                                                    const int32_t *acc, int32_t p0, int32_t np, int32_t c0, int32_t nc,
                                                    int8_t *y) {
    const int32_t oc = p->oc;
    const int64_t k_bound = (int64_t)p->kh * p->kw * p->c * TFL_DSP_PRODUCT_MAX;
    int32_t j;
    for (j = 0; j < nc; ++j) {
        const int32_t c = c0 + j, b = bias ? bias[c] : 0;
        const int64_t bound = k_bound + tfl_dsp_abs64(b);
        int8_t *yc = y + (int64_t)p0 * oc + c;
        /* positions in pairs: t even at acc[2t + 2j], t odd one word on */
        tfl_dsp_requant_run(acc + 2 * j, 4, (np + 1) / 2, 0, p->mult[c], p->shift[c], p->y_zero, p->y_min, p->y_max,
                            yc, 2 * oc, bound);
        tfl_dsp_requant_run(acc + 2 * j + 1, 4, np / 2, 0, p->mult[c], p->shift[c], p->y_zero, p->y_min, p->y_max,
                            yc + oc, 2 * oc, bound);
    }
}

/* CONV_2D on the tiles of tfl_dsp_conv_words. With a fused residual ADD (e), each tile's outputs go to
 * e->tile first, then through the ADD to y (a tile's positions are contiguous in y). */
static int tfl_conv_s8_dsp(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                           int8_t *y, uint32_t *AOTC_RESTRICT scratch, const tfl_residual *e) {
    const int32_t k = p->kh * p->kw * p->c, kq = (k + 3) / 4, kc = kq < TFL_DSP_KC ? kq : TFL_DSP_KC;
    const int32_t total = p->n * p->oh * p->ow, pairs_oc = (p->oc + 1) / 2;
    int32_t np, p0;
    (void)tfl_dsp_conv_words(p, &np);
    if (scratch == NULL || np < 2) return 0;
    uint32_t *patch = scratch, *wx = patch + 2 * np * kc;
    int32_t *acc = (int32_t *)(wx + 4 * kc);
    for (p0 = 0; p0 < total; p0 += np) {
        const int32_t n = total - p0 < np ? total - p0 : np, pairs = (n + 1) / 2;
        int32_t q0, cp, t;
        for (q0 = 0; q0 < kq; q0 += kc) {
            const int32_t nq = kq - q0 < kc ? kq - q0 : kc;
            for (t = 0; t < 2 * pairs; ++t) { /* an odd tile's last pair repeats its position */
                tfl_dsp_patch(p, x, p0 + (t < n ? t : n - 1), 4 * q0, nq, patch + (t / 2) * 4 * nq + 2 * (t & 1));
            }
            for (cp = 0; cp < pairs_oc; ++cp) {
                const int32_t c0 = 2 * cp, c1 = c0 + 1 < p->oc ? c0 + 1 : c0;
                int32_t *a = kq > kc ? acc + cp * 4 * pairs : acc;
                tfl_dsp_weights(w, k, c0, c1, 4 * q0, nq, wx);
                if (q0 == 0 || kq == kc) { /* the sums start at the bias: the store adds none */
                    const int32_t b0 = bias ? bias[c0] : 0, b1 = bias ? bias[c1] : 0;
                    for (t = 0; t < pairs; ++t) a[4 * t] = a[4 * t + 1] = b0, a[4 * t + 2] = a[4 * t + 3] = b1;
                }
                aotc_dsp_mac2x2(patch, 4 * nq, pairs, wx, nq, a);
                if (q0 + nq == kq) {
                    if (e != NULL) tfl_dsp_store(p, bias, a, 0, n, c0, c1 > c0 ? 2 : 1, e->tile);
                    else tfl_dsp_store(p, bias, a, p0, n, c0, c1 > c0 ? 2 : 1, y);
                }
            }
        }
        if (e != NULL) tfl_residual_run(e, e->tile, (int64_t)p0 * p->oc, n * p->oc, y);
    }
    return 1;
}

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
    for (j = 0; j < 4; ++j)
        tfl_dsp_requant_run(acc + j, 4, n, 0, p->mult[ch + j], p->shift[ch + j], p->y_zero, p->y_min, p->y_max, yo + j,
                            p->oc, bound);
#endif
}

/* DEPTHWISE_CONV_2D, depth multiplier 1, channels a multiple of 4, windows up to TFL_DSP_TAPS:
 * 4 channels at a time over every position, their weights widened once. The input zero point's
 * share of the sums is in the base (a tap in the padding reads x_zero, adding 0 to the sum of
 * (x - x_zero) * w), so a 3 x 3 window inside the image is plain loads: such windows of one output
 * row go by runs (aotc_dsp_dw3x3_run), the others one at a time; the sums are then requantised
 * channel by channel, each channel's multiplier and shifts split once. */
static int tfl_depthwise_s8_dsp(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                const int32_t *bias, int8_t *y, uint32_t *AOTC_RESTRICT scratch) {
    uint32_t wq[2 * TFL_DSP_TAPS];
    const int32_t taps = p->kh * p->kw, kh = p->kh, kw = p->kw, h = p->h, wd = p->w, c = p->c, oc = p->oc;
    const uint32_t zb = (uint32_t)(uint8_t)p->x_zero * 0x01010101u;
    const int32_t fast = kh == 3 && kw == 3;
    /* the rows and columns the windows span, from (-pad_top, -pad_left) */
    const int32_t ph = TFL_DSP_DW_SPAN(p->oh, p->sh, kh, p->dh), pw = TFL_DSP_DW_SPAN(p->ow, p->sw, kw, p->dw);
    /* scratch (the memory plan's: aotc_tfl_depthwise_s8_dsp_scratch_bytes): the sums of up to `run`
     * positions' 4 channels, then the padded span where the 3 x 3 path copies it */
    const int32_t run = tfl_dsp_dw_run(p);
    int32_t *acc = (int32_t *)scratch;
    uint32_t *pad = scratch + 4 * run;
    int32_t ch, b, oy, ox, t, j;
    if (scratch == NULL || p->depth_multiplier != 1 || c % 4 != 0 || taps > TFL_DSP_TAPS) return 0;
    /* output columns [ox_lo, ox_hi) have the whole window inside the row */
    int32_t ox_lo = (p->pad_left + p->sw - 1) / p->sw, ox_hi = 0;
    while (ox_hi < p->ow && ox_hi * p->sw - p->pad_left + (kw - 1) * p->dw < wd) ++ox_hi;
    if (ox_lo > ox_hi) ox_lo = ox_hi;
    for (ch = 0; ch < c; ch += 4) {
        int32_t base[4] = {0, 0, 0, 0};
        for (t = 0; t < taps; ++t) {
            const int8_t *wt = w + (int64_t)t * oc + ch;
            const uint32_t v = aotc_dsp_load32(wt);
            wq[2 * t] = (uint32_t)__sxtb16(v);
            wq[2 * t + 1] = aotc_dsp_sxtb16_hi(v);
            for (j = 0; j < 4; ++j) base[j] -= p->x_zero * wt[j];
        }
        int64_t bound = (int64_t)taps * TFL_DSP_PRODUCT_MAX, b_max = 0;
        for (j = 0; j < 4; ++j) {
            base[j] += bias ? bias[ch + j] : 0;
            b_max = bias && tfl_dsp_abs64(bias[ch + j]) > b_max ? tfl_dsp_abs64(bias[ch + j]) : b_max;
        }
        bound += b_max;
        if (fast && TFL_DSP_DW_PADDED(ph, pw, p->ow, run)) {
            /* the 4 channels' words of the windows' span, padded */
            for (b = 0; b < p->n; ++b) {
                const int8_t *xb = x + (int64_t)b * h * wd * c + ch;
                int8_t *yb = y + (int64_t)b * p->oh * p->ow * oc + ch;
                for (t = 0; t < ph; ++t) {
                    const int32_t iy = t - p->pad_top;
                    for (j = 0; j < pw; ++j) {
                        const int32_t ix = j - p->pad_left;
                        pad[t * pw + j] = iy >= 0 && iy < h && ix >= 0 && ix < wd
                                              ? aotc_dsp_load32(xb + ((int64_t)iy * wd + ix) * c)
                                              : zb;
                    }
                }
                /* whole rows into the sums, stored when the next would not fit (the padded span is
                 * at most TFL_DSP_DW_PAD words, so a row is at most that many positions) */
                for (oy = 0, t = 0; oy < p->oh; ++oy) {
                    if (t + p->ow > run) {
                        tfl_dsp_dw_store(p, acc, t, ch, yb + ((int64_t)oy * p->ow - t) * oc, bound);
                        t = 0;
                    }
                    aotc_dsp_dw3x3_run((const int8_t *)(pad + oy * p->sh * pw), 4 * p->sw, p->ow, 4 * p->dw,
                                      4 * p->dh * pw, wq, base, acc + 4 * t);
                    t += p->ow;
                }
                tfl_dsp_dw_store(p, acc, t, ch, yb + ((int64_t)p->oh * p->ow - t) * oc, bound);
            }
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

__attribute__((noinline)) static int32_t tfl_dsp_requant_single_any(int32_t acc, int32_t mult, int32_t shift) {
    return requant_single(acc, mult, shift);
}

/* requant_single, (acc * mult + 2^(t - 1)) >> t with t = 31 - shift, from the high word H of the
 * product where t >= 33 (the usual case): the rounding term's bits are all in the high word, so
 * the low word cannot carry into the result (floor((H + 2^(t-33) + L / 2^32) / 2^(t-32)) drops
 * L / 2^32 < 1); and with s = t - 32, (H + 2^(s-1)) >> s = ((H >> (s-1)) + 1) >> 1 (both floor
 * ((q + 1) / 2) for q = H >> (s-1)): one multiply, two shifts and an add. Other shifts call
 * requant_single out of line, so that gcc does not compute its 64-bit shifts for every output. */
static inline __attribute__((always_inline)) int32_t tfl_dsp_requant_single(int32_t acc, int32_t mult,
                                                                            int32_t shift) {
    const int32_t t = 31 - shift;
    if (__builtin_expect(t >= 33, 1)) return (((int32_t)(((int64_t)acc * mult) >> 32) >> (t - 33)) + 1) >> 1;
    return tfl_dsp_requant_single_any(acc, mult, shift);
}

/* The n sums of FULLY_CONNECTED outputs requantised as TFLite's requant_single, plus the zero point,
 * clamped, to y: one loop, the parameters in locals (stores through int8_t may alias anything). */
__attribute__((noinline)) static void tfl_dsp_fc_store(const int32_t *sums, int32_t n, const int32_t *mult,
                                                       const int32_t *shift, int32_t zero, int32_t lo, int32_t hi,
                                                       int8_t *y) {
    int32_t o;
    lo -= zero, hi -= zero;
    for (o = 0; o < n; ++o) {
        int32_t q = tfl_dsp_requant_single(sums[o], mult[o], shift[o]);
        q = q < lo ? lo : q;
        y[o] = (int8_t)((q > hi ? hi : q) + zero);
    }
}

/* FULLY_CONNECTED with 4 outputs or more: each row of x widened once to E / O words of x - x_zero
 * in scratch, the sums (the bias their start) by quant_dsp.h's aotc_dsp_gemv_rows (one SMLAD per 2
 * multiply-accumulates, the int8 weights widened as loaded) into the scratch after it, the inputs
 * past the last quad plainly, then one requantisation loop (TFLite's single rounding,
 * requant_single). Scratch: AOTC_TFL_FC_SCRATCH(in, out) bytes, from the memory plan. */
static int tfl_fc_s8_dsp(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                         int8_t *y, uint32_t *xw) {
    const int32_t in = p->in, out = p->out, nq = in / 4, xz = p->x_zero;
    const uint32_t zz = (uint32_t)(uint16_t)xz * 0x10001u;
    int32_t *sums = (int32_t *)(xw + 2 * nq);
    int32_t r, o, q, k;
    if (xw == NULL || out < 4) return 0;
    for (r = 0; r < p->rows; ++r) {
        const int8_t *xr = x + (int64_t)r * in;
        for (q = 0; q < nq; ++q) {
            const uint32_t v = aotc_dsp_load32(xr + 4 * q);
            xw[2 * q] = (uint32_t)__ssub16((int32_t)__sxtb16(v), (int32_t)zz);
            xw[2 * q + 1] = (uint32_t)__ssub16((int32_t)aotc_dsp_sxtb16_hi(v), (int32_t)zz);
        }
        if (AOTC_DSP_IL && p->il4) aotc_dsp_gemv_rows_il(xw, nq, w, out, bias, sums); /* no tail: in % 4 == 0 */
        else aotc_dsp_gemv_rows(xw, nq, w, in, out, bias, sums);
        if (4 * nq < in) {
            for (o = 0; o < out; ++o) {
                const int8_t *wr = w + (int64_t)o * in;
                for (k = 4 * nq; k < in; ++k) sums[o] += (xr[k] - xz) * wr[k];
            }
        }
        tfl_dsp_fc_store(sums, out, p->mult, p->shift, p->y_zero, p->y_min, p->y_max, y + (int64_t)r * out);
    }
    return 1;
}

#define TFL_DSP_ADD_RUN 256 /* sums requantised at a time (1 KiB) */

/* ADD / SUB of two same-shape int8 tensors (AOTC_TFL_ADD_MIN elements or more): each input's rescaling,
 * requant_double((x - x_zero) * 2^20, m, s), depends on the byte alone, so it is a table of 256
 * sums per input made once per call; then per element two table reads and the output's
 * requantisation (tfl_dsp_requant_run): the plain loop's three requantisations become one. The
 * tables and a run of sums are the plan's scratch (AOTC_TFL_ADD_SCRATCH words), not the stack. */
static int tfl_add_s8_dsp(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y,
                          uint32_t *scratch) {
    int32_t *t1 = (int32_t *)scratch, *t2 = t1 + 256, *sum = t2 + 256;
    int64_t k0, m1 = 0, m2 = 0;
    int32_t v, k;
    if (scratch == NULL || p->broadcast || p->count < AOTC_TFL_ADD_MIN) return 0;
    for (v = 0; v < 256; ++v) {
        t1[v] = requant_double((v - 128 - p->x1_zero) * (1 << 20), p->m1, p->s1);
        t2[v] = requant_double((v - 128 - p->x2_zero) * (1 << 20), p->m2, p->s2);
        if (p->subtract) t2[v] = -t2[v];
        m1 = tfl_dsp_abs64(t1[v]) > m1 ? tfl_dsp_abs64(t1[v]) : m1;
        m2 = tfl_dsp_abs64(t2[v]) > m2 ? tfl_dsp_abs64(t2[v]) : m2;
    }
    for (k0 = 0; k0 < p->count; k0 += TFL_DSP_ADD_RUN) {
        const int32_t n = p->count - k0 < TFL_DSP_ADD_RUN ? (int32_t)(p->count - k0) : TFL_DSP_ADD_RUN;
        for (k = 0; k < n; ++k) sum[k] = t1[x1[k0 + k] + 128] + t2[x2[k0 + k] + 128];
        tfl_dsp_requant_run(sum, 1, n, 0, p->mult, p->shift, p->y_zero, p->y_min, p->y_max, y + k0, 1, m1 + m2);
    }
    return 1;
}

#endif /* AOTC_QUANT_DSP */
#endif /* AOTC_TFLITE_INT8_DSP_H */
