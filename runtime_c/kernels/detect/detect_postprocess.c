/* TFLite's TFLite_Detection_PostProcess (aotc_detect.h). Portable C99, no allocation, no globals: the
 * decoded boxes, the candidates and the kept boxes live in the plan's scratch.
 *
 * The arithmetic is LiteRT's, step for step, so that boxes and scores come out bit for bit: decoding in
 * double from float operands (each product and sum its own statement, so no compiler fuses them), the
 * IoU in float with its zero-area test, scores compared with >= against the threshold and IoU with >.
 * Where LiteRT sorts, a heap pops the candidates in the same order as its stable sort (score, then box
 * index), and only as many as the suppression needs; the regular path's lists of the best so far are
 * merged, not sorted again. */
#include "aotc_detect.h"

#include <math.h>
#include <string.h>

enum { DP_F32, DP_U8, DP_I8 };

/* element i of a float, uint8 or int8 input, as float: (q - zero) * scale for the quantized ones
 * (exact integers, one rounding: LiteRT's Dequantizer and its optimized Dequantize agree) */
static float dp_value(const void *x, int type, int64_t i, float scale, int32_t zero) {
    if (type == DP_U8) return (float)((int32_t)((const uint8_t *)x)[i] - zero) * scale;
    if (type == DP_I8) return (float)((int32_t)((const int8_t *)x)[i] - zero) * scale;
    return ((const float *)x)[i];
}

/* box i's corners (ymin, xmin, ymax, xmax) from its encoding and anchor */
static void dp_decode(const aotc_detection_params *p, const void *enc, int type, const float *anchors, int64_t i,
                      float *box) {
    const int64_t e = i * p->box_stride;
    const float *a = anchors + i * 4;
    const double ey = dp_value(enc, type, e, p->box_scale, p->box_zero);
    const double ex = dp_value(enc, type, e + 1, p->box_scale, p->box_zero);
    const double eh = dp_value(enc, type, e + 2, p->box_scale, p->box_zero);
    const double ew = dp_value(enc, type, e + 3, p->box_scale, p->box_zero);
    const double ty = ey / (double)p->y_scale * (double)a[2];
    const double tx = ex / (double)p->x_scale * (double)a[3];
    const float yc = (float)(ty + (double)a[0]);
    const float xc = (float)(tx + (double)a[1]);
    const float hh = (float)(0.5 * exp(eh / (double)p->h_scale) * (double)a[2]);
    const float hw = (float)(0.5 * exp(ew / (double)p->w_scale) * (double)a[3]);
    box[0] = yc - hh;
    box[1] = xc - hw;
    box[2] = yc + hh;
    box[3] = xc + hw;
}

static float dp_max(float a, float b) { return a < b ? b : a; }
static float dp_min(float a, float b) { return b < a ? b : a; }

/* LiteRT's IoU of kept box i and candidate j (zero when either has no area) */
static float dp_iou(const float *bi, const float *bj) {
    const float area_i = (bi[2] - bi[0]) * (bi[3] - bi[1]);
    const float area_j = (bj[2] - bj[0]) * (bj[3] - bj[1]);
    float inter;
    if (area_i <= 0 || area_j <= 0) return 0.0f;
    inter = dp_max(dp_min(bi[2], bj[2]) - dp_max(bi[0], bj[0]), 0.0f) *
            dp_max(dp_min(bi[3], bj[3]) - dp_max(bi[1], bj[1]), 0.0f);
    return inter / (area_i + area_j - inter);
}

/* candidate a pops before b: higher score, then lower box index (LiteRT's stable sort) */
static int dp_before(const float *s, int32_t a, int32_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); }

static void dp_sift(const float *s, int32_t *heap, int32_t n, int32_t at) {
    for (;;) {
        int32_t best = at, l = 2 * at + 1, r = l + 1;
        if (l < n && dp_before(s, heap[l], heap[best])) best = l;
        if (r < n && dp_before(s, heap[r], heap[best])) best = r;
        if (best == at) return;
        {
            const int32_t t = heap[at];
            heap[at] = heap[best];
            heap[best] = t;
        }
        at = best;
    }
}

/* LiteRT's single-class suppression of the boxes by scores s: the boxes scoring at least the threshold,
 * best first, each kept unless a kept box overlaps it by more than the IoU threshold, at most `limit`.
 * Writes the kept boxes' indices in that order and returns how many. */
static int32_t dp_suppress(const aotc_detection_params *p, const float *decoded, const float *s, int32_t limit,
                           int32_t *heap, int32_t *kept) {
    int32_t n = 0, count = 0, i;
    for (i = 0; i < p->boxes; ++i) {
        if (s[i] >= p->score_threshold) heap[n++] = i;
    }
    if (limit > n) limit = n;
    for (i = n / 2 - 1; i >= 0; --i) dp_sift(s, heap, n, i);
    while (n > 0 && count < limit) {
        const int32_t top = heap[0];
        int32_t k, keep = 1;
        heap[0] = heap[--n];
        dp_sift(s, heap, n, 0);
        for (k = 0; k < count && keep; ++k) {
            keep = !(dp_iou(decoded + (int64_t)kept[k] * 4, decoded + (int64_t)top * 4) > p->iou_threshold);
        }
        if (keep) kept[count++] = top;
    }
    return count;
}

static void dp_write(float *y_boxes, float *y_classes, float *y_scores, int64_t row, const float *box, int32_t cls,
                     float score) {
    memcpy(y_boxes + row * 4, box, 4 * sizeof(float));
    y_classes[row] = (float)cls;
    y_scores[row] = score;
}

