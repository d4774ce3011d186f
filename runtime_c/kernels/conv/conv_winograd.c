/* 3 x 3 convs at stride 1 with pads of 1 (same size), one group: Winograd's minimal filtering
 * F(2 x 2, 3 x 3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2015).
 *
 * Why: a direct 3 x 3 conv costs 9 multiply-adds per output, input channel and output channel,
 * and the best direct kernels here and in onnxruntime already run ResNet-18's convs at 80 to 90 %
 * of the core's FMA peak (issue 24). Winograd computes each 2 x 2 block of outputs from a 4 x 4
 * block of inputs with 16 products instead of 36: 2.25 x fewer multiply-adds, paid for by cheap
 * additions (the transforms) and by weights 16/9 as large (transformed at compile time).
 *
 * Per image, the output is cut into tiles of 2 x 2 and the tiles into bands of p->nc tile rows.
 * Per band:
 *   1. input transform: each input channel's 4 x 4 block of each tile, d, becomes V = B^T d B,
 *      16 numbers, one for each of 16 matrices V[e] (input channels x tiles, stored as the GEMM
 *      core's packed B: panels of PANEL tiles, zero-padded);
 *   2. 16 independent products M[e] = U[e] * V[e] on the GEMM core, U[e] (output x input
 *      channels) the transformed weights G g G^T of every filter, element e;
 *   3. output transform: each output channel's 2 x 2 block of each tile is A^T M A, plus the
 *      bias, the residual and the activation, stored once.
 * With the thread pool, each thread runs all three for blocks of output channels (conv_winograd.h).
 *
 *      B^T = | 1  0 -1  0 |     G = | 1    0    0  |     A^T = | 1  1  1  0 |
 *            | 0  1  1  0 |         | 1/2  1/2  1/2 |           | 0  1 -1 -1 |
 *            | 0 -1  1  0 |         | 1/2 -1/2  1/2 |
 *            | 0  1  0 -1 |         | 0    0    1  |
 *
 * The transforms are additions and subtractions only (G's halves are applied to the weights, in
 * float64, at compile time), so the rounding stays close to a direct sum's: each output is a sum
 * of the same products regrouped (tests/kernels_c/test_conv_kernels.c bounds the difference).
 *
 * Layout of u: 16 matrices U[e] (e = 4 i + j for row i, column j of the 4 x 4 block), each
 * out_c x in_c, row-major. scratch: V (16 x in_c x tp floats), then M (16 x out_c x tp floats), each matrix
 * AOTC_WINO_PITCH_PAD floats past the last (aotc_conv.h),
 * tp = the band's tiles rounded up to PANEL. Loops over a tile row's tiles run along contiguous
 * arrays, so that compilers vectorise them (no intrinsics). */
#include "conv_winograd.h"

/* the stack buffers' limits (aotc_conv.h; the compiler's bands keep to them and the generated code checks
 * that these are the values it assumed) */
#define WINO_TW_MAX AOTC_WINO_TW_MAX
#define WINO_BAND_MAX AOTC_WINO_BAND_MAX
#define WINO_ROWS_MAX AOTC_WINO_ROWS_MAX
/* floats of a band's padded input rows, (2 th + 2) x (2 tw16 + 4) with th tw <= WINO_BAND_MAX, th <=
 * WINO_ROWS_MAX, tw16 <= WINO_TW_MAX and tw16 < tw + 16: at most the following */
#define WINO_PAD_MAX (4 * (WINO_BAND_MAX + 15 * WINO_ROWS_MAX) + 8 * WINO_ROWS_MAX + 4 * WINO_TW_MAX + 8)

/* B^T along one padded input row pr (pr[k] = x[k - 1], zero outside the image) for the tiles of a tile
 * row: r_j[tx], column j of each 4 x 4 block (input columns 2 tx - 1 .. 2 tx + 2). Whole blocks of 16
 * tiles, no scalar tail: what lands past the row's last tile is overwritten by the next tile row, or is
 * the band's padding. */
static void wino_row(const float *pr, int32_t tw16, float *r0, float *r1, float *r2, float *r3) {
    int32_t t, l;
    for (t = 0; t < tw16; t += 16) {
        const float *d = pr + 2 * t;
        for (l = 0; l < 16; ++l) {
            const float d0 = d[2 * l], d1 = d[2 * l + 1], d2 = d[2 * l + 2], d3 = d[2 * l + 3];
            r0[t + l] = d0 - d2;
            r1[t + l] = d1 + d2;
            r2[t + l] = d2 - d1;
            r3[t + l] = d1 - d3;
        }
    }
}

/* items: the input channels; each writes its row of the 16 V[e] for every tile of the band. The rows of
 * the band's 4 x 4 blocks go first into r (B^T along them), flat over the band's tiles, so that B^T down
 * the columns runs over whole panels of tiles and stores whole panel rows. */
