/* ONNX Conv with a 1 x 1 kernel, stride 1, no padding: the GEMM core on the input in place
 * (aotc_conv_pointwise_f32), or on few positions Y^T = X^T * W^T (aotc_conv_pointwise_t_f32). */
#include "conv_internal.h"
#include "conv_posx_avx512.h"
#include "conv_pw_avx2.h"

/* ---- 1 x 1 Conv: a GEMM on the input as it is ------------------------------------ */

#if defined(__AVX512F__) && !defined(AOTC_NO_X86_PW)
#include <immintrin.h>
#define PWX 1
/* AVX-512, 8, 16 or 24 input channels per group: the input's K values of 16 positions stay in
 * K vector registers while every output channel of the group is summed from them (two chains
 * of K / 2 multiply-adds, the weights broadcast from memory), finished (bias, residual,
 * activation) and stored. At such small K the GEMM core's 6 x 16 tiles spent most of their
 * time in fixed costs per tile (VWW MobileNet-v1's 8 -> 16 conv on 48 x 48 took 12 us). */
typedef struct {
    const float *x, *w, *bias, *res;
    float *y;
    ptrdiff_t npos;
    int32_t m, act;
    float lo, hi, leak;
} pwx_job;

#define PWX_KERNEL(K)                                                                                  \
    static void pwx_k##K(void *arg, int32_t begin, int32_t end) {                                      \
        const pwx_job *J = (const pwx_job *)arg;                                                       \
        const ptrdiff_t npos = J->npos;                                                                \
        const int32_t act = J->act;                                                                    \
        const __m512 lo = _mm512_set1_ps(J->lo), hi = _mm512_set1_ps(J->hi), leak = _mm512_set1_ps(J->leak); \
        int32_t blk, m, k;                                                                             \
        for (blk = begin; blk < end; ++blk) { /* positions [16 blk, 16 blk + 16) */                    \
            const ptrdiff_t p0 = 16 * (ptrdiff_t)blk;                                                  \
            const __mmask16 in = npos - p0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (npos - p0)) - 1u); \
            __m512 xk[K];                                                                              \
            _Pragma("GCC unroll 32") for (k = 0; k < (K); ++k) xk[k] = _mm512_maskz_loadu_ps(in, J->x + k * npos + p0); \
            for (m = 0; m < J->m; ++m) {                                                               \
                const float *wm = J->w + (ptrdiff_t)m * (K);                                           \
                __m512 a = _mm512_set1_ps(J->bias != NULL ? J->bias[m] : 0.0f), c = _mm512_setzero_ps(); \
                _Pragma("GCC unroll 32") for (k = 0; k < (K); k += 2) {                                \
                    a = _mm512_fmadd_ps(_mm512_set1_ps(wm[k]), xk[k], a);                             \
                    c = _mm512_fmadd_ps(_mm512_set1_ps(wm[k + 1]), xk[k + 1], c);                     \
                }                                                                                      \
                a = _mm512_add_ps(a, c);                                                               \
                if (J->res != NULL) a = _mm512_add_ps(a, _mm512_maskz_loadu_ps(in, J->res + m * npos + p0)); \
                if (act == AOTC_ACT_LEAKY) {                                                           \
                    a = _mm512_mask_mul_ps(a, _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_LT_OQ), a, leak); \
                } else {                                                                               \
                    a = _mm512_min_ps(_mm512_max_ps(a, lo), hi);                                       \
                }                                                                                      \
                _mm512_mask_storeu_ps(J->y + m * npos + p0, in, a);                                    \
            }                                                                                          \
        }                                                                                              \
    }
PWX_KERNEL(8)
PWX_KERNEL(16)
PWX_KERNEL(24)
PWX_KERNEL(32)
#undef PWX_KERNEL
#else
#define PWX 0
#endif

