/* The int8 / uint8 kernels of runtime_c/kernels/quant/ against the references (quant_ref.c),
 * exactly: every entry point of aotc_quant.h for both element types. QLinearConv on patches (with and
 * without its fused residual QLinearAdd) and depthwise, and QGemm, get their parameters prepared as
 * aot/kernels/quant.py prepares them (weight rows padded to quads, on hosts packed in blocks of 16
 * channels where the channels allow, the input zero point folded into the bias of the patch kernel,
 * scratch of the size the compiler gives, on hosts none at all sometimes), the references the model's
 * own bias and weights. Run on the host (the plain C paths, or AVX-512 VNNI) and on Cortex-M boards
 * under qemu (the DSP extension's paths on the M4 and M55, plain C and the integer requantisation on
 * the M3): every target must give the same integers. */
#include "aotc_quant.h"
#include "aotc_threads.h"
#include "kernel_test.h"
#include "kernels_ref.h"

/* ---- buffers of exact size ----------------------------------------------------------------------- */

static void *alloc_bytes(size_t n) {
    unsigned char *b = (unsigned char *)malloc(n > 0 ? n : 1);
    size_t i;
    if (b == NULL) {
        printf("out of memory (%lu bytes)\n", (unsigned long)n);
        exit(2);
    }
    for (i = 0; i < n; ++i) b[i] = (unsigned char)(0xA5 ^ i); /* scratch a kernel must not trust */
    return b;
}

/* n 8-bit values (int8 or uint8 as `u8`), drawn in [lo, hi] of the type */
static void *rand_q(size_t n, int u8) {
    unsigned char *b = (unsigned char *)alloc_bytes(n);
    size_t i;
    for (i = 0; i < n; ++i) b[i] = (unsigned char)(u8 ? rand_int(0, 255) : rand_int(-128, 127));
    return b;
}

static int32_t qval(const void *b, size_t i, int u8) {
    return u8 ? (int32_t)((const uint8_t *)b)[i] : (int32_t)((const int8_t *)b)[i];
}

/* y and the reference's ref, n 8-bit values each, equal */
static int report(const char *what, const void *y, const void *ref, size_t n, int u8) {
    size_t i;
    for (i = 0; i < n; ++i) {
        if (qval(y, i, u8) != qval(ref, i, u8)) {
            printf("%s (%s): element %lu of %lu is %d, reference %d\n", what, u8 ? "u8" : "i8", (unsigned long)i,
                   (unsigned long)n, (int)qval(y, i, u8), (int)qval(ref, i, u8));
            return 1;
        }
    }
    return 0;
}

static int report32(const char *what, const void *y, const void *ref, size_t n, size_t size) {
    size_t i;
    for (i = 0; i < n; ++i) {
        if (memcmp((const char *)y + i * size, (const char *)ref + i * size, size) != 0) {
            printf("%s: element %lu of %lu differs\n", what, (unsigned long)i, (unsigned long)n);
            return 1;
        }
    }
    return 0;
}

/* the output clamp less the zero point: the type's range or a fused activation's narrower one */
static void out_range(int u8, int32_t y_zero, int32_t *lo, int32_t *hi) {
    const int32_t tmin = u8 ? 0 : -128, tmax = u8 ? 255 : 127;
    int32_t a = tmin, b = tmax;
    if (chance(1, 3)) a = y_zero > tmin ? rand_int(tmin, y_zero) : tmin;   /* Relu-like */
    if (chance(1, 4)) b = rand_int(a > y_zero ? a : y_zero, tmax);          /* Clip-like */
    *lo = a - y_zero, *hi = b - y_zero;
}

static float rand_scale(void) { return (0.5f + (float)(test_next() >> 8) / 16777216.0f) * (float)ldexp(1.0, rand_int(-8, 0)); }

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define M_PROFILE 1
#else
#define M_PROFILE 0
#endif

/* QLinearAdd's parameters as aot/qmath.py computes them (the zero points folded into the bias; where a is
 * the same across the innermost run, the other order), a broadcast of the given shape */
static void qadd_params(aotc_qbinary_params *p, int u8, int a_scalar) {
    const float a_scale = rand_scale(), b_scale = rand_scale(), y_scale = rand_scale();
    int32_t lo, hi;
    p->a_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127), p->b_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    p->y_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    p->a_mult = a_scale / y_scale, p->b_mult = b_scale / y_scale;
    p->bias = a_scalar ? (float)p->y_zero - fmaf(p->b_mult, (float)p->b_zero, p->a_mult * (float)p->a_zero)
                       : (float)p->y_zero - fmaf(p->a_mult, (float)p->a_zero, p->b_mult * (float)p->b_zero);
    out_range(u8, p->y_zero, &lo, &hi);
    p->y_lo = (float)lo, p->y_hi = (float)hi;
}

/* ---- QLinearConv (patches, patches with a residual QLinearAdd, depthwise) ------------------------------- */

enum { CONV_PATCHES, CONV_PATCHES_ADD, CONV_DEPTHWISE };

