/* Reference kernels of the tflm_signal family (declared in kernels_ref.h), written another way than
 * tflm_signal.c from the same definitions (TFLM's signal/src and kissfft 1.3.0): the real FFT as
 * kissfft's recursive kf_work (the kernel runs its stages in a loop over a precomputed input order),
 * the square root by search with TFLM's rounding rule, the log from its definition in 64-bit
 * arithmetic. Portable C99, slow on purpose, no allocation beyond the stack. */
#include "kernels_ref.h"

#include <string.h>

static int16_t ref_wrap16(int64_t v) {
    int64_t u = v & 0xFFFF;
    return (int16_t)(u >= 0x8000 ? u - 0x10000 : u);
}

static int32_t ref_msb(uint64_t x, int32_t zero_bits) { /* TFLM's MostSignificantBit with gcc: 32 (64) for 0 */
    int32_t b = 0;
    if (x == 0) return zero_bits;
    while (x) x >>= 1, ++b;
    return b;
}

void aotc_tflm_window_ref_i16(int32_t rows, int32_t n, int32_t shift, const int16_t *x, const int16_t *w, int16_t *y) {
    int64_t i;
    for (i = 0; i < (int64_t)rows * n; ++i) {
        int64_t v = ((int64_t)x[i] * w[i % n]);
        v = v >= 0 ? v >> shift : -((-v + ((int64_t)1 << shift) - 1) >> shift); /* floor division */
        y[i] = (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
    }
}

void aotc_tflm_fft_auto_scale_ref_i16(int32_t n, const int16_t *x, int16_t *y, int32_t *scale_bits) {
    int16_t max = 0;
    int32_t i, bits;
    for (i = 0; i < n; ++i) {
        if (x[i] > max) max = x[i];
        else if (-(int32_t)x[i] > max) max = ref_wrap16(-(int32_t)x[i]);
    }
    bits = 15 - ref_msb((uint32_t)(int32_t)max, 32);
    if (bits < 0) bits = 0;
    for (i = 0; i < n; ++i) y[i] = ref_wrap16((int64_t)x[i] * ((int64_t)1 << bits));
    *scale_bits = bits;
}

typedef struct { int16_t r, i; } ref_cpx;

static int16_t ref_sround(int64_t v) { return ref_wrap16((v + 16384) >> 15); }

static ref_cpx ref_mul(ref_cpx a, ref_cpx b) {
    ref_cpx m;
    m.r = ref_sround((int64_t)a.r * b.r - (int64_t)a.i * b.i);
    m.i = ref_sround((int64_t)a.r * b.i + (int64_t)a.i * b.r);
    return m;
}

static ref_cpx ref_div(ref_cpx c, int32_t div) {
    c.r = ref_sround((int64_t)c.r * (32767 / div)), c.i = ref_sround((int64_t)c.i * (32767 / div));
    return c;
}

static ref_cpx ref_tw(const int16_t *tw, int64_t k) {
    ref_cpx t;
    t.r = tw[2 * k], t.i = tw[2 * k + 1];
    return t;
}

/* kissfft's kf_work: out[0 .. p m) from in (stride fstride), factors as (p, m) pairs */
static void ref_work(ref_cpx *out, const ref_cpx *in, int64_t fstride, const int32_t *factors, const int16_t *tw,
                     int inverse) {
    const int32_t p = factors[0], m = factors[1];
    int32_t q, k;
    if (m == 1) {
        for (q = 0; q < p; ++q) out[q] = in[q * fstride];
    } else {
        for (q = 0; q < p; ++q) ref_work(out + q * m, in + q * fstride, fstride * p, factors + 2, tw, inverse);
    }
    for (k = 0; k < m; ++k) {
        if (p == 2) {
            ref_cpx a = ref_div(out[k], 2), b = ref_div(out[k + m], 2), t = ref_mul(b, ref_tw(tw, k * fstride));
            out[k + m].r = ref_wrap16(a.r - t.r), out[k + m].i = ref_wrap16(a.i - t.i);
            out[k].r = ref_wrap16(a.r + t.r), out[k].i = ref_wrap16(a.i + t.i);
        } else { /* p == 4 */
            ref_cpx a0 = ref_div(out[k], 4), a1 = ref_div(out[k + m], 4), a2 = ref_div(out[k + 2 * m], 4);
            ref_cpx a3 = ref_div(out[k + 3 * m], 4), s0, s1, s2, s3, s4, s5;
            s0 = ref_mul(a1, ref_tw(tw, k * fstride)), s1 = ref_mul(a2, ref_tw(tw, 2 * k * fstride));
            s2 = ref_mul(a3, ref_tw(tw, 3 * k * fstride));
            s5.r = ref_wrap16(a0.r - s1.r), s5.i = ref_wrap16(a0.i - s1.i);
            a0.r = ref_wrap16(a0.r + s1.r), a0.i = ref_wrap16(a0.i + s1.i);
            s3.r = ref_wrap16(s0.r + s2.r), s3.i = ref_wrap16(s0.i + s2.i);
            s4.r = ref_wrap16(s0.r - s2.r), s4.i = ref_wrap16(s0.i - s2.i);
            out[k + 2 * m].r = ref_wrap16(a0.r - s3.r), out[k + 2 * m].i = ref_wrap16(a0.i - s3.i);
            out[k].r = ref_wrap16(a0.r + s3.r), out[k].i = ref_wrap16(a0.i + s3.i);
            if (inverse) s4.r = ref_wrap16(-(int32_t)s4.r), s4.i = ref_wrap16(-(int32_t)s4.i); /* rotation by +i */
            out[k + m].r = ref_wrap16(s5.r + s4.i), out[k + m].i = ref_wrap16(s5.i - s4.r);
            out[k + 3 * m].r = ref_wrap16(s5.r - s4.i), out[k + 3 * m].i = ref_wrap16(s5.i + s4.r);
        }
    }
}

void aotc_tflm_rfft_ref_i16(const aotc_tflm_rfft_params *p, const int16_t *x, int16_t *y) {
    ref_cpx in[AOTC_TFLM_FFT_REF_MAX], tmp[AOTC_TFLM_FFT_REF_MAX];
    int32_t factors[2 * AOTC_TFLM_FFT_MAX_STAGES], r, k, s, m = p->n;
    if (p->n > AOTC_TFLM_FFT_REF_MAX) return; /* (the tests stay below) */
    for (s = 0; s < p->stages; ++s) m /= p->radix[s], factors[2 * s] = p->radix[s], factors[2 * s + 1] = m;
    for (r = 0; r < p->rows; ++r) {
        const int16_t *xr = x + (int64_t)r * p->in_len;
        int16_t *yr = y + (int64_t)r * 2 * (p->n + 1);
        ref_cpx dc;
        for (k = 0; k < 2 * p->n; ++k) { /* the real signal, zero-padded, read as n complex values */
            const int16_t v = k < p->in_len ? xr[k] : 0;
            if (k & 1) in[k / 2].i = v;
            else in[k / 2].r = v;
        }
        ref_work(tmp, in, 1, factors, (const int16_t *)p->tw, 0);
        dc = ref_div(tmp[0], 2);
        yr[0] = ref_wrap16(dc.r + dc.i), yr[1] = 0, yr[2 * p->n] = ref_wrap16(dc.r - dc.i), yr[2 * p->n + 1] = 0;
        for (k = 1; k <= p->n / 2; ++k) {
            ref_cpx fk = ref_div(tmp[k], 2), fnk = tmp[p->n - k], f1, f2, t;
            fnk.i = ref_wrap16(-(int32_t)fnk.i), fnk = ref_div(fnk, 2);
            f1.r = ref_wrap16(fk.r + fnk.r), f1.i = ref_wrap16(fk.i + fnk.i);
            f2.r = ref_wrap16(fk.r - fnk.r), f2.i = ref_wrap16(fk.i - fnk.i);
            t = ref_mul(f2, ref_tw((const int16_t *)p->super_tw, k - 1));
            yr[2 * k] = ref_wrap16((f1.r + t.r) >> 1), yr[2 * k + 1] = ref_wrap16((f1.i + t.i) >> 1);
            yr[2 * (p->n - k)] = ref_wrap16((f1.r - t.r) >> 1), yr[2 * (p->n - k) + 1] = ref_wrap16((t.i - f1.i) >> 1);
        }
    }
}

void aotc_tflm_irfft_ref_i16(const aotc_tflm_rfft_params *p, const int16_t *x, int16_t *y) {
    ref_cpx tmp[AOTC_TFLM_FFT_REF_MAX], out[AOTC_TFLM_FFT_REF_MAX];
    int32_t factors[2 * AOTC_TFLM_FFT_MAX_STAGES], r, k, s, m = p->n;
    const int16_t *stw = (const int16_t *)p->super_tw;
    if (p->n > AOTC_TFLM_FFT_REF_MAX) return;
    for (s = 0; s < p->stages; ++s) m /= p->radix[s], factors[2 * s] = p->radix[s], factors[2 * s + 1] = m;
    for (r = 0; r < p->rows; ++r) { /* kiss_fftri: both halves of the spectrum into one complex signal */
        const int16_t *f = x + (int64_t)r * 2 * (p->n + 1);
        int16_t *yr = y + (int64_t)r * 2 * p->n;
        tmp[0].r = ref_wrap16((int32_t)f[0] + f[2 * p->n]), tmp[0].i = ref_wrap16((int32_t)f[0] - f[2 * p->n]);
        tmp[0] = ref_div(tmp[0], 2);
        for (k = 1; k <= p->n / 2; ++k) {
            ref_cpx fk, fnkc, fek, d, fok;
            fk.r = f[2 * k], fk.i = f[2 * k + 1];
            fnkc.r = f[2 * (p->n - k)], fnkc.i = ref_wrap16(-(int32_t)f[2 * (p->n - k) + 1]);
            fk = ref_div(fk, 2), fnkc = ref_div(fnkc, 2);
            fek.r = ref_wrap16(fk.r + fnkc.r), fek.i = ref_wrap16(fk.i + fnkc.i);
            d.r = ref_wrap16(fk.r - fnkc.r), d.i = ref_wrap16(fk.i - fnkc.i);
            fok = ref_mul(d, ref_tw(stw, k - 1));
            tmp[k].r = ref_wrap16(fek.r + fok.r), tmp[k].i = ref_wrap16(fek.i + fok.i);
            tmp[p->n - k].r = ref_wrap16(fek.r - fok.r), tmp[p->n - k].i = ref_wrap16(fek.i - fok.i);
            tmp[p->n - k].i = ref_wrap16(-(int32_t)tmp[p->n - k].i);
        }
        ref_work(out, tmp, 1, factors, (const int16_t *)p->tw, 1);
        for (k = 0; k < p->n; ++k) yr[2 * k] = out[k].r, yr[2 * k + 1] = out[k].i;
    }
}

void aotc_tflm_energy_ref_i16(int32_t n, int32_t start, int32_t end, const int16_t *x, uint32_t *y) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        const int64_t e = (int64_t)x[2 * i] * x[2 * i] + (int64_t)x[2 * i + 1] * x[2 * i + 1];
        y[i] = i >= start && i < end ? (uint32_t)e : 0;
    }
}

