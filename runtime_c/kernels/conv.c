/* ONNX Conv and ConvTranspose, float32, NCHW, 1 to 3 spatial dims (always looped as
 * D x H x W, with unit leading dims). The general Conv is im2col + the GEMM core,
 * block by block so scratch stays small; 1 x 1 convs multiply the input in place;
 * depthwise convs are a direct loop. Padding never costs a test per element: each
 * loop runs over the range of output positions whose input lies inside the image.
 * No allocation, no globals. */
#include "aotc_conv.h"

#include "aotc_gemm.h"

#include <math.h>
#include <string.h>

#define PANEL AOTC_GEMM_PANEL

/* a * b + c, fused where the target has a fast fma (FP_FAST_FMAF is C99) */
#if defined(FP_FAST_FMAF)
#define MADD(a, b, c) fmaf((a), (b), (c))
#else
#define MADD(a, b, c) ((a) * (b) + (c))
#endif

static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

/* C[m][n] = A[m][k] * B[k][n] + C_in, all row-major and plain: the callers change what differs. */
static aotc_sgemm_params gemm_shape(int32_t m, int32_t n, int32_t k) {
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
static void set_activation(aotc_sgemm_params *gp, const aotc_conv_params *p) {
    gp->act = p->act;
    gp->act_lo = p->act_lo;
    gp->act_hi = p->act_hi;
    gp->act_alpha = p->act_alpha;
}

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
    const int32_t ldc = ((p->nc + PANEL - 1) / PANEL | 1) * PANEL;
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
    const int32_t ldc = ((p->nc + PANEL - 1) / PANEL | 1) * PANEL;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    float *const pad = scratch;
    float *const col = pad + (pad_len + PANEL - 1) / PANEL * PANEL;
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

/* ---- any Conv without scratch: direct, for steps with no memory to spare ----------- */

/* Output tile of the direct conv: DIRECT_MB output channels by DIRECT_NB output columns,
 * kept in registers while every input channel and tap is added in (the GEMM core's register
 * tile, with B read straight from the input). */
#define DIRECT_MB 4
#define DIRECT_NB 16

#if defined(__GNUC__) || defined(__clang__)
#define DIRECT_NOINLINE __attribute__((noinline))
#else
#define DIRECT_NOINLINE
#endif

/* t[i * NB + j] = sum over c, ky in [ky0, ky1), kx of wr[i][(c * KH + ky) * KW + kx] * x(c, ky, kx, j)
 * for j < NB, x read at xp + c * in_plane + ky * row_step + kx * dx + j * S: all inside the input. */
#define DIRECT_TILE(NAME, S, NB)                                                                    \
    DIRECT_NOINLINE static void NAME(const float *xp, ptrdiff_t in_plane, ptrdiff_t row_step,      \
                                     int32_t cg, int32_t ky0, int32_t ky1, int32_t KH, int32_t KW,  \
                                     int32_t dx, int32_t sx, const float *const *wr,               \
                                     float *AOTC_RESTRICT t) {                                     \
        float c0[NB], c1[NB], c2[NB], c3[NB];                                                     \
        int32_t c, ky, kx, j;                                                                     \
        (void)sx; /* (S is sx, or the constant it equals) */                                      \
        for (j = 0; j < (NB); ++j) c0[j] = c1[j] = c2[j] = c3[j] = 0.0f;                          \
        for (c = 0; c < cg; ++c, xp += in_plane) {                                                \
            for (ky = ky0; ky < ky1; ++ky) {                                                      \
                const ptrdiff_t q = ((ptrdiff_t)c * KH + ky) * KW;                                \
                const float *w0 = wr[0] + q, *w1 = wr[1] + q, *w2 = wr[2] + q, *w3 = wr[3] + q;   \
                for (kx = 0; kx < KW; ++kx) {                                                     \
                    const float *AOTC_RESTRICT xr = xp + ky * row_step + kx * dx;                 \
                    const float a0 = w0[kx], a1 = w1[kx], a2 = w2[kx], a3 = w3[kx];               \
                    for (j = 0; j < (NB); ++j) {                                                  \
                        const float v = xr[j * (S)];                                              \
                        c0[j] = MADD(a0, v, c0[j]);                                               \
                        c1[j] = MADD(a1, v, c1[j]);                                               \
                        c2[j] = MADD(a2, v, c2[j]);                                               \
                        c3[j] = MADD(a3, v, c3[j]);                                               \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        memcpy(t, c0, sizeof c0);                                                                 \
        memcpy(t + DIRECT_NB, c1, sizeof c1);                                                     \
        memcpy(t + 2 * DIRECT_NB, c2, sizeof c2);                                                 \
        memcpy(t + 3 * DIRECT_NB, c3, sizeof c3);                                                 \
    }
DIRECT_TILE(direct_tile_s1, 1, DIRECT_NB)
DIRECT_TILE(direct_tile_s2, 2, DIRECT_NB)
DIRECT_TILE(direct_tile_sn, sx, DIRECT_NB)
DIRECT_TILE(direct_tile4_s1, 1, 4) /* planes narrower than 16 columns */
DIRECT_TILE(direct_tile4_s2, 2, 4)
DIRECT_TILE(direct_tile4_sn, sx, 4)
#undef DIRECT_TILE

/* The output at (oz, oy, ox) of the DIRECT_MB output channels whose weight rows are wr,
 * summing the taps that lie inside the input, into t[0 .. DIRECT_MB). */
static void direct_point(const aotc_conv_params *p, const float *xg, const float *const *wr, int32_t cg, int32_t oz,
                         int32_t oy, int32_t ox, float *t) {
    const int32_t ID = p->in_size[0], IH = p->in_size[1], IW = p->in_size[2];
    const int32_t KD = p->kernel[0], KH = p->kernel[1], KW = p->kernel[2], dx = p->dilations[2];
    const ptrdiff_t in_plane = (ptrdiff_t)ID * IH * IW;
    const int32_t bz = oz * p->strides[0] - p->pads[0], by = oy * p->strides[1] - p->pads[1];
    const int32_t bx = ox * p->strides[2] - p->pads[2];
    int32_t c, kz, ky, kx, kz0, kz1, ky0, ky1, kx0, kx1;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    valid_range(KD, ID, p->dilations[0], bz, &kz0, &kz1); /* the taps inside, per dim */
    valid_range(KH, IH, p->dilations[1], by, &ky0, &ky1);
    valid_range(KW, IW, dx, bx, &kx0, &kx1);
    for (c = 0; c < cg; ++c) {
        for (kz = kz0; kz < kz1; ++kz) {
            for (ky = ky0; ky < ky1; ++ky) {
                const int32_t iz = bz + kz * p->dilations[0], iy = by + ky * p->dilations[1];
                const float *xr = xg + c * in_plane + ((ptrdiff_t)iz * IH + iy) * IW + bx;
                const ptrdiff_t q = ((ptrdiff_t)(c * KD + kz) * KH + ky) * KW;
                const float *w0 = wr[0] + q, *w1 = wr[1] + q, *w2 = wr[2] + q, *w3 = wr[3] + q;
                for (kx = kx0; kx < kx1; ++kx) {
                    const float v = xr[kx * dx];
                    s0 = MADD(w0[kx], v, s0);
                    s1 = MADD(w1[kx], v, s1);
                    s2 = MADD(w2[kx], v, s2);
                    s3 = MADD(w3[kx], v, s3);
                }
            }
        }
    }
    t[0] = s0;
    t[1] = s1;
    t[2] = s2;
    t[3] = s3;
}

void aotc_conv_direct_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                          const float *res, float *y) {
    const int32_t ID = p->in_size[0], IH = p->in_size[1], IW = p->in_size[2];
    const int32_t OD = p->out_size[0], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KD = p->kernel[0], KH = p->kernel[1], KW = p->kernel[2];
    const int32_t sx = p->strides[2], sy = p->strides[1], dx = p->dilations[2], dy = p->dilations[1];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, taps = KD * KH * KW;
    const ptrdiff_t in_plane = (ptrdiff_t)ID * IH * IW, out_plane = (ptrdiff_t)OD * OH * OW;
    /* tiles need a plane (no depth); they cover the columns [lo, hi) whose taps are all
     * inside (rows: the kernel rows inside, per output row) */
    const int tiled = ID == 1 && OD == 1 && KD == 1 && p->pads[0] == 0;
    int32_t lo = 0, hi = 0, unused, n, g, m0, i, oz, oy, ox;
    ptrdiff_t q;
    if (tiled) {
        valid_range(OW, IW, sx, -p->pads[2], &lo, &unused);
        valid_range(OW, IW, sx, (KW - 1) * dx - p->pads[2], &unused, &hi);
        if (hi - lo < 4) hi = lo; /* too narrow for a tile */
    }
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const float *xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
            for (m0 = 0; m0 < mg; m0 += DIRECT_MB) {
                const int32_t mb = min_i32(DIRECT_MB, mg - m0), o0 = g * mg + m0;
                const float *wr[DIRECT_MB];
                float *yo = y + ((ptrdiff_t)n * p->out_c + o0) * out_plane;
                for (i = 0; i < DIRECT_MB; ++i) /* rows past mb repeat the last one, never stored */
                    wr[i] = w + (ptrdiff_t)(o0 + min_i32(i, mb - 1)) * cg * taps;
                for (oz = 0; oz < OD; ++oz) {
                    for (oy = 0; oy < OH; ++oy) {
                        const ptrdiff_t row = ((ptrdiff_t)oz * OH + oy) * OW;
                        const int32_t by = oy * sy - p->pads[1];
                        int32_t ky0, ky1;
                        valid_range(KH, IH, dy, by, &ky0, &ky1); /* the kernel rows inside */
                        if (hi > lo) {
                            /* strips of 16 columns (of 4 on narrow planes), the last one ending at hi
                             * (overlapping the one before: it recomputes a few columns) */
                            const float *xrow = xg + (ptrdiff_t)by * IW - p->pads[2];
                            const ptrdiff_t rs = (ptrdiff_t)dy * IW;
                            const int32_t nb = hi - lo >= DIRECT_NB ? DIRECT_NB : 4;
                            int32_t next = lo;
                            while (next < hi) {
                                float t[DIRECT_MB * DIRECT_NB];
                                int32_t j;
                                ox = next + nb <= hi ? next : hi - nb;
                                const float *xs = xrow + (ptrdiff_t)ox * sx;
                                if (nb == DIRECT_NB) /* constant strides let the compiler vectorise */
                                    (sx == 1 ? direct_tile_s1 : sx == 2 ? direct_tile_s2 : direct_tile_sn)(
                                        xs, in_plane, rs, cg, ky0, ky1, KH, KW, dx, sx, wr, t);
                                else
                                    (sx == 1 ? direct_tile4_s1 : sx == 2 ? direct_tile4_s2 : direct_tile4_sn)(
                                        xs, in_plane, rs, cg, ky0, ky1, KH, KW, dx, sx, wr, t);
                                for (i = 0; i < mb; ++i)
                                    for (j = 0; j < nb; ++j) yo[i * out_plane + row + ox + j] = t[i * DIRECT_NB + j];
                                next = ox + nb;
                            }
                        }
                        for (ox = 0; ox < OW; ++ox) { /* the columns the tiles left, point by point */
                            float t[DIRECT_MB];
                            if (hi > lo && ox == lo) ox = hi;
                            if (ox >= OW) break;
                            direct_point(p, xg, wr, cg, oz, oy, ox, t);
                            for (i = 0; i < mb; ++i) yo[i * out_plane + row + ox] = t[i];
                        }
                    }
                }
                for (i = 0; i < mb; ++i) { /* bias, residual, activation, a plane at a time */
                    float *yp = yo + i * out_plane;
                    const float b = bias != NULL ? bias[o0 + i] : 0.0f;
                    const float *rp = res != NULL ? res + (yp - y) : NULL;
                    for (q = 0; q < out_plane; ++q) yp[q] += b + (rp != NULL ? rp[q] : 0.0f);
                    aotc_activate_f32(yp, out_plane, p->act, p->act_lo, p->act_hi, p->act_alpha);
                }
            }
        }
    }
}

/* ---- 2-D Conv as an implicit GEMM: register tiles straight from the input, no scratch ---- */

/* Y^T = P * W^T, P the patch matrix (a row per output position), never built: a register tile
 * of IG_MR positions x IG_NR output channels reads each position's patch element from the input
 * through the position's own pointer, and W^T (packed at compile time, aot/emit_c/ops/conv.py)
 * a vector at a time. Positions go by class: those whose kernel taps lie inside the input for
 * the same ranges of rows and columns (the interior; each border row and column; the corners)
 * share the loops over taps, so no tap is ever tested or read from padding. */
#define IG_MR AOTC_GEMM_MR
#define IG_NR AOTC_GEMM_NR
#define IG_NH (IG_NR / 2)

#if defined(__GNUC__) || defined(__clang__)
#define IG_NOINLINE __attribute__((noinline))
#else
#define IG_NOINLINE
#endif

/* The sum over one class's patch elements, as three nested loops (innermost last): n
 * iterations, each stepping the input offset by xs and the W^T row by ws floats. */
typedef struct {
    int32_t n[3];
    ptrdiff_t xs[3];
    ptrdiff_t ws[3];
} ig_loops;

#define IG_ROWS6(X, W) X(0, W) X(1, W) X(2, W) X(3, W) X(4, W) X(5, W)
#define IG_ROWS4(X, W) X(0, W) X(1, W) X(2, W) X(3, W)
#define IG_ROWS3(X, W) X(0, W) X(1, W) X(2, W)
#define IG_ROWS2(X, W) X(0, W) X(1, W)
#define IG_ROWS1(X, W) X(0, W)
#define IG_DECL(i, W) float c##i[W]; const float *AOTC_RESTRICT x##i = xp[i];
#define IG_INIT(i, W) memcpy(c##i, b0, sizeof c##i);
#define IG_FMA(i, W) { const float v_ = x##i[xo]; for (j = 0; j < (W); ++j) c##i[j] = MADD(v_, w[j], c##i[j]); }
#define IG_OUT(i, W) memcpy(t + (i) * IG_NR, c##i, sizeof c##i);

/* t[i * IG_NR + j] = b0[j] + sum over the loops of xp[i][xo] * w[j], j < W. The innermost loop
 * steps a pointer to its end (see gemm.c: so that compilers vectorise j, not the sum). */
#define IG_KERNEL(NAME, ROWS, W)                                                                  \
    IG_NOINLINE static void NAME(const float *const *xp, const ig_loops *L, const float *AOTC_RESTRICT wp, \
                                 const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t) {          \
        ROWS(IG_DECL, W)                                                                          \
        const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];                                           \
        int32_t j, a, b;                                                                          \
        ROWS(IG_INIT, W)                                                                          \
        for (a = 0; a < L->n[0]; ++a) {                                                           \
            for (b = 0; b < L->n[1]; ++b) {                                                       \
                ptrdiff_t xo = a * L->xs[0] + b * L->xs[1];                                       \
                const float *w = wp + a * L->ws[0] + b * L->ws[1];                                \
                const float *const w_end = w + L->n[2] * ws2;                                     \
                for (; w != w_end; w += ws2, xo += xs2) {                                         \
                    ROWS(IG_FMA, W)                                                               \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        ROWS(IG_OUT, W)                                                                           \
    }
#if IG_MR == 6
IG_KERNEL(ig_tile, IG_ROWS6, IG_NR)
IG_KERNEL(ig_tile_narrow, IG_ROWS6, IG_NH)
#endif
IG_KERNEL(ig_tile4, IG_ROWS4, IG_NR)
IG_KERNEL(ig_tile4_narrow, IG_ROWS4, IG_NH)
IG_KERNEL(ig_tile3, IG_ROWS3, IG_NR)
IG_KERNEL(ig_tile3_narrow, IG_ROWS3, IG_NH)
IG_KERNEL(ig_tile2, IG_ROWS2, IG_NR)
IG_KERNEL(ig_tile2_narrow, IG_ROWS2, IG_NH)
IG_KERNEL(ig_tile1, IG_ROWS1, IG_NR)
IG_KERNEL(ig_tile1_narrow, IG_ROWS1, IG_NH)
#if IG_MR != 6
#define ig_tile ig_tile4
#define ig_tile_narrow ig_tile4_narrow
#endif
#undef IG_KERNEL


/* Positions of the next tile when `left` are left in a class: IG_MR while that leaves at least 3
 * (a tile of 1 or 2 runs its sums' chains at a fraction of the machine's rate), else 3 + 2 for 5,
 * 4 + 3 for 7, 4 + 4 for 8. */
static int32_t ig_rows(int32_t left) {
    static const int8_t few[9] = {0, 1, 2, 3, 4, 3, IG_MR, 4, 4};
    return left >= 9 ? IG_MR : few[left];
}

typedef void (*ig_kernel)(const float *const *, const ig_loops *, const float *, const float *, float *);

/* The end of the run of output positions from o on (o < n_out) whose kernel taps lie inside the
 * input for the same range [*k0, *k1) (taps at o * s - pad + k * d). */
static int32_t tap_run(int32_t o, int32_t n_out, int32_t n_in, int32_t K, int32_t s, int32_t d, int32_t pad,
                       int32_t *k0, int32_t *k1) {
    int32_t a, b;
    valid_range(K, n_in, d, o * s - pad, k0, k1);
    for (++o; o < n_out; ++o) {
        valid_range(K, n_in, d, o * s - pad, &a, &b);
        if (a != *k0 || b != *k1) break;
    }
    return o;
}

/* The finished tile t (rows positions q[i] by output channels [0, width), channel planes
 * `plane` apart in y): + the residual, the activation (vectorised along t's rows), stored.
 * A full tile of consecutive positions (most of them) moves with constant offsets. */
static void ig_store(const aotc_conv_params *p, float *t, const ptrdiff_t *q, int32_t rows, int32_t width,
                     ptrdiff_t plane, const float *res, float *y) {
    int32_t i, j;
    if (rows == IG_MR && q[IG_MR - 1] - q[0] == IG_MR - 1) {
        res = res != NULL ? res + q[0] : NULL;
        y += q[0];
        if (res != NULL)
            for (j = 0; j < width; ++j, res += plane)
                for (i = 0; i < IG_MR; ++i) t[i * IG_NR + j] += res[i];
        aotc_activate_f32(t, (ptrdiff_t)IG_MR * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
        for (j = 0; j < width; ++j, y += plane)
            for (i = 0; i < IG_MR; ++i) y[i] = t[i * IG_NR + j];
        return;
    }
    if (res != NULL)
        for (j = 0; j < width; ++j, res += plane)
            for (i = 0; i < rows; ++i) t[i * IG_NR + j] += res[q[i]];
    aotc_activate_f32(t, (ptrdiff_t)rows * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
    for (j = 0; j < width; ++j, y += plane)
        for (i = 0; i < rows; ++i) y[q[i]] = t[i * IG_NR + j];
}

void aotc_conv_implicit_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                            const float *res, float *y) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KH = p->kernel[1], KW = p->kernel[2], taps = KH * KW;
    const int32_t sy = p->strides[1], sx = p->strides[2], dy = p->dilations[1], dx = p->dilations[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    const ptrdiff_t k_rows = (ptrdiff_t)cg * taps, group_w = (mg + PANEL - 1) / PANEL * PANEL * k_rows;
    int32_t n, g, j0, ra, rb, ca, cb, ky0, ky1, kx0, kx1;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const float *xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * out_plane;
            for (j0 = 0; j0 < mg; j0 += IG_NR) { /* output channels [j0, j0 + width) */
                const int32_t width = min_i32(IG_NR, mg - j0);
                const int narrow = width <= IG_NH;
                /* the group's W^T: panels of k_rows x PANEL; columns j0.. start at this row's j0 % PANEL */
                const float *wj = wt + g * group_w + (ptrdiff_t)(j0 / PANEL) * k_rows * PANEL + j0 % PANEL;
                float b0[IG_NR];
                int32_t j;
                for (j = 0; j < IG_NR; ++j) b0[j] = bias != NULL && j < width ? bias[g * mg + j0 + j] : 0.0f;
                for (ra = 0; ra < OH; ra = rb) {
                    rb = tap_run(ra, OH, IH, KH, sy, dy, p->pads[1], &ky0, &ky1);
                    for (ca = 0; ca < OW; ca = cb) {
                        const int32_t cols = (cb = tap_run(ca, OW, IW, KW, sx, dx, p->pads[2], &kx0, &kx1)) - ca;
                        const int32_t count = (rb - ra) * cols, nky = ky1 - ky0, nkx = kx1 - kx0;
                        const float *wc = wj + (ptrdiff_t)(ky0 * KW + kx0) * PANEL;
                        const int32_t y0 = ky0 * dy - p->pads[1], x0 = kx0 * dx - p->pads[2];
                        ig_loops L;
                        int32_t r = 0, oy = ra, ox = ca;
                        if (nky <= 0 || nkx <= 0) { /* no tap inside: the bias alone */
                            L.n[0] = L.n[1] = L.n[2] = 0;
                        } else if (cg >= nkx) { /* rows, columns, then the input channels innermost */
                            L.n[0] = nky, L.xs[0] = (ptrdiff_t)dy * IW, L.ws[0] = (ptrdiff_t)KW * PANEL;
                            L.n[1] = nkx, L.xs[1] = dx, L.ws[1] = PANEL;
                            L.n[2] = cg, L.xs[2] = in_plane, L.ws[2] = (ptrdiff_t)taps * PANEL;
                        } else { /* few channels, wide kernels: the columns innermost */
                            L.n[0] = cg, L.xs[0] = in_plane, L.ws[0] = (ptrdiff_t)taps * PANEL;
                            L.n[1] = nky, L.xs[1] = (ptrdiff_t)dy * IW, L.ws[1] = (ptrdiff_t)KW * PANEL;
                            L.n[2] = nkx, L.xs[2] = dx, L.ws[2] = PANEL;
                        }
                        while (r < count) { /* tiles of positions, row by row through the class */
                            const int32_t rows = ig_rows(count - r);
                            const ig_kernel k = rows == IG_MR ? (narrow ? ig_tile_narrow : ig_tile)
                                                : rows == 4   ? (narrow ? ig_tile4_narrow : ig_tile4)
                                                : rows == 3   ? (narrow ? ig_tile3_narrow : ig_tile3)
                                                : rows == 2   ? (narrow ? ig_tile2_narrow : ig_tile2)
                                                              : (narrow ? ig_tile1_narrow : ig_tile1);
                            const float *xp[IG_MR];
                            ptrdiff_t q[IG_MR];
                            float t[IG_MR * IG_NR];
                            int32_t i;
                            for (i = 0; i < rows; ++i, ++r) {
                                /* the position's first tap inside: input row oy * sy + y0, column ox * sx + x0 */
                                q[i] = (ptrdiff_t)oy * OW + ox;
                                xp[i] = L.n[0] > 0 ? xg + (ptrdiff_t)(oy * sy + y0) * IW + (ox * sx + x0) : xg;
                                if (++ox == cb) ox = ca, ++oy;
                            }
                            if (L.n[0] > 0) {
                                k(xp, &L, wc, b0, t);
                            } else {
                                for (i = 0; i < rows * IG_NR; ++i) t[i] = b0[i % IG_NR];
                            }
                            ig_store(p, t, q, rows, width, out_plane, res != NULL ? res + yo + (ptrdiff_t)j0 * out_plane : NULL,
                                     y + yo + (ptrdiff_t)j0 * out_plane);
                        }
                    }
                }
            }
        }
    }
}

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

/* ---- depthwise Conv: direct -------------------------------------------------------- */

/* One row of taps of a depthwise conv, for output columns [lo, hi) whose taps all lie
 * inside the input row: y[ox] += sum over kx of wk[kx] * x[ox * sx + kx * dx - px]. */
static void depthwise_row_interior(float *AOTC_RESTRICT y, const float *AOTC_RESTRICT x, const float *wk,
                                   int32_t lo, int32_t hi, int32_t kw, int32_t sx, int32_t dx, int32_t px) {
    int32_t kx, ox;
    if (kw == 3) { /* the common 3-wide kernel in one pass */
        const float w0 = wk[0], w1 = wk[1], w2 = wk[2];
        const int32_t o0 = -px, o1 = dx - px, o2 = 2 * dx - px;
#define TAPS3(S)                                                                                    \
        for (ox = lo; ox < hi; ++ox) {                                                              \
            const int32_t i = ox * (S);                                                             \
            y[ox] = MADD(w2, x[i + o2], MADD(w1, x[i + o1], MADD(w0, x[i + o0], y[ox])));           \
        }
        if (sx == 1) { /* constant strides let the compiler vectorise */
            TAPS3(1)
        } else if (sx == 2) {
            TAPS3(2)
        } else {
            TAPS3(sx)
        }
#undef TAPS3
        return;
    }
    for (kx = 0; kx < kw; ++kx) {
        const float wv = wk[kx];
        const int32_t off = kx * dx - px;
        if (sx == 1) {
            for (ox = lo; ox < hi; ++ox) y[ox] = MADD(wv, x[ox + off], y[ox]);
        } else {
            for (ox = lo; ox < hi; ++ox) y[ox] = MADD(wv, x[ox * sx + off], y[ox]);
        }
    }
}

/* The same for the border columns [0, lo) and [hi, n_out), testing each tap. */
static void depthwise_row_borders(float *y, const float *x, const float *wk, int32_t lo, int32_t hi, int32_t n_out,
                                  int32_t n_in, int32_t kw, int32_t sx, int32_t dx, int32_t px) {
    int32_t ox, kx;
    for (ox = 0; ox < n_out; ++ox) {
        int32_t base, k0, k1;
        float acc;
        if (ox == lo) ox = hi;
        if (ox >= n_out) break;
        base = ox * sx - px; /* input column of tap 0; taps [k0, k1) are inside */
        valid_range(kw, n_in, dx, base, &k0, &k1);
        acc = y[ox];
        for (kx = k0; kx < k1; ++kx) acc = MADD(wk[kx], x[base + kx * dx], acc);
        y[ox] = acc;
    }
}

/* 3 x 3 depthwise rows whose three input rows are all inside the image: for each of
 * `rows` output rows y of n_out columns (rows y_step apart, reading input rows x, x + x_d,
 * x + 2 x_d of n_in columns, x advancing x_step per output row), y[ox] = b + the taps
 * inside the image. Columns [lo, hi) have all their taps inside: one vectorised pass. */
static void depthwise_rows_3x3(float *y, ptrdiff_t y_step, const float *x, ptrdiff_t x_step, ptrdiff_t x_d,
                               int32_t rows, const float *w, float b, int32_t lo, int32_t hi, int32_t n_out,
                               int32_t n_in, int32_t sx, int32_t dx, int32_t px) {
    const float w00 = w[0], w01 = w[1], w02 = w[2], w10 = w[3], w11 = w[4];
    const float w12 = w[5], w20 = w[6], w21 = w[7], w22 = w[8];
    const int32_t o0 = -px, o1 = dx - px, o2 = 2 * dx - px;
    int32_t row, ox, kx;
    for (row = 0; row < rows; ++row, y += y_step, x += x_step) {
        float *AOTC_RESTRICT yr = y;
        const float *AOTC_RESTRICT r0 = x;
        const float *AOTC_RESTRICT r1 = x + x_d;
        const float *AOTC_RESTRICT r2 = x + 2 * x_d;
        for (ox = 0; ox < n_out; ++ox) { /* border columns: the taps [k0, k1) inside */
            int32_t base, k0, k1;
            float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f; /* one sum per tap row: short dependency chains */
            if (ox == lo) ox = hi;
            if (ox >= n_out) break;
            base = ox * sx - px;
            valid_range(3, n_in, dx, base, &k0, &k1);
            for (kx = k0; kx < k1; ++kx) {
                const int32_t i = base + kx * dx;
                s0 = MADD(w[kx], r0[i], s0);
                s1 = MADD(w[3 + kx], r1[i], s1);
                s2 = MADD(w[6 + kx], r2[i], s2);
            }
            yr[ox] = b + (s0 + s1 + s2);
        }
#define TAPS3X3(S)                                                                               \
        for (ox = lo; ox < hi; ++ox) {                                                           \
            const int32_t i = ox * (S);                                                          \
            const float s0 = MADD(w02, r0[i + o2], MADD(w01, r0[i + o1], w00 * r0[i + o0]));     \
            const float s1 = MADD(w12, r1[i + o2], MADD(w11, r1[i + o1], w10 * r1[i + o0]));     \
            const float s2 = MADD(w22, r2[i + o2], MADD(w21, r2[i + o1], w20 * r2[i + o0]));     \
            yr[ox] = b + (s0 + s1 + s2);                                                         \
        }
        if (sx == 1) { /* constant strides let the compiler vectorise */
            TAPS3X3(1)
        } else if (sx == 2) {
            TAPS3X3(2)
        } else {
            TAPS3X3(sx)
        }
#undef TAPS3X3
    }
}

void aotc_conv_depthwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             const float *res, float *y) {
    const int32_t ID = p->in_size[0], IH = p->in_size[1], IW = p->in_size[2];
    const int32_t OD = p->out_size[0], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KD = p->kernel[0], KH = p->kernel[1], KW = p->kernel[2];
    const int32_t sx = p->strides[2], dx = p->dilations[2], px = p->pads[2], dy = p->dilations[1];
    const int32_t mult = p->out_c / p->in_c; /* outputs per input channel */
    const ptrdiff_t in_plane = (ptrdiff_t)ID * IH * IW, out_plane = (ptrdiff_t)OD * OH * OW;
    int32_t lo, hi, fy_lo, fy_hi, unused, n, o, oz, oy, kz, ky, ox;
    /* [lo, hi): output columns whose every tap is inside the image (no tests there) */
    valid_range(OW, IW, sx, -px, &lo, &unused);
    valid_range(OW, IW, sx, (KW - 1) * dx - px, &unused, &hi);
    if (hi < lo) hi = lo;
    /* [fy_lo, fy_hi): with a 3 x 3 kernel, output rows whose three input rows are inside */
    fy_lo = fy_hi = 0;
    if (KD == 1 && KH == 3 && KW == 3 && IH > 2 * dy) valid_range(OH, IH - 2 * dy, p->strides[1], -p->pads[1], &fy_lo, &fy_hi);
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const float *xc = x + ((ptrdiff_t)n * p->in_c + o / mult) * in_plane;
            const float *wo = w + (ptrdiff_t)o * KD * KH * KW;
            float *yo = y + ((ptrdiff_t)n * p->out_c + o) * out_plane;
            const float b = bias != NULL ? bias[o] : 0.0f;
            for (oz = 0; oz < OD; ++oz) {
                const int32_t iz0 = oz * p->strides[0] - p->pads[0];
                const int fused = fy_lo < fy_hi && iz0 >= 0 && iz0 < ID; /* KD == 1 here */
                for (oy = 0; oy < OH; ++oy) { /* rows not done below, tap row by tap row */
                    float *yrow = yo + ((ptrdiff_t)oz * OH + oy) * OW;
                    const int32_t iy0 = oy * p->strides[1] - p->pads[1];
                    if (fused && oy == fy_lo) { /* rows [fy_lo, fy_hi) come below */
                        oy = fy_hi - 1;
                        continue;
                    }
                    for (ox = 0; ox < OW; ++ox) yrow[ox] = b;
                    for (kz = 0; kz < KD; ++kz) {
                        const int32_t iz = iz0 + kz * p->dilations[0];
                        if (iz < 0 || iz >= ID) continue;
                        for (ky = 0; ky < KH; ++ky) {
                            const int32_t iy = iy0 + ky * dy;
                            const float *wk = wo + (kz * KH + ky) * KW;
                            const float *xrow;
                            if (iy < 0 || iy >= IH) continue;
                            xrow = xc + ((ptrdiff_t)iz * IH + iy) * IW;
                            depthwise_row_borders(yrow, xrow, wk, lo, hi, OW, IW, KW, sx, dx, px);
                            depthwise_row_interior(yrow, xrow, wk, lo, hi, KW, sx, dx, px);
                        }
                    }
                }
                if (fused) {
                    const float *x0 = xc + ((ptrdiff_t)iz0 * IH + fy_lo * p->strides[1] - p->pads[1]) * IW;
                    depthwise_rows_3x3(yo + ((ptrdiff_t)oz * OH + fy_lo) * OW, OW, x0, (ptrdiff_t)p->strides[1] * IW,
                                       (ptrdiff_t)dy * IW, fy_hi - fy_lo, wo, b, lo, hi, OW, IW, sx, dx, px);
                }
            }
            if (res != NULL) { /* the fused epilogue, on the plane while it is in cache */
                const float *ro = res + ((ptrdiff_t)n * p->out_c + o) * out_plane;
                ptrdiff_t i;
                for (i = 0; i < out_plane; ++i) yo[i] += ro[i];
            }
            aotc_activate_f32(yo, out_plane, p->act, p->act_lo, p->act_hi, p->act_alpha);
        }
    }
}

