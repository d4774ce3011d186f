/* The tflm_signal kernels (aotc_tflm_signal.h, tflm_signal.c) against their references
 * (tflm_signal_ref.c) over random cases, exactly (every op is integer arithmetic): windows of random
 * shifts, auto-scaling of quiet, loud and -32768-holding signals, real FFTs of 2^k points (4s and a 2)
 * with shorter inputs zero-padded, energies over random bin ranges, filter banks over random bands,
 * square roots of 16- to 64-bit sums, spectral subtraction with and without clamping, PCAN with a
 * random gain table, the log at every magnitude. Buffers are heap allocations of exactly their size.
 * The FFT's tables are made here as the compiler makes them (aot/frontend/tflite/signal.py), from
 * kissfft's rounding of cos and sin.
 *
 *     test_tflm_signal_kernels [seed] [shapes] */
#include "aotc_tflm_signal.h"
#include "kernels_ref.h"
#include "test_compare.h"

static int16_t *i16s(size_t n, int32_t lo, int32_t hi) {
    int16_t *v = (int16_t *)malloc(n * sizeof(int16_t) + 1);
    size_t i;
    for (i = 0; i < n; ++i) v[i] = (int16_t)rand_int(lo, hi);
    return v;
}

static uint32_t rand_u32(int32_t bits) { /* a value of up to `bits` bits, often much smaller */
    const uint32_t v = test_next() ^ (test_next() << 16);
    const int32_t b = rand_int(0, bits);
    return b >= 32 ? v : v & ((1u << b) - 1u);
}

static int check_window(void) {
    const int32_t rows = rand_int(1, 3), n = rand_int(1, 500), shift = rand_int(0, 15);
    int16_t *x = i16s((size_t)rows * n, -32768, 32767), *w = i16s((size_t)n, -32768, 32767);
    int16_t *y = i16s((size_t)rows * n, 0, 0), *r = i16s((size_t)rows * n, 0, 0);
    int bad;
    aotc_tflm_window_i16(rows, n, shift, x, w, y);
    aotc_tflm_window_ref_i16(rows, n, shift, x, w, r);
    bad = test_bytes_differ("aotc_tflm_window_i16", y, r, (size_t)rows * n * 2);
    free(x), free(w), free(y), free(r);
    return bad;
}

static int check_auto_scale(void) {
    const int32_t n = rand_int(1, 600), loud = rand_int(0, 15);
    int16_t *x = i16s((size_t)n, -(1 << loud), (1 << loud) - 1), *y = i16s((size_t)n, 0, 0), *r = i16s((size_t)n, 0, 0);
    int32_t s1 = -1, s2 = -2;
    int bad;
    if (chance(1, 8)) x[rand_int(0, n - 1)] = -32768;
    if (chance(1, 8)) memset(x, 0, (size_t)n * 2);
    aotc_tflm_fft_auto_scale_i16(n, x, y, &s1);
    aotc_tflm_fft_auto_scale_ref_i16(n, x, r, &s2);
    bad = test_bytes_differ("aotc_tflm_fft_auto_scale_i16", y, r, (size_t)n * 2);
    if (!bad && s1 != s2) printf("aotc_tflm_fft_auto_scale_i16: scale %d, reference %d\n", (int)s1, (int)s2), bad = 1;
    free(x), free(y), free(r);
    return bad;
}

/* kissfft's tables for an n-point complex FFT (as the compiler makes them): radices, input order, twiddles of
 * `scale` (32767, 2147483647, or 0: float) for the forward (sign -1) or inverse (+1) transform */
