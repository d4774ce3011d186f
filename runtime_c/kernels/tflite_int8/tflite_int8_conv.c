/* TFLite's CONV_2D, int8 and 16x8, and CONV_2D with its residual ADD fused (aotc_tflite_int8.h): plain
 * loops, the DSP extension's path (tiles of positions through quant_dsp.h's SMLAD block) and Helium's
 * (tflite_int8_mve.h's dot products), bit for bit the plain loops' outputs.
 *
 * The DSP path lays out a patch as quant_dsp.h does (groups 1, any window, stride and dilation): output
 * positions in pairs, for each quad of patch rows (r = (ky * kw + kx) * c + ch) the words
 * E(t0) = [x(r0), x(r2)], O(t0) = [x(r1), x(r3)], E(t1), O(t1) as 16-bit halves, holding x - x_zero
 * (0 under the padding, as TFLite's kernels skip those taps). A tile of positions is gathered once
 * per block of quads, and each group of 4 output channels' weights widened once per tile. */
#define AOTC_TFL_CONV_DECLS 1 /* declares this file's entry points (aotc_tflite_int8.h) */
#include "tflite_int8_internal.h"
#include "tflite_int8_dsp.h" /* the DSP extension's paths (Cortex-M4, M33, M55) and Helium's (M55) */
#include <stddef.h> /* ptrdiff_t */
/* the portable loops' dot products (and requantisation) by Helium: the M55's portable-mve levels (issue 67) */
#define TFL_PMVE (TFL_PMVE_ISA && AOTC_TFL_PORTABLE_MVE)
#define TFL_PMVE_RQ (TFL_PMVE && AOTC_TFL_PORTABLE_MVE_RQ)
#define TFL_PMVE_S8 (TFL_PMVE_RQ && AOTC_TFL_PORTABLE_MVE_S8)
/* (the portable-mve-dot8 level's convs by 8-bit dot products, pointwise and windows above 1 x 1: not with
 * PORTABLE_MVE_S8's conv, which takes those layers faster) */
#define TFL_PMVE_DOT8 (TFL_PMVE_RQ && !AOTC_TFL_PORTABLE_MVE_S8 && (AOTC_TFL_PORTABLE_MVE_PW || AOTC_TFL_PORTABLE_MVE_WIN))
#ifndef TFL_DSP_MAC2X4
#define TFL_DSP_MAC2X4 0 /* the M33's 2 x 4 block (tflite_int8_dsp.h) only there, in assembly */
#endif
#if TFL_DSP_MAC2X4 /* tfl_dsp_group_rq's arguments for it there only (elsewhere not one more a call) */
#define TFL_DSP_M24_PARAMS , int32_t n4, int p7
#define TFL_DSP_M24_ARGS(n4, p7) , n4, p7
#else
#define TFL_DSP_M24_PARAMS
#define TFL_DSP_M24_ARGS(n4, p7)
#endif

/* A residual ADD fused into CONV_2D (aotc_tfl_conv_add_s8); the conv paths take NULL when it runs alone. */
typedef struct {
    const aotc_tfl_residual_params *r;
    const int8_t *res;                  /* the residual, indexed as y */
    const int32_t *t_conv, *t_res;      /* the ADD's rescaled inputs by byte + 128 (NULL: add_one per element) */
    int64_t bound;                      /* at least every |t_conv[.] + t_res[.]| */
    int8_t *tile;                       /* the DSP path's tile of conv outputs (positions x oc) */
    int32_t fast;                       /* the DSP path's one loop (tfl_dsp_residual_fast): 0 not, 1 with
                                         * TFLite's sign term and the lower clamp, 2 without (zero point and
                                         * lower clamp -128); t_conv and t_res then hold their terms shifted
                                         * left by the requantisation's left shift + 1 */
#if AOTC_TFL_MVE
    /* add_one's terms as vectors, set once a call (tfl_residual_run's): m1, left 1, -right 1, m2, left 2, -right 2,
     * the output's mult, left, -right, y_min, y_max */
    int32x4_t q[11];
    int usual; /* no shift of the three above 0 */
    int32_t fm, fra, fnr; /* with fast (tfl_mve_residual_fast): the output's mult, rounding term and -right */
#endif
} tfl_residual;

/* y[at + k] = ADD(v[k], res[at + k]) for k < n: v the conv's outputs (y may be res) */
static void tfl_residual_run(const tfl_residual *e, const int8_t *v, int64_t at, int32_t n, int8_t *y);

#if TFL_PMVE_RQ
/* y[k] = ADD(v[k], res[k]), k < 4, as add_one (its three requantisations 4 lanes at a time, tfl_pmve_rq) and the
 * ADD's clamp: the portable-mve level's fused ADD (y may be res: res is read first) */
static inline void tfl_pmve_residual4(const aotc_tfl_residual_params *r, const int8_t *res, int32x4_t v, int8_t *y) {
    const aotc_tfl_binary_params *a = &r->add;
    const int32x4_t rv = vldrbq_s32(res);
    const int32x4_t x1 = vshlq_n_s32(vsubq_n_s32(r->conv_x1 ? v : rv, a->x1_zero), 20);
    const int32x4_t x2 = vshlq_n_s32(vsubq_n_s32(r->conv_x1 ? rv : v, a->x2_zero), 20);
    const int32x4_t s1 = tfl_pmve_rq(x1, vdupq_n_s32(a->m1), vdupq_n_s32(a->s1));
    const int32x4_t s2 = tfl_pmve_rq(x2, vdupq_n_s32(a->m2), vdupq_n_s32(a->s2));
    const int32x4_t t = tfl_pmve_rq(a->subtract ? vsubq_s32(s1, s2) : vaddq_s32(s1, s2), vdupq_n_s32(a->mult),
                                    vdupq_n_s32(a->shift));
    vstrbq_s32(y, vminq_s32(vmaxq_s32(vaddq_n_s32(t, a->y_zero), vdupq_n_s32(a->y_min)), vdupq_n_s32(a->y_max)));
}

/* y[at + k] = ADD(v's lane k, the residual there), k < 4: by tfl_pmve_residual4, or where AOTC_TFL_PORTABLE_MVE_RQ_ADD
 * is 0 (the portable-mve-rqconv level: 28 B less on IC ResNet-8) the lanes stored and added by tfl_residual_run */
#if AOTC_TFL_PORTABLE_MVE_RQ_ADD
#define tfl_pmve_add4(e, v, at, y) tfl_pmve_residual4((e)->r, (e)->res + (at), v, (y) + (at))
#else
static inline __attribute__((always_inline)) void tfl_pmve_add4(const tfl_residual *e, int32x4_t v, int64_t at,
                                                                int8_t *y) {
    int8_t v8[4];
    vstrbq_s32(v8, v);
    tfl_residual_run(e, v8, at, 4, y);
}
#endif
#endif

#if AOTC_QUANT_DSP

/* n bytes from src to dst: words while 4 are left (the cores with the DSP extension load and store unaligned
 * words), then bytes; for the few bytes of a kernel row, where a call of memcpy costs more than the copy
 * (the empty assembly keeps gcc from making the loops one: a stem's 9 bytes a row took 50 cycles so). */
#if defined(__GNUC__)
#define TFL_DSP_OPAQUE(v) __asm__("" : "+r"(v))
#else
#define TFL_DSP_OPAQUE(v) (void)0
#endif
static inline void tfl_dsp_copy(int8_t *dst, const int8_t *src, int32_t n) {
    for (; n >= 4; n -= 4, dst += 4, src += 4) {
        uint32_t v = aotc_dsp_load32(src);
        TFL_DSP_OPAQUE(v);
        memcpy(dst, &v, 4);
    }
    for (; n > 0; --n) {
        uint32_t v = (uint32_t)(uint8_t)*src++;
        TFL_DSP_OPAQUE(v);
        *dst++ = (int8_t)v;
    }
}

/* A word's bytes 0 and 2 (lo) or 1 and 3 (hi) less x_zero (zz: twice) as 16-bit halves: one SXTAB16 each, the bytes
 * sign-extended and added to -x_zero (twice; loop-invariant where inlined), not an extend and an SSUB16 (each
 * half of x - x_zero in [-255, 255] is exact either way). -x_zero twice from zz in plain C (gcc hoists it; not
 * an SSUB16, whose intrinsic it computes again each time). */
#define TFL_DSP_NZ(zz) (((0u - (uint32_t)(zz)) & 0xFFFFu) * 0x10001u)
static inline __attribute__((always_inline)) uint32_t tfl_dsp_less_lo(uint32_t v, uint32_t zz) {
    return (uint32_t)__sxtab16((int32_t)TFL_DSP_NZ(zz), (int32_t)v);
}
static inline __attribute__((always_inline)) uint32_t tfl_dsp_less_hi(uint32_t v, uint32_t zz) {
#if AOTC_DSP_ASM
    uint32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(TFL_DSP_NZ(zz)), "r"(v));
    return r;
#else
    return (uint32_t)__sxtab16((int32_t)TFL_DSP_NZ(zz), (int32_t)aotc_dsp_ror8(v));
#endif
}

/* Patch rows [r0, r0 + 4 * nq) of the output position at = {ox, oy, batch} as x - x_zero, E / O words
 * into dst[0], dst[1], dst[4], dst[5], ... (a quad's words of one position, the pair's other position
 * between them); from = row r0's {tap, channel, ky, kx}, worked out once a block by the caller. */
static void tfl_dsp_patch(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t *at, const int32_t *from,
                          int32_t nq, uint32_t *dst) {
    const int32_t ox = at[0], oy = at[1], b = at[2];
    const uint32_t zz = (uint32_t)(uint16_t)p->x_zero * 0x10001u;
    const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
    int32_t q = 0;
    if (p->c % 4 == 0) { /* every quad lies in one tap: its 4 bytes are one word of x */
        const int32_t taps = p->kh * p->kw;
        const int8_t *xb = x + (int64_t)b * p->h * p->w * p->c; /* the image: its offsets fit 32 bits */
        int32_t tap = from[0], ch = from[1], ky = from[2], kx = from[3];
        for (; q < nq; ch = 0, ++tap, kx = kx + 1 == p->kw ? 0 : kx + 1, ky += kx == 0) { /* tap by tap */
            const int32_t iy = iy0 + ky * p->dh, ix = ix0 + kx * p->dw;
            int32_t run = (p->c - ch) / 4; /* quads left in this tap */
            run = run < nq - q ? run : nq - q;
            if (tap >= taps || iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) {
                for (; run > 0; --run, ++q, dst += 4) dst[0] = dst[1] = 0;
                continue;
            }
            const int8_t *xs = xb + (iy * p->w + ix) * p->c + ch;
            q += run;
            if (run & 1) {
                const uint32_t v = aotc_dsp_load32(xs);
                dst[0] = tfl_dsp_less_lo(v, zz);
                dst[1] = tfl_dsp_less_hi(v, zz);
                dst += 4, xs += 4;
            }
            for (run >>= 1; run > 0; --run, dst += 8, xs += 8) { /* two quads a turn: the loads pipeline */
                const uint32_t v = aotc_dsp_load32(xs), u = aotc_dsp_load32(xs + 4);
                dst[0] = tfl_dsp_less_lo(v, zz);
                dst[1] = tfl_dsp_less_hi(v, zz);
                dst[4] = tfl_dsp_less_lo(u, zz);
                dst[5] = tfl_dsp_less_hi(u, zz);
            }
        }
        return;
    }
    if (p->dw == 1 && (p->c * p->kw) % 4 == 0) { /* every quad lies in one kernel row (a 1-channel input's
        * 8-wide window): a row inside the image widened straight from x, a row in the padding zeros, a row across
        * its border quad by quad (x_zero outside) */
        const int32_t c = p->c, kw = p->kw, row_bytes = c * kw;
        const int8_t *xb = x + (int64_t)b * p->h * p->w * c;
        int32_t ky = from[2], off = from[3] * c + from[1]; /* the kernel row, and the byte in it */
        while (q < nq) {
            const int32_t iy = iy0 + ky * p->dh;
            int32_t run = (row_bytes - off) / 4, i;
            run = run < nq - q ? run : nq - q;
            if (ky >= p->kh || iy < 0 || iy >= p->h) {
                for (i = 0; i < run; ++i, dst += 4) dst[0] = dst[1] = 0;
            } else if (ix0 >= 0 && ix0 + kw <= p->w) {
                const int8_t *xs = xb + ((int64_t)iy * p->w + ix0) * c + off;
                for (i = 0; i < run; ++i, dst += 4, xs += 4) {
                    const uint32_t v = aotc_dsp_load32(xs);
                    dst[0] = tfl_dsp_less_lo(v, zz);
                    dst[1] = tfl_dsp_less_hi(v, zz);
                }
            } else {
                const int8_t *xr = xb + (int64_t)iy * p->w * c;
                for (i = 0; i < run; ++i, dst += 4) {
                    int8_t v4[4];
                    uint32_t v;
                    int32_t k;
                    for (k = 0; k < 4; ++k) {
                        const int32_t at = off + 4 * i + k, ix = ix0 + at / c;
                        v4[k] = ix >= 0 && ix < p->w ? xr[(int64_t)ix * c + at % c] : (int8_t)p->x_zero;
                    }
                    memcpy(&v, v4, 4);
                    dst[0] = tfl_dsp_less_lo(v, zz);
                    dst[1] = tfl_dsp_less_hi(v, zz);
                }
            }
            q += run, ++ky, off = 0;
        }
        return;
    }
    { /* a tap's channels at a time into v as bytes of x (x_zero in the padding, so that x - x_zero is 0
       * there, and past k, whose weights are 0), a whole kernel row's where its taps are contiguous in x
       * (dilation 1: x_zero where the row lies outside the image, one copy of its part inside: a border
       * position of a stem is a few calls, not one a tap), then each quad's word widened less x_zero:
       * E = [v0, v2], O = [v1, v3] */
        const int32_t taps = p->kh * p->kw, c = p->c, rows = 4 * nq, kw = p->kw;
        const int32_t row_in = p->dw == 1 && ix0 >= 0 && ix0 + kw <= p->w; /* a kernel row inside */
        int8_t v[4 * TFL_DSP_KC];
        int32_t tap = from[0], ch = from[1], ky = from[2], kx = from[3], j = 0;
        while (j < rows) {
            const int32_t iy = iy0 + ky * p->dh, ix = ix0 + kx * p->dw;
            const int32_t y_in = tap < taps && iy >= 0 && iy < p->h;
            int32_t run;
            if (kx == 0 && ch == 0 && p->dw == 1 && kw * c <= rows - j && tap < taps) {
                /* a whole kernel row at once (its taps contiguous in x): x_zero, then the part inside */
                const int32_t lo = ix0 < 0 ? -ix0 : 0, hi = ix0 + kw > p->w ? p->w - ix0 : kw;
                if (!y_in || lo >= hi) {
                    memset(v + j, p->x_zero, (size_t)(kw * c));
                } else {
                    if (lo > 0 || hi < kw) memset(v + j, p->x_zero, (size_t)(kw * c));
                    tfl_dsp_copy(v + j + lo * c, x + (((int64_t)b * p->h + iy) * p->w + ix + lo) * c, (hi - lo) * c);
                }
                j += kw * c, tap += kw, ++ky; /* the next kernel row, kx and ch 0 */
                continue;
            }
            if (y_in && row_in && kx == 0 && ch == 0) { /* kw x c values at once */
                run = kw * c < rows - j ? kw * c : rows - j;
                tfl_dsp_copy(v + j, x + (((int64_t)b * p->h + iy) * p->w + ix) * c, run);
                j += run, tap += kw, ++ky; /* the next kernel row, kx and ch 0 */
                continue;
            }
            run = c - ch < rows - j ? c - ch : rows - j;
            if (!y_in || ix < 0 || ix >= p->w) memset(v + j, p->x_zero, (size_t)run);
            else tfl_dsp_copy(v + j, x + (((int64_t)b * p->h + iy) * p->w + ix) * c + ch, run);
            j += run;
            ch = 0, ++tap, kx = kx + 1 == kw ? 0 : kx + 1, ky += kx == 0;
        }
        if (nq & 1) {
            const uint32_t u = aotc_dsp_load32(v);
            dst[0] = tfl_dsp_less_lo(u, zz);
            dst[1] = tfl_dsp_less_hi(u, zz);
            dst += 4, q = 1;
        }
        for (; q < nq; q += 2, dst += 8) { /* two quads a turn: the loads pipeline */
            const uint32_t u = aotc_dsp_load32(v + 4 * q), t = aotc_dsp_load32(v + 4 * q + 4);
            dst[0] = tfl_dsp_less_lo(u, zz);
            dst[1] = tfl_dsp_less_hi(u, zz);
            dst[4] = tfl_dsp_less_lo(t, zz);
            dst[5] = tfl_dsp_less_hi(t, zz);
        }
    }
}

/* aotc_dsp_widen_weights4 with each weight doubled (2 w fits a halfword): aotc_dsp_mac4x2_rq2's doubled sums */
static void tfl_dsp_widen_weights4x2(const int8_t *w0, const int8_t *w1, const int8_t *w2, const int8_t *w3, int32_t nq,
                                     uint32_t *wx) {
    int32_t q;
    for (q = 0; q < nq; ++q, wx += 8) {
        const uint32_t a = aotc_dsp_load32(w0 + 4 * q), b = aotc_dsp_load32(w1 + 4 * q);
        const uint32_t c = aotc_dsp_load32(w2 + 4 * q), d = aotc_dsp_load32(w3 + 4 * q);
        uint32_t t;
        t = (uint32_t)__sxtb16(a), wx[0] = (uint32_t)__sadd16((int32_t)t, (int32_t)t);
        t = (uint32_t)__sxtb16(b), wx[1] = (uint32_t)__sadd16((int32_t)t, (int32_t)t);
        t = (uint32_t)__sxtb16(c), wx[2] = (uint32_t)__sadd16((int32_t)t, (int32_t)t);
        t = (uint32_t)__sxtb16(d), wx[3] = (uint32_t)__sadd16((int32_t)t, (int32_t)t);
        t = aotc_dsp_sxtb16_hi(a), wx[4] = (uint32_t)__sadd16((int32_t)t, (int32_t)t);
        t = aotc_dsp_sxtb16_hi(b), wx[5] = (uint32_t)__sadd16((int32_t)t, (int32_t)t);
        t = aotc_dsp_sxtb16_hi(c), wx[6] = (uint32_t)__sadd16((int32_t)t, (int32_t)t);
        t = aotc_dsp_sxtb16_hi(d), wx[7] = (uint32_t)__sadd16((int32_t)t, (int32_t)t);
    }
}

#if AOTC_DSP_ASM
/* aotc_dsp_widen_weights4 in assembly (with dbl, a constant, each weight doubled as tfl_dsp_widen_weights4x2 does): a
 * quad's 4 words by post-indexed loads (pipelined), each widened and its two halves stored as loaded (gcc's loop:
 * register-offset loads, an add and a compare a quad: 27 cycles a quad; at two quads a turn 23, doubled 31); four
 * quads a turn, the turn's add and branch on four (IC02, whose 3 x 3 layers' weights are widened each tile:
 * 91,306,199 -> 91,092,240 est. cycles on the M4 -O3) */
#define TFL_DSP_W4_PUT(v, o, D)                                                                            \
    "sxtb16 %[e], " v "\n\t"                                                                            \
    "sxtb16 " v ", " v ", ror #8\n\t" D("%[e]") D(v) "str %[e], [%[wx], #(" #o ")]\n\t"                 \
    "str " v ", [%[wx], #(" #o " + 16)]\n\t"
#define TFL_DSP_W4_QUAD(o, D)                                                                              \
    "ldr %[a], [%[w0]], #4\n\t"                                                                        \
    "ldr %[b], [%[w1]], #4\n\t"                                                                        \
    "ldr %[c], [%[w2]], #4\n\t"                                                                        \
    "ldr %[d], [%[w3]], #4\n\t" TFL_DSP_W4_PUT("%[a]", o, D) TFL_DSP_W4_PUT("%[b]", o + 4, D)            \
        TFL_DSP_W4_PUT("%[c]", o + 8, D) TFL_DSP_W4_PUT("%[d]", o + 12, D)
#define TFL_DSP_W4_KEEP(v)
#define TFL_DSP_W4_DBL(v) "sadd16 " v ", " v ", " v "\n\t"
#define TFL_DSP_W4_OUT                                                                                     \
    [w0] "+&r"(w0), [w1] "+&r"(w1), [w2] "+&r"(w2), [w3] "+&r"(w3), [wx] "+&r"(wx), [n] "+&r"(nq), [a] "=&r"(a), \
        [b] "=&r"(b), [c] "=&r"(c), [d] "=&r"(d), [e] "=&r"(e)
#define TFL_DSP_W4_ASM(D)                                                                                  \
    do {                                                                                                   \
        if (nq & 1) __asm__ volatile(TFL_DSP_W4_QUAD(0, D) "add %[wx], %[wx], #32\n\t" : TFL_DSP_W4_OUT : : "memory"); \
        if (nq & 2)                                                                                        \
            __asm__ volatile(TFL_DSP_W4_QUAD(0, D) TFL_DSP_W4_QUAD(32, D) "add %[wx], %[wx], #64\n\t"         \
                             : TFL_DSP_W4_OUT : : "memory");                                               \
        nq >>= 2;                                                                                          \
        if (nq > 0)                                                                                        \
            __asm__ volatile("1:\n\t" TFL_DSP_W4_QUAD(0, D) TFL_DSP_W4_QUAD(32, D) TFL_DSP_W4_QUAD(64, D)    \
                                 TFL_DSP_W4_QUAD(96, D) "add %[wx], %[wx], #128\n\t"                       \
                             "subs %[n], %[n], #1\n\t"                                                  \
                             "bne 1b\n\t"                                                               \
                             : TFL_DSP_W4_OUT                                                              \
                             :                                                                             \
                             : "cc", "memory");                                                            \
    } while (0)
static void tfl_dsp_widen_w4(const int8_t *w0, const int8_t *w1, const int8_t *w2, const int8_t *w3, int32_t nq,
                             uint32_t *wx, int dbl) {
    uint32_t a, b, c, d, e;
    if (dbl) TFL_DSP_W4_ASM(TFL_DSP_W4_DBL);
    else TFL_DSP_W4_ASM(TFL_DSP_W4_KEEP);
}
#undef TFL_DSP_W4_ASM
#undef TFL_DSP_W4_OUT
#undef TFL_DSP_W4_DBL
#undef TFL_DSP_W4_KEEP
#undef TFL_DSP_W4_QUAD
#undef TFL_DSP_W4_PUT
#else
static void tfl_dsp_widen_w4(const int8_t *w0, const int8_t *w1, const int8_t *w2, const int8_t *w3, int32_t nq,
                             uint32_t *wx, int dbl) {
    if (dbl) tfl_dsp_widen_weights4x2(w0, w1, w2, w3, nq, wx);
    else aotc_dsp_widen_weights4(w0, w1, w2, w3, nq, wx);
}
#endif

/* The weights of channels c[0 .. 3] over rows [r0, r0 + 4 * nq) widened as aotc_dsp_widen_weights4 does (doubled
 * with dbl), rows past k as zeros (not read). */
static void tfl_dsp_weights(const int8_t *w, int32_t k, const int32_t *c, int32_t r0, int32_t nq, int dbl,
                            uint32_t *wx) {
    const int32_t left = k - r0, full = left / 4 < nq ? left / 4 : nq;
    const int8_t *w0 = w + (int64_t)c[0] * k + r0, *w1 = w + (int64_t)c[1] * k + r0;
    const int8_t *w2 = w + (int64_t)c[2] * k + r0, *w3 = w + (int64_t)c[3] * k + r0;
    if (full > 0) tfl_dsp_widen_w4(w0, w1, w2, w3, full, wx, dbl);
    if (full < nq) {
        int8_t t[4][4] = {{0}};
        int32_t j;
        for (j = 0; j < left - 4 * full && j < 4; ++j) {
            t[0][j] = w0[4 * full + j], t[1][j] = w1[4 * full + j];
            t[2][j] = w2[4 * full + j], t[3][j] = w3[4 * full + j];
        }
        if (dbl) tfl_dsp_widen_weights4x2(t[0], t[1], t[2], t[3], 1, wx + 8 * full);
        else aotc_dsp_widen_weights4(t[0], t[1], t[2], t[3], 1, wx + 8 * full);
        for (j = 8 * (full + 1); j < 8 * nq; ++j) wx[j] = 0;
    }
}

/* tfl_dsp_requant_run's usual case (its SMMLAR path with right > 0 and the clamp's top 127) over a pair
 * of positions' sums a[0], a[1] (as aotc_dsp_mac4x2 leaves them) to y[0], y[oc]: its per-call set-up and
 * the pairs' two runs in one loop. With lo -128, SSAT alone clamps (no ReLU, or a ReLU at the zero point
 * -128): `low` is a constant where it is inlined. */
