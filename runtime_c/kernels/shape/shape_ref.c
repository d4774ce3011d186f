/* Reference kernels of the shape family (declared in kernels_ref.h): one output element at a time,
 * its index taken apart into coordinates and the element it reads worked out from them, a byte at
 * a time. Cast by value: the source element decoded to a real number (the halves and float8 types
 * from their fields, by ldexp), a signed or an unsigned integer, then encoded by the rules of
 * aotc_shape.h, the floating-point encodings rounded in double by nearbyint (to nearest even), the
 * float8 code found by trying all of them. shape.c is checked against these. */
#include "kernels_ref.h"

#include <math.h>
#include <string.h>

void aotc_copy_ref(size_t nbytes, const void *src, void *dst) {
    size_t i;
    if (src == dst) return;
    for (i = 0; i < nbytes; ++i) ((uint8_t *)dst)[i] = ((const uint8_t *)src)[i];
}

/* Element i of a row-major walk over shape (rank dims) taken apart into its coordinates. */
static void coords(int64_t i, int32_t rank, const int32_t *shape, int64_t *idx) {
    int32_t k;
    for (k = rank - 1; k >= 0; --k) {
        idx[k] = i % shape[k];
        i /= shape[k];
    }
}

static void copy_elem(uint8_t *dst, const uint8_t *src, int32_t size) {
    int32_t b;
    for (b = 0; b < size; ++b) dst[b] = src[b];
}

void aotc_strided_copy_ref(const aotc_strided_copy_params *p, const void *src, void *dst) {
    int64_t total = 1, i, idx[AOTC_MAX_RANK];
    int32_t k;
    for (k = 0; k < p->rank; ++k) total *= p->shape[k] > 0 ? p->shape[k] : 0;
    for (i = 0; i < total; ++i) {
        int64_t s = p->src_offset, d = p->dst_offset;
        coords(i, p->rank, p->shape, idx);
        for (k = 0; k < p->rank; ++k) s += idx[k] * p->src_strides[k], d += idx[k] * p->dst_strides[k];
        copy_elem((uint8_t *)dst + d * p->elem_size, (const uint8_t *)src + s * p->elem_size, p->elem_size);
    }
}

void aotc_transpose2d_ref(const aotc_transpose2d_params *p, const void *src, void *dst) {
    int64_t b, r, c;
    for (b = 0; b < p->batch; ++b) {
        for (r = 0; r < p->rows; ++r) {
            for (c = 0; c < p->cols; ++c) {
                copy_elem((uint8_t *)dst + ((b * p->cols + c) * p->rows + r) * p->elem_size,
                          (const uint8_t *)src + ((b * p->rows + r) * p->cols + c) * p->elem_size, p->elem_size);
            }
        }
    }
}

/* ONNX Pad along one dim: the input index output index o reads, or -1 for the constant. reflect
 * mirrors about the first and last elements (period 2 (n - 1)), wrap repeats the input (period n). */
static int64_t pad_index(int64_t o, int32_t pad_begin, int32_t n, int32_t mode) {
    const int64_t i = o - pad_begin;
    if (i >= 0 && i < n) return i;
    if (mode == AOTC_PAD_EDGE) return i < 0 ? 0 : n - 1;
    if (mode == AOTC_PAD_WRAP) return ((i % n) + n) % n;
    if (mode == AOTC_PAD_REFLECT) {
        const int64_t period = 2 * ((int64_t)n - 1);
        int64_t m;
        if (period == 0) return 0;
        m = ((i % period) + period) % period;
        return m < n ? m : period - m;
    }
    return -1;
}

void aotc_pad_ref(const aotc_pad_params *p, const void *src, const void *value, void *dst) {
    int64_t total = 1, i, idx[AOTC_MAX_RANK];
    int32_t k;
    for (k = 0; k < p->rank; ++k) total *= p->out_shape[k];
    for (i = 0; i < total; ++i) {
        int64_t s = p->src_offset;
        int inside = 1;
        coords(i, p->rank, p->out_shape, idx);
        for (k = 0; k < p->rank; ++k) {
            const int64_t j = pad_index(idx[k], p->pads_begin[k], p->in_shape[k], p->mode);
            if (j < 0) inside = 0;
            s += j * p->src_strides[k];
        }
        copy_elem((uint8_t *)dst + i * p->elem_size,
                  inside ? (const uint8_t *)src + s * p->elem_size : (const uint8_t *)value, p->elem_size);
    }
}

