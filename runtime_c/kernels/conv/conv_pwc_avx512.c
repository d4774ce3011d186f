/* aotc_conv_pwc_f32: the AVX-512F path of the implicit GEMM for 1 x 1 convs with many input channels
 * (aot/kernels/conv_avx512.py: on planes of at most 16 x 16 before posx, on larger ones after it): the
 * vectors run along 16 output channels, not along positions. Built without AVX-512F it runs
 * the implicit GEMM (paths_avx512.h).
 *
 * Why: MobileNet-v2's and ResNet-18's 1 x 1 convs on 7 x 7 and 14 x 14 planes (64 to 960 input
 * channels) ran 1.15-1.45x slower than onnxruntime's NCHWc convs (issue 24). With vectors along
 * the positions a 7 x 7 plane is 4 vectors for 49 positions (a quarter of the lanes idle); the
 * implicit GEMM's tiles of 6 positions x 16 channels hold 6 accumulators and store transposed a
 * float at a time. Output channels come in multiples of 16 in these nets, so here:
 *
 *   a register tile is MR positions (4 to 8, consecutive outputs of a run: the whole plane at
 *   stride 1, an output row otherwise) x NR vectors of 16 output channels (1 to 3), at most 24
 *   accumulators. Per input channel k: NR loads of W^T's packed rows, MR broadcasts of X (folded
 *   into the multiply-adds), MR x NR multiply-adds. A plane's positions are split into tiles of
 *   nearly equal size (49 = 7 x 7, 196 = 21 x 8 + 4 x 7), so no lane is idle but the output
 *   channels' last partial vector (1000 = 62 x 16 + 8; W^T is zero-padded).
 *   the tile goes out transposed in registers (16 channels x 8 positions: 24 shuffles), two
 *   channel rows a vector, by masked stores; the bias is the accumulators' start, the residual
 *   and the activation (none, clamp, leaky) are applied to the transposed rows: one store each.
 *
 * A work item is (image, group, block of 48 output channels): W^T's block (K x 48 floats) stays in
 * L2 while every tile of the plane passes over it; at stride 2 where W^T is smaller than the input
 * rows read, (image, group, chunk of output rows, block), so a chunk's input stays in L2 instead.
 *
 * Measured (Zen 4, one thread, single convs, best of 30; main's path in brackets): 320 -> 1280 on
 * 7 x 7 354 us (421), 960 -> 320 7 x 7 259 (297), 96 -> 576 14 x 14 201 (231), 64 -> 384 14 x 14 93
 * (113), 256 -> 512 stride 2 to 7 x 7 114 (141), 512 -> 1000 13 x 13 1514 (1626): 52-58 GMAC/s
 * against the FMA unit's 57. */
#include "conv_internal.h"
#include "conv_common_avx512.h"

#if AOTC_X86_PATHS /* paths_avx512.h */
#define PWC_ON 1
#include <immintrin.h>

#define PWC_NR 3 /* vectors of 16 output channels per tile */
#ifndef PWC_KMIN
#define PWC_KMIN 64 /* fewest input channels per group */
#endif
/* Rows of outputs at a time where W^T is smaller than the input rows the conv reads (ResNet-18's
 * 64 -> 128 stride-2 shortcut on 56 x 56): every block of output channels over a chunk of rows whose
 * input rows (K x IW floats each) fill at most 64 K floats, so the chunk is read from L2, not from L3
 * once per block. */
#define PWC_CHUNK_FLOATS 65536

typedef struct {
    const aotc_conv_params *p;
    const float *x, *wt, *bias, *res;
    float *y;
    int32_t blocks; /* blocks of PWC_NR * 16 output channels per group */
    int32_t rows;   /* output rows per chunk (all of them: one chunk) */
    int32_t parts;  /* parts each run of tiles is cut into: more than 1 only to give threads work */
} pwc_job;

/* What a tile needs besides its accumulators: output rows (channel planes) `ys` floats apart; the
 * output channels valid in the tile's last vector; the activation. */
typedef struct {
    ptrdiff_t xs, ys;
    int32_t last_rows, act;
    float lo, hi, leak;
} pwc_tile;

