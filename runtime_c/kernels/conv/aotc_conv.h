/* Convolutions, float32, NCHW: ONNX Conv and ConvTranspose with 1 to 3 spatial dims,
 * groups, strides, dilations, padding and an optional bias. The products run on the
 * GEMM core (aotc_gemm.h). Each strategy below is a file of its own, conv_<strategy>.c
 * (conv_internal.h lists them), tested against the reference kernels of conv_ref.c. */
#ifndef AOTC_CONV_H
#define AOTC_CONV_H

#include "aotc_common.h"
#include "aotc_gemm.h" /* AOTC_GEMM_PANEL, AOTC_GEMM_KC: the scratch formulas below */

/* One convolution, worked out by the compiler. Spatial dims are (D, H, W); a 2-D conv
 * has D = 1 everywhere, a 1-D conv D = H = 1. For ConvTranspose, "in" and "out" are
 * still the node's input and output. */
typedef struct {
    int32_t batch;        /* N */
    int32_t group;        /* ONNX group; channels split into this many independent groups */
    int32_t in_c;         /* input channels, all groups */
    int32_t out_c;        /* output channels, all groups */
    int32_t in_size[3];   /* input D, H, W */
    int32_t out_size[3];  /* output D, H, W */
    int32_t kernel[3];    /* kernel D, H, W */
    int32_t strides[3];   /* ONNX strides */
    int32_t dilations[3]; /* ONNX dilations; 1 means dense */
    int32_t pads[3];      /* ONNX pads at the start of each dim (the end pads only shape out_size) */
    int32_t kc;           /* aotc_conv_f32: patch-matrix rows (input channel x tap) per pass; the Winograd
                           * kernels with --threads: floats between two threads' lanes of scratch */
    int32_t nc;           /* aotc_conv_f32: output positions per pass; aotc_conv_transpose_f32: input
                           * positions per pass; aotc_conv_pointwise_t_f32: output channels per pass */
    int32_t act;          /* fused activation (AOTC_ACT_* in aotc_gemm.h), applied after bias and residual */
    float act_lo;         /* AOTC_ACT_CLAMP bounds (Relu: 0, INFINITY) */
    float act_hi;
    float act_alpha;      /* AOTC_ACT_LEAKY slope */
    int32_t in_nhwc;      /* aotc_conv_implicit_f32 only: X is N x H x W x C (channels last; a Transpose
                           * to NCHW folded into the conv), and wt's rows go (ky, kx, c), not (c, ky, kx) */
    int32_t out_nhwc;     /* aotc_conv_implicit_f32 (no residual) and aotc_conv_transpose_f32 only: Y is stored
                           * N x H x W x C, element (n, c, y, x) at ((n * H + y) * W + x) * C + c (a
                           * Transpose to NHWC folded into the conv, aot/passes/conv_nhwc.py); 0: NCHW */
} aotc_conv_params;

/* The Conv kernels below compute Y = act(conv(X, W) + bias + res): `res` is a residual
 * of Y's shape (a fused Add), or NULL, and act is p->act; both are applied as the
 * output is written, not as separate passes. */

/* ONNX Conv, general case: for each image, group and block of nc output positions,
 * the patch matrix (im2col) is built kc rows at a time in `scratch` and multiplied by
 * the group's weights, accumulating into Y (which starts as the bias).
 * scratch: kc rows of nc floats, each rounded up to an odd number of AOTC_GEMM_PANEL
 * panels (rows an odd number of cache lines apart use every L1 set). */
void aotc_conv_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res, float *y,
                   float *scratch);

/* ONNX Conv, 2-D, stride 1, no dilation: the group's input is copied once, zero-padded, so
 * that every patch-matrix row of a block of nc output positions is one copy (positions run
 * over the padded width PW = OW + KW - 1; the KW - 1 junk columns per row are dropped when
 * the results are copied into Y, with the residual and activation). scratch: the padded
 * input (in_c / group * (OH + KH - 1) * PW + KW floats, rounded up to AOTC_GEMM_PANEL),
 * kc patch rows as in aotc_conv_f32, then out_c / group * nc floats of results. */
void aotc_conv_s1_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                      const float *res, float *y, float *scratch);

/* ONNX Conv with a 1 x 1 kernel, stride 1 and no padding: per image and group,
 * Y = W * X with X read in place. work: AOTC_SGEMM_WORK_BYTES for the GEMM core. */
void aotc_conv_pointwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             const float *res, float *y, float *work);

