/* The seeded random ops (aotc_random.h): MT19937 as numpy's legacy RandomState runs it. */
#include "aotc_random.h"

enum { MT_N = AOTC_MT19937_WORDS, MT_M = 397 };

typedef struct {
    uint32_t *s; /* MT_N words */
    int pos;
} mt_state;

static void mt_seed(mt_state *m, uint32_t seed) {
    int i;
    m->s[0] = seed;
    for (i = 1; i < MT_N; ++i) m->s[i] = 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) + (uint32_t)i;
    m->pos = MT_N;
}

static uint32_t mt_next(mt_state *m) {
    uint32_t y;
    if (m->pos >= MT_N) { /* the twist: all MT_N words at once */
        int k;
        for (k = 0; k < MT_N; ++k) {
            const uint32_t w = (m->s[k] & 0x80000000u) | (m->s[(k + 1) % MT_N] & 0x7fffffffu);
            m->s[k] = m->s[(k + MT_M) % MT_N] ^ (w >> 1) ^ ((w & 1u) ? 0x9908b0dfu : 0u);
        }
        m->pos = 0;
    }
    y = m->s[m->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* a double in [0, 1) of 53 random bits (numpy's random_sample) */
static double mt_double(mt_state *m) {
    const uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

void aotc_dropout_f32(size_t n, uint32_t seed, const float *x, const float *ratio, const uint8_t *training_mode,
                      float *y, uint8_t *mask, uint32_t *scratch) {
    const float r = ratio ? *ratio : 0.5f;
    size_t i;
    if (!(training_mode && *training_mode) || r == 0.0f) {
        for (i = 0; i < n; ++i) y[i] = x[i];
        if (mask)
            for (i = 0; i < n; ++i) mask[i] = 1;
        return;
    }
    {
        const float scale = 1.0f / (1.0f - r);
        mt_state m;
        m.s = scratch;
        mt_seed(&m, seed);
        for (i = 0; i < n; ++i) {
            const int keep = mt_double(&m) >= (double)r;
            y[i] = (keep ? x[i] : 0.0f) * scale;
            if (mask) mask[i] = (uint8_t)keep;
        }
    }
}
