/* Helium (Cortex-M55, arm_mve.h) path of aotc_conv_implicit_f32 for convs on few input channels
 * at stride 2 or into narrow outputs: a KWS DS-CNN's 10 x 4 stem on 49 x 10 x 1 (pads 5, 1, 4, 2)
 * into 25 x 5, MobileNets' 3 x 3 RGB stems at stride 2. igm is called first and returns 0 where
 * it does not apply (-DAOTC_NO_MVE, other targets: their objects do not change). Internal to
 * runtime_c/kernels.
 *
 * Why: the implicit GEMM splits a conv's output positions into classes whose taps lie inside the
 * input for the same ranges of rows and columns; a tall kernel with large pads on a narrow
 * output (the DS-CNN's: 6 row classes x 3 column classes on 25 x 5 outputs) leaves classes of a
 * few positions, summed by the general tiles of 1 to 4 positions at 2.5 instructions per MAC
 * (issue 27).
 *
 * How: an output column's positions go in vectors of 4 down the column (the last vector ending
 * at the column's end), times 4 output channels in 4 vectors of sums. Every position of a column
 * takes the same tap columns, so the taps whose column is outside the input are skipped; a tap
 * row outside for some lanes of a vector (the first and last vectors) is a zero lane of a
 * predicated gather, which reads nothing there. Per tap: one gather of the 4 positions' inputs
 * (a row step apart), one LDM of the 4 channels' weights from W^T (MK_LDMR4) and 4 VFMAs by them
 * as scalars. The bias starts the sums; the clamp and 4 scatter stores (a row apart) finish them. */
#ifndef AOTC_CONV_STEM_MVE_H
#define AOTC_CONV_STEM_MVE_H

#include "conv_internal.h"

#if MK_HELIUM
#include <arm_mve.h>

typedef struct {
    const float *x;               /* the image's input */
    float *y;                     /* the image's output, channel j0 */
    const float *w;               /* W^T's columns j0 .. j0 + 3: rows (c, ky, kx) PANEL apart */
    ptrdiff_t in_plane, plane;    /* input and output plane sizes */
    int32_t IH, IW, OH, OW, KH, KW, cg, sy, sx, dy, dx, pt, pl;
    int32_t width;                /* channels to store, 1 to 4 */
    int32_t clamp;                /* 1: clamp to [lo, hi] */
    float lo, hi;
    float b[4];                   /* the channels' biases (0 past width) */
} igm_job;

/* c<j> += the 4 lanes' inputs (LOAD: a gather from xr) * the weights at wr */
#define IGM_TAP(LOAD)                                                                                \
    {                                                                                                \
        const float32x4_t t_ = LOAD;                                                                 \
        float u0, u1, u2, u3;                                                                        \
        MK_LDMR4(wr, u)                                                                              \
        c0 = vfmaq_n_f32(c0, t_, u0), c1 = vfmaq_n_f32(c1, t_, u1);                                  \
        c2 = vfmaq_n_f32(c2, t_, u2), c3 = vfmaq_n_f32(c3, t_, u3);                                  \
    }

