/* ONNX elementwise ops, float32. Reference kernels: portable C99, written so
 * the compiler vectorises the contiguous loops; no allocation, no globals. One kernel
 * per op, already the plain loop: it is the family's reference (no elementwise_ref.c;
 * see kernels_ref.h). */
#include "aotc_elementwise.h"

#include <math.h>

/* ---- binary ops with broadcasting ------------------------------------------
 * The innermost dim is a plain loop (three variants so each one vectorises:
 * both contiguous, a broadcast, b broadcast); outer dims advance an odometer. */
#define AOTC_BINARY_F32(NAME, EXPR)                                                        \
    void aotc_##NAME##_f32(const aotc_broadcast *p, const float *a, const float *b,       \
                           float *y) {                                                    \
        const int32_t r = p->rank;                                                        \
        const int32_t n = p->shape[r - 1];                                                \
        const int32_t sa = p->a_strides[r - 1], sb = p->b_strides[r - 1];                 \
        int32_t idx[AOTC_MAX_RANK] = {0};                                                 \
        int64_t outer = 1, ao = 0, bo = 0, o;                                             \
        int32_t i, k;                                                                     \
        for (k = 0; k < r - 1; ++k) outer *= p->shape[k];                                 \
        for (o = 0; o < outer; ++o) {                                                     \
            const float *pa = a + ao, *pb = b + bo;                                       \
            if (sa == 1 && sb == 1) {                                                     \
                for (i = 0; i < n; ++i) { const float x0 = pa[i], x1 = pb[i]; y[i] = (EXPR); } \
            } else if (sa == 0 && sb == 1) {                                              \
                const float x0 = pa[0];                                                   \
                for (i = 0; i < n; ++i) { const float x1 = pb[i]; y[i] = (EXPR); }       \
            } else if (sa == 1 && sb == 0) {                                              \
                const float x1 = pb[0];                                                   \
                for (i = 0; i < n; ++i) { const float x0 = pa[i]; y[i] = (EXPR); }       \
            } else {                                                                      \
                for (i = 0; i < n; ++i) {                                                 \
                    const float x0 = pa[(int64_t)i * sa], x1 = pb[(int64_t)i * sb];       \
                    y[i] = (EXPR);                                                        \
                }                                                                         \
            }                                                                             \
            y += n;                                                                       \
            for (k = r - 2; k >= 0; --k) { /* next outer index */                         \
                ao += p->a_strides[k];                                                    \
                bo += p->b_strides[k];                                                    \
                if (++idx[k] < p->shape[k]) break;                                        \
                ao -= (int64_t)p->a_strides[k] * p->shape[k];                             \
                bo -= (int64_t)p->b_strides[k] * p->shape[k];                             \
                idx[k] = 0;                                                               \
            }                                                                             \
        }                                                                                 \
    }

AOTC_BINARY_F32(add, x0 + x1)
AOTC_BINARY_F32(sub, x0 - x1)
AOTC_BINARY_F32(mul, x0 * x1)
AOTC_BINARY_F32(div, x0 / x1)
AOTC_BINARY_F32(max, (x0 > x1 || x0 != x0) ? x0 : x1) /* NaN propagates, as in ONNX */
AOTC_BINARY_F32(min, (x0 < x1 || x0 != x0) ? x0 : x1)
AOTC_BINARY_F32(pow, powf(x0, x1))
AOTC_BINARY_F32(prelu, x0 < 0.0f ? x0 * x1 : x0)

/* ---- unary ops ----------------------------------------------------------- */
#define AOTC_UNARY_F32(NAME, EXPR)                                   \
    void aotc_##NAME##_f32(size_t n, const float *x, float *y) {     \
        size_t i;                                                    \
        for (i = 0; i < n; ++i) {                                    \
            const float v = x[i];                                    \
            y[i] = (EXPR);                                           \
        }                                                            \
    }

AOTC_UNARY_F32(relu, v > 0.0f ? v : 0.0f)
AOTC_UNARY_F32(sigmoid, 1.0f / (1.0f + expf(-v)))
AOTC_UNARY_F32(tanh, tanhf(v))
AOTC_UNARY_F32(hard_swish, v * fminf(fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f))
AOTC_UNARY_F32(exp, expf(v))
AOTC_UNARY_F32(log, logf(v))
AOTC_UNARY_F32(sqrt, sqrtf(v))
AOTC_UNARY_F32(neg, -v)
AOTC_UNARY_F32(abs, fabsf(v))
AOTC_UNARY_F32(erf, erff(v))
AOTC_UNARY_F32(reciprocal, 1.0f / v)
AOTC_UNARY_F32(floor, floorf(v))
AOTC_UNARY_F32(ceil, ceilf(v))
AOTC_UNARY_F32(softplus, v > 20.0f ? v : log1pf(expf(v)))
/* ONNX Gelu (opset 20): approximate "none" with erf, "tanh" with the tanh formula */
AOTC_UNARY_F32(gelu, 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f)))
AOTC_UNARY_F32(gelu_tanh, 0.5f * v * (1.0f + tanhf(0.79788456080286535588f * (v + 0.044715f * v * v * v))))

void aotc_leaky_relu_f32(size_t n, const float *x, float *y, float alpha) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = x[i] >= 0.0f ? x[i] : alpha * x[i];
}

void aotc_elu_f32(size_t n, const float *x, float *y, float alpha) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = x[i] >= 0.0f ? x[i] : alpha * expm1f(x[i]);
}

void aotc_clip_f32(size_t n, const float *x, float *y, float lo, float hi) {
    size_t i;
    for (i = 0; i < n; ++i) {
        const float v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
    }
}

void aotc_hard_sigmoid_f32(size_t n, const float *x, float *y, float alpha, float beta) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = fmaxf(0.0f, fminf(1.0f, alpha * x[i] + beta));
}
