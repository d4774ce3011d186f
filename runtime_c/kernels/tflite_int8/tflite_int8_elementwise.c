/* TFLite's elementwise integer ops (aotc_tflite_int8.h): ADD / SUB, MUL, MAXIMUM, MINIMUM and the 256-entry lookup
 * table on int8; ADD / SUB, MUL, MAXIMUM, MINIMUM, LOGISTIC, TANH and LEAKY_RELU on 16x8's int16.
 *
 * The two-input ops resolve their broadcast once a call (tfl_runs, issue 64): y is a sequence of runs of
 * contiguous outputs along which each input steps by one element or stays on one (a per-channel factor, a
 * squeeze-excite's, a scalar), an odometer over the outer axes moving from run to run, so a run's loop does no
 * index arithmetic. Where a target runs MUL's and ADD / SUB's runs faster it has a loop of its own, bit for bit
 * the plain loop's (requant_double):
 *   - x86 with AVX-512BW and VL (or AVX2): 16 (8) elements a vector, requantised in 64-bit lanes
 *     (tflite_int8_x86.h), for runs in which each input steps or stays;
 *   - the DSP extension (Cortex-M4, M33, M55): ADD / SUB of same-shape inputs by each input's rescaling tabulated
 *     by byte, given the plan's scratch; MUL and the other int8 ADD / SUB requantised by SMMLAR (tfl_drq).
 * The int8 lookup table (LOGISTIC, HARD_SWISH, ...) goes 64 bytes a vector on x86 with AVX-512 VBMI. */
#include "tflite_int8_internal.h"
#include "tflite_int8_dsp.h" /* the DSP extension's paths (Cortex-M4, M33, M55) and Helium's (M55) */
#include "tflite_int8_x86.h" /* the requantisation in AVX-512 and AVX2 lanes */

/* ---- The broadcast, resolved into runs --------------------------------------------------------------------------- */

/* y as p->count / n runs of n outputs along which x1 and x2 step by s1 and s2 (1, or 0 where the run reads one
 * element throughout); the runs' first elements of x1 and x2 move by an odometer over `rank` outer axes (the
 * innermost first) of dims[j] steps of st1[j] and st2[j] elements */
typedef struct {
    int64_t n, s1, s2;
    int32_t rank;
    int64_t dims[5], st1[5], st2[5];
} tfl_runs;

typedef struct {
    int64_t i[5];
    int64_t o1, o2; /* the run's first elements of x1 and x2 */
} tfl_run_at;

/* y's axes from the innermost, those of size 1 dropped and each folded into the one inside it where both inputs'
 * steps continue it (the inner one's step times its size): same shapes make one run, [.., C] by [C] runs of C,
 * [N, H, W, C] by [N, 1, 1, C] runs of C in an outer axis of H W (x2's step 0 there), by a scalar one run in
 * which x2 stays */
static void tfl_runs_init(const aotc_tfl_binary_params *p, tfl_runs *r) {
    int64_t len[6], a1[6], a2[6];
    int32_t k = 0, d, j;
    if (!p->broadcast) {
        r->n = p->count, r->s1 = r->s2 = 1, r->rank = 0;
        return;
    }
    for (d = 5; d >= 0; --d) {
        if (p->dims[d] == 1) continue;
        if (k > 0 && p->st1[d] == a1[k - 1] * len[k - 1] && p->st2[d] == a2[k - 1] * len[k - 1]) {
            len[k - 1] *= p->dims[d];
        } else {
            len[k] = p->dims[d], a1[k] = p->st1[d], a2[k] = p->st2[d], ++k;
        }
    }
    if (k == 0) { /* one element */
        r->n = 1, r->s1 = r->s2 = 0, r->rank = 0;
        return;
    }
    r->n = len[0], r->s1 = a1[0], r->s2 = a2[0], r->rank = k - 1;
    for (j = 0; j < r->rank; ++j) r->dims[j] = len[j + 1], r->st1[j] = a1[j + 1], r->st2[j] = a2[j + 1];
}

static void tfl_runs_next(const tfl_runs *r, tfl_run_at *at) {
    for (int32_t j = 0; j < r->rank; ++j) {
        at->o1 += r->st1[j], at->o2 += r->st2[j];
        if (++at->i[j] < r->dims[j]) return;
        at->o1 -= r->st1[j] * r->dims[j], at->o2 -= r->st2[j] * r->dims[j], at->i[j] = 0;
    }
}

/* NAME(p, k, x1, x2, y): RUN(k, a, sa, b, sb, y, n) over each run of p's broadcast (k: the op's constants) */
#define TFL_BY_RUNS(NAME, T, K, RUN)                                                                      \
    static void NAME(const aotc_tfl_binary_params *p, const K *k, const T *x1, const T *x2, T *y) {      \
        tfl_runs r;                                                                                     \
        tfl_run_at at = {{0, 0, 0, 0, 0}, 0, 0};                                                        \
        if (p->count <= 0) return;                                                                      \
        tfl_runs_init(p, &r);                                                                           \
        for (int64_t o = 0; o < p->count; o += r.n, tfl_runs_next(&r, &at))                             \
            RUN(k, x1 + at.o1, r.s1, x2 + at.o2, r.s2, y + o, r.n);                                     \
    }

/* ---- The DSP extension's requantisation of one value ------------------------------------------------------------- */

#if AOTC_QUANT_DSP
/* requant_double(acc, mult, shift) + zero as tfl_dsp_requant_run's SMMLAR form, for |acc| <= a bound that keeps
 * acc 2^(left + 1) in an int32: high_mul(acc 2^left, mult) is then one SMMLAR of acc 2^(left + 1) (adding the
 * rounding term and zero 2^right, exact as below the high word), and RoundingDivideByPOT's half away from zero
 * the sign of acc (-1 where negative: the product's sign for mult >= 0) added before the shift. Exact where the
 * SMMLAR's sum cannot overflow (tfl_drq_init). */
