/* The hybrid kernels (aotc_tflite_hybrid.h, tflite_hybrid.c) against their references (tflite_hybrid_ref.c)
 * over random shapes, bit for bit: the run-time quantisation (symmetric and asymmetric; inputs of one value,
 * all zeros, or spread over a random magnitude), FULLY_CONNECTED (any rows, outputs not a multiple of 4),
 * CONV_2D (groups, strides, dilations, pads beyond the kernel), DEPTHWISE_CONV_2D (depth multipliers, more
 * than 64 channels) and TRANSPOSE_CONV (its float sums in LiteRT's scatter order), in both scale orders, with and without a bias and a clamp. Inputs and tables of exactly
 * their size, outputs starting as NaN. And the quantisation of two inputs worked out by hand.
 *
 *     test_tflite_hybrid_kernels [seed] [shapes] */
#include "aotc_tflite_hybrid.h"
#include "kernels_ref.h"
#include "test_compare.h"

/* n floats of one random magnitude: all zero, one value, or spread (some exactly 0). */
static float *hybrid_input(size_t n) {
    float *x = test_alloc(n);
    const int kind = rand_int(0, 9);
    const float mag = ldexpf(1.0f, (int)rand_int(-10, 10));
    size_t i;
    for (i = 0; i < n; ++i) {
        x[i] = kind == 0 ? 0.0f : kind == 1 ? x[0] * mag : (chance(1, 10) ? 0.0f : x[i] * mag);
        if (kind == 2) x[i] = fabsf(x[i]); /* all >= 0: the asymmetric range starts at 0 */
    }
    return x;
}

static int8_t *weights(size_t n) { return (int8_t *)test_bytes(n); }

static int quantized_differ(const char *what, const int8_t *q, const int8_t *qr, const float *s, const float *sr,
                            const int32_t *o, const int32_t *or_, size_t n, int32_t batches) {
    if (test_bytes_differ(what, q, qr, n)) return 1;
    if (test_differs(what, s, sr, NULL, (size_t)batches)) return 1;
    return test_bytes_differ(what, o, or_, (size_t)batches * sizeof(int32_t));
}

static void clamp_range(float *lo, float *hi) {
    const int k = rand_int(0, 3);
    *lo = k == 1 || k == 2 ? 0.0f : k == 3 ? -1.0f : -INFINITY;
    *hi = k == 2 ? 6.0f : k == 3 ? 1.0f : INFINITY;
}

static int check_quantize(void) {
    aotc_tfl_hybrid_quantize_params p;
    float *x, *s, *sr;
    int8_t *q, *qr;
    int32_t *o, *or_;
    size_t n;
    int bad;
    p.batches = rand_int(1, 4), p.size = rand_int(1, 300), p.asymmetric = rand_int(0, 1);
    n = (size_t)p.batches * p.size;
    x = hybrid_input(n), q = (int8_t *)test_bytes(n), qr = (int8_t *)test_bytes(n);
    s = test_alloc_nan((size_t)p.batches), sr = test_alloc_nan((size_t)p.batches);
    o = (int32_t *)test_bytes((size_t)p.batches * 4), or_ = (int32_t *)test_bytes((size_t)p.batches * 4);
    aotc_tfl_hybrid_quantize_f32(&p, x, q, s, o);
    aotc_tfl_hybrid_quantize_ref(&p, x, qr, sr, or_);
    bad = quantized_differ("aotc_tfl_hybrid_quantize_f32", q, qr, s, sr, o, or_, n, p.batches);
    if (bad) printf("  batches %d, size %d, asymmetric %d\n", (int)p.batches, (int)p.size, (int)p.asymmetric);
    free(x), free(q), free(qr), free(s), free(sr), free(o), free(or_);
    return bad;
}

/* The quantisation inputs of a kernel test: q, scale and offset of `batches` batches of `size`, from a random
 * float input as the kernel would have them. */
static void quantized_input(int32_t batches, int32_t size, int8_t **q, float **s, int32_t **o) {
    aotc_tfl_hybrid_quantize_params p;
    float *x = hybrid_input((size_t)batches * size);
    p.batches = batches, p.size = size, p.asymmetric = rand_int(0, 1);
    *q = (int8_t *)test_bytes((size_t)batches * size), *s = test_alloc((size_t)batches);
    *o = (int32_t *)test_bytes((size_t)batches * sizeof(int32_t));
    aotc_tfl_hybrid_quantize_ref(&p, x, *q, *s, *o);
    free(x);
}

static float *channel_scales(int32_t n) {
    float *s = test_alloc((size_t)n);
    int32_t i;
    for (i = 0; i < n; ++i) s[i] = (fabsf(s[i]) + 0.01f) / 127.0f;
    return s;
}

