/* The implicit GEMM (aotc_conv_implicit_f32) on network-sized shapes whose classes of positions leave tiles of 5
 * and single positions, for its path on AVX2 without AVX-512 (built with -march=x86-64-v3: conv_implicit.c's
 * ig_tile5 and conv_implicit_avx512.h's ig_tile1x4, which four corners share): each against the reference
 * (conv_ref.c) within the conv tests' tolerance and, to the bit, against the sums in the order its tiles take
 * (three kernel columns inside: channels outermost), the output's neighbours untouched, and, given a shape's index,
 * that shape's conv alone once (test_kernels_c.py counts its instructions under callgrind). ResNet-50's 7 x 7
 * 3 x 3 convs (border rows and columns of 5, four corners), SqueezeNet's 13 x 13 (borders of 11 = 6 + 5), output
 * channels that leave a narrow tail (the _narrow tiles), stride 2, a residual, each activation, a batch of 2; a 1 x 1
 * conv on a 7 x 7 plane, whose full tiles prefetch the next block's W^T in a loop of their own (IG_PF). */
#include "aotc_conv.h"
#include "kernel_test.h"
#include "kernels_ref.h"

#define GUARD 64 /* floats after the output checked untouched */
#define PANEL AOTC_GEMM_PANEL

typedef struct {
    const char *name;
    int32_t c, m, ih, iw, k, s, pad;
    int act, res, batch; /* act: 0 none, 1 Relu, 2 Clip, 3 LeakyRelu */
} shape;

static const shape SHAPES_[] = {
    {"3x3 128->128 7x7 relu", 128, 128, 7, 7, 3, 1, 1, 1, 0, 1},
    {"3x3 64->40 13x13 clip residual", 64, 40, 13, 13, 3, 1, 1, 2, 1, 1},
    {"3x3 19->24 7x7 leaky batch 2", 19, 24, 7, 7, 3, 1, 1, 3, 1, 2},
    {"3x3/2 32->48 14x14", 32, 48, 14, 14, 3, 2, 1, 0, 0, 1},
    {"5x5 16->8 9x9 (narrow)", 16, 8, 9, 9, 5, 1, 2, 1, 0, 1},
    {"1x1 64->40 7x7 relu residual (prefetch)", 64, 40, 7, 7, 1, 1, 0, 1, 1, 1},
};
#define NSHAPES ((int)(sizeof SHAPES_ / sizeof SHAPES_[0]))

/* W^T (C * taps rows, M columns) in panels of PANEL columns, zero-padded: what conv.py packs (NCHW, group 1) */
static float *pack_wt(int32_t m, int32_t rows, const float *w) {
    const int32_t cols = (m + PANEL - 1) / PANEL * PANEL;
    float *wt = test_alloc((size_t)cols * rows);
    int32_t r, j;
    for (r = 0; r < rows; ++r)
        for (j = 0; j < cols; ++j) wt[(size_t)(j / PANEL * PANEL) * rows + (size_t)r * PANEL + j % PANEL] = j < m ? w[(size_t)j * rows + r] : 0.0f;
    return wt;
}

/* y = the conv summed in the order of the AVX2 path's tiles, to the bit: each output from its bias, by fmaf (the
 * tiles' vfmadd), over the taps inside; where 3 kernel columns are inside (IG_COLUMNS3: none of these planes
 * crowds L1's sets), channels outermost, then rows and columns; else rows, columns, then channels innermost.
 * Then the residual and the activation. */
static void conv_in_tile_order(const aotc_conv_params *p, const float *x, const float *w, const float *b,
                               const float *r, float *y) {
    const int32_t C = p->in_c, M = p->out_c, IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1];
    const int32_t OW = p->out_size[2], K = p->kernel[1], s = p->strides[1], pad = p->pads[1];
    int32_t n, m, oy, ox, c, ky, kx;
    for (n = 0; n < p->batch; ++n)
        for (m = 0; m < M; ++m)
            for (oy = 0; oy < OH; ++oy)
                for (ox = 0; ox < OW; ++ox) {
                    const size_t o = (((size_t)n * M + m) * OH + oy) * OW + ox;
                    const float *xn = x + (size_t)n * C * IH * IW, *wm = w + (size_t)m * C * K * K;
                    int32_t ky0 = 0, ky1 = K, kx0 = 0, kx1 = K;
                    float acc = b[m];
                    while (oy * s - pad + ky0 < 0) ++ky0;
                    while (oy * s - pad + ky1 - 1 >= IH) --ky1;
                    while (ox * s - pad + kx0 < 0) ++kx0;
                    while (ox * s - pad + kx1 - 1 >= IW) --kx1;
#define TAP acc = fmaf(xn[((size_t)c * IH + oy * s - pad + ky) * IW + ox * s - pad + kx], wm[((size_t)c * K + ky) * K + kx], acc)
                    if (kx1 - kx0 == 3) {
                        for (c = 0; c < C; ++c)
                            for (ky = ky0; ky < ky1; ++ky)
                                for (kx = kx0; kx < kx1; ++kx) TAP;
                    } else {
                        for (ky = ky0; ky < ky1; ++ky)
                            for (kx = kx0; kx < kx1; ++kx)
                                for (c = 0; c < C; ++c) TAP;
                    }
#undef TAP
                    if (r != NULL) acc += r[o];
                    if (p->act == AOTC_ACT_CLAMP) acc = acc < p->act_lo ? p->act_lo : acc > p->act_hi ? p->act_hi : acc;
                    if (p->act == AOTC_ACT_LEAKY) acc = acc < 0.0f ? p->act_alpha * acc : acc;
                    y[o] = acc;
                }
}

