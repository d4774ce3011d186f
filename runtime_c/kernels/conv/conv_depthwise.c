/* Depthwise ONNX Conv (one input channel per group): the direct loop for any shape
 * (aotc_conv_depthwise_f32), and the 2-D 3 x 3 kernel at stride 1 or 2 through a zero-padded
 * copy of each plane (aotc_conv_depthwise3x3_f32). */
#include "conv_internal.h"

/* ---- depthwise Conv: direct -------------------------------------------------------- */

/* One row of taps of a depthwise conv, for output columns [lo, hi) whose taps all lie
 * inside the input row: y[ox] += sum over kx of wk[kx] * x[ox * sx + kx * dx - px]. */
static void depthwise_row_interior(float *AOTC_RESTRICT y, const float *AOTC_RESTRICT x, const float *wk,
                                   int32_t lo, int32_t hi, int32_t kw, int32_t sx, int32_t dx, int32_t px) {
    int32_t kx, ox;
    if (kw == 3) { /* the common 3-wide kernel in one pass */
        const float w0 = wk[0], w1 = wk[1], w2 = wk[2];
        const int32_t o0 = -px, o1 = dx - px, o2 = 2 * dx - px;
#define TAPS3(S)                                                                                    \
        for (ox = lo; ox < hi; ++ox) {                                                              \
            const int32_t i = ox * (S);                                                             \
            y[ox] = MK_MADD(w2, x[i + o2], MK_MADD(w1, x[i + o1], MK_MADD(w0, x[i + o0], y[ox])));           \
        }
        if (sx == 1) { /* constant strides let the compiler vectorise */
            TAPS3(1)
        } else if (sx == 2) {
            TAPS3(2)
        } else {
            TAPS3(sx)
        }
#undef TAPS3
        return;
    }
    for (kx = 0; kx < kw; ++kx) {
        const float wv = wk[kx];
        const int32_t off = kx * dx - px;
        if (sx == 1) {
            for (ox = lo; ox < hi; ++ox) y[ox] = MK_MADD(wv, x[ox + off], y[ox]);
        } else {
            for (ox = lo; ox < hi; ++ox) y[ox] = MK_MADD(wv, x[ox * sx + off], y[ox]);
        }
    }
}

/* The same for the border columns [0, lo) and [hi, n_out), testing each tap. */
static void depthwise_row_borders(float *y, const float *x, const float *wk, int32_t lo, int32_t hi, int32_t n_out,
                                  int32_t n_in, int32_t kw, int32_t sx, int32_t dx, int32_t px) {
    int32_t ox, kx;
    for (ox = 0; ox < n_out; ++ox) {
        int32_t base, k0, k1;
        float acc;
        if (ox == lo) ox = hi;
        if (ox >= n_out) break;
        base = ox * sx - px; /* input column of tap 0; taps [k0, k1) are inside */
        valid_range(kw, n_in, dx, base, &k0, &k1);
        acc = y[ox];
        for (kx = k0; kx < k1; ++kx) acc = MK_MADD(wk[kx], x[base + kx * dx], acc);
        y[ox] = acc;
    }
}

/* 3 x 3 depthwise rows whose three input rows are all inside the image: for each of
 * `rows` output rows y of n_out columns (rows y_step apart, reading input rows x, x + x_d,
 * x + 2 x_d of n_in columns, x advancing x_step per output row), y[ox] = b + the taps
 * inside the image. Columns [lo, hi) have all their taps inside: one vectorised pass. */
