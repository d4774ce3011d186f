/* Index arithmetic kernels (aotc_index.h): portable C99, no allocation, no globals; one kernel per
 * op (and per dtype where the op computes), a plain loop; tests/kernels_c/test_index_kernels.c checks each
 * against index_ref.c. */
#include "aotc_index.h"

#include <string.h>

/* ---- Where ------------------------------------------------------------------ */
void aotc_where(const aotc_where_params *p, const uint8_t *cond, const void *x, const void *z, void *y) {
    const uint8_t *xs = (const uint8_t *)x, *zs = (const uint8_t *)z;
    uint8_t *out = (uint8_t *)y;
    const size_t size = (size_t)p->elem_size;
    int32_t idx[AOTC_MAX_RANK] = {0};
    int64_t co = 0, xo = 0, zo = 0, total = 1, i;
    int32_t k;

    for (k = 0; k < p->rank; ++k) total *= p->shape[k];
    for (i = 0; i < total; ++i) {
        memcpy(out + i * (int64_t)size, cond[co] ? xs + xo * (int64_t)size : zs + zo * (int64_t)size, size);
        for (k = p->rank - 1; k >= 0; --k) { /* odometer */
            co += p->c_strides[k];
            xo += p->x_strides[k];
            zo += p->z_strides[k];
            if (++idx[k] < p->shape[k]) break;
            co -= (int64_t)p->c_strides[k] * p->shape[k];
            xo -= (int64_t)p->x_strides[k] * p->shape[k];
            zo -= (int64_t)p->z_strides[k] * p->shape[k];
            idx[k] = 0;
        }
    }
}

/* ---- ArgMax / ArgMin ------------------------------------------------------------
 * BETTER(a, b): a replaces the best b; ties replace it only with select_last. */
#define AOTC_ARG(NAME, SFX, T, BETTER)                                                  \
    void aotc_##NAME##_##SFX(const aotc_arg_params *p, const T *x, int64_t *y) {      \
        int32_t o, j, a;                                                              \
        for (o = 0; o < p->outer; ++o) {                                              \
            const T *xo = x + (int64_t)o * p->axis_dim * p->inner;                    \
            for (j = 0; j < p->inner; ++j) {                                          \
                T best = xo[j];                                                       \
                int64_t at = 0;                                                       \
                for (a = 1; a < p->axis_dim; ++a) {                                   \
                    const T v = xo[(int64_t)a * p->inner + j];                        \
                    if (BETTER(v, best) || (p->select_last && v == best)) {           \
                        best = v;                                                     \
                        at = a;                                                       \
                    }                                                                 \
                }                                                                     \
                y[(int64_t)o * p->inner + j] = at;                                    \
            }                                                                         \
        }                                                                             \
    }
#define AOTC_GT(a, b) ((a) > (b))
#define AOTC_LT(a, b) ((a) < (b))
#define AOTC_ARGS(SFX, T) AOTC_ARG(argmax, SFX, T, AOTC_GT) AOTC_ARG(argmin, SFX, T, AOTC_LT)
AOTC_ARGS(f32, float)
AOTC_ARGS(f64, double)
AOTC_ARGS(i8, int8_t)
AOTC_ARGS(u8, uint8_t)
AOTC_ARGS(i32, int32_t)
AOTC_ARGS(i64, int64_t)

/* ---- Trilu ------------------------------------------------------------------------ */
int32_t aotc_compress(const aotc_compress_params *p, const uint8_t *cond, const void *x, void *y) {
    const uint8_t *src = (const uint8_t *)x;
    uint8_t *dst = (uint8_t *)y;
    const int32_t n = p->cond_len < p->axis_dim ? p->cond_len : p->axis_dim;
    const size_t slice = (size_t)p->inner * (size_t)p->elem_size;
    int32_t i, o, kept = 0;

    for (i = 0; i < n; ++i) kept += cond[i] != 0;
    if (kept != p->kept) return AOTC_ERR_SHAPE;
    for (o = 0; o < p->outer; ++o) {
        const uint8_t *row = src + (size_t)o * (size_t)p->axis_dim * slice;
        for (i = 0; i < n; ++i) {
            if (!cond[i]) continue;
            memcpy(dst, row + (size_t)i * slice, slice);
            dst += slice;
        }
    }
    return 0;
}

