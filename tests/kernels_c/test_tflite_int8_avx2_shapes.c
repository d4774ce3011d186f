/* The int8 .tflite CONV_2D, DEPTHWISE_CONV_2D and table ops of the host's packed kernels (aotc_tfl_conv_s8_packed,
 * aotc_tfl_depthwise_s8_packed, aotc_tfl_lut_s8, aotc_tfl_softmax_s8) on network-sized shapes, for their AVX2 paths (built with
 * -march=x86-64-v3): each exactly LiteRT's reference kernels (tflite_int8_ref.c), and, given a shape's index, that
 * shape's kernel alone once (test_kernels_c.py counts its instructions under callgrind). The random shapes of
 * test_tflite_int8_kernels.c are small; these are MobileNetV2's and ResNet's layer sizes, with tails of channels,
 * stride 2 and 5 x 5. Weights packed as aot/kernels/tflite_int8.py packs them (test_tflite_int8_kernels.c). */
#include <string.h>

#include "aotc_tflite_int8.h"
#include "kernel_test.h"
#include "kernels_ref.h"

typedef struct {
    const char *name;
    int kind; /* 0 CONV_2D, 1 DEPTHWISE_CONV_2D, 2 a table op, 3 SOFTMAX (1 x 1000, its elements the "MACs"), 4 CONV_2D
               * and its residual ADD */
    int32_t c, oc, hw, k, stride, pad;
} shape;

static const shape SHAPES_[] = {
    {"conv 1x1 96->24 28x28", 0, 96, 24, 28, 1, 1, 0},
    {"conv 3x3 64->64 14x14", 0, 64, 64, 14, 3, 1, 1},
    {"conv 1x1 24->144 28x28", 0, 24, 144, 28, 1, 1, 0},
    {"conv 1x1 8->40 56x56", 0, 8, 40, 56, 1, 1, 0}, /* the output stage's share: a 16-channel tail of 8 */
    {"depthwise 3x3 144 28x28", 1, 144, 144, 28, 3, 1, 1},
    {"depthwise 3x3/2 96 56x56", 1, 96, 96, 56, 3, 2, 0},
    {"depthwise 5x5 40 14x14", 1, 40, 40, 14, 5, 1, 2},
    {"lut 200704", 2, 0, 0, 0, 0, 0, 0},
    {"softmax 1000", 3, 0, 0, 0, 0, 0, 0},
};
#define NSHAPES ((int)(sizeof SHAPES_ / sizeof SHAPES_[0]))
/* (checked only: the depthwise pair rows' path, tfl_pk_avx2_dw16_rows, on MobileNetV2's 7 x 7 and 112 x 112 planes,
 * stride 2 on odd planes, 5 x 5 at stride 2, channel tails of 8 and 4, a fused activation's clamp ("relu": y_min,
 * y_max inside int8's range); and the window path it leaves, 7 x 7 taps and a plane wider than its ring; CONV_2D with
 * its residual ADD fused (kind 4), y over the residual, the ADD's own arithmetic: no linear form) */
static const shape CHECKED_[] = {
    {"depthwise 3x3 24 7x7 relu", 1, 24, 24, 7, 3, 1, 1},
    {"depthwise 3x3/2 40 15x15", 1, 40, 40, 15, 3, 2, 1},
    {"depthwise 5x5/2 72 14x14 relu", 1, 72, 72, 14, 5, 2, 2},
    {"depthwise 3x3 20 112x112", 1, 20, 20, 112, 3, 1, 1},
    {"depthwise 7x7 16 14x14", 1, 16, 16, 14, 7, 1, 3},
    {"depthwise 3x3 16 130x130", 1, 16, 16, 130, 3, 1, 1},
    {"conv+add 1x1 64->256 14x14", 4, 64, 256, 14, 1, 1, 0},  /* the residual in the lanes' output stage, in place */
    {"conv+add 3x3 16->40 9x9", 4, 16, 40, 9, 3, 1, 1},       /* a block of 8 short; the pairs path's 81st position */
};
#define NCHECKED ((int)(sizeof CHECKED_ / sizeof CHECKED_[0]))