static int check_conv(int kind, int u8) {
    static const char *const names[3] = {"aotc_qconv_patches", "aotc_qconv_patches_add", "aotc_qconv_depthwise"};
    const int depthwise = kind == CONV_DEPTHWISE, fused = kind == CONV_PATCHES_ADD;
    aotc_qconv_params p;
    aotc_qresidual_params r;
    const int32_t group = depthwise ? 0 : (chance(1, 4) ? rand_int(2, 3) : 1);
    int32_t cg, mg, k, kp, c, i, plane_out, lo, hi, tile = 0;
    size_t x_n, y_n, w_n, scratch_n;
    void *x, *y, *ref, *res = NULL, *tmp = NULL, *scratch;
    int8_t *w, *w_arg;
    float *scale;
    int32_t *bias, *w_zero, *bias_arg;
    int bad, in_place = 0;
    memset(&p, 0, sizeof p);
    p.batch = rand_int(1, 2);
    if (depthwise) {
        p.group = p.in_c = p.out_c = rand_int(1, 9);
        p.k_h = chance(3, 4) ? 3 : rand_int(1, 5);
        p.k_w = chance(3, 4) ? 3 : rand_int(1, 5);
    } else {
        p.group = group;
        p.in_c = group * rand_int(1, 12);
        p.out_c = group * (!M_PROFILE && chance(1, 4) ? 16 * rand_int(1, 2) : rand_int(1, 9)); /* packable: 16 a group */
        p.k_h = chance(1, 2) ? 3 : rand_int(1, 5);
        p.k_w = chance(1, 2) ? p.k_h : rand_int(1, 5);
    }
    p.stride_h = rand_int(1, 2), p.stride_w = chance(1, 4) ? 3 : rand_int(1, 2);
    p.dil_h = chance(1, 5) ? 2 : 1, p.dil_w = chance(1, 5) ? 2 : 1;
    p.pad_top = rand_int(0, 2), p.pad_left = rand_int(0, 2);
    p.in_h = rand_int(1, 12), p.in_w = rand_int(1, 40);
    if (!depthwise && chance(1, 12)) p.in_c = group * rand_int(40, 70); /* k past a chunk of widened weights */
    if (!depthwise && chance(1, 5)) { /* pointwise: the patch is the input itself */
        p.k_h = p.k_w = p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
        p.pad_top = p.pad_left = 0;
    }
    {
        const int32_t eh = (p.k_h - 1) * p.dil_h + 1, ew = (p.k_w - 1) * p.dil_w + 1;
        const int32_t pb = p.k_h == 1 && p.k_w == 1 && p.pad_top == 0 ? 0 : rand_int(0, 2);
        const int32_t pr = p.k_h == 1 && p.k_w == 1 && p.pad_left == 0 ? 0 : rand_int(0, 2);
        if (p.in_h + p.pad_top + pb < eh || p.in_w + p.pad_left + pr < ew) return 0; /* no output */
        p.out_h = (p.in_h + p.pad_top + pb - eh) / p.stride_h + 1;
        p.out_w = (p.in_w + p.pad_left + pr - ew) / p.stride_w + 1;
    }
    cg = p.in_c / p.group, mg = p.out_c / p.group, k = cg * p.k_h * p.k_w, kp = (k + 3) / 4 * 4;
    plane_out = p.out_h * p.out_w;
    p.x_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    p.y_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    out_range(u8, p.y_zero, &lo, &hi);
    p.y_lo = (float)lo, p.y_hi = (float)hi;
    x_n = (size_t)p.batch * p.in_c * p.in_h * p.in_w;
    y_n = (size_t)p.batch * p.out_c * plane_out;
    w_n = depthwise ? (size_t)p.out_c * k : (size_t)p.out_c * kp;
    x = rand_q(x_n, u8);
    y = alloc_bytes(y_n), ref = alloc_bytes(y_n);
    w = (int8_t *)alloc_bytes(w_n);
    for (c = 0; c < p.out_c; ++c) {
        for (i = 0; i < (depthwise ? k : kp); ++i) w[(size_t)c * (depthwise ? k : kp) + i] = (int8_t)(i < k ? rand_int(-128, 127) : 0);
    }
    scale = (float *)alloc_bytes(sizeof(float) * p.out_c);
    bias = (int32_t *)alloc_bytes(sizeof(int32_t) * p.out_c);
    bias_arg = (int32_t *)alloc_bytes(sizeof(int32_t) * p.out_c);
    w_zero = (int32_t *)alloc_bytes(sizeof(int32_t) * p.out_c);
    p.w_zero_any = chance(1, 4);
    for (c = 0; c < p.out_c; ++c) {
        /* about 1 / (the sum's spread): outputs over the whole range, some saturated */
        scale[c] = (0.5f + (float)(test_next() >> 8) / 16777216.0f) / (64.0f * (float)(k < 4 ? 4 : k));
        if (chance(1, 8)) scale[c] *= 1e4f; /* sums far out of range */
        bias[c] = rand_int(-20000, 20000);
        w_zero[c] = p.w_zero_any ? rand_int(-128, 127) : 0;
    }
    p.scale = scale, p.w_zero = w_zero, p.bias = bias_arg;
    w_arg = w;
    if (depthwise) {
        for (c = 0; c < p.out_c; ++c) bias_arg[c] = bias[c];
        if (chance(2, 3) && AOTC_QCONV_DW4_SPAN(&p) <= AOTC_QCONV_DW_SPAN) {
            /* as aot/kernels/quant.py on the DSP cores: whole output rows, up to AOTC_QCONV_DW_RUN positions
             * or the plane, fewer where the plan has less memory to spare */
            const int32_t plane = p.out_h * p.out_w, most = plane < AOTC_QCONV_DW_RUN ? plane : AOTC_QCONV_DW_RUN;
            const int32_t rows = most / p.out_w > 1 ? most / p.out_w : 1;
            p.dw4 = p.out_w * rand_int(1, rows);
        }
#if AOTC_QCONV_NOSCRATCH
        if (chance(3, 4)) { /* an AVX-512 host's plan: all the path takes, or none */
            p.work = INT32_MAX;
            p.work = (int32_t)aotc_qconv_depthwise_x86_work_bytes(&p);
        }
#endif
        scratch_n = (size_t)aotc_qconv_depthwise_scratch_bytes(&p);
    } else { /* as aot/kernels/quant.py: the patches hold x + offset, zp = x_zero + offset */
        const int32_t zp = p.x_zero + (u8 ? 0 : 128);
        static const int32_t tiles[3] = {64, 32, 16};
        for (c = 0; c < p.out_c; ++c) {
            int32_t wsum = 0;
            for (i = 0; i < k; ++i) wsum += w[(size_t)c * kp + i];
            bias_arg[c] = bias[c] + kp * zp * w_zero[c] - zp * wsum;
        }
        tile = tiles[rand_int(0, 2)]; /* as aot/kernels/quant.py: a whole number of lanes, or the whole plane */
        tile = tile < plane_out ? tile : plane_out;
        if (!M_PROFILE && mg % 16 == 0 && chance(1, 2)) { /* as quant.py's interleave_rows(w, 16) */
            w_arg = (int8_t *)alloc_bytes(w_n);
            for (c = 0; c < p.out_c; ++c) {
                for (i = 0; i < kp; ++i) w_arg[(size_t)(c / 16) * 16 * kp + (size_t)(i / 4) * 64 + (c % 16) * 4 + i % 4] = w[(size_t)c * kp + i];
            }
            p.w_packed = 1;
        }
        /* the work past the patch block, as the compiler plans it for the target (or none: the paths that
         * need it are then not taken) */
#if AOTC_QUANT_DSP
        if (chance(3, 4)) {
            p.work = INT32_MAX;
            p.work = (int32_t)aotc_qconv_dsp_work_bytes(&p);
        }
#elif AOTC_QCONV_NOSCRATCH
        if (chance(1, 5)) tile = 0; /* no patch block: the plan had no memory to spare */
        if (chance(3, 4)) { /* an AVX-512 host's plan: all the paths take, or what a step spares of it */
            p.work = chance(1, 2) ? INT32_MAX : rand_int(0, 1 << 17);
            p.work = (int32_t)aotc_qconv_patches_x86_work_bytes(&p, tile);
        }
#endif
        scratch_n = (size_t)aotc_qconv_patches_scratch_bytes(&p, tile);
    }
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    if (chance(3, 4)) { /* a --threads plan (aot/kernels/quant.py on_lanes): a lane of the scratch a thread */
        p.lanes = AOTC_THREADS;
        scratch_n = (size_t)AOTC_THREADS * (size_t)aotc_qconv_lane_bytes((int64_t)scratch_n - p.work, &p);
    }
#endif
    scratch = alloc_bytes(scratch_n);
    if (fused) {
        memset(&r, 0, sizeof r);
        r.conv_a = chance(1, 2);
        qadd_params(&r.add, u8, 0);
        r.add.shape.rank = 1, r.add.shape.shape[0] = (int32_t)y_n, r.add.shape.a_strides[0] = r.add.shape.b_strides[0] = 1;
        res = rand_q(y_n, u8);
        in_place = chance(1, 2); /* the sum written over the residual */
        if (in_place) memcpy(y, res, y_n);
        if (!M_PROFILE) tmp = alloc_bytes(y_n); /* hosts: the conv's output first, then the ADD */
        if (u8) {
            aotc_qconv_patches_add_u8(&p, &r, tile, (const uint8_t *)x, w_arg, (const uint8_t *)(in_place ? y : res),
                                      (uint8_t *)y, (uint8_t *)scratch, (uint8_t *)tmp);
            aotc_qconv_add_u8_ref(&p, &r, (const uint8_t *)x, w, kp, bias, (const uint8_t *)res, (uint8_t *)ref);
        } else {
            aotc_qconv_patches_add_i8(&p, &r, tile, (const int8_t *)x, w_arg, (const int8_t *)(in_place ? y : res),
                                      (int8_t *)y, (uint8_t *)scratch, (int8_t *)tmp);
            aotc_qconv_add_i8_ref(&p, &r, (const int8_t *)x, w, kp, bias, (const int8_t *)res, (int8_t *)ref);
        }
    } else if (depthwise) {
        if (u8) aotc_qconv_depthwise_u8(&p, (const uint8_t *)x, w, (uint8_t *)y, (uint8_t *)scratch);
        else aotc_qconv_depthwise_i8(&p, (const int8_t *)x, w, (int8_t *)y, (int8_t *)scratch);
    } else {
        if (u8) aotc_qconv_patches_u8(&p, tile, (const uint8_t *)x, w_arg, (uint8_t *)y, (uint8_t *)scratch);
        else aotc_qconv_patches_i8(&p, tile, (const int8_t *)x, w_arg, (int8_t *)y, (uint8_t *)scratch);
    }
    if (!fused) {
        if (u8) aotc_qconv_u8_ref(&p, (const uint8_t *)x, w, depthwise ? k : kp, bias, (uint8_t *)ref);
        else aotc_qconv_i8_ref(&p, (const int8_t *)x, w, depthwise ? k : kp, bias, (int8_t *)ref);
    }
    bad = report(names[kind], y, ref, y_n, u8);
    if (bad) {
        printf("  batch %d, %d -> %d channels, group %d, in %d x %d, out %d x %d, kernel %d x %d, stride %d x %d, "
               "dilation %d x %d, pads %d %d, x_zero %d, y_zero %d, clamp [%d, %d], w_zero_any %d, tile %d, "
               "packed %d, dw4 %d, in place %d, work %d, lanes %d\n",
               (int)p.batch, (int)p.in_c, (int)p.out_c, (int)p.group, (int)p.in_h, (int)p.in_w, (int)p.out_h,
               (int)p.out_w, (int)p.k_h, (int)p.k_w, (int)p.stride_h, (int)p.stride_w, (int)p.dil_h, (int)p.dil_w,
               (int)p.pad_top, (int)p.pad_left, (int)p.x_zero, (int)p.y_zero, (int)lo, (int)hi, (int)p.w_zero_any,
               (int)tile, (int)p.w_packed, (int)p.dw4, in_place, (int)p.work, (int)p.lanes);
    }
    if (w_arg != w) free(w_arg);
    free(x), free(y), free(ref), free(w), free(scale), free(bias), free(bias_arg), free(w_zero), free(scratch);
    free(res), free(tmp);
    return bad;
}

