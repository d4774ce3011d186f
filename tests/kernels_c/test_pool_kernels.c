/* The pool kernels (aotc_pool.h, pool.c) against the references (pool_ref.c) over random
 * shapes: 1-D to 3-D windows, strides, dilations, pads, floor and ceil mode, count_include_pad,
 * windows with no input under them, rows longer than pool.c combines on the stack; and the
 * global pools against a window over the whole plane. Buffers of exactly their size; outputs
 * start as NaN. The max is compared exactly, the average with a relative tolerance.
 * aotc_maxpool_indices_f32 (both storage orders) gives the reference max, and each index names
 * an input value equal to it inside its plane and its window (or, for a window with no tap
 * inside the input, position -1 on each spatial dim). The 8-bit MaxPools (int8, uint8) give
 * exactly the reference max of their integers as floats (the type's lowest where it gives
 * -FLT_MAX), on the same shapes and, half the time, on 2-D rows of 16 to 130 bytes at strides 1
 * to 3: pool_int8.c's two-pass path, with SSE2 at strides 1 and 2 (outputs of 16 bytes or more).
 * The float MaxPool also runs, half the time, on 2-D rows of 1 to 80 columns (a third near a
 * multiple of 16 outputs) with windows up to 33 columns wide, half of its inputs then NaN, +-inf,
 * +-0 or -FLT_MAX a third of the time: pool_avx512.h's AVX-512 path in -march=native builds on hosts
 * with AVX-512F (the count of shapes it took is printed), and its outputs must be bit for bit the
 * max down each window column, then across the columns (pool.c's order, signed zeros included).
 *
 *     test_pool_kernels [seed] [shapes per entry point] */
#include "aotc_pool.h"
#include "kernel_test.h"
#include "kernels_ref.h"
#include "pool_avx512.h"

#include <float.h>

enum { P_MAX, P_AVG, P_GLOBAL_MAX, P_GLOBAL_AVG, P_MAX_INDICES, P_MAX_I8, P_MAX_U8, P_COUNT };

static const char *const NAMES[P_COUNT] = {"aotc_maxpool_f32",        "aotc_avgpool_f32", "aotc_global_maxpool_f32",
                                           "aotc_global_avgpool_f32", "aotc_maxpool_indices_f32",
                                           "aotc_maxpool_i8",         "aotc_maxpool_u8"};

static int32_t prod3(const int32_t *v) { return v[0] * v[1] * v[2]; }

/* A random window pool (leading dims 1); 0 to draw again. */
static int draw(aotc_pool_params *p) {
    const int nd = rand_int(1, 3), ceil_mode = chance(1, 3), long_rows = nd >= 2 && chance(1, 10);
    int d;
    memset(p, 0, sizeof *p);
    p->planes = rand_int(1, 4);
    p->count_include_pad = chance(1, 2);
    for (d = 0; d < 3; ++d) p->in[d] = p->out[d] = p->kernel[d] = p->strides[d] = p->dilations[d] = 1;
    for (d = 3 - nd; d < 3; ++d) {
        const int32_t k = rand_int(1, 4), s = rand_int(1, 3), dl = chance(2, 3) ? 1 : rand_int(2, 3);
        const int32_t span = (k - 1) * dl + 1;
        int32_t n = rand_int(1, nd == 1 ? 40 : nd == 2 ? 12 : 6), total, out;
        if (long_rows) n = d == 2 ? rand_int(500, 700) : d == 1 ? rand_int(1, 4) : 1;
        p->kernel[d] = k, p->strides[d] = s, p->dilations[d] = dl, p->in[d] = n;
        p->pads_begin[d] = rand_int(0, k - 1), p->pads_end[d] = rand_int(0, k - 1); /* ONNX: pads < kernel */
        total = n + p->pads_begin[d] + p->pads_end[d];
        if (total < span) return 0;
        out = ceil_mode ? (total - span + s - 1) / s + 1 : (total - span) / s + 1;
        if (ceil_mode && (out - 1) * s >= n + p->pads_begin[d]) --out; /* the last window starts inside */
        p->out[d] = out;
    }
    return (double)p->planes * prod3(p->out) * prod3(p->kernel) <= 2000000.0;
}

