/* Reference kernels of the tflite_int8 family (declared in kernels_ref.h): LiteRT's reference kernels
 * (reference_ops / reference_integer_ops, BUILTIN_REF) as plain loops over each output element, on
 * TFLite's fixed-point primitives written from their definitions:
 *   SaturatingRoundingDoublingHighMul  (a b + nudge) / 2^31 with C's truncating division,
 *   RoundingDivideByPOT                 |x| / 2^e rounded half up, the sign put back (half away from 0),
 *   MultiplyByQuantizedMultiplier       double rounding (conv, depthwise, pools, ADD, MUL, ...), single
 *                                       rounding (FULLY_CONNECTED), the int64 one with the multiplier
 *                                       rounded to 16 bits (16x8 conv, depthwise, transpose conv),
 * gemmlowp's FixedPoint<int32 or int16, integer bits> (exp on negative values, 1 / (1 + x), logistic,
 * tanh) for any width, its constants computed from libm's exp as gemmlowp's checked constants are
 * (round(v 2^31), then RoundingDivideByPOT to 16 bits). Every DSP and Helium path of tflite_int8.c
 * is checked against these, bit for bit. */
#include "kernels_ref.h"

#include <math.h>
#include <string.h>

/* ---- integers of `bits` bits held in int64 ---------------------------------------------------------- */

static int64_t wrap_bits(int64_t v, int bits) { /* two's complement: v modulo 2^bits */
    const uint64_t m = (uint64_t)1 << bits, u = (uint64_t)v & (m - 1u);
    return u >= m / 2 ? (int64_t)u - (int64_t)(m / 2) - (int64_t)(m / 2) : (int64_t)u;
}

static int64_t sat_bits(int64_t v, int bits) {
    const int64_t hi = ((int64_t)1 << (bits - 1)) - 1;
    return v > hi ? hi : v < -hi - 1 ? -hi - 1 : v;
}