/* ---- QGemm ------------------------------------------------------------------------------------------ */

static int check_gemm(int u8) {
    aotc_qgemm_params p;
    int32_t n, kk, lo, hi, a_zero, per_column = chance(1, 2), with_b_zero = chance(1, 3);
    void *a, *y, *ref;
    int8_t *bt;
    float *scale;
    int32_t *bias, *folded, *b_zero;
    uint32_t *scratch;
    int bad;
    memset(&p, 0, sizeof p);
    p.m = rand_int(1, 5), p.n = rand_int(1, 20), p.k = rand_int(1, 70);
    if (chance(1, 3)) p.n = 4 * rand_int(1, 5), p.k = 4 * rand_int(1, 17); /* B interleavable */
    /* the DSP path's widened row (exact size: ASan sees an overrun), or none half the time */
    scratch = chance(1, 2) ? (uint32_t *)alloc_bytes(AOTC_QGEMM_SCRATCH(p.k, p.n)) : NULL;
    a_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    p.y_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    out_range(u8, p.y_zero, &lo, &hi);
    p.y_lo = (float)lo, p.y_hi = (float)hi;
    a = rand_q((size_t)p.m * p.k, u8);
    bt = (int8_t *)rand_q((size_t)p.n * p.k, 0);
    y = alloc_bytes((size_t)p.m * p.n), ref = alloc_bytes((size_t)p.m * p.n);
    scale = (float *)alloc_bytes(sizeof(float) * p.n);
    bias = (int32_t *)alloc_bytes(sizeof(int32_t) * p.n);
    folded = (int32_t *)alloc_bytes(sizeof(int32_t) * p.n);
    b_zero = (int32_t *)alloc_bytes(sizeof(int32_t) * p.n);
    for (n = 0; n < p.n; ++n) {
        int32_t s = 0;
        scale[n] = (0.5f + (float)(test_next() >> 8) / 16777216.0f) / (64.0f * (float)(p.k < 4 ? 4 : p.k));
        bias[n] = rand_int(-20000, 20000);
        b_zero[n] = with_b_zero ? rand_int(-128, 127) : 0;
        for (kk = 0; kk < p.k; ++kk) s += bt[(size_t)n * p.k + kk] - b_zero[n];
        folded[n] = bias[n] - a_zero * s; /* as aot/kernels/quant.py */
    }
    p.scale = scale, p.per_column = per_column, p.bias = folded, p.b_zero = with_b_zero ? b_zero : NULL;
    {
        int8_t *b_arg = bt;
        if (AOTC_DSP_IL && scratch && p.k % 4 == 0 && p.n % 4 == 0 && chance(1, 2)) {
            /* as aot/kernels/quant.py's interleave_rows(w, 4): blocks of 4 rows, a quad of each in turn */
            b_arg = (int8_t *)alloc_bytes((size_t)p.n * p.k);
            for (n = 0; n < p.n; ++n) {
                for (kk = 0; kk < p.k; ++kk) {
                    b_arg[(size_t)(n / 4) * 4 * p.k + (size_t)(kk / 4) * 16 + (n % 4) * 4 + kk % 4] = bt[(size_t)n * p.k + kk];
                }
            }
            p.il4 = 1;
        }
        if (u8) aotc_qgemm_u8(&p, (const uint8_t *)a, b_arg, (uint8_t *)y, scratch);
        else aotc_qgemm_i8(&p, (const int8_t *)a, b_arg, (int8_t *)y, scratch);
        if (b_arg != bt) free(b_arg);
    }
    if (u8) aotc_qgemm_u8_ref(&p, a_zero, (const uint8_t *)a, bt, bias, (uint8_t *)ref);
    else aotc_qgemm_i8_ref(&p, a_zero, (const int8_t *)a, bt, bias, (int8_t *)ref);
    bad = report("aotc_qgemm", y, ref, (size_t)p.m * p.n, u8);
    if (bad) {
        printf("  m %d, n %d, k %d, a_zero %d, y_zero %d, clamp [%d, %d], per_column %d, b_zero %d, il4 %d\n",
               (int)p.m, (int)p.n, (int)p.k, (int)a_zero, (int)p.y_zero, (int)lo, (int)hi, (int)per_column,
               (int)with_b_zero, (int)p.il4);
    }
    free(a), free(bt), free(y), free(ref), free(scale), free(bias), free(folded), free(b_zero), free(scratch);
    return bad;
}

