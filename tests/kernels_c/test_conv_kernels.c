/* Every conv kernel (aotc_conv.h) against the reference (conv_ref.c) over random shapes drawn
 * within what each kernel takes (the conditions aot/kernels/conv.py picks it under), with
 * its scratch sized as the compiler sizes it. Tensors, weights and scratch are heap buffers of
 * exactly their size, outputs and scratch start as NaN, and the inputs must come back as they
 * were. Built by tests/kernels_c/test_kernels_c.py: on the host under ASan/UBSan, and for a Cortex-M4
 * (other register tiles and blocks: AOTC_GEMM_MR/NR 4, AOTC_DW3_BLOCK 1, AOTC_DWK_BLOCK 4) under qemu.
 *
 *     test_conv_kernels [seed] [shapes per kernel] */
#include "aotc_conv.h"
#include "aotc_gemm.h"
#include "kernel_test.h"
#include "kernels_ref.h"

#define PANEL AOTC_GEMM_PANEL
/* Largest multiply-adds of one shape's reference: bounds the run time. */
#define MAX_MACS 1000000
#define Y_GUARD 64 /* floats after each output checked untouched */

enum {
    K_IM2COL,      /* aotc_conv_f32 */
    K_S1,          /* aotc_conv_s1_f32 */
    K_POINTWISE,   /* aotc_conv_pointwise_f32 */
    K_POINTWISE_T, /* aotc_conv_pointwise_t_f32 */
    K_DEPTHWISE,   /* aotc_conv_depthwise_f32 */
    K_DIRECT,      /* aotc_conv_direct_f32 */
    K_IMPLICIT,    /* aotc_conv_implicit_f32 */
    K_DW3_PADDED,  /* aotc_conv_depthwise3x3_f32 */
    K_FLAT3X3,     /* aotc_conv3x3_flat_f32 */
    K_DW3_DIRECT,  /* aotc_conv_depthwise3x3_direct_f32 */
    K_TRANSPOSE,   /* aotc_conv_transpose_f32 */
    K_DWK_DIRECT,  /* aotc_conv_depthwise_kxk_f32 */
    K_WINOGRAD,    /* aotc_conv_winograd_f32 */
    K_WINOGRAD4,   /* aotc_conv_winograd4_f32 */
    K_COUNT
};

static const char *const NAMES[K_COUNT] = {
    "aotc_conv_f32",          "aotc_conv_s1_f32",           "aotc_conv_pointwise_f32",
    "aotc_conv_pointwise_t_f32", "aotc_conv_depthwise_f32",  "aotc_conv_direct_f32",
    "aotc_conv_implicit_f32", "aotc_conv_depthwise3x3_f32", "aotc_conv3x3_flat_f32",
    "aotc_conv_depthwise3x3_direct_f32", "aotc_conv_transpose_f32", "aotc_conv_depthwise_kxk_f32",
    "aotc_conv_winograd_f32", "aotc_conv_winograd4_f32",
};

/* aotc_conv_implicit_f32 and its AVX-512 paths (aotc_conv.h), which K_IMPLICIT cases run in turn */
typedef void (*implicit_fn)(const aotc_conv_params *, const float *, const float *, const float *, const float *,
                            float *);
#define IMPLICIT_PATHS 8
static const implicit_fn IMPLICIT_FNS[IMPLICIT_PATHS] = {
    aotc_conv_implicit_f32, aotc_conv_igx3_f32, aotc_conv_igx3s2_f32, aotc_conv_igx1_f32,
    aotc_conv_pwc_f32,      aotc_conv_posx_f32, aotc_conv_igb_f32,    aotc_conv_stemx_f32,
};
static const char *const IMPLICIT_NAMES[IMPLICIT_PATHS] = {
    "aotc_conv_implicit_f32", "aotc_conv_igx3_f32", "aotc_conv_igx3s2_f32", "aotc_conv_igx1_f32",
    "aotc_conv_pwc_f32",      "aotc_conv_posx_f32", "aotc_conv_igb_f32",    "aotc_conv_stemx_f32",
};
/* set by an AVX-512 path's entry given a conv it does not take (paths_avx512.h: built with AOTC_TEST_X86_PATHS) */
const char *aotc_test_avx512_path_missed;

typedef struct {
    int kind;
    aotc_conv_params p;
    int bias, res; /* with a bias, with a residual */
    int work;      /* aotc_conv_pointwise_f32: with the GEMM core's work memory (else NULL) */
} conv_case;

static int32_t ceil16(int32_t v) { return (v + PANEL - 1) / PANEL * PANEL; }

static int32_t prod3(const int32_t *v) { return v[0] * v[1] * v[2]; }

/* Spatial dim d (0: D, 1: H, 2: W): input size n, kernel k, stride s, dilation dl, pads pb at the
 * start and pe at the end (ConvTranspose: extra is its output_padding). 0 if no output fits. */
static int set_dim(aotc_conv_params *p, int d, int32_t n, int32_t k, int32_t s, int32_t dl, int32_t pb, int32_t pe,
                   int transpose, int32_t extra) {
    const int32_t span = (k - 1) * dl + 1;
    p->in_size[d] = n, p->kernel[d] = k, p->strides[d] = s, p->dilations[d] = dl, p->pads[d] = pb;
    if (transpose) {
        p->out_size[d] = (n - 1) * s - pb - pe + span + extra;
        return p->out_size[d] >= 1;
    }
    if (n + pb + pe < span) return 0;
    p->out_size[d] = (n + pb + pe - span) / s + 1;
    return 1;
}

/* group groups of cg input and mg output channels each. */
static void set_channels(aotc_conv_params *p, int32_t group, int32_t cg, int32_t mg) {
    p->group = group, p->in_c = group * cg, p->out_c = group * mg;
}

/* Output channels per group: often few, often past a register tile or a panel (16). */
static int32_t draw_mg(int32_t most) { return rand_int(1, chance(1, 2) ? 8 : most); }