static int check_fc(void) {
    aotc_tfl_hybrid_fc_params p;
    int8_t *q, *w;
    float *s, *ws, *bias, *y, *ref;
    int32_t *o, *sums, r, i;
    int bad;
    p.rows = rand_int(1, 5), p.in = rand_int(1, 200), p.out = rand_int(1, 40);
    quantized_input(p.rows, p.in, &q, &s, &o);
    w = weights((size_t)p.out * p.in), ws = channel_scales(p.out);
    sums = (int32_t *)malloc((size_t)p.out * sizeof(int32_t));
    for (r = 0; r < p.out; ++r)
        for (sums[r] = 0, i = 0; i < p.in; ++i) sums[r] += w[(size_t)r * p.in + i];
    p.w_scale = ws, p.w_sums = sums;
    clamp_range(&p.y_min, &p.y_max);
    bias = chance(1, 3) ? NULL : test_alloc((size_t)p.out);
    y = test_alloc_nan((size_t)p.rows * p.out), ref = test_alloc_nan((size_t)p.rows * p.out);
    aotc_tfl_hybrid_fc_f32(&p, q, s, o, w, bias, y);
    aotc_tfl_hybrid_fc_ref(&p, q, s, o, w, bias, ref);
    bad = test_differs("aotc_tfl_hybrid_fc_f32", y, ref, NULL, (size_t)p.rows * p.out);
    if (bad) printf("  rows %d, in %d, out %d\n", (int)p.rows, (int)p.in, (int)p.out);
    free(q), free(w), free(s), free(o), free(ws), free(sums), free(bias), free(y), free(ref);
    return bad;
}

static int check_conv(int depthwise) {
    aotc_tfl_hybrid_conv_params p;
    int8_t *q, *w;
    float *s, *ws, *bias, *y, *ref;
    int32_t *o, *sums, groups;
    size_t wn, yn, i;
    int bad;
    memset(&p, 0, sizeof p);
    p.n = rand_int(1, 2), p.h = rand_int(1, 9), p.w = rand_int(1, 9);
    p.kh = rand_int(1, 4), p.kw = rand_int(1, 4), p.sh = rand_int(1, 3), p.sw = rand_int(1, 3);
    p.dh = chance(1, 4) ? 2 : 1, p.dw = chance(1, 4) ? 2 : 1;
    p.pad_top = rand_int(0, p.kh), p.pad_left = rand_int(0, p.kw);
    p.oh = rand_int(1, (p.h + 2 * p.pad_top) / p.sh + 1), p.ow = rand_int(1, (p.w + 2 * p.pad_left) / p.sw + 1);
    if (depthwise) {
        p.c = chance(1, 5) ? rand_int(60, 80) : rand_int(1, 12), p.depth_multiplier = rand_int(1, 3);
        p.oc = p.c * p.depth_multiplier, p.in_c = 1;
        wn = (size_t)p.kh * p.kw * p.oc;
    } else {
        groups = chance(1, 3) ? rand_int(2, 3) : 1;
        p.in_c = rand_int(1, 8), p.c = p.in_c * groups, p.oc = groups * rand_int(1, 6), p.depth_multiplier = 1;
        wn = (size_t)p.oc * p.kh * p.kw * p.in_c;
    }
    p.order = rand_int(0, 1);
    clamp_range(&p.y_min, &p.y_max);
    quantized_input(p.n, p.h * p.w * p.c, &q, &s, &o);
    w = weights(wn), ws = channel_scales(p.oc), p.w_scale = ws;
    sums = (int32_t *)calloc((size_t)p.oc, sizeof(int32_t));
    for (i = 0; i < wn; ++i) sums[depthwise ? i % (size_t)p.oc : i / (wn / (size_t)p.oc)] += w[i];
    p.w_sums = sums;
    bias = chance(1, 3) ? NULL : test_alloc((size_t)p.oc);
    yn = (size_t)p.n * p.oh * p.ow * p.oc;
    y = test_alloc_nan(yn), ref = test_alloc_nan(yn);
    if (depthwise) {
        aotc_tfl_hybrid_depthwise_f32(&p, q, s, o, w, bias, y);
        aotc_tfl_hybrid_depthwise_ref(&p, q, s, o, w, bias, ref);
    } else {
        aotc_tfl_hybrid_conv_f32(&p, q, s, o, w, bias, y);
        aotc_tfl_hybrid_conv_ref(&p, q, s, o, w, bias, ref);
    }
    bad = test_differs(depthwise ? "aotc_tfl_hybrid_depthwise_f32" : "aotc_tfl_hybrid_conv_f32", y, ref, NULL, yn);
    if (bad)
        printf("  n %d, %d x %d x %d -> %d x %d x %d, kernel %d x %d, strides %d %d, dilations %d %d, pads %d %d, "
               "in_c %d, multiplier %d, order %d\n", (int)p.n, (int)p.h, (int)p.w, (int)p.c, (int)p.oh, (int)p.ow,
               (int)p.oc, (int)p.kh, (int)p.kw, (int)p.sh, (int)p.sw, (int)p.dh, (int)p.dw, (int)p.pad_top,
               (int)p.pad_left, (int)p.in_c, (int)p.depth_multiplier, (int)p.order);
    free(q), free(w), free(s), free(o), free(ws), free(sums), free(bias), free(y), free(ref);
    return bad;
}