/* Whether indices[i] (storage order `column_major`) is right for output i = (c, o) of y: the
 * position of an input value equal to y[i] under window o of plane c, or -1 on each of the
 * spatial_rank trailing dims when no tap of the window lies inside the input. */
static int index_ok(const aotc_pool_params *p, int32_t spatial_rank, int32_t column_major, const float *x,
                    const float *y, const int64_t *indices, size_t i) {
    const int64_t in_plane = (int64_t)prod3(p->in), out_plane = (int64_t)prod3(p->out);
    const int64_t c = (int64_t)i / out_plane;
    int64_t rest = indices[i] - c * in_plane, o = (int64_t)i % out_plane;
    int32_t pos[3], out[3], d;
    out[2] = (int32_t)(o % p->out[2]), out[1] = (int32_t)(o / p->out[2] % p->out[1]);
    out[0] = (int32_t)(o / p->out[2] / p->out[1]);
    if (y[i] == -FLT_MAX) { /* no tap inside (random data never holds -FLT_MAX) */
        int64_t want = 0, step = 1;
        for (d = 0; d < 3; ++d) {
            const int32_t dim = column_major ? d : 2 - d;
            if (dim >= 3 - spatial_rank) want -= step;
            step *= p->in[dim];
        }
        return rest == want;
    }
    if (rest < 0 || rest >= in_plane) return 0;
    for (d = 0; d < 3; ++d) {
        const int32_t dim = column_major ? d : 2 - d;
        pos[dim] = (int32_t)(rest % p->in[dim]);
        rest /= p->in[dim];
    }
    for (d = 0; d < 3; ++d) { /* a tap of the window: start + k * dilation for some k < kernel */
        const int32_t off = pos[d] - (out[d] * p->strides[d] - p->pads_begin[d]);
        if (off < 0 || off % p->dilations[d] != 0 || off / p->dilations[d] >= p->kernel[d]) return 0;
    }
    return x[c * in_plane + ((int64_t)pos[0] * p->in[1] + pos[1]) * p->in[2] + pos[2]] == y[i];
}

static void print_case(const aotc_pool_params *p) {
    printf("  planes %d, in %dx%dx%d, out %dx%dx%d, kernel %dx%dx%d, strides %d %d %d, dilations %d %d %d, "
           "pads %d %d %d / %d %d %d, count_include_pad %d\n",
           (int)p->planes, (int)p->in[0], (int)p->in[1], (int)p->in[2], (int)p->out[0], (int)p->out[1],
           (int)p->out[2], (int)p->kernel[0], (int)p->kernel[1], (int)p->kernel[2], (int)p->strides[0],
           (int)p->strides[1], (int)p->strides[2], (int)p->dilations[0], (int)p->dilations[1], (int)p->dilations[2],
           (int)p->pads_begin[0], (int)p->pads_begin[1], (int)p->pads_begin[2], (int)p->pads_end[0],
           (int)p->pads_end[1], (int)p->pads_end[2], (int)p->count_include_pad);
}

/* A 2-D pool with no dilation, rows of min_w to max_w columns, windows up to max_kw columns
 * wide (up to 4 most of the time): the 8-bit MaxPool's two-pass path (rows of 16 to 130 bytes),
 * and the float MaxPool's AVX-512 path (pool_avx512.h: column strides 1 and 2); 0 to draw again. */
static int draw_rows(aotc_pool_params *p, int32_t min_w, int32_t max_w, int32_t max_kw) {
    const int ceil_mode = chance(1, 3);
    int d;
    memset(p, 0, sizeof *p);
    p->planes = rand_int(1, 3);
    for (d = 0; d < 3; ++d) p->in[d] = p->out[d] = p->kernel[d] = p->strides[d] = p->dilations[d] = 1;
    for (d = 1; d < 3; ++d) {
        const int32_t k = d == 2 && max_kw > 4 && chance(1, 4) ? rand_int(5, max_kw) : rand_int(1, 4);
        const int32_t s = rand_int(1, d == 2 ? 3 : 2);
        /* (float: a third of the rows near a multiple of 16 outputs, where the last vector of 16
         * outputs ends at a window reaching past it) */
        const int32_t n = d != 2 ? rand_int(1, 6)
                          : max_kw > 4 && chance(1, 3) ? 16 * s * rand_int(1, 3) + rand_int(-3, 3)
                                                       : rand_int(min_w, max_w);
        int32_t total, out;
        p->kernel[d] = k, p->strides[d] = s, p->in[d] = n;
        p->pads_begin[d] = rand_int(0, k - 1), p->pads_end[d] = rand_int(0, k - 1);
        total = n + p->pads_begin[d] + p->pads_end[d];
        if (total < k) return 0;
        out = ceil_mode ? (total - k + s - 1) / s + 1 : (total - k) / s + 1;
        if (ceil_mode && (out - 1) * s >= n + p->pads_begin[d]) --out;
        p->out[d] = out;
    }
    return 1;
}

