/* The quantized kernels over one element type, instantiated by quant.c: QT is the type
 * (int8_t or uint8_t), [QT_MIN, QT_MAX] its range, AOTC_Q(name) the function's name. No
 * include guard: it is included once per type. */

void AOTC_Q(quantize)(const aotc_qaxis *p, const float *x, QT *y) {
    int32_t o, c, i;
    for (o = 0; o < p->outer; ++o) {
        for (c = 0; c < p->channels; ++c) {
            const float s = p->scale[c];
            const int32_t z = p->zero[c];
            const float lo = (float)(QT_MIN - z), hi = (float)(QT_MAX - z);
            for (i = 0; i < p->inner; ++i) {
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

/* Output channels [oc, oc + nb) of one group over output positions [p0, p0 + np) of a 1 x 1,
 * stride 1, unpadded convolution: acc[j][q] accumulates w[j][ic] * (x[ic][p0 + q] - x_zero). */
static void AOTC_Q(qconv_pointwise_block)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                                          const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y,
                                          int32_t *AOTC_RESTRICT acc, int32_t oc, int32_t nb, int32_t cg,
                                          int32_t p0, int32_t np) {
    const int32_t plane = p->out_h * p->out_w, xz = p->x_zero;
    int32_t j, ic, q;
    for (j = 0; j < nb; ++j) {
        int32_t *a = acc + j * AOTC_QCONV_TILE;
        const int32_t b = p->bias[oc + j];
        for (q = 0; q < np; ++q) a[q] = b;
    }
    for (ic = 0; ic < cg; ++ic) {
        const QT *xs = x + (int64_t)ic * plane + p0;
        for (j = 0; j < nb; ++j) {
            int32_t *a = acc + j * AOTC_QCONV_TILE;
            const int32_t wv = (int32_t)w[(int64_t)(oc + j) * cg + ic] - p->w_zero[oc + j];
            for (q = 0; q < np; ++q) a[q] += wv * ((int32_t)xs[q] - xz);
        }
    }
    for (j = 0; j < nb; ++j) {
        const int32_t *a = acc + j * AOTC_QCONV_TILE;
        const float s = p->scale[oc + j];
        QT *yo = y + (int64_t)(oc + j) * plane + p0;
        for (q = 0; q < np; ++q) yo[q] = (QT)aotc_requant(a[q], s, p->y_lo, p->y_hi, p->y_zero);
    }
}

/* Output channels [oc, oc + nb) of one group, output row oh: for each tap, the run of outputs
 * whose input lies inside the image is found once, and the inner loop over it has no test
 * (padding contributes nothing: a padded input is the zero point, so x - x_zero is 0). */
static void AOTC_Q(qconv_row)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x,
                              const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, int32_t *AOTC_RESTRICT acc,
                              int32_t oc, int32_t nb, int32_t cg, int32_t oh) {
    const int32_t ow_n = p->out_w, sw = p->stride_w, xz = p->x_zero, taps = p->k_h * p->k_w;
    int32_t j, ic, kh, kw, o;
    for (j = 0; j < nb; ++j) {
        int32_t *a = acc + j * ow_n;
        const int32_t b = p->bias[oc + j];
        for (o = 0; o < ow_n; ++o) a[o] = b;
    }
    for (ic = 0; ic < cg; ++ic) {
        for (kh = 0; kh < p->k_h; ++kh) {
            const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
            const QT *xrow;
            if (ih < 0 || ih >= p->in_h) continue;
            xrow = x + ((int64_t)ic * p->in_h + ih) * p->in_w;
            for (kw = 0; kw < p->k_w; ++kw) {
                const int32_t start = kw * p->dil_w - p->pad_left; /* input column of output 0 */
                /* outputs o with 0 <= start + o * sw < in_w */
                int32_t o0 = start < 0 ? (-start + sw - 1) / sw : 0;
                int32_t o1 = start < p->in_w ? (p->in_w - start + sw - 1) / sw : 0;
                if (o1 > ow_n) o1 = ow_n;
                if (o0 >= o1) continue;
                for (j = 0; j < nb; ++j) {
                    int32_t *a = acc + j * ow_n;
                    /* w - w_zero and x - x_zero fit 16 bits: 16 x 16 -> 32-bit products vectorise well */
                    const int16_t wv = (int16_t)(w[((int64_t)(oc + j) * cg + ic) * taps + kh * p->k_w + kw]
                                                 - p->w_zero[oc + j]);
                    const QT *xs = xrow + start;
                    if (sw == 1) {
                        for (o = o0; o < o1; ++o) a[o] += (int32_t)wv * (int16_t)(xs[o] - xz);
                    } else {
                        for (o = o0; o < o1; ++o) a[o] += (int32_t)wv * (int16_t)(xs[(int64_t)o * sw] - xz);
                    }
                }
            }
        }
    }
    for (j = 0; j < nb; ++j) {
        const int32_t *a = acc + j * ow_n;
        const float s = p->scale[oc + j];
        QT *yo = y + ((int64_t)(oc + j) * p->out_h + oh) * ow_n;
        for (o = 0; o < ow_n; ++o) yo[o] = (QT)aotc_requant(a[o], s, p->y_lo, p->y_hi, p->y_zero);
    }
}

/* The patch matrix of output positions [p0, p0 + np) of one group, transposed: row r (one input
 * channel and kernel tap: r = (ic * k_h + kh) * k_w + kw) holds that tap's input under each of the
 * np positions, the input zero point where the tap falls in the padding (so padding adds nothing
 * to the sums). Positions of one output row are a strided run of one input row: copied as such. */
static void AOTC_Q(qconv_patches_t)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT xg, int32_t cg, int32_t p0,
                                    int32_t np, QT *AOTC_RESTRICT patches) {
    const QT zero = (QT)p->x_zero;
    const int32_t ow_n = p->out_w, sw = p->stride_w;
    int32_t ic, kh, kw, t, o;
    for (ic = 0; ic < cg; ++ic) {
        const QT *plane = xg + (int64_t)ic * p->in_h * p->in_w;
        for (kh = 0; kh < p->k_h; ++kh) {
            for (kw = 0; kw < p->k_w; ++kw) {
                QT *row = patches + (int64_t)((ic * p->k_h + kh) * p->k_w + kw) * np;
                const int32_t start = kw * p->dil_w - p->pad_left; /* input column under output column 0 */
                /* output columns o with the tap inside the image: o0 <= o < o1 */
                const int32_t o0 = start < 0 ? (-start + sw - 1) / sw : 0;
                const int32_t o1_raw = start < p->in_w ? (p->in_w - start + sw - 1) / sw : 0;
                const int32_t o1 = o1_raw < ow_n ? o1_raw : ow_n;
                for (t = 0; t < np;) { /* one output row's run of positions at a time */
                    const int32_t pos = p0 + t, oh = pos / ow_n, first = pos % ow_n;
                    const int32_t last = first + (np - t) < ow_n ? first + (np - t) : ow_n;
                    const int32_t ih = oh * p->stride_h - p->pad_top + kh * p->dil_h;
                    QT *out = row + t;
                    if (ih < 0 || ih >= p->in_h) {
                        for (o = first; o < last; ++o) out[o - first] = zero;
                    } else {
                        const QT *xs = plane + (int64_t)ih * p->in_w + start;
                        const int32_t a = first > o0 ? first : o0, b = last < o1 ? last : o1;
                        for (o = first; o < a && o < last; ++o) out[o - first] = zero;
                        if (sw == 1) {
                            for (o = a; o < b; ++o) out[o - first] = xs[o];
                        } else {
                            for (o = a; o < b; ++o) out[o - first] = xs[(int64_t)o * sw];
                        }
                        for (o = b > first ? b : first; o < last; ++o) out[o - first] = zero;
                    }
                    t += last - first;
                }
            }
        }
    }
}

/* Output channels [oc, oc + nb) (nb <= 4) at AOTC_QCONV_LANES positions from column t0 of the
 * transposed patches (row length np): acc[j][l] = sum_r w[oc + j][r] * patches[r][t0 + l], held in
 * registers across the rows (vectors along the positions). */
static void AOTC_Q(qconv_patch_lanes)(const QT *AOTC_RESTRICT patches, int32_t np, int32_t t0, int32_t k,
                                const int8_t *AOTC_RESTRICT w, int32_t nb,
                                int32_t acc[AOTC_QCONV_BLOCK][AOTC_QCONV_LANES]) {
    const int8_t *w0 = w, *w1 = w + (nb > 1 ? k : 0), *w2 = w + (nb > 2 ? 2 * k : 0), *w3 = w + (nb > 3 ? 3 * k : 0);
    int32_t r, l;
    int32_t a0[AOTC_QCONV_LANES] = {0}, a1[AOTC_QCONV_LANES] = {0}, a2[AOTC_QCONV_LANES] = {0},
            a3[AOTC_QCONV_LANES] = {0};
    for (r = 0; r < k; ++r) {
        const QT *pr = patches + (int64_t)r * np + t0;
        const int32_t v0 = w0[r], v1 = w1[r], v2 = w2[r], v3 = w3[r];
        for (l = 0; l < AOTC_QCONV_LANES; ++l) {
            const int32_t xv = pr[l];
            a0[l] += v0 * xv;
            a1[l] += v1 * xv;
            a2[l] += v2 * xv;
            a3[l] += v3 * xv;
        }
    }
    for (l = 0; l < AOTC_QCONV_LANES; ++l) {
        acc[0][l] = a0[l], acc[1][l] = a1[l], acc[2][l] = a2[l], acc[3][l] = a3[l];
    }
}

void AOTC_Q(qconv_patches)(const aotc_qconv_params *p, int32_t tile, const QT *AOTC_RESTRICT x,
                           const int8_t *AOTC_RESTRICT w, QT *AOTC_RESTRICT y, QT *AOTC_RESTRICT scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k = cg * p->k_h * p->k_w;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    int32_t acc[AOTC_QCONV_BLOCK][AOTC_QCONV_LANES];
    int32_t sums[AOTC_QCONV_PATCH_TILE];
    int32_t n, g, oc, p0, t, t0, j, r;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            QT *yn = y + (int64_t)n * p->out_c * plane_out;
            for (p0 = 0; p0 < plane_out; p0 += tile) {
                /* np: a whole number of lanes (the last block re-reads a few positions of the one before) */
                const int32_t np = plane_out - p0 < tile ? plane_out - p0 : tile;
                const int32_t np_lanes = (np + AOTC_QCONV_LANES - 1) / AOTC_QCONV_LANES * AOTC_QCONV_LANES;
                const int32_t q0 = np_lanes <= plane_out ? p0 + np - np_lanes : 0; /* first position gathered */
                const int32_t width = np_lanes <= plane_out ? np_lanes : plane_out;
                AOTC_Q(qconv_patches_t)(p, xg, cg, q0, width, scratch);
                for (t = 0; t < width; ++t) sums[t] = 0;
                if (p->w_zero_any) {
                    for (r = 0; r < k; ++r) {
                        for (t = 0; t < width; ++t) sums[t] += scratch[(int64_t)r * width + t];
                    }
                }
                for (oc = g * mg; oc < (g + 1) * mg; oc += AOTC_QCONV_BLOCK) {
                    const int32_t nb = (g + 1) * mg - oc < AOTC_QCONV_BLOCK ? (g + 1) * mg - oc : AOTC_QCONV_BLOCK;
                    for (t0 = 0; t0 < width; t0 += AOTC_QCONV_LANES) {
                        const int32_t lanes = width - t0 < AOTC_QCONV_LANES ? width - t0 : AOTC_QCONV_LANES;
                        if (lanes == AOTC_QCONV_LANES) {
                            AOTC_Q(qconv_patch_lanes)(scratch, width, t0, k, w + (int64_t)oc * k, nb, acc);
                        } else { /* the tail of a plane too small for whole lanes */
                            int32_t l;
                            for (j = 0; j < nb; ++j) {
                                for (l = 0; l < lanes; ++l) {
                                    int32_t sacc = 0;
                                    for (r = 0; r < k; ++r) {
                                        sacc += (int32_t)w[(int64_t)(oc + j) * k + r] * scratch[(int64_t)r * width + t0 + l];
                                    }
                                    acc[j][l] = sacc;
                                }
                            }
                        }
                        for (j = 0; j < nb; ++j) { /* a run of one channel's outputs: requantised as a vector */
                            const int32_t b = p->bias[oc + j], wz = p->w_zero[oc + j];
                            const float sc = p->scale[oc + j];
                            QT *yo = yn + (int64_t)(oc + j) * plane_out + q0 + t0;
                            int32_t l;
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

void AOTC_Q(qconv)(const aotc_qconv_params *p, const QT *AOTC_RESTRICT x, const int8_t *AOTC_RESTRICT w,
                   QT *AOTC_RESTRICT y, int32_t *AOTC_RESTRICT scratch) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t plane_in = p->in_h * p->in_w, plane_out = p->out_h * p->out_w;
    const int pointwise = p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && p->stride_w == 1 &&
                          p->pad_top == 0 && p->pad_left == 0 && plane_in == plane_out;
    int32_t n, g, oc, oh, p0;
    for (n = 0; n < p->batch; ++n) {
        for (g = 0; g < p->group; ++g) {
            const QT *xg = x + ((int64_t)n * p->in_c + (int64_t)g * cg) * plane_in;
            QT *yn = y + (int64_t)n * p->out_c * plane_out;
            for (oc = g * mg; oc < (g + 1) * mg; oc += AOTC_QCONV_BLOCK) {
                const int32_t nb = (g + 1) * mg - oc < AOTC_QCONV_BLOCK ? (g + 1) * mg - oc : AOTC_QCONV_BLOCK;
                if (pointwise) {
                    for (p0 = 0; p0 < plane_out; p0 += AOTC_QCONV_TILE) {
                        const int32_t np = plane_out - p0 < AOTC_QCONV_TILE ? plane_out - p0 : AOTC_QCONV_TILE;
                        AOTC_Q(qconv_pointwise_block)(p, xg, w, yn, scratch, oc, nb, cg, p0, np);
                    }
                } else {
                    for (oh = 0; oh < p->out_h; ++oh) AOTC_Q(qconv_row)(p, xg, w, yn, scratch, oc, nb, cg, oh);
                }
            }
        }
    }
}

void AOTC_Q(qgemm)(const aotc_qgemm_params *p, const QT *AOTC_RESTRICT a, const int8_t *AOTC_RESTRICT bt,
                   QT *AOTC_RESTRICT y) {
    int32_t m, n, k;
    for (m = 0; m < p->m; ++m) {
        const QT *ar = a + (int64_t)m * p->k;
        int32_t row_sum = 0;
        if (p->b_zero) {
            for (k = 0; k < p->k; ++k) row_sum += ar[k];
        }
        for (n = 0; n < p->n; ++n) {
            const int8_t *br = bt + (int64_t)n * p->k;
            int32_t acc = 0;
            for (k = 0; k < p->k; ++k) acc += (int32_t)ar[k] * br[k];
            acc += p->bias[n] - (p->b_zero ? p->b_zero[n] * row_sum : 0);
            y[(int64_t)m * p->n + n] = (QT)aotc_requant(acc, p->scale[p->per_column ? n : 0], p->y_lo, p->y_hi,
                                                        p->y_zero);
        }
    }
}

/* One broadcast walk for the binary ops: the innermost run in three forms (a the same across it,
 * b the same across it, both varying), each a plain loop; the outer dims advance an odometer.
 * SCALAR_A / SCALAR_B / BOTH compute y[i] from QT values xa = pa[..], xb = pb[..]. */
#define AOTC_QBINARY(NAME, SCALAR_A, SCALAR_B, BOTH)                                               \
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

static inline int32_t AOTC_Q(saturate)(float f, float lo, float hi) {
    f = f < lo ? lo : f; /* lo, hi are whole numbers: clamping before rounding is clamping after */
    f = f > hi ? hi : f;
    return aotc_round_even(f);
}

AOTC_QBINARY(qadd,
             AOTC_Q(saturate)(fmaf((float)xb, p->b_mult, p->bias + (float)xa * p->a_mult), lo, hi),
             AOTC_Q(saturate)(fmaf((float)xa, p->a_mult, p->bias + (float)xb * p->b_mult), lo, hi),
             AOTC_Q(saturate)(fmaf((float)xa, p->a_mult, fmaf((float)xb, p->b_mult, p->bias)), lo, hi))
AOTC_QBINARY(qmul,
             aotc_requant((xa - p->a_zero) * (xb - p->b_zero), p->a_mult, p->y_lo, p->y_hi, p->y_zero),
             aotc_requant((xa - p->a_zero) * (xb - p->b_zero), p->a_mult, p->y_lo, p->y_hi, p->y_zero),
             aotc_requant((xa - p->a_zero) * (xb - p->b_zero), p->a_mult, p->y_lo, p->y_hi, p->y_zero))
#undef AOTC_QBINARY

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