static void wino_input_items(void *arg, int32_t begin, int32_t end) {
    const wino_job *J = (const wino_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t H = p->in_size[1], W = p->in_size[2], C = p->in_c, tw = J->tw, tiles = J->th * tw;
    const int32_t tiles16 = J->tiles16;
    const int32_t tw16 = (tw + 15) / 16 * 16, pw = 2 * tw16 + 4, rows = 2 * J->th + 2;
    const ptrdiff_t estep = J->vstep, pstep = (ptrdiff_t)C * PANEL;
    float r[4][4][WINO_BAND_MAX + 16]; /* r[i][j][t]: row i, column j of tile t's block, B^T along the row */
    /* the band's input rows 2 ty0 - 1 .. 2 (ty0 + th), each shifted by one and zero-padded: all copied
     * before any is read, so that no load waits on the copy's stores (loads across two of them) */
    float pr[WINO_PAD_MAX];
    int32_t c, ty, i, j, k, l;
    for (c = begin; c < end; ++c) {
        const float *xc = J->x + ((ptrdiff_t)J->n * C + c) * H * W;
        float *vc = J->v + (ptrdiff_t)c * PANEL;
        for (k = 0; k < rows; ++k) { /* only the pads zeroed: a memset of the whole band took 1.7 % of ResNet-50 */
            const int32_t iy = 2 * J->ty0 - 1 + k;
            float *pk = pr + k * pw;
            if (iy >= 0 && iy < H) {
                pk[0] = 0.0f;
                memcpy(pk + 1, xc + (ptrdiff_t)iy * W, (size_t)W * sizeof(float));
                memset(pk + 1 + W, 0, (size_t)(pw - 1 - W) * sizeof(float));
            } else {
                memset(pk, 0, (size_t)pw * sizeof(float));
            }
        }
        for (ty = 0; ty < J->th; ++ty)
            for (i = 0; i < 4; ++i)
                wino_row(pr + (2 * ty + i) * pw, tw16, r[i][0] + ty * tw, r[i][1] + ty * tw, r[i][2] + ty * tw,
                         r[i][3] + ty * tw);
        for (i = 0; i < 4; ++i)
            for (j = 0; j < 4; ++j)
                for (l = tiles; l < tiles16; ++l) r[i][j][l] = 0.0f; /* the last panel's padding */
        for (k = 0; k < tiles16 / PANEL; ++k) {
            float *vk = vc + k * pstep;
            for (j = 0; j < 4; ++j) { /* B^T down the columns: V[e], e = 4 i + j */
                const float *a = r[0][j] + k * PANEL, *b = r[1][j] + k * PANEL, *cc = r[2][j] + k * PANEL,
                            *d = r[3][j] + k * PANEL;
                float *v0 = vk + j * estep, *v1 = vk + (4 + j) * estep, *v2 = vk + (8 + j) * estep,
                      *v3 = vk + (12 + j) * estep;
                for (l = 0; l < PANEL; ++l) {
                    v0[l] = a[l] - cc[l];
                    v1[l] = b[l] + cc[l];
                    v2[l] = cc[l] - b[l];
                    v3[l] = b[l] - d[l];
                }
            }
        }
    }
}

/* items: the output channels; each turns its 16 rows of M into its outputs of the band: A^T M A over
 * whole panels of tiles (flat), then each tile row's two output rows interleaved from it */
static void wino_output_items(void *arg, int32_t begin, int32_t end) {
    const wino_job *J = (const wino_job *)arg;
    const int32_t tw = J->tw, tp = J->tp;
    const ptrdiff_t estep = J->mstep;
    float o[4][WINO_BAND_MAX];     /* o[2 i + j][t]: output (i, j) of tile t's 2 x 2, the bias added */
    float row[2 * WINO_TW_MAX + 2]; /* one output row, interleaved */
    int32_t m, i, t;
    for (m = begin; m < end; ++m) {
        const float b = J->bias != NULL ? J->bias[m] : 0.0f;
        const float *mm = J->m + (ptrdiff_t)(m - J->m0) * tp;
        for (t = 0; t < J->th * tw; ++t) {
            float s[2][4];
            int32_t j;
            for (j = 0; j < 4; ++j) { /* A^T down the columns */
                const float m0 = mm[j * estep + t], m1 = mm[(4 + j) * estep + t], m2 = mm[(8 + j) * estep + t],
                            m3 = mm[(12 + j) * estep + t];
                s[0][j] = m0 + m1 + m2;
                s[1][j] = m1 - m2 - m3;
            }
            for (i = 0; i < 2; ++i) { /* A along the rows */
                o[2 * i][t] = s[i][0] + s[i][1] + s[i][2] + b;
                o[2 * i + 1][t] = s[i][1] - s[i][2] - s[i][3] + b;
            }
        }
        wino_store_rows(J, m, 2, (const float *)o, WINO_BAND_MAX, row);
    }
}

void aotc_conv_winograd_f32(const aotc_conv_params *p, const float *x, const float *u, const float *bias,
                            const float *res, float *y, float *scratch) {
    wino_run(p, x, u, bias, res, y, scratch, 2, 16, wino_input_items, wino_output_items);
}
