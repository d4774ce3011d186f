/* kissfft 1.3.0's real FFT and its inverse (kiss_fftr, kiss_fftri over kf_work's radix-4 and radix-2
 * butterflies) for one scalar type, included by tflm_signal_fft.c once per type with:
 *   FFT_T           the scalar (int16_t, int32_t, float)
 *   FFT_SUFFIX(f)   f's name for the type (f##_i16, ...)
 *   FFT_MUL(a, b)   the product kissfft forms before rounding (int32, int64, float)
 *   FFT_ROUND(v)    sround: the product back to a scalar (15 or 31 fraction bits, rounded; float: itself)
 *   FFT_DIV(x, k)   C_FIXDIV's DIVSCALAR: x / k as kissfft scales each butterfly (float: x)
 *   FFT_ADD(a, b), FFT_SUB(a, b), FFT_NEG(a)   the sums stored into a scalar (wrapping for integers)
 *   FFT_HALF_SUM(a, b), FFT_HALF_DIFF(a, b)   HALF_OF(a + b), HALF_OF(a - b): the sum as C forms it (an
 *                   int16 one in int, unwrapped; an int32 one wrapping), then >> 1 (float: * 0.5f)
 *   FFT_CMUL_SUMS   (optional) a complex product's two sums of products another way (the DSP extension's)
 * Complex values are (re, im) pairs of scalars; the twiddles are the compiler's tables (kissfft's rounding).
 * The body undefines its parameters at its end, so the next type defines them afresh. */

static inline void FFT_SUFFIX(fixdiv)(FFT_T *c, int32_t k) {
    c[0] = FFT_DIV(c[0], k), c[1] = FFT_DIV(c[1], k);
}

static inline void FFT_SUFFIX(cmul)(FFT_T *m, const FFT_T *a, const FFT_T *b) {
#ifdef FFT_CMUL_SUMS /* (re, im) sums of products in two instructions: the same integers */
    FFT_CMUL_SUMS(a, b, const int32_t re_sum, const int32_t im_sum);
    const FFT_T re = FFT_ROUND(re_sum), im = FFT_ROUND(im_sum);
#else
    const FFT_T re = FFT_ROUND(FFT_MUL(a[0], b[0]) - FFT_MUL(a[1], b[1]));
    const FFT_T im = FFT_ROUND(FFT_MUL(a[0], b[1]) + FFT_MUL(a[1], b[0]));
#endif
    m[0] = re, m[1] = im;
}

/* kf_bfly2 on one block: f[0..m) and f[m..2m) */
static void FFT_SUFFIX(bfly2)(FFT_T *f, int32_t m, int32_t fstride, const FFT_T *tw) {
    int32_t k;
    for (k = 0; k < m; ++k) {
        FFT_T *a = f + 2 * k, *b = f + 2 * (k + m), t[2];
        FFT_SUFFIX(fixdiv)(a, 2), FFT_SUFFIX(fixdiv)(b, 2);
        FFT_SUFFIX(cmul)(t, b, tw + 2 * (ptrdiff_t)k * fstride);
        b[0] = FFT_SUB(a[0], t[0]), b[1] = FFT_SUB(a[1], t[1]);
        a[0] = FFT_ADD(a[0], t[0]), a[1] = FFT_ADD(a[1], t[1]);
    }
}

