/* TFLite's QUANTIZE and DEQUANTIZE, int8 and 16x8, and QUANTIZE between integer types (aotc_tflite_int8.h). */
#include "tflite_int8_internal.h"

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
TFL_REQUANTIZE(s8, int8_t, u8, uint8_t, 0, 255)
TFL_REQUANTIZE(u8, uint8_t, s8, int8_t, -128, 127)

TFL_QUANTIZE(s16, int16_t, 100000.0f, clamp16, -32768, 32767, int64_t)
