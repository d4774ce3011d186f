/* TFLite's FULLY_CONNECTED, int8 and 16x8 (aotc_tflite_int8.h): plain loops, the DSP extension's path
 * (quant_dsp.h's SMLAD rows) and Helium's (tflite_int8_mve.h's dot products); single rounding. */
#include "tflite_int8_internal.h"
#include "tflite_int8_dsp.h" /* the DSP extension's paths (Cortex-M4, M33, M55) and Helium's (M55) */

/* the DSP path's rows (AOTC_TFL_FC_DSP, or the compact ones of AOTC_TFL_FC_PAIRS), but where Helium's path is
 * compiled: it takes every layer of 4 outputs or more before them, and they take none of fewer (issue 67: dead code on
 * the M55, which linked it into every model with a FULLY_CONNECTED layer) */
#define TFL_FC_DSP_ROWS ((AOTC_TFL_FC_DSP || AOTC_TFL_FC_PAIRS) && !(AOTC_TFL_MVE && AOTC_TFL_MVE_FC))
/* Helium's FULLY_CONNECTED one output at a time (AOTC_TFL_MVE_FC_QUAD 0, the M55's "mve-fc-compact" --flash-budget
 * level, issue 67): it takes every layer, so no other FULLY_CONNECTED code is compiled beside it */
#define TFL_FC_MVE_ONE (AOTC_TFL_MVE && AOTC_TFL_MVE_FC && !AOTC_TFL_MVE_FC_QUAD)
/* the DSP path compiled: its rows, or its smallest form (AOTC_TFL_FC_SMALL, where FC_DSP and FC_PAIRS are 0; it takes
 * any number of outputs); neither: the plain loop's fallback alone */
#define TFL_FC_DSP (AOTC_QUANT_DSP && !TFL_FC_MVE_ONE &&                                                             \
                    (TFL_FC_DSP_ROWS || (!(AOTC_TFL_FC_DSP || AOTC_TFL_FC_PAIRS) && AOTC_TFL_FC_SMALL)))

#if TFL_FC_DSP

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

#if TFL_FC_DSP_ROWS
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
#endif

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

#if TFL_FC_DSP_ROWS
#if AOTC_TFL_FC_DSP
#define TFL_FC_ROWS(xw, nq, w, ld, n, il, init, sums)                                                    \
    do {                                                                                               \
        if (AOTC_DSP_IL && (il)) aotc_dsp_gemv_rows_il(xw, nq, w, n, init, sums);                        \
        else aotc_dsp_gemv_rows(xw, nq, w, ld, n, init, sums);                                         \
    } while (0)
#else
/* FULLY_CONNECTED's compact DSP path (AOTC_TFL_FC_DSP 0, the "fc-compact" --flash-budget level, issue 67), in
 * tfl_fc_s8_dsp's place of aotc_dsp_gemv_rows(_il): sums[o] = init[o] (0 where init is NULL) plus the nq quads of xw
 * (tfl_fc_widen's pairs) times weight row o's, two rows a turn in C (each pair of x loaded once for both; n >= 2, the
 * last pair overlapping the one before where n is odd), one quad a turn: rows `ld` bytes apart, or with `il` the
 * emitter's blocks of 4 rows interleaved (a row's quads 16 bytes apart, n a multiple of 4). */
static void tfl_fc_rows_compact(const uint32_t *xw, int32_t nq, const int8_t *w, int32_t ld, int32_t n, int il,
                                const int32_t *init, int32_t *sums) {
    const int32_t st = il ? 16 : 4, next = il ? 4 : ld;
    for (int32_t o = 0; o < n; o += 2) {
        const int32_t o0 = o + 2 <= n ? o : n - 2;
        const int8_t *w0 = il ? w + (ptrdiff_t)(o0 & ~3) * ld + 4 * (o0 & 3) : w + (ptrdiff_t)o0 * ld;
        int32_t a0 = init ? init[o0] : 0, a1 = init ? init[o0 + 1] : 0;
        for (const uint32_t *x = xw, *end = xw + 2 * nq; x != end; x += 2, w0 += st) {
            const uint32_t v0 = aotc_dsp_load32(w0), v1 = aotc_dsp_load32(w0 + next), e = x[0], od = x[1];
            a0 = __smlad((int32_t)e, (int32_t)__sxtb16(v0), a0);
            a1 = __smlad((int32_t)e, (int32_t)__sxtb16(v1), a1);
            a0 = __smlad((int32_t)od, (int32_t)aotc_dsp_sxtb16_hi(v0), a0);
            a1 = __smlad((int32_t)od, (int32_t)aotc_dsp_sxtb16_hi(v1), a1);
        }
        sums[o0] = a0, sums[o0 + 1] = a1;
    }
}
#define TFL_FC_ROWS(xw, nq, w, ld, n, il, init, sums) tfl_fc_rows_compact(xw, nq, w, ld, n, il, init, sums)
#endif