static void draw_activation(aotc_conv_params *p) {
    switch (rand_int(0, 4)) {
    case 1: p->act = AOTC_ACT_CLAMP, p->act_lo = 0.0f, p->act_hi = INFINITY; break; /* Relu */
    case 2: p->act = AOTC_ACT_CLAMP, p->act_lo = -0.25f, p->act_hi = 0.5f; break;   /* Clip */
    case 4: p->act = AOTC_ACT_CLAMP, p->act_lo = 0.0f, p->act_hi = 0.5f; break;     /* Clip from 0: a Relu6's */
    case 3: p->act = AOTC_ACT_LEAKY, p->act_alpha = 0.125f; break;                  /* LeakyRelu */
    default: p->act = AOTC_ACT_NONE; break;
    }
}

/* Dims [3 - nd, 3) drawn at random (sizes up to n_max, kernels up to k_max, strides up to s_max,
 * dilations up to dl_max, pads up to pad_max); the leading dims 1. */
static int draw_dims(aotc_conv_params *p, int nd, int32_t n_max, int32_t k_max, int32_t s_max, int32_t dl_max,
                     int32_t pad_max, int transpose) {
    int d;
    for (d = 3 - nd; d < 3; ++d) {
        const int32_t k = rand_int(1, k_max), s = rand_int(1, s_max), dl = rand_int(1, dl_max);
        const int32_t extra = transpose ? rand_int(0, (s > dl ? s : dl) - 1) : 0;
        if (!set_dim(p, d, rand_int(1, n_max), k, s, dl, rand_int(0, pad_max), rand_int(0, pad_max), transpose, extra))
            return 0;
    }
    return 1;
}

/* A 2-D 3 x 3 conv, no dilation: stride s, pads (top, left, bottom, right) from pad, input up to
 * h_max x w_max. */
static int draw_3x3(aotc_conv_params *p, int32_t s, const int32_t *pad, int32_t h_max, int32_t w_max) {
    return set_dim(p, 1, rand_int(1, h_max), 3, s, 1, pad[0], pad[2], 0, 0) &&
           set_dim(p, 2, rand_int(1, w_max), 3, s, 1, pad[1], pad[3], 0, 0);
}

