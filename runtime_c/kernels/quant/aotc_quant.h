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
                               * them; aot/kernels/quant.py packs them so on hosts, for shapes that path takes;
                               * 2: so, each quad 4 input channels at one tap, for qconv_rows (aotc_qx86_rows_fit) */
    int32_t work;             /* bytes of the plan's scratch past the patch block (aotc_qconv_patch_bytes) or the
                               * padded rows (aotc_qconv_dw_row_bytes) for a path's own buffers: the widened
                               * weights of the DSP extension's conv path, the AVX-512 VNNI paths' re-ordered
                               * weights and index vectors (aotc_qconv_*_work_bytes below). 0: none, and the
                               * paths needing more than given are not taken */
    int32_t lanes;            /* --threads (AVX-512 VNNI hosts): the threads whose scratch the plan gave, each a lane of
                               * aotc_qconv_lane_bytes (the patch block or rows, then the work), that the conv splits
                               * its output positions (or channels) over; 0 or 1: one thread, one lane */
} aotc_qconv_params;

/* The fewest multiply-adds (taps for a depthwise conv) a QLinearConv splits over a --threads pool: below, a
 * region's wake and the lines that pass between the cores cost about what the second thread saves (as
 * TFL_PK_POOL_MIN_MACS); aot/kernels/quant.py gives such convs a lane of scratch a thread (p->lanes). */
#ifndef AOTC_QCONV_POOL_MIN_MACS
#define AOTC_QCONV_POOL_MIN_MACS 1048576 /* 2^20 */
#endif
/* ... and the fewest taps (output elements x kernel taps) a depthwise conv splits over: a tap costs about a
 * quarter of a conv's multiply-add (16 lanes of 4 taps a vpdpbusd, and a vpermt2b, against 64 products); at
 * 2^20 an int8 MobileNetV2's depthwise convs of 14 x 14 and 7 x 7 (12-29 us each, a quarter of its run at two
 * threads) had stayed on one thread */
#ifndef AOTC_QCONV_POOL_MIN_TAPS
#define AOTC_QCONV_POOL_MIN_TAPS 262144 /* 2^18 */
#endif
/* the output positions of an item of a split conv's work (quant_config.h aotc_qx86_run: twice this on the paths
 * without a patch block) */
#define AOTC_QCONV_POOL_RUN 64

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
 * and the kernel subtracts w_zero[c] * sum(patch) when w_zero_any. tile 0: no patch block (the plan had
 * no memory to spare at this step; aot/kernels/quant.py asks for it on hosts only): the patch is then
 * taken AOTC_QCONV_NS_ROWS rows x AOTC_QCONV_LANES positions at a time on the stack, or (AVX-512
 * VNNI) from the input directly or a block of 16 positions in the work past it (p->work, below). */
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

/* ---- The scratch of QLinearConv's paths: one formula each ---------------------------------------------
 * A conv's scratch is the patch block of `tile` positions (aotc_qconv_patches_*) or k_h padded input rows
 * (aotc_qconv_depthwise_*), then p->work bytes for the buffers of the path the target takes (the
 * compiler asks for them, aot/kernels/quant.py; tests/kernels_c/test_scratch_facts.py holds its formulas equal to
 * these functions): on cores with the DSP extension the conv path's widened weights (AOTC_DSP_KCHUNK quads
 * of two channels at most), on hosts with AVX-512 VNNI and VBMI the re-ordered weights and kept index
 * vectors of quant_avx512vnni.h's paths, which had been 64-96 KiB stack buffers. Each function says how
 * many bytes of p->work the path takes (0: it does not take p with that much): where the step has memory
 * to spare the compiler gives a path all it can use, else what fits (the dense path then keeps fewer
 * blocks of index vectors) or none (the path is not taken). Their limits: */
