/* TFLite's FULLY_CONNECTED, int8 and 16x8 (aotc_tflite_int8.h): plain loops, the DSP extension's path
 * (quant_dsp.h's SMLAD rows) and Helium's (tflite_int8_mve.h's dot products); single rounding. */
#include "tflite_int8_internal.h"
#include "tflite_int8_dsp.h" /* the DSP extension's paths (Cortex-M4, M33, M55) and Helium's (M55) */

#if AOTC_QUANT_DSP

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
 * requant_single). Scratch: AOTC_TFL_FC_SCRATCH(in, out) bytes, from the memory plan; with p->kq, x is
 * widened kq quads at a time and the sums carried over the chunks (AOTC_TFL_FC_SCRATCH_KQ(kq, out)). */
static void tfl_fc_widen(const int8_t *x, int32_t nq, uint32_t zz, uint32_t *xw) {
    int32_t q;
    for (q = 0; q < nq; ++q) {
        const uint32_t v = aotc_dsp_load32(x + 4 * q);
        xw[2 * q] = (uint32_t)__ssub16((int32_t)__sxtb16(v), (int32_t)zz);
        xw[2 * q + 1] = (uint32_t)__ssub16((int32_t)aotc_dsp_sxtb16_hi(v), (int32_t)zz);
    }
}

static int tfl_fc_s8_dsp(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                         int8_t *y, uint32_t *xw) {
    const int32_t in = p->in, out = p->out, nq = in / 4, xz = p->x_zero;
    /* a RAM budget's blocks (out % 4 == 0: no block of 4 sums overlaps another): kq quads of x widened at a
     * time, the sums of ob outputs at a time */
    const int blocked = out % 4 == 0 && ((p->kq > 0 && p->kq < nq) || (p->ob > 0 && p->ob < out));
    const int32_t kq = blocked && p->kq > 0 && p->kq < nq ? p->kq : nq;
    const int32_t ob = blocked && p->ob > 0 && p->ob < out ? p->ob : out;
    const uint32_t zz = (uint32_t)(uint16_t)xz * 0x10001u;
    int32_t *sums = (int32_t *)(xw + 2 * kq);
    int32_t r, o, o0, q, k;
    if (xw == NULL || out < 4) return 0;
    for (r = 0; r < p->rows; ++r) {
        const int8_t *xr = x + (int64_t)r * in;
        int8_t *yr = y + (int64_t)r * out;
        if (!blocked) {
            tfl_fc_widen(xr, nq, zz, xw);
            if (AOTC_DSP_IL && p->il4) aotc_dsp_gemv_rows_il(xw, nq, w, out, bias, sums); /* no tail: in % 4 == 0 */
            else aotc_dsp_gemv_rows(xw, nq, w, in, out, bias, sums);
            if (4 * nq < in) {
                for (o = 0; o < out; ++o) {
                    const int8_t *wr = w + (int64_t)o * in;
                    for (k = 4 * nq; k < in; ++k) sums[o] += (xr[k] - xz) * wr[k];
                }
            }
            tfl_dsp_fc_store(sums, out, p->mult, p->shift, p->y_zero, p->y_min, p->y_max, yr);
            continue;
        }
        if (kq == nq) tfl_fc_widen(xr, nq, zz, xw); /* once for every block of outputs */
        for (o0 = 0; o0 < out; o0 += ob) {
            const int32_t nb = out - o0 < ob ? out - o0 : ob; /* a multiple of 4 */
            const int8_t *wb = w + (int64_t)o0 * in;
            for (o = 0; o < nb; ++o) sums[o] = bias ? bias[o0 + o] : 0;
            for (q = 0; q < nq; q += kq) { /* the sums carried over the chunks of x */
                const int32_t cq = nq - q < kq ? nq - q : kq;
                if (kq < nq) tfl_fc_widen(xr + 4 * q, cq, zz, xw);
                aotc_dsp_gemv_rows(xw, cq, wb + 4 * q, in, nb, sums, sums);
            }
            for (o = 0; o < nb && 4 * nq < in; ++o)
                for (k = 4 * nq; k < in; ++k) sums[o] += (xr[k] - xz) * wb[(int64_t)o * in + k];
            tfl_dsp_fc_store(sums, nb, p->mult + o0, p->shift + o0, p->y_zero, p->y_min, p->y_max, yr + o0);
        }
    }
    return 1;
}
#endif /* AOTC_QUANT_DSP */

#if AOTC_TFL_MVE
/* FULLY_CONNECTED (4 outputs or more): four outputs at a time (the last block overlapping), their
 * weight sums in the same pass, requantised with requant_single (scalar: a dense layer's outputs
 * are few). */
