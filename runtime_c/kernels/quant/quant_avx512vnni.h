/* The quantized kernels with AVX-512 VNNI (x86 hosts whose -march has it: AOTC_QUANT_VNNI in
 * quant_config.h), over one element type QT as quant_impl.h (which includes this file once per type, at its
 * top). Which path takes a QLinearConv:
 *   - depthwise: qconv_depthwise_flat (with VBMI: 16 output positions of the plane a block, spanning
 *     rows where the plane is narrow), else qconv_depthwise_avx512 (16 positions of a row from a ring
 *     of padded rows);
 *   - stride-1 convs whose weights aot/kernels/quant.py put in qconv_rows's order (w_packed 2: whole quads of
 *     input channels, blocks of 16 output channels, rows of 16 outputs and more, no weight zero points):
 *     qconv_rows (a range of output rows' input rows interleaved once into the scratch, 4 channels a word; a
 *     tap's quad row of 16 positions one plain load; a residual QLinearAdd in its stores);
 *   - other convs: qconv_dense (with VBMI, k_w >= 3: patch quads of 4 consecutive taps in the
 *     weights' order, from two kernel rows' windows by one vpermt2b; up to 96 KiB of work for a pass's
 *     weights and the kept index vectors, and with packed weights, more than 16 output channels and a
 *     patch block of scratch, the quads of up to that many positions made once into the scratch for
 *     every block of 16 channels; a residual QLinearAdd (aotc_qconv_patches_add_*) added in its
 *     stores), else qconv_windows (with VBMI: quads of 4 taps of one kernel row, k_w padded to whole
 *     quads), else qconv_patches_vnni (the patch quads of the plain path, gathered and interleaved by
 *     SIMD; pointwise convs read straight from the input planes).
 * The paths' buffers are the plan's scratch, p->work bytes past the patch block or the depthwise rows
 * (aotc_quant.h: aotc_qconv_patches_x86_work_bytes, aotc_qconv_depthwise_x86_work_bytes); a path that is
 * not given its work is not taken.
 * Bit-exact with the plain paths (tests/kernels/test_quant.py holds them equal): the same integer sums, and
 * the requantisation of aotc_requant 16 lanes at a time (cvtdq2ps rounds as (float), max / min clamp
 * as the two tests, cvtps2dq rounds half to even as aotc_round_even in the default rounding mode).
 * No include guard. */

#ifndef AOTC_QX86_TRACE
#if defined(AOTC_TEST_QX86_TRACE)
/* tests/kernels_c/test_quant_avx2_shapes.c counts the blocks its shapes run on these paths (no instruction count
 * for AVX-512 here: valgrind and qemu 7.2 lack it) */
extern long aotc_test_qx86_dw3, aotc_test_qx86_dw3_masked, aotc_test_qx86_dw3_one, aotc_test_qx86_requant_channel;
extern long aotc_test_qx86_quads64;
extern long aotc_test_qx86_dotb3, aotc_test_qx86_dotq, aotc_test_qx86_dotb3n, aotc_test_qx86_dotq3, aotc_test_qx86_runs;
extern long aotc_test_qx86_gemv, aotc_test_qx86_requant64, aotc_test_qx86_requant64_guard, aotc_test_qx86_column;
extern long aotc_test_qx86_rows3, aotc_test_qx86_tail;
#define AOTC_QX86_TRACE(what) (void)(++aotc_test_qx86_##what)
#else
#define AOTC_QX86_TRACE(what) ((void)0)
#endif
#endif

/* round_half_even(clamp((float)acc * scale, lo, hi)) + zero_point as 16 bytes of QT (each lane's
 * integer is inside QT's range, so its low byte is the value). */
static inline __m128i AOTC_Q(x86_requant16)(__m512i acc, __m512 scale, __m512 lo, __m512 hi, __m512i zero_point) {
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), scale);
    f = _mm512_max_ps(f, lo);
    f = _mm512_min_ps(f, hi);
    return _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), zero_point));
}

/* Four vectors of x86_requant16_lanes (each lane inside QT's range) as 64 bytes of QT, v0's lanes first: two
 * saturating packs (which change nothing here) and a dword permute, for one store of 64 rather than four masked
 * vpmovdb stores of 16 (qconv_patches_one where its clamp is not whole numbers; x86_requant64 otherwise) */
static inline __m512i AOTC_Q(x86_pack64)(__m512i v0, __m512i v1, __m512i v2, __m512i v3) {
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512i a = _mm512_packs_epi32(v0, v1), b = _mm512_packs_epi32(v2, v3);
    return _mm512_permutexvar_epi32(idx, QT_MIN < 0 ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b));
}

/* x86_pack64 of the nv (1 to 4) vectors of sums at acc (the rest as zeros), requantised as x86_requant16 does it
 * where the clamp [hi's low side y_lo, hi] is whole numbers and y_lo + y_zero, y_hi + y_zero are inside QT's range
 * (qlo, qhi those bytes; zp16 y_zero in 16-bit words): round(min(acc * scale, hi)), then the zero point added in
 * 16-bit words with saturation, the packs' saturation and the clamp in bytes. The same bytes (rounding commutes
 * with a clamp to whole numbers; a product below -2^31 converts to INT32_MIN and saturates to QT's least): one float
 * clamp and the zero point's add a 16 outputs fewer. The steps that change nothing are left out (issue 64: a QDQ
 * MobileNetV2's expanding 1 x 1 convs 5-9 % less): guard 0 where no product reaches 2^31 (x86_requant_guard; the
 * float min only kept cvtps2dq from overflowing to INT32_MIN), clamp 0 where qlo and qhi are QT's own bounds (a
 * ReLU6 after onnxruntime's quantizer: y_zero -128, [0, 255]; the packs saturate there). */
static inline __m512i AOTC_Q(x86_requant64)(const __m512i *acc, int32_t nv, __m512 scale, __m512 hi, __m512i zp16,
                                            __m512i qlo, __m512i qhi, int guard, int clamp) {
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i r[4], a, b, q;
    int32_t v;
    for (v = 0; v < 4; ++v) {
        const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[v]), scale);
        r[v] = v < nv ? _mm512_cvtps_epi32(guard ? _mm512_min_ps(f, hi) : f) : _mm512_setzero_si512();
    }
    a = _mm512_adds_epi16(_mm512_packs_epi32(r[0], r[1]), zp16), b = _mm512_adds_epi16(_mm512_packs_epi32(r[2], r[3]), zp16);
    q = _mm512_permutexvar_epi32(idx, QT_MIN < 0 ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b));
    if (!clamp) return q;
    return QT_MIN < 0 ? _mm512_max_epi8(_mm512_min_epi8(q, qhi), qlo) : _mm512_max_epu8(_mm512_min_epu8(q, qhi), qlo);
}

/* Channels j < nb (sums acc[4 j .. 4 j + nv), scales scale[j]) by x86_requant64 into their 64 positions at y (lanes
 * m64; channel j's plane_out bytes on); guard and clamp constants where it is inlined. */
static inline __attribute__((always_inline)) void AOTC_Q(x86_store64)(const __m512i *acc, int32_t nb, int32_t nv,
                                                                      const float *scale, int guard, __m512 hi,
                                                                      __m512i zp16, __m512i qlo, __m512i qhi, int clamp,
                                                                      QT *y, int64_t plane_out, __mmask64 m64) {
    int32_t j;
    for (j = 0; j < nb; ++j, y += plane_out) {
        AOTC_QX86_TRACE(requant64);
        if (guard) AOTC_QX86_TRACE(requant64_guard);
        _mm512_mask_storeu_epi8((void *)y, m64, AOTC_Q(x86_requant64)(acc + 4 * j, nv, _mm512_set1_ps(scale[j]), hi,
                                                                       zp16, qlo, qhi, guard, clamp));
    }
}

/* Whether x86_requant64 needs its float clamp for some channel of p, whose sums start at the bias over kp quad bytes
 * (patch bytes 0-255 against weights -128-127: at most bias + 32385 kp): 0 where that times the scale stays below
 * 2^30 for every channel, well inside cvtps2dq's range whatever the float roundings; 1 otherwise (a NaN scale too).
 * Once a conv, 16 channels at a time (a test a channel and block of 6 took 15 % more of a 1 x 1 conv of 16 inputs). */
static int AOTC_Q(x86_requant_guard)(const aotc_qconv_params *p, int32_t kp) {
    const __m512 top = _mm512_set1_ps((float)kp * 32385.0f), limit = _mm512_set1_ps(1073741824.0f);
    __mmask16 any = 0;
    int32_t c;
    for (c = 0; c < p->out_c; c += 16) {
        const __mmask16 m = (__mmask16)(p->out_c - c >= 16 ? 0xFFFFu : (1u << (p->out_c - c)) - 1u);
        const __m512 most = _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, (const void *)(p->bias + c))), top);
        const __m512 f = _mm512_mul_ps(most, _mm512_maskz_loadu_ps(m, (const void *)(p->scale + c)));
        any |= _mm512_mask_cmp_ps_mask(m, f, limit, _CMP_NLT_UQ);
    }
    return any != 0;
}

/* A residual QLinearAdd fused into a conv's stores (aotc_qconv_patches_add_*), its constants as
 * vectors once per conv: a_mult, b_mult, bias and the clamp (y_lo, y_hi + y_zero). */
typedef struct {
    __m512 am, bm, bias, lo, hi;
    int conv_a;
} AOTC_Q(x86_resid);

static inline AOTC_Q(x86_resid) AOTC_Q(x86_resid_init)(const aotc_qresidual_params *r) {
    const aotc_qbinary_params *a = &r->add;
    AOTC_Q(x86_resid) v;
    v.am = _mm512_set1_ps(a->a_mult), v.bm = _mm512_set1_ps(a->b_mult), v.bias = _mm512_set1_ps(a->bias);
    v.lo = _mm512_set1_ps(a->y_lo + (float)a->y_zero), v.hi = _mm512_set1_ps(a->y_hi + (float)a->y_zero);
    v.conv_a = r->conv_a;
    return v;
}

/* round_half_even(clamp((float)acc * scale, lo, hi)) + zero_point as x86_requant16 gives it, but
 * left in int32 lanes (each inside QT's range) */
static inline __m512i AOTC_Q(x86_requant16_lanes)(__m512i acc, __m512 scale, __m512 lo, __m512 hi, __m512i zero_point) {
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), scale);
    f = _mm512_max_ps(f, lo);
    f = _mm512_min_ps(f, hi);
    return _mm512_add_epi32(_mm512_cvtps_epi32(f), zero_point);
}

/* The ADD of the 16 conv outputs q (int32 lanes, x86_requant16_lanes) and the residual's 16 bytes rv
 * as residual_one (and qadd_avx512) computes it: fma(a, a_mult, fma(b, b_mult, bias)), clamped,
 * rounded half to even; 16 bytes of QT. */
static inline __m128i AOTC_Q(x86_residual16b)(const AOTC_Q(x86_resid) *r, __m512i q, __m128i rv) {
    const __m512 fq = _mm512_cvtepi32_ps(q);
    const __m512 fr = _mm512_cvtepi32_ps(QT_MIN < 0 ? _mm512_cvtepi8_epi32(rv) : _mm512_cvtepu8_epi32(rv));
    const __m512 fa = r->conv_a ? fq : fr, fb = r->conv_a ? fr : fq;
    __m512 f = _mm512_fmadd_ps(fa, r->am, _mm512_fmadd_ps(fb, r->bm, r->bias));
    f = _mm512_min_ps(_mm512_max_ps(f, r->lo), r->hi);
    return _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(f));
}

/* x86_residual16b on the residual's lanes m at res */
static inline __m128i AOTC_Q(x86_residual16)(const AOTC_Q(x86_resid) *r, __m512i q, const QT *res, __mmask16 m) {
    return AOTC_Q(x86_residual16b)(r, q, _mm_maskz_loadu_epi8(m, (const void *)res));
}

/* quantize_avx512 prefetches the floats this many on: a net's input is read once a run and by then mostly out of
 * the caches (ResNet-18 QDQ's 602 KB input after its 11 MB of weights: 61 -> 19 us a run, the loads waited on) */
#define AOTC_QX86_QUANTIZE_AHEAD 512

/* quantize (QuantizeLinear) 16 floats at a time: the same division, the clamp by compares (a NaN
 * passes both and becomes the zero point, as in the plain loop), cvtps2dq's rounding half to even. */
static void AOTC_Q(quantize_avx512)(const aotc_qaxis *p, const float *x, QT *y) {
    const int32_t inner = p->inner; /* (read once: the byte stores may alias *p) */
    int32_t o, c, i;
    for (o = 0; o < p->outer; ++o) {
        for (c = 0; c < p->channels; ++c) {
            const __m512 s = _mm512_set1_ps(p->scale[c]);
            const __m512 lo = _mm512_set1_ps((float)(QT_MIN - p->zero[c])), hi = _mm512_set1_ps((float)(QT_MAX - p->zero[c]));
            const __m512i z = _mm512_set1_epi32(p->zero[c]);
            for (i = 0; i < inner; i += 16) {
                const __mmask16 m = (__mmask16)(inner - i >= 16 ? 0xFFFFu : (1u << (inner - i)) - 1u);
                __m512 f = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), s);
                _mm_prefetch((const char *)(x + i + AOTC_QX86_QUANTIZE_AHEAD), _MM_HINT_T0); /* (past the end: harmless) */
                const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
                f = _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(f, lo, _CMP_LT_OQ), lo);
                f = _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(f, hi, _CMP_GT_OQ), hi);
                f = _mm512_mask_mov_ps(f, nan, _mm512_setzero_ps());
                _mm_mask_storeu_epi8((void *)(y + i), m, _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), z)));
            }
            x += inner;
            y += inner;
        }
    }
}

/* QLinearAdd over contiguous runs: the first n / 16 x 16 outputs of the run, 16 at a time, as the
 * plain loop computes them (fma(a, a_mult, fma(b, b_mult, bias)), each fma rounded once, clamped,
 * rounded half to even); the number done. */
static int32_t AOTC_Q(qadd_avx512)(const aotc_qbinary_params *p, const QT *a, const QT *b, QT *y, int32_t n) {
    const __m512 am = _mm512_set1_ps(p->a_mult), bm = _mm512_set1_ps(p->b_mult), bias = _mm512_set1_ps(p->bias);
    const __m512 lo = _mm512_set1_ps(p->y_lo + (float)p->y_zero), hi = _mm512_set1_ps(p->y_hi + (float)p->y_zero);
    int32_t i;
    for (i = 0; i + 16 <= n; i += 16) {
        const __m128i va = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        const __m128i vb = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        const __m512 fa = _mm512_cvtepi32_ps(QT_MIN < 0 ? _mm512_cvtepi8_epi32(va) : _mm512_cvtepu8_epi32(va));
        const __m512 fb = _mm512_cvtepi32_ps(QT_MIN < 0 ? _mm512_cvtepi8_epi32(vb) : _mm512_cvtepu8_epi32(vb));
        __m512 f = _mm512_fmadd_ps(fa, am, _mm512_fmadd_ps(fb, bm, bias));
        f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
        _mm_storeu_si128((__m128i *)(void *)(y + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(f)));
    }
    return i;
}

/* The residual ADD of a QLinearConvAdd whose conv went to tmp (aotc_qconv_patches_add_*): a and b of y's shape,
 * with no broadcasting, so one run of n elements (qadd_avx512's 16 at a time, not each output row's few; where
 * rows are one element, whose strides are 0 and whose bias the compiler made for a scalar a, as compiled), in runs
 * of AOTC_QX86_ADD_RUN elements over the pool where the conv split and the ADD has AOTC_QX86_ADD_POOL_MIN
 * elements */
#define AOTC_QX86_ADD_RUN 4096
#ifndef AOTC_QX86_ADD_POOL_MIN
#define AOTC_QX86_ADD_POOL_MIN 32768
#endif
typedef struct {
    const aotc_qbinary_params *p;
    const QT *a, *b;
    QT *y;
    int64_t n;
} AOTC_Q(x86_addjob);

static void AOTC_Q(x86_add_runs)(void *ctx, int32_t begin, int32_t end) {
    const AOTC_Q(x86_addjob) *J = (const AOTC_Q(x86_addjob) *)ctx;
    const int64_t i0 = (int64_t)begin * AOTC_QX86_ADD_RUN;
    const int64_t i1 = (int64_t)end * AOTC_QX86_ADD_RUN < J->n ? (int64_t)end * AOTC_QX86_ADD_RUN : J->n;
    aotc_qbinary_params f = *J->p;
    f.shape.rank = 1, f.shape.shape[0] = (int32_t)(i1 - i0), f.shape.a_strides[0] = f.shape.b_strides[0] = 1;
    AOTC_Q(qadd)(&f, J->a + i0, J->b + i0, J->y + i0);
}

static void AOTC_Q(x86_residual_add)(const aotc_qconv_params *p, const aotc_qresidual_params *r, const QT *a, const QT *b,
                                     QT *y) {
    const aotc_broadcast *s = &r->add.shape;
    AOTC_Q(x86_addjob) J;
    int32_t k, runs;
    if (s->a_strides[s->rank - 1] != 1 || s->b_strides[s->rank - 1] != 1) { /* rows of one element: as compiled */
        AOTC_Q(qadd)(&r->add, a, b, y);
        return;
    }
    J.p = &r->add, J.a = a, J.b = b, J.y = y, J.n = 1;
    for (k = 0; k < r->add.shape.rank; ++k) J.n *= r->add.shape.shape[k];
    runs = (int32_t)((J.n + AOTC_QX86_ADD_RUN - 1) / AOTC_QX86_ADD_RUN);
    if (p->lanes >= AOTC_QX86_MAX_LANES && AOTC_QX86_MAX_LANES > 1 && J.n >= AOTC_QX86_ADD_POOL_MIN) {
        aotc_parallel_for(AOTC_Q(x86_add_runs), &J, runs);
    } else {
        AOTC_Q(x86_add_runs)(&J, 0, runs);
    }
}

#ifndef QX86_DPBUSD8
/* a0..a7 += the 16 positions' quad row xv times the weight word at byte q of w0..w7 (one vpdpbusd each) */
#define QX86_DPBUSD8(xv, q)                                                                                 \
    do {                                                                                                   \
        int32_t v_[8];                                                                                     \
        memcpy(&v_[0], w0 + (q), 4), memcpy(&v_[1], w1 + (q), 4), memcpy(&v_[2], w2 + (q), 4);          \
        memcpy(&v_[3], w3 + (q), 4), memcpy(&v_[4], w4 + (q), 4), memcpy(&v_[5], w5 + (q), 4);          \
        memcpy(&v_[6], w6 + (q), 4), memcpy(&v_[7], w7 + (q), 4);                                        \
        a0 = _mm512_dpbusd_epi32(a0, (xv), _mm512_set1_epi32(v_[0]));                                      \
        a1 = _mm512_dpbusd_epi32(a1, (xv), _mm512_set1_epi32(v_[1]));                                      \
        a2 = _mm512_dpbusd_epi32(a2, (xv), _mm512_set1_epi32(v_[2]));                                      \
        a3 = _mm512_dpbusd_epi32(a3, (xv), _mm512_set1_epi32(v_[3]));                                      \
        a4 = _mm512_dpbusd_epi32(a4, (xv), _mm512_set1_epi32(v_[4]));                                      \
        a5 = _mm512_dpbusd_epi32(a5, (xv), _mm512_set1_epi32(v_[5]));                                      \
        a6 = _mm512_dpbusd_epi32(a6, (xv), _mm512_set1_epi32(v_[6]));                                      \
        a7 = _mm512_dpbusd_epi32(a7, (xv), _mm512_set1_epi32(v_[7]));                                      \
    } while (0)
#endif

/* acc[j] = the sums over kq quad rows (`stride` bytes apart from pq, 16 positions each) against
 * the weight words of w[j] (rows of 4 kq bytes), by vpdpbusd. */
static inline void AOTC_Q(x86_dot8)(const uint8_t *AOTC_RESTRICT pq, int64_t stride, const int8_t *const *w, int32_t kq,
                                    int32_t qs, __m512i *acc) {
    const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3], *w4 = w[4], *w5 = w[5], *w6 = w[6], *w7 = w[7];
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    int32_t q;
    for (q = 0; q < qs * kq; q += qs, pq += stride) {
        const __m512i xv = _mm512_loadu_si512((const void *)pq);
        QX86_DPBUSD8(xv, q);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = a4, acc[5] = a5, acc[6] = a6, acc[7] = a7;
}

#ifndef QX86_DOT6
/* (issue 64: x86_dot8's quad row fed 8 dot products from one load and 8 broadcasts; the pointwise convs of an int8
 * MobileNetV2 took 58 % of its time there) */
#define QX86_DOT6_ROW(j, NC, NV)                                                                             \
    if (NC > j) {                                                                                          \
        int32_t v_;                                                                                        \
        memcpy(&v_, w##j + q, 4);                                                                          \
        const __m512i b_ = _mm512_set1_epi32(v_);                                                          \
        a##j##0 = _mm512_dpbusd_epi32(a##j##0, x0, b_);                                                    \
        if (NV > 1) a##j##1 = _mm512_dpbusd_epi32(a##j##1, x1, b_);                                        \
        if (NV > 2) a##j##2 = _mm512_dpbusd_epi32(a##j##2, x2, b_);                                        \
        if (NV > 3) a##j##3 = _mm512_dpbusd_epi32(a##j##3, x3, b_);                                        \
    }
#define QX86_DOT6_OUT(j, NC)                                                                               \
    if (NC > j) acc[4 * (j)] = a##j##0, acc[4 * (j) + 1] = a##j##1, acc[4 * (j) + 2] = a##j##2, acc[4 * (j) + 3] = a##j##3;
/* acc[4 j + v] = init[j] (0 where init is NULL) plus the sums over kq quad rows (`stride` bytes apart from pq; positions 16 v .. 16 v + 15 at pq + 64 v,
 * v < NV) against the weight words of w[j], j < NC (6, or 2 and 4 for a conv's last channels, x86_dot_tail):
 * up to 24 sums in registers, so that a quad row's NV loads and NC broadcasts feed NC NV byte dot products */
#define QX86_DOT6_INIT(j) const __m512i i##j##_ = init ? _mm512_set1_epi32(init[j]) : z_;
#define QX86_DOTC(NC, NV)                                                                                  \
    static inline void AOTC_Q(x86_dot##NC##x##NV)(const uint8_t *AOTC_RESTRICT pq, int64_t stride,         \
                                                  const int8_t *const *w, int32_t kq, int32_t qs, __m512i *acc, \
                                                  const int32_t *init) {                                     \
        const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3], *w4 = w[4], *w5 = w[5];               \
        const __m512i z_ = _mm512_setzero_si512();                                                         \
        QX86_DOT6_INIT(0) QX86_DOT6_INIT(1) QX86_DOT6_INIT(2) QX86_DOT6_INIT(3) QX86_DOT6_INIT(4) QX86_DOT6_INIT(5) \
        __m512i a00 = i0_, a01 = i0_, a02 = i0_, a03 = i0_, a10 = i1_, a11 = i1_, a12 = i1_, a13 = i1_;     \
        __m512i a20 = i2_, a21 = i2_, a22 = i2_, a23 = i2_, a30 = i3_, a31 = i3_, a32 = i3_, a33 = i3_;     \
        __m512i a40 = i4_, a41 = i4_, a42 = i4_, a43 = i4_, a50 = i5_, a51 = i5_, a52 = i5_, a53 = i5_;     \
        int32_t q;                                                                                         \
        for (q = 0; q < qs * kq; q += qs, pq += stride) {                                                  \
            const __m512i x0 = _mm512_loadu_si512((const void *)pq);                                       \
            const __m512i x1 = NV > 1 ? _mm512_loadu_si512((const void *)(pq + 64)) : z_;                  \
            const __m512i x2 = NV > 2 ? _mm512_loadu_si512((const void *)(pq + 128)) : z_;                 \
            const __m512i x3 = NV > 3 ? _mm512_loadu_si512((const void *)(pq + 192)) : z_;                 \
            QX86_DOT6_ROW(0, NC, NV) QX86_DOT6_ROW(1, NC, NV) QX86_DOT6_ROW(2, NC, NV)                     \
            QX86_DOT6_ROW(3, NC, NV) QX86_DOT6_ROW(4, NC, NV) QX86_DOT6_ROW(5, NC, NV)                     \
        }                                                                                                  \
        QX86_DOT6_OUT(0, NC) QX86_DOT6_OUT(1, NC) QX86_DOT6_OUT(2, NC) QX86_DOT6_OUT(3, NC)                \
        QX86_DOT6_OUT(4, NC) QX86_DOT6_OUT(5, NC)                                                          \
    }
#define QX86_DOT6(NV) QX86_DOTC(6, NV)
#endif
QX86_DOT6(4)
QX86_DOT6(3)
QX86_DOT6(2)
QX86_DOT6(1)
QX86_DOTC(4, 4)
QX86_DOTC(4, 3)
QX86_DOTC(4, 2)
QX86_DOTC(4, 1)
QX86_DOTC(2, 4)
QX86_DOTC(2, 3)
QX86_DOTC(2, 2)
QX86_DOTC(2, 1)

/* Lanes [0, n) of 16 as a byte mask. */
static inline __mmask16 AOTC_Q(x86_lanes)(int32_t n) {
    return n >= 16 ? (__mmask16)0xFFFFu : (__mmask16)((1u << (n > 0 ? n : 0)) - 1u);
}

/* The lanes of a job, each holding nothing yet */
static inline void AOTC_Q(x86_lanes_init)(aotc_qx86_lane *lane) {
    int32_t t;
    for (t = 0; t < AOTC_QX86_MAX_LANES; ++t) {
        lane[t].held = -1, lane[t].wkey = -1, lane[t].init = 0, lane[t].next = 0, lane[t].wrange = -1;
    }
}

