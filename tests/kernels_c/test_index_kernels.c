/* The index kernels (aotc_index.h, index.c) against the references (index_ref.c) over random
 * shapes, bit for bit: Where with every input broadcast or not along each dim; ArgMax / ArgMin of
 * the six types with ties (select_last both ways) and Hardmax; Trilu and EyeLike with diagonals in
 * and out of the matrix, up to the int64 extremes (k is a model input); CumSum / CumProd of the four
 * types along every axis, out-of-range axes, exclusive and reverse, in place too (integers wrap);
 * OneHot with indices in and out of range (float ones fractional, NaN, infinite); Range of the five
 * types; Compress with conditions shorter and longer than the axis and counts other than the compiled
 * one; Unique of integers, floats (-0, NaN) and bfloat16, sorted or not, counts other than the compiled one;
 * GatherElements, ScatterElements (each reduction, duplicate indices), ScatterND and
 * GatherND with indices out of range and negative. Elements of 1 to 12 bytes where the op moves
 * bytes. Outputs start as random bytes, the same in both runs, and are compared whole, byte for byte.
 *
 *     test_index_kernels [seed] [shapes per entry point] */
#include "aotc_index.h"
#include "kernel_test.h"
#include "kernels_ref.h"

static int32_t elem_size(void) {
    static const int32_t sizes[8] = {1, 2, 4, 8, 4, 1, 3, 12};
    return sizes[rand_int(0, 7)];
}

static void print_dims(const char *what, const int32_t *v, int32_t n) {
    int32_t k;
    printf("  %s", what);
    for (k = 0; k < n; ++k) printf(" %d", (int)v[k]);
    printf("\n");
}

/* ---- typed values ---------------------------------------------------------------------------------- */

enum { T_F32, T_F64, T_I8, T_U8, T_I16, T_I32, T_I64 };
static const size_t T_SIZE[7] = {4, 8, 1, 1, 2, 4, 8};

/* n values of type t: half the time few distinct small ones (ties), else spread over the type */
static void *typed(int t, size_t n) {
    uint8_t *b = test_bytes(n * T_SIZE[t]);
    const int ties = chance(1, 2);
    size_t i;
    for (i = 0; i < n; ++i) {
        const int32_t small = rand_int(-3, 3);
        void *e = b + i * T_SIZE[t];
        switch (t) {
        case T_F32: { const float f = ties ? (float)small : rand_float() * 100.0f; memcpy(e, &f, 4); break; }
        case T_F64: { const double d = ties ? (double)small : (double)rand_float() * 100.0 + (double)rand_float() * 1e-9; memcpy(e, &d, 8); break; }
        case T_U8: if (ties) *(uint8_t *)e = (uint8_t)(small + 3); break;
        case T_I8: if (ties) *(int8_t *)e = (int8_t)small; break;
        case T_I16: if (ties) { const int16_t v = (int16_t)small; memcpy(e, &v, 2); } break;
        case T_I32: if (ties) { const int32_t v = small; memcpy(e, &v, 4); } break;
        default: if (ties) { const int64_t v = small; memcpy(e, &v, 8); } break;
        }
    }
    return b;
}

/* ---- Where --------------------------------------------------------------------------------------- */

static int check_where(void) {
    aotc_where_params p;
    int32_t dims[3][AOTC_MAX_RANK], k, in;
    int64_t n[3] = {1, 1, 1}, total = 1;
    uint8_t *c, *x, *z, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.rank = rand_int(1, 5), p.elem_size = elem_size();
    for (k = 0; k < p.rank; ++k) {
        p.shape[k] = rand_int(1, p.rank > 3 ? 4 : 9);
        total *= p.shape[k];
        for (in = 0; in < 3; ++in) dims[in][k] = chance(1, 3) ? 1 : p.shape[k];
    }
    for (k = p.rank - 1; k >= 0; --k) { /* row-major strides of each input's own dims, 0 where it is 1 */
        int32_t *st[3];
        st[0] = p.c_strides, st[1] = p.x_strides, st[2] = p.z_strides;
        for (in = 0; in < 3; ++in) {
            st[in][k] = dims[in][k] == 1 ? 0 : (int32_t)n[in];
            n[in] *= dims[in][k];
        }
    }
    c = test_bytes((size_t)n[0]), x = test_bytes((size_t)n[1] * p.elem_size), z = test_bytes((size_t)n[2] * p.elem_size);
    for (k = 0; k < (int32_t)n[0]; ++k) c[k] = (uint8_t)rand_int(0, 1);
    y = test_bytes((size_t)total * p.elem_size), ref = test_bytes_copy(y, (size_t)total * p.elem_size);
    aotc_where(&p, c, x, z, y);
    aotc_where_ref(&p, c, x, z, ref);
    bad = test_bytes_differ("aotc_where", y, ref, (size_t)total * p.elem_size);
    if (bad) {
        printf("  rank %d, elem_size %d\n", (int)p.rank, (int)p.elem_size);
        print_dims("shape", p.shape, p.rank), print_dims("c_strides", p.c_strides, p.rank);
        print_dims("x_strides", p.x_strides, p.rank), print_dims("z_strides", p.z_strides, p.rank);
    }
    free(c), free(x), free(z), free(y), free(ref);
    return bad;
}

/* ---- ArgMax / ArgMin / Hardmax -------------------------------------------------------------------- */