/* v[0 .. 7] (lanes: 16 output channels; v[i]: position i of the tile, zero past MR) transposed
 * and stored: channel c's MR positions to y + c * ys (+ the residual from res + c * ys, then the
 * activation), c < rows. A call (the vectors go in registers): inlined into each of the 30 tiles it
 * doubled conv_implicit.c's code (+106 KB) for no measurable speed. */
static MK_NOINLINE void pwc_store16(const pwc_tile *T, __m512 v0, __m512 v1, __m512 v2, __m512 v3, __m512 v4,
                                  __m512 v5, __m512 v6, __m512 v7, int32_t mr, int32_t rows, const float *res,
                                  float *y) {
    const __m512i lo_idx = _mm512_set_epi32(23, 22, 21, 20, 7, 6, 5, 4, 19, 18, 17, 16, 3, 2, 1, 0);
    const __m512i hi_idx = _mm512_set_epi32(31, 30, 29, 28, 15, 14, 13, 12, 27, 26, 25, 24, 11, 10, 9, 8);
    const __mmask16 mlo = (__mmask16)((1u << mr) - 1u), mhi = (__mmask16)(mlo << 8);
    const ptrdiff_t ys = T->ys;
    /* per 128-bit lane L (channels 4L .. 4L + 3): t<2a> = positions 2a, 2a + 1 of channels 4L, 4L + 1
     * interleaved; t<2a+1> the same of channels 4L + 2, 4L + 3 */
    const __m512 t0 = _mm512_unpacklo_ps(v0, v1), t1 = _mm512_unpackhi_ps(v0, v1);
    const __m512 t2 = _mm512_unpacklo_ps(v2, v3), t3 = _mm512_unpackhi_ps(v2, v3);
    const __m512 t4 = _mm512_unpacklo_ps(v4, v5), t5 = _mm512_unpackhi_ps(v4, v5);
    const __m512 t6 = _mm512_unpacklo_ps(v6, v7), t7 = _mm512_unpackhi_ps(v6, v7);
    /* u<j>: per lane L, positions 0 .. 3 of channel 4L + j; u<4+j>: positions 4 .. 7 */
    __m512 u[8];
    int32_t j;
    u[0] = _mm512_shuffle_ps(t0, t2, 0x44), u[1] = _mm512_shuffle_ps(t0, t2, 0xEE);
    u[2] = _mm512_shuffle_ps(t1, t3, 0x44), u[3] = _mm512_shuffle_ps(t1, t3, 0xEE);
    u[4] = _mm512_shuffle_ps(t4, t6, 0x44), u[5] = _mm512_shuffle_ps(t4, t6, 0xEE);
    u[6] = _mm512_shuffle_ps(t5, t7, 0x44), u[7] = _mm512_shuffle_ps(t5, t7, 0xEE);
    _Pragma("GCC unroll 4") for (j = 0; j < 4; ++j) {
        /* z[0]: channel j's 8 positions in lanes 0 .. 7, channel 4 + j's in 8 .. 15; z[1]: 8 + j, 12 + j */
        __m512 z[2];
        int32_t h;
        z[0] = _mm512_permutex2var_ps(u[j], lo_idx, u[4 + j]);
        z[1] = _mm512_permutex2var_ps(u[j], hi_idx, u[4 + j]);
        _Pragma("GCC unroll 2") for (h = 0; h < 2; ++h) {
            const int32_t c = 8 * h + j; /* the rows c (lanes 0 .. 7) and c + 4 (lanes 8 .. 15) */
            const __mmask16 m = (__mmask16)((c < rows ? mlo : 0) | (c + 4 < rows ? mhi : 0));
            __m512 a = z[h];
            /* lanes 8 .. 15 of a vector at row c + 4, less 8 floats, are row c + 4's positions 0 .. 7
             * (masked-off lanes are never touched) */
            if (res != NULL)
                a = _mm512_add_ps(a, _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(m & mlo, res + c * ys), m & mhi,
                                                          res + (c + 4) * ys - 8));
            if (T->act == AOTC_ACT_LEAKY) {
                a = _mm512_mask_mul_ps(a, _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_LT_OQ), a,
                                       _mm512_set1_ps(T->leak));
            } else {
                a = _mm512_min_ps(_mm512_max_ps(a, _mm512_set1_ps(T->lo)), _mm512_set1_ps(T->hi));
            }
            _mm512_mask_storeu_ps(y + c * ys, m & mlo, a);
            _mm512_mask_storeu_ps(y + (c + 4) * ys - 8, m & mhi, a);
        }
    }
}

