/* The detect kernels (aotc_detect.h, detect.c) against the references (detect_ref.c) over random
 * shapes, bit for bit: TopK of the three types, largest and smallest, with many ties, and its
 * run-time-rows forms with n and k below, at and past the planned ones (negative too), their
 * returned extents compared and every element past it left as it was; NonMaxSuppression on
 * clustered boxes in both box formats (zero-area, inverted corners), scores with ties and NaNs,
 * with and without a score threshold, class limits from none to more than the boxes, output bounds
 * that cut the rows short, run-time box counts, scratch of exactly the documented size; NonZero of
 * 1- to 8-byte elements, floats with -0 and NaN, bounds below and above the nonzero count; RoiAlign in both
 * modes and coordinate modes, ROIs inside, across and past the input (inverted ones too), sampling ratios
 * 0 to 3, batch indices out of range (AOTC_ERR_SHAPE, nothing written). Outputs
 * start as random bytes, the same in both runs, and are compared whole.
 *
 *     test_detect_kernels [seed] [shapes per entry point] */
#include "aotc_detect.h"
#include "kernel_test.h"
#include "kernels_ref.h"

/* ---- TopK ---------------------------------------------------------------------------------------------- */

enum { TK_F32, TK_I64, TK_I32, TK_U64 };

static void topk_call(int t, int ref, int rows, const aotc_topk_params *p, int64_t n, int64_t k, const void *x,
                      void *v, int64_t *i, int64_t *extent) {
    if (t == TK_F32) {
        if (rows) *extent = (ref ? aotc_topk_rows_f32_ref : aotc_topk_rows_f32)(p, n, k, (const float *)x, (float *)v, i);
        else (ref ? aotc_topk_f32_ref : aotc_topk_f32)(p, (const float *)x, (float *)v, i);
    } else if (t == TK_I64) {
        if (rows) *extent = (ref ? aotc_topk_rows_i64_ref : aotc_topk_rows_i64)(p, n, k, (const int64_t *)x, (int64_t *)v, i);
        else (ref ? aotc_topk_i64_ref : aotc_topk_i64)(p, (const int64_t *)x, (int64_t *)v, i);
    } else if (t == TK_U64) {
        if (rows) *extent = (ref ? aotc_topk_rows_u64_ref : aotc_topk_rows_u64)(p, n, k, (const uint64_t *)x, (uint64_t *)v, i);
        else (ref ? aotc_topk_u64_ref : aotc_topk_u64)(p, (const uint64_t *)x, (uint64_t *)v, i);
    } else {
        if (rows) *extent = (ref ? aotc_topk_rows_i32_ref : aotc_topk_rows_i32)(p, n, k, (const int32_t *)x, (int32_t *)v, i);
        else (ref ? aotc_topk_i32_ref : aotc_topk_i32)(p, (const int32_t *)x, (int32_t *)v, i);
    }
}

