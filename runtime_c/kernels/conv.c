/* ONNX Conv and ConvTranspose, float32, NCHW, 1 to 3 spatial dims (always looped as
 * D x H x W, with unit leading dims). The general Conv is im2col + the GEMM core,
 * block by block so scratch stays small; 1 x 1 convs multiply the input in place;
 * depthwise convs are a direct loop. Padding never costs a test per element: each
 * loop runs over the range of output positions whose input lies inside the image.
 * No allocation, no globals. */
#include "aotc_conv.h"

#include "aotc_gemm.h"

#define PANEL AOTC_GEMM_PANEL

static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

/* [*lo, *hi): the positions o in [0, n_out) whose source index o * s + off lies in [0, n_in). */
static void valid_range(int32_t n_out, int32_t n_in, int32_t s, int32_t off, int32_t *lo, int32_t *hi) {
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

/* ---- general Conv: im2col + GEMM ------------------------------------------------ */

/* Writes n values to columns jj.. of one patch-matrix row whose panels are pstride floats
 * apart: src[0], src[s], ... or zeros when src is NULL. */
static void put_run(float *row, ptrdiff_t pstride, int32_t jj, int32_t n, const float *src, int32_t s) {
    while (n > 0) {
        const int32_t m = min_i32(n, PANEL - jj % PANEL); /* up to the end of this panel */
        float *d = row + (jj / PANEL) * pstride + jj % PANEL;
        int32_t t;
        if (src == NULL) {
            for (t = 0; t < m; ++t) d[t] = 0.0f;
        } else {
            if (s == 1) {
                for (t = 0; t < m; ++t) d[t] = src[t];
            } else {
                for (t = 0; t < m; ++t) d[t] = src[t * s];
            }
            src += (ptrdiff_t)m * s;
        }
        jj += m;
        n -= m;
    }
}

/* Rows [p0, p0 + kc) and output positions [j0, j0 + nc) of the patch matrix of one image
 * and group (x points at the group's first channel), into `col` in packed panels:
 * element (p, j) at col[((j - j0) / PANEL) * kc * PANEL + (p - p0) * PANEL + (j - j0) % PANEL].
 * Row p is input channel p / taps and kernel tap p % taps; padding reads as zero. */
static void im2col_block(const aotc_conv_params *q, const float *x, int32_t p0, int32_t kc, int32_t j0,
                         int32_t nc, float *col) {
    const int32_t ID = q->in_size[0], IH = q->in_size[1], IW = q->in_size[2];
    const int32_t OH = q->out_size[1], OW = q->out_size[2];
    const int32_t KH = q->kernel[1], KW = q->kernel[2];
    const int32_t taps = q->kernel[0] * KH * KW;
    const ptrdiff_t in_plane = (ptrdiff_t)ID * IH * IW;
    const ptrdiff_t pstride = (ptrdiff_t)kc * PANEL;
    const int32_t padded_nc = (nc + PANEL - 1) / PANEL * PANEL;
    int32_t r;
    for (r = 0; r < kc; ++r) {
        const int32_t p = p0 + r, tap = p % taps;
        const int32_t kz = tap / (KH * KW), ky = tap / KW % KH, kx = tap % KW;
        const float *xc = x + (p / taps) * in_plane;
        const int32_t offx = kx * q->dilations[2] - q->pads[2];
        int32_t lo, hi, jj = 0;
        int32_t oz = j0 / (OH * OW), oy = j0 / OW % OH, ox = j0 % OW;
        float *row = col + (ptrdiff_t)r * PANEL;
        valid_range(OW, IW, q->strides[2], offx, &lo, &hi);
        while (jj < nc) { /* one output row (oz, oy) at a time */
            const int32_t run = min_i32(OW - ox, nc - jj);
            const int32_t iz = oz * q->strides[0] - q->pads[0] + kz * q->dilations[0];
            const int32_t iy = oy * q->strides[1] - q->pads[1] + ky * q->dilations[1];
            if (iz >= 0 && iz < ID && iy >= 0 && iy < IH) {
                const float *xrow = xc + ((ptrdiff_t)iz * IH + iy) * IW;
                const int32_t a = min_i32(lo > ox ? lo : ox, ox + run);
                const int32_t b = hi > a ? min_i32(hi, ox + run) : a;
                put_run(row, pstride, jj, a - ox, NULL, 0);
                if (b > a) put_run(row, pstride, jj + a - ox, b - a, xrow + (a * q->strides[2] + offx), q->strides[2]);
                put_run(row, pstride, jj + b - ox, ox + run - b, NULL, 0);
            } else {
                put_run(row, pstride, jj, run, NULL, 0);
            }
            jj += run;
            ox = 0;
            if (++oy == OH) {
                oy = 0;
                ++oz;
            }
        }
        put_run(row, pstride, nc, padded_nc - nc, NULL, 0); /* the last panel's unused columns */
    }
}

void aotc_conv_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias, float *y,
                   float *scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t taps = p->kernel[0] * p->kernel[1] * p->kernel[2];
    const int32_t k = cg * taps;
    const int32_t npos = p->out_size[0] * p->out_size[1] * p->out_size[2];
    const ptrdiff_t in_plane = (ptrdiff_t)p->in_size[0] * p->in_size[1] * p->in_size[2];
    int32_t n, g, j0, p0;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const float *xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
            const float *wg = w + (ptrdiff_t)g * mg * k;
            float *yg = y + ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * npos;
            for (j0 = 0; j0 < npos; j0 += p->nc) {
                const int32_t nc = min_i32(p->nc, npos - j0);
                for (p0 = 0; p0 < k; p0 += p->kc) {
                    const int32_t kc = min_i32(p->kc, k - p0);
                    aotc_sgemm_params gp;
                    const float *c_in;
                    gp.m = mg;
                    gp.n = nc;
                    gp.k = kc;
                    gp.a_rs = k;
                    gp.a_cs = 1;
                    gp.b_rs = PANEL;
                    gp.b_ps = kc * PANEL;
                    gp.b_padded = 1;
                    gp.ldc = npos;
                    gp.alpha = 1.0f;
                    gp.beta = 1.0f;
                    if (p0 == 0) { /* the first block starts from the bias */
                        c_in = bias != NULL ? bias + (ptrdiff_t)g * mg : NULL;
                        gp.cin_rs = 1;
                        gp.cin_cs = 0;
                    } else { /* later blocks add to what is there */
                        c_in = yg + j0;
                        gp.cin_rs = npos;
                        gp.cin_cs = 1;
                    }
                    im2col_block(p, xg, p0, kc, j0, nc, scratch);
                    aotc_sgemm_f32(&gp, wg + p0, scratch, c_in, yg + j0, NULL);
                }
            }
        }
    }
}

