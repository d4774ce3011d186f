/* Reference kernels of the detect family (declared in kernels_ref.h), with no scratch: TopK picks
 * each place's element as the best of those ranked after the previous pick (value, then index);
 * NonMaxSuppression walks each class's candidates in the same order and tests each against the
 * boxes already written for the class, by onnxruntime's IoU (its float arithmetic, op for op);
 * NonZero takes each element's coordinates apart from its index. detect.c is checked against these. */
#include "kernels_ref.h"

#include <math.h>
#include <string.h>

/* element (va, a) ranks before (vb, b): better value (largest: greater), then lower index */
#define RANKS_BEFORE(largest, va, a, vb, b) ((largest) ? (va) > (vb) : (va) < (vb)) || ((va) == (vb) && (a) < (b))

#define TOPK_REF(SFX, T)                                                                                    \
    int64_t aotc_topk_rows_##SFX##_ref(const aotc_topk_params *p, int64_t n, int64_t k, const T *x, T *values, \
                                       int64_t *indices) {                                                 \
        int64_t o, i, r, j;                                                                                \
        n = n < p->n ? n : p->n;                                                                           \
        k = k < n ? k : n;                                                                                 \
        k = k < p->k ? k : p->k;                                                                           \
        k = k > 0 ? k : 0;                                                                                 \
        for (o = 0; o < p->outer; ++o) {                                                                   \
            for (i = 0; i < p->inner; ++i) {                                                               \
                const T *line = x + o * p->n * p->inner + i;                                               \
                int64_t prev = -1;                                                                         \
                for (r = 0; r < k; ++r) {                                                                  \
                    int64_t best = -1;                                                                     \
                    for (j = 0; j < n; ++j) {                                                              \
                        const T v = line[j * p->inner];                                                    \
                        if (prev >= 0 && !(RANKS_BEFORE(p->largest, line[prev * p->inner], prev, v, j))) continue; \
                        if (best < 0 || RANKS_BEFORE(p->largest, v, j, line[best * p->inner], best)) best = j; \
                    }                                                                                      \
                    values[(o * p->k + r) * p->inner + i] = line[best * p->inner];                         \
                    indices[(o * p->k + r) * p->inner + i] = best;                                         \
                    prev = best;                                                                           \
                }                                                                                          \
            }                                                                                              \
        }                                                                                                  \
        return k;                                                                                          \
    }                                                                                                      \
    void aotc_topk_##SFX##_ref(const aotc_topk_params *p, const T *x, T *values, int64_t *indices) {      \
        (void)aotc_topk_rows_##SFX##_ref(p, p->n, p->k, x, values, indices);                               \
    }
TOPK_REF(f32, float)
TOPK_REF(i64, int64_t)
TOPK_REF(i32, int32_t)
TOPK_REF(u64, uint64_t)

/* a box's corners: [y1, x1, y2, x2] any diagonal pair, or [x_c, y_c, w, h] */
static void corners(const float *b, int32_t center, float *x_min, float *y_min, float *x_max, float *y_max) {
    if (center) {
        *x_min = b[0] - b[2] / 2.0f, *x_max = b[0] + b[2] / 2.0f;
        *y_min = b[1] - b[3] / 2.0f, *y_max = b[1] + b[3] / 2.0f;
    } else {
        *x_min = b[1] < b[3] ? b[1] : b[3], *x_max = b[1] < b[3] ? b[3] : b[1];
        *y_min = b[0] < b[2] ? b[0] : b[2], *y_max = b[0] < b[2] ? b[2] : b[0];
    }
}

static float max_ref(float a, float b) { return a > b ? a : b; }
static float min_ref(float a, float b) { return a < b ? a : b; }

