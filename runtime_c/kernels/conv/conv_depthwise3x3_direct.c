/* Depthwise ONNX Conv, 2-D 3 x 3, stride 1 or 2, pads of 0 or 1, without scratch:
 * aotc_conv_depthwise3x3_direct_f32, every tap read straight from the input in blocks of
 * outputs summed in registers, taps outside the image dropped by masks. */
#include "conv_dw3_mve.h"
#include "conv_internal.h"
#include "conv_dwk8_avx2.h"

/* x86 with AVX2, no AVX-512: stride 2 in vectors of 8 channels (conv_dwk8_avx2.h). The row blocks below took 3.4 to
 * 4.3 times its time at -march=x86-64-v3 on MobileNetV2's and EfficientNet-B0's stride-2 planes (112 x 112 x 96:
 * 516 us against 164; 14 x 14 x 576: 61 against 16.5); at stride 1 they are about as fast (issue 64). */
#if DWK8_ON
DWK8_KERNEL(dwk8_3s2, 3, 2)
#endif

/* ---- depthwise 3 x 3, stride 1 or 2, pads of 0 or 1: straight from the input, no scratch ---- */

/* Most outputs in one flat run (below): its keep masks are on the stack. */
#define DW3_RUN 128
/* Runs go in blocks of AOTC_DW3_BLOCK outputs, each summed in registers (compilers turn a block
 * into a few vector operations, at stride 2 de-interleaving the inputs in registers), rounded up
 * to whole blocks wherever the outputs past a run's end (and their taps) stay inside y (and x):
 * those outputs are written again, later, by the run or plane they belong to. Targets without
 * vector units go output by output (blocks of 1): AOTC_DW3_BLOCK, in aotc_conv.h. */
#define DW3_BLOCK AOTC_DW3_BLOCK

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
        left = MK_MADD(k10, t1[i_ - 1], left);                                                      \
        mid = MK_MADD(k11, t1[i_], mid);                                                            \
        right = MK_MADD(k12, t1[i_ + 1], right);                                                    \
        left = MK_MADD(k20, keep_if(t2[i_ - 1], e2_), left);                                        \
        mid = MK_MADD(k21, keep_if(t2[i_], e2_), mid);                                              \
        right = MK_MADD(k22, keep_if(t2[i_ + 1], e2_), right);                                      \
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
            const float left = MK_MADD(k20, a2[l], MK_MADD(k10, a1[l], k00 * a0[l]));                  \
            const float mid = MK_MADD(k21, b2[l], MK_MADD(k11, b1[l], k01 * b0[l]));                   \
            const float right = MK_MADD(k22, a2[l + 1], MK_MADD(k12, a1[l + 1], k02 * a0[l + 1]));     \
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
    static MK_NOINLINE void NAME##_tail DW3_RUN_PARAMS {                                               \
        enum { S = S_, FLAT = FLAT_, MASKED = 1 };                                                      \
        DW3_WEIGHTS                                                                                     \
        int32_t j;                                                                                      \
        for (j = j0; j < j1; ++j) DW3_TAPS(j)                                                           \
    }                                                                                                   \
    static MK_INLINE void NAME##_run DW3_RUN_PARAMS {                                                  \
        enum { S = S_, FLAT = FLAT_ };                                                                  \
        DW3_WEIGHTS                                                                                     \
        int32_t jb, l;                                                                                  \
        DW3_BLOCKS                                                                                      \
        if (jb < j1) NAME##_tail(DW3_ARGS, jb, j1, y);                                                  \
    }                                                                                                   \
    static MK_INLINE void NAME##_runx DW3_RUN_PARAMS {                                                 \
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
            if (ix + kx >= 0 && ix + kx < c->IW) v = MK_MADD(k[ky * 3 + kx], xc[(ptrdiff_t)(iy + ky) * c->IW + ix + kx], v);
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

#if MK_SCALAR_TILES
/* ---- Cortex-M cores with floats in scalar registers (a Cortex-M4/M7/M33; the M55 takes
 * conv_dw3_mve.h): row by row ---- */
#if defined(__FP_FAST_FMAF)
#define DW3S_MADD(a, b, c) fmaf((a), (b), (c))
#else
#define DW3S_MADD(a, b, c) MK_MADD(a, b, c)
#endif