#if AOTC_TFL_FC_BLOCKS
/* A RAM budget's blocks (out % 4 == 0: no block of 4 sums overlaps another): kq quads of x widened at a time, the sums
 * of ob outputs at a time, carried over the chunks of x. Apart from the whole rows' loop, and compiled only where a
 * layer takes it (AOTC_TFL_FC_BLOCKS, aot/kernels/dsp_paths.py): inside that loop its registers spilled the loop's,
 * 0.7 % of the autoencoder's unbudgeted est. cycles on the M4 and 0.8 KB of its flash (issue 67). */
__attribute__((noinline)) static void tfl_fc_s8_dsp_blocks(const aotc_tfl_fc_params *p, const int8_t *x,
                                                           const int8_t *w, const int32_t *bias, int8_t *y,
                                                           uint32_t *xw, int32_t kq, int32_t ob) {
    const int32_t in = p->in, out = p->out, nq = in / 4, xz = p->x_zero;
    const uint32_t zz = (uint32_t)(uint16_t)xz * 0x10001u;
    int32_t *sums = (int32_t *)(xw + 2 * kq);
    int32_t r, o, o0, q, k;
    for (r = 0; r < p->rows; ++r) {
        const int8_t *xr = x + (int64_t)r * in;
        int8_t *yr = y + (int64_t)r * out;
        if (kq == nq) tfl_fc_widen(xr, nq, zz, xw); /* once for every block of outputs */
        for (o0 = 0; o0 < out; o0 += ob) {
            const int32_t nb = out - o0 < ob ? out - o0 : ob; /* a multiple of 4 */
            const int8_t *wb = w + (int64_t)o0 * in;
            for (o = 0; o < nb; ++o) sums[o] = bias ? bias[o0 + o] : 0;
            for (q = 0; q < nq; q += kq) { /* the sums carried over the chunks of x */
                const int32_t cq = nq - q < kq ? nq - q : kq;
                if (kq < nq) tfl_fc_widen(xr + 4 * q, cq, zz, xw);
                TFL_FC_ROWS(xw, cq, wb + 4 * q, in, nb, 0, sums, sums);
            }
            for (o = 0; o < nb && 4 * nq < in; ++o)
                for (k = 4 * nq; k < in; ++k) sums[o] += (xr[k] - xz) * wb[(int64_t)o * in + k];
            tfl_dsp_fc_store(sums, nb, p->mult + o0, p->shift + o0, p->y_zero, p->y_min, p->y_max, yr + o0);
        }
    }
}
#endif

