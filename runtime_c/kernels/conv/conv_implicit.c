/* ONNX Conv (1-D, 2-D) as an implicit GEMM, aotc_conv_implicit_f32: register tiles of output
 * positions x output channels read the patch matrix straight from the input, no scratch. */
#include "conv_internal.h"
#include "conv_stem_mve.h"

/* ---- 2-D Conv as an implicit GEMM: register tiles straight from the input, no scratch ---- */

/* Y^T = P * W^T, P the patch matrix (a row per output position), never built: a register tile
 * of IG_MR positions x IG_NR output channels reads each position's patch element from the input
 * through the position's own pointer, and W^T (packed at compile time, aot/kernels/conv.py)
 * a vector at a time. Positions go by class: those whose kernel taps lie inside the input for
 * the same ranges of rows and columns (the interior; each border row and column; the corners)
 * share the loops over taps, so no tap is ever tested or read from padding. */
#define IG_MR AOTC_GEMM_MR
#define IG_NR AOTC_GEMM_NR
#define IG_NH (IG_NR / 2)

/* The sum over one class's patch elements, as three nested loops (innermost last): n
 * iterations, each stepping the input offset by xs and the W^T row by ws floats. */
typedef struct {
    int32_t n[3];
    ptrdiff_t xs[3];
    ptrdiff_t ws[3];
} ig_loops;

/* the tile's rows (microkernel.h): row i's accumulators, and its position's pointer into the input */
#define IG_DECL(i, W) MK_DECL(i, W) const float *AOTC_RESTRICT x##i = xp[i];
#define IG_INIT(i, W) memcpy(c##i, b0, sizeof c##i);
#define IG_FMA(i, W) MK_AXPY(i, W, x##i[xo], w)
#define IG_OUT(i, W) MK_STORE(i, W, t, IG_NR)

/* x86 with AVX (the host build): 3 x 3 taps inside (the two inner loops of 3) go unrolled, one
 * loop over the channels: loops of 3 cost about as much as their taps (ResNet-8's 16-channel
 * convs, whose channels go outermost because their planes crowd L1's sets; the RGB stems). Not
 * on cores without vector units, where code size counts and the loops cost less. Only the full
 * tiles of IG_MR positions (U = IG_UNROLL3 below): a class's last tile of 1 to 5 positions runs once
 * per plane, and unrolling those tiles too took 0.9 s of this file's 2.2 s compile at -O3 (issue 24's
 * build time). */
#if defined(__AVX__) && !defined(AOTC_IG_NO_UNROLL3)
#define IG_UNROLL3 1
#else
#define IG_UNROLL3 0
#endif

/* c<i> += the sums over the loops of L, for the rows ROWS (their pointers x<i>, W columns), W^T
 * from wp. The innermost loop steps a pointer to its end (see gemm.c: so that compilers
 * vectorise j, not the sum). */
#define IG_TAP(ROWS, W, B, K)                                                                     \
    {                                                                                             \
        const float *w_ = w + (B) * ws1 + (K) * ws2;                                              \
        const ptrdiff_t o_ = xa + (B) * xs1 + (K) * xs2;                                          \
        ROWS(IG_FMA3, W)                                                                          \
    }
#define IG_FMA3(i, W) MK_AXPY(i, W, x##i[o_], w_)
#define IG_SUM(ROWS, W, U)                                                                        \
    if ((U) && L->n[1] == 3 && L->n[2] == 3) {                                             \
        const ptrdiff_t xs0 = L->xs[0], xs1 = L->xs[1], ws0 = L->ws[0], ws1 = L->ws[1];           \
        const float *w = wp;                                                                      \
        ptrdiff_t xa = 0;                                                                         \
        for (a = 0; a < L->n[0]; ++a, w += ws0, xa += xs0) {                                      \
            IG_TAP(ROWS, W, 0, 0) IG_TAP(ROWS, W, 0, 1) IG_TAP(ROWS, W, 0, 2)                     \
            IG_TAP(ROWS, W, 1, 0) IG_TAP(ROWS, W, 1, 1) IG_TAP(ROWS, W, 1, 2)                     \
            IG_TAP(ROWS, W, 2, 0) IG_TAP(ROWS, W, 2, 1) IG_TAP(ROWS, W, 2, 2)                     \
        }                                                                                         \
    } else {                                                                                      \
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
    }

