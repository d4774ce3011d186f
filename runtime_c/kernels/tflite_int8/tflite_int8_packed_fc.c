/* TFLite's FULLY_CONNECTED, int8, on weights the compiler packed as CONV_2D's (aotc_tflite_int8.h, "The host's
 * packed kernels"; k = in): with AVX-512 VNNI tiles of up to 6 rows of x by 4 blocks of 16 outputs in byte dot
 * products (vpdpbusd), with AVX2 tflite_int8_packed.h's pair of vpmaddwd, elsewhere plain C; TFLite's single
 * rounding. Bit for bit TFLite's (tflite_int8_ref.c). Apart from CONV_2D's file (tflite_int8_packed.c) so that a
 * bundle of FULLY_CONNECTED layers compiles this alone (tflite_int8_packed.h). */
#include "tflite_int8_packed.h"

/* ---- FULLY_CONNECTED: weights packed as CONV_2D's (k = in), a row of x at a time made unsigned into scratch;
 * TFLite's single rounding -------------------------------------------------------------------------------- */

#if TFL_PK_VNNI
/* the single rounding's constants of outputs c .. c + 15 (of which the first `left`): each lane's multiplier, even
 * and odd lanes' total shift 31 - s and rounding term 2^(30 - s) in 64-bit lanes */
typedef struct {
    __m512i mult, mult_odd, te, to, ke, ko;
    __mmask16 m;
} tfl_pk_fc_rq;

TFL_PK_INLINE tfl_pk_fc_rq tfl_pk_fc_rq_init(const aotc_tfl_fc_params *p, int32_t c) {
    const __m512i one = _mm512_set1_epi64(1);
    const int32_t left = p->out - c;
    tfl_pk_fc_rq q;
    q.m = (__mmask16)(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
    q.mult = _mm512_maskz_loadu_epi32(q.m, p->mult + c), q.mult_odd = _mm512_srli_epi64(q.mult, 32);
    const __m512i total = _mm512_sub_epi32(_mm512_set1_epi32(31), _mm512_maskz_loadu_epi32(q.m, p->shift + c));
    q.te = _mm512_and_si512(total, _mm512_set1_epi64(0xFFFFFFFF)), q.to = _mm512_srli_epi64(total, 32);
    q.ke = _mm512_sllv_epi64(one, _mm512_sub_epi64(q.te, one)), q.ko = _mm512_sllv_epi64(one, _mm512_sub_epi64(q.to, one));
    return q;
}

/* 16 sums requantised with TFLite's single rounding, (acc m + 2^(30 - s)) >> (31 - s) in 64-bit lanes, plus the
 * zero point, clamped, to the first lanes (q.m) at y */
TFL_PK_INLINE void tfl_pk_fc_store_rq(const aotc_tfl_fc_params *p, const tfl_pk_fc_rq *q, __m512i acc, int8_t *y) {
    const __m512i pe = _mm512_mul_epi32(acc, q->mult), po = _mm512_mul_epi32(_mm512_srli_epi64(acc, 32), q->mult_odd);
    const __m512i re = _mm512_srav_epi64(_mm512_add_epi64(pe, q->ke), q->te);
    const __m512i ro = _mm512_srav_epi64(_mm512_add_epi64(po, q->ko), q->to);
    __m512i v = _mm512_mask_blend_epi32(0xAAAA, re, _mm512_slli_epi64(ro, 32));
    v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, _mm512_set1_epi32(p->y_zero)), _mm512_set1_epi32(p->y_min)),
                         _mm512_set1_epi32(p->y_max));
    _mm_mask_storeu_epi8(y, q->m, _mm512_cvtepi32_epi8(v));
}

/* the same of outputs c .. c + 15 to y + c, the constants made here */
TFL_PK_INLINE void tfl_pk_fc_store(const aotc_tfl_fc_params *p, __m512i acc, int32_t c, int8_t *y) {
    const tfl_pk_fc_rq q = tfl_pk_fc_rq_init(p, c);
    tfl_pk_fc_store_rq(p, &q, acc, y + c);
}