static void fft_tables(aotc_tflm_rfft_params *p, int32_t n, double sign, double scale, int16_t *perm, void *tw,
                       void *stw) {
    int32_t k, s, m;
    p->n = n, p->stages = 0;
    for (m = n; m % 4 == 0; m /= 4) p->radix[p->stages++] = 4; /* kissfft's factors: 4s, then a 2 */
    if (m == 2) p->radix[p->stages++] = 2;
    for (k = 0; k < n; ++k) { /* the input each position takes: its digits in the stages' radices, reversed */
        int32_t rest = k, sub = n, stride = 1, q = 0;
        for (s = 0; s < p->stages; ++s) sub /= p->radix[s], q += (rest / sub) * stride, rest %= sub, stride *= p->radix[s];
        perm[k] = (int16_t)q;
    }
    for (k = 0; k < n + n / 2; ++k) {
        const double phase = k < n ? sign * 2.0 * 3.141592653589793238462643383279502884197169399375105820974944 * k / n
                                   : sign * 3.14159265358979323846264338327 * ((double)(k - n + 1) / n + 0.5);
        const double c = cos(phase), si = sin(phase);
        const int32_t at = k < n ? 2 * k : 2 * (k - n);
        if (scale == 32767.0) {
            int16_t *t = k < n ? (int16_t *)tw : (int16_t *)stw;
            t[at] = (int16_t)floor(0.5 + scale * c), t[at + 1] = (int16_t)floor(0.5 + scale * si);
        } else if (scale > 0.0) {
            int32_t *t = k < n ? (int32_t *)tw : (int32_t *)stw;
            t[at] = (int32_t)floor(0.5 + scale * c), t[at + 1] = (int32_t)floor(0.5 + scale * si);
        } else {
            float *t = k < n ? (float *)tw : (float *)stw;
            t[at] = (float)c, t[at + 1] = (float)si;
        }
    }
    p->perm = perm, p->tw = tw, p->super_tw = stw;
}

static int check_rfft(void) {
    const int32_t log2n = rand_int(1, 9), n = 1 << log2n, in_len = rand_int(1, 2 * n), rows = rand_int(1, 2);
    aotc_tflm_rfft_params p;
    int16_t *perm = i16s((size_t)n, 0, 0), *tw = i16s((size_t)2 * n, 0, 0), *stw = i16s((size_t)n, 0, 0);
    int16_t *x = i16s((size_t)rows * in_len, -32768, 32767), *f = i16s((size_t)rows * 2 * (n + 1), -32768, 32767);
    int16_t *y = i16s((size_t)rows * 2 * (n + 1), 0, 0), *r = i16s((size_t)rows * 2 * (n + 1), 0, 0);
    int bad;
    memset(&p, 0, sizeof p);
    p.rows = rows, p.in_len = in_len;
    fft_tables(&p, n, -1.0, 32767.0, perm, tw, stw);
    aotc_tflm_rfft_i16(&p, x, y);
    aotc_tflm_rfft_ref_i16(&p, x, r);
    bad = test_bytes_differ("aotc_tflm_rfft_i16", y, r, (size_t)rows * 4 * (n + 1));
    if (!bad) { /* the inverse on random bins */
        fft_tables(&p, n, 1.0, 32767.0, perm, tw, stw);
        aotc_tflm_irfft_i16(&p, f, y);
        aotc_tflm_irfft_ref_i16(&p, f, r);
        bad = test_bytes_differ("aotc_tflm_irfft_i16", y, r, (size_t)rows * 4 * n);
    }
    if (bad) printf("  n %d, in_len %d, rows %d\n", (int)n, (int)in_len, (int)rows);
    free(perm), free(tw), free(stw), free(x), free(f), free(y), free(r);
    return bad;
}

/* the int32 and float transforms against the definition: bin j of x's DFT (in double), which kissfft's
 * fixed point scales by 1 / fft_length; the inverse of the float FFT gives x back */
