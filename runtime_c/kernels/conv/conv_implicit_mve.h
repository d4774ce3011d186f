/* The implicit GEMM's (conv_implicit.c) runs with Helium (a Cortex-M55, arm_mve.h): runs of 6
 * positions x 4 channels, a 1 x 1 conv's whole planes or bands in one call, and runs down a
 * column class. The contract is the portable kernel's: no scratch, the same packed W^T, every
 * conv it takes; only the instructions differ. conv_implicit_scalar.h defines the same names for
 * cores without vector floats; ig_items_body calls them where IG_MCU_RUNS. Internal to
 * conv_implicit.c: included once, after the general tiles. */
#ifndef AOTC_CONV_IMPLICIT_MVE_H
#define AOTC_CONV_IMPLICIT_MVE_H

#if MK_HELIUM
#include <arm_mve.h>
/* Helium's runs: 6 positions x 4 output channels in 6 vectors of sums, per step 6 patch elements
 * (scalars: at SX 1 one LDM, MK_LDMR6) times one vector of 4 weights (one load), a VFMA by a
 * scalar each (no broadcast). W^T's panels are 16 wide and zero-padded, so a narrow block (2 channels) reads 4
 * too; its stores are predicated. About 0.7 instructions per MAC on the M55. */
#define IG_RUN 6
typedef struct {
    float *y;
    ptrdiff_t plane;
    int clamp;
    float lo, hi;
    int32_t width; /* output channels to store (the vectors' first lanes) */
} ig_fin;
#define IGV_MAC(i) a##i = vfmaq_n_f32(a##i, u, xq[(i) * SX]);
#define IGV_MAC1(i) a##i = vfmaq_n_f32(a##i, u, v##i); /* at SX 1: the six loaded at once (MK_LDMR6) */
#define IGV_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define IGV_TO_T(i) vst1q_f32(t + (i) * IG_NR, a##i);
#define IGV_CLAMP(i) a##i = vminnmq_f32(vmaxnmq_f32(a##i, lo), hi);
#define IGV_PUT(i) vstrwq_scatter_shifted_offset_p_f32(y + (i), off, a##i, keep);
#define IGV_PUTB(i) vstrwq_scatter_base_f32(at, 4 * (i), a##i);
#define IGV_PUTBP(i) vstrwq_scatter_base_p_f32(at, 4 * (i), a##i, keep);
#define IG_RUN_KERNEL(NAME, SX_)                                                                     \
    MK_NOINLINE static void NAME(const float *AOTC_RESTRICT x0, const ig_loops *L, const float *AOTC_RESTRICT wp, \
                                 const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t, const ig_fin *f) { \
        enum { SX = SX_ };                                                                           \
        const float32x4_t bias = vld1q_f32(b0);                                                      \
        float32x4_t a0 = bias, a1 = bias, a2 = bias, a3 = bias, a4 = bias, a5 = bias;                \
        const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];                                              \
        int32_t a, b;                                                                                \
        for (a = 0; a < L->n[0]; ++a) {                                                              \
            for (b = 0; b < L->n[1]; ++b) {                                                          \
                const float *AOTC_RESTRICT xq = x0 + a * L->xs[0] + b * L->xs[1];                    \
                const float *w = wp + a * L->ws[0] + b * L->ws[1];                                   \
                int32_t n = L->n[2];                                                                 \
                for (; n > 0; --n, w += ws2, xq += xs2) {                                            \
                    const float32x4_t u = vld1q_f32(w);                                              \
                    if (SX == 1) {                                                                   \
                        float v0, v1, v2, v3, v4, v5;                                                \
                        MK_LDMR6(xq, v)                                                              \
                        IGV_ROWS(IGV_MAC1)                                                           \
                    } else {                                                                         \
                        IGV_ROWS(IGV_MAC)                                                            \
                    }                                                                                \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
        if (f == NULL) {                                                                             \
            IGV_ROWS(IGV_TO_T)                                                                       \
            return;                                                                                  \
        }                                                                                            \
        if (f->clamp) {                                                                              \
            const float32x4_t lo = vdupq_n_f32(f->lo), hi = vdupq_n_f32(f->hi);                                                      \
            IGV_ROWS(IGV_CLAMP)                                                                      \
        }                                                                                            \
        {                                                                                            \
            float *y = f->y;                                                                         \
            const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)f->plane);              \
            const mve_pred16_t keep = vctp32q((uint32_t)f->width);                                   \
            IGV_ROWS(IGV_PUT)                                                                        \
        }                                                                                            \
    }
