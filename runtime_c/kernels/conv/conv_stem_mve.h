/* Helium (Cortex-M55, arm_mve.h) path of aotc_conv_implicit_f32 for convs on few input channels:
 * stems at stride 2 or into narrow outputs (a KWS DS-CNN's 10 x 4 stem on 49 x 10 x 1, pads 5, 1,
 * 4, 2, into 25 x 5; MobileNets' 3 x 3 RGB stems at stride 2), and convs on up to 8 input channels
 * whose output channels its blocks take in fewer instructions than the implicit GEMM's runs
 * (igm_cheaper: LeNet's 1 -> 6 and 6 -> 16 5 x 5 convs, ResNet-8's 3 -> 16 stem). igm is called
 * first and returns 0 where it does not apply (-DAOTC_NO_MVE, other targets: their objects do not
 * change). Internal to runtime_c/kernels.
 *
 * Why: the implicit GEMM splits a conv's output positions into classes whose taps lie inside the
 * input for the same ranges of rows and columns; a tall kernel with large pads on a narrow
 * output (the DS-CNN's: 6 row classes x 3 column classes on 25 x 5 outputs) leaves classes of a
 * few positions, summed by the general tiles of 1 to 4 positions at 2.5 instructions per MAC
 * (issue 27); and its runs take 4 output channels a step, so 6 channels are a block of 4 and a
 * half-empty one.
 *
 * How: an output column's positions go in vectors of 4 down the column (the last vector ending
 * at the column's end), times a block of 4 to 6 output channels (a panel's channels split as
 * evenly as can be: 16 as 6 + 5 + 5) in as many vectors of sums. Every position of a column
 * takes the same tap columns, so the taps whose column is outside the input are skipped. A vector
 * whose tap rows all lie inside (igm_full*) walks its taps with the lanes' addresses in a vector
 * register, one gather with write-back a tap; per tap then one LDM of the block's weights from
 * W^T (MK_LDMR4..6), one add, and a VFMA by each weight as a scalar: 8 instructions for 20 MACs in
 * a block of 5 (issue 52; before, 4 channels and a row's taps in a loop of their own: 10 or more
 * for 16). A tap row outside for some lanes (igm_edge*: the first and last vectors) is a zero
 * lane of a predicated gather, which reads nothing there. The bias starts the sums; the clamp
 * and the scatter stores (a row apart) finish them. */
#ifndef AOTC_CONV_STEM_MVE_H
#define AOTC_CONV_STEM_MVE_H

#include "conv_internal.h"

#if MK_HELIUM
#include <arm_mve.h>

/* the most output channels a block sums at once: C sums, the gathered inputs and their addresses
 * fill the 8 vector registers */
#define IGM_C 6
/* the most input channels of a conv igm takes outside the stems: beyond, the runs' blocks amortise
 * more (ResNet-8's 16-channel 3 x 3 convs took 5 % more instructions here; Inception's 8 x 8, 2 %) */
#define IGM_MAX_IN 8

typedef struct {
    const float *x;               /* the image's input */
    float *y;                     /* the image's output, channel j0 */
    const float *w;               /* W^T's columns j0 .. j0 + C - 1: rows (c, ky, kx) PANEL apart */
    ptrdiff_t in_plane, plane;    /* input and output plane sizes */
    int32_t IH, IW, OH, OW, KH, KW, cg, sy, sx, dy, dx, pt, pl;
    int32_t width;                /* channels to store, 1 to C */
    int32_t clamp;                /* 1: clamp to [lo, hi] */
    float lo, hi;
    float b[IGM_C];               /* the channels' biases (0 past width) */
} igm_job;

/* One column's taps inside (tap columns [kx0, kx0 + nkx)), as a vector of 4 positions walks them:
 * its first tap's weights, and how far the lanes' addresses (bytes) and the weights (floats) move
 * after a tap row's last tap and after a channel's last tap row. */
typedef struct {
    const float *w;
    uint32_t rjump, cjump;
    ptrdiff_t wjump;
    int32_t kx0, nkx;
    uint32x4_t lanes; /* lane l's input offset, bytes: l tap rows' stride apart */
} igm_walk;

/* A block's C accumulators c<j> and weights u<j>: IGM_A<C>(X) applies X(j) for j < C, IGM_W<C>
 * loads the C weights of a tap (one LDM into core registers, for VFMA by a scalar). */