#ifndef AOTC_QX86_GEMV_AHEAD
/* x86_gemv4 prefetches the B rows this many rows on (the next four: without it the 1280 x 1000 classifier of a QDQ
 * MobileNetV2 waited on memory, 2.8 % of the runner's perf profile, with it 1.2-1.4 %; 34 -> 11 us by node_profile) */
#define AOTC_QX86_GEMV_AHEAD 4
#endif
/* Four B rows' dot products with a row of A by vpdpbusd, 64 bytes a step (the last masked): A as unsigned bytes (x +
 * AOTC_QOFFSET), less AOTC_QOFFSET times each B row's sum (its own vpdpbusd against the offset's bytes), as 4 sums */
static inline void AOTC_Q(x86_gemv4)(const QT *AOTC_RESTRICT ar, const int8_t *const *b, int32_t k, int32_t *out) {
    const __m512i flip = _mm512_set1_epi8((char)AOTC_QOFFSET), z = _mm512_setzero_si512();
    __m512i s0 = z, s1 = z, s2 = z, s3 = z, c0 = z, c1 = z, c2 = z, c3 = z;
    int32_t i;
    for (i = 0; i < k; i += 64) {
        const __mmask64 lm = k - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (k - i)) - 1u;
        const __m512i xv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(lm, (const void *)(ar + i)), flip);
        const __m512i b0 = _mm512_maskz_loadu_epi8(lm, (const void *)(b[0] + i));
        const __m512i b1 = _mm512_maskz_loadu_epi8(lm, (const void *)(b[1] + i));
        const __m512i b2 = _mm512_maskz_loadu_epi8(lm, (const void *)(b[2] + i));
        const __m512i b3 = _mm512_maskz_loadu_epi8(lm, (const void *)(b[3] + i));
        _mm_prefetch((const char *)(b[0] + AOTC_QX86_GEMV_AHEAD * k + i), _MM_HINT_T0);
        _mm_prefetch((const char *)(b[1] + AOTC_QX86_GEMV_AHEAD * k + i), _MM_HINT_T0);
        _mm_prefetch((const char *)(b[2] + AOTC_QX86_GEMV_AHEAD * k + i), _MM_HINT_T0);
        _mm_prefetch((const char *)(b[3] + AOTC_QX86_GEMV_AHEAD * k + i), _MM_HINT_T0);
        s0 = _mm512_dpbusd_epi32(s0, xv, b0), s1 = _mm512_dpbusd_epi32(s1, xv, b1);
        s2 = _mm512_dpbusd_epi32(s2, xv, b2), s3 = _mm512_dpbusd_epi32(s3, xv, b3);
        if (AOTC_QOFFSET != 0) { /* (masked bytes: 0 in B, so nothing) */
            c0 = _mm512_dpbusd_epi32(c0, flip, b0), c1 = _mm512_dpbusd_epi32(c1, flip, b1);
            c2 = _mm512_dpbusd_epi32(c2, flip, b2), c3 = _mm512_dpbusd_epi32(c3, flip, b3);
        }
    }
    out[0] = _mm512_reduce_add_epi32(_mm512_sub_epi32(s0, c0)), out[1] = _mm512_reduce_add_epi32(_mm512_sub_epi32(s1, c1));
    out[2] = _mm512_reduce_add_epi32(_mm512_sub_epi32(s2, c2)), out[3] = _mm512_reduce_add_epi32(_mm512_sub_epi32(s3, c3));
}

/* QGemm / QLinearMatMul (aotc_qgemm_*) with VNNI: 16 columns at a time, four B rows' dot products at once
 * (x86_gemv4), requantised 16 lanes at a time as the plain loop does it one at a time. (The plain loop, which gcc
 * vectorised with 16-bit multiplies, took 34-36 us on a QDQ MobileNetV2's 1280 x 1000 classifier, OpenVINO 24 us.)
 * 0 (nothing done) where B is interleaved (il4, Arm's). */
static int AOTC_Q(qgemm_avx512)(const aotc_qgemm_params *p, const QT *AOTC_RESTRICT a, const int8_t *AOTC_RESTRICT bt,
                                QT *AOTC_RESTRICT y) {
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero);
    int32_t m, n0, j, k;
    if (p->il4) return 0;
    AOTC_QX86_TRACE(gemv);
    for (m = 0; m < p->m; ++m) {
        const QT *ar = a + (int64_t)m * p->k;
        int32_t row_sum = 0;
        if (p->b_zero) {
            for (k = 0; k < p->k; ++k) row_sum += ar[k];
        }
        for (n0 = 0; n0 < p->n; n0 += 16) {
            const int32_t nn = p->n - n0 < 16 ? p->n - n0 : 16;
            const __mmask16 lm = AOTC_Q(x86_lanes)(nn);
            int32_t sums[16];
            __m512i acc;
            for (j = 0; j < nn; j += 4) { /* (rows past nn: the last again) */
                const int8_t *b[4];
                int32_t r;
                for (r = 0; r < 4; ++r) b[r] = bt + (int64_t)(n0 + (j + r < nn ? j + r : nn - 1)) * p->k;
                AOTC_Q(x86_gemv4)(ar, b, p->k, sums + j);
            }
            acc = _mm512_add_epi32(_mm512_maskz_loadu_epi32(lm, sums), _mm512_maskz_loadu_epi32(lm, p->bias + n0));
            if (p->b_zero) {
                acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(lm, p->b_zero + n0),
                                                               _mm512_set1_epi32(row_sum)));
            }
            _mm_mask_storeu_epi8((void *)(y + (int64_t)m * p->n + n0), lm,
                                 AOTC_Q(x86_requant16)(acc, p->per_column ? _mm512_maskz_loadu_ps(lm, p->scale + n0)
                                                                          : _mm512_set1_ps(p->scale[0]), lo, hi, zp));
        }
    }
    return 1;
}

/* Four 16-byte rows (as unsigned bytes: x + AOTC_QOFFSET) interleaved into 16 words of four bytes,
 * one a position (row j at byte j), stored at dst (64 bytes). */
static inline void AOTC_Q(x86_interleave4)(__m128i r0, __m128i r1, __m128i r2, __m128i r3, uint8_t *dst) {
    const __m128i a = _mm_unpacklo_epi8(r0, r1), b = _mm_unpackhi_epi8(r0, r1);
    const __m128i c = _mm_unpacklo_epi8(r2, r3), d = _mm_unpackhi_epi8(r2, r3);
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_unpacklo_epi16(a, c));
    _mm_storeu_si128((__m128i *)(void *)(dst + 16), _mm_unpackhi_epi16(a, c));
    _mm_storeu_si128((__m128i *)(void *)(dst + 32), _mm_unpacklo_epi16(b, d));
    _mm_storeu_si128((__m128i *)(void *)(dst + 48), _mm_unpackhi_epi16(b, d));
}

/* run[o] for o in [a, b): input column o's byte (every sw-th byte of xs, sw 1 or 2), flipped to unsigned, 16 at a
 * time (at stride 1 a masked load, at stride 2 every second byte of twice that: vpmovwb) */
static inline void AOTC_Q(x86_flip_span)(const QT *AOTC_RESTRICT xs, int32_t sw, int32_t a, int32_t b,
                                         uint8_t *AOTC_RESTRICT run, __m128i flip) {
    int32_t o;
    for (o = a; o < b; o += 16) {
        const int32_t n = b - o < 16 ? b - o : 16;
        __m128i v;
        if (sw == 1) {
            v = _mm_maskz_loadu_epi8(AOTC_Q(x86_lanes)(n), (const void *)(xs + o));
        } else {
            const __mmask32 m = n >= 16 ? 0x7FFFFFFFu : (__mmask32)((1u << (2 * n - 1)) - 1u);
            v = _mm256_cvtepi16_epi8(_mm256_maskz_loadu_epi8(m, (const void *)(xs + 2 * (int64_t)o)));
        }
        _mm_mask_storeu_epi8((void *)(run + o), AOTC_Q(x86_lanes)(n), _mm_xor_si128(v, flip));
    }
}

static void AOTC_Q(qconv_patch_row)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t r, int32_t p0,
                                    int32_t np, uint8_t *AOTC_RESTRICT out);

/* qconv_patch_row with its runs inside the image copied 16 positions at a time (at stride 1 a
 * masked load of the run, at stride 2 every second byte of twice that: vpmovwb), the padding by
 * memset. */
static void AOTC_Q(x86_patch_row)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t r, int32_t p0,
                                  int32_t np, uint8_t *AOTC_RESTRICT out) {
    const uint8_t zero = (uint8_t)(p->x_zero + AOTC_QOFFSET);
    const __m128i flip = _mm_set1_epi8((char)AOTC_QOFFSET);
    const int32_t ow_n = p->out_w, sw = p->stride_w;
    int32_t kh, start, o0, o1, t;
    const QT *plane = AOTC_Q(qconv_row_cols)(p, xg, r, &kh, &start, &o0, &o1);
    if (sw > 2) {
        AOTC_Q(qconv_patch_row)(p, xg, r, p0, np, out);
        return;
    }
    for (t = 0; t < np;) { /* one output row's run of positions at a time */
        const int32_t pos = p0 + t, oh = pos / ow_n, first = pos % ow_n;
        const int32_t last = first + (np - t) < ow_n ? first + (np - t) : ow_n;
        const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
        uint8_t *run = out + t - first; /* run[o]: output column o of this row */
        if (ih < 0 || ih >= p->in_h) {
            memset(run + first, zero, (size_t)(last - first));
        } else {
            const QT *xs = plane + (int64_t)ih * p->in_w + start;
            const int32_t a0 = first > o0 ? first : o0, b0 = last < o1 ? last : o1;
            const int32_t a = a0 < last ? a0 : last, b = b0 > a ? b0 : a;
            if (a > first) memset(run + first, zero, (size_t)(a - first));
            AOTC_Q(x86_flip_span)(xs, sw, a, b, run, flip);
            if (last > b) memset(run + b, zero, (size_t)(last - b));
        }
        t += last - first;
    }
}

/* x86_patch_row for a 1 x 1 conv without padding (stride_w 1 or 2), on the block's runs (x86_patch_quads): run i's
 * run_n[i] positions from plane byte run_at[i] on (every stride_w-th byte) to out + run_t[i], flipped */
static void AOTC_Q(x86_patch_runs)(const QT *AOTC_RESTRICT plane, int32_t sw, const int32_t *run_t, const int32_t *run_n,
                                   const int64_t *run_at, int32_t nrun, uint8_t *AOTC_RESTRICT out) {
    const __m128i flip = _mm_set1_epi8((char)AOTC_QOFFSET);
    int32_t i;
    for (i = 0; i < nrun; ++i) {
        const QT *xs = plane + run_at[i];
        uint8_t *run = out + run_t[i];
        const int32_t b = run_n[i];
        AOTC_Q(x86_flip_span)(xs, sw, 0, b, run, flip);
    }
}

/* The patch quads of qconv_patch_quads (the same layout: patch row r of position t at
 * [r / 4][t][r % 4]), for positions [p0, p0 + real) padded with the zero point to `width` (whole
 * lanes). A pointwise conv (1 x 1, stride 1, no padding, the output plane the input's) reads its
 * quads straight from four input planes; other convs gather each row as qconv_patch_row does, then
 * interleave four rows 16 positions at a time. */
static void AOTC_Q(x86_patch_quads)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t k, int32_t p0,
                                    int32_t real, int32_t width, int32_t kq, int pointwise,
                                    uint8_t *AOTC_RESTRICT quads) {
    const __m128i zero = _mm_set1_epi8((char)(QT)p->x_zero); /* as QT: flipped below with the rest */
    const __m128i flip = _mm_set1_epi8((char)AOTC_QOFFSET);
    const int32_t plane_in = p->in_h * p->in_w;
    uint8_t rows[4][AOTC_QCONV_PATCH_TILE];
    /* a 1 x 1 conv without padding at stride 1 or 2 (not pointwise: strided, or its output plane not the input's)
     * reads every channel's row at the same places: the block's runs (one an output row, position run_t, run_n
     * of them, from byte run_at of a plane) found once, not for each row by x86_patch_row (its divisions and
     * clipping took half of ResNet-18's 1 x 1 stride-2 convs) */
    int32_t run_t[AOTC_QCONV_PATCH_TILE + 1], run_n[AOTC_QCONV_PATCH_TILE + 1], nrun = 0;
    int64_t run_at[AOTC_QCONV_PATCH_TILE + 1];
    int32_t q, j, t;
    if (!pointwise && p->k_h == 1 && p->k_w == 1 && p->pad_top == 0 && p->pad_left == 0 && p->stride_w <= 2 &&
        real <= AOTC_QCONV_PATCH_TILE) {
        for (t = 0; t < real;) {
            const int32_t pos = p0 + t, oh = pos / p->out_w, first = pos % p->out_w;
            const int32_t last = first + (real - t) < p->out_w ? first + (real - t) : p->out_w;
            run_t[nrun] = t, run_n[nrun] = last - first;
            run_at[nrun] = (int64_t)oh * p->stride_h * p->in_w + (int64_t)first * p->stride_w;
            ++nrun;
            t += last - first;
        }
        AOTC_QX86_TRACE(runs);
    }
    for (q = 0; q < kq; ++q) {
        uint8_t *dst = quads + (int64_t)q * width * 4;
        if (pointwise) {
            const QT *src[4];
            for (j = 0; j < 4; ++j) src[j] = 4 * q + j < k ? xg + (int64_t)(4 * q + j) * plane_in + p0 : NULL;
            for (t = 0; t + 64 <= width; t += 64) { /* 64 positions a step (16 at a time took 8 % of the 1 x 1 convs) */
                const int32_t n = real - t;
                const __mmask64 m = n >= 64 ? ~(__mmask64)0 : n <= 0 ? 0 : ((__mmask64)1 << n) - 1;
                AOTC_QX86_TRACE(quads64);
                const __m512i zero64 = _mm512_set1_epi8((char)(QT)p->x_zero), flip64 = _mm512_set1_epi8((char)AOTC_QOFFSET);
                __m512i r[4], o0, o1, o2, o3, u0, u1, u2, u3;
                for (j = 0; j < 4; ++j) {
                    r[j] = src[j] != NULL ? _mm512_mask_loadu_epi8(zero64, m, (const void *)(src[j] + t)) : zero64;
                    r[j] = _mm512_xor_si512(r[j], flip64);
                }
                /* x86_interleave4 in each 128-bit lane (lane l: positions t + 16 l ..), then the lanes transposed so
                 * that each 16 positions' 64 bytes are contiguous */
                u0 = _mm512_unpacklo_epi8(r[0], r[1]), u1 = _mm512_unpackhi_epi8(r[0], r[1]);
                u2 = _mm512_unpacklo_epi8(r[2], r[3]), u3 = _mm512_unpackhi_epi8(r[2], r[3]);
                o0 = _mm512_unpacklo_epi16(u0, u2), o1 = _mm512_unpackhi_epi16(u0, u2);
                o2 = _mm512_unpacklo_epi16(u1, u3), o3 = _mm512_unpackhi_epi16(u1, u3);
                u0 = _mm512_shuffle_i64x2(o0, o1, 0x44), u1 = _mm512_shuffle_i64x2(o0, o1, 0xEE);
                u2 = _mm512_shuffle_i64x2(o2, o3, 0x44), u3 = _mm512_shuffle_i64x2(o2, o3, 0xEE);
                _mm512_storeu_si512((void *)(dst + (int64_t)t * 4), _mm512_shuffle_i64x2(u0, u2, 0x88));
                _mm512_storeu_si512((void *)(dst + (int64_t)t * 4 + 64), _mm512_shuffle_i64x2(u0, u2, 0xDD));
                _mm512_storeu_si512((void *)(dst + (int64_t)t * 4 + 128), _mm512_shuffle_i64x2(u1, u3, 0x88));
                _mm512_storeu_si512((void *)(dst + (int64_t)t * 4 + 192), _mm512_shuffle_i64x2(u1, u3, 0xDD));
            }
            for (; t < width; t += 16) {
                const __mmask16 m = AOTC_Q(x86_lanes)(real - t);
                __m128i r[4];
                for (j = 0; j < 4; ++j) {
                    r[j] = src[j] != NULL ? _mm_mask_loadu_epi8(zero, m, (const void *)(src[j] + t)) : zero;
                    r[j] = _mm_xor_si128(r[j], flip);
                }
                AOTC_Q(x86_interleave4)(r[0], r[1], r[2], r[3], dst + (int64_t)t * 4);
            }
        } else {
            const uint8_t z = (uint8_t)(p->x_zero + AOTC_QOFFSET);
            for (j = 0; j < 4; ++j) {
                if (4 * q + j < k && nrun > 0) {
                    AOTC_Q(x86_patch_runs)(xg + (int64_t)(4 * q + j) * plane_in, p->stride_w, run_t, run_n, run_at, nrun,
                                           rows[j]);
                    for (t = real; t < width; ++t) rows[j][t] = z;
                } else if (4 * q + j < k) {
                    AOTC_Q(x86_patch_row)(p, xg, 4 * q + j, p0, real, rows[j]);
                    for (t = real; t < width; ++t) rows[j][t] = z;
                } else {
                    memset(rows[j], z, (size_t)width);
                }
            }
            for (t = 0; t < width; t += 16) {
                AOTC_Q(x86_interleave4)(_mm_loadu_si128((const __m128i *)(const void *)(rows[0] + t)),
                                        _mm_loadu_si128((const __m128i *)(const void *)(rows[1] + t)),
                                        _mm_loadu_si128((const __m128i *)(const void *)(rows[2] + t)),
                                        _mm_loadu_si128((const __m128i *)(const void *)(rows[3] + t)),
                                        dst + (int64_t)t * 4);
            }
        }
    }
}

/* --- rows: a stride-1 conv on its input rows interleaved once ---------------------------------------------
 * qconv_dense makes each block's patch quads (4 consecutive taps) by permutes: a 3 x 3 conv's input made 9 times
 * over, and at 56 x 56 and 28 x 28, where ResNet-18's convs have 64 and 128 output channels to spread it over, that
 * cost 10-12 % against OpenVINO's blocked layout. Here (w_packed 2: the weights' quads 4 input channels at one tap,
 * aotc_quant.h aotc_qx86_rows_fit) the input rows of a range of output rows are copied once into the scratch, each
 * position's 4 channels of a quad in one word (x + AOTC_QOFFSET, padding columns the zero point, a row's right
 * padding the next row's left). Output position (oh, ow) is word oh wp + ow of that grid (wp words a row: the
 * positions past out_w are computed and never stored), so a quad row of 16 positions for tap (kh, kw) is the 64
 * bytes at word (oh + kh) wp + ow + kw: a plain load, three blocks of 16 positions 64 bytes apart, summed 8 output
 * channels at a time as x86_dense_dotb3x8 sums them. */

/* Buffer rows [0, nrows) at dst (wp words each) of input rows ih0 + r of the 4 channels from xq (plane bytes
 * apart): the zero point's word zw where the row is outside the image or before its pad_left words or past them
 * and the row's in_w positions, else a position's 4 bytes of QT plus AOTC_QOFFSET. */
static void AOTC_Q(x86_rows_fill)(const QT *AOTC_RESTRICT xq, int64_t plane, int32_t in_h, int32_t in_w, int32_t ih0,
                                  int32_t nrows, int32_t pl, int32_t wp, uint32_t zw, uint8_t *AOTC_RESTRICT dst) {
    const __m512i flip = _mm512_set1_epi8((char)AOTC_QOFFSET);
    const __m512i zv = _mm512_set1_epi32((int32_t)zw);
    int32_t r, j;
    for (r = 0; r < nrows; ++r, dst += (int64_t)wp * 4) {
        const int32_t ih = ih0 + r, inside = ih >= 0 && ih < in_h;
        const QT *src = xq + (int64_t)ih * in_w;
        for (j = 0; j < wp; j += 16) { /* the padding: all the row outside the image */
            if (inside && j >= pl && j + 16 <= pl + in_w) continue;
            _mm512_mask_storeu_epi32((void *)(dst + 4 * (int64_t)j), AOTC_Q(x86_lanes)(wp - j), zv);
        }
        if (!inside) continue;
        for (j = 0; j < in_w; j += 64) { /* 64 positions a step: the 4 rows' bytes interleaved in each 128-bit lane,
                                          * then the lanes put in order (16 shuffles where 16 at a time took 36) */
            const __mmask64 m = in_w - j >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (in_w - j)) - 1;
            const __m512i a = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, (const void *)(src + j)), flip);
            const __m512i b = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, (const void *)(src + plane + j)), flip);
            const __m512i c = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, (const void *)(src + 2 * plane + j)), flip);
            const __m512i d = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, (const void *)(src + 3 * plane + j)), flip);
            const __m512i ab0 = _mm512_unpacklo_epi8(a, b), ab1 = _mm512_unpackhi_epi8(a, b);
            const __m512i cd0 = _mm512_unpacklo_epi8(c, d), cd1 = _mm512_unpackhi_epi8(c, d);
            /* w0..w3: positions 16 l + 0-3, 4-7, 8-11, 12-15 of lane l */
            const __m512i w0 = _mm512_unpacklo_epi16(ab0, cd0), w1 = _mm512_unpackhi_epi16(ab0, cd0);
            const __m512i w2 = _mm512_unpacklo_epi16(ab1, cd1), w3 = _mm512_unpackhi_epi16(ab1, cd1);
            const __m512i t0 = _mm512_shuffle_i32x4(w0, w1, _MM_SHUFFLE(1, 0, 1, 0));
            const __m512i t1 = _mm512_shuffle_i32x4(w0, w1, _MM_SHUFFLE(3, 2, 3, 2));
            const __m512i t2 = _mm512_shuffle_i32x4(w2, w3, _MM_SHUFFLE(1, 0, 1, 0));
            const __m512i t3 = _mm512_shuffle_i32x4(w2, w3, _MM_SHUFFLE(3, 2, 3, 2));
            uint8_t *const o = dst + 4 * ((int64_t)pl + j);
            _mm512_mask_storeu_epi32((void *)o, AOTC_Q(x86_lanes)(in_w - j),
                                     _mm512_shuffle_i32x4(t0, t2, _MM_SHUFFLE(2, 0, 2, 0)));
            if (in_w - j > 16)
                _mm512_mask_storeu_epi32((void *)(o + 64), AOTC_Q(x86_lanes)(in_w - j - 16),
                                         _mm512_shuffle_i32x4(t0, t2, _MM_SHUFFLE(3, 1, 3, 1)));
            if (in_w - j > 32)
                _mm512_mask_storeu_epi32((void *)(o + 128), AOTC_Q(x86_lanes)(in_w - j - 32),
                                         _mm512_shuffle_i32x4(t1, t3, _MM_SHUFFLE(2, 0, 2, 0)));
            if (in_w - j > 48)
                _mm512_mask_storeu_epi32((void *)(o + 192), AOTC_Q(x86_lanes)(in_w - j - 48),
                                         _mm512_shuffle_i32x4(t1, t3, _MM_SHUFFLE(3, 1, 3, 1)));
        }
    }
}

/* block b's sums for output channel j of wq, b < nblk_ (named accumulators: arrays indexed in loops spilled) */
#define QX86_ROWS_STEP(j)                                                                                  \
    do {                                                                                                   \
        const __m512i wv_ = _mm512_set1_epi32(wq[j]);                                                      \
        a0##j = _mm512_dpbusd_epi32(a0##j, x0, wv_);                                                       \
        if (nblk_ > 1) a1##j = _mm512_dpbusd_epi32(a1##j, x1, wv_);                                        \
        if (nblk_ > 2) a2##j = _mm512_dpbusd_epi32(a2##j, x2, wv_);                                        \
    } while (0)
#define QX86_ROWS_ZERO(j) __m512i a0##j = _mm512_setzero_si512(), a1##j = a0##j, a2##j = a0##j
#define QX86_ROWS_OUT(j) (acc[j] = a0##j, acc[8 + j] = a1##j, acc[16 + j] = a2##j)
#define QX86_ROWS_EACH(M) M(0); M(1); M(2); M(3); M(4); M(5); M(6); M(7)

/* The sums of B (1 to 3) blocks of 16 grid positions from xb (64 bytes apart) for 8 output channels (words 0-7 of
 * wq's rows of 16, a row a quad: channel quad c, tap t at xb + c cstride + toff[t]); acc[8 b + j] block b's for
 * channel j (blocks past B: zeros). Not inlined, as x86_dense_dotb3x8: 24 accumulators and the three rows fill the
 * registers. Fewer than three blocks only at a range's end (a range of 28 rows of 57 words: 33 threes and 12
 * positions, one block's work rather than three's). */
#define QX86_ROWS_DOT(NAME, B)                                                                             \
    static __attribute__((noinline)) void NAME(const uint8_t *AOTC_RESTRICT xb, const int32_t *toff, int32_t taps, \
                                               int32_t nc4, int64_t cstride, const int32_t *AOTC_RESTRICT wq, \
                                               int64_t wnext, __m512i *acc) {                              \
        enum { nblk_ = B };                                                                                \
        QX86_ROWS_EACH(QX86_ROWS_ZERO);                                                                    \
        int32_t c, t;                                                                                      \
        for (c = 0; c < nc4; ++c, xb += cstride) {                                                         \
            for (t = 0; t < taps; ++t, wq += 16) {                                                         \
                const uint8_t *xp = xb + toff[t];                                                          \
                const __m512i x0 = _mm512_loadu_si512((const void *)xp);                                   \
                const __m512i x1 = B > 1 ? _mm512_loadu_si512((const void *)(xp + 64)) : x0;              \
                const __m512i x2 = B > 2 ? _mm512_loadu_si512((const void *)(xp + 128)) : x0;             \
                _mm_prefetch((const char *)(wq + wnext), _MM_HINT_T1); /* the next 16 channels' row */     \
                QX86_ROWS_EACH(QX86_ROWS_STEP);                                                            \
            }                                                                                              \
        }                                                                                                  \
        QX86_ROWS_EACH(QX86_ROWS_OUT);                                                                     \
    }
