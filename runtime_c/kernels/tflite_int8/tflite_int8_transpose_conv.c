/* TFLite's TRANSPOSE_CONV, int8 and 16x8 (aotc_tflite_int8.h). */
#include "tflite_int8_internal.h"

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

TFL_TRANSPOSE_CONV(s16, int16_t, int64_t, requant_reduced, clamp16)
