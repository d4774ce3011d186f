/* TFLite's AVERAGE_POOL_2D, MAX_POOL_2D and MEAN over H and W, int8 and 16x8 (aotc_tflite_int8.h). */
#include "aotc_threads.h"
#include "tflite_int8_internal.h"
#include "quant_dsp.h" /* AOTC_QUANT_DSP: the DSP extension's average */
#include <stddef.h> /* ptrdiff_t */

/* Average (rounded half away from zero) and max pooling over the window inside the input, one body
 * for int8 and 16x8's int16 (LOWEST: the type's minimum; CLAMP: to the fused activation's range). */
#define TFL_POOL(NAME, T, LOWEST, CLAMP)                                                                  \
    static TFL_UNUSED void NAME(const aotc_tfl_pool_params *p, const T *x, T *y, int average) {        \
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
#elif AOTC_QUANT_DSP && AOTC_TFL_POOL_DSP /* (0: the plain loop, a --flash-budget level's) */
/* With the DSP extension a window's sums four channels at a time: a word of the input (4 channels) added to
 * two words of 16-bit sums by SXTAB16 (channels 0, 2) and SXTAB16 ror 8 (1, 3), an output position's channels
 * quad by quad, each quad's window in registers. The halves hold any sum of at most 256 int8 (|sum| <= 32768;
 * a larger window takes the plain loop). VWW -O3's 3 x 3 x 256: 62,066 est. cycles in the plain loop (27 an
 * input element: the 64-bit indexing and the loads byte by byte, channel by channel), 17,911 so with C's division
 * and clamp a channel (gcc reloaded p's fields after each byte's store), 14,280 with the division a multiply and
 * a word stored a quad, 13,134 with the 4 clamps as 2 SSUB8 / SEL pairs (KWS's 25 x 5 x 64 and IC's 8 x 8 x 64
 * gain 91 K and 42 K). */
/* TFLite's (sum +- count / 2) / count, rounded half away from zero, as a multiply: |sum| + count / 2 = n
 * < 2^16 and m = ceil(2^32 / count) (2^32 - 1 for a window of 1, with n one more), so n * m / 2^32 is n / count
 * plus less than 2^-16, which never reaches the next integer (n / count's fraction is at most 1 - 1/256). */
static inline int32_t avgpool_div(int32_t acc, uint32_t half, uint32_t m) {
    const uint32_t n = (uint32_t)(acc < 0 ? -acc : acc) + half;
    const int32_t a = (int32_t)(((uint64_t)n * m) >> 32);
    return acc < 0 ? -a : a;
}

/* the averages (each an int8) of channels 0 to 3 as a word's bytes, clamped to [lo, hi] (lo4, hi4: 4 copies):
 * SSUB8 and SEL 4 at a time where assembly is allowed */
static inline uint32_t avgpool_quad(int32_t a0, int32_t a1, int32_t a2, int32_t a3, int32_t lo, int32_t hi,
                                    uint32_t lo4, uint32_t hi4) {
#if AOTC_DSP_ASM
    uint32_t v = ((uint32_t)a0 & 0xFFu) | ((uint32_t)a1 & 0xFFu) << 8 | ((uint32_t)a2 & 0xFFu) << 16 | (uint32_t)a3 << 24, t;
    (void)lo, (void)hi;
    __asm__("ssub8 %1, %0, %2\n\tsel %0, %0, %2\n\tssub8 %1, %3, %0\n\tsel %0, %0, %3"
            : "+r"(v), "=&r"(t) : "r"(lo4), "r"(hi4) : "cc");
    return v;
#else
    (void)lo4, (void)hi4;
    a0 = a0 < lo ? lo : a0 > hi ? hi : a0, a1 = a1 < lo ? lo : a1 > hi ? hi : a1;
    a2 = a2 < lo ? lo : a2 > hi ? hi : a2, a3 = a3 < lo ? lo : a3 > hi ? hi : a3;
    return ((uint32_t)a0 & 0xFFu) | ((uint32_t)a1 & 0xFFu) << 8 | ((uint32_t)a2 & 0xFFu) << 16 | (uint32_t)a3 << 24;
#endif
}

static inline uint32_t avgpool_sxtab16_hi(uint32_t acc, uint32_t v) {
#if AOTC_DSP_ASM
    uint32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(v));
    return r;
#else
    return (uint32_t)__sxtab16((int32_t)acc, (int32_t)aotc_dsp_ror8(v));
#endif
}