static int64_t clamp_ref(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* SaturatingRoundingDoublingHighMul for `bits`-bit a, b */
static int64_t srdhm(int64_t a, int64_t b, int bits) {
    const int64_t min = -((int64_t)1 << (bits - 1)), ab = a * b;
    const int64_t nudge = ab >= 0 ? (int64_t)1 << (bits - 2) : 1 - ((int64_t)1 << (bits - 2));
    if (a == min && b == min) return -min - 1;
    return (ab + nudge) / ((int64_t)1 << (bits - 1));
}

/* RoundingDivideByPOT: x / 2^e rounded to nearest, ties away from zero */
static int64_t rdbpot(int64_t x, int e) {
    const int64_t a = x < 0 ? -x : x, q = e > 0 ? (a + ((int64_t)1 << (e - 1))) >> e : a;
    return x < 0 ? -q : q;
}

/* MultiplyByQuantizedMultiplier, double rounding: x 2^max(s, 0) (in int32, as TFLite multiplies:
 * wrapping), its high product with m, then divided by 2^max(-s, 0) */
static int32_t mbqm_double(int64_t x, int32_t m, int32_t s) {
    const int64_t shifted = wrap_bits(x * ((int64_t)1 << (s > 0 ? s : 0)), 32);
    return (int32_t)rdbpot(srdhm(shifted, m, 32), s > 0 ? 0 : -s);
}

/* single rounding: round(x m / 2^(31 - s)), halves up, in 64 bits */
static int64_t mbqm_single(int64_t x, int32_t m, int32_t s) {
    return (x * m + ((int64_t)1 << (30 - s))) >> (31 - s);
}

/* the int64 one: m rounded to its top 16 bits (0x7FFF at most), then one rounding */
static int64_t mbqm_reduced(int64_t x, int32_t m, int32_t s) {
    const int64_t m16 = m < 0x7FFF0000 ? ((int64_t)m + (1 << 15)) >> 16 : 0x7FFF;
    return (x * m16 + ((int64_t)1 << (14 - s))) >> (15 - s);
}

/* ---- gemmlowp's fixed point, `bits` wide (16 or 32), `ib` integer bits: raw values in int64 ------------- */

/* a checked constant: round(v 2^31) for int32, then RoundingDivideByPOT by 16 for int16 */
static int64_t fx_constant(double v, int bits) {
    return rdbpot((int64_t)floor(v * 2147483648.0 + 0.5), 32 - bits);
}

static int64_t fx_shl_sat(int64_t x, int e, int bits) { return sat_bits(x * ((int64_t)1 << e), bits); }

/* exp(a) for a in [-1/4, 0), Q0.(bits - 1): its Taylor series around -1/8; the last add saturates in 16 bits */
static int64_t fx_exp_quarter(int64_t a, int bits) {
    const int64_t c = fx_constant(exp(-1.0 / 8.0), bits), third = fx_constant(1.0 / 3.0, bits);
    const int64_t x = wrap_bits(a + ((int64_t)1 << (bits - 4)), bits);
    const int64_t x2 = srdhm(x, x, bits), x3 = srdhm(x2, x, bits), x4 = srdhm(x2, x2, bits);
    const int64_t poly = rdbpot(wrap_bits(srdhm(wrap_bits(rdbpot(x4, 2) + x3, bits), third, bits) + x2, bits), 1);
    const int64_t sum = c + srdhm(c, wrap_bits(x + poly, bits), bits);
    return bits == 16 ? sat_bits(sum, bits) : wrap_bits(sum, bits);
}

/* exp(a) for a <= 0 with ib integer bits -> Q0.(bits - 1): exp of a mod 1/4 (less 1/4), times exp(-2^e)
 * for each bit e of the rest below 2^ib (e from -2 to 4); 0 below -32 (ib > 5); 1 at 0 */
static int64_t fx_exp_negative(int64_t a, int ib, int bits) {
    const int frac = bits - 1 - ib;
    const int64_t quarter = (int64_t)1 << (frac - 2);
    const int64_t amq = wrap_bits((a & (quarter - 1)) - quarter, bits), rest = wrap_bits(amq - a, bits);
    int64_t r = fx_exp_quarter(fx_shl_sat(amq, ib, bits), bits);
    int e;
    for (e = -2; e <= 4; ++e) {
        if (ib > e && (rest & ((int64_t)1 << (frac + e)))) r = srdhm(r, fx_constant(exp(-ldexp(1.0, e)), bits), bits);
    }
    if (ib > 5 && a < -((int64_t)32 << frac)) r = 0;
    return a == 0 ? ((int64_t)1 << (bits - 1)) - 1 : r;
}

/* Newton-Raphson on 1 / ((1 + a) / 2) for a in [0, 1] (Q0): x in Q2 */
static int64_t fx_newton(int64_t a, int bits) {
    const int64_t one0 = ((int64_t)1 << (bits - 1)) - 1, one2 = (int64_t)1 << (bits - 3), s = a + one0;
    const int64_t half = (s + (s >= 0 ? 1 : -1)) / 2; /* RoundingHalfSum(a, 1) */
    int64_t x = wrap_bits(fx_constant(48.0 / 17.0 / 4.0, bits) + srdhm(half, fx_constant(-32.0 / 17.0 / 4.0, bits), bits), bits);
    int i;
    for (i = 0; i < 3; ++i) {
        const int64_t e = wrap_bits(one2 - srdhm(half, x, bits), bits);
        x = wrap_bits(x + fx_shl_sat(srdhm(x, e, bits), 2, bits), bits);
    }
    return x;
}

static int64_t fx_one_over_one_plus_x(int64_t a, int bits) { return fx_shl_sat(fx_newton(a, bits), 1, bits); }

static int64_t fx_one_minus_x_over_one_plus_x(int64_t a, int bits) {
    return fx_shl_sat(wrap_bits(fx_newton(a, bits) - ((int64_t)1 << (bits - 3)), bits), 2, bits);
}

static int64_t fx_logistic(int64_t a, int ib, int bits) {
    const int64_t neg_abs = a > 0 ? wrap_bits(-a, bits) : a;
    const int64_t r = fx_one_over_one_plus_x(fx_exp_negative(neg_abs, ib, bits), bits);
    if (a == 0) return (int64_t)1 << (bits - 2);
    return a > 0 ? r : wrap_bits(((int64_t)1 << (bits - 1)) - 1 - r, bits);
}

static int64_t fx_tanh(int64_t a, int ib, int bits) {
    const int64_t n = a < 0 ? a : wrap_bits(-a, bits);
    const int64_t t = fx_one_minus_x_over_one_plus_x(fx_exp_negative(n, ib + 1, bits), bits);
    if (a == 0) return 0;
    return a < 0 ? wrap_bits(-t, bits) : t;
}

/* ---- CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV ---------------------------------------- */

/* the sum of output (b, oy, ox, oc)'s taps inside the input: (x - x_zero) w, int64 */
static int64_t conv_sum(const aotc_tfl_conv_params *p, const void *x, int wide, const int8_t *w, int depthwise,
                        int64_t b, int64_t oy, int64_t ox, int64_t oc) {
    int64_t acc = 0, i, j, c;
    for (i = 0; i < p->kh; ++i) {
        for (j = 0; j < p->kw; ++j) {
            const int64_t iy = oy * p->sh - p->pad_top + i * p->dh, ix = ox * p->sw - p->pad_left + j * p->dw;
            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
            for (c = 0; c < (depthwise ? 1 : p->c); ++c) {
                const int64_t ic = depthwise ? oc / p->depth_multiplier : c;
                const int64_t at = ((b * p->h + iy) * p->w + ix) * p->c + ic;
                const int64_t xv = wide ? ((const int16_t *)x)[at] : ((const int8_t *)x)[at];
                const int64_t wv = depthwise ? w[(i * p->kw + j) * p->oc + oc] : w[((oc * p->kh + i) * p->kw + j) * p->c + c];
                acc += (xv - p->x_zero) * wv;
            }
        }
    }
    return acc;
}

/* each output of a conv: its sum plus the bias, requantised (double: int8; reduced: int16) plus y_zero, clamped */
static void conv_ref(const aotc_tfl_conv_params *p, const void *x, int wide, const int8_t *w, const void *bias,
                     int depthwise, void *y) {
    int64_t b, oy, ox, oc;
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox)
                for (oc = 0; oc < p->oc; ++oc) {
                    const int64_t at = ((b * p->oh + oy) * p->ow + ox) * p->oc + oc;
                    int64_t acc = conv_sum(p, x, wide, w, depthwise, b, oy, ox, oc);
                    if (bias != NULL) acc += wide ? ((const int64_t *)bias)[oc] : ((const int32_t *)bias)[oc];
                    acc = wide ? mbqm_reduced(acc, p->mult[oc], p->shift[oc]) : mbqm_double(acc, p->mult[oc], p->shift[oc]);
                    acc = clamp_ref(acc + p->y_zero, p->y_min, p->y_max);
                    if (wide) ((int16_t *)y)[at] = (int16_t)acc;
                    else ((int8_t *)y)[at] = (int8_t)acc;
                }
}

void aotc_tfl_conv_s8_ref(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                          int8_t *y) {
    conv_ref(p, x, 0, w, bias, 0, y);
}

void aotc_tfl_depthwise_s8_ref(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                               int8_t *y) {
    conv_ref(p, x, 0, w, bias, 1, y);
}

void aotc_tfl_conv_s16_ref(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                           int16_t *y) {
    conv_ref(p, x, 1, w, bias, 0, y);
}

