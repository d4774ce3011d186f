/* The TFLite integer kernels (aotc_tflite_int8.h) against the references (tflite_int8_ref.c), bit for
 * bit, through the family's API header only: every entry point, int8 and 16x8, over random shapes
 * and multipliers drawn as the compiler draws them (aot/frontend/tflite/quant.py: multipliers in
 * [2^30, 2^31) with their shifts, ADD's rescaling to twice the larger scale after its left shift,
 * softmax's input radius, LiteRT's tables for the 16x8 activations and softmax), fused activations
 * narrowing the output range. On cores with the DSP extension (the M4, M55) the convolutions, depthwise
 * convolutions, fully connected layers, ADDs and fused CONV_2D + ADDs get scratch of exactly the size
 * their *_scratch_bytes functions give (CONV_2D at a random tile of positions, as the memory plan
 * gives one; the dense layers' weights interleaved by blocks of 4 rows half the time where AOTC_DSP_IL),
 * on the M55 the Helium paths' where they take the shape, CONV_2D's on weights widened at compile time
 * too (--widened-weights): every path a target compiles meets the one definition. Shapes reach the
 * paths' edges: patches longer than a DSP block (kq > 64), odd tiles and channel counts, depthwise
 * 3 x 3 spans over TFL_DSP_DW_PAD, ADDs from AOTC_TFL_ADD_MIN elements, the residual written over its
 * input.
 *
 *     test_tflite_int8_kernels [seed] [shapes per entry point] [a word of the entries' names to run] */
#include "aotc_tflite_int8.h"
#include "kernel_test.h"
#include "kernels_ref.h"

#if defined(__ARM_FEATURE_DSP) && !defined(AOTC_NO_INTRINSICS)
#define DSP 1 /* the DSP paths run where given scratch */
#else
#define DSP 0
#endif
#if DSP && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && !defined(AOTC_NO_MVE)
#define MVE 1
#else
#define MVE 0
#endif
/* Helium's CONV_2D takes its scratch (but at the M55's --flash-budget levels without it: the DSP paths' then) */
#define MVE_CONV (MVE && AOTC_TFL_MVE_CONV)

static void *bytes(size_t n) {
    uint8_t *b = (uint8_t *)malloc(n > 0 ? n : 1);
    size_t i;
    if (b == NULL) {
        printf("out of memory (%lu bytes)\n", (unsigned long)n);
        exit(2);
    }
    for (i = 0; i < n; ++i) b[i] = (uint8_t)(test_next() >> 24);
    return b;
}

static void *bytes_copy(const void *src, size_t n) {
    void *b = bytes(n);
    if (n > 0) memcpy(b, src, n);
    return b;
}

/* n random values of `size` bytes (1, 2, 4: int8, int16, int32) in [lo, hi] */
static void *ints(size_t n, size_t size, int32_t lo, int32_t hi) {
    uint8_t *b = (uint8_t *)bytes(n * size);
    size_t i;
    for (i = 0; i < n; ++i) {
        const int32_t v = rand_int(lo, hi);
        if (size == 1) ((int8_t *)b)[i] = (int8_t)v;
        else if (size == 2) ((int16_t *)b)[i] = (int16_t)v;
        else ((int32_t *)b)[i] = v;
    }
    return b;
}

static int differ(const char *what, const void *y, const void *ref, size_t n, size_t size) {
    size_t i;
    for (i = 0; i < n; ++i) {
        if (memcmp((const char *)y + i * size, (const char *)ref + i * size, size) != 0) {
            int32_t a = 0, b = 0;
            if (size == 1) a = ((const int8_t *)y)[i], b = ((const int8_t *)ref)[i];
            else if (size == 2) a = ((const int16_t *)y)[i], b = ((const int16_t *)ref)[i];
            else if (size == 4) a = ((const int32_t *)y)[i], b = ((const int32_t *)ref)[i];
            printf("%s: element %lu of %lu is %ld, reference %ld\n", what, (unsigned long)i, (unsigned long)n,
                   (long)a, (long)b); /* long, not long long: newlib-nano's printf has no %lld */
            return 1;
        }
    }
    return 0;
}

/* quantize_multiplier: real = m 2^(shift - 31), m in [2^30, 2^31) (rounded half away from zero) */
static void multiplier(double real, int32_t *m, int32_t *shift) {
    int e;
    const double f = frexp(real, &e);
    int64_t q = (int64_t)floor(fabs(f) * 2147483648.0 + 0.5);
    if (q == ((int64_t)1 << 31)) q /= 2, ++e;
    *m = (int32_t)(f < 0 ? -q : q), *shift = e;
}

/* a random real multiplier around `base` (a factor of 0.5 to 2) */
static double around(double base) { return base * (0.5 + 0.75 * (1.0 + (double)rand_float())); }

/* the output range: the type's, or a fused activation's narrower one that holds y_zero */
static void act_range(int32_t lo, int32_t hi, int32_t y_zero, int32_t *y_min, int32_t *y_max) {
    *y_min = chance(1, 3) ? rand_int(lo, y_zero) : lo;
    *y_max = chance(1, 4) ? rand_int(y_zero, hi) : hi;
}

/* ---- CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, CONV_2D + ADD: int8 and 16x8 --------------------------- */

#if defined(__x86_64__)
static int linear_form(aotc_tfl_residual_params *r, int32_t vlo, int32_t vhi);
#endif

enum { K_CONV, K_DEPTHWISE, K_TRANSPOSE, K_CONV_ADD, K_PACKED = 8, K_RING = 16, K_RING6 = 32, K_PW = 64, K_TILES = 128,
       K_AMX = 256, K_MULT = 512, K_RES = 1024 };

/* The host's packed kernels' weights and folded bias, as aot/kernels/tflite_int8.py packs them (the header's
 * "The host's packed kernels"): rows x k weights in quads, blocks of 16 rows (CONV_2D, FULLY_CONNECTED) ... */
static int8_t *pack_quads(const int8_t *w, int32_t rows, int32_t k) {
    const int32_t kp = 4 * ((k + 3) / 4), blocks = (rows + 15) / 16;
    int8_t *wp = (int8_t *)bytes((size_t)blocks * 16 * kp);
    int32_t o, j;
    memset(wp, 0, (size_t)blocks * 16 * kp);
    for (o = 0; o < rows; ++o)
        for (j = 0; j < k; ++j) wp[(((size_t)(o / 16) * (kp / 4) + j / 4) * 16 + o % 16) * 4 + j % 4] = w[(size_t)o * k + j];
    return wp;
}

/* ... a depthwise filter's taps x c weights as int32 (uint16_t)w, blocks of 16 channels ... */
static int32_t *pack_taps(const int8_t *w, int32_t taps, int32_t c) {
    const int32_t blocks = (c + 15) / 16;
    int32_t *wp = (int32_t *)bytes((size_t)blocks * 16 * taps * 4);
    int32_t t, ch;
    memset(wp, 0, (size_t)blocks * 16 * taps * 4);
    for (t = 0; t < taps; ++t)
        for (ch = 0; ch < c; ++ch) wp[((size_t)(ch / 16) * taps + t) * 16 + ch % 16] = (uint16_t)(int16_t)w[(size_t)t * c + ch];
    return wp;
}

/* ... and the bias less zero times each row's sum of weights (rows of k weights, `stride` apart, each `step`),
 * modulo 2^32, 0 past the rows, whole blocks of 16 */
static int32_t *fold_bias(const int32_t *bias, const int8_t *w, int32_t rows, int32_t k, int64_t stride, int64_t step,
                          int32_t zero) {
    int32_t *b = (int32_t *)bytes((size_t)(rows + 15) / 16 * 64), o, j;
    memset(b, 0, (size_t)(rows + 15) / 16 * 64);
    for (o = 0; o < rows; ++o) {
        uint32_t v = bias ? (uint32_t)bias[o] : 0u;
        for (j = 0; j < k; ++j) v -= (uint32_t)zero * (uint32_t)(int32_t)w[o * stride + j * step];
        b[o] = (int32_t)v;
    }
    return b;
}

/* one window dim: SAME or VALID output size and its leading pad (dilated window), 0 where no output */
static int32_t window_dim(int32_t in, int32_t k, int32_t s, int32_t d, int32_t *pad) {
    const int32_t span = (k - 1) * d + 1;
    if (chance(1, 2)) { /* SAME */
        const int32_t out = (in + s - 1) / s, total = (out - 1) * s + span - in;
        *pad = total > 0 ? total / 2 : 0;
        return out;
    }
    *pad = 0;
    return in >= span ? (in - span) / s + 1 : 0;
}

static void draw_conv(aotc_tfl_conv_params *p, int kind, int wide) {
    const int ring = (kind & (K_RING | K_RING6)) != 0; /* only MobileNet's depthwise at column stride 1: the ring */
    const int ring6 = (kind & K_RING6) != 0, pw = (kind & K_PW) != 0, mult = (kind & K_MULT) != 0;
    kind &= ~(K_RING | K_RING6 | K_PW | K_MULT);
    const int dw = kind == K_DEPTHWISE;
    /* a quarter of the depthwise cases as MobileNet's: 3 x 3, 4n channels, no clamp past int8 (the DSP path's
     * bands requantised as they are made) */
    const int mobile = dw && !mult && (ring || chance(1, 4));
    int late = 0, same2 = 0;
    for (;;) {
        memset(p, 0, sizeof *p), late = 0, same2 = 0;
        p->n = rand_int(1, 2), p->h = rand_int(1, 10), p->w = rand_int(1, 12);
        p->kh = chance(1, 2) ? 3 : rand_int(1, 5), p->kw = chance(1, 2) ? p->kh : rand_int(1, 5);
        p->sh = rand_int(1, 2), p->sw = rand_int(1, kind == K_TRANSPOSE ? 3 : 2);
        p->dh = kind == K_TRANSPOSE || chance(3, 4) ? 1 : 2, p->dw = kind == K_TRANSPOSE || chance(3, 4) ? 1 : 2;
        if (dw) {
            p->depth_multiplier = chance(2, 3) ? 1 : rand_int(2, 3);
            p->c = p->depth_multiplier == 1 && chance(2, 3) ? 4 * rand_int(1, 6) : rand_int(1, 9);
            p->oc = p->c * p->depth_multiplier;
            if (chance(1, 6)) p->h = rand_int(20, 34), p->w = rand_int(20, 34), p->n = 1; /* spans past DW_PAD */
            if (mobile) {
                p->kh = p->kw = 3, p->dh = p->dw = 1, p->depth_multiplier = 1;
                p->c = p->oc = 4 * rand_int(1, 6);
                /* taller than wide, as a KWS DS-CNN's 25 x 5: the fused bands by columns */
                if (chance(1, 3)) p->h = rand_int(8, 30), p->w = rand_int(2, 7), p->n = rand_int(1, 2);
                /* a MobileNet's 6 x 6 layers (6 wide SAME, 8 VALID) at stride 1: the ring's rows 6 wide, and 5, 7: odd
                 * pairs, a SAME row's last pair of x_zero (tfl_dsp_dwp_row_p1); a third 11 to 26 wide: rows of
                 * several turns of 6 (TFL_DWP6_ROW_ASM) and each rest after them (TFL_DWP2_ROW_ASM from pair 3 q) */
                else if (chance(1, 2))
                    p->h = rand_int(3, 6), p->w = chance(1, 3) ? rand_int(11, 26) : rand_int(5, 8), p->sh = p->sw = 1;
                /* a MobileNet's stride-2 layers: the fused rows from x (tfl_dsp_dws2): pairs and the edge pair of an
                 * even width SAME (half 4n + 2 square at stride 2, SAME across: the pairs end where it starts, one
                 * position back; square: not by columns), a last row of an even height, single positions at the
                 * edges (odd, VALID) */
                else
                    same2 = chance(1, 2), p->w = same2 ? 4 * rand_int(1, 3) + 2 : rand_int(3, 13),
                    p->h = same2 ? p->w : rand_int(3, 13), p->sh = same2 ? 2 : rand_int(1, 2), p->sw = 2;
                /* the ring's cases (K_RING): 1 to 30 wide, every rest after the turns of 6, row stride 1 or 2 */
                if (ring) p->h = rand_int(1, 8), p->w = rand_int(1, 30), p->sw = 1, p->n = rand_int(1, 2), same2 = 0;
                /* K_RING6: 6 to 30 wide or 3 at row stride 1 (SAME: the group in one function, tfl_dsp_dwp6_same_floor,
                 * tfl_dsp_dwp3_same_floor); its own entry, the last, so the others draw the shapes they did */
                if (ring6) p->w = chance(1, 4) ? 3 : 6 * rand_int(1, 5), p->sh = 1;
                if (ring6 && p->w == 3) p->h = rand_int(1, 3); /* not taller than wide: by rows, not by columns */
            }
            /* K_MULT (its own entry, the last): depth multipliers above 1 by the DSP path's bands of column pairs
             * (tfl_depthwise_s8_mult): 2, 3 and 8 most (blocks of 4 outputs and a part), others to 16; 1 input channel
             * or a few; windows to 10 x 9, odd and even widths (a last pair with a 0 weight), strides 1 and 2 (odd
             * positions' pairs unaligned), row dilation, SAME and VALID; a quarter micro_speech's layer (49 x 40 x 1,
             * 10 x 8 at stride 2, m 8), and runs of sums shorter than a row where the plan says (dsp_tile) */
            if (mult) {
                static const int32_t ms[8] = {2, 3, 8, 2, 3, 8, 5, 16};
                p->depth_multiplier = ms[rand_int(0, 7)], p->c = chance(1, 2) ? 1 : rand_int(2, 4);
                p->kh = rand_int(1, 10), p->kw = rand_int(1, 9), p->dw = 1, p->h = rand_int(1, 24), p->w = rand_int(1, 24);
                if (chance(1, 4))
                    p->depth_multiplier = 8, p->c = 1, p->n = 1, p->h = 49, p->w = 40, p->kh = 10, p->kw = 8,
                    p->sh = p->sw = 2, p->dh = 1;
                p->oc = p->c * p->depth_multiplier;
            }
        } else {
            p->c = chance(1, 6) ? rand_int(29, 40) : rand_int(1, 12); /* 3 x 3 x 29+: more than one DSP block */
            p->oc = chance(1, 3) ? rand_int(4, 24) : rand_int(1, 6);
            if (chance(1, 8)) p->kh = p->kw = p->sh = p->sw = p->dh = p->dw = 1; /* pointwise */
            /* whole groups of 4 channels over quads of input channels: the DSP path's rows of a 1 x 1 conv
             * and its requantisation in the MAC kernel */
            if (chance(1, 4)) p->c = 4 * rand_int(1, 10), p->oc = 4 * rand_int(1, 6);
            /* a MobileNet's late pointwise layer: few positions, more channels out than them, its input a ReLU's
             * (x_zero -128, below): the DSP path's rows doubled; up to 48 quads (aotc_dsp_mac4x2_rq3's last block of
             * 16 and its loop before), a quarter up to 80 (rows in two blocks: the second from quad 64) */
            if (!wide && (pw || chance(1, 8))) {
                p->kh = p->kw = p->sh = p->sw = p->dh = p->dw = 1, late = 1;
                p->c = 4 * rand_int(1, chance(1, 4) ? 80 : 48), p->oc = 4 * rand_int(5, 28), p->n = 1, p->h = rand_int(2, 4), p->w = rand_int(3, 4);
                /* K_PW (its own entry, the last): 1 to 16 positions, odd counts as a 3 x 3 layer's 9 (the last position
                 * of every group in one call of aotc_dsp_mac4x1_rq3), one group of channels or up to 28; the rows' 2
                 * quads (a layer of 8 channels), 4n + 2 and 4n (tfl_dsp_rows_u8_pairs's turns of 2 and 4 quads) */
                if (pw) {
                    /* every second K_PW case (6 to 12 positions) at one of the quad counts around aotc_dsp_mac4x2_rq3's entries, in turn
                     * (no draw: the cases' shapes otherwise as before): on the M33 a pair's first quad apart, the
                     * nq - 1 after it entered past (-(nq - 1)) mod 16, none at nq 1, the last block whole at 17, the
                     * loop of 16 from 18 (its end at 33) */
                    static const int32_t nqs[] = {1, 2, 16, 17, 18, 32, 33, 34, 48, 49};
                    static int32_t pw_turn;
                    p->h = rand_int(1, 4), p->w = rand_int(1, 4), p->oc = 4 * (chance(1, 4) ? 1 : rand_int(2, 28));
                    if (chance(1, 4)) p->c = 8, p->h = rand_int(2, 12), p->w = rand_int(2, 12);
                    /* (6, 9, 12 and 15 positions: on the M33 aotc_dsp_mac2x4_rq3's blocks of 4 and a rest of 2, 1, 0
                     * and 3 after them in the pairs' layout) */
                    if (pw_turn++ % 2 == 0)
                        p->c = 4 * nqs[(pw_turn / 2) % 10], p->h = 2 + (pw_turn / 2 + pw_turn / 20) % 4, p->w = 3;
                }
            }
            if (!pw && chance(1, 6)) p->h = rand_int(8, 14), p->w = rand_int(8, 16); /* pairs of windows inside */
            if (!pw && chance(1, 8)) { /* an RGB stem: the DSP path's windows straight from x (tfl_dsp_rgb_tile) */
                p->c = 3, p->kh = p->kw = 3, p->dh = p->dw = 1, p->h = rand_int(3, 14), p->w = rand_int(3, 16);
            }
        }
        if (kind == K_TRANSPOSE) { /* out = (in - 1) s + k - pads, pads < k */
            const int32_t pb = rand_int(0, p->kh - 1), pr = rand_int(0, p->kw - 1);
            p->pad_top = rand_int(0, p->kh - 1), p->pad_left = rand_int(0, p->kw - 1);
            p->oh = (p->h - 1) * p->sh + p->kh - p->pad_top - pb, p->ow = (p->w - 1) * p->sw + p->kw - p->pad_left - pr;
            p->h = p->h > 6 ? 6 : p->h, p->w = p->w > 6 ? 6 : p->w;
            p->oh = (p->h - 1) * p->sh + p->kh - p->pad_top - pb, p->ow = (p->w - 1) * p->sw + p->kw - p->pad_left - pr;
        } else {
            p->oh = window_dim(p->h, p->kh, p->sh, p->dh, &p->pad_top);
            p->ow = window_dim(p->w, p->kw, p->sw, p->dw, &p->pad_left);
            if (same2) { /* SAME's columns (window 3, stride 2) */
                const int32_t total = (p->w + 1) / 2 * 2 + 1 - p->w;
                p->ow = (p->w + 1) / 2, p->pad_left = total > 0 ? total / 2 : 0;
            }
        }
        if (p->oh > 0 && p->ow > 0) break;
    }
    /* a quarter of the int8 cases with the output's zero point at -128 (a ReLU's usual one: the DSP paths' kernels
     * without the sign term), from the same draw (the later cases' shapes as before) */
    p->x_zero = wide ? 0 : rand_int(-128, 127), p->y_zero = wide ? 0 : rand_int(-128, 127);
    if (p->y_zero >= 64) p->y_zero = -128;
    /* and about an eighth with the input's at -128 (a ReLU's output, every MobileNet pointwise layer's input: the DSP
     * path's rows widened as x ^ 0x80, doubled or not) */
    if (p->x_zero >= 96 || late) p->x_zero = -128;
    if (late && chance(1, 2)) p->y_zero = -128;
    if (pw && chance(1, 2)) p->y_zero = -128;
    act_range(wide ? -32768 : -128, wide ? 32767 : 127, p->y_zero, &p->y_min, &p->y_max);
    if (mobile && !wide) p->y_min = -128, p->y_max = 127;
}

