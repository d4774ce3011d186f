/* Detection kernels (issue 18): TopK, NonMaxSuppression and NonZero. NonMaxSuppression and
 * NonZero write a number of rows known only at run time: each returns it (the extent), never
 * more than the compile-time bound `max_rows` its output was planned at, and writes nothing past
 * it. Generated code keeps the extent in a local and runs the ops that read the tensor on that
 * many rows only. */
#ifndef AOTC_DETECT_H
#define AOTC_DETECT_H

#include "aotc_common.h"

/* ONNX TopK of x viewed as [outer, n, inner] along n: the k largest (or smallest) of each line,
 * sorted best first, ties in index order (lower first, as onnxruntime). values [outer, k, inner]
 * of x's type, indices int64 [outer, k, inner]. */
typedef struct {
    int32_t outer, n, inner, k;
    int32_t largest; /* 1: largest first; 0: smallest first */
} aotc_topk_params;

void aotc_topk_f32(const aotc_topk_params *p, const float *x, float *values, int64_t *indices);
/* The same on the first n of each line's p->n (rows known at run time), the best min(k, n, p->k)
 * of them written (returned); the output keeps p->k as its line length. */
int64_t aotc_topk_rows_f32(const aotc_topk_params *p, int64_t n, int64_t k, const float *x, float *values,
                           int64_t *indices);
int64_t aotc_topk_rows_i64(const aotc_topk_params *p, int64_t n, int64_t k, const int64_t *x, int64_t *values,
                           int64_t *indices);
int64_t aotc_topk_rows_i32(const aotc_topk_params *p, int64_t n, int64_t k, const int32_t *x, int32_t *values,
                           int64_t *indices);
void aotc_topk_i64(const aotc_topk_params *p, const int64_t *x, int64_t *values, int64_t *indices);
void aotc_topk_i32(const aotc_topk_params *p, const int32_t *x, int32_t *values, int64_t *indices);

/* ONNX NonMaxSuppression: boxes [batches, boxes, 4], scores [batches, classes, boxes]. For each
 * batch and class in order, the boxes whose score is above score_threshold (every box when
 * has_score_threshold is 0), best score first (ties: lower box index first), each kept unless its
 * IoU with a box already kept for that class exceeds iou_threshold, at most max_per_class of them.
 * Writes rows (batch, class, box) of int64 and returns how many, at most max_rows. Only the first
 * n_boxes of each batch's p->boxes are candidates (boxes whose rows are known at run time).
 * scratch: num_boxes int32 (rounded up to even), then 5 floats a box. */
typedef struct {
    int32_t batches, classes, boxes;
    int32_t center_point_box; /* 0: [y1, x1, y2, x2] any diagonal corners; 1: [x_c, y_c, w, h] */
    int64_t max_rows;         /* the output's bound: rows past it are dropped */
} aotc_nms_params;

int64_t aotc_nms_f32(const aotc_nms_params *p, int64_t n_boxes, const float *boxes, const float *scores,
                     int64_t max_per_class, float iou_threshold, int has_score_threshold, float score_threshold,
                     int32_t *scratch, int64_t *selected);

/* ONNX NonZero of x (n elements of elem_size bytes, `rank` dims): the coordinates of each
 * nonzero element in row-major order (NaN counts as nonzero), written as y[d * max_rows + j] for dim d (int64, y is
 * [rank, max_rows]). Returns how many, at most max_rows. */
typedef struct {
    int32_t rank;
    int32_t elem_size;
    int32_t is_float; /* 1: float32/float64, where -0.0 is zero too; 0: any nonzero byte */
    int64_t n;
    int64_t max_rows;
    int32_t shape[AOTC_MAX_RANK];
} aotc_nonzero_params;

int64_t aotc_nonzero(const aotc_nonzero_params *p, const void *x, int64_t *y);

#endif /* AOTC_DETECT_H */
