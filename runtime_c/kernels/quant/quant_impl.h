/* The quantized kernels over one element type, instantiated by quant_int8.c and quant_uint8.c: QT is the type
 * (int8_t or uint8_t), [QT_MIN, QT_MAX] its range, AOTC_Q(name) the function's name. No
 * include guard: it is included once per type. */

/* Patch row r (one input channel and kernel tap, r = (ic * k_h + kh) * k_w + kw; with w_packed 2 the row of
 * qconv_rows's order, aotc_qconv_rows_tap) of one group: the input plane under it, its kernel row kh, the input
 * column under output column 0 (*start) and the output columns [*o0, *o1) whose tap lies inside the image
 * (qconv_patch_row and quant_avx512vnni.h's x86_patch_row). */
static inline const QT *AOTC_Q(qconv_row_cols)(const aotc_qconv_params *p, const QT *xg, int32_t r, int32_t *kh,
                                               int32_t *start, int32_t *o0, int32_t *o1) {
    const int32_t rw = AOTC_QCONV_PACKED(p) == 2 ? aotc_qconv_rows_tap(p, r) : r; /* in the weights' own order */
    const int32_t sw = p->stride_w, kw = rw % p->k_w, s = kw * p->dil_w - p->pad_left;
    const int32_t o1_raw = s < p->in_w ? (p->in_w - s + sw - 1) / sw : 0;
    *kh = (rw / p->k_w) % p->k_h;
    *start = s;
    *o0 = s < 0 ? (-s + sw - 1) / sw : 0;
    *o1 = o1_raw < p->out_w ? o1_raw : p->out_w;
    return xg + (int64_t)(rw / (p->k_w * p->k_h)) * p->in_h * p->in_w;
}

/* A residual QLinearAdd fused into the conv (aotc_qconv_patches_add_*): the ADD of conv value v and
 * residual element rv, as aotc_qadd_*'s loop computes it where both inputs vary (its saturate) */
static inline int32_t AOTC_Q(residual_one)(const aotc_qresidual_params *r, int32_t v, int32_t rv) {
    const aotc_qbinary_params *a = &r->add;
    const float xa = (float)(r->conv_a ? v : rv), xb = (float)(r->conv_a ? rv : v);
    float f = fmaf(xa, a->a_mult, fmaf(xb, a->b_mult, a->bias));
    const float lo = a->y_lo + (float)a->y_zero, hi = a->y_hi + (float)a->y_zero;
    f = f < lo ? lo : f;
    f = f > hi ? hi : f;
    return aotc_round_even(f);
}

#if AOTC_QUANT_VNNI
#include "quant_avx512vnni.h" /* the AVX-512 VNNI paths */
#endif
#include "quant_mve.h" /* Helium's paths (AOTC_QUANT_MVE) */

void AOTC_Q(quantize)(const aotc_qaxis *p, const float *x, QT *y) {
    int32_t o, c, i;
#if AOTC_QUANT_VNNI
    if (p->inner >= 16) {
        AOTC_Q(quantize_avx512)(p, x, y);
        return;
    }
#endif
    for (o = 0; o < p->outer; ++o) {
        for (c = 0; c < p->channels; ++c) {
            const float s = p->scale[c];
            const int32_t z = p->zero[c];
            const float lo = (float)(QT_MIN - z), hi = (float)(QT_MAX - z);
            i = 0;
#if AOTC_QUANT_AVX2
            { /* 8 at a time: the same division, clamp, rounding to nearest even (cvtps2dq) and NaN's zero point */
                const __m256 sv = _mm256_set1_ps(s), lov = _mm256_set1_ps(lo), hiv = _mm256_set1_ps(hi);
                const __m256i zv = _mm256_set1_epi32(z);
                for (; i + 8 <= p->inner; i += 8, x += 8, y += 8) {
                    const __m256 f = _mm256_div_ps(_mm256_loadu_ps(x), sv);
                    const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(f, lov), hiv)), zv);
                    const __m256i v = _mm256_blendv_epi8(zv, q, _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_ORD_Q)));
                    const __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
#if QT_MIN == 0
                    _mm_storel_epi64((__m128i *)(void *)y, _mm_packus_epi16(h, h));
#else
                    _mm_storel_epi64((__m128i *)(void *)y, _mm_packs_epi16(h, h));
#endif
                }
            }
#endif
            for (; i < p->inner; ++i) {
                float f = *x++ / s; /* a division, as onnxruntime does: not a multiply by 1 / s */
                f = f < lo ? lo : f; /* a NaN passes both tests and becomes the zero point */
                f = f > hi ? hi : f;
                *y++ = (QT)(f == f ? aotc_round_even(f) + z : z);
            }
        }
    }
}

void AOTC_Q(dequantize)(const aotc_qaxis *p, const QT *x, float *y) {
    int32_t o, c, i;
    for (o = 0; o < p->outer; ++o) {
        for (c = 0; c < p->channels; ++c) {
            const float s = p->scale[c];
            const int32_t z = p->zero[c];
            for (i = 0; i < p->inner; ++i) *y++ = (float)((int32_t)*x++ - z) * s;
        }
    }
}

/* Patch row r (one input channel and kernel tap, r = (ic * k_h + kh) * k_w + kw) over output
 * positions [p0, p0 + np) of one group: each position's input under that tap plus AOTC_QOFFSET as
 * an unsigned byte, the input zero point where the tap falls in the padding (adding nothing to
 * the sums). Positions of one output row are a strided run of one input row: copied as such. */
static void AOTC_Q(qconv_patch_row)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t r, int32_t p0,
                                    int32_t np, uint8_t *AOTC_RESTRICT out) {
    const uint8_t zero = (uint8_t)(p->x_zero + AOTC_QOFFSET);
    const int32_t ow_n = p->out_w, sw = p->stride_w;
    int32_t kh, start, o0, o1, t, o;
    const QT *plane = AOTC_Q(qconv_row_cols)(p, xg, r, &kh, &start, &o0, &o1);
    for (t = 0; t < np;) { /* one output row's run of positions at a time */
        const int32_t pos = p0 + t, oh = pos / ow_n, first = pos % ow_n;
        const int32_t last = first + (np - t) < ow_n ? first + (np - t) : ow_n;
        const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
        uint8_t *run = out + t - first; /* run[o]: output column o of this row */
        if (ih < 0 || ih >= p->in_h) {
            for (o = first; o < last; ++o) run[o] = zero;
        } else {
            const QT *xs = plane + (int64_t)ih * p->in_w + start;
            const int32_t a = first > o0 ? first : o0, b = last < o1 ? last : o1;
            for (o = first; o < a && o < last; ++o) run[o] = zero;
            if (sw == 1) {
                for (o = a; o < b; ++o) run[o] = (uint8_t)(xs[o] + AOTC_QOFFSET);
            } else {
                for (o = a; o < b; ++o) run[o] = (uint8_t)(xs[(int64_t)o * sw] + AOTC_QOFFSET);
            }
            for (o = b > first ? b : first; o < last; ++o) run[o] = zero;
        }
        t += last - first;
    }
}

#if !AOTC_QUANT_VNNI
/* The patch matrix of output positions [p0, p0 + np) of one group in quads, `width` (np rounded up
 * to whole lanes) positions a row: patch row r of position t at [r / 4][t][r % 4], so one
 * position's four consecutive rows are one 32-bit word (the operand of a 4-way byte dot product);
 * rows past k up to 4 * kq, and positions past np, hold the zero point. Each quad's four rows are
 * gathered as runs, then interleaved. */
static void AOTC_Q(qconv_patch_quads)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t cg,
                                      int32_t p0, int32_t np, int32_t width, int32_t kq,
                                      uint8_t *AOTC_RESTRICT quads) {
    const uint8_t zero = (uint8_t)(p->x_zero + AOTC_QOFFSET);
    const int32_t k = cg * p->k_h * p->k_w;
    uint8_t rows[4][AOTC_QCONV_PATCH_TILE];
    int32_t q, j, t;
    for (q = 0; q < kq; ++q) {
        uint8_t *dst = quads + (int64_t)q * width * 4;
        for (j = 0; j < 4; ++j) {
            if (4 * q + j < k) {
                AOTC_Q(qconv_patch_row)(p, xg, 4 * q + j, p0, np, rows[j]);
                for (t = np; t < width; ++t) rows[j][t] = zero; /* lanes past the plane's end */
            } else {
                for (t = 0; t < width; ++t) rows[j][t] = zero;
            }
        }
        for (t = 0; t < width; ++t) {
            dst[4 * t] = rows[0][t];
            dst[4 * t + 1] = rows[1][t];
            dst[4 * t + 2] = rows[2][t];
            dst[4 * t + 3] = rows[3][t];
        }
    }
}

#if AOTC_QUANT_AVX2
/* the 4 bytes of a weight quad sign-extended to 16 bits, 4 times over (a vpmaddwd operand: 4 positions a register) */
static inline __m256i AOTC_Q(qconv_avx2_wquad)(const int8_t *w) {
    int32_t v;
    memcpy(&v, w, 4);
    return _mm256_broadcastq_epi64(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(v)));
}

/* As the plain qconv_quad_lanes below, on AVX2 without VNNI: 8 positions at a time, a quad row's 4 positions a
 * register (their bytes zero-extended to 16 bits) by vpmaddwd with each channel's weight quad (exact: two products of
 * at most 255 x 128), each position's two pair sums added at the end. */
static void AOTC_Q(qconv_quad_lanes)(const uint8_t *AOTC_RESTRICT quads, int32_t np, int32_t t0, int32_t kq,
                                     const aotc_qconv_params *p, const int8_t *AOTC_RESTRICT w, int32_t nb,
                                     int32_t acc[AOTC_QCONV_BLOCK][AOTC_QCONV_LANES]) {
    const int32_t kp = AOTC_QCONV_PACKED(p) ? 4 : kq * 4, qs = AOTC_QCONV_QSTEP(p);
    const int8_t *wj[4];
    int32_t q, j, half;
    wj[0] = w, wj[1] = w + (nb > 1 ? kp : 0), wj[2] = w + (nb > 2 ? 2 * kp : 0), wj[3] = w + (nb > 3 ? 3 * kp : 0);
    for (half = 0; half < AOTC_QCONV_LANES / 8; ++half) {
        __m256i s[4][2];
        for (j = 0; j < 4; ++j) s[j][0] = s[j][1] = _mm256_setzero_si256();
        for (q = 0; q < kq; ++q) {
            const uint8_t *pq = quads + ((int64_t)q * np + t0 + 8 * half) * 4;
            const __m256i x0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)pq));
            const __m256i x1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(pq + 16)));
            for (j = 0; j < 4; ++j) {
                const __m256i wq = AOTC_Q(qconv_avx2_wquad)(wj[j] + qs * q);
                s[j][0] = _mm256_add_epi32(s[j][0], _mm256_madd_epi16(x0, wq));
                s[j][1] = _mm256_add_epi32(s[j][1], _mm256_madd_epi16(x1, wq));
            }
        }
        /* s[j][0]: positions 0, 1 | 2, 3 as two pair sums each; hadd gives 0 1 4 5 | 2 3 6 7, the permute 0 .. 7 */
        for (j = 0; j < 4; ++j)
            _mm256_storeu_si256((__m256i *)(acc[j] + 8 * half),
                                _mm256_permute4x64_epi64(_mm256_hadd_epi32(s[j][0], s[j][1]), 0xD8));
    }
}
#else
/* Output channels [oc, oc + nb) (nb <= 4) at AOTC_QCONV_LANES positions from column t0 of the patch
 * quads (np positions a quad row): acc[j][l] = sum_r w_j[r] * patch[r][t0 + l] over 4 * kq rows
 * (weight rows padded with zeros to 4 * kq), in plain loops (quant_avx512vnni.h has the VNNI path). */
static void AOTC_Q(qconv_quad_lanes)(const uint8_t *AOTC_RESTRICT quads, int32_t np, int32_t t0, int32_t kq,
                                     const aotc_qconv_params *p, const int8_t *AOTC_RESTRICT w, int32_t nb,
                                     int32_t acc[AOTC_QCONV_BLOCK][AOTC_QCONV_LANES]) {
    /* w: the block's first channel (aotc_qconv_wrow; a block of 4 never crosses packed blocks of 16) */
    const int32_t kp = AOTC_QCONV_PACKED(p) ? 4 : kq * 4, qs = AOTC_QCONV_QSTEP(p);
    const int8_t *w0 = w, *w1 = w + (nb > 1 ? kp : 0), *w2 = w + (nb > 2 ? 2 * kp : 0), *w3 = w + (nb > 3 ? 3 * kp : 0);
    int32_t q, l;
    int32_t a0[AOTC_QCONV_LANES] = {0}, a1[AOTC_QCONV_LANES] = {0}, a2[AOTC_QCONV_LANES] = {0},
            a3[AOTC_QCONV_LANES] = {0};
    int32_t j;
    for (q = 0; q < kq; ++q) {
        const uint8_t *pq = quads + ((int64_t)q * np + t0) * 4;
        for (j = 0; j < 4; ++j) {
            const int32_t v0 = w0[qs * q + j], v1 = w1[qs * q + j], v2 = w2[qs * q + j], v3 = w3[qs * q + j];
            for (l = 0; l < AOTC_QCONV_LANES; ++l) {
                const int32_t xv = pq[4 * l + j];
                a0[l] += v0 * xv;
                a1[l] += v1 * xv;
                a2[l] += v2 * xv;
                a3[l] += v3 * xv;
            }
        }
    }
    for (l = 0; l < AOTC_QCONV_LANES; ++l) {
        acc[0][l] = a0[l], acc[1][l] = a1[l], acc[2][l] = a2[l], acc[3][l] = a3[l];
    }
}
#endif /* AOTC_QUANT_AVX2 */
#endif /* AOTC_QUANT_VNNI */

#if AOTC_QUANT_AVX2
/* The AVX2 patch path (no VNNI): the patch block as 16-bit pairs of rows (x + AOTC_QOFFSET, 0..255), pair j of
 * position t the 32-bit word [j][t] of `width` positions a pair row, so that one vpmaddwd of 8 positions' pairs with a
 * channel's broadcast weight pair sums 16 products exactly (at most 2 x 255 x 128); the weights of 4 channels widened
 * to 16-bit pairs once a block and chunk of AOTC_QAVX2_JC pairs (wb[j][c]: a vpbroadcastd each), 4 channels x 16
 * positions in 8 registers, and the requantisation in 8 lanes. It took 2.4x fewer cycles than the byte quads (their
 * weights re-widened for every 8 positions, their pair sums hadd'ed). */
#define AOTC_QAVX2_JC 512 /* weight pairs widened at a time: 4 channels x 512 x 4 bytes = 8 KiB of stack */

/* One output row's run of a patch block: positions [t, t + last - first) of the block are output columns
 * [first, last) of the output row whose first input row (before the kernel row's offset) is ih0 */
typedef struct {
    int32_t t, first, last, ih0;
} AOTC_Q(qavx2_run);

/* n bytes of the input (n >= 8) plus AOTC_QOFFSET: 16 or 8 at a time, the last chunk ending at n (overlapping the
 * one before), so nothing past the run is read or written */
static inline void AOTC_Q(qavx2_copy)(const QT *AOTC_RESTRICT xs, int32_t n, uint8_t *AOTC_RESTRICT out) {
    const __m128i off = _mm_set1_epi8((char)AOTC_QOFFSET);
    int32_t o;
    if (n >= 16) {
        for (o = 0; o < n; o += 16) { /* (the place a select: for uint8, with no offset, gcc made the loop a memcpy) */
            const int32_t at = o + 16 <= n ? o : n - 16;
            _mm_storeu_si128((__m128i *)(out + at), _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(xs + at)), off));
        }
    } else {
        _mm_storel_epi64((__m128i *)out, _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)xs), off));
        _mm_storel_epi64((__m128i *)(out + n - 8),
                         _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)(xs + n - 8)), off));
    }
}

#define AOTC_QAVX2_KW 32 /* kernel columns at most of the pair builder's table (wider kernels: qconv_patch_row) */

/* n bytes copied by vectors, the last ending at n (a block's last outputs, a depthwise plane's rows, a run of a
 * patch row); the vector's place a select, so that gcc does not make the loop a call of memcpy, whose calls had
 * cost 2-3 % of MobileNetV2's time */
static inline void AOTC_Q(qavx2_bytes)(const void *AOTC_RESTRICT from, int32_t n, void *AOTC_RESTRICT to) {
    const uint8_t *src = (const uint8_t *)from;
    uint8_t *dst = (uint8_t *)to;
    int32_t o;
    if (n >= 16) {
        for (o = 0; o < n; o += 16) {
            const int32_t at = o + 16 <= n ? o : n - 16;
            _mm_storeu_si128((__m128i *)(dst + at), _mm_loadu_si128((const __m128i *)(src + at)));
        }
    } else if (n >= 8) {
        _mm_storel_epi64((__m128i *)dst, _mm_loadl_epi64((const __m128i *)src));
        _mm_storel_epi64((__m128i *)(dst + n - 8), _mm_loadl_epi64((const __m128i *)(src + n - 8)));
    } else if (n >= 4) {
        uint32_t u, v;
        memcpy(&u, src, 4), memcpy(&v, src + n - 4, 4);
        memcpy(dst, &u, 4), memcpy(dst + n - 4, &v, 4);
    } else {
        if (n >= 1) dst[0] = src[0];
        if (n >= 2) dst[1] = src[1];
        if (n >= 3) dst[2] = src[2];
    }
}

/* Stride 1 (qconv_patch_pairs): the bytes of patch row (ic, kh, kw) on a run of output columns [first, last) are
 * those of its input row from column first - pad_left + kw dil_w on, so each run's padded input segment (x +
 * AOTC_QOFFSET, the zero point outside the image; last - first + ext bytes, run i's at seg + t + i ext) is made once
 * for the k_w taps of (ic, kh), and each tap's row copied from it (the row-by-row bounds of every tap had cost 60 %
 * of the patch block) */
#define AOTC_QAVX2_SEGRUNS 8 /* runs of output rows a block at most for the segments (8: a block of 64 positions on
                               * rows of 14, the vpmaddubsw path's) */
#define AOTC_QAVX2_SEG (AOTC_QCONV_PATCH_TILE + AOTC_QAVX2_SEGRUNS * AOTC_QAVX2_KW + 16)

static void AOTC_Q(qavx2_segs)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT pl, int32_t kh,
                               const AOTC_Q(qavx2_run) *runs, int32_t nr, int32_t ext, uint8_t *AOTC_RESTRICT seg) {
    const __m128i zb = _mm_set1_epi8((char)(uint8_t)(p->x_zero + AOTC_QOFFSET));
    int32_t i;
    for (i = 0; i < nr; ++i) {
        const int32_t ih = runs[i].ih0 + kh * p->dil_h, len = runs[i].last - runs[i].first + ext;
        const int32_t s = runs[i].first - p->pad_left; /* the input column of the segment's first byte */
        uint8_t *sg = seg + runs[i].t + i * ext;
        /* the zero point first, by vectors (up to 15 bytes past the segment: the next one's, made after; memset's
         * calls for the few bytes of padding had cost as much as the copies, and gcc makes a loop of these one):
         * len <= 64 + AOTC_QAVX2_KW */
        _mm_storeu_si128((__m128i *)sg, zb);
        if (len > 16) {
            _mm_storeu_si128((__m128i *)(sg + 16), zb);
            if (len > 32) {
                _mm_storeu_si128((__m128i *)(sg + 32), zb);
                if (len > 48) {
                    _mm_storeu_si128((__m128i *)(sg + 48), zb);
                    if (len > 64) _mm_storeu_si128((__m128i *)(sg + 64), zb), _mm_storeu_si128((__m128i *)(sg + 80), zb);
                }
            }
        }
        if (ih >= 0 && ih < p->in_h) {
            const QT *xr = pl + (int64_t)ih * p->in_w;
            const int32_t a = s < 0 ? -s : 0, b = p->in_w - s < len ? p->in_w - s : len; /* [a, b): inside the row */
            if (b - a >= 8) {
                AOTC_Q(qavx2_copy)(xr + s + a, b - a, sg + a);
            } else if (b > a) {
#if AOTC_QOFFSET == 0
                AOTC_Q(qavx2_bytes)(xr + s + a, b - a, sg + a); /* (a loop of bytes: a call of memcpy) */
#else
                int32_t c;
                for (c = a; c < b; ++c) sg[c] = (uint8_t)(xr[s + c] + AOTC_QOFFSET);
#endif
            }
        }
    }
}

/* A tap's row from the segments: run i's last - first bytes from byte off of its segment */
static inline void AOTC_Q(qavx2_seg_row)(const AOTC_Q(qavx2_run) *runs, int32_t nr, int32_t ext, int32_t off,
                                         const uint8_t *AOTC_RESTRICT seg, uint8_t *AOTC_RESTRICT row) {
    int32_t i;
    for (i = 0; i < nr; ++i) {
        const uint8_t *src = seg + runs[i].t + i * ext + off;
        uint8_t *dst = row + runs[i].t;
        AOTC_Q(qavx2_bytes)(src, runs[i].last - runs[i].first, dst);
    }
}

