/* The window arithmetic the pool kernels (pool.c, pool_max.c, pool_global.c, pool_int8.c) share: which taps
 * of a window lie inside the input, and sums in lanes. Internal to runtime_c/kernels. */
#ifndef AOTC_POOL_WINDOWS_H
#define AOTC_POOL_WINDOWS_H

#include "aotc_pool.h"
#include "aotc_threads.h"

#if defined(__GNUC__) || defined(__clang__)
#define POOL_UNUSED __attribute__((unused)) /* a helper some of the files that include it do not call */
#else
#define POOL_UNUSED
#endif

/* The k in [0, count) for which start + k * step lies in [lo, hi), as
 * [*k0, *k1). Used both ways round: the taps of one window (step = dilation),
 * and the outputs whose window has a given tap inside the input (step = stride). */
static inline void tap_range(int32_t start, int32_t step, int32_t count, int32_t lo, int32_t hi,
                             int32_t *k0, int32_t *k1) {
    int32_t a = start < lo ? (lo - start + step - 1) / step : 0;
    int32_t b = start < hi ? (hi - start + step - 1) / step : 0;
    if (b > count) b = count;
    if (a > b) a = b;
    *k0 = a;
    *k1 = b;
}

static inline int32_t tap_count(int32_t start, int32_t step, int32_t count, int32_t lo, int32_t hi) {
    int32_t k0, k1;
    tap_range(start, step, count, lo, hi, &k0, &k1);
    return k1 - k0;
}

/* POOL_LANES partial sums: a sum of many values in one chain waits on each add's latency
 * (Keras's AveragePooling2D to 1 x 1 is a window of 120 values per plane in a DS-CNN, a
 * GlobalAveragePool one of the whole plane); in lanes it vectorises. */
#define POOL_LANES 16

/* The sum of `rows` runs of `cols` floats, the runs `step` apart, in POOL_LANES lanes. */
static inline float sum_runs(const float *AOTC_RESTRICT x, int32_t rows, int32_t cols, int64_t step) {
    float lane[POOL_LANES] = {0.0f}, s = 0.0f;
    int32_t r, i, j;
    if (cols == step) { /* whole rows: one run */
        cols *= rows;
        rows = 1;
    }
    for (r = 0; r < rows; ++r, x += step) {
        for (i = 0; i + POOL_LANES <= cols; i += POOL_LANES) {
            for (j = 0; j < POOL_LANES; ++j) lane[j] += x[i + j];
        }
        for (j = 0; i + j < cols; ++j) lane[j] += x[i + j];
    }
    for (j = 0; j < POOL_LANES; ++j) s += lane[j];
    return s;
}

#endif