static int check_rfft_wide(void) {
    const int32_t log2n = rand_int(1, 8), n = 1 << log2n, len = 2 * n;
    aotc_tflm_rfft_params p;
    int16_t *perm = i16s((size_t)n, 0, 0);
    int32_t *x = (int32_t *)malloc((size_t)len * 4), *y = (int32_t *)malloc((size_t)(len + 2) * 4);
    int32_t *tw = (int32_t *)malloc((size_t)len * 4), *stw = (int32_t *)malloc((size_t)n * 4 + 4);
    float *xf = test_alloc((size_t)len), *yf = test_alloc((size_t)len + 2), *back = test_alloc((size_t)len);
    float *twf = test_alloc((size_t)len), *stwf = test_alloc((size_t)n + 1);
    int32_t j, t;
    int bad = 0;
    memset(&p, 0, sizeof p);
    p.rows = 1, p.in_len = len;
    for (t = 0; t < len; ++t) x[t] = (int32_t)(test_next() ^ (test_next() << 16)) / 4, xf[t] = rand_float();
    fft_tables(&p, n, -1.0, 2147483647.0, perm, tw, stw);
    aotc_tflm_rfft_i32(&p, x, y);
    fft_tables(&p, n, -1.0, 0.0, perm, twf, stwf);
    aotc_tflm_rfft_f32(&p, xf, yf);
    for (j = 0; j <= n && !bad; ++j) {
        double re = 0.0, im = 0.0, ref = 0.0, imf = 0.0, mag = 0.0;
        for (t = 0; t < len; ++t) {
            const double a = -6.283185307179586 * (double)((int64_t)j * t % len) / len;
            re += x[t] * cos(a), im += x[t] * sin(a), ref += xf[t] * cos(a), imf += xf[t] * sin(a), mag += fabs(xf[t]);
        }
        if (fabs(y[2 * j] - re / len) > 4.0 * (log2n + 2) || fabs(y[2 * j + 1] - im / len) > 4.0 * (log2n + 2))
            printf("aotc_tflm_rfft_i32: bin %d of %d: (%d, %d), the DFT / %d (%.1f, %.1f)\n", (int)j, (int)len,
                   (int)y[2 * j], (int)y[2 * j + 1], (int)len, re / len, im / len), bad = 1;
        if (fabs(yf[2 * j] - ref) > 1e-5 * mag || fabs(yf[2 * j + 1] - imf) > 1e-5 * mag)
            printf("aotc_tflm_rfft_f32: bin %d of %d: (%g, %g), the DFT (%g, %g)\n", (int)j, (int)len, yf[2 * j],
                   yf[2 * j + 1], ref, imf), bad = 1;
    }
    fft_tables(&p, n, 1.0, 0.0, perm, twf, stwf);
    aotc_tflm_irfft_f32(&p, yf, back);
    for (t = 0; t < len && !bad; ++t)
        if (fabs(back[t] - xf[t]) > 1e-5) printf("aotc_tflm_irfft_f32: sample %d: %g, not %g\n", (int)t, back[t], xf[t]), bad = 1;
    if (!bad) { /* the int32 inverse: kissfft scales the inverse by 1 / n too, so it gives x / 2 */
        int32_t *back32 = (int32_t *)malloc((size_t)len * 4);
        for (t = 0; t < len; ++t) x[t] /= 4;
        fft_tables(&p, n, -1.0, 2147483647.0, perm, tw, stw);
        aotc_tflm_rfft_i32(&p, x, y);
        fft_tables(&p, n, 1.0, 2147483647.0, perm, tw, stw);
        aotc_tflm_irfft_i32(&p, y, back32);
        for (t = 0; t < len && !bad; ++t) {
            const double want = (double)x[t] / len;
            if (fabs(back32[t] - want) > 8.0 * (log2n + 2))
                printf("aotc_tflm_irfft_i32: sample %d of %d: %d, not about %.1f\n", (int)t, (int)len, (int)back32[t], want),
                    bad = 1;
        }
        free(back32);
    }
    free(perm), free(x), free(y), free(tw), free(stw), free(xf), free(yf), free(back), free(twf), free(stwf);
    return bad;
}