typedef struct {
    int32_t s, mult, ra, right, sign; /* s: left + 1; ra: 2^(right - 1) + zero 2^right; sign: -1 where right > 0 */
} tfl_drq;

/* whether the form takes mult, shift and zero for |acc| <= bound; q its constants */
static int tfl_drq_init(tfl_drq *q, int32_t mult, int32_t shift, int32_t zero, int64_t bound) {
    const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t high;
    if (mult < 0 || left >= 30 || right > 31 || bound >= ((int64_t)1 << (30 - left))) return 0;
    /* the SMMLAR's sum, |high| + 2^(right - 1) + |zero| 2^right (and the sign's 1), within an int32 */
    high = (((bound << (left + 1)) * mult) >> 32) + 1;
    if (high + ((int64_t)1 << right) / 2 + (zero < 0 ? -(int64_t)zero : zero) * ((int64_t)1 << right) + 1 > INT32_MAX)
        return 0;
    q->s = left + 1, q->mult = mult, q->right = right, q->sign = right > 0 ? -1 : 0;
    q->ra = (int32_t)(((int64_t)1 << right) / 2 + (int64_t)zero * ((int64_t)1 << right));
    return 1;
}

static inline __attribute__((always_inline)) int32_t tfl_drq_one(const tfl_drq *q, int32_t acc) {
    const int32_t a = (int32_t)((uint32_t)acc << q->s);
    return (tfl_dsp_smmlar(a, q->mult, q->ra) + ((a >> 31) & q->sign)) >> q->right;
}

/* a bound on |requant_double(acc, mult, shift)| for |acc| <= bound (mult >= 0, left < 30) */
static int64_t tfl_drq_bound(int64_t bound, int32_t mult, int32_t shift) {
    const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return ((((bound << left) * mult) >> 31) >> right) + 2; /* (each rounding adds at most 1) */
}
#endif /* AOTC_QUANT_DSP */

/* ---- x86 vectors of int32 lanes ---------------------------------------------------------------------------------- */

#if TFL_X86_AVX512
#define TFL_VL 16
typedef __m512i tfl_v;
typedef tfl_x86_rq tfl_vrq;
#define tfl_vrq_set1 tfl_x86_rq_set1
#define tfl_vrequant tfl_x86_requant
#define tfl_vset1 _mm512_set1_epi32
#define tfl_vadd _mm512_add_epi32
#define tfl_vsub _mm512_sub_epi32
#define tfl_vmul _mm512_mullo_epi32
#define tfl_vmin _mm512_min_epi32
#define tfl_vmax _mm512_max_epi32
#define tfl_vsll(v, n) _mm512_sll_epi32((v), _mm_cvtsi32_si128(n))

/* min(n, 16) int8 (wide: int16) elements at x widened to int32 lanes, the rest 0 (masked loads: nothing read past
 * the run) */
TFL_X86_INLINE tfl_v tfl_vload(const void *x, int wide, int64_t n) {
    const __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
    return wide ? _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, x))
                : _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, x));
}

/* the first min(n, 16) lanes of v (within the type's range: clamped) to y */
TFL_X86_INLINE void tfl_vstore(void *y, int wide, int64_t n, tfl_v v) {
    const __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
    if (wide) _mm256_mask_storeu_epi16(y, m, _mm512_cvtepi32_epi16(v));
    else _mm_mask_storeu_epi8(y, m, _mm512_cvtepi32_epi8(v));
}
#elif TFL_X86_AVX2
#define TFL_VL 8
typedef __m256i tfl_v;
typedef tfl_x86_rq8 tfl_vrq;
#define tfl_vrq_set1 tfl_x86_rq8_set1
#define tfl_vrequant tfl_x86_requant8
#define tfl_vset1 _mm256_set1_epi32
#define tfl_vadd _mm256_add_epi32
#define tfl_vsub _mm256_sub_epi32
#define tfl_vmul _mm256_mullo_epi32
#define tfl_vmin _mm256_min_epi32
#define tfl_vmax _mm256_max_epi32
#define tfl_vsll(v, n) _mm256_sll_epi32((v), _mm_cvtsi32_si128(n))

/* (AVX2 has no byte or word masked loads and stores: a run's last few elements go through a copy) */
TFL_X86_INLINE tfl_v tfl_vload(const void *x, int wide, int64_t n) {
    int16_t t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (n < 8) x = memcpy(t, x, (size_t)n * (wide ? 2 : 1));
    return wide ? _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)x))
                : _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)x));
}

