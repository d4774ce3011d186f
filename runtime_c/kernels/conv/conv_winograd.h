/* What the two Winograd kernels share (conv_winograd.c's F(2 x 2, 3 x 3), conv_winograd4.c's F(4 x 4,
 * 3 x 3)): a band's state, its products on the GEMM core, and the loop over images and bands that runs
 * each band's three steps on the thread pool. Each kernel supplies its two transforms. Internal to
 * runtime_c/kernels. */
#ifndef AOTC_CONV_WINOGRAD_H
#define AOTC_CONV_WINOGRAD_H

#include "conv_internal.h"

typedef struct {
    const aotc_conv_params *p;
    const float *x, *u, *bias, *res;
    float *y, *v, *m;
    int32_t n;       /* image */
    int32_t ty0;     /* the band's first tile row */
    int32_t th;      /* tile rows in the band */
    int32_t tw;      /* tiles per tile row: ceil(W / tile) */
    int32_t tiles16; /* the band's tiles rounded up to PANEL: the columns V holds */
    int32_t tp;      /* the largest band's tiles16: the pitch of V's and M's rows */
    int32_t m0;      /* the output channel of M's first rows */
    ptrdiff_t vstep; /* floats from V[e] to V[e + 1]: in_c tp + AOTC_WINO_PITCH_PAD */
    ptrdiff_t mstep; /* floats from M[e] to M[e + 1] (its rows, + AOTC_WINO_PITCH_PAD) */
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    int32_t products;
    int32_t bands, th_all;        /* band mode (wino_band_items): bands per image, tile rows in all */
    aotc_task_fn input_items, output_items;
    float *lanes;                 /* thread t's V, then its M, at lanes + t p->kc */
    int32_t *ready;               /* ready[t]: thread t's V holds the band (only thread t reads and sets it) */
#endif
} wino_job;

/* items: the products M[e] = U[e] * V[e] (out_c x tiles, rows tp apart). The band's tiles, not its whole
 * panels: the GEMM's narrow tiles take a last panel's few columns, and the output transforms read no
 * product past them. */
MK_UNUSED static void wino_gemm_items(void *arg, int32_t begin, int32_t end) {
    const wino_job *J = (const wino_job *)arg;
    const int32_t C = J->p->in_c, M = J->p->out_c;
    aotc_sgemm_params gp = gemm_shape(M, J->th * J->tw, C);
    int32_t e;
    gp.b_rs = PANEL;
    gp.b_ps = C * PANEL;
    gp.b_padded = 1;
    gp.ldc = J->tp;
    for (e = begin; e < end; ++e)
        aotc_sgemm_f32(&gp, J->u + (ptrdiff_t)e * M * C, J->v + (ptrdiff_t)e * J->vstep, NULL,
                       J->m + (ptrdiff_t)e * J->mstep, NULL);
}

#if defined(AOTC_THREADS) && AOTC_THREADS > 1
/* With the pool, per band: items are blocks of AOTC_WINO_LANE_M output channels. A thread's first item of
 * the band transforms the whole band's input into its own V; each item then runs its block's rows of the
 * products into the thread's own M and turns them into the block's outputs. Why: split three ways (input
 * channels, products, output channels), a band's V and M passed between the cores twice a band, each
 * thread writing over lines the other had just read; when a VM's two vCPUs sit on different dies (or a
 * machine's two threads on different core complexes) such a write costs about 30 x a local one
 * (bench/handoff.c), and ResNet-18's 128- and 256-channel Winograd convs took 1.3-1.8 x as long as when
 * they sit close. Here a band's V and M never leave their core, and since the compiler keeps this scratch
 * for the whole run (no tensor is placed over it), nor does any line of a lane. Per node, with
 * wino_stream_row: 13-37 % faster there (issue 24), 5-15 % slower when the cores sit close (the input
 * transform done on every thread). */
