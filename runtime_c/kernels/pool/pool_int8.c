/* ONNX MaxPool on 8-bit integers (quantized models; kept apart from pool.c's float pools, so that a
 * float net does not compile it).
 *
 * Window by window: for each output, the range of taps inside the input on each
 * dim (tap_range), then the max over them. 2-D pools with no dilation and rows of at most
 * AOTC_MAXPOOL_INT_ROW take each output row in two passes instead (maxpool_int_rows):
 * the max down the window's input rows, a whole row at a time, into a row padded
 * with the type's lowest value, then across the window's columns, a tap for the
 * whole output row at a time (loops compilers vectorise). With SSE2 (x86 hosts), rows of 16
 * bytes or more at stride 1 take both passes 16 bytes at a time in registers, the last 16
 * ending at the row's end (a max may take bytes twice; compilers leave rows shorter than
 * their widest vector to scalar code), through two row buffers in turn (a row's taps then
 * read bytes stored a row before: loads across recent stores at other offsets stall). At stride
 * 2 (ResNet's 3 x 3 stem pool) the pass across columns splits 32 bytes into their even and odd
 * bytes (maxpool_cols16_s2), the row pass being the same. */
#include "pool_windows.h"

#define AOTC_MAXPOOL_INT_ROW 256 /* bytes on the stack: small, for microcontrollers */
#if defined(__AVX512BW__) && defined(__AVX512VBMI__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#include <stdint.h>
/* The bits t < 64 of a load from column s of a row of w bytes that fall inside it */
static inline __mmask64 maxpool_cols64(int32_t s, int32_t w) {
    const int32_t lo = s < 0 ? -s : 0, hi = w - s;
    if (lo >= 64 || hi <= lo) return 0;
    return (hi >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << hi) - 1) & ~(((__mmask64)1 << lo) - 1);
}

/* With AVX-512 BW and VBMI, a 2-D pool with no dilation at column stride 1 or 2 (windows of at most 64
 * columns) in one pass, no row buffer: per step of 64 / stride outputs, the max down the window's rows of the
 * 128 bytes under them (loads masked to the row, the padding the type's lowest), then tap kw across as the bytes
 * stride j + kw of the 128 (vpermt2b). The two passes through a row buffer (SSE2, below) read bytes just stored
 * at other offsets and sizes, and waited on them: ResNet-18's int8 stem pool (64 planes of 112 x 112) took 62 us,
 * 1.3 % of the net. signed: int8 (compared as such), else uint8. */