/* the packed kernel of the int8 conv p (kind: K_CONV, K_DEPTHWISE, K_CONV_ADD) on w packed, and the reference */
static void run_packed(const aotc_tfl_conv_params *p, int kind, const aotc_tfl_residual_params *r, const int8_t *x,
                       const int8_t *w, const int32_t *bias, const int8_t *res, int in_place, int8_t *y, int8_t *ref,
                       uint8_t *scratch) {
    const int32_t taps = p->kh * p->kw, k = taps * p->c;
    if (kind == K_DEPTHWISE) {
        int32_t *wp = pack_taps(w, taps, p->c), *b = fold_bias(bias, w, p->c, taps, 1, p->c, p->x_zero);
        aotc_tfl_depthwise_s8_packed(p, x, wp, b, y, scratch);
        aotc_tfl_depthwise_s8_ref(p, x, w, bias, ref);
        free(wp), free(b);
        return;
    }
    {
        /* at dilation 1 across (tfl_pk_direct) each kernel row of kw c weights padded to whole quads */
        const int32_t run = p->kw * p->c, rq = tfl_pk_row_quads(p), kd = p->kh * 4 * rq;
        int8_t *wr = (int8_t *)bytes((size_t)p->oc * kd), *wp;
        int32_t *b = fold_bias(bias, w, p->oc, k, k, 1, 128 + p->x_zero);
        int32_t o, ky, j;
        memset(wr, 0, (size_t)p->oc * kd);
        for (o = 0; o < p->oc; ++o)
            for (ky = 0; ky < p->kh; ++ky)
                for (j = 0; j < run; ++j) wr[(size_t)o * kd + ky * 4 * rq + j] = w[((size_t)o * p->kh + ky) * run + j];
        wp = tfl_pk_direct(p) ? pack_quads(wr, p->oc, kd) : pack_quads(w, p->oc, k);
        free(wr);
        if (kind == K_CONV) {
            aotc_tfl_conv_s8_packed(p, x, wp, b, y, scratch);
            aotc_tfl_conv_s8_ref(p, x, w, bias, ref);
        } else {
            aotc_tfl_conv_add_s8_packed(p, r, x, wp, b, in_place ? y : res, y, scratch);
            aotc_tfl_conv_add_s8_ref(p, r, x, w, bias, res, ref);
        }
        free(wp), free(b);
    }
}

/* CONV_2D's weights as --widened-weights stores them (aot/kernels/tflite_int8.py widen_weights): per group of 4
 * channels (past oc the last repeated), per quad of the row of k, bytes 0 and 2 of the 4 channels' quads as 16-bit
 * halves, then bytes 1 and 3; doubled with dbl */
static uint32_t *widen_weights(const int8_t *w, int32_t oc, int32_t k, int dbl) {
    const int32_t kq = (k + 3) / 4, groups = (oc + 3) / 4;
    uint32_t *wx = (uint32_t *)bytes((size_t)groups * kq * 32);
    int32_t g, q, j, i;
    for (g = 0; g < groups; ++g)
        for (q = 0; q < kq; ++q)
            for (j = 0; j < 4; ++j) {
                const int32_t c = 4 * g + j < oc ? 4 * g + j : oc - 1;
                uint32_t h[4];
                for (i = 0; i < 4; ++i) {
                    const int32_t v = 4 * q + i < k ? w[(int64_t)c * k + 4 * q + i] * (dbl ? 2 : 1) : 0;
                    h[i] = (uint32_t)(uint16_t)(int16_t)v;
                }
                wx[((int64_t)g * kq + q) * 8 + j] = h[0] | h[2] << 16;
                wx[((int64_t)g * kq + q) * 8 + 4 + j] = h[1] | h[3] << 16;
            }
    return wx;
}

/* CONV_2D's fused requantisation's terms as --widened-weights stores them (aot/kernels/tflite_int8.py
 * requant_terms): per group of 4 channels (past oc the last repeated), each bias doubled, then each channel's mult,
 * ra = 2^(right-1) + y_zero 2^right, right (0 where right is not above 0: the kernel reads none of such a layer) */
static int32_t *requant_terms(const aotc_tfl_conv_params *p, const int32_t *bias) {
    const int32_t groups = (p->oc + 3) / 4;
    int32_t *rq = (int32_t *)bytes((size_t)groups * 64), g, j;
    for (g = 0; g < groups; ++g)
        for (j = 0; j < 4; ++j) {
            const int32_t c = 4 * g + j < p->oc ? 4 * g + j : p->oc - 1, right = -p->shift[c];
            rq[16 * g + j] = (int32_t)((uint32_t)(bias ? bias[c] : 0) << 1);
            rq[16 * g + 4 + 3 * j] = p->mult[c];
            rq[16 * g + 5 + 3 * j] = right > 0 && right <= 22 ? (2 * p->y_zero + 1) * (1 << (right - 1)) : 0;
            rq[16 * g + 6 + 3 * j] = right;
        }
    return rq;
}

/* DEPTHWISE_CONV_2D's fused 3 x 3 set-up as --widened-weights stores it (aot/kernels/tflite_int8.py depthwise_blocks),
 * or NULL where the emitter would not (_dw_fused: TFL_DSP_DW_BAND at the kernel's own run, depth multiplier 1, 4n
 * channels, no clamp past int8, every group's bound and shifts tfl_dsp_dw_usual's): per group of 4 channels the 9
 * taps' [c0, c2], [c1, c3] doubled as halves, each channel's mult, ra = 2^(right-1) + y_zero 2^right, right, then
 * each channel's 2 bias - 2 x_zero times its weights' sum */
static uint32_t *dw_blocks(const aotc_tfl_conv_params *p, const int8_t *w, const int32_t *bias) {
    int32_t g, j, t;
    if (!TFL_DSP_DW_BAND(p) || p->depth_multiplier != 1 || p->c % 4 || p->y_min != -128 || p->y_max != 127) return NULL;
    for (j = 0; j < p->oc; ++j) {
        const int64_t b = bias ? bias[j] : 0;
        if (9 * 255 * 128 + (b < 0 ? -b : b) >= ((int64_t)1 << 30) || p->mult[j] == INT32_MIN || -p->shift[j] < 1 ||
            -p->shift[j] > 22)
            return NULL;
    }
    uint32_t *blk = (uint32_t *)bytes((size_t)p->oc / 4 * TFL_DSP_DW_BLOCK * 4);
    for (g = 0; g < p->oc / 4; ++g) {
        uint32_t *d = blk + (ptrdiff_t)g * TFL_DSP_DW_BLOCK;
        for (t = 0; t < 9; ++t)
            for (j = 0; j < 2; ++j)
                d[2 * t + j] = (uint32_t)(uint16_t)(2 * w[t * p->oc + 4 * g + j]) |
                               (uint32_t)(uint16_t)(2 * w[t * p->oc + 4 * g + j + 2]) << 16;
        for (j = 0; j < 4; ++j) {
            const int32_t ch = 4 * g + j, right = -p->shift[ch];
            int32_t sum = 0;
            for (t = 0; t < 9; ++t) sum += w[t * p->oc + ch];
            d[18 + 3 * j] = (uint32_t)p->mult[ch];
            d[19 + 3 * j] = (1u << (right - 1)) + ((uint32_t)p->y_zero << right);
            d[20 + 3 * j] = (uint32_t)right;
            d[30 + j] = ((uint32_t)(bias ? bias[ch] : 0) << 1) - 2u * (uint32_t)p->x_zero * (uint32_t)sum;
        }
    }
    return blk;
}

/* p->dsp_dwb as the compiler gives it (aot/kernels/tflite_int8.py _dw_half_base): each channel's bias less x_zero times
 * its 9 weights' sum; NULL where the kernel is not 3 x 3, the depth multiplier not 1, or a channel fails the ring's
 * set-up's tests (the sum in [-2^29, 2^29), a right shift in [1, 22], a multiplier not negative), which the kernel
 * then does not make */
static int32_t *dw_half_base(const aotc_tfl_conv_params *p, const int8_t *w, const int32_t *bias) {
    int32_t j, t;
    if (p->kh != 3 || p->kw != 3 || p->depth_multiplier != 1 || p->c % 4) return NULL;
    int32_t *hb = (int32_t *)bytes((size_t)p->oc * 4);
    for (j = 0; j < p->oc; ++j) {
        uint32_t sum = 0;
        for (t = 0; t < 9; ++t) sum += (uint32_t)(int32_t)w[t * p->oc + j];
        const int64_t half = (int64_t)(bias ? bias[j] : 0) - (int64_t)p->x_zero * (int32_t)sum;
        if (half < -((int64_t)1 << 29) || half >= ((int64_t)1 << 29) || -p->shift[j] < 1 || -p->shift[j] > 22 ||
            p->mult[j] < 0) {
            free(hb);
            return NULL;
        }
        hb[j] = (int32_t)half;
    }
    return hb;
}

/* Whether every channel takes the DSP path's usual requantisation (tfl_dsp_usual; the compiler's _dsp_fused): the
 * compiler gives the terms (dsp_rq) only then, and the kernel does not check it again */
static int usual_requant(const aotc_tfl_conv_params *p, int32_t k, const int32_t *bias) {
    int32_t c;
    if (p->y_max != 127 || p->y_min < -128) return 0;
    for (c = 0; c < p->oc; ++c) {
        const int32_t mult = p->mult[c], shift = p->shift[c];
        const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
        const int64_t b = bias ? bias[c] : 0, bound = (int64_t)k * 32640 + (b < 0 ? -b : b);
        if (mult == INT32_MIN || left >= 30 || bound >= ((int64_t)1 << (30 - left)) || right == 0 || right > 22)
            return 0;
    }
    return 1;
}

