/* Quantized (int8 / uint8) kernels: the QLinear ops of ONNX and onnxruntime, and the
 * QuantizeLinear / DequantizeLinear conversions between floats and integers.
 *
 * Arithmetic follows onnxruntime's CPU kernels (MLAS) on x86, so results are bit-exact
 * with it: products of integers accumulate in int32; an accumulator becomes an output
 * integer by the float requantisation of MlasRequantizeOutput,
 *     y = round_half_even(clamp((float)acc * scale, lo, hi)) + zero_point,
 * with scale = x_scale * w_scale / y_scale computed (in that order, in float) at compile
 * time, and [lo, hi] the output range less the zero point (a fused Relu / Clip narrows it).
 * Weights are int8 (uint8 weights are stored less 128, with their zero point less 128),
 * biases int32. Every kernel exists for int8 (_i8) and uint8 (_u8) activations.
 * C99, no allocation, no globals. */
#ifndef AOTC_QUANT_H
#define AOTC_QUANT_H

#include "aotc_common.h"
#include "aotc_elementwise.h" /* aotc_broadcast */
#include "aotc_pool.h"        /* aotc_pool_params */

/* 1 where the dense layers' DSP paths (SMLAD; not Helium's) read weights stored in blocks of 4 rows
 * interleaved a quad at a time (aotc_qgemm_params / aotc_tfl_fc_params .il4; aot/kernels decides
 * it for the target and the bundle checks this value). */
#ifndef AOTC_DSP_IL
#if defined(__ARM_FEATURE_DSP) && !defined(__ARM_FEATURE_MVE) && !defined(AOTC_NO_INTRINSICS)
#define AOTC_DSP_IL 1
#else
#define AOTC_DSP_IL 0
#endif
#endif

#if defined(__FAST_MATH__)
#error "aotc's int8 kernels round as IEEE arithmetic does (as onnxruntime); build them without -ffast-math"
#endif

/* A float in [-2^22, 2^22] rounded half to even, as the default FP rounding mode does (and
 * x86's cvtps2dq, which onnxruntime uses): adding and taking back 1.5 * 2^23 leaves no
 * fraction bits. Needs IEEE single precision without -ffast-math. */
static inline int32_t aotc_round_even(float f) {
    const float t = f + 12582912.0f;
    return (int32_t)(t - 12582912.0f);
}

/* Without an FPU (Cortex-M3 and other soft-float Arm cores) the requantisation is computed in
 * integers, exactly as the float arithmetic would: the library's float multiply, compares, adds and
 * conversion cost about ten times as many instructions. Set AOTC_REQUANT_FIXED to 0 or 1 to choose. */
#ifndef AOTC_REQUANT_FIXED
#if defined(__arm__) && !defined(__ARM_FP)
#define AOTC_REQUANT_FIXED 1
#else
#define AOTC_REQUANT_FIXED 0
#endif
#endif

#if AOTC_REQUANT_FIXED
#include <string.h> /* memcpy */

/* The bits of a float. */
static inline uint32_t aotc_float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Leading zero bits of m (> 0). */
static inline int32_t aotc_clz32(uint32_t m) {
#if defined(__GNUC__)
    return __builtin_clz(m);
#else
    int32_t n = 0;
    while (!(m & 0x80000000u)) m <<= 1, ++n;
    return n;
#endif
}

/* A whole number held in a float (|v| < 2^31) as an integer, from its bits. */
static inline int32_t aotc_float_whole(float f) {
    const uint32_t u = aotc_float_bits(f);
    const int32_t e = (int32_t)((u >> 23) & 0xFFu) - 150; /* |f| = m 2^e, m the 24-bit significand */
    const uint32_t m = (u & 0x7FFFFFu) | 0x800000u;
    const int32_t v = e <= -24 ? 0 : e < 0 ? (int32_t)(m >> -e) : (int32_t)(m << e);
    return (u >> 31) ? -v : v;
}

/* m >> sh (0 < sh < 32) rounded half to even. */
static inline uint32_t aotc_round_shift(uint32_t m, int32_t sh) {
    const uint32_t q = m >> sh, rest = m & ((1u << sh) - 1u), half = 1u << (sh - 1);
    return q + (rest > half || (rest == half && (q & 1u)));
}

