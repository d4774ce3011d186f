/* TFLite's integer kernels, int8 NHWC: see aotc_tflite_int8.h. Plain loops; the requantisation is
 * TFLite's fixed point, written from its definition (aot/frontend/tflite/quant.py); each op
 * takes the rounding LiteRT's reference kernel for it takes (aotc_tflite_int8.h). */
#include "aotc_tflite_int8.h"

/* On cores with the DSP extension the int8 kernels are the network: at -Os, gcc stops inlining and
 * if-converting their inner loops (10-15 % more instructions than at -O2), so this file is built
 * at -O2 whatever the level (issue 27: speed that does not depend on it). */
#if defined(__OPTIMIZE_SIZE__) && defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")
#endif

#include <math.h>
#include <string.h>

/* TFLite's SaturatingRoundingDoublingHighMul, (a * b + nudge) / 2^31 with C's truncating division
 * and nudge 2^30 (a * b >= 0) or 1 - 2^30: that is floor((a * b + 2^30) / 2^31) either way, one
 * arithmetic shift (a multiply-long, an add and two shifts on a 32-bit core, no sign tests);
 * INT32_MIN * INT32_MIN saturates */
static int32_t high_mul(int32_t a, int32_t b) {
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    return (int32_t)(((int64_t)a * (int64_t)b + ((int64_t)1 << 30)) >> 31);
}

/* x / 2^e rounded to nearest, ties away from zero (the shift of a negative value is arithmetic on
 * every compiler aotc targets) */
static int32_t divide_by_pot(int32_t x, int32_t e) {
    int32_t mask = (int32_t)(((int64_t)1 << e) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

/* double rounding: RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc * 2^left, mult), right) */
static int32_t requant_double(int32_t acc, int32_t mult, int32_t shift) {
    int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int32_t scaled = (int32_t)((uint32_t)acc << left);  /* TFLite multiplies in int32: it wraps */
    return divide_by_pot(high_mul(scaled, mult), right);
}

/* single rounding: (acc * mult + 2^(30 - shift)) >> (31 - shift) in 64 bits, half up */
static int32_t requant_single(int32_t acc, int32_t mult, int32_t shift) {
    int32_t total = 31 - shift;  /* 1..62: the compiler keeps shift in [-31, 30] */
    int64_t v = (int64_t)acc * (int64_t)mult + ((int64_t)1 << (total - 1));
    return (int32_t)(v >> total);
}

static int8_t clamp8(int32_t v, int32_t lo, int32_t hi) {
    return (int8_t)(v < lo ? lo : v > hi ? hi : v);
}

/* A residual ADD fused into CONV_2D (aotc_tfl_conv_add_s8); the conv paths take NULL when it runs alone. */
typedef struct {
    const aotc_tfl_residual_params *r;
    const int8_t *res;                  /* the residual, indexed as y */
    const int32_t *t_conv, *t_res;      /* the ADD's rescaled inputs by byte + 128 (NULL: add_one per element) */
    int64_t bound;                      /* at least every |t_conv[.] + t_res[.]| */
    int8_t *tile;                       /* the DSP path's tile of conv outputs (positions x oc) */
} tfl_residual;

/* y[at + k] = ADD(v[k], res[at + k]) for k < n: v the conv's outputs (y may be res) */
static void tfl_residual_run(const tfl_residual *e, const int8_t *v, int64_t at, int32_t n, int8_t *y);

#include "tflite_int8_dsp.h" /* the DSP extension's paths (Cortex-M4, M33, M55) and Helium's (M55) */

static void tfl_conv_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                        int8_t *y, uint32_t *scratch, const tfl_residual *e) {
#if AOTC_TFL_MVE
    if (tfl_conv_s8_mve(p, x, w, bias, y, e, scratch)) return;
#endif
#if AOTC_QUANT_DSP
    if (tfl_conv_s8_dsp(p, x, w, bias, y, scratch, e)) return;
#endif
    (void)scratch;
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
}

void aotc_tfl_conv_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                      int8_t *y, uint32_t *scratch) {
    tfl_conv_s8(p, x, w, bias, y, scratch, NULL);
}

void aotc_tfl_depthwise_s8(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w, const int32_t *bias,
                           int8_t *y, uint32_t *scratch) {
#if AOTC_QUANT_DSP
    if (tfl_depthwise_s8_dsp(p, x, w, bias, y, scratch)) return;
#endif
    (void)scratch;
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
}

void aotc_tfl_fc_s8(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                    uint32_t *scratch) {
#if AOTC_TFL_MVE
    if (tfl_fc_s8_mve(p, x, w, bias, y)) return;
#endif
#if AOTC_QUANT_DSP
    if (tfl_fc_s8_dsp(p, x, w, bias, y, scratch)) return;
#endif
    (void)scratch;
    for (int32_t r = 0; r < p->rows; ++r)
        for (int32_t o = 0; o < p->out; ++o) {
            const int8_t *xr = x + (int64_t)r * p->in, *wr = w + (int64_t)o * p->in;
            int32_t acc = 0;
            for (int32_t k = 0; k < p->in; ++k) acc += (xr[k] - p->x_zero) * wr[k];
            if (bias) acc += bias[o];
            int32_t v = requant_single(acc, p->mult[o], p->shift[o]) + p->y_zero;
            y[(int64_t)r * p->out + o] = clamp8(v, p->y_min, p->y_max);
        }
}

