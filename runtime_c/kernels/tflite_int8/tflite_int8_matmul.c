/* TFLite's integer BATCH_MATMUL (aotc_tflite_int8.h): LiteRT's reference_ops::BatchMatMul on int8 (int32 sums,
 * double rounding) and 16x8 (int64 sums, the int64 requantisation), for each of y's batch of matrices. Where
 * x2's rows are contiguous (b_col 1, no adj_y) the sums of a run of TFL_MM_RUN outputs are carried along the
 * row, so x2 is read in order; else (adj_y: its columns contiguous) each output is one dot product. */
#include "aotc_threads.h"
#include "tflite_int8_internal.h"
#include "tflite_int8_x86.h" /* the requantisation in AVX-512 lanes */

#if TFL_X86_AVX512 && defined(__AVX512VNNI__)
#define TFL_MM_VNNI 1
#else
#define TFL_MM_VNNI 0
#endif

#define TFL_MM_RUN 32 /* outputs of a row summed at once (the accumulators on the stack) */

/* one matrix product, T1 x T2 -> TY in ACC sums, each sum requantised by REQUANT and clamped by CLAMP */
#define TFL_MATMUL_BODY(T1, T2, TY, ACC, REQUANT, CLAMP)                                                          \
    int32_t b0, b1, b2, i, j, kk, jj;                                                                             \
    int64_t o1 = 0, o2 = 0;                                                                                       \
    const int64_t mn = (int64_t)p->m * p->n;                                                                      \
    TY *out = y;                                                                                                  \
    for (b0 = 0; b0 < p->batch[0]; ++b0) {                                                                        \
        for (b1 = 0; b1 < p->batch[1]; ++b1) {                                                                    \
            for (b2 = 0; b2 < p->batch[2]; ++b2) {                                                                \
                const T1 *a = x1 + (int64_t)b0 * p->st1[0] + (int64_t)b1 * p->st1[1] + (int64_t)b2 * p->st1[2];   \
                const T2 *b = x2 + (int64_t)b0 * p->st2[0] + (int64_t)b1 * p->st2[1] + (int64_t)b2 * p->st2[2];   \
                (void)o1, (void)o2;                                                                               \
                for (i = 0; i < p->m; ++i) {                                                                      \
                    const T1 *ar = a + (int64_t)i * p->a_row;                                                     \
                    if (p->b_col == 1) {                                                                          \
                        for (j = 0; j < p->n; j += TFL_MM_RUN) {                                                  \
                            const int32_t run = p->n - j < TFL_MM_RUN ? p->n - j : TFL_MM_RUN;                    \
                            ACC acc[TFL_MM_RUN];                                                                  \
                            for (jj = 0; jj < run; ++jj) acc[jj] = 0;                                             \
                            for (kk = 0; kk < p->k; ++kk) {                                                       \
                                const ACC av = (ACC)ar[(int64_t)kk * p->a_col] - p->x1_zero;                      \
                                const T2 *br = b + (int64_t)kk * p->b_row + j;                                    \
                                for (jj = 0; jj < run; ++jj) acc[jj] += av * ((ACC)br[jj] - p->x2_zero);          \
                            }                                                                                     \
                            for (jj = 0; jj < run; ++jj) {                                                        \
                                out[(int64_t)i * p->n + j + jj] = CLAMP(REQUANT(acc[jj]) + p->y_zero);            \
                            }                                                                                     \
                        }                                                                                         \
                    } else {                                                                                      \
                        for (j = 0; j < p->n; ++j) {                                                              \
                            const T2 *bc = b + (int64_t)j * p->b_col;                                             \
                            ACC acc = 0;                                                                          \
                            if (p->a_col == 1 && p->b_row == 1) { /* both rows contiguous: unit strides */        \
                                for (kk = 0; kk < p->k; ++kk) {                                                   \
                                    acc += ((ACC)ar[kk] - p->x1_zero) * ((ACC)bc[kk] - p->x2_zero);               \
                                }                                                                                 \
                            } else {                                                                              \
                                for (kk = 0; kk < p->k; ++kk) {                                                   \
                                    acc += ((ACC)ar[(int64_t)kk * p->a_col] - p->x1_zero) *                       \
                                           ((ACC)bc[(int64_t)kk * p->b_row] - p->x2_zero);                        \
                                }                                                                                 \
                            }                                                                                     \
                            out[(int64_t)i * p->n + j] = CLAMP(REQUANT(acc) + p->y_zero);                         \
                        }                                                                                         \
                    }                                                                                             \
                }                                                                                                 \
                out += mn;                                                                                        \
            }                                                                                                     \
        }                                                                                                         \
    }

