/* Resize kernels, float32: ONNX Resize (opset 10..19) and Upsample (7, 9).
 * The compiler computes every source index and interpolation weight (the
 * coordinate_transformation_mode, nearest_mode and cubic formulas) into
 * constant tables, so these kernels only gather and blend. */
#ifndef AOTC_RESIZE_H
#define AOTC_RESIZE_H

#include "aotc_common.h"

/* Nearest: y[j0, j1, ...] = x[offsets[start[0] + j0] + offsets[start[1] + j1] + ...].
 * Dims that map each index to itself are merged by the compiler. */
typedef struct {
    int32_t rank;                       /* >= 1 */
    int32_t out_shape[AOTC_MAX_RANK];   /* y dims */
    int32_t start[AOTC_MAX_RANK];       /* where dim k's entries begin in offsets */
    const int32_t *offsets;             /* per dim, per output index: x element offset of its source */
} aotc_resize_nearest_params;

void aotc_resize_nearest_f32(const aotc_resize_nearest_params *p, const float *x, float *y);
void aotc_resize_nearest_i8(const aotc_resize_nearest_params *p, const int8_t *x, int8_t *y);
void aotc_resize_nearest_u8(const aotc_resize_nearest_params *p, const uint8_t *x, uint8_t *y);

/* Linear or cubic along one or two axes h and w: x viewed as
 * [outer][in_h][mid][in_w][inner] (h = 1 when one axis is resized), y as
 * [outer][out_h][mid][out_w][inner], and
 *   y[o][j][m][i][c] = sum over s < taps_h, t < taps_w of
 *       weight_h[j][s] * weight_w[i][t] * x[o][.][m][.][c] at offset_h[j][s] + offset_w[i][t]. */
typedef struct {
    int32_t outer;           /* product of the dims before axis h */
    int32_t out_h;           /* output length of axis h */
    int32_t mid;             /* product of the dims between h and w */
    int32_t out_w;           /* output length of axis w */
    int32_t inner;           /* product of the dims after axis w */
    int32_t taps_h;          /* sources per output index along h: 1, 2 (linear) or 4 (cubic) */
    int32_t taps_w;          /* sources per output index along w */
    int32_t x_outer_stride;  /* x elements per outer index: in_h * mid * in_w * inner */
    int32_t x_mid_stride;    /* x elements per mid index: in_w * inner */
    const int32_t *offset_h; /* [out_h * taps_h] x element offsets of the sources along h */
    const float *weight_h;   /* [out_h * taps_h] their weights */
    const int32_t *offset_w; /* [out_w * taps_w] x element offsets of the sources along w */
    const float *weight_w;   /* [out_w * taps_w] their weights */
} aotc_resize_params;

void aotc_resize_f32(const aotc_resize_params *p, const float *AOTC_RESTRICT x, float *AOTC_RESTRICT y);

/* Resize (and Upsample) whose scales are read at run time: the coordinates and weights are worked out
 * here, per run, with the compiler's float32 arithmetic (aot/kernels/resize.py: onnxruntime's formulas),
 * into tables in `scratch`, then the kernels above gather and blend. The output shape was compiled in:
 * scales that are not positive and finite, or whose float32 product with an input size, truncated, is
 * not the compiled output size, return AOTC_ERR_SHAPE and write nothing; else 0. An output the size of
 * the input is a copy, whatever the scales (as onnxruntime does). Axes whose scale is exactly 1 are not
 * interpolated; the others are, two at a time from the innermost (ping-pong through `scratch`). */
enum { AOTC_RESIZE_NEAREST = 0, AOTC_RESIZE_LINEAR = 1, AOTC_RESIZE_CUBIC = 2 };
enum {
    AOTC_CTM_HALF_PIXEL = 0,
    AOTC_CTM_PYTORCH_HALF_PIXEL = 1,
    AOTC_CTM_ALIGN_CORNERS = 2,
    AOTC_CTM_ASYMMETRIC = 3,
    AOTC_CTM_TF_HALF_PIXEL_FOR_NN = 4,
    AOTC_CTM_HALF_PIXEL_SYMMETRIC = 5,
    AOTC_CTM_TF_CROP_AND_RESIZE = 6 /* aotc_resize_crop_f32 only */
};
/* SIMPLE: Upsample and Resize-10 (onnxruntime): ceil when the scale shrinks the axis, else floor */
enum {
    AOTC_NEAREST_ROUND_PREFER_FLOOR = 0,
    AOTC_NEAREST_ROUND_PREFER_CEIL = 1,
    AOTC_NEAREST_FLOOR = 2,
    AOTC_NEAREST_CEIL = 3,
    AOTC_NEAREST_SIMPLE = 4
};

