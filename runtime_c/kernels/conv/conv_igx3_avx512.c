/* aotc_conv_igx3_f32: 3 x 3 same-size convs at stride 1 on AVX-512, in register blocks of 16 positions
 * x 16 output channels: igx3 on an NCHW input, rgb on a channels-last RGB one (conv_ig_avx512.h says
 * why and how). */
#include "conv_ig_avx512.h"

#if IGX_ON
/* ---- 3 x 3, stride 1, same size ---- */

#define IGX3_TAP(T, DY, DX)                                                                           \
    {                                                                                                 \
        const __m512 v = _mm512_maskz_loadu_ps(mk[T], xc + (DY) * W + (DX));                           \
        const float *wr = wc + (T) * PANEL;                                                           \
        _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m) acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(wr[m]), v, acc[m]); \
    }

static void igx3_items(void *arg, int32_t begin, int32_t end) {
    const igx_job *J = (const igx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t H = p->out_size[1], W = p->out_size[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, blocks = mg / 16;
    const ptrdiff_t plane = (ptrdiff_t)H * W, k_rows = (ptrdiff_t)cg * 9, group_w = (ptrdiff_t)mg * k_rows;
    int32_t item, m, c;
    for (item = begin; item < end; ++item) {
        const int32_t v = item % J->nvec, jb = item / J->nvec % blocks, gi = item / J->nvec / blocks;
        const int32_t g = gi % p->group, n = gi / p->group;
        const ptrdiff_t p0 = 16 * (ptrdiff_t)v;
        const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * plane + p0;
        const float *wb = J->wt + g * group_w + (ptrdiff_t)jb * k_rows * PANEL;
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + (ptrdiff_t)jb * 16) * plane + p0;
        __mmask16 mk[9], in;
        __m512 acc[16];
        x86c_masks3x3(p0, H, W, mk); /* the lanes' masks: inside the plane; a row above, below; a column left, right */
        in = mk[4];
        for (m = 0; m < 16; ++m) acc[m] = _mm512_set1_ps(J->bias != NULL ? J->bias[g * mg + jb * 16 + m] : 0.0f);
        /* the residual's lines on their way while the taps run. Measured, not designed: with this loop gcc (12)
         * also keeps different masks of the tap loop in registers, and ResNet-8's 16-channel convs took 1.4 us
         * less each with or without a residual (43.5 -> 42.1 us; 96 % of the FMA peak) */
        if (J->res != NULL)
            for (m = 0; m < 16; ++m) _mm_prefetch((const char *)(J->res + yo + m * plane), _MM_HINT_T1);
        for (c = 0; c < cg; ++c) {
            const float *xc = xg + (ptrdiff_t)c * plane, *wc = wb + (ptrdiff_t)c * 9 * PANEL;
            IGX3_TAP(0, -1, -1) IGX3_TAP(1, -1, 0) IGX3_TAP(2, -1, 1)
            IGX3_TAP(3, 0, -1) IGX3_TAP(4, 0, 0) IGX3_TAP(5, 0, 1)
            IGX3_TAP(6, 1, -1) IGX3_TAP(7, 1, 0) IGX3_TAP(8, 1, 1)
        }
        x86c_finish16(p, acc, in, J->res != NULL ? J->res + yo : NULL, J->y + yo, plane);
    }
}
#undef IGX3_TAP

/* ---- 3 x 3, stride 1, same size, on a channels-last RGB input (a Keras stem) ---- */

#define IGX_RGB_WMAX 512 /* widest row: the ring of deinterleaved rows (18.5 KiB) lives on the stack */
#define IGX_RGB_RS (IGX_RGB_WMAX + 2) /* floats per channel row: a zero column on each side */

/* ring[c][0 .. W + 1] = input row iy's channel c with a zero column at each end (all zero for a pad
 * row): 16 positions' 48 floats come in three loads and go into the channels' vectors by two
 * vpermt2ps each. */
static void igx3_rgb_row(float *ring, const float *xn, int32_t iy, int32_t H, int32_t W, const __m512i *i1,
                         const __m512i *i2) {
    int32_t c, x0;
    for (c = 0; c < 3; ++c) ring[c * IGX_RGB_RS] = ring[c * IGX_RGB_RS + W + 1] = 0.0f;
    for (x0 = 0; x0 < W; x0 += 16) {
        if (iy < 0 || iy >= H) {
            for (c = 0; c < 3; ++c) _mm512_storeu_ps(ring + c * IGX_RGB_RS + 1 + x0, _mm512_setzero_ps());
        } else {
            const float *xr = xn + ((ptrdiff_t)iy * W + x0) * 3;
            const __m512 l0 = _mm512_loadu_ps(xr), l1 = _mm512_loadu_ps(xr + 16), l2 = _mm512_loadu_ps(xr + 32);
            for (c = 0; c < 3; ++c)
                _mm512_storeu_ps(ring + c * IGX_RGB_RS + 1 + x0,
                                 _mm512_permutex2var_ps(_mm512_permutex2var_ps(l0, i1[c], l1), i2[c], l2));
        }
    }
}

/* 16 positions x 16 output channels as igx3, rows of a multiple of 16 (at most IGX_RGB_WMAX). Items
 * (image, output row, block of 16 channels), the last innermost; the three input rows an output
 * row reads are kept deinterleaved (channel planes, zero columns at the ends) in a ring of three
 * on the stack, so each input row is split into channels once per run of items and every tap is
 * one unmasked load: the split per tap (two vpermt2ps per channel, as ResNet-8's stem did) took
 * about a fifth of the stem's time. W^T's rows go (ky, kx, c). */
static void igx3_rgb_items(void *arg, int32_t begin, int32_t end) {
    const igx_job *J = (const igx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t H = p->out_size[1], W = p->out_size[2], mg = p->out_c, blocks = mg / 16;
    const ptrdiff_t plane = (ptrdiff_t)H * W, k_rows = 27;
    float ring[3 * 3 * IGX_RGB_RS]; /* slot iy % 3: 3 channel rows */
    __m512i i1[3], i2[3];
    int32_t item, m, c, j, ky, kx, x0, ring_n = -1, top = 0; /* the ring holds rows top - 2 .. top of image ring_n */
    for (c = 0; c < 3; ++c) { /* channel c's lane j: float 3 j + c of the 48 */
        int32_t a[16], b[16];
        for (j = 0; j < 16; ++j) {
            const int32_t f = 3 * j + c;
            a[j] = f < 32 ? f : 0;
            b[j] = f < 32 ? j : 16 + f - 32;
        }
        i1[c] = _mm512_loadu_si512(a), i2[c] = _mm512_loadu_si512(b);
    }
    for (item = begin; item < end; ++item) {
        const int32_t jb = item % blocks, oy = item / blocks % H, n = item / blocks / H;
        const float *xn = J->x + (ptrdiff_t)n * 3 * plane;
        const float *wb = J->wt + (ptrdiff_t)jb * k_rows * PANEL;
        int32_t iy = ring_n == n && top >= oy - 1 ? top + 1 : oy - 1; /* the first row not in the ring */
        for (; iy <= oy + 1; ++iy) igx3_rgb_row(ring + (iy + 3) % 3 * 3 * IGX_RGB_RS, xn, iy, H, W, i1, i2);
        ring_n = n, top = oy + 1;
        for (x0 = 0; x0 < W; x0 += 16) {
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)jb * 16) * plane + (ptrdiff_t)oy * W + x0;
            __m512 acc[16];
            _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m)
                acc[m] = _mm512_set1_ps(J->bias != NULL ? J->bias[jb * 16 + m] : 0.0f);
            for (ky = 0; ky < 3; ++ky) {
                const float *r = ring + (oy + ky + 2) % 3 * 3 * IGX_RGB_RS + x0; /* row oy + ky - 1, column -1 */
                _Pragma("GCC unroll 3") for (kx = 0; kx < 3; ++kx) {
                    _Pragma("GCC unroll 3") for (c = 0; c < 3; ++c) {
                        const __m512 xv = _mm512_loadu_ps(r + c * IGX_RGB_RS + kx);
                        const float *wr = wb + (ptrdiff_t)((ky * 3 + kx) * 3 + c) * PANEL;
                        _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m)
                            acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(wr[m]), xv, acc[m]);
                    }
                }
            }
            x86c_finish16(p, acc, 0xFFFF, J->res != NULL ? J->res + yo : NULL, J->y + yo, plane);
        }
    }
}
#undef IGX_RGB_RS

