/* ONNX GlobalMaxPool and GlobalAveragePool, float32: a max or a sum in lanes per plane (the pools that
 * end most classifiers, kept apart from pool.c's window pools so that a net with only these compiles
 * only this). */
#include "pool_windows.h"

#include <float.h>

/* A plane's maximum: with AVX in 16 lanes, two vectors of 8 (issue 64: one chain of `m = x > m ? x : m`, the order
 * a NaN-skipping maximum needs, is not reordered by the compiler, and a file-type classifier's 512 planes of 508
 * took 143 us, 4.8x onnxruntime's time; 12 us so). NaNs are skipped as in the chain (vmaxps(x, m) is m where x is a
 * NaN), and the lanes' maxima combined the same way. Elsewhere the chain (the Cortex-M cores' code unchanged). */
#if defined(__AVX__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>

void aotc_global_maxpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    int32_t c, i, j;
    for (c = 0; c < planes; ++c, x += size) {
        __m256 m0 = _mm256_set1_ps(-FLT_MAX), m1 = m0;
        float lane[16], m = -FLT_MAX;
        for (i = 0; i + 16 <= size; i += 16) {
            m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
            m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
        }
        _mm256_storeu_ps(lane, m0);
        _mm256_storeu_ps(lane + 8, m1);
        for (; i < size; ++i) m = x[i] > m ? x[i] : m;
        for (j = 0; j < 16; ++j) m = lane[j] > m ? lane[j] : m;
        y[c] = m;
    }
}
#else
void aotc_global_maxpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    int32_t c, i;
    for (c = 0; c < planes; ++c, x += size) {
        float m = -FLT_MAX;
        for (i = 0; i < size; ++i) m = x[i] > m ? x[i] : m;
        y[c] = m;
    }
}
#endif

/* Helium (a Cortex-M55; -DAOTC_NO_MVE: the plain C): small planes (a classifier's last 3 x 3 or
 * 6 x 6) 4 at a time, a lane each, summed by gathers element by element. sum_runs spent 145
 * instructions, and a memset of its lanes 87, on each of MobileNet-v2's 1,280 planes of 9 (issue 27). */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && !defined(AOTC_NO_MVE)
#include <arm_mve.h>
#define POOL_HELIUM_MAX 64 /* larger planes: sum_runs's contiguous lanes */
#endif

void aotc_global_avgpool_f32(int32_t planes, int32_t size, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    int32_t c = 0;
#if defined(POOL_HELIUM_MAX)
    if (size <= POOL_HELIUM_MAX) {
        const uint32_t step = (uint32_t)size * (uint32_t)sizeof(float);
        for (; c + 4 <= planes; c += 4, x += 4 * size) {
            /* lane j: plane c + j's elements, 4 a step at immediate offsets */
            uint32x4_t at = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0, 1), step), (uint32_t)(uintptr_t)x);
            float32x4_t s = vdupq_n_f32(0.0f), s2 = s;
            int32_t i;
            for (i = 0; i + 4 <= size; i += 4, at = vaddq_n_u32(at, 16)) {
                s = vaddq_f32(s, vldrwq_gather_base_f32(at, 0));
                s2 = vaddq_f32(s2, vldrwq_gather_base_f32(at, 4));
                s = vaddq_f32(s, vldrwq_gather_base_f32(at, 8));
                s2 = vaddq_f32(s2, vldrwq_gather_base_f32(at, 12));
            }
            for (; i < size; ++i, at = vaddq_n_u32(at, 4)) s = vaddq_f32(s, vldrwq_gather_base_f32(at, 0));
            vst1q_f32(y + c, vmulq_n_f32(vaddq_f32(s, s2), 1.0f / (float)size));
        }
    }
#endif
    for (; c < planes; ++c, x += size) y[c] = sum_runs(x, 1, size, size) / (float)size;
}
