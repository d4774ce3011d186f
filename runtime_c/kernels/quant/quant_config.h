/* What both instantiations of quant_impl.h (quant_int8.c, quant_uint8.c) are compiled with: the level on
 * DSP cores and the vector paths the target has. Included once, before quant_impl.h. */
#ifndef AOTC_QUANT_CONFIG_H
#define AOTC_QUANT_CONFIG_H

#include "aotc_quant.h"

#include <math.h>   /* fmaf */
#include <string.h> /* memcpy */

/* On cores with the DSP extension the int8 kernels are the network: at -Os, gcc stops inlining and
 * if-converting their inner loops (10-15 % more instructions than at -O2), so quant_int8.c and quant_uint8.c are built
 * at -O2 whatever the level (issue 27: speed that does not depend on it). */
#if defined(__OPTIMIZE_SIZE__) && defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")
#endif

/* With AVX-512 VNNI (a -march that has it), the convolutions of quant_avx512vnni.h: byte dot products by
 * vpdpbusd, requantisation 16 lanes at a time. */
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#define AOTC_QUANT_VNNI 1
#include "aotc_threads.h" /* --threads: the convs split over the pool (p->lanes) */
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
#define AOTC_QX86_MAX_LANES AOTC_THREADS
#else
#define AOTC_QX86_MAX_LANES 1
#endif
#define AOTC_QX86_WMEMO 8 /* blocks of a depthwise range whose windows a thread keeps */
/* A thread's state through a conv's items (aotc_parallel_for), its own cache lines: what its lane of the
 * scratch holds from one item to the next */
typedef struct {
    int32_t held;  /* the block or range whose patch quads its scratch holds (-1: none) */
    int32_t wkey;  /* qconv_dense: the pass (and channel chunk) whose re-ordered weights its work holds (-1: none) */
    int32_t init;  /* its work's cache of blocks cleared */
    int32_t next;  /* qconv_dense: the cache's next entry */
    int32_t nb, bpos[16], blanes[16]; /* qconv_dense: the blocks of the range it holds */
    int32_t sums[64];                 /* qconv_patches_vnni: the held block's patch sums */
    /* depthwise_flat: the windows of range wrange's blocks (x86_windows, up to AOTC_QX86_WMEMO), for its next chunk
     * of channels */
    __m512i iv[AOTC_QX86_WMEMO][AOTC_QX86_KG];
    __mmask64 lm[AOTC_QX86_WMEMO][AOTC_QX86_KG];
    int32_t lo_off[AOTC_QX86_WMEMO][AOTC_QX86_KG], wlanes[AOTC_QX86_WMEMO], wrange;
} __attribute__((aligned(64))) aotc_qx86_lane;

/* Whether a conv of `work` multiply-adds (a depthwise conv's: taps) splits over the pool: a --threads build, a
 * lane of scratch a thread (p->lanes), and work enough (AOTC_QCONV_POOL_MIN_MACS, AOTC_QCONV_POOL_MIN_TAPS) */
static inline int aotc_qx86_split(const aotc_qconv_params *p, int64_t work) {
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    const int depthwise = p->group == p->in_c && p->group == p->out_c && p->group > 1;
    return p->lanes >= AOTC_THREADS && work >= (depthwise ? AOTC_QCONV_POOL_MIN_TAPS : AOTC_QCONV_POOL_MIN_MACS);
#else
    (void)p, (void)work;
    return 0;
#endif
}

/* A split conv's output positions an item (the whole plane unsplit): where a block of 16 positions that spans two
 * output rows still reads windows of 64 bytes (every stride-1 conv, and stride 2 on planes up to 15 wide), so that
 * the whole plane's blocks start at multiples of 16, `most` (a multiple of 16: the same blocks), else whole rows,
 * as many as `most` holds, at least one (blocks end at a row's end there). (Rows of 56 at stride 1 had made 4
 * blocks a row, not 3.5: 12 % more work) */
static inline int32_t aotc_qx86_run(const aotc_qconv_params *p, int split, int32_t most) {
    if (!split) return p->out_h * p->out_w;
    if (p->stride_h * p->in_w + (15 - p->out_w) * p->stride_w + (p->k_w - 1) * p->dil_w <= 63) return most;
    return most >= p->out_w ? most / p->out_w * p->out_w : p->out_w;
}

/* Chunks of channels to cut each of `items` into so that the pool has about 8 items a thread, at most `most` */
static inline int32_t aotc_qx86_chunks(int32_t items, int32_t most, int split) {
    const int32_t want = split ? (8 * AOTC_QX86_MAX_LANES + items - 1) / items : 1;
    return want < most ? (want > 1 ? want : 1) : (most > 1 ? most : 1);
}
#else
#define AOTC_QUANT_VNNI 0
#endif

/* With AVX2 and not VNNI (an x86-64-v3 build): the patch quads' sums by vpmaddwd (quant_impl.h
 * qconv_quad_lanes). */
#if !AOTC_QUANT_VNNI && defined(__AVX2__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#include "avx2_lanes.h" /* the 4 x 16 register block (quant_impl.h qavx2_lanes) */
#define AOTC_QUANT_AVX2 1
#else
#define AOTC_QUANT_AVX2 0
#endif

/* With the Arm DSP extension (Cortex-M4, M33, M55), dual 16-bit multiply-accumulates. */
#include "quant_dsp.h"

#endif