/* aotc_maxpool_i8 (is_signed) or _u8 on random integers against the float reference on the same
 * values: exactly equal, the type's lowest where the reference has no tap (-FLT_MAX). */
static int check_int8(int kind) {
    const int is_signed = kind == P_MAX_I8;
    aotc_pool_params p;
    size_t xn, yn, i;
    unsigned char *x, *y;
    float *xf, *ref;
    int bad = 0;
    if (chance(1, 2)) {
        while (!draw_rows(&p, 16, 130, 4)) {
        }
    } else {
        while (!draw(&p)) {
        }
    }
    xn = (size_t)p.planes * prod3(p.in), yn = (size_t)p.planes * prod3(p.out);
    x = (unsigned char *)malloc(xn ? xn : 1), y = (unsigned char *)malloc(yn ? yn : 1);
    xf = test_alloc(xn), ref = test_alloc(yn);
    for (i = 0; i < xn; ++i) {
        x[i] = (unsigned char)(test_next() >> 24);
        xf[i] = is_signed ? (float)(int8_t)x[i] : (float)x[i];
    }
    memset(y, 0x5a, yn ? yn : 1);
    aotc_maxpool_ref_f32(&p, xf, ref);
    if (is_signed) {
        aotc_maxpool_i8(&p, (const int8_t *)x, (int8_t *)y);
    } else {
        aotc_maxpool_u8(&p, x, y);
    }
    for (i = 0; i < yn && !bad; ++i) {
        const float want = ref[i] == -FLT_MAX ? (is_signed ? -128.0f : 0.0f) : ref[i];
        const float got = is_signed ? (float)(int8_t)y[i] : (float)y[i];
        if (got != want) {
            printf("%s: output %ld is %g, want %g\n", NAMES[kind], (long)i, (double)got, (double)want);
            bad = 1;
        }
    }
    if (bad) print_case(&p);
    free(x), free(y), free(xf), free(ref);
    return bad;
}

/* aotc_maxpool_f32 and its AVX-512 kernels (aotc_pool.h) */
typedef void (*maxpool_fn)(const aotc_pool_params *, const float *, float *);
#define MAX_PATHS 8
static const maxpool_fn MAX_FNS[MAX_PATHS] = {aotc_maxpool_f32,        aotc_maxpool_k3s2p1_f32, aotc_maxpool_k3s2p0_f32,
                                              aotc_maxpool_k2s2p0_f32, aotc_maxpool_k3s1p1_f32, aotc_maxpool_k3s1p0_f32,
                                              aotc_maxpool_k2s1p0_f32, aotc_maxpool_avx512_f32};
static const char *const MAX_NAMES[MAX_PATHS] = {
    "aotc_maxpool_f32",        "aotc_maxpool_k3s2p1_f32", "aotc_maxpool_k3s2p0_f32", "aotc_maxpool_k2s2p0_f32",
    "aotc_maxpool_k3s1p1_f32", "aotc_maxpool_k3s1p0_f32", "aotc_maxpool_k2s1p0_f32", "aotc_maxpool_avx512_f32"};

/* set by an AVX-512 kernel given a pool it does not take (paths_avx512.h: built with AOTC_TEST_X86_PATHS) */
const char *aotc_test_avx512_path_missed;

/* Shapes whose pool pool_avx512.h's AVX-512 rows take (0 in builds without them) */
static int32_t avx512_max_shapes;

/* Half of the values NaN, +-inf, +-0, -FLT_MAX or subnormal: the max must skip NaN, give -FLT_MAX for
 * a window of -inf, keep the earlier of +0 and -0 (the bit check below), and order subnormals and
 * zeros as IEEE does (Helium's compares flush subnormals: mve_select.h). */