static void dp_run(const aotc_detection_params *p, int type, const void *enc, const void *cls,
                   const float *anchors, float *y_boxes, float *y_classes, float *y_scores, float *num_detections,
                   float *scratch) {
    const int64_t row_stride = (int64_t)p->classes + p->label_offset;
    const int64_t rows = (int64_t)p->max_detections * p->max_classes_per_detection;
    const int32_t limit = p->regular_nms ? p->detections_per_class : p->max_detections;
    const int32_t n_kept = limit < p->boxes ? limit : p->boxes;
    float *decoded = scratch, *s = decoded + (int64_t)p->boxes * 4;
    int32_t *heap = (int32_t *)(void *)(s + p->boxes), *kept = heap + p->boxes;
    int32_t i, c, count;
    memset(y_boxes, 0, (size_t)rows * 4 * sizeof(float));
    memset(y_classes, 0, (size_t)rows * sizeof(float));
    memset(y_scores, 0, (size_t)rows * sizeof(float));
    for (i = 0; i < p->boxes; ++i) dp_decode(p, enc, type, anchors, i, decoded + (int64_t)i * 4);
#define DP_SCORE(box, c) dp_value(cls, type, (int64_t)(box) * row_stride + p->label_offset + (c), p->score_scale, p->score_zero)
    if (!p->regular_nms) {
        const int32_t per_box = p->max_classes_per_detection < p->classes ? p->max_classes_per_detection : p->classes;
        int32_t n;
        for (i = 0; i < p->boxes; ++i) { /* the first best class */
            float best = DP_SCORE(i, 0);
            for (c = 1; c < p->classes; ++c) {
                const float v = DP_SCORE(i, c);
                if (v > best) best = v;
            }
            s[i] = best;
        }
        count = dp_suppress(p, decoded, s, p->max_detections, heap, kept);
        for (n = 0; n < count; ++n) {
            const int32_t b = kept[n];
            int32_t j, prev = -1;
            for (j = 0; j < per_box; ++j) { /* the next best class after the previous (ties: lower first) */
                int32_t best = -1;
                float bv = 0.0f;
                for (c = 0; c < p->classes; ++c) {
                    const float v = DP_SCORE(b, c);
                    if (prev >= 0) {
                        const float pv = DP_SCORE(b, prev);
                        if (!(v < pv || (v == pv && c > prev))) continue;
                    }
                    if (best < 0 || v > bv) best = c, bv = v;
                }
                if (best < 0) break;
                dp_write(y_boxes, y_classes, y_scores, (int64_t)n * p->max_classes_per_detection + j,
                         decoded + (int64_t)b * 4, best, bv);
                prev = best;
            }
        }
    } else {
        /* the best so far, `count` of them: scores and rows (box * (classes + label_offset) + column), two
         * lists in turn, each merge writing the other */
        float *best_s = (float *)(void *)(kept + n_kept), *next_s = best_s + p->max_detections;
        int32_t *best_r = (int32_t *)(void *)(next_s + p->max_detections), *next_r = best_r + p->max_detections;
        count = 0;
        for (c = 0; c < p->classes; ++c) {
            int32_t n, a = 0, b = 0, m = 0;
            for (i = 0; i < p->boxes; ++i) s[i] = DP_SCORE(i, c);
            n = dp_suppress(p, decoded, s, p->detections_per_class, heap, kept);
            /* kept is in score order (ties: lower box first); on a tie the earlier class's stays first */
            while (m < p->max_detections && (a < count || b < n)) {
                if (b >= n || (a < count && !(s[kept[b]] > best_s[a]))) {
                    next_s[m] = best_s[a], next_r[m++] = best_r[a++];
                } else {
                    next_s[m] = s[kept[b]], next_r[m++] = (int32_t)(kept[b] * row_stride + c);
                    ++b;
                }
            }
            count = m;
            {
                float *ts = best_s;
                int32_t *tr = best_r;
                best_s = next_s, best_r = next_r, next_s = ts, next_r = tr;
            }
        }
        for (i = 0; i < count; ++i) {
            const int32_t b = (int32_t)(best_r[i] / row_stride), col = (int32_t)(best_r[i] % row_stride);
            dp_write(y_boxes, y_classes, y_scores, i, decoded + (int64_t)b * 4, col, best_s[i]);
        }
    }
#undef DP_SCORE
    num_detections[0] = (float)count;
}

void aotc_detection_postprocess_f32(const aotc_detection_params *p, const float *box_encodings,
                                    const float *class_predictions, const float *anchors, float *y_boxes,
                                    float *y_classes, float *y_scores, float *num_detections, float *scratch) {
    dp_run(p, DP_F32, box_encodings, class_predictions, anchors, y_boxes, y_classes, y_scores, num_detections,
           scratch);
}

void aotc_detection_postprocess_u8(const aotc_detection_params *p, const uint8_t *box_encodings,
                                   const uint8_t *class_predictions, const float *anchors, float *y_boxes,
                                   float *y_classes, float *y_scores, float *num_detections, float *scratch) {
    dp_run(p, DP_U8, box_encodings, class_predictions, anchors, y_boxes, y_classes, y_scores, num_detections,
           scratch);
}

void aotc_detection_postprocess_i8(const aotc_detection_params *p, const int8_t *box_encodings,
                                   const int8_t *class_predictions, const float *anchors, float *y_boxes,
                                   float *y_classes, float *y_scores, float *num_detections, float *scratch) {
    dp_run(p, DP_I8, box_encodings, class_predictions, anchors, y_boxes, y_classes, y_scores, num_detections,
           scratch);
}