typedef void (*arg_fn)(const aotc_arg_params *, const void *, int64_t *);
typedef void (*hardmax_fn)(const aotc_arg_params *, const void *, void *);

static int check_arg(const char *name, int t, arg_fn f, arg_fn ref_f, hardmax_fn hf, hardmax_fn ref_hf) {
    aotc_arg_params p;
    size_t xn, yn, ysize;
    uint8_t *x, *y, *ref;
    int bad;
    p.outer = rand_int(1, 4), p.axis_dim = rand_int(1, 20), p.inner = rand_int(1, 5), p.select_last = chance(1, 2);
    if (hf != NULL) p.select_last = 0;
    xn = (size_t)p.outer * p.axis_dim * p.inner;
    yn = hf != NULL ? xn : (size_t)p.outer * p.inner, ysize = hf != NULL ? T_SIZE[t] : 8;
    x = (uint8_t *)typed(t, xn), y = test_bytes(yn * ysize), ref = test_bytes_copy(y, yn * ysize);
    if (hf != NULL) hf(&p, x, y), ref_hf(&p, x, ref);
    else f(&p, x, (int64_t *)(void *)y), ref_f(&p, x, (int64_t *)(void *)ref);
    bad = test_bytes_differ(name, y, ref, yn * ysize);
    if (bad) printf("  outer %d, axis_dim %d, inner %d, select_last %d\n", (int)p.outer, (int)p.axis_dim, (int)p.inner,
                    (int)p.select_last);
    free(x), free(y), free(ref);
    return bad;
}

/* (each kernel called through a wrapper of the one pointer type) */
#define ARG_CHECKS(SFX, T, TC)                                                                           \
    static void w_argmax_##SFX(const aotc_arg_params *p, const void *x, int64_t *y) { aotc_argmax_##SFX(p, (const T *)x, y); } \
    static void r_argmax_##SFX(const aotc_arg_params *p, const void *x, int64_t *y) { aotc_argmax_##SFX##_ref(p, (const T *)x, y); } \
    static void w_argmin_##SFX(const aotc_arg_params *p, const void *x, int64_t *y) { aotc_argmin_##SFX(p, (const T *)x, y); } \
    static void r_argmin_##SFX(const aotc_arg_params *p, const void *x, int64_t *y) { aotc_argmin_##SFX##_ref(p, (const T *)x, y); } \
    static int check_argmax_##SFX(void) { return check_arg("aotc_argmax_" #SFX, TC, w_argmax_##SFX, r_argmax_##SFX, NULL, NULL); } \
    static int check_argmin_##SFX(void) { return check_arg("aotc_argmin_" #SFX, TC, w_argmin_##SFX, r_argmin_##SFX, NULL, NULL); }
ARG_CHECKS(f32, float, T_F32)
ARG_CHECKS(f64, double, T_F64)
ARG_CHECKS(i8, int8_t, T_I8)
ARG_CHECKS(u8, uint8_t, T_U8)
ARG_CHECKS(i32, int32_t, T_I32)
ARG_CHECKS(i64, int64_t, T_I64)

#define HARDMAX_CHECK(SFX, T, TC)                                                                        \
    static void w_hardmax_##SFX(const aotc_arg_params *p, const void *x, void *y) { aotc_hardmax_##SFX(p, (const T *)x, (T *)y); } \
    static void r_hardmax_##SFX(const aotc_arg_params *p, const void *x, void *y) { aotc_hardmax_##SFX##_ref(p, (const T *)x, (T *)y); } \
    static int check_hardmax_##SFX(void) { return check_arg("aotc_hardmax_" #SFX, TC, NULL, NULL, w_hardmax_##SFX, r_hardmax_##SFX); }
HARDMAX_CHECK(f32, float, T_F32)
HARDMAX_CHECK(f64, double, T_F64)

/* ---- Trilu, EyeLike: the diagonal k in and out of the matrix, the int64 extremes ---------------------- */

static int64_t diagonal(int32_t rows, int32_t cols) {
    if (chance(1, 8)) return chance(1, 2) ? INT64_MAX - rand_int(0, 1) : INT64_MIN + rand_int(0, 1);
    if (chance(1, 8)) return (int64_t)rand_int(-1, 1) * 4294967296LL * rand_int(1, 1000);
    return rand_int(-rows - 2, cols + 2);
}

static int check_trilu(void) {
    aotc_trilu_params p;
    const int in_place = chance(1, 4);
    int64_t k;
    size_t n;
    uint8_t *x, *y, *ref;
    int bad;
    p.batch = rand_int(1, 3), p.rows = rand_int(1, 12), p.cols = rand_int(1, 12), p.elem_size = elem_size();
    p.upper = chance(1, 2);
    k = diagonal(p.rows, p.cols);
    n = (size_t)p.batch * p.rows * p.cols * p.elem_size;
    x = test_bytes(n), y = in_place ? test_bytes_copy(x, n) : test_bytes(n), ref = in_place ? test_bytes_copy(x, n) : test_bytes_copy(y, n);
    aotc_trilu(&p, k, in_place ? y : x, y);
    aotc_trilu_ref(&p, k, x, ref);
    bad = test_bytes_differ("aotc_trilu", y, ref, n);
    if (bad) printf("  batch %d, rows %d, cols %d, elem_size %d, upper %d, k %lld, in place %d\n", (int)p.batch,
                    (int)p.rows, (int)p.cols, (int)p.elem_size, (int)p.upper, (long long)k, in_place);
    free(x), free(y), free(ref);
    return bad;
}