/* round_half_even(clamp((float)acc * scale, lo, hi)) for a normal, positive scale, in integers: acc
 * rounded to a float's 24 bits ((float)acc), the exact product rounded to 24 bits (the float
 * multiply), then to an integer (the clamp to whole numbers commutes with that); each rounding half
 * to even, as IEEE arithmetic does. */
static inline int32_t aotc_requant_fixed(int32_t acc, float scale, int32_t lo, int32_t hi) {
    const uint32_t u = aotc_float_bits(scale);
    const uint32_t ms = (u & 0x7FFFFFu) | 0x800000u; /* scale = ms 2^e */
    int32_t e = (int32_t)((u >> 23) & 0xFFu) - 150, nb, r;
    uint32_t m = acc < 0 ? 0u - (uint32_t)acc : (uint32_t)acc, q, ph, pl;
    uint64_t prod;
    if (m == 0u) return 0 < lo ? (lo > hi ? hi : lo) : 0 > hi ? hi : 0;
    nb = 32 - aotc_clz32(m);
    if (nb > 24) { /* (float)acc */
        m = aotc_round_shift(m, nb - 24);
        e += nb - 24;
    }
    prod = (uint64_t)m * ms; /* <= 2^48: the exact product, times 2^e */
    ph = (uint32_t)(prod >> 32), pl = (uint32_t)prod;
    nb = ph != 0u ? 64 - aotc_clz32(ph) : 32 - aotc_clz32(pl);
    if (nb > 24) { /* the float multiply keeps 24 bits: the nb - 24 (<= 24) below go */
        const int32_t sh = nb - 24;
        const uint32_t top = (pl >> sh) | (ph << (32 - sh)), rest = pl & ((1u << sh) - 1u), half = 1u << (sh - 1);
        q = top + (rest > half || (rest == half && (top & 1u)));
        e += sh;
    } else {
        q = pl;
    }
    /* q 2^e (q <= 2^24) rounded to an integer; past 2^30, saturated (far outside [lo, hi]) */
    if (e >= 0) r = e > 6 ? (1 << 30) : (int32_t)(q << e);
    else r = e < -25 ? 0 : (int32_t)aotc_round_shift(q, -e);
    r = acc < 0 ? -r : r;
    r = r < lo ? lo : r; /* lo, then hi, as the float clamp */
    return r > hi ? hi : r;
}
#endif

/* The output integer of accumulator `acc` (MlasRequantizeOutput). On an Arm FPU a handful of
 * instructions, always inlined: -Os would otherwise call it once per output. */
#if defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__GNUC__) && !defined(AOTC_NO_INTRINSICS)
__attribute__((always_inline))
#endif
static inline int32_t aotc_requant(int32_t acc, float scale, float lo, float hi, int32_t zero_point) {
#if defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__GNUC__) && !defined(AOTC_NO_INTRINSICS)
    /* an Arm single-precision FPU: one VCVTR rounds to nearest even (FPSCR's default mode), then
     * the clamp in integers (the same: rounding commutes with a clamp to whole numbers) */
    float f = (float)acc * scale;
    int32_t r;
    const int32_t lo_i = (int32_t)lo, hi_i = (int32_t)hi;
    __asm__("vcvtr.s32.f32 %1, %1\n\tvmov %0, %1" : "=r"(r), "+t"(f));
    r = r < lo_i ? lo_i : r;
    r = r > hi_i ? hi_i : r;
    return r + zero_point;
#else
    float f;
#if AOTC_REQUANT_FIXED
    if (aotc_float_bits(scale) - 0x00800000u < 0x7F000000u) { /* a normal, positive scale */
        return aotc_requant_fixed(acc, scale, aotc_float_whole(lo), aotc_float_whole(hi)) + zero_point;
    }
#endif
    f = (float)acc * scale;
    f = f < lo ? lo : f;
    f = f > hi ? hi : f;
    return aotc_round_even(f) + zero_point;
#endif
}

/* Per-tensor or per-axis quantisation parameters of a tensor viewed as [outer, channels, inner]
 * (channels = 1 for per-tensor). */
typedef struct {
    int32_t outer, channels, inner;
    const float *scale;       /* [channels] */
    const int32_t *zero;      /* [channels] */
} aotc_qaxis;