static void *buffer(size_t n) {
    void *b = malloc(n > 0 ? n : 1);
    if (b == NULL) exit(2);
    memset(b, 0xA5, n > 0 ? n : 1);
    return b;
}

/* quantize_multiplier: real = m 2^(shift - 31), m in [2^30, 2^31) */
static void multiplier(double real, int32_t *m, int32_t *shift) {
    int e;
    const double f = frexp(real, &e);
    int64_t q = (int64_t)floor(f * 2147483648.0 + 0.5);
    if (q == ((int64_t)1 << 31)) q /= 2, ++e;
    *m = (int32_t)q, *shift = e;
}

/* the bias less zero times each row's sum of weights (rows of k weights, `stride` apart, each `step`), mod 2^32 */
static int32_t *fold_bias(const int32_t *bias, const int8_t *w, int32_t rows, int32_t k, int64_t stride, int64_t step,
                          int32_t zero) {
    int32_t *b = (int32_t *)buffer((size_t)(rows + 15) / 16 * 64), o, j;
    memset(b, 0, (size_t)(rows + 15) / 16 * 64);
    for (o = 0; o < rows; ++o) {
        uint32_t v = (uint32_t)bias[o];
        for (j = 0; j < k; ++j) v -= (uint32_t)zero * (uint32_t)(int32_t)w[o * stride + j * step];
        b[o] = (int32_t)v;
    }
    return b;
}

static int compare(const char *what, const int8_t *y, const int8_t *ref, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        if (y[i] != ref[i]) {
            printf("%s: element %lu of %lu is %d, reference %d\n", what, (unsigned long)i, (unsigned long)n, y[i], ref[i]);
            return 1;
        }
    }
    return 0;
}

static int run_lut(const shape *s, int check) {
    const int64_t n = 200704;
    int8_t table[256], *x = (int8_t *)buffer((size_t)n), *y = (int8_t *)buffer((size_t)n), *ref = (int8_t *)buffer((size_t)n);
    aotc_tfl_lut_params p;
    int64_t i;
    int bad = 0;
    for (i = 0; i < 256; ++i) table[i] = (int8_t)rand_int(-128, 127);
    for (i = 0; i < n; ++i) x[i] = (int8_t)rand_int(-128, 127);
    p.count = n, p.table = table;
    aotc_tfl_lut_s8(&p, x, y);
    if (check) {
        aotc_tfl_lut_s8_ref(&p, x, ref);
        bad = compare(s->name, y, ref, (size_t)n);
    }
    printf("%-32s %s (%ld MACs)\n", s->name, bad ? "MISMATCH" : check ? "ok" : "ran", (long)n);
    free(x), free(y), free(ref);
    return bad;
}

/* an int8 classifier's SOFTMAX, 1000 classes (MobileNetV2's parameters: beta 1, its input's scale) */
static int run_softmax(const shape *s, int check) {
    const int32_t n = 1000;
    int8_t *x = (int8_t *)buffer((size_t)n), *y = (int8_t *)buffer((size_t)n), *ref = (int8_t *)buffer((size_t)n);
    aotc_tfl_softmax_params p;
    int32_t i;
    int bad = 0;
    for (i = 0; i < n; ++i) x[i] = (int8_t)rand_int(-128, 127);
    p.rows = 1, p.depth = n, p.mult = 1182361088, p.shift = 21, p.diff_min = -992;
    aotc_tfl_softmax_s8(&p, x, y);
    if (check) {
        aotc_tfl_softmax_s8_ref(&p, x, ref);
        bad = compare(s->name, y, ref, (size_t)n);
    }
    printf("%-32s %s (%ld MACs)\n", s->name, bad ? "MISMATCH" : check ? "ok" : "ran", (long)n);
    free(x), free(y), free(ref);
    return bad;
}