static int check_topk(const char *name, int t, int rows) {
    static const size_t sizes[4] = {4, 8, 4, 8};
    aotc_topk_params p;
    const size_t sz = sizes[t];
    const int ties = chance(1, 2);
    int64_t n = 0, k = 0, e1 = 0, e2 = 0;
    size_t xn, yn, j;
    uint8_t *x, *v, *vr;
    int64_t *ix, *ir;
    int bad;
    p.outer = rand_int(1, 4), p.n = rand_int(1, 30), p.inner = rand_int(1, 4), p.largest = chance(1, 2);
    p.k = rand_int(rows ? 0 : 1, p.n);
    if (rows) n = rand_int(-2, p.n + 3), k = chance(1, 6) ? rand_int(-2, 0) : rand_int(0, p.k + 3);
    xn = (size_t)p.outer * p.n * p.inner, yn = (size_t)p.outer * p.k * p.inner;
    x = test_bytes(xn * sz);
    for (j = 0; j < xn; ++j) { /* ties: a few distinct values; else spread (floats: no NaN) */
        const int32_t small = rand_int(-3, 3);
        if (t == TK_F32) { const float f = ties ? (float)small : rand_float() * 50.0f; memcpy(x + j * 4, &f, 4); }
        else if (t == TK_U64) { const uint64_t q = ties ? (uint64_t)(small + 3) << 61 : (uint64_t)test_next() << 32 ^ test_next(); memcpy(x + j * 8, &q, 8); }
        else if (t == TK_I64) { const int64_t q = ties ? small : (int64_t)test_next() << 31 ^ test_next(); memcpy(x + j * 8, &q, 8); }
        else { const int32_t q = ties ? small : (int32_t)test_next(); memcpy(x + j * 4, &q, 4); }
    }
    v = test_bytes(yn * sz), vr = test_bytes_copy(v, yn * sz);
    ix = (int64_t *)(void *)test_bytes(yn * 8), ir = (int64_t *)(void *)test_bytes_copy(ix, yn * 8);
    topk_call(t, 0, rows, &p, n, k, x, v, ix, &e1);
    topk_call(t, 1, rows, &p, n, k, x, vr, ir, &e2);
    bad = test_bytes_differ(name, v, vr, yn * sz) || test_bytes_differ(name, ix, ir, yn * 8);
    if (!bad && e1 != e2) printf("%s: returned %lld, reference %lld\n", name, (long long)e1, (long long)e2), bad = 1;
    if (bad) printf("  outer %d, n %d, inner %d, k %d, largest %d, run-time n %lld, k %lld\n", (int)p.outer,
                    (int)p.n, (int)p.inner, (int)p.k, (int)p.largest, (long long)n, (long long)k);
    free(x), free(v), free(vr), free(ix), free(ir);
    return bad;
}

static int check_topk_f32(void) { return check_topk("aotc_topk_f32", TK_F32, 0); }
static int check_topk_i64(void) { return check_topk("aotc_topk_i64", TK_I64, 0); }
static int check_topk_i32(void) { return check_topk("aotc_topk_i32", TK_I32, 0); }
static int check_topk_rows_f32(void) { return check_topk("aotc_topk_rows_f32", TK_F32, 1); }
static int check_topk_rows_i64(void) { return check_topk("aotc_topk_rows_i64", TK_I64, 1); }
static int check_topk_rows_i32(void) { return check_topk("aotc_topk_rows_i32", TK_I32, 1); }
static int check_topk_u64(void) { return check_topk("aotc_topk_u64", TK_U64, 0); }
static int check_topk_rows_u64(void) { return check_topk("aotc_topk_rows_u64", TK_U64, 1); }

/* ---- NonMaxSuppression ---------------------------------------------------------------------------------- */