/* ---- depthwise 3 x 3, stride 1 or 2: through a zero-padded copy of the plane ------------ */

/* Row iy of the input (or zeros when iy is outside) as padded row columns c = 0 .. cols - 1
 * (input column c - pl, zero outside the image): stride 1 into d; stride 2 split by the
 * column's parity, c = 2k into even[k], c = 2k + 1 into odd[k] (half entries each). */
static void pad_row(const float *xc, int32_t IH, int32_t IW, int32_t iy, int32_t pl, int32_t cols, int split,
                    float *AOTC_RESTRICT even, float *AOTC_RESTRICT odd) {
    const int32_t half = (cols + 1) / 2;
    const int32_t lo = iy < 0 || iy >= IH ? cols : (pl < cols ? pl : cols);
    const int32_t hi = iy < 0 || iy >= IH ? cols : (IW + pl < cols ? IW + pl : cols);
    const float *AOTC_RESTRICT src = xc + (ptrdiff_t)(iy < 0 || iy >= IH ? 0 : iy) * IW;
    int32_t c, k;
    if (!split) {
        for (c = 0; c < lo; ++c) even[c] = 0.0f;
        for (c = lo; c < hi; ++c) even[c] = src[c - pl];
        for (c = hi; c < cols; ++c) even[c] = 0.0f;
        return;
    }
    {
        const int32_t e0 = (lo + 1) / 2, e1 = (hi + 1) / 2, o0 = lo / 2, o1 = hi / 2;
        /* [k0, k1): both columns of pair k inside, one loop of paired loads (vectorised as a
         * de-interleave); the few others one by one (below k0 at most one column, if inside:
         * a row outside the image has lo = hi) */
        const int32_t k0 = e0 > o0 ? e0 : o0, k1 = e1 < o1 ? e1 : o1;
        const float *AOTC_RESTRICT s2 = src - pl;
        for (k = 0; k < e0; ++k) even[k] = 0.0f;
        for (k = 0; k < o0; ++k) odd[k] = 0.0f;
        for (k = e0; k < k0 && k < e1; ++k) even[k] = s2[2 * k];
        for (k = o0; k < k0 && k < o1; ++k) odd[k] = s2[2 * k + 1];
        for (k = k0; k < k1; ++k) {
            even[k] = s2[2 * k];
            odd[k] = s2[2 * k + 1];
        }
        for (k = k1 > e0 ? k1 : e0; k < e1; ++k) even[k] = s2[2 * k];
        for (k = k1 > o0 ? k1 : o0; k < o1; ++k) odd[k] = s2[2 * k + 1];
        for (k = e1; k < half; ++k) even[k] = 0.0f;
        for (k = o1; k < half; ++k) odd[k] = 0.0f;
    }
}