IG_RUN_KERNEL(ig_run1, 1)
IG_RUN_KERNEL(ig_run2, 2)
#undef IG_RUN_KERNEL
#define ig_run1_narrow ig_run1
#define ig_run2_narrow ig_run2
/* A 1 x 1 conv's band of rows (no pads, stride 1: ig_items_body's flat loop), positions [0, count)
 * (at least IG_RUN) of n input channels in_plane floats apart from xq, W^T's rows PANEL apart from
 * w, finished by f, in runs of R (6 or 7) positions, the last ending at count (computing a few
 * outputs again). One call per band, the runs' loop here: a call per run cost as much as 8 input
 * channels' sums (issue 27: MobileNet-v2's 1 x 1 convs of 8 channels). A run's R x 4 sums go to
 * Y's 4 channel planes by scatter stores, each position at an immediate offset from one vector of
 * the planes' addresses. Runs of 7 take all 8 vector registers (7 sums and the weights): 11
 * instructions a step of 28 MACs against 10 for 24, and fewer runs to finish; ig_pw takes them
 * where they need fewer instructions (large planes, not 6 x 6 or 3 x 3). */
#define IGV_ROWS7(X) IGV_ROWS(X) X(6)
#define IGV_MAX(i) a##i = vmaxnmq_f32(a##i, lo);
#define IGV_MIN(i) a##i = vminnmq_f32(a##i, hi);
#define IG_PW_RUNS(NAME, R, ROWS, LDM)                                                               \
    MK_NOINLINE static void NAME(const float *AOTC_RESTRICT xq, ptrdiff_t in_plane, int32_t n,       \
                                 const float *AOTC_RESTRICT w, const float *AOTC_RESTRICT b0,       \
                                 const ig_fin *f, ptrdiff_t count) {                                \
        float *const y = f->y;                                                                       \
        const uint32_t plane = (uint32_t)f->plane * (uint32_t)sizeof(float); /* (bytes) */          \
        const int clamp = f->clamp, full = f->width >= 4;                                            \
        const float lo_ = f->lo, hi_ = f->hi;                                                        \
        const mve_pred16_t keep = vctp32q((uint32_t)f->width);                                       \
        ptrdiff_t q = 0;                                                                             \
        for (;;) {                                                                                   \
            const float *AOTC_RESTRICT xp = xq + q, *wp = w;                                         \
            const float32x4_t bias = vld1q_f32(b0);                                                  \
            float32x4_t a0 = bias, a1 = bias, a2 = bias, a3 = bias, a4 = bias, a5 = bias, a6 = bias; \
            int32_t k;                                                                               \
            (void)a6;                                                                                \
            for (k = n; k > 0; --k, wp += PANEL, xp += in_plane) {                                   \
                const float32x4_t u = vld1q_f32(wp);                                                 \
                float v0, v1, v2, v3, v4, v5, v6;                                                    \
                (void)v6;                                                                            \
                LDM(xp, v)                                                                           \
                ROWS(IGV_MAC1)                                                                       \
            }                                                                                        \
            if (clamp) { /* (the bounds one after the other: 7 sums and both would not fit) */       \
                {                                                                                    \
                    const float32x4_t lo = vdupq_n_f32(lo_);                                         \
                    ROWS(IGV_MAX)                                                                    \
                }                                                                                    \
                {                                                                                    \
                    const float32x4_t hi = vdupq_n_f32(hi_);                                         \
                    ROWS(IGV_MIN)                                                                    \
                }                                                                                    \
            }                                                                                        \
            { /* lane j: channel j's plane, at position q */                                         \
                const uint32x4_t at = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0, 1), plane),            \
                                                  (uint32_t)(uintptr_t)(y + q));                     \
                if (full) {                                                                          \
                    ROWS(IGV_PUTB)                                                                   \
                } else {                                                                             \
                    ROWS(IGV_PUTBP)                                                                  \
                }                                                                                    \
            }                                                                                        \
            if (q + (R) >= count) break;                                                             \
            q = q + 2 * (R) <= count ? q + (R) : count - (R);                                        \
        }                                                                                            \
    }