void aotc_tflm_filter_bank_ref(const aotc_tflm_filter_bank_params *p, const uint32_t *x, uint64_t *y) {
    int32_t c, j;
    for (c = 0; c < p->channels; ++c) { /* channel c: its own band's weights, the band below's unweights */
        uint64_t sum = 0;
        for (j = 0; j < p->widths[c + 1]; ++j)
            sum += (uint64_t)(int64_t)p->weights[p->weight_starts[c + 1] + j] * x[p->freq_starts[c + 1] + j];
        for (j = 0; j < p->widths[c]; ++j)
            sum += (uint64_t)(int64_t)p->unweights[p->weight_starts[c] + j] * x[p->freq_starts[c] + j];
        y[c] = sum;
    }
}

/* floor(sqrt(v)) by bisection, then TFLM's rounding: up where v - r^2 > r, never past the 16 or 32 bits */
static uint64_t ref_sqrt(uint64_t v) {
    uint64_t lo = 0, hi = 0xFFFFFFFFu, cap = (v >> 32) ? 0xFFFFFFFFu : 0xFFFFu;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        if (mid * mid <= v) lo = mid;
        else hi = mid - 1;
    }
    return v - lo * lo > lo && lo != cap ? lo + 1 : lo;
}

void aotc_tflm_filter_bank_sqrt_ref(int32_t n, const uint64_t *x, const int32_t *scale_bits, uint32_t *y) {
    int32_t i;
    for (i = 0; i < n; ++i) y[i] = (uint32_t)(ref_sqrt(x[i]) >> *scale_bits);
}