/* gcc's scheduler before register allocation hoists a tap row's load above the last uses of the
 * row before, whose inputs then move to other registers first (8 more instructions a block of 8
 * on the M4): the kernels go without it. */
#if defined(__GNUC__) && !defined(__clang__)
#define DW3S_NOSCHED __attribute__((optimize("no-schedule-insns")))
#else
#define DW3S_NOSCHED
#endif
/* A row's edge outputs, one by one (for the kernels below): output 0 where a left pad drops its
 * column -1 (o0 == 1), output o1 where its last `right` (1 or 2) columns are inside. */
#define DW3_EDGES(MADD, FIN, R, S)                                                                   \
    if (o0 == 1) { /* the left pad: output 0 reads columns 0 and 1 (x at column -1) */              \
        float u = MADD(w01, x0[1], b);                                                               \
        u = MADD(w02, x0[2], u);                                                                     \
        if ((R) >= 2) u = MADD(w11, x1[1], u), u = MADD(w12, x1[2], u);                              \
        if ((R) >= 3) u = MADD(w21, x2[1], u), u = MADD(w22, x2[2], u);                              \
        FIN(u, y[0])                                                                                 \
    }                                                                                                \
    if (right > 0) { /* output o1 reads its first `right` (1 or 2) columns only */                  \
        const float *r0_ = x0 + S * o1, *r1_ = x1 + S * o1, *r2_ = x2 + S * o1;                      \
        float u = MADD(w00, r0_[0], b);                                                              \
        if ((R) >= 2) u = MADD(w10, r1_[0], u);                                                      \
        if ((R) >= 3) u = MADD(w20, r2_[0], u);                                                      \
        if (right > 1) {                                                                             \
            u = MADD(w01, r0_[1], u);                                                                \
            if ((R) >= 2) u = MADD(w11, r1_[1], u);                                                  \
            if ((R) >= 3) u = MADD(w21, r2_[1], u);                                                  \
        }                                                                                            \
        FIN(u, y[o1])                                                                                \
    }
/* One output row's interior outputs [o0, o1): every tap inside the image, the tap rows that are
 * (R of them, 2 or 3) at x0, x1, x2 with weights k0, k1, k2 (3 each), output ox reading columns
 * S * ox + c .. + 2 of them (c applied by the caller). Blocks of outputs (8 or 4 at stride 1,
 * 4 at stride 2) sum a tap row at a time: one load of the row's inputs (MK_LDM10, 6 or 9: one
 * VLDM on the M4), 3 multiply-adds per output. The sum starts from the bias; then the
 * activation (MODE) and one store. The blocks of 1 of the generic kernel took 5.5 instructions
 * per MAC on the M4 (masks, a clamp to infinities), a window of 3 outputs sliding in registers
 * 2.7, these blocks 1.9 (issue 27).
 * MODE 0 clamps to [lo, hi] in floats (-inf, inf where there is no such bound): a compare, a
 * move of the flags and a conditional move a bound. MODE 1 (a Relu: lo 0, hi inf) and MODE 2
 * (lo 0, hi finite and positive: a Relu6) work on the bits, where a float's order is its bits'
 * order as an int32 for non-negative floats: a negative sum (sign bit set) becomes +0 in one
 * instruction, and the min with hi's bits is an integer compare (half the float clamp's
 * instructions). They differ from MODE 0 on a NaN sum only (0 or hi, not NaN). */
#define DW3S_FIN(v, dst)                                                                             \
    if (MODE == 0) {                                                                                 \
        v = v < lo ? lo : v;                                                                         \
        v = v > hi ? hi : v;                                                                         \
        dst = v;                                                                                     \
    } else {                                                                                         \
        int32_t i_;                                                                                  \
        memcpy(&i_, &v, sizeof i_);                                                                  \
        i_ = i_ < 0 ? 0 : i_;                                                                        \
        if (MODE == 2) i_ = i_ > hb ? hb : i_;                                                       \
        memcpy(&(dst), &i_, sizeof i_);                                                              \
    }