#define AOTC_DSP_KCHUNK 128       /* the DSP path: quads of weight rows widened at a time (16 bytes a quad) */
#define AOTC_QX86_WBUF 65536      /* qconv_windows: bytes of re-ordered weights at most; a no-scratch patch block */
#define AOTC_QX86_KG 16           /* kernel rows x groups of 4 taps at most (qconv_windows, depthwise_flat) */
#define AOTC_QX86_CACHE 8         /* blocks' windows kept by their first column (qconv_windows, depthwise_flat) */
#define AOTC_QX86_PAT 40          /* qconv_dense: index patterns at most */
#define AOTC_QX86_KH 16           /* qconv_dense: kernel rows at most */
#define AOTC_QX86_DBUF 98304      /* qconv_dense: bytes for a pass's re-ordered weights and the kept blocks at most */
#define AOTC_QX86_DKEEP 8         /* qconv_dense: blocks kept at least */
#define AOTC_QX86_DHEAD 192       /* qconv_dense: bytes of a kept block before its index vectors */
#define AOTC_QDW_FLAT_WORDS 8192  /* depthwise_flat: channels x kernel rows x groups of 4 taps at most */
/* the AVX-512 paths' work starts at a 64-byte boundary, up to 63 bytes past the patch block's or rows' end:
 * counted in its bytes */
#define AOTC_QX86_ALIGN 64

/* The windows of the last AOTC_QX86_CACHE blocks of qconv_windows and depthwise_flat (col -1: none); offs is
 * no longer written (x86_windows makes a block's offsets in registers), kept so that the work's bytes, and so
 * the plans, stay as they were. */
typedef struct {
    int32_t col[AOTC_QX86_CACHE], lanes[AOTC_QX86_CACHE], base[AOTC_QX86_CACHE][AOTC_QX86_KG], next;
    uint8_t idx[AOTC_QX86_CACHE][AOTC_QX86_KG][64];
    int32_t offs[AOTC_QX86_KG][64];
} aotc_qx86_wcache;
#define AOTC_QX86_WCACHE_BYTES (4 * (2 * AOTC_QX86_CACHE + AOTC_QX86_CACHE * AOTC_QX86_KG + 1) + \
                                AOTC_QX86_CACHE * AOTC_QX86_KG * 64 + 4 * AOTC_QX86_KG * 64)
typedef char aotc_qx86_wcache_is_its_bytes[sizeof(aotc_qx86_wcache) == AOTC_QX86_WCACHE_BYTES ? 1 : -1];

static inline int32_t aotc_qconv_kp(const aotc_qconv_params *p) { /* a patch's bytes: whole quads */
    return (p->in_c / p->group * p->k_h * p->k_w + 3) / 4 * 4;
}

/* The patch block of `tile` output positions (0: none): whole lanes of kp bytes */
static inline int64_t aotc_qconv_patch_bytes(const aotc_qconv_params *p, int32_t tile) {
    return (int64_t)(tile + AOTC_QCONV_LANES - 1) / AOTC_QCONV_LANES * AOTC_QCONV_LANES * aotc_qconv_kp(p);
}

/* The AVX2 conv path (quant_impl.h qconv_patches_avx2, generic hosts built with AVX2): every output channel's
 * weights widened to 16-bit pairs once a call, 4 channels of a group a block of 2 kq words each (aot/kernels/quant.py
 * gives p->work this where the step spares it and the plane takes more than one block); 0 where p->work is smaller
 * (the path then widens a block's weights again for each block of positions) */
static inline int64_t aotc_qconv_avx2_work_bytes(const aotc_qconv_params *p) {
    const int64_t need = (int64_t)p->group * ((p->out_c / p->group + 3) / 4) * (aotc_qconv_kp(p) / 4) * 32;
    return p->work < need ? 0 : need;
}

/* The depthwise kernels' k_h padded rows */
static inline int64_t aotc_qconv_dw_row_bytes(const aotc_qconv_params *p) {
    return (int64_t)p->k_h * AOTC_QCONV_DW_ROW(p->out_w, p->k_w, p->stride_w, p->dil_w);
}

/* The DSP extension's conv path (qconv_patches_dsp): a channel pair's weights widened, up to
 * AOTC_DSP_KCHUNK quads (the compiler always gives it) */
static inline int64_t aotc_qconv_dsp_work_bytes(const aotc_qconv_params *p) {
    const int32_t kq = aotc_qconv_kp(p) / 4;
    const int64_t need = 16 * (int64_t)(kq < AOTC_DSP_KCHUNK ? kq : AOTC_DSP_KCHUNK);
    return p->work < need ? 0 : need;
}

/* qconv_dense (AVX-512 VBMI): a pass's weights re-ordered (none when packed), then the kept blocks of index
 * vectors: as many as AOTC_QX86_DBUF bytes hold but no more than the plane has positions (then no block is
 * made twice), *count; 0 where the path does not take p's shape. The pass and its weights as the kernel
 * computes them. */