void aotc_tflm_spectral_subtraction_ref(const aotc_tflm_spectral_subtraction_params *p, const uint32_t *x,
                                        const uint32_t *noise, uint32_t *y, uint32_t *noise_next) {
    int32_t i;
    for (i = 0; i < p->channels; ++i) {
        const int odd = i % 2;
        const uint64_t s = (uint32_t)((uint64_t)x[i] << p->smoothing_bits); /* kept to 32 bits, as TFLM */
        const uint64_t a = odd ? p->alternate_smoothing : p->smoothing;
        const uint64_t b = odd ? p->alternate_one_minus_smoothing : p->one_minus_smoothing;
        const uint32_t est = (uint32_t)((s * a + (uint64_t)noise[i] * b) >> p->spectral_subtraction_bits);
        const uint64_t sub = est > s ? s : est;
        const uint64_t floor_ = ((uint64_t)x[i] * p->min_signal_remaining) >> p->spectral_subtraction_bits;
        const uint64_t left = (s - sub) >> p->smoothing_bits;
        noise_next[i] = p->clamping && est > s ? (uint32_t)s : est;
        y[i] = (uint32_t)(left > (uint32_t)floor_ ? left : (uint32_t)floor_);
    }
}

void aotc_tflm_pcan_ref(int32_t n, int32_t snr_shift, const uint32_t *x, const uint32_t *noise, const int16_t *lut,
                        uint32_t *y) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        int64_t gain;
        uint32_t snr;
        if (noise[i] <= 2) {
            gain = lut[noise[i]];
        } else { /* octave `octave` of the noise: lut[4 octave - 6 ..], at 10 bits of its position */
            const int32_t octave = ref_msb(noise[i], 32);
            const int16_t *c = lut + 4 * octave - 6;
            const int64_t frac = (octave < 11 ? (int64_t)noise[i] << (11 - octave) : noise[i] >> (octave - 11)) & 0x3FF;
            int64_t v = (((int64_t)c[2] * frac) >> 5) + (int64_t)c[1] * 32;
            v = (int64_t)(int32_t)(uint32_t)(v * frac); /* TFLM's int32 */
            v = ((int64_t)(int32_t)((uint32_t)v + 16384u) >> 15) + c[0];
            gain = ref_wrap16(v);
        }
        snr = (uint32_t)(((uint64_t)x[i] * (uint32_t)(int32_t)gain) >> snr_shift);
        y[i] = snr < 8192u ? (uint32_t)(((uint64_t)snr * snr) >> 20) : (snr >> 6) - 64u;
    }
}

