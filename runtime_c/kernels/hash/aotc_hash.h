/* Hashing ops (issue 50): TFLite's LSH_PROJECTION, which signs each input row by farmhash's Fingerprint64
 * (farmhashna's Hash64, a fixed, portable hash of a byte string), computed here from its published
 * definition with little-endian loads. */
#ifndef AOTC_HASH_H
#define AOTC_HASH_H

#include "aotc_common.h" /* first: the bundle's names for these functions */
#include <stddef.h>
#include <stdint.h>

/* farmhash's Fingerprint64 of the len bytes at s (any alignment) */
uint64_t aotc_fingerprint64(const uint8_t *s, size_t len);

typedef struct {
    int32_t num_hash;  /* hash's rows: the projections */
    int32_t num_bits;  /* hash's columns: the seeds (bits) of a projection, at most 32 */
    int32_t rows;      /* input's first dimension */
    int32_t row_bytes; /* the bytes of an input row */
    int32_t sparse;    /* 1: SPARSE (a signature a projection), 0: DENSE (a bit a seed) */
} aotc_lsh_params;

/* LSH_PROJECTION as LiteRT: for each seed hash[i][j] (float32), score = sum over the input rows k of
 * (weight ? weight[k] : 1) * (double)(int64_t)Fingerprint64(the seed's 4 bytes, then row k's bytes), in double,
 * row by row; the bit is score > 0. SPARSE: out[i] = the bits of projection i, its first seed the most
 * significant, + i * 2^num_bits (wrapping in int32); DENSE: out[i * num_bits + j] = the bit.
 * scratch: AOTC_LSH_KEY_BYTES + row_bytes bytes (the key). */
#define AOTC_LSH_KEY_BYTES 4 /* the seed's bytes before the row's in each key */
void aotc_lsh_projection(const aotc_lsh_params *p, const float *hash, const void *input, const float *weight,
                         int32_t *out, uint8_t *scratch);

#endif /* AOTC_HASH_H */
