/* The Philox4x32-10 generator and TFLite's RANDOM_UNIFORM / RANDOM_STANDARD_NORMAL on it (aotc_philox.h). */
#include "aotc_philox.h"

#include <math.h>
#include <string.h>

/* Philox4x32's round multipliers and Weyl key increments (the published constants) */
#define PHILOX_MUL0 0xD2511F53u
#define PHILOX_MUL1 0xCD9E8D57u
#define PHILOX_WEYL0 0x9E3779B9u
#define PHILOX_WEYL1 0xBB67AE85u
#define PHILOX_ROUNDS 10

/* the block of 4 words at counter c under key (k0, k1) */
static void philox_block(const uint32_t c[4], uint32_t k0, uint32_t k1, uint32_t out[4]) {
    uint32_t x0 = c[0], x1 = c[1], x2 = c[2], x3 = c[3];
    int r;
    for (r = 0; r < PHILOX_ROUNDS; ++r) {
        const uint64_t p0 = (uint64_t)PHILOX_MUL0 * x0, p1 = (uint64_t)PHILOX_MUL1 * x2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
        x1 = (uint32_t)p1;
        x3 = (uint32_t)p0;
        x0 = n0;
        x2 = n2;
        k0 += PHILOX_WEYL0;
        k1 += PHILOX_WEYL1;
    }
    out[0] = x0;
    out[1] = x1;
    out[2] = x2;
    out[3] = x3;
}

/* the 128-bit counter plus one */
static void philox_step(uint32_t c[4]) {
    int i;
    for (i = 0; i < 4; ++i)
        if (++c[i] != 0u) break;
}

/* a word's low 23 bits as a float in [0, 1) */
static float word_to_unit(uint32_t w) {
    const uint32_t bits = (127u << 23) | (w & 0x7fffffu);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f - 1.0f;
}

static void philox_fill(size_t n, uint32_t key0, uint32_t key1, const uint32_t *counter, float *y,
                        uint32_t *counter_next, int normal) {
    uint32_t c[4], w[4];
    size_t i = 0;
    memcpy(c, counter, sizeof c);
    while (i < n) {
        const size_t take = n - i < 4 ? n - i : 4;
        size_t j;
        philox_block(c, key0, key1, w);
        philox_step(c);
        if (!normal) {
            for (j = 0; j < take; ++j) y[i + j] = word_to_unit(w[j]);
        } else {
            for (j = 0; j < take; j += 2) {
                float u1 = word_to_unit(w[j]);
                float t, r;
                if (u1 < 1.0e-7f) u1 = 1.0e-7f;
                t = (float)(2.0 * 3.14159265358979323846 * (double)word_to_unit(w[j + 1]));
                r = sqrtf(-2.0f * logf(u1));
                y[i + j] = sinf(t) * r;
                if (j + 1 < take) y[i + j + 1] = cosf(t) * r;
            }
        }
        i += take;
    }
    memcpy(counter_next, c, sizeof c);
}

void aotc_philox_uniform_f32(size_t n, uint32_t key0, uint32_t key1, const uint32_t *counter, float *y,
                             uint32_t *counter_next) {
    philox_fill(n, key0, key1, counter, y, counter_next, 0);
}

void aotc_philox_normal_f32(size_t n, uint32_t key0, uint32_t key1, const uint32_t *counter, float *y,
                            uint32_t *counter_next) {
    philox_fill(n, key0, key1, counter, y, counter_next, 1);
}
