/* ONNX Conv with a 3 x 3 kernel and few input channels per group (depthwise convs, RGB stems),
 * aotc_conv3x3_flat_f32: one flat pass over each output plane per input plane. */
#include "conv_internal.h"

/* ---- 3 x 3 Conv, few input channels per group: one flat pass per plane, straight into Y --- */

/* The loop over one output plane y[0, n): SUM declares v, the taps of output q from one input
 * channel (taps outside the image dropped by keep_if); v is added to the bias (the group's
 * first input channel) or to y[q] (a later one), clamped to [lo, hi] (-inf, inf before the
 * last input channel, or with no activation to fuse) and stored. */
#define FLAT_LOOP(SUM)                                                                   \
    if (!acc) {                                                                          \
        for (q = 0; q < n; ++q) {                                                        \
            SUM                                                                          \
            v += b;                                                                      \
            v = v < lo ? lo : v;                                                         \
            y[q] = v > hi ? hi : v;                                                      \
        }                                                                                \
    } else {                                                                             \
        for (q = 0; q < n; ++q) {                                                        \
            SUM                                                                          \
            v += y[q];                                                                   \
            v = v < lo ? lo : v;                                                         \
            y[q] = v > hi ? hi : v;                                                      \
        }                                                                                \
    }

/* Stride 1, pads of 1: x is the plane (rows of w) with a zero row and one more zero on each
 * side, so tap (ky, kx) of output q is x[q + (ky - 1) * w + kx - 1]; a tap that wraps into the
 * row above or below is in a padding column, dropped by the mask. */
MK_SPEED static void flat3x3_s1(const float *AOTC_RESTRICT x, int32_t w, int32_t n, const uint32_t *AOTC_RESTRICT m,
                       const float *k, float b, int acc, float lo, float hi, float *AOTC_RESTRICT y) {
    const float *AOTC_RESTRICT r0 = x - w;
    const float *AOTC_RESTRICT r2 = x + w;
    const float k00 = k[0], k01 = k[1], k02 = k[2], k10 = k[3], k11 = k[4], k12 = k[5];
    const float k20 = k[6], k21 = k[7], k22 = k[8];
    int32_t q;
#define S1_SUM                                                                             \
    const float left = MK_MADD(k20, r2[q - 1], MK_MADD(k10, x[q - 1], k00 * r0[q - 1]));         \
    const float mid = MK_MADD(k21, r2[q], MK_MADD(k11, x[q], k01 * r0[q]));                      \
    const float right = MK_MADD(k22, r2[q + 1], MK_MADD(k12, x[q + 1], k02 * r0[q + 1]));       \
    float v = mid + keep_if(left, m[q]) + keep_if(right, m[q + 1]);
    FLAT_LOOP(S1_SUM)
#undef S1_SUM
}

/* Stride 2: t[i] is where tap i of output q is read, t[i][q], in planes of one row and column
 * parity of the input (rows of OW); k[i] its weight. Taps 0 to 2 are the kernel column whose
 * reads are dropped where e[q] is 0 (the column before the first, or after the last). */
MK_SPEED static void flat3x3_s2(const float *const *t, const uint32_t *AOTC_RESTRICT e, int32_t n, const float *k,
                       float b, int acc, float lo, float hi, float *AOTC_RESTRICT y) {
    const float *AOTC_RESTRICT t0 = t[0];
    const float *AOTC_RESTRICT t1 = t[1];
    const float *AOTC_RESTRICT t2 = t[2];
    const float *AOTC_RESTRICT t3 = t[3];
    const float *AOTC_RESTRICT t4 = t[4];
    const float *AOTC_RESTRICT t5 = t[5];
    const float *AOTC_RESTRICT t6 = t[6];
    const float *AOTC_RESTRICT t7 = t[7];
    const float *AOTC_RESTRICT t8 = t[8];
    const float k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5], k6 = k[6], k7 = k[7], k8 = k[8];
    int32_t q;
#define S2_SUM                                                                                     \
    const float edge = MK_MADD(k2, t2[q], MK_MADD(k1, t1[q], k0 * t0[q]));                               \
    const float in = MK_MADD(k8, t8[q], MK_MADD(k7, t7[q], MK_MADD(k6, t6[q], MK_MADD(k5, t5[q], MK_MADD(k4, t4[q], k3 * t3[q]))))); \
    float v = in + keep_if(edge, e[q]);
    FLAT_LOOP(S2_SUM)
#undef S2_SUM
}
#undef FLAT_LOOP

/* ev[j] = row[2 j] for j < ne, od[j] = row[2 j + 1] for j < no (ne - no is 0 or 1). */
MK_SPEED static void split_columns(const float *AOTC_RESTRICT row, int32_t ne, int32_t no, float *AOTC_RESTRICT ev,
                          float *AOTC_RESTRICT od) {
    int32_t j;
    for (j = 0; j < no; ++j) {
        ev[j] = row[2 * j];
        od[j] = row[2 * j + 1];
    }
    if (ne > no) ev[no] = row[2 * no];
}