TFL_X86_INLINE void tfl_vstore(void *y, int wide, int64_t n, tfl_v v) {
    const __m256i w = _mm256_packs_epi32(v, v); /* (the lanes are in the type's range: no saturation) */
    const __m128i h = _mm_unpacklo_epi64(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    int16_t t[8];
    if (wide) _mm_storeu_si128((__m128i *)(n < 8 ? (void *)t : y), h);
    else _mm_storel_epi64((__m128i *)(n < 8 ? (void *)t : y), _mm_packs_epi16(h, h));
    if (n < 8) memcpy(y, t, (size_t)n * (wide ? 2 : 1));
}
#endif

/* ---- MUL and ADD / SUB: the constants of a call ------------------------------------------------------------------ */

enum { TFL_LOOP_PLAIN, TFL_LOOP_X86, TFL_LOOP_DSP }; /* the loop a call's runs take (the x86 one: where they step) */
enum { TFL_MUL, TFL_ADD };

typedef struct {
    int32_t z1, z2, yz, lo, hi, m1, s1, m2, s2, mult, shift, subtract;
    int32_t rlo, rhi; /* lo, hi less yz: the requantised value is clamped before the zero point is added, the sum
                       * then never overflowing (the reference's is in int64; TFLite's would overflow) */
    int32_t up;   /* ADD / SUB: the inputs' left shift before their rescaling (20; 16x8: 15) */
    int32_t loop; /* TFL_LOOP_* */
#if TFL_X86_AVX512 || TFL_X86_AVX2
    tfl_vrq r1, r2, ro; /* ADD / SUB: each input's rescaling and the output's; MUL: ro */
    tfl_v vz1, vz2, vyz, vlo, vhi; /* vlo, vhi: rlo, rhi */
    int narrow;                    /* int8 ADD / SUB whose inputs' rescalings tfl_vrescale8 computes */
    tfl_v h1, l1, k1, g1, h2, l2, k2, g2; /* their multipliers' bits 11 up and 0 to 10, rounding terms 2^(e - 1),
                                           * -1 where e > 0 (the sign term's mask) */
    __m128i e1, e2;                /* their right shifts */
#endif
#if AOTC_QUANT_DSP
    tfl_drq d1, d2, dout; /* the same by SMMLAR (d1, d2 of x - zero: their s includes up) */
#endif
} tfl_bin;

/* whether the x86 lanes take a multiplier and shift (requant_double's ranges; no INT32_MIN: tflite_int8_x86.h) */
TFL_UNUSED static int tfl_x86_takes(int32_t mult, int32_t shift) {
    return mult != INT32_MIN && shift >= -31 && shift <= 31;
}

static void tfl_bin_init(tfl_bin *k, const aotc_tfl_binary_params *p, int op, int wide) {
    k->z1 = p->x1_zero, k->z2 = p->x2_zero, k->yz = p->y_zero, k->lo = p->y_min, k->hi = p->y_max;
    k->m1 = p->m1, k->s1 = p->s1, k->m2 = p->m2, k->s2 = p->s2, k->mult = p->mult, k->shift = p->shift;
    k->subtract = p->subtract, k->up = wide ? 15 : 20, k->loop = TFL_LOOP_PLAIN;
    k->rlo = p->y_min - p->y_zero, k->rhi = p->y_max - p->y_zero;
#if TFL_X86_AVX512 || TFL_X86_AVX2
    if (tfl_x86_takes(p->mult, p->shift) &&
        (op == TFL_MUL || (tfl_x86_takes(p->m1, p->s1) && tfl_x86_takes(p->m2, p->s2)))) {
        k->loop = TFL_LOOP_X86;
        k->r1 = tfl_vrq_set1(p->m1, p->s1), k->r2 = tfl_vrq_set1(p->m2, p->s2);
        k->ro = tfl_vrq_set1(p->mult, p->shift);
        k->vz1 = tfl_vset1(p->x1_zero), k->vz2 = tfl_vset1(p->x2_zero), k->vyz = tfl_vset1(p->y_zero);
        k->vlo = tfl_vset1(k->rlo), k->vhi = tfl_vset1(k->rhi);
        /* int8 ADD / SUB's usual inputs: no left shift, a multiplier >= 0 (TFLite's are under 2^31 / 2) */
        k->narrow = op == TFL_ADD && !wide && p->s1 <= 0 && p->s2 <= 0 && p->m1 >= 0 && p->m2 >= 0;
        k->h1 = tfl_vset1(p->m1 >> 11), k->l1 = tfl_vset1(p->m1 & 0x7FF), k->e1 = _mm_cvtsi32_si128(-p->s1);
        k->h2 = tfl_vset1(p->m2 >> 11), k->l2 = tfl_vset1(p->m2 & 0x7FF), k->e2 = _mm_cvtsi32_si128(-p->s2);
        k->k1 = tfl_vset1(p->s1 < 0 ? 1 << (-p->s1 - 1) : 0), k->k2 = tfl_vset1(p->s2 < 0 ? 1 << (-p->s2 - 1) : 0);
        k->g1 = tfl_vset1(p->s1 < 0 ? -1 : 0), k->g2 = tfl_vset1(p->s2 < 0 ? -1 : 0);
    }
#endif
#if AOTC_QUANT_DSP
    if (!wide) { /* int8: |x - zero| <= 255 */
        const int64_t in = 255, up = in << 20;
        if (op == TFL_MUL) { /* (the loop adds the sign term unconditionally: right > 0, as the usual MUL's) */
            if (tfl_drq_init(&k->dout, p->mult, p->shift, p->y_zero, in * in) && k->dout.right > 0)
                k->loop = TFL_LOOP_DSP;
        } else if (tfl_drq_init(&k->d1, p->m1, p->s1, 0, up) && tfl_drq_init(&k->d2, p->m2, p->s2, 0, up) &&
                   tfl_drq_init(&k->dout, p->mult, p->shift, p->y_zero,
                                tfl_drq_bound(up, p->m1, p->s1) + tfl_drq_bound(up, p->m2, p->s2))) {
            k->d1.s += 20, k->d2.s += 20;
            k->loop = TFL_LOOP_DSP;
        }
    }
#else
    (void)op;
#endif
}

/* ---- MUL and ADD / SUB: the x86 lanes' loop of a run ------------------------------------------------------------- */

#if TFL_X86_AVX512 || TFL_X86_AVX2
/* requant_double(v 2^20, m, -e) of int8's v = x - zero (|v| <= 255), m >= 0, in 32-bit lanes (tfl_bin's narrow): the
 * high product floor((v 2^20 m + 2^30) / 2^31) is floor((v m + 2^10) / 2^11), and with m = h 2^11 + l that is
 * H = v h + floor((v l + 2^10) / 2^11) (|v h| < 2^28, |v l| < 2^19: no lane overflows); then RoundingDivideByPOT,
 * floor((H + 2^(e - 1) - [H < 0]) / 2^e) for e > 0, H itself for e = 0 (k and the sign term's mask g 0) */
#if TFL_X86_AVX512
#define tfl_vmul_lo16(v, l) _mm512_madd_epi16((v), (l)) /* (l < 2^11, its high half 0: the low halves' product) */
#define tfl_vsrai(v, n) _mm512_srai_epi32((v), (n))
#define tfl_vsra(v, c) _mm512_sra_epi32((v), (c))
#define tfl_vand _mm512_and_si512
#else
#define tfl_vmul_lo16(v, l) _mm256_madd_epi16((v), (l))
#define tfl_vsrai(v, n) _mm256_srai_epi32((v), (n))
#define tfl_vsra(v, c) _mm256_sra_epi32((v), (c))
#define tfl_vand _mm256_and_si256
#endif
TFL_X86_INLINE tfl_v tfl_vrescale8(tfl_v v, tfl_v h, tfl_v l, tfl_v k, tfl_v g, __m128i e) {
    const tfl_v hm = tfl_vadd(tfl_vmul(v, h), tfl_vsrai(tfl_vadd(tfl_vmul_lo16(v, l), tfl_vset1(1 << 10)), 11));
    return tfl_vsra(tfl_vadd(tfl_vadd(hm, k), tfl_vand(tfl_vsrai(hm, 31), g)), e);
}

/* n outputs of MUL or ADD / SUB, x1 stepping (fa 0) or staying (fa 1) on one element, x2 likewise (fb), int8 or
 * (wide) int16: constants after inlining, so each case is a loop of its own */
TFL_X86_INLINE void tfl_vec_run(const tfl_bin *k, int op, const void *a, int fa, const void *b, int fb, void *y,
                                int64_t n, int wide, int narrow) {
    const int32_t es = wide ? 2 : 1;
    const int32_t a0 = wide ? *(const int16_t *)a : *(const int8_t *)a;
    const int32_t b0 = wide ? *(const int16_t *)b : *(const int8_t *)b;
    /* a staying input's factor (MUL) or rescaled value (ADD), once for the run */
    const tfl_v ca = tfl_vset1(op == TFL_MUL ? a0 - k->z1
                                             : requant_double((a0 - k->z1) * (1 << k->up), k->m1, k->s1));
    const tfl_v cb = tfl_vset1(op == TFL_MUL ? b0 - k->z2
                                             : requant_double((b0 - k->z2) * (1 << k->up), k->m2, k->s2));
    int64_t i = 0;
    /* whole vectors (the count a constant: no masks), then the last few */
#define TFL_VEC_STEP(CNT)                                                                                         \
    {                                                                                                             \
        tfl_v va = ca, vb = cb, v;                                                                                \
        if (!fa) va = tfl_vsub(tfl_vload((const char *)a + i * es, wide, CNT), k->vz1);                           \
        if (!fb) vb = tfl_vsub(tfl_vload((const char *)b + i * es, wide, CNT), k->vz2);                           \
        if (op == TFL_MUL) {                                                                                      \
            v = tfl_vmul(va, vb); /* |v| <= 255^2, or 2^30 (int16) */                                             \
        } else {                                                                                                  \
            if (!fa) va = narrow ? tfl_vrescale8(va, k->h1, k->l1, k->k1, k->g1, k->e1)                                  \
                                 : tfl_vrequant(tfl_vsll(va, k->up), &k->r1);                                     \
            if (!fb) vb = narrow ? tfl_vrescale8(vb, k->h2, k->l2, k->k2, k->g2, k->e2)                                  \
                                 : tfl_vrequant(tfl_vsll(vb, k->up), &k->r2);                                     \
            v = k->subtract ? tfl_vsub(va, vb) : tfl_vadd(va, vb); /* wrapping, as the plain loop's */            \
        }                                                                                                         \
        v = tfl_vadd(tfl_vmin(tfl_vmax(tfl_vrequant(v, &k->ro), k->vlo), k->vhi), k->vyz);                        \
        tfl_vstore((char *)y + i * es, wide, CNT, v);                                                             \
    }
    for (; i + TFL_VL <= n; i += TFL_VL) TFL_VEC_STEP(TFL_VL)
    if (i < n) TFL_VEC_STEP(n - i)
#undef TFL_VEC_STEP
}

/* whether the x86 lanes take the run (each input stepping or staying, not both staying), which they then ran */
TFL_X86_INLINE int tfl_vec_runs(const tfl_bin *k, int op, const void *a, int64_t sa, const void *b, int64_t sb,
                                void *y, int64_t n, int wide) {
    if (k->loop != TFL_LOOP_X86) return 0;
    if (op == TFL_ADD && !wide && k->narrow) { /* (its own loops: narrow a constant in each) */
        if (sa == 1 && sb == 1) tfl_vec_run(k, op, a, 0, b, 0, y, n, 0, 1);
        else if (sa == 1 && sb == 0) tfl_vec_run(k, op, a, 0, b, 1, y, n, 0, 1);
        else if (sa == 0 && sb == 1) tfl_vec_run(k, op, a, 1, b, 0, y, n, 0, 1);
        else return 0;
        return 1;
    }
    if (sa == 1 && sb == 1) tfl_vec_run(k, op, a, 0, b, 0, y, n, wide, 0);
    else if (sa == 1 && sb == 0) tfl_vec_run(k, op, a, 0, b, 1, y, n, wide, 0);
    else if (sa == 0 && sb == 1) tfl_vec_run(k, op, a, 1, b, 0, y, n, wide, 0);
    else return 0;
    return 1;
}
#endif

#if TFL_X86_VBMI
#define TFL_TABLE_MIN 1024 /* the fewest outputs a call's table pays for */

/* 1 where x1 is one element for the whole call and x2 has y's own shape (its steps y's), 2 the other way round, else
 * 0: the call's outputs are then a function of the other input's byte */
static int tfl_one_operand(const aotc_tfl_binary_params *p) {
    int64_t full = 1;
    int one1 = 1, one2 = 1, full1 = 1, full2 = 1;
    if (!p->broadcast || p->count < TFL_TABLE_MIN) return 0;
    for (int32_t d = 5; d >= 0; --d) {
        if (p->dims[d] == 1) continue;
        one1 &= p->st1[d] == 0, one2 &= p->st2[d] == 0, full1 &= p->st1[d] == full, full2 &= p->st2[d] == full;
        full *= p->dims[d];
    }
    return one1 && full2 ? 1 : one2 && full1 ? 2 : 0;
}

/* int8 MUL or ADD / SUB of a call whose input `one` (tfl_one_operand) is one element (issue 64: the attention's
 * scores times a constant, 65,536 a call): the lanes' own run over every byte value tabulates the outputs once,
 * then 64 lookups a vector by two-register byte permutes, as aotc_tfl_lut_s8 */
static void tfl_x86_by_table(const tfl_bin *k, int op, int one, const int8_t *x1, const int8_t *x2, int8_t *y,
                             int64_t count) {
    int8_t all[256], table[256];
    for (int32_t i = 0; i < 256; ++i) all[i] = (int8_t)(uint8_t)i; /* table[i]: the output of the byte i */
    if (one == 2) tfl_vec_run(k, op, all, 0, x2, 1, table, 256, 0, 0);
    else tfl_vec_run(k, op, x1, 1, all, 0, table, 256, 0, 0);
    const int8_t *x = one == 2 ? x1 : x2;
    const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
    const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
    for (int64_t i = 0; i < count; i += 64) {
        const __mmask64 m = count - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (count - i)) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
        const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
        _mm512_mask_storeu_epi8(y + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
    }
}

/* whether the table took the int8 call */
static int tfl_x86_table_call(const tfl_bin *k, int op, const aotc_tfl_binary_params *p, const int8_t *x1,
                              const int8_t *x2, int8_t *y) {
    const int one = k->loop == TFL_LOOP_X86 ? tfl_one_operand(p) : 0;
    if (one) tfl_x86_by_table(k, op, one, x1, x2, y, p->count);
    return one != 0;
}
#endif /* TFL_X86_VBMI */

/* ---- MUL and ADD / SUB: the DSP extension's loops of a run (int8) ------------------------------------------------ */

#if AOTC_QUANT_DSP
/* MUL by SMMLAR (tfl_drq; right > 0): n outputs from the elements at p and q, both stepping by 1, or where fixed
 * p's alone and one input staying (c: its value less its zero point: the shifted product is then one MLA, p's
 * element times c 2^s plus -zp c 2^s, modulo 2^32 as the shift's); the usual clamp (sat: y_max 127) SSAT's, then
 * y_min's. fixed and sat are constants at each call: four loops. */
static inline __attribute__((always_inline)) void tfl_dsp_mul_loop(const tfl_bin *k, const int8_t *p, int32_t zp,
                                                                   const int8_t *q, int32_t zq, int32_t c, int8_t *y,
                                                                   int64_t n, int fixed, int sat) {
    const int32_t s = k->dout.s, mult = k->dout.mult, ra = k->dout.ra, right = k->dout.right, lo = k->lo, hi = k->hi;
    const uint32_t cs = (uint32_t)c << s, c0 = (0u - (uint32_t)zp) * cs;
    for (const int8_t *end = y + n; y != end; ++y) {
        const int32_t v = fixed ? (int32_t)((uint32_t)*p++ * cs + c0)
                                : (int32_t)((uint32_t)((*p++ - zp) * (*q++ - zq)) << s);
        int32_t r = (tfl_dsp_smmlar(v, mult, ra) + (v >> 31)) >> right;
        if (sat) r = __ssat(r, 8), r = r < lo ? lo : r;
        else r = r < lo ? lo : r > hi ? hi : r;
        *y = (int8_t)r;
    }
}

/* whether the DSP loops take the run (each input stepping by 1 or staying, not both staying), which they then ran */
__attribute__((noinline)) static int tfl_dsp_mul_run(const tfl_bin *k, const int8_t *a, int64_t sa, const int8_t *b,
                                                     int64_t sb, int8_t *y, int64_t n) {
    const int sat = k->hi == 127; /* (y_min >= -128) */
    if (sa == 1 && sb == 1) {
        if (sat) tfl_dsp_mul_loop(k, a, k->z1, b, k->z2, 0, y, n, 0, 1);
        else tfl_dsp_mul_loop(k, a, k->z1, b, k->z2, 0, y, n, 0, 0);
    } else if ((sa == 1 && sb == 0) || (sa == 0 && sb == 1)) { /* symmetric: the staying input is the factor */
        const int8_t *p = sb == 0 ? a : b;
        const int32_t zp = sb == 0 ? k->z1 : k->z2, c = sb == 0 ? *b - k->z2 : *a - k->z1;
        if (sat) tfl_dsp_mul_loop(k, p, zp, p, 0, c, y, n, 1, 1);
        else tfl_dsp_mul_loop(k, p, zp, p, 0, c, y, n, 1, 0);
    } else {
        return 0;
    }
    return 1;
}

/* ADD / SUB by three SMMLARs (tfl_drq), x1 stepping by 1 (fa 0) or staying (fa 1), x2 likewise (fb): a staying
 * input's rescaled value once for the run */
static inline __attribute__((always_inline)) void tfl_dsp_add_loop(const tfl_bin *k, const int8_t *a, const int8_t *b,
                                                                   int8_t *y, int64_t n, int fa, int fb) {
    const tfl_drq q1 = k->d1, q2 = k->d2, qo = k->dout;
    const int32_t z1 = k->z1, z2 = k->z2, lo = k->lo, hi = k->hi, sub = k->subtract;
    const int32_t ca = tfl_drq_one(&q1, *a - z1), cb = tfl_drq_one(&q2, *b - z2);
    for (const int8_t *end = y + n; y != end; ++y) {
        const int32_t va = fa ? ca : tfl_drq_one(&q1, *a++ - z1), vb = fb ? cb : tfl_drq_one(&q2, *b++ - z2);
        const int32_t r = tfl_drq_one(&qo, sub ? va - vb : va + vb);
        *y = (int8_t)(r < lo ? lo : r > hi ? hi : r);
    }
}

__attribute__((noinline)) static int tfl_dsp_add_run(const tfl_bin *k, const int8_t *a, int64_t sa, const int8_t *b,
                                                     int64_t sb, int8_t *y, int64_t n) {
    if (sa == 1 && sb == 1) tfl_dsp_add_loop(k, a, b, y, n, 0, 0);
    else if (sa == 1 && sb == 0) tfl_dsp_add_loop(k, a, b, y, n, 0, 1);
    else if (sa == 0 && sb == 1) tfl_dsp_add_loop(k, a, b, y, n, 1, 0);
    else return 0;
    return 1;
}
#endif /* AOTC_QUANT_DSP */

/* ---- MUL and ADD / SUB: a run's loop by target, and the plain one ------------------------------------------------ */

#if TFL_X86_AVX512 || TFL_X86_AVX2
#define TFL_X86_RUN(op, wide) \
    if (tfl_vec_runs(k, op, a, sa, b, sb, y, n, wide)) return
#else
#define TFL_X86_RUN(op, wide) (void)0
#endif
#if AOTC_QUANT_DSP
#define TFL_DSP_RUN(f, wide)                                                                                    \
    if (!(wide) && k->loop == TFL_LOOP_DSP && f(k, (const int8_t *)a, sa, (const int8_t *)b, sb, (int8_t *)y, n)) \
        return
#else
#define TFL_DSP_RUN(f, wide) (void)0
#endif

/* n outputs from x1's element at a and x2's at b, then a += sa, b += sb: the target's loop where it has one */
#define TFL_MUL_ADD_RUNS(SUFFIX, T, WIDE)                                                                             \
    static void mul_run_##SUFFIX(const tfl_bin *k, const T *a, int64_t sa, const T *b, int64_t sb, T *y, int64_t n) { \
        const int32_t z1 = k->z1, z2 = k->z2, yz = k->yz, lo = k->rlo, hi = k->rhi, mult = k->mult;                   \
        const int32_t shift = k->shift;                                                                               \
        TFL_X86_RUN(TFL_MUL, WIDE);                                                                                   \
        TFL_DSP_RUN(tfl_dsp_mul_run, WIDE);                                                                           \
        for (const T *end = y + n; y != end; ++y, a += sa, b += sb) {                                                 \
            const int32_t r = requant_double((*a - z1) * (*b - z2), mult, shift);                                     \
            *y = (T)((r < lo ? lo : r > hi ? hi : r) + yz);                                                           \
        }                                                                                                             \
    }                                                                                                                 \
    static void add_run_##SUFFIX(const tfl_bin *k, const T *a, int64_t sa, const T *b, int64_t sb, T *y, int64_t n) { \
        const int32_t z1 = k->z1, z2 = k->z2, yz = k->yz, lo = k->rlo, hi = k->rhi, up = k->up, m1 = k->m1;           \
        const int32_t s1 = k->s1, m2 = k->m2, s2 = k->s2, mult = k->mult, shift = k->shift;                           \
        TFL_X86_RUN(TFL_ADD, WIDE);                                                                                   \
        TFL_DSP_RUN(tfl_dsp_add_run, WIDE);                                                                           \
        for (const T *end = y + n; y != end; ++y, a += sa, b += sb) {                                                 \
            const uint32_t va = (uint32_t)requant_double((*a - z1) * (1 << up), m1, s1);                              \
            const uint32_t vb = (uint32_t)requant_double((*b - z2) * (1 << up), m2, s2);                              \
            /* (a wrapping sum, as the reference's requantisation wraps it; TFLite's multipliers keep both < 2^30) */ \
            const int32_t r = requant_double((int32_t)(k->subtract ? va - vb : va + vb), mult, shift);                \
            *y = (T)((r < lo ? lo : r > hi ? hi : r) + yz);                                                           \
        }                                                                                                             \
    }

