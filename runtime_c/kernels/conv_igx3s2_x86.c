/* aotc_conv_igx3s2_f32: 3 x 3 convs at stride 2 on AVX-512, in register blocks of 16 positions x 16
 * output channels, the even and odd columns split by vpermt2ps (conv_ig_x86.h says why and how). */
#include "conv_ig_x86.h"

#if IGX_ON
#define IGX3S2_TAP(T, V)                                                                              \
    {                                                                                                 \
        const __m512 v_ = (V);                                                                        \
        const float *wr = wc + (T) * PANEL;                                                           \
        _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m) acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(wr[m]), v_, acc[m]); \
    }

/* R8: output rows of 8, two to a vector (the third tap of each row's last output is padding, IW <= 16);
 * else 16 outputs of one row. L1: rows of 8 with a left pad of 1 (a function of its own: no test in the
 * loop over the taps, where one cost ResNet-8's 8 x 8 conv 7 %) */
#define IGX3S2_KERNEL(NAME, R8, L1)                                                                    \
    static void NAME(void *arg, int32_t begin, int32_t end) {                                          \
        const igx_job *J = (const igx_job *)arg;                                                       \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2]; \
        const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, blocks = mg / 16;             \
        const int32_t pt = p->pads[1], pl = p->pads[2];                                                \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)OH * OW, k_rows = (ptrdiff_t)cg * 9; \
        const ptrdiff_t group_w = (ptrdiff_t)mg * k_rows;                                              \
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0); \
        const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));                              \
        const __m512i even2 = _mm512_set_epi32(0, 30, 28, 26, 24, 22, 20, 18, 0, 14, 12, 10, 8, 6, 4, 2); \
        const __m512i oddm1 = _mm512_set_epi32(29, 27, 25, 23, 21, 19, 17, 0, 13, 11, 9, 7, 5, 3, 1, 0); \
        int32_t item, m, c, ky;                                                                        \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t v = item % J->nvec, jb = item / J->nvec % blocks, gi = item / J->nvec / blocks; \
            const int32_t g = gi % p->group, n = gi / p->group;                                        \
            const ptrdiff_t p0 = 16 * (ptrdiff_t)v;                                                    \
            const int32_t oy = (int32_t)(p0 / OW), ox = (int32_t)(p0 % OW);                            \
            const __mmask16 in = igx_lanes(plane - p0);                                                \
            const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;          \
            const float *wb = J->wt + g * group_w + (ptrdiff_t)jb * k_rows * PANEL;                    \
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + (ptrdiff_t)jb * 16) * plane + p0; \
            ptrdiff_t ao[3], bo[3], co[3];                                                             \
            __mmask16 am[3], bm[3], cm[3];                                                             \
            __m512 acc[16];                                                                            \
            for (ky = 0; ky < 3; ++ky) { /* per tap row: the loads' offsets and masks (0: padding) */ \
                const int32_t r0 = 2 * oy + ky - pt;                                                   \
                if (R8) { /* lanes 0..7 from output row oy, 8..15 from oy + 1, from column 0 */        \
                    const int32_t r1 = r0 + 2;                                                         \
                    ao[ky] = (ptrdiff_t)r0 * IW, bo[ky] = (ptrdiff_t)r1 * IW, co[ky] = 0;              \
                    am[ky] = r0 >= 0 && r0 < IH ? igx_lanes(IW) : 0;                                   \
                    bm[ky] = r1 >= 0 && r1 < IH && oy + 1 < OH ? igx_lanes(IW) : 0;                    \
                    cm[ky] = 0;                                                                        \
                } else { /* columns 2 ox - pl .. 2 ox - pl + 32 of one row (lane 0 off at column -1) */ \
                    const int32_t ok = r0 >= 0 && r0 < IH, c0 = 2 * ox - pl;                          \
                    ao[ky] = (ptrdiff_t)r0 * IW + c0, bo[ky] = ao[ky] + 16, co[ky] = ao[ky] + 32;      \
                    am[ky] = ok ? (__mmask16)(igx_lanes(IW - c0) & ~igx_lanes(-c0)) : 0;               \
                    bm[ky] = ok ? igx_lanes(IW - c0 - 16) : 0;                                         \
                    cm[ky] = ok ? igx_lanes(IW - c0 - 32) & 1 : 0;                                     \
                }                                                                                      \
            }                                                                                          \
            for (m = 0; m < 16; ++m) acc[m] = _mm512_set1_ps(J->bias != NULL ? J->bias[g * mg + jb * 16 + m] : 0.0f); \
            for (c = 0; c < cg; ++c) {                                                                 \
                const float *xc = xg + (ptrdiff_t)c * in_plane;                                        \
                _Pragma("GCC unroll 3") for (ky = 0; ky < 3; ++ky) {                                   \
                    const float *wc = wb + ((ptrdiff_t)c * 9 + ky * 3) * PANEL;                        \
                    const __m512 a = _mm512_maskz_loadu_ps(am[ky], xc + ao[ky]);                       \
                    const __m512 b = _mm512_maskz_loadu_ps(bm[ky], xc + bo[ky]);                       \
                    const __m512 e0 = _mm512_permutex2var_ps(a, even, b);                              \
                    if (L1) { /* taps at columns 2 ox - 1 (odd, a lane on; column -1: 0), 2 ox, 2 ox + 1 */ \
                        IGX3S2_TAP(0, _mm512_maskz_permutex2var_ps((__mmask16)0xFEFE, a, oddm1, b))    \
                        IGX3S2_TAP(1, e0)                                                              \
                        IGX3S2_TAP(2, _mm512_permutex2var_ps(a, odd, b))                               \
                    } else {                                                                           \
                        const __m512 e2 = (R8) ? _mm512_maskz_permutex2var_ps((__mmask16)0x7F7F, a, even2, b) \
                                               : _mm512_castsi512_ps(_mm512_alignr_epi32(              \
                                                     _mm512_castps_si512(_mm512_maskz_loadu_ps(cm[ky], xc + co[ky])), \
                                                     _mm512_castps_si512(e0), 1));                     \
                        IGX3S2_TAP(0, e0)                                                              \
                        IGX3S2_TAP(1, _mm512_permutex2var_ps(a, odd, b))                               \
                        IGX3S2_TAP(2, e2)                                                              \
                    }                                                                                  \
                }                                                                                      \
            }                                                                                          \
            x86c_finish16(p, acc, in, J->res != NULL ? J->res + yo : NULL, J->y + yo, plane);               \
        }                                                                                              \
    }
