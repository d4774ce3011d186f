/* ONNX Gemm and MatMul, float32, and the GEMM core shared with the conv kernels.
 *
 * The core computes C = alpha * A * B (+ beta * C_in) in blocks: AOTC_GEMM_KC rows of B
 * at a time (a B panel block stays in L1), up to 192 KiB of rows of A at a time (they stay
 * in L2), and a register tile of MR x NR outputs in the innermost kernel. A block's rows
 * go in tiles of MR and of 4 rows that add up to it where they can (16 = 6 + 6 + 4, 8 =
 * 4 + 4), and a panel's last NR / 2 columns or fewer in tiles half as wide. The kernels
 * are plain C written so that gcc -O3 keeps the tile in vector registers (checked for
 * x86-64 SSE2 and AVX2+FMA, and aarch64), and gcc at any level in scalar registers where
 * there are no vector ones (a Cortex-M4: microkernel.h's MK_UNROLL); no intrinsics. A full
 * tile starts from the bias, C_in or C and is finished in the kernel while its sums are
 * still in registers: a fused residual and a fused activation (aotc_sgemm_params'
 * epilogue), then one store. No allocation, no globals. Built with AVX-512F (and without
 * AOTC_NO_INTRINSICS) the product goes by gemm_avx512.h's tiles of 12 x 32 instead, in
 * intrinsics, on the same B layout (issue 64: ViT-tiny's GEMMs 1.3 to 1.5 x as fast). */
#include "aotc_gemm.h"
#include "aotc_threads.h"
#include "microkernel.h"

#include <math.h>
#include <string.h>

#define MR AOTC_GEMM_MR
#define NR AOTC_GEMM_NR
#define KC AOTC_GEMM_KC
#define PANEL AOTC_GEMM_PANEL
#define A_BLOCK_FLOATS (48 * 1024) /* rows of A per block: as many as fit 192 KiB (in L2) */

#if AOTC_GEMM_PANEL % AOTC_GEMM_NR != 0 || AOTC_GEMM_NR % 2 != 0
#error "AOTC_GEMM_NR must be even and divide AOTC_GEMM_PANEL"
#endif
#if AOTC_GEMM_MR != 4 && AOTC_GEMM_MR != 6
#error "AOTC_GEMM_MR must be 4 or 6"
#endif

/* the rows of a full-height tile */
#if MR == 6
#define FOR_ROWS MK_ROWS6
#else
#define FOR_ROWS MK_ROWS4
#endif
#define NH (NR / 2) /* the narrow tiles' width: a panel's last columns when they fit */

static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

/* How a k-block's accumulators start: the finished tile is then C itself when alpha is 1 */
enum { START_ZERO, START_C, START_BIAS, START_CIN };

/* Where the finished tiles of one k-block go, by the rules of aotc_sgemm_params: C = alpha *
 * tile (+ beta * C_in), or C += alpha * tile (a later k-block); then (first k-block) + the
 * residual, and (last k-block) the activation. The pointers are C's, C_in's and the
 * residual's first elements; a tile at (i0, j0) offsets them. */
typedef struct {
    float *c;           /* C */
    ptrdiff_t ldc;      /* C's row step */
    float alpha, beta;  /* as in aotc_sgemm_params */
    int accumulate;     /* a later k-block: add to C */
    int start;          /* START_*: what full tiles start from (START_ZERO: alpha != 1 or nothing) */
    const float *ci;    /* C_in (first k-block only), or NULL */
    ptrdiff_t ci_rs;    /* C_in's row step */
    int32_t ci_cs;      /* 1: C_in has a row of values; 0: one value per row (a bias) */
    const float *res;   /* the residual (first k-block only), or NULL */
    ptrdiff_t res_rs;
    int32_t act;        /* AOTC_ACT_* on the last k-block, else AOTC_ACT_NONE */
    float lo, hi, leak;
} tile_dst;

#if MK_HELIUM
#include "mve_select.h"
#endif

void aotc_activate_f32(float *x, ptrdiff_t n, int32_t act, float lo, float hi, float alpha) {
    ptrdiff_t j = 0;
#if MK_HELIUM
    /* 4 at a time, each bound two compares and a select (mve_select.h: the same bits as below, NaN
     * stays NaN), the last 1 to 3 below; gcc does not vectorise the compares for Helium (issue
     * 52: 11 instructions an element) */
    if (act == AOTC_ACT_CLAMP) {
        const float32x4_t l = vdupq_n_f32(lo), h = vdupq_n_f32(hi);
        const int32x4_t kl = aotc_mve_order_key(l), kh = aotc_mve_order_key(h);
        for (; j + 4 <= n; j += 4) vst1q_f32(x + j, aotc_mve_clamp(vld1q_f32(x + j), l, kl, h, kh));
    }
#endif
    if (act == AOTC_ACT_CLAMP) {
        for (; j < n; ++j) {
            const float v = x[j] < lo ? lo : x[j];
            x[j] = v > hi ? hi : v;
        }
    } else if (act == AOTC_ACT_LEAKY) {
        for (j = 0; j < n; ++j) x[j] = x[j] < 0.0f ? alpha * x[j] : x[j];
    }
}

/* Partial tiles (full ones are stored by the kernels themselves): mr rows of n values of
 * tile t (rows NR apart) into C at (i0, j0) by the rules of d: bias or C_in, the residual,
 * the activation, a pass each over a row in L1. n stays a run-time value (MK_NOCLONE): with a
 * constant 16, gcc unrolls the rows and packs them into shuffles, several times slower
 * than a loop. */