static int check_nms(void) {
    aotc_nms_params p;
    int64_t n_boxes, max_per_class, r1, r2, i, total;
    float iou, thr, *boxes, *scores;
    int has_thr;
    size_t scratch_bytes;
    int32_t *scratch;
    int64_t *sel, *ref;
    int bad;
    p.batches = rand_int(1, 2), p.classes = rand_int(1, 3), p.boxes = rand_int(0, 40);
    p.center_point_box = chance(1, 2);
    total = (int64_t)p.batches * p.classes * p.boxes;
    p.max_rows = chance(1, 3) ? rand_int(0, (int32_t)total + 2) : total;
    n_boxes = chance(1, 4) ? rand_int(-1, p.boxes + 2) : p.boxes;
    max_per_class = chance(1, 8) ? rand_int(-2, 0) : chance(1, 2) ? rand_int(1, 5) : p.boxes + rand_int(0, 3);
    iou = chance(1, 8) ? (float)rand_int(0, 1) : 0.5f + 0.5f * rand_float();
    has_thr = chance(1, 2), thr = has_thr ? 0.5f * rand_float() : 0.0f;
    boxes = test_alloc((size_t)p.batches * p.boxes * 4), scores = test_alloc((size_t)p.batches * p.classes * p.boxes);
    for (i = 0; i < (int64_t)p.batches * p.boxes; ++i) { /* clusters of overlapping boxes around 4 centres */
        const float cx = 0.25f * (float)rand_int(0, 3), cy = 0.25f * (float)rand_int(0, 3);
        float *b = boxes + i * 4;
        if (p.center_point_box) {
            b[0] = cx + 0.05f * rand_float(), b[1] = cy + 0.05f * rand_float();
            b[2] = chance(1, 20) ? 0.0f : 0.2f + 0.1f * rand_float(), b[3] = 0.2f + 0.1f * rand_float();
        } else { /* corners in either order */
            const float h = 0.1f + 0.05f * rand_float(), w = chance(1, 20) ? 0.0f : 0.1f + 0.05f * rand_float();
            const int flip = chance(1, 2);
            b[0] = cy + (flip ? h : -h), b[2] = cy + (flip ? -h : h), b[1] = cx - w, b[3] = cx + w;
        }
    }
    for (i = 0; i < (int64_t)p.batches * p.classes * p.boxes; ++i) {
        scores[i] = chance(1, 3) ? 0.125f * (float)rand_int(0, 8) : 0.5f + 0.5f * rand_float();
        if (chance(1, 20)) scores[i] = NAN;
    }
    /* the documented scratch: boxes int32 rounded up to even, then 5 floats a box */
    scratch_bytes = (size_t)(p.boxes + (p.boxes & 1)) * 4 + (size_t)p.boxes * 5 * sizeof(float);
    scratch = (int32_t *)(void *)test_bytes(scratch_bytes);
    sel = (int64_t *)(void *)test_bytes((size_t)p.max_rows * 3 * 8), ref = (int64_t *)(void *)test_bytes_copy(sel, (size_t)p.max_rows * 3 * 8);
    r1 = aotc_nms_f32(&p, n_boxes, boxes, scores, max_per_class, iou, has_thr, thr, scratch, sel);
    r2 = aotc_nms_f32_ref(&p, n_boxes, boxes, scores, max_per_class, iou, has_thr, thr, ref);
    bad = test_bytes_differ("aotc_nms_f32", sel, ref, (size_t)p.max_rows * 3 * 8);
    if (!bad && r1 != r2) printf("aotc_nms_f32: returned %lld rows, reference %lld\n", (long long)r1, (long long)r2), bad = 1;
    if (bad) printf("  batches %d, classes %d, boxes %d, center %d, max_rows %lld, n_boxes %lld, max_per_class %lld, "
                    "iou %.9g, score threshold %d %.9g\n", (int)p.batches, (int)p.classes, (int)p.boxes,
                    (int)p.center_point_box, (long long)p.max_rows, (long long)n_boxes, (long long)max_per_class,
                    (double)iou, has_thr, (double)thr);
    free(boxes), free(scores), free(scratch), free(sel), free(ref);
    return bad;
}

/* ---- TFLite's NON_MAX_SUPPRESSION_V4 / _V5 ------------------------------------------------------------------- */

