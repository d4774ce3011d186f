/* Data movement kernels: copies, concatenation, splitting, slicing, transposition,
 * padding, gathering and casts. Except for the cast, they move bytes, so one kernel
 * serves every dtype: the element size in bytes is a parameter. The compiler works
 * out shapes, strides and offsets (in elements), so the kernels only loop. */
#ifndef AOTC_SHAPE_H
#define AOTC_SHAPE_H

#include "aotc_common.h"

/* Identity and views that cannot share their input's bytes (e.g. a Reshape that is a
 * graph output): dst[0..nbytes) = src[0..nbytes); src and dst may be the same. */
void aotc_copy(size_t nbytes, const void *src, void *dst);

/* A strided N-d copy: for every index (i0, .., ik) below shape,
 *   dst[dst_offset + sum(i * dst_strides)] = src[src_offset + sum(i * src_strides)].
 * ONNX Slice, Concat (one call per input), Split (one call per output) and Transpose. */
typedef struct {
    int32_t rank;                       /* dims in use, 1..AOTC_MAX_RANK */
    int32_t elem_size;                  /* bytes per element, e.g. 4 for float32 */
    int32_t shape[AOTC_MAX_RANK];       /* elements copied along each dim */
    int32_t src_strides[AOTC_MAX_RANK]; /* source step per dim in elements; negative for reversed Slice */
    int32_t dst_strides[AOTC_MAX_RANK]; /* destination step per dim in elements */
    int64_t src_offset;                 /* element index of the first element read, e.g. Slice starts */
    int64_t dst_offset;                 /* element index of the first element written, e.g. Concat position */
} aotc_strided_copy_params;

void aotc_strided_copy(const aotc_strided_copy_params *p, const void *src, void *dst);

/* ONNX Transpose whose permutation swaps two (merged) dims: a batch of 2-D transposes,
 * dst[b][c][r] = src[b][r][c]. Covers 2-D transposes, NCHW -> NHWC (rows = C, cols = H*W)
 * and NHWC -> NCHW (rows = H*W, cols = C). Cache-blocked. */
typedef struct {
    int32_t batch;     /* matrices, e.g. N */
    int32_t rows;      /* rows of each source matrix */
    int32_t cols;      /* columns of each source matrix */
    int32_t elem_size; /* bytes per element */
} aotc_transpose2d_params;

void aotc_transpose2d(const aotc_transpose2d_params *p, const void *src, void *dst);

/* aotc_transpose2d of one matrix of bytes (batch 1, elem_size 1) written over its own source: the
 * byte at index i = r * cols + c moves to c * rows + r = i * rows mod (rows * cols - 1) (the first
 * and last stay), each cycle of that permutation followed once from its leader (cycle following),
 * leaders[0 .. n_leaders) one index of each cycle longer than one byte (the compiler works them out).
 * No scratch. A channels-first graph input turned channels-last in its own slot under a
 * --ram-budget (NCHW -> NHWC: rows = C, cols = H * W), so that the image and its copy are never
 * alive together. rows * cols * min(rows, 4) < 2^32. */
void aotc_transpose2d_in_place(const aotc_transpose2d_params *p, void *data, const uint32_t *leaders,
                               int32_t n_leaders);

/* ONNX Pad, modes constant, edge, reflect and wrap. Negative ONNX pads (cropping) are
 * applied by the compiler through src_offset and in_shape; here every pad is >= 0.
 * Output index o along a dim reads input index o - pads_begin; outside the input that
 * index is replaced by the constant (constant), clamped (edge), mirrored without
 * repeating the border (reflect; the compiler ensures pads < in_shape) or wrapped (wrap). */
enum { AOTC_PAD_CONSTANT = 0, AOTC_PAD_EDGE = 1, AOTC_PAD_REFLECT = 2, AOTC_PAD_WRAP = 3 };

