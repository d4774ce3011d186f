/* Depthwise 3 x 3 Conv, stride 1, pads of 1 on every side, on small planes with AVX-512F:
 * dw3x_s1, called first by the two kernels that take such convs (aotc_conv_depthwise3x3_direct_f32
 * and aotc_conv3x3_flat_f32), which go on as before where it returns 0. Internal to
 * runtime_c/kernels.
 *
 * Why: on narrow planes (a KWS DS-CNN's 25 x 5, a MobileNet's 12 x 12, 6 x 6, 3 x 3) the portable
 * kernels spend most of their time per plane and per row (their blocks of 8 outputs end in
 * partial blocks, their masks and clamps are set up per run): about 770 instructions per 25 x 5
 * plane. Here a plane is one flat run of HW outputs in vectors of 16, and each tap of a vector is
 * one masked load (zero where the tap falls outside the image, in the row above or below or past
 * a row's end; AVX-512's masked loads do not touch the masked-off lanes, so a plane's first and
 * last vectors may point outside the tensor) and one multiply-add: about 30 instructions per 16
 * outputs. The masks depend on the vector's position in the plane only, so they are made once
 * per call for every plane (at most DW3X_MAX_VECS vectors a plane: HW <= 1024). */
#ifndef AOTC_CONV_DW3_X86_H
#define AOTC_CONV_DW3_X86_H

#include "conv_internal.h"

#if defined(__AVX512F__) && !defined(AOTC_NO_X86_DW3)
#include <immintrin.h>

#define DW3X_MAX_VECS 64

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    const uint16_t *m; /* 9 masks per vector of a plane: m[9 v + 3 ky + kx], then the vector's
                        * own outputs (inside the plane) at m[9 v + 4] (the centre tap) */
    int32_t nv;
} dw3x_job;

/* Output planes [begin, end) (plane n * out_c + o), for the pool (aotc_threads.h). */
static void dw3x_planes(void *arg, int32_t begin, int32_t end) {
    const dw3x_job *J = (const dw3x_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t W = p->in_size[2], mult = p->out_c / p->in_c, act = p->act, nv = J->nv;
    const ptrdiff_t hw = (ptrdiff_t)p->in_size[1] * W;
    const __m512 lo = _mm512_set1_ps(act == AOTC_ACT_CLAMP ? p->act_lo : -INFINITY);
    const __m512 hi = _mm512_set1_ps(act == AOTC_ACT_CLAMP ? p->act_hi : INFINITY);
    const __m512 leak = _mm512_set1_ps(p->act_alpha);
    int32_t plane, v;
    for (plane = begin; plane < end; ++plane) {
        const int32_t n = plane / p->out_c, o = plane % p->out_c;
        const float *xc = J->x + ((ptrdiff_t)n * p->in_c + o / mult) * hw;
        const float *k = J->w + (ptrdiff_t)o * 9;
        const float *rc = J->res != NULL ? J->res + (ptrdiff_t)plane * hw : NULL;
        float *yc = J->y + (ptrdiff_t)plane * hw;
        const __m512 b = _mm512_set1_ps(J->bias != NULL ? J->bias[o] : 0.0f);
        const __m512 k0 = _mm512_set1_ps(k[0]), k1 = _mm512_set1_ps(k[1]), k2 = _mm512_set1_ps(k[2]);
        const __m512 k3 = _mm512_set1_ps(k[3]), k4 = _mm512_set1_ps(k[4]), k5 = _mm512_set1_ps(k[5]);
        const __m512 k6 = _mm512_set1_ps(k[6]), k7 = _mm512_set1_ps(k[7]), k8 = _mm512_set1_ps(k[8]);
        const uint16_t *m = J->m;
        /* each tap row's vectors of centre taps: the last one (p), this one (c), the next (n),
         * zero outside the image; the left and right taps are c shifted by one lane, the lane
         * shifted in from p or n (one load per tap row and vector, not three) */
        __m512 p0 = _mm512_setzero_ps(), p1 = p0, p2 = p0;
        __m512 c0 = _mm512_maskz_loadu_ps(m[1], xc - W), c1 = _mm512_maskz_loadu_ps(m[4], xc);
        __m512 c2 = _mm512_maskz_loadu_ps(m[7], xc + W);
        for (v = 0; v < nv; ++v, m += 9) {
            const float *t = xc + 16 * (ptrdiff_t)v + 16; /* the next vector's centre tap */
            const __m512 n0 = _mm512_maskz_loadu_ps(m[10], t - W), n1 = _mm512_maskz_loadu_ps(m[13], t);
            const __m512 n2 = _mm512_maskz_loadu_ps(m[16], t + W);
#define DW3X_LEFT(M, C, P) _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(M, _mm512_castps_si512(C), _mm512_castps_si512(P), 15))
#define DW3X_RIGHT(M, N, C) _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(M, _mm512_castps_si512(N), _mm512_castps_si512(C), 1))
            /* one sum per tap row: short chains of dependent multiply-adds */
            __m512 s0 = _mm512_fmadd_ps(k0, DW3X_LEFT(m[0], c0, p0), b);
            __m512 s1 = _mm512_mul_ps(k3, DW3X_LEFT(m[3], c1, p1));
            __m512 s2 = _mm512_mul_ps(k6, DW3X_LEFT(m[6], c2, p2));
            s0 = _mm512_fmadd_ps(k1, c0, s0);
            s1 = _mm512_fmadd_ps(k4, c1, s1);
            s2 = _mm512_fmadd_ps(k7, c2, s2);
            s0 = _mm512_fmadd_ps(k2, DW3X_RIGHT(m[2], n0, c0), s0);
            s1 = _mm512_fmadd_ps(k5, DW3X_RIGHT(m[5], n1, c1), s1);
            s2 = _mm512_fmadd_ps(k8, DW3X_RIGHT(m[8], n2, c2), s2);
#undef DW3X_LEFT
#undef DW3X_RIGHT
            p0 = c0, p1 = c1, p2 = c2, c0 = n0, c1 = n1, c2 = n2;
            s0 = _mm512_add_ps(s0, _mm512_add_ps(s1, s2));
            if (rc != NULL) s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(m[4], rc + 16 * (ptrdiff_t)v));
            if (act == AOTC_ACT_LEAKY) {
                s0 = _mm512_mask_mul_ps(s0, _mm512_cmp_ps_mask(s0, _mm512_setzero_ps(), _CMP_LT_OQ), s0, leak);
            } else {
                s0 = _mm512_min_ps(_mm512_max_ps(s0, lo), hi);
            }
            _mm512_mask_storeu_ps(yc + 16 * (ptrdiff_t)v, m[4], s0);
        }
    }
}

