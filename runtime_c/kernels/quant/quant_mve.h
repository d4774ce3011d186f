/* QLinearConv (patches, depthwise 3 x 3) and QGemm with Helium (MVE with floating point: a
 * Cortex-M55), in arm_mve.h intrinsics; -DAOTC_NO_MVE, or a core without it, keeps the DSP and plain
 * paths. Bit for bit the plain paths' outputs (onnxruntime's):
 *   - the sums by VMLADAVA.S8 (16 byte products added to a 32-bit scalar an instruction) on signed
 *     bytes: the patches hold x + AOTC_QOFFSET - 128 (int8 inputs: x itself; uint8: x - 128), so a
 *     sum is the plain path's (over x + AOTC_QOFFSET as unsigned bytes) less 128 times the weights'
 *     sum, which each block of 4 channels adds back; a partial last vector is predicated;
 *   - the requantisation 4 outputs at a time in Helium float: VCVT of the int32 sums (rounded as
 *     (float)acc is), VMUL by the scale, VCVTN (to nearest, ties to even: the FPSCR default mode's
 *     VCVTR of aotc_requant), then the clamp and the zero point in integers (rounding commutes
 *     with a clamp to whole numbers); a fused residual ADD by VFMA, as aotc_qadd_*'s fmaf.
 * Included by quant_impl.h once per element type: the helpers once (include guard), the kernels
 * per type (AOTC_Q). Each kernel returns 0 (nothing done) where it does not take the case. */
#ifndef AOTC_QUANT_MVE_H
#define AOTC_QUANT_MVE_H

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && !defined(AOTC_NO_MVE) && !defined(AOTC_NO_INTRINSICS)
#define AOTC_QUANT_MVE 1
#include <arm_mve.h>

/* x . w_j over k signed bytes for the 4 rows w_j, 16 products an instruction, the last partial
 * vector predicated (its lanes past k zero in the weights); x's bytes XORed with 0x80 first where
 * `flip` (uint8 read as int8 less 128), and then with `sums` each row's sum of weights too. */
static inline __attribute__((always_inline)) int32x4_t aotc_mve_dot4(const int8_t *x, int32_t k, const int8_t *w0,
                                                                     const int8_t *w1, const int8_t *w2,
                                                                     const int8_t *w3, int flip, int32x4_t *sums) {
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0, i = 0;
    int32x4_t r;
#define AOTC_MVE_DOT4_STEP(load)                                                                         \
    do {                                                                                                 \
        const int8x16_t v0 = load(w0 + i), v1 = load(w1 + i), v2 = load(w2 + i), v3 = load(w3 + i);     \
        if (flip) xv = veorq_s8(xv, vdupq_n_s8(-128));                                                   \
        a0 = vmladavaq_s8(a0, xv, v0);                                                                   \
        a1 = vmladavaq_s8(a1, xv, v1);                                                                   \
        a2 = vmladavaq_s8(a2, xv, v2);                                                                   \
        a3 = vmladavaq_s8(a3, xv, v3);                                                                   \
        if (sums) {                                                                                      \
            s0 = vaddvaq_s8(s0, v0), s1 = vaddvaq_s8(s1, v1), s2 = vaddvaq_s8(s2, v2);                   \
            s3 = vaddvaq_s8(s3, v3);                                                                     \
        }                                                                                                \
    } while (0)
#define AOTC_MVE_LOAD_Z(ptr) vldrbq_z_s8((ptr), pr)
    for (; i + 16 <= k; i += 16) {
        int8x16_t xv = vldrbq_s8(x + i);
        AOTC_MVE_DOT4_STEP(vldrbq_s8);
    }
    if (i < k) {
        const mve_pred16_t pr = vctp8q((uint32_t)(k - i));
        int8x16_t xv = vldrbq_z_s8(x + i, pr);
        AOTC_MVE_DOT4_STEP(AOTC_MVE_LOAD_Z);
    }
#undef AOTC_MVE_LOAD_Z
#undef AOTC_MVE_DOT4_STEP
    if (sums) {
        r = vdupq_n_s32(s0), r = vsetq_lane_s32(s1, r, 1), r = vsetq_lane_s32(s2, r, 2);
        *sums = vsetq_lane_s32(s3, r, 3);
    }
    r = vdupq_n_s32(a0), r = vsetq_lane_s32(a1, r, 1), r = vsetq_lane_s32(a2, r, 2);
    return vsetq_lane_s32(a3, r, 3);
}

