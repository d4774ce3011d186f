/* e^v without a branch or a libm call, so loops over it vectorise (attention's softmax). */
#ifndef AOTC_FAST_EXP_H
#define AOTC_FAST_EXP_H

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

#endif /* AOTC_FAST_EXP_H */
