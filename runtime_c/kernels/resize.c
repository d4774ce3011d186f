/* ONNX Resize / Upsample, float32. Reference kernels: portable C99, no
 * allocation, no globals; all coordinate arithmetic was done by the compiler. One
 * kernel per op, already the plain loop: it is the family's reference (no resize_ref.c; see
 * kernels_ref.h). */
#include "aotc_resize.h"

/* Gather: the innermost dim is a table lookup per element; outer dims advance
 * an odometer that keeps the summed offset of the current source row. */
/* Nearest is a gather: one kernel per element type (floats, and the 8-bit integers of quantized
 * models). */
#define AOTC_RESIZE_NEAREST(SUFFIX, T)                                                      \
void aotc_resize_nearest_##SUFFIX(const aotc_resize_nearest_params *p, const T *x, T *y) {  \
    const int32_t r = p->rank, n = p->out_shape[r - 1];                                     \
    const int32_t *last = p->offsets + p->start[r - 1];                                     \
    int32_t idx[AOTC_MAX_RANK] = {0};                                                       \
    int64_t outer = 1, o, base = 0;                                                         \
    int32_t i, k;                                                                           \
    for (k = 0; k < r - 1; ++k) {                                                           \
        outer *= p->out_shape[k];                                                           \
        base += p->offsets[p->start[k]];                                                    \
    }                                                                                       \
    for (o = 0; o < outer; ++o) {                                                           \
        const T *src = x + base;                                                            \
        for (i = 0; i < n; ++i) y[i] = src[last[i]];                                        \
        y += n;                                                                             \
        for (k = r - 2; k >= 0; --k) { /* next output row */                                \
            const int32_t *t = p->offsets + p->start[k];                                    \
            base -= t[idx[k]];                                                              \
            if (++idx[k] < p->out_shape[k]) {                                               \
                base += t[idx[k]];                                                          \
                break;                                                                      \
            }                                                                               \
            idx[k] = 0;                                                                     \
            base += t[0];                                                                   \
        }                                                                                   \
    }                                                                                       \
}

AOTC_RESIZE_NEAREST(f32, float)
AOTC_RESIZE_NEAREST(i8, int8_t)
AOTC_RESIZE_NEAREST(u8, uint8_t)
#undef AOTC_RESIZE_NEAREST

/* Blend: each output element (a run of `inner` contiguous elements) is the
 * weighted sum of taps_h * taps_w source runs. */
void aotc_resize_f32(const aotc_resize_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y) {
    const int32_t inner = p->inner;
    int32_t o, j, m, i, s, t, c;
    for (o = 0; o < p->outer; ++o) {
        const float *xo = x + (int64_t)o * p->x_outer_stride;
        for (j = 0; j < p->out_h; ++j) {
            const int32_t *off_h = p->offset_h + (int64_t)j * p->taps_h;
            const float *w_h = p->weight_h + (int64_t)j * p->taps_h;
            for (m = 0; m < p->mid; ++m) {
                const float *xm = xo + (int64_t)m * p->x_mid_stride;
                for (i = 0; i < p->out_w; ++i) {
                    const int32_t *off_w = p->offset_w + (int64_t)i * p->taps_w;
                    const float *w_w = p->weight_w + (int64_t)i * p->taps_w;
                    for (c = 0; c < inner; ++c) y[c] = 0.0f;
                    for (s = 0; s < p->taps_h; ++s) {
                        for (t = 0; t < p->taps_w; ++t) {
                            const float w = w_h[s] * w_w[t];
                            const float *src = xm + off_h[s] + off_w[t];
                            for (c = 0; c < inner; ++c) y[c] += w * src[c];
                        }
                    }
                    y += inner;
                }
            }
        }
    }
}