/* y = saturate(round_half_even(x / scale) + zero) (QuantizeLinear). */
void aotc_quantize_i8(const aotc_qaxis *p, const float *x, int8_t *y);
void aotc_quantize_u8(const aotc_qaxis *p, const float *x, uint8_t *y);
/* y = (x - zero) * scale (DequantizeLinear). */
void aotc_dequantize_i8(const aotc_qaxis *p, const int8_t *x, float *y);
void aotc_dequantize_u8(const aotc_qaxis *p, const uint8_t *x, float *y);
void aotc_dequantize_i32(const aotc_qaxis *p, const int32_t *x, float *y);

/* QLinearConv, NCHW (1-D convs as 2-D with height 1). */
typedef struct {
    int32_t batch, in_c, in_h, in_w;
    int32_t out_c, out_h, out_w;
    int32_t group;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t x_zero, y_zero;
    float y_lo, y_hi;         /* clamp of (y - y_zero) */
    const float *scale;       /* [out_c] */
    const int32_t *bias;      /* [out_c] */
    const int32_t *w_zero;    /* [out_c] */
    int32_t w_zero_any;       /* some w_zero is not 0 (aotc_qconv_patches_* then sums each patch) */
    int32_t dw4;              /* depthwise on cores with the DSP extension: 0, or the output positions whose
                               * sums fit the scratch after the span (AOTC_QCONV_DW4_SCRATCH: 4 channels at a
                               * time) */
    int32_t w_packed;         /* patches: the weights in blocks of 16 output channels, each kq rows of the 16
                               * channels' 4-byte quads (aotc_qconv_wrow), as AVX-512 VNNI's dense path sums
                               * them; aot/kernels/quant.py packs them so on hosts, for shapes that path takes */
} aotc_qconv_params;

/* Whether the weights are packed (w_packed), and whether tile 0 (no scratch) can come: never on the
 * M-profile cores, which aotc plans neither for, so their code stays as it was. */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define AOTC_QCONV_PACKED(p) ((void)(p), 0)
#define AOTC_QCONV_NOSCRATCH 0
#else
#define AOTC_QCONV_PACKED(p) ((p)->w_packed)
#define AOTC_QCONV_NOSCRATCH 1
#endif
/* Output channel c's weights (kp bytes, patch row r at byte (r / 4) AOTC_QCONV_QSTEP(p) + r % 4): rows
 * of kp bytes, or (w_packed) word c % 16 of each quad row of c's block of 16 channels. */
static inline const int8_t *aotc_qconv_wrow(const aotc_qconv_params *p, const int8_t *w, int32_t c, int64_t kp) {
    return AOTC_QCONV_PACKED(p) ? w + (int64_t)(c & ~15) * kp + (c & 15) * 4 : w + (int64_t)c * kp;
}
#define AOTC_QCONV_QSTEP(p) (AOTC_QCONV_PACKED(p) ? 64 : 4)

/* Output channels summed together (the rows of a weight block). */
#define AOTC_QCONV_BLOCK 4
#define AOTC_QCONV_PATCH_TILE 64 /* most output positions per patch block */
#define AOTC_QCONV_LANES 16      /* output positions summed together in registers */
/* QLinearConv on patches: for a block of `tile` output positions (<= AOTC_QCONV_PATCH_TILE; a
 * multiple of AOTC_QCONV_LANES unless the plane is smaller) the patch matrix is gathered into
 * scratch as unsigned bytes (int8 inputs plus 128) in quads of rows (k = cin / group x k_h x k_w
 * rows, rounded up to kp, a multiple of 4: tile rounded up to whole lanes x kp bytes), then 4 output channels x
 * AOTC_QCONV_LANES positions are summed at a time in registers (vectors along the positions:
 * outputs are stored as runs; with AVX-512 VNNI, 4-way byte dot products). The weights come as rows
 * of kp (zeros after k). p->bias has the input zero point folded in at compile time, as the
 * patches hold it (x_zero + 128 for int8 inputs):
 *     bias[c] + kp zp w_zero[c] - zp sum_k w[c][k]
 * and the kernel subtracts w_zero[c] * sum(patch) when w_zero_any. tile 0: no scratch (the plan had
 * no memory to spare at this step; aot/kernels/quant.py asks for it on hosts only): the patch is then
 * taken AOTC_QCONV_NS_ROWS rows x AOTC_QCONV_LANES positions at a time on the stack, or (AVX-512
 * VNNI) from the input directly or a stack block. */
#define AOTC_QCONV_NS_ROWS 8
#define AOTC_QCONV_NS_BLOCK 16 /* output channels a gathering of the patch rows serves */
void aotc_qconv_patches_i8(const aotc_qconv_params *p, int32_t tile, const int8_t *AOTC_RESTRICT x,
                           const int8_t *AOTC_RESTRICT w, int8_t *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch);
