/* e^v, e^v - 1, sigmoid, tanh and erf without a branch or a libm call, so that a loop over them
 * vectorises (gcc and clang, -O2 and up, with SSE2, AVX2, AVX-512 or NEON: every select below is
 * aotc_fm_pick, a compare and blend; the integer work is on the float's bits). Used by the activations (Sigmoid, SiLU, Tanh, Gelu, Elu, Selu,
 * Celu), Softmax, attention and the recurrent gates; the ONNX ops Exp and Erf keep libm's.
 *
 * Accuracy against libm in double precision, bounds held by tests/kernels_c/test_fast_math.py (every 4093rd
 * float; tests/kernels_c/test_fast_math.c with argument 1 sweeps every float, and stays within them too):
 *   aotc_exp_poly      1 ulp     for v in [-87.3, 88]      (clamped outside: e^-87.3, e^88)
 *   aotc_exp_flush     1 ulp     for v in [-87.3, 88]      (0 below -87.3: absolute error < 1.2e-38)
 *   aotc_expm1_poly    1.5 ulp   for v in [-87.3, 88]
 *   aotc_sigmoid_poly  3 ulp     for v >= -87.3            (0 below: absolute error < 1.2e-38)
 *   aotc_tanh_poly     2.6 ulp   everywhere
 *   aotc_erf_poly      6.5 ulp   everywhere (absolute error < 1.5e-7: Abramowitz-Stegun from 0.5 on)
 *   aotc_exp_flush16   1 ulp     for v in [-87.3, 88]      (AVX-512F, 16 at a time: Softmax rows)
 * NaN in gives NaN out. */
#ifndef AOTC_FAST_MATH_H
#define AOTC_FAST_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* a * b + c, fused where the target has a fast fmaf (x86-64 with FMA, AArch64, Cortex-M4F/M7):
 * in ISO C mode gcc contracts nothing itself, and elsewhere fmaf is a slow library call. */
#if defined(FP_FAST_FMAF)
#define AOTC_FM_MADD(a, b, c) fmaf((a), (b), (c))
#else
#define AOTC_FM_MADD(a, b, c) ((a) * (b) + (c))
#endif

/* c ? a : b for a c of 0 or 1, a and b both computed. Where a loop of these functions should vectorise with
 * 128- or 256-bit vectors and no masks (SSE/AVX2, NEON), as the bits: gcc (its default -ftrapping-math) does not
 * if-convert a loop in which a float operation runs under a condition, and from a plain `c ? a : b` its passes
 * make one: they sink an operand's arithmetic into the arm that uses it, or thread a clamp to a constant
 * through what follows (GCC 12: not one of the four functions below vectorised for -march=x86-64-v3 or
 * AArch64, so a SiLU took libm-free scalar code: EfficientNet-B0 60 % of its time in it). The bits make both
 * operands live on every path. Elsewhere (AVX-512's masks, scalar cores) the plain select. */
#if (defined(__SSE2__) || defined(__ARM_NEON)) && !defined(__AVX512F__)
static inline float aotc_fm_pick(int c, float a, float b) {
    uint32_t ab, bb;
    const uint32_t m = 0u - (uint32_t)c;
    float r;
    memcpy(&ab, &a, sizeof ab);
    memcpy(&bb, &b, sizeof bb);
    ab = (ab & m) | (bb & ~m);
    memcpy(&r, &ab, sizeof r);
    return r;
}
#else
#define aotc_fm_pick(c, a, b) ((c) ? (a) : (b))
#endif

/* v = n ln2 + r with |r| <= ln2 / 2, v clamped to [-87.3, 88] (so 2^n is a normal float). n is
 * rounded by adding 1.5 * 2^23, and read back from that sum's low mantissa bits: no float to int
 * conversion (undefined for NaN). Returns r; *scale = 2^n, built in the exponent bits. */
static inline float aotc_exp_reduce(float v, float *scale) {
    const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float k, n;
    uint32_t kb, sb;
    v = aotc_fm_pick(v < -87.3f, -87.3f, aotc_fm_pick(v > 88.0f, 88.0f, v));
    k = v * 1.44269504088896341f + shifter;
    n = k - shifter;
    memcpy(&kb, &k, sizeof kb);
    sb = (kb - 0x4B400000u + 127u) << 23; /* bits of 1.5 * 2^23 are 0x4B400000: kb - them = n */
    memcpy(scale, &sb, sizeof sb);
    /* ln2 in two parts: n * the first is exact for |n| <= 128 */
    return v - n * 0.693145751953125f - n * 1.42860682030941723e-6f;
}

/* (e^r - 1 - r) / r^2 = 1 / 2 + r / 6 + ... to r^6 / 8!: Taylor, its truncation below 3e-9
 * relative for |r| <= ln2 / 2. */
static inline float aotc_expm1_tail(float r) {
    float c = AOTC_FM_MADD(r, 1.0f / 40320.0f, 1.0f / 5040.0f);
    c = AOTC_FM_MADD(c, r, 1.0f / 720.0f);
    c = AOTC_FM_MADD(c, r, 1.0f / 120.0f);
    c = AOTC_FM_MADD(c, r, 1.0f / 24.0f);
    c = AOTC_FM_MADD(c, r, 1.0f / 6.0f);
    return AOTC_FM_MADD(c, r, 0.5f);
}

/* e^v: 2^n (1 + r + r^2 tail). v is clamped to [-87.3, 88]: e^v stays a normal float, so a caller
 * that needs e^-inf = 0 selects it (or calls aotc_exp_flush). */
static inline float aotc_exp_poly(float v) {
    float scale;
    const float r = aotc_exp_reduce(v, &scale);
    return (1.0f + AOTC_FM_MADD(r * r, aotc_expm1_tail(r), r)) * scale;
}

/* e^v, and 0 for v below -87.3 (where e^v is below 1.2e-38): Softmax's e^(x - max) of -inf is 0. */
static inline float aotc_exp_flush(float v) {
    const float e = aotc_exp_poly(v);
    return aotc_fm_pick(v < -87.3f, 0.0f, e);
}