/* ---- the requantisation alone ------------------------------------------------------------------------- */

/* A scale of each kind: random significands, powers of two (exact halves: ties to even), up to
 * large; and accumulators up to the whole int32 range (where (float)acc itself rounds). */
static int check_requant(int32_t cases) {
    int32_t i;
    for (i = 0; i < cases; ++i) {
        const int32_t kind = rand_int(0, 3);
        int32_t acc = kind == 0 ? (int32_t)test_next() : kind == 1 ? rand_int(-300, 300) : rand_int(-5000000, 5000000);
        float scale = (0.5f + (float)(test_next() >> 8) / 16777216.0f) * (float)ldexp(1.0, rand_int(-30, 4));
        const int32_t zero_point = rand_int(-128, 255);
        const int32_t lo = chance(1, 8) ? rand_int(1, 50) : rand_int(-300, 0);
        const int32_t hi = chance(1, 8) ? rand_int(-50, -1) : rand_int(0, 300); /* lo > hi too: hi wins */
        int32_t got, want;
        if (chance(1, 3)) scale = (float)ldexp(1.0, rand_int(-26, 2)); /* acc * scale a multiple of halves */
        if (chance(1, 8)) acc = (int32_t)((uint32_t)rand_int(0, 255) << rand_int(20, 23)) * (chance(1, 2) ? 1 : -1) +
                                rand_int(-2, 2); /* near float ties of (float)acc */
        got = aotc_requant(acc, scale, (float)lo, (float)hi, zero_point);
        want = aotc_requant_ref(acc, scale, (float)lo, (float)hi, zero_point);
        if (got != want) {
            printf("aotc_requant(%d, %.9g, %d, %d, %d) is %d, reference %d\n", (int)acc, (double)scale, (int)lo,
                   (int)hi, (int)zero_point, (int)got, (int)want);
            return 1;
        }
    }
    return 0;
}

/* ---- QuantizeLinear / DequantizeLinear, per tensor or per axis -------------------------------------------- */

static void draw_axis(aotc_qaxis *p, float **scale, int32_t **zero, int32_t zlo, int32_t zhi) {
    int32_t c;
    p->outer = rand_int(1, 3), p->channels = chance(1, 2) ? 1 : rand_int(1, 6), p->inner = rand_int(1, 40);
    *scale = (float *)alloc_bytes(sizeof(float) * p->channels), *zero = (int32_t *)alloc_bytes(sizeof(int32_t) * p->channels);
    for (c = 0; c < p->channels; ++c) (*scale)[c] = rand_scale(), (*zero)[c] = rand_int(zlo, zhi);
    p->scale = *scale, p->zero = *zero;
}