/* ONNX Conv with a 1 x 1 kernel, a stride above 1 and no padding: each input plane's strided positions copied
 * into scratch, then aotc_conv_pointwise_f32 on the copy (its work block after the copy). For a host without
 * AVX-512, whose implicit GEMM reads such an input a position at a time (aot/kernels/conv.py). */
void aotc_conv_pointwise_strided_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                     const float *res, float *y, float *scratch);

/* ONNX Conv with a 1 x 1 kernel, stride 1 and no padding, on fewer output positions than a
 * GEMM panel is wide: per image and group, Y^T = X^T * W^T, so that the vectors run along the
 * output channels. wt: each group's W^T (C/g x M/g), packed at compile time in panels of
 * AOTC_GEMM_PANEL columns (zero-padded). nc output channels at a time (a multiple of
 * AOTC_GEMM_PANEL) go to scratch (positions x nc floats), then transposed into Y. */
void aotc_conv_pointwise_t_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                               const float *res, float *y, float *scratch);

/* ONNX Conv with one input channel per group (depthwise: group == in_c, and single-
 * channel inputs): a direct loop, out_c / group outputs per input channel. */
void aotc_conv_depthwise_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             const float *res, float *y);

/* Any Conv, directly and without scratch: tiles of 4 output channels x 16 columns summed in
 * registers straight from the input (borders point by point). Slower than the GEMM paths;
 * the compiler takes it only where a step has no memory to spare for their scratch. */
void aotc_conv_direct_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                          const float *res, float *y);

/* ONNX Conv on float64 (conv_f64.c): a direct loop in double, no scratch; any Conv the float32 kernels take
 * in NCHW, with the same params (kc, nc unused). */
void aotc_conv_f64(const aotc_conv_params *p, const double *x, const double *w, const double *bias,
                   const double *res, double *y);

/* 2-D (or 1-D) Conv, any kernel, stride, dilation, padding and group, without scratch: an
 * implicit GEMM, Y^T = P * W^T with the patch matrix P never built. Register tiles of
 * AOTC_GEMM_MR output positions x AOTC_GEMM_NR output channels read the patch elements
 * straight from the input, positions grouped by which taps lie inside the input so that no
 * loop tests for padding. wt: each group's W^T (C/g * KH * KW rows in ONNX order, M/g
 * columns), packed at compile time in panels of AOTC_GEMM_PANEL columns, zero-padded.
 * With p->in_nhwc, X is channels last (what a Keras export feeds its first conv through a
 * Transpose, which the compiler then drops) and W^T's rows go (ky, kx, c): a kernel row's taps
 * over all channels are one run of the input. With Helium (a Cortex-M55) convs on at most 4
 * input channels at stride 2 or into narrow rows go in vectors of positions down the output
 * columns instead (conv_stem_mve.h). */
void aotc_conv_implicit_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                            const float *res, float *y);

/* The implicit GEMM's AVX-512F paths, each for the shapes aot/kernels/conv_avx512.py gives it, with the
 * same arguments (wt: the packed W^T above): 3 x 3 same size at stride 1 (NCHW, or a channels-last
 * RGB input), 3 x 3 at stride 2, 1 x 1 at stride 2 on 8 to 32 input channels, 1 x 1 on 64 or more,
 * 1 x 1 at stride 1 and one-channel stems in tiles of 8 channels x 32 positions, 3 x 3 same size
 * with many input channels on small planes, and 3 x 3 or 7 x 7 stems at stride 2 (conv_ig_avx512.h says
 * why each exists). Built without AVX-512F, or given a conv its path does not take, each runs
 * aotc_conv_implicit_f32. */
void aotc_conv_igx3_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                        const float *res, float *y);
void aotc_conv_igx3s2_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                          const float *res, float *y);
void aotc_conv_igx1_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                        const float *res, float *y);
void aotc_conv_pwc_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                       const float *res, float *y);
void aotc_conv_posx_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                        const float *res, float *y);
/* aotc_conv_pwc_f32's 1 x 1 convs at stride 2: the input's strided positions first copied into scratch
 * (in_c x the output positions floats), then the stride-1 path on that plane, the same sums. Built without
 * AVX-512F it runs aotc_conv_implicit_f32 (scratch unused). */
void aotc_conv_pwcs2_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                         const float *res, float *y, float *scratch);
void aotc_conv_igb_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                       const float *res, float *y);
void aotc_conv_stemx_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                         const float *res, float *y);