static int check_tfl_nms(void) {
    aotc_tfl_nms_params p;
    float *boxes, *scores, *scratch, *ref_scratch, *ss, *ref_ss;
    int32_t *sel, *ref, count = -1, ref_count = -2, i;
    int bad, with_scores = chance(1, 2);
    p.boxes = rand_int(0, 40), p.max_output = rand_int(0, 12);
    p.iou_threshold = chance(1, 8) ? (float)rand_int(0, 2) : 0.3f + 0.5f * rand_float();
    p.score_threshold = chance(1, 4) ? -1.0f : 0.4f * rand_float();
    p.sigma = chance(1, 2) ? 0.0f : chance(1, 8) ? -0.5f : 0.1f + rand_float();
    boxes = test_alloc((size_t)p.boxes * 4), scores = test_alloc((size_t)p.boxes);
    for (i = 0; i < p.boxes; ++i) { /* clusters around 4 centres, corners in either order, some of no area */
        const float cx = 0.25f * (float)rand_int(0, 3), cy = 0.25f * (float)rand_int(0, 3);
        const float h = 0.1f + 0.05f * rand_float(), w = chance(1, 20) ? 0.0f : 0.1f + 0.05f * rand_float();
        const int flip = chance(1, 2);
        float *b = boxes + i * 4;
        b[0] = cy + (flip ? h : -h), b[2] = cy + (flip ? -h : h), b[1] = cx - w, b[3] = cx + w;
        scores[i] = chance(1, 3) ? 0.125f * (float)rand_int(0, 8) : rand_float();
        if (chance(1, 20)) scores[i] = NAN;
    }
    scratch = (float *)(void *)test_bytes((size_t)p.boxes * AOTC_TFL_NMS_SCRATCH_PER_BOX);
    ref_scratch = (float *)(void *)test_bytes((size_t)p.boxes * 8);
    sel = (int32_t *)(void *)test_bytes((size_t)p.max_output * 4);
    ref = (int32_t *)(void *)test_bytes_copy(sel, (size_t)p.max_output * 4);
    ss = (float *)(void *)test_bytes((size_t)p.max_output * 4);
    ref_ss = (float *)(void *)test_bytes_copy(ss, (size_t)p.max_output * 4);
    aotc_tfl_nms_f32(&p, boxes, scores, sel, with_scores ? ss : NULL, &count, scratch);
    aotc_tfl_nms_f32_ref(&p, boxes, scores, ref, with_scores ? ref_ss : NULL, &ref_count, ref_scratch);
    bad = test_bytes_differ("aotc_tfl_nms_f32 indices", sel, ref, (size_t)p.max_output * 4) ||
          test_bytes_differ("aotc_tfl_nms_f32 scores", ss, ref_ss, (size_t)p.max_output * 4);
    if (!bad && count != ref_count) printf("aotc_tfl_nms_f32: %d selected, reference %d\n", (int)count, (int)ref_count), bad = 1;
    if (bad) printf("  boxes %d, max_output %d, iou %.9g, score threshold %.9g, sigma %.9g\n", (int)p.boxes,
                    (int)p.max_output, (double)p.iou_threshold, (double)p.score_threshold, (double)p.sigma);
    free(boxes), free(scores), free(scratch), free(ref_scratch), free(sel), free(ref), free(ss), free(ref_ss);
    return bad;
}

/* ---- NonZero -------------------------------------------------------------------------------------------- */

static int check_nonzero(void) {
    static const int32_t sizes[5] = {1, 2, 4, 8, 3};
    aotc_nonzero_params p;
    int64_t r1, r2, i, nz = 0;
    int32_t d;
    uint8_t *x;
    int64_t *y, *ref;
    size_t yb;
    int bad;
    memset(&p, 0, sizeof p);
    p.rank = rand_int(1, 4), p.elem_size = sizes[rand_int(0, 4)];
    p.is_float = (p.elem_size == 4 || p.elem_size == 8) && chance(1, 2);
    for (d = 0, p.n = 1; d < p.rank; ++d) p.n *= p.shape[d] = rand_int(1, p.rank > 2 ? 5 : 12);
    x = test_bytes((size_t)p.n * p.elem_size);
    for (i = 0; i < p.n; ++i) { /* mostly zeros; floats: -0 and NaN too */
        uint8_t *e = x + i * p.elem_size;
        const int32_t kind = rand_int(0, 5);
        if (kind <= 2) memset(e, 0, (size_t)p.elem_size);
        if (p.is_float && kind == 3) {
            if (p.elem_size == 4) { const float f = chance(1, 2) ? -0.0f : NAN; memcpy(e, &f, 4); }
            else { const double v = chance(1, 2) ? -0.0 : NAN; memcpy(e, &v, 8); }
        }
        if (!p.is_float && kind == 3) memset(e, 0, (size_t)p.elem_size), e[rand_int(0, p.elem_size - 1)] = 1;
    }
    for (i = 0; i < p.n; ++i) nz += chance(1, 2); /* a bound around half the elements, or all */
    p.max_rows = chance(1, 3) ? nz : p.n;
    yb = (size_t)(p.rank * p.max_rows) * 8;
    y = (int64_t *)(void *)test_bytes(yb), ref = (int64_t *)(void *)test_bytes_copy(y, yb);
    r1 = aotc_nonzero(&p, x, y);
    r2 = aotc_nonzero_ref(&p, x, ref);
    bad = test_bytes_differ("aotc_nonzero", y, ref, yb);
    if (!bad && r1 != r2) printf("aotc_nonzero: returned %lld, reference %lld\n", (long long)r1, (long long)r2), bad = 1;
    if (bad) printf("  rank %d, n %lld, elem_size %d, is_float %d, max_rows %lld\n", (int)p.rank, (long long)p.n,
                    (int)p.elem_size, (int)p.is_float, (long long)p.max_rows);
    free(x), free(y), free(ref);
    return bad;
}