static int maxpool_direct(const aotc_pool_params *p, const uint8_t *x, uint8_t *y, int is_signed) {
    const int32_t in_h = p->in[1], in_w = p->in[2], out_h = p->out[1], out_w = p->out[2];
    const int32_t k_h = p->kernel[1], k_w = p->kernel[2], sh = p->strides[1], sw = p->strides[2];
    const int32_t step = 64 / (sw > 0 ? sw : 1);
    const __m512i low = _mm512_set1_epi8((char)(is_signed ? 0x80 : 0)), one = _mm512_set1_epi8(1);
    uint8_t lanes[64];
    __m512i base;
    int32_t c, oh, i, r, kw;
    if (p->in[0] != 1 || p->out[0] != 1 || p->kernel[0] != 1 || p->pads_begin[0] != 0 || p->dilations[1] != 1 ||
        p->dilations[2] != 1 || (sw != 1 && sw != 2) || k_w > 64) {
        return 0;
    }
    for (i = 0; i < 64; ++i) lanes[i] = (uint8_t)(sw * i);
    base = _mm512_loadu_si512((const void *)lanes);
    for (c = 0; c < p->planes; ++c, x += (int64_t)in_h * in_w) {
        for (oh = 0; oh < out_h; ++oh, y += out_w) {
            const int32_t top = oh * sh - p->pads_begin[1];
            const int32_t h0 = top < 0 ? 0 : top, h1 = top + k_h < in_h ? top + k_h : in_h;
            for (i = 0; i < out_w; i += step) {
                const int32_t s = i * sw - p->pads_begin[2]; /* the column of output i's first tap */
                const __mmask64 ma = maxpool_cols64(s, in_w), mb = maxpool_cols64(s + 64, in_w);
                const __mmask64 keep = out_w - i >= step ? (step == 64 ? ~(__mmask64)0 : ((__mmask64)1 << step) - 1)
                                                          : ((__mmask64)1 << (out_w - i)) - 1;
                __m512i a = low, b = low, idx = base, v;
                for (r = h0; r < h1; ++r) { /* (addresses as integers: the first step's starts before the row) */
                    const uintptr_t at = (uintptr_t)(x + (int64_t)r * in_w) + (uintptr_t)(intptr_t)s;
                    const __m512i ra = _mm512_mask_loadu_epi8(low, ma, (const void *)at);
                    const __m512i rb = _mm512_mask_loadu_epi8(low, mb, (const void *)(at + 64));
                    a = is_signed ? _mm512_max_epi8(a, ra) : _mm512_max_epu8(a, ra);
                    b = is_signed ? _mm512_max_epi8(b, rb) : _mm512_max_epu8(b, rb);
                }
                v = _mm512_permutex2var_epi8(a, idx, b);
                for (kw = 1; kw < k_w; ++kw) {
                    const __m512i t = _mm512_permutex2var_epi8(a, idx = _mm512_add_epi8(idx, one), b);
                    v = is_signed ? _mm512_max_epi8(v, t) : _mm512_max_epu8(v, t);
                }
                _mm512_mask_storeu_epi8((void *)(y + i), keep, v);
            }
        }
    }
    return 1;
}
#define AOTC_MAXPOOL_DIRECT(p, x, y, is_signed) \
    maxpool_direct(p, (const uint8_t *)(const void *)(x), (uint8_t *)(void *)(y), is_signed)
#else
#define AOTC_MAXPOOL_DIRECT(p, x, y, is_signed) 0
#endif
#if (defined(__SSE2__) || defined(_M_X64)) && !defined(AOTC_NO_INTRINSICS)
#include <emmintrin.h>
#define AOTC_MAXPOOL_INT_SSE2 1
/* y[0..n) = max over rows r < nr of src[r * stride + 0..n) (n >= 16; bytes as unsigned, or signed
 * with flip 0x80): 16 at a time in registers, the last 16 ending at n. */
static void maxpool_rows16(uint8_t *AOTC_RESTRICT y, const uint8_t *AOTC_RESTRICT src, int64_t stride, int32_t nr,
                           int32_t n, int flip) {
    const __m128i f = _mm_set1_epi8((char)(flip ? 0x80 : 0));
    int32_t i, r;
    for (i = 0; i < n; i += 16) {
        const int32_t at = i + 16 <= n ? i : n - 16;
        __m128i m = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(src + at)), f);
        for (r = 1; r < nr; ++r) {
            m = _mm_max_epu8(m, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(src + r * stride + at)), f));
        }
        _mm_storeu_si128((__m128i *)(void *)(y + at), _mm_xor_si128(m, f));
    }
}

/* y[j] = max over taps kw < k of row[2 * j + kw] for j < n (n >= 16; bytes as unsigned, or signed
 * with flip 0x80): 16 outputs at a time, the last 16 ending at n. Tap 2m is the even bytes of the
 * 32 from row + 2m, tap 2m + 1 their odd bytes: each 16-bit word masked to its low byte or shifted
 * down by 8 holds 0..255, so packing words to bytes never saturates. Reads row[0 .. 2n + k - 1)
 * for odd k: one byte past the windows' span (2n + k - 2), whose lane is dropped; the caller's
 * row holds it. */