void aotc_trilu(const aotc_trilu_params *p, int64_t k, const void *x, void *y) {
    const uint8_t *src = (const uint8_t *)x;
    uint8_t *dst = (uint8_t *)y;
    const int64_t size = p->elem_size, row = (int64_t)p->cols * size;
    /* k is a model input: clamped to [-rows - 1, cols + 1], beyond which every row splits as at its end, so
     * that i + k + 1 cannot overflow (k = INT64_MAX did) */
    const int64_t k_lo = -(int64_t)p->rows - 1, k_hi = (int64_t)p->cols + 1;
    const int64_t kk = k < k_lo ? k_lo : k > k_hi ? k_hi : k;
    int32_t b, i;

    for (b = 0; b < p->batch; ++b) {
        for (i = 0; i < p->rows; ++i) {
            const int64_t at = ((int64_t)b * p->rows + i) * row;
            /* upper keeps columns j >= i + k, lower keeps j <= i + k: one split point per row */
            int64_t split = p->upper ? (int64_t)i + kk : (int64_t)i + kk + 1;
            if (split < 0) split = 0;
            if (split > p->cols) split = p->cols;
            if (p->upper) {
                memset(dst + at, 0, (size_t)(split * size));
                if (src != dst) memmove(dst + at + split * size, src + at + split * size, (size_t)(row - split * size));
            } else {
                if (src != dst) memmove(dst + at, src + at, (size_t)(split * size));
                memset(dst + at + split * size, 0, (size_t)(row - split * size));
            }
        }
    }
}