/* A random shape that kernel `kind` takes; 0 to draw again. */
static int draw(int kind, conv_case *c) {
    aotc_conv_params *p = &c->p;
    int32_t pad[4], d, k, npos;
    memset(c, 0, sizeof *c);
    c->kind = kind;
    for (d = 0; d < 3; ++d) {
        p->in_size[d] = p->out_size[d] = p->kernel[d] = p->strides[d] = p->dilations[d] = 1;
    }
    p->batch = rand_int(1, 2);
    c->bias = chance(2, 3);
    c->res = kind != K_TRANSPOSE && chance(1, 3);
    if (kind != K_TRANSPOSE) draw_activation(p);
    switch (kind) {
    case K_IM2COL:
    case K_DIRECT: {
        const int nd = rand_int(1, 3);
        set_channels(p, rand_int(1, 3), rand_int(1, 12), draw_mg(24));
        if (kind == K_DIRECT && nd == 2 && chance(1, 3)) { /* rows wide enough for tiles of 16 columns */
            if (!set_dim(p, 1, rand_int(1, 8), rand_int(1, 3), rand_int(1, 2), 1, rand_int(0, 1), rand_int(0, 1), 0, 0) ||
                !set_dim(p, 2, rand_int(16, 64), rand_int(1, 5), rand_int(1, 3), rand_int(1, 2), rand_int(0, 2),
                         rand_int(0, 2), 0, 0))
                return 0;
        } else if (!draw_dims(p, nd, nd == 1 ? 24 : nd == 2 ? 12 : 6, nd == 3 ? 3 : 4, 3, 2, 2, 0)) {
            return 0;
        }
        break;
    }
    case K_S1: /* 2-D (or 1-D as 1 x W), stride 1, no dilation */
        set_channels(p, rand_int(1, 3), rand_int(1, 10), draw_mg(24));
        if (!draw_dims(p, rand_int(1, 2), 12, 5, 1, 1, 2, 0)) return 0;
        break;
    case K_POINTWISE:
    case K_POINTWISE_T: { /* 1 x 1, stride 1, no padding; X^T * W^T mostly on fewer positions than a panel */
        const int nd = rand_int(1, 3), few = kind == K_POINTWISE_T && chance(3, 4);
        set_channels(p, rand_int(1, 3), rand_int(1, 40), draw_mg(40));
        for (d = 3 - nd; d < 3; ++d) set_dim(p, d, rand_int(1, few ? 3 : nd == 1 ? 40 : 8), 1, 1, 1, 0, 0, 0, 0);
        c->work = chance(1, 2);
        break;
    }
    case K_DEPTHWISE: /* one input channel per group, any shape; often the 2-D 3 x 3 the kernel fuses */
        set_channels(p, rand_int(1, 6), 1, rand_int(1, 3));
        if (chance(1, 2)) {
            const int32_t s = rand_int(1, 3), dl = rand_int(1, 2);
            if (!set_dim(p, 1, rand_int(1, 14), 3, s, dl, rand_int(0, 2), rand_int(0, 2), 0, 0) ||
                !set_dim(p, 2, rand_int(1, 20), 3, rand_int(1, 3), dl, rand_int(0, 2), rand_int(0, 2), 0, 0))
                return 0;
        } else {
            const int nd = rand_int(1, 3);
            if (!draw_dims(p, nd, nd == 1 ? 30 : nd == 2 ? 14 : 6, 5, 3, 2, 3, 0)) return 0;
        }
        break;
    case K_IMPLICIT: /* 1-D or 2-D, anything */
        if (chance(1, 10)) { /* planes 4 KiB apart, 16+ channels: the order for crowded L1 sets */
            set_channels(p, rand_int(1, 2), rand_int(17, 20), draw_mg(20));
            if (!set_dim(p, 1, 32, 3, rand_int(1, 2), 1, rand_int(0, 1), rand_int(0, 1), 0, 0) ||
                !set_dim(p, 2, 32, rand_int(3, 4), rand_int(1, 2), rand_int(1, 2), rand_int(0, 2), rand_int(0, 2), 0, 0))
                return 0;
            break;
        }
        if (chance(1, 4)) { /* AVX-512 paths (conv_ig_avx512.h): 3 x 3 same size or stride 2 on 16k output channels; 1 x 1 stride 2;
                             * conv_igb_avx512.c: 3 x 3 same size, more than 64 input channels, small planes, 8k outputs */
            const int path = rand_int(0, 4);
            if (path == 4) {
                set_channels(p, rand_int(1, 2), rand_int(65, 72), 8 * rand_int(1, 3));
                if (!set_dim(p, 1, rand_int(1, 9), 3, 1, 1, 1, 1, 0, 0) || !set_dim(p, 2, rand_int(1, 9), 3, 1, 1, 1, 1, 0, 0))
                    return 0;
            } else if (path == 3) { /* 3 x 3 same size on a channels-last RGB input, rows of 16k */
                p->in_nhwc = 1;
                set_channels(p, 1, 3, 16 * rand_int(1, 2));
                if (!set_dim(p, 1, rand_int(1, 12), 3, 1, 1, 1, 1, 0, 0) || !set_dim(p, 2, 16 * rand_int(1, 2), 3, 1, 1, 1, 1, 0, 0))
                    return 0;
            } else if (path == 2) { /* 3 x 3 stride 2, start pads 0 or 1: pairs of rows of 6 to 8 (input <= 16 wide),
                                     * rows of 16k, other rows (runs across their ends with a left pad) */
                const int32_t ow = chance(1, 3) ? rand_int(6, 8) : chance(1, 2) ? 16 * rand_int(1, 2) : rand_int(9, 40);
                set_channels(p, rand_int(1, 2), rand_int(1, 20), 16 * rand_int(1, 2));
                if (!set_dim(p, 1, rand_int(3, 20), 3, 2, 1, rand_int(0, 1), rand_int(0, 1), 0, 0) ||
                    !set_dim(p, 2, 2 * ow + rand_int(-1, 1), 3, 2, 1, rand_int(0, 1), rand_int(0, 1), 0, 0))
                    return 0;
            } else if (path == 1 && chance(1, 3)) { /* 1 x 1 stride 1: conv_posx_avx512.h's tiles on the packed W^T */
                set_channels(p, rand_int(1, 2), rand_int(1, 40), rand_int(8, 40));
                if (!set_dim(p, 1, rand_int(4, 20), 1, 1, 1, 0, 0, 0, 0) || !set_dim(p, 2, rand_int(8, 20), 1, 1, 1, 0, 0, 0, 0))
                    return 0;
            } else if (path == 0) {
                set_channels(p, rand_int(1, 2), rand_int(1, 20), 16 * rand_int(1, 2));
                if (!set_dim(p, 1, rand_int(1, 20), 3, 1, 1, 1, 1, 0, 0) || !set_dim(p, 2, rand_int(1, 20), 3, 1, 1, 1, 1, 0, 0))
                    return 0;
            } else {
                const int32_t ow = chance(1, 2) ? 8 : 16 * rand_int(1, 2);
                set_channels(p, rand_int(1, 2), 8 * rand_int(1, 4), draw_mg(40));
                if (!set_dim(p, 1, rand_int(1, 12), 1, 2, 1, 0, rand_int(0, 1), 0, 0) ||
                    !set_dim(p, 2, 2 * ow - rand_int(0, 1), 1, 2, 1, 0, 0, 0, 0))
                    return 0;
            }
            break;
        }
        if (chance(1, 4)) { /* channels last (a folded NHWC -> NCHW Transpose): one group */
            p->in_nhwc = 1;
            set_channels(p, 1, rand_int(1, 8), draw_mg(24));
        } else {
            set_channels(p, rand_int(1, 3), rand_int(1, 12), draw_mg(40));
        }
        if (!draw_dims(p, rand_int(1, 2), 14, 5, 3, 2, 3, 0)) return 0;
        break;
    case K_DW3_PADDED: { /* depthwise 2-D 3 x 3, strides 1 or 2 in both dims, no dilation, any pads */
        const int32_t s = rand_int(1, 2);
        for (d = 0; d < 4; ++d) pad[d] = rand_int(0, 2);
        set_channels(p, rand_int(1, 4), 1, rand_int(1, 2));
        if (!draw_3x3(p, s, pad, 14, 14)) return 0;
        break;
    }
    case K_FLAT3X3: { /* 3 x 3, no dilation: stride 1 with pads of 1, or stride 2 with pads of 0 or 1 */
        const int32_t s = rand_int(1, 2);
        for (d = 0; d < 4; ++d) pad[d] = s == 1 ? 1 : rand_int(0, 1);
        set_channels(p, rand_int(1, 3), rand_int(1, 4), draw_mg(6));
        if (!draw_3x3(p, s, pad, 14, 16)) return 0;
        if (s == 2 && pad[1] == 0 && 2 * p->out_size[2] < p->in_size[2]) return 0; /* (conv.py's condition) */
        break;
    }
    case K_DW3_DIRECT: { /* depthwise 2-D 3 x 3, strides 1 or 2, pads of 0 or 1 on each side */
        const int32_t s = rand_int(1, 2), shape = rand_int(0, 9);
        for (d = 0; d < 4; ++d) pad[d] = rand_int(0, 1);
        set_channels(p, rand_int(1, 3), 1, rand_int(1, 2));
        /* mostly small planes; some rows longer than a flat run (128), planes of several runs, and
         * rows of 126 to 129 outputs */
        if (!(shape == 0   ? draw_3x3(p, s, pad, 4, 300)
              : shape == 1 ? draw_3x3(p, s, pad, 70, 12)
              : shape == 2 ? set_dim(p, 1, rand_int(1, 34), 3, s, 1, pad[0], pad[2], 0, 0) &&
                                 set_dim(p, 2, 126 * s + rand_int(0, 3), 3, s, 1, pad[1], pad[3], 0, 0)
                           : draw_3x3(p, s, pad, 10, 12)))
            return 0;
        break;
    }
    case K_DWK_DIRECT: { /* depthwise 2-D, kernel width 3, 5 or 7, any height, column stride 1 or 2, any pads */
        const int32_t s = rand_int(1, 2), kw = 2 * rand_int(1, 3) + 1, kh = chance(2, 3) ? kw : rand_int(1, 7);
        /* rows shorter than a block, of a few blocks, and wide (the last block moved left); a few channels,
         * or blocks of 16 and a partial one (conv_dwk_avx512.c's small planes go 16 channels at a time) */
        const int32_t w_max = chance(1, 3) ? 12 : chance(1, 2) ? 40 : 120;
        set_channels(p, chance(1, 3) ? rand_int(14, 40) : rand_int(1, 3), 1, rand_int(1, 2));
        if (!set_dim(p, 1, rand_int(1, 14), kh, chance(3, 4) ? s : rand_int(1, 3), 1, rand_int(0, kh), rand_int(0, kh),
                     0, 0) ||
            !set_dim(p, 2, rand_int(1, w_max), kw, s, 1, rand_int(0, kw), rand_int(0, kw), 0, 0))
            return 0;
        break;
    }
    case K_TRANSPOSE: {
        const int nd = rand_int(1, 3);
        set_channels(p, rand_int(1, 3), rand_int(1, 8), rand_int(1, 8));
        if (!draw_dims(p, nd, nd == 3 ? 4 : 8, nd == 3 ? 3 : 4, 3, 2, 2, 1)) return 0;
        break;
    }
    case K_WINOGRAD:  /* 3 x 3 same size, one group, rows up to 256 wide */
    case K_WINOGRAD4:
        set_channels(p, 1, rand_int(1, 20), rand_int(1, 20));
        if (!set_dim(p, 1, rand_int(1, 20), 3, 1, 1, 1, 1, 0, 0) ||
            !set_dim(p, 2, rand_int(1, chance(1, 4) ? 256 : 40), 3, 1, 1, 1, 1, 0, 0))
            return 0;
        break;
    default:
        return 0;
    }
    /* the patch-matrix and position blocks of the kernels that take them */
    k = p->in_c / p->group * prod3(p->kernel);
    npos = prod3(p->out_size);
    if (kind == K_IM2COL) {
        p->kc = chance(1, 3) ? k : rand_int(1, k);
        p->nc = chance(1, 3) ? npos : rand_int(1, npos);
    } else if (kind == K_S1) {
        p->kc = chance(1, 3) ? k : rand_int(1, k);
        p->nc = rand_int(1, p->out_size[1] * (p->out_size[2] + p->kernel[2] - 1));
    } else if (kind == K_POINTWISE_T) {
        p->nc = PANEL * rand_int(1, ceil16(p->out_c / p->group) / PANEL);
    } else if (kind == K_TRANSPOSE) {
        npos = prod3(p->in_size);
        p->nc = chance(1, 3) ? npos : rand_int(1, npos);
    } else if (kind == K_WINOGRAD) { /* bands of 1 to 16 tile rows of at most 256 tiles */
        const int32_t tw = (p->out_size[2] + 1) / 2, th = (p->out_size[1] + 1) / 2, most = 256 / tw;
        p->nc = rand_int(1, th < 16 ? (th < most ? th : most) : (16 < most ? 16 : most));
    } else if (kind == K_WINOGRAD4) { /* bands of 1 to 16 tile rows of at most 128 tiles */
        const int32_t tw = (p->out_size[2] + 3) / 4, th = (p->out_size[1] + 3) / 4, most = 128 / tw;
        p->nc = rand_int(1, th < 16 ? (th < most ? th : most) : (16 < most ? 16 : most));
    }
    return (double)p->batch * p->out_c * prod3(p->out_size) * k <= MAX_MACS &&
           (double)p->batch * p->in_c * prod3(p->in_size) * (p->out_c / p->group) * prod3(p->kernel) <= MAX_MACS;
}