/* kf_bfly4 on one block of 4 m; `inverse`: the inverse transform's rotation by +i */
static void FFT_SUFFIX(bfly4)(FFT_T *f, int32_t m, int32_t fstride, const FFT_T *tw, int inverse) {
    int32_t k;
    for (k = 0; k < m; ++k) {
        FFT_T *f0 = f + 2 * k, *f1 = f + 2 * (k + m), *f2 = f + 2 * (k + 2 * m), *f3 = f + 2 * (k + 3 * m);
        FFT_T s0[2], s1[2], s2[2], s3[2], s4[2], s5[2];
        FFT_SUFFIX(fixdiv)(f0, 4), FFT_SUFFIX(fixdiv)(f1, 4), FFT_SUFFIX(fixdiv)(f2, 4), FFT_SUFFIX(fixdiv)(f3, 4);
        FFT_SUFFIX(cmul)(s0, f1, tw + 2 * (ptrdiff_t)k * fstride);
        FFT_SUFFIX(cmul)(s1, f2, tw + 4 * (ptrdiff_t)k * fstride);
        FFT_SUFFIX(cmul)(s2, f3, tw + 6 * (ptrdiff_t)k * fstride);
        s5[0] = FFT_SUB(f0[0], s1[0]), s5[1] = FFT_SUB(f0[1], s1[1]);
        f0[0] = FFT_ADD(f0[0], s1[0]), f0[1] = FFT_ADD(f0[1], s1[1]);
        s3[0] = FFT_ADD(s0[0], s2[0]), s3[1] = FFT_ADD(s0[1], s2[1]);
        s4[0] = FFT_SUB(s0[0], s2[0]), s4[1] = FFT_SUB(s0[1], s2[1]);
        f2[0] = FFT_SUB(f0[0], s3[0]), f2[1] = FFT_SUB(f0[1], s3[1]);
        f0[0] = FFT_ADD(f0[0], s3[0]), f0[1] = FFT_ADD(f0[1], s3[1]);
        if (inverse) {
            f1[0] = FFT_SUB(s5[0], s4[1]), f1[1] = FFT_ADD(s5[1], s4[0]);
            f3[0] = FFT_ADD(s5[0], s4[1]), f3[1] = FFT_SUB(s5[1], s4[0]);
        } else {
            f1[0] = FFT_ADD(s5[0], s4[1]), f1[1] = FFT_SUB(s5[1], s4[0]);
            f3[0] = FFT_SUB(s5[0], s4[1]), f3[1] = FFT_ADD(s5[1], s4[0]);
        }
    }
}

/* kf_work's butterflies over z (n complex values already in kf_work's input order), innermost stage first */
static void FFT_SUFFIX(stages)(const aotc_tflm_rfft_params *p, FFT_T *z, int inverse) {
    const FFT_T *tw = (const FFT_T *)p->tw;
    int32_t s, m = 1, fstride = p->n;
    for (s = p->stages - 1; s >= 0; --s) {
        const int32_t radix = p->radix[s];
        int32_t b;
        fstride /= radix;
        for (b = 0; b < fstride; ++b) {
            FFT_T *block = z + 2 * (ptrdiff_t)b * radix * m;
            if (radix == 4) FFT_SUFFIX(bfly4)(block, m, fstride, tw, inverse);
            else FFT_SUFFIX(bfly2)(block, m, fstride, tw);
        }
        m *= radix;
    }
}

/* kiss_fftr's split of the n-point complex FFT z (in place, n + 1 values) into the real FFT's bins */
static void FFT_SUFFIX(rsplit)(FFT_T *z, int32_t n, const FFT_T *super_tw) {
    FFT_T dc[2];
    int32_t k;
    dc[0] = z[0], dc[1] = z[1];
    FFT_SUFFIX(fixdiv)(dc, 2);
    z[0] = FFT_ADD(dc[0], dc[1]), z[1] = 0;
    z[2 * n] = FFT_SUB(dc[0], dc[1]), z[2 * n + 1] = 0;
    for (k = 1; k <= n / 2; ++k) {
        FFT_T pk[2], pnk[2], f1[2], f2[2], t[2];
        pk[0] = z[2 * k], pk[1] = z[2 * k + 1];
        pnk[0] = z[2 * (n - k)], pnk[1] = FFT_NEG(z[2 * (n - k) + 1]);
        FFT_SUFFIX(fixdiv)(pk, 2), FFT_SUFFIX(fixdiv)(pnk, 2);
        f1[0] = FFT_ADD(pk[0], pnk[0]), f1[1] = FFT_ADD(pk[1], pnk[1]);
        f2[0] = FFT_SUB(pk[0], pnk[0]), f2[1] = FFT_SUB(pk[1], pnk[1]);
        FFT_SUFFIX(cmul)(t, f2, super_tw + 2 * (ptrdiff_t)(k - 1));
        z[2 * k] = FFT_HALF_SUM(f1[0], t[0]), z[2 * k + 1] = FFT_HALF_SUM(f1[1], t[1]);
        z[2 * (n - k)] = FFT_HALF_DIFF(f1[0], t[0]), z[2 * (n - k) + 1] = FFT_HALF_DIFF(t[1], f1[1]);
    }
}