static int check_quantize(int u8) {
    aotc_qaxis p;
    float *scale, *x;
    int32_t *zero;
    size_t n, i;
    void *y, *ref;
    int bad;
    draw_axis(&p, &scale, &zero, u8 ? 0 : -128, u8 ? 255 : 127);
    n = (size_t)p.outer * p.channels * p.inner;
    x = (float *)alloc_bytes(n * sizeof(float)), y = alloc_bytes(n), ref = alloc_bytes(n);
    for (i = 0; i < n; ++i) { /* over the range and past it, halves (ties), NaN and infinities */
        const int32_t kind = rand_int(0, 9);
        const float c = scale[i / p.inner % p.channels];
        x[i] = kind < 5 ? rand_float() * 200.0f * c : kind < 8 ? (float)rand_int(-300, 300) * 0.5f * c
               : kind == 8 ? rand_float() * 1e30f : (chance(1, 2) ? NAN : INFINITY);
    }
    if (u8) aotc_quantize_u8(&p, x, (uint8_t *)y), aotc_quantize_u8_ref(&p, x, (uint8_t *)ref);
    else aotc_quantize_i8(&p, x, (int8_t *)y), aotc_quantize_i8_ref(&p, x, (int8_t *)ref);
    bad = report("aotc_quantize", y, ref, n, u8);
    if (bad) printf("  outer %d, channels %d, inner %d\n", (int)p.outer, (int)p.channels, (int)p.inner);
    free(scale), free(zero), free(x), free(y), free(ref);
    return bad;
}

static int check_dequantize(int kind) { /* 0: int8, 1: uint8, 2: int32 */
    static const char *const names[3] = {"aotc_dequantize_i8", "aotc_dequantize_u8", "aotc_dequantize_i32"};
    aotc_qaxis p;
    float *scale, *y, *ref;
    int32_t *zero;
    size_t n, i;
    void *x;
    int bad;
    draw_axis(&p, &scale, &zero, kind == 1 ? 0 : -128, kind == 1 ? 255 : kind == 0 ? 127 : 100000);
    n = (size_t)p.outer * p.channels * p.inner;
    x = kind == 2 ? alloc_bytes(n * 4) : rand_q(n, kind == 1);
    for (i = 0; kind == 2 && i < n; ++i) ((int32_t *)x)[i] = rand_int(-1000000, 1000000);
    y = (float *)alloc_bytes(n * 4), ref = (float *)alloc_bytes(n * 4);
    if (kind == 0) aotc_dequantize_i8(&p, (const int8_t *)x, y), aotc_dequantize_i8_ref(&p, (const int8_t *)x, ref);
    else if (kind == 1) aotc_dequantize_u8(&p, (const uint8_t *)x, y), aotc_dequantize_u8_ref(&p, (const uint8_t *)x, ref);
    else aotc_dequantize_i32(&p, (const int32_t *)x, y), aotc_dequantize_i32_ref(&p, (const int32_t *)x, ref);
    bad = report32(names[kind], y, ref, n, 4);
    if (bad) printf("  outer %d, channels %d, inner %d\n", (int)p.outer, (int)p.channels, (int)p.inner);
    free(scale), free(zero), free(x), free(y), free(ref);
    return bad;
}

/* ---- QLinearAdd / QLinearMul with broadcasting ------------------------------------------------------------ */

static int check_binary(int mul, int u8) {
    aotc_qbinary_params p;
    int32_t d, an = 1, bn = 1, total = 1, adims[4], bdims[4];
    void *a, *b, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.shape.rank = rand_int(1, 4);
    for (d = 0; d < p.shape.rank; ++d) {
        p.shape.shape[d] = chance(1, 5) ? rand_int(16, 70) : rand_int(1, 6); /* runs for the vector paths too */
        adims[d] = chance(1, 4) ? 1 : p.shape.shape[d], bdims[d] = chance(1, 4) ? 1 : p.shape.shape[d];
        total *= p.shape.shape[d];
    }
    if (total > 4000) p.shape.rank = 1, p.shape.shape[0] = total = rand_int(1, 200), adims[0] = bdims[0] = total;
    for (d = p.shape.rank - 1; d >= 0; --d) {
        p.shape.a_strides[d] = adims[d] == 1 ? 0 : an, p.shape.b_strides[d] = bdims[d] == 1 ? 0 : bn;
        an *= adims[d], bn *= bdims[d];
    }
    if (mul) {
        int32_t lo, hi;
        p.a_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127), p.b_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
        p.y_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
        p.a_mult = rand_scale() * rand_scale() / rand_scale();
        out_range(u8, p.y_zero, &lo, &hi);
        p.y_lo = (float)lo, p.y_hi = (float)hi;
    } else {
        qadd_params(&p, u8, p.shape.a_strides[p.shape.rank - 1] == 0);
    }
    a = rand_q((size_t)an, u8), b = rand_q((size_t)bn, u8), y = alloc_bytes((size_t)total), ref = alloc_bytes((size_t)total);
    if (mul && u8) aotc_qmul_u8(&p, a, b, y), aotc_qmul_u8_ref(&p, a, b, ref);
    else if (mul) aotc_qmul_i8(&p, a, b, y), aotc_qmul_i8_ref(&p, a, b, ref);
    else if (u8) aotc_qadd_u8(&p, a, b, y), aotc_qadd_u8_ref(&p, a, b, ref);
    else aotc_qadd_i8(&p, a, b, y), aotc_qadd_i8_ref(&p, a, b, ref);
    bad = report(mul ? "aotc_qmul" : "aotc_qadd", y, ref, (size_t)total, u8);
    if (bad) printf("  rank %d, last dim %d, a stride %d, b stride %d\n", (int)p.shape.rank,
                    (int)p.shape.shape[p.shape.rank - 1], (int)p.shape.a_strides[p.shape.rank - 1],
                    (int)p.shape.b_strides[p.shape.rank - 1]);
    free(a), free(b), free(y), free(ref);
    return bad;
}

/* ---- the pools ------------------------------------------------------------------------------------------ */

