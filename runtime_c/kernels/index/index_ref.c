/* Reference kernels of the index family (declared in kernels_ref.h): each output element on its
 * own, from its coordinates, by the ONNX definition of the op; ArgMax / ArgMin / Hardmax find the
 * extreme value first, then its first (or last) index; CumSum / CumProd recompute every prefix from
 * the start of the scan (in the scan's order, so float sums round as the op's do); the scatters
 * copy the data, then apply the updates in index order. index.c is checked against these. */
#include "kernels_ref.h"

#include <math.h>
#include <string.h>

static void coords(int64_t i, int32_t rank, const int32_t *shape, int64_t *idx) {
    int32_t k;
    for (k = rank - 1; k >= 0; --k) {
        idx[k] = i % shape[k];
        i /= shape[k];
    }
}

static void copy_elem(uint8_t *dst, const uint8_t *src, int64_t size) {
    int64_t b;
    for (b = 0; b < size; ++b) dst[b] = src[b];
}

void aotc_where_ref(const aotc_where_params *p, const uint8_t *cond, const void *x, const void *z, void *y) {
    int64_t total = 1, i, idx[AOTC_MAX_RANK];
    int32_t k;
    for (k = 0; k < p->rank; ++k) total *= p->shape[k];
    for (i = 0; i < total; ++i) {
        int64_t c = 0, xo = 0, zo = 0;
        coords(i, p->rank, p->shape, idx);
        for (k = 0; k < p->rank; ++k) c += idx[k] * p->c_strides[k], xo += idx[k] * p->x_strides[k], zo += idx[k] * p->z_strides[k];
        copy_elem((uint8_t *)y + i * p->elem_size,
                  cond[c] ? (const uint8_t *)x + xo * p->elem_size : (const uint8_t *)z + zo * p->elem_size,
                  p->elem_size);
    }
}

/* the extreme (GREATER: max, else min) of line (o, j), then the first index holding it (the last
 * with select_last) */
#define ARG_REF(NAME, SFX, T, GREATER)                                                              \
    void aotc_##NAME##_##SFX##_ref(const aotc_arg_params *p, const T *x, int64_t *y) {            \
        int64_t o, j, a;                                                                          \
        for (o = 0; o < p->outer; ++o) {                                                          \
            for (j = 0; j < p->inner; ++j) {                                                      \
                const T *line = x + o * p->axis_dim * p->inner + j;                               \
                T best = line[0];                                                                 \
                int64_t at = -1;                                                                  \
                for (a = 1; a < p->axis_dim; ++a) {                                               \
                    const T v = line[a * p->inner];                                               \
                    if (GREATER ? v > best : v < best) best = v;                                  \
                }                                                                                 \
                for (a = 0; a < p->axis_dim; ++a) {                                               \
                    if (line[a * p->inner] == best && (at < 0 || p->select_last)) at = a;         \
                }                                                                                 \
                y[o * p->inner + j] = at;                                                         \
            }                                                                                     \
        }                                                                                         \
    }
#define ARGS_REF(SFX, T) ARG_REF(argmax, SFX, T, 1) ARG_REF(argmin, SFX, T, 0)
ARGS_REF(f32, float)
ARGS_REF(f64, double)
ARGS_REF(i8, int8_t)
ARGS_REF(u8, uint8_t)
ARGS_REF(i32, int32_t)
ARGS_REF(i64, int64_t)

/* y's element (o, j, i) is x's (o, the j-th true condition's slice, i), element by element; a count of
 * true conditions other than kept: AOTC_ERR_SHAPE, y untouched */
int32_t aotc_compress_ref(const aotc_compress_params *p, const uint8_t *cond, const void *x, void *y) {
    int64_t o, j, i, e, c, kept = 0;
    for (c = 0; c < p->cond_len && c < p->axis_dim; ++c) kept += cond[c] ? 1 : 0;
    if (kept != p->kept) return AOTC_ERR_SHAPE;
    for (o = 0; o < p->outer; ++o) {
        for (j = 0, c = 0; c < p->cond_len && c < p->axis_dim; ++c) {
            if (!cond[c]) continue;
            for (i = 0; i < p->inner; ++i) {
                const int64_t from = ((o * p->axis_dim + c) * p->inner + i) * p->elem_size;
                const int64_t to = ((o * p->kept + j) * p->inner + i) * p->elem_size;
                for (e = 0; e < p->elem_size; ++e) ((uint8_t *)y)[to + e] = ((const uint8_t *)x)[from + e];
            }
            ++j;
        }
    }
    return 0;
}