TFL_MUL_ADD_RUNS(s8, int8_t, 0)
TFL_MUL_ADD_RUNS(s16, int16_t, 1)
TFL_BY_RUNS(mul_s8, int8_t, tfl_bin, mul_run_s8)
TFL_BY_RUNS(add_s8, int8_t, tfl_bin, add_run_s8)
TFL_BY_RUNS(mul_s16, int16_t, tfl_bin, mul_run_s16)
TFL_BY_RUNS(add_s16, int16_t, tfl_bin, add_run_s16)

/* ---- MAXIMUM and MINIMUM: no requantisation ---------------------------------------------------------------------- */

/* (the inputs both stepping by 1 in a loop of their own, which compilers vectorise) */
#define TFL_MAX_MIN_RUN(NAME, T, CLAMP, OP)                                                                      \
    static void NAME(const aotc_tfl_binary_params *k, const T *a, int64_t sa, const T *b, int64_t sb, T *y,      \
                     int64_t n) {                                                                                \
        const int32_t lo = k->y_min, hi = k->y_max;                                                              \
        const T *end = y + n;                                                                                    \
        if (sa == 1 && sb == 1) {                                                                                \
            for (; y != end; ++y, ++a, ++b) *y = CLAMP(*a OP *b ? *a : *b, lo, hi);                               \
        } else {                                                                                                 \
            for (; y != end; ++y, a += sa, b += sb) *y = CLAMP(*a OP *b ? *a : *b, lo, hi);                       \
        }                                                                                                        \
    }

