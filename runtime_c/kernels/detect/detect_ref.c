/* Reference kernels of the detect family (declared in kernels_ref.h), with no scratch: TopK picks
 * each place's element as the best of those ranked after the previous pick (value, then index);
 * NonMaxSuppression walks each class's candidates in the same order and tests each against the
 * boxes already written for the class, by onnxruntime's IoU (its float arithmetic, op for op);
 * NonZero takes each element's coordinates apart from its index. detect.c is checked against these. */
#include "kernels_ref.h"

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