/* round_half_even((float)acc * scale) clamped to [lo, hi] (hi winning), plus the zero point */
static inline __attribute__((always_inline)) int32x4_t aotc_mve_requant4(int32x4_t acc, float32x4_t scale, int32_t lo,
                                                                         int32_t hi, int32_t zero) {
    int32x4_t r = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc), scale));
    r = vminq_s32(vmaxq_s32(r, vdupq_n_s32(lo)), vdupq_n_s32(hi));
    return vaddq_n_s32(r, zero);
}

/* n bytes src[0], src[sw], src[2 sw], ... XORed with flip, to dst[0], dst[ld], dst[2 ld], ... (8 a
 * step: 16-bit offsets, 7 ld and 7 sw below 65536) */
static inline void aotc_mve_scatter_run(const uint8_t *src, int32_t sw, int32_t n, uint8_t flip, uint8_t *dst,
                                        int32_t ld) {
    const uint16x8_t lanes = vidupq_n_u16(0, 1), fl = vdupq_n_u16(flip);
    const uint16x8_t doff = vmulq_n_u16(lanes, (uint16_t)ld), soff = vmulq_n_u16(lanes, (uint16_t)sw);
    int32_t t = 0;
    if (sw == 1) {
        for (; t + 8 <= n; t += 8, src += 8, dst += 8 * ld) vstrbq_scatter_offset_u16(dst, doff, veorq_u16(vldrbq_u16(src), fl));
    } else {
        for (; t + 8 <= n; t += 8, src += 8 * sw, dst += 8 * ld) {
            vstrbq_scatter_offset_u16(dst, doff, veorq_u16(vldrbq_gather_offset_u16(src, soff), fl));
        }
    }
    if (t < n) {
        const mve_pred16_t pr = vctp16q((uint32_t)(n - t));
        const uint16x8_t v = sw == 1 ? vldrbq_z_u16(src, pr) : vldrbq_gather_offset_z_u16(src, soff, pr);
        vstrbq_scatter_offset_p_u16(dst, doff, veorq_u16(v, fl), pr);
    }
}

/* n bytes `value` to dst[0], dst[ld], dst[2 ld], ... */
static inline void aotc_mve_scatter_fill(uint8_t value, int32_t n, uint8_t *dst, int32_t ld) {
    const uint16x8_t doff = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)ld), v = vdupq_n_u16(value);
    int32_t t;
    for (t = 0; t < n; t += 8, dst += 8 * ld) vstrbq_scatter_offset_p_u16(dst, doff, v, vctp16q((uint32_t)(n - t)));
}

/* The depthwise 3 x 3 path's weights as its interleaved rows hold the taps: lane 3 kw + kh takes
 * weight kh kw (lanes 9 .. 15 unused); and the sums a band of its output rows takes. */
static const uint8_t AOTC_MVE_DW_ORDER[16] = {0, 3, 6, 1, 4, 7, 2, 5, 8, 0, 0, 0, 0, 0, 0, 0};
#define AOTC_MVE_DW_SUMS 256
#define AOTC_MVE_DW_TAB 256 /* in-image taps of a plane the index tables take */

/* v's lanes moved up 3 (VSHLC of the whole vector by 24 bits), zeros below */
static inline int8x16_t aotc_mve_up3(int8x16_t v) {
    uint32_t carry = 0;
    return vshlcq_s8(v, &carry, 24);
}

/* The depthwise 3 x 3 path's sums (quant_mve.h's qconv_depthwise_mve): n outputs 3 sw bytes apart
 * in the interleaved rows at P (total bytes), a 16-byte load for 3 (stride 1) or 2 of them, each
 * summed against v0, v1 (and at stride 1 v2: the weights 3 sw lanes up each), less wz times the taps'
 * sums (o0 .. o2: ones where the weights are; wz a constant 0 where the weights have no zero point),
 * into g[0 .. n) (and up to 2 past it). The loads wholly inside P first, then the predicated rest. */
