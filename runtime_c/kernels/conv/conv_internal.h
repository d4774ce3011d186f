/* Helpers shared by the conv strategies (conv_*.c): index ranges inside the image, the GEMM
 * core's parameters for a conv's products, and the masks of the kernels that read taps outside
 * the image and drop them. Internal to runtime_c/kernels: no generated code includes it.
 *
 * The strategies, one file each (aotc_conv.h documents every entry point, and
 * aot/kernels/conv.py says when the compiler takes which):
 *   conv_implicit.c                implicit GEMM: 1-D/2-D Conv with constant weights, no scratch
 *   conv_winograd.c                3 x 3 stride-1 same-size convs by Winograd's F(2 x 2, 3 x 3), through scratch
 *   conv_winograd4.c               the same by F(4 x 4, 3 x 3): 4 x fewer multiply-adds, larger weights
 *   conv_pointwise.c               1 x 1 convs: the GEMM core on the input in place, or X^T * W^T
 *   conv_im2col.c                  patch matrices + the GEMM core (any Conv; stride 1 from a padded copy)
 *   conv_direct.c                  any Conv without scratch, tiles summed in registers
 *   conv_depthwise.c               depthwise: the direct loop; 3 x 3 through a padded plane
 *   conv_depthwise3x3_direct.c     depthwise 3 x 3 straight from the input, no scratch
 *   conv_depthwise_kxk.c           depthwise 3/5/7-wide straight from the input, any pads, no scratch
 *   conv_flat3x3.c                 3 x 3 with few input channels per group, one flat pass per plane
 *   conv_transpose.c               ConvTranspose: the GEMM core + col2im
 *   conv_ref.c                     the reference all of them are tested against (not shipped)
 * Padding never costs a test per element: each loop runs over the range of output positions
 * whose input lies inside the image. No allocation, no globals. */
#ifndef AOTC_CONV_INTERNAL_H
#define AOTC_CONV_INTERNAL_H

#include "aotc_conv.h"
#include "aotc_gemm.h"
#include "aotc_threads.h"
#include "microkernel.h"

#include <math.h>
#include <string.h>

#define PANEL AOTC_GEMM_PANEL

MK_UNUSED static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

/* C[m][n] = A[m][k] * B[k][n] + C_in, all row-major and plain: the callers change what differs. */
MK_UNUSED static aotc_sgemm_params gemm_shape(int32_t m, int32_t n, int32_t k) {
    aotc_sgemm_params gp;
    memset(&gp, 0, sizeof gp);
    gp.m = m;
    gp.n = n;
    gp.k = k;
    gp.a_rs = k;
    gp.a_cs = 1;
    gp.b_rs = n;
    gp.b_ps = PANEL;
    gp.ldc = n;
    gp.alpha = 1.0f;
    gp.beta = 1.0f;
    gp.act = AOTC_ACT_NONE;
    return gp;
}

/* The conv's fused activation, applied by the GEMM as it stores finished sums. */
MK_UNUSED static void set_activation(aotc_sgemm_params *gp, const aotc_conv_params *p) {
    gp->act = p->act;
    gp->act_lo = p->act_lo;
    gp->act_hi = p->act_hi;
    gp->act_alpha = p->act_alpha;
}

/* [*lo, *hi): the positions o in [0, n_out) whose source index o * s + off lies in [0, n_in). */
MK_UNUSED static MK_INLINE void valid_range(int32_t n_out, int32_t n_in, int32_t s, int32_t off, int32_t *lo,
                               int32_t *hi) {
    int32_t l, h;
    if (s == 1) {
        l = off < 0 ? -off : 0;
        h = n_in - off;
    } else {
        l = off < 0 ? (-off + s - 1) / s : 0;
        h = n_in - 1 - off < 0 ? 0 : (n_in - 1 - off) / s + 1;
    }
    h = min_i32(h, n_out);
    *lo = min_i32(l, h);
    *hi = h;
}

/* The end of the run of output positions from o on (o < n_out) whose kernel taps lie inside the
 * input for the same range [*k0, *k1) (taps at o * s - pad + k * d). */
MK_UNUSED static int32_t tap_run(int32_t o, int32_t n_out, int32_t n_in, int32_t K, int32_t s, int32_t d,
                                 int32_t pad, int32_t *k0, int32_t *k1) {
    int32_t a, b;
    valid_range(K, n_in, d, o * s - pad, k0, k1);
    for (++o; o < n_out; ++o) {
        valid_range(K, n_in, d, o * s - pad, &a, &b);
        if (a != *k0 || b != *k1) break;
    }
    return o;
}

/* m[q] for q in [0, n]: all bits clear where q % w == 0 (the first column of a row of w), else
 * all set. The taps of output q one column left lie inside its row iff m[q], one column right
 * iff m[q + 1]. */
MK_UNUSED static void first_column_mask(uint32_t *m, int32_t n, int32_t w) {
    int32_t q, c;
    for (q = 0; q <= n; q += w) {
        const int32_t end = min_i32(q + w, n + 1);
        m[q] = 0u;
        for (c = q + 1; c < end; ++c) m[c] = 0xFFFFFFFFu;
    }
}

/* v where the mask m is all ones, +0.0f where it is zero: a bitwise AND, exact for any v (a
 * product with 0 would turn an inf into a NaN) and vectorised as one (a float compare and
 * select is not, by gcc, under the default -ftrapping-math). */
MK_UNUSED static float keep_if(float v, uint32_t m) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u &= m;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* AVX-512F paths that several kernels try first: 1 if it ran the conv, else 0 (always 0 without AVX-512F).
 * Depthwise 3 x 3 on small planes or short rows (conv_dw3_avx512.c); depthwise K x K on long rows, at
 * stride 1 only when s1 (conv_dwk_avx512.c); RGB stems at stride 2, w OIHW or (packed) the implicit
 * GEMM's W^T (conv_stemx_avx512.c). */
int aotc_conv_dw3_avx512(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                      float *y);
int aotc_conv_dwk_avx512(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                      float *y, int s1);
/* conv_dwkc_avx512.c: depthwise 5 x 5 and 7 x 7 in vectors of 16 channels on AVX-512F; 1 if it ran the conv */
int aotc_conv_dwkc_avx512(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                       float *y);
int aotc_conv_stem_avx512(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                       float *y, int packed);

#endif /* AOTC_CONV_INTERNAL_H */
