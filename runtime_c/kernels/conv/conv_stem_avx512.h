/* AVX-512F path of aotc_conv3x3_flat_f32 (conv_flat3x3.c) for the stem of a torchvision-style
 * network: a 3 x 3 or 7 x 7 (ResNet's), stride-2 Conv, pads at the start below the kernel's size,
 * on an NCHW input of a few channels (RGB) into a multiple of 16 output channels; other targets
 * compile exactly the code they did.
 * Internal to runtime_c/kernels.
 *
 * Why: the flat kernel goes one input plane at a time into every output plane (a pass over the
 * output per input channel, through parity planes copied to scratch): MobileNet-v2's and
 * EfficientNet-B0's 3 -> 32 stems at 224 x 224 ran at about 30 % of the FMA peak. Here a
 * register block is 16 outputs of one row x 16 output channels, summed over every input channel
 * and tap before one store: per input channel and tap row, three loads (the row's 33 columns
 * the 16 outputs read, masked to the row: zero in the pads, and the loads do not touch masked-off
 * lanes) become the three taps' vectors by two vpermt2ps (even and odd columns) and a valignd,
 * then 48 multiply-adds with the weights broadcast (OIHW, as the flat kernel reads them, or the
 * implicit GEMM's packed W^T: SqueezeNet 1.1's unpadded 3 -> 64 stem goes there, 829 -> 603 us; ResNet-18's
 * 7 x 7 3 -> 64 stem 2.62 -> 2.31 ms, about 87 % of the FMA peak).
 *
 * A channels-last input (aotc_in_nhwc: a TFLite model's, or tf2onnx's folded NHWC -> NCHW Transpose) comes
 * the same way after each output row's K input rows are split into channel rows on the stack
 * (stemx_split: vpermt2ps for 3 channels) and the packed W^T's rows are read in (ky, kx, c) order: the
 * implicit GEMM, the only other kernel for it, ran MobileNet-v2's 3 -> 32 224 x 224 stem from a .tflite
 * at about a third of the FMA peak (issue 64). 3 x 3 only: ResNet-50's 7 x 7 3 -> 64 stem from a .tflite ran
 * no faster this way than on the implicit GEMM (1512 against 1449 us, Zen 5, node_profile minima of 15). */
#define STEMX_NHWC_FLOATS 20480 /* the stack buffer of split rows: STEMX_NHWC_ROWS x C x (IW + STEMX_SLACK) at most */
#define STEMX_NHWC_ROWS 5       /* input rows of two output rows' 3 x 3 taps at stride 2 */
#define STEMX_SLACK 112         /* 16 floats before a split row, 96 after (the masked loads' reach) */
#ifndef AOTC_CONV_STEM_AVX512_H
#define AOTC_CONV_STEM_AVX512_H

#include "conv_common_avx512.h"

#if AOTC_X86_PATHS /* paths_avx512.h */

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    int32_t nvec;   /* vectors of 16 outputs per output row */
    int32_t packed; /* w is the implicit GEMM's W^T (panels of 16 channels, rows (c, ky, kx)), else OIHW */
} stemx_job;

/* Input row src (IW pixels of C channels, channels last) into C rows of IW floats, bw apart. */
static void stemx_split(const float *src, int32_t IW, int32_t C, float *dst, ptrdiff_t bw) {
    int32_t j = 0, c;
    if (C == 3) { /* 16 pixels from three vectors: channel c's lanes by two vpermt2ps */
        const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        __m512i ia[3], ib[3];
        for (c = 0; c < 3; ++c) {
            const __m512i at = _mm512_add_epi32(_mm512_mullo_epi32(lane, _mm512_set1_epi32(3)), _mm512_set1_epi32(c));
            const __mmask16 first = _mm512_cmplt_epi32_mask(at, _mm512_set1_epi32(32));
            ia[c] = _mm512_maskz_mov_epi32(first, at); /* from the first 32 floats */
            ib[c] = _mm512_mask_mov_epi32(_mm512_sub_epi32(at, _mm512_set1_epi32(16)), first, lane); /* 32 .. 47 */
        }
        for (; j + 16 <= IW; j += 16) {
            const __m512 v0 = _mm512_loadu_ps(src + 3 * j), v1 = _mm512_loadu_ps(src + 3 * j + 16);
            const __m512 v2 = _mm512_loadu_ps(src + 3 * j + 32);
            _Pragma("GCC unroll 3") for (c = 0; c < 3; ++c)
                _mm512_storeu_ps(dst + c * bw + j,
                                 _mm512_permutex2var_ps(_mm512_permutex2var_ps(v0, ia[c], v1), ib[c], v2));
        }
    }
    for (; j < IW; ++j)
        for (c = 0; c < C; ++c) dst[c * bw + j] = src[(ptrdiff_t)j * C + c];
}

