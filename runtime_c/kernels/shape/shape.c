/* ONNX data movement ops: Identity/Reshape copies, Slice, Concat, Split, Transpose, Pad,
 * Gather and Cast: portable C99, no allocation, no globals.
 * Every kernel except aotc_cast works on raw bytes, with the element size as a parameter.
 * One kernel per op, a plain loop (the transpose tiled for the cache), checked against
 * shape_ref.c (tests/kernels_c/test_shape_kernels.c). */
#include "aotc_shape.h"

#include <math.h>
#include <string.h>

/* Square tile of aotc_transpose2d, in elements: small enough that a tile of rows and of
 * columns of 8-byte elements (2 x 16 x 16 x 8 = 4 KiB) stays in a small L1 cache. */
#define AOTC_TRANSPOSE_TILE 16

void aotc_copy(size_t nbytes, const void *src, void *dst) {
    if (src != dst) memmove(dst, src, nbytes);
}

/* Copy n elements of `size` bytes; src_step and dst_step are in bytes and may be negative.
 * The fixed-size memcpy calls compile to single loads and stores. */
static void copy_run(uint8_t *dst, int64_t dst_step, const uint8_t *src, int64_t src_step,
                     int32_t n, int32_t size) {
    int32_t i;
    if (src_step == size && dst_step == size) {
        memcpy(dst, src, (size_t)n * (size_t)size);
        return;
    }
    switch (size) {
    case 1:
        for (i = 0; i < n; ++i) dst[i * dst_step] = src[i * src_step];
        break;
    case 2:
        for (i = 0; i < n; ++i) memcpy(dst + i * dst_step, src + i * src_step, 2);
        break;
    case 4:
        for (i = 0; i < n; ++i) memcpy(dst + i * dst_step, src + i * src_step, 4);
        break;
    case 8:
        for (i = 0; i < n; ++i) memcpy(dst + i * dst_step, src + i * src_step, 8);
        break;
    default:
        for (i = 0; i < n; ++i) memcpy(dst + i * dst_step, src + i * src_step, (size_t)size);
        break;
    }
}

/* 4-byte elements on AVX-512F (without AOTC_NO_INTRINSICS): blocks of 16 x 16 transposed in registers
 * (unpacks, then 64-bit and 128-bit shuffles: 64 instructions a block), the edges by masked loads and
 * stores. Why (issue 64): the plain tiles gather a column element by element; ViT-tiny's k^T (3 x 197 x 64
 * floats) took 17.6 us a block, 0.47 ns a float. aotc_strided_copy takes them too for a copy whose last
 * dim is contiguous in dst and another dim contiguous in src (a permute that moves the innermost dim:
 * MobileViT's unfolding of patches). */
#if defined(__AVX512F__) && !defined(AOTC_NO_INTRINSICS)
#define TRANSPOSE_X86 1
#include <immintrin.h>

/* dst(c, r) = src(r, c) for r < nr, c < nc (both at most 16); src rows ss floats apart, dst rows ds apart */
static void transpose16_f32(const float *src, ptrdiff_t ss, float *dst, ptrdiff_t ds, int32_t nr, int32_t nc) {
    const __mmask16 in = (__mmask16)((1u << nc) - 1u), out = (__mmask16)((1u << nr) - 1u);
    __m512 r[16], t[16];
    int32_t i, q;
    for (i = 0; i < 16; ++i) r[i] = i < nr ? _mm512_maskz_loadu_ps(in, src + i * ss) : _mm512_setzero_ps();
    for (i = 0; i < 16; i += 2) { /* pairs of rows interleaved: t[i] lane l = r_i, r_i+1 at 4l, 4l+1 */
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (i = 0; i < 16; i += 4) { /* r[i + q], 128-bit lane l: column 4l + q of rows i .. i + 3 */
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (q = 0; q < 4; ++q) { /* column 4l + q: lane l of r[q], r[4 + q], r[8 + q], r[12 + q] */
        const __m512 v0 = _mm512_shuffle_f32x4(r[q], r[4 + q], 0x88), v1 = _mm512_shuffle_f32x4(r[q], r[4 + q], 0xDD);
        const __m512 w0 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0x88);
        const __m512 w1 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0xDD);
        t[q] = _mm512_shuffle_f32x4(v0, w0, 0x88);
        t[8 + q] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
        t[4 + q] = _mm512_shuffle_f32x4(v1, w1, 0x88);
        t[12 + q] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
    }
    for (i = 0; i < nc; ++i) _mm512_mask_storeu_ps(dst + i * ds, out, t[i]);
}

/* aotc_strided_copy of 4-byte elements whose last dim is contiguous in dst but not in src, and another dim
 * d (at least 4 long, as the last) contiguous in src: for every index of the other dims, the (last, d)
 * plane in 16 x 16 transposes. Returns 0 (nothing copied) where the copy is not of that form. */
static int strided_copy_transposes(const aotc_strided_copy_params *p, const float *s, float *dst) {
    const int32_t last = p->rank - 1;
    int32_t idx[AOTC_MAX_RANK] = {0}, d = -1, k, r0, c0;
    int64_t si = p->src_offset, di = p->dst_offset;
    if (p->elem_size != 4 || p->rank < 2 || p->dst_strides[last] != 1 || p->src_strides[last] == 1 ||
        p->shape[last] < 4)
        return 0;
    for (k = 0; k < last; ++k)
        if (p->src_strides[k] == 1 && p->shape[k] >= 4) d = k;
    if (d < 0) return 0;
    for (;;) {
        const ptrdiff_t ss = p->src_strides[last], ds = p->dst_strides[d];
        for (r0 = 0; r0 < p->shape[last]; r0 += 16)
            for (c0 = 0; c0 < p->shape[d]; c0 += 16)
                transpose16_f32(s + si + r0 * ss + c0, ss, dst + di + c0 * ds + r0, ds,
                                p->shape[last] - r0 < 16 ? p->shape[last] - r0 : 16,
                                p->shape[d] - c0 < 16 ? p->shape[d] - c0 : 16);
        for (k = last - 1; k >= 0; --k) { /* the next plane, odometer style over the dims but d */
            if (k == d) continue;
            si += p->src_strides[k];
            di += p->dst_strides[k];
            if (++idx[k] < p->shape[k]) break;
            si -= (int64_t)p->shape[k] * p->src_strides[k];
            di -= (int64_t)p->shape[k] * p->dst_strides[k];
            idx[k] = 0;
        }
        if (k < 0) return 1;
    }
}
#else
#define TRANSPOSE_X86 0
#endif