TFL_MAX_MIN_RUN(max_run_s8, int8_t, clamp8, >)
TFL_MAX_MIN_RUN(min_run_s8, int8_t, clamp8, <)
TFL_MAX_MIN_RUN(max_run_s16, int16_t, clamp16, >)
TFL_MAX_MIN_RUN(min_run_s16, int16_t, clamp16, <)
TFL_BY_RUNS(max_s8, int8_t, aotc_tfl_binary_params, max_run_s8)
TFL_BY_RUNS(min_s8, int8_t, aotc_tfl_binary_params, min_run_s8)
TFL_BY_RUNS(max_s16, int16_t, aotc_tfl_binary_params, max_run_s16)
TFL_BY_RUNS(min_s16, int16_t, aotc_tfl_binary_params, min_run_s16)

/* ---- The entry points -------------------------------------------------------------------------------------------- */

#if AOTC_QUANT_DSP

#define TFL_DSP_ADD_RUN 256 /* sums requantised at a time (1 KiB) */

/* sum[k] = u1[a[k]] + u2[b[k]], k < n: a function of its own, whose loop keeps every pointer in a register (inlined
 * in aotc_tfl_add_s8 beside the runs' loops, gcc 12 at -Os reloaded one from the stack each element) */
__attribute__((noinline)) static void tfl_add_s8_sums(const int32_t *u1, const int32_t *u2, const int8_t *a,
                                                      const int8_t *b, int32_t *sum, int32_t n) {
    for (int32_t k = 0; k < n; ++k) sum[k] = u1[a[k]] + u2[b[k]];
}