static int check_conv(int kind, int wide) {
    static const char *const names[3][4] = {
        {"aotc_tfl_conv_s8", "aotc_tfl_depthwise_s8", "aotc_tfl_transpose_conv_s8", "aotc_tfl_conv_add_s8"},
        {"aotc_tfl_conv_s16", "aotc_tfl_depthwise_s16", "aotc_tfl_transpose_conv_s16", ""},
        {"aotc_tfl_conv_s8_packed", "aotc_tfl_depthwise_s8_packed", "", "aotc_tfl_conv_add_s8_packed"}};
    const int packed = (kind & K_PACKED) != 0;
    aotc_tfl_conv_params p;
    aotc_tfl_residual_params r;
    const size_t xs = wide ? 2 : 1;
    int32_t *mult, *shift, c, k;
    size_t xn, wn, yn;
    void *x, *bias = NULL, *y, *ref, *res = NULL;
    int8_t *w;
    uint32_t *scratch = NULL, *wx = NULL, *dwb = NULL;
    int32_t *hb = NULL;
    int32_t *rq = NULL;
    int64_t scratch_bytes = 0;
    int bad, in_place = 0;
    const int ring = kind & (K_RING | K_RING6 | K_PW | K_MULT), pw = (kind & K_PW) != 0, tiles = (kind & K_TILES) != 0;
    const int amx = (kind & K_AMX) != 0, resfast = (kind & K_RES) != 0;
    kind &= ~(K_PACKED | K_RING | K_RING6 | K_PW | K_TILES | K_AMX | K_MULT | K_RES);
    draw_conv(&p, kind | ring, wide);
    if (packed && kind == K_DEPTHWISE) p.depth_multiplier = 1, p.oc = p.c; /* the packed kernel's */
    if (packed && kind == K_DEPTHWISE && chance(1, 4)) { /* tall kernels: the VBMI path's rows of up to 8 taps (two
                                                            quads a row past 4), 16 quads and past */
        p.kh = rand_int(6, 9), p.kw = rand_int(1, 8), p.dw = chance(3, 4) ? 1 : 2, p.h = rand_int(4, 16);
        do {
            p.oh = window_dim(p.h, p.kh, p.sh, p.dh, &p.pad_top), p.ow = window_dim(p.w, p.kw, p.sw, p.dw, &p.pad_left);
        } while (p.oh <= 0 || p.ow <= 0);
    }
    if (packed && chance(1, 3)) /* blocks of 16 channels and a part; past 64: the tiles of 64 and of 32 or 48 */
        p.oc = chance(1, 2) ? rand_int(17, 40) : rand_int(65, 136);
    if (packed && kind == K_DEPTHWISE) p.oc = p.c = chance(1, 2) ? p.oc : p.c;
    /* K_TILES (entries of their own, the last): the packed CONV_2D's AMX tiles (tflite_int8_amx.h): rows of 17 to 40
     * positions (tiles of 16 in place at the stride, then positions past an output row's end copied) or fewer,
     * kernel rows of whole tiles of 16 quads (16n channels) or with a tail, 1 to 4 blocks of channels and a part */
    if (tiles) {
        p.c = chance(1, 2) ? 16 * rand_int(1, 4) : rand_int(13, 70), p.n = rand_int(1, 2);
        do {
            p.h = rand_int(1, 6), p.w = chance(2, 3) ? rand_int(17, 40) : rand_int(3, 16);
            p.oh = window_dim(p.h, p.kh, p.sh, p.dh, &p.pad_top), p.ow = window_dim(p.w, p.kw, p.sw, p.dw, &p.pad_left);
        } while (p.oh <= 0 || p.ow <= 0);
        p.oc = chance(1, 2) ? rand_int(1, 40) : rand_int(33, 136);
    }
    /* K_AMX (entries of their own, the last): the shapes of each way the AMX tiles read a direct CONV_2D
     * (tflite_int8_amx.h, tfl_amx_mode), ResNet-50's among them: in place in the span (stride 1, kw c a multiple of
     * 64: 1 x 1 and 3 x 3 on 64 or 128 channels, 2 x 2 on 32, dilated down; 1 x 1 on any c from 64, its K tail read in
     * place), a compact image (1 x 1 at stride 2), or
     * packed patches (the 7 x 7 stem at stride 2 on 3 channels, 3 x 3 at stride 2, 5 x 5: a K tail of the last
     * block's weights); images of 16 positions or a few more (one tile pair, the last tile moved back) to 20 x 20
     * (many pairs, M outer or N outer), the last pair of rows short; 1 to 16 channels out, 16n, and 16n + a part
     * past 2, 4 or 8 blocks (a pair's single last block) */
    if (amx) {
        const int way = rand_int(0, 2);
        p.n = rand_int(1, 2), p.dh = p.dw = 1, p.sh = p.sw = 1;
        if (way == 0) {
            const int form = rand_int(0, 3);
            p.kh = p.kw = form == 0 ? 1 : form == 3 ? 2 : 3, p.c = form == 3 ? 32 : 64 * rand_int(1, 2);
            if (form == 0 && chance(1, 2)) p.c = rand_int(64, 170); /* a K tail read in place */
            if (form == 2) p.dh = 2;
        } else if (way == 1) {
            p.kh = p.kw = 1, p.c = chance(1, 2) ? 64 * rand_int(1, 3) : rand_int(64, 200), p.sh = 2, p.sw = rand_int(1, 2);
        } else {
            const int form = rand_int(0, 2);
            p.kh = p.kw = form == 0 ? 7 : form == 1 ? 3 : 5, p.c = form == 0 ? 3 : rand_int(5, 24);
            p.sh = p.sw = form == 2 ? 1 : 2;
        }
        do {
            p.h = chance(1, 3) ? rand_int(2, 8) : rand_int(8, 20), p.w = chance(1, 3) ? rand_int(2, 8) : rand_int(8, 20);
            p.oh = window_dim(p.h, p.kh, p.sh, p.dh, &p.pad_top), p.ow = window_dim(p.w, p.kw, p.sw, p.dw, &p.pad_left);
        } while (p.oh <= 0 || p.ow <= 0);
        p.oc = chance(1, 4) ? rand_int(1, 16) : chance(1, 3) ? 16 * rand_int(1, 9) : 16 * rand_int(2, 8) + rand_int(1, 15);
        p.oc = p.oc > 136 ? 136 : p.oc;
        if (chance(1, 3)) p.y_min = -128, p.y_max = 127; /* the narrowing's saturation as the clamp */
        else if (chance(1, 2)) p.y_min = p.y_zero; /* a ReLU's range (the tiles' u32 without its correction) */
    }
    k = kind == K_DEPTHWISE ? p.kh * p.kw : p.kh * p.kw * p.c;
    xn = (size_t)p.n * p.h * p.w * p.c, yn = (size_t)p.n * p.oh * p.ow * p.oc;
    wn = kind == K_DEPTHWISE ? (size_t)p.kh * p.kw * p.oc : (size_t)p.oc * p.kh * p.kw * p.c;
    x = ints(xn, xs, wide ? -32768 : -128, wide ? 32767 : 127), w = (int8_t *)ints(wn, 1, -127, 127);
    if (chance(5, 6)) {
        bias = bytes((size_t)p.oc * (wide ? 8 : 4));
        for (c = 0; c < p.oc; ++c) {
            if (wide) ((int64_t *)bias)[c] = rand_int(-(1 << 24), 1 << 24);
            else ((int32_t *)bias)[c] = rand_int(-(1 << 16), 1 << 16);
        }
    }
    /* a quarter of the ring's int8 layers with bias (from the shapes, not a draw: the later cases' as before): one
     * channel's bias at the fused path's bound, |bias| < 2^30 - 9 TFL_DSP_PRODUCT_MAX (tfl_dsp_dw_usual's): just
     * inside (the fused band path), just past or far past (its doubled sums would wrap: the group by another path),
     * either sign */
    if ((ring & (K_RING | K_RING6)) && kind == K_DEPTHWISE && bias && !wide && (p.h + p.w + p.n) % 4 == 1) {
        const int32_t lim = (1 << 30) - 9 * 32640 - 1, at = (7 * p.h + p.w) % 3;
        const int32_t v = at == 0 ? lim : at == 1 ? lim + 1 : 3 << 29;
        ((int32_t *)bias)[(p.h * p.w) % p.oc] = p.w % 2 ? -v : v;
    }
    /* and a quarter of the SAME ring's layers of 3 groups or more (another rest of the same sum): the second group's
     * first bias 2^29, past the ring's set-up's test (tfl_dsp_dw_ring_setup: [-2^29, 2^29)) but inside the fused
     * path's bound: that group by the fused band path, which takes the scratch (the ring's row of x_zero then not kept
     * for the third) */
    if ((ring & K_RING6) && kind == K_DEPTHWISE && bias && !wide && p.oc >= 12 && (p.h + p.w + p.n) % 4 == 2)
        ((int32_t *)bias)[4] = 1 << 29;
    mult = (int32_t *)bytes((size_t)p.oc * 4), shift = (int32_t *)bytes((size_t)p.oc * 4);
    for (c = 0; c < p.oc; ++c) { /* outputs over the range, some saturating: about 1 / (the sums' spread), a
                                   * channel's scale halved, kept or doubled by turns so that the channels of a
                                   * group differ in their shifts (a kernel taking one channel's shift for another's
                                   * fails), with the same draws as before */
        const double spread = (wide ? 32768.0 * 64.0 : 64.0 * 64.0) * sqrt((double)(k < 1 ? 1 : k));
        multiplier(ldexp(around((wide ? 32768.0 : 128.0) / spread), (int)(c % 3) - 1), &mult[c], &shift[c]);
    }
    /* a third of the SAME ring's layers of 3 groups or more: the second group's first channel shifted past the
     * fused path's right shifts (the others' path takes the scratch: the ring's row of x_zero not kept for the third,
     * tfl_dsp_dwp6_same_floor) */
    if ((ring & K_RING6) && p.oc >= 12 && chance(1, 3)) shift[4] = -25;
    /* the DSP conv's usual requantisation at its largest right shift (TFL_DSP_CONV_RIGHT, 23: a fifth of the int8
     * CONV_2D cases, from the shapes, not a draw) and a channel past it (24: another fifth; a patch of several blocks
     * then takes tfl_dsp_mac4x2_rqa on the other groups only) */
    if (!wide && !packed && (kind == K_CONV || kind == K_CONV_ADD) && (xn + wn) % 5 >= 3)
        shift[(xn + wn) % p.oc] = (xn + wn) % 5 == 3 ? -23 : -24;
    /* K_AMX: a fifth of the layers with a channel's multiplier past 1 (a left shift: the output stage's own code) */
    if (amx && chance(1, 5)) shift[p.oc - 1] = rand_int(1, 2);
    /* the other packed layers: a fifth with a channel shifted left (the VNNI output stage's first shift, which a block
     * makes only where a lane has one), a fifth with one shifted right past 23 (its block's zero point then added
     * apart, not folded into the rounding terms: tflite_int8_packed.c, tfl_pk_rq) */
    if (packed && !amx && chance(1, 5)) shift[rand_int(0, p.oc - 1)] = rand_int(1, 2);
    if (packed && !amx && chance(1, 5)) shift[rand_int(0, p.oc - 1)] = -rand_int(24, 30);
    /* and a fifth with one at shift 0 (no right shift: the odd lanes' result shifted up into place, not the one shift
     * of tfl_pk_rq's odd1 that every other block takes) */
    if (packed && !amx && chance(1, 5)) shift[rand_int(0, p.oc - 1)] = 0;
    p.mult = mult, p.shift = shift;
    y = bytes(yn * xs), ref = bytes(yn * xs);
    if (packed) scratch_bytes = kind == K_DEPTHWISE ? aotc_tfl_depthwise_s8_packed_scratch_bytes(&p)
                                                    : aotc_tfl_conv_s8_packed_scratch_bytes(&p);
    if (kind == K_CONV && !wide && DSP && !packed) {
        p.dsp_tile = chance(1, 2) ? 0 : 2 * rand_int(1, 32); /* the memory plan's tile of positions (0: its own) */
        scratch_bytes = MVE_CONV && aotc_tfl_conv_s8_mve_scratch_bytes(&p) > 0 ? aotc_tfl_conv_s8_mve_scratch_bytes(&p)
                                                                             : aotc_tfl_conv_s8_dsp_scratch_bytes(&p);
    }
    if (kind == K_DEPTHWISE && !wide && DSP && !packed) {
        /* the memory plan's run of sums where a RAM budget shortens it: 0 (its own) or 1 up to past a row */
        p.dsp_tile = chance(1, 2) ? 0 : rand_int(1, 2 * p.ow + 2);
        scratch_bytes = aotc_tfl_depthwise_s8_dsp_scratch_bytes(&p);
    }
    if (kind == K_CONV_ADD) {
        const double s1 = around(0.05), s2 = around(0.05), so = around(0.1), twice = 2.0 * (s1 > s2 ? s1 : s2);
        memset(&r, 0, sizeof r);
        r.conv_x1 = chance(1, 2);
        r.add.count = (int64_t)yn;
        r.add.x1_zero = rand_int(-128, 127), r.add.x2_zero = rand_int(-128, 127), r.add.y_zero = rand_int(-128, 127);
        if (r.conv_x1) r.add.x1_zero = p.y_zero; else r.add.x2_zero = p.y_zero;
        /* a third at the ADD's zero point -128 (a ReLU's floor, as IC02's and ResNet-8's): the DSP path's loop
         * without the sign term (tfl_dsp_residual_fast's floor); chosen from the draws so far, not a draw */
        if (((uint32_t)r.add.x1_zero ^ (uint32_t)r.add.x2_zero) % 3 == 0) r.add.y_zero = -128;
        multiplier(s1 / twice, &r.add.m1, &r.add.s1), multiplier(s2 / twice, &r.add.m2, &r.add.s2);
        multiplier(twice / (1048576.0 * so), &r.add.mult, &r.add.shift);
        act_range(-128, 127, r.add.y_zero, &r.add.y_min, &r.add.y_max);
        /* K_RES (an entry of its own, the last): the ADD's output without an upper clamp, half at the zero point and
         * lower clamp -128: the tables' loops of the DSP path (tfl_dsp_residual_fast) and Helium's
         * (tfl_mve_residual_fast), with TFLite's sign term and a lower clamp (ReLU's) or without */
        if (resfast) {
            r.add.y_max = 127;
            if (chance(1, 2)) r.add.y_zero = r.add.y_min = -128;
        }
#if defined(__x86_64__)
        /* K_AMX: half the fused ADDs by the compiler's linear form where one is found (the tiles' own loop of it) */
        if (amx && chance(1, 2)) linear_form(&r, p.y_min, p.y_max);
#endif
        res = ints(yn, 1, -128, 127);
        in_place = chance(1, 2);
        if (in_place) memcpy(y, res, yn);
        if (DSP && !packed) {
            p.dsp_tile = chance(1, 2) ? 0 : 2 * rand_int(1, 32);
            scratch_bytes = MVE_CONV && aotc_tfl_conv_add_s8_mve_scratch_bytes(&p) > 0
                                ? aotc_tfl_conv_add_s8_mve_scratch_bytes(&p)
                                : aotc_tfl_conv_add_s8_dsp_scratch_bytes(&p);
        }
    }
    if ((ring & K_MULT) && DSP && scratch_bytes <= 0) { /* (the path takes every K_MULT shape: dilation 1 across) */
        printf("aotc_tfl_depthwise_s8 (multiplier): no scratch for the DSP path, depth multiplier %d\n",
               (int)p.depth_multiplier);
        return 1;
    }
    if (scratch_bytes > 0) scratch = (uint32_t *)bytes((size_t)scratch_bytes);
    if ((kind == K_CONV || kind == K_CONV_ADD) && !wide && DSP && !packed && (pw || (xn + wn) % 3 != 0)) {
        /* two thirds of the DSP cases on weights widened at compile time, doubled or not (the kernel widens them
         * itself where a doubled block does not fit the tile's path), from the shapes (the draws as before) */
        p.dsp_wx_dbl = pw ? chance(3, 4) : (xn + wn) % 3 == 2; /* (K_PW: mostly the compiler's doubled form) */
        p.dsp_wx = wx = widen_weights(w, p.oc, k, p.dsp_wx_dbl);
        /* doubled, with the requantisation's terms at compile time (read in place) as the compiler emits them (the
         * terms built at run time: the other cases'); an odd count of positions without a clamp past int8 at the
         * zero point -128 (aotc_dsp_mac4x1_rq3 on the block: an odd tile's last position, as VWW's 3 x 3 layers'),
         * and so half the even counts (aotc_dsp_mac4x2_rq3 on a tile's groups in one call) */
        if (p.dsp_wx_dbl && (p.n * p.oh * p.ow % 2 || (xn + wn) % 2) && p.y_min == -128 && p.y_max == 127)
            p.y_zero = -128;
        if (p.dsp_wx_dbl && usual_requant(&p, k, (const int32_t *)bias))
            p.dsp_rq = rq = requant_terms(&p, (const int32_t *)bias);
    }
    /* half the DSP conv cases whose every channel takes the usual requantisation with the compiler's word for it
     * (p->dsp_usual: the kernel then does not check it a call), from the draws (not a draw: the later cases as
     * before) */
    if ((kind == K_CONV || kind == K_CONV_ADD) && !wide && DSP && !packed && ((uint32_t)p.x_zero + (uint32_t)p.oc) % 2)
        p.dsp_usual = usual_requant(&p, k, (const int32_t *)bias);
    /* half the DSP depthwise cases with the fused 3 x 3 set-up at compile time where the emitter gives it (the
     * choice from the draws so far, not a draw: the later cases as before; xn + wn is even where it applies) */
    if (kind == K_DEPTHWISE && !wide && DSP && !packed && ((uint32_t)p.x_zero + (uint32_t)p.w) % 2)
        p.dsp_dw = dwb = dw_blocks(&p, w, (const int32_t *)bias);
    /* half the others with the compiler's bias less x_zero times the weights' sum (p->dsp_dwb, _dw_half_base: the
     * ring path's set-up then does not sum the weights), not a draw */
    else if (kind == K_DEPTHWISE && !wide && DSP && !packed && ((uint32_t)p.x_zero + (uint32_t)p.h) % 2)
        p.dsp_dwb = hb = dw_half_base(&p, w, (const int32_t *)bias);
    if (packed) {
        run_packed(&p, kind, &r, (const int8_t *)x, w, (const int32_t *)bias, (const int8_t *)res, in_place,
                   (int8_t *)y, (int8_t *)ref, (uint8_t *)scratch);
        wide = 2; /* (the names' row) */
    } else {
        switch (kind + 4 * wide) {
    case K_CONV:
        aotc_tfl_conv_s8(&p, (const int8_t *)x, w, (const int32_t *)bias, (int8_t *)y, scratch);
        aotc_tfl_conv_s8_ref(&p, (const int8_t *)x, w, (const int32_t *)bias, (int8_t *)ref);
        break;
    case K_DEPTHWISE:
        aotc_tfl_depthwise_s8(&p, (const int8_t *)x, w, (const int32_t *)bias, (int8_t *)y, scratch);
        aotc_tfl_depthwise_s8_ref(&p, (const int8_t *)x, w, (const int32_t *)bias, (int8_t *)ref);
        break;
    case K_TRANSPOSE:
        aotc_tfl_transpose_conv_s8(&p, (const int8_t *)x, w, (const int32_t *)bias, (int8_t *)y);
        aotc_tfl_transpose_conv_s8_ref(&p, (const int8_t *)x, w, (const int32_t *)bias, (int8_t *)ref);
        break;
    case K_CONV_ADD:
        aotc_tfl_conv_add_s8(&p, &r, (const int8_t *)x, w, (const int32_t *)bias, (const int8_t *)(in_place ? y : res),
                             (int8_t *)y, scratch);
        aotc_tfl_conv_add_s8_ref(&p, &r, (const int8_t *)x, w, (const int32_t *)bias, (const int8_t *)res, (int8_t *)ref);
        break;
    case 4 + K_CONV:
        aotc_tfl_conv_s16(&p, (const int16_t *)x, w, (const int64_t *)bias, (int16_t *)y);
        aotc_tfl_conv_s16_ref(&p, (const int16_t *)x, w, (const int64_t *)bias, (int16_t *)ref);
        break;
    case 4 + K_DEPTHWISE:
        aotc_tfl_depthwise_s16(&p, (const int16_t *)x, w, (const int64_t *)bias, (int16_t *)y);
        aotc_tfl_depthwise_s16_ref(&p, (const int16_t *)x, w, (const int64_t *)bias, (int16_t *)ref);
        break;
    default:
        aotc_tfl_transpose_conv_s16(&p, (const int16_t *)x, w, (const int64_t *)bias, (int16_t *)y);
        aotc_tfl_transpose_conv_s16_ref(&p, (const int16_t *)x, w, (const int64_t *)bias, (int16_t *)ref);
        break;
        }
    }
    bad = differ(names[wide][kind], y, ref, yn, xs);
    if (bad) {
        printf("  n %d, in %dx%dx%d, out %dx%dx%d, kernel %dx%d, strides %d %d, dilations %d %d, pads %d %d, "
               "depth_multiplier %d, x_zero %d, y_zero %d, range [%d, %d], bias %d, dsp_tile %d, scratch %ld bytes, "
               "in place %d, widened weights %d (doubled %d, terms %d), depthwise set-up %d, usual %d\n", (int)p.n, (int)p.h, (int)p.w, (int)p.c, (int)p.oh, (int)p.ow, (int)p.oc, (int)p.kh,
               (int)p.kw, (int)p.sh, (int)p.sw, (int)p.dh, (int)p.dw, (int)p.pad_top, (int)p.pad_left,
               (int)p.depth_multiplier, (int)p.x_zero, (int)p.y_zero, (int)p.y_min, (int)p.y_max, bias != NULL,
               (int)p.dsp_tile, (long)scratch_bytes, in_place, wx != NULL, (int)p.dsp_wx_dbl,
               rq != NULL, dwb != NULL, (int)p.dsp_usual);
        if (hb) printf("  with dsp_dwb\n");
    }
    free(x), free(w), free(bias), free(mult), free(shift), free(y), free(ref), free(res), free(scratch), free(wx);
    free(rq), free(dwb), free(hb);
    return bad;
}

/* ---- FULLY_CONNECTED ------------------------------------------------------------------------------------ */

static int check_fc(int form) {
    /* form 2: aotc_tfl_fc_s8_packed; 3: the same over 5 to 40 rows (its tiles of 6 rows, issue 64) */
    const int packed = form >= 2, wide = form == 1;
    aotc_tfl_fc_params p;
    const size_t xs = wide ? 2 : 1;
    int32_t *mult, *shift, o, k;
    void *x, *bias = NULL, *y, *ref;
    int8_t *w, *w_arg;
    uint32_t *scratch = NULL;
    int bad;
    memset(&p, 0, sizeof p);
    p.rows = rand_int(1, 4), p.in = chance(1, 3) ? 4 * rand_int(1, 40) : rand_int(1, 100);
    p.out = chance(1, 3) ? 4 * rand_int(1, 8) : rand_int(1, 20);
    if (packed && chance(1, 3)) p.out = rand_int(21, 150); /* blocks of 4 x 16 outputs and a part */
    if (form == 3) p.rows = rand_int(5, 40);
    p.x_zero = wide ? 0 : rand_int(-128, 127), p.y_zero = wide ? 0 : rand_int(-128, 127);
    act_range(wide ? -32768 : -128, wide ? 32767 : 127, p.y_zero, &p.y_min, &p.y_max);
    x = ints((size_t)p.rows * p.in, xs, wide ? -32768 : -128, wide ? 32767 : 127);
    w = (int8_t *)ints((size_t)p.out * p.in, 1, -127, 127), w_arg = w;
    if (chance(5, 6)) {
        bias = bytes((size_t)p.out * (wide ? 8 : 4));
        for (o = 0; o < p.out; ++o) {
            if (wide) ((int64_t *)bias)[o] = rand_int(-(1 << 24), 1 << 24);
            else ((int32_t *)bias)[o] = rand_int(-(1 << 16), 1 << 16);
        }
    }
    mult = (int32_t *)bytes((size_t)p.out * 4), shift = (int32_t *)bytes((size_t)p.out * 4);
    for (o = 0; o < p.out; ++o) multiplier(around((wide ? 1.0 / 64.0 : 2.0) / (64.0 * sqrt((double)p.in))), &mult[o], &shift[o]);
    p.mult = mult, p.shift = shift;
    y = bytes((size_t)p.rows * p.out * xs), ref = bytes((size_t)p.rows * p.out * xs);
    if (packed) {
        int8_t *wp = pack_quads(w, p.out, p.in);
        int32_t *b = fold_bias((const int32_t *)bias, w, p.out, p.in, p.in, 1, 128 + p.x_zero);
        uint8_t *row = (uint8_t *)bytes((size_t)aotc_tfl_fc_s8_packed_scratch_bytes(&p));
        aotc_tfl_fc_s8_packed(&p, (const int8_t *)x, wp, b, (int8_t *)y, row);
        aotc_tfl_fc_s8_ref(&p, (const int8_t *)x, w, (const int32_t *)bias, (int8_t *)ref);
        free(wp), free(b), free(row);
    } else if (wide) {
        aotc_tfl_fc_s16(&p, (const int16_t *)x, w, (const int64_t *)bias, (int16_t *)y);
        aotc_tfl_fc_s16_ref(&p, (const int16_t *)x, w, (const int64_t *)bias, (int16_t *)ref);
    } else {
        if (p.out % 4 == 0 && p.in >= 4 && chance(1, 3)) { /* a RAM budget's blocks: kq quads, ob outputs */
            p.kq = rand_int(1, p.in / 4), p.ob = 4 * rand_int(1, p.out / 4);
        }
        if (DSP) scratch = (uint32_t *)bytes((size_t)aotc_tfl_fc_s8_dsp_scratch_bytes(&p) + (aotc_tfl_fc_s8_dsp_scratch_bytes(&p) == 0));
        if (AOTC_DSP_IL && p.in % 4 == 0 && p.out % 4 == 0 && !p.kq && chance(1, 2)) { /* interleave_rows(w, 4) */
            w_arg = (int8_t *)bytes((size_t)p.out * p.in);
            for (o = 0; o < p.out; ++o)
                for (k = 0; k < p.in; ++k)
                    w_arg[(size_t)(o / 4) * 4 * p.in + (size_t)(k / 4) * 16 + (o % 4) * 4 + k % 4] = w[(size_t)o * p.in + k];
            p.il4 = 1;
        }
        aotc_tfl_fc_s8(&p, (const int8_t *)x, w_arg, (const int32_t *)bias, (int8_t *)y, scratch);
        aotc_tfl_fc_s8_ref(&p, (const int8_t *)x, w, (const int32_t *)bias, (int8_t *)ref);
    }
    bad = differ(packed ? "aotc_tfl_fc_s8_packed" : wide ? "aotc_tfl_fc_s16" : "aotc_tfl_fc_s8", y, ref,
                 (size_t)p.rows * p.out, xs);
    if (bad) printf("  rows %d, in %d, out %d, x_zero %d, y_zero %d, il4 %d, kq %d, ob %d\n", (int)p.rows, (int)p.in,
                    (int)p.out, (int)p.x_zero, (int)p.y_zero, (int)p.il4, (int)p.kq, (int)p.ob);
    if (w_arg != w) free(w_arg);
    free(x), free(w), free(bias), free(mult), free(shift), free(y), free(ref), free(scratch);
    return bad;
}