/* Output column ox of the block: its vectors of 4 positions down the column. */
MK_NOINLINE static void igm_column(const igm_job *J, int32_t ox) {
    const int32_t IH = J->IH, IW = J->IW, OH = J->OH, OW = J->OW, KH = J->KH, KW = J->KW, dy = J->dy, dx = J->dx;
    const int32_t ix0 = J->sx * ox - J->pl; /* tap column 0's input column */
    /* the tap columns inside: [kx0, kx1) */
    const int32_t kx0 = ix0 < 0 ? (-ix0 + dx - 1) / dx : 0;
    const int32_t kx1 = IW - 1 - ix0 < 0 ? 0 : min_i32(KW, (IW - 1 - ix0) / dx + 1);
    const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)(J->sy * IW)); /* lanes: a row step apart */
    int32_t oy0 = 0;
    for (;;) {
        const int32_t oy = min_i32(oy0, OH - 4), iy0 = J->sy * oy - J->pt; /* lane 0's tap row 0 */
        const int full = iy0 >= 0 && iy0 + 3 * J->sy + (KH - 1) * dy < IH; /* every lane's tap rows inside */
        float32x4_t c0 = vdupq_n_f32(J->b[0]), c1 = vdupq_n_f32(J->b[1]);
        float32x4_t c2 = vdupq_n_f32(J->b[2]), c3 = vdupq_n_f32(J->b[3]);
        int32_t c, ky, kx;
        for (c = 0; c < J->cg && kx0 < kx1; ++c) {
            /* tap row ky's first tap inside, input and weights: one step a row */
            const float *xc = J->x + c * J->in_plane + (ptrdiff_t)iy0 * IW + ix0 + kx0 * dx;
            const float *wc = J->w + ((ptrdiff_t)c * KH * KW + kx0) * PANEL;
            if (full) { /* a tap column at a time down its KH rows (the longer loop, on tall kernels) */
                const ptrdiff_t xs = (ptrdiff_t)dy * IW, ws = (ptrdiff_t)KW * PANEL;
                for (kx = kx0; kx < kx1; ++kx, xc += dx, wc += PANEL) {
                    const float *xr = xc, *wr = wc;
                    for (ky = 0; ky < KH; ++ky, xr += xs, wr += ws) IGM_TAP(vldrwq_gather_shifted_offset_f32(xr, off))
                }
                continue;
            }
            for (ky = 0; ky < KH; ++ky, xc += (ptrdiff_t)dy * IW, wc += (ptrdiff_t)KW * PANEL) {
                /* a tap row at a time, predicated: the lanes whose tap row is inside */
                const float *xr = xc, *wr = wc;
                uint32_t m = 0;
                int32_t l;
                mve_pred16_t pr;
                for (l = 0; l < 4; ++l) {
                    const int32_t r = iy0 + l * J->sy + ky * dy;
                    if (r >= 0 && r < IH) m |= 0xFu << (4 * l);
                }
                if (m == 0) continue;
                pr = (mve_pred16_t)m;
                for (kx = kx0; kx < kx1; ++kx, xr += dx, wr += PANEL) IGM_TAP(vldrwq_gather_shifted_offset_z_f32(xr, off, pr))
            }
        }
        if (J->clamp) {
            const float32x4_t lo = vdupq_n_f32(J->lo), hi = vdupq_n_f32(J->hi);
            c0 = vminnmq_f32(vmaxnmq_f32(c0, lo), hi), c1 = vminnmq_f32(vmaxnmq_f32(c1, lo), hi);
            c2 = vminnmq_f32(vmaxnmq_f32(c2, lo), hi), c3 = vminnmq_f32(vmaxnmq_f32(c3, lo), hi);
        }
        {
            const uint32x4_t at = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)OW); /* lanes: a row apart */
            float *yq = J->y + (ptrdiff_t)oy * OW + ox;
            vstrwq_scatter_shifted_offset_f32(yq, at, c0);
            if (J->width > 1) vstrwq_scatter_shifted_offset_f32(yq + J->plane, at, c1);
            if (J->width > 2) vstrwq_scatter_shifted_offset_f32(yq + 2 * J->plane, at, c2);
            if (J->width > 3) vstrwq_scatter_shifted_offset_f32(yq + 3 * J->plane, at, c3);
        }
        if (oy + 4 >= OH) break;
        oy0 += 4;
    }
}
#undef IGM_TAP

/* The conv, if it is one igm takes (2-D, one group, NCHW in and out, no residual, no LeakyRelu,
 * at most 4 input channels, at least 4 output rows, and stride 2 or fewer than 8 output columns:
 * at stride 1 the implicit GEMM's runs along the rows read their inputs by LDM); 1 when done.
 * wt: the implicit GEMM's packed W^T. MobileNet-v2 0.35's 3 -> 8 stem at 96 x 96: 838 k
 * instructions there (runs of 6 and their set-up), 653 k here. */
static int igm(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
               float *y) {
    igm_job J;
    int32_t n, j0, j, ox;
    if (p->group != 1 || p->in_nhwc || p->out_nhwc || res != NULL || p->act == AOTC_ACT_LEAKY || p->in_c > 4 ||
        p->in_size[0] != 1 || p->kernel[0] != 1 || p->out_size[1] < 4 || (p->strides[2] < 2 && p->out_size[2] >= 8))
        return 0;
    J.IH = p->in_size[1], J.IW = p->in_size[2], J.OH = p->out_size[1], J.OW = p->out_size[2];
    J.KH = p->kernel[1], J.KW = p->kernel[2], J.cg = p->in_c;
    J.sy = p->strides[1], J.sx = p->strides[2], J.dy = p->dilations[1], J.dx = p->dilations[2];
    J.pt = p->pads[1], J.pl = p->pads[2];
    J.in_plane = (ptrdiff_t)J.IH * J.IW, J.plane = (ptrdiff_t)J.OH * J.OW;
    J.clamp = p->act == AOTC_ACT_CLAMP, J.lo = p->act_lo, J.hi = p->act_hi;
    for (n = 0; n < p->batch; ++n) {
        for (j0 = 0; j0 < p->out_c; j0 += 4) {
            const ptrdiff_t k_rows = (ptrdiff_t)J.cg * J.KH * J.KW;
            J.width = min_i32(4, p->out_c - j0);
            for (j = 0; j < 4; ++j) J.b[j] = bias != NULL && j < J.width ? bias[j0 + j] : 0.0f;
            J.x = x + (ptrdiff_t)n * p->in_c * J.in_plane;
            J.y = y + ((ptrdiff_t)n * p->out_c + j0) * J.plane;
            J.w = wt + (ptrdiff_t)(j0 / PANEL) * k_rows * PANEL + j0 % PANEL;
            for (ox = 0; ox < J.OW; ++ox) igm_column(&J, ox);
        }
    }
    return 1;
}
#else
#define igm(p, x, wt, bias, res, y) 0
#endif

#endif /* AOTC_CONV_STEM_MVE_H */
