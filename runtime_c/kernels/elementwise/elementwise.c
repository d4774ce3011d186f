/* ONNX elementwise ops, the float32 ones most float models use: broadcasting arithmetic and the
 * activations, with and without parameters. The family's other files hold Max/Min and PRelu
 * (elementwise_minmax.c), float64 arithmetic (elementwise_f64.c), integer, comparison and rarer
 * float ops (elementwise_impl.h says which): a bundle compiles only the files whose kernels it calls.
 *
 * Reference kernels: portable C99, written so the compiler vectorises the contiguous loops; no
 * allocation, no globals. One kernel per op and dtype, already the plain loop: it is the
 * family's reference (no elementwise_ref.c; see kernels_ref.h). The per-dtype kernels come from
 * one macro body each (AOTC_BINARY, AOTC_UNARY) instantiated over type lists, so every dtype runs
 * the same loop. Integer arithmetic is done in uint64_t and narrowed, so overflow wraps as in
 * onnxruntime instead of being undefined behaviour; division and modulo by zero give 0
 * (onnxruntime traps), INT_MIN / -1 wraps. */
#include "elementwise_impl.h"
#include "aotc_threads.h"

/* The clamps of HardSwish, HardSigmoid, Celu and Clip are compares, not fmaxf/fminf: without
 * -ffast-math those are library calls (their NaN rules are not maxps'), one per element, and the loop
 * stays scalar: HardSwish was 76 % of a MobileNetV3's time, 4.3x onnxruntime's. Each compare is
 * written so that NaN comes out NaN, as onnxruntime's does. */

/* v * min(max(v / 6 + 1/2, 0), 1), with v / 6 as v * (1 / 6): onnxruntime's bits (and HardSigmoid's
 * with alpha 1/6, whose Mul fuse_activation.py makes a HardSwish). Above 1 the result is v itself
 * (v * 1), picked after the product: with the product of a clamped factor gcc's PRE splits v * t
 * into v * 0 and v on the two sides of the clamp, and a multiply under a condition (it may trap, to
 * gcc) keeps the loop scalar wherever there is no masked arithmetic (SSE, AVX2). `p == p` (always
 * true above 1) makes p needed on both sides, so that it is not sunk under the condition either. */
static inline float hard_swish(float v) {
    const float t = v * (1.0f / 6.0f) + 0.5f;
    const float p = v * (t < 0.0f ? 0.0f : t);
    return ((t > 1.0f) & (p == p)) ? v : p;
}

AOTC_BINARY(add, f32, float, float, x0 + x1)
AOTC_BINARY(sub, f32, float, float, x0 - x1)
AOTC_BINARY(mul, f32, float, float, x0 * x1)
AOTC_BINARY(div, f32, float, float, x0 / x1)

/* NaN stays NaN and -0 stays -0, as onnxruntime's. With Helium (a Cortex-M55; -DAOTC_NO_MVE: the
 * plain loop) 4 at a time by an integer compare and a select (mve_select.h), the same bits: gcc does not
 * vectorise the compare for it (issue 52: 8 instructions an element). */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && !defined(AOTC_NO_MVE)
#include "mve_select.h"
void aotc_relu_f32(size_t n, const float *x, float *y) {
    const float32x4_t zero = vdupq_n_f32(0.0f);
    const int32x4_t below = vdupq_n_s32(-8388609);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, aotc_mve_relu(vld1q_f32(x + i), zero, below));
    for (; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}
#else
AOTC_UNARY_F32(relu, v < 0.0f ? 0.0f : v)
#endif
/* Sigmoid, Tanh and the activations made of e^x: fast_math.h, so the loops vectorise (within 3 ulp) */
AOTC_UNARY_F32(sigmoid, aotc_sigmoid_poly(v))
AOTC_UNARY_F32(tanh, aotc_tanh_poly(v))
AOTC_UNARY_F32(hard_swish, hard_swish(v))
AOTC_UNARY_F32(exp, expf(v))
AOTC_UNARY_F32(log, logf(v))
AOTC_UNARY_F32(sqrt, sqrtf(v))
AOTC_UNARY_F32(erf, erff(v))
AOTC_UNARY_F32(reciprocal, 1.0f / v)
AOTC_UNARY_F32(floor, floorf(v))
AOTC_UNARY_F32(ceil, ceilf(v))
/* Round: half to even, as rintf in the default rounding mode */
AOTC_UNARY_F32(round, rintf(v))
/* ONNX Gelu (opset 20): approximate "none" with erf, "tanh" with the tanh formula */
#if AOTC_GELU_X86
void aotc_gelu_f32(size_t n, const float *x, float *y) { aotc_gelu_avx512(x, y, n); } /* fast_math.h */
#elif AOTC_GELU_AVX2
void aotc_gelu_f32(size_t n, const float *x, float *y) { aotc_gelu_avx2(x, y, n); } /* fast_math.h, no AVX-512 */
#else
AOTC_UNARY_F32(gelu, 0.5f * v * (1.0f + aotc_erf_poly(v * 0.70710678118654752440f))) /* GELU: erf in registers (fast_math.h) */
#endif
#if AOTC_GELU_TANH_X86
void aotc_gelu_tanh_f32(size_t n, const float *x, float *y) { aotc_gelu_tanh_avx512(x, y, n); } /* fast_math.h */
#elif AOTC_GELU_AVX2
void aotc_gelu_tanh_f32(size_t n, const float *x, float *y) { aotc_gelu_tanh_avx2(x, y, n); } /* no AVX-512 */
#else
AOTC_UNARY_F32(gelu_tanh, 0.5f * v * (1.0f + aotc_tanh_poly(0.79788456080286535588f * (v + 0.044715f * v * v * v))))
#endif

