/* The resize kernels (aotc_resize.h, resize.c) against the references (resize_ref.c) over random
 * shapes. Nearest (float, int8, uint8): ranks 1 to 5, per-dim tables of random source offsets
 * (repeats, skips, reversals: any map the compiler may tabulate), compared exactly. The blend:
 * one or two axes, 1, 2 or 4 taps each, mid and inner dims, random sources and weights, within
 * (2 T + 4) u of the terms' magnitudes (T = taps_h * taps_w products of a weight pair and a source,
 * each rounded twice, summed in order: Higham 3.1). GridSample: 1 to 3 spatial axes, every mode,
 * padding and align_corners, grid coordinates in [-1.5, 1.5] (a fifth on the border, a tenth on
 * exact pixel centres); the reference unnormalises the coordinates in float as the kernel does
 * (nearest rounds them: the pick must be the same), the rest in double; the kernel's float weights
 * are within a few ulp and its at most 64 terms are summed in float, so within 2^-16 of the plane's
 * largest |x| (< 300 u times sum |w| max |x|, sum |w| <= 1.25^3 for Keys' weights).
 *
 *     test_resize_kernels [seed] [shapes per entry point] */
#include "aotc_resize.h"
#include "kernels_ref.h"
#include "test_compare.h"

enum { K_NEAREST_F32, K_NEAREST_I8, K_NEAREST_U8, K_BLEND, K_GRID, K_DEFORM, K_COUNT };
static const char *const NAMES[K_COUNT] = {"aotc_resize_nearest_f32", "aotc_resize_nearest_i8",
                                           "aotc_resize_nearest_u8", "aotc_resize_f32", "aotc_grid_sample_f32",
                                           "aotc_deform_conv_f32"};

/* A random nearest map of x to y: per dim a table of source indices times x's stride of the dim. */
static int check_nearest(int kind) {
    aotc_resize_nearest_params p;
    int32_t in[AOTC_MAX_RANK], k, j, entries = 0, *offsets;
    int64_t stride = 1, xn = 1, yn = 1;
    size_t elem = kind == K_NEAREST_F32 ? sizeof(float) : 1;
    unsigned char *x, *x0, *y, *ref;
    int bad = 0;
    memset(&p, 0, sizeof p);
    do {
        p.rank = rand_int(1, 5), xn = yn = 1;
        for (k = 0; k < p.rank; ++k) {
            in[k] = rand_int(1, 7), p.out_shape[k] = chance(1, 8) ? in[k] : rand_int(1, 12);
            xn *= in[k], yn *= p.out_shape[k];
        }
    } while (xn > 4000 || yn > 4000);
    for (k = 0; k < p.rank; ++k) p.start[k] = entries, entries += p.out_shape[k];
    offsets = (int32_t *)malloc((size_t)entries * sizeof(int32_t));
    for (k = p.rank - 1; k >= 0; --k) {
        const int mode = rand_int(0, 2); /* 0: random; 1: upsampled in order; 2: reversed */
        for (j = 0; j < p.out_shape[k]; ++j) {
            const int32_t src = mode == 0 ? rand_int(0, in[k] - 1)
                                : mode == 1 ? (int32_t)((int64_t)j * in[k] / p.out_shape[k])
                                            : in[k] - 1 - (int32_t)((int64_t)j * in[k] / p.out_shape[k]);
            offsets[p.start[k] + j] = (int32_t)(src * stride);
        }
        stride *= in[k];
    }
    p.offsets = offsets;
    x = (unsigned char *)test_alloc_bytes((size_t)xn * elem), y = (unsigned char *)test_alloc_bytes((size_t)yn * elem);
    ref = (unsigned char *)test_alloc_bytes((size_t)yn * elem), x0 = (unsigned char *)test_alloc_bytes((size_t)xn * elem);
    if (kind == K_NEAREST_F32) {
        for (j = 0; j < xn; ++j) ((float *)x)[j] = rand_float();
    }
    memcpy(x0, x, (size_t)xn * elem);
    if (kind == K_NEAREST_F32) {
        aotc_resize_nearest_f32(&p, (const float *)x, (float *)y);
        aotc_resize_nearest_ref_f32(&p, (const float *)x, (float *)ref);
    } else if (kind == K_NEAREST_I8) {
        aotc_resize_nearest_i8(&p, (const int8_t *)x, (int8_t *)y);
        aotc_resize_nearest_ref_i8(&p, (const int8_t *)x, (int8_t *)ref);
    } else {
        aotc_resize_nearest_u8(&p, x, y);
        aotc_resize_nearest_ref_u8(&p, x, ref);
    }
    if (memcmp(y, ref, (size_t)yn * elem) != 0 || memcmp(x, x0, (size_t)xn * elem) != 0) {
        printf("%s: output differs from the reference, or input changed\n  rank %d, out", NAMES[kind], (int)p.rank);
        for (k = 0; k < p.rank; ++k) printf(" %d (from %d)", (int)p.out_shape[k], (int)in[k]);
        printf("\n");
        bad = 1;
    }
    free(offsets), free(x), free(x0), free(y), free(ref);
    return bad;
}