/* nb blocks of 16 outputs (from c0) of one row: its unsigned bytes a (kq quads), the packed weights wp */
TFL_PK_INLINE void tfl_pk_fc_blocks(const aotc_tfl_fc_params *p, const uint8_t *a, int32_t kq, const int8_t *wp,
                                    const int32_t *bias, int32_t c0, int nb, int8_t *y) {
    __m512i acc[4];
    int32_t q;
    int j;
    for (j = 0; j < nb; ++j) acc[j] = _mm512_loadu_si512(bias + c0 + 16 * j);
    for (q = 0; q < kq; ++q) {
        int32_t v;
        memcpy(&v, a + 4 * q, 4);
        for (j = 0; j < nb; ++j)
            acc[j] = _mm512_dpbusd_epi32(acc[j], _mm512_set1_epi32(v),
                                         _mm512_loadu_si512(wp + ((int64_t)(c0 / 16 + j) * kq + q) * 64));
    }
    for (j = 0; j < nb; ++j) tfl_pk_fc_store(p, acc[j], c0 + 16 * j, y);
}

#define TFL_PK_FC_MR 6 /* rows of x a register tile of FULLY_CONNECTED (x 4 blocks of 16 outputs) */

/* a tile's sums (row r's at sums[4 r ..], nb blocks from c0) requantised to y: a block's constants once for the
 * tile's rows */
static __attribute__((noinline)) void tfl_pk_fc_tile_store(const aotc_tfl_fc_params *p, const __m512i *sums, int mr,
                                                           int nb, int32_t c0, int8_t *y) {
    for (int j = 0; j < nb; ++j) {
        const tfl_pk_fc_rq q = tfl_pk_fc_rq_init(p, c0 + 16 * j);
        for (int r = 0; r < mr; ++r) tfl_pk_fc_store_rq(p, &q, sums[4 * r + j], y + (int64_t)r * p->out + c0 + 16 * j);
    }
}

/* x's last quad (tail bytes of it) made unsigned, the bytes past `in` 0 (the packed weights are 0 there) */
TFL_PK_INLINE int32_t tfl_pk_fc_tail(const int8_t *x, int32_t tail) {
    uint32_t v = 0;
    memcpy(&v, x, (size_t)tail);
    return (int32_t)(v ^ (0x80808080u & ((1u << (8 * tail)) - 1u)));
}

/* mr (<= 6) rows of x (read in place, made unsigned as the scratch's copy: x ^ 0x80) x nb (1 to 4) blocks of 16
 * outputs from c0, from the folded bias, to y: up to 24 sums, 4 weight vectors and a broadcast in the 32 registers,
 * so that a quad's nb weight loads feed nb mr byte dot products (issue 64: one row at a time loaded a weight
 * vector for each, and took 2.8 of the encoder's 3.8 ms) */