/* out[o][j] = data[o][index] (index counted from the end when negative), zeros outside */
static void gather_ref(const aotc_gather_params *p, const void *data, int64_t j, int64_t index, void *out) {
    int64_t o, b;
    if (index < 0) index += p->axis_dim;
    for (o = 0; o < p->outer; ++o) {
        uint8_t *to = (uint8_t *)out + (o * p->n_indices + j) * p->block_bytes;
        for (b = 0; b < p->block_bytes; ++b) {
            to[b] = index >= 0 && index < p->axis_dim
                        ? ((const uint8_t *)data)[(o * p->axis_dim + index) * p->block_bytes + b]
                        : 0;
        }
    }
}

void aotc_gather_i64_ref(const aotc_gather_params *p, const void *data, const int64_t *indices, void *out) {
    int64_t j;
    for (j = 0; j < p->n_indices; ++j) gather_ref(p, data, j, indices[j], out);
}

void aotc_gather_i32_ref(const aotc_gather_params *p, const void *data, const int32_t *indices, void *out) {
    int64_t j;
    for (j = 0; j < p->n_indices; ++j) gather_ref(p, data, j, indices[j], out);
}

/* ---- Cast by value ----------------------------------------------------------------------------- */

/* A source element's value: a real number (every floating-point type; exact in double), a signed
 * integer (every integer type but uint64, bool included) or an unsigned 64-bit one. */
enum { V_REAL, V_INT, V_U64 };
typedef struct {
    int kind;
    double r;
    int64_t i;
    uint64_t u;
} cast_value;

/* the float8 formats by the ONNX spec: mantissa bits, exponent bias, whether the top exponent holds
 * infinities (E5M2), whether the type is FNUZ (one NaN, 0x80; no -0) */
static void f8_format_ref(aotc_cast_type t, int *mbits, int *bias, int *has_inf, int *fnuz) {
    *mbits = t == AOTC_CAST_F8E4M3FN || t == AOTC_CAST_F8E4M3FNUZ ? 3 : 2;
    *fnuz = t == AOTC_CAST_F8E4M3FNUZ || t == AOTC_CAST_F8E5M2FNUZ;
    *has_inf = t == AOTC_CAST_F8E5M2;
    *bias = t == AOTC_CAST_F8E4M3FN ? 7 : t == AOTC_CAST_F8E4M3FNUZ ? 8 : t == AOTC_CAST_F8E5M2 ? 15 : 16;
}

double aotc_f8_decode_ref(aotc_cast_type t, uint8_t c) {
    int mbits, bias, has_inf, fnuz;
    const int sign = c >> 7;
    int e, m;
    double v;
    f8_format_ref(t, &mbits, &bias, &has_inf, &fnuz);
    e = (c & 0x7f) >> mbits, m = c & ((1 << mbits) - 1);
    if (fnuz && c == 0x80) return NAN;
    if (!fnuz && t == AOTC_CAST_F8E4M3FN && (c & 0x7f) == 0x7f) return NAN; /* E4M3FN: S.1111.111 */
    if (has_inf && e == 31) return m != 0 ? NAN : sign ? -INFINITY : INFINITY;
    v = e == 0 ? ldexp((double)m, 1 - bias - mbits) : ldexp((double)((1 << mbits) + m), e - bias - mbits);
    return sign ? -v : v;
}

static double half_decode(uint16_t h, int ebits, int mbits) {
    const int emax = (1 << ebits) - 1, bias = emax / 2;
    const int e = (h >> mbits) & emax, m = h & ((1 << mbits) - 1);
    double v;
    if (e == emax) v = m != 0 ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m, 1 - bias - mbits);
    else v = ldexp((double)((1 << mbits) + m), e - bias - mbits);
    return (h >> (ebits + mbits)) ? -v : v;
}

/* The value a (finite, >= 0) rounds to, to nearest even, in a binary format of mbits fraction bits
 * whose least normal exponent is emin (below it, whole quanta of 2^(emin - mbits)); unbounded above. */
static double round_to_format(double a, int mbits, int emin) {
    int e;
    if (a == 0.0) return 0.0;
    (void)frexp(a, &e); /* a in [2^(e-1), 2^e) */
    e = e - 1 < emin ? emin : e - 1;
    return ldexp(nearbyint(ldexp(a, mbits - e)), e - mbits);
}