/* qconv_patch_pairs at stride 1 where every run of the block has 8 positions or more: each pair row straight from
 * the two taps' segments (qavx2_segs; the two of the last two (ic, kh) kept), 8 positions at a time (a run's last 8
 * ending at its end), without the rows of bytes between */
static void AOTC_Q(qavx2_pairs_s1)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t k, int32_t np,
                                   int32_t width, int32_t kq, const AOTC_Q(qavx2_run) *runs, int32_t nr,
                                   int16_t *AOTC_RESTRICT pairs) {
    const uint8_t zero = (uint8_t)(p->x_zero + AOTC_QOFFSET);
    const int32_t ext = (p->k_w - 1) * p->dil_w, plane = p->in_h * p->in_w;
    const uint32_t zz = (uint32_t)zero | (uint32_t)zero << 16; /* a pair of the zero point */
    uint8_t seg[2][AOTC_QAVX2_SEG];
    int32_t made[2] = {-1, -1}; /* the (ic, kh) each segment buffer holds */
    int32_t row = 0, kw = 0, ic = 0, kh = 0; /* patch row r's (ic, kh) (row: ic k_h + kh) and kw, counted (the two
                                              * divisions a row had cost as much as its copies) */
    int32_t j, h, i, o, t;
    for (j = 0; j < 2 * kq; ++j) {
        int16_t *dst = pairs + (int64_t)j * width * 2;
        const uint8_t *src[2];
        for (h = 0; h < 2; ++h) {
            if (2 * j + h >= k) {
                src[h] = NULL;
                continue;
            }
            if (made[row & 1] != row) {
                AOTC_Q(qavx2_segs)(p, xg + (int64_t)ic * plane, kh, runs, nr, ext, seg[row & 1]);
                made[row & 1] = row;
            }
            src[h] = seg[row & 1] + kw * p->dil_w;
            if (++kw == p->k_w) {
                kw = 0, ++row;
                if (++kh == p->k_h) kh = 0, ++ic;
            }
        }
        if (src[0] == NULL) { /* both rows past k */
            for (t = 0; t < width; ++t) memcpy(dst + 2 * t, &zz, 4);
            continue;
        }
        for (i = 0; i < nr; ++i) {
            const uint8_t *s0 = src[0] + runs[i].t + i * ext, *s1 = src[1] ? src[1] + runs[i].t + i * ext : NULL;
            const int32_t n = runs[i].last - runs[i].first;
            int16_t *d = dst + 2 * runs[i].t;
            const __m128i zb = _mm_set1_epi8((char)zero);
            for (o = 0;; o = o + 16 <= n ? o + 8 : n - 8) {
                const __m128i a = _mm_loadl_epi64((const __m128i *)(s0 + o));
                const __m128i b = s1 ? _mm_loadl_epi64((const __m128i *)(s1 + o)) : zb;
                _mm256_storeu_si256((__m256i *)(d + 2 * o), _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b)));
                if (o + 8 >= n) break;
            }
        }
        for (t = np; t < width; ++t) memcpy(dst + 2 * t, &zz, 4); /* lanes past the plane's end */
    }
}

/* Patch pair rows [0, 2 kq) of positions [p0, p0 + np) (np <= width) into pairs (width positions a pair row; the
 * positions past np and the rows past k hold the zero point): each row's bytes as qconv_patch_row's (the block's runs
 * of output rows and each kernel column's bounds computed once, stride-1 runs copied by vectors), then two rows
 * interleaved and widened. (qconv_patch_row's divisions a row had cost more than the copies.) */
static void AOTC_Q(qconv_patch_pairs)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t cg, int32_t p0,
                                      int32_t np, int32_t width, int32_t kq, int16_t *AOTC_RESTRICT pairs) {
    const uint8_t zero = (uint8_t)(p->x_zero + AOTC_QOFFSET);
    const int32_t k = cg * p->k_h * p->k_w, ow_n = p->out_w, sw = p->stride_w, plane = p->in_h * p->in_w;
    const int fast = p->k_w <= AOTC_QAVX2_KW;
    uint8_t rows[2][AOTC_QCONV_PATCH_TILE];
    AOTC_Q(qavx2_run) runs[AOTC_QCONV_PATCH_TILE];
    int32_t kw_start[AOTC_QAVX2_KW], kw_o0[AOTC_QAVX2_KW], kw_o1[AOTC_QAVX2_KW];
    uint8_t seg[AOTC_QAVX2_SEG];
    const int32_t ext = (p->k_w - 1) * p->dil_w;
    int32_t j, h, t, nr = 0, ic = 0, kh = 0, kw = 0, r = 0, segs = 0;
    if (p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 && p->pad_left == 0 &&
        p->out_w == p->in_w && p->out_h == p->in_h) {
        /* pointwise: patch row r is input channel r's plane, the block's positions a run of it: two channels'
         * bytes interleaved and widened 8 positions at a time straight from the input (those past np: the zero
         * point) */
        const __m128i off = _mm_set1_epi8((char)AOTC_QOFFSET), zb = _mm_set1_epi8((char)zero);
        for (j = 0; j < 2 * kq; ++j) {
            int16_t *dst = pairs + (int64_t)j * width * 2;
            const QT *x0 = 2 * j < k ? xg + (int64_t)(2 * j) * plane + p0 : NULL;
            const QT *x1 = 2 * j + 1 < k ? xg + (int64_t)(2 * j + 1) * plane + p0 : NULL;
            for (t = 0; t < width; t += 8) {
                __m128i a = zb, b = zb;
                if (t + 8 <= np) {
                    if (x0) a = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)(x0 + t)), off);
                    if (x1) b = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)(x1 + t)), off);
                } else {
                    uint8_t ra[8], rb[8];
                    int32_t i;
                    for (i = 0; i < 8; ++i) {
                        ra[i] = x0 && t + i < np ? (uint8_t)(x0[t + i] + AOTC_QOFFSET) : zero;
                        rb[i] = x1 && t + i < np ? (uint8_t)(x1[t + i] + AOTC_QOFFSET) : zero;
                    }
                    a = _mm_loadl_epi64((const __m128i *)(const void *)ra), b = _mm_loadl_epi64((const __m128i *)(const void *)rb);
                }
                _mm256_storeu_si256((__m256i *)(dst + 2 * t), _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b)));
            }
        }
        return;
    }
    if (fast) {
        for (t = 0; t < np;) {
            const int32_t pos = p0 + t, first = pos % ow_n, last = first + (np - t) < ow_n ? first + (np - t) : ow_n;
            runs[nr].t = t, runs[nr].first = first, runs[nr].last = last;
            runs[nr++].ih0 = pos / ow_n * p->stride_h - p->pad_top;
            t += last - first;
        }
        for (kw = 0; kw < p->k_w; ++kw) { /* as qconv_row_cols */
            const int32_t s0 = kw * p->dil_w - p->pad_left, o1 = s0 < p->in_w ? (p->in_w - s0 + sw - 1) / sw : 0;
            kw_start[kw] = s0, kw_o0[kw] = s0 < 0 ? (-s0 + sw - 1) / sw : 0, kw_o1[kw] = o1 < ow_n ? o1 : ow_n;
        }
        kw = 0;
        segs = sw == 1 && p->k_w > 1 && nr <= AOTC_QAVX2_SEGRUNS && ext < AOTC_QAVX2_KW;
        if (segs) {
            int32_t i, least = np;
            for (i = 0; i < nr; ++i) least = runs[i].last - runs[i].first < least ? runs[i].last - runs[i].first : least;
            if (least >= 8) {
                AOTC_Q(qavx2_pairs_s1)(p, xg, k, np, width, kq, runs, nr, pairs);
                return;
            }
        }
    }
    for (j = 0; j < 2 * kq; ++j) {
        int16_t *dst = pairs + (int64_t)j * width * 2;
        for (h = 0; h < 2; ++h, ++r) {
            uint8_t *row = rows[h];
            if (r >= k) {
                memset(row, zero, (size_t)width);
                continue;
            }
            if (!fast) {
                AOTC_Q(qconv_patch_row)(p, xg, r, p0, np, row);
            } else if (segs) { /* stride 1: the row's runs copied from (ic, kh)'s segments, made at its first tap */
                if (kw == 0) AOTC_Q(qavx2_segs)(p, xg + (int64_t)ic * plane, kh, runs, nr, ext, seg);
                AOTC_Q(qavx2_seg_row)(runs, nr, ext, kw * p->dil_w, seg, row);
                if (++kw == p->k_w) {
                    kw = 0;
                    if (++kh == p->k_h) kh = 0, ++ic;
                }
            } else {
                const QT *pl = xg + (int64_t)ic * plane;
                const int32_t start = kw_start[kw], o0 = kw_o0[kw], o1 = kw_o1[kw], dh = kh * p->dil_h;
                int32_t i, o;
                for (i = 0; i < nr; ++i) {
                    const int32_t first = runs[i].first, last = runs[i].last, ih = runs[i].ih0 + dh;
                    uint8_t *run = row + runs[i].t - first;
                    if (ih < 0 || ih >= p->in_h) {
                        memset(run + first, zero, (size_t)(last - first));
                        continue;
                    } else {
                        const QT *xs = pl + (int64_t)ih * p->in_w + start;
                        const int32_t a = first > o0 ? first : o0, b = last < o1 ? last : o1;
                        for (o = first; o < a && o < last; ++o) run[o] = zero;
                        if (sw == 1 && b - a >= 8) {
                            AOTC_Q(qavx2_copy)(xs + a, b - a, run + a);
                        } else {
                            o = a;
                            if (sw == 2) { /* 8 at a time: the even bytes of 16 (all inside the input row) */
                                const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
                                const __m128i off = _mm_set1_epi8((char)AOTC_QOFFSET);
                                for (; o + 8 <= b && 2 * o + 16 <= p->in_w - start; o += 8) {
                                    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(xs + 2 * o));
                                    _mm_storel_epi64((__m128i *)(run + o), _mm_xor_si128(_mm_shuffle_epi8(v, even), off));
                                }
                            }
                            for (; o < b; ++o) run[o] = (uint8_t)(xs[(int64_t)o * sw] + AOTC_QOFFSET);
                        }
                        for (o = b > first ? b : first; o < last; ++o) run[o] = zero;
                    }
                }
                if (++kw == p->k_w) { /* the next row's tap */
                    kw = 0;
                    if (++kh == p->k_h) kh = 0, ++ic;
                }
            }
            for (t = np; t < width; ++t) row[t] = zero; /* lanes past the plane's end */
        }
        for (t = 0; t < width; t += 8) { /* 8 positions' two bytes interleaved, then widened */
            const __m128i a = _mm_loadl_epi64((const __m128i *)(rows[0] + t));
            const __m128i b = _mm_loadl_epi64((const __m128i *)(rows[1] + t));
            _mm256_storeu_si256((__m256i *)(dst + 2 * t), _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b)));
        }
    }
}

/* wb[j][c] (j in [0, nj), 2 nj pair rows from quad q0): channel c's weight pair j of the chunk as two 16-bit halves,
 * channels c >= nb zero. From one 16-byte vector of the 4 channels' quads [c0 c1 c2 c3]: widened, then
 * re-ordered to pair 0 of the 4 channels, pair 1 of the 4. */
static inline void AOTC_Q(qavx2_wquads)(__m128i quads, int32_t *wb) {
    const __m256i order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    _mm256_storeu_si256((__m256i *)wb, _mm256_permutevar8x32_epi32(_mm256_cvtepi8_epi16(quads), order));
}

static void AOTC_Q(qavx2_weights)(const aotc_qconv_params *p, const int8_t *AOTC_RESTRICT w, int32_t oc, int32_t nb,
                                  int32_t kp, int32_t q0, int32_t nq, int32_t *AOTC_RESTRICT wb) {
    int32_t q, c;
    if (AOTC_QCONV_PACKED(p)) { /* the 4 channels' quads are 16 bytes of each quad row of their block of 16 */
        const int8_t *wq = aotc_qconv_wrow(p, w, oc, kp) + (int64_t)q0 * 64;
        for (q = 0; q < nq; ++q) AOTC_Q(qavx2_wquads)(_mm_loadu_si128((const __m128i *)(wq + 64 * q)), wb + 8 * q);
        return;
    }
    {
        const int8_t *r[4];
        for (c = 0; c < 4; ++c) r[c] = c < nb ? w + (int64_t)(oc + c) * kp + (int64_t)q0 * 4 : NULL;
        for (q = 0; q + 4 <= nq; q += 4) { /* 4 quads of each channel: a 4 x 4 transpose of words */
            __m128i v[4], t0, t1, t2, t3;
            for (c = 0; c < 4; ++c) v[c] = r[c] ? _mm_loadu_si128((const __m128i *)(r[c] + 4 * q)) : _mm_setzero_si128();
            t0 = _mm_unpacklo_epi32(v[0], v[1]), t1 = _mm_unpacklo_epi32(v[2], v[3]);
            t2 = _mm_unpackhi_epi32(v[0], v[1]), t3 = _mm_unpackhi_epi32(v[2], v[3]);
            AOTC_Q(qavx2_wquads)(_mm_unpacklo_epi64(t0, t1), wb + 8 * q);
            AOTC_Q(qavx2_wquads)(_mm_unpackhi_epi64(t0, t1), wb + 8 * q + 8);
            AOTC_Q(qavx2_wquads)(_mm_unpacklo_epi64(t2, t3), wb + 8 * q + 16);
            AOTC_Q(qavx2_wquads)(_mm_unpackhi_epi64(t2, t3), wb + 8 * q + 24);
        }
        for (; q < nq; ++q) {
            int32_t v[4] = {0, 0, 0, 0};
            for (c = 0; c < 4; ++c) {
                if (r[c]) memcpy(&v[c], r[c] + 4 * q, 4);
            }
            AOTC_Q(qavx2_wquads)(_mm_setr_epi32(v[0], v[1], v[2], v[3]), wb + 8 * q);
        }
    }
}

/* acc[c][0..16) (+)= the sums of pair rows [0, nj) of positions [t0, t0 + 16) with wb's 4 channels: the register block
 * common/avx2_lanes.h shares with the .tflite convs, on this family's layout (pair rows `width` positions apart, the
 * 4 channels' weights of a pair row together), from 0 */
static void AOTC_Q(qavx2_lanes)(const int16_t *AOTC_RESTRICT pairs, int32_t width, int32_t t0, int32_t nj,
                                const int32_t *AOTC_RESTRICT wb, int first, int32_t acc[4][AOTC_QCONV_PATCH_TILE]) {
    aotc_avx2_lanes16((const int32_t *)(const void *)pairs + t0, width, wb, 4, nj, NULL, first, acc[0] + t0,
                      AOTC_QCONV_PATCH_TILE);
}

/* qavx2_lanes on the last 8 positions of a block whose width is 8 past a multiple of 16 */
static void AOTC_Q(qavx2_lanes8)(const int16_t *AOTC_RESTRICT pairs, int32_t width, int32_t t0, int32_t nj,
                                 const int32_t *AOTC_RESTRICT wb, int first, int32_t acc[4][AOTC_QCONV_PATCH_TILE]) {
    aotc_avx2_lanes8((const int32_t *)(const void *)pairs + t0, width, wb, 4, nj, NULL, first, acc[0] + t0,
                     AOTC_QCONV_PATCH_TILE);
}

/* aotc_requant of 8 sums (v) in 8 lanes: the same float product, clamp and rounding to nearest even (cvtps2dq in the
 * default rounding mode, as aotc_round_even), then the zero point; without the clamp where `clamp` is 0
 * (qavx2_clamp) */
static inline __m256i AOTC_Q(qavx2_requant)(__m256i v, __m256 sc, __m256 lo, __m256 hi, __m256i zp, int clamp) {
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), sc);
    if (clamp) f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
    return _mm256_add_epi32(_mm256_cvtps_epi32(f), zp);
}

/* Whether channels [c0, c0 + nc)'s outputs need the float clamp: 0 where it is QT's own range (y - y_zero's), which
 * the packs' saturation gives (rounding commutes with a clamp to whole numbers), and every channel's sum (a k-term sum
 * of products of at most 255 x 256 in magnitude, with the bias) times its scale stays below 2^30, so that cvtps2dq
 * and the zero point's add stay in range; 1 otherwise (a NaN scale too) */
static inline int AOTC_Q(qavx2_clamp)(const aotc_qconv_params *p, int32_t c0, int32_t nc, int32_t k) {
    const float top = 65536.0f * (float)k;
    int32_t c;
    if (p->y_lo > (float)(QT_MIN - p->y_zero) || p->y_hi < (float)(QT_MAX - p->y_zero)) return 1;
    for (c = c0; c < c0 + nc; ++c) {
        const float b = (float)p->bias[c];
        if (!(((b < 0.0f ? -b : b) + top) * p->scale[c] < 1073741824.0f)) return 1;
    }
    return 0;
}

/* 16 sums (v0: lanes 0-7, v1: 8-15) requantised (clamped where clamp), packed to QT and the first n (<= 16) stored
 * at dst */
static inline void AOTC_Q(qavx2_out16)(__m256i v0, __m256i v1, __m256 sc, __m256 lo, __m256 hi, __m256i zp, int clamp,
                                       QT *dst, int32_t n) {
    __m256i v;
    __m128i h;
    v0 = AOTC_Q(qavx2_requant)(v0, sc, lo, hi, zp, clamp);
    v1 = AOTC_Q(qavx2_requant)(v1, sc, lo, hi, zp, clamp);
    /* values in the type's range: packed to 16 bits (lanes 0-3, 8-11 | 4-7, 12-15), re-ordered, packed to bytes */
    v = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
#if QT_MIN == 0
    h = _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
#else
    h = _mm_packs_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
#endif
    if (n >= 16) {
        _mm_storeu_si128((__m128i *)(void *)dst, h);
    } else {
        QT tmp[16];
        _mm_storeu_si128((__m128i *)(void *)tmp, h);
        AOTC_Q(qavx2_bytes)(tmp, n * (int32_t)sizeof(QT), dst);
    }
}

/* The block's sums of channels [oc, oc + nb) (acc[j][t]: position t of the block, whose first is yo[0] of each
 * channel's output plane; the weights' zero point times the patch sums off) requantised and stored: through the
 * fused ADD one by one from position `from` on (those before: the block before's), else 16 at a time, `real` */
static void AOTC_Q(qavx2_store)(const aotc_qconv_params *p, int32_t acc[4][AOTC_QCONV_PATCH_TILE], const int32_t *sums,
                                int32_t oc, int32_t nb, QT *yo0, const QT *y, int32_t from, int32_t real,
                                int32_t width, const aotc_qresidual_params *rp, const QT *res) {
    const __m256 lo = _mm256_set1_ps(p->y_lo), hi = _mm256_set1_ps(p->y_hi);
    const __m256i zp = _mm256_set1_epi32(p->y_zero);
    const int32_t plane_out = p->out_h * p->out_w;
    const int clamp = AOTC_Q(qavx2_clamp)(p, oc, nb, (p->in_c / p->group) * p->k_h * p->k_w + 4);
    int32_t j, t, t0;
    for (j = 0; j < nb; ++j) {
        const int32_t b = p->bias[oc + j], wz = p->w_zero_any ? p->w_zero[oc + j] : 0;
        const float sc = p->scale[oc + j];
        QT *yo = yo0 + (int64_t)(oc + j) * plane_out;
        if (rp != NULL) {
            const QT *ro = res + (yo - y);
            for (t = from > 0 ? from : 0; t < real; ++t) {
                const int32_t v = aotc_requant(acc[j][t] + b - wz * sums[t], sc, p->y_lo, p->y_hi, p->y_zero);
                yo[t] = (QT)AOTC_Q(residual_one)(rp, v, ro[t]);
            }
            continue;
        }
        {
            const __m256 scv = _mm256_set1_ps(sc);
            const __m256i bv = _mm256_set1_epi32(b), wzv = _mm256_set1_epi32(wz);
            for (t0 = 0; t0 < width; t0 += AOTC_QCONV_LANES) {
                const int two = t0 + 8 < width; /* (a block's last 8 positions: one vector) */
                __m256i v0 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc[j] + t0)), bv);
                __m256i v1 = two ? _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc[j] + t0 + 8)), bv) : bv;
                if (wz != 0) {
                    v0 = _mm256_sub_epi32(v0, _mm256_mullo_epi32(wzv, _mm256_loadu_si256((const __m256i *)(sums + t0))));
                    if (two)
                        v1 = _mm256_sub_epi32(v1, _mm256_mullo_epi32(wzv, _mm256_loadu_si256((const __m256i *)(sums + t0 + 8))));
                }
                AOTC_Q(qavx2_out16)(v0, v1, scv, lo, hi, zp, clamp, yo + t0, real - t0);
            }
        }
    }
}