void aotc_tflm_filter_bank_log_ref(int32_t n, int32_t output_scale, int32_t correction_bits, const uint16_t *log_lut,
                                   const uint32_t *x, int16_t *y) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        const uint32_t v = (uint32_t)((uint64_t)x[i] << correction_bits);
        if (v <= 1) {
            y[i] = 0;
        } else { /* log2 v = e + t, t in [0, 1) at 16 bits, corrected by the table between its 128 points */
            const int64_t e = ref_msb(v, 32) - 1;
            const int64_t t = e < 16 ? ((int64_t)v - ((int64_t)1 << e)) << (16 - e) : ((int64_t)v - ((int64_t)1 << e)) >> (e - 16);
            const int64_t seg = t / 512, c0 = log_lut[seg], c1 = log_lut[seg + 1];
            const int64_t log2v = e * 65536 + t + c0 + (((c1 - c0) * (t - 512 * seg)) >> 16);
            const uint32_t ln = (uint32_t)((45426 * (uint64_t)log2v + 32768) >> 16);
            const uint32_t out = (uint32_t)((uint32_t)output_scale * ln + 32768u) >> 16;
            y[i] = (int16_t)(out < 32767u ? out : 32767u);
        }
    }
}

/* TFLM's circular buffer (signal/src/circular_buffer.cc) of up to 4096 samples, to run the streaming ops
 * as TFLM does: read and write positions that wrap, loaded from a state row and stored back into one */
typedef struct {
    int16_t v[4096];
    int32_t capacity, read, count;
} ref_ring;

static void ref_ring_load(ref_ring *r, int32_t capacity, const int16_t *held, int32_t count) {
    int32_t i;
    r->capacity = capacity, r->read = capacity / 2, r->count = 0; /* start mid-buffer: its wrap is exercised */
    for (i = 0; i < count; ++i) r->v[(r->read + r->count++) % capacity] = held[i];
}