void aotc_strided_copy(const aotc_strided_copy_params *p, const void *src, void *dst) {
    const uint8_t *s = (const uint8_t *)src;
    uint8_t *d = (uint8_t *)dst;
    const int32_t last = p->rank - 1;
    const int64_t size = p->elem_size;
    int32_t idx[AOTC_MAX_RANK] = {0}; /* index over dims 0..last-1 of the current row */
    int64_t si = p->src_offset;       /* element index of the current row's first element */
    int64_t di = p->dst_offset;
    int32_t k;

    for (k = 0; k < p->rank; ++k) {
        if (p->shape[k] <= 0) return;
    }
#if TRANSPOSE_X86
    if (strided_copy_transposes(p, (const float *)src, (float *)dst)) return;
#endif
    for (;;) {
        copy_run(d + di * size, p->dst_strides[last] * size, s + si * size, p->src_strides[last] * size,
                 p->shape[last], p->elem_size);
        for (k = last - 1; k >= 0; --k) { /* next row, odometer style */
            si += p->src_strides[k];
            di += p->dst_strides[k];
            if (++idx[k] < p->shape[k]) break;
            si -= (int64_t)p->shape[k] * p->src_strides[k];
            di -= (int64_t)p->shape[k] * p->dst_strides[k];
            idx[k] = 0;
        }
        if (k < 0) return;
    }
}


void aotc_transpose2d(const aotc_transpose2d_params *p, const void *src, void *dst) {
    const int64_t size = p->elem_size;
    const int64_t matrix = (int64_t)p->rows * p->cols * size; /* bytes per matrix */
    int32_t b, r0, c0, c;

    for (b = 0; b < p->batch; ++b) {
        const uint8_t *s = (const uint8_t *)src + b * matrix;
        uint8_t *d = (uint8_t *)dst + b * matrix;
#if TRANSPOSE_X86
        if (size == 4) {
            for (r0 = 0; r0 < p->rows; r0 += 16)
                for (c0 = 0; c0 < p->cols; c0 += 16)
                    transpose16_f32((const float *)s + (ptrdiff_t)r0 * p->cols + c0, p->cols,
                                    (float *)d + (ptrdiff_t)c0 * p->rows + r0, p->rows,
                                    p->rows - r0 < 16 ? p->rows - r0 : 16, p->cols - c0 < 16 ? p->cols - c0 : 16);
            continue;
        }
#endif
        for (r0 = 0; r0 < p->rows; r0 += AOTC_TRANSPOSE_TILE) {
            const int32_t nr = p->rows - r0 < AOTC_TRANSPOSE_TILE ? p->rows - r0 : AOTC_TRANSPOSE_TILE;
            for (c0 = 0; c0 < p->cols; c0 += AOTC_TRANSPOSE_TILE) {
                const int32_t c1 = p->cols - c0 < AOTC_TRANSPOSE_TILE ? p->cols : c0 + AOTC_TRANSPOSE_TILE;
                for (c = c0; c < c1; ++c) { /* source column c becomes destination row c */
                    copy_run(d + ((int64_t)c * p->rows + r0) * size, size,
                             s + ((int64_t)r0 * p->cols + c) * size, p->cols * size, nr, p->elem_size);
                }
            }
        }
    }
}

/* One cycle of aotc_transpose2d_in_place from its leader: each byte put where it goes (i * rows mod m1, here
 * by `next`), the one there carried on. */
#define TRANSPOSE_CYCLE(next)                   \
    do {                                        \
        uint32_t i = start, j;                  \
        uint8_t v = a[start], t;                \
        do {                                    \
            next;                               \
            t = a[j], a[j] = v, v = t, i = j;   \
        } while (j != start);                   \
    } while (0)

void aotc_transpose2d_in_place(const aotc_transpose2d_params *p, void *data, const uint32_t *leaders,
                               int32_t n_leaders) {
    uint8_t *const a = (uint8_t *)data;
    const uint32_t rows = (uint32_t)p->rows, cols = (uint32_t)p->cols, m1 = rows * cols - 1u;
    int32_t k;

    for (k = 0; k < n_leaders; ++k) {
        const uint32_t start = leaders[k];
        if (rows == 3u) /* an RGB image: i * 3 < 3 m1, at most two subtractions */
            TRANSPOSE_CYCLE(j = i * 3u; j = j >= m1 ? j - m1 : j; j = j >= m1 ? j - m1 : j);
        else if (rows <= 4u) /* i * rows < 4 m1 < 2^32: the caller's bound */
            TRANSPOSE_CYCLE(j = i * rows; j = j >= m1 ? j - m1 : j; j = j >= m1 ? j - m1 : j;
                            j = j >= m1 ? j - m1 : j);
        else /* by the row and column of i */
            TRANSPOSE_CYCLE(uint32_t r = i / cols; j = (i - r * cols) * rows + r);
    }
}

#undef TRANSPOSE_CYCLE