void FFT_SUFFIX(aotc_tflm_rfft)(const aotc_tflm_rfft_params *p, const FFT_T *x, FFT_T *y) {
    const int32_t n = p->n;
    int32_t r, k;
    for (r = 0; r < p->rows; ++r) {
        const FFT_T *xr = x + (ptrdiff_t)r * p->in_len;
        FFT_T *z = y + (ptrdiff_t)r * 2 * (n + 1);
        for (k = 0; k < n; ++k) { /* the complex input in kf_work's order, zero past in_len */
            const int32_t q = 2 * p->perm[k];
            z[2 * k] = q < p->in_len ? xr[q] : 0;
            z[2 * k + 1] = q + 1 < p->in_len ? xr[q + 1] : 0;
        }
        FFT_SUFFIX(stages)(p, z, 0);
        FFT_SUFFIX(rsplit)(z, n, (const FFT_T *)p->super_tw);
    }
}

/* kiss_fftri's input to its complex FFT at position q, from the n + 1 bins f (both halves of a pair come
 * from the same two bins; at q = n / 2 kissfft's second store, the difference, is the one that stays) */
static void FFT_SUFFIX(isplit_at)(const FFT_T *f, int32_t n, int32_t q, const FFT_T *super_tw, FFT_T *out) {
    FFT_T fk[2], fnk[2], fe[2], d[2], fo[2];
    int32_t k;
    if (q == 0) {
        out[0] = FFT_ADD(f[0], f[2 * n]), out[1] = FFT_SUB(f[0], f[2 * n]);
        FFT_SUFFIX(fixdiv)(out, 2);
        return;
    }
    k = q < n / 2 ? q : n - q;
    fk[0] = f[2 * k], fk[1] = f[2 * k + 1];
    fnk[0] = f[2 * (n - k)], fnk[1] = FFT_NEG(f[2 * (n - k) + 1]);
    FFT_SUFFIX(fixdiv)(fk, 2), FFT_SUFFIX(fixdiv)(fnk, 2);
    fe[0] = FFT_ADD(fk[0], fnk[0]), fe[1] = FFT_ADD(fk[1], fnk[1]);
    d[0] = FFT_SUB(fk[0], fnk[0]), d[1] = FFT_SUB(fk[1], fnk[1]);
    FFT_SUFFIX(cmul)(fo, d, super_tw + 2 * (ptrdiff_t)(k - 1));
    if (q < n / 2) {
        out[0] = FFT_ADD(fe[0], fo[0]), out[1] = FFT_ADD(fe[1], fo[1]);
    } else {
        out[0] = FFT_SUB(fe[0], fo[0]), out[1] = FFT_NEG(FFT_SUB(fe[1], fo[1]));
    }
}

void FFT_SUFFIX(aotc_tflm_irfft)(const aotc_tflm_rfft_params *p, const FFT_T *x, FFT_T *y) {
    const int32_t n = p->n;
    int32_t r, k;
    for (r = 0; r < p->rows; ++r) {
        const FFT_T *f = x + (ptrdiff_t)r * 2 * (n + 1);
        FFT_T *z = y + (ptrdiff_t)r * 2 * n;
        for (k = 0; k < n; ++k) FFT_SUFFIX(isplit_at)(f, n, p->perm[k], (const FFT_T *)p->super_tw, z + 2 * k);
        FFT_SUFFIX(stages)(p, z, 1);
        FFT_IRFFT_SCALE(z, 2 * n);
    }
}

#undef FFT_T
#undef FFT_SUFFIX
#undef FFT_MUL
#undef FFT_ROUND
#undef FFT_DIV
#undef FFT_ADD
#undef FFT_SUB
#undef FFT_NEG
#undef FFT_HALF_SUM
#undef FFT_HALF_DIFF
#undef FFT_IRFFT_SCALE
#undef FFT_CMUL_SUMS
