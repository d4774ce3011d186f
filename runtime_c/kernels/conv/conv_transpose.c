/* ONNX ConvTranspose, aotc_conv_transpose_f32: the GEMM core computes W^T * X into scratch,
 * then col2im adds it into the output. */
#include "conv_internal.h"

/* ---- ConvTranspose: GEMM + col2im ---------------------------------------------------- */

/* Adds the block of W^T * X for input positions [j0, j0 + nc) (cols: one row of nc per
 * output channel and tap) into the output channels ym of one group. */
static void col2im_block(const aotc_conv_params *q, const float *cols, int32_t mg, int32_t j0, int32_t nc,
                         float *ym) {
    const int32_t IH = q->in_size[1], IW = q->in_size[2];
    const int32_t OD = q->out_size[0], OH = q->out_size[1], OW = q->out_size[2];
    const int32_t KH = q->kernel[1], KW = q->kernel[2];
    const int32_t taps = q->kernel[0] * KH * KW;
    const int32_t sx = q->strides[2];
    const ptrdiff_t out_plane = (ptrdiff_t)OD * OH * OW;
    int32_t r;
    for (r = 0; r < mg * taps; ++r) {
        const int32_t tap = r % taps;
        const int32_t kz = tap / (KH * KW), ky = tap / KW % KH, kx = tap % KW;
        const float *crow = cols + (ptrdiff_t)r * nc;
        float *yc = ym + (ptrdiff_t)(r / taps) * out_plane;
        const int32_t offx = kx * q->dilations[2] - q->pads[2];
        int32_t lo, hi, jj = 0;
        int32_t iz = j0 / (IH * IW), iy = j0 / IW % IH, ix = j0 % IW;
        valid_range(IW, OW, sx, offx, &lo, &hi); /* inputs ix whose output ix * sx + offx is inside */
        while (jj < nc) { /* one input row (iz, iy) at a time */
            const int32_t run = min_i32(IW - ix, nc - jj);
            const int32_t oz = iz * q->strides[0] - q->pads[0] + kz * q->dilations[0];
            const int32_t oy = iy * q->strides[1] - q->pads[1] + ky * q->dilations[1];
            if (oz >= 0 && oz < OD && oy >= 0 && oy < OH) {
                float *yrow = yc + ((ptrdiff_t)oz * OH + oy) * OW;
                const int32_t a = lo > ix ? lo : ix, b = min_i32(hi, ix + run);
                int32_t t;
                for (t = a; t < b; ++t) yrow[t * sx + offx] += crow[jj + t - ix];
            }
            jj += run;
            ix = 0;
            if (++iy == IH) {
                iy = 0;
                ++iz;
            }
        }
    }
}

/* col2im_block for a channels-last Y (p->out_nhwc): channel c of position q at ym[q * C + c], ym
 * at the group's first channel (NCHW keeps the loop above, unit-stride stores). */
static void col2im_block_nhwc(const aotc_conv_params *q, const float *cols, int32_t mg, int32_t j0, int32_t nc,
                              float *ym) {
    const int32_t IH = q->in_size[1], IW = q->in_size[2];
    const int32_t OD = q->out_size[0], OH = q->out_size[1], OW = q->out_size[2];
    const int32_t KH = q->kernel[1], KW = q->kernel[2];
    const int32_t taps = q->kernel[0] * KH * KW;
    const int32_t sx = q->strides[2];
    const ptrdiff_t C = q->out_c;
    int32_t r;
    for (r = 0; r < mg * taps; ++r) {
        const int32_t tap = r % taps;
        const int32_t kz = tap / (KH * KW), ky = tap / KW % KH, kx = tap % KW;
        const float *crow = cols + (ptrdiff_t)r * nc;
        float *yc = ym + r / taps;
        const int32_t offx = kx * q->dilations[2] - q->pads[2];
        int32_t lo, hi, jj = 0;
        int32_t iz = j0 / (IH * IW), iy = j0 / IW % IH, ix = j0 % IW;
        valid_range(IW, OW, sx, offx, &lo, &hi);
        while (jj < nc) {
            const int32_t run = min_i32(IW - ix, nc - jj);
            const int32_t oz = iz * q->strides[0] - q->pads[0] + kz * q->dilations[0];
            const int32_t oy = iy * q->strides[1] - q->pads[1] + ky * q->dilations[1];
            if (oz >= 0 && oz < OD && oy >= 0 && oy < OH) {
                float *yrow = yc + ((ptrdiff_t)oz * OH + oy) * OW * C;
                const int32_t a = lo > ix ? lo : ix, b = min_i32(hi, ix + run);
                int32_t t;
                for (t = a; t < b; ++t) yrow[(ptrdiff_t)(t * sx + offx) * C] += crow[jj + t - ix];
            }
            jj += run;
            ix = 0;
            if (++iy == IH) {
                iy = 0;
                ++iz;
            }
        }
    }
}

void aotc_conv_transpose_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             float *y, float *scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t rows = mg * p->kernel[0] * p->kernel[1] * p->kernel[2];
    const int32_t npos = p->in_size[0] * p->in_size[1] * p->in_size[2];
    const ptrdiff_t out_plane = (ptrdiff_t)p->out_size[0] * p->out_size[1] * p->out_size[2];
    float *work = scratch + (ptrdiff_t)rows * p->nc;
    int32_t n, g, c, j0;
    for (n = 0; n < p->batch; ++n) {
        for (c = 0; c < p->out_c && !p->out_nhwc; ++c) {
            float *yc = y + ((ptrdiff_t)n * p->out_c + c) * out_plane;
            const float b = bias != NULL ? bias[c] : 0.0f;
            ptrdiff_t i;
            for (i = 0; i < out_plane; ++i) yc[i] = b;
        }
        if (p->out_nhwc) { /* channels last: each position's out_c channels start as the bias */
            float *yn = y + (ptrdiff_t)n * p->out_c * out_plane;
            ptrdiff_t i;
            for (c = 0; c < p->out_c; ++c) {
                const float b = bias != NULL ? bias[c] : 0.0f;
                for (i = 0; i < out_plane; ++i) yn[i * p->out_c + c] = b;
            }
        }
        for (g = 0; g < p->group; ++g) {
            const float *xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
            float *yg = y + ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * out_plane;
            float *yg_nhwc = y + (ptrdiff_t)n * p->out_c * out_plane + (ptrdiff_t)g * mg;
            for (j0 = 0; j0 < npos; j0 += p->nc) {
                const int32_t nc = min_i32(p->nc, npos - j0);
                aotc_sgemm_params gp = gemm_shape(rows, nc, cg);
                gp.a_rs = 1; /* A(i, k) = W[g * cg + k][i]: W read transposed */
                gp.a_cs = rows;
                gp.b_rs = npos;
                gp.beta = 0.0f;
                aotc_sgemm_f32(&gp, w + (ptrdiff_t)g * cg * rows, xg + j0, NULL, scratch, work);
                if (p->out_nhwc) col2im_block_nhwc(p, scratch, mg, j0, nc, yg_nhwc);
                else col2im_block(p, scratch, mg, j0, nc, yg);
            }
        }
    }
}
