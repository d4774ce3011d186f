/* The ONNX int8 / uint8 convs (aotc_qconv_patches_*, aotc_qconv_depthwise_*) on network-sized shapes, for the AVX2
 * paths of quant_impl.h (built with -march=x86-64-v3): each exactly the reference (quant_ref.c), and, given a shape's
 * index, that shape's kernel alone once (test_kernels_c.py counts its instructions under callgrind). The random
 * shapes of test_quant_kernels.c are small planes; these are the sizes of MobileNetV2's and ResNet-18's layers, with
 * tails of positions and channels, odd channel counts, stride 2, 5 x 5 taps, packed and unpacked weights. Built with
 * AVX-512 VNNI and VBMI (test_quant_vnni_network_shapes) it checks those paths: more shapes, the depthwise convs given
 * their work, the fused ADDs their buffer, and (AOTC_TEST_QX86_TRACE) the blocks each shape ran on which path. */
#include "aotc_quant.h"
#include "kernel_test.h"
#include "kernels_ref.h"

typedef struct {
    const char *name;
    int depthwise, u8;
    int32_t in_c, out_c, in_hw, k, stride, pad, tile, packed, w_zero_any;
    int fused; /* the residual ADD fused into the stores (aotc_qconv_patches_add_*, no tmp: the plain paths' way) */
    int work;  /* given the work the plan gives an AVX-512 host (aotc_qconv_patches_x86_work_bytes): qconv_dense; in
                * AVX2 builds the AVX2 path's (aotc_qconv_avx2_work_bytes) */
} shape;