void aotc_conv3x3_flat_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                           const float *res, float *y, float *scratch) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t s = p->strides[2], pt = p->pads[1], pl = p->pads[2];
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, n = OH * OW;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW;
    /* scratch: the mask (n + 1 words, rounded up to 16), then one input plane with margins
     * (stride 1), or its four parity planes (stride 2) */
    uint32_t *const mask = (uint32_t *)scratch;
    float *const planes = scratch + AOTC_CONV3X3_FLAT_MASK_WORDS(n);
    const ptrdiff_t plane_len = AOTC_CONV3X3_FLAT_PLANE_FLOATS(s, IH, IW, OH, OW);
    const int32_t ne = min_i32(OW, (IW + 1) / 2), no = min_i32(OW, IW / 2); /* columns per parity */
    const int32_t masked = pl == 1 ? 0 : 2; /* stride 2: the kernel column a mask guards */
    /* the activation in the last channel's pass; LeakyRelu and a residual get passes of their own */
    const int fuse = p->act != AOTC_ACT_LEAKY && res == NULL;
    const float lo = fuse && p->act == AOTC_ACT_CLAMP ? p->act_lo : -INFINITY;
    const float hi = fuse && p->act == AOTC_ACT_CLAMP ? p->act_hi : INFINITY;
    const float *t[9];
    float k[9];
    int32_t i, nb, g, c, o;
    /* AVX-512: depthwise small planes at stride 1, short rows at stride 2 (conv_dw3_avx512.c); depthwise at
     * stride 2 on longer rows (conv_dwk_avx512.c); RGB stems at stride 2 (conv_stemx_avx512.c) */
    if (aotc_conv_dw3_avx512(p, x, w, bias, res, y) || aotc_conv_dwk_avx512(p, x, w, bias, res, y, 0) ||
        aotc_conv_stem_avx512(p, x, w, bias, res, y, 0))
        return;
    first_column_mask(mask, n, OW);
    /* the margins, and the padding the copies below leave alone, are 0 for every plane */
    /* (the copies fill all but the margins; a margin row they fill, the one past the last output
     * row at stride 2, they fill for every input plane) */
    if (s == 1 || (ne == OW && no == OW && IH >= 2 * OH)) {
        for (i = 0; i < (s == 1 ? 1 : 4); ++i) {
            float *const pi = planes + i * plane_len;
            const ptrdiff_t body = s == 1 ? in_plane : (ptrdiff_t)n;
            ptrdiff_t j;
            for (j = 0; j < (s == 1 ? IW : OW) + 1; ++j) pi[j] = 0.0f;
            for (j += body; j < plane_len; ++j) pi[j] = 0.0f;
        }
    } else {
        for (i = 0; i < 4 * plane_len; ++i) planes[i] = 0.0f;
    }
    if (s == 2) { /* tap (ky, kx) reads input (2 oy + ky - pt, 2 ox + kx - pl): parity plane, offset */
        int32_t ky, kx, slot = 3;
        for (ky = 0; ky < 3; ++ky) {
            for (kx = 0; kx < 3; ++kx) {
                const int32_t dy = ky - pt, dx = kx - pl, a = dy & 1, b = dx & 1;
                t[kx == masked ? ky : slot++] =
                    planes + (ptrdiff_t)(a * 2 + b) * plane_len + OW + 1 + (dy - a) / 2 * OW + (dx - b) / 2;
            }
        }
    }
    for (nb = 0; nb < p->batch; ++nb) {
        for (g = 0; g < p->group; ++g) {
            for (c = 0; c < cg; ++c) { /* one input plane at a time, into every output of the group */
                const float *xc = x + ((ptrdiff_t)nb * p->in_c + (ptrdiff_t)g * cg + c) * in_plane;
                const int last = c == cg - 1;
                if (s == 1) {
                    memcpy(planes + IW + 1, xc, (size_t)in_plane * sizeof(float));
                } else { /* input rows 2 i and 2 i + 1: row i of planes (0, *) and (1, *), for
                          * i up to OH (the row below the last output row, read when pt is 0) */
                    const int32_t rows = min_i32(IH, 2 * OH + 2);
                    const float *src = xc;
                    float *ev = planes + OW + 1;
                    int32_t iy;
                    for (iy = 0; iy + 1 < rows; iy += 2, src += 2 * IW, ev += OW) {
                        split_columns(src, ne, no, ev, ev + plane_len);
                        split_columns(src + IW, ne, no, ev + 2 * plane_len, ev + 3 * plane_len);
                    }
                    if (iy < rows) split_columns(src, ne, no, ev, ev + plane_len);
                }
                for (o = g * mg; o < (g + 1) * mg; ++o) {
                    const float *wo = w + ((ptrdiff_t)o * cg + c) * 9;
                    const float b = bias != NULL ? bias[o] : 0.0f;
                    float *yo = y + ((ptrdiff_t)nb * p->out_c + o) * n;
                    if (s == 1) {
                        flat3x3_s1(planes + IW + 1, IW, n, mask, wo, b, c > 0, last ? lo : -INFINITY,
                                   last ? hi : INFINITY, yo);
                    } else {
                        int32_t ky, kx, slot = 3;
                        for (ky = 0; ky < 3; ++ky) { /* the weights in the order of t */
                            for (kx = 0; kx < 3; ++kx) k[kx == masked ? ky : slot++] = wo[ky * 3 + kx];
                        }
                        flat3x3_s2(t, mask + (masked == 0 ? 0 : 1), n, k, b, c > 0, last ? lo : -INFINITY,
                                   last ? hi : INFINITY, yo);
                    }
                    if (last && !fuse) {
                        if (res != NULL) {
                            const float *ro = res + (yo - y);
                            for (i = 0; i < n; ++i) yo[i] += ro[i];
                        }
                        aotc_activate_f32(yo, n, p->act, p->act_lo, p->act_hi, p->act_alpha);
                    }
                }
            }
        }
    }
}
