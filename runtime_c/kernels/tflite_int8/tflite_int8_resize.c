/* TFLite's integer RESIZE_BILINEAR (aotc_tflite_int8.h): LiteRT's ResizeBilinearInteger on int8 and int16, the
 * source positions in 10-bit fixed point, each output the four neighbours' products summed in 20 fraction
 * bits, divided by 2^20 rounding half away from zero (the build without TFLITE_SINGLE_ROUNDING). */
#include "tflite_int8_internal.h"

/* the source position of output index v (10 fraction bits) and its two neighbours, clamped to the input */
static void tfl_resize_source(int32_t v, int32_t scale, int32_t half_pixel, int32_t size, int32_t *pos, int32_t *lo,
                              int32_t *hi) {
    *pos = half_pixel ? v * scale + scale / 2 - (1 << 9) : v * scale;
    *lo = *pos / (1 << 10) > 0 ? *pos / (1 << 10) : 0;  /* C's division: toward zero, as LiteRT's */
    *hi = (*pos + (1 << 10) - 1) / (1 << 10) < size - 1 ? (*pos + (1 << 10) - 1) / (1 << 10) : size - 1;
}

/* output_20 / 2^20 rounded half away from zero */
static int32_t tfl_resize_round(int64_t v) {
    const int64_t round = v > 0 ? (1 << 19) : -(1 << 19);
    return (int32_t)((v + round) / (1 << 20));
}

#define TFL_RESIZE_BODY(T)                                                                                        \
    int32_t b, oy, ox, ch;                                                                                        \
    for (b = 0; b < p->n; ++b) {                                                                                  \
        const T *xb = x + (int64_t)b * p->h * p->w * p->c;                                                        \
        for (oy = 0; oy < p->oh; ++oy) {                                                                          \
            int32_t iy, y0, y1;                                                                                   \
            tfl_resize_source(oy, p->scale_h, p->half_pixel, p->h, &iy, &y0, &y1);                                \
            for (ox = 0; ox < p->ow; ++ox) {                                                                      \
                int32_t ix, x0, x1;                                                                               \
                tfl_resize_source(ox, p->scale_w, p->half_pixel, p->w, &ix, &x0, &x1);                            \
                {                                                                                                 \
                    const int64_t dy = iy - (1 << 10) * y0, dx = ix - (1 << 10) * x0;                             \
                    const T *r00 = xb + ((int64_t)y0 * p->w + x0) * p->c, *r10 = xb + ((int64_t)y1 * p->w + x0) * p->c; \
                    const T *r01 = xb + ((int64_t)y0 * p->w + x1) * p->c, *r11 = xb + ((int64_t)y1 * p->w + x1) * p->c; \
                    T *out = y + (((int64_t)b * p->oh + oy) * p->ow + ox) * p->c;                                 \
                    for (ch = 0; ch < p->c; ++ch) {                                                               \
                        const int64_t v = (int64_t)r00[ch] * ((1 << 10) - dy) * ((1 << 10) - dx) +                \
                                          (int64_t)r10[ch] * dy * ((1 << 10) - dx) +                              \
                                          (int64_t)r01[ch] * ((1 << 10) - dy) * dx + (int64_t)r11[ch] * dy * dx;  \
                        out[ch] = (T)tfl_resize_round(v);                                                         \
                    }                                                                                             \
                }                                                                                                 \
            }                                                                                                     \
        }                                                                                                         \
    }

void aotc_tfl_resize_bilinear_s8(const aotc_tfl_resize_params *p, const int8_t *x, int8_t *y) { TFL_RESIZE_BODY(int8_t) }

void aotc_tfl_resize_bilinear_s16(const aotc_tfl_resize_params *p, const int16_t *x, int16_t *y) {
    TFL_RESIZE_BODY(int16_t)
}