/* The vpmaddubsw path (p->ubs_w, a generic host's plan): the patch block as 4-byte quads of rows (x + AOTC_QOFFSET,
 * 0..255), word [q][t] of `width` positions a quad row, and each channel's quads 2 g and 2 g + 1 summed by two
 * vpmaddubsw into 16-bit lanes of 4 products each, which one vpmaddwd with ones adds into 32 bits: 64 multiply-adds a
 * vpmaddwd where the 16-bit pairs take 16. Exact because aot/kernels/quant.py (ubs_weights) clipped every lane's 4
 * weights to positive and negative sums of at most 128 (255 x 128 = 32640: no saturation, and the 16-bit sum fits),
 * and lists what it took off (p->ubs_fix: a few quads a block, each pair within +-128), which qubs_fix adds by one
 * vpmaddubsw each. The tile alone: 170 GMAC/s on this Zen 5 against the pairs' 112. */

/* The pair rows [0, 2 kq) of the block (qconv_patch_pairs) made quad rows [0, kq) in place (quad row q over pair row
 * q, read at quad q / 2 or before), and quad row kq zero where kq is odd (a pair of quads the tile's step) */
static void AOTC_Q(qubs_quads)(uint8_t *block, int32_t width, int32_t kq) {
    const __m256i order = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
                                           0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    int32_t q, t;
    for (q = 0; q < kq; ++q) {
        const uint8_t *r0 = block + (int64_t)(2 * q) * width * 4, *r1 = r0 + (int64_t)width * 4;
        uint8_t *dst = block + (int64_t)q * width * 4;
        for (t = 0; t < width; t += 8) { /* the two rows' 8 positions' 16-bit values as bytes, each position's 4 together */
            const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(r0 + 4 * t));
            const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(r1 + 4 * t));
            _mm256_storeu_si256((__m256i *)(void *)(dst + 4 * t), _mm256_shuffle_epi8(_mm256_packus_epi16(a, b), order));
        }
    }
    if (kq & 1) {
        for (t = 0; t < width; t += 8) _mm256_storeu_si256((__m256i *)(void *)(block + ((int64_t)kq * width + t) * 4),
                                                           _mm256_setzero_si256());
    }
}

/* 8 positions' 4-product sums of quads (x0, x1) with a channel's pair of weight quads (wq[0], wq[1]) added to a */
#define AOTC_QUBS_STEP(a, x0, x1, wa, wb) \
    a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(x0, wa), _mm256_maddubs_epi16(x1, wb)), ones))

/* acc[c][t0, t0 + 16) = the block's sums of quad pairs [0, ng) with wq's 4 channels (wq[8 g + 2 c + h]) */
static void AOTC_Q(qubs_lanes)(const uint8_t *AOTC_RESTRICT quads, int32_t width, int32_t t0, int32_t ng,
                               const int32_t *AOTC_RESTRICT wq, int32_t acc[4][AOTC_QCONV_PATCH_TILE]) {
    const int32_t *px = (const int32_t *)(const void *)quads + t0;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i a00, a01, a10, a11, a20, a21, a30, a31;
    int32_t g;
    a00 = a01 = a10 = a11 = a20 = a21 = a30 = a31 = _mm256_setzero_si256();
    for (g = 0; g < ng; ++g, wq += 8) {
        const int32_t *r0 = px + (int64_t)(2 * g) * width, *r1 = r0 + width;
        const __m256i x00 = _mm256_loadu_si256((const __m256i *)r0), x01 = _mm256_loadu_si256((const __m256i *)(r0 + 8));
        const __m256i x10 = _mm256_loadu_si256((const __m256i *)r1), x11 = _mm256_loadu_si256((const __m256i *)(r1 + 8));
        __m256i wa = _mm256_set1_epi32(wq[0]), wb = _mm256_set1_epi32(wq[1]);
        AOTC_QUBS_STEP(a00, x00, x10, wa, wb), AOTC_QUBS_STEP(a01, x01, x11, wa, wb);
        wa = _mm256_set1_epi32(wq[2]), wb = _mm256_set1_epi32(wq[3]);
        AOTC_QUBS_STEP(a10, x00, x10, wa, wb), AOTC_QUBS_STEP(a11, x01, x11, wa, wb);
        wa = _mm256_set1_epi32(wq[4]), wb = _mm256_set1_epi32(wq[5]);
        AOTC_QUBS_STEP(a20, x00, x10, wa, wb), AOTC_QUBS_STEP(a21, x01, x11, wa, wb);
        wa = _mm256_set1_epi32(wq[6]), wb = _mm256_set1_epi32(wq[7]);
        AOTC_QUBS_STEP(a30, x00, x10, wa, wb), AOTC_QUBS_STEP(a31, x01, x11, wa, wb);
    }
    _mm256_storeu_si256((__m256i *)(acc[0] + t0), a00), _mm256_storeu_si256((__m256i *)(acc[0] + t0 + 8), a01);
    _mm256_storeu_si256((__m256i *)(acc[1] + t0), a10), _mm256_storeu_si256((__m256i *)(acc[1] + t0 + 8), a11);
    _mm256_storeu_si256((__m256i *)(acc[2] + t0), a20), _mm256_storeu_si256((__m256i *)(acc[2] + t0 + 8), a21);
    _mm256_storeu_si256((__m256i *)(acc[3] + t0), a30), _mm256_storeu_si256((__m256i *)(acc[3] + t0 + 8), a31);
}

/* qubs_lanes on the last 8 positions of a block whose width is 8 past a multiple of 16 */
static void AOTC_Q(qubs_lanes8)(const uint8_t *AOTC_RESTRICT quads, int32_t width, int32_t t0, int32_t ng,
                                const int32_t *AOTC_RESTRICT wq, int32_t acc[4][AOTC_QCONV_PATCH_TILE]) {
    const int32_t *px = (const int32_t *)(const void *)quads + t0;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i a0, a1, a2, a3;
    int32_t g;
    a0 = a1 = a2 = a3 = _mm256_setzero_si256();
    for (g = 0; g < ng; ++g, wq += 8) {
        const __m256i x0 = _mm256_loadu_si256((const __m256i *)(px + (int64_t)(2 * g) * width));
        const __m256i x1 = _mm256_loadu_si256((const __m256i *)(px + (int64_t)(2 * g + 1) * width));
        AOTC_QUBS_STEP(a0, x0, x1, _mm256_set1_epi32(wq[0]), _mm256_set1_epi32(wq[1]));
        AOTC_QUBS_STEP(a1, x0, x1, _mm256_set1_epi32(wq[2]), _mm256_set1_epi32(wq[3]));
        AOTC_QUBS_STEP(a2, x0, x1, _mm256_set1_epi32(wq[4]), _mm256_set1_epi32(wq[5]));
        AOTC_QUBS_STEP(a3, x0, x1, _mm256_set1_epi32(wq[6]), _mm256_set1_epi32(wq[7]));
    }
    _mm256_storeu_si256((__m256i *)(acc[0] + t0), a0), _mm256_storeu_si256((__m256i *)(acc[1] + t0), a1);
    _mm256_storeu_si256((__m256i *)(acc[2] + t0), a2), _mm256_storeu_si256((__m256i *)(acc[3] + t0), a3);
}

/* What the clipping took off a block of 4 channels added to its sums: each entry (c | q << 2, quad) by one
 * vpmaddubsw (each pair of the quad within +-128: exact) and vpmaddwd with ones, `width` positions */
static void AOTC_Q(qubs_fix)(const uint8_t *AOTC_RESTRICT quads, int32_t width, const int32_t *AOTC_RESTRICT fix,
                             int32_t n, int32_t acc[4][AOTC_QCONV_PATCH_TILE]) {
    const __m256i ones = _mm256_set1_epi16(1);
    int32_t e, t;
    for (e = 0; e < n; ++e) {
        const int32_t *row = (const int32_t *)(const void *)quads + (int64_t)(fix[2 * e] >> 2) * width;
        const __m256i wv = _mm256_set1_epi32(fix[2 * e + 1]);
        int32_t *a = acc[fix[2 * e] & 3];
        for (t = 0; t < width; t += 8) {
            const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i *)(row + t)), wv), ones);
            _mm256_storeu_si256((__m256i *)(a + t), _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(a + t)), s));
        }
    }
}

/* The clipped weights of channels [oc, oc + nb) (a block of 4, those past nb zero) as qubs_lanes reads them, words
 * [g][c][h]: quad 2 g + h of channel c, from w (its quads as aotc_qconv_wrow lays them), less the block's fixes (what
 * the clipping took: `n` entries of `fix`, subtracted bytewise; the results are int8, so wrapping cannot err). A
 * 4 x 4 transpose of 8-byte pairs of quads: 4 instructions a pair, 2 % of the tile's for a block of 64 positions */
static void AOTC_Q(qubs_wblock)(const aotc_qconv_params *p, const int8_t *AOTC_RESTRICT w, int32_t oc, int32_t nb,
                                int32_t kq, const int32_t *AOTC_RESTRICT fix, int32_t n, int32_t *AOTC_RESTRICT out) {
    const int32_t kp = kq * 4, ng = (kq + 1) / 2;
    int32_t g = 0, c, h, e;
    if (AOTC_QCONV_PACKED(p)) { /* the 4 channels' quad q: 16 bytes of quad row q of their block of 16 */
        const int8_t *wq = aotc_qconv_wrow(p, w, oc, kp);
        for (; 2 * g + 1 < kq; ++g) {
            const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(wq + 128 * g));
            const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(wq + 128 * g + 64));
            _mm_storeu_si128((__m128i *)(void *)(out + 8 * g), _mm_unpacklo_epi32(a, b));
            _mm_storeu_si128((__m128i *)(void *)(out + 8 * g + 4), _mm_unpackhi_epi32(a, b));
        }
    } else if (nb == 4) {
        const int8_t *r0 = w + (int64_t)oc * kp, *r1 = r0 + kp, *r2 = r1 + kp, *r3 = r2 + kp;
        for (; 2 * g + 8 <= kq; g += 4) { /* 4 pairs of quads of each channel */
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)(r0 + 8 * g));
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(r1 + 8 * g));
            const __m256i v2 = _mm256_loadu_si256((const __m256i *)(const void *)(r2 + 8 * g));
            const __m256i v3 = _mm256_loadu_si256((const __m256i *)(const void *)(r3 + 8 * g));
            const __m256i t0 = _mm256_unpacklo_epi64(v0, v1), t1 = _mm256_unpackhi_epi64(v0, v1);
            const __m256i t2 = _mm256_unpacklo_epi64(v2, v3), t3 = _mm256_unpackhi_epi64(v2, v3);
            _mm256_storeu_si256((__m256i *)(void *)(out + 8 * g), _mm256_permute2x128_si256(t0, t2, 0x20));
            _mm256_storeu_si256((__m256i *)(void *)(out + 8 * g + 8), _mm256_permute2x128_si256(t1, t3, 0x20));
            _mm256_storeu_si256((__m256i *)(void *)(out + 8 * g + 16), _mm256_permute2x128_si256(t0, t2, 0x31));
            _mm256_storeu_si256((__m256i *)(void *)(out + 8 * g + 24), _mm256_permute2x128_si256(t1, t3, 0x31));
        }
    }
    for (; g < ng; ++g) { /* the rest one word at a time: past nb, and quad kq where kq is odd, zero */
        for (c = 0; c < 4; ++c) {
            for (h = 0; h < 2; ++h) {
                int32_t v = 0;
                if (c < nb && 2 * g + h < kq)
                    memcpy(&v, aotc_qconv_wrow(p, w, oc + c, kp) + (int64_t)(2 * g + h) * AOTC_QCONV_QSTEP(p), 4);
                out[8 * g + 2 * c + h] = v;
            }
        }
    }
    for (e = 0; e < n; ++e) {
        const int32_t q = fix[2 * e] >> 2, at = 8 * (q >> 1) + 2 * (fix[2 * e] & 3) + (q & 1);
        out[at] = _mm_cvtsi128_si32(_mm_sub_epi8(_mm_cvtsi32_si128(out[at]), _mm_cvtsi32_si128(fix[2 * e + 1])));
    }
}

/* each position's patch sum (the weights' zero points take it off): its 2 kq pairs of 16 bits summed by vpmaddwd
 * with ones, 8 positions a vector (width a multiple of 8) */
static inline void AOTC_Q(qavx2_patch_sums)(const int16_t *pairs, int32_t width, int32_t kq, int32_t *sums) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int32_t t = 0; t < width; t += 8) {
        __m256i s = _mm256_setzero_si256();
        for (int32_t j = 0; j < 2 * kq; ++j) {
            const __m256i xv = _mm256_loadu_si256((const __m256i *)(pairs + ((int64_t)j * width + t) * 2));
            s = _mm256_add_epi32(s, _mm256_madd_epi16(xv, ones));
        }
        _mm256_storeu_si256((__m256i *)(sums + t), s);
    }
}

/* qconv_patches_avx2 by vpmaddubsw (above): its blocks of positions and patch pairs, made quads */
static void AOTC_Q(qconv_patches_ubs)(const aotc_qconv_params *p, int32_t tile, int32_t ptile, const QT *AOTC_RESTRICT x,
                                      const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch,
                                      const aotc_qresidual_params *rp, const QT *res) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t kq = (k + 3) / 4, ng = (kq + 1) / 2, mg4 = (mg + 3) / 4;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const int32_t *fix_at = p->ubs_fix, *fix = p->ubs_fix + p->group * mg4 + 1;
    /* the clipped weights in p->work past the second patch block, if any: every block's, made once, where they fit */
    const int32_t block = aotc_qconv_ubs_block(p, tile, ptile);
    const int64_t second = block == tile && tile != ptile ? aotc_qconv_patch_bytes(p, tile) : 0;
    int32_t *wbuf = (int32_t *)(void *)(scratch + aotc_qconv_patch_bytes(p, tile) + second);
    const int once = p->work - second >= aotc_qconv_ubs_wall_bytes(p);
    int32_t acc[4][AOTC_QCONV_PATCH_TILE];
    int32_t sums[AOTC_QCONV_PATCH_TILE];
    int32_t n, g, oc, p0, t0;
    for (g = 0; once && g < p->group; ++g) {
        for (oc = g * mg; oc < (g + 1) * mg; oc += 4) {
            const int32_t nb = (g + 1) * mg - oc < 4 ? (g + 1) * mg - oc : 4, blk = g * mg4 + (oc - g * mg) / 4;
            AOTC_Q(qubs_wblock)(p, w, oc, nb, kq, fix + 2 * fix_at[blk], fix_at[blk + 1] - fix_at[blk],
                                wbuf + (int64_t)blk * ng * 8);
        }
    }
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            QT *yn = y + (int64_t)n * p->out_c * plane_out;
            for (p0 = 0; p0 < plane_out; p0 += block) { /* blocks as qconv_patches_avx2's */
                const int32_t np = plane_out - p0 < block ? plane_out - p0 : block;
                const int32_t np_lanes = (np + 7) / 8 * 8;
                const int32_t q0 = np_lanes <= plane_out ? p0 + np - np_lanes : 0;
                const int32_t real = np_lanes <= plane_out ? np_lanes : plane_out;
                const int32_t width = np_lanes;
                AOTC_Q(qconv_patch_pairs)(p, xg, cg, q0, real, width, kq, (int16_t *)(void *)scratch);
                if (p->w_zero_any) AOTC_Q(qavx2_patch_sums)((const int16_t *)(const void *)scratch, width, kq, sums);
                AOTC_Q(qubs_quads)(scratch, width, kq);
                for (oc = g * mg; oc < (g + 1) * mg; oc += 4) {
                    const int32_t nb = (g + 1) * mg - oc < 4 ? (g + 1) * mg - oc : 4;
                    const int32_t blk = g * mg4 + (oc - g * mg) / 4;
                    const int32_t *wq = once ? wbuf + (int64_t)blk * ng * 8 : wbuf;
                    if (!once)
                        AOTC_Q(qubs_wblock)(p, w, oc, nb, kq, fix + 2 * fix_at[blk], fix_at[blk + 1] - fix_at[blk], wbuf);
                    for (t0 = 0; t0 + AOTC_QCONV_LANES <= width; t0 += AOTC_QCONV_LANES)
                        AOTC_Q(qubs_lanes)(scratch, width, t0, ng, wq, acc);
                    if (t0 < width) AOTC_Q(qubs_lanes8)(scratch, width, t0, ng, wq, acc);
                    AOTC_Q(qubs_fix)(scratch, width, fix + 2 * fix_at[blk], fix_at[blk + 1] - fix_at[blk], acc);
                    AOTC_Q(qavx2_store)(p, acc, sums, oc, nb, yn + q0, y, p0 - q0, real, width, rp, res);
                }
            }
        }
    }
}
/* qconv_patches_plain on AVX2 (see above); 0 where the patch block holds fewer than 16 positions as pairs (the
 * byte quads then) */
static int AOTC_Q(qconv_patches_avx2)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                                      const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch,
                                      const aotc_qresidual_params *rp, const QT *res) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t kq = (k + 3) / 4, kp = kq * 4;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    /* the scratch holds tile (in whole lanes) x kp bytes: half as many positions as pairs of 16 bits */
    const int32_t ptile = (tile + AOTC_QCONV_LANES - 1) / AOTC_QCONV_LANES * AOTC_QCONV_LANES / 2 / AOTC_QCONV_LANES *
                          AOTC_QCONV_LANES;
    int16_t *pairs = (int16_t *)(void *)scratch;
    /* the whole weights widened once (p->work: aotc_qconv_avx2_work_bytes), else a chunk a block in wb */
    int32_t *wall = aotc_qconv_avx2_work_bytes(p) ? (int32_t *)(void *)(scratch + aotc_qconv_patch_bytes(p, tile)) : NULL;
    const int32_t mg4 = (mg + 3) / 4;
    int32_t wb[AOTC_QAVX2_JC * 4];
    int32_t acc[4][AOTC_QCONV_PATCH_TILE];
    int32_t sums[AOTC_QCONV_PATCH_TILE];
    int32_t n, g, oc, p0, t0, j0;
    /* (its pairs gathered in the weights' own order: not qconv_rows's, w_packed 2, which the plain loops take) */
    if (ptile < AOTC_QCONV_LANES || AOTC_QCONV_PACKED(p) == 2) return 0;
    if (p->ubs_fix != NULL) {
        AOTC_Q(qconv_patches_ubs)(p, tile, ptile, x, w, y, scratch, rp, res);
        return 1;
    }
    for (g = 0; wall != NULL && g < p->group; ++g) {
        for (oc = g * mg; oc < (g + 1) * mg; oc += 4) {
            const int32_t nb = (g + 1) * mg - oc < 4 ? (g + 1) * mg - oc : 4;
            AOTC_Q(qavx2_weights)(p, w, oc, nb, kp, 0, kq, wall + ((int64_t)g * mg4 + (oc - g * mg) / 4) * kq * 8);
        }
    }
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            QT *yn = y + (int64_t)n * p->out_c * plane_out;
            for (p0 = 0; p0 < plane_out; p0 += ptile) { /* blocks as qconv_patches_plain's */
                const int32_t np = plane_out - p0 < ptile ? plane_out - p0 : ptile;
                /* the last block in whole vectors of 8 (a 7 x 7 plane's 32 + 24 positions, not 32 + 32) */
                const int32_t np_lanes = (np + 7) / 8 * 8;
                const int32_t q0 = np_lanes <= plane_out ? p0 + np - np_lanes : 0;
                const int32_t real = np_lanes <= plane_out ? np_lanes : plane_out;
                const int32_t width = np_lanes;
                AOTC_Q(qconv_patch_pairs)(p, xg, cg, q0, real, width, kq, pairs);
                if (p->w_zero_any) AOTC_Q(qavx2_patch_sums)(pairs, width, kq, sums);
                for (oc = g * mg; oc < (g + 1) * mg; oc += 4) {
                    const int32_t nb = (g + 1) * mg - oc < 4 ? (g + 1) * mg - oc : 4;
                    for (j0 = 0; j0 < 2 * kq; j0 += AOTC_QAVX2_JC) {
                        const int32_t nj = 2 * kq - j0 < AOTC_QAVX2_JC ? 2 * kq - j0 : AOTC_QAVX2_JC;
                        const int32_t *wj = wb;
                        if (wall != NULL) {
                            wj = wall + ((int64_t)g * mg4 + (oc - g * mg) / 4) * kq * 8 + 4 * j0;
                        } else {
                            AOTC_Q(qavx2_weights)(p, w, oc, nb, kp, j0 / 2, nj / 2, wb);
                        }
                        for (t0 = 0; t0 + AOTC_QCONV_LANES <= width; t0 += AOTC_QCONV_LANES) {
                            AOTC_Q(qavx2_lanes)(pairs + (int64_t)j0 * width * 2, width, t0, nj, wj, j0 == 0, acc);
                        }
                        if (t0 < width) AOTC_Q(qavx2_lanes8)(pairs + (int64_t)j0 * width * 2, width, t0, nj, wj, j0 == 0, acc);
                    }
                    AOTC_Q(qavx2_store)(p, acc, sums, oc, nb, yn + q0, y, p0 - q0, real, width, rp, res);
                }
            }
        }
    }
    return 1;
}
#endif /* AOTC_QUANT_AVX2 */