static inline __attribute__((always_inline)) void aotc_mve_dw3_sums(const uint8_t *P, int32_t total, int32_t n,
                                                                    int32_t sw, int8x16_t v0, int8x16_t v1,
                                                                    int8x16_t v2, int32_t wz, int8x16_t o0,
                                                                    int8x16_t o1, int8x16_t o2, int32_t *g) {
    const int32_t per = sw == 1 ? 3 : 2, step = 3 * sw * per;
    const int32_t loads = (n + per - 1) / per, whole = total >= 16 ? (total - 16) / step + 1 : 0;
    const int8_t *s = (const int8_t *)P;
    int32_t i;
#define AOTC_MVE_DW3_STEP(xv)                                                                            \
    do {                                                                                                 \
        g[0] = vmladavq_s8(xv, v0), g[1] = vmladavq_s8(xv, v1);                                          \
        if (sw == 1) g[2] = vmladavq_s8(xv, v2);                                                         \
        if (wz != 0) {                                                                                   \
            g[0] -= wz * vmladavq_s8(xv, o0), g[1] -= wz * vmladavq_s8(xv, o1);                          \
            if (sw == 1) g[2] -= wz * vmladavq_s8(xv, o2);                                               \
        }                                                                                                \
        g += per;                                                                                        \
    } while (0)
    for (i = 0; i < (loads < whole ? loads : whole); ++i, s += step) AOTC_MVE_DW3_STEP(vldrbq_s8(s));
    for (; i < loads; ++i, s += step) {
        AOTC_MVE_DW3_STEP(vldrbq_z_s8(s, vctp8q((uint32_t)(total - (int32_t)(s - (const int8_t *)P)))));
    }
#undef AOTC_MVE_DW3_STEP
}

/* the sum of k signed bytes */
static inline int32_t aotc_mve_sum8(const int8_t *w, int32_t k) {
    int32_t s = 0, i = 0;
    for (; i + 16 <= k; i += 16) s = vaddvaq_s8(s, vldrbq_s8(w + i));
    if (i < k) s = vaddvaq_s8(s, vldrbq_z_s8(w + i, vctp8q((uint32_t)(k - i))));
    return s;
}

#else
#define AOTC_QUANT_MVE 0
#endif
#endif /* AOTC_QUANT_MVE_H */

#if AOTC_QUANT_MVE
/* ---- the kernels over QT -------------------------------------------------------------------------- */

/* uint8 values as int8 less 128: their bytes XORed with 0x80 (int8 values stay as they are) */
#define AOTC_MVE_FLIP (QT_MIN < 0 ? 0 : 0x80)

/* 4 elements of QT at p + offs[j] (lanes off in pr: 0) as int32 */
static inline int32x4_t AOTC_Q(mve_gather4)(const QT *p, uint32x4_t offs, mve_pred16_t pr) {
#if QT_MIN < 0
    return vldrbq_gather_offset_z_s32((const int8_t *)p, offs, pr);
#else
    return vreinterpretq_s32_u32(vldrbq_gather_offset_z_u32((const uint8_t *)p, offs, pr));
#endif
}

/* The fused residual ADD (aotc_qconv_patches_add_*) of 4 conv outputs v (requantised, with their zero
 * point) and residual elements rv: AOTC_Q(residual_one) 4 at a time, its fmaf by VFMA. */