QX86_ROWS_DOT(AOTC_Q(x86_rows_dot3x8), 3)
QX86_ROWS_DOT(AOTC_Q(x86_rows_dot2x8), 2)
QX86_ROWS_DOT(AOTC_Q(x86_rows_dot1x8), 1)
#undef QX86_ROWS_DOT
#undef QX86_ROWS_EACH
#undef QX86_ROWS_OUT
#undef QX86_ROWS_ZERO
#undef QX86_ROWS_STEP

/* Where a block of 16 grid positions is stored: lanes m1 at off1 + l (its first output row's), lanes m2 at off2 + l
 * (the next row's); the lanes on the grid's columns past out_w or past the range in neither. */
typedef struct {
    int64_t off1, off2;
    __mmask16 m1, m2;
} AOTC_Q(x86_rseg);

/* The block from grid position gb of a range of rr output rows from row h0 (wp >= out_w >= 16: two rows at most) */
static inline AOTC_Q(x86_rseg) AOTC_Q(x86_rows_seg)(int32_t gb, int32_t wp, int32_t out_w, int32_t h0, int32_t rr) {
    const int32_t row = gb / wp, col = gb % wp, l2 = wp - col; /* l2: the lane of the next row's first position */
    AOTC_Q(x86_rseg) sg;
    sg.m1 = row < rr && col < out_w ? AOTC_Q(x86_lanes)(out_w - col) : 0;
    sg.m2 = row + 1 < rr && l2 < 16 ? (__mmask16)(AOTC_Q(x86_lanes)(l2 + out_w) & ~AOTC_Q(x86_lanes)(l2)) : 0;
    sg.off1 = (int64_t)(h0 + row) * out_w + col;
    sg.off2 = (int64_t)(h0 + row + 1) * out_w - l2;
    return sg;
}

/* qconv_rows's requantisation: x86_requant16_lanes's constants, and x86_requant64's where its clamp is whole numbers
 * (whole: 4 channels' 16 lanes packed into one vector, a float clamp and the zero point's add fewer a lane) */
typedef struct {
    __m512 lo, hi;
    __m512i zp, zp16, qlo, qhi;
    int whole, guard, clamp;
} AOTC_Q(x86_rq);

/* x86_rq for p's convs of kp patch bytes (once a conv: x86_requant_guard tests every channel) */
static AOTC_Q(x86_rq) AOTC_Q(x86_rq_init)(const aotc_qconv_params *p, int32_t kp) {
    AOTC_Q(x86_rq) rq;
    rq.lo = _mm512_set1_ps(p->y_lo), rq.hi = _mm512_set1_ps(p->y_hi), rq.zp = _mm512_set1_epi32(p->y_zero);
    /* the clamp in bytes where it is whole numbers inside QT's range, as qconv_patches_one tests it */
    rq.whole = p->y_lo >= (float)QT_MIN - 256.0f && p->y_hi <= (float)QT_MIN + 511.0f && p->y_lo <= p->y_hi &&
               p->y_lo == (float)(int32_t)p->y_lo && p->y_hi == (float)(int32_t)p->y_hi &&
               (int32_t)p->y_lo + p->y_zero >= QT_MIN && (int32_t)p->y_hi + p->y_zero <= QT_MIN + 255;
    rq.zp16 = _mm512_set1_epi16((int16_t)p->y_zero);
    rq.qlo = _mm512_set1_epi8((char)(rq.whole ? (int32_t)p->y_lo + p->y_zero : 0));
    rq.qhi = _mm512_set1_epi8((char)(rq.whole ? (int32_t)p->y_hi + p->y_zero : 0));
    rq.clamp = rq.whole && ((int32_t)p->y_lo + p->y_zero > QT_MIN || (int32_t)p->y_hi + p->y_zero < QT_MAX);
    rq.guard = rq.whole && AOTC_Q(x86_requant_guard)(p, kp);
    return rq;
}

/* Stores the 16 bytes b of channel c's block where sg says */
static inline void AOTC_Q(x86_rows_put)(QT *yc, const AOTC_Q(x86_rseg) *sg, __m128i b) {
    _mm_mask_storeu_epi8((void *)(yc + sg->off1), sg->m1, b);
    if (sg->m2) _mm_mask_storeu_epi8((void *)(yc + sg->off2), sg->m2, b);
}

/* Requantises a block's sums for channels [oc, oc + 8) (acc[j]) and stores them where sg says, the residual ADD's
 * (rv, res) in the stores where rv is not NULL. Where the clamp is whole numbers (rq->whole) and no ADD follows,
 * four channels at a time as x86_requant64 requantises one channel's 64 positions, the same bytes: the rounded
 * products' saturating packs, the zero point added in 16-bit words, the clamp in bytes where it is narrower than
 * QT's range (a ReLU after onnxruntime's quantizer: none), against x86_requant16_lanes's clamp in floats and the
 * zero point's add in 32-bit lanes (ResNet-18's 56 x 56 convs 3 % less). */
static inline void AOTC_Q(x86_rows_store)(const aotc_qconv_params *p, const __m512i *acc, int32_t oc,
                                          const AOTC_Q(x86_rseg) *sg, int64_t plane_out, const AOTC_Q(x86_rq) *rq,
                                          QT *yn, const AOTC_Q(x86_resid) *rv, const QT *resn) {
    const int32_t *const bias = p->bias;
    const float *const scale = p->scale;
    int32_t j, v;
    if (rv == NULL && rq->whole) {
        const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        for (j = 0; j < 8; j += 4) {
            QT *const yc = yn + (int64_t)(oc + j) * plane_out;
            __m512i r4[4], a, b, q;
            for (v = 0; v < 4; ++v) {
                const int32_t c = oc + j + v;
                const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[j + v], _mm512_set1_epi32(bias[c]))),
                                               _mm512_set1_ps(scale[c]));
                r4[v] = _mm512_cvtps_epi32(rq->guard ? _mm512_min_ps(f, rq->hi) : f);
            }
            a = _mm512_adds_epi16(_mm512_packs_epi32(r4[0], r4[1]), rq->zp16);
            b = _mm512_adds_epi16(_mm512_packs_epi32(r4[2], r4[3]), rq->zp16);
            q = _mm512_permutexvar_epi32(idx, QT_MIN < 0 ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b));
            if (rq->clamp)
                q = QT_MIN < 0 ? _mm512_max_epi8(_mm512_min_epi8(q, rq->qhi), rq->qlo)
                               : _mm512_max_epu8(_mm512_min_epu8(q, rq->qhi), rq->qlo);
            AOTC_Q(x86_rows_put)(yc, sg, _mm512_castsi512_si128(q));
            AOTC_Q(x86_rows_put)(yc + plane_out, sg, _mm512_extracti32x4_epi32(q, 1));
            AOTC_Q(x86_rows_put)(yc + 2 * plane_out, sg, _mm512_extracti32x4_epi32(q, 2));
            AOTC_Q(x86_rows_put)(yc + 3 * plane_out, sg, _mm512_extracti32x4_epi32(q, 3));
        }
        return;
    }
    for (j = 0; j < 8; ++j) {
        const int32_t c = oc + j;
        const __m512i q = AOTC_Q(x86_requant16_lanes)(_mm512_add_epi32(acc[j], _mm512_set1_epi32(bias[c])),
                                                      _mm512_set1_ps(scale[c]), rq->lo, rq->hi, rq->zp);
        __m128i b;
        if (rv == NULL) {
            b = _mm512_cvtepi32_epi8(q);
        } else {
            const QT *const rc = resn + (int64_t)c * plane_out;
            __m128i r = _mm_maskz_loadu_epi8(sg->m1, (const void *)(rc + sg->off1));
            if (sg->m2) r = _mm_mask_loadu_epi8(r, sg->m2, (const void *)(rc + sg->off2));
            b = AOTC_Q(x86_residual16b)(rv, q, r);
        }
        AOTC_Q(x86_rows_put)(yn + (int64_t)c * plane_out, sg, b);
    }
}

/* QLinearConv on interleaved input rows (above): 0 (nothing done) where the weights are not in its order (w_packed
 * 2) or the scratch (the patch block and p->work) does not hold a range of one output row (aotc_qx86_rows_fit).
 * One thread (the plan gives w_packed 2 only to convs with one lane). */
static int AOTC_Q(qconv_rows)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                              const int8_t *AOTC_RESTRICT w, QT *y, uint8_t *AOTC_RESTRICT scratch,
                              const aotc_qresidual_params *r, const QT *res) {
    int32_t rows = p->w_packed == 2 && scratch != NULL ? aotc_qx86_rows_fit(p, aotc_qconv_patches_scratch_bytes(p, tile)) : 0;
    const int32_t wp = aotc_qx86_rows_wp(p), nc4 = p->in_c / 4, taps = p->k_h * p->k_w, kq = nc4 * taps;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const uint32_t zw = (uint32_t)(uint8_t)((uint8_t)(QT)p->x_zero ^ AOTC_QOFFSET) * 0x01010101u;
    uint8_t *const buf = (uint8_t *)(((uintptr_t)scratch + (AOTC_QX86_ALIGN - 1)) & ~(uintptr_t)(AOTC_QX86_ALIGN - 1));
    AOTC_Q(x86_resid) rv;
    int32_t toff[256], n, h0, kh, kw, c4;
    int64_t cstride;
    AOTC_Q(x86_rq) rq;
    if (rows == 0) return 0;
    rq = AOTC_Q(x86_rq_init)(p, 4 * kq);
    rows = (p->out_h + (p->out_h + rows - 1) / rows - 1) / ((p->out_h + rows - 1) / rows); /* even ranges */
    cstride = (int64_t)(rows + p->k_h) * wp * 4;
    for (kh = 0; kh < p->k_h; ++kh)
        for (kw = 0; kw < p->k_w; ++kw) toff[kh * p->k_w + kw] = (kh * wp + kw) * 4;
    if (r != NULL) rv = AOTC_Q(x86_resid_init)(r);
    for (n = 0; n < p->batch; ++n) {
        const QT *const xn = x + (int64_t)n * p->in_c * plane_in;
        QT *const yn = y + (int64_t)n * p->out_c * plane_out;
        const QT *const resn = res != NULL ? res + (int64_t)n * p->out_c * plane_out : NULL;
        for (h0 = 0; h0 < p->out_h; h0 += rows) {
            const int32_t rr = p->out_h - h0 < rows ? p->out_h - h0 : rows, ng = rr * wp;
            int32_t g;
            for (c4 = 0; c4 < nc4; ++c4) /* the range's input rows and one more (its first words: a row's padding) */
                AOTC_Q(x86_rows_fill)(xn + (int64_t)4 * c4 * plane_in, plane_in, p->in_h, p->in_w, h0 - p->pad_top,
                                      rr + p->k_h, p->pad_left, wp, zw, buf + c4 * cstride);
            for (g = 0; g < ng; g += 48) {
                const int32_t nb = ng - g >= 48 ? 3 : (ng - g + 15) / 16; /* blocks holding positions of the range */
                AOTC_Q(x86_rseg) sg[3];
                int32_t t, oc, h;
                for (t = 0; t < 3; ++t) sg[t] = AOTC_Q(x86_rows_seg)(g + 16 * t, wp, p->out_w, h0, rr);
                for (oc = 0; oc < p->out_c; oc += 16) {
                    const int32_t *const wq = (const int32_t *)(const void *)(w + (int64_t)oc * kq * 4);
                    for (h = 0; h < 2; ++h) {
                        __m512i a3[24];
                        if (nb == 3) {
                            AOTC_Q(x86_rows_dot3x8)(buf + 4 * (int64_t)g, toff, taps, nc4, cstride, wq + 8 * h,
                                                    16 * (int64_t)kq, a3);
                            AOTC_QX86_TRACE(rows3);
                        } else if (nb == 2) {
                            AOTC_Q(x86_rows_dot2x8)(buf + 4 * (int64_t)g, toff, taps, nc4, cstride, wq + 8 * h,
                                                    16 * (int64_t)kq, a3);
                        } else {
                            AOTC_Q(x86_rows_dot1x8)(buf + 4 * (int64_t)g, toff, taps, nc4, cstride, wq + 8 * h,
                                                    16 * (int64_t)kq, a3);
                        }
                        for (t = 0; t < nb; ++t)
                            if (sg[t].m1 | sg[t].m2)
                                AOTC_Q(x86_rows_store)(p, a3 + 8 * t, oc + 8 * h, &sg[t], plane_out, &rq, yn,
                                                       r != NULL ? &rv : NULL, resn);
                    }
                }
            }
        }
    }
    return 1;
}

#if defined(__AVX512VBMI__)
/* AOTC_QX86_KG, AOTC_QX86_CACHE, aotc_qx86_wcache (the windows of the last blocks): in aotc_quant.h, with the
 * work they take from the plan's scratch */

static void AOTC_Q(x86_wcache_init)(aotc_qx86_wcache *cache) {
    int32_t e;
    for (e = 0; e < AOTC_QX86_CACHE; ++e) cache->col[e] = -1;
    cache->next = 0;
}

/* Kernel row and group g's 4 taps in the 16 lanes at output rows ohv, columns owv (the lanes live): each tap's input
 * offset (-1: the zero point) in off[j], and the least and greatest offset any lane up to each reads (INT32_MAX,
 * INT32_MIN: none), a running min and max over the lanes (4 steps of shifting by 1, 2, 4, 8 lanes). */
static inline __attribute__((always_inline)) void AOTC_Q(x86_window_offs)(
    const aotc_qconv_params *p, int32_t g, int32_t groups, __m512i ohv, __m512i owv, __mmask16 live, __m512i *off,
    __m512i *plo, __m512i *phi) {
    const __m512i none_lo = _mm512_set1_epi32(INT32_MAX), none_hi = _mm512_set1_epi32(INT32_MIN);
    const __m512i ih = _mm512_add_epi32(_mm512_mullo_epi32(ohv, _mm512_set1_epi32(p->stride_h)),
                                        _mm512_set1_epi32((g / groups) * p->dil_h - p->pad_top));
    const __m512i iw0 = _mm512_add_epi32(_mm512_mullo_epi32(owv, _mm512_set1_epi32(p->stride_w)),
                                         _mm512_set1_epi32((g % groups) * 4 * p->dil_w - p->pad_left));
    const __mmask16 row = live & _mm512_cmpge_epi32_mask(ih, _mm512_setzero_si512()) &
                          _mm512_cmplt_epi32_mask(ih, _mm512_set1_epi32(p->in_h));
    const __m512i rowoff = _mm512_mullo_epi32(ih, _mm512_set1_epi32(p->in_w));
    __m512i lo = none_lo, hi = none_hi;
    int32_t j;
    for (j = 0; j < 4; ++j) {
        const __m512i iw = _mm512_add_epi32(iw0, _mm512_set1_epi32(j * p->dil_w));
        const __mmask16 in = (g % groups) * 4 + j < p->k_w
                                 ? row & _mm512_cmpge_epi32_mask(iw, _mm512_setzero_si512()) &
                                       _mm512_cmplt_epi32_mask(iw, _mm512_set1_epi32(p->in_w))
                                 : 0;
        const __m512i o = _mm512_add_epi32(rowoff, iw);
        off[j] = _mm512_mask_mov_epi32(_mm512_set1_epi32(-1), in, o);
        lo = _mm512_mask_min_epi32(lo, in, lo, o);
        hi = _mm512_mask_max_epi32(hi, in, hi, o);
    }
    lo = _mm512_min_epi32(lo, _mm512_alignr_epi32(lo, none_lo, 15));
    hi = _mm512_max_epi32(hi, _mm512_alignr_epi32(hi, none_hi, 15));
    lo = _mm512_min_epi32(lo, _mm512_alignr_epi32(lo, none_lo, 14));
    hi = _mm512_max_epi32(hi, _mm512_alignr_epi32(hi, none_hi, 14));
    lo = _mm512_min_epi32(lo, _mm512_alignr_epi32(lo, none_lo, 12));
    hi = _mm512_max_epi32(hi, _mm512_alignr_epi32(hi, none_hi, 12));
    *plo = _mm512_min_epi32(lo, _mm512_alignr_epi32(lo, none_lo, 8));
    *phi = _mm512_max_epi32(hi, _mm512_alignr_epi32(hi, none_hi, 8));
}

/* The lanes of a block of output positions from pos0 (up to 16, spanning output rows while each
 * kernel row's group of 4 taps reads at most 64 bytes of a plane), and per kernel row and group the
 * window's first byte (base; 0 where no lane reads the image), its mask (the window as far as the
 * plane goes) and each lane's 4 byte indices into it (64: the zero point). The same for every input
 * channel of the plane's size. */
static int32_t AOTC_Q(x86_windows)(const aotc_qconv_params *p, int32_t pos0, int32_t plane_out,
                                   aotc_qx86_wcache *cache, int32_t *base, __mmask64 *mask, __m512i *iv) {
    const int32_t k_h = p->k_h, k_w = p->k_w, groups = (k_w + 3) / 4, kg = k_h * groups;
    const int32_t in_h = p->in_h, in_w = p->in_w, ow_n = p->out_w, plane_in = in_h * in_w;
    /* a block whose lanes' kernel rows all lie inside the image reads as the last one at the same
     * column did, some rows on: from the cache */
    const int32_t oh_first = pos0 / ow_n, oh_last = (pos0 + 15) / ow_n, col = pos0 % ow_n;
    const int32_t shift = oh_first * p->stride_h * in_w;
    const int rows_in = oh_first * p->stride_h - p->pad_top >= 0 &&
                        oh_last * p->stride_h - p->pad_top + (k_h - 1) * p->dil_h < in_h;
    uint8_t (*idx)[64];
    int32_t lanes, g, j, e;
    for (e = 0; rows_in && e < AOTC_QX86_CACHE; ++e) {
        if (cache->col[e] == col && cache->lanes[e] <= plane_out - pos0) {
            for (g = 0; g < kg; ++g) {
                const int32_t b = cache->base[e][g], left = plane_in - (b == INT32_MIN ? 0 : b + shift);
                base[g] = b == INT32_MIN ? 0 : b + shift;
                mask[g] = b == INT32_MIN ? 0 : left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
                iv[g] = _mm512_loadu_si512((const void *)cache->idx[e][g]);
            }
            return cache->lanes[e];
        }
    }
    e = cache->next, cache->next = (cache->next + 1) % AOTC_QX86_CACHE;
    cache->col[e] = rows_in ? col : -1; /* (reused only where its lanes end by plane_out: a range's end) */
    idx = cache->idx[e];
    { /* the 16 lanes at once (a lane at a time, with a branch a tap, took 3.8 % of a QDQ MobileNetV2) */
        const __m512i ident = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m512i t = _mm512_add_epi32(_mm512_set1_epi32(col), ident); /* col + lane < ow_n + 16: exact */
        const __m512i q = _mm512_cvttps_epi32(_mm512_div_ps(_mm512_cvtepi32_ps(t), _mm512_set1_ps((float)ow_n)));
        const __m512i ohv = _mm512_add_epi32(_mm512_set1_epi32(oh_first), q);
        const __m512i owv = _mm512_sub_epi32(t, _mm512_mullo_epi32(q, _mm512_set1_epi32(ow_n)));
        const __mmask16 live = AOTC_Q(x86_lanes)(plane_out - pos0 < 16 ? plane_out - pos0 : 16);
        __m512i off[AOTC_QX86_KG][4], plo[AOTC_QX86_KG], phi[AOTC_QX86_KG];
        __mmask16 ok = live;
        for (g = 0; g < kg; ++g) {
            AOTC_Q(x86_window_offs)(p, g, groups, ohv, owv, live, off[g], &plo[g], &phi[g]);
            ok &= _mm512_cmpeq_epi32_mask(phi[g], _mm512_set1_epi32(INT32_MIN)) |
                  _mm512_cmplt_epi32_mask(_mm512_sub_epi32(phi[g], plo[g]), _mm512_set1_epi32(64));
        }
        lanes = __builtin_ctz(~(uint32_t)ok); /* the lanes while the windows fit (a prefix: lo, hi are running) */
        for (g = 0; g < kg; ++g) {
            const __m512i last = _mm512_set1_epi32(lanes > 0 ? lanes - 1 : 0);
            const int32_t l = lanes > 0 ? _mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_permutexvar_epi32(last, plo[g])))
                                        : INT32_MAX;
            const int32_t h = lanes > 0 ? _mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_permutexvar_epi32(last, phi[g])))
                                        : INT32_MIN;
            const int32_t b = h == INT32_MIN ? 0 : l, left = plane_in - b;
            const __mmask16 kept = AOTC_Q(x86_lanes)(lanes);
            __m512i word = _mm512_setzero_si512();
            for (j = 0; j < 4; ++j) { /* byte j of lane i's word: tap j's offset from b, 64 (the zero point) if none */
                const __mmask16 in = kept & _mm512_cmpge_epi32_mask(off[g][j], _mm512_setzero_si512());
                const __m512i v = _mm512_mask_sub_epi32(_mm512_set1_epi32(64), in, off[g][j], _mm512_set1_epi32(b));
                word = _mm512_or_si512(word, _mm512_slli_epi32(v, 8 * j));
            }
            _mm512_storeu_si512((void *)idx[g], word);
            base[g] = b;
            mask[g] = h == INT32_MIN ? 0 : left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
            iv[g] = word;
            cache->base[e][g] = h == INT32_MIN ? INT32_MIN : b - shift;
        }
    }
    cache->lanes[e] = lanes;
    return lanes;
}

/* Rows of weights [c0, c0 + cn) (stored in rows of kp bytes, taps in (input channel, kernel row,
 * column) order) as rows of 4 kq bytes in quads of (input channel, kernel row, 4 taps), the taps past
 * k_w 0: 16 quads (64 bytes) at a time by one vpermb of the row's bytes where the quads of 16 are
 * whole kernel rows (groups dividing 16), else a byte at a time. */
static void AOTC_Q(x86_windows_weights)(const int8_t *AOTC_RESTRICT w, int32_t kp, int32_t c0, int32_t cn, int32_t kq,
                                        int32_t groups, int32_t k_w, int8_t *AOTC_RESTRICT wq) {
    const int32_t kp2 = 4 * kq, k = kq / groups * k_w;
    uint8_t idx[64];
    __mmask64 keep = 0;
    int32_t c, q, j;
    for (j = 0; j < 64; ++j) { /* byte j of a 16-quad chunk: tap (j / 4 % groups) 4 + j % 4 of row j / 4 / groups */
        const int32_t tap = (j / 4 % groups) * 4 + j % 4;
        idx[j] = (uint8_t)(tap < k_w ? (j / 4 / groups) * k_w + tap : 0);
        if (tap < k_w) keep |= (__mmask64)1 << j;
    }
    for (c = 0; c < cn; ++c) {
        const int8_t *src = w + (int64_t)(c0 + c) * kp;
        int8_t *dst = wq + (int64_t)c * kp2;
        q = 0;
        if (16 % groups == 0) {
            const __m512i iv = _mm512_loadu_si512((const void *)idx);
            for (; q + 16 <= kq; q += 16) {
                const int32_t at = q / groups * k_w, left = k - at;
                const __mmask64 m = left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
                const __m512i v = _mm512_maskz_loadu_epi8(m, (const void *)(src + at));
                _mm512_storeu_si512((void *)(dst + 4 * q), _mm512_maskz_permutexvar_epi8(keep, iv, v));
            }
        }
        for (; q < kq; ++q) {
            for (j = 0; j < 4; ++j) {
                const int32_t tap = (q % groups) * 4 + j;
                dst[4 * q + j] = tap < k_w ? src[q / groups * k_w + tap] : 0;
            }
        }
    }
}

/* x86_dot8 over the quad rows of one block made as they are summed: per input channel and kernel
 * row / group, the window at base (mask) picked by the indices iv (x86_windows). */
static inline void AOTC_Q(x86_dot8_windows)(const QT *AOTC_RESTRICT xg, int32_t plane_in, int32_t cg, int32_t kg,
                                            const int32_t *base, const __mmask64 *mask, const __m512i *iv,
                                            __m512i zero, const int8_t *const *w, __m512i *acc) {
    const __m512i flip = _mm512_set1_epi8((char)AOTC_QOFFSET);
    const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3], *w4 = w[4], *w5 = w[5], *w6 = w[6], *w7 = w[7];
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    int32_t ic, g, q = 0;
    for (ic = 0; ic < cg; ++ic) {
        const QT *plane = xg + (int64_t)ic * plane_in;
        for (g = 0; g < kg; ++g, q += 4) {
            const __m512i win = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask[g], (const void *)(plane + base[g])), flip);
            const __m512i xv = _mm512_permutex2var_epi8(win, iv[g], zero);
            QX86_DPBUSD8(xv, q);
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = a4, acc[5] = a5, acc[6] = a6, acc[7] = a7;
}

/* QLinearConv on patches with VNNI and VBMI, the patch's rows taken in quads of one input channel's
 * kernel row (4 taps of it: k_w padded to whole groups of 4 with the zero point), so each quad row of
 * a block of positions is one vpermt2b of a window of the input plane (x86_windows, made once per
 * block for all channels) rather than a gather. The weights, stored in rows of kp bytes in
 * (channel, kernel row, tap) order, are re-ordered in the work block (aotc_qconv_windows_work_bytes,
 * with the window cache) to match, as many output channels at a time as AOTC_QX86_WBUF holds; the patch
 * block holds as many blocks as its bytes allow. Where the
 * sums use the weights' zero points, the folded bias's kp zp w_zero becomes kp' zp w_zero (kp' the
 * padded length). Where the scratch holds no block's patch, each block's quad rows are made as they
 * are summed, once per 8 output channels (x86_dot8_windows). 0 (nothing done) where the weights do not
 * fit AOTC_QX86_WBUF, a small scratch meets weight zero points, or the work block is not given. */