/* ---- TFLite_Detection_PostProcess ------------------------------------------------------------------------ */

enum { DP_TYPE_F32, DP_TYPE_U8, DP_TYPE_I8 };

static void detection_call(int type, int ref, const aotc_detection_params *p, const void *enc, const void *cls,
                           const float *anchors, float *y_boxes, float *y_classes, float *y_scores, float *num,
                           float *scratch, int32_t *kept) {
    if (type == DP_TYPE_F32) {
        if (ref) aotc_detection_postprocess_f32_ref(p, (const float *)enc, (const float *)cls, anchors, y_boxes, y_classes, y_scores, num, kept);
        else aotc_detection_postprocess_f32(p, (const float *)enc, (const float *)cls, anchors, y_boxes, y_classes, y_scores, num, scratch);
    } else if (type == DP_TYPE_U8) {
        if (ref) aotc_detection_postprocess_u8_ref(p, (const uint8_t *)enc, (const uint8_t *)cls, anchors, y_boxes, y_classes, y_scores, num, kept);
        else aotc_detection_postprocess_u8(p, (const uint8_t *)enc, (const uint8_t *)cls, anchors, y_boxes, y_classes, y_scores, num, scratch);
    } else {
        if (ref) aotc_detection_postprocess_i8_ref(p, (const int8_t *)enc, (const int8_t *)cls, anchors, y_boxes, y_classes, y_scores, num, kept);
        else aotc_detection_postprocess_i8(p, (const int8_t *)enc, (const int8_t *)cls, anchors, y_boxes, y_classes, y_scores, num, scratch);
    }
}