/* ---- CumSum and CumProd ------------------------------------------------------------ */
#define AOTC_CUMULATE(NAME, SFX, T, OP, INIT)                                                 \
    void aotc_##NAME##_##SFX(const aotc_cumsum_params *p, int64_t axis, const T *x, T *y) {  \
        int64_t outer = 1, inner = 1, n, o, j, a;                                             \
        int32_t d;                                                                            \
        if (axis < 0) axis += p->rank;                                                        \
        if (axis < 0 || axis >= p->rank) { /* not a valid axis: nothing to sum along */       \
            for (d = 0, n = 1; d < p->rank; ++d) n *= p->shape[d];                            \
            if (x != y) memmove(y, x, (size_t)n * sizeof(T));                                 \
            return;                                                                           \
        }                                                                                     \
        for (d = 0; d < axis; ++d) outer *= p->shape[d];                                      \
        for (d = (int32_t)axis + 1; d < p->rank; ++d) inner *= p->shape[d];                   \
        n = p->shape[axis];                                                                   \
        for (o = 0; o < outer; ++o) {                                                         \
            for (j = 0; j < inner; ++j) {                                                     \
                T acc = INIT;                                                                 \
                const int64_t base = o * n * inner + j;                                       \
                for (a = 0; a < n; ++a) {                                                     \
                    const int64_t at = base + (p->reverse ? n - 1 - a : a) * inner;           \
                    const T v = x[at];                                                        \
                    if (p->exclusive) {                                                       \
                        y[at] = acc;                                                          \
                        acc = OP(acc, v);                                                     \
                    } else {                                                                  \
                        acc = OP(acc, v);                                                     \
                        y[at] = acc;                                                          \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }
#define AOTC_FADD(a, b) ((a) + (b))
#define AOTC_FMUL(a, b) ((a) * (b))
#define AOTC_WRAP_ADD32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define AOTC_WRAP_ADD64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define AOTC_WRAP_MUL32(a, b) ((int32_t)((uint32_t)(a) * (uint32_t)(b)))
#define AOTC_WRAP_MUL64(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
AOTC_CUMULATE(cumsum, f32, float, AOTC_FADD, 0)
AOTC_CUMULATE(cumsum, f64, double, AOTC_FADD, 0)
AOTC_CUMULATE(cumsum, i32, int32_t, AOTC_WRAP_ADD32, 0)
AOTC_CUMULATE(cumsum, i64, int64_t, AOTC_WRAP_ADD64, 0)
AOTC_CUMULATE(cumprod, f32, float, AOTC_FMUL, 1)
AOTC_CUMULATE(cumprod, f64, double, AOTC_FMUL, 1)
AOTC_CUMULATE(cumprod, i32, int32_t, AOTC_WRAP_MUL32, 1)
AOTC_CUMULATE(cumprod, i64, int64_t, AOTC_WRAP_MUL64, 1)

/* ---- Hardmax: 1 at the first maximum along the axis, 0 elsewhere --------------------- */
#define AOTC_HARDMAX(SFX, T)                                                            \
    void aotc_hardmax_##SFX(const aotc_arg_params *p, const T *x, T *y) {              \
        int32_t o, j, a;                                                              \
        for (o = 0; o < p->outer; ++o) {                                              \
            const int64_t base = (int64_t)o * p->axis_dim * p->inner;                 \
            for (j = 0; j < p->inner; ++j) {                                          \
                T best = x[base + j];                                                 \
                int64_t at = 0;                                                       \
                for (a = 0; a < p->axis_dim; ++a) {                                   \
                    const T v = x[base + (int64_t)a * p->inner + j];                  \
                    if (v > best) {                                                   \
                        best = v;                                                     \
                        at = a;                                                       \
                    }                                                                 \
                    y[base + (int64_t)a * p->inner + j] = 0;                          \
                }                                                                     \
                y[base + at * p->inner + j] = 1;                                      \
            }                                                                         \
        }                                                                             \
    }
AOTC_HARDMAX(f32, float)
AOTC_HARDMAX(f64, double)

/* ---- EyeLike, OneHot, Range ---------------------------------------------------------------- */
void aotc_eye(int32_t rows, int32_t cols, int64_t k, int32_t elem_size, const void *one, void *y) {
    uint8_t *out = (uint8_t *)y;
    int64_t i;
    memset(out, 0, (size_t)rows * (size_t)cols * (size_t)elem_size);
    for (i = 0; i < rows; ++i) {
        /* 0 <= i + k < cols, without computing i + k (k is a model input: i + INT64_MAX overflowed) */
        if (k >= -i && k < cols - i) memcpy(out + (i * cols + i + k) * elem_size, one, (size_t)elem_size);
    }
}

#define AOTC_ONE_HOT(SFX, TI)                                                                      \
    void aotc_one_hot_##SFX(const aotc_one_hot_params *p, const TI *indices, const void *values,  \
                            void *y) {                                                            \
        const uint8_t *off = (const uint8_t *)values, *on = off + p->elem_size;                   \
        uint8_t *out = (uint8_t *)y;                                                              \
        const size_t size = (size_t)p->elem_size;                                                 \
        int64_t o, d, i;                                                                          \
        for (o = 0; o < p->outer; ++o) {                                                          \
            for (d = 0; d < p->depth; ++d) {                                                      \
                for (i = 0; i < p->inner; ++i) {                                                  \
                    int64_t v = (int64_t)indices[o * p->inner + i];                               \
                    if (v < 0) v += p->depth;                                                     \
                    memcpy(out + ((o * p->depth + d) * p->inner + i) * (int64_t)size, v == d ? on : off, size); \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }
AOTC_ONE_HOT(i64, int64_t)
AOTC_ONE_HOT(i32, int32_t)
/* float indices: truncated toward zero; NaN and values outside int64 match no position */
static int64_t aotc_float_index(float v) { return v == v && v > -9.0e18f && v < 9.0e18f ? (int64_t)v : INT64_MIN; }
void aotc_one_hot_f32(const aotc_one_hot_params *p, const float *indices, const void *values, void *y) {
    const uint8_t *off = (const uint8_t *)values, *on = off + p->elem_size;
    uint8_t *out = (uint8_t *)y;
    const size_t size = (size_t)p->elem_size;
    int64_t o, d, i;
    for (o = 0; o < p->outer; ++o) {
        for (d = 0; d < p->depth; ++d) {
            for (i = 0; i < p->inner; ++i) {
                int64_t v = aotc_float_index(indices[o * p->inner + i]);
                if (v < 0 && v != INT64_MIN) v += p->depth;
                memcpy(out + ((o * p->depth + d) * p->inner + i) * (int64_t)size, v == d ? on : off, size);
            }
        }
    }
}

/* Range as onnxruntime computes it: each value the previous one plus delta */
#define AOTC_RANGE(SFX, T, ADD)                                                        \
    void aotc_range_##SFX(int64_t n, const T *start, const T *delta, T *y) {         \
        T v = start[0];                                                              \
        int64_t i;                                                                   \
        for (i = 0; i < n; ++i) {                                                    \
            y[i] = v;                                                                \
            v = ADD(v, delta[0]);                                                    \
        }                                                                            \
    }
#define AOTC_WRAP_ADD16(a, b) ((int16_t)((uint16_t)(a) + (uint16_t)(b)))
AOTC_RANGE(f32, float, AOTC_FADD)
AOTC_RANGE(f64, double, AOTC_FADD)
AOTC_RANGE(i16, int16_t, AOTC_WRAP_ADD16)
AOTC_RANGE(i32, int32_t, AOTC_WRAP_ADD32)
AOTC_RANGE(i64, int64_t, AOTC_WRAP_ADD64)

/* ---- GatherElements ---------------------------------------------------------------- */
#define AOTC_GATHER_ELEMENTS(SFX, TI)                                                          \
    void aotc_gather_elements_##SFX(const aotc_gather_elements_params *p, const void *data,   \
                                    const TI *indices, void *y) {                             \
        const uint8_t *src = (const uint8_t *)data;                                           \
        uint8_t *out = (uint8_t *)y;                                                          \
        const size_t size = (size_t)p->elem_size;                                             \
        int32_t idx[AOTC_MAX_RANK] = {0};                                                     \
        int64_t total = 1, i, base = 0; /* base: data offset of idx without the axis term */   \
        int32_t k;                                                                            \
        for (k = 0; k < p->rank; ++k) total *= p->shape[k];                                   \
        for (i = 0; i < total; ++i) {                                                         \
            int64_t v = (int64_t)indices[i];                                                  \
            if (v < 0) v += p->axis_dim;                                                      \
            if (v >= 0 && v < p->axis_dim) {                                                  \
                memcpy(out + i * (int64_t)size, src + (base + v * p->data_strides[p->axis]) * (int64_t)size, size); \
            } else {                                                                          \
                memset(out + i * (int64_t)size, 0, size);                                     \
            }                                                                                 \
            for (k = p->rank - 1; k >= 0; --k) { /* odometer over y's index */                 \
                if (k != p->axis) base += p->data_strides[k];                                 \
                if (++idx[k] < p->shape[k]) break;                                            \
                if (k != p->axis) base -= p->data_strides[k] * p->shape[k];                   \
                idx[k] = 0;                                                                   \
            }                                                                                 \
        }                                                                                     \
    }
AOTC_GATHER_ELEMENTS(i64, int64_t)
AOTC_GATHER_ELEMENTS(i32, int32_t)

/* ---- ScatterElements and ScatterND ------------------------------------------------------ */
/* An integer element of 1, 2, 4 or 8 bytes: read sign- or zero-extended, written as its low bits. */
static int64_t scatter_load_int(const uint8_t *at, size_t size) {
    int8_t v8;
    int16_t v16;
    int32_t v32;
    int64_t v64;
    switch (size) {
    case 1: memcpy(&v8, at, 1); return v8;
    case 2: memcpy(&v16, at, 2); return v16;
    case 4: memcpy(&v32, at, 4); return v32;
    default: memcpy(&v64, at, 8); return v64;
    }
}

static uint64_t scatter_load_uint(const uint8_t *at, size_t size) {
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (size) {
    case 1: memcpy(&v8, at, 1); return v8;
    case 2: memcpy(&v16, at, 2); return v16;
    case 4: memcpy(&v32, at, 4); return v32;
    default: memcpy(&v64, at, 8); return v64;
    }
}

static void scatter_store_bits(uint8_t *at, uint64_t v, size_t size) {
    const uint8_t v8 = (uint8_t)v;
    const uint16_t v16 = (uint16_t)v;
    const uint32_t v32 = (uint32_t)v;
    switch (size) {
    case 1: memcpy(at, &v8, 1); break;
    case 2: memcpy(at, &v16, 2); break;
    case 4: memcpy(at, &v32, 4); break;
    default: memcpy(at, &v, 8); break;
    }
}

/* dst (op)= src as the float type T (float32 or float64) */
#define SCATTER_COMBINE_FLOAT(T)                                                                        \
    do {                                                                                                \
        T a, b;                                                                                         \
        memcpy(&a, dst, sizeof a);                                                                      \
        memcpy(&b, src, sizeof b);                                                                      \
        switch (reduction) {                                                                            \
        case AOTC_SCATTER_ADD: a += b; break;                                                           \
        case AOTC_SCATTER_MUL: a *= b; break;                                                           \
        case AOTC_SCATTER_MAX: a = b > a ? b : a; break;                                                \
        default: a = b < a ? b : a; break;                                                              \
        }                                                                                               \
        memcpy(dst, &a, sizeof a);                                                                      \
    } while (0)

/* float16 bits to the float32 of the same value (exact) */
static float half_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    uint32_t bits;
    float f;
    if (exp == 0x1fu) {
        bits = sign | 0x7f800000u | (man << 13); /* inf, NaN */
    } else if (exp != 0u) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0u) {
        bits = sign;
    } else { /* subnormal: man * 2^-24, normalised */
        uint32_t m = man, e = 0u;
        while (!(m & 0x400u)) m <<= 1, ++e;
        bits = sign | ((113u - e) << 23) | ((m & 0x3ffu) << 13);
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* a float32 to the nearest float16, ties to even; past 65504 (from 65520) infinity; NaN the quiet 0x7e00 */
static uint16_t float_to_half(float f) {
    uint32_t x, ax;
    uint16_t sign;
    memcpy(&x, &f, sizeof x);
    sign = (uint16_t)((x >> 16) & 0x8000u);
    ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* a normal float16: the exponent rebiased, 13 bits rounded off */
        const uint32_t r = ax - 0x38000000u, rem = r & 0x1fffu;
        uint32_t h = r >> 13;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h; /* a carry moves up the exponent */
        return (uint16_t)(sign | h);
    }
    if (ax < 0x33000000u) return sign; /* below 2^-25: zero */
    {   /* a subnormal float16: the significand in units of 2^-24 */
        const uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - (ax >> 23), half = 1u << (shift - 1u);
        const uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t h = m >> shift;
        if (rem > half || (rem == half && (h & 1u))) ++h;
        return (uint16_t)(sign | h);
    }
}

/* One element of updates into y: copied, or combined as its kind (integer add/mul in uint64_t, whose low
 * bits are the wrapped result of any narrower width). */
static void scatter_one(uint8_t *dst, const uint8_t *src, size_t size, aotc_scatter_reduction reduction,
                        aotc_scatter_kind kind) {
    if (reduction == AOTC_SCATTER_NONE || kind == AOTC_SCATTER_BITS) {
        memcpy(dst, src, size);
    } else if (kind == AOTC_SCATTER_FLOAT && size == 4) {
        SCATTER_COMBINE_FLOAT(float);
    } else if (kind == AOTC_SCATTER_FLOAT) {
        SCATTER_COMBINE_FLOAT(double);
    } else if (kind == AOTC_SCATTER_HALF) {
        uint16_t ha, hb;
        float a, b;
        memcpy(&ha, dst, 2);
        memcpy(&hb, src, 2);
        a = half_to_float(ha);
        b = half_to_float(hb);
        switch (reduction) {
        case AOTC_SCATTER_ADD: a += b; break;
        case AOTC_SCATTER_MUL: a *= b; break;
        case AOTC_SCATTER_MAX: a = b > a ? b : a; break;
        default: a = b < a ? b : a; break;
        }
        ha = float_to_half(a);
        memcpy(dst, &ha, 2);
    } else if (kind == AOTC_SCATTER_INT) {
        const int64_t a = scatter_load_int(dst, size), b = scatter_load_int(src, size);
        uint64_t r;
        switch (reduction) {
        case AOTC_SCATTER_ADD: r = (uint64_t)a + (uint64_t)b; break;
        case AOTC_SCATTER_MUL: r = (uint64_t)a * (uint64_t)b; break;
        case AOTC_SCATTER_MAX: r = (uint64_t)(b > a ? b : a); break;
        default: r = (uint64_t)(b < a ? b : a); break;
        }
        scatter_store_bits(dst, r, size);
    } else {
        const uint64_t a = scatter_load_uint(dst, size), b = scatter_load_uint(src, size);
        uint64_t r;
        switch (reduction) {
        case AOTC_SCATTER_ADD: r = a + b; break;
        case AOTC_SCATTER_MUL: r = a * b; break;
        case AOTC_SCATTER_MAX: r = b > a ? b : a; break;
        default: r = b < a ? b : a; break;
        }
        scatter_store_bits(dst, r, size);
    }
}
#undef SCATTER_COMBINE_FLOAT

#define AOTC_SCATTER_ELEMENTS(SFX, TI)                                                                  \
    void aotc_scatter_elements_##SFX(const aotc_gather_elements_params *p, aotc_scatter_reduction reduction, \
                                     aotc_scatter_kind kind, size_t data_bytes, const void *data,       \
                                     const TI *indices, const void *updates, void *y) {                 \
        const uint8_t *src = (const uint8_t *)updates;                                                 \
        uint8_t *out = (uint8_t *)y;                                                                   \
        const size_t size = (size_t)p->elem_size;                                                      \
        int32_t idx[AOTC_MAX_RANK] = {0};                                                              \
        int64_t total = 1, i, base = 0;                                                                \
        int32_t k;                                                                                     \
        if (data != y) memmove(y, data, data_bytes);                                                   \
        for (k = 0; k < p->rank; ++k) total *= p->shape[k];                                            \
        for (i = 0; i < total; ++i) {                                                                  \
            int64_t v = (int64_t)indices[i];                                                           \
            if (v < 0) v += p->axis_dim;                                                               \
            if (v >= 0 && v < p->axis_dim) {                                                           \
                scatter_one(out + (base + v * p->data_strides[p->axis]) * (int64_t)size,               \
                            src + i * (int64_t)size, size, reduction, kind);                           \
            }                                                                                          \
            for (k = p->rank - 1; k >= 0; --k) {                                                       \
                if (k != p->axis) base += p->data_strides[k];                                          \
                if (++idx[k] < p->shape[k]) break;                                                     \
                if (k != p->axis) base -= p->data_strides[k] * p->shape[k];                            \
                idx[k] = 0;                                                                            \
            }                                                                                          \
        }                                                                                              \
    }
