/* Loops the code generator writes itself: a tree of elementwise ops fused into one pass
 * (aot/passes/fuse_elementwise.py). Each op is the expression its own kernel computes, so the
 * fused loop needs only the kernels' inline helpers, and gives the same bits. Pow by a constant
 * exponent is computed here alone (by multiplies and a square root, below), not by powf. */
#ifndef AOTC_FUSED_H
#define AOTC_FUSED_H

#include <math.h>
#include <stddef.h>

#include "fast_math.h"

/* Pow by a constant exponent k + 1/2 (k >= 0; aot/kernels/fused.py, pow_expression): sqrt(v) v^k, with
 * powf's answers where that product differs from them: +0 for -0 (v + 0 is +0 there, so -0 gives no -0 and
 * its reciprocal +inf) and +inf for -inf (sqrtf gives NaN). A negative v gives NaN, as powf. */
static inline float aotc_pow_half_f32(float v, int k) {
    const float a = v + 0.0f;
    float p = sqrtf(a);
    for (; k > 0; --k) p *= a;
    return v == -INFINITY ? INFINITY : p;
}

#endif