/* MR positions (input x + i * SX, k rows xs apart) x NR vectors of output channels (W^T's packed
 * panels from wt, K rows of PANEL each; the bias from bias, valid lanes bmask of the last). */
#define PWC_TILE(MR, NR, SX)                                                                           \
    static MK_NOINLINE void pwc_t##MR##_##NR##_##SX(const pwc_tile *T, const float *x, const float *wt, int32_t K, \
                                                    const float *bias, __mmask16 bmask, const float *res, float *y, \
                                                    const float *pre, int32_t npre) {                  \
        __m512 acc[MR][NR];                                                                            \
        const ptrdiff_t xs = T->xs, ws = (ptrdiff_t)K * PANEL;                                         \
        int32_t i, j, k;                                                                               \
        _Pragma("GCC unroll 3") for (j = 0; j < (NR); ++j) {                                           \
            const __m512 b = bias == NULL ? _mm512_setzero_ps()                                        \
                                          : _mm512_maskz_loadu_ps(j == (NR) - 1 ? bmask : (__mmask16)0xFFFF, bias + 16 * j); \
            _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) acc[i][j] = b;                          \
        }                                                                                              \
        for (k = 0; k < K; ++k, x += xs, wt += PANEL) {                                                \
            __m512 w[NR];                                                                              \
            if (k < npre) _mm_prefetch((const char *)(pre + (ptrdiff_t)16 * k), _MM_HINT_T1);          \
            _Pragma("GCC unroll 3") for (j = 0; j < (NR); ++j) w[j] = _mm512_loadu_ps(wt + j * ws);    \
            _Pragma("GCC unroll 8") for (i = 0; i < (MR); ++i) {                                       \
                const __m512 xv = _mm512_set1_ps(x[i * (SX)]);                                         \
                _Pragma("GCC unroll 3") for (j = 0; j < (NR); ++j) acc[i][j] = _mm512_fmadd_ps(w[j], xv, acc[i][j]); \
            }                                                                                          \
        }                                                                                              \
        _Pragma("GCC unroll 3") for (j = 0; j < (NR); ++j) {                                           \
            const __m512 z = _mm512_setzero_ps();                                                      \
            pwc_store16(T, acc[0][j], (MR) > 1 ? acc[1 % (MR)][j] : z, (MR) > 2 ? acc[2 % (MR)][j] : z, \
                        (MR) > 3 ? acc[3 % (MR)][j] : z, (MR) > 4 ? acc[4 % (MR)][j] : z,              \
                        (MR) > 5 ? acc[5 % (MR)][j] : z, (MR) > 6 ? acc[6 % (MR)][j] : z,              \
                        (MR) > 7 ? acc[7 % (MR)][j] : z, (MR), j == (NR) - 1 ? T->last_rows : 16,      \
                        res != NULL ? res + 16 * j * T->ys : NULL, y + 16 * j * T->ys);                \
        }                                                                                              \
    }
#define PWC_TILES(NR, SX) PWC_TILE(4, NR, SX) PWC_TILE(5, NR, SX) PWC_TILE(6, NR, SX) PWC_TILE(7, NR, SX) PWC_TILE(8, NR, SX)
PWC_TILES(1, 1)
PWC_TILES(2, 1)
PWC_TILES(3, 1)
PWC_TILES(1, 2)
PWC_TILES(2, 2)
PWC_TILES(3, 2)
#undef PWC_TILES
#undef PWC_TILE

typedef void (*pwc_fn)(const pwc_tile *, const float *, const float *, int32_t, const float *, __mmask16,
                       const float *, float *, const float *, int32_t);