/* a condition shorter or longer than the axis, nonzero bytes other than 1 true; kept the true count or,
 * one case in 6, another (the shape error: both return it and write nothing) */
static int check_compress(void) {
    aotc_compress_params p;
    int32_t c, trues = 0, rc, rc_ref;
    size_t n, m;
    uint8_t *cond, *x, *y, *ref;
    int bad;
    p.outer = rand_int(1, 4), p.axis_dim = rand_int(1, 9), p.inner = rand_int(1, 5), p.elem_size = elem_size();
    p.cond_len = rand_int(1, p.axis_dim + 3);
    cond = test_bytes((size_t)p.cond_len);
    for (c = 0; c < p.cond_len; ++c) {
        cond[c] = chance(1, 2) ? 0 : (uint8_t)rand_int(1, 255);
        if (c < p.axis_dim) trues += cond[c] != 0;
    }
    p.kept = chance(1, 6) ? trues + rand_int(1, 2) : trues;
    n = (size_t)p.outer * p.axis_dim * p.inner * p.elem_size;
    m = (size_t)p.outer * (p.kept ? p.kept : 1) * p.inner * p.elem_size;
    x = test_bytes(n), y = test_bytes(m), ref = test_bytes_copy(y, m);
    rc = aotc_compress(&p, cond, x, y);
    rc_ref = aotc_compress_ref(&p, cond, x, ref);
    bad = rc != rc_ref || test_bytes_differ("aotc_compress", y, ref, m);
    if (bad) printf("  outer %d, axis %d, inner %d, elem_size %d, cond_len %d, kept %d (true %d): rc %d, ref %d\n",
                    (int)p.outer, (int)p.axis_dim, (int)p.inner, (int)p.elem_size, (int)p.cond_len, (int)p.kept,
                    (int)trues, (int)rc, (int)rc_ref);
    free(cond), free(x), free(y), free(ref);
    return bad;
}

/* Unique of each kind and size, few distinct values (floats with -0, 0 and NaN; bfloat16 ones), with and without
 * sorting, optional outputs left out; kept the distinct count or, one case in 6, another (both return the shape
 * error and write nothing); one case in 3 bounded, kept a capacity at or above the count (the count returned)
 * or, one in 6 of those, below it (the shape error) */
static int check_unique(void) {
    static const int32_t kinds[7][2] = {{AOTC_UNIQUE_INT, 1}, {AOTC_UNIQUE_INT, 2}, {AOTC_UNIQUE_INT, 8},
                                        {AOTC_UNIQUE_UINT, 4}, {AOTC_UNIQUE_FLOAT, 4}, {AOTC_UNIQUE_FLOAT, 8},
                                        {AOTC_UNIQUE_BF16, 2}};
    static const float values[6] = {1.5f, -2.0f, 0.0f, -0.0f, 3.0f, 0.0f};
    aotc_unique_params p, q;
    const int which = rand_int(0, 6), outs = rand_int(0, 7);
    int64_t *sc, *ix, *ixr, *iv, *ivr, *ct, *ctr, e, n, m;
    uint8_t *x, *y, *yr;
    int32_t rc, rc_ref, distinct = 0;
    int bad;
    p.outer = rand_int(1, 3), p.axis_dim = rand_int(1, 12), p.inner = rand_int(1, 3);
    p.kind = kinds[which][0], p.elem_size = kinds[which][1], p.sorted = chance(1, 2), p.kept = 0, p.bounded = 0;
    n = (int64_t)p.outer * p.axis_dim * p.inner;
    x = test_bytes((size_t)(n * p.elem_size));
    for (e = 0; e < n; ++e) {
        const int32_t r = rand_int(0, 6);
        uint8_t *at = x + e * p.elem_size;
        if (p.kind == AOTC_UNIQUE_FLOAT && p.elem_size == 4) {
            const float f = r == 6 ? (float)NAN : values[r];
            memcpy(at, &f, 4);
        } else if (p.kind == AOTC_UNIQUE_FLOAT) {
            const double d = r == 6 ? (double)NAN : (double)values[r];
            memcpy(at, &d, 8);
        } else if (p.kind == AOTC_UNIQUE_BF16) {
            const float f = r == 6 ? (float)NAN : values[r];
            uint32_t bits;
            uint16_t h;
            memcpy(&bits, &f, 4);
            h = (uint16_t)(bits >> 16);
            memcpy(at, &h, 2);
        } else {
            const int64_t v = chance(1, 8) ? -(int64_t)r : r;
            memcpy(at, &v, (size_t)p.elem_size); /* little-endian: the low bytes */
        }
    }
    q = p; /* the distinct count, from the reference's refusal of every other */
    y = test_bytes((size_t)(n * p.elem_size));
    for (q.kept = 0; q.kept <= p.axis_dim && aotc_unique_ref(&q, x, y, NULL, NULL, NULL) != 0; ++q.kept) {
    }
    distinct = q.kept;
    free(y);
    p.kept = chance(1, 6) ? distinct + (distinct > 1 && chance(1, 2) ? -1 : 1) : distinct;
    if (chance(1, 3)) p.bounded = 1, p.kept = chance(1, 6) ? distinct - 1 : distinct + rand_int(0, 3);
    m = (int64_t)p.outer * (p.kept > 0 ? p.kept : 1) * p.inner * p.elem_size;
    y = test_bytes((size_t)m), yr = test_bytes_copy(y, (size_t)m);
    ix = (int64_t *)(void *)test_bytes((size_t)p.axis_dim * 8), ixr = (int64_t *)(void *)test_bytes_copy(ix, (size_t)p.axis_dim * 8);
    iv = (int64_t *)(void *)test_bytes((size_t)p.axis_dim * 8), ivr = (int64_t *)(void *)test_bytes_copy(iv, (size_t)p.axis_dim * 8);
    ct = (int64_t *)(void *)test_bytes((size_t)p.axis_dim * 8), ctr = (int64_t *)(void *)test_bytes_copy(ct, (size_t)p.axis_dim * 8);
    sc = (int64_t *)(void *)test_bytes((size_t)p.axis_dim * 32);
    rc = aotc_unique(&p, x, y, outs & 1 ? ix : NULL, outs & 2 ? iv : NULL, outs & 4 ? ct : NULL, sc);
    rc_ref = aotc_unique_ref(&p, x, yr, outs & 1 ? ixr : NULL, outs & 2 ? ivr : NULL, outs & 4 ? ctr : NULL);
    bad = rc != rc_ref || test_bytes_differ("aotc_unique", y, yr, (size_t)m) ||
          test_bytes_differ("aotc_unique indices", ix, ixr, (size_t)p.axis_dim * 8) ||
          test_bytes_differ("aotc_unique inverse", iv, ivr, (size_t)p.axis_dim * 8) ||
          test_bytes_differ("aotc_unique counts", ct, ctr, (size_t)p.axis_dim * 8);
    if (bad) printf("  outer %d, axis %d, inner %d, kind %d, size %d, sorted %d, kept %d (distinct %d): rc %d, ref %d\n",
                    (int)p.outer, (int)p.axis_dim, (int)p.inner, (int)p.kind, (int)p.elem_size, (int)p.sorted,
                    (int)p.kept, (int)distinct, (int)rc, (int)rc_ref);
    free(x), free(y), free(yr), free(ix), free(ixr), free(iv), free(ivr), free(ct), free(ctr), free(sc);
    return bad;
}