static int run(const shape *sh, int check) {
    aotc_conv_params p, q;
    size_t xn, yn, wn, e;
    float *x, *w, *wt, *b, *r, *y, *ref, *mag, *ax, *aw, *ab, *ar;
    int bad = 0, d;
    memset(&p, 0, sizeof p);
    for (d = 0; d < 3; ++d) p.in_size[d] = p.out_size[d] = p.kernel[d] = p.strides[d] = p.dilations[d] = 1;
    p.batch = sh->batch, p.group = 1, p.in_c = sh->c, p.out_c = sh->m;
    p.in_size[1] = sh->ih, p.in_size[2] = sh->iw, p.kernel[1] = p.kernel[2] = sh->k;
    p.strides[1] = p.strides[2] = sh->s, p.pads[1] = p.pads[2] = sh->pad;
    p.out_size[1] = (sh->ih + 2 * sh->pad - sh->k) / sh->s + 1;
    p.out_size[2] = (sh->iw + 2 * sh->pad - sh->k) / sh->s + 1;
    p.act = sh->act == 0 ? AOTC_ACT_NONE : sh->act == 3 ? AOTC_ACT_LEAKY : AOTC_ACT_CLAMP;
    p.act_lo = sh->act == 2 ? -0.25f : 0.0f, p.act_hi = sh->act == 2 ? 0.5f : INFINITY, p.act_alpha = 0.125f;
    xn = (size_t)p.batch * p.in_c * p.in_size[1] * p.in_size[2];
    yn = (size_t)p.batch * p.out_c * p.out_size[1] * p.out_size[2];
    wn = (size_t)p.out_c * p.in_c * p.kernel[1] * p.kernel[2];
    x = test_alloc(xn), w = test_alloc(wn), b = test_alloc((size_t)p.out_c), r = sh->res ? test_alloc(yn) : NULL;
    wt = pack_wt(p.out_c, p.in_c * p.kernel[1] * p.kernel[2], w);
    y = test_alloc_nan(yn + GUARD), ref = test_alloc(yn), mag = test_alloc(yn);
    if (!check) {
        aotc_conv_implicit_f32(&p, x, wt, b, r, y);
        printf("%s (%lu MACs)\n", sh->name, (unsigned long)(yn * (size_t)(p.in_c * p.kernel[1] * p.kernel[2])));
    } else {
        ax = test_abs(x, xn), aw = test_abs(w, wn), ab = test_abs(b, (size_t)p.out_c), ar = test_abs(r, yn);
        q = p;
        q.act = AOTC_ACT_NONE; /* the magnitudes: the sums of |terms| */
        aotc_conv_ref_f32(&p, x, w, b, r, ref);
        aotc_conv_ref_f32(&q, ax, aw, ab, ar, mag);
        aotc_conv_implicit_f32(&p, x, wt, b, r, y);
        bad = test_differs(sh->name, y, ref, mag, yn);
        if (!bad) { /* and the sums in the tiles' order, to the bit */
            conv_in_tile_order(&p, x, w, b, r, ref);
            bad = test_differs(sh->name, y, ref, NULL, yn);
        }
        for (e = yn; e < yn + GUARD && !bad; ++e)
            if (!isnan(y[e])) printf("%s: wrote past the output\n", sh->name), bad = 1;
        printf("%-40s %s (%lu outputs)\n", sh->name, bad ? "MISMATCH" : "ok", (unsigned long)yn);
        free(ax), free(aw), free(ab), free(ar);
    }
    free(x), free(w), free(wt), free(b), free(r), free(y), free(ref), free(mag);
    return bad;
}

int main(int argc, char **argv) {
    int failed = 0, i;
    test_seed(argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1u);
    if (argc > 2) return run(&SHAPES_[atoi(argv[2]) % NSHAPES], 0);
    for (i = 0; i < NSHAPES; ++i) failed |= run(&SHAPES_[i], 1);
    return failed;
}