/* The whole conv, where it applies (2-D, 3 x 3, stride 1, no dilation, pads of 1 on every side, one
 * input channel per group, planes of at most 16 DW3X_MAX_VECS outputs): 1, else 0 (nothing done). */
static int dw3x_s1(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                   float *y) {
    const int32_t H = p->in_size[1], W = p->in_size[2];
    const int32_t hw = H * W, nv = (hw + 15) / 16;
    uint16_t m[9 * DW3X_MAX_VECS + 9];
    dw3x_job J;
    int32_t v, l, oy = 0, ox = 0;
    if (p->in_size[0] != 1 || p->kernel[0] != 1 || p->kernel[1] != 3 || p->kernel[2] != 3 || p->strides[1] != 1 ||
        p->strides[2] != 1 || p->dilations[1] != 1 || p->dilations[2] != 1 || p->pads[1] != 1 || p->pads[2] != 1 ||
        p->out_size[1] != H || p->out_size[2] != W || p->group != p->in_c || p->in_nhwc || nv > DW3X_MAX_VECS ||
        (p->act != AOTC_ACT_NONE && p->act != AOTC_ACT_CLAMP && p->act != AOTC_ACT_LEAKY)) {
        return 0;
    }
    for (v = 0; v < nv; ++v) { /* the masks: output (oy, ox) of lane l, its rows and columns inside */
        unsigned in = 0, up = 0, down = 0, left = 0, right = 0;
        for (l = 0; l < 16 && 16 * v + l < hw; ++l) {
            const unsigned bit = 1u << l;
            in |= bit;
            up |= oy > 0 ? bit : 0u;
            down |= oy < H - 1 ? bit : 0u;
            left |= ox > 0 ? bit : 0u;
            right |= ox < W - 1 ? bit : 0u;
            if (++ox == W) ox = 0, ++oy;
        }
        m[9 * v + 0] = (uint16_t)(up & left), m[9 * v + 1] = (uint16_t)up, m[9 * v + 2] = (uint16_t)(up & right);
        m[9 * v + 3] = (uint16_t)left, m[9 * v + 4] = (uint16_t)in, m[9 * v + 5] = (uint16_t)right;
        m[9 * v + 6] = (uint16_t)(down & left), m[9 * v + 7] = (uint16_t)down, m[9 * v + 8] = (uint16_t)(down & right);
    }
    for (l = 0; l < 9; ++l) m[9 * nv + l] = 0; /* past the last vector: nothing (its loads are all masked off) */
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y, J.m = m, J.nv = nv;
    aotc_parallel_for(dw3x_planes, &J, p->batch * p->out_c);
    return 1;
}
#else
#define dw3x_s1(p, x, w, bias, res, y) 0
#endif

#endif /* AOTC_CONV_DW3_X86_H */