#define TFL_MM_REQ8(acc) requant_double((acc), p->mult, p->shift)
#define TFL_MM_REQ16(acc) (int32_t)requant_reduced((acc), p->mult, p->shift)
#define TFL_MM_CLAMP8(v) clamp8((v), p->y_min, p->y_max)
#define TFL_MM_CLAMP16(v) clamp16((v), p->y_min, p->y_max)

#if TFL_MM_VNNI
/* int8 with AVX-512 VNNI (issue 64: the encoder's attention, Q K^T and P V), where x1's rows are contiguous (no
 * adj_x): y's columns in panels of 64, a panel of x2 packed on the stack as vpdpbusd's operand (4 k by 16 columns
 * a vector, zeros past k and n), each row's bytes made unsigned (x ^ 0x80, x + 128) and broadcast 4 at a time;
 * 4 rows by 4 vectors of sums a tile. The zero points come after, modulo 2^32 as the plain loop's int32 sums:
 *   sum (a - za)(b - zb) = sum (a + 128) b - (128 + za) sum b - zb sum a + k za zb,
 * the column sums of b by vpdpbusd of ones on the packed panel, the row sums of a once per block of rows; then
 * requant_double in 16 lanes (tflite_int8_x86.h), y_zero, the clamp, masked stores. */
#define TFL_MM_PANEL 64   /* y's columns a panel: 4 vectors */
#define TFL_MM_ROWS 256   /* x1's rows whose sums are kept at once */
#define TFL_MM_KMAX 1024  /* the longest k packed on the stack (a panel of k x 64 bytes) */

/* columns [j0, j0 + 64) of x2's k x n matrix (element (r, c) at r b_row + c b_col) as vpdpbusd's operand: quad q
 * of k, vector v at pk + (4 q + v) 64, column c's 4 bytes at 4 c; 0 past k and n. Their column sums to cs. */
static void tfl_mm_pack(const aotc_tfl_matmul_params *p, const int8_t *b, int32_t j0, int8_t *pk, __m512i cs[4]) {
    const int32_t k = p->k, nq = (k + 3) / 4, nc = p->n - j0 < TFL_MM_PANEL ? p->n - j0 : TFL_MM_PANEL;
    const __m512i ones = _mm512_set1_epi8(1);
    int32_t q, v, r, c;
    for (v = 0; v < 4; ++v) cs[v] = _mm512_setzero_si512();
    for (q = 0; q < nq; ++q) {
        for (v = 0; v < 4; ++v) {
            const int32_t c0 = 16 * v, cn = nc - c0 < 0 ? 0 : nc - c0 > 16 ? 16 : nc - c0;
            int8_t *d = pk + (int64_t)(4 * q + v) * 64;
            if (p->b_col == 1) { /* rows of 16 contiguous bytes, interleaved by bytes then by words */
                const __mmask16 m = (__mmask16)((1u << cn) - 1u);
                __m128i row[4];
                for (r = 0; r < 4; ++r)
                    row[r] = 4 * q + r < k ? _mm_maskz_loadu_epi8(m, b + (int64_t)(4 * q + r) * p->b_row + j0 + c0)
                                           : _mm_setzero_si128();
                const __m128i t0 = _mm_unpacklo_epi8(row[0], row[1]), t1 = _mm_unpackhi_epi8(row[0], row[1]);
                const __m128i t2 = _mm_unpacklo_epi8(row[2], row[3]), t3 = _mm_unpackhi_epi8(row[2], row[3]);
                _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(t0, t2));
                _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(t0, t2));
                _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(t1, t3));
                _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(t1, t3));
            } else {
                for (c = 0; c < 16; ++c)
                    for (r = 0; r < 4; ++r)
                        d[4 * c + r] = c < cn && 4 * q + r < k
                                           ? b[(int64_t)(4 * q + r) * p->b_row + (int64_t)(j0 + c0 + c) * p->b_col]
                                           : 0;
            }
            cs[v] = _mm512_dpbusd_epi32(cs[v], ones, _mm512_loadu_si512(d));
        }
    }
}

