/* TFLite's CONV_2D (alone and with its residual ADD fused) and DEPTHWISE_CONV_2D, int8, on
 * weights the compiler packed (aotc_tflite_int8.h, "The host's packed kernels"): the host's and the Linux
 * targets' path. With AVX-512 VNNI (a -march that has it) the sums are byte dot products by vpdpbusd (CONV_2D:
 * the patch bytes made unsigned by x ^ 0x80, which the folded bias undoes) and 16-bit ones by
 * vpdpwssd (DEPTHWISE_CONV_2D; with VBMI too, kernels up to 8 taps wide by vpdpbusd on a kernel row's quads of
 * taps gathered by vpermb, 16 quads at most), requantised 16 outputs at a time in 64-bit lanes, narrowed 64 at a
 * time (tfl_pk_pack4); elsewhere the same sums in plain C.
 * Either way bit for bit TFLite's (tflite_int8_ref.c): the int32 sums are the same modulo 2^32, and the
 * requantisation is TFLite's own, its two roundings merged into one exact 64-bit shift (tflite_int8_x86.h says
 * how), the single rounding (acc m + 2^(30 - s)) >> (31 - s).
 * (SaturatingRoundingDoublingHighMul saturates only for m = INT32_MIN, which quantize_multiplier never gives:
 * the compiler takes these kernels only where no multiplier is INT32_MIN, aot/kernels/tflite_int8.py.) */
#include "tflite_int8_packed.h"
#include "tflite_int8_x86.h" /* the requantisation in AVX-512 lanes */
#if TFL_PK_AVX2
#include "avx2_lanes.h" /* the 4 x 16 register block (tfl_pk_avx2_lanes16) */
#endif

/* ---- The patches: bytes x ^ 0x80 (x + 128, unsigned), x_zero ^ 0x80 under the padding, 0 past k ---------- */

/* n bytes of v */
TFL_PK_INLINE void tfl_pk_fill(uint8_t *d, uint8_t v, int32_t n) {
    const uint64_t w = v * 0x0101010101010101u;
    for (; n >= 8; n -= 8, d += 8) memcpy(d, &w, 8);
    for (; n > 0; --n) *d++ = v;
}

/* the patch of output position (ox, oy, batch b) into row (kp bytes) */
static void tfl_pk_patch(const aotc_tfl_conv_params *p, const int8_t *x, int32_t ox, int32_t oy, int32_t b,
                         int32_t kp, uint8_t *row) {
    const int32_t c = p->c, kw = p->kw, iy0 = oy * p->sh - p->pad_top, ix0 = ox * p->sw - p->pad_left;
    const uint8_t zx = (uint8_t)((uint8_t)p->x_zero ^ 0x80u);
    const int row_in = p->dw == 1 && ix0 >= 0 && ix0 + kw <= p->w;
    int32_t ky, kx;
    for (ky = 0; ky < p->kh; ++ky, row += kw * c) {
        const int32_t iy = iy0 + ky * p->dh;
        const int8_t *xr = x + ((int64_t)b * p->h + iy) * p->w * c;
        if (iy < 0 || iy >= p->h) {
            tfl_pk_fill(row, zx, kw * c);
        } else if (row_in) {
            tfl_pk_xor_copy(row, xr + (int64_t)ix0 * c, kw * c);
        } else {
            for (kx = 0; kx < kw; ++kx) {
                const int32_t ix = ix0 + kx * p->dw;
                if (ix < 0 || ix >= p->w) tfl_pk_fill(row + kx * c, zx, c);
                else tfl_pk_xor_copy(row + kx * c, xr + (int64_t)ix * c, c);
            }
        }
    }
    if (kp > p->kh * kw * c) tfl_pk_fill(row, 0, kp - p->kh * kw * c);
}

/* rows [r0, r1) of the span (tfl_pk_span_bytes; row r of batch r / ph): the rows and columns the windows read
 * from (-pad_top, -pad_left), unsigned, x_zero ^ 0x80 outside x */
static void tfl_pk_span_rows(const aotc_tfl_conv_params *p, const int8_t *x, uint8_t *span, int32_t r0, int32_t r1) {
    const int32_t ph = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1, pw = (p->ow - 1) * p->sw + p->kw, c = p->c;
    const int32_t x0 = p->pad_left > 0 ? p->pad_left : 0, x1 = p->pad_left + p->w < pw ? p->pad_left + p->w : pw;
    const uint8_t zx = (uint8_t)((uint8_t)p->x_zero ^ 0x80u);
    int32_t r;
    for (r = r0; r < r1; ++r) {
        const int32_t b = r / ph, iy = r % ph - p->pad_top;
        uint8_t *row = span + (int64_t)r * pw * c;
        if (iy < 0 || iy >= p->h || x1 <= x0) {
            tfl_pk_fill(row, zx, pw * c);
            continue;
        }
        tfl_pk_fill(row, zx, x0 * c);
        tfl_pk_xor_copy(row + (int64_t)x0 * c, x + (((int64_t)b * p->h + iy) * p->w + x0 - p->pad_left) * c,
                        (x1 - x0) * c);
        tfl_pk_fill(row + (int64_t)x1 * c, zx, (pw - x1) * c);
    }
}

/* the patches of n positions from position p0 into the tile (kp bytes each) */
static void tfl_pk_patches(const aotc_tfl_conv_params *p, const int8_t *x, int32_t p0, int32_t n, int32_t kp,
                           uint8_t *tile) {
    int32_t t, ox = p0 % p->ow, oy = (p0 / p->ow) % p->oh, b = p0 / (p->ow * p->oh);
    for (t = 0; t < n; ++t, tile += kp) {
        tfl_pk_patch(p, x, ox, oy, b, kp, tile);
        if (++ox == p->ow) {
            ox = 0;
            if (++oy == p->oh) oy = 0, ++b;
        }
    }
}

/* ---- The output stage: requantisation, the clamp, a fused residual ADD ---------------------------------- */

#if TFL_PK_VNNI
/* one block's requantisation (tfl_x86_rq) as the output stage takes it (issue 64: the stage was a quarter of an int8
 * MobileNetV2's time): where no lane shifts left, no first shift (shl 0); where every lane's right shift e is at most
 * 23, the output zero point z folded into the rounding terms (zfold), as floor((t + z 2^(31 + e)) / 2^(31 + e)) =
 * floor(t / 2^(31 + e)) + z, |t| <= 2^62 + 2^54 + 2^31 and |z 2^(31 + e)| <= 2^61: no overflow (the low half wraps as
 * the separate add of z did) */
typedef struct {
    tfl_x86_rq q;
    __m512i sh_o1; /* odd1: the odd lanes' shift less 32 */
    int shl, zfold, odd1;
    int u32;                                 /* tfl_pk_requant_u32 takes it (tfl_pk_rq_u32) */
    __m512i u_m, u_mo, u_ce, u_co, u_t, u_sh; /* its constants */
} tfl_pk_rq;

/* (odd1, where every lane that has a multiplier shifts right, e >= 1: the odd lanes' result, floor(t / 2^(31 + e)),
 * as the high half of t >> (e - 1), one arithmetic shift where it took a shift down and one up into place) */
TFL_PK_INLINE tfl_pk_rq tfl_pk_rq_init(__m512i mult, __m512i shift, int32_t y_zero) {
    const __m512i zero = _mm512_setzero_si512();
    tfl_pk_rq r;
    r.q = tfl_x86_rq_init(mult, shift);
    r.sh_o1 = _mm512_sub_epi64(r.q.sh_o, _mm512_set1_epi64(32));
    r.odd1 = _mm512_mask_cmpge_epi32_mask(_mm512_test_epi32_mask(mult, mult), shift, zero) == 0;
    r.shl = _mm512_cmpgt_epi32_mask(shift, zero) != 0;
    r.zfold = _mm512_cmplt_epi32_mask(shift, _mm512_set1_epi32(-23)) == 0;
    r.u32 = 0;
    if (r.zfold) {
        const __m512i z = _mm512_set1_epi64(y_zero);
        r.q.k_e = _mm512_add_epi64(r.q.k_e, _mm512_sllv_epi64(z, r.q.sh_e));
        r.q.k_o = _mm512_add_epi64(r.q.k_o, _mm512_sllv_epi64(z, r.q.sh_o));
    }
    return r;
}

/* The requantisation in 10 operations, not 12 (issue 64: the output stage was a fifth of an int8 ResNet-50's and
 * MobileNetV2's time), where every lane that has a multiplier has m >= 2^30 and a right shift e in [1, 23], and the
 * sums a are known to be below 2^30 in magnitude (small). With the zero point z folded, the result is floor(N / 2^(31
 * + e)), N = a m + C - [a m < -2^30] 2^31, C = 2^30 + 2^(30 + e) + z 2^(31 + e), and [a m < -2^30] is [a < t], t = 0
 * where m > 2^30, -1 where m = 2^30. The product of 2 a (no overflow) and m is 2 a m, so the high half of 2 a m + 2 C
 * is floor((a m + C) / 2^31), and floor(N / 2^31) that less [a < t]: it fits an int32 (|a m / 2^31| < 2^30 and
 * |C / 2^31| <= 2^(e - 1) + 128 2^e <= 2^22 + 2^30), and floor(N / 2^(31 + e)) is its arithmetic shift by e. The high halves of the even and odd
 * lanes' 64-bit sums meet in one permute (no blend, no 64-bit shifts). */
TFL_PK_INLINE void tfl_pk_rq_u32(tfl_pk_rq *r, __m512i mult, __m512i shift, int32_t y_zero, int small) {
    const __m512i e = _mm512_sub_epi32(_mm512_setzero_si512(), shift), two31 = _mm512_set1_epi64((int64_t)1 << 31);
    const __m512i m30 = _mm512_set1_epi32(1 << 30);
    const __mmask16 live = _mm512_test_epi32_mask(mult, mult);
    const __m512i ee = _mm512_and_si512(e, _mm512_set1_epi64(0xFFFFFFFF)), eo = _mm512_srli_epi64(e, 32);
    const __m512i z = _mm512_set1_epi64(y_zero), c32 = _mm512_set1_epi64(32);
    r->u32 = small && _mm512_mask_cmpge_epi32_mask(live, mult, m30) == live &&
             _mm512_mask_cmpge_epi32_mask(live, e, _mm512_set1_epi32(1)) == live &&
             _mm512_mask_cmple_epi32_mask(live, e, _mm512_set1_epi32(23)) == live;
    if (!r->u32) return;
    r->u_m = mult, r->u_mo = _mm512_srli_epi64(mult, 32), r->u_sh = e;
    r->u_t = _mm512_maskz_set1_epi32(_mm512_cmpeq_epi32_mask(mult, m30), -1);
    r->u_ce = _mm512_add_epi64(_mm512_add_epi64(two31, _mm512_sllv_epi64(two31, ee)),
                               _mm512_sllv_epi64(z, _mm512_add_epi64(ee, c32)));
    r->u_co = _mm512_add_epi64(_mm512_add_epi64(two31, _mm512_sllv_epi64(two31, eo)),
                               _mm512_sllv_epi64(z, _mm512_add_epi64(eo, c32)));
}

/* 16 sums requantised with the zero point where rq->u32 (tfl_pk_rq_u32), its constants passed in (registers) */
TFL_PK_INLINE __m512i tfl_pk_requant_u32(__m512i a, __m512i m, __m512i mo, __m512i ce, __m512i co, __m512i t,
                                         __m512i sh) {
    const __m512i hi = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
    const __m512i a2 = _mm512_add_epi32(a, a);
    const __m512i we = _mm512_add_epi64(_mm512_mul_epi32(a2, m), ce);
    const __m512i wo = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a2, 32), mo), co);
    __m512i h = _mm512_permutex2var_epi32(we, hi, wo);
    h = _mm512_mask_sub_epi32(h, _mm512_cmplt_epi32_mask(a, t), h, _mm512_set1_epi32(1));
    return _mm512_srav_epi32(h, sh);
}

/* tfl_pk_requant_u32 less its correction of negative sums, for a conv without a fused ADD whose range starts at or
 * above its zero point (y_min >= y_zero: a ReLU's): the correction moves a result by 1 only at a negative sum's tie,
 * (h + 2^(e - 1)) a multiple of 2^e with h < 0, where the uncorrected result is z or less, so y_min either way (as
 * tflite_int8_amx.h's TFL_AMX_RQ_RELU); 8 operations, not 10 */
TFL_PK_INLINE __m512i tfl_pk_requant_u32_relu(__m512i a, __m512i m, __m512i mo, __m512i ce, __m512i co, __m512i sh) {
    const __m512i hi = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
    const __m512i a2 = _mm512_add_epi32(a, a);
    const __m512i we = _mm512_add_epi64(_mm512_mul_epi32(a2, m), ce);
    const __m512i wo = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a2, 32), mo), co);
    return _mm512_srav_epi32(_mm512_permutex2var_epi32(we, hi, wo), sh);
}

/* |a| < 2^30 for every sum of k byte products (unsigned bytes, weights >= -128) from the bias b (16 lanes) */
TFL_PK_INLINE int tfl_pk_sums_small(__m512i b, int64_t k) {
    return (int64_t)_mm512_reduce_max_epu32(_mm512_abs_epi32(b)) + 255 * 128 * k < ((int64_t)1 << 30);
}

/* A fused residual ADD's rescaling of one input, TFLite's requant_double((x - z) 2^20, m, s) (add_one), in 32-bit
 * lanes (issue 64: in 64-bit ones, the three requantisations of the ADD took a fifth of an int8 ResNet-50's time).
 * Exact where s <= 0, e = -s <= 12 and m >= 0: with d = x - z in [-255, 255] nothing wraps, the high product h is
 * floor((d 2^20 m + 2^30) / 2^31) = floor((d m + 2^10) / 2^11), and the rounding divide's two roundings are one
 * (tflite_int8_x86.h), floor((d m + K - [h < 0] F) / 2^S), S = 11 + e, K = 2^10 + 2^(10 + e) and F = 2^11 for
 * e >= 1 (K = 2^10, F = 0 for e = 0). [h < 0] is [d < 0] but where d < 0 and h = 0 (m <= 2^10), and there both
 * give 0 (0 <= d m + 2^10 < 2^11). With m = mh 2^S + ml, 0 <= ml < 2^S, that is d mh + floor((d ml + K - [d < 0] F)
 * / 2^S), |d ml + K| < 2^(8 + S) <= 2^31: two 32-bit multiplies, an arithmetic shift. (Checked against the
 * reference for every d, e and 612 multipliers, small ones among them, and by the kernel tests' "(rescale)".) */
typedef struct {
    __m512i z, mh, ml, k, f, mlf; /* mlf: ML16's ml in the low 16 bits of a lane, F in the high */
    __m512i sh, pow; /* S; mode TFL_PK_ADD_POW: k - 11 (each lane's count: vpsravd, vpsllvd take it from memory
                      * in the fused ADD's loops, where a count in an xmm register was loaded again every 16 sums) */
    int mode;
} tfl_pk_add_in;

/* how tfl_pk_add_rescale_mode makes an input's d mh and d ml: by 32-bit multiplies (vpmulld); d ml less [d < 0] F
 * by one 16-bit multiply-add (ML16, ml < 2^15: vpmaddwd of d's halves, d and its sign extension 0 or -1 as |d| <=
 * 255, with ml and F, so that the sign's compare and masked subtract go); where m = 2^k (k >= 11) and e = 0
 * (TFLite's multiplier 1/2 of the ADD's input of the larger scale, m = 2^30) none: the rescaling is d 2^(k - 11),
 * one shift */
enum { TFL_PK_ADD_MUL, TFL_PK_ADD_ML16, TFL_PK_ADD_POW };

/* whether an input's (m, s) take tfl_pk_add_in, and its constants where they do */
static int tfl_pk_add_in_init(tfl_pk_add_in *a, int32_t zero, int32_t m, int32_t s) {
    const int32_t e = -s, sh = 11 + e;
    int32_t k = 11;
    if (s > 0 || e > 12 || m < 0) return 0;
    a->z = _mm512_set1_epi32(zero), a->sh = _mm512_set1_epi32(sh);
    a->mh = _mm512_set1_epi32(m >> sh), a->ml = _mm512_set1_epi32(m & ((1 << sh) - 1));
    a->k = _mm512_set1_epi32((1 << 10) + (e > 0 ? 1 << (10 + e) : 0)), a->f = _mm512_set1_epi32(e > 0 ? 1 << 11 : 0);
    a->mode = (m & ((1 << sh) - 1)) < (1 << 15) ? TFL_PK_ADD_ML16 : TFL_PK_ADD_MUL;
    a->mlf = _mm512_set1_epi32((int32_t)((uint32_t)(m & ((1 << sh) - 1)) | (uint32_t)(e > 0 ? 1 << 11 : 0) << 16));
    if (e == 0 && m >= (1 << 11) && (m & (m - 1)) == 0) {
        while (((int32_t)1 << k) != m) ++k;
        a->mode = TFL_PK_ADD_POW;
    }
    a->pow = _mm512_set1_epi32(k - 11);
    return 1;
}

TFL_PK_INLINE __m512i tfl_pk_add_rescale_mode(const tfl_pk_add_in *a, __m512i x, int mode) {
    const __m512i d = _mm512_sub_epi32(x, a->z);
    if (mode == TFL_PK_ADD_POW) return _mm512_sllv_epi32(d, a->pow);
    __m512i t;
    if (mode == TFL_PK_ADD_ML16) {
        t = _mm512_add_epi32(_mm512_madd_epi16(d, a->mlf), a->k);
    } else {
        t = _mm512_add_epi32(_mm512_mullo_epi32(d, a->ml), a->k);
        t = _mm512_mask_sub_epi32(t, _mm512_cmplt_epi32_mask(d, _mm512_setzero_si512()), t, a->f);
    }
    return _mm512_add_epi32(_mm512_mullo_epi32(d, a->mh), _mm512_srav_epi32(t, a->sh));
}

TFL_PK_INLINE __m512i tfl_pk_add_rescale(const tfl_pk_add_in *a, __m512i x) {
    return tfl_pk_add_rescale_mode(a, x, TFL_PK_ADD_MUL);
}

/* a conv's output stage for one block of 16 channels: its requantisation, zero point and clamp, and the fused
 * residual ADD's three requantisations (per tensor) where add is set; lo8, hi8: the last clamp's bounds (the ADD's
 * where fused) in bytes, flo, fhi in dwords */
typedef struct {
    tfl_pk_rq rq;
    int32_t y_zero;
    __m512i yz, lo, hi, flo, fhi, lo8, hi8;
    int add, conv_x1, add32;
    tfl_x86_rq r1, r2, ro;
    __m512i z1, z2, ayz, alo, ahi;
    tfl_pk_add_in in1, in2; /* add32: the ADD's inputs rescaled in 32-bit lanes (tfl_pk_add_in) */
    tfl_pk_rq aro;          /* add32: the ADD's output requantisation, its zero point folded where it can be */
    int lin;                /* the ADD as the compiler's linear form (aotc_tfl_residual_params' lin_*) */
    __m512i la, lb, lc, lsh;
} tfl_pk_out;

TFL_PK_INLINE void tfl_pk_out_channels(tfl_pk_out *o, const int32_t *mult, const int32_t *shift, __mmask16 m) {
    o->rq = tfl_pk_rq_init(_mm512_maskz_loadu_epi32(m, mult), _mm512_maskz_loadu_epi32(m, shift), o->y_zero);
}

static void tfl_pk_out_init(tfl_pk_out *o, const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r) {
    o->y_zero = p->y_zero;
    o->yz = _mm512_set1_epi32(p->y_zero), o->lo = _mm512_set1_epi32(p->y_min), o->hi = _mm512_set1_epi32(p->y_max);
    o->add = r != NULL, o->add32 = 0, o->lin = 0;
    o->flo = o->lo, o->fhi = o->hi;
    if (r != NULL) {
        const aotc_tfl_binary_params *a = &r->add;
        o->conv_x1 = r->conv_x1;
        o->r1 = tfl_x86_rq_init(_mm512_set1_epi32(a->m1), _mm512_set1_epi32(a->s1));
        o->r2 = tfl_x86_rq_init(_mm512_set1_epi32(a->m2), _mm512_set1_epi32(a->s2));
        o->ro = tfl_x86_rq_init(_mm512_set1_epi32(a->mult), _mm512_set1_epi32(a->shift));
        o->z1 = _mm512_set1_epi32(a->x1_zero), o->z2 = _mm512_set1_epi32(a->x2_zero);
        o->ayz = _mm512_set1_epi32(a->y_zero), o->alo = _mm512_set1_epi32(a->y_min);
        o->ahi = _mm512_set1_epi32(a->y_max);
        o->flo = o->alo, o->fhi = o->ahi;
        o->lin = r->lin_sh > 0;
        o->la = _mm512_set1_epi32(r->lin_a), o->lb = _mm512_set1_epi32(r->lin_b);
        o->lc = _mm512_set1_epi32(r->lin_c), o->lsh = _mm512_set1_epi32(r->lin_sh);
        o->add32 = tfl_pk_add_in_init(&o->in1, a->x1_zero, a->m1, a->s1) &&
                   tfl_pk_add_in_init(&o->in2, a->x2_zero, a->m2, a->s2);
        if (o->add32) {
            /* (the sum of two add32 rescalings is below 2^29: each is below 255 2^20 in magnitude, s <= 0) */
            o->aro = tfl_pk_rq_init(_mm512_set1_epi32(a->mult), _mm512_set1_epi32(a->shift), a->y_zero);
            tfl_pk_rq_u32(&o->aro, _mm512_set1_epi32(a->mult), _mm512_set1_epi32(a->shift), a->y_zero, 1);
        }
    }
    o->lo8 = _mm512_set1_epi8((char)_mm512_cvtsi512_si32(o->flo)), o->hi8 = _mm512_set1_epi8((char)_mm512_cvtsi512_si32(o->fhi));
}