/* [stride - 1][NR - 1][MR - 4] */
static pwc_fn const pwc_tiles[2][3][5] = {
    {{pwc_t4_1_1, pwc_t5_1_1, pwc_t6_1_1, pwc_t7_1_1, pwc_t8_1_1},
     {pwc_t4_2_1, pwc_t5_2_1, pwc_t6_2_1, pwc_t7_2_1, pwc_t8_2_1},
     {pwc_t4_3_1, pwc_t5_3_1, pwc_t6_3_1, pwc_t7_3_1, pwc_t8_3_1}},
    {{pwc_t4_1_2, pwc_t5_1_2, pwc_t6_1_2, pwc_t7_1_2, pwc_t8_1_2},
     {pwc_t4_2_2, pwc_t5_2_2, pwc_t6_2_2, pwc_t7_2_2, pwc_t8_2_2},
     {pwc_t4_3_2, pwc_t5_3_2, pwc_t6_3_2, pwc_t7_3_2, pwc_t8_3_2}}};

static void pwc_items(void *arg, int32_t begin, int32_t end) {
    const pwc_job *J = (const pwc_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t sy = p->strides[1], sx = p->strides[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)OH * OW;
    const ptrdiff_t group_w = (ptrdiff_t)(mg + PANEL - 1) / PANEL * PANEL * cg;
    /* runs of consecutive outputs whose inputs are sx apart: the whole plane (stride 1, same size), or a row */
    const int flat = sx == 1 && sy == 1 && IW == OW;
    const int32_t runs = flat ? 1 : OH, run = flat ? (int32_t)plane : OW;
    const int32_t tiles = (run + 7) / 8, small = run / tiles, big = run % tiles; /* `big` tiles of small + 1 */
    int32_t item, r, t;
    pwc_tile T;
    T.xs = in_plane, T.ys = plane, T.act = p->act;
    T.lo = p->act == AOTC_ACT_CLAMP ? p->act_lo : -INFINITY;
    T.hi = p->act == AOTC_ACT_CLAMP ? p->act_hi : INFINITY;
    T.leak = p->act_alpha;
    const int32_t chunks = (runs + J->rows - 1) / J->rows;
    for (item = begin; item < end; ++item) {
        const int32_t jb = item % J->blocks, part = item / J->blocks % J->parts;
        const int32_t ch = item / J->blocks / J->parts % chunks, gi = item / J->blocks / J->parts / chunks;
        /* the part's tiles of each run; tile t starts at t small + min(t, big) and has small + (t < big)
         * outputs whatever the part, so the outputs are the same bits for any number of parts */
        const int32_t t0 = (int32_t)((int64_t)tiles * part / J->parts);
        const int32_t t1 = (int32_t)((int64_t)tiles * (part + 1) / J->parts);
        const int32_t g = gi % p->group, n = gi / p->group;
        const int32_t c0 = jb * PWC_NR * 16, nch = min_i32(PWC_NR * 16, mg - c0), nr = (nch + 15) / 16;
        const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;
        const float *wb = J->wt + g * group_w + (ptrdiff_t)c0 * cg; /* panel c0 / 16 */
        const float *bb = J->bias != NULL ? J->bias + (ptrdiff_t)g * mg + c0 : NULL;
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + c0) * plane;
        const __mmask16 bmask = (__mmask16)(nch % 16 == 0 ? 0xFFFF : (1u << nch % 16) - 1u);
        /* on a flat plane (one run: 7 x 7, 14 x 14), the W^T rows of the next block of this group (contiguous
         * after this block's: whole panels, the last zero-padded) are prefetched into L2 over the item's tiles,
         * a line per input channel inside the tiles' loops (the rest of a tile's share, where it has more
         * lines than input channels, before it): a block's W^T comes from DRAM in a model (ResNet-50's 100 MB
         * of weights do not stay in any cache from one run to the next), and its first tile, which alone
         * reads it from there, took twice as long as the others on 7 x 7 planes. Spread so, not issued at
         * once before each tile (which cost ResNet-50 1.5 % with blocks of up to 256 rows and MobileNet-v2's
         * 960 -> 320 7 x 7 5 %, and was kept to blocks of up to 192 rows on planes of up to 256 positions):
         * ResNet-50's 2048 -> 512 7 x 7 convs 509-527 -> 405-416 us, 512 -> 2048 500 -> 460, 1024 -> 256
         * 14 x 14 440 -> 420, the whole net 28.1 -> 27.5 ms; MobileNet-v2's 7 x 7 and 14 x 14 ones 0-12 %
         * faster, 3.06 -> 2.99 ms (Zen 5, minima of 7 to 9 alternating rounds, AOTC_TAP per node, load 5-7).
         * Not on the strided convs: ResNet-50's 1024 -> 2048 stride-2 shortcut to 7 x 7 went 1-3 % slower. */
        const float *pre = wb + (ptrdiff_t)PWC_NR * 16 * cg;
        const int32_t r0 = ch * J->rows, r1 = min_i32(runs, (ch + 1) * J->rows), ntile = (r1 - r0) * (t1 - t0);
        const int32_t pre_lines = flat && jb + 1 < J->blocks
                                      ? (int32_t)(((ptrdiff_t)min_i32(PWC_NR * 16, (mg + PANEL - 1) / PANEL * PANEL -
                                                                                      (c0 + PWC_NR * 16)) *
                                                       cg + 15) / 16)
                                      : 0;
        int32_t s = 0; /* the item's tiles so far */
        T.last_rows = nch - 16 * (nr - 1);
        for (r = r0; r < r1; ++r) {
            const float *xr = xg + (flat ? 0 : (ptrdiff_t)r * sy * IW);
            int32_t i = t0 * small + min_i32(t0, big); /* the part's first output's position in the run */
            ptrdiff_t q = (ptrdiff_t)r * run + i;       /* and in the plane */
            for (t = t0; t < t1; ++t, ++s) {
                const int32_t mr = small + (t < big);
                /* this tile's share of the next block's W^T, into L2: a line each k, the rest at once */
                const int32_t l0 = (int32_t)((int64_t)pre_lines * s / ntile);
                const int32_t l1 = (int32_t)((int64_t)pre_lines * (s + 1) / ntile);
                int32_t l;
                for (l = l0 + cg; l < l1; ++l) _mm_prefetch((const char *)(pre + (ptrdiff_t)16 * l), _MM_HINT_T1);
                pwc_tiles[sx - 1][nr - 1][mr - 4](&T, xr + (ptrdiff_t)i * sx, wb, cg, bb, bmask,
                                                  J->res != NULL ? J->res + yo + q : NULL, J->y + yo + q,
                                                  pre + (ptrdiff_t)16 * l0, min_i32(cg, l1 - l0));
                q += mr, i += mr;
            }
        }
    }
}

