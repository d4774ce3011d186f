/* Helpers the AVX-512F conv paths (conv_ig_avx512.h, conv_igb_avx512.c, conv_dwk_avx512.c and
 * conv_stem_avx512.h) share: masks of lanes in a range, and the epilogue (residual, activation,
 * masked store) of a finished vector of outputs.
 * Internal to runtime_c/kernels; nothing here is compiled without AVX-512F. */
#ifndef AOTC_CONV_X86_COMMON_H
#define AOTC_CONV_X86_COMMON_H

#include "conv_internal.h"
#include "paths_avx512.h" /* X86_PATH_MISSED */

#if defined(__AVX512F__)
#include <immintrin.h>

/* lanes j of 16 with lo <= a + j < hi */
static inline __mmask16 x86c_lanes(ptrdiff_t a, ptrdiff_t lo, ptrdiff_t hi) {
    const ptrdiff_t first = lo - a > 0 ? lo - a : 0, end = hi - a < 16 ? hi - a : 16;
    if (end <= first) return 0;
    return (__mmask16)((((uint32_t)1 << end) - 1u) & ~(((uint32_t)1 << first) - 1u));
}

/* The 9 taps' load masks of a 3 x 3 same-size conv's 16 output positions [q0, q0 + 16) of an
 * H x W plane (flat), tap t = 3 ky + kx: the lanes in the plane whose tap falls inside the image
 * (a row above, below; a column left, right). Bit operations, where a loop over the 16 lanes
 * cost about as much as the multiply-adds of a small block. */
static inline void x86c_masks3x3(ptrdiff_t q0, int32_t H, int32_t W, __mmask16 mk[9]) {
    const ptrdiff_t plane = (ptrdiff_t)H * W;
    const __mmask16 in = x86c_lanes(q0, 0, plane), up = x86c_lanes(q0, W, plane), down = x86c_lanes(q0, 0, plane - W);
    const int32_t ox = (int32_t)(q0 % W);
    uint32_t first = 0, last = 0; /* lanes in column 0, column W - 1 */
    int32_t j;
    for (j = (W - ox) % W; j < 16; j += W) first |= 1u << j;
    for (j = W - 1 - ox; j < 16; j += W) last |= 1u << j;
    {
        const __mmask16 left = (__mmask16)(in & ~first), right = (__mmask16)(in & ~last);
        mk[0] = up & left, mk[1] = up, mk[2] = up & right;
        mk[3] = left, mk[4] = in, mk[5] = right;
        mk[6] = down & left, mk[7] = down, mk[8] = down & right;
    }
}

/* the conv's activations these paths apply (the rest go elsewhere) */
/* A later plane's weights (n floats from w) and bias (b, or NULL) into L1, for the depthwise kernels that go plane by
 * plane: read once an inference, they come from L3 or memory, a miss at each plane's start; prefetched a plane or two
 * ahead they are there when it starts (issue 64). */
static inline void x86c_prefetch_plane(const float *w, int32_t n, const float *b) {
    int32_t i;
    for (i = 0; i < n; i += 16) _mm_prefetch((const char *)(w + i), _MM_HINT_T0);
    _mm_prefetch((const char *)(w + n - 1), _MM_HINT_T0);
    if (b != NULL) _mm_prefetch((const char *)b, _MM_HINT_T0);
}

static inline int x86c_act_ok(const aotc_conv_params *p) {
    return p->act == AOTC_ACT_NONE || p->act == AOTC_ACT_CLAMP || p->act == AOTC_ACT_LEAKY;
}

/* a (+ the residual at res when not NULL), p's activation, stored to y's lanes `out` */
static inline void x86c_finish(const aotc_conv_params *p, __m512 a, __mmask16 out, const float *res, float *y) {
    if (res != NULL) a = _mm512_add_ps(a, _mm512_maskz_loadu_ps(out, res));
    if (p->act == AOTC_ACT_LEAKY) {
        a = _mm512_mask_mul_ps(a, _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_LT_OQ), a,
                               _mm512_set1_ps(p->act_alpha));
    } else if (p->act == AOTC_ACT_CLAMP) {
        a = _mm512_min_ps(_mm512_max_ps(a, _mm512_set1_ps(p->act_lo)), _mm512_set1_ps(p->act_hi));
    }
    _mm512_mask_storeu_ps(y, out, a);
}

/* x86c_finish of 16 output channels' vectors acc[m], `plane` floats apart, with every residual loaded before
 * the first store: a load that follows a store whose address agrees with it in the low 12 bits waits for it
 * (4K aliasing), and channel planes of 4 KiB with tensors a multiple of that apart in the arena make every
 * residual load follow such a store. ResNet-8's 16-channel 32 x 32 conv with a residual: 45.5 -> 44.5 us (43.3
 * without the residual). */
static inline void x86c_finish16(const aotc_conv_params *p, __m512 *acc, __mmask16 out, const float *res, float *y,
                                 ptrdiff_t plane) {
    int m;
    if (res != NULL)
        _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m)
            acc[m] = _mm512_add_ps(acc[m], _mm512_maskz_loadu_ps(out, res + m * plane));
    _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m) x86c_finish(p, acc[m], out, NULL, y + m * plane);
}
#endif
#endif