void aotc_trilu_ref(const aotc_trilu_params *p, int64_t k, const void *x, void *y) {
    int64_t b, i, j;
    for (b = 0; b < p->batch; ++b) {
        for (i = 0; i < p->rows; ++i) {
            for (j = 0; j < p->cols; ++j) {
                const int64_t at = ((b * p->rows + i) * p->cols + j) * p->elem_size;
                const int keep = p->upper ? j - i >= k : j - i <= k;
                int64_t e;
                for (e = 0; e < p->elem_size; ++e) ((uint8_t *)y)[at + e] = keep ? ((const uint8_t *)x)[at + e] : 0;
            }
        }
    }
}

/* every prefix of the scan (forward, or from the end with reverse) up to the element (exclusive: before
 * it), combined from INIT in the scan's order; an axis out of range copies x */
#define CUMULATE_REF(NAME, SFX, T, U, OP, INIT)                                                          \
    void aotc_##NAME##_##SFX##_ref(const aotc_cumsum_params *p, int64_t axis, const T *x, T *y) {       \
        int64_t total = 1, i, n, inner = 1, idx[AOTC_MAX_RANK];                                         \
        int32_t d;                                                                                      \
        for (d = 0; d < p->rank; ++d) total *= p->shape[d];                                             \
        if (axis < 0) axis += p->rank;                                                                  \
        if (axis < 0 || axis >= p->rank) {                                                              \
            for (i = 0; i < total; ++i) y[i] = x[i];                                                    \
            return;                                                                                     \
        }                                                                                               \
        n = p->shape[axis];                                                                             \
        for (d = (int32_t)axis + 1; d < p->rank; ++d) inner *= p->shape[d];                             \
        for (i = 0; i < total; ++i) {                                                                   \
            const int64_t *a_ = idx + axis;                                                             \
            int64_t start, s;                                                                           \
            T acc = (T)(INIT);                                                                          \
            coords(i, p->rank, p->shape, idx);                                                          \
            start = i - *a_ * inner; /* the line's first element */                                     \
            for (s = 0; s < n; ++s) {                                                                   \
                const int64_t a = p->reverse ? n - 1 - s : s; /* the s-th element of the scan */       \
                const int before = p->reverse ? a > *a_ : a < *a_;                                     \
                if (!(before || (!p->exclusive && a == *a_))) break;                                    \
                acc = (T)OP((U)acc, (U)x[start + a * inner]);                                           \
            }                                                                                           \
            y[i] = acc;                                                                                 \
        }                                                                                               \
    }
#define ADD_REF(a, b) ((a) + (b))
#define MUL_REF(a, b) ((a) * (b))
CUMULATE_REF(cumsum, f32, float, float, ADD_REF, 0)
CUMULATE_REF(cumsum, f64, double, double, ADD_REF, 0)
CUMULATE_REF(cumsum, i32, int32_t, uint32_t, ADD_REF, 0)
CUMULATE_REF(cumsum, i64, int64_t, uint64_t, ADD_REF, 0)
CUMULATE_REF(cumprod, f32, float, float, MUL_REF, 1)
CUMULATE_REF(cumprod, f64, double, double, MUL_REF, 1)
CUMULATE_REF(cumprod, i32, int32_t, uint32_t, MUL_REF, 1)
CUMULATE_REF(cumprod, i64, int64_t, uint64_t, MUL_REF, 1)

