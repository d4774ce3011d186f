/* ONNX Conv without scratch: aotc_conv_direct_f32, register tiles of output channels x
 * columns summed straight from the input, for steps with no memory to spare. */
#include "conv_internal.h"

/* ---- any Conv without scratch: direct, for steps with no memory to spare ----------- */

/* Output tile of the direct conv: DIRECT_MB output channels by DIRECT_NB output columns,
 * kept in registers while every input channel and tap is added in (the GEMM core's register
 * tile, with B read straight from the input). */
#define DIRECT_MB 4
#define DIRECT_NB 16

/* t[i * NB + j] = sum over c, ky in [ky0, ky1), kx of wr[i][(c * KH + ky) * KW + kx] * x(c, ky, kx, j)
 * for j < NB, x read at xp + c * in_plane + ky * row_step + kx * dx + j * S: all inside the input. */
#define DIRECT_TILE(NAME, S, NB)                                                                    \
    MK_NOINLINE static void NAME(const float *xp, ptrdiff_t in_plane, ptrdiff_t row_step,      \
                                     int32_t cg, int32_t ky0, int32_t ky1, int32_t KH, int32_t KW,  \
                                     int32_t dx, int32_t sx, const float *const *wr,               \
                                     float *AOTC_RESTRICT t) {                                     \
        float c0[NB], c1[NB], c2[NB], c3[NB];                                                     \
        int32_t c, ky, kx, j;                                                                     \
        (void)sx; /* (S is sx, or the constant it equals) */                                      \
        MK_UNROLL for (j = 0; j < (NB); ++j) c0[j] = c1[j] = c2[j] = c3[j] = 0.0f;                \
        for (c = 0; c < cg; ++c, xp += in_plane) {                                                \
            for (ky = ky0; ky < ky1; ++ky) {                                                      \
                const ptrdiff_t q = ((ptrdiff_t)c * KH + ky) * KW;                                \
                const float *w0 = wr[0] + q, *w1 = wr[1] + q, *w2 = wr[2] + q, *w3 = wr[3] + q;   \
                for (kx = 0; kx < KW; ++kx) {                                                     \
                    const float *AOTC_RESTRICT xr = xp + ky * row_step + kx * dx;                 \
                    const float a0 = w0[kx], a1 = w1[kx], a2 = w2[kx], a3 = w3[kx];               \
                    MK_UNROLL for (j = 0; j < (NB); ++j) {                                        \
                        const float v = xr[j * (S)];                                              \
                        c0[j] = MK_MADD(a0, v, c0[j]);                                               \
                        c1[j] = MK_MADD(a1, v, c1[j]);                                               \
                        c2[j] = MK_MADD(a2, v, c2[j]);                                               \
                        c3[j] = MK_MADD(a3, v, c3[j]);                                               \
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
                    s0 = MK_MADD(w0[kx], v, s0);
                    s1 = MK_MADD(w1[kx], v, s1);
                    s2 = MK_MADD(w2[kx], v, s2);
                    s3 = MK_MADD(w3[kx], v, s3);
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