static const shape SHAPES_[] = {
    {"conv 3x3 64->64 28x28 (packed)", 0, 0, 64, 64, 28, 3, 1, 1, 64, 1, 0, 0, 0},
    {"conv 1x1 96->24 28x28", 0, 0, 96, 24, 28, 1, 1, 0, 64, 0, 0, 0, 0},
    {"conv 3x3/2 32->48 29x29 u8 w_zero", 0, 1, 32, 48, 29, 3, 2, 1, 32, 0, 1, 0, 0},
    {"conv 7x7/2 3->16 56x56 (packed)", 0, 0, 3, 16, 56, 7, 2, 3, 64, 1, 0, 0, 0},
    {"conv 3x3 5->7 13x13 w_zero", 0, 0, 5, 7, 13, 3, 1, 1, 64, 0, 1, 0, 0},
    {"depthwise 3x3 32 28x28", 1, 0, 32, 32, 28, 3, 1, 1, 0, 0, 0, 0, 0},
    {"depthwise 3x3/2 24 56x56", 1, 0, 24, 24, 56, 3, 2, 1, 0, 0, 0, 0, 0},
    {"depthwise 5x5 40 7x7 u8", 1, 1, 40, 40, 7, 5, 1, 2, 0, 0, 0, 0, 0},
    {"depthwise 3x3 8 112x112", 1, 0, 8, 8, 112, 3, 1, 1, 0, 0, 0, 0, 0},
    {"depthwise 3x3 13 14x14 w_zero", 1, 0, 13, 13, 14, 3, 1, 1, 0, 0, 1, 0, 0},
#if !(defined(__AVX512VNNI__) && defined(__AVX512VBMI__))
    /* (AVX2 builds: planes whose last patch block is 8 past whole lanes of 16, ResNet-18's 7 x 7 and 14 x 14: the
     * block in vectors of 8, 32 + 24 positions, not 32 + 32; stride 1: the taps' rows from segments) */
    {"conv 3x3 64->64 7x7 (packed)", 0, 0, 64, 64, 7, 3, 1, 1, 64, 1, 0, 0, 0},
    {"conv 3x3 20->13 14x14 u8 w_zero", 0, 1, 20, 13, 14, 3, 1, 1, 64, 0, 1, 0, 0},
#endif
    /* (checked only: the last ones) */
    {"conv 3x3 24->24 20x20 + ADD", 0, 0, 24, 24, 20, 3, 1, 1, 64, 0, 0, 1, 0},
    {"conv 1x1 40->20 9x9 u8 w_zero + ADD", 0, 1, 40, 20, 9, 1, 1, 0, 64, 0, 1, 1, 0},
#if defined(__AVX512VNNI__) && defined(__AVX512VBMI__)
    /* (AVX-512 VNNI builds only, from index 12: qconv_patches_one's requantisation a channel at a time, whole blocks
     * of 6 channels and their tails; depthwise_flat's 3 x 3 blocks, whole windows and masked, stride 1 and 2) */
    {"conv 1x1 16->96 56x56 (packed)", 0, 0, 16, 96, 56, 1, 1, 0, 64, 1, 0, 0, 0},
    {"conv 1x1 24->13 7x7", 0, 0, 24, 13, 7, 1, 1, 0, 64, 0, 0, 0, 0},
    {"conv 1x1 144->32 28x28 (packed)", 0, 0, 144, 32, 28, 1, 1, 0, 64, 1, 0, 0, 0},
    {"depthwise 3x3 96 56x56", 1, 0, 96, 96, 56, 3, 1, 1, 0, 0, 0, 0, 0},
    {"depthwise 3x3/2 19 15x15", 1, 0, 19, 19, 15, 3, 2, 1, 0, 0, 0, 0, 0},
    {"depthwise 3x3 144 7x7 u8", 1, 1, 144, 144, 7, 3, 1, 1, 0, 0, 0, 0, 0},
    /* (from index 18: qconv_dense with its quad rows made once, summed for the first 16 channels as they are made
     * (x86_dense_dotq16; three blocks at a time for 8 channels, x86_dense_dotq3x8, where the weights have no zero
     * points), then three blocks of positions x 8 channels at a time (x86_dense_dotb3x8) where the
     * weights have no zero points: 14 x 14's 12 whole blocks and a narrow one, 15 x 15 of 15-lane blocks (stride 2),
     * 7 x 7's 16-16-16-1 (its one-lane block summed with the three before it, x86_dense_dotb3x8n), the residual ADD
     * fused; with zero points (and a narrow block of 4): no threes) */
    {"conv 3x3 24->48 14x14 dense (packed)", 0, 0, 24, 48, 14, 3, 1, 1, 256, 1, 0, 0, 1},
    {"conv 3x3 40->48 7x7 dense u8 (packed)", 0, 1, 40, 48, 7, 3, 1, 1, 49, 1, 0, 0, 1},
    /* (1 x 1 convs at stride 2: their patch rows read on runs found once a block, x86_patch_runs) */
    {"conv 1x1/2 40->32 13x13 (packed)", 0, 0, 40, 32, 13, 1, 2, 0, 64, 1, 0, 0, 0},
    {"conv 1x1/2 36->20 14x14 u8 w_zero", 0, 1, 36, 20, 14, 1, 2, 0, 64, 0, 1, 0, 0},
    {"conv 3x3/2 19->32 29x29 dense u8 (packed)", 0, 1, 19, 32, 29, 3, 2, 1, 256, 1, 0, 0, 1},
    {"conv 3x3 64->64 7x7 dense + ADD (packed)", 0, 0, 64, 64, 7, 3, 1, 1, 64, 1, 0, 1, 1},
    {"conv 3x3 16->32 10x10 dense w_zero (packed)", 0, 0, 16, 32, 10, 3, 1, 1, 256, 1, 1, 0, 1},
    /* (a 7 x 7 plane's last lane alone in its vector, x86_patch_column: a kp past 64 with a tail) */
    {"conv 1x1 200->21 7x7", 0, 0, 200, 21, 7, 1, 1, 0, 64, 0, 0, 0, 0},
#endif
};
#define NSHAPES ((int)(sizeof SHAPES_ / sizeof SHAPES_[0]))
#if !(defined(__AVX512VNNI__) && defined(__AVX512VBMI__))
/* (AVX2 builds, checked only, at dilation 2: the stride-1 patch pairs from the taps' segments) */
static const shape DILATED_[] = {
    {"conv 3x3 dil 2 24->20 30x30", 0, 0, 24, 20, 30, 3, 1, 2, 64, 0, 0, 0, 0},
    {"conv 5x5 dil 2 8->12 21x21 u8 w_zero", 0, 1, 8, 12, 21, 5, 1, 4, 64, 0, 1, 0, 0},
};
#define NDILATED ((int)(sizeof DILATED_ / sizeof DILATED_[0]))
/* (AVX2 builds, checked only: given the work the plan gives them, every channel's weights widened once a call,
 * aotc_qconv_avx2_work_bytes; packed and not, a block of channels short, u8 with weight zero points, the fused ADD) */