void aotc_conv_depthwise3x3_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                const float *res, float *y, float *scratch) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t s = p->strides[2]; /* == strides[1], 1 or 2 */
    const int32_t rows = (OH - 1) * s + 3, cols = (OW - 1) * s + 3;
    /* stride 1: one padded plane, rows of `cols`. stride 2: four phase planes (row parity x
     * column parity), each prow rows of `half`: every tap is then a unit-stride read. */
    const int32_t half = (cols + 1) / 2, prow = (rows + 1) / 2;
    const int32_t row_len = s == 1 ? cols : half;
    const ptrdiff_t phase = (ptrdiff_t)prow * half;
    float *const wide = scratch + (s == 1 ? (ptrdiff_t)rows * cols : 4 * phase);
    const int32_t mult = p->out_c / p->in_c;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    /* output (oy, ox) is computed at wide[oy * row_len + ox]: one flat pass over the plane
     * (the columns past OW of each wide row are junk, dropped when the rows are copied out) */
    const ptrdiff_t nq = (ptrdiff_t)(OH - 1) * row_len + OW;
    int32_t n, o, oy, r;
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const float *wo = w + (ptrdiff_t)o * 9;
            const float w00 = wo[0], w01 = wo[1], w02 = wo[2], w10 = wo[3], w11 = wo[4];
            const float w12 = wo[5], w20 = wo[6], w21 = wo[7], w22 = wo[8];
            const float b = bias != NULL ? bias[o] : 0.0f;
            const ptrdiff_t yoff = ((ptrdiff_t)n * p->out_c + o) * out_plane;
            float *yo = y + yoff;
            ptrdiff_t q;
            if (o % mult == 0) {
                const float *xc = x + ((ptrdiff_t)n * p->in_c + o / mult) * in_plane;
                for (r = 0; r < rows; ++r) {
                    float *even = s == 1 ? scratch + (ptrdiff_t)r * cols
                                         : scratch + (r % 2) * 2 * phase + (ptrdiff_t)(r / 2) * half;
                    pad_row(xc, IH, IW, r - p->pads[1], p->pads[2], cols, s == 2, even, even + phase);
                }
            }
            if (s == 1) {
                const float *AOTC_RESTRICT r0 = scratch;
                const float *AOTC_RESTRICT r1 = scratch + row_len;
                const float *AOTC_RESTRICT r2 = scratch + 2 * row_len;
                float *AOTC_RESTRICT wq = wide;
                for (q = 0; q < nq; ++q) {
                    const float s0 = MADD(w02, r0[q + 2], MADD(w01, r0[q + 1], w00 * r0[q]));
                    const float s1 = MADD(w12, r1[q + 2], MADD(w11, r1[q + 1], w10 * r1[q]));
                    const float s2 = MADD(w22, r2[q + 2], MADD(w21, r2[q + 1], w20 * r2[q]));
                    wq[q] = b + (s0 + s1 + s2);
                }
            } else { /* tap (ky, kx) of output q: row phase ky % 2, column phase kx % 2, + ky/2 rows + kx/2 */
                const float *AOTC_RESTRICT ee = scratch;
                const float *AOTC_RESTRICT eo = scratch + phase;
                const float *AOTC_RESTRICT oe = scratch + 2 * phase;
                const float *AOTC_RESTRICT oo = scratch + 3 * phase;
                float *AOTC_RESTRICT wq = wide;
                for (q = 0; q < nq; ++q) {
                    const float s0 = MADD(w02, ee[q + 1], MADD(w01, eo[q], w00 * ee[q]));
                    const float s1 = MADD(w12, oe[q + 1], MADD(w11, oo[q], w10 * oe[q]));
                    const float s2 = MADD(w22, ee[q + half + 1], MADD(w21, eo[q + half], w20 * ee[q + half]));
                    wq[q] = b + (s0 + s1 + s2);
                }
            }
            for (oy = 0; oy < OH; ++oy) {
                memcpy(yo + (ptrdiff_t)oy * OW, wide + (ptrdiff_t)oy * row_len, (size_t)OW * sizeof(float));
            }
            if (res != NULL) { /* the fused epilogue, on the plane while it is in cache */
                const float *AOTC_RESTRICT ro = res + yoff;
                ptrdiff_t i;
                for (i = 0; i < out_plane; ++i) yo[i] += ro[i];
            }
            aotc_activate_f32(yo, out_plane, p->act, p->act_lo, p->act_hi, p->act_alpha);
        }
    }
}