/* 16 sums requantised by rq, plus the output zero point (tfl_x86_requant; no first shift unless rq->shl) */
TFL_PK_INLINE __m512i tfl_pk_requant_z(const tfl_pk_rq *rq, __m512i acc, __m512i yz) {
    const tfl_x86_rq *q = &rq->q;
    const __m512i low = _mm512_set1_epi64(-((int64_t)1 << 30));
    const __m512i a = rq->shl ? _mm512_sllv_epi32(acc, q->left) : acc;
    const __m512i pe = _mm512_mul_epi32(a, q->mult), po = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), q->mult_odd);
    __m512i te = _mm512_add_epi64(pe, q->k_e), to = _mm512_add_epi64(po, q->k_o);
    te = _mm512_mask_add_epi64(te, _mm512_cmplt_epi64_mask(pe, low), te, q->fix_e);
    to = _mm512_mask_add_epi64(to, _mm512_cmplt_epi64_mask(po, low), to, q->fix_o);
    const __m512i v = _mm512_mask_blend_epi32(0xAAAA, _mm512_srav_epi64(te, q->sh_e),
                                              rq->odd1 ? _mm512_srav_epi64(to, rq->sh_o1)
                                                       : _mm512_slli_epi64(_mm512_srav_epi64(to, q->sh_o), 32));
    return rq->zfold ? v : _mm512_add_epi32(v, yz);
}

/* whether rq takes tfl_pk_requant_fast: no first shift, the zero point folded, odd1 */
TFL_PK_INLINE int tfl_pk_rq_fast(const tfl_pk_rq *rq) { return !rq->shl && rq->zfold && rq->odd1; }

/* tfl_pk_requant_z where tfl_pk_rq_fast(rq), rq's constants passed in (registers in a loop) */
TFL_PK_INLINE __m512i tfl_pk_requant_fast(__m512i a, __m512i mult, __m512i mult_odd, __m512i k_e, __m512i k_o,
                                          __m512i fix_e, __m512i fix_o, __m512i sh_e, __m512i sh_o1) {
    const __m512i low = _mm512_set1_epi64(-((int64_t)1 << 30));
    const __m512i pe = _mm512_mul_epi32(a, mult), po = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), mult_odd);
    __m512i te = _mm512_add_epi64(pe, k_e), to = _mm512_add_epi64(po, k_o);
    te = _mm512_mask_add_epi64(te, _mm512_cmplt_epi64_mask(pe, low), te, fix_e);
    to = _mm512_mask_add_epi64(to, _mm512_cmplt_epi64_mask(po, low), to, fix_o);
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srav_epi64(te, sh_e), _mm512_srav_epi64(to, sh_o1));
}

/* The fused ADD of the conv's clamped outputs v and the residual's e by the compiler's linear form (issue 64: the
 * ADD's three requantisations were 13 % of an int8 ResNet-50's time): (a v + b e + c) >> sh, exact where the
 * compiler set it (aotc_tfl_residual_params' lin_*), before the ADD's clamp */
TFL_PK_INLINE __m512i tfl_pk_lin(const tfl_pk_out *o, __m512i v, __m512i e) {
    const __m512i t = _mm512_add_epi32(_mm512_mullo_epi32(v, o->la), _mm512_mullo_epi32(e, o->lb));
    return _mm512_srav_epi32(_mm512_add_epi32(t, o->lc), o->lsh);
}

/* n sums (s, 4 apart; residuals at res, ys apart, m) through the conv's requantisation (u32: 1 where tfl_pk_rq_u32,
 * else fast: tfl_pk_rq_fast, else tfl_pk_requant_z; constants of the caller's), its clamp and the linear ADD */
TFL_PK_INLINE void tfl_pk_lin_col(const tfl_pk_out *o, const tfl_pk_rq *rq, __m512i *s, int n, const int8_t *res,
                                  int64_t ys, __mmask16 m, int u32, int fast) {
    const __m512i lo = o->lo, hi = o->hi, la = o->la, lb = o->lb, lc = o->lc, lsh = o->lsh;
    int r;
    for (r = 0; r < n; ++r) {
        const __m512i a = s[4 * r];
        const __m512i q = u32    ? tfl_pk_requant_u32(a, rq->u_m, rq->u_mo, rq->u_ce, rq->u_co, rq->u_t, rq->u_sh)
                          : fast ? tfl_pk_requant_fast(a, rq->q.mult, rq->q.mult_odd, rq->q.k_e, rq->q.k_o, rq->q.fix_e,
                                                       rq->q.fix_o, rq->q.sh_e, rq->sh_o1)
                                 : tfl_pk_requant_z(rq, a, o->yz);
        const __m512i v = _mm512_min_epi32(_mm512_max_epi32(q, lo), hi);
        const __m512i e = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, res + r * ys));
        const __m512i t = _mm512_add_epi32(_mm512_mullo_epi32(v, la), _mm512_mullo_epi32(e, lb));
        s[4 * r] = _mm512_srav_epi32(_mm512_add_epi32(t, lc), lsh);
    }
}

/* a fused ADD's n sums (s, 4 apart; residuals at res, ys apart, m) through the output stage but its last clamp, where
 * add32 and both requantisations tfl_pk_rq_fast: the constants in registers or read in place, no tests a sum */
TFL_PK_INLINE void tfl_pk_add_col(const tfl_pk_out *o, const tfl_pk_rq *rq, __m512i *s, int n, const int8_t *res,
                                  int64_t ys, __mmask16 m, int mc, int mr) {
    const tfl_pk_add_in *ic = o->conv_x1 ? &o->in1 : &o->in2, *ir = o->conv_x1 ? &o->in2 : &o->in1;
    const tfl_pk_rq *ro = &o->aro;
    const __m512i mult = rq->q.mult, mult_odd = rq->q.mult_odd, k_e = rq->q.k_e, k_o = rq->q.k_o;
    const __m512i fix_e = rq->q.fix_e, fix_o = rq->q.fix_o, sh_e = rq->q.sh_e, sh_o1 = rq->sh_o1;
    const __m512i lo = o->lo, hi = o->hi;
    int r;
    for (r = 0; r < n; ++r) {
        const __m512i v = _mm512_min_epi32(_mm512_max_epi32(tfl_pk_requant_fast(s[4 * r], mult, mult_odd, k_e, k_o, fix_e,
                                                                                 fix_o, sh_e, sh_o1), lo), hi);
        const __m512i rv = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, res + r * ys));
        const __m512i sum = _mm512_add_epi32(tfl_pk_add_rescale_mode(ic, v, mc), tfl_pk_add_rescale_mode(ir, rv, mr));
        s[4 * r] = tfl_pk_requant_fast(sum, ro->q.mult, ro->q.mult_odd, ro->q.k_e, ro->q.k_o, ro->q.fix_e, ro->q.fix_o,
                                       ro->q.sh_e, ro->sh_o1);
    }
}

/* tfl_pk_add_col where both requantisations are u32 (tfl_pk_rq_u32) */
TFL_PK_INLINE void tfl_pk_add_col_u32(const tfl_pk_out *o, const tfl_pk_rq *rq, __m512i *s, int n, const int8_t *res,
                                      int64_t ys, __mmask16 m, int mc, int mr) {
    const tfl_pk_add_in *ic = o->conv_x1 ? &o->in1 : &o->in2, *ir = o->conv_x1 ? &o->in2 : &o->in1;
    const tfl_pk_rq *ro = &o->aro;
    const __m512i um = rq->u_m, umo = rq->u_mo, uce = rq->u_ce, uco = rq->u_co, ut = rq->u_t, ush = rq->u_sh;
    const __m512i lo = o->lo, hi = o->hi;
    int r;
    for (r = 0; r < n; ++r) {
        const __m512i v = _mm512_min_epi32(_mm512_max_epi32(tfl_pk_requant_u32(s[4 * r], um, umo, uce, uco, ut, ush), lo), hi);
        const __m512i rv = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, res + r * ys));
        const __m512i sum = _mm512_add_epi32(tfl_pk_add_rescale_mode(ic, v, mc), tfl_pk_add_rescale_mode(ir, rv, mr));
        s[4 * r] = tfl_pk_requant_u32(sum, ro->u_m, ro->u_mo, ro->u_ce, ro->u_co, ro->u_t, ro->u_sh);
    }
}

/* n (1 to TFL_PK_MR4) sums at s, 4 apart, requantised in place by rq where tfl_pk_rq_fast(rq) (tfl_pk_requant_z in
 * such a block, its constants in registers for the n: issue 64, the output stage was a fifth of an int8
 * MobileNetV2's time, more than the arithmetic, its constants reloaded a sum) */
TFL_PK_INLINE void tfl_pk_requant_col_u32(const tfl_pk_rq *rq, __m512i *s, int n) {
    const __m512i m = rq->u_m, mo = rq->u_mo, ce = rq->u_ce, co = rq->u_co, corr = rq->u_t, sh = rq->u_sh;
    int r;
    for (r = 0; r < n; ++r) s[4 * r] = tfl_pk_requant_u32(s[4 * r], m, mo, ce, co, corr, sh);
}

TFL_PK_INLINE void tfl_pk_requant_col(const tfl_pk_rq *rq, __m512i *s, int n) {
    const __m512i mult = rq->q.mult, mult_odd = rq->q.mult_odd, k_e = rq->q.k_e, k_o = rq->q.k_o;
    const __m512i fix_e = rq->q.fix_e, fix_o = rq->q.fix_o, sh_e = rq->q.sh_e, sh_o1 = rq->sh_o1;
    int r;
    for (r = 0; r < n; ++r) s[4 * r] = tfl_pk_requant_fast(s[4 * r], mult, mult_odd, k_e, k_o, fix_e, fix_o, sh_e, sh_o1);
}

TFL_PK_INLINE __m512i tfl_pk_requant(const tfl_pk_out *o, const tfl_pk_rq *rq, __m512i acc) {
    return tfl_pk_requant_z(rq, acc, o->yz);
}

/* 16 sums through the output stage but its last clamp (o->flo, o->fhi): requantised with the zero point; with the
 * ADD fused, clamped to the conv's range and through add_one's arithmetic with the residual's 16 at res (m) */
TFL_PK_INLINE __m512i tfl_pk_out_lanes(const tfl_pk_out *o, const tfl_pk_rq *rq, __m512i acc, const int8_t *res,
                                       __mmask16 m) {
    __m512i v = tfl_pk_requant(o, rq, acc);
    if (o->add) { /* add_one, 16 lanes: each input less its zero point, times 2^20, rescaled; the sum rescaled */
        v = _mm512_min_epi32(_mm512_max_epi32(v, o->lo), o->hi);
        const __m512i rv = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, res));
        const __m512i x1 = o->conv_x1 ? v : rv, x2 = o->conv_x1 ? rv : v;
        if (o->lin) return tfl_pk_lin(o, v, rv);
        if (o->add32)
            return tfl_pk_requant_z(&o->aro, _mm512_add_epi32(tfl_pk_add_rescale(&o->in1, x1), tfl_pk_add_rescale(&o->in2, x2)),
                                    o->ayz);
        const __m512i a = tfl_x86_requant(_mm512_slli_epi32(_mm512_sub_epi32(x1, o->z1), 20), &o->r1);
        const __m512i b = tfl_x86_requant(_mm512_slli_epi32(_mm512_sub_epi32(x2, o->z2), 20), &o->r2);
        v = _mm512_add_epi32(tfl_x86_requant(_mm512_add_epi32(a, b), &o->ro), o->ayz);
    }
    return v;
}

/* 16 sums to y (m: the channels there) by the requantisation rq, through the residual's 16 elements at res when
 * the ADD is fused */
TFL_PK_INLINE void tfl_pk_store_rq(const tfl_pk_out *o, const tfl_pk_rq *rq, __m512i acc, int8_t *y,
                                   const int8_t *res, __mmask16 m) {
    const __m512i v = _mm512_min_epi32(_mm512_max_epi32(tfl_pk_out_lanes(o, rq, acc, res, m), o->flo), o->fhi);
    _mm_mask_storeu_epi8(y, m, _mm512_cvtepi32_epi8(v));
}

/* the same by the block's requantisation (tfl_pk_out_channels) */
TFL_PK_INLINE void tfl_pk_store(const tfl_pk_out *o, __m512i acc, int8_t *y, const int8_t *res, __mmask16 m) {
    tfl_pk_store_rq(o, &o->rq, acc, y, res, m);
}

/* four vectors of 16 outputs before their last clamp (a, b, c, d) as 64 bytes in that order, clamped: narrowed by
 * saturating packs (the clamp's bounds are bytes, so that saturating first changes nothing), which work within
 * 128-bit lanes (lane l: a's outputs 4l .. 4l + 3, then b's, c's, d's), then put in order by one permute (the
 * same 4 x 4 transpose of dwords either way); a vpmovdb and a store of 16 outputs cost more */
TFL_PK_INLINE __m512i tfl_pk_pack4(const tfl_pk_out *o, __m512i a, __m512i b, __m512i c, __m512i d) {
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512i v = _mm512_permutexvar_epi32(idx, _mm512_packs_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, d)));
    return _mm512_min_epi8(_mm512_max_epi8(v, o->lo8), o->hi8);
}

/* 16 sums by the block's requantisation, by tfl_pk_requant_fast where fast is 1, by tfl_pk_requant_u32 where it is
 * TFL_PK_FAST_U32 (rq->u32; a constant of the caller's: its tests of the requantisation's form gone from the loop) */
#define TFL_PK_FAST_U32 2
TFL_PK_INLINE __m512i tfl_pk_requant_f(const tfl_pk_out *o, int fast, __m512i acc) {
    const tfl_pk_rq *rq = &o->rq;
    if (fast == TFL_PK_FAST_U32) return tfl_pk_requant_u32(acc, rq->u_m, rq->u_mo, rq->u_ce, rq->u_co, rq->u_t, rq->u_sh);
    return fast ? tfl_pk_requant_fast(acc, rq->q.mult, rq->q.mult_odd, rq->q.k_e, rq->q.k_o, rq->q.fix_e, rq->q.fix_o,
                                      rq->q.sh_e, rq->sh_o1)
                : tfl_pk_requant(o, rq, acc);
}

/* g (1 to 4) positions' sums of one block (s0 .. s3) by the block's requantisation (fast: tfl_pk_rq_fast of it,
 * a constant), position j's to y + j ys (m: the channels there; no ADD): two or more packed into one vector
 * (tfl_pk_pack4), its quarters stored */
TFL_PK_INLINE void tfl_pk_store_g(const tfl_pk_out *o, __m512i s0, __m512i s1, __m512i s2, __m512i s3, int g,
                                  int8_t *y, int64_t ys, __mmask16 m, int fast) {
    if (g == 1) {
        tfl_pk_store(o, s0, y, NULL, m);
        return;
    }
    const __m512i zero = _mm512_setzero_si512();
    const __m512i v = tfl_pk_pack4(o, tfl_pk_requant_f(o, fast, s0), tfl_pk_requant_f(o, fast, s1),
                                   g > 2 ? tfl_pk_requant_f(o, fast, s2) : zero,
                                   g > 3 ? tfl_pk_requant_f(o, fast, s3) : zero);
    _mm_mask_storeu_epi8(y, m, _mm512_castsi512_si128(v));
    _mm_mask_storeu_epi8(y + ys, m, _mm512_extracti32x4_epi32(v, 1));
    if (g > 2) _mm_mask_storeu_epi8(y + 2 * ys, m, _mm512_extracti32x4_epi32(v, 2));
    if (g > 3) _mm_mask_storeu_epi8(y + 3 * ys, m, _mm512_extracti32x4_epi32(v, 3));
}

#define TFL_PK_MR 8 /* output positions a register block of CONV_2D (x 16 channels) */

/* a block's mr sums (tfl_pk_conv_block's) to y, position r's at y + r ys (a residual at res + r ys where the ADD is
 * fused) */
static __attribute__((noinline)) void tfl_pk_block_store(const tfl_pk_out *o, const __m512i *sums, int mr, int8_t *y,
                                                         const int8_t *res, int64_t ys, __mmask16 m) {
    int r;
    for (r = 0; r < mr; ++r) tfl_pk_store(o, sums[r], y + r * ys, res + r * ys, m);
}

/* mr positions' patches x one block of 16 channels' packed weights (wb: rows x rq quads of 16 x 4 bytes), from
 * the folded bias, to y (ys bytes between positions): position r's patch is `rows` runs of rq quads, run j at
 * a[r] + j rowstep (a tile's patches: one run; a span's windows: a kernel row a run) */
TFL_PK_INLINE void tfl_pk_conv_block(const uint8_t *const *a, int32_t rows, int64_t rowstep, int32_t rq,
                                     const int8_t *wb, __m512i bias, int mr, const tfl_pk_out *o, int8_t *y,
                                     const int8_t *res, int64_t ys, __mmask16 m, int u32) {
    /* the sums in named variables, not an array: gcc 12 then keeps the weights' vector in a register (with an
     * array it spilled it a quad, and took twice the time) */
    __m512i s0 = bias, s1 = bias, s2 = bias, s3 = bias, s4 = bias, s5 = bias, s6 = bias, s7 = bias;
    const int32_t quads = rows * rq;
    int32_t k, q = 0;
    int64_t at = 0; /* (one loop over the quads, as tfl_pk_conv_tile's: around two nested ones gcc 12 copied every
                     * sum out of its register and back at each byte dot product, and an int8 MobileNetV2's 16-channel
                     * layer took twice the time) */
    for (k = 0; k < quads; ++k, wb += 64, at = ++q < rq ? at + 4 : (q = 0, at + 4 + rowstep - 4 * (int64_t)rq)) {
        const __m512i w = _mm512_loadu_si512(wb);
        int32_t v;
#define TFL_PK_DP(r, s)                                                                                         \
    if (mr > r) memcpy(&v, a[r] + at, 4), s = _mm512_dpbusd_epi32(s, _mm512_set1_epi32(v), w)
        TFL_PK_DP(0, s0); TFL_PK_DP(1, s1); TFL_PK_DP(2, s2); TFL_PK_DP(3, s3);
        TFL_PK_DP(4, s4); TFL_PK_DP(5, s5); TFL_PK_DP(6, s6); TFL_PK_DP(7, s7);
#undef TFL_PK_DP
    }
    if (u32) { /* no ADD, the block's requantisation u32 (o->rq): in registers, four positions packed at a time */
        tfl_pk_store_g(o, s0, s1, s2, s3, mr < 4 ? mr : 4, y, ys, m, TFL_PK_FAST_U32);
        if (mr > 4) tfl_pk_store_g(o, s4, s5, s6, s7, mr - 4, y + 4 * ys, ys, m, TFL_PK_FAST_U32);
    } else {
        /* the sums out of registers once, for the output stage apart (as tfl_pk_conv_tile's: inlined, it kept gcc 12
         * copying the sums between registers at each dot product) */
        __m512i sums[TFL_PK_MR];
        sums[0] = s0, sums[1] = s1, sums[2] = s2, sums[3] = s3, sums[4] = s4, sums[5] = s5, sums[6] = s6, sums[7] = s7;
        tfl_pk_block_store(o, sums, mr, y, res, ys, m);
    }
}

#define TFL_PK_MR4 6 /* output positions a register tile of CONV_2D over 2 to 4 blocks of 16 channels */
/* tfl_pk_conv_tile's u32 (1: no ADD, every block's requantisation u32, in registers; 0: the output stage apart) */
#define TFL_PK_TILE_LIN 2  /* the fused ADD's linear form in registers */
#define TFL_PK_TILE_RELU 3 /* as 1, a ReLU's range: tfl_pk_requant_u32_relu */

/* a tile's sums (position r's at sums[4 r ..], nb blocks; the last block's channels m) requantised to y (a residual
 * at res where the ADD is fused): a block's requantisation in registers for the tile's positions, back into sums,
 * then a position's nb blocks packed into one store (tfl_pk_pack4) */

/* FN(o, rq, sums, mr, res, ys, mj, A, B) for the pair of the inputs' modes (mc: the conv's, mres: the residual's),
 * each pair its own call with the modes constant, so that each is a loop of its own */