#define IGM_A4(X) X(0) X(1) X(2) X(3)
#define IGM_A5(X) IGM_A4(X) X(4)
#define IGM_A6(X) IGM_A5(X) X(5)
#define IGM_W4 MK_LDMR4
#define IGM_W5 MK_LDMR5
#define IGM_W6 MK_LDMR6
#define IGM_DECL(j) float32x4_t c##j = vdupq_n_f32(J->b[j]); float u##j;
#define IGM_FMA(j) c##j = vfmaq_n_f32(c##j, t_, u##j);
#define IGM_CLAMP(j) c##j = vminnmq_f32(vmaxnmq_f32(c##j, lo), hi);
/* (blocks of 5 and 6 are whole; a block of 4 stores its first width) */
#define IGM_PUT(j) if ((j) < 4 || (j) < J->width) vstrwq_scatter_shifted_offset_f32(yq + (j) * J->plane, at, c##j);
#define IGM_PUT4(j) if ((j) == 0 || (j) < J->width) vstrwq_scatter_shifted_offset_f32(yq + (j) * J->plane, at, c##j);

/* The 4 lanes' floats at *qa + 4 bytes, *qa moved there (VLDRW's gather with write-back: gcc 12's
 * vldrwq_gather_base_wb_f32 does not compile, its immediate refused). Reads x only, which no
 * kernel here writes. */
static MK_INLINE float32x4_t igm_gather_next(uint32x4_t *qa) {
    float32x4_t r;
    __asm__ volatile("vldrw.u32 %q0, [%q1, #4]!" : "=&w"(r), "+w"(*qa));
    return r;
}
/* c<j> += a tap's 4 inputs (LOAD) times its C weights at wr */
#define IGM_TAP(A, W, LOAD)                                                                          \
    {                                                                                                \
        const float32x4_t t_ = LOAD;                                                                 \
        W(wr, u)                                                                                     \
        A(IGM_FMA)                                                                                   \
        __asm__ volatile(""); /* the next tap's gather after these (gcc hoisted them, and spilled) */ \
    }
/* the finished sums: clamped, stored to the 4 positions from yq down the column */
#define IGM_FINISH(A, PUT)                                                                           \
    if (J->clamp) {                                                                                  \
        const float32x4_t lo = vdupq_n_f32(J->lo), hi = vdupq_n_f32(J->hi);                          \
        A(IGM_CLAMP)                                                                                 \
    }                                                                                                \
    {                                                                                                \
        const uint32x4_t at = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)J->OW); /* a row apart */   \
        A(PUT)                                                                                       \
    }

/* A vector of 4 positions whose tap rows all lie inside, at dilation 1: lane 0's first tap inside
 * at byte address a + 4. The lanes' addresses step along a tap row by the gather's own write-back
 * (no other instruction), a row's 3 or 5 taps unrolled (no loop step a tap). */
#define IGM_FULL(NAME, A, W, PUT)                                                                    \
    MK_NOINLINE static void NAME(const igm_job *J, const igm_walk *K, uint32_t a, float *yq) {       \
        const float *wr = K->w;                                                                      \
        const uint32_t rjump = K->rjump, cjump = K->cjump;                                           \
        const ptrdiff_t wjump = K->wjump;                                                            \
        uint32x4_t qa = vaddq_n_u32(K->lanes, a);                                                    \
        int32_t c, ky, k;                                                                            \
        A(IGM_DECL)                                                                                  \
        if (K->nkx == 3) {                                                                           \
            for (c = J->cg; c > 0; --c, qa = vaddq_n_u32(qa, cjump))                                 \
                for (ky = J->KH; ky > 0; --ky, wr += wjump, qa = vaddq_n_u32(qa, rjump)) {           \
                    IGM_TAP(A, W, igm_gather_next(&qa)) wr += PANEL;                                 \
                    IGM_TAP(A, W, igm_gather_next(&qa)) wr += PANEL;                                 \
                    IGM_TAP(A, W, igm_gather_next(&qa)) wr += PANEL;                                 \
                }                                                                                    \
        } else if (K->nkx == 5) { /* (5 x 5 kernels: LeNet's) */                                     \
            for (c = J->cg; c > 0; --c, qa = vaddq_n_u32(qa, cjump))                                 \
                for (ky = J->KH; ky > 0; --ky, wr += wjump, qa = vaddq_n_u32(qa, rjump)) {           \
                    IGM_TAP(A, W, igm_gather_next(&qa)) wr += PANEL;                                 \
                    IGM_TAP(A, W, igm_gather_next(&qa)) wr += PANEL;                                 \
                    IGM_TAP(A, W, igm_gather_next(&qa)) wr += PANEL;                                 \
                    IGM_TAP(A, W, igm_gather_next(&qa)) wr += PANEL;                                 \
                    IGM_TAP(A, W, igm_gather_next(&qa)) wr += PANEL;                                 \
                }                                                                                    \
        } else {                                                                                     \
            for (c = J->cg; c > 0; --c, qa = vaddq_n_u32(qa, cjump))                                 \
                for (ky = J->KH; ky > 0; --ky, wr += wjump, qa = vaddq_n_u32(qa, rjump))             \
                    for (k = K->nkx; k > 0; --k, wr += PANEL) IGM_TAP(A, W, igm_gather_next(&qa))    \
        }                                                                                            \
        IGM_FINISH(A, PUT)                                                                           \
    }