static int check_energy(void) {
    const int32_t n = rand_int(1, 300), start = rand_int(0, n), end = rand_int(start, n);
    int16_t *x = i16s((size_t)2 * n, -32768, 32767);
    uint32_t *y = (uint32_t *)malloc((size_t)n * 4), *r = (uint32_t *)malloc((size_t)n * 4);
    int bad;
    aotc_tflm_energy_i16(n, start, end, x, y);
    aotc_tflm_energy_ref_i16(n, start, end, x, r);
    bad = test_bytes_differ("aotc_tflm_energy_i16", y, r, (size_t)n * 4);
    free(x), free(y), free(r);
    return bad;
}

static int check_filter_bank(void) {
    const int32_t channels = rand_int(1, 40), bins = rand_int(1, 257);
    int16_t *fs = i16s((size_t)channels + 1, 0, 0), *ws = i16s((size_t)channels + 1, 0, 0), *wd = i16s((size_t)channels + 1, 0, 0);
    int16_t *w, *u;
    uint32_t *x = (uint32_t *)malloc((size_t)bins * 4);
    uint64_t *y = (uint64_t *)malloc((size_t)channels * 8), *r = (uint64_t *)malloc((size_t)channels * 8);
    aotc_tflm_filter_bank_params p;
    int32_t c, total = 0, i;
    int bad;
    for (c = 0; c <= channels; ++c) {
        wd[c] = (int16_t)rand_int(0, 12), fs[c] = (int16_t)rand_int(0, bins - 1);
        if (fs[c] + wd[c] > bins) wd[c] = (int16_t)(bins - fs[c]);
        ws[c] = (int16_t)total, total += wd[c];
    }
    w = i16s((size_t)total + 1, 0, 4096), u = i16s((size_t)total + 1, 0, 4096);
    for (i = 0; i < bins; ++i) x[i] = rand_u32(32);
    p.channels = channels, p.weights = w, p.unweights = u, p.freq_starts = fs, p.weight_starts = ws, p.widths = wd;
    aotc_tflm_filter_bank(&p, x, y);
    aotc_tflm_filter_bank_ref(&p, x, r);
    bad = test_bytes_differ("aotc_tflm_filter_bank", y, r, (size_t)channels * 8);
    free(fs), free(ws), free(wd), free(w), free(u), free(x), free(y), free(r);
    return bad;
}

static int check_sqrt(void) {
    const int32_t n = rand_int(1, 64), shift = rand_int(0, 15);
    uint64_t *x = (uint64_t *)malloc((size_t)n * 8);
    uint32_t *y = (uint32_t *)malloc((size_t)n * 4), *r = (uint32_t *)malloc((size_t)n * 4);
    int32_t i;
    int bad;
    for (i = 0; i < n; ++i) x[i] = chance(1, 2) ? rand_u32(32) : ((uint64_t)rand_u32(32) << 32 | test_next());
    aotc_tflm_filter_bank_sqrt(n, x, &shift, y);
    aotc_tflm_filter_bank_sqrt_ref(n, x, &shift, r);
    bad = test_bytes_differ("aotc_tflm_filter_bank_sqrt", y, r, (size_t)n * 4);
    free(x), free(y), free(r);
    return bad;
}

