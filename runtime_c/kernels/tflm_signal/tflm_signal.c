/* TFLM's signal library ops (aotc_tflm_signal.h), bit-exact with TFLM's reference code (tflite-micro
 * signal/src/ sources and the kissfft 1.3.0 it builds with FIXED_POINT 16). Integer arithmetic is done as
 * TFLM's does it, including where its C++ wraps (an int16 store of a wider sum): those wraps are
 * written out through unsigned types here, so the C stays defined. Portable C99, no allocation. */
#include "aotc_tflm_signal.h"
#include "tflm_signal_internal.h"

#include <string.h>

/* TFLM's MostSignificantBit32 as gcc builds it: 32 - clz(x), and 32 for 0 */
static inline int32_t msb32(uint32_t x) {
#if defined(__GNUC__)
    return x ? 32 - __builtin_clz(x) : 32;
#else
    int32_t bits = 0;
    if (x == 0) return 32;
    while (x) x >>= 1, ++bits;
    return bits;
#endif
}

static inline int32_t msb64(uint64_t x) {
#if defined(__GNUC__)
    return x ? 64 - __builtin_clzll(x) : 64;
#else
    int32_t bits = 0;
    if (x == 0) return 64;
    while (x) x >>= 1, ++bits;
    return bits;
#endif
}

void aotc_tflm_window_i16(int32_t rows, int32_t n, int32_t shift, const int16_t *x, const int16_t *w, int16_t *y) {
    int32_t r, i;
    for (r = 0; r < rows; ++r) {
        const int16_t *xr = x + (ptrdiff_t)r * n;
        int16_t *yr = y + (ptrdiff_t)r * n;
        for (i = 0; i < n; ++i) {
            const int32_t v = ((int32_t)xr[i] * w[i]) >> shift;
            yr[i] = (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
        }
    }
}

void aotc_tflm_fft_auto_scale_i16(int32_t n, const int16_t *x, int16_t *y, int32_t *scale_bits) {
    int16_t max = 0; /* TFLM's MaxAbs16, whose -(-32768) wraps to -32768 */
    int32_t i, bits;
    for (i = 0; i < n; ++i) {
        if (x[i] > max) max = x[i];
        else if (-x[i] > max) max = wrap16(-x[i]);
    }
    bits = 16 - msb32((uint32_t)(int32_t)max) - 1;
    if (bits < 0) bits = 0;
    for (i = 0; i < n; ++i) y[i] = wrap16((int32_t)((uint32_t)(int32_t)x[i] << bits));
    *scale_bits = bits;
}

void aotc_tflm_energy_i16(int32_t n, int32_t start, int32_t end, const int16_t *x, uint32_t *y) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        if (i < start || i >= end) {
            y[i] = 0;
        } else {
            const int32_t re = x[2 * i], im = x[2 * i + 1];
            y[i] = (uint32_t)(re * re) + (uint32_t)(im * im);
        }
    }
}

void aotc_tflm_filter_bank(const aotc_tflm_filter_bank_params *p, const uint32_t *x, uint64_t *y) {
    uint64_t weighted = 0, unweighted = 0;
    int32_t c, j;
    for (c = 0; c <= p->channels; ++c) {
        const uint32_t *xc = x + p->freq_starts[c];
        const int16_t *wc = p->weights + p->weight_starts[c], *uc = p->unweights + p->weight_starts[c];
        for (j = 0; j < p->widths[c]; ++j) {
            weighted += (uint64_t)(int64_t)wc[j] * xc[j];
            unweighted += (uint64_t)(int64_t)uc[j] * xc[j];
        }
        if (c > 0) y[c - 1] = weighted;
        weighted = unweighted, unweighted = 0;
    }
}

/* TFLM's Sqrt32 and Sqrt64: bit by bit, then rounded up where the remainder exceeds the root */
static uint32_t isqrt32(uint32_t num) {
    uint32_t res = 0, bit;
    int32_t top, iterations;
    if (num == 0) return 0;
    top = (32 - msb32(num)) | 1;
    bit = 1u << (31 - top);
    iterations = (31 - top) / 2 + 1;
    while (iterations--) {
        if (num >= res + bit) num -= res + bit, res = (res >> 1) + bit;
        else res >>= 1;
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFu) ++res;
    return res & 0xFFFFu;
}

static uint32_t isqrt64(uint64_t num) {
    uint64_t res = 0, bit;
    int32_t top, iterations;
    if ((num >> 32) == 0) return isqrt32((uint32_t)num);
    top = (64 - msb64(num)) | 1;
    bit = (uint64_t)1 << (63 - top);
    iterations = (63 - top) / 2 + 1;
    while (iterations--) {
        if (num >= res + bit) num -= res + bit, res = (res >> 1) + bit;
        else res >>= 1;
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFFFFFu) ++res;
    return (uint32_t)res;
}

void aotc_tflm_filter_bank_sqrt(int32_t n, const uint64_t *x, const int32_t *scale_bits, uint32_t *y) {
    const int32_t shift = *scale_bits;
    int32_t i;
    for (i = 0; i < n; ++i) y[i] = isqrt64(x[i]) >> shift;
}

