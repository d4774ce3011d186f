/* aotc_maxpool_avx512_f32: the float MaxPool's AVX-512F rows (pool_avx512.h) for the windows that
 * the per-window kernels (pool_max_k*_avx512.c) do not unroll (up to 17 columns at column stride 1, 33
 * at 2). Built without AVX-512F it runs aotc_maxpool_f32
 * (paths_avx512.h). */
#include "pool_avx512.h"

#if AOTC_MAXPOOL_F32_AVX512
MP16_PLANES(mp16_planes_any, p->kernel[2], p->strides[2], p->pads_begin[2])
#endif

void aotc_maxpool_avx512_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
#if AOTC_MAXPOOL_F32_AVX512
    if (mp16_fits(p)) {
        mp16_run(p, x, y, mp16_planes_any);
        return;
    }
    X86_PATH_MISSED("aotc_maxpool_avx512_f32");
#else
    aotc_maxpool_f32(p, x, y);
#endif
}