/* ---- AVERAGE_POOL_2D, MAX_POOL_2D, MEAN ------------------------------------------------------------------- */

static int check_pool(int average, int wide) {
    aotc_tfl_pool_params p;
    const size_t xs = wide ? 2 : 1;
    size_t xn, yn;
    void *x, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    do {
        p.n = rand_int(1, 2), p.h = rand_int(1, 12), p.w = rand_int(1, 12), p.c = rand_int(1, 8);
        p.kh = rand_int(1, 4), p.kw = rand_int(1, 4), p.sh = rand_int(1, 3), p.sw = rand_int(1, 3);
        p.oh = window_dim(p.h, p.kh, p.sh, 1, &p.pad_top), p.ow = window_dim(p.w, p.kw, p.sw, 1, &p.pad_left);
    } while (p.oh == 0 || p.ow == 0);
    if (!wide && !average && chance(1, 3)) p.c = rand_int(60, 140); /* x86's MAX_POOL_2D: runs of 64 channels and a part */
    act_range(wide ? -32768 : -128, wide ? 32767 : 127, rand_int(wide ? -100 : -10, wide ? 100 : 10), &p.y_min, &p.y_max);
    xn = (size_t)p.n * p.h * p.w * p.c, yn = (size_t)p.n * p.oh * p.ow * p.c;
    x = ints(xn, xs, wide ? -32768 : -128, wide ? 32767 : 127), y = bytes(yn * xs), ref = bytes(yn * xs);
    if (wide && average) aotc_tfl_avgpool_s16(&p, x, y), aotc_tfl_avgpool_s16_ref(&p, x, ref);
    else if (wide) aotc_tfl_maxpool_s16(&p, x, y), aotc_tfl_maxpool_s16_ref(&p, x, ref);
    else if (average) aotc_tfl_avgpool_s8(&p, x, y), aotc_tfl_avgpool_s8_ref(&p, x, ref);
    else aotc_tfl_maxpool_s8(&p, x, y), aotc_tfl_maxpool_s8_ref(&p, x, ref);
    bad = differ(average ? "aotc_tfl_avgpool" : "aotc_tfl_maxpool", y, ref, yn, xs);
    if (bad) printf("  n %d, in %dx%dx%d, out %dx%d, kernel %dx%d, strides %d %d, pads %d %d\n", (int)p.n, (int)p.h,
                    (int)p.w, (int)p.c, (int)p.oh, (int)p.ow, (int)p.kh, (int)p.kw, (int)p.sh, (int)p.sw,
                    (int)p.pad_top, (int)p.pad_left);
    free(x), free(y), free(ref);
    return bad;
}

static int check_mean(int wide) {
    aotc_tfl_mean_params p;
    const size_t xs = wide ? 2 : 1;
    void *x, *y, *ref;
    int bad;
    p.n = rand_int(1, 2), p.hw = rand_int(1, 150), p.c = rand_int(1, 10);
    if (p.c > 7) p.c = 7 + 61 * (p.c - 7); /* 68, 129, 190: past the kernel's runs of 64 channels (no draw more) */
    p.x_zero = wide ? 0 : rand_int(-128, 127), p.y_zero = wide ? 0 : rand_int(-128, 127);
    multiplier(around(1.0 / p.hw), &p.mult, &p.shift);
    x = ints((size_t)p.n * p.hw * p.c, xs, wide ? -32768 : -128, wide ? 32767 : 127);
    y = bytes((size_t)p.n * p.c * xs), ref = bytes((size_t)p.n * p.c * xs);
    if (wide) aotc_tfl_mean_s16(&p, x, y), aotc_tfl_mean_s16_ref(&p, x, ref);
    else aotc_tfl_mean_s8(&p, x, y), aotc_tfl_mean_s8_ref(&p, x, ref);
    bad = differ(wide ? "aotc_tfl_mean_s16" : "aotc_tfl_mean_s8", y, ref, (size_t)p.n * p.c, xs);
    if (bad) printf("  n %d, hw %d, c %d\n", (int)p.n, (int)p.hw, (int)p.c);
    free(x), free(y), free(ref);
    return bad;
}

/* ---- ADD, SUB, MUL, MAXIMUM, MINIMUM, LEAKY_RELU (16x8) --------------------------------------------------- */

enum { B_ADD, B_MUL, B_MAX, B_MIN };

static const char *const BINARY_NAMES[2][4] = {
    {"aotc_tfl_add_s8", "aotc_tfl_mul_s8", "aotc_tfl_max_s8", "aotc_tfl_min_s8"},
    {"aotc_tfl_add_s16", "aotc_tfl_mul_s16", "aotc_tfl_max_s16", "aotc_tfl_min_s16"}};

/* op's kernel into y and its reference into ref */
static void binary_call(int op, int wide, const aotc_tfl_binary_params *p, const void *x1, const void *x2, void *y,
                        void *ref, uint32_t *scratch) {
    switch (op + 4 * wide) {
    case B_ADD: aotc_tfl_add_s8(p, x1, x2, y, scratch), aotc_tfl_add_s8_ref(p, x1, x2, ref); break;
    case B_MUL: aotc_tfl_mul_s8(p, x1, x2, y), aotc_tfl_mul_s8_ref(p, x1, x2, ref); break;
    case B_MAX: aotc_tfl_max_s8(p, x1, x2, y), aotc_tfl_max_s8_ref(p, x1, x2, ref); break;
    case B_MIN: aotc_tfl_min_s8(p, x1, x2, y), aotc_tfl_min_s8_ref(p, x1, x2, ref); break;
    case 4 + B_ADD: aotc_tfl_add_s16(p, x1, x2, y), aotc_tfl_add_s16_ref(p, x1, x2, ref); break;
    case 4 + B_MAX: aotc_tfl_max_s16(p, x1, x2, y), aotc_tfl_max_s16_ref(p, x1, x2, ref); break;
    case 4 + B_MIN: aotc_tfl_min_s16(p, x1, x2, y), aotc_tfl_min_s16_ref(p, x1, x2, ref); break;
    default: aotc_tfl_mul_s16(p, x1, x2, y), aotc_tfl_mul_s16_ref(p, x1, x2, ref); break;
    }
}

static int check_binary(int op, int wide) {
    aotc_tfl_binary_params p;
    const size_t xs = wide ? 2 : 1;
    int32_t n1 = 1, n2 = 1, d;
    void *x1, *x2, *y, *ref;
    uint32_t *scratch = NULL;
    int bad;
    memset(&p, 0, sizeof p);
    p.broadcast = chance(1, 2);
    if (p.broadcast) { /* y's 6-D shape, each input's dims 1 (a zero step) or y's */
        p.count = 1;
        for (d = 0; d < 6; ++d) p.dims[d] = d < 2 ? 1 : rand_int(1, 5), p.count *= p.dims[d];
        for (d = 5; d >= 0; --d) {
            const int b1 = chance(1, 3), b2 = chance(1, 3);
            p.st1[d] = b1 ? 0 : n1, p.st2[d] = b2 ? 0 : n2;
            n1 *= b1 ? 1 : p.dims[d], n2 *= b2 ? 1 : p.dims[d];
        }
    } else {
        p.count = chance(1, 3) ? rand_int(AOTC_TFL_ADD_MIN, 2000) : rand_int(1, 600); /* the DSP tables' path too */
        n1 = n2 = (int32_t)p.count;
    }
    p.x1_zero = wide ? 0 : rand_int(-128, 127), p.x2_zero = wide ? 0 : rand_int(-128, 127);
    p.y_zero = wide ? 0 : rand_int(-128, 127);
    act_range(wide ? -32768 : -128, wide ? 32767 : 127, p.y_zero, &p.y_min, &p.y_max);
    if (op == B_ADD) {
        const double s1 = around(0.05), s2 = around(0.05), so = around(0.1), twice = 2.0 * (s1 > s2 ? s1 : s2);
        p.subtract = chance(1, 3);
        multiplier(s1 / twice, &p.m1, &p.s1), multiplier(s2 / twice, &p.m2, &p.s2);
        multiplier(twice / ((wide ? 32768.0 : 1048576.0) * so), &p.mult, &p.shift);
    } else if (op == B_MUL) {
        multiplier(around(wide ? 1.0 / 32768.0 : 1.0 / 128.0), &p.mult, &p.shift);
    }
    x1 = ints((size_t)n1, xs, wide ? -32768 : -128, wide ? 32767 : 127);
    x2 = ints((size_t)n2, xs, wide ? -32768 : -128, wide ? 32767 : 127);
    y = bytes((size_t)p.count * xs), ref = bytes((size_t)p.count * xs);
    if (!wide && op == B_ADD && DSP && aotc_tfl_add_s8_dsp_scratch_bytes(&p) > 0) {
        scratch = (uint32_t *)bytes((size_t)aotc_tfl_add_s8_dsp_scratch_bytes(&p));
    }
    binary_call(op, wide, &p, x1, x2, y, ref, scratch);
    bad = differ(BINARY_NAMES[wide][op], y, ref, (size_t)p.count, xs);
    if (bad) printf("  count %ld, broadcast %d, subtract %d, scratch %d\n", (long)p.count, (int)p.broadcast,
                    (int)p.subtract, scratch != NULL);
    free(x1), free(x2), free(y), free(ref), free(scratch);
    return bad;
}

/* a multiplier at its extremes: 2^30 (0.5), 2^31 - 1 (just below 1), or anywhere in [2^30, 2^31); rarely 0, small, or
 * negative (quantize_multiplier gives none of these, but the kernels take any but INT32_MIN in their fast paths) */
static int32_t extreme_multiplier(void) {
    switch (rand_int(0, 7)) {
    case 0: return 1 << 30;
    case 1: return INT32_MAX;
    case 2: return INT32_MAX - rand_int(0, 3);
    case 3: return chance(1, 2) ? 0 : rand_int(1, 1000);
    case 4: return -rand_int(1 << 30, INT32_MAX);
    default: return rand_int(1 << 30, INT32_MAX);
    }
}

/* MUL, ADD / SUB, MAXIMUM and MINIMUM over the broadcast patterns that make the kernels' runs
 * (tflite_int8_elementwise.c): y [n, h, w, c] and each input y's shape, [c] (per channel), [n, 1, 1, c]
 * (squeeze-excite), [1] (a scalar) or [n, h, w, 1], as x1 or x2, c up to 70 (runs shorter and longer than the x86
 * vectors, most of no multiple of their width); a third of the time the multipliers and shifts at their extremes
 * (MUL's product and ADD's output shifted left up to 30 places, wrapping as TFLite's int32, or right up to 31;
 * ADD's inputs scaled by up to 1, as TFLite's twice-the-larger-scale never exceeds) and the outputs saturating. */
/* op | RUNS_ONE: one input a single element, the other y's shape, 1024 outputs or more (x86's table, issue 64) */
#define RUNS_ONE 16

static int check_binary_runs(int op, int wide) {
    const int one = (op & RUNS_ONE) != 0;
    aotc_tfl_binary_params p;
    const size_t xs = wide ? 2 : 1;
    const int32_t lo = wide ? -32768 : -128, hi = wide ? 32767 : 127;
    int32_t in[2][6], pattern[2], d, j;
    int64_t count[2] = {1, 1};
    void *x[2], *y, *ref;
    uint32_t *scratch = NULL;
    int bad;
    memset(&p, 0, sizeof p);
    p.dims[0] = p.dims[1] = 1, p.dims[2] = rand_int(1, 2), p.dims[3] = rand_int(1, 4), p.dims[4] = rand_int(1, 4);
    p.dims[5] = chance(1, 4) ? rand_int(1, 3) : rand_int(4, 70);
    op &= ~RUNS_ONE;
    if (one) p.dims[3] = rand_int(4, 8), p.dims[4] = rand_int(4, 8), p.dims[5] = rand_int(32, 70);
    p.count = (int64_t)p.dims[2] * p.dims[3] * p.dims[4] * p.dims[5];
    for (j = 0; j < 2; ++j) { /* pattern: 0 y's shape, 1 [c], 2 [n, 1, 1, c], 3 [1], 4 [n, h, w, 1] */
        int64_t stride = 1;
        pattern[j] = chance(1, 3) ? 0 : rand_int(1, 4);
        if (one) pattern[j] = j == 0 ? 3 * rand_int(0, 1) : 3 - pattern[0];
        for (d = 0; d < 6; ++d) { /* (d: 2 n, 3 h, 4 w, 5 c) */
            const int keep = pattern[j] == 0 || (d == 5 && pattern[j] <= 2) ||
                             (d == 2 && (pattern[j] == 2 || pattern[j] == 4)) ||
                             (pattern[j] == 4 && (d == 3 || d == 4));
            in[j][d] = keep ? p.dims[d] : 1;
        }
        for (d = 5; d >= 0; --d) {
            int32_t *st = j == 0 ? p.st1 : p.st2;
            st[d] = in[j][d] == p.dims[d] && in[j][d] != 1 ? (int32_t)stride : 0;
            stride *= in[j][d];
        }
        count[j] = stride;
    }
    p.broadcast = count[0] != p.count || count[1] != p.count;
    p.x1_zero = wide ? 0 : rand_int(-128, 127), p.x2_zero = wide ? 0 : rand_int(-128, 127);
    p.y_zero = wide ? 0 : rand_int(-128, 127);
    act_range(lo, hi, p.y_zero, &p.y_min, &p.y_max);
    if (op == B_ADD) {
        const double s1 = around(0.05), s2 = around(0.05), so = around(0.1), twice = 2.0 * (s1 > s2 ? s1 : s2);
        p.subtract = chance(1, 3);
        multiplier(s1 / twice, &p.m1, &p.s1), multiplier(s2 / twice, &p.m2, &p.s2);
        multiplier(twice / ((wide ? 32768.0 : 1048576.0) * so), &p.mult, &p.shift);
        if (chance(1, 3)) {
            p.m1 = extreme_multiplier(), p.s1 = rand_int(-31, 0), p.m2 = extreme_multiplier(), p.s2 = rand_int(-31, 0);
            p.mult = extreme_multiplier(), p.shift = rand_int(-31, 30);
        }
    } else if (op == B_MUL) {
        multiplier(around(wide ? 1.0 / 32768.0 : 1.0 / 128.0), &p.mult, &p.shift);
        if (chance(1, 3)) p.mult = extreme_multiplier(), p.shift = rand_int(-31, 30);
        else if (chance(1, 4)) p.mult = rand_int(1 << 30, INT32_MAX), p.shift = rand_int(-4, 3); /* saturating */
    }
    if (op != B_MUL && chance(1, 20)) p.mult = INT32_MIN, p.shift = rand_int(-31, 30); /* the plain loops' */
    if (op == B_MUL && chance(1, 20)) p.mult = INT32_MIN;
    x[0] = ints((size_t)count[0], xs, lo, hi), x[1] = ints((size_t)count[1], xs, lo, hi);
    y = bytes((size_t)p.count * xs), ref = bytes((size_t)p.count * xs);
    if (!wide && op == B_ADD && DSP && aotc_tfl_add_s8_dsp_scratch_bytes(&p) > 0)
        scratch = (uint32_t *)bytes((size_t)aotc_tfl_add_s8_dsp_scratch_bytes(&p));
    binary_call(op, wide, &p, x[0], x[1], y, ref, scratch);
    bad = differ(BINARY_NAMES[wide][op], y, ref, (size_t)p.count, xs);
    if (bad)
        printf("  y [%d %d %d %d], x1 pattern %d, x2 pattern %d, mult %ld shift %d (m1 %ld s1 %d, m2 %ld s2 %d)\n",
               (int)p.dims[2], (int)p.dims[3], (int)p.dims[4], (int)p.dims[5], (int)pattern[0], (int)pattern[1],
               (long)p.mult, (int)p.shift, (long)p.m1, (int)p.s1, (long)p.m2, (int)p.s2);
    free(x[0]), free(x[1]), free(y), free(ref), free(scratch);
    return bad;
}