static void depthwise_rows_3x3(float *y, ptrdiff_t y_step, const float *x, ptrdiff_t x_step, ptrdiff_t x_d,
                               int32_t rows, const float *w, float b, int32_t lo, int32_t hi, int32_t n_out,
                               int32_t n_in, int32_t sx, int32_t dx, int32_t px) {
    const float w00 = w[0], w01 = w[1], w02 = w[2], w10 = w[3], w11 = w[4];
    const float w12 = w[5], w20 = w[6], w21 = w[7], w22 = w[8];
    const int32_t o0 = -px, o1 = dx - px, o2 = 2 * dx - px;
    int32_t row, ox, kx;
    for (row = 0; row < rows; ++row, y += y_step, x += x_step) {
        float *AOTC_RESTRICT yr = y;
        const float *AOTC_RESTRICT r0 = x;
        const float *AOTC_RESTRICT r1 = x + x_d;
        const float *AOTC_RESTRICT r2 = x + 2 * x_d;
        for (ox = 0; ox < n_out; ++ox) { /* border columns: the taps [k0, k1) inside */
            int32_t base, k0, k1;
            float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f; /* one sum per tap row: short dependency chains */
            if (ox == lo) ox = hi;
            if (ox >= n_out) break;
            base = ox * sx - px;
            valid_range(3, n_in, dx, base, &k0, &k1);
            for (kx = k0; kx < k1; ++kx) {
                const int32_t i = base + kx * dx;
                s0 = MK_MADD(w[kx], r0[i], s0);
                s1 = MK_MADD(w[3 + kx], r1[i], s1);
                s2 = MK_MADD(w[6 + kx], r2[i], s2);
            }
            yr[ox] = b + (s0 + s1 + s2);
        }
#define TAPS3X3(S)                                                                               \
        for (ox = lo; ox < hi; ++ox) {                                                           \
            const int32_t i = ox * (S);                                                          \
            const float s0 = MK_MADD(w02, r0[i + o2], MK_MADD(w01, r0[i + o1], w00 * r0[i + o0]));     \
            const float s1 = MK_MADD(w12, r1[i + o2], MK_MADD(w11, r1[i + o1], w10 * r1[i + o0]));     \
            const float s2 = MK_MADD(w22, r2[i + o2], MK_MADD(w21, r2[i + o1], w20 * r2[i + o0]));     \
            yr[ox] = b + (s0 + s1 + s2);                                                         \
        }
        if (sx == 1) { /* constant strides let the compiler vectorise */
            TAPS3X3(1)
        } else if (sx == 2) {
            TAPS3X3(2)
        } else {
            TAPS3X3(sx)
        }
#undef TAPS3X3
    }
}

void aotc_conv_depthwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             const float *res, float *y) {
    const int32_t ID = p->in_size[0], IH = p->in_size[1], IW = p->in_size[2];
    const int32_t OD = p->out_size[0], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KD = p->kernel[0], KH = p->kernel[1], KW = p->kernel[2];
    const int32_t sx = p->strides[2], dx = p->dilations[2], px = p->pads[2], dy = p->dilations[1];
    const int32_t mult = p->out_c / p->in_c; /* outputs per input channel */
    const ptrdiff_t in_plane = (ptrdiff_t)ID * IH * IW, out_plane = (ptrdiff_t)OD * OH * OW;
    int32_t lo, hi, fy_lo, fy_hi, unused, n, o, oz, oy, kz, ky, ox;
    /* [lo, hi): output columns whose every tap is inside the image (no tests there) */
    valid_range(OW, IW, sx, -px, &lo, &unused);
    valid_range(OW, IW, sx, (KW - 1) * dx - px, &unused, &hi);
    if (hi < lo) hi = lo;
    /* [fy_lo, fy_hi): with a 3 x 3 kernel, output rows whose three input rows are inside */
    fy_lo = fy_hi = 0;
    if (KD == 1 && KH == 3 && KW == 3 && IH > 2 * dy) valid_range(OH, IH - 2 * dy, p->strides[1], -p->pads[1], &fy_lo, &fy_hi);
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const float *xc = x + ((ptrdiff_t)n * p->in_c + o / mult) * in_plane;
            const float *wo = w + (ptrdiff_t)o * KD * KH * KW;
            float *yo = y + ((ptrdiff_t)n * p->out_c + o) * out_plane;
            const float b = bias != NULL ? bias[o] : 0.0f;
            for (oz = 0; oz < OD; ++oz) {
                const int32_t iz0 = oz * p->strides[0] - p->pads[0];
                const int fused = fy_lo < fy_hi && iz0 >= 0 && iz0 < ID; /* KD == 1 here */
                for (oy = 0; oy < OH; ++oy) { /* rows not done below, tap row by tap row */
                    float *yrow = yo + ((ptrdiff_t)oz * OH + oy) * OW;
                    const int32_t iy0 = oy * p->strides[1] - p->pads[1];
                    if (fused && oy == fy_lo) { /* rows [fy_lo, fy_hi) come below */
                        oy = fy_hi - 1;
                        continue;
                    }
                    for (ox = 0; ox < OW; ++ox) yrow[ox] = b;
                    for (kz = 0; kz < KD; ++kz) {
                        const int32_t iz = iz0 + kz * p->dilations[0];
                        if (iz < 0 || iz >= ID) continue;
                        for (ky = 0; ky < KH; ++ky) {
                            const int32_t iy = iy0 + ky * dy;
                            const float *wk = wo + (kz * KH + ky) * KW;
                            const float *xrow;
                            if (iy < 0 || iy >= IH) continue;
                            xrow = xc + ((ptrdiff_t)iz * IH + iy) * IW;
                            depthwise_row_borders(yrow, xrow, wk, lo, hi, OW, IW, KW, sx, dx, px);
                            depthwise_row_interior(yrow, xrow, wk, lo, hi, KW, sx, dx, px);
                        }
                    }
                }
                if (fused) {
                    const float *x0 = xc + ((ptrdiff_t)iz0 * IH + fy_lo * p->strides[1] - p->pads[1]) * IW;
                    depthwise_rows_3x3(yo + ((ptrdiff_t)oz * OH + fy_lo) * OW, OW, x0, (ptrdiff_t)p->strides[1] * IW,
                                       (ptrdiff_t)dy * IW, fy_hi - fy_lo, wo, b, lo, hi, OW, IW, sx, dx, px);
                }
            }
            if (res != NULL) { /* the fused epilogue, on the plane while it is in cache */
                const float *ro = res + ((ptrdiff_t)n * p->out_c + o) * out_plane;
                ptrdiff_t i;
                for (i = 0; i < out_plane; ++i) yo[i] += ro[i];
            }
            aotc_activate_f32(yo, out_plane, p->act, p->act_lo, p->act_hi, p->act_alpha);
        }
    }
}