/* 1 at the first index holding the line's maximum, 0 elsewhere */
#define HARDMAX_REF(SFX, T)                                                                          \
    void aotc_hardmax_##SFX##_ref(const aotc_arg_params *p, const T *x, T *y) {                     \
        int64_t o, j, a, at;                                                                       \
        for (o = 0; o < p->outer; ++o) {                                                           \
            for (j = 0; j < p->inner; ++j) {                                                       \
                const T *line = x + o * p->axis_dim * p->inner + j;                                \
                T best = line[0];                                                                  \
                for (a = 1; a < p->axis_dim; ++a) best = line[a * p->inner] > best ? line[a * p->inner] : best; \
                for (at = 0; line[at * p->inner] != best; ++at) {                                  \
                }                                                                                  \
                for (a = 0; a < p->axis_dim; ++a) y[(o * p->axis_dim + a) * p->inner + j] = a == at ? 1 : 0; \
            }                                                                                      \
        }                                                                                          \
    }
HARDMAX_REF(f32, float)
HARDMAX_REF(f64, double)

void aotc_eye_ref(int32_t rows, int32_t cols, int64_t k, int32_t elem_size, const void *one, void *y) {
    int64_t i, j, e;
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < cols; ++j) {
            for (e = 0; e < elem_size; ++e) {
                ((uint8_t *)y)[(i * cols + j) * elem_size + e] = j - i == k ? ((const uint8_t *)one)[e] : 0;
            }
        }
    }
}

/* y[o][d][i] = values[indices[o][i] == d (counted from depth when negative)] */
static void one_hot_ref(const aotc_one_hot_params *p, int64_t o, int64_t i, int valid, int64_t v, const void *values,
                        void *y) {
    int64_t d;
    if (valid && v < 0) v += p->depth;
    for (d = 0; d < p->depth; ++d) {
        copy_elem((uint8_t *)y + ((o * p->depth + d) * p->inner + i) * p->elem_size,
                  (const uint8_t *)values + (valid && v == d ? p->elem_size : 0), p->elem_size);
    }
}

void aotc_one_hot_i64_ref(const aotc_one_hot_params *p, const int64_t *indices, const void *values, void *y) {
    int64_t o, i;
    for (o = 0; o < p->outer; ++o)
        for (i = 0; i < p->inner; ++i) one_hot_ref(p, o, i, 1, indices[o * p->inner + i], values, y);
}

void aotc_one_hot_i32_ref(const aotc_one_hot_params *p, const int32_t *indices, const void *values, void *y) {
    int64_t o, i;
    for (o = 0; o < p->outer; ++o)
        for (i = 0; i < p->inner; ++i) one_hot_ref(p, o, i, 1, indices[o * p->inner + i], values, y);
}

/* float indices truncated toward zero; NaN and values beyond int64 name no position */
void aotc_one_hot_f32_ref(const aotc_one_hot_params *p, const float *indices, const void *values, void *y) {
    int64_t o, i;
    for (o = 0; o < p->outer; ++o) {
        for (i = 0; i < p->inner; ++i) {
            const float v = indices[o * p->inner + i];
            const int valid = v == v && v > -9.0e18f && v < 9.0e18f;
            one_hot_ref(p, o, i, valid, valid ? (int64_t)v : 0, values, y);
        }
    }
}

/* ONNX Range as onnxruntime computes it: each value the previous one plus delta (integers wrap) */
#define RANGE_REF(SFX, T, U)                                                                \
    void aotc_range_##SFX##_ref(int64_t n, const T *start, const T *delta, T *y) {        \
        int64_t i;                                                                        \
        for (i = 0; i < n; ++i) y[i] = i == 0 ? start[0] : (T)((U)y[i - 1] + (U)delta[0]); \
    }
RANGE_REF(f32, float, float)
RANGE_REF(f64, double, double)
RANGE_REF(i16, int16_t, uint16_t)
RANGE_REF(i32, int32_t, uint32_t)
RANGE_REF(i64, int64_t, uint64_t)

/* data's element at the coordinates idx with the axis one replaced by v, or -1 when v is out of range */
static int64_t elements_at(const aotc_gather_elements_params *p, const int64_t *idx, int64_t v) {
    int64_t at = 0;
    int32_t k;
    if (v < 0) v += p->axis_dim;
    if (v < 0 || v >= p->axis_dim) return -1;
    for (k = 0; k < p->rank; ++k) at += (k == p->axis ? v : idx[k]) * p->data_strides[k];
    return at;
}

