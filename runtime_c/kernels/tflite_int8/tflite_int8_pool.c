/* TFLite's AVERAGE_POOL_2D, MAX_POOL_2D and MEAN over H and W, int8 and 16x8 (aotc_tflite_int8.h). */
#include "tflite_int8_internal.h"

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

#if defined(__x86_64__) || defined(__i386__)
/* On x86 hosts the average a window at a time over runs of 64 channels (the sums vectorise across them; the
 * plain loop's order, channel by channel, reads every element a stride apart): the same sums and rounding. */
#if defined(__AVX512BW__) && defined(__AVX512VL__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#endif

/* acc[c] = the sum of channel c (< nc <= 64) over rows ys .. ye - 1 and columns xs .. xe - 1 of the image x */
static void avgpool_sums(const aotc_tfl_pool_params *p, const int8_t *x, int32_t ys, int32_t ye, int32_t xs,
                         int32_t xe, int32_t nc, int32_t *acc) {
#if defined(__AVX512BW__) && defined(__AVX512VL__) && !defined(AOTC_NO_INTRINSICS)
    for (int32_t c = 0; c < nc; c += 16) { /* 16 channels' sums in a register */
        const __mmask16 m = (__mmask16)(nc - c >= 16 ? 0xFFFFu : (1u << (nc - c)) - 1u);
        __m512i s = _mm512_setzero_si512();
        for (int32_t iy = ys; iy < ye; ++iy)
            for (int32_t ix = xs; ix < xe; ++ix)
                s = _mm512_add_epi32(s, _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x + ((int64_t)iy * p->w + ix) * p->c + c)));
        _mm512_mask_storeu_epi32(acc + c, m, s);
    }
#else
    for (int32_t c = 0; c < nc; ++c) acc[c] = 0;
    for (int32_t iy = ys; iy < ye; ++iy)
        for (int32_t ix = xs; ix < xe; ++ix) {
            const int8_t *xp = x + ((int64_t)iy * p->w + ix) * p->c;
            int32_t c = 0;
            for (; c + 16 <= nc; c += 16) /* (a constant count: one vector of sums) */
                for (int32_t j = 0; j < 16; ++j) acc[c + j] += xp[c + j];
            for (; c < nc; ++c) acc[c] += xp[c];
        }
#endif
}

static void avgpool_rows(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) {
    int32_t acc[64];
    for (int32_t b = 0; b < p->n; ++b)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t y0 = oy * p->sh - p->pad_top, x0 = ox * p->sw - p->pad_left;
                const int32_t ys = y0 < 0 ? 0 : y0, ye = y0 + p->kh < p->h ? y0 + p->kh : p->h;
                const int32_t xs = x0 < 0 ? 0 : x0, xe = x0 + p->kw < p->w ? x0 + p->kw : p->w;
                const int32_t count = (ye - ys) * (xe - xs);
                for (int32_t c0 = 0; c0 < p->c; c0 += 64) {
                    const int32_t nc = p->c - c0 < 64 ? p->c - c0 : 64;
                    avgpool_sums(p, x + ((int64_t)b * p->h * p->w) * p->c + c0, ys, ye, xs, xe, nc, acc);
                    int8_t *yp = y + (((int64_t)b * p->oh + oy) * p->ow + ox) * p->c + c0;
                    for (int32_t c = 0; c < nc; ++c) {
                        const int32_t a = count <= 0 ? acc[c]
                                          : acc[c] > 0 ? (acc[c] + count / 2) / count
                                                       : (acc[c] - count / 2) / count;
                        yp[c] = clamp8(a, p->y_min, p->y_max);
                    }
                }
            }
}

void aotc_tfl_avgpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { avgpool_rows(p, x, y); }
#else
void aotc_tfl_avgpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { pool(p, x, y, 1); }
#endif
void aotc_tfl_maxpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { pool(p, x, y, 0); }

TFL_POOL(pool16, int16_t, -32768, clamp16)

void aotc_tfl_avgpool_s16(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y) { pool16(p, x, y, 1); }
void aotc_tfl_maxpool_s16(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y) { pool16(p, x, y, 0); }

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

TFL_MEAN(s16, int16_t, clamp16, -32768, 32767)