/* the 4 bytes of a row's quad q made unsigned and broadcast (the last quad's bytes past k: 0, as b's there) */
TFL_X86_INLINE __m512i tfl_mm_quad(const int8_t *a, int32_t q, int32_t nq, int32_t tail) {
    uint32_t w = 0;
    if (q < nq) memcpy(&w, a + 4 * q, 4);
    else memcpy(&w, a + 4 * q, (size_t)tail);
    return _mm512_set1_epi32((int32_t)(w ^ 0x80808080u));
}

/* one vector's 16 sums of a row, with the zero points' terms, requantised to y's first cn bytes */
TFL_X86_INLINE void tfl_mm_out(const aotc_tfl_matmul_params *p, __m512i acc, __m512i ct, __m512i rt,
                               const tfl_x86_rq *rq, int8_t *y, int32_t cn) {
    const __mmask16 m = cn >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << cn) - 1u);
    __m512i s = _mm512_sub_epi32(_mm512_add_epi32(acc, ct), rt);
    s = _mm512_add_epi32(tfl_x86_requant(s, rq), _mm512_set1_epi32(p->y_zero));
    s = _mm512_min_epi32(_mm512_max_epi32(s, _mm512_set1_epi32(p->y_min)), _mm512_set1_epi32(p->y_max));
    _mm_mask_storeu_epi8(y, m, _mm512_cvtepi32_epi8(s));
}

/* MR (1 or 4) rows from a (row step a_row) by NV vectors of the packed panel, requantised to y (row step n) at
 * columns [0, nc): MR and NV constants at each call, the sums in named registers */