static inline int32x4_t AOTC_Q(mve_residual4)(const aotc_qresidual_params *r, int32x4_t v, int32x4_t rv) {
    const aotc_qbinary_params *a = &r->add;
    const float32x4_t fa = vcvtq_f32_s32(r->conv_a ? v : rv), fb = vcvtq_f32_s32(r->conv_a ? rv : v);
    const int32_t lo = (int32_t)(a->y_lo + (float)a->y_zero), hi = (int32_t)(a->y_hi + (float)a->y_zero);
    const int32x4_t q = vcvtnq_s32_f32(vfmaq_n_f32(vfmaq_n_f32(vdupq_n_f32(a->bias), fb, a->b_mult), fa, a->a_mult));
    return vminq_s32(vmaxq_s32(q, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* The patches of output positions [p0, p0 + np) of one group, a position's k rows in a row of k
 * signed bytes (patch[t k + r]: x + AOTC_QOFFSET - 128, the padding's x_zero likewise): each patch
 * row's runs (one per output row, of one input row at the conv's stride) scattered down the
 * positions, 8 a step. A pointwise conv's patch row is one run of its input plane. */
static void AOTC_Q(mve_patch_block)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t k, int32_t p0,
                                    int32_t np, uint8_t *AOTC_RESTRICT patch) {
    const uint8_t flip = AOTC_MVE_FLIP, zero = (uint8_t)((uint8_t)p->x_zero ^ flip);
    const int32_t ow_n = p->out_w, sw = p->stride_w, plane_in = p->in_h * p->in_w;
    int32_t r, t;
    if (p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && sw == 1 && p->pad_top == 0 && p->pad_left == 0 &&
        p->in_w == ow_n && p->in_h == p->out_h) {
        for (r = 0; r < k; ++r) aotc_mve_scatter_run((const uint8_t *)(xg + (int64_t)r * plane_in + p0), 1, np, flip, patch + r, k);
        return;
    }
    for (r = 0; r < k; ++r) {
        int32_t kh, start, o0, o1;
        const QT *plane = AOTC_Q(qconv_row_cols)(p, xg, r, &kh, &start, &o0, &o1);
        for (t = 0; t < np;) { /* one output row's run of positions at a time: columns [first, last) */
            const int32_t pos = p0 + t, oh = pos / ow_n, first = pos % ow_n;
            const int32_t last = first + (np - t) < ow_n ? first + (np - t) : ow_n;
            const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
            uint8_t *dst = patch + (int64_t)t * k + r; /* column first's */
            if (ih < 0 || ih >= p->in_h) {
                aotc_mve_scatter_fill(zero, last - first, dst, k);
            } else { /* the columns [a, b) inside the image */
                int32_t a = first > o0 ? first : o0, b = last < o1 ? last : o1;
                a = a < last ? a : last;
                b = b > a ? b : a;
                aotc_mve_scatter_fill(zero, a - first, dst, k);
                aotc_mve_scatter_run((const uint8_t *)(plane + (int64_t)ih * p->in_w + start + (int64_t)a * sw), sw, b - a,
                                     flip, dst + (int64_t)(a - first) * k, k);
                aotc_mve_scatter_fill(zero, last - b, dst + (int64_t)(b - first) * k, k);
            }
            t += last - first;
        }
    }
}

/* QLinearConv on patches: blocks of the positions the scratch holds (tile rounded up to whole lanes,
 * a byte a patch row), 4 output channels x 1 position at a time (aotc_mve_dot4), requantised as a
 * vector and scattered to the 4 channels' planes (the lanes of a last partial block predicated off). */
__attribute__((noinline)) static int AOTC_Q(qconv_patches_mve)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                                     const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch,
                                     const aotc_qresidual_params *rp, const QT *res) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t kp = (k + 3) / 4 * 4, plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const int32_t width = (tile + AOTC_QCONV_LANES - 1) / AOTC_QCONV_LANES * AOTC_QCONV_LANES;
    const int32_t block = width * k <= 65536 ? width : 65536 / k; /* 16-bit scatter offsets */
    const int32_t lo = (int32_t)p->y_lo, hi = (int32_t)p->y_hi, zp = p->x_zero + AOTC_QOFFSET;
    const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)plane_out); /* the 4 channels' planes */
    int32_t sums[AOTC_QCONV_PATCH_TILE];
    int32_t n, g, p0, oc, t;
    if (tile <= 0 || width > AOTC_QCONV_PATCH_TILE || block < 1 || AOTC_QCONV_PACKED(p)) return 0;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            for (p0 = 0; p0 < plane_out; p0 += block) {
                const int32_t np = plane_out - p0 < block ? plane_out - p0 : block;
                AOTC_Q(mve_patch_block)(p, xg, k, p0, np, scratch);
                if (p->w_zero_any) { /* each patch's sum as the plain path's: x + AOTC_QOFFSET, zp past k */
                    for (t = 0; t < np; ++t) sums[t] = aotc_mve_sum8((const int8_t *)scratch + (int64_t)t * k, k) + 128 * k + (kp - k) * zp;
                }
                for (oc = g * mg; oc < (g + 1) * mg; oc += 4) {
                    const int32_t nb = (g + 1) * mg - oc < 4 ? (g + 1) * mg - oc : 4;
                    const mve_pred16_t pr = vctp32q((uint32_t)nb);
                    const int8_t *w0 = w + (int64_t)oc * kp, *w1 = nb > 1 ? w0 + kp : w0;
                    const int8_t *w2 = nb > 2 ? w0 + 2 * kp : w0, *w3 = nb > 3 ? w0 + 3 * kp : w0;
                    const int32x4_t wsum = vsetq_lane_s32(aotc_mve_sum8(w3, k), vsetq_lane_s32(aotc_mve_sum8(w2, k),
                                           vsetq_lane_s32(aotc_mve_sum8(w1, k), vdupq_n_s32(aotc_mve_sum8(w0, k)), 1), 2), 3);
                    const int32x4_t base = vaddq_s32(vldrwq_z_s32(p->bias + oc, pr), vshlq_n_s32(wsum, 7));
                    const int32x4_t wz = p->w_zero_any ? vldrwq_z_s32(p->w_zero + oc, pr) : vdupq_n_s32(0);
                    const float32x4_t sc = vldrwq_z_f32(p->scale + oc, pr);
                    const int64_t at = ((int64_t)n * p->out_c + oc) * plane_out + p0;
                    for (t = 0; t < np; ++t) {
                        int32x4_t acc = vaddq_s32(aotc_mve_dot4((const int8_t *)scratch + (int64_t)t * k, k, w0, w1, w2, w3, 0, NULL), base);
                        if (p->w_zero_any) acc = vsubq_s32(acc, vmulq_n_s32(wz, sums[t]));
                        acc = aotc_mve_requant4(acc, sc, lo, hi, p->y_zero);
                        if (rp != NULL) acc = AOTC_Q(mve_residual4)(rp, acc, AOTC_Q(mve_gather4)(res + at + t, offs, pr));
                        vstrbq_scatter_offset_p_s32((int8_t *)(y + at + t), offs, acc, pr);
                    }
                }
            }
        }
    }
    return 1;
}