static inline int32_t aotc_qx86_dense_plan(const aotc_qconv_params *p, int32_t *stride, int32_t *pass,
                                           int32_t *nmax, int32_t *wbytes, int32_t *count) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, k_h = p->k_h, k_w = p->k_w, taps = k_h * k_w;
    const int32_t kq = (cg * taps + 3) / 4, period = taps / (taps % 4 == 0 ? 4 : taps % 2 == 0 ? 2 : 1);
    const int32_t npat = period < kq ? period : kq;
    const int32_t room = AOTC_QX86_DBUF - AOTC_QX86_DKEEP * (AOTC_QX86_DHEAD + npat * 128);
    if (k_w < 3 || taps > 64 || k_h > AOTC_QX86_KH || npat > AOTC_QX86_PAT || (k_w - 1) * p->dil_w > 62 ||
        kq * 32 > room || (p->w_packed && mg % 16 != 0)) {
        return 0;
    }
    *stride = AOTC_QX86_DHEAD + npat * 128;
    *nmax = p->w_packed || kq * 64 <= room ? 16 : 8;
    *pass = p->w_packed ? (room / (kq * 64) > 1 ? room / (kq * 64) : 1) * 16 : room / (kq * 4 * *nmax) * *nmax;
    *wbytes = p->w_packed ? 0 : (*pass < mg ? *pass : (mg + *nmax - 1) / *nmax * *nmax) * kq * 4;
    *count = (AOTC_QX86_DBUF - (*wbytes + 63) / 64 * 64) / *stride;
    if (*count > p->out_h * p->out_w) *count = p->out_h * p->out_w;
    return npat;
}

/* The blocks qconv_dense keeps in p->work (at most *count, at least 1; 0: the path is not taken) */
static inline int32_t aotc_qx86_dense_kept(const aotc_qconv_params *p, int32_t wbytes, int32_t stride, int32_t count) {
    const int64_t room = (int64_t)p->work - AOTC_QX86_ALIGN - (wbytes + 63) / 64 * 64;
    return room < stride ? 0 : room / stride < count ? (int32_t)(room / stride) : count;
}

static inline int64_t aotc_qconv_dense_work_bytes(const aotc_qconv_params *p) {
    int32_t stride, pass, nmax, wbytes, count, kept;
    if (aotc_qx86_dense_plan(p, &stride, &pass, &nmax, &wbytes, &count) == 0) return 0;
    kept = aotc_qx86_dense_kept(p, wbytes, stride, count);
    return kept == 0 ? 0 : AOTC_QX86_ALIGN + (int64_t)(wbytes + 63) / 64 * 64 + (int64_t)kept * stride;
}

/* qconv_windows (AVX-512 VBMI): the window cache, the blocks' offsets and patch sums, then as many output
 * channels' re-ordered weights as AOTC_QX86_WBUF holds (in eights) or the group has; 0 where the path does
 * not take p with a patch block of `tile` positions. */
static inline int32_t aotc_qx86_windows_chunk(const aotc_qconv_params *p, int32_t tile, int32_t *kp2) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, kg = p->k_h * ((p->k_w + 3) / 4);
    const int32_t kq = cg * kg, slots = (int32_t)(aotc_qconv_patch_bytes(p, tile) / (64 * (int64_t)kq));
    const int32_t chunk = AOTC_QX86_WBUF / (kq * 4) / 8 * 8 < mg ? AOTC_QX86_WBUF / (kq * 4) / 8 * 8 : mg;
    *kp2 = kq * 4;
    if (cg < 2 || kg > AOTC_QX86_KG || slots > 16 || (slots < 1 && p->w_zero_any) || chunk < 8 ||
        3 * p->dil_w >= 64 || p->k_h * p->k_w < 2 || p->w_packed) {
        return 0;
    }
    return chunk;
}

static inline int64_t aotc_qconv_windows_work_bytes(const aotc_qconv_params *p, int32_t tile) {
    int32_t kp2;
    const int32_t chunk = aotc_qx86_windows_chunk(p, tile, &kp2);
    const int64_t need = AOTC_QX86_ALIGN + AOTC_QX86_WCACHE_BYTES + 4 * (16 * AOTC_QX86_KG + 16 * 16) + (int64_t)chunk * kp2;
    return chunk == 0 || p->work < need ? 0 : need;
}