static int AOTC_Q(qconv_windows)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                                 const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k_h = p->k_h, k_w = p->k_w;
    const int32_t groups = (k_w + 3) / 4, kg = k_h * groups, kq = cg * kg, kp2 = kq * 4;
    const int32_t kp = (cg * k_h * k_w + 3) / 4 * 4, plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const int32_t slots = (tile + 15) / 16 * 16 * kp / (64 * kq); /* blocks of 16 lanes the scratch holds */
    const int32_t zpx = p->x_zero + AOTC_QOFFSET;
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero), ones = _mm512_set1_epi8(1);
    const __m512i flip = _mm512_set1_epi8((char)AOTC_QOFFSET), zero = _mm512_set1_epi8((char)(uint8_t)zpx);
    /* the work block: the window cache, the blocks' offsets and patch sums, then the re-ordered weights */
    int32_t chunk_kp2; /* (kp2) */
    const int32_t chunk = aotc_qx86_windows_chunk(p, tile, &chunk_kp2);
    uint8_t *const work = aotc_qconv_work(p, scratch, aotc_qconv_patch_bytes(p, tile),
                                          aotc_qconv_windows_work_bytes(p, tile), AOTC_QX86_ALIGN);
    aotc_qx86_wcache *const cache_p = (aotc_qx86_wcache *)(void *)work;
    int32_t (*const base)[AOTC_QX86_KG] = (int32_t (*)[AOTC_QX86_KG])(void *)(work + AOTC_QX86_WCACHE_BYTES);
    int32_t (*const sums)[16] = (int32_t (*)[16])(void *)(work + AOTC_QX86_WCACHE_BYTES + 4 * 16 * AOTC_QX86_KG);
    int8_t *const wbuf = (int8_t *)(work + AOTC_QX86_WCACHE_BYTES + 4 * (16 * AOTC_QX86_KG + 16 * 16));
    int32_t lanes[16], start[16];
    __mmask64 mask[AOTC_QX86_KG];
    __m512i iv[AOTC_QX86_KG];
    int32_t n, g, c0, oc, p0, b, nb, j, q, ic;
    if (chunk == 0 || work == NULL) return 0;
    AOTC_Q(x86_wcache_init)(cache_p);
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            QT *yn = y + (int64_t)n * p->out_c * plane_out;
            for (c0 = g * mg; c0 < (g + 1) * mg; c0 += chunk) {
                const int32_t cn = (g + 1) * mg - c0 < chunk ? (g + 1) * mg - c0 : chunk;
                AOTC_Q(x86_windows_weights)(w, kp, c0, cn, kq, groups, k_w, wbuf);
                for (p0 = 0; p0 < plane_out;) {
                    if (slots < 1) { /* no scratch for a block's patch: its quad rows made as they are summed */
                        const int32_t nl = AOTC_Q(x86_windows)(p, p0, plane_out, cache_p, base[0], mask, iv);
                        for (oc = 0; oc < cn; oc += 8) {
                            const int32_t nc = cn - oc < 8 ? cn - oc : 8;
                            const int8_t *wr[8];
                            __m512i a[8];
                            for (j = 0; j < 8; ++j) wr[j] = wbuf + (int64_t)(oc + (j < nc ? j : nc - 1)) * kp2;
                            AOTC_Q(x86_dot8_windows)(xg, plane_in, cg, kg, base[0], mask, iv, zero, wr, a);
                            for (j = 0; j < nc; ++j) {
                                const int32_t c = c0 + oc + j;
                                _mm_mask_storeu_epi8((void *)(yn + (int64_t)c * plane_out + p0), AOTC_Q(x86_lanes)(nl),
                                                     AOTC_Q(x86_requant16)(_mm512_add_epi32(a[j], _mm512_set1_epi32(p->bias[c])),
                                                                           _mm512_set1_ps(p->scale[c]), lo, hi, zp));
                            }
                        }
                        p0 += nl;
                        continue;
                    }
                    for (nb = 0; nb < slots && p0 < plane_out; ++nb) { /* the blocks' patches */
                        uint8_t *dst = scratch + (int64_t)nb * 64;
                        lanes[nb] = AOTC_Q(x86_windows)(p, p0, plane_out, cache_p, base[nb], mask, iv);
                        start[nb] = p0;
                        for (ic = 0; ic < cg; ++ic) {
                            const QT *plane = xg + (int64_t)ic * plane_in;
                            for (q = 0; q < kg; ++q) {
                                const __m512i win = _mm512_xor_si512(
                                    _mm512_maskz_loadu_epi8(mask[q], (const void *)(plane + base[nb][q])), flip);
                                _mm512_storeu_si512((void *)(dst + ((int64_t)ic * kg + q) * slots * 64),
                                                    _mm512_permutex2var_epi8(win, iv[q], zero));
                            }
                        }
                        if (p->w_zero_any) {
                            __m512i s = _mm512_setzero_si512();
                            for (q = 0; q < kq; ++q) {
                                s = _mm512_dpbusd_epi32(s, _mm512_loadu_si512((const void *)(dst + (int64_t)q * slots * 64)), ones);
                            }
                            _mm512_storeu_si512((void *)sums[nb], s);
                        }
                        p0 += lanes[nb];
                    }
                    for (oc = 0; oc < cn; oc += 8) {
                        const int32_t nc = cn - oc < 8 ? cn - oc : 8;
                        const int8_t *wr[8];
                        for (j = 0; j < 8; ++j) wr[j] = wbuf + (int64_t)(oc + (j < nc ? j : nc - 1)) * kp2;
                        for (b = 0; b < nb; ++b) {
                            __m512i a[8];
                            AOTC_Q(x86_dot8)(scratch + (int64_t)b * 64, (int64_t)slots * 64, wr, kq, 4, a);
                            for (j = 0; j < nc; ++j) {
                                const int32_t c = c0 + oc + j;
                                __m512i v = _mm512_add_epi32(a[j], _mm512_set1_epi32(p->bias[c]));
                                if (p->w_zero_any) {
                                    v = _mm512_add_epi32(v, _mm512_set1_epi32((kp2 - kp) * zpx * p->w_zero[c]));
                                    v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(p->w_zero[c]),
                                                                               _mm512_loadu_si512((const void *)sums[b])));
                                }
                                _mm_mask_storeu_epi8((void *)(yn + (int64_t)c * plane_out + start[b]), AOTC_Q(x86_lanes)(lanes[b]),
                                                     AOTC_Q(x86_requant16)(v, _mm512_set1_ps(p->scale[c]), lo, hi, zp));
                            }
                        }
                    }
                }
            }
        }
    }
    return 1;
}

/* --- dense windows: the patch's taps in their stored order ------------------------------------
 * qconv_windows pads each kernel row to whole groups of 4 taps (a 3 x 3 kernel: 3 taps of 4, a
 * quarter of the dot products spent on the zero point). Here a patch quad is 4 consecutive taps of
 * the weights' own (input channel, kernel row, column) order, so the kp bytes of a weight row are its
 * quads (nothing wasted but the last quad's tail). With k_w >= 3 a quad spans at most two kernel rows
 * (A and the next one, B, which may be the next input channel's first): one vpermt2b of A's and B's
 * 64-byte windows makes the quad row of 16 output positions (and where the block has padding, a
 * vpternlogd puts the zero point in the padding's bytes). The index
 * vectors repeat with the quad's place in the kernel: P = T / gcd(T, 4) patterns (T = k_h k_w taps a
 * channel; 9 for 3 x 3, spanning 4 input channels), made once per block of 16 positions and kept
 * (by column where the block's kernel rows all lie inside the image, else by position) while the
 * output channels are taken in passes. A register block is 16 (or 8) output channels x 16 positions;
 * each pass's weights are re-ordered in the work block (aotc_qconv_dense_work_bytes: AOTC_QX86_DBUF bytes
 * at most, with the kept blocks) to quad-major rows of 16 (8) channels' words, so the 16 dot products of a
 * quad row take their weights at one pointer. The patch block is not needed (where it is given, with packed
 * weights, the blocks' quad rows are made once into it). AOTC_QX86_PAT, AOTC_QX86_KH, AOTC_QX86_DBUF,
 * AOTC_QX86_DKEEP, AOTC_QX86_DHEAD: in aotc_quant.h. */

/* Per pattern: the kernel rows of A and B and their input channels from the pattern's first. */
typedef struct {
    int32_t kh_a, kh_b, ic_a, ic_b;
} AOTC_Q(x86_dpat);

/* One block of output positions (x86_dense_block): its key in the cache, its lanes, whether some
 * lane's tap falls on the padding, per kernel row the first byte of its window in a plane (lo) and
 * the window's span (-1: no lane reads the image there); AOTC_QX86_DHEAD bytes from its start, the
 * patterns' index vectors, then their keep vectors (0 where a tap is padding: the zero point). */
typedef struct {
    int32_t key, lanes, pad, lo[AOTC_QX86_KH], span[AOTC_QX86_KH];
} AOTC_Q(x86_dblock);

/* A pattern's windows in one block: offsets from the super-period's first plane, and load masks. */
typedef struct {
    int64_t offa, offb;
    __mmask64 ma, mb;
} AOTC_Q(x86_dseg);

/* The n low bits (0 <= n <= 64) of a byte mask. */
static inline __mmask64 AOTC_Q(x86_bytes)(int32_t n) {
    return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

/* The block of output positions from pos0: as many lanes (up to 16) as keep each kernel row's window
 * within 64 bytes, the windows, and the index and keep vectors iv of the npat patterns (taps
 * tap[p][j], j < 4: the tap in its channel's kernel, 128 added where it comes from B). */
static void AOTC_Q(x86_dense_block)(const aotc_qconv_params *p, int32_t pos0, int32_t plane_out, int32_t npat,
                                    const uint8_t (*tap)[4], AOTC_Q(x86_dblock) *bk, uint8_t *iv) {
    const int32_t k_h = p->k_h, k_w = p->k_w, in_h = p->in_h, in_w = p->in_w, ow_n = p->out_w;
    int32_t ohs[16], ows[16], lanes = plane_out - pos0 < 16 ? plane_out - pos0 : 16;
    int32_t l, kh, kw, oh = pos0 / ow_n, ow = pos0 % ow_n, fits;
    __m128i v[64]; /* per tap, the lanes' byte offsets into its row's window */
    __m512i off[64];
    __mmask16 in[64];
    for (l = 0; l < 16; ++l) {
        ohs[l] = oh, ows[l] = ow;
        if (++ow == ow_n) ow = 0, ++oh;
    }
    {
        const __m512i voh = _mm512_loadu_si512((const void *)ohs), vow = _mm512_loadu_si512((const void *)ows);
        do {
            const __mmask16 lm = (__mmask16)((1u << lanes) - 1u);
            fits = 1;
            for (kh = 0; kh < k_h; ++kh) {
                const __m512i ih = _mm512_add_epi32(_mm512_mullo_epi32(voh, _mm512_set1_epi32(p->stride_h)),
                                                    _mm512_set1_epi32(kh * p->dil_h - p->pad_top));
                const __mmask16 rm = _mm512_mask_cmpge_epi32_mask(lm, ih, _mm512_setzero_si512()) &
                                     _mm512_cmplt_epi32_mask(ih, _mm512_set1_epi32(in_h));
                const __m512i row = _mm512_mullo_epi32(ih, _mm512_set1_epi32(in_w));
                __m512i lo = _mm512_set1_epi32(INT32_MAX), hi = _mm512_set1_epi32(INT32_MIN);
                int32_t a, b;
                for (kw = 0; kw < k_w; ++kw) {
                    const int32_t t = kh * k_w + kw;
                    const __m512i iw = _mm512_add_epi32(_mm512_mullo_epi32(vow, _mm512_set1_epi32(p->stride_w)),
                                                        _mm512_set1_epi32(kw * p->dil_w - p->pad_left));
                    in[t] = rm & _mm512_cmpge_epi32_mask(iw, _mm512_setzero_si512()) &
                            _mm512_cmplt_epi32_mask(iw, _mm512_set1_epi32(in_w));
                    off[t] = _mm512_add_epi32(row, iw);
                    lo = _mm512_mask_min_epi32(lo, in[t], lo, off[t]);
                    hi = _mm512_mask_max_epi32(hi, in[t], hi, off[t]);
                }
                a = _mm512_reduce_min_epi32(lo), b = _mm512_reduce_max_epi32(hi);
                bk->lo[kh] = b == INT32_MIN ? 0 : a;
                bk->span[kh] = b == INT32_MIN ? -1 : b - a;
                fits &= b == INT32_MIN || b - a <= 63;
            }
            if (!fits) lanes = pos0 % ow_n + lanes > ow_n ? ow_n - pos0 % ow_n : lanes / 2; /* to the row's end, else half */
        } while (!fits);
    }
    bk->lanes = lanes;
    bk->pad = 0;
    for (kh = 0; kh < k_h; ++kh) {
        const __m512i lo = _mm512_set1_epi32(bk->lo[kh]), pad = _mm512_set1_epi32(63);
        for (kw = 0; kw < k_w; ++kw) {
            const int32_t t = kh * k_w + kw;
            v[t] = _mm512_cvtepi32_epi8(_mm512_mask_sub_epi32(pad, in[t], off[t], lo));
            in[t] |= (__mmask16)~((1u << lanes) - 1u); /* lanes past the block: kept (never stored) */
            bk->pad |= in[t] != 0xFFFFu;
        }
    }
    for (l = 0; l < npat; ++l) {
        const __m128i b64 = _mm_set1_epi8(64);
        __m128i r[4], k[4];
        int32_t j;
        for (j = 0; j < 4; ++j) {
            r[j] = tap[l][j] & 128 ? _mm_add_epi8(v[tap[l][j] & 127], b64) : v[tap[l][j] & 127];
            k[j] = _mm_movm_epi8(in[tap[l][j] & 127]);
        }
        AOTC_Q(x86_interleave4)(r[0], r[1], r[2], r[3], iv + (int64_t)l * 64);
        AOTC_Q(x86_interleave4)(k[0], k[1], k[2], k[3], iv + (int64_t)(npat + l) * 64);
    }
}

/* The block from pos0, kept in the cache (entries of `stride` bytes, `count` of them; the slot after
 * them is for a block made again, on a full cache's turn): by column where its kernel rows all lie
 * inside the image (a block at the same column some rows on reads as it did, from shift bytes on), else
 * by position. A block kept by column serves a later position only where its lanes end by plane_out (the
 * plane's, or a split conv's range's, end: a block made at a range's end may have fewer lanes than 16). */
static const AOTC_Q(x86_dblock) *AOTC_Q(x86_dense_get)(const aotc_qconv_params *p, int32_t pos0, int32_t plane_out,
                                                      int32_t npat, const uint8_t (*tap)[4], uint8_t *cache,
                                                      int32_t stride, int32_t count, int32_t *next, int32_t *shift) {
    const int32_t ow_n = p->out_w, oh_first = pos0 / ow_n, oh_last = (pos0 + 15) / ow_n;
    const int rows_in = oh_first * p->stride_h - p->pad_top >= 0 &&
                        oh_last * p->stride_h - p->pad_top + (p->k_h - 1) * p->dil_h < p->in_h;
    const int32_t col = pos0 % ow_n, pkey = -1 - pos0, key = rows_in ? col : pkey;
    AOTC_Q(x86_dblock) *bk;
    int32_t e, kh;
    for (e = 0; e < count; ++e) {
        bk = (AOTC_Q(x86_dblock) *)(void *)(cache + (int64_t)e * stride);
        if (bk->key == pkey) {
            *shift = 0;
            return bk;
        }
        if (rows_in && bk->key == col && bk->lanes <= plane_out - pos0) {
            *shift = oh_first * p->stride_h * p->in_w;
            return bk;
        }
    }
    *shift = rows_in ? oh_first * p->stride_h * p->in_w : 0;
    e = *next, *next = (*next + 1) % count;
    bk = (AOTC_Q(x86_dblock) *)(void *)(cache + (int64_t)e * stride);
    AOTC_Q(x86_dense_block)(p, pos0, plane_out, npat, tap, bk, (uint8_t *)bk + AOTC_QX86_DHEAD);
    for (kh = 0; kh < p->k_h; ++kh) bk->lo[kh] -= *shift;
    bk->key = key;
    return bk;
}

/* Rows r[0..16) of 16 words each transposed: r[c] becomes word c of every row. */
static inline void AOTC_Q(x86_transpose16)(__m512i *r) {
    __m512i u[16];
    int32_t g, k;
    for (g = 0; g < 4; ++g) { /* u[4 g + k]: in each 128-bit lane L, rows 4 g .. 4 g + 3 at word 4 L + k */
        const __m512i t0 = _mm512_unpacklo_epi32(r[4 * g], r[4 * g + 1]), t1 = _mm512_unpackhi_epi32(r[4 * g], r[4 * g + 1]);
        const __m512i t2 = _mm512_unpacklo_epi32(r[4 * g + 2], r[4 * g + 3]), t3 = _mm512_unpackhi_epi32(r[4 * g + 2], r[4 * g + 3]);
        u[4 * g] = _mm512_unpacklo_epi64(t0, t2), u[4 * g + 1] = _mm512_unpackhi_epi64(t0, t2);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t1, t3), u[4 * g + 3] = _mm512_unpackhi_epi64(t1, t3);
    }
    for (k = 0; k < 4; ++k) {
        const __m512i v01 = _mm512_shuffle_i32x4(u[k], u[4 + k], _MM_SHUFFLE(2, 0, 2, 0));
        const __m512i w01 = _mm512_shuffle_i32x4(u[k], u[4 + k], _MM_SHUFFLE(3, 1, 3, 1));
        const __m512i v23 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(2, 0, 2, 0));
        const __m512i w23 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(3, 1, 3, 1));
        r[k] = _mm512_shuffle_i32x4(v01, v23, _MM_SHUFFLE(2, 0, 2, 0));
        r[8 + k] = _mm512_shuffle_i32x4(v01, v23, _MM_SHUFFLE(3, 1, 3, 1));
        r[4 + k] = _mm512_shuffle_i32x4(w01, w23, _MM_SHUFFLE(2, 0, 2, 0));
        r[12 + k] = _mm512_shuffle_i32x4(w01, w23, _MM_SHUFFLE(3, 1, 3, 1));
    }
}

/* Weight rows [0, nr) (nr <= n; kp = 4 kq bytes apart from w) as kq rows of n (16 or 8) words, quad q
 * of every channel in row q (channels past nr: 0). */
static void AOTC_Q(x86_dense_weights)(const int8_t *AOTC_RESTRICT w, int64_t kp, int32_t nr, int32_t n, int32_t kq,
                                      int32_t *AOTC_RESTRICT out) {
    int32_t q0, j;
    for (q0 = 0; q0 < kq; q0 += 16) {
        const __mmask16 m = AOTC_Q(x86_lanes)(kq - q0);
        __m512i r[16];
        for (j = 0; j < 16; ++j) { /* (masked loads and stores only at the rows' ends: they cost more) */
            const void *src = (const void *)(w + j * kp + 4 * (int64_t)q0);
            r[j] = j >= nr ? _mm512_setzero_si512() : m == 0xFFFFu ? _mm512_loadu_si512(src) : _mm512_maskz_loadu_epi32(m, src);
        }
        AOTC_Q(x86_transpose16)(r);
        for (j = 0; j < 16 && q0 + j < kq; ++j) {
            if (n == 16) _mm512_storeu_si512((void *)(out + (int64_t)(q0 + j) * n), r[j]);
            else _mm256_storeu_si256((__m256i *)(void *)(out + (int64_t)(q0 + j) * n), _mm512_castsi512_si256(r[j]));
        }
    }
}

/* a[j] += quad row xv times the weight words wq[j], j < 8, on vectors of V bits (512 or 256) */
#define QX86_WORDS8(V, a, xv, wq)                                                                          \
    do {                                                                                                   \
        a[0] = _mm##V##_dpbusd_epi32(a[0], (xv), _mm##V##_set1_epi32((wq)[0]));                            \
        a[1] = _mm##V##_dpbusd_epi32(a[1], (xv), _mm##V##_set1_epi32((wq)[1]));                            \
        a[2] = _mm##V##_dpbusd_epi32(a[2], (xv), _mm##V##_set1_epi32((wq)[2]));                            \
        a[3] = _mm##V##_dpbusd_epi32(a[3], (xv), _mm##V##_set1_epi32((wq)[3]));                            \
        a[4] = _mm##V##_dpbusd_epi32(a[4], (xv), _mm##V##_set1_epi32((wq)[4]));                            \
        a[5] = _mm##V##_dpbusd_epi32(a[5], (xv), _mm##V##_set1_epi32((wq)[5]));                            \
        a[6] = _mm##V##_dpbusd_epi32(a[6], (xv), _mm##V##_set1_epi32((wq)[6]));                            \
        a[7] = _mm##V##_dpbusd_epi32(a[7], (xv), _mm##V##_set1_epi32((wq)[7]));                            \
    } while (0)
#define QX86_CUT512(v) (v)
#define QX86_CUT256(v) _mm512_castsi512_si256(v)
#define QX86_WIDEN512(v) (v)
#define QX86_WIDEN256(v) _mm512_inserti64x4(_mm512_setzero_si512(), (v), 0)

/* One quad row: A's and B's windows picked by the pattern's indices, the padding's bytes replaced by
 * the zero point where the block has padding (keep: 0 there; vpternlogd's select). */
#define QX86_DENSE_QUAD(xa, xb, pp)                                                                        \
    _mm512_xor_si512(QX86_DENSE_KEEP(_mm512_permutex2var_epi8(                                             \
                         (xa), _mm512_load_si512((const void *)(iv + 64 * (pp))), (xb)), (pp)), flip)
#define QX86_DENSE_KEEP(v, pp)                                                                             \
    (pad ? _mm512_ternarylogic_epi32((v), zfill, _mm512_load_si512((const void *)(keep + 64 * (pp))), 0xE4) : (v))

#ifndef QX86_HOT
/* the dense conv's dot loops: always inlined, so that their accumulators stay in registers (two
 * callers of qconv_dense, the plain conv and the one with a residual ADD, would make gcc call them) */
#define QX86_HOT __attribute__((always_inline))
#endif

/* The sums of one block over the kq quads for N (16 or 8) output channels (weights wq: kq rows of N
 * words) on vectors of V bits (256: a block of at most 8 lanes, at twice vpdpbusd's rate), and in
 * *sums the patch sums (the quads against bytes of 1) when wsum. Quads before qfast read no channel
 * whose 64-byte windows would pass the group's planes, so their windows are loaded whole (masked
 * loads cost more); quads from qsafe on have no row B (past the group's last channel). iv: the
 * block's index vectors, then its keep vectors. ST: the quad rows also stored at qs, 64 bytes a row (as
 * x86_dense_quads makes them: the first block of channels summed while they are made, the permutes beside
 * the vpdpbusd, not a pass of their own). */
#define QX86_DENSE_DOT(NAME, N, V, ST)                                                                     \
    static inline QX86_HOT void NAME(const QT *AOTC_RESTRICT xg, int64_t step, const AOTC_Q(x86_dseg) *seg, \
                            const uint8_t *iv, int pad, int32_t npat, int32_t kq, int32_t qfast,           \
                            int32_t qsafe, const int32_t *AOTC_RESTRICT wq, __m512i zfill, int wsum,       \
                            __m512i *acc, __m512i *sums, uint8_t *AOTC_RESTRICT qs) {                      \
        const __m512i flip = _mm512_set1_epi8((char)AOTC_QOFFSET);                                         \
        const __m##V##i ones = _mm##V##_set1_epi8(1);                                                      \
        const uint8_t *keep = iv + 64 * (int64_t)npat;                                                     \
        const QT *xs = xg;                                                                                 \
        __m##V##i a[16], s = _mm##V##_setzero_si##V();                                                     \
        int32_t j, q = 0, pp = 0;                                                                          \
        for (j = 0; j < N; ++j) a[j] = _mm##V##_setzero_si##V();                                           \
        for (; q < qfast; ++q, wq += N) {                                                                  \
            const __m##V##i xv = QX86_CUT##V(QX86_DENSE_QUAD(                                              \
                _mm512_loadu_si512((const void *)(xs + seg[pp].offa)),                                     \
                _mm512_loadu_si512((const void *)(xs + seg[pp].offb)), pp));                               \
            if (ST) _mm512_storeu_si512((void *)(qs + 64 * (int64_t)q), QX86_WIDEN##V(xv));                \
            QX86_WORDS8(V, a, xv, wq);                                                                     \
            if (N > 8) QX86_WORDS8(V, (a + 8), xv, (wq + 8));                                              \
            if (wsum) s = _mm##V##_dpbusd_epi32(s, xv, ones);                                              \
            if (++pp == npat) pp = 0, xs += step;                                                          \
        }                                                                                                  \
        for (; q < kq; ++q, wq += N) { /* masked to the windows; B past the channels: the zero point */    \
            const __m##V##i xv = QX86_CUT##V(QX86_DENSE_QUAD(                                              \
                _mm512_mask_loadu_epi8(zfill, seg[pp].ma, (const void *)(xs + seg[pp].offa)),              \
                q < qsafe ? _mm512_mask_loadu_epi8(zfill, seg[pp].mb, (const void *)(xs + seg[pp].offb)) : zfill, pp)); \
            if (ST) _mm512_storeu_si512((void *)(qs + 64 * (int64_t)q), QX86_WIDEN##V(xv));                \
            QX86_WORDS8(V, a, xv, wq);                                                                     \
            if (N > 8) QX86_WORDS8(V, (a + 8), xv, (wq + 8));                                              \
            if (wsum) s = _mm##V##_dpbusd_epi32(s, xv, ones);                                              \
            if (++pp == npat) pp = 0, xs += step;                                                          \
        }                                                                                                  \
        for (j = 0; j < N; ++j) acc[j] = QX86_WIDEN##V(a[j]);                                              \
        *sums = QX86_WIDEN##V(s);                                                                          \
        (void)qs;                                                                                          \
    }