#if AOTC_QUANT_DSP
/* The DSP extension's paths (quant_dsp.h): sums of 16-bit pairs by SMLAD, bit-exact with the plain
 * paths. */

/* y[t] = aotc_requant(acc[t] + bias - wz sums[t], ...) for t < n, with [lo, hi] the clamp of
 * y - zero_point as integers (sums may be NULL when wz is 0). */
static void AOTC_Q(dsp_requant_run)(const int32_t *AOTC_RESTRICT acc, int32_t n, int32_t bias, int32_t wz,
                                    const int32_t *AOTC_RESTRICT sums, float scale, int32_t lo, int32_t hi,
                                    int32_t zero_point, QT *AOTC_RESTRICT y) {
    int32_t t;
    if (wz != 0) {
        for (t = 0; t < n; ++t) {
            const int32_t r = aotc_dsp_round16((float)(acc[t] + bias - wz * sums[t]) * scale);
            y[t] = (QT)((r < lo ? lo : r > hi ? hi : r) + zero_point);
        }
    } else if (lo == QT_MIN - zero_point && hi == QT_MAX - zero_point) { /* the type's range: a saturation */
        for (t = 0; t < n; ++t) {
            const int32_t r = aotc_dsp_round16((float)(acc[t] + bias) * scale) + zero_point;
            y[t] = (QT)(QT_MIN < 0 ? __ssat(r, 8) : __usat(r, 8));
        }
    } else {
        lo += zero_point, hi += zero_point;
        for (t = 0; t < n; ++t) {
            const int32_t r = aotc_dsp_round16((float)(acc[t] + bias) * scale) + zero_point;
            y[t] = (QT)(r < lo ? lo : r > hi ? hi : r);
        }
    }
}

/* Patch words of `count` consecutive positions of one output row with all four rows s0 .. s3 inside
 * the image (s_j: row j's input under the first position; stride sw), from dst (the first position's
 * words; `odd`: it is the second of its pair; the next pair's words `step` words on). Two positions
 * at a time where they share a pair: at stride 1 from one halfword of each row, at stride 2 from
 * one word (bytes 0 and 2), read only where the byte after the pair's last input is still the
 * row's. */
static void AOTC_Q(gather_pairs_run)(const QT *s0, const QT *s1, const QT *s2, const QT *s3, int32_t sw, int32_t count,
                                     int32_t odd, uint32_t *dst, int32_t step) {
    const uint32_t flip = AOTC_QOFFSET ? 0x80808080u : 0u; /* int8 bytes + 128 */
    if (odd && count > 0) {
        dst[0] = (uint32_t)(uint8_t)(*s0 + AOTC_QOFFSET) | (uint32_t)(uint8_t)(*s2 + AOTC_QOFFSET) << 16;
        dst[1] = (uint32_t)(uint8_t)(*s1 + AOTC_QOFFSET) | (uint32_t)(uint8_t)(*s3 + AOTC_QOFFSET) << 16;
        s0 += sw, s1 += sw, s2 += sw, s3 += sw;
        dst += step - 2;
        --count;
        odd = 0;
    }
    if (sw == 1) {
        for (; count >= 2; count -= 2) {
            uint16_t h0, h1, h2, h3;
            uint32_t e, d;
            memcpy(&h0, s0, 2), memcpy(&h1, s1, 2), memcpy(&h2, s2, 2), memcpy(&h3, s3, 2);
            s0 += 2, s1 += 2, s2 += 2, s3 += 2;
            e = ((uint32_t)h0 | (uint32_t)h2 << 16) ^ flip; /* rows 0, 2 at two positions */
            d = ((uint32_t)h1 | (uint32_t)h3 << 16) ^ flip;
            dst[0] = (uint32_t)__uxtb16(e);
            dst[1] = (uint32_t)__uxtb16(d);
            dst[2] = aotc_dsp_uxtb16_hi(e);
            dst[3] = aotc_dsp_uxtb16_hi(d);
            dst += step;
        }
    } else if (sw == 2) {
        for (; count >= 3; count -= 2) { /* a third position follows: its input bounds the word read */
            const uint32_t u0 = (uint32_t)__uxtb16(aotc_dsp_load32(s0) ^ flip);
            const uint32_t u1 = (uint32_t)__uxtb16(aotc_dsp_load32(s1) ^ flip);
            const uint32_t u2 = (uint32_t)__uxtb16(aotc_dsp_load32(s2) ^ flip);
            const uint32_t u3 = (uint32_t)__uxtb16(aotc_dsp_load32(s3) ^ flip);
            s0 += 4, s1 += 4, s2 += 4, s3 += 4;
            dst[0] = (u0 & 0xFFFFu) | u2 << 16;
            dst[1] = (u1 & 0xFFFFu) | u3 << 16;
            dst[2] = u0 >> 16 | (u2 & 0xFFFF0000u);
            dst[3] = u1 >> 16 | (u3 & 0xFFFF0000u);
            dst += step;
        }
    }
    for (; count > 0; --count) { /* one position at a time */
        dst[0] = (uint32_t)(uint8_t)(*s0 + AOTC_QOFFSET) | (uint32_t)(uint8_t)(*s2 + AOTC_QOFFSET) << 16;
        dst[1] = (uint32_t)(uint8_t)(*s1 + AOTC_QOFFSET) | (uint32_t)(uint8_t)(*s3 + AOTC_QOFFSET) << 16;
        s0 += sw, s1 += sw, s2 += sw, s3 += sw;
        if (odd) dst += step - 2;
        else dst += 2;
        odd = !odd;
    }
}

/* The patch of output positions [p0, p0 + n) of one group as 16-bit pairs, padded to ne (even)
 * positions with the zero point: for position t and quad q (rows 4q .. 4q + 3), the words
 * E = [row 4q, row 4q + 2] and O = [row 4q + 1, row 4q + 3] (each x + AOTC_QOFFSET, as the bytes of
 * qconv_patch_quads) at pairs[((t / 2) kq + q) 4 + (t % 2) 2 + {0, 1}]: a position pair's quads
 * are consecutive, 16 bytes each, as aotc_dsp_mac2x2 reads them. Rows past k hold the zero point.
 * Where all four rows of a quad are inside the image, the run is copied with no tests, two positions
 * at a time (gather_pairs_run). */
static void AOTC_Q(qconv_gather_pairs)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t k, int32_t p0,
                                       int32_t n, int32_t ne, int32_t kq, uint32_t *AOTC_RESTRICT pairs) {
    const uint32_t zero = (uint8_t)(p->x_zero + AOTC_QOFFSET);
    const int32_t ow_n = p->out_w, sw = p->stride_w, step = kq * 4, plane_in = p->in_h * p->in_w;
    const int32_t in_h = p->in_h, in_w = p->in_w, k_h = p->k_h, k_w = p->k_w, dil_h = p->dil_h, dil_w = p->dil_w;
    int32_t q, j, t;
    if (k_h == 1 && k_w == 1 && p->stride_h == 1 && sw == 1 && p->pad_top == 0 && p->pad_left == 0 && in_w == ow_n &&
        in_h == p->out_h) { /* a pointwise conv: each row is one run of the input, whatever the output rows */
        for (q = 0; q < kq; ++q) {
            const QT *s[4];
            for (j = 0; j < 4; ++j) s[j] = 4 * q + j < k ? xg + (4 * q + j) * plane_in + p0 : NULL;
            if (s[3] != NULL) {
                AOTC_Q(gather_pairs_run)(s[0], s[1], s[2], s[3], 1, n, 0, pairs + q * 4, step);
            } else { /* the last quad, with rows past k */
                for (t = 0; t < n; ++t) {
                    uint32_t v[4];
                    for (j = 0; j < 4; ++j) v[j] = s[j] != NULL ? (uint8_t)(s[j][t] + AOTC_QOFFSET) : zero;
                    pairs[((t >> 1) * kq + q) * 4 + (t & 1) * 2] = v[0] | v[2] << 16;
                    pairs[((t >> 1) * kq + q) * 4 + (t & 1) * 2 + 1] = v[1] | v[3] << 16;
                }
            }
        }
        t = n;
    } else {
        t = 0;
    }
    while (t < n) { /* one output row's run of positions at a time */
        const int32_t pos = p0 + t, oh = pos / ow_n, first = pos % ow_n;
        const int32_t last = first + (n - t) < ow_n ? first + (n - t) : ow_n;
        const int32_t ih0 = oh * p->stride_h - p->pad_top, start0 = -p->pad_left;
        const QT *plane = xg;
        int32_t tap_h = 0, tap_w = 0, ih = ih0, start = start0; /* the tap of the next row, its input row and column */
        for (q = 0; q < kq; ++q) {
            const QT *src[4];
            int32_t lo[4], hi[4], a = first, b = last, o = first;
            for (j = 0; j < 4; ++j) { /* row 4q + j: its input, and the output columns [lo, hi) inside the image */
                lo[j] = hi[j] = 0;
                src[j] = xg;
                if (4 * q + j < k) {
                    if ((uint32_t)ih < (uint32_t)in_h) {
                        src[j] = plane + ih * in_w + start;
                        if (sw == 1) {
                            lo[j] = start < 0 ? -start : 0;
                            hi[j] = start < in_w ? in_w - start : 0;
                        } else {
                            lo[j] = start < 0 ? (-start + sw - 1) / sw : 0;
                            hi[j] = start < in_w ? (in_w - start + sw - 1) / sw : 0;
                        }
                    }
                    start += dil_w;
                    if (++tap_w == k_w) {
                        tap_w = 0, start = start0, ih += dil_h;
                        if (++tap_h == k_h) tap_h = 0, ih = ih0, plane += plane_in;
                    }
                }
                a = lo[j] > a ? lo[j] : a;
                b = hi[j] < b ? hi[j] : b;
            }
            while (o < last) {
                const int32_t tt = t + (o - first);
                uint32_t *dst = pairs + ((tt >> 1) * kq + q) * 4 + (tt & 1) * 2;
                if (o == a && a < b) { /* the run inside the image */
                    AOTC_Q(gather_pairs_run)(src[0] + o * sw, src[1] + o * sw, src[2] + o * sw, src[3] + o * sw, sw, b - a,
                                             tt & 1, dst, step);
                    o = b;
                } else { /* a position where some row is outside the image */
                    uint32_t v[4];
                    for (j = 0; j < 4; ++j) v[j] = o >= lo[j] && o < hi[j] ? (uint8_t)(src[j][o * sw] + AOTC_QOFFSET) : zero;
                    dst[0] = v[0] | v[2] << 16;
                    dst[1] = v[1] | v[3] << 16;
                    o += 1;
                }
            }
        }
        t += last - first;
    }
    for (t = n; t < ne; ++t) { /* the pad position */
        for (q = 0; q < kq; ++q) {
            uint32_t *dst = pairs + ((t >> 1) * kq + q) * 4 + (t & 1) * 2;
            dst[0] = dst[1] = zero | zero << 16;
        }
    }
}

/* QLinearConv on patches with the DSP extension: blocks of half the scratch's positions (their 16-bit
 * pairs take two bytes a row), 2 output channels x 2 positions at a time (aotc_dsp_mac2x2), the
 * weights of the 2 channels widened AOTC_DSP_KCHUNK quads at a time into the work block after the patch
 * block (aotc_qconv_dsp_work_bytes). 0 (and nothing done) where the scratch is not word-aligned or the
 * work block not given: the plain path then runs. */
static int AOTC_Q(qconv_patches_dsp)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                                     const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch,
                                     const aotc_qresidual_params *rp, const QT *res) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t kq = (k + 3) / 4, kp = kq * 4;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    /* positions a block: the scratch holds tile rounded up to whole lanes x kp bytes, 2 kp a position */
    const int32_t block = (tile + AOTC_QCONV_LANES - 1) / AOTC_QCONV_LANES * AOTC_QCONV_LANES / 2;
    const int32_t lo = (int32_t)p->y_lo, hi = (int32_t)p->y_hi;
    uint32_t *pairs = (uint32_t *)(void *)scratch;
    uint32_t *const wx = (uint32_t *)(void *)aotc_qconv_work(p, scratch, aotc_qconv_patch_bytes(p, tile),
                                                           aotc_qconv_dsp_work_bytes(p), 4);
    int32_t acc[AOTC_QCONV_PATCH_TILE / 4][4]; /* a position pair's 2 x 2 sums */
    int32_t out[2][AOTC_QCONV_PATCH_TILE / 2], sums[AOTC_QCONV_PATCH_TILE / 2];
    int32_t n, g, p0, oc, qa, t, j, gp;
    if (block < 2 || ((uintptr_t)scratch & 3u) != 0 || wx == NULL) return 0;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            for (p0 = 0; p0 < plane_out; p0 += block) {
                const int32_t np = plane_out - p0 < block ? plane_out - p0 : block, pairs_n = (np + 1) / 2;
                AOTC_Q(qconv_gather_pairs)(p, xg, k, p0, np, 2 * pairs_n, kq, pairs);
                if (p->w_zero_any) { /* each patch's sum, for the weights' zero points */
                    for (t = 0; t < np; ++t) {
                        const uint32_t *pt = pairs + (t >> 1) * kq * 4 + (t & 1) * 2;
                        int32_t s = 0, q;
                        for (q = 0; q < kq; ++q) {
                            s = __smlad((int32_t)pt[4 * q], 0x00010001, __smlad((int32_t)pt[4 * q + 1], 0x00010001, s));
                        }
                        sums[t] = s;
                    }
                }
                for (oc = g * mg; oc < (g + 1) * mg; oc += 2) {
                    const int32_t c1 = oc + 1 < (g + 1) * mg ? oc + 1 : oc; /* a last odd channel: twice */
                    const int32_t b0 = p->bias[oc], b1 = p->bias[c1]; /* the sums start at the biases */
                    for (gp = 0; gp < pairs_n; ++gp) acc[gp][0] = acc[gp][1] = b0, acc[gp][2] = acc[gp][3] = b1;
                    for (qa = 0; qa < kq; qa += AOTC_DSP_KCHUNK) {
                        const int32_t nq = kq - qa < AOTC_DSP_KCHUNK ? kq - qa : AOTC_DSP_KCHUNK;
                        aotc_dsp_widen_weights(w + (int64_t)oc * kp + 4 * qa, w + (int64_t)c1 * kp + 4 * qa, nq, wx);
                        aotc_dsp_mac2x2(pairs + qa * 4, kq * 4, pairs_n, wx, nq, acc[0]);
                    }
                    for (gp = 0; gp < pairs_n; ++gp) {
                        out[0][2 * gp] = acc[gp][0], out[0][2 * gp + 1] = acc[gp][1];
                        out[1][2 * gp] = acc[gp][2], out[1][2 * gp + 1] = acc[gp][3];
                    }
                    for (j = 0; j <= (c1 != oc); ++j) {
                        const int32_t c = oc + j;
                        const int64_t at = ((int64_t)n * p->out_c + c) * plane_out + p0;
                        QT v[AOTC_QCONV_PATCH_TILE / 2]; /* with a fused ADD: the run, before it goes through */
                        /* one call (inlined at -Os too, as with the conv alone) */
                        AOTC_Q(dsp_requant_run)(out[j], np, 0, p->w_zero_any ? p->w_zero[c] : 0, sums, p->scale[c],
                                                lo, hi, p->y_zero, rp != NULL ? v : y + at);
                        if (rp != NULL) { /* the fused ADD, each residual element read before y's is written */
                            for (t = 0; t < np; ++t) y[at + t] = (QT)AOTC_Q(residual_one)(rp, v[t], res[at + t]);
                        }
                    }
                }
            }
        }
    }
    return 1;
}
#endif

#if !AOTC_QUANT_VNNI
/* QLinearConv on patches in plain loops (or the DSP extension's): the patch quads, 4 output channels
 * x AOTC_QCONV_LANES positions at a time (qconv_quad_lanes), requantised one by one. */
static void AOTC_Q(qconv_patches_plain)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                                        const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y,
                                        uint8_t *AOTC_RESTRICT scratch, const aotc_qresidual_params *rp, const QT *res) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t kq = (k + 3) / 4, kp = kq * 4;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    int32_t acc[AOTC_QCONV_BLOCK][AOTC_QCONV_LANES];
    int32_t sums[AOTC_QCONV_PATCH_TILE];
    int32_t n, g, oc, p0, t, t0, j, r;
#if AOTC_QUANT_MVE
    if (AOTC_Q(qconv_patches_mve)(p, tile, x, w, y, scratch, rp, res)) return;
#endif
#if AOTC_QUANT_DSP
    if (!AOTC_QCONV_PACKED(p) && AOTC_Q(qconv_patches_dsp)(p, tile, x, w, y, scratch, rp, res)) return;
#endif
#if AOTC_QUANT_AVX2
    if (AOTC_Q(qconv_patches_avx2)(p, tile, x, w, y, scratch, rp, res)) return;
#endif
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            QT *yn = y + (int64_t)n * p->out_c * plane_out;
            for (p0 = 0; p0 < plane_out; p0 += tile) {
                /* a whole number of lanes: where the plane allows, the last block re-reads a few
                 * positions of the one before; a plane smaller than that is padded to whole lanes */
                const int32_t np = plane_out - p0 < tile ? plane_out - p0 : tile;
                const int32_t np_lanes = (np + AOTC_QCONV_LANES - 1) / AOTC_QCONV_LANES * AOTC_QCONV_LANES;
                const int32_t q0 = np_lanes <= plane_out ? p0 + np - np_lanes : 0; /* first position gathered */
                const int32_t real = np_lanes <= plane_out ? np_lanes : plane_out; /* positions gathered */
                const int32_t width = np_lanes;
                AOTC_Q(qconv_patch_quads)(p, xg, cg, q0, real, width, kq, scratch);
                for (t = 0; t < width; ++t) sums[t] = 0;
                if (p->w_zero_any) {
                    for (r = 0; r < kp; ++r) {
                        for (t = 0; t < width; ++t) sums[t] += scratch[((int64_t)(r >> 2) * width + t) * 4 + (r & 3)];
                    }
                }
                for (oc = g * mg; oc < (g + 1) * mg; oc += AOTC_QCONV_BLOCK) {
                    const int32_t nb = (g + 1) * mg - oc < AOTC_QCONV_BLOCK ? (g + 1) * mg - oc : AOTC_QCONV_BLOCK;
                    for (t0 = 0; t0 < width; t0 += AOTC_QCONV_LANES) {
                        const int32_t lanes = real - t0 < AOTC_QCONV_LANES ? real - t0 : AOTC_QCONV_LANES;
                        AOTC_Q(qconv_quad_lanes)(scratch, width, t0, kq, p, aotc_qconv_wrow(p, w, oc, kp), nb, acc);
                        for (j = 0; j < nb; ++j) { /* a run of one channel's outputs: requantised as a vector */
                            const int32_t b = p->bias[oc + j], wz = p->w_zero[oc + j];
                            const float sc = p->scale[oc + j];
                            QT *yo = yn + (int64_t)(oc + j) * plane_out + q0 + t0;
                            int32_t l;
                            if (rp != NULL) { /* through the fused ADD; positions before p0, which the block
                                              * before wrote (over their residual), are not written again */
                                const QT *ro = res + (yo - y);
                                for (l = p0 - (q0 + t0) > 0 ? p0 - (q0 + t0) : 0; l < lanes; ++l) {
                                    const int32_t v = aotc_requant(acc[j][l] + b - wz * sums[t0 + l], sc, p->y_lo,
                                                                   p->y_hi, p->y_zero);
                                    yo[l] = (QT)AOTC_Q(residual_one)(rp, v, ro[l]);
                                }
                                continue;
                            }
                            for (l = 0; l < lanes; ++l) {
                                yo[l] = (QT)aotc_requant(acc[j][l] + b - wz * sums[t0 + l], sc, p->y_lo, p->y_hi,
                                                         p->y_zero);
                            }
                        }
                    }
                }
            }
        }
    }
}
#endif /* !AOTC_QUANT_VNNI */

#if AOTC_QCONV_NOSCRATCH
/* QLinearConv on patches with no scratch (tile 0): per block of AOTC_QCONV_LANES positions and
 * AOTC_QCONV_NS_BLOCK output channels (their sums, 1 KiB, on the stack: hosts only), the patch rows
 * taken AOTC_QCONV_NS_ROWS at a time into a stack buffer (qconv_patch_row) and summed in plain loops;
 * a block's rows are gathered again for each channel block (slower than the patch path, but only
 * where the arena has no byte to spare). The sums are those of the patch path: rows past k (to kp)
 * hold the zero point. */