/* One input row's window of 16 outputs' taps, (K) vectors: three masked loads from xr (mask 0: zeros, a pad
 * row), tap 2 j (2 j + 1) the even (odd) columns moved j lanes by valignd */
#define STEMX_TAPS(K, tap, xr, ma, mb, mc)                                                                 \
    do {                                                                                                   \
        const __m512 a_ = _mm512_maskz_loadu_ps(ma, xr), b_ = _mm512_maskz_loadu_ps(mb, (xr) + 16);         \
        const __m512 c_ = _mm512_maskz_loadu_ps(mc, (xr) + 32);                                            \
        const __m512i e_ = _mm512_castps_si512(_mm512_permutex2var_ps(a_, even, b_));                      \
        const __m512i o_ = _mm512_castps_si512(_mm512_permutex2var_ps(a_, odd, b_));                       \
        const __m512i ce_ = _mm512_castps_si512((K) > 3 ? _mm512_permutexvar_ps(even, c_) : c_);           \
        const __m512i co_ = _mm512_castps_si512((K) > 3 ? _mm512_permutexvar_ps(odd, c_) : c_);            \
        (tap)[0] = _mm512_castsi512_ps(e_);                                                                \
        (tap)[1] = _mm512_castsi512_ps(o_);                                                                \
        (tap)[2] = _mm512_castsi512_ps(_mm512_alignr_epi32(ce_, e_, 1));                                   \
        if ((K) > 3) {                                                                                     \
            (tap)[3 % (K)] = _mm512_castsi512_ps(_mm512_alignr_epi32(co_, o_, 1));                         \
            (tap)[4 % (K)] = _mm512_castsi512_ps(_mm512_alignr_epi32(ce_, e_, 2));                         \
            (tap)[5 % (K)] = _mm512_castsi512_ps(_mm512_alignr_epi32(co_, o_, 2));                         \
            (tap)[6 % (K)] = _mm512_castsi512_ps(_mm512_alignr_epi32(ce_, e_, 3));                         \
        }                                                                                                  \
        (void)co_;                                                                                         \
    } while (0)

/* items: (image, block of 16 output channels, ROWS output rows, vector of the row), the last innermost;
 * K x K taps (3 or 7). A register tile is the 16 outputs of ROWS rows x 16 / ROWS output channels (two passes
 * over the block's channels at ROWS 2), so each weight broadcast feeds ROWS multiply-adds: one broadcast a
 * multiply-add (an embedded-broadcast VFMADD231PS) ran at 0.168 ns a multiply-add on this Zen 5 core, one
 * for two at 0.122, the FMA peak's rate (issue 64: EfficientNet-B0's 3 -> 32 stem was at 40 % of the peak).
 * NHWC: items (image, ROWS output rows); their input rows split into channel rows on the stack once for every
 * block and vector (channel c's input row 2 r + ky of the item at buf + ((2 r + ky) C + c) bw), W^T's rows
 * (ky, kx, c). Each output sums its taps in the order (c, ky, kx) at any ROWS. */