AOTC_SCATTER_ELEMENTS(i64, int64_t)
AOTC_SCATTER_ELEMENTS(i32, int32_t)

void aotc_scatter_nd(const aotc_scatter_nd_params *p, aotc_scatter_reduction reduction, aotc_scatter_kind kind,
                     size_t data_bytes, const void *data, const int64_t *indices, const void *updates, void *y) {
    const uint8_t *src = (const uint8_t *)updates;
    uint8_t *out = (uint8_t *)y;
    const size_t size = (size_t)p->elem_size;
    int64_t i, e;
    int32_t j;
    if (data != y) memmove(y, data, data_bytes);
    for (i = 0; i < p->n; ++i) {
        int64_t offset = 0;
        int inside = 1;
        for (j = 0; j < p->k; ++j) {
            int64_t v = indices[i * p->k + j];
            if (v < 0) v += p->dims[j];
            if (v < 0 || v >= p->dims[j]) inside = 0;
            offset += v * p->strides[j];
        }
        if (!inside) continue;
        for (e = 0; e < p->slice_elems; ++e) {
            scatter_one(out + (offset + e) * (int64_t)size, src + (i * p->slice_elems + e) * (int64_t)size, size,
                        reduction, kind);
        }
    }
}

/* ---- GatherND ------------------------------------------------------------------------------ */
void aotc_gather_nd(const aotc_gather_nd_params *p, const void *data, const int64_t *indices, void *y) {
    const uint8_t *src = (const uint8_t *)data;
    uint8_t *out = (uint8_t *)y;
    const size_t size = (size_t)p->elem_size, slice = (size_t)p->slice_elems * size;
    int64_t b, i;
    int32_t j;
    for (b = 0; b < p->batch; ++b) {
        for (i = 0; i < p->n; ++i) {
            const int64_t t = b * p->n + i;
            int64_t offset = b * p->batch_elems;
            int inside = 1;
            for (j = 0; j < p->k; ++j) {
                int64_t v = indices[t * p->k + j];
                if (v < 0) v += p->dims[j];
                if (v < 0 || v >= p->dims[j]) inside = 0;
                offset += v * p->strides[j];
            }
            if (inside) {
                memcpy(out + t * (int64_t)slice, src + offset * (int64_t)size, slice);
            } else {
                memset(out + t * (int64_t)slice, 0, slice);
            }
        }
    }
}
