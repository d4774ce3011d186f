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

#if AOTC_QUANT_DSP

#define TFL_DSP_KC 64            /* quads of patch rows a block (1 KiB of widened weights) */
#define TFL_DSP_NP_MAX 32        /* output positions a tile (even) */
#define TFL_DSP_PATCH_WORDS 1024 /* the tile's patch block: 4 KiB */
#define TFL_DSP_ACC_WORDS 1024   /* the sums of every channel when the rows take several blocks: 4 KiB */

/* Patch rows [r0, r0 + 4 * nq) of output position `pos` (over n x oh x ow) as x - x_zero, E / O words
 * into dst[0], dst[1], dst[4], dst[5], ... (a quad's words of one position, the pair's other position
 * between them). */
static void tfl_dsp_patch(const aotc_tfl_conv_params *p, const int8_t *x, int32_t pos, int32_t r0, int32_t nq,
                          uint32_t *dst) {
    const int32_t k = p->kh * p->kw * p->c, ox = pos % p->ow, oy = (pos / p->ow) % p->oh, b = pos / (p->ow * p->oh);
    const uint32_t zz = (uint32_t)(uint16_t)p->x_zero * 0x10001u;
    const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
    int32_t q = 0;
    if (p->c % 4 == 0) { /* every quad lies in one tap: its 4 bytes are one word of x */
        while (q < nq) {
            const int32_t r = r0 + 4 * q, tap = r / p->c, ch = r % p->c;
            const int32_t iy = iy0 + (tap / p->kw) * p->dh, ix = ix0 + (tap % p->kw) * p->dw;
            int32_t run = (p->c - ch) / 4; /* quads left in this tap */
            run = run < nq - q ? run : nq - q;
            if (r >= k || iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) {
                for (; run > 0; --run, ++q, dst += 4) dst[0] = dst[1] = 0;
                if (r >= k) { /* past the rows: the rest is zeros */
                    for (; q < nq; ++q, dst += 4) dst[0] = dst[1] = 0;
                }
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
    for (; q < nq; ++q, dst += 4) { /* rows one at a time */
        int32_t v[4], j;
        for (j = 0; j < 4; ++j) {
            const int32_t r = r0 + 4 * q + j, tap = r / p->c, ch = r % p->c;
            const int32_t iy = iy0 + (tap / p->kw) * p->dh, ix = ix0 + (tap % p->kw) * p->dw;
            v[j] = r >= k || iy < 0 || iy >= p->h || ix < 0 || ix >= p->w
                       ? 0
                       : x[(((int64_t)b * p->h + iy) * p->w + ix) * p->c + ch] - p->x_zero;
        }
        dst[0] = (uint32_t)(uint16_t)v[0] | (uint32_t)v[2] << 16;
        dst[1] = (uint32_t)(uint16_t)v[1] | (uint32_t)v[3] << 16;
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

/* TFLite's requantisation of one channel's sum (tflite_int8.c's requant_double, the shift split
 * once per channel) plus the zero point, clamped. */
static inline int8_t tfl_dsp_out(int32_t acc, int32_t mult, int32_t left, int32_t right, int32_t zero, int32_t lo,
                                 int32_t hi) {
    return clamp8(divide_by_pot(high_mul((int32_t)((uint32_t)acc << left), mult), right) + zero, lo, hi);
}

/* Sums of channel pair (c0, c0 + 1) at np positions from p0 (acc: quant_dsp.h's layout) to y, each
 * channel's requantisation split once. */
static void tfl_dsp_store(const aotc_tfl_conv_params *p, const int32_t *bias, const int32_t *acc, int32_t p0,
                          int32_t np, int32_t c0, int32_t nc, int8_t *y) {
    const int32_t zero = p->y_zero, lo = p->y_min, hi = p->y_max, oc = p->oc;
    int32_t t, j;
    for (j = 0; j < nc; ++j) {
        const int32_t c = c0 + j, sh = p->shift[c], mult = p->mult[c], b = bias ? bias[c] : 0;
        const int32_t left = sh > 0 ? sh : 0, right = sh > 0 ? 0 : -sh;
        const int32_t *a = acc + 2 * j;
        int8_t *yc = y + (int64_t)p0 * oc + c;
        for (t = 0; t + 1 < np; t += 2, a += 4, yc += 2 * oc) {
            yc[0] = tfl_dsp_out(a[0] + b, mult, left, right, zero, lo, hi);
            yc[oc] = tfl_dsp_out(a[1] + b, mult, left, right, zero, lo, hi);
        }
        if (t < np) yc[0] = tfl_dsp_out(a[0] + b, mult, left, right, zero, lo, hi);
    }
}

static int tfl_conv_s8_dsp(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                           int8_t *y) {
    uint32_t patch[TFL_DSP_PATCH_WORDS], wx[4 * TFL_DSP_KC];
    int32_t acc[TFL_DSP_ACC_WORDS];
    const int32_t k = p->kh * p->kw * p->c, kq = (k + 3) / 4, kc = kq < TFL_DSP_KC ? kq : TFL_DSP_KC;
    const int32_t total = p->n * p->oh * p->ow, pairs_oc = (p->oc + 1) / 2;
    int32_t np = (TFL_DSP_PATCH_WORDS / (2 * kc)) & ~1, p0;
    if (np > TFL_DSP_NP_MAX) np = TFL_DSP_NP_MAX;
    if (kq > kc && np * 2 * pairs_oc > TFL_DSP_ACC_WORDS) np = (TFL_DSP_ACC_WORDS / (2 * pairs_oc)) & ~1;
    if (np < 2 || k == 0) return 0;
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
                if (q0 == 0 || kq == kc) memset(a, 0, sizeof(int32_t) * 4 * (size_t)pairs);
                aotc_dsp_mac2x2(patch, 4 * nq, pairs, wx, nq, a);
                if (q0 + nq == kq) tfl_dsp_store(p, bias, a, p0, n, c0, c1 > c0 ? 2 : 1, y);
            }
        }
    }
    return 1;
}

#define TFL_DSP_TAPS 25 /* the largest window of the depthwise path (5 x 5) */

/* One tap of 4 channels: input word v, widened weights wt[0] = [c0, c2], wt[1] = [c1, c3]. */
#define TFL_DSP_DW_TAP(v, wt)                                                                           \
    do {                                                                                               \
        const uint32_t v_ = (v), e_ = (uint32_t)__sxtb16(v_), o_ = aotc_dsp_sxtb16_hi(v_);              \
        a0 = __smlabb((int32_t)e_, (int32_t)(wt)[0], a0);                                             \
        a2 = __smlatt((int32_t)e_, (int32_t)(wt)[0], a2);                                             \
        a1 = __smlabb((int32_t)o_, (int32_t)(wt)[1], a1);                                             \
        a3 = __smlatt((int32_t)o_, (int32_t)(wt)[1], a3);                                             \
    } while (0)

/* The 4 channels' sums a0 .. a3 (base plus the taps) of the window from xs (its top-left input,
 * channel ch) with every tap inside the image; row: the input row's length in bytes, step: a tap's. */
#define TFL_DSP_DW_WINDOW(xs, kh, kw, row, step)                                                        \
    do {                                                                                               \
        const uint32_t *wt_ = wq;                                                                      \
        const int8_t *r_ = (xs);                                                                       \
        int32_t ky_, kx_;                                                                              \
        for (ky_ = 0; ky_ < (kh); ++ky_, r_ += (row)) {                                                \
            if ((kw) == 3) { /* the common row of three taps, unrolled in the source */                \
                TFL_DSP_DW_TAP(aotc_dsp_load32(r_), wt_);                                              \
                TFL_DSP_DW_TAP(aotc_dsp_load32(r_ + (step)), wt_ + 2);                                 \
                TFL_DSP_DW_TAP(aotc_dsp_load32(r_ + 2 * (step)), wt_ + 4);                             \
                wt_ += 6;                                                                              \
            } else {                                                                                   \
                for (kx_ = 0; kx_ < (kw); ++kx_, wt_ += 2) TFL_DSP_DW_TAP(aotc_dsp_load32(r_ + kx_ * (step)), wt_); \
            }                                                                                          \
        }                                                                                              \
    } while (0)

/* DEPTHWISE_CONV_2D, depth multiplier 1, channels a multiple of 4, windows up to TFL_DSP_TAPS:
 * 4 channels at a time over every position, their weights widened and their requantisation split
 * once; the input zero point's share of the sums is in the base (a tap in the padding reads
 * x_zero, adding 0 to the sum of (x - x_zero) * w), so a window inside the image is plain loads. */
static int tfl_depthwise_s8_dsp(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                const int32_t *bias, int8_t *y) {
    uint32_t wq[2 * TFL_DSP_TAPS];
    const int32_t taps = p->kh * p->kw, kh = p->kh, kw = p->kw, h = p->h, wd = p->w, c = p->c, oc = p->oc;
    const int32_t row = p->dh * wd * c, step = p->dw * c, zero = p->y_zero, lo = p->y_min, hi = p->y_max;
    const uint32_t zb = (uint32_t)(uint8_t)p->x_zero * 0x01010101u;
    int32_t ch, b, oy, ox, t, j;
    if (p->depth_multiplier != 1 || c % 4 != 0 || taps > TFL_DSP_TAPS) return 0;
    /* output columns [ox_lo, ox_hi) have the whole window inside the row */
    int32_t ox_lo = (p->pad_left + p->sw - 1) / p->sw, ox_hi = 0;
    while (ox_hi < p->ow && ox_hi * p->sw - p->pad_left + (kw - 1) * p->dw < wd) ++ox_hi;
    if (ox_lo > ox_hi) ox_lo = ox_hi;
    for (ch = 0; ch < c; ch += 4) {
        int32_t base[4] = {0, 0, 0, 0}, mult[4], left[4], right[4];
        for (t = 0; t < taps; ++t) {
            const int8_t *wt = w + (int64_t)t * oc + ch;
            const uint32_t v = aotc_dsp_load32(wt);
            wq[2 * t] = (uint32_t)__sxtb16(v);
            wq[2 * t + 1] = aotc_dsp_sxtb16_hi(v);
            for (j = 0; j < 4; ++j) base[j] -= p->x_zero * wt[j];
        }
        for (j = 0; j < 4; ++j) {
            const int32_t sh = p->shift[ch + j];
            base[j] += bias ? bias[ch + j] : 0;
            mult[j] = p->mult[ch + j], left[j] = sh > 0 ? sh : 0, right[j] = sh > 0 ? 0 : -sh;
        }
        for (b = 0; b < p->n; ++b) {
            const int8_t *xb = x + (int64_t)b * h * wd * c + ch;
            int8_t *yp = y + (int64_t)b * p->oh * p->ow * oc + ch;
            for (oy = 0; oy < p->oh; ++oy) {
                const int32_t iy0 = oy * p->sh - p->pad_top, inside = iy0 >= 0 && iy0 + (kh - 1) * p->dh < h;
                for (ox = 0; ox < p->ow; ++ox, yp += oc) {
                    const int32_t ix0 = ox * p->sw - p->pad_left;
                    int32_t a0 = base[0], a1 = base[1], a2 = base[2], a3 = base[3];
                    if (inside && ox >= ox_lo && ox < ox_hi) {
                        TFL_DSP_DW_WINDOW(xb + ((int64_t)iy0 * wd + ix0) * c, kh, kw, row, step);
                    } else {
                        const uint32_t *wt = wq;
                        int32_t ky, kx;
                        for (ky = 0; ky < kh; ++ky) {
                            const int32_t iy = iy0 + ky * p->dh;
                            for (kx = 0; kx < kw; ++kx, wt += 2) {
                                const int32_t ix = ix0 + kx * p->dw;
                                TFL_DSP_DW_TAP(iy >= 0 && iy < h && ix >= 0 && ix < wd
                                                   ? aotc_dsp_load32(xb + ((int64_t)iy * wd + ix) * c)
                                                   : zb,
                                               wt);
                            }
                        }
                    }
                    yp[0] = tfl_dsp_out(a0, mult[0], left[0], right[0], zero, lo, hi);
                    yp[1] = tfl_dsp_out(a1, mult[1], left[1], right[1], zero, lo, hi);
                    yp[2] = tfl_dsp_out(a2, mult[2], left[2], right[2], zero, lo, hi);
                    yp[3] = tfl_dsp_out(a3, mult[3], left[3], right[3], zero, lo, hi);
                }
            }
        }
    }
    return 1;
}

/* requant_single, (acc * mult + 2^(t - 1)) >> t with t = 31 - shift, from the high word of the
 * product where t >= 33 (the usual case): the rounding term's bits are all in the high word, so
 * the low word cannot carry into the result (floor((H + 2^(t-33) + L / 2^32) / 2^(t-32)) drops
 * L / 2^32 < 1), one multiply, an add and a shift. */
static inline int32_t tfl_dsp_requant_single(int32_t acc, int32_t mult, int32_t shift) {
    const int32_t t = 31 - shift;
    if (t >= 33) return ((int32_t)(((int64_t)acc * mult) >> 32) + (1 << (t - 33))) >> (t - 32);
    return requant_single(acc, mult, shift);
}

#define TFL_DSP_FC_QUADS 512 /* inputs of the FULLY_CONNECTED path: up to 2048 (4 KiB widened) */

/* FULLY_CONNECTED: each row of x widened once to E / O words of x - x_zero, then four outputs at a
 * time by quant_dsp.h's aotc_dsp_gemv4 (one SMLAD per 2 multiply-accumulates, the int8 weights
 * widened as loaded), the inputs past the last quad plainly; TFLite's single-rounding
 * requantisation (requant_single). */
static int tfl_fc_s8_dsp(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                         int8_t *y) {
    uint32_t xw[2 * TFL_DSP_FC_QUADS];
    const int32_t in = p->in, nq = in / 4;
    const uint32_t zz = (uint32_t)(uint16_t)p->x_zero * 0x10001u;
    const int32_t zero = p->y_zero, lo = p->y_min, hi = p->y_max;
    int32_t r, o, q, k;
    if (nq > TFL_DSP_FC_QUADS) return 0;
    for (r = 0; r < p->rows; ++r) {
        const int8_t *xr = x + (int64_t)r * in;
        for (q = 0; q < nq; ++q) {
            const uint32_t v = aotc_dsp_load32(xr + 4 * q);
            xw[2 * q] = (uint32_t)__ssub16((int32_t)__sxtb16(v), (int32_t)zz);
            xw[2 * q + 1] = (uint32_t)__ssub16((int32_t)aotc_dsp_sxtb16_hi(v), (int32_t)zz);
        }
        for (o = 0; o < p->out; o += 4) { /* four outputs at a time, the last block overlapping */
            const int32_t o0 = o + 4 <= p->out ? o : p->out - 4;
            int32_t acc[4] = {0, 0, 0, 0}, j;
            if (p->out < 4) break;
            if (nq > 0) aotc_dsp_gemv4(xw, nq, w + (int64_t)o0 * in, in, acc);
            for (j = 0; j < 4; ++j) {
                const int32_t oc = o0 + j;
                int32_t a = acc[j] + (bias ? bias[oc] : 0);
                for (k = 4 * nq; k < in; ++k) a += (xr[k] - p->x_zero) * w[(int64_t)oc * in + k];
                y[(int64_t)r * p->out + oc] = clamp8(tfl_dsp_requant_single(a, p->mult[oc], p->shift[oc]) + zero,
                                                     lo, hi);
            }
        }
        for (o = p->out < 4 ? 0 : p->out; o < p->out; ++o) { /* fewer than four outputs: plainly */
            int32_t a = bias ? bias[o] : 0;
            for (k = 0; k < in; ++k) a += (xr[k] - p->x_zero) * w[(int64_t)o * in + k];
            y[(int64_t)r * p->out + o] = clamp8(requant_single(a, p->mult[o], p->shift[o]) + p->y_zero,
                                                p->y_min, p->y_max);
        }
    }
    return 1;
}

#endif /* AOTC_QUANT_DSP */
#endif /* AOTC_TFLITE_INT8_DSP_H */