#define TFL_PK_ADD_BY_MODES(FN)                                                                                   \
    do {                                                                                                          \
        if (mc == TFL_PK_ADD_POW && mres == TFL_PK_ADD_ML16)                                                      \
            FN(o, &rqs[j], sums + j, mr, rj, ys, mj, TFL_PK_ADD_POW, TFL_PK_ADD_ML16);                            \
        else if (mc == TFL_PK_ADD_ML16 && mres == TFL_PK_ADD_POW)                                                 \
            FN(o, &rqs[j], sums + j, mr, rj, ys, mj, TFL_PK_ADD_ML16, TFL_PK_ADD_POW);                            \
        else if (mc == TFL_PK_ADD_POW && mres == TFL_PK_ADD_MUL)                                                  \
            FN(o, &rqs[j], sums + j, mr, rj, ys, mj, TFL_PK_ADD_POW, TFL_PK_ADD_MUL);                             \
        else if (mc == TFL_PK_ADD_MUL && mres == TFL_PK_ADD_POW)                                                  \
            FN(o, &rqs[j], sums + j, mr, rj, ys, mj, TFL_PK_ADD_MUL, TFL_PK_ADD_POW);                             \
        else if (mc == TFL_PK_ADD_ML16 && mres == TFL_PK_ADD_ML16)                                                \
            FN(o, &rqs[j], sums + j, mr, rj, ys, mj, TFL_PK_ADD_ML16, TFL_PK_ADD_ML16);                           \
        else if (mc == TFL_PK_ADD_POW && mres == TFL_PK_ADD_POW)                                                  \
            FN(o, &rqs[j], sums + j, mr, rj, ys, mj, TFL_PK_ADD_POW, TFL_PK_ADD_POW);                             \
        else                                                                                                      \
            FN(o, &rqs[j], sums + j, mr, rj, ys, mj, TFL_PK_ADD_MUL, TFL_PK_ADD_MUL);                             \
    } while (0)

static __attribute__((noinline)) void tfl_pk_tile_store(const tfl_pk_out *o, const tfl_pk_rq *rqs, __m512i *sums,
                                                        int mr, int nb, __mmask16 m, int8_t *y, const int8_t *res,
                                                        int64_t ys) {
    const __m512i zero = _mm512_setzero_si512();
    const __mmask64 mask = (((__mmask64)1 << (16 * (nb - 1))) - 1) | ((__mmask64)m << (16 * (nb - 1)));
    int r, j;
    for (j = 0; j < nb; ++j) {
        const __mmask16 mj = j == nb - 1 ? m : 0xFFFF;
        if (!o->add && rqs[j].u32) {
            tfl_pk_requant_col_u32(&rqs[j], sums + j, mr);
            continue;
        }
        if (!o->add && tfl_pk_rq_fast(&rqs[j])) {
            tfl_pk_requant_col(&rqs[j], sums + j, mr);
            continue;
        }
        if (o->add && o->lin) {
            const int8_t *rj = res + 16 * j;
            if (rqs[j].u32)
                tfl_pk_lin_col(o, &rqs[j], sums + j, mr, rj, ys, mj, 1, 0);
            else if (tfl_pk_rq_fast(&rqs[j]))
                tfl_pk_lin_col(o, &rqs[j], sums + j, mr, rj, ys, mj, 0, 1);
            else
                tfl_pk_lin_col(o, &rqs[j], sums + j, mr, rj, ys, mj, 0, 0);
            continue;
        }
        if (o->add && o->add32 && rqs[j].u32 && o->aro.u32) {
            const int mc = (o->conv_x1 ? o->in1 : o->in2).mode, mres = (o->conv_x1 ? o->in2 : o->in1).mode;
            const int8_t *rj = res + 16 * j;
            TFL_PK_ADD_BY_MODES(tfl_pk_add_col_u32);
            continue;
        }
        if (o->add && o->add32 && tfl_pk_rq_fast(&rqs[j]) && tfl_pk_rq_fast(&o->aro)) {
            /* each pair of the inputs' modes its own loop (the conv's input, the residual's) */
            const int mc = (o->conv_x1 ? o->in1 : o->in2).mode, mres = (o->conv_x1 ? o->in2 : o->in1).mode;
            const int8_t *rj = res + 16 * j;
            TFL_PK_ADD_BY_MODES(tfl_pk_add_col);
            continue;
        }
        const tfl_pk_rq q = rqs[j];
        for (r = 0; r < mr; ++r) sums[4 * r + j] = tfl_pk_out_lanes(o, &q, sums[4 * r + j], res + r * ys + 16 * j, mj);
    }
    for (r = 0; r < mr; ++r) {
        const __m512i *s = sums + 4 * r;
        _mm512_mask_storeu_epi8(y + r * ys, mask, tfl_pk_pack4(o, s[0], s[1], nb > 2 ? s[2] : zero, nb > 3 ? s[3] : zero));
    }
}

/* mr (<= 6) positions' patches x nb (2 to 4) blocks of 16 channels (wb: the first block's packed weights, the next
 * ones wstep bytes apart; the last block's channels m), from the folded biases, to y: up to 24 sums, 4 weight
 * vectors and a broadcast in the 32 registers, so that a quad's nb weight loads and mr broadcasts feed nb mr byte
 * dot products (the 8 x 16 block above: 9 loads for 8) */
TFL_PK_INLINE void tfl_pk_conv_tile(const uint8_t *const *a, int32_t rows, int64_t rowstep, int32_t rq,
                                    const int8_t *wb, int64_t wstep, const __m512i *bias, int mr, int nb, __mmask16 m,
                                    const tfl_pk_out *o, const tfl_pk_rq *rqs, int8_t *y, const int8_t *res,
                                    int64_t ys, int u32) {
    const __m512i zero = _mm512_setzero_si512();
    __m512i s00 = bias[0], s01 = bias[1], s02 = nb > 2 ? bias[2] : zero, s03 = nb > 3 ? bias[3] : zero;
    __m512i s10 = s00, s11 = s01, s12 = s02, s13 = s03, s20 = s00, s21 = s01, s22 = s02, s23 = s03;
    __m512i s30 = s00, s31 = s01, s32 = s02, s33 = s03, s40 = s00, s41 = s01, s42 = s02, s43 = s03;
    __m512i s50 = s00, s51 = s01, s52 = s02, s53 = s03;
    const int32_t quads = rows * rq;
    int32_t k, q = 0;
    int64_t at = 0; /* of the patch's quad k: a kernel row's run of rq quads, then the next row's (one loop, not two:
                     * around a nested one gcc 12 stored all 24 sums to the stack every quad) */
    for (k = 0; k < quads; ++k, wb += 64, at = ++q < rq ? at + 4 : (q = 0, at + 4 + rowstep - 4 * (int64_t)rq)) {
        const __m512i w0 = _mm512_loadu_si512(wb), w1 = _mm512_loadu_si512(wb + wstep);
        const __m512i w2 = nb > 2 ? _mm512_loadu_si512(wb + 2 * wstep) : zero;
        const __m512i w3 = nb > 3 ? _mm512_loadu_si512(wb + 3 * wstep) : zero;
        __m512i v;
        int32_t x4;
#define TFL_PK_DP(r)                                                                                            \
    if (mr > r) {                                                                                               \
        memcpy(&x4, a[r] + at, 4), v = _mm512_set1_epi32(x4);                                                   \
        s##r##0 = _mm512_dpbusd_epi32(s##r##0, v, w0), s##r##1 = _mm512_dpbusd_epi32(s##r##1, v, w1);           \
        if (nb > 2) s##r##2 = _mm512_dpbusd_epi32(s##r##2, v, w2);                                              \
        if (nb > 3) s##r##3 = _mm512_dpbusd_epi32(s##r##3, v, w3);                                              \
    }
        TFL_PK_DP(0) TFL_PK_DP(1) TFL_PK_DP(2) TFL_PK_DP(3) TFL_PK_DP(4) TFL_PK_DP(5)
#undef TFL_PK_DP
    }
    if (u32 == 1 || u32 == TFL_PK_TILE_RELU || u32 == TFL_PK_TILE_LIN) {
        /* every block's requantisation tfl_pk_requant_u32 (less its correction of negative sums with a ReLU's range),
         * no ADD or the ADD by its linear form (tfl_pk_lin_col): in registers, the constants read in place, a row's
         * residuals read before its outputs are stored (y may be the residual) */
        const __mmask64 mask = (((__mmask64)1 << (16 * (nb - 1))) - 1) | ((__mmask64)m << (16 * (nb - 1)));
#define TFL_PK_RQ(r, j, FORM)                                                                                   \
    if (mr > r && nb > j) {                                                                                     \
        const tfl_pk_rq *q_ = &rqs[j];                                                                          \
        if ((FORM) == TFL_PK_TILE_RELU) {                                                                       \
            s##r##j = tfl_pk_requant_u32_relu(s##r##j, q_->u_m, q_->u_mo, q_->u_ce, q_->u_co, q_->u_sh);        \
        } else {                                                                                                \
            s##r##j = tfl_pk_requant_u32(s##r##j, q_->u_m, q_->u_mo, q_->u_ce, q_->u_co, q_->u_t, q_->u_sh);    \
        }                                                                                                       \
        if ((FORM) == TFL_PK_TILE_LIN) {                                                                        \
            const __m512i v_ = _mm512_min_epi32(_mm512_max_epi32(s##r##j, o->lo), o->hi);                     \
            const __m512i e_ = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(j == nb - 1 ? m : 0xFFFF, res + r * ys + 16 * j)); \
            const __m512i t_ = _mm512_add_epi32(_mm512_mullo_epi32(v_, o->la), _mm512_mullo_epi32(e_, o->lb)); \
            s##r##j = _mm512_srav_epi32(_mm512_add_epi32(t_, o->lc), o->lsh);                                   \
        }                                                                                                       \
    }
#define TFL_PK_RQ_ROW(r, FORM)                                                                                  \
    TFL_PK_RQ(r, 0, FORM) TFL_PK_RQ(r, 1, FORM) TFL_PK_RQ(r, 2, FORM) TFL_PK_RQ(r, 3, FORM)                     \
    if (mr > r) _mm512_mask_storeu_epi8(y + r * ys, mask, tfl_pk_pack4(o, s##r##0, s##r##1, s##r##2, s##r##3));
#define TFL_PK_RQ_ROWS(FORM)                                                                                    \
    TFL_PK_RQ_ROW(0, FORM) TFL_PK_RQ_ROW(1, FORM) TFL_PK_RQ_ROW(2, FORM) TFL_PK_RQ_ROW(3, FORM)                 \
    TFL_PK_RQ_ROW(4, FORM) TFL_PK_RQ_ROW(5, FORM)
        if (u32 == TFL_PK_TILE_LIN) {
            TFL_PK_RQ_ROWS(TFL_PK_TILE_LIN)
        } else if (u32 == TFL_PK_TILE_RELU) {
            TFL_PK_RQ_ROWS(TFL_PK_TILE_RELU)
        } else {
            TFL_PK_RQ_ROWS(1)
        }
#undef TFL_PK_RQ_ROWS
#undef TFL_PK_RQ_ROW
#undef TFL_PK_RQ
    } else {
        /* the sums out of registers once, for the output stage apart (inlined here, its temporaries made gcc 12 keep
         * a copy of every sum on the stack at each quad) */
        __m512i sums[TFL_PK_MR4 * 4];
#define TFL_PK_SUMS(r)                                                                                          \
    if (mr > r) sums[4 * r] = s##r##0, sums[4 * r + 1] = s##r##1, sums[4 * r + 2] = s##r##2, sums[4 * r + 3] = s##r##3;
        TFL_PK_SUMS(0) TFL_PK_SUMS(1) TFL_PK_SUMS(2) TFL_PK_SUMS(3) TFL_PK_SUMS(4) TFL_PK_SUMS(5)
#undef TFL_PK_SUMS
        tfl_pk_tile_store(o, rqs, sums, mr, nb, m, y, res, ys);
    }
}

/* n positions x nb blocks of channels from c0 (the last one's channels m) by tfl_pk_conv_tile */
TFL_PK_INLINE void tfl_pk_conv_tiles(const aotc_tfl_conv_params *p, const uint8_t *const *a, int32_t n, int32_t rows,
                                     int64_t rowstep, int32_t rq, const int8_t *wp, const int32_t *bias, int32_t c0,
                                     int nb, __mmask16 m, const tfl_pk_out *o, int8_t *y, const int8_t *res) {
    const int32_t oc = p->oc;
    const int64_t wstep = (int64_t)16 * 4 * rows * rq;
    const int8_t *wb = wp + (int64_t)c0 * 4 * rows * rq;
    __m512i b[4];
    tfl_pk_rq rqs[4];
    int32_t t;
    int j, u32;
    for (j = 0; j < nb; ++j) {
        const __mmask16 mj = j == nb - 1 ? m : 0xFFFF;
        b[j] = _mm512_maskz_loadu_epi32(mj, bias + c0 + 16 * j);
        rqs[j] = tfl_pk_rq_init(_mm512_maskz_loadu_epi32(mj, p->mult + c0 + 16 * j),
                                _mm512_maskz_loadu_epi32(mj, p->shift + c0 + 16 * j), p->y_zero);
        tfl_pk_rq_u32(&rqs[j], _mm512_maskz_loadu_epi32(mj, p->mult + c0 + 16 * j),
                      _mm512_maskz_loadu_epi32(mj, p->shift + c0 + 16 * j), p->y_zero,
                      tfl_pk_sums_small(b[j], (int64_t)4 * rows * rq));
    }
    y += c0, res += c0;
    for (j = 0, u32 = 1; j < nb; ++j) u32 = u32 && rqs[j].u32;
    u32 = !u32 ? 0 : o->add ? (o->lin ? TFL_PK_TILE_LIN : 0) : p->y_min >= p->y_zero ? TFL_PK_TILE_RELU : 1;
    for (t = 0; t + TFL_PK_MR4 <= n; t += TFL_PK_MR4)
        tfl_pk_conv_tile(a + t, rows, rowstep, rq, wb, wstep, b, TFL_PK_MR4, nb, m, o, rqs, y + (int64_t)t * oc,
                         res + (int64_t)t * oc, oc, u32);
#define TFL_PK_TAIL(r)                                                                                          \
    case r:                                                                                                     \
        tfl_pk_conv_tile(a + t, rows, rowstep, rq, wb, wstep, b, r, nb, m, o, rqs, y + (int64_t)t * oc,         \
                         res + (int64_t)t * oc, oc, u32);                                                       \
        break;
    switch (n - t) { /* the last positions, a tile of constant size */
    TFL_PK_TAIL(5) TFL_PK_TAIL(4) TFL_PK_TAIL(3) TFL_PK_TAIL(2) TFL_PK_TAIL(1)
    default: break;
    }
#undef TFL_PK_TAIL
}

/* the same for nb = 2, 3, 4: each its own code, its registers fixed */
#define TFL_PK_TILES(NB)                                                                                        \
    static void tfl_pk_conv_tiles##NB(const aotc_tfl_conv_params *p, const uint8_t *const *a, int32_t n,        \
                                      int32_t rows, int64_t rowstep, int32_t rq, const int8_t *wp,              \
                                      const int32_t *bias, int32_t c0, __mmask16 m, const tfl_pk_out *o,        \
                                      int8_t *y, const int8_t *res) {                                           \
        tfl_pk_conv_tiles(p, a, n, rows, rowstep, rq, wp, bias, c0, NB, m, o, y, res);                          \
    }
TFL_PK_TILES(4)
TFL_PK_TILES(3)
TFL_PK_TILES(2)
#undef TFL_PK_TILES

/* n positions (their patches as tfl_pk_conv_block reads them from a[]) x the blocks of channels c_begin .. c_end - 1
 * (c_begin a multiple of 16), to y at the first position */
static void tfl_pk_conv_run(const aotc_tfl_conv_params *p, const uint8_t *const *a, int32_t n, int32_t rows,
                            int64_t rowstep, int32_t rq, const int8_t *wp, const int32_t *bias, int32_t c_begin,
                            int32_t c_end, tfl_pk_out *o, int8_t *y, const int8_t *res) {
    const int32_t oc = p->oc;
    int32_t c0, t;
    /* 64 channels at a time by the tiles of 6 x 64, and the last 17 to 63 by those of 6 x 32 or 48 */
    for (c0 = c_begin; c0 + 64 <= c_end; c0 += 64) tfl_pk_conv_tiles4(p, a, n, rows, rowstep, rq, wp, bias, c0, 0xFFFF, o, y, res);
    if (c_end - c0 > 16) {
        const int32_t left = c_end - c0, nb = (left + 15) / 16;
        const __mmask16 last = (__mmask16)(left % 16 == 0 ? 0xFFFFu : (1u << (left % 16)) - 1u);
        (nb == 4 ? tfl_pk_conv_tiles4 : nb == 3 ? tfl_pk_conv_tiles3 : tfl_pk_conv_tiles2)(p, a, n, rows, rowstep, rq, wp,
                                                                                        bias, c0, last, o, y, res);
        c0 = c_end;
    }
    for (; c0 < c_end; c0 += 16) { /* up to 16 channels: the 8 x 16 blocks */
        const __mmask16 m = (__mmask16)(c_end - c0 >= 16 ? 0xFFFFu : (1u << (c_end - c0)) - 1u);
        const __m512i b = _mm512_loadu_si512(bias + c0);
        const int8_t *wb = wp + (int64_t)c0 * 4 * rows * rq;
        int u32;
        tfl_pk_out_channels(o, p->mult + c0, p->shift + c0, m);
        tfl_pk_rq_u32(&o->rq, _mm512_maskz_loadu_epi32(m, p->mult + c0), _mm512_maskz_loadu_epi32(m, p->shift + c0),
                      p->y_zero, tfl_pk_sums_small(_mm512_maskz_mov_epi32(m, b), (int64_t)4 * rows * rq));
        u32 = !o->add && o->rq.u32;
        for (t = 0; t + TFL_PK_MR <= n; t += TFL_PK_MR)
            tfl_pk_conv_block(a + t, rows, rowstep, rq, wb, b, TFL_PK_MR, o, y + (int64_t)t * oc + c0,
                              res + (int64_t)t * oc + c0, oc, m, u32);
        switch (n - t) { /* the last positions, a block of constant size */
        case 7: tfl_pk_conv_block(a + t, rows, rowstep, rq, wb, b, 7, o, y + (int64_t)t * oc + c0, res + (int64_t)t * oc + c0, oc, m, u32); break;
        case 6: tfl_pk_conv_block(a + t, rows, rowstep, rq, wb, b, 6, o, y + (int64_t)t * oc + c0, res + (int64_t)t * oc + c0, oc, m, u32); break;
        case 5: tfl_pk_conv_block(a + t, rows, rowstep, rq, wb, b, 5, o, y + (int64_t)t * oc + c0, res + (int64_t)t * oc + c0, oc, m, u32); break;
        case 4: tfl_pk_conv_block(a + t, rows, rowstep, rq, wb, b, 4, o, y + (int64_t)t * oc + c0, res + (int64_t)t * oc + c0, oc, m, u32); break;
        case 3: tfl_pk_conv_block(a + t, rows, rowstep, rq, wb, b, 3, o, y + (int64_t)t * oc + c0, res + (int64_t)t * oc + c0, oc, m, u32); break;
        case 2: tfl_pk_conv_block(a + t, rows, rowstep, rq, wb, b, 2, o, y + (int64_t)t * oc + c0, res + (int64_t)t * oc + c0, oc, m, u32); break;
        case 1: tfl_pk_conv_block(a + t, rows, rowstep, rq, wb, b, 1, o, y + (int64_t)t * oc + c0, res + (int64_t)t * oc + c0, oc, m, u32); break;
        default: break;
        }
    }
}
#define TFL_PK_OUT tfl_pk_out
#else
#if TFL_PK_AVX2
#define TFL_PK_AVX2_QC 128  /* quads of a block's weights widened to 16 bits at a time (16 KiB of stack) */
#define TFL_PK_AVX2_RUN 64  /* positions a tfl_pk_conv_run takes at most (TFL_PK_RUN, checked below) */

/* As tfl_pk_avx2_pair over the quads [g0, g1) of the patches (quad g: row g / rq, quad g % rq of it) with the block's
 * weights already widened to 16 bits (w16: quad g0's 16 x 4 first), adding to the 8 vectors of pair sums at acc
 * (s0 - s3 of a0, then t0 - t3 of a1): the weights are then plain loads, shared by the two positions, where
 * tfl_pk_avx2_pair widens them again for every pair (4 of its 8 shuffles a quad) */
TFL_PK_INLINE void tfl_pk_avx2_pair16(const uint8_t *a0, const uint8_t *a1, int32_t g0, int32_t g1, int32_t rq,
                                      int64_t rowstep, const int16_t *w16, __m256i *acc) {
    const __m256i widen = _mm256_setr_epi8(0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1, 3, -1, 0, -1, 1, -1, 2, -1,
                                           3, -1, 0, -1, 1, -1, 2, -1, 3, -1);
    __m256i s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3], t0 = acc[4], t1 = acc[5], t2 = acc[6], t3 = acc[7];
    int32_t g = g0, i, u, v;
    while (g < g1) { /* a row's run of quads at a time */
        const int32_t j = g / rq, q = g % rq, e = g1 - g < rq - q ? g1 - g : rq - q;
        const uint8_t *x0 = a0 + j * rowstep + 4 * q, *x1 = a1 + j * rowstep + 4 * q;
        for (i = 0; i < e; ++i, w16 += 64) {
            const __m256i w0 = _mm256_loadu_si256((const __m256i *)w16);
            const __m256i w1 = _mm256_loadu_si256((const __m256i *)(w16 + 16));
            const __m256i w2 = _mm256_loadu_si256((const __m256i *)(w16 + 32));
            const __m256i w3 = _mm256_loadu_si256((const __m256i *)(w16 + 48));
            __m256i x, z;
            memcpy(&u, x0 + 4 * i, 4);
            memcpy(&v, x1 + 4 * i, 4);
            x = _mm256_shuffle_epi8(_mm256_set1_epi32(u), widen);
            z = _mm256_shuffle_epi8(_mm256_set1_epi32(v), widen);
            s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(x, w0)), t0 = _mm256_add_epi32(t0, _mm256_madd_epi16(z, w0));
            s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(x, w1)), t1 = _mm256_add_epi32(t1, _mm256_madd_epi16(z, w1));
            s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(x, w2)), t2 = _mm256_add_epi32(t2, _mm256_madd_epi16(z, w2));
            s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(x, w3)), t3 = _mm256_add_epi32(t3, _mm256_madd_epi16(z, w3));
        }
        g += e;
    }
    acc[0] = s0, acc[1] = s1, acc[2] = s2, acc[3] = s3, acc[4] = t0, acc[5] = t1, acc[6] = t2, acc[7] = t3;
}