/* every dtype: neg and abs wrap for the most negative integer, as onnxruntime's do */
AOTC_UNARY(neg, f32, float, float, -v)
AOTC_UNARY(abs, f32, float, float, fabsf(v))
AOTC_UNARY(sign, f32, float, float, (v > 0) - (v < 0))

/* The float kernels with parameters: y[i] = EXPR of v = x[i]. */
#define AOTC_MAP_F32(EXPR)                                                  \
    do {                                                                    \
        size_t i;                                                           \
        for (i = 0; i < n; ++i) { const float v = x[i]; y[i] = (EXPR); }    \
    } while (0)

/* Swish (opset 24) x * sigmoid(alpha x); with alpha = 1 the SiLU that Sigmoid -> Mul is fused into
 * (aot/passes/fuse_activation.py). With a pool, runs of SWISH_RUN elements split over its threads:
 * EfficientNet-B0's 49 SiLUs took 1.9 ms of its 7.6 at two threads on one of them. */
#define SWISH_RUN 4096 /* a multiple of the vector loop's 16: every element takes the same path */
typedef struct {
    const float *x;
    float *y;
    size_t n;
    float alpha;
} swish_job;

static void swish_runs(void *arg, int32_t begin, int32_t end) {
    const swish_job *J = (const swish_job *)arg;
    const size_t lo = (size_t)begin * SWISH_RUN, hi = (size_t)end * SWISH_RUN < J->n ? (size_t)end * SWISH_RUN : J->n;
    const float *x = J->x + lo, alpha = J->alpha;
    float *y = J->y + lo;
    const size_t n = hi - lo;
#if AOTC_SWISH_X86
    aotc_swish_avx512(x, y, n, alpha); /* fast_math.h's AVX-512 SiLU */
#elif AOTC_SWISH_AVX2
    aotc_swish_avx2(x, y, n, alpha); /* its AVX2 SiLU, without AVX-512 */
#else
    AOTC_MAP_F32(v * aotc_sigmoid_poly(alpha * v));
#endif
}

void aotc_swish_f32(size_t n, const float *x, float *y, float alpha) {
    swish_job J;
    J.x = x, J.y = y, J.n = n, J.alpha = alpha;
    aotc_parallel_for(swish_runs, &J, (int32_t)((n + SWISH_RUN - 1) / SWISH_RUN));
}

void aotc_leaky_relu_f32(size_t n, const float *x, float *y, float alpha) { AOTC_MAP_F32(v >= 0.0f ? v : alpha * v); }

void aotc_elu_f32(size_t n, const float *x, float *y, float alpha) {
    AOTC_MAP_F32(v >= 0.0f ? v : alpha * aotc_expm1_poly(v));
}

void aotc_selu_f32(size_t n, const float *x, float *y, float alpha, float gamma) {
    AOTC_MAP_F32(gamma * (v > 0.0f ? v : alpha * aotc_expm1_poly(v)));
}

/* max(0, v) + min(0, alpha (e^(v / alpha) - 1)), the exponential taken for every v (no multiply
 * under a condition); NaN gives NaN (by the second term), -0 gives +0 */
static inline float celu(float v, float alpha) {
    const float e = alpha * aotc_expm1_poly(v / alpha);
    return (v > 0.0f ? v : 0.0f) + (e > 0.0f ? 0.0f : e);
}

void aotc_celu_f32(size_t n, const float *x, float *y, float alpha) {
    AOTC_MAP_F32(celu(v, alpha));
}

void aotc_thresholded_relu_f32(size_t n, const float *x, float *y, float alpha) { AOTC_MAP_F32(v > alpha ? v : 0.0f); }

void aotc_shrink_f32(size_t n, const float *x, float *y, float lambd, float bias) {
    AOTC_MAP_F32(v < -lambd ? v + bias : v > lambd ? v - bias : 0.0f);
}

/* min(max(v, lo), hi), in that order (lo > hi gives hi, as ONNX says); NaN stays NaN */
static inline float clamp_f32(float v, float lo, float hi) {
    const float a = v < lo ? lo : v;
    return a > hi ? hi : a;
}

void aotc_clip_f32(size_t n, const float *x, float *y, float lo, float hi) { AOTC_MAP_F32(clamp_f32(v, lo, hi)); }

void aotc_hard_sigmoid_f32(size_t n, const float *x, float *y, float alpha, float beta) {
    AOTC_MAP_F32(clamp_f32(alpha * v + beta, 0.0f, 1.0f));
}