void aotc_qconv_patches_u8(const aotc_qconv_params *p, int32_t tile, const uint8_t *AOTC_RESTRICT x,
                           const int8_t *AOTC_RESTRICT w, uint8_t *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch);
/* Depthwise QLinearConv (group = input channels = output channels). Scratch: k_h padded input
 * rows of AOTC_QCONV_DW_ROW elements (the lanes of the last block read past the row's end). */
#define AOTC_QCONV_DW_ROW(out_w, k_w, stride_w, dil_w)                                                   \
    (((out_w) + AOTC_QCONV_LANES - 1) / AOTC_QCONV_LANES * AOTC_QCONV_LANES * (stride_w) + ((k_w) - 1) * (dil_w))
/* The 4-channel depthwise path's scratch (int8 inputs, 3 x 3 taps, dilation 1, channels a multiple of
 * 4, on cores with the DSP extension): the padded span of 4 interleaved channels (a word a position,
 * at most AOTC_QCONV_DW_SPAN words) and the sums of `run` output positions (whole output rows; the
 * compiler takes up to AOTC_QCONV_DW_RUN, fewer where the step's spare memory is smaller), 4
 * channels each. aot/kernels/quant.py computes the same. */
#define AOTC_QCONV_DW_SPAN 1024
#define AOTC_QCONV_DW_RUN 64
#define AOTC_QCONV_DW4_SPAN(p) (((p)->out_h - 1) * (p)->stride_h + 3) * (((p)->out_w - 1) * (p)->stride_w + 3)
#define AOTC_QCONV_DW4_SCRATCH(p, run) (4 * AOTC_QCONV_DW4_SPAN(p) + 16 * (run))
void aotc_qconv_depthwise_i8(const aotc_qconv_params *p, const int8_t *AOTC_RESTRICT x, const int8_t *AOTC_RESTRICT w,
                             int8_t *AOTC_RESTRICT y, int8_t *AOTC_RESTRICT scratch);
void aotc_qconv_depthwise_u8(const aotc_qconv_params *p, const uint8_t *AOTC_RESTRICT x,
                             const int8_t *AOTC_RESTRICT w, uint8_t *AOTC_RESTRICT y, uint8_t *AOTC_RESTRICT scratch);
/* QGemm / QLinearMatMul with constant B: Y[M, N] = requant(A[M, K] * B + bias). B comes
 * transposed ([N][K], int8); the bias has A's zero point folded in at compile time
 * (bias[n] - a_zero * sum_k (B[k][n] - b_zero[n])), so the inner loop is a plain dot product
 * of A's integers; b_zero is NULL when every column's zero point is 0, else the kernel takes
 * b_zero[n] * sum_k A[m][k] off. */
typedef struct {
    int32_t m, n, k;
    int32_t y_zero;
    float y_lo, y_hi;
    const float *scale;       /* [n], or [1] when per_column is 0 */
    int32_t per_column;
    const int32_t *bias;      /* [n] */
    const int32_t *b_zero;    /* [n] or NULL */
    int32_t il4;              /* bt in blocks of 4 rows, each quad of k the 4 rows' 4 bytes in turn (AOTC_DSP_IL;
                               * k and n multiples of 4) */
} aotc_qgemm_params;

/* scratch: AOTC_QGEMM_SCRATCH(k, n) bytes, word-aligned, where the core has the Arm DSP extension
 * (a row of A widened once to 16-bit pairs for SMLAD, and the row's n sums); NULL elsewhere (the
 * plain loop then runs). */
#define AOTC_QGEMM_SCRATCH(k, n) (8 * ((k) / 4) + 4 * (n))
void aotc_qgemm_i8(const aotc_qgemm_params *p, const int8_t *AOTC_RESTRICT a, const int8_t *AOTC_RESTRICT bt,
                   int8_t *AOTC_RESTRICT y, uint32_t *AOTC_RESTRICT scratch);
void aotc_qgemm_u8(const aotc_qgemm_params *p, const uint8_t *AOTC_RESTRICT a, const int8_t *AOTC_RESTRICT bt,
                   uint8_t *AOTC_RESTRICT y, uint32_t *AOTC_RESTRICT scratch);

