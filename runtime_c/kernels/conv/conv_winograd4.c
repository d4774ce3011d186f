/* 3 x 3 convs at stride 1 with pads of 1 (same size), one group: Winograd's minimal filtering
 * F(4 x 4, 3 x 3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2015).
 *
 * Why: each 4 x 4 block of outputs comes from a 6 x 6 block of inputs with 36 products per channel
 * pair instead of 144, 4 x fewer multiply-adds, where conv_winograd.c's F(2 x 2, 3 x 3) saves 2.25 x.
 * Per output the transforms also move less: 36 / 16 = 2.25 floats of V and of M per channel against
 * F(2 x 2)'s 4, so the passes that stream memory (the part of Winograd that slows most when the two
 * cores of a --threads 2 bundle share the data, issue 24) shrink as well. The price: weights 4 x as
 * large as the direct kernels' (36 / 9), and larger rounding errors (the points 0, +-1, +-2 put
 * factors of 4 to 8 into the transforms), still far inside the op tests' tolerance.
 *
 * The steps are conv_winograd.c's, per band of p->nc tile rows (4 output rows each):
 *   1. input transform: each input channel's 6 x 6 block of each tile, d, becomes V = B^T d B,
 *      one number for each of 36 matrices V[e] (input channels x tiles, stored as the GEMM core's
 *      packed B: panels of PANEL tiles, zero-padded);
 *   2. 36 independent products M[e] = U[e] * V[e] on the GEMM core, U[e] (output x input channels)
 *      the weights G g G^T, transformed at compile time (in float64, aot/kernels/conv.py);
 *   3. output transform: each output channel's 4 x 4 block of each tile is A^T M A, plus the bias,
 *      the residual and the activation, stored once.
 * With the thread pool, each thread runs all three for blocks of output channels (conv_winograd.h).
 *
 *   B^T = | 4  0 -5  0  1  0 |   G = |  1/4     0     0  |   A^T = | 1  1  1  1  1  0 |
 *         | 0 -4 -4  1  1  0 |       | -1/6  -1/6  -1/6  |         | 0  1 -1  2 -2  0 |
 *         | 0  4 -4 -1  1  0 |       | -1/6   1/6  -1/6  |         | 0  1  1  4  4  0 |
 *         | 0 -2 -1  2  1  0 |       |  1/24  1/12  1/6  |         | 0  1 -1  8 -8  1 |
 *         | 0  2 -1 -2  1  0 |       |  1/24 -1/12  1/6  |
 *         | 0  4  0 -5  0  1 |       |  0     0     1    |
 *
 * Layout of u: 36 matrices U[e] (e = 6 i + j for row i, column j of the 6 x 6 block), each out_c x
 * in_c, row-major. scratch: V (36 x in_c x tp floats), then M (36 x out_c x tp floats), tp = the
 * band's tiles rounded up to PANEL. Loops over tiles run along contiguous arrays, so that compilers
 * vectorise them (no intrinsics). */
#include "conv_winograd.h"

/* the stack buffers' limits (aotc_conv.h; the compiler's bands keep to them and the generated code
 * checks that these are the values it assumed) */
#define W4_TW_MAX AOTC_WINO4_TW_MAX
#define W4_BAND_MAX AOTC_WINO4_BAND_MAX
#define W4_ROWS_MAX AOTC_WINO4_ROWS_MAX
/* tiles per step of the row transform (a vector of them); a tile row is rounded up to this */
#define W4_STEP 8
/* floats of a band's input rows, deinterleaved: (4 th + 2) x 4 x (tw8 + W4_STEP) with th tw <=
 * W4_BAND_MAX, th <= W4_ROWS_MAX, tw <= W4_TW_MAX and tw8 <= tw + 7: at most the following */
#define W4_ROWS_FLOATS (16 * W4_BAND_MAX + 240 * W4_ROWS_MAX + 8 * W4_TW_MAX + 120)

/* B^T along one input row for tw8 tiles (whole steps): q + k qs holds the row's columns 4 t + k - 1
 * (k = 0 .. 3, t = 0 .. tw8: the row deinterleaved), r_j receives column j of each tile's 6 x 6 block.
 * Unit strides and outputs that cannot overlap are what let compilers vectorise it. */