static const shape WIDENED_[] = {
    {"conv 3x3 64->64 28x28 (packed) widened", 0, 0, 64, 64, 28, 3, 1, 1, 64, 1, 0, 0, 1},
    {"conv 3x3/2 32->48 29x29 u8 w_zero widened", 0, 1, 32, 48, 29, 3, 2, 1, 32, 0, 1, 0, 1},
    {"conv 3x3 5->7 13x13 w_zero widened", 0, 0, 5, 7, 13, 3, 1, 1, 64, 0, 1, 0, 1},
    {"conv 1x1 96->22 28x28 widened", 0, 0, 96, 22, 28, 1, 1, 0, 64, 0, 0, 0, 1},
    {"conv 3x3 24->24 20x20 + ADD widened", 0, 0, 24, 24, 20, 3, 1, 1, 64, 0, 0, 1, 1},
};
#define NWIDENED ((int)(sizeof WIDENED_ / sizeof WIDENED_[0]))
/* (AVX2 builds, checked only: stride-2 depthwise convs as one run across output rows, qconv_depthwise_avx2_flat:
 * 7 x 7, 8 x 8 and 14 x 14 outputs, 5 x 5 (three pairs of columns), channels not a multiple of 8 or 16, padding on
 * every side, u8 and weight zero points) */
static const shape DW_S2_[] = {
    {"depthwise 3x3/2 40 14x14 u8", 1, 1, 40, 40, 14, 3, 2, 1, 0, 0, 0, 0, 0},
    {"depthwise 3x3/2 19 15x15 w_zero", 1, 0, 19, 19, 15, 3, 2, 1, 0, 0, 1, 0, 0},
    {"depthwise 5x5/2 21 13x13", 1, 0, 21, 21, 13, 5, 2, 2, 0, 0, 0, 0, 0},
    {"depthwise 3x3/2 12 28x28 u8 w_zero", 1, 1, 12, 12, 28, 3, 2, 1, 0, 0, 1, 0, 0},
};
#define NDW_S2 ((int)(sizeof DW_S2_ / sizeof DW_S2_[0]))
#else
#define NDILATED 0
#define NWIDENED 0
#define NDW_S2 0
static const shape DILATED_[1];
static const shape WIDENED_[1];
static const shape DW_S2_[1];
#endif

#if defined(AOTC_TEST_QX86_TRACE)
/* the blocks run on quant_avx512vnni.h's paths (AOTC_QX86_TRACE): depthwise_flat's 3 x 3 blocks (windows whole, or
 * masked at the plane's end), a pointwise conv's patch quads 64 positions a step, qconv_patches_one's
 * column blocks requantised a channel at a time */
long aotc_test_qx86_dw3, aotc_test_qx86_dw3_masked, aotc_test_qx86_dw3_one, aotc_test_qx86_requant_channel;
long aotc_test_qx86_quads64;
/* qconv_dense's three-block dots (x86_dense_dotb3x8; with a one-lane block, x86_dense_dotb3x8n), its blocks summed
 * for the first 16 channels as their quad rows are made (x86_dense_dotq16) */
long aotc_test_qx86_dotb3, aotc_test_qx86_dotq, aotc_test_qx86_dotb3n;
/* ... and three blocks' quad rows made together with their sums for 8 channels (x86_dense_dotq3x8) */
long aotc_test_qx86_dotq3;
/* ... and the 1 x 1 convs' patch blocks gathered on runs (x86_patch_runs) */
long aotc_test_qx86_runs;
/* ... and QGemm's dot products four B rows at a time (qgemm_avx512) */
long aotc_test_qx86_gemv;
/* ... and qconv_patches_one's channels requantised 64 positions at a time with the clamp in bytes (x86_requant64) */
long aotc_test_qx86_requant64;
/* ... of which channels whose sums times their scale may pass 2^31 (x86_requant64's float clamp kept) */
long aotc_test_qx86_requant64_guard;
/* ... and a plane's last lane alone in its vector summed on its own (x86_patch_column) */
long aotc_test_qx86_column;
long aotc_test_qx86_rows3;
/* ... and a conv's last channels of its blocks of 6 summed on 4 or 2 (x86_dot_tail) */
long aotc_test_qx86_tail;
#endif

static void *buffer(size_t n) {
    void *b = malloc(n > 0 ? n : 1);
    if (b == NULL) exit(2);
    memset(b, 0xA5, n > 0 ? n : 1);
    return b;
}