QX86_DENSE_DOT(AOTC_Q(x86_dense_dot16), 16, 512, 0)
QX86_DENSE_DOT(AOTC_Q(x86_dense_dot8), 8, 512, 0)
QX86_DENSE_DOT(AOTC_Q(x86_dense_dot16y), 16, 256, 0)
QX86_DENSE_DOT(AOTC_Q(x86_dense_dot8y), 8, 256, 0)
QX86_DENSE_DOT(AOTC_Q(x86_dense_dotq16), 16, 512, 1)

/* One block's kq quad rows made once (QX86_DENSE_QUAD, as the dots above make them) and stored at qb,
 * 64 bytes a row: where the output channels take more than one register block of 16, each block of
 * channels then reads them back (x86_dense_dotb*) instead of permuting the windows again. */
static void AOTC_Q(x86_dense_quads)(const QT *AOTC_RESTRICT xg, int64_t step, const AOTC_Q(x86_dseg) *seg,
                                    const uint8_t *iv, int pad, int32_t npat, int32_t kq, int32_t qfast, int32_t qsafe,
                                    __m512i zfill, uint8_t *AOTC_RESTRICT qb) {
    const __m512i flip = _mm512_set1_epi8((char)AOTC_QOFFSET);
    const uint8_t *keep = iv + 64 * (int64_t)npat;
    const QT *xs = xg;
    int32_t q = 0, pp = 0;
    for (; q < qfast; ++q, qb += 64) {
        _mm512_storeu_si512((void *)qb, QX86_DENSE_QUAD(_mm512_loadu_si512((const void *)(xs + seg[pp].offa)),
                                                        _mm512_loadu_si512((const void *)(xs + seg[pp].offb)), pp));
        if (++pp == npat) pp = 0, xs += step;
    }
    for (; q < kq; ++q, qb += 64) {
        _mm512_storeu_si512((void *)qb, QX86_DENSE_QUAD(
            _mm512_mask_loadu_epi8(zfill, seg[pp].ma, (const void *)(xs + seg[pp].offa)),
            q < qsafe ? _mm512_mask_loadu_epi8(zfill, seg[pp].mb, (const void *)(xs + seg[pp].offb)) : zfill, pp));
        if (++pp == npat) pp = 0, xs += step;
    }
}

/* x86_dense_dot16 and kin on quad rows made by x86_dense_quads (qb, 64 bytes a row) */
#define QX86_DENSE_DOTB(NAME, N, V)                                                                        \
    static inline QX86_HOT void NAME(const uint8_t *AOTC_RESTRICT qb, int32_t kq,                          \
                                     const int32_t *AOTC_RESTRICT wq, int wsum, __m512i *acc, __m512i *sums) { \
        const __m##V##i ones = _mm##V##_set1_epi8(1);                                                      \
        __m##V##i a[16], s = _mm##V##_setzero_si##V();                                                     \
        int32_t j, q;                                                                                      \
        for (j = 0; j < N; ++j) a[j] = _mm##V##_setzero_si##V();                                           \
        for (q = 0; q < kq; ++q, wq += N, qb += 64) {                                                      \
            const __m##V##i xv = QX86_CUT##V(_mm512_loadu_si512((const void *)qb));                        \
            QX86_WORDS8(V, a, xv, wq);                                                                     \
            if (N > 8) QX86_WORDS8(V, (a + 8), xv, (wq + 8));                                              \
            if (wsum) s = _mm##V##_dpbusd_epi32(s, xv, ones);                                              \
        }                                                                                                  \
        for (j = 0; j < N; ++j) acc[j] = QX86_WIDEN##V(a[j]);                                              \
        *sums = QX86_WIDEN##V(s);                                                                          \
    }
QX86_DENSE_DOTB(AOTC_Q(x86_dense_dotb16), 16, 512)
QX86_DENSE_DOTB(AOTC_Q(x86_dense_dotb16y), 16, 256)

/* three blocks' sums for output channel j of wq (named accumulators: arrays indexed in loops spilled) */
#define QX86_DOTB3_STEP(j)                                                                                 \
    do {                                                                                                   \
        const __m512i wv_ = _mm512_set1_epi32(wq[j]);                                                      \
        a0##j = _mm512_dpbusd_epi32(a0##j, x0, wv_);                                                       \
        a1##j = _mm512_dpbusd_epi32(a1##j, x1, wv_);                                                       \
        a2##j = _mm512_dpbusd_epi32(a2##j, x2, wv_);                                                       \
    } while (0)
#define QX86_DOTB3_ZERO(j) __m512i a0##j = _mm512_setzero_si512(), a1##j = a0##j, a2##j = a0##j
#define QX86_DOTB3_OUT(j) (acc[j] = a0##j, acc[8 + j] = a1##j, acc[16 + j] = a2##j)
/* the eight channels' sums of one quad row (x0, x1, x2 the three blocks') */
#define QX86_DOTQ3_SUMS                                                                                    \
    do {                                                                                                   \
        QX86_DOTB3_STEP(0);                                                                                \
        QX86_DOTB3_STEP(1);                                                                                \
        QX86_DOTB3_STEP(2);                                                                                \
        QX86_DOTB3_STEP(3);                                                                                \
        QX86_DOTB3_STEP(4);                                                                                \
        QX86_DOTB3_STEP(5);                                                                                \
        QX86_DOTB3_STEP(6);                                                                                \
        QX86_DOTB3_STEP(7);                                                                                \
    } while (0)

/* x86_dense_dotb16's sums for three blocks of quad rows at once (qb, qb + bstride, qb + 2 bstride) and 8
 * output channels (words 0-7 of wq's rows of 16): 24 accumulators, a weight word's broadcast serving three
 * blocks (11 loads a quad row for 24 vpdpbusd, against 17 for 16: 8 % fewer cycles in the loop on Zen 5).
 * acc[8 t + j]: block t's sums for channel j. No patch sums: for weights whose zero points are all 0. Not
 * inlined: in qconv_dense's loops, beside their constants, the 24 accumulators and 3 rows spilled. ONE: also
 * a block of one lane (quad rows at qn) for all 16 channels of wq's rows into *one, its patch word broadcast
 * against the row (a plane's last position, 7 x 7's 49th: summed on its own, x86_dense_narrowb, its loop waited
 * on the rows it read again and took 13 % of ResNet-18's 7 x 7 convs). */
#define QX86_DOTB3X8(NAME, ONE)                                                                            \
    static __attribute__((noinline)) void NAME(const uint8_t *AOTC_RESTRICT qb, int64_t bstride, int32_t kq,   \
                                               const int32_t *AOTC_RESTRICT wq, __m512i *acc,              \
                                               const uint8_t *AOTC_RESTRICT qn, __m512i *one) {            \
        QX86_DOTB3_ZERO(0);                                                                                \
        QX86_DOTB3_ZERO(1);                                                                                \
        QX86_DOTB3_ZERO(2);                                                                                \
        QX86_DOTB3_ZERO(3);                                                                                \
        QX86_DOTB3_ZERO(4);                                                                                \
        QX86_DOTB3_ZERO(5);                                                                                \
        QX86_DOTB3_ZERO(6);                                                                                \
        QX86_DOTB3_ZERO(7);                                                                                \
        __m512i an = _mm512_setzero_si512();                                                               \
        int32_t q;                                                                                         \
        for (q = 0; q < kq; ++q, wq += 16, qb += 64) {                                                     \
            const __m512i x0 = _mm512_loadu_si512((const void *)qb);                                       \
            const __m512i x1 = _mm512_loadu_si512((const void *)(qb + bstride));                           \
            const __m512i x2 = _mm512_loadu_si512((const void *)(qb + 2 * bstride));                       \
            _mm_prefetch((const char *)(wq + 16 * (int64_t)kq), _MM_HINT_T1);                              \
            QX86_DOTQ3_SUMS;                                                                               \
            if (ONE) {                                                                                     \
                int32_t v_;                                                                                \
                memcpy(&v_, qn + 64 * (int64_t)q, 4);                                                      \
                an = _mm512_dpbusd_epi32(an, _mm512_set1_epi32(v_), _mm512_loadu_si512((const void *)wq)); \
            }                                                                                              \
        }                                                                                                  \
        QX86_DOTB3_OUT(0);                                                                                 \
        QX86_DOTB3_OUT(1);                                                                                 \
        QX86_DOTB3_OUT(2);                                                                                 \
        QX86_DOTB3_OUT(3);                                                                                 \
        QX86_DOTB3_OUT(4);                                                                                 \
        QX86_DOTB3_OUT(5);                                                                                 \
        QX86_DOTB3_OUT(6);                                                                                 \
        QX86_DOTB3_OUT(7);                                                                                 \
        if (ONE) *one = an;                                                                                \
        (void)qn, (void)one;                                                                               \
    }
QX86_DOTB3X8(AOTC_Q(x86_dense_dotb3x8), 0)
QX86_DOTB3X8(AOTC_Q(x86_dense_dotb3x8n), 1)
#undef QX86_DOTB3X8

/* One quad row of block t (QX86_DENSE_QUAD with the block's windows seg[t], index vectors iv[t] and, where any of
 * the three blocks has padding, keep vectors: a block without padding keeps every byte) */
#define QX86_DOTQ3_ROW(t, LOADA, LOADB)                                                                    \
    do {                                                                                                   \
        __m512i v_ = _mm512_permutex2var_epi8(LOADA, _mm512_load_si512((const void *)(iv[t] + 64 * (int64_t)pp)), LOADB); \
        if (pad) v_ = _mm512_ternarylogic_epi32(v_, zfill, _mm512_load_si512((const void *)(iv[t] + 64 * (int64_t)(npat + pp))), 0xE4); \
        x##t = _mm512_xor_si512(v_, flip);                                                                 \
        _mm512_storeu_si512((void *)(qs + (t) * qstride + 64 * (int64_t)q), x##t);                         \
    } while (0)
#define QX86_DOTQ3_FAST(t)                                                                                 \
    QX86_DOTQ3_ROW(t, _mm512_loadu_si512((const void *)(xs + seg[t][pp].offa)),                            \
                   _mm512_loadu_si512((const void *)(xs + seg[t][pp].offb)))
#define QX86_DOTQ3_MASKED(t)                                                                               \
    QX86_DOTQ3_ROW(t, _mm512_mask_loadu_epi8(zfill, seg[t][pp].ma, (const void *)(xs + seg[t][pp].offa)),  \
                   q < qsafe ? _mm512_mask_loadu_epi8(zfill, seg[t][pp].mb, (const void *)(xs + seg[t][pp].offb)) : zfill)

/* Three blocks' quad rows made (as x86_dense_quads makes them; block t's at qs + t qstride) while their sums for 8
 * output channels (words 0-7 of wq's rows of 16) are taken as x86_dense_dotb3x8 takes them: the rows' permutes
 * beside 24 vpdpbusd and 8 weight broadcasts a row. x86_dense_dotq16 made one block's rows beside 16 vpdpbusd
 * and 16 broadcasts, and its loads (the broadcasts, the windows, split across cache lines, and the index and keep
 * vectors: 20 a row) held it to about half vpdpbusd's rate; here 17 a row for 24. No patch sums (weights without
 * zero points). */
static __attribute__((noinline)) void AOTC_Q(x86_dense_dotq3x8)(const QT *AOTC_RESTRICT xg, int64_t step,
                                                                const AOTC_Q(x86_dseg) (*seg)[AOTC_QX86_PAT],
                                                                const uint8_t *const *iv, int pad, int32_t npat,
                                                                int32_t kq, int32_t qfast, int32_t qsafe,
                                                                const int32_t *AOTC_RESTRICT wq, __m512i zfill,
                                                                __m512i *acc, uint8_t *AOTC_RESTRICT qs) {
    const __m512i flip = _mm512_set1_epi8((char)AOTC_QOFFSET);
    const int64_t qstride = (int64_t)kq * 64;
    const QT *xs = xg;
    QX86_DOTB3_ZERO(0);
    QX86_DOTB3_ZERO(1);
    QX86_DOTB3_ZERO(2);
    QX86_DOTB3_ZERO(3);
    QX86_DOTB3_ZERO(4);
    QX86_DOTB3_ZERO(5);
    QX86_DOTB3_ZERO(6);
    QX86_DOTB3_ZERO(7);
    int32_t q = 0, pp = 0;
    for (; q < qfast; ++q, wq += 16) {
        __m512i x0, x1, x2;
        QX86_DOTQ3_FAST(0);
        QX86_DOTQ3_FAST(1);
        QX86_DOTQ3_FAST(2);
        _mm_prefetch((const char *)(wq + 16 * (int64_t)kq), _MM_HINT_T1);
        QX86_DOTQ3_SUMS;
        if (++pp == npat) pp = 0, xs += step;
    }
    for (; q < kq; ++q, wq += 16) { /* masked to the windows; B past the channels: the zero point */
        __m512i x0, x1, x2;
        QX86_DOTQ3_MASKED(0);
        QX86_DOTQ3_MASKED(1);
        QX86_DOTQ3_MASKED(2);
        QX86_DOTQ3_SUMS;
        if (++pp == npat) pp = 0, xs += step;
    }
    QX86_DOTB3_OUT(0);
    QX86_DOTB3_OUT(1);
    QX86_DOTB3_OUT(2);
    QX86_DOTB3_OUT(3);
    QX86_DOTB3_OUT(4);
    QX86_DOTB3_OUT(5);
    QX86_DOTB3_OUT(6);
    QX86_DOTB3_OUT(7);
}
#undef QX86_DOTQ3_SUMS
#undef QX86_DOTQ3_MASKED
#undef QX86_DOTQ3_FAST
#undef QX86_DOTQ3_ROW
#undef QX86_DOTB3_STEP
#undef QX86_DOTB3_ZERO
#undef QX86_DOTB3_OUT

#define AOTC_QX86_NARROW 4 /* blocks of at most this many lanes: x86_dense_narrow */

/* One quad row's sums the other way round, for a block of at most AOTC_QX86_NARROW positions (a
 * plane's last few, as 7 x 7's 49 = 3 x 16 + 1): 16 output channels in the lanes of each position's
 * sums, the quad row's words of the 16 channels (wq, one vector) against the position's patch word
 * broadcast, so a block of L lanes takes L vpdpbusd a quad, not 16. */
#define QX86_NARROW_STEP(xv)                                                                               \
    do {                                                                                                   \
        const __m512i wv_ = _mm512_loadu_si512((const void *)wq);                                          \
        a[0] = _mm512_dpbusd_epi32(a[0], _mm512_permutexvar_epi32(_mm512_setzero_si512(), (xv)), wv_);     \
        if (lanes > 1) a[1] = _mm512_dpbusd_epi32(a[1], _mm512_permutexvar_epi32(i1, (xv)), wv_);          \
        if (lanes > 2) a[2] = _mm512_dpbusd_epi32(a[2], _mm512_permutexvar_epi32(i2, (xv)), wv_);          \
        if (lanes > 3) a[3] = _mm512_dpbusd_epi32(a[3], _mm512_permutexvar_epi32(i3, (xv)), wv_);          \
        if (wsum) s = _mm512_dpbusd_epi32(s, (xv), ones);                                                  \
    } while (0)

/* x86_dense_dot16's loops for a narrow block (lanes <= AOTC_QX86_NARROW): acc[l] the sums of position
 * l for the 16 channels of wq (kq rows of 16 words), *sums the patch sums by position. */
static inline QX86_HOT void AOTC_Q(x86_dense_narrow)(const QT *AOTC_RESTRICT xg, int64_t step, const AOTC_Q(x86_dseg) *seg,
                                     const uint8_t *iv, int pad, int32_t npat, int32_t kq, int32_t qfast, int32_t qsafe,
                                     const int32_t *AOTC_RESTRICT wq, __m512i zfill, int wsum, int32_t lanes,
                                     __m512i *acc, __m512i *sums) {
    const __m512i flip = _mm512_set1_epi8((char)AOTC_QOFFSET), ones = _mm512_set1_epi8(1);
    const __m512i i1 = _mm512_set1_epi32(1), i2 = _mm512_set1_epi32(2), i3 = _mm512_set1_epi32(3);
    const uint8_t *keep = iv + 64 * (int64_t)npat;
    const QT *xs = xg;
    __m512i a[AOTC_QX86_NARROW], s = _mm512_setzero_si512();
    int32_t j, q = 0, pp = 0;
    for (j = 0; j < AOTC_QX86_NARROW; ++j) a[j] = _mm512_setzero_si512();
    for (; q < qfast; ++q, wq += 16) {
        const __m512i xv = QX86_DENSE_QUAD(_mm512_loadu_si512((const void *)(xs + seg[pp].offa)),
                                           _mm512_loadu_si512((const void *)(xs + seg[pp].offb)), pp);
        QX86_NARROW_STEP(xv);
        if (++pp == npat) pp = 0, xs += step;
    }
    for (; q < kq; ++q, wq += 16) {
        const __m512i xv = QX86_DENSE_QUAD(
            _mm512_mask_loadu_epi8(zfill, seg[pp].ma, (const void *)(xs + seg[pp].offa)),
            q < qsafe ? _mm512_mask_loadu_epi8(zfill, seg[pp].mb, (const void *)(xs + seg[pp].offb)) : zfill, pp);
        QX86_NARROW_STEP(xv);
        if (++pp == npat) pp = 0, xs += step;
    }
    for (j = 0; j < AOTC_QX86_NARROW; ++j) acc[j] = a[j];
    *sums = s;
}
/* QX86_NARROW_STEP's products into the sums t (and the patch sums into s), each lane's patch word broadcast from
 * the quad row in memory (qr) rather than permuted out of it in a register */
#define QX86_NARROW_STEPB(t, qr, wp)                                                                       \
    do {                                                                                                   \
        const __m512i wv_ = _mm512_loadu_si512((const void *)(wp));                                        \
        int32_t w_[AOTC_QX86_NARROW];                                                                      \
        memcpy(w_, (qr), 4 * (size_t)LANES);                                                               \
        t[0] = _mm512_dpbusd_epi32(t[0], _mm512_set1_epi32(w_[0]), wv_);                                   \
        if (LANES > 1) t[1] = _mm512_dpbusd_epi32(t[1], _mm512_set1_epi32(w_[1]), wv_);                    \
        if (LANES > 2) t[2] = _mm512_dpbusd_epi32(t[2], _mm512_set1_epi32(w_[2]), wv_);                    \
        if (LANES > 3) t[3] = _mm512_dpbusd_epi32(t[3], _mm512_set1_epi32(w_[3]), wv_);                    \
        if (WSUM) s = _mm512_dpbusd_epi32(s, _mm512_loadu_si512((const void *)(qr)), ones);                \
    } while (0)
/* x86_dense_narrow on quad rows made by x86_dense_quads (qb, 64 bytes a row), for LANES lanes, with the patch
 * sums where WSUM (both constants in each of x86_dense_narrowb's calls, so that the loop has no branches): four
 * quad rows a step into four sets of sums, added at the end, so that a block of one or two lanes (7 x 7's 49th
 * position) is not held to vpdpbusd's latency on a single chain (ResNet-18's 7 x 7 convs: 3 % of its time). */
static inline QX86_HOT void AOTC_Q(x86_dense_narrowb_n)(const uint8_t *AOTC_RESTRICT qb, int32_t kq,
                                                        const int32_t *AOTC_RESTRICT wq, const int WSUM,
                                                        const int32_t LANES, __m512i *acc, __m512i *sums) {
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i a[AOTC_QX86_NARROW], b[AOTC_QX86_NARROW], c[AOTC_QX86_NARROW], d[AOTC_QX86_NARROW];
    __m512i s = _mm512_setzero_si512();
    int32_t j, q = 0;
    for (j = 0; j < AOTC_QX86_NARROW; ++j) a[j] = b[j] = c[j] = d[j] = _mm512_setzero_si512();
    for (; q + 4 <= kq; q += 4, wq += 64, qb += 256) {
        QX86_NARROW_STEPB(a, qb, wq);
        QX86_NARROW_STEPB(b, qb + 64, wq + 16);
        QX86_NARROW_STEPB(c, qb + 128, wq + 32);
        QX86_NARROW_STEPB(d, qb + 192, wq + 48);
    }
    for (; q < kq; ++q, wq += 16, qb += 64) QX86_NARROW_STEPB(a, qb, wq);
    for (j = 0; j < AOTC_QX86_NARROW; ++j) acc[j] = _mm512_add_epi32(_mm512_add_epi32(a[j], b[j]), _mm512_add_epi32(c[j], d[j]));
    *sums = s;
}
/* x86_dense_narrowb_n with its lane count and patch sums as constants (the loop with them as variables, a branch
 * a lane and row and a permute a lane, took 12 % of ResNet-18's 7 x 7 convs for their 49th positions) */
static inline QX86_HOT void AOTC_Q(x86_dense_narrowb)(const uint8_t *AOTC_RESTRICT qb, int32_t kq,
                                                      const int32_t *AOTC_RESTRICT wq, int wsum, int32_t lanes,
                                                      __m512i *acc, __m512i *sums) {
#define QX86_NARROWB_CASE(n)                                                                               \
    case n:                                                                                                \
        if (wsum) AOTC_Q(x86_dense_narrowb_n)(qb, kq, wq, 1, n, acc, sums);                                \
        else AOTC_Q(x86_dense_narrowb_n)(qb, kq, wq, 0, n, acc, sums);                                     \
        break;
    switch (lanes) {
        QX86_NARROWB_CASE(1)
        QX86_NARROWB_CASE(2)
        QX86_NARROWB_CASE(3)
        default: QX86_NARROWB_CASE(4)
    }
#undef QX86_NARROWB_CASE
}
#undef QX86_NARROW_STEPB
#undef QX86_NARROW_STEP

/* Requantises a narrow block's sums (x86_dense_narrow) and stores them: channels [oc, oc + nc) at
 * positions pos0 + l, l < lanes. */
static void AOTC_Q(x86_narrow_store)(const aotc_qconv_params *p, const __m512i *acc, __m512i sums, int32_t oc, int32_t nc,
                                     int32_t lanes, int32_t pos0, int32_t plane_out, QT *yn,
                                     const aotc_qresidual_params *r, const QT *res) {
    const __mmask16 cm = AOTC_Q(x86_lanes)(nc);
    const __m512i bias = _mm512_maskz_loadu_epi32(cm, (const void *)(p->bias + oc));
    const __m512 scale = _mm512_maskz_loadu_ps(cm, (const void *)(p->scale + oc));
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero);
    uint8_t out[16];
    int32_t l, j;
    int32_t sv[16];
    _mm512_storeu_si512((void *)sv, sums);
    for (l = 0; l < lanes; ++l) {
        __m512i v = _mm512_add_epi32(acc[l], bias);
        if (p->w_zero_any) {
            v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(cm, (const void *)(p->w_zero + oc)),
                                                       _mm512_set1_epi32(sv[l])));
        }
        _mm_storeu_si128((__m128i *)(void *)out, AOTC_Q(x86_requant16)(v, scale, lo, hi, zp));
        for (j = 0; j < nc; ++j) {
            const int64_t at = (int64_t)(oc + j) * plane_out + pos0 + l;
            yn[at] = r == NULL ? (QT)out[j] : (QT)AOTC_Q(residual_one)(r, (int32_t)(QT)out[j], res[at]);
        }
    }
}

/* Requantises a block's sums (x86_dense_dot*: acc[j] channel oc + j's over the lanes lm, sums the
 * patch sums) and stores them, the residual ADD's (rv, res) in the stores where rv is not NULL. */
static inline QX86_HOT void AOTC_Q(x86_dense_store)(const aotc_qconv_params *p, const __m512i *acc, __m512i sums,
                                                    int32_t oc, int32_t nc, __mmask16 lm, int64_t at0,
                                                    int32_t plane_out, __m512 lo, __m512 hi, __m512i zp, QT *yn,
                                                    const AOTC_Q(x86_resid) *rv, const QT *resn) {
    /* the channels' constants through locals: read through p, gcc loaded the pointers again after each store of
     * bytes (which may alias them) */
    const int32_t *const bias = p->bias, *const w_zero = p->w_zero;
    const float *const scale = p->scale;
    const int w_zero_any = p->w_zero_any;
    int32_t j;
    for (j = 0; j < nc; ++j) {
        const int32_t c = oc + j;
        const int64_t at = (int64_t)c * plane_out + at0;
        __m512i v = _mm512_add_epi32(acc[j], _mm512_set1_epi32(bias[c]));
        __m512i q;
        if (w_zero_any) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(w_zero[c]), sums));
        q = AOTC_Q(x86_requant16_lanes)(v, _mm512_set1_ps(scale[c]), lo, hi, zp);
        _mm_mask_storeu_epi8((void *)(yn + at), lm, rv == NULL ? _mm512_cvtepi32_epi8(q)
                                                               : AOTC_Q(x86_residual16)(rv, q, resn + at, lm));
    }
}