/* ADD / SUB of two same-shape int8 tensors (AOTC_TFL_ADD_MIN elements or more): each input's rescaling,
 * requant_double((x - x_zero) * 2^20, m, s), depends on the byte alone, so it is a table of 256
 * sums per input made once per call; then per element two table reads and the output's
 * requantisation (tfl_dsp_requant_run): the plain loop's three requantisations become one. The
 * tables and a run of sums are the plan's scratch (AOTC_TFL_ADD_SCRATCH words), not the stack. */
static int tfl_add_s8_dsp(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y,
                          uint32_t *scratch) {
    int32_t *t1 = (int32_t *)scratch, *t2 = t1 + 256, *sum = t2 + 256;
    int64_t k0, m1 = 0, m2 = 0;
    int32_t v;
    if (scratch == NULL || p->broadcast || p->count < AOTC_TFL_ADD_MIN) return 0;
    for (v = 0; v < 256; ++v) {
        t1[v] = requant_double((v - 128 - p->x1_zero) * (1 << 20), p->m1, p->s1);
        t2[v] = requant_double((v - 128 - p->x2_zero) * (1 << 20), p->m2, p->s2);
        if (p->subtract) t2[v] = -t2[v];
        m1 = tfl_dsp_abs64(t1[v]) > m1 ? tfl_dsp_abs64(t1[v]) : m1;
        m2 = tfl_dsp_abs64(t2[v]) > m2 ? tfl_dsp_abs64(t2[v]) : m2;
    }
    for (k0 = 0; k0 < p->count; k0 += TFL_DSP_ADD_RUN) {
        const int32_t n = p->count - k0 < TFL_DSP_ADD_RUN ? (int32_t)(p->count - k0) : TFL_DSP_ADD_RUN;
        tfl_add_s8_sums(t1 + 128, t2 + 128, x1 + k0, x2 + k0, sum, n);
        tfl_dsp_requant_run(sum, 1, n, 0, p->mult, p->shift, p->y_zero, p->y_min, p->y_max, y + k0, 1, m1 + m2);
    }
    return 1;
}
#endif /* AOTC_QUANT_DSP */