static int check_spectral_subtraction(void) {
    aotc_tflm_spectral_subtraction_params p;
    int32_t i, n;
    uint32_t *x, *noise, *y, *r, *ny, *nr;
    int bad;
    p.channels = n = rand_int(1, 48), p.spectral_subtraction_bits = (uint32_t)rand_int(8, 14);
    p.smoothing = (uint32_t)rand_int(0, 1 << p.spectral_subtraction_bits);
    p.one_minus_smoothing = (1u << p.spectral_subtraction_bits) - p.smoothing;
    p.alternate_smoothing = (uint32_t)rand_int(0, 1 << p.spectral_subtraction_bits);
    p.alternate_one_minus_smoothing = (1u << p.spectral_subtraction_bits) - p.alternate_smoothing;
    p.min_signal_remaining = (uint32_t)rand_int(0, 1 << p.spectral_subtraction_bits);
    p.smoothing_bits = (uint32_t)rand_int(0, 12), p.clamping = chance(1, 2);
    x = (uint32_t *)malloc((size_t)n * 4), noise = (uint32_t *)malloc((size_t)n * 4);
    y = (uint32_t *)malloc((size_t)n * 4), r = (uint32_t *)malloc((size_t)n * 4);
    ny = (uint32_t *)malloc((size_t)n * 4), nr = (uint32_t *)malloc((size_t)n * 4);
    for (i = 0; i < n; ++i) x[i] = rand_u32(chance(1, 4) ? 32 : 20), noise[i] = rand_u32(chance(1, 4) ? 32 : 28);
    aotc_tflm_spectral_subtraction(&p, x, noise, y, ny);
    aotc_tflm_spectral_subtraction_ref(&p, x, noise, r, nr);
    bad = test_bytes_differ("aotc_tflm_spectral_subtraction", y, r, (size_t)n * 4) ||
          test_bytes_differ("aotc_tflm_spectral_subtraction (noise)", ny, nr, (size_t)n * 4);
    free(x), free(noise), free(y), free(r), free(ny), free(nr);
    return bad;
}

static int check_pcan(void) {
    const int32_t n = rand_int(1, 48), snr_shift = rand_int(0, 12);
    int16_t *lut = i16s(125, -32768, 32767);
    uint32_t *x = (uint32_t *)malloc((size_t)n * 4), *noise = (uint32_t *)malloc((size_t)n * 4);
    uint32_t *y = (uint32_t *)malloc((size_t)n * 4), *r = (uint32_t *)malloc((size_t)n * 4);
    int32_t i;
    int bad;
    for (i = 0; i < n; ++i) x[i] = rand_u32(24), noise[i] = rand_u32(32);
    aotc_tflm_pcan(n, snr_shift, x, noise, lut, y);
    aotc_tflm_pcan_ref(n, snr_shift, x, noise, lut, r);
    bad = test_bytes_differ("aotc_tflm_pcan", y, r, (size_t)n * 4);
    free(lut), free(x), free(noise), free(y), free(r);
    return bad;
}

static int check_log(void) {
    const int32_t n = rand_int(1, 64), scale = rand_int(1, 1 << 12), bits = rand_int(0, 8);
    uint16_t lut[130];
    uint32_t *x = (uint32_t *)malloc((size_t)n * 4);
    int16_t *y = i16s((size_t)n, 0, 0), *r = i16s((size_t)n, 0, 0);
    int32_t i;
    int bad;
    for (i = 0; i < 129; ++i) lut[i] = (uint16_t)floor((log2(1.0 + i / 128.0) - i / 128.0) * 65536.0 + 0.5);
    lut[129] = 0;
    for (i = 0; i < n; ++i) x[i] = rand_u32(32);
    aotc_tflm_filter_bank_log(n, scale, bits, lut, x, y);
    aotc_tflm_filter_bank_log_ref(n, scale, bits, lut, x, r);
    bad = test_bytes_differ("aotc_tflm_filter_bank_log", y, r, (size_t)n * 2);
    free(x), free(y), free(r);
    return bad;
}

/* a state row: `count` random samples held (0s after them), then the count and `extra` flags */
static int16_t *state_row(int32_t capacity, int32_t count, int32_t extra) {
    int16_t *s = i16s((size_t)capacity + 1 + extra, -32768, 32767);
    memset(s + count, 0, (size_t)(capacity - count) * 2);
    s[capacity] = (int16_t)count;
    return s;
}