/* The windows of each pattern for block bk (shifted by shift bytes, x86_dense_get) as seg[pp]. A window's start
 * and load mask depend on its kernel row only (the mask stops at the plane's end, the same for every channel),
 * so they are made once a row and each pattern picks its rows' (made per pattern, they took 17 % of
 * ResNet-18's stem, 49 patterns a block of 16 positions). gcc's vectorised loop gathered the rows' starts and masks
 * (vpgatherdq), and the stem took 3 % longer than with the scalar loop; with at most 8 kernel rows, eight patterns a
 * step pick them from one register each (vpermq) and store four vectors (the stem's 37 patterns a block: the stem
 * 363 -> 344 us, one thread, Zen 5). */
static __attribute__((noinline, optimize("no-tree-vectorize"))) void AOTC_Q(x86_dense_segs)(const AOTC_Q(x86_dblock) *bk, int32_t shift, const AOTC_Q(x86_dpat) *pat,
                                          int32_t npat, int32_t plane_in, int32_t k_h, AOTC_Q(x86_dseg) *seg) {
    int64_t lo[AOTC_QX86_KH] = {0}; /* (rows past k_h: 0, read by the vectors below, never picked) */
    __mmask64 m[AOTC_QX86_KH] = {0};
    int32_t pp, kh;
    for (kh = 0; kh < k_h; ++kh) {
        const int32_t sk = bk->span[kh], lk = bk->lo[kh] + shift;
        lo[kh] = lk;
        m[kh] = sk < 0 ? 0 : AOTC_Q(x86_bytes)(sk + 1 < plane_in - lk ? sk + 1 : plane_in - lk);
    }
    if (npat >= 8 && k_h <= 8) { /* eight patterns a step: their rows' starts and masks picked by vpermq */
        const __m512i lo0 = _mm512_loadu_si512((const void *)lo), m0 = _mm512_loadu_si512((const void *)m);
        const __m512i pi = _mm512_set1_epi64(plane_in), one = _mm512_set1_epi32(1);
        const __m512i field = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 28, 24, 20, 16, 12, 8, 4, 0); /* kh_a of each */
        for (pp = 0; pp + 8 <= npat; pp += 8) {
            const __m512i p0 = _mm512_loadu_si512((const void *)(pat + pp)), p1 = _mm512_loadu_si512((const void *)(pat + pp + 4));
            const __m512i f1 = _mm512_add_epi32(field, one), f2 = _mm512_add_epi32(f1, one), f3 = _mm512_add_epi32(f2, one);
            const __m512i kha = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(_mm512_permutex2var_epi32(p0, field, p1)));
            const __m512i khb = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(_mm512_permutex2var_epi32(p0, f1, p1)));
            const __m512i ica = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(_mm512_permutex2var_epi32(p0, f2, p1)));
            const __m512i icb = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(_mm512_permutex2var_epi32(p0, f3, p1)));
            const __m512i oa = _mm512_add_epi64(_mm512_mul_epi32(ica, pi), _mm512_permutexvar_epi64(kha, lo0));
            const __m512i ob = _mm512_add_epi64(_mm512_mul_epi32(icb, pi), _mm512_permutexvar_epi64(khb, lo0));
            const __m512i ma = _mm512_permutexvar_epi64(kha, m0), mb = _mm512_permutexvar_epi64(khb, m0);
            /* {offa, offb, ma, mb} a pattern: the four vectors' words interleaved */
            const __m512i t0 = _mm512_unpacklo_epi64(oa, ob), t1 = _mm512_unpackhi_epi64(oa, ob);
            const __m512i t2 = _mm512_unpacklo_epi64(ma, mb), t3 = _mm512_unpackhi_epi64(ma, mb);
            const __m512i u0 = _mm512_shuffle_i64x2(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
            const __m512i u1 = _mm512_shuffle_i64x2(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
            const __m512i u2 = _mm512_shuffle_i64x2(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
            const __m512i u3 = _mm512_shuffle_i64x2(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
            _mm512_storeu_si512((void *)(seg + pp), _mm512_shuffle_i64x2(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)));
            _mm512_storeu_si512((void *)(seg + pp + 2), _mm512_shuffle_i64x2(u0, u1, _MM_SHUFFLE(3, 1, 3, 1)));
            _mm512_storeu_si512((void *)(seg + pp + 4), _mm512_shuffle_i64x2(u2, u3, _MM_SHUFFLE(2, 0, 2, 0)));
            _mm512_storeu_si512((void *)(seg + pp + 6), _mm512_shuffle_i64x2(u2, u3, _MM_SHUFFLE(3, 1, 3, 1)));
        }
    }
    for (pp = npat >= 8 && k_h <= 8 ? npat / 8 * 8 : 0; pp < npat; ++pp) {
        seg[pp].offa = (int64_t)pat[pp].ic_a * plane_in + lo[pat[pp].kh_a];
        seg[pp].offb = (int64_t)pat[pp].ic_b * plane_in + lo[pat[pp].kh_b];
        seg[pp].ma = m[pat[pp].kh_a];
        seg[pp].mb = m[pat[pp].kh_b];
    }
}

/* qconv_dense's work, as items for one thread or the pool (aotc_threads.h): the conv's shape and plan, and
 * how the work is cut. Ranges of `run` output positions (the whole plane unsplit, else whole rows of at least
 * AOTC_QCONV_POOL_RUN); with the quad rows made once in the scratch (`quads`) an item is (image and group,
 * range, chunk of channels), range-major; else (image and group, pass, chunk of the pass's channels, range),
 * so that a thread's consecutive items share a pass's re-ordered weights. Each thread has its own lane of the
 * scratch (lane_bytes apart: the patch block, then the work with its weights and kept blocks). */
typedef struct {
    const aotc_qconv_params *p;
    const QT *x;
    const int8_t *w;
    QT *y;
    uint8_t *scratch;
    const aotc_qresidual_params *r;
    const QT *res;
    AOTC_Q(x86_resid) rv;
    AOTC_Q(x86_rq) rq; /* (the 8-channel stores of blocks made in threes: x86_dense_store8) */
    int64_t lane_bytes, kp;
    int32_t tile, cg, mg, kq, ics, qsafe, qfast, npat, stride, pass, nmax, wbytes, count, nblk, quads;
    int32_t run, ranges, passes, chunks, cstep;
    AOTC_Q(x86_dpat) pat[AOTC_QX86_PAT];
    uint8_t tap[AOTC_QX86_PAT][4];
    aotc_qx86_lane *lane;
} AOTC_Q(x86_djob);

/* x86_dense_store of 8 channels' sums without patch sums (acc, blocks made in threes: x86_dense_dotb3x8), by
 * x86_rows_store's four channels at a time where no ADD follows and its clamp is whole numbers */
static inline void AOTC_Q(x86_dense_store8)(const AOTC_Q(x86_djob) *J, const __m512i *acc, int32_t oc, __mmask16 lm,
                                            int64_t at0, int32_t plane_out, QT *yn, const AOTC_Q(x86_resid) *rvp,
                                            const QT *resn) {
    if (rvp == NULL && J->rq.whole) {
        AOTC_Q(x86_rseg) sg;
        sg.off1 = at0, sg.off2 = 0, sg.m1 = lm, sg.m2 = 0;
        AOTC_Q(x86_rows_store)(J->p, acc, oc, &sg, plane_out, &J->rq, yn, NULL, NULL);
    } else {
        AOTC_Q(x86_dense_store)(J->p, acc, _mm512_setzero_si512(), oc, 8, lm, at0, plane_out, J->rq.lo, J->rq.hi,
                                J->rq.zp, yn, rvp, resn);
    }
}

/* x86_dense_run's packed weights, channels [c0, c1) on the batch's L->nb blocks made into the scratch (their quad
 * rows): whole blocks of 16 channels; `made` and q3 say what making them summed already (c0's channels) */
static inline QX86_HOT void AOTC_Q(x86_dense_batch)(const AOTC_Q(x86_djob) *J, const aotc_qx86_lane *L,
                                                    const int8_t *AOTC_RESTRICT w, const uint8_t *AOTC_RESTRICT scratch,
                                                    int32_t c0, int32_t c1, int made, const int8_t *q3, QT *yn,
                                                    const QT *resn) {
    const aotc_qconv_params *p = J->p;
    const int32_t kq = J->kq, nb = L->nb, plane_out = p->out_h * p->out_w;
    const int64_t kp = J->kp;
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero);
    const AOTC_Q(x86_resid) *const rvp = J->r != NULL ? &J->rv : NULL;
    int32_t oc, b;
    for (oc = c0; oc < c1; oc += 16) { /* packed: whole blocks of 16 channels */
        const int32_t *const wq = (const int32_t *)(const void *)(w + (int64_t)oc * kp);
        b = 0;
        if (made && oc == c0) { /* only the narrow blocks left, and channels 8-15 of those made in threes */
            for (b = 0; b < nb; ++b) {
                __m512i a[16], s;
                if (q3[b]) {
                    __m512i a3[24];
                    int32_t t;
                    AOTC_Q(x86_dense_dotb3x8)(scratch + (int64_t)b * kq * 64, (int64_t)kq * 64, kq, wq + 8, a3,
                                              NULL, NULL);
                    AOTC_QX86_TRACE(dotb3);
                    for (t = 0; t < 3; ++t)
                        AOTC_Q(x86_dense_store8)(J, a3 + 8 * t, oc + 8, AOTC_Q(x86_lanes)(L->blanes[b + t]),
                                                 L->bpos[b + t], plane_out, yn, rvp, resn);
                    b += 2;
                    continue;
                }
                if (L->blanes[b] > AOTC_QX86_NARROW) continue;
                AOTC_Q(x86_dense_narrowb)(scratch + (int64_t)b * kq * 64, kq, wq, p->w_zero_any, L->blanes[b], a, &s);
                AOTC_Q(x86_narrow_store)(p, a, s, oc, 16, L->blanes[b], L->bpos[b], plane_out, yn, J->r, resn);
            }
            continue;
        }
        if (!p->w_zero_any) { /* three blocks of over 8 lanes at a time, 8 channels of the 16 twice */
            for (; b + 3 <= nb && L->blanes[b] > 8 && L->blanes[b + 1] > 8 && L->blanes[b + 2] > 8; b += 3) {
                const __m512i none = _mm512_setzero_si512();
                /* the batch's last block, of one lane, right after these three: summed with them */
                const int one = b + 4 == nb && L->blanes[b + 3] == 1;
                int32_t h, t;
                for (h = 0; h < 2; ++h) {
                    __m512i a3[24], a1[AOTC_QX86_NARROW];
                    if (one && h == 0) {
                        AOTC_Q(x86_dense_dotb3x8n)(scratch + (int64_t)b * kq * 64, (int64_t)kq * 64, kq, wq, a3,
                                                   scratch + (int64_t)(b + 3) * kq * 64, a1);
                        AOTC_QX86_TRACE(dotb3n);
                        AOTC_Q(x86_narrow_store)(p, a1, none, oc, 16, 1, L->bpos[b + 3], plane_out, yn, J->r, resn);
                    } else {
                        AOTC_Q(x86_dense_dotb3x8)(scratch + (int64_t)b * kq * 64, (int64_t)kq * 64, kq, wq + 8 * h, a3,
                                                  NULL, NULL);
                    }
                    AOTC_QX86_TRACE(dotb3);
                    for (t = 0; t < 3; ++t)
                        AOTC_Q(x86_dense_store8)(J, a3 + 8 * t, oc + 8 * h, AOTC_Q(x86_lanes)(L->blanes[b + t]),
                                                 L->bpos[b + t], plane_out, yn, rvp, resn);
                }
                if (one) b = nb - 3; /* (the one-lane block stored) */
            }
        }
        for (; b < nb; ++b) {
            const uint8_t *qb = scratch + (int64_t)b * kq * 64;
            __m512i a[16], s;
            if (L->blanes[b] <= AOTC_QX86_NARROW) {
                AOTC_Q(x86_dense_narrowb)(qb, kq, wq, p->w_zero_any, L->blanes[b], a, &s);
                AOTC_Q(x86_narrow_store)(p, a, s, oc, 16, L->blanes[b], L->bpos[b], plane_out, yn, J->r, resn);
                continue;
            }
            if (L->blanes[b] > 8) AOTC_Q(x86_dense_dotb16)(qb, kq, wq, p->w_zero_any, a, &s);
            else AOTC_Q(x86_dense_dotb16y)(qb, kq, wq, p->w_zero_any, a, &s);
            AOTC_Q(x86_dense_store)(p, a, s, oc, 16, AOTC_Q(x86_lanes)(L->blanes[b]), L->bpos[b], plane_out, lo,
                                    hi, zp, yn, rvp, resn);
        }
    }
}

/* (the input, weights and scratch restrict parameters, as the kernel's own; y may be the residual) */
static inline void AOTC_Q(x86_dense_run)(const AOTC_Q(x86_djob) *J, int32_t begin, int32_t end, aotc_qx86_lane *L,
                                         const QT *AOTC_RESTRICT x, const int8_t *AOTC_RESTRICT w,
                                         uint8_t *AOTC_RESTRICT scratch) {
    const aotc_qconv_params *p = J->p;
    uint8_t *const work = aotc_qconv_work(p, scratch, aotc_qconv_patch_bytes(p, J->tile), aotc_qconv_dense_work_bytes(p),
                                          AOTC_QX86_ALIGN);
    const int32_t cg = J->cg, mg = J->mg, kq = J->kq, npat = J->npat, stride = J->stride, count = J->count;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const int64_t kp = J->kp, step = (int64_t)J->ics * plane_in;
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero), zfill = _mm512_set1_epi8((char)(QT)p->x_zero);
    const AOTC_Q(x86_resid) *const rvp = J->r != NULL ? &J->rv : NULL;
    const uint8_t (*const tap)[4] = (const uint8_t (*)[4])J->tap;
    int32_t *const wbuf = (int32_t *)(void *)work;
    uint8_t *const cache = work + (J->wbytes + 63) / 64 * 64;
    AOTC_Q(x86_dseg) seg[AOTC_QX86_PAT], seg3[3][AOTC_QX86_PAT];
    int32_t i, e;
    if (!L->init) {
        for (e = 0; e < count; ++e) ((AOTC_Q(x86_dblock) *)(void *)(cache + (int64_t)e * stride))->key = INT32_MIN;
        L->init = 1, L->next = 0;
    }
    for (i = begin; i < end; ++i) {
        const int32_t r = J->quads ? i / J->chunks % J->ranges : i % J->ranges;
        const int32_t ng = J->quads ? i / (J->chunks * J->ranges) : i / (J->ranges * J->chunks * J->passes);
        const int32_t n = ng / p->group, g = ng % p->group, r0 = r * J->run;
        const int32_t r1 = r0 + J->run < plane_out ? r0 + J->run : plane_out;
        const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
        QT *yn = J->y + (int64_t)n * p->out_c * plane_out;
        const QT *resn = J->res != NULL ? J->res + (int64_t)n * p->out_c * plane_out : NULL;
        int32_t oc, pos0, nc;
        if (J->quads) { /* packed weights: the range's blocks' quad rows made once into the scratch */
            const int32_t key = i / J->chunks, ch = i % J->chunks;
            const int32_t c0 = g * mg + ch * J->cstep, c1 = c0 + J->cstep < (g + 1) * mg ? c0 + J->cstep : (g + 1) * mg;
            for (pos0 = r0; pos0 < r1;) { /* a batch of up to nblk blocks */
                int32_t nb, made = 0; /* made: the blocks of over AOTC_QX86_NARROW lanes summed for c0's channels */
                int8_t q3[16]; /* (with made) the batch's blocks made in threes, summed for c0's first 8 channels only */
                if (L->held == key) { /* the whole range, made for the item before */
                    pos0 = r1;
                } else {
                    const int32_t first = pos0;
                    made = 1;
                    for (nb = 0; nb < J->nblk && pos0 < r1; ++nb) {
                        int32_t shift;
                        q3[nb] = 0;
                        if (!p->w_zero_any && nb + 3 <= J->nblk && count >= 3) {
                            /* three blocks of over 8 lanes: their rows made together, c0's first 8 channels summed
                             * (x86_dense_dotq3x8), where the three stay in the cache (a block made may take the
                             * slot of one found before it: then one at a time, below) */
                            const AOTC_Q(x86_dblock) *b3[3];
                            const uint8_t *iv3[3];
                            int32_t k3[3], sh3[3], t, p3 = pos0, ok = 1, pad3 = 0;
                            for (t = 0; t < 3 && ok; ++t) {
                                ok = p3 < r1;
                                if (!ok) break;
                                b3[t] = AOTC_Q(x86_dense_get)(p, p3, r1, npat, tap, cache, stride, count, &L->next, &sh3[t]);
                                k3[t] = b3[t]->key, ok = b3[t]->lanes > 8, p3 += b3[t]->lanes;
                            }
                            if (ok && b3[0]->key == k3[0] && b3[1]->key == k3[1]) {
                                __m512i a3[24];
                                for (t = 0; t < 3; ++t) {
                                    AOTC_Q(x86_dense_segs)(b3[t], sh3[t], J->pat, npat, plane_in, p->k_h, seg3[t]);
                                    iv3[t] = (const uint8_t *)b3[t] + AOTC_QX86_DHEAD, pad3 |= b3[t]->pad;
                                }
                                AOTC_Q(x86_dense_dotq3x8)(xg, step, (const AOTC_Q(x86_dseg) (*)[AOTC_QX86_PAT])seg3, iv3, pad3,
                                                          npat, kq, J->qfast, J->qsafe,
                                                          (const int32_t *)(const void *)(w + (int64_t)c0 * kp), zfill, a3,
                                                          scratch + (int64_t)nb * kq * 64);
                                AOTC_QX86_TRACE(dotq3);
                                for (t = 0; t < 3; ++t) {
                                    AOTC_Q(x86_dense_store8)(J, a3 + 8 * t, c0, AOTC_Q(x86_lanes)(b3[t]->lanes), pos0,
                                                             plane_out, yn, rvp, resn);
                                    L->bpos[nb + t] = pos0, L->blanes[nb + t] = b3[t]->lanes, q3[nb + t] = 1;
                                    pos0 += b3[t]->lanes;
                                }
                                nb += 2;
                                continue;
                            }
                        }
                        const AOTC_Q(x86_dblock) *bk = AOTC_Q(x86_dense_get)(p, pos0, r1, npat, tap, cache, stride, count,
                                                                             &L->next, &shift);
                        const uint8_t *iv = (const uint8_t *)bk + AOTC_QX86_DHEAD;
                        uint8_t *const qs = scratch + (int64_t)nb * kq * 64;
                        AOTC_Q(x86_dense_segs)(bk, shift, J->pat, npat, plane_in, p->k_h, seg);
                        if (bk->lanes > AOTC_QX86_NARROW) { /* made while c0's 16 channels are summed */
                            __m512i a[16], s;
                            AOTC_Q(x86_dense_dotq16)(xg, step, seg, iv, bk->pad, npat, kq, J->qfast, J->qsafe,
                                                     (const int32_t *)(const void *)(w + (int64_t)c0 * kp), zfill,
                                                     p->w_zero_any, a, &s, qs);
                            AOTC_QX86_TRACE(dotq);
                            AOTC_Q(x86_dense_store)(p, a, s, c0, 16, AOTC_Q(x86_lanes)(bk->lanes), pos0, plane_out, lo, hi,
                                                    zp, yn, rvp, resn);
                        } else {
                            AOTC_Q(x86_dense_quads)(xg, step, seg, iv, bk->pad, npat, kq, J->qfast, J->qsafe, zfill, qs);
                        }
                        L->bpos[nb] = pos0, L->blanes[nb] = bk->lanes;
                        pos0 += bk->lanes;
                    }
                    L->nb = nb;
                    L->held = first == r0 && pos0 >= r1 ? key : -1;
                }
                AOTC_Q(x86_dense_batch)(J, L, w, scratch, c0, c1, made, q3, yn, resn);
            }
        } else {
            const int32_t ps = i / (J->ranges * J->chunks) % J->passes, ch = i / J->ranges % J->chunks;
            const int32_t c0p = g * mg + ps * J->pass, c1p = c0p + J->pass < (g + 1) * mg ? c0p + J->pass : (g + 1) * mg;
            const int32_t c0 = c0p + ch * J->cstep, c1 = c0 + J->cstep < c1p ? c0 + J->cstep : c1p;
            const int32_t wkey = (g * J->passes + ps) * J->chunks + ch;
            /* the pass's weights: in place when packed, else re-ordered in the work block */
            const int32_t *const wpass = p->w_packed ? (const int32_t *)(const void *)(w + (int64_t)c0 * kp)
                                                     : (const int32_t *)(const void *)wbuf;
            const int8_t *pf = NULL, *pf_end = NULL;
            int64_t pf_step = 0;
            if (c0 >= c1) continue;
            if (!p->w_packed && L->wkey != wkey) {
                for (oc = c0; oc < c1; oc += nc) {
                    int32_t *dst = (int32_t *)(void *)wbuf + (int64_t)(oc - c0) * kq;
                    nc = c1 - oc < J->nmax ? c1 - oc : J->nmax;
                    AOTC_Q(x86_dense_weights)(w + oc * kp, kp, nc, nc > 8 ? 16 : 8, kq, dst);
                }
                L->wkey = wkey;
            }
            if (J->ranges == 1 && J->chunks == 1) {
                /* the next pass's weight rows (contiguous) are prefetched into L2 a slice per block, so that their
                 * re-ordering does not wait on memory */
                pf = w + (int64_t)c1 * kp;
                pf_end = w + (int64_t)((g + 1) * mg - c1 < J->pass ? (g + 1) * mg : c1 + J->pass) * kp;
                pf_step = ((pf_end - pf) / ((plane_out + 15) / 16) + 63) / 64 * 64;
            }
            for (pos0 = r0; pos0 < r1;) {
                int32_t shift, j;
                const AOTC_Q(x86_dblock) *bk;
                const uint8_t *iv;
                const int32_t *wp = wpass;
                __mmask16 lm;
                for (j = 0; j < pf_step && pf < pf_end; j += 64, pf += 64) _mm_prefetch((const char *)pf, _MM_HINT_T1);
                bk = AOTC_Q(x86_dense_get)(p, pos0, r1, npat, tap, cache, stride, count, &L->next, &shift);
                iv = (const uint8_t *)bk + AOTC_QX86_DHEAD;
                lm = AOTC_Q(x86_lanes)(bk->lanes);
                AOTC_Q(x86_dense_segs)(bk, shift, J->pat, npat, plane_in, p->k_h, seg);
                for (oc = c0; oc < c1; oc += nc) {
                    __m512i a[16], s;
                    nc = c1 - oc < J->nmax ? c1 - oc : J->nmax;
#define QX86_DENSE_CALL(f)                                                                                 \
    f(xg, step, seg, iv, bk->pad, npat, kq, J->qfast, J->qsafe, wp, zfill, p->w_zero_any, a, &s, NULL)
                    if (bk->lanes <= AOTC_QX86_NARROW && nc > 8) { /* 16 channels a vector */
                        AOTC_Q(x86_dense_narrow)(xg, step, seg, iv, bk->pad, npat, kq, J->qfast, J->qsafe, wp, zfill,
                                                 p->w_zero_any, bk->lanes, a, &s);
                        AOTC_Q(x86_narrow_store)(p, a, s, oc, nc, bk->lanes, pos0, plane_out, yn, J->r, resn);
                        wp += (int64_t)kq * 16;
                        continue;
                    }
                    if (bk->lanes > 8) {
                        if (nc > 8) QX86_DENSE_CALL(AOTC_Q(x86_dense_dot16));
                        else QX86_DENSE_CALL(AOTC_Q(x86_dense_dot8));
                    } else {
                        if (nc > 8) QX86_DENSE_CALL(AOTC_Q(x86_dense_dot16y));
                        else QX86_DENSE_CALL(AOTC_Q(x86_dense_dot8y));
                    }
#undef QX86_DENSE_CALL
                    wp += (int64_t)kq * (nc > 8 ? 16 : 8);
                    AOTC_Q(x86_dense_store)(p, a, s, oc, nc, lm, pos0, plane_out, lo, hi, zp, yn, rvp, resn);
                }
                pos0 += bk->lanes;
            }
        }
    }
}

static void AOTC_Q(x86_dense_items)(void *ctx, int32_t begin, int32_t end) {
    const AOTC_Q(x86_djob) *J = (const AOTC_Q(x86_djob) *)ctx;
    const int32_t self = aotc_thread_index();
    AOTC_Q(x86_dense_run)(J, begin, end, &J->lane[self], J->x, J->w, J->scratch + self * J->lane_bytes);
}

/* QLinearConv on dense windows (above): 0 (nothing done) where the kernel does not suit them (k_w < 3,
 * more than 64 taps a channel or 40 patterns, a window over 62 bytes for one lane, more than
 * AOTC_QX86_DBUF bytes for 8 channels' weights and AOTC_QX86_DKEEP blocks: aotc_qx86_dense_plan) or the
 * work block is not given. It keeps as many blocks as the work holds (aotc_qx86_dense_kept): all of a plane's
 * where the step spares the memory, else fewer, made again when their turn comes round. Its items
 * (x86_dense_items) on the pool where the conv splits (p->lanes: each thread a lane of the scratch). */