/* t[i * IG_NR + j] = b0[j] + sum over the loops of xp[i][xo] * w[j], j < W. */
#define IG_KERNEL(NAME, ROWS, W, U)                                                               \
    MK_NOINLINE static void NAME(const float *const *xp, const ig_loops *L, const float *AOTC_RESTRICT wp, \
                                 const float *AOTC_RESTRICT b0, float *AOTC_RESTRICT t) {          \
        ROWS(IG_DECL, W)                                                                          \
        const ptrdiff_t xs2 = L->xs[2], ws2 = L->ws[2];                                           \
        int32_t j, a, b;                                                                          \
        ROWS(IG_INIT, W)                                                                          \
        IG_SUM(ROWS, W, U)                                                                        \
        ROWS(IG_OUT, W)                                                                           \
    }
#if IG_MR == 6
IG_KERNEL(ig_tile, MK_ROWS6, IG_NR, IG_UNROLL3)
IG_KERNEL(ig_tile_narrow, MK_ROWS6, IG_NH, IG_UNROLL3)
#endif
/* AVX-512 and AVX2 hosts: a class's last 5 positions as one tile of 5 chains, not 3 + 2 (SqueezeNet's 13 x 13
 * convs, whose border rows and columns are 11 positions: 6 + 5; ResNet-50's 7 x 7 3 x 3 convs, whose border
 * rows and columns are 5: 10 accumulators, 13 of AVX2's 16 registers with the W^T rows and the broadcast) */
#if IG_MR == 6 && defined(__AVX__)
#define IG_TILE5 1
IG_KERNEL(ig_tile5, MK_ROWS5, IG_NR, 0)
IG_KERNEL(ig_tile5_narrow, MK_ROWS5, IG_NH, 0)
#else
#define IG_TILE5 0
#endif
IG_KERNEL(ig_tile4, MK_ROWS4, IG_NR, 0)
IG_KERNEL(ig_tile4_narrow, MK_ROWS4, IG_NH, 0)
IG_KERNEL(ig_tile3, MK_ROWS3, IG_NR, 0)
IG_KERNEL(ig_tile3_narrow, MK_ROWS3, IG_NH, 0)
IG_KERNEL(ig_tile2, MK_ROWS2, IG_NR, 0)
IG_KERNEL(ig_tile2_narrow, MK_ROWS2, IG_NH, 0)
IG_KERNEL(ig_tile1, MK_ROWS1, IG_NR, 0)
IG_KERNEL(ig_tile1_narrow, MK_ROWS1, IG_NH, 0)
#if IG_MR != 6
#define ig_tile ig_tile4
#define ig_tile_narrow ig_tile4_narrow
#endif

/* A conv's work for the pool (aotc_threads.h): items of (image, group, block of IG_NR output
 * channels, band of output rows), `bands` bands per block. Every output element is summed by the
 * same loops whichever item holds it, so any split gives the single-threaded results. */
typedef struct {
    const aotc_conv_params *p;
    const float *x, *wt, *bias, *res;
    float *y;
    int32_t blocks, bands; /* blocks of IG_NR channels per group; row bands per block */
} ig_job;

/* A class of a block's output positions (ig_items_body): rows from ra, columns [ca, cb) (OW a
 * row), `count` positions in all, whose taps lie inside the input for the same loops; position
 * (oy, ox)'s first tap inside is input row oy * sy + y0, column ox * sx + x0, rows rs floats
 * apart, columns ps (1 in NCHW). */
typedef struct {
    int32_t ra, ca, cb, count, OW, y0, x0, sy, sx;
    ptrdiff_t rs, ps;
    int runs; /* the runs may take its positions: taps inside, NCHW input (ps 1), sx <= 2 */
} ig_class;

/* Where a block's finished tiles go: stored by tp's activation into y (NCHW: the block's channel
 * 0 plane, planes `plane` apart) or, when nhwc, yn (channels last: position 0's channel 0). */
typedef struct {
    const aotc_conv_params *tp;
    float *y, *yn;
    ptrdiff_t plane;
    int32_t width;
    int nhwc;
} ig_out;

/* (defined below; the ISA headers' steps store by them) */
MK_SPEED static void ig_store(const aotc_conv_params *p, float *t, const ptrdiff_t *q, int32_t rows, int32_t width,
                              ptrdiff_t plane, const float *res, float *y);
static void ig_store_nhwc(const aotc_conv_params *p, float *t, const ptrdiff_t *q, int32_t rows, int32_t width,
                          float *y);

/* The tile t of `rows` positions q, stored where o says (by the ISA headers' steps). */
MK_UNUSED static MK_INLINE void ig_put(const ig_out *o, float *t, const ptrdiff_t *q, int32_t rows) {
    if (o->nhwc) ig_store_nhwc(o->tp, t, q, rows, o->width, o->yn);
    else ig_store(o->tp, t, q, rows, o->width, o->plane, NULL, o->y);
}