static int check_detection(int type, const char *name) {
    aotc_detection_params p;
    int32_t limit, kept_cells;
    int64_t i, n_enc, n_cls, rows;
    size_t esize = type == DP_TYPE_F32 ? 4 : 1, scratch_bytes;
    uint8_t *enc, *cls;
    float *anchors, *scratch, *yb, *yc, *ys, *yn, *rb, *rc, *rs, *rn;
    int32_t *kept;
    int bad;
    const int ties = chance(1, 2);
    memset(&p, 0, sizeof p);
    p.boxes = rand_int(1, 60), p.box_stride = rand_int(4, 6), p.classes = rand_int(1, 6), p.label_offset = chance(1, 2);
    p.max_detections = rand_int(1, 10), p.max_classes_per_detection = rand_int(1, 4);
    p.detections_per_class = rand_int(1, 10), p.regular_nms = chance(1, 2);
    p.score_threshold = chance(1, 3) ? 0.0f : 0.6f * (rand_float() + 1.0f) / 2.0f;
    p.iou_threshold = chance(1, 8) ? 1.0f : 0.2f + 0.35f * (rand_float() + 1.0f);
    p.y_scale = p.x_scale = 10.0f, p.h_scale = p.w_scale = chance(1, 2) ? 5.0f : -2.5f;
    p.box_scale = 0.05f, p.box_zero = type == DP_TYPE_U8 ? 128 : 3;
    p.score_scale = 1.0f / 255.0f, p.score_zero = type == DP_TYPE_I8 ? -128 : 0;
    n_enc = (int64_t)p.boxes * p.box_stride, n_cls = (int64_t)p.boxes * (p.classes + p.label_offset);
    rows = (int64_t)p.max_detections * p.max_classes_per_detection;
    enc = test_bytes((size_t)n_enc * esize), cls = test_bytes((size_t)n_cls * esize);
    anchors = test_alloc((size_t)p.boxes * 4);
    for (i = 0; i < p.boxes; ++i) { /* anchors around 4 centres; encodings that move them a little */
        anchors[i * 4] = 0.25f * (float)rand_int(0, 3) + 0.02f * rand_float();
        anchors[i * 4 + 1] = 0.25f * (float)rand_int(0, 3) + 0.02f * rand_float();
        anchors[i * 4 + 2] = chance(1, 30) ? 0.0f : 0.2f + 0.1f * rand_float();
        anchors[i * 4 + 3] = 0.2f + 0.1f * rand_float();
    }
    for (i = 0; i < n_enc; ++i) {
        if (type == DP_TYPE_F32) { const float f = 2.0f * rand_float(); memcpy(enc + i * 4, &f, 4); }
        else if (type == DP_TYPE_U8) enc[i] = (uint8_t)rand_int(88, 168);
        else ((int8_t *)enc)[i] = (int8_t)rand_int(-37, 43);
    }
    for (i = 0; i < n_cls; ++i) { /* ties: a few levels; else spread; floats: a NaN now and then */
        const int32_t level = ties ? 32 * rand_int(0, 7) : rand_int(0, 255);
        if (type == DP_TYPE_F32) {
            const float f = chance(1, 50) ? NAN : (float)level / 255.0f;
            memcpy(cls + i * 4, &f, 4);
        } else if (type == DP_TYPE_U8) cls[i] = (uint8_t)level;
        else ((int8_t *)cls)[i] = (int8_t)(level - 128);
    }
    /* the documented scratch, exactly */
    limit = p.regular_nms ? p.detections_per_class : p.max_detections;
    kept_cells = limit < p.boxes ? limit : p.boxes;
    scratch_bytes = 4 * ((size_t)p.boxes * 6 + (size_t)kept_cells + (p.regular_nms ? 4 * (size_t)p.max_detections : 0));
    scratch = (float *)(void *)test_bytes(scratch_bytes);
    kept = (int32_t *)(void *)test_bytes((size_t)p.boxes * 4);
    yb = (float *)(void *)test_bytes((size_t)rows * 16), rb = (float *)(void *)test_bytes_copy(yb, (size_t)rows * 16);
    yc = (float *)(void *)test_bytes((size_t)rows * 4), rc = (float *)(void *)test_bytes_copy(yc, (size_t)rows * 4);
    ys = (float *)(void *)test_bytes((size_t)rows * 4), rs = (float *)(void *)test_bytes_copy(ys, (size_t)rows * 4);
    yn = (float *)(void *)test_bytes(4), rn = (float *)(void *)test_bytes_copy(yn, 4);
    detection_call(type, 0, &p, enc, cls, anchors, yb, yc, ys, yn, scratch, NULL);
    detection_call(type, 1, &p, enc, cls, anchors, rb, rc, rs, rn, NULL, kept);
    bad = test_bytes_differ(name, yn, rn, 4) || test_bytes_differ(name, yc, rc, (size_t)rows * 4) ||
          test_bytes_differ(name, ys, rs, (size_t)rows * 4) || test_bytes_differ(name, yb, rb, (size_t)rows * 16);
    if (bad) printf("  boxes %d, stride %d, classes %d + %d, max_detections %d, per detection %d, per class %d, "
                    "regular %d, thresholds %.9g %.9g, ties %d\n", (int)p.boxes, (int)p.box_stride, (int)p.classes,
                    (int)p.label_offset, (int)p.max_detections, (int)p.max_classes_per_detection,
                    (int)p.detections_per_class, (int)p.regular_nms, (double)p.score_threshold,
                    (double)p.iou_threshold, ties);
    free(enc), free(cls), free(anchors), free(scratch), free(kept);
    free(yb), free(rb), free(yc), free(rc), free(ys), free(rs), free(yn), free(rn);
    return bad;
}

static int check_detection_f32(void) { return check_detection(DP_TYPE_F32, "aotc_detection_postprocess_f32"); }
static int check_detection_u8(void) { return check_detection(DP_TYPE_U8, "aotc_detection_postprocess_u8"); }
static int check_detection_i8(void) { return check_detection(DP_TYPE_I8, "aotc_detection_postprocess_i8"); }