/* Floats of scratch the compiler gives the kernel: aotc_conv.h's <kernel>_scratch_bytes, the sizes
 * aot/kernels/conv.py gives the memory plan (tests/kernels_c/test_scratch_facts.py holds the two equal); -1 for none. */
static long scratch_floats(const conv_case *c) {
    const aotc_conv_params *p = &c->p;
    int64_t bytes;
    switch (c->kind) {
    case K_IM2COL: bytes = aotc_conv_f32_scratch_bytes(p); break;
    case K_S1: bytes = aotc_conv_s1_f32_scratch_bytes(p); break;
    case K_POINTWISE: bytes = c->work ? aotc_conv_pointwise_f32_scratch_bytes(p) : 0; break;
    case K_POINTWISE_T: bytes = aotc_conv_pointwise_t_f32_scratch_bytes(p); break;
    case K_DW3_PADDED: bytes = aotc_conv_depthwise3x3_f32_scratch_bytes(p); break;
    case K_FLAT3X3: bytes = aotc_conv3x3_flat_f32_scratch_bytes(p); break;
    case K_TRANSPOSE: bytes = aotc_conv_transpose_f32_scratch_bytes(p); break;
    case K_WINOGRAD: bytes = aotc_conv_winograd_f32_scratch_bytes(p, 1); break;
    case K_WINOGRAD4: bytes = aotc_conv_winograd4_f32_scratch_bytes(p, 1); break;
    default: return -1;
    }
    return (long)(bytes / (int64_t)sizeof(float));
}

/* Each group's W^T (C/g * taps rows, M/g columns) in the GEMM core's panels of PANEL columns,
 * zero-padded: what conv.py packs for the implicit GEMM and X^T * W^T. Channels last: the rows
 * in (tap, channel) order. */