static inline __attribute__((always_inline)) void tfl_dsp_store_pairs(const int32_t *a, int32_t np, int32_t mult,
                                                                      int32_t s, int32_t ra, int32_t right,
                                                                      int32_t lo, int low, int8_t *y, int32_t oc) {
    int32_t t;
    for (t = 0; t + 1 < np; t += 2, a += 8, y += 2 * oc) {
        const int32_t a0 = (int32_t)((uint32_t)a[0] << s), a1 = (int32_t)((uint32_t)a[1] << s);
        int32_t q0 = __ssat((tfl_dsp_smmlar(a0, mult, ra) + (a0 >> 31)) >> right, 8);
        int32_t q1 = __ssat((tfl_dsp_smmlar(a1, mult, ra) + (a1 >> 31)) >> right, 8);
        if (low) q0 = q0 < lo ? lo : q0, q1 = q1 < lo ? lo : q1;
        y[0] = (int8_t)q0, y[oc] = (int8_t)q1;
    }
    if (t < np) {
        const int32_t a0 = (int32_t)((uint32_t)a[0] << s);
        int32_t q0 = __ssat((tfl_dsp_smmlar(a0, mult, ra) + (a0 >> 31)) >> right, 8);
        if (low) q0 = q0 < lo ? lo : q0;
        y[0] = (int8_t)q0;
    }
}

/* Sums of channels c0 .. c0 + nc - 1 (nc <= 4) at np positions from p0 (acc: aotc_dsp_mac4x2's layout,
 * the bias already in them) to y (not inlined: the requantisation loop then has the registers to itself). */
__attribute__((noinline)) static void tfl_dsp_store(const aotc_tfl_conv_params *p, const int32_t *bias,
                                                    const int32_t *acc, int32_t p0, int32_t np, int32_t c0, int32_t nc,
                                                    int8_t *y) {
    const int32_t oc = p->oc, lo = p->y_min;
    const int64_t k_bound = (int64_t)p->kh * p->kw * p->c * TFL_DSP_PRODUCT_MAX;
    int32_t j;
    for (j = 0; j < nc; ++j) {
        const int32_t c = c0 + j, b = bias ? bias[c] : 0, mult = p->mult[c], shift = p->shift[c];
        const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
        const int64_t bound = k_bound + tfl_dsp_abs64(b);
        int8_t *yc = y + (int64_t)p0 * oc + c;
        if (mult != INT32_MIN && left < 30 && bound < ((int64_t)1 << (30 - left)) && right > 0 &&
            right <= TFL_DSP_CONV_RIGHT && p->y_max == 127 && lo >= -128) { /* as tfl_dsp_requant_run's first loop,
                                                                              * both positions of a pair */
            const int32_t ra = (1 << (right - 1)) + p->y_zero * (1 << right);
            if (lo == -128) tfl_dsp_store_pairs(acc + 2 * j, np, mult, left + 1, ra, right, lo, 0, yc, oc);
            else tfl_dsp_store_pairs(acc + 2 * j, np, mult, left + 1, ra, right, lo, 1, yc, oc);
            continue;
        }
        /* positions in pairs: t even at acc[4t + 2j], t odd one word on */
        tfl_dsp_requant_run(acc + 2 * j, 8, (np + 1) / 2, 0, mult, shift, p->y_zero, lo, p->y_max, yc, 2 * oc, bound);
        tfl_dsp_requant_run(acc + 2 * j + 1, 8, np / 2, 0, mult, shift, p->y_zero, lo, p->y_max, yc + oc, 2 * oc, bound);
    }
}

/* Whether every output channel takes tfl_dsp_store's usual requantisation (tfl_dsp_requant_run's SMMLAR
 * path with right > 0 and the clamp's top 127), so the store need not test each channel again a tile. */
static int tfl_dsp_usual(const aotc_tfl_conv_params *p, const int32_t *bias) {
    /* right in [1, 23] is shift in [-23, -1] (one unsigned compare); it makes left 0, so the bound is
     * k_bound + |bias| < 2^30: |bias| below lim, a 32-bit compare (lim 0 where k_bound alone is past it). Per
     * channel a few instructions, not 64-bit bounds from shifts each (tfl_dsp_store's test, as it was): VWW -O3
     * tflite (no compile-time terms, so checked a call) 11,410,673 -> 11,376,424 est. cycles. The same answers for
     * every shift but INT32_MIN, which the old form took by -shift's overflow and this one refuses. */
    const int64_t k_bound = (int64_t)p->kh * p->kw * p->c * TFL_DSP_PRODUCT_MAX;
    const uint32_t lim = k_bound < ((int64_t)1 << 30) ? (uint32_t)(((int64_t)1 << 30) - k_bound) : 0u;
    const int32_t *const mult = p->mult, *const shift = p->shift;
    int32_t c;
    if (p->y_max != 127 || p->y_min < -128) return 0;
    for (c = 0; c < p->oc; ++c) {
        const int32_t b = bias ? bias[c] : 0;
        const uint32_t ab = b < 0 ? 0u - (uint32_t)b : (uint32_t)b;
        if (mult[c] == INT32_MIN || (uint32_t)(-1 - shift[c]) > (uint32_t)(TFL_DSP_CONV_RIGHT - 1) || ab >= lim) return 0;
    }
    return 1;
}

/* tfl_dsp_store where tfl_dsp_usual holds: each channel's shifts and rounding term from its multiplier's
 * shift alone (a few instructions, not the general store's 64-bit bounds a channel and tile). */
__attribute__((noinline)) static void tfl_dsp_store_usual(const aotc_tfl_conv_params *p, const int32_t *acc,
                                                          int32_t p0, int32_t np, int32_t c0, int32_t nc, int8_t *y) {
    const int32_t oc = p->oc, lo = p->y_min;
    int8_t *yc = y + (int64_t)p0 * oc + c0;
    int32_t j;
    for (j = 0; j < nc; ++j, ++yc) {
        const int32_t shift = p->shift[c0 + j], left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
        const int32_t ra = (1 << (right - 1)) + p->y_zero * (1 << right);
        if (lo == -128) tfl_dsp_store_pairs(acc + 2 * j, np, p->mult[c0 + j], left + 1, ra, right, lo, 0, yc, oc);
        else tfl_dsp_store_pairs(acc + 2 * j, np, p->mult[c0 + j], left + 1, ra, right, lo, 1, yc, oc);
    }
}

/* m quads of two positions' bytes (a, b) less x_zero (zz: twice), widened in tfl_dsp_patch's layout: for
 * each quad E(a), O(a), E(b), O(b); doubled with dbl (a constant where it is inlined). */
static inline __attribute__((always_inline)) void tfl_dsp_widen2d(const int8_t *a, const int8_t *b, int32_t m,
                                                                  uint32_t zz, uint32_t *dst, int dbl) {
    for (; m > 0; --m, a += 4, b += 4, dst += 4) {
        const uint32_t v = aotc_dsp_load32(a), u = aotc_dsp_load32(b);
        int32_t d0 = (int32_t)tfl_dsp_less_lo(v, zz), d1 = (int32_t)tfl_dsp_less_hi(v, zz);
        int32_t d2 = (int32_t)tfl_dsp_less_lo(u, zz), d3 = (int32_t)tfl_dsp_less_hi(u, zz);
        if (dbl) d0 = __sadd16(d0, d0), d1 = __sadd16(d1, d1), d2 = __sadd16(d2, d2), d3 = __sadd16(d3, d3);
        dst[0] = (uint32_t)d0, dst[1] = (uint32_t)d1, dst[2] = (uint32_t)d2, dst[3] = (uint32_t)d3;
    }
}

/* tfl_dsp_widen2d without doubling (the patches of windows inside the image, a kernel row's run at a time); in
 * assembly two quads a turn: the 4 loads pipelined (the bases alternating after each writeback), 8 SXTAB16 and 8
 * stores, 26 est. cycles for the two (gcc's loop of one: 16 each). */
static inline void tfl_dsp_widen2(const int8_t *a, const int8_t *b, int32_t m, uint32_t zz, uint32_t *dst) {
#if AOTC_DSP_ASM
    if (m & 1) tfl_dsp_widen2d(a, b, 1, zz, dst, 0), a += 4, b += 4, dst += 4;
    m >>= 1;
    if (m > 0) {
        uint32_t v0, u0, v1, u1, e, f;
        __asm__ volatile("1:\n\t"
                         "ldr %[v0], [%[a]], #8\n\t"
                         "ldr %[u0], [%[b]], #8\n\t"
                         "ldr %[v1], [%[a], #-4]\n\t"
                         "ldr %[u1], [%[b], #-4]\n\t"
                         "sxtab16 %[e], %[nz], %[v0]\n\t"
                         "sxtab16 %[v0], %[nz], %[v0], ror #8\n\t"
                         "sxtab16 %[f], %[nz], %[u0]\n\t"
                         "sxtab16 %[u0], %[nz], %[u0], ror #8\n\t"
                         "str %[e], [%[d]]\n\t"
                         "str %[v0], [%[d], #4]\n\t"
                         "str %[f], [%[d], #8]\n\t"
                         "str %[u0], [%[d], #12]\n\t"
                         "sxtab16 %[e], %[nz], %[v1]\n\t"
                         "sxtab16 %[v1], %[nz], %[v1], ror #8\n\t"
                         "sxtab16 %[f], %[nz], %[u1]\n\t"
                         "sxtab16 %[u1], %[nz], %[u1], ror #8\n\t"
                         "str %[e], [%[d], #16]\n\t"
                         "str %[v1], [%[d], #20]\n\t"
                         "str %[f], [%[d], #24]\n\t"
                         "str %[u1], [%[d], #28]\n\t"
                         "adds %[d], %[d], #32\n\t"
                         "subs %[m], %[m], #1\n\t"
                         "bne 1b\n\t"
                         : [a] "+&r"(a), [b] "+&r"(b), [d] "+&r"(dst), [m] "+&r"(m), [v0] "=&r"(v0), [u0] "=&r"(u0),
                           [v1] "=&r"(v1), [u1] "=&r"(u1), [e] "=&r"(e), [f] "=&r"(f)
                         : [nz] "r"(TFL_DSP_NZ(zz))
                         : "cc", "memory");
    }
#else
    tfl_dsp_widen2d(a, b, m, zz, dst, 0);
#endif
}

/* A 1 x 1 window at stride 1 without padding: a tile's positions are consecutive rows of x (c bytes each, a
 * multiple of 4), so its patches are those rows' quads [q0, q0 + nq) widened pair by pair, in tfl_dsp_patch's
 * layout (n positions from row x, an odd tile's last pair repeating its position): one loop, no call a
 * position. */
#if AOTC_DSP_ASM
/* tfl_dsp_rows' quads of a pair (a, b) where x_zero is -128 (a ReLU's output, every pointwise layer's input in a
 * MobileNet): x - x_zero = x + 128, so a word is two SXTAB16s adding its bytes to k = [128, 128] (not two
 * SXTB16s and two SSUB16s; an EOR 0x80808080 and two UXTB16s, as it was, took 177,802 est. cycles on VWW -O3
 * tflite-ww in tfl_dsp_rows_u8_pairs, the SXTAB16s 155,644); doubled, x + 128 is the byte x ^ 0x80 unsigned and
 * each half twice its byte by one AND of that word shifted (left 1 or right 7) with k = 0x01FE01FE (not two
 * UXTB16s and two shifts); two quads a turn, entered at the second for an odd m (m >= 1) */
#define TFL_DSP_ROWS_WIDEN(e, v) /* (e, v): the word v's bytes 0, 2 and 1, 3 as halves, each plus 128 (k) */ \
    "sxtab16 " e ", %[k], " v "\n\t"                                                                    \
    "sxtab16 " v ", %[k], " v ", ror #8\n\t"
#define TFL_DSP_ROWS_WIDEN2(e, v) /* doubled */                                                            \
    "and " e ", %[k], " v ", lsl #1\n\t"                                                                \
    "and " v ", %[k], " v ", lsr #7\n\t"
#define TFL_DSP_ROWS_FLIP(v) "eor " v ", " v ", #0x80808080\n\t" /* WIDEN2's bytes x + 128 unsigned */
#define TFL_DSP_ROWS_KEEP(v)                                       /* WIDEN's SXTAB16 adds k's 128 */
#define TFL_DSP_ROWS_K(dbl) ((dbl) ? 0x01FE01FEu : 0x00800080u)
#define TFL_DSP_ROWS_QUAD(W, F, s)                                                                            \
    "ldr %[v], [%[a]], #4\n\t"                                                                           \
    "ldr %[u], [%[b]], #4\n\t"                                                                           \
    F("%[v]") F("%[u]") W("%[e]", "%[v]")                                                  \
    "str %[e], [%[d], #" #s "]\n\t"                                                                      \
    "str %[v], [%[d], #" #s " + 4]\n\t" W("%[e]", "%[u]")                                                \
    "str %[e], [%[d], #" #s " + 8]\n\t"                                                                  \
    "str %[u], [%[d], #" #s " + 12]\n\t"
#define TFL_DSP_ROWS_ASM(W, F, K)                                                                           \
    __asm__ volatile("tst %[m], #1\n\t"                                                                  \
                     "bne 2f\n"                                                                          \
                     "1:\n\t" TFL_DSP_ROWS_QUAD(W, F, 0) "adds %[d], %[d], #16\n"                      \
                     "2:\n\t" TFL_DSP_ROWS_QUAD(W, F, 0) "adds %[d], %[d], #16\n\t"                    \
                     "cmp %[d], %[end]\n\t"                                                              \
                     "bne 1b\n\t"                                                                       \
                     : [a] "+&r"(a), [b] "+&r"(b), [d] "+&r"(d), [v] "=&r"(v), [u] "=&r"(u), [e] "=&r"(e)  \
                     : [m] "r"(m), [end] "r"(end), [k] "r"(K)                                               \
                     : "cc", "memory")
static inline __attribute__((always_inline)) void tfl_dsp_rows_u8(const int8_t *a, const int8_t *b, int32_t m,
                                                                  uint32_t *d, int dbl) {
    uint32_t *const end = d + 4 * m;
    uint32_t v, u, e;
    if (dbl) TFL_DSP_ROWS_ASM(TFL_DSP_ROWS_WIDEN2, TFL_DSP_ROWS_FLIP, TFL_DSP_ROWS_K(1));
    else TFL_DSP_ROWS_ASM(TFL_DSP_ROWS_WIDEN, TFL_DSP_ROWS_KEEP, TFL_DSP_ROWS_K(0));
}
/* tfl_dsp_rows_u8 over `pairs` pairs of rows (a, a + c), each pair's 2c bytes on from the last, m quads each (m even):
 * one loop, the next pair's rows a step of 2c - 4m from where the last pair's ended (no C between pairs: its ~30
 * cycles a pair), the destination stored past by its first store (no add a quad). Two quads of a pair are one run
 * of 4 loads (the rows alternating, so each pipelines: 5 cycles, not two runs' 6), a turn is 8 quads where m is a
 * multiple of 8, 4 where of 4 (its test, 4 cycles, a turn), else 2: 11 cycles a quad of a pair at 8 a turn, 11.5
 * at 4 (2 more with the EORs, doubled); 8 channels (m = 2, one block: a MobileNet's first pointwise layer) by a
 * loop of their own, the pairs' rows 16 bytes one after the other (TFL_DSP_ROWS_C8_ASM: 12.5 a quad, not the inner
 * loop's 15). They were 13 (15) with one quad's 2 loads a run and 2 quads a turn: VWW -O3 --widened-weights
 * tfl_dsp_rows_u8_pairs 155,644 -> 141,803 est. cycles (runs of 4 loads, turns of 4) -> 132,683 (turns of 8, the
 * loop of 8 channels). */
#define TFL_DSP_ROWS_LOAD2 /* two quads of rows a and b */                                            \
    "ldr %[v], [%[a]], #4\n\t"                                                                           \
    "ldr %[u], [%[b]], #4\n\t"                                                                           \
    "ldr %[v2], [%[a]], #4\n\t"                                                                          \
    "ldr %[u2], [%[b]], #4\n\t"
#define TFL_DSP_ROWS_LOAD_C8 /* a pair of rows of 8 bytes, 16 from a (the post-indexed load last: each pipelines) */ \
    "ldr %[v2], [%[a], #4]\n\t"                                                                          \
    "ldr %[u], [%[a], #8]\n\t"                                                                           \
    "ldr %[u2], [%[a], #12]\n\t"                                                                         \
    "ldr %[v], [%[a]], #16\n\t"
#define TFL_DSP_ROWS_QUAD2_L(W, F, L)                                                                         \
    L F("%[v]") F("%[u]") F("%[v2]") F("%[u2]") W("%[e]", "%[v]")                                         \
    "str %[e], [%[d]], #32\n\t"                                                                          \
    "str %[v], [%[d], #-28]\n\t" W("%[e]", "%[u]")                                                       \
    "str %[e], [%[d], #-24]\n\t"                                                                         \
    "str %[u], [%[d], #-20]\n\t" W("%[e]", "%[v2]")                                                      \
    "str %[e], [%[d], #-16]\n\t"                                                                         \
    "str %[v2], [%[d], #-12]\n\t" W("%[e]", "%[u2]")                                                     \
    "str %[e], [%[d], #-8]\n\t"                                                                          \
    "str %[u2], [%[d], #-4]\n\t"
#define TFL_DSP_ROWS_PAIRS_ASM(W, F, K, TURN)                                                                \
    __asm__ volatile("1:\n\t"                                                                             \
                     "add %[pe], %[d], %[pb]\n"                                                          \
                     "2:\n\t" TURN(W, F)                                                                  \
                     "cmp %[d], %[pe]\n\t"                                                               \
                     "bne 2b\n\t"                                                                        \
                     "add %[a], %[a], %[s]\n\t"                                                          \
                     "add %[b], %[b], %[s]\n\t"                                                          \
                     "cmp %[d], %[end]\n\t"                                                              \
                     "bne 1b\n\t"                                                                       \
                     : [a] "+&r"(a), [b] "+&r"(b), [d] "+&r"(d), [pe] "=&r"(pe), [v] "=&r"(v), [u] "=&r"(u), \
                       [v2] "=&r"(v2), [u2] "=&r"(u2), [e] "=&r"(e)                                       \
                     : [pb] "r"(16 * m), [s] "r"(2 * c - 4 * m), [end] "r"(end), [k] "r"(K)                 \
                     : "cc", "memory")
#define TFL_DSP_ROWS_QUAD2_P(W, F) TFL_DSP_ROWS_QUAD2_L(W, F, TFL_DSP_ROWS_LOAD2)
#define TFL_DSP_ROWS_TURN4(W, F) TFL_DSP_ROWS_QUAD2_P(W, F) TFL_DSP_ROWS_QUAD2_P(W, F)
#define TFL_DSP_ROWS_TURN8(W, F) TFL_DSP_ROWS_TURN4(W, F) TFL_DSP_ROWS_TURN4(W, F)
/* 8 channels (a MobileNet's first pointwise layer): a pair's rows are 16 bytes from a, the pairs one after the other
 * (one block: m = 2, c = 8), so no inner loop, one pointer */
#define TFL_DSP_ROWS_C8_ASM(W, F, K)                                                                          \
    __asm__ volatile("1:\n\t" TFL_DSP_ROWS_QUAD2_L(W, F, TFL_DSP_ROWS_LOAD_C8)                             \
                     "cmp %[d], %[end]\n\t"                                                              \
                     "bne 1b\n\t"                                                                       \
                     : [a] "+&r"(a), [d] "+&r"(d), [v] "=&r"(v), [u] "=&r"(u), [v2] "=&r"(v2), [u2] "=&r"(u2),  \
                       [e] "=&r"(e)                                                                       \
                     : [end] "r"(end), [k] "r"(K)                                                          \
                     : "cc", "memory")
__attribute__((noinline)) static void tfl_dsp_rows_u8_pairs(const int8_t *a, int32_t c, int32_t pairs, int32_t m,
                                                           uint32_t *d, int dbl) {
    const int8_t *b = a + c;
    uint32_t *const end = d + 4 * m * pairs, *pe;
    uint32_t v, u, v2, u2, e;
    if (m == 2 && c == 8) {
        if (dbl) TFL_DSP_ROWS_C8_ASM(TFL_DSP_ROWS_WIDEN2, TFL_DSP_ROWS_FLIP, TFL_DSP_ROWS_K(1));
        else TFL_DSP_ROWS_C8_ASM(TFL_DSP_ROWS_WIDEN, TFL_DSP_ROWS_KEEP, TFL_DSP_ROWS_K(0));
    } else if (m % 8 == 0) {
        if (dbl) TFL_DSP_ROWS_PAIRS_ASM(TFL_DSP_ROWS_WIDEN2, TFL_DSP_ROWS_FLIP, TFL_DSP_ROWS_K(1), TFL_DSP_ROWS_TURN8);
        else TFL_DSP_ROWS_PAIRS_ASM(TFL_DSP_ROWS_WIDEN, TFL_DSP_ROWS_KEEP, TFL_DSP_ROWS_K(0), TFL_DSP_ROWS_TURN8);
    } else if (m % 4 == 0) {
        if (dbl) TFL_DSP_ROWS_PAIRS_ASM(TFL_DSP_ROWS_WIDEN2, TFL_DSP_ROWS_FLIP, TFL_DSP_ROWS_K(1), TFL_DSP_ROWS_TURN4);
        else TFL_DSP_ROWS_PAIRS_ASM(TFL_DSP_ROWS_WIDEN, TFL_DSP_ROWS_KEEP, TFL_DSP_ROWS_K(0), TFL_DSP_ROWS_TURN4);
    } else {
        if (dbl)
            TFL_DSP_ROWS_PAIRS_ASM(TFL_DSP_ROWS_WIDEN2, TFL_DSP_ROWS_FLIP, TFL_DSP_ROWS_K(1), TFL_DSP_ROWS_QUAD2_P);
        else
            TFL_DSP_ROWS_PAIRS_ASM(TFL_DSP_ROWS_WIDEN, TFL_DSP_ROWS_KEEP, TFL_DSP_ROWS_K(0), TFL_DSP_ROWS_QUAD2_P);
    }
}
#if TFL_DSP_MAC2X4
/* tfl_dsp_rows_u8_pairs into aotc_dsp_mac2x4_rq3's layout: `blocks` blocks of 4 rows (a, a + c, a + 2c, a + 3c), each
 * block's 4c bytes on from the last, m quads each (m even); a block's first pair at d, 32 bytes a quad, its second
 * 16 bytes on (each pair's two quads stored past by its first store, 64 bytes a step): the same loads and widening as
 * tfl_dsp_rows_u8_pairs, the pairs' destination stepped between them. */
#define TFL_DSP_ROWS_QUAD2_4(W, F)                                                                            \
    TFL_DSP_ROWS_LOAD2 F("%[v]") F("%[u]") F("%[v2]") F("%[u2]") W("%[e]", "%[v]")                        \
    "str %[e], [%[d]], #64\n\t"                                                                          \
    "str %[v], [%[d], #-60]\n\t" W("%[e]", "%[u]")                                                       \
    "str %[e], [%[d], #-56]\n\t"                                                                         \
    "str %[u], [%[d], #-52]\n\t" W("%[e]", "%[v2]")                                                      \
    "str %[e], [%[d], #-32]\n\t"                                                                         \
    "str %[v2], [%[d], #-28]\n\t" W("%[e]", "%[u2]")                                                     \
    "str %[e], [%[d], #-24]\n\t"                                                                         \
    "str %[u2], [%[d], #-20]\n\t"
#define TFL_DSP_ROWS4_TURN4(W, F) TFL_DSP_ROWS_QUAD2_4(W, F) TFL_DSP_ROWS_QUAD2_4(W, F)
#define TFL_DSP_ROWS4_TURN8(W, F) TFL_DSP_ROWS4_TURN4(W, F) TFL_DSP_ROWS4_TURN4(W, F)
#define TFL_DSP_ROWS4_ASM(W, F, K, TURN)                                                                     \
    __asm__ volatile("1:\n\t"                                                                             \
                     "add %[pe], %[d], %[pb]\n"                                                          \
                     "2:\n\t" TURN(W, F)                                                                  \
                     "cmp %[d], %[pe]\n\t"                                                               \
                     "bne 2b\n\t"                                                                        \
                     "add %[a], %[a], %[s]\n\t"                                                          \
                     "add %[b], %[b], %[s]\n\t"                                                          \
                     "sub %[d], %[d], %[pb]\n\t"                                                         \
                     "add %[d], %[d], #16\n\t"                                                           \
                     "add %[pe], %[d], %[pb]\n"                                                          \
                     "3:\n\t" TURN(W, F)                                                                  \
                     "cmp %[d], %[pe]\n\t"                                                               \
                     "bne 3b\n\t"                                                                        \
                     "add %[a], %[a], %[s]\n\t"                                                          \
                     "add %[b], %[b], %[s]\n\t"                                                          \
                     "sub %[d], %[d], #16\n\t"                                                           \
                     "cmp %[d], %[end]\n\t"                                                              \
                     "bne 1b\n\t"                                                                       \
                     : [a] "+&r"(a), [b] "+&r"(b), [d] "+&r"(d), [pe] "=&r"(pe), [v] "=&r"(v), [u] "=&r"(u), \
                       [v2] "=&r"(v2), [u2] "=&r"(u2), [e] "=&r"(e)                                       \
                     : [pb] "r"(32 * m), [s] "r"(2 * c - 4 * m), [end] "r"(end), [k] "r"(K)                 \
                     : "cc", "memory")