/* e^v - 1, accurate near 0 (no 1 - 1 cancellation): 2^n (r + r^2 tail) + (2^n - 1), where
 * 2^n - 1 is exact for n in [-24, 24] and rounds to -1 or 2^n beyond. */
static inline float aotc_expm1_poly(float v) {
    float scale;
    const float r = aotc_exp_reduce(v, &scale);
    return AOTC_FM_MADD(AOTC_FM_MADD(r * r, aotc_expm1_tail(r), r), scale, scale - 1.0f);
}

/* 1 / (1 + e^-v), from e = e^-|v| so that neither side loses its relative accuracy: 1 / (1 + e) for
 * v >= 0, e / (1 + e) below. */
static inline float aotc_sigmoid_poly(float v) {
    const float a = v < 0.0f ? -v : v;
    const float e = aotc_exp_poly(-a);
    const float r = 1.0f / (1.0f + e);
    const float s = aotc_fm_pick(v < 0.0f, e * r, r);
    return aotc_fm_pick(v < -87.3f, 0.0f, s);
}

/* tanh v = -m / (2 + m) with m = e^(-2|v|) - 1 in (-1, 0], its sign restored: no cancellation
 * near 0 (m comes from expm1), and 1 from |v| > 9 on. */
static inline float aotc_tanh_poly(float v) {
    const float a = v < 0.0f ? -v : v;
    const float m = aotc_expm1_poly(-2.0f * a);
    const float t = -m / (2.0f + m);
    return aotc_fm_pick(v < 0.0f, -t, t);
}

/* erf(v): near 0 its series to v^13 (relative error below 1e-8 for |v| < 0.5); elsewhere
 * Abramowitz and Stegun 7.1.26, 1 - (a1 t + ... + a5 t^5) e^(-v^2) with t = 1 / (1 + p |v|)
 * (absolute error below 1.5e-7), its sign restored. Both are computed and one is selected. */
static inline float aotc_erf_poly(float v) {
    const float a = v < 0.0f ? -v : v, v2 = v * v;
    const float t = 1.0f / AOTC_FM_MADD(0.3275911f, a, 1.0f);
    float q = AOTC_FM_MADD(t, 1.061405429f, -1.453152027f), n = AOTC_FM_MADD(v2, 1.0f / 9360.0f, -1.0f / 1320.0f);
    float tail;
    q = AOTC_FM_MADD(q, t, 1.421413741f);
    q = AOTC_FM_MADD(q, t, -0.284496736f);
    q = AOTC_FM_MADD(q, t, 0.254829592f);
    tail = AOTC_FM_MADD(-(q * t), aotc_exp_poly(-v2), 1.0f);
    n = AOTC_FM_MADD(n, v2, 1.0f / 216.0f);
    n = AOTC_FM_MADD(n, v2, -1.0f / 42.0f);
    n = AOTC_FM_MADD(n, v2, 1.0f / 10.0f);
    n = AOTC_FM_MADD(n, v2, -1.0f / 3.0f);
    n = AOTC_FM_MADD(n, v2, 1.0f);
    n = v * 1.12837916709551257f * n;
    return aotc_fm_pick(a < 0.5f, n, aotc_fm_pick(v < 0.0f, -tail, tail));
}

/* SiLU / Swish on AVX-512F, 16 floats at a time: 25 vector instructions per 16 (14 since issue 64) against
 * the 43 that gcc makes of v * aotc_sigmoid_poly(alpha v) (0.31 against 0.48 ns per float on a Zen 4 core,
 * measured at 24: EfficientNet's 49 SiLUs, issue 24). Used by the elementwise kernel (aotc_swish_f32) and the dnnl runtime
 * (aotc_dnnl_swish); -DAOTC_NO_X86_SWISH takes the plain loops instead. */
#if defined(__AVX512F__) && !defined(AOTC_NO_X86_SWISH)
#define AOTC_SWISH_X86 1
#include <immintrin.h>
#include <stddef.h>

/* 16 floats: v sigmoid(a), a = alpha v (v itself when not `scaled`), as v / (1 + e) with e = e^-t and t = a
 * clamped to [-100, 87.3] (NaN to -100: VMAXPS returns its second operand): e = 2^k p(r), k = round(-t log2 e),
 * r = -t - k ln2 (|r| <= ln2 / 2) and p a degree-5 fit of e^r (relative error 1.35e-7) by Estrin's scheme, 2^k by
 * VSCALEFPS, which gives inf from a < -88.7 on, so that v / (1 + e) is -0 there and NaN for v = -inf (as the op's
 * x * sigmoid(x)); NaN gives NaN through v. Why this form (issue 64): the SiLU took 0.176 ns a float on this Zen 5
 * core, 20 % of EfficientNet-B0's time: e^-|a| with the sigmoid's two halves selected by sign, a degree-6 Horner
 * polynomial, 1 / (1 + e) by VRCP14PS and a Newton step and two masked steps were 24 vector instructions with a long
 * dependency chain; this is 14 (VDIVPS, 2.5 cycles a vector here, has a unit of its own) and takes 0.104 ns.
 * Within 5 ulp of v sigmoid(alpha v) in double (3.95 at most over every float in [-87.3, -1], the worst range;
 * tests/kernels_c/test_fast_math.py and tests/vendors/test_vendor_dnnl.py sweep it against float64). */
