/* ONNX DeformConv (aotc_resize.h): GridSample-style bilinear reads at each kernel tap's offset position,
 * then a convolution's dot products. Portable C99, no allocation: per output position, the taps' masked
 * samples of every input channel go to the scratch column (one im2col column), which each output
 * channel of the group then dots with its weights. */
#include "aotc_resize.h"

#include <math.h>

/* x's plane at (h, w), bilinear; each of the four corners outside the plane reads 0 */
static float deform_sample(const float *plane, int32_t height, int32_t width, float h, float w) {
    float lh, lw, v = 0.0f;
    int32_t h0, w0;
    int top, bottom, left, right;
    if (!(h > -1.0f && h < (float)height + 1.0f && w > -1.0f && w < (float)width + 1.0f)) return 0.0f;
    h0 = (int32_t)floorf(h), w0 = (int32_t)floorf(w); /* -1 .. height, -1 .. width */
    lh = h - (float)h0, lw = w - (float)w0;
    top = h0 >= 0 && h0 < height, bottom = h0 + 1 < height, left = w0 >= 0 && w0 < width, right = w0 + 1 < width;
    if (top && left) v += (1.0f - lh) * (1.0f - lw) * plane[(int64_t)h0 * width + w0];
    if (top && right) v += (1.0f - lh) * lw * plane[(int64_t)h0 * width + w0 + 1];
    if (bottom && left) v += lh * (1.0f - lw) * plane[(int64_t)(h0 + 1) * width + w0];
    if (bottom && right) v += lh * lw * plane[(int64_t)(h0 + 1) * width + w0 + 1];
    return v;
}

void aotc_deform_conv_f32(const aotc_deform_conv_params *p, const float *x, const float *w, const float *offset,
                          const float *bias, const float *mask, float *scratch, float *y) {
    const int32_t taps = p->k_h * p->k_w, icg = p->in_c / p->group, ocg = p->out_c / p->group;
    const int32_t per_og = p->in_c / p->offset_group;
    const int64_t plane = (int64_t)p->in_h * p->in_w, out_plane = (int64_t)p->out_h * p->out_w;
    int32_t b, oh, ow, c, t, oc, g;
    for (b = 0; b < p->n; ++b) {
        for (oh = 0; oh < p->out_h; ++oh) {
            for (ow = 0; ow < p->out_w; ++ow) {
                const int64_t pos = (int64_t)oh * p->out_w + ow;
                for (c = 0; c < p->in_c; ++c) {
                    const int32_t og = c / per_og;
                    const float *xc = x + ((int64_t)b * p->in_c + c) * plane;
                    for (t = 0; t < taps; ++t) {
                        const int64_t at = ((int64_t)b * p->offset_group + og) * taps + t;
                        const float dy = offset[(at * 2) * out_plane + pos], dx = offset[(at * 2 + 1) * out_plane + pos];
                        const float h = (float)(oh * p->stride_h - p->pad_top + (t / p->k_w) * p->dil_h) + dy;
                        const float wq = (float)(ow * p->stride_w - p->pad_left + (t % p->k_w) * p->dil_w) + dx;
                        const float m = mask ? mask[at * out_plane + pos] : 1.0f;
                        scratch[(int64_t)c * taps + t] = deform_sample(xc, p->in_h, p->in_w, h, wq) * m;
                    }
                }
                for (g = 0; g < p->group; ++g) {
                    const float *col = scratch + (int64_t)g * icg * taps;
                    for (oc = g * ocg; oc < (g + 1) * ocg; ++oc) {
                        const float *wr = w + (int64_t)oc * icg * taps;
                        float acc = bias ? bias[oc] : 0.0f;
                        int64_t k;
                        for (k = 0; k < (int64_t)icg * taps; ++k) acc += wr[k] * col[k];
                        y[((int64_t)b * p->out_c + oc) * out_plane + pos] = acc;
                    }
                }
            }
        }
    }
}