/* a block's requantisation in 32-bit lanes (tfl_pk_avx2_rq_u32): whether it takes it, its constants per half */
typedef struct {
    int on;
    __m256i m[2], mo[2], ce[2], co[2], t[2], sh[2];
} tfl_pk_avx2_u32;

/* the output stage of 8 channels: their requantisation (rq), zero point and clamp, and the fused residual ADD's three
 * requantisations (per tensor) where r is given; TFLite's arithmetic in the lanes (tflite_int8_x86.h) */
typedef struct {
    tfl_x86_rqv8 rq[2]; /* a block's channels 0 - 7, 8 - 15 */
    tfl_x86_rq8 r1, r2, ra;
    __m256i y_zero, y_min, y_max, x1_zero, x2_zero, a_zero, a_min, a_max;
    __m256i la, lb, lc, lsh; /* the ADD's linear form where the compiler set one (aotc_tfl_residual_params' lin_*) */
    __m256i lhi, llo;        /* its (a, b) as 16-bit pairs: a = ah 2^15 + al (al < 2^15), b alike; lin16 where ah, bh
                              * fit 16 bits */
    int lin16;
    __m256i a_min8, a_max8; /* the ADD's range in bytes */
    tfl_pk_avx2_u32 u;
    tfl_pk_avx2_u32 hu; /* hu.on: u's constants in the lane order of the pair sums' vphaddd, the bias folded in
                         * (tfl_pk_avx2_hadd_u32) */
} tfl_pk_avx2_out;

/* The AVX-512 path's 10-operation requantisation (tfl_pk_rq_u32, whose comment derives it) in 8 lanes, for a block of
 * 16 channels (mult, shift: 16 each; a lane past the channels has m = 2^30, shift 0 and takes the 64-bit form's
 * arithmetic too, its result not stored): where every lane has m >= 2^30, a right shift e in [1, 23], and the sums are
 * below 2^30 in magnitude (small), the result with the zero point z folded is the arithmetic shift by e of the high
 * half of 2 a m + 2 C (C = 2^30 + 2^(30 + e) + z 2^(31 + e)) less [a < t] (t = -1 where m = 2^30, else 0). The 64-bit
 * form (tfl_x86_requantv8: two 64-bit shifts, masks of the rounding fix, a bias) took a quarter of an int8
 * MobileNetV2's CONV_2D time without AVX-512. */
static int tfl_pk_avx2_rq_u32(tfl_pk_avx2_u32 *o, const int32_t *mult, const int32_t *shift, int32_t m, int32_t y_zero,
                              int small) {
    const __m256i two31 = _mm256_set1_epi64x((int64_t)1 << 31), c32 = _mm256_set1_epi64x(32);
    const __m256i z = _mm256_set1_epi64x(y_zero), m30 = _mm256_set1_epi32(1 << 30);
    int32_t i, h;
    o->on = small;
    for (i = 0; i < m && o->on; ++i) o->on = mult[i] >= (1 << 30) && shift[i] <= -1 && shift[i] >= -23;
    if (!o->on) return 0;
    for (h = 0; h < 2; ++h) {
        const __m256i mu = _mm256_loadu_si256((const __m256i *)(mult + 8 * h));
        const __m256i e = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_loadu_si256((const __m256i *)(shift + 8 * h)));
        const __m256i ee = _mm256_and_si256(e, _mm256_set1_epi64x(0xFFFFFFFF)), eo = _mm256_srli_epi64(e, 32);
        o->m[h] = mu, o->mo[h] = _mm256_srli_epi64(mu, 32), o->sh[h] = e;
        o->t[h] = _mm256_cmpeq_epi32(mu, m30);
        o->ce[h] = _mm256_add_epi64(_mm256_add_epi64(two31, _mm256_sllv_epi64(two31, ee)),
                                      _mm256_sllv_epi64(z, _mm256_add_epi64(ee, c32)));
        o->co[h] = _mm256_add_epi64(_mm256_add_epi64(two31, _mm256_sllv_epi64(two31, eo)),
                                      _mm256_sllv_epi64(z, _mm256_add_epi64(eo, c32)));
    }
    return 1;
}

/* 8 sums requantised with the zero point where o->on (tfl_pk_avx2_rq_u32), half h of the block */
TFL_PK_INLINE __m256i tfl_pk_avx2_requant_u32(const tfl_pk_avx2_u32 *o, int h, __m256i a) {
    const __m256i a2 = _mm256_add_epi32(a, a);
    const __m256i we = _mm256_add_epi64(_mm256_mul_epi32(a2, o->m[h]), o->ce[h]);
    const __m256i wo = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a2, 32), o->mo[h]), o->co[h]);
    const __m256i hi = _mm256_blend_epi32(_mm256_srli_epi64(we, 32), wo, 0xAA);
    /* less 1 where a < t: the compare's -1 added */
    return _mm256_srav_epi32(_mm256_add_epi32(hi, _mm256_cmpgt_epi32(o->t[h], a)), o->sh[h]);
}

static void tfl_pk_avx2_out_init(tfl_pk_avx2_out *o, const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r) {
    o->y_zero = _mm256_set1_epi32(p->y_zero), o->y_min = _mm256_set1_epi32(p->y_min);
    o->y_max = _mm256_set1_epi32(p->y_max);
    if (r == NULL) return;
    o->r1 = tfl_x86_rq8_set1(r->add.m1, r->add.s1), o->r2 = tfl_x86_rq8_set1(r->add.m2, r->add.s2);
    o->ra = tfl_x86_rq8_set1(r->add.mult, r->add.shift);
    o->x1_zero = _mm256_set1_epi32(r->add.x1_zero), o->x2_zero = _mm256_set1_epi32(r->add.x2_zero);
    o->a_zero = _mm256_set1_epi32(r->add.y_zero), o->a_min = _mm256_set1_epi32(r->add.y_min);
    o->a_max = _mm256_set1_epi32(r->add.y_max);
    o->la = _mm256_set1_epi32(r->lin_a), o->lb = _mm256_set1_epi32(r->lin_b);
    o->lc = _mm256_set1_epi32(r->lin_c), o->lsh = _mm256_set1_epi32(r->lin_sh);
    o->a_min8 = _mm256_set1_epi8((char)r->add.y_min), o->a_max8 = _mm256_set1_epi8((char)r->add.y_max);
    o->lin16 = r->lin_sh > 0 && r->lin_a >> 15 >= -32768 && r->lin_a >> 15 < 32768 && r->lin_b >> 15 >= -32768 &&
               r->lin_b >> 15 < 32768;
    o->lhi = _mm256_set1_epi32((int32_t)(((uint32_t)(r->lin_b >> 15) << 16) | ((uint32_t)(r->lin_a >> 15) & 0xFFFF)));
    o->llo = _mm256_set1_epi32((int32_t)(((uint32_t)r->lin_b & 0x7FFF) << 16 | ((uint32_t)r->lin_a & 0x7FFF)));
}

/* The linear form on 8 pairs (v, e) of 16-bit words: a v + b e = (ah v + bh e) 2^15 + (al v + bl e), two vpmaddwd
 * (the vpmulld it takes otherwise are two uops each; 1 % of ResNet-50's time); exact: the shift and adds are modulo
 * 2^32 and the compiler checked that a v + b e and the sum with c fit an int32 */
TFL_PK_INLINE __m256i tfl_pk_avx2_lin16(const tfl_pk_avx2_out *o, __m256i ve) {
    const __m256i t = _mm256_add_epi32(_mm256_slli_epi32(_mm256_madd_epi16(ve, o->lhi), 15), _mm256_madd_epi16(ve, o->llo));
    return _mm256_srav_epi32(_mm256_add_epi32(t, o->lc), o->lsh);
}

/* one position's 16 conv outputs (bytes v) and residuals (e) through lin16, to 16 words in channel order (unclamped
 * but for packs' saturation: the caller clamps the bytes) */
TFL_PK_INLINE __m256i tfl_pk_avx2_lin16x16(const tfl_pk_avx2_out *o, __m128i v, __m128i e) {
    const __m256i v16 = _mm256_cvtepi8_epi16(v), e16 = _mm256_cvtepi8_epi16(e);
    return _mm256_packs_epi32(tfl_pk_avx2_lin16(o, _mm256_unpacklo_epi16(v16, e16)),
                              tfl_pk_avx2_lin16(o, _mm256_unpackhi_epi16(v16, e16)));
}

/* The fused ADD of 8 of the conv's clamped outputs v and the residual's e, clamped to the ADD's range: by the
 * compiler's linear form where it set one (exact on every pair, tfl_pk_lin's), else add_one's three requantisations */
TFL_PK_INLINE __m256i tfl_pk_avx2_add8(const tfl_pk_avx2_out *o, const aotc_tfl_residual_params *r, __m256i v,
                                       __m256i e) {
    __m256i x1, x2, a;
    if (r->lin_sh > 0) {
        a = _mm256_add_epi32(_mm256_mullo_epi32(v, o->la), _mm256_mullo_epi32(e, o->lb));
        v = _mm256_srav_epi32(_mm256_add_epi32(a, o->lc), o->lsh);
    } else {
        x1 = r->conv_x1 ? v : e, x2 = r->conv_x1 ? e : v;
        x1 = tfl_x86_requant8(_mm256_slli_epi32(_mm256_sub_epi32(x1, o->x1_zero), 20), &o->r1);
        x2 = tfl_x86_requant8(_mm256_slli_epi32(_mm256_sub_epi32(x2, o->x2_zero), 20), &o->r2);
        a = r->add.subtract ? _mm256_sub_epi32(x1, x2) : _mm256_add_epi32(x1, x2);
        v = _mm256_add_epi32(tfl_x86_requant8(a, &o->ra), o->a_zero);
    }
    return _mm256_min_epi32(_mm256_max_epi32(v, o->a_min), o->a_max);
}

/* 8 sums (bias added) to m (1 .. 8) bytes at y, through the residual's at res where r is given (add_one's order) */
TFL_PK_INLINE void tfl_pk_avx2_store(const tfl_pk_avx2_out *o, int h, const aotc_tfl_residual_params *r,
                                     __m256i acc, int8_t *y, const int8_t *res, int32_t m) {
    __m256i v = o->u.on ? tfl_pk_avx2_requant_u32(&o->u, h, acc)
                       : _mm256_add_epi32(tfl_x86_requantv8(acc, &o->rq[h]), o->y_zero);
    __m128i b;
    v = _mm256_min_epi32(_mm256_max_epi32(v, o->y_min), o->y_max);
    if (r != NULL) {
        int64_t e8 = 0;
        memcpy(&e8, res, (size_t)m);
        v = tfl_pk_avx2_add8(o, r, v, _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(e8)));
    }
    b = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    b = _mm_packs_epi16(b, b);
    if (m == 8) _mm_storel_epi64((__m128i *)y, b);
    else {
        const int64_t bytes = _mm_cvtsi128_si64(b);
        memcpy(y, &bytes, (size_t)m);
    }
}

/* The lanes of the pair sums' vphaddd (channels 0 1 4 5 | 2 3 6 7, and 8 9 12 13 | 10 11 14 15) */
static const int8_t tfl_pk_avx2_hadd_order[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};

/* Where o->u.on and the block has 16 channels: o->hu, the requantisation's constants in vphaddd's lane order, with
 * the bias b folded in (the sums s without it): 2 (s + b) m + C = 2 s m + (2 b m + C), and s + b < t as s < t - b
 * (|s + b| < 2^30 and |b| < 2^30, the bound checked: 2 s fits an int32, and nothing wraps), so that the output stage
 * needs no vpermq of the sums nor adds of the bias, its bytes put in order by one vpshufb */
static void tfl_pk_avx2_hadd_u32(tfl_pk_avx2_out *o, const int32_t *mult, const int32_t *shift, const int32_t *bv,
                                 int32_t y_zero) {
    int32_t pm[16], ps[16], pb[16], i, h;
    for (i = 0; i < 16; ++i) {
        const int32_t c = tfl_pk_avx2_hadd_order[i];
        pm[i] = mult[c], ps[i] = shift[c], pb[i] = bv[c];
    }
    tfl_pk_avx2_rq_u32(&o->hu, pm, ps, 16, y_zero, 1);
    for (h = 0; h < 2; ++h) {
        const __m256i b = _mm256_loadu_si256((const __m256i *)(pb + 8 * h));
        const __m256i be = _mm256_mul_epi32(b, o->hu.m[h]), bo = _mm256_mul_epi32(_mm256_srli_epi64(b, 32), o->hu.mo[h]);
        o->hu.ce[h] = _mm256_add_epi64(o->hu.ce[h], _mm256_add_epi64(be, be));
        o->hu.co[h] = _mm256_add_epi64(o->hu.co[h], _mm256_add_epi64(bo, bo));
        o->hu.t[h] = _mm256_sub_epi32(o->hu.t[h], b);
    }
}

/* 16 channels of one position from their sums with the bias (s0: channels 0 - 7, s1: 8 - 15): m of them stored at y,
 * through the residual at res where r is given; without one, the halves packed together, one store where m is 16 */
TFL_PK_INLINE void tfl_pk_avx2_out16s(const tfl_pk_avx2_out *o, const aotc_tfl_residual_params *r, __m256i s0,
                                      __m256i s1, int8_t *y, const int8_t *res, int32_t m) {
    __m256i v0, v1;
    __m128i b;
    if (r != NULL || m < 16) {
        tfl_pk_avx2_store(o, 0, r, s0, y, res, m < 8 ? m : 8);
        if (m > 8) tfl_pk_avx2_store(o, 1, r, s1, y + 8, r != NULL ? res + 8 : NULL, m - 8);
        return;
    }
    if (o->u.on) v0 = tfl_pk_avx2_requant_u32(&o->u, 0, s0), v1 = tfl_pk_avx2_requant_u32(&o->u, 1, s1);
    else {
        v0 = _mm256_add_epi32(tfl_x86_requantv8(s0, &o->rq[0]), o->y_zero);
        v1 = _mm256_add_epi32(tfl_x86_requantv8(s1, &o->rq[1]), o->y_zero);
    }
    v0 = _mm256_min_epi32(_mm256_max_epi32(v0, o->y_min), o->y_max);
    v1 = _mm256_min_epi32(_mm256_max_epi32(v1, o->y_min), o->y_max);
    /* 16 values in int8's range: packed to 16 bits (0-3, 8-11 | 4-7, 12-15), re-ordered, to bytes */
    v0 = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
    b = _mm_packs_epi16(_mm256_castsi256_si128(v0), _mm256_extracti128_si256(v0, 1));
    _mm_storeu_si128((__m128i *)(void *)y, b);
}

/* 16 channels of one position from its 4 vectors of pair sums (acc: tfl_pk_avx2_pair16's s0 - s3) and the bias (b0,
 * b1): m of them stored at y, through the residual at res where r is given. Without a residual, the two halves packed
 * together and one store of 16 bytes where m is 16 */
TFL_PK_INLINE void tfl_pk_avx2_out16(const tfl_pk_avx2_out *o, const aotc_tfl_residual_params *r, const __m256i *acc,
                                     __m256i b0, __m256i b1, int8_t *y, const int8_t *res, int32_t m) {
    /* acc[0]'s lanes: channels 0, 1 | 2, 3 as two pair sums each; hadd gives 0 1 4 5 | 2 3 6 7, the permute 0 .. 7 */
    __m256i s0, s1, v0, v1;
    __m128i b;
    if (o->hu.on && r == NULL) { /* (m is 16) */
        const __m128i order = _mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
        v0 = tfl_pk_avx2_requant_u32(&o->hu, 0, _mm256_hadd_epi32(acc[0], acc[1]));
        v1 = tfl_pk_avx2_requant_u32(&o->hu, 1, _mm256_hadd_epi32(acc[2], acc[3]));
        v0 = _mm256_min_epi32(_mm256_max_epi32(v0, o->y_min), o->y_max);
        v1 = _mm256_min_epi32(_mm256_max_epi32(v1, o->y_min), o->y_max);
        /* 16 bits: 0 1 4 5 8 9 12 13 | 2 3 6 7 10 11 14 15; bytes in that order, then channel order */
        v0 = _mm256_packs_epi32(v0, v1);
        b = _mm_packs_epi16(_mm256_castsi256_si128(v0), _mm256_extracti128_si256(v0, 1));
        _mm_storeu_si128((__m128i *)(void *)y, _mm_shuffle_epi8(b, order));
        return;
    }
    s0 = _mm256_add_epi32(_mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[0], acc[1]), 0xD8), b0);
    s1 = _mm256_add_epi32(_mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[2], acc[3]), 0xD8), b1);
    tfl_pk_avx2_out16s(o, r, s0, s1, y, res, m);
}

/* The output stage's constants for channels [c0, c0 + m) of a conv of kq quads a patch: their multipliers, shifts and
 * bias (16 each; past m a valid requantisation whose lanes are not stored) and the requantisation's form, in 32-bit
 * lanes where the sums' bound allows (tfl_pk_avx2_rq_u32), else TFLite's 64-bit one; o->hu off */
static void tfl_pk_avx2_block(tfl_pk_avx2_out *o, const aotc_tfl_conv_params *p, const int32_t *bias, int32_t c0,
                              int32_t m, int32_t kq, int32_t *mult, int32_t *shift, int32_t *bv) {
    int64_t bmax = 0;
    int32_t i, h;
    for (i = 0; i < 16; ++i) {
        mult[i] = i < m ? p->mult[c0 + i] : 1 << 30, shift[i] = i < m ? p->shift[c0 + i] : 0;
        bv[i] = i < m ? bias[c0 + i] : 0;
    }
    for (i = 0; i < m; ++i) { /* the sums' bound: the bias, and k byte products of at most 255 x 128 */
        const int64_t b = bv[i] < 0 ? -(int64_t)bv[i] : bv[i];
        bmax = b > bmax ? b : bmax;
    }
    if (!tfl_pk_avx2_rq_u32(&o->u, mult, shift, m, p->y_zero, bmax + (int64_t)255 * 128 * 4 * kq < ((int64_t)1 << 30)))
        for (h = 0; h < 2; ++h)
            o->rq[h] = tfl_x86_rqv8_init(_mm256_loadu_si256((const __m256i *)(mult + 8 * h)),
                                         _mm256_loadu_si256((const __m256i *)(shift + 8 * h)));
    o->hu.on = 0;
}

/* n positions (n <= TFL_PK_RUN; position t's patch: `rows` runs of rq quads, run j at a[t] + j rowstep) x channels
 * c_begin .. c_end - 1 (c_begin a multiple of 16), to y at the first position: a block of 16 channels' weights widened
 * once a chunk for all n positions, two positions x 16 channels by tfl_pk_avx2_pair16, 8 of their sums at a time by
 * tfl_pk_avx2_store */