/* onnxruntime's SuppressByIOU */
static int suppresses(const float *a, const float *b, int32_t center, float iou_threshold) {
    float ax0, ay0, ax1, ay1, bx0, by0, bx1, by1, inter, area_a, area_b, uni;
    corners(a, center, &ax0, &ay0, &ax1, &ay1);
    corners(b, center, &bx0, &by0, &bx1, &by1);
    inter = max_ref(min_ref(ax1, bx1) - max_ref(ax0, bx0), 0.0f) * max_ref(min_ref(ay1, by1) - max_ref(ay0, by0), 0.0f);
    if (inter <= 0.0f) return 0;
    area_a = (ax1 - ax0) * (ay1 - ay0);
    area_b = (bx1 - bx0) * (by1 - by0);
    uni = area_a + area_b - inter;
    if (area_a <= 0.0f || area_b <= 0.0f || uni <= 0.0f) return 0;
    return inter / uni > iou_threshold;
}

int64_t aotc_nms_f32_ref(const aotc_nms_params *p, int64_t n_boxes, const float *boxes, const float *scores,
                         int64_t max_per_class, float iou_threshold, int has_score_threshold, float score_threshold,
                         int64_t *selected) {
    int64_t rows = 0, b, c, prev, j, r;
    n_boxes = n_boxes < p->boxes ? n_boxes : p->boxes;
    for (b = 0; b < p->batches; ++b) {
        const float *bb = boxes + b * p->boxes * 4;
        for (c = 0; c < p->classes; ++c) {
            const float *sc = scores + (b * p->classes + c) * p->boxes;
            const int64_t first = rows;
            for (prev = -1;;) { /* the candidates, best score first (ties: lower index) */
                int64_t best = -1;
                int keep = 1;
                for (j = 0; j < n_boxes; ++j) {
                    if (sc[j] != sc[j] || (has_score_threshold && !(sc[j] > score_threshold))) continue;
                    if (prev >= 0 && !(RANKS_BEFORE(1, sc[prev], prev, sc[j], j))) continue;
                    if (best < 0 || RANKS_BEFORE(1, sc[j], j, sc[best], best)) best = j;
                }
                if (best < 0 || rows - first >= max_per_class || rows >= p->max_rows) break;
                prev = best;
                for (r = first; r < rows && keep; ++r) {
                    keep = !suppresses(bb + selected[r * 3 + 2] * 4, bb + best * 4, p->center_point_box, iou_threshold);
                }
                if (keep) {
                    selected[rows * 3] = b, selected[rows * 3 + 1] = c, selected[rows * 3 + 2] = best;
                    ++rows;
                }
            }
        }
    }
    return rows;
}

int64_t aotc_nonzero_ref(const aotc_nonzero_params *p, const void *x, int64_t *y) {
    int64_t rows = 0, i, rest;
    int32_t d, b;
    for (i = 0; i < p->n && rows < p->max_rows; ++i) {
        const uint8_t *e = (const uint8_t *)x + i * p->elem_size;
        int nonzero = 0;
        if (p->is_float && p->elem_size == 4) {
            float f;
            memcpy(&f, e, 4);
            nonzero = !(f == 0.0f);
        } else if (p->is_float) {
            double v;
            memcpy(&v, e, 8);
            nonzero = !(v == 0.0);
        } else {
            for (b = 0; b < p->elem_size; ++b) nonzero |= e[b] != 0;
        }
        if (!nonzero) continue;
        for (d = p->rank - 1, rest = i; d >= 0; --d) {
            y[d * p->max_rows + rows] = rest % p->shape[d];
            rest /= p->shape[d];
        }
        ++rows;
    }
    return rows;
}

/* ---- TFLite_Detection_PostProcess: LiteRT's structure, each box decoded where it is read, the candidates
 * walked in rank order by picking the best of those ranked after the previous, and the regular path's
 * best so far kept in the output rows by insertion. `kept`: the boxes kept for the class being suppressed
 * (the one work array a reference takes: boxes int32). */

static float dpr_in(const void *x, int type, int64_t i, float scale, int32_t zero) {
    if (type == 1) return (float)((int32_t)((const uint8_t *)x)[i] - zero) * scale;
    if (type == 2) return (float)((int32_t)((const int8_t *)x)[i] - zero) * scale;
    return ((const float *)x)[i];
}

