/* Depthwise 3 x 3 Conv with Helium (Cortex-M55, arm_mve.h): dw3m, called first by
 * aotc_conv_depthwise3x3_direct_f32 (stride 1 or 2, pads of 0 or 1), which goes on as before where
 * it returns 0 (-DAOTC_NO_MVE, and every other target: their objects do not change). Internal to
 * runtime_c/kernels.
 *
 * Why: the row kernels before it (a row's interior in vectors of 4, its edge outputs one by one,
 * a call per plane and band of rows) took 3.8 instructions per MAC on a KWS DS-CNN's 25 x 5
 * planes and 2.5 to 3 on MobileNets' (issue 27): the edges, the calls, the weights reloaded.
 *
 * How: a plane goes in strips of 4 output columns [o, o + 4), each strip down all the rows (the
 * last strip ends at the row's end, computing some outputs again; a row of fewer than 4 is one
 * strip of fewer lanes). Each input row that a strip reads is loaded once, as its three tap
 * columns (3 vector loads; at stride 2, 3 gathers), and goes into every output row it is a tap
 * row of, each with its own row of weights as VFMA scalars: at stride 1 three output rows are
 * summed at once (3 loads and 9 VFMAs per 4 outputs), at stride 2 two (6 gathers and 9 VFMAs).
 * Taps outside the image on the left or right are zero lanes of predicated loads, which read
 * nothing there (so strips at the edges may point outside the plane); tap rows outside are not
 * read. The clamp is two VMAXNM/VMINNM a vector. One call per strip and image runs all its
 * planes (the weights as 9 scalars a plane). A residual and LeakyRelu go in a pass afterwards. */
#ifndef AOTC_CONV_DW3_MVE_H
#define AOTC_CONV_DW3_MVE_H

#include "conv_internal.h"

#if MK_HELIUM
#include <arm_mve.h>

/* gcc's scheduler before register allocation hoists the next row's loads above the sums of this
 * one, which then need more vector registers than the 8 there are (spills); DW3M_HOLD(x) keeps
 * one pointer for the rows (else gcc makes one per unrolled step, and spills them). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE_SIZE__)
/* (one attribute with MK_SPEED's -O2: a second optimize attribute left the kernels at -Os) */
#define DW3M_NOSCHED __attribute__((optimize("O2", "no-schedule-insns", "no-auto-inc-dec")))
#define DW3M_HOLD(P) __asm__("" : "+r"(P))
#elif defined(__GNUC__) && !defined(__clang__)
#define DW3M_NOSCHED __attribute__((optimize("no-schedule-insns", "no-auto-inc-dec")))
#define DW3M_HOLD(P) __asm__("" : "+r"(P))
#else
#define DW3M_NOSCHED
#define DW3M_HOLD(P)
#endif

/* One strip of a conv: its planes' pointers and steps, the rows, and the lanes each load keeps. */
typedef struct {
    const float *x;          /* the first plane's input at row 0, the strip's first tap column (S o - pl) */
    float *y;                /* the first plane's output at row 0, column o */
    const float *k, *bias;   /* the first plane's 9 weights, and its bias (NULL: none) */
    ptrdiff_t IW, OW;        /* row steps (floats) */
    ptrdiff_t xs, ys;        /* plane steps */
    int32_t planes, OH, pt;  /* planes, output rows, 1 if output row 0's tap row 0 is outside */
    int32_t n;               /* output rows whose three tap rows are inside (then OH - n, 0 or 1, whose last is not) */
    mve_pred16_t p0, p1, p2; /* lanes whose tap column 0, 1, 2 is inside the row (and whose output is) */
    mve_pred16_t ps;         /* lanes that are outputs */
    float lo, hi;            /* the clamp (-inf, inf: none) */
} dw3m_strip;

/* A tap column's vector of inputs at stride 1 (P: the row at the strip's first tap column) and
 * at stride 2 (A: the lanes' addresses there, a gather), predicated where PRED##i says so. */
#define DW3M_LD1(P, i) (PRED##i ? vldrwq_z_f32((P) + (i), p##i) : vld1q_f32((P) + (i)))
#define DW3M_LD2(A, i) (PRED##i ? vldrwq_gather_base_z_f32(A, 4 * (i), p##i) : vldrwq_gather_base_f32(A, 4 * (i)))
/* The input row at P (or A) into the sums X += row * (W##0, W##1, W##2); Y (unless NONE) the same
 * with V##0.., started at Y0 (the bias, or Y itself); Z likewise with U##0.., from Z0. */