/* A 1 x 1 conv (no pads, strides 1 or 2 along the rows, NCHW in and out) if this path takes it:
 * 1, else 0. Runs of at least 4 outputs (tiles of 4 to 8). */
static int pwc(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
               float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t sy = p->strides[1], sx = p->strides[2];
    const int flat = sx == 1 && sy == 1 && IW == OW;
    pwc_job J;
    if (p->in_nhwc != 0 || p->out_nhwc != 0 || p->in_size[0] != 1 || p->out_size[0] != 1 || p->kernel[0] != 1 ||
        p->kernel[1] != 1 || p->kernel[2] != 1 || p->pads[0] != 0 || p->pads[1] != 0 || p->pads[2] != 0 ||
        !x86c_act_ok(p) || (sx != 1 && sx != 2) || (flat ? (ptrdiff_t)OH * OW : OW) < 4 ||
        (OH - 1) * sy >= IH || (OW - 1) * sx >= IW)
        return 0;
    J.p = p, J.x = x, J.wt = wt, J.bias = bias, J.res = res, J.y = y;
    J.blocks = (mg + PWC_NR * 16 - 1) / (PWC_NR * 16);
    J.rows = flat ? 1 : OH;
    if (!flat && (ptrdiff_t)cg * mg < (ptrdiff_t)cg * OH * IW) /* W^T smaller than the input rows read */
        J.rows = (int32_t)(PWC_CHUNK_FLOATS / ((ptrdiff_t)cg * IW) > 1 ? PWC_CHUNK_FLOATS / ((ptrdiff_t)cg * IW) : 1);
    {
        const int32_t items = p->batch * p->group * (((flat ? 1 : OH) + J.rows - 1) / J.rows) * J.blocks;
        J.parts = 1;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
        /* too few blocks and chunks to share (MobileNet-v2's 384 -> 64 14 x 14 projections: a block of 48
         * channels and one of 16, 1.27 x faster on two threads than on one): cut the runs too */
        if (items < 4 * AOTC_THREADS) {
            const int32_t tiles = ((flat ? OH * OW : OW) + 7) / 8;
            J.parts = min_i32(tiles, (4 * AOTC_THREADS + items - 1) / items);
        }
#endif
        aotc_parallel_for(pwc_items, &J, items * J.parts);
    }
    return 1;
}