IGX3S2_KERNEL(igx3s2_rows, 0, 0)
IGX3S2_KERNEL(igx3s2_rows8, 1, 0)
IGX3S2_KERNEL(igx3s2_rows8_pad1, 1, 1)
#undef IGX3S2_KERNEL
#undef IGX3S2_TAP

/* 1 if it ran the conv, else 0 */
static int igx3s2(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
                  float *y) {
    const int32_t mg = p->out_c / p->group, IW = p->in_size[2], OW = p->out_size[2];
    igx_job J = igx_job_for(p, x, wt, bias, res, y);
    if (p->out_nhwc != 0 || !igx_plain2d(p) || !x86c_act_ok(p) || p->kernel[1] != 3 || p->kernel[2] != 3 ||
        p->strides[1] != 2 || p->strides[2] != 2 || p->dilations[1] != 1 || p->dilations[2] != 1 || p->pads[1] > 1 ||
        p->pads[2] > 1 || mg % 16 != 0 || !(OW % 16 == 0 || (OW == 8 && IW <= 16)))
        return 0;
    aotc_parallel_for(OW != 8 ? igx3s2_rows : p->pads[2] ? igx3s2_rows8_pad1 : igx3s2_rows8, &J,
                      p->batch * p->group * (mg / 16) * J.nvec);
    return 1;
}
#endif

void aotc_conv_igx3s2_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                          const float *res, float *y) {
#if IGX_ON
    if (igx3s2(p, x, wt, bias, res, y)) return;
    X86_PATH_MISSED("aotc_conv_igx3s2_f32");
#else
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}
