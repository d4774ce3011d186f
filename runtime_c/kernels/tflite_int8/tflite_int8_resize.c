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

/* each output: the four neighbours' products with their weights (w00 + w10 + w01 + w11 = 2^20), summed in ACC
 * (int32 holds int8's: 4 x 128 x 2^20 < 2^31; int64 int16's), divided by 2^20 rounding half away from zero:
 * LiteRT's (v + sign(v) 2^19) / 2^20 with C's truncating division, written as the rounded magnitude, signed */
#define TFL_RESIZE_BODY(T, ACC)                                                                                   \
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
                    const ACC dy = iy - (1 << 10) * y0, dx = ix - (1 << 10) * x0;                                 \
                    const ACC w00 = ((1 << 10) - dy) * ((1 << 10) - dx), w10 = dy * ((1 << 10) - dx);             \
                    const ACC w01 = ((1 << 10) - dy) * dx, w11 = dy * dx;                                         \
                    const T *r00 = xb + ((int64_t)y0 * p->w + x0) * p->c;                                         \
                    const T *r10 = xb + ((int64_t)y1 * p->w + x0) * p->c;                                         \
                    const T *r01 = xb + ((int64_t)y0 * p->w + x1) * p->c;                                         \
                    const T *r11 = xb + ((int64_t)y1 * p->w + x1) * p->c;                                         \
                    T *out = y + (((int64_t)b * p->oh + oy) * p->ow + ox) * p->c;                                 \
                    for (ch = 0; ch < p->c; ++ch) {                                                               \
                        const ACC v = r00[ch] * w00 + r10[ch] * w10 + r01[ch] * w01 + r11[ch] * w11;              \
                        const ACC sign = v < 0 ? -1 : 0, mag = (v ^ sign) - sign;    /* |v|, branch-free */      \
                        out[ch] = (T)((((mag + (1 << 19)) >> 20) ^ sign) - sign);                                 \
                    }                                                                                             \
                }                                                                                                 \
            }                                                                                                     \
        }                                                                                                         \
    }

void aotc_tfl_resize_bilinear_s8(const aotc_tfl_resize_params *p, const int8_t *x, int8_t *y) {
    TFL_RESIZE_BODY(int8_t, int32_t)
}

void aotc_tfl_resize_bilinear_s16(const aotc_tfl_resize_params *p, const int16_t *x, int16_t *y) {
    TFL_RESIZE_BODY(int16_t, int64_t)
}