MK_NOCLONE static void store_rows(const tile_dst *d, int32_t i0, int32_t j0, const float *t, int32_t mr, int32_t n) {
    const float alpha = d->alpha, beta = d->beta;
    float *cp = d->c + (ptrdiff_t)i0 * d->ldc + j0;
    const float *ci = d->ci != NULL ? d->ci + (ptrdiff_t)i0 * d->ci_rs + (ptrdiff_t)j0 * d->ci_cs : NULL;
    const float *res = d->res != NULL ? d->res + (ptrdiff_t)i0 * d->res_rs + j0 : NULL;
    int32_t i, j;
    for (i = 0; i < mr; ++i, cp += d->ldc, t += NR) { /* cp not restrict: C_in may be C */
        if (d->accumulate) {
            for (j = 0; j < n; ++j) cp[j] += alpha * t[j];
        } else if (ci == NULL) {
            for (j = 0; j < n; ++j) cp[j] = alpha * t[j];
        } else if (d->ci_cs == 1) {
            for (j = 0; j < n; ++j) cp[j] = alpha * t[j] + beta * ci[j];
            ci += d->ci_rs;
        } else {
            const float bias = beta * ci[0]; /* a per-row bias */
            for (j = 0; j < n; ++j) cp[j] = alpha * t[j] + bias;
            ci += d->ci_rs;
        }
        if (res != NULL) {
            for (j = 0; j < n; ++j) cp[j] += res[j];
            res += d->res_rs;
        }
        if (d->act == AOTC_ACT_CLAMP) {
            const float lo = d->lo, hi = d->hi;
            for (j = 0; j < n; ++j) {
                const float v = cp[j] < lo ? lo : cp[j];
                cp[j] = v > hi ? hi : v;
            }
        } else if (d->act == AOTC_ACT_LEAKY) {
            const float leak = d->leak;
            for (j = 0; j < n; ++j) cp[j] = cp[j] < 0.0f ? leak * cp[j] : cp[j];
        }
    }
}

/* The register-tile kernels: R rows of A times W columns of B, R = MR or 4, W = NR or NH.
 * Sums over p < kc of A(i, p) * B(p, j), A(i, p) = a[i * a_rs + p * a_cs], B(p, j) =
 * b[p * b_rs + j] (W readable columns). With d NULL, the sums go to t[i * NR + j]. Else the
 * tile is finished while it is in registers, and stored into C at (i0, j0) by the rules
 * of d: the accumulators start from C_in, the bias or C (d->start) so that the sums need
 * no pass after the loop when alpha is 1; then the residual and the activation, a vector
 * op per row each; one store. The rows' accumulators, their multiply-adds and stores are
 * microkernel.h's, as in the implicit GEMM of conv_implicit.c. */
#define T_FROM_C(i, W) MK_UNROLL for (j = 0; j < W; ++j) c##i[j] = c[(i) * ldc + j];
#define T_FROM_ONE(i, W) { const float v_ = sc * ci[(i) * rs]; MK_UNROLL for (j = 0; j < W; ++j) c##i[j] = v_; }
#define T_FROM_CIN(i, W) MK_UNROLL for (j = 0; j < W; ++j) c##i[j] = beta * ci[(i) * rs + j];
#define T_ROW(i, W) MK_AXPY(i, W, a[(i) * a_rs], b)
#define T_TO_T(i, W) MK_STORE(i, W, t, NR)
#define T_SCALE(i, W) MK_UNROLL for (j = 0; j < W; ++j) c##i[j] *= alpha;
#define T_ADD_C(i, W) MK_UNROLL for (j = 0; j < W; ++j) c##i[j] += c[(i) * ldc + j];
#define T_ADD_CIN(i, W) MK_UNROLL for (j = 0; j < W; ++j) c##i[j] += beta * ci[(i) * rs + j];
#define T_ADD_BIAS(i, W) { const float v_ = beta * ci[(i) * rs]; MK_UNROLL for (j = 0; j < W; ++j) c##i[j] += v_; }
#define T_ADD_RES(i, W) MK_UNROLL for (j = 0; j < W; ++j) c##i[j] += r[(i) * rs + j];
#define T_CLAMP(i, W) MK_UNROLL for (j = 0; j < W; ++j) { const float v = c##i[j] < lo ? lo : c##i[j]; c##i[j] = v > hi ? hi : v; }
#define T_LEAK(i, W) MK_UNROLL for (j = 0; j < W; ++j) c##i[j] = c##i[j] < 0.0f ? leak * c##i[j] : c##i[j];
#define T_PUT(i, W) MK_STORE(i, W, c, ldc)

/* The k loop steps a pointer by a run-time stride until it reaches its end: compilers
 * cannot count its trips, so they vectorise the rows instead of k (an in-order reduction
 * over k, much slower). */