#if !defined(__AVX512VNNI__)
/* AVX2 builds: the convs run again on the vpmaddubsw path (qconv_patches_ubs) with its fixes made here as
 * aot/kernels/quant_ubs.py makes them, and p->work as quant.py ubs_patches_work gives it: 1 blocks of half the tile
 * and one block's clipped weights (made again for each block of positions), 2 the whole tile (a second patch block,
 * aotc_qconv_ubs_block) and every block's weights (made once), 3 half the tile and every block's, 4 the whole tile
 * and one block's */
static int ubs_mode;

/* A 16-bit lane's 4 weights (v) with the sum of one side (sign) cut to at most 128, the largest first */
static void ubs_clip_side(int32_t v[4], int32_t sign) {
    int32_t excess = -128, i;
    for (i = 0; i < 4; ++i) excess += sign * v[i] > 0 ? sign * v[i] : 0;
    while (excess > 0) {
        int32_t at = 0, take;
        for (i = 1; i < 4; ++i) at = sign * v[i] > sign * v[at] ? i : at;
        take = sign * v[at] < excess ? sign * v[at] : excess;
        v[at] -= sign * take, excess -= take;
    }
}

/* What clipping w (out_c rows of kp) takes off as p->ubs_fix (aotc_quant.h), allocated */
static void ubs_make(aotc_qconv_params *p, const int8_t *w, int32_t kp, int32_t **uf) {
    const int32_t mg = p->out_c / p->group, mg4 = (mg + 3) / 4, ng = (kp + 7) / 8, blocks = p->group * mg4;
    int32_t *rest = (int32_t *)buffer(sizeof(int32_t) * (size_t)blocks * 4 * ng * 8), n = 0;
    int32_t b, c, g, k, h, e;
    *uf = (int32_t *)buffer(sizeof(int32_t) * ((size_t)blocks + 1 + (size_t)blocks * 4 * ng * 2 * 2 * 3));
    for (b = 0; b < blocks; ++b) {
        for (c = 0; c < 4; ++c) {
            const int32_t ch = b % mg4 * 4 + c, row = (b / mg4) * mg + ch;
            for (g = 0; g < ng; ++g) {
                for (h = 0; h < 2; ++h) { /* lane h: bytes 2h, 2h + 1 of quads 2g and 2g + 1 */
                    const int32_t at[4] = {8 * g + 2 * h, 8 * g + 2 * h + 1, 8 * g + 4 + 2 * h, 8 * g + 5 + 2 * h};
                    int32_t v[4], full[4];
                    for (k = 0; k < 4; ++k) full[k] = v[k] = ch < mg && at[k] < kp ? w[(size_t)row * kp + at[k]] : 0;
                    ubs_clip_side(v, 1), ubs_clip_side(v, -1);
                    for (k = 0; k < 4; ++k) {
                        const size_t i = ((size_t)(b * 4 + c) * ng * 8) + (size_t)at[k];
                        rest[i] = full[k] - v[k];
                    }
                }
            }
        }
    }
    (*uf)[0] = 0;
    for (b = 0; b < blocks; ++b) { /* each rest quad in parts whose pairs of one sign sum within 128 */
        int32_t *fix = *uf + blocks + 1;
        for (c = 0; c < 4; ++c) {
            for (k = 0; k < 2 * ng; ++k) {
                int32_t *q = rest + (size_t)(b * 4 + c) * ng * 8 + 4 * k;
                while (q[0] | q[1] | q[2] | q[3]) {
                    int8_t part[4];
                    for (e = 0; e < 4; e += 2) {
                        int32_t a = q[e], d = q[e + 1];
                        if (a * d > 0 && abs(a) + abs(d) > 128) {
                            const int32_t sg = a > 0 ? 1 : -1;
                            a = sg * (abs(a) < 128 ? abs(a) : 128), d = sg * (128 - abs(a));
                        }
                        part[e] = (int8_t)a, part[e + 1] = (int8_t)d, q[e] -= a, q[e + 1] -= d;
                    }
                    fix[2 * n] = c | k << 2;
                    memcpy(&fix[2 * n + 1], part, 4);
                    ++n;
                }
            }
        }
        (*uf)[b + 1] = n;
    }
    free(rest);
}
#endif

/* Shape s at dilation dil: its kernel once (check 0) or checked against the reference (1). Returns 1 on a
 * mismatch. */
