/* TFLite's NON_MAX_SUPPRESSION_V4 and _V5 (aotc_detect.h): LiteRT's reference algorithm with its priority
 * queue replaced by a scan for the best live candidate, and each box's extents and area computed once. */
#include "aotc_detect.h"

#include <math.h>

/* std::min<float> and std::max<float>, NaNs included: the first argument unless the second is less (greater) */
#define TFL_MIN(a, b) ((b) < (a) ? (b) : (a))
#define TFL_MAX(a, b) ((a) < (b) ? (b) : (a))

/* box k's extents (ymin, xmin, ymax, xmax) and area, as LiteRT's ComputeIntersectionOverUnion forms them */
static void tfl_nms_extents(const float *b, float *e) {
    e[0] = TFL_MIN(b[0], b[2]), e[2] = TFL_MAX(b[0], b[2]);
    e[1] = TFL_MIN(b[1], b[3]), e[3] = TFL_MAX(b[1], b[3]);
    e[4] = (e[2] - e[0]) * (e[3] - e[1]);
}

static float tfl_nms_iou(const float *a, const float *b) {
    float inter;
    if (a[4] <= 0 || b[4] <= 0) return 0.0f;
    inter = TFL_MAX(TFL_MIN(a[2], b[2]) - TFL_MAX(a[0], b[0]), 0.0f) *
            TFL_MAX(TFL_MIN(a[3], b[3]) - TFL_MAX(a[1], b[1]), 0.0f);
    return inter / (a[4] + b[4] - inter);
}

void aotc_tfl_nms_f32(const aotc_tfl_nms_params *p, const float *boxes, const float *scores, int32_t *indices,
                      float *selected_scores, int32_t *count, float *scratch) {
    const int32_t n = p->boxes;
    float *score = scratch, *ext = scratch + 2 * (size_t)n;
    int32_t *begin = (int32_t *)(void *)(scratch + n);
    const float scale = p->sigma > 0.0f ? (float)(-0.5 / (double)p->sigma) : 0.0f;
    int32_t i, live = 0, selected = 0, outputs;
    for (i = 0; i < n; ++i) {
        const int in = scores[i] > p->score_threshold;
        score[i] = scores[i], begin[i] = in ? 0 : -1, live += in;
        tfl_nms_extents(boxes + 4 * (size_t)i, ext + 5 * (size_t)i);
    }
    outputs = live < p->max_output ? live : p->max_output;
    while (selected < outputs) {
        int32_t best = -1, j;
        float s, original;
        int hard = 0;
        for (i = 0; i < n; ++i)
            if (begin[i] >= 0 && (best < 0 || score[i] > score[best])) best = i;
        if (best < 0) break;
        s = original = score[best];
        for (j = selected - 1; j >= begin[best]; --j) {
            const float iou = tfl_nms_iou(ext + 5 * (size_t)best, ext + 5 * (size_t)indices[j]);
            if (iou >= p->iou_threshold) {
                hard = 1;
                break;
            }
            if (p->sigma > 0.0f) s = s * expf(scale * iou * iou);
            if (s <= p->score_threshold) break;
        }
        begin[best] = selected, score[best] = s;
        if (!hard && s == original) {
            indices[selected] = best;
            if (selected_scores) selected_scores[selected] = s;
            ++selected;
        }
        if (hard || s <= p->score_threshold) begin[best] = -1;
    }
    *count = selected;
    for (i = selected; i < p->max_output; ++i) {
        indices[i] = 0;
        if (selected_scores) selected_scores[i] = 0.0f;
    }
}