static int check_eye(void) {
    const int32_t rows = rand_int(0, 10), cols = rand_int(0, 10), size = elem_size();
    const int64_t k = diagonal(rows, cols);
    const size_t n = (size_t)rows * cols * size;
    uint8_t *one = test_bytes((size_t)size), *y = test_bytes(n), *ref = test_bytes_copy(y, n);
    int bad;
    aotc_eye(rows, cols, k, size, one, y);
    aotc_eye_ref(rows, cols, k, size, one, ref);
    bad = test_bytes_differ("aotc_eye", y, ref, n);
    if (bad) printf("  rows %d, cols %d, k %lld, elem_size %d\n", (int)rows, (int)cols, (long long)k, (int)size);
    free(one), free(y), free(ref);
    return bad;
}

/* ---- CumSum / CumProd ------------------------------------------------------------------------------- */

typedef void (*cumulate_fn)(const aotc_cumsum_params *, int64_t, const void *, void *);

static int check_cumulate(const char *name, int t, int prod, cumulate_fn f, cumulate_fn ref_f) {
    aotc_cumsum_params p;
    const int in_place = chance(1, 4);
    int64_t axis, total = 1;
    int32_t d;
    size_t nb;
    uint8_t *x, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.rank = rand_int(1, 4), p.exclusive = chance(1, 2), p.reverse = chance(1, 2);
    for (d = 0; d < p.rank; ++d) total *= p.shape[d] = rand_int(1, p.rank > 2 ? 5 : 12);
    axis = chance(1, 10) ? (chance(1, 2) ? p.rank + rand_int(0, 2) : -p.rank - rand_int(1, 3)) : rand_int(-p.rank, p.rank - 1);
    nb = (size_t)total * T_SIZE[t];
    x = test_bytes(nb);
    if (t == T_F32 || t == T_F64) { /* values of every size; products near 1 so that most stay finite */
        int64_t i;
        for (i = 0; i < total; ++i) {
            const double v = prod ? 1.0 + (double)rand_float() * 0.5 : (double)rand_float() * 1000.0;
            if (t == T_F32) { const float f = (float)v; memcpy(x + i * 4, &f, 4); }
            else memcpy(x + i * 8, &v, 8);
        }
    }
    y = in_place ? test_bytes_copy(x, nb) : test_bytes(nb), ref = test_bytes_copy(y, nb);
    f(&p, axis, in_place ? y : x, y);
    ref_f(&p, axis, x, ref);
    bad = test_bytes_differ(name, y, ref, nb);
    if (bad) {
        printf("  rank %d, axis %lld, exclusive %d, reverse %d, in place %d\n", (int)p.rank, (long long)axis,
               (int)p.exclusive, (int)p.reverse, in_place);
        print_dims("shape", p.shape, p.rank);
    }
    free(x), free(y), free(ref);
    return bad;
}