static inline __m512 aotc_swish16(__m512 v, __m512 alpha, int scaled) {
    const __m512 nlog2e = _mm512_set1_ps(-1.44269504088896341f), ln2_hi = _mm512_set1_ps(0.693145751953125f);
    const __m512 ln2_lo = _mm512_set1_ps(1.42860682030941723e-6f);
    const __m512 a = scaled ? _mm512_mul_ps(v, alpha) : v;
    const __m512 t = _mm512_min_ps(_mm512_max_ps(a, _mm512_set1_ps(-100.0f)), _mm512_set1_ps(87.3f));
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(t, nlog2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 u = _mm512_fmadd_ps(k, ln2_lo, _mm512_fmadd_ps(k, ln2_hi, t)); /* -r */
    const __m512 u2 = _mm512_mul_ps(u, u);
    /* p(r) = (c0 + c1 r) + r^2 (c2 + c3 r) + r^4 (c4 + c5 r), in u = -r */
    const __m512 p01 = _mm512_fmadd_ps(u, _mm512_set1_ps(-0.9999997019767761f), _mm512_set1_ps(1.0000001192092896f));
    const __m512 p23 = _mm512_fmadd_ps(u, _mm512_set1_ps(-0.16667574644088745f), _mm512_set1_ps(0.49998894333839417f));
    const __m512 p45 = _mm512_fmadd_ps(u, _mm512_set1_ps(-0.008297654800117016f), _mm512_set1_ps(0.04191538318991661f));
    const __m512 p = _mm512_fmadd_ps(u2, _mm512_fmadd_ps(u2, p45, p23), p01);
    return _mm512_div_ps(v, _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_scalef_ps(p, k)));
}

/* Whole vectors, then the tail under a mask; `scaled` is a constant in each call below, so each
 * loop is compiled without the branch (alpha 1, SiLU's, also without the multiply: 0.31 ns per
 * float against 0.38). */
static inline void aotc_swish_avx512_loop(const float *x, float *y, size_t n, float alpha, int scaled) {
    const __m512 al = _mm512_set1_ps(alpha);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, aotc_swish16(_mm512_loadu_ps(x + i), al, scaled));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, aotc_swish16(_mm512_maskz_loadu_ps(m, x + i), al, scaled));
    }
}

/* y[0, n) = x sigmoid(alpha x) of x[0, n); y may be x. */
static inline void aotc_swish_avx512(const float *x, float *y, size_t n, float alpha) {
    if (alpha == 1.0f)
        aotc_swish_avx512_loop(x, y, n, 1.0f, 0);
    else
        aotc_swish_avx512_loop(x, y, n, alpha, 1);
}
#else
#define AOTC_SWISH_X86 0
#endif

/* SiLU / Swish on AVX2 with FMA and no AVX-512 (--host-isa generic built for x86-64-v3), 8 floats at a time:
 * aotc_swish16's division form without VSCALEFPS (2^k from the exponent bits). Why (issue 64): the plain loop
 * took 0.57 ns a float at -march=x86-64-v3 on this core, its data in L1, and EfficientNet-B0's SiLUs were 20 % of
 * its time at --isa avx2; the first AVX2 loop (e^-|a|, the sigmoid's halves selected by VBLENDVPS, VRCPPS and a
 * Newton step) was 26 vector instructions, this one is 17. Within 5 ulp of v sigmoid(alpha v) in double, as the
 * AVX-512 loop (tests/kernels_c/test_fast_math.py). */
#if !AOTC_SWISH_X86 && defined(__AVX2__) && defined(__FMA__) && !defined(AOTC_NO_X86_SWISH)
#define AOTC_SWISH_AVX2 1
#include <immintrin.h>
#include <stddef.h>

/* 8 floats: v sigmoid(a), a = alpha v (v itself when not `scaled`), as aotc_swish16 computes it, bit for bit:
 * t = a clamped to [-89.5, 86] (NaN to -89.5), k = round(-t log2 e) in [-124, 129] by adding 1.5 2^23 + 126,
 * whose low bits are then k + 126 and, shifted into the exponent, 2^(k-1) (+inf for k = 129); e = 2p 2^(k-1)
 * with the coefficients doubled, rounded once as VSCALEFPS rounds p 2^k, inf where it gives inf (a < -88.7,
 * so -0 from v / (1 + e), NaN from -inf and from NaN). The clamps differ from aotc_swish16's only where
 * 1 + e is 1 (t > 86) or e is inf (t < -89.5) either way. */
static inline __m256 aotc_swish8(__m256 v, __m256 alpha, int scaled) {
    const __m256 nlog2e = _mm256_set1_ps(-1.44269504088896341f), ln2_hi = _mm256_set1_ps(0.693145751953125f);
    const __m256 ln2_lo = _mm256_set1_ps(1.42860682030941723e-6f), shifter = _mm256_set1_ps(12583038.0f);
    const __m256 a = scaled ? _mm256_mul_ps(v, alpha) : v;
    const __m256 t = _mm256_min_ps(_mm256_max_ps(a, _mm256_set1_ps(-89.5f)), _mm256_set1_ps(86.0f));
    const __m256 f = _mm256_add_ps(_mm256_mul_ps(t, nlog2e), shifter); /* 1.5 2^23 + 126 + k */
    const __m256 k = _mm256_sub_ps(f, shifter);
    const __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(f), 23)); /* 2^(k-1) */
    const __m256 u = _mm256_fmadd_ps(k, ln2_lo, _mm256_fmadd_ps(k, ln2_hi, t)); /* -r */
    const __m256 u2 = _mm256_mul_ps(u, u);
    /* 2 p(r) = (c0 + c1 r) + r^2 (c2 + c3 r) + r^4 (c4 + c5 r) in u = -r, the c twice aotc_swish16's */
    const __m256 p01 = _mm256_fmadd_ps(u, _mm256_set1_ps(-1.9999994039535522f), _mm256_set1_ps(2.0000002384185791f));
    const __m256 p23 = _mm256_fmadd_ps(u, _mm256_set1_ps(-0.3333514928817749f), _mm256_set1_ps(0.99997788667678833f));
    const __m256 p45 = _mm256_fmadd_ps(u, _mm256_set1_ps(-0.016595309600234032f), _mm256_set1_ps(0.08383076637983322f));
    const __m256 p2 = _mm256_fmadd_ps(u2, _mm256_fmadd_ps(u2, p45, p23), p01);
    return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_mul_ps(p2, scale)));
}