#define DEFINE_KERNEL(NAME, ROWS, W)                                                             \
    MK_NOINLINE static void NAME(int32_t kc, const float *AOTC_RESTRICT a, int32_t a_rs, int32_t a_cs, \
                                 const float *AOTC_RESTRICT b, int32_t b_rs, float *AOTC_RESTRICT t,   \
                                 const tile_dst *d, int32_t i0, int32_t j0) {                      \
        ROWS(MK_DECL, W)                                                                         \
        const float *const b_end = b + (ptrdiff_t)kc * b_rs;                                     \
        const ptrdiff_t ldc = d != NULL ? d->ldc : 0;                                            \
        float *const c = d != NULL ? d->c + (ptrdiff_t)i0 * ldc + j0 : NULL; /* C_in may be C */ \
        const float beta = d != NULL ? d->beta : 0.0f;                                           \
        int32_t j;                                                                               \
        if (d != NULL && d->start == START_C) {                                                  \
            ROWS(T_FROM_C, W)                                                                    \
        } else if (d != NULL && d->start == START_CIN) {                                         \
            const ptrdiff_t rs = d->ci_rs;                                                       \
            const float *ci = d->ci + (ptrdiff_t)i0 * rs + j0;                                   \
            ROWS(T_FROM_CIN, W)                                                                  \
        } else { /* a value per row: the bias, or 0 (read, so that no memset comes of it) */    \
            static const float zeros[MR] = {0.0f};                                               \
            const int bias = d != NULL && d->start == START_BIAS;                                \
            const ptrdiff_t rs = bias ? d->ci_rs : 1;                                            \
            const float *ci = bias ? d->ci + (ptrdiff_t)i0 * rs : zeros;                         \
            const float sc = bias ? beta : 1.0f;                                                 \
            ROWS(T_FROM_ONE, W)                                                                  \
        }                                                                                        \
        for (; b != b_end; b += b_rs, a += a_cs) {                                               \
            ROWS(T_ROW, W)                                                                       \
        }                                                                                        \
        if (d == NULL) {                                                                         \
            ROWS(T_TO_T, W)                                                                      \
            return;                                                                              \
        }                                                                                        \
        if (d->start == START_ZERO && (d->alpha != 1.0f || d->accumulate || d->ci != NULL)) {    \
            const float alpha = d->alpha; /* the general rule, after the loop */                 \
            ROWS(T_SCALE, W)                                                                     \
            if (d->accumulate) {                                                                 \
                ROWS(T_ADD_C, W)                                                                 \
            } else if (d->ci != NULL) {                                                          \
                const ptrdiff_t rs = d->ci_rs;                                                   \
                const float *ci = d->ci + (ptrdiff_t)i0 * rs + (ptrdiff_t)j0 * d->ci_cs;         \
                if (d->ci_cs == 1) {                                                             \
                    ROWS(T_ADD_CIN, W)                                                           \
                } else {                                                                         \
                    ROWS(T_ADD_BIAS, W)                                                          \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        if (d->res != NULL) {                                                                    \
            const ptrdiff_t rs = d->res_rs;                                                      \
            const float *r = d->res + (ptrdiff_t)i0 * rs + j0;                                   \
            ROWS(T_ADD_RES, W)                                                                   \
        }                                                                                        \
        if (d->act == AOTC_ACT_CLAMP) {                                                          \
            const float lo = d->lo, hi = d->hi;                                                  \
            ROWS(T_CLAMP, W)                                                                     \
        } else if (d->act == AOTC_ACT_LEAKY) {                                                   \
            const float leak = d->leak;                                                          \
            ROWS(T_LEAK, W)                                                                      \
        }                                                                                        \
        ROWS(T_PUT, W)                                                                           \
    }

DEFINE_KERNEL(kernel_tile, FOR_ROWS, NR)     /* MR x NR */
DEFINE_KERNEL(kernel_narrow, FOR_ROWS, NH)   /* MR x NR / 2 */
#if MR != 4
DEFINE_KERNEL(kernel_tile4, MK_ROWS4, NR)   /* 4 x NR */
DEFINE_KERNEL(kernel_narrow4, MK_ROWS4, NH) /* 4 x NR / 2 */
#else
#define kernel_tile4 kernel_tile
#define kernel_narrow4 kernel_narrow
#endif

typedef void (*tile_kernel)(int32_t, const float *, int32_t, int32_t, const float *, int32_t, float *, const tile_dst *,
                            int32_t, int32_t);

/* The kernel for a tile of h (MR or 4) rows by w (NR or NH) columns. */
static tile_kernel kernel_for(int32_t h, int32_t w) {
    if (h == MR) return w == NR ? kernel_tile : kernel_narrow;
    return w == NR ? kernel_tile4 : kernel_narrow4;
}

/* One row of the tile (the rows past the last multiple of MR): t[j] = sum A(0, p) B(p, j).
 * Two partial sums over even and odd p keep two independent chains in flight; the k loop
 * is written as in kernel_tile. */
MK_NOINLINE static void kernel_row(int32_t kc, const float *AOTC_RESTRICT a, int32_t a_cs,
                                const float *AOTC_RESTRICT b, int32_t b_rs, float *AOTC_RESTRICT t) {
    const float *const b_end = b + (ptrdiff_t)(kc / 2 * 2) * b_rs;
    float c0[NR], c1[NR];
    int32_t j;
    MK_UNROLL for (j = 0; j < NR; ++j) c0[j] = c1[j] = 0.0f;
    for (; b != b_end; b += 2 * b_rs, a += 2 * a_cs) {
        const float a0 = a[0], a1 = a[a_cs];
        MK_UNROLL for (j = 0; j < NR; ++j) c0[j] = MK_MADD(a0, b[j], c0[j]);
        MK_UNROLL for (j = 0; j < NR; ++j) c1[j] = MK_MADD(a1, b[b_rs + j], c1[j]);
    }
    if (kc % 2) {
        const float a0 = a[0];
        MK_UNROLL for (j = 0; j < NR; ++j) c0[j] = MK_MADD(a0, b[j], c0[j]);
    }
    MK_UNROLL for (j = 0; j < NR; ++j) t[j] = c0[j] + c1[j];
}

#if MK_SCALAR_TILES
/* A row of A times a whole panel of B (PANEL readable columns): t[j] = sum A(0, p) B(p, j), on
 * targets whose tiles live in scalar registers (a Cortex-M4/M7/M33). A dense layer at batch 1
 * reads each weight once, so per MAC one load and one multiply-add are the floor; the PANEL
 * accumulators share one A value and one B row pointer (loads at constant offsets), which leaves
 * a step's loop overhead to PANEL MACs, not NR. kernel_row's 4 columns took 3.5 instructions
 * per MAC on the M4 (issue 27: an MLP at batch 1), this one about 2.3. */
MK_NOINLINE static void kernel_row_panel(int32_t kc, const float *AOTC_RESTRICT a, int32_t a_cs,
                                         const float *AOTC_RESTRICT b, int32_t b_rs, float *AOTC_RESTRICT t) {
    const float *const b_end = b + (ptrdiff_t)kc * b_rs;
    float c0[PANEL];
    int32_t j;
    MK_UNROLL for (j = 0; j < PANEL; ++j) c0[j] = 0.0f;
    for (; b != b_end; b += b_rs, a += a_cs) {
        const float a0 = a[0];
        MK_UNROLL for (j = 0; j < PANEL; ++j) c0[j] = MK_MADD(a0, b[j], c0[j]);
    }
    memcpy(t, c0, sizeof c0);
}
#endif

#if MK_HELIUM
/* kernel_row_panel with Helium (a Cortex-M55): the panel's 16 sums in 4 vectors, each B row 4
 * vector loads and 4 VFMAs by the A value as a scalar; 4 A values a step by one LDM into core
 * registers, the step's 4 B rows at constant offsets where B is packed (b_rs PANEL), else a pointer
 * step a row (a plain B, whose full panels only come here). Each weight
 * is read once, so one load and one VFMA per 4 MACs are the floor: 0.53 instructions per MAC
 * (issue 52: kernel_row's 4 columns, 2 a MAC, took LeNet's dense layers 121 k instructions). */
/* a compiler barrier between B rows: gcc hoisted a step's 16 loads and spilled them (1.2
 * instructions a MAC on an MLP) */
#define GV_BARRIER __asm__ volatile("" ::: "memory");
#define GV_ROW(S, B)                                                                                \
    c0 = vfmaq_n_f32(c0, vld1q_f32(B), S), c1 = vfmaq_n_f32(c1, vld1q_f32((B) + 4), S);             \
    c2 = vfmaq_n_f32(c2, vld1q_f32((B) + 8), S), c3 = vfmaq_n_f32(c3, vld1q_f32((B) + 12), S);
MK_NOINLINE static void kernel_row_panel(int32_t kc, const float *AOTC_RESTRICT a, int32_t a_cs,
                                         const float *AOTC_RESTRICT b, int32_t b_rs, float *AOTC_RESTRICT t) {
    float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
    int32_t q = kc;
    if (a_cs == 1 && b_rs == PANEL) {
        for (; q >= 4; q -= 4, a += 4, b += 4 * PANEL) {
            float u0, u1, u2, u3;
            MK_LDMR4(a, u)
            GV_ROW(u0, b) GV_BARRIER GV_ROW(u1, b + PANEL) GV_BARRIER GV_ROW(u2, b + 2 * PANEL) GV_BARRIER
            GV_ROW(u3, b + 3 * PANEL)
        }
    } else if (a_cs == 1) { /* a plain B's rows: a pointer step each */
        for (; q >= 4; q -= 4, a += 4) {
            float u0, u1, u2, u3;
            MK_LDMR4(a, u)
            GV_ROW(u0, b) b += b_rs;
            GV_BARRIER
            GV_ROW(u1, b) b += b_rs;
            GV_BARRIER
            GV_ROW(u2, b) b += b_rs;
            GV_BARRIER
            GV_ROW(u3, b) b += b_rs;
        }
    }
    for (; q > 0; --q, a += a_cs, b += b_rs) {
        GV_ROW(a[0], b)
    }
    vst1q_f32(t, c0), vst1q_f32(t + 4, c1), vst1q_f32(t + 8, c2), vst1q_f32(t + 12, c3);
}
#undef GV_ROW
#undef GV_BARRIER
#endif

/* The rules for the tiles of the k-block [pc, pc + kc): first and last say which it is. */
static void block_target(const aotc_sgemm_params *p, int first, int last, const float *c_in, float *c,
                         tile_dst *d) {
    d->c = c;
    d->ldc = p->ldc;
    d->alpha = p->alpha;
    d->beta = p->beta;
    d->accumulate = !first;
    d->ci = first ? c_in : NULL;
    d->ci_rs = p->cin_rs;
    d->ci_cs = p->cin_cs;
    d->res = first ? p->res : NULL;
    d->res_rs = p->res_rs;
    d->act = last ? p->act : AOTC_ACT_NONE;
    d->lo = p->act_lo;
    d->hi = p->act_hi;
    d->leak = p->act_alpha;
    d->start = START_ZERO;
    if (p->alpha == 1.0f) {
        if (d->accumulate) {
            d->start = START_C;
        } else if (d->ci != NULL) {
            d->start = d->ci_cs == 1 ? START_CIN : START_BIAS;
        }
    }
}

/* Rows of the next register tile when `rows` rows of a block are left: MR while that leaves
 * rows that 4-row tiles finish (MR = 6: 14 = 6 + 4 + 4), else 4; below 4, what is left. */
static int32_t tile_rows(int32_t rows) {
    if (rows >= MR && rows != 8) return MR;
    return rows >= 4 ? 4 : rows;
}

#if defined(__AVX512F__) && !defined(AOTC_NO_X86_GEMV)
#include <immintrin.h>
/* AVX-512: one row of A times a packed, padded B (a dense layer at batch 1), four panels of 16
 * columns at a time with the k sum split in two: 8 independent chains of multiply-adds, one B
 * vector load each. Why: kernel_row keeps 2 chains for one panel, so a layer ran at the FMA
 * latency, not at the loads' rate (the AD autoencoder's ten layers, 264 K MACs: 13.4 us). */
static void gemv_avx512_panels(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in, float *c,
                            int32_t j0, int32_t np) {
    const int32_t k = p->k, a_cs = p->a_cs;
    const ptrdiff_t b_rs = p->b_rs, b_ps = p->b_ps;
    __m512 e[4], o[4];
    int32_t q, i;
    for (q = 0; q < 4; ++q) e[q] = o[q] = _mm512_setzero_ps();
    for (i = 0; i + 1 < k; i += 2) {
        const __m512 a0 = _mm512_set1_ps(a[(ptrdiff_t)i * a_cs]), a1 = _mm512_set1_ps(a[(ptrdiff_t)(i + 1) * a_cs]);
        const float *bi = b + (ptrdiff_t)(j0 / PANEL) * b_ps + i * b_rs;
        _Pragma("GCC unroll 4") for (q = 0; q < 4; ++q) {
            if (q < np) {
                e[q] = _mm512_fmadd_ps(a0, _mm512_loadu_ps(bi + q * b_ps), e[q]);
                o[q] = _mm512_fmadd_ps(a1, _mm512_loadu_ps(bi + q * b_ps + b_rs), o[q]);
            }
        }
    }
    if (i < k) {
        const __m512 a0 = _mm512_set1_ps(a[(ptrdiff_t)i * a_cs]);
        const float *bi = b + (ptrdiff_t)(j0 / PANEL) * b_ps + i * b_rs;
        for (q = 0; q < np; ++q) e[q] = _mm512_fmadd_ps(a0, _mm512_loadu_ps(bi + q * b_ps), e[q]);
    }
    for (q = 0; q < np; ++q) {
        const int32_t j = j0 + q * PANEL, left = p->n - j;
        const __mmask16 in = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        __m512 s = _mm512_add_ps(e[q], o[q]);
        if (c_in != NULL) {
            s = _mm512_add_ps(s, p->cin_cs == 0 ? _mm512_set1_ps(c_in[0]) : _mm512_maskz_loadu_ps(in, c_in + j));
        }
        if (p->res != NULL) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(in, p->res + j));
        if (p->act == AOTC_ACT_LEAKY) {
            s = _mm512_mask_mul_ps(s, _mm512_cmp_ps_mask(s, _mm512_setzero_ps(), _CMP_LT_OQ), s, _mm512_set1_ps(p->act_alpha));
        } else if (p->act == AOTC_ACT_CLAMP) {
            s = _mm512_min_ps(_mm512_max_ps(s, _mm512_set1_ps(p->act_lo)), _mm512_set1_ps(p->act_hi));
        }
        _mm512_mask_storeu_ps(c + j, in, s);
    }
}

/* AVX-512: h rows of a row-major A times a padded B's last one or two columns (gathered into cols, KC
 * floats apart), as dot products along k: t[r * NR + j]. Why: the narrow kernel multiplies NH columns
 * whatever is left, so a band of 49 Winograd tiles (ResNet-18's 14 x 14 and SqueezeNet's 13 x 13 convs)
 * paid for 8 columns in its last panel, about a sixth of those convs' GEMM time. Two k halves per column
 * keep four chains per row in flight. */
#define DOT_COLS 2
static void dot_cols_avx512(int32_t kc, const float *a, int32_t a_rs, const float *cols, int32_t nr, int32_t h,
                         float *t) {
    const int32_t k32 = kc / 32 * 32, k16 = kc / 16 * 16;
    const __mmask16 tail = (__mmask16)((1u << (kc % 16)) - 1u);
    const float *c1 = cols + KC;
    int32_t r, q;
    for (r = 0; r < h; ++r) {
        const float *ar = a + (ptrdiff_t)r * a_rs;
        __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), u0 = _mm512_setzero_ps(), u1 = _mm512_setzero_ps();
        for (q = 0; q < k32; q += 32) {
            const __m512 x0 = _mm512_loadu_ps(ar + q), x1 = _mm512_loadu_ps(ar + q + 16);
            s0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(cols + q), s0);
            s1 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(cols + q + 16), s1);
            if (nr > 1) {
                u0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(c1 + q), u0);
                u1 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(c1 + q + 16), u1);
            }
        }
        if (q < k16) {
            const __m512 x0 = _mm512_loadu_ps(ar + q);
            s0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(cols + q), s0);
            if (nr > 1) u0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(c1 + q), u0);
            q += 16;
        }
        if (tail != 0) {
            const __m512 x1 = _mm512_maskz_loadu_ps(tail, ar + q);
            s1 = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(tail, cols + q), s1);
            if (nr > 1) u1 = _mm512_fmadd_ps(x1, _mm512_maskz_loadu_ps(tail, c1 + q), u1);
        }
        t[r * NR] = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
        if (nr > 1) t[r * NR + 1] = _mm512_reduce_add_ps(_mm512_add_ps(u0, u1));
    }
}