/* a<i> += W * the inputs of outputs 0 .. 7 (0 .. 3) */
#define DW3S_M8(W, A, B, C, D, E, F, G, H)                                                           \
    a0 = DW3S_MADD(W, A, a0), a1 = DW3S_MADD(W, B, a1), a2 = DW3S_MADD(W, C, a2), a3 = DW3S_MADD(W, D, a3); \
    a4 = DW3S_MADD(W, E, a4), a5 = DW3S_MADD(W, F, a5), a6 = DW3S_MADD(W, G, a6), a7 = DW3S_MADD(W, H, a7);
#define DW3S_M4(W, A, B, C, D)                                                                       \
    a0 = DW3S_MADD(W, A, a0), a1 = DW3S_MADD(W, B, a1), a2 = DW3S_MADD(W, C, a2), a3 = DW3S_MADD(W, D, a3);
/* a tap row (inputs at P, weights W0 W1 W2) into 8 outputs at stride 1, 4 at stride 1, 4 at stride 2 */
#define DW3S_ROW8(P, W0, W1, W2)                                                                     \
    {                                                                                                \
        float v0, v1, v2, v3, v4, v5, v6, v7, v8, v9;                                                \
        MK_LDM10(P, v)                                                                               \
        DW3S_M8(W0, v0, v1, v2, v3, v4, v5, v6, v7)                                                  \
        DW3S_M8(W1, v1, v2, v3, v4, v5, v6, v7, v8)                                                  \
        DW3S_M8(W2, v2, v3, v4, v5, v6, v7, v8, v9)                                                  \
    }
#define DW3S_ROW4(P, W0, W1, W2)                                                                     \
    {                                                                                                \
        float v0, v1, v2, v3, v4, v5;                                                                \
        MK_LDM6(P, v)                                                                                \
        DW3S_M4(W0, v0, v1, v2, v3) DW3S_M4(W1, v1, v2, v3, v4) DW3S_M4(W2, v2, v3, v4, v5)          \
    }
#define DW3S_ROW3(P, W0, W1, W2)                                                                     \
    {                                                                                                \
        float v0, v1, v2, v3, v4;                                                                    \
        MK_LDM5(P, v)                                                                                \
        a0 = DW3S_MADD(W0, v0, a0), a1 = DW3S_MADD(W0, v1, a1), a2 = DW3S_MADD(W0, v2, a2);          \
        a0 = DW3S_MADD(W1, v1, a0), a1 = DW3S_MADD(W1, v2, a1), a2 = DW3S_MADD(W1, v3, a2);          \
        a0 = DW3S_MADD(W2, v2, a0), a1 = DW3S_MADD(W2, v3, a1), a2 = DW3S_MADD(W2, v4, a2);          \
    }
#define DW3S_ROW4S2(P, W0, W1, W2)                                                                   \
    {                                                                                                \
        float v0, v1, v2, v3, v4, v5, v6, v7, v8;                                                    \
        MK_LDM9(P, v)                                                                                \
        DW3S_M4(W0, v0, v2, v4, v6) DW3S_M4(W1, v1, v3, v5, v7) DW3S_M4(W2, v2, v4, v6, v8)          \
    }
#define DW3S_ROWS(ROW)                                                                               \
    ROW(x0, w00, w01, w02)                                                                           \
    if (TAP_ROWS >= 2) ROW(x1, w10, w11, w12)                                                        \
    if (TAP_ROWS >= 3) ROW(x2, w20, w21, w22)
