/* aotc_conv_igb_f32: the AVX-512F path of the implicit GEMM for 3 x 3 same-size convs that neither Winograd (which
 * comes first where its transforms fit the step's memory and it expects a gain) nor conv_ig_avx512.h's igx3 takes.
 * Built without AVX-512F it runs the implicit GEMM (paths_avx512.h).
 *
 * Why: the implicit GEMM's tiles go by class of positions (interior, border rows and columns,
 * corners), each split into tiles of at most 6 positions x 16 output channels, and every tile streams
 * its block of W^T (147 KiB for 256 input channels) from L2 again. On small planes most classes are a
 * few positions (a 7 x 7 output: 9 classes of 1 to 25 positions), so most tiles run 1 to 4 accumulator
 * chains: ResNet-18's 7 x 7 convs ran at about a third of the FMA peak.
 *
 *   igb3   3 x 3, stride 1, pads of 1 (same size), output channels per group a multiple of 8:
 *          a register block of P vectors of 16 positions (a flat run of the output plane, P <= 3)
 *          x 8 output channels, 24 accumulators. Per input channel and tap P masked loads (zero
 *          where the tap falls outside the image, as igx3) and 8 weight broadcasts feed 8 P
 *          multiply-adds; no classes, so every position of the plane runs in full blocks but
 *          the plane's last vector. Items go position blocks innermost, so a block of W^T (8
 *          channels' half of PANEL-wide rows) is read from L2 by every position block in turn.
 *          A plane's last few positions alone in its last vector (7 x 7's 49th) go by igb3_tail,
 *          the input broadcast into vectors of the 8 channels: ResNet-18's 7 x 7 convs 3.05 ->
 *          2.5 ms, about 80 % of the FMA peak.
 *          On any plane and any number of input channels: it first took only planes whose interior
 *          has fewer than 64 positions and more than 64 input channels per group, from an earlier
 *          machine's measurement of ResNet-18's 56 x 56 to 14 x 14 convs (the implicit GEMM about 86 %
 *          of the FMA peak, this block 79 %). On this VM's Intel Xeon (2 MiB L2; one thread, chains
 *          of 2 to 4 same convs with ReLU at the tight arena, where Winograd finds no memory, min of 6 to 8
 *          alternating rounds, 2026-12-01) this block ran in 0.52 to 0.78 x the implicit GEMM's time on
 *          every shape tried: 256 -> 256 on 14 x 14 14.0 -> 9.3 ms (OpenVINO 9.6), on 28 x 28 62.7 ->
 *          35.3 ms, 512 -> 512 on 28 x 28 0.52 x, 64 -> 64 on 8 x 8 (ResNet-8's) 0.73 x, 40 on 32 x 32
 *          0.60 x, 24 on 56 x 56 0.54 x, 8 on 14 x 14 0.54 x; outputs within 1e-5.
 *
 * Bias, residual and activation in registers (x86c_finish), stored once, NCHW. W^T is the
 * implicit GEMM's packing: per group, panels of PANEL output channels, k_rows rows of PANEL floats,
 * row (c, ky, kx). */
#include "conv_ig_avx512.h"

#if IGX_ON

#define IGB_M 8 /* output channels per block */

/* the block's 8 P accumulators += the tap's inputs (P masked loads) x its 8 weights */
#define IGB_TAP(P, T, DY, DX)                                                                          \
    {                                                                                                  \
        __m512 xv[P];                                                                                  \
        const float *wr = wc + (T) * PANEL;                                                            \
        _Pragma("GCC unroll 4") for (v = 0; v < (P); ++v)                                              \
            xv[v] = _mm512_maskz_loadu_ps(mk[v][T], xc + 16 * v + (DY) * W + (DX));                    \
        _Pragma("GCC unroll 8") for (m = 0; m < IGB_M; ++m) {                                          \
            const __m512 w_ = _mm512_set1_ps(wr[m]);                                                   \
            _Pragma("GCC unroll 4") for (v = 0; v < (P); ++v) acc[v][m] = _mm512_fmadd_ps(w_, xv[v], acc[v][m]); \
        }                                                                                              \
    }