#if defined(AOTC_THREADS) && AOTC_THREADS > 1
/* With the pool: the GEMM of each (image, group) split into column blocks of whole panels of PANEL positions
 * (PW_BLOCKS_PER_THREAD a thread), the last block taking the remainder too, so every block's tiles are the
 * ones the whole GEMM makes for those columns (the last partial panel's shifted tile included) and each
 * output is summed in the same order. Each block copies plain-B blocks into its own stack buffer, as the
 * one-thread call does into `work` (the arena has one, and threads cannot share it). */
typedef struct {
    const aotc_conv_params *p;
    aotc_sgemm_params gp;
    const float *x, *w, *bias, *res;
    float *y;
    int32_t cg, mg, npos, blocks, width, use_work; /* width: a block's positions, whole panels */
} pw_job;

/* Why whole runs of panels: a GEMM call per panel of 16 positions ran ResNet-50's 128 -> 512 and 256 -> 64 convs
 * at 0.74-0.80 x the speed of one call over all positions (the two-thread bundle run on one thread, against the
 * one-thread bundle); 8 blocks a thread at 0.83-0.97 x, 2 at 0.95-0.98 x. */
#define PW_BLOCKS_PER_THREAD 2

static void pw_blocks(void *arg, int32_t begin, int32_t end) {
    const pw_job *J = (const pw_job *)arg;
    float work[AOTC_SGEMM_WORK_BYTES / sizeof(float)];
    int32_t it;
    for (it = begin; it < end; ++it) {
        const int32_t blk = it % J->blocks, ng = it / J->blocks, g = ng % J->p->group, n = ng / J->p->group;
        const int32_t j0 = blk * J->width, j1 = blk == J->blocks - 1 ? J->npos : j0 + J->width;
        const ptrdiff_t xo = ((ptrdiff_t)n * J->p->in_c + (ptrdiff_t)g * J->cg) * J->npos + j0;
        const ptrdiff_t yo = ((ptrdiff_t)n * J->p->out_c + (ptrdiff_t)g * J->mg) * J->npos + j0;
        aotc_sgemm_params gp = J->gp;
        gp.n = j1 - j0;
        gp.res = J->res != NULL ? J->res + yo : NULL;
        aotc_sgemm_f32(&gp, J->w + (ptrdiff_t)g * J->mg * J->cg, J->x + xo,
                       J->bias != NULL ? J->bias + (ptrdiff_t)g * J->mg : NULL, J->y + yo, J->use_work ? work : NULL);
    }
}
#endif

void aotc_conv_pointwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             const float *res, float *y, float *work) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t npos = p->out_size[0] * p->out_size[1] * p->out_size[2];
    aotc_sgemm_params gp = gemm_shape(mg, npos, cg);
    int32_t n, g;
    gp.cin_rs = 1; /* the bias, one value per row */
    gp.res_rs = npos;
    set_activation(&gp, p);
#if PW2_ON /* AVX2 without AVX-512: register tiles on the input as it is (conv_pw_avx2.h) */
    if (cg <= PW2_MAX_K && (p->act == AOTC_ACT_NONE || p->act == AOTC_ACT_CLAMP || p->act == AOTC_ACT_LEAKY)) {
        for (n = 0; n < p->batch; ++n) {
            for (g = 0; g < p->group; ++g) {
                const ptrdiff_t xo = ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
                const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * npos;
                pw2_job J;
                J.x = x + xo, J.w = w + (ptrdiff_t)g * mg * cg, J.bias = bias != NULL ? bias + (ptrdiff_t)g * mg : NULL;
                J.res = res != NULL ? res + yo : NULL, J.y = y + yo, J.npos = npos, J.m = mg, J.k = cg;
                J.act = p->act, J.lo = p->act_lo, J.hi = p->act_hi, J.leak = p->act_alpha;
                aotc_parallel_for(pw2_run, &J, (int32_t)((npos + 15) / 16));
            }
        }
        return;
    }
