/* farmhash's Fingerprint64 and TFLite's LSH_PROJECTION (aotc_hash.h). The hash follows farmhashna's
 * Hash64 by its length classes (0-16, 17-32, 33-64 bytes, and 64-byte blocks beyond); the loads are
 * little-endian whatever the target, as farmhash's portable definition. */
#include <string.h>

#include "aotc_hash.h"

#define FH_K0 0xc3a5c85c97cb3127ULL
#define FH_K1 0xb492b66fbe98f273ULL
#define FH_K2 0x9ae16a3b2f90404fULL

static uint64_t load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t load32(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static uint64_t ror64(uint64_t v, unsigned r)
{
    return r == 0 ? v : (v >> r) | (v << (64u - r));
}

static uint64_t shift_mix(uint64_t v)
{
    return v ^ (v >> 47);
}

/* two words into one, Murmur's way, with the multiplier mul */
static uint64_t mix16(uint64_t u, uint64_t v, uint64_t mul)
{
    uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    return b * mul;
}

static uint64_t fp_upto16(const uint8_t *s, size_t len)
{
    uint64_t mul = FH_K2 + (uint64_t)len * 2u;
    if (len >= 8) {
        uint64_t a = load64(s) + FH_K2, b = load64(s + len - 8);
        return mix16(ror64(b, 37) * mul + a, (ror64(a, 25) + b) * mul, mul);
    }
    if (len >= 4) return mix16((uint64_t)len + (load32(s) << 3), load32(s + len - 4), mul);
    if (len == 0) return FH_K2;
    uint32_t y = (uint32_t)s[0] + ((uint32_t)s[len >> 1] << 8);
    uint32_t z = (uint32_t)len + ((uint32_t)s[len - 1] << 2);
    return shift_mix((uint64_t)y * FH_K2 ^ (uint64_t)z * FH_K0) * FH_K2;
}

static uint64_t fp_17to32(const uint8_t *s, size_t len)
{
    uint64_t mul = FH_K2 + (uint64_t)len * 2u;
    uint64_t a = load64(s) * FH_K1, b = load64(s + 8);
    uint64_t c = load64(s + len - 8) * mul, d = load64(s + len - 16) * FH_K2;
    return mix16(ror64(a + b, 43) + ror64(c, 30) + d, a + ror64(b + FH_K2, 18) + c, mul);
}

static uint64_t fp_33to64(const uint8_t *s, size_t len)
{
    uint64_t mul = FH_K2 + (uint64_t)len * 2u;
    uint64_t a = load64(s) * FH_K2, b = load64(s + 8);
    uint64_t c = load64(s + len - 8) * mul, d = load64(s + len - 16) * FH_K2;
    uint64_t y = ror64(a + b, 43) + ror64(c, 30) + d;
    uint64_t z = mix16(y, a + ror64(b + FH_K2, 18) + c, mul);
    uint64_t e = load64(s + 16) * mul, f = load64(s + 24);
    uint64_t g = (y + load64(s + len - 32)) * mul, h = (z + load64(s + len - 24)) * mul;
    return mix16(ror64(e + f, 43) + ror64(g, 30) + h, e + ror64(f + a, 18) + g, mul);
}

/* farmhash's weak 32-byte hash with two seeds: the four words at s into the pair (*p0, *p1) from a, b */
static void weak32(const uint8_t *s, uint64_t a, uint64_t b, uint64_t *p0, uint64_t *p1)
{
    uint64_t w = load64(s), x = load64(s + 8), y = load64(s + 16), z = load64(s + 24);
    a += w;
    b = ror64(b + a + z, 21);
    uint64_t c = a;
    a += x + y;
    b += ror64(a, 44);
    *p0 = a + z;
    *p1 = b + c;
}

typedef struct {
    uint64_t x, y, z, v0, v1, w0, w1;
} fp_state;

/* one 64-byte block into the state, multiplying by mul (k1 in the loop; the last block's mul, with its
 * extra terms scaled by `nine`) */
static void fp_block(fp_state *st, const uint8_t *s, uint64_t mul, uint64_t nine)
{
    st->x = ror64(st->x + st->y + st->v0 + load64(s + 8), 37) * mul;
    st->y = ror64(st->y + st->v1 + load64(s + 48), 42) * mul;
    st->x ^= st->w1 * nine;
    st->y += st->v0 * nine + load64(s + 40);
    st->z = ror64(st->z + st->w0, 33) * mul;
    weak32(s, st->v1 * mul, st->x + st->w0, &st->v0, &st->v1);
    weak32(s + 32, st->z + st->w1, st->y + load64(s + 16), &st->w0, &st->w1);
    uint64_t t = st->z;
    st->z = st->x;
    st->x = t;
}

static uint64_t fp_long(const uint8_t *s, size_t len)
{
    const uint64_t seed = 81;
    fp_state st = {seed, seed * FH_K1 + 113u, 0, 0, 0, 0, 0};
    st.z = shift_mix(st.y * FH_K2 + 113u) * FH_K2;
    st.x = st.x * FH_K2 + load64(s);
    size_t blocks = (len - 1) / 64;
    for (size_t i = 0; i < blocks; i++) fp_block(&st, s + i * 64, FH_K1, 1);
    uint64_t mul = FH_K1 + ((st.z & 0xffu) << 1);
    st.w0 += (uint64_t)((len - 1) & 63u);
    st.v0 += st.w0;
    st.w0 += st.v0;
    fp_block(&st, s + len - 64, mul, 9);
    return mix16(mix16(st.v0, st.w0, mul) + shift_mix(st.y) * FH_K0 + st.z, mix16(st.v1, st.w1, mul) + st.x, mul);
}

uint64_t aotc_fingerprint64(const uint8_t *s, size_t len)
{
    if (len <= 16) return fp_upto16(s, len);
    if (len <= 32) return fp_17to32(s, len);
    if (len <= 64) return fp_33to64(s, len);
    return fp_long(s, len);
}

/* the sign bit of one seed: score > 0 over the rows, the products formed apart from the sum (no fused
 * multiply-add, as LiteRT's build) */
static int32_t lsh_bit(const aotc_lsh_params *p, float seed, const uint8_t *input, const float *weight,
                       uint8_t *key)
{
    double score = 0.0;
    size_t row_bytes = (size_t)p->row_bytes;
    memcpy(key, &seed, AOTC_LSH_KEY_BYTES);
    for (int32_t k = 0; k < p->rows; k++) {
        if (row_bytes) memcpy(key + AOTC_LSH_KEY_BYTES, input + (size_t)k * row_bytes, row_bytes);
        double h = (double)(int64_t)aotc_fingerprint64(key, AOTC_LSH_KEY_BYTES + row_bytes);
        if (weight) {
            volatile double term = (double)weight[k] * h;
            score += term;
        } else {
            score += h;
        }
    }
    return score > 0 ? 1 : 0;
}

void aotc_lsh_projection(const aotc_lsh_params *p, const float *hash, const void *input, const float *weight,
                         int32_t *out, uint8_t *scratch)
{
    const uint8_t *in = (const uint8_t *)input;
    for (int32_t i = 0; i < p->num_hash; i++) {
        uint32_t signature = 0;
        for (int32_t j = 0; j < p->num_bits; j++) {
            int32_t bit = lsh_bit(p, hash[(size_t)i * (size_t)p->num_bits + (size_t)j], in, weight, scratch);
            if (p->sparse)
                signature = (signature << 1) | (uint32_t)bit;
            else
                out[(size_t)i * (size_t)p->num_bits + (size_t)j] = bit;
        }
        if (p->sparse) out[i] = (int32_t)(signature + (uint32_t)i * ((uint32_t)1 << p->num_bits));
    }
}