void aotc_tfl_depthwise_s16_ref(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w,
                                const int64_t *bias, int16_t *y) {
    conv_ref(p, x, 1, w, bias, 1, y);
}

/* FULLY_CONNECTED: w out x in (plain rows: il4 is the kernel's layout, not the reference's); single rounding */
static void fc_ref(const aotc_tfl_fc_params *p, const void *x, int wide, const int8_t *w, const void *bias, void *y) {
    int64_t r, o, k;
    for (r = 0; r < p->rows; ++r)
        for (o = 0; o < p->out; ++o) {
            int64_t acc = 0;
            for (k = 0; k < p->in; ++k) {
                const int64_t xv = wide ? ((const int16_t *)x)[r * p->in + k] : ((const int8_t *)x)[r * p->in + k];
                acc += (xv - p->x_zero) * w[o * p->in + k];
            }
            if (bias != NULL) acc += wide ? ((const int64_t *)bias)[o] : ((const int32_t *)bias)[o];
            acc = clamp_ref(mbqm_single(acc, p->mult[o], p->shift[o]) + p->y_zero, p->y_min, p->y_max);
            if (wide) ((int16_t *)y)[r * p->out + o] = (int16_t)acc;
            else ((int8_t *)y)[r * p->out + o] = (int8_t)acc;
        }
}

void aotc_tfl_fc_s8_ref(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y) {
    fc_ref(p, x, 0, w, bias, y);
}

void aotc_tfl_fc_s16_ref(const aotc_tfl_fc_params *p, const int16_t *x, const int8_t *w, const int64_t *bias,
                         int16_t *y) {
    fc_ref(p, x, 1, w, bias, y);
}

/* TRANSPOSE_CONV as TFLite's reference scatters it: input (iy, ix) through tap (i, j) lands on output
 * (iy sh - pad_top + i, ix sw - pad_left + j); each output sums what lands on it */
static void transpose_conv_ref(const aotc_tfl_conv_params *p, const void *x, int wide, const int8_t *w,
                               const void *bias, void *y) {
    int64_t b, oy, ox, oc, iy, ix, i, j, c;
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox)
                for (oc = 0; oc < p->oc; ++oc) {
                    const int64_t at = ((b * p->oh + oy) * p->ow + ox) * p->oc + oc;
                    int64_t acc = 0;
                    for (iy = 0; iy < p->h; ++iy)
                        for (ix = 0; ix < p->w; ++ix)
                            for (i = 0; i < p->kh; ++i)
                                for (j = 0; j < p->kw; ++j) {
                                    if (iy * p->sh - p->pad_top + i != oy || ix * p->sw - p->pad_left + j != ox) continue;
                                    for (c = 0; c < p->c; ++c) {
                                        const int64_t xa = ((b * p->h + iy) * p->w + ix) * p->c + c;
                                        const int64_t xv = wide ? ((const int16_t *)x)[xa] : ((const int8_t *)x)[xa];
                                        acc += (xv - p->x_zero) * w[((oc * p->kh + i) * p->kw + j) * p->c + c];
                                    }
                                }
                    if (bias != NULL) acc += wide ? ((const int64_t *)bias)[oc] : ((const int32_t *)bias)[oc];
                    acc = wide ? mbqm_reduced(acc, p->mult[oc], p->shift[oc]) : mbqm_double(acc, p->mult[oc], p->shift[oc]);
                    acc = clamp_ref(acc + p->y_zero, p->y_min, p->y_max);
                    if (wide) ((int16_t *)y)[at] = (int16_t)acc;
                    else ((int8_t *)y)[at] = (int8_t)acc;
                }
}

void aotc_tfl_transpose_conv_s8_ref(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                                    const int32_t *bias, int8_t *y) {
    transpose_conv_ref(p, x, 0, w, bias, y);
}

void aotc_tfl_transpose_conv_s16_ref(const aotc_tfl_conv_params *p, const int16_t *x, const int8_t *w,
                                     const int64_t *bias, int16_t *y) {
    transpose_conv_ref(p, x, 1, w, bias, y);
}

/* ---- pools, MEAN ------------------------------------------------------------------------------------------- */

/* over the window's taps inside the input: the mean rounded half away from zero, or the max */
static void pool_ref(const aotc_tfl_pool_params *p, const void *x, int wide, int average, void *y) {
    int64_t b, oy, ox, c, i, j;
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox)
                for (c = 0; c < p->c; ++c) {
                    int64_t sum = 0, count = 0, top = wide ? -32768 : -128, v;
                    for (i = 0; i < p->kh; ++i)
                        for (j = 0; j < p->kw; ++j) {
                            const int64_t iy = oy * p->sh - p->pad_top + i, ix = ox * p->sw - p->pad_left + j;
                            int64_t at;
                            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                            at = ((b * p->h + iy) * p->w + ix) * p->c + c;
                            v = wide ? ((const int16_t *)x)[at] : ((const int8_t *)x)[at];
                            sum += v, ++count, top = v > top ? v : top;
                        }
                    v = !average ? top : count == 0 ? 0 : sum >= 0 ? (sum + count / 2) / count : -((-sum + count / 2) / count);
                    v = clamp_ref(v, p->y_min, p->y_max);
                    if (wide) ((int16_t *)y)[((b * p->oh + oy) * p->ow + ox) * p->c + c] = (int16_t)v;
                    else ((int8_t *)y)[((b * p->oh + oy) * p->ow + ox) * p->c + c] = (int8_t)v;
                }
}

