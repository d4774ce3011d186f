/* The random family (aotc_random.h, random.c) against its reference (random_ref.c) over random sizes,
 * seeds, ratios and training modes, bit for bit (the same draws, the same float arithmetic): sizes past
 * 312 elements, where the generator's 624 words are twisted again, included. The reference's first draws
 * for seed 0 are numpy's (np.random.RandomState(0).uniform(0, 1, 5): 0.5488135039273248, 0.7151893663724195,
 * 0.6027633760716439, 0.5448831829968969, 0.4236547993389047), checked by hand.
 *
 *     test_random_kernels [seed] [shapes per entry point] */
#include "aotc_random.h"
#include "kernel_test.h"
#include "kernels_ref.h"

static int check_dropout(void) {
    const size_t n = (size_t)(chance(1, 3) ? rand_int(0, 1500) : rand_int(0, 40));
    const uint32_t seed = chance(1, 4) ? 0u : test_next();
    const int has_ratio = chance(3, 4), has_training = chance(7, 8), has_mask = chance(1, 2);
    const float ratio = chance(1, 5) ? 0.0f : chance(1, 2) ? 0.5f : 0.99f * (rand_float() + 1.0f) / 2.0f;
    const uint8_t training = (uint8_t)chance(4, 5);
    float *x = test_alloc(n), *y = test_alloc(n), *yr = test_alloc(n);
    uint8_t *mask = test_bytes(n), *mr = test_bytes_copy(mask, n);
    uint32_t *state = (uint32_t *)(void *)test_bytes(AOTC_MT19937_WORDS * 4);
    uint32_t *state_ref = (uint32_t *)(void *)test_bytes(AOTC_MT19937_WORDS * 4);
    int bad;
    aotc_dropout_f32(n, seed, x, has_ratio ? &ratio : NULL, has_training ? &training : NULL, y, has_mask ? mask : NULL,
                     state);
    aotc_dropout_f32_ref(n, seed, x, has_ratio ? &ratio : NULL, has_training ? &training : NULL, yr,
                         has_mask ? mr : NULL, state_ref);
    bad = test_bytes_differ("aotc_dropout_f32 y", y, yr, n * 4) || test_bytes_differ("aotc_dropout_f32 mask", mask, mr, n);
    if (bad) printf("  n %lu, seed %lu, ratio %g (%d), training %d (%d), mask %d\n", (unsigned long)n,
                    (unsigned long)seed, (double)ratio, has_ratio, training, has_training, has_mask);
    free(x), free(y), free(yr), free(mask), free(mr), free(state), free(state_ref);
    return bad;
}

/* numpy's first five draws for seed 0 against a ratio of 0.55: kept 0 1 1 0 0, each kept x times 1 / 0.45 */
static int check_reference(void) {
    static const float x[5] = {1.0f, 2.0f, -3.0f, 4.0f, 5.0f};
    static const uint8_t kept[5] = {0, 1, 1, 0, 0};
    const float ratio = 0.55f;
    const uint8_t training = 1;
    float y[5];
    uint8_t mask[5];
    uint32_t state[AOTC_MT19937_WORDS];
    int bad = 0, i;
    aotc_dropout_f32_ref(5, 0u, x, &ratio, &training, y, mask, state);
    for (i = 0; i < 5; ++i) bad |= mask[i] != kept[i] || y[i] != (kept[i] ? x[i] : 0.0f) * (1.0f / (1.0f - ratio));
    if (bad) printf("the references: MISMATCH on a case worked out by hand\n");
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference(), bad = 0;
    int32_t i;
    for (i = 0; i < shapes && !bad; ++i) bad = check_dropout();
    printf("%-34s %s (%d shapes)\n", "aotc_dropout_f32", bad ? "MISMATCH" : "ok", (int)i);
    return failed | bad;
}