#define STEMX_ITEMS(NAME, K, NHWC, ROWS)                                                                   \
    MK_NOINLINE static void NAME(void *arg, int32_t begin, int32_t end) {                                  \
        const stemx_job *J = (const stemx_job *)arg;                                                       \
        const aotc_conv_params *p = J->p;                                                                  \
        const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];    \
        const int32_t cg = p->in_c, blocks = p->out_c / 16, ohr = (OH + (ROWS) - 1) / (ROWS);               \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)OH * OW;                         \
        const ptrdiff_t bw = (ptrdiff_t)IW + STEMX_SLACK;                                                  \
        /* input rows: channel c's row iy (the item's input row 2 r + ky) at xn + c * cs + (NHWC ? (2 r + ky) * ks : iy * IW) */ \
        const ptrdiff_t cs = (NHWC) ? bw : in_plane, ks = (ptrdiff_t)cg * bw;                              \
        /* W^T's row of tap (c, ky, kx): c * wc + ky * wky + kx * wkx */                                   \
        const ptrdiff_t wc = (NHWC) ? 1 : (K) * (K), wky = (NHWC) ? (ptrdiff_t)(K) * cg : (K);             \
        const ptrdiff_t wkx = (NHWC) ? cg : 1;                                                             \
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);  \
        const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));                                  \
        float buf[(NHWC) ? STEMX_NHWC_FLOATS : 1];                                                        \
        int32_t item, m, c, ky, kx, sub, r, h;                                                             \
        (void)buf, (void)ks, (void)bw;                                                                     \
        for (item = begin; item < end; ++item) {                                                           \
            const int32_t subs = (NHWC) ? blocks * J->nvec : 1;                                            \
            const int32_t oy = (ROWS) * ((NHWC) ? item % ohr : item / J->nvec % ohr);                      \
            const int32_t n = (NHWC) ? item / ohr : item / J->nvec / ohr / blocks;                         \
            const float *xn = J->x + (ptrdiff_t)n * cg * in_plane;                                         \
            if (NHWC) {                                                                                    \
                for (ky = 0; ky < 2 * (ROWS) - 2 + (K); ++ky) {                                            \
                    const int32_t iy = 2 * oy + ky - p->pads[1];                                           \
                    if (iy >= 0 && iy < IH)                                                                \
                        stemx_split(xn + (ptrdiff_t)iy * IW * cg, IW, cg, buf + 16 + ky * ks, bw);         \
                }                                                                                          \
                xn = buf + 16;                                                                             \
            }                                                                                              \
            for (sub = 0; sub < subs; ++sub) {                                                             \
                const int32_t v = (NHWC) ? sub % J->nvec : item % J->nvec;                                 \
                const int32_t jb = (NHWC) ? sub / J->nvec : item / J->nvec / ohr % blocks, ox0 = 16 * v;   \
                const ptrdiff_t c0 = 2 * (ptrdiff_t)ox0 - p->pads[2]; /* the column of lane 0's first tap */ \
                const __mmask16 ma = x86c_lanes(c0, 0, IW), mb = x86c_lanes(c0 + 16, 0, IW);               \
                const __mmask16 mc = x86c_lanes(c0 + 32, 0, IW), out = x86c_lanes(ox0, 0, OW);             \
                const float *wb = J->w + (ptrdiff_t)jb * 16 * cg * (K) * (K); /* the block's, either layout */ \
                const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)jb * 16) * plane + (ptrdiff_t)oy * OW + ox0; \
                for (h = 0; h < (ROWS); ++h) { /* output channels jb 16 + h 16 / ROWS + m */               \
                    const int32_t m0 = h * 16 / (ROWS);                                                    \
                    __m512 acc[ROWS][16 / (ROWS)];                                                         \
                    _Pragma("GCC unroll 2") for (r = 0; r < (ROWS); ++r)                                   \
                        _Pragma("GCC unroll 16") for (m = 0; m < 16 / (ROWS); ++m)                         \
                            acc[r][m] = _mm512_set1_ps(J->bias != NULL ? J->bias[jb * 16 + m0 + m] : 0.0f); \
                    for (c = 0; c < cg; ++c) {                                                             \
                        for (ky = 0; ky < (K); ++ky) {                                                     \
                            const ptrdiff_t row = c * wc + ky * wky; /* W's row of tap (c, ky, 0) */       \
                            __m512 tap[ROWS][K];                                                           \
                            int any = 0;                                                                   \
                            _Pragma("GCC unroll 2") for (r = 0; r < (ROWS); ++r) {                         \
                                const int32_t iy = 2 * (oy + r) + ky - p->pads[1];                         \
                                const int ok = oy + r < OH && iy >= 0 && iy < IH; /* else a pad row */     \
                                const float *xr = ok ? xn + (ptrdiff_t)c * cs +                            \
                                                           ((NHWC) ? (2 * r + ky) * ks : (ptrdiff_t)iy * IW) + c0 \
                                                     : xn;                                                 \
                                STEMX_TAPS(K, tap[r], xr, ok ? ma : 0, ok ? mb : 0, ok ? mc : 0);          \
                                any |= ok;                                                                 \
                            }                                                                              \
                            if (!any) continue;                                                            \
                            if ((NHWC) || J->packed) { /* channel m of tap t at row t, column m of the panel */ \
                                const float *wr = wb + row * PANEL + m0;                                   \
                                _Pragma("GCC unroll 16") for (m = 0; m < 16 / (ROWS); ++m)                 \
                                    _Pragma("GCC unroll 7") for (kx = 0; kx < (K); ++kx) {                 \
                                        const __m512 wv = _mm512_set1_ps(wr[kx * wkx * PANEL + m]);        \
                                        _Pragma("GCC unroll 2") for (r = 0; r < (ROWS); ++r)               \
                                            acc[r][m] = _mm512_fmadd_ps(wv, tap[r][kx], acc[r][m]);        \
                                    }                                                                      \
                            } else { /* OIHW */                                                            \
                                const float *wr = wb + (ptrdiff_t)m0 * cg * (K) * (K) + row;               \
                                _Pragma("GCC unroll 16") for (m = 0; m < 16 / (ROWS); ++m)                 \
                                    _Pragma("GCC unroll 7") for (kx = 0; kx < (K); ++kx) {                 \
                                        const __m512 wv = _mm512_set1_ps(wr[(ptrdiff_t)m * cg * (K) * (K) + kx]); \
                                        _Pragma("GCC unroll 2") for (r = 0; r < (ROWS); ++r)               \
                                            acc[r][m] = _mm512_fmadd_ps(wv, tap[r][kx], acc[r][m]);        \
                                    }                                                                      \
                            }                                                                              \
                        }                                                                                  \
                    }                                                                                      \
                    _Pragma("GCC unroll 2") for (r = 0; r < (ROWS); ++r)                                   \
                        _Pragma("GCC unroll 16") for (m = 0; m < 16 / (ROWS); ++m) {                       \
                            const ptrdiff_t q = yo + (ptrdiff_t)r * OW + (ptrdiff_t)(m0 + m) * plane;      \
                            if (oy + r < OH) /* the last pair of an odd number of rows: one */             \
                                x86c_finish(p, acc[r][m], out, J->res != NULL ? J->res + q : NULL, J->y + q); \
                        }                                                                                  \
                }                                                                                          \
            }                                                                                              \
        }                                                                                                  \
    }