static int run(const shape *s, int check, int32_t dil) {
    aotc_qconv_params p;
    aotc_qresidual_params rp;
    const int u8 = s->u8;
    int32_t k, kp, c, i, lo, hi, zp;
    size_t x_n, y_n, w_n;
    void *x, *y, *ref, *scratch, *res = NULL, *tmp = NULL;
    int8_t *w, *w_arg;
    float *scale;
    int32_t *bias, *bias_arg, *w_zero, *ubs_fix = NULL;
    int bad = 0;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.in_c = s->in_c, p.out_c = s->out_c, p.group = s->depthwise ? s->in_c : 1;
    p.in_h = p.in_w = s->in_hw, p.k_h = p.k_w = s->k, p.stride_h = p.stride_w = s->stride;
    p.dil_h = p.dil_w = dil, p.pad_top = p.pad_left = s->pad;
    p.out_h = p.out_w = (s->in_hw + 2 * s->pad - (s->k - 1) * p.dil_w - 1) / s->stride + 1;
    k = (p.in_c / p.group) * p.k_h * p.k_w, kp = s->depthwise ? k : (k + 3) / 4 * 4;
    p.x_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    p.y_zero = u8 ? rand_int(100, 150) : rand_int(-20, 20);
    lo = (u8 ? 0 : -128) - p.y_zero, hi = (u8 ? 255 : 127) - p.y_zero;
#if defined(__AVX512VNNI__)
    if (s->out_c % 2) lo += 20, hi -= 30; /* a fused activation's narrower clamp (x86_requant64 clamps in bytes) */
#endif
    p.y_lo = (float)lo, p.y_hi = (float)hi;
    x_n = (size_t)p.in_c * p.in_h * p.in_w, y_n = (size_t)p.out_c * p.out_h * p.out_w, w_n = (size_t)p.out_c * kp;
    x = buffer(x_n), y = buffer(y_n), ref = buffer(y_n), w = (int8_t *)buffer(w_n);
    for (i = 0; i < (int32_t)x_n; ++i) ((uint8_t *)x)[i] = (uint8_t)rand_int(0, 255);
    for (c = 0; c < p.out_c; ++c) {
        for (i = 0; i < kp; ++i) w[(size_t)c * kp + i] = (int8_t)(i < k ? rand_int(-127, 127) : 0);
    }
    scale = (float *)buffer(sizeof(float) * p.out_c);
    bias = (int32_t *)buffer(sizeof(int32_t) * p.out_c), bias_arg = (int32_t *)buffer(sizeof(int32_t) * p.out_c);
    w_zero = (int32_t *)buffer(sizeof(int32_t) * p.out_c);
    p.w_zero_any = s->w_zero_any;
    for (c = 0; c < p.out_c; ++c) {
        /* about 1 / (the sum's spread): outputs over the whole range, some saturated */
        scale[c] = (0.5f + (float)(test_next() >> 8) / 16777216.0f) / (32.0f * (float)k);
#if defined(__AVX512VNNI__)
        /* sums times scale past 2^31, saturated: x86_requant64's float clamp kept (its convs' out_c a multiple of 4) */
        if (c % 5 == 3 && p.out_c % 4 == 0) scale[c] *= 1073741824.0f;
#endif
        bias[c] = rand_int(-2000, 2000);
        w_zero[c] = s->w_zero_any ? rand_int(-128, 127) : 0;
    }
    p.scale = scale, p.w_zero = w_zero, p.bias = bias_arg;
    w_arg = w;
    zp = p.x_zero + (u8 ? 0 : 128);
    for (c = 0; c < p.out_c; ++c) { /* as aot/kernels/quant.py: the patches' zero point folded into the bias */
        int32_t wsum = 0;
        for (i = 0; i < k; ++i) wsum += w[(size_t)c * kp + i];
        bias_arg[c] = s->depthwise ? bias[c] : bias[c] + kp * zp * w_zero[c] - zp * wsum;
    }
#if !defined(__AVX512VNNI__)
    if (ubs_mode && !s->depthwise) ubs_make(&p, w, kp, &ubs_fix), p.ubs_fix = ubs_fix;
#endif
    if (s->packed) { /* as quant.py's interleave_rows(w, 16) */
        w_arg = (int8_t *)buffer(w_n);
        for (c = 0; c < p.out_c; ++c) {
            for (i = 0; i < kp; ++i) w_arg[(size_t)(c / 16) * 16 * kp + (size_t)(i / 4) * 64 + (c % 16) * 4 + i % 4] = w[(size_t)c * kp + i];
        }
        p.w_packed = 1;
    }
    if (s->depthwise) {
#if defined(__AVX512VNNI__) && defined(__AVX512VBMI__)
        p.work = 1 << 20; /* room for depthwise_flat's work, as the plan gives it (quant.py x86_depthwise_work) */
#endif
        scratch = buffer((size_t)aotc_qconv_depthwise_scratch_bytes(&p));
        if (u8) aotc_qconv_depthwise_u8(&p, (const uint8_t *)x, w, (uint8_t *)y, (uint8_t *)scratch);
        else aotc_qconv_depthwise_i8(&p, (const int8_t *)x, w, (int8_t *)y, (int8_t *)scratch);
    } else {
        const int32_t tile = s->tile < p.out_h * p.out_w ? s->tile : p.out_h * p.out_w;
#if defined(__AVX512VNNI__) && defined(__AVX512VBMI__)
        if (s->work) { /* all the plan's work (quant.py): qconv_dense's */
            p.work = INT32_MAX;
            p.work = (int32_t)aotc_qconv_patches_x86_work_bytes(&p, tile);
        }
#else
        if (s->work) { /* the AVX2 path's widened weights (quant.py avx2_patches_work) */
            p.work = INT32_MAX;
            p.work = (int32_t)aotc_qconv_avx2_work_bytes(&p);
        }
#endif
#if !defined(__AVX512VNNI__)
        if (ubs_mode) /* (quant.py ubs_patches_work) */
            p.work = (int32_t)((ubs_mode % 2 == 0 ? aotc_qconv_patch_bytes(&p, tile) : 0) +
                               (ubs_mode == 2 || ubs_mode == 3 ? aotc_qconv_ubs_wall_bytes(&p) : aotc_qconv_ubs_wblock_bytes(&p)));
#endif
        scratch = buffer((size_t)aotc_qconv_patches_scratch_bytes(&p, tile));
        if (s->fused) { /* QLinearAdd's parameters as aot/qmath.py computes them, over y's shape */
            const float sa = 0.02f + (float)rand_int(0, 100) / 1000.0f, sb = 0.02f + (float)rand_int(0, 100) / 1000.0f;
            memset(&rp, 0, sizeof rp);
            rp.conv_a = rand_int(0, 1);
            rp.add.shape.rank = 1, rp.add.shape.shape[0] = (int32_t)y_n;
            rp.add.shape.a_strides[0] = rp.add.shape.b_strides[0] = 1;
            rp.add.a_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127), rp.add.b_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
            rp.add.y_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
            rp.add.a_mult = sa / 0.05f, rp.add.b_mult = sb / 0.05f;
            rp.add.bias = (float)rp.add.y_zero - fmaf(rp.add.a_mult, (float)rp.add.a_zero, rp.add.b_mult * (float)rp.add.b_zero);
            rp.add.y_lo = (float)((u8 ? 0 : -128) - rp.add.y_zero), rp.add.y_hi = (float)((u8 ? 255 : 127) - rp.add.y_zero);
            res = buffer(y_n);
            for (i = 0; i < (int32_t)y_n; ++i) ((uint8_t *)res)[i] = (uint8_t)rand_int(0, 255);
#if defined(__AVX512VNNI__)
            tmp = buffer(y_n); /* (the AVX-512 VNNI paths' plan always gives the conv's output a buffer) */
#endif
            if (u8) aotc_qconv_patches_add_u8(&p, &rp, tile, (const uint8_t *)x, w_arg, (const uint8_t *)res, (uint8_t *)y,
                                              (uint8_t *)scratch, (uint8_t *)tmp);
            else aotc_qconv_patches_add_i8(&p, &rp, tile, (const int8_t *)x, w_arg, (const int8_t *)res, (int8_t *)y,
                                           (uint8_t *)scratch, (int8_t *)tmp);
        } else if (u8) {
            aotc_qconv_patches_u8(&p, tile, (const uint8_t *)x, w_arg, (uint8_t *)y, (uint8_t *)scratch);
        } else {
            aotc_qconv_patches_i8(&p, tile, (const int8_t *)x, w_arg, (int8_t *)y, (uint8_t *)scratch);
        }
    }
    if (check) {
        if (u8) aotc_qconv_u8_ref(&p, (const uint8_t *)x, w, kp, bias, (uint8_t *)ref);
        else aotc_qconv_i8_ref(&p, (const int8_t *)x, w, kp, bias, (int8_t *)ref);
        if (s->fused) { /* the conv's output, then the ADD (the fused stores compute what aotc_qadd_* does) */
            void *sum = buffer(y_n);
            const void *a = rp.conv_a ? ref : res, *b2 = rp.conv_a ? res : ref;
            if (u8) aotc_qadd_u8_ref(&rp.add, (const uint8_t *)a, (const uint8_t *)b2, (uint8_t *)sum);
            else aotc_qadd_i8_ref(&rp.add, (const int8_t *)a, (const int8_t *)b2, (int8_t *)sum);
            memcpy(ref, sum, y_n);
            free(sum);
        }
        for (i = 0; i < (int32_t)y_n && !bad; ++i) {
            const int32_t a = u8 ? ((uint8_t *)y)[i] : ((int8_t *)y)[i], b = u8 ? ((uint8_t *)ref)[i] : ((int8_t *)ref)[i];
            if (a != b) {
                printf("%s: element %d of %d is %d, reference %d\n", s->name, (int)i, (int)y_n, (int)a, (int)b);
                bad = 1;
            }
        }
    }
    printf("%-40s %s%s (%ld MACs)", s->name, p.ubs_fix != NULL ? "ubs-" : "", bad ? "MISMATCH" : check ? "ok" : "ran",
           (long)y_n * (long)(p.in_c / p.group) * p.k_h * p.k_w);