static int AOTC_Q(qconv_dense)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                               const int8_t *AOTC_RESTRICT w, QT *y, uint8_t *AOTC_RESTRICT scratch,
                               const aotc_qresidual_params *r, const QT *res) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k_h = p->k_h, k_w = p->k_w, taps = k_h * k_w;
    const int32_t kq = (cg * taps + 3) / 4, period = taps / (taps % 4 == 0 ? 4 : taps % 2 == 0 ? 2 : 1);
    const int32_t qsafe0 = ((cg * k_h - 1) * k_w + 3) / 4;
    /* quads whose rows A and B lie in channels whose 64-byte windows end inside the group's planes */
    const int32_t dsafe = (63 + p->in_h * p->in_w - 1) / (p->in_h * p->in_w);
    const int32_t qfast0 = cg > dsafe ? (((cg - dsafe) * k_h - 1) * k_w + 3) / 4 : 0;
    const int32_t plane_out = p->out_h * p->out_w;
    const int split = aotc_qx86_split(p, (int64_t)p->batch * p->out_c * plane_out * cg * taps);
    /* the work block: a pass's weights (as many channels as fit beside AOTC_QX86_DKEEP blocks in
     * AOTC_QX86_DBUF bytes), then `count` kept blocks of `stride` bytes. Packed weights (w_packed: blocks of 16
     * channels already as a pass re-orders them) are read where they are, in passes of as many channels as
     * would have been re-ordered (`pass` output channels, `nmax` a register block) */
    int32_t stride = 0, pass = 0, nmax = 0, wbytes = 0, count = 0, pp, j, items;
    const int32_t npat = aotc_qx86_dense_plan(p, &stride, &pass, &nmax, &wbytes, &count);
    uint8_t *const work = aotc_qconv_work(p, scratch, aotc_qconv_patch_bytes(p, tile), aotc_qconv_dense_work_bytes(p),
                                          AOTC_QX86_ALIGN);
    aotc_qx86_lane lane[AOTC_QX86_MAX_LANES];
    AOTC_Q(x86_djob) J;
    if (npat == 0 || work == NULL) return 0;
    J.p = p, J.x = x, J.w = w, J.y = y, J.scratch = scratch, J.r = r, J.res = res, J.tile = tile, J.lane = lane;
    J.rv = r != NULL ? AOTC_Q(x86_resid_init)(r) : (AOTC_Q(x86_resid)){0};
    J.rq = AOTC_Q(x86_rq_init)(p, 4 * kq);
    J.lane_bytes = aotc_qconv_lane_bytes(aotc_qconv_patch_bytes(p, tile), p);
    J.kp = 4 * (int64_t)kq, J.cg = cg, J.mg = mg, J.kq = kq, J.ics = 4 * period / taps, J.npat = npat;
    J.qsafe = qsafe0 < kq ? qsafe0 : kq, J.qfast = qfast0 < J.qsafe ? qfast0 : J.qsafe;
    J.stride = stride, J.pass = pass, J.nmax = nmax, J.wbytes = wbytes;
    J.count = aotc_qx86_dense_kept(p, wbytes, stride, count); /* blocks the work keeps */
    /* blocks whose quad rows the scratch holds (a patch block of tile positions: (tile + 15) / 16 x 16
     * kp bytes), made once where the output channels take more than one register block of 16 and read
     * back by each (the stem and ResNet-18's 3 x 3 convs: 5 % fewer cycles in layers 2-3, 14 % in 4) */
    J.nblk = (tile + 15) / 16 < 16 ? (tile + 15) / 16 : 16;
    /* whole threes for x86_dense_dotb3x8; on one thread, a plane of 16 n + 1 positions (7 x 7) in one batch of
     * n + 1 blocks where the patch block holds them, the last block's one lane summed with the three before it
     * (x86_dense_dotb3x8n: alone, its quad rows made and summed in a batch of their own) */
    if (J.nblk > 3 && !p->w_zero_any &&
        !(!split && J.nblk % 3 == 1 && plane_out % 16 == 1 && (plane_out + 15) / 16 == J.nblk))
        J.nblk -= J.nblk % 3;
    J.quads = p->w_packed && scratch != NULL && J.nblk > 0 && mg > 16;
    for (pp = 0; pp < npat; ++pp) { /* quad pp's taps 4 pp + j of the kernels from its first channel */
        const int32_t ta = 4 * pp, ra = ta / k_w; /* A: the row (channel, kernel row) of its first tap */
        J.pat[pp].ic_a = ta / taps, J.pat[pp].kh_a = ra % k_h;
        J.pat[pp].ic_b = (ra + 1) / k_h, J.pat[pp].kh_b = (ra + 1) % k_h;
        for (j = 0; j < 4; ++j) J.tap[pp][j] = (uint8_t)(((ta + j) % taps) | ((ta + j) / k_w != ra ? 128 : 0));
    }
    /* with the quads made once, a split conv's ranges hold at most nblk blocks where they can, so that a thread
     * taking several chunks of a range's channels makes its quads once */
    J.run = aotc_qx86_run(p, split, J.quads ? J.nblk * 16 : 2 * AOTC_QCONV_POOL_RUN);
    J.ranges = (plane_out + J.run - 1) / J.run;
    J.passes = J.quads ? 1 : (mg + pass - 1) / pass;
    {
        const int32_t span = J.quads ? mg : pass < mg ? pass : mg; /* the channels a chunk cuts */
        J.chunks = aotc_qx86_chunks(p->batch * p->group * J.ranges * J.passes, (span + nmax - 1) / nmax, split);
        J.cstep = ((span + J.chunks - 1) / J.chunks + nmax - 1) / nmax * nmax;
        J.chunks = (span + J.cstep - 1) / J.cstep;
    }
    AOTC_Q(x86_lanes_init)(lane);
    items = p->batch * p->group * J.ranges * J.passes * J.chunks;
    if (split) aotc_parallel_for(AOTC_Q(x86_dense_items), &J, items);
    else AOTC_Q(x86_dense_items)(&J, 0, items);
    return 1;
}
#endif

/* QLinearConv on patches (aotc_qconv_patches_*) with VNNI: 6 output channels x up to 64 positions summed
 * at a time in registers (vpdpbusd of a quad row of the patch against each channel's weight word),
 * requantised in registers and stored as masked runs. Its work as items (image and group, block of `tile`
 * positions, chunk of channels), block-major: one thread runs them all, or (p->lanes, aotc_qx86_split) the
 * pool, each thread gathering its blocks' patches in its own lane of the scratch (lane_bytes apart) and keeping
 * the last block it gathered for its next item; the channels are cut into chunks only where blocks are few. */
typedef struct {
    const aotc_qconv_params *p;
    const QT *x;
    const int8_t *w;
    QT *y;
    uint8_t *scratch;
    int64_t lane_bytes;
    int32_t tile, blocks, chunks, cstep, pointwise;
    aotc_qx86_lane *lane;
} AOTC_Q(x86_pjob);

#ifndef QX86_DOT6_SWITCH
/* x86_dot6xNV for nv (1 to 4) vectors of 16 columns, the quad step a constant in each call (a variable one cost ~4 %
 * on pointwise nets): p, pq, stride, wr, kq, a and init in scope */
#define QX86_DOT6_CALL(NV)                                                                                 \
    if (AOTC_QCONV_PACKED(p)) AOTC_Q(x86_dot6x##NV)(pq, stride, wr, kq, 64, a, init);                         \
    else AOTC_Q(x86_dot6x##NV)(pq, stride, wr, kq, 4, a, init);
#define QX86_DOT6_SWITCH(nv)                                                                               \
    switch (nv) {                                                                                          \
    case 4: QX86_DOT6_CALL(4) break;                                                                       \
    case 3: QX86_DOT6_CALL(3) break;                                                                       \
    case 2: QX86_DOT6_CALL(2) break;                                                                       \
    default: QX86_DOT6_CALL(1) break;                                                                      \
    }
#endif

/* x86_dot6xNV for a conv's last nb < 5 channels of its blocks of 6: on 4 or 2 channels, not 6 (the 1 x 1 convs of
 * 16 and 32 outputs, a QDQ MobileNetV2's, summed a ninth of their products for channels past the last; those of 64,
 * 160, 320 and 1280 and ResNet-18's stem 1-3 %). Out of line: once a conv's block of positions. */
static __attribute__((noinline)) void AOTC_Q(x86_dot_tail)(const aotc_qconv_params *p, int32_t nb, int32_t nv,
                                                          const uint8_t *pq, int64_t stride, const int8_t *const *wr,
                                                          int32_t kq, __m512i *a, const int32_t *init) {
    AOTC_QX86_TRACE(tail);
#define QX86_TAIL_CALL(NC, QS)                                                                             \
    switch (nv) {                                                                                          \
    case 4: AOTC_Q(x86_dot##NC##x4)(pq, stride, wr, kq, QS, a, init); break;                              \
    case 3: AOTC_Q(x86_dot##NC##x3)(pq, stride, wr, kq, QS, a, init); break;                              \
    case 2: AOTC_Q(x86_dot##NC##x2)(pq, stride, wr, kq, QS, a, init); break;                              \
    default: AOTC_Q(x86_dot##NC##x1)(pq, stride, wr, kq, QS, a, init); break;                             \
    }
    if (AOTC_QCONV_PACKED(p)) {
        if (nb > 2) QX86_TAIL_CALL(4, 64)
        else QX86_TAIL_CALL(2, 64)
    } else {
        if (nb > 2) QX86_TAIL_CALL(4, 4)
        else QX86_TAIL_CALL(2, 4)
    }
#undef QX86_TAIL_CALL
}

#ifndef AOTC_QX86_COLUMN
#define AOTC_QX86_COLUMN 4096 /* x86_patch_column's kp at most (its column on the stack) */
#endif
/* Position t of the patch block at scratch (width positions a quad row, kq rows) for channels [c0, c1) of
 * unpacked weights without zero points, into yt[c * plane_out]: the position's quads gathered into one row of kp
 * bytes, each channel's weight row summed against it by vpdpbusd 64 bytes a step, 16 channels requantised at a time
 * as x86_requant16 does it. (A 7 x 7 plane's 49th position alone in its vector of 16 took a quarter of the 1 x 1
 * convs' dot products there.) */
static void AOTC_Q(x86_patch_column)(const aotc_qconv_params *p, const int8_t *AOTC_RESTRICT w,
                                     const uint8_t *AOTC_RESTRICT scratch, int32_t width, int32_t kq, int32_t t,
                                     int32_t c0, int32_t c1, QT *AOTC_RESTRICT yt, int64_t plane_out) {
    const int32_t kp = kq * 4;
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero);
    uint8_t col[AOTC_QX86_COLUMN];
    int32_t q, c, j, i;
    AOTC_QX86_TRACE(column);
    for (q = 0; q < kq; ++q) memcpy(col + 4 * q, scratch + ((int64_t)q * width + t) * 4, 4);
    for (c = c0; c < c1; c += 16) {
        const int32_t nc = c1 - c < 16 ? c1 - c : 16;
        const __mmask16 m = AOTC_Q(x86_lanes)(nc);
        int32_t sums[16];
        QT out[16];
        for (j = 0; j < nc; ++j) {
            const int8_t *wr = aotc_qconv_wrow(p, w, c + j, kp);
            __m512i acc = _mm512_setzero_si512();
            for (i = 0; i < kp; i += 64) {
                const __mmask64 lm = kp - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (kp - i)) - 1u;
                acc = _mm512_dpbusd_epi32(acc, _mm512_maskz_loadu_epi8(lm, (const void *)(col + i)),
                                          _mm512_maskz_loadu_epi8(lm, (const void *)(wr + i)));
            }
            sums[j] = _mm512_reduce_add_epi32(acc);
        }
        _mm_storeu_si128((__m128i *)(void *)out,
                         AOTC_Q(x86_requant16)(_mm512_add_epi32(_mm512_maskz_loadu_epi32(m, sums),
                                                                _mm512_maskz_loadu_epi32(m, p->bias + c)),
                                               _mm512_maskz_loadu_ps(m, p->scale + c), lo, hi, zp));
        for (j = 0; j < nc; ++j) yt[(int64_t)(c + j) * plane_out] = out[j];
    }
}

/* qconv_patches_vnni on one thread: its items (below) in this function's loops, which gcc compiles to the tighter
 * code (there, inlined, the dot products ran out of vector registers and reloaded the patch rows at each weight:
 * the 1 x 1 convs of an int8 MobileNetV2 took 10-20 % longer) */
static void AOTC_Q(qconv_patches_one)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                                       const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y,
                                       uint8_t *AOTC_RESTRICT scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t kq = (k + 3) / 4, kp = kq * 4;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const int pointwise = p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
                          p->pad_left == 0 && p->in_w == p->out_w && p->in_h == p->out_h;
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero), ones = _mm512_set1_epi8(1);
    const int32_t *const bias = p->bias;
    const float *const scale = p->scale;
    /* the clamp in bytes (x86_requant64) where it is whole numbers inside QT's range, as the compiler writes it */
    const int whole = p->y_lo >= (float)QT_MIN - 256.0f && p->y_hi <= (float)QT_MIN + 511.0f && p->y_lo <= p->y_hi &&
                      p->y_lo == (float)(int32_t)p->y_lo && p->y_hi == (float)(int32_t)p->y_hi &&
                      (int32_t)p->y_lo + p->y_zero >= QT_MIN && (int32_t)p->y_hi + p->y_zero <= QT_MIN + 255;
    const __m512i zp16 = _mm512_set1_epi16((int16_t)p->y_zero);
    const __m512i qlo = _mm512_set1_epi8((char)(whole ? (int32_t)p->y_lo + p->y_zero : 0));
    const __m512i qhi = _mm512_set1_epi8((char)(whole ? (int32_t)p->y_hi + p->y_zero : 0));
    /* the clamp in bytes only where it is narrower than QT's range (the packs saturate to that) */
    const int clamp = whole && ((int32_t)p->y_lo + p->y_zero > QT_MIN || (int32_t)p->y_hi + p->y_zero < QT_MAX);
    const int guard = whole && AOTC_Q(x86_requant_guard)(p, kp);
    /* a plane's last lane alone in its vector by x86_patch_column */
    const int column_ok = !p->w_zero_any && !AOTC_QCONV_PACKED(p) && kp <= AOTC_QX86_COLUMN;
    int32_t sums[AOTC_QCONV_PATCH_TILE];
    int32_t n, g, oc, p0, t0, j, q, column;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            QT *yn = y + (int64_t)n * p->out_c * plane_out;
            {
                const int32_t c0 = g * mg, cn = mg;
                for (p0 = 0; p0 < plane_out; p0 += tile) {
                    /* as the plain path: whole lanes, the last block re-reading some of the one before */
                    const int32_t np = plane_out - p0 < tile ? plane_out - p0 : tile;
                    const int32_t width = (np + 15) / 16 * 16;
                    const int32_t q0 = width <= plane_out ? p0 + np - width : 0;
                    const int32_t real = width <= plane_out ? width : plane_out;
                    AOTC_Q(x86_patch_quads)(p, xg, k, q0, real, width, kq, pointwise, scratch);
                    if (p->w_zero_any) { /* each patch's sum (the padding rows hold the zero point too) */
                        for (t0 = 0; t0 < width; t0 += 16) {
                            __m512i s = _mm512_setzero_si512();
                            for (q = 0; q < kq; ++q) {
                                s = _mm512_dpbusd_epi32(s, _mm512_loadu_si512((const void *)(scratch + ((int64_t)q * width + t0) * 4)),
                                                        ones);
                            }
                            _mm512_storeu_si512((void *)(sums + t0), s);
                        }
                    }
                    column = -1;
                    for (oc = c0; oc < c0 + cn; oc += 6) { /* 6 channels x up to 64 positions at a time */
                        const int32_t nb = c0 + cn - oc < 6 ? c0 + cn - oc : 6;
                        const int8_t *wr[6];
                        int32_t binit[6]; /* without weight zero points the sums start at the bias */
                        const int32_t *const init = p->w_zero_any ? NULL : binit;
                        for (j = 0; j < 6; ++j) {
                            wr[j] = aotc_qconv_wrow(p, w, oc + (j < nb ? j : nb - 1), kp); /* past nb: again */
                            binit[j] = bias[oc + (j < nb ? j : nb - 1)];
                        }
                        for (t0 = 0; t0 < width; t0 += 64) {
                            const uint8_t *pq = scratch + (int64_t)t0 * 4;
                            const int64_t stride = (int64_t)width * 4;
                            int32_t nv = (width - t0) / 16 < 4 ? (width - t0) / 16 : 4;
                            __m512i a[24];
                            int32_t v;
                            if (nv > 1 && real - t0 - 16 * (nv - 1) == 1 && column_ok) { /* its last lane alone */
                                --nv;
                                column = t0 + 16 * nv;
                            }
                            if (nb > 4) {
                                QX86_DOT6_SWITCH(nv)
                            } else {
                                AOTC_Q(x86_dot_tail)(p, nb, nv, pq, stride, wr, kq, a, init);
                            }
                            if (!p->w_zero_any) { /* per channel: its scale once, its 64 positions one store */
                                __mmask64 m64 = 0;
                                for (v = 0; v < nv; ++v) m64 |= (__mmask64)AOTC_Q(x86_lanes)(real - t0 - 16 * v) << (16 * v);
                                AOTC_QX86_TRACE(requant_channel);
                                if (whole) { /* (guard and clamp the same for every channel: four copies, no tests) */
                                    QT *yc = yn + (int64_t)oc * plane_out + q0 + t0;
                                    if (guard && clamp) AOTC_Q(x86_store64)(a, nb, nv, scale + oc, 1, hi, zp16, qlo, qhi, 1, yc, plane_out, m64);
                                    else if (guard) AOTC_Q(x86_store64)(a, nb, nv, scale + oc, 1, hi, zp16, qlo, qhi, 0, yc, plane_out, m64);
                                    else if (clamp) AOTC_Q(x86_store64)(a, nb, nv, scale + oc, 0, hi, zp16, qlo, qhi, 1, yc, plane_out, m64);
                                    else AOTC_Q(x86_store64)(a, nb, nv, scale + oc, 0, hi, zp16, qlo, qhi, 0, yc, plane_out, m64);
                                    continue;
                                }
                                for (j = 0; j < nb; ++j) {
                                    const __m512 sc = _mm512_set1_ps(scale[oc + j]);
                                    QT *yc = yn + (int64_t)(oc + j) * plane_out + q0 + t0;
                                    __m512i r[4];
                                    for (v = 0; v < 4; ++v) {
                                        r[v] = v < nv ? AOTC_Q(x86_requant16_lanes)(a[4 * j + v], sc, lo, hi, zp) : _mm512_setzero_si512();
                                    }
                                    _mm512_mask_storeu_epi8((void *)yc, m64, AOTC_Q(x86_pack64)(r[0], r[1], r[2], r[3]));
                                }
                                continue;
                            }
                            for (v = 0; v < nv; ++v) {
                                const int32_t t = t0 + 16 * v;
                                const __mmask16 m = AOTC_Q(x86_lanes)(real - t);
                                for (j = 0; j < nb; ++j) {
                                    const int32_t c = oc + j;
                                    __m512i s = _mm512_add_epi32(a[4 * j + v], _mm512_set1_epi32(p->bias[c]));
                                    if (p->w_zero_any) {
                                        s = _mm512_sub_epi32(s, _mm512_mullo_epi32(_mm512_set1_epi32(p->w_zero[c]),
                                                                                   _mm512_loadu_si512((const void *)(sums + t))));
                                    }
                                    _mm_mask_storeu_epi8((void *)(yn + (int64_t)c * plane_out + q0 + t), m,
                                                         AOTC_Q(x86_requant16)(s, _mm512_set1_ps(p->scale[c]), lo, hi, zp));
                                }
                            }
                        }
                    }
                    if (column >= 0) {
                        AOTC_Q(x86_patch_column)(p, w, scratch, width, kq, column, c0, c0 + cn, yn + q0 + column, plane_out);
                    }
            }
            }
        }
    }
}

/* x86_dot6xNV out of line for the split conv's items (inlined there, gcc ran out of vector registers and reloaded
 * the patch rows at each weight) */
static __attribute__((noinline)) void AOTC_Q(x86_dot6_any)(const aotc_qconv_params *p, int32_t nv, const uint8_t *pq,
                                                          int64_t stride, const int8_t *const *wr, int32_t kq,
                                                          __m512i *a) {
    const int32_t *const init = NULL;
    QX86_DOT6_SWITCH(nv)
}

/* (the buffers as restrict parameters, as the kernel's own: without them gcc reloaded the channels' constants
 * after each store, and the 1 x 1 convs of an int8 MobileNetV2 took 10-22 % longer) */
static inline void AOTC_Q(x86_patches_run)(const AOTC_Q(x86_pjob) *J, int32_t begin, int32_t end, aotc_qx86_lane *L,
                                           const QT *AOTC_RESTRICT x, const int8_t *AOTC_RESTRICT w,
                                           QT *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch) {
    const aotc_qconv_params *p = J->p;
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t kq = (k + 3) / 4, kp = kq * 4, tile = J->tile;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero), ones = _mm512_set1_epi8(1);
    int32_t *const sums = L->sums;
    int32_t i, oc, t0, j, q;
    for (i = begin; i < end; ++i) {
        const int32_t key = i / J->chunks, ch = i % J->chunks, ng = key / J->blocks, n = ng / p->group, g = ng % p->group;
        const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
        QT *yn = y + (int64_t)n * p->out_c * plane_out;
        const int32_t p0 = key % J->blocks * tile;
        /* as the plain path: whole lanes, the last block re-reading some of the one before (not storing them again) */
        const int32_t np = plane_out - p0 < tile ? plane_out - p0 : tile;
        const int32_t width = (np + 15) / 16 * 16;
        const int32_t q0 = width <= plane_out ? p0 + np - width : 0;
        const int32_t real = width <= plane_out ? width : plane_out;
        const int32_t c0 = g * mg + ch * J->cstep, c1 = c0 + J->cstep < (g + 1) * mg ? c0 + J->cstep : (g + 1) * mg;
        if (L->held != key) {
            AOTC_Q(x86_patch_quads)(p, xg, k, q0, real, width, kq, J->pointwise, scratch);
            if (p->w_zero_any) { /* each patch's sum (the padding rows hold the zero point too) */
                for (t0 = 0; t0 < width; t0 += 16) {
                    __m512i s = _mm512_setzero_si512();
                    for (q = 0; q < kq; ++q) {
                        s = _mm512_dpbusd_epi32(s, _mm512_loadu_si512((const void *)(scratch + ((int64_t)q * width + t0) * 4)),
                                                ones);
                    }
                    _mm512_storeu_si512((void *)(sums + t0), s);
                }
            }
            L->held = key;
        }
        for (oc = c0; oc < c1; oc += 6) { /* 6 channels x up to 64 positions at a time */
            const int32_t nb = c1 - oc < 6 ? c1 - oc : 6;
            const int8_t *wr[6];
            for (j = 0; j < 6; ++j) wr[j] = aotc_qconv_wrow(p, w, oc + (j < nb ? j : nb - 1), kp); /* past nb: again */
            for (t0 = 0; t0 < width; t0 += 64) {
                const uint8_t *pq = scratch + (int64_t)t0 * 4;
                const int64_t stride = (int64_t)width * 4;
                const int32_t nv = (width - t0) / 16 < 4 ? (width - t0) / 16 : 4;
                __m512i a[24];
                int32_t v;
                if (nb > 4) AOTC_Q(x86_dot6_any)(p, nv, pq, stride, wr, kq, a);
                else AOTC_Q(x86_dot_tail)(p, nb, nv, pq, stride, wr, kq, a, NULL);
                for (v = 0; v < nv; ++v) {
                    const int32_t t = t0 + 16 * v;
                    /* the block's positions from p0 (those before it are the block before's) */
                    const __mmask16 m = AOTC_Q(x86_lanes)(real - t) & (__mmask16)~AOTC_Q(x86_lanes)(p0 - q0 - t);
                    for (j = 0; j < nb; ++j) {
                        const int32_t c = oc + j;
                        __m512i s = _mm512_add_epi32(a[4 * j + v], _mm512_set1_epi32(p->bias[c]));
                        if (p->w_zero_any) {
                            s = _mm512_sub_epi32(s, _mm512_mullo_epi32(_mm512_set1_epi32(p->w_zero[c]),
                                                                       _mm512_loadu_si512((const void *)(sums + t))));
                        }
                        _mm_mask_storeu_epi8((void *)(yn + (int64_t)c * plane_out + q0 + t), m,
                                             AOTC_Q(x86_requant16)(s, _mm512_set1_ps(p->scale[c]), lo, hi, zp));
                    }
                }
            }
        }
    }
}

static void AOTC_Q(x86_patches_items)(void *ctx, int32_t begin, int32_t end) {
    const AOTC_Q(x86_pjob) *J = (const AOTC_Q(x86_pjob) *)ctx;
    const int32_t self = aotc_thread_index();
    AOTC_Q(x86_patches_run)(J, begin, end, &J->lane[self], J->x, J->w, J->y, J->scratch + self * J->lane_bytes);
}

/* qconv_patches_vnni's items, on the pool where the conv splits (its patch blocks `tile` positions in lanes of
 * the scratch lane_bytes apart) */
static void AOTC_Q(qconv_patches_vnni)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                                       const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y,
                                       uint8_t *AOTC_RESTRICT scratch, int64_t lane_bytes) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, plane_out = p->out_h * p->out_w;
    const int split = aotc_qx86_split(p, (int64_t)p->batch * p->out_c * plane_out * cg * p->k_h * p->k_w);
    aotc_qx86_lane lane[AOTC_QX86_MAX_LANES];
    AOTC_Q(x86_pjob) J;
    J.p = p, J.x = x, J.w = w, J.y = y, J.scratch = scratch, J.lane_bytes = lane_bytes, J.tile = tile, J.lane = lane;
    J.pointwise = p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
                  p->pad_left == 0 && p->in_w == p->out_w && p->in_h == p->out_h;
    J.blocks = (plane_out + tile - 1) / tile;
    J.chunks = aotc_qx86_chunks(p->batch * p->group * J.blocks, (mg + 5) / 6, split);
    J.cstep = ((mg + J.chunks - 1) / J.chunks + 5) / 6 * 6;
    J.chunks = (mg + J.cstep - 1) / J.cstep;
    if (!split) {
        AOTC_Q(qconv_patches_one)(p, tile, x, w, y, scratch);
        return;
    }
    AOTC_Q(x86_lanes_init)(lane);
    aotc_parallel_for(AOTC_Q(x86_patches_items), &J, p->batch * p->group * J.blocks * J.chunks);
}