static int check_framer(void) {
    aotc_tflm_framer_params p;
    int16_t *x, *st, *y, *r, *ny, *nr;
    uint8_t v1 = 9, v2 = 8;
    size_t rows;
    int bad;
    p.outer = rand_int(1, 3), p.frame_step = rand_int(1, 64), p.frame_size = p.frame_step * rand_int(1, 4) +
        rand_int(0, p.frame_step - 1), p.n_frames = rand_int(1, 4);
    p.capacity = (p.frame_size + p.frame_step - 1) / p.frame_step * p.frame_step;
    rows = (size_t)p.outer * (p.capacity + 1);
    x = i16s((size_t)p.outer * p.n_frames * p.frame_step, -32768, 32767);
    st = i16s(rows, 0, 0);
    {
        int32_t o;
        for (o = 0; o < p.outer; ++o) { /* a count a sequence reaches: the prefill's, or a multiple of the step */
            const int32_t count = chance(1, 3) ? p.frame_size - p.frame_step : p.frame_step *
                rand_int(0, (p.capacity - p.frame_step) / p.frame_step);
            int16_t *row = state_row(p.capacity, count, 0);
            memcpy(st + (size_t)o * (p.capacity + 1), row, (size_t)(p.capacity + 1) * 2);
            free(row);
        }
    }
    y = i16s((size_t)p.outer * p.n_frames * p.frame_size, 0, 0), r = i16s((size_t)p.outer * p.n_frames * p.frame_size, 0, 0);
    ny = i16s(rows, 0, 0), nr = i16s(rows, 0, 0);
    aotc_tflm_framer_i16(&p, x, st, y, &v1, ny);
    aotc_tflm_framer_ref_i16(&p, x, st, r, &v2, nr);
    bad = test_bytes_differ("aotc_tflm_framer_i16", y, r, (size_t)p.outer * p.n_frames * p.frame_size * 2) ||
          test_bytes_differ("aotc_tflm_framer_i16 (state)", ny, nr, rows * 2);
    if (!bad && v1 != v2) printf("aotc_tflm_framer_i16: valid %d, reference %d\n", v1, v2), bad = 1;
    if (bad) printf("  outer %d, frames %d, size %d, step %d\n", (int)p.outer, (int)p.n_frames, (int)p.frame_size,
                    (int)p.frame_step);
    free(x), free(st), free(y), free(r), free(ny), free(nr);
    return bad;
}

static int check_stacker(void) {
    aotc_tflm_stacker_params p;
    int32_t size;
    int16_t *x, *st, *y, *r, *ny, *nr;
    uint8_t v1 = 9, v2 = 8;
    int bad;
    p.channels = rand_int(1, 40), p.left = rand_int(0, 4), p.right = rand_int(0, 4);
    p.step = rand_int(1, p.left + p.right + 1);
    size = p.channels * (p.left + p.right + 1);
    x = i16s((size_t)p.channels, -32768, 32767);
    st = state_row(size, chance(1, 3) ? 0 : p.channels * rand_int(0, p.left + p.right), 1);
    st[size + 1] = (int16_t)(st[size] > 0 || chance(1, 2));
    y = i16s((size_t)size, 0, 0), r = i16s((size_t)size, 0, 0), ny = i16s((size_t)size + 2, 0, 0), nr = i16s((size_t)size + 2, 0, 0);
    aotc_tflm_stacker_i16(&p, x, st, y, &v1, ny);
    aotc_tflm_stacker_ref_i16(&p, x, st, r, &v2, nr);
    bad = test_bytes_differ("aotc_tflm_stacker_i16", y, r, (size_t)size * 2) ||
          test_bytes_differ("aotc_tflm_stacker_i16 (state)", ny, nr, (size_t)(size + 2) * 2);
    if (!bad && v1 != v2) printf("aotc_tflm_stacker_i16: valid %d, reference %d\n", v1, v2), bad = 1;
    free(x), free(st), free(y), free(r), free(ny), free(nr);
    return bad;
}