/* Average (rounded half away from zero) and max pooling over the window inside the input, one body
 * for int8 and 16x8's int16 (LOWEST: the type's minimum; CLAMP: to the fused activation's range). */
#define TFL_POOL(NAME, T, LOWEST, CLAMP)                                                                  \
    static void NAME(const aotc_tfl_pool_params *p, const T *x, T *y, int average) {                   \
        for (int32_t b = 0; b < p->n; ++b)                                                              \
            for (int32_t oy = 0; oy < p->oh; ++oy)                                                      \
                for (int32_t ox = 0; ox < p->ow; ++ox) {                                                \
                    int32_t y0 = oy * p->sh - p->pad_top, x0 = ox * p->sw - p->pad_left;                \
                    int32_t ys = y0 < 0 ? 0 : y0, ye = y0 + p->kh < p->h ? y0 + p->kh : p->h;           \
                    int32_t xs = x0 < 0 ? 0 : x0, xe = x0 + p->kw < p->w ? x0 + p->kw : p->w;           \
                    for (int32_t c = 0; c < p->c; ++c) {                                                \
                        int32_t acc = average ? 0 : (LOWEST), count = (ye - ys) * (xe - xs);            \
                        for (int32_t iy = ys; iy < ye; ++iy)                                            \
                            for (int32_t ix = xs; ix < xe; ++ix) {                                      \
                                int32_t v = x[(((int64_t)b * p->h + iy) * p->w + ix) * p->c + c];       \
                                if (average) acc += v;                                                  \
                                else if (v > acc) acc = v;                                              \
                            }                                                                           \
                        if (average && count > 0)                                                       \
                            acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;      \
                        y[(((int64_t)b * p->oh + oy) * p->ow + ox) * p->c + c] =                        \
                            CLAMP(acc, p->y_min, p->y_max);                                             \
                    }                                                                                   \
                }                                                                                       \
    }
TFL_POOL(pool, int8_t, -128, clamp8)

void aotc_tfl_avgpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { pool(p, x, y, 1); }
void aotc_tfl_maxpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { pool(p, x, y, 0); }

/* MEAN over the spatial positions, int8's algorithm for both widths (int16 saturates at its own range) */
#define TFL_MEAN(SFX, T, CLAMP, LO, HI)                                                                   \
    void aotc_tfl_mean_##SFX(const aotc_tfl_mean_params *p, const T *x, T *y) {                          \
        for (int32_t b = 0; b < p->n; ++b)                                                              \
            for (int32_t c = 0; c < p->c; ++c) {                                                        \
                int32_t acc = -p->x_zero * p->hw;                                                       \
                for (int32_t k = 0; k < p->hw; ++k) acc += x[((int64_t)b * p->hw + k) * p->c + c];     \
                y[(int64_t)b * p->c + c] = CLAMP(requant_double(acc, p->mult, p->shift) + p->y_zero, LO, HI); \
            }                                                                                           \
    }

TFL_MEAN(s8, int8_t, clamp8, -128, 127)

/* the offsets of y's element k in x1 and x2 (6-D, inputs broadcast by zero steps) */
typedef struct { int32_t i[6]; int64_t o1, o2; } bcast_iter;

static void bcast_next(const aotc_tfl_binary_params *p, bcast_iter *it) {
    for (int32_t d = 5; d >= 0; --d) {
        it->o1 += p->st1[d];
        it->o2 += p->st2[d];
        if (++it->i[d] < p->dims[d]) return;
        it->o1 -= (int64_t)p->st1[d] * p->dims[d];
        it->o2 -= (int64_t)p->st2[d] * p->dims[d];
        it->i[d] = 0;
    }
}

static int32_t add_one(const aotc_tfl_binary_params *p, int32_t x1, int32_t x2) {
    int32_t a = requant_double((x1 - p->x1_zero) * (1 << 20), p->m1, p->s1);
    int32_t b = requant_double((x2 - p->x2_zero) * (1 << 20), p->m2, p->s2);
    return requant_double(p->subtract ? a - b : a + b, p->mult, p->shift) + p->y_zero;
}

static int32_t mul_one(const aotc_tfl_binary_params *p, int32_t x1, int32_t x2) {
    return requant_double((x1 - p->x1_zero) * (x2 - p->x2_zero), p->mult, p->shift) + p->y_zero;
}

static int32_t max_one(const aotc_tfl_binary_params *p, int32_t x1, int32_t x2) {
    (void)p;
    return x1 > x2 ? x1 : x2;
}

