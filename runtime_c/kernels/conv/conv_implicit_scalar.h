/* The implicit GEMM's (conv_implicit.c) runs on cores whose tiles live in scalar registers
 * (MK_SCALAR_TILES: a Cortex-M4/M7/M33, any core without vector floats). The contract is the
 * portable kernel's: no scratch, the same packed W^T, every conv it takes; only the instructions
 * differ. conv_implicit_mve.h defines the same names for Helium; ig_items_body calls them where
 * IG_MCU_RUNS. Internal to conv_implicit.c: included once, after the general tiles. */
#ifndef AOTC_CONV_IMPLICIT_SCALAR_H
#define AOTC_CONV_IMPLICIT_SCALAR_H

#if MK_SCALAR_TILES
/* Runs: IG_RUN positions whose inputs lie 1 or 2 floats apart (SX, the column stride: a row's
 * positions, or whole rows of a 1 x 1 conv), on targets whose tiles live in scalar registers (a
 * Cortex-M4/M7/M33: 32 single-precision registers). One pointer reads the run's patch elements
 * at constant offsets, where the general tiles step a pointer per position, and 6 x 4 sums share
 * each load: per step 6 + 4 loads, 24 multiply-adds and 4 for the loop, 1.6 instructions per
 * MAC on the M4 (the 4 x 4 general tile: 1.9). */
#define IG_RUN 5
/* The sums are scalars a<i>_<j> (position i, channel j), named, not arrays: gcc kept arrays of
 * this tile in memory at every step. X(j) for the columns j of a run 4 or 2 channels wide. */
#define IGR_COLS4(X) X(0) X(1) X(2) X(3)
#define IGR_COLS2(X) X(0) X(1)
#define IGR_DECL(j) float a0_##j, a1_##j, a2_##j, a3_##j, a4_##j;
#define IGR_INIT(j) a0_##j = a1_##j = a2_##j = a3_##j = a4_##j = b0[j];
#define IGR_MAC(j)                                                                                  \
    a0_##j = MK_MADD(v0, u##j, a0_##j), a1_##j = MK_MADD(v1, u##j, a1_##j);                          \
    a2_##j = MK_MADD(v2, u##j, a2_##j), a3_##j = MK_MADD(v3, u##j, a3_##j);                          \
    a4_##j = MK_MADD(v4, u##j, a4_##j);
#define IGR_TO_T(j) t[j] = a0_##j, t[IG_NR + j] = a1_##j, t[2 * IG_NR + j] = a2_##j, t[3 * IG_NR + j] = a3_##j, \
                    t[4 * IG_NR + j] = a4_##j;
#define IGR_LO1(v) v = v < lo ? lo : v;
#define IGR_HI1(v) v = v > hi ? hi : v;
#define IGR_LO(j) IGR_LO1(a0_##j) IGR_LO1(a1_##j) IGR_LO1(a2_##j) IGR_LO1(a3_##j) IGR_LO1(a4_##j)
#define IGR_HI(j) IGR_HI1(a0_##j) IGR_HI1(a1_##j) IGR_HI1(a2_##j) IGR_HI1(a3_##j) IGR_HI1(a4_##j)
#define IGR_PUT(j)                                                                                  \
    {                                                                                               \
        float *AOTC_RESTRICT yj = y + (j) * plane;                                                  \
        yj[0] = a0_##j, yj[1] = a1_##j, yj[2] = a2_##j, yj[3] = a3_##j, yj[4] = a4_##j;             \
    }
/* A Relu (lo 0; HI_ 0) or a Relu6 (lo 0, hi finite; HI_ 1) on the bits, in integer registers: a
 * non-negative float orders as its bits do as an int32, a negative one (sign bit set) becomes +0
 * in one instruction, the min with hi's bits hb is an integer compare; the float clamp takes a
 * compare, a move of the flags and a conditional move per bound (8 instructions for a Relu6
 * against 4 here). Only a NaN sum comes out otherwise (0 or hi). */
