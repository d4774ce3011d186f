/* ONNX RoiAlign (aotc_detect.h). Portable C99, no allocation, no scratch.
 *
 * The arithmetic is onnxruntime's in float, op for op (the ONNX reference's too): a ROI's corners scaled
 * and shifted, its bins' sample grid, each sample's four taps and weights. A sample's taps and weights
 * are worked out once and applied to every channel; the channels' outputs of a bin accumulate in y. */
#include "aotc_detect.h"

#include <math.h>

/* one sampling point: the offsets of its four taps in a channel's plane and their weights (all 0 for a
 * point more than a pixel outside the input, or NaN) */
typedef struct {
    int64_t pos[4];
    float w[4];
} roi_taps;

static roi_taps roi_sample(float yy, float xx, int32_t height, int32_t width) {
    roi_taps t = {{0, 0, 0, 0}, {0.0f, 0.0f, 0.0f, 0.0f}};
    int32_t y_low, x_low, y_high, x_high;
    float ly, lx, hy, hx;
    if (!(yy >= -1.0f && yy <= (float)height && xx >= -1.0f && xx <= (float)width)) return t;
    if (yy < 0.0f) yy = 0.0f;
    if (xx < 0.0f) xx = 0.0f;
    y_low = (int32_t)yy;
    x_low = (int32_t)xx;
    if (y_low >= height - 1) y_high = y_low = height - 1, yy = (float)y_low;
    else y_high = y_low + 1;
    if (x_low >= width - 1) x_high = x_low = width - 1, xx = (float)x_low;
    else x_high = x_low + 1;
    ly = yy - (float)y_low, lx = xx - (float)x_low;
    hy = 1.0f - ly, hx = 1.0f - lx;
    t.pos[0] = (int64_t)y_low * width + x_low, t.pos[1] = (int64_t)y_low * width + x_high;
    t.pos[2] = (int64_t)y_high * width + x_low, t.pos[3] = (int64_t)y_high * width + x_high;
    t.w[0] = hy * hx, t.w[1] = hy * lx, t.w[2] = ly * hx, t.w[3] = ly * lx;
    return t;
}

/* samples along a bin side when sampling_ratio is 0: ceil(side / bins), 0 for a negative or NaN side (no sample:
 * the bin is 0, as onnxruntime's loops give it) and at most 32768 (a ROI that large: a defined count, not an
 * overflowing conversion) */
static int32_t roi_grid(float side_over_bins) {
    const float v = ceilf(side_over_bins);
    return v > 0.0f ? (v < 32768.0f ? (int32_t)v : 32768) : 0;
}

int aotc_roialign_f32(const aotc_roialign_params *p, const float *x, const float *rois, const int64_t *batch_index,
                      float *y) {
    const int64_t plane = (int64_t)p->height * p->width, out_plane = (int64_t)p->out_h * p->out_w;
    const float offset = p->half_pixel ? 0.5f : 0.0f;
    int32_t r, ph, pw, iy, ix, c;
    for (r = 0; r < p->rois; ++r) {
        if (batch_index[r] < 0 || batch_index[r] >= p->batches) return AOTC_ERR_SHAPE;
    }
    for (r = 0; r < p->rois; ++r) {
        const float *roi = rois + (int64_t)r * 4;
        const float start_w = roi[0] * p->spatial_scale - offset, start_h = roi[1] * p->spatial_scale - offset;
        const float end_w = roi[2] * p->spatial_scale - offset, end_h = roi[3] * p->spatial_scale - offset;
        float roi_w = end_w - start_w, roi_h = end_h - start_h, bin_w, bin_h;
        int32_t grid_h, grid_w, count;
        const float *xb = x + batch_index[r] * p->channels * plane;
        float *yr = y + (int64_t)r * p->channels * out_plane;
        if (!p->half_pixel) { /* malformed ROIs made 1 x 1 */
            if (roi_w < 1.0f) roi_w = 1.0f;
            if (roi_h < 1.0f) roi_h = 1.0f;
        }
        bin_h = roi_h / (float)p->out_h, bin_w = roi_w / (float)p->out_w;
        grid_h = p->sampling_ratio > 0 ? p->sampling_ratio : roi_grid(roi_h / (float)p->out_h);
        grid_w = p->sampling_ratio > 0 ? p->sampling_ratio : roi_grid(roi_w / (float)p->out_w);
        count = grid_h * grid_w > 1 ? grid_h * grid_w : 1;
        for (ph = 0; ph < p->out_h; ++ph) {
            for (pw = 0; pw < p->out_w; ++pw) {
                float *yo = yr + (int64_t)ph * p->out_w + pw;
                int first = 1;
                for (c = 0; c < p->channels; ++c) yo[c * out_plane] = 0.0f;
                for (iy = 0; iy < grid_h; ++iy) {
                    const float yy = start_h + (float)ph * bin_h + ((float)iy + 0.5f) * bin_h / (float)grid_h;
                    for (ix = 0; ix < grid_w; ++ix) {
                        const float xx = start_w + (float)pw * bin_w + ((float)ix + 0.5f) * bin_w / (float)grid_w;
                        const roi_taps t = roi_sample(yy, xx, p->height, p->width);
                        for (c = 0; c < p->channels; ++c) {
                            const float *xc = xb + c * plane;
                            float *out = yo + c * out_plane;
                            if (!p->max_mode) {
                                *out += t.w[0] * xc[t.pos[0]] + t.w[1] * xc[t.pos[1]] + t.w[2] * xc[t.pos[2]] +
                                        t.w[3] * xc[t.pos[3]];
                            } else {
                                float v = t.w[0] * xc[t.pos[0]], v1 = t.w[1] * xc[t.pos[1]];
                                const float v2 = t.w[2] * xc[t.pos[2]], v3 = t.w[3] * xc[t.pos[3]];
                                if (v1 > v) v = v1;
                                if (v2 > v) v = v2;
                                if (v3 > v) v = v3;
                                if (first || v > *out) *out = v;
                            }
                        }
                        first = 0;
                    }
                }
                if (!p->max_mode) {
                    for (c = 0; c < p->channels; ++c) yo[c * out_plane] /= (float)count;
                }
            }
        }
    }
    return 0;
}