/* The copy of aotc_conv_pwcs2_f32: for each input plane (image, channel) of the items, its output rows'
 * inputs (rows sy apart, columns sx apart) as one plane of OH x OW. */
typedef struct {
    const aotc_conv_params *p;
    const float *x;
    float *d;
} pwcs2_job;

static void pwcs2_gather(void *arg, int32_t begin, int32_t end) {
    const pwcs2_job *J = (const pwcs2_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2], sy = p->strides[1], sx = p->strides[2];
    const ptrdiff_t in_plane = (ptrdiff_t)p->in_size[1] * IW, plane = (ptrdiff_t)OH * OW;
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    int32_t c, oy, o;
    for (c = begin; c < end; ++c) {
        for (oy = 0; oy < OH; ++oy) {
            const float *xr = J->x + (ptrdiff_t)c * in_plane + (ptrdiff_t)oy * sy * IW;
            float *dr = J->d + (ptrdiff_t)c * plane + (ptrdiff_t)oy * OW;
            for (o = 0; o < OW; o += 16) {
                const __mmask16 out = x86c_lanes(o, 0, OW);
                if (sx == 1) {
                    _mm512_mask_storeu_ps(dr + o, out, _mm512_maskz_loadu_ps(out, xr + o));
                } else { /* inputs 2 o .. 2 o + 31, those inside the row */
                    const __m512 a = _mm512_maskz_loadu_ps(x86c_lanes(2 * o, 0, IW), xr + 2 * o);
                    const __m512 b = _mm512_maskz_loadu_ps(x86c_lanes(2 * o + 16, 0, IW), xr + 2 * o + 16);
                    _mm512_mask_storeu_ps(dr + o, out, _mm512_permutex2var_ps(a, even, b));
                }
            }
        }
    }
}

/* The strided conv as pwc's stride-1 one on the copied plane: 1, else 0 */
static int pwcs2(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
                 float *y, float *scratch) {
    aotc_conv_params q = *p;
    pwcs2_job J;
    const int32_t sx = p->strides[2];
    if (scratch == NULL || p->in_nhwc != 0 || p->out_nhwc != 0 || p->in_size[0] != 1 || p->out_size[0] != 1 ||
        p->batch != 1 || (sx != 1 && sx != 2) || p->strides[1] < 1 || p->pads[1] != 0 || p->pads[2] != 0 ||
        p->kernel[1] != 1 || p->kernel[2] != 1 || (p->out_size[1] - 1) * p->strides[1] >= p->in_size[1] ||
        (p->out_size[2] - 1) * sx >= p->in_size[2])
        return 0;
    q.in_size[1] = p->out_size[1], q.in_size[2] = p->out_size[2], q.strides[1] = q.strides[2] = 1;
    J.p = p, J.x = x, J.d = scratch;
    aotc_parallel_for(pwcs2_gather, &J, p->in_c);
    return pwc(&q, scratch, wt, bias, res, y);
}

#else
#define PWC_ON 0
#endif

void aotc_conv_pwc_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                       const float *res, float *y) {
#if PWC_ON
    if (pwc(p, x, wt, bias, res, y)) return;
    X86_PATH_MISSED("aotc_conv_pwc_f32");
#else
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}

void aotc_conv_pwcs2_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                         const float *res, float *y, float *scratch) {
#if PWC_ON
    if (pwcs2(p, x, wt, bias, res, y, scratch)) return;
    X86_PATH_MISSED("aotc_conv_pwcs2_f32");
#else
    (void)scratch;
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}
