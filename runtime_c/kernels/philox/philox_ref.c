/* Reference of the philox family's STABLEHLO_RNG_BIT_GENERATOR kernels (declared in kernels_ref.h): each
 * output word on its own, from the block of the generator it falls in, the generators as Salmon et al.
 * (SC 2011) define them. */
#include "kernels_ref.h"

static void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo) {
    const uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

void aotc_philox4x32_ref(const uint32_t *c, const uint32_t *k, uint32_t *out) {
    uint32_t x[4], key[2], hi0, lo0, hi1, lo1;
    int r;
    x[0] = c[0], x[1] = c[1], x[2] = c[2], x[3] = c[3];
    key[0] = k[0], key[1] = k[1];
    for (r = 0; r < 10; ++r) {
        if (r > 0) key[0] += 0x9E3779B9u, key[1] += 0xBB67AE85u; /* the key bumped between rounds */
        mulhilo(0xD2511F53u, x[0], &hi0, &lo0);
        mulhilo(0xCD9E8D57u, x[2], &hi1, &lo1);
        x[0] = hi1 ^ x[1] ^ key[0];
        x[1] = lo1;
        x[2] = hi0 ^ x[3] ^ key[1];
        x[3] = lo0;
    }
    out[0] = x[0], out[1] = x[1], out[2] = x[2], out[3] = x[3];
}

static uint32_t rotl_ref(uint32_t v, int s) { return (v << s) | (v >> (32 - s)); }

void aotc_threefry2x32_ref(const uint32_t *c, const uint32_t *k, uint32_t *out) {
    static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    uint32_t ks[3], x0, x1;
    int inj, r;
    ks[0] = k[0], ks[1] = k[1], ks[2] = 0x1BD11BDAu ^ k[0] ^ k[1];
    x0 = c[0] + ks[0], x1 = c[1] + ks[1];
    for (inj = 1; inj <= 5; ++inj) { /* 5 x 4 rounds, the key schedule injected after each 4 */
        for (r = 0; r < 4; ++r) {
            x0 += x1;
            x1 = rotl_ref(x1, rot[(inj - 1) % 2 * 4 + r]) ^ x0;
        }
        x0 += ks[inj % 3];
        x1 += ks[(inj + 1) % 3] + (uint32_t)inj;
    }
    out[0] = x0, out[1] = x1;
}

/* word j of the stream: block j / per of the generator at counter state[1] + j / per */
static uint32_t word_ref(int threefry, size_t state_len, const uint64_t *state, size_t j) {
    const size_t per = threefry ? 2u : 4u;
    const uint64_t ctr = state[1] + (uint64_t)(j / per);
    const uint64_t high = state_len == 3 ? state[2] : state[0];
    uint32_t c[4], k[2], out[4];
    k[0] = (uint32_t)state[0], k[1] = (uint32_t)(state[0] >> 32);
    c[0] = (uint32_t)ctr, c[1] = (uint32_t)(ctr >> 32), c[2] = (uint32_t)high, c[3] = (uint32_t)(high >> 32);
    if (threefry) aotc_threefry2x32_ref(c, k, out);
    else aotc_philox4x32_ref(c, k, out);
    return out[j % per];
}

static void bits_ref(int threefry, size_t state_len, const uint64_t *state, uint64_t *state_next, size_t n,
                     int wide, void *y) {
    const size_t per = threefry ? 2u : 4u, words = wide ? 2u * n : n;
    uint64_t in[3];
    size_t e;
    for (e = 0; e < state_len; ++e) in[e] = state[e];
    for (e = 0; e < n; ++e) {
        if (wide) ((uint64_t *)y)[e] = (uint64_t)word_ref(threefry, state_len, in, 2 * e)
                                       + ((uint64_t)word_ref(threefry, state_len, in, 2 * e + 1) << 32);
        else ((uint32_t *)y)[e] = word_ref(threefry, state_len, in, e);
    }
    for (e = 0; e < state_len; ++e) state_next[e] = in[e];
    state_next[1] = in[1] + (uint64_t)((words + per - 1) / per); /* a block a started group of words */
}

void aotc_rng_bits_philox_ref(size_t state_len, const uint64_t *state, uint64_t *state_next, size_t n, int wide,
                              void *y) {
    bits_ref(0, state_len, state, state_next, n, wide, y);
}

void aotc_rng_bits_threefry_ref(const uint64_t *state, uint64_t *state_next, size_t n, int wide, void *y) {
    bits_ref(1, 2, state, state_next, n, wide, y);
}
