/* The int8 / uint8 kernels of runtime_c/kernels/quant/quant.c (QLinearConv on patches and depthwise,
 * QGemm, the requantisation) against their definition, exactly: the sums of (w - w_zero)(x - x_zero)
 * plus the bias, requantised as onnxruntime does (MlasRequantizeOutput: a float product, clamped,
 * rounded half to even), written here as plain loops. The parameters are prepared as aot/kernels/
 * quant.py prepares them (weight rows padded to quads, the input zero point folded into the bias
 * of the patch kernel, scratch of the size the compiler gives). Run on the host (the plain C paths,
 * or AVX-512 VNNI) and on Cortex-M boards under qemu (the DSP extension's paths on the M4 and M55,
 * plain C on the M3): every target must give the same integers. */
#include "aotc_quant.h"
#include "kernel_test.h"

/* ---- the definition ---------------------------------------------------------------------------- */

static int32_t ref_requant(int64_t acc, float scale, int32_t lo, int32_t hi, int32_t zero_point) {
    float f = (float)acc * scale;
    volatile float t; /* 1.5 * 2^23 added and taken back: rounding half to even, as the FPU does */
    f = f < (float)lo ? (float)lo : f;
    f = f > (float)hi ? (float)hi : f;
    t = f + 12582912.0f;
    return (int32_t)(t - 12582912.0f) + zero_point;
}

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