static void tfl_pk_avx2_conv_pairs(const aotc_tfl_conv_params *p, const uint8_t *const *a, int32_t n, int32_t rows,
                                   int64_t rowstep, int32_t rq, const int8_t *wp, const int32_t *bias, int32_t c_begin,
                                   int32_t c_end, const aotc_tfl_residual_params *r, int8_t *y, const int8_t *res) {
    const int32_t oc = p->oc, kq = rows * rq;
    int32_t mult[16], shift[16], bv[16];
    int16_t w16[TFL_PK_AVX2_QC * 64];
    __m256i raw[TFL_PK_AVX2_RUN / 2][8]; /* a pair of positions' 8 vectors of pair sums */
    int32_t c0, t, i, g0;
    __m256i b0, b1;
    tfl_pk_avx2_out o;
    tfl_pk_avx2_out_init(&o, p, r);
    for (c0 = c_begin; c0 < c_end; c0 += 16) {
        const int8_t *wb = wp + (int64_t)(c0 / 16) * kq * 64;
        const int32_t m = c_end - c0 < 16 ? c_end - c0 : 16;
        tfl_pk_avx2_block(&o, p, bias, c0, m, kq, mult, shift, bv);
        b0 = _mm256_loadu_si256((const __m256i *)bv), b1 = _mm256_loadu_si256((const __m256i *)(bv + 8));
        if (o.u.on && m == 16 && r == NULL) tfl_pk_avx2_hadd_u32(&o, mult, shift, bv, p->y_zero);
        for (g0 = 0; g0 < kq; g0 += TFL_PK_AVX2_QC) { /* the block's weights widened a chunk of quads at a time */
            const int32_t g1 = kq - g0 < TFL_PK_AVX2_QC ? kq : g0 + TFL_PK_AVX2_QC;
            for (i = 0; i < (g1 - g0) * 4; ++i)
                _mm256_storeu_si256((__m256i *)(w16 + 16 * i),
                                    _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wb + (int64_t)g0 * 64 + 16 * i))));
            if (kq <= TFL_PK_AVX2_QC) { /* one chunk: each pair's sums in registers, straight to the output stage */
                for (t = 0; t < n; t += 2) {
                    const int32_t two = n - t > 1 ? 2 : 1;
                    __m256i acc[8];
                    for (i = 0; i < 8; ++i) acc[i] = _mm256_setzero_si256();
                    tfl_pk_avx2_pair16(a[t], a[t + two - 1], 0, kq, rq, rowstep, w16, acc);
                    for (i = 0; i < two; ++i) {
                        const int64_t at = (int64_t)(t + i) * oc + c0;
                        tfl_pk_avx2_out16(&o, r, acc + 4 * i, b0, b1, y + at, r != NULL ? res + at : NULL, m);
                    }
                }
                break;
            }
            for (t = 0; t < n; t += 2) {
                __m256i *acc = raw[t / 2];
                if (g0 == 0) {
                    for (i = 0; i < 8; ++i) acc[i] = _mm256_setzero_si256();
                }
                tfl_pk_avx2_pair16(a[t], a[t + (n - t > 1 ? 1 : 0)], g0, g1, rq, rowstep, w16, acc);
            }
        }
        if (kq <= TFL_PK_AVX2_QC) continue;
        for (t = 0; t < n; t += 2) {
            const int32_t two = n - t > 1 ? 2 : 1;
            for (i = 0; i < two; ++i) {
                const int64_t at = (int64_t)(t + i) * oc + c0;
                tfl_pk_avx2_out16(&o, r, raw[t / 2] + 4 * i, b0, b1, y + at, r != NULL ? res + at : NULL, m);
            }
        }
    }
}

/* ---- CONV_2D with positions in lanes (issue 64): quant_impl.h qconv_patches_avx2's design on the .tflite conv. The
 * run's patches as a block of 16-bit pairs, pair row j holding pair j (bytes 2 j, 2 j + 1) of every position, made by
 * 8 x 8 transposes of the windows' zero-extended quads; each 4 channels' pair of weights broadcast (vpbroadcastd) over
 * 16 positions' pairs, 4 x 16 sums in 8 registers (no shuffle in the loop, where channels in lanes broadcast and
 * widen each position's quad); the sums transposed back to [position][channel] for the same output stage. The tile
 * with its patch block and transposes measured 100-101 GMAC/s against tfl_pk_avx2_pair16's 85-86 at 64 channels a
 * block (bench/tfl_ubs_tile.c, F and A). The integers are the same sums: bit for bit as before. */
#define TFL_PK_AVX2_KC 64 /* quads of the patch block a chunk (64 positions x 2 KC pairs: 32 KiB of stack) */
#define TFL_PK_AVX2_CH 64 /* channels a patch block's sums held at a time (64 x 64 of int32: 16 KiB) */

/* 8 rows of 8 words transposed in place */
TFL_PK_INLINE void tfl_pk_avx2_tr8(__m256i *r) {
    const __m256i a0 = _mm256_unpacklo_epi32(r[0], r[1]), a1 = _mm256_unpackhi_epi32(r[0], r[1]);
    const __m256i a2 = _mm256_unpacklo_epi32(r[2], r[3]), a3 = _mm256_unpackhi_epi32(r[2], r[3]);
    const __m256i a4 = _mm256_unpacklo_epi32(r[4], r[5]), a5 = _mm256_unpackhi_epi32(r[4], r[5]);
    const __m256i a6 = _mm256_unpacklo_epi32(r[6], r[7]), a7 = _mm256_unpackhi_epi32(r[6], r[7]);
    const __m256i b0 = _mm256_unpacklo_epi64(a0, a2), b1 = _mm256_unpackhi_epi64(a0, a2);
    const __m256i b2 = _mm256_unpacklo_epi64(a1, a3), b3 = _mm256_unpackhi_epi64(a1, a3);
    const __m256i b4 = _mm256_unpacklo_epi64(a4, a6), b5 = _mm256_unpackhi_epi64(a4, a6);
    const __m256i b6 = _mm256_unpacklo_epi64(a5, a7), b7 = _mm256_unpackhi_epi64(a5, a7);
    r[0] = _mm256_permute2x128_si256(b0, b4, 0x20), r[1] = _mm256_permute2x128_si256(b1, b5, 0x20);
    r[2] = _mm256_permute2x128_si256(b2, b6, 0x20), r[3] = _mm256_permute2x128_si256(b3, b7, 0x20);
    r[4] = _mm256_permute2x128_si256(b0, b4, 0x31), r[5] = _mm256_permute2x128_si256(b1, b5, 0x31);
    r[6] = _mm256_permute2x128_si256(b2, b6, 0x31), r[7] = _mm256_permute2x128_si256(b3, b7, 0x31);
}

/* e quads (1 .. 4) at s zero-extended to 16 bits (no byte read past them: a non-direct conv's last patch ends its
 * scratch) */
TFL_PK_INLINE __m256i tfl_pk_avx2_quads16(const uint8_t *s, int32_t e) {
    __m128i v;
    int32_t u;
    if (e >= 4) return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)s));
    if (e >= 2) {
        v = _mm_loadl_epi64((const __m128i *)(const void *)s);
        if (e == 3) memcpy(&u, s + 8, 4), v = _mm_insert_epi32(v, u, 2);
    } else {
        memcpy(&u, s, 4);
        v = _mm_cvtsi32_si128(u);
    }
    return _mm256_cvtepu8_epi16(v);
}

/* pair rows [0, 2 (g1 - g0)) of the patch block of quads [g0, g1) (quad g: row g / rq, quad g % rq of it), row j at
 * pairs + 64 j, positions [0, w) (w a multiple of 8; those from n on as position n - 1, their sums not stored) */
static __attribute__((noinline)) void tfl_pk_avx2_pairs(const uint8_t *const *a, int32_t n, int32_t w, int64_t rowstep, int32_t rq, int32_t g0,
                              int32_t g1, int32_t *pairs) {
    int32_t g = g0, t, s, i;
    while (g < g1) { /* a row's run of quads at a time */
        const int32_t e = g1 - g < rq - g % rq ? g1 - g : rq - g % rq;
        const int64_t off = (int64_t)(g / rq) * rowstep + 4 * (g % rq);
        for (t = 0; t < w; t += 8) {
            for (s = 0; s < e; s += 4) {
                int32_t *dst = pairs + (int64_t)(2 * (g - g0 + s)) * 64 + t;
                __m256i v[8];
                for (i = 0; i < 8; ++i) v[i] = tfl_pk_avx2_quads16(a[t + i < n ? t + i : n - 1] + off + 4 * s, e - s);
                tfl_pk_avx2_tr8(v);
                for (i = 0; i < 8 && i < 2 * (e - s); ++i) _mm256_storeu_si256((__m256i *)(void *)(dst + 64 * i), v[i]);
            }
        }
        g += e;
    }
}

/* acc[c][t0, t0 + 16) (+)= the sums of pair rows [0, nj) of positions [t0, t0 + 16) with 4 channels' pairs of 16-bit
 * weights (pair row j's channel c: word 16 j + c of ww, tfl_pk_avx2_wrows), from the bias bv[c] where first: the
 * register block common/avx2_lanes.h shares with the QDQ convs, on this family's layout (pair rows 64 positions apart) */
static __attribute__((noinline)) void tfl_pk_avx2_lanes16(const int32_t *pairs, int32_t t0, int32_t nj,
                                                          const int32_t *ww, const int32_t *bv, int first,
                                                          int32_t (*acc)[64]) {
    aotc_avx2_lanes16(pairs + t0, 64, ww, 16, nj, bv, first, acc[0] + t0, 64);
}

/* tfl_pk_avx2_lanes16 on 8 positions (a run's last, where its width is 8 past a multiple of 16) */
static __attribute__((noinline)) void tfl_pk_avx2_lanes8(const int32_t *pairs, int32_t t0, int32_t nj,
                                                         const int32_t *ww, const int32_t *bv, int first,
                                                         int32_t (*acc)[64]) {
    aotc_avx2_lanes8(pairs + t0, 64, ww, 16, nj, bv, first, acc[0] + t0, 64);
}

/* a block's packed quads (16 channels x 4 bytes each) widened to 16 bits as pair rows: pair row j's channel c at word
 * 16 j + c of ww (each quad's 16-bit pairs, c0 h0 c0 h1 c1 h0 .., parted into its two rows) */
TFL_PK_INLINE void tfl_pk_avx2_wrows(const int8_t *wb, int32_t nq, int32_t *ww) {
    int32_t q, i;
    for (q = 0; q < nq; ++q, wb += 64, ww += 32) {
        __m256i v[4];
        for (i = 0; i < 4; ++i) /* channels 4 i .. 4 i + 3: h0 of each | h1 of each */
            v[i] = _mm256_permute4x64_epi64(
                _mm256_shuffle_epi32(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(wb + 16 * i))),
                                     0xD8),
                0xD8);
        _mm256_storeu_si256((__m256i *)(void *)ww, _mm256_permute2x128_si256(v[0], v[1], 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(ww + 8), _mm256_permute2x128_si256(v[2], v[3], 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(ww + 16), _mm256_permute2x128_si256(v[0], v[1], 0x31));
        _mm256_storeu_si256((__m256i *)(void *)(ww + 24), _mm256_permute2x128_si256(v[2], v[3], 0x31));
    }
}

/* channels [c0, c1) (at most TFL_PK_AVX2_CH, c0 a multiple of 16) of the patch block's quads [g0, g1) of positions
 * [0, w) added to acc (row c - c0), from the bias where g0 is 0 */
static void tfl_pk_avx2_lanes_block(const int32_t *pairs, int32_t w, const int8_t *wp, const int32_t *bias, int32_t kq,
                                    int32_t g0, int32_t g1, int32_t c0, int32_t c1, int32_t (*acc)[64]) {
    int32_t ww[TFL_PK_AVX2_KC * 32];
    int32_t cb, b, c, t, i, bv[4];
    for (cb = c0; cb < c1; cb += 16) {
        const int8_t *wb = wp + ((int64_t)(cb / 16) * kq + g0) * 64;
        tfl_pk_avx2_wrows(wb, g1 - g0, ww);
        if (cb + 16 < c1) /* the next block's quads towards the cache while this block's tiles run */
            for (i = 0; i < g1 - g0; ++i) _mm_prefetch((const char *)(wb + (int64_t)kq * 64 + 64 * i), _MM_HINT_T0);
        for (b = 0; b < 16 && cb + b < c1; b += 4) {
            for (c = 0; c < 4; ++c) bv[c] = cb + b + c < c1 ? bias[cb + b + c] : 0;
            for (t = 0; t + 16 <= w; t += 16)
                tfl_pk_avx2_lanes16(pairs, t, 2 * (g1 - g0), ww + b, bv, g0 == 0, acc + (cb - c0 + b));
            if (t < w) tfl_pk_avx2_lanes8(pairs, t, 2 * (g1 - g0), ww + b, bv, g0 == 0, acc + (cb - c0 + b));
        }
    }
}

/* o->u's requantisation (tfl_pk_avx2_rq_u32: where it is on) of one channel a vector of 8 positions: its multiplier
 * m, constant ce (with the zero point), threshold t and shift e, each the same in every lane */
typedef struct {
    __m256i m, ce, t, e;
} tfl_pk_avx2_rq1;

/* ch[i]: channel i of the block's constants (mult, shift: 16 each) as tfl_pk_avx2_rq_u32 makes them per lane */
static void tfl_pk_avx2_rq1_init(tfl_pk_avx2_rq1 *ch, const int32_t *mult, const int32_t *shift, int32_t y_zero) {
    int32_t i;
    for (i = 0; i < 16; ++i) {
        const int32_t e = -shift[i];
        const uint64_t ce = ((uint64_t)1 << 31) + ((uint64_t)1 << (31 + e)) + ((uint64_t)(int64_t)y_zero << (32 + e));
        ch[i].m = _mm256_set1_epi32(mult[i]), ch[i].ce = _mm256_set1_epi64x((int64_t)ce);
        ch[i].t = _mm256_set1_epi32(mult[i] == 1 << 30 ? -1 : 0), ch[i].e = _mm256_set1_epi32(e);
    }
}

/* 8 positions' sums a of one channel requantised with the zero point and clamped (tfl_pk_avx2_requant_u32 in
 * position lanes) */
TFL_PK_INLINE __m256i tfl_pk_avx2_rq1_apply(const tfl_pk_avx2_out *o, const tfl_pk_avx2_rq1 *ch, __m256i a) {
    const __m256i a2 = _mm256_add_epi32(a, a);
    const __m256i we = _mm256_add_epi64(_mm256_mul_epi32(a2, ch->m), ch->ce);
    const __m256i wo = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a2, 32), ch->m), ch->ce);
    const __m256i hi = _mm256_blend_epi32(_mm256_srli_epi64(we, 32), wo, 0xAA);
    const __m256i v = _mm256_srav_epi32(_mm256_add_epi32(hi, _mm256_cmpgt_epi32(ch->t, a)), ch->e);
    return _mm256_min_epi32(_mm256_max_epi32(v, o->y_min), o->y_max);
}

/* The fused ADD on two positions' 16 clamped conv outputs (v: bytes, position a's then b's) and their residuals (at
 * ra, rb), in channel lanes after the bytes' transposition (the ADD's constants are per tensor): 32 bytes, read
 * before the caller stores over them (y may be res) */
TFL_PK_INLINE __m256i tfl_pk_avx2_add32(const tfl_pk_avx2_out *o, const aotc_tfl_residual_params *r, __m256i v,
                                        const int8_t *ra, const int8_t *rb) {
    const __m128i ea = _mm_loadu_si128((const __m128i *)(const void *)ra);
    const __m128i eb = _mm_loadu_si128((const __m128i *)(const void *)rb);
    const __m128i va = _mm256_castsi256_si128(v), vb = _mm256_extracti128_si256(v, 1);
    if (o->lin16) { /* (v's values in the ADD's range: packs' saturation then the clamp as the clamp alone) */
        const __m256i w = _mm256_packs_epi16(tfl_pk_avx2_lin16x16(o, va, ea), tfl_pk_avx2_lin16x16(o, vb, eb));
        const __m256i b = _mm256_permute4x64_epi64(w, 0xD8);
        return _mm256_min_epi8(_mm256_max_epi8(b, o->a_min8), o->a_max8);
    }
    const __m256i s0 = tfl_pk_avx2_add8(o, r, _mm256_cvtepi8_epi32(va), _mm256_cvtepi8_epi32(ea));
    const __m256i s1 = tfl_pk_avx2_add8(o, r, _mm256_cvtepi8_epi32(_mm_unpackhi_epi64(va, va)),
                                        _mm256_cvtepi8_epi32(_mm_unpackhi_epi64(ea, ea)));
    const __m256i s2 = tfl_pk_avx2_add8(o, r, _mm256_cvtepi8_epi32(vb), _mm256_cvtepi8_epi32(eb));
    const __m256i s3 = tfl_pk_avx2_add8(o, r, _mm256_cvtepi8_epi32(_mm_unpackhi_epi64(vb, vb)),
                                        _mm256_cvtepi8_epi32(_mm_unpackhi_epi64(eb, eb)));
    /* 16 bits a position in channel order (packs then vpermq), then bytes: a's 16 | b's 16 */
    const __m256i wa = _mm256_permute4x64_epi64(_mm256_packs_epi32(s0, s1), 0xD8);
    const __m256i wb = _mm256_permute4x64_epi64(_mm256_packs_epi32(s2, s3), 0xD8);
    return _mm256_permute4x64_epi64(_mm256_packs_epi16(wa, wb), 0xD8);
}

/* 16 channels x 8 positions (acc rows 0 - 15 from position t) requantised in position lanes, then the bytes put in
 * [position][channel] order (4 x 4 byte and dword transposes) and each position's 16 stored at y + i oc: 24 shuffles
 * for the 8 positions, where transposing the sums takes 48 and each position's packing 4 more */
TFL_PK_INLINE void tfl_pk_avx2_rq_lanes(const tfl_pk_avx2_out *o, const tfl_pk_avx2_rq1 *ch, int32_t (*acc)[64],
                                        int32_t t, int8_t *y, int64_t oc, const aotc_tfl_residual_params *rp,
                                        const int8_t *res) {
    const __m256i order = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9, 13,
                                           2, 6, 10, 14, 3, 7, 11, 15);
    __m256i g[4], u0, u1, u2, u3, r[4];
    int32_t i;
    for (i = 0; i < 4; ++i) { /* channels 4 i .. 4 i + 3: each lane's bytes [channel][position], then [position][channel] */
        const __m256i v0 = tfl_pk_avx2_rq1_apply(o, ch + 4 * i, _mm256_loadu_si256((const __m256i *)(acc[4 * i] + t)));
        const __m256i v1 = tfl_pk_avx2_rq1_apply(o, ch + 4 * i + 1, _mm256_loadu_si256((const __m256i *)(acc[4 * i + 1] + t)));
        const __m256i v2 = tfl_pk_avx2_rq1_apply(o, ch + 4 * i + 2, _mm256_loadu_si256((const __m256i *)(acc[4 * i + 2] + t)));
        const __m256i v3 = tfl_pk_avx2_rq1_apply(o, ch + 4 * i + 3, _mm256_loadu_si256((const __m256i *)(acc[4 * i + 3] + t)));
        g[i] = _mm256_shuffle_epi8(_mm256_packs_epi16(_mm256_packs_epi32(v0, v1), _mm256_packs_epi32(v2, v3)), order);
    }
    /* dword k of lane L of g[i]: position 4 L + k's channels 4 i .. 4 i + 3 */
    u0 = _mm256_unpacklo_epi32(g[0], g[1]), u1 = _mm256_unpackhi_epi32(g[0], g[1]);
    u2 = _mm256_unpacklo_epi32(g[2], g[3]), u3 = _mm256_unpackhi_epi32(g[2], g[3]);
    r[0] = _mm256_unpacklo_epi64(u0, u2), r[1] = _mm256_unpackhi_epi64(u0, u2);
    r[2] = _mm256_unpacklo_epi64(u1, u3), r[3] = _mm256_unpackhi_epi64(u1, u3);
    for (i = 0; i < 4; ++i) {
        if (rp != NULL) r[i] = tfl_pk_avx2_add32(o, rp, r[i], res + i * oc, res + (i + 4) * oc);
        _mm_storeu_si128((__m128i *)(void *)(y + i * oc), _mm256_castsi256_si128(r[i]));
        _mm_storeu_si128((__m128i *)(void *)(y + (i + 4) * oc), _mm256_extracti128_si256(r[i], 1));
    }
}

/* the sums of channels [c0, c1) (acc: row c - c0, bias added) of n positions (a multiple of 8) through the output
 * stage to y (position t's channel c at y[t oc + c]): a block of 16 without a residual, requantised in 32-bit lanes,
 * by tfl_pk_avx2_rq_lanes; else 8 positions x 16 channels transposed at a time to tfl_pk_avx2_out16s */
static __attribute__((noinline)) void tfl_pk_avx2_lanes_out(const aotc_tfl_conv_params *p, tfl_pk_avx2_out *o,
                                                            const int32_t *bias, int32_t kq, int32_t n, int32_t c0,
                                                            int32_t c1, int32_t (*acc)[64],
                                                            const aotc_tfl_residual_params *r, int8_t *y,
                                                            const int8_t *res) {
    int32_t mult[16], shift[16], bv[16], cb, t, i;
    tfl_pk_avx2_rq1 ch[16];
    for (cb = c0; cb < c1; cb += 16) {
        const int32_t m = c1 - cb < 16 ? c1 - cb : 16;
        tfl_pk_avx2_block(o, p, bias, cb, m, kq, mult, shift, bv);
        if (o->u.on && m == 16) {
            tfl_pk_avx2_rq1_init(ch, mult, shift, p->y_zero);
            for (t = 0; t < n; t += 8) { /* (two calls: the loop without a residual as it was, no test in it) */
                const int64_t at = (int64_t)t * p->oc + cb;
                if (r == NULL) tfl_pk_avx2_rq_lanes(o, ch, acc + (cb - c0), t, y + at, p->oc, NULL, NULL);
                else tfl_pk_avx2_rq_lanes(o, ch, acc + (cb - c0), t, y + at, p->oc, r, res + at);
            }
            continue;
        }
        for (t = 0; t < n; t += 8) {
            __m256i lo[8], hi[8];
            for (i = 0; i < 8; ++i) {
                lo[i] = _mm256_loadu_si256((const __m256i *)(acc[cb - c0 + i] + t));
                hi[i] = _mm256_loadu_si256((const __m256i *)(acc[cb - c0 + 8 + i] + t));
            }
            tfl_pk_avx2_tr8(lo), tfl_pk_avx2_tr8(hi);
            for (i = 0; i < 8; ++i) {
                const int64_t at = (int64_t)(t + i) * p->oc + cb;
                tfl_pk_avx2_out16s(o, r, lo[i], hi[i], y + at, r != NULL ? res + at : NULL, m);
            }
        }
    }
}