#define GATHER_ELEMENTS_REF(SFX, TI)                                                                     \
    void aotc_gather_elements_##SFX##_ref(const aotc_gather_elements_params *p, const void *data,       \
                                          const TI *indices, void *y) {                                 \
        int64_t total = 1, i, e, idx[AOTC_MAX_RANK];                                                    \
        int32_t k;                                                                                      \
        for (k = 0; k < p->rank; ++k) total *= p->shape[k];                                             \
        for (i = 0; i < total; ++i) {                                                                   \
            int64_t at;                                                                                 \
            coords(i, p->rank, p->shape, idx);                                                          \
            at = elements_at(p, idx, (int64_t)indices[i]);                                              \
            for (e = 0; e < p->elem_size; ++e) {                                                        \
                ((uint8_t *)y)[i * p->elem_size + e] = at < 0 ? 0 : ((const uint8_t *)data)[at * p->elem_size + e]; \
            }                                                                                           \
        }                                                                                               \
    }
GATHER_ELEMENTS_REF(i64, int64_t)
GATHER_ELEMENTS_REF(i32, int32_t)

/* one update into y of C type T: combined with what is there, add and mul in the unsigned type W (U, of T's
 * width, widened to at least unsigned int so that nothing is promoted to int), stored as U's bits */
#define SCATTER_COMBINE_REF(T, U, W)                                                   \
    do {                                                                               \
        T a, b;                                                                        \
        U r;                                                                           \
        memcpy(&a, dst, sizeof(T));                                                    \
        memcpy(&b, src, sizeof(T));                                                    \
        if (reduction == AOTC_SCATTER_ADD) r = (U)((W)(U)a + (W)(U)b);                 \
        else if (reduction == AOTC_SCATTER_MUL) r = (U)((W)(U)a * (W)(U)b);            \
        else if (reduction == AOTC_SCATTER_MAX) r = (U)(b > a ? b : a);                \
        else r = (U)(b < a ? b : a);                                                   \
        memcpy(dst, &r, sizeof(U));                                                    \
    } while (0)

/* the same for a float type T, stored as it is */
#define SCATTER_COMBINE_FLOAT_REF(T)                                                   \
    do {                                                                               \
        T a, b;                                                                        \
        memcpy(&a, dst, sizeof(T));                                                    \
        memcpy(&b, src, sizeof(T));                                                    \
        if (reduction == AOTC_SCATTER_ADD) a = a + b;                                  \
        else if (reduction == AOTC_SCATTER_MUL) a = a * b;                             \
        else if (reduction == AOTC_SCATTER_MAX) a = b > a ? b : a;                     \
        else a = b < a ? b : a;                                                        \
        memcpy(dst, &a, sizeof(T));                                                    \
    } while (0)

/* float16 as a value: (1024 + m) * 2^(e - 25), or m * 2^-24 below; and a float to the float16 of the nearest
 * value (rint: ties to even), by frexp's exponent */
static float half_value_ref(uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const float v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(1024 + m), e - 25);
    return (h & 0x8000u) ? -v : v;
}

static uint16_t half_bits_ref(float f) {
    const uint16_t sign = signbit(f) ? 0x8000u : 0u;
    const double a = fabs((double)f);
    int e;
    double m;
    if (isnan(f)) return (uint16_t)(sign | 0x7e00u);
    if (a >= 65520.0) return (uint16_t)(sign | 0x7c00u);
    if (a < ldexp(1.0, -14)) return (uint16_t)(sign | (uint16_t)rint(ldexp(a, 24))); /* 1024: the least normal */
    (void)frexp(a, &e); /* a in [2^(e-1), 2^e) */
    m = rint(ldexp(a, 11 - e));         /* 1024 .. 2048 */
    if (m == 2048.0) m = 1024.0, ++e;
    return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)(m - 1024.0));
}