/* The VNNI path without VBMI given no patch block (tile 0): a block of 16 positions' patch, up to
 * AOTC_QX86_WBUF bytes */
static inline int64_t aotc_qconv_block_work_bytes(const aotc_qconv_params *p, int32_t tile) {
    const int64_t need = AOTC_QX86_ALIGN + 16 * (int64_t)aotc_qconv_kp(p);
    return tile != 0 || need - AOTC_QX86_ALIGN > AOTC_QX86_WBUF || p->work < need ? 0 : need;
}

/* aotc_qconv_patches_* on a host with AVX-512 VNNI: the bytes of p->work the path the kernel takes uses, in
 * the kernel's order: the dense path's, else the windows path's, else (tile 0) the block's */
static inline int64_t aotc_qconv_patches_x86_work_bytes(const aotc_qconv_params *p, int32_t tile) {
    const int64_t dense = aotc_qconv_dense_work_bytes(p), windows = dense ? 0 : aotc_qconv_windows_work_bytes(p, tile);
    return dense ? dense : windows ? windows : aotc_qconv_block_work_bytes(p, tile);
}

/* depthwise_flat (AVX-512 VBMI): the window cache, then each channel's weight words and the start of its
 * sums; 0 where the path does not take p (or p->work is smaller) */
static inline int64_t aotc_qconv_depthwise_x86_work_bytes(const aotc_qconv_params *p) {
    const int32_t kg = p->k_h * ((p->k_w + 3) / 4);
    const int64_t need = AOTC_QX86_ALIGN + AOTC_QX86_WCACHE_BYTES + 4 * (int64_t)p->out_c * (kg + 1);
    if (p->w_zero_any || kg > AOTC_QX86_KG || p->out_c * kg > AOTC_QDW_FLAT_WORDS || 3 * p->dil_w >= 64) return 0;
    return p->work < need ? 0 : need;
}

/* The bytes a conv's scratch must have: the patch block, or the rows (or, where p->dw4, the DSP depthwise
 * path's AOTC_QCONV_DW4_SCRATCH if larger), then p->work */
static inline int64_t aotc_qconv_patches_scratch_bytes(const aotc_qconv_params *p, int32_t tile) {
    return aotc_qconv_patch_bytes(p, tile) + p->work;
}

/* qconv_rows (AVX-512 VNNI, quant_avx512vnni.h): w_packed 2, the weights' quads 4 input channels at one tap
 * ((channel quad, kernel row, column) order), which aot/kernels/quant.py gives only the shapes the path takes with
 * the scratch it needs: stride 1 and no dilation, one group, whole quads of input channels, weights without zero
 * points, output rows of at least 16 positions, kernels of 2 to 16 rows and columns. Its buffer (the scratch: the
 * patch block and p->work as one) holds, per quad of input channels, the R + k_h input rows a range of R output
 * rows reads, each of aotc_qx86_rows_wp words (pad_left words of the zero point, the row's positions with the 4
 * channels' bytes in each word, the zero point to the row's end), then AOTC_QX86_RSLACK bytes that the last
 * block's lanes past the range read (never stored). */
#define AOTC_QX86_RSLACK 512

/* qconv_rows: the words of a buffer row (a row's positions and, before them, its left padding, whose words are
 * the right padding of the row above: a kernel window past a row's end reads the next row's first words) */
static inline int32_t aotc_qx86_rows_wp(const aotc_qconv_params *p) {
    const int32_t pr = p->out_w - p->in_w - p->pad_left + p->k_w - 1; /* the right padding (stride 1) */
    return p->pad_left + p->in_w + (pr > p->pad_left ? pr - p->pad_left : 0);
}

/* w_packed 2: patch row r of qconv_rows's order (byte r % 4 of quad r / 4: input channel 4 (q / taps) + r % 4 at tap
 * q % taps) as the row of the weights' own order ((channel, kernel row, column)), so that every patch path sums such
 * weights (the patch rows gathered in their order: aotc_qconv_row_cols) where qconv_rows does not run */
static inline int32_t aotc_qconv_rows_tap(const aotc_qconv_params *p, int32_t r) {
    const int32_t taps = p->k_h * p->k_w, q = r / 4;
    return (q / taps * 4 + r % 4) * taps + q % taps;
}