/* The depthwise 3 x 3 path's band of output rows [oh0, oh0 + nr): row r's 3 tap rows interleaved at
 * P + r 3 pw (byte 3 (pad_left + j) + kh: input column j of tap row kh; the padding columns hold
 * x_zero already), each tap row's in-image columns scattered in 8 at a time (x_zero for a tap row
 * outside the image). */
static void AOTC_Q(mve_dw3_band)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT plane, int32_t oh0, int32_t nr,
                                 int32_t pw, uint8_t *AOTC_RESTRICT P) {
    const int32_t sh = p->stride_h, row3 = 3 * pw, lead = p->pad_left < pw ? p->pad_left : pw, in_h = p->in_h;
    const int32_t body = p->in_w < pw - lead ? p->in_w : pw - lead, in_w = p->in_w;
    const uint8_t flip = AOTC_MVE_FLIP, zb = (uint8_t)((uint8_t)p->x_zero ^ flip);
    const uint16x8_t doff = vmulq_n_u16(vidupq_n_u16(0, 1), 3), fl = vdupq_n_u16(flip), zv = vdupq_n_u16(zb);
    int32_t kh, r, j;
    for (kh = 0; kh < 3; ++kh) {
        int32_t ih = oh0 * sh - p->pad_top + kh;
        uint8_t *dst = P + 3 * lead + kh;
        for (r = 0; r < nr; ++r, ih += sh, dst += row3) {
            if ((uint32_t)ih < (uint32_t)in_h) {
                const uint8_t *src = (const uint8_t *)(plane + (int64_t)ih * in_w);
                for (j = 0; j < body; j += 8) {
                    const mve_pred16_t pr = vctp16q((uint32_t)(body - j));
                    vstrbq_scatter_offset_p_u16(dst + 3 * j, doff, veorq_u16(vldrbq_z_u16(src + j, pr), fl), pr);
                }
            } else {
                for (j = 0; j < body; j += 8) vstrbq_scatter_offset_p_u16(dst + 3 * j, doff, zv, vctp16q((uint32_t)(body - j)));
            }
        }
    }
}