static int tfl_fc_s8_dsp(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                         int8_t *y, uint32_t *xw) {
    const int32_t in = p->in, out = p->out, nq = in / 4, xz = p->x_zero;
    const uint32_t zz = (uint32_t)(uint16_t)xz * 0x10001u;
    int32_t *sums = (int32_t *)(xw + 2 * nq);
    int32_t r, o, k;
    if (xw == NULL || out < 4) return 0;
#if AOTC_TFL_FC_BLOCKS
    if (out % 4 == 0 && ((p->kq > 0 && p->kq < nq) || (p->ob > 0 && p->ob < out))) {
        tfl_fc_s8_dsp_blocks(p, x, w, bias, y, xw, p->kq > 0 && p->kq < nq ? p->kq : nq,
                             p->ob > 0 && p->ob < out ? p->ob : out);
        return 1;
    }
#endif
    for (r = 0; r < p->rows; ++r) {
        const int8_t *xr = x + (int64_t)r * in;
        tfl_fc_widen(xr, nq, zz, xw);
        TFL_FC_ROWS(xw, nq, w, in, out, p->il4, bias, sums); /* (il4: no tail, in % 4 == 0) */
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
#undef TFL_FC_ROWS
#else
/* One output's sum: a plus the nq quads of x widened (tfl_fc_widen's pairs) times its weight row's quads, `st` bytes
 * apart (4: a row; 16: a block of 4 rows interleaved); two quads a turn (the first alone where nq is odd), into two
 * sums. Not inlined: the loop keeps its registers. */
__attribute__((noinline)) static int32_t tfl_fc_dot_small(const uint32_t *xw, int32_t nq, const int8_t *w, int32_t st,
                                                          int32_t a) {
    const uint32_t *const end = xw + 2 * nq;
    int32_t b = 0;
    if (nq & 1) {
        const uint32_t v = aotc_dsp_load32(w);
        a = __smlad((int32_t)xw[0], (int32_t)__sxtb16(v), a);
        a = __smlad((int32_t)xw[1], (int32_t)aotc_dsp_sxtb16_hi(v), a);
        xw += 2, w += st;
    }
    for (; xw != end; xw += 4, w += 2 * st) {
        const uint32_t v = aotc_dsp_load32(w), u = aotc_dsp_load32(w + st);
        a = __smlad((int32_t)xw[0], (int32_t)__sxtb16(v), a);
        b = __smlad((int32_t)xw[2], (int32_t)__sxtb16(u), b);
        a = __smlad((int32_t)xw[1], (int32_t)aotc_dsp_sxtb16_hi(v), a);
        b = __smlad((int32_t)xw[3], (int32_t)aotc_dsp_sxtb16_hi(u), b);
    }
    return a + b;
}

/* FULLY_CONNECTED's smallest DSP path (AOTC_TFL_FC_DSP and AOTC_TFL_FC_PAIRS 0, the "fc-small" --flash-budget level,
 * issue 67), in tfl_fc_s8_dsp's place: x widened into scratch as it widens it (kq quads at a time under a RAM
 * budget's blocks, then again for each output), each output's sum by tfl_fc_dot_small (weights as the emitter stored
 * them: rows, or interleaved by blocks of 4 rows where p->il4), the inputs past the last quad plainly, requantised at
 * once: no sums in scratch, no store loop. */
static int tfl_fc_s8_dsp(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                         int8_t *y, uint32_t *xw) {
    const int32_t in = p->in, out = p->out, nq = in / 4, xz = p->x_zero;
    /* (il4: in % 4 == 0, no tail; a RAM budget's chunks of x only where compiled, AOTC_TFL_FC_BLOCKS) */
    const int32_t kq = AOTC_TFL_FC_BLOCKS && p->kq > 0 && p->kq < nq ? p->kq : nq, st = p->il4 ? 16 : 4;
    const uint32_t zz = (uint32_t)(uint16_t)xz * 0x10001u;
    if (xw == NULL) return 0;
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *const xr = x + (ptrdiff_t)r * in;
        int8_t *const yr = y + (ptrdiff_t)r * out;
        if (kq == nq) tfl_fc_widen(xr, nq, zz, xw);
        for (int32_t o = 0; o < out; ++o) {
            const int8_t *const wr = st == 16 ? w + (ptrdiff_t)(o & ~3) * in + 4 * (o & 3) : w + (ptrdiff_t)o * in;
            int32_t a = bias ? bias[o] : 0, q, k;
            for (q = 0; q < nq; q += kq) {
                const int32_t cq = nq - q < kq ? nq - q : kq;
                if (kq < nq) tfl_fc_widen(xr + 4 * q, cq, zz, xw);
                a = tfl_fc_dot_small(xw, cq, wr + (ptrdiff_t)q * st, st, a);
            }
            for (k = 4 * nq; k < in; ++k) a += (xr[k] - xz) * wr[k];
            const int32_t v = tfl_dsp_requant_single(a, p->mult[o], p->shift[o]) + p->y_zero;
            yr[o] = (int8_t)(v < p->y_min ? p->y_min : v > p->y_max ? p->y_max : v);
        }
    }
    return 1;
}
#endif /* TFL_FC_DSP_ROWS */
#endif /* TFL_FC_DSP */

#if AOTC_TFL_MVE && AOTC_TFL_MVE_FC && !TFL_FC_MVE_ONE
/* FULLY_CONNECTED (4 outputs or more): four outputs at a time (the last block overlapping), their
 * weight sums in the same pass, requantised with requant_single (scalar: a dense layer's outputs
 * are few). Not inlined: inlined alone into aotc_tfl_fc_s8 (no DSP rows beside it) gcc 12 scheduled its
 * requantisation so that the MLPerf Tiny autoencoder took 0.9 % more est. cycles on the M55. */
__attribute__((noinline)) static int tfl_fc_s8_mve(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w,
                                                   const int32_t *bias, int8_t *y) {
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
#endif /* AOTC_TFL_MVE && AOTC_TFL_MVE_FC && !TFL_FC_MVE_ONE */

#if !AOTC_QUANT_DSP && AOTC_TFL_PORTABLE_FAST
/* Four outputs' sums of x - xz and weight rows w0 .. w0 + 3 in (in >= 1), each input value loaded and offset once
 * for their 4 MACs; rows 0 and 1 at wa, 2 and 3 at wb, `in` apart. Not inlined, so that its 12 registers are not
 * spilled (the autoencoder's portable level 3.4x -> 3.2x level none's est. cycles on the M4). */
__attribute__((noinline)) static void tfl_fc_dot4_plain(const int8_t *xp, int32_t in, int32_t xz, const int8_t *w0,
                                                        int32_t *acc) {
    const int8_t *const xe = xp + in, *wa = w0, *wb = w0 + 2 * in;
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (; xp != xe; ++wa, ++wb) {
        const int32_t xv = *xp++ - xz;
        a0 += xv * wa[0], a1 += xv * wa[in], a2 += xv * wb[0], a3 += xv * wb[in];
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}
#endif

#if TFL_FC_MVE_ONE
/* Helium's FULLY_CONNECTED in its least code (TFL_FC_MVE_ONE): each output's dot product and weight sum by one
 * tail-predicated loop (tfl_mve_dot1_sum8), x's zero point taken off by the sum, requantised as TFLite's
 * requant_single; any number of outputs (the layers of fewer than 4 read none of the scratch planned for them) */
void aotc_tfl_fc_s8(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                    uint32_t *scratch) {
    const int32_t in = p->in, out = p->out;
    (void)scratch;
    for (int32_t r = 0; r < p->rows; ++r, x += in)
        for (int32_t o = 0; o < out; ++o) {
            int32_t s, v = tfl_mve_dot1_sum8(x, in, w + (ptrdiff_t)o * in, &s) - p->x_zero * s + (bias ? bias[o] : 0);
            v = tfl_mve_requant_single(v, p->mult[o], p->shift[o]) + p->y_zero;
            v = v < p->y_min ? p->y_min : v;
            *y++ = (int8_t)(v > p->y_max ? p->y_max : v);
        }
}
#else
void aotc_tfl_fc_s8(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                    uint32_t *scratch) {
#if AOTC_TFL_MVE && AOTC_TFL_MVE_FC
    if (tfl_fc_s8_mve(p, x, w, bias, y)) return;
#endif
#if TFL_FC_DSP
    if (tfl_fc_s8_dsp(p, x, w, bias, y, scratch)) return;
#endif
    (void)scratch;
#if !AOTC_QUANT_DSP && !AOTC_TFL_PORTABLE_FAST && AOTC_TFL_FC_PAIRS
    /* the smallest loops' (portable-small's) where FULLY_CONNECTED does the model's work: two outputs a turn (ld 0: one row twice where out is 1; the last pair overlapping the one
     * before where out is odd), each input value loaded and offset once for both */
    const int32_t in = p->in, xz = p->x_zero, out = p->out, ld = out < 2 ? 0 : in;
    for (int32_t r = 0; r < p->rows; ++r)
        for (int32_t o = 0; o < out; o += 2) {
            const int32_t o0 = o + 2 <= out || out < 2 ? o : out - 2;
            const int8_t *xp = x + (ptrdiff_t)r * in, *const xe = xp + in, *wp = w + (ptrdiff_t)o0 * in;
            int32_t a[2] = {0, 0};
            for (; xp != xe; ++wp) {
                const int32_t xv = *xp++ - xz;
                a[0] += xv * wp[0], a[1] += xv * wp[ld];
            }
            for (int32_t j = 0; j < 1 + (ld != 0); ++j) {
                const int32_t v = requant_single(a[j] + (bias ? bias[o0 + j] : 0), p->mult[o0 + j], p->shift[o0 + j]);
                y[(ptrdiff_t)r * out + o0 + j] = clamp8(v + p->y_zero, p->y_min, p->y_max);
            }
        }
#elif AOTC_QUANT_DSP || !AOTC_TFL_PORTABLE_FAST /* the DSP path's fallback (no scratch), the smallest loops' else */
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
                tfl_fc_dot4_plain(xr, in, xz, w0, acc);
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
#endif /* TFL_FC_MVE_ONE */

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