static void avgpool_dsp(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) {
    const int32_t c = p->c, nq = c >> 2, lo = p->y_min, hi = p->y_max;
    const uint32_t lo4 = ((uint32_t)lo & 0xFFu) * 0x01010101u, hi4 = ((uint32_t)hi & 0xFFu) * 0x01010101u;
    const ptrdiff_t row = (ptrdiff_t)p->w * c;
    for (int32_t b = 0; b < p->n; ++b, x += (ptrdiff_t)p->h * row)
        for (int32_t oy = 0; oy < p->oh; ++oy)
            for (int32_t ox = 0; ox < p->ow; ++ox, y += c) {
                const int32_t y0 = oy * p->sh - p->pad_top, x0 = ox * p->sw - p->pad_left;
                const int32_t ys = y0 < 0 ? 0 : y0, ye = y0 + p->kh < p->h ? y0 + p->kh : p->h;
                const int32_t xs = x0 < 0 ? 0 : x0, xe = x0 + p->kw < p->w ? x0 + p->kw : p->w;
                const int32_t count = (ye - ys) * (xe - xs), nx = xe - xs, ny = ye - ys;
                const int8_t *x00 = x + ys * row + (ptrdiff_t)xs * c;
                if (count <= 0) { /* (no window inside the input: the plain loop's 0) */
                    for (int32_t ch = 0; ch < c; ++ch) y[ch] = (int8_t)clamp8(0, lo, hi);
                    continue;
                }
                const uint32_t half = count == 1 ? 1u : (uint32_t)count / 2u;
                const uint32_t m = count == 1 ? 0xFFFFFFFFu : 0xFFFFFFFFu / (uint32_t)count + 1u;
                for (int32_t q = 0; q < nq; ++q) {
                    uint32_t e = 0, o = 0;
                    const int8_t *r = x00 + 4 * q;
                    for (int32_t iy = 0; iy < ny; ++iy, r += row) {
                        const int8_t *t = r;
                        for (int32_t ix = 0; ix < nx; ++ix, t += c) {
                            const uint32_t v = aotc_dsp_load32(t);
                            e = (uint32_t)__sxtab16((int32_t)e, (int32_t)v), o = avgpool_sxtab16_hi(o, v);
                        }
                    }
                    const uint32_t w = avgpool_quad(avgpool_div((int16_t)e, half, m), avgpool_div((int16_t)o, half, m),
                                                    avgpool_div((int32_t)e >> 16, half, m),
                                                    avgpool_div((int32_t)o >> 16, half, m), lo, hi, lo4, hi4);
                    memcpy(y + 4 * q, &w, 4); /* (one STR: the cores with the DSP extension store unaligned words) */
                }
                for (int32_t ch = 4 * nq; ch < c; ++ch) { /* the last 1 to 3 channels */
                    int32_t acc = 0;
                    const int8_t *r = x00 + ch;
                    for (int32_t iy = 0; iy < ny; ++iy, r += row)
                        for (int32_t ix = 0; ix < nx; ++ix) acc += r[(ptrdiff_t)ix * c];
                    y[ch] = (int8_t)clamp8(avgpool_div(acc, half, m), lo, hi);
                }
            }
}

void aotc_tfl_avgpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) {
    if (p->kh * p->kw <= 256) avgpool_dsp(p, x, y);
    else pool(p, x, y, 1);
}
#else
void aotc_tfl_avgpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { pool(p, x, y, 1); }
#endif
#if defined(__x86_64__) || defined(__i386__)
/* MAX_POOL_2D on x86 hosts: a window at a time over runs of 64 channels (AVX-512BW: one register; the plain loop reads
 * each channel's window a stride apart), output rows over a --threads pool where the pool has enough to do: the
 * same max and clamp */
typedef struct {
    const aotc_tfl_pool_params *p;
    const int8_t *x;
    int8_t *y;
} maxpool_job;

