/* 1 x 1 convs (aotc_conv_pointwise_f32) on network-sized shapes for its path on AVX2 without AVX-512 (built with
 * -march=x86-64-v3: conv_pw_avx2.h's tiles of up to 6 output channels x 16 positions): each against the reference
 * (conv_ref.c) within the conv tests' tolerance and, to the bit, against the sums in the tiles' order (from the
 * bias, one fused multiply-add per input channel in order, then the residual and the activation), the output's
 * neighbours untouched, and, given a shape's index, that shape's conv alone once (test_kernels_c.py counts its
 * instructions under callgrind). MobileNetV2's and ResNet-50's layer sizes; output channels that leave each kind of
 * last tiles (m % 6 of 0 to 5, fewer than 6); planes that end in a partial block of 16 positions (masked loads and
 * stores), or hold fewer than 16; groups, a batch of 2, residuals, each activation; input channels past
 * PW2_MAX_K, which stay on the GEMM core; planes of a power of two, whose blocks are copied first (pw2_copies);
 * weights past PW2_W_BYTES (pw2_chunk); and strided convs (aotc_conv_pointwise_strided_f32: the copy, then these). */
#include "aotc_conv.h"
#include "aotc_gemm.h"
#include "kernel_test.h"
#include "kernels_ref.h"

#define GUARD 64 /* floats after the output checked untouched */

typedef struct {
    const char *name;
    int32_t c, m, h, w, group;
    int act, res, batch; /* act: 0 none, 1 Relu, 2 Clip, 3 LeakyRelu */
    int32_t sy, sx;      /* strides above 1: aotc_conv_pointwise_strided_f32 (h x w the input) */
} shape;

static const shape SHAPES_[] = {
    {"16->96 112x112 clip", 16, 96, 112, 112, 1, 2, 0, 1, 1, 1},
    {"24->144 56x56 relu", 24, 144, 56, 56, 1, 1, 0, 1, 1, 1},
    {"144->24 56x56 residual", 144, 24, 56, 56, 1, 0, 1, 1, 1, 1},
    {"32->16 30x30 (6 + 6 + 4, a block of 4)", 32, 16, 30, 30, 1, 0, 0, 1, 1, 1},
    {"64->32 28x28 leaky residual (.. 4 + 4)", 64, 32, 28, 28, 1, 3, 1, 1, 1, 1},
    {"8->7 9x9 (3 + 4) batch 2", 8, 7, 9, 9, 1, 2, 1, 2, 1, 1},
    {"3->9 1x7 (4 + 5, 7 positions)", 3, 9, 1, 7, 1, 1, 0, 1, 1, 1},
    {"256->5 13x13 (5)", 256, 5, 13, 13, 1, 0, 0, 1, 1, 1},
    {"40->4 12x12 groups 2 (2 a group)", 40, 4, 12, 12, 2, 2, 1, 1, 1, 1},
    {"36->39 17x17 groups 3 (13: 6 + 3 + 4)", 36, 39, 17, 17, 3, 3, 0, 1, 1, 1},
    {"300->20 10x10 (the GEMM core)", 300, 20, 10, 10, 1, 1, 1, 1, 1, 1},
    {"16->32 64x64 (rows in one set of L1: copied)", 16, 32, 64, 64, 1, 0, 0, 1, 1, 1},
    {"48->22 32x32 clip residual batch 2 (copied)", 48, 22, 32, 32, 1, 2, 1, 2, 1, 1},
    {"128->160 10x10 relu residual (chunks 128 + 32)", 128, 160, 10, 10, 1, 1, 1, 1, 1, 1},
    {"256->512 56x56 /2 residual relu (strided)", 256, 512, 56, 56, 1, 1, 1, 1, 2, 2},
    {"24->20 15x13 /2 clip batch 2 (strided, odd)", 24, 20, 15, 13, 1, 2, 0, 2, 2, 2},
    {"300->36 9x9 /3x2 groups 2 (strided, GEMM core)", 600, 72, 9, 9, 2, 3, 1, 1, 3, 2},
};
#define NSHAPES ((int)(sizeof SHAPES_ / sizeof SHAPES_[0]))

/* y = the conv summed in the order of the AVX2 path's tiles, to the bit */
static void conv_in_tile_order(const aotc_conv_params *p, const float *x, const float *w, const float *b,
                               const float *r, float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, iw = p->in_size[2], ow = p->out_size[2];
    const size_t npos = (size_t)p->out_size[1] * ow, in_plane = (size_t)p->in_size[1] * iw;
    int32_t n, m, c;
    size_t i;
    for (n = 0; n < p->batch; ++n)
        for (m = 0; m < p->out_c; ++m) {
            const float *xg = x + ((size_t)n * p->in_c + (size_t)(m / mg) * cg) * in_plane;
            for (i = 0; i < npos; ++i) {
                const size_t o = ((size_t)n * p->out_c + m) * npos + i;
                const size_t at = (i / ow) * p->strides[1] * iw + (i % ow) * p->strides[2];
                float acc = b[m];
                for (c = 0; c < cg; ++c) acc = fmaf(w[(size_t)m * cg + c], xg[(size_t)c * in_plane + at], acc);
                if (r != NULL) acc += r[o];
                if (p->act == AOTC_ACT_CLAMP) acc = acc < p->act_lo ? p->act_lo : acc > p->act_hi ? p->act_hi : acc;
                if (p->act == AOTC_ACT_LEAKY) acc = acc < 0.0f ? p->act_alpha * acc : acc;
                y[o] = acc;
            }
        }
}