/* QLinearAdd / QLinearMul with numpy broadcasting, in onnxruntime's x86 arithmetic:
 *     add: y = saturate(round_half_even(fma(a, a_mult, fma(b, b_mult, bias))))
 *          with a_mult = a_scale / y_scale, b_mult = b_scale / y_scale and the zero points folded
 *          into bias = y_zero - fma(a_mult, a_zero, b_mult b_zero) (MlasQLinearAdd's AVX2 kernel);
 *          where a is the same across the innermost run, onnxruntime swaps the operands:
 *          y = ...(fma(b, b_mult, fma(a, a_mult, bias))) with bias = y_zero - fma(b_mult, b_zero, a_mult a_zero);
 *     mul: y = requant((a - a_zero) (b - b_zero), a_mult) with a_mult = a_scale * b_scale / y_scale.
 * [y_lo, y_hi] clamps y - y_zero (a fused activation). */
typedef struct {
    aotc_broadcast shape;
    float a_mult, b_mult, bias;
    int32_t a_zero, b_zero, y_zero;
    float y_lo, y_hi;
} aotc_qbinary_params;

void aotc_qadd_i8(const aotc_qbinary_params *p, const int8_t *a, const int8_t *b, int8_t *y);
void aotc_qadd_u8(const aotc_qbinary_params *p, const uint8_t *a, const uint8_t *b, uint8_t *y);
void aotc_qmul_i8(const aotc_qbinary_params *p, const int8_t *a, const int8_t *b, int8_t *y);
void aotc_qmul_u8(const aotc_qbinary_params *p, const uint8_t *a, const uint8_t *b, uint8_t *y);

/* QLinearConv on patches whose only reader is a residual QLinearAdd (aot/passes/fuse_residual.py):
 * each output requantised to the conv's 8 bits exactly as aotc_qconv_patches_* does, then added to
 * the residual element exactly as aotc_qadd_* does, and the sum stored. y may be res itself: each
 * residual element is read before the sum is written over it, so the ADD's output needs no buffer
 * of its own. tmp: NULL where the patch paths fuse the ADD into their stores (the M-profile cores,
 * whose plan asks for no tmp); elsewhere out_c x out_h x out_w elements after the conv's scratch
 * that the conv fills before the ADD runs (the host's vector paths store in ways that do not fuse). */
typedef struct {
    aotc_qbinary_params add;  /* y's shape for both inputs: no broadcasting */
    int32_t conv_a;           /* 1: the conv's value is the ADD's a and res its b; 0: the other way round */
} aotc_qresidual_params;
void aotc_qconv_patches_add_i8(const aotc_qconv_params *p, const aotc_qresidual_params *r, int32_t tile,
                               const int8_t *x, const int8_t *w, const int8_t *res, int8_t *y, uint8_t *scratch,
                               int8_t *tmp);
void aotc_qconv_patches_add_u8(const aotc_qconv_params *p, const aotc_qresidual_params *r, int32_t tile,
                               const uint8_t *x, const int8_t *w, const uint8_t *res, uint8_t *y, uint8_t *scratch,
                               uint8_t *tmp);

/* QLinearGlobalAveragePool, NCHW: each plane's int32 sum less x_zero * size, requantised with
 * scale x_scale / (y_scale * size). */
void aotc_qglobal_avgpool_i8(int32_t planes, int32_t size, float scale, int32_t x_zero, int32_t y_zero,
                             const int8_t *AOTC_RESTRICT x, int8_t *AOTC_RESTRICT y);
void aotc_qglobal_avgpool_u8(int32_t planes, int32_t size, float scale, int32_t x_zero, int32_t y_zero,
                             const uint8_t *AOTC_RESTRICT x, uint8_t *AOTC_RESTRICT y);

/* QLinearAveragePool, NCHW, as onnxruntime computes it when the window is not the whole plane: float
 * sums of the inputs dequantized by lut (256 entries, indexed by the input's byte), divided by the
 * count, then round_half_even(mean / y_scale + y_zero) saturated. */
void aotc_qavgpool_i8(const aotc_pool_params *p, const float *lut, float y_scale, int32_t y_zero,
                      const int8_t *AOTC_RESTRICT x, int8_t *AOTC_RESTRICT y);
void aotc_qavgpool_u8(const aotc_pool_params *p, const float *lut, float y_scale, int32_t y_zero,
                      const uint8_t *AOTC_RESTRICT x, uint8_t *AOTC_RESTRICT y);

