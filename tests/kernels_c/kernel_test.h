/* Helpers shared by the kernel tests (tests/kernels_c/test_*_kernels.c): a seeded random generator,
 * buffers allocated at exactly their size (so that AddressSanitizer reports any read or write
 * past a tensor), and the comparison of an optimised kernel's output with its reference.
 *
 * Each test is one program: `test_<family>_kernels [seed] [shapes]` runs `shapes` random
 * shapes per entry point (fewer where noted), prints a line per entry point, and exits 1 on
 * the first entry point with a mismatch (after printing the shape). Runs on the host and on
 * bare-metal boards (semihosting stdout, newlib's malloc). */
#ifndef AOTC_KERNEL_TEST_H
#define AOTC_KERNEL_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers: xorshift32, so that every target draws the same shapes for one seed ---- */

static uint32_t test_state = 1u;

static inline void test_seed(uint32_t seed) { test_state = seed != 0u ? seed : 1u; }

static inline uint32_t test_next(void) {
    uint32_t s = test_state;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return test_state = s;
}

/* An integer in [lo, hi]. */
static inline int32_t rand_int(int32_t lo, int32_t hi) { return lo + (int32_t)(test_next() % (uint32_t)(hi - lo + 1)); }

/* 1 with probability num / den. */
static inline int chance(int32_t num, int32_t den) { return rand_int(1, den) <= num; }

/* A value in [-1, 1). */
static inline float rand_float(void) { return (float)(test_next() >> 8) / 8388608.0f - 1.0f; }

/* ---- buffers ------------------------------------------------------------------------------- */

/* Exactly n floats (at least one byte, so that n = 0 still gives a pointer ASan knows), random. */
static inline float *test_alloc(size_t n) {
    float *b = (float *)malloc(n > 0 ? n * sizeof(float) : 1);
    size_t i;
    if (b == NULL) {
        printf("out of memory (%lu floats)\n", (unsigned long)n);
        exit(2);
    }
    for (i = 0; i < n; ++i) b[i] = rand_float();
    return b;
}

/* Exactly n random bytes (at least one allocated); a copy of src's n bytes; and the first byte where y and
 * ref differ, reported: for the integer and data-movement kernels, compared bit for bit. */
static inline uint8_t *test_bytes(size_t n) {
    uint8_t *b = (uint8_t *)malloc(n > 0 ? n : 1);
    size_t i;
    if (b == NULL) {
        printf("out of memory (%lu bytes)\n", (unsigned long)n);
        exit(2);
    }
    for (i = 0; i < n; ++i) b[i] = (uint8_t)(test_next() >> 24);
    return b;
}

static inline uint8_t *test_bytes_copy(const void *src, size_t n) {
    uint8_t *b = test_bytes(n);
    if (n > 0) memcpy(b, src, n);
    return b;
}

static inline int test_bytes_differ(const char *what, const void *y, const void *ref, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        if (((const uint8_t *)y)[i] != ((const uint8_t *)ref)[i]) {
            printf("%s: byte %lu of %lu is %d, reference %d\n", what, (unsigned long)i, (unsigned long)n,
                   (int)((const uint8_t *)y)[i], (int)((const uint8_t *)ref)[i]);
            return 1;
        }
    }
    return 0;
}


/* Exactly n floats, all NaN: scratch and outputs, so that a kernel that uses a value it never
 * wrote (or leaves an output unwritten) shows up as a mismatch. */
static inline float *test_alloc_nan(size_t n) {
    float *b = test_alloc(n);
    size_t i;
    for (i = 0; i < n; ++i) b[i] = NAN;
    return b;
}

static inline float *test_copy(const float *src, size_t n) {
    float *b = test_alloc(n);
    if (n > 0) memcpy(b, src, n * sizeof(float));
    return b;
}

/* |v| element by element, into a new buffer (NULL stays NULL). */
static inline float *test_abs(const float *src, size_t n) {
    float *b;
    size_t i;
    if (src == NULL) return NULL;
    b = test_alloc(n);
    for (i = 0; i < n; ++i) b[i] = fabsf(src[i]);
    return b;
}

/* ---- comparison ---------------------------------------------------------------------------- */

/* Relative tolerance of a sum computed in another order: fp32 rounding of a sum of n terms is
 * at most about n * 2^-24 of the sum of their magnitudes, far less in practice; a missing or
 * repeated term is much more. */
#define TEST_RTOL 2e-5f
#define TEST_ATOL 1e-6f

/* 1 if y differs from the reference ref anywhere: |y - ref| > TEST_RTOL * mag + TEST_ATOL, mag
 * the sum of the magnitudes of the terms (the reference run on |inputs|; NULL for an exact
 * comparison). NaN matches NaN only: the elements no kernel may write (between the rows of a
 * strided output), which start as NaN in both. Prints the first difference. */
static inline int test_differs(const char *what, const float *y, const float *ref, const float *mag, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        const float tol = mag != NULL ? TEST_RTOL * mag[i] + TEST_ATOL : 0.0f;
        if (!(fabsf(y[i] - ref[i]) <= tol) && !(y[i] == ref[i]) && !(y[i] != y[i] && ref[i] != ref[i])) {
            printf("%s: element %lu of %lu is %.9g, reference %.9g (tolerance %.3g)\n", what, (unsigned long)i,
                   (unsigned long)n, (double)y[i], (double)ref[i], (double)tol);
            return 1;
        }
    }
    return 0;
}

/* The program's arguments: seed (default 1) and shapes per entry point (default `shapes`). */
static inline int32_t test_args(int argc, char **argv, int32_t shapes) {
    test_seed(argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1u);
    return argc > 2 ? (int32_t)strtol(argv[2], NULL, 10) : shapes;
}

#endif /* AOTC_KERNEL_TEST_H */