static int check_overlap_add(void) {
    aotc_tflm_overlap_add_params p;
    int16_t *x, *st, *y, *r, *ny, *nr;
    size_t xs, ys, ss;
    int bad;
    p.outer = rand_int(1, 3), p.frame_size = rand_int(1, 300), p.frame_step = rand_int(1, p.frame_size);
    p.n_frames = rand_int(1, 4);
    xs = (size_t)p.outer * p.n_frames * p.frame_size, ys = (size_t)p.outer * p.n_frames * p.frame_step;
    ss = (size_t)p.outer * p.frame_size;
    x = i16s(xs, -32768, 32767), st = i16s(ss, -32768, 32767);
    y = i16s(ys, 0, 0), r = i16s(ys, 0, 0), ny = i16s(ss, 0, 0), nr = i16s(ss, 0, 0);
    aotc_tflm_overlap_add_i16(&p, x, st, y, ny);
    aotc_tflm_overlap_add_ref_i16(&p, x, st, r, nr);
    bad = test_bytes_differ("aotc_tflm_overlap_add_i16", y, r, ys * 2) ||
          test_bytes_differ("aotc_tflm_overlap_add_i16 (state)", ny, nr, ss * 2);
    if (!bad) { /* the float kernel on the same values: sums of at most a few int16, exact in float */
        float *xf = test_alloc(xs), *sf = test_alloc(ss), *yf = test_alloc(ys), *nf = test_alloc(ss);
        size_t i;
        for (i = 0; i < xs; ++i) xf[i] = (float)(x[i] / 8);
        for (i = 0; i < ss; ++i) sf[i] = (float)(st[i] / 8), st[i] = (int16_t)(st[i] / 8);
        for (i = 0; i < xs; ++i) x[i] = (int16_t)(x[i] / 8);
        aotc_tflm_overlap_add_f32(&p, xf, sf, yf, nf);
        aotc_tflm_overlap_add_ref_i16(&p, x, st, r, nr);
        for (i = 0; i < ys && !bad; ++i) bad = yf[i] != (float)r[i];
        for (i = 0; i < ss && !bad; ++i) bad = nf[i] != (float)nr[i];
        if (bad) printf("aotc_tflm_overlap_add_f32: differs from the sums\n");
        free(xf), free(sf), free(yf), free(nf);
    }
    free(x), free(st), free(y), free(r), free(ny), free(nr);
    return bad;
}

int main(int argc, char **argv) {
    static int (*const checks[])(void) = {check_window, check_auto_scale, check_rfft, check_rfft_wide, check_energy,
                                          check_filter_bank, check_sqrt, check_spectral_subtraction, check_pcan,
                                          check_log, check_framer, check_stacker, check_overlap_add};
    static const char *const names[] = {"aotc_tflm_window_i16", "aotc_tflm_fft_auto_scale_i16", "aotc_tflm_rfft_i16, irfft_i16",
                                        "aotc_tflm_rfft_i32, _f32, irfft", "aotc_tflm_energy_i16", "aotc_tflm_filter_bank", "aotc_tflm_filter_bank_sqrt",
                                        "aotc_tflm_spectral_subtraction", "aotc_tflm_pcan",
                                        "aotc_tflm_filter_bank_log", "aotc_tflm_framer_i16", "aotc_tflm_stacker_i16",
                                        "aotc_tflm_overlap_add_i16 / _f32"};
    const int32_t shapes = test_args(argc, argv, 300);
    int bad = 0;
    size_t k;
    for (k = 0; k < sizeof checks / sizeof checks[0]; ++k) {
        int32_t i;
        int fail = 0;
        for (i = 0; i < shapes && !fail; ++i) fail = checks[k]();
        printf("%-34s %s (%d shapes)\n", names[k], fail ? "MISMATCH" : "ok", (int)i);
        bad |= fail;
    }
    return bad;
}