void aotc_tfl_avgpool_s8_ref(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { pool_ref(p, x, 0, 1, y); }
void aotc_tfl_maxpool_s8_ref(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { pool_ref(p, x, 0, 0, y); }
void aotc_tfl_avgpool_s16_ref(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y) { pool_ref(p, x, 1, 1, y); }
void aotc_tfl_maxpool_s16_ref(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y) { pool_ref(p, x, 1, 0, y); }

/* reference_integer_ops::Mean: the sum of (x - x_zero), requantised (double rounding), plus y_zero, clamped */
static void mean_ref(const aotc_tfl_mean_params *p, const void *x, int wide, void *y) {
    int64_t b, c, k;
    for (b = 0; b < p->n; ++b)
        for (c = 0; c < p->c; ++c) {
            int64_t acc = 0;
            for (k = 0; k < p->hw; ++k) {
                const int64_t at = (b * p->hw + k) * p->c + c;
                acc += (wide ? ((const int16_t *)x)[at] : ((const int8_t *)x)[at]) - p->x_zero;
            }
            acc = mbqm_double(acc, p->mult, p->shift) + p->y_zero;
            if (wide) ((int16_t *)y)[b * p->c + c] = (int16_t)clamp_ref(acc, -32768, 32767);
            else ((int8_t *)y)[b * p->c + c] = (int8_t)clamp_ref(acc, -128, 127);
        }
}

void aotc_tfl_mean_s8_ref(const aotc_tfl_mean_params *p, const int8_t *x, int8_t *y) { mean_ref(p, x, 0, y); }
void aotc_tfl_mean_s16_ref(const aotc_tfl_mean_params *p, const int16_t *x, int16_t *y) { mean_ref(p, x, 1, y); }

/* ---- two-input ops, with the broadcast of aotc_tfl_binary_params ---------------------------------------------- */

enum { OP_ADD, OP_MUL, OP_MAX, OP_MIN, OP_SQDIFF };

/* y's element k from x1's and x2's: the 6-D index of k, each input's offset by its steps. The zero point is added in
 * int64 and the sum clamped (a requantised value at an int32 extreme, which only extreme multipliers give, does not
 * wrap: TFLite's int32 sum would overflow there) */
static void binary_ref(const aotc_tfl_binary_params *p, const void *x1, const void *x2, int wide, int op, void *y) {
    const int left = wide ? 15 : 20; /* the inputs' headroom before ADD / SUB rescales them */
    int64_t k, rest, o1, o2, a, b, v;
    int d;
    for (k = 0; k < p->count; ++k) {
        o1 = o2 = k;
        if (p->broadcast) {
            for (d = 5, rest = k, o1 = 0, o2 = 0; d >= 0; --d) {
                o1 += rest % p->dims[d] * p->st1[d], o2 += rest % p->dims[d] * p->st2[d];
                rest /= p->dims[d];
            }
        }
        a = wide ? ((const int16_t *)x1)[o1] : ((const int8_t *)x1)[o1];
        b = wide ? ((const int16_t *)x2)[o2] : ((const int8_t *)x2)[o2];
        if (op == OP_ADD) {
            const int64_t s1 = mbqm_double((a - p->x1_zero) * ((int64_t)1 << left), p->m1, p->s1);
            const int64_t s2 = mbqm_double((b - p->x2_zero) * ((int64_t)1 << left), p->m2, p->s2);
            v = (int64_t)mbqm_double(p->subtract ? s1 - s2 : s1 + s2, p->mult, p->shift) + p->y_zero;
        } else if (op == OP_MUL) {
            v = (int64_t)mbqm_double((a - p->x1_zero) * (b - p->x2_zero), p->mult, p->shift) + p->y_zero;
        } else if (op == OP_SQDIFF) { /* SQUARED_DIFFERENCE: ADD's rescaling after a left shift of 7 */
            const int64_t d = mbqm_double((a - p->x1_zero) * 128, p->m1, p->s1) -
                              mbqm_double((b - p->x2_zero) * 128, p->m2, p->s2);
            v = mbqm_double(d * d, p->mult, p->shift) + p->y_zero;
        } else {
            v = op == OP_MAX ? (a > b ? a : b) : (a < b ? a : b);
        }
        v = clamp_ref(v, p->y_min, p->y_max);
        if (wide) ((int16_t *)y)[k] = (int16_t)v;
        else ((int8_t *)y)[k] = (int8_t)v;
    }
}

void aotc_tfl_add_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    binary_ref(p, x1, x2, 0, OP_ADD, y);
}
void aotc_tfl_mul_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    binary_ref(p, x1, x2, 0, OP_MUL, y);
}
void aotc_tfl_max_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    binary_ref(p, x1, x2, 0, OP_MAX, y);
}
void aotc_tfl_min_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    binary_ref(p, x1, x2, 0, OP_MIN, y);
}
void aotc_tfl_add_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    binary_ref(p, x1, x2, 1, OP_ADD, y);
}
void aotc_tfl_mul_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    binary_ref(p, x1, x2, 1, OP_MUL, y);
}
void aotc_tfl_max_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    binary_ref(p, x1, x2, 1, OP_MAX, y);
}
void aotc_tfl_min_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    binary_ref(p, x1, x2, 1, OP_MIN, y);
}

/* CONV_2D then ADD: each conv output as aotc_tfl_conv_s8_ref's, then the ADD of it and the residual's element */
void aotc_tfl_conv_add_s8_ref(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, const int8_t *x,
                              const int8_t *w, const int32_t *bias, const int8_t *res, int8_t *y) {
    const int64_t total = (int64_t)p->n * p->oh * p->ow * p->oc;
    int64_t i;
    for (i = 0; i < total; ++i) {
        const int64_t oc = i % p->oc, pos = i / p->oc, ox = pos % p->ow, oy = pos / p->ow % p->oh, b = pos / p->ow / p->oh;
        aotc_tfl_binary_params one = r->add;
        int64_t acc = conv_sum(p, x, 0, w, 0, b, oy, ox, oc) + (bias != NULL ? bias[oc] : 0);
        int8_t v = (int8_t)clamp_ref(mbqm_double(acc, p->mult[oc], p->shift[oc]) + p->y_zero, p->y_min, p->y_max);
        const int8_t rv = res[i];
        one.count = 1, one.broadcast = 0;
        binary_ref(&one, r->conv_x1 ? &v : &rv, r->conv_x1 ? &rv : &v, 0, OP_ADD, &y[i]);
    }
}