/* int8 ADD whose output is its first input's rescaling itself, requant_double((x1 - z1) 2^20, m1, s1) (x2 its zero
 * point: the second 0; the output multiplier 1): every bit of the rescaling that x86's 32-bit lanes compute
 * (tfl_vrescale8, issue 64) shows in y where it is within int8's range, which the shifts keep it mostly: m1 any
 * multiplier >= 0, s1 down to -31, and small ones (m1 < 2^12) at shift 0 to -3 */
static int check_add_rescale(void) {
    aotc_tfl_binary_params p;
    int8_t *x1, *x2, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.count = rand_int(1, 300);
    p.x1_zero = rand_int(-128, 127), p.x2_zero = rand_int(-128, 127), p.y_zero = 0, p.y_min = -128, p.y_max = 127;
    if (chance(1, 3)) p.m1 = rand_int(0, 4095), p.s1 = rand_int(-3, 0);
    else p.m1 = chance(1, 8) ? INT32_MAX : rand_int(0, INT32_MAX - 1), p.s1 = rand_int(-31, -18);
    p.m2 = rand_int(1 << 30, INT32_MAX), p.s2 = rand_int(-5, 0), p.mult = 1 << 30, p.shift = 1; /* (x 1) */
    p.subtract = chance(1, 2);
    x1 = (int8_t *)ints((size_t)p.count, 1, -128, 127), x2 = (int8_t *)bytes((size_t)p.count);
    memset(x2, (uint8_t)p.x2_zero, (size_t)p.count);
    y = (int8_t *)bytes((size_t)p.count), ref = (int8_t *)bytes((size_t)p.count);
    aotc_tfl_add_s8(&p, x1, x2, y, NULL), aotc_tfl_add_s8_ref(&p, x1, x2, ref);
    bad = differ("aotc_tfl_add_s8", y, ref, (size_t)p.count, 1);
    if (bad) printf("  m1 %ld s1 %d, x1_zero %d\n", (long)p.m1, (int)p.s1, (int)p.x1_zero);
    free(x1), free(x2), free(y), free(ref);
    return bad;
}

/* a fused residual ADD's input multiplier and shift at the edges of the packed output stage's 32-bit rescaling
 * (tflite_int8_packed.c, tfl_pk_add_in): 2^30 (an ADD's larger input, shift 0), the largest, around 2^10 (below,
 * its sign term differs from the high product's sign), small ones, powers of 2, negative ones (which it leaves to
 * the 64-bit lanes); right shifts 0 to 14 (it takes up to 12), a left one */
static void add_edge_multiplier(int32_t *m, int32_t *s) {
    switch (rand_int(0, 7)) {
    case 7: *m = -rand_int(1, INT32_MAX); break;
    case 0: *m = 1 << 30; break;
    case 1: *m = INT32_MAX - rand_int(0, 3); break;
    case 2: *m = rand_int(1023, 1026); break;
    case 3: *m = rand_int(0, 8191); break;
    case 4: *m = 1 << rand_int(11, 30); break;
    default: *m = rand_int(1 << 30, INT32_MAX); break;
    }
    *s = chance(1, 8) ? rand_int(1, 2) : -rand_int(0, 14);
}

/* the packed CONV_2D with its residual ADD fused, its ADD's inputs' multipliers at add_edge_multiplier's edges and
 * x - zero over [-255, 255] (conv outputs and residuals over int8, zero points at the ends by turns), the ADD's
 * output rescaled so that its sum's low bits show where the inputs' multipliers are small (issue 64) */
static int check_conv_add_rescale(void) {
    aotc_tfl_conv_params p;
    aotc_tfl_residual_params r;
    int32_t *mult, *shift, *bias, c;
    int8_t *x, *w, *res, *y, *ref;
    uint8_t *scratch;
    size_t xn, yn;
    int bad, in_place;
    memset(&p, 0, sizeof p), memset(&r, 0, sizeof r);
    p.n = 1, p.h = rand_int(1, 3), p.w = rand_int(1, 40), p.c = rand_int(1, 8), p.oc = rand_int(1, 70);
    p.kh = p.kw = p.sh = p.sw = p.dh = p.dw = 1, p.oh = p.h, p.ow = p.w, p.depth_multiplier = 1;
    p.x_zero = rand_int(-128, 127), p.y_zero = chance(1, 3) ? (chance(1, 2) ? -128 : 127) : rand_int(-128, 127);
    p.y_min = -128, p.y_max = 127;
    xn = (size_t)p.h * p.w * p.c, yn = (size_t)p.h * p.w * p.oc;
    x = (int8_t *)ints(xn, 1, -128, 127), w = (int8_t *)ints((size_t)p.oc * p.c, 1, -127, 127);
    bias = (int32_t *)ints((size_t)p.oc, 4, -(1 << 14), 1 << 14);
    mult = (int32_t *)bytes((size_t)p.oc * 4), shift = (int32_t *)bytes((size_t)p.oc * 4);
    for (c = 0; c < p.oc; ++c) /* (outputs over int8 and past it: saturating) */
        multiplier(around(2.0 / (64.0 * sqrt((double)p.c))), &mult[c], &shift[c]);
    p.mult = mult, p.shift = shift;
    r.conv_x1 = chance(1, 2), r.add.count = (int64_t)yn;
    r.add.x1_zero = chance(1, 3) ? (chance(1, 2) ? -128 : 127) : rand_int(-128, 127);
    r.add.x2_zero = chance(1, 3) ? (chance(1, 2) ? -128 : 127) : rand_int(-128, 127);
    if (r.conv_x1) r.add.x1_zero = p.y_zero; else r.add.x2_zero = p.y_zero;
    add_edge_multiplier(&r.add.m1, &r.add.s1), add_edge_multiplier(&r.add.m2, &r.add.s2);
    {
        /* the output's scale: the sum's largest magnitude to about int8's */
        const double a = ldexp((double)r.add.m1, r.add.s1 + 20 - 31), b = ldexp((double)r.add.m2, r.add.s2 + 20 - 31);
        multiplier(a + b > 0.0 ? around(0.5 / (a + b)) : 1.0, &r.add.mult, &r.add.shift);
        if (r.add.shift > 31) r.add.mult = 1 << 30, r.add.shift = 31;
    }
    r.add.y_zero = rand_int(-128, 127), r.add.y_min = -128, r.add.y_max = 127;
    res = (int8_t *)ints(yn, 1, -128, 127);
    y = (int8_t *)bytes(yn), ref = (int8_t *)bytes(yn);
    in_place = chance(1, 2);
    if (in_place) memcpy(y, res, yn);
    scratch = (uint8_t *)bytes((size_t)aotc_tfl_conv_s8_packed_scratch_bytes(&p) + 1);
    run_packed(&p, K_CONV_ADD, &r, x, w, bias, res, in_place, y, ref, scratch);
    bad = differ("aotc_tfl_conv_add_s8_packed (rescale)", y, ref, yn, 1);
    if (bad)
        printf("  m1 %ld s1 %d z1 %d, m2 %ld s2 %d z2 %d, mult %ld shift %d\n", (long)r.add.m1, (int)r.add.s1,
               (int)r.add.x1_zero, (long)r.add.m2, (int)r.add.s2, (int)r.add.x2_zero, (long)r.add.mult, (int)r.add.shift);
    free(x), free(w), free(bias), free(mult), free(shift), free(res), free(y), free(ref), free(scratch);
    return bad;
}

#if defined(__x86_64__)
/* The fused ADD's linear form (aot/qmath.py residual_linear, the same search): for the conv's outputs v over
 * [vlo, vhi] and residual bytes e, (a v + b e + c) >> sh clamped to the ADD's range equal to the reference ADD's on
 * every pair, no int32 overflow; 0 where none of the tried forms is (r's lin_* set where one is) */
static int linear_form(aotc_tfl_residual_params *r, int32_t vlo, int32_t vhi) {
    const aotc_tfl_binary_params *ad = &r->add;
    const int32_t nv = vhi - vlo + 1, n = nv * 256;
    int8_t *x1 = (int8_t *)bytes((size_t)n), *x2 = (int8_t *)bytes((size_t)n), *ref = (int8_t *)bytes((size_t)n);
    aotc_tfl_binary_params q = *ad;
    const double ko = ldexp((double)ad->mult, ad->shift - 31) * 1048576.0;
    const double k1 = ldexp((double)ad->m1, ad->s1 - 31) * ko, k2 = ldexp((double)ad->m2, ad->s2 - 31) * ko;
    const double kv = r->conv_x1 ? k1 : k2, ke = r->conv_x1 ? k2 : k1;
    static const int steps[5] = {0, -1, 1, -2, 2};
    int32_t i, sh, found = 0;
    for (i = 0; i < n; ++i) {
        const int8_t v = (int8_t)(vlo + i / 256), e = (int8_t)(i % 256 - 128);
        x1[i] = r->conv_x1 ? v : e, x2[i] = r->conv_x1 ? e : v;
    }
    q.count = n, q.broadcast = 0;
    aotc_tfl_add_s8_ref(&q, x1, x2, ref);
    for (sh = 24; sh >= 8 && !found; --sh) {
        int da, db;
        for (da = 0; da < 5 && !found; ++da)
            for (db = 0; db < 5 && !found; ++db) {
                const int64_t a = (int64_t)llround(ldexp(kv, sh)) + steps[da], b = (int64_t)llround(ldexp(ke, sh)) + steps[db];
                int64_t c_lo = INT32_MIN, c_hi = INT32_MAX;
                int ok = 1;
                for (i = 0; i < n; ++i) {
                    const int64_t t = a * (vlo + i / 256) + b * (i % 256 - 128), y = ref[i], u = (int64_t)1 << sh;
                    if (y > ad->y_min && y * u - t > c_lo) c_lo = y * u - t;
                    if (y < ad->y_max && (y + 1) * u - 1 - t < c_hi) c_hi = (y + 1) * u - 1 - t;
                }
                if (c_lo > c_hi || a > INT32_MAX || a < -INT32_MAX || b > INT32_MAX || b < -INT32_MAX) continue;
                for (i = 0; i < n && ok; ++i) {
                    const int64_t av = a * (vlo + i / 256), be = b * (i % 256 - 128), t = av + be + c_lo;
                    ok = llabs(av) <= INT32_MAX && llabs(be) <= INT32_MAX && llabs(av + be) <= INT32_MAX &&
                         llabs(t) <= INT32_MAX;
                }
                if (ok) r->lin_a = (int32_t)a, r->lin_b = (int32_t)b, r->lin_c = (int32_t)c_lo, r->lin_sh = sh, found = 1;
            }
    }
    free(x1), free(x2), free(ref);
    return found;
}

/* The packed CONV_2D with its ADD fused as the compiler's linear form (tflite_int8_packed.c tfl_pk_lin, issue 64):
 * kind 0, the form found for the ADD (realistic scales, as ResNet-50's: conv outputs over int8 or a ReLU's range,
 * the ADD's output a ReLU's half the time) against the reference ADD; kind 1, a form of no ADD's (a, b, c, sh drawn)
 * against the form computed here from the reference conv's outputs, so that a kernel ignoring the form, or taking
 * it in part, shows. 1 x 1 and 3 x 3 kernels over 1 to 150 output channels (blocks of 16, tiles of 2 to 4 blocks,
 * the last partial), positions past whole tiles */
static int check_conv_add_linear(int kind) {
    aotc_tfl_conv_params p;
    aotc_tfl_residual_params r;
    int32_t *mult, *shift, *bias, c;
    int8_t *x, *w, *res, *y, *ref, *conv;
    uint8_t *scratch;
    size_t xn, yn, i;
    int bad, in_place, tries;
    memset(&p, 0, sizeof p), memset(&r, 0, sizeof r);
    p.n = 1, p.h = rand_int(1, 4), p.w = rand_int(1, 30), p.c = rand_int(1, 24), p.oc = rand_int(1, 150);
    p.kh = p.kw = chance(1, 2) ? 1 : 3, p.sh = p.sw = p.dh = p.dw = 1, p.depth_multiplier = 1;
    p.pad_top = p.pad_left = p.kh / 2, p.oh = p.h, p.ow = p.w;
    p.x_zero = rand_int(-128, 127), p.y_zero = rand_int(-128, 127);
    p.y_min = chance(1, 3) ? p.y_zero : -128, p.y_max = 127;
    xn = (size_t)p.h * p.w * p.c, yn = (size_t)p.h * p.w * p.oc;
    x = (int8_t *)ints(xn, 1, -128, 127), w = (int8_t *)ints((size_t)p.oc * p.kh * p.kw * p.c, 1, -127, 127);
    bias = (int32_t *)ints((size_t)p.oc, 4, -(1 << 14), 1 << 14);
    mult = (int32_t *)bytes((size_t)p.oc * 4), shift = (int32_t *)bytes((size_t)p.oc * 4);
    for (c = 0; c < p.oc; ++c) multiplier(around(2.0 / (64.0 * sqrt((double)(p.c * p.kh * p.kw)))), &mult[c], &shift[c]);
    p.mult = mult, p.shift = shift;
    r.conv_x1 = chance(1, 2), r.add.count = (int64_t)yn;
    for (tries = 0; tries < 20; ++tries) {
        const double s1 = around(0.05), s2 = around(0.05), so = around(0.1), twice = 2.0 * (s1 > s2 ? s1 : s2);
        r.add.x1_zero = rand_int(-128, 127), r.add.x2_zero = rand_int(-128, 127), r.add.y_zero = rand_int(-128, 127);
        if (r.conv_x1) r.add.x1_zero = p.y_zero; else r.add.x2_zero = p.y_zero;
        multiplier(s1 / twice, &r.add.m1, &r.add.s1), multiplier(s2 / twice, &r.add.m2, &r.add.s2);
        multiplier(twice / (1048576.0 * so), &r.add.mult, &r.add.shift);
        if (chance(1, 2)) r.add.y_zero = -128;
        r.add.y_min = chance(1, 2) ? r.add.y_zero : -128, r.add.y_max = 127;
        if (kind == 1 || linear_form(&r, p.y_min, p.y_max)) break;
    }
    if (kind == 0 && r.lin_sh == 0) {
        printf("aotc_tfl_conv_add_s8_packed (linear ADD): no linear form in 20 draws\n");
        return 1;
    }
    if (kind == 1) { /* |a v + b e + c| < 2^31 for v, e in int8 */
        r.lin_sh = rand_int(1, 24), r.lin_a = rand_int(-(1 << 22), 1 << 22), r.lin_b = rand_int(-(1 << 22), 1 << 22);
        r.lin_c = rand_int(-(1 << 29), 1 << 29);
    }
    res = (int8_t *)ints(yn, 1, -128, 127);
    y = (int8_t *)bytes(yn), ref = (int8_t *)bytes(yn), conv = (int8_t *)bytes(yn);
    in_place = chance(1, 2);
    if (in_place) memcpy(y, res, yn);
    scratch = (uint8_t *)bytes((size_t)aotc_tfl_conv_s8_packed_scratch_bytes(&p) + 1);
    run_packed(&p, K_CONV_ADD, &r, x, w, bias, res, in_place, y, ref, scratch);
    if (kind == 1) {
        aotc_tfl_conv_s8_ref(&p, x, w, bias, conv);
        for (i = 0; i < yn; ++i) {
            const int32_t v = (int32_t)(((int64_t)r.lin_a * conv[i] + (int64_t)r.lin_b * res[i] + r.lin_c) >> r.lin_sh);
            ref[i] = (int8_t)(v < r.add.y_min ? r.add.y_min : v > r.add.y_max ? r.add.y_max : v);
        }
    }
    bad = differ(kind ? "aotc_tfl_conv_add_s8_packed (linear form)" : "aotc_tfl_conv_add_s8_packed (linear ADD)", y, ref,
                 yn, 1);
    if (bad)
        printf("  %d x %d, c %d oc %d; lin %ld %ld %ld >> %d, conv_x1 %d\n", (int)p.kh, (int)p.kw, (int)p.c, (int)p.oc,
               (long)r.lin_a, (long)r.lin_b, (long)r.lin_c, (int)r.lin_sh, (int)r.conv_x1);
    free(x), free(w), free(bias), free(mult), free(shift), free(res), free(y), free(ref), free(conv), free(scratch);
    return bad;
}
#endif

/* The packed CONV_2D (alone or with the ADD fused) at the edges of its output stage's 32-bit requantisation
 * (tflite_int8_packed.c, tfl_pk_rq_u32: sums below 2^30 known from the bias and k, right shifts 1 to 23, multipliers
 * from 2^30): biases putting the sums just inside and past 2^30 in magnitude, right shifts of 23 (outputs about
 * int8's at sums near 2^30, the zero point's term near 2^30) and 24, multipliers of exactly 2^30 (the sign term at a < -1), zero points at the ends,
 * and the ADD's output multiplier 2^30 (MobileNetV2's) half the time; 1 x 1 kernels over 17 to 70 channels (the
 * tiles of 2 to 4 blocks) */
