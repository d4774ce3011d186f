/* ONNX Conv with a 1 x 1 kernel, stride 1, no padding: the GEMM core on the input in place
 * (aotc_conv_pointwise_f32), or on few positions Y^T = X^T * W^T (aotc_conv_pointwise_t_f32). */
#include "conv_internal.h"

/* ---- 1 x 1 Conv: a GEMM on the input as it is ------------------------------------ */

void aotc_conv_pointwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             const float *res, float *y, float *work) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t npos = p->out_size[0] * p->out_size[1] * p->out_size[2];
    aotc_sgemm_params gp = gemm_shape(mg, npos, cg);
    int32_t n, g;
    gp.cin_rs = 1; /* the bias, one value per row */
    gp.res_rs = npos;
    set_activation(&gp, p);
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const ptrdiff_t xo = ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * npos;
            gp.res = res != NULL ? res + yo : NULL;
            aotc_sgemm_f32(&gp, w + (ptrdiff_t)g * mg * cg, x + xo, bias != NULL ? bias + (ptrdiff_t)g * mg : NULL,
                           y + yo, work);
        }
    }
}

/* ---- 1 x 1 Conv on a few positions: Y^T = X^T * W^T ------------------------------------ */

void aotc_conv_pointwise_t_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                               const float *res, float *y, float *scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t npos = p->out_size[0] * p->out_size[1] * p->out_size[2];
    const ptrdiff_t wt_len = (ptrdiff_t)cg * ((mg + PANEL - 1) / PANEL * PANEL); /* a group's packed W^T */
    int32_t n, g, j0, i, j;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const ptrdiff_t xo = ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * npos;
            for (j0 = 0; j0 < mg; j0 += p->nc) { /* output channels [j0, j0 + nb) */
                const int32_t nb = min_i32(p->nc, mg - j0);
                aotc_sgemm_params gp = gemm_shape(npos, nb, cg);
                gp.a_rs = 1; /* A(i, c) = X[c][i]: X read transposed */
                gp.a_cs = npos;
                gp.b_rs = PANEL; /* W^T packed: panels of cg x PANEL */
                gp.b_ps = cg * PANEL;
                gp.b_padded = 1;
                gp.cin_rs = 0; /* the bias, one value per column */
                gp.cin_cs = 1;
                if (res == NULL) set_activation(&gp, p);
                aotc_sgemm_f32(&gp, x + xo, wt + g * wt_len + (ptrdiff_t)j0 * cg,
                               bias != NULL ? bias + (ptrdiff_t)g * mg + j0 : NULL, scratch, NULL);
                { /* scratch[i][j] -> Y[j0 + j][i], a row of scratch at a time */
                    float *AOTC_RESTRICT yb = y + yo + (ptrdiff_t)j0 * npos;
                    for (i = 0; i < npos; ++i) {
                        const float *AOTC_RESTRICT si = scratch + (ptrdiff_t)i * nb;
                        for (j = 0; j < nb; ++j) yb[(ptrdiff_t)j * npos + i] = si[j];
                    }
                    if (res != NULL) { /* + the residual, then the activation */
                        const float *AOTC_RESTRICT rb = res + (yb - y);
                        for (j = 0; j < nb * npos; ++j) yb[j] += rb[j];
                        aotc_activate_f32(yb, (ptrdiff_t)nb * npos, p->act, p->act_lo, p->act_hi, p->act_alpha);
                    }
                }
            }
        }
    }
}
