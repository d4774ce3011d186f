/* ONNX Conv through patch matrices (im2col) and the GEMM core: the general aotc_conv_f32
 * (any Conv, patch-matrix blocks of kc x nc built in scratch) and aotc_conv_s1_f32 (2-D,
 * stride 1: each patch row one copy from a zero-padded copy of the input). Taken for the
 * convs the implicit GEMM does not take (run-time weights, 3-D). */
#include "conv_internal.h"

/* ---- general Conv: im2col + GEMM ------------------------------------------------ */

/* Rows [p0, p0 + kc) and output positions [j0, j0 + nc) of the patch matrix of one image
 * and group (x points at the group's first channel), row-major into `col`: element (p, j)
 * at col[(p - p0) * ldc + j - j0], zero where the patch lies in the padding; columns nc to
 * the next multiple of PANEL are zeroed too (the GEMM core reads whole panels).
 * Row p is input channel p / taps and kernel tap p % taps. */
static void im2col_block(const aotc_conv_params *q, const float *x, int32_t p0, int32_t kc, int32_t j0,
                         int32_t nc, int32_t ldc, float *col) {
    const int32_t ID = q->in_size[0], IH = q->in_size[1], IW = q->in_size[2];
    const int32_t OH = q->out_size[1], OW = q->out_size[2];
    const int32_t KD = q->kernel[0], KH = q->kernel[1], KW = q->kernel[2];
    const int32_t taps = KD * KH * KW;
    const int32_t sx = q->strides[2];
    const int32_t padded_nc = (nc + PANEL - 1) / PANEL * PANEL;
    const ptrdiff_t in_plane = (ptrdiff_t)ID * IH * IW;
    int32_t c = p0 / taps, kz = p0 % taps / (KH * KW), ky = p0 % taps / KW % KH, kx = p0 % KW;
    int32_t r;
    for (r = 0; r < kc; ++r) {
        const float *xc = x + c * in_plane;
        const int32_t offz = kz * q->dilations[0] - q->pads[0];
        const int32_t offy = ky * q->dilations[1] - q->pads[1];
        const int32_t offx = kx * q->dilations[2] - q->pads[2];
        float *d = col + (ptrdiff_t)r * ldc;
        int32_t lo, hi, t = 0, oz = j0 / (OH * OW), oy = j0 / OW % OH, ox = j0 % OW;
        valid_range(OW, IW, sx, offx, &lo, &hi); /* the same for every output row */
        while (t < nc) { /* one output row (oz, oy) at a time */
            const int32_t n = min_i32(nc - t, OW - ox), end = ox + n;
            const int32_t iz = oz * q->strides[0] + offz, iy = oy * q->strides[1] + offy;
            int32_t a = ox, b = ox, u;
            if (iz >= 0 && iz < ID && iy >= 0 && iy < IH) { /* [a, b): inside the image */
                a = lo > ox ? min_i32(lo, end) : ox;
                b = hi > a ? min_i32(hi, end) : a;
            }
            for (u = ox; u < a; ++u) d[t + u - ox] = 0.0f;
            if (b > a) {
                const float *s = xc + ((ptrdiff_t)iz * IH + iy) * IW + a * sx + offx;
                float *dd = d + t + a - ox;
                if (sx == 1) {
                    memcpy(dd, s, (size_t)(b - a) * sizeof(float));
                } else {
                    for (u = 0; u < b - a; ++u) dd[u] = s[u * sx];
                }
            }
            for (u = b; u < end; ++u) d[t + u - ox] = 0.0f;
            t += n;
            ox = 0;
            if (++oy == OH) {
                oy = 0;
                ++oz;
            }
        }
        for (; t < padded_nc; ++t) d[t] = 0.0f;
        if (++kx == KW) { /* next row: next tap, or the next channel */
            kx = 0;
            if (++ky == KH) {
                ky = 0;
                if (++kz == KD) {
                    kz = 0;
                    ++c;
                }
            }
        }
    }
}

void aotc_conv_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res, float *y,
                   float *scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t taps = p->kernel[0] * p->kernel[1] * p->kernel[2];
    const int32_t k = cg * taps;
    const int32_t npos = p->out_size[0] * p->out_size[1] * p->out_size[2];
    const ptrdiff_t in_plane = (ptrdiff_t)p->in_size[0] * p->in_size[1] * p->in_size[2];
    /* patch rows are a whole, odd number of panels apart: no two rows of a panel share L1 sets */
    const int32_t ldc = AOTC_CONV_PATCH_LDC(p->nc);
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
                    aotc_sgemm_params gp = gemm_shape(mg, nc, kc);
                    const float *c_in;
                    gp.a_rs = k;
                    gp.b_rs = ldc;
                    gp.b_padded = 1;
                    gp.ldc = npos;
                    gp.res = p0 == 0 && res != NULL ? res + (yg - y) + j0 : NULL; /* once, with the bias */
                    gp.res_rs = npos;
                    if (p0 + kc >= k) set_activation(&gp, p); /* on the finished sums */
                    if (p0 == 0) { /* the first block starts from the bias */
                        c_in = bias != NULL ? bias + (ptrdiff_t)g * mg : NULL;
                        gp.cin_rs = 1;
                        gp.cin_cs = 0;
                    } else { /* later blocks add to what is there */
                        c_in = yg + j0;
                        gp.cin_rs = npos;
                        gp.cin_cs = 1;
                    }
                    im2col_block(p, xg, p0, kc, j0, nc, ldc, scratch);
                    aotc_sgemm_f32(&gp, wg + p0, scratch, c_in, yg + j0, NULL);
                }
            }
        }
    }
}

