/* The accuracy of fast_math.h against libm in double precision, over every float of each
 * function's stated range (or every `step`-th bit pattern): the largest error in ulps of the
 * float result (the ulp of the exact value rounded to float), and the largest absolute error.
 *
 *     test_fast_math [step]    prints one line per function: name, max ulp, its argument, and the
 *                              max absolute error outside the range counted in ulps
 *
 * The functions are evaluated a block at a time in a plain loop, as the kernels call them, so
 * that a build with vectorisation measures the vectorised code. tests/kernels_c/test_fast_math.py holds
 * the bounds. */
#include "fast_math.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096

typedef struct {
    const char *name;
    double lo, hi; /* the error is counted in ulps in [lo, hi], absolute outside (max_abs) */
    double top;    /* floats above it are not swept (exp's clamp) */
    double max_ulp, arg_ulp, max_abs;
} stat;

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* |y - ref| in ulps of ref rounded to float (the ulp of the smallest normal below it). */
static double ulp_error(float y, double ref) {
    const float rf = (float)ref;
    int e;
    double ulp;
    if (isinf(rf)) return y == rf ? 0.0 : INFINITY;
    frexp(fabs((double)rf) < FLT_MIN ? FLT_MIN : (double)rf, &e);
    ulp = ldexp(1.0, e - 24);
    return fabs((double)y - ref) / ulp;
}

static double erf_ref(double v) { return erf(v); }
static double exp_ref(double v) { return exp(v); }
static double expm1_ref(double v) { return expm1(v); }
static double sigmoid_ref(double v) { return 1.0 / (1.0 + exp(-v)); }
static double tanh_ref(double v) { return tanh(v); }

