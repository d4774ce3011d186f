/* Index arithmetic kernels: Where, ArgMax/ArgMin, Trilu, CumSum and GatherElements, the ops a
 * transformer's masks and positions are made of. Where, Trilu and GatherElements move bytes, so
 * one kernel serves every dtype (the element size is a parameter); ArgMax/ArgMin and CumSum
 * compute, one kernel per dtype suffix (f32, f64, i8, u8, i32, i64). The compiler merges dims
 * and works out strides; a value the kernels read at run time (Trilu's k, CumSum's axis) can
 * never send them out of bounds. */
#ifndef AOTC_INDEX_H
#define AOTC_INDEX_H

#include "aotc_common.h"

/* ONNX Where with numpy broadcasting of all three inputs to y:
 * y[i] = cond[i] ? x[i] : z[i], with strides in elements (0 where an input broadcasts). */
typedef struct {
    int32_t rank;                      /* merged dims, 1..AOTC_MAX_RANK */
    int32_t elem_size;                 /* bytes per element of x, z and y */
    int32_t shape[AOTC_MAX_RANK];      /* y's merged dims */
    int32_t c_strides[AOTC_MAX_RANK];  /* of cond (bool, one byte) */
    int32_t x_strides[AOTC_MAX_RANK];
    int32_t z_strides[AOTC_MAX_RANK];
} aotc_where_params;

void aotc_where(const aotc_where_params *p, const uint8_t *cond, const void *x, const void *z, void *y);

/* x viewed as [outer, axis_dim, inner]: ArgMax/ArgMin over axis_dim -> int64 [outer, inner]. */
typedef struct {
    int32_t outer, axis_dim, inner;
    int32_t select_last; /* ties: the last index instead of the first */
} aotc_arg_params;

#define AOTC_DECLARE_ARG(SFX, T)                                                       \
    void aotc_argmax_##SFX(const aotc_arg_params *p, const T *x, int64_t *y);         \
    void aotc_argmin_##SFX(const aotc_arg_params *p, const T *x, int64_t *y);
AOTC_DECLARE_ARG(f32, float)
AOTC_DECLARE_ARG(f64, double)
AOTC_DECLARE_ARG(i8, int8_t)
AOTC_DECLARE_ARG(u8, uint8_t)
AOTC_DECLARE_ARG(i32, int32_t)
AOTC_DECLARE_ARG(i64, int64_t)

/* ONNX Trilu over a batch of [rows, cols] matrices: keeps x[i][j] where j - i >= k (upper) or
 * j - i <= k (lower), zero elsewhere. k is read at run time (an input of the model). */
typedef struct {
    int32_t batch, rows, cols;
    int32_t elem_size;
    int32_t upper;
} aotc_trilu_params;

void aotc_trilu(const aotc_trilu_params *p, int64_t k, const void *x, void *y);

/* ONNX Compress: x viewed as [outer, axis_dim, inner]; the slices i < cond_len of axis_dim whose
 * cond[i] is true, in order, make y [outer, kept, inner]. kept is the count the bundle was compiled
 * for (the declared output shape): a condition holding another count writes nothing and returns
 * AOTC_ERR_SHAPE; 0 otherwise. */
typedef struct {
    int32_t outer, axis_dim, inner;
    int32_t elem_size;
    int32_t cond_len; /* cond's elements (those past axis_dim are not read) */
    int32_t kept;
} aotc_compress_params;

int32_t aotc_compress(const aotc_compress_params *p, const uint8_t *cond, const void *x, void *y);

/* ONNX CumSum over one axis of x (rank dims), read at run time; an axis out of range copies x. */
typedef struct {
    int32_t rank;
    int32_t shape[AOTC_MAX_RANK];
    int32_t exclusive, reverse;
} aotc_cumsum_params;

#define AOTC_DECLARE_CUMSUM(SFX, T) \
    void aotc_cumsum_##SFX(const aotc_cumsum_params *p, int64_t axis, const T *x, T *y);