/* qconv_rows: the output rows a range takes in `avail` bytes of scratch (at most out_h); 0 where the path does not
 * take p's shape (w_packed not counted) or the bytes do not hold one row */
static inline int32_t aotc_qx86_rows_fit(const aotc_qconv_params *p, int64_t avail) {
    const int32_t pr = p->out_w - p->in_w - p->pad_left + p->k_w - 1, pb = p->out_h - p->in_h - p->pad_top + p->k_h - 1;
    int64_t row, r;
    if (p->group != 1 || p->in_c % 4 != 0 || p->out_c % 16 != 0 || p->stride_h != 1 || p->stride_w != 1 ||
        p->dil_h != 1 || p->dil_w != 1 || p->w_zero_any || p->out_w < 16 || p->k_h < 2 || p->k_w < 2 ||
        p->k_h > 16 || p->k_w > 16 || p->pad_top < 0 || p->pad_left < 0 || pr < 0 || pb < 0) {
        return 0;
    }
    row = (int64_t)p->in_c * aotc_qx86_rows_wp(p); /* a buffer row of every quad of channels: 4 bytes a position */
    r = (avail - AOTC_QX86_ALIGN - AOTC_QX86_RSLACK) / row - p->k_h;
    return r < 1 ? 0 : r > p->out_h ? p->out_h : (int32_t)r;
}

static inline int64_t aotc_qconv_depthwise_front_bytes(const aotc_qconv_params *p) {
    const int64_t rows = aotc_qconv_dw_row_bytes(p), dw4 = p->dw4 ? AOTC_QCONV_DW4_SCRATCH(p, p->dw4) : 0;
    return rows > dw4 ? rows : dw4;
}

static inline int64_t aotc_qconv_depthwise_scratch_bytes(const aotc_qconv_params *p) {
    return aotc_qconv_depthwise_front_bytes(p) + p->work;
}

/* One thread's lane of a split conv's scratch (p->lanes > 1): `front` (the patch block or rows) and p->work,
 * rounded up to 64 bytes, so that every lane's work starts as the first's does and no two threads share a line */
static inline int64_t aotc_qconv_lane_bytes(int64_t front, const aotc_qconv_params *p) {
    return (front + p->work + 63) / 64 * 64;
}

/* The work block of a conv's scratch, p->work bytes after `front` (the patch block or the rows), its
 * start rounded up to `align` bytes */
static inline uint8_t *aotc_qconv_work(const aotc_qconv_params *p, void *scratch, int64_t front, int64_t need,
                                       int32_t align) {
    const uintptr_t at = (uintptr_t)((uint8_t *)scratch + front);
    if (scratch == NULL || need == 0 || p->work < need) return NULL;
    return (uint8_t *)((at + (uintptr_t)(align - 1)) & ~(uintptr_t)(align - 1));
}

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

/* QLinearMatMul whose B, scales or zero points are read at run time (per-tensor scales and zero points):
 * y = saturate(rint(C * (a_scale * b_scale / y_scale)) + y_zero), C = (a - a_zero) @ (b - b_zero) summed
 * exactly in int32, the multiplier in float32 arithmetic (rounded to float16 after each step when the
 * model's scales are float16) and the product with C and the zero point's addition in double, as ONNX's
 * reference computes them; ties to even. a is [batch][m][k], b [batch or 1][k][n], y [batch][m][n];
 * each of a, b, y int8 or uint8, its zero point (NULL: 0) of its type. */
typedef struct {
    int32_t batch;       /* matrices of a and y */
    int32_t b_batched;   /* 1: b holds one matrix per batch; 0: one matrix for all */
    int32_t m, k, n;     /* y is m x n; the sums run over k */
    int32_t a_signed;    /* 1: a (and its zero point) int8; 0: uint8 */
    int32_t b_signed;
    int32_t y_signed;
    int32_t half_scales; /* 1: the scales were float16 */
} aotc_qlinear_matmul_values_params;

void aotc_qlinear_matmul_values(const aotc_qlinear_matmul_values_params *p, const void *a, const float *a_scale,
                                const void *a_zero, const void *b, const float *b_scale, const void *b_zero,
                                const float *y_scale, const void *y_zero, void *y);

#endif /* AOTC_QUANT_H */