TFL_PK_INLINE void tfl_pk_fc_tile(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *wp, const int32_t *bias,
                                  int32_t c0, int nb, int mr, int8_t *y) {
    const int32_t in = p->in, nq = in / 4, tail = in % 4, kq = (in + 3) / 4;
    const int8_t *wb = wp + (int64_t)(c0 / 16) * kq * 64;
    const int64_t wstep = (int64_t)kq * 64;
    const int8_t *x0 = x, *x1 = x0 + in, *x2 = x1 + in, *x3 = x2 + in, *x4 = x3 + in, *x5 = x4 + in;
    const __m512i zero = _mm512_setzero_si512();
    const __m512i b0 = _mm512_loadu_si512(bias + c0), b1 = nb > 1 ? _mm512_loadu_si512(bias + c0 + 16) : zero;
    const __m512i b2 = nb > 2 ? _mm512_loadu_si512(bias + c0 + 32) : zero, b3 = nb > 3 ? _mm512_loadu_si512(bias + c0 + 48) : zero;
    __m512i s00 = b0, s01 = b1, s02 = b2, s03 = b3, s10 = b0, s11 = b1, s12 = b2, s13 = b3;
    __m512i s20 = b0, s21 = b1, s22 = b2, s23 = b3, s30 = b0, s31 = b1, s32 = b2, s33 = b3;
    __m512i s40 = b0, s41 = b1, s42 = b2, s43 = b3, s50 = b0, s51 = b1, s52 = b2, s53 = b3;
    int32_t q, u;
#define TFL_PK_DP(r, LOAD)                                                                                      \
    if (mr > r) {                                                                                               \
        const __m512i v = _mm512_set1_epi32(LOAD(x##r));                                                        \
        s##r##0 = _mm512_dpbusd_epi32(s##r##0, v, w0);                                                          \
        if (nb > 1) s##r##1 = _mm512_dpbusd_epi32(s##r##1, v, w1);                                              \
        if (nb > 2) s##r##2 = _mm512_dpbusd_epi32(s##r##2, v, w2);                                              \
        if (nb > 3) s##r##3 = _mm512_dpbusd_epi32(s##r##3, v, w3);                                              \
    }
#define TFL_PK_QUAD(LOAD)                                                                                       \
    {                                                                                                           \
        const __m512i w0 = _mm512_loadu_si512(wb), w1 = nb > 1 ? _mm512_loadu_si512(wb + wstep) : zero;         \
        const __m512i w2 = nb > 2 ? _mm512_loadu_si512(wb + 2 * wstep) : zero;                                  \
        const __m512i w3 = nb > 3 ? _mm512_loadu_si512(wb + 3 * wstep) : zero;                                  \
        TFL_PK_DP(0, LOAD) TFL_PK_DP(1, LOAD) TFL_PK_DP(2, LOAD) TFL_PK_DP(3, LOAD) TFL_PK_DP(4, LOAD)          \
        TFL_PK_DP(5, LOAD)                                                                                      \
    }
#define TFL_PK_FULL(xr) (memcpy(&u, (xr) + 4 * q, 4), u ^ (int32_t)0x80808080u)
#define TFL_PK_TAIL(xr) tfl_pk_fc_tail((xr) + 4 * q, tail)
    for (q = 0; q < nq; ++q, wb += 64) TFL_PK_QUAD(TFL_PK_FULL)
    if (tail) TFL_PK_QUAD(TFL_PK_TAIL)
#undef TFL_PK_FULL
#undef TFL_PK_TAIL
#undef TFL_PK_QUAD
#undef TFL_PK_DP
    {
        /* the sums out of registers once, for the output stage apart (as tfl_pk_conv_tile's) */
        __m512i sums[TFL_PK_FC_MR * 4];
#define TFL_PK_SUMS(r)                                                                                          \
    if (mr > r) sums[4 * r] = s##r##0, sums[4 * r + 1] = s##r##1, sums[4 * r + 2] = s##r##2, sums[4 * r + 3] = s##r##3;
        TFL_PK_SUMS(0) TFL_PK_SUMS(1) TFL_PK_SUMS(2) TFL_PK_SUMS(3) TFL_PK_SUMS(4) TFL_PK_SUMS(5)
#undef TFL_PK_SUMS
        tfl_pk_fc_tile_store(p, sums, mr, nb, c0, y);
    }
}

/* every row of x by the tiles, for nb blocks of outputs from c0: each its own code, its registers fixed */
#define TFL_PK_FC_ROWS(NB)                                                                                      \
    static void tfl_pk_fc_rows##NB(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *wp,             \
                                   const int32_t *bias, int32_t c0, int8_t *y) {                                \
        int32_t r = 0;                                                                                          \
        for (; r + TFL_PK_FC_MR <= p->rows; r += TFL_PK_FC_MR)                                                  \
            tfl_pk_fc_tile(p, x + (int64_t)r * p->in, wp, bias, c0, NB, TFL_PK_FC_MR, y + (int64_t)r * p->out); \
        switch (p->rows - r) {                                                                                  \
        case 5: tfl_pk_fc_tile(p, x + (int64_t)r * p->in, wp, bias, c0, NB, 5, y + (int64_t)r * p->out); break; \
        case 4: tfl_pk_fc_tile(p, x + (int64_t)r * p->in, wp, bias, c0, NB, 4, y + (int64_t)r * p->out); break; \
        case 3: tfl_pk_fc_tile(p, x + (int64_t)r * p->in, wp, bias, c0, NB, 3, y + (int64_t)r * p->out); break; \
        case 2: tfl_pk_fc_tile(p, x + (int64_t)r * p->in, wp, bias, c0, NB, 2, y + (int64_t)r * p->out); break; \
        case 1: tfl_pk_fc_tile(p, x + (int64_t)r * p->in, wp, bias, c0, NB, 1, y + (int64_t)r * p->out); break; \
        default: break;                                                                                         \
        }                                                                                                       \
    }
TFL_PK_FC_ROWS(4)
TFL_PK_FC_ROWS(3)
TFL_PK_FC_ROWS(2)
TFL_PK_FC_ROWS(1)
#undef TFL_PK_FC_ROWS
#endif

#if TFL_PK_VNNI
/* FULLY_CONNECTED's panels of 64 outputs [begin, end) over every row (aotc_threads.h's work items) */
typedef struct {
    const aotc_tfl_fc_params *p;
    const int8_t *x, *wp;
    const int32_t *bias;
    int8_t *y;
} tfl_pk_fc_job;

static void tfl_pk_fc_panels(void *ctx, int32_t begin, int32_t end) {
    const tfl_pk_fc_job *J = (const tfl_pk_fc_job *)ctx;
    const aotc_tfl_fc_params *p = J->p;
    int32_t i;
    for (i = begin; i < end; ++i) {
        const int32_t c0 = 64 * i;
        switch ((p->out - c0 + 15) / 16) {
        case 1: tfl_pk_fc_rows1(p, J->x, J->wp, J->bias, c0, J->y); break;
        case 2: tfl_pk_fc_rows2(p, J->x, J->wp, J->bias, c0, J->y); break;
        case 3: tfl_pk_fc_rows3(p, J->x, J->wp, J->bias, c0, J->y); break;
        default: tfl_pk_fc_rows4(p, J->x, J->wp, J->bias, c0, J->y); break;
        }
    }
}
#endif

void aotc_tfl_fc_s8_packed(const aotc_tfl_fc_params *p, const int8_t *x, const int8_t *wp, const int32_t *bias,
                           int8_t *y, uint8_t *scratch) {
    const int32_t kp = tfl_pk_kp(p->in), kq = kp / 4;
    int32_t r, c0;
#if TFL_PK_VNNI
    if (p->rows > 1) { /* panels of 64 outputs (their weights stay in the cache) x tiles of rows, over the pool */
        tfl_pk_fc_job J;
        J.p = p, J.x = x, J.wp = wp, J.bias = bias, J.y = y;
        if ((int64_t)p->rows * p->in * p->out >= TFL_PK_POOL_MIN_MACS)
            aotc_parallel_for(tfl_pk_fc_panels, &J, (p->out + 63) / 64);
        else tfl_pk_fc_panels(&J, 0, (p->out + 63) / 64);
        return;
    }
#endif
    for (r = 0; r < p->rows; ++r, x += p->in, y += p->out) {
        tfl_pk_xor_copy(scratch, x, p->in);
        if (kp > p->in) memset(scratch + p->in, 0, (size_t)(kp - p->in));
#if TFL_PK_VNNI
        for (c0 = 0; c0 < p->out; c0 += 64) { /* 4 blocks of 16 outputs at a time: 4 chains of sums */
            switch ((p->out - c0 + 15) / 16) {
            case 1: tfl_pk_fc_blocks(p, scratch, kq, wp, bias, c0, 1, y); break;
            case 2: tfl_pk_fc_blocks(p, scratch, kq, wp, bias, c0, 2, y); break;
            case 3: tfl_pk_fc_blocks(p, scratch, kq, wp, bias, c0, 3, y); break;
            default: tfl_pk_fc_blocks(p, scratch, kq, wp, bias, c0, 4, y); break;
            }
        }
#elif TFL_PK_AVX2
        for (c0 = 0; c0 < p->out; c0 += 16) { /* 16 outputs' sums by the conv's pair, its second row the same row */
            int32_t sums[32], o;
            tfl_pk_avx2_pair(scratch, scratch, 1, 0, kq, wp + (int64_t)c0 * kq * 4, sums);
            for (o = c0; o < p->out && o < c0 + 16; ++o)
                y[o] = clamp8(requant_single((int32_t)((uint32_t)sums[o - c0] + (uint32_t)bias[o]), p->mult[o],
                                             p->shift[o]) + p->y_zero, p->y_min, p->y_max);
        }
#else
        for (c0 = 0; c0 < p->out; ++c0) {
            const int8_t *wb = wp + ((int64_t)(c0 / 16) * kq * 16 + c0 % 16) * 4;
            uint32_t acc = (uint32_t)bias[c0];
            int32_t q;
            for (q = 0; q < kq; ++q, wb += 64)
                acc += (uint32_t)(scratch[4 * q] * wb[0] + scratch[4 * q + 1] * wb[1] + scratch[4 * q + 2] * wb[2] +
                                  scratch[4 * q + 3] * wb[3]);
            y[c0] = clamp8(requant_single((int32_t)acc, p->mult[c0], p->shift[c0]) + p->y_zero, p->y_min, p->y_max);
        }
#endif
    }
}