__attribute__((noinline)) static void tfl_dsp_rows4_u8(const int8_t *a, int32_t c, int32_t blocks, int32_t m,
                                                      uint32_t *d, int dbl) {
    const int8_t *b = a + c;
    uint32_t *const end = d + 8 * m * blocks, *pe;
    uint32_t v, u, v2, u2, e;
    if (m % 8 == 0) {
        if (dbl) TFL_DSP_ROWS4_ASM(TFL_DSP_ROWS_WIDEN2, TFL_DSP_ROWS_FLIP, TFL_DSP_ROWS_K(1), TFL_DSP_ROWS4_TURN8);
        else TFL_DSP_ROWS4_ASM(TFL_DSP_ROWS_WIDEN, TFL_DSP_ROWS_KEEP, TFL_DSP_ROWS_K(0), TFL_DSP_ROWS4_TURN8);
    } else if (m % 4 == 0) {
        if (dbl) TFL_DSP_ROWS4_ASM(TFL_DSP_ROWS_WIDEN2, TFL_DSP_ROWS_FLIP, TFL_DSP_ROWS_K(1), TFL_DSP_ROWS4_TURN4);
        else TFL_DSP_ROWS4_ASM(TFL_DSP_ROWS_WIDEN, TFL_DSP_ROWS_KEEP, TFL_DSP_ROWS_K(0), TFL_DSP_ROWS4_TURN4);
    } else {
        if (dbl) TFL_DSP_ROWS4_ASM(TFL_DSP_ROWS_WIDEN2, TFL_DSP_ROWS_FLIP, TFL_DSP_ROWS_K(1), TFL_DSP_ROWS_QUAD2_4);
        else TFL_DSP_ROWS4_ASM(TFL_DSP_ROWS_WIDEN, TFL_DSP_ROWS_KEEP, TFL_DSP_ROWS_K(0), TFL_DSP_ROWS_QUAD2_4);
    }
}
#undef TFL_DSP_ROWS4_ASM
#undef TFL_DSP_ROWS4_TURN8
#undef TFL_DSP_ROWS4_TURN4
#undef TFL_DSP_ROWS_QUAD2_4
#endif
#undef TFL_DSP_ROWS_C8_ASM
#undef TFL_DSP_ROWS_TURN8
#undef TFL_DSP_ROWS_TURN4
#undef TFL_DSP_ROWS_QUAD2_P
#undef TFL_DSP_ROWS_QUAD2_L
#undef TFL_DSP_ROWS_LOAD_C8
#undef TFL_DSP_ROWS_LOAD2
#undef TFL_DSP_ROWS_PAIRS_ASM
#undef TFL_DSP_ROWS_ASM
#undef TFL_DSP_ROWS_QUAD
#undef TFL_DSP_ROWS_WIDEN
#undef TFL_DSP_ROWS_WIDEN2
#undef TFL_DSP_ROWS_FLIP
#undef TFL_DSP_ROWS_KEEP
#undef TFL_DSP_ROWS_K
#endif

static void tfl_dsp_rows(const int8_t *x, int32_t c, int32_t n, int32_t q0, int32_t nq, int32_t x_zero, int dbl,
                         uint32_t *dst) {
    const uint32_t zz = (uint32_t)(uint16_t)x_zero * 0x10001u;
    int32_t t;
#if AOTC_DSP_ASM
    if (x_zero == -128 && nq >= 1) {
        t = 0;
        if (nq % 2 == 0 && n >= 2) { /* the whole pairs in one loop, then an odd tile's last row */
            tfl_dsp_rows_u8_pairs(x + 4 * q0, c, n / 2, nq, dst, dbl);
            t = n & ~1, dst += (n / 2) * 4 * nq;
        }
        for (; t < n; t += 2, dst += 4 * nq) {
            const int8_t *a = x + (ptrdiff_t)t * c + 4 * q0;
            if (dbl) tfl_dsp_rows_u8(a, t + 1 < n ? a + c : a, nq, dst, 1);
            else tfl_dsp_rows_u8(a, t + 1 < n ? a + c : a, nq, dst, 0);
        }
        return;
    }
#endif
    for (t = 0; t < n; t += 2, dst += 4 * nq) {
        const int8_t *a = x + (int64_t)t * c + 4 * q0;
        if (dbl) tfl_dsp_widen2d(a, t + 1 < n ? a + c : a, nq, zz, dst, 1);
        else tfl_dsp_widen2d(a, t + 1 < n ? a + c : a, nq, zz, dst, 0);
    }
}

/* The patches' quads [q0, q0 + nq) of a pair of positions a0, a1 ({ox, oy, batch}) whose windows lie inside
 * the image, columns of dilation 1: each kernel row's taps are contiguous in x, so with channels a multiple
 * of 4 a block is a few runs of tfl_dsp_widen2 (no test a tap), and with others (a stem, its patch at most
 * TFL_DSP_STEM bytes) both windows are copied as bytes first. 0 where the pair is not such (the caller then
 * gathers each position by tfl_dsp_patch). */
#define TFL_DSP_STEM 64

#if !AOTC_DSP_ASM
/* One quad's word v less x_zero (zz: twice), widened into d[0] (E) and d[1] (O). */
static inline __attribute__((always_inline)) void tfl_dsp_put(uint32_t *d, uint32_t v, uint32_t zz) {
    d[0] = tfl_dsp_less_lo(v, zz);
    d[1] = tfl_dsp_less_hi(v, zz);
}
#endif

/* The patch of a 3 x 3 window over 3 channels (an RGB stem: 27 bytes, 7 quads) inside the image, r0 its first
 * byte, rows `row` bytes apart, widened into d in tfl_dsp_patch's layout (a quad's words at d[4q], d[4q + 1]),
 * straight from x: quads within a kernel row one (unaligned) word each, the two that straddle rows from two
 * words (byte 8 of row 0 into the word before row 1's bytes 0..2; row 1's bytes 7, 8 and row 2's 0, 1 as
 * halves), the last quad's fourth byte the pixel after the window (its weight is 0; the caller keeps that
 * read inside x). 9 loads, 2 merges, 28 widening instructions and 14 stores: no copy into a buffer. */
#if AOTC_DSP_ASM
/* in assembly each word widened and stored as loaded, in 4 temporaries (gcc's schedule of the C below hoisted the
 * 9 loads and spilled the widened words to the stack: 123 instructions a position, not 55); the merges by BFI from a
 * byte and a halfword load (the bytes the C's words keep). A run of m >= 1 positions of an output row in one loop:
 * r0 the first's window, the next's `next` bytes on (3 sw), d the first's words, a pair's second 8 bytes on, the
 * next pair's first 104 bytes on from there (odd: d starts at a pair's second); 5 instructions to step (the window,
 * d by s, s = 112 - s, the count), no C between positions (~79 est. cycles a position, 84 inlined a call each; each
 * word less x_zero by two SXTAB16 onto -x_zero, not two extends and two SSUB16: ~65). */
__attribute__((noinline)) static void tfl_dsp_rgb_run(const int8_t *r0, ptrdiff_t row, uint32_t zz, uint32_t *d,
                                                     int32_t m, int32_t next, int32_t odd) {
    uint32_t t0, t1, t2, s = odd ? 104u : 8u;
    const int32_t back = next - 2 * (int32_t)row; /* from row 2 of a window to row 0 of the next */
#define TFL_DSP_RGB_PUT(v, off)                                                                            \
    "sxtab16 %[t2], %[nz], " v "\n\t"                                                                  \
    "sxtab16 " v ", %[nz], " v ", ror #8\n\t"                                                          \
    "str %[t2], [%[d], #" #off "]\n\t"                                                                  \
    "str " v ", [%[d], #" #off " + 4]\n\t"
#if AOTC_DSP_M33
    /* (the M33's order: a fourth temporary, so that no instruction reads the word the load just before loaded: the
     * two merges' BFI and row 1's second quad waited a cycle each, 3 a position) */
    uint32_t t3;
    __asm__ volatile("1:\n\t"
                     "ldr %[t0], [%[p]]\n\t"
                     "ldr %[t1], [%[p], #4]\n\t" TFL_DSP_RGB_PUT("%[t0]", 0)
                     "ldrb %[t0], [%[p], #8]\n\t" TFL_DSP_RGB_PUT("%[t1]", 16)
                     "add %[p], %[p], %[row]\n\t"
                     "ldr %[t1], [%[p], #-1]\n\t"
                     "ldr %[t3], [%[p], #3]\n\t"
                     "bfi %[t1], %[t0], #0, #8\n\t" TFL_DSP_RGB_PUT("%[t1]", 32)
                     "ldrh %[t0], [%[p], #7]\n\t" TFL_DSP_RGB_PUT("%[t3]", 48)
                     "add %[p], %[p], %[row]\n\t"
                     "ldr %[t1], [%[p], #-2]\n\t"
                     "ldr %[t3], [%[p], #2]\n\t"
                     "bfi %[t1], %[t0], #0, #16\n\t" TFL_DSP_RGB_PUT("%[t1]", 64)
                     "ldr %[t0], [%[p], #6]\n\t" TFL_DSP_RGB_PUT("%[t3]", 80) TFL_DSP_RGB_PUT("%[t0]", 96)
                     "add %[p], %[p], %[back]\n\t"
                     "add %[d], %[d], %[s]\n\t"
                     "rsb %[s], %[s], #112\n\t"
                     "subs %[m], %[m], #1\n\t"
                     "bne 1b\n\t"
                     : [p] "+&r"(r0), [d] "+&r"(d), [s] "+&r"(s), [m] "+&r"(m), [t0] "=&r"(t0), [t1] "=&r"(t1),
                       [t2] "=&r"(t2), [t3] "=&r"(t3)
                     : [row] "r"(row), [nz] "r"(TFL_DSP_NZ(zz)), [back] "r"(back)
                     : "cc", "memory");
#else
    __asm__ volatile("1:\n\t"
                     "ldr %[t0], [%[p]]\n\t"
                     "ldr %[t1], [%[p], #4]\n\t" TFL_DSP_RGB_PUT("%[t0]", 0) TFL_DSP_RGB_PUT("%[t1]", 16)
                     "ldrb %[t0], [%[p], #8]\n\t"
                     "add %[p], %[p], %[row]\n\t"
                     "ldr %[t1], [%[p], #-1]\n\t"
                     "bfi %[t1], %[t0], #0, #8\n\t" TFL_DSP_RGB_PUT("%[t1]", 32)
                     "ldr %[t0], [%[p], #3]\n\t" TFL_DSP_RGB_PUT("%[t0]", 48)
                     "ldrh %[t0], [%[p], #7]\n\t"
                     "add %[p], %[p], %[row]\n\t"
                     "ldr %[t1], [%[p], #-2]\n\t"
                     "bfi %[t1], %[t0], #0, #16\n\t" TFL_DSP_RGB_PUT("%[t1]", 64)
                     "ldr %[t0], [%[p], #2]\n\t"
                     "ldr %[t1], [%[p], #6]\n\t" TFL_DSP_RGB_PUT("%[t0]", 80) TFL_DSP_RGB_PUT("%[t1]", 96)
                     "add %[p], %[p], %[back]\n\t"
                     "add %[d], %[d], %[s]\n\t"
                     "rsb %[s], %[s], #112\n\t"
                     "subs %[m], %[m], #1\n\t"
                     "bne 1b\n\t"
                     : [p] "+&r"(r0), [d] "+&r"(d), [s] "+&r"(s), [m] "+&r"(m), [t0] "=&r"(t0), [t1] "=&r"(t1),
                       [t2] "=&r"(t2)
                     : [row] "r"(row), [nz] "r"(TFL_DSP_NZ(zz)), [back] "r"(back)
                     : "cc", "memory");
#endif
#undef TFL_DSP_RGB_PUT
}
#else
static inline __attribute__((always_inline)) void tfl_dsp_rgb33(const int8_t *r0, ptrdiff_t row, uint32_t zz,
                                                                uint32_t *d) {
    const int8_t *r1 = r0 + row, *r2 = r1 + row;
    const uint32_t a = aotc_dsp_load32(r0), b = aotc_dsp_load32(r0 + 4), c = aotc_dsp_load32(r0 + 8);
    const uint32_t e = aotc_dsp_load32(r1 - 1), f = aotc_dsp_load32(r1 + 3), g = aotc_dsp_load32(r1 + 7);
    const uint32_t h = aotc_dsp_load32(r2 - 2), i = aotc_dsp_load32(r2 + 2), j = aotc_dsp_load32(r2 + 6);
    tfl_dsp_put(d, a, zz);
    tfl_dsp_put(d + 4, b, zz);
    tfl_dsp_put(d + 8, (e & ~0xFFu) | (c & 0xFFu), zz);
    tfl_dsp_put(d + 12, f, zz);
    tfl_dsp_put(d + 16, (h & 0xFFFF0000u) | (g & 0xFFFFu), zz);
    tfl_dsp_put(d + 20, i, zz);
    tfl_dsp_put(d + 24, j, zz);
}
#endif

/* tfl_dsp_patch2's stem case where a kernel row is 4 to 12 bytes (3 x 3 over RGB: 9; a 1-channel row of 4):
 * each row of both windows copied by three word loads and stores (at 0, min(4, run - 4) and run - 4, the
 * words overlapping where the row is shorter than 12: no loop a row, no byte tail), then one word of x_zero
 * at k (the at most 3 bytes to 4 nq), both windows widened together. Not inlined: its loops then keep the
 * registers. */
__attribute__((noinline)) static void tfl_dsp_stem2(const int8_t *x0, const int8_t *x1, ptrdiff_t row, int32_t kh,
                                                    int32_t run, int32_t k, int32_t nq, int32_t x_zero,
                                                    uint32_t *dst) {
    int8_t v[2][TFL_DSP_STEM + 4];
    const uint32_t zb = (uint32_t)(uint8_t)x_zero * 0x01010101u, zz = (uint32_t)(uint16_t)x_zero * 0x10001u;
    const int32_t mid = run - 4 < 4 ? run - 4 : 4, last = run - 4;
    int32_t u, ky;
    for (u = 0; u < 2; ++u) {
        const int8_t *xs = u ? x1 : x0;
        int8_t *d = v[u];
        for (ky = 0; ky < kh; ++ky, xs += row, d += run) {
            const uint32_t w0 = aotc_dsp_load32(xs), w1 = aotc_dsp_load32(xs + mid), w2 = aotc_dsp_load32(xs + last);
            memcpy(d, &w0, 4);
            memcpy(d + mid, &w1, 4);
            memcpy(d + last, &w2, 4);
        }
        memcpy(v[u] + k, &zb, 4);
    }
    tfl_dsp_widen2(v[0], v[1], nq, zz, dst);
}
static int tfl_dsp_patch2(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t *a0, const int32_t *a1,
                          int32_t q0, int32_t nq, uint32_t *dst) {
    const int32_t c = p->c, rq = p->kw * c / 4, span = (p->kh - 1) * p->dh; /* rq: a kernel row's quads */
    const int32_t iy0 = a0[1] * p->sh - p->pad_top, ix0 = a0[0] * p->sw - p->pad_left;
    const int32_t iy1 = a1[1] * p->sh - p->pad_top, ix1 = a1[0] * p->sw - p->pad_left;
    int32_t q, ky;
    if (p->dw != 1 || iy0 < 0 || iy0 + span >= p->h || ix0 < 0 || ix0 + p->kw > p->w || iy1 < 0 ||
        iy1 + span >= p->h || ix1 < 0 || ix1 + p->kw > p->w)
        return 0;
    const uint32_t zz = (uint32_t)(uint16_t)p->x_zero * 0x10001u;
    /* (offsets in the image as ptrdiff_t: 32-bit arithmetic on the 32-bit cores these paths are for) */
    const ptrdiff_t row = (ptrdiff_t)p->dh * p->w * c;
    const int8_t *x0 = x + (((ptrdiff_t)a0[2] * p->h + iy0) * p->w + ix0) * c;
    const int8_t *x1 = x + (((ptrdiff_t)a1[2] * p->h + iy1) * p->w + ix1) * c;
    if (c % 4 != 0) { /* (a stem) the whole patch in one block: both windows' bytes, a copy a kernel row, then
                       * x_zero past k (its weights are 0), widened together */
        const int32_t k = p->kh * p->kw * c, run = p->kw * c;
        int8_t v[2][TFL_DSP_STEM];
        int32_t j, u;
        if (q0 != 0 || 4 * nq < k || 4 * nq > TFL_DSP_STEM) return 0;
        if (run >= 4 && run <= 12) {
            tfl_dsp_stem2(x0, x1, row, p->kh, run, k, nq, p->x_zero, dst);
            return 1;
        }
        for (u = 0; u < 2; ++u) {
            const int8_t *xs = u ? x1 : x0;
            for (ky = 0, j = 0; ky < p->kh; ++ky, j += run, xs += row) tfl_dsp_copy(v[u] + j, xs, run);
            for (; j < 4 * nq; ++j) { /* (at most 3: not a call of memset) */
                uint32_t z = (uint32_t)p->x_zero;
                TFL_DSP_OPAQUE(z);
                v[u][j] = (int8_t)z;
            }
        }
        tfl_dsp_widen2(v[0], v[1], nq, zz, dst);
        return 1;
    }
    for (q = q0, ky = q0 / rq; q < q0 + nq; ++ky) {
        const int32_t s = q - ky * rq, m = q0 + nq - q < rq - s ? q0 + nq - q : rq - s;
        tfl_dsp_widen2(x0 + ky * row + 4 * s, x1 + ky * row + 4 * s, m, zz, dst);
        dst += 4 * m, q += m;
    }
    return 1;
}

/* the next output position after a ({ox, oy, batch}) */
static inline void tfl_dsp_step(const aotc_tfl_conv_params *p, int32_t *a) {
    if (++a[0] == p->ow) {
        a[0] = 0;
        if (++a[1] == p->oh) a[1] = 0, ++a[2];
    }
}

/* An RGB stem's window over the image's edge, from (iy, ix) of image b: its 9 pixels (x_zero's outside, from zz)
 * first in a 3 x 9 block, widened from there as a window inside (not tfl_dsp_patch's test a byte). */
__attribute__((noinline)) static void tfl_dsp_rgb_edge(const int8_t *x, int32_t h, int32_t w, int32_t b, int32_t iy,
                                                      int32_t ix, uint32_t zz, uint32_t *d) {
    int8_t v[28];
    int32_t ky, kx;
    for (ky = 0; ky < 3; ++ky) {
        for (kx = 0; kx < 3; ++kx) {
            const int32_t yy = iy + ky, xx = ix + kx;
            int8_t *o = v + 9 * ky + 3 * kx;
            if ((uint32_t)yy < (uint32_t)h && (uint32_t)xx < (uint32_t)w) {
                const int8_t *s = x + (((ptrdiff_t)b * h + yy) * w + xx) * 3;
                o[0] = s[0], o[1] = s[1], o[2] = s[2];
            } else {
                o[0] = o[1] = o[2] = (int8_t)zz;
            }
        }
    }
    v[27] = (int8_t)zz; /* (the last quad's fourth byte: its weight is 0) */
#if AOTC_DSP_ASM
    tfl_dsp_rgb_run(v, 9, zz, d, 1, 0, 0);
#else
    tfl_dsp_rgb33(v, 9, zz, d);
#endif
}

/* A tile's n positions from p0 of an RGB stem (3 x 3 windows of dilation 1 over 3 channels: 7 quads), in
 * tfl_dsp_patch's layout (an odd tile's last pair repeating its position): an output row's run of windows inside
 * the image straight from x by tfl_dsp_rgb_run (tfl_dsp_rgb33 a position without AOTC_DSP_ASM; its last read, a
 * byte past the window, inside x), the others by tfl_dsp_rgb_edge. One loop over the positions, stepped. */
static void tfl_dsp_rgb_tile(const aotc_tfl_conv_params *p, const int8_t *x, int32_t p0, int32_t n, uint32_t *dst) {
    /* (p's fields in locals: the stores to dst could alias them, and gcc would load them again a position) */
    const int32_t ow = p->ow, oh = p->oh, h = p->h, w = p->w, sh = p->sh, sw = p->sw, pt = p->pad_top;
    const int32_t pl = p->pad_left, any = h >= 3 && w >= 3;
    const uint32_t zz = (uint32_t)(uint16_t)p->x_zero * 0x10001u;
    const ptrdiff_t row = (ptrdiff_t)w * 3;
    const int8_t *end = x + (ptrdiff_t)p->n * h * row;
    int32_t ox = p0 % ow, oy = (p0 / ow) % oh, b = p0 / (ow * oh), t = 0, q;
    /* the columns whose windows lie inside a row: ox in [lo, hi) */
    const int32_t lo = (pl + sw - 1) / sw, hi = w - 3 + pl >= 0 ? (w - 3 + pl) / sw + 1 : 0;
    while (t < n) { /* an output row's run of the tile: its inside columns by a pointer stepped, no test each */
        const int32_t iy = oy * sh - pt, m = ow - ox < n - t ? ow - ox : n - t;
        const int32_t inside = any && (uint32_t)iy <= (uint32_t)(h - 3);
        const int8_t *rp = inside ? x + ((ptrdiff_t)b * h + iy) * row : x;
        int32_t a = inside ? lo : 0, z = inside ? hi : 0, k;
        if (z > ox + m) z = ox + m;
        if (a < ox) a = ox;
        while (z > a && rp + ((ptrdiff_t)(z - 1) * sw - pl) * 3 + 2 * row + 10 > end) --z; /* the last read in x */
        if (z < a) z = a;
        for (k = ox; k < ox + m; ++k, ++t) {
            if (k == a && z > a) { /* the inside run */
                const int8_t *r0 = rp + ((ptrdiff_t)a * sw - pl) * 3;
#if AOTC_DSP_ASM
                tfl_dsp_rgb_run(r0, row, zz, dst + (t >> 1) * 28 + (t & 1) * 2, z - k, 3 * sw, t & 1);
                t += z - k, k = z;
#else
                for (; k < z; ++k, ++t, r0 += 3 * sw) tfl_dsp_rgb33(r0, row, zz, dst + (t >> 1) * 28 + (t & 1) * 2);
#endif
                if (k == ox + m) break;
            }
            tfl_dsp_rgb_edge(x, h, w, b, iy, k * sw - pl, zz, dst + (t >> 1) * 28 + (t & 1) * 2);
        }
        ox += m;
        if (ox == ow) {
            ox = 0;
            if (++oy == oh) oy = 0, ++b;
        }
    }
    if (n & 1) {
        uint32_t *d = dst + (n >> 1) * 28;
        for (q = 0; q < 7; ++q) d[4 * q + 2] = d[4 * q], d[4 * q + 3] = d[4 * q + 1];
    }
}

/* A tile's n positions (from position at, tile-relative in y) of channels c0 .. c0 + 3 where tfl_dsp_usual
 * holds, the patch one block of quads: the pairs by aotc_dsp_mac4x2_rq (sums from the bias, requantised in
 * its epilogue), an odd last position by aotc_dsp_mac4x2 and tfl_dsp_store_usual; with doubled weights or
 * patches (dbl), by aotc_dsp_mac4x2_rq2 from twice the bias, an odd last position as a pair (the patch's last
 * pair repeats it) into a word of y's bytes. acc: at least 24 words. n4 (the M33's, a multiple of 4; 0 elsewhere):
 * the tile's first n4 positions in aotc_dsp_mac2x4_rq3's layout (dbl, the lower clamp the zero point), by it, the
 * rest after them in the pairs' layout; with p7, all in the pairs' layout, nq 7 (an RGB stem's), the first n4 by
 * aotc_dsp_mac2x4p7_rq3. */
static void tfl_dsp_group_rq(const aotc_tfl_conv_params *p, const int32_t *bias, const uint32_t *patch,
                             const uint32_t *wx, int32_t nq, int32_t n, int32_t at, int32_t c0, int dbl, int32_t *acc,
                             int8_t *y TFL_DSP_M24_PARAMS) {
    int32_t j, *a = acc + 16;
    /* (p's fields in locals: the stores to acc could alias them, and gcc would load them again a channel) */
    const int32_t *const shift = p->shift + c0, *const mult = p->mult + c0, yz = p->y_zero;
    for (j = 0; j < 4; ++j) {
        const int32_t right = -shift[j];
        acc[j] = (int32_t)((uint32_t)(bias ? bias[c0 + j] : 0) << (dbl ? 1 : 0));
        acc[4 + 3 * j] = mult[j];
        acc[5 + 3 * j] = (2 * yz + 1) * (1 << (right - 1)); /* 2^(right-1) + yz 2^right */
        acc[6 + 3 * j] = right;
    }
#if TFL_DSP_MAC2X4
    if (n4 > 0) { /* acc is dsp_rq's block of a group: the group's two halves in one call */
        (p7 ? aotc_dsp_mac2x4p7_rq3 : aotc_dsp_mac2x4_rq3)(patch, n4 / 4, wx, nq, acc, y + (int64_t)at * p->oc + c0,
                                                            p->oc + 65536);
        patch += 2 * n4 * nq, n -= n4, at += n4;
    }
#endif
    if (AOTC_TFL_CONV_DBL && dbl) { /* with the lower clamp at the zero point -128, by aotc_dsp_mac4x2_rq3 (no sign
                                      * term) */
        void (*const mac)(const uint32_t *, int32_t, const uint32_t *, int32_t, const int32_t *, int8_t *, int32_t) =
            TFL_DSP_CONV_FLOOR(p) ? aotc_dsp_mac4x2_rq3 : aotc_dsp_mac4x2_rq2;
        int8_t last[8];
        if (n >= 2) mac(patch, n / 2, wx, nq, acc, y + (int64_t)at * p->oc + c0, p->oc);
        if (AOTC_TFL_CONV_ODD && (n & 1) && TFL_DSP_CONV_FLOOR(p)) { /* the last position alone, not as a pair repeating it */
            aotc_dsp_mac4x1_rq3(patch + (n / 2) * 4 * nq, wx, nq, acc, y + (int64_t)(at + n - 1) * p->oc + c0);
        } else if (AOTC_TFL_CONV_ODD && (n & 1)) {
            mac(patch + (n / 2) * 4 * nq, 1, wx, nq, acc, last, 4);
            memcpy(y + (int64_t)(at + n - 1) * p->oc + c0, last, 4);
        }
        return;
    }
    if (!AOTC_TFL_CONV_SINGLE) return; /* (not reached: tfl_conv_s8_dsp does not call it so) */
    if (n >= 2) aotc_dsp_mac4x2_rq(patch, n / 2, wx, nq, acc, y + (int64_t)at * p->oc + c0, p->oc);
    if (AOTC_TFL_CONV_ODD && (n & 1)) {
        for (j = 0; j < 4; ++j) a[2 * j] = a[2 * j + 1] = acc[j];
        aotc_dsp_mac4x2(patch + (n / 2) * 4 * nq, 1, wx, nq, a);
        tfl_dsp_store_usual(p, a, at + n - 1, 1, c0, 4, y);
    }
}