static int check_conv_rq_bound(int kind) {
    aotc_tfl_conv_params p;
    aotc_tfl_residual_params r;
    int32_t *mult, *shift, *bias, c;
    int8_t *x, *w, *res, *y, *ref;
    uint8_t *scratch;
    size_t xn, yn, i;
    int bad, in_place;
    memset(&p, 0, sizeof p), memset(&r, 0, sizeof r);
    p.n = 1, p.h = rand_int(1, 3), p.w = rand_int(1, 30), p.c = rand_int(1, 8), p.oc = rand_int(17, 70);
    p.kh = p.kw = p.sh = p.sw = p.dh = p.dw = 1, p.oh = p.h, p.ow = p.w, p.depth_multiplier = 1;
    p.x_zero = chance(1, 2) ? -128 : rand_int(-128, 127);
    p.y_zero = chance(1, 2) ? (chance(1, 2) ? -128 : 127) : rand_int(-128, 127);
    p.y_min = -128, p.y_max = 127;
    xn = (size_t)p.h * p.w * p.c, yn = (size_t)p.h * p.w * p.oc;
    x = (int8_t *)ints(xn, 1, -128, 127), w = (int8_t *)ints((size_t)p.oc * p.c, 1, -127, 127);
    for (i = 0; i < xn; ++i) x[i] = chance(1, 2) ? 127 : x[i]; /* (sums toward their bound) */
    bias = (int32_t *)bytes((size_t)p.oc * 4);
    mult = (int32_t *)bytes((size_t)p.oc * 4), shift = (int32_t *)bytes((size_t)p.oc * 4);
    for (c = 0; c < p.oc; ++c) {
        const int32_t near = (1 << 30) - rand_int(0, 3 * 32640 * p.c); /* |bias| + 32640 k about 2^30 */
        bias[c] = chance(1, 3) ? rand_int(-(1 << 14), 1 << 14) : chance(1, 2) ? near : -near;
        mult[c] = chance(1, 4) ? 1 << 30 : rand_int(1 << 30, INT32_MAX);
        shift[c] = chance(1, 3) ? -23 : -rand_int(1, 23);
    }
    if (chance(1, 3)) shift[rand_int(0, p.oc - 1)] = -24; /* (that block the 64-bit lanes') */
    p.mult = mult, p.shift = shift;
    if (kind == K_CONV_ADD) {
        r.conv_x1 = chance(1, 2), r.add.count = (int64_t)yn;
        r.add.x1_zero = rand_int(-128, 127), r.add.x2_zero = rand_int(-128, 127);
        if (r.conv_x1) r.add.x1_zero = p.y_zero; else r.add.x2_zero = p.y_zero;
        multiplier(around(0.4), &r.add.m1, &r.add.s1), multiplier(around(0.4), &r.add.m2, &r.add.s2);
        if (chance(1, 2)) r.add.m2 = 1 << 30, r.add.s2 = 0;
        r.add.mult = 1 << 30, r.add.shift = -rand_int(15, 20);
        if (chance(1, 2)) multiplier(around(ldexp(1.0, -18)), &r.add.mult, &r.add.shift);
        r.add.y_zero = chance(1, 2) ? -128 : rand_int(-128, 127), r.add.y_min = -128, r.add.y_max = 127;
    }
    res = (int8_t *)ints(yn, 1, -128, 127);
    y = (int8_t *)bytes(yn), ref = (int8_t *)bytes(yn);
    in_place = kind == K_CONV_ADD && chance(1, 2);
    if (in_place) memcpy(y, res, yn);
    scratch = (uint8_t *)bytes((size_t)aotc_tfl_conv_s8_packed_scratch_bytes(&p) + 1);
    run_packed(&p, kind, &r, x, w, bias, res, in_place, y, ref, scratch);
    bad = differ(kind == K_CONV_ADD ? "aotc_tfl_conv_add_s8_packed (32-bit requantisation)"
                                    : "aotc_tfl_conv_s8_packed (32-bit requantisation)",
                 y, ref, yn, 1);
    free(x), free(w), free(bias), free(mult), free(shift), free(res), free(y), free(ref), free(scratch);
    return bad;
}

/* The packed CONV_2D's tiles of 2 to 4 blocks and blocks of up to 16 channels whose output stage runs in registers
 * (tflite_int8_packed.c, tfl_pk_conv_tile and tfl_pk_conv_block where no ADD and every block tfl_pk_requant_u32):
 * 1 x 1 kernels over few channels (the patch a few quads, as MobileNetV2's expand layers), 1 to 150 output channels
 * (chunks of 64, a last one of 17 to 63 or a block of 1 to 16, the last block partial), positions past whole tiles
 * of 6 and blocks of 8, outputs mostly inside the activation range (a wrong
 * lane shows, not saturated away), a narrower range a third of the time; a block left to the 64-bit lanes (a
 * channel's right shift of 24, or a left one) a third of the time, the other blocks of its tiles then through
 * tfl_pk_tile_store */
#if defined(__x86_64__)
static int check_conv_tile_regs(void) {
    aotc_tfl_conv_params p;
    int32_t *mult, *shift, *bias, c;
    int8_t *x, *w, *y, *ref;
    uint8_t *scratch;
    size_t xn, yn;
    int bad;
    memset(&p, 0, sizeof p);
    p.n = 1, p.h = rand_int(1, 4), p.w = rand_int(1, 25), p.c = rand_int(1, 40), p.oc = rand_int(1, 150);
    p.kh = p.kw = p.sh = p.sw = p.dh = p.dw = 1, p.oh = p.h, p.ow = p.w, p.depth_multiplier = 1;
    p.x_zero = rand_int(-128, 127), p.y_zero = rand_int(-100, 100);
    act_range(-128, 127, p.y_zero, &p.y_min, &p.y_max);
    xn = (size_t)p.h * p.w * p.c, yn = (size_t)p.h * p.w * p.oc;
    x = (int8_t *)ints(xn, 1, -128, 127), w = (int8_t *)ints((size_t)p.oc * p.c, 1, -127, 127);
    bias = (int32_t *)ints((size_t)p.oc, 4, -(1 << 14), 1 << 14);
    mult = (int32_t *)bytes((size_t)p.oc * 4), shift = (int32_t *)bytes((size_t)p.oc * 4);
    for (c = 0; c < p.oc; ++c) multiplier(around(0.4 / (64.0 * sqrt((double)p.c))), &mult[c], &shift[c]);
    if (chance(1, 3)) {
        c = rand_int(0, p.oc - 1);
        if (chance(1, 2)) shift[c] = -24; else multiplier(around(2.0), &mult[c], &shift[c]);
    }
    p.mult = mult, p.shift = shift;
    y = (int8_t *)bytes(yn), ref = (int8_t *)bytes(yn);
    scratch = (uint8_t *)bytes((size_t)aotc_tfl_conv_s8_packed_scratch_bytes(&p) + 1);
    run_packed(&p, K_CONV, NULL, x, w, bias, NULL, 0, y, ref, scratch);
    bad = differ("aotc_tfl_conv_s8_packed (tile in registers)", y, ref, yn, 1);
    if (bad) printf("  %d x %d x %d -> %d\n", (int)p.h, (int)p.w, (int)p.c, (int)p.oc);
    free(x), free(w), free(bias), free(mult), free(shift), free(y), free(ref), free(scratch);
    return bad;
}
#endif

#if defined(__x86_64__)
/* the packed DEPTHWISE_CONV_2D on the shape p (depth multiplier 1; zero points, activation range, weights, biases
 * and per-channel multipliers drawn here) against the reference kernel: whether its outputs differ */
static int packed_dw_differs(const aotc_tfl_conv_params *pp, const char *name) {
    aotc_tfl_conv_params p = *pp;
    int32_t *mult, *shift, *bias, c;
    int8_t *x, *w, *y, *ref;
    uint8_t *scratch;
    size_t xn, yn;
    int bad;
    p.depth_multiplier = 1, p.x_zero = rand_int(-128, 127), p.y_zero = rand_int(-128, 127);
    act_range(-128, 127, p.y_zero, &p.y_min, &p.y_max);
    xn = (size_t)p.n * p.h * p.w * p.c, yn = (size_t)p.n * p.oh * p.ow * p.oc;
    x = (int8_t *)ints(xn, 1, -128, 127), w = (int8_t *)ints((size_t)p.kh * p.kw * p.c, 1, -127, 127);
    bias = (int32_t *)ints((size_t)p.c, 4, -(1 << 16), 1 << 16);
    mult = (int32_t *)bytes((size_t)p.c * 4), shift = (int32_t *)bytes((size_t)p.c * 4);
    for (c = 0; c < p.c; ++c) multiplier(ldexp(around(128.0 / (64.0 * 64.0 * p.kh)), (int)(c % 3) - 1), &mult[c], &shift[c]);
    p.mult = mult, p.shift = shift;
    y = (int8_t *)bytes(yn), ref = (int8_t *)bytes(yn);
    scratch = (uint8_t *)bytes((size_t)aotc_tfl_depthwise_s8_packed_scratch_bytes(&p));
    run_packed(&p, K_DEPTHWISE, NULL, x, w, bias, NULL, 0, y, ref, scratch);
    bad = differ(name, y, ref, yn, 1);
    free(x), free(w), free(bias), free(mult), free(shift), free(y), free(ref), free(scratch);
    return bad;
}

/* the packed DEPTHWISE_CONV_2D on an input past TFL_PK_DW_ACROSS_BYTES (512 KiB; a fortieth of the calls, the others
 * none: each is 6 M taps), which it takes a run of output rows at a time across its blocks of channels
 * (tflite_int8_packed.c): channels past whole blocks, strides 1 and 2, 3 x 3 and 5 x 5, VALID or SAME, one or two
 * images (a run's rows across them) */
static int check_dw_across(void) {
    aotc_tfl_conv_params p;
    int bad;
    if (!chance(1, 40)) return 0;
    memset(&p, 0, sizeof p);
    p.n = rand_int(1, 2), p.kh = p.kw = chance(1, 2) ? 3 : 5, p.sh = p.sw = rand_int(1, 2), p.dh = p.dw = 1;
    do {
        p.h = rand_int(60, 100), p.w = rand_int(60, 100);
        p.oh = window_dim(p.h, p.kh, p.sh, p.dh, &p.pad_top), p.ow = window_dim(p.w, p.kw, p.sw, p.dw, &p.pad_left);
    } while (p.oh <= 0 || p.ow <= 0);
    p.c = (int32_t)((600000 + p.n * p.h * p.w - 1) / ((int64_t)p.n * p.h * p.w)) + rand_int(0, 20), p.oc = p.c;
    bad = packed_dw_differs(&p, "aotc_tfl_depthwise_s8_packed (across)");
    if (bad)
        printf("  n %d h %d w %d c %d, %d x %d stride %d, pads %d %d\n", (int)p.n, (int)p.h, (int)p.w, (int)p.c, (int)p.kh,
               (int)p.kw, (int)p.sh, (int)p.pad_top, (int)p.pad_left);
    return bad;
}
#endif

static int check_leaky_relu(void) {
    aotc_tfl_binary_params p;
    void *x, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.count = rand_int(1, 500), p.y_min = -32768, p.y_max = 32767;
    multiplier(around(1.0), &p.m1, &p.s1);
    multiplier((chance(1, 4) ? -1.0 : 1.0) * around(0.2), &p.m2, &p.s2); /* alpha's: negative sometimes */
    x = ints((size_t)p.count, 2, -32768, 32767), y = bytes((size_t)p.count * 2), ref = bytes((size_t)p.count * 2);
    aotc_tfl_leaky_relu_s16(&p, x, y), aotc_tfl_leaky_relu_s16_ref(&p, x, ref);
    bad = differ("aotc_tfl_leaky_relu_s16", y, ref, (size_t)p.count, 2);
    if (bad) printf("  m1 %d s1 %d, m2 %d s2 %d\n", (int)p.m1, (int)p.s1, (int)p.m2, (int)p.s2);
    free(x), free(y), free(ref);
    return bad;
}

/* ---- LUT, QUANTIZE, DEQUANTIZE, requantisations ------------------------------------------------------------ */

static int check_lut(void) {
    aotc_tfl_lut_params p;
    void *x, *y, *ref;
    int bad;
    p.count = rand_int(0, 800);
    p.table = (const int8_t *)ints(256, 1, -128, 127);
    x = ints((size_t)p.count, 1, -128, 127), y = bytes((size_t)p.count), ref = bytes((size_t)p.count);
    aotc_tfl_lut_s8(&p, x, y), aotc_tfl_lut_s8_ref(&p, x, ref);
    bad = differ("aotc_tfl_lut_s8", y, ref, (size_t)p.count, 1);
    free((void *)p.table), free(x), free(y), free(ref);
    return bad;
}

enum { Q_F32_S8, Q_F32_S16, DQ_S8, DQ_S16, RQ_S8, RQ_S16, RQ_S8_S16, RQ_S16_S8, RQ_S8_S32, RQ_S16_S32, RQ_S32_S8,
       RQ_S32_S16, RQ_S8_U8, RQ_U8_S8 };

static int check_quantize(int kind) {
    static const char *const names[14] = {
        "aotc_tfl_quantize_f32_s8", "aotc_tfl_quantize_f32_s16", "aotc_tfl_dequantize_s8_f32",
        "aotc_tfl_dequantize_s16_f32", "aotc_tfl_requantize_s8", "aotc_tfl_requantize_s16",
        "aotc_tfl_requantize_s8_s16", "aotc_tfl_requantize_s16_s8", "aotc_tfl_requantize_s8_s32",
        "aotc_tfl_requantize_s16_s32", "aotc_tfl_requantize_s32_s8", "aotc_tfl_requantize_s32_s16",
        "aotc_tfl_requantize_s8_u8", "aotc_tfl_requantize_u8_s8"};
    /* the input's and output's element sizes */
    static const size_t in_size[14] = {4, 4, 1, 2, 1, 2, 1, 2, 1, 2, 4, 4, 1, 1},
                        out_size[14] = {1, 2, 4, 4, 1, 2, 2, 1, 4, 4, 1, 2, 1, 1};
    aotc_tfl_quantize_params p;
    const size_t is = in_size[kind], os = out_size[kind];
    void *x, *y, *ref;
    int64_t k;
    int bad;
    memset(&p, 0, sizeof p);
    p.count = rand_int(0, 500);
    p.scale = (float)around(kind == Q_F32_S16 || kind == DQ_S16 ? 1e-4 : 0.02);
    p.x_zero = is == 2 ? 0 : is == 1 ? rand_int(-128, 127) : rand_int(-1000, 1000);
    p.y_zero = os == 2 ? (kind == RQ_S8_S16 ? rand_int(-100, 100) : 0) : os == 1 ? rand_int(-128, 127) : rand_int(-1000, 1000);
    multiplier(around(os < is ? 1.0 / 256.0 : os > is ? 64.0 : 1.0), &p.mult, &p.shift);
    if (kind == RQ_U8_S8) p.x_zero += 128;
    if (kind == RQ_S8_U8) p.y_zero += 128;
    if ((kind == RQ_S8_U8 || kind == RQ_U8_S8) && chance(1, 2)) { /* LiteRT's same-scale xor 0x80 case */
        multiplier(1.0, &p.mult, &p.shift);
        p.y_zero = kind == RQ_S8_U8 ? p.x_zero + 128 : p.x_zero - 128;
    }
    if (is == 4 && kind <= Q_F32_S16) {
        float *f = (float *)bytes((size_t)p.count * 4);
        for (k = 0; k < p.count; ++k) { /* in range, past it, halves of the scale (ties), infinities */
            const int32_t v = rand_int(0, 9);
            f[k] = v < 6 ? rand_float() * (kind == Q_F32_S8 ? 200.0f : 40000.0f) * p.scale
                   : v < 9 ? (float)rand_int(-600, 600) * 0.5f * p.scale : (chance(1, 2) ? INFINITY : -INFINITY);
        }
        x = f;
    } else {
        x = ints((size_t)p.count, is, is == 1 ? -128 : is == 2 ? -32768 : -2000000, is == 1 ? 127 : is == 2 ? 32767 : 2000000);
    }
    y = bytes((size_t)p.count * os), ref = bytes((size_t)p.count * os);
    switch (kind) {
    case Q_F32_S8: aotc_tfl_quantize_f32_s8(&p, x, y), aotc_tfl_quantize_f32_s8_ref(&p, x, ref); break;
    case Q_F32_S16: aotc_tfl_quantize_f32_s16(&p, x, y), aotc_tfl_quantize_f32_s16_ref(&p, x, ref); break;
    case DQ_S8: aotc_tfl_dequantize_s8_f32(&p, x, y), aotc_tfl_dequantize_s8_f32_ref(&p, x, ref); break;
    case DQ_S16: aotc_tfl_dequantize_s16_f32(&p, x, y), aotc_tfl_dequantize_s16_f32_ref(&p, x, ref); break;
    case RQ_S8: aotc_tfl_requantize_s8(&p, x, y), aotc_tfl_requantize_s8_ref(&p, x, ref); break;
    case RQ_S16: aotc_tfl_requantize_s16(&p, x, y), aotc_tfl_requantize_s16_ref(&p, x, ref); break;
    case RQ_S8_S16: aotc_tfl_requantize_s8_s16(&p, x, y), aotc_tfl_requantize_s8_s16_ref(&p, x, ref); break;
    case RQ_S16_S8: aotc_tfl_requantize_s16_s8(&p, x, y), aotc_tfl_requantize_s16_s8_ref(&p, x, ref); break;
    case RQ_S8_S32: aotc_tfl_requantize_s8_s32(&p, x, y), aotc_tfl_requantize_s8_s32_ref(&p, x, ref); break;
    case RQ_S16_S32: aotc_tfl_requantize_s16_s32(&p, x, y), aotc_tfl_requantize_s16_s32_ref(&p, x, ref); break;
    case RQ_S32_S8: aotc_tfl_requantize_s32_s8(&p, x, y), aotc_tfl_requantize_s32_s8_ref(&p, x, ref); break;
    case RQ_S8_U8: aotc_tfl_requantize_s8_u8(&p, x, y), aotc_tfl_requantize_s8_u8_ref(&p, x, ref); break;
    case RQ_U8_S8: aotc_tfl_requantize_u8_s8(&p, x, y), aotc_tfl_requantize_u8_s8_ref(&p, x, ref); break;
    default: aotc_tfl_requantize_s32_s16(&p, x, y), aotc_tfl_requantize_s32_s16_ref(&p, x, ref); break;
    }
    bad = differ(names[kind], y, ref, (size_t)p.count, os);
    if (bad) printf("  count %ld, scale %.9g, x_zero %d, y_zero %d, mult %d, shift %d\n", (long)p.count,
                    (double)p.scale, (int)p.x_zero, (int)p.y_zero, (int)p.mult, (int)p.shift);
    free(x), free(y), free(ref);
    return bad;
}

/* ---- SOFTMAX: int8 (to int8, to int16) and 16x8 ----------------------------------------------------------------- */

/* out16 | SM_ROWS: many short rows (an attention's: 1024 elements or more, the tabulated exps; issue 64) */
#define SM_ROWS 2