#define DW3S_KERNEL(NAME, R, S, MODE_)                                                               \
    MK_NOINLINE DW3S_NOSCHED static void NAME(const float *AOTC_RESTRICT x, ptrdiff_t IW, ptrdiff_t xstep, int32_t rows, \
                                 const float *k0, const float *k1, const float *k2, float b, float lo, \
                                 float hi, int32_t o0, int32_t o1, int32_t right, int32_t OW,        \
                                 float *AOTC_RESTRICT yrow) {                                        \
        const float w00 = k0[0], w01 = k0[1], w02 = k0[2];                                           \
        const float w10 = (R) >= 2 ? k1[0] : 0.0f, w11 = (R) >= 2 ? k1[1] : 0.0f, w12 = (R) >= 2 ? k1[2] : 0.0f; \
        const float w20 = (R) >= 3 ? k2[0] : 0.0f, w21 = (R) >= 3 ? k2[1] : 0.0f, w22 = (R) >= 3 ? k2[2] : 0.0f; \
        enum { MODE = MODE_, TAP_ROWS = R };                                                         \
        int32_t row, hb;                                                                             \
        memcpy(&hb, &hi, sizeof hb);                                                                 \
        for (row = 0; row < rows; ++row, x += xstep, yrow += OW) {                                   \
        const float *AOTC_RESTRICT x0 = x, *AOTC_RESTRICT x1 = x + IW;                               \
        const float *AOTC_RESTRICT x2 = x + ((R) >= 3 ? 2 : 1) * IW;                                 \
        float *AOTC_RESTRICT y = yrow;                                                               \
        int32_t o = o0;                                                                              \
        DW3_EDGES(DW3S_MADD, DW3S_FIN, R, S)                                                     \
        x0 += S * o0, x1 += S * o0, x2 += S * o0, y += o0;                                          \
        if (S == 1) {                                                                                \
            for (; o + 8 <= o1; o += 8, x0 += 8, x1 += 8, x2 += 8, y += 8) {                         \
                float a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b, a6 = b, a7 = b;                \
                DW3S_ROWS(DW3S_ROW8)                                                                 \
                DW3S_FIN(a0, y[0]) DW3S_FIN(a1, y[1]) DW3S_FIN(a2, y[2]) DW3S_FIN(a3, y[3])         \
                DW3S_FIN(a4, y[4]) DW3S_FIN(a5, y[5]) DW3S_FIN(a6, y[6]) DW3S_FIN(a7, y[7])         \
            }                                                                                        \
        }                                                                                            \
        for (; o + 4 <= o1; o += 4, x0 += 4 * S, x1 += 4 * S, x2 += 4 * S, y += 4) {                 \
            float a0 = b, a1 = b, a2 = b, a3 = b;                                                    \
            if (S == 1) {                                                                            \
                DW3S_ROWS(DW3S_ROW4)                                                                 \
            } else {                                                                                 \
                DW3S_ROWS(DW3S_ROW4S2)                                                               \
            }                                                                                        \
            DW3S_FIN(a0, y[0]) DW3S_FIN(a1, y[1]) DW3S_FIN(a2, y[2]) DW3S_FIN(a3, y[3])             \
        }                                                                                            \
        if (S == 1 && o + 3 <= o1) { /* (a row of 5: DS-CNN's 25 x 5 planes) */                     \
            float a0 = b, a1 = b, a2 = b;                                                            \
            DW3S_ROWS(DW3S_ROW3)                                                                     \
            DW3S_FIN(a0, y[0]) DW3S_FIN(a1, y[1]) DW3S_FIN(a2, y[2])                                 \
            o += 3, x0 += 3, x1 += 3, x2 += 3, y += 3;                                               \
        }                                                                                            \
        for (; o < o1; ++o, x0 += S, x1 += S, x2 += S, ++y) { /* one at a time */                   \
            float u = DW3S_MADD(w00, x0[0], b);                                                        \
            u = DW3S_MADD(w01, x0[1], u), u = DW3S_MADD(w02, x0[2], u);                                  \
            if ((R) >= 2) u = DW3S_MADD(w10, x1[0], u), u = DW3S_MADD(w11, x1[1], u), u = DW3S_MADD(w12, x1[2], u); \
            if ((R) >= 3) u = DW3S_MADD(w20, x2[0], u), u = DW3S_MADD(w21, x2[1], u), u = DW3S_MADD(w22, x2[2], u); \
            DW3S_FIN(u, *y)                                                                          \
        }                                                                                            \
        }                                                                                            \
    }
