/* The shape kernels (aotc_shape.h, shape.c) against the references (shape_ref.c) over random
 * shapes, bit for bit: copies in place and not; strided copies of rank 1 to 8 as Slice (steps,
 * negative ones), Transpose (permuted strides) and Concat / Split (an offset into a larger
 * destination) make them, elements of 1 to 12 bytes; batches of 2-D transposes across and within
 * the kernel's 16 x 16 tiles; Pad in its four modes, rank 1 to 5, over a cropped, permuted source;
 * Gather with indices in and out of range (negative ones too); Cast between every pair of its 21
 * types (aotc_cast) and to the float8 types with and without saturation (aotc_cast_f8), the
 * sources holding random bit patterns, ties, subnormals, infinities, NaNs and values at the edges
 * of each integer type. A NaN matches any NaN of its type; every other element is compared byte
 * for byte. Outputs start as random bytes, the same in both runs, and are compared whole (a strided
 * destination's untouched elements too).
 *
 *     test_shape_kernels [seed] [shapes per entry point] */
#include "aotc_shape.h"
#include "kernel_test.h"
#include "kernels_ref.h"

static uint8_t *bytes(size_t n) {
    uint8_t *b = (uint8_t *)malloc(n > 0 ? n : 1);
    size_t i;
    if (b == NULL) {
        printf("out of memory (%lu bytes)\n", (unsigned long)n);
        exit(2);
    }
    for (i = 0; i < n; ++i) b[i] = (uint8_t)(test_next() >> 24);
    return b;
}

static uint8_t *bytes_copy(const uint8_t *src, size_t n) {
    uint8_t *b = bytes(n);
    if (n > 0) memcpy(b, src, n);
    return b;
}

static int bytes_differ(const char *what, const uint8_t *y, const uint8_t *ref, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        if (y[i] != ref[i]) {
            printf("%s: byte %lu of %lu is %d, reference %d\n", what, (unsigned long)i, (unsigned long)n, (int)y[i],
                   (int)ref[i]);
            return 1;
        }
    }
    return 0;
}

static int32_t elem_size(void) {
    static const int32_t sizes[8] = {1, 2, 4, 8, 4, 1, 3, 12};
    return sizes[rand_int(0, 7)];
}

/* ---- aotc_copy ---------------------------------------------------------------------------------- */

static int check_copy(void) {
    const size_t n = (size_t)rand_int(0, 3000);
    uint8_t *src = bytes(n), *y = bytes(n), *ref = bytes_copy(y, n), *in_place = bytes_copy(src, n);
    int bad;
    aotc_copy(n, src, y);
    aotc_copy_ref(n, src, ref);
    aotc_copy(n, in_place, in_place);
    bad = bytes_differ("aotc_copy", y, ref, n) || bytes_differ("aotc_copy (in place)", in_place, src, n);
    if (bad) printf("  %lu bytes\n", (unsigned long)n);
    free(src), free(y), free(ref), free(in_place);
    return bad;
}

/* ---- aotc_strided_copy --------------------------------------------------------------------------- */