static void maxpool_cols16_s2(uint8_t *AOTC_RESTRICT y, const uint8_t *AOTC_RESTRICT row, int32_t k, int32_t n,
                              int flip) {
    const __m128i f = _mm_set1_epi8((char)(flip ? 0x80 : 0)), low = _mm_set1_epi16(0x00ff);
    int32_t i, kw;
    for (i = 0; i < n; i += 16) {
        const int32_t at = i + 16 <= n ? i : n - 16;
        const uint8_t *src = row + 2 * at;
        __m128i m = _mm_setzero_si128(); /* the lowest value once flipped: every tap is at least it */
        for (kw = 0; kw < k; kw += 2) {
            const __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(src + kw)), f);
            const __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(src + kw + 16)), f);
            m = _mm_max_epu8(m, _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low)));
            if (kw + 1 < k) m = _mm_max_epu8(m, _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8)));
        }
        _mm_storeu_si128((__m128i *)(void *)(y + at), _mm_xor_si128(m, f));
    }
}
#else
#define AOTC_MAXPOOL_INT_SSE2 0
#define maxpool_rows16(y, src, stride, nr, n, flip) ((void)(y), (void)(src), (void)(stride), (void)(nr), (void)(n), (void)(flip))
#define maxpool_cols16_s2(y, row, k, n, flip) ((void)(y), (void)(row), (void)(k), (void)(n), (void)(flip))
#endif