static int check_softmax8(int arg) {
    const int out16 = arg & 1;
    aotc_tfl_softmax_params p;
    const double beta = chance(1, 2) ? 1.0 : around(1.0), scale = around(chance(1, 2) ? 1.0 / 16.0 : 1.0 / 256.0);
    double real = beta * scale * 67108864.0;
    void *x, *y, *ref;
    int bad;
    if (real < 1.0) real = 1.0;
    p.rows = rand_int(1, 4), p.depth = chance(1, 4) ? rand_int(500, 2000) : rand_int(1, 60); /* 1000 classes:
                                                                            an output exponent over 31 */
    if (arg & SM_ROWS) p.rows = rand_int(8, 80), p.depth = rand_int(1, 150);
    multiplier(real > 2147483647.0 ? 2147483647.0 : real, &p.mult, &p.shift);
    p.diff_min = -(int32_t)floor(31.0 * 67108864.0 / ldexp(1.0, p.shift)); /* CalculateInputRadius(5, shift) */
    x = ints((size_t)p.rows * p.depth, 1, -128, 127);
    y = bytes((size_t)p.rows * p.depth * (out16 ? 2 : 1)), ref = bytes((size_t)p.rows * p.depth * (out16 ? 2 : 1));
    if (out16) aotc_tfl_softmax_s8_s16(&p, x, y), aotc_tfl_softmax_s8_s16_ref(&p, x, ref);
    else aotc_tfl_softmax_s8(&p, x, y), aotc_tfl_softmax_s8_ref(&p, x, ref);
    bad = differ(out16 ? "aotc_tfl_softmax_s8_s16" : "aotc_tfl_softmax_s8", y, ref, (size_t)p.rows * p.depth, out16 ? 2 : 1);
    if (bad) printf("  rows %d, depth %d, mult %d, shift %d, diff_min %d\n", (int)p.rows, (int)p.depth, (int)p.mult,
                    (int)p.shift, (int)p.diff_min);
    free(x), free(y), free(ref);
    return bad;
}

/* LiteRT's 513-anchor tables: exp on [-10, 0] and 1 / (1 + x) on [0, 1], Q0.15 */
static void softmax16_tables(int16_t *exp_table, int16_t *recip_table) {
    int32_t i;
    for (i = 0; i < 513; ++i) {
        const double e = floor(exp(-10.0 + 10.0 * i / 512.0) * 32767.0 + 0.5), r = floor(32767.0 / (1.0 + i / 512.0) + 0.5);
        exp_table[i] = (int16_t)e, recip_table[i] = (int16_t)r;
    }
}

static int check_softmax16(void) {
    static int16_t exp_table[513], recip_table[513];
    aotc_tfl_softmax16_params p;
    void *x, *y, *ref;
    int bad;
    softmax16_tables(exp_table, recip_table);
    p.rows = rand_int(1, 4), p.depth = rand_int(1, 60), p.exp_table = exp_table, p.recip_table = recip_table;
    multiplier(around(chance(1, 2) ? 1.0 : 0.05), &p.mult, &p.shift); /* the differences onto [-65535, 0] */
    x = ints((size_t)p.rows * p.depth, 2, chance(1, 2) ? -32768 : -2000, chance(1, 2) ? 32767 : 2000);
    y = bytes((size_t)p.rows * p.depth * 2), ref = bytes((size_t)p.rows * p.depth * 2);
    aotc_tfl_softmax_s16(&p, x, y), aotc_tfl_softmax_s16_ref(&p, x, ref);
    bad = differ("aotc_tfl_softmax_s16", y, ref, (size_t)p.rows * p.depth, 2);
    if (bad) printf("  rows %d, depth %d, mult %d, shift %d\n", (int)p.rows, (int)p.depth, (int)p.mult, (int)p.shift);
    free(x), free(y), free(ref);
    return bad;
}

/* ---- 16x8 LOGISTIC, TANH ---------------------------------------------------------------------------------------- */

static int check_act16(int tanh_op) {
    static uint16_t table[256];
    aotc_tfl_act16_params p;
    int32_t i;
    void *x, *y, *ref;
    int bad;
    for (i = 0; i < 256; ++i) table[i] = (uint16_t)(i == 255 ? 65535 : floor(65536.0 / (1.0 + exp(-i / 24.0)) + 0.5));
    p.count = rand_int(1, 600), p.table = table;
    p.shift = rand_int(0, 15), p.mult = chance(1, 4) ? 3 << rand_int(0, 1) : rand_int(16384, 32767); /* as act16_params */
    x = ints((size_t)p.count, 2, -32768, 32767), y = bytes((size_t)p.count * 2), ref = bytes((size_t)p.count * 2);
    if (tanh_op) aotc_tfl_tanh_s16(&p, x, y), aotc_tfl_tanh_s16_ref(&p, x, ref);
    else aotc_tfl_logistic_s16(&p, x, y), aotc_tfl_logistic_s16_ref(&p, x, ref);
    bad = differ(tanh_op ? "aotc_tfl_tanh_s16" : "aotc_tfl_logistic_s16", y, ref, (size_t)p.count, 2);
    if (bad) printf("  mult %d, shift %d\n", (int)p.mult, (int)p.shift);
    free(x), free(y), free(ref);
    return bad;
}

/* ---- UNIDIRECTIONAL_SEQUENCE_LSTM (8x8_16), SVDF ------------------------------------------------------------------ */

static int check_lstm(void) {
    aotc_tfl_lstm8_params p;
    int32_t g;
    size_t nx, ny, nc;
    int8_t *x, *wx, *wh, *h0, *y, *h, *ref_y, *ref_h;
    int32_t *bx, *bh;
    int16_t *c0, *c, *ref_c;
    int bad;
    memset(&p, 0, sizeof p);
    p.batch = rand_int(1, 2), p.steps = rand_int(1, 4), p.n_input = rand_int(1, 10), p.n_cell = rand_int(1, 8);
    for (g = 0; g < 8; ++g) { /* the products to Q3.12: over its range, some saturating */
        multiplier(around(4096.0 * 4.0 / (127.0 * 64.0 * sqrt((double)(g < 4 ? p.n_input : p.n_cell)))), &p.mult[g], &p.shift[g]);
    }
    multiplier(around(128.0 / 1073741824.0), &p.hidden_mult, &p.hidden_shift);
    p.hidden_zero = rand_int(-128, 127), p.cell_shift = rand_int(15, 20), p.tanh_bits = rand_int(-1, 6);
    p.clip = chance(1, 3) ? rand_int(1, 32767) : 0;
    nx = (size_t)p.batch * p.steps * p.n_input, ny = (size_t)p.batch * p.steps * p.n_cell, nc = (size_t)p.batch * p.n_cell;
    x = (int8_t *)ints(nx, 1, -128, 127), wx = (int8_t *)ints((size_t)4 * p.n_cell * p.n_input, 1, -127, 127);
    wh = (int8_t *)ints((size_t)4 * p.n_cell * p.n_cell, 1, -127, 127);
    bx = (int32_t *)ints((size_t)4 * p.n_cell, 4, -20000, 20000), bh = (int32_t *)ints((size_t)4 * p.n_cell, 4, -20000, 20000);
    h0 = (int8_t *)ints(nc, 1, -128, 127), c0 = (int16_t *)ints(nc, 2, -32768, 32767);
    y = (int8_t *)bytes(ny), h = (int8_t *)bytes(nc), c = (int16_t *)bytes(nc * 2);
    ref_y = (int8_t *)bytes(ny), ref_h = (int8_t *)bytes(nc), ref_c = (int16_t *)bytes(nc * 2);
    aotc_tfl_lstm_s8(&p, x, wx, wh, bx, bh, h0, c0, y, h, c);
    aotc_tfl_lstm_s8_ref(&p, x, wx, wh, bx, bh, h0, c0, ref_y, ref_h, ref_c);
    bad = differ("aotc_tfl_lstm_s8 (y)", y, ref_y, ny, 1) || differ("aotc_tfl_lstm_s8 (h)", h, ref_h, nc, 1) ||
          differ("aotc_tfl_lstm_s8 (c)", c, ref_c, nc, 2);
    if (bad) printf("  batch %d, steps %d, n_input %d, n_cell %d, cell_shift %d, tanh_bits %d, clip %d\n", (int)p.batch,
                    (int)p.steps, (int)p.n_input, (int)p.n_cell, (int)p.cell_shift, (int)p.tanh_bits, (int)p.clip);
    free(x), free(wx), free(wh), free(bx), free(bh), free(h0), free(c0), free(y), free(h), free(c);
    free(ref_y), free(ref_h), free(ref_c);
    return bad;
}

static int check_svdf(void) {
    aotc_tfl_svdf_params p;
    const int in_place = chance(1, 2);
    size_t ns;
    int8_t *x, *wf, *y, *ref;
    int16_t *wt, *state, *next, *ref_next;
    int32_t *bias;
    int bad;
    p.batch = rand_int(1, 2), p.n_input = rand_int(1, 12), p.rank = rand_int(1, 2);
    p.n_filter = p.rank * rand_int(1, 4), p.n_memory = rand_int(1, 6);
    p.x_zero = rand_int(-128, 127), p.y_zero = rand_int(-128, 127);
    multiplier(around(8192.0 / (127.0 * 128.0 * sqrt((double)p.n_input))), &p.mult1, &p.shift1);
    multiplier(around(128.0 / (8192.0 * 8192.0)), &p.mult2, &p.shift2);
    ns = (size_t)p.batch * p.n_filter * p.n_memory;
    x = (int8_t *)ints((size_t)p.batch * p.n_input, 1, -128, 127), wf = (int8_t *)ints((size_t)p.n_filter * p.n_input, 1, -127, 127);
    /* (time weights and state within 2^13: LiteRT's int32 sums of rank x n_memory products then cannot overflow) */
    wt = (int16_t *)ints((size_t)p.n_filter * p.n_memory, 2, -8192, 8192);
    bias = chance(1, 4) ? NULL : (int32_t *)ints((size_t)p.n_filter / p.rank, 4, -100000, 100000);
    state = (int16_t *)ints(ns, 2, -8192, 8192);
    next = in_place ? (int16_t *)bytes_copy(state, ns * 2) : (int16_t *)bytes(ns * 2), ref_next = (int16_t *)bytes(ns * 2);
    y = (int8_t *)bytes((size_t)p.batch * p.n_filter / p.rank), ref = (int8_t *)bytes((size_t)p.batch * p.n_filter / p.rank);
    aotc_tfl_svdf_s8(&p, x, wf, wt, bias, in_place ? next : state, y, next);
    aotc_tfl_svdf_s8_ref(&p, x, wf, wt, bias, state, ref, ref_next);
    bad = differ("aotc_tfl_svdf_s8 (y)", y, ref, (size_t)p.batch * p.n_filter / p.rank, 1) ||
          differ("aotc_tfl_svdf_s8 (state)", next, ref_next, ns, 2);
    if (bad) printf("  batch %d, n_input %d, rank %d, n_filter %d, n_memory %d, in place %d\n", (int)p.batch,
                    (int)p.n_input, (int)p.rank, (int)p.n_filter, (int)p.n_memory, in_place);
    free(x), free(wf), free(wt), free(bias), free(state), free(next), free(ref_next), free(y), free(ref);
    return bad;
}

/* ---- the references on cases worked out by hand --------------------------------------------------------------- */

/* requantisation: 5 x 0.5 (m 2^30, shift 0) = 2.5 -> 3, -2.5 -> -2 (SaturatingRoundingDoublingHighMul rounds
 * halves up, RoundingDivideByPOT by 2^0 keeps them); a 1 x 1 conv
 * (x 10, x_zero 1, w 2, bias 1: 19) by 0.5 -> 10 (9.5 away from zero), plus y_zero 3: 13; int16
 * logistic(0) = 0.5 and tanh(0) = 0 (gemmlowp's, through the LSTM's cell with 0 weights) */
/* ---- issue 50: BATCH_MATMUL, RESIZE_BILINEAR, SQUARED_DIFFERENCE, the 16x8 interpolated table ---------------- */

enum { MM_S8, MM_S16, MM_S16_S8 };
/* kind | MM_TALL: over 256 rows (the VNNI path's blocks of row sums); | MM_DEEP: k past its stack panel (1024) */
#define MM_TALL 4
#define MM_DEEP 8

static int check_matmul(int arg) {
    const int kind = arg & 3, one = (arg & (MM_TALL | MM_DEEP)) != 0; /* one matrix where tall or deep (the boards'
                                                                         heap) */
    static const char *const names[3] = {"aotc_tfl_batch_matmul_s8", "aotc_tfl_batch_matmul_s16",
                                         "aotc_tfl_batch_matmul_s16_s8"};
    aotc_tfl_matmul_params p;
    const size_t s1 = kind == MM_S8 ? 1 : 2, s2 = kind == MM_S16 ? 2 : 1;
    int32_t n1 = 1, n2 = 1, d, count;
    void *x1, *x2, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.m = rand_int(1, 9), p.k = rand_int(1, chance(1, 4) ? 300 : 20), p.n = rand_int(1, chance(1, 3) ? 70 : 9);
    if (arg & MM_TALL) p.m = rand_int(250, 300), p.k = rand_int(1, 40), p.n = rand_int(1, 80);
    if (arg & MM_DEEP) p.m = rand_int(1, 6), p.k = rand_int(1000, 1100), p.n = rand_int(1, 20);
    if (chance(1, 2)) p.a_row = p.k, p.a_col = 1; /* x1 m x k, or k x m (adj_x) */
    else p.a_row = 1, p.a_col = p.m;
    if (chance(1, 2)) p.b_row = p.n, p.b_col = 1; /* x2 k x n, or n x k (adj_y) */
    else p.b_row = 1, p.b_col = p.k;
    for (d = 2; d >= 0; --d) { /* each batch dim broadcast in one input or neither */
        const int32_t dim = one ? 1 : rand_int(1, 3), which = rand_int(0, 2);
        p.batch[d] = dim;
        p.st1[d] = which == 1 ? 0 : n1 * p.m * p.k, p.st2[d] = which == 2 ? 0 : n2 * p.k * p.n;
        n1 *= which == 1 ? 1 : dim, n2 *= which == 2 ? 1 : dim;
    }
    count = p.batch[0] * p.batch[1] * p.batch[2] * p.m * p.n;
    p.x1_zero = kind == MM_S8 ? rand_int(-128, 127) : 0, p.x2_zero = kind == MM_S8 ? rand_int(-128, 127) : 0;
    p.y_zero = kind == MM_S8 ? rand_int(-128, 127) : 0;
    p.y_min = kind == MM_S8 ? -128 : -32768, p.y_max = kind == MM_S8 ? 127 : 32767;
    multiplier(around((kind == MM_S8 ? 0.5 : 2.0) / (128.0 * sqrt((double)p.k))), &p.mult, &p.shift);
    x1 = ints((size_t)n1 * p.m * p.k, s1, s1 == 1 ? -128 : -32768, s1 == 1 ? 127 : 32767);
    x2 = ints((size_t)n2 * p.k * p.n, s2, s2 == 1 ? -128 : -32768, s2 == 1 ? 127 : 32767);
    y = bytes((size_t)count * s1), ref = bytes((size_t)count * s1);
    if (kind == MM_S8) aotc_tfl_batch_matmul_s8(&p, x1, x2, y), aotc_tfl_batch_matmul_s8_ref(&p, x1, x2, ref);
    else if (kind == MM_S16) aotc_tfl_batch_matmul_s16(&p, x1, x2, y), aotc_tfl_batch_matmul_s16_ref(&p, x1, x2, ref);
    else aotc_tfl_batch_matmul_s16_s8(&p, x1, x2, y), aotc_tfl_batch_matmul_s16_s8_ref(&p, x1, x2, ref);
    bad = differ(names[kind], y, ref, (size_t)count, s1);
    if (bad) printf("  m %d k %d n %d, b_col %d\n", (int)p.m, (int)p.k, (int)p.n, (int)p.b_col);
    free(x1), free(x2), free(y), free(ref);
    return bad;
}

static int check_resize(int wide) {
    aotc_tfl_resize_params p;
    const size_t xs = wide ? 2 : 1;
    int32_t align;
    size_t count;
    void *x, *y, *ref;
    int bad;
    p.n = rand_int(1, 2), p.h = rand_int(1, 9), p.w = rand_int(1, 9), p.c = rand_int(1, 5);
    p.oh = rand_int(1, 20), p.ow = rand_int(1, 20);
    p.half_pixel = chance(1, 2), align = !p.half_pixel && chance(1, 2);
    p.scale_h = ((1 << 10) * p.h + p.oh / 2) / p.oh, p.scale_w = ((1 << 10) * p.w + p.ow / 2) / p.ow;
    if (align && p.oh > 1) p.scale_h = ((1 << 10) * (p.h - 1) + (p.oh - 1) / 2) / (p.oh - 1);
    if (align && p.ow > 1) p.scale_w = ((1 << 10) * (p.w - 1) + (p.ow - 1) / 2) / (p.ow - 1);
    count = (size_t)p.n * p.oh * p.ow * p.c;
    x = ints((size_t)p.n * p.h * p.w * p.c, xs, wide ? -32768 : -128, wide ? 32767 : 127);
    y = bytes(count * xs), ref = bytes(count * xs);
    if (wide) aotc_tfl_resize_bilinear_s16(&p, x, y), aotc_tfl_resize_bilinear_s16_ref(&p, x, ref);
    else aotc_tfl_resize_bilinear_s8(&p, x, y), aotc_tfl_resize_bilinear_s8_ref(&p, x, ref);
    bad = differ(wide ? "aotc_tfl_resize_bilinear_s16" : "aotc_tfl_resize_bilinear_s8", y, ref, count, xs);
    if (bad) printf("  %dx%d -> %dx%d, half pixel %d\n", (int)p.h, (int)p.w, (int)p.oh, (int)p.ow, (int)p.half_pixel);
    free(x), free(y), free(ref);
    return bad;
}

