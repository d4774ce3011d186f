/* The random ops with a seed, drawn as onnx's reference implementation draws them: numpy's legacy
 * RandomState(seed), a Mersenne Twister (MT19937) seeded by init_genrand, each double from two words
 * (genrand_res53). The generator is seeded afresh at each call, so every run gives the same values, the
 * reference's. */
#ifndef AOTC_RANDOM_H
#define AOTC_RANDOM_H

#include "aotc_common.h" /* first: the bundle's names for these functions */
#include <stddef.h>
#include <stdint.h>

#define AOTC_MT19937_WORDS 624 /* the generator's state, in uint32_t: the scratch of aotc_dropout_f32 */

/* Dropout (opset 12+) with a seed: ratio and training_mode are read at run time (NULL: 0.5 and false).
 * Training with a ratio above 0: mask = (the i-th uniform draw in [0, 1)) >= ratio, compared in double, and
 * y = (mask ? x : 0) * (1 / (1 - ratio)) in float; otherwise y = x and the mask all true (mask may be NULL).
 * scratch: AOTC_MT19937_WORDS words. */
void aotc_dropout_f32(size_t n, uint32_t seed, const float *x, const float *ratio, const uint8_t *training_mode,
                      float *y, uint8_t *mask, uint32_t *scratch);

#endif /* AOTC_RANDOM_H */