#define DW3M_ROW(LD, P, X, W, Y, Y0, V, Z, Z0, U, TWO, THREE)                                       \
    {                                                                                                \
        float32x4_t t_ = LD(P, 0);                                                                   \
        X = vfmaq_n_f32(X, t_, W##0);                                                                \
        if (TWO) Y = vfmaq_n_f32(Y0, t_, V##0);                                                      \
        if (THREE) Z = vfmaq_n_f32(Z0, t_, U##0);                                                    \
        t_ = LD(P, 1);                                                                               \
        X = vfmaq_n_f32(X, t_, W##1);                                                                \
        if (TWO) Y = vfmaq_n_f32(Y, t_, V##1);                                                       \
        if (THREE) Z = vfmaq_n_f32(Z, t_, U##1);                                                     \
        t_ = LD(P, 2);                                                                               \
        X = vfmaq_n_f32(X, t_, W##2);                                                                \
        if (TWO) Y = vfmaq_n_f32(Y, t_, V##2);                                                       \
        if (THREE) Z = vfmaq_n_f32(Z, t_, U##2);                                                     \
    }
/* Output row X clamped and stored at y, y to the next row. */
#define DW3M_PUT(X)                                                                                  \
    {                                                                                                \
        const float32x4_t v_ = vminnmq_f32(vmaxnmq_f32(X, lo), hi);                                  \
        if (PREDS) {                                                                                 \
            vstrwq_p_f32(y, v_, ps);                                                                 \
        } else {                                                                                     \
            vst1q_f32(y, v_);                                                                        \
        }                                                                                            \
        y += OW;                                                                                     \
        DW3M_HOLD(y);                                                                                \
    }

/* Stride 1: output row oy's tap rows are oy - pt .. + 2. Before the loop, a holds output row 0
 * and b row 1 from the rows above the first one that completes row 0; then each input row r
 * completes a (its tap row 2), adds to b (tap row 1) and starts c (tap row 0), a is stored, and
 * the three turn (unrolled by 3: no moves). */
#define DW3M_STEP1(A, B, C)                                                                          \
    DW3M_ROW(DW3M_LD1, x, A, k2, B, B, k1, C, vb, k0, 1, 1)                                          \
    x += IW;                                                                                         \
    DW3M_HOLD(x);                                                                                    \
    DW3M_PUT(A)
/* Stride 2: output row oy's tap rows are 2 oy - pt .. + 2; a holds its tap row 0 from the step
 * before (as b), the step adds rows 1 and 2 and starts b from row 2 (its tap row 0). */
#define DW3M_STEP2(A, B)                                                                             \
    DW3M_ROW(DW3M_LD2, av, A, k1, A, A, k1, A, A, k1, 0, 0)                                          \
    av = vaddq_n_u32(av, row);                                                                       \
    DW3M_ROW(DW3M_LD2, av, A, k2, B, vb, k0, B, B, k0, 1, 0)                                         \
    av = vaddq_n_u32(av, row);                                                                       \
    DW3M_PUT(A)

/* The planes of one strip; PRED0..2 (PREDS): whether tap column 0..2's loads (the stores) are
 * predicated. */
#define DW3M_KERNEL(NAME, S, PRED0_, PRED1_, PRED2_, PREDS_)                                         \
    MK_NOINLINE DW3M_NOSCHED static void NAME(const dw3m_strip *st) {                                            \
        enum { PRED0 = PRED0_, PRED1 = PRED1_, PRED2 = PRED2_, PREDS = PREDS_ };                     \
        const mve_pred16_t p0 = st->p0, p1 = st->p1, p2 = st->p2, ps = st->ps;                       \
        const float32x4_t lo = vdupq_n_f32(st->lo), hi = vdupq_n_f32(st->hi);                        \
        const ptrdiff_t IW = st->IW, OW = st->OW;                                                    \
        const uint32_t row = (uint32_t)(IW * (ptrdiff_t)sizeof(float)); /* (stride 2: a row, in bytes) */ \
        const float *xp = st->x, *k = st->k, *bias = st->bias;                                        \
        float *yp = st->y;                                                                           \
        int32_t plane;                                                                               \
        (void)p0, (void)p1, (void)p2, (void)ps, (void)row;                                           \
        for (plane = 0; plane < st->planes; ++plane, xp += st->xs, yp += st->ys, k += 9) {           \
            const float k00 = k[0], k01 = k[1], k02 = k[2], k10 = k[3], k11 = k[4], k12 = k[5];      \
            const float k20 = k[6], k21 = k[7], k22 = k[8];                                          \
            const float32x4_t vb = vdupq_n_f32(bias != NULL ? bias[plane] : 0.0f);                   \
            float32x4_t a, b, c;                                                                     \
            float *y = yp;                                                                           \
            const int32_t n0 = st->n;                                                                \
            int32_t n = n0, i;                                                                       \
            (void)c;                                                                                 \
            if (S == 1) {                                                                            \
                const float *x = xp;                                                                 \
                a = vb;                                                                              \
                if (st->pt) { /* row 0 is output row 0's tap row 1, row 1's tap row 0 */             \
                    DW3M_ROW(DW3M_LD1, x, a, k1, b, vb, k0, c, c, k0, 1, 0)                          \
                    x += IW;                                                                         \
                } else {                                                                             \
                    DW3M_ROW(DW3M_LD1, x, a, k0, a, a, k0, c, c, k0, 0, 0)                           \
                    x += IW;                                                                         \
                    DW3M_ROW(DW3M_LD1, x, a, k1, b, vb, k0, c, c, k0, 1, 0)                          \
                    x += IW;                                                                         \
                }                                                                                    \
                for (i = n / 3; i > 0; --i) { /* (i: gcc 12 -Os got n wrong after a loop on n) */    \
                    DW3M_STEP1(a, b, c)                                                              \
                    DW3M_STEP1(b, c, a)                                                              \
                    DW3M_STEP1(c, a, b)                                                              \
                }                                                                                    \
                n %= 3;                                                                              \
                if (n == 2) {                                                                        \
                    DW3M_STEP1(a, b, c)                                                              \
                    DW3M_STEP1(b, c, a)                                                              \
                    a = c;                                                                           \
                } else if (n == 1) {                                                                 \
                    DW3M_STEP1(a, b, c)                                                              \
                    a = b;                                                                           \
                }                                                                                    \
            } else {                                                                                 \
                /* the lanes' tap column 0 in row 0: 2 floats apart */                              \
                uint32x4_t av = vidupq_n_u32((uint32_t)(uintptr_t)xp, 8);                            \
                a = vb;                                                                              \
                if (!st->pt) { /* row 0 is output row 0's tap row 0 */                              \
                    DW3M_ROW(DW3M_LD2, av, a, k0, a, a, k0, a, a, k0, 0, 0)                          \
                    av = vaddq_n_u32(av, row);                                                       \
                }                                                                                    \
                for (i = n / 2; i > 0; --i) {                                                        \
                    DW3M_STEP2(a, b)                                                                 \
                    DW3M_STEP2(b, a)                                                                 \
                }                                                                                    \
                if (n % 2 == 1) {                                                                    \
                    DW3M_STEP2(a, b)                                                                 \
                    a = b;                                                                           \
                }                                                                                    \
                if (st->OH > n0) { /* the last output row: its tap row 2 is outside */              \
                    DW3M_ROW(DW3M_LD2, av, a, k1, a, a, k1, a, a, k1, 0, 0)                          \
                }                                                                                    \
            }                                                                                        \
            if (st->OH > n0) DW3M_PUT(a) /* (stride 1: its tap rows 0 and 1 are in a) */            \
        }                                                                                            \
    }
/* The strips inside the rows, those reaching past their left or right end, and those reaching
 * past both or narrower than 4 outputs. */
DW3M_KERNEL(dw3m_s1, 1, 0, 0, 0, 0)
DW3M_KERNEL(dw3m_s1_left, 1, 1, 0, 0, 0)
DW3M_KERNEL(dw3m_s1_right, 1, 0, 0, 1, 0)
DW3M_KERNEL(dw3m_s1_any, 1, 1, 1, 1, 1)
DW3M_KERNEL(dw3m_s2, 2, 0, 0, 0, 0)
DW3M_KERNEL(dw3m_s2_left, 2, 1, 0, 0, 0)
DW3M_KERNEL(dw3m_s2_right, 2, 0, 0, 1, 0)
DW3M_KERNEL(dw3m_s2_any, 2, 1, 1, 1, 1)
#undef DW3M_KERNEL
#undef DW3M_STEP2
#undef DW3M_STEP1
#undef DW3M_PUT
#undef DW3M_ROW
#undef DW3M_LD2
#undef DW3M_LD1
#undef DW3M_HOLD
#undef DW3M_NOSCHED

/* The whole conv (aotc_conv_depthwise3x3_direct_f32's contract: stride 1 or 2 in both dims, pads
 * of 0 or 1); 1 when done. */
static int dw3m(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                float *y) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t s = p->strides[2], pt = p->pads[1], pl = p->pads[2], mult = p->out_c / p->in_c;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    const int clamp = p->act == AOTC_ACT_CLAMP && res == NULL;
    dw3m_strip st;
    const int32_t per = mult == 1 ? p->out_c : 1;
    int32_t o = 0, n, c;
    st.IW = IW, st.OW = OW, st.OH = OH, st.pt = pt;
    /* the output rows oy whose tap row 2 (input row s oy - pt + 2) is inside */
    st.n = IH - 3 + pt < 0 ? 0 : min_i32((IH - 3 + pt) / s + 1, OH);
    st.lo = clamp ? p->act_lo : -INFINITY, st.hi = clamp ? p->act_hi : INFINITY;
    /* mult 1: the planes one after the other, a call each strip and image; else a call a plane */
    st.xs = in_plane, st.ys = out_plane, st.planes = per;
    do { /* strip [o0, o0 + 4), the last one ending at the row's end */
        const int32_t o0 = o + 4 <= OW || OW < 4 ? o : OW - 4;
        uint32_t m[4] = {0, 0, 0, 0};
        int32_t l, kx;
        void (*kernel)(const dw3m_strip *);
        for (l = 0; l < 4; ++l) {
            if (o0 + l >= OW) continue;
            m[3] |= 0xFu << (4 * l);
            for (kx = 0; kx < 3; ++kx) {
                const int32_t ix = s * (o0 + l) - pl + kx;
                if (ix >= 0 && ix < IW) m[kx] |= 0xFu << (4 * l);
            }
        }
        st.p0 = (mve_pred16_t)m[0], st.p1 = (mve_pred16_t)m[1], st.p2 = (mve_pred16_t)m[2];
        st.ps = (mve_pred16_t)m[3];
        if (m[1] != 0xFFFFu || m[3] != 0xFFFFu || (m[0] != 0xFFFFu && m[2] != 0xFFFFu)) {
            kernel = s == 1 ? dw3m_s1_any : dw3m_s2_any;
        } else if (m[0] != 0xFFFFu) {
            kernel = s == 1 ? dw3m_s1_left : dw3m_s2_left;
        } else if (m[2] != 0xFFFFu) {
            kernel = s == 1 ? dw3m_s1_right : dw3m_s2_right;
        } else {
            kernel = s == 1 ? dw3m_s1 : dw3m_s2;
        }
        for (n = 0; n < p->batch; ++n) {
            for (c = 0; c < p->out_c; c += per) {
                st.x = x + ((ptrdiff_t)n * p->in_c + c / mult) * in_plane + (ptrdiff_t)s * o0 - pl;
                st.y = y + ((ptrdiff_t)n * p->out_c + c) * out_plane + o0;
                st.k = w + (ptrdiff_t)c * 9;
                st.bias = bias != NULL ? bias + c : NULL;
                kernel(&st);
            }
        }
        o = o0 + 4;
    } while (o < OW);
    if (res != NULL || p->act == AOTC_ACT_LEAKY) { /* the epilogue: + the residual, the activation */
        const ptrdiff_t all = (ptrdiff_t)p->batch * p->out_c * out_plane;
        if (res != NULL) {
            ptrdiff_t i;
            for (i = 0; i < all; ++i) y[i] += res[i];
        }
        aotc_activate_f32(y, all, p->act, p->act_lo, p->act_hi, p->act_alpha);
    }
    return 1;
}
#else
#define dw3m(p, x, w, bias, res, y) 0
#endif

#endif /* AOTC_CONV_DW3_MVE_H */
