/* aotc_maxpool_s2_f32: the float MaxPool's AVX-512F rows (pool_x86.h) for windows of 3 columns after
 * 0 or 1 leading pad columns, or of 2 after none, at column stride 2 (ResNet's 3 x 3 / 2 pool, VGG's
 * 2 x 2 / 2), each with its shape's loops unrolled. Built without AVX-512F it runs aotc_maxpool_f32
 * (x86_paths.h). */
#include "pool_x86.h"

#if AOTC_MAXPOOL_F32_AVX512
MP16_PLANES(mp16_planes_k3s2p0, 3, 2, 0)
MP16_PLANES(mp16_planes_k3s2p1, 3, 2, 1)
MP16_PLANES(mp16_planes_k2s2p0, 2, 2, 0)
#endif

void aotc_maxpool_s2_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
#if AOTC_MAXPOOL_F32_AVX512
    const int32_t kw = p->kernel[2], sw = p->strides[2], pw = p->pads_begin[2];
    if (mp16_fits(p) && kw == 3 && sw == 2 && pw == 0) {
        mp16_run(p, x, y, mp16_planes_k3s2p0);
        return;
    }
    if (mp16_fits(p) && kw == 3 && sw == 2 && pw == 1) {
        mp16_run(p, x, y, mp16_planes_k3s2p1);
        return;
    }
    if (mp16_fits(p) && kw == 2 && sw == 2 && pw == 0) {
        mp16_run(p, x, y, mp16_planes_k2s2p0);
        return;
    }
    X86_PATH_MISSED("aotc_maxpool_s2_f32");
#else
    aotc_maxpool_f32(p, x, y);
#endif
}