/* A random order of 0..n-1. */
static void permutation(int32_t *perm, int32_t n) {
    int32_t i;
    for (i = 0; i < n; ++i) perm[i] = i;
    for (i = n - 1; i > 0; --i) {
        const int32_t j = rand_int(0, i), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
}

/* Row-major strides of dims laid out in the order perm (perm[0] outermost) into strides (by dim). */
static int64_t layout(const int32_t *dims, const int32_t *perm, int32_t rank, int64_t *strides) {
    int64_t s = 1;
    int32_t k;
    for (k = rank - 1; k >= 0; --k) {
        strides[perm[k]] = s;
        s *= dims[perm[k]];
    }
    return s;
}

static void print_dims(const char *what, const int32_t *v, int32_t n) {
    int32_t k;
    printf("  %s", what);
    for (k = 0; k < n; ++k) printf(" %d", (int)v[k]);
    printf("\n");
}

static int check_strided_copy(void) {
    aotc_strided_copy_params p;
    int32_t sdims[AOTC_MAX_RANK], ddims[AOTC_MAX_RANK], perm[AOTC_MAX_RANK], k;
    int64_t sstr[AOTC_MAX_RANK], dstr[AOTC_MAX_RANK], total = 1, sn, dn;
    const int32_t concat_axis_pick = rand_int(0, 7);
    uint8_t *src, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.rank = rand_int(1, AOTC_MAX_RANK), p.elem_size = elem_size();
    do { /* at most 4000 elements */
        for (k = 0, total = 1; k < p.rank; ++k) {
            p.shape[k] = rand_int(p.rank > 4 ? 1 : 0, p.rank > 4 ? 3 : p.rank > 2 ? 6 : 40);
            total *= p.shape[k];
        }
    } while (total > 4000);
    /* the source: each dim a slice of a larger one (a step of 1 to 3, forwards or backwards) */
    {
        int32_t step[AOTC_MAX_RANK], begin[AOTC_MAX_RANK];
        permutation(perm, p.rank);
        if (chance(1, 3)) for (k = 0; k < p.rank; ++k) perm[k] = k;
        for (k = 0; k < p.rank; ++k) {
            int32_t span;
            step[k] = chance(2, 3) || p.shape[k] == 0 ? 1 : rand_int(2, 3);
            span = p.shape[k] > 0 ? (p.shape[k] - 1) * step[k] + 1 : 0;
            sdims[k] = span + rand_int(0, 2);
            if (sdims[k] == 0) sdims[k] = 1;
            begin[k] = rand_int(0, sdims[k] - (span > 0 ? span : 1));
        }
        sn = layout(sdims, perm, p.rank, sstr);
        p.src_offset = 0;
        for (k = 0; k < p.rank; ++k) {
            const int reverse = chance(1, 4) && p.shape[k] > 0;
            p.src_strides[k] = (int32_t)(sstr[k] * step[k] * (reverse ? -1 : 1));
            p.src_offset += sstr[k] * (begin[k] + (reverse ? (int64_t)(p.shape[k] - 1) * step[k] : 0));
        }
    }
    /* the destination: a larger tensor along one dim (Concat), possibly laid out in another order */
    {
        const int32_t axis = concat_axis_pick % p.rank;
        int32_t at = 0;
        for (k = 0; k < p.rank; ++k) ddims[k] = p.shape[k] > 0 ? p.shape[k] : 1;
        if (chance(2, 3)) {
            const int32_t extra = rand_int(1, 5);
            ddims[axis] += extra, at = rand_int(0, extra);
        }
        permutation(perm, p.rank);
        if (chance(1, 2)) for (k = 0; k < p.rank; ++k) perm[k] = k;
        dn = layout(ddims, perm, p.rank, dstr);
        for (k = 0; k < p.rank; ++k) p.dst_strides[k] = (int32_t)dstr[k];
        p.dst_offset = (int64_t)at * dstr[axis];
    }
    src = bytes((size_t)sn * p.elem_size), y = bytes((size_t)dn * p.elem_size);
    ref = bytes_copy(y, (size_t)dn * p.elem_size);
    aotc_strided_copy(&p, src, y);
    aotc_strided_copy_ref(&p, src, ref);
    bad = bytes_differ("aotc_strided_copy", y, ref, (size_t)dn * p.elem_size);
    if (bad) {
        printf("  rank %d, elem_size %d, src_offset %ld, dst_offset %ld\n", (int)p.rank, (int)p.elem_size,
               (long)p.src_offset, (long)p.dst_offset);
        print_dims("shape", p.shape, p.rank), print_dims("src_strides", p.src_strides, p.rank);
        print_dims("dst_strides", p.dst_strides, p.rank);
    }
    free(src), free(y), free(ref);
    return bad;
}

/* ---- aotc_transpose2d ------------------------------------------------------------------------------ */

static int check_transpose2d(void) {
    aotc_transpose2d_params p;
    size_t n;
    uint8_t *src, *y, *ref;
    int bad;
    p.batch = rand_int(1, 3), p.elem_size = elem_size();
    p.rows = chance(1, 2) ? rand_int(1, 40) : rand_int(1, 5);
    p.cols = chance(1, 2) ? rand_int(1, 40) : rand_int(1, 5);
    if (chance(1, 4)) p.rows = 16 * rand_int(1, 2) + rand_int(-1, 1), p.cols = 16 * rand_int(1, 3) + rand_int(-1, 1);
    n = (size_t)p.batch * p.rows * p.cols * p.elem_size;
    src = bytes(n), y = bytes(n), ref = bytes_copy(y, n);
    aotc_transpose2d(&p, src, y);
    aotc_transpose2d_ref(&p, src, ref);
    bad = bytes_differ("aotc_transpose2d", y, ref, n);
    if (bad) printf("  batch %d, rows %d, cols %d, elem_size %d\n", (int)p.batch, (int)p.rows, (int)p.cols, (int)p.elem_size);
    free(src), free(y), free(ref);
    return bad;
}

/* ---- aotc_pad -------------------------------------------------------------------------------------- */

static int check_pad(void) {
    aotc_pad_params p;
    int32_t sdims[AOTC_MAX_RANK], perm[AOTC_MAX_RANK], k;
    int64_t sstr[AOTC_MAX_RANK], sn, total = 1;
    uint8_t *src, *y, *ref, *value;
    int bad;
    memset(&p, 0, sizeof p);
    p.rank = rand_int(1, 5), p.elem_size = elem_size(), p.mode = rand_int(0, 3);
    for (k = 0; k < p.rank; ++k) {
        if (k == 0) total = 1;
        const int32_t n = rand_int(p.mode == AOTC_PAD_CONSTANT && chance(1, 10) ? 0 : 1, p.rank > 2 ? 5 : 30);
        const int32_t most = p.mode == AOTC_PAD_REFLECT ? n - 1 : p.mode == AOTC_PAD_CONSTANT ? 6 : 2 * n + 3;
        p.in_shape[k] = n;
        p.pads_begin[k] = rand_int(0, most > 0 ? most : 0);
        p.out_shape[k] = n + p.pads_begin[k] + rand_int(0, most > 0 ? most : 0);
        total *= p.out_shape[k];
        if (k == p.rank - 1 && total > 4000) k = -1; /* drawn again: at most 4000 elements */
    }
    /* the region read: a crop (src_offset) of a larger source, possibly laid out in another order */
    permutation(perm, p.rank);
    if (chance(1, 2)) for (k = 0; k < p.rank; ++k) perm[k] = k;
    for (k = 0; k < p.rank; ++k) sdims[k] = (p.in_shape[k] > 0 ? p.in_shape[k] : 1) + (chance(1, 3) ? rand_int(1, 3) : 0);
    sn = layout(sdims, perm, p.rank, sstr);
    for (k = 0; k < p.rank; ++k) {
        p.src_strides[k] = (int32_t)sstr[k];
        p.src_offset += sstr[k] * rand_int(0, sdims[k] - (p.in_shape[k] > 0 ? p.in_shape[k] : 1));
    }
    src = bytes((size_t)sn * p.elem_size), y = bytes((size_t)total * p.elem_size);
    ref = bytes_copy(y, (size_t)total * p.elem_size), value = bytes((size_t)p.elem_size);
    aotc_pad(&p, src, p.mode == AOTC_PAD_CONSTANT ? value : NULL, y);
    aotc_pad_ref(&p, src, value, ref);
    bad = bytes_differ("aotc_pad", y, ref, (size_t)total * p.elem_size);
    if (bad) {
        printf("  rank %d, elem_size %d, mode %d, src_offset %ld\n", (int)p.rank, (int)p.elem_size, (int)p.mode,
               (long)p.src_offset);
        print_dims("in_shape", p.in_shape, p.rank), print_dims("out_shape", p.out_shape, p.rank);
        print_dims("pads_begin", p.pads_begin, p.rank), print_dims("src_strides", p.src_strides, p.rank);
    }
    free(src), free(y), free(ref), free(value);
    return bad;
}

/* ---- aotc_gather_i64 / _i32 --------------------------------------------------------------------------- */

static int check_gather(int wide) {
    aotc_gather_params p;
    size_t dn, yn;
    uint8_t *data, *y, *ref;
    int64_t *i64;
    int32_t *i32, j;
    int bad;
    p.outer = rand_int(1, 6), p.axis_dim = rand_int(1, 20), p.n_indices = rand_int(1, 25);
    p.block_bytes = (int64_t)elem_size() * rand_int(1, 12);
    dn = (size_t)(p.outer * p.axis_dim * p.block_bytes), yn = (size_t)(p.outer * p.n_indices * p.block_bytes);
    data = bytes(dn), y = bytes(yn), ref = bytes_copy(y, yn);
    i64 = (int64_t *)malloc(sizeof(int64_t) * p.n_indices), i32 = (int32_t *)malloc(sizeof(int32_t) * p.n_indices);
    for (j = 0; j < p.n_indices; ++j) {
        i32[j] = chance(1, 8) ? rand_int(-p.axis_dim - 3, p.axis_dim + 2) : rand_int(-p.axis_dim, p.axis_dim - 1);
        i64[j] = chance(1, 20) ? (int64_t)i32[j] * 4294967296LL + i32[j] : i32[j]; /* beyond int32 too */
    }
    if (wide) aotc_gather_i64(&p, data, i64, y), aotc_gather_i64_ref(&p, data, i64, ref);
    else aotc_gather_i32(&p, data, i32, y), aotc_gather_i32_ref(&p, data, i32, ref);
    bad = bytes_differ(wide ? "aotc_gather_i64" : "aotc_gather_i32", y, ref, yn);
    if (bad) printf("  outer %d, axis_dim %d, n_indices %d, block_bytes %ld\n", (int)p.outer, (int)p.axis_dim,
                    (int)p.n_indices, (long)p.block_bytes);
    free(data), free(y), free(ref), free(i64), free(i32);
    return bad;
}

/* ---- aotc_cast / aotc_cast_f8 -------------------------------------------------------------------------- */

#define CAST_TYPES 23
static const char *const TYPE_NAMES[CAST_TYPES] = {"f32", "f64", "i64", "i32", "i16", "i8", "u8",
                                                   "bool", "u16", "u32", "u64", "f16", "bf16", "i4",
                                                   "u4", "i2", "u2", "f8e4m3fn", "f8e4m3fnuz", "f8e5m2",
                                                   "f8e5m2fnuz", "f4e2m1", "f8e8m0"};
static const size_t TYPE_SIZES[CAST_TYPES] = {4, 8, 8, 4, 2, 1, 1, 1, 2, 4, 8, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* A real number worth casting: near a tie or an integer type's edge, a half's or float8's range, tiny, huge. */
static double interesting_real(void) {
    static const double edges[] = {2147483648.0, 2147483647.0, 9223372036854775808.0, 18446744073709551616.0,
                                   32768.0, 65536.0, 65504.0, 65520.0, 448.0, 464.0, 240.0, 57344.0, 61440.0,
                                   128.0, 256.0, 3.4028234663852886e38, 1.1754943508222875e-38, 6.103515625e-05,
                                   5.960464477539063e-08, 0.0};
    const int kind = rand_int(0, 4);
    double v;
    if (kind == 0) v = (double)rand_int(-600, 600) / 2.0; /* halves: ties */
    else if (kind == 1) v = edges[rand_int(0, (int32_t)(sizeof edges / sizeof edges[0]) - 1)] + rand_int(-2, 2) * (chance(1, 2) ? 1.0 : 0.25);
    else if (kind == 2) v = ldexp((double)rand_float(), rand_int(-140, 130));
    else if (kind == 3) v = (double)rand_float() * 300.0;
    else v = ldexp(1.0 + (double)rand_int(0, 15) / 16.0, rand_int(-30, 70)) * (1.0 + ldexp((double)rand_int(-1, 1), -rand_int(9, 30)));
    return chance(1, 2) ? -v : v;
}

static void random_element(int32_t t, uint8_t *e) {
    size_t b;
    for (b = 0; b < TYPE_SIZES[t]; ++b) e[b] = (uint8_t)(test_next() >> 24); /* any bit pattern */
    if (t == AOTC_CAST_F32 && chance(3, 4)) {
        float f = (float)interesting_real();
        if (chance(1, 10)) f = chance(1, 2) ? INFINITY : -INFINITY;
        if (chance(1, 20)) f = NAN;
        memcpy(e, &f, 4);
    } else if (t == AOTC_CAST_F64 && chance(3, 4)) {
        double d = interesting_real();
        if (chance(1, 10)) d = chance(1, 2) ? INFINITY : -INFINITY;
        memcpy(e, &d, 8);
    } else if ((t == AOTC_CAST_I64 || t == AOTC_CAST_I32 || t == AOTC_CAST_U64 || t == AOTC_CAST_U32) && chance(1, 2)) {
        const int64_t v = chance(1, 2) ? rand_int(-300, 300) : (int64_t)interesting_real();
        memcpy(e, &v, TYPE_SIZES[t]); /* (little-endian: the low bytes) */
    } else if (t == AOTC_CAST_BOOL) {
        e[0] = (uint8_t)rand_int(0, 1);
    } else if (t >= AOTC_CAST_I4 && t <= AOTC_CAST_U2) {
        e[0] = (uint8_t)rand_int(0, t <= AOTC_CAST_U4 ? 15 : 3);
    } else if (t == AOTC_CAST_F4E2M1) {
        e[0] = (uint8_t)rand_int(0, 15);
    }
}

static int is_nan(int32_t t, const uint8_t *e) {
    uint16_t h = 0;
    if (t == AOTC_CAST_F32) { float f; memcpy(&f, e, 4); return f != f; }
    if (t == AOTC_CAST_F64) { double d; memcpy(&d, e, 8); return d != d; }
    if (t == AOTC_CAST_F16 || t == AOTC_CAST_BF16) memcpy(&h, e, 2);
    if (t == AOTC_CAST_F16) return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    if (t == AOTC_CAST_BF16) return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0;
    if (t == AOTC_CAST_F8E8M0) return e[0] == 0xff;
    if (t == AOTC_CAST_F4E2M1) return 0;
    if (t >= AOTC_CAST_F8E4M3FN) { const double v = aotc_f8_decode_ref((aotc_cast_type)t, e[0]); return v != v; }
    return 0;
}

/* f8: aotc_cast_f8 (saturate or not); e8m0: aotc_cast_e8m0 (saturate or not, a rounding mode) */
static int check_cast(int f8, int e8m0) {
    const int32_t from = rand_int(0, CAST_TYPES - 1);
    const int32_t to = e8m0 ? AOTC_CAST_F8E8M0 : f8 ? rand_int(AOTC_CAST_F8E4M3FN, CAST_TYPES - 1)
                                                    : rand_int(0, CAST_TYPES - 1);
    const int saturate = chance(1, 2);
    const aotc_round_mode mode = (aotc_round_mode)rand_int(0, 2);
    const size_t n = (size_t)rand_int(0, 300), sz = TYPE_SIZES[to];
    uint8_t *src = bytes(n * TYPE_SIZES[from]), *y = bytes(n * sz), *ref = bytes_copy(y, n * sz);
    size_t i, b;
    int bad = 0;
    for (i = 0; i < n; ++i) random_element(from, src + i * TYPE_SIZES[from]);
    if (e8m0) {
        aotc_cast_e8m0(n, (aotc_cast_type)from, saturate, mode, src, y);
        aotc_cast_e8m0_ref(n, (aotc_cast_type)from, saturate, mode, src, ref);
    } else if (f8) {
        aotc_cast_f8(n, (aotc_cast_type)from, (aotc_cast_type)to, saturate, src, y);
        aotc_cast_f8_ref(n, (aotc_cast_type)from, (aotc_cast_type)to, saturate, src, ref);
    } else {
        aotc_cast(n, (aotc_cast_type)from, (aotc_cast_type)to, src, y);
        aotc_cast_ref(n, (aotc_cast_type)from, (aotc_cast_type)to, src, ref);
    }
    for (i = 0; i < n && !bad; ++i) {
        if (is_nan(to, y + i * sz) && is_nan(to, ref + i * sz)) continue;
        if (memcmp(y + i * sz, ref + i * sz, sz) != 0) {
            printf("%s %s -> %s%s (mode %d): element %lu of %lu, source bytes",
                   e8m0 ? "aotc_cast_e8m0" : f8 ? "aotc_cast_f8" : "aotc_cast", TYPE_NAMES[from], TYPE_NAMES[to],
                   f8 || e8m0 ? (saturate ? " (saturate)" : " (no saturate)") : "", (int)mode, (unsigned long)i,
                   (unsigned long)n);
            for (b = 0; b < TYPE_SIZES[from]; ++b) printf(" %02x", src[i * TYPE_SIZES[from] + b]);
            printf(", result");
            for (b = 0; b < sz; ++b) printf(" %02x", y[i * sz + b]);
            printf(", reference");
            for (b = 0; b < sz; ++b) printf(" %02x", ref[i * sz + b]);
            printf("\n");
            bad = 1;
        }
    }
    free(src), free(y), free(ref);
    return bad;
}

/* The references on cases worked out by hand. */
static int check_reference(void) {
    static const float f[6] = {65519.0f, 65520.0f, 2.5f, -3.5f, 1e-8f, 464.0f};
    static const uint16_t f16[6] = {0x7bff, 0x7c00, 0x4100, 0xc300, 0x0000, 0x5f40};
    static const uint8_t e4m3[6] = {0x7e, 0x7e, 0x42, 0xc6, 0x00, 0x7e}; /* saturated: 448 */
    static const int8_t i8[6] = {-17, -16, 2, -3, 0, -48};                 /* through int32, modulo 2^8 */
    static const uint8_t pad_x[3] = {1, 2, 3}, pad_reflect[7] = {3, 2, 1, 2, 3, 2, 1}, pad_wrap[7] = {3, 1, 2, 3, 1, 2, 3};
    /* float4: ties to even, 6 past it; e8m0 of 1.1 2.0 1.5 1.4 3.0 0: up, nearest, down */
    static const float f4_in[6] = {0.25f, 0.75f, 5.0f, 7.0f, -INFINITY, -0.1f};
    static const uint8_t f4[6] = {0x0, 0x2, 0x6, 0x7, 0xf, 0x8};
    static const uint16_t f16_nan[2] = {0xfe9d, 0x7e9d};
    static const uint64_t f64_nan[2] = {0xfff8000000000001u, 0x7ff8000000000001u};
    static const uint8_t f4_nan[6] = {0x0, 0x8, 0x0, 0x8, 0x0, 0x8};
    static const float e8_in[6] = {1.1f, 2.0f, 1.5f, 1.4f, 3.0f, 0.0f};
    static const uint8_t e8_up[6] = {128, 128, 128, 128, 129, 0}, e8_nearest[6] = {127, 128, 128, 127, 129, 0};
    static const uint8_t e8_down[6] = {127, 128, 127, 127, 128, 0};
    uint16_t h[6];
    uint8_t c[6], out[7], g[6];
    int8_t q[6];
    aotc_pad_params p;
    int bad = 0;
    aotc_cast_ref(6, AOTC_CAST_F32, AOTC_CAST_F16, f, h);
    aotc_cast_f8_ref(6, AOTC_CAST_F32, AOTC_CAST_F8E4M3FN, 1, f, c);
    aotc_cast_ref(6, AOTC_CAST_F32, AOTC_CAST_I8, f, q);
    bad |= memcmp(h, f16, sizeof h) != 0 || memcmp(c, e4m3, sizeof c) != 0 || memcmp(q, i8, sizeof q) != 0;
    aotc_cast_ref(6, AOTC_CAST_F32, AOTC_CAST_F4E2M1, f4_in, g);
    bad |= memcmp(g, f4, 6) != 0;
    /* float4 of a NaN: 0 with the other sign bit (ml_dtypes), from float16 and double NaNs of either sign
     * (the M4's soft-float double -> float once lost the sign in the reference) */
    aotc_cast_ref(2, AOTC_CAST_F16, AOTC_CAST_F4E2M1, f16_nan, g);
    aotc_cast(2, AOTC_CAST_F16, AOTC_CAST_F4E2M1, f16_nan, g + 2);
    aotc_cast_ref(2, AOTC_CAST_F64, AOTC_CAST_F4E2M1, f64_nan, g + 4);
    bad |= memcmp(g, f4_nan, 6) != 0;
    aotc_cast_e8m0_ref(6, AOTC_CAST_F32, 1, AOTC_ROUND_UP, e8_in, g);
    bad |= memcmp(g, e8_up, 6) != 0;
    aotc_cast_e8m0_ref(6, AOTC_CAST_F32, 1, AOTC_ROUND_NEAREST, e8_in, g);
    bad |= memcmp(g, e8_nearest, 6) != 0;
    aotc_cast_e8m0_ref(6, AOTC_CAST_F32, 1, AOTC_ROUND_DOWN, e8_in, g);
    bad |= memcmp(g, e8_down, 6) != 0;
    memset(&p, 0, sizeof p);
    p.rank = 1, p.elem_size = 1, p.mode = AOTC_PAD_REFLECT, p.out_shape[0] = 7, p.in_shape[0] = 3;
    p.pads_begin[0] = 2, p.src_strides[0] = 1;
    aotc_pad_ref(&p, pad_x, NULL, out);
    bad |= memcmp(out, pad_reflect, 7) != 0;
    p.mode = AOTC_PAD_WRAP, p.pads_begin[0] = 1;
    aotc_pad_ref(&p, pad_x, NULL, out);
    bad |= memcmp(out, pad_wrap, 7) != 0;
    if (bad) printf("the references: MISMATCH on a case worked out by hand\n");
    return bad;
}

/* S_STRIDED_T last: the shapes of the kinds before it come from the random draws they always had */
enum { S_COPY, S_STRIDED, S_TRANSPOSE, S_PAD, S_GATHER_I64, S_GATHER_I32, S_CAST, S_CAST_F8, S_CAST_E8M0,
       S_STRIDED_T, S_TRANSPOSE_IN_PLACE, S_COUNT };
static const char *const NAMES[S_COUNT] = {"aotc_copy", "aotc_strided_copy", "aotc_transpose2d", "aotc_pad",
                                           "aotc_gather_i64", "aotc_gather_i32", "aotc_cast", "aotc_cast_f8",
                                           "aotc_cast_e8m0", "aotc_strided_copy (transposing)",
                                           "aotc_transpose2d_in_place"};

/* A permute of floats that moves the last dim (shape.c's transposing path on AVX-512F): rank 2 to 4, the
 * last dim and another one d of 4 to 40 floats (others 1 to 3), d contiguous in the source (the others in a
 * random order, some with a step of 2 or backwards), the destination row-major; against the reference. */
static int check_strided_transpose(void) {
    aotc_strided_copy_params p;
    int32_t perm[AOTC_MAX_RANK], dims[AOTC_MAX_RANK], d, k;
    int64_t sstr[AOTC_MAX_RANK], dstr[AOTC_MAX_RANK], sn, dn;
    uint8_t *src, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.rank = rand_int(2, 4), p.elem_size = 4;
    d = rand_int(0, p.rank - 2);
    for (k = 0; k < p.rank; ++k) p.shape[k] = k == p.rank - 1 || k == d ? rand_int(4, 40) : rand_int(1, 3);
    permutation(perm, p.rank);
    for (k = 0; k < p.rank; ++k) /* d innermost in the source */
        if (perm[k] == d) perm[k] = perm[p.rank - 1], perm[p.rank - 1] = d;
    for (k = 0; k < p.rank; ++k) dims[k] = k == d ? p.shape[k] : p.shape[k] * 2; /* room for steps of 2 */
    sn = layout(dims, perm, p.rank, sstr);
    for (k = 0; k < p.rank; ++k) {
        const int step = k != d && chance(1, 3) ? 2 : 1, reverse = k != d && chance(1, 4);
        p.src_strides[k] = (int32_t)(sstr[k] * step * (reverse ? -1 : 1));
        if (reverse) p.src_offset += sstr[k] * (int64_t)(p.shape[k] - 1) * step;
    }
    for (k = 0; k < p.rank; ++k) perm[k] = k, dims[k] = p.shape[k];
    dn = layout(dims, perm, p.rank, dstr);
    for (k = 0; k < p.rank; ++k) p.dst_strides[k] = (int32_t)dstr[k];
    src = bytes((size_t)sn * 4), y = bytes((size_t)dn * 4), ref = bytes_copy(y, (size_t)dn * 4);
    aotc_strided_copy(&p, src, y);
    aotc_strided_copy_ref(&p, src, ref);
    bad = bytes_differ(NAMES[S_STRIDED_T], y, ref, (size_t)dn * 4);
    if (bad) {
        printf("  rank %d, src_offset %ld\n", (int)p.rank, (long)p.src_offset);
        print_dims("shape", p.shape, p.rank), print_dims("src_strides", p.src_strides, p.rank);
        print_dims("dst_strides", p.dst_strides, p.rank);
    }
    free(src), free(y), free(ref);
    return bad;
}

/* A C x H x W image of bytes turned H x W x C over itself (aotc_transpose2d_in_place, rows C, cols H W): C 1, 3,
 * 4 (the subtracting path) or up to 12 (the dividing one), H and W odd or even from 1 up, each cycle's least
 * index found here by following them all; against aotc_transpose2d_ref into another buffer. */
static int check_transpose_in_place(void) {
    static const int32_t channels[4] = {1, 3, 4, 0};
    aotc_transpose2d_params p;
    size_t n;
    uint8_t *src, *ref, *seen;
    uint32_t *leaders, m1, s;
    int32_t c = channels[rand_int(0, 3)], h = rand_int(1, 23), w = rand_int(1, 23), count = 0;
    int bad;
    if (c == 0) c = rand_int(2, 12);
    p.batch = 1, p.elem_size = 1, p.rows = c, p.cols = h * w;
    n = (size_t)c * h * w;
    m1 = (uint32_t)n - 1u;
    src = bytes(n), ref = bytes(n), seen = (uint8_t *)calloc(n, 1);
    leaders = (uint32_t *)malloc(n * sizeof(uint32_t));
    if (seen == NULL || leaders == NULL) exit(2);
    for (s = 1; s < m1; ++s) {
        uint32_t i = s, len = 0;
        if (seen[s]) continue;
        do i = (uint32_t)(((uint64_t)i * (uint64_t)c) % m1), seen[i] = 1, ++len; while (i != s);
        if (len > 1) leaders[count++] = s;
    }
    aotc_transpose2d_ref(&p, src, ref);
    aotc_transpose2d_in_place(&p, src, leaders, count);
    bad = bytes_differ(NAMES[S_TRANSPOSE_IN_PLACE], src, ref, n);
    if (bad) printf("  C %d, H %d, W %d (%d cycles)\n", (int)c, (int)h, (int)w, (int)count);
    free(src), free(ref), free(seen), free(leaders);
    return bad;
}

static int check(int kind) {
    switch (kind) {
    case S_COPY: return check_copy();
    case S_STRIDED: return check_strided_copy();
    case S_TRANSPOSE: return check_transpose2d();
    case S_PAD: return check_pad();
    case S_GATHER_I64: return check_gather(1);
    case S_GATHER_I32: return check_gather(0);
    case S_CAST: return check_cast(0, 0);
    case S_CAST_F8: return check_cast(1, 0);
    case S_STRIDED_T: return check_strided_transpose();
    case S_TRANSPOSE_IN_PLACE: return check_transpose_in_place();
    default: return check_cast(0, 1);
    }
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference(), kind;
    int32_t i;
    for (kind = 0; kind < S_COUNT; ++kind) {
        int bad = 0;
        /* (the cast runs 4 times as many: 23 x 23 pairs of types) */
        const int32_t count = kind == S_CAST ? 4 * shapes : shapes;
        for (i = 0; i < count && !bad; ++i) bad = check(kind);
        printf("%-34s %s (%d shapes)\n", NAMES[kind], bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