void aotc_tfl_add_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y,
                     uint32_t *scratch) {
    tfl_bin k;
#if AOTC_QUANT_DSP
    if (tfl_add_s8_dsp(p, x1, x2, y, scratch)) return;
#endif
    (void)scratch;
    tfl_bin_init(&k, p, TFL_ADD, 0);
#if TFL_X86_VBMI
    if (tfl_x86_table_call(&k, TFL_ADD, p, x1, x2, y)) return;
#endif
    add_s8(p, &k, x1, x2, y);
}

void aotc_tfl_mul_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    tfl_bin k;
    tfl_bin_init(&k, p, TFL_MUL, 0);
#if TFL_X86_VBMI
    if (tfl_x86_table_call(&k, TFL_MUL, p, x1, x2, y)) return;
#endif
    mul_s8(p, &k, x1, x2, y);
}

void aotc_tfl_max_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    max_s8(p, p, x1, x2, y);
}

void aotc_tfl_min_s8(const aotc_tfl_binary_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    min_s8(p, p, x1, x2, y);
}

/* ADD and SUB on int16: int8's with a left shift of 15 (LiteRT's general int16 path; SUB rescales both inputs,
 * then subtracts) */
void aotc_tfl_add_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    tfl_bin k;
    tfl_bin_init(&k, p, TFL_ADD, 1);
    add_s16(p, &k, x1, x2, y);
}