/* tfl_pk_avx2_conv_pairs's run with positions in lanes: a chunk of the patch block at a time, TFL_PK_AVX2_CH channels
 * of it (the block made once where one chunk holds the patches) */
static void tfl_pk_avx2_conv_lanes(const aotc_tfl_conv_params *p, const uint8_t *const *a, int32_t n, int32_t rows,
                                   int64_t rowstep, int32_t rq, const int8_t *wp, const int32_t *bias, int32_t c_begin,
                                   int32_t c_end, const aotc_tfl_residual_params *r, int8_t *y, const int8_t *res) {
    const int32_t kq = rows * rq, w = (n + 7) / 8 * 8;
    __m256i pbuf[2 * TFL_PK_AVX2_KC * 8], abuf[TFL_PK_AVX2_CH * 8];
    int32_t *pairs = (int32_t *)(void *)pbuf, (*acc)[64] = (int32_t(*)[64])(void *)abuf;
    int32_t c0, g0;
    tfl_pk_avx2_out o;
    tfl_pk_avx2_out_init(&o, p, r);
    for (c0 = c_begin; c0 < c_end; c0 += TFL_PK_AVX2_CH) {
        const int32_t c1 = c_end - c0 < TFL_PK_AVX2_CH ? c_end : c0 + TFL_PK_AVX2_CH;
        for (g0 = 0; g0 < kq; g0 += TFL_PK_AVX2_KC) {
            const int32_t g1 = kq - g0 < TFL_PK_AVX2_KC ? kq : g0 + TFL_PK_AVX2_KC;
            if (c0 == c_begin || kq > TFL_PK_AVX2_KC) tfl_pk_avx2_pairs(a, n, w, rowstep, rq, g0, g1, pairs);
            tfl_pk_avx2_lanes_block(pairs, w, wp, bias, kq, g0, g1, c0, c1, acc);
        }
        tfl_pk_avx2_lanes_out(p, &o, bias, kq, n, c0, c1, acc, r, y, res);
    }
}

/* n positions x channels [c_begin, c_end): whole vectors of 8 positions in lanes, the rest (fewer than 8: a 7 x 7
 * plane's 49th) by pairs, where lanes would compute 8 */
static void tfl_pk_conv_run(const aotc_tfl_conv_params *p, const uint8_t *const *a, int32_t n, int32_t rows,
                            int64_t rowstep, int32_t rq, const int8_t *wp, const int32_t *bias, int32_t c_begin,
                            int32_t c_end, const aotc_tfl_residual_params *r, int8_t *y, const int8_t *res) {
    const int32_t n8 = n / 8 * 8;
    const int64_t at = (int64_t)n8 * p->oc;
    if (n8 > 0) tfl_pk_avx2_conv_lanes(p, a, n8, rows, rowstep, rq, wp, bias, c_begin, c_end, r, y, res);
    if (n8 < n)
        tfl_pk_avx2_conv_pairs(p, a + n8, n - n8, rows, rowstep, rq, wp, bias, c_begin, c_end, r, y + at,
                               r != NULL ? res + at : res);
}
#else
/* one output of a conv: its sum (TFLite's int32 sum modulo 2^32) requantised by TFLite's own functions, clamped,
 * through the residual ADD where r is given (e: the residual's element) */
TFL_PK_INLINE int8_t tfl_pk_out_one(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, uint32_t acc,
                                    int32_t o, int8_t e) {
    int32_t v = clamp8(requant_double((int32_t)acc, p->mult[o], p->shift[o]) + p->y_zero, p->y_min, p->y_max);
    if (r != NULL) v = clamp8(r->conv_x1 ? add_one(&r->add, v, e) : add_one(&r->add, e, v), r->add.y_min, r->add.y_max);
    return (int8_t)v;
}

/* n positions (position t's patch: `rows` runs of rq quads, run j at a[t] + j rowstep) x channels c_begin .. c_end
 * - 1, to y at the first position: the sums in uint32 (TFLite's int32 sums modulo 2^32), requantised by TFLite's
 * own functions */
static void tfl_pk_conv_run(const aotc_tfl_conv_params *p, const uint8_t *const *a, int32_t n, int32_t rows,
                            int64_t rowstep, int32_t rq, const int8_t *wp, const int32_t *bias, int32_t c_begin,
                            int32_t c_end, const aotc_tfl_residual_params *r, int8_t *y, const int8_t *res) {
    const int32_t oc = p->oc, kq = rows * rq;
    int32_t t, o, j, q;
    for (t = 0; t < n; ++t)
        for (o = c_begin; o < c_end; ++o) {
            const int8_t *wb = wp + ((int64_t)(o / 16) * kq * 16 + o % 16) * 4;
            uint32_t acc = (uint32_t)bias[o];
            for (j = 0; j < rows; ++j)
                for (q = 0; q < rq; ++q, wb += 64) {
                    const uint8_t *x4 = a[t] + j * rowstep + 4 * q;
                    acc += (uint32_t)(x4[0] * wb[0] + x4[1] * wb[1] + x4[2] * wb[2] + x4[3] * wb[3]);
                }
            y[(int64_t)t * oc + o] = tfl_pk_out_one(p, r, acc, o, r != NULL ? res[(int64_t)t * oc + o] : 0);
        }
}
#endif
#define TFL_PK_OUT aotc_tfl_residual_params
#endif

#include "tflite_int8_amx.h" /* the direct CONV_2D on AMX's tiles (TFL_PK_AMX) */

#define TFL_PK_RUN 64   /* positions a run of CONV_2D (their windows' addresses on the stack) */
#if TFL_PK_AVX2
typedef char tfl_pk_avx2_run_fits[TFL_PK_RUN <= TFL_PK_AVX2_RUN && TFL_PK_RUN % 2 == 0 ? 1 : -1];
#endif
#define TFL_PK_CHUNK 64 /* output channels an item of a direct CONV_2D's work (blocks of 16) */

/* a direct CONV_2D's work for the pool (aotc_threads.h): first the span's rows, then items of (run of
 * TFL_PK_RUN positions, chunk of TFL_PK_CHUNK channels), run-major, so that one thread keeps whole runs where
 * there are many and the threads share a run's channels where there are few (a late 7 x 7 layer) */
typedef struct {
    const aotc_tfl_conv_params *p;
    const int8_t *x, *wp, *res;
    const int32_t *bias;
    const TFL_PK_OUT *out;
    int8_t *y;
    uint8_t *span;
    int32_t chunks;
} tfl_pk_job;

static void tfl_pk_span_items(void *ctx, int32_t begin, int32_t end) {
    const tfl_pk_job *J = (const tfl_pk_job *)ctx;
    tfl_pk_span_rows(J->p, J->x, J->span, begin, end);
}

static void tfl_pk_direct_items(void *ctx, int32_t begin, int32_t end) {
    const tfl_pk_job *J = (const tfl_pk_job *)ctx;
    const aotc_tfl_conv_params *p = J->p;
    const int32_t total = p->n * p->oh * p->ow, ph = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1;
    const int32_t pw = (p->ow - 1) * p->sw + p->kw;
    const uint8_t *a[TFL_PK_RUN];
    int32_t i, t, run = -1, n = 0;
#if TFL_PK_VNNI
    tfl_pk_out o = *J->out, *out = &o; /* (its channels' requantisation changes a block at a time) */
#else
    const aotc_tfl_residual_params *out = J->out;
#endif
    for (i = begin; i < end; ++i) {
        const int32_t c0 = i % J->chunks * TFL_PK_CHUNK, c1 = c0 + TFL_PK_CHUNK < p->oc ? c0 + TFL_PK_CHUNK : p->oc;
        const int64_t at = (int64_t)(i / J->chunks) * TFL_PK_RUN * p->oc;
        if (i / J->chunks != run) { /* the run's windows, read in place from the span (by steps: issue 64, three
                                       * multiplies a window had taken 3 % of an int8 MobileNetV2) */
            const int32_t p0 = (run = i / J->chunks) * TFL_PK_RUN;
            const int64_t col = (int64_t)p->sw * p->c, down = (int64_t)p->sh * pw * p->c;
            int32_t ox = p0 % p->ow, oy = p0 / p->ow % p->oh, b = p0 / (p->ow * p->oh);
            const uint8_t *row = J->span + ((int64_t)b * ph + oy * p->sh) * pw * p->c, *at = row + ox * col;
            n = total - p0 < TFL_PK_RUN ? total - p0 : TFL_PK_RUN;
            for (t = 0; t < n; ++t, at += col) {
                a[t] = at;
                if (++ox == p->ow) {
                    ox = 0, row += down;
                    if (++oy == p->oh) oy = 0, ++b, row = J->span + (int64_t)b * ph * pw * p->c;
                    at = row - col;
                }
            }
        }
        tfl_pk_conv_run(p, a, n, p->kh, (int64_t)p->dh * pw * p->c, tfl_pk_row_quads(p), J->wp, J->bias, c0, c1, out,
                        J->y + at, J->res != NULL ? J->res + at : J->y + at);
    }
}

/* CONV_2D on packed weights: at dilation 1 across, the windows read in place from the span, runs of TFL_PK_RUN
 * positions, over the pool where there is one; else tile by tile of patches gathered from x. The fused ADD's
 * residual r / res where given. */
static void tfl_pk_conv(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, const int8_t *x,
                        const int8_t *wp, const int32_t *bias, const int8_t *res, int8_t *y, uint8_t *scratch) {
    const int32_t kp = tfl_pk_kp(p->kh * p->kw * p->c), tile = tfl_pk_conv_tile_positions(p);
    const int32_t total = p->n * p->oh * p->ow;
    const uint8_t *a[TFL_PK_RUN];
    int32_t p0, t, i;
#if TFL_PK_VNNI
    tfl_pk_out o, *out = &o;
    tfl_pk_out_init(&o, p, r);
#else
    const aotc_tfl_residual_params *out = r;
#endif
    if (tfl_pk_direct(p)) {
        const int32_t ph = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1;
        const int32_t runs = (total + TFL_PK_RUN - 1) / TFL_PK_RUN;
        tfl_pk_job J;
        J.p = p, J.x = x, J.wp = wp, J.res = res, J.bias = bias, J.out = out, J.y = y, J.span = scratch;
        J.chunks = (p->oc + TFL_PK_CHUNK - 1) / TFL_PK_CHUNK;
        memset(scratch + tfl_pk_span_bytes(p) - TFL_PK_SLACK, 0, TFL_PK_SLACK);
#if TFL_PK_AMX
        if (tfl_amx_takes(p)) { /* on the tiles (tflite_int8_amx.h) */
            tfl_amx_conv(p, r, out, x, wp, bias, res, y, scratch, &J, tfl_pk_span_items,
                         (int64_t)total * p->oc * p->kh * p->kw * p->c >= TFL_PK_POOL_MIN_MACS);
            return;
        }
#endif
        if ((int64_t)total * p->oc * p->kh * p->kw * p->c < TFL_PK_POOL_MIN_MACS) {
            tfl_pk_span_items(&J, 0, p->n * ph);
            tfl_pk_direct_items(&J, 0, runs * J.chunks);
            return;
        }
        aotc_parallel_for(tfl_pk_span_items, &J, p->n * ph);
        aotc_parallel_for(tfl_pk_direct_items, &J, runs * J.chunks);
        return;
    }
    for (p0 = 0; p0 < total; p0 += tile) {
        const int32_t n = total - p0 < tile ? total - p0 : tile;
        tfl_pk_patches(p, x, p0, n, kp, scratch);
        for (t = 0; t < n; t += TFL_PK_RUN) {
            const int32_t m = n - t < TFL_PK_RUN ? n - t : TFL_PK_RUN;
            const int64_t at = (int64_t)(p0 + t) * p->oc;
            for (i = 0; i < m; ++i) a[i] = scratch + (int64_t)(t + i) * kp;
            tfl_pk_conv_run(p, a, m, 1, 0, kp / 4, wp, bias, 0, p->oc, out, y + at, res != NULL ? res + at : y + at);
        }
    }
}

void aotc_tfl_conv_s8_packed(const aotc_tfl_conv_params *p, const int8_t *x, const int8_t *wp, const int32_t *bias,
                             int8_t *y, uint8_t *scratch) {
    tfl_pk_conv(p, NULL, x, wp, bias, NULL, y, scratch);
}

void aotc_tfl_conv_add_s8_packed(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, const int8_t *x,
                                 const int8_t *wp, const int32_t *bias, const int8_t *res, int8_t *y, uint8_t *scratch) {
    tfl_pk_conv(p, r, x, wp, bias, res, y, scratch);
}

/* ---- DEPTHWISE_CONV_2D (depth multiplier 1): weights [channel block][tap][16] as int32 (uint16_t)w, 16-bit
 * dot products of x (sign-extended) with them; taps under the padding read x_zero, which the folded bias
 * (bias - x_zero sum w) cancels (AVX-512: from a band of an output row's input rows, padded, in scratch) ---- */

#if TFL_PK_VNNI
/* g positions of a band (position j's window at xs + j step), one block of 16 channels: a chain of sums per
 * position, or for one position one per kernel row, three in turn (each dot product waits for the last of its
 * chain) */
TFL_PK_INLINE void tfl_pk_dw_run(const aotc_tfl_conv_params *p, const uint8_t *const *rp, int64_t off, int64_t step,
                                 const int32_t *wb, __m512i bias, int g, const tfl_pk_out *o, int8_t *y, __mmask16 m) {
    const int64_t col = (int64_t)p->dw * 16;
    __m512i acc[4], t;
    int32_t ky, kx;
    int j;
    if (g == 1) {
        __m512i a0 = bias, a1 = _mm512_setzero_si512(), a2 = a1;
        for (ky = 0; ky < p->kh; ++ky, t = a0, a0 = a1, a1 = a2, a2 = t)
            for (kx = 0; kx < p->kw; ++kx, wb += 16)
                a0 = _mm512_dpwssd_epi32(a0, _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(rp[ky] + off + kx * col))),
                                         _mm512_loadu_si512(wb));
        tfl_pk_store(o, _mm512_add_epi32(_mm512_add_epi32(a0, a1), a2), y, NULL, m);
        return;
    }
    for (j = 0; j < g; ++j) acc[j] = bias;
    for (ky = 0; ky < p->kh; ++ky)
        for (kx = 0; kx < p->kw; ++kx, wb += 16) {
            const __m512i w = _mm512_loadu_si512(wb);
            const uint8_t *xt = rp[ky] + off + kx * col;
            for (j = 0; j < g; ++j)
                acc[j] = _mm512_dpwssd_epi32(acc[j], _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(xt + j * step))), w);
        }
    for (j = g; j < 4; ++j) acc[j] = bias; /* (not stored) */
    tfl_pk_store_g(o, acc[0], acc[1], acc[2], acc[3], g, y, p->oc, m, 0);
}

/* one row of a band: input row iy (batch b), its pw columns from -pad_left of channels c0 .. c0 + 15 (m), 16 bytes
 * a column, x_zero outside x; each byte ^ flip (0x80: unsigned, as x + 128) */
static void tfl_pk_dw_band_row(const aotc_tfl_conv_params *p, const int8_t *x, int32_t iy, int32_t b, int32_t c0,
                               int32_t pw, __mmask16 m, uint8_t flip, uint8_t *row) {
    const __m128i f = _mm_set1_epi8((char)flip), zero = _mm_set1_epi8((char)((uint8_t)p->x_zero ^ flip));
    const int64_t at = (((int64_t)b * p->h + iy) * p->w - p->pad_left) * p->c + c0;
    const int32_t x0 = p->pad_left < pw ? p->pad_left : pw;
    const int32_t x1 = iy < 0 || iy >= p->h ? x0 /* a row of the padding */
                                            : p->pad_left + p->w < pw ? p->pad_left + p->w : pw;
    /* (the column step and x's column a local: through p, gcc 12 read p->c again and multiplied at every column, as
     * each store of the band, an __m128i, may alias it) */
    const int64_t c = p->c;
    int32_t j = 0;
    const int8_t *xs = x + at + (int64_t)x0 * c;
    for (; j < x0; ++j, row += 16) _mm_storeu_si128((__m128i *)row, zero);
    if (m == 0xFFFF) /* (a whole block: plain loads; masked ones took a sixth more of the band's time on Zen 5) */
        for (; j < x1; ++j, row += 16, xs += c)
            _mm_storeu_si128((__m128i *)row, _mm_xor_si128(_mm_loadu_si128((const __m128i *)xs), f));
    for (; j < x1; ++j, row += 16, xs += c) _mm_storeu_si128((__m128i *)row, _mm_xor_si128(_mm_maskz_loadu_epi8(m, xs), f));
    for (; j < pw; ++j, row += 16) _mm_storeu_si128((__m128i *)row, zero);
}

/* A thread's band: the kh (<= TFL_PK_DW_MAX_KH) input rows an output row's windows read, each made once and kept
 * while the next output rows read it too (a 3 x 3 conv at stride 1 makes each input row once, not three times), in
 * a ring of kh rows (slot iy mod kh); at dilation > 1 down, made afresh for every output row. */
typedef struct {
    int64_t key[TFL_PK_DW_MAX_KH]; /* which input row (batch and row) each slot holds, -1: none */
    const uint8_t *rp[TFL_PK_DW_MAX_KH];
} tfl_pk_dw_ring;

static void tfl_pk_dw_ring_clear(tfl_pk_dw_ring *r) {
    int i;
    for (i = 0; i < TFL_PK_DW_MAX_KH; ++i) r->key[i] = -1;
}

/* the rows of output row oy (batch b) into r->rp[0 .. kh - 1], made in the band where not kept */
static void tfl_pk_dw_rows(const aotc_tfl_conv_params *p, const int8_t *x, int32_t oy, int32_t b, int32_t c0,
                           int32_t pw, __mmask16 m, uint8_t flip, uint8_t *band, tfl_pk_dw_ring *r) {
    const int keep = p->dh == 1;
    const int64_t row = (int64_t)pw * 16;
    int32_t ky;
    for (ky = 0; ky < p->kh; ++ky) {
        const int32_t iy = oy * p->sh - p->pad_top + ky * p->dh;
        const int32_t slot = keep ? ((iy % p->kh) + p->kh) % p->kh : ky;
        const int64_t key = (int64_t)b * ((int64_t)1 << 32) + ((int64_t)iy + ((int64_t)1 << 31));
        uint8_t *dst = band + slot * row;
        if (!keep || r->key[slot] != key) {
            tfl_pk_dw_band_row(p, x, iy, b, c0, pw, m, flip, dst);
            if (keep) r->key[slot] = key;
        }
        r->rp[ky] = dst;
    }
}

#if defined(__AVX512VBMI__)
#define TFL_PK_DW_QUADS 16 /* the most weight vectors (kernel rows x quads of taps a row) the byte path keeps */

/* whether the byte path takes the depthwise conv: each kernel row's taps one or two quads a channel (kw <= 8,
 * dilation 1 across; issue 64: EfficientNet-B0's 5 x 5 ones took the 16-bit path, a tap at a time), each quad's 4
 * bytes of the band's unsigned row gathered into the channel's lane by one vpermb */
static int tfl_pk_dw_quads(const aotc_tfl_conv_params *p) {
    return p->kw <= 8 && p->dw == 1 && p->kh * ((p->kw + 3) / 4) <= TFL_PK_DW_QUADS;
}

/* g positions of an unsigned band (position j's window at xs + j step), one block of 16 channels: a vpdpbusd a
 * quad of a kernel row (qr quads a row, the second 4 columns on; wr: its weights, 4 taps a lane, 0 past kw; idx:
 * the band's tap-major bytes to channel-major quads) */
TFL_PK_INLINE void tfl_pk_dw_quad_run(int32_t kh, int32_t qr, const uint8_t *const *rp, int64_t off, int64_t step,
                                      const __m512i *wr, __m512i idx, __m512i bias, int g, const tfl_pk_out *o,
                                      int8_t *y, int64_t ys, __mmask16 m, int fast) {
    __m512i s0 = bias, s1 = bias, s2 = bias, s3 = bias;
    int32_t ky, j;
    for (ky = 0; ky < kh; ++ky)
        for (j = 0; j < qr; ++j) {
            const __m512i w = wr[ky * qr + j];
            const uint8_t *xs = rp[ky] + off + 64 * j;
            s0 = _mm512_dpbusd_epi32(s0, _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(xs)), w);
            if (g > 1) s1 = _mm512_dpbusd_epi32(s1, _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(xs + step)), w);
            if (g > 2) s2 = _mm512_dpbusd_epi32(s2, _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(xs + 2 * step)), w);
            if (g > 3) s3 = _mm512_dpbusd_epi32(s3, _mm512_permutexvar_epi8(idx, _mm512_loadu_si512(xs + 3 * step)), w);
        }
    tfl_pk_store_g(o, s0, s1, s2, s3, g, y, ys, m, fast);
}

/* the byte path's weights of one block of 16 channels (wb): each kernel row's quads of taps a lane (wr, qr a row),
 * the gather of a band's tap-major bytes to channel-major quads (idx), and the bias less 128 x the taps' sum (the
 * band holds x + 128) */