/* ---- 3 x 3 Conv, few input channels per group: one flat pass per plane, straight into Y --- */

/* m[q] for q in [0, n]: all bits clear where q % w == 0 (the first column of a row of w), else
 * all set. The taps of output q one column left lie inside its row iff m[q], one column right
 * iff m[q + 1]. */
static void first_column_mask(uint32_t *m, int32_t n, int32_t w) {
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
static float keep_if(float v, uint32_t m) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u &= m;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The loop over one output plane y[0, n): SUM declares v, the taps of output q from one input
 * channel (taps outside the image dropped by keep_if); v is added to the bias (the group's
 * first input channel) or to y[q] (a later one), clamped to [lo, hi] (-inf, inf before the
 * last input channel, or with no activation to fuse) and stored. */
#define FLAT_LOOP(SUM)                                                                   \
    if (!acc) {                                                                          \
        for (q = 0; q < n; ++q) {                                                        \
            SUM                                                                          \
            v += b;                                                                      \
            v = v < lo ? lo : v;                                                         \
            y[q] = v > hi ? hi : v;                                                      \
        }                                                                                \
    } else {                                                                             \
        for (q = 0; q < n; ++q) {                                                        \
            SUM                                                                          \
            v += y[q];                                                                   \
            v = v < lo ? lo : v;                                                         \
            y[q] = v > hi ? hi : v;                                                      \
        }                                                                                \
    }

/* Stride 1, pads of 1: x is the plane (rows of w) with a zero row and one more zero on each
 * side, so tap (ky, kx) of output q is x[q + (ky - 1) * w + kx - 1]; a tap that wraps into the
 * row above or below is in a padding column, dropped by the mask. */
static void flat3x3_s1(const float *AOTC_RESTRICT x, int32_t w, int32_t n, const uint32_t *AOTC_RESTRICT m,
                       const float *k, float b, int acc, float lo, float hi, float *AOTC_RESTRICT y) {
    const float *AOTC_RESTRICT r0 = x - w;
    const float *AOTC_RESTRICT r2 = x + w;
    const float k00 = k[0], k01 = k[1], k02 = k[2], k10 = k[3], k11 = k[4], k12 = k[5];
    const float k20 = k[6], k21 = k[7], k22 = k[8];
    int32_t q;
#define S1_SUM                                                                             \
    const float left = MADD(k20, r2[q - 1], MADD(k10, x[q - 1], k00 * r0[q - 1]));         \
    const float mid = MADD(k21, r2[q], MADD(k11, x[q], k01 * r0[q]));                      \
    const float right = MADD(k22, r2[q + 1], MADD(k12, x[q + 1], k02 * r0[q + 1]));       \
    float v = mid + keep_if(left, m[q]) + keep_if(right, m[q + 1]);
    FLAT_LOOP(S1_SUM)
#undef S1_SUM
}

/* Stride 2: t[i] is where tap i of output q is read, t[i][q], in planes of one row and column
 * parity of the input (rows of OW); k[i] its weight. Taps 0 to 2 are the kernel column whose
 * reads are dropped where e[q] is 0 (the column before the first, or after the last). */
static void flat3x3_s2(const float *const *t, const uint32_t *AOTC_RESTRICT e, int32_t n, const float *k,
                       float b, int acc, float lo, float hi, float *AOTC_RESTRICT y) {
    const float *AOTC_RESTRICT t0 = t[0];
    const float *AOTC_RESTRICT t1 = t[1];
    const float *AOTC_RESTRICT t2 = t[2];
    const float *AOTC_RESTRICT t3 = t[3];
    const float *AOTC_RESTRICT t4 = t[4];
    const float *AOTC_RESTRICT t5 = t[5];
    const float *AOTC_RESTRICT t6 = t[6];
    const float *AOTC_RESTRICT t7 = t[7];
    const float *AOTC_RESTRICT t8 = t[8];
    const float k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5], k6 = k[6], k7 = k[7], k8 = k[8];
    int32_t q;
#define S2_SUM                                                                                     \
    const float edge = MADD(k2, t2[q], MADD(k1, t1[q], k0 * t0[q]));                               \
    const float in = MADD(k8, t8[q], MADD(k7, t7[q], MADD(k6, t6[q], MADD(k5, t5[q], MADD(k4, t4[q], k3 * t3[q]))))); \
    float v = in + keep_if(edge, e[q]);
    FLAT_LOOP(S2_SUM)
#undef S2_SUM
}
#undef FLAT_LOOP