AOTC_DECLARE_CUMSUM(f32, float)
AOTC_DECLARE_CUMSUM(f64, double)
AOTC_DECLARE_CUMSUM(i32, int32_t)
AOTC_DECLARE_CUMSUM(i64, int64_t)
/* ONNX CumProd: the same, multiplying (integers wrap) */
#define AOTC_DECLARE_CUMPROD(SFX, T) \
    void aotc_cumprod_##SFX(const aotc_cumsum_params *p, int64_t axis, const T *x, T *y);
AOTC_DECLARE_CUMPROD(f32, float)
AOTC_DECLARE_CUMPROD(f64, double)
AOTC_DECLARE_CUMPROD(i32, int32_t)
AOTC_DECLARE_CUMPROD(i64, int64_t)

/* ONNX Hardmax over [outer, axis_dim, inner]: 1 at the first maximum, 0 elsewhere. */
void aotc_hardmax_f32(const aotc_arg_params *p, const float *x, float *y);
void aotc_hardmax_f64(const aotc_arg_params *p, const double *x, double *y);

/* ONNX EyeLike: a [rows, cols] matrix of zeros with `one` (elem_size bytes) on diagonal k. */
void aotc_eye(int32_t rows, int32_t cols, int64_t k, int32_t elem_size, const void *one, void *y);

/* ONNX OneHot, y viewed as [outer, depth, inner]: y[o][d][i] = values[1] where indices[o][i]
 * (negative ones counted from depth) is d, values[0] elsewhere. values: 2 elements of elem_size. */
typedef struct {
    int64_t outer, depth, inner;
    int32_t elem_size;
} aotc_one_hot_params;

void aotc_one_hot_i64(const aotc_one_hot_params *p, const int64_t *indices, const void *values, void *y);
void aotc_one_hot_i32(const aotc_one_hot_params *p, const int32_t *indices, const void *values, void *y);
void aotc_one_hot_f32(const aotc_one_hot_params *p, const float *indices, const void *values, void *y);

/* ONNX Range with n (the static output length) values: start, start + delta, ... (read at run time). */
#define AOTC_DECLARE_RANGE(SFX, T) void aotc_range_##SFX(int64_t n, const T *start, const T *delta, T *y);
AOTC_DECLARE_RANGE(f32, float)
AOTC_DECLARE_RANGE(f64, double)
AOTC_DECLARE_RANGE(i16, int16_t)
AOTC_DECLARE_RANGE(i32, int32_t)
AOTC_DECLARE_RANGE(i64, int64_t)

/* ONNX GatherElements: for every index i of `indices` (shape = y's shape),
 * y[i] = data[i with its axis coordinate replaced by indices[i]]; an index out of
 * [-axis_dim, axis_dim) gives a zero element. */
typedef struct {
    int32_t rank;
    int32_t elem_size;
    int32_t axis;
    int32_t axis_dim;                     /* data's size along axis */
    int32_t shape[AOTC_MAX_RANK];         /* of indices and y */
    int64_t data_strides[AOTC_MAX_RANK];  /* data's strides in elements */
} aotc_gather_elements_params;

void aotc_gather_elements_i64(const aotc_gather_elements_params *p, const void *data, const int64_t *indices,
                              void *y);
void aotc_gather_elements_i32(const aotc_gather_elements_params *p, const void *data, const int32_t *indices,
                              void *y);

/* ONNX ScatterElements and ScatterND: y = data, then updates written at the indexed places, or
 * combined with what is there (reduction add/mul/max/min) as the elements' kind says: FLOAT (float32
 * or float64 by elem_size), INT or UINT (1, 2, 4 or 8 bytes; add and mul wrap modulo 2^bits, max and
 * min compare as the type), HALF (float16: each combine in float32, rounded to the nearest float16, ties
 * to even, as LiteRT's Eigen::half; a NaN result the quiet NaN 0x7e00 with its sign). BITS elements
 * (bool, bfloat16, ...) are copied only: reduction NONE. An index out of range writes nothing. */
typedef enum {
    AOTC_SCATTER_NONE = 0, AOTC_SCATTER_ADD = 1, AOTC_SCATTER_MUL = 2, AOTC_SCATTER_MAX = 3, AOTC_SCATTER_MIN = 4
} aotc_scatter_reduction;
typedef enum {
    AOTC_SCATTER_BITS = 0, AOTC_SCATTER_FLOAT = 1, AOTC_SCATTER_INT = 2, AOTC_SCATTER_UINT = 3, AOTC_SCATTER_HALF = 4
} aotc_scatter_kind;