/* tfl_dsp_group_rq's doubled case (dbl) on a tile's groups of channels, their terms p->dsp_rq's (compile time's,
 * given only with weights doubled there) read in place by the kernels: nothing built a group. With the lower clamp
 * at the zero point -128, the pairs of every group in one call of aotc_dsp_mac4x2_rq3 (the groups less 1 in oc's
 * upper half, not an argument more: with one, gcc compiled tfl_conv_s8_dsp's loops, the C kernel's calls of a group
 * included, up to 23 K cycles slower on IC -Os; this function apart (noinline), 12 K on VWW -O3), then an odd tile's
 * last position a group. */
static void tfl_dsp_groups_rqb(const aotc_tfl_conv_params *p, const uint32_t *patch, int32_t nq, int32_t n,
                               int32_t at, int8_t *y) {
    void (*const mac)(const uint32_t *, int32_t, const uint32_t *, int32_t, const int32_t *, int8_t *, int32_t) =
        TFL_DSP_CONV_FLOOR(p) ? aotc_dsp_mac4x2_rq3 : aotc_dsp_mac4x2_rq2;
    const int32_t kq = nq; /* (one block of quads: the widened weights' all) */
    int32_t c0;
    int8_t last[8];
    if (TFL_DSP_CONV_FLOOR(p) && p->oc < 65536) {
        if (n >= 2)
            aotc_dsp_mac4x2_rq3(patch, n / 2, p->dsp_wx, nq, p->dsp_rq, y + (int64_t)at * p->oc,
                                p->oc + (p->oc / 4 - 1) * 65536);
        if (AOTC_TFL_CONV_ODD && (n & 1)) /* every group's last position in one call, its groups less 1 in nq's upper half */
            aotc_dsp_mac4x1_rq3(patch + (n / 2) * 4 * nq, p->dsp_wx, nq + (p->oc / 4 - 1) * 65536, p->dsp_rq,
                                y + (int64_t)(at + n - 1) * p->oc);
        return;
    }
    for (c0 = 0; c0 < p->oc; c0 += 4) {
        const int32_t *const rq = p->dsp_rq + 4 * c0;
        const uint32_t *const wx = p->dsp_wx + 2 * (int64_t)c0 * kq;
        if (n >= 2) mac(patch, n / 2, wx, nq, rq, y + (int64_t)at * p->oc + c0, p->oc);
        if (AOTC_TFL_CONV_ODD && (n & 1) && TFL_DSP_CONV_FLOOR(p)) {
            aotc_dsp_mac4x1_rq3(patch + (n / 2) * 4 * nq, wx, nq, rq, y + (int64_t)(at + n - 1) * p->oc + c0);
        } else if (AOTC_TFL_CONV_ODD && (n & 1)) {
            mac(patch + (n / 2) * 4 * nq, 1, wx, nq, rq, last, 4);
            memcpy(y + (int64_t)(at + n - 1) * p->oc + c0, last, 4);
        }
    }
}

/* The last block of a patch of several (the sums of the blocks before in acc, aotc_dsp_mac4x2's layout, the bias in
 * them; or the only block, the sums at the bias, where a layer is not fused) with the requantisation in the kernel's epilogue, as aotc_dsp_mac4x2_rq's (TFLite's sign term, the zero point
 * in ra, SSAT's clamp alone: y_min -128, y_max 127): for each of `count` pairs i, y[2 i oc + t oc + j] for channel j <
 * 4 and position t < 2 from acc[8 i + 2 j + t] plus the block's quads; rq the 4 channels' mult, ra, right (12 words).
 * Not the block's sums stored and tfl_dsp_store's pass over them (its set-up a group and tile, its loads and the
 * stores of 8 words a pair): on IC02's 3 x 3 layers the store took ~17 est. cycles an output. In assembly naked, as
 * aotc_dsp_mac4x2_rq (the same quads, 16 a turn entered past (-nq) mod 16); a pair starts with the sums' LDM from
 * acc (the pointer stepped in the frame) and an LDR of the PC. Its locals: [sp .. #44] the channels' terms, [sp,
 * #48] y, [sp, #52] oc, [sp, #56] the patches' end, [sp, #60] the patch pointer across the epilogue, [sp, #64] w,
 * [sp, #68] acc, [sp, #72] the loop's entry, [sp, #76] the weights' end. */
#if AOTC_DSP_ASM
/* (its requantisation: tflite_int8_dsp.h's TFL_DSP_RQ2_MATH and TFL_DSP_RQ2_TERMS, as aotc_dsp_mac4x2_rq's) */
#if AOTC_DSP_M33
/* (the M33's epilogue by single LDRs from sp, tflite_int8_dsp.h's TFL_DSP_RQ_PAIR_END_AT: the patch pointer stays in r0) */
#define TFL_DSP_RQA_PAIR_END TFL_DSP_RQ_PAIR_END_AT(TFL_DSP_RQ2_MATH, "bne 2b\n")
#else
#define TFL_DSP_RQA_PAIR_END                                                                             \
    "str r0, [sp, #60]\n\t" /* the epilogue: channel 0's terms at sp, then r0 walks the rest */         \
    "ldm sp, {r1, r2, r3}\n\t"                                                                         \
    "add r0, sp, #12\n\t"                                                                              \
    TFL_DSP_RQ2_MATH("r4", "r5") TFL_DSP_RQ2_TERMS TFL_DSP_RQ2_MATH("r6", "r7") TFL_DSP_RQ2_TERMS         \
    TFL_DSP_RQ2_MATH("r8", "r9") TFL_DSP_RQ2_TERMS TFL_DSP_RQ2_MATH("r10", "r11")                        \
    "ldmia r0!, {r1, r2, r3}\n\t" /* y, oc, the patches' end */                                         \
    "add lr, r1, r2\n\t" TFL_DSP_RQ_STORES                                                             \
    "add r1, lr, r2\n\t"                                                                              \
    "str r1, [r0, #-12]\n\t"                                                                          \
    "ldr r0, [r0]\n\t"                                                                                \
    "cmp r0, r3\n\t"                                                                                  \
    "bne 2b\n"
#endif
__attribute__((naked, noinline)) static void tfl_dsp_mac4x2_rqa(__attribute__((unused)) const uint32_t *p,
                                                               __attribute__((unused)) int32_t count,
                                                               __attribute__((unused)) const uint32_t *w,
                                                               __attribute__((unused)) int32_t nq,
                                                               __attribute__((unused)) const int32_t *rq,
                                                               __attribute__((unused)) int8_t *y,
                                                               __attribute__((unused)) int32_t oc,
                                                               __attribute__((unused)) const int32_t *acc) {
    /* r0 p, r1 count, r2 w, r3 nq; rq, y, oc, acc at [sp, #116], #120, #124, #128 after the prologue */
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #80\n\t" AOTC_DSP_MAC4X2_WPRE
        "cmp r1, #0\n\t"
        "ble 9f\n\t"
        "str r2, [sp, #64]\n\t"
        "add r4, r2, r3, lsl #5\n\t"
        "str r4, [sp, #76]\n\t"
        "mul r7, r1, r3\n\t" /* the patches' end: 16 bytes a quad and pair */
        "add r7, r0, r7, lsl #4\n\t"
        "ldr r5, [sp, #120]\n\t"
        "ldr r6, [sp, #124]\n\t"
        "add r4, sp, #48\n\t"
        "stmia r4, {r5, r6, r7}\n\t" /* y, oc, the patches' end */
        "ldr r4, [sp, #128]\n\t"
        "str r4, [sp, #68]\n\t"
        "rsbs r5, r3, #0\n\t"
        "and r5, r5, #15\n\t"
        "movs r6, #104\n\t"
        "adr.w r4, 1f\n\t"
        "mla r4, r5, r6, r4\n\t"
        "orr r4, r4, #1\n\t"
        "str r4, [sp, #72]\n\t"
        "ldr r12, [sp, #116]\n\t"
        "ldmia r12, {r1-r11, lr}\n\t" /* the 12 terms */
        "stmia sp, {r1-r11, lr}\n"
        "2:\n\t" /* a pair: w, its sums from acc, into the loop */
        "ldr r12, [sp, #68]\n\t"
        "ldr r1, [sp, #64]\n\t"
        "ldmia r12!, {r4-r11}\n\t"
        "str r12, [sp, #68]\n\t"
        "ldr pc, [sp, #72]\n\t"
        ".p2align 2\n"
        "1:\n\t" AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
            AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
                AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
                    AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD AOTC_DSP_MAC4X2_QUAD
        "ldr r2, [sp, #76]\n\t"
        "cmp r1, r2\n\t"
        "bne 1b\n\t"
        TFL_DSP_RQA_PAIR_END
        "9:\n\t"
        "add sp, sp, #80\n\t"
        "pop {r4-r11, pc}\n\t");
}
#undef TFL_DSP_RQ2_TERMS
#undef TFL_DSP_RQ2_MATH
#undef TFL_DSP_RQA_PAIR_END
#undef TFL_DSP_RQ_PAIR_END_AT
#undef TFL_DSP_RQ_TERMS_M33
#undef TFL_DSP_RQ_STORES
#else
static void tfl_dsp_mac4x2_rqa(const uint32_t *p, int32_t count, const uint32_t *w, int32_t nq, const int32_t *rq,
                               int8_t *y, int32_t oc, const int32_t *acc) {
    int32_t i, q, j, t;
    for (i = 0; i < count; ++i, y += 2 * oc, acc += 8) {
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
        for (j = 0; j < 4; ++j) {
            const int32_t mult = rq[3 * j], ra = rq[3 * j + 1], right = rq[3 * j + 2];
            for (t = 0; t < 2; ++t) {
                const int32_t v = (int32_t)((uint32_t)a[2 * j + t] << 1);
                y[t * oc + j] = (int8_t)__ssat((tfl_dsp_smmlar(v, mult, ra) + (v >> 31)) >> right, 8);
            }
        }
    }
}
#endif

/* tfl_dsp_mac4x2_rqa's terms of channels c0 .. c0 + 3 (mult, ra, right each) where each takes the conv's usual
 * requantisation (tfl_dsp_usual's test, channel by channel: a layer with a few channels past it, as IC02's 3 x 3
 * layers' one to seven of 40 to 160 at right shifts of 24 to 27, takes the kernel on its other groups); 0 where
 * one does not (or the clamp is not SSAT's alone). */
static int tfl_dsp_rqa_terms(const aotc_tfl_conv_params *p, const int32_t *bias, int32_t c0, int32_t *rq) {
    const int64_t k_bound = (int64_t)p->kh * p->kw * p->c * TFL_DSP_PRODUCT_MAX;
    const uint32_t lim = k_bound < ((int64_t)1 << 30) ? (uint32_t)(((int64_t)1 << 30) - k_bound) : 0u;
    int32_t j;
    if (p->y_max != 127 || p->y_min != -128 || c0 + 4 > p->oc) return 0;
    for (j = 0; j < 4; ++j) {
        const int32_t b = bias ? bias[c0 + j] : 0, shift = p->shift[c0 + j], right = -shift;
        const uint32_t ab = b < 0 ? 0u - (uint32_t)b : (uint32_t)b;
        if (p->mult[c0 + j] == INT32_MIN || (uint32_t)(-1 - shift) > (uint32_t)(TFL_DSP_CONV_RIGHT - 1) || ab >= lim)
            return 0;
        rq[3 * j] = p->mult[c0 + j];
        rq[3 * j + 1] = (2 * p->y_zero + 1) * (1 << (right - 1)); /* 2^(right-1) + y_zero 2^right */
        rq[3 * j + 2] = right;
    }
    return 1;
}

/* CONV_2D on the tiles of tfl_dsp_conv_words. With a fused residual ADD (e), each tile's outputs go to
 * e->tile first, then through the ADD to y (a tile's positions are contiguous in y). */
static int tfl_conv_s8_dsp(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                           int8_t *y, uint32_t *AOTC_RESTRICT scratch, const tfl_residual *e) {
    const int32_t k = p->kh * p->kw * p->c, kq = (k + 3) / 4, kc = TFL_DSP_BLOCK_QUADS(kq);
    const int32_t total = p->n * p->oh * p->ow, groups = (p->oc + 3) / 4;
    const int rows = AOTC_TFL_CONV_ROWS && p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pad_top == 0 && p->pad_left == 0 &&
                     p->oh == p->h && p->ow == p->w && p->c % 4 == 0;
    const int rgb = AOTC_TFL_CONV_RGB && p->c == 3 && p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && kq == 7 && kc == 7;
    int32_t np, p0;
    const int32_t words = tfl_dsp_conv_words(p, &np);
    if (scratch == NULL || np < 2) return 0;
    if (!AOTC_TFL_CONV_RESIDUAL && e != NULL) return 0; /* (not called so in a bundle without a fused ADD) */
    /* the sums requantised in the MAC kernel: one block of quads, whole groups, room for its terms */
    /* (dsp_rq is given only where the compiler found tfl_dsp_usual (aot/kernels/tflite_int8.py's _dsp_fused): not
     * checked again a call, a loop over every output channel, 64-bit bounds each: VWW -O3 --widened-weights
     * tfl_conv_s8_dsp 108,415 -> 45,051 est. cycles, 10,800,309 -> 10,736,961) */
    /* (and where the compiler found it so, p->dsp_usual: not checked either, VWW an505 -O3 9,626,330 -> 9,596,640) */
    const int usual = p->dsp_rq != NULL || p->dsp_usual || tfl_dsp_usual(p, bias);
    const int fused = AOTC_TFL_CONV_FUSED && usual && p->y_min == -128 && kq == kc && p->oc % 4 == 0 && np >= 6 &&
                      (AOTC_TFL_CONV_ODD || total % 2 == 0);
    if (!AOTC_TFL_CONV_PLAIN && !fused) return 0; /* the sums requantised apart left out: the plain loop's */
    /* the doubled sums' kernels for p's zero point compiled (aotc_tflite_int8.h: AOTC_TFL_CONV_DBL) */
    const int dbl_ok = AOTC_TFL_CONV_DBL && (p->y_zero == -128 ? AOTC_TFL_CONV_FLOOR : AOTC_TFL_CONV_SIGN);
    /* the weights widened at compile time, read in place (none in the scratch), unless doubled where the sums are
     * not requantised in the MAC kernel (then widened here from w, as without them) */
    const int pre = p->dsp_wx != NULL && ((fused && dbl_ok) || !p->dsp_wx_dbl);
    const int32_t wxw = pre ? 0 : 8 * kc; /* the scratch's words of widened weights */
    if (fused && e == NULL) { /* no run of sums, only the kernel's 24 words (none with the terms at compile time,
                               * read in place): the scratch's room for them holds more positions (not with a fused
                               * ADD, whose tile of outputs holds np positions) */
        const int32_t more = ((words - wxw - (p->dsp_rq != NULL && dbl_ok ? 0 : 24)) / (2 * kc)) & ~1,
                      most = (total + 1) & ~1;
        np = more < most ? more : most;
        if (TFL_DSP_MAC2X4 && rows && p->x_zero == -128 && np < most && np >= 8)
            np &= ~3; /* (the M33: tiles of whole blocks of 4 positions, no pair left a tile for the 4 x 2 block) */
    }
    uint32_t *patch = scratch, *wx = patch + 2 * np * kc;
    int32_t *acc = (int32_t *)(wx + wxw);
    /* the fused sums doubled (the requantisation's left shift of 1 made before): 0 not, 1 by the weights, 2 by the
     * patches (rows only), whichever takes fewer instructions a tile than the shifts it saves (one a pair and
     * group of channels); weights widened at compile time cost none where doubled there, else cannot be */
    const int32_t save = 4 * np * groups, cost_p = rows ? 2 * np * kc : save;
    const int32_t cost_w = !pre ? 8 * kc * groups : p->dsp_wx_dbl ? 0 : INT32_MAX;
    const int dbl = !fused || !dbl_ok ? 0 : cost_p < cost_w ? (cost_p < save ? 2 : 0) : (cost_w < save ? 1 : 0);
    if (!AOTC_TFL_CONV_SINGLE && fused && dbl == 0) return 0; /* the fused sums not doubled left out: the plain loop's */
    int8_t *yt = e != NULL ? e->tile : y; /* where a tile's outputs go, and its first position there */
    /* the M33's 2 x 4 block (tflite_int8_dsp.h; fused: one block of quads): a 1 x 1 conv's rows of a ReLU's output
     * (an even count of quads, widened into its layout) or an RGB stem's pairs (aotc_dsp_mac2x4p7_rq3) */
#if TFL_DSP_MAC2X4
    const int m24 = fused && dbl_ok && dbl != 0 && TFL_DSP_CONV_FLOOR(p) && p->oc < 65536 &&
                    (rgb ? kq == 7 : rows && p->x_zero == -128 && kq % 2 == 0);
#endif
    for (p0 = 0; p0 < total; p0 += np) {
        const int32_t n = total - p0 < np ? total - p0 : np, pairs = (n + 1) / 2, at = e != NULL ? 0 : p0;
        int32_t q0, g, t, j;
#if TFL_DSP_MAC2X4
        /* the M33's 2 x 4 block on the tile's first positions in blocks of 4 (m24), the rest as before */
        const int32_t n4 = m24 && n >= 4 ? n & ~3 : 0;
#endif
        for (q0 = 0; q0 < kq; q0 += kc) {
            const int32_t nq = kq - q0 < kc ? kq - q0 : kc;
            if (rows) {
#if TFL_DSP_MAC2X4
                if (n4 > 0) { /* the M33's 2 x 4 block: its rows widened into its layout, the rest after them */
                    tfl_dsp_rows4_u8(x + (int64_t)p0 * p->c + 4 * q0, p->c, n4 / 4, nq, patch, dbl == 2);
                    if (n > n4)
                        tfl_dsp_rows(x + (int64_t)(p0 + n4) * p->c, p->c, n - n4, q0, nq, p->x_zero, dbl == 2,
                                     patch + 2 * n4 * nq);
                } else
#endif
                tfl_dsp_rows(x + (int64_t)p0 * p->c, p->c, n, q0, nq, p->x_zero, dbl == 2, patch);
            } else if (rgb) {
                tfl_dsp_rgb_tile(p, x, p0, n, patch);
            } else { /* the tile's positions as {ox, oy, batch}, stepped (no divisions a position) */
                int32_t a0[3] = {p0 % p->ow, (p0 / p->ow) % p->oh, p0 / (p->ow * p->oh)}, a1[3];
                const int32_t tap = 4 * q0 / p->c, from[4] = {tap, 4 * q0 % p->c, tap / p->kw, tap % p->kw};
                for (t = 0; t < pairs; ++t) { /* an odd tile's last pair repeats its position */
                    uint32_t *d = patch + t * 4 * nq;
                    a1[0] = a0[0], a1[1] = a0[1], a1[2] = a0[2];
                    if (2 * t + 1 < n) tfl_dsp_step(p, a1);
                    if (!tfl_dsp_patch2(p, x, a0, a1, q0, nq, d)) {
                        tfl_dsp_patch(p, x, a0, from, nq, d);
                        tfl_dsp_patch(p, x, a1, from, nq, d + 2);
                    }
                    a0[0] = a1[0], a0[1] = a1[1], a0[2] = a1[2];
                    if (2 * t + 2 < n) tfl_dsp_step(p, a0);
                }
            }
            if (fused && dbl_ok && p->dsp_rq != NULL) { /* (given only with the weights doubled at compile time: pre, dbl) */
#if TFL_DSP_MAC2X4
                if (n4 > 0) { /* every group's two halves in one call, then the rest in the pairs' layout */
                    (rgb ? aotc_dsp_mac2x4p7_rq3 : aotc_dsp_mac2x4_rq3)(patch, n4 / 4, p->dsp_wx, nq, p->dsp_rq,
                                                                        yt + (int64_t)at * p->oc,
                                                                        p->oc + (p->oc / 2 - 1) * 65536);
                    if (n > n4) tfl_dsp_groups_rqb(p, patch + 2 * n4 * nq, nq, n - n4, at + n4, yt);
                    continue;
                }
#endif
                tfl_dsp_groups_rqb(p, patch, nq, n, at, yt);
                continue;
            }
            for (g = 0; g < groups; ++g) { /* 4 channels, the last group's past oc repeating its last */
                const int32_t c0 = 4 * g, nc = p->oc - c0 < 4 ? p->oc - c0 : 4;
                int32_t c[4], rq[12], *a = kq > kc ? acc + g * 8 * pairs : acc;
                for (j = 0; j < 4; ++j) c[j] = c0 + (j < nc ? j : nc - 1);
                const uint32_t *wg = pre ? p->dsp_wx + 8 * ((int64_t)g * kq + q0) : wx;
                if (!pre) tfl_dsp_weights(w, k, c, 4 * q0, nq, dbl == 1, wx);
                if (fused || !AOTC_TFL_CONV_PLAIN) {
                    tfl_dsp_group_rq(p, bias, patch, wg, nq, n, at, c0, dbl != 0, acc, yt TFL_DSP_M24_ARGS(n4, rgb));
                    continue;
                }
                if (q0 == 0 || kq == kc) { /* the sums start at the bias: the store adds none (a pair's 8 words
                                              * from registers, not a channel's loop a pair: 0.13 M est. cycles less
                                              * on each of IC02's 3 x 3 x 40 layers) */
                    int32_t s8[8];
                    for (j = 0; j < 4; ++j) s8[2 * j] = s8[2 * j + 1] = bias ? bias[c[j]] : 0;
                    for (t = 0; t < pairs; ++t) memcpy(a + 8 * t, s8, sizeof s8);
                }
                if (AOTC_TFL_CONV_LAST && q0 + nq == kq && tfl_dsp_rqa_terms(p, bias, c0, rq)) {
                    /* the last block (or the only one, of a layer not fused: a channel past the usual
                     * requantisation in another group, as IC02's 1 x 1 shortcut's) requantised in the kernel, an odd
                     * tile's last position as before */
                    tfl_dsp_mac4x2_rqa(patch, n / 2, wg, nq, rq, yt + (int64_t)at * p->oc + c0, p->oc, a);
                    if (n & 1) {
                        aotc_dsp_mac4x2(patch + (n / 2) * 4 * nq, 1, wg, nq, a + 8 * (n / 2));
                        tfl_dsp_store(p, bias, a + 8 * (n / 2), at + n - 1, 1, c0, nc, yt);
                    }
                    continue;
                }
                aotc_dsp_mac4x2(patch, pairs, wg, nq, a);
                if (q0 + nq == kq) {
                    if (usual) tfl_dsp_store_usual(p, a, at, n, c0, nc, yt);
                    else tfl_dsp_store(p, bias, a, at, n, c0, nc, yt);
                }
            }
        }
        if (e != NULL) tfl_residual_run(e, e->tile, (int64_t)p0 * p->oc, n * p->oc, y);
    }
    return 1;
}
#endif /* AOTC_QUANT_DSP */

#if AOTC_TFL_MVE && AOTC_TFL_MVE_CONV
/* CONV_2D (groups 1, 4 output channels or more, patches up to TFL_MVE_K bytes): each position's
 * patch gathered (a 1 x 1 window at stride 1 reads x in place; a window row inside the image, at column
 * dilation 1, is one copy of kw c bytes), then four channels at a time (tfl_mve_dot4q), requantised
 * as one vector. Scratch (from the memory plan, as TFLM's kernels take theirs from the arena):
 * tfl_mve_conv_words. */
