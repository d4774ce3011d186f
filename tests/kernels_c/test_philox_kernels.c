/* The philox family's STABLEHLO_RNG_BIT_GENERATOR kernels (aotc_philox.h, philox.c) against their reference
 * (philox_ref.c) over random states, sizes (whole blocks, short last blocks, none), element widths and state
 * lengths, bit for bit: outputs and next states, the counter's low word near its wrap (the carry into its
 * high word, and the 64-bit counter's wrap to 0, which leaves Philox's upper counter words as they were).
 * The references' generators against Random123's known answers (kat_vectors: counter and key 0, all ones,
 * and pi's digits), which LiteRT's kernel gives too (checked by hand).
 *
 *     test_philox_kernels [seed] [shapes per entry point] */
#include "aotc_philox.h"
#include "kernel_test.h"
#include "kernels_ref.h"

static uint64_t rand_u64(void) {
    const uint64_t hi = test_next();
    return hi << 32 | test_next();
}

static int check_bits(int threefry) {
    const size_t n = (size_t)(chance(1, 3) ? rand_int(0, 700) : rand_int(0, 13));
    const int wide = chance(1, 2);
    const size_t state_len = threefry ? 2u : (size_t)rand_int(2, 3), bytes = n * (wide ? 8u : 4u);
    uint64_t state[3], next[3], next_ref[3];
    uint8_t *y = test_bytes(bytes), *yr = test_bytes(bytes);
    size_t i;
    int bad;
    for (i = 0; i < 3; ++i) state[i] = rand_u64(), next[i] = next_ref[i] = 0x5555u;
    if (chance(1, 4)) state[1] |= 0xfffffff0u;                               /* the low word's carry */
    if (chance(1, 8)) state[1] = ~(uint64_t)0 - (uint64_t)rand_int(0, 40); /* the counter's wrap */
    if (threefry) {
        aotc_rng_bits_threefry(state, next, n, wide, y);
        aotc_rng_bits_threefry_ref(state, next_ref, n, wide, yr);
    } else {
        aotc_rng_bits_philox(state_len, state, next, n, wide, y);
        aotc_rng_bits_philox_ref(state_len, state, next_ref, n, wide, yr);
    }
    bad = test_bytes_differ("y", y, yr, bytes) || test_bytes_differ("state_next", next, next_ref, sizeof next);
    if (bad) printf("  %s, n %lu, wide %d, state_len %lu\n", threefry ? "threefry" : "philox", (unsigned long)n, wide,
                    (unsigned long)state_len);
    free(y), free(yr);
    return bad;
}

/* the state may be its own next state */
static int check_in_place(void) {
    uint64_t a[3] = {0x0123456789abcdefu, 0xfffffffffffffffeu, 42u}, b[3], ya[9], yb[9];
    int bad;
    b[0] = a[0], b[1] = a[1], b[2] = a[2];
    aotc_rng_bits_philox(3, a, a, 9, 1, ya);
    aotc_rng_bits_philox_ref(3, b, b, 9, 1, yb);
    bad = test_bytes_differ("philox in place", a, b, sizeof a) || test_bytes_differ("philox in place y", ya, yb, sizeof ya);
    aotc_rng_bits_threefry(a, a, 5, 0, ya);
    aotc_rng_bits_threefry_ref(b, b, 5, 0, yb);
    return bad | test_bytes_differ("threefry in place", a, b, sizeof a) | test_bytes_differ("threefry in place y", ya, yb, 20);
}

static int check_known_answers(void) {
    static const uint32_t pc[3][4] = {{0u, 0u, 0u, 0u}, {~0u, ~0u, ~0u, ~0u}, {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    static const uint32_t pk[3][2] = {{0u, 0u}, {~0u, ~0u}, {0xa4093822u, 0x299f31d0u}};
    static const uint32_t pw[3][4] = {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
                                      {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
                                      {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
    static const uint32_t tc[3][2] = {{0u, 0u}, {~0u, ~0u}, {0x243f6a88u, 0x85a308d3u}};
    static const uint32_t tk[3][2] = {{0u, 0u}, {~0u, ~0u}, {0x13198a2eu, 0x03707344u}};
    static const uint32_t tw[3][2] = {{0x6b200159u, 0x99ba4efeu}, {0x1cb996fcu, 0xbb002be7u}, {0xc4923a9cu, 0x483df7a0u}};
    uint32_t out[4];
    int bad = 0, i, j;
    for (i = 0; i < 3; ++i) {
        aotc_philox4x32_ref(pc[i], pk[i], out);
        for (j = 0; j < 4; ++j) bad |= out[j] != pw[i][j];
        aotc_threefry2x32_ref(tc[i], tk[i], out);
        for (j = 0; j < 2; ++j) bad |= out[j] != tw[i][j];
    }
    if (bad) printf("the references: MISMATCH on Random123's known answers\n");
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_known_answers() | check_in_place(), threefry;
    for (threefry = 0; threefry < 2; ++threefry) {
        int bad = 0;
        int32_t i;
        for (i = 0; i < shapes && !bad; ++i) bad = check_bits(threefry);
        printf("%-34s %s (%d shapes)\n", threefry ? "aotc_rng_bits_threefry" : "aotc_rng_bits_philox",
               bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
