/* Compare-and-select on Helium float vectors (a Cortex-M55), for the float kernels whose results
 * must be the plain loops' bits: max as `x > v ? x : v`, clamps as `v < lo ? lo : v`, so that a NaN
 * never wins a max and stays NaN through a clamp, and -0 stays -0.
 *
 * Helium's float instructions always run on the standard FPSCR value (flush to zero), so a VCMP
 * alone sees a subnormal as a zero: a ReLU would keep -1e-40 and a max of 0 and 1e-40 keep the 0,
 * where the plain loops (the scalar FPU, IEEE subnormals) do not. So each compare is two: the float
 * compare on the flushed values (x >= v there whenever x > v exactly, and never with a NaN) and,
 * in a VPT block, a signed compare of the values' order keys (aotc_mve_order_key: exact for every
 * number, subnormals and -0 == +0 included). Both hold exactly when x > v.
 *
 * Through inline assembly: gcc 12 moves every VPR predicate an intrinsic compare makes through a
 * core register and back (vmrs, sxth, vmsr: 3 more instructions a compare; issue 52). gcc cannot be
 * told that the assembly writes VPR, so a function using these keeps no predicate of its own live
 * across them: no predicated intrinsics in it. Internal to runtime_c/kernels; included only where
 * Helium's floats are (__ARM_FEATURE_MVE & 2, without AOTC_NO_MVE). */
#ifndef AOTC_MVE_SELECT_H
#define AOTC_MVE_SELECT_H

#include <arm_mve.h>

/* A signed integer per lane that orders as the float does: the bits for a positive sign, minus the
 * magnitude's bits for a negative one (so -0 and +0 are both 0). NaNs get keys beyond the
 * infinities': the float compare in front of every key compare rules them out. */
static inline __attribute__((always_inline)) int32x4_t aotc_mve_order_key(float32x4_t v) {
    const int32x4_t a = vreinterpretq_s32_f32(v);
    const int32x4_t s = vshrq_n_s32(a, 31); /* -1 for a negative sign */
    const int32x4_t m = vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(s), 1));
    return vsubq_s32(veorq_s32(a, m), s);   /* negative: (a ^ 0x7fffffff) + 1 = -magnitude */
}

/* x > v ? x : v where v is never a zero or a subnormal (a bound such as -FLT_MAX): the flushed
 * compare alone is exact then (flushing moves only values nearer 0 than any normal v) */
static inline __attribute__((always_inline)) float32x4_t aotc_mve_max_of_normal(float32x4_t v, float32x4_t x) {
    __asm__("vcmp.f32 gt, %q1, %q0\n\tvpsel %q0, %q1, %q0" : "+w"(v) : "w"(x));
    return v;
}

/* A running max: x > v ? x : v with v's order key *kv kept beside it (so a chain computes each
 * value's key once), *kv becoming the result's */
static inline __attribute__((always_inline)) float32x4_t aotc_mve_max_of_keyed(float32x4_t v, int32x4_t *kv,
                                                                               float32x4_t x) {
    const int32x4_t kx = aotc_mve_order_key(x);
    int32x4_t k = *kv;
    __asm__("vpt.f32 ge, %q2, %q0\n\tvcmpt.s32 gt, %q3, %q1\n\tvpsel %q0, %q2, %q0\n\tvpsel %q1, %q3, %q1"
            : "+w"(v), "+w"(k)
            : "w"(x), "w"(kx));
    *kv = k;
    return v;
}

/* The last step of a running max: x > v ? x : v with v's order key kv, no key kept */
static inline __attribute__((always_inline)) float32x4_t aotc_mve_max_of_last(float32x4_t v, int32x4_t kv, float32x4_t x) {
    const int32x4_t kx = aotc_mve_order_key(x);
    __asm__("vpt.f32 ge, %q1, %q0\n\tvcmpt.s32 gt, %q2, %q3\n\tvpsel %q0, %q1, %q0"
            : "+w"(v)
            : "w"(x), "w"(kx), "w"(kv));
    return v;
}

/* Both clamps of one vector: v < lo ? lo : v, then that > hi ? hi : v, lane by lane; klo and khi
 * are the bounds' order keys (hoisted out of the caller's loop). */
static inline __attribute__((always_inline)) float32x4_t aotc_mve_clamp(float32x4_t v, float32x4_t lo, int32x4_t klo,
                                                                        float32x4_t hi, int32x4_t khi) {
    int32x4_t kv = aotc_mve_order_key(v);
    __asm__("vpt.f32 ge, %q2, %q0\n\tvcmpt.s32 gt, %q3, %q1\n\tvpsel %q0, %q2, %q0\n\tvpsel %q1, %q3, %q1\n\t"
            "vpt.f32 ge, %q0, %q4\n\tvcmpt.s32 gt, %q1, %q5\n\tvpsel %q0, %q4, %q0"
            : "+w"(v), "+w"(kv)
            : "w"(lo), "w"(klo), "w"(hi), "w"(khi));
    return v;
}

/* ReLU's v < 0 ? 0 : v, lane by lane, on the bits alone: v < 0 exactly for the bits 0x80000001
 * (-subnormal) up to 0xff800000 (-inf), as signed integers less 1: INT_MIN ... -8388609 (-0's
 * bits less 1 wrap to INT_MAX; a NaN's stay above). zero: +0 in every lane; below:
 * -8388609 in every lane. */
static inline __attribute__((always_inline)) float32x4_t aotc_mve_relu(float32x4_t v, float32x4_t zero,
                                                                       int32x4_t below) {
    const int32x4_t t = vsubq_s32(vreinterpretq_s32_f32(v), vdupq_n_s32(1));
    __asm__("vcmp.s32 ge, %q2, %q3\n\tvpsel %q0, %q1, %q0" : "+w"(v) : "w"(zero), "w"(below), "w"(t));
    return v;
}

#endif /* AOTC_MVE_SELECT_H */