#endif
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
#if defined(AOTC_CONV_POSX)
    /* the register tiles below split by runs of 32 positions too: each thread its share of the positions, the
     * rows a Winograd conv before it wrote in that thread's bands (conv_winograd.h). On the per-panel GEMMs
     * below, ResNet-50's 64 -> 256 56 x 56 convs ran 1.18 x as long as on these tiles (one thread each) and
     * gained 0.9-1.25 x from a second thread; on these, 1.63-1.68 x (load 5, min of 80 runs). */
    if (posx_pointwise(p, x, w, bias, res, y, 0,
                       PWX && (cg == 8 || cg == 16 || cg == 24 || cg == 32) &&
                           (p->act == AOTC_ACT_NONE || p->act == AOTC_ACT_CLAMP || p->act == AOTC_ACT_LEAKY)))
        return;
#endif
#if PWX
    if (!((cg == 8 || cg == 16 || cg == 24 || cg == 32) &&
          (p->act == AOTC_ACT_NONE || p->act == AOTC_ACT_CLAMP || p->act == AOTC_ACT_LEAKY)))
#endif
    {
        pw_job J;
        J.p = p, J.gp = gp, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
        const int32_t panels = npos / PANEL, per = panels / (PW_BLOCKS_PER_THREAD * AOTC_THREADS);
        J.cg = cg, J.mg = mg, J.npos = npos, J.use_work = work != NULL;
        J.width = PANEL * (per > 1 ? per : 1);
        J.blocks = npos / J.width > 1 ? npos / J.width : 1;
        aotc_parallel_for(pw_blocks, &J, p->batch * p->group * J.blocks);
        return;
    }
#elif defined(AOTC_CONV_POSX) /* one thread: the register tiles */
    /* AVX-512: 8 output channels x 32 positions in registers (conv_posx_avx512.h), before the pwx loops
     * below at 8 to 32 input channels too (10 loads per 16 multiply-adds against 1 per 1): Zen 5, one
     * conv, min CPU time of 5 interleaved runs, pwx -> posx: MobileNet-v2's 16 -> 96 112 x 112 230 -> 187 us,
     * 24 -> 144 56 x 56 112 -> 93, 32 -> 192 28 x 28 56 -> 40, 32 -> 16 112 x 112 117 -> 86; VWW-sized
     * 8 -> 16 48 x 48 4.5 -> 3.9, 32 -> 64 12 x 12 3.5 -> 2.8 (issue 64) */
    if (posx_pointwise(p, x, w, bias, res, y, 0,
                       PWX && (cg == 8 || cg == 16 || cg == 24 || cg == 32) &&
                           (p->act == AOTC_ACT_NONE || p->act == AOTC_ACT_CLAMP || p->act == AOTC_ACT_LEAKY)))
        return; /* (at the pwx loops' shapes whatever the positions: a band's call sums as the whole call does) */
#endif
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const ptrdiff_t xo = ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * npos;
#if PWX
            if ((cg == 8 || cg == 16 || cg == 24 || cg == 32) &&
                (p->act == AOTC_ACT_NONE || p->act == AOTC_ACT_CLAMP || p->act == AOTC_ACT_LEAKY)) {
                pwx_job J;
                J.x = x + xo, J.w = w + (ptrdiff_t)g * mg * cg, J.bias = bias != NULL ? bias + (ptrdiff_t)g * mg : NULL;
                J.res = res != NULL ? res + yo : NULL, J.y = y + yo, J.npos = npos, J.m = mg, J.act = p->act;
                J.lo = p->act == AOTC_ACT_CLAMP ? p->act_lo : -INFINITY, J.hi = p->act == AOTC_ACT_CLAMP ? p->act_hi : INFINITY;
                J.leak = p->act_alpha;
                aotc_parallel_for(cg == 8 ? pwx_k8 : cg == 16 ? pwx_k16 : cg == 24 ? pwx_k24 : pwx_k32, &J, (npos + 15) / 16);
                continue;
            }
#endif
            gp.res = res != NULL ? res + yo : NULL;
            aotc_sgemm_f32(&gp, w + (ptrdiff_t)g * mg * cg, x + xo, bias != NULL ? bias + (ptrdiff_t)g * mg : NULL,
                           y + yo, work);
        }
    }
}