static void special_values(float *x, size_t n) {
    static const float specials[8] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -FLT_MAX, 1e-40f, -1e-40f};
    size_t i;
    for (i = 0; i < n; ++i) {
        if (chance(1, 2)) x[i] = specials[rand_int(0, 7)];
    }
}

/* pool.c's order for a 2-D pool with no dilation and rows of at most 512 columns (pool_row): for
 * each output, each window column's max down its rows, then the max across them in column order,
 * every step `v > m ? v : m` from -FLT_MAX. The same value as the reference; the bits differ only
 * in which zero of a window holding +0 and -0 wins, which this order fixes. */
static void max_rows_then_columns(const aotc_pool_params *p, const float *x, float *y) {
    const int32_t in_h = p->in[1], in_w = p->in[2];
    int32_t c, oh, ow, kh, kw;
    for (c = 0; c < p->planes; ++c, x += (ptrdiff_t)in_h * in_w) {
        for (oh = 0; oh < p->out[1]; ++oh) {
            for (ow = 0; ow < p->out[2]; ++ow) {
                float m = -FLT_MAX;
                for (kw = 0; kw < p->kernel[2]; ++kw) {
                    const int32_t iw = ow * p->strides[2] - p->pads_begin[2] + kw;
                    float col = -FLT_MAX;
                    if (iw < 0 || iw >= in_w) continue;
                    for (kh = 0; kh < p->kernel[1]; ++kh) {
                        const int32_t ih = oh * p->strides[1] - p->pads_begin[1] + kh;
                        const float v = ih >= 0 && ih < in_h ? x[(ptrdiff_t)ih * in_w + iw] : -FLT_MAX;
                        col = v > col ? v : col;
                    }
                    m = col > m ? col : m;
                }
                *y++ = m;
            }
        }
    }
}

