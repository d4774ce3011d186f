/* aotc_conv_igx1_f32: 1 x 1 convs at stride 2 with 8 to 32 input channels per group on AVX-512, the
 * inputs of 16 positions gathered into registers (conv_ig_avx512.h says why and how). */
#include "conv_ig_avx512.h"

#if IGX_ON
/* ---- 1 x 1, stride 2 ---- */

#define IGX1_KERNEL(K)                                                                                 \
    static void igx1_k##K(void *arg, int32_t begin, int32_t end) {                                     \
        const igx_job *J = (const igx_job *)arg;                                                       \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2]; \
        const int32_t mg = p->out_c / p->group;                                                        \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)OH * OW;                     \
        const ptrdiff_t group_w = (ptrdiff_t)(mg + PANEL - 1) / PANEL * PANEL * (K);                   \
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0); \
        int32_t item, k, m;                                                                            \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t v = item % J->nvec, gi = item / J->nvec, g = gi % p->group, n = gi / p->group; \
            const ptrdiff_t p0 = 16 * (ptrdiff_t)v;                                                    \
            const int32_t oy = (int32_t)(p0 / OW), ox = (int32_t)(p0 % OW);                            \
            const __mmask16 in = plane - p0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (plane - p0)) - 1u); \
            const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * (K)) * in_plane;         \
            const float *wg = J->wt + g * group_w;                                                     \
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * plane + p0;           \
            ptrdiff_t lo_o, hi_o;                                                                      \
            __mmask16 lo_m, hi_m;                                                                      \
            __m512 xk[K];                                                                              \
            if (OW == 8) { /* two output rows of 8: input rows 2 oy and 2 oy + 2 */                   \
                lo_o = (ptrdiff_t)2 * oy * IW, hi_o = lo_o + 2 * (ptrdiff_t)IW;                        \
                lo_m = (__mmask16)((1u << IW) - 1u), hi_m = oy + 1 < OH ? lo_m : (__mmask16)0;         \
            } else { /* 16 outputs of one row: input columns 2 ox .. 2 ox + 31 */                      \
                const int32_t rest = IW - 2 * ox - 16;                                                 \
                lo_o = (ptrdiff_t)2 * oy * IW + 2 * ox, hi_o = lo_o + 16;                              \
                lo_m = (__mmask16)0xFFFF, hi_m = rest >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rest) - 1u); \
            }                                                                                          \
            _Pragma("GCC unroll 32") for (k = 0; k < (K); ++k) {                                       \
                const float *xc = xg + k * in_plane;                                                   \
                xk[k] = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lo_m, xc + lo_o), even,           \
                                               _mm512_maskz_loadu_ps(hi_m, xc + hi_o));                \
            }                                                                                          \
            for (m = 0; m < mg; ++m) {                                                                 \
                const float *wm = wg + (ptrdiff_t)(m / PANEL) * (K) * PANEL + m % PANEL;               \
                __m512 a = _mm512_set1_ps(J->bias != NULL ? J->bias[g * mg + m] : 0.0f), c = _mm512_setzero_ps(); \
                _Pragma("GCC unroll 32") for (k = 0; k < (K); k += 2) {                                \
                    a = _mm512_fmadd_ps(_mm512_set1_ps(wm[k * PANEL]), xk[k], a);                      \
                    c = _mm512_fmadd_ps(_mm512_set1_ps(wm[(k + 1) * PANEL]), xk[k + 1], c);            \
                }                                                                                      \
                x86c_finish(p, _mm512_add_ps(a, c), in, J->res != NULL ? J->res + yo + m * plane : NULL, \
                           J->y + yo + m * plane);                                                     \
            }                                                                                          \
        }                                                                                              \
    }
IGX1_KERNEL(8)
IGX1_KERNEL(16)
IGX1_KERNEL(24)
IGX1_KERNEL(32)
#undef IGX1_KERNEL


/* 1 if it ran the conv, else 0 */
static int igx1(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
                float *y) {
    const int32_t cg = p->in_c / p->group;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    igx_job J = igx_job_for(p, x, wt, bias, res, y);
    if (p->out_nhwc != 0 || !igx_plain2d(p) || !x86c_act_ok(p) || p->kernel[1] != 1 || p->kernel[2] != 1 ||
        p->strides[1] != 2 || p->strides[2] != 2 || p->pads[1] != 0 || p->pads[2] != 0 ||
        !(cg == 8 || cg == 16 || cg == 24 || cg == 32) || !(OW == 8 || OW % 16 == 0) || IW > 2 * OW ||
        IW < 2 * OW - 1 || IH < 2 * OH - 1 || (OW == 8 && IW > 16))
        return 0;
    aotc_parallel_for(cg == 8 ? igx1_k8 : cg == 16 ? igx1_k16 : cg == 24 ? igx1_k24 : igx1_k32, &J,
                      p->batch * p->group * J.nvec);
    return 1;
}
#endif

void aotc_conv_igx1_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                        const float *res, float *y) {
#if IGX_ON
    if (igx1(p, x, wt, bias, res, y)) return;
    X86_PATH_MISSED("aotc_conv_igx1_f32");
#else
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}