#define CUMULATE_CHECKS(SFX, TC)                                                                       \
    static void w_cumsum_##SFX(const aotc_cumsum_params *p, int64_t a, const void *x, void *y) { aotc_cumsum_##SFX(p, a, x, y); } \
    static void r_cumsum_##SFX(const aotc_cumsum_params *p, int64_t a, const void *x, void *y) { aotc_cumsum_##SFX##_ref(p, a, x, y); } \
    static void w_cumprod_##SFX(const aotc_cumsum_params *p, int64_t a, const void *x, void *y) { aotc_cumprod_##SFX(p, a, x, y); } \
    static void r_cumprod_##SFX(const aotc_cumsum_params *p, int64_t a, const void *x, void *y) { aotc_cumprod_##SFX##_ref(p, a, x, y); } \
    static int check_cumsum_##SFX(void) { return check_cumulate("aotc_cumsum_" #SFX, TC, 0, w_cumsum_##SFX, r_cumsum_##SFX); } \
    static int check_cumprod_##SFX(void) { return check_cumulate("aotc_cumprod_" #SFX, TC, 1, w_cumprod_##SFX, r_cumprod_##SFX); }
CUMULATE_CHECKS(f32, T_F32)
CUMULATE_CHECKS(f64, T_F64)
CUMULATE_CHECKS(i32, T_I32)
CUMULATE_CHECKS(i64, T_I64)

/* ---- OneHot ------------------------------------------------------------------------------------------ */

static int check_one_hot(int kind) { /* 0: int64 indices, 1: int32, 2: float */
    static const char *const names[3] = {"aotc_one_hot_i64", "aotc_one_hot_i32", "aotc_one_hot_f32"};
    aotc_one_hot_params p;
    size_t ni, yn, i;
    uint8_t *values, *y, *ref;
    void *ind;
    int bad;
    p.outer = rand_int(1, 4), p.depth = rand_int(1, 10), p.inner = rand_int(1, 4), p.elem_size = elem_size();
    ni = (size_t)(p.outer * p.inner), yn = (size_t)(p.outer * p.depth * p.inner * p.elem_size);
    ind = test_bytes(ni * (kind == 0 ? 8 : 4)), values = test_bytes(2 * (size_t)p.elem_size), y = test_bytes(yn), ref = test_bytes_copy(y, yn);
    for (i = 0; i < ni; ++i) {
        const int32_t v = rand_int(-(int32_t)p.depth - 2, (int32_t)p.depth + 1);
        if (kind == 0) ((int64_t *)ind)[i] = chance(1, 10) ? (chance(1, 2) ? INT64_MIN : INT64_MAX) : v;
        else if (kind == 1) ((int32_t *)ind)[i] = chance(1, 10) ? (chance(1, 2) ? INT32_MIN : INT32_MAX) : v;
        else {
            static const float odd[5] = {NAN, INFINITY, -INFINITY, 1e19f, -1e19f};
            ((float *)ind)[i] = chance(1, 8) ? odd[rand_int(0, 4)] : (float)v + (chance(1, 2) ? rand_float() : 0.0f);
        }
    }
    if (kind == 0) aotc_one_hot_i64(&p, (const int64_t *)ind, values, y), aotc_one_hot_i64_ref(&p, (const int64_t *)ind, values, ref);
    else if (kind == 1) aotc_one_hot_i32(&p, (const int32_t *)ind, values, y), aotc_one_hot_i32_ref(&p, (const int32_t *)ind, values, ref);
    else aotc_one_hot_f32(&p, (const float *)ind, values, y), aotc_one_hot_f32_ref(&p, (const float *)ind, values, ref);
    bad = test_bytes_differ(names[kind], y, ref, yn);
    if (bad) printf("  outer %lld, depth %lld, inner %lld, elem_size %d\n", (long long)p.outer, (long long)p.depth,
                    (long long)p.inner, (int)p.elem_size);
    free(ind), free(values), free(y), free(ref);
    return bad;
}

static int check_one_hot_i64(void) { return check_one_hot(0); }
static int check_one_hot_i32(void) { return check_one_hot(1); }
static int check_one_hot_f32(void) { return check_one_hot(2); }

/* ---- Range ---------------------------------------------------------------------------------------------- */

#define RANGE_CHECK(SFX, T, TC)                                                                          \
    static int check_range_##SFX(void) {                                                                \
        const int64_t n = rand_int(0, 60);                                                              \
        T *start = (T *)typed(TC, 1), *delta = (T *)typed(TC, 1);                                        \
        uint8_t *y = test_bytes((size_t)n * sizeof(T)), *ref = test_bytes_copy(y, (size_t)n * sizeof(T));          \
        int bad;                                                                                        \
        aotc_range_##SFX(n, start, delta, (T *)(void *)y);                                              \
        aotc_range_##SFX##_ref(n, start, delta, (T *)(void *)ref);                                      \
        bad = test_bytes_differ("aotc_range_" #SFX, y, ref, (size_t)n * sizeof(T));                         \
        if (bad) printf("  n %lld\n", (long long)n);                                                    \
        free(start), free(delta), free(y), free(ref);                                                   \
        return bad;                                                                                     \
    }
RANGE_CHECK(f32, float, T_F32)
RANGE_CHECK(f64, double, T_F64)
RANGE_CHECK(i16, int16_t, T_I16)
RANGE_CHECK(i32, int32_t, T_I32)
RANGE_CHECK(i64, int64_t, T_I64)