/* One axis's taps for `out` outputs from `len` sources `step` elements apart: indices in range,
 * weights random or (half of the time) a linear pair summing to 1. */
static void draw_taps(int32_t out, int32_t len, int32_t taps, int32_t step, int32_t *offset, float *weight) {
    int32_t j, s;
    for (j = 0; j < out; ++j) {
        const float t = 0.5f + 0.5f * rand_float();
        for (s = 0; s < taps; ++s) {
            offset[j * taps + s] = rand_int(0, len - 1) * step;
            weight[j * taps + s] = taps == 2 && chance(1, 2) ? (s == 0 ? 1.0f - t : t) : rand_float();
        }
    }
}

static int check_blend(void) {
    aotc_resize_params p;
    int32_t in_h, in_w, *off_h, *off_w;
    float *w_h, *w_w, *x, *x0, *y, *ref, *ax, *aw_h, *aw_w, *mag;
    double *tol;
    size_t xn, yn, i;
    int bad, two = chance(2, 3);
    static const int32_t TAPS[3] = {1, 2, 4};
    memset(&p, 0, sizeof p);
    do {
        p.outer = rand_int(1, 3), p.mid = two ? rand_int(1, 3) : 1, p.inner = rand_int(1, chance(1, 3) ? 9 : 2);
        in_h = two ? rand_int(1, 8) : 1, in_w = rand_int(1, 10);
        p.out_h = two ? rand_int(1, 12) : 1, p.out_w = rand_int(1, 16);
        p.taps_h = two ? TAPS[rand_int(0, 2)] : 1, p.taps_w = TAPS[rand_int(0, 2)];
        xn = (size_t)p.outer * in_h * p.mid * in_w * p.inner, yn = (size_t)p.outer * p.out_h * p.mid * p.out_w * p.inner;
    } while (xn > 6000 || yn > 6000);
    p.x_mid_stride = in_w * p.inner, p.x_outer_stride = in_h * p.mid * p.x_mid_stride;
    off_h = (int32_t *)malloc((size_t)p.out_h * p.taps_h * sizeof(int32_t)), w_h = test_alloc((size_t)p.out_h * p.taps_h);
    off_w = (int32_t *)malloc((size_t)p.out_w * p.taps_w * sizeof(int32_t)), w_w = test_alloc((size_t)p.out_w * p.taps_w);
    draw_taps(p.out_h, in_h, p.taps_h, p.mid * p.x_mid_stride, off_h, w_h);
    draw_taps(p.out_w, in_w, p.taps_w, p.inner, off_w, w_w);
    if (!two) w_h[0] = 1.0f;
    p.offset_h = off_h, p.weight_h = w_h, p.offset_w = off_w, p.weight_w = w_w;
    x = test_alloc(xn), x0 = test_copy(x, xn), y = test_alloc_nan(yn), ref = test_alloc(yn);
    aotc_resize_f32(&p, x, y);
    aotc_resize_ref_f32(&p, x, ref);
    ax = test_abs(x, xn), aw_h = test_abs(w_h, (size_t)p.out_h * p.taps_h), aw_w = test_abs(w_w, (size_t)p.out_w * p.taps_w);
    mag = test_alloc(yn), tol = (double *)malloc(yn * sizeof(double));
    p.weight_h = aw_h, p.weight_w = aw_w;
    aotc_resize_ref_f32(&p, ax, mag);
    for (i = 0; i < yn; ++i) tol[i] = (2.0 * p.taps_h * p.taps_w + 4.0) / 16777216.0 * mag[i];
    bad = test_differs_tol(NAMES[K_BLEND], NULL, y, ref, tol, yn);
    if (!bad && memcmp(x, x0, xn * sizeof(float)) != 0) printf("%s: changed its input\n", NAMES[K_BLEND]), bad = 1;
    if (bad) {
        printf("  outer %d, h %d -> %d (%d taps), mid %d, w %d -> %d (%d taps), inner %d\n", (int)p.outer, (int)in_h,
               (int)p.out_h, (int)p.taps_h, (int)p.mid, (int)in_w, (int)p.out_w, (int)p.taps_w, (int)p.inner);
    }
    free(off_h), free(off_w), free(w_h), free(w_w), free(x), free(x0), free(y), free(ref), free(ax), free(aw_h);
    free(aw_w), free(mag), free(tol);
    return bad;
}