static int32_t min_one(const aotc_tfl_binary_params *p, int32_t x1, int32_t x2) {
    (void)p;
    return x1 < x2 ? x1 : x2;
}

/* y = f(x1, x2) elementwise, the inputs broadcast (bcast_iter) unless both have y's shape */
#define TFL_BINARY(NAME, T, CLAMP)                                                                        \
    static void NAME(const aotc_tfl_binary_params *p, const T *x1, const T *x2, T *y,                    \
                     int32_t (*f)(const aotc_tfl_binary_params *, int32_t, int32_t)) {                  \
        if (!p->broadcast) {                                                                            \
            for (int64_t k = 0; k < p->count; ++k) y[k] = CLAMP(f(p, x1[k], x2[k]), p->y_min, p->y_max); \
            return;                                                                                     \
        }                                                                                               \
        bcast_iter it = {{0, 0, 0, 0, 0, 0}, 0, 0};                                                     \
        for (int64_t k = 0; k < p->count; ++k) {                                                        \
            y[k] = CLAMP(f(p, x1[it.o1], x2[it.o2]), p->y_min, p->y_max);                               \
            bcast_next(p, &it);                                                                         \
        }                                                                                               \
    }

TFL_BINARY(binary, int8_t, clamp8)

void aotc_tfl_add_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y,
                     uint32_t *scratch) {
#if AOTC_QUANT_DSP
    if (tfl_add_s8_dsp(p, x1, x2, y, scratch)) return;
#endif
    (void)scratch;
    binary(p, x1, x2, y, add_one);
}

static void tfl_residual_run(const tfl_residual *e, const int8_t *v, int64_t at, int32_t n, int8_t *y) {
    const aotc_tfl_binary_params *a = &e->r->add;
    const int8_t *res = e->res + at;
    int32_t k;
    y += at;
    if (e->t_conv == NULL) { /* add_one's three requantisations, as the ADD's plain loop */
        for (k = 0; k < n; ++k) {
            const int32_t s = e->r->conv_x1 ? add_one(a, v[k], res[k]) : add_one(a, res[k], v[k]);
            y[k] = clamp8(s, a->y_min, a->y_max);
        }
        return;
    }
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
    tfl_residual e = {r, res, NULL, NULL, 0, NULL};
#if AOTC_QUANT_DSP
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
        scratch += AOTC_TFL_RESIDUAL_TABLES;
#if AOTC_TFL_MVE
        if (tfl_mve_conv_words(p, 1) == 0) /* Helium's conv keeps its own row: only the DSP path's tile */
#endif
            e.tile = (int8_t *)(scratch + tfl_dsp_conv_words(p, &np));
    }
#endif
    tfl_conv_s8(p, x, w, bias, y, scratch, &e);
}

void aotc_tfl_mul_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    binary(p, x1, x2, y, mul_one);
}

void aotc_tfl_max_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    binary(p, x1, x2, y, max_one);
}

void aotc_tfl_min_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    binary(p, x1, x2, y, min_one);
}

void aotc_tfl_lut_s8(const aotc_tfl_lut_params *p, const int8_t *x, int8_t *y) {
    for (int64_t k = 0; k < p->count; ++k) y[k] = p->table[(uint8_t)x[k]];
}

/* TRANSPOSE_CONV, its sums gathered per output rather than scattered (no scratch; integer sums, so the
 * order does not matter), one body for int8 (int32 sums, double rounding) and 16x8's int16 (int64 sums
 * and biases, LiteRT's int64 rounding with the 16-bit multiplier; zero points 0). */
#define TFL_TRANSPOSE_CONV(SFX, T, ACC, REQUANT, CLAMP)                                                   \
    void aotc_tfl_transpose_conv_##SFX(const aotc_tfl_conv_params *p, const T *x, const int8_t *w,       \
                                       const ACC *bias, T *y) {                                          \
        for (int32_t b = 0; b < p->n; ++b)                                                              \
            for (int32_t oy = 0; oy < p->oh; ++oy)                                                      \
                for (int32_t ox = 0; ox < p->ow; ++ox)                                                  \
                    for (int32_t oc = 0; oc < p->oc; ++oc) {                                            \
                        ACC acc = 0;                                                                    \
                        for (int32_t i = 0; i < p->kh; ++i) {                                           \
                            int32_t ty = oy + p->pad_top - i; /* = iy * sh */                           \
                            if (ty < 0 || ty % p->sh) continue;                                         \
                            int32_t iy = ty / p->sh;                                                    \
                            if (iy >= p->h) continue;                                                   \
                            for (int32_t j = 0; j < p->kw; ++j) {                                       \
                                int32_t tx = ox + p->pad_left - j;                                      \
                                if (tx < 0 || tx % p->sw) continue;                                     \
                                int32_t ix = tx / p->sw;                                                \
                                if (ix >= p->w) continue;                                               \
                                const T *xp = x + (((int64_t)b * p->h + iy) * p->w + ix) * p->c;        \
                                const int8_t *wp = w + (((int64_t)oc * p->kh + i) * p->kw + j) * p->c;  \
                                for (int32_t c = 0; c < p->c; ++c) acc += (xp[c] - p->x_zero) * wp[c];  \
                            }                                                                           \
                        }                                                                               \
                        if (bias) acc += bias[oc];                                                      \
                        y[(((int64_t)b * p->oh + oy) * p->ow + ox) * p->oc + oc] =                      \
                            CLAMP(REQUANT(acc, p->mult[oc], p->shift[oc]) + p->y_zero, p->y_min, p->y_max); \
                    }                                                                                   \
    }