static void wino4_row(const float *q, ptrdiff_t qs, float *restrict r0, float *restrict r1, float *restrict r2,
                      float *restrict r3, float *restrict r4, float *restrict r5, int32_t tw8) {
    const float *q0 = q, *q1 = q + qs, *q2 = q + 2 * qs, *q3 = q + 3 * qs;
    int32_t t, l;
    for (t = 0; t < tw8; t += W4_STEP)
        for (l = t; l < t + W4_STEP; ++l) {
            const float d0 = q0[l], d1 = q1[l], d2 = q2[l], d3 = q3[l], d4 = q0[l + 1], d5 = q1[l + 1];
            r0[l] = 4.0f * d0 - 5.0f * d2 + d4;
            r1[l] = (d3 + d4) - 4.0f * (d1 + d2);
            r2[l] = (d4 - d3) + 4.0f * (d1 - d2);
            r3[l] = (d4 - d2) + 2.0f * (d3 - d1);
            r4[l] = (d4 - d2) - 2.0f * (d3 - d1);
            r5[l] = 4.0f * d1 - 5.0f * d3 + d5;
        }
}

/* B^T down the columns for a panel of tiles: a + i as holds row i of their blocks (one column j), v_i
 * receives V[6 i + j] */
static void wino4_cols(const float *a, ptrdiff_t as, float *restrict v0, float *restrict v1, float *restrict v2,
                       float *restrict v3, float *restrict v4, float *restrict v5) {
    const float *a0 = a, *a1 = a + as, *a2 = a + 2 * as, *a3 = a + 3 * as, *a4 = a + 4 * as, *a5 = a + 5 * as;
    int32_t l;
    for (l = 0; l < PANEL; ++l) {
        v0[l] = 4.0f * a0[l] - 5.0f * a2[l] + a4[l];
        v1[l] = (a3[l] + a4[l]) - 4.0f * (a1[l] + a2[l]);
        v2[l] = (a4[l] - a3[l]) + 4.0f * (a1[l] - a2[l]);
        v3[l] = (a4[l] - a2[l]) + 2.0f * (a3[l] - a1[l]);
        v4[l] = (a4[l] - a2[l]) - 2.0f * (a3[l] - a1[l]);
        v5[l] = 4.0f * a1[l] - 5.0f * a3[l] + a5[l];
    }
}

/* items: the input channels; each writes its row of the 36 V[e] for every tile of the band. Each of the
 * band's 4 th + 2 input rows is padded and deinterleaved by column mod 4 once (the blocks of two tile
 * rows share two input rows). The rows of the band's 6 x 6 blocks then go into r (B^T along them),
 * flat over the band's tiles, so that B^T down the columns runs over whole panels of tiles and
 * stores whole panel rows. */