static void ref_ring_write(ref_ring *r, const int16_t *x, int32_t n) {
    int32_t i;
    for (i = 0; i < n; ++i) r->v[(r->read + r->count++) % r->capacity] = x[i];
}

static void ref_ring_get(const ref_ring *r, int16_t *y, int32_t n) {
    int32_t i;
    for (i = 0; i < n; ++i) y[i] = r->v[(r->read + i) % r->capacity];
}

static void ref_ring_discard(ref_ring *r, int32_t n) {
    r->read = (r->read + n) % r->capacity, r->count -= n;
}

static void ref_ring_store(const ref_ring *r, int16_t *held, int32_t capacity) {
    int32_t i;
    for (i = 0; i < capacity; ++i) held[i] = i < r->count ? r->v[(r->read + i) % r->capacity] : 0;
    held[capacity] = (int16_t)r->count;
}

void aotc_tflm_framer_ref_i16(const aotc_tflm_framer_params *p, const int16_t *x, const int16_t *state, int16_t *y,
                              uint8_t *valid, int16_t *state_next) {
    const int32_t row = p->capacity + 1;
    int32_t o, f;
    ref_ring r;
    *valid = 1;
    if (p->capacity > 4096) return;
    for (o = 0; o < p->outer; ++o) {
        const int16_t *s = state + (int64_t)o * row;
        ref_ring_load(&r, p->capacity, s, s[p->capacity]);
        for (f = 0; f < p->n_frames; ++f) {
            int16_t *out = y + ((int64_t)o * p->n_frames + f) * p->frame_size;
            ref_ring_write(&r, x + ((int64_t)o * p->n_frames + f) * p->frame_step, p->frame_step);
            if (r.count >= p->frame_size) {
                ref_ring_get(&r, out, p->frame_size), ref_ring_discard(&r, p->frame_step);
            } else {
                memset(out, 0, (size_t)p->frame_size * 2), *valid = 0;
            }
        }
        ref_ring_store(&r, state_next + (int64_t)o * row, p->capacity);
    }
}

void aotc_tflm_stacker_ref_i16(const aotc_tflm_stacker_params *p, const int16_t *x, const int16_t *state, int16_t *y,
                               uint8_t *valid, int16_t *state_next) {
    const int32_t size = p->channels * (p->left + p->right + 1);
    int32_t k;
    ref_ring r;
    if (size > 4096) return;
    ref_ring_load(&r, size, state, state[size]);
    ref_ring_write(&r, x, p->channels);
    if (!state[size + 1]) { /* CircularBufferExtend: the last `channels` samples, `left` more times */
        int16_t last[4096];
        ref_ring_get(&r, last, r.count);
        for (k = 0; k < p->left; ++k) ref_ring_write(&r, last + r.count - p->channels - k * p->channels, p->channels);
    }
    *valid = r.count >= size;
    if (*valid) ref_ring_get(&r, y, size), ref_ring_discard(&r, p->step * p->channels);
    else memset(y, 0, (size_t)size * 2);
    ref_ring_store(&r, state_next, size);
    state_next[size + 1] = 1;
}

void aotc_tflm_overlap_add_ref_i16(const aotc_tflm_overlap_add_params *p, const int16_t *x, const int16_t *state,
                                   int16_t *y, int16_t *state_next) {
    int64_t o, f, i, t;
    for (o = 0; o < p->outer; ++o) { /* output sample t of frame f: the sum of every frame reaching it, saturated */
        const int16_t *s = state + o * p->frame_size;
        int16_t *next = state_next + o * p->frame_size;
        int32_t buf[4096];
        if (p->frame_size > 4096) return;
        for (i = 0; i < p->frame_size; ++i) buf[i] = s[i];
        for (f = 0; f < p->n_frames; ++f) {
            for (i = 0; i < p->frame_size; ++i) {
                const int32_t v = buf[i] + x[(o * p->n_frames + f) * p->frame_size + i];
                buf[i] = v < -32768 ? -32768 : v > 32767 ? 32767 : v;
            }
            for (t = 0; t < p->frame_step; ++t) y[(o * p->n_frames + f) * p->frame_step + t] = (int16_t)buf[t];
            for (i = 0; i < p->frame_size; ++i) buf[i] = i + p->frame_step < p->frame_size ? buf[i + p->frame_step] : 0;
        }
        for (i = 0; i < p->frame_size; ++i) next[i] = (int16_t)buf[i];
    }
}