static int check_grid(void) {
    aotc_grid_sample_params p;
    float *x, *grid, *y, *ref, big = 0.0f;
    double *tol;
    size_t xn, gn, yn, i;
    int32_t d;
    int bad;
    memset(&p, 0, sizeof p);
    p.n = rand_int(1, 2), p.c = rand_int(1, 3), p.nd = rand_int(1, 3);
    p.mode = rand_int(0, 2), p.padding = rand_int(0, 2), p.align_corners = chance(1, 2);
    xn = (size_t)p.n * p.c;
    for (d = 0; d < p.nd; ++d) p.in[d] = rand_int(1, p.nd == 3 ? 5 : 9), xn *= (size_t)p.in[d];
    p.out_count = rand_int(1, 30);
    gn = (size_t)p.n * p.out_count * p.nd, yn = (size_t)p.n * p.c * p.out_count;
    x = test_alloc(xn), grid = test_alloc(gn), y = test_alloc_nan(yn), ref = test_alloc(yn);
    for (i = 0; i < gn; ++i) {
        grid[i] = chance(1, 5) ? (chance(1, 2) ? -1.0f : 1.0f) : 1.5f * rand_float();
        if (chance(1, 10)) { /* a pixel centre of the axis (align_corners: -1 + 2k / (len - 1)) */
            const int32_t len = p.in[p.nd - 1 - (int32_t)(i % (size_t)p.nd)], k = rand_int(0, len - 1);
            grid[i] = p.align_corners ? (len > 1 ? -1.0f + 2.0f * (float)k / (float)(len - 1) : 0.0f)
                                      : -1.0f + (2.0f * (float)k + 1.0f) / (float)len;
        }
    }
    for (i = 0; i < xn; ++i) big = fabsf(x[i]) > big ? fabsf(x[i]) : big;
    aotc_grid_sample_f32(&p, x, grid, y);
    aotc_grid_sample_ref_f32(&p, x, grid, ref);
    tol = (double *)malloc(yn * sizeof(double));
    for (i = 0; i < yn; ++i) tol[i] = ldexp((double)big, -16);
    bad = test_differs_tol(NAMES[K_GRID], NULL, y, ref, tol, yn);
    if (bad) {
        printf("  n %d, c %d, in", (int)p.n, (int)p.c);
        for (d = 0; d < p.nd; ++d) printf(" %d", (int)p.in[d]);
        printf(", %d outputs, mode %d, padding %d, align_corners %d\n", (int)p.out_count, (int)p.mode, (int)p.padding,
               (int)p.align_corners);
    }
    free(x), free(grid), free(y), free(ref), free(tol);
    return bad;
}