/* Depthwise QLinearConv, 3 x 3 taps, dilation 1, horizontal stride 1 or 2, in bands of output rows:
 * each output row's 3 input rows interleaved in scratch a column at a time (row r of the band at
 * r 3 pw, its byte 3 j + kh: column j of tap row kh, the padding x_zero; pw the padded row's columns
 * in whole strides), so an output's 9 taps are 9 consecutive bytes and the band's outputs lie 3 sw
 * bytes apart from one row to the next, with pw / sw - out_w outputs of padding between rows that
 * are summed and not stored. A 16-byte load holds the taps of 3 outputs (stride 1; 2 at stride 2),
 * each summed by one VMLADAV against the weights moved up to its offset (aotc_mve_dw3_sums). The
 * sums start at bias + (f - xz)(sum w - 9 wz), f the 128 the int8 bytes lack (uint8 inputs), less wz
 * times the taps' sum. A band takes as many rows as the scratch holds (the 4-channel DSP path's,
 * where the plan gave it) and AOTC_MVE_DW_SUMS sums. Where one band is the whole plane and its
 * in-image taps number at most AOTC_MVE_DW_TAB, index tables made once a call take the per-row
 * work away: each tap row's inputs of the whole plane gathered and scattered 8 at a time, and the
 * sums requantised 4 at a time and scattered to their outputs (the padding's predicated off). */