/* ONNX Conv, 2-D 3 x 3, stride 1, no dilation, pads of 1 on every side (same size), one group:
 * Winograd's F(2 x 2, 3 x 3), 16 multiply-adds per 2 x 2 outputs and channel pair instead of 36
 * (conv_winograd.c). u: the weights transformed at compile time, 16 matrices U[e] = (G g G^T)[e]
 * of out_c x in_c, row-major. p->nc: tile rows (pairs of output rows) per band; scratch: 16 x
 * (in_c + out_c) x tp floats, tp = p->nc x ceil(OW / 2) rounded up to AOTC_GEMM_PANEL. Output
 * rows at most 2 AOTC_WINO_TW_MAX wide. */
#define AOTC_WINO_TW_MAX 128   /* tiles per tile row its stack buffers hold */
#define AOTC_WINO_BAND_MAX 256 /* tiles per band (p->nc tile rows), rounded up to AOTC_GEMM_PANEL */
#define AOTC_WINO_ROWS_MAX 16  /* tile rows per band */
/* With --threads (AOTC_THREADS > 1) both Winograd kernels take scratch of AOTC_THREADS lanes, p->kc
 * floats apart: thread t's band input transform (products x in_c x tp) and its products for a block of
 * AOTC_WINO_LANE_M output channels (products x AOTC_WINO_LANE_M x tp), at scratch + t p->kc. The compiler
 * gives every Winograd conv of the bundle the same scratch, kept for the whole run, and the same p->kc, so
 * that a lane's lines are only ever touched by its thread (conv_winograd.h, wino_lane_items). A conv with at
 * least AOTC_THREADS bands whose lane can hold a band's V and the products of all its output channels, at
 * most AOTC_WINO_LANE_FLOATS floats, runs by bands instead (aotc_conv_winograd_lane_floats, wino_band_items). */
#define AOTC_WINO_LANE_M 64
#define AOTC_WINO_LANE_FLOATS 524288 /* the most floats of a lane the compiler gives a conv (2 MiB) */
/* Floats between one of V's or M's (tile + 2)^2 matrices and the next, past its rows: without them the
 * matrices lie a multiple of 4 KiB apart (in_c x tp floats, tp a multiple of 16), and the input transform's
 * 16 streams of stores, the GEMMs' and the output transform's loads fall on the same L1 sets and alias
 * (4 KiB): ResNet-50's Winograd convs took 1.7 ms (5 %) longer. */
#define AOTC_WINO_PITCH_PAD 16
void aotc_conv_winograd_f32(const aotc_conv_params *p, const float *x, const float *u, const float *bias,
                            const float *res, float *y, float *scratch);

/* The same convs by Winograd's F(4 x 4, 3 x 3), 36 multiply-adds per 4 x 4 outputs and channel pair
 * instead of 144 (conv_winograd4.c). u: 36 matrices U[e] = (G g G^T)[e] of out_c x in_c, row-major.
 * p->nc: tile rows (quads of output rows) per band; scratch: 36 x (in_c + out_c) x tp floats, tp =
 * p->nc x ceil(OW / 4) rounded up to AOTC_GEMM_PANEL. Output rows at most 4 AOTC_WINO4_TW_MAX wide. */
#define AOTC_WINO4_TW_MAX 64    /* tiles per tile row its stack buffers hold */
#define AOTC_WINO4_BAND_MAX 128 /* tiles per band (p->nc tile rows), rounded up to AOTC_GEMM_PANEL */
#define AOTC_WINO4_ROWS_MAX 16  /* tile rows per band */
void aotc_conv_winograd4_f32(const aotc_conv_params *p, const float *x, const float *u, const float *bias,
                             const float *res, float *y, float *scratch);

/* Depthwise Conv with a 3 x 3 kernel (2-D), stride 1 or 2 in both dims, no dilation: each
 * input plane is copied into scratch zero-padded (stride 1: R = (OH - 1) + 3 rows of
 * C = (OW - 1) + 3; stride 2: four planes by row and column parity, each ceil(R / 2) rows
 * of ceil(C / 2), R and C as before with stride 2), so that every tap is a unit-stride read,
 * and the plane's outputs are computed in one flat pass into OH more rows of scratch (of C,
 * or of ceil(C / 2)), then copied out. The compiler sizes scratch (aot/kernels/conv.py). */
void aotc_conv_depthwise3x3_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                const float *res, float *y, float *scratch);