/* AVX2 without AVX-512 (a host bundle built for x86-64-v3): a 1 x 1 conv on a plane of up to IG_PF_PLANE positions
 * prefetches the next block of output channels' W^T into L2 over the block's full tiles, a line per input channel
 * inside the tiles' loops (ig_tile_y; conv_pwc_avx512.c's design, which the AVX-512 build takes for these convs). Why:
 * in a model a block's W^T comes from DRAM (ResNet-50's 100 MB of weights stay in no cache), and on a 7 x 7 plane
 * its 7 full tiles do not hide the first one's reads: ResNet-50's 512 -> 2048 and 2048 -> 512 7 x 7 convs took
 * 1120-1190 us in the model against 900 alone (issue 64). */
#if IG_MR == 6 && IG_NR == 16 && defined(__AVX__) && !defined(__AVX512F__) && \
    (defined(__GNUC__) || defined(__clang__)) && !defined(AOTC_NO_INTRINSICS)
#define IG_PF 1
#define IG_PF_PLANE 256
#else
#define IG_PF 0
#endif

#include "conv_implicit_avx2.h" /* IG_DIRECT: x86 with AVX (and conv_implicit_avx512.h) */
#undef IG_KERNEL
#undef IG_SUM
#undef IG_TAP
#undef IG_FMA3

#include "conv_implicit_scalar.h" /* MK_SCALAR_TILES: the runs of cores without vector floats */
#include "conv_implicit_mve.h"    /* MK_HELIUM: the runs of Helium */
#if !MK_SCALAR_TILES && !MK_HELIUM
#define IG_RUN IG_MR
#endif
/* runs of positions, finished in their kernel where they can be (IG_FIN_WIDTH): on the M4 a full
 * block of channels (the kernels store all W), with Helium any (predicated stores) */
#define IG_MCU_RUNS (MK_SCALAR_TILES || MK_HELIUM)

/* Positions of the next tile when `left` are left in a class: IG_MR while that leaves at least 3
 * (a tile of 1 or 2 runs its sums' chains at a fraction of the machine's rate), else 3 + 2 for 5
 * (one tile of 5 with IG_TILE5), 4 + 3 for 7, 4 + 4 for 8. */
static int32_t ig_rows(int32_t left) {
    static const int8_t few[9] = {0, 1, 2, 3, 4, IG_TILE5 ? 5 : 3, IG_MR, 4, 4};
    return left >= 9 ? IG_MR : few[left];
}

#if IG_PF
/* The full tiles (IG_MR positions) ig_items_body's tiles (ig_rows) cut a class of `count` positions into. */
static int32_t ig_full_tiles(int32_t count) {
    int32_t full = 0, rows;
    for (; count > 0; count -= rows) full += (rows = ig_rows(count)) == IG_MR;
    return full;
}

/* A block's prefetch (d->pf_*), where `ok` (a 1 x 1 conv at stride 1, NCHW in and out, one band, a next block in
 * the group) on a plane of up to IG_PF_PLANE positions: the next panel's cg lines (a k row of PANEL floats, 64
 * bytes, each) over the plane's full tiles, or none. */
static void ig_pf_block(ig_dst *d, int ok, int32_t cg, ptrdiff_t out_plane) {
    d->npre = 0, d->pf_done = 0;
    d->pf_lines = ok && out_plane <= IG_PF_PLANE ? cg : 0;
    d->pf_full = d->pf_lines > 0 ? ig_full_tiles((int32_t)out_plane) : 0;
}

/* The next full tile's share of the next block's W^T (its first line at wn), for ig_tile_y. */
static MK_INLINE void ig_pf_tile(ig_dst *d, const float *wn) {
    const int32_t l0 = (int32_t)((int64_t)d->pf_lines * d->pf_done / d->pf_full);
    d->npre = (int32_t)((int64_t)d->pf_lines * (d->pf_done + 1) / d->pf_full) - l0;
    d->pre = wn + (ptrdiff_t)l0 * PANEL;
    ++d->pf_done;
}
#endif

typedef void (*ig_kernel)(const float *const *, const ig_loops *, const float *, const float *, float *);

/* Whether the input channels' rows crowd the L1 cache's sets when read channel after channel:
 * planes a multiple of 4 KiB apart (32 x 32 floats) map every channel's row to the same set of a
 * 32 KiB 8-way L1 with 64-byte lines (64 sets), and a loop over 16 channels innermost missed at
 * every read (ResNet-8's 16-channel 32 x 32 convs). Crowded: more rows per set than its 8 ways. */