static int tfl_conv_s8_mve(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                           int8_t *y, const tfl_residual *e, uint32_t *scratch) {
    const int32_t c = p->c, oc = p->oc, k = p->kh * p->kw * c, total = p->n * p->oh * p->ow;
    const int32_t direct = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pad_top == 0 &&
                           p->pad_left == 0 && p->oh == p->h && p->ow == p->w;
    const int32_t span = p->kw * c, xrow = p->w * c;
    int32_t pos, o, ky, kx;
    if (scratch == NULL || tfl_mve_conv_words(p, e != NULL) == 0) return 0;
    if (!AOTC_TFL_CONV_RESIDUAL && e != NULL) return 0; /* (the ADD's code not linked where the model fuses none) */
    int32_t *wsum = (int32_t *)scratch;
    int8_t *patch = (int8_t *)(scratch + oc);
    int8_t *row = (int8_t *)(scratch + oc + (k + 3) / 4); /* a position's conv outputs, with a fused ADD (e) */
    for (o = 0; o < oc; ++o) {
        wsum[o] = (bias ? bias[o] : 0) - p->x_zero * tfl_mve_sum(w + (int64_t)o * k, k);
    }
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y;
    if (AOTC_TFL_MVE_CONV_FAST && direct && e == NULL &&
        (ya >= xa + (uintptr_t)total * c || xa >= ya + (uintptr_t)total * oc)) {
        /* a 1 x 1 window read in place, y apart from x: 4 channels at a time over every position, their
         * weights' rows and requantisation terms set once (where y may overlap x, a RAM budget's plan, the
         * positions go in order below: overlap_bytes) */
        const int32x4_t zero4 = vdupq_n_s32(0);
        const int32_t yz = p->y_zero, lo = p->y_min, hi = p->y_max; /* kept: y's stores may alias *p */
        const int usual = tfl_mve_requant_usual(p->shift, oc, lo, hi);
        for (o = 0; o < oc; o += 4) {
            const int32_t o0 = o + 4 <= oc ? o : oc - 4;
            const int8_t *wg = w + (int64_t)o0 * k, *xp = x;
            const int32x4_t ws = vld1q_s32(wsum + o0), sh = vld1q_s32(p->shift + o0), mult = vld1q_s32(p->mult + o0);
            const int32x4_t left = vmaxq_s32(sh, zero4), nright = vminq_s32(sh, zero4);
            int8_t *yp = y + o0;
            if (usual && k % 16 == 0) {
                tfl_mve_pw_group(xp, k, wg, yp, oc, total, ws, mult, nright, vdupq_n_s32(yz));
                continue;
            }
            if (usual) {
                for (pos = 0; pos < total; ++pos, xp += c, yp += oc)
                    tfl_mve_requant4u(vaddq_s32(tfl_mve_dot4q(xp, k, wg, k), ws), mult, nright, yz, yp);
                continue;
            }
            for (pos = 0; pos < total; ++pos, xp += c, yp += oc)
                tfl_mve_requant4v(vaddq_s32(tfl_mve_dot4q(xp, k, wg, k), ws), mult, left, nright, yz, lo, hi, yp);
        }
        return 1;
    }
    const int usual = tfl_mve_requant_usual(p->shift, oc, p->y_min, p->y_max);
    const int32x4_t yzv = vdupq_n_s32(p->y_zero);
    /* p's fields in locals (the patch's and y's stores could alias *p: gcc loaded them again a kernel row and a
     * position, about 60 cycles a position of ResNet-8's 3 x 3 layers), the rows stepped, not multiplied */
    const int32_t kh = p->kh, kw = p->kw, sw = p->sw, dh = p->dh, dw = p->dw, pl = p->pad_left, ih = p->h;
    const int32_t iw = p->w, ow = p->ow, oh = p->oh, xz = p->x_zero, iy00 = -p->pad_top, sh = p->sh;
    const int32_t *const mult = p->mult, *const shift = p->shift;
    const int32_t ng0 = oc / 4 < 16 ? oc / 4 : 16; /* the groups of the first (often only) run of 16 */
    int32_t ox = 0, oy = 0, b = 0; /* pos's column, row and batch, stepped */
    for (pos = 0; pos < total; ++pos, ox = ox + 1 < ow ? ox + 1 : 0, oy += ox == 0,
        b += oy == oh && ox == 0, oy = oy == oh ? 0 : oy) {
        const int8_t *px = patch;
        int8_t *yp = e != NULL ? row : y + (int64_t)pos * oc;
        if (direct) {
            px = x + (int64_t)pos * c;
        } else {
            const int32_t ix0 = ox * sw - pl;
            const int32_t inside = dw == 1 && ix0 >= 0 && ix0 + kw <= iw;
            const int8_t *const img = x + (int64_t)b * ih * xrow;
            int32_t iy = oy * sh + iy00;
            int8_t *dst = patch;
            if (AOTC_TFL_MVE_CONV_FAST && inside && iy >= 0 && iy + (kh - 1) * dh < ih) { /* every row inside */
                tfl_mve_copy_rows(patch, img + (int64_t)iy * xrow + ix0 * c, span, dh * xrow, kh);
            } else {
                for (ky = 0; ky < kh; ++ky, iy += dh, dst += span) {
                    if ((uint32_t)iy >= (uint32_t)ih) {
                        tfl_mve_fill(dst, xz, span);
                    } else if (inside) {
                        tfl_mve_copy(dst, img + (int64_t)iy * xrow + ix0 * c, span);
                    } else {
                        const int8_t *const src = img + (int64_t)iy * xrow;
                        int8_t *d = dst;
                        for (kx = 0; kx < kw; ++kx, d += c) {
                            const int32_t ix = ix0 + kx * dw;
                            if ((uint32_t)ix >= (uint32_t)iw) tfl_mve_fill(d, xz, c);
                            else tfl_mve_copy(d, src + ix * c, c);
                        }
                    }
                }
            }
        }
        if (AOTC_TFL_MVE_CONV_FAST && usual) { /* whole groups' sums by the assembly loop, 16 groups a time */
            int32_t sums[64] __attribute__((aligned(8)));
            if (oc >= 4) {
                tfl_mve_dot_groups(px, k, w, ng0, sums);
                tfl_mve_requant_groups(sums, wsum, mult, shift, yzv, yp, ng0);
            }
            for (o = 64; o + 4 <= oc; o += 64) {
                const int32_t ng = (oc - o) / 4 < 16 ? (oc - o) / 4 : 16;
                tfl_mve_dot_groups(px, k, w + (int64_t)o * k, ng, sums);
                tfl_mve_requant_groups(sums, wsum + o, mult + o, shift + o, yzv, yp + o, ng);
            }
            if (oc % 4 != 0) { /* the last 4 channels, overlapping the group before */
                const int32x4_t acc = vaddq_s32(tfl_mve_dot4q(px, k, w + (int64_t)(oc - 4) * k, k),
                                                vld1q_s32(wsum + oc - 4));
                tfl_mve_requant4u(acc, vld1q_s32(p->mult + oc - 4), vld1q_s32(p->shift + oc - 4), p->y_zero,
                                  yp + oc - 4);
            }
            if (e != NULL) tfl_residual_run(e, row, (int64_t)pos * oc, oc, y);
            continue;
        }
#if !AOTC_TFL_MVE_CONV_QUAD /* each channel's dot product alone, 4 requantised as one vector ("mve-conv-single") */
        for (o = 0; o < oc; o += 4) {
            const int32_t o0 = o + 4 <= oc ? o : oc - 4;
            int32_t acc[4];
            for (int32_t j = 0; j < 4; ++j) acc[j] = tfl_mve_dot1_8(px, k, w + (int64_t)(o0 + j) * k);
            tfl_mve_requant4(vaddq_s32(vld1q_s32(acc), vld1q_s32(wsum + o0)), mult + o0, shift + o0, p->y_zero,
                             p->y_min, p->y_max, yp + o0);
        }
        if (e != NULL) tfl_residual_run(e, row, (int64_t)pos * oc, oc, y);
        continue;
#endif
        for (o = 0; o < oc; o += 4) {
            const int32_t o0 = o + 4 <= oc ? o : oc - 4;
            const int32x4_t acc = vaddq_s32(tfl_mve_dot4q(px, k, w + (int64_t)o0 * k, k), vld1q_s32(wsum + o0));
            if (AOTC_TFL_MVE_CONV_FAST && usual)
                tfl_mve_requant4u(acc, vld1q_s32(p->mult + o0), vld1q_s32(p->shift + o0), p->y_zero, yp + o0);
            else
                tfl_mve_requant4(acc, p->mult + o0, p->shift + o0, p->y_zero, p->y_min, p->y_max, yp + o0);
        }
        if (e != NULL) tfl_residual_run(e, row, (int64_t)pos * oc, oc, y);
    }
    return 1;
}
#endif /* AOTC_TFL_MVE && AOTC_TFL_MVE_CONV */

#if AOTC_QUANT_DSP && !(AOTC_TFL_MVE && AOTC_TFL_MVE_CONV) && AOTC_TFL_CONV_COMPACT && !AOTC_TFL_CONV_FUSED && !AOTC_TFL_CONV_PLAIN
#define TFL_CONV_COMPACT 1
/* ---- The compact path (AOTC_TFL_CONV_COMPACT, issue 67) -------------------------------------------------------------
 * A --flash-budget level's CONV_2D (aot/flash.py "conv-compact"), between the general DSP paths and the portable loop:
 * compiled only where the others are left out (FUSED and PLAIN 0: tfl_conv_s8_dsp then takes nothing). Any shape, two
 * output positions at a time (an odd last one twice, stored once): their patches widened once as x - x_zero (E / O
 * halves of each quad, SXTAB16; 0 in the padding) into the scratch the plan gives the DSP path, straight from x where
 * c is a multiple of 4, else copied as bytes first (x_zero's in the padding); then two output channels at a time over
 * the quads (tfl_dsp_cc_2x2: each quad of a weights' row one load and 2 SXTB16s for 4 SMLADs; a last part of under 4
 * bytes byte by byte), each output requantised alone (tfl_dsp_cc_store: SMMLAR's form where the layer's bound and the
 * channel's terms allow, else requant_double): LiteRT's integers. No rows, 3-channel, block, tile or doubled-sum code:
 * about 2.5 KB at -Os. Its scratch, where the plan's holds it (else the plain loop's): the 2 patches' bytes (k rounded
 * up to words) and their widened quads (4 words a quad), then the channels' requantisation terms (3 words each) where
 * it holds them too (else a chunk's at a time, on the stack); the sums of up to TFL_DSP_CC_CHUNK channels on the
 * stack. */

/* The terms of channels [o, o + n) for tfl_dsp_cc_store (and tfl_conv_s8_small), 3 words each into tc: the bias, SMMLAR's rounding term with
 * the zero point and the right shift where the layer's bound on |sum + bias| (lim: 2^30 less the patch's products'
 * bound) gives tfl_dsp_requant_run's SMMLAR form at left 0, else 0 there (requant_double) */
static void tfl_dsp_cc_terms(const aotc_tfl_conv_params *p, const int32_t *bias, int32_t o, int32_t n, int64_t lim,
                             int32_t *tc) {
    int32_t j;
    for (j = o; j < o + n; ++j, tc += 3) {
        const int32_t right = -p->shift[j], bo = bias ? bias[j] : 0;
        const uint32_t mag = bo < 0 ? 0u - (uint32_t)bo : (uint32_t)bo;
        const int usual = (uint32_t)(right - 1) < 22u && p->mult[j] != INT32_MIN && (int64_t)mag < lim;
        tc[0] = bo;
        tc[1] = usual ? (1 << (right - 1)) + p->y_zero * (1 << right) : 0;
        tc[2] = usual ? right : 0;
    }
}

#if AOTC_TFL_CONV_2X2
/* The sums of `pairs` pairs of weights' rows (w: pair i's rows at w + 2 i k and w + (2 i + 1) k; k 0: one row, twice)
 * over nq quads of 2 positions' widened patches (x: E(t0), O(t0), E(t1), O(t1) a quad): acc[4 i ..] = {row 0 t0,
 * row 0 t1, row 1 t0, row 1 t1} */
#if !AOTC_DSP_ASM
static void tfl_dsp_cc_2x2(const uint32_t *x, const int8_t *w, ptrdiff_t k, int32_t nq, int32_t *acc, int32_t pairs) {
    for (; pairs > 0; --pairs, w += 2 * k, acc += 4) {
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, q;
        const uint32_t *xq = x;
        const int8_t *wq = w;
        for (q = 0; q < nq; ++q, xq += 4, wq += 4) {
            const uint32_t u = aotc_dsp_load32(wq), v = aotc_dsp_load32(wq + k);
            const int32_t ue = __sxtb16((int32_t)u), uo = (int32_t)aotc_dsp_sxtb16_hi(u);
            const int32_t ve = __sxtb16((int32_t)v), vo = (int32_t)aotc_dsp_sxtb16_hi(v);
            a0 = __smlad((int32_t)xq[0], ue, a0), a0 = __smlad((int32_t)xq[1], uo, a0);
            a1 = __smlad((int32_t)xq[2], ue, a1), a1 = __smlad((int32_t)xq[3], uo, a1);
            a2 = __smlad((int32_t)xq[0], ve, a2), a2 = __smlad((int32_t)xq[1], vo, a2);
            a3 = __smlad((int32_t)xq[2], ve, a3), a3 = __smlad((int32_t)xq[3], vo, a3);
        }
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
    }
}
#else
#define TFL_DSP_CC_ARG __attribute__((unused)) /* a naked function's arguments are its assembly's registers */
/* tfl_dsp_cc_2x2 in assembly (r0 x, r1 w, r2 k, r3 nq; acc and pairs on the stack): the 4 sums, the quad's 4 patch
 * words (one LDM), a word of weights and its widened half in the 14 registers, 20 instructions a quad (16 MACs), four
 * quads a turn (issue 67: the turn's compare and branch on four; two a turn ran IC ResNet-8 at 1.02x the est. cycles on
 * the M4), then two and one; x's start and the step from a pair's last quad to the next pair's rows on the stack. */