/* Conv with a 3 x 3 kernel (2-D), no dilation, few input channels per group (depthwise convs,
 * RGB stems), one input plane at a time: each output plane of its group gets the plane's taps in
 * one flat pass (the bias with the first input plane, the activation with the last). Stride 1
 * with pads of 1 on every side; or stride 2 with pads of 0 or 1 at the start of each dim (a
 * left pad of 0 only if the output needs no input column past 2 OW - 1). Output q = oy * OW +
 * ox reads each tap at q + a fixed offset: stride 1 from the input plane copied between two
 * zero rows; stride 2 from four planes of OH x OW, the input split by row and column parity,
 * each between two rows (zero, or the input row below the last output's, if any). A tap one
 * column outside the image lands in the row above or below, and a mask drops it. scratch:
 * OH * OW + 1 floats rounded up to 16, then stride 1: (IH + 2) * IW + 2 floats; stride 2:
 * 4 * ((OH + 2) * OW + 2) floats. */
void aotc_conv3x3_flat_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                           const float *res, float *y, float *scratch);

/* Depthwise Conv (one input channel per group, out_c / in_c outputs each) with a 3 x 3 kernel
 * (2-D), stride 1 or 2 in both dims, pads of 0 or 1 on each side, no dilation, without scratch:
 * every tap read straight from the input. A plane's outputs go in runs: one output row, or at
 * stride 1 with pads of 1 on both sides (output q then reads input q + a fixed offset per tap)
 * whole rows, up to 128 outputs. A run goes in blocks of 8 outputs (AOTC_DW3_BLOCK; 1 on targets
 * without vector units), the nine taps summed in registers, at stride 2 de-interleaved in
 * registers. Taps outside the image are read from the neighbouring column, row or plane and
 * dropped by a bit mask (for the columns, 137 words on the stack). Runs are rounded up to whole
 * blocks: the outputs past a run's end, written early, are written again by the run or plane
 * they belong to. The first and last planes of the tensor are checked run by run: nothing is
 * read or written outside x, y and res (a caller's buffers of exactly their size are fine). The
 * residual and LeakyRelu each take a pass over the plane; a clamp alone goes with the sums. With
 * Helium (a Cortex-M55) a plane goes in strips of 4 output columns down the rows instead
 * (conv_dw3_mve.h). */
void aotc_conv_depthwise3x3_direct_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                       const float *res, float *y);
/* Its block width. aot/kernels/conv.py chooses kernels for the width a target's compiler gets here
 * (TargetTraits.vector_unit), and the generated code refuses to compile if they differ. */
#ifndef AOTC_DW3_BLOCK
#if defined(__SSE2__) || defined(__ARM_NEON) || defined(__ARM_NEON__) || defined(__aarch64__)
#define AOTC_DW3_BLOCK 8
#else
#define AOTC_DW3_BLOCK 1
#endif
#endif

/* Depthwise Conv (one input channel per group, out_c / in_c outputs each), 2-D, kernel width 3, 5
 * or 7 and any height, column stride 1 or 2 (any row stride), any pads, no dilation, without scratch: each
 * output row in blocks of AOTC_DWK_BLOCK outputs (the last one moved left to end at the row's end)
 * summed in registers straight from the input; a block whose taps cross a row end reads a copy of
 * its inputs on the stack, zero outside the image; tap rows outside are skipped. The residual and
 * the activation are applied as each block is stored. */
void aotc_conv_depthwise_kxk_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                 const float *res, float *y);
/* Its block width: 16 outputs (one or two vector registers per sum) on targets with vector units,
 * 4 elsewhere. aot/kernels/conv.py does not depend on it. */
#ifndef AOTC_DWK_BLOCK
#if defined(__SSE2__) || defined(__ARM_NEON) || defined(__ARM_NEON__) || defined(__aarch64__)
#define AOTC_DWK_BLOCK 16
#else
#define AOTC_DWK_BLOCK 4
#endif
#endif

/* ONNX ConvTranspose: per image, group and block of nc input positions, the GEMM
 * core computes W^T * X (one row per output channel and kernel tap) into scratch,
 * which is then added into Y at the strided positions (col2im). Y starts as the bias.
 * scratch: out_c / group * taps * nc floats, then AOTC_SGEMM_WORK_BYTES for the core. */
void aotc_conv_transpose_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                             float *y, float *scratch);