static void dpr_box(const aotc_detection_params *p, const void *enc, int type, const float *anchors, int64_t i,
                    float *box) {
    double e[4], t;
    float yc, xc, hh, hw;
    int k;
    for (k = 0; k < 4; ++k) e[k] = dpr_in(enc, type, i * p->box_stride + k, p->box_scale, p->box_zero);
    t = e[0] / (double)p->y_scale * (double)anchors[i * 4 + 2];
    yc = (float)(t + (double)anchors[i * 4]);
    t = e[1] / (double)p->x_scale * (double)anchors[i * 4 + 3];
    xc = (float)(t + (double)anchors[i * 4 + 1]);
    hh = (float)(0.5 * exp(e[2] / (double)p->h_scale) * (double)anchors[i * 4 + 2]);
    hw = (float)(0.5 * exp(e[3] / (double)p->w_scale) * (double)anchors[i * 4 + 3]);
    box[0] = yc - hh, box[1] = xc - hw, box[2] = yc + hh, box[3] = xc + hw;
}

static float dpr_score(const aotc_detection_params *p, const void *cls, int type, int64_t box, int32_t c) {
    return dpr_in(cls, type, box * (p->classes + p->label_offset) + p->label_offset + c, p->score_scale,
                  p->score_zero);
}

/* LiteRT's ComputeIntersectionOverUnion, std::max / std::min as they are defined */
static float dpr_iou(const float *a, const float *b) {
    const float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    float ih, iw, y0, y1, x0, x1, inter;
    if (area_a <= 0 || area_b <= 0) return 0.0f;
    y0 = a[0] < b[0] ? b[0] : a[0], x0 = a[1] < b[1] ? b[1] : a[1];
    y1 = b[2] < a[2] ? b[2] : a[2], x1 = b[3] < a[3] ? b[3] : a[3];
    ih = y1 - y0 < 0.0f ? 0.0f : y1 - y0;
    iw = x1 - x0 < 0.0f ? 0.0f : x1 - x0;
    inter = ih * iw;
    return inter / (area_a + area_b - inter);
}

/* the box scores for box i: its best class's (fast), or class c's */
static float dpr_cand(const aotc_detection_params *p, const void *cls, int type, int64_t i, int32_t c) {
    float best;
    int32_t k;
    if (c >= 0) return dpr_score(p, cls, type, i, c);
    for (best = dpr_score(p, cls, type, i, 0), k = 1; k < p->classes; ++k) {
        const float v = dpr_score(p, cls, type, i, k);
        best = v > best ? v : best;
    }
    return best;
}

static int32_t dpr_suppress(const aotc_detection_params *p, const void *enc, const void *cls, int type,
                            const float *anchors, int32_t c, int32_t limit, int32_t *kept) {
    int32_t count = 0, prev = -1, j, k;
    float prev_s = 0.0f;
    for (;;) {
        int32_t best = -1;
        float best_s = 0.0f, cand[4], other[4];
        int keep = 1;
        for (j = 0; j < p->boxes; ++j) {
            const float v = dpr_cand(p, cls, type, j, c);
            if (!(v >= p->score_threshold)) continue;
            if (prev >= 0 && !(RANKS_BEFORE(1, prev_s, prev, v, j))) continue;
            if (best < 0 || (RANKS_BEFORE(1, v, j, best_s, best))) best = j, best_s = v;
        }
        if (best < 0 || count >= limit) return count;
        prev = best, prev_s = best_s;
        dpr_box(p, enc, type, anchors, best, cand);
        for (k = 0; k < count && keep; ++k) {
            dpr_box(p, enc, type, anchors, kept[k], other);
            keep = !(dpr_iou(other, cand) > p->iou_threshold);
        }
        if (keep) kept[count++] = best;
    }
}