/* Whole vectors, then the tail by VMASKMOVPS (which neither reads nor writes the lanes it leaves out). */
static inline void aotc_swish_avx2_loop(const float *x, float *y, size_t n, float alpha, int scaled) {
    const __m256 al = _mm256_set1_ps(alpha);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, aotc_swish8(_mm256_loadu_ps(x + i), al, scaled));
    if (i < n) {
        const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(y + i, m, aotc_swish8(_mm256_maskload_ps(x + i, m), al, scaled));
    }
}

/* y[0, n) = x sigmoid(alpha x) of x[0, n); y may be x. */
static inline void aotc_swish_avx2(const float *x, float *y, size_t n, float alpha) {
    if (alpha == 1.0f)
        aotc_swish_avx2_loop(x, y, n, 1.0f, 0);
    else
        aotc_swish_avx2_loop(x, y, n, alpha, 1);
}
#else
#define AOTC_SWISH_AVX2 0
#endif

/* Softmax along a contiguous row on AVX-512F (norm.c), 16 floats at a time and the tail under a mask: a
 * pass for the max, one for e^(x - max) and its sum, one to scale. The plain loops took the max in one
 * chain of compares, half of the kernel's time on the 65- and 128-long rows of attention (issue 64), and
 * left sums and tails scalar. -DAOTC_NO_X86_SOFTMAX takes them instead. */
#if defined(__AVX512F__) && !defined(AOTC_NO_X86_SOFTMAX)
#define AOTC_SOFTMAX_X86 1
#include <immintrin.h>
#include <stddef.h>

#if defined(FP_FAST_FMAF)
#define AOTC_FM_MADD16(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#else
#define AOTC_FM_MADD16(a, b, c) _mm512_add_ps(_mm512_mul_ps((a), (b)), (c))
#endif

/* aotc_exp_flush of 16 floats: its operations in its order (aotc_exp_reduce, aotc_expm1_tail), so its
 * bits where the compiler fuses none of the scalar's a * b + c itself (gcc in ISO C mode; clang does by
 * default), and its 1 ulp anyway (tests/kernels_c/test_fast_math.c checks both). */
static inline __m512 aotc_exp_flush16(__m512 v) {
    const __m512 lo = _mm512_set1_ps(-87.3f), hi = _mm512_set1_ps(88.0f), shifter = _mm512_set1_ps(12582912.0f);
    const __mmask16 below = _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ); /* false for NaN: NaN goes through */
    const __m512 c = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), _mm512_mask_blend_ps(below, v, lo),
                                          hi);
    const __m512 k = _mm512_add_ps(_mm512_mul_ps(c, _mm512_set1_ps(1.44269504088896341f)), shifter);
    const __m512 n = _mm512_sub_ps(k, shifter);
    const __m512 scale = _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_add_epi32(_mm512_castps_si512(k), _mm512_set1_epi32((int)(127 - 0x4B400000))), 23));
    const __m512 r = _mm512_sub_ps(_mm512_sub_ps(c, _mm512_mul_ps(n, _mm512_set1_ps(0.693145751953125f))),
                                   _mm512_mul_ps(n, _mm512_set1_ps(1.42860682030941723e-6f)));
    __m512 t = AOTC_FM_MADD16(r, _mm512_set1_ps(1.0f / 40320.0f), _mm512_set1_ps(1.0f / 5040.0f));
    t = AOTC_FM_MADD16(t, r, _mm512_set1_ps(1.0f / 720.0f));
    t = AOTC_FM_MADD16(t, r, _mm512_set1_ps(1.0f / 120.0f));
    t = AOTC_FM_MADD16(t, r, _mm512_set1_ps(1.0f / 24.0f));
    t = AOTC_FM_MADD16(t, r, _mm512_set1_ps(1.0f / 6.0f));
    t = AOTC_FM_MADD16(t, r, _mm512_set1_ps(0.5f));
    t = _mm512_mul_ps(_mm512_add_ps(_mm512_set1_ps(1.0f), AOTC_FM_MADD16(_mm512_mul_ps(r, r), t, r)), scale);
    return _mm512_mask_mov_ps(t, below, _mm512_setzero_ps());
}

/* The largest of x[0, n), -inf for n = 0. A NaN element may be passed over (VMAXPS keeps its second
 * operand where either is NaN); Softmax's row is NaN either way, through e^(NaN - max). */
static inline float aotc_max_avx512(const float *x, size_t n) {
    const size_t full = n & ~(size_t)15;
    __m512 m = _mm512_set1_ps(-INFINITY);
    size_t i;
    for (i = 0; i < full; i += 16) m = _mm512_max_ps(_mm512_loadu_ps(x + i), m);
    if (i < n) m = _mm512_max_ps(_mm512_mask_loadu_ps(m, (__mmask16)((1u << (n - i)) - 1u), x + i), m);
    return _mm512_reduce_max_ps(m);
}

/* e^d of 16 floats d <= 0 (x - max), 0 below -87.3, NaN for NaN: 2^k p(r) by VSCALEFPS, d = k ln2 + r with
 * |r| <= ln2 / 2 (ln2 in two parts), p the Taylor polynomial to r^7 (its truncation below 6e-9 relative):
 * 14 vector instructions against aotc_exp_flush16's 25 (which keeps the scalar aotc_exp_flush's bits), within
 * 1 ulp all the same (tests/kernels_c/test_fast_math.c sweeps it as softmax_exp16). Softmax's rows (issue 64:
 * ViT-tiny's attention, 591 rows of 197 a block, took 47 us against onnxruntime's 29). */
static inline __m512 aotc_softmax_exp16(__m512 d) {
    const __m512 lo = _mm512_set1_ps(-87.3f), one = _mm512_set1_ps(1.0f);
    const __mmask16 keep = _mm512_cmp_ps_mask(d, lo, _CMP_NLT_UQ); /* not below -87.3 (NaN kept) */
    const __m512 c = _mm512_max_ps(lo, d);                             /* NaN: d, the second operand */
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860682030941723e-6f),
                                      _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), c));
    __m512 p = _mm512_fmadd_ps(r, _mm512_set1_ps(1.0f / 5040.0f), _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, one);
    p = _mm512_fmadd_ps(p, r, one);
    return _mm512_maskz_scalef_ps(keep, p, k);
}