void aotc_tflm_spectral_subtraction(const aotc_tflm_spectral_subtraction_params *p, const uint32_t *x,
                                    const uint32_t *noise, uint32_t *y, uint32_t *noise_next) {
    int32_t i;
    for (i = 0; i < p->channels; ++i) {
        const uint32_t smoothing = (i & 1) ? p->alternate_smoothing : p->smoothing;
        const uint32_t keep = (i & 1) ? p->alternate_one_minus_smoothing : p->one_minus_smoothing;
        const uint32_t scaled = x[i] << p->smoothing_bits;
        uint32_t estimate = (uint32_t)(((uint64_t)scaled * smoothing + (uint64_t)noise[i] * keep) >>
                                       p->spectral_subtraction_bits);
        uint32_t floor_, subtracted, sub_from = estimate;
        if (sub_from > scaled) {
            sub_from = scaled;
            if (p->clamping) estimate = scaled;
        }
        noise_next[i] = estimate;
        floor_ = (uint32_t)(((uint64_t)x[i] * p->min_signal_remaining) >> p->spectral_subtraction_bits);
        subtracted = (scaled - sub_from) >> p->smoothing_bits;
        y[i] = subtracted > floor_ ? subtracted : floor_;
    }
}

/* PCAN's fixed point (TFLM's pcan_argc_fixed.cc): 12 fraction bits of SNR, 6 of output */
#define PCAN_SNR_BITS 12
#define PCAN_OUTPUT_BITS 6

/* the gain at noise x: a quadratic per octave of x, read from lut (TFLM's WideDynamicFunction) */
static int16_t pcan_gain(uint32_t x, const int16_t *lut) {
    int32_t interval, frac;
    uint32_t acc;
    if (x <= 2) return lut[x];
    interval = msb32(x);
    lut += 4 * interval - 6;
    frac = (int32_t)((interval < 11 ? x << (11 - interval) : x >> (interval - 11)) & 0x3FFu);
    acc = (uint32_t)(((int32_t)lut[2] * frac) >> 5);
    acc += (uint32_t)(int32_t)lut[1] << 5;
    acc *= (uint32_t)frac;                            /* TFLM's int32 arithmetic, wrapped */
    acc = (uint32_t)((int32_t)(acc + (1u << 14)) >> 15);
    acc += (uint32_t)(int32_t)lut[0];
    return wrap16((int32_t)acc);
}

static uint32_t pcan_shrink(uint32_t x) {
    if (x < (2u << PCAN_SNR_BITS)) return (x * x) >> (2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS);
    return (x >> (PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - (1u << PCAN_OUTPUT_BITS);
}

void aotc_tflm_pcan(int32_t n, int32_t snr_shift, const uint32_t *x, const uint32_t *noise, const int16_t *lut,
                    uint32_t *y) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        const uint32_t gain = (uint32_t)(int32_t)pcan_gain(noise[i], lut);
        const uint32_t snr = (uint32_t)(((uint64_t)x[i] * gain) >> snr_shift);
        y[i] = pcan_shrink(snr);
    }
}

/* TFLM's Log32: ln(x) * out_scale, both roundings in 16 fraction bits */
static uint32_t log32(uint32_t x, uint32_t out_scale, const uint16_t *lut) {
    const uint32_t integer = (uint32_t)msb32(x) - 1;
    int32_t frac = (int32_t)(x - ((uint32_t)1 << integer));
    uint32_t seg, log2, loge;
    int32_t c0, c1, rel;
    if (integer < 16) frac = (int32_t)((uint32_t)frac << (16 - integer));
    else frac >>= integer - 16;
    seg = (uint32_t)frac >> 9; /* 128 segments of 512 */
    c0 = lut[seg], c1 = lut[seg + 1];
    rel = ((c1 - c0) * (frac - (int32_t)(512 * seg))) >> 16;
    log2 = (integer << 16) + (uint32_t)(frac + c0 + rel);
    loge = (uint32_t)(((uint64_t)45426 * log2 + 32768) >> 16);
    return (out_scale * loge + 32768) >> 16;
}

void aotc_tflm_filter_bank_log(int32_t n, int32_t output_scale, int32_t correction_bits, const uint16_t *log_lut,
                               const uint32_t *x, int16_t *y) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        const uint32_t scaled = x[i] << correction_bits;
        if (scaled > 1) {
            const uint32_t v = log32(scaled, (uint32_t)output_scale, log_lut);
            y[i] = (int16_t)(v < (uint32_t)INT16_MAX ? v : (uint32_t)INT16_MAX);
        } else {
            y[i] = 0;
        }
    }
}