/* ---- Scratch: one formula per kernel ------------------------------------------------------------
 * <kernel>_scratch_bytes(p): the bytes of scratch the kernel above lays out for p, with p->kc and p->nc as
 * the compiler sets them (the kernels without a scratch argument have no such function). The kernels place
 * their blocks with the macros here where a block's size is more than a product; tests/kernels_c/test_conv_kernels.c
 * gives each kernel exactly this much; aot/kernels/conv.py sizes the memory plan by the same formulas, and
 * tests/kernels_c/test_scratch_facts.py holds the two equal over random shapes, budgets and targets. */

/* Floats between two patch rows of a block of nc positions (aotc_conv_f32, aotc_conv_s1_f32): whole
 * AOTC_GEMM_PANEL panels, an odd number of them (no two rows of a panel share L1 sets). The layout's
 * pieces are macros: as inline functions they changed gcc's code for the kernels (a few instructions
 * more in conv_flat3x3.c on the Cortex-M4), as macros the kernels compile to the same instructions. */
#define AOTC_CONV_PATCH_LDC(nc) ((((nc) + AOTC_GEMM_PANEL - 1) / AOTC_GEMM_PANEL | 1) * AOTC_GEMM_PANEL)

/* n floats rounded up to whole AOTC_GEMM_PANEL panels (aotc_conv_s1_f32's padded input) */
#define AOTC_CONV_PANELS(n) (((n) + AOTC_GEMM_PANEL - 1) / AOTC_GEMM_PANEL * AOTC_GEMM_PANEL)

/* aotc_conv3x3_flat_f32's mask: words for n outputs and one more, rounded up to 16 ... */
#define AOTC_CONV3X3_FLAT_MASK_WORDS(n) (((n) + 16) / 16 * 16)

/* ... then its input plane between two rows (stride 1: IH + 2 rows of IW, and 2 more floats) or four
 * parity planes of OH + 2 rows of OW (stride 2), each 2 more floats */
#define AOTC_CONV3X3_FLAT_PLANE_FLOATS(s, ih, iw, oh, ow) \
    ((s) == 1 ? (ptrdiff_t)((ih) + 2) * (iw) + 2 : (ptrdiff_t)((oh) + 2) * (ow) + 2)

static inline int64_t aotc_conv_f32_scratch_bytes(const aotc_conv_params *p) {
    return (int64_t)p->kc * AOTC_CONV_PATCH_LDC(p->nc) * (int64_t)sizeof(float);
}

/* the padded input of the group's channels, the patch rows, then out_c / group * nc results */
static inline int64_t aotc_conv_s1_f32_scratch_bytes(const aotc_conv_params *p) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t ph = p->out_size[1] + p->kernel[1] - 1, pw = p->out_size[2] + p->kernel[2] - 1;
    const ptrdiff_t pad = AOTC_CONV_PANELS((ptrdiff_t)cg * ((ptrdiff_t)ph * pw) + p->kernel[2]);
    return ((int64_t)pad + (int64_t)p->kc * AOTC_CONV_PATCH_LDC(p->nc) + (int64_t)mg * p->nc) *
           (int64_t)sizeof(float);
}

/* the GEMM core's work block, the most it reads (the kernel runs with NULL too, more slowly) */
static inline int64_t aotc_conv_pointwise_f32_scratch_bytes(const aotc_conv_params *p) {
    return aotc_sgemm_work_bytes(p->in_c / p->group);
}

/* the copy of the strided inputs (every image's channels on the output plane), then the GEMM core's work block */
static inline int64_t aotc_conv_pointwise_strided_f32_scratch_bytes(const aotc_conv_params *p) {
    return (int64_t)p->batch * p->in_c * p->out_size[0] * p->out_size[1] * p->out_size[2] * (int64_t)sizeof(float) +
           aotc_sgemm_work_bytes(p->in_c / p->group);
}

static inline int64_t aotc_conv_pointwise_t_f32_scratch_bytes(const aotc_conv_params *p) {
    return (int64_t)p->out_size[0] * p->out_size[1] * p->out_size[2] * p->nc * (int64_t)sizeof(float);
}

/* the padded plane (stride 1) or its four parity planes (stride 2), then OH rows of outputs */
static inline int64_t aotc_conv_depthwise3x3_f32_scratch_bytes(const aotc_conv_params *p) {
    const int32_t s = p->strides[2], rows = (p->out_size[1] - 1) * s + 3, cols = (p->out_size[2] - 1) * s + 3;
    const int64_t planes = s == 1 ? (int64_t)rows * cols : 4 * (int64_t)((rows + 1) / 2) * ((cols + 1) / 2);
    return (planes + (int64_t)p->out_size[1] * (s == 1 ? cols : (cols + 1) / 2)) * (int64_t)sizeof(float);
}