#if !(defined(__AVX512BW__) && defined(__AVX512VL__)) && defined(__AVX2__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
/* AVX2 without AVX-512: y[c] for channels c < nc (<= 64) of one output position, 32 channels a register, the last
 * 1-31 a byte at a time (gcc had left the byte loop over acc[64] scalar: ResNet-50's 3 x 3 / 2 pool 123 us at
 * -march=x86-64-v3, OpenVINO-AVX2's 66) */
static void maxpool_avx2(const aotc_tfl_pool_params *p, const int8_t *x, int32_t ys, int32_t ye, int32_t xs,
                         int32_t xe, int32_t nc, int8_t *y) {
    const __m256i lo = _mm256_set1_epi8((char)p->y_min), hi = _mm256_set1_epi8((char)p->y_max);
    int32_t c = 0;
    for (; c + 32 <= nc; c += 32) {
        __m256i acc = _mm256_set1_epi8(-128);
        for (int32_t iy = ys; iy < ye; ++iy)
            for (int32_t ix = xs; ix < xe; ++ix)
                acc = _mm256_max_epi8(acc, _mm256_loadu_si256((const __m256i *)(x + ((int64_t)iy * p->w + ix) * p->c + c)));
        _mm256_storeu_si256((__m256i *)(y + c), _mm256_min_epi8(_mm256_max_epi8(acc, lo), hi));
    }
    for (; c < nc; ++c) {
        int32_t acc = -128;
        for (int32_t iy = ys; iy < ye; ++iy)
            for (int32_t ix = xs; ix < xe; ++ix) {
                const int32_t v = x[((int64_t)iy * p->w + ix) * p->c + c];
                acc = v > acc ? v : acc;
            }
        y[c] = (int8_t)clamp8(acc, p->y_min, p->y_max);
    }
}
#endif

static void maxpool_rows(void *ctx, int32_t begin, int32_t end) {
    const maxpool_job *J = (const maxpool_job *)ctx;
    const aotc_tfl_pool_params *p = J->p;
    for (int32_t r = begin; r < end; ++r) {
        const int32_t b = r / p->oh, y0 = r % p->oh * p->sh - p->pad_top;
        const int32_t ys = y0 < 0 ? 0 : y0, ye = y0 + p->kh < p->h ? y0 + p->kh : p->h;
        const int8_t *xb = J->x + (int64_t)b * p->h * p->w * p->c;
        for (int32_t ox = 0; ox < p->ow; ++ox) {
            const int32_t x0 = ox * p->sw - p->pad_left;
            const int32_t xs = x0 < 0 ? 0 : x0, xe = x0 + p->kw < p->w ? x0 + p->kw : p->w;
            int8_t *yp = J->y + ((int64_t)r * p->ow + ox) * p->c;
            for (int32_t c0 = 0; c0 < p->c; c0 += 64) {
                const int32_t nc = p->c - c0 < 64 ? p->c - c0 : 64;
#if defined(__AVX512BW__) && defined(__AVX512VL__) && !defined(AOTC_NO_INTRINSICS)
                const __mmask64 m = nc == 64 ? ~(__mmask64)0 : ((__mmask64)1 << nc) - 1;
                __m512i acc = _mm512_set1_epi8(-128);
                for (int32_t iy = ys; iy < ye; ++iy)
                    for (int32_t ix = xs; ix < xe; ++ix)
                        acc = _mm512_max_epi8(acc, _mm512_maskz_loadu_epi8(m, xb + ((int64_t)iy * p->w + ix) * p->c + c0));
                acc = _mm512_min_epi8(_mm512_max_epi8(acc, _mm512_set1_epi8((char)p->y_min)), _mm512_set1_epi8((char)p->y_max));
                _mm512_mask_storeu_epi8(yp + c0, m, acc);
#elif defined(__AVX2__) && !defined(AOTC_NO_INTRINSICS)
                maxpool_avx2(p, xb + c0, ys, ye, xs, xe, nc, yp + c0);
#else
                int8_t acc[64];
                for (int32_t c = 0; c < nc; ++c) acc[c] = -128;
                for (int32_t iy = ys; iy < ye; ++iy)
                    for (int32_t ix = xs; ix < xe; ++ix) {
                        const int8_t *xp = xb + ((int64_t)iy * p->w + ix) * p->c + c0;
                        for (int32_t c = 0; c < nc; ++c) acc[c] = xp[c] > acc[c] ? xp[c] : acc[c];
                    }
                for (int32_t c = 0; c < nc; ++c) yp[c0 + c] = (int8_t)clamp8(acc[c], p->y_min, p->y_max);
#endif
            }
        }
    }
}