MK_UNUSED static void wino_lane_items(void *arg, int32_t begin, int32_t end) {
    wino_job *S = (wino_job *)arg;
    const int32_t self = aotc_thread_index(), C = S->p->in_c, OC = S->p->out_c;
    wino_job L = *S;
    aotc_sgemm_params gp;
    int32_t blk, e;
    L.v = S->lanes + (ptrdiff_t)self * S->p->kc;
    L.m = L.v + (ptrdiff_t)S->products * S->vstep;
    L.mstep = (ptrdiff_t)AOTC_WINO_LANE_M * S->tp + AOTC_WINO_PITCH_PAD;
    if (!S->ready[self]) {
        S->input_items(&L, 0, C);
        S->ready[self] = 1;
    }
    for (blk = begin; blk < end; ++blk) {
        const int32_t m0 = blk * AOTC_WINO_LANE_M, mc = min_i32(AOTC_WINO_LANE_M, OC - m0);
        gp = gemm_shape(mc, L.th * L.tw, C);
        gp.b_rs = PANEL;
        gp.b_ps = C * PANEL;
        gp.b_padded = 1;
        gp.ldc = L.tp;
        for (e = 0; e < S->products; ++e)
            aotc_sgemm_f32(&gp, L.u + ((ptrdiff_t)e * OC + m0) * C, L.v + (ptrdiff_t)e * L.vstep, NULL,
                           L.m + e * L.mstep, NULL);
        L.m0 = m0;
        S->output_items(&L, m0, m0 + mc);
    }
#if AOTC_STREAM_STORES
    aotc_stream_fence(); /* the non-temporal stores done before the region's end */
#endif
}
#endif

#if defined(AOTC_THREADS) && AOTC_THREADS > 1
/* With the pool, where a conv has at least as many bands as threads and a lane holds the products of every
 * output channel: items are (image, band), and a thread runs a band's three steps as one thread does, in its
 * lane. Why: blocks of output channels (wino_lane_items) make each thread transform the whole band's input,
 * and a conv of 64 output channels is one block, one thread; ResNet-50's 128- and 256-channel convs took
 * 0.66-0.68 x their one-thread time at two threads that way, and their lane's blocks of 64 rows 1.2 x as long
 * on one thread as the whole products. Here no work is done twice and a band's V and M stay in their lane. */
MK_UNUSED static void wino_band_items(void *arg, int32_t begin, int32_t end) {
    const wino_job *S = (const wino_job *)arg;
    const int32_t self = aotc_thread_index(), band = S->p->nc > 0 ? S->p->nc : 1;
    wino_job L = *S;
    int32_t item;
    L.v = S->lanes + (ptrdiff_t)self * S->p->kc;
    L.m = L.v + (ptrdiff_t)S->products * S->vstep;
    L.m0 = 0;
    for (item = begin; item < end; ++item) {
        L.n = item / S->bands;
        L.ty0 = item % S->bands * band;
        L.th = min_i32(band, S->th_all - L.ty0);
        L.tiles16 = (L.th * L.tw + PANEL - 1) / PANEL * PANEL;
        S->input_items(&L, 0, S->p->in_c);
        wino_gemm_items(&L, 0, S->products);
        S->output_items(&L, 0, S->p->out_c);
    }
#if AOTC_STREAM_STORES
    aotc_stream_fence(); /* the non-temporal stores done before the region's end */
#endif
}
#endif

/* y[0, n) = act(o + r) (r may be NULL): a row of outputs the Winograd kernels assembled in o */
MK_UNUSED static void wino_finish_row(const aotc_conv_params *p, const float *o, const float *r, float *y,
                                      int32_t n) {
    int32_t i;
    /* a clamp in one pass (aotc_activate_f32's): a copy, then a pass over y, took 2.8 % of ResNet-50 */
    if (p->act == AOTC_ACT_CLAMP) {
        const float lo = p->act_lo, hi = p->act_hi;
        for (i = 0; i < n; ++i) {
            const float s = r != NULL ? o[i] + r[i] : o[i], v = s < lo ? lo : s;
            y[i] = v > hi ? hi : v;
        }
        return;
    }
    if (r != NULL)
        for (i = 0; i < n; ++i) y[i] = o[i] + r[i];
    else
        memcpy(y, o, (size_t)n * sizeof(float));
    if (p->act != AOTC_ACT_NONE) aotc_activate_f32(y, n, p->act, p->act_lo, p->act_hi, p->act_alpha);
}

/* wino_finish_row, the row finished in o (which it overwrites) and then written to y by non-temporal
 * stores (aotc_stream_f32: a lane's outputs go to arena lines the other thread has read). ResNet-18's
 * 128- and 256-channel convs at two threads, cores on different dies: 897-1006 -> 775-833 us (4 of 6;
 * the other two were not slowed); 1-4 % slower where the cores sit close (the next conv reads the
 * outputs from memory). */
MK_UNUSED static void wino_stream_row(const aotc_conv_params *p, float *o, const float *r, float *y, int32_t n) {
#if AOTC_STREAM_STORES
    int32_t i;
    if (r != NULL)
        for (i = 0; i < n; ++i) o[i] += r[i];
    if (p->act != AOTC_ACT_NONE) aotc_activate_f32(o, n, p->act, p->act_lo, p->act_hi, p->act_alpha);
    aotc_stream_f32(y, o, n);
#else
    wino_finish_row(p, o, r, y, n);
#endif
}