/* Pad: the input index that output index o reads along one dim, or -1 for the pad value. */
static int32_t pad_source(int32_t o, int32_t pad_begin, int32_t n, int32_t mode) {
    int32_t i = o - pad_begin;
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case AOTC_PAD_EDGE:
        return i < 0 ? 0 : n - 1;
    case AOTC_PAD_REFLECT: /* the compiler keeps the pads below n, so one reflection suffices */
        return i < 0 ? -i : 2 * (n - 1) - i;
    case AOTC_PAD_WRAP:
        i %= n;
        return i < 0 ? i + n : i;
    default:
        return -1;
    }
}

/* Pad: one output element, from input element i of the row `src_row` or from the pad value. */
static void pad_element(uint8_t *dst, const uint8_t *src_row, int64_t src_step, int32_t i,
                        const void *value, size_t size) {
    if (i < 0) {
        memcpy(dst, value, size);
    } else {
        memcpy(dst, src_row + i * src_step, size);
    }
}

void aotc_pad(const aotc_pad_params *p, const void *src, const void *value, void *dst) {
    const uint8_t *s = (const uint8_t *)src;
    uint8_t *d = (uint8_t *)dst;
    const int32_t last = p->rank - 1;
    const int64_t size = p->elem_size;
    const int32_t row = p->out_shape[last];        /* output elements per row */
    const int32_t n = p->in_shape[last];           /* input elements per row */
    const int32_t pb = p->pads_begin[last];        /* output row = pb border, n input, rest border */
    const int64_t step = (int64_t)p->src_strides[last] * p->elem_size; /* bytes between row elements */
    int32_t idx[AOTC_MAX_RANK] = {0};              /* output index over dims 0..last-1 */
    int64_t rows = 1, r;
    int32_t k, o;

    for (k = 0; k < last; ++k) rows *= p->out_shape[k];
    for (r = 0; r < rows; ++r) {
        uint8_t *drow = d + r * row * size;
        int64_t si = p->src_offset; /* element index of the source row */
        int inside = 1;
        for (k = 0; k < last && inside; ++k) {
            const int32_t i = pad_source(idx[k], p->pads_begin[k], p->in_shape[k], p->mode);
            inside = i >= 0;
            si += (int64_t)i * p->src_strides[k];
        }
        if (!inside) { /* constant mode, row outside the input: all pad value */
            for (o = 0; o < row; ++o) memcpy(drow + o * size, value, (size_t)size);
        } else {
            const uint8_t *srow = s + si * size;
            for (o = 0; o < pb; ++o) {
                pad_element(drow + o * size, srow, step, pad_source(o, pb, n, p->mode), value, (size_t)size);
            }
            if (n > 0) copy_run(drow + pb * size, size, srow, step, n, p->elem_size);
            for (o = pb + n; o < row; ++o) {
                pad_element(drow + o * size, srow, step, pad_source(o, pb, n, p->mode), value, (size_t)size);
            }
        }
        for (k = last - 1; k >= 0; --k) { /* next output row */
            if (++idx[k] < p->out_shape[k]) break;
            idx[k] = 0;
        }
    }
}

/* The axis a run-time value names (negative: from the end), or -1 when out of range or named before. */
static int32_t named_axis(int64_t a, int32_t rank, uint32_t *seen) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank || (*seen >> a) & 1u) return -1;
    *seen |= 1u << a;
    return (int32_t)a;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

int32_t aotc_slice_values(const aotc_slice_values_params *p, int32_t n, const int64_t *starts, const int64_t *ends,
                          const int64_t *axes, const int64_t *steps, const void *src, void *dst) {
    aotc_strided_copy_params c;
    int64_t start[AOTC_MAX_RANK], step[AOTC_MAX_RANK], in_stride = 1, out_stride = 1;
    uint32_t seen = 0;
    int32_t k;

    if (n < 0 || n > p->rank) return AOTC_ERR_SHAPE;
    for (k = 0; k < p->rank; ++k) start[k] = 0, step[k] = 1;
    for (k = 0; k < n; ++k) {
        const int32_t a = named_axis(axes ? axes[k] : k, p->rank, &seen);
        const int64_t dim = p->in_shape[a < 0 ? 0 : a];
        int64_t s = starts[k], e = ends[k], st = steps ? steps[k] : 1, count;
        if (a < 0 || st == 0) return AOTC_ERR_SHAPE;
        if (st > dim) st = dim > 0 ? dim : 1; /* one element at most either way; keeps the stride small */
        if (st < -dim) st = dim > 0 ? -dim : -1;
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (st > 0) {
            s = clamp64(s, 0, dim);
            e = clamp64(e, 0, dim);
            count = e > s ? (e - s - 1) / st + 1 : 0;
        } else {
            s = clamp64(s, 0, dim - 1);
            e = clamp64(e, -1, dim - 1);
            count = s > e ? (s - e - 1) / -st + 1 : 0;
        }
        if (count != p->out_shape[a]) return AOTC_ERR_SHAPE;
        start[a] = s;
        step[a] = st;
    }
    for (k = 0; k < p->rank; ++k) {
        if (!((seen >> k) & 1u) && p->out_shape[k] != p->in_shape[k]) return AOTC_ERR_SHAPE;
    }
    c.rank = p->rank;
    c.elem_size = p->elem_size;
    c.src_offset = 0;
    c.dst_offset = 0;
    for (k = p->rank - 1; k >= 0; --k) {
        c.shape[k] = p->out_shape[k];
        c.src_strides[k] = (int32_t)(step[k] * in_stride);
        c.dst_strides[k] = (int32_t)out_stride;
        c.src_offset += start[k] * in_stride;
        in_stride *= p->in_shape[k];
        out_stride *= p->out_shape[k];
    }
    aotc_strided_copy(&c, src, dst);
    return 0;
}