#define IGR_BITS1(v, dst, HI_)                                                                      \
    {                                                                                               \
        int32_t i_;                                                                                 \
        memcpy(&i_, &(v), sizeof i_);                                                               \
        i_ = i_ < 0 ? 0 : i_;                                                                       \
        if (HI_) i_ = i_ > hb ? hb : i_;                                                            \
        memcpy(&(dst), &i_, sizeof i_);                                                             \
    }
#define IGR_PUT_BITS(j, HI_)                                                                        \
    {                                                                                               \
        float *AOTC_RESTRICT yj = y + (j) * plane;                                                  \
        IGR_BITS1(a0_##j, yj[0], HI_) IGR_BITS1(a1_##j, yj[1], HI_) IGR_BITS1(a2_##j, yj[2], HI_)  \
        IGR_BITS1(a3_##j, yj[3], HI_) IGR_BITS1(a4_##j, yj[4], HI_)                                 \
    }
#define IGR_PUT_RELU(j) IGR_PUT_BITS(j, 0)
#define IGR_PUT_RELU6(j) IGR_PUT_BITS(j, 1)
/* a step's weights of the 4 (one load of 4) or 2 output channels */
#define IGR_W4 float u0, u1, u2, u3; MK_LDM4(w, u)
#define IGR_W2 const float u0 = w[0], u1 = w[1];
/* a step's patch elements of the 5 positions: consecutive at sx = 1 (one load of 5) */
#define IGR_X1 float v0, v1, v2, v3, v4; MK_LDM5(xq, v)
#define IGR_X2 const float v0 = xq[0], v1 = xq[2], v2 = xq[4], v3 = xq[6], v4 = xq[8];
/* Where a run's finished sums go: y (output channel j of position i at y[i + j * plane]), after
 * a clamp to [lo, hi] (hi infinite: a Relu) when clamp is set. */
typedef struct {
    float *y;
    ptrdiff_t plane;
    int clamp;
    float lo, hi;
} ig_fin;
/* The run's finished sums: the activation (f->clamp), then stored to f->y. */
#define IGR_FINISH(COLS)                                                                             \
        if (f->clamp && f->lo == 0.0f && f->hi > 0.0f) { /* a Relu or a Relu6 */                  \
            float *AOTC_RESTRICT y = f->y;                                                           \
            const ptrdiff_t plane = f->plane;                                                        \
            int32_t hb;                                                                              \
            memcpy(&hb, &f->hi, sizeof hb);                                                          \
            if (f->hi == INFINITY) {                                                                 \
                COLS(IGR_PUT_RELU)                                                                   \
            } else {                                                                                 \
                COLS(IGR_PUT_RELU6)                                                                  \
            }                                                                                        \
            return;                                                                                  \
        }                                                                                            \
        if (f->clamp) {                                                                              \
            const float lo = f->lo, hi = f->hi;                                                      \
            COLS(IGR_LO)                                                                             \
            if (hi != INFINITY) {                                                                    \
                COLS(IGR_HI)                                                                         \
            }                                                                                        \
        }                                                                                            \
        {                                                                                            \
            float *AOTC_RESTRICT y = f->y;                                                           \
            const ptrdiff_t plane = f->plane;                                                        \
            COLS(IGR_PUT)                                                                            \
        }
/* The run's sums start from b0 and go to t (rows IG_NR apart) when f is NULL, else they are
 * finished in registers and stored by f: no pass over a copy. */
#define IG_RUN_KERNEL(NAME, COLS, LOAD_W, LOAD_X)                                                    \
    MK_NOINLINE static void NAME(const float *AOTC_RESTRICT x0, const ig_loops *L, const float *AOTC_RESTRICT wp, \
                                 const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t, const ig_fin *f) { \
        COLS(IGR_DECL)                                                                               \
        const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];                                              \
        int32_t a, b;                                                                                \
        COLS(IGR_INIT)                                                                               \
        for (a = 0; a < L->n[0]; ++a) {                                                              \
            for (b = 0; b < L->n[1]; ++b) {                                                          \
                const float *AOTC_RESTRICT xq = x0 + a * L->xs[0] + b * L->xs[1];                    \
                const float *w = wp + a * L->ws[0] + b * L->ws[1];                                   \
                const float *const w_end = w + L->n[2] * ws2;                                        \
                for (; w != w_end; w += ws2, xq += xs2) {                                            \
                    LOAD_X LOAD_W COLS(IGR_MAC)                                                      \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
        if (f == NULL) {                                                                             \
            COLS(IGR_TO_T)                                                                           \
            return;                                                                                  \
        }                                                                                            \
        IGR_FINISH(COLS)                                                                             \
    }
IG_RUN_KERNEL(ig_run1, IGR_COLS4, IGR_W4, IGR_X1)
IG_RUN_KERNEL(ig_run1_narrow, IGR_COLS2, IGR_W2, IGR_X1)
IG_RUN_KERNEL(ig_run2, IGR_COLS4, IGR_W4, IGR_X2)
IG_RUN_KERNEL(ig_run2_narrow, IGR_COLS2, IGR_W2, IGR_X2)
/* A 1 x 1 conv's run (no pads, stride 1: ig_items_body's flat loop): n input channels in_plane
 * floats apart, W^T's rows PANEL apart, finished by f; no loops over kernel rows and columns to
 * set up (issue 27: 40 instructions a call of 20 sums, MobileNet-v2's 1 x 1 convs of 8 channels). */
#define IG_PW_KERNEL(NAME, COLS, LOAD_W)                                                             \
    MK_NOINLINE static void NAME(const float *AOTC_RESTRICT xq, ptrdiff_t in_plane, int32_t n,       \
                                 const float *AOTC_RESTRICT w, const float *AOTC_RESTRICT b0, const ig_fin *f) { \
        COLS(IGR_DECL)                                                                               \
        const float *const w_end = w + (ptrdiff_t)n * PANEL;                                         \
        COLS(IGR_INIT)                                                                               \
        for (; w != w_end; w += PANEL, xq += in_plane) {                                             \
            IGR_X1 LOAD_W COLS(IGR_MAC)                                                              \
        }                                                                                            \
        IGR_FINISH(COLS)                                                                             \
    }
IG_PW_KERNEL(ig_pw, IGR_COLS4, IGR_W4)
IG_PW_KERNEL(ig_pw_narrow, IGR_COLS2, IGR_W2)
#undef IG_PW_KERNEL
#undef IGR_FINISH
#undef IG_RUN_KERNEL
typedef void (*ig_run_kernel)(const float *, const ig_loops *, const float *, const float *, float *,
                              const ig_fin *);

/* Whether a block `width` channels wide (narrow: at most IG_NH) is finished in the run kernels,
 * which store all their columns: a full block of IG_NR or IG_NH. */
#define IG_FIN_WIDTH(width, narrow) ((width) == ((narrow) ? IG_NH : IG_NR))
/* (the kernels store their W columns: no width to set) */
static MK_INLINE void ig_fin_width(ig_fin *f, int32_t width) { (void)f, (void)width; }

/* A 1 x 1 conv's band of rows [row0, row1) of OW positions (no pads, stride 1): one run of
 * positions, input and output alike, so it goes in runs straight to the kernels, finished by f
 * into y (the block's channel 0 plane), the last run ending at the band's end (computing a few
 * outputs again); the general loop costs 140 instructions a run of 20 MACs on the M4
 * (MobileNet-v2's 1 x 1 convs of 8 input channels). */
static MK_INLINE void ig_band_pw(const float *xg, ptrdiff_t in_plane, int32_t cg, const float *wj, const float *b0,
                                 ig_fin *f, float *y, int32_t width, int narrow, int32_t row0, int32_t row1,
                                 int32_t OW) {
    const ptrdiff_t q_end = (ptrdiff_t)row1 * OW;
    ptrdiff_t q;
    (void)width;
    for (q = (ptrdiff_t)row0 * OW; q < q_end; q += IG_RUN) {
        const ptrdiff_t q0 = q + IG_RUN <= q_end ? q : q_end - IG_RUN;
        f->y = y + q0;
        (narrow ? ig_pw_narrow : ig_pw)(xg + q0, in_plane, cg, wj, b0, f);
    }
}
#endif

#endif