/* the fewest window elements a MAX_POOL_2D splits over a --threads pool */
#define TFL_MAXPOOL_POOL_MIN (1 << 18)

void aotc_tfl_maxpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) {
    maxpool_job J;
    J.p = p, J.x = x, J.y = y;
    if ((int64_t)p->n * p->oh * p->ow * p->c * p->kh * p->kw >= TFL_MAXPOOL_POOL_MIN)
        aotc_parallel_for(maxpool_rows, &J, p->n * p->oh);
    else
        maxpool_rows(&J, 0, p->n * p->oh);
}
#else
void aotc_tfl_maxpool_s8(const aotc_tfl_pool_params *p, const int8_t *x, int8_t *y) { pool(p, x, y, 0); }
#endif

TFL_POOL(pool16, int16_t, -32768, clamp16)

void aotc_tfl_avgpool_s16(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y) { pool16(p, x, y, 1); }
void aotc_tfl_maxpool_s16(const aotc_tfl_pool_params *p, const int16_t *x, int16_t *y) { pool16(p, x, y, 0); }

/* MEAN over the spatial positions, int8's algorithm for both widths (int16 saturates at its own range): the
 * channels in runs of TFL_MEAN_RUN, each position's run added to the run's sums, so x is read in order and the
 * adds vectorise (a squeeze-and-excite's MEAN over 7 x 7 x 1152 read a channel at a time, 49 loads a stride apart:
 * 19 % of EfficientNet-B0 int8 on the host, issue 64); one channel (a layer norm's mean over the last axis) by a
 * contiguous loop. Integer sums: the same in any order. */
#define TFL_MEAN_RUN 64
#define TFL_MEAN(SFX, T, CLAMP, LO, HI)                                                                   \
    void aotc_tfl_mean_##SFX(const aotc_tfl_mean_params *p, const T *x, T *y) {                          \
        for (int32_t b = 0; b < p->n; ++b) {                                                            \
            if (p->c == 1) {                                                                            \
                const T *xb = x + (int64_t)b * p->hw;                                                   \
                int32_t acc = -p->x_zero * p->hw;                                                       \
                for (int32_t k = 0; k < p->hw; ++k) acc += xb[k];                                       \
                y[b] = CLAMP(requant_double(acc, p->mult, p->shift) + p->y_zero, LO, HI);               \
                continue;                                                                               \
            }                                                                                           \
            for (int32_t c0 = 0; c0 < p->c; c0 += TFL_MEAN_RUN) {                                       \
                const int32_t nc = p->c - c0 < TFL_MEAN_RUN ? p->c - c0 : TFL_MEAN_RUN;                 \
                int32_t acc[TFL_MEAN_RUN];                                                              \
                for (int32_t j = 0; j < nc; ++j) acc[j] = -p->x_zero * p->hw;                           \
                for (int32_t k = 0; k < p->hw; ++k) {                                                   \
                    const T *xp = x + ((int64_t)b * p->hw + k) * p->c + c0;                             \
                    for (int32_t j = 0; j < nc; ++j) acc[j] += xp[j];                                   \
                }                                                                                       \
                for (int32_t j = 0; j < nc; ++j)                                                        \
                    y[(int64_t)b * p->c + c0 + j] =                                                     \
                        CLAMP(requant_double(acc[j], p->mult, p->shift) + p->y_zero, LO, HI);           \
            }                                                                                           \
        }                                                                                               \
    }

TFL_MEAN(s8, int8_t, clamp8, -128, 127)

TFL_MEAN(s16, int16_t, clamp16, -32768, 32767)