static int check_global_avgpool(int u8) {
    const int32_t planes = rand_int(1, 8), size = chance(1, 4) ? rand_int(100, 400) : rand_int(1, 70);
    const int32_t x_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127), y_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    const float scale = rand_scale() / (float)size * (float)rand_int(1, 4);
    void *x = rand_q((size_t)planes * size, u8), *y = alloc_bytes((size_t)planes), *ref = alloc_bytes((size_t)planes);
    int bad;
    if (u8) aotc_qglobal_avgpool_u8(planes, size, scale, x_zero, y_zero, x, y), aotc_qglobal_avgpool_u8_ref(planes, size, scale, x_zero, y_zero, x, ref);
    else aotc_qglobal_avgpool_i8(planes, size, scale, x_zero, y_zero, x, y), aotc_qglobal_avgpool_i8_ref(planes, size, scale, x_zero, y_zero, x, ref);
    bad = report("aotc_qglobal_avgpool", y, ref, (size_t)planes, u8);
    if (bad) printf("  planes %d, size %d\n", (int)planes, (int)size);
    free(x), free(y), free(ref);
    return bad;
}

static int check_avgpool(int u8) {
    aotc_pool_params p;
    const int32_t x_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127), y_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    const float x_scale = rand_scale(), y_scale = rand_scale();
    float lut[256];
    int32_t d, v;
    size_t xn, yn;
    void *x, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.planes = rand_int(1, 4), p.count_include_pad = chance(1, 2);
    for (d = 0; d < 3; ++d) p.in[d] = p.out[d] = p.kernel[d] = p.strides[d] = p.dilations[d] = 1;
    for (d = rand_int(0, 2); d < 3; ++d) { /* 1-D to 3-D windows, pads below the kernel: none only in padding */
        p.kernel[d] = rand_int(1, 4), p.strides[d] = rand_int(1, 3), p.in[d] = rand_int(p.kernel[d], d == 2 ? 20 : 8);
        p.pads_begin[d] = rand_int(0, p.kernel[d] - 1), p.pads_end[d] = rand_int(0, p.kernel[d] - 1);
        p.out[d] = (p.in[d] + p.pads_begin[d] + p.pads_end[d] - p.kernel[d]) / p.strides[d] + 1;
    }
    for (v = 0; v < 256; ++v) { /* lut[byte]: x_scale (x - x_zero) for the 8-bit x of that byte */
        const int32_t q = u8 ? v : (int32_t)(int8_t)(uint8_t)v;
        lut[v] = x_scale * (float)(q - x_zero);
    }
    xn = (size_t)p.planes * p.in[0] * p.in[1] * p.in[2], yn = (size_t)p.planes * p.out[0] * p.out[1] * p.out[2];
    x = rand_q(xn, u8), y = alloc_bytes(yn), ref = alloc_bytes(yn);
    if (u8) aotc_qavgpool_u8(&p, lut, y_scale, y_zero, x, y), aotc_qavgpool_u8_ref(&p, lut, y_scale, y_zero, x, ref);
    else aotc_qavgpool_i8(&p, lut, y_scale, y_zero, x, y), aotc_qavgpool_i8_ref(&p, lut, y_scale, y_zero, x, ref);
    bad = report("aotc_qavgpool", y, ref, yn, u8);
    if (bad) printf("  planes %d, in %dx%dx%d, kernel %dx%dx%d, strides %d %d %d, pads %d %d %d, count_include_pad %d\n",
                    (int)p.planes, (int)p.in[0], (int)p.in[1], (int)p.in[2], (int)p.kernel[0], (int)p.kernel[1],
                    (int)p.kernel[2], (int)p.strides[0], (int)p.strides[1], (int)p.strides[2], (int)p.pads_begin[0],
                    (int)p.pads_begin[1], (int)p.pads_begin[2], (int)p.count_include_pad);
    free(x), free(y), free(ref);
    return bad;
}

/* ---- QLinearSoftmax, lookups, QLinearConcat's requantising copy -------------------------------------------- */

static int check_softmax(int u8) {
    const int32_t rows = rand_int(1, 4), n = rand_int(1, 60), y_zero = u8 ? 0 : -128;
    const float x_scale = rand_scale() * 8.0f;
    uint32_t table[256], y_scale;
    int32_t i;
    void *x = rand_q((size_t)rows * n, u8), *y = alloc_bytes((size_t)rows * n), *ref = alloc_bytes((size_t)rows * n);
    int bad;
    /* as aot/qmath.py's softmax_table: round(qscale exp((i - 255) x_scale)), int8's entries 128 round */
    for (i = 0; i < 256; ++i) {
        const double qscale = fmin(4294967295.0 / (double)n, 8388607.0);
        table[u8 ? i : (i + 128) % 256] = (uint32_t)nearbyint(qscale * exp((double)(i - 255) * (double)x_scale));
    }
    y_scale = (uint32_t)(1.0f / (chance(1, 2) ? 1.0f / 256.0f : rand_scale() / 64.0f));
    if (u8) aotc_qsoftmax_u8(rows, n, table, y_scale, y_zero, x, y), aotc_qsoftmax_u8_ref(rows, n, table, y_scale, y_zero, x, ref);
    else aotc_qsoftmax_i8(rows, n, table, y_scale, y_zero, x, y), aotc_qsoftmax_i8_ref(rows, n, table, y_scale, y_zero, x, ref);
    bad = report("aotc_qsoftmax", y, ref, (size_t)rows * n, u8);
    if (bad) printf("  rows %d, n %d, y_scale %u\n", (int)rows, (int)n, (unsigned)y_scale);
    free(x), free(y), free(ref);
    return bad;
}

static int check_lookup(int copy, int u8) {
    const int32_t outer = rand_int(1, 5), inner = rand_int(0, 80), stride = inner + (copy ? rand_int(0, 20) : 0);
    const size_t n = (size_t)outer * inner, yn = copy ? (size_t)(outer - 1) * stride + inner : n;
    void *table = rand_q(256, u8), *x = rand_q(n, u8), *y = alloc_bytes(yn), *ref = alloc_bytes(yn);
    int bad;
    memcpy(ref, y, yn); /* the gaps between a copy's rows stay as they were */
    if (copy && u8) aotc_qrequant_copy_u8(outer, inner, stride, table, x, y), aotc_qrequant_copy_u8_ref(outer, inner, stride, table, x, ref);
    else if (copy) aotc_qrequant_copy_i8(outer, inner, stride, table, x, y), aotc_qrequant_copy_i8_ref(outer, inner, stride, table, x, ref);
    else if (u8) aotc_qlookup_u8(n, x, table, y), aotc_qlookup_u8_ref(n, x, table, ref);
    else aotc_qlookup_i8(n, x, table, y), aotc_qlookup_i8_ref(n, x, table, ref);
    bad = report(copy ? "aotc_qrequant_copy" : "aotc_qlookup", y, ref, yn, u8);
    if (bad) printf("  outer %d, inner %d, stride %d\n", (int)outer, (int)inner, (int)stride);
    free(table), free(x), free(y), free(ref);
    return bad;
}

