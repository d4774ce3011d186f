/* TFLite's seeded random ops (issue 50): RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL as LiteRT's kernels draw
 * them, from the Philox4x32-10 counter-based generator (Salmon et al., SC 2011) keyed by the op's seed and
 * started at the counter its seed2 gives. The generator's 128-bit counter is state the caller carries from
 * one call to the next (the op keeps it in LiteRT), so a sequence of calls gives LiteRT's sequence of
 * invokes. And STABLEHLO_RNG_BIT_GENERATOR, raw bits of Philox4x32-10 or ThreeFry2x32-20 (the same paper) from
 * the state its input holds: a pure function of that input, no state kept. */
#ifndef AOTC_PHILOX_H
#define AOTC_PHILOX_H

#include "aotc_common.h" /* first: the bundle's names for these functions */
#include <stddef.h>
#include <stdint.h>

#define AOTC_PHILOX_COUNTER_WORDS 4 /* the counter, least significant word first */

/* Each group of 4 elements (the last group may be shorter) takes one Philox block of 4 words at the
 * counter, which then goes up by one (the words of a short last group past n are dropped): ceil(n / 4)
 * blocks a call. key: the seed's low and high 32 bits. counter: the counter the call starts at;
 * counter_next: where it leaves it (may be counter itself). */

/* uniform in [0, 1): each word's low 23 bits as the mantissa of a float in [1, 2), minus 1 */
void aotc_philox_uniform_f32(size_t n, uint32_t key0, uint32_t key1, const uint32_t *counter, float *y,
                             uint32_t *counter_next);

/* standard normal: each pair of words (u, v) Box-Muller, as TensorFlow's BoxMullerFloat: u1 = max(float(u),
 * 1e-7), r = sqrtf(-2 * logf(u1)), t = (float)(2 pi * float(v)) in double; y = r * sin(t), r * cos(t) */
void aotc_philox_normal_f32(size_t n, uint32_t key0, uint32_t key1, const uint32_t *counter, float *y,
                            uint32_t *counter_next);

typedef struct {
    int32_t batch;   /* logits' rows */
    int32_t classes; /* logits' columns */
    int32_t samples; /* draws a row */
    uint32_t key0;   /* the seed's low and high 32 bits */
    uint32_t key1;
    int32_t out64;   /* 1: the output is int64, 0: int32 */
} aotc_philox_multinomial_params;

/* MULTINOMIAL as LiteRT: the call draws from the counter it starts at, and leaves the counter skipped by
 * batch * (samples rounded up to 4) * 2 * 256 blocks whatever it drew. Each row's cumulative sums of
 * exp(logit - the row's largest finite logit) over its finite logits, in double (scratch: classes doubles);
 * each draw takes the next two words of the blocks (a block's 4 words serve two draws, across rows): a double
 * in [0, 1) of 52 bits (the first word's low 20, then the second's 32) times the row's total, and the output
 * the index of the first cumulative sum above it (classes if none). */
void aotc_philox_multinomial(const aotc_philox_multinomial_params *p, const uint32_t *counter, const float *logits,
                             void *out, uint32_t *counter_next, double *scratch);

/* STABLEHLO_RNG_BIT_GENERATOR as LiteRT's kernel. The state is uint64 words; state[0]'s low and high 32 bits are
 * the key, state[1] a 64-bit counter. The output's n elements (wide 0: 32-bit, wide 1: 64-bit, each its two
 * words low first) are its 32-bit words in order, each block of words (4 for Philox, 2 for ThreeFry) the
 * generator's block at the counter, which then goes up by one (modulo 2^64; the words of a short last block
 * past the output are dropped). state_next: the state with state[1] the counter where the call left it
 * (may be state itself). */

/* PHILOX (and DEFAULT): state_len 2 or 3 words; the block's 128-bit counter is state[1] (the low half, the one
 * that counts) then state[2], or with 2 words state[0] again */
void aotc_rng_bits_philox(size_t state_len, const uint64_t *state, uint64_t *state_next, size_t n, int wide,
                          void *y);

/* THREEFRY: 2 state words; the block's 64-bit counter is state[1] */
void aotc_rng_bits_threefry(const uint64_t *state, uint64_t *state_next, size_t n, int wide, void *y);

#endif /* AOTC_PHILOX_H */