/* ev[j] = row[2 j] for j < ne, od[j] = row[2 j + 1] for j < no (ne - no is 0 or 1). */
static void split_columns(const float *AOTC_RESTRICT row, int32_t ne, int32_t no, float *AOTC_RESTRICT ev,
                          float *AOTC_RESTRICT od) {
    int32_t j;
    for (j = 0; j < no; ++j) {
        ev[j] = row[2 * j];
        od[j] = row[2 * j + 1];
    }
    if (ne > no) ev[no] = row[2 * no];
}

void aotc_conv3x3_flat_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                           const float *res, float *y, float *scratch) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t s = p->strides[2], pt = p->pads[1], pl = p->pads[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, n = OH * OW;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW;
    /* scratch: the mask (n + 1 words, rounded up to 16), then one input plane with margins
     * (stride 1), or its four parity planes (stride 2) */
    uint32_t *const mask = (uint32_t *)scratch;
    float *const planes = scratch + (n + 16) / 16 * 16;
    const ptrdiff_t plane_len = s == 1 ? (ptrdiff_t)(IH + 2) * IW + 2 : (ptrdiff_t)(OH + 2) * OW + 2;
    const int32_t ne = min_i32(OW, (IW + 1) / 2), no = min_i32(OW, IW / 2); /* columns per parity */
    const int32_t masked = pl == 1 ? 0 : 2; /* stride 2: the kernel column a mask guards */
    /* the activation in the last channel's pass; LeakyRelu and a residual get passes of their own */
    const int fuse = p->act != AOTC_ACT_LEAKY && res == NULL;
    const float lo = fuse && p->act == AOTC_ACT_CLAMP ? p->act_lo : -INFINITY;
    const float hi = fuse && p->act == AOTC_ACT_CLAMP ? p->act_hi : INFINITY;
    const float *t[9];
    float k[9];
    int32_t i, nb, g, c, o;
    first_column_mask(mask, n, OW);
    /* the margins, and the padding the copies below leave alone, are 0 for every plane */
    /* (the copies fill all but the margins; a margin row they fill, the one past the last output
     * row at stride 2, they fill for every input plane) */
    if (s == 1 || (ne == OW && no == OW && IH >= 2 * OH)) {
        for (i = 0; i < (s == 1 ? 1 : 4); ++i) {
            float *const pi = planes + i * plane_len;
            const ptrdiff_t body = s == 1 ? in_plane : (ptrdiff_t)n;
            ptrdiff_t j;
            for (j = 0; j < (s == 1 ? IW : OW) + 1; ++j) pi[j] = 0.0f;
            for (j += body; j < plane_len; ++j) pi[j] = 0.0f;
        }
    } else {
        for (i = 0; i < 4 * plane_len; ++i) planes[i] = 0.0f;
    }
    if (s == 2) { /* tap (ky, kx) reads input (2 oy + ky - pt, 2 ox + kx - pl): parity plane, offset */
        int32_t ky, kx, slot = 3;
        for (ky = 0; ky < 3; ++ky) {
            for (kx = 0; kx < 3; ++kx) {
                const int32_t dy = ky - pt, dx = kx - pl, a = dy & 1, b = dx & 1;
                t[kx == masked ? ky : slot++] =
                    planes + (ptrdiff_t)(a * 2 + b) * plane_len + OW + 1 + (dy - a) / 2 * OW + (dx - b) / 2;
            }
        }
    }
    for (nb = 0; nb < p->batch; ++nb) {
        for (g = 0; g < p->group; ++g) {
            for (c = 0; c < cg; ++c) { /* one input plane at a time, into every output of the group */
                const float *xc = x + ((ptrdiff_t)nb * p->in_c + (ptrdiff_t)g * cg + c) * in_plane;
                const int last = c == cg - 1;
                if (s == 1) {
                    memcpy(planes + IW + 1, xc, (size_t)in_plane * sizeof(float));
                } else { /* input rows 2 i and 2 i + 1: row i of planes (0, *) and (1, *), for
                          * i up to OH (the row below the last output row, read when pt is 0) */
                    const int32_t rows = min_i32(IH, 2 * OH + 2);
                    const float *src = xc;
                    float *ev = planes + OW + 1;
                    int32_t iy;
                    for (iy = 0; iy + 1 < rows; iy += 2, src += 2 * IW, ev += OW) {
                        split_columns(src, ne, no, ev, ev + plane_len);
                        split_columns(src + IW, ne, no, ev + 2 * plane_len, ev + 3 * plane_len);
                    }
                    if (iy < rows) split_columns(src, ne, no, ev, ev + plane_len);
                }
                for (o = g * mg; o < (g + 1) * mg; ++o) {
                    const float *wo = w + ((ptrdiff_t)o * cg + c) * 9;
                    const float b = bias != NULL ? bias[o] : 0.0f;
                    float *yo = y + ((ptrdiff_t)nb * p->out_c + o) * n;
                    if (s == 1) {
                        flat3x3_s1(planes + IW + 1, IW, n, mask, wo, b, c > 0, last ? lo : -INFINITY,
                                   last ? hi : INFINITY, yo);
                    } else {
                        int32_t ky, kx, slot = 3;
                        for (ky = 0; ky < 3; ++ky) { /* the weights in the order of t */
                            for (kx = 0; kx < 3; ++kx) k[kx == masked ? ky : slot++] = wo[ky * 3 + kx];
                        }
                        flat3x3_s2(t, mask + (masked == 0 ? 0 : 1), n, k, b, c > 0, last ? lo : -INFINITY,
                                   last ? hi : INFINITY, yo);
                    }
                    if (last && !fuse) {
                        if (res != NULL) {
                            const float *ro = res + (yo - y);
                            for (i = 0; i < n; ++i) yo[i] += ro[i];
                        }
                        aotc_activate_f32(yo, n, p->act, p->act_lo, p->act_hi, p->act_alpha);
                    }
                }
            }
        }
    }
}