/* ---- dynamic quantization: DynamicQuantizeLinear, MatMulInteger, ConvInteger ------------------------------- */

static int check_dynamic_quantize(void) {
    const int32_t n = rand_int(1, 300), kind = rand_int(0, 3);
    float *x = (float *)alloc_bytes((size_t)n * 4), scale[2];
    uint8_t *y = (uint8_t *)alloc_bytes((size_t)n), *ref = (uint8_t *)alloc_bytes((size_t)n), zero[2];
    int32_t i;
    int bad;
    for (i = 0; i < n; ++i) { /* both signs, one sign only, all zero */
        x[i] = kind == 3 ? 0.0f : rand_float() * (float)ldexp(1.0, rand_int(-6, 6));
        if (kind == 1) x[i] = fabsf(x[i]);
        if (kind == 2) x[i] = -fabsf(x[i]);
    }
    aotc_dynamic_quantize_u8(n, x, y, &scale[0], &zero[0]);
    aotc_dynamic_quantize_u8_ref(n, x, ref, &scale[1], &zero[1]);
    bad = report("aotc_dynamic_quantize_u8", y, ref, (size_t)n, 1);
    if (!bad && (memcmp(&scale[0], &scale[1], 4) != 0 || zero[0] != zero[1])) {
        printf("aotc_dynamic_quantize_u8: scale %.9g, zero point %d; reference %.9g, %d\n", (double)scale[0],
               (int)zero[0], (double)scale[1], (int)zero[1]);
        bad = 1;
    }
    if (bad) printf("  n %d, kind %d\n", (int)n, (int)kind);
    free(x), free(y), free(ref);
    return bad;
}

static int check_matmul_integer(int u8) {
    const int32_t m = rand_int(1, 6), n = rand_int(1, 20), k = rand_int(1, 70);
    void *a = rand_q((size_t)m * k, u8), *a_zero = chance(1, 3) ? NULL : rand_q(1, u8);
    int8_t *bt = (int8_t *)rand_q((size_t)n * k, 0);
    int32_t *b_zero = (int32_t *)alloc_bytes((size_t)n * 4), *b_sums = (int32_t *)alloc_bytes((size_t)n * 4);
    int32_t *y = (int32_t *)alloc_bytes((size_t)m * n * 4), *ref = (int32_t *)alloc_bytes((size_t)m * n * 4), j, r;
    int bad;
    for (j = 0; j < n; ++j) { /* as aot/kernels/quant.py: B's column sums less its zero points */
        b_zero[j] = chance(1, 2) ? 0 : rand_int(-128, 127), b_sums[j] = 0;
        for (r = 0; r < k; ++r) b_sums[j] += bt[(size_t)j * k + r] - b_zero[j];
    }
    if (u8) aotc_matmul_integer_u8(m, n, k, a, a_zero, bt, b_zero, b_sums, y), aotc_matmul_integer_u8_ref(m, n, k, a, a_zero, bt, b_zero, b_sums, ref);
    else aotc_matmul_integer_i8(m, n, k, a, a_zero, bt, b_zero, b_sums, y), aotc_matmul_integer_i8_ref(m, n, k, a, a_zero, bt, b_zero, b_sums, ref);
    bad = report32(u8 ? "aotc_matmul_integer_u8" : "aotc_matmul_integer_i8", y, ref, (size_t)m * n, 4);
    if (bad) printf("  m %d, n %d, k %d, a_zero %s\n", (int)m, (int)n, (int)k, a_zero ? "given" : "NULL");
    free(a), free(a_zero), free(bt), free(b_zero), free(b_sums), free(y), free(ref);
    return bad;
}

static int check_conv_integer(int u8) {
    aotc_qconv_params p;
    int32_t *w_zero, *y, *ref, c;
    size_t xn, wn, yn;
    void *x, *x_zero;
    int8_t *w;
    int bad;
    memset(&p, 0, sizeof p);
    p.batch = rand_int(1, 2), p.group = chance(1, 3) ? rand_int(2, 3) : 1;
    p.in_c = p.group * rand_int(1, 5), p.out_c = p.group * rand_int(1, 5);
    p.k_h = rand_int(1, 4), p.k_w = rand_int(1, 4), p.stride_h = rand_int(1, 2), p.stride_w = rand_int(1, 2);
    p.dil_h = rand_int(1, 2), p.dil_w = rand_int(1, 2), p.pad_top = rand_int(0, 2), p.pad_left = rand_int(0, 2);
    p.in_h = rand_int((p.k_h - 1) * p.dil_h + 1, 10), p.in_w = rand_int((p.k_w - 1) * p.dil_w + 1, 14);
    p.out_h = (p.in_h + p.pad_top + rand_int(0, 2) - (p.k_h - 1) * p.dil_h - 1) / p.stride_h + 1;
    p.out_w = (p.in_w + p.pad_left + rand_int(0, 2) - (p.k_w - 1) * p.dil_w - 1) / p.stride_w + 1;
    p.x_zero = u8 ? rand_int(0, 255) : rand_int(-128, 127);
    xn = (size_t)p.batch * p.in_c * p.in_h * p.in_w, wn = (size_t)p.out_c * (p.in_c / p.group) * p.k_h * p.k_w;
    yn = (size_t)p.batch * p.out_c * p.out_h * p.out_w;
    x = rand_q(xn, u8), x_zero = chance(1, 2) ? NULL : rand_q(1, u8), w = (int8_t *)rand_q(wn, 0);
    w_zero = (int32_t *)alloc_bytes((size_t)p.out_c * 4);
    for (c = 0; c < p.out_c; ++c) w_zero[c] = chance(1, 2) ? 0 : rand_int(-128, 127);
    p.w_zero = w_zero;
    y = (int32_t *)alloc_bytes(yn * 4), ref = (int32_t *)alloc_bytes(yn * 4);
    if (u8) aotc_conv_integer_u8(&p, x, x_zero, w, y), aotc_conv_integer_u8_ref(&p, x, x_zero, w, ref);
    else aotc_conv_integer_i8(&p, x, x_zero, w, y), aotc_conv_integer_i8_ref(&p, x, x_zero, w, ref);
    bad = report32(u8 ? "aotc_conv_integer_u8" : "aotc_conv_integer_i8", y, ref, yn, 4);
    if (bad) printf("  batch %d, %d -> %d channels, group %d, in %d x %d, out %d x %d, kernel %d x %d\n", (int)p.batch,
                    (int)p.in_c, (int)p.out_c, (int)p.group, (int)p.in_h, (int)p.in_w, (int)p.out_h, (int)p.out_w,
                    (int)p.k_h, (int)p.k_w);
    free(x), free(x_zero), free(w), free(w_zero), free(y), free(ref);
    return bad;
}