void aotc_tfl_lut_s8_ref(const aotc_tfl_lut_params *p, const int8_t *x, int8_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) y[k] = p->table[x[k] & 0xFF]; /* the byte of x (two's complement) */
}

/* 16x8 LEAKY_RELU: x >= 0 by the identity multiplier, else by alpha's (signed: TFLite's formulas as such) */
void aotc_tfl_leaky_relu_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        y[k] = (int16_t)clamp_ref(x[k] >= 0 ? mbqm_double(x[k], p->m1, p->s1) : mbqm_double(x[k], p->m2, p->s2),
                                  p->y_min, p->y_max);
    }
}

/* ---- QUANTIZE, DEQUANTIZE ---------------------------------------------------------------------------------- */

/* round(x / scale) half away from zero, plus y_zero, saturated to [lo, hi] (in double: no overflow) */
static int64_t quantize_one(float x, float scale, int32_t y_zero, int64_t lo, int64_t hi) {
    const double v = (double)roundf(x / scale) + y_zero;
    return v <= (double)lo ? lo : v >= (double)hi ? hi : (int64_t)v;
}

void aotc_tfl_quantize_f32_s8_ref(const aotc_tfl_quantize_params *p, const float *x, int8_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) y[k] = (int8_t)quantize_one(x[k], p->scale, p->y_zero, -128, 127);
}
void aotc_tfl_quantize_f32_s16_ref(const aotc_tfl_quantize_params *p, const float *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) y[k] = (int16_t)quantize_one(x[k], p->scale, p->y_zero, -32768, 32767);
}
void aotc_tfl_dequantize_s8_f32_ref(const aotc_tfl_quantize_params *p, const int8_t *x, float *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) y[k] = (float)((double)p->scale * (double)(x[k] - p->x_zero));
}
void aotc_tfl_dequantize_s16_f32_ref(const aotc_tfl_quantize_params *p, const int16_t *x, float *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) y[k] = (float)((double)p->scale * (double)(x[k] - p->x_zero));
}

/* Requantize: x less its zero point, the multiplier (double rounding), plus y's zero point: int32 arithmetic
 * as TFLite's (wrapping), clamped to y's type; int8 -> int8 and int16 -> int16 add y_zero without wrapping */
static int64_t requantize_one(int64_t x, const aotc_tfl_quantize_params *p, int wrap) {
    const int64_t v = mbqm_double(wrap_bits(x - p->x_zero, 32), p->mult, p->shift);
    return wrap ? wrap_bits(v + p->y_zero, 32) : v + p->y_zero;
}

#define REQUANTIZE_REF(NAME, TI, TO, LO, HI, WRAP)                                       \
    void NAME(const aotc_tfl_quantize_params *p, const TI *x, TO *y) {                  \
        int64_t k;                                                                      \
        for (k = 0; k < p->count; ++k) y[k] = (TO)clamp_ref(requantize_one(x[k], p, WRAP), LO, HI); \
    }
REQUANTIZE_REF(aotc_tfl_requantize_s8_ref, int8_t, int8_t, -128, 127, 0)
REQUANTIZE_REF(aotc_tfl_requantize_s16_ref, int16_t, int16_t, -32768, 32767, 0)
REQUANTIZE_REF(aotc_tfl_requantize_s8_s16_ref, int8_t, int16_t, -32768, 32767, 1)
REQUANTIZE_REF(aotc_tfl_requantize_s16_s8_ref, int16_t, int8_t, -128, 127, 1)
REQUANTIZE_REF(aotc_tfl_requantize_s8_s32_ref, int8_t, int32_t, INT32_MIN, INT32_MAX, 1)
REQUANTIZE_REF(aotc_tfl_requantize_s16_s32_ref, int16_t, int32_t, INT32_MIN, INT32_MAX, 1)
REQUANTIZE_REF(aotc_tfl_requantize_s32_s8_ref, int32_t, int8_t, -128, 127, 1)
REQUANTIZE_REF(aotc_tfl_requantize_s32_s16_ref, int32_t, int16_t, -32768, 32767, 1)
REQUANTIZE_REF(aotc_tfl_requantize_s8_u8_ref, int8_t, uint8_t, 0, 255, 1)
REQUANTIZE_REF(aotc_tfl_requantize_u8_s8_ref, uint8_t, int8_t, -128, 127, 1)

/* ---- SOFTMAX ------------------------------------------------------------------------------------------------ */

/* exp of the scaled difference d = x - max (Q5.26 in, Q0.31 out), as reference_ops::Softmax works it out for each
 * element; remembered in `seen` by -d (an int8 difference: 256 values), so that a row of thousands costs at most
 * 256 of them (under qemu the 64-bit fixed point took two thirds of the family's test) */
static int64_t softmax8_exp(const aotc_tfl_softmax_params *p, int64_t d, int64_t seen[256]) {
    if (seen[-d] < 0) seen[-d] = fx_exp_negative(srdhm(d * ((int64_t)1 << p->shift), p->mult, 32), 5, 32);
    return seen[-d];
}

/* reference_ops::Softmax on int8 (kScaledDiffIntegerBits 5, kAccumulationIntegerBits 12), out_bits 8 or 16:
 * output zero point -2^(out_bits - 1) */