IG_PW_RUNS(ig_pw6, 6, IGV_ROWS, MK_LDMR6)
IG_PW_RUNS(ig_pw7, 7, IGV_ROWS7, MK_LDMR7)
#undef IG_PW_RUNS
MK_NOINLINE static void ig_pw(const float *AOTC_RESTRICT xq, ptrdiff_t in_plane, int32_t n,
                              const float *AOTC_RESTRICT w, const float *AOTC_RESTRICT b0, const ig_fin *f,
                              ptrdiff_t count) {
    /* runs of 7 where their steps (11 instructions) add up to fewer than runs of 6 (10) */
    if (count >= 7 && (count + 6) / 7 * 11 < (count + 5) / 6 * 10) {
        ig_pw7(xq, in_plane, n, w, b0, f, count);
    } else {
        ig_pw6(xq, in_plane, n, w, b0, f, count);
    }
}
#define ig_pw_narrow ig_pw
/* Runs down a column class (the positions of a conv's left or right edge, a row apart: their
 * inputs sv floats apart), sums to t: against the general tiles of 4 positions, no pointer per
 * position (issue 27: ResNet-8's 8 x 8 convs have 28 edge positions for 36 inside; on the M55
 * at -O2 10.09 -> 9.58 M instructions). (On the M4, without a VLDM for the patch elements,
 * they took more than the tiles.) */
#define IGV_MACV(i) a##i = vfmaq_n_f32(a##i, u, xq[(i) * sv]);
MK_NOINLINE static void ig_runv(const float *AOTC_RESTRICT x0, const ig_loops *L, const float *AOTC_RESTRICT wp,
                                const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t, ptrdiff_t sv) {
    const float32x4_t bias = vld1q_f32(b0);
    float32x4_t a0 = bias, a1 = bias, a2 = bias, a3 = bias, a4 = bias, a5 = bias;
    const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];
    int32_t a, b;
    for (a = 0; a < L->n[0]; ++a) {
        for (b = 0; b < L->n[1]; ++b) {
            const float *AOTC_RESTRICT xq = x0 + a * L->xs[0] + b * L->xs[1];
            const float *w = wp + a * L->ws[0] + b * L->ws[1];
            int32_t n = L->n[2];
            for (; n > 0; --n, w += ws2, xq += xs2) {
                const float32x4_t u = vld1q_f32(w);
                IGV_ROWS(IGV_MACV)
            }
        }
    }
    IGV_ROWS(IGV_TO_T)
}
#undef IGV_MACV
#define ig_runv_narrow ig_runv
typedef void (*ig_run_kernel)(const float *, const ig_loops *, const float *, const float *, float *,
                              const ig_fin *);

/* Whether a block is finished in the run kernels: any width (their stores are predicated). */
#define IG_FIN_WIDTH(width, narrow) 1
/* the output channels the run kernels store: the first `width` lanes */
static MK_INLINE void ig_fin_width(ig_fin *f, int32_t width) { f->width = width; }

/* A 1 x 1 conv's band of rows [row0, row1) of OW positions (no pads, stride 1): one run of
 * positions, input and output alike, so one ig_pw call takes it, finished by f into y (the
 * block's channel 0 plane); the general loop costs 140 instructions a run of 20 MACs on the M4. */
