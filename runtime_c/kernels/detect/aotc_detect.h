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
void aotc_topk_u64(const aotc_topk_params *p, const uint64_t *x, uint64_t *values, int64_t *indices);
int64_t aotc_topk_rows_u64(const aotc_topk_params *p, int64_t n, int64_t k, const uint64_t *x, uint64_t *values,
                           int64_t *indices);

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

/* TFLite's TFLite_Detection_PostProcess custom op (issue 50), as LiteRT's kernel computes it: box
 * encodings [boxes, box_stride] (y, x, h, w first) decoded against the anchors [boxes, 4] (y, x, h, w;
 * float, dequantized at compile time), in double, into corners (ymin, xmin, ymax, xmax) of float; class
 * predictions [boxes, classes + label_offset] (a background column first when label_offset is 1). Float,
 * uint8 or int8 inputs: the quantized ones read as (q - zero) * scale in float, as LiteRT does.
 *
 * fast (regular_nms 0): each box's best class score (the first best); the boxes whose best is at least
 * score_threshold, best first (ties: lower box first), each kept unless its IoU with a box already kept
 * exceeds iou_threshold, at most max_detections; kept box n fills rows n * max_classes_per_detection + j
 * with its min(max_classes_per_detection, classes) best classes (ties: lower class first);
 * num_detections counts the kept boxes. regular (1): the same suppression class by class over that
 * class's scores (at most detections_per_class a class), the best max_detections of all classes' kept
 * boxes in rows 0.. (ties: lower class first, then the class's order); num_detections counts them.
 * Rows not written are zeros. y_boxes [rows, 4], classes (the class index, the background not counted)
 * and scores [rows], num_detections [1], every one float; rows = max_detections *
 * max_classes_per_detection.
 *
 * scratch: 4-byte cells: 4 * boxes (the decoded boxes), boxes (a score a box), boxes (the candidates'
 * heap), min(boxes, regular_nms ? detections_per_class : max_detections) (the kept boxes), and with
 * regular_nms 4 * max_detections (two lists of the best so far: scores and rows). */
typedef struct {
    int32_t boxes;      /* anchors, and rows of both inputs */
    int32_t box_stride; /* values per box encoding (>= 4) */
    int32_t classes;    /* classes, the background not counted */
    int32_t label_offset;
    int32_t max_detections, max_classes_per_detection, detections_per_class;
    int32_t regular_nms;
    float score_threshold, iou_threshold;
    float y_scale, x_scale, h_scale, w_scale;
    float box_scale, score_scale; /* quantized inputs: (q - zero) * scale; unused for float ones */
    int32_t box_zero, score_zero;
} aotc_detection_params;

#define AOTC_DECLARE_DETECTION(SFX, T)                                                                             \
    void aotc_detection_postprocess_##SFX(const aotc_detection_params *p, const T *box_encodings,                 \
                                          const T *class_predictions, const float *anchors, float *y_boxes,       \
                                          float *y_classes, float *y_scores, float *num_detections, float *scratch);
AOTC_DECLARE_DETECTION(f32, float)
AOTC_DECLARE_DETECTION(u8, uint8_t)
AOTC_DECLARE_DETECTION(i8, int8_t)

/* TFLite's NON_MAX_SUPPRESSION_V4 and _V5 (detect_tfl_nms.c), as LiteRT's reference_ops::NonMaxSuppression
 * computes them: boxes [boxes, 4] as [y1, x1, y2, x2] (any diagonal corners), scores [boxes]. The candidates
 * are the boxes scoring above score_threshold; at most min(their count, max_output) are selected. Each
 * round takes the best candidate (ties: lower box first) and compares it with the boxes selected since it was
 * last compared, newest first, by LiteRT's IoU (float, op for op; 0 where either area is not positive): an
 * IoU of at least iou_threshold drops it; with sigma > 0 (soft NMS) each comparison scales its score by
 * exp(-0.5 / sigma * iou^2), and a score at or below score_threshold ends the comparisons. Not dropped, it is
 * selected if its score did not change, and stays a candidate while its score is above score_threshold (as
 * LiteRT, which has no `continue` there: a selected box comes back, and its IoU with itself, 1, then drops
 * it; a box of no area is selected again). Writes max_output indices (int32) and, when selected_scores is
 * not NULL, scores, zeros past *count, the number selected.
 *
 * scratch: AOTC_TFL_NMS_SCRATCH_PER_BOX bytes a box: each box's current score and the selections it has
 * been compared with (-1: not a candidate), its extents and its area. */
#define AOTC_TFL_NMS_SCRATCH_PER_BOX 28
typedef struct {
    int32_t boxes, max_output;
    float iou_threshold, score_threshold;
    float sigma; /* soft NMS (V5) when above 0 */
} aotc_tfl_nms_params;

void aotc_tfl_nms_f32(const aotc_tfl_nms_params *p, const float *boxes, const float *scores, int32_t *indices,
                      float *selected_scores, int32_t *count, float *scratch);

/* ONNX RoiAlign (detect_roialign.c), as onnxruntime and the ONNX reference compute it: x [batches,
 * channels, height, width], rois [rois, 4] (x1, y1, x2, y2, scaled by spatial_scale; half_pixel
 * shifts them by -0.5, output_half_pixel makes each side at least 1), batch_index [rois] (int64), y
 * [rois, channels, out_h, out_w]. Each output bin samples a grid (sampling_ratio a side, else
 * ceil(roi side / bins), none for a negative side, at most 32768) bilinearly, a sample more than one pixel outside the input counting 0; avg
 * is the mean of the samples, max the largest of their four weighted taps (w * x, onnxruntime's).
 * Returns 0, or AOTC_ERR_SHAPE without writing anything when a batch index is not in 0..batches-1. */
typedef struct {
    int32_t batches, channels, height, width, rois, out_h, out_w;
    int32_t sampling_ratio; /* samples a bin side; 0: ceil(roi side / bins) */
    int32_t max_mode;       /* 0: avg; 1: max */
    int32_t half_pixel;     /* 1: half_pixel; 0: output_half_pixel */
    float spatial_scale;
} aotc_roialign_params;

int aotc_roialign_f32(const aotc_roialign_params *p, const float *x, const float *rois, const int64_t *batch_index,
                      float *y);

#endif /* AOTC_DETECT_H */