static void softmax8_ref(const aotc_tfl_softmax_params *p, const int8_t *x, int out_bits, void *y) {
    const int64_t lo = -((int64_t)1 << (out_bits - 1)), hi = -lo - 1;
    int64_t r, k, seen[256];
    for (k = 0; k < 256; ++k) seen[k] = -1;
    for (r = 0; r < p->rows; ++r) {
        const int8_t *xr = x + r * p->depth;
        int64_t top = -128, sum = 0, scale;
        int headroom = 0, over;
        for (k = 0; k < p->depth; ++k) top = xr[k] > top ? xr[k] : top;
        for (k = 0; k < p->depth; ++k) {
            if (xr[k] - top < p->diff_min) continue;
            sum = wrap_bits(sum + rdbpot(softmax8_exp(p, xr[k] - top, seen), 12), 32);
        }
        while (headroom < 32 && !(((uint64_t)sum << headroom) & 0x80000000u)) ++headroom; /* leading zeros */
        over = 12 - headroom;
        scale = fx_one_over_one_plus_x(wrap_bits(((sum << headroom) & 0xFFFFFFFF) - 0x80000000LL, 32), 32);
        for (k = 0; k < p->depth; ++k) {
            int64_t v = lo;
            if (xr[k] - top >= p->diff_min) {
                const int64_t e = softmax8_exp(p, xr[k] - top, seen);
                v = clamp_ref(rdbpot(srdhm(scale, e, 32), over + 31 - out_bits) + lo, lo, hi);
            }
            if (out_bits == 8) ((int8_t *)y)[r * p->depth + k] = (int8_t)v;
            else ((int16_t *)y)[r * p->depth + k] = (int16_t)v;
        }
    }
}

void aotc_tfl_softmax_s8_ref(const aotc_tfl_softmax_params *p, const int8_t *x, int8_t *y) { softmax8_ref(p, x, 8, y); }
void aotc_tfl_softmax_s8_s16_ref(const aotc_tfl_softmax_params *p, const int8_t *x, int16_t *y) {
    softmax8_ref(p, x, 16, y);
}

/* generic_int16_table_lookup: anchor 256 + v / 2^7 (floor) of the 513, plus the slope times v's low 7 bits */
static int64_t lut16_ref(const int16_t *t, int64_t v) {
    const int64_t i = 256 + (int64_t)floor((double)v / 128.0), low = v - (i - 256) * 128;
    return wrap_bits(t[i] + ((wrap_bits(t[i + 1] - t[i], 16) * low + 64) >> 7), 16);
}

/* reference_integer_ops::SoftmaxInt16 */
void aotc_tfl_softmax_s16_ref(const aotc_tfl_softmax16_params *p, const int16_t *x, int16_t *y) {
    int64_t r, k;
    for (r = 0; r < p->rows; ++r) {
        const int16_t *xr = x + r * p->depth;
        int64_t top = -32768, sum = 0, recip;
        int zeros = 0;
        for (k = 0; k < p->depth; ++k) top = xr[k] > top ? xr[k] : top;
        for (k = 0; k < p->depth; ++k) {
            sum += lut16_ref(p->exp_table, clamp_ref(mbqm_double(xr[k] - top, p->mult, p->shift) + 32767, -32768, 32767));
        }
        while (zeros < 32 && !(((uint64_t)sum << zeros) & 0x80000000u)) ++zeros;
        recip = lut16_ref(p->recip_table, clamp_ref((((sum << (zeros - 1)) + (1 << 13)) >> 14) - (1 << 15) - (1 << 16),
                                                    -32768, 32767));
        for (k = 0; k < p->depth; ++k) {
            const int64_t e = lut16_ref(p->exp_table, clamp_ref(mbqm_double(xr[k] - top, p->mult, p->shift) + 32767, -32768, 32767));
            y[r * p->depth + k] = (int16_t)clamp_ref((e * recip + ((int64_t)1 << (30 - zeros))) >> (31 - zeros), 0, 32767);
        }
    }
}

/* ---- 16x8 LOGISTIC, TANH: reference_integer_ops' interpolation of the sigmoid table ------------------------------ */

void aotc_tfl_logistic_s16_ref(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const int64_t v = (x[k] * (int64_t)p->mult + (p->shift > 0 ? (int64_t)1 << (p->shift - 1) : 0)) >> p->shift;
        const uint32_t a = (uint32_t)(v < 0 ? -v : v), i = a >> 9;
        uint32_t r = i >= 255 ? 0x7FFFu << 10 : ((uint32_t)p->table[i] << 9) + (a & 0x1FFu) * (uint32_t)(p->table[i + 1] - p->table[i]);
        r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
        y[k] = (int16_t)(r >> 10);
    }
}

void aotc_tfl_tanh_s16_ref(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const int64_t v = (x[k] * (int64_t)p->mult + (p->shift > 0 ? (int64_t)1 << (p->shift - 1) : 0)) >> p->shift;
        const uint32_t a = (uint32_t)(v < 0 ? -v : v), i = a >> 8;
        const int64_t r = i >= 255 ? 0xFFFF << 8 : (int64_t)(((uint32_t)p->table[i] << 8) + (a & 0xFFu) * (uint32_t)(p->table[i + 1] - p->table[i]));
        const int64_t s = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
        y[k] = (int16_t)(s >= 0 ? s >> 8 : -((-s + 255) >> 8)); /* floor(s / 2^8) */
    }
}

/* ---- the integer LSTM (8x8_16) and SVDF ---------------------------------------------------------------------- */

static int64_t dot8_ref(const int8_t *a, const int8_t *b, int64_t n) {
    int64_t acc = 0, k;
    for (k = 0; k < n; ++k) acc += a[k] * b[k];
    return acc;
}