/* Any other vector (a tap row outside for some lanes, or a dilation): lane 0's tap row 0 is input
 * row iy0; per tap row, the lanes whose row is inside, by a predicated gather (whose lanes off
 * read nothing) from the lanes' offsets off. */
#define IGM_EDGE(NAME, A, W, PUT)                                                                    \
    MK_NOINLINE static void NAME(const igm_job *J, const igm_walk *K, const float *x0, int32_t iy0, float *yq) { \
        const int32_t IH = J->IH, IW = J->IW, KH = J->KH, KW = J->KW, dy = J->dy, dx = J->dx;       \
        const uint32x4_t off = vshrq_n_u32(K->lanes, 2);                                             \
        /* each lane's input row of tap row 0 */                                                     \
        const int32x4_t r0 = vaddq_n_s32(vreinterpretq_s32_u32(vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)J->sy)), iy0); \
        int32_t c, ky, k;                                                                            \
        A(IGM_DECL)                                                                                  \
        for (c = 0; c < J->cg; ++c) {                                                                \
            const float *xc = x0 + c * J->in_plane, *wc = J->w + ((ptrdiff_t)c * KH * KW + K->kx0) * PANEL; \
            int32x4_t r = r0;                                                                        \
            for (ky = 0; ky < KH; ++ky, xc += (ptrdiff_t)dy * IW, wc += (ptrdiff_t)KW * PANEL, r = vaddq_n_s32(r, dy)) { \
                /* the lanes whose tap row is inside */                                              \
                const mve_pred16_t m = vcmpltq_m_n_s32(r, IH, vcmpgeq_n_s32(r, 0));                  \
                const float *wr = wc, *xr = xc;                                                      \
                if (m == 0) continue;                                                                \
                for (k = K->nkx; k > 0; --k, wr += PANEL, xr += dx)                                  \
                    IGM_TAP(A, W, vldrwq_gather_shifted_offset_z_f32(xr, off, m))                    \
            }                                                                                        \
        }                                                                                            \
        IGM_FINISH(A, PUT)                                                                           \
    }
IGM_FULL(igm_full4, IGM_A4, IGM_W4, IGM_PUT4)
IGM_FULL(igm_full5, IGM_A5, IGM_W5, IGM_PUT)
IGM_FULL(igm_full6, IGM_A6, IGM_W6, IGM_PUT)
IGM_EDGE(igm_edge4, IGM_A4, IGM_W4, IGM_PUT4)
IGM_EDGE(igm_edge5, IGM_A5, IGM_W5, IGM_PUT)
IGM_EDGE(igm_edge6, IGM_A6, IGM_W6, IGM_PUT)
#undef IGM_FULL
#undef IGM_EDGE
#undef IGM_FINISH
#undef IGM_TAP

typedef void (*igm_full_fn)(const igm_job *, const igm_walk *, uint32_t, float *);
typedef void (*igm_edge_fn)(const igm_job *, const igm_walk *, const float *, int32_t, float *);

/* Output column ox of the block (full, edge: its kernels): its vectors of 4 positions down the
 * column, the last ending at the column's end. */
MK_NOINLINE static void igm_column(const igm_job *J, int32_t ox, igm_full_fn full_k, igm_edge_fn edge_k) {
    const int32_t IH = J->IH, IW = J->IW, OH = J->OH, OW = J->OW, KH = J->KH, KW = J->KW, dy = J->dy, dx = J->dx;
    const int32_t ix0 = J->sx * ox - J->pl; /* tap column 0's input column */
    /* the tap columns inside: [kx0, kx1) */
    const int32_t kx0 = ix0 < 0 ? (-ix0 + dx - 1) / dx : 0;
    const int32_t kx1 = IW - 1 - ix0 < 0 ? 0 : min_i32(KW, (IW - 1 - ix0) / dx + 1);
    igm_walk K;
    int32_t oy0 = 0;
    K.kx0 = kx0, K.nkx = kx1 - kx0;
    K.w = J->w + (ptrdiff_t)kx0 * PANEL;
    K.rjump = (uint32_t)(dy * IW - K.nkx) * 4u;
    K.cjump = (uint32_t)(J->in_plane - (ptrdiff_t)KH * dy * IW) * 4u;
    K.wjump = (ptrdiff_t)(KW - K.nkx) * PANEL;
    K.lanes = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)(J->sy * IW) * 4u);
    for (;;) {
        const int32_t oy = min_i32(oy0, OH - 4), iy0 = J->sy * oy - J->pt; /* lane 0's tap row 0 */
        const float *x0 = J->x + (ptrdiff_t)iy0 * IW + ix0 + kx0 * dx;  /* lane 0's first tap inside */
        float *yq = J->y + (ptrdiff_t)oy * OW + ox;
        if (K.nkx > 0 && dx == 1 && iy0 >= 0 && iy0 + 3 * J->sy + (KH - 1) * dy < IH) /* every lane's tap rows inside */
            full_k(J, &K, (uint32_t)(uintptr_t)x0 - 4u, yq);
        else if (K.nkx > 0)
            edge_k(J, &K, x0, iy0, yq);
        else
            edge_k(J, &K, J->x, IH, yq); /* no tap inside: the bias alone (no row inside either) */
        if (oy + 4 >= OH) break;
        oy0 += 4;
    }
}