#if defined(AOTC_TEST_QX86_TRACE)
    printf(" dw3 %ld dw3_masked %ld dw3_one %ld requant_channel %ld quads64 %ld dotb3 %ld dotq %ld dotb3n %ld dotq3 %ld"
           " runs %ld requant64 %ld requant64_guard %ld column %ld tail %ld", aotc_test_qx86_dw3, aotc_test_qx86_dw3_masked,
           aotc_test_qx86_dw3_one,
           aotc_test_qx86_requant_channel, aotc_test_qx86_quads64, aotc_test_qx86_dotb3, aotc_test_qx86_dotq,
           aotc_test_qx86_dotb3n, aotc_test_qx86_dotq3, aotc_test_qx86_runs, aotc_test_qx86_requant64,
           aotc_test_qx86_requant64_guard, aotc_test_qx86_column, aotc_test_qx86_tail);
    aotc_test_qx86_dw3 = aotc_test_qx86_dw3_masked = aotc_test_qx86_dw3_one = aotc_test_qx86_requant_channel = 0;
    aotc_test_qx86_quads64 = 0;
    aotc_test_qx86_requant64 = aotc_test_qx86_requant64_guard = aotc_test_qx86_column = aotc_test_qx86_tail = 0;
    aotc_test_qx86_dotb3 = aotc_test_qx86_dotq = aotc_test_qx86_dotb3n = aotc_test_qx86_dotq3 = aotc_test_qx86_runs = 0;
