/* ONNX MaxPool, float32, NCHW (values only; with Indices: pool.c): portable C99, no allocation, no
 * globals. 2-D windows without dilation take two passes per output row, down the rows then across
 * the columns, through a padded row on the stack (maxpool_rows_f32); the rest pool_row
 * (pool_rows.h). A file of its own: the AVX-512 kernels of pool_avx512.h fall back to it, and a net
 * whose only window pools are MaxPools compiles only it. */
#include "pool_rows.h"

/* The max across one padded row of column maxima b: y[i] = b[s i] then, tap by tap, b[s i + t]
 * (t < k) when larger. Inlined with k and s constant for the usual windows: loops compilers
 * vectorise (stride-2 loads split into even and odd lanes). */
static inline void max_across(float *AOTC_RESTRICT y, const float *AOTC_RESTRICT b, int32_t n, int32_t k, int32_t s) {
    int32_t i, t;
    for (i = 0; i < n; ++i) {
        float v = b[(int64_t)s * i];
        for (t = 1; t < k; ++t) v = MAX_OF(v, b[(int64_t)s * i + t]);
        y[i] = v;
    }
}

/* Helium (a Cortex-M55; -DAOTC_NO_MVE: the plain C): both passes 4 outputs at a time, each MAX_OF
 * a compare and a select, exact on subnormals by the values' order keys (mve_select.h: the same
 * bits, a NaN never wins, -FLT_MAX starts the rows), the across pass's stride 2 by gathers, the last 1 to 3 outputs of a row by the plain
 * loop. gcc does not vectorise the compares for it (issue 52: 29 instructions an output of
 * Inception's 3 x 3 stride-1 pool). */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && !defined(AOTC_NO_MVE)
#include "mve_select.h"
#define POOL_MAX_HELIUM 1

/* the vectors of 4 at i of a row of n (n >= 4), the last ending at its end (again over a few, the
 * same values): STORE(i) stores the one at i */
#define ROW_VECTORS(n, STORE)                                                                         \
    {                                                                                                 \
        for (i = 0; i + 4 <= (n); i += 4) STORE(i)                                                    \
        if (i < (n)) STORE((n) - 4)                                                                   \
    }
/* the first row against -FLT_MAX (aotc_mve_max_of_normal), the others as a running max with its key */
#define DOWN3(i)                                                                                      \
    {                                                                                                 \
        float32x4_t v = aotc_mve_max_of_normal(lo, vld1q_f32(r0 + (i)));                              \
        int32x4_t kv = aotc_mve_order_key(v);                                                         \
        v = aotc_mve_max_of_keyed(v, &kv, vld1q_f32(r1 + (i)));                                       \
        vst1q_f32(body + (i), aotc_mve_max_of_last(v, kv, vld1q_f32(r2 + (i))));                    \
    }
#define DOWN2(i)                                                                                      \
    {                                                                                                 \
        float32x4_t v = aotc_mve_max_of_normal(lo, vld1q_f32(r0 + (i)));                              \
        int32x4_t kv = aotc_mve_order_key(v);                                                         \
        vst1q_f32(body + (i), aotc_mve_max_of_last(v, kv, vld1q_f32(r1 + (i))));                    \
    }
#define DOWNN(i)                                                                                      \
    {                                                                                                 \
        const float *x = r0 + (i);                                                                    \
        float32x4_t v = aotc_mve_max_of_normal(lo, vld1q_f32(x));                                     \
        int32x4_t kv = aotc_mve_order_key(v);                                                         \
        for (r = 1, x += in_w; r < n; ++r, x += in_w) v = aotc_mve_max_of_keyed(v, &kv, vld1q_f32(x)); \
        vst1q_f32(body + (i), v);                                                                     \
    }

/* body[i] = MAX_OF(... MAX_OF(-FLT_MAX, r[0][i]) ..., r[n - 1][i]) for n rows in_w apart */
static void max_down_mve(float *AOTC_RESTRICT body, const float *AOTC_RESTRICT r0, int32_t in_w, int32_t n) {
    const float32x4_t lo = vdupq_n_f32(-FLT_MAX);
    const float *AOTC_RESTRICT r1 = r0 + in_w, *AOTC_RESTRICT r2 = r1 + in_w;
    int32_t i, r;
    if (in_w < 4 || n < 1) {
        for (i = 0; i < in_w; ++i) {
            float v = -FLT_MAX;
            for (r = 0; r < n; ++r) v = MAX_OF(v, r0[(int64_t)r * in_w + i]);
            body[i] = v;
        }
    } else if (n == 3) {
        ROW_VECTORS(in_w, DOWN3)
    } else if (n == 2) {
        ROW_VECTORS(in_w, DOWN2)
    } else {
        ROW_VECTORS(in_w, DOWNN)
    }
}

/* max_across for strides 1 and 2 (k and s constant where inlined: always, -Os too) */
#define ACROSS(i)                                                                                     \
    {                                                                                                 \
        const float *x = b + (ptrdiff_t)s * (i);                                                      \
        float32x4_t v = s == 1 ? vld1q_f32(x) : vldrwq_gather_shifted_offset_f32(x, off);             \
        int32x4_t kv = aotc_mve_order_key(v);                                                         \
        for (t = 1; t + 1 < k; ++t)                                                                   \
            v = aotc_mve_max_of_keyed(v, &kv, s == 1 ? vld1q_f32(x + t) : vldrwq_gather_shifted_offset_f32(x + t, off)); \
        if (k > 1)                                                                                    \
            v = aotc_mve_max_of_last(v, kv, s == 1 ? vld1q_f32(x + t) : vldrwq_gather_shifted_offset_f32(x + t, off)); \
        vst1q_f32(y + (i), v);                                                                        \
    }
