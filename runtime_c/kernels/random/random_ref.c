/* Reference of the random family (declared in kernels_ref.h): MT19937 as its authors wrote it (the twist
 * in three runs, mt[kk + M] without a modulo), one element at a time. */
#include "kernels_ref.h"

#define N_REF 624
#define M_REF 397

static void twist_ref(uint32_t *mt) {
    static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
    uint32_t y;
    int kk;
    for (kk = 0; kk < N_REF - M_REF; ++kk) {
        y = (mt[kk] & 0x80000000u) | (mt[kk + 1] & 0x7fffffffu);
        mt[kk] = mt[kk + M_REF] ^ (y >> 1) ^ mag01[y & 1u];
    }
    for (; kk < N_REF - 1; ++kk) {
        y = (mt[kk] & 0x80000000u) | (mt[kk + 1] & 0x7fffffffu);
        mt[kk] = mt[kk + (M_REF - N_REF)] ^ (y >> 1) ^ mag01[y & 1u];
    }
    y = (mt[N_REF - 1] & 0x80000000u) | (mt[0] & 0x7fffffffu);
    mt[N_REF - 1] = mt[M_REF - 1] ^ (y >> 1) ^ mag01[y & 1u];
}

static uint32_t genrand_ref(uint32_t *mt, int *mti) {
    uint32_t y;
    if (*mti >= N_REF) twist_ref(mt), *mti = 0;
    y = mt[(*mti)++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

void aotc_dropout_f32_ref(size_t n, uint32_t seed, const float *x, const float *ratio, const uint8_t *training_mode,
                          float *y, uint8_t *mask, uint32_t *scratch) {
    const float r = ratio ? *ratio : 0.5f;
    const int training = training_mode ? *training_mode != 0 : 0;
    int mti = N_REF, i;
    size_t k;
    scratch[0] = seed;
    for (i = 1; i < N_REF; i++) scratch[i] = 1812433253u * (scratch[i - 1] ^ (scratch[i - 1] >> 30)) + (uint32_t)i;
    for (k = 0; k < n; ++k) {
        int keep = 1;
        if (training && r != 0.0f) {
            const uint32_t a = genrand_ref(scratch, &mti) >> 5, b = genrand_ref(scratch, &mti) >> 6;
            keep = (a * 67108864.0 + b) * (1.0 / 9007199254740992.0) >= r;
            y[k] = (keep ? x[k] : 0.0f) * (1.0f / (1.0f - r));
        } else {
            y[k] = x[k];
        }
        if (mask) mask[k] = (uint8_t)keep;
    }
}