static inline int64_t aotc_conv3x3_flat_f32_scratch_bytes(const aotc_conv_params *p) {
    const int32_t s = p->strides[2], oh = p->out_size[1], ow = p->out_size[2];
    const ptrdiff_t plane = AOTC_CONV3X3_FLAT_PLANE_FLOATS(s, p->in_size[1], p->in_size[2], oh, ow);
    const int64_t planes = (s == 1 ? 1 : 4) * (int64_t)plane;
    return (AOTC_CONV3X3_FLAT_MASK_WORDS((int64_t)oh * ow) + planes) * (int64_t)sizeof(float);
}

/* out_c / group x taps rows of nc columns, then the GEMM core's work block */
static inline int64_t aotc_conv_transpose_f32_scratch_bytes(const aotc_conv_params *p) {
    const int64_t rows = (int64_t)(p->out_c / p->group) * p->kernel[0] * p->kernel[1] * p->kernel[2];
    return rows * p->nc * (int64_t)sizeof(float) + (int64_t)AOTC_SGEMM_WORK_BYTES;
}

/* A Winograd conv's lane with threads > 1 (floats): a band's V and the products of every output channel where
 * the conv runs by bands (at least `threads` bands of p->nc tile rows in an image, and that fits
 * AOTC_WINO_LANE_FLOATS: conv_winograd.h's wino_band_items), else its V and the products of a block of
 * AOTC_WINO_LANE_M output channels (wino_lane_items); *band_mode says which. aot/kernels/winograd.py's
 * Variant.lane_floats is the same formula. */
static inline int64_t aotc_conv_winograd_lane_floats(const aotc_conv_params *p, int32_t tile, int32_t threads,
                                                     int *band_mode) {
    const int64_t products = (int64_t)(tile + 2) * (tile + 2);
    const int32_t th = (p->out_size[1] + tile - 1) / tile, tw = (p->out_size[2] + tile - 1) / tile;
    const int32_t band = p->nc > 0 ? p->nc : 1;
    const int64_t tp = AOTC_CONV_PANELS((ptrdiff_t)band * tw);
    const int64_t full = products * (((int64_t)p->in_c + p->out_c) * tp + 2 * AOTC_WINO_PITCH_PAD);
    *band_mode = (th + band - 1) / band >= threads && full <= AOTC_WINO_LANE_FLOATS;
    return *band_mode ? full : products * (((int64_t)p->in_c + AOTC_WINO_LANE_M) * tp + 2 * AOTC_WINO_PITCH_PAD);
}

/* The Winograd kernels' (tile 2: aotc_conv_winograd_f32, 4: aotc_conv_winograd4_f32): a band's V and M,
 * (tile + 2)^2 matrices each of in_c, out_c rows of tp tiles (p->nc tile rows, rounded up to whole
 * panels); with threads > 1, that many lanes (aotc_conv_winograd_lane_floats). */
static inline int64_t aotc_conv_winograd_scratch_bytes(const aotc_conv_params *p, int32_t tile, int32_t threads) {
    const int64_t products = (int64_t)(tile + 2) * (tile + 2);
    const int32_t tw = (p->out_size[2] + tile - 1) / tile, band = p->nc > 0 ? p->nc : 1;
    const int64_t tp = AOTC_CONV_PANELS((ptrdiff_t)band * tw);
    int band_mode;
    if (threads > 1)
        return threads * aotc_conv_winograd_lane_floats(p, tile, threads, &band_mode) * (int64_t)sizeof(float);
    return products * (((int64_t)p->in_c + p->out_c) * tp + 2 * AOTC_WINO_PITCH_PAD) * (int64_t)sizeof(float);
}

static inline int64_t aotc_conv_winograd_f32_scratch_bytes(const aotc_conv_params *p, int32_t threads) {
    return aotc_conv_winograd_scratch_bytes(p, 2, threads);
}

static inline int64_t aotc_conv_winograd4_f32_scratch_bytes(const aotc_conv_params *p, int32_t threads) {
    return aotc_conv_winograd_scratch_bytes(p, 4, threads);
}

#endif /* AOTC_CONV_H */