/* The references on cases worked out by hand: a 1-D linear GridSample of x = [1, 2, 4] with
 * align_corners at -1, -0.5, 0.25, 1 (coordinates 0, 0.5, 1.25, 2: 1, 1.5, 2.5, 4), and out of range
 * at 1.5 (coordinate 2.5: zeros 4 * 0.5 = 2, border 4, reflection 1.5 -> 2 * 0.5 + 4 * 0.5 = 3);
 * the blend of x = [1, 2, 4] with taps (0, 2) weighted (0.25, 0.75): 3.25. */
static int check_reference(void) {
    static const float x[3] = {1, 2, 4}, grid[5] = {-1.0f, -0.5f, 0.25f, 1.0f, 1.5f};
    static const float zeros[5] = {1, 1.5f, 2.5f, 4, 2}, border[5] = {1, 1.5f, 2.5f, 4, 4};
    static const float reflection[5] = {1, 1.5f, 2.5f, 4, 3}, blend[1] = {3.25f}, w_one[1] = {1.0f};
    static const float w_two[2] = {0.25f, 0.75f};
    static const int32_t off_zero[1] = {0}, off_two[2] = {0, 2};
    aotc_grid_sample_params p;
    aotc_resize_params r;
    float y[5];
    int bad = 0;
    memset(&p, 0, sizeof p);
    p.n = p.c = p.nd = 1, p.in[0] = 3, p.out_count = 5, p.mode = AOTC_GRID_LINEAR, p.align_corners = 1;
    aotc_grid_sample_ref_f32(&p, x, grid, y);
    bad |= test_differs("aotc_grid_sample_ref_f32 (zeros)", y, zeros, NULL, 5);
    p.padding = AOTC_GRID_BORDER;
    aotc_grid_sample_ref_f32(&p, x, grid, y);
    bad |= test_differs("aotc_grid_sample_ref_f32 (border)", y, border, NULL, 5);
    p.padding = AOTC_GRID_REFLECTION;
    aotc_grid_sample_ref_f32(&p, x, grid, y);
    bad |= test_differs("aotc_grid_sample_ref_f32 (reflection)", y, reflection, NULL, 5);
    memset(&r, 0, sizeof r);
    r.outer = r.out_h = r.mid = r.out_w = r.inner = r.taps_h = 1, r.taps_w = 2, r.x_outer_stride = 3, r.x_mid_stride = 3;
    r.offset_h = off_zero, r.weight_h = w_one, r.offset_w = off_two, r.weight_w = w_two;
    aotc_resize_ref_f32(&r, x, y);
    bad |= test_differs("aotc_resize_ref_f32", y, blend, NULL, 1);
    return bad;
}

/* DeformConv: groups and offset groups, strides, pads, dilations, offsets that move taps within, across and
 * past the input's edges (a quarter on whole pixels), with and without mask and bias; the reference in double,
 * the kernel's float sum within test_differs' tolerance of the terms' magnitudes (the reference on |inputs|) */
static float *deform_random(size_t n, float scale, int absolute) {
    float *v = (float *)(void *)test_bytes(n * 4);
    size_t i;
    for (i = 0; i < n; ++i) v[i] = absolute ? fabsf(rand_float() * scale) : rand_float() * scale;
    return v;
}