static int check_squared_difference(void) {
    aotc_tfl_binary_params p;
    const double s1 = around(0.05), s2 = around(0.05), so = around(0.01), twice = 2.0 * (s1 > s2 ? s1 : s2);
    int32_t n1 = 1, n2 = 1, d;
    void *x1, *x2, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.broadcast = chance(1, 2), p.count = 1;
    for (d = 0; d < 6; ++d) p.dims[d] = d < 2 ? 1 : rand_int(1, 5), p.count *= p.dims[d];
    for (d = 5; d >= 0; --d) {
        const int b1 = p.broadcast && chance(1, 3), b2 = p.broadcast && chance(1, 3);
        p.st1[d] = b1 ? 0 : n1, p.st2[d] = b2 ? 0 : n2;
        n1 *= b1 ? 1 : p.dims[d], n2 *= b2 ? 1 : p.dims[d];
    }
    p.x1_zero = rand_int(-128, 127), p.x2_zero = rand_int(-128, 127), p.y_zero = rand_int(-128, 127);
    p.y_min = -128, p.y_max = 127;
    multiplier(s1 / twice, &p.m1, &p.s1), multiplier(s2 / twice, &p.m2, &p.s2);
    multiplier(twice * twice / (16384.0 * so), &p.mult, &p.shift);
    x1 = ints((size_t)n1, 1, -128, 127), x2 = ints((size_t)n2, 1, -128, 127);
    y = bytes((size_t)p.count), ref = bytes((size_t)p.count);
    aotc_tfl_squared_difference_s8(&p, x1, x2, y), aotc_tfl_squared_difference_s8_ref(&p, x1, x2, ref);
    bad = differ("aotc_tfl_squared_difference_s8", y, ref, (size_t)p.count, 1);
    free(x1), free(x2), free(y), free(ref);
    return bad;
}

static int check_sqrt16(void) {
    aotc_tfl_quantize_params p;
    void *x, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.count = rand_int(0, 800), p.scale = (float)around(1.0 / 4096.0), p.y_scale = (float)around(1.0 / 8192.0);
    x = ints((size_t)p.count, 2, -32768, 32767), y = bytes((size_t)p.count * 2), ref = bytes((size_t)p.count * 2);
    aotc_tfl_sqrt_s16(&p, x, y), aotc_tfl_sqrt_s16_ref(&p, x, ref);
    bad = differ("aotc_tfl_sqrt_s16", y, ref, (size_t)p.count, 2);
    free(x), free(y), free(ref);
    return bad;
}

static int check_abs16(void) {
    aotc_tfl_binary_params p;
    void *x, *y, *ref;
    int bad;
    memset(&p, 0, sizeof p);
    p.count = rand_int(0, 800), p.y_min = -32768, p.y_max = 32767;
    if (chance(2, 3)) multiplier(around(1.0), &p.mult, &p.shift); /* else the input's scale: no rescaling */
    x = ints((size_t)p.count, 2, -32768, 32767), y = bytes((size_t)p.count * 2), ref = bytes((size_t)p.count * 2);
    aotc_tfl_abs_s16(&p, x, y), aotc_tfl_abs_s16_ref(&p, x, ref);
    bad = differ("aotc_tfl_abs_s16", y, ref, (size_t)p.count, 2);
    free(x), free(y), free(ref);
    return bad;
}

static int check_lut16(void) {
    aotc_tfl_lut16_params p;
    void *x, *y, *ref;
    int bad;
    p.count = rand_int(0, 800);
    p.table = (const int16_t *)ints(513, 2, -32768, 32767); /* any anchors: the slope wraps in int16 as LiteRT's */
    x = ints((size_t)p.count, 2, -32768, 32767), y = bytes((size_t)p.count * 2), ref = bytes((size_t)p.count * 2);
    aotc_tfl_lut_s16(&p, x, y), aotc_tfl_lut_s16_ref(&p, x, ref);
    bad = differ("aotc_tfl_lut_s16", y, ref, (size_t)p.count, 2);
    free((void *)p.table), free(x), free(y), free(ref);
    return bad;
}

static int check_reference(void) {
    static const int8_t x[1] = {10}, w[1] = {2};
    static const int32_t bias[1] = {1}, half[1] = {1 << 30}, zero[1] = {0};
    static const int8_t twos[2] = {5, -5};
    aotc_tfl_conv_params p;
    aotc_tfl_quantize_params q;
    int8_t y[2];
    int bad;
    memset(&p, 0, sizeof p);
    p.n = p.h = p.w = p.c = p.oh = p.ow = p.oc = p.kh = p.kw = p.sh = p.sw = p.dh = p.dw = 1;
    p.x_zero = 1, p.y_zero = 3, p.y_min = -128, p.y_max = 127, p.mult = half, p.shift = zero;
    aotc_tfl_conv_s8_ref(&p, x, w, bias, y);
    bad = y[0] != 13;
    memset(&q, 0, sizeof q);
    q.count = 2, q.mult = 1 << 30, q.shift = 0;
    aotc_tfl_requantize_s8_ref(&q, twos, y);
    bad |= y[0] != 3 || y[1] != -2;
    if (bad) printf("the references: MISMATCH on a case worked out by hand\n");
    return bad;
}

typedef struct {
    const char *name;
    int (*check)(int);
    int arg;
} entry;

static int c_conv8(int kind) { return check_conv(kind, 0); }
static int c_conv16(int kind) { return check_conv(kind, 1); }
static int c_avg(int wide) { return check_pool(1, wide); }
static int c_max(int wide) { return check_pool(0, wide); }
static int c_bin8(int op) { return check_binary(op, 0); }
static int c_bin16(int op) { return check_binary(op, 1); }
#if defined(__x86_64__)
/* the packed DEPTHWISE_CONV_2D's byte path with its kernel's rows constant (tflite_int8_packed.c
 * tfl_pk_dw_quads_row): 3 rows of 1 to 4 taps (one quad a row) and 5 rows of 5 to 8 (two), the rows dilated or not,
 * strides 1 and 2, widths giving every last group of positions (ow mod 4), 1 to 40 channels (a block's part),
 * VALID or SAME, one or two images; and a few of 4, 6 and 7 rows (the loop that reads them at run time) */
static int check_dw_rows(void) {
    aotc_tfl_conv_params p;
    int bad;
    const int form = rand_int(0, 7);
    memset(&p, 0, sizeof p);
    p.n = rand_int(1, 2), p.dw = 1, p.dh = chance(3, 4) ? 1 : 2, p.sh = rand_int(1, 2), p.sw = rand_int(1, 2);
    p.kh = form < 4 ? 3 : form < 7 ? 5 : rand_int(4, 7);
    p.kw = p.kh == 3 ? rand_int(1, 4) : p.kh == 5 ? rand_int(5, 8) : rand_int(1, 8);
    do {
        p.h = rand_int(1, 14), p.w = rand_int(1, 30);
        p.oh = window_dim(p.h, p.kh, p.sh, p.dh, &p.pad_top), p.ow = window_dim(p.w, p.kw, p.sw, p.dw, &p.pad_left);
    } while (p.oh <= 0 || p.ow <= 0);
    p.c = p.oc = chance(1, 2) ? rand_int(1, 40) : 16 * rand_int(1, 2);
    bad = packed_dw_differs(&p, "aotc_tfl_depthwise_s8_packed (rows)");
    if (bad)
        printf("  n %d h %d w %d c %d, %d x %d stride %d %d dilation %d, pads %d %d\n", (int)p.n, (int)p.h, (int)p.w,
               (int)p.c, (int)p.kh, (int)p.kw, (int)p.sh, (int)p.sw, (int)p.dh, (int)p.pad_top, (int)p.pad_left);
    return bad;
}
#endif

static int c_runs8(int op) { return check_binary_runs(op, 0); }
static int c_runs16(int op) { return check_binary_runs(op, 1); }
static int c_runs8_one(int op) { return check_binary_runs(op | RUNS_ONE, 0); }
static int c_add_rescale(int unused) { return (void)unused, check_add_rescale(); }
static int c_leaky(int unused) { return (void)unused, check_leaky_relu(); }
static int c_conv_add_rescale(int unused) { return (void)unused, check_conv_add_rescale(); }
#if defined(__x86_64__)
static int c_conv_tile_regs(int unused) { return (void)unused, check_conv_tile_regs(); }
#endif
#if defined(__x86_64__)
static int c_dw_across(int unused) { return (void)unused, check_dw_across(); }
static int c_dw_rows(int unused) { return (void)unused, check_dw_rows(); }
#endif
static int c_lut(int unused) { return (void)unused, check_lut(); }
static int c_softmax16(int unused) { return (void)unused, check_softmax16(); }
static int c_lstm(int unused) { return (void)unused, check_lstm(); }
static int c_svdf(int unused) { return (void)unused, check_svdf(); }
static int c_sqdiff(int unused) { return (void)unused, check_squared_difference(); }
static int c_lut16(int unused) { return (void)unused, check_lut16(); }
static int c_sqrt16(int unused) { return (void)unused, check_sqrt16(); }
static int c_abs16(int unused) { return (void)unused, check_abs16(); }

static const entry ENTRIES[] = {
    {"aotc_tfl_conv_s8", c_conv8, K_CONV},
    {"aotc_tfl_depthwise_s8", c_conv8, K_DEPTHWISE},
    {"aotc_tfl_depthwise_s8 (ring)", c_conv8, K_DEPTHWISE | K_RING},
    {"aotc_tfl_fc_s8", check_fc, 0},
    {"aotc_tfl_conv_add_s8", c_conv8, K_CONV_ADD},
    {"aotc_tfl_conv_s8_packed", c_conv8, K_CONV | K_PACKED},
    {"aotc_tfl_depthwise_s8_packed", c_conv8, K_DEPTHWISE | K_PACKED},
    {"aotc_tfl_conv_add_s8_packed", c_conv8, K_CONV_ADD | K_PACKED},
    {"aotc_tfl_fc_s8_packed", check_fc, 2},
    {"aotc_tfl_transpose_conv_s8", c_conv8, K_TRANSPOSE},
    {"aotc_tfl_avgpool_s8", c_avg, 0},
    {"aotc_tfl_maxpool_s8", c_max, 0},
    {"aotc_tfl_mean_s8", check_mean, 0},
    {"aotc_tfl_add_s8", c_bin8, B_ADD},
    {"aotc_tfl_mul_s8", c_bin8, B_MUL},
    {"aotc_tfl_max_s8", c_bin8, B_MAX},
    {"aotc_tfl_min_s8", c_bin8, B_MIN},
    {"aotc_tfl_add_s8 (runs)", c_runs8, B_ADD},
    {"aotc_tfl_mul_s8 (runs)", c_runs8, B_MUL},
    {"aotc_tfl_max_s8 (runs)", c_runs8, B_MAX},
    {"aotc_tfl_lut_s8", c_lut, 0},
    {"aotc_tfl_softmax_s8", check_softmax8, 0},
    {"aotc_tfl_softmax_s8_s16", check_softmax8, 1},
    {"aotc_tfl_quantize_f32_s8", check_quantize, Q_F32_S8},
    {"aotc_tfl_dequantize_s8_f32", check_quantize, DQ_S8},
    {"aotc_tfl_requantize_s8", check_quantize, RQ_S8},
    {"aotc_tfl_quantize_f32_s16", check_quantize, Q_F32_S16},
    {"aotc_tfl_dequantize_s16_f32", check_quantize, DQ_S16},
    {"aotc_tfl_requantize_s16", check_quantize, RQ_S16},
    {"aotc_tfl_requantize_s8_s16", check_quantize, RQ_S8_S16},
    {"aotc_tfl_requantize_s16_s8", check_quantize, RQ_S16_S8},
    {"aotc_tfl_requantize_s8_s32", check_quantize, RQ_S8_S32},
    {"aotc_tfl_requantize_s16_s32", check_quantize, RQ_S16_S32},
    {"aotc_tfl_requantize_s32_s8", check_quantize, RQ_S32_S8},
    {"aotc_tfl_requantize_s32_s16", check_quantize, RQ_S32_S16},
    {"aotc_tfl_requantize_s8_u8", check_quantize, RQ_S8_U8},
    {"aotc_tfl_requantize_u8_s8", check_quantize, RQ_U8_S8},
    {"aotc_tfl_conv_s16", c_conv16, K_CONV},
    {"aotc_tfl_depthwise_s16", c_conv16, K_DEPTHWISE},
    {"aotc_tfl_transpose_conv_s16", c_conv16, K_TRANSPOSE},
    {"aotc_tfl_fc_s16", check_fc, 1},
    {"aotc_tfl_avgpool_s16", c_avg, 1},
    {"aotc_tfl_maxpool_s16", c_max, 1},
    {"aotc_tfl_mean_s16", check_mean, 1},
    {"aotc_tfl_add_s16", c_bin16, B_ADD},
    {"aotc_tfl_mul_s16", c_bin16, B_MUL},
    {"aotc_tfl_max_s16", c_bin16, B_MAX},
    {"aotc_tfl_min_s16", c_bin16, B_MIN},
    {"aotc_tfl_add_s16 (runs)", c_runs16, B_ADD},
    {"aotc_tfl_mul_s16 (runs)", c_runs16, B_MUL},
    {"aotc_tfl_leaky_relu_s16", c_leaky, 0},
    {"aotc_tfl_logistic_s16", check_act16, 0},
    {"aotc_tfl_tanh_s16", check_act16, 1},
    {"aotc_tfl_softmax_s16", c_softmax16, 0},
    {"aotc_tfl_lstm_s8", c_lstm, 0},
    {"aotc_tfl_svdf_s8", c_svdf, 0},
    {"aotc_tfl_batch_matmul_s8", check_matmul, MM_S8},
    {"aotc_tfl_batch_matmul_s16", check_matmul, MM_S16},
    {"aotc_tfl_batch_matmul_s16_s8", check_matmul, MM_S16_S8},
    {"aotc_tfl_resize_bilinear_s8", check_resize, 0},
    {"aotc_tfl_resize_bilinear_s16", check_resize, 1},
    {"aotc_tfl_squared_difference_s8", c_sqdiff, 0},
    {"aotc_tfl_lut_s16", c_lut16, 0},
    {"aotc_tfl_sqrt_s16", c_sqrt16, 0},
    {"aotc_tfl_abs_s16", c_abs16, 0},
    {"aotc_tfl_depthwise_s8 (ring, 6 q wide)", c_conv8, K_DEPTHWISE | K_RING6},
    {"aotc_tfl_conv_s8 (pointwise, late)", c_conv8, K_CONV | K_PW},
    {"aotc_tfl_depthwise_s8 (multiplier)", c_conv8, K_DEPTHWISE | K_MULT},
    {"aotc_tfl_softmax_s8 (rows)", check_softmax8, SM_ROWS},
    {"aotc_tfl_softmax_s8_s16 (rows)", check_softmax8, 1 | SM_ROWS},
    {"aotc_tfl_fc_s8_packed (rows)", check_fc, 3},
    {"aotc_tfl_add_s8 (one element)", c_runs8_one, B_ADD},
    {"aotc_tfl_mul_s8 (one element)", c_runs8_one, B_MUL},
    {"aotc_tfl_add_s8 (rescale)", c_add_rescale, 0},
    {"aotc_tfl_conv_add_s8_packed (rescale)", c_conv_add_rescale, 0},
#if defined(__x86_64__) /* (inputs past 512 KiB: too large a heap on the boards, where the packed path is the plain one) */
    {"aotc_tfl_depthwise_s8_packed (across)", c_dw_across, 0},
#endif
    {"aotc_tfl_batch_matmul_s8 (tall)", check_matmul, MM_S8 | MM_TALL},
    {"aotc_tfl_batch_matmul_s8 (deep)", check_matmul, MM_S8 | MM_DEEP},
#if defined(__x86_64__) /* (AMX's shapes: on the boards the plain loop the entries above check, and too large a heap) */
    {"aotc_tfl_conv_s8_packed (tiles)", c_conv8, K_CONV | K_PACKED | K_TILES},
    {"aotc_tfl_conv_add_s8_packed (tiles)", c_conv8, K_CONV_ADD | K_PACKED | K_TILES},
    {"aotc_tfl_conv_s8_packed (AMX blockings)", c_conv8, K_CONV | K_PACKED | K_AMX},
    {"aotc_tfl_conv_add_s8_packed (AMX blockings)", c_conv8, K_CONV_ADD | K_PACKED | K_AMX},
#endif
    {"aotc_tfl_conv_add_s8 (residual, late)", c_conv8, K_CONV_ADD | K_RES},
#if defined(__x86_64__) /* (the byte path's: on the boards the plain loop the entries above check) */
    {"aotc_tfl_depthwise_s8_packed (rows)", c_dw_rows, 0},
#endif
    {"aotc_tfl_conv_s8_packed (32-bit requantisation)", check_conv_rq_bound, K_CONV},
    {"aotc_tfl_conv_add_s8_packed (32-bit requantisation)", check_conv_rq_bound, K_CONV_ADD},
#if defined(__x86_64__) /* (the VNNI path's: on the boards the plain loop the entries above check) */
    {"aotc_tfl_conv_s8_packed (tile in registers)", c_conv_tile_regs, 0},
    {"aotc_tfl_conv_add_s8_packed (linear ADD)", check_conv_add_linear, 0},
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    !defined(AOTC_NO_INTRINSICS)
    /* (only the VNNI path takes the form: the others' ADD, exact, is not a drawn form's) */
    {"aotc_tfl_conv_add_s8_packed (linear form)", check_conv_add_linear, 1},
#endif
#endif
};

/* Whether `name` holds one of the words of `only` (separated by '|'; every name where `only` is NULL). */
static int selected(const char *name, const char *only) {
    char word[64];
    while (only != NULL) {
        const char *bar = strchr(only, '|');
        size_t n = bar != NULL ? (size_t)(bar - only) : strlen(only);
        if (n >= sizeof word) n = sizeof word - 1;
        memcpy(word, only, n);
        word[n] = '\0';
        if (strstr(name, word) != NULL) return 1;
        only = bar != NULL ? bar + 1 : NULL;
    }
    return 0;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    const char *only = argc > 3 ? argv[3] : NULL; /* the entries whose name holds a word of it (all: none given) */
    int failed = check_reference();
    size_t e;
    int32_t i;
    for (e = 0; e < sizeof ENTRIES / sizeof ENTRIES[0]; ++e) {
        int bad = 0;
        if (only != NULL && !selected(ENTRIES[e].name, only)) continue;
        for (i = 0; i < shapes && !bad; ++i) bad = ENTRIES[e].check(ENTRIES[e].arg);
        printf("%-34s %s (%d shapes)\n", ENTRIES[e].name, bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