static void AOTC_Q(qconv_patches_noscratch)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                            const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t kp = (k + 3) / 4 * 4, plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const int32_t zp = p->x_zero + AOTC_QOFFSET, qs = AOTC_QCONV_QSTEP(p);
    const int8_t *wr[AOTC_QCONV_NS_BLOCK];
    uint8_t rows[AOTC_QCONV_NS_ROWS][AOTC_QCONV_LANES];
    int32_t acc[AOTC_QCONV_NS_BLOCK][AOTC_QCONV_LANES], sums[AOTC_QCONV_LANES];
    int32_t n, g, oc, p0, r0, j, b, l;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            QT *yn = y + (int64_t)n * p->out_c * plane_out;
            for (p0 = 0; p0 < plane_out; p0 += AOTC_QCONV_LANES) {
                const int32_t np = plane_out - p0 < AOTC_QCONV_LANES ? plane_out - p0 : AOTC_QCONV_LANES;
                for (oc = g * mg; oc < (g + 1) * mg; oc += AOTC_QCONV_NS_BLOCK) {
                    const int32_t nb = (g + 1) * mg - oc < AOTC_QCONV_NS_BLOCK ? (g + 1) * mg - oc : AOTC_QCONV_NS_BLOCK;
                    const int first = oc == g * mg && p->w_zero_any; /* the patch sums, once a block */
                    for (b = 0; b < AOTC_QCONV_NS_BLOCK; ++b) {
                        for (l = 0; l < AOTC_QCONV_LANES; ++l) acc[b][l] = 0;
                    }
                    if (first) {
                        for (l = 0; l < AOTC_QCONV_LANES; ++l) sums[l] = (kp - k) * zp;
                    }
                    for (b = 0; b < AOTC_QCONV_NS_BLOCK; ++b) wr[b] = aotc_qconv_wrow(p, w, oc + (b < nb ? b : 0), kp);
                    for (r0 = 0; r0 < k; r0 += AOTC_QCONV_NS_ROWS) {
                        const int32_t nr = k - r0 < AOTC_QCONV_NS_ROWS ? k - r0 : AOTC_QCONV_NS_ROWS;
                        for (j = 0; j < nr; ++j) AOTC_Q(qconv_patch_row)(p, xg, r0 + j, p0, np, rows[j]);
                        for (j = 0; j < nr; ++j) {
                            if (first) {
                                for (l = 0; l < np; ++l) sums[l] += rows[j][l];
                            }
                            for (b = 0; b < nb; ++b) {
                                const int32_t wv = wr[b][(r0 + j) / 4 * qs + (r0 + j) % 4];
                                for (l = 0; l < np; ++l) acc[b][l] += wv * rows[j][l];
                            }
                        }
                    }
                    for (b = 0; b < nb; ++b) {
                        const int32_t bias = p->bias[oc + b], wz = p->w_zero_any ? p->w_zero[oc + b] : 0;
                        QT *yo = yn + (int64_t)(oc + b) * plane_out + p0;
                        for (l = 0; l < np; ++l) {
                            yo[l] = (QT)aotc_requant(acc[b][l] + bias - wz * sums[l], p->scale[oc + b], p->y_lo, p->y_hi,
                                                     p->y_zero);
                        }
                    }
                }
            }
        }
    }
}

#endif /* AOTC_QCONV_NOSCRATCH */

void AOTC_Q(qconv_patches)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                           const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch) {
#if AOTC_QUANT_VNNI
    if (AOTC_Q(qconv_rows)(p, tile, x, w, y, scratch, NULL, NULL)) return;
#if defined(__AVX512VBMI__)
    if (AOTC_QCONV_PACKED(p) != 2 && AOTC_Q(qconv_dense)(p, tile, x, w, y, scratch, NULL, NULL)) return;
    if (AOTC_Q(qconv_windows)(p, tile, x, w, y, scratch)) return;
#endif
    if (tile > 0) AOTC_Q(qconv_patches_vnni)(p, tile, x, w, y, scratch, aotc_qconv_lane_bytes(aotc_qconv_patch_bytes(p, tile), p));
    else if (!AOTC_Q(qconv_patches_work)(p, x, w, y, scratch)) AOTC_Q(qconv_patches_noscratch)(p, x, w, y);
#elif AOTC_QCONV_NOSCRATCH
    if (tile > 0) AOTC_Q(qconv_patches_plain)(p, tile, x, w, y, scratch, NULL, NULL);
    else AOTC_Q(qconv_patches_noscratch)(p, x, w, y);
#else
    AOTC_Q(qconv_patches_plain)(p, tile, x, w, y, scratch, NULL, NULL);
#endif
}

#if AOTC_QUANT_DSP
/* The bytes 0, 2 (lo) and 1, 3 (hi) of a word of QT as 16-bit halves, signed or not as QT. */
static inline uint32_t AOTC_Q(dsp_widen_lo)(uint32_t v) {
    return QT_MIN < 0 ? (uint32_t)__sxtb16(v) : (uint32_t)__uxtb16(v);
}
static inline uint32_t AOTC_Q(dsp_widen_hi)(uint32_t v) {
    return QT_MIN < 0 ? aotc_dsp_sxtb16_hi(v) : aotc_dsp_uxtb16_hi(v);
}

/* dw_lanes_s1 / dw_lanes for k_w = 3, dilation 1 and stride 1 or 2, with the DSP extension. Output
 * l's three taps of one row are x[l s], x[l s + 1], x[l s + 2]: the word at x + l s widened gives
 * E = [x0, x2] and O = [x1, x3], so SMLAD(E, [w0, w2]) takes the outer taps and SMLABB(O, w1) the
 * middle one (and, at stride 1, SMLAD(O, [w0, w2]) + SMLATB(E, w1) the next output from the same
 * word). The input zero point comes off once: sum (w - wz)(x - xz) = sum (w - wz) x - xz sum (w - wz). */
static void AOTC_Q(dw3_lanes_dsp)(const QT *AOTC_RESTRICT rows, int32_t row_len, int32_t k_h, int32_t sw,
                                  const int8_t *AOTC_RESTRICT wc, int32_t wz, int32_t xz, int32_t *AOTC_RESTRICT out) {
    int32_t wsum = 0, kh, l;
    for (kh = 0; kh < 3 * k_h; ++kh) wsum += wc[kh] - wz;
    wsum *= xz;
    if (k_h == 3) { /* the weights in registers */
        const uint32_t e0 = (uint32_t)(uint16_t)(wc[0] - wz) | (uint32_t)(wc[2] - wz) << 16;
        const uint32_t e1 = (uint32_t)(uint16_t)(wc[3] - wz) | (uint32_t)(wc[5] - wz) << 16;
        const uint32_t e2 = (uint32_t)(uint16_t)(wc[6] - wz) | (uint32_t)(wc[8] - wz) << 16;
        const int32_t m0 = wc[1] - wz, m1 = wc[4] - wz, m2 = wc[7] - wz;
        const QT *r0 = rows, *r1 = rows + row_len, *r2 = rows + 2 * (int64_t)row_len;
        if (sw == 1) {
            for (l = 0; l < AOTC_QCONV_LANES; l += 2) {
                const uint32_t x0 = aotc_dsp_load32(r0 + l), x1 = aotc_dsp_load32(r1 + l), x2 = aotc_dsp_load32(r2 + l);
                const uint32_t E0 = AOTC_Q(dsp_widen_lo)(x0), O0 = AOTC_Q(dsp_widen_hi)(x0);
                const uint32_t E1 = AOTC_Q(dsp_widen_lo)(x1), O1 = AOTC_Q(dsp_widen_hi)(x1);
                const uint32_t E2 = AOTC_Q(dsp_widen_lo)(x2), O2 = AOTC_Q(dsp_widen_hi)(x2);
                int32_t a = __smlad((int32_t)E0, (int32_t)e0, -wsum), b = __smlad((int32_t)O0, (int32_t)e0, -wsum);
                a = __smlabb((int32_t)O0, m0, a), b = __smlatb((int32_t)E0, m0, b);
                a = __smlad((int32_t)E1, (int32_t)e1, a), b = __smlad((int32_t)O1, (int32_t)e1, b);
                a = __smlabb((int32_t)O1, m1, a), b = __smlatb((int32_t)E1, m1, b);
                a = __smlad((int32_t)E2, (int32_t)e2, a), b = __smlad((int32_t)O2, (int32_t)e2, b);
                a = __smlabb((int32_t)O2, m2, a), b = __smlatb((int32_t)E2, m2, b);
                out[l] = a, out[l + 1] = b;
            }
        } else {
            for (l = 0; l < AOTC_QCONV_LANES; ++l) {
                const int64_t at = (int64_t)l * sw;
                const uint32_t x0 = aotc_dsp_load32(r0 + at), x1 = aotc_dsp_load32(r1 + at), x2 = aotc_dsp_load32(r2 + at);
                int32_t a = __smlad((int32_t)AOTC_Q(dsp_widen_lo)(x0), (int32_t)e0, -wsum);
                a = __smlabb((int32_t)AOTC_Q(dsp_widen_hi)(x0), m0, a);
                a = __smlad((int32_t)AOTC_Q(dsp_widen_lo)(x1), (int32_t)e1, a);
                a = __smlabb((int32_t)AOTC_Q(dsp_widen_hi)(x1), m1, a);
                a = __smlad((int32_t)AOTC_Q(dsp_widen_lo)(x2), (int32_t)e2, a);
                a = __smlabb((int32_t)AOTC_Q(dsp_widen_hi)(x2), m2, a);
                out[l] = a;
            }
        }
        return;
    }
    for (l = 0; l < AOTC_QCONV_LANES; ++l) out[l] = -wsum;
    for (kh = 0; kh < k_h; ++kh) {
        const int8_t *wr = wc + 3 * kh;
        const uint32_t e = (uint32_t)(uint16_t)(wr[0] - wz) | (uint32_t)(wr[2] - wz) << 16;
        const int32_t m = wr[1] - wz;
        const QT *r = rows + (int64_t)kh * row_len;
        for (l = 0; l < AOTC_QCONV_LANES; ++l) {
            const uint32_t xv = aotc_dsp_load32(r + (int64_t)l * sw);
            out[l] = __smlabb((int32_t)AOTC_Q(dsp_widen_hi)(xv), m, __smlad((int32_t)AOTC_Q(dsp_widen_lo)(xv), (int32_t)e, out[l]));
        }
    }
}
#endif

#if AOTC_QUANT_DSP
/* Input row ih of one channel into `row` (a ring slot whose padding already holds the zero point):
 * columns 0 .. in_w - 1 of the image at lead, as far as the slot goes, or the zero point for a row
 * outside the image. Copied a word at a time. */
static void AOTC_Q(dsp_pad_row)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT plane, int32_t ih, int32_t lead,
                                int32_t body, QT *AOTC_RESTRICT row) {
    const uint32_t zz = (uint8_t)p->x_zero * 0x01010101u;
    int32_t i;
    row += lead;
    if (ih >= 0 && ih < p->in_h) {
        const QT *src = plane + ih * p->in_w;
        for (i = 0; i + 4 <= body; i += 4) memcpy(row + i, src + i, 4);
        for (; i < body; ++i) row[i] = src[i];
    } else {
        for (i = 0; i + 4 <= body; i += 4) memcpy(row + i, &zz, 4);
        for (; i < body; ++i) row[i] = (QT)p->x_zero;
    }
}

/* Depthwise QLinearConv, 3 x 3 taps (dilation 1, horizontal stride 1 or 2), with the DSP extension:
 * the padded input rows kept in a ring of three (each input row copied once per channel, not once
 * per output row), three taps of a row per output by SMLAD(E, [w0, w2]) + SMLABB(O, w1) on the
 * word at the output's first input (E = its bytes 0, 2 and O = 1, 3 widened; at stride 1 the same
 * word gives the next output by SMLAD(O, [w0, w2]) + SMLATB(E, w1)), the sums started at
 * bias - xz sum (w - wz) and requantised in place. 0 (nothing done) for other shapes. */
static int AOTC_Q(qconv_depthwise_dsp)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x, const int8_t *AOTC_RESTRICT w,
                                       QT *AOTC_RESTRICT y, QT *AOTC_RESTRICT scratch) {
    const int32_t sw = p->stride_w, row_len = AOTC_QCONV_DW_ROW(p->out_w, 3, sw, 1);
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w, xz = p->x_zero, zp = p->y_zero;
    const int32_t lo = (int32_t)p->y_lo + zp, hi = (int32_t)p->y_hi + zp, ow_n = p->out_w;
    /* a slot: pad_left columns of padding, the image's row (as much as fits), padding to row_len */
    const int32_t lead = p->pad_left < row_len ? p->pad_left : row_len;
    const int32_t body = p->in_w < row_len - lead ? p->in_w : row_len - lead;
    int32_t n, c, oh, l, kh;
    if (p->k_h != 3 || p->k_w != 3 || p->dil_h != 1 || p->dil_w != 1 || (sw != 1 && sw != 2) || p->pad_top > 65536) {
        return 0;
    }
    for (n = 0; n < p->batch; ++n) {
        for (c = 0; c < p->out_c; ++c) {
            const QT *plane = x + ((int64_t)n * p->in_c + c) * plane_in;
            QT *yo = y + ((int64_t)n * p->out_c + c) * plane_out;
            const int8_t *wc = w + (int64_t)c * 9;
            const int32_t wz = p->w_zero[c];
            const float sc = p->scale[c];
            const uint32_t e0 = (uint32_t)(uint16_t)(wc[0] - wz) | (uint32_t)(wc[2] - wz) << 16;
            const uint32_t e1 = (uint32_t)(uint16_t)(wc[3] - wz) | (uint32_t)(wc[5] - wz) << 16;
            const uint32_t e2 = (uint32_t)(uint16_t)(wc[6] - wz) | (uint32_t)(wc[8] - wz) << 16;
            const int32_t m0 = wc[1] - wz, m1 = wc[4] - wz, m2 = wc[7] - wz;
            int32_t init = 0, held[3] = {INT32_MIN, INT32_MIN, INT32_MIN}; /* the input row in each slot */
            for (kh = 0; kh < 9; ++kh) init += wc[kh] - wz;
            init = p->bias[c] - xz * init;
            for (l = 0; l < 3 * row_len; ++l) scratch[l] = (QT)xz; /* the slots' padding */
            for (oh = 0; oh < p->out_h; ++oh) {
                const QT *r[3];
                QT *yr = yo + (int64_t)oh * ow_n;
                for (kh = 0; kh < 3; ++kh) {
                    const int32_t ih = oh * p->stride_h - p->pad_top + kh;
                    const int32_t slot = (int32_t)((uint32_t)(ih + 3 * 65536) % 3u); /* ih mod 3 */
                    QT *row = scratch + slot * row_len;
                    if (held[slot] != ih) AOTC_Q(dsp_pad_row)(p, plane, ih, lead, body, row), held[slot] = ih;
                    r[kh] = row;
                }
                if (sw == 1) {
                    for (l = 0; l < ow_n; l += 2) { /* two outputs from one word of each row */
                        const uint32_t x0 = aotc_dsp_load32(r[0] + l), x1 = aotc_dsp_load32(r[1] + l);
                        const uint32_t x2 = aotc_dsp_load32(r[2] + l);
                        const uint32_t E0 = AOTC_Q(dsp_widen_lo)(x0), O0 = AOTC_Q(dsp_widen_hi)(x0);
                        const uint32_t E1 = AOTC_Q(dsp_widen_lo)(x1), O1 = AOTC_Q(dsp_widen_hi)(x1);
                        const uint32_t E2 = AOTC_Q(dsp_widen_lo)(x2), O2 = AOTC_Q(dsp_widen_hi)(x2);
                        int32_t a = __smlad((int32_t)E0, (int32_t)e0, init), b = __smlad((int32_t)O0, (int32_t)e0, init);
                        int32_t ra, rb;
                        a = __smlabb((int32_t)O0, m0, a), b = __smlatb((int32_t)E0, m0, b);
                        a = __smlad((int32_t)E1, (int32_t)e1, a), b = __smlad((int32_t)O1, (int32_t)e1, b);
                        a = __smlabb((int32_t)O1, m1, a), b = __smlatb((int32_t)E1, m1, b);
                        a = __smlad((int32_t)E2, (int32_t)e2, a), b = __smlad((int32_t)O2, (int32_t)e2, b);
                        a = __smlabb((int32_t)O2, m2, a), b = __smlatb((int32_t)E2, m2, b);
                        ra = aotc_dsp_round16((float)a * sc) + zp;
                        yr[l] = (QT)(ra < lo ? lo : ra > hi ? hi : ra);
                        if (l + 1 < ow_n) {
                            rb = aotc_dsp_round16((float)b * sc) + zp;
                            yr[l + 1] = (QT)(rb < lo ? lo : rb > hi ? hi : rb);
                        }
                    }
                } else {
                    for (l = 0; l < ow_n; ++l) {
                        const uint32_t x0 = aotc_dsp_load32(r[0] + 2 * l), x1 = aotc_dsp_load32(r[1] + 2 * l);
                        const uint32_t x2 = aotc_dsp_load32(r[2] + 2 * l);
                        int32_t a = __smlad((int32_t)AOTC_Q(dsp_widen_lo)(x0), (int32_t)e0, init), ra;
                        a = __smlabb((int32_t)AOTC_Q(dsp_widen_hi)(x0), m0, a);
                        a = __smlad((int32_t)AOTC_Q(dsp_widen_lo)(x1), (int32_t)e1, a);
                        a = __smlabb((int32_t)AOTC_Q(dsp_widen_hi)(x1), m1, a);
                        a = __smlad((int32_t)AOTC_Q(dsp_widen_lo)(x2), (int32_t)e2, a);
                        a = __smlabb((int32_t)AOTC_Q(dsp_widen_hi)(x2), m2, a);
                        ra = aotc_dsp_round16((float)a * sc) + zp;
                        yr[l] = (QT)(ra < lo ? lo : ra > hi ? hi : ra);
                    }
                }
            }
        }
    }
    return 1;
}
#endif

#if AOTC_QUANT_DSP
/* Sums of n positions' 4 channels (acc[4i + j]) requantised to the planes y0 + j plane_out, each
 * channel's scale once: aotc_requant's rounding (aotc_dsp_round16), then the zero point and clamp. */
__attribute__((noinline)) static void AOTC_Q(dw4_store)(const aotc_qconv_params *p, const int32_t *AOTC_RESTRICT acc,
                                                        int32_t n, int32_t c, QT *AOTC_RESTRICT y0, int32_t plane_out) {
    const int32_t zp = p->y_zero, lo = (int32_t)p->y_lo + zp, hi = (int32_t)p->y_hi + zp;
    int32_t j, i;
    for (j = 0; j < 4; ++j) {
        const float sc = p->scale[c + j];
        const int32_t *a = acc + j;
        QT *yj = y0 + (int64_t)j * plane_out;
        for (i = 0; i < n; ++i, a += 4) {
            const int32_t r = aotc_dsp_round16((float)*a * sc) + zp;
            yj[i] = (QT)(r < lo ? lo : r > hi ? hi : r);
        }
    }
}

/* Depthwise QLinearConv with int8 inputs, 3 x 3 taps, dilation 1 and channels a multiple of 4, where
 * the plan gave AOTC_QCONV_DW4_SCRATCH(p, p->dw4): the TFLite route's method on NCHW planes. 4 channels'
 * padded span is copied interleaved (a word a position: the channels' 4 bytes, the zero point in the
 * padding), then quant_dsp.h's aotc_dsp_dw3x3_run sums each output row (a tap: one word, 2 SXTB16s and
 * 4 multiply-accumulates against [c0, c2] / [c1, c3] halves of w - w_zero), started at bias - xz sum
 * (w - w_zero) (a padding tap reads xz, adding 0 to the sum of (w - wz)(x - xz)); the sums of whole
 * rows are requantised together, channel by channel. 0 (nothing done) for other shapes. */