/* qconv_patches_vnni with no patch block (tile 0): one block of 16 positions' patch in the work block
 * (aotc_qconv_patches_x86_work_bytes), 0 (nothing done) where it would take more than AOTC_QX86_WBUF bytes
 * or the work block is smaller. */
static int AOTC_Q(qconv_patches_work)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                      const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, uint8_t *scratch) {
    uint8_t *const work = aotc_qconv_work(p, scratch, 0, aotc_qconv_block_work_bytes(p, 0), AOTC_QX86_ALIGN);
    if (work == NULL) return 0;
    AOTC_Q(qconv_patches_vnni)(p, 16, x, w, y, work, aotc_qconv_lane_bytes(0, p));
    return 1;
}

#if defined(__AVX512VBMI__)

/* Depthwise QLinearConv with AVX-512 VNNI and VBMI, for any plane: blocks of up to 16 consecutive
 * output positions of the plane (spanning output rows where the plane is narrow), as long as each
 * kernel row's group of 4 taps reads a window of at most 64 input bytes. Per block, a byte index per
 * lane and tap into that window (64: the zero point, for the padding and for taps past k_w) is made
 * once for every channel; per channel, each window is loaded (masked at the plane's end), its bytes
 * picked by vpermt2b into 4 taps a lane, and summed by vpdpbusd against the channel's weight words
 * (w - w_zero as bytes, so every weight zero point must be 0), from bias - (x_zero + offset) sum (w -
 * w_zero), then requantised. The window cache, the weight words and the sums' starts are the work
 * block (aotc_qconv_depthwise_x86_work_bytes: AOTC_QDW_FLAT_WORDS weight words at most); 3 x 3 kernels' blocks
 * run x86_dw3_block, their three windows held in registers. 0 (nothing done)
 * where the weights or the shape do not suit it, or the work block is not given. Its work is
 * x86_depthwise_items, on the pool where the conv splits (p->lanes). */

/* depthwise_flat's work as items (image, range of `run` output positions, chunk of channels) for one thread or
 * the pool: each thread's window cache in its own lane of the scratch (lane_bytes apart), the weight words and
 * sums' starts (wq, init) made once in the first lane's */
typedef struct {
    const aotc_qconv_params *p;
    const QT *x;
    QT *y;
    uint8_t *scratch;
    const int32_t *wq, *init;
    int64_t lane_bytes;
    int32_t run, ranges, chunks, cstep;
    aotc_qx86_lane *lane;
} AOTC_Q(x86_dwjob);

/* One kernel row's 4 taps a lane of a block: its 64-byte window at src (whole, or its bytes lm; as unsigned bytes)
 * picked by iv (64: the zero point) */
static inline __attribute__((always_inline)) __m512i AOTC_Q(x86_dw_taps)(const QT *src, int full, __mmask64 lm,
                                                                          __m512i flip, __m512i iv, __m512i zero) {
    const __m512i raw = full ? _mm512_loadu_si512((const void *)src) : _mm512_maskz_loadu_epi8(lm, (const void *)src);
    return _mm512_permutex2var_epi8(_mm512_xor_si512(raw, flip), iv, zero);
}

/* depthwise_flat's channels [c0, c1) on one block of a 3 x 3 kernel (3 windows, kg 3): the windows' index
 * vectors, offsets and masks in registers and the channel loop without branches (the general loop's reloads and
 * tests per kernel row took a third of the depthwise convs' time in a QDQ MobileNetV2); full: every window whole */
static inline __attribute__((always_inline)) void AOTC_Q(x86_dw3_block)(
    const QT *AOTC_RESTRICT xn, QT *AOTC_RESTRICT yn, int32_t plane_in, int32_t plane_out, int32_t pos0,
    int32_t lanes, int32_t c0, int32_t c1, const __m512i *iv, const int32_t *lo_off, const __mmask64 *lm, int full,
    const int32_t *AOTC_RESTRICT wq, const int32_t *AOTC_RESTRICT init, const float *AOTC_RESTRICT scale, __m512 lo,
    __m512 hi, __m512i zp, __m512i flip, __m512i zero) {
    const __m512i iv0 = iv[0], iv1 = iv[1], iv2 = iv[2];
    const __mmask64 m0 = lm[0], m1 = lm[1], m2 = lm[2];
    const int64_t o0 = lo_off[0], o1 = lo_off[1], o2 = lo_off[2];
    const __mmask16 sm = AOTC_Q(x86_lanes)(lanes);
    int32_t c;
    if (full) AOTC_QX86_TRACE(dw3);
    else AOTC_QX86_TRACE(dw3_masked);
    for (c = c0; c < c1; ++c) {
        const QT *plane = xn + (int64_t)c * plane_in;
        const int32_t *wc = wq + (int64_t)c * 3;
        __m512i a = _mm512_set1_epi32(init[c]);
        a = _mm512_dpbusd_epi32(a, AOTC_Q(x86_dw_taps)(plane + o0, full, m0, flip, iv0, zero), _mm512_set1_epi32(wc[0]));
        a = _mm512_dpbusd_epi32(a, AOTC_Q(x86_dw_taps)(plane + o1, full, m1, flip, iv1, zero), _mm512_set1_epi32(wc[1]));
        a = _mm512_dpbusd_epi32(a, AOTC_Q(x86_dw_taps)(plane + o2, full, m2, flip, iv2, zero), _mm512_set1_epi32(wc[2]));
        _mm_mask_storeu_epi8((void *)(yn + (int64_t)c * plane_out + pos0), sm,
                             AOTC_Q(x86_requant16)(a, _mm512_set1_ps(scale[c]), lo, hi, zp));
    }
}

/* x86_dw3_block's three windows as one where they fit: each kernel row's lanes' taps (the bytes its index vector iv[g]
 * picks, 64 the zero point) within 64 bytes from the lowest window's start. On planes up to 14 wide 16 lanes span at
 * most 4 input rows, so a 14 x 14 or 7 x 7 plane's blocks (where aotc's depthwise took 1.3-1.75 x OpenVINO's time
 * in a QDQ MobileNetV2) load their channel once, not three times. jv the index vectors rebased onto that start
 * (*off), *m the window's bytes inside the plane; 0 where they do not fit. */
static inline int AOTC_Q(x86_dw3_merge)(const __m512i *iv, const int32_t *lo_off, const __mmask64 *lm, int32_t plane_in,
                                        __m512i *jv, int32_t *off, __mmask64 *m) {
    const __m512i edge = _mm512_set1_epi8(64);
    int32_t o = INT32_MAX, g;
    for (g = 0; g < 3; ++g) {
        if (lm[g] != 0 && lo_off[g] < o) o = lo_off[g];
    }
    if (o == INT32_MAX || plane_in - o <= 0) return 0;
    for (g = 0; g < 3; ++g) {
        const __mmask64 used = _mm512_cmplt_epu8_mask(iv[g], edge);
        const int32_t d = lo_off[g] - o;
        __m512i moved;
        if (used == 0) { /* every lane the zero point */
            jv[g] = iv[g];
            continue;
        }
        if (d < 0 || d > 63) return 0;
        moved = _mm512_add_epi8(iv[g], _mm512_set1_epi8((char)d));
        if (_mm512_mask_cmpge_epu8_mask(used, moved, edge) != 0) return 0;
        jv[g] = _mm512_mask_blend_epi8(used, iv[g], moved);
    }
    *off = o;
    *m = plane_in - o >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (plane_in - o)) - 1;
    return 1;
}

/* x86_dw3_block on one window a channel (x86_dw3_merge's jv, off, m; full: m every byte) */
static inline __attribute__((always_inline)) void AOTC_Q(x86_dw3_one)(
    const QT *AOTC_RESTRICT xn, QT *AOTC_RESTRICT yn, int32_t plane_in, int32_t plane_out, int32_t pos0,
    int32_t lanes, int32_t c0, int32_t c1, const __m512i *jv, int32_t off, __mmask64 m, int full,
    const int32_t *AOTC_RESTRICT wq, const int32_t *AOTC_RESTRICT init, const float *AOTC_RESTRICT scale, __m512 lo,
    __m512 hi, __m512i zp, __m512i flip, __m512i zero) {
    const __m512i j0 = jv[0], j1 = jv[1], j2 = jv[2];
    const __mmask16 sm = AOTC_Q(x86_lanes)(lanes);
    int32_t c;
    AOTC_QX86_TRACE(dw3_one);
    for (c = c0; c < c1; ++c) {
        const QT *plane = xn + (int64_t)c * plane_in + off;
        const int32_t *wc = wq + (int64_t)c * 3;
        const __m512i raw = full ? _mm512_loadu_si512((const void *)plane) : _mm512_maskz_loadu_epi8(m, (const void *)plane);
        const __m512i win = _mm512_xor_si512(raw, flip);
        __m512i a = _mm512_set1_epi32(init[c]);
        a = _mm512_dpbusd_epi32(a, _mm512_permutex2var_epi8(win, j0, zero), _mm512_set1_epi32(wc[0]));
        a = _mm512_dpbusd_epi32(a, _mm512_permutex2var_epi8(win, j1, zero), _mm512_set1_epi32(wc[1]));
        a = _mm512_dpbusd_epi32(a, _mm512_permutex2var_epi8(win, j2, zero), _mm512_set1_epi32(wc[2]));
        _mm_mask_storeu_epi8((void *)(yn + (int64_t)c * plane_out + pos0), sm,
                             AOTC_Q(x86_requant16)(a, _mm512_set1_ps(scale[c]), lo, hi, zp));
    }
}

static inline void AOTC_Q(x86_depthwise_run)(const AOTC_Q(x86_dwjob) *J, int32_t begin, int32_t end, aotc_qx86_lane *L,
                                             const QT *AOTC_RESTRICT x, QT *AOTC_RESTRICT y, uint8_t *scratch) {
    const aotc_qconv_params *p = J->p;
    uint8_t *const work = aotc_qconv_work(p, scratch, aotc_qconv_depthwise_front_bytes(p),
                                          aotc_qconv_depthwise_x86_work_bytes(p), AOTC_QX86_ALIGN);
    aotc_qx86_wcache *const cache = (aotc_qx86_wcache *)(void *)work;
    const int32_t kg = p->k_h * ((p->k_w + 3) / 4), plane_in = p->in_h * p->in_w;
    const int32_t plane_out = p->out_h * p->out_w, channels = p->out_c;
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero), flip = _mm512_set1_epi8((char)AOTC_QOFFSET);
    const __m512i zero = _mm512_set1_epi8((char)(uint8_t)(p->x_zero + AOTC_QOFFSET));
    const int32_t *const wq = J->wq, *const init = J->init;
    /* a row's 16 lanes' three kernel rows within 64 bytes (planes up to 14 wide): x86_dw3_merge tried (on wider
     * planes it seldom fits, and its test took 5 % of a 112 x 112 plane's time) */
    const int narrow = (p->k_h - 1) * p->dil_h * p->in_w + 16 * p->stride_w + p->k_w <= 64;
    int32_t i, c, g;
    if (!L->init) {
        AOTC_Q(x86_wcache_init)(cache);
        L->init = 1;
    }
    for (i = begin; i < end; ++i) {
        const int32_t ch = i % J->chunks, r = i / J->chunks % J->ranges, n = i / (J->chunks * J->ranges);
        const int32_t r0 = r * J->run, r1 = r0 + J->run < plane_out ? r0 + J->run : plane_out;
        const int32_t c0 = ch * J->cstep, c1 = c0 + J->cstep < channels ? c0 + J->cstep : channels;
        const QT *xn = x + (int64_t)n * channels * plane_in;
        QT *yn = y + (int64_t)n * channels * plane_out;
        const int held = L->wrange == r; /* the range's windows, made for the chunk before */
        int32_t pos0, b;
        L->wrange = -1;
        for (pos0 = r0, b = 0; pos0 < r1; ++b) {
            __m512i iv[AOTC_QX86_KG];
            __mmask64 lm[AOTC_QX86_KG];
            int32_t lo_off[AOTC_QX86_KG];
            int full = 1; /* every window whole: plain loads (masked ones took 3 % more of a QDQ MobileNetV2 on Zen 5) */
            int32_t lanes;
            if (b < AOTC_QX86_WMEMO) {
                if (!held) L->wlanes[b] = AOTC_Q(x86_windows)(p, pos0, r1, cache, L->lo_off[b], L->lm[b], L->iv[b]);
                lanes = L->wlanes[b];
                for (g = 0; g < kg; ++g) iv[g] = L->iv[b][g], lm[g] = L->lm[b][g], lo_off[g] = L->lo_off[b][g];
            } else {
                lanes = AOTC_Q(x86_windows)(p, pos0, r1, cache, lo_off, lm, iv);
            }
            for (g = 0; g < kg; ++g) full &= lm[g] == ~(__mmask64)0;
            if (kg == 3) { /* 3 x 3 (a MobileNet's every depthwise): the block's windows in registers */
                __m512i jv[3];
                int32_t off;
                __mmask64 m1;
                if (narrow && AOTC_Q(x86_dw3_merge)(iv, lo_off, lm, plane_in, jv, &off, &m1)) {
                    if (m1 == ~(__mmask64)0) AOTC_Q(x86_dw3_one)(xn, yn, plane_in, plane_out, pos0, lanes, c0, c1, jv, off, m1, 1, wq, init,
                                                                 p->scale, lo, hi, zp, flip, zero);
                    else AOTC_Q(x86_dw3_one)(xn, yn, plane_in, plane_out, pos0, lanes, c0, c1, jv, off, m1, 0, wq, init,
                                             p->scale, lo, hi, zp, flip, zero);
                    pos0 += lanes;
                    continue;
                }
                if (full) AOTC_Q(x86_dw3_block)(xn, yn, plane_in, plane_out, pos0, lanes, c0, c1, iv, lo_off, lm, 1, wq, init,
                                               p->scale, lo, hi, zp, flip, zero);
                else AOTC_Q(x86_dw3_block)(xn, yn, plane_in, plane_out, pos0, lanes, c0, c1, iv, lo_off, lm, 0, wq, init,
                                          p->scale, lo, hi, zp, flip, zero);
                pos0 += lanes;
                continue;
            }
            for (c = c0; c < c1; ++c) {
                const QT *plane = xn + (int64_t)c * plane_in;
                __m512i a = _mm512_set1_epi32(init[c]);
                for (g = 0; g < kg; ++g) {
                    const __m512i raw = full ? _mm512_loadu_si512((const void *)(plane + lo_off[g]))
                                             : _mm512_maskz_loadu_epi8(lm[g], (const void *)(plane + lo_off[g]));
                    const __m512i win = _mm512_xor_si512(raw, flip);
                    a = _mm512_dpbusd_epi32(a, _mm512_permutex2var_epi8(win, iv[g], zero), _mm512_set1_epi32(wq[c * kg + g]));
                }
                _mm_mask_storeu_epi8((void *)(yn + (int64_t)c * plane_out + pos0), AOTC_Q(x86_lanes)(lanes),
                                     AOTC_Q(x86_requant16)(a, _mm512_set1_ps(p->scale[c]), lo, hi, zp));
            }
            pos0 += lanes;
        }
        if (b <= AOTC_QX86_WMEMO) L->wrange = r;
    }
}

static void AOTC_Q(x86_depthwise_items)(void *ctx, int32_t begin, int32_t end) {
    const AOTC_Q(x86_dwjob) *J = (const AOTC_Q(x86_dwjob) *)ctx;
    const int32_t self = aotc_thread_index();
    AOTC_Q(x86_depthwise_run)(J, begin, end, &J->lane[self], J->x, J->y, J->scratch + self * J->lane_bytes);
}

static int AOTC_Q(qconv_depthwise_flat)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                        const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, QT *scratch) {
    const int32_t k_h = p->k_h, k_w = p->k_w, taps = k_h * k_w, groups = (k_w + 3) / 4, kg = k_h * groups;
    const int32_t plane_out = p->out_h * p->out_w, channels = p->out_c, xz = p->x_zero + AOTC_QOFFSET;
    const int split = aotc_qx86_split(p, (int64_t)p->batch * channels * plane_out * taps);
    uint8_t *const work = aotc_qconv_work(p, scratch, aotc_qconv_depthwise_front_bytes(p),
                                          aotc_qconv_depthwise_x86_work_bytes(p), AOTC_QX86_ALIGN);
    int32_t *const wq = (int32_t *)(void *)(work + AOTC_QX86_WCACHE_BYTES), *const init = wq + channels * kg;
    aotc_qx86_lane lane[AOTC_QX86_MAX_LANES];
    AOTC_Q(x86_dwjob) J;
    int32_t c, i, kh, j, items;
    if (work == NULL) return 0; /* (aotc_qconv_depthwise_x86_work_bytes 0: the path does not take p) */
    if (k_h == 3 && k_w == 3) { /* (the general loop below took 14 % of these convs' time) */
        for (c = 0; c < channels; ++c) {
            const uint8_t *wc = (const uint8_t *)w + (int64_t)c * 9;
            int32_t sum = 0;
            for (i = 0; i < 9; ++i) sum += (int8_t)wc[i];
            init[c] = p->bias[c] - xz * sum;
            for (kh = 0; kh < 3; ++kh) {
                wq[c * 3 + kh] = (int32_t)((uint32_t)wc[3 * kh] | (uint32_t)wc[3 * kh + 1] << 8 | (uint32_t)wc[3 * kh + 2] << 16);
            }
        }
    }
    for (c = k_h == 3 && k_w == 3 ? channels : 0; c < channels; ++c) { /* weight words and the sums' starts */
        const int8_t *wc = w + (int64_t)c * taps;
        int32_t sum = 0;
        for (i = 0; i < taps; ++i) sum += wc[i];
        init[c] = p->bias[c] - xz * sum;
        for (kh = 0; kh < k_h; ++kh) {
            for (i = 0; i < groups; ++i) {
                uint32_t word = 0;
                for (j = 0; j < 4; ++j) {
                    if (4 * i + j < k_w) word |= (uint32_t)(uint8_t)wc[kh * k_w + 4 * i + j] << (8 * j);
                }
                wq[c * kg + kh * groups + i] = (int32_t)word;
            }
        }
    }
    J.p = p, J.x = x, J.y = y, J.scratch = (uint8_t *)(void *)scratch, J.wq = wq, J.init = init, J.lane = lane;
    J.lane_bytes = aotc_qconv_lane_bytes(aotc_qconv_depthwise_front_bytes(p), p);
    /* ranges of whole rows that are whole blocks of 16 positions too (lcm(out_w, 16) positions), so that a range
     * cuts no block, whether blocks span rows or end at a row's end (a stride-2 conv's); where the channels are cut
     * into chunks (14 x 14, 7 x 7), a range's windows are made once for a thread's run of its chunks (up to
     * AOTC_QX86_WMEMO blocks), not once a chunk (1.5-2 x those convs' time) */
    {
        int32_t a = p->out_w, b = 16;
        while (b != 0) { const int32_t t = a % b; a = b, b = t; } /* gcd */
        J.run = split ? p->out_w / a * 16 : plane_out;
    }
    J.ranges = (plane_out + J.run - 1) / J.run;
    J.chunks = aotc_qx86_chunks(p->batch * J.ranges, (channels + 15) / 16, split);
    J.cstep = (channels + J.chunks - 1) / J.chunks;
    J.chunks = (channels + J.cstep - 1) / J.cstep;
    AOTC_Q(x86_lanes_init)(lane);
    items = p->batch * J.ranges * J.chunks;
    if (split) aotc_parallel_for(AOTC_Q(x86_depthwise_items), &J, items);
    else AOTC_Q(x86_depthwise_items)(&J, 0, items);
    return 1;
}
#endif

/* 16 bytes of QT at src, or every second of 32 at stride 2, as int32 lanes. */
static inline __m512i AOTC_Q(x86_widen16)(const QT *src, int32_t sw) {
    if (sw == 1) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)src);
        return QT_MIN < 0 ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
    } else { /* the 32 bytes widened to 16-bit halves of 16 words: the low halves are the even bytes */
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)src);
        const __m512i h = QT_MIN < 0 ? _mm512_cvtepi8_epi16(v) : _mm512_cvtepu8_epi16(v);
        return QT_MIN < 0 ? _mm512_srai_epi32(_mm512_slli_epi32(h, 16), 16)
                          : _mm512_and_si512(h, _mm512_set1_epi32(0xFFFF));
    }
}

/* Depthwise QLinearConv (aotc_qconv_depthwise_*) with AVX-512, horizontal stride 1 or 2 and at most
 * 16 kernel rows (vertical dilation 1): the padded input rows of one channel kept in a ring of k_h slots of the scratch
 * (each input row copied once per channel), 16 outputs summed at a time as int32 lanes over the
 * taps, from sums started at bias - x_zero sum (w - w_zero), requantised in registers. 0 (nothing
 * done) for other shapes. Its items are the output planes (image, channel), on the pool where the conv splits
 * (p->lanes: each thread's ring in its own lane of the scratch, lane_bytes apart). */
typedef struct {
    const aotc_qconv_params *p;
    const QT *x;
    const int8_t *w;
    QT *y, *scratch;
    int64_t lane_bytes;
} AOTC_Q(x86_dwrjob);

static void AOTC_Q(x86_depthwise_planes)(void *ctx, int32_t begin, int32_t end) {
    const AOTC_Q(x86_dwrjob) *J = (const AOTC_Q(x86_dwrjob) *)ctx;
    const aotc_qconv_params *p = J->p;
    QT *const scratch = J->scratch + aotc_thread_index() * J->lane_bytes;
    const int32_t sw = p->stride_w, k_h = p->k_h, k_w = p->k_w, taps = k_h * k_w;
    const int32_t row_len = AOTC_QCONV_DW_ROW(p->out_w, k_w, sw, p->dil_w);
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w, xz = p->x_zero, ow_n = p->out_w;
    const int32_t lead = p->pad_left < row_len ? p->pad_left : row_len;
    const int32_t body = p->in_w < row_len - lead ? p->in_w : row_len - lead;
    const __m512 lo = _mm512_set1_ps(p->y_lo), hi = _mm512_set1_ps(p->y_hi);
    const __m512i zp = _mm512_set1_epi32(p->y_zero);
    int32_t i, oh, kh, ow0;
    for (i = begin; i < end; ++i) {
        const int32_t n = i / p->out_c, c = i % p->out_c;
        const QT *plane = J->x + ((int64_t)n * p->in_c + c) * plane_in;
        QT *yo = J->y + ((int64_t)n * p->out_c + c) * plane_out;
        const int8_t *wc = J->w + (int64_t)c * taps;
        const int32_t wz = p->w_zero[c];
        const __m512 sc = _mm512_set1_ps(p->scale[c]);
        __m512i wv[64];
        int32_t held[16], wsum = 0, t;
        for (t = 0; t < taps; ++t) {
            wv[t] = _mm512_set1_epi32(wc[t] - wz);
            wsum += wc[t] - wz;
        }
        const __m512i init = _mm512_set1_epi32(p->bias[c] - xz * wsum);
        for (kh = 0; kh < k_h; ++kh) held[kh] = INT32_MIN;
        memset(scratch, (uint8_t)(QT)xz, (size_t)k_h * (size_t)row_len); /* the slots' padding */
        for (oh = 0; oh < p->out_h; ++oh) {
            const QT *r[16];
            QT *yr = yo + (int64_t)oh * ow_n;
            for (kh = 0; kh < k_h; ++kh) { /* the input rows under this output row, in ring slots */
                const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
                const int32_t slot = (int32_t)((uint32_t)(ih + k_h * 65536) % (uint32_t)k_h);
                QT *row = scratch + (int64_t)slot * row_len;
                if (held[slot] != ih) {
                    if (ih >= 0 && ih < p->in_h) memcpy(row + lead, plane + (int64_t)ih * p->in_w, (size_t)body);
                    else memset(row + lead, (uint8_t)(QT)xz, (size_t)body);
                    held[slot] = ih;
                }
                r[kh] = row;
            }
            for (ow0 = 0; ow0 < ow_n; ow0 += 16) {
                __m512i a = init;
                int32_t kw, tap = 0;
                for (kh = 0; kh < k_h; ++kh) {
                    const QT *src = r[kh] + (int64_t)ow0 * sw;
                    for (kw = 0; kw < k_w; ++kw, ++tap) {
                        a = _mm512_add_epi32(a, _mm512_mullo_epi32(AOTC_Q(x86_widen16)(src + kw * p->dil_w, sw), wv[tap]));
                    }
                }
                _mm_mask_storeu_epi8((void *)(yr + ow0), AOTC_Q(x86_lanes)(ow_n - ow0), AOTC_Q(x86_requant16)(a, sc, lo, hi, zp));
            }
        }
    }
}

static int AOTC_Q(qconv_depthwise_avx512)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                       const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, QT *AOTC_RESTRICT scratch) {
    const int32_t planes = p->batch * p->out_c;
    AOTC_Q(x86_dwrjob) J;
    if ((p->stride_w != 1 && p->stride_w != 2) || p->dil_h != 1 || p->k_h > 16 || p->k_h * p->k_w > 64) return 0;
    J.p = p, J.x = x, J.w = w, J.y = y, J.scratch = scratch;
    J.lane_bytes = aotc_qconv_lane_bytes(aotc_qconv_depthwise_front_bytes(p), p);
    if (aotc_qx86_split(p, (int64_t)planes * p->out_h * p->out_w * p->k_h * p->k_w)) {
        aotc_parallel_for(AOTC_Q(x86_depthwise_planes), &J, planes);
    } else {
        AOTC_Q(x86_depthwise_planes)(&J, 0, planes);
    }
    return 1;
}