/* QLinearSoftmax over rows of n (onnxruntime's integer algorithm; table and y_scale from
 * aot/qmath.py softmax_table, softmax_output_scale). */
void aotc_qsoftmax_i8(int32_t rows, int32_t n, const uint32_t *table, uint32_t y_scale, int32_t y_zero,
                      const int8_t *AOTC_RESTRICT x, int8_t *AOTC_RESTRICT y);
void aotc_qsoftmax_u8(int32_t rows, int32_t n, const uint32_t *table, uint32_t y_scale, int32_t y_zero,
                      const uint8_t *AOTC_RESTRICT x, uint8_t *AOTC_RESTRICT y);

/* y[i] = table[x[i] - min]: any function of one 8-bit input (Sigmoid, Tanh, ...), tabulated
 * at compile time. */
void aotc_qlookup_i8(size_t n, const int8_t *x, const int8_t *table, int8_t *y);
void aotc_qlookup_u8(size_t n, const uint8_t *x, const uint8_t *table, uint8_t *y);

/* QLinearConcat, one input: its integers requantised to the output's parameters through a table
 * (onnxruntime's QLinearConcat does the same: Q(DQ(x)) per 8-bit value) into a strided block of
 * the output (`outer` rows of `inner` elements, `out_stride` apart). */
void aotc_qrequant_copy_i8(int32_t outer, int32_t inner, int32_t out_stride, const int8_t *table,
                           const int8_t *AOTC_RESTRICT x, int8_t *AOTC_RESTRICT y);
void aotc_qrequant_copy_u8(int32_t outer, int32_t inner, int32_t out_stride, const uint8_t *table,
                           const uint8_t *AOTC_RESTRICT x, uint8_t *AOTC_RESTRICT y);

/* Dynamic quantization (onnxruntime's quantize_dynamic writes these three). */
/* DynamicQuantizeLinear: uint8 y with y_scale = (max(0, max x) - min(0, min x)) / 255 (1 if that
 * range is empty) and y_zero = round_half_even(clamp(-min / y_scale, 0, 255)), as onnxruntime. */
void aotc_dynamic_quantize_u8(int32_t n, const float *AOTC_RESTRICT x, uint8_t *AOTC_RESTRICT y,
                              float *AOTC_RESTRICT y_scale, uint8_t *AOTC_RESTRICT y_zero);
/* MatMulInteger with constant B: int32 Y[m, n] = sum_k (A - a_zero)(B - b_zero[n]), B transposed
 * ([n][k], int8: uint8 B less 128 with its zero points), b_sums[n] = sum_k (B[k][n] - b_zero[n]);
 * a_zero is read at run time (NULL: 0), as DynamicQuantizeLinear computes it. */
void aotc_matmul_integer_i8(int32_t m, int32_t n, int32_t k, const int8_t *AOTC_RESTRICT a,
                            const int8_t *AOTC_RESTRICT a_zero, const int8_t *AOTC_RESTRICT bt,
                            const int32_t *AOTC_RESTRICT b_zero, const int32_t *AOTC_RESTRICT b_sums,
                            int32_t *AOTC_RESTRICT y);
void aotc_matmul_integer_u8(int32_t m, int32_t n, int32_t k, const uint8_t *AOTC_RESTRICT a,
                            const uint8_t *AOTC_RESTRICT a_zero, const int8_t *AOTC_RESTRICT bt,
                            const int32_t *AOTC_RESTRICT b_zero, const int32_t *AOTC_RESTRICT b_sums,
                            int32_t *AOTC_RESTRICT y);
/* ConvInteger: int32 sums of (x - x_zero)(w - w_zero[c]), x_zero read at run time (NULL: p->x_zero);
 * the geometry and w_zero from p (its scale, bias and output fields unused). A plain loop. */
void aotc_conv_integer_i8(const aotc_qconv_params *p, const int8_t *AOTC_RESTRICT x,
                          const int8_t *AOTC_RESTRICT x_zero, const int8_t *AOTC_RESTRICT w, int32_t *AOTC_RESTRICT y);
void aotc_conv_integer_u8(const aotc_qconv_params *p, const uint8_t *AOTC_RESTRICT x,
                          const uint8_t *AOTC_RESTRICT x_zero, const int8_t *AOTC_RESTRICT w, int32_t *AOTC_RESTRICT y);

#endif /* AOTC_QUANT_H */
