/* The int8 TFLite CONV_2D and DEPTHWISE_CONV_2D kernels (runtime_c/kernels/tflite_int8/) with their output
 * overlapping their input, as a RAM budget's plan lays them out (aot/plan/planner.py "overlap"): the output
 * starts D bytes below the input in one allocation of exactly max(D + input, output) bytes, D from the
 * compiler's formula (aot/kernels/tflite_int8.py overlap_bytes), the cases written by
 * tests/kernels_c/test_overlap_kernels.py into overlap_cases.h. Each case's output must be the one the same kernel
 * gives with separate buffers, bit for bit; with D less one granule it should usually differ (the
 * program counts those cases: the check can fail). Built under AddressSanitizer on the host (the plain
 * loops) and run on the Cortex-M4 (the DSP paths, at the case's tile or run of sums, p->dsp_tile) and the
 * Cortex-M55 (Helium's CONV_2D) under qemu.
 *
 * `test_overlap_kernels [seed]` prints a line per case that differs and a summary; exit 1 on a mismatch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotc_tflite_int8.h"
#include "kernel_test.h"

/* op (0 CONV_2D, 1 DEPTHWISE_CONV_2D), n, h, w, c, oh, ow, oc, kh, kw, sh, sw, dh, dw, pad_top, pad_left,
 * dsp_tile, D (bytes the output starts below the input), granule (D's multiple) */
typedef struct {
    int32_t op, n, h, w, c, oh, ow, oc, kh, kw, sh, sw, dh, dw, pt, pl, tile, below, granule;
} overlap_case;

#include "overlap_cases.h" /* static const overlap_case CASES[] */

static int8_t *bytes(size_t n) {
    int8_t *b = (int8_t *)malloc(n > 0 ? n : 1);
    if (b == NULL) {
        printf("out of memory (%lu bytes)\n", (unsigned long)n);
        exit(2);
    }
    return b;
}

/* The kernel with the scratch its M-profile paths take (the host's plain loops leave it alone). */
static void run(const overlap_case *k, const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                const int32_t *bias, int8_t *y) {
    const int64_t dsp = k->op ? aotc_tfl_depthwise_s8_dsp_scratch_bytes(p) : aotc_tfl_conv_s8_dsp_scratch_bytes(p);
    const int64_t mve = k->op ? 0 : aotc_tfl_conv_s8_mve_scratch_bytes(p);
    uint32_t *scratch = (uint32_t *)malloc((size_t)(dsp > mve ? dsp : mve) + 4);
    if (k->op) aotc_tfl_depthwise_s8(p, x, w, bias, y, scratch);
    else aotc_tfl_conv_s8(p, x, w, bias, y, scratch);
    free(scratch);
}

/* The case's output in one buffer with its input D bytes above it; 1 if it equals want. */
static int overlapped(const overlap_case *k, const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *w,
                      const int32_t *bias, const int8_t *want, int64_t below) {
    const int64_t in = (int64_t)k->n * k->h * k->w * k->c, out = (int64_t)k->n * k->oh * k->ow * k->oc;
    const int64_t size = below + in > out ? below + in : out;
    int8_t *buf = bytes((size_t)size);
    int same;
    memset(buf, 0x5A, (size_t)size);
    memcpy(buf + below, x, (size_t)in);
    run(k, p, buf + below, w, bias, buf);
    same = memcmp(buf, want, (size_t)out) == 0;
    free(buf);
    return same;
}

int main(int argc, char **argv) {
    const int32_t count = (int32_t)(sizeof(CASES) / sizeof(CASES[0]));
    int32_t i, j, failed = 0, tighter = 0, shrunk = 0;
    test_seed(argc > 1 ? (uint32_t)atoi(argv[1]) : 1u);
    for (i = 0; i < count; ++i) {
        const overlap_case *k = &CASES[i];
        const int64_t in = (int64_t)k->n * k->h * k->w * k->c, out = (int64_t)k->n * k->oh * k->ow * k->oc;
        const int64_t wn = k->op ? (int64_t)k->kh * k->kw * k->oc : (int64_t)k->oc * k->kh * k->kw * k->c;
        int8_t *x = bytes((size_t)in), *w = bytes((size_t)wn), *ref = bytes((size_t)out);
        int32_t *bias = (int32_t *)malloc((size_t)k->oc * 4), *mult = (int32_t *)malloc((size_t)k->oc * 4);
        int32_t *shift = (int32_t *)malloc((size_t)k->oc * 4);
        aotc_tfl_conv_params p;
        for (j = 0; j < in; ++j) x[j] = (int8_t)rand_int(-128, 127);
        for (j = 0; j < wn; ++j) w[j] = (int8_t)rand_int(-127, 127);
        for (j = 0; j < k->oc; ++j) {
            bias[j] = rand_int(-5000, 5000);
            mult[j] = rand_int(1 << 30, 0x7FFFFFFF);
            shift[j] = rand_int(-11, -6);
        }
        memset(&p, 0, sizeof p);
        p.n = k->n, p.h = k->h, p.w = k->w, p.c = k->c, p.oh = k->oh, p.ow = k->ow, p.oc = k->oc;
        p.kh = k->kh, p.kw = k->kw, p.sh = k->sh, p.sw = k->sw, p.dh = k->dh, p.dw = k->dw;
        p.pad_top = k->pt, p.pad_left = k->pl, p.depth_multiplier = k->op ? k->oc / k->c : 1;
        p.x_zero = rand_int(-128, 127), p.y_zero = rand_int(-128, 127), p.y_min = -128, p.y_max = 127;
        p.mult = mult, p.shift = shift;
        run(k, &p, x, w, bias, ref); /* separate buffers, the kernel's own tile */
        p.dsp_tile = k->tile;        /* the plan's tile or run of sums, as a budget may give */
        if (!overlapped(k, &p, x, w, bias, ref, k->below)) {
            printf("MISMATCH case %ld: op %ld %ldx%ldx%ld -> %ldx%ldx%ld k %ldx%ld s %ldx%ld d %ldx%ld pads %ld,%ld "
                   "tile %ld, output %ld bytes below the input\n",
                   (long)i, (long)k->op, (long)k->h, (long)k->w, (long)k->c, (long)k->oh, (long)k->ow, (long)k->oc,
                   (long)k->kh, (long)k->kw, (long)k->sh, (long)k->sw, (long)k->dh, (long)k->dw, (long)k->pt,
                   (long)k->pl, (long)k->tile, (long)k->below);
            ++failed;
        }
        if (k->below >= k->granule) { /* one granule less: the check should see the overwritten input */
            ++tighter;
            shrunk += !overlapped(k, &p, x, w, bias, ref, k->below - k->granule);
        }
        free(x), free(w), free(ref), free(bias), free(mult), free(shift);
    }
    printf("overlap: %ld cases, %ld mismatches; one granule less differs in %ld of %ld\n", (long)count,
           (long)failed, (long)shrunk, (long)tighter);
    if (failed == 0) printf("overlap ok\n");
    return failed ? 1 : 0;
}
