/* e^v and erf(v) without a branch or a libm call, so loops over them vectorise (attention's
 * softmax, the recurrent gates, GELU). The ONNX ops Exp and Erf keep libm's. */
#ifndef AOTC_FAST_MATH_H
#define AOTC_FAST_MATH_H

#include <stdint.h>
#include <string.h>

/* v = n ln2 + r, |r| <= ln2 / 2; e^r by its Taylor series to r^7 (relative error below 1e-7 on that
 * range), times 2^n built in the exponent bits. v is clamped to [-87.3, 88]: e^v stays a normal
 * float, so a caller that needs e^-inf = 0 selects it itself. */
static inline float aotc_exp_poly(float v) {
    const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float n, r, p, scale;
    int32_t bits;
    v = v < -87.3f ? -87.3f : (v > 88.0f ? 88.0f : v);
    n = (v * 1.44269504088896341f + shifter) - shifter;
    r = v - n * 0.693145751953125f - n * 1.42860682030941723e-6f;
    p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6.0f + r * (1.0f / 24.0f + r * (1.0f / 120.0f +
                    r * (1.0f / 720.0f + r * (1.0f / 5040.0f)))))));
    bits = ((int32_t)n + 127) << 23;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* erf(v): near 0 its series to v^9 (relative error below 1e-7 for |v| < 0.5); elsewhere
 * Abramowitz and Stegun 7.1.26, 1 - (a1 t + ... + a5 t^5) e^(-v^2) with t = 1 / (1 + p |v|)
 * (absolute error below 1.5e-7), its sign restored. Both are computed and one is selected. */
static inline float aotc_erf_poly(float v) {
    const float a = v < 0.0f ? -v : v, v2 = v * v;
    const float t = 1.0f / (1.0f + 0.3275911f * a);
    const float tail = 1.0f - t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f +
                                   t * (-1.453152027f + t * 1.061405429f)))) * aotc_exp_poly(-v2);
    const float near = v * 1.12837916709551257f * (1.0f + v2 * (-1.0f / 3.0f + v2 * (1.0f / 10.0f +
                                   v2 * (-1.0f / 42.0f + v2 * (1.0f / 216.0f)))));
    return a < 0.5f ? near : (v < 0.0f ? -tail : tail);
}

#endif /* AOTC_FAST_MATH_H */