#endif
    printf("\n");
    if (w_arg != w) free(w_arg);
    free(x), free(y), free(ref), free(w), free(scale), free(bias), free(bias_arg), free(w_zero), free(scratch), free(res), free(tmp);
    free(ubs_fix);
    return bad;
}

#if defined(__AVX512VNNI__)
/* QGemm (aotc_qgemm_*) of m x k by k x n against the reference: MobileNetV2's classifier and shapes with tails of k
 * (not a multiple of 64) and of n (not of 4 or 16), uint8, weight zero points, one scale. Returns 1 on a mismatch. */
static int run_gemm(int32_t m, int32_t n, int32_t k, int u8, int with_b_zero, int per_column) {
    aotc_qgemm_params p;
    int32_t i, j, a_zero, *bias, *folded, *b_zero;
    float *scale;
    void *a, *y, *ref;
    int8_t *bt;
    int bad = 0;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.per_column = per_column;
    a_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    p.y_zero = u8 ? rand_int(100, 150) : rand_int(-20, 20);
    p.y_lo = (float)((u8 ? 0 : -128) - p.y_zero), p.y_hi = (float)((u8 ? 255 : 127) - p.y_zero);
    a = buffer((size_t)m * k), bt = (int8_t *)buffer((size_t)n * k), y = buffer((size_t)m * n), ref = buffer((size_t)m * n);
    for (i = 0; i < m * k; ++i) ((uint8_t *)a)[i] = (uint8_t)rand_int(0, 255);
    for (i = 0; i < n * k; ++i) bt[i] = (int8_t)rand_int(-128, 127);
    scale = (float *)buffer(sizeof(float) * n), bias = (int32_t *)buffer(sizeof(int32_t) * n);
    folded = (int32_t *)buffer(sizeof(int32_t) * n), b_zero = (int32_t *)buffer(sizeof(int32_t) * n);
    for (j = 0; j < n; ++j) {
        int32_t sum = 0;
        scale[j] = (0.5f + (float)(test_next() >> 8) / 16777216.0f) / (64.0f * (float)k);
        bias[j] = rand_int(-20000, 20000), b_zero[j] = with_b_zero ? rand_int(-128, 127) : 0;
        for (i = 0; i < k; ++i) sum += bt[(size_t)j * k + i] - b_zero[j];
        folded[j] = bias[j] - a_zero * sum; /* as aot/kernels/quant.py */
    }
    p.scale = scale, p.bias = folded, p.b_zero = with_b_zero ? b_zero : NULL;
    if (u8) {
        aotc_qgemm_u8(&p, (const uint8_t *)a, bt, (uint8_t *)y, NULL);
        aotc_qgemm_u8_ref(&p, a_zero, (const uint8_t *)a, bt, bias, (uint8_t *)ref);
    } else {
        aotc_qgemm_i8(&p, (const int8_t *)a, bt, (int8_t *)y, NULL);
        aotc_qgemm_i8_ref(&p, a_zero, (const int8_t *)a, bt, bias, (int8_t *)ref);
    }
    for (i = 0; i < m * n && !bad; ++i) {
        const int32_t u = u8 ? ((uint8_t *)y)[i] : ((int8_t *)y)[i], v = u8 ? ((uint8_t *)ref)[i] : ((int8_t *)ref)[i];
        if (u != v) printf("qgemm %dx%dx%d: element %d is %d, reference %d\n", (int)m, (int)n, (int)k, (int)i, (int)u, (int)v);
        bad |= u != v;
    }
    printf("qgemm %dx%dx%d%s%s%s %s", (int)m, (int)n, (int)k, u8 ? " u8" : "", with_b_zero ? " b_zero" : "",
           per_column ? "" : " one scale", bad ? "MISMATCH" : "checked");
#if defined(AOTC_TEST_QX86_TRACE)
    printf(" gemv %ld", aotc_test_qx86_gemv);
    aotc_test_qx86_gemv = 0;
#endif
    printf("\n");
    free(a), free(bt), free(y), free(ref), free(scale), free(bias), free(folded), free(b_zero);
    return bad;
}
#endif