TFL_TRANSPOSE_CONV(s8, int8_t, int32_t, requant_double, clamp8)

/* QUANTIZE from float (rounded half away from zero, clamped to BOUND before the integer conversion:
 * a float beyond int32, or NaN, does not convert), DEQUANTIZE to float, and QUANTIZE between two
 * scales (double rounding), one body for int8 and 16x8's int16. WIDE: the type the requantised sum
 * is added to the zero point in (int16 sums go through int64, as LiteRT's do). */
#define TFL_QUANTIZE(SFX, T, BOUND, CLAMP, LO, HI, WIDE)                                                   \
    void aotc_tfl_quantize_f32_##SFX(const aotc_tfl_quantize_params *p, const float *x, T *y) {          \
        for (int64_t k = 0; k < p->count; ++k) {                                                        \
            float r = roundf(x[k] / p->scale);                                                          \
            r = r >= -(BOUND) ? (r <= (BOUND) ? r : (BOUND)) : -(BOUND);                                \
            y[k] = CLAMP((int32_t)r + p->y_zero, LO, HI);                                               \
        }                                                                                               \
    }                                                                                                   \
    void aotc_tfl_dequantize_##SFX##_f32(const aotc_tfl_quantize_params *p, const T *x, float *y) {      \
        for (int64_t k = 0; k < p->count; ++k) y[k] = (float)((double)p->scale * (double)(x[k] - p->x_zero)); \
    }                                                                                                   \
    void aotc_tfl_requantize_##SFX(const aotc_tfl_quantize_params *p, const T *x, T *y) {               \
        for (int64_t k = 0; k < p->count; ++k)                                                          \
            y[k] = CLAMP((WIDE)requant_double(x[k] - p->x_zero, p->mult, p->shift) + p->y_zero, LO, HI); \
    }
TFL_QUANTIZE(s8, int8_t, 1000.0f, clamp8, -128, 127, int32_t)

/* QUANTIZE between two integer types (LiteRT's and TFLM's Requantize): x less its zero point, the
 * multiplier (double rounding), plus y's zero point, in int32 as theirs (wrapping, here without
 * undefined behaviour), clamped to y's type */
#define TFL_REQUANTIZE(IN, TI, OUT, TO, LO, HI)                                                           \
    void aotc_tfl_requantize_##IN##_##OUT(const aotc_tfl_quantize_params *p, const TI *x, TO *y) {      \
        for (int64_t k = 0; k < p->count; ++k) {                                                        \
            int32_t v = (int32_t)((uint32_t)(int32_t)x[k] - (uint32_t)p->x_zero);                        \
            v = (int32_t)((uint32_t)requant_double(v, p->mult, p->shift) + (uint32_t)p->y_zero);         \
            y[k] = (TO)(v < (LO) ? (LO) : v > (HI) ? (HI) : v);                                          \
        }                                                                                               \
    }
TFL_REQUANTIZE(s8, int8_t, s16, int16_t, -32768, 32767)
TFL_REQUANTIZE(s16, int16_t, s8, int8_t, -128, 127)
TFL_REQUANTIZE(s8, int8_t, s32, int32_t, INT32_MIN, INT32_MAX)
TFL_REQUANTIZE(s16, int16_t, s32, int32_t, INT32_MIN, INT32_MAX)
TFL_REQUANTIZE(s32, int32_t, s8, int8_t, -128, 127)
TFL_REQUANTIZE(s32, int32_t, s16, int16_t, -32768, 32767)

/* --- softmax: fixed point in the style of gemmlowp, Q<integer bits>.<31 - integer bits> in int32 ----- */
static int32_t wrap_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t wrap_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

/* x * 2^e, saturating */
static int32_t shl_sat(int32_t x, int32_t e) {
    int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
    if (x > threshold) return INT32_MAX;
    if (x < -threshold) return INT32_MIN;
    return (int32_t)((uint32_t)x << e);
}

/* exp(a) for a in [-1/4, 0), Q0.31: Taylor series around -1/8 */
static int32_t exp_quarter(int32_t a) {
    const int32_t exp_minus_eighth = 1895147668;  /* exp(-1/8) in Q0.31 */
    const int32_t one_third = 715827883;          /* 1/3 in Q0.31 */
    int32_t x = wrap_add(a, 1 << 28);
    int32_t x2 = high_mul(x, x), x3 = high_mul(x2, x), x4 = high_mul(x2, x2);
    int32_t poly = divide_by_pot(wrap_add(high_mul(wrap_add(divide_by_pot(x4, 2), x3), one_third), x2), 1);
    return wrap_add(exp_minus_eighth, high_mul(exp_minus_eighth, wrap_add(x, poly)));
}