/* ---- RoiAlign ------------------------------------------------------------------------------------------------ */

static int check_roialign(void) {
    aotc_roialign_params p;
    size_t xn, yn, j;
    float *x, *rois, *y, *yr;
    int64_t *batch;
    int bad, e1, e2, r;
    p.batches = rand_int(1, 3), p.channels = rand_int(1, 4), p.height = rand_int(1, 9), p.width = rand_int(1, 9);
    p.rois = rand_int(1, 5), p.out_h = rand_int(1, 4), p.out_w = rand_int(1, 4), p.sampling_ratio = rand_int(0, 3);
    p.max_mode = chance(1, 2), p.half_pixel = chance(1, 2);
    p.spatial_scale = chance(1, 3) ? 1.0f : (float)rand_int(1, 8) / 8.0f;
    xn = (size_t)p.batches * p.channels * p.height * p.width;
    yn = (size_t)p.rois * p.channels * p.out_h * p.out_w;
    x = (float *)(void *)test_bytes(xn * 4), rois = (float *)(void *)test_bytes((size_t)p.rois * 16);
    batch = (int64_t *)(void *)test_bytes((size_t)p.rois * 8);
    for (j = 0; j < xn; ++j) x[j] = rand_float() * 4.0f;
    for (r = 0; r < p.rois; ++r) { /* corners around and past the input (inverted too), on pixels or between */
        for (j = 0; j < 4; ++j) {
            const float side = (float)(j % 2 ? p.height : p.width) / p.spatial_scale;
            rois[r * 4 + (int)j] = chance(1, 4) ? (float)rand_int(-2, (int32_t)side + 2) : (rand_float() * 0.7f + 0.5f) * side;
        }
        batch[r] = chance(1, 40) ? (chance(1, 2) ? -1 : p.batches) : rand_int(0, p.batches - 1);
    }
    y = (float *)(void *)test_bytes(yn * 4), yr = (float *)(void *)test_bytes_copy(y, yn * 4);
    e1 = aotc_roialign_f32(&p, x, rois, batch, y);
    e2 = aotc_roialign_f32_ref(&p, x, rois, batch, yr);
    bad = test_bytes_differ("aotc_roialign_f32", y, yr, yn * 4);
    if (!bad && e1 != e2) printf("aotc_roialign_f32: returned %d, reference %d\n", e1, e2), bad = 1;
    if (bad) printf("  x [%d %d %d %d], %d rois to %d x %d, sampling %d, max %d, half_pixel %d, scale %.9g\n",
                    (int)p.batches, (int)p.channels, (int)p.height, (int)p.width, (int)p.rois, (int)p.out_h,
                    (int)p.out_w, (int)p.sampling_ratio, (int)p.max_mode, (int)p.half_pixel, (double)p.spatial_scale);
    free(x), free(rois), free(batch), free(y), free(yr);
    return bad;
}

/* ---- the references on cases worked out by hand ----------------------------------------------------------- */

