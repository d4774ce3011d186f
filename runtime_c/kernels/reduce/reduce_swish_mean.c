/* SiLU (Swish) and the mean of each plane of its result in one pass: y = x sigmoid(alpha x), mean[c] = the mean of
 * y's plane c (planes of hw floats, contiguous). The squeeze-excite blocks of EfficientNet read a SiLU's output
 * twice, once for the global mean (ReduceMean over H and W, or GlobalAveragePool) and once for the scale's Mul;
 * aot/passes/fuse_swish_mean.py gives the SiLU and the mean to this kernel. Why (issue 64): the mean was a pass of
 * its own over tensors up to 1.2 MB (75 us, 1.6 % of EfficientNet-B0's time); here each run of whole planes (about
 * SWISH_MEAN_RUN floats) is summed right after the SiLU wrote it, from L1. y is aotc_swish_f32's, bit for bit (the
 * same vector loop); the sums are each plane's in 32 lanes (16 without AVX-512), not ReduceMean's order. y may be
 * x. */
#include "aotc_reduce.h"
#include "aotc_threads.h"
#include "fast_math.h"

#define SWISH_MEAN_RUN 4096 /* floats a work item: whole planes, or one plane in runs of this many */

typedef struct {
    const float *x;
    float *y, *mean;
    int64_t planes;
    int32_t hw, per; /* floats a plane, planes an item */
    float alpha;
} swish_mean_job;

/* y[0, n) = x sigmoid(alpha x), as aotc_swish_f32 computes it */
static void swish_run(const float *x, float *y, size_t n, float alpha) {
#if AOTC_SWISH_X86
    aotc_swish_avx512(x, y, n, alpha);
#elif AOTC_SWISH_AVX2
    aotc_swish_avx2(x, y, n, alpha);
#else
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = v * aotc_sigmoid_poly(alpha * v);
    }
#endif
}

/* The sum of y[0, n) in independent lanes (the plane was just written: its loads hit L1) */
static float plane_sum(const float *y, int32_t n) {
#if AOTC_SWISH_X86
    __m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
    int32_t i = 0;
    for (; i + 32 <= n; i += 32)
        a = _mm512_add_ps(a, _mm512_loadu_ps(y + i)), b = _mm512_add_ps(b, _mm512_loadu_ps(y + i + 16));
    if (i + 16 <= n) a = _mm512_add_ps(a, _mm512_loadu_ps(y + i)), i += 16;
    if (i < n) b = _mm512_add_ps(b, _mm512_maskz_loadu_ps((__mmask16)((1u << (n - i)) - 1u), y + i));
    return _mm512_reduce_add_ps(_mm512_add_ps(a, b));
#else
    float lane[16] = {0.0f}, s = 0.0f;
    int32_t i = 0, j;
    for (; i + 16 <= n; i += 16)
        for (j = 0; j < 16; ++j) lane[j] += y[i + j];
    for (; i < n; ++i) s += y[i];
    for (j = 0; j < 16; ++j) s += lane[j];
    return s;
#endif
}

static void swish_mean_items(void *arg, int32_t begin, int32_t end) {
    const swish_mean_job *J = (const swish_mean_job *)arg;
    const float count = (float)J->hw;
    int32_t item;
    for (item = begin; item < end; ++item) {
        const int64_t c0 = (int64_t)item * J->per, c1 = c0 + J->per < J->planes ? c0 + J->per : J->planes;
        const ptrdiff_t at = (ptrdiff_t)c0 * J->hw;
        int64_t c;
        if (J->hw > SWISH_MEAN_RUN) { /* one plane, in runs that L1 holds */
            float s = 0.0f;
            int32_t i, n;
            for (i = 0; i < J->hw; i += n) {
                n = J->hw - i < SWISH_MEAN_RUN ? J->hw - i : SWISH_MEAN_RUN;
                swish_run(J->x + at + i, J->y + at + i, (size_t)n, J->alpha);
                s += plane_sum(J->y + at + i, n);
            }
            J->mean[c0] = s / count;
            continue;
        }
        swish_run(J->x + at, J->y + at, (size_t)(c1 - c0) * (size_t)J->hw, J->alpha);
        for (c = c0; c < c1; ++c) J->mean[c] = plane_sum(J->y + (ptrdiff_t)c * J->hw, J->hw) / count;
    }
}

void aotc_swish_mean_f32(int64_t planes, int32_t hw, const float *x, float *y, float *mean, float alpha) {
    swish_mean_job J;
    J.x = x, J.y = y, J.mean = mean, J.planes = planes, J.hw = hw, J.alpha = alpha;
    J.per = hw >= SWISH_MEAN_RUN ? 1 : SWISH_MEAN_RUN / hw;
    aotc_parallel_for(swish_mean_items, &J, (int32_t)((planes + J.per - 1) / J.per));
}