int32_t aotc_pad_values(const aotc_pad_values_params *p, int32_t n, const int64_t *pads, const int64_t *axes,
                        const void *src, const void *value, void *dst) {
    aotc_pad_params c;
    int64_t begin[AOTC_MAX_RANK], end[AOTC_MAX_RANK], stride = 1;
    uint32_t seen = 0;
    int32_t k;

    if (n < 0 || n > p->rank || (!axes && n != p->rank)) return AOTC_ERR_SHAPE;
    for (k = 0; k < p->rank; ++k) begin[k] = 0, end[k] = 0;
    for (k = 0; k < n; ++k) {
        const int32_t a = named_axis(axes ? axes[k] : k, p->rank, &seen);
        if (a < 0 || pads[k] < -INT32_MAX || pads[k] > INT32_MAX || pads[n + k] < -INT32_MAX ||
            pads[n + k] > INT32_MAX) {
            return AOTC_ERR_SHAPE;
        }
        begin[a] = pads[k];
        end[a] = pads[n + k];
    }
    c.rank = p->rank;
    c.elem_size = p->elem_size;
    c.mode = p->mode;
    c.src_offset = 0;
    for (k = p->rank - 1; k >= 0; --k) {
        const int64_t crop_b = begin[k] < 0 ? -begin[k] : 0, crop_e = end[k] < 0 ? -end[k] : 0;
        const int64_t region = p->in_shape[k] - crop_b - crop_e;
        const int64_t wider = begin[k] > end[k] ? begin[k] : end[k];
        if (region < 0 || p->in_shape[k] + begin[k] + end[k] != p->out_shape[k]) return AOTC_ERR_SHAPE;
        if (p->mode != AOTC_PAD_CONSTANT && region == 0 && wider > 0) return AOTC_ERR_SHAPE;
        if (p->mode == AOTC_PAD_REFLECT && wider > region - 1 && wider > 0) return AOTC_ERR_SHAPE;
        c.out_shape[k] = p->out_shape[k];
        c.in_shape[k] = (int32_t)region;
        c.pads_begin[k] = (int32_t)(begin[k] > 0 ? begin[k] : 0);
        c.src_strides[k] = (int32_t)stride;
        if (region > 0) c.src_offset += crop_b * stride;
        stride *= p->in_shape[k];
    }
    aotc_pad(&c, src, value, dst);
    return 0;
}

/* Gather: copy data[o][index] to out[o][j], or zeros for an index out of range. */
static void gather_block(const aotc_gather_params *p, const uint8_t *data, int32_t o, int32_t j,
                         int64_t index, uint8_t *out) {
    uint8_t *dst = out + ((int64_t)o * p->n_indices + j) * p->block_bytes;
    if (index < 0) index += p->axis_dim;
    if (index >= 0 && index < p->axis_dim) {
        memcpy(dst, data + ((int64_t)o * p->axis_dim + index) * p->block_bytes, (size_t)p->block_bytes);
    } else {
        memset(dst, 0, (size_t)p->block_bytes);
    }
}

void aotc_gather_i64(const aotc_gather_params *p, const void *data, const int64_t *indices, void *out) {
    int32_t o, j;
    for (o = 0; o < p->outer; ++o) {
        for (j = 0; j < p->n_indices; ++j) {
            gather_block(p, (const uint8_t *)data, o, j, indices[j], (uint8_t *)out);
        }
    }
}

void aotc_gather_i32(const aotc_gather_params *p, const void *data, const int32_t *indices, void *out) {
    int32_t o, j;
    for (o = 0; o < p->outer; ++o) {
        for (j = 0; j < p->n_indices; ++j) {
            gather_block(p, (const uint8_t *)data, o, j, indices[j], (uint8_t *)out);
        }
    }
}

/* --- Cast: scalar conversion rules, all defined behaviour in C ---------------------- */

/* Modulo-2^bits narrowing of an integer, without implementation-defined conversions. */
static int32_t wrap_i32(int64_t v) {
    const uint32_t u = (uint32_t)v;
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) + INT32_MIN;
}
static int16_t wrap_i16(int64_t v) {
    const uint16_t u = (uint16_t)v;
    return u <= 32767u ? (int16_t)u : (int16_t)((int32_t)u - 65536);
}
static int8_t wrap_i8(int64_t v) {
    const uint8_t u = (uint8_t)v;
    return u <= 127u ? (int8_t)u : (int8_t)((int32_t)u - 256);
}
static int64_t int_to_i64(int64_t v) { return v; }
static uint8_t wrap_u8(int64_t v) { return (uint8_t)v; }
static uint8_t int_to_bool(int64_t v) { return v != 0; }
static uint16_t wrap_u16(int64_t v) { return (uint16_t)v; }
static uint32_t wrap_u32(int64_t v) { return (uint32_t)v; }
/* from an unsigned 64-bit source: no detour through int64_t (values from 2^63 up) */
static int64_t u64_to_i64(uint64_t v) {
    return v <= (uint64_t)INT64_MAX ? (int64_t)v : (int64_t)(v - 9223372036854775808u) + INT64_MIN;
}
static uint64_t u64_id(uint64_t v) { return v; }
static uint64_t int_to_u64(int64_t v) { return (uint64_t)v; }
static size_t aotc_cast_size(aotc_cast_type t) {
    switch (t) {
    case AOTC_CAST_F64: case AOTC_CAST_I64: case AOTC_CAST_U64: return 8;
    case AOTC_CAST_F32: case AOTC_CAST_I32: case AOTC_CAST_U32: return 4;
    case AOTC_CAST_I16: case AOTC_CAST_U16: case AOTC_CAST_F16: case AOTC_CAST_BF16: return 2;
    case AOTC_CAST_I4: case AOTC_CAST_U4: case AOTC_CAST_I2: case AOTC_CAST_U2: return 1;
    default: return 1;
    }
}