static int check_reference(void) {
    /* TopK largest 2 of [1 3 3 2]: 3 (index 1), 3 (index 2) */
    static const float x[4] = {1, 3, 3, 2}, top[2] = {3, 3};
    static const int64_t top_i[2] = {1, 2};
    /* NMS: boxes 0 and 1 overlap (IoU 1 / 1.1 > 0.5), box 2 apart; scores 0.8, 0.9, 0.7: rows for boxes 1, 2 */
    static const float boxes[12] = {0, 0, 1, 1, 0, 0, 1, 1.1f, 5, 5, 6, 6}, scores[3] = {0.8f, 0.9f, 0.7f};
    static const int64_t keep[6] = {0, 0, 1, 0, 0, 2};
    aotc_topk_params p = {1, 4, 1, 2, 1};
    aotc_nms_params q = {1, 1, 3, 0, 10};
    float v[2];
    int64_t i[2], sel[30];
    int bad = 0;
    aotc_topk_f32_ref(&p, x, v, i);
    bad |= memcmp(v, top, sizeof v) != 0 || memcmp(i, top_i, sizeof i) != 0;
    bad |= aotc_nms_f32_ref(&q, 3, boxes, scores, 10, 0.5f, 0, 0.0f, sel) != 2 || memcmp(sel, keep, sizeof keep) != 0;
    {   /* RoiAlign avg of [[0 1] [2 3]], ROI (0, 0)-(2, 2), output_half_pixel, one bin of 2 x 2 samples at
         * 0.5 and 1.5 (1.5 clamps to the last row / column): 1.5, 2, 2.5, 3, mean 2.25; a batch index out of
         * range: AOTC_ERR_SHAPE, y untouched */
        static const float rx[4] = {0, 1, 2, 3}, roi[4] = {0, 0, 2, 2};
        static const int64_t b0[1] = {0}, b1[1] = {1};
        aotc_roialign_params ra = {1, 1, 2, 2, 1, 1, 1, 0, 0, 0, 1.0f};
        float ry = -1.0f;
        bad |= aotc_roialign_f32_ref(&ra, rx, roi, b0, &ry) != 0 || ry != 2.25f;
        ry = -1.0f;
        bad |= aotc_roialign_f32_ref(&ra, rx, roi, b1, &ry) != AOTC_ERR_SHAPE || ry != -1.0f;
    }
    {   /* TFLite NMS of the same boxes, iou 0.5, score threshold 0.75: box 1 (0.9), then box 0 (0.8) dropped
         * (IoU 1 / 1.1 >= 0.5); box 2 (0.7) is no candidate; max_output 3: [1, 0, 0], count 1. A box of no
         * area (0.9) is selected twice before box 1 (0.5): LiteRT pushes a selected box back, and its IoU with
         * itself is 0 */
        static const float flat[8] = {0, 0, 0, 1, 0, 0, 1, 1}, two[2] = {0.9f, 0.5f};
        aotc_tfl_nms_params t = {3, 3, 0.5f, 0.75f, 0.0f};
        float tscratch[6];
        int32_t tsel[3], tcount = -1;
        aotc_tfl_nms_f32_ref(&t, boxes, scores, tsel, NULL, &tcount, tscratch);
        bad |= tcount != 1 || tsel[0] != 1 || tsel[1] != 0 || tsel[2] != 0;
        t.boxes = 2, t.max_output = 2, t.score_threshold = 0.0f;
        aotc_tfl_nms_f32_ref(&t, flat, two, tsel, NULL, &tcount, tscratch);
        bad |= tcount != 2 || tsel[0] != 0 || tsel[1] != 0;
    }
    if (bad) printf("the references: MISMATCH on a case worked out by hand\n");
    return bad;
}

typedef struct {
    const char *name;
    int (*check)(void);
} entry;

static const entry ENTRIES[] = {
    {"aotc_topk_f32", check_topk_f32},           {"aotc_topk_i64", check_topk_i64},
    {"aotc_topk_i32", check_topk_i32},           {"aotc_topk_rows_f32", check_topk_rows_f32},
    {"aotc_topk_rows_i64", check_topk_rows_i64}, {"aotc_topk_rows_i32", check_topk_rows_i32},
    {"aotc_topk_u64", check_topk_u64},           {"aotc_topk_rows_u64", check_topk_rows_u64},
    {"aotc_nms_f32", check_nms},                 {"aotc_nonzero", check_nonzero},
    {"aotc_tfl_nms_f32", check_tfl_nms},
    {"aotc_detection_postprocess_f32", check_detection_f32}, {"aotc_detection_postprocess_u8", check_detection_u8},
    {"aotc_detection_postprocess_i8", check_detection_i8}, {"aotc_roialign_f32", check_roialign},
};

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference();
    size_t e;
    int32_t i;
    for (e = 0; e < sizeof ENTRIES / sizeof ENTRIES[0]; ++e) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = ENTRIES[e].check();
        printf("%-34s %s (%d shapes)\n", ENTRIES[e].name, bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