/* MUL on int16 (zero points 0): the int32 product requantised as int8's (|x1 x2| <= 2^30) */
void aotc_tfl_mul_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    tfl_bin k;
    tfl_bin_init(&k, p, TFL_MUL, 1);
    mul_s16(p, &k, x1, x2, y);
}

void aotc_tfl_max_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    max_s16(p, p, x1, x2, y);
}

void aotc_tfl_min_s16(const aotc_tfl_binary_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    min_s16(p, p, x1, x2, y);
}

void aotc_tfl_lut_s8(const aotc_tfl_lut_params *p, const int8_t *x, int8_t *y) {
    int64_t k = 0;
#if TFL_X86_VBMI
    /* 64 lookups a vector (SiLU's LOGISTIC runs on as many elements as its MUL): the table's halves, 128 entries
     * each, by two-register byte permutes (vpermi2b: the index's bits 0 to 6), the index's top bit choosing */
    const __m512i t0 = _mm512_loadu_si512(p->table), t1 = _mm512_loadu_si512(p->table + 64);
    const __m512i t2 = _mm512_loadu_si512(p->table + 128), t3 = _mm512_loadu_si512(p->table + 192);
    for (; k < p->count; k += 64) {
        const __mmask64 m = p->count - k >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (p->count - k)) - 1;
        const __m512i i = _mm512_maskz_loadu_epi8(m, x + k);
        const __m512i lo = _mm512_permutex2var_epi8(t0, i, t1), hi = _mm512_permutex2var_epi8(t2, i, t3);
        _mm512_mask_storeu_epi8(y + k, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(i), lo, hi));
    }
#endif
#if TFL_X86_AVX2
    { /* the table and count in registers: y's stores may alias p (int8_t), and gcc had reloaded both an element */
        const int8_t *table = p->table;
        const int64_t n = p->count;
        for (; k < n; ++k) y[k] = table[(uint8_t)x[k]];
    }
#endif
    for (; k < p->count; ++k) y[k] = p->table[(uint8_t)x[k]];
}

/* --- 16x8 elementwise ops: LiteRT's reference kernels interpolate tables (aotc_tflite_int8.h) ------- */
static int32_t rescale16(const aotc_tfl_act16_params *p, int16_t x) {
    int32_t round = p->shift > 0 ? 1 << (p->shift - 1) : 0;
    return (x * p->mult + round) >> p->shift;
}

void aotc_tfl_logistic_s16(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y) {
    for (int64_t k = 0; k < p->count; ++k) {
        int32_t v = rescale16(p, x[k]);
        uint32_t a = v < 0 ? 0u - (uint32_t)v : (uint32_t)v, i = a >> 9, r;
        if (i >= 255) {
            r = 0x7FFFu << 10;  /* saturated */
        } else {
            uint32_t lo = p->table[i], hi = p->table[i + 1];
            r = (lo << 9) + (a & 0x1FFu) * (hi - lo);
        }
        r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;  /* sigmoid(-x) = 1 - sigmoid(x) */
        y[k] = (int16_t)(r >> 10);
    }
}

void aotc_tfl_tanh_s16(const aotc_tfl_act16_params *p, const int16_t *x, int16_t *y) {
    for (int64_t k = 0; k < p->count; ++k) {
        int32_t v = rescale16(p, x[k]), r;
        uint32_t a = v < 0 ? 0u - (uint32_t)v : (uint32_t)v, i = a >> 8;
        if (i >= 255) {
            r = 0xFFFF << 8;
        } else {
            uint32_t lo = p->table[i], hi = p->table[i + 1];
            r = (int32_t)((lo << 8) + (a & 0xFFu) * (hi - lo));
        }
        r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
        y[k] = (int16_t)(r >> 8);  /* arithmetic: floor */
    }
}

void aotc_tfl_leaky_relu_s16(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y) {
    int32_t m2 = p->m2 < 0 ? -p->m2 : p->m2, sign = p->m2 < 0 ? -1 : 1;
    for (int64_t k = 0; k < p->count; ++k) {
        int32_t v = x[k] >= 0 ? requant_double(x[k], p->m1, p->s1) : sign * requant_double(x[k], m2, p->s2);
        y[k] = clamp16(v, p->y_min, p->y_max);
    }
}

void aotc_tfl_lut_s16(const aotc_tfl_lut16_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const int32_t index = 256 + (x[k] >> 7), offset = x[k] & 0x7f;
        const int16_t slope = (int16_t)(p->table[index + 1] - p->table[index]); /* int16, as LiteRT's LUTLookup */
        y[k] = (int16_t)(p->table[index] + ((slope * offset + 64) >> 7));
    }
}

void aotc_tfl_sqrt_s16(const aotc_tfl_quantize_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const float v = p->scale * (float)x[k];
        const float q = (v > 0.0f ? sqrtf(v) : 0.0f) / p->y_scale;
        const int32_t out = q < 32767.0f ? (int32_t)q : 32767; /* truncated, as C++'s static_cast<int> */
        y[k] = (int16_t)out;
    }
}

void aotc_tfl_abs_s16(const aotc_tfl_binary_params *p, const int16_t *x, int16_t *y) {
    int64_t k;
    for (k = 0; k < p->count; ++k) {
        const int32_t v = x[k] < 0 ? -(int32_t)x[k] : x[k];
        y[k] = clamp16(p->mult != 0 ? requant_double(v, p->mult, p->shift) : v, p->y_min, p->y_max);
    }
}
