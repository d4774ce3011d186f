/* TFLite's integer BATCH_MATMUL (aotc_tflite_int8.h): LiteRT's reference_ops::BatchMatMul on int8 (int32 sums,
 * double rounding) and 16x8 (int64 sums, the int64 requantisation), for each of y's batch of matrices. Where
 * x2's rows are contiguous (b_col 1, no adj_y) the sums of a run of TFL_MM_RUN outputs are carried along the
 * row, so x2 is read in order; else (adj_y: its columns contiguous) each output is one dot product. */
#include "tflite_int8_internal.h"

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

void aotc_tfl_batch_matmul_s8(const aotc_tfl_matmul_params *p, const int8_t *x1, const int8_t *x2, int8_t *y) {
    TFL_MATMUL_BODY(int8_t, int8_t, int8_t, int32_t, TFL_MM_REQ8, TFL_MM_CLAMP8)
}

void aotc_tfl_batch_matmul_s16(const aotc_tfl_matmul_params *p, const int16_t *x1, const int16_t *x2, int16_t *y) {
    TFL_MATMUL_BODY(int16_t, int16_t, int16_t, int64_t, TFL_MM_REQ16, TFL_MM_CLAMP16)
}

void aotc_tfl_batch_matmul_s16_s8(const aotc_tfl_matmul_params *p, const int16_t *x1, const int8_t *x2, int16_t *y) {
    TFL_MATMUL_BODY(int16_t, int8_t, int16_t, int64_t, TFL_MM_REQ16, TFL_MM_CLAMP16)
}