/* one update into y: copied, or combined with what is there as its kind and size say */
static void scatter_ref(uint8_t *dst, const uint8_t *src, int32_t size, aotc_scatter_reduction reduction,
                        aotc_scatter_kind kind) {
    if (reduction == AOTC_SCATTER_NONE || kind == AOTC_SCATTER_BITS) {
        copy_elem(dst, src, size);
    } else if (kind == AOTC_SCATTER_FLOAT) {
        if (size == 4) SCATTER_COMBINE_FLOAT_REF(float);
        else SCATTER_COMBINE_FLOAT_REF(double);
    } else if (kind == AOTC_SCATTER_HALF) {
        uint16_t ha, hb;
        float a, b;
        memcpy(&ha, dst, 2);
        memcpy(&hb, src, 2);
        a = half_value_ref(ha), b = half_value_ref(hb);
        if (reduction == AOTC_SCATTER_ADD) a = a + b;
        else if (reduction == AOTC_SCATTER_MUL) a = a * b;
        else if (reduction == AOTC_SCATTER_MAX) a = b > a ? b : a;
        else a = b < a ? b : a;
        ha = half_bits_ref(a);
        memcpy(dst, &ha, 2);
    } else if (kind == AOTC_SCATTER_INT) {
        if (size == 1) SCATTER_COMBINE_REF(int8_t, uint8_t, unsigned int);
        else if (size == 2) SCATTER_COMBINE_REF(int16_t, uint16_t, unsigned int);
        else if (size == 4) SCATTER_COMBINE_REF(int32_t, uint32_t, uint32_t);
        else SCATTER_COMBINE_REF(int64_t, uint64_t, uint64_t);
    } else {
        if (size == 1) SCATTER_COMBINE_REF(uint8_t, uint8_t, unsigned int);
        else if (size == 2) SCATTER_COMBINE_REF(uint16_t, uint16_t, unsigned int);
        else if (size == 4) SCATTER_COMBINE_REF(uint32_t, uint32_t, uint32_t);
        else SCATTER_COMBINE_REF(uint64_t, uint64_t, uint64_t);
    }
}

#define SCATTER_ELEMENTS_REF(SFX, TI)                                                                    \
    void aotc_scatter_elements_##SFX##_ref(const aotc_gather_elements_params *p,                        \
                                           aotc_scatter_reduction reduction, aotc_scatter_kind kind,    \
                                           size_t data_bytes, const void *data, const TI *indices,      \
                                           const void *updates, void *y) {                              \
        int64_t total = 1, i, idx[AOTC_MAX_RANK];                                                       \
        int32_t k;                                                                                      \
        if (data != y) copy_elem((uint8_t *)y, (const uint8_t *)data, (int64_t)data_bytes);             \
        for (k = 0; k < p->rank; ++k) total *= p->shape[k];                                             \
        for (i = 0; i < total; ++i) {                                                                   \
            int64_t at;                                                                                 \
            coords(i, p->rank, p->shape, idx);                                                          \
            at = elements_at(p, idx, (int64_t)indices[i]);                                              \
            if (at >= 0) {                                                                              \
                scatter_ref((uint8_t *)y + at * p->elem_size, (const uint8_t *)updates + i * p->elem_size, \
                            p->elem_size, reduction, kind);                                             \
            }                                                                                           \
        }                                                                                               \
    }
SCATTER_ELEMENTS_REF(i64, int64_t)
SCATTER_ELEMENTS_REF(i32, int32_t)

/* the element offset tuple t of k coordinates names (dims[j] each, negative counted from the end), or -1 */
static int64_t tuple_at(const int64_t *tuple, int32_t k, const int64_t *dims, const int64_t *strides) {
    int64_t at = 0;
    int32_t j;
    for (j = 0; j < k; ++j) {
        const int64_t v = tuple[j] < 0 ? tuple[j] + dims[j] : tuple[j];
        if (v < 0 || v >= dims[j]) return -1;
        at += v * strides[j];
    }
    return at;
}