void aotc_tflm_framer_i16(const aotc_tflm_framer_params *p, const int16_t *x, const int16_t *state, int16_t *y,
                          uint8_t *valid, int16_t *state_next) {
    const int32_t row = p->capacity + 1;
    int32_t o, f;
    *valid = 1;
    for (o = 0; o < p->outer; ++o) {
        int16_t *held = state_next + (ptrdiff_t)o * row;
        int32_t count;
        memmove(held, state + (ptrdiff_t)o * row, (size_t)row * sizeof *held);
        count = held[p->capacity];
        if (count < 0 || count > p->capacity - p->frame_step) count = 0; /* not a state a sequence reaches */
        for (f = 0; f < p->n_frames; ++f) {
            const int16_t *in = x + ((ptrdiff_t)o * p->n_frames + f) * p->frame_step;
            int16_t *out = y + ((ptrdiff_t)o * p->n_frames + f) * p->frame_size;
            memcpy(held + count, in, (size_t)p->frame_step * sizeof *held);
            count += p->frame_step;
            if (count >= p->frame_size) {
                memcpy(out, held, (size_t)p->frame_size * sizeof *out);
                count -= p->frame_step;
                memmove(held, held + p->frame_step, (size_t)count * sizeof *held);
            } else {
                memset(out, 0, (size_t)p->frame_size * sizeof *out);
                *valid = 0;
            }
        }
        memset(held + count, 0, (size_t)(p->capacity - count) * sizeof *held);
        held[p->capacity] = (int16_t)count;
    }
}

void aotc_tflm_stacker_i16(const aotc_tflm_stacker_params *p, const int16_t *x, const int16_t *state, int16_t *y,
                           uint8_t *valid, int16_t *state_next) {
    const int32_t size = p->channels * (p->left + p->right + 1), c = p->channels;
    int32_t count, k;
    memmove(state_next, state, (size_t)(size + 2) * sizeof *state_next);
    count = state_next[size];
    if (count < 0 || count > size - c || count % c) count = 0; /* not a state a sequence reaches */
    memcpy(state_next + count, x, (size_t)c * sizeof *x);
    count += c;
    if (!state_next[size + 1]) { /* the first frame: as TFLM's CircularBufferExtend, `left` copies of it */
        for (k = 0; k < p->left; ++k, count += c) memcpy(state_next + count, state_next + count - c, (size_t)c * 2);
        state_next[size + 1] = 1;
    }
    if (count >= size) {
        const int32_t drop = p->step * c < count ? p->step * c : count;
        memcpy(y, state_next, (size_t)size * sizeof *y);
        count -= drop;
        memmove(state_next, state_next + drop, (size_t)count * sizeof *y);
        *valid = 1;
    } else {
        memset(y, 0, (size_t)size * sizeof *y);
        *valid = 0;
    }
    memset(state_next + count, 0, (size_t)(size - count) * sizeof *y);
    state_next[size] = (int16_t)count;
}

void aotc_tflm_overlap_add_i16(const aotc_tflm_overlap_add_params *p, const int16_t *x, const int16_t *state,
                               int16_t *y, int16_t *state_next) {
    int32_t o, f, i;
    memmove(state_next, state, (size_t)p->outer * p->frame_size * sizeof *y);
    for (o = 0; o < p->outer; ++o) {
        int16_t *buf = state_next + (ptrdiff_t)o * p->frame_size;
        for (f = 0; f < p->n_frames; ++f) {
            const int16_t *in = x + ((ptrdiff_t)o * p->n_frames + f) * p->frame_size;
            for (i = 0; i < p->frame_size; ++i) {
                const int32_t v = (int32_t)in[i] + buf[i];
                buf[i] = (int16_t)(v < INT16_MIN ? INT16_MIN : v > INT16_MAX ? INT16_MAX : v);
            }
            memcpy(y + ((ptrdiff_t)o * p->n_frames + f) * p->frame_step, buf, (size_t)p->frame_step * sizeof *y);
            memmove(buf, buf + p->frame_step, (size_t)(p->frame_size - p->frame_step) * sizeof *y);
            memset(buf + p->frame_size - p->frame_step, 0, (size_t)p->frame_step * sizeof *y);
        }
    }
}

void aotc_tflm_overlap_add_f32(const aotc_tflm_overlap_add_params *p, const float *x, const float *state, float *y,
                               float *state_next) {
    int32_t o, f, i;
    memmove(state_next, state, (size_t)p->outer * p->frame_size * sizeof *y);
    for (o = 0; o < p->outer; ++o) {
        float *buf = state_next + (ptrdiff_t)o * p->frame_size;
        for (f = 0; f < p->n_frames; ++f) {
            const float *in = x + ((ptrdiff_t)o * p->n_frames + f) * p->frame_size;
            for (i = 0; i < p->frame_size; ++i) buf[i] += in[i];
            memcpy(y + ((ptrdiff_t)o * p->n_frames + f) * p->frame_step, buf, (size_t)p->frame_step * sizeof *y);
            memmove(buf, buf + p->frame_step, (size_t)(p->frame_size - p->frame_step) * sizeof *y);
            memset(buf + p->frame_size - p->frame_step, 0, (size_t)p->frame_step * sizeof *y);
        }
    }
}