static void run_exp(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = aotc_exp_poly(x[i]);
}
static void run_exp_flush(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = aotc_exp_flush(x[i]);
}
static void run_expm1(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = aotc_expm1_poly(x[i]);
}
static void run_sigmoid(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = aotc_sigmoid_poly(x[i]);
}
static void run_tanh(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = aotc_tanh_poly(x[i]);
}
static void run_erf(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = aotc_erf_poly(x[i]);
}
#if AOTC_SOFTMAX_X86
/* Softmax's e^x on AVX-512F, 16 at a time and the tail under a mask, as aotc_softmax_avx512 calls it */
static void run_exp_flush16(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, aotc_exp_flush16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, aotc_exp_flush16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
/* Softmax's e^x on AVX-512F since issue 64 (aotc_softmax_exp16: for x <= 0) */
static void run_softmax_exp16(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, aotc_softmax_exp16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, aotc_softmax_exp16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
#endif
#if AOTC_SOFTMAX_AVX2
/* Softmax's e^x on AVX2 without AVX-512 (aotc_softmax_exp8: for x <= 0), 8 at a time and the tail by VMASKMOVPS */
static void run_softmax_exp8(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, aotc_softmax_exp8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i m = aotc_tail8(i, n);
        _mm256_maskstore_ps(y + i, m, aotc_softmax_exp8(_mm256_maskload_ps(x + i, m)));
    }
}
#endif
#if AOTC_GELU_X86
/* GELU's erf on AVX-512F, 16 at a time and the tail under a mask */
static void run_erf16(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, aotc_erf16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, aotc_erf16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
#endif

#if AOTC_SOFTMAX_X86 && !defined(__clang__)
/* How many of every step-th bit pattern (NaNs and infinities too) aotc_exp_flush16 gives other bits for
 * than aotc_exp_flush: none where the compiler contracts no a * b + c of the scalar function into a fused
 * multiply-add by itself (gcc in ISO C mode; clang does by default). */
static unsigned long exp_flush16_mismatches(uint32_t step) {
    unsigned long bad = 0;
    uint64_t u = 0;
    while (u <= 0xFFFFFFFFull) {
        float x[16], y[16];
        int k;
        for (k = 0; k < 16; ++k, u += step) x[k] = from_bits((uint32_t)(u <= 0xFFFFFFFFull ? u : 0u));
        _mm512_storeu_ps(y, aotc_exp_flush16(_mm512_loadu_ps(x)));
        for (k = 0; k < 16; ++k) {
            const float e = aotc_exp_flush(x[k]);
            bad += memcmp(&e, &y[k], sizeof e) != 0 && !(e != e && y[k] != y[k]);
        }
    }
    return bad;
}
#endif

/* Every step-th float in [lo, hi] (both signs' bit patterns), in blocks. */
static void sweep(stat *s, void (*run)(size_t, const float *, float *), double (*ref)(double), uint32_t step) {
    static float x[BLOCK], y[BLOCK];
    uint64_t u;
    size_t n = 0, i;
    s->max_ulp = s->max_abs = 0.0;
    s->arg_ulp = 0.0;
    for (u = 0; u <= 0xFFFFFFFFull; u += step) {
        const float v = from_bits((uint32_t)u);
        const int last = u + step > 0xFFFFFFFFull;
        if (v == v && v <= s->top) x[n++] = v;
        if (n == BLOCK || (last && n > 0)) {
            run(n, x, y);
            for (i = 0; i < n; ++i) {
                const double r = ref((double)x[i]);
                const double e = ulp_error(y[i], r), a = fabs((double)y[i] - r);
                if (x[i] >= s->lo && x[i] <= s->hi && e > s->max_ulp) {
                    s->max_ulp = e;
                    s->arg_ulp = x[i];
                }
                if ((x[i] < s->lo || x[i] > s->hi) && a > s->max_abs) s->max_abs = a;
            }
            n = 0;
        }
    }
}

int main(int argc, char **argv) {
    const uint32_t step = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1u;
    stat stats[] = {
        {"exp", -87.3, 88.0, 88.0, 0, 0, 0},      {"exp_flush", -87.3, 88.0, 88.0, 0, 0, 0},
        {"expm1", -87.3, 88.0, 88.0, 0, 0, 0},    {"sigmoid", -87.3, INFINITY, INFINITY, 0, 0, 0},
        {"tanh", -INFINITY, INFINITY, INFINITY, 0, 0, 0}, {"erf", -INFINITY, INFINITY, INFINITY, 0, 0, 0},
#if AOTC_SOFTMAX_X86
        {"exp_flush16", -87.3, 88.0, 88.0, 0, 0, 0},
        {"softmax_exp16", -87.3, 0.0, 0.0, 0, 0, 0},
#endif
#if AOTC_SOFTMAX_AVX2
        {"softmax_exp8", -87.3, 0.0, 0.0, 0, 0, 0},
#endif
#if AOTC_GELU_X86
        {"erf16", -INFINITY, INFINITY, INFINITY, 0, 0, 0},
#endif
    };
    void (*runs[])(size_t, const float *, float *) = {run_exp, run_exp_flush, run_expm1, run_sigmoid, run_tanh,
                                                      run_erf,
#if AOTC_SOFTMAX_X86
                                                      run_exp_flush16, run_softmax_exp16,
#endif
#if AOTC_SOFTMAX_AVX2
                                                      run_softmax_exp8,
#endif
#if AOTC_GELU_X86
                                                      run_erf16,
#endif
    };
    double (*refs[])(double) = {exp_ref, exp_ref, expm1_ref, sigmoid_ref, tanh_ref, erf_ref,
#if AOTC_SOFTMAX_X86
                                exp_ref, exp_ref,
#endif
#if AOTC_SOFTMAX_AVX2
                                exp_ref,
#endif
#if AOTC_GELU_X86
                                erf_ref,
#endif
    };
    const float specials[] = {NAN, -NAN};
    float out[2];
    size_t k;
    int nan_ok = 1;
    for (k = 0; k < sizeof stats / sizeof stats[0]; ++k) {
        sweep(&stats[k], runs[k], refs[k], step);
        printf("%s %.3f %.9g %.3g\n", stats[k].name, stats[k].max_ulp, stats[k].arg_ulp, stats[k].max_abs);
        runs[k](2, specials, out);
        nan_ok &= out[0] != out[0] && out[1] != out[1];
    }
    printf("nan %d\n", nan_ok);
#if AOTC_SOFTMAX_X86 && !defined(__clang__)
    printf("exp_flush16_bits %lu\n", exp_flush16_mismatches(step));
#endif
    return 0;
}