void aotc_scatter_nd_ref(const aotc_scatter_nd_params *p, aotc_scatter_reduction reduction, aotc_scatter_kind kind,
                         size_t data_bytes, const void *data, const int64_t *indices, const void *updates, void *y) {
    int64_t i, e;
    if (data != y) copy_elem((uint8_t *)y, (const uint8_t *)data, (int64_t)data_bytes);
    for (i = 0; i < p->n; ++i) {
        const int64_t at = tuple_at(indices + i * p->k, p->k, p->dims, p->strides);
        if (at < 0) continue;
        for (e = 0; e < p->slice_elems; ++e) {
            scatter_ref((uint8_t *)y + (at + e) * p->elem_size,
                        (const uint8_t *)updates + (i * p->slice_elems + e) * p->elem_size, p->elem_size, reduction,
                        kind);
        }
    }
}

void aotc_gather_nd_ref(const aotc_gather_nd_params *p, const void *data, const int64_t *indices, void *y) {
    int64_t b, i, e;
    for (b = 0; b < p->batch; ++b) {
        for (i = 0; i < p->n; ++i) {
            const int64_t t = b * p->n + i, at = tuple_at(indices + t * p->k, p->k, p->dims, p->strides);
            for (e = 0; e < p->slice_elems * p->elem_size; ++e) {
                ((uint8_t *)y)[t * p->slice_elems * p->elem_size + e] =
                    at < 0 ? 0 : ((const uint8_t *)data)[(b * p->batch_elems + at) * p->elem_size + e];
            }
        }
    }
}

/* ---- Unique: with no scratch, each distinct slice found by scanning (aotc_unique_compare's order) ---- */
static int unique_ref_cmp(const aotc_unique_params *p, const uint8_t *x, int64_t i, int64_t j) {
    int64_t e;
    for (e = 0; e < (int64_t)p->outer * p->inner; ++e) {
        const int64_t o = e / p->inner, k = e % p->inner;
        const int c = aotc_unique_compare(p->kind, p->elem_size,
                                          x + ((o * p->axis_dim + i) * p->inner + k) * p->elem_size,
                                          x + ((o * p->axis_dim + j) * p->inner + k) * p->elem_size);
        if (c) return c;
    }
    return 0;
}

/* the first occurrence of the distinct slice at place k, or -1 past the last */
static int64_t unique_ref_pick(const aotc_unique_params *p, const uint8_t *x, int64_t k) {
    int64_t i, j, prev = -1, place = 0;
    for (;;) {
        int64_t best = -1;
        for (i = 0; i < p->axis_dim; ++i) {
            int seen = 0;
            for (j = 0; j < i && !seen; ++j) seen = unique_ref_cmp(p, x, j, i) == 0;
            if (seen) continue;
            if (!p->sorted) {
                if (place++ == k) return i;
                continue;
            }
            if (prev >= 0 && unique_ref_cmp(p, x, i, prev) <= 0) continue;
            if (best < 0 || unique_ref_cmp(p, x, i, best) < 0) best = i;
        }
        if (!p->sorted || best < 0 || place == k) return best;
        prev = best, ++place;
    }
}

int32_t aotc_unique_ref(const aotc_unique_params *p, const void *x, void *y, int64_t *indices, int64_t *inverse,
                        int64_t *counts) {
    const uint8_t *xs = (const uint8_t *)x;
    const int64_t slice = (int64_t)p->inner * p->elem_size;
    int64_t u = 0, k, i, o;
    while (unique_ref_pick(p, xs, u) >= 0) ++u;
    if (p->bounded ? u > p->kept : u != p->kept) return AOTC_ERR_SHAPE;
    for (k = 0; k < u; ++k) {
        const int64_t f = unique_ref_pick(p, xs, k);
        int64_t c = 0;
        for (o = 0; o < p->outer; ++o) {
            memcpy((uint8_t *)y + (o * p->kept + k) * slice, xs + (o * p->axis_dim + f) * slice, (size_t)slice);
        }
        for (i = 0; i < p->axis_dim; ++i) {
            if (unique_ref_cmp(p, xs, i, f) == 0) {
                ++c;
                if (inverse) inverse[i] = k;
            }
        }
        if (indices) indices[k] = f;
        if (counts) counts[k] = c;
    }
    return p->bounded ? (int32_t)u : 0;
}