static int report(const char *what, const void *y, const int32_t *ref, size_t n, int u8) {
    size_t i;
    for (i = 0; i < n; ++i) {
        if (qval(y, i, u8) != ref[i]) {
            printf("%s (%s): element %lu of %lu is %d, reference %d\n", what, u8 ? "u8" : "i8", (unsigned long)i,
                   (unsigned long)n, (int)qval(y, i, u8), (int)ref[i]);
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

/* ---- QLinearConv ------------------------------------------------------------------------------------ */

static int check_conv(int depthwise, int u8) {
    aotc_qconv_params p;
    const int32_t group = depthwise ? 0 : (chance(1, 4) ? rand_int(2, 3) : 1);
    int32_t cg, mg, k, kp, c, o, i, plane_out, lo, hi, tile = 0, tmin = u8 ? 0 : -128;
    size_t x_n, y_n, w_n, scratch_n;
    void *x, *y, *scratch;
    int8_t *w;
    float *scale;
    int32_t *bias, *w_zero, *bias_arg, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.batch = rand_int(1, 2);
    if (depthwise) {
        p.group = p.in_c = p.out_c = rand_int(1, 9);
        p.k_h = chance(3, 4) ? 3 : rand_int(1, 5);
        p.k_w = chance(3, 4) ? 3 : rand_int(1, 5);
    } else {
        p.group = group;
        p.in_c = group * rand_int(1, 12);
        p.out_c = group * rand_int(1, 9);
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
    y = alloc_bytes(y_n);
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
    scratch = alloc_bytes(scratch_n);
    if (depthwise) {
        if (u8) aotc_qconv_depthwise_u8(&p, (const uint8_t *)x, w, (uint8_t *)y, (uint8_t *)scratch);
        else aotc_qconv_depthwise_i8(&p, (const int8_t *)x, w, (int8_t *)y, (int8_t *)scratch);
    } else {
        if (u8) aotc_qconv_patches_u8(&p, tile, (const uint8_t *)x, w, (uint8_t *)y, (uint8_t *)scratch);
        else aotc_qconv_patches_i8(&p, tile, (const int8_t *)x, w, (int8_t *)y, (uint8_t *)scratch);
    }
    ref = (int32_t *)alloc_bytes(sizeof(int32_t) * y_n);
    for (o = 0; o < (int32_t)y_n; ++o) {
        const int32_t n = o / (p.out_c * plane_out), oc = o / plane_out % p.out_c, pos = o % plane_out;
        const int32_t oh = pos / p.out_w, ow = pos % p.out_w, g = oc / mg;
        int64_t acc = bias[oc];
        int32_t ic, kh, kw;
        for (ic = 0; ic < cg; ++ic) {
            for (kh = 0; kh < p.k_h; ++kh) {
                for (kw = 0; kw < p.k_w; ++kw) {
                    const int32_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
                    const int32_t iw = ow * p.stride_w - p.pad_left + kw * p.dil_w;
                    const int32_t r = (ic * p.k_h + kh) * p.k_w + kw;
                    const int32_t wv = w[(size_t)oc * (depthwise ? k : kp) + r] - w_zero[oc];
                    int32_t xv = p.x_zero;
                    if (ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w) {
                        xv = qval(x, (((size_t)n * p.in_c + (size_t)g * cg + ic) * p.in_h + ih) * p.in_w + iw, u8);
                    }
                    acc += (int64_t)wv * (xv - p.x_zero);
                }
            }
        }
        ref[o] = ref_requant(acc, scale[oc], lo, hi, p.y_zero);
    }
    (void)tmin;
    bad = report(depthwise ? "aotc_qconv_depthwise" : "aotc_qconv_patches", y, ref, y_n, u8);
    if (bad) {
        printf("  batch %d, %d -> %d channels, group %d, in %d x %d, out %d x %d, kernel %d x %d, stride %d x %d, "
               "dilation %d x %d, pads %d %d, x_zero %d, y_zero %d, clamp [%d, %d], w_zero_any %d, tile %d, work %d\n",
               (int)p.batch, (int)p.in_c, (int)p.out_c, (int)p.group, (int)p.in_h, (int)p.in_w, (int)p.out_h,
               (int)p.out_w, (int)p.k_h, (int)p.k_w, (int)p.stride_h, (int)p.stride_w, (int)p.dil_h, (int)p.dil_w,
               (int)p.pad_top, (int)p.pad_left, (int)p.x_zero, (int)p.y_zero, (int)lo, (int)hi, (int)p.w_zero_any,
               (int)tile, (int)p.work);
    }
    free(x), free(y), free(w), free(scale), free(bias), free(bias_arg), free(w_zero), free(scratch), free(ref);
    return bad;
}

/* ---- QGemm ------------------------------------------------------------------------------------------ */

static int check_gemm(int u8) {
    aotc_qgemm_params p;
    int32_t m, n, kk, lo, hi, a_zero, per_column = chance(1, 2), with_b_zero = chance(1, 3);
    void *a, *y;
    int8_t *bt;
    float *scale;
    int32_t *bias, *folded, *b_zero, *ref;
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
    y = alloc_bytes((size_t)p.m * p.n);
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
    ref = (int32_t *)alloc_bytes(sizeof(int32_t) * p.m * p.n);
    for (m = 0; m < p.m; ++m) {
        for (n = 0; n < p.n; ++n) {
            int64_t acc = bias[n];
            for (kk = 0; kk < p.k; ++kk) {
                acc += (int64_t)(qval(a, (size_t)m * p.k + kk, u8) - a_zero) * (bt[(size_t)n * p.k + kk] - b_zero[n]);
            }
            ref[m * p.n + n] = ref_requant(acc, scale[per_column ? n : 0], lo, hi, p.y_zero);
        }
    }
    bad = report("aotc_qgemm", y, ref, (size_t)p.m * p.n, u8);
    if (bad) {
        printf("  m %d, n %d, k %d, a_zero %d, y_zero %d, clamp [%d, %d], per_column %d, b_zero %d\n", (int)p.m,
               (int)p.n, (int)p.k, (int)a_zero, (int)p.y_zero, (int)lo, (int)hi, (int)per_column, (int)with_b_zero);
    }
    free(a), free(bt), free(y), free(scale), free(bias), free(folded), free(b_zero), free(scratch), free(ref);
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
        want = ref_requant(acc, scale, lo, hi, zero_point);
        if (got != want) {
            printf("aotc_requant(%d, %.9g, %d, %d, %d) is %d, reference %d\n", (int)acc, (double)scale, (int)lo,
                   (int)hi, (int)zero_point, (int)got, (int)want);
            return 1;
        }
    }
    return 0;
}

enum { K_PATCHES_U8, K_PATCHES_I8, K_DEPTHWISE_U8, K_DEPTHWISE_I8, K_GEMM_U8, K_GEMM_I8, K_COUNT };
static const char *const NAMES[K_COUNT] = {"aotc_qconv_patches_u8", "aotc_qconv_patches_i8", "aotc_qconv_depthwise_u8",
                                           "aotc_qconv_depthwise_i8", "aotc_qgemm_u8", "aotc_qgemm_i8"};

static int check(int kind) {
    switch (kind) {
    case K_PATCHES_U8: return check_conv(0, 1);
    case K_PATCHES_I8: return check_conv(0, 0);
    case K_DEPTHWISE_U8: return check_conv(1, 1);
    case K_DEPTHWISE_I8: return check_conv(1, 0);
    case K_GEMM_U8: return check_gemm(1);
    default: return check_gemm(0);
    }
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_requant(100 * shapes), kind;
    int32_t i;
    printf("%-34s %s\n", "aotc_requant", failed ? "MISMATCH" : "ok");
    for (kind = 0; kind < K_COUNT; ++kind) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = check(kind);
        printf("%-34s %s (%d shapes)\n", NAMES[kind], bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