/* Float to integer: truncation toward zero; NaN and values outside the type give its
 * minimum (x86's "integer indefinite", which onnxruntime returns there). */
static int64_t real_to_i64(double x) {
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)x;
}
static int32_t real_to_i32(double x) {
    if (!(x > -2147483649.0 && x < 2147483648.0)) return INT32_MIN;
    return (int32_t)x;
}
static int16_t real_to_i16(double x) { return wrap_i16(real_to_i32(x)); }
static int8_t real_to_i8(double x) { return wrap_i8(real_to_i32(x)); }
static uint8_t real_to_u8(double x) { return wrap_u8(real_to_i32(x)); }
static uint8_t real_to_bool(double x) { return x != 0.0; }
static uint16_t real_to_u16(double x) { return wrap_u16(real_to_i64(x)); }
static uint32_t real_to_u32(double x) { return wrap_u32(real_to_i64(x)); }
static uint64_t real_to_u64(double x) {
    if (x >= 9223372036854775808.0 && x < 18446744073709551616.0)
        return (uint64_t)(x - 9223372036854775808.0) + 9223372036854775808u;
    return (uint64_t)real_to_i64(x);
}

/* d[i] = CONVERT(s[i]) for i < n. */
#define AOTC_CAST_LOOP(SRC_T, DST_T, CONVERT)                        \
    do {                                                             \
        const SRC_T *s_ = (const SRC_T *)src;                        \
        DST_T *d_ = (DST_T *)dst;                                    \
        size_t i_;                                                   \
        for (i_ = 0; i_ < n; ++i_) d_[i_] = (DST_T)CONVERT(s_[i_]);  \
    } while (0)

/* Every destination type from the floating-point type SRC_T. */
#define AOTC_CAST_FROM_REAL(SRC_T)                                                      \
    switch (to) {                                                                       \
    case AOTC_CAST_F32: AOTC_CAST_LOOP(SRC_T, float, (float)); break;                    \
    case AOTC_CAST_F64: AOTC_CAST_LOOP(SRC_T, double, (double)); break;                  \
    case AOTC_CAST_I64: AOTC_CAST_LOOP(SRC_T, int64_t, real_to_i64); break;              \
    case AOTC_CAST_I32: AOTC_CAST_LOOP(SRC_T, int32_t, real_to_i32); break;              \
    case AOTC_CAST_I16: AOTC_CAST_LOOP(SRC_T, int16_t, real_to_i16); break;              \
    case AOTC_CAST_I8: AOTC_CAST_LOOP(SRC_T, int8_t, real_to_i8); break;                 \
    case AOTC_CAST_U8: AOTC_CAST_LOOP(SRC_T, uint8_t, real_to_u8); break;                \
    case AOTC_CAST_BOOL: AOTC_CAST_LOOP(SRC_T, uint8_t, real_to_bool); break;            \
    case AOTC_CAST_U16: AOTC_CAST_LOOP(SRC_T, uint16_t, real_to_u16); break;             \
    case AOTC_CAST_U32: AOTC_CAST_LOOP(SRC_T, uint32_t, real_to_u32); break;             \
    case AOTC_CAST_U64: AOTC_CAST_LOOP(SRC_T, uint64_t, real_to_u64); break;             \
    default: break; /* halves and 2/4-bit: aotc_cast's own paths */                      \
    }

/* Every destination type from the integer type SRC_T (bool included). */
#define AOTC_CAST_FROM_INT(SRC_T)                                                       \
    switch (to) {                                                                       \
    case AOTC_CAST_F32: AOTC_CAST_LOOP(SRC_T, float, (float)); break;                    \
    case AOTC_CAST_F64: AOTC_CAST_LOOP(SRC_T, double, (double)); break;                  \
    case AOTC_CAST_I64: AOTC_CAST_LOOP(SRC_T, int64_t, int_to_i64); break;               \
    case AOTC_CAST_I32: AOTC_CAST_LOOP(SRC_T, int32_t, wrap_i32); break;                 \
    case AOTC_CAST_I16: AOTC_CAST_LOOP(SRC_T, int16_t, wrap_i16); break;                 \
    case AOTC_CAST_I8: AOTC_CAST_LOOP(SRC_T, int8_t, wrap_i8); break;                    \
    case AOTC_CAST_U8: AOTC_CAST_LOOP(SRC_T, uint8_t, wrap_u8); break;                   \
    case AOTC_CAST_BOOL: AOTC_CAST_LOOP(SRC_T, uint8_t, int_to_bool); break;             \
    case AOTC_CAST_U16: AOTC_CAST_LOOP(SRC_T, uint16_t, wrap_u16); break;                \
    case AOTC_CAST_U32: AOTC_CAST_LOOP(SRC_T, uint32_t, wrap_u32); break;                \
    case AOTC_CAST_U64: AOTC_CAST_LOOP(SRC_T, uint64_t, int_to_u64); break;              \
    default: break; /* halves and 2/4-bit: aotc_cast's own paths */                      \
    }

/* Every destination type from uint64_t: integers narrow modulo 2^bits, as from int64_t. */
#define AOTC_CAST_FROM_U64()                                                            \
    switch (to) {                                                                       \
    case AOTC_CAST_F32: AOTC_CAST_LOOP(uint64_t, float, (float)); break;                 \
    case AOTC_CAST_F64: AOTC_CAST_LOOP(uint64_t, double, (double)); break;               \
    case AOTC_CAST_U64: AOTC_CAST_LOOP(uint64_t, uint64_t, u64_id); break;               \
    case AOTC_CAST_BOOL: {                                                              \
        const uint64_t *s_ = (const uint64_t *)src;                                     \
        uint8_t *d_ = (uint8_t *)dst;                                                   \
        size_t i_;                                                                      \
        for (i_ = 0; i_ < n; ++i_) d_[i_] = s_[i_] != 0;                                \
        break;                                                                          \
    }                                                                                   \
    default: {                                                                          \
        const uint64_t *s_ = (const uint64_t *)src;                                     \
        size_t i_;                                                                      \
        for (i_ = 0; i_ < n; ++i_) {                                                    \
            const int64_t v_ = u64_to_i64(s_[i_]);                                      \
            aotc_cast(1, AOTC_CAST_I64, to, &v_, (char *)dst + i_ * aotc_cast_size(to)); \
        }                                                                               \
    }                                                                                   \
    }