/* ---- depthwise 3 x 3, stride 1 or 2, pads of 0 or 1: straight from the input, no scratch ---- */

/* Most outputs in one flat run (below): its keep masks are on the stack. */
#define DW3_RUN 128
/* Runs go in blocks of AOTC_DW3_BLOCK outputs, each summed in registers (compilers turn a block
 * into a few vector operations, at stride 2 de-interleaving the inputs in registers), rounded up
 * to whole blocks wherever the outputs past a run's end (and their taps) stay inside y (and x):
 * those outputs are written again, later, by the run or plane they belong to. Targets without
 * vector units go output by output (blocks of 1). aot/emit_c/ops/conv.py assumes 8. */
#ifndef AOTC_DW3_BLOCK
#if defined(__SSE2__) || defined(__ARM_NEON) || defined(__ARM_NEON__) || defined(__aarch64__)
#define AOTC_DW3_BLOCK 8
#else
#define AOTC_DW3_BLOCK 1
#endif
#endif
#define DW3_BLOCK AOTC_DW3_BLOCK
#if defined(__GNUC__) || defined(__clang__)
#define DW3_NOINLINE __attribute__((noinline))
#define DW3_INLINE inline __attribute__((always_inline))
#else
#define DW3_NOINLINE
#define DW3_INLINE inline
#endif

/* One depthwise 3 x 3 conv: sizes, and bands of output rows [oy0, oy1) whose tap rows
 * [ky0, ky1) lie inside the image (at most 3 with pads of 0 or 1: the first row, the middle,
 * the last row). */
typedef struct {
    int32_t IH, IW, OH, OW, s, pt, pl, flat, bands;
    struct {
        int32_t oy0, oy1, ky0, ky1;
    } band[3];
    int32_t per, runs;   /* output rows per run, and runs per plane */
    int32_t top, bottom; /* 1 where the first (last) output row's tap row 0 (2) is outside */
    const uint32_t *m; /* flat runs: the keep masks */
    float lo, hi;      /* the clamp */
    int32_t jl, jr;    /* row runs: the outputs whose left (right) taps are outside, or -1 */
} dw3_conv;

/* A run is outputs y[j], j in [j0, j1), of one output row or (stride 1, pads of 1 on both sides,
 * where output rows are as long as input rows) a flat run of whole rows, read straight from the
 * input: tap (i, kx) of output j is t_i[S * j + kx - 1], weights k. Taps outside the image are
 * read (from the row or plane next to it, or anything valid) and dropped: tap row 0 of outputs
 * below jt, tap row 2 of outputs from jd on; the left taps (kx = 0) of output j where m[j] is 0
 * and the right ones where m[j + 1] is 0 (flat runs), or (row runs) those of output jl and jr
 * (-1: none). Then y[j] = clamp(sum + b), the clamp [lo, hi] (-inf, inf where no activation
 * is fused, or it goes after a residual). */
#define DW3_RUN_PARAMS                                                                                  \
    (const float *AOTC_RESTRICT t0, const float *AOTC_RESTRICT t1, const float *AOTC_RESTRICT t2,       \
     const uint32_t *AOTC_RESTRICT m, const float *k, float b, float lo, float hi, int32_t jl, int32_t jr, \
     int32_t jt, int32_t jd, int32_t j0, int32_t j1, float *AOTC_RESTRICT y)
#define DW3_ARGS t0, t1, t2, m, k, b, lo, hi, jl, jr, jt, jd
#define DW3_WEIGHTS                                                                                     \
    const float k00 = k[0], k01 = k[1], k02 = k[2], k10 = k[3], k11 = k[4], k12 = k[5];                 \
    const float k20 = k[6], k21 = k[7], k22 = k[8];                                                     \
    (void)m, (void)jl, (void)jr;

#define DW3_ALL 0xFFFFFFFFu
/* tap rows 0 and 2 of output J: kept (all ones) or dropped (0) */
#define DW3_KEEP0(J) (MASKED && (J) < jt ? 0u : DW3_ALL)
#define DW3_KEEP2(J) (MASKED && (J) >= jd ? 0u : DW3_ALL)