#define AOTC_MAXPOOL_INT(SUFFIX, T, LOWEST)                                                         \
    static int maxpool_rows_##SUFFIX(const aotc_pool_params *p, const T *AOTC_RESTRICT x, T *AOTC_RESTRICT y) { \
        const int32_t in_h = p->in[1], in_w = p->in[2], out_h = p->out[1], out_w = p->out[2];       \
        const int32_t k_w = p->kernel[2], sw = p->strides[2], lead = p->pads_begin[2];              \
        const int32_t span = (out_w - 1) * sw + k_w; /* padded columns the windows cover */          \
        T col[AOTC_MAXPOOL_INT_SSE2 + 1][AOTC_MAXPOOL_INT_ROW];                                    \
        int32_t c, oh, ow, kh, kw, i;                                                              \
        if (p->in[0] != 1 || p->out[0] != 1 || p->kernel[0] != 1 || p->pads_begin[0] != 0 ||      \
            p->dilations[1] != 1 || p->dilations[2] != 1 || span > AOTC_MAXPOOL_INT_ROW ||         \
            lead + in_w > AOTC_MAXPOOL_INT_ROW) {                                                  \
            return 0;                                                                              \
        }                                                                                          \
        for (i = 0; i < AOTC_MAXPOOL_INT_ROW; ++i) { /* the padding never wins */                  \
            col[0][i] = LOWEST;                                                                    \
            col[AOTC_MAXPOOL_INT_SSE2][i] = LOWEST;                                                \
        }                                                                                          \
        if (AOTC_MAXPOOL_INT_SSE2 && (sw == 1 || (sw == 2 && span + 1 <= AOTC_MAXPOOL_INT_ROW)) &&   \
            in_w >= 16 && out_w >= 16) {                                                           \
            for (c = 0; c < p->planes; ++c, x += (int64_t)in_h * in_w) {                          \
                for (oh = 0; oh < out_h; ++oh, y += out_w) {                                       \
                    const int32_t sh = oh * p->strides[1] - p->pads_begin[1];                      \
                    const int32_t h0 = sh < 0 ? 0 : sh;                                            \
                    const int32_t h1 = sh + p->kernel[1] < in_h ? sh + p->kernel[1] : in_h;        \
                    T *row = col[oh & 1];                                                          \
                    if (h1 > h0) {                                                                 \
                        maxpool_rows16((uint8_t *)(void *)(row + lead), (const uint8_t *)(const void *)(x + (int64_t)h0 * in_w), \
                                       in_w, h1 - h0, in_w, (T)-1 < 0);                            \
                    } else {                                                                       \
                        for (i = 0; i < in_w; ++i) row[lead + i] = LOWEST;                         \
                    }                                                                              \
                    if (sw == 1) {                                                                 \
                        maxpool_rows16((uint8_t *)(void *)y, (const uint8_t *)(const void *)row, 1, k_w, out_w, (T)-1 < 0); \
                    } else {                                                                       \
                        maxpool_cols16_s2((uint8_t *)(void *)y, (const uint8_t *)(const void *)row, k_w, out_w, (T)-1 < 0); \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            return 1;                                                                              \
        }                                                                                          \
        for (c = 0; c < p->planes; ++c, x += (int64_t)in_h * in_w) {                              \
            for (oh = 0; oh < out_h; ++oh, y += out_w) {                                           \
                const int32_t sh = oh * p->strides[1] - p->pads_begin[1];                          \
                const int32_t h0 = sh < 0 ? 0 : sh;                                                \
                const int32_t h1 = sh + p->kernel[1] < in_h ? sh + p->kernel[1] : in_h;            \
                T *AOTC_RESTRICT body = col[0] + lead;                                             \
                for (i = 0; i < in_w; ++i) body[i] = LOWEST;                                       \
                for (kh = h0; kh < h1; ++kh) {                                                     \
                    const T *r = x + (int64_t)kh * in_w;                                           \
                    for (i = 0; i < in_w; ++i) body[i] = r[i] > body[i] ? r[i] : body[i];          \
                }                                                                                  \
                for (ow = 0; ow < out_w; ++ow) y[ow] = LOWEST;                                     \
                for (kw = 0; kw < k_w; ++kw) {                                                     \
                    const T *tap = col[0] + kw;                                                    \
                    for (ow = 0; ow < out_w; ++ow) {                                               \
                        const T v = tap[(int64_t)ow * sw];                                         \
                        y[ow] = v > y[ow] ? v : y[ow];                                             \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        return 1;                                                                                  \
    }                                                                                              \
    void aotc_maxpool_##SUFFIX(const aotc_pool_params *p, const T *AOTC_RESTRICT x, T *AOTC_RESTRICT y) { \
        const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];                           \
        int32_t c, od, oh, ow, kd, kh, kw;                                                         \
        if (AOTC_MAXPOOL_DIRECT(p, x, y, (T)-1 < 0) || maxpool_rows_##SUFFIX(p, x, y)) return;        \
        for (c = 0; c < p->planes; ++c, x += in_plane) {                                           \
            for (od = 0; od < p->out[0]; ++od) {                                                   \
                const int32_t sd = od * p->strides[0] - p->pads_begin[0];                          \
                int32_t d0, d1;                                                                    \
                tap_range(sd, p->dilations[0], p->kernel[0], 0, p->in[0], &d0, &d1);               \
                for (oh = 0; oh < p->out[1]; ++oh) {                                               \
                    const int32_t sh = oh * p->strides[1] - p->pads_begin[1];                      \
                    int32_t h0, h1;                                                                \
                    tap_range(sh, p->dilations[1], p->kernel[1], 0, p->in[1], &h0, &h1);           \
                    for (ow = 0; ow < p->out[2]; ++ow) {                                           \
                        const int32_t sw = ow * p->strides[2] - p->pads_begin[2];                  \
                        int32_t w0, w1;                                                            \
                        T m = LOWEST;                                                              \
                        tap_range(sw, p->dilations[2], p->kernel[2], 0, p->in[2], &w0, &w1);       \
                        for (kd = d0; kd < d1; ++kd) {                                             \
                            for (kh = h0; kh < h1; ++kh) {                                         \
                                const T *row = x + ((int64_t)(sd + kd * p->dilations[0]) * p->in[1] + \
                                                    (sh + kh * p->dilations[1])) * p->in[2] + sw;  \
                                for (kw = w0; kw < w1; ++kw) {                                     \
                                    const T v = row[(int64_t)kw * p->dilations[2]];                \
                                    m = v > m ? v : m;                                             \
                                }                                                                  \
                            }                                                                      \
                        }                                                                          \
                        *y++ = m;                                                                  \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

AOTC_MAXPOOL_INT(i8, int8_t, -128)
AOTC_MAXPOOL_INT(u8, uint8_t, 0)