__attribute__((naked, noinline)) static void tfl_dsp_cc_2x2(TFL_DSP_CC_ARG const uint32_t *x,
                                                            TFL_DSP_CC_ARG const int8_t *w,
                                                            TFL_DSP_CC_ARG ptrdiff_t k, TFL_DSP_CC_ARG int32_t nq,
                                                            TFL_DSP_CC_ARG int32_t *acc, TFL_DSP_CC_ARG int32_t pairs) {
#define TFL_DSP_CC_ROW(off, a, b)                                                                               \
    "ldr r12, [r1" off "]\n\t"                                                                                  \
    "sxtb16 lr, r12\n\t"                                                                                        \
    "smlad " a ", r8, lr, " a "\n\t"                                                                            \
    "smlad " b ", r10, lr, " b "\n\t"                                                                           \
    "sxtb16 r12, r12, ror #8\n\t"                                                                               \
    "smlad " a ", r9, r12, " a "\n\t"                                                                           \
    "smlad " b ", r11, r12, " b "\n\t"
#define TFL_DSP_CC_QUAD                                                                                         \
    "ldm r0!, {r8, r9, r10, r11}\n\t" TFL_DSP_CC_ROW("", "r4", "r5") TFL_DSP_CC_ROW(", r2", "r6", "r7")           \
    "add r1, r1, #4\n\t"
    __asm__ volatile("push {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
                     "sub sp, sp, #8\n\t"
                     "str r0, [sp]\n\t"            /* x's start */
                     "lsl r12, r2, #1\n\t"
                     "sub r12, r12, r3, lsl #2\n\t"
                     "str r12, [sp, #4]\n\t"       /* 2 k - 4 nq: from a pair's last quad to the next pair's rows */
                     "add r3, r0, r3, lsl #4\n\t"
                     "sub r3, r3, #48\n"           /* x's end less 3 quads: four quads a turn while x is below it */
                     "3:\n\t"
                     "mov r4, #0\n\t"
                     "mov r5, #0\n\t"
                     "mov r6, #0\n\t"
                     "mov r7, #0\n\t"
                     "b 4f\n"
                     "1:\n\t" TFL_DSP_CC_QUAD TFL_DSP_CC_QUAD TFL_DSP_CC_QUAD TFL_DSP_CC_QUAD
                     "4:\n\t"
                     "cmp r0, r3\n\t"
                     "blo 1b\n\t"
                     "add r3, r3, #16\n\t"       /* 0 to 3 quads left: two where x is at most the end less 2 */
                     "cmp r0, r3\n\t"
                     "bhi 5f\n\t" TFL_DSP_CC_QUAD TFL_DSP_CC_QUAD
                     "5:\n\t"
                     "add r3, r3, #16\n\t"       /* then one where x is the end less 1 */
                     "cmp r0, r3\n\t"
                     "bne 2f\n\t" TFL_DSP_CC_QUAD
                     "2:\n\t"
                     "sub r3, r3, #32\n\t"       /* (the end less 3 again, for the next pair) */
                     "ldr r12, [sp, #44]\n\t"
                     "stm r12!, {r4, r5, r6, r7}\n\t"
                     "str r12, [sp, #44]\n\t"
                     "ldr r0, [sp]\n\t"
                     "ldr r12, [sp, #4]\n\t"
                     "add r1, r1, r12\n\t"
                     "ldr r12, [sp, #48]\n\t"
                     "subs r12, r12, #1\n\t"
                     "str r12, [sp, #48]\n\t"
                     "bgt 3b\n\t"
                     "add sp, sp, #8\n\t"
                     "pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
#undef TFL_DSP_CC_QUAD
#undef TFL_DSP_CC_ROW
}
#endif

/* The sums of two positions (a: {t0, t1} a channel, channels [o, o + n)) requantised to y0 and y1 (NULL: one
 * position, whose sums are its patch's twice: stored twice in place) by the channels' terms (tc): SMMLAR's form where
 * the channel's right shift (tc[2]) is not 0, else requant_double (its own function: few registers; issue 67: one
 * loop, a channel's terms and multiplier loaded once for its two outputs, 1.4x fewer instructions than a call per
 * output's terms) */
__attribute__((noinline)) static void tfl_dsp_cc_store(const int32_t *a, int32_t n, const int32_t *tc,
                                                       const aotc_tfl_conv_params *p, int32_t o, int8_t *y0,
                                                       int8_t *y1) {
    const uint32_t lo2 = ((uint32_t)p->y_min & 0xFFFFu) * 0x10001u, hi2 = ((uint32_t)p->y_max & 0xFFFFu) * 0x10001u;
    const ptrdiff_t d = y1 != NULL ? y1 - y0 : 0;
    const int32_t *const end = a + 2 * n, *m = p->mult + o;
    int8_t *yp = y0 + o;
    for (; a != end; a += 2, tc += 3, ++m, ++yp) {
        const int32_t right = tc[2];
        const uint32_t b = (uint32_t)tc[0];
        int32_t v0, v1;
        if (right != 0) {
            const int32_t s0 = (int32_t)(((uint32_t)a[0] + b) << 1), s1 = (int32_t)(((uint32_t)a[1] + b) << 1);
            v0 = (tfl_dsp_smmlar(s0, *m, tc[1]) + (s0 >> 31)) >> right;
            v1 = (tfl_dsp_smmlar(s1, *m, tc[1]) + (s1 >> 31)) >> right;
        } else {
            const int32_t sh = p->shift[m - p->mult];
            v0 = requant_double((int32_t)((uint32_t)a[0] + b), *m, sh) + p->y_zero;
            v1 = requant_double((int32_t)((uint32_t)a[1] + b), *m, sh) + p->y_zero;
        }
        /* both clamped at once: saturated to 8 bits, paired, then [lo, hi] by SSUB16's flags and SEL */
        uint32_t q = ((uint32_t)__ssat(v0, 8) & 0xFFFFu) | (uint32_t)__ssat(v1, 8) << 16;
        (void)__ssub16((int32_t)q, (int32_t)lo2), q = __sel(q, lo2);
        (void)__ssub16((int32_t)hi2, (int32_t)q), q = __sel(q, hi2);
        yp[d] = (int8_t)(q >> 16);
        yp[0] = (int8_t)q;
    }
}

#endif /* AOTC_TFL_CONV_2X2 */

/* The patch of output position t (in y's order) as bytes into d (k of them, x_zero's in the padding) */
static void tfl_dsp_cc_patch(const aotc_tfl_conv_params *p, const int8_t *x, int32_t t, int8_t *d) {
    const int32_t c = p->c, per = p->oh * p->ow, b = t / per, oy = t % per / p->ow, ox = t % p->ow;
    int32_t ky, kx;
    for (ky = 0; ky < p->kh; ++ky) {
        const int32_t iy = oy * p->sh - p->pad_top + ky * p->dh;
        for (kx = 0; kx < p->kw; ++kx, d += c) {
            const int32_t ix = ox * p->sw - p->pad_left + kx * p->dw;
            if ((uint32_t)iy < (uint32_t)p->h && (uint32_t)ix < (uint32_t)p->w)
                tfl_dsp_copy(d, x + (((ptrdiff_t)b * p->h + iy) * p->w + ix) * c, c);
            else
                memset(d, p->x_zero, (size_t)c);
        }
    }
}

#define TFL_DSP_CC_CHUNK 32 /* the channels whose sums (two positions') are on the stack at a time */

#if AOTC_TFL_CONV_2X2
/* Where c is a multiple of 4: the patches of output positions t0 and t1 widened straight from x as x - x_zero, into
 * tfl_dsp_cc_2x2's layout (E(t0), O(t0), E(t1), O(t1) a quad); a tap in the padding reads x_zero's bytes (0 so) */
static void tfl_dsp_cc_widen2(const aotc_tfl_conv_params *p, const int8_t *x, int32_t t0, int32_t t1, uint32_t *wx) {
    const int32_t c = p->c, per = p->oh * p->ow;
    const int32_t b0 = t0 / per, oy0 = t0 % per / p->ow * p->sh - p->pad_top, ox0 = t0 % p->ow * p->sw - p->pad_left;
    const int32_t b1 = t1 / per, oy1 = t1 % per / p->ow * p->sh - p->pad_top, ox1 = t1 % p->ow * p->sw - p->pad_left;
    const uint32_t zb = (uint32_t)p->x_zero, zw = (uint32_t)(uint8_t)p->x_zero * 0x01010101u;
    int32_t ky, kx, i;
    for (ky = 0; ky < p->kh; ++ky)
        for (kx = 0; kx < p->kw; ++kx) {
            const int32_t iy0 = oy0 + ky * p->dh, ix0 = ox0 + kx * p->dw;
            const int32_t iy1 = oy1 + ky * p->dh, ix1 = ox1 + kx * p->dw;
            const int in0 = (uint32_t)iy0 < (uint32_t)p->h && (uint32_t)ix0 < (uint32_t)p->w;
            const int in1 = (uint32_t)iy1 < (uint32_t)p->h && (uint32_t)ix1 < (uint32_t)p->w;
            const int8_t *s0 = in0 ? x + (((ptrdiff_t)b0 * p->h + iy0) * p->w + ix0) * c : (const int8_t *)&zw;
            const int8_t *s1 = in1 ? x + (((ptrdiff_t)b1 * p->h + iy1) * p->w + ix1) * c : (const int8_t *)&zw;
            const int32_t st0 = in0 ? 4 : 0, st1 = in1 ? 4 : 0;
            for (i = 0; i < c; i += 4, s0 += st0, s1 += st1, wx += 4) {
                const uint32_t u = aotc_dsp_load32(s0), v = aotc_dsp_load32(s1);
                wx[0] = tfl_dsp_less_lo(u, zb), wx[1] = tfl_dsp_less_hi(u, zb);
                wx[2] = tfl_dsp_less_lo(v, zb), wx[3] = tfl_dsp_less_hi(v, zb);
            }
        }
}


__attribute__((noinline)) static int tfl_conv_s8_compact(const aotc_tfl_conv_params *p, const int8_t *x,
                                                         const int8_t *w, const int32_t *bias, int8_t *y,
                                                         uint32_t *scratch, const tfl_residual *e) {
    const int32_t k = p->kh * p->kw * p->c, kq = (k + 3) / 4, kf = k / 4, oc = p->oc, zb = p->x_zero;
    const int32_t total = p->n * p->oh * p->ow;
    const int64_t lim = ((int64_t)1 << 30) - (int64_t)k * TFL_DSP_PRODUCT_MAX;
    int32_t sums[2 * TFL_DSP_CC_CHUNK], terms[3 * TFL_DSP_CC_CHUNK], np, t, o, c0, n, q, i, r;
    const int32_t words = tfl_dsp_conv_words(p, &np);
    if (scratch == NULL || np < 2 || words < 6 * kq || (e != NULL && e->tile == NULL)) return 0;
    /* (not called so in a bundle without a fused ADD: the ADD's code then left out, 1.2 KB at -Os) */
    if (!AOTC_TFL_CONV_RESIDUAL && e != NULL) return 0;
    int8_t *const patch = (int8_t *)scratch; /* the two positions' bytes, kq words each */
    uint32_t *const wide = scratch + 2 * kq;
    /* the channels' terms once a call past the widened quads where the scratch holds them, else a chunk's each time */
    int32_t *const tc = words >= 6 * kq + 3 * oc ? (int32_t *)(wide + 4 * kq) : NULL;
    if (tc != NULL) tfl_dsp_cc_terms(p, bias, 0, oc, lim, tc);
    for (t = 0; t < total; t += 2) {
        const int two = t + 1 < total; /* (an odd last position: its patch twice, stored once) */
        if (p->c % 4 == 0) { /* widened straight from x */
            tfl_dsp_cc_widen2(p, x, t, two ? t + 1 : t, wide);
        } else { /* copied as bytes, then widened (quads across taps, a last part of under 4 bytes) */
            tfl_dsp_cc_patch(p, x, t, patch);
            tfl_dsp_cc_patch(p, x, two ? t + 1 : t, patch + 4 * kq);
            for (r = 0; r < 2; ++r)
                for (i = k; i < 4 * kq; ++i) patch[4 * kq * r + i] = (int8_t)zb; /* (0 once less x_zero) */
            for (q = 0; q < kq; ++q) {
                const uint32_t u = aotc_dsp_load32(patch + 4 * q), v = aotc_dsp_load32(patch + 4 * (kq + q));
                wide[4 * q] = tfl_dsp_less_lo(u, (uint32_t)zb), wide[4 * q + 1] = tfl_dsp_less_hi(u, (uint32_t)zb);
                wide[4 * q + 2] = tfl_dsp_less_lo(v, (uint32_t)zb), wide[4 * q + 3] = tfl_dsp_less_hi(v, (uint32_t)zb);
            }
        }
        int8_t *const yo = e != NULL ? e->tile : y + (ptrdiff_t)t * oc;
        for (c0 = 0; c0 < oc; c0 += n) { /* a chunk of channels, two rows a time: an odd last one with the one before */
            n = oc - c0 < TFL_DSP_CC_CHUNK ? oc - c0 : TFL_DSP_CC_CHUNK;
            if (n >= 2) tfl_dsp_cc_2x2(wide, w + (ptrdiff_t)c0 * k, k, kf, sums, n / 2);
            if (n & 1) /* an odd last channel with the one before it (or alone, twice) */
                tfl_dsp_cc_2x2(wide, w + (ptrdiff_t)(c0 + n - (n >= 2 ? 2 : 1)) * k, n >= 2 ? k : 0, kf,
                               sums + 2 * (n - (n >= 2 ? 2 : 1)), 1);
            if (k > 4 * kf) /* the last part of under 4 bytes, byte by byte */
                for (o = 0; o < n; ++o)
                    for (r = 0; r < 2; ++r)
                        for (i = 4 * kf; i < k; ++i)
                            sums[2 * o + r] += (patch[4 * kq * r + i] - zb) * w[(ptrdiff_t)(c0 + o) * k + i];
            if (tc == NULL) tfl_dsp_cc_terms(p, bias, c0, n, lim, terms);
            tfl_dsp_cc_store(sums, n, tc != NULL ? tc + 3 * c0 : terms, p, c0, yo, two ? yo + oc : NULL);
        }
        if (e != NULL) tfl_residual_run(e, e->tile, (int64_t)t * oc, (two + 1) * oc, y);
    }
    return 1;
}
#else
/* Where c is a multiple of 4: the patch of output position t widened straight from x as x - x_zero (E, O words a
 * quad); a tap in the padding 0 */
static void tfl_dsp_cs_widen(const aotc_tfl_conv_params *p, const int8_t *x, int32_t t, uint32_t *wx) {
    const int32_t c = p->c, per = p->oh * p->ow;
    const int32_t b = t / per, oy = t % per / p->ow * p->sh - p->pad_top, ox = t % p->ow * p->sw - p->pad_left;
    const uint32_t zb = (uint32_t)p->x_zero;
    int32_t ky, kx, i;
    for (ky = 0; ky < p->kh; ++ky)
        for (kx = 0; kx < p->kw; ++kx) {
            const int32_t iy = oy + ky * p->dh, ix = ox + kx * p->dw;
            const int8_t *s = x + (((ptrdiff_t)b * p->h + iy) * p->w + ix) * c;
            if ((uint32_t)iy < (uint32_t)p->h && (uint32_t)ix < (uint32_t)p->w)
                for (i = 0; i < c; i += 4, s += 4, wx += 2) {
                    const uint32_t u = aotc_dsp_load32(s);
                    wx[0] = tfl_dsp_less_lo(u, zb), wx[1] = tfl_dsp_less_hi(u, zb);
                }
            else
                for (i = 0; i < c; i += 4, wx += 2) wx[0] = wx[1] = 0;
        }
}

/* The sums of n >= 1 weights' rows (row o at w + o k) over nq quads of the widened patch xw (E, O words a quad) into
 * sums[0 .. n): two rows a turn and two quads a turn (an odd last row with the one before, an odd quad first); with
 * CONV_PAIRS 0 one row and one quad a turn. Not inlined: the loops keep their registers. */
__attribute__((noinline)) static void tfl_dsp_cs_sums(const uint32_t *xw, int32_t nq, const int8_t *w, ptrdiff_t k,
                                                      int32_t n, int32_t *sums) {
    const uint32_t *const end = xw + 2 * nq;
    int32_t o;
#if AOTC_TFL_CONV_PAIRS
    const ptrdiff_t k1 = n >= 2 ? k : 0; /* (one row: twice) */
    for (o = 0; o < n; o += 2) {
        const int32_t o0 = o + 2 <= n || n < 2 ? o : n - 2;
        const uint32_t *x = xw;
        const int8_t *r = w + (ptrdiff_t)o0 * k;
        int32_t a0 = 0, a1 = 0;
#define TFL_DSP_CS_QUAD(i)                                                                                  \
    do {                                                                                                  \
        const uint32_t u = aotc_dsp_load32(r + 4 * (i)), v = aotc_dsp_load32(r + k1 + 4 * (i));             \
        const uint32_t e = x[2 * (i)], od = x[2 * (i) + 1];                                               \
        a0 = __smlad((int32_t)e, __sxtb16((int32_t)u), a0);                                              \
        a1 = __smlad((int32_t)e, __sxtb16((int32_t)v), a1);                                              \
        a0 = __smlad((int32_t)od, (int32_t)aotc_dsp_sxtb16_hi(u), a0);                                   \
        a1 = __smlad((int32_t)od, (int32_t)aotc_dsp_sxtb16_hi(v), a1);                                   \
    } while (0)
        if (nq & 1) { /* an odd quad first, then two a turn */
            TFL_DSP_CS_QUAD(0);
            x += 2, r += 4;
        }
        for (; x != end; x += 4, r += 8) {
            TFL_DSP_CS_QUAD(0);
            TFL_DSP_CS_QUAD(1);
        }
#undef TFL_DSP_CS_QUAD
        sums[o0] = a0;
        if (k1) sums[o0 + 1] = a1;
    }
#else
    (void)k;
    for (o = 0; o < n; ++o) {
        const uint32_t *x = xw;
        const int8_t *r = w + (ptrdiff_t)o * k;
        int32_t a0 = 0;
        for (; x != end; x += 2, r += 4) {
            const uint32_t u = aotc_dsp_load32(r);
            a0 = __smlad((int32_t)x[0], __sxtb16((int32_t)u), a0);
            a0 = __smlad((int32_t)x[1], (int32_t)aotc_dsp_sxtb16_hi(u), a0);
        }
        sums[o] = a0;
    }
#endif
}

/* The compact path in its smaller forms (AOTC_TFL_CONV_2X2 0: the --flash-budget levels "conv-small" and, with
 * AOTC_TFL_CONV_PAIRS 0, "conv-smallest"; issue 67): one output position at a time, its patch copied as bytes
 * (tfl_dsp_cc_patch, x_zero's in the padding) and widened as x - x_zero (E / O words a quad) into the scratch, then two
 * output channels a turn (one with PAIRS 0; an odd last one with the one before) by a rolled SMLAD loop over the
 * whole quads (tfl_dsp_cs_sums, a chunk of channels a call), a last part of under 4 bytes byte by byte, each output
 * requantised apart (requant_double):
 * LiteRT's integers. Scratch: the patch's kq words and its 2 kq widened ones (where c is a multiple of 4 widened
 * straight from x, tfl_dsp_cs_widen). */
__attribute__((noinline)) static int tfl_conv_s8_small(const aotc_tfl_conv_params *p, const int8_t *x,
                                                       const int8_t *w, const int32_t *bias, int8_t *y,
                                                       uint32_t *scratch, const tfl_residual *e) {
    const int32_t k = p->kh * p->kw * p->c, kq = (k + 3) / 4, kf = k / 4, oc = p->oc, zb = p->x_zero;
    const int32_t total = p->n * p->oh * p->ow;
    const int32_t yz = p->y_zero, lo = p->y_min, hi = p->y_max, tail = k > 4 * kf;
    int32_t sums[TFL_DSP_CC_CHUNK], np, t, o, q, i, c0, n;
    const int32_t words = tfl_dsp_conv_words(p, &np);
    if (scratch == NULL || words < 3 * kq || (e != NULL && e->tile == NULL)) return 0;
    if (!AOTC_TFL_CONV_RESIDUAL && e != NULL) return 0; /* (the ADD's code not linked where the model fuses none) */
    int8_t *const patch = (int8_t *)scratch;
    uint32_t *const wide = scratch + kq;
    /* the channels' terms once a call past the widened patch where the scratch holds them (SMMLAR's form where they
     * allow it), else each output by requant_double (issue 67: IC ResNet-8 1.09x fewer est. cycles on the M4) */
    int32_t *const tc = words >= 3 * kq + 3 * oc ? (int32_t *)(wide + 2 * kq) : NULL;
    if (tc != NULL) tfl_dsp_cc_terms(p, bias, 0, oc, ((int64_t)1 << 30) - (int64_t)k * TFL_DSP_PRODUCT_MAX, tc);
    for (t = 0; t < total; ++t) {
        int8_t *const yo = e != NULL ? e->tile : y + (ptrdiff_t)t * oc;
        if (p->c % 4 == 0) { /* widened straight from x */
            tfl_dsp_cs_widen(p, x, t, wide);
        } else {
            tfl_dsp_cc_patch(p, x, t, patch);
            for (q = 0; q < kf; ++q) {
                const uint32_t u = aotc_dsp_load32(patch + 4 * q);
                wide[2 * q] = tfl_dsp_less_lo(u, (uint32_t)zb), wide[2 * q + 1] = tfl_dsp_less_hi(u, (uint32_t)zb);
            }
        }
        for (c0 = 0; c0 < oc; c0 += n) { /* a chunk of channels' sums on the stack, then requantised */
            n = oc - c0 < TFL_DSP_CC_CHUNK ? oc - c0 : TFL_DSP_CC_CHUNK;
            tfl_dsp_cs_sums(wide, kf, w + (ptrdiff_t)c0 * k, k, n, sums);
            for (o = c0; o < c0 + n; ++o) {
                int32_t a = sums[o - c0], v;
                if (tail) /* the last part of under 4 bytes (c % 4 == 0: none) */
                    for (i = 4 * kf; i < k; ++i) a += (patch[i] - zb) * w[(ptrdiff_t)o * k + i];
                if (tc != NULL && tc[3 * o + 2] != 0) {
                    const int32_t s2 = (int32_t)(((uint32_t)a + (uint32_t)tc[3 * o]) << 1);
                    v = (tfl_dsp_smmlar(s2, p->mult[o], tc[3 * o + 1]) + (s2 >> 31)) >> tc[3 * o + 2];
                } else {
                    v = requant_double(a + (bias ? bias[o] : 0), p->mult[o], p->shift[o]) + yz;
                }
                yo[o] = (int8_t)(v < lo ? lo : v > hi ? hi : v);
            }
        }
        if (e != NULL) tfl_residual_run(e, e->tile, (int64_t)t * oc, oc, y);
    }
    return 1;
}
#endif /* AOTC_TFL_CONV_2X2 */
#else
#define TFL_CONV_COMPACT 0
#endif

/* Without a fused ADD in the bundle (AOTC_TFL_CONV_RESIDUAL 0) inlined in both entry points, so that
 * aotc_tfl_conv_s8's copy has none of the ADD's code (tfl_residual_run, add_one): it is then only
 * aotc_tfl_conv_add_s8's, which such a bundle does not call, and its link drops it. */
#if AOTC_TFL_CONV_RESIDUAL
#define TFL_CONV_S8_INLINE
#else
#define TFL_CONV_S8_INLINE inline __attribute__((always_inline))
#endif

#if !AOTC_QUANT_DSP && defined(AOTC_NO_INTRINSICS) && AOTC_TFL_PORTABLE_FAST
/* acc[2 r + k] += sum over i < n of x[r xb + i] w[k wk + i]: two positions by two output channels, each byte
 * pair of x and of w loaded once for 4 MACs. A function of its own so that its loop has the registers to itself
 * (inlined in the conv's loops, gcc at -Os kept its pointers on the stack) */
static __attribute__((noinline)) void tfl_dot2x2(const int8_t *x, ptrdiff_t xb, const int8_t *w, ptrdiff_t wk,
                                                 int32_t n, int32_t *acc) {
    int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
    const int8_t *const xe = x + n;
    if (n & 1) { /* an odd byte first (a loop turn's compare and branch once for 16 MACs) */
        const int32_t u = x[0], v = x[xb], q0 = w[0], q1 = w[wk];
        a00 += u * q0, a01 += u * q1, a10 += v * q0, a11 += v * q1;
        ++x, ++w;
    }
#define TFL_DOT2X2_BYTE(i)                                                                                    \
    do {                                                                                                        \
        const int32_t u = x[i], v = x[xb + (i)], q0 = w[i], q1 = w[wk + (i)];                                  \
        a00 += u * q0, a01 += u * q1, a10 += v * q0, a11 += v * q1;                                           \
    } while (0)
    if (n & 2) { /* then two bytes, then four a turn (issue 67: KWS DS-CNN's portable level 1.05x faster) */
        TFL_DOT2X2_BYTE(0);
        TFL_DOT2X2_BYTE(1);
        x += 2, w += 2;
    }
    for (; x < xe; x += 4, w += 4) {
        TFL_DOT2X2_BYTE(0);
        TFL_DOT2X2_BYTE(1);
        TFL_DOT2X2_BYTE(2);
        TFL_DOT2X2_BYTE(3);
    }
#undef TFL_DOT2X2_BYTE
    acc[0] = a00, acc[1] = a01, acc[2] = a10, acc[3] = a11;
}
#endif

#if !AOTC_QUANT_DSP && defined(AOTC_NO_INTRINSICS) && (TFL_PMVE_S8 || TFL_PMVE_DOT8)
/* s[j] += sum over i < n of x[i] w[kj + i] (k0 = 0), j < 4: x's bytes as they are, 16 a VMLADAVA.S8 (the tail predicated
 * off), loads and MACs alternating as tfl_mve_dot4q's: 9 instructions for 64 MACs, where tfl_pmve_dot4's widening loop
 * takes 20 */
static inline __attribute__((always_inline)) void tfl_pmve_dot4_s8(const int8_t *x, const int8_t *w, ptrdiff_t k1,
                                                                   ptrdiff_t k2, ptrdiff_t k3, int32_t n, int32_t s[4]) {
    if (n <= 0)
        return;
    const int8_t *w0 = w, *w1 = w + k1, *w2 = w + k2, *w3 = w + k3;
    int32_t a0 = s[0], a1 = s[1], a2 = s[2], a3 = s[3];
    int8x16_t xv, v1, v2;
    __asm__ volatile("dlstp.8 lr, %[n]\n"
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
                     "letp lr, 1b"
                     : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [x] "+r"(x), [w0] "+r"(w0),
                       [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [xv] "=&w"(xv), [v1] "=&w"(v1), [v2] "=&w"(v2)
                     : [n] "r"(n)
                     : "lr", "memory");
    s[0] = a0, s[1] = a1, s[2] = a2, s[3] = a3;
}
#endif

#if !AOTC_QUANT_DSP && defined(AOTC_NO_INTRINSICS) && TFL_PMVE_DOT8
#define TFL_PMVE_PW_C 256 /* tfl_conv_s8_pmve_pw's input channels at most, tfl_conv_s8_pmve_win's window row's bytes (x's
                           * zero point that many times on the stack) */

/* s plus the dot products of `rows` runs of n bytes of x (xrow apart) with 4 channels' weights (ld apart; their runs
 * wrow apart), lane by lane (tfl_pmve_dot4_s8), a call of its own: its registers set up once, not at each call site (the
 * portable-mve-dot8 level's convs) */
static __attribute__((noinline)) int32x4_t tfl_pmve_dot8(const int8_t *x, const int8_t *w, int32_t ld, int32_t n,
                                                         int32_t rows, ptrdiff_t xrow, ptrdiff_t wrow, int32x4_t s) {
    int32_t a[4];
    vst1q_s32(a, s);
    for (; rows > 0; --rows, x += xrow, w += wrow) tfl_pmve_dot4_s8(x, w, ld, 2 * (ptrdiff_t)ld, 3 * (ptrdiff_t)ld, n, a);
    return vld1q_s32(a);
}

/* y[at .. at + 3] = the 4 channels' sums v requantised (o: the first's index), or their fused ADD with the residual */
static inline __attribute__((always_inline)) void tfl_pmve_dot8_out(const aotc_tfl_conv_params *p, const tfl_residual *e,
                                                                     int32x4_t v, int32_t o, int64_t at, int8_t *y) {
    const int32x4_t r = tfl_pmve_requant4(v, p->mult + o, p->shift + o, p->y_zero, p->y_min, p->y_max);
    if (AOTC_TFL_CONV_RESIDUAL && e != NULL) /* (none compiled where the model fuses no ADD) */
        tfl_pmve_add4(e, r, at, y);
    else
        vstrbq_s32(y + at, r);
}

/* whether y may overlap x (a RAM budget's plan): the group-by-group loops below would write outputs before the next
 * group reads their bytes of x */
static inline __attribute__((always_inline)) int tfl_pmve_dot8_apart(const aotc_tfl_conv_params *p, const int8_t *x,
                                                                      const int8_t *y) {
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y;
    const uintptr_t xn = (uintptr_t)((int64_t)p->n * p->h * p->w * p->c);
    const uintptr_t yn = (uintptr_t)((int64_t)p->n * p->oh * p->ow * p->oc);
    return ya >= xa + xn || xa >= ya + yn;
}

#if AOTC_TFL_PORTABLE_MVE_PW
/* The M55's portable-mve-dot8 level's pointwise conv (issue 67; where no window above 1 x 1 leads the model's work, as
 * in KWS DS-CNN and VWW MobileNet): a 1 x 1 window at stride 1, unpadded, 4 output channels at a time over every
 * position, each position's dot products of x's bytes as they are (16 a VMLADAVA.S8), x's zero point taken off by
 * the group's weights' sums (their dot products with x_zero's bytes), once a group; requantised 4 channels a vector.
 * 0 for other layers, for a channel count not a multiple of 4, over TFL_PMVE_PW_C input channels, without a bias, or
 * where y may overlap x: the portable loop then. */
static __attribute__((noinline)) int tfl_conv_s8_pmve_pw(const aotc_tfl_conv_params *p, const int8_t *x,
                                                          const int8_t *w, const int32_t *bias, int8_t *y,
                                                          const tfl_residual *e) {
    const int32_t c = p->c, oc = p->oc, total = p->n * p->oh * p->ow;
    int8_t zx[TFL_PMVE_PW_C]; /* x's zero point, c times */
    if (p->kh != 1 || p->kw != 1 || p->sh != 1 || p->sw != 1 || p->pad_top != 0 || p->pad_left != 0 ||
        p->oh != p->h || p->ow != p->w || oc % 4 != 0 || c > TFL_PMVE_PW_C || bias == NULL ||
        !tfl_pmve_dot8_apart(p, x, y))
        return 0;
    memset(zx, p->x_zero, (size_t)c);
    for (int32_t o = 0; o < oc; o += 4) {
        const int8_t *const wo = w + (ptrdiff_t)o * c, *xq = x;
        const int32x4_t base = vsubq_s32(vld1q_s32(bias + o), tfl_pmve_dot8(zx, wo, c, c, 1, 0, 0, vdupq_n_s32(0)));
        for (int32_t pos = 0; pos < total; ++pos, xq += c)
            tfl_pmve_dot8_out(p, e, tfl_pmve_dot8(xq, wo, c, c, 1, 0, 0, base), o, (int64_t)pos * oc + o, y);
    }
    return 1;
}
#endif

#if AOTC_TFL_PORTABLE_MVE_WIN
/* The M55's portable-mve-dot8 level's conv where windows above 1 x 1 lead the model's work (issue 67: IC ResNet-8's
 * 3 x 3 layers): 4 output channels at a time over every position, each window row's dot products of x's bytes as they
 * are (tfl_pmve_dot8), x's zero point taken off by the weights' sums (their dot products with x_zero's bytes: the whole
 * window's once a group, a clipped window's over its taps inside at the position); requantised 4 channels a vector.
 * 0 at column dilation above 1, for window rows not whole vectors (kw c not a multiple of 16: first convs) or over
 * TFL_PMVE_PW_C bytes, a channel count not a multiple of 4, without a bias, or where y may overlap x: the portable loop
 * then. */
static __attribute__((noinline)) int tfl_conv_s8_pmve_win(const aotc_tfl_conv_params *p, const int8_t *x,
                                                           const int8_t *w, const int32_t *bias, int8_t *y,
                                                           const tfl_residual *e) {
    const int32_t c = p->c, kh = p->kh, kw = p->kw, kk = kh * kw * c, oc = p->oc, ih = p->h, iw = p->w, dh = p->dh;
    const int32_t wrow = kw * c;
    const ptrdiff_t xrow = (ptrdiff_t)dh * iw * c;
    int8_t zx[TFL_PMVE_PW_C]; /* x's zero point, a window row's bytes */
    if (p->dw != 1 || wrow % 16 != 0 || wrow > TFL_PMVE_PW_C || oc % 4 != 0 || bias == NULL ||
        !tfl_pmve_dot8_apart(p, x, y))
        return 0;
    memset(zx, p->x_zero, (size_t)wrow);
    for (int32_t o = 0; o < oc; o += 4) {
        const int8_t *const wo = w + (ptrdiff_t)o * kk;
        const int32x4_t bv = vld1q_s32(bias + o), zero4 = vdupq_n_s32(0);
        const int32x4_t base = vsubq_s32(bv, tfl_pmve_dot8(zx, wo, kk, wrow, kh, 0, wrow, zero4)); /* a whole window's */
        int64_t at = o; /* y's index of the position's first channel of the group */
        for (int32_t b = 0; b < p->n; ++b)
            for (int32_t oy = 0; oy < p->oh; ++oy)
                for (int32_t ox = 0; ox < p->ow; ++ox, at += oc) {
                    const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
                    int32x4_t v;
                    if (iy0 >= 0 && iy0 + (kh - 1) * dh < ih && ix0 >= 0 && ix0 + kw <= iw) { /* inside the image */
                        v = tfl_pmve_dot8(x + (((ptrdiff_t)b * ih + iy0) * iw + ix0) * c, wo, kk, wrow, kh, xrow, wrow,
                                          base);
                    } else {
                        int32_t ky0 = 0, ky1 = kh, kx0 = 0, kx1 = kw;
                        tfl_taps_inside(iy0, dh, ih, &ky0, &ky1);
                        tfl_taps_inside(ix0, 1, iw, &kx0, &kx1);
                        const int32_t seg = (kx1 - kx0) * c, rows = ky1 - ky0;
                        const int8_t *xq = x + (((ptrdiff_t)b * ih + iy0 + ky0 * dh) * iw + ix0 + kx0) * c;
                        const int8_t *wq = wo + ((ptrdiff_t)ky0 * kw + kx0) * c;
                        /* the taps inside's dot products, less x_zero times their weights' sums */
                        v = vsubq_s32(tfl_pmve_dot8(xq, wq, kk, seg, rows, xrow, wrow, bv),
                                      tfl_pmve_dot8(zx, wq, kk, seg, rows, 0, wrow, zero4));
                    }
                    tfl_pmve_dot8_out(p, e, v, o, at, y);
                }
    }
    return 1;
}
#endif
#endif

#if !AOTC_QUANT_DSP && defined(AOTC_NO_INTRINSICS) && TFL_PMVE_S8
/* s[j] += sum over i < n of w[kj + i], j < 4 (tfl_pmve_dot4_s8's rows of weights) */
static inline __attribute__((always_inline)) void tfl_pmve_sum4(const int8_t *w, ptrdiff_t k1, ptrdiff_t k2,
                                                                ptrdiff_t k3, int32_t n, int32_t s[4]) {
    if (n <= 0)
        return;
    const int8_t *w0 = w, *w1 = w + k1, *w2 = w + k2, *w3 = w + k3;
    int32_t a0 = s[0], a1 = s[1], a2 = s[2], a3 = s[3];
    int8x16_t v1, v2;
    __asm__ volatile("dlstp.8 lr, %[n]\n"
                     "1:\n\t"
                     "vldrb.8 %q[v1], [%[w0]], #16\n\t"
                     "vaddva.s8 %[a0], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w1]], #16\n\t"
                     "vaddva.s8 %[a1], %q[v2]\n\t"
                     "vldrb.8 %q[v1], [%[w2]], #16\n\t"
                     "vaddva.s8 %[a2], %q[v1]\n\t"
                     "vldrb.8 %q[v2], [%[w3]], #16\n\t"
                     "vaddva.s8 %[a3], %q[v2]\n\t"
                     "letp lr, 1b"
                     : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [w0] "+r"(w0), [w1] "+r"(w1),
                       [w2] "+r"(w2), [w3] "+r"(w3), [v1] "=&w"(v1), [v2] "=&w"(v2)
                     : [n] "r"(n)
                     : "lr", "memory");
    s[0] = a0, s[1] = a1, s[2] = a2, s[3] = a3;
}
/* y[at + j] = r's lane j, j < n (4 or fewer: a last group's), or the fused ADD of it and the residual there */
static inline __attribute__((always_inline)) void tfl_pmve8_store(const tfl_residual *e, int32x4_t r, int32_t n,
                                                                  int64_t at, int8_t *y) {
    if (n == 4) {
        if (AOTC_TFL_CONV_RESIDUAL && e != NULL) /* (none compiled where the model fuses no ADD) */
            tfl_pmve_add4(e, r, at, y);
        else
            vstrbq_s32(y + at, r);
        return;
    }
    int32_t r4[4];
    vst1q_s32(r4, r);
    for (int32_t j = 0; j < n; ++j) {
        const int8_t v8 = (int8_t)r4[j];
        if (AOTC_TFL_CONV_RESIDUAL && e != NULL)
            tfl_residual_run(e, &v8, at + j, 1, y);
        else
            y[at + j] = v8;
    }
}

/* the patch form's limits (tfl_conv_s8_pmve8_patch): a window's bytes, and the output channels, on the stack */
#define TFL_PMVE8_PATCH 128
#define TFL_PMVE8_OC 64

/* tfl_conv_s8_pmve8's form for windows of few bytes a row (kw c not a multiple of 16: the first convs, KWS DS-CNN's
 * 10 x 4 x 1, IC ResNet-8's 3 x 3 x 3): each position's window gathered once into a patch on the stack (x_zero where
 * it is outside the image: adds 0 once the whole window's weights' sums take x's zero point off), then 4 channels at a
 * time by one DLSTP loop over it; the channels' terms taken once a call. 0 past TFL_PMVE8_PATCH bytes or TFL_PMVE8_OC
 * channels, or where y may overlap x (the positions go in order, but a patch is read after earlier outputs land). */
static int tfl_conv_s8_pmve8_patch(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                                   int8_t *y, const tfl_residual *e) {
    const int32_t c = p->c, kh = p->kh, kw = p->kw, xz = p->x_zero, kk = kh * kw * c, oc = p->oc;
    const int32_t ih = p->h, iw = p->w, dh = p->dh, dw = p->dw, yz = p->y_zero, lo = p->y_min, hi = p->y_max;
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y;
    const uintptr_t xn = (uintptr_t)((int64_t)p->n * ih * iw * c), yn = (uintptr_t)((int64_t)p->n * p->oh * p->ow * oc);
    if (kk > TFL_PMVE8_PATCH || oc > TFL_PMVE8_OC || !(ya >= xa + xn || xa >= ya + yn))
        return 0;
    int8_t patch[TFL_PMVE8_PATCH] __attribute__((aligned(8)));
    int32_t base[TFL_PMVE8_OC + 4] __attribute__((aligned(8))); /* bias - x_zero sum w, a channel's */
    for (int32_t o = 0; o < oc; o += 4) {
        const int32_t n = oc - o < 4 ? oc - o : 4;
        int32_t s4[4] = {0, 0, 0, 0};
        tfl_pmve_sum4(w + (ptrdiff_t)o * kk, n > 1 ? kk : 0, n > 2 ? 2 * kk : 0, n > 3 ? 3 * kk : 0, kk, s4);
        for (int32_t j = 0; j < 4; ++j) base[o + j] = (j < n && bias ? bias[o + j] : 0) - xz * s4[j];
    }
    int64_t at0 = 0;
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox, at0 += oc) {
                const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
                int8_t *d = patch;
                for (int32_t ky = 0, iy = iy0; ky < kh; ++ky, iy += dh)
                    for (int32_t kx = 0, ix = ix0; kx < kw; ++kx, ix += dw) {
                        const int in = (uint32_t)iy < (uint32_t)ih && (uint32_t)ix < (uint32_t)iw;
                        const ptrdiff_t at = (((ptrdiff_t)b * ih + iy) * iw + ix) * c; /* (read only inside) */
                        for (int32_t i = 0; i < c; ++i) *d++ = in ? x[at + i] : (int8_t)xz;
                    }
                for (int32_t o = 0; o < oc; o += 4) {
                    const int32_t n = oc - o < 4 ? oc - o : 4; /* (lanes past oc: the first's row, not stored) */
                    int32_t acc4[4] = {0, 0, 0, 0};
                    tfl_pmve_dot4_s8(patch, w + (ptrdiff_t)o * kk, n > 1 ? kk : 0, n > 2 ? 2 * kk : 0,
                                     n > 3 ? 3 * kk : 0, kk, acc4);
                    const int32x4_t v = vaddq_s32(vld1q_s32(acc4), vld1q_s32(base + o));
                    int32_t t[8];
                    for (int32_t j = 0; j < 4; ++j) {
                        const int32_t q = o + (j < n ? j : 0);
                        t[j] = p->mult[q], t[4 + j] = p->shift[q];
                    }
                    tfl_pmve8_store(e, tfl_pmve_requant4(v, t, t + 4, yz, lo, hi), n, at0 + o, y);
                }
            }
    return 1;
}

