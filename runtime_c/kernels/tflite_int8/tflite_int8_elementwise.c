/* TFLite's elementwise integer ops (aotc_tflite_int8.h): ADD / SUB (on cores with the DSP extension, each
 * input's rescaling tabulated by byte), MUL, MAXIMUM, MINIMUM and the 256-entry lookup table on int8;
 * ADD / SUB, MUL, LOGISTIC, TANH and LEAKY_RELU on 16x8's int16. */
#include "tflite_int8_internal.h"
#include "tflite_int8_dsp.h" /* the DSP extension's paths (Cortex-M4, M33, M55) and Helium's (M55) */

#if AOTC_QUANT_DSP

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

void aotc_tfl_max_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    binary16(p, x1, x2, y, max_one);
}

void aotc_tfl_min_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    binary16(p, x1, x2, y, min_one);
}

void aotc_tfl_leaky_relu_s16(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y) {
    int32_t m2 = p->m2 < 0 ? -p->m2 : p->m2, sign = p->m2 < 0 ? -1 : 1;
    for (int64_t k = 0; k < p->count; ++k) {
        int32_t v = x[k] >= 0 ? requant_double(x[k], p->m1, p->s1) : sign * requant_double(x[k], m2, p->s2);
        y[k] = clamp16(v, p->y_min, p->y_max);
    }
}

void aotc_tfl_lut_s16(const aotc_tfl_lut16_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const int32_t index = 256 + (x[k] >> 7), offset = x[k] & 0x7f;
        const int16_t slope = (int16_t)(p->table[index + 1] - p->table[index]); /* int16, as LiteRT's LUTLookup */
        y[k] = (int16_t)(p->table[index] + ((slope * offset + 64) >> 7));
    }
}

void aotc_tfl_sqrt_s16(const aotc_tfl_quantize_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const float v = p->scale * (float)x[k];
        const float q = (v > 0.0f ? sqrtf(v) : 0.0f) / p->y_scale;
        const int32_t out = q < 32767.0f ? (int32_t)q : 32767; /* truncated, as C++'s static_cast<int> */
        y[k] = (int16_t)out;
    }
}

void aotc_tfl_abs_s16(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const int32_t v = x[k] < 0 ? -(int32_t)x[k] : x[k];
        y[k] = clamp16(p->mult != 0 ? requant_double(v, p->mult, p->shift) : v, p->y_min, p->y_max);
    }
}