/* cols + j KC <- column j < nr of the kc x nr block b (rows b_rs apart) */
static void gather_cols(int32_t kc, const float *b, int32_t b_rs, int32_t nr, float *cols) {
    int32_t j, q;
    for (j = 0; j < nr; ++j)
        for (q = 0; q < kc; ++q) cols[j * KC + q] = b[(ptrdiff_t)q * b_rs + j];
}

/* The whole product if it is such a row: 1, else 0. */
static int gemv_avx512(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in, float *c) {
    int32_t j;
    if (p->m != 1 || !p->b_padded || PANEL != 16 || p->k < 1 || p->alpha != 1.0f ||
        (c_in != NULL && (p->beta != 1.0f || (p->cin_cs != 0 && p->cin_cs != 1))) ||
        (p->act != AOTC_ACT_NONE && p->act != AOTC_ACT_CLAMP && p->act != AOTC_ACT_LEAKY))
        return 0;
    for (j = 0; j < p->n; j += 4 * PANEL) {
        const int32_t np = (min_i32(p->n - j, 4 * PANEL) + PANEL - 1) / PANEL;
        gemv_avx512_panels(p, a, b, c_in, c, j, np);
    }
    return 1;
}
#else
#define gemv_avx512(p, a, b, c_in, c) 0
#define DOT_COLS 0
#define dot_cols_avx512(kc, a, a_rs, cols, nr, h, t) ((void)(cols))
#define gather_cols(kc, b, b_rs, nr, cols) ((void)(cols))
#endif