typedef struct {
    int32_t rank;                       /* dims in use, 1..AOTC_MAX_RANK */
    int32_t elem_size;                  /* bytes per element */
    int32_t mode;                       /* AOTC_PAD_CONSTANT, _EDGE, _REFLECT or _WRAP */
    int32_t out_shape[AOTC_MAX_RANK];   /* output dims */
    int32_t in_shape[AOTC_MAX_RANK];    /* dims of the input region read (after cropping) */
    int32_t pads_begin[AOTC_MAX_RANK];  /* elements added before the region along each dim, >= 0 */
    int32_t src_strides[AOTC_MAX_RANK]; /* input step per dim in elements */
    int64_t src_offset;                 /* element index of the region's first element */
} aotc_pad_params;

/* `value` points to one element (the pad value in the tensor's dtype); NULL unless constant mode. */
void aotc_pad(const aotc_pad_params *p, const void *src, const void *value, void *dst);

/* ONNX Slice whose starts, ends, axes and steps are read at run time (n of each; axes NULL: 0..n-1,
 * steps NULL: all 1). Negative starts and ends count from the end; then, as ONNX says, a start is
 * clamped to [0, dim] (step > 0) or [0, dim - 1] (step < 0), an end to [0, dim] or [-1, dim - 1].
 * The output shape was compiled in: values that give another (or name an axis twice, out of range,
 * or a step of 0) return AOTC_ERR_SHAPE and write nothing; else 0, after one aotc_strided_copy. */
typedef struct {
    int32_t rank;                     /* dims, 1..AOTC_MAX_RANK */
    int32_t elem_size;                /* bytes per element */
    int32_t in_shape[AOTC_MAX_RANK];  /* input dims */
    int32_t out_shape[AOTC_MAX_RANK]; /* output dims the bundle was compiled for */
} aotc_slice_values_params;

int32_t aotc_slice_values(const aotc_slice_values_params *p, int32_t n, const int64_t *starts, const int64_t *ends,
                          const int64_t *axes, const int64_t *steps, const void *src, void *dst);

/* ONNX Pad whose pads (2n values: the n begins, then the n ends) and axes (n of them; NULL: all the
 * rank's) are read at run time. Negative pads crop. Values that give another output shape than the
 * compiled one, crop more than an axis holds, name an axis twice or out of range, or pad by
 * reflection further than the axis reaches (edge, wrap: pad an axis cropped to nothing) return
 * AOTC_ERR_SHAPE and write nothing; else 0, after one aotc_pad. `value` as for aotc_pad. */
typedef struct {
    int32_t rank;                     /* dims, 1..AOTC_MAX_RANK */
    int32_t elem_size;                /* bytes per element */
    int32_t mode;                     /* AOTC_PAD_CONSTANT, _EDGE, _REFLECT or _WRAP */
    int32_t in_shape[AOTC_MAX_RANK];  /* input dims */
    int32_t out_shape[AOTC_MAX_RANK]; /* output dims the bundle was compiled for */
} aotc_pad_values_params;

int32_t aotc_pad_values(const aotc_pad_values_params *p, int32_t n, const int64_t *pads, const int64_t *axes,
                        const void *src, const void *value, void *dst);

/* ONNX Gather: data viewed as [outer, axis_dim, inner]; for every o and index j,
 * out[o][j][:] = data[o][indices[j]][:]. Negative indices count from the end.
 * Indices outside [-axis_dim, axis_dim) (onnxruntime raises an error) give zeros. */
typedef struct {
    int32_t outer;       /* product of data dims before axis */
    int32_t axis_dim;    /* data dim along axis */
    int32_t n_indices;   /* number of indices (product of the indices' dims; 1 for a scalar) */
    int64_t block_bytes; /* bytes per gathered slice: product of data dims after axis times element size */
} aotc_gather_params;

void aotc_gather_i64(const aotc_gather_params *p, const void *data, const int64_t *indices, void *out);
void aotc_gather_i32(const aotc_gather_params *p, const void *data, const int32_t *indices, void *out);