/* exp(a) for a <= 0 in Q5.26 -> Q0.31: exp of a mod 1/4, times exp(-2^k) for each bit k of the rest */
static int32_t exp_negative(int32_t a) {
    /* exp(-1/4), exp(-1/2), exp(-1), exp(-2), exp(-4), exp(-8), exp(-16) in Q0.31 */
    static const int32_t factors[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    const int32_t quarter = 1 << 24;
    int32_t a_mod = wrap_sub(a & (quarter - 1), quarter);
    int32_t result = exp_quarter(shl_sat(a_mod, 5));
    int32_t remainder = wrap_sub(a_mod, a);
    for (int32_t k = 0; k < 7; ++k)
        if (remainder & (1 << (24 + k))) result = high_mul(result, factors[k]);
    return a == 0 ? INT32_MAX : result;
}

/* 1 / x for a positive x with `integer_bits` integer bits: Q0.31 and the bits it is over one */
static int32_t reciprocal(int32_t x, int32_t integer_bits, int32_t *bits_over) {
    int32_t headroom = 0;
    while (headroom < 32 && !((uint32_t)x & (0x80000000u >> headroom))) ++headroom;
    *bits_over = integer_bits - headroom;
    int32_t a = (int32_t)(((uint32_t)x << headroom) - 0x80000000u);
    int64_t sum = (int64_t)a + INT32_MAX;
    int32_t half = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t y = wrap_add(1515870810, high_mul(half, -1010580540));  /* 48/17 - 32/17 * half, Q2.29 */
    for (int32_t i = 0; i < 3; ++i) {
        int32_t e = wrap_sub(1 << 29, high_mul(half, y));
        y = wrap_add(y, shl_sat(high_mul(y, e), 2));
    }
    return shl_sat(y, 1);
}

/* int8 SOFTMAX to int8 (BITS 8) or int16 (BITS 16, LiteRT's int8-in, int16-out case): the output is
 * the probability in Q0.BITS less 2^(BITS - 1) (zero point -128 or -32768) */
#define TFL_SOFTMAX8(NAME, TO, BITS, LO, HI)                                                              \
    void NAME(const aotc_tfl_softmax_params *p, const int8_t *x, TO *y) {                                \
        for (int32_t r = 0; r < p->rows; ++r) {                                                         \
            const int8_t *xr = x + (int64_t)r * p->depth;                                               \
            TO *yr = y + (int64_t)r * p->depth;                                                         \
            int32_t top = -128, sum = 0, bits_over;                                                     \
            for (int32_t k = 0; k < p->depth; ++k) top = xr[k] > top ? xr[k] : top;                     \
            for (int32_t k = 0; k < p->depth; ++k) {                                                    \
                int32_t diff = xr[k] - top;                                                             \
                if (diff >= p->diff_min)                                                                \
                    sum = wrap_add(sum,                                                                 \
                                   divide_by_pot(exp_negative(high_mul(diff * (1 << p->shift), p->mult)), 12)); \
            }                                                                                           \
            int32_t scale = reciprocal(sum, 12, &bits_over);                                            \
            for (int32_t k = 0; k < p->depth; ++k) {                                                    \
                int32_t diff = xr[k] - top;                                                             \
                if (diff < p->diff_min) {                                                               \
                    yr[k] = (TO)(LO);                                                                   \
                    continue;                                                                           \
                }                                                                                       \
                int32_t e = exp_negative(high_mul(diff * (1 << p->shift), p->mult));                    \
                int32_t v = divide_by_pot(high_mul(scale, e), bits_over + 31 - (BITS)) + (LO);          \
                yr[k] = (TO)(v < (LO) ? (LO) : v > (HI) ? (HI) : v);                                    \
            }                                                                                           \
        }                                                                                               \
    }
TFL_SOFTMAX8(aotc_tfl_softmax_s8, int8_t, 8, -128, 127)
TFL_SOFTMAX8(aotc_tfl_softmax_s8_s16, int16_t, 16, -32768, 32767)

/* --- 16x8: int16 activations (zero point 0), int8 weights, int64 sums and biases ------------------ */
static int16_t clamp16(int64_t v, int32_t lo, int32_t hi) {
    return (int16_t)(v < lo ? lo : v > hi ? hi : v);
}

/* LiteRT's int64 MultiplyByQuantizedMultiplier: the multiplier rounded to its top 16 bits, one rounding */
static int64_t requant_reduced(int64_t acc, int32_t mult, int32_t shift) {
    int64_t m16 = mult < 0x7FFF0000 ? (mult + (1 << 15)) >> 16 : 0x7FFF;
    int32_t total = 15 - shift;
    return (acc * m16 + ((int64_t)1 << (total - 1))) >> total;
}

/* the full multiplier, one rounding: (acc * mult + 2^(30 - shift)) >> (31 - shift) */
static int64_t requant_full64(int64_t acc, int32_t mult, int32_t shift) {
    int32_t total = 31 - shift;
    return (acc * mult + ((int64_t)1 << (total - 1))) >> total;
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

TFL_TRANSPOSE_CONV(s16, int16_t, int64_t, requant_reduced, clamp16)

TFL_POOL(pool16, int16_t, -32768, clamp16)

void aotc_tfl_avgpool_s16(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y) { pool16(p, x, y, 1); }
void aotc_tfl_maxpool_s16(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y) { pool16(p, x, y, 0); }

TFL_QUANTIZE(s16, int16_t, 100000.0f, clamp16, -32768, 32767, int64_t)

/* --- 16x8 elementwise ops: LiteRT's reference kernels interpolate tables (aotc_tflite_int8.h) ------- */
static int32_t rescale16(const aotc_tfl_act16_params *p, int16_t x) {
    int32_t round = p->shift > 0 ? 1 << (p->shift - 1) : 0;
    return (x * p->mult + round) >> p->shift;
}

void aotc_tfl_logistic_s16(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y) {
    for (int64_t k = 0; k < p->count; ++k) {
        int32_t v = rescale16(p, x[k]);
        uint32_t a = v < 0 ? 0u - (uint32_t)v : (uint32_t)v, i = a >> 9, r;
        if (i >= 255) {
            r = 0x7FFFu << 10;  /* saturated */
        } else {
            uint32_t lo = p->table[i], hi = p->table[i + 1];
            r = (lo << 9) + (a & 0x1FFu) * (hi - lo);
        }
        r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;  /* sigmoid(-x) = 1 - sigmoid(x) */
        y[k] = (int16_t)(r >> 10);
    }
}

void aotc_tfl_tanh_s16(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y) {
    for (int64_t k = 0; k < p->count; ++k) {
        int32_t v = rescale16(p, x[k]), r;
        uint32_t a = v < 0 ? 0u - (uint32_t)v : (uint32_t)v, i = a >> 8;
        if (i >= 255) {
            r = 0xFFFF << 8;
        } else {
            uint32_t lo = p->table[i], hi = p->table[i + 1];
            r = (int32_t)((lo << 8) + (a & 0xFFu) * (hi - lo));
        }
        r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
        y[k] = (int16_t)(r >> 8);  /* arithmetic: floor */
    }
}

/* the table's value at v: anchor 256 + v / 128, plus the slope to the next times v's 7 low bits */
static int16_t lut16(const int16_t *t, int32_t v) {
    int32_t i = 256 + (v >> 7), low = v & 0x7F;
    int32_t base = t[i], slope = t[i + 1] - t[i];
    return (int16_t)(base + ((slope * low + 64) >> 7));
}

static int16_t softmax16_exp(const aotc_tfl_softmax16_params *p, int32_t diff) {
    int32_t v = requant_double(diff, p->mult, p->shift) + 32767;
    return lut16(p->exp_table, v < -32768 ? -32768 : v > 32767 ? 32767 : v);
}

/* the exps are computed twice rather than kept in y, which may share x's memory */
void aotc_tfl_softmax_s16(const aotc_tfl_softmax16_params *p, const int16_t *x, int16_t *y) {
    for (int32_t r = 0; r < p->rows; ++r) {
        const int16_t *xr = x + (int64_t)r * p->depth;
        int16_t *yr = y + (int64_t)r * p->depth;
        int32_t top = -32768, sum = 0, zeros = 0;
        for (int32_t k = 0; k < p->depth; ++k) top = xr[k] > top ? xr[k] : top;
        for (int32_t k = 0; k < p->depth; ++k) sum += softmax16_exp(p, xr[k] - top);
        while (zeros < 32 && !((uint32_t)sum & (0x80000000u >> zeros))) ++zeros;  /* the max's exp > 0 */
        /* sum normalised to [1, 2) in Q.14, less 1, recentred on [-32768, 32767] */
        int32_t shifted = (int32_t)((((int64_t)sum << (zeros - 1)) + (1 << 13)) >> 14) - (1 << 15) - (1 << 16);
        int32_t scale = lut16(p->recip_table, shifted < -32768 ? -32768 : shifted > 32767 ? 32767 : shifted);
        int32_t right = 31 - zeros;
        for (int32_t k = 0; k < p->depth; ++k) {
            int64_t v = ((int64_t)softmax16_exp(p, xr[k] - top) * scale + ((int64_t)1 << (right - 1))) >> right;
            yr[k] = (int16_t)(v < 0 ? 0 : v > 32767 ? 32767 : v);
        }
    }
}

/* ADD and SUB on int16: int8's with a left shift of 15 (LiteRT's general int16 path; SUB rescales both
 * inputs, then subtracts) */
static int32_t add16_one(const aotc_tfl_binary_params *p, int32_t x1, int32_t x2) {
    int32_t a = requant_double((x1 - p->x1_zero) * (1 << 15), p->m1, p->s1);
    int32_t b = requant_double((x2 - p->x2_zero) * (1 << 15), p->m2, p->s2);
    return requant_double(p->subtract ? a - b : a + b, p->mult, p->shift) + p->y_zero;
}

TFL_BINARY(binary16, int16_t, clamp16)

void aotc_tfl_add_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    binary16(p, x1, x2, y, add16_one);
}

/* MUL on int16 (zero points 0): the int32 product requantised as int8's (|x1 x2| <= 2^30) */
void aotc_tfl_mul_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    binary16(p, x1, x2, y, mul_one);
}