static void dpr_detect(const aotc_detection_params *p, const void *enc, const void *cls, int type,
                       const float *anchors, float *y_boxes, float *y_classes, float *y_scores, float *num,
                       int32_t *kept) {
    const int64_t rows = (int64_t)p->max_detections * p->max_classes_per_detection;
    int32_t count = 0, n, c, j, k;
    int64_t r;
    for (r = 0; r < rows; ++r) y_boxes[r * 4] = y_boxes[r * 4 + 1] = y_boxes[r * 4 + 2] = y_boxes[r * 4 + 3] = 0.0f;
    for (r = 0; r < rows; ++r) y_classes[r] = y_scores[r] = 0.0f;
    if (!p->regular_nms) {
        count = dpr_suppress(p, enc, cls, type, anchors, -1, p->max_detections, kept);
        for (n = 0; n < count; ++n) {
            int32_t prev = -1;
            for (j = 0; j < p->max_classes_per_detection && j < p->classes; ++j) {
                int32_t best = -1;
                for (c = 0; c < p->classes; ++c) {
                    const float v = dpr_score(p, cls, type, kept[n], c);
                    if (prev >= 0 && !(RANKS_BEFORE(1, dpr_score(p, cls, type, kept[n], prev), prev, v, c))) continue;
                    if (best < 0 || (RANKS_BEFORE(1, v, c, dpr_score(p, cls, type, kept[n], best), best))) best = c;
                }
                if (best < 0) break;
                r = (int64_t)n * p->max_classes_per_detection + j;
                dpr_box(p, enc, type, anchors, kept[n], y_boxes + r * 4);
                y_classes[r] = (float)best, y_scores[r] = dpr_score(p, cls, type, kept[n], best);
                prev = best;
            }
        }
    } else {
        for (c = 0; c < p->classes; ++c) {
            const int32_t m = dpr_suppress(p, enc, cls, type, anchors, c, p->detections_per_class, kept);
            for (k = 0; k < m; ++k) { /* insert after every row scoring at least as much */
                const float v = dpr_score(p, cls, type, kept[k], c);
                int32_t at = 0;
                while (at < count && y_scores[at] >= v) ++at;
                if (at >= p->max_detections) continue;
                for (j = count < p->max_detections ? count : p->max_detections - 1; j > at; --j) {
                    memcpy(y_boxes + (int64_t)j * 4, y_boxes + (int64_t)(j - 1) * 4, 4 * sizeof(float));
                    y_classes[j] = y_classes[j - 1], y_scores[j] = y_scores[j - 1];
                }
                dpr_box(p, enc, type, anchors, kept[k], y_boxes + (int64_t)at * 4);
                y_classes[at] = (float)c, y_scores[at] = v;
                if (count < p->max_detections) ++count;
            }
        }
    }
    num[0] = (float)count;
}

void aotc_detection_postprocess_f32_ref(const aotc_detection_params *p, const float *box_encodings,
                                        const float *class_predictions, const float *anchors, float *y_boxes,
                                        float *y_classes, float *y_scores, float *num_detections, int32_t *kept) {
    dpr_detect(p, box_encodings, class_predictions, 0, anchors, y_boxes, y_classes, y_scores, num_detections, kept);
}

void aotc_detection_postprocess_u8_ref(const aotc_detection_params *p, const uint8_t *box_encodings,
                                       const uint8_t *class_predictions, const float *anchors, float *y_boxes,
                                       float *y_classes, float *y_scores, float *num_detections, int32_t *kept) {
    dpr_detect(p, box_encodings, class_predictions, 1, anchors, y_boxes, y_classes, y_scores, num_detections, kept);
}

void aotc_detection_postprocess_i8_ref(const aotc_detection_params *p, const int8_t *box_encodings,
                                       const int8_t *class_predictions, const float *anchors, float *y_boxes,
                                       float *y_classes, float *y_scores, float *num_detections, int32_t *kept) {
    dpr_detect(p, box_encodings, class_predictions, 2, anchors, y_boxes, y_classes, y_scores, num_detections, kept);
}