/* ONNX Cast between the element types below (bool is one byte, 0 or 1).
 * Float -> int64/int32: truncation; NaN and out-of-range values give the type's minimum,
 * as onnxruntime does on x86. Float -> int16/int8/uint8: through int32, then modulo 2^bits;
 * -> uint16/uint32: through int64, then modulo 2^bits; -> uint64: values from 2^63 up exactly.
 * float16/bfloat16: to float exactly, from float rounded to nearest even (NaN stays NaN); any other
 * type goes through float (from float64: rounded twice, as onnxruntime does). To int4/uint4/int2/uint2:
 * from an integer modulo 2^bits; from a float truncated, and 0 where that is out of the type's range (NaN too),
 * as onnx's reference (ml_dtypes 0.7; the spec leaves it undefined).
 * Integer narrowing wraps modulo 2^bits. Anything -> bool: x != 0 (NaN is true). */
typedef enum {
    AOTC_CAST_F32 = 0,
    AOTC_CAST_F64 = 1,
    AOTC_CAST_I64 = 2,
    AOTC_CAST_I32 = 3,
    AOTC_CAST_I16 = 4,
    AOTC_CAST_I8 = 5,
    AOTC_CAST_U8 = 6,
    AOTC_CAST_BOOL = 7,
    AOTC_CAST_U16 = 8,
    AOTC_CAST_U32 = 9,
    AOTC_CAST_U64 = 10,
    AOTC_CAST_F16 = 11, /* IEEE half, its bits in a uint16_t */
    AOTC_CAST_BF16 = 12, /* bfloat16, its bits in a uint16_t */
    AOTC_CAST_I4 = 13,   /* int4, uint4, int2, uint2: one per byte, in its low bits (as numpy's ml_dtypes) */
    AOTC_CAST_U4 = 14,
    AOTC_CAST_I2 = 15,
    AOTC_CAST_U2 = 16,
    AOTC_CAST_F8E4M3FN = 17, /* the float8 types, their bits in a uint8_t */
    AOTC_CAST_F8E4M3FNUZ = 18,
    AOTC_CAST_F8E5M2 = 19,
    AOTC_CAST_F8E5M2FNUZ = 20,
    AOTC_CAST_F4E2M1 = 21, /* float4 e2m1 (values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives), one per byte
                            * in its low bits (as ml_dtypes): to it rounded to nearest even, saturating at 6
                            * (infinities too), NaN to 0 with the other sign bit (ml_dtypes', onnx's reference) */
    AOTC_CAST_F8E8M0 = 22  /* float8 e8m0: 2^(c - 127), 0xff NaN; to it as aotc_cast_e8m0 (saturate, round up) */
} aotc_cast_type;

void aotc_cast(size_t n, aotc_cast_type from, aotc_cast_type to, const void *src, void *dst);
/* To a float8 type, through float: rounded to nearest even; what rounds past the largest finite value
 * (and infinities) gives it, with its sign, when saturate is set, else NaN (or infinity for E5M2);
 * the FNUZ types have no -0. aotc_cast saturates. */
void aotc_cast_f8(size_t n, aotc_cast_type from, aotc_cast_type to, int saturate, const void *src, void *dst);
/* To float8 e8m0 through float: the power of two at or below |x| (the sign is ignored), raised by the
 * rounding mode: up (by any fraction), down, or nearest (from 1.5 times it up), as onnx's reference
 * (numpy_helper.to_float8e8m0) does for normal floats; past 2^127, saturate keeps 0xfe, else NaN. Where
 * Cast's spec table says otherwise it is followed: infinity gives 0xfe with saturate (NaN without), and
 * what is below 2^-127 (0 too) gives 2^-127 with saturate and NaN without (the reference rounds float
 * subnormals from their exponent field, 2^-127 up to 2^-126). */
typedef enum { AOTC_ROUND_UP = 0, AOTC_ROUND_DOWN = 1, AOTC_ROUND_NEAREST = 2 } aotc_round_mode;
void aotc_cast_e8m0(size_t n, aotc_cast_type from, int saturate, aotc_round_mode mode, const void *src, void *dst);

#endif /* AOTC_SHAPE_H */