__attribute__((noinline)) static int AOTC_Q(qconv_depthwise_mve)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                                                 const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y,
                                                                 QT *AOTC_RESTRICT scratch) {
    const int32_t sw = p->stride_w, sh = p->stride_h, ow_n = p->out_w, oh_n = p->out_h, in_w = p->in_w;
    const int32_t pw = ((ow_n - 1) * sw + 3 + sw - 1) / sw * sw, vpr = pw / sw, row3 = 3 * pw;
    const int32_t plane_in = p->in_h * in_w, plane_out = oh_n * ow_n, xz = p->x_zero;
    const int32_t lead = p->pad_left < pw ? p->pad_left : pw, body = in_w < pw - lead ? in_w : pw - lead;
    const int32_t lo = (int32_t)p->y_lo, hi = (int32_t)p->y_hi, f = QT_MIN < 0 ? 0 : 128;
    const uint8_t zb = (uint8_t)((uint8_t)xz ^ AOTC_MVE_FLIP);
    const uint16x8_t fl = vdupq_n_u16(AOTC_MVE_FLIP);
    uint8_t *P = (uint8_t *)scratch;
    int32_t g[AOTC_MVE_DW_SUMS + 3];
    uint16_t tin[AOTC_MVE_DW_TAB], tout[AOTC_MVE_DW_TAB], tq[AOTC_MVE_DW_SUMS + 3];
    int32_t q_lo[3], q_hi[3];
    int32_t avail = 3 * AOTC_QCONV_DW_ROW(ow_n, 3, sw, 1), rows, whole, n, c, oh0, r, i, l, kh;
    if (p->dw4 > 0 && AOTC_QCONV_DW4_SCRATCH(p, p->dw4) > avail) avail = AOTC_QCONV_DW4_SCRATCH(p, p->dw4);
    rows = avail / row3 < AOTC_MVE_DW_SUMS / vpr ? avail / row3 : AOTC_MVE_DW_SUMS / vpr;
    rows = rows < oh_n ? rows : oh_n;
    if (p->k_h != 3 || p->k_w != 3 || p->dil_h != 1 || p->dil_w != 1 || (sw != 1 && sw != 2) || rows < 1) return 0;
    whole = rows == oh_n && oh_n * body <= AOTC_MVE_DW_TAB && (int64_t)(oh_n - 1) * sh * in_w + body <= 65535 &&
            (oh_n - 1) * row3 + 3 * (lead + body) <= 65535 && plane_out < 65535;
    for (i = 0; i < rows * row3; ++i) P[i] = zb; /* the columns no input row reaches keep the padding */
    if (whole) { /* the tables: tap rows' inputs (tin) to their bytes in P (tout); sums to outputs (tq) */
        for (r = 0; r < oh_n; ++r) {
            for (l = 0; l < body; ++l) {
                tin[r * body + l] = (uint16_t)(r * sh * in_w + l), tout[r * body + l] = (uint16_t)(r * row3 + 3 * (lead + l));
            }
            for (l = 0; l < vpr; ++l) tq[r * vpr + l] = (uint16_t)(l < ow_n ? r * ow_n + l : 0xFFFF);
        }
        for (i = oh_n * vpr; i < oh_n * vpr + 3; ++i) tq[i] = 0xFFFF;
        for (kh = 0; kh < 3; ++kh) { /* tap row kh of output row r is input row r sh - pad_top + kh */
            const int32_t d = p->pad_top - kh, r_lo = d > 0 ? (d + sh - 1) / sh : 0, last = p->in_h - 1 + d;
            const int32_t r_hi = last < 0 ? 0 : last / sh + 1 < oh_n ? last / sh + 1 : oh_n;
            q_lo[kh] = r_lo * body, q_hi[kh] = r_hi > r_lo ? r_hi * body : q_lo[kh];
        }
    }
    for (n = 0; n < p->batch; ++n) {
        for (c = 0; c < p->out_c; ++c) {
            const QT *plane = x + ((int64_t)n * p->in_c + c) * plane_in;
            QT *yc = y + ((int64_t)n * p->out_c + c) * plane_out;
            const int8_t *wc = w + (int64_t)c * 9;
            const int32_t wz = p->w_zero[c];
            const float32x4_t sc = vdupq_n_f32(p->scale[c]);
            const int8x16_t v0 = vldrbq_gather_offset_z_s8(wc, vldrbq_u8(AOTC_MVE_DW_ORDER), vctp8q(9));
            const int8x16_t v1 = sw == 1 ? aotc_mve_up3(v0) : aotc_mve_up3(aotc_mve_up3(v0)), v2 = aotc_mve_up3(v1);
            int32_t wsum = 0, init;
            for (i = 0; i < 9; ++i) wsum += wc[i];
            init = p->bias[c] + (f - xz) * (wsum - 9 * wz);
            for (oh0 = 0; oh0 < oh_n; oh0 += rows) {
                const int32_t nr = oh_n - oh0 < rows ? oh_n - oh0 : rows;
                if (whole) {
                    for (kh = 0; kh < 3; ++kh) {
                        const int32_t first = q_lo[kh] / body * sh - p->pad_top + kh; /* its input row */
                        const uint8_t *src = (const uint8_t *)(plane + (int64_t)first * in_w);
                        const uint16_t sub = (uint16_t)(q_lo[kh] / body * sh * in_w);
                        int32_t q;
                        for (q = q_lo[kh]; q < q_hi[kh]; q += 8) {
                            const mve_pred16_t pr = vctp16q((uint32_t)(q_hi[kh] - q));
                            const uint16x8_t oi = vsubq_n_u16(vldrhq_z_u16(tin + q, pr), sub);
                            const uint16x8_t v = veorq_u16(vldrbq_gather_offset_z_u16(src, oi, pr), fl);
                            vstrbq_scatter_offset_p_u16(P + kh, vldrhq_z_u16(tout + q, pr), v, pr);
                        }
                    }
                } else {
                    AOTC_Q(mve_dw3_band)(p, plane, oh0, nr, pw, P);
                }
                if (wz != 0) { /* (each case its own loop: the ones' vectors live only where they are used) */
                    const int8x16_t o0 = vdupq_m_n_s8(vdupq_n_s8(0), 1, vctp8q(9)); /* lanes 0 .. 8: an output's taps */
                    const int8x16_t o1 = sw == 1 ? aotc_mve_up3(o0) : aotc_mve_up3(aotc_mve_up3(o0)), o2 = aotc_mve_up3(o1);
                    if (sw == 1) aotc_mve_dw3_sums(P, nr * row3, nr * vpr, 1, v0, v1, v2, wz, o0, o1, o2, g);
                    else aotc_mve_dw3_sums(P, nr * row3, nr * vpr, 2, v0, v1, v2, wz, o0, o1, o2, g);
                } else if (sw == 1) {
                    aotc_mve_dw3_sums(P, nr * row3, nr * vpr, 1, v0, v1, v2, 0, v0, v0, v0, g);
                } else {
                    aotc_mve_dw3_sums(P, nr * row3, nr * vpr, 2, v0, v1, v2, 0, v0, v0, v0, g);
                }
                if (whole) { /* 4 sums at a time to their outputs (tq), the padding's off */
                    for (i = 0; i < nr * vpr; i += 4) {
                        const uint32x4_t to = vldrhq_u32(tq + i);
                        const mve_pred16_t pr = vcmpneq_u32(to, vdupq_n_u32(0xFFFFu));
                        const int32x4_t a = vaddq_n_s32(vldrwq_z_s32(g + i, pr), init);
                        vstrbq_scatter_offset_p_s32((int8_t *)yc, to, aotc_mve_requant4(a, sc, lo, hi, p->y_zero), pr);
                    }
                    continue;
                }
                for (r = 0; r < nr; ++r) { /* requantised a row at a time, the sums past out_w left */
                    int8_t *yr = (int8_t *)(yc + (int64_t)(oh0 + r) * ow_n);
                    for (l = 0; l < ow_n; l += 4) {
                        const mve_pred16_t pr = vctp32q((uint32_t)(ow_n - l));
                        const int32x4_t a = vaddq_n_s32(vldrwq_z_s32(g + r * vpr + l, pr), init);
                        vstrbq_p_s32(yr + l, aotc_mve_requant4(a, sc, lo, hi, p->y_zero), pr);
                    }
                }
            }
        }
    }
    return 1;
}