/* Output channel m's rows of the band: each tile row's `tile` output rows, interleaved from o (output (i, j) of
 * the band's tiles at o + (tile i + j) ostride, flat) into row, then finished into y. `tile` is a constant
 * where it is inlined, so the interleave loop is unrolled. */
static inline void wino_store_rows(const wino_job *J, int32_t m, int32_t tile, const float *o, ptrdiff_t ostride,
                                   float *row) {
    const aotc_conv_params *p = J->p;
    const int32_t OH = p->out_size[1], OW = p->out_size[2], tw = J->tw;
    const ptrdiff_t yplane = ((ptrdiff_t)J->n * p->out_c + m) * OH * OW;
    int32_t ty, i, j, t;
    for (ty = 0; ty < J->th; ++ty)
        for (i = 0; i < tile && tile * (J->ty0 + ty) + i < OH; ++i) {
            const ptrdiff_t at = yplane + (ptrdiff_t)(tile * (J->ty0 + ty) + i) * OW;
            const float *e = o + tile * i * ostride + ty * tw; /* output (i, j) of the row's tiles: e + j ostride */
            for (t = 0; t < tw; ++t)
                for (j = 0; j < tile; ++j) row[tile * t + j] = e[j * ostride + t];
            if (AOTC_STREAM_STORES) /* the pool's lanes, on x86 */
                wino_stream_row(p, row, J->res != NULL ? J->res + at : NULL, J->y + at, OW);
            else
                wino_finish_row(p, row, J->res != NULL ? J->res + at : NULL, J->y + at, OW);
        }
}

/* F(tile x tile, 3 x 3) over the whole conv: per image and band of p->nc tile rows, the input transform
 * over the input channels, the `products` GEMMs, the output transform over the output channels; scratch:
 * V (products x in_c x tp floats), then M (products x out_c x tp). With the pool, each band's
 * wino_lane_items instead, in the threads' lanes of scratch. */
MK_UNUSED static void wino_run(const aotc_conv_params *p, const float *x, const float *u, const float *bias,
                               const float *res, float *y, float *scratch, int32_t tile, int32_t products,
                               aotc_task_fn input_items, aotc_task_fn output_items) {
    const int32_t th_all = (p->out_size[1] + tile - 1) / tile, band = p->nc > 0 ? p->nc : 1;
    wino_job J;
    int32_t n;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    int band_mode;
#endif
    J.p = p, J.x = x, J.u = u, J.bias = bias, J.res = res, J.y = y;
    J.tw = (p->out_size[2] + tile - 1) / tile;
    J.tp = AOTC_CONV_PANELS(band * J.tw); /* the largest band's; V and M keep this pitch */
    J.v = scratch;
    J.vstep = (ptrdiff_t)p->in_c * J.tp + AOTC_WINO_PITCH_PAD;
    J.m = scratch + (ptrdiff_t)products * J.vstep;
    J.m0 = 0, J.mstep = (ptrdiff_t)p->out_c * J.tp + AOTC_WINO_PITCH_PAD;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    J.products = products, J.input_items = input_items, J.output_items = output_items;
    J.lanes = scratch;
    J.bands = (th_all + band - 1) / band, J.th_all = th_all;
    if (aotc_conv_winograd_lane_floats(p, tile, AOTC_THREADS, &band_mode) <= p->kc && band_mode) {
        aotc_parallel_for(wino_band_items, &J, p->batch * J.bands);
        return;
    }
#endif
    for (n = 0; n < p->batch; ++n) {
        J.n = n;
        for (J.ty0 = 0; J.ty0 < th_all; J.ty0 += band) {
            J.th = min_i32(band, th_all - J.ty0);
            J.tiles16 = (J.th * J.tw + PANEL - 1) / PANEL * PANEL;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
            {
                int32_t ready[AOTC_THREADS], t;
                for (t = 0; t < AOTC_THREADS; ++t) ready[t] = 0;
                J.ready = ready;
                aotc_parallel_for(wino_lane_items, &J, (p->out_c + AOTC_WINO_LANE_M - 1) / AOTC_WINO_LANE_M);
                continue;
            }
#endif
            aotc_parallel_for(input_items, &J, p->in_c);
            aotc_parallel_for(wino_gemm_items, &J, products);
            aotc_parallel_for(output_items, &J, p->out_c);
        }
    }
}

#endif /* AOTC_CONV_WINOGRAD_H */