static int check_deform(void) {
    aotc_deform_conv_params p;
    size_t xn, wn, on, mn, yn, i;
    float *x, *w, *off, *mask, *bias, *y, *ref, *mag, *scratch, *ax, *aw, *am, *ab;
    int has_mask = chance(1, 2), has_bias = chance(1, 2), bad;
    p.group = rand_int(1, 2), p.offset_group = rand_int(1, 2);
    p.in_c = p.group * p.offset_group * rand_int(1, 2), p.out_c = p.group * rand_int(1, 3), p.n = rand_int(1, 2);
    p.in_h = rand_int(1, 7), p.in_w = rand_int(1, 7), p.k_h = rand_int(1, 3), p.k_w = rand_int(1, 3);
    p.stride_h = rand_int(1, 2), p.stride_w = rand_int(1, 2), p.dil_h = rand_int(1, 2), p.dil_w = rand_int(1, 2);
    p.pad_top = rand_int(0, 2), p.pad_left = rand_int(0, 2);
    p.out_h = (p.in_h + 2 * p.pad_top - (p.k_h - 1) * p.dil_h - 1) / p.stride_h + 1;
    p.out_w = (p.in_w + 2 * p.pad_left - (p.k_w - 1) * p.dil_w - 1) / p.stride_w + 1;
    if (p.out_h < 1 || p.out_w < 1) return 0;
    xn = (size_t)p.n * p.in_c * p.in_h * p.in_w, wn = (size_t)p.out_c * (p.in_c / p.group) * p.k_h * p.k_w;
    mn = (size_t)p.n * p.offset_group * p.k_h * p.k_w * p.out_h * p.out_w, on = 2 * mn;
    yn = (size_t)p.n * p.out_c * p.out_h * p.out_w;
    x = deform_random(xn, 4.0f, 0), w = deform_random(wn, 1.0f, 0), off = deform_random(on, 3.0f, 0);
    for (i = 0; i < on; ++i) if (chance(1, 4)) off[i] = (float)rand_int(-3, 3);
    mask = has_mask ? deform_random(mn, 1.0f, 0) : NULL, bias = has_bias ? deform_random((size_t)p.out_c, 1.0f, 0) : NULL;
    ax = (float *)(void *)test_bytes(xn * 4), aw = (float *)(void *)test_bytes(wn * 4);
    for (i = 0; i < xn; ++i) ax[i] = fabsf(x[i]);
    for (i = 0; i < wn; ++i) aw[i] = fabsf(w[i]);
    am = has_mask ? (float *)(void *)test_bytes(mn * 4) : NULL, ab = has_bias ? (float *)(void *)test_bytes((size_t)p.out_c * 4) : NULL;
    for (i = 0; am && i < mn; ++i) am[i] = fabsf(mask[i]);
    for (i = 0; ab && i < (size_t)p.out_c; ++i) ab[i] = fabsf(bias[i]);
    y = (float *)(void *)test_bytes(yn * 4), ref = (float *)(void *)test_bytes(yn * 4), mag = (float *)(void *)test_bytes(yn * 4);
    scratch = (float *)(void *)test_bytes((size_t)p.in_c * p.k_h * p.k_w * 4);
    aotc_deform_conv_f32(&p, x, w, off, bias, mask, scratch, y);
    aotc_deform_conv_ref_f32(&p, x, w, off, bias, mask, ref);
    aotc_deform_conv_ref_f32(&p, ax, aw, off, ab, am, mag);
    bad = test_differs("aotc_deform_conv_f32", y, ref, mag, yn);
    if (bad) printf("  x [%d %d %d %d], w [%d / %d groups, %d x %d], stride %d %d, pad %d %d, dil %d %d, "
                    "offset groups %d, mask %d, bias %d\n", (int)p.n, (int)p.in_c, (int)p.in_h, (int)p.in_w,
                    (int)p.out_c, (int)p.group, (int)p.k_h, (int)p.k_w, (int)p.stride_h, (int)p.stride_w,
                    (int)p.pad_top, (int)p.pad_left, (int)p.dil_h, (int)p.dil_w, (int)p.offset_group, has_mask, has_bias);
    free(x), free(w), free(off), free(mask), free(bias), free(ax), free(aw), free(am), free(ab);
    free(y), free(ref), free(mag), free(scratch);
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference(), kind;
    int32_t i;
    for (kind = 0; kind < K_COUNT; ++kind) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) {
            bad = kind == K_BLEND ? check_blend() : kind == K_GRID ? check_grid()
                  : kind == K_DEFORM ? check_deform() : check_nearest(kind);
        }
        printf("%-34s %s (%d shapes)\n", NAMES[kind], bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