/* 1 if it ran the conv, else 0 */
static int igx3(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
                float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    igx_job J = igx_job_for(p, x, wt, bias, res, y);
    if (p->out_nhwc != 0 || !x86c_act_ok(p) || p->kernel[1] != 3 || p->kernel[2] != 3 || p->strides[1] != 1 ||
        p->strides[2] != 1 || p->dilations[1] != 1 || p->dilations[2] != 1 || p->pads[1] != 1 || p->pads[2] != 1 ||
        OH != IH || OW != IW || mg % 16 != 0)
        return 0;
    if (p->in_nhwc != 0 && p->in_c == 3 && p->group == 1 && p->in_size[0] == 1 && p->out_size[0] == 1 &&
        p->kernel[0] == 1 && p->pads[0] == 0 && OW % 16 == 0 && OW <= IGX_RGB_WMAX) {
        aotc_parallel_for(igx3_rgb_items, &J, p->batch * OH * (mg / 16));
        return 1;
    }
    if (igx_plain2d(p) && (cg <= 32 || (cg <= 128 && (ptrdiff_t)OH * OW >= 784))) {
        aotc_parallel_for(igx3_items, &J, p->batch * p->group * (mg / 16) * J.nvec);
        return 1;
    }
    return 0;
}
#undef IGX_RGB_WMAX
#endif

void aotc_conv_igx3_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                        const float *res, float *y) {
#if IGX_ON
    if (igx3(p, x, wt, bias, res, y)) return;
    X86_PATH_MISSED("aotc_conv_igx3_f32");
#else
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}