STEMX_ITEMS(stemx_k3, 3, 0, 2)
STEMX_ITEMS(stemx_k7, 7, 0, 1)
STEMX_ITEMS(stemx_k3_nhwc, 3, 1, 2)
#undef STEMX_ITEMS
#undef STEMX_TAPS

/* Runs the conv if the path above takes it: 1, else 0 (the caller goes on). packed: w is the implicit
 * GEMM's W^T (aotc_conv_implicit_f32's), else OIHW (aotc_conv3x3_flat_f32's). */
static int stemx(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                 float *y, int packed) {
    stemx_job J;
    const int nhwc = p->in_nhwc != 0;
    if (p->out_nhwc != 0 || (nhwc && (!packed || p->kernel[1] != 3 ||
                                      (ptrdiff_t)STEMX_NHWC_ROWS * p->in_c * (p->in_size[2] + STEMX_SLACK) >
                                          STEMX_NHWC_FLOATS)) ||
        p->group != 1 || p->in_c > 8 || p->out_c % 16 != 0 ||
        p->in_size[0] != 1 || p->out_size[0] != 1 || p->kernel[0] != 1 || p->pads[0] != 0 ||
        (p->kernel[2] != 3 && p->kernel[2] != 7) || p->kernel[1] != p->kernel[2] || p->strides[1] != 2 ||
        p->strides[2] != 2 || p->dilations[1] != 1 || p->dilations[2] != 1 || p->pads[1] < 0 ||
        p->pads[1] >= p->kernel[1] || p->pads[2] < 0 || p->pads[2] >= p->kernel[2] || p->out_size[2] < 16)
        return 0;
    if (!x86c_act_ok(p)) return 0;
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y;
    J.nvec = (p->out_size[2] + 15) / 16;
    J.packed = packed;
    if (nhwc)
        aotc_parallel_for(stemx_k3_nhwc, &J, p->batch * ((p->out_size[1] + 1) / 2));
    else if (p->kernel[2] == 3)
        aotc_parallel_for(stemx_k3, &J, p->batch * (p->out_c / 16) * ((p->out_size[1] + 1) / 2) * J.nvec);
    else
        aotc_parallel_for(stemx_k7, &J, p->batch * (p->out_c / 16) * p->out_size[1] * J.nvec);
    return 1;
}
#endif
#endif