/* ---- GatherElements / ScatterElements ----------------------------------------------------------------------- */

/* data dims d (row-major strides), indices' shape (at most d off the axis); indices in and out of range */
static void draw_elements(aotc_gather_elements_params *p, int32_t *d, int64_t *dn, int64_t *in, int scatter) {
    int32_t k;
    memset(p, 0, sizeof *p);
    p->rank = rand_int(1, 4), p->elem_size = scatter && chance(1, 2) ? 4 : elem_size();
    p->axis = rand_int(0, p->rank - 1);
    *dn = 1, *in = 1;
    for (k = p->rank - 1; k >= 0; --k) {
        d[k] = rand_int(1, p->rank > 2 ? 5 : 9);
        p->data_strides[k] = *dn;
        *dn *= d[k];
        p->shape[k] = k == p->axis ? rand_int(1, scatter ? d[k] : 7) : rand_int(1, d[k]);
        *in *= p->shape[k];
    }
    p->axis_dim = d[p->axis];
}

static int64_t elements_index(int32_t axis_dim) {
    return chance(1, 8) ? rand_int(-axis_dim - 3, axis_dim + 2) : rand_int(-axis_dim, axis_dim - 1);
}

static int check_gather_elements(int wide) {
    aotc_gather_elements_params p;
    int32_t d[AOTC_MAX_RANK];
    int64_t dn, in, i;
    uint8_t *data, *y, *ref;
    void *ind;
    int bad;
    draw_elements(&p, d, &dn, &in, 0);
    data = test_bytes((size_t)(dn * p.elem_size)), y = test_bytes((size_t)(in * p.elem_size)), ref = test_bytes_copy(y, (size_t)(in * p.elem_size));
    ind = test_bytes((size_t)in * (wide ? 8 : 4));
    for (i = 0; i < in; ++i) {
        if (wide) ((int64_t *)ind)[i] = elements_index(p.axis_dim);
        else ((int32_t *)ind)[i] = (int32_t)elements_index(p.axis_dim);
    }
    if (wide) aotc_gather_elements_i64(&p, data, (const int64_t *)ind, y), aotc_gather_elements_i64_ref(&p, data, (const int64_t *)ind, ref);
    else aotc_gather_elements_i32(&p, data, (const int32_t *)ind, y), aotc_gather_elements_i32_ref(&p, data, (const int32_t *)ind, ref);
    bad = test_bytes_differ(wide ? "aotc_gather_elements_i64" : "aotc_gather_elements_i32", y, ref, (size_t)(in * p.elem_size));
    if (bad) printf("  rank %d, axis %d, elem_size %d\n", (int)p.rank, (int)p.axis, (int)p.elem_size),
             print_dims("data", d, p.rank), print_dims("indices", p.shape, p.rank);
    free(data), free(y), free(ref), free(ind);
    return bad;
}

/* the element kind and reduction of a scatter of elem_size bytes: any kind that size can be (BITS only
 * copied), then any reduction for it */
static void draw_scatter(int32_t elem_size, aotc_scatter_kind *kind, aotc_scatter_reduction *red) {
    const int is_int = elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8;
    const int is_float = elem_size == 4 || elem_size == 8;
    *kind = AOTC_SCATTER_BITS;
    if (is_int || is_float) {
        do *kind = (aotc_scatter_kind)rand_int(0, 4);
        while ((*kind == AOTC_SCATTER_FLOAT && !is_float) || ((*kind == AOTC_SCATTER_INT || *kind == AOTC_SCATTER_UINT)
                                                              && !is_int) || (*kind == AOTC_SCATTER_HALF && elem_size != 2));
    }
    *red = *kind == AOTC_SCATTER_BITS ? AOTC_SCATTER_NONE : (aotc_scatter_reduction)rand_int(0, 4);
}

/* n elements for a scatter: floats (or doubles) of moderate size for FLOAT, which random bytes could make
 * NaNs of; float16 of any finite value for HALF (products and sums past 65504 become infinities, and the
 * subnormals round); any bytes otherwise (integers anywhere in their range, so that add and mul wrap) */
static uint8_t *scatter_bytes(size_t n, int32_t elem_size, aotc_scatter_kind kind) {
    uint8_t *b = test_bytes(n * (size_t)elem_size);
    size_t i;
    for (i = 0; kind == AOTC_SCATTER_HALF && i < n; ++i)
        if ((b[2 * i + 1] & 0x7cu) == 0x7cu) b[2 * i + 1] ^= 0x40u; /* exponent 31 (inf, NaN) to 15 */
    for (i = 0; kind == AOTC_SCATTER_FLOAT && i < n; ++i) {
        const float f = rand_float() * 4.0f;
        const double d = (double)rand_float() * 4.0;
        if (elem_size == 4) memcpy(b + i * 4, &f, 4);
        else memcpy(b + i * 8, &d, 8);
    }
    return b;
}