/* argv[1]: the seed; argv[2]: a shape's index to run once (no argument: every shape, checked) */
int main(int argc, char **argv) {
    int failed = 0, i;
    test_seed(argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1u);
    if (argc > 2) return run(&SHAPES_[atoi(argv[2]) % NSHAPES], 0, 1);
    for (i = 0; i < NSHAPES; ++i) failed |= run(&SHAPES_[i], 1, 1);
    for (i = 0; i < NDILATED; ++i) failed |= run(&DILATED_[i], 1, 2);
    for (i = 0; i < NWIDENED; ++i) failed |= run(&WIDENED_[i], 1, 1);
    for (i = 0; i < NDW_S2; ++i) failed |= run(&DW_S2_[i], 1, 1);
#if !defined(__AVX512VNNI__)
    for (i = 0; i < NSHAPES + NDILATED; ++i) { /* the convs again by vpmaddubsw, in the 4 modes */
        const shape *sh = i < NSHAPES ? &SHAPES_[i] : &DILATED_[i - NSHAPES];
        if (sh->depthwise) continue;
        ubs_mode = 1 + i % 4;
        failed |= run(sh, 1, i < NSHAPES ? 1 : 2);
    }
    ubs_mode = 0;
#endif
#if defined(__AVX512VNNI__)
    failed |= run_gemm(1, 1000, 1280, 0, 0, 1); /* MobileNetV2's classifier */
    failed |= run_gemm(3, 21, 70, 0, 0, 1);
    failed |= run_gemm(2, 5, 63, 1, 1, 1);
    failed |= run_gemm(1, 19, 129, 0, 1, 0);
    failed |= run_gemm(4, 16, 3, 1, 0, 0);
#endif
    return failed;
}