TFL_MEAN(s16, int16_t, clamp16, -32768, 32767)

/* --- the integer LSTM: gemmlowp's FixedPoint<int16_t, I> (aotc_tflite_int8.h) --------------------- */
static int16_t wrap16(int32_t v) { return (int16_t)(uint16_t)(uint32_t)v; }
static int16_t sat16(int32_t v) { return (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v); }

/* SaturatingRoundingDoublingHighMul on int16 */
static int16_t mul16(int16_t a, int16_t b) {
    if (a == -32768 && b == -32768) return 32767;
    int32_t ab = (int32_t)a * b;
    return (int16_t)((ab + (ab >= 0 ? 1 << 14 : 1 - (1 << 14))) / (1 << 15));
}

static int16_t shl16(int32_t x, int32_t e) { return sat16(x * (1 << e)); }

/* exp(a) for a in [-1/4, 0), Q0.15 */
static int16_t exp_quarter16(int16_t a) {
    const int16_t ct = 28918, third = 10923;  /* exp(-1/8), 1/3 in Q0.15 */
    int16_t x = wrap16(a + 4096), x2 = mul16(x, x), x3 = mul16(x2, x), x4 = mul16(x2, x2);
    int16_t t = (int16_t)divide_by_pot(wrap16(mul16(wrap16(divide_by_pot(x4, 2) + x3), third) + x2), 1);
    return sat16(ct + mul16(ct, wrap16(x + t)));
}

