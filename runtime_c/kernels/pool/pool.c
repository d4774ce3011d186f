/* ONNX MaxPool (values and Indices) and AveragePool, float32, NCHW: portable C99, no allocation, no
 * globals. (MaxPool without Indices: pool_max.c; the global pools: pool_global.c; MaxPool on 8-bit
 * integers: pool_int8.c; the float MaxPool in AVX-512 registers: pool_avx512.h.)
 * The rows of both: pool_rows.h. */
#include "pool_rows.h"

/* The flattened spatial index of position pos in a plane of dims in (d, h, w): row major
 * (w fastest), or column major (d fastest) when column_major. */
static int64_t spatial_index(const int32_t *in, const int32_t *pos, int32_t column_major) {
    if (column_major) return pos[0] + (int64_t)pos[1] * in[0] + (int64_t)pos[2] * in[0] * in[1];
    return ((int64_t)pos[0] * in[1] + pos[1]) * in[2] + pos[2];
}

void aotc_maxpool_indices_f32(const aotc_pool_params *p, int32_t spatial_rank, int32_t storage_order,
                              const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y, int64_t *AOTC_RESTRICT indices) {
    const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];
    int32_t c, o[3], k[3], pos[3], best[3], d, inside, found;
    for (c = 0; c < p->planes; ++c) {
        const float *xplane = x + c * in_plane;
        for (o[0] = 0; o[0] < p->out[0]; ++o[0]) {
            for (o[1] = 0; o[1] < p->out[1]; ++o[1]) {
                for (o[2] = 0; o[2] < p->out[2]; ++o[2]) {
                    float v = -FLT_MAX;
                    /* no tap inside: -1 on the real spatial dims, 0 on the leading 1s of a 1-D or 2-D pool */
                    for (d = 0; d < 3; ++d) best[d] = d < 3 - spatial_rank ? 0 : -1;
                    found = 0;
                    for (k[0] = 0; k[0] < p->kernel[0]; ++k[0]) {
                        for (k[1] = 0; k[1] < p->kernel[1]; ++k[1]) {
                            for (k[2] = 0; k[2] < p->kernel[2]; ++k[2]) {
                                inside = 1;
                                for (d = 0; d < 3; ++d) {
                                    pos[d] = o[d] * p->strides[d] - p->pads_begin[d] + k[d] * p->dilations[d];
                                    if (pos[d] < 0 || pos[d] >= p->in[d]) inside = 0;
                                }
                                if (inside) {
                                    const float t = xplane[spatial_index(p->in, pos, 0)];
                                    if (!found || t > v) { /* the first tap, then only a larger value */
                                        v = t;
                                        found = 1;
                                        best[0] = pos[0], best[1] = pos[1], best[2] = pos[2];
                                    }
                                }
                            }
                        }
                    }
                    *y++ = v;
                    *indices++ = c * in_plane + spatial_index(p->in, best, storage_order);
                }
            }
        }
    }
}


void aotc_avgpool_f32(const aotc_pool_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    const int64_t in_plane = (int64_t)p->in[0] * p->in[1] * p->in[2];
    const int32_t out_w = p->out[2];
    /* the divisor counts the taps in [lo, hi) on each dim: the input, or the padded input */
    int32_t lo[3], hi[3], full0, full1, k, c, od, oh, i;
    int one = 1;
    for (k = 0; k < 3; ++k) { /* one window per plane, wholly inside the input, taps adjacent */
        one = one && p->out[k] == 1 && p->pads_begin[k] == 0 && p->kernel[k] <= p->in[k] &&
              (p->dilations[k] == 1 || p->kernel[k] == 1);
    }
    if (one) { /* the pool to 1 x 1 that ends a classifier: a sum per plane, in lanes */
        const float count = (float)(p->kernel[0] * p->kernel[1] * p->kernel[2]);
        for (c = 0; c < p->planes; ++c, x += in_plane) {
            float s = 0.0f;
            for (od = 0; od < p->kernel[0]; ++od) {
                s += sum_runs(x + (int64_t)od * p->in[1] * p->in[2], p->kernel[1], p->kernel[2], p->in[2]);
            }
            y[c] = s / count;
        }
        return;
    }
    for (k = 0; k < 3; ++k) {
        lo[k] = p->count_include_pad ? -p->pads_begin[k] : 0;
        hi[k] = p->in[k] + (p->count_include_pad ? p->pads_end[k] : 0);
    }
    /* outputs [full0, full1) along w have every tap in [lo, hi): no need to count them */
    tap_range(-p->pads_begin[2], p->strides[2], out_w, lo[2], hi[2] - (p->kernel[2] - 1) * p->dilations[2],
              &full0, &full1);
    for (c = 0; c < p->planes; ++c) {
        const float *xplane = x + c * in_plane;
        for (od = 0; od < p->out[0]; ++od) {
            const int32_t taps_d = tap_count(od * p->strides[0] - p->pads_begin[0], p->dilations[0],
                                             p->kernel[0], lo[0], hi[0]);
            for (oh = 0; oh < p->out[1]; ++oh, y += out_w) {
                const int32_t taps_dh = taps_d * tap_count(oh * p->strides[1] - p->pads_begin[1], p->dilations[1],
                                                           p->kernel[1], lo[1], hi[1]);
                pool_row(p, xplane, od, oh, 0, y);
                for (i = 0; i < out_w; ++i) {
                    const int32_t taps_w = i >= full0 && i < full1
                                               ? p->kernel[2]
                                               : tap_count(i * p->strides[2] - p->pads_begin[2], p->dilations[2],
                                                           p->kernel[2], lo[2], hi[2]);
                    const int32_t taps = taps_dh * taps_w;
                    y[i] = taps > 0 ? y[i] / (float)taps : 0.0f;
                }
            }
        }
    }
}