/* ---- 1 x 1 Conv: a GEMM on the input as it is ------------------------------------ */

void aotc_conv_pointwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             float *y, float *work) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t npos = p->out_size[0] * p->out_size[1] * p->out_size[2];
    aotc_sgemm_params gp;
    int32_t n, g;
    gp.m = mg;
    gp.n = npos;
    gp.k = cg;
    gp.a_rs = cg;
    gp.a_cs = 1;
    gp.b_rs = npos;
    gp.b_ps = PANEL;
    gp.b_padded = 0;
    gp.ldc = npos;
    gp.cin_rs = 1;
    gp.cin_cs = 0;
    gp.alpha = 1.0f;
    gp.beta = 1.0f;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const ptrdiff_t xo = ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * npos;
            aotc_sgemm_f32(&gp, w + (ptrdiff_t)g * mg * cg, x + xo, bias != NULL ? bias + (ptrdiff_t)g * mg : NULL,
                           y + yo, work);
        }
    }
}

/* ---- depthwise Conv: direct -------------------------------------------------------- */

void aotc_conv_depthwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             float *y) {
    const int32_t ID = p->in_size[0], IH = p->in_size[1], IW = p->in_size[2];
    const int32_t OD = p->out_size[0], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KD = p->kernel[0], KH = p->kernel[1], KW = p->kernel[2];
    const int32_t sx = p->strides[2];
    const int32_t mult = p->out_c / p->in_c; /* outputs per input channel */
    const ptrdiff_t in_plane = (ptrdiff_t)ID * IH * IW, out_plane = (ptrdiff_t)OD * OH * OW;
    int32_t n, o, oz, oy, kz, ky, kx;
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const float *xc = x + ((ptrdiff_t)n * p->in_c + o / mult) * in_plane;
            const float *wo = w + (ptrdiff_t)o * KD * KH * KW;
            float *yo = y + ((ptrdiff_t)n * p->out_c + o) * out_plane;
            const float b = bias != NULL ? bias[o] : 0.0f;
            ptrdiff_t i;
            for (i = 0; i < out_plane; ++i) yo[i] = b;
            for (oz = 0; oz < OD; ++oz) {
                for (oy = 0; oy < OH; ++oy) {
                    float *yrow = yo + ((ptrdiff_t)oz * OH + oy) * OW;
                    for (kz = 0; kz < KD; ++kz) {
                        const int32_t iz = oz * p->strides[0] - p->pads[0] + kz * p->dilations[0];
                        if (iz < 0 || iz >= ID) continue;
                        for (ky = 0; ky < KH; ++ky) {
                            const int32_t iy = oy * p->strides[1] - p->pads[1] + ky * p->dilations[1];
                            const float *xrow;
                            if (iy < 0 || iy >= IH) continue;
                            xrow = xc + ((ptrdiff_t)iz * IH + iy) * IW;
                            for (kx = 0; kx < KW; ++kx) {
                                const float wv = wo[(kz * KH + ky) * KW + kx];
                                const int32_t off = kx * p->dilations[2] - p->pads[2];
                                int32_t lo, hi, ox;
                                valid_range(OW, IW, sx, off, &lo, &hi);
                                if (sx == 1) {
                                    for (ox = lo; ox < hi; ++ox) yrow[ox] += wv * xrow[ox + off];
                                } else {
                                    for (ox = lo; ox < hi; ++ox) yrow[ox] += wv * xrow[ox * sx + off];
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

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

void aotc_conv_transpose_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             float *y, float *scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t rows = mg * p->kernel[0] * p->kernel[1] * p->kernel[2];
    const int32_t npos = p->in_size[0] * p->in_size[1] * p->in_size[2];
    const ptrdiff_t out_plane = (ptrdiff_t)p->out_size[0] * p->out_size[1] * p->out_size[2];
    float *work = scratch + (ptrdiff_t)rows * p->nc;
    int32_t n, g, c, j0;
    for (n = 0; n < p->batch; ++n) {
        for (c = 0; c < p->out_c; ++c) {
            float *yc = y + ((ptrdiff_t)n * p->out_c + c) * out_plane;
            const float b = bias != NULL ? bias[c] : 0.0f;
            ptrdiff_t i;
            for (i = 0; i < out_plane; ++i) yc[i] = b;
        }
        for (g = 0; g < p->group; ++g) {
            const float *xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
            float *yg = y + ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * out_plane;
            for (j0 = 0; j0 < npos; j0 += p->nc) {
                const int32_t nc = min_i32(p->nc, npos - j0);
                aotc_sgemm_params gp;
                gp.m = rows; /* A(i, k) = W[g * cg + k][i]: W read transposed */
                gp.n = nc;
                gp.k = cg;
                gp.a_rs = 1;
                gp.a_cs = rows;
                gp.b_rs = npos;
                gp.b_ps = PANEL;
                gp.b_padded = 0;
                gp.ldc = nc;
                gp.cin_rs = 0;
                gp.cin_cs = 0;
                gp.alpha = 1.0f;
                gp.beta = 0.0f;
                aotc_sgemm_f32(&gp, w + (ptrdiff_t)g * cg * rows, xg + j0, NULL, scratch, work);
                col2im_block(p, scratch, mg, j0, nc, yg);
            }
        }
    }
}
