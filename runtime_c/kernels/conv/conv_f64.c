/* ONNX Conv on float64: aotc_conv_f64, a direct loop in double (no scratch, no packing), 1-D to 3-D, any
 * group, stride, dilation and pads. Each output row starts from the bias and takes one weight times a
 * run of input columns per input channel and tap, over the columns whose tap lies inside the input (no
 * padding tests in the inner loop, which runs along contiguous memory at stride 1 and vectorises); then
 * the residual and the activation. Portable C99, no allocation, no globals. */
#include "aotc_conv.h"
#include "aotc_gemm.h"

/* The outputs o in [lo, hi) of n_out whose input index o * s + off lies in [0, n_in). */
static void inside(int32_t n_out, int32_t n_in, int32_t s, int32_t off, int32_t *lo, int32_t *hi) {
    int32_t l = off < 0 ? (-off + s - 1) / s : 0;
    int32_t h = n_in - 1 - off < 0 ? 0 : (n_in - 1 - off) / s + 1;
    h = h < n_out ? h : n_out;
    *lo = l < h ? l : h;
    *hi = h;
}

/* One output row (n, o, oz, oy) of OW columns: sum over the group's channels and the taps inside. */
static void conv_row_f64(const aotc_conv_params *p, const double *xg, const double *wo, int32_t oz, int32_t oy,
                         double *AOTC_RESTRICT yr) {
    const int32_t ID = p->in_size[0], IH = p->in_size[1], IW = p->in_size[2], OW = p->out_size[2];
    const int32_t KD = p->kernel[0], KH = p->kernel[1], KW = p->kernel[2];
    const int32_t sx = p->strides[2], dx = p->dilations[2], cg = p->in_c / p->group;
    const ptrdiff_t in_plane = (ptrdiff_t)ID * IH * IW;
    int32_t kz0, kz1, ky0, ky1, c, kz, ky, kx, ox, lo, hi;
    inside(KD, ID, p->dilations[0], oz * p->strides[0] - p->pads[0], &kz0, &kz1); /* taps by dilation */
    inside(KH, IH, p->dilations[1], oy * p->strides[1] - p->pads[1], &ky0, &ky1);
    for (c = 0; c < cg; ++c) {
        for (kz = kz0; kz < kz1; ++kz) {
            for (ky = ky0; ky < ky1; ++ky) {
                const int32_t iz = oz * p->strides[0] - p->pads[0] + kz * p->dilations[0];
                const int32_t iy = oy * p->strides[1] - p->pads[1] + ky * p->dilations[1];
                const double *xr = xg + c * in_plane + ((ptrdiff_t)iz * IH + iy) * IW;
                const double *wr = wo + (((ptrdiff_t)c * KD + kz) * KH + ky) * KW;
                for (kx = 0; kx < KW; ++kx) {
                    const int32_t off = kx * dx - p->pads[2];
                    const double wv = wr[kx];
                    inside(OW, IW, sx, off, &lo, &hi);
                    if (sx == 1) {
                        for (ox = lo; ox < hi; ++ox) yr[ox] += wv * xr[ox + off];
                    } else {
                        for (ox = lo; ox < hi; ++ox) yr[ox] += wv * xr[(ptrdiff_t)ox * sx + off];
                    }
                }
            }
        }
    }
}

void aotc_conv_f64(const aotc_conv_params *p, const double *x, const double *w, const double *bias,
                   const double *res, double *y) {
    const int32_t OD = p->out_size[0], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t in_plane = (ptrdiff_t)p->in_size[0] * p->in_size[1] * p->in_size[2];
    const ptrdiff_t out_plane = (ptrdiff_t)OD * OH * OW, taps = (ptrdiff_t)p->kernel[0] * p->kernel[1] * p->kernel[2];
    int32_t n, o, oz, oy, ox;
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const double *xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)(o / mg) * cg) * in_plane;
            const double *wo = w + (ptrdiff_t)o * cg * taps;
            const ptrdiff_t plane = ((ptrdiff_t)n * p->out_c + o) * out_plane;
            for (oz = 0; oz < OD; ++oz) {
                for (oy = 0; oy < OH; ++oy) {
                    const ptrdiff_t row = plane + ((ptrdiff_t)oz * OH + oy) * OW;
                    double *yr = y + row;
                    for (ox = 0; ox < OW; ++ox) yr[ox] = bias ? bias[o] : 0.0;
                    conv_row_f64(p, xg, wo, oz, oy, yr);
                    if (res)
                        for (ox = 0; ox < OW; ++ox) yr[ox] += res[row + ox];
                    if (p->act == AOTC_ACT_CLAMP)
                        for (ox = 0; ox < OW; ++ox)
                            yr[ox] = yr[ox] < p->act_lo ? p->act_lo : yr[ox] > p->act_hi ? p->act_hi : yr[ox];
                    else if (p->act == AOTC_ACT_LEAKY)
                        for (ox = 0; ox < OW; ++ox) yr[ox] = yr[ox] < 0.0 ? p->act_alpha * yr[ox] : yr[ox];
                }
            }
        }
    }
}