static int crowds_l1(ptrdiff_t in_plane, int32_t cg) {
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) /* cores with such caches */
    const ptrdiff_t lines = in_plane * (ptrdiff_t)sizeof(float) / 64; /* plane step in lines, if whole */
    ptrdiff_t a = 64, b = lines % 64, t;
    if (in_plane * (ptrdiff_t)sizeof(float) % 64 != 0) return 0;
    while (b != 0) t = a % b, a = b, b = t; /* a = gcd(64, lines mod 64): the channels fill 64 / a sets */
    return cg > 8 * (64 / a);
#else /* a Cortex-M reads its SRAM without a cache: the longer innermost loop costs fewer instructions */
    (void)in_plane, (void)cg;
    return 0;
#endif
}

/* AVX2 without AVX-512 (a host bundle built for x86-64-v3): classes with 3 kernel columns inside take
 * them innermost whatever the channels (issue 64). Channels innermost step W^T by taps x PANEL floats (a
 * 64-byte row 9 rows after the last) through the whole block of W^T for every tile: ResNet-50's 7 x 7
 * 512 -> 512 3 x 3 conv, whose block (295 KiB) lives in L2, took 2.3-2.6 ms; columns innermost read each
 * channel's 9 rows as one run, the interior's taps unrolled (IG_UNROLL3): 1.82-1.86 ms (CPU time, 3
 * alternating runs, load 10); 3 x 3 convs of 16 to 256 channels on 8 x 8 to 56 x 56 as fast or faster.
 * (5 x 5 stay as they were: 2 % slower so.) */
#if defined(__AVX__) && !defined(__AVX512F__)
#define IG_COLUMNS3(nkx) ((nkx) == 3)
#else
#define IG_COLUMNS3(nkx) 0
#endif

/* tap_run (conv_internal.h) out of line: inlined at its two calls, it would cost the loops below
 * registers for a function called a few times per plane. */
MK_NOINLINE static int32_t ig_tap_run(int32_t o, int32_t n_out, int32_t n_in, int32_t K, int32_t s, int32_t d,
                                      int32_t pad, int32_t *k0, int32_t *k1) {
    return tap_run(o, n_out, n_in, K, s, d, pad, k0, k1);
}

/* The finished tile t (rows positions q[i] by output channels [0, width), channel planes
 * `plane` apart in y): + the residual, the activation (vectorised along t's rows), stored.
 * A full tile of consecutive positions (most of them) moves with constant offsets. */
