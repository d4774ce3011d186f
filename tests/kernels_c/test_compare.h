/* More helpers of the kernel tests (beside kernel_test.h), for the families whose kernels round
 * differently from their references (fast_math.h, libm's float functions, sums in another order):
 * comparison within a tolerance given per element, in ulps or absolute; float64 buffers; special
 * values (NaN, infinities, signed zeros, huge and tiny numbers) mixed into random inputs. */
#ifndef AOTC_TEST_COMPARE_H
#define AOTC_TEST_COMPARE_H

#include "kernel_test.h"

#include <float.h>

/* An ulp of a float is at most 2^-23 of its magnitude (2^-149 at the bottom of the subnormals):
 * `ulps` ulps of v is at most ulps * TEST_ULP * max(|v|, FLT_MIN). */
#define TEST_ULP 1.1920928955078125e-7

static inline double test_ulps(double v, double ulps) {
    const double a = fabs(v);
    return ulps * TEST_ULP * (a > FLT_MIN ? a : FLT_MIN);
}

/* 1 if y[i] differs from ref[i] by more than tol[i] anywhere; equal values (infinities, zeros of
 * either sign) and NaN against NaN match. Prints the first difference, and x[i] when x is given. */
static inline int test_differs_tol(const char *what, const float *x, const float *y, const float *ref,
                                   const double *tol, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        const int both_nan = y[i] != y[i] && ref[i] != ref[i];
        if (!(y[i] == ref[i]) && !both_nan && !(fabs((double)y[i] - (double)ref[i]) <= tol[i])) {
            printf("%s: element %lu of %lu is %.9g, reference %.9g (tolerance %.3g)", what, (unsigned long)i,
                   (unsigned long)n, (double)y[i], (double)ref[i], tol[i]);
            if (x != NULL) printf(", input %.9g", (double)x[i]);
            printf("\n");
            return 1;
        }
    }
    return 0;
}

/* float64: |y - ref| <= rtol * mag[i] + atol (mag NULL: |ref[i]|), NaN matching NaN. */
static inline int test_differs_f64(const char *what, const double *y, const double *ref, const double *mag,
                                   double rtol, double atol, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        const double tol = rtol * (mag != NULL ? mag[i] : fabs(ref[i])) + atol;
        if (!(y[i] == ref[i]) && !(y[i] != y[i] && ref[i] != ref[i]) && !(fabs(y[i] - ref[i]) <= tol)) {
            printf("%s: element %lu of %lu is %.17g, reference %.17g (tolerance %.3g)\n", what, (unsigned long)i,
                   (unsigned long)n, y[i], ref[i], tol);
            return 1;
        }
    }
    return 0;
}

/* Exactly n doubles (at least one byte), random in [-1, 1). */
static inline double *test_alloc_f64(size_t n) {
    double *b = (double *)malloc(n > 0 ? n * sizeof(double) : 1);
    size_t i;
    if (b == NULL) {
        printf("out of memory (%lu doubles)\n", (unsigned long)n);
        exit(2);
    }
    for (i = 0; i < n; ++i) b[i] = (double)rand_float() + (double)rand_float() * (1.0 / 16777216.0);
    return b;
}

/* Exactly n bytes, random. */
static inline void *test_alloc_bytes(size_t n) {
    unsigned char *b = (unsigned char *)malloc(n > 0 ? n : 1);
    size_t i;
    if (b == NULL) {
        printf("out of memory (%lu bytes)\n", (unsigned long)n);
        exit(2);
    }
    for (i = 0; i < n; ++i) b[i] = (unsigned char)(test_next() >> 24);
    if (n == 0) b[0] = 0; /* never read, but an uninitialised byte passed on fails -Wmaybe-uninitialized at -O2 */
    return b;
}

/* A special float: NaN, +-inf, +-0, +-FLT_MIN, a subnormal, a tiny power of 2, and with `huge` also
 * +-FLT_MAX and 65536 (whose sums and squares overflow floats). */
static inline float test_special_float(int huge) {
    static const float specials[13] = {NAN,    INFINITY, -INFINITY, 0.0f,    -0.0f,   FLT_MIN, -FLT_MIN,
                                       1e-40f, -1e-40f,  -1.0f / 65536.0f, FLT_MAX, -FLT_MAX, 65536.0f};
    return specials[rand_int(0, huge ? 12 : 9)];
}

/* A float of random magnitude: [-1, 1) times 2^e for e in [lo, hi]. */
static inline float test_scaled_float(int32_t lo, int32_t hi) { return ldexpf(rand_float(), (int)rand_int(lo, hi)); }

#endif /* AOTC_TEST_COMPARE_H */
