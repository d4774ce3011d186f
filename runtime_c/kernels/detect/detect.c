/* Detection kernels (aotc_detect.h). Portable C99, no allocation, no globals. */
#include "aotc_detect.h"

#include <string.h>

/* ---- TopK ---------------------------------------------------------------------
 * Each line is scanned in index order; the best k so far are kept sorted in the output, and an
 * element enters only if strictly better than the worst kept (full) or there is room: so among
 * equal values the lower index stays first. */
#define AOTC_TOPK(SFX, T)                                                                         \
    int64_t aotc_topk_rows_##SFX(const aotc_topk_params *p, int64_t n, int64_t k, const T *x, T *values, \
                                 int64_t *indices) {                                              \
        int32_t o, i, j, r;                                                                       \
        if (n > p->n) n = p->n;                                                                   \
        if (k > n) k = n;                                                                         \
        if (k > p->k) k = p->k;                                                                   \
        if (k < 0) k = 0;                                                                         \
        for (o = 0; o < p->outer; ++o) {                                                          \
            for (i = 0; i < p->inner; ++i) {                                                      \
                const T *xs = x + (int64_t)o * p->n * p->inner + i;                               \
                T *vs = values + (int64_t)o * p->k * p->inner + i;                                \
                int64_t *is = indices + (int64_t)o * p->k * p->inner + i;                         \
                const int64_t s = p->inner;                                                       \
                int32_t kept = 0;                                                                 \
                if (k == 0) continue;                                                             \
                for (j = 0; j < n; ++j) {                                                         \
                    const T v = xs[(int64_t)j * s];                                               \
                    if (kept == k) {                                                              \
                        const T worst = vs[(int64_t)(kept - 1) * s];                              \
                        if (p->largest ? !(v > worst) : !(v < worst)) continue;                  \
                        --kept;                                                                   \
                    }                                                                             \
                    for (r = kept; r > 0; --r) { /* shift down the kept values v beats */         \
                        const T w = vs[(int64_t)(r - 1) * s];                                     \
                        if (p->largest ? !(v > w) : !(v < w)) break;                             \
                        vs[(int64_t)r * s] = w;                                                   \
                        is[(int64_t)r * s] = is[(int64_t)(r - 1) * s];                            \
                    }                                                                             \
                    vs[(int64_t)r * s] = v;                                                       \
                    is[(int64_t)r * s] = j;                                                       \
                    ++kept;                                                                       \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        return k;                                                                                 \
    }                                                                                             \
    void aotc_topk_##SFX(const aotc_topk_params *p, const T *x, T *values, int64_t *indices) {   \
        (void)aotc_topk_rows_##SFX(p, p->n, p->k, x, values, indices);                            \
    }
AOTC_TOPK(f32, float)
AOTC_TOPK(i64, int64_t)
AOTC_TOPK(i32, int32_t)
AOTC_TOPK(u64, uint64_t)

/* ---- NonMaxSuppression -------------------------------------------------------- */

/* Candidate a comes before b: higher score, then lower box index (a total order, so the heap
 * pops the same sequence as a stable sort). */
static int nms_before(const float *scores, int32_t a, int32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
}

static void nms_sift(const float *scores, int32_t *heap, int32_t n, int32_t at) {
    for (;;) {
        int32_t best = at, l = 2 * at + 1, r = l + 1;
        if (l < n && nms_before(scores, heap[l], heap[best])) best = l;
        if (r < n && nms_before(scores, heap[r], heap[best])) best = r;
        if (best == at) return;
        {
            const int32_t t = heap[at];
            heap[at] = heap[best];
            heap[best] = t;
        }
        at = best;
    }
}

/* A box's x and y extents, whichever corners or centre form it is given in. */
static void nms_extent(const float *b, int32_t center, float *x0, float *x1, float *y0, float *y1) {
    if (center) {
        const float hw = b[2] / 2, hh = b[3] / 2;
        *x0 = b[0] - hw;
        *x1 = b[0] + hw;
        *y0 = b[1] - hh;
        *y1 = b[1] + hh;
    } else {
        *x0 = b[1] < b[3] ? b[1] : b[3];
        *x1 = b[1] < b[3] ? b[3] : b[1];
        *y0 = b[0] < b[2] ? b[0] : b[2];
        *y1 = b[0] < b[2] ? b[2] : b[0];
    }
}

/* A box as its extents and area, worked out once (a kept box is compared with every later candidate). */
typedef struct {
    float x0, x1, y0, y1, area;
} nms_box;

static nms_box nms_box_of(const float *b, int32_t center) {
    nms_box r;
    nms_extent(b, center, &r.x0, &r.x1, &r.y0, &r.y1);
    r.area = (r.x1 - r.x0) * (r.y1 - r.y0);
    return r;
}

/* IoU of a kept box and a candidate above the threshold (zero-area boxes and disjoint ones never are). */
static int nms_overlaps(const nms_box *a, const nms_box *b, float iou_threshold) {
    float ix0, ix1, iy0, iy1, inter, uni;
    ix0 = a->x0 > b->x0 ? a->x0 : b->x0;
    ix1 = a->x1 < b->x1 ? a->x1 : b->x1;
    if (ix1 <= ix0) return 0;
    iy0 = a->y0 > b->y0 ? a->y0 : b->y0;
    iy1 = a->y1 < b->y1 ? a->y1 : b->y1;
    if (iy1 <= iy0) return 0;
    inter = (ix1 - ix0) * (iy1 - iy0);
    uni = a->area + b->area - inter;
    if (inter <= 0.0f || a->area <= 0.0f || b->area <= 0.0f || uni <= 0.0f) return 0;
    return inter / uni > iou_threshold;
}

int64_t aotc_nms_f32(const aotc_nms_params *p, int64_t n_boxes, const float *boxes, const float *scores,
                     int64_t max_per_class, float iou_threshold, int has_score_threshold, float score_threshold,
                     int32_t *scratch, int64_t *selected) {
    nms_box *kept = (nms_box *)(void *)(scratch + p->boxes + (p->boxes & 1)); /* this class's kept boxes */
    int64_t rows = 0;
    int32_t b, c, i;
    if (max_per_class <= 0) return 0;
    if (n_boxes > p->boxes) n_boxes = p->boxes;
    for (b = 0; b < p->batches; ++b) {
        const float *bb = boxes + (int64_t)b * p->boxes * 4;
        for (c = 0; c < p->classes; ++c) {
            const float *sc = scores + ((int64_t)b * p->classes + c) * p->boxes;
            const int64_t first = rows; /* this class's rows start here */
            int32_t n = 0;
            for (i = 0; i < n_boxes; ++i) {
                if (sc[i] == sc[i] && (!has_score_threshold || sc[i] > score_threshold)) scratch[n++] = i;
            }
            for (i = n / 2 - 1; i >= 0; --i) nms_sift(sc, scratch, n, i);
            while (n > 0 && rows - first < max_per_class && rows < p->max_rows) {
                const int32_t top = scratch[0];
                const nms_box cand = nms_box_of(bb + (int64_t)top * 4, p->center_point_box);
                int64_t r;
                int keep = 1;
                scratch[0] = scratch[--n];
                nms_sift(sc, scratch, n, 0);
                for (r = 0; r < rows - first && keep; ++r) keep = !nms_overlaps(&kept[r], &cand, iou_threshold);
                if (keep) {
                    kept[rows - first] = cand;
                    selected[rows * 3] = b;
                    selected[rows * 3 + 1] = c;
                    selected[rows * 3 + 2] = top;
                    ++rows;
                }
            }
        }
    }
    return rows;
}

/* ---- NonZero ------------------------------------------------------------------- */
int64_t aotc_nonzero(const aotc_nonzero_params *p, const void *x, int64_t *y) {
    static const uint8_t zero[8] = {0};
    const uint8_t *xs = (const uint8_t *)x;
    const size_t size = (size_t)p->elem_size;
    int32_t idx[AOTC_MAX_RANK] = {0};
    int64_t i, rows = 0;
    int32_t d;
    for (i = 0; i < p->n; ++i) {
        const uint8_t *e = xs + i * (int64_t)size;
        int nonzero;
        if (p->is_float && size == sizeof(float)) {
            float v;
            memcpy(&v, e, sizeof v);
            nonzero = v != 0.0f;
        } else if (p->is_float) {
            double v;
            memcpy(&v, e, sizeof v);
            nonzero = v != 0.0;
        } else {
            nonzero = memcmp(e, zero, size) != 0;
        }
        if (nonzero) {
            if (rows == p->max_rows) break;
            for (d = 0; d < p->rank; ++d) y[d * p->max_rows + rows] = idx[d];
            ++rows;
        }
        for (d = p->rank - 1; d >= 0; --d) { /* odometer */
            if (++idx[d] < p->shape[d]) break;
            idx[d] = 0;
        }
    }
    return rows;
}