/* a0 + j .. : the sums of tfl_pmve_dot4_s8 over `rows` runs of n bytes (n a multiple of 16), x's runs xadj + n bytes
 * apart, w's one after another (a whole window's rows): one assembly loop, the row's DLSTP loop inside it */
#define TFL_PMVE_ROWS_S8(X, W0, W1, W2, W3, N, ROWS, XADJ, A0, A1, A2, A3)                                           \
    do {                                                                                                            \
        int8x16_t xv_, v1_, v2_;                                                                                    \
        __asm__ volatile("1:\n\t"                                                                                   \
                         "dlstp.8 lr, %[n]\n"                                                                       \
                         "2:\n\t"                                                                                   \
                         "vldrb.8 %q[xv], [%[x]], #16\n\t"                                                          \
                         "vldrb.8 %q[v1], [%[w0]], #16\n\t"                                                         \
                         "vmladava.s8 %[a0], %q[xv], %q[v1]\n\t"                                                    \
                         "vldrb.8 %q[v2], [%[w1]], #16\n\t"                                                         \
                         "vmladava.s8 %[a1], %q[xv], %q[v2]\n\t"                                                    \
                         "vldrb.8 %q[v1], [%[w2]], #16\n\t"                                                         \
                         "vmladava.s8 %[a2], %q[xv], %q[v1]\n\t"                                                    \
                         "vldrb.8 %q[v2], [%[w3]], #16\n\t"                                                         \
                         "vmladava.s8 %[a3], %q[xv], %q[v2]\n\t"                                                    \
                         "letp lr, 2b\n\t"                                                                          \
                         "add %[x], %[x], %[xadj]\n\t"                                                              \
                         "subs %[rows], %[rows], #1\n\t"                                                            \
                         "bne 1b"                                                                                   \
                         : [a0] "+Te"(A0), [a1] "+Te"(A1), [a2] "+Te"(A2), [a3] "+Te"(A3), [x] "+r"(X),             \
                           [w0] "+r"(W0), [w1] "+r"(W1), [w2] "+r"(W2), [w3] "+r"(W3), [rows] "+r"(ROWS),           \
                           [xv] "=&w"(xv_), [v1] "=&w"(v1_), [v2] "=&w"(v2_)                                        \
                         : [n] "r"(N), [xadj] "r"(XADJ)                                                             \
                         : "lr", "cc", "memory");                                                                   \
    } while (0)

/* The M55's portable-mve-s8 level's conv (issue 67): 4 output channels at a time over every position, their weights'
 * sums over the whole window and their requantisation's terms taken once, each window's dot products of x's bytes as
 * they are, x's zero point taken off by the weights' sums (those of the taps inside the image where the window is
 * clipped: the reference skips the others), the same integers as sum (x - x_zero) w; requantised 4 channels a vector.
 * A window inside the image whose rows are whole vectors (kw c a multiple of 16, column dilation 1) by one assembly
 * loop (TFL_PMVE_ROWS_S8), the others a run at a time (tfl_pmve_dot4_s8). 0 where y may overlap x (a RAM budget's
 * plan: a group's outputs would land before the next group reads its windows): the position-by-position loop then. */
static int tfl_conv_s8_pmve8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                             int8_t *y, const tfl_residual *e) {
    const int32_t c = p->c, kh = p->kh, kw = p->kw, xz = p->x_zero, kk = kh * kw * c, oc = p->oc;
    const int32_t ih = p->h, iw = p->w, dh = p->dh, dw = p->dw, yz = p->y_zero, lo = p->y_min, hi = p->y_max;
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y;
    const uintptr_t xn = (uintptr_t)((int64_t)p->n * ih * iw * c), yn = (uintptr_t)((int64_t)p->n * p->oh * p->ow * oc);
    const ptrdiff_t xrow = (ptrdiff_t)dh * iw * c, wrow = (ptrdiff_t)kw * c, xs = (ptrdiff_t)dw * c;
    const int32_t wn = (int32_t)wrow, whole_rows = dw == 1 && wrow % 16 == 0;
    if (!whole_rows || !(ya >= xa + xn || xa >= ya + yn))
        return 0;
    const ptrdiff_t xadj = xrow - wrow; /* from a window row's end to the next row in x */ /* a window's rows by TFL_PMVE_ROWS_S8 where it is inside */
    const int32x4_t zero4 = vdupq_n_s32(0);
    for (int32_t o = 0; o < oc; o += 4) {
        const int32_t n = oc - o < 4 ? oc - o : 4; /* (a last group's lanes past oc read the first's row, not stored) */
        const ptrdiff_t k1 = n > 1 ? kk : 0, k2 = n > 2 ? 2 * (ptrdiff_t)kk : 0, k3 = n > 3 ? 3 * (ptrdiff_t)kk : 0;
        const int8_t *const wo = w + (ptrdiff_t)o * kk;
        int32_t whole[4] = {0, 0, 0, 0};
        tfl_pmve_sum4(wo, k1, k2, k3, kk, whole);
        /* the group's terms (a last part's lanes past oc the first's again, not stored) */
        int32_t t[12];
        for (int32_t j = 0; j < 4; ++j) {
            const int32_t q = o + (j < n ? j : 0);
            t[j] = bias ? bias[q] : 0, t[4 + j] = p->mult[q], t[8 + j] = p->shift[q];
        }
        const int32x4_t bv = vld1q_s32(t), mult = vld1q_s32(t + 4), sh = vld1q_s32(t + 8);
        const int32x4_t left = vmaxq_s32(sh, zero4), nright = vminq_s32(sh, zero4);
        const int32x4_t base = vsubq_s32(bv, vmulq_n_s32(vld1q_s32(whole), xz)); /* a whole window's */
        int64_t at0 = o; /* y's index of the position's first channel of the group */
        for (int32_t b = 0; b < p->n; ++b)
            for (int32_t oy = 0; oy < p->oh; ++oy)
                for (int32_t ox = 0; ox < p->ow; ++ox, at0 += oc) {
                    const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
                    int32x4_t v;
                    if (whole_rows && iy0 >= 0 && iy0 + (kh - 1) * dh < ih && ix0 >= 0 && ix0 + kw <= iw) {
                        /* the window inside the image, its rows whole vectors: one loop */
                        const int8_t *xq = x + (((ptrdiff_t)b * ih + iy0) * iw + ix0) * c;
                        const int8_t *w0 = wo, *w1 = wo + k1, *w2 = wo + k2, *w3 = wo + k3;
                        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, rows = kh;
                        TFL_PMVE_ROWS_S8(xq, w0, w1, w2, w3, wn, rows, xadj, a0, a1, a2, a3);
                        const int32_t a4[4] = {a0, a1, a2, a3};
                        v = vaddq_s32(vld1q_s32(a4), base);
                    } else {
                        int32_t ky0 = 0, ky1 = kh, kx0 = 0, kx1 = kw;
                        tfl_taps_inside(iy0, dh, ih, &ky0, &ky1);
                        tfl_taps_inside(ix0, dw, iw, &kx0, &kx1);
                        /* runs of `seg` bytes, `segs` a kernel row (the window's row one run at column dilation 1) */
                        const int32_t seg = dw == 1 ? (kx1 - kx0) * c : c, segs = dw == 1 ? 1 : kx1 - kx0;
                        const int32_t clipped = ky0 != 0 || ky1 != kh || kx0 != 0 || kx1 != kw;
                        const int8_t *xq = x + (((ptrdiff_t)b * ih + iy0 + ky0 * dh) * iw + ix0 + kx0 * dw) * c;
                        const int8_t *wq = wo + ((ptrdiff_t)ky0 * kw + kx0) * c;
                        int32_t acc4[4] = {0, 0, 0, 0}, ws[4] = {0, 0, 0, 0};
                        for (int32_t i = ky0; i < ky1; ++i, xq += xrow, wq += wrow) {
                            const int8_t *xr = xq, *wr = wq;
                            for (int32_t s = 0; s < segs; ++s, xr += xs, wr += c) {
                                tfl_pmve_dot4_s8(xr, wr, k1, k2, k3, seg, acc4);
                                if (clipped) tfl_pmve_sum4(wr, k1, k2, k3, seg, ws); /* the taps inside's */
                            }
                        }
                        v = clipped ? vaddq_s32(vsubq_s32(vld1q_s32(acc4), vmulq_n_s32(vld1q_s32(ws), xz)), bv)
                                    : vaddq_s32(vld1q_s32(acc4), base);
                    }
                    /* requant_double's arithmetic (tfl_pmve_rq), the zero point, the clamp */
                    int32x4_t r = vqrdmulhq_s32(vshlq_s32(v, left), mult);
                    r = vrshlq_s32(vqaddq_s32(r, vshrq_n_s32(vandq_s32(r, nright), 31)), nright);
                    tfl_pmve8_store(e, vminq_s32(vmaxq_s32(vaddq_n_s32(r, yz), vdupq_n_s32(lo)), vdupq_n_s32(hi)), n,
                                    at0, y);
                }
    }
    return 1;
}
#endif

#if !AOTC_QUANT_DSP && defined(AOTC_NO_INTRINSICS)
/* tfl_conv_s8 in the portable kernels (a --flash-budget level's, issue 67): pointwise layers by pairs of channels
 * (AOTC_TFL_PORTABLE_FAST), the others by a plain loop of 4 output channels a window (on the M55's portable-mve
 * levels, their dot products and requantisation by Helium) */
static inline __attribute__((always_inline)) void tfl_conv_s8_portable(const aotc_tfl_conv_params *p, const int8_t *x,
                                                                       const int8_t *w, const int32_t *bias, int8_t *y,
                                                                       const tfl_residual *e) {
#if TFL_PMVE_S8
    if (tfl_conv_s8_pmve8(p, x, w, bias, y, e) || tfl_conv_s8_pmve8_patch(p, x, w, bias, y, e)) return;
#endif
#if TFL_PMVE_DOT8 && AOTC_TFL_PORTABLE_MVE_WIN
    if (tfl_conv_s8_pmve_win(p, x, w, bias, y, e)) return;
#endif
#if TFL_PMVE_DOT8 && AOTC_TFL_PORTABLE_MVE_PW
    if (tfl_conv_s8_pmve_pw(p, x, w, bias, y, e)) return;
#endif
#if AOTC_TFL_PORTABLE_FAST
    if (p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0 && (p->oh - 1) * p->sh < p->h &&
        (p->ow - 1) * p->sw < p->w) {
        /* 1 x 1 (every window whole): two output channels at a time, their weights' sums taken once, so that
         * sum((x - xz) * w) is sum(x * w) less xz times that sum, then two positions at a time in y's order (a
         * pair across a row's end too: KWS's rows of 5), each input byte pair and weight pair loaded once for 4 MACs,
         * no offset subtracted (issue 67: the pointwise layers of KWS and VWW at the portable level) */
        const int32_t c = p->c, oc = p->oc, ow = p->ow, np = p->n * p->oh * ow;
        for (int32_t o = 0; o < oc; o += 2) {
            const int32_t two = o + 1 < oc;
            const int8_t *const w0 = w + (ptrdiff_t)o * c;
            const ptrdiff_t wk = two ? c : 0; /* a last odd channel: its own row twice, the second not stored */
            int32_t s0 = 0, s1 = 0;
            for (int32_t i = 0; i < c; ++i) s0 += w0[i], s1 += w0[wk + i];
            const int32_t t0 = (bias ? bias[o] : 0) - p->x_zero * s0;
            const int32_t t1 = (bias ? bias[o + two] : 0) - p->x_zero * s1;
            const tfl_rq1 rq[2] = {tfl_rq_terms(p->mult[o], p->shift[o]),
                                   tfl_rq_terms(p->mult[o + two], p->shift[o + two])};
            const int32_t yz = p->y_zero, lo = p->y_min, hi = p->y_max;
            /* the next position's column and row (batches' rows one after another), and where it is in x, stepped */
            int32_t ox = 0, row = 0;
            ptrdiff_t xat = 0;
            const ptrdiff_t xstep = (ptrdiff_t)p->sw * c;
            for (int32_t q = 0; q < np; q += 2) {
                /* positions q and q + 1 in y's order (across a row's end too), where they are in x */
                ptrdiff_t at[2];
                for (int32_t r = 0; r < 2; ++r) {
                    at[r] = xat, xat += xstep;
                    if (++ox == ow) {
                        const int32_t b = ++row / p->oh, oy = row - b * p->oh;
                        ox = 0, xat = ((ptrdiff_t)b * p->h + (ptrdiff_t)oy * p->sh) * p->w * c;
                    }
                }
                const int32_t pair = q + 1 < np; /* a last odd position: itself twice, the second not stored */
                int32_t sums[4] = {t0, t1, t0, t1};
                tfl_dot2x2(x + at[0], pair ? at[1] - at[0] : 0, w0, wk, c, sums);
                if (e == NULL && two && pair) { /* the usual block: its 4 outputs straight */
                    int8_t *const yp = y + (ptrdiff_t)q * oc + o;
                    yp[0] = clamp8(tfl_rq_apply(sums[0], &rq[0]) + yz, lo, hi);
                    yp[1] = clamp8(tfl_rq_apply(sums[1], &rq[1]) + yz, lo, hi);
                    yp[oc] = clamp8(tfl_rq_apply(sums[2], &rq[0]) + yz, lo, hi);
                    yp[oc + 1] = clamp8(tfl_rq_apply(sums[3], &rq[1]) + yz, lo, hi);
                    continue;
                }
                for (int32_t k = 0; k < 4; ++k) {
                    if (((k & 1) && !two) || ((k >> 1) && !pair)) continue;
                    const int8_t v8 = clamp8(tfl_rq_apply(sums[k], &rq[k & 1]) + yz, lo, hi);
                    const int64_t ya = (int64_t)(q + (k >> 1)) * oc + o + (k & 1);
                    if (e != NULL)
                        tfl_residual_run(e, &v8, ya, 1, y);
                    else
                        y[ya] = v8;
                }
            }
        }
        return;
    }
#endif
    /* the plain loop: each position's window clipped to the image once (the taps inside are a block of rows and
     * columns; at column dilation 1 a row's taps are one run of bytes in x and in w), then each output channel's
     * runs by pointers (issue 67: 12.6 instructions a MAC on KWS at -Os when every tap tested its row and column) */
    const int32_t c = p->c, kw = p->kw, xz = p->x_zero, kk = p->kh * kw * c;
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
                int32_t ky0 = 0, ky1 = p->kh, kx0 = 0, kx1 = kw;
                tfl_taps_inside(iy0, p->dh, p->h, &ky0, &ky1);
                tfl_taps_inside(ix0, p->dw, p->w, &kx0, &kx1);
                /* runs of `seg` bytes, `segs` a kernel row, `xs` bytes apart in x (c apart in w) */
                const int32_t seg = p->dw == 1 ? (kx1 - kx0) * c : c, segs = p->dw == 1 ? 1 : kx1 - kx0;
                const int32_t xs = p->dw * c;
                const int64_t at0 = (((int64_t)b * p->oh + oy) * p->ow + ox) * p->oc;
                /* 4 output channels at a time, each input byte read once for their 4 weights (kk apart in w; a
                 * last group's lanes past the channels read the first's row again, not stored): about 3
                 * instructions a MAC instead of 6 (issue 67: the portable level's convs) */
                /* the window's first tap in x, and the steps from a window row to the next in x and in w */
                const int8_t *const xw = x + (((ptrdiff_t)b * p->h + iy0 + ky0 * p->dh) * p->w + ix0 + kx0 * p->dw) * c;
                const ptrdiff_t xrow = (ptrdiff_t)p->dh * p->w * c, wrow = (ptrdiff_t)kw * c;
                for (int32_t o = 0; o < p->oc; o += 4) {
                    const int32_t n = p->oc - o < 4 ? p->oc - o : 4;
                    const ptrdiff_t k1 = n > 1 ? kk : 0, k2 = n > 2 ? 2 * (ptrdiff_t)kk : 0;
                    const ptrdiff_t k3 = n > 3 ? 3 * (ptrdiff_t)kk : 0;
                    const int8_t *xq = xw, *wq = w + (ptrdiff_t)o * kk + ((ptrdiff_t)ky0 * kw + kx0) * c;
#if TFL_PMVE /* the dot products by Helium (AOTC_TFL_PORTABLE_MVE: the M55's portable-mve levels) */
                    int32_t acc4[4] = {0, 0, 0, 0};
                    for (int32_t i = ky0; i < ky1; ++i, xq += xrow, wq += wrow) {
                        const int8_t *xr = xq, *wr = wq;
                        for (int32_t s = 0; s < segs; ++s, xr += xs, wr += c)
                            tfl_pmve_dot4(xr, wr, k1, k2, k3, seg, xz, acc4);
                    }
#else
                    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
                    for (int32_t i = ky0; i < ky1; ++i, xq += xrow, wq += wrow) {
                        const int8_t *xr = xq, *wr = wq;
                        for (int32_t s = 0; s < segs; ++s, xr += xs, wr += c) {
                            const int8_t *xp = xr, *wp = wr, *const xe = xr + seg;
                            for (; xp < xe; ++wp) {
                                const int32_t v = *xp++ - xz;
                                a0 += v * wp[0], a1 += v * wp[k1], a2 += v * wp[k2], a3 += v * wp[k3];
                            }
                        }
                    }
                    const int32_t acc4[4] = {a0, a1, a2, a3};
#endif
#if TFL_PMVE_RQ
                    if (n == 4) {
                        const int32x4_t v = vld1q_s32(acc4);
                        const int32x4_t r = tfl_pmve_requant4(bias ? vaddq_s32(v, vld1q_s32(bias + o)) : v, p->mult + o,
                                                              p->shift + o, p->y_zero, p->y_min, p->y_max);
                        if (AOTC_TFL_CONV_RESIDUAL && e != NULL) /* (none compiled where the model fuses no ADD) */
                            tfl_pmve_add4(e, r, at0 + o, y);
                        else
                            vstrbq_s32(y + at0 + o, r);
                        continue;
                    }
#endif
                    for (int32_t j = 0; j < n; ++j) {
                        const int32_t oc = o + j, acc = acc4[j] + (bias ? bias[oc] : 0);
#if AOTC_TFL_PORTABLE_FAST || (TFL_PMVE && (AOTC_TFL_PORTABLE_MVE_DW || !AOTC_TFL_CONV_RESIDUAL))
                        /* (requant_double inlined, its terms apart: the same integers; at the portable-mve-conv level
                         * called where the model fuses an ADD, whose entry point has the loop too: 108 B less on IC
                         * ResNet-8, and nothing less elsewhere, KWS DS-CNN's 34,544 B either way, for 1.05x) */
                        const tfl_rq1 r = tfl_rq_terms(p->mult[oc], p->shift[oc]);
                        const int32_t v = tfl_rq_apply(acc, &r) + p->y_zero;
#else
                        const int32_t v = requant_double(acc, p->mult[oc], p->shift[oc]) + p->y_zero;
#endif
                        if (e != NULL) {
                            const int8_t v8 = clamp8(v, p->y_min, p->y_max);
                            tfl_residual_run(e, &v8, at0 + oc, 1, y);
                        } else {
                            y[at0 + oc] = clamp8(v, p->y_min, p->y_max);
                        }
                    }
                }
            }
}
#endif

static TFL_CONV_S8_INLINE void tfl_conv_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                           const int32_t *bias,
                        int8_t *y, uint32_t *scratch, const tfl_residual *e) {
#if AOTC_TFL_MVE && AOTC_TFL_MVE_CONV
    if (tfl_conv_s8_mve(p, x, w, bias, y, e, scratch)) return;
#endif
#if AOTC_QUANT_DSP
    if (tfl_conv_s8_dsp(p, x, w, bias, y, scratch, e)) return;
#endif
#if TFL_CONV_COMPACT
#if AOTC_TFL_CONV_2X2
    if (tfl_conv_s8_compact(p, x, w, bias, y, scratch, e)) return; /* a --flash-budget level's (issue 67) */
#else
    if (tfl_conv_s8_small(p, x, w, bias, y, scratch, e)) return; /* (its smaller forms) */
#endif
#endif
    (void)scratch;
#if AOTC_QUANT_DSP /* its smallest form where it is a DSP path's fallback (the portable kernels: the other) */
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox)
                for (int32_t oc = 0; oc < p->oc; ++oc) {
                    int32_t acc = 0;
                    for (int32_t i = 0; i < p->kh; ++i) {
                        int32_t iy = oy * p->sh - p->pad_top + i * p->dh;
                        if (iy < 0 || iy >= p->h) continue;
                        for (int32_t j = 0; j < p->kw; ++j) {
                            int32_t ix = ox * p->sw - p->pad_left + j * p->dw;
                            if (ix < 0 || ix >= p->w) continue;
                            const int8_t *xp = x + (((int64_t)b * p->h + iy) * p->w + ix) * p->c;
                            const int8_t *wp = w + (((int64_t)oc * p->kh + i) * p->kw + j) * p->c;
                            for (int32_t c = 0; c < p->c; ++c) acc += (xp[c] - p->x_zero) * wp[c];
                        }
                    }
                    if (bias) acc += bias[oc];
                    int32_t v = requant_double(acc, p->mult[oc], p->shift[oc]) + p->y_zero;
                    const int64_t at = (((int64_t)b * p->oh + oy) * p->ow + ox) * p->oc + oc;
                    if (e != NULL) {
                        const int8_t v8 = clamp8(v, p->y_min, p->y_max);
                        tfl_residual_run(e, &v8, at, 1, y);
                    } else {
                        y[at] = clamp8(v, p->y_min, p->y_max);
                    }
                }