static int check_scatter_elements(int wide) {
    aotc_gather_elements_params p;
    int32_t d[AOTC_MAX_RANK];
    int64_t dn, in, i;
    const int in_place = chance(1, 4);
    aotc_scatter_reduction red;
    aotc_scatter_kind kind;
    uint8_t *data, *upd, *y, *ref;
    void *ind;
    size_t db;
    int bad;
    draw_elements(&p, d, &dn, &in, 1);
    draw_scatter(p.elem_size, &kind, &red);
    db = (size_t)(dn * p.elem_size);
    data = scatter_bytes((size_t)dn, p.elem_size, kind);
    upd = scatter_bytes((size_t)in, p.elem_size, kind);
    y = in_place ? test_bytes_copy(data, db) : test_bytes(db), ref = test_bytes(db);
    ind = test_bytes((size_t)in * (wide ? 8 : 4));
    for (i = 0; i < in; ++i) {
        if (wide) ((int64_t *)ind)[i] = elements_index(p.axis_dim);
        else ((int32_t *)ind)[i] = (int32_t)elements_index(p.axis_dim);
    }
    if (wide) {
        aotc_scatter_elements_i64(&p, red, kind, db, in_place ? y : data, (const int64_t *)ind, upd, y);
        aotc_scatter_elements_i64_ref(&p, red, kind, db, data, (const int64_t *)ind, upd, ref);
    } else {
        aotc_scatter_elements_i32(&p, red, kind, db, in_place ? y : data, (const int32_t *)ind, upd, y);
        aotc_scatter_elements_i32_ref(&p, red, kind, db, data, (const int32_t *)ind, upd, ref);
    }
    bad = test_bytes_differ(wide ? "aotc_scatter_elements_i64" : "aotc_scatter_elements_i32", y, ref, db);
    if (bad) printf("  rank %d, axis %d, elem_size %d, kind %d, reduction %d, in place %d\n", (int)p.rank,
                    (int)p.axis, (int)p.elem_size, (int)kind, (int)red, in_place),
             print_dims("data", d, p.rank), print_dims("indices", p.shape, p.rank);
    free(data), free(upd), free(y), free(ref), free(ind);
    return bad;
}

static int check_gather_elements_i64(void) { return check_gather_elements(1); }
static int check_gather_elements_i32(void) { return check_gather_elements(0); }
static int check_scatter_elements_i64(void) { return check_scatter_elements(1); }
static int check_scatter_elements_i32(void) { return check_scatter_elements(0); }

/* ---- ScatterND / GatherND ----------------------------------------------------------------------------------- */

/* k indexed dims of a random rank-r tensor (row-major strides), slice_elems of the rest; returns the elements */
static int64_t draw_nd(int32_t *k, int64_t *dims, int64_t *strides, int64_t *slice) {
    const int32_t r = rand_int(1, 4);
    int32_t j;
    int64_t total = 1, d[AOTC_MAX_RANK];
    *k = rand_int(1, r);
    for (j = r - 1; j >= 0; --j) {
        d[j] = rand_int(1, r > 2 ? 5 : 8);
        if (j < *k) strides[j] = total, dims[j] = d[j];
        total *= d[j];
    }
    *slice = 1;
    for (j = *k; j < r; ++j) *slice *= d[j];
    return total;
}

static void nd_indices(int64_t *ind, int64_t tuples, int32_t k, const int64_t *dims) {
    int64_t t;
    int32_t j;
    for (t = 0; t < tuples; ++t) {
        for (j = 0; j < k; ++j) {
            const int32_t dj = (int32_t)dims[j];
            ind[t * k + j] = chance(1, 10) ? rand_int(-dj - 2, dj + 1) : rand_int(-dj, dj - 1);
        }
    }
}

static int check_scatter_nd(void) {
    aotc_scatter_nd_params p;
    const int in_place = chance(1, 4);
    int64_t dn;
    size_t db, ub;
    aotc_scatter_reduction red;
    aotc_scatter_kind kind;
    uint8_t *data, *upd, *y, *ref;
    int64_t *ind;
    int bad;
    memset(&p, 0, sizeof p);
    dn = draw_nd(&p.k, p.dims, p.strides, &p.slice_elems);
    p.n = rand_int(1, 8), p.elem_size = chance(1, 2) ? 4 : elem_size();
    draw_scatter(p.elem_size, &kind, &red);
    db = (size_t)(dn * p.elem_size), ub = (size_t)(p.n * p.slice_elems * p.elem_size);
    data = scatter_bytes((size_t)dn, p.elem_size, kind);
    upd = scatter_bytes(ub / (size_t)p.elem_size, p.elem_size, kind);
    y = in_place ? test_bytes_copy(data, db) : test_bytes(db), ref = test_bytes(db);
    ind = (int64_t *)(void *)test_bytes((size_t)(p.n * p.k) * 8);
    nd_indices(ind, p.n, p.k, p.dims);
    aotc_scatter_nd(&p, red, kind, db, in_place ? y : data, ind, upd, y);
    aotc_scatter_nd_ref(&p, red, kind, db, data, ind, upd, ref);
    bad = test_bytes_differ("aotc_scatter_nd", y, ref, db);
    if (bad) printf("  n %lld, k %d, slice_elems %lld, elem_size %d, kind %d, reduction %d, in place %d\n",
                    (long long)p.n, (int)p.k, (long long)p.slice_elems, (int)p.elem_size, (int)kind, (int)red,
                    in_place);
    free(data), free(upd), free(y), free(ref), free(ind);
    return bad;
}