static MK_INLINE void ig_band_pw(const float *xg, ptrdiff_t in_plane, int32_t cg, const float *wj, const float *b0,
                                 ig_fin *f, float *y, int32_t width, int narrow, int32_t row0, int32_t row1,
                                 int32_t OW) {
    (void)narrow;
    f->width = width;
    f->y = y + (ptrdiff_t)row0 * OW;
    ig_pw(xg + (ptrdiff_t)row0 * OW, in_plane, cg, wj, b0, f, (ptrdiff_t)(row1 - row0) * OW);
}

/* A 1 x 1 conv (no pads, stride 1, NCHW in and out, one band per block) whose runs f finishes
 * (no LeakyRelu), ig_items_body's geometry (cg input and mg output channels per group, planes of
 * in_plane and out_plane, W^T's k_rows and group_w): each item of [begin, end) (a block of 4 output
 * channels) is one ig_pw call over the whole plane, without ig_items_body's general loop and its
 * set-up (issue 27: 470 k of MobileNet-v2's 6.4 M instructions went to it, blocks of its 1 x 1
 * convs on 6 x 6 and 3 x 3 planes). */
static MK_INLINE void ig_plane_pw_mve(const ig_job *J, int32_t begin, int32_t end, ig_fin *f, int32_t cg, int32_t mg,
                                      ptrdiff_t in_plane, ptrdiff_t out_plane, ptrdiff_t k_rows, ptrdiff_t group_w) {
    const aotc_conv_params *p = J->p;
    const float *x = J->x, *wt = J->wt, *bias = J->bias, *res = J->res;
    float *y = J->y;
    int32_t item;
    for (item = begin; item < end; ++item) {
        const int32_t n = item / J->blocks / p->group, g = item / J->blocks % p->group, j0 = item % J->blocks * IG_NR;
        const float *xg = x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + j0) * out_plane;
        const float *wj = wt + g * group_w + (ptrdiff_t)(j0 / PANEL) * k_rows * PANEL + j0 % PANEL;
        float b0[IG_NR];
        int32_t j;
        f->width = min_i32(IG_NR, mg - j0);
        for (j = 0; j < IG_NR; ++j) b0[j] = bias != NULL && j < f->width ? bias[g * mg + j0 + j] : 0.0f;
        f->y = y + yo;
        ig_pw(xg, in_plane, cg, wj, b0, f, out_plane);
        if (res != NULL) { /* the block's planes: + the residual, then the activation */
            const ptrdiff_t nb = (ptrdiff_t)f->width * out_plane;
            float *AOTC_RESTRICT yb = y + yo;
            const float *AOTC_RESTRICT rb = res + yo;
            ptrdiff_t e;
            for (e = 0; e < nb; ++e) yb[e] += rb[e];
            aotc_activate_f32(yb, nb, p->act, p->act_lo, p->act_hi, p->act_alpha);
        }
    }
}

/* A column class (one output column ca, count >= IG_RUN positions from row c->ra, inputs a row
 * apart): the run down it from position *r, or the one ending at its end when fewer are left
 * (computing a few outputs again), summed by ig_runv and stored by o; *r moves past it. */
static MK_INLINE void ig_column_mve(const ig_class *c, const ig_loops *L, const float *xg, const float *wc,
                                    const float *b0, int narrow, const ig_out *o, int32_t *r) {
    const int32_t b_ = c->count - *r < IG_RUN ? c->count - IG_RUN : *r, by = c->ra + b_;
    const ptrdiff_t x_first = (ptrdiff_t)(by * c->sy + c->y0) * c->rs + (ptrdiff_t)(c->ca * c->sx + c->x0);
    ptrdiff_t q[IG_RUN];
    float t[IG_RUN * IG_NR];
    int32_t i;
    for (i = 0; i < IG_RUN; ++i) q[i] = (ptrdiff_t)(by + i) * c->OW + c->ca;
    (narrow ? ig_runv_narrow : ig_runv)(xg + x_first, L, wc, b0, t, (ptrdiff_t)c->sy * c->rs);
    ig_put(o, t, q, IG_RUN);
    *r = b_ + IG_RUN;
}
#endif

#endif
