/* What the two Winograd kernels share (conv_winograd.c's F(2 x 2, 3 x 3), conv_winograd4.c's F(4 x 4,
 * 3 x 3)): a band's state, its products on the GEMM core, and the loop over images and bands that runs
 * each band's three steps on the thread pool. Each kernel supplies its two transforms. Internal to
 * runtime_c/kernels. */
#ifndef AOTC_CONV_WINOGRAD_H
#define AOTC_CONV_WINOGRAD_H

#include "conv_internal.h"

typedef struct {
    const aotc_conv_params *p;
    const float *x, *u, *bias, *res;
    float *y, *v, *m;
    int32_t n;       /* image */
    int32_t ty0;     /* the band's first tile row */
    int32_t th;      /* tile rows in the band */
    int32_t tw;      /* tiles per tile row: ceil(W / tile) */
    int32_t tiles16; /* the band's tiles rounded up to PANEL: the columns V holds */
    int32_t tp;      /* the largest band's tiles16: the pitch of V's and M's rows */
} wino_job;

/* items: the products M[e] = U[e] * V[e] (out_c x tiles, rows tp apart). The band's tiles, not its whole
 * panels: the GEMM's narrow tiles take a last panel's few columns, and the output transforms read no
 * product past them. */
MK_UNUSED static void wino_gemm_items(void *arg, int32_t begin, int32_t end) {
    const wino_job *J = (const wino_job *)arg;
    const int32_t C = J->p->in_c, M = J->p->out_c;
    aotc_sgemm_params gp = gemm_shape(M, J->th * J->tw, C);
    int32_t e;
    gp.b_rs = PANEL;
    gp.b_ps = C * PANEL;
    gp.b_padded = 1;
    gp.ldc = J->tp;
    for (e = begin; e < end; ++e)
        aotc_sgemm_f32(&gp, J->u + (ptrdiff_t)e * M * C, J->v + (ptrdiff_t)e * C * J->tp, NULL,
                       J->m + (ptrdiff_t)e * M * J->tp, NULL);
}

/* y[0, n) = act(o + r) (r may be NULL): a row of outputs the Winograd kernels assembled in o */
MK_UNUSED static void wino_finish_row(const aotc_conv_params *p, const float *o, const float *r, float *y,
                                      int32_t n) {
    int32_t i;
    if (r != NULL)
        for (i = 0; i < n; ++i) y[i] = o[i] + r[i];
    else
        memcpy(y, o, (size_t)n * sizeof(float));
    if (p->act != AOTC_ACT_NONE) aotc_activate_f32(y, n, p->act, p->act_lo, p->act_hi, p->act_alpha);
}

/* Output channel m's rows of the band: each tile row's `tile` output rows, interleaved from o (output (i, j) of
 * the band's tiles at o + (tile i + j) ostride, flat) into row, then finished into y. `tile` is a constant
 * where it is inlined, so the interleave loop is unrolled. */
static inline void wino_store_rows(const wino_job *J, int32_t m, int32_t tile, const float *o, ptrdiff_t ostride,
                                   float *row) {
    const aotc_conv_params *p = J->p;
    const int32_t OH = p->out_size[1], OW = p->out_size[2], tw = J->tw;
    const ptrdiff_t yplane = ((ptrdiff_t)J->n * p->out_c + m) * OH * OW;
    int32_t ty, i, j, t;
    for (ty = 0; ty < J->th; ++ty)
        for (i = 0; i < tile && tile * (J->ty0 + ty) + i < OH; ++i) {
            const ptrdiff_t at = yplane + (ptrdiff_t)(tile * (J->ty0 + ty) + i) * OW;
            const float *e = o + tile * i * ostride + ty * tw; /* output (i, j) of the row's tiles: e + j ostride */
            for (t = 0; t < tw; ++t)
                for (j = 0; j < tile; ++j) row[tile * t + j] = e[j * ostride + t];
            wino_finish_row(p, row, J->res != NULL ? J->res + at : NULL, J->y + at, OW);
        }
}

/* F(tile x tile, 3 x 3) over the whole conv: per image and band of p->nc tile rows, the input transform
 * over the input channels, the `products` GEMMs, the output transform over the output channels, each
 * split over the thread pool. scratch: V (products x in_c x tp floats), then M (products x out_c x tp). */
MK_UNUSED static void wino_run(const aotc_conv_params *p, const float *x, const float *u, const float *bias,
                               const float *res, float *y, float *scratch, int32_t tile, int32_t products,
                               aotc_task_fn input_items, aotc_task_fn output_items) {
    const int32_t th_all = (p->out_size[1] + tile - 1) / tile, band = p->nc > 0 ? p->nc : 1;
    wino_job J;
    int32_t n;
    J.p = p, J.x = x, J.u = u, J.bias = bias, J.res = res, J.y = y;
    J.tw = (p->out_size[2] + tile - 1) / tile;
    J.tp = (band * J.tw + PANEL - 1) / PANEL * PANEL; /* the largest band's; V and M keep this pitch */
    J.v = scratch;
    J.m = scratch + (ptrdiff_t)products * p->in_c * J.tp;
    for (n = 0; n < p->batch; ++n) {
        J.n = n;
        for (J.ty0 = 0; J.ty0 < th_all; J.ty0 += band) {
            J.th = min_i32(band, th_all - J.ty0);
            J.tiles16 = (J.th * J.tw + PANEL - 1) / PANEL * PANEL;
            aotc_parallel_for(input_items, &J, p->in_c);
            aotc_parallel_for(wino_gemm_items, &J, products);
            aotc_parallel_for(output_items, &J, p->out_c);
        }
    }
}

#endif /* AOTC_CONV_WINOGRAD_H */