static int AOTC_Q(qconv_depthwise_dsp4)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                        const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, QT *AOTC_RESTRICT scratch) {
    const int32_t c_n = p->out_c, h = p->in_h, wd = p->in_w, oh_n = p->out_h, ow_n = p->out_w;
    const int32_t ph = (oh_n - 1) * p->stride_h + 3, pw = (ow_n - 1) * p->stride_w + 3;
    const int32_t plane_in = h * wd, plane_out = oh_n * ow_n, xz = p->x_zero;
    const uint32_t zb = (uint32_t)(uint8_t)xz * 0x01010101u;
    uint32_t wq[18];
    int32_t n, c, t, j, oy, k;
    if (QT_MIN >= 0 || p->dw4 < ow_n || p->k_h != 3 || p->k_w != 3 || p->dil_h != 1 || p->dil_w != 1 ||
        c_n % 4 != 0 || ph * pw > AOTC_QCONV_DW_SPAN || ((uintptr_t)scratch & 3) != 0) {
        return 0;
    }
    {
        uint32_t *pad = (uint32_t *)(void *)scratch;
        int32_t *acc = (int32_t *)(pad + ph * pw);
        const int32_t run = p->dw4; /* whole output rows of sums */
        for (c = 0; c < c_n; c += 4) {
            int32_t base[4];
            for (j = 0; j < 4; ++j) {
                int32_t s = 0;
                for (t = 0; t < 9; ++t) s += w[(int64_t)(c + j) * 9 + t] - p->w_zero[c + j];
                base[j] = p->bias[c + j] - xz * s;
            }
            for (t = 0; t < 9; ++t) { /* [c0, c2] and [c1, c3] of tap t, as 16-bit halves */
                const int32_t v0 = w[(int64_t)c * 9 + t] - p->w_zero[c], v1 = w[(int64_t)(c + 1) * 9 + t] - p->w_zero[c + 1];
                const int32_t v2 = w[(int64_t)(c + 2) * 9 + t] - p->w_zero[c + 2];
                const int32_t v3 = w[(int64_t)(c + 3) * 9 + t] - p->w_zero[c + 3];
                wq[2 * t] = (uint32_t)(uint16_t)v0 | (uint32_t)v2 << 16;
                wq[2 * t + 1] = (uint32_t)(uint16_t)v1 | (uint32_t)v3 << 16;
            }
            for (n = 0; n < p->batch; ++n) {
                const uint8_t *x0 = (const uint8_t *)(x + ((int64_t)n * p->in_c + c) * plane_in);
                QT *yc = y + ((int64_t)n * c_n + c) * plane_out;
                for (t = 0; t < ph; ++t) {
                    const int32_t iy = t - p->pad_top;
                    uint32_t *row = pad + t * pw;
                    if (iy < 0 || iy >= h) {
                        for (j = 0; j < pw; ++j) row[j] = zb;
                        continue;
                    }
                    {
                        const uint8_t *s0 = x0 + (int64_t)iy * wd, *s1 = s0 + plane_in, *s2 = s1 + plane_in;
                        const uint8_t *s3 = s2 + plane_in;
                        for (j = 0; j < pw; ++j) {
                            const int32_t ix = j - p->pad_left;
                            row[j] = ix >= 0 && ix < wd ? (uint32_t)s0[ix] | (uint32_t)s1[ix] << 8 |
                                                              (uint32_t)s2[ix] << 16 | (uint32_t)s3[ix] << 24
                                                        : zb;
                        }
                    }
                }
                /* whole rows into the sums, stored when the next would not fit */
                for (oy = 0, k = 0; oy < oh_n; ++oy) {
                    if (k + ow_n > run) {
                        AOTC_Q(dw4_store)(p, acc, k, c, yc + (int64_t)oy * ow_n - k, plane_out);
                        k = 0;
                    }
                    aotc_dsp_dw3x3_run((const int8_t *)(pad + oy * p->stride_h * pw), 4 * p->stride_w, ow_n, 4,
                                       4 * pw, wq, base, acc + 4 * k);
                    k += ow_n;
                }
                AOTC_Q(dw4_store)(p, acc, k, c, yc + (int64_t)plane_out - k, plane_out);
            }
        }
    }
    return 1;
}
#endif

#if AOTC_QUANT_AVX2
/* 16 QT widened to 16-bit lanes */
static inline __m256i AOTC_Q(qavx2_widen16)(__m128i v) {
#if AOTC_QOFFSET
    return _mm256_cvtepi8_epi16(v);
#else
    return _mm256_cvtepu8_epi16(v);
#endif
}

/* 8 QT at x widened to 32-bit lanes */
static inline __m256i AOTC_Q(dw_avx2_widen)(__m128i v) {
#if AOTC_QOFFSET
    return _mm256_cvtepi8_epi32(v);
#else
    return _mm256_cvtepu8_epi32(v);
#endif
}

/* dw_lanes_s1 and dw_lanes at stride 2 on AVX2 (AOTC_QCONV_LANES 16: two vectors of 8 sums): each tap's 16 inputs
 * (at stride 2 the even bytes of 32, by a byte shuffle) widened, less x_zero, times w - w_zero by vpmulld (exact: the
 * products and their sums are the plain loops' int32 ones) */
static void AOTC_Q(dw_lanes_avx2)(const QT *AOTC_RESTRICT rows, int32_t row_len, int32_t k_h, int32_t k_w, int32_t sw,
                                  int32_t dil_w, const int8_t *AOTC_RESTRICT wc, int32_t wz, int32_t xz,
                                  int32_t *AOTC_RESTRICT out) {
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i z = _mm256_set1_epi32(xz);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0;
    int32_t kh, kw;
    for (kh = 0; kh < k_h; ++kh)
        for (kw = 0; kw < k_w; ++kw) {
            const __m256i wv = _mm256_set1_epi32((int32_t)wc[kh * k_w + kw] - wz);
            const QT *src = rows + (int64_t)kh * row_len + kw * dil_w;
            __m128i lo, hi;
            if (sw == 1) {
                lo = _mm_loadl_epi64((const __m128i *)src), hi = _mm_loadl_epi64((const __m128i *)(src + 8));
            } else {
                lo = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)src), even);
                hi = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(src + 16)), even);
            }
            a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(wv, _mm256_sub_epi32(AOTC_Q(dw_avx2_widen)(lo), z)));
            a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(wv, _mm256_sub_epi32(AOTC_Q(dw_avx2_widen)(hi), z)));
        }
    _mm256_storeu_si256((__m256i *)out, a0);
    _mm256_storeu_si256((__m256i *)(out + 8), a1);
}
#endif

#if AOTC_QUANT_AVX2
#define AOTC_QDW_AVX2_KH 5    /* kernel rows at most (a ring of as many input rows) */
#define AOTC_QDW_AVX2_KG 3    /* pairs of kernel columns at most (k_w <= 6) */
#define AOTC_QDW_AVX2_ROW 512 /* 16-bit elements of an input row as pairs at most (wider: dw_lanes_avx2) */

#define AOTC_QDW_AVX2_FLAT 10240 /* 16-bit pairs of a whole padded plane at most (qconv_depthwise_avx2_flat; stride 2:
                                 * its k_h buffers, 56 x 56 outputs: 40 KiB of stack) */

#define AOTC_QDW_AVX2_BYTES 16896 /* bytes of a channel's padded input rows at most (112 rows of 144: stride 2 on 112 x 112) */
#define AOTC_QDW_AVX2_FLAT_BYTES 16384 /* ... in qconv_depthwise_avx2_flat (113 x 128: stride 2 on a 112 x 112 plane) */

/* Input row xr padded: nbytes (a multiple of 16) bytes, input column i at pad_left + i, x_zero around. A
 * channel's rows are all made before any is read as pairs (qavx2_dw_pairs): loads right after these stores, at
 * other offsets, had stalled on the store forwarding (a quarter of the depthwise's time) */
static inline void AOTC_Q(qavx2_dw_bytes)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xr, int32_t nbytes,
                                          uint8_t *AOTC_RESTRICT bytes) {
    const int32_t body = p->in_w < nbytes - p->pad_left ? p->in_w : nbytes - p->pad_left;
    const __m128i zb = _mm_set1_epi8((char)p->x_zero);
    int32_t i, o;
    /* (memset's and memcpy's calls had cost more than the row's sums) */
    for (i = 0; i < nbytes; i += 16) _mm_storeu_si128((__m128i *)(bytes + i), zb);
    if (body >= 16) {
        AOTC_Q(qavx2_bytes)(xr, body, bytes + p->pad_left); /* (not a call of memcpy) */
    } else {
        for (o = 0; o < body; ++o) bytes[p->pad_left + o] = (uint8_t)xr[o];
    }
}

/* A padded row's bytes (qavx2_dw_bytes) as npairs 16-bit pairs of x - x_zero (stores of 8 pairs: up to 15 past
 * them written): at stride 1 pair i of columns i, i + 1 (after the row's last vector: x_zero), at stride 2 of
 * 2i, 2i + 1 */
static inline void AOTC_Q(qavx2_dw_pairs)(const aotc_qconv_params *p, const uint8_t *AOTC_RESTRICT bytes,
                                          int32_t nbytes, int32_t npairs, int32_t *AOTC_RESTRICT pr) {
    const __m256i z16 = _mm256_set1_epi16((int16_t)p->x_zero);
    int32_t i;
    if (p->stride_w == 1) {
        for (i = 0; i < npairs; i += 16) {
            const __m128i a = _mm_loadu_si128((const __m128i *)(bytes + i));
            const __m128i b = _mm_insert_epi8(_mm_srli_si128(a, 1), i + 16 < nbytes ? bytes[i + 16] : p->x_zero, 15);
            _mm256_storeu_si256((__m256i *)(pr + i), _mm256_sub_epi16(AOTC_Q(qavx2_widen16)(_mm_unpacklo_epi8(a, b)), z16));
            _mm256_storeu_si256((__m256i *)(pr + i + 8), _mm256_sub_epi16(AOTC_Q(qavx2_widen16)(_mm_unpackhi_epi8(a, b)), z16));
        }
    } else {
        for (i = 0; i < npairs; i += 8)
            _mm256_storeu_si256((__m256i *)(pr + i),
                                _mm256_sub_epi16(AOTC_Q(qavx2_widen16)(_mm_loadu_si128((const __m128i *)(bytes + 2 * i))), z16));
    }
}

/* Small planes (qconv_depthwise_avx2_cl): 16 channels in the lanes, as the .tflite depthwise's pair rows */
#define AOTC_QDW_CL_PLANE 1024 /* input and output positions a plane at most (28 x 28 at stride 2: 64 KiB of stack) */
#define AOTC_QDW_CL_PAIRS 480  /* pairs of the padded plane at most (rows x pairs a row) */

/* The 16 x 16 bytes r[j] (row j: 16 bytes) transposed into o[t] (byte j of o[t] is byte t of r[j]) */
static inline void AOTC_Q(qdw_t16)(const __m128i *r, __m128i *o) {
    __m128i t[16], u[16], v[16];
    int32_t i, h, q, e;
    for (i = 0; i < 8; ++i) t[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]), t[8 + i] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    for (h = 0; h < 16; h += 8)
        for (i = 0; i < 4; ++i)
            u[h + i] = _mm_unpacklo_epi16(t[h + 2 * i], t[h + 2 * i + 1]),
            u[h + 4 + i] = _mm_unpackhi_epi16(t[h + 2 * i], t[h + 2 * i + 1]);
    for (q = 0; q < 16; q += 4)
        for (i = 0; i < 2; ++i)
            v[q + i] = _mm_unpacklo_epi32(u[q + 2 * i], u[q + 2 * i + 1]),
            v[q + 2 + i] = _mm_unpackhi_epi32(u[q + 2 * i], u[q + 2 * i + 1]);
    for (e = 0; e < 16; e += 2) o[e] = _mm_unpacklo_epi64(v[e], v[e + 1]), o[e + 1] = _mm_unpackhi_epi64(v[e], v[e + 1]);
}

/* qconv_depthwise_avx2_cl's weights of channels [c0, c0 + m): wv[ky kg + g][j] the pair (w - w_zero) of kernel
 * columns 2 g, 2 g + 1 (0 past k_w) of row ky for lane j (0 past the channels), the channels' taps transposed 16 at
 * a time (qdw_t16) and paired 16 lanes at once */
static void AOTC_Q(qdw_cl_weights)(const aotc_qconv_params *p, const int8_t *AOTC_RESTRICT w, int32_t c0, int32_t m,
                                   int32_t (*wv)[16]) {
    const int32_t taps = p->k_h * p->k_w, kg = (p->k_w + 1) / 2;
    int16_t wz[16];
    __m256i t16[AOTC_QDW_AVX2_KH * AOTC_QDW_AVX2_KG * 2 + 16]; /* each tap's 16 lanes of w - w_zero */
    __m256i z;
    int32_t j, k0, t, ky, g;
    for (j = 0; j < 16; ++j) wz[j] = (int16_t)(j < m ? p->w_zero[c0 + j] : 0);
    z = _mm256_loadu_si256((const __m256i *)(const void *)wz);
    for (k0 = 0; k0 < taps; k0 += 16) {
        __m128i rr[16], oo[16];
        for (j = 0; j < 16; ++j) {
            const int64_t at = (int64_t)(c0 + j) * taps + k0;
            if (j < m && at + 16 <= (int64_t)p->out_c * taps) {
                rr[j] = _mm_loadu_si128((const __m128i *)(const void *)(w + at));
            } else {
                int8_t tmp[16] = {0};
                for (t = 0; j < m && t < 16 && k0 + t < taps; ++t) tmp[t] = w[at + t];
                rr[j] = _mm_loadu_si128((const __m128i *)(const void *)tmp);
            }
        }
        AOTC_Q(qdw_t16)(rr, oo);
        for (t = 0; t < 16 && k0 + t < taps; ++t) t16[k0 + t] = _mm256_sub_epi16(_mm256_cvtepi8_epi16(oo[t]), z);
    }
    for (ky = 0; ky < p->k_h; ++ky)
        for (g = 0; g < kg; ++g) {
            const __m256i a = t16[ky * p->k_w + 2 * g];
            const __m256i b = 2 * g + 1 < p->k_w ? t16[ky * p->k_w + 2 * g + 1] : _mm256_setzero_si256();
            const __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b); /* 0-3 8-11 | 4-7 12-15 */
            _mm256_storeu_si256((__m256i *)wv[ky * kg + g], _mm256_permute2x128_si256(lo, hi, 0x20));
            _mm256_storeu_si256((__m256i *)(wv[ky * kg + g] + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
        }
}

/* qconv_depthwise_avx2_cl's output row: positions [0, ow_n) from the pair rows at pr (np pairs a row; kernel row ky's
 * at pr + ky np 32, kernel column pair g at + 32 gstep g), 16 channels each, requantised in 8 lanes and packed to
 * ot (16 QT a position); kh and kg constants where inlined with them */
static inline __attribute__((always_inline)) void AOTC_Q(qdw_cl_row)(const int16_t *pr, int32_t np, int32_t kh,
                                                                     int32_t kg, int32_t gstep, int32_t ow_n,
                                                                     const int32_t (*wv)[16], __m256i b0, __m256i b1,
                                                                     __m256 s0, __m256 s1, __m256 lo, __m256 hi,
                                                                     __m256i zp, int clamp, QT *ot) {
    int32_t ow, ky, g;
    for (ow = 0; ow < ow_n; ++ow, pr += 32, ot += 16) {
        __m256i a0 = b0, a1 = b1, v;
        __m128i h;
        for (ky = 0; ky < kh; ++ky)
            for (g = 0; g < kg; ++g) {
                const int16_t *q = pr + ((int64_t)ky * np + gstep * g) * 32;
                const int32_t *wt = wv[ky * kg + g];
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)(const void *)q),
                                                            _mm256_loadu_si256((const __m256i *)wt)));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_load_si256((const __m256i *)(const void *)(q + 16)),
                                                            _mm256_loadu_si256((const __m256i *)(wt + 8))));
            }
        a0 = AOTC_Q(qavx2_requant)(a0, s0, lo, hi, zp, clamp);
        a1 = AOTC_Q(qavx2_requant)(a1, s1, lo, hi, zp, clamp);
        v = _mm256_permute4x64_epi64(_mm256_packs_epi32(a0, a1), 0xD8);
#if QT_MIN == 0
        h = _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
#else
        h = _mm_packs_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
#endif
        _mm_store_si128((__m128i *)(void *)ot, h);
    }
}

/* Depthwise QLinearConv on AVX2 at stride 1 or 2 (dilation 1) for planes of up to AOTC_QDW_CL_PLANE positions whose
 * padded pairs fit AOTC_QDW_CL_PAIRS (7 x 7, 14 x 14, and 28 x 28 at stride 2), 16 channels at a time in the lanes: the block's planes transposed to positions of 16 channels
 * (qdw_t16), the padded plane made once into pairs of neighbouring columns (x - x_zero, 16-bit; 0 in the padding),
 * so that each output position is k_h kg vpmaddwd a half (no per-channel setup, rows, copies: on such planes those
 * had cost more than the sums), requantised in 8 lanes with each channel's scale, and transposed back. 0 where the
 * shape is not one it takes. */
static int AOTC_Q(qconv_depthwise_avx2_cl)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                           const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y) {
    const int32_t s = p->stride_w, kg = (p->k_w + 1) / 2, taps = p->k_h * p->k_w;
    const int32_t np = s == 1 ? p->out_w + 2 * kg - 1 : p->out_w + kg - 1; /* pairs a padded row */
    const int32_t rows = (p->out_h - 1) * s + p->k_h, gstep = s == 1 ? 2 : 1;
    const int32_t pin = p->in_h * p->in_w, pout = p->out_h * p->out_w;
    const __m256 lo = _mm256_set1_ps(p->y_lo), hi = _mm256_set1_ps(p->y_hi);
    const __m256i zp = _mm256_set1_epi32(p->y_zero), z16 = _mm256_set1_epi16((int16_t)p->x_zero);
    const __m128i xz8 = _mm_set1_epi8((char)p->x_zero);
    QT xt[AOTC_QDW_CL_PLANE * 16] __attribute__((aligned(32)));  /* position t's 16 channels at xt + 16 t */
    QT ot[(AOTC_QDW_CL_PLANE + 16) * 16] __attribute__((aligned(32)));
    int16_t pairs[AOTC_QDW_CL_PAIRS * 32] __attribute__((aligned(32)));
    int32_t wv[AOTC_QDW_AVX2_KH * AOTC_QDW_AVX2_KG][16], bv[16];
    float sv[16];
    int32_t n, c0, m, j, t0, i, r, oh, clamp;
    if ((s != 1 && s != 2) || p->stride_h != s || p->dil_h != 1 || p->dil_w != 1 || p->k_h > AOTC_QDW_AVX2_KH ||
        kg > AOTC_QDW_AVX2_KG || pin > AOTC_QDW_CL_PLANE || pout > AOTC_QDW_CL_PLANE || rows * np > AOTC_QDW_CL_PAIRS ||
        p->out_c != p->in_c)
        return 0;
    clamp = AOTC_Q(qavx2_clamp)(p, 0, p->out_c, taps);
    memset(ot, 0, sizeof ot); /* (the positions past the plane: transposed, not stored) */
    for (n = 0; n < p->batch; ++n) {
        for (c0 = 0; c0 < p->out_c; c0 += 16) {
            const QT *xb = x + ((int64_t)n * p->in_c + c0) * pin;
            QT *yb = y + ((int64_t)n * p->out_c + c0) * pout;
            __m256i b0, b1;
            __m256 s0, s1;
            m = p->out_c - c0 < 16 ? p->out_c - c0 : 16;
            for (t0 = 0; t0 < pin; t0 += 16) { /* the planes transposed, 16 positions at a time */
                __m128i rr[16], oo[16];
                for (j = 0; j < 16; ++j) {
                    if (j >= m) {
                        rr[j] = xz8;
                    } else if (t0 + 16 <= pin) {
                        rr[j] = _mm_loadu_si128((const __m128i *)(const void *)(xb + (int64_t)j * pin + t0));
                    } else {
                        QT tmp[16];
                        _mm_storeu_si128((__m128i *)(void *)tmp, xz8);
                        for (i = 0; i < pin - t0 && i < 16; ++i) tmp[i] = xb[(int64_t)j * pin + t0 + i];
                        rr[j] = _mm_loadu_si128((const __m128i *)(const void *)tmp);
                    }
                }
                AOTC_Q(qdw_t16)(rr, oo);
                for (i = 0; i < 16 && t0 + i < pin; ++i) _mm_store_si128((__m128i *)(void *)(xt + 16 * (t0 + i)), oo[i]);
            }
            for (r = 0; r < rows; ++r) { /* the padded plane's pairs of columns (j, j + 1) or (2 j, 2 j + 1) */
                const int32_t ih = r - p->pad_top;
                int16_t *pr = pairs + (int64_t)r * np * 32;
                for (j = 0; j < np; ++j, pr += 32) {
                    const int32_t ia = (s == 1 ? j : 2 * j) - p->pad_left, ib = ia + 1;
                    const int inside = ih >= 0 && ih < p->in_h;
                    const __m128i a = inside && ia >= 0 && ia < p->in_w ? _mm_load_si128((const __m128i *)(const void *)(xt + 16 * (ih * p->in_w + ia))) : xz8;
                    const __m128i b = inside && ib >= 0 && ib < p->in_w ? _mm_load_si128((const __m128i *)(const void *)(xt + 16 * (ih * p->in_w + ib))) : xz8;
                    _mm256_store_si256((__m256i *)(void *)pr, _mm256_sub_epi16(AOTC_Q(qavx2_widen16)(_mm_unpacklo_epi8(a, b)), z16));
                    _mm256_store_si256((__m256i *)(void *)(pr + 16), _mm256_sub_epi16(AOTC_Q(qavx2_widen16)(_mm_unpackhi_epi8(a, b)), z16));
                }
            }
            AOTC_Q(qdw_cl_weights)(p, w, c0, m, wv);
            for (j = 0; j < 16; ++j) bv[j] = j < m ? p->bias[c0 + j] : 0, sv[j] = j < m ? p->scale[c0 + j] : 0.0f;
            b0 = _mm256_loadu_si256((const __m256i *)bv), b1 = _mm256_loadu_si256((const __m256i *)(bv + 8));
            s0 = _mm256_loadu_ps(sv), s1 = _mm256_loadu_ps(sv + 8);
            for (oh = 0; oh < p->out_h; ++oh) {
                const int16_t *pr = pairs + (int64_t)oh * s * np * 32;
                QT *oo = ot + 16 * oh * p->out_w;
                if (p->k_h == 3 && kg == 2) /* (3 x 3: the loops unrolled) */
                    AOTC_Q(qdw_cl_row)(pr, np, 3, 2, gstep, p->out_w, wv, b0, b1, s0, s1, lo, hi, zp, clamp, oo);
                else AOTC_Q(qdw_cl_row)(pr, np, p->k_h, kg, gstep, p->out_w, wv, b0, b1, s0, s1, lo, hi, zp, clamp, oo);
            }
            for (t0 = 0; t0 < pout; t0 += 16) { /* transposed back, each channel's 16 positions */
                __m128i rr[16], oo[16];
                for (i = 0; i < 16; ++i) rr[i] = _mm_load_si128((const __m128i *)(const void *)(ot + 16 * (t0 + i)));
                AOTC_Q(qdw_t16)(rr, oo);
                for (j = 0; j < m; ++j) {
                    if (t0 + 16 <= pout) {
                        _mm_storeu_si128((__m128i *)(void *)(yb + (int64_t)j * pout + t0), oo[j]);
                    } else {
                        QT tmp[16];
                        _mm_storeu_si128((__m128i *)(void *)tmp, oo[j]);
                        for (i = 0; i < pout - t0 && i < 16; ++i) yb[(int64_t)j * pout + t0 + i] = tmp[i];
                    }
                }
            }
        }
    }
    return 1;
}