/* ---- depthwise 3 x 3, stride 1 or 2: through a zero-padded copy of the plane ------------ */

/* Row iy of the input (or zeros when iy is outside) as padded row columns c = 0 .. cols - 1
 * (input column c - pl, zero outside the image): stride 1 into d; stride 2 split by the
 * column's parity, c = 2k into even[k], c = 2k + 1 into odd[k] (half entries each). */
static void pad_row(const float *xc, int32_t IH, int32_t IW, int32_t iy, int32_t pl, int32_t cols, int split,
                    float *AOTC_RESTRICT even, float *AOTC_RESTRICT odd) {
    const int32_t half = (cols + 1) / 2;
    const int32_t lo = iy < 0 || iy >= IH ? cols : (pl < cols ? pl : cols);
    const int32_t hi = iy < 0 || iy >= IH ? cols : (IW + pl < cols ? IW + pl : cols);
    const float *AOTC_RESTRICT src = xc + (ptrdiff_t)(iy < 0 || iy >= IH ? 0 : iy) * IW;
    int32_t c, k;
    if (!split) {
        for (c = 0; c < lo; ++c) even[c] = 0.0f;
        for (c = lo; c < hi; ++c) even[c] = src[c - pl];
        for (c = hi; c < cols; ++c) even[c] = 0.0f;
        return;
    }
    {
        const int32_t e0 = (lo + 1) / 2, e1 = (hi + 1) / 2, o0 = lo / 2, o1 = hi / 2;
        /* [k0, k1): both columns of pair k inside, one loop of paired loads (vectorised as a
         * de-interleave); the few others one by one */
        const int32_t k0 = e0 > o0 ? e0 : o0, k1 = e1 < o1 ? e1 : o1;
        const float *AOTC_RESTRICT s2 = src - pl;
        if (lo == hi) { /* a row of zeros (outside the image): the loops below would read column lo */
            for (k = 0; k < half; ++k) even[k] = odd[k] = 0.0f;
            return;
        }
        for (k = 0; k < e0; ++k) even[k] = 0.0f;
        for (k = 0; k < o0; ++k) odd[k] = 0.0f;
        for (k = e0; k < k0; ++k) even[k] = s2[2 * k];
        for (k = o0; k < k0; ++k) odd[k] = s2[2 * k + 1];
        for (k = k0; k < k1; ++k) {
            even[k] = s2[2 * k];
            odd[k] = s2[2 * k + 1];
        }
        for (k = k1 > e0 ? k1 : e0; k < e1; ++k) even[k] = s2[2 * k];
        for (k = k1 > o0 ? k1 : o0; k < o1; ++k) odd[k] = s2[2 * k + 1];
        for (k = e1; k < half; ++k) even[k] = 0.0f;
        for (k = o1; k < half; ++k) odd[k] = 0.0f;
    }
}