/* QGemm: 4 columns at a time (aotc_mve_dot4 on a row of A and 4 rows of B^T; uint8 A as int8 less
 * 128, and 128 times the rows' sums added back), requantised as a vector, the last partial block's
 * lanes predicated off. */
static int AOTC_Q(qgemm_mve)(const aotc_qgemm_params *p, const QT *AOTC_RESTRICT a, const int8_t *AOTC_RESTRICT bt,
                             QT *AOTC_RESTRICT y) {
    const int32_t k = p->k, nn = p->n, lo = (int32_t)p->y_lo, hi = (int32_t)p->y_hi;
    int32_t m, c, i;
    if (p->il4) return 0;
    for (m = 0; m < p->m; ++m) {
        const QT *ar = a + (int64_t)m * k;
        int32_t row_sum = 0;
        if (p->b_zero) {
            for (i = 0; i < k; ++i) row_sum += ar[i];
        }
        for (c = 0; c < nn; c += 4) {
            const int32_t nb = nn - c < 4 ? nn - c : 4;
            const mve_pred16_t pr = vctp32q((uint32_t)nb);
            const int8_t *b0 = bt + (int64_t)c * k, *b1 = nb > 1 ? b0 + k : b0;
            const int8_t *b2 = nb > 2 ? b0 + 2 * k : b0, *b3 = nb > 3 ? b0 + 3 * k : b0;
            int32x4_t bsum = vdupq_n_s32(0), acc;
            const float32x4_t sc = p->per_column ? vldrwq_z_f32(p->scale + c, pr) : vdupq_n_f32(p->scale[0]);
            acc = aotc_mve_dot4((const int8_t *)ar, k, b0, b1, b2, b3, AOTC_MVE_FLIP, AOTC_MVE_FLIP ? &bsum : NULL);
            acc = vaddq_s32(vaddq_s32(acc, vshlq_n_s32(bsum, 7)), vldrwq_z_s32(p->bias + c, pr));
            if (p->b_zero) acc = vsubq_s32(acc, vmulq_n_s32(vldrwq_z_s32(p->b_zero + c, pr), row_sum));
            vstrbq_p_s32((int8_t *)(y + (int64_t)m * nn + c), aotc_mve_requant4(acc, sc, lo, hi, p->y_zero), pr);
        }
    }
    return 1;
}

#undef AOTC_MVE_FLIP
#endif /* AOTC_QUANT_MVE */