/* exp(a) for a <= 0 in Q(bits).(15 - bits), bits <= 5 -> Q0.15 */
static int16_t exp_negative16(int16_t a, int32_t bits) {
    /* exp(-1/4), exp(-1/2), exp(-1), exp(-2), exp(-4), exp(-8), exp(-16) in Q0.15 */
    static const int16_t factors[7] = {25520, 19875, 12055, 4435, 600, 11, 0};
    int32_t frac = 15 - bits, quarter = 1 << (frac - 2);
    int16_t amq = wrap16((a & (quarter - 1)) - quarter);
    int16_t result = exp_quarter16(shl16(amq, bits));
    int32_t remainder = wrap16(amq - a);
    for (int32_t k = 0; k < 7; ++k)
        if (bits > k - 2 && (remainder & (1 << (frac + k - 2)))) result = mul16(result, factors[k]);
    /* gemmlowp: below -32 (reachable with more than 5 integer bits) exp is 0; the factors above stop at
     * exp(-16), so without this a = -33 gave exp(-1) (the LSTM's tanh of a cell beyond 16 with tanh_bits 5, 6) */
    if (bits > 5 && a < -(32 << frac)) result = 0;
    return a == 0 ? 32767 : result;
}

/* 2 / (1 + a) for a in [0, 1] (Q0.15), Q2.13: three Newton-Raphson steps */
static int16_t newton16(int16_t a) {
    int32_t s = a + 32767;
    int16_t half = (int16_t)((s + (s >= 0 ? 1 : -1)) / 2);
    int16_t x = wrap16(23130 + mul16(half, -15420));  /* 48/17 and -32/17 in Q2.13 */
    for (int32_t i = 0; i < 3; ++i) x = wrap16(x + shl16(mul16(x, wrap16(8192 - mul16(half, x))), 2));
    return x;
}

static int16_t logistic16(int16_t a) {  /* Q3.12 -> Q0.15 */
    if (a == 0) return 16384;
    int16_t r = shl16(newton16(exp_negative16(a > 0 ? wrap16(-a) : a, 3)), 1);
    return a > 0 ? r : wrap16(32767 - r);
}

static int16_t tanh16(int16_t a, int32_t bits) {  /* Q(bits).(15 - bits) -> Q0.15 */
    if (a == 0) return 0;
    int16_t t = shl16(wrap16(newton16(exp_negative16(a < 0 ? a : wrap16(-a), bits + 1)) - 8192), 2);
    return a < 0 ? wrap16(-t) : t;
}

static int32_t dot8(const int8_t *a, const int8_t *b, int32_t n) {
    int32_t acc = 0;
    for (int32_t k = 0; k < n; ++k) acc += a[k] * b[k];
    return acc;
}