#if defined(__AVX512F__) && !defined(AOTC_NO_INTRINSICS)
#include "gemm_avx512.h" /* sgemm_avx512: 12 x 32 tiles in zmm registers */
#define GEMM_AVX512_TILES 1
#else
#define GEMM_AVX512_TILES 0
#endif

void aotc_sgemm_f32(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in,
                    float *c, float *work) {
    const int32_t m = p->m, n = p->n, k = p->k;
    /* k-blocks keep a B block in L1 for the row tiles that share it; a single row tile
     * (a matrix-vector product) streams B once, best in one pass */
    const int32_t kb = m <= MR && p->b_padded && k > 0 ? k : KC;
    /* A plain B's last, partial panel (a 1 x 1 conv on 125 positions: 13 columns) goes as a full
     * tile ending at the last column: it recomputes columns the tile before it stored, with the
     * same sums in the same order, so it stores the same values again. Not where C is summed
     * over k-blocks or read as C_in (the columns stored first would count twice), and only where
     * the full-width reads stay inside B's rows (unpadded panels are plain rows). */
    const int shift_last = !p->b_padded && p->b_ps == PANEL && n > NR && n % NR != 0 && n % NR > NH && k <= KC &&
                           p->alpha == 1.0f && (c_in == NULL || (p->cin_cs == 0 && c_in != c));
    int32_t pc = 0;
    if (gemv_avx512(p, a, b, c_in, c)) return; /* AVX-512: a single row of A, 8 chains */
#if GEMM_AVX512_TILES
    sgemm_avx512(p, a, b, c_in, c); /* AVX-512: the wider tiles of gemm_avx512.h */
    (void)work, (void)shift_last, (void)pc;
    return;
#endif
    do { /* k-blocks; a single empty one when k == 0 (C = beta * C_in) */
        const int32_t kc = min_i32(kb, k - pc);
        const int32_t mb = kc > 0 && A_BLOCK_FLOATS / kc > MR ? A_BLOCK_FLOATS / kc / MR * MR : MR;
        tile_dst dst;
        int32_t ic, jr, ir, h;
        block_target(p, pc == 0, pc + kb >= k, c_in, c, &dst);
        for (ic = 0; ic < m; ic += mb) {
            const int32_t mc = min_i32(mb, m - ic);
            for (jr = 0; jr < n; jr += NR) {
#if MK_SCALAR_TILES || MK_HELIUM
                if (mc < 4 && jr % PANEL == 0 && (p->b_padded || n - jr >= PANEL)) {
                    /* fewer rows than a tile: each row times the whole panel (kernel_row_panel) */
                    const float *bp = b + (ptrdiff_t)(jr / PANEL) * p->b_ps + (ptrdiff_t)pc * p->b_rs;
                    const int32_t np = min_i32(PANEL, n - jr);
                    float t[PANEL];
                    int32_t r;
                    for (r = 0; r < mc; ++r) {
                        kernel_row_panel(kc, a + (ptrdiff_t)(ic + r) * p->a_rs + (ptrdiff_t)pc * p->a_cs, p->a_cs, bp,
                                         p->b_rs, t);
                        store_rows(&dst, ic + r, jr, t, 1, np);
                    }
                    jr += PANEL - NR;
                    continue;
                }
#endif
                int32_t nr = min_i32(NR, n - jr);
                if (nr < NR && shift_last) { /* a full tile ending at the last column (see shift_last) */
                    jr = n - NR;
                    nr = NR;
                }
                const int32_t w = nr <= NH ? NH : NR; /* the narrow kernels for a panel's last few columns */
                const float *bp = b + (ptrdiff_t)(jr / PANEL) * p->b_ps + (ptrdiff_t)pc * p->b_rs + jr % PANEL;
                int32_t b_rs = p->b_rs;
                int readable = nr == NR || p->b_padded;
                if (!p->b_padded && work != NULL && (nr < NR || mc > MR)) {
                    /* a plain B used by several row tiles (or partial): copy this kc x NR
                     * block, zero-padded past n, so the kernel reads it contiguously
                     * (rows far apart in B would cost TLB and cache misses) */
                    int32_t q, j;
                    if (nr == NR) {
                        for (q = 0; q < kc; ++q) memcpy(work + q * NR, bp + (ptrdiff_t)q * b_rs, NR * sizeof(float));
                    } else {
                        for (q = 0; q < kc; ++q) {
                            for (j = 0; j < nr; ++j) work[q * NR + j] = bp[(ptrdiff_t)q * b_rs + j];
                            for (; j < NR; ++j) work[q * NR + j] = 0.0f;
                        }
                    }
                    bp = work;
                    b_rs = NR;
                    readable = 1;
                }
                /* a padded B's last one or two columns: dot products along k (dot_cols_avx512) */
                const int dot = p->b_padded && nr <= DOT_COLS && p->a_cs == 1 && kc > 0 && kc <= KC;
                float cols[DOT_COLS > 0 ? DOT_COLS * KC : 1];
                if (dot) gather_cols(kc, bp, b_rs, nr, cols);
                for (ir = ic; ir < ic + mc; ir += h) {
                    float t[MR * NR];
                    const float *ap = a + (ptrdiff_t)ir * p->a_rs + (ptrdiff_t)pc * p->a_cs;
                    const float *tile = t;
                    h = tile_rows(ic + mc - ir);
                    if (dot) {
                        dot_cols_avx512(kc, ap, p->a_rs, cols, nr, h, t);
                    } else if (!readable) {
                        /* a plain B's last, partial panel without work to copy it into: the vector
                         * kernels read w columns where only nr are B's, which is safe while the read
                         * runs on into B's next row (the extra columns are never stored); the last
                         * rows of B, where it could run past B's end, are summed in plain loops */
                        const int32_t read = h >= 4 ? w : NR; /* kernel_row reads NR */
                        const int32_t tail = b_rs > 0 ? (read - nr + b_rs - 1) / b_rs : kc;
                        const int32_t safe = k - tail - pc >= kc ? kc : (k - tail - pc > 0 ? k - tail - pc : 0);
                        int32_t r, j, q;
                        if (safe > 0 && h >= 4) {
                            kernel_for(h, w)(safe, ap, p->a_rs, p->a_cs, bp, b_rs, t, NULL, 0, 0);
                        } else {
                            for (r = 0; r < h; ++r) {
                                if (safe > 0) {
                                    kernel_row(safe, ap + (ptrdiff_t)r * p->a_rs, p->a_cs, bp, b_rs, t + r * NR);
                                } else {
                                    for (j = 0; j < nr; ++j) t[r * NR + j] = 0.0f;
                                }
                            }
                        }
                        for (r = 0; r < h; ++r)
                            for (q = safe; q < kc; ++q) {
                                const float av = ap[(ptrdiff_t)r * p->a_rs + (ptrdiff_t)q * p->a_cs];
                                for (j = 0; j < nr; ++j) t[r * NR + j] = MK_MADD(av, bp[(ptrdiff_t)q * b_rs + j], t[r * NR + j]);
                            }
                    } else if (h >= 4) { /* a full tile: finished in the kernel unless columns are missing */
                        const tile_dst *d = nr == w ? &dst : NULL;
                        kernel_for(h, w)(kc, ap, p->a_rs, p->a_cs, bp, b_rs, t, d, ir, jr);
                        if (d != NULL) continue;
                    } else if (mc >= 4) {
                        /* the last rows of the block: a 4-row tile ending at the last row (it
                         * recomputes rows already stored, faster than single rows) */
                        kernel_for(4, w)(kc, ap - (ptrdiff_t)(4 - h) * p->a_rs, p->a_rs, p->a_cs, bp, b_rs, t, NULL, 0, 0);
                        tile = t + (4 - h) * NR;
                    } else {
                        int32_t r;
                        for (r = 0; r < h; ++r) kernel_row(kc, ap + (ptrdiff_t)r * p->a_rs, p->a_cs, bp, b_rs, t + r * NR);
                    }
                    store_rows(&dst, ir, jr, tile, h, nr);
                }
            }
        }
        pc += kb;
    } while (pc < k);
}