/* y[0, n) = softmax of x[0, n) (y may be x): e^(x - max) by aotc_softmax_exp16, then times 1 / their sum. */
static inline void aotc_softmax_avx512(const float *x, float *y, size_t n) {
    const size_t full = n & ~(size_t)15;
    const __mmask16 tail = (__mmask16)((1u << (n - full)) - 1u);
    const __m512 m = _mm512_set1_ps(aotc_max_avx512(x, n));
    __m512 s = _mm512_setzero_ps(), inv;
    size_t i;
    for (i = 0; i < full; i += 16) {
        const __m512 e = aotc_softmax_exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), m));
        _mm512_storeu_ps(y + i, e);
        s = _mm512_add_ps(s, e);
    }
    if (tail) {
        const __m512 e = aotc_softmax_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), m));
        _mm512_mask_storeu_ps(y + i, tail, e);
        s = _mm512_mask_add_ps(s, tail, s, e);
    }
    inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(s));
    for (i = 0; i < full; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
    if (tail) _mm512_mask_storeu_ps(y + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + i), inv));
}

/* aotc_softmax_avx512 on rows [0, rows) of n floats each (row r at x + r n; y may be x), two rows at a time with
 * their passes interleaved: a row's max and sum are reductions (shuffle trees of dependent steps) and its scaling
 * waits on a division, latencies one row alone leaves idle on rows as short as ViT-tiny's 197 (issue 64: its 12
 * Softmax nodes took 56 us each against onnxruntime's 47). Each row's floats are aotc_softmax_avx512's. */
static inline void aotc_softmax_rows_avx512(const float *x, float *y, size_t n, size_t rows) {
    const size_t full = n & ~(size_t)15;
    const __mmask16 tail = (__mmask16)((1u << (n - full)) - 1u);
    size_t r, i;
    for (r = 0; r + 2 <= rows; r += 2) {
        const float *xa = x + r * n, *xb = xa + n;
        float *ya = y + r * n, *yb = ya + n;
        const __m512 ma = _mm512_set1_ps(aotc_max_avx512(xa, n)), mb = _mm512_set1_ps(aotc_max_avx512(xb, n));
        __m512 sa = _mm512_setzero_ps(), sb = _mm512_setzero_ps(), ia, ib;
        for (i = 0; i < full; i += 16) {
            const __m512 ea = aotc_softmax_exp16(_mm512_sub_ps(_mm512_loadu_ps(xa + i), ma));
            const __m512 eb = aotc_softmax_exp16(_mm512_sub_ps(_mm512_loadu_ps(xb + i), mb));
            _mm512_storeu_ps(ya + i, ea);
            _mm512_storeu_ps(yb + i, eb);
            sa = _mm512_add_ps(sa, ea);
            sb = _mm512_add_ps(sb, eb);
        }
        if (tail) {
            const __m512 ea = aotc_softmax_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xa + i), ma));
            const __m512 eb = aotc_softmax_exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xb + i), mb));
            _mm512_mask_storeu_ps(ya + i, tail, ea);
            _mm512_mask_storeu_ps(yb + i, tail, eb);
            sa = _mm512_mask_add_ps(sa, tail, sa, ea);
            sb = _mm512_mask_add_ps(sb, tail, sb, eb);
        }
        ia = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sa));
        ib = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sb));
        for (i = 0; i < full; i += 16) {
            _mm512_storeu_ps(ya + i, _mm512_mul_ps(_mm512_loadu_ps(ya + i), ia));
            _mm512_storeu_ps(yb + i, _mm512_mul_ps(_mm512_loadu_ps(yb + i), ib));
        }
        if (tail) {
            _mm512_mask_storeu_ps(ya + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, ya + i), ia));
            _mm512_mask_storeu_ps(yb + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, yb + i), ib));
        }
    }
    if (r < rows) aotc_softmax_avx512(x + r * n, y + r * n, n);
}
#else
#define AOTC_SOFTMAX_X86 0
#endif

/* Softmax along a contiguous row on AVX2 with FMA and no AVX-512 (norm.c), 8 floats at a time and the tail by
 * VMASKMOVPS: aotc_softmax_avx512's passes and e^d (aotc_softmax_exp16's operations, 2^k from the exponent bits).
 * The plain loops' max, one chain of compares, and their scalar tails took 17 % of MobileViT-xxs's time at
 * --isa avx2 (issue 64). Held to aotc_softmax_exp16's 1 ulp (tests/kernels_c/test_fast_math.c: softmax_exp8). */
#if !AOTC_SOFTMAX_X86 && defined(__AVX2__) && defined(__FMA__) && !defined(AOTC_NO_X86_SOFTMAX)
#define AOTC_SOFTMAX_AVX2 1
#include <immintrin.h>
#include <stddef.h>

/* e^d of 8 floats d <= 0, 0 below -87.3, NaN for NaN, as aotc_softmax_exp16: k >= -126, so 2^k is a normal float */
static inline __m256 aotc_softmax_exp8(__m256 d) {
    const __m256 lo = _mm256_set1_ps(-87.3f), one = _mm256_set1_ps(1.0f);
    const __m256 keep = _mm256_cmp_ps(d, lo, _CMP_NLT_UQ); /* not below -87.3 (NaN kept) */
    const __m256 c = _mm256_max_ps(lo, d);                  /* NaN: d, the second operand */
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(c, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.42860682030941723e-6f),
                                      _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), c));
    const __m256 scale = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23));
    __m256 p = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 5040.0f), _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, one);
    p = _mm256_fmadd_ps(p, r, one);
    /* NaN: k's conversion is INT_MIN, a scale of 0 or a power of 2, and p NaN either way */
    return _mm256_and_ps(keep, _mm256_mul_ps(p, scale));
}