void aotc_tfl_lstm_s8_ref(const aotc_tfl_lstm8_params *p, const int8_t *x, const int8_t *wx, const int8_t *wh,
                          const int32_t *bx, const int32_t *bh, const int8_t *h0, const int16_t *c0, int8_t *y,
                          int8_t *h_next, int16_t *c_next) {
    const int64_t n = p->n_cell;
    int64_t b, t, k, g;
    for (k = 0; k < (int64_t)p->batch * n; ++k) c_next[k] = c0[k];
    for (b = 0; b < p->batch; ++b)
        for (t = 0; t < p->steps; ++t) {
            const int8_t *xt = x + (b * p->steps + t) * p->n_input;
            const int8_t *hp = t > 0 ? y + (b * p->steps + t - 1) * n : h0 + b * n; /* h of the step before */
            for (k = 0; k < n; ++k) {
                int64_t gate[4], cell, th;
                int16_t *c = c_next + b * n + k;
                for (g = 0; g < 4; ++g) { /* i f c o: the input part saturated, then the recurrent part added */
                    const int64_t row = g * n + k;
                    const int64_t ax = mbqm_double(bx[row] + dot8_ref(wx + row * p->n_input, xt, p->n_input), p->mult[g], p->shift[g]);
                    const int64_t ah = mbqm_double(bh[row] + dot8_ref(wh + row * n, hp, n), p->mult[4 + g], p->shift[4 + g]);
                    const int64_t pre = sat_bits(sat_bits(ax, 16) + ah, 16);
                    gate[g] = g == 2 ? fx_tanh(pre, 3, 16) : fx_logistic(pre, 3, 16);
                }
                cell = sat_bits(wrap_bits(rdbpot(gate[1] * *c, 15), 16) + wrap_bits(rdbpot(gate[0] * gate[2], p->cell_shift), 16), 16);
                if (p->clip > 0) cell = clamp_ref(cell, -p->clip, p->clip);
                *c = (int16_t)cell;
                th = p->tanh_bits >= 0 ? fx_tanh(cell, p->tanh_bits, 16) : gate[0];
                y[(b * p->steps + t) * n + k] = (int8_t)clamp_ref(mbqm_double(gate[3] * th, p->hidden_mult, p->hidden_shift) + p->hidden_zero, -128, 127);
            }
        }
    for (b = 0; b < p->batch; ++b)
        for (k = 0; k < n; ++k) h_next[b * n + k] = y[(b * p->steps + p->steps - 1) * n + k];
}

/* EvalIntegerSVDF: the state shifted left by one element (the whole buffer), each filter's newest column its
 * feature sum requantised and saturated to int16; each unit the sum of its rank filters' memories against
 * their time weights, plus the bias, requantised */
void aotc_tfl_svdf_s8_ref(const aotc_tfl_svdf_params *p, const int8_t *x, const int8_t *wf, const int16_t *wt,
                          const int32_t *bias, const int16_t *state, int8_t *y, int16_t *state_next) {
    const int64_t row = (int64_t)p->n_memory * p->n_filter, size = p->batch * row, units = p->n_filter / p->rank;
    int64_t i, b, f, u, r, k;
    for (i = 0; i + 1 < size; ++i) state_next[i] = state[i + 1]; /* ascending: state_next may be state */
    for (b = 0; b < p->batch; ++b)
        for (f = 0; f < p->n_filter; ++f) {
            int64_t acc = 0;
            for (k = 0; k < p->n_input; ++k) acc += wf[f * p->n_input + k] * (x[b * p->n_input + k] - p->x_zero);
            state_next[b * row + f * p->n_memory + p->n_memory - 1] = (int16_t)sat_bits(mbqm_double(acc, p->mult1, p->shift1), 16);
        }
    for (b = 0; b < p->batch; ++b)
        for (u = 0; u < units; ++u) {
            int64_t sum = bias != NULL ? bias[u] : 0;
            for (r = 0; r < p->rank; ++r)
                for (k = 0; k < p->n_memory; ++k) {
                    const int64_t fi = u * p->rank + r;
                    sum += wt[fi * p->n_memory + k] * state_next[b * row + fi * p->n_memory + k];
                }
            y[b * units + u] = (int8_t)clamp_ref(mbqm_double(sum, p->mult2, p->shift2) + p->y_zero, -128, 127);
        }
}

void aotc_tfl_squared_difference_s8_ref(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2,
                                        int8_t *y) {
    binary_ref(p, x1, x2, 0, OP_SQDIFF, y);
}

/* ---- BATCH_MATMUL: reference_ops::BatchMatMul, each output one sum over k in LiteRT's order ------------------- */

static void matmul_ref(const aotc_tfl_matmul_params *p, const void *x1, int wide1, const void *x2, int wide2,
                       void *y) {
    const int64_t batches = (int64_t)p->batch[0] * p->batch[1] * p->batch[2];
    int64_t bt, i, j, k;
    for (bt = 0; bt < batches; ++bt) {
        const int64_t b0 = bt / ((int64_t)p->batch[1] * p->batch[2]), b1 = bt / p->batch[2] % p->batch[1];
        const int64_t b2 = bt % p->batch[2];
        const int64_t base1 = b0 * p->st1[0] + b1 * p->st1[1] + b2 * p->st1[2];
        const int64_t base2 = b0 * p->st2[0] + b1 * p->st2[1] + b2 * p->st2[2];
        for (j = 0; j < p->n; ++j) {
            for (i = 0; i < p->m; ++i) {
                int64_t acc = 0, v;
                for (k = 0; k < p->k; ++k) {
                    const int64_t a1 = base1 + i * p->a_row + k * p->a_col, a2 = base2 + k * p->b_row + j * p->b_col;
                    const int64_t va = wide1 ? ((const int16_t *)x1)[a1] : ((const int8_t *)x1)[a1];
                    const int64_t vb = wide2 ? ((const int16_t *)x2)[a2] : ((const int8_t *)x2)[a2];
                    acc += (va - p->x1_zero) * (vb - p->x2_zero);
                }
                /* int8: the int32 sum (wrapping as int32 arithmetic does), double rounding; 16x8: int64 */
                v = wide1 ? (int64_t)(int32_t)mbqm_reduced(acc, p->mult, p->shift)
                          : mbqm_double(wrap_bits(acc, 32), p->mult, p->shift);
                v = clamp_ref(v + p->y_zero, p->y_min, p->y_max);
                if (wide1) ((int16_t *)y)[bt * p->m * p->n + i * p->n + j] = (int16_t)v;
                else ((int8_t *)y)[bt * p->m * p->n + i * p->n + j] = (int8_t)v;
            }
        }
    }
}

