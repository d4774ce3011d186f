/* Compare-and-select on Helium float vectors (a Cortex-M55), for the float kernels whose results
 * must be the plain loops' bits: max as `x > v ? x : v`, clamps as `v < lo ? lo : v`, so that a NaN
 * never wins a max and stays NaN through a clamp, and -0 stays -0. One VCMP and one VPSEL each,
 * through inline assembly: gcc 12 moves every VPR predicate an intrinsic compare makes through a
 * core register and back (vmrs, sxth, vmsr: 3 more instructions a compare; issue 52). gcc cannot be
 * told that the assembly writes VPR, so a function using these keeps no predicate of its own live
 * across them: no predicated intrinsics in it. Internal to runtime_c/kernels; included only where
 * Helium's floats are (__ARM_FEATURE_MVE & 2, without AOTC_NO_MVE). */
#ifndef AOTC_MVE_SELECT_H
#define AOTC_MVE_SELECT_H

#include <arm_mve.h>

/* x > v ? x : v, lane by lane */
static inline __attribute__((always_inline)) float32x4_t aotc_mve_max_of(float32x4_t v, float32x4_t x) {
    __asm__("vcmp.f32 gt, %q1, %q0\n\tvpsel %q0, %q1, %q0" : "+w"(v) : "w"(x));
    return v;
}

/* v < lo ? lo : v, lane by lane, as lo > v (VCMP's lt holds for unordered operands, gt does not) */
static inline __attribute__((always_inline)) float32x4_t aotc_mve_lo_clamp(float32x4_t v, float32x4_t lo) {
    __asm__("vcmp.f32 gt, %q1, %q0\n\tvpsel %q0, %q1, %q0" : "+w"(v) : "w"(lo));
    return v;
}

/* v > hi ? hi : v, lane by lane */
static inline __attribute__((always_inline)) float32x4_t aotc_mve_hi_clamp(float32x4_t v, float32x4_t hi) {
    __asm__("vcmp.f32 gt, %q0, %q1\n\tvpsel %q0, %q1, %q0" : "+w"(v) : "w"(hi));
    return v;
}

#endif /* AOTC_MVE_SELECT_H */