/* the lanes of a tail of n - i < 8 floats, as VMASKMOVPS's mask */
static inline __m256i aotc_tail8(size_t i, size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The largest of x[0, n), -inf for n = 0 (a NaN element may be passed over, as aotc_max_avx512). */
static inline float aotc_max_avx2(const float *x, size_t n) {
    const size_t full = n & ~(size_t)7;
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 m = ninf;
    __m128 h;
    size_t i;
    for (i = 0; i < full; i += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + i), m);
    if (i < n) {
        const __m256i t = aotc_tail8(i, n);
        m = _mm256_max_ps(_mm256_blendv_ps(ninf, _mm256_maskload_ps(x + i, t), _mm256_castsi256_ps(t)), m);
    }
    h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* the sum of s's 8 lanes, pairs of halves, then of pairs */
static inline float aotc_sum8(__m256 s) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* y[0, n) = softmax of x[0, n) (y may be x): e^(x - max) by aotc_softmax_exp8, then times 1 / their sum. */
static inline void aotc_softmax_avx2(const float *x, float *y, size_t n) {
    const size_t full = n & ~(size_t)7;
    const __m256i tail = aotc_tail8(full, n);
    const __m256 m = _mm256_set1_ps(aotc_max_avx2(x, n));
    __m256 s = _mm256_setzero_ps(), inv;
    size_t i;
    for (i = 0; i < full; i += 8) {
        const __m256 e = aotc_softmax_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
        _mm256_storeu_ps(y + i, e);
        s = _mm256_add_ps(s, e);
    }
    if (i < n) {
        const __m256 e = _mm256_and_ps(_mm256_castsi256_ps(tail),
                                       aotc_softmax_exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, tail), m)));
        _mm256_maskstore_ps(y + i, tail, e);
        s = _mm256_add_ps(s, e);
    }
    inv = _mm256_set1_ps(1.0f / aotc_sum8(s));
    for (i = 0; i < full; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
    if (i < n) _mm256_maskstore_ps(y + i, tail, _mm256_mul_ps(_mm256_maskload_ps(y + i, tail), inv));
}

/* aotc_softmax_avx2 on rows [0, rows) of n floats each (row r at x + r n; y may be x), two rows at a time with
 * their passes interleaved, as aotc_softmax_rows_avx512 (ViT-tiny's attention rows of 197). Each row's floats are
 * aotc_softmax_avx2's. */
static inline void aotc_softmax_rows_avx2(const float *x, float *y, size_t n, size_t rows) {
    const size_t full = n & ~(size_t)7;
    const __m256i tail = aotc_tail8(full, n);
    const __m256 live = _mm256_castsi256_ps(tail);
    size_t r, i;
    for (r = 0; r + 2 <= rows; r += 2) {
        const float *xa = x + r * n, *xb = xa + n;
        float *ya = y + r * n, *yb = ya + n;
        const __m256 ma = _mm256_set1_ps(aotc_max_avx2(xa, n)), mb = _mm256_set1_ps(aotc_max_avx2(xb, n));
        __m256 sa = _mm256_setzero_ps(), sb = _mm256_setzero_ps(), ia, ib;
        for (i = 0; i < full; i += 8) {
            const __m256 ea = aotc_softmax_exp8(_mm256_sub_ps(_mm256_loadu_ps(xa + i), ma));
            const __m256 eb = aotc_softmax_exp8(_mm256_sub_ps(_mm256_loadu_ps(xb + i), mb));
            _mm256_storeu_ps(ya + i, ea);
            _mm256_storeu_ps(yb + i, eb);
            sa = _mm256_add_ps(sa, ea);
            sb = _mm256_add_ps(sb, eb);
        }
        if (i < n) {
            const __m256 da = _mm256_sub_ps(_mm256_maskload_ps(xa + i, tail), ma);
            const __m256 db = _mm256_sub_ps(_mm256_maskload_ps(xb + i, tail), mb);
            const __m256 ea = _mm256_and_ps(live, aotc_softmax_exp8(da));
            const __m256 eb = _mm256_and_ps(live, aotc_softmax_exp8(db));
            _mm256_maskstore_ps(ya + i, tail, ea);
            _mm256_maskstore_ps(yb + i, tail, eb);
            sa = _mm256_add_ps(sa, ea);
            sb = _mm256_add_ps(sb, eb);
        }
        ia = _mm256_set1_ps(1.0f / aotc_sum8(sa));
        ib = _mm256_set1_ps(1.0f / aotc_sum8(sb));
        for (i = 0; i < full; i += 8) {
            _mm256_storeu_ps(ya + i, _mm256_mul_ps(_mm256_loadu_ps(ya + i), ia));
            _mm256_storeu_ps(yb + i, _mm256_mul_ps(_mm256_loadu_ps(yb + i), ib));
        }
        if (i < n) {
            _mm256_maskstore_ps(ya + i, tail, _mm256_mul_ps(_mm256_maskload_ps(ya + i, tail), ia));
            _mm256_maskstore_ps(yb + i, tail, _mm256_mul_ps(_mm256_maskload_ps(yb + i, tail), ib));
        }
    }
    if (r < rows) aotc_softmax_avx2(x + r * n, y + r * n, n);
}
#else
#define AOTC_SOFTMAX_AVX2 0
#endif