/* qconv_depthwise_avx2_flat's pairs (rw of them, at pr) of padded row r (its bytes at bytes + r nbytes), zero
 * where the row is outside the input */
static inline void AOTC_Q(qdw_flat_row)(const aotc_qconv_params *p, const uint8_t *AOTC_RESTRICT bytes, int32_t nbytes,
                                        int32_t r, int32_t rw, int32_t *AOTC_RESTRICT pr) {
    const int32_t ih = r - p->pad_top;
    int32_t i;
    if (ih >= 0 && ih < p->in_h) {
        AOTC_Q(qavx2_dw_pairs)(p, bytes + r * nbytes, nbytes, rw, pr);
    } else {
        for (i = 0; i < rw; i += 8) _mm256_storeu_si256((__m256i *)(pr + i), _mm256_setzero_si256());
    }
}

/* Depthwise QLinearConv on AVX2 at stride 1 or 2 (dilation 1) for planes whose padded pairs fit AOTC_QDW_AVX2_FLAT:
 * output (oh, ow) is position q = oh RW + ow of a run across output rows (the positions past out_w in a row computed,
 * not stored), so that small planes (7 x 7, 14 x 14) take 16 lanes of 16 outputs, not of 7 or 14
 * (qconv_depthwise_avx2). At stride 1 the channel's padded plane as pairs (qavx2_dw_pairs; rows of RW = out_w + k_w
 * - 1, the last pair's second column, of weight 0, the padding) in one buffer, kernel row kh's taps at q + kh RW; at
 * stride 2 one buffer a kernel row (qdw_flat_s2), its row oh the pairs (columns 2j, 2j + 1) of padded row 2 oh + kh,
 * RW = out_w + kg - 1 of them, kernel row kh's taps at q of its buffer. */
#define AOTC_QDW_AVX2_S2GAP 32 /* pairs between the stride-2 buffers (reads past a run: 2 kg - 1, stores: up to 15) */
static int AOTC_Q(qconv_depthwise_avx2_flat)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                             const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y) {
    const int32_t s = p->stride_w, kg = (p->k_w + 1) / 2, taps = p->k_h * p->k_w;
    const int32_t rw = s == 1 ? p->out_w + p->k_w - 1 : p->out_w + kg - 1; /* pairs a row (RW above) */
    const int32_t rows = (p->out_h - 1) * s + p->k_h, span = (p->out_h * rw + 15) / 16 * 16;
    const int32_t kstep = s == 1 ? rw : span + AOTC_QDW_AVX2_S2GAP; /* from kernel row kh's pairs to kh + 1's */
    /* a padded row's bytes (the pairs' columns: rw + 1 at stride 1; at stride 2 what its stores of 8 pairs read) */
    const int32_t nbytes = s == 1 ? (rw + 1 + 15) / 16 * 16 : (rw + 7) / 8 * 16;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const __m256 lo = _mm256_set1_ps(p->y_lo), hi = _mm256_set1_ps(p->y_hi);
    const __m256i zp = _mm256_set1_epi32(p->y_zero);
    int32_t buf[AOTC_QDW_AVX2_FLAT + 16];
    QT out[AOTC_QDW_AVX2_FLAT];
    uint8_t bytes[AOTC_QDW_AVX2_FLAT_BYTES];
    const int32_t *src[AOTC_QDW_AVX2_KH * AOTC_QDW_AVX2_KG];
    __m256i tw[AOTC_QDW_AVX2_KH * AOTC_QDW_AVX2_KG];
    int32_t n, c, r, kh, g, nv, q0, i, clamp;
    if ((s != 1 && s != 2) || p->stride_h != s || p->dil_h != 1 || p->dil_w != 1 || p->k_h > AOTC_QDW_AVX2_KH ||
        kg > AOTC_QDW_AVX2_KG || (p->k_h - 1) * kstep + span + 2 * kg > AOTC_QDW_AVX2_FLAT ||
        (s == 1 && rows * rw > AOTC_QDW_AVX2_FLAT) || (int64_t)rows * nbytes > AOTC_QDW_AVX2_FLAT_BYTES ||
        p->pad_left > rw)
        return 0;
    memset(buf, 0, sizeof buf); /* the pairs past the last row: read by positions not stored */
    clamp = AOTC_Q(qavx2_clamp)(p, 0, p->out_c, taps);
    for (n = 0; n < p->batch; ++n) {
        for (c = 0; c < p->out_c; ++c) {
            const QT *plane = x + ((int64_t)n * p->in_c + c) * plane_in;
            QT *yo = y + ((int64_t)n * p->out_c + c) * plane_out;
            const int8_t *wc = w + (int64_t)c * taps;
            const int32_t wz = p->w_zero[c];
            const __m256 sc = _mm256_set1_ps(p->scale[c]);
            const __m256i bv = _mm256_set1_epi32(p->bias[c]);
            for (r = 0; r < rows; ++r) { /* the rows' bytes, then their pairs (qavx2_dw_bytes) */
                const int32_t ih = r - p->pad_top;
                if (ih >= 0 && ih < p->in_h) AOTC_Q(qavx2_dw_bytes)(p, plane + (int64_t)ih * p->in_w, nbytes, bytes + r * nbytes);
            }
            if (s == 1) {
                for (r = 0; r < rows; ++r) /* in order: a row's stores past its end are the next row's, made after */
                    AOTC_Q(qdw_flat_row)(p, bytes, nbytes, r, rw, buf + (int64_t)r * rw);
            } else {
                for (kh = 0; kh < p->k_h; ++kh) /* (in order too: the last row's stores past it land in the gap) */
                    for (r = 0; r < p->out_h; ++r)
                        AOTC_Q(qdw_flat_row)(p, bytes, nbytes, 2 * r + kh, rw, buf + (int64_t)kh * kstep + (int64_t)r * rw);
            }
            for (kh = 0, nv = 0; kh < p->k_h; ++kh) {
                for (g = 0; g < kg; ++g) {
                    const int32_t w0 = wc[kh * p->k_w + 2 * g] - wz;
                    const int32_t w1 = 2 * g + 1 < p->k_w ? wc[kh * p->k_w + 2 * g + 1] - wz : 0;
                    src[nv] = buf + (int64_t)kh * kstep + (s == 1 ? 2 * g : g);
                    tw[nv++] = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)w0 | (uint32_t)(uint16_t)w1 << 16));
                }
            }
            for (q0 = 0; q0 < span; q0 += 16) {
                __m256i a0 = bv, a1 = bv;
                for (i = 0; i < nv; ++i) {
                    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(src[i] + q0)), tw[i]));
                    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(src[i] + q0 + 8)), tw[i]));
                }
                AOTC_Q(qavx2_out16)(a0, a1, sc, lo, hi, zp, clamp, out + q0, 16);
            }
            for (r = 0; r < p->out_h; ++r) AOTC_Q(qavx2_bytes)(out + (int64_t)r * rw, p->out_w * (int32_t)sizeof(QT), yo + (int64_t)r * p->out_w);
        }
    }
    return 1;
}

/* Depthwise QLinearConv on AVX2 with dilation 1 and stride 1 or 2: each input row of a channel made once (a ring of
 * k_h) into 16-bit pairs of x - x_zero (0 in the padding) of two neighbouring kernel columns, at stride 1 each column
 * with the next (pair i: columns i, i + 1), at stride 2 the row itself (pair i: columns 2i, 2i + 1), so that one
 * vpmaddwd of 8 output positions with a broadcast pair of weights (w - w_zero, 0 past k_w) sums two taps exactly
 * (|x - x_zero|, |w - w_zero| <= 255); 16 positions at a time, requantised in 8 lanes. 0 where the shape is not
 * one it takes. */
static int AOTC_Q(qconv_depthwise_avx2)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                        const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y) {
    const int32_t sw = p->stride_w, kg = (p->k_w + 1) / 2, taps = p->k_h * p->k_w;
    const int32_t lanes16 = (p->out_w + 15) / 16 * 16;
    /* pairs a row: every pair a lane of the last block reads (stride 1: lanes16 - 1 + 2 (kg - 1); stride 2: the
     * same in pairs of the row), and the 16-bit elements behind them */
    const int32_t npairs = lanes16 + 2 * kg, nelem = sw == 1 ? npairs + 1 : 2 * npairs;
    const int32_t nbytes = (nelem + 15) / 16 * 16; /* the padded byte row (made in whole vectors) */
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const __m256 lo = _mm256_set1_ps(p->y_lo), hi = _mm256_set1_ps(p->y_hi);
    const __m256i zp = _mm256_set1_epi32(p->y_zero);
    int32_t ring[AOTC_QDW_AVX2_KH][AOTC_QDW_AVX2_ROW]; /* pairs of rows, slot ih % k_h (a row's stores: up to 15 past) */
    int32_t held[AOTC_QDW_AVX2_KH];
    uint8_t bytes[AOTC_QDW_AVX2_BYTES]; /* the channel's padded input rows (qavx2_dw_bytes) */
    __m256i wv[AOTC_QDW_AVX2_KH][AOTC_QDW_AVX2_KG];
    int32_t n, c, oh, kh, g, ow0, i, clamp;
    if (p->dil_h != 1 || p->dil_w != 1 || (sw != 1 && sw != 2) || p->k_h > AOTC_QDW_AVX2_KH || kg > AOTC_QDW_AVX2_KG ||
        npairs + 16 > AOTC_QDW_AVX2_ROW || (int64_t)p->in_h * nbytes > AOTC_QDW_AVX2_BYTES || p->pad_left > nbytes)
        return 0;
    clamp = AOTC_Q(qavx2_clamp)(p, 0, p->out_c, taps);
    for (n = 0; n < p->batch; ++n) {
        for (c = 0; c < p->out_c; ++c) {
            const QT *plane = x + ((int64_t)n * p->in_c + c) * plane_in;
            QT *yo = y + ((int64_t)n * p->out_c + c) * plane_out;
            const int8_t *wc = w + (int64_t)c * taps;
            const int32_t wz = p->w_zero[c];
            const __m256 sc = _mm256_set1_ps(p->scale[c]);
            const __m256i bv = _mm256_set1_epi32(p->bias[c]);
            for (i = 0; i < p->in_h; ++i) AOTC_Q(qavx2_dw_bytes)(p, plane + (int64_t)i * p->in_w, nbytes, bytes + (int64_t)i * nbytes);
            for (kh = 0; kh < p->k_h; ++kh) {
                held[kh] = -1;
                for (g = 0; g < kg; ++g) {
                    const int32_t w0 = wc[kh * p->k_w + 2 * g] - wz;
                    const int32_t w1 = 2 * g + 1 < p->k_w ? wc[kh * p->k_w + 2 * g + 1] - wz : 0;
                    wv[kh][g] = _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)w0 | (uint32_t)(uint16_t)w1 << 16));
                }
            }
            for (oh = 0; oh < p->out_h; ++oh) {
                const int32_t ih0 = oh * p->stride_h - p->pad_top;
                const int32_t *src[AOTC_QDW_AVX2_KH * AOTC_QDW_AVX2_KG];
                const __m256i *tw[AOTC_QDW_AVX2_KH * AOTC_QDW_AVX2_KG]; /* (the vectors themselves: a memcpy a row) */
                int32_t nv;
                for (kh = 0; kh < p->k_h; ++kh) { /* the input rows under this output row as pairs, once each */
                    const int32_t ih = ih0 + kh;
                    int32_t *pr;
                    if (ih < 0 || ih >= p->in_h || held[ih % p->k_h] == ih) continue;
                    pr = ring[ih % p->k_h], held[ih % p->k_h] = ih;
                    AOTC_Q(qavx2_dw_pairs)(p, bytes + (int64_t)ih * nbytes, nbytes, npairs, pr);
                }
                for (kh = 0, nv = 0; kh < p->k_h; ++kh) { /* the rows inside the image (x - x_zero = 0 outside) */
                    const int32_t ih = ih0 + kh;
                    if (ih < 0 || ih >= p->in_h) continue;
                    for (g = 0; g < kg; ++g) src[nv] = ring[ih % p->k_h] + (sw == 1 ? 2 * g : g), tw[nv++] = &wv[kh][g];
                }
                for (ow0 = 0; ow0 < p->out_w; ow0 += 16) { /* 16 positions in two registers */
                    __m256i a0 = bv, a1 = bv;
                    for (i = 0; i < nv; ++i) {
                        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(src[i] + ow0)), *tw[i]));
                        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(src[i] + ow0 + 8)), *tw[i]));
                    }
                    AOTC_Q(qavx2_out16)(a0, a1, sc, lo, hi, zp, clamp, yo + (int64_t)oh * p->out_w + ow0, p->out_w - ow0);
                }
            }
        }
    }
    return 1;
}
#endif

/* One depthwise channel's AOTC_QCONV_LANES outputs from padded rows (row_len apart) starting at
 * `rows`: the sums of (w - w_zero)(x - x_zero) over the k_h x k_w taps, in registers. Stride 1. */
static void AOTC_Q(dw_lanes_s1)(const QT *AOTC_RESTRICT rows, int32_t row_len, int32_t k_h, int32_t k_w, int32_t dil_w,
                                const int8_t *AOTC_RESTRICT wc, int32_t wz, int32_t xz,
                                int32_t *AOTC_RESTRICT out) {
    int32_t a[AOTC_QCONV_LANES] = {0};
    int32_t kh, kw, l;
#if AOTC_QUANT_DSP
    if (k_w == 3 && dil_w == 1) {
        AOTC_Q(dw3_lanes_dsp)(rows, row_len, k_h, 1, wc, wz, xz, out);
        return;
    }
#endif
#if AOTC_QUANT_AVX2 && AOTC_QCONV_LANES == 16
    AOTC_Q(dw_lanes_avx2)(rows, row_len, k_h, k_w, 1, dil_w, wc, wz, xz, out);
    return;
#endif
    for (kh = 0; kh < k_h; ++kh) {
        for (kw = 0; kw < k_w; ++kw) {
            const int32_t wv = (int32_t)wc[kh * k_w + kw] - wz;
            const QT *src = rows + (int64_t)kh * row_len + kw * dil_w;
            for (l = 0; l < AOTC_QCONV_LANES; ++l) a[l] += wv * ((int32_t)src[l] - xz);
        }
    }
    for (l = 0; l < AOTC_QCONV_LANES; ++l) out[l] = a[l];
}

/* The same at any stride. */
static void AOTC_Q(dw_lanes)(const QT *AOTC_RESTRICT rows, int32_t row_len, int32_t k_h, int32_t k_w, int32_t sw,
                             int32_t dil_w, const int8_t *AOTC_RESTRICT wc, int32_t wz, int32_t xz,
                             int32_t *AOTC_RESTRICT out) {
    int32_t a[AOTC_QCONV_LANES] = {0};
    int32_t kh, kw, l;
#if AOTC_QUANT_DSP
    if (k_w == 3 && dil_w == 1) {
        AOTC_Q(dw3_lanes_dsp)(rows, row_len, k_h, sw, wc, wz, xz, out);
        return;
    }
#endif
#if AOTC_QUANT_AVX2 && AOTC_QCONV_LANES == 16
    if (sw == 2) {
        AOTC_Q(dw_lanes_avx2)(rows, row_len, k_h, k_w, 2, dil_w, wc, wz, xz, out);
        return;
    }
#endif
    for (kh = 0; kh < k_h; ++kh) {
        for (kw = 0; kw < k_w; ++kw) {
            const int32_t wv = (int32_t)wc[kh * k_w + kw] - wz;
            const QT *src = rows + (int64_t)kh * row_len + kw * dil_w;
            for (l = 0; l < AOTC_QCONV_LANES; ++l) a[l] += wv * ((int32_t)src[(int64_t)l * sw] - xz);
        }
    }
    for (l = 0; l < AOTC_QCONV_LANES; ++l) out[l] = a[l];
}

/* Depthwise QLinearConv (one input and one output channel per group): each output row from
 * k_h input rows copied with their padding (the zero point) into scratch, AOTC_QCONV_LANES outputs
 * summed at a time in registers over the k_h x k_w taps with no bounds tests. */
void AOTC_Q(qconv_depthwise)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x, const int8_t *AOTC_RESTRICT w,
                             QT *AOTC_RESTRICT y, QT *AOTC_RESTRICT scratch) {
    const int32_t sw = p->stride_w, taps = p->k_h * p->k_w;
    const int32_t row_len = AOTC_QCONV_DW_ROW(p->out_w, p->k_w, sw, p->dil_w);
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w, xz = p->x_zero;
    int32_t n, c, oh, kh, ow0, l, i;
    (void)taps;
#if AOTC_QUANT_MVE
    if (AOTC_Q(qconv_depthwise_mve)(p, x, w, y, scratch)) return;
#endif
#if AOTC_QUANT_DSP
    if (AOTC_Q(qconv_depthwise_dsp4)(p, x, w, y, scratch)) return;
    if (AOTC_Q(qconv_depthwise_dsp)(p, x, w, y, scratch)) return;
#endif
#if AOTC_QUANT_VNNI
#if defined(__AVX512VBMI__)
    if (AOTC_Q(qconv_depthwise_flat)(p, x, w, y, scratch)) return;
#endif
    if (AOTC_Q(qconv_depthwise_avx512)(p, x, w, y, scratch)) return;
#endif
#if AOTC_QUANT_AVX2
    if (AOTC_Q(qconv_depthwise_avx2_cl)(p, x, w, y) || AOTC_Q(qconv_depthwise_avx2_flat)(p, x, w, y) ||
        AOTC_Q(qconv_depthwise_avx2)(p, x, w, y))
        return;
#endif
    for (n = 0; n < p->batch; ++n) {
        for (c = 0; c < p->out_c; ++c) {
            const QT *plane = x + ((int64_t)n * p->in_c + c) * plane_in;
            QT *yo = y + ((int64_t)n * p->out_c + c) * plane_out;
            const int8_t *wc = w + (int64_t)c * taps;
            const int32_t wz = p->w_zero[c], b = p->bias[c];
            const float sc = p->scale[c];
            for (oh = 0; oh < p->out_h; ++oh) {
                for (kh = 0; kh < p->k_h; ++kh) { /* the input rows under this output row, padded */
                    const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
                    QT *row = scratch + (int64_t)kh * row_len;
                    const int32_t lead = p->pad_left < row_len ? p->pad_left : row_len;
                    const int32_t body = ih >= 0 && ih < p->in_h ? (p->in_w < row_len - lead ? p->in_w : row_len - lead) : 0;
                    const QT *src = plane + (int64_t)ih * p->in_w;
                    for (i = 0; i < lead; ++i) row[i] = (QT)xz;
                    for (i = 0; i < body; ++i) row[lead + i] = src[i];
                    for (i = lead + body; i < row_len; ++i) row[i] = (QT)xz;
                }
                for (ow0 = 0; ow0 < p->out_w; ow0 += AOTC_QCONV_LANES) {
                    const int32_t lanes = p->out_w - ow0 < AOTC_QCONV_LANES ? p->out_w - ow0 : AOTC_QCONV_LANES;
                    int32_t a[AOTC_QCONV_LANES];
                    if (sw == 1) {
                        AOTC_Q(dw_lanes_s1)(scratch + (int64_t)ow0, row_len, p->k_h, p->k_w, p->dil_w, wc, wz, xz, a);
                    } else {
                        AOTC_Q(dw_lanes)(scratch + (int64_t)ow0 * sw, row_len, p->k_h, p->k_w, sw, p->dil_w, wc, wz, xz, a);
                    }
                    for (l = 0; l < lanes; ++l) {
                        yo[(int64_t)oh * p->out_w + ow0 + l] = (QT)aotc_requant(a[l] + b, sc, p->y_lo, p->y_hi, p->y_zero);
                    }
                }
            }
        }
    }
}