DW3S_KERNEL(dw3s_r3_s1, 3, 1, 0)
DW3S_KERNEL(dw3s_r3_s1_relu, 3, 1, 1)
DW3S_KERNEL(dw3s_r3_s1_relu6, 3, 1, 2)
DW3S_KERNEL(dw3s_r2_s1, 2, 1, 0)
DW3S_KERNEL(dw3s_r2_s1_relu, 2, 1, 1)
DW3S_KERNEL(dw3s_r2_s1_relu6, 2, 1, 2)
DW3S_KERNEL(dw3s_r3_s2, 3, 2, 0)
DW3S_KERNEL(dw3s_r3_s2_relu, 3, 2, 1)
DW3S_KERNEL(dw3s_r3_s2_relu6, 3, 2, 2)
DW3S_KERNEL(dw3s_r2_s2, 2, 2, 0)
DW3S_KERNEL(dw3s_r2_s2_relu, 2, 2, 1)
DW3S_KERNEL(dw3s_r2_s2_relu6, 2, 2, 2)
#undef DW3S_KERNEL
#undef DW3S_ROWS
#undef DW3S_ROW4S2
#undef DW3S_ROW3
#undef DW3S_ROW4
#undef DW3S_ROW8
#undef DW3S_M4
#undef DW3S_M8
#undef DW3S_FIN
#undef DW3S_NOSCHED
#undef DW3_EDGES
typedef void (*dw3s_kernel)(const float *, ptrdiff_t, ptrdiff_t, int32_t, const float *, const float *, const float *,
                            float, float, float, int32_t, int32_t, int32_t, int32_t, float *);

/* The whole conv, plane by plane and row by row (the contract of the generic kernel below: stride
 * 1 or 2 in both dims, pads of 0 or 1, no dilation); IH >= 2 and IW >= 3, so that a row's first
 * and last outputs (the kernels' edges) have 2 tap rows and one column outside at most. The residual and a LeakyRelu go in a
 * pass over each plane. */
MK_SPEED static void dw3_scalar(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                       const float *res, float *y) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t s = p->strides[2], pt = p->pads[1], pl = p->pads[2];
    const int32_t mult = p->out_c / p->in_c;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    const int clamp = p->act == AOTC_ACT_CLAMP && res == NULL;
    const float lo = clamp ? p->act_lo : -INFINITY, hi = clamp ? p->act_hi : INFINITY;
    /* the activation on the bits (DW3S_FIN): a Relu (mode 1), or a Relu6 (mode 2) */
    const int mode = lo == 0.0f && hi > 0.0f ? (hi == INFINITY ? 1 : 2) : 0;
    /* the interior columns: outputs [o0, o1) read inputs s * ox - pl .. + 2 inside [0, IW) */
    const int32_t o0 = pl > 0 ? 1 : 0;
    int32_t o1 = (IW - 3 + pl) / s + 1, right, last_full, n, o, oy, oy_end;
    if (o1 > OW) o1 = OW;
    /* the output past them, if any (one at most: pads of 1 at most), reads 1 or 2 columns */
    right = o1 < OW ? IW - (s * o1 - pl) : 0;
    /* the last output row whose three tap rows lie inside */
    last_full = (IH - 3 + pt) / s;
    if (last_full > OH - 1) last_full = OH - 1;
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const float *xc = x + ((ptrdiff_t)n * p->in_c + o / mult) * in_plane;
            float *yc = y + ((ptrdiff_t)n * p->out_c + o) * out_plane;
            const float *k = w + (ptrdiff_t)o * 9;
            const float b = bias != NULL ? bias[o] : 0.0f;
            for (oy = 0; oy < OH; oy = oy_end) {
                const int32_t iy = oy * s - pt; /* tap row 0's input row */
                const int32_t r0 = iy < 0 ? 1 : 0, r1 = iy + 2 >= IH ? IH - iy : 3; /* tap rows inside: [r0, r1) */
                const int three = r1 - r0 == 3; /* (two rows: the third's pointers are the second's, unread) */
                static const dw3s_kernel kernels[2][2][3] = {
                    {{dw3s_r2_s1, dw3s_r2_s1_relu, dw3s_r2_s1_relu6}, {dw3s_r2_s2, dw3s_r2_s2_relu, dw3s_r2_s2_relu6}},
                    {{dw3s_r3_s1, dw3s_r3_s1_relu, dw3s_r3_s1_relu6}, {dw3s_r3_s2, dw3s_r3_s2_relu, dw3s_r3_s2_relu6}}};
                const dw3s_kernel kern = kernels[three][s == 2][mode];
                const float *xr = xc + (ptrdiff_t)(iy + r0) * IW - pl; /* the first inside tap row, column -pl */
                /* the rows from oy on whose three tap rows lie inside, in one call; the others alone */
                oy_end = three && last_full >= oy ? last_full + 1 : oy + 1;
                kern(xr, IW, (ptrdiff_t)s * IW, oy_end - oy, k + 3 * r0, k + 3 * r0 + 3, k + 3 * r0 + (three ? 6 : 3), b,
                     lo, hi, o0, o1, right, OW, yc + (ptrdiff_t)oy * OW);
            }
            if (res != NULL) {
                const float *ro = res + ((ptrdiff_t)n * p->out_c + o) * out_plane;
                ptrdiff_t i;
                for (i = 0; i < out_plane; ++i) yc[i] += ro[i];
            }
            if (res != NULL || p->act == AOTC_ACT_LEAKY)
                aotc_activate_f32(yc, out_plane, p->act, p->act_lo, p->act_hi, p->act_alpha);
        }
    }
}
#endif