/* float -> float16 / bfloat16 bits (the header's NaN: quiet; the test compares NaNs as NaNs) */
static uint16_t half_encode(float f, int ebits, int mbits) {
    const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
    const uint16_t sign = (uint16_t)(signbit(f) ? 1u << (ebits + mbits) : 0u);
    const uint16_t inf = (uint16_t)(((1u << ebits) - 1u) << mbits);
    double v;
    int e;
    if (f != f) return (uint16_t)(inf | (1u << (mbits - 1)));
    v = round_to_format(fabs((double)f), mbits, emin);
    if (v >= ldexp(1.0, bias + 1)) return (uint16_t)(sign | inf);
    if (v < ldexp(1.0, emin)) return (uint16_t)(sign | (uint16_t)ldexp(v, mbits - emin)); /* subnormal or 0 */
    (void)frexp(v, &e);
    return (uint16_t)(sign | (uint16_t)((e - 1 + bias) << mbits) | (uint16_t)(ldexp(v, mbits - (e - 1)) - ldexp(1.0, mbits)));
}

/* float -> a float8 type: rounded to nearest even, the code the one whose value that is (all tried) */
static uint8_t f8_encode(float f, aotc_cast_type t, int saturate) {
    int mbits, bias, has_inf, fnuz, c;
    double v, top = 0.0;
    const uint8_t nan_code = 0x7f;
    const int negative = signbit(f) != 0;
    f8_format_ref(t, &mbits, &bias, &has_inf, &fnuz);
    for (c = 0; c < 0x80; ++c) { /* the largest finite value */
        const double d = aotc_f8_decode_ref(t, (uint8_t)c);
        if (d == d && !isinf(d) && d > top) top = d;
    }
    if (f != f) return fnuz ? 0x80 : nan_code;
    v = isinf(f) ? INFINITY : round_to_format(fabs((double)f), mbits, 1 - bias);
    if (v > top) {
        if (saturate) v = top;
        else if (has_inf) return (uint8_t)((negative ? 0x80 : 0) | 0x7c);
        else return fnuz ? 0x80 : nan_code;
    }
    if (v == 0.0 && fnuz) return 0;
    for (c = 0; c < 0x80; ++c) {
        if (aotc_f8_decode_ref(t, (uint8_t)c) == v) return (uint8_t)((negative ? 0x80 : 0) | c);
    }
    return nan_code; /* not reached: every rounded value has a code */
}

/* float4 e2m1 by its fields: exponent (bias 1) and one mantissa bit; subnormal at exponent 0 */
static double f4_decode_ref(uint8_t c) {
    const int e = (c >> 1) & 3, m = c & 1;
    const double v = e == 0 ? 0.5 * m : ldexp(1.0 + 0.5 * m, e - 1);
    return (c & 8) ? -v : v;
}

/* to float4 e2m1: the nearest of its values (a tie to the even code), 6 past it; NaN as ml_dtypes */
static uint8_t f4_encode_ref(float f) {
    const double a = fabs((double)f);
    int c, best = 0;
    if (f != f) return signbit(f) ? 0 : 8;
    if (a >= 6.0) best = 7; /* infinities too */
    for (c = 1; c < 8 && best != 7; ++c) {
        const double d = fabs(f4_decode_ref((uint8_t)c) - a), b = fabs(f4_decode_ref((uint8_t)best) - a);
        if (d < b || (d == b && c % 2 == 0)) best = c;
    }
    return (uint8_t)((signbit(f) ? 8 : 0) | best);
}

/* to float8 e8m0 by value: |f| = (1 + r) 2^e, the code e + 127 raised by the rounding mode; aotc_shape.h's
 * rules for the special values */
static uint8_t e8m0_encode_ref(float f, int saturate, aotc_round_mode mode) {
    const double a = fabs((double)f);
    int code, e;
    double r;
    if (f != f) return 0xff;
    if (isinf(f)) return saturate ? 0xfe : 0xff;
    if (a < ldexp(1.0, -127)) return saturate ? 0 : 0xff;
    (void)frexp(a, &e);
    code = e - 1 + 127, r = a / ldexp(1.0, e - 1) - 1.0;
    code += mode == AOTC_ROUND_UP ? r > 0.0 : mode == AOTC_ROUND_NEAREST ? r >= 0.5 : 0;
    if (code > 0xfe) return saturate ? 0xfe : 0xff;
    return (uint8_t)code;
}