static void wino4_input_items(void *arg, int32_t begin, int32_t end) {
    const wino_job *J = (const wino_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t H = p->in_size[1], W = p->in_size[2], C = p->in_c, tw = J->tw, tiles = J->th * tw;
    const int32_t tiles16 = J->tiles16, rows = 4 * J->th + 2;
    const int32_t tw8 = (tw + W4_STEP - 1) / W4_STEP * W4_STEP, qs = tw8 + W4_STEP, qrow = 4 * qs;
    const ptrdiff_t estep = J->vstep, pstep = (ptrdiff_t)C * PANEL;
    float line[4 * (W4_TW_MAX + 2 * W4_STEP)]; /* one input row, x[k - 1] at k, zero-padded to 4 qs */
    float q[W4_ROWS_FLOATS];                   /* q[(row 4 + k) qs + t] = line[4 t + k] of that row */
    float r[6][6][W4_BAND_MAX + W4_STEP];      /* r[i][j][t]: row i, column j of tile t's block, B^T along */
    int32_t c, k, ty, i, j, t, l;
    for (c = begin; c < end; ++c) {
        const float *xc = J->x + ((ptrdiff_t)J->n * C + c) * H * W;
        float *vc = J->v + (ptrdiff_t)c * PANEL;
        for (k = 0; k < rows; ++k) {
            const int32_t iy = 4 * J->ty0 - 1 + k;
            float *qk = q + k * qrow;
            if (iy < 0 || iy >= H) { /* above or below the image */
                memset(qk, 0, (size_t)qrow * sizeof(float));
                continue;
            }
            line[0] = 0.0f;
            memcpy(line + 1, xc + (ptrdiff_t)iy * W, (size_t)W * sizeof(float));
            for (l = W + 1; l < qrow; ++l) line[l] = 0.0f;
            for (t = 0; t < qs; ++t) {
                qk[t] = line[4 * t];
                qk[qs + t] = line[4 * t + 1];
                qk[2 * qs + t] = line[4 * t + 2];
                qk[3 * qs + t] = line[4 * t + 3];
            }
        }
        for (ty = 0; ty < J->th; ++ty)
            for (i = 0; i < 6; ++i) {
                const int32_t at = ty * tw;
                wino4_row(q + (4 * ty + i) * qrow, qs, r[i][0] + at, r[i][1] + at, r[i][2] + at, r[i][3] + at,
                          r[i][4] + at, r[i][5] + at, tw8);
            }
        for (i = 0; i < 6; ++i)
            for (j = 0; j < 6; ++j)
                for (l = tiles; l < tiles16; ++l) r[i][j][l] = 0.0f; /* the last panel's padding */
        for (k = 0; k < tiles16 / PANEL; ++k) {
            float *vk = vc + k * pstep;
            for (j = 0; j < 6; ++j) { /* B^T down the columns: V[e], e = 6 i + j */
                float *v = vk + j * estep;
                const ptrdiff_t s6 = 6 * estep;
                wino4_cols(r[0][j] + k * PANEL, (W4_BAND_MAX + W4_STEP) * 6, v, v + s6, v + 2 * s6, v + 3 * s6,
                           v + 4 * s6, v + 5 * s6);
            }
        }
    }
}

/* items: the output channels; each turns its 36 rows of M into its outputs of the band: A^T M A over
 * whole panels of tiles (flat), then each tile row's four output rows interleaved from it */
static void wino4_output_items(void *arg, int32_t begin, int32_t end) {
    const wino_job *J = (const wino_job *)arg;
    const int32_t tw = J->tw, tp = J->tp;
    const ptrdiff_t estep = J->mstep;
    float o[16][W4_BAND_MAX];       /* o[4 i + j][t]: output (i, j) of tile t's 4 x 4, the bias added */
    float row[4 * W4_TW_MAX + 4]; /* one output row, interleaved */
    int32_t m, i, t;
    for (m = begin; m < end; ++m) {
        const float b = J->bias != NULL ? J->bias[m] : 0.0f;
        const float *mm = J->m + (ptrdiff_t)(m - J->m0) * tp;
        for (t = 0; t < J->th * tw; ++t) {
            float s[4][6];
            int32_t j;
            for (j = 0; j < 6; ++j) { /* A^T down the columns */
                const float m0 = mm[j * estep + t], m1 = mm[(6 + j) * estep + t], m2 = mm[(12 + j) * estep + t],
                            m3 = mm[(18 + j) * estep + t], m4 = mm[(24 + j) * estep + t],
                            m5 = mm[(30 + j) * estep + t];
                s[0][j] = m0 + (m1 + m2) + (m3 + m4);
                s[1][j] = (m1 - m2) + 2.0f * (m3 - m4);
                s[2][j] = (m1 + m2) + 4.0f * (m3 + m4);
                s[3][j] = (m1 - m2) + 8.0f * (m3 - m4) + m5;
            }
            for (i = 0; i < 4; ++i) { /* A along the rows */
                const float *q = s[i];
                o[4 * i][t] = q[0] + (q[1] + q[2]) + (q[3] + q[4]) + b;
                o[4 * i + 1][t] = (q[1] - q[2]) + 2.0f * (q[3] - q[4]) + b;
                o[4 * i + 2][t] = (q[1] + q[2]) + 4.0f * (q[3] + q[4]) + b;
                o[4 * i + 3][t] = (q[1] - q[2]) + 8.0f * (q[3] - q[4]) + q[5] + b;
            }
        }
        wino_store_rows(J, m, 4, (const float *)o, W4_BAND_MAX, row);
    }
}

void aotc_conv_winograd4_f32(const aotc_conv_params *p, const float *x, const float *u, const float *bias,
                             const float *res, float *y, float *scratch) {
    wino_run(p, x, u, bias, res, y, scratch, 4, 36, wino4_input_items, wino4_output_items);
}