TFL_X86_INLINE void tfl_mm_tile(const aotc_tfl_matmul_params *p, const int8_t *a, const int8_t *pk, const int32_t *rs,
                                const __m512i *ct, const tfl_x86_rq *rq, int8_t *y, int32_t nc, int mr, int nv) {
    const int32_t k = p->k, nq = k / 4, tail = k - 4 * nq, ar = p->a_row;
    const __m512i z = _mm512_setzero_si512();
    __m512i c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;
    __m512i c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z, c32 = z, c33 = z;
    for (int32_t q = 0; q < nq + (tail > 0); ++q) {
        const int8_t *bq = pk + (int64_t)q * 256;
        const __m512i b0 = _mm512_loadu_si512(bq);
        const __m512i b1 = nv > 1 ? _mm512_loadu_si512(bq + 64) : z;
        const __m512i b2 = nv > 2 ? _mm512_loadu_si512(bq + 128) : z;
        const __m512i b3 = nv > 3 ? _mm512_loadu_si512(bq + 192) : z;
#define TFL_MM_ROW(R, C0, C1, C2, C3)                                                                             \
    {                                                                                                             \
        const __m512i av = tfl_mm_quad(a + (int64_t)(R) * ar, q, nq, tail);                                       \
        C0 = _mm512_dpbusd_epi32(C0, av, b0);                                                                     \
        if (nv > 1) C1 = _mm512_dpbusd_epi32(C1, av, b1);                                                         \
        if (nv > 2) C2 = _mm512_dpbusd_epi32(C2, av, b2);                                                         \
        if (nv > 3) C3 = _mm512_dpbusd_epi32(C3, av, b3);                                                         \
    }
        TFL_MM_ROW(0, c00, c01, c02, c03)
        if (mr > 1) {
            TFL_MM_ROW(1, c10, c11, c12, c13)
            TFL_MM_ROW(2, c20, c21, c22, c23)
            TFL_MM_ROW(3, c30, c31, c32, c33)
        }
#undef TFL_MM_ROW
    }
#define TFL_MM_OUT(R, C0, C1, C2, C3)                                                                             \
    {                                                                                                             \
        const __m512i rt = _mm512_set1_epi32((int32_t)((uint32_t)p->x2_zero * (uint32_t)rs[R]));                  \
        int8_t *yr = y + (int64_t)(R) * p->n;                                                                     \
        tfl_mm_out(p, C0, ct[0], rt, rq, yr, nc);                                                                 \
        if (nv > 1) tfl_mm_out(p, C1, ct[1], rt, rq, yr + 16, nc - 16);                                           \
        if (nv > 2) tfl_mm_out(p, C2, ct[2], rt, rq, yr + 32, nc - 32);                                           \
        if (nv > 3) tfl_mm_out(p, C3, ct[3], rt, rq, yr + 48, nc - 48);                                           \
    }
    TFL_MM_OUT(0, c00, c01, c02, c03)
    if (mr > 1) {
        TFL_MM_OUT(1, c10, c11, c12, c13)
        TFL_MM_OUT(2, c20, c21, c22, c23)
        TFL_MM_OUT(3, c30, c31, c32, c33)
    }
#undef TFL_MM_OUT
}

/* the rows [i0, i0 + mr) of one product by 4-row tiles, then single rows; nv vectors for the panel's nc columns */
#define TFL_MM_ROWS_OF(NV)                                                                                        \
    for (i = i0; i + 4 <= i1; i += 4)                                                                             \
        tfl_mm_tile(p, a + (int64_t)i * p->a_row, pk, rs + (i - i0), ct, &rq, y + (int64_t)i * p->n + j0, nc, 4, NV); \
    for (; i < i1; ++i)                                                                                           \
        tfl_mm_tile(p, a + (int64_t)i * p->a_row, pk, rs + (i - i0), ct, &rq, y + (int64_t)i * p->n + j0, nc, 1, NV);

/* whether the VNNI path takes the products: x1's rows contiguous, k within the stack's panel, a multiplier the
 * lanes take (tflite_int8_x86.h) */
static int tfl_mm_vnni_takes(const aotc_tfl_matmul_params *p) {
    return p->a_col == 1 && p->k >= 1 && p->k <= TFL_MM_KMAX && p->mult != INT32_MIN && p->shift >= -31 &&
           p->shift <= 31;
}