typedef struct {
    __m512i wr[TFL_PK_DW_QUADS], idx, bias;
    int32_t qr;
} tfl_pk_dw_quad_weights;

static void tfl_pk_dw_quads_setup(const aotc_tfl_conv_params *p, const int32_t *wb, __m512i bias,
                                  tfl_pk_dw_quad_weights *q) {
    __m512i sum = _mm512_setzero_si512();
    uint8_t order[64];
    int32_t ky, kx, j;
    q->qr = (p->kw + 3) / 4;
    for (j = 0; j < 64; ++j) order[j] = (uint8_t)(16 * (j % 4) + j / 4); /* lane c's byte t: tap t's channel c */
    q->idx = _mm512_loadu_si512(order);
    for (ky = 0; ky < p->kh; ++ky) {
        uint8_t taps[128]; /* the row's taps' weights, tap-major, 0 past kw */
        memset(taps, 0, sizeof taps);
        for (kx = 0; kx < p->kw; ++kx) {
            const __m512i w = _mm512_loadu_si512(wb + (ky * p->kw + kx) * 16); /* (uint16_t)w a lane */
            sum = _mm512_add_epi32(sum, _mm512_srai_epi32(_mm512_slli_epi32(w, 16), 16));
            _mm_storeu_si128((__m128i *)(taps + 16 * kx), _mm512_cvtepi32_epi8(w));
        }
        for (j = 0; j < q->qr; ++j)
            q->wr[ky * q->qr + j] = _mm512_permutexvar_epi8(q->idx, _mm512_loadu_si512(taps + 64 * j));
    }
    q->bias = _mm512_sub_epi32(bias, _mm512_slli_epi32(sum, 7));
}

/* output row oy (batch b) of one block of 16 channels (from c0, m) by the byte path (inlined in tfl_pk_dw_items:
 * out of it, gcc 12 read the weights and the requantisation's constants from memory at every dot product) */
TFL_PK_INLINE void tfl_pk_dw_quads_row(const aotc_tfl_conv_params *p, const int8_t *x, const tfl_pk_dw_quad_weights *q,
                                       int32_t b, int32_t oy, int32_t c0, __mmask16 m, const tfl_pk_out *o, int8_t *y,
                                       uint8_t *band, tfl_pk_dw_ring *ring) {
    const int32_t pw = tfl_pk_dw_span(p);
    const int64_t step = (int64_t)p->sw * 16;
    const uint8_t *const *rp = ring->rp;
    int8_t *yr = y + ((int64_t)b * p->oh + oy) * p->ow * p->oc + c0;
    int32_t ox;
    tfl_pk_dw_rows(p, x, oy, b, c0, pw, m, 0x80, band, ring);
    /* a 3 x 3 kernel (MobileNet's, one quad a row) and a 5 x 5 one (EfficientNet's, two) with kh and qr constants:
     * their loops unrolled, the weights in registers (issue 64: with kh and qr read at run time gcc 12 kept the step
     * multiples on the stack and copied each sum between two registers at every byte dot product) */
#define TFL_PK_DW_QROW(KH, QR, F)                                                                                \
    do {                                                                                                        \
        for (ox = 0; ox + 4 <= p->ow; ox += 4)                                                                  \
            tfl_pk_dw_quad_run(KH, QR, rp, ox * step, step, q->wr, q->idx, q->bias, 4, o, yr + (int64_t)ox * p->oc, \
                               p->oc, m, F);                                                                    \
        switch (p->ow - ox) {                                                                                   \
        case 3: tfl_pk_dw_quad_run(KH, QR, rp, ox * step, step, q->wr, q->idx, q->bias, 3, o, yr + (int64_t)ox * p->oc, p->oc, m, F); break; \
        case 2: tfl_pk_dw_quad_run(KH, QR, rp, ox * step, step, q->wr, q->idx, q->bias, 2, o, yr + (int64_t)ox * p->oc, p->oc, m, F); break; \
        case 1: tfl_pk_dw_quad_run(KH, QR, rp, ox * step, step, q->wr, q->idx, q->bias, 1, o, yr + (int64_t)ox * p->oc, p->oc, m, F); break; \
        default: break;                                                                                         \
        }                                                                                                       \
    } while (0)
    if (p->kh == 3 && q->qr == 1 && o->rq.u32) TFL_PK_DW_QROW(3, 1, TFL_PK_FAST_U32);
    else if (p->kh == 3 && q->qr == 1 && tfl_pk_rq_fast(&o->rq)) TFL_PK_DW_QROW(3, 1, 1);
    else if (p->kh == 3 && q->qr == 1) TFL_PK_DW_QROW(3, 1, 0);
    else if (p->kh == 5 && q->qr == 2 && tfl_pk_rq_fast(&o->rq)) TFL_PK_DW_QROW(5, 2, 1);
    else if (p->kh == 5 && q->qr == 2) TFL_PK_DW_QROW(5, 2, 0);
    else TFL_PK_DW_QROW(p->kh, q->qr, 0);
#undef TFL_PK_DW_QROW
}
#endif

/* output row oy (batch b) of one block of 16 channels (from c0, m; wb its weights, bv its bias) by 16-bit dot
 * products */
static void tfl_pk_dw_row(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t *wb, __m512i bv, int32_t b,
                          int32_t oy, int32_t c0, __mmask16 m, const tfl_pk_out *o, int8_t *y, uint8_t *band,
                          tfl_pk_dw_ring *ring) {
    const int32_t pw = tfl_pk_dw_span(p);
    const int64_t step = (int64_t)p->sw * 16;
    const uint8_t *const *rp = ring->rp;
    int8_t *yr = y + ((int64_t)b * p->oh + oy) * p->ow * p->oc + c0;
    int32_t ox;
    tfl_pk_dw_rows(p, x, oy, b, c0, pw, m, 0, band, ring);
    for (ox = 0; ox + 4 <= p->ow; ox += 4)
        tfl_pk_dw_run(p, rp, ox * step, step, wb, bv, 4, o, yr + (int64_t)ox * p->oc, m);
    switch (p->ow - ox) {
    case 3: tfl_pk_dw_run(p, rp, ox * step, step, wb, bv, 3, o, yr + (int64_t)ox * p->oc, m); break;
    case 2: tfl_pk_dw_run(p, rp, ox * step, step, wb, bv, 2, o, yr + (int64_t)ox * p->oc, m); break;
    case 1: tfl_pk_dw_run(p, rp, ox * step, step, wb, bv, 1, o, yr + (int64_t)ox * p->oc, m); break;
    default: break;
    }
}

/* DEPTHWISE_CONV_2D's work for the pool (aotc_threads.h): items of (block of 16 channels, run of output rows), each
 * item's input rows made once in its ring (runs of a few rows, claimed one by one, made each input row up to kh
 * times); runs of all the rows on one thread, else as many as give every block's rows at least TFL_PK_DW_ITEMS
 * items in all. The band in scratch on one thread, on each thread's stack with a pool (up to TFL_PK_DW_STACK bytes:
 * a 3 x 3 band of a 224-wide image is 11 KB; a wider band runs on the calling thread alone, in scratch) */
#define TFL_PK_DW_ITEMS 16
#define TFL_PK_DW_STACK 16384
typedef struct {
    const aotc_tfl_conv_params *p;
    const int8_t *x;
    const int32_t *wp, *bias;
    const tfl_pk_out *o;
    int8_t *y;
    uint8_t *scratch;
    int32_t runs;  /* of output rows, a block */
    int32_t blocks, across; /* across: items run-major (a run's rows for every block in turn), else block-major */
} tfl_pk_dw_job;

/* An input past which DEPTHWISE_CONV_2D goes a run of TFL_PK_DW_RUN output rows at a time across the blocks, not a
 * block at a time down the image: a block's band reads 16 bytes of each pixel, so block by block such an input came
 * from past the L2 once for each block (issue 64: MobileNetV2's 112 x 112 x 96 stride-2 layer spent 45 % of its time
 * making bands); run by run its rows stay in the cache for the next blocks, at the cost of kh - sh rows made again a
 * run */
#ifndef TFL_PK_DW_ACROSS_BYTES
#define TFL_PK_DW_ACROSS_BYTES (512 * 1024)
#endif
#define TFL_PK_DW_RUN 8

static void tfl_pk_dw_items(void *ctx, int32_t begin, int32_t end) {
    const tfl_pk_dw_job *J = (const tfl_pk_dw_job *)ctx;
    const aotc_tfl_conv_params *p = J->p;
    const int32_t rows = p->n * p->oh, taps = p->kh * p->kw;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    uint8_t own[TFL_PK_DW_STACK], *band = aotc_tfl_depthwise_s8_packed_scratch_bytes(p) <= TFL_PK_DW_STACK ? own : J->scratch;
#else
    uint8_t *band = J->scratch;
#endif
    tfl_pk_out o = *J->o; /* (its channels' requantisation changes a block at a time) */
#if defined(__AVX512VBMI__)
    const int quads = tfl_pk_dw_quads(p);
    tfl_pk_dw_quad_weights q;
#endif
    const int32_t per_run = (rows + J->runs - 1) / J->runs;
    int32_t i, r;
    for (i = begin; i < end; ++i) {
        /* the block's requantisation, bias (and the byte path's weights), a ring anew, then the run's rows */
        const int32_t blk = J->across ? i % J->blocks : i / J->runs, run = J->across ? i / J->blocks : i % J->runs;
        const int32_t c0 = blk * 16, r0 = run * per_run, r1 = r0 + per_run < rows ? r0 + per_run : rows;
        const __mmask16 m = (__mmask16)(p->c - c0 >= 16 ? 0xFFFFu : (1u << (p->c - c0)) - 1u);
        const __m512i bv = _mm512_loadu_si512(J->bias + c0);
        tfl_pk_dw_ring ring;
        tfl_pk_dw_ring_clear(&ring);
        tfl_pk_out_channels(&o, p->mult + c0, p->shift + c0, m);
#if defined(__AVX512VBMI__)
        if (quads) {
            tfl_pk_dw_quads_setup(p, J->wp + (int64_t)c0 * taps, bv, &q);
            /* (the 10-operation requantisation where it is exact: each sum the folded bias and kh qr quads) */
            tfl_pk_rq_u32(&o.rq, _mm512_maskz_loadu_epi32(m, p->mult + c0), _mm512_maskz_loadu_epi32(m, p->shift + c0),
                          p->y_zero, tfl_pk_sums_small(q.bias, (int64_t)4 * p->kh * q.qr));
            for (r = r0; r < r1; ++r) tfl_pk_dw_quads_row(p, J->x, &q, r / p->oh, r % p->oh, c0, m, &o, J->y, band, &ring);
            continue;
        }
#endif
        for (r = r0; r < r1; ++r)
            tfl_pk_dw_row(p, J->x, J->wp + (int64_t)c0 * taps, bv, r / p->oh, r % p->oh, c0, m, &o, J->y, band, &ring);
    }
}

/* DEPTHWISE_CONV_2D, 16 channels at a time, an output row at a time from its band in scratch (no tests a tap):
 * its positions 4 at a time; with VBMI a kernel row's taps by one byte dot product (tfl_pk_dw_quads) */
void aotc_tfl_depthwise_s8_packed(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t *wp,
                                  const int32_t *bias, int8_t *y, uint8_t *scratch) {
    tfl_pk_out o;
    tfl_pk_dw_job J;
    tfl_pk_out_init(&o, p, NULL);
    const int32_t blocks = (p->c + 15) / 16;
    const int32_t rows = p->n * p->oh;
    J.p = p, J.x = x, J.wp = wp, J.bias = bias, J.o = &o, J.y = y, J.scratch = scratch, J.runs = 1;
    J.blocks = blocks, J.across = blocks > 1 && rows > TFL_PK_DW_RUN && (int64_t)p->n * p->h * p->w * p->c > TFL_PK_DW_ACROSS_BYTES;
    if (J.across) J.runs = (rows + TFL_PK_DW_RUN - 1) / TFL_PK_DW_RUN;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    if (aotc_tfl_depthwise_s8_packed_scratch_bytes(p) <= TFL_PK_DW_STACK &&
        (int64_t)rows * p->ow * p->c * p->kh * p->kw >= TFL_PK_POOL_MIN_MACS / 4) { /* (a tap: about 4 MACs of a conv) */
        int32_t runs = (TFL_PK_DW_ITEMS + blocks - 1) / blocks;
        runs = runs < rows ? runs : rows;
        J.runs = runs > J.runs ? runs : J.runs;
        aotc_parallel_for(tfl_pk_dw_items, &J, blocks * J.runs);
        return;
    }
#endif
    tfl_pk_dw_items(&J, 0, blocks * J.runs);
}
#elif TFL_PK_AVX2
/* m (1 .. 8) int8 at x sign-extended to 8 int32 lanes (past m: 0) */
TFL_PK_INLINE __m256i tfl_pk_avx2_s8x8(const int8_t *x, int32_t m) {
    int64_t v = 0;
    if (m == 8) return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)x));
    memcpy(&v, x, (size_t)m);
    return _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(v));
}

/* 8 packed weights ((int32)(uint16_t)w) as int32 w */
TFL_PK_INLINE __m256i tfl_pk_avx2_w16(const int32_t *w) {
    return _mm256_srai_epi32(_mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)w), 16), 16);
}

/* one output position of 8 channels (m of them stored): the taps of rows ky0 .. ky1 - 1 and columns kx0 .. kx1 - 1
 * read from x (xp: the window's top left, rows wstep apart; the others' products are in acc) */
TFL_PK_INLINE void tfl_pk_avx2_dw_point(const aotc_tfl_conv_params *p, const int8_t *xp, int64_t wstep,
                                        const int32_t *wb, int32_t ky0, int32_t ky1, int32_t kx0, int32_t kx1,
                                        __m256i acc, const tfl_x86_rqv8 *rq, int32_t m, int8_t *y) {
    const int64_t cstep = (int64_t)p->dw * p->c;
    __m256i v;
    __m128i o8;
    int32_t ky, kx;
    for (ky = ky0; ky < ky1; ++ky)
        for (kx = kx0; kx < kx1; ++kx)
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(tfl_pk_avx2_s8x8(xp + ky * wstep + kx * cstep, m),
                                                          _mm256_loadu_si256((const __m256i *)(wb + 16 * (ky * p->kw + kx)))));
    v = _mm256_add_epi32(tfl_x86_requantv8(acc, rq), _mm256_set1_epi32(p->y_zero));
    v = _mm256_min_epi32(_mm256_max_epi32(v, _mm256_set1_epi32(p->y_min)), _mm256_set1_epi32(p->y_max));
    o8 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    o8 = _mm_packs_epi16(o8, o8);
    if (m == 8) _mm_storel_epi64((__m128i *)y, o8);
    else {
        const int64_t bytes = _mm_cvtsi128_si64(o8);
        memcpy(y, &bytes, (size_t)m);
    }
}

#define TFL_PK_AVX2_DW_TAPS 49 /* taps at most of the 16-channel path (tfl_pk_avx2_dw16); more: 8 channels a tap */

/* 16 int8 at x (m of them, 1 .. 16; past m: 0) */
TFL_PK_INLINE __m128i tfl_pk_avx2_s8x16(const int8_t *x, int32_t m) {
    int8_t v[16] = {0};
    if (m == 16) return _mm_loadu_si128((const __m128i *)(const void *)x);
    memcpy(v, x, (size_t)m);
    return _mm_loadu_si128((const __m128i *)(const void *)v);
}

/* A position whose window lies inside x, all 16 channels: the taps paired in order across rows (taps 2i, 2i + 1 at
 * xp + off[2i], xp + off[2i + 1]; an odd count's last pair reads its tap twice, the pair's second weight 0), each
 * pair's bytes interleaved and sign-extended to 16 bits, one vpmaddwd of 8 channels with wq[i] (each (uint16_t)w of
 * tap 2i, tap 2i + 1's in the high half): a 3 x 3's 5 pairs where the row pairs take 6, and no tests of the window's
 * edges a tap. Exact as the row pairs (the same products, summed in another order, no wrap: see tfl_pk_avx2_dw16) */
TFL_PK_INLINE void tfl_pk_avx2_dw16_inner(const int8_t *xp, const int64_t *off, const int32_t (*wq)[16],
                                          int32_t pairs, __m256i *a0, __m256i *a1) {
    __m256i s0 = *a0, s1 = *a1;
    int32_t i;
    for (i = 0; i < pairs; ++i) {
        const __m128i xa = _mm_loadu_si128((const __m128i *)(const void *)(xp + off[2 * i]));
        const __m128i xb = _mm_loadu_si128((const __m128i *)(const void *)(xp + off[2 * i + 1]));
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb)),
                                                    _mm256_loadu_si256((const __m256i *)wq[i])));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_unpackhi_epi8(xa, xb)),
                                                    _mm256_loadu_si256((const __m256i *)(wq[i] + 8))));
    }
    *a0 = s0, *a1 = s1;
}

/* a position's 16 sums (a0, a1) requantised (u where u->on, else rq and the zero point yz), clamped (where clamp: 0
 * where the bounds are int8's own, which the packs' saturation gives), m bytes to yo */
TFL_PK_INLINE void tfl_pk_avx2_dw16_out(const tfl_pk_avx2_u32 *u, const tfl_x86_rqv8 *rq, __m256i yz, __m256i ymin,
                                        __m256i ymax, int clamp, __m256i a0, __m256i a1, int8_t *yo, int32_t m) {
    __m256i v0, v1;
    __m128i o8;
    if (u->on) v0 = tfl_pk_avx2_requant_u32(u, 0, a0), v1 = tfl_pk_avx2_requant_u32(u, 1, a1);
    else {
        v0 = _mm256_add_epi32(tfl_x86_requantv8(a0, &rq[0]), yz);
        v1 = _mm256_add_epi32(tfl_x86_requantv8(a1, &rq[1]), yz);
    }
    if (clamp) {
        v0 = _mm256_min_epi32(_mm256_max_epi32(v0, ymin), ymax);
        v1 = _mm256_min_epi32(_mm256_max_epi32(v1, ymin), ymax);
    }
    /* 16 values in int8's range: packed to 16 bits (0-3, 8-11 | 4-7, 12-15), re-ordered, to bytes */
    v0 = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
    o8 = _mm_packs_epi16(_mm256_castsi256_si128(v0), _mm256_extracti128_si256(v0, 1));
    if (m == 16) _mm_storeu_si128((__m128i *)(void *)yo, o8);
    else {
        int8_t tmp[16];
        _mm_storeu_si128((__m128i *)(void *)tmp, o8);
        memcpy(yo, tmp, (size_t)m);
    }
}

/* The pair rows' path (tfl_pk_avx2_dw16_rows): an input row of a block made once into 16-bit pairs of two
 * neighbouring padded columns, 16 channels a pair (64 bytes: channels 0 - 7's pairs, then 8 - 15's), x_zero under the
 * padding, so that every position's taps (inside x or not) are plain vpmaddwd of a pair with wpair (no shuffles there,
 * no edge tests: the padding's products are x_zero times the weight, as the edge path's sums) */
#define TFL_PK_AVX2_DWR_KH 5      /* kernel rows at most (a ring of as many pair rows) */
#define TFL_PK_AVX2_DWR_KG 3      /* pairs of kernel columns at most (k_w <= 6) */
#define TFL_PK_AVX2_DWR_PAIRS 120 /* pairs a row at most (stride 1: ow + 2 kg - 2; stride 2: ow + kg - 1) */

/* the 16 channels (m of them, else x_zero) of padded column j of input row xr (NULL: a row outside x) */
TFL_PK_INLINE __m128i tfl_pk_avx2_dwr_px(const aotc_tfl_conv_params *p, const int8_t *xr, int32_t j, int32_t m,
                                         __m128i xz8) {
    const int32_t ix = j - p->pad_left;
    if (xr == NULL || ix < 0 || ix >= p->w) return xz8;
    if (m == 16) return _mm_loadu_si128((const __m128i *)(const void *)(xr + (int64_t)ix * p->c));
    return _mm_blendv_epi8(xz8, tfl_pk_avx2_s8x16(xr + (int64_t)ix * p->c, m),
                           _mm_cmpgt_epi8(_mm_set1_epi8((char)m), _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)));
}

/* pair j's two columns' 16 channels as 16-bit pairs at pr (channels 0 - 7, then 8 - 15) */
TFL_PK_INLINE void tfl_pk_avx2_dwr_pair(__m128i a, __m128i b, int16_t *pr) {
    _mm256_storeu_si256((__m256i *)(void *)pr, _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b)));
    _mm256_storeu_si256((__m256i *)(void *)(pr + 16), _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(a, b)));
}

/* pair row pr (np pairs) of input row xr: pair j of padded columns j, j + 1 (stride 1) or 2 j, 2 j + 1 (stride 2);
 * the pairs whose columns are all inside x (and all 16 channels) by plain loads, the others column by column */