void aotc_conv_depthwise3x3_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                const float *res, float *y, float *scratch) {
    const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t s = p->strides[2]; /* == strides[1], 1 or 2 */
    const int32_t rows = (OH - 1) * s + 3, cols = (OW - 1) * s + 3;
    /* stride 1: one padded plane, rows of `cols`. stride 2: four phase planes (row parity x
     * column parity), each prow rows of `half`: every tap is then a unit-stride read. */
    const int32_t half = (cols + 1) / 2, prow = (rows + 1) / 2;
    const int32_t row_len = s == 1 ? cols : half;
    const ptrdiff_t phase = (ptrdiff_t)prow * half;
    float *const wide = scratch + (s == 1 ? (ptrdiff_t)rows * cols : 4 * phase);
    const int32_t mult = p->out_c / p->in_c;
    const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, out_plane = (ptrdiff_t)OH * OW;
    /* output (oy, ox) is computed at wide[oy * row_len + ox]: one flat pass over the plane
     * (the columns past OW of each wide row are junk, dropped when the rows are copied out) */
    const ptrdiff_t nq = (ptrdiff_t)(OH - 1) * row_len + OW;
    int32_t n, o, oy, r;
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const float *wo = w + (ptrdiff_t)o * 9;
            const float w00 = wo[0], w01 = wo[1], w02 = wo[2], w10 = wo[3], w11 = wo[4];
            const float w12 = wo[5], w20 = wo[6], w21 = wo[7], w22 = wo[8];
            const float b = bias != NULL ? bias[o] : 0.0f;
            const ptrdiff_t yoff = ((ptrdiff_t)n * p->out_c + o) * out_plane;
            float *yo = y + yoff;
            ptrdiff_t q;
            if (o % mult == 0) {
                const float *xc = x + ((ptrdiff_t)n * p->in_c + o / mult) * in_plane;
                for (r = 0; r < rows; ++r) {
                    float *even = s == 1 ? scratch + (ptrdiff_t)r * cols
                                         : scratch + (r % 2) * 2 * phase + (ptrdiff_t)(r / 2) * half;
                    pad_row(xc, IH, IW, r - p->pads[1], p->pads[2], cols, s == 2, even, even + phase);
                }
            }
            if (s == 1) {
                const float *AOTC_RESTRICT r0 = scratch;
                const float *AOTC_RESTRICT r1 = scratch + row_len;
                const float *AOTC_RESTRICT r2 = scratch + 2 * row_len;
                float *AOTC_RESTRICT wq = wide;
                for (q = 0; q < nq; ++q) {
                    const float s0 = MK_MADD(w02, r0[q + 2], MK_MADD(w01, r0[q + 1], w00 * r0[q]));
                    const float s1 = MK_MADD(w12, r1[q + 2], MK_MADD(w11, r1[q + 1], w10 * r1[q]));
                    const float s2 = MK_MADD(w22, r2[q + 2], MK_MADD(w21, r2[q + 1], w20 * r2[q]));
                    wq[q] = b + (s0 + s1 + s2);
                }
            } else { /* tap (ky, kx) of output q: row phase ky % 2, column phase kx % 2, + ky/2 rows + kx/2 */
                const float *AOTC_RESTRICT ee = scratch;
                const float *AOTC_RESTRICT eo = scratch + phase;
                const float *AOTC_RESTRICT oe = scratch + 2 * phase;
                const float *AOTC_RESTRICT oo = scratch + 3 * phase;
                float *AOTC_RESTRICT wq = wide;
                for (q = 0; q < nq; ++q) {
                    const float s0 = MK_MADD(w02, ee[q + 1], MK_MADD(w01, eo[q], w00 * ee[q]));
                    const float s1 = MK_MADD(w12, oe[q + 1], MK_MADD(w11, oo[q], w10 * oe[q]));
                    const float s2 = MK_MADD(w22, ee[q + half + 1], MK_MADD(w21, eo[q + half], w20 * ee[q + half]));
                    wq[q] = b + (s0 + s1 + s2);
                }
            }
            for (oy = 0; oy < OH; ++oy) {
                memcpy(yo + (ptrdiff_t)oy * OW, wide + (ptrdiff_t)oy * row_len, (size_t)OW * sizeof(float));
            }
            if (res != NULL) { /* the fused epilogue, on the plane while it is in cache */
                const float *AOTC_RESTRICT ro = res + yoff;
                ptrdiff_t i;
                for (i = 0; i < out_plane; ++i) yo[i] += ro[i];
            }
            aotc_activate_f32(yo, out_plane, p->act, p->act_lo, p->act_hi, p->act_alpha);
        }
    }
}