static void conv(const aotc_conv_params *p, const float *x, const float *w, const float *b, const float *r, float *y,
                 float *scratch, int strided) {
    if (strided)
        aotc_conv_pointwise_strided_f32(p, x, w, b, r, y, scratch);
    else
        aotc_conv_pointwise_f32(p, x, w, b, r, y, scratch);
}

static int run(const shape *sh, int check) {
    aotc_conv_params p, q;
    size_t xn, yn, wn, e;
    float *x, *w, *b, *r, *y, *ref, *mag, *work, *ax, *aw, *ab, *ar;
    int bad = 0, d, strided;
    memset(&p, 0, sizeof p);
    for (d = 0; d < 3; ++d) p.in_size[d] = p.out_size[d] = p.kernel[d] = p.strides[d] = p.dilations[d] = 1;
    p.batch = sh->batch, p.group = sh->group, p.in_c = sh->c, p.out_c = sh->m;
    p.strides[1] = sh->sy > 1 ? sh->sy : 1, p.strides[2] = sh->sx > 1 ? sh->sx : 1;
    p.in_size[1] = sh->h, p.in_size[2] = sh->w;
    p.out_size[1] = (sh->h - 1) / p.strides[1] + 1, p.out_size[2] = (sh->w - 1) / p.strides[2] + 1;
    p.act = sh->act == 0 ? AOTC_ACT_NONE : sh->act == 3 ? AOTC_ACT_LEAKY : AOTC_ACT_CLAMP;
    p.act_lo = sh->act == 2 ? -0.25f : 0.0f, p.act_hi = sh->act == 2 ? 0.5f : INFINITY, p.act_alpha = 0.125f;
    xn = (size_t)p.batch * p.in_c * sh->h * sh->w;
    yn = (size_t)p.batch * p.out_c * p.out_size[1] * p.out_size[2];
    wn = (size_t)p.out_c * (p.in_c / p.group);
    x = test_alloc(xn), w = test_alloc(wn), b = test_alloc((size_t)p.out_c), r = sh->res ? test_alloc(yn) : NULL;
    y = test_alloc_nan(yn + GUARD), ref = test_alloc(yn), mag = test_alloc(yn);
    strided = p.strides[1] > 1 || p.strides[2] > 1;
    work = test_alloc((size_t)(strided ? aotc_conv_pointwise_strided_f32_scratch_bytes(&p) : (int64_t)AOTC_SGEMM_WORK_BYTES) /
                      sizeof(float));
    if (!check) {
        conv(&p, x, w, b, r, y, work, strided);
        printf("%s (%lu MACs)\n", sh->name, (unsigned long)(yn * (size_t)(p.in_c / p.group)));
    } else {
        ax = test_abs(x, xn), aw = test_abs(w, wn), ab = test_abs(b, (size_t)p.out_c), ar = test_abs(r, yn);
        q = p;
        q.act = AOTC_ACT_NONE; /* the magnitudes: the sums of |terms| */
        aotc_conv_ref_f32(&p, x, w, b, r, ref);
        aotc_conv_ref_f32(&q, ax, aw, ab, ar, mag);
        conv(&p, x, w, b, r, y, work, strided);
        bad = test_differs(sh->name, y, ref, mag, yn);
        if (!bad && p.in_c / p.group <= 256) { /* and the sums in the tiles' order, to the bit */
            conv_in_tile_order(&p, x, w, b, r, ref);
            bad = test_differs(sh->name, y, ref, NULL, yn);
        }
        for (e = yn; e < yn + GUARD && !bad; ++e)
            if (!isnan(y[e])) printf("%s: wrote past the output\n", sh->name), bad = 1;
        printf("%-44s %s (%lu outputs)\n", sh->name, bad ? "MISMATCH" : "ok", (unsigned long)yn);
        free(ax), free(aw), free(ab), free(ar);
    }
    free(x), free(w), free(b), free(r), free(y), free(ref), free(mag), free(work);
    return bad;
}

int main(int argc, char **argv) {
    int failed = 0, i;
    test_seed(argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1u);
    if (argc > 2) return run(&SHAPES_[atoi(argv[2]) % NSHAPES], 0);
    for (i = 0; i < NSHAPES; ++i) failed |= run(&SHAPES_[i], 1);
    return failed;
}