typedef struct {
    const aotc_conv_params *p;
    const dw3_conv *c;
    const float *x, *w, *bias, *res;
    float *y;
} dw3_job;

static void dw3_planes(void *arg, int32_t begin, int32_t end);

void aotc_conv_depthwise3x3_direct_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                       const float *res, float *y) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t s = p->strides[2];                 /* == strides[1] */
    uint32_t m[DW3_RUN + DW3_BLOCK + 1];
    dw3_conv c;
    dw3_job J;
    int32_t oy;
    if (aotc_conv_dw3_avx512(p, x, w, bias, res, y)) return; /* small planes at stride 1, short rows at stride 2, on AVX-512 */
    if (dw3m(p, x, w, bias, res, y)) return; /* Helium (M55): strips of 4 columns down the rows (conv_dw3_mve.h) */
    if (aotc_conv_dwk_avx512(p, x, w, bias, res, y, 0)) return; /* stride 2, longer rows, on AVX-512 */
#if DWK8_ON
    if (s == 2 && dwk8_fits(p)) { /* stride 2 on AVX2 without AVX-512 */
        dwk8_run(p, x, w, bias, res, y, dwk8_3s2);
        return;
    }
#endif
#if MK_SCALAR_TILES
    if (IH >= 2 && IW >= 3) {
        dw3_scalar(p, x, w, bias, res, y);
        return;
    }
#endif
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
    J.p = p, J.c = &c, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    aotc_parallel_for(dw3_planes, &J, p->batch * p->out_c);
}

/* Output planes [begin, end) (image n's channel o is plane n * out_c + o), for the pool
 * (aotc_threads.h). A run rounded up past its plane writes into the next plane's first outputs,
 * which that plane's own runs overwrite later on one thread; a plane whose next plane is not
 * this call's (the last of a thread's share) is bounded as the tensor's last plane is, by the
 * checked path, so no thread writes another's planes. */
static void dw3_planes(void *arg, int32_t begin, int32_t end) {
    const dw3_job *J = (const dw3_job *)arg;
    const aotc_conv_params *p = J->p;
    const dw3_conv *c = J->c;
    const float *x = J->x, *w = J->w, *bias = J->bias, *res = J->res;
    float *y = J->y;
    const int32_t IH = c->IH, IW = c->IW, s = c->s, mult = p->out_c / p->in_c; /* outputs per input channel */
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)c->OH * c->OW;
    const ptrdiff_t x_len = (ptrdiff_t)p->batch * p->in_c * in_plane, y_len = (ptrdiff_t)end * out_plane;
    int32_t n, o, plane;
    for (plane = begin; plane < end; ++plane) {
        n = plane / p->out_c, o = plane % p->out_c;
        {
            const float *xc = x + ((ptrdiff_t)n * p->in_c + o / mult) * in_plane;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + o) * out_plane;
            const float *wo = w + (ptrdiff_t)o * 9;
            const float b = bias != NULL ? bias[o] : 0.0f;
            /* the runs read the rows next to the plane (dropped) and, rounded up, up to DW3_BLOCK
             * outputs (s DW3_BLOCK + 1 input elements) past the plane: all inside x and y but in
             * the first and last planes (and with a single row above and below, IH = 1) */
            if (xc == x || IH == 1 || yo + out_plane + DW3_BLOCK > y_len ||
                (xc - x) + in_plane + IW + s * DW3_BLOCK + 2 > x_len) {
                dw3_plane_checked(c, x, x_len, xc, wo, b, y, y_len, yo);
            } else {
                (s == 2 ? dw3_plane_s2 : c->flat ? dw3_plane_flat : dw3_plane_s1)(c, xc, wo, b, y + yo);
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