MK_SPEED static void ig_store(const aotc_conv_params *p, float *t, const ptrdiff_t *q, int32_t rows, int32_t width,
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
#if IG_MCU_RUNS
    if (rows == IG_RUN && q[IG_RUN - 1] - q[0] == IG_RUN - 1) {
        y += q[0];
        aotc_activate_f32(t, (ptrdiff_t)IG_RUN * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
        for (j = 0; j < width; ++j, y += plane)
            for (i = 0; i < IG_RUN; ++i) y[i] = t[i * IG_NR + j];
        return;
    }
#endif
    if (res != NULL)
        for (j = 0; j < width; ++j, res += plane)
            for (i = 0; i < rows; ++i) t[i * IG_NR + j] += res[q[i]];
    aotc_activate_f32(t, (ptrdiff_t)rows * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
    for (j = 0; j < width; ++j, y += plane)
        for (i = 0; i < rows; ++i) y[q[i]] = t[i * IG_NR + j];
}

/* ig_store for a channels-last Y (p->out_nhwc, no residual): position q[i]'s width channels are
 * one run at y + q[i] * out_c. */
static void ig_store_nhwc(const aotc_conv_params *p, float *t, const ptrdiff_t *q, int32_t rows, int32_t width,
                          float *y) {
    int32_t i, j;
    aotc_activate_f32(t, (ptrdiff_t)rows * IG_NR, p->act, p->act_lo, p->act_hi, p->act_alpha);
    for (i = 0; i < rows; ++i) {
        float *yq = y + q[i] * p->out_c;
        for (j = 0; j < width; ++j) yq[j] = t[i * IG_NR + j];
    }
}

#if IG_MCU_RUNS
/* The runs' step of ig_items_body's tiles (their kernels: conv_implicit_scalar.h on the M4,
 * conv_implicit_mve.h on the M55), at position *r (*oy, *ox) of class c. The class's last
 * IG_RUN - 1 positions (as many as a run costs) go as the run that ends at its end, if its
 * inputs lie sx apart (it computes some outputs again, and stores the same values). IG_RUN
 * positions whose inputs lie sx apart (the first and last tell: positions go row by row through
 * the class's rectangle) are a run, finished in the kernel where f can (else stored by o): 1, and
 * *r, *oy, *ox past it. Else 0, *rows cut where a row's end leaves the next row's runs whole. */
#ifndef IG_BACK_MIN

#endif
static MK_INLINE int ig_run_step(const ig_class *c, const ig_loops *L, const float *xg, const float *wc,
                                 const float *b0, int narrow, const ig_out *o, ig_fin *f, int32_t *r, int32_t *oy,
                                 int32_t *ox, int32_t *rows) {
    const int32_t count = c->count, ra = c->ra, ca = c->ca, cb = c->cb, sy = c->sy, sx = c->sx, OW = c->OW;
    const ptrdiff_t rs = c->rs;
    if (count - *r == IG_RUN - 1 && *r > 0 && c->runs) {
        const int32_t b_ = count - IG_RUN, by = ra + b_ / (cb - ca), bx = ca + b_ % (cb - ca);
        const int32_t ly = ra + (count - 1) / (cb - ca), lx = ca + (count - 1) % (cb - ca);
        if (((ptrdiff_t)(ly - by) * sy) * rs + (ptrdiff_t)(lx - bx) * sx == (IG_RUN - 1) * sx)
            *r = b_, *oy = by, *ox = bx;
    }
#if MK_HELIUM
    /* Helium: a row's last positions, fewer than a run, where the row holds runs, as the run that
     * ends at the row's end (again over a few outputs, the same values), not as general tiles of
     * 1 to 4 positions (issue 52: DenseNet's 16-wide rows, 6 + 6 + 4) */
    if (c->runs && *ox > ca && cb - *ox < IG_RUN && cb - ca >= IG_RUN) {
        const int32_t back = IG_RUN - (cb - *ox);
        *r -= back, *ox -= back;
    }
#endif
    if (count - *r >= IG_RUN && c->runs) {
        const int32_t span = cb - ca, ex = *ox - ca + IG_RUN - 1;
        const int32_t ry = *oy + ex / span, rx = ca + ex % span; /* the last one */
        const ptrdiff_t x_first = (ptrdiff_t)(*oy * sy + c->y0) * rs + (ptrdiff_t)(*ox * sx + c->x0);
        const ptrdiff_t x_last = (ptrdiff_t)(ry * sy + c->y0) * rs + (ptrdiff_t)(rx * sx + c->x0);
        const ptrdiff_t q0 = (ptrdiff_t)*oy * OW + *ox, q_last = (ptrdiff_t)ry * OW + rx;
        if (x_last - x_first == (IG_RUN - 1) * sx) {
            const ig_run_kernel k = sx == 1 ? (narrow ? ig_run1_narrow : ig_run1)
                                            : (narrow ? ig_run2_narrow : ig_run2);
            float t[IG_RUN * IG_NR];
            if (!o->nhwc && f->clamp >= 0 && q_last - q0 == IG_RUN - 1 && IG_FIN_WIDTH(o->width, narrow)) {
                f->y = o->y + q0; /* finished in the kernel */
                ig_fin_width(f, o->width);
                k(xg + x_first, L, wc, b0, t, f);
            } else {
                ptrdiff_t q[IG_RUN];
                int32_t i, qy = *oy, qx = *ox;
                for (i = 0; i < IG_RUN; ++i) {
                    q[i] = (ptrdiff_t)qy * OW + qx;
                    if (++qx == cb) qx = ca, ++qy;
                }
                k(xg + x_first, L, wc, b0, t, NULL);
                ig_put(o, t, q, IG_RUN);
            }
            *r += IG_RUN, *oy = ry, *ox = rx + 1;
            if (*ox == cb) *ox = ca, ++*oy;
            return 1;
        }
        if (span >= IG_RUN && cb - *ox < IG_RUN) /* to the row's end: the next row's runs */
            *rows = cb - *ox > 4 ? 3 : cb - *ox; /* (a tile is 1 to 4 rows) */
    }
    return 0;
}
#endif

/* p->out_nhwc: where the block's channel 0 of position 0 goes (no residual then) */
#define IG_Y_NHWC (y + (ptrdiff_t)n * p->out_c * out_plane + (ptrdiff_t)g * mg + j0)

/* onhwc: p->out_nhwc, a constant in each of the two copies below on x86 (NCHW's tiles pay no test).
 * The ISA headers' steps (conv_implicit_avx2.h, _avx512.h, _scalar.h, _mve.h) take what they can;
 * the general tiles the rest. */
MK_SPEED static MK_INLINE void ig_items_body(void *arg, int32_t begin, int32_t end, const int onhwc) {
    const ig_job *J = (const ig_job *)arg;
    const aotc_conv_params *p = J->p;
    const float *x = J->x, *wt = J->wt, *bias = J->bias, *res = J->res;
    float *y = J->y;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KH = p->kernel[1], KW = p->kernel[2], taps = KH * KW;
    const int32_t sy = p->strides[1], sx = p->strides[2], dy = p->dilations[1], dx = p->dilations[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    const ptrdiff_t k_rows = (ptrdiff_t)cg * taps, group_w = (mg + PANEL - 1) / PANEL * PANEL * k_rows;
    /* the input's steps between channels, columns and rows: NCHW, or NHWC (channels last) */
    const int nhwc = p->in_nhwc != 0;
    const ptrdiff_t cs = nhwc ? 1 : in_plane, ps = nhwc ? p->in_c : 1, rs = nhwc ? (ptrdiff_t)IW * p->in_c : IW;
    /* A residual and the activation after it go in a pass of their own over each block of output
     * planes, vectorised: added tile by tile, the residual is read across planes a position at a
     * time (ResNet-8's 16-channel 32 x 32 conv with its shortcut took 15 % longer than without).
     * The output never shares the residual's memory (Conv writes no input in place). */
    aotc_conv_params bare = *p;
    const aotc_conv_params *tp = res != NULL ? &bare : p; /* the params the tiles store by */
    int32_t n, g, j0, ra, rb, ca, cb, ky0, ky1, kx0, kx1, item;
#if IG_DIRECT
    ig_dst dst;
#endif
    bare.act = AOTC_ACT_NONE;
#if IG_MCU_RUNS
    ig_fin fin; /* runs finished in their kernel: clamp -1 where they cannot be (a LeakyRelu) */
    fin.plane = out_plane;
    fin.clamp = tp->act == AOTC_ACT_NONE ? 0 : tp->act == AOTC_ACT_CLAMP ? 1 : -1;
    fin.lo = tp->act_lo;
    fin.hi = tp->act_hi;
    ig_fin_width(&fin, 0);
#endif
#if IG_DIRECT
    dst.plane = out_plane, dst.act = tp->act, dst.lo = tp->act_lo, dst.hi = tp->act_hi, dst.leak = tp->act_alpha;
#endif
#if MK_HELIUM
    if (KH == 1 && KW == 1 && sy == 1 && sx == 1 && IH == OH && IW == OW && !nhwc && !onhwc && fin.clamp >= 0 &&
        J->bands == 1 && out_plane >= IG_RUN) { /* a 1 x 1 conv: its planes in one call per block */
        ig_plane_pw_mve(J, begin, end, &fin, cg, mg, in_plane, out_plane, k_rows, group_w);
        return;
    }
#endif
    for (item = begin; item < end; ++item) {
        const int32_t band = item % J->bands, block = item / J->bands;
        /* output rows [row0, row1) of the block */
        /* (one band: no 64-bit divisions, a library call each on 32-bit cores) */
        const int32_t row0 = J->bands == 1 ? 0 : (int32_t)((int64_t)OH * band / J->bands);
        const int32_t row1 = J->bands == 1 ? OH : (int32_t)((int64_t)OH * (band + 1) / J->bands);
        n = block / J->blocks / p->group, g = block / J->blocks % p->group, j0 = block % J->blocks * IG_NR;
        {
            const float *xg = x + (ptrdiff_t)n * p->in_c * in_plane + (ptrdiff_t)g * cg * cs;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * out_plane;
            { /* output channels [j0, j0 + width) */
                const int32_t width = min_i32(IG_NR, mg - j0);
                const int narrow = width <= IG_NH;
                /* the group's W^T: panels of k_rows x PANEL; columns j0.. start at this row's j0 % PANEL */
                const float *wj = wt + g * group_w + (ptrdiff_t)(j0 / PANEL) * k_rows * PANEL + j0 % PANEL;
                float b0[IG_NR];
                int32_t j;
                ig_out out;
#if IG_PEND
                ig_pend pend; /* single-position tiles put off (conv_implicit_avx512.h) */
                int32_t npend = 0;
#endif
                out.tp = tp, out.y = y + yo + (ptrdiff_t)j0 * out_plane, out.plane = out_plane, out.width = width;
                out.nhwc = onhwc, out.yn = onhwc ? IG_Y_NHWC : NULL;
                (void)out; /* (read by the ISA headers' steps only: none in a plain build) */
                for (j = 0; j < IG_NR; ++j) b0[j] = bias != NULL && j < width ? bias[g * mg + j0 + j] : 0.0f;
                ra = row0;
#if IG_PF
                ig_pf_block(&dst, KH == 1 && KW == 1 && sy == 1 && sx == 1 && !nhwc && !onhwc && J->bands == 1 &&
                                      j0 + IG_NR < mg, cg, out_plane);
#endif
#if IG_MCU_RUNS
                if (KH == 1 && KW == 1 && sy == 1 && sx == 1 && IH == OH && IW == OW && !nhwc && !onhwc &&
                    fin.clamp >= 0 && IG_FIN_WIDTH(width, narrow) && row1 - row0 >= 1 && (row1 - row0) * OW >= IG_RUN) {
                    /* a 1 x 1 conv (no pads, stride 1): the band in runs, straight to the kernels */
                    ig_band_pw(xg, in_plane, cg, wj, b0, &fin, out.y, width, narrow, row0, row1, OW);
                    ra = row1; /* the loop below has nothing left */
                }
#endif
                for (; ra < row1; ra = rb) {
                    rb = min_i32(ig_tap_run(ra, OH, IH, KH, sy, dy, p->pads[1], &ky0, &ky1), row1);
                    for (ca = 0; ca < OW; ca = cb) {
                        const int32_t cols = (cb = ig_tap_run(ca, OW, IW, KW, sx, dx, p->pads[2], &kx0, &kx1)) - ca;
                        const int32_t count = (rb - ra) * cols, nky = ky1 - ky0, nkx = kx1 - kx0;
                        const float *wc = wj + (ptrdiff_t)(ky0 * KW + kx0) * (nhwc ? cg : 1) * PANEL;
                        ig_class c;
                        ig_loops L;
                        int32_t r = 0, oy = ra, ox = ca;
                        c.ra = ra, c.ca = ca, c.cb = cb, c.count = count, c.OW = OW;
                        c.y0 = ky0 * dy - p->pads[1], c.x0 = kx0 * dx - p->pads[2];
                        c.sy = sy, c.sx = sx, c.rs = rs, c.ps = ps;
                        if (nky <= 0 || nkx <= 0) { /* no tap inside: the bias alone */
                            L.n[0] = L.n[1] = L.n[2] = 0;
                        } else if (nhwc) { /* rows; a row's columns and channels are one run when dense */
                            const int dense = dx == 1 && cg == p->in_c; /* group 1: columns abut */
                            L.n[0] = nky, L.xs[0] = (ptrdiff_t)dy * rs, L.ws[0] = (ptrdiff_t)KW * cg * PANEL;
                            L.n[1] = dense ? 1 : nkx, L.xs[1] = (ptrdiff_t)dx * ps, L.ws[1] = (ptrdiff_t)cg * PANEL;
                            L.n[2] = dense ? nkx * cg : cg, L.xs[2] = 1, L.ws[2] = PANEL;
                        } else if (cg >= nkx && !(nkx >= 3 && (IG_COLUMNS3(nkx) || crowds_l1(in_plane, cg)))) {
                            /* rows, columns, then the input channels innermost */
                            L.n[0] = nky, L.xs[0] = (ptrdiff_t)dy * IW, L.ws[0] = (ptrdiff_t)KW * PANEL;
                            L.n[1] = nkx, L.xs[1] = dx, L.ws[1] = PANEL;
                            L.n[2] = cg, L.xs[2] = in_plane, L.ws[2] = (ptrdiff_t)taps * PANEL;
                        } else { /* few channels, wide kernels, or crowded sets: the columns innermost */
                            L.n[0] = cg, L.xs[0] = in_plane, L.ws[0] = (ptrdiff_t)taps * PANEL;
                            L.n[1] = nky, L.xs[1] = (ptrdiff_t)dy * IW, L.ws[1] = (ptrdiff_t)KW * PANEL;
                            L.n[2] = nkx, L.xs[2] = dx, L.ws[2] = PANEL;
                        }
                        c.runs = L.n[0] > 0 && ps == 1 && sx <= 2;
                        while (r < count) { /* tiles of positions, row by row through the class */
                            int32_t rows = ig_rows(count - r);
#if IG_MCU_RUNS
                            if (ig_run_step(&c, &L, xg, wc, b0, narrow, &out, &fin, &r, &oy, &ox, &rows)) continue;
#endif
#if MK_HELIUM
                            if (cb - ca == 1 && count >= IG_RUN && L.n[0] > 0 && ps == 1) {
                                ig_column_mve(&c, &L, xg, wc, b0, narrow, &out, &r);
                                oy = ra + r, ox = ca;
                                continue;
                            }
#endif
                            {
                            const ig_kernel k = rows == IG_MR ? (narrow ? ig_tile_narrow : ig_tile)
#if IG_TILE5
                                                : rows == 5   ? (narrow ? ig_tile5_narrow : ig_tile5)
#endif
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
                                xp[i] = L.n[0] > 0 ? xg + (ptrdiff_t)(oy * sy + c.y0) * rs + (ptrdiff_t)(ox * sx + c.x0) * ps : xg;
                                if (++ox == cb) ox = ca, ++oy;
                            }
#if IG_PEND
                            if (!onhwc && rows == 1 && width == IG_NR && L.n[0] > 0) {
                                ig_pend_add_avx512(&pend, &npend, &L, xp[0], wc, q[0], b0, &out);
                                continue;
                            }
#endif
#if IG_PF
                            if (dst.pf_full > 0 && rows == IG_MR && count == out_plane)
                                ig_pf_tile(&dst, wj + k_rows * PANEL);
#endif
#if IG_DIRECT
                            if (!onhwc && rows == IG_MR && width == IG_NR && L.n[0] > 0 &&
                                ig_tile_y_avx2(xp, &L, wc, b0, &out, &dst, q))
                                continue;
#endif
                            if (L.n[0] > 0) {
                                k(xp, &L, wc, b0, t);
                            } else {
                                for (i = 0; i < rows * IG_NR; ++i) t[i] = b0[i % IG_NR];
                            }
                            if (onhwc) ig_store_nhwc(tp, t, q, rows, width, IG_Y_NHWC);
                            else ig_store(tp, t, q, rows, width, out_plane, NULL, y + yo + (ptrdiff_t)j0 * out_plane);
                            }
                        }
                    }
                }
#if IG_PEND
                ig_pend_flush_avx512(&pend, &npend, b0, &out);
#endif
                if (res != NULL && J->bands == 1) { /* the block's planes: + the residual, then the activation */
                    float *AOTC_RESTRICT yb = y + yo + (ptrdiff_t)j0 * out_plane;
                    const float *AOTC_RESTRICT rb = res + yo + (ptrdiff_t)j0 * out_plane;
                    const ptrdiff_t nb = (ptrdiff_t)width * out_plane;
                    ptrdiff_t e;
                    for (e = 0; e < nb; ++e) yb[e] += rb[e];
                    aotc_activate_f32(yb, nb, p->act, p->act_lo, p->act_hi, p->act_alpha);
                } else if (res != NULL) { /* the same, on the band's rows of each plane */
                    const ptrdiff_t nb = (ptrdiff_t)(row1 - row0) * OW;
                    int32_t j;
                    for (j = 0; j < width; ++j) {
                        const ptrdiff_t o = yo + (ptrdiff_t)(j0 + j) * out_plane + (ptrdiff_t)row0 * OW;
                        float *AOTC_RESTRICT yb = y + o;
                        const float *AOTC_RESTRICT rb = res + o;
                        ptrdiff_t e;
                        for (e = 0; e < nb; ++e) yb[e] += rb[e];
                        aotc_activate_f32(yb, nb, p->act, p->act_lo, p->act_hi, p->act_alpha);
                    }
                }
            }
        }
    }
}

#if IG_DIRECT
MK_SPEED static void ig_items(void *arg, int32_t begin, int32_t end) { ig_items_body(arg, begin, end, 0); }
MK_SPEED static void ig_items_nhwc(void *arg, int32_t begin, int32_t end) { ig_items_body(arg, begin, end, 1); }
#else /* one copy where code size counts: a test per tile (ResNet-8 on a Cortex-M4: +0.09 % instructions,
       * +752 B of .text; two copies there: +0.02 %, +3,184 B) */
MK_SPEED static void ig_items(void *arg, int32_t begin, int32_t end) {
    ig_items_body(arg, begin, end, ((const ig_job *)arg)->p->out_nhwc != 0);
}
#define ig_items_nhwc ig_items
#endif

MK_SPEED void aotc_conv_implicit_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                            const float *res, float *y) {
    ig_job J;
    if (igm(p, x, wt, bias, res, y)) return; /* Helium: few input channels at stride 2, narrow outputs (conv_stem_mve.h) */
    /* AVX-512: channels-last stems into multiples of 64 channels (conv_implicit_avx512.h) */
    if (ig_stem64(p, x, wt, bias, res, y)) return;
    const int32_t items = p->batch * p->group * ((p->out_c / p->group + IG_NR - 1) / IG_NR);
    J.p = p, J.x = x, J.wt = wt, J.bias = bias, J.res = res, J.y = y;
    J.blocks = (p->out_c / p->group + IG_NR - 1) / IG_NR;
    J.bands = 1;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    /* too few channel blocks to keep every thread busy (4 items each): the rows go in bands too */
    if (items < 4 * AOTC_THREADS) J.bands = min_i32(p->out_size[1], (4 * AOTC_THREADS + items - 1) / items);
#endif
    aotc_parallel_for(p->out_nhwc ? ig_items_nhwc : ig_items, &J, items * J.bands);
}