static float *pack_wt(const aotc_conv_params *p, const float *w) {
    const int32_t mg = p->out_c / p->group, cg = p->in_c / p->group, taps = prod3(p->kernel), rows = cg * taps;
    const int32_t cols = ceil16(mg);
    float *wt = test_alloc((size_t)p->group * cols * rows);
    int32_t g, r, j;
    for (g = 0; g < p->group; ++g)
        for (r = 0; r < rows; ++r) {
            const int32_t src = p->in_nhwc ? r % cg * taps + r / cg : r; /* the ONNX row (c, tap) */
            for (j = 0; j < cols; ++j)
                wt[((size_t)g * cols + j / PANEL * PANEL) * rows + (size_t)r * PANEL + j % PANEL] =
                    j < mg ? w[((size_t)g * mg + j) * rows + src] : 0.0f;
        }
    return wt;
}

/* The a^2 matrices U[e] = (G g G^T)[e] (out_c x in_c) of a 3 x 3 conv's weights, in double, as
 * aot/kernels/winograd.py computes them: a = 4 for aotc_conv_winograd_f32's F(2 x 2, 3 x 3), 6 for
 * aotc_conv_winograd4_f32's F(4 x 4, 3 x 3). */
static float *winograd_u(const aotc_conv_params *p, const float *w, int32_t a) {
    static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    static const double G4[6][3] = {{1.0 / 4, 0, 0},          {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    const int32_t M = p->out_c, C = p->in_c;
    float *u = test_alloc((size_t)a * a * M * C);
    int32_t m, c, i, j, k, l;
    for (m = 0; m < M; ++m)
        for (c = 0; c < C; ++c) {
            const float *g = w + ((size_t)m * C + c) * 9;
            for (i = 0; i < a; ++i)
                for (j = 0; j < a; ++j) {
                    double v = 0;
                    for (k = 0; k < 3; ++k)
                        for (l = 0; l < 3; ++l)
                            v += (a == 4 ? G2[i][k] * G2[j][l] : G4[i][k] * G4[j][l]) * g[k * 3 + l];
                    u[((size_t)(a * i + j) * M + m) * C + c] = (float)v;
                }
        }
    return u;
}

/* x (N x C x spatial) channels last, N x spatial x C. */
static float *to_nhwc(const aotc_conv_params *p, const float *x) {
    const size_t sp = (size_t)prod3(p->in_size), n = (size_t)p->batch * p->in_c * sp;
    float *xh = test_alloc(n);
    size_t b, c, i;
    for (b = 0; b < (size_t)p->batch; ++b)
        for (c = 0; c < (size_t)p->in_c; ++c)
            for (i = 0; i < sp; ++i) xh[(b * sp + i) * p->in_c + c] = x[(b * p->in_c + c) * sp + i];
    return xh;
}

static void print_case(const conv_case *c) {
    const aotc_conv_params *p = &c->p;
    printf("  batch %d, group %d, %d -> %d channels, in %dx%dx%d, out %dx%dx%d, kernel %dx%dx%d, strides %d %d %d, "
           "dilations %d %d %d, pads %d %d %d, kc %d, nc %d, act %d, bias %d, residual %d, work %d, nhwc %d\n",
           (int)p->batch, (int)p->group, (int)p->in_c, (int)p->out_c, (int)p->in_size[0], (int)p->in_size[1],
           (int)p->in_size[2], (int)p->out_size[0], (int)p->out_size[1], (int)p->out_size[2], (int)p->kernel[0],
           (int)p->kernel[1], (int)p->kernel[2], (int)p->strides[0], (int)p->strides[1], (int)p->strides[2],
           (int)p->dilations[0], (int)p->dilations[1], (int)p->dilations[2], (int)p->pads[0], (int)p->pads[1],
           (int)p->pads[2], (int)p->kc, (int)p->nc, (int)p->act, c->bias, c->res, c->work, (int)p->in_nhwc);
}

static int unchanged(const float *a, const float *b, size_t n) {
    return a == NULL || n == 0 || memcmp(a, b, n * sizeof(float)) == 0;
}

/* Runs one case through its kernel and the reference; 1 on a mismatch. */
static int check(const conv_case *c) {
    const aotc_conv_params *p = &c->p;
    const int transpose = c->kind == K_TRANSPOSE;
    const size_t xn = (size_t)p->batch * p->in_c * prod3(p->in_size);
    const size_t yn = (size_t)p->batch * p->out_c * prod3(p->out_size);
    const size_t wn = (size_t)(transpose ? p->in_c * (p->out_c / p->group) : p->out_c * (p->in_c / p->group)) *
                      prod3(p->kernel);
    const long sn = scratch_floats(c);
    float *x = test_alloc(xn), *w = test_alloc(wn), *b = c->bias ? test_alloc(p->out_c) : NULL;
    /* y with Y_GUARD NaNs after it: AVX-512's masked stores are not seen by ASan, and a store past the
     * last image's last channel plane would otherwise go unnoticed */
    float *r = c->res ? test_alloc(yn) : NULL, *y = test_alloc_nan(yn), *ref = test_alloc(yn), *mag = test_alloc(yn);
    size_t e;
    float *x0 = test_copy(x, xn), *w0 = test_copy(w, wn), *b0 = b ? test_copy(b, p->out_c) : NULL;
    float *r0 = r ? test_copy(r, yn) : NULL;
    float *ax = test_abs(x, xn), *aw = test_abs(w, wn), *ab = test_abs(b, p->out_c), *ar = test_abs(r, yn);
    float *scratch = sn > 0 ? test_alloc_nan((size_t)sn) : NULL;
    float *wt = c->kind == K_IMPLICIT || c->kind == K_POINTWISE_T ? pack_wt(p, w)
                : c->kind == K_WINOGRAD ? winograd_u(p, w, 4) : c->kind == K_WINOGRAD4 ? winograd_u(p, w, 6) : NULL;
    y = (float *)realloc(y, (yn + Y_GUARD) * sizeof(float)); /* (no draws: the shapes stay those of the seed) */
    if (y == NULL) {
        printf("out of memory (%lu floats)\n", (unsigned long)(yn + Y_GUARD));
        exit(2);
    }
    for (e = yn; e < yn + Y_GUARD; ++e) y[e] = NAN;
    aotc_conv_params q = *p;
    int bad = 0, path;
    q.act = AOTC_ACT_NONE; /* the magnitudes: the sums of |terms| */
    if (transpose) {
        aotc_conv_transpose_ref_f32(p, x, w, b, ref);
        aotc_conv_transpose_ref_f32(&q, ax, aw, ab, mag);
    } else {
        aotc_conv_ref_f32(p, x, w, b, r, ref);
        aotc_conv_ref_f32(&q, ax, aw, ab, ar, mag);
    }
    /* the implicit GEMM, then each of its AVX-512 paths' entries on the same conv, if the path takes it
     * (built without AVX-512: every entry is the implicit GEMM; with it, an entry given a conv its path does
     * not take aborts, but here it returns, having named itself in aotc_test_avx512_path_missed) */
    for (path = 0; path < (c->kind == K_IMPLICIT ? IMPLICIT_PATHS : 1) && !bad; ++path) {
        const char *name = c->kind == K_IMPLICIT ? IMPLICIT_NAMES[path] : NAMES[c->kind];
        for (e = 0; e < yn + Y_GUARD; ++e) y[e] = NAN;
        aotc_test_avx512_path_missed = NULL;
        switch (c->kind) {
        case K_IM2COL: aotc_conv_f32(p, x, w, b, r, y, scratch); break;
        case K_S1: aotc_conv_s1_f32(p, x, w, b, r, y, scratch); break;
        case K_POINTWISE: aotc_conv_pointwise_f32(p, x, w, b, r, y, scratch); break;
        case K_POINTWISE_T: aotc_conv_pointwise_t_f32(p, x, wt, b, r, y, scratch); break;
        case K_DEPTHWISE: aotc_conv_depthwise_f32(p, x, w, b, r, y); break;
        case K_DIRECT: aotc_conv_direct_f32(p, x, w, b, r, y); break;
        case K_IMPLICIT:
            if (p->in_nhwc) {
                float *xh = to_nhwc(p, x);
                IMPLICIT_FNS[path](p, xh, wt, b, r, y);
                free(xh);
            } else {
                IMPLICIT_FNS[path](p, x, wt, b, r, y);
            }
            break;
        case K_DW3_PADDED: aotc_conv_depthwise3x3_f32(p, x, w, b, r, y, scratch); break;
        case K_FLAT3X3: aotc_conv3x3_flat_f32(p, x, w, b, r, y, scratch); break;
        case K_DW3_DIRECT: aotc_conv_depthwise3x3_direct_f32(p, x, w, b, r, y); break;
        case K_TRANSPOSE: aotc_conv_transpose_f32(p, x, w, b, y, scratch); break;
        case K_DWK_DIRECT: aotc_conv_depthwise_kxk_f32(p, x, w, b, r, y); break;
        case K_WINOGRAD: aotc_conv_winograd_f32(p, x, wt, b, r, y, scratch); break;
        case K_WINOGRAD4: aotc_conv_winograd4_f32(p, x, wt, b, r, y, scratch); break;
        default: break;
        }
        if (aotc_test_avx512_path_missed != NULL) continue;
        bad = test_differs(name, y, ref, mag, yn);
        for (e = yn; e < yn + Y_GUARD && !bad; ++e) {
            if (!isnan(y[e])) {
                printf("%s: wrote past the output (float %lu of %lu)\n", name, (unsigned long)e, (unsigned long)yn);
                bad = 1;
            }
        }
    }
    if (!bad && !(unchanged(x, x0, xn) && unchanged(w, w0, wn) && unchanged(b, b0, p->out_c) && unchanged(r, r0, yn))) {
        printf("%s: changed an input\n", NAMES[c->kind]);
        bad = 1;
    }
    if (bad) print_case(c);
    free(x), free(w), free(b), free(r), free(y), free(ref), free(mag), free(x0), free(w0), free(b0), free(r0);
    free(ax), free(aw), free(ab), free(ar), free(scratch), free(wt);
    return bad;
}

/* The references on cases small enough to work out by hand. */
static int check_reference(void) {
    /* 3 x 3 input 1..9, 2 x 2 kernel [[1, 0], [0, -1]], bias 0.5, stride 2, pads of 1:
     * output (oy, ox) = x(2 oy - 1, 2 ox - 1) - x(2 oy, 2 ox) + 0.5 (x outside: 0) */
    static const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 0, 0, -1}, bias = 0.5f;
    static const float expect[4] = {-0.5f, -2.5f, -6.5f, -3.5f};
    /* ConvTranspose 1-D: x [1, 2], kernel [1, 10, 100], stride 2: [1, 10, 100 + 2, 20, 200] */
    static const float tx[2] = {1, 2}, tw[3] = {1, 10, 100}, texpect[5] = {1, 10, 102, 20, 200};
    aotc_conv_params p;
    float y[5];
    int bad = 0, d;
    memset(&p, 0, sizeof p);
    for (d = 0; d < 3; ++d) p.in_size[d] = p.out_size[d] = p.kernel[d] = p.strides[d] = p.dilations[d] = 1;
    p.batch = p.group = p.in_c = p.out_c = 1;
    set_dim(&p, 1, 3, 2, 2, 1, 1, 0, 0, 0);
    set_dim(&p, 2, 3, 2, 2, 1, 1, 0, 0, 0);
    aotc_conv_ref_f32(&p, x, w, &bias, NULL, y);
    bad |= test_differs("aotc_conv_ref_f32", y, expect, NULL, 4);
    set_dim(&p, 1, 1, 1, 1, 1, 0, 0, 1, 0);
    set_dim(&p, 2, 2, 3, 2, 1, 0, 0, 1, 0);
    aotc_conv_transpose_ref_f32(&p, tx, tw, NULL, y);
    bad |= test_differs("aotc_conv_transpose_ref_f32", y, texpect, NULL, 5);
    return bad;
}

/* A unit-size case of `kind` (every dim 1) with the batch, the channels, the bias and residual (chosen
 * by `k`, the case's number) and an activation drawn: the edge and run checks below then set its dims. */
static void unit_case(conv_case *c, int kind, int32_t k, int32_t group, int32_t cg, int32_t mg) {
    aotc_conv_params *p = &c->p;
    int d;
    memset(c, 0, sizeof *c);
    c->kind = kind;
    for (d = 0; d < 3; ++d) p->in_size[d] = p->out_size[d] = p->kernel[d] = p->strides[d] = p->dilations[d] = 1;
    p->batch = 1 + k % 2;
    set_channels(p, group, cg, mg);
    c->bias = k % 4 != 0;
    c->res = k % 5 == 0;
    draw_activation(p);
}

/* aotc_conv_depthwise3x3_direct_f32 on every combination of stride and pads, on rows of 1 to 13
 * outputs: with Helium (conv_dw3_mve.h) the strips of 4 columns at a row's left end, right end,
 * both, or narrower than 4, and the rows' first and last outputs with tap rows outside. Heights,
 * depth multipliers, batches, activations, biases and residuals cycle through the cases. */
static int check_dw3_edges(void) {
    static const int32_t widths[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13}, heights[] = {1, 2, 3, 4, 5, 7, 25};
    int32_t s, w, pads, cases = 0;
    int bad = 0;
    for (s = 1; s <= 2; ++s)
        for (w = 0; w < (int32_t)(sizeof widths / sizeof widths[0]); ++w)
            for (pads = 0; pads < 16 && !bad; ++pads) {
                const int32_t pad[4] = {pads & 1, pads >> 1 & 1, pads >> 2 & 1, pads >> 3 & 1};
                conv_case c;
                aotc_conv_params *p = &c.p;
                unit_case(&c, K_DW3_DIRECT, cases, 2 + cases % 3, 1, 1 + cases / 3 % 2);
                if (!set_dim(p, 1, heights[cases % 7], 3, s, 1, pad[0], pad[2], 0, 0) ||
                    !set_dim(p, 2, widths[w], 3, s, 1, pad[1], pad[3], 0, 0) || p->out_size[1] < 1 || p->out_size[2] < 1)
                    continue;
                ++cases;
                bad = check(&c);
            }
    printf("%-34s %s (%d edge shapes)\n", NAMES[K_DW3_DIRECT], bad ? "MISMATCH" : "ok", (int)cases);
    return bad;
}

/* The 3 x 3 depthwise kernels (aotc_conv_depthwise3x3_direct_f32, aotc_conv3x3_flat_f32) at stride 1 with pads
 * of 1 on planes of more than 1024 positions: on AVX-512 conv_dw3_avx512.c's rows kernel, two output rows at a
 * time (odd and even heights: a last row alone), rows of one to four vectors with a partial last one; depth
 * multipliers, batches, activations, biases and residuals cycle. */
#if defined(__AVX512F__) /* the boards' RAM does not hold these planes */
static int check_dw3_rows(void) {
    static const int32_t hw[][2] = {{33, 33}, {34, 40}, {35, 47}, {64, 17}, {20, 64}, {27, 51}};
    int32_t i, cases = 0;
    int bad = 0;
    for (i = 0; i < (int32_t)(sizeof hw / sizeof hw[0]) * 2 && !bad; ++i) {
        conv_case c;
        aotc_conv_params *p = &c.p;
        unit_case(&c, i % 2 ? K_FLAT3X3 : K_DW3_DIRECT, cases, 2 + i % 3, 1, 1 + i / 2 % 2);
        set_dim(p, 1, hw[i / 2][0], 3, 1, 1, 1, 1, 0, 0);
        set_dim(p, 2, hw[i / 2][1], 3, 1, 1, 1, 1, 0, 0);
        ++cases;
        bad = check(&c);
    }
    printf("%-34s %s (%d large planes)\n", NAMES[K_DW3_DIRECT], bad ? "MISMATCH" : "ok", (int)cases);
    return bad;
}
#endif

/* aotc_conv_implicit_f32 on 1 x 1 convs (stride 1, no pads): on Cortex-M cores their bands of rows go
 * in runs of positions (the last one ending at the band's end), with Helium all of a band's runs in
 * one call (conv_implicit.c's ig_pw); planes of a run or a few, blocks of 1 to 4 output channels. */
static int check_pointwise_runs(void) {
    static const int32_t hw[][2] = {{1, 6}, {2, 3}, {1, 7}, {3, 3}, {3, 4}, {5, 5}, {25, 5}, {6, 6}, {1, 13}};
    static const int32_t cin[] = {1, 3, 8}, cout[] = {1, 2, 3, 4, 5, 8, 9};
    int32_t i, a, b, cases = 0;
    int bad = 0;
    for (i = 0; i < (int32_t)(sizeof hw / sizeof hw[0]); ++i)
        for (a = 0; a < 3; ++a)
            for (b = 0; b < 7 && !bad; ++b) {
                conv_case c;
                aotc_conv_params *p = &c.p;
                unit_case(&c, K_IMPLICIT, cases, 1, cin[a], cout[b]);
                set_dim(p, 1, hw[i][0], 1, 1, 1, 0, 0, 0, 0);
                set_dim(p, 2, hw[i][1], 1, 1, 1, 0, 0, 0, 0);
                ++cases;
                bad = check(&c);
            }
    printf("%-34s %s (%d 1 x 1 shapes)\n", NAMES[K_IMPLICIT], bad ? "MISMATCH" : "ok", (int)cases);
    return bad;
}

/* aotc_conv_implicit_f32 on 1 x 1 convs with 64+ input channels (AVX-512: conv_pwc_avx512.c's tiles of
 * 4 to 8 positions x 1 to 3 vectors of 16 output channels, transposed on the store): flat planes split
 * into tiles of 4 to 8 (49 = 7 x 7, 196 = 21 x 8 + 4 x 7, 13 x 13, 2 x 2, 1 x 5), rows at stride 2
 * (and 3 down the rows, 1 along them; input rows and columns one past the last read or not), output
 * channels in 1, 2 or 3 vectors with a partial last one (16, 32, 48, 100 = 2 x 48 + 4: blocks of 48
 * and a 4-channel vector), K odd, groups, batches; bias, residual and activation cycle. Runs of fewer
 * than 4 outputs (1 x 3, rows of 3) go elsewhere. Then 100 drawn shapes. */
#if defined(__AVX512F__) /* the path exists only there; the boards' RAM does not hold the 14 x 14 planes */
static int check_pointwise_wide(void) {
    /* IH, IW, stride y, stride x, input channels per group, output channels per group, groups */
    static const int32_t shapes[][7] = {
        {7, 7, 1, 1, 64, 100, 1},  {14, 14, 1, 1, 64, 48, 1}, {13, 13, 1, 1, 65, 32, 1}, {2, 2, 1, 1, 64, 16, 2},
        {1, 5, 1, 1, 80, 40, 1},   {4, 4, 1, 1, 96, 56, 1},   {13, 27, 2, 2, 64, 100, 1}, {14, 28, 2, 2, 64, 48, 1},
        {9, 15, 2, 2, 72, 17, 2},  {7, 9, 3, 1, 64, 33, 1},   {1, 3, 1, 1, 64, 16, 1},    {5, 6, 2, 2, 64, 20, 1},
        {8, 16, 2, 2, 64, 64, 1}};
    int32_t i, cases = 0;
    int bad = 0;
    for (i = 0; i < (int32_t)(sizeof shapes / sizeof shapes[0]) * 2 && !bad; ++i) {
        const int32_t *v = shapes[i / 2];
        conv_case c;
        aotc_conv_params *p = &c.p;
        unit_case(&c, K_IMPLICIT, i, v[6], v[4], v[5]);
        p->batch = i % 3 == 2 ? 2 : 1;
        c.res = i % 2 == 1;
        set_dim(p, 1, v[0], 1, v[2], 1, 0, 0, 0, 0);
        set_dim(p, 2, v[1], 1, v[3], 1, 0, 0, 0, 0);
        ++cases;
        bad = check(&c);
    }
    for (i = 0; i < 100 && !bad; ++i) { /* and drawn: 64 to 80 input channels, stride 1 or 2 */
        const int32_t s = rand_int(1, 2);
        conv_case c;
        aotc_conv_params *p = &c.p;
        unit_case(&c, K_IMPLICIT, rand_int(0, 19), 1, rand_int(64, 80), rand_int(1, 120));
        set_dim(p, 1, rand_int(1, 12), 1, s, 1, 0, 0, 0, 0);
        set_dim(p, 2, rand_int(1, 20), 1, s, 1, 0, 0, 0, 0);
        ++cases;
        bad = check(&c);
    }
    printf("%-34s %s (%d wide 1 x 1 shapes)\n", NAMES[K_IMPLICIT], bad ? "MISMATCH" : "ok", (int)cases);
    return bad;
}
#endif

/* aotc_conv_implicit_f32 on stems: few input channels at stride 2 or into narrow outputs (with
 * Helium, conv_stem_mve.h: vectors of 4 positions down an output column, tap rows outside as zero
 * lanes): a KWS DS-CNN's 10 x 4 on 49 x 10 (pads 5, 1, 4, 2), RGB 3 x 3 stems, dilations, 4 and
 * 5 output rows, output channels not a multiple of 4. */
static int check_stems(void) {
    /* IH, IW, KH, KW, stride, dilation, pads (top, left, bottom, right), in and out channels */
    static const int32_t shapes[][12] = {
        {49, 10, 10, 4, 2, 1, 5, 1, 4, 2, 1, 8}, {24, 24, 3, 3, 2, 1, 1, 1, 1, 1, 3, 8}, {23, 17, 3, 3, 2, 1, 0, 1, 1, 0, 3, 6},
        {9, 7, 3, 3, 1, 1, 1, 1, 1, 1, 2, 5},    {12, 6, 5, 3, 1, 2, 3, 1, 2, 2, 4, 3}, {7, 9, 3, 2, 2, 1, 0, 0, 1, 1, 1, 9},
        {10, 5, 4, 4, 2, 1, 2, 2, 2, 2, 2, 4},   {4, 3, 1, 1, 1, 1, 0, 0, 0, 0, 4, 2},  {16, 12, 7, 7, 2, 1, 3, 3, 3, 3, 3, 4}};
    int32_t i, cases = 0;
    int bad = 0;
    for (i = 0; i < (int32_t)(sizeof shapes / sizeof shapes[0]) && !bad; ++i) {
        const int32_t *v = shapes[i];
        conv_case c;
        aotc_conv_params *p = &c.p;
        unit_case(&c, K_IMPLICIT, i, 1, v[10], v[11]);
        c.bias = i % 3 != 0;
        c.res = 0;
        if (p->act == AOTC_ACT_LEAKY) p->act = AOTC_ACT_NONE;
        set_dim(p, 1, v[0], v[2], v[4], v[5], v[6], v[8], 0, 0);
        set_dim(p, 2, v[1], v[3], v[4], v[5], v[7], v[9], 0, 0);
        ++cases;
        bad = check(&c);
    }
    printf("%-34s %s (%d stem shapes)\n", NAMES[K_IMPLICIT], bad ? "MISMATCH" : "ok", (int)cases);
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 100);
    const int verbose = argc > 3; /* a third argument: print each case before it runs */
    int failed = check_reference(), kind;
    int32_t i;
    for (kind = 0; kind < K_COUNT; ++kind) {
        int bad = 0;
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
        if (kind == K_WINOGRAD || kind == K_WINOGRAD4) continue; /* for OS targets only (aot/kernels/conv.py): its buffers outgrow a board's */
#endif
        for (i = 0; i < shapes && !bad; ++i) {
            conv_case c;
            while (!draw(kind, &c)) {
            }
            if (verbose) print_case(&c), fflush(stdout);
            bad = check(&c);
        }
        printf("%-34s %s (%d shapes)\n", NAMES[kind], bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    failed |= check_dw3_edges();
    failed |= check_pointwise_runs();
    failed |= check_stems();
#if defined(__AVX512F__)
    failed |= check_pointwise_wide();
    failed |= check_dw3_rows();
#endif
    return failed;
}