/* packed <- the k x n matrix B(r, j) = b[j * k + r] (B stored transposed, n x k), in
 * panels of k x PANEL floats, zero-padded past column n. */
static void pack_transposed_b(int32_t k, int32_t n, const float *b, float *packed) {
    int32_t q, r, jj;
    for (q = 0; q * PANEL < n; ++q) {
        float *dst = packed + (ptrdiff_t)q * k * PANEL;
        for (jj = 0; jj < PANEL; ++jj) {
            const int32_t j = q * PANEL + jj;
            if (j < n) {
                const float *src = b + (ptrdiff_t)j * k;
                for (r = 0; r < k; ++r) dst[r * PANEL + jj] = src[r];
            } else {
                for (r = 0; r < k; ++r) dst[r * PANEL + jj] = 0.0f;
            }
        }
    }
}

#if defined(AOTC_THREADS) && AOTC_THREADS > 1
/* With the pool: C's columns in blocks of PANEL (2 PANEL on the AVX-512 path, whose tiles are that wide,
 * where that leaves 2 blocks), the last block taking the remainder too, so each block's tiles (the last
 * partial one shifted, see aotc_sgemm_f32) and k-blocks are the ones the whole product makes for those
 * columns: every output is summed in the same order. Each block copies plain-B blocks into its own stack
 * buffer, as the one-thread call does into `work`. */