/* One block: P vectors of positions from p0, output channels [j, j + 8) of group g, image n. */
#define IGB3_BLOCK(NAME, P)                                                                            \
    static MK_NOINLINE void NAME(const igx_job *J, int32_t n, int32_t g, int32_t j, ptrdiff_t p0) {    \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t H = p->out_size[1], W = p->out_size[2];                                          \
        const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;                               \
        const ptrdiff_t plane = (ptrdiff_t)H * W, k_rows = (ptrdiff_t)cg * 9;                          \
        const ptrdiff_t group_w = (ptrdiff_t)(mg + PANEL - 1) / PANEL * PANEL * k_rows;                \
        const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * plane + p0;            \
        const float *wb = J->wt + g * group_w + (ptrdiff_t)(j / PANEL) * k_rows * PANEL + j % PANEL;   \
        const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + j) * plane + p0;           \
        __mmask16 mk[P][9], in[P];                                                                     \
        __m512 acc[P][IGB_M];                                                                          \
        int32_t v, m, c;                                                                               \
        for (v = 0; v < (P); ++v) { /* the lanes' masks: inside; a row above, below; a column left, right */ \
            x86c_masks3x3(p0 + 16 * (ptrdiff_t)v, H, W, mk[v]);                                       \
            in[v] = mk[v][4];                                                                          \
        }                                                                                              \
        for (m = 0; m < IGB_M; ++m) {                                                                  \
            const __m512 b0 = _mm512_set1_ps(J->bias != NULL ? J->bias[g * mg + j + m] : 0.0f);       \
            for (v = 0; v < (P); ++v) acc[v][m] = b0;                                                  \
        }                                                                                              \
        for (c = 0; c < cg; ++c) {                                                                     \
            const float *xc = xg + (ptrdiff_t)c * plane, *wc = wb + (ptrdiff_t)c * 9 * PANEL;          \
            IGB_TAP(P, 0, -1, -1) IGB_TAP(P, 1, -1, 0) IGB_TAP(P, 2, -1, 1)                            \
            IGB_TAP(P, 3, 0, -1) IGB_TAP(P, 4, 0, 0) IGB_TAP(P, 5, 0, 1)                               \
            IGB_TAP(P, 6, 1, -1) IGB_TAP(P, 7, 1, 0) IGB_TAP(P, 8, 1, 1)                               \
        }                                                                                              \
        _Pragma("GCC unroll 8") for (m = 0; m < IGB_M; ++m)                                            \
            _Pragma("GCC unroll 4") for (v = 0; v < (P); ++v) {                                        \
                const ptrdiff_t o = yo + (ptrdiff_t)m * plane + 16 * (ptrdiff_t)v;                     \
                x86c_finish(p, acc[v][m], in[v], J->res != NULL ? J->res + o : NULL, J->y + o);         \
            }                                                                                          \
    }
IGB3_BLOCK(igb3_block3, 3)
IGB3_BLOCK(igb3_block2, 2)
IGB3_BLOCK(igb3_block1, 1)
#undef IGB3_BLOCK
#undef IGB_TAP

/* The plane's last few positions [q0, plane) (at most IGB_TAIL, alone in the last vector: 7 x 7's
 * 49th), output channels [j, j + 8): per position a vector of the 8 channels summed over the
 * taps inside the image, the input broadcast (4 chains), where a block of 16 positions would
 * spend its 16 lanes' multiply-adds on the one or few. */