/* ---- RoiAlign: each output element on its own, the ROI's geometry and each sample's taps worked out
 * where they are read (onnxruntime's float arithmetic, op for op) ---- */
static float roi_tap_ref(const float *plane, int32_t height, int32_t width, float yy, float xx, int k) {
    int32_t y0, x0, y1, x1;
    float ly, lx;
    if (!(yy >= -1.0f && yy <= (float)height && xx >= -1.0f && xx <= (float)width)) return 0.0f * plane[0];
    yy = yy < 0.0f ? 0.0f : yy;
    xx = xx < 0.0f ? 0.0f : xx;
    y0 = (int32_t)yy, x0 = (int32_t)xx;
    if (y0 >= height - 1) y0 = height - 1, y1 = y0, yy = (float)y0;
    else y1 = y0 + 1;
    if (x0 >= width - 1) x0 = width - 1, x1 = x0, xx = (float)x0;
    else x1 = x0 + 1;
    ly = yy - (float)y0, lx = xx - (float)x0;
    switch (k) {
    case 0: return (1.0f - ly) * (1.0f - lx) * plane[(int64_t)y0 * width + x0];
    case 1: return (1.0f - ly) * lx * plane[(int64_t)y0 * width + x1];
    case 2: return ly * (1.0f - lx) * plane[(int64_t)y1 * width + x0];
    default: return ly * lx * plane[(int64_t)y1 * width + x1];
    }
}

/* the samples a bin side: ceil, none for a negative or NaN side, at most 32768 */
static int32_t roi_grid_ref(float v) {
    if (!(v > 0.0f)) return 0;
    return v >= 32768.0f ? 32768 : (int32_t)ceilf(v);
}

int aotc_roialign_f32_ref(const aotc_roialign_params *p, const float *x, const float *rois,
                          const int64_t *batch_index, float *y) {
    int64_t r, c, ph, pw, iy, ix, o = 0;
    for (r = 0; r < p->rois; ++r) {
        if (batch_index[r] < 0 || batch_index[r] >= p->batches) return AOTC_ERR_SHAPE;
    }
    for (r = 0; r < p->rois; ++r) {
        for (c = 0; c < p->channels; ++c) {
            const float *plane = x + (batch_index[r] * p->channels + c) * p->height * p->width;
            for (ph = 0; ph < p->out_h; ++ph) {
                for (pw = 0; pw < p->out_w; ++pw, ++o) {
                    const float off = p->half_pixel ? 0.5f : 0.0f;
                    const float sw = rois[r * 4] * p->spatial_scale - off, sh = rois[r * 4 + 1] * p->spatial_scale - off;
                    float rw = (rois[r * 4 + 2] * p->spatial_scale - off) - sw;
                    float rh = (rois[r * 4 + 3] * p->spatial_scale - off) - sh;
                    int32_t gh, gw;
                    float acc = 0.0f;
                    int seen = 0;
                    if (!p->half_pixel) rw = rw > 1.0f ? rw : 1.0f, rh = rh > 1.0f ? rh : 1.0f;
                    gh = p->sampling_ratio > 0 ? p->sampling_ratio : roi_grid_ref(rh / (float)p->out_h);
                    gw = p->sampling_ratio > 0 ? p->sampling_ratio : roi_grid_ref(rw / (float)p->out_w);
                    for (iy = 0; iy < gh; ++iy) {
                        for (ix = 0; ix < gw; ++ix) {
                            const float bh = rh / (float)p->out_h, bw = rw / (float)p->out_w;
                            const float yy = sh + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)gh;
                            const float xx = sw + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)gw;
                            const float a = roi_tap_ref(plane, p->height, p->width, yy, xx, 0);
                            const float b = roi_tap_ref(plane, p->height, p->width, yy, xx, 1);
                            const float d = roi_tap_ref(plane, p->height, p->width, yy, xx, 2);
                            const float e = roi_tap_ref(plane, p->height, p->width, yy, xx, 3);
                            if (!p->max_mode) {
                                acc += a + b + d + e;
                            } else {
                                float v = a;
                                v = b > v ? b : v;
                                v = d > v ? d : v;
                                v = e > v ? e : v;
                                acc = !seen || v > acc ? v : acc;
                                seen = 1;
                            }
                        }
                    }
                    y[o] = p->max_mode ? acc : acc / (float)(gh * gw > 1 ? gh * gw : 1);
                }
            }
        }
    }
    return 0;
}