static inline __attribute__((always_inline)) void max_across_mve(float *AOTC_RESTRICT y, const float *AOTC_RESTRICT b, int32_t n, int32_t k,
                                  int32_t s) {
    const uint32x4_t off = vidupq_n_u32(0, 2); /* stride 2: lanes 2 floats apart */
    int32_t i, t;
    if (n < 4) {
        max_across(y, b, n, k, s);
        return;
    }
    ROW_VECTORS(n, ACROSS)
}
#undef ROW_VECTORS
#undef DOWN3
#undef DOWN2
#undef DOWNN
#undef ACROSS
#else
#define POOL_MAX_HELIUM 0
#endif

/* Planes [c0, c1) of a 2-D MaxPool with no dilation whose padded rows fit POOL_ROW_MAX, in two
 * passes per output row with no test inside either: the max down the window's input rows into a
 * row on the stack (from -FLT_MAX, in row order), whose padding columns hold -FLT_MAX, then across
 * it (max_across). The same order and steps as pool_row, so the same bits; 0 (nothing done) for
 * other pools. */
static int maxpool_rows_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y,
                            int32_t c0, int32_t c1) {
    const int32_t in_h = p->in[1], in_w = p->in[2], out_h = p->out[1], out_w = p->out[2];
    const int32_t kh = p->kernel[1], kw = p->kernel[2], sh = p->strides[1], sw = p->strides[2];
    const int32_t ph = p->pads_begin[1], pw = p->pads_begin[2];
    const int64_t span = (int64_t)(out_w - 1) * sw + kw; /* padded columns the windows cover */
    float row[POOL_ROW_MAX];
    float *AOTC_RESTRICT body = row + pw;
    int32_t c, oh, i, r;
    if (p->in[0] != 1 || p->out[0] != 1 || p->kernel[0] != 1 || p->pads_begin[0] != 0 || p->dilations[1] != 1 ||
        p->dilations[2] != 1 || span > POOL_ROW_MAX || (int64_t)pw + in_w > POOL_ROW_MAX) {
        return 0;
    }
    for (i = 0; i < POOL_ROW_MAX; ++i) row[i] = -FLT_MAX; /* the padding never wins */
    x += (int64_t)c0 * in_h * in_w, y += (int64_t)c0 * out_h * out_w;
    for (c = c0; c < c1; ++c, x += (int64_t)in_h * in_w) {
        for (oh = 0; oh < out_h; ++oh, y += out_w) {
            const int32_t h = oh * sh - ph, h0 = h < 0 ? 0 : h, h1 = h + kh < in_h ? h + kh : in_h;
            const float *AOTC_RESTRICT r0 = x + (int64_t)h0 * in_w;
#if POOL_MAX_HELIUM
            if (sw <= 2) {
                max_down_mve(body, r0, in_w, h1 - h0);
                if (kw == 3 && sw == 2) {
                    max_across_mve(y, row, out_w, 3, 2);
                } else if (kw == 2 && sw == 2) {
                    max_across_mve(y, row, out_w, 2, 2);
                } else if (kw == 3) {
                    max_across_mve(y, row, out_w, 3, 1);
                } else {
                    max_across_mve(y, row, out_w, kw, sw);
                }
                continue;
            }
#endif
            if (h1 - h0 == 3) {
                const float *AOTC_RESTRICT r1 = r0 + in_w, *AOTC_RESTRICT r2 = r1 + in_w;
                for (i = 0; i < in_w; ++i) body[i] = MAX_OF(MAX_OF(MAX_OF(-FLT_MAX, r0[i]), r1[i]), r2[i]);
            } else if (h1 - h0 == 2) {
                const float *AOTC_RESTRICT r1 = r0 + in_w;
                for (i = 0; i < in_w; ++i) body[i] = MAX_OF(MAX_OF(-FLT_MAX, r0[i]), r1[i]);
            } else {
                for (i = 0; i < in_w; ++i) body[i] = -FLT_MAX;
                for (r = h0; r < h1; ++r) max_into(body, x + (int64_t)r * in_w, 1, in_w);
            }
            if (kw == 3 && sw == 2) {
                max_across(y, row, out_w, 3, 2);
            } else if (kw == 2 && sw == 2) {
                max_across(y, row, out_w, 2, 2);
            } else if (kw == 3 && sw == 1) {
                max_across(y, row, out_w, 3, 1);
            } else if (kw == 2 && sw == 1) {
                max_across(y, row, out_w, 2, 1);
            } else {
                max_across(y, row, out_w, kw, sw);
            }
        }
    }
    return 1;
}

/* aotc_maxpool_f32's work for aotc_parallel_for: planes [begin, end), through maxpool_rows_f32 when
 * they fit, else pool_row */
typedef struct {
    const aotc_pool_params *p;
    const float *x;
    float *y;
} maxpool_job;

static void maxpool_planes(void *ctx, int32_t begin, int32_t end) {
    const maxpool_job *J = (const maxpool_job *)ctx;
    const aotc_pool_params *p = J->p;
    const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];
    const int32_t out_w = p->out[2];
    float *y = J->y + (int64_t)begin * p->out[0] * p->out[1] * out_w;
    int32_t c, od, oh;
    if (maxpool_rows_f32(p, J->x, J->y, begin, end)) return;
    for (c = begin; c < end; ++c) {
        const float *xplane = J->x + c * in_plane;
        for (od = 0; od < p->out[0]; ++od) {
            for (oh = 0; oh < p->out[1]; ++oh, y += out_w) pool_row(p, xplane, od, oh, 1, y);
        }
    }
}

/* Planes split across the thread pool of a --threads bundle (one call otherwise). */
void aotc_maxpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    maxpool_job J;
    J.p = p, J.x = x, J.y = y;
    aotc_parallel_for(maxpool_planes, &J, p->planes);
}