/* GELU (erf form) on AVX-512F, 16 floats at a time (elementwise.c's aotc_gelu_f32). Why (issue 64): gcc makes
 * of 0.5 v (1 + aotc_erf_poly(v / sqrt 2)) a loop of ymm and scalar pieces, both branches of the erf and a
 * division each; GELU took 11 % of ConvNeXt-atto's time and 5 % of ViT-tiny's, about onnxruntime's own
 * rate. Here: Abramowitz-Stegun 7.1.26 as aotc_erf_poly has it, erfc(a) = (a1 t + ... + a5 t^5) e^(-a^2)
 * with t = 1 / (1 + p a) for a = |z| >= 0 (absolute error below 1.5e-7), 1 / (1 + p a) by VRCP14PS and one
 * Newton step, e^(-a^2) by VSCALEFPS of aotc_exp_poly's Taylor polynomial, a clamped to 10 (erf is 1 in float
 * from 3.9 on; an infinite a gave 0 * inf there). GELU takes no series near 0: 1 + erf(z) is 2 - erfc(|z|)
 * for z >= 0 and erfc(|z|) below, the absolute error below 2.5e-7 |v| (the polynomial's rounding near 0 adds
 * to Abramowitz-Stegun's 1.5e-7: within 5 ulp of GELU there), and the negative side has no 1 - 1
 * cancellation. 32 vector instructions per 16 floats: 501,760 floats (a ConvNeXt-atto GELU) 212 us of CPU in
 * the plain loop, 162 with the series, 131 without (gcc 12 -O3 -march=native, Zen 5). aotc_erf16 (erf itself: the series below |z| = 0.5, as aotc_erf_poly) is within
 * 6.5 ulp of libm's in double (tests/kernels_c/test_fast_math.py sweeps it). -DAOTC_NO_X86_GELU takes the
 * plain loop instead. */
#if defined(__AVX512F__) && !defined(AOTC_NO_X86_GELU)
#define AOTC_GELU_X86 1
#include <immintrin.h>
#include <stddef.h>

/* erfc(a) of 16 floats a in [0, 10] by Abramowitz-Stegun 7.1.26. */
static inline __m512 aotc_erfc_as16(__m512 a) {
    const __m512 one = _mm512_set1_ps(1.0f), a2 = _mm512_mul_ps(a, a);
    const __m512 d = _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), a, one);
    __m512 t = _mm512_rcp14_ps(d), q, e, k, r, p;
    t = _mm512_fmadd_ps(_mm512_fnmadd_ps(d, t, one), t, t); /* 1 / d to about 2^-28 */
    q = _mm512_fmadd_ps(t, _mm512_set1_ps(1.061405429f), _mm512_set1_ps(-1.453152027f));
    q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.421413741f));
    q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-0.284496736f));
    q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(0.254829592f));
    /* e = e^-a2, a2 <= 100: -a2 = k ln2 + r, |r| <= ln2 / 2, e = 2^k (1 + r + r^2 tail(r)), the tail's
     * Taylor polynomial to r^5 (its truncation below 6e-9 relative) */
    k = _mm512_roundscale_ps(_mm512_mul_ps(a2, _mm512_set1_ps(-1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), _mm512_sub_ps(_mm512_setzero_ps(), a2));
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860682030941723e-6f), r);
    p = _mm512_fmadd_ps(r, _mm512_set1_ps(1.0f / 5040.0f), _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    e = _mm512_scalef_ps(_mm512_add_ps(one, _mm512_fmadd_ps(_mm512_mul_ps(r, r), p, r)), k);
    return _mm512_mul_ps(_mm512_mul_ps(q, t), e);
}

/* erf(z) of 16 floats (NaN gives NaN). */
static inline __m512 aotc_erf16(__m512 z) {
    const __m512 one = _mm512_set1_ps(1.0f), az = _mm512_abs_ps(z), z2 = _mm512_mul_ps(z, z);
    /* 1 - erfc(|z|), |z| no more than 10 (NaN: 10; the series keeps z's NaN) */
    __m512 tail = _mm512_sub_ps(one, aotc_erfc_as16(_mm512_min_ps(az, _mm512_set1_ps(10.0f)))), n;
    /* the series z (2 / sqrt pi) (1 - z^2 / 3 + z^4 / 10 - ...) to z^13 */
    n = _mm512_fmadd_ps(z2, _mm512_set1_ps(1.0f / 9360.0f), _mm512_set1_ps(-1.0f / 1320.0f));
    n = _mm512_fmadd_ps(n, z2, _mm512_set1_ps(1.0f / 216.0f));
    n = _mm512_fmadd_ps(n, z2, _mm512_set1_ps(-1.0f / 42.0f));
    n = _mm512_fmadd_ps(n, z2, _mm512_set1_ps(1.0f / 10.0f));
    n = _mm512_fmadd_ps(n, z2, _mm512_set1_ps(-1.0f / 3.0f));
    n = _mm512_fmadd_ps(n, z2, one);
    n = _mm512_mul_ps(_mm512_mul_ps(z, _mm512_set1_ps(1.12837916709551257f)), n);
    /* the tail with z's sign bit (0xD8: C ? B : A, bitwise), or the series where |z| < 0.5 or z is NaN */
    tail = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(tail), _mm512_castps_si512(z),
                                                         _mm512_set1_epi32((int)0x80000000u), 0xD8));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(az, _mm512_set1_ps(0.5f), _CMP_NGE_UQ), tail, n);
}

/* 0.5 v (1 + erf(v / sqrt 2)) = v g of 16 floats: with h = erfc(|z|) / 2, g = 1 - h for z = v / sqrt 2 >= 0, h
 * below; h = 0 from |z| = 10 on, so that v g is -0 for a large negative v and NaN for -inf, as the plain
 * loop's 0.5 v (1 + -1); NaN gives NaN (through v). */
static inline __m512 aotc_gelu16(__m512 v) {
    const __m512 a = _mm512_min_ps(_mm512_abs_ps(_mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752440f))),
                                   _mm512_set1_ps(10.0f));
    const __m512 h = _mm512_maskz_mul_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(10.0f), _CMP_LT_OQ),
                                         aotc_erfc_as16(a), _mm512_set1_ps(0.5f));
    const __mmask16 positive = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GE_OQ);
    return _mm512_mul_ps(v, _mm512_mask_sub_ps(h, positive, _mm512_set1_ps(1.0f), h));
}

#if AOTC_SWISH_X86
#define AOTC_GELU_TANH_X86 1
/* GELU's tanh form, 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3))) = v sigmoid(2 sqrt(2 / pi) (v + 0.044715
 * v^3)), of 16 floats: aotc_swish16 with alpha = 2 sqrt(2 / pi) (1 + 0.044715 v^2) a vector. Why (issue 64): the
 * plain loop of aotc_tanh_poly took 6 % of the Keras MHA encoder's time (four GELUs of 128 x 1024). */