/* LiteRT's ComputeIntersectionOverUnion of boxes i and j, line for line (std::min and std::max: the first
 * argument unless the second is less, greater) */
#define STD_MIN(a, b) ((b) < (a) ? (b) : (a))
#define STD_MAX(a, b) ((a) < (b) ? (b) : (a))
static float tfl_iou_ref(const float *boxes, int32_t i, int32_t j) {
    const float *a = boxes + 4 * (size_t)i, *b = boxes + 4 * (size_t)j;
    const float ai0 = STD_MIN(a[0], a[2]), ai1 = STD_MAX(a[0], a[2]), ai2 = STD_MIN(a[1], a[3]), ai3 = STD_MAX(a[1], a[3]);
    const float bj0 = STD_MIN(b[0], b[2]), bj1 = STD_MAX(b[0], b[2]), bj2 = STD_MIN(b[1], b[3]), bj3 = STD_MAX(b[1], b[3]);
    const float area_i = (ai1 - ai0) * (ai3 - ai2), area_j = (bj1 - bj0) * (bj3 - bj2);
    float inter;
    if (area_i <= 0 || area_j <= 0) return 0.0f;
    inter = STD_MAX(STD_MIN(ai1, bj1) - STD_MAX(ai0, bj0), 0.0f) * STD_MAX(STD_MIN(ai3, bj3) - STD_MAX(ai2, bj2), 0.0f);
    return inter / (area_i + area_j - inter);
}

void aotc_tfl_nms_f32_ref(const aotc_tfl_nms_params *p, const float *boxes, const float *scores, int32_t *indices,
                          float *selected_scores, int32_t *count, float *scratch) {
    float *score = scratch;
    int32_t *begin = (int32_t *)(void *)(scratch + p->boxes);
    int32_t i, j, queued = 0, outputs;
    *count = 0;
    for (i = 0; i < p->boxes; ++i) {
        begin[i] = scores[i] > p->score_threshold ? 0 : -1, score[i] = scores[i];
        queued += begin[i] == 0;
    }
    outputs = queued < p->max_output ? queued : p->max_output;
    while (*count < outputs) {
        int32_t top = -1;
        float original;
        int drop = 0;
        for (i = 0; i < p->boxes; ++i) /* the queue's top: the best score, the lower box first */
            if (begin[i] >= 0 && (top < 0 || score[i] > score[top])) top = i;
        if (top < 0) break;
        original = score[top];
        for (j = *count - 1; j >= begin[top]; --j) {
            const float iou = tfl_iou_ref(boxes, top, indices[j]);
            if (iou >= p->iou_threshold) {
                drop = 1;
                break;
            }
            if (p->sigma > 0.0f) score[top] = score[top] * expf((float)(-0.5 / (double)p->sigma) * iou * iou);
            if (score[top] <= p->score_threshold) break;
        }
        begin[top] = *count;
        if (!drop && score[top] == original) {
            indices[*count] = top;
            if (selected_scores) selected_scores[*count] = score[top];
            ++*count;
        }
        if (drop || score[top] <= p->score_threshold) begin[top] = -1; /* not pushed back */
    }
    for (i = *count; i < p->max_output; ++i) {
        indices[i] = 0;
        if (selected_scores) selected_scores[i] = 0.0f;
    }
}