void aotc_tfl_batch_matmul_s8_ref(const aotc_tfl_matmul_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    matmul_ref(p, x1, 0, x2, 0, y);
}
void aotc_tfl_batch_matmul_s16_ref(const aotc_tfl_matmul_params *p, const int16_t *x1, const int16_t *x2,
                                   int16_t *y) {
    matmul_ref(p, x1, 1, x2, 1, y);
}
void aotc_tfl_batch_matmul_s16_s8_ref(const aotc_tfl_matmul_params *p, const int16_t *x1, const int8_t *x2,
                                      int16_t *y) {
    matmul_ref(p, x1, 1, x2, 0, y);
}

/* ---- RESIZE_BILINEAR: ResizeBilinearInteger ------------------------------------------------------------------ */

/* the 10-bit source position of output index v and its neighbours (truncating divisions, as C++'s) */
static void resize_ref_pos(int64_t v, int64_t scale, int half, int64_t size, int64_t *pos, int64_t *lo,
                           int64_t *hi) {
    *pos = half ? v * scale + scale / 2 - 512 : v * scale;
    *lo = *pos / 1024 < 0 ? 0 : *pos / 1024;
    *hi = (*pos + 1023) / 1024 > size - 1 ? size - 1 : (*pos + 1023) / 1024;
}

static void resize_ref(const aotc_tfl_resize_params *p, const void *x, int wide, void *y) {
    int64_t b, oy, ox, c;
    for (b = 0; b < p->n; ++b) {
        for (oy = 0; oy < p->oh; ++oy) {
            for (ox = 0; ox < p->ow; ++ox) {
                int64_t iy, y0, y1, ix, x0, x1;
                resize_ref_pos(oy, p->scale_h, p->half_pixel, p->h, &iy, &y0, &y1);
                resize_ref_pos(ox, p->scale_w, p->half_pixel, p->w, &ix, &x0, &x1);
                for (c = 0; c < p->c; ++c) {
                    const int64_t at[4] = {((b * p->h + y0) * p->w + x0) * p->c + c, ((b * p->h + y1) * p->w + x0) * p->c + c,
                                           ((b * p->h + y0) * p->w + x1) * p->c + c, ((b * p->h + y1) * p->w + x1) * p->c + c};
                    const int64_t wy[4] = {1024 - (iy - 1024 * y0), iy - 1024 * y0, 1024 - (iy - 1024 * y0), iy - 1024 * y0};
                    const int64_t wx[4] = {1024 - (ix - 1024 * x0), 1024 - (ix - 1024 * x0), ix - 1024 * x0, ix - 1024 * x0};
                    int64_t sum = 0, q, k;
                    for (k = 0; k < 4; ++k) {
                        sum += (wide ? ((const int16_t *)x)[at[k]] : ((const int8_t *)x)[at[k]]) * wy[k] * wx[k];
                    }
                    q = rdbpot(sum, 20); /* half away from zero */
                    if (wide) ((int16_t *)y)[((b * p->oh + oy) * p->ow + ox) * p->c + c] = (int16_t)q;
                    else ((int8_t *)y)[((b * p->oh + oy) * p->ow + ox) * p->c + c] = (int8_t)q;
                }
            }
        }
    }
}

void aotc_tfl_resize_bilinear_s8_ref(const aotc_tfl_resize_params *p, const int8_t *x, int8_t *y) {
    resize_ref(p, x, 0, y);
}
void aotc_tfl_resize_bilinear_s16_ref(const aotc_tfl_resize_params *p, const int16_t *x, int16_t *y) {
    resize_ref(p, x, 1, y);
}

/* ---- a 16x8 op by LiteRT's interpolated table ----------------------------------------------------------------- */

void aotc_tfl_lut_s16_ref(const aotc_tfl_lut16_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) y[k] = (int16_t)lut16_ref(p->table, x[k]);
}

/* SqrtEvalQuantized<int16_t>: the input dequantised in float, its square root over y_scale, truncated */
void aotc_tfl_sqrt_s16_ref(const aotc_tfl_quantize_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const float deq = p->scale * (float)((int32_t)x[k] - p->x_zero);
        const float root = deq >= 0.0f ? (float)sqrt((double)deq) : 0.0f; /* sqrt of a float is exact in double */
        y[k] = (int16_t)clamp_ref((int64_t)(root / p->y_scale) + p->y_zero, -32768, 32767);
    }
}

/* AbsEvalQuantized<int16_t>: |x|, requantised when the scales differ (mult not 0) */
void aotc_tfl_abs_s16_ref(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const int64_t v = x[k] < 0 ? -(int64_t)x[k] : x[k];
        y[k] = (int16_t)clamp_ref(p->mult != 0 ? mbqm_double(v, p->mult, p->shift) : v, p->y_min, p->y_max);
    }
}