typedef struct {
    int32_t rank;                     /* 1..AOTC_MAX_RANK */
    int32_t mode;                     /* AOTC_RESIZE_NEAREST, _LINEAR or _CUBIC */
    int32_t ctm;                      /* AOTC_CTM_*: coordinate_transformation_mode */
    int32_t nearest_mode;             /* AOTC_NEAREST_* (mode nearest) */
    float cubic_a;                    /* cubic_coeff_a (mode cubic) */
    int32_t exclude_outside;          /* cubic: taps outside the input weigh 0, the others renormalised */
    int32_t in_shape[AOTC_MAX_RANK];  /* x dims */
    int32_t out_shape[AOTC_MAX_RANK]; /* y dims the bundle was compiled for */
    int32_t n_scales;                 /* scales (or sizes) given: one per axis listed in axes */
    int32_t axes[AOTC_MAX_RANK];      /* the axis of each scale, 0..rank-1 */
    int32_t policy;                   /* aotc_resize_sizes_f32: AOTC_KEEP_NOT_LARGER or _NOT_SMALLER */
    int32_t antialias;                /* linear, cubic: axes that shrink use the kernel widened by 1 / scale */
    float extrapolation;              /* aotc_resize_crop_f32: the value of samples outside the input */
} aotc_resize_scales_params;

/* Bytes of scratch aotc_resize_scales_f32 needs (the compiler reserves as much): nearest, an int32 per
 * output index of every axis; linear and cubic, two float regions of the product over the axes of
 * max(in, out), and four tables of 4 entries per output index of the longest output axis (with antialias,
 * of max(4 out, 4 in + 2 out + 8) entries over the axes: the widened kernel's taps times out). */
int32_t aotc_resize_scales_f32(const aotc_resize_scales_params *p, const float *scales, const float *x, float *y,
                               void *scratch);

/* The same with sizes read at run time under keep_aspect_ratio_policy not_larger or not_smaller: one scale
 * for the listed axes, the smallest (not_larger) or largest (not_smaller) float32 size / input size, and
 * output sizes scale x input size rounded half away from zero, which must be the compiled ones (else
 * AOTC_ERR_SHAPE, as for sizes that are not positive). */
enum { AOTC_KEEP_NOT_LARGER = 1, AOTC_KEEP_NOT_SMALLER = 2 };
int32_t aotc_resize_sizes_f32(const aotc_resize_scales_params *p, const int64_t *sizes, const float *x, float *y,
                              void *scratch);

/* coordinate_transformation_mode tf_crop_and_resize, the output shape compiled in (scales or sizes
 * constant) and the roi read at run time: roi holds the starts, then the ends, of the n_scales axes listed
 * in axes (the others crop [0, 1]), as fractions of (in - 1). Coordinates are onnxruntime's (roi_start
 * (in - 1) + j (roi_end - roi_start) (in - 1) / (out - 1)); an output element whose coordinate along any
 * axis falls outside [0, in - 1] takes p->extrapolation. Scratch as aotc_resize_scales_f32's, and an int32
 * per output index of every axis. */
int32_t aotc_resize_crop_f32(const aotc_resize_scales_params *p, const float *roi, const float *x, float *y,
                             void *scratch);

/* ONNX GridSample over 1 to 3 spatial axes: x [n][c][in...], grid [n][out...][nd] holding normalised
 * coordinates in [-1, 1], innermost first (x, then y, then z), y [n][c][out...]. Coordinates map to
 * the input by align_corners; mode nearest (half to even), linear or cubic (Keys, a = -0.75);
 * padding zeros (taps outside read 0), border (coordinates and taps clamped) or reflection (reflected
 * about the borders: the outer pixels' centres with align_corners, their edges without); cubic pads its
 * taps only, not the coordinate, as onnxruntime and PyTorch do. */
enum { AOTC_GRID_NEAREST = 0, AOTC_GRID_LINEAR = 1, AOTC_GRID_CUBIC = 2 };
enum { AOTC_GRID_ZEROS = 0, AOTC_GRID_BORDER = 1, AOTC_GRID_REFLECTION = 2 };
typedef struct {
    int32_t n, c;        /* batch, channels */
    int32_t nd;          /* spatial axes: 1, 2 or 3 */
    int32_t in[3];       /* input spatial sizes, outermost first */
    int32_t out_count;   /* output positions per (n, c): product of the grid's spatial sizes */
    int32_t mode;        /* AOTC_GRID_NEAREST, _LINEAR, _CUBIC */
    int32_t padding;     /* AOTC_GRID_ZEROS, _BORDER, _REFLECTION */
    int32_t align_corners;
} aotc_grid_sample_params;

void aotc_grid_sample_f32(const aotc_grid_sample_params *p, const float *x, const float *grid, float *y);

/* ONNX DeformConv over 2 spatial axes (resize_deform_conv.c): x [n][in_c][in_h][in_w], w [out_c][in_c /
 * group][k_h][k_w], offset [n][offset_group][k_h][k_w][2 (dy, dx)][out_h][out_w], bias [out_c] and mask
 * [n][offset_group][k_h][k_w][out_h][out_w] (both may be NULL), y [n][out_c][out_h][out_w]. Each kernel
 * tap reads x bilinearly at its offset position (GridSample's linear sampling with align_corners and zeros
 * padding: a corner outside the input reads 0), times its mask. scratch: in_c * k_h * k_w floats. */
typedef struct {
    int32_t n, in_c, in_h, in_w, out_c, out_h, out_w, k_h, k_w;
    int32_t stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
    int32_t group, offset_group;
} aotc_deform_conv_params;

void aotc_deform_conv_f32(const aotc_deform_conv_params *p, const float *x, const float *w, const float *offset,
                          const float *bias, const float *mask, float *scratch, float *y);

#endif /* AOTC_RESIZE_H */