/* Whether igm's blocks take fewer instructions per output position and tap than the implicit
 * GEMM's runs (4 channels x 6 positions, 10 a step): a block of C channels 3 + C for 4 positions
 * (a gather, an LDM, an add, C VFMAs). In twelfths: 3 (3 + C) a block, 20 a block of 4 of the runs. */
static int igm_cheaper(int32_t out_c) {
    int32_t p0, own = 0;
    for (p0 = 0; p0 < out_c; p0 += PANEL) {
        const int32_t m = min_i32(PANEL, out_c - p0), blocks = (m + IGM_C - 1) / IGM_C;
        own += 3 * (3 * blocks + m);
    }
    return own < 20 * ((out_c + 3) / 4);
}

/* The conv, if it is one igm takes (2-D, one group, NCHW in and out, no residual, no LeakyRelu,
 * at most 4 input channels, at least 4 output rows, and stride 2 or fewer than 8 output columns:
 * at stride 1 the implicit GEMM's runs along the rows read their inputs by LDM); 1 when done.
 * wt: the implicit GEMM's packed W^T. MobileNet-v2 0.35's 3 -> 8 stem at 96 x 96: 838 k
 * instructions there (runs of 6 and their set-up), 653 k here. */
static int igm(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
               float *y) {
    igm_job J;
    int32_t n, p0, j0, j, ox;
    /* where the runs do badly (stride 2, narrow rows), or where igm's blocks are cheaper */
    const int stem = p->in_c <= 4 && (p->strides[2] >= 2 || p->out_size[2] < 8);
    if (p->group != 1 || p->in_nhwc || p->out_nhwc || res != NULL || p->act == AOTC_ACT_LEAKY ||
        p->in_size[0] != 1 || p->kernel[0] != 1 || p->out_size[1] < 4)
        return 0;
    if (!stem && (p->in_c > IGM_MAX_IN || p->kernel[1] * p->kernel[2] == 1 || !igm_cheaper(p->out_c))) return 0;
    J.IH = p->in_size[1], J.IW = p->in_size[2], J.OH = p->out_size[1], J.OW = p->out_size[2];
    J.KH = p->kernel[1], J.KW = p->kernel[2], J.cg = p->in_c;
    J.sy = p->strides[1], J.sx = p->strides[2], J.dy = p->dilations[1], J.dx = p->dilations[2];
    J.pt = p->pads[1], J.pl = p->pads[2];
    J.in_plane = (ptrdiff_t)J.IH * J.IW, J.plane = (ptrdiff_t)J.OH * J.OW;
    J.clamp = p->act == AOTC_ACT_CLAMP, J.lo = p->act_lo, J.hi = p->act_hi;
    for (n = 0; n < p->batch; ++n) {
        for (p0 = 0; p0 < p->out_c; p0 += PANEL) { /* a panel's channels in blocks of at most IGM_C, as even as can be */
            const int32_t m = min_i32(PANEL, p->out_c - p0), blocks = (m + IGM_C - 1) / IGM_C;
            int32_t blk;
            for (blk = 0, j0 = p0; blk < blocks; ++blk, j0 += J.width) {
                const ptrdiff_t k_rows = (ptrdiff_t)J.cg * J.KH * J.KW;
                J.width = m / blocks + (blk < m % blocks);
                for (j = 0; j < IGM_C; ++j) J.b[j] = bias != NULL && j < J.width ? bias[j0 + j] : 0.0f;
                J.x = x + (ptrdiff_t)n * p->in_c * J.in_plane;
                J.y = y + ((ptrdiff_t)n * p->out_c + j0) * J.plane;
                J.w = wt + (ptrdiff_t)(j0 / PANEL) * k_rows * PANEL + j0 % PANEL;
                for (ox = 0; ox < J.OW; ++ox)
                    igm_column(&J, ox, J.width == 6 ? igm_full6 : J.width == 5 ? igm_full5 : igm_full4,
                               J.width == 6 ? igm_edge6 : J.width == 5 ? igm_edge5 : igm_edge4);
            }
        }
    }
    return 1;
}
#else
#define igm(p, x, wt, bias, res, y) 0
#endif

#endif /* AOTC_CONV_STEM_MVE_H */