static size_t type_size(aotc_cast_type t) {
    switch (t) {
    case AOTC_CAST_F64: case AOTC_CAST_I64: case AOTC_CAST_U64: return 8;
    case AOTC_CAST_F32: case AOTC_CAST_I32: case AOTC_CAST_U32: return 4;
    case AOTC_CAST_I16: case AOTC_CAST_U16: case AOTC_CAST_F16: case AOTC_CAST_BF16: return 2;
    default: return 1;
    }
}

static cast_value decode(aotc_cast_type t, const uint8_t *e) {
    cast_value v;
    memset(&v, 0, sizeof v);
    v.kind = V_INT;
    switch (t) {
    case AOTC_CAST_F32: { float f; memcpy(&f, e, 4); v.kind = V_REAL, v.r = f; break; }
    case AOTC_CAST_F64: { double d; memcpy(&d, e, 8); v.kind = V_REAL, v.r = d; break; }
    case AOTC_CAST_F16: case AOTC_CAST_BF16: {
        uint16_t h;
        memcpy(&h, e, 2);
        v.kind = V_REAL, v.r = t == AOTC_CAST_F16 ? half_decode(h, 5, 10) : half_decode(h, 8, 7);
        break;
    }
    case AOTC_CAST_I64: memcpy(&v.i, e, 8); break;
    case AOTC_CAST_I32: { int32_t x; memcpy(&x, e, 4); v.i = x; break; }
    case AOTC_CAST_I16: { int16_t x; memcpy(&x, e, 2); v.i = x; break; }
    case AOTC_CAST_I8: v.i = (int8_t)e[0]; break;
    case AOTC_CAST_U8: case AOTC_CAST_BOOL: v.i = e[0]; break;
    case AOTC_CAST_U16: { uint16_t x; memcpy(&x, e, 2); v.i = x; break; }
    case AOTC_CAST_U32: { uint32_t x; memcpy(&x, e, 4); v.i = x; break; }
    case AOTC_CAST_U64: memcpy(&v.u, e, 8), v.kind = V_U64; break;
    case AOTC_CAST_I4: v.i = (e[0] & 15) - ((e[0] & 8) ? 16 : 0); break;
    case AOTC_CAST_U4: v.i = e[0] & 15; break;
    case AOTC_CAST_I2: v.i = (e[0] & 3) - ((e[0] & 2) ? 4 : 0); break;
    case AOTC_CAST_U2: v.i = e[0] & 3; break;
    case AOTC_CAST_F4E2M1: v.kind = V_REAL, v.r = f4_decode_ref(e[0] & 15); break;
    case AOTC_CAST_F8E8M0: v.kind = V_REAL, v.r = e[0] == 0xff ? NAN : ldexp(1.0, e[0] - 127); break;
    default: v.kind = V_REAL, v.r = aotc_f8_decode_ref(t, e[0]); break;
    }
    return v;
}

/* the integer types' bits, signedness (bool apart) */
static int int_bits(aotc_cast_type t, int *is_signed) {
    *is_signed = t == AOTC_CAST_I64 || t == AOTC_CAST_I32 || t == AOTC_CAST_I16 || t == AOTC_CAST_I8 ||
                 t == AOTC_CAST_I4 || t == AOTC_CAST_I2;
    switch (t) {
    case AOTC_CAST_I64: case AOTC_CAST_U64: return 64;
    case AOTC_CAST_I32: case AOTC_CAST_U32: return 32;
    case AOTC_CAST_I16: case AOTC_CAST_U16: return 16;
    case AOTC_CAST_I8: case AOTC_CAST_U8: return 8;
    case AOTC_CAST_I4: case AOTC_CAST_U4: return 4;
    case AOTC_CAST_I2: case AOTC_CAST_U2: return 2;
    default: return 0;
    }
}

/* a real number to int64 (truncated; NaN and out of range: INT64_MIN) and to int32 (INT32_MIN) */
static int64_t real_i64(double r) { return r >= -9223372036854775808.0 && r < 9223372036854775808.0 ? (int64_t)r : INT64_MIN; }
static int64_t real_i32(double r) { return r > -2147483649.0 && r < 2147483648.0 ? (int64_t)r : INT32_MIN; }

/* the low `bits` bits of u as the type's element (little-endian bytes, sign-extended bytes) */
static void store_int(uint8_t *e, uint64_t u, int bits, size_t size) {
    size_t b;
    if (bits < 64) u &= (((uint64_t)1 << bits) - 1u);
    for (b = 0; b < size; ++b) e[b] = (uint8_t)(u >> (8 * b));
}