/* ---- the reference on a case worked out by hand --------------------------------------------------------- */

/* A 1 x 1 conv of 2 channels: x = [10, -3] (x_zero 1), w = [2, 5] (w_zero 1), bias 7:
 * 7 + (2 - 1)(10 - 1) + (5 - 1)(-3 - 1) = 0, so y = y_zero = 3. And requant(5, 0.5) = round_even(2.5)
 * = 2, requant(7, 0.5) = round_even(3.5) = 4. */
static int check_reference(void) {
    static const int8_t x[2] = {10, -3}, w[2] = {2, 5};
    static const int32_t bias[1] = {7}, w_zero[1] = {1};
    static const float scale[1] = {0.5f};
    aotc_qconv_params p;
    int8_t y;
    int bad;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.in_c = 2, p.in_h = p.in_w = 1, p.out_c = 1, p.out_h = p.out_w = 1, p.group = 1;
    p.k_h = p.k_w = p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
    p.x_zero = 1, p.y_zero = 3, p.y_lo = -131.0f, p.y_hi = 124.0f, p.scale = scale, p.w_zero = w_zero;
    aotc_qconv_i8_ref(&p, x, w, 2, bias, &y);
    bad = y != 3 || aotc_requant_ref(5, 0.5f, -100.0f, 100.0f, 0) != 2 || aotc_requant_ref(7, 0.5f, -100.0f, 100.0f, 0) != 4;
    if (bad) printf("the references: MISMATCH on a case worked out by hand\n");
    return bad;
}

typedef struct {
    const char *name;
    int (*check)(int);
    int arg;
} entry;

static int check_patches(int u8) { return check_conv(CONV_PATCHES, u8); }
static int check_patches_add(int u8) { return check_conv(CONV_PATCHES_ADD, u8); }
static int check_depthwise(int u8) { return check_conv(CONV_DEPTHWISE, u8); }
static int check_add(int u8) { return check_binary(0, u8); }
static int check_mul(int u8) { return check_binary(1, u8); }
static int check_qlookup(int u8) { return check_lookup(0, u8); }
static int check_copy(int u8) { return check_lookup(1, u8); }
static int check_dynamic(int unused) { return (void)unused, check_dynamic_quantize(); }

static const entry ENTRIES[] = {
    {"aotc_qconv_patches_u8", check_patches, 1},        {"aotc_qconv_patches_i8", check_patches, 0},
    {"aotc_qconv_depthwise_u8", check_depthwise, 1},    {"aotc_qconv_depthwise_i8", check_depthwise, 0},
    {"aotc_qgemm_u8", check_gemm, 1},                   {"aotc_qgemm_i8", check_gemm, 0},
    {"aotc_qconv_patches_add_u8", check_patches_add, 1}, {"aotc_qconv_patches_add_i8", check_patches_add, 0},
    {"aotc_quantize_u8", check_quantize, 1},            {"aotc_quantize_i8", check_quantize, 0},
    {"aotc_dequantize_u8", check_dequantize, 1},        {"aotc_dequantize_i8", check_dequantize, 0},
    {"aotc_dequantize_i32", check_dequantize, 2},       {"aotc_qadd_u8", check_add, 1},
    {"aotc_qadd_i8", check_add, 0},                     {"aotc_qmul_u8", check_mul, 1},
    {"aotc_qmul_i8", check_mul, 0},                     {"aotc_qglobal_avgpool_u8", check_global_avgpool, 1},
    {"aotc_qglobal_avgpool_i8", check_global_avgpool, 0}, {"aotc_qavgpool_u8", check_avgpool, 1},
    {"aotc_qavgpool_i8", check_avgpool, 0},             {"aotc_qsoftmax_u8", check_softmax, 1},
    {"aotc_qsoftmax_i8", check_softmax, 0},             {"aotc_qlookup_u8", check_qlookup, 1},
    {"aotc_qlookup_i8", check_qlookup, 0},              {"aotc_qrequant_copy_u8", check_copy, 1},
    {"aotc_qrequant_copy_i8", check_copy, 0},           {"aotc_dynamic_quantize_u8", check_dynamic, 0},
    {"aotc_matmul_integer_u8", check_matmul_integer, 1}, {"aotc_matmul_integer_i8", check_matmul_integer, 0},
    {"aotc_conv_integer_u8", check_conv_integer, 1},    {"aotc_conv_integer_i8", check_conv_integer, 0},
};

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference() | check_requant(100 * shapes);
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    if (aotc_threads_start() != 0) printf("no pool: its threads could not start\n");
#endif
    size_t e;
    int32_t i;
    printf("%-34s %s\n", "aotc_requant", failed ? "MISMATCH" : "ok");
    for (e = 0; e < sizeof ENTRIES / sizeof ENTRIES[0]; ++e) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = ENTRIES[e].check(ENTRIES[e].arg);
        printf("%-34s %s (%d shapes)\n", ENTRIES[e].name, bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