static int check_gather_nd(void) {
    aotc_gather_nd_params p;
    size_t db, yb;
    uint8_t *data, *y, *ref;
    int64_t *ind;
    int bad;
    memset(&p, 0, sizeof p);
    p.batch_elems = draw_nd(&p.k, p.dims, p.strides, &p.slice_elems);
    p.batch = rand_int(1, 3), p.n = rand_int(1, 8), p.elem_size = elem_size();
    db = (size_t)(p.batch * p.batch_elems * p.elem_size), yb = (size_t)(p.batch * p.n * p.slice_elems * p.elem_size);
    data = test_bytes(db), y = test_bytes(yb), ref = test_bytes_copy(y, yb);
    ind = (int64_t *)(void *)test_bytes((size_t)(p.batch * p.n * p.k) * 8);
    nd_indices(ind, p.batch * p.n, p.k, p.dims);
    aotc_gather_nd(&p, data, ind, y);
    aotc_gather_nd_ref(&p, data, ind, ref);
    bad = test_bytes_differ("aotc_gather_nd", y, ref, yb);
    if (bad) printf("  batch %lld, n %lld, k %d, slice_elems %lld, elem_size %d\n", (long long)p.batch, (long long)p.n,
                    (int)p.k, (long long)p.slice_elems, (int)p.elem_size);
    free(data), free(y), free(ref), free(ind);
    return bad;
}

/* ---- the references on cases worked out by hand -------------------------------------------------------------- */

static int check_reference(void) {
    static const float x[6] = {1, 3, 3, -2, 5, 5}; /* [2][3] */
    static const int64_t argmax_first[2] = {1, 1}, argmax_last[2] = {2, 2}, argmin[2] = {0, 0};
    static const int32_t cum_x[4] = {1, 2, 3, 4}, cum_rev_excl[4] = {9, 7, 4, 0};
    aotc_arg_params a = {2, 3, 1, 0};
    aotc_cumsum_params c;
    int64_t y[2];
    int32_t cy[4];
    int bad = 0;
    aotc_argmax_f32_ref(&a, x, y);
    bad |= memcmp(y, argmax_first, sizeof y) != 0;
    a.select_last = 1;
    aotc_argmax_f32_ref(&a, x, y);
    bad |= memcmp(y, argmax_last, sizeof y) != 0;
    aotc_argmin_f32_ref(&a, x, y);
    bad |= memcmp(y, argmin, sizeof y) != 0;
    memset(&c, 0, sizeof c);
    c.rank = 1, c.shape[0] = 4, c.exclusive = 1, c.reverse = 1;
    aotc_cumsum_i32_ref(&c, 0, cum_x, cy);
    bad |= memcmp(cy, cum_rev_excl, sizeof cy) != 0;
    if (bad) printf("the references: MISMATCH on a case worked out by hand\n");
    return bad;
}

typedef struct {
    const char *name;
    int (*check)(void);
} entry;

static const entry ENTRIES[] = {
    {"aotc_where", check_where},
    {"aotc_argmax_f32", check_argmax_f32}, {"aotc_argmin_f32", check_argmin_f32},
    {"aotc_argmax_f64", check_argmax_f64}, {"aotc_argmin_f64", check_argmin_f64},
    {"aotc_argmax_i8", check_argmax_i8}, {"aotc_argmin_i8", check_argmin_i8},
    {"aotc_argmax_u8", check_argmax_u8}, {"aotc_argmin_u8", check_argmin_u8},
    {"aotc_argmax_i32", check_argmax_i32}, {"aotc_argmin_i32", check_argmin_i32},
    {"aotc_argmax_i64", check_argmax_i64}, {"aotc_argmin_i64", check_argmin_i64},
    {"aotc_trilu", check_trilu},
    {"aotc_compress", check_compress}, {"aotc_unique", check_unique},
    {"aotc_cumsum_f32", check_cumsum_f32}, {"aotc_cumsum_f64", check_cumsum_f64},
    {"aotc_cumsum_i32", check_cumsum_i32}, {"aotc_cumsum_i64", check_cumsum_i64},
    {"aotc_cumprod_f32", check_cumprod_f32}, {"aotc_cumprod_f64", check_cumprod_f64},
    {"aotc_cumprod_i32", check_cumprod_i32}, {"aotc_cumprod_i64", check_cumprod_i64},
    {"aotc_hardmax_f32", check_hardmax_f32}, {"aotc_hardmax_f64", check_hardmax_f64},
    {"aotc_eye", check_eye},
    {"aotc_one_hot_i64", check_one_hot_i64}, {"aotc_one_hot_i32", check_one_hot_i32},
    {"aotc_one_hot_f32", check_one_hot_f32},
    {"aotc_range_f32", check_range_f32}, {"aotc_range_f64", check_range_f64}, {"aotc_range_i16", check_range_i16},
    {"aotc_range_i32", check_range_i32}, {"aotc_range_i64", check_range_i64},
    {"aotc_gather_elements_i64", check_gather_elements_i64}, {"aotc_gather_elements_i32", check_gather_elements_i32},
    {"aotc_scatter_elements_i64", check_scatter_elements_i64},
    {"aotc_scatter_elements_i32", check_scatter_elements_i32},
    {"aotc_scatter_nd", check_scatter_nd}, {"aotc_gather_nd", check_gather_nd},
};

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference();
    size_t e;
    int32_t i;
    for (e = 0; e < sizeof ENTRIES / sizeof ENTRIES[0]; ++e) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = ENTRIES[e].check();
        printf("%-34s %s (%d shapes)\n", ENTRIES[e].name, bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
