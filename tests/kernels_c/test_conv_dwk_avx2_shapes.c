/* The depthwise k x k conv (aotc_conv_depthwise_kxk_f32) and the 3 x 3 one at stride 2
 * (aotc_conv_depthwise3x3_direct_f32) on network-sized shapes, for their AVX2 path without AVX-512 (conv_dwk8_avx2.h,
 * built with -march=x86-64-v3: vectors of 8 channels): each
 * against the reference (conv_ref.c) within the conv tests' tolerance, the output's neighbours untouched, and,
 * given a shape's index, that shape's kernel alone once (test_kernels_c.py counts its instructions under
 * callgrind). EfficientNet-B0's 5 x 5 planes (28, 14, 7; stride 1 and TF's SAME stride 2) with channel counts
 * that leave a tail of 8, 7 x 7 ones, a plane that takes several bands of rows, a row of 7 (one register block)
 * and one of 9 (the last block moved left), asymmetric pads, a residual, each activation, and a batch of 2. */
#include "aotc_conv.h"
#include "kernel_test.h"
#include "kernels_ref.h"

#define GUARD 64 /* floats after the output checked untouched */

typedef struct {
    const char *name;
    int32_t c, ih, iw, k, s, pt, pl, pb, pr;
    int act, res, batch; /* act: 0 none, 1 Relu, 2 Clip, 3 LeakyRelu */
} shape;

static const shape SHAPES_[] = {
    {"5x5 240 28x28", 240, 28, 28, 5, 1, 2, 2, 2, 2, 0, 0, 1},
    {"5x5 19 14x14 relu residual", 19, 14, 14, 5, 1, 2, 2, 2, 2, 1, 1, 1},
    {"5x5 1152 7x7", 1152, 7, 7, 5, 1, 2, 2, 2, 2, 0, 0, 1},
    {"5x5/2 144 28x28 SAME", 144, 28, 28, 5, 2, 1, 1, 2, 2, 0, 0, 1},
    {"5x5/2 13 14x14 SAME clip", 13, 14, 14, 5, 2, 1, 1, 2, 2, 2, 0, 1},
    {"7x7 9 7x7 leaky", 9, 7, 7, 7, 1, 3, 3, 3, 3, 3, 1, 2},
    {"5x5 3 70x70 (bands)", 3, 70, 70, 5, 1, 2, 2, 2, 2, 1, 1, 1},
    {"7x7 10 33x9 pads 0 3 6 3", 10, 33, 9, 7, 1, 0, 3, 6, 3, 2, 0, 1},
    {"7x7/2 17 16x15", 17, 16, 15, 7, 2, 3, 3, 3, 3, 0, 1, 2},
    {"5x5 8 40x11 no pads (rows of 7)", 8, 40, 11, 5, 1, 0, 0, 0, 0, 3, 0, 1},
    {"5x5/2 144 56x56 SAME (bands)", 144, 56, 56, 5, 2, 1, 1, 2, 2, 0, 0, 1},
    /* 3 x 3 at stride 2: aotc_conv_depthwise3x3_direct_f32 (pads of 0 or 1) */
    {"3x3/2 96 112x112 SAME (bands) clip", 96, 112, 112, 3, 2, 0, 0, 1, 1, 2, 0, 1},
    {"3x3/2 19 15x15 pads 1 leaky residual", 19, 15, 15, 3, 2, 1, 1, 1, 1, 3, 1, 2},
    {"3x3/2 576 14x14 SAME", 576, 14, 14, 3, 2, 0, 0, 1, 1, 0, 0, 1},
};
#define NSHAPES ((int)(sizeof SHAPES_ / sizeof SHAPES_[0]))

static int run(const shape *sh, int check) {
    aotc_conv_params p, q;
    size_t xn, yn, wn, e;
    float *x, *w, *b, *r, *y, *ref, *mag, *ax, *aw, *ab, *ar;
    int bad = 0, d;
    void (*conv)(const aotc_conv_params *, const float *, const float *, const float *, const float *, float *) =
        sh->k == 3 ? aotc_conv_depthwise3x3_direct_f32 : aotc_conv_depthwise_kxk_f32;
    memset(&p, 0, sizeof p);
    for (d = 0; d < 3; ++d) p.in_size[d] = p.out_size[d] = p.kernel[d] = p.strides[d] = p.dilations[d] = 1;
    p.batch = sh->batch, p.group = p.in_c = p.out_c = sh->c;
    p.in_size[1] = sh->ih, p.in_size[2] = sh->iw, p.kernel[1] = p.kernel[2] = sh->k;
    p.strides[1] = p.strides[2] = sh->s, p.pads[1] = sh->pt, p.pads[2] = sh->pl;
    p.out_size[1] = (sh->ih + sh->pt + sh->pb - sh->k) / sh->s + 1;
    p.out_size[2] = (sh->iw + sh->pl + sh->pr - sh->k) / sh->s + 1;
    p.act = sh->act == 0 ? AOTC_ACT_NONE : sh->act == 3 ? AOTC_ACT_LEAKY : AOTC_ACT_CLAMP;
    p.act_lo = sh->act == 2 ? -0.25f : 0.0f, p.act_hi = sh->act == 2 ? 0.5f : INFINITY, p.act_alpha = 0.125f;
    xn = (size_t)p.batch * p.in_c * p.in_size[1] * p.in_size[2];
    yn = (size_t)p.batch * p.out_c * p.out_size[1] * p.out_size[2];
    wn = (size_t)p.out_c * p.kernel[1] * p.kernel[2];
    x = test_alloc(xn), w = test_alloc(wn), b = test_alloc((size_t)p.out_c), r = sh->res ? test_alloc(yn) : NULL;
    y = test_alloc_nan(yn + GUARD), ref = test_alloc(yn), mag = test_alloc(yn);
    if (!check) {
        conv(&p, x, w, b, r, y);
        printf("%s (%lu MACs)\n", sh->name, (unsigned long)(yn * (size_t)(p.kernel[1] * p.kernel[2])));
    } else {
        ax = test_abs(x, xn), aw = test_abs(w, wn), ab = test_abs(b, (size_t)p.out_c), ar = test_abs(r, yn);
        q = p;
        q.act = AOTC_ACT_NONE; /* the magnitudes: the sums of |terms| */
        aotc_conv_ref_f32(&p, x, w, b, r, ref);
        aotc_conv_ref_f32(&q, ax, aw, ab, ar, mag);
        conv(&p, x, w, b, r, y);
        bad = test_differs(sh->name, y, ref, mag, yn);
        for (e = yn; e < yn + GUARD && !bad; ++e)
            if (!isnan(y[e])) printf("%s: wrote past the output\n", sh->name), bad = 1;
        printf("%-40s %s (%lu outputs)\n", sh->name, bad ? "MISMATCH" : "ok", (unsigned long)yn);
        free(ax), free(aw), free(ab), free(ar);
    }
    free(x), free(w), free(b), free(r), free(y), free(ref), free(mag);
    return bad;
}

int main(int argc, char **argv) {
    int failed = 0, i;
    test_seed(argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1u);
    if (argc > 2) return run(&SHAPES_[atoi(argv[2]) % NSHAPES], 0);
    for (i = 0; i < NSHAPES; ++i) failed |= run(&SHAPES_[i], 1);
    return failed;
}