#elif defined(AOTC_NO_INTRINSICS) /* the portable kernels (a --flash-budget level's, issue 67) */
    tfl_conv_s8_portable(p, x, w, bias, y, e);
#else
    /* the plain loop: each position's window clipped to the image once (the taps inside are a block of rows and
     * columns; at column dilation 1 a row's taps are one run of bytes in x and in w), then each output channel's
     * runs by pointers (issue 67: 12.6 instructions a MAC on KWS at -Os when every tap tested its row and column) */
    const int32_t c = p->c, kw = p->kw, xz = p->x_zero, kk = p->kh * kw * c;
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
                int32_t ky0 = 0, ky1 = p->kh, kx0 = 0, kx1 = kw;
                tfl_taps_inside(iy0, p->dh, p->h, &ky0, &ky1);
                tfl_taps_inside(ix0, p->dw, p->w, &kx0, &kx1);
                /* runs of `seg` bytes, `segs` a kernel row, `xs` bytes apart in x (c apart in w) */
                const int32_t seg = p->dw == 1 ? (kx1 - kx0) * c : c, segs = p->dw == 1 ? 1 : kx1 - kx0;
                const int32_t xs = p->dw * c;
                const int64_t at0 = (((int64_t)b * p->oh + oy) * p->ow + ox) * p->oc;
                for (int32_t oc = 0; oc < p->oc; ++oc) {
                    int32_t acc = 0;
                    for (int32_t i = ky0; i < ky1; ++i) {
                        const int8_t *xr = x + (((ptrdiff_t)b * p->h + iy0 + i * p->dh) * p->w + ix0 + kx0 * p->dw) * c;
                        const int8_t *wr = w + (ptrdiff_t)oc * kk + ((ptrdiff_t)i * kw + kx0) * c;
                        for (int32_t s = 0; s < segs; ++s, xr += xs, wr += c) {
                            const int8_t *xp = xr, *wp = wr;
                            for (int32_t q = 0; q < seg; ++q) acc += (*xp++ - xz) * *wp++;
                        }
                    }
                    if (bias) acc += bias[oc];
                    int32_t v = requant_double(acc, p->mult[oc], p->shift[oc]) + p->y_zero;
                    if (e != NULL) {
                        const int8_t v8 = clamp8(v, p->y_min, p->y_max);
                        tfl_residual_run(e, &v8, at0 + oc, 1, y);
                    } else {
                        y[at0 + oc] = clamp8(v, p->y_min, p->y_max);
                    }
                }
            }
#endif
}

void aotc_tfl_conv_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                      int8_t *y, uint32_t *scratch) {
    tfl_conv_s8(p, x, w, bias, y, scratch, NULL);
}

#if AOTC_QUANT_DSP && !AOTC_TFL_MVE
/* y[k] = the fused ADD of conv output v[k] and residual r[k], k < n: t1[v] + t2[r] (t1, t2 at their byte 0, their
 * terms shifted left as tfl_dsp_requant_run's SMMLAR path shifts the sum), requantised there (mult, ra, right: its
 * terms), clamped below at lo; with floor (the zero point and lo -128) without TFLite's sign term, as
 * aotc_dsp_mac4x2_rq3 (a negative sum lands at or below -128 either way). One loop, two elements a turn, not the
 * sums into a buffer and tfl_dsp_requant_run over it: 31 est. cycles an element on IC02's fused ADDs, now ~11. */
static inline __attribute__((always_inline)) void tfl_dsp_residual_fast(const int32_t *t1, const int32_t *t2,
                                                                        const int8_t *v, const int8_t *r, int32_t n,
                                                                        int32_t mult, int32_t ra, int32_t right,
                                                                        int32_t lo, int floor, int8_t *y) {
    int32_t k;
    for (k = 0; k + 1 < n; k += 2) {
        const int32_t v0 = v[k], v1 = v[k + 1], r0 = r[k], r1 = r[k + 1];
        const int32_t a0 = t1[v0] + t2[r0], a1 = t1[v1] + t2[r1];
        int32_t q0, q1;
        if (floor) {
            q0 = __ssat(tfl_dsp_smmlar(a0, mult, ra) >> right, 8), q1 = __ssat(tfl_dsp_smmlar(a1, mult, ra) >> right, 8);
        } else {
            q0 = __ssat((tfl_dsp_smmlar(a0, mult, ra) + (a0 >> 31)) >> right, 8);
            q1 = __ssat((tfl_dsp_smmlar(a1, mult, ra) + (a1 >> 31)) >> right, 8);
            q0 = q0 < lo ? lo : q0, q1 = q1 < lo ? lo : q1;
        }
        y[k] = (int8_t)q0, y[k + 1] = (int8_t)q1;
    }
    if (k < n) {
        const int32_t a0 = t1[v[k]] + t2[r[k]];
        int32_t q0 = __ssat((tfl_dsp_smmlar(a0, mult, ra) + (floor ? 0 : a0 >> 31)) >> right, 8);
        y[k] = (int8_t)(q0 < lo ? lo : q0);
    }
}
#endif

#if AOTC_TFL_MVE && TFL_MVE_ALL_REGS
/* Helium's form of tfl_dsp_residual_fast: the ADD's two rescalings by table (each input byte's requant_double, as the
 * DSP path's tables, but indexed by the byte unsigned and not shifted: the requantisation's left shift is 0 where it
 * applies), 4 elements a gather each, their sum requantised as tfl_dsp_requant_run's SMMLAR path does, VQRDMULH of
 * the sum being SMMLAR of the doubled sum (the tables' sum is below 2^30, the multiplier positive: no saturation):
 * y = SAT8((ra + VQRDMULH(a, mult) [+ (a >> 31)]) >> right) [max lo], the sign term and lo where floor is 0 (e->fast
 * 1). A turn of 4 is 11 or 14 instructions, 22 or 28 est. cycles on the M55's model (the gathers 4 each), where
 * add_one's three requantisations in vectors took 26 instructions, about 67 (ResNet-8's fused ADDs, 28,672
 * elements: 482,944 est. cycles). The tables cost about 2,700 cycles a call (vectors of 4 bytes' rescalings). */
static inline __attribute__((always_inline)) void tfl_mve_residual_fast(const tfl_residual *e, const int8_t *v,
                                                                        const int8_t *res, int32_t n, int8_t *y) {
    const int32_t mult = e->fm, ra = e->fra, nr = e->fnr;
    const int32_t *tc = e->t_conv, *tr = e->t_res;
    int32x4_t xv, xr, s, t;
    if (e->fast == 2) {
        __asm__ volatile("dlstp.32 lr, %[n]\n"
                         "1:\n\t"
                         "vldrb.u32 %q[xv], [%[v]], #4\n\t"
                         "vldrb.u32 %q[xr], [%[r]], #4\n\t"
                         "vldrw.u32 %q[s], [%[tc], %q[xv], uxtw #2]\n\t"
                         "vldrw.u32 %q[t], [%[tr], %q[xr], uxtw #2]\n\t"
                         "vadd.i32 %q[s], %q[s], %q[t]\n\t"
                         "vqrdmulh.s32 %q[s], %q[s], %[m]\n\t"
                         "vadd.i32 %q[s], %q[s], %[ra]\n\t"
                         "vshl.s32 %q[s], %[nr]\n\t"
                         "vqmovnb.s32 %q[s], %q[s]\n\t"
                         "vqmovnb.s16 %q[s], %q[s]\n\t"
                         "vstrb.32 %q[s], [%[y]], #4\n\t"
                         "letp lr, 1b"
                         : [xv] "=&w"(xv), [xr] "=&w"(xr), [s] "=&w"(s), [t] "=&w"(t), [v] "+l"(v), [r] "+l"(res),
                           [y] "+l"(y)
                         : [n] "r"(n), [tc] "r"(tc), [tr] "r"(tr), [m] "r"(mult), [ra] "r"(ra), [nr] "r"(nr)
                         : "lr", "memory");
    } else {
        const int32x4_t lo = e->q[9];
        __asm__ volatile("dlstp.32 lr, %[n]\n"
                         "1:\n\t"
                         "vldrb.u32 %q[xv], [%[v]], #4\n\t"
                         "vldrb.u32 %q[xr], [%[r]], #4\n\t"
                         "vldrw.u32 %q[s], [%[tc], %q[xv], uxtw #2]\n\t"
                         "vldrw.u32 %q[t], [%[tr], %q[xr], uxtw #2]\n\t"
                         "vadd.i32 %q[s], %q[s], %q[t]\n\t"
                         "vshr.s32 %q[t], %q[s], #31\n\t"
                         "vqrdmulh.s32 %q[s], %q[s], %[m]\n\t"
                         "vadd.i32 %q[s], %q[s], %[ra]\n\t"
                         "vadd.i32 %q[s], %q[s], %q[t]\n\t"
                         "vshl.s32 %q[s], %[nr]\n\t"
                         "vmax.s32 %q[s], %q[s], %q[lo]\n\t"
                         "vqmovnb.s32 %q[s], %q[s]\n\t"
                         "vqmovnb.s16 %q[s], %q[s]\n\t"
                         "vstrb.32 %q[s], [%[y]], #4\n\t"
                         "letp lr, 1b"
                         : [xv] "=&w"(xv), [xr] "=&w"(xr), [s] "=&w"(s), [t] "=&w"(t), [v] "+l"(v), [r] "+l"(res),
                           [y] "+l"(y)
                         : [n] "r"(n), [tc] "r"(tc), [tr] "r"(tr), [m] "r"(mult), [ra] "r"(ra), [nr] "r"(nr),
                           [lo] "w"(lo)
                         : "lr", "memory");
    }
}

/* tfl_mve_residual_fast's tables in t (AOTC_TFL_RESIDUAL_TABLES words: the scratch's room for them), where its
 * requantisation holds (tfl_dsp_requant_run's SMMLAR path with right > 0, no left shift, the top clamp 127, the sum
 * of the tables below 2^30): t[b] = requant_double(((int8_t)b - zero) 2^20, m, s) of input 1, t[256 + b] input 2's
 * (negated for a SUB), by tfl_mve_rq on vectors of 4 bytes (bit for bit requant_double's); e->fast 2 at the zero
 * point and lower clamp -128, else 1. Otherwise nothing (add_one's vectors then). */
static void tfl_mve_residual_tables(tfl_residual *e, int32_t *t) {
    const aotc_tfl_binary_params *a = &e->r->add;
    const int32_t right = -a->shift;
    uint32_t b1 = 0, b2 = 0;
    int32_t b;
    if (a->mult == INT32_MIN || a->mult < 0 || right <= 0 || right > 22 || a->y_max != 127 || a->y_min < -128)
        return;
    for (b = 0; b < 256; b += 4) {
        const int32x4_t x = vshrq_n_s32(vshlq_n_s32(vreinterpretq_s32_u32(vidupq_n_u32((uint32_t)b, 1)), 24), 24);
        const int32x4_t t1 = tfl_mve_rq(vshlq_n_s32(vsubq_n_s32(x, a->x1_zero), 20), e->q[0], e->q[1], e->q[2]);
        int32x4_t t2 = tfl_mve_rq(vshlq_n_s32(vsubq_n_s32(x, a->x2_zero), 20), e->q[3], e->q[4], e->q[5]);
        if (a->subtract) t2 = vnegq_s32(t2);
        vst1q_s32(t + b, t1), vst1q_s32(t + 256 + b, t2);
        b1 = vmaxavq_s32(b1, t1), b2 = vmaxavq_s32(b2, t2);
    }
    if ((uint64_t)b1 + b2 >= ((uint64_t)1 << 30)) return;
    e->t_conv = e->r->conv_x1 ? t : t + 256, e->t_res = e->r->conv_x1 ? t + 256 : t;
    e->fast = a->y_zero == -128 && a->y_min == -128 ? 2 : 1;
    e->fm = a->mult, e->fra = (1 << (right - 1)) + a->y_zero * (1 << right), e->fnr = -right;
}
#endif

#if AOTC_TFL_MVE && TFL_MVE_ALL_REGS
/* With the tables (tfl_mve_residual_tables), tfl_mve_residual_fast; else add_one's vectors, apart (noinline): their
 * registers q4 .. q7 made every call save and restore d8 .. d15 (34 est. cycles a call of the tables' loop, ResNet-8's
 * fused ADDs a position a call) */
__attribute__((noinline)) static void tfl_residual_vec(const tfl_residual *e, const int8_t *v, int64_t at, int32_t n,
                                                       int8_t *y);
static void tfl_residual_run(const tfl_residual *e, const int8_t *v, int64_t at, int32_t n, int8_t *y) {
    if (e->fast && n > 0) {
        tfl_mve_residual_fast(e, v, e->res + at, n, y + at);
        return;
    }
    tfl_residual_vec(e, v, at, n, y);
}
#define TFL_RESIDUAL_BODY tfl_residual_vec
#else
#define TFL_RESIDUAL_BODY tfl_residual_run
#endif
static void TFL_RESIDUAL_BODY(const tfl_residual *e, const int8_t *v, int64_t at, int32_t n, int8_t *y) {
    const aotc_tfl_binary_params *a = &e->r->add;
    const int8_t *res = e->res + at;
    int32_t k;
    y += at;
#if AOTC_TFL_MVE
    { /* add_one's three requantisations, 4 elements a vector (tfl_mve_rq: bit for bit), the last ones predicated */
        const int8_t *v1 = e->r->conv_x1 ? v : res, *v2 = e->r->conv_x1 ? res : v;
        const int32_t z1 = a->x1_zero, z2 = a->x2_zero, yz = a->y_zero;
        const int32x4_t *q = e->q;
#if TFL_MVE_ALL_REGS /* (its 12 registers: not where -O0 keeps a frame pointer; the loop below then) */
        if (e->usual && n > 0) { /* no shift left: a tail-predicated loop of 4 elements a turn, multipliers by
                                   * scalar, TFLite's rounding by VAND, VSHR, VQADD and VRSHL, the two inputs' sums
                                   * by a VMLA of +-1 */
            const int32_t m1 = a->m1, m2 = a->m2, mo = a->mult, sg = a->subtract ? -1 : 1;
            const int8_t *p1 = v1, *p2 = v2;
            int8_t *py = y;
            int32x4_t x1, x2, t;
            __asm__ volatile("dlstp.32 lr, %[n]\n"
                             "1:\n\t"
                             "vldrb.s32 %q[x1], [%[p1]], #4\n\t"
                             "vldrb.s32 %q[x2], [%[p2]], #4\n\t"
                             "vsub.i32 %q[x1], %q[x1], %[z1]\n\t"
                             "vsub.i32 %q[x2], %q[x2], %[z2]\n\t"
                             "vshl.s32 %q[x1], %q[x1], #20\n\t"
                             "vshl.s32 %q[x2], %q[x2], #20\n\t"
                             "vqrdmulh.s32 %q[x1], %q[x1], %[m1]\n\t"
                             "vqrdmulh.s32 %q[x2], %q[x2], %[m2]\n\t"
                             "vand %q[t], %q[x1], %q[r1]\n\t"
                             "vshr.s32 %q[t], %q[t], #31\n\t"
                             "vqadd.s32 %q[x1], %q[x1], %q[t]\n\t"
                             "vand %q[t], %q[x2], %q[r2]\n\t"
                             "vshr.s32 %q[t], %q[t], #31\n\t"
                             "vqadd.s32 %q[x2], %q[x2], %q[t]\n\t"
                             "vrshl.s32 %q[x1], %q[x1], %q[r1]\n\t"
                             "vrshl.s32 %q[x2], %q[x2], %q[r2]\n\t"
                             "vmla.s32 %q[x1], %q[x2], %[sg]\n\t"
                             "vqrdmulh.s32 %q[x1], %q[x1], %[mo]\n\t"
                             "vand %q[t], %q[x1], %q[ro]\n\t"
                             "vshr.s32 %q[t], %q[t], #31\n\t"
                             "vqadd.s32 %q[x1], %q[x1], %q[t]\n\t"
                             "vrshl.s32 %q[x1], %q[x1], %q[ro]\n\t"
                             "vadd.i32 %q[x1], %q[x1], %[yz]\n\t"
                             "vmax.s32 %q[x1], %q[x1], %q[lo]\n\t"
                             "vmin.s32 %q[x1], %q[x1], %q[hi]\n\t"
                             "vstrb.32 %q[x1], [%[py]], #4\n\t"
                             "letp lr, 1b"
                             : [x1] "=&w"(x1), [x2] "=&w"(x2), [t] "=&w"(t), [p1] "+l"(p1), [p2] "+l"(p2),
                               [py] "+l"(py)
                             : [n] "r"(n), [z1] "r"(z1), [z2] "r"(z2), [m1] "r"(m1), [m2] "r"(m2), [mo] "r"(mo),
                               [sg] "r"(sg), [yz] "r"(yz), [r1] "w"(q[2]), [r2] "w"(q[5]), [ro] "w"(q[8]),
                               [lo] "w"(q[9]), [hi] "w"(q[10])
                             : "lr", "memory");
            return;
        }
#endif
        if (a->subtract) {
            for (k = 0; k < n; k += 4) {
                const mve_pred16_t pr = vctp32q((uint32_t)(n - k));
                const int32x4_t x1 = vshlq_n_s32(vsubq_n_s32(vldrbq_z_s32(v1 + k, pr), z1), 20);
                const int32x4_t x2 = vshlq_n_s32(vsubq_n_s32(vldrbq_z_s32(v2 + k, pr), z2), 20);
                const int32x4_t d = vsubq_s32(tfl_mve_rq(x1, q[0], q[1], q[2]), tfl_mve_rq(x2, q[3], q[4], q[5]));
                const int32x4_t s = vaddq_n_s32(tfl_mve_rq(d, q[6], q[7], q[8]), yz);
                vstrbq_p_s32(y + k, vminq_s32(vmaxq_s32(s, q[9]), q[10]), pr);
            }
            return;
        }
        for (k = 0; k < n; k += 4) {
            const mve_pred16_t pr = vctp32q((uint32_t)(n - k));
            const int32x4_t x1 = vshlq_n_s32(vsubq_n_s32(vldrbq_z_s32(v1 + k, pr), z1), 20);
            const int32x4_t x2 = vshlq_n_s32(vsubq_n_s32(vldrbq_z_s32(v2 + k, pr), z2), 20);
            const int32x4_t d = vaddq_s32(tfl_mve_rq(x1, q[0], q[1], q[2]), tfl_mve_rq(x2, q[3], q[4], q[5]));
            const int32x4_t s = vaddq_n_s32(tfl_mve_rq(d, q[6], q[7], q[8]), yz);
            vstrbq_p_s32(y + k, vminq_s32(vmaxq_s32(s, q[9]), q[10]), pr);
        }
        return;
    }
#endif
    if (e->t_conv == NULL) { /* add_one's three requantisations, as the ADD's plain loop */
        for (k = 0; k < n; ++k) {
            const int32_t s = e->r->conv_x1 ? add_one(a, v[k], res[k]) : add_one(a, res[k], v[k]);
            y[k] = clamp8(s, a->y_min, a->y_max);
        }
        return;
    }
#if AOTC_QUANT_DSP && !AOTC_TFL_MVE
    if (e->fast) { /* the tables' shifted terms summed and requantised in one loop */
        const int32_t right = -a->shift, ra = (1 << (right - 1)) + a->y_zero * (1 << right);
        if (e->fast == 2) tfl_dsp_residual_fast(e->t_conv + 128, e->t_res + 128, v, res, n, a->mult, ra, right, -128, 1, y);
        else tfl_dsp_residual_fast(e->t_conv + 128, e->t_res + 128, v, res, n, a->mult, ra, right, a->y_min, 0, y);
        return;
    }
#endif
#if AOTC_QUANT_DSP
    { /* the tables and one requantisation, as tfl_add_s8_dsp */
        int32_t sum[64], k0;
        for (k0 = 0; k0 < n; k0 += 64) {
            const int32_t m = n - k0 < 64 ? n - k0 : 64;
            for (k = 0; k < m; ++k) sum[k] = e->t_conv[v[k0 + k] + 128] + e->t_res[res[k0 + k] + 128];
            tfl_dsp_requant_run(sum, 1, m, 0, a->mult, a->shift, a->y_zero, a->y_min, a->y_max, y + k0, 1, e->bound);
        }
    }
#endif
}

void aotc_tfl_conv_add_s8(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, const int8_t *x,
                          const int8_t *w, const int32_t *bias, const int8_t *res, int8_t *y, uint32_t *scratch) {
#if AOTC_TFL_MVE
    tfl_residual e = {.r = r, .res = res}; /* (the rest 0, NULL) */
    {
        const aotc_tfl_binary_params *a = &r->add;
        const int32_t sh[3] = {a->s1, a->s2, a->shift}, m[3] = {a->m1, a->m2, a->mult};
        int32_t i;
        for (i = 0; i < 3; ++i) {
            e.q[3 * i] = vdupq_n_s32(m[i]);
            e.q[3 * i + 1] = vdupq_n_s32(sh[i] > 0 ? sh[i] : 0), e.q[3 * i + 2] = vdupq_n_s32(sh[i] < 0 ? sh[i] : 0);
        }
        e.q[9] = vdupq_n_s32(a->y_min), e.q[10] = vdupq_n_s32(a->y_max);
        e.usual = a->s1 <= 0 && a->s2 <= 0 && a->shift <= 0;
    }
    if (scratch != NULL) { /* the ADD's tables where tfl_mve_residual_fast applies (else add_one's vectors) */
#if TFL_MVE_ALL_REGS
        tfl_mve_residual_tables(&e, (int32_t *)scratch);
#endif
        scratch += AOTC_TFL_RESIDUAL_TABLES;
        if (!AOTC_TFL_MVE_CONV || tfl_mve_conv_words(p, 1) == 0) { /* the DSP path's tile */
            int32_t np;
            e.tile = (int8_t *)(scratch + tfl_dsp_conv_words(p, &np));
        }
    }
#else
    tfl_residual e = {r, res, NULL, NULL, 0, NULL, 0};
#endif
#if AOTC_QUANT_DSP && !AOTC_TFL_MVE
    if (scratch != NULL) { /* the ADD's rescaling of each input byte, as tfl_add_s8_dsp's tables */
        const aotc_tfl_binary_params *a = &r->add;
        int32_t *t1 = (int32_t *)scratch, *t2 = t1 + 256, v, np = 0;
        int64_t m1 = 0, m2 = 0;
        for (v = 0; v < 256; ++v) {
            t1[v] = requant_double((v - 128 - a->x1_zero) * (1 << 20), a->m1, a->s1);
            t2[v] = requant_double((v - 128 - a->x2_zero) * (1 << 20), a->m2, a->s2);
            m1 = tfl_dsp_abs64(t1[v]) > m1 ? tfl_dsp_abs64(t1[v]) : m1;
            m2 = tfl_dsp_abs64(t2[v]) > m2 ? tfl_dsp_abs64(t2[v]) : m2;
        }
        e.t_conv = r->conv_x1 ? t1 : t2, e.t_res = r->conv_x1 ? t2 : t1, e.bound = m1 + m2;
        { /* tfl_dsp_requant_run's SMMLAR path with right > 0 and the top clamp 127 (its conditions, once a call):
           * each table's terms shifted left there (so their sum is, without overflow: both below the bound) */
            const int32_t left = a->shift > 0 ? a->shift : 0, right = a->shift > 0 ? 0 : -a->shift;
            if (a->mult != INT32_MIN && left < 30 && e.bound < ((int64_t)1 << (30 - left)) && right > 0 &&
                right <= 22 && a->y_max == 127 && a->y_min >= -128) {
                for (v = 0; v < 256; ++v) {
                    t1[v] = (int32_t)((uint32_t)t1[v] << (left + 1));
                    t2[v] = (int32_t)((uint32_t)t2[v] << (left + 1));
                }
                e.fast = a->y_zero == -128 && a->y_min == -128 ? 2 : 1;
            }
        }
        scratch += AOTC_TFL_RESIDUAL_TABLES;
        e.tile = (int8_t *)(scratch + tfl_dsp_conv_words(p, &np));
    }
#endif
    tfl_conv_s8(p, x, w, bias, y, scratch, &e);
}

void aotc_tfl_conv_s16(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                       int16_t *y) {
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox)
                for (int32_t oc = 0; oc < p->oc; ++oc) {
                    int64_t acc = 0;
                    for (int32_t i = 0; i < p->kh; ++i) {
                        int32_t iy = oy * p->sh - p->pad_top + i * p->dh;
                        if (iy < 0 || iy >= p->h) continue;
                        for (int32_t j = 0; j < p->kw; ++j) {
                            int32_t ix = ox * p->sw - p->pad_left + j * p->dw;
                            if (ix < 0 || ix >= p->w) continue;
                            const int16_t *xp = x + (((int64_t)b * p->h + iy) * p->w + ix) * p->c;
                            const int8_t *wp = w + (((int64_t)oc * p->kh + i) * p->kw + j) * p->c;
                            for (int32_t c = 0; c < p->c; ++c) acc += (int32_t)xp[c] * wp[c];
                        }
                    }
                    if (bias) acc += bias[oc];
                    y[(((int64_t)b * p->oh + oy) * p->ow + ox) * p->oc + oc] =
                        clamp16(requant_reduced(acc, p->mult[oc], p->shift[oc]), p->y_min, p->y_max);
                }
}