typedef struct {
    const aotc_sgemm_params *gp;
    const float *a, *b, *c_in;
    float *c;
    int32_t blocks, use_work;
} cols_job;

/* the columns of a block */
#define COLS_WIDTH(n) (GEMM_AVX512_TILES && (n) >= 4 * PANEL ? 2 * PANEL : PANEL)

static void sgemm_cols(void *arg, int32_t begin, int32_t end) {
    const cols_job *J = (const cols_job *)arg;
    float work[AOTC_SGEMM_WORK_BYTES / sizeof(float)];
    const int32_t width = COLS_WIDTH(J->gp->n);
    int32_t it;
    for (it = begin; it < end; ++it) {
        const int32_t j0 = it * width, j1 = it == J->blocks - 1 ? J->gp->n : j0 + width;
        aotc_sgemm_params gp = *J->gp;
        gp.n = j1 - j0;
        if (gp.res != NULL) gp.res += j0; /* columns of the residual are adjacent, as C's */
        aotc_sgemm_f32(&gp, J->a, J->b + (ptrdiff_t)(j0 / PANEL) * gp.b_ps,
                       J->c_in != NULL ? J->c_in + (ptrdiff_t)j0 * gp.cin_cs : NULL, J->c + j0,
                       J->use_work ? work : NULL);
    }
}
#endif