/* ScatterElements: shape is that of indices and updates; the rest as for GatherElements. */
void aotc_scatter_elements_i64(const aotc_gather_elements_params *p, aotc_scatter_reduction reduction,
                               aotc_scatter_kind kind, size_t data_bytes, const void *data, const int64_t *indices,
                               const void *updates, void *y);
void aotc_scatter_elements_i32(const aotc_gather_elements_params *p, aotc_scatter_reduction reduction,
                               aotc_scatter_kind kind, size_t data_bytes, const void *data, const int32_t *indices,
                               const void *updates, void *y);

/* ScatterND: n index tuples of k coordinates each, each selecting a slice of slice_elems elements. */
typedef struct {
    int64_t n;
    int32_t k;
    int32_t elem_size;
    int64_t slice_elems;
    int64_t dims[AOTC_MAX_RANK];    /* data's first k dims */
    int64_t strides[AOTC_MAX_RANK]; /* their strides in elements */
} aotc_scatter_nd_params;

void aotc_scatter_nd(const aotc_scatter_nd_params *p, aotc_scatter_reduction reduction, aotc_scatter_kind kind,
                     size_t data_bytes, const void *data, const int64_t *indices, const void *updates, void *y);

/* ONNX GatherND: for each of `batch` batches (batch_dims), n index tuples of k coordinates into the
 * batch's data, each selecting a slice of slice_elems elements; out of range gives zeros. */
typedef struct {
    int64_t batch, n;
    int32_t k;
    int32_t elem_size;
    int64_t slice_elems;
    int64_t batch_elems;            /* data elements per batch */
    int64_t dims[AOTC_MAX_RANK];    /* the k indexed dims */
    int64_t strides[AOTC_MAX_RANK]; /* their strides in elements */
} aotc_gather_nd_params;

void aotc_gather_nd(const aotc_gather_nd_params *p, const void *data, const int64_t *indices, void *y);

/* ONNX Unique (index_unique.c) of x viewed as [outer, axis_dim, inner]: the distinct slices x[:, i, :]
 * (compared element by element in row-major order; every element of a flattened x when there is no axis),
 * in order of first occurrence or (sorted) ascending. y [outer, kept, inner] the slices; indices [kept]
 * each one's first occurrence, counts [kept] its occurrences, inverse [axis_dim] each slice's place in y
 * (any of the three int64 outputs may be NULL). Floats compare by value (-0 equals 0; NaNs equal each
 * other and above every number), bfloat16 as its float, integers and bool by value. kept is the count
 * the bundle was compiled for (the declared output shapes): data with another count writes nothing and
 * returns AOTC_ERR_SHAPE; 0 otherwise. With bounded set, kept is the outputs' capacity instead (y
 * [outer, kept, inner]): the count is returned, AOTC_ERR_SHAPE past kept. scratch: 4 * axis_dim int64. */
typedef enum { AOTC_UNIQUE_INT, AOTC_UNIQUE_UINT, AOTC_UNIQUE_FLOAT, AOTC_UNIQUE_BF16 } aotc_unique_kind;

typedef struct {
    int32_t outer, axis_dim, inner;
    int32_t elem_size;
    int32_t kind;   /* aotc_unique_kind of the elements */
    int32_t sorted; /* 1: ascending; 0: order of first occurrence */
    int32_t kept;
    int32_t bounded; /* 1: kept is the capacity, the distinct count is returned */
} aotc_unique_params;

int32_t aotc_unique(const aotc_unique_params *p, const void *x, void *y, int64_t *indices, int64_t *inverse,
                    int64_t *counts, int64_t *scratch);
/* the order of two elements of x's kind (negative, 0, positive), Unique's and its reference's */
int aotc_unique_compare(int32_t kind, int32_t elem_size, const uint8_t *a, const uint8_t *b);

#endif /* AOTC_INDEX_H */