/* float16 and bfloat16 by hand (no _Float16 needed): bits <-> float, rounding to nearest even. */
static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    float f;
    if (e == 0x1fu) {
        bits = sign | 0x7f800000u | (m << 13); /* inf, NaN (payload kept) */
    } else if (e == 0) {
        if (m == 0) {
            bits = sign;
        } else { /* subnormal: m * 2^-24, normalised */
            e = 113;
            while (!(m & 0x400u)) { m <<= 1; --e; }
            bits = sign | (e << 23) | ((m & 0x3ffu) << 13);
        }
    } else {
        bits = sign | ((e + 112u) << 23) | (m << 13);
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}
static uint16_t f32_to_f16(float f) {
    uint32_t x, ax, sign;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)); /* NaN, quiet */
    if (ax >= 0x47800000u) return (uint16_t)(sign | 0x7c00u);                        /* >= 2^16: inf */
    if (ax < 0x38800000u) { /* below 2^-14: a subnormal half (k * 2^-24) or zero */
        const uint32_t e = ax >> 23;
        uint32_t m, shift, k, rem, half;
        if (e < 102u) return (uint16_t)sign; /* below 2^-25: 0 (2^-25 itself is a tie, to even 0) */
        m = (ax & 0x7fffffu) | 0x800000u;
        shift = 126u - e;
        k = m >> shift;
        rem = m & ((1u << shift) - 1u);
        half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (k & 1u))) ++k;
        return (uint16_t)(sign | k);
    }
    ax += 0xfffu + ((ax >> 13) & 1u); /* to nearest even; a carry may reach the exponent (or inf) */
    return (uint16_t)(sign | ((ax - 0x38000000u) >> 13));
}
static float bf16_to_f32(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
static uint16_t f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* NaN, quiet */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static void cast_from_half(size_t n, aotc_cast_type from, aotc_cast_type to, const uint16_t *s, void *dst) {
    size_t i;
    if (to == AOTC_CAST_F32) {
        float *d = (float *)dst;
        for (i = 0; i < n; ++i) d[i] = from == AOTC_CAST_F16 ? f16_to_f32(s[i]) : bf16_to_f32(s[i]);
        return;
    }
    for (i = 0; i < n; ++i) {
        const float v = from == AOTC_CAST_F16 ? f16_to_f32(s[i]) : bf16_to_f32(s[i]);
        aotc_cast(1, AOTC_CAST_F32, to, &v, (char *)dst + i * aotc_cast_size(to));
    }
}

static void cast_to_half(size_t n, aotc_cast_type from, aotc_cast_type to, const void *src, uint16_t *d) {
    size_t i;
    if (from == AOTC_CAST_F32) {
        const float *s = (const float *)src;
        for (i = 0; i < n; ++i) d[i] = to == AOTC_CAST_F16 ? f32_to_f16(s[i]) : f32_to_bf16(s[i]);
        return;
    }
    for (i = 0; i < n; ++i) {
        float v;
        aotc_cast(1, from, AOTC_CAST_F32, (const char *)src + i * aotc_cast_size(from), &v);
        d[i] = to == AOTC_CAST_F16 ? f32_to_f16(v) : f32_to_bf16(v);
    }
}

/* float4 e2m1, one per byte in its low 4 bits: sign, 2 exponent bits (bias 1), 1 mantissa bit */
static float f4_to_f32(uint8_t c) {
    static const float magnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    return (c & 8) ? -magnitude[c & 7] : magnitude[c & 7];
}

static uint8_t f32_to_f4(float x) {
    const float a = fabsf(x);
    const uint8_t sign = signbit(x) ? 8 : 0;
    uint8_t code;
    if (a != a) return sign ^ 8; /* NaN: 0 with the other sign bit, as ml_dtypes converts it */
    if (a > 6.0f) code = 7;                                 /* saturated (infinities too) */
    else if (a < 2.0f) code = (uint8_t)nearbyintf(a * 2.0f); /* 0, 0.5, 1, 1.5, 2: codes 0..4 */
    else if (a < 4.0f) code = (uint8_t)(nearbyintf(a) + 2.0f); /* 2, 3, 4: codes 4..6 */
    else code = (uint8_t)(nearbyintf(a * 0.5f) + 4.0f);      /* 4, 6: codes 6, 7 (5 ties to 4) */
    return (uint8_t)(sign | code);
}

/* float8 e8m0: 2^(c - 127), 0xff NaN */
static float e8m0_to_f32(uint8_t c) { return c == 0xff ? NAN : ldexpf(1.0f, (int)c - 127); }

static uint8_t f32_to_e8m0(float x, int saturate, aotc_round_mode mode) {
    uint32_t bits, e, frac;
    memcpy(&bits, &x, 4);
    e = (bits >> 23) & 0xffu, frac = bits & 0x7fffffu;
    if (x != x) return 0xff;
    if (isinf(x)) return saturate ? 0xfe : 0xff; /* Cast's spec table */
    if (e == 0) {                                /* 0 and float subnormals: 2^-127 (code 0) or 2^-126 */
        if (frac < 0x400000u) return saturate ? 0 : 0xff; /* below 2^-127 (the table) */
        if (mode == AOTC_ROUND_UP) return frac > 0x400000u;
        return mode == AOTC_ROUND_NEAREST && frac >= 0x600000u;
    }
    if (mode == AOTC_ROUND_UP) e += frac != 0;
    else if (mode == AOTC_ROUND_NEAREST) e += (frac & 0x400000u) != 0; /* a tie up */
    if (e > 0xfe) return saturate ? 0xfe : 0xff;
    return (uint8_t)e;
}

static float narrow_float_to_f32(aotc_cast_type t, uint8_t c) { return t == AOTC_CAST_F4E2M1 ? f4_to_f32(c) : e8m0_to_f32(c); }
static int aotc_cast_narrow_float(aotc_cast_type t) { return t == AOTC_CAST_F4E2M1 || t == AOTC_CAST_F8E8M0; }

void aotc_cast_e8m0(size_t n, aotc_cast_type from, int saturate, aotc_round_mode mode, const void *src, void *dst) {
    size_t i;
    for (i = 0; i < n; ++i) {
        float v;
        aotc_cast(1, from, AOTC_CAST_F32, (const char *)src + i * aotc_cast_size(from), &v);
        ((uint8_t *)dst)[i] = f32_to_e8m0(v, saturate, mode);
    }
}

/* from or to float4 e2m1 / float8 e8m0: through float */
static void cast_narrow_float(size_t n, aotc_cast_type from, aotc_cast_type to, const void *src, void *dst) {
    size_t i;
    if (to == AOTC_CAST_F8E8M0) {
        aotc_cast_e8m0(n, from, 1, AOTC_ROUND_UP, src, dst);
        return;
    }
    for (i = 0; i < n; ++i) {
        float v;
        if (aotc_cast_narrow_float(from)) v = narrow_float_to_f32(from, ((const uint8_t *)src)[i]);
        else aotc_cast(1, from, AOTC_CAST_F32, (const char *)src + i * aotc_cast_size(from), &v);
        if (to == AOTC_CAST_F4E2M1) ((uint8_t *)dst)[i] = f32_to_f4(v);
        else aotc_cast(1, AOTC_CAST_F32, to, &v, (char *)dst + i * aotc_cast_size(to));
    }
}

static int aotc_cast_small(aotc_cast_type t) { return t >= AOTC_CAST_I4 && t <= AOTC_CAST_U2; }
static int aotc_cast_f8_type(aotc_cast_type t) { return t >= AOTC_CAST_F8E4M3FN && t <= AOTC_CAST_F8E5M2FNUZ; }

/* float8 formats: mantissa bits, exponent bias, largest finite code, unsigned-zero-NaN (FNUZ), infinity */
typedef struct { int m, bias, max_code, fnuz, has_inf; } f8_format;
static f8_format f8_of(aotc_cast_type t) {
    switch (t) {
    case AOTC_CAST_F8E4M3FN: { const f8_format f = {3, 7, 0x7e, 0, 0}; return f; }
    case AOTC_CAST_F8E4M3FNUZ: { const f8_format f = {3, 8, 0x7f, 1, 0}; return f; }
    case AOTC_CAST_F8E5M2: { const f8_format f = {2, 15, 0x7b, 0, 1}; return f; }
    default: { const f8_format f = {2, 16, 0x7f, 1, 0}; return f; }
    }
}

static float f8_to_f32(uint8_t c, f8_format f) {
    const int sign = c >> 7, mag = c & 0x7f, e = mag >> f.m, m = mag & ((1 << f.m) - 1);
    float v;
    if (f.fnuz ? c == 0x80 : (f.has_inf ? e == (0x7f >> f.m) && m != 0 : mag == 0x7f)) return NAN;
    if (f.has_inf && e == (0x7f >> f.m)) return sign ? -INFINITY : INFINITY;
    v = e == 0 ? ldexpf((float)m, 1 - f.bias - f.m) : ldexpf((float)(m + (1 << f.m)), e - f.bias - f.m);
    return sign ? -v : v;
}

static uint8_t f32_to_f8(float x, f8_format f, int saturate) {
    const uint8_t nan_code = f.fnuz ? 0x80 : 0x7f;
    const int negative = signbit(x) != 0, emin = 1 - f.bias;
    const float a = fabsf(x);
    int code;
    if (a != a) return nan_code;
    if (isinf(a)) {
        if (saturate) code = f.max_code;
        else return f.has_inf ? (uint8_t)((negative ? 0x80 : 0) | 0x7c) : nan_code;
    } else {
        int e;
        frexpf(a, &e); /* a = [0.5, 1) * 2^e */
        e -= 1;        /* a = [1, 2) * 2^e */
        if (a == 0.0f || e < emin) { /* subnormal (or zero): whole quanta of 2^(emin - m) */
            code = (int)nearbyintf(ldexpf(a, f.m - emin));
        } else {
            const int k = (int)nearbyintf(ldexpf(a, f.m - e)); /* 2^m .. 2^(m+1), to nearest even */
            code = e + f.bias > 0x7f >> f.m ? 0x7fff : (e + f.bias) * (1 << f.m) + (k - (1 << f.m));
        }
        if (code > f.max_code) {
            if (saturate) code = f.max_code;
            else return f.has_inf ? (uint8_t)((negative ? 0x80 : 0) | 0x7c) : nan_code;
        }
    }
    if (f.fnuz && code == 0) return 0; /* no -0 */
    return (uint8_t)((negative ? 0x80 : 0) | code);
}

void aotc_cast_f8(size_t n, aotc_cast_type from, aotc_cast_type to, int saturate, const void *src, void *dst) {
    const f8_format f = f8_of(to);
    size_t i;
    if (to == AOTC_CAST_F8E8M0) {
        aotc_cast_e8m0(n, from, saturate, AOTC_ROUND_UP, src, dst);
        return;
    }
    if (to == AOTC_CAST_F4E2M1) { /* always saturating (onnx's reference: ml_dtypes) */
        cast_narrow_float(n, from, to, src, dst);
        return;
    }
    for (i = 0; i < n; ++i) {
        float v;
        if (aotc_cast_f8_type(from)) v = f8_to_f32(((const uint8_t *)src)[i], f8_of(from));
        else aotc_cast(1, from, AOTC_CAST_F32, (const char *)src + i * aotc_cast_size(from), &v);
        ((uint8_t *)dst)[i] = f32_to_f8(v, f, saturate);
    }
}

/* The 2- and 4-bit integers, one per byte in its low bits: through int64_t either way. From a float: truncated,
 * and 0 where that is outside the type's range (NaN too), as onnx's reference (ml_dtypes 0.7, the node tests of
 * onnx 1.23; the spec leaves it undefined); from an integer, modulo 2^bits. */
static void cast_small(size_t n, aotc_cast_type from, aotc_cast_type to, const void *src, void *dst) {
    const int from_float = from == AOTC_CAST_F32 || from == AOTC_CAST_F64 || from == AOTC_CAST_F16 ||
                           from == AOTC_CAST_BF16; /* (the float8 and float4 types come as float) */
    const int to_signed = to == AOTC_CAST_I4 || to == AOTC_CAST_I2;
    const int to_bits = (to == AOTC_CAST_I4 || to == AOTC_CAST_U4) ? 4 : 2;
    const int64_t lo = to_signed ? -((int64_t)1 << (to_bits - 1)) : 0;
    const int64_t hi = to_signed ? ((int64_t)1 << (to_bits - 1)) - 1 : ((int64_t)1 << to_bits) - 1;
    size_t i;
    for (i = 0; i < n; ++i) {
        int64_t v;
        if (aotc_cast_small(from)) {
            const uint8_t b = ((const uint8_t *)src)[i];
            const int bits = (from == AOTC_CAST_I4 || from == AOTC_CAST_U4) ? 4 : 2;
            const uint8_t low = (uint8_t)(b & ((1u << bits) - 1u));
            const int is_signed = from == AOTC_CAST_I4 || from == AOTC_CAST_I2;
            v = (is_signed && (low >> (bits - 1))) ? (int64_t)low - (int64_t)(1 << bits) : (int64_t)low;
        } else {
            aotc_cast(1, from, AOTC_CAST_I64, (const char *)src + i * aotc_cast_size(from), &v);
        }
        if (aotc_cast_small(to)) {
            if (from_float && (v < lo || v > hi)) v = 0; /* (NaN and values past int64 came as INT64_MIN) */
            ((uint8_t *)dst)[i] = (uint8_t)((uint64_t)v & ((1u << to_bits) - 1u));
        } else {
            aotc_cast(1, AOTC_CAST_I64, to, &v, (char *)dst + i * aotc_cast_size(to));
        }
    }
}

void aotc_cast(size_t n, aotc_cast_type from, aotc_cast_type to, const void *src, void *dst) {
    if (aotc_cast_narrow_float(from) || aotc_cast_narrow_float(to)) {
        cast_narrow_float(n, from, to, src, dst);
        return;
    }
    if (aotc_cast_f8_type(to)) {
        aotc_cast_f8(n, from, to, 1, src, dst);
        return;
    }
    if (aotc_cast_f8_type(from)) { /* through float */
        size_t i;
        for (i = 0; i < n; ++i) {
            const float v = f8_to_f32(((const uint8_t *)src)[i], f8_of(from));
            aotc_cast(1, AOTC_CAST_F32, to, &v, (char *)dst + i * aotc_cast_size(to));
        }
        return;
    }
    if (aotc_cast_small(from) || aotc_cast_small(to)) {
        cast_small(n, from, to, src, dst);
        return;
    }
    if (from == AOTC_CAST_F16 || from == AOTC_CAST_BF16) {
        if (to == AOTC_CAST_F16 || to == AOTC_CAST_BF16) { /* through float: exact for f16 <-> bf16's range */
            size_t i;
            for (i = 0; i < n; ++i) {
                float v;
                cast_from_half(1, from, AOTC_CAST_F32, (const uint16_t *)src + i, &v);
                cast_to_half(1, AOTC_CAST_F32, to, &v, (uint16_t *)dst + i);
            }
            return;
        }
        cast_from_half(n, from, to, (const uint16_t *)src, dst);
        return;
    }
    if (to == AOTC_CAST_F16 || to == AOTC_CAST_BF16) {
        cast_to_half(n, from, to, src, (uint16_t *)dst);
        return;
    }
    switch (from) {
    case AOTC_CAST_F32: AOTC_CAST_FROM_REAL(float); break;
    case AOTC_CAST_F64: AOTC_CAST_FROM_REAL(double); break;
    case AOTC_CAST_I64: AOTC_CAST_FROM_INT(int64_t); break;
    case AOTC_CAST_I32: AOTC_CAST_FROM_INT(int32_t); break;
    case AOTC_CAST_I16: AOTC_CAST_FROM_INT(int16_t); break;
    case AOTC_CAST_I8: AOTC_CAST_FROM_INT(int8_t); break;
    case AOTC_CAST_U8: AOTC_CAST_FROM_INT(uint8_t); break;
    case AOTC_CAST_BOOL: AOTC_CAST_FROM_INT(uint8_t); break;
    case AOTC_CAST_U16: AOTC_CAST_FROM_INT(uint16_t); break;
    case AOTC_CAST_U32: AOTC_CAST_FROM_INT(uint32_t); break;
    case AOTC_CAST_U64: AOTC_CAST_FROM_U64(); break;
    default: break; /* halves and 2/4-bit: cast_from_half and cast_small, above */
    }
}