/* the product (a, b) -> y */
static void tfl_mm_vnni(const aotc_tfl_matmul_params *p, const int8_t *a, const int8_t *b, int8_t *y) {
    int8_t pk[(TFL_MM_KMAX / 4) * 4 * 64];
    int32_t rs[TFL_MM_ROWS];
    __m512i cs[4], ct[4];
    int32_t i0, i1, i, j0, kk, v;
    const tfl_x86_rq rq = tfl_x86_rq_set1(p->mult, p->shift);
    const int32_t kzz = (int32_t)((uint32_t)p->k * (uint32_t)p->x1_zero * (uint32_t)p->x2_zero);
    for (i0 = 0; i0 < p->m; i0 = i1) {
        i1 = p->m - i0 < TFL_MM_ROWS ? p->m : i0 + TFL_MM_ROWS;
        for (i = i0; i < i1; ++i) {
            const int8_t *ar = a + (int64_t)i * p->a_row;
            int32_t sum = 0;
            for (kk = 0; kk < p->k; ++kk) sum += ar[kk];
            rs[i - i0] = sum;
        }
        for (j0 = 0; j0 < p->n; j0 += TFL_MM_PANEL) {
            const int32_t nc = p->n - j0 < TFL_MM_PANEL ? p->n - j0 : TFL_MM_PANEL;
            tfl_mm_pack(p, b, j0, pk, cs);
            for (v = 0; v < 4; ++v) /* k za zb - (128 + za) sum b */
                ct[v] = _mm512_sub_epi32(_mm512_set1_epi32(kzz),
                                         _mm512_mullo_epi32(cs[v], _mm512_set1_epi32(128 + p->x1_zero)));
            switch ((nc + 15) / 16) {
            case 1: TFL_MM_ROWS_OF(1) break;
            case 2: TFL_MM_ROWS_OF(2) break;
            case 3: TFL_MM_ROWS_OF(3) break;
            default: TFL_MM_ROWS_OF(4) break;
            }
        }
    }
}
#endif /* TFL_MM_VNNI */

#if TFL_MM_VNNI
/* the products [begin, end) of y's batch (t = (b0 batch[1] + b1) batch[2] + b2), each on its thread's stack */
typedef struct {
    const aotc_tfl_matmul_params *p;
    const int8_t *x1, *x2;
    int8_t *y;
} tfl_mm_job;

static void tfl_mm_products(void *ctx, int32_t begin, int32_t end) {
    const tfl_mm_job *J = (const tfl_mm_job *)ctx;
    const aotc_tfl_matmul_params *p = J->p;
    int32_t t;
    for (t = begin; t < end; ++t) {
        const int32_t b2 = t % p->batch[2], b1 = t / p->batch[2] % p->batch[1], b0 = t / p->batch[2] / p->batch[1];
        const int8_t *a = J->x1 + (int64_t)b0 * p->st1[0] + (int64_t)b1 * p->st1[1] + (int64_t)b2 * p->st1[2];
        const int8_t *b = J->x2 + (int64_t)b0 * p->st2[0] + (int64_t)b1 * p->st2[1] + (int64_t)b2 * p->st2[2];
        tfl_mm_vnni(p, a, b, J->y + (int64_t)t * p->m * p->n);
    }
}

/* the fewest multiply-adds a BATCH_MATMUL splits its products over a --threads pool */
#ifndef TFL_MM_POOL_MIN_MACS
#define TFL_MM_POOL_MIN_MACS (1 << 20)
#endif
#endif

void aotc_tfl_batch_matmul_s8(const aotc_tfl_matmul_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
#if TFL_MM_VNNI
    if (tfl_mm_vnni_takes(p)) {
        const int32_t products = p->batch[0] * p->batch[1] * p->batch[2];
        tfl_mm_job J;
        J.p = p, J.x1 = x1, J.x2 = x2, J.y = y;
        if ((int64_t)products * p->m * p->n * p->k >= TFL_MM_POOL_MIN_MACS) aotc_parallel_for(tfl_mm_products, &J, products);
        else tfl_mm_products(&J, 0, products);
        return;
    }
#endif
    {
        TFL_MATMUL_BODY(int8_t, int8_t, int8_t, int32_t, TFL_MM_REQ8, TFL_MM_CLAMP8)
    }
}

void aotc_tfl_batch_matmul_s16(const aotc_tfl_matmul_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    TFL_MATMUL_BODY(int16_t, int16_t, int16_t, int64_t, TFL_MM_REQ16, TFL_MM_CLAMP16)
}

void aotc_tfl_batch_matmul_s16_s8(const aotc_tfl_matmul_params *p, const int16_t *x1, const int8_t *x2, int16_t *y) {
    TFL_MATMUL_BODY(int16_t, int8_t, int16_t, int64_t, TFL_MM_REQ16, TFL_MM_CLAMP16)
}