static inline __m512 aotc_gelu_tanh16(__m512 v) {
    const __m512 k1 = _mm512_set1_ps(1.59576912160573071176f), k2 = _mm512_set1_ps(0.0713548162726008f);
    return aotc_swish16(v, _mm512_fmadd_ps(k2, _mm512_mul_ps(v, v), k1), 1);
}

/* y[0, n) = GELU's tanh form of x[0, n) (y may be x) */
static inline void aotc_gelu_tanh_avx512(const float *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, aotc_gelu_tanh16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, aotc_gelu_tanh16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
#else
#define AOTC_GELU_TANH_X86 0
#endif

/* y[0, n) = GELU of x[0, n) (y may be x): whole vectors, then the tail under a mask. */
static inline void aotc_gelu_avx512(const float *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, aotc_gelu16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, aotc_gelu16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
#else
#define AOTC_GELU_X86 0
#define AOTC_GELU_TANH_X86 0
#endif

/* GELU, both forms, on AVX2 with FMA and no AVX-512, 8 floats at a time: aotc_gelu16 and aotc_gelu_tanh16 without
 * masks, VSCALEFPS and VRCP14PS (1 / d by VRCPPS and a Newton step, 2^k from the exponent bits). The plain loop of
 * aotc_erf_poly (both of its branches computed, its divide) took 13 % of ConvNeXt-atto's time at --isa avx2 (issue
 * 64); this 0.58 ns a float against its 0.73. Held to the AVX-512 loops' bounds (tests/kernels_c/test_fast_math.py). */
#if !AOTC_GELU_X86 && AOTC_SWISH_AVX2 && !defined(AOTC_NO_X86_GELU)
#define AOTC_GELU_AVX2 1

/* erfc(a) of 8 floats a in [0, 10] by Abramowitz-Stegun 7.1.26, as aotc_erfc_as16. */
static inline __m256 aotc_erfc_as8(__m256 a) {
    const __m256 one = _mm256_set1_ps(1.0f), a2 = _mm256_mul_ps(a, a);
    const __m256 d = _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), a, one);
    __m256 t = _mm256_rcp_ps(d), q, e, k, r, p, scale;
    t = _mm256_fmadd_ps(_mm256_fnmadd_ps(d, t, one), t, t); /* 1 / d, from VRCPPS's 12 bits */
    q = _mm256_fmadd_ps(t, _mm256_set1_ps(1.061405429f), _mm256_set1_ps(-1.453152027f));
    q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.421413741f));
    q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-0.284496736f));
    q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(0.254829592f));
    /* e = e^-a2 = 2^k (1 + r + r^2 tail(r)), a2 <= 100: k >= -145, so 2^k in two factors of normal floats */
    k = _mm256_round_ps(_mm256_mul_ps(a2, _mm256_set1_ps(-1.44269504088896341f)),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), _mm256_sub_ps(_mm256_setzero_ps(), a2));
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.42860682030941723e-6f), r);
    p = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 5040.0f), _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    /* 2^k = 2^(k + 64) 2^-64: k + 64 >= -81 stays a normal float's exponent */
    scale = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127 + 64)), 23));
    e = _mm256_mul_ps(_mm256_mul_ps(_mm256_add_ps(one, _mm256_fmadd_ps(_mm256_mul_ps(r, r), p, r)), scale),
                      _mm256_set1_ps(5.42101086242752217e-20f)); /* 2^-64 */
    return _mm256_mul_ps(_mm256_mul_ps(q, t), e);
}

/* 0.5 v (1 + erf(v / sqrt 2)) of 8 floats, as aotc_gelu16: h = erfc(|z|) / 2 (0 from |z| = 10 on, and for NaN,
 * which VMINPS makes 10), v (1 - h) for v >= 0, v h below. */
static inline __m256 aotc_gelu8(__m256 v) {
    const __m256 ten = _mm256_set1_ps(10.0f);
    const __m256 a = _mm256_min_ps(
        _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752440f))), ten);
    const __m256 h = _mm256_and_ps(_mm256_cmp_ps(a, ten, _CMP_LT_OQ),
                                   _mm256_mul_ps(aotc_erfc_as8(a), _mm256_set1_ps(0.5f)));
    const __m256 g = _mm256_blendv_ps(h, _mm256_sub_ps(_mm256_set1_ps(1.0f), h),
                                      _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GE_OQ));
    return _mm256_mul_ps(v, g);
}

/* GELU's tanh form of 8 floats: aotc_swish8 with alpha = 2 sqrt(2 / pi) (1 + 0.044715 v^2), as aotc_gelu_tanh16 */
static inline __m256 aotc_gelu_tanh8(__m256 v) {
    const __m256 k1 = _mm256_set1_ps(1.59576912160573071176f), k2 = _mm256_set1_ps(0.0713548162726008f);
    return aotc_swish8(v, _mm256_fmadd_ps(k2, _mm256_mul_ps(v, v), k1), 1);
}

/* y[0, n) = F of x[0, n) (y may be x): whole vectors, then the tail by VMASKMOVPS */
#define AOTC_MAP8(F)                                                                                             \
    size_t i = 0;                                                                                                \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F(_mm256_loadu_ps(x + i)));                               \
    if (i < n) {                                                                                                 \
        const __m256i m =                                                                                        \
            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));      \
        _mm256_maskstore_ps(y + i, m, F(_mm256_maskload_ps(x + i, m)));                                          \
    }
static inline void aotc_gelu_avx2(const float *x, float *y, size_t n) { AOTC_MAP8(aotc_gelu8) }
static inline void aotc_gelu_tanh_avx2(const float *x, float *y, size_t n) { AOTC_MAP8(aotc_gelu_tanh8) }
#undef AOTC_MAP8
#else
#define AOTC_GELU_AVX2 0
#endif

#endif /* AOTC_FAST_MATH_H */