static int tfl_fc_s8_mve(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                         int8_t *y) {
    const int32_t in = p->in, out = p->out;
    int32_t r, o, j, acc[4], sums[4];
    if (out < 4) return 0;
    if (in < 1) return 0;
    for (r = 0; r < p->rows; ++r) {
        const int8_t *xr = x + (int64_t)r * in;
        for (o = 0; o < out; o += 4) {
            const int32_t o0 = o + 4 <= out ? o : out - 4;
            const int8_t *wg = w + (int64_t)o0 * in;
            vst1q_s32(acc, tfl_mve_dot4q(xr, in, wg, in));
            vst1q_s32(sums, tfl_mve_sum4q(in, wg, in));
            for (j = 0; j < 4; ++j) {
                const int32_t c = o0 + j;
                const int32_t s = acc[j] - p->x_zero * sums[j] + (bias ? bias[c] : 0);
                y[(int64_t)r * out + c] = clamp8(requant_single(s, p->mult[c], p->shift[c]) + p->y_zero, p->y_min,
                                                 p->y_max);
            }
        }
    }
    return 1;
}
#endif /* AOTC_TFL_MVE */

void aotc_tfl_fc_s8(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                    uint32_t *scratch) {
#if AOTC_TFL_MVE
    if (tfl_fc_s8_mve(p, x, w, bias, y)) return;
#endif
#if AOTC_QUANT_DSP
    if (tfl_fc_s8_dsp(p, x, w, bias, y, scratch)) return;
#endif
    (void)scratch;
#if AOTC_QUANT_DSP || !AOTC_TFL_PORTABLE_FAST /* the DSP path's fallback (no scratch), portable-small's: the smallest */
    for (int32_t r = 0; r < p->rows; ++r)
        for (int32_t o = 0; o < p->out; ++o) {
            const int8_t *xr = x + (int64_t)r * p->in, *wr = w + (int64_t)o * p->in;
            int32_t acc = 0;
            for (int32_t k = 0; k < p->in; ++k) acc += (xr[k] - p->x_zero) * wr[k];
            if (bias) acc += bias[o];
            int32_t v = requant_single(acc, p->mult[o], p->shift[o]) + p->y_zero;
            y[(int64_t)r * p->out + o] = clamp8(v, p->y_min, p->y_max);
        }
#else
    const int32_t in = p->in, xz = p->x_zero;
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *const xr = x + (ptrdiff_t)r * in;
        int8_t *const yr = y + (ptrdiff_t)r * p->out;
        for (int32_t o = 0, n; o < p->out; o += n) {
            /* 4 outputs at a time, each input value loaded and offset once for their 4 MACs (issue 67: the portable
             * level's loop, and the cores' without the DSP extension; MLPerf Tiny's autoencoder at the portable level
             * 5.2x -> 3.4x level none's est. cycles on the M4), the last ones alone */
            int32_t acc[4] = {0, 0, 0, 0};
            const int8_t *const w0 = w + (ptrdiff_t)o * in;
            n = p->out - o >= 4 ? 4 : 1;
            if (n == 4) {
                const int8_t *const w1 = w0 + in, *const w2 = w1 + in, *const w3 = w2 + in;
                int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                for (int32_t k = 0; k < in; ++k) {
                    const int32_t xv = xr[k] - xz;
                    a0 += xv * w0[k], a1 += xv * w1[k], a2 += xv * w2[k], a3 += xv * w3[k];
                }
                acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
            } else {
                for (int32_t k = 0; k < in; ++k) acc[0] += (xr[k] - xz) * w0[k];
            }
            for (int32_t j = 0; j < n; ++j) {
                const int32_t v = requant_single(acc[j] + (bias ? bias[o + j] : 0), p->mult[o + j], p->shift[o + j]);
                yr[o + j] = clamp8(v + p->y_zero, p->y_min, p->y_max);
            }
        }
    }
#endif
}

void aotc_tfl_fc_s16(const aotc_tfl_fc_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                     int16_t *y) {
    for (int32_t r = 0; r < p->rows; ++r)
        for (int32_t o = 0; o < p->out; ++o) {
            const int16_t *xr = x + (int64_t)r * p->in;
            const int8_t *wr = w + (int64_t)o * p->in;
            int64_t acc = 0;
            for (int32_t k = 0; k < p->in; ++k) acc += (int32_t)xr[k] * wr[k];
            if (bias) acc += bias[o];
            y[(int64_t)r * p->out + o] = clamp16(requant_full64(acc, p->mult[o], p->shift[o]), p->y_min, p->y_max);
        }
}