/* A NaN keeps its sign (float4's code depends on it): a soft-float double -> float conversion (the M4's
 * libgcc) returns the default NaN, which has none. */
static float to_float(cast_value v) {
    if (v.kind == V_REAL && v.r != v.r) return signbit(v.r) ? -NAN : NAN;
    return v.kind == V_REAL ? (float)v.r : v.kind == V_INT ? (float)v.i : (float)v.u;
}

static void encode(aotc_cast_type t, cast_value v, int saturate, uint8_t *e) {
    int is_signed, bits = int_bits(t, &is_signed);
    if (t == AOTC_CAST_F32) {
        const float f = to_float(v);
        memcpy(e, &f, 4);
    } else if (t == AOTC_CAST_F64) {
        const double d = v.kind == V_REAL ? v.r : v.kind == V_INT ? (double)v.i : (double)v.u;
        memcpy(e, &d, 8);
    } else if (t == AOTC_CAST_F16 || t == AOTC_CAST_BF16) { /* through float */
        const uint16_t h = t == AOTC_CAST_F16 ? half_encode(to_float(v), 5, 10) : half_encode(to_float(v), 8, 7);
        memcpy(e, &h, 2);
    } else if (t == AOTC_CAST_F4E2M1) {
        e[0] = f4_encode_ref(to_float(v));
    } else if (t == AOTC_CAST_F8E8M0) {
        e[0] = e8m0_encode_ref(to_float(v), saturate, AOTC_ROUND_UP);
    } else if (t >= AOTC_CAST_F8E4M3FN) {
        e[0] = f8_encode(to_float(v), t, saturate);
    } else if (t == AOTC_CAST_BOOL) {
        e[0] = v.kind == V_REAL ? v.r != 0.0 : v.kind == V_INT ? v.i != 0 : v.u != 0;
    } else if (v.kind == V_REAL) {
        uint64_t u;
        if (t == AOTC_CAST_U64 && v.r >= 9223372036854775808.0 && v.r < 18446744073709551616.0) {
            u = (uint64_t)v.r;
        } else if (bits == 32 && is_signed) {
            u = (uint64_t)real_i32(v.r);
        } else if (bits == 16 && !is_signed) {
            u = (uint64_t)real_i64(v.r);
        } else if (bits <= 4) { /* the 2- and 4-bit types: truncated, 0 out of their range (NaN too) */
            const double lo = is_signed ? -(double)(1 << (bits - 1)) : 0.0;
            const double hi = is_signed ? (double)(1 << (bits - 1)) - 1.0 : (double)(1 << bits) - 1.0;
            u = v.r > lo - 1.0 && v.r < hi + 1.0 ? (uint64_t)(int64_t)v.r : 0u;
        } else if (bits <= 16) {
            u = (uint64_t)real_i32(v.r); /* int16, int8, uint8: through int32 */
        } else {
            u = (uint64_t)real_i64(v.r); /* int64, uint32, uint64: through int64 */
        }
        store_int(e, u, bits, type_size(t));
    } else {
        store_int(e, v.kind == V_INT ? (uint64_t)v.i : v.u, bits, type_size(t));
    }
}

void aotc_cast_ref(size_t n, aotc_cast_type from, aotc_cast_type to, const void *src, void *dst) {
    size_t i;
    for (i = 0; i < n; ++i) {
        encode(to, decode(from, (const uint8_t *)src + i * type_size(from)), 1, (uint8_t *)dst + i * type_size(to));
    }
}

void aotc_cast_f8_ref(size_t n, aotc_cast_type from, aotc_cast_type to, int saturate, const void *src, void *dst) {
    size_t i;
    for (i = 0; i < n; ++i) {
        encode(to, decode(from, (const uint8_t *)src + i * type_size(from)), saturate, (uint8_t *)dst + i);
    }
}

void aotc_cast_e8m0_ref(size_t n, aotc_cast_type from, int saturate, aotc_round_mode mode, const void *src,
                        void *dst) {
    size_t i;
    for (i = 0; i < n; ++i) {
        const cast_value v = decode(from, (const uint8_t *)src + i * type_size(from));
        ((uint8_t *)dst)[i] = e8m0_encode_ref(to_float(v), saturate, mode);
    }
}