/* ---- 1 x 1 Conv at a stride above 1: the pointwise conv on a copy of its strided inputs ---------- */

void aotc_conv_pointwise_strided_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                     const float *res, float *y, float *scratch) {
    const int32_t ih = p->in_size[1], iw = p->in_size[2], od = p->out_size[0], oh = p->out_size[1];
    const int32_t ow = p->out_size[2], sd = p->strides[0], sy = p->strides[1], sx = p->strides[2];
    const ptrdiff_t in_plane = (ptrdiff_t)p->in_size[0] * ih * iw, plane = (ptrdiff_t)od * oh * ow;
    const ptrdiff_t planes = (ptrdiff_t)p->batch * p->in_c;
    aotc_conv_params q = *p;
    ptrdiff_t c;
    int32_t d, r, o, i;
    for (c = 0; c < planes; ++c) { /* each (image, channel) plane's positions on the output grid */
        float *AOTC_RESTRICT dst = scratch + c * plane;
        for (d = 0; d < od; ++d)
            for (r = 0; r < oh; ++r, dst += ow) {
                const float *AOTC_RESTRICT src = x + c * in_plane + ((ptrdiff_t)d * sd * ih + (ptrdiff_t)r * sy) * iw;
                if (sx == 2) {
                    for (o = 0; o < ow; ++o) dst[o] = src[2 * o];
                } else {
                    for (o = 0; o < ow; ++o) dst[o] = src[(ptrdiff_t)o * sx];
                }
            }
    }
    for (i = 0; i < 3; ++i) q.in_size[i] = p->out_size[i], q.strides[i] = 1;
    aotc_conv_pointwise_f32(&q, scratch, w, bias, res, y, scratch + planes * plane);
}

/* ---- 1 x 1 Conv on a few positions: Y^T = X^T * W^T ------------------------------------ */

void aotc_conv_pointwise_t_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                               const float *res, float *y, float *scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t npos = p->out_size[0] * p->out_size[1] * p->out_size[2];
    const ptrdiff_t wt_len = (ptrdiff_t)cg * ((mg + PANEL - 1) / PANEL * PANEL); /* a group's packed W^T */
    int32_t n, g, j0, i, j;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const ptrdiff_t xo = ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * npos;
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg) * npos;
            for (j0 = 0; j0 < mg; j0 += p->nc) { /* output channels [j0, j0 + nb) */
                const int32_t nb = min_i32(p->nc, mg - j0);
                aotc_sgemm_params gp = gemm_shape(npos, nb, cg);
                gp.a_rs = 1; /* A(i, c) = X[c][i]: X read transposed */
                gp.a_cs = npos;
                gp.b_rs = PANEL; /* W^T packed: panels of cg x PANEL */
                gp.b_ps = cg * PANEL;
                gp.b_padded = 1;
                gp.cin_rs = 0; /* the bias, one value per column */
                gp.cin_cs = 1;
                if (res == NULL) set_activation(&gp, p);
                aotc_sgemm_f32(&gp, x + xo, wt + g * wt_len + (ptrdiff_t)j0 * cg,
                               bias != NULL ? bias + (ptrdiff_t)g * mg + j0 : NULL, scratch, NULL);
                { /* scratch[i][j] -> Y[j0 + j][i], a row of scratch at a time */
                    float *AOTC_RESTRICT yb = y + yo + (ptrdiff_t)j0 * npos;
                    for (i = 0; i < npos; ++i) {
                        const float *AOTC_RESTRICT si = scratch + (ptrdiff_t)i * nb;
                        for (j = 0; j < nb; ++j) yb[(ptrdiff_t)j * npos + i] = si[j];
                    }
                    if (res != NULL) { /* + the residual, then the activation */
                        const float *AOTC_RESTRICT rb = res + (yb - y);
                        for (j = 0; j < nb * npos; ++j) yb[j] += rb[j];
                        aotc_activate_f32(yb, (ptrdiff_t)nb * npos, p->act, p->act_lo, p->act_hi, p->act_alpha);
                    }
                }
            }
        }
    }
}