static int check(int kind) {
    aotc_pool_params p;
    size_t xn, yn;
    float *x, *x0, *ax, *y, *ref, *mag = NULL;
    int bad = 0, d, path, rows_2d = 0;
    if (kind == P_MAX_I8 || kind == P_MAX_U8) return check_int8(kind);
    if (kind == P_MAX && chance(1, 2)) { /* rows of 1 to 80 columns, windows up to 33 wide */
        while (!draw_rows(&p, 1, 80, 33)) {
        }
        rows_2d = 1;
    } else {
        while (!draw(&p)) {
        }
    }
    if (kind == P_GLOBAL_MAX || kind == P_GLOBAL_AVG) { /* the reference: one window over the plane */
        p.planes += 4 * (p.planes - 1); /* 1, 6, 11 or 16: Helium's global average goes 4 planes at a time */
        for (d = 0; d < 3; ++d) {
            p.kernel[d] = p.in[d], p.out[d] = p.strides[d] = p.dilations[d] = 1;
            p.pads_begin[d] = p.pads_end[d] = 0;
        }
    }
    xn = (size_t)p.planes * prod3(p.in), yn = (size_t)p.planes * prod3(p.out);
    x = test_alloc(xn);
    if (kind == P_MAX && chance(1, 3)) special_values(x, xn);
    x0 = test_copy(x, xn), ax = test_abs(x, xn), y = test_alloc_nan(yn), ref = test_alloc(yn);
    if (kind == P_MAX || kind == P_GLOBAL_MAX || kind == P_MAX_INDICES) {
        aotc_maxpool_ref_f32(&p, x, ref);
    } else {
        mag = test_alloc(yn);
        aotc_avgpool_ref_f32(&p, x, ref);
        aotc_avgpool_ref_f32(&p, ax, mag);
    }
    if (kind == P_MAX_INDICES) {
        const int32_t spatial_rank = p.in[0] > 1 || p.kernel[0] > 1 ? 3 : p.in[1] > 1 || p.kernel[1] > 1 ? 2 : 1;
        const int32_t column_major = chance(1, 2);
        int64_t *indices = (int64_t *)malloc(yn * sizeof(int64_t));
        size_t i;
        aotc_maxpool_indices_f32(&p, spatial_rank, column_major, x, y, indices);
        bad = test_differs(NAMES[kind], y, ref, NULL, yn);
        for (i = 0; i < yn && !bad; ++i) {
            if (!index_ok(&p, spatial_rank, column_major, x, y, indices, i)) {
                printf("%s: index %ld of output %ld is wrong (storage_order %d)\n", NAMES[kind], (long)indices[i],
                       (long)i, (int)column_major);
                bad = 1;
            }
        }
        free(indices);
        if (bad) print_case(&p);
        free(x), free(x0), free(ax), free(y), free(ref);
        return bad;
    }
#if AOTC_MAXPOOL_F32_AVX512
    if (kind == P_MAX && mp16_fits(&p)) ++avx512_max_shapes;
#endif
    /* MaxPool: aotc_maxpool_f32, then each of its AVX-512 kernels where it takes the pool (built without
     * AVX-512: each is aotc_maxpool_f32 again; with it, one given a pool it does not take aborts, but here it
     * returns, having named itself in aotc_test_avx512_path_missed), all bit for bit the max down rows, then
     * across columns */
    for (path = 0; path < (kind == P_MAX ? MAX_PATHS : 1) && !bad; ++path) {
        const char *name = kind == P_MAX ? MAX_NAMES[path] : NAMES[kind];
        aotc_test_avx512_path_missed = NULL;
        switch (kind) {
        case P_MAX: MAX_FNS[path](&p, x, y); break;
        case P_AVG: aotc_avgpool_f32(&p, x, y); break;
        case P_GLOBAL_MAX: aotc_global_maxpool_f32(p.planes, prod3(p.in), x, y); break;
        default: aotc_global_avgpool_f32(p.planes, prod3(p.in), x, y); break;
        }
        if (aotc_test_avx512_path_missed != NULL) continue;
        bad = test_differs(name, y, ref, mag, yn);
        if (!bad && rows_2d && p.in[2] <= 512) {
            max_rows_then_columns(&p, x, ref);
            if (memcmp(y, ref, yn * sizeof(float)) != 0) {
                printf("%s: not bit for bit the max down rows, then across columns\n", name);
                bad = 1;
            }
        }
    }
    if (!bad && memcmp(x, x0, xn * sizeof(float)) != 0) {
        printf("%s: changed its input\n", NAMES[kind]);
        bad = 1;
    }
    if (bad) print_case(&p);
    free(x), free(x0), free(ax), free(y), free(ref), free(mag);
    return bad;
}

/* The references on a pool small enough to work out by hand: 1-D input [1, -2, 3, 4, -5],
 * kernel 2, stride 2, pads 1 and 1: windows [pad, 1], [-2, 3], [4, -5]. */
static int check_reference(void) {
    static const float x[5] = {1, -2, 3, 4, -5};
    static const float max[3] = {1, 3, 4}, avg[3] = {1, 0.5f, -0.5f}, avg_pad[3] = {0.5f, 0.5f, -0.5f};
    aotc_pool_params p;
    float y[3];
    int bad = 0, d;
    memset(&p, 0, sizeof p);
    for (d = 0; d < 3; ++d) p.in[d] = p.out[d] = p.kernel[d] = p.strides[d] = p.dilations[d] = 1;
    p.planes = 1, p.in[2] = 5, p.out[2] = 3, p.kernel[2] = 2, p.strides[2] = 2, p.pads_begin[2] = p.pads_end[2] = 1;
    aotc_maxpool_ref_f32(&p, x, y);
    bad |= test_differs("aotc_maxpool_ref_f32", y, max, NULL, 3);
    aotc_avgpool_ref_f32(&p, x, y);
    bad |= test_differs("aotc_avgpool_ref_f32", y, avg, NULL, 3);
    p.count_include_pad = 1;
    aotc_avgpool_ref_f32(&p, x, y);
    bad |= test_differs("aotc_avgpool_ref_f32 (count_include_pad)", y, avg_pad, NULL, 3);
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference(), kind;
    int32_t i;
    for (kind = 0; kind < P_COUNT; ++kind) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = check(kind);
        printf("%-34s %s (%d shapes)\n", NAMES[kind], bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    printf("aotc_maxpool_f32 AVX-512 path: %d shapes\n", (int)avx512_max_shapes);
    return failed;
}