/* TRANSPOSE_CONV: random strides, pads within the kernel, output sizes up to the full scatter's. */
static int check_transpose_conv(void) {
    aotc_tfl_hybrid_conv_params p;
    int8_t *q, *w;
    float *s, *ws, *bias, *y, *ref;
    int32_t *o;
    size_t yn;
    int bad;
    memset(&p, 0, sizeof p);
    p.n = rand_int(1, 2), p.h = rand_int(1, 6), p.w = rand_int(1, 6), p.c = rand_int(1, 9), p.oc = rand_int(1, 9);
    p.kh = rand_int(1, 4), p.kw = rand_int(1, 4), p.sh = rand_int(1, 3), p.sw = rand_int(1, 3), p.dh = 1, p.dw = 1;
    p.pad_top = rand_int(0, p.kh - 1), p.pad_left = rand_int(0, p.kw - 1), p.in_c = p.c, p.depth_multiplier = 1;
    p.oh = rand_int(1, (p.h - 1) * p.sh + p.kh), p.ow = rand_int(1, (p.w - 1) * p.sw + p.kw);
    clamp_range(&p.y_min, &p.y_max);
    quantized_input(p.n, p.h * p.w * p.c, &q, &s, &o);
    w = weights((size_t)p.oc * p.kh * p.kw * p.c), ws = channel_scales(p.oc), p.w_scale = ws;
    bias = chance(1, 3) ? NULL : test_alloc((size_t)p.oc);
    yn = (size_t)p.n * p.oh * p.ow * p.oc;
    y = test_alloc_nan(yn), ref = test_alloc_nan(yn);
    aotc_tfl_hybrid_transpose_conv_f32(&p, q, s, o, w, bias, y);
    aotc_tfl_hybrid_transpose_conv_ref(&p, q, s, o, w, bias, ref);
    bad = test_differs("aotc_tfl_hybrid_transpose_conv_f32", y, ref, NULL, yn);
    if (bad)
        printf("  n %d, %d x %d x %d -> %d x %d x %d, kernel %d x %d, strides %d %d, pads %d %d\n", (int)p.n, (int)p.h,
               (int)p.w, (int)p.c, (int)p.oh, (int)p.ow, (int)p.oc, (int)p.kh, (int)p.kw, (int)p.sh, (int)p.sw,
               (int)p.pad_top, (int)p.pad_left);
    free(q), free(w), free(s), free(o), free(ws), free(bias), free(y), free(ref);
    return bad;
}

/* By hand: [-1, 0.5, 0.25] symmetric: scale 1/127, q = [-127, 64 (63.5 away from zero), 32 (31.75)];
 * [0, 1] asymmetric: scale 1/255, zero point -128, q = [-128, 127]. */
static int check_by_hand(void) {
    static const float x1[3] = {-1.0f, 0.5f, 0.25f}, x2[2] = {0.0f, 1.0f};
    static const int8_t want1[3] = {-127, 64, 32}, want2[2] = {-128, 127};
    aotc_tfl_hybrid_quantize_params p;
    int8_t q[3];
    float s;
    int32_t o;
    int bad = 0;
    p.batches = 1, p.size = 3, p.asymmetric = 0;
    aotc_tfl_hybrid_quantize_ref(&p, x1, q, &s, &o);
    bad |= memcmp(q, want1, 3) != 0 || s != 1.0f / 127.0f || o != 0;
    p.size = 2, p.asymmetric = 1;
    aotc_tfl_hybrid_quantize_ref(&p, x2, q, &s, &o);
    bad |= memcmp(q, want2, 2) != 0 || s != (float)(1.0 / 255.0) || o != -128;
    if (bad) printf("aotc_tfl_hybrid_quantize_ref: wrong on the hand-worked inputs\n");
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int bad = check_by_hand(), k;
    int32_t i;
    static const char *names[5] = {"aotc_tfl_hybrid_quantize_f32", "aotc_tfl_hybrid_fc_f32",
                                   "aotc_tfl_hybrid_conv_f32", "aotc_tfl_hybrid_depthwise_f32",
                                   "aotc_tfl_hybrid_transpose_conv_f32"};
    for (k = 0; k < 5 && !bad; ++k) {
        for (i = 0; i < shapes && !bad; ++i)
            bad = k == 0 ? check_quantize() : k == 1 ? check_fc() : k == 4 ? check_transpose_conv() : check_conv(k == 3);
        printf("%-34s %s (%d shapes)\n", names[k], bad ? "MISMATCH" : "ok", (int)i);
    }
    return bad;
}