/* y[J] = clamp(mid + the kept left and right column sums + b). */
#define DW3_OUT(J, LEFT, MID, RIGHT)                                                              \
    {                                                                                             \
        float v_ = (MID) + keep_if(LEFT, FLAT ? m[J] : (J) != jl ? DW3_ALL : 0u) +                 \
                   keep_if(RIGHT, FLAT ? m[(J) + 1] : (J) != jr ? DW3_ALL : 0u) + b;               \
        v_ = v_ < lo ? lo : v_;                                                                   \
        y[J] = v_ > hi ? hi : v_;                                                                 \
    }

/* Output J straight from the tap rows (the flat kernel's order of sums). */
#define DW3_TAPS(J)                                                                              \
    {                                                                                            \
        const ptrdiff_t i_ = (ptrdiff_t)S * (J);                                                 \
        const uint32_t e0_ = DW3_KEEP0(J), e2_ = DW3_KEEP2(J);                                   \
        float left = k00 * keep_if(t0[i_ - 1], e0_), mid = k01 * keep_if(t0[i_], e0_);          \
        float right = k02 * keep_if(t0[i_ + 1], e0_);                                            \
        left = MADD(k10, t1[i_ - 1], left);                                                      \
        mid = MADD(k11, t1[i_], mid);                                                            \
        right = MADD(k12, t1[i_ + 1], right);                                                    \
        left = MADD(k20, keep_if(t2[i_ - 1], e2_), left);                                        \
        mid = MADD(k21, keep_if(t2[i_], e2_), mid);                                              \
        right = MADD(k22, keep_if(t2[i_ + 1], e2_), right);                                      \
        DW3_OUT(J, left, mid, right)                                                             \
    }

/* Outputs [jb, jb + DW3_BLOCK). Stride 2: each tap row's 2 DW3_BLOCK + 1 inputs first go to
 * arrays of the left taps (one more: the right taps are the left ones of the next output) and
 * of the middle ones, which compilers de-interleave in registers (read in place, every tap
 * would be gathered). (A stride 2 run is one row: its rows are kept or dropped as a whole.) */
#define DW3_BLOCK_OF                                                                             \
    if (S == 1 || DW3_BLOCK == 1) {                                                              \
        for (l = 0; l < DW3_BLOCK; ++l) DW3_TAPS(jb + l)                                         \
    } else {                                                                                     \
        float a0[DW3_BLOCK + 1], b0[DW3_BLOCK], a1[DW3_BLOCK + 1], b1[DW3_BLOCK];                \
        float a2[DW3_BLOCK + 1], b2[DW3_BLOCK];                                                  \
        const ptrdiff_t i_ = 2 * (ptrdiff_t)jb - 1;                                              \
        const uint32_t e0_ = DW3_KEEP0(jb), e2_ = DW3_KEEP2(jb);                                 \
        for (l = 0; l <= DW3_BLOCK; ++l) a0[l] = keep_if(t0[i_ + 2 * l], e0_);                   \
        for (l = 0; l < DW3_BLOCK; ++l) b0[l] = keep_if(t0[i_ + 2 * l + 1], e0_);                \
        for (l = 0; l <= DW3_BLOCK; ++l) a1[l] = t1[i_ + 2 * l];                                 \
        for (l = 0; l < DW3_BLOCK; ++l) b1[l] = t1[i_ + 2 * l + 1];                              \
        for (l = 0; l <= DW3_BLOCK; ++l) a2[l] = keep_if(t2[i_ + 2 * l], e2_);                   \
        for (l = 0; l < DW3_BLOCK; ++l) b2[l] = keep_if(t2[i_ + 2 * l + 1], e2_);                \
        for (l = 0; l < DW3_BLOCK; ++l) {                                                        \
            const float left = MADD(k20, a2[l], MADD(k10, a1[l], k00 * a0[l]));                  \
            const float mid = MADD(k21, b2[l], MADD(k11, b1[l], k01 * b0[l]));                   \
            const float right = MADD(k22, a2[l + 1], MADD(k12, a1[l + 1], k02 * a0[l + 1]));     \
            DW3_OUT(jb + l, left, mid, right)                                                    \
        }                                                                                        \
    }

/* The blocks of [j0, j1): DW3_BLOCKS_MIXED, with or without (most blocks) rows to drop;
 * DW3_BLOCKS, none to drop. */
#define DW3_BLOCKS_MIXED                                                                         \
    for (jb = j0; jb + DW3_BLOCK <= j1; jb += DW3_BLOCK) {                                       \
        if (jb < jt || jb + DW3_BLOCK > jd) {                                                    \
            enum { MASKED = 1 };                                                                 \
            DW3_BLOCK_OF                                                                         \
        } else {                                                                                 \
            enum { MASKED = 0 };                                                                 \
            DW3_BLOCK_OF                                                                         \
        }                                                                                        \
    }
#define DW3_BLOCKS                                                                               \
    for (jb = j0; jb + DW3_BLOCK <= j1; jb += DW3_BLOCK) {                                       \
        enum { MASKED = 0 };                                                                     \
        DW3_BLOCK_OF                                                                             \
    }

/* The run kernels NAME at stride S_ (FLAT_: masks from m): NAME##_tail, outputs [j0, j1) one by
 * one (apart, so that the blocks' code does not pay for setting up the compiler's vector loop);
 * NAME##_run (no rows to drop) and NAME##_runx, outputs [j0, j1) in blocks, the rest by
 * NAME##_tail; NAME, NAME##_runx as a function of its own (for dw3_plane_checked). */
#define DW3_KERNEL(NAME, S_, FLAT_)                                                                     \
    static DW3_NOINLINE void NAME##_tail DW3_RUN_PARAMS {                                               \
        enum { S = S_, FLAT = FLAT_, MASKED = 1 };                                                      \
        DW3_WEIGHTS                                                                                     \
        int32_t j;                                                                                      \
        for (j = j0; j < j1; ++j) DW3_TAPS(j)                                                           \
    }                                                                                                   \
    static DW3_INLINE void NAME##_run DW3_RUN_PARAMS {                                                  \
        enum { S = S_, FLAT = FLAT_ };                                                                  \
        DW3_WEIGHTS                                                                                     \
        int32_t jb, l;                                                                                  \
        DW3_BLOCKS                                                                                      \
        if (jb < j1) NAME##_tail(DW3_ARGS, jb, j1, y);                                                  \
    }                                                                                                   \
    static DW3_INLINE void NAME##_runx DW3_RUN_PARAMS {                                                 \
        enum { S = S_, FLAT = FLAT_ };                                                                  \
        DW3_WEIGHTS                                                                                     \
        int32_t jb, l;                                                                                  \
        DW3_BLOCKS_MIXED                                                                                \
        if (jb < j1) NAME##_tail(DW3_ARGS, jb, j1, y);                                                  \
    }                                                                                                   \
    static void NAME DW3_RUN_PARAMS { NAME##_runx(DW3_ARGS, j0, j1, y); }
DW3_KERNEL(dw3_flat, 1, 1)
DW3_KERNEL(dw3_s1, 1, 0)
DW3_KERNEL(dw3_s2, 2, 0)
#undef DW3_KERNEL
#undef DW3_BLOCKS
#undef DW3_BLOCKS_MIXED
#undef DW3_BLOCK_OF
#undef DW3_TAPS
#undef DW3_OUT
#undef DW3_KEEP0
#undef DW3_KEEP2
#undef DW3_WEIGHTS

/* A plane whose runs may be rounded up to whole blocks and may read the rows next to the plane
 * (all planes but the first and the last): xc its input plane, y its output, k its weights, b
 * its bias. Runs of c->per rows: the first drops tap row 0 in its first row if that is outside
 * the image, the last tap row 2 in its last row; the others, in one loop, drop nothing. One
 * function per plane, the runs inlined, so that the weights are spread into vectors a few times
 * a plane. */
#define DW3_PLANE(NAME, KERNEL)                                                                         \
    static void NAME(const dw3_conv *c, const float *xc, const float *k, float b, float *y) {           \
        const uint32_t *m = c->m;                                                                       \
        const float lo = c->lo, hi = c->hi;                                                             \
        const int32_t jl = c->jl, jr = c->jr, OH = c->OH, OW = c->OW, per = c->per, runs = c->runs;     \
        const int32_t first = c->top ? 1 : 0, last = runs - (c->bottom ? 1 : 0); /* the middle runs */  \
        const ptrdiff_t IW = c->IW;                                                                     \
        float kw[9]; /* (a copy: stores to y cannot change it, so the weights stay in registers) */     \
        int32_t r = 0;                                                                                  \
        memcpy(kw, k, sizeof kw);                                                                       \
        while (r < runs) {                                                                              \
            if (r < first || r >= last) { /* the first or the last run, dropping rows */                \
                DW3_PLANE_RUN(r)                                                                        \
                KERNEL##_runx(t, t + IW, t + 2 * IW, m, kw, b, lo, hi, jl, jr, r < first ? OW : 0,      \
                              r >= last ? len - OW : vlen, 0, vlen, y + q);                             \
                ++r;                                                                                    \
            } else {                                                                                    \
                for (; r < last; ++r) {                                                                 \
                    DW3_PLANE_RUN(r)                                                                    \
                    KERNEL##_run(t, t + IW, t + 2 * IW, m, kw, b, lo, hi, jl, jr, 0, vlen, 0, vlen, y + q); \
                }                                                                                       \
            }                                                                                           \
        }                                                                                               \
    }