void aotc_gemm_f32(const aotc_gemm_params *p, const float *a, const float *b, const float *c, const float *res,
                   float *y, float *work) {
    aotc_sgemm_params gp = p->gemm;
    gp.res = res;
    gp.res_rs = gp.n;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    if (!p->pack_b && gp.n >= 2 * PANEL) { /* a fully connected layer: its weights' columns split */
        cols_job J;
        J.gp = &gp, J.a = a, J.b = b, J.c_in = c, J.c = y, J.blocks = gp.n / COLS_WIDTH(gp.n);
        J.use_work = work != NULL;
        aotc_parallel_for(sgemm_cols, &J, J.blocks);
        return;
    }
#endif
    if (p->pack_b) {
        pack_transposed_b(gp.k, gp.n, b, work);
        aotc_sgemm_f32(&gp, a, work, c, y, NULL);
    } else {
        aotc_sgemm_f32(&gp, a, b, c, y, work);
    }
}

#if defined(AOTC_THREADS) && AOTC_THREADS > 1
/* the fewest multiply-adds a MatMul splits over the pool: below, a region's wake costs about what the second thread
 * saves (an attention head's small products) */
#ifndef AOTC_MATMUL_POOL_MIN_MACS
#define AOTC_MATMUL_POOL_MIN_MACS (1 << 18)
#endif

/* a batched MatMul's products over the pool, each thread's with its own stack buffer as sgemm_cols' */
typedef struct {
    const aotc_matmul_params *p;
    const float *a, *b;
    float *c;
    int32_t use_work;
} batch_job;

static void matmul_batches(void *arg, int32_t begin, int32_t end) {
    const batch_job *J = (const batch_job *)arg;
    const ptrdiff_t mn = (ptrdiff_t)J->p->gemm.m * J->p->gemm.n;
    float work[AOTC_SGEMM_WORK_BYTES / sizeof(float)];
    int32_t t;
    for (t = begin; t < end; ++t)
        aotc_sgemm_f32(&J->p->gemm, J->a + J->p->a_offsets[t], J->b + J->p->b_offsets[t], NULL, J->c + t * mn,
                       J->use_work ? work : NULL);
}
#endif

/* With the pool, one product of at least 2 PANEL columns splits by C's column blocks (sgemm_cols: each output
 * summed in the one-thread order), a batch by its products; either only with AOTC_MATMUL_POOL_MIN_MACS of work. */
void aotc_matmul_f32(const aotc_matmul_params *p, const float *a, const float *b, float *c, float *work) {
    const ptrdiff_t mn = (ptrdiff_t)p->gemm.m * p->gemm.n;
    int32_t t;
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
    if ((int64_t)p->batch * mn * p->gemm.k >= AOTC_MATMUL_POOL_MIN_MACS) {
        if (p->batch == 1 && p->gemm.n >= 2 * PANEL) {
            aotc_sgemm_params gp = p->gemm;
            cols_job J;
            J.gp = &gp, J.a = a + p->a_offsets[0], J.b = b + p->b_offsets[0], J.c_in = NULL, J.c = c;
            J.blocks = gp.n / COLS_WIDTH(gp.n), J.use_work = work != NULL;
            aotc_parallel_for(sgemm_cols, &J, J.blocks);
            return;
        }
        if (p->batch > 1) {
            batch_job J;
            J.p = p, J.a = a, J.b = b, J.c = c, J.use_work = work != NULL;
            aotc_parallel_for(matmul_batches, &J, p->batch);
            return;
        }
    }
#endif
    for (t = 0; t < p->batch; ++t) {
        aotc_sgemm_f32(&p->gemm, a + p->a_offsets[t], b + p->b_offsets[t], NULL, c + t * mn, work);
    }
}