#define IGB_TAIL 4
static MK_NOINLINE void igb3_tail(const igx_job *J, int32_t n, int32_t g, int32_t j, ptrdiff_t q0) {
    const aotc_conv_params *p = J->p;
    const int32_t H = p->out_size[1], W = p->out_size[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const ptrdiff_t plane = (ptrdiff_t)H * W, k_rows = (ptrdiff_t)cg * 9;
    const ptrdiff_t group_w = (ptrdiff_t)(mg + PANEL - 1) / PANEL * PANEL * k_rows;
    const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * plane;
    const float *wb = J->wt + g * group_w + (ptrdiff_t)(j / PANEL) * k_rows * PANEL + j % PANEL;
    ptrdiff_t q;
    int32_t c, t, m;
    for (q = q0; q < plane; ++q) {
        const int32_t oy = (int32_t)(q / W), ox = (int32_t)(q % W);
        int32_t taps[9], nt = 0;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        float v[IGB_M];
        for (t = 0; t < 9; ++t) /* the taps inside the image */
            if (oy + t / 3 - 1 >= 0 && oy + t / 3 - 1 < H && ox + t % 3 - 1 >= 0 && ox + t % 3 - 1 < W) taps[nt++] = t;
        for (c = 0; c < cg; ++c) {
            const float *xc = xg + (ptrdiff_t)c * plane + q, *wc = wb + (ptrdiff_t)c * 9 * PANEL;
            for (t = 0; t < nt; ++t) {
                const int32_t k = taps[t];
                const __m256 xv = _mm256_set1_ps(xc[(k / 3 - 1) * W + k % 3 - 1]);
                const __m256 wv = _mm256_loadu_ps(wc + k * PANEL);
                if ((t & 3) == 0) a0 = _mm256_fmadd_ps(xv, wv, a0);
                else if ((t & 3) == 1) a1 = _mm256_fmadd_ps(xv, wv, a1);
                else if ((t & 3) == 2) a2 = _mm256_fmadd_ps(xv, wv, a2);
                else a3 = _mm256_fmadd_ps(xv, wv, a3);
            }
        }
        _mm256_storeu_ps(v, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
        for (m = 0; m < IGB_M; ++m) {
            const ptrdiff_t o = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + j + m) * plane + q;
            float r = v[m] + (J->bias != NULL ? J->bias[g * mg + j + m] : 0.0f);
            if (J->res != NULL) r += J->res[o];
            if (p->act == AOTC_ACT_LEAKY) r = r < 0.0f ? r * p->act_alpha : r;
            else if (p->act == AOTC_ACT_CLAMP) r = r < p->act_lo ? p->act_lo : r > p->act_hi ? p->act_hi : r;
            J->y[o] = r;
        }
    }
}

/* items: (image, group, block of 8 output channels, block of 3 position vectors), the last innermost */
static void igb3_items(void *arg, int32_t begin, int32_t end) {
    const igx_job *J = (const igx_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t mg = p->out_c / p->group, blocks = mg / IGB_M, pos = (J->nvec + 2) / 3;
    int32_t item;
    for (item = begin; item < end; ++item) {
        const int32_t t = item % pos, jb = item / pos % blocks, gi = item / pos / blocks;
        const int32_t left = J->nvec - 3 * t;
        const ptrdiff_t p0 = 48 * (ptrdiff_t)t;
        if (left >= 3) igb3_block3(J, gi / p->group, gi % p->group, jb * IGB_M, p0);
        else if (left == 2) igb3_block2(J, gi / p->group, gi % p->group, jb * IGB_M, p0);
        else if ((ptrdiff_t)p->out_size[1] * p->out_size[2] - p0 > IGB_TAIL) /* (the plane ends in this vector) */
            igb3_block1(J, gi / p->group, gi % p->group, jb * IGB_M, p0);
        else igb3_tail(J, gi / p->group, gi % p->group, jb * IGB_M, p0);
    }
}

/* 1 if it ran the conv, else 0 */
static int igb(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
               float *y) {
    const int32_t mg = p->out_c / p->group;
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    igx_job J = igx_job_for(p, x, wt, bias, res, y);
    if (p->out_nhwc != 0 || !igx_plain2d(p) || !x86c_act_ok(p)) return 0;
    if (p->kernel[1] == 3 && p->kernel[2] == 3 && p->strides[1] == 1 && p->strides[2] == 1 && p->dilations[1] == 1 &&
        p->dilations[2] == 1 && p->pads[1] == 1 && p->pads[2] == 1 && OH == IH && OW == IW && mg % IGB_M == 0) {
        aotc_parallel_for(igb3_items, &J, p->batch * p->group * (mg / IGB_M) * ((J.nvec + 2) / 3));
        return 1;
    }
    return 0;
}
#undef IGB_M
#undef IGB_TAIL
#endif

void aotc_conv_igb_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                       const float *res, float *y) {
#if IGX_ON
    if (igb(p, x, wt, bias, res, y)) return;
    X86_PATH_MISSED("aotc_conv_igb_f32");
#else
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}