#if AOTC_QUANT_DSP
/* QGemm with the DSP extension, n >= 4 and k >= 4: each row of A widened once into scratch (E / O
 * words of 16-bit pairs, quant_dsp.h), the n sums by aotc_dsp_gemv_rows (one SMLAD per two
 * multiply-accumulates, B's bytes widened as loaded: about 1.3 instructions a MAC instead of the
 * per-output loop's 3.5) into the scratch after it, the k % 4 tail and B's zero points added, then
 * one requantisation loop. Scratch: AOTC_QGEMM_SCRATCH(k, n) bytes. */
static void AOTC_Q(qgemm_dsp)(const aotc_qgemm_params *p, const QT *AOTC_RESTRICT a, const int8_t *AOTC_RESTRICT bt,
                              QT *AOTC_RESTRICT y, uint32_t *AOTC_RESTRICT xw) {
    const int32_t k = p->k, kq = k / 4, n = p->n, step = p->per_column ? 1 : 0, zero = p->y_zero;
    const float *scale = p->scale, lo = p->y_lo, hi = p->y_hi;
    int32_t *sums = (int32_t *)(xw + 2 * kq);
    int32_t m, c, q, kk;
    for (m = 0; m < p->m; ++m, y += n) {
        const QT *ar = a + (int64_t)m * k;
        for (q = 0; q < kq; ++q) {
            const uint32_t v = aotc_dsp_load32(ar + 4 * q);
            xw[2 * q] = AOTC_Q(dsp_widen_lo)(v);
            xw[2 * q + 1] = AOTC_Q(dsp_widen_hi)(v);
        }
        if (AOTC_DSP_IL && p->il4) aotc_dsp_gemv_rows_il(xw, kq, bt, n, p->bias, sums); /* k % 4 == 0 */
        else aotc_dsp_gemv_rows(xw, kq, bt, k, n, p->bias, sums);
        if (4 * kq < k) {
            for (c = 0; c < n; ++c) {
                const int8_t *br = bt + (int64_t)c * k;
                for (kk = 4 * kq; kk < k; ++kk) sums[c] += (int32_t)ar[kk] * br[kk];
            }
        }
        if (p->b_zero) {
            int32_t row_sum = 0;
            for (kk = 0; kk < k; ++kk) row_sum += ar[kk];
            for (c = 0; c < n; ++c) sums[c] -= p->b_zero[c] * row_sum;
        }
        for (c = 0; c < n; ++c) y[c] = (QT)aotc_requant(sums[c], scale[c * step], lo, hi, zero);
    }
}
#endif

void AOTC_Q(qgemm)(const aotc_qgemm_params *p, const QT *AOTC_RESTRICT a, const int8_t *AOTC_RESTRICT bt,
                   QT *AOTC_RESTRICT y, uint32_t *AOTC_RESTRICT scratch) {
    int32_t m, n, k;
#if AOTC_QUANT_MVE
    if (AOTC_Q(qgemm_mve)(p, a, bt, y)) return;
#endif
#if AOTC_QUANT_VNNI
    if (AOTC_Q(qgemm_avx512)(p, a, bt, y)) return;
#endif
#if AOTC_QUANT_DSP
    if (scratch && p->k >= 4 && p->n >= 4) {
        AOTC_Q(qgemm_dsp)(p, a, bt, y, scratch);
        return;
    }
#endif
    (void)scratch;
    for (m = 0; m < p->m; ++m) {
        const QT *ar = a + (int64_t)m * p->k;
        int32_t row_sum = 0;
        if (p->b_zero) {
            for (k = 0; k < p->k; ++k) row_sum += ar[k];
        }
        for (n = 0; n < p->n; ++n) {
            const int8_t *br = bt + (int64_t)n * p->k;
            int32_t acc = 0;
#if AOTC_QUANT_DSP
            /* four products a word: A's and B's bytes 0, 2 and 1, 3 widened to 16-bit pairs, two SMLADs */
            for (k = 0; k + 4 <= p->k; k += 4) {
                const uint32_t av = aotc_dsp_load32(ar + k), bv = aotc_dsp_load32(br + k);
                acc = __smlad((int32_t)AOTC_Q(dsp_widen_lo)(av), __sxtb16(bv), acc);
                acc = __smlad((int32_t)AOTC_Q(dsp_widen_hi)(av), (int32_t)aotc_dsp_sxtb16_hi(bv), acc);
            }
#else
            k = 0;
#endif
            for (; k < p->k; ++k) acc += (int32_t)ar[k] * br[k];
            acc += p->bias[n] - (p->b_zero ? p->b_zero[n] * row_sum : 0);
            y[(int64_t)m * p->n + n] = (QT)aotc_requant(acc, p->scale[p->per_column ? n : 0], p->y_lo, p->y_hi,
                                                        p->y_zero);
        }
    }
}

/* One broadcast walk for the binary ops: the innermost run in three forms (a the same across it,
 * b the same across it, both varying), each a plain loop; the outer dims advance an odometer.
 * SCALAR_A / SCALAR_B / BOTH compute y[i] from QT values xa = pa[..], xb = pb[..]; CONTIG, where both
 * runs are contiguous, computes a first part of the run some faster way and gives its length. */
#define AOTC_QBINARY(NAME, SCALAR_A, SCALAR_B, BOTH, CONTIG)                                               \
    void AOTC_Q(NAME)(const aotc_qbinary_params *p, const QT *a, const QT *b, QT *y) {             \
        const aotc_broadcast *s = &p->shape;                                                       \
        const int32_t r = s->rank, n = s->shape[r - 1];                                           \
        const int32_t sa = s->a_strides[r - 1], sb = s->b_strides[r - 1];                          \
        const float lo = p->y_lo + (float)p->y_zero, hi = p->y_hi + (float)p->y_zero;             \
        int32_t idx[AOTC_MAX_RANK] = {0};                                                          \
        int64_t outer = 1, ao = 0, bo = 0, o;                                                      \
        int32_t i, k;                                                                              \
        (void)lo;                                                                                  \
        (void)hi;                                                                                  \
        for (k = 0; k < r - 1; ++k) outer *= s->shape[k];                                          \
        for (o = 0; o < outer; ++o) {                                                              \
            const QT *pa = a + ao, *pb = b + bo;                                                   \
            if (sa == 0) {                                                                         \
                const int32_t xa = pa[0];                                                          \
                for (i = 0; i < n; ++i) { const int32_t xb = pb[(int64_t)i * sb]; y[i] = (QT)(SCALAR_A); } \
            } else if (sb == 0) {                                                                  \
                const int32_t xb = pb[0];                                                          \
                for (i = 0; i < n; ++i) { const int32_t xa = pa[(int64_t)i * sa]; y[i] = (QT)(SCALAR_B); } \
            } else if (sa == 1 && sb == 1) { /* both contiguous: a vector path (CONTIG) or a loop */ \
                for (i = CONTIG; i < n; ++i) {                                                     \
                    const int32_t xa = pa[i], xb = pb[i];                                          \
                    y[i] = (QT)(BOTH);                                                             \
                }                                                                                  \
            } else {                                                                               \
                for (i = 0; i < n; ++i) {                                                          \
                    const int32_t xa = pa[(int64_t)i * sa], xb = pb[(int64_t)i * sb];              \
                    y[i] = (QT)(BOTH);                                                             \
                }                                                                                  \
            }                                                                                      \
            y += n;                                                                                \
            for (k = r - 2; k >= 0; --k) {                                                         \
                ao += s->a_strides[k];                                                             \
                bo += s->b_strides[k];                                                             \
                if (++idx[k] < s->shape[k]) break;                                                 \
                ao -= (int64_t)s->a_strides[k] * s->shape[k];                                      \
                bo -= (int64_t)s->b_strides[k] * s->shape[k];                                      \
                idx[k] = 0;                                                                        \
            }                                                                                      \
        }                                                                                          \
    }

#if AOTC_QUANT_VNNI
#define AOTC_QADD_CONTIG(p, pa, pb, y, n) AOTC_Q(qadd_avx512)(p, pa, pb, y, n)
#else
#define AOTC_QADD_CONTIG(p, pa, pb, y, n) 0
#endif

static inline int32_t AOTC_Q(saturate)(float f, float lo, float hi) {
    f = f < lo ? lo : f; /* lo, hi are whole numbers: clamping before rounding is clamping after */
    f = f > hi ? hi : f;
    return aotc_round_even(f);
}

/* onnxruntime's QLinearAdd (MlasQLinearAddKernelAvx2Helper): the scalar operand's product joins the
 * bias by one fma first; with a scalar a, onnxruntime swaps the operands and aotc's compiler gives
 * that case its own bias (aot/qmath.py qadd_constants). */
AOTC_QBINARY(qadd,
             AOTC_Q(saturate)(fmaf((float)xb, p->b_mult, fmaf((float)xa, p->a_mult, p->bias)), lo, hi),
             AOTC_Q(saturate)(fmaf((float)xa, p->a_mult, fmaf((float)xb, p->b_mult, p->bias)), lo, hi),
             AOTC_Q(saturate)(fmaf((float)xa, p->a_mult, fmaf((float)xb, p->b_mult, p->bias)), lo, hi),
             AOTC_QADD_CONTIG(p, pa, pb, y, n))
AOTC_QBINARY(qmul,
             aotc_requant((xa - p->a_zero) * (xb - p->b_zero), p->a_mult, p->y_lo, p->y_hi, p->y_zero),
             aotc_requant((xa - p->a_zero) * (xb - p->b_zero), p->a_mult, p->y_lo, p->y_hi, p->y_zero),
             aotc_requant((xa - p->a_zero) * (xb - p->b_zero), p->a_mult, p->y_lo, p->y_hi, p->y_zero), 0)
#undef AOTC_QBINARY
#undef AOTC_QADD_CONTIG

void AOTC_Q(qconv_patches_add)(const aotc_qconv_params *p, const aotc_qresidual_params *r, int32_t tile,
                               const QT *x, const int8_t *w, const QT *res, QT *y, uint8_t *scratch, QT *tmp) {
#if AOTC_QUANT_VNNI
    if (AOTC_Q(qconv_rows)(p, tile, x, w, y, scratch, r, res)) return; /* the ADD in its stores (y may be res) */
#endif
#if AOTC_QUANT_VNNI && defined(__AVX512VBMI__)
    if (AOTC_QCONV_PACKED(p) != 2 && AOTC_Q(qconv_dense)(p, tile, x, w, y, scratch, r, res)) return; /* (y may be res) */
#endif
    if (tmp != NULL) { /* the conv into tmp, then the ADD's own kernel */
        AOTC_Q(qconv_patches)(p, tile, x, w, tmp, scratch);
#if AOTC_QUANT_VNNI
        AOTC_Q(x86_residual_add)(p, r, r->conv_a ? tmp : res, r->conv_a ? res : tmp, y); /* as one run */
#else
        AOTC_Q(qadd)(&r->add, r->conv_a ? tmp : res, r->conv_a ? res : tmp, y);
#endif
        return;
    }
#if AOTC_QUANT_VNNI
    (void)p, (void)r, (void)tile, (void)x, (void)w, (void)res, (void)y, (void)scratch; /* aotc always gives tmp here */
#else
    AOTC_Q(qconv_patches_plain)(p, tile, x, w, y, scratch, r, res); /* the ADD in the stores */
#endif
}

/* onnxruntime's QLinearAveragePool (contrib, NCHW) where the window is not the whole plane: each
 * input dequantized to float (lut: x_scale * (x - x_zero) for every 8-bit x, indexed by its byte, so
 * no product is fused into the sum), summed over the window in row-major order, divided by the
 * count (the whole kernel with count_include_pad, else the window clipped to the input), then
 * y = round_half_even(sum / count / y_scale + y_zero), saturated. Dense windows only. */
void AOTC_Q(qavgpool)(const aotc_pool_params *p, const float *lut, float y_scale, int32_t y_zero,
                      const QT *AOTC_RESTRICT x, QT *AOTC_RESTRICT y) {
    const int32_t D = p->in[0], H = p->in[1], W = p->in[2];
    const int32_t whole = p->kernel[0] * p->kernel[1] * p->kernel[2];
    int32_t c, od, oh, ow, d, h, w;
    for (c = 0; c < p->planes; ++c) {
        for (od = 0; od < p->out[0]; ++od) {
            const int32_t d0 = od * p->strides[0] - p->pads_begin[0];
            const int32_t d1 = d0 + p->kernel[0] < D ? d0 + p->kernel[0] : D, ds = d0 > 0 ? d0 : 0;
            for (oh = 0; oh < p->out[1]; ++oh) {
                const int32_t h0 = oh * p->strides[1] - p->pads_begin[1];
                const int32_t h1 = h0 + p->kernel[1] < H ? h0 + p->kernel[1] : H, hs = h0 > 0 ? h0 : 0;
                for (ow = 0; ow < p->out[2]; ++ow) {
                    const int32_t w0 = ow * p->strides[2] - p->pads_begin[2];
                    const int32_t w1 = w0 + p->kernel[2] < W ? w0 + p->kernel[2] : W, ws = w0 > 0 ? w0 : 0;
                    const int32_t count = p->count_include_pad ? whole : (d1 - ds) * (h1 - hs) * (w1 - ws);
                    float sum = 0.0f, v;
                    int32_t q;
                    for (d = ds; d < d1; ++d)
                        for (h = hs; h < h1; ++h)
                            for (w = ws; w < w1; ++w) sum += lut[(uint8_t)x[((ptrdiff_t)d * H + h) * W + w]];
                    v = sum / (float)count;
                    q = aotc_round_even(v / y_scale + (float)y_zero);
                    *y++ = (QT)(q < QT_MIN ? QT_MIN : q > QT_MAX ? QT_MAX : q);
                }
            }
        }
        x += (ptrdiff_t)D * H * W;
    }
}

void AOTC_Q(qglobal_avgpool)(int32_t planes, int32_t size, float scale, int32_t x_zero, int32_t y_zero,
                             const QT *AOTC_RESTRICT x, QT *AOTC_RESTRICT y) {
    const float lo = (float)(QT_MIN - y_zero), hi = (float)(QT_MAX - y_zero);
    int32_t c, i;
    for (c = 0; c < planes; ++c) {
        int32_t sum = -x_zero * size;
        for (i = 0; i < size; ++i) sum += x[i];
        y[c] = (QT)aotc_requant(sum, scale, lo, hi, y_zero);
        x += size;
    }
}

/* onnxruntime's QLinearSoftmax (opset 13: over the innermost axis): in integers, through a table
 * of exp(v - max) scaled to 32 bits. The row's maximum indexes the table's last entry; each output
 * is (table * y_scale + sum / 2) / sum + y_zero in uint32 arithmetic, saturated above at 255
 * (which an int8 output then reads as -1, as in onnxruntime). */
void AOTC_Q(qsoftmax)(int32_t rows, int32_t n, const uint32_t *table, uint32_t y_scale, int32_t y_zero,
                      const QT *AOTC_RESTRICT x, QT *AOTC_RESTRICT y) {
    int32_t r, i;
    for (r = 0; r < rows; ++r) {
        QT xmax = x[0];
        uint32_t sum = 0, rounding;
        for (i = 1; i < n; ++i) xmax = x[i] > xmax ? x[i] : xmax;
        for (i = 0; i < n; ++i) sum += table[(uint8_t)(255 + QT_MIN + (int32_t)x[i] - (int32_t)xmax)];
        rounding = sum >> 1;
        for (i = 0; i < n; ++i) {
            const uint32_t t = table[(uint8_t)(255 + QT_MIN + (int32_t)x[i] - (int32_t)xmax)];
            const uint32_t q = (t * y_scale + rounding) / sum + (uint32_t)y_zero;
            /* saturated at 255 (compared as signed for int8, as onnxruntime does), then the low byte */
            const int32_t v = (QT_MIN < 0 ? (int32_t)q > 255 : q > 255u) ? 255 : (int32_t)(q & 0xFFu);
            y[i] = (QT)(QT_MIN < 0 && v > 127 ? v - 256 : v);
        }
        x += n;
        y += n;
    }
}

void AOTC_Q(qlookup)(size_t n, const QT *x, const QT *table, QT *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = table[(int32_t)x[i] - QT_MIN];
}

void AOTC_Q(qrequant_copy)(int32_t outer, int32_t inner, int32_t out_stride, const QT *table,
                           const QT *AOTC_RESTRICT x, QT *AOTC_RESTRICT y) {
    int32_t o, i;
    for (o = 0; o < outer; ++o) {
        for (i = 0; i < inner; ++i) y[i] = table[(int32_t)x[i] - QT_MIN];
        x += inner;
        y += out_stride;
    }
}

/* ---- dynamic quantization (onnxruntime's quantize_dynamic) -------------------------------- */

#if QT_MIN == 0 /* DynamicQuantizeLinear writes uint8 only */
void aotc_dynamic_quantize_u8(int32_t n, const float *AOTC_RESTRICT x, uint8_t *AOTC_RESTRICT y,
                              float *AOTC_RESTRICT y_scale, uint8_t *AOTC_RESTRICT y_zero) {
    float lo = 0.0f, hi = 0.0f, scale, zero_f;
    int32_t i, zero;
    for (i = 0; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    zero_f = 0.0f - lo / scale;
    zero_f = zero_f < 0.0f ? 0.0f : zero_f > 255.0f ? 255.0f : zero_f;
    zero = aotc_round_even(zero_f);
    for (i = 0; i < n; ++i) {
        float f = x[i] / scale;
        f = f < (float)(0 - zero) ? (float)(0 - zero) : f;
        f = f > (float)(255 - zero) ? (float)(255 - zero) : f;
        y[i] = (uint8_t)(aotc_round_even(f) + zero);
    }
    *y_scale = scale;
    *y_zero = (uint8_t)zero;
}
#endif

void AOTC_Q(matmul_integer)(int32_t m, int32_t n, int32_t k, const QT *AOTC_RESTRICT a, const QT *AOTC_RESTRICT a_zero,
                            const int8_t *AOTC_RESTRICT bt, const int32_t *AOTC_RESTRICT b_zero,
                            const int32_t *AOTC_RESTRICT b_sums, int32_t *AOTC_RESTRICT y) {
    const int32_t az = a_zero ? (int32_t)*a_zero : 0;
    int32_t i, j, r;
    for (i = 0; i < m; ++i) {
        const QT *ar = a + (int64_t)i * k;
        int32_t a_sum = 0;
        for (r = 0; r < k; ++r) a_sum += ar[r];
        for (j = 0; j < n; ++j) {
            const int8_t *br = bt + (int64_t)j * k;
            int32_t acc = 0;
            for (r = 0; r < k; ++r) acc += (int32_t)ar[r] * br[r];
            y[(int64_t)i * n + j] = acc - b_zero[j] * a_sum - az * b_sums[j];
        }
    }
}

void AOTC_Q(conv_integer)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x, const QT *AOTC_RESTRICT x_zero,
                          const int8_t *AOTC_RESTRICT w, int32_t *AOTC_RESTRICT y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t xz = x_zero ? (int32_t)*x_zero : p->x_zero;
    int32_t n, oc, oh, ow, ic, kh, kw;
    for (n = 0; n < p->batch; ++n) {
        for (oc = 0; oc < p->out_c; ++oc) {
            const int32_t g = oc / mg, wz = p->w_zero[oc];
            for (oh = 0; oh < p->out_h; ++oh) {
                for (ow = 0; ow < p->out_w; ++ow) {
                    int32_t acc = 0;
                    for (ic = 0; ic < cg; ++ic) {
                        const QT *plane = x + (((int64_t)n * p->in_c) + (int64_t)g * cg + ic) * p->in_h * p->in_w;
                        const int8_t *wk = w + ((int64_t)oc * cg + ic) * p->k_h * p->k_w;
                        for (kh = 0; kh < p->k_h; ++kh) {
                            const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
                            if (ih < 0 || ih >= p->in_h) continue; /* padding: x - x_zero is 0 */
                            for (kw = 0; kw < p->k_w; ++kw) {
                                const int32_t iw = ow * p->stride_w - p->pad_left + kw * p->dil_w;
                                if (iw < 0 || iw >= p->in_w) continue;
                                acc += ((int32_t)plane[(int64_t)ih * p->in_w + iw] - xz) *
                                       ((int32_t)wk[kh * p->k_w + kw] - wz);
                            }
                        }
                    }
                    y[(((int64_t)n * p->out_c + oc) * p->out_h + oh) * p->out_w + ow] = acc;
                }
            }
        }
    }
}