static void tfl_pk_avx2_dwr_row(const aotc_tfl_conv_params *p, const int8_t *xr, int32_t np, int32_t m, __m128i xz8,
                                int16_t *pr) {
    const int32_t sw = p->sw, c = p->c;
    /* pairs j0 .. j1 - 1 inside: first column sw j >= pad_left, last sw j + 1 < pad_left + w */
    int32_t j0 = (p->pad_left + sw - 1) / sw, j1 = (p->pad_left + p->w - 1 + sw - 1) / sw, j;
    if (xr == NULL || m < 16) j0 = j1 = np;
    j1 = j1 < np ? j1 : np;
    j0 = j0 < j1 ? j0 : j1;
    for (j = 0; j < j0; ++j)
        tfl_pk_avx2_dwr_pair(tfl_pk_avx2_dwr_px(p, xr, sw * j, m, xz8), tfl_pk_avx2_dwr_px(p, xr, sw * j + 1, m, xz8),
                             pr + (int64_t)j * 32);
    if (j0 < j1) {
        const int8_t *xp = xr + (int64_t)(sw * j0 - p->pad_left) * c;
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)xp);
        if (sw == 1) {
            for (j = j0; j < j1; ++j, xp += c) { /* (each column loaded once) */
                const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(xp + c));
                tfl_pk_avx2_dwr_pair(a, b, pr + (int64_t)j * 32);
                a = b;
            }
        } else {
            for (j = j0; j < j1; ++j, xp += 2 * (int64_t)c)
                tfl_pk_avx2_dwr_pair(_mm_loadu_si128((const __m128i *)(const void *)xp),
                                     _mm_loadu_si128((const __m128i *)(const void *)(xp + c)), pr + (int64_t)j * 32);
        }
    }
    for (j = j1; j < np; ++j)
        tfl_pk_avx2_dwr_pair(tfl_pk_avx2_dwr_px(p, xr, sw * j, m, xz8), tfl_pk_avx2_dwr_px(p, xr, sw * j + 1, m, xz8),
                             pr + (int64_t)j * 32);
}

/* one output row's positions from the pair rows under it (rows[ky]: kernel row ky's, at output 0), kg pairs of
 * kernel columns (wpair[ky * kw + 2 g]: their weights); kh and kg constants where inlined with them */
TFL_PK_INLINE void tfl_pk_avx2_dwr_out_row(const aotc_tfl_conv_params *p, const int16_t *const *rows, int32_t kh,
                                           int32_t kg, const int32_t (*wpair)[16], const tfl_pk_avx2_u32 *u,
                                           const tfl_x86_rqv8 *rq, const __m256i *bias8, __m256i yz, __m256i ymin,
                                           __m256i ymax, int clamp, int8_t *yo, int32_t m) {
    const int32_t gstep = p->sw == 1 ? 64 : 32; /* int16 from pair g to g + 1 */
    int32_t ox, ky, g;
    for (ox = 0; ox < p->ow; ++ox, yo += p->c) {
        __m256i a0 = bias8[0], a1 = bias8[1];
        for (ky = 0; ky < kh; ++ky) {
            const int16_t *pr = rows[ky] + (int64_t)ox * 32;
            for (g = 0; g < kg; ++g) {
                const int32_t *wt = wpair[ky * p->kw + 2 * g];
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(pr + g * gstep)),
                                                            _mm256_loadu_si256((const __m256i *)wt)));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(pr + g * gstep + 16)),
                                                            _mm256_loadu_si256((const __m256i *)(wt + 8))));
            }
        }
        tfl_pk_avx2_dw16_out(u, rq, yz, ymin, ymax, clamp, a0, a1, yo, m);
    }
}

/* The block c0 (m channels) by pair rows where the shape allows (dilation 1, stride 1 or 2, the ring's bounds):
 * a ring of k_h pair rows, each input row made once (tfl_pk_avx2_dwr_row), a row of x_zero pairs for those outside
 * x. 0 where not taken. */
static int tfl_pk_avx2_dw16_rows(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t (*wpair)[16],
                                 const tfl_pk_avx2_u32 *u, const tfl_x86_rqv8 *rq, const __m256i *bias8, int32_t c0,
                                 int32_t m, int8_t *y) {
    const int32_t kg = (p->kw + 1) / 2, np = p->sw == 1 ? p->ow + 2 * kg - 2 : p->ow + kg - 1;
    const __m256i yz = _mm256_set1_epi32(p->y_zero), ymin = _mm256_set1_epi32(p->y_min);
    const __m256i ymax = _mm256_set1_epi32(p->y_max);
    const __m128i xz8 = _mm_set1_epi8((char)p->x_zero);
    const int clamp = p->y_min > -128 || p->y_max < 127;
    int16_t ring[TFL_PK_AVX2_DWR_KH + 1][TFL_PK_AVX2_DWR_PAIRS * 32]; /* slot kh: the x_zero row */
    int32_t held[TFL_PK_AVX2_DWR_KH];
    const int16_t *rows[TFL_PK_AVX2_DWR_KH];
    int8_t *yo;
    int32_t b, oy, ky;
    if (p->dw != 1 || p->dh != 1 || (p->sw != 1 && p->sw != 2) || p->kh > TFL_PK_AVX2_DWR_KH ||
        kg > TFL_PK_AVX2_DWR_KG || np > TFL_PK_AVX2_DWR_PAIRS)
        return 0;
    tfl_pk_avx2_dwr_row(p, NULL, np, m, xz8, ring[p->kh]);
    for (b = 0; b < p->n; ++b) {
        for (ky = 0; ky < p->kh; ++ky) held[ky] = -1;
        for (oy = 0; oy < p->oh; ++oy) {
            const int32_t iy0 = oy * p->sh - p->pad_top;
            for (ky = 0; ky < p->kh; ++ky) { /* the input rows under this output row as pairs, once each */
                const int32_t iy = iy0 + ky, slot = iy % p->kh;
                if (iy < 0 || iy >= p->h) {
                    rows[ky] = ring[p->kh];
                    continue;
                }
                if (held[slot] != iy) {
                    tfl_pk_avx2_dwr_row(p, x + ((int64_t)b * p->h + iy) * p->w * p->c + c0, np, m, xz8, ring[slot]);
                    held[slot] = iy;
                }
                rows[ky] = ring[slot];
            }
            yo = y + ((int64_t)b * p->oh + oy) * p->ow * p->c + c0;
            if (p->kh == 3 && kg == 2 && !clamp)
                tfl_pk_avx2_dwr_out_row(p, rows, 3, 2, wpair, u, rq, bias8, yz, ymin, ymax, 0, yo, m);
            else if (p->kh == 3 && kg == 2) tfl_pk_avx2_dwr_out_row(p, rows, 3, 2, wpair, u, rq, bias8, yz, ymin, ymax, 1, yo, m);
            else if (p->kh == 5 && kg == 3) tfl_pk_avx2_dwr_out_row(p, rows, 5, 3, wpair, u, rq, bias8, yz, ymin, ymax, 1, yo, m);
            else tfl_pk_avx2_dwr_out_row(p, rows, p->kh, kg, wpair, u, rq, bias8, yz, ymin, ymax, 1, yo, m);
        }
    }
    return 1;
}

/* the 16 channels c0 .. c0 + 15 (m stored) of every output position: the taps of a kernel row two at a time, their
 * 16 channels' bytes interleaved and sign-extended to 16-bit pairs, one vpmaddwd with the pair of weights (wpair[t]:
 * taps t and t + 1 of the row, (uint16_t)w each; wone[t]: tap t alone, the pair's second weight 0) sums 8 channels'
 * two taps exactly; the taps outside x as the 8-channel path (x_zero times their weights, from the sum of all) */
static void tfl_pk_avx2_dw16(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t *wb, const int32_t *bias,
                             int32_t c0, int32_t m, int8_t *y) {
    const int32_t taps = p->kh * p->kw, c = p->c;
    const int64_t wstep = (int64_t)p->dh * p->w * c, cstep = (int64_t)p->dw * c;
    const __m256i xz = _mm256_set1_epi32(p->x_zero), yz = _mm256_set1_epi32(p->y_zero);
    const __m256i ymin = _mm256_set1_epi32(p->y_min), ymax = _mm256_set1_epi32(p->y_max);
    const int32_t pairs = (taps + 1) / 2;
    int32_t wpair[TFL_PK_AVX2_DW_TAPS][16], mult[16], shift[16], bv[16];
    int32_t wq[(TFL_PK_AVX2_DW_TAPS + 1) / 2][16]; /* tfl_pk_avx2_dw16_inner's pairs of taps across rows */
    int64_t off[TFL_PK_AVX2_DW_TAPS + 1];          /* their bytes' offsets from the window's first */
    tfl_x86_rqv8 rq[2];
    tfl_pk_avx2_u32 u;
    __m256i wsum[2], bias8[2];
    int32_t i, h, t, b, oy, ox, ky, kx, ox_lo, ox_hi;
    int64_t bmax = 0;
    for (i = 0; i < 16; ++i) { /* (past the channels: a valid requantisation, its lanes not stored) */
        mult[i] = i < m ? p->mult[c0 + i] : 1 << 30, shift[i] = i < m ? p->shift[c0 + i] : 0;
        bv[i] = i < m ? bias[c0 + i] : 0;
        bmax = (bv[i] < 0 ? -(int64_t)bv[i] : bv[i]) > bmax ? (bv[i] < 0 ? -(int64_t)bv[i] : bv[i]) : bmax;
    }
    /* the sums' bound: the (folded) bias, x_zero times the weights of taps outside x, the taps' products */
    tfl_pk_avx2_rq_u32(&u, mult, shift, m, p->y_zero, bmax + (int64_t)2 * 128 * 128 * taps < ((int64_t)1 << 30));
    for (h = 0; h < 2; ++h) {
        rq[h] = tfl_x86_rqv8_init(_mm256_loadu_si256((const __m256i *)(mult + 8 * h)),
                                  _mm256_loadu_si256((const __m256i *)(shift + 8 * h)));
        bias8[h] = _mm256_loadu_si256((const __m256i *)(bv + 8 * h));
        wsum[h] = _mm256_setzero_si256();
        for (t = 0; t < taps; ++t) {
            const __m256i w = _mm256_loadu_si256((const __m256i *)(wb + 16 * t + 8 * h));
            const __m256i next = t % p->kw + 1 < p->kw ? _mm256_loadu_si256((const __m256i *)(wb + 16 * (t + 1) + 8 * h))
                                                       : _mm256_setzero_si256();
            wsum[h] = _mm256_add_epi32(wsum[h], _mm256_srai_epi32(_mm256_slli_epi32(w, 16), 16));
            _mm256_storeu_si256((__m256i *)(wpair[t] + 8 * h), _mm256_or_si256(w, _mm256_slli_epi32(next, 16)));
            if (t % 2 == 0) {
                const __m256i w2 = t + 1 < taps ? _mm256_loadu_si256((const __m256i *)(wb + 16 * (t + 1) + 8 * h))
                                                : _mm256_setzero_si256();
                _mm256_storeu_si256((__m256i *)(wq[t / 2] + 8 * h), _mm256_or_si256(w, _mm256_slli_epi32(w2, 16)));
            }
        }
    }
    if (tfl_pk_avx2_dw16_rows(p, x, (const int32_t (*)[16])wpair, &u, rq, bias8, c0, m, y)) return;
    for (t = 0; t < taps; ++t) off[t] = (t / p->kw) * wstep + (t % p->kw) * cstep;
    off[taps] = off[taps - 1];
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy) {
            const int32_t iy0 = oy * p->sh - p->pad_top;
            int32_t ky0 = 0, ky1 = p->kh; /* the kernel rows inside x: ky0 .. ky1 - 1 */
            tfl_taps_inside(iy0, p->dh, p->h, &ky0, &ky1);
            if (m == 16 && ky1 - ky0 == p->kh) { /* the row's positions whose windows are inside x: ox_lo .. ox_hi - 1 */
                const int32_t last = p->w - 1 + p->pad_left - (p->kw - 1) * p->dw; /* ox sw at most this */
                ox_lo = (p->pad_left + p->sw - 1) / p->sw;
                ox_hi = last < 0 ? 0 : last / p->sw + 1 < p->ow ? last / p->sw + 1 : p->ow;
            } else ox_lo = ox_hi = 0;
            for (ox = 0; ox < p->ow; ++ox) {
                const int32_t ix0 = ox * p->sw - p->pad_left;
                const int8_t *xp = x + (((int64_t)b * p->h + iy0) * p->w + ix0) * c + c0;
                int32_t kx0 = 0, kx1 = p->kw, ky2 = ky1; /* ky2: the row pairs' last row + 1 */
                __m256i a0 = bias8[0], a1 = bias8[1];
                if (ox == ox_lo && ox_lo < ox_hi) { /* those positions in one loop: no edge tests, pointers stepped */
                    int8_t *yo = y + (((int64_t)b * p->oh + oy) * p->ow + ox) * c + c0;
                    for (; ox < ox_hi; ++ox, xp += (int64_t)p->sw * c, yo += c) {
                        a0 = bias8[0], a1 = bias8[1];
                        if (pairs == 5) tfl_pk_avx2_dw16_inner(xp, off, (const int32_t (*)[16])wq, 5, &a0, &a1);
                        else tfl_pk_avx2_dw16_inner(xp, off, (const int32_t (*)[16])wq, pairs, &a0, &a1);
                        tfl_pk_avx2_dw16_out(&u, rq, yz, ymin, ymax, 1, a0, a1, yo, 16);
                    }
                    --ox;
                    continue;
                }
                tfl_taps_inside(ix0, p->dw, p->w, &kx0, &kx1);
                if (m == 16 && ky1 - ky0 == p->kh && kx1 - kx0 == p->kw) { /* the window inside x */
                    if (pairs == 5) tfl_pk_avx2_dw16_inner(xp, off, (const int32_t (*)[16])wq, 5, &a0, &a1); /* 3 x 3 */
                    else tfl_pk_avx2_dw16_inner(xp, off, (const int32_t (*)[16])wq, pairs, &a0, &a1);
                    ky2 = ky0; /* (no row pairs) */
                } else if (ky1 - ky0 < p->kh || kx1 - kx0 < p->kw) { /* x_zero times the weights of taps outside x */
                    __m256i in0 = _mm256_setzero_si256(), in1 = in0;
                    for (ky = ky0; ky < ky1; ++ky)
                        for (kx = kx0; kx < kx1; ++kx) {
                            in0 = _mm256_add_epi32(in0, tfl_pk_avx2_w16(wb + 16 * (ky * p->kw + kx)));
                            in1 = _mm256_add_epi32(in1, tfl_pk_avx2_w16(wb + 16 * (ky * p->kw + kx) + 8));
                        }
                    a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(xz, _mm256_sub_epi32(wsum[0], in0)));
                    a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(xz, _mm256_sub_epi32(wsum[1], in1)));
                }
                for (ky = ky0; ky < ky2; ++ky) {
                    const int8_t *xr = xp + ky * wstep;
                    for (kx = kx0; kx < kx1; kx += 2) {
                        const int32_t *wt = wpair[ky * p->kw + kx];
                        const __m128i xa = tfl_pk_avx2_s8x16(xr + kx * cstep, m);
                        /* the row's last tap alone: its pair's second weight 0 (the row's end, or the last tap
                         * inside x: then its own weight only, the next tap's taken apart as outside x) */
                        const __m128i xb = kx + 1 < kx1 ? tfl_pk_avx2_s8x16(xr + (kx + 1) * cstep, m) : xa;
                        __m256i w0 = _mm256_loadu_si256((const __m256i *)wt), w1 = _mm256_loadu_si256((const __m256i *)(wt + 8));
                        if (kx + 1 >= kx1) { /* the pair's second weight 0 */
                            const __m256i low = _mm256_set1_epi32(0xFFFF);
                            w0 = _mm256_and_si256(w0, low), w1 = _mm256_and_si256(w1, low);
                        }
                        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_unpacklo_epi8(xa, xb)), w0));
                        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_unpackhi_epi8(xa, xb)), w1));
                    }
                }
                tfl_pk_avx2_dw16_out(&u, rq, yz, ymin, ymax, 1, a0, a1, y + (((int64_t)b * p->oh + oy) * p->ow + ox) * c + c0,
                                     m);
            }
        }
}

/* AVX2 (no VNNI): 8 channels at a time, each tap's products by vpmaddwd of x sign-extended to 32 bits and the
 * packed weight (int32)(uint16_t)w, whose high half 0 makes the pair's second product 0 (exact); taps under the
 * padding read x_zero, as the plain loop (their products summed apart: the window's rows and columns inside x are
 * found once per row and position, no test a tap); the requantisation and clamp in 8 lanes (tfl_x86_requantv8) */
void aotc_tfl_depthwise_s8_packed(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t *wp,
                                  const int32_t *bias, int8_t *y, uint8_t *scratch) {
    const int32_t taps = p->kh * p->kw, c = p->c;
    const int64_t wstep = (int64_t)p->dh * p->w * c;
    const __m256i xz = _mm256_set1_epi32(p->x_zero);
    int32_t mult[8], shift[8], bv[8];
    int32_t c0, i, b, oy, ox, t;
    (void)scratch; /* (AVX-512's band) */
    if (taps <= TFL_PK_AVX2_DW_TAPS) { /* 16 channels, two taps a vpmaddwd */
        for (c0 = 0; c0 < c; c0 += 16)
            tfl_pk_avx2_dw16(p, x, wp + (int64_t)(c0 / 16) * taps * 16, bias, c0, c - c0 < 16 ? c - c0 : 16, y);
        return;
    }
    for (c0 = 0; c0 < c; c0 += 8) {
        const int32_t m = c - c0 < 8 ? c - c0 : 8;
        const int32_t *wb = wp + (int64_t)(c0 / 16) * taps * 16 + c0 % 16; /* tap t's 8 weights at wb + 16 t */
        tfl_x86_rqv8 rq;
        __m256i bias8, wsum = _mm256_setzero_si256();
        for (i = 0; i < 8; ++i) /* (past the channels: a valid requantisation, its lanes not stored) */
            mult[i] = i < m ? p->mult[c0 + i] : 1 << 30, shift[i] = i < m ? p->shift[c0 + i] : 0,
            bv[i] = i < m ? bias[c0 + i] : 0;
        rq = tfl_x86_rqv8_init(_mm256_loadu_si256((const __m256i *)mult), _mm256_loadu_si256((const __m256i *)shift));
        bias8 = _mm256_loadu_si256((const __m256i *)bv);
        for (t = 0; t < taps; ++t) wsum = _mm256_add_epi32(wsum, tfl_pk_avx2_w16(wb + 16 * t));
        for (b = 0; b < p->n; ++b)
            for (oy = 0; oy < p->oh; ++oy) {
                const int32_t iy0 = oy * p->sh - p->pad_top;
                /* the kernel rows inside x: ky0 .. ky1 - 1 */
                int32_t ky0 = 0, ky1 = p->kh;
                tfl_taps_inside(iy0, p->dh, p->h, &ky0, &ky1);
                for (ox = 0; ox < p->ow; ++ox) {
                    const int32_t ix0 = ox * p->sw - p->pad_left;
                    int32_t kx0 = 0, kx1 = p->kw, ky, kx;
                    __m256i acc = bias8;
                    tfl_taps_inside(ix0, p->dw, p->w, &kx0, &kx1);
                    if (ky1 - ky0 < p->kh || kx1 - kx0 < p->kw) { /* x_zero times the weights of taps outside x */
                        __m256i in = _mm256_setzero_si256();
                        for (ky = ky0; ky < ky1; ++ky)
                            for (kx = kx0; kx < kx1; ++kx)
                                in = _mm256_add_epi32(in, tfl_pk_avx2_w16(wb + 16 * (ky * p->kw + kx)));
                        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(xz, _mm256_sub_epi32(wsum, in)));
                    }
                    tfl_pk_avx2_dw_point(p, x + (((int64_t)b * p->h + iy0) * p->w + ix0) * c + c0, wstep, wb, ky0, ky1,
                                         kx0, kx1, acc, &rq, m, y + (((int64_t)b * p->oh + oy) * p->ow + ox) * c + c0);
                }
            }
    }
}
#else
void aotc_tfl_depthwise_s8_packed(const aotc_tfl_conv_params *p, const int8_t *x, const int32_t *wp,
                                  const int32_t *bias, int8_t *y, uint8_t *scratch) {
    const int32_t taps = p->kh * p->kw, c = p->c;
    int32_t b, oy, ox, ch, ky, kx;
    (void)scratch; /* (AVX-512's band) */
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox)
                for (ch = 0; ch < c; ++ch) {
                    const int32_t *wb = wp + ((int64_t)(ch / 16) * taps * 16 + ch % 16);
                    uint32_t acc = (uint32_t)bias[ch];
                    for (ky = 0; ky < p->kh; ++ky)
                        for (kx = 0; kx < p->kw; ++kx, wb += 16) {
                            const int32_t iy = oy * p->sh - p->pad_top + ky * p->dh;
                            const int32_t ix = ox * p->sw - p->pad_left + kx * p->dw;
                            const int32_t v = iy < 0 || iy >= p->h || ix < 0 || ix >= p->w
                                                  ? p->x_zero
                                                  : x[(((int64_t)b * p->h + iy) * p->w + ix) * c + ch];
                            acc += (uint32_t)(v * (int16_t)(uint16_t)*wb);
                        }
                    y[(((int64_t)b * p->oh + oy) * p->ow + ox) * c + ch] =
                        clamp8(requant_double((int32_t)acc, p->mult[ch], p->shift[ch]) + p->y_zero, p->y_min, p->y_max);
                }
}
#endif