/* Run R: len outputs, rounded up to vlen (at least one block, written so that compilers see it
 * and set the vectors of weights up once for all the runs), from q in y; t: the first output's
 * centre tap in tap row 0. */
#define DW3_PLANE_RUN(R)                                                                                \
    const int32_t oy = (R) * per, len = min_i32(per, OH - oy) * OW;                                     \
    const int32_t vlen = DW3_BLOCK + (int32_t)((uint32_t)(len - 1) / DW3_BLOCK) * DW3_BLOCK;             \
    const ptrdiff_t q = (ptrdiff_t)oy * OW;                                                             \
    const float *t = xc + (oy * c->s - c->pt) * IW - c->pl + 1;
DW3_PLANE(dw3_plane_flat, dw3_flat)
DW3_PLANE(dw3_plane_s1, dw3_s1)
DW3_PLANE(dw3_plane_s2, dw3_s2)
#undef DW3_PLANE
#undef DW3_PLANE_RUN
#undef DW3_ARGS
#undef DW3_RUN_PARAMS
#undef DW3_ALL

/* Output (oy, ox), every tap tested: the outputs that the runs would read outside x for. xc is
 * the input plane; y points at the output. */
static void dw3_point(const dw3_conv *c, const float *xc, const float *k, float b, int32_t oy, int32_t ox, float *y) {
    const int32_t iy = oy * c->s - c->pt, ix = ox * c->s - c->pl;
    float v = 0.0f;
    int32_t ky, kx;
    for (ky = 0; ky < 3; ++ky) {
        if (iy + ky < 0 || iy + ky >= c->IH) continue;
        for (kx = 0; kx < 3; ++kx) {
            if (ix + kx >= 0 && ix + kx < c->IW) v = MADD(k[ky * 3 + kx], xc[(ptrdiff_t)(iy + ky) * c->IW + ix + kx], v);
        }
    }
    v += b;
    v = v < c->lo ? c->lo : v;
    *y = v > c->hi ? c->hi : v;
}

/* The same as the dw3_plane_* for any plane, band by band and run by run, each run checked:
 * tap rows outside the image read the middle one instead (and drop it), the run is rounded up
 * only where the outputs past its end and their taps stay in y and x (of y_len and x_len
 * elements), and the outputs that would read outside x (the first of the first plane, the last
 * of the last) go one by one. yo: the plane in y. */
static void dw3_plane_checked(const dw3_conv *c, const float *x, ptrdiff_t x_len, const float *xc, const float *k,
                              float b, float *y, ptrdiff_t y_len, ptrdiff_t yo) {
    const int32_t OW = c->OW, per = c->per;
    int32_t i, oy, j;
    for (i = 0; i < c->bands; ++i) {
        const int32_t ky0 = c->band[i].ky0, ky1 = c->band[i].ky1, oy1 = c->band[i].oy1;
        for (oy = c->band[i].oy0; oy < oy1; oy += per) {
            const int32_t len = min_i32(per, oy1 - oy) * OW, vlen = (len + DW3_BLOCK - 1) / DW3_BLOCK * DW3_BLOCK;
            const ptrdiff_t q = yo + (ptrdiff_t)oy * OW; /* the run's first output in y */
            /* its first output's centre taps in x: tap row 1 (always inside), rows 0 and 2 */
            const ptrdiff_t t1 = (xc - x) + (ptrdiff_t)(oy * c->s - c->pt + 1) * c->IW - c->pl + 1;
            const ptrdiff_t t0 = ky0 == 0 ? t1 - c->IW : t1, t2 = ky1 == 3 ? t1 + c->IW : t1;
            int32_t j0 = t0 == 0 ? 1 : 0; /* (t0 - 1: the lowest read) */
            int32_t j1 = q + vlen <= y_len && t2 + (ptrdiff_t)c->s * (vlen - 1) + 1 < x_len ? vlen : len;
            if (t2 + (ptrdiff_t)c->s * (len - 1) + 1 >= x_len) j1 = len - 1;
            if (j1 < j0) j1 = j0;
            if (j0 < j1) {
                (c->s == 2 ? dw3_s2 : c->flat ? dw3_flat : dw3_s1)(x + t0, x + t1, x + t2, c->m, k, b, c->lo, c->hi,
                                                                   c->jl, c->jr, ky0 > 0 ? j1 : 0, ky1 < 3 ? 0 : j1,
                                                                   j0, j1, y + q);
            }
            for (j = 0; j < len; ++j) {
                if (j == j0) j = j1;
                if (j >= len) break;
                dw3_point(c, xc, k, b, oy + j / OW, j % OW, y + q + j);
            }
        }
    }
}

void aotc_conv_depthwise3x3_direct_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                       const float *res, float *y) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t s = p->strides[2];                 /* == strides[1] */
    const int32_t mult = p->out_c / p->in_c;         /* outputs per input channel */
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    const ptrdiff_t x_len = (ptrdiff_t)p->batch * p->in_c * in_plane, y_len = (ptrdiff_t)p->batch * p->out_c * out_plane;
    uint32_t m[DW3_RUN + DW3_BLOCK + 1];
    dw3_conv c;
    int32_t n, o, oy;
    c.IH = IH, c.IW = IW, c.OH = OH, c.OW = OW, c.s = s, c.pt = p->pads[1], c.pl = p->pads[2];
    /* stride 1 with pads of 1 on both sides: output q = oy * OW + ox reads input q + a fixed
     * offset per tap, so runs take whole rows, up to DW3_RUN outputs, a mask of first columns
     * dropping the taps that wrap to the next row; all other runs are one output row */
    c.flat = s == 1 && c.pl == 1 && OW == IW && OW <= DW3_RUN;
    for (c.bands = 0, oy = 0; oy < OH && c.bands < 3; oy = c.band[c.bands++].oy1) {
        c.band[c.bands].oy0 = oy;
        c.band[c.bands].oy1 = tap_run(oy, OH, IH, 3, s, 1, c.pt, &c.band[c.bands].ky0, &c.band[c.bands].ky1);
    }
    c.per = c.flat ? DW3_RUN / OW : 1;
    c.runs = (OH + c.per - 1) / c.per;
    c.top = c.band[0].ky0 > 0;
    c.bottom = c.band[c.bands - 1].ky1 < 3;
    if (c.flat) first_column_mask(m, DW3_RUN + DW3_BLOCK, OW);
    c.m = m;
    /* the clamp in the runs; a residual, and LeakyRelu, go in passes of their own */
    c.lo = p->act == AOTC_ACT_CLAMP && res == NULL ? p->act_lo : -INFINITY;
    c.hi = p->act == AOTC_ACT_CLAMP && res == NULL ? p->act_hi : INFINITY;
    c.jl = c.pl == 1 ? 0 : -1;
    c.jr = s * (OW - 1) - c.pl + 2 >= IW ? OW - 1 : -1;
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const float *xc = x + ((ptrdiff_t)n * p->in_c + o / mult) * in_plane;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + o) * out_plane;
            const float *wo = w + (ptrdiff_t)o * 9;
            const float b = bias != NULL ? bias[o] : 0.0f;
            /* the runs read the rows next to the plane (dropped) and, rounded up, up to DW3_BLOCK
             * outputs (s DW3_BLOCK + 1 input elements) past the plane: all inside x and y but in
             * the first and last planes (and with a single row above and below, IH = 1) */
            if (xc == x || IH == 1 || yo + out_plane + DW3_BLOCK > y_len ||
                (xc - x) + in_plane + IW + s * DW3_BLOCK + 2 > x_len) {
                dw3_plane_checked(&c, x, x_len, xc, wo, b, y, y_len, yo);
            } else {
                (s == 2 ? dw3_plane_s2 : c.flat ? dw3_plane_flat : dw3_plane_s1)(&c, xc, wo, b, y + yo);
            }
            if (res != NULL) { /* the fused epilogue, on the plane while it is in cache */
                const float *ro = res + yo;
                float *yp = y + yo;
                ptrdiff_t i;
                for (i = 0; i < out_plane; ++i) yp[i] += ro[i];
            }
            if (res != NULL || p->act == AOTC_ACT_LEAKY) {
                aotc_activate_f32(y + yo, out_plane, p->act, p->act_lo, p->act_hi, p->act_alpha);
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
                aotc_sgemm_params gp = gemm_shape(rows, nc, cg);
                gp.a_rs = 1; /* A(i, k) = W[g * cg + k][i]: W read transposed */
                gp.a_cs = rows;
                gp.b_rs = npos;
                gp.beta = 0.0f;
                aotc_sgemm_f32(&gp, w + (ptrdiff_t)g * cg * rows, xg + j0, NULL, scratch, work);
                col2im_block(p, scratch, mg, j0, nc, yg);
            }
        }
    }
}