/* a residual ADD's parameters as TFLite's prepare sets them (each input to twice the larger scale, 20 bits left),
 * for inputs of scales s1, s2 (the conv's first where conv_x1) and an output of scale so over n elements; extreme
 * zero points */
static void residual_params(aotc_tfl_residual_params *r, double s1, double s2, double so, int64_t n, int conv_x1) {
    const double twice = 2.0 * (s1 > s2 ? s1 : s2);
    memset(r, 0, sizeof *r);
    r->conv_x1 = conv_x1;
    r->add.count = n, r->add.x1_zero = 127, r->add.x2_zero = -128, r->add.y_zero = rand_int(-128, 127);
    r->add.y_min = -128, r->add.y_max = 127;
    multiplier(s1 / twice, &r->add.m1, &r->add.s1), multiplier(s2 / twice, &r->add.m2, &r->add.s2);
    multiplier(twice / (1048576.0 * so), &r->add.mult, &r->add.shift);
}

/* Shape s: its kernel once (check 0) or checked against the reference (1). Returns 1 on a mismatch. */
static int run(const shape *s, int check) {
    aotc_tfl_conv_params p;
    const int dw = s->kind == 1;
    int32_t taps, k, o, j, *mult, *shift, *bias, *b;
    size_t xn, yn;
    int8_t *x, *y, *ref, *w;
    uint8_t *scratch;
    void *wp;
    int bad = 0;
    if (s->kind == 2) return run_lut(s, check);
    if (s->kind == 3) return run_softmax(s, check);
    memset(&p, 0, sizeof p);
    p.n = 1, p.h = p.w = s->hw, p.c = s->c, p.oc = s->oc, p.kh = p.kw = s->k, p.sh = p.sw = s->stride, p.dh = p.dw = 1;
    p.pad_top = p.pad_left = s->pad, p.depth_multiplier = 1;
    p.oh = p.ow = (s->hw + 2 * s->pad - s->k) / s->stride + 1;
    p.x_zero = rand_int(-128, 20), p.y_zero = rand_int(-20, 20), p.y_min = -128, p.y_max = 127;
    if (strstr(s->name, "relu") != NULL) p.y_min = p.y_zero, p.y_max = p.y_zero + 90; /* (a RELU's clamp) */
    taps = p.kh * p.kw, k = dw ? taps : taps * p.c;
    xn = (size_t)p.h * p.w * p.c, yn = (size_t)p.oh * p.ow * p.oc;
    x = (int8_t *)buffer(xn), y = (int8_t *)buffer(yn), ref = (int8_t *)buffer(yn);
    w = (int8_t *)buffer((size_t)p.oc * k);
    mult = (int32_t *)buffer(sizeof(int32_t) * p.oc), shift = (int32_t *)buffer(sizeof(int32_t) * p.oc);
    bias = (int32_t *)buffer(sizeof(int32_t) * p.oc);
    for (j = 0; j < (int32_t)xn; ++j) x[j] = (int8_t)rand_int(-128, 127);
    for (j = 0; j < p.oc * k; ++j) w[j] = (int8_t)rand_int(-127, 127);
    for (o = 0; o < p.oc; ++o) {
        /* about 1 / (the sum's spread): outputs over the whole range, some saturated */
        multiplier((0.5 + (double)rand_int(0, 1000) / 1000.0) / (24.0 * sqrt((double)k) * 64.0), &mult[o], &shift[o]);
        if (o % 5 == 3) mult[o] = 1 << 30; /* the least multiplier (the 32-bit requantisation's rounding fix at a = -1) */
        bias[o] = rand_int(-5000, 5000);
    }
    p.mult = mult, p.shift = shift;
    if (dw) { /* taps x c weights as int32 (uint16_t)w, blocks of 16 channels */
        int32_t *wt = (int32_t *)buffer((size_t)(p.c + 15) / 16 * 16 * taps * 4), t, ch;
        memset(wt, 0, (size_t)(p.c + 15) / 16 * 16 * taps * 4);
        for (t = 0; t < taps; ++t)
            for (ch = 0; ch < p.c; ++ch) wt[((size_t)(ch / 16) * taps + t) * 16 + ch % 16] = (uint16_t)(int16_t)w[(size_t)t * p.c + ch];
        wp = wt;
        b = fold_bias(bias, w, p.c, taps, 1, p.c, p.x_zero);
        scratch = (uint8_t *)buffer((size_t)aotc_tfl_depthwise_s8_packed_scratch_bytes(&p));
        aotc_tfl_depthwise_s8_packed(&p, x, wt, b, y, scratch);
        if (check) aotc_tfl_depthwise_s8_ref(&p, x, w, bias, ref);
    } else { /* each kernel row of kw c weights padded to whole quads, in quads of blocks of 16 rows */
        const int32_t run = p.kw * p.c, rq = tfl_pk_row_quads(&p), kd = p.kh * 4 * rq, blocks = (p.oc + 15) / 16;
        int8_t *wq = (int8_t *)buffer((size_t)blocks * 16 * kd);
        int32_t ky;
        memset(wq, 0, (size_t)blocks * 16 * kd);
        for (o = 0; o < p.oc; ++o)
            for (ky = 0; ky < p.kh; ++ky)
                for (j = 0; j < run; ++j) {
                    const int32_t r = ky * 4 * rq + j; /* its column in the padded row of kd */
                    wq[(((size_t)(o / 16) * (kd / 4) + r / 4) * 16 + o % 16) * 4 + r % 4] = w[((size_t)o * p.kh + ky) * run + j];
                }
        wp = wq;
        b = fold_bias(bias, w, p.oc, k, k, 1, 128 + p.x_zero);
        scratch = (uint8_t *)buffer((size_t)aotc_tfl_conv_s8_packed_scratch_bytes(&p));
        if (s->kind == 4) { /* y starts as the residual and takes the sums over it */
            aotc_tfl_residual_params r;
            residual_params(&r, 0.02, 0.9, 0.4, (int64_t)yn, p.oc > 64);
            if (r.conv_x1) r.add.x1_zero = p.y_zero; /* (the conv's output is the ADD's input) */
            else r.add.x2_zero = p.y_zero;
            for (j = 0; j < (int32_t)yn; ++j) ref[j] = y[j] = (int8_t)rand_int(-128, 127);
            aotc_tfl_conv_add_s8_packed(&p, &r, x, wq, b, y, y, scratch);
            if (check) aotc_tfl_conv_add_s8_ref(&p, &r, x, w, bias, ref, ref);
        } else {
            aotc_tfl_conv_s8_packed(&p, x, wq, b, y, scratch);
            if (check) aotc_tfl_conv_s8_ref(&p, x, w, bias, ref);
        }
    }
    if (check) bad = compare(s->name, y, ref, yn);
    printf("%-32s %s (%ld MACs)\n", s->name, bad ? "MISMATCH" : check ? "ok" : "ran", (long)yn * (long)k);
    free(x), free(y), free(ref), free(w), free(mult), free(shift), free(bias), free(b), free(wp), free(scratch);
    return bad;
}

/* argv[1]: the seed; argv[2]: a shape's index to run once (no argument: every shape, checked) */
int main(int argc, char **argv) {
    int failed = 0, i;
    test_seed(argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1u);
    if (argc > 2) return run(&SHAPES_[atoi(argv[2]) % NSHAPES], 0);
    for (i = 0; i < NSHAPES; ++i) failed |= run(&SHAPES_[i], 1);
    for (i = 0; i < NCHECKED; ++i) failed |= run(&CHECKED_[i], 1);
    return failed;
}