/* ---- stride-1 2-D Conv: im2col rows as whole copies from a padded plane ---------------- */

void aotc_conv_s1_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                      const float *res, float *y, float *scratch) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KH = p->kernel[1], KW = p->kernel[2], taps = KH * KW;
    const int32_t PH = OH + KH - 1, PW = OW + KW - 1; /* the padded plane the taps read */
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * taps;
    const ptrdiff_t plane = (ptrdiff_t)PH * PW, pad_len = (ptrdiff_t)cg * plane + KW;
    const int32_t nwide = OH * PW; /* output positions on the padded grid: PW - OW junk per row */
    const int32_t ldc = AOTC_CONV_PATCH_LDC(p->nc);
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    float *const pad = scratch;
    float *const col = pad + AOTC_CONV_PANELS(pad_len);
    float *const wide = col + (ptrdiff_t)p->kc * ldc;
    int32_t n, g, j0, p0, c, r, i;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const float *xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
            const float *wg = w + (ptrdiff_t)g * mg * k;
            const ptrdiff_t yg = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * out_plane;
            for (c = 0; c < cg; ++c) { /* the group's input, zero-padded: row r is input row r - pads[1] */
                float *pc = pad + c * plane;
                for (r = 0; r < PH; ++r) {
                    const int32_t iy = r - p->pads[1];
                    float *AOTC_RESTRICT d = pc + (ptrdiff_t)r * PW;
                    const int32_t lo = min_i32(p->pads[2], PW), hi = min_i32(IW + p->pads[2], PW);
                    int32_t u;
                    if (iy < 0 || iy >= IH) {
                        for (u = 0; u < PW; ++u) d[u] = 0.0f;
                        continue;
                    }
                    for (u = 0; u < lo; ++u) d[u] = 0.0f;
                    memcpy(d + lo, xg + c * in_plane + (ptrdiff_t)iy * IW + (lo - p->pads[2]),
                           (size_t)(hi - lo) * sizeof(float));
                    for (u = hi; u < PW; ++u) d[u] = 0.0f;
                }
            }
            for (i = 0; i < KW; ++i) pad[(ptrdiff_t)cg * plane + i] = 0.0f; /* read by junk positions */
            for (j0 = 0; j0 < nwide; j0 += p->nc) {
                const int32_t nc = min_i32(p->nc, nwide - j0);
                const int32_t padded_nc = (nc + PANEL - 1) / PANEL * PANEL;
                int32_t oy;
                for (p0 = 0; p0 < k; p0 += p->kc) {
                    const int32_t kc = min_i32(p->kc, k - p0);
                    aotc_sgemm_params gp = gemm_shape(mg, nc, kc);
                    for (r = 0; r < kc; ++r) { /* patch row p: channel p / taps, tap (ky, kx): one copy */
                        const int32_t pr = p0 + r, tap = pr % taps;
                        float *d = col + (ptrdiff_t)r * ldc;
                        int32_t u;
                        memcpy(d, pad + (pr / taps) * plane + (tap / KW) * PW + tap % KW + j0,
                               (size_t)nc * sizeof(float));
                        for (u = nc; u < padded_nc; ++u) d[u] = 0.0f;
                    }
                    gp.a_rs = k;
                    gp.b_rs = ldc;
                    gp.b_padded = 1;
                    gp.cin_rs = p0 == 0 ? 1 : nc; /* the bias first, then what is there */
                    gp.cin_cs = p0 == 0 ? 0 : 1;
                    aotc_sgemm_f32(&gp, wg + p0, col, p0 == 0 ? (bias != NULL ? bias + (ptrdiff_t)g * mg : NULL) : wide,
                                   wide, NULL);
                }
                /* the valid columns of each wide row into Y, + residual, activation */
                for (oy = j0 / PW; oy * PW < j0 + nc; ++oy) {
                    const int32_t a = oy * PW < j0 ? j0 - oy * PW : 0; /* columns [a, b) of row oy here */
                    const int32_t b = min_i32(min_i32(OW, j0 + nc - oy * PW), OW);
                    if (b <= a) continue;
                    for (i = 0; i < mg; ++i) {
                        const ptrdiff_t at = yg + (ptrdiff_t)i * out_plane + (ptrdiff_t)oy * OW + a;
                        float *AOTC_RESTRICT yr = y + at;
                        const float *AOTC_RESTRICT wr = wide + (ptrdiff_t)i * nc + (oy * PW + a - j0);
                        int32_t u;
                        if (res != NULL) {
                            const float *AOTC_RESTRICT rr = res + at;
                            for (u = 0; u < b - a; ++u) yr[u] = wr[u] + rr[u];
                        } else {
                            memcpy(yr, wr, (size_t)(b - a) * sizeof(float));
                        }
                        aotc_activate_f32(yr, b - a, p->act, p->act_lo, p->act_hi, p->act_alpha);
                    }
                }
            }
        }
    }
}