/* each cell's gates read all of x_t and h_(t-1) but only its own c: h_t is written to y's row t while
 * h_(t-1) is read from row t-1 (or h0), and c is updated in place in c_next */
void aotc_tfl_lstm_s8(const aotc_tfl_lstm8_params *p, const int8_t *x, const int8_t *wx, const int8_t *wh,
                      const int32_t *bx, const int32_t *bh, const int8_t *h0, const int16_t *c0, int8_t *y,
                      int8_t *h_next, int16_t *c_next) {
    int32_t n = p->n_cell;
    for (int64_t k = 0; k < (int64_t)p->batch * n; ++k) c_next[k] = c0[k];
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t t = 0; t < p->steps; ++t) {
            const int8_t *xt = x + ((int64_t)b * p->steps + t) * p->n_input;
            const int8_t *hp = t ? y + ((int64_t)b * p->steps + t - 1) * n : h0 + (int64_t)b * n;
            int8_t *ht = y + ((int64_t)b * p->steps + t) * n;
            for (int32_t k = 0; k < n; ++k) {
                int16_t gate[4];
                for (int32_t g = 0; g < 4; ++g) {
                    int32_t row = g * n + k;
                    int32_t ax = requant_double(bx[row] + dot8(wx + (int64_t)row * p->n_input, xt, p->n_input),
                                                p->mult[g], p->shift[g]);
                    int32_t ah = requant_double(bh[row] + dot8(wh + (int64_t)row * n, hp, n), p->mult[4 + g],
                                                p->shift[4 + g]);
                    int16_t pre = sat16(sat16(ax) + ah);
                    gate[g] = g == 2 ? tanh16(pre, 3) : logistic16(pre);
                }
                int16_t *c = c_next + (int64_t)b * n + k;
                int32_t v = sat16(wrap16(divide_by_pot(gate[1] * *c, 15)) +
                                  wrap16(divide_by_pot(gate[0] * gate[2], p->cell_shift)));
                if (p->clip > 0) v = v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
                *c = (int16_t)v;
                int16_t th = p->tanh_bits >= 0 ? tanh16(*c, p->tanh_bits) : gate[0];
                ht[k] = clamp8(requant_double(gate[3] * th, p->hidden_mult, p->hidden_shift) + p->hidden_zero,
                               -128, 127);
            }
        }
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t k = 0; k < n; ++k) h_next[(int64_t)b * n + k] = y[((int64_t)b * p->steps + p->steps - 1) * n + k];
}

void aotc_tfl_leaky_relu_s16(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y) {
    int32_t m2 = p->m2 < 0 ? -p->m2 : p->m2, sign = p->m2 < 0 ? -1 : 1;
    for (int64_t k = 0; k < p->count; ++k) {
        int32_t v = x[k] >= 0 ? requant_double(x[k], p->m1, p->s1) : sign * requant_double(x[k], m2, p->s2);
        y[k] = clamp16(v, p->y_min, p->y_max);
    }
}

/* --- SVDF, full integer (LiteRT's EvalIntegerSVDF) ------------------------------------------------ */
void aotc_tfl_svdf_s8(const aotc_tfl_svdf_params *p, const int8_t *x, const int8_t *wf, const int16_t *wt,
                      const int32_t *bias, const int16_t *state, int8_t *y, int16_t *state_next) {
    const int32_t n_unit = p->n_filter / p->rank, row = p->n_memory * p->n_filter;
    const int64_t size = (int64_t)p->batch * row;
    /* the state shifted left by one (the whole buffer, as LiteRT's std::copy), then each filter's newest
     * column: its feature sum, requantised to the state's scale and saturated to int16 */
    memmove(state_next, state + 1, (size_t)(size - 1) * sizeof(int16_t));
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t f = 0; f < p->n_filter; ++f) {
            const int8_t *xb = x + (int64_t)b * p->n_input, *wr = wf + (int64_t)f * p->n_input;
            int32_t acc = 0;
            for (int32_t k = 0; k < p->n_input; ++k) acc += wr[k] * (xb[k] - p->x_zero);
            int32_t v = requant_double(acc, p->mult1, p->shift1);
            state_next[(int64_t)b * row + (int64_t)f * p->n_memory + p->n_memory - 1] =
                (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
        }
    /* each unit: the time weights against its rank filters' memories, summed, plus the bias */
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t u = 0; u < n_unit; ++u) {
            int32_t sum = bias ? bias[u] : 0;
            for (int32_t r = 0; r < p->rank; ++r) {
                const int32_t f = u * p->rank + r;
                const int16_t *sr = state_next + (int64_t)b * row + (int64_t)f * p->n_memory;
                const int16_t *tr = wt + (int64_t)f * p->n_memory;
                int32_t dot = 0;
                for (int32_t k = 0; k < p->n_memory; ++k) dot += tr[k] * sr[k];
                sum += dot;
            }
            y[(int64_t)b * n_unit + u] = clamp8(requant_double(sum, p->mult2, p->shift2) + p->y_zero, -128, 127);
        }
}
