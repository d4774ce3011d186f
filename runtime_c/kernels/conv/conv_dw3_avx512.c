/* Depthwise 3 x 3 Conv on AVX-512F: stride 1 with pads of 1 on every side on small planes
 * (dw3x_s1), and stride 2 on output rows of at most 30 (dw3x_s2, below). aotc_conv_dw3_avx512 is called
 * first by the two kernels that take such convs (aotc_conv_depthwise3x3_direct_f32 and
 * aotc_conv3x3_flat_f32), which go on as before where it returns 0 (always without AVX-512F); a file
 * of its own so that a bundle compiles it once. No kernel choice or scratch size depends on it.
 * Internal to runtime_c/kernels.
 *
 * Why: on narrow planes (a KWS DS-CNN's 25 x 5, a MobileNet's 12 x 12, 6 x 6, 3 x 3) the portable
 * kernels spend most of their time per plane and per row (their blocks of 8 outputs end in
 * partial blocks, their masks and clamps are set up per run): about 770 instructions per 25 x 5
 * plane. Here a plane is one flat run of HW outputs in vectors of 16. Each tap row is loaded
 * once per vector (masked: zero in rows outside the image; AVX-512's masked loads do not touch
 * the masked-off lanes, so a plane's first and last vectors may point outside the tensor), and
 * its left and right taps are that vector shifted by a lane (valignd, the lane from the vector
 * before or after, zeroed past a row's ends): 3 loads, 6 shifts and 9 multiply-adds per 16
 * outputs. The 5 masks of a vector depend on its position in the plane only, so they are made
 * once per call (at most DW3X_MAX_VECS vectors a plane: HW <= 1024; on larger planes, which
 * do not stay in L1, the portable kernels were faster: 48 x 48 x 8 took 10.3 us here, 6.9 us
 * there). Per-node medians on the host (Zen 4): KWS 25 x 5 x 64 3.85 -> 2.67 us, VWW 6 x 6 x 128
 * 4.7 -> 2.15 us, 3 x 3 x 256 6.3 -> 2.2 us, 12 x 12 x 64 4.5 -> 3.0 us. */
#include "conv_internal.h"
#include "conv_common_avx512.h" /* x86c_lanes */

#if defined(__AVX512F__) && !defined(AOTC_NO_X86_DW3)
#include <immintrin.h>

#define DW3X_MAX_VECS 64
#define DW3X_AHEAD 2 /* planes ahead whose weights are prefetched */

typedef struct {
    const aotc_conv_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    const uint16_t *m; /* 5 masks per vector of a plane, DW3X_UP .. DW3X_RIGHT */
    int32_t nv;
} dw3x_job;

/* A vector's masks (lanes = its 16 outputs): the row above inside the image, the output itself
 * inside the plane, the row below inside; a column to the left, to the right inside the row. */
enum { DW3X_UP, DW3X_IN, DW3X_DOWN, DW3X_LEFT, DW3X_RIGHT, DW3X_MASKS };

/* One plane's vectors: xc its input plane, yc its output, rc its residual (RES), k its weights,
 * b its bias. Each tap row's vector of centre taps is loaded once (zero in rows outside the
 * image): the last one (p), this one (c), the next (n); the left and right taps are c shifted by a
 * lane, the lane coming from p or n, kept where the column is inside the row (one mask for the
 * three tap rows: a zero row stays zero). */
/* A plane's 9 weights k[0..8] as vectors k0 .. k8, and the activation's constants for dw3x_finish
 * (the clamp's bounds, infinite unless p's activation is a clamp; the leaky slope). */
#define DW3X_WEIGHTS(k)                                                                                \
    const __m512 k0 = _mm512_set1_ps((k)[0]), k1 = _mm512_set1_ps((k)[1]), k2 = _mm512_set1_ps((k)[2]); \
    const __m512 k3 = _mm512_set1_ps((k)[3]), k4 = _mm512_set1_ps((k)[4]), k5 = _mm512_set1_ps((k)[5]); \
    const __m512 k6 = _mm512_set1_ps((k)[6]), k7 = _mm512_set1_ps((k)[7]), k8 = _mm512_set1_ps((k)[8]);
#define DW3X_ACT_CONSTS(p, act)                                                                        \
    const __m512 lo = _mm512_set1_ps((act) == AOTC_ACT_CLAMP ? (p)->act_lo : -INFINITY);               \
    const __m512 hi = _mm512_set1_ps((act) == AOTC_ACT_CLAMP ? (p)->act_hi : INFINITY);                \
    const __m512 leak = _mm512_set1_ps((p)->act_alpha);

/* The epilogue of a vector of sums s (lanes `in`): + the residual r (unless NULL), the activation
 * (leaky, else where `clamp` the clamp to [lo, hi], which is no-op for none), stored; without a mask where all 16
 * lanes are outputs (masked stores cost KWS's 25 x 5 planes 7 % on Zen 4). `clamp` is 0 in each kernel's copy for
 * convs without an activation (EfficientNet's, whose SiLU is a pass of its own; a constant there, so the copy has
 * no clamp): the no-op clamp's two operations a vector were 7.5 % of a 56 x 56 x 144 conv's time, 3 % of a stride-2
 * 112 x 112 x 96 one's, 2.4 % of a 14 x 14 x 672 one's (issue 64; single-conv runners, medians of 7 alternating). */
static inline void dw3x_finish(__m512 s, __mmask16 in, const float *r, int32_t act, int clamp, __m512 lo, __m512 hi,
                               __m512 leak, float *y) {
    if (r != NULL) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(in, r));
    if (act == AOTC_ACT_LEAKY) {
        s = _mm512_mask_mul_ps(s, _mm512_cmp_ps_mask(s, _mm512_setzero_ps(), _CMP_LT_OQ), s, leak);
    } else if (clamp) {
        s = _mm512_min_ps(_mm512_max_ps(s, lo), hi);
    }
    if (in == 0xFFFF) {
        _mm512_storeu_ps(y, s);
    } else {
        _mm512_mask_storeu_ps(y, in, s);
    }
}

#define DW3X_SHIFT(M, HI, LO, N) \
    _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(M, _mm512_castps_si512(HI), _mm512_castps_si512(LO), N))
/* The 16 sums of a vector: the bias and its three tap rows' previous (p), current (c) and next (n) vectors
 * of centre taps times the weights k0 .. k8, the left taps (lanes `L`) c shifted right by a lane from p,
 * the right ones (`R`) c shifted left from n. One sum per tap row: short chains of dependent
 * multiply-adds. */
#define DW3X_SUM(L, R)                                                                                 \
    _mm512_add_ps(                                                                                     \
        _mm512_fmadd_ps(k2, DW3X_SHIFT(R, n0, c0, 1), _mm512_fmadd_ps(k1, c0, _mm512_fmadd_ps(k0, DW3X_SHIFT(L, c0, p0, 15), b))), \
        _mm512_add_ps(                                                                                 \
            _mm512_fmadd_ps(k5, DW3X_SHIFT(R, n1, c1, 1), _mm512_fmadd_ps(k4, c1, _mm512_mul_ps(k3, DW3X_SHIFT(L, c1, p1, 15)))), \
            _mm512_fmadd_ps(k8, DW3X_SHIFT(R, n2, c2, 1), _mm512_fmadd_ps(k7, c2, _mm512_mul_ps(k6, DW3X_SHIFT(L, c2, p2, 15))))))
#define DW3X_PLANE(RES, ACT)                                                                          \
    {                                                                                                 \
        __m512 p0 = _mm512_setzero_ps(), p1 = p0, p2 = p0;                                            \
        __m512 c0 = _mm512_maskz_loadu_ps(m[DW3X_UP], xc - W), c1 = _mm512_maskz_loadu_ps(m[DW3X_IN], xc); \
        __m512 c2 = _mm512_maskz_loadu_ps(m[DW3X_DOWN], xc + W);                                      \
        for (v = 0; v < nv; ++v, m += DW3X_MASKS) {                                                   \
            const float *t = xc + 16 * (ptrdiff_t)v + 16; /* the next vector's centre tap */          \
            const __mmask16 left = m[DW3X_LEFT], right = m[DW3X_RIGHT], in = m[DW3X_IN];              \
            const __m512 n0 = _mm512_maskz_loadu_ps(m[DW3X_MASKS + DW3X_UP], t - W);                 \
            const __m512 n1 = _mm512_maskz_loadu_ps(m[DW3X_MASKS + DW3X_IN], t);                     \
            const __m512 n2 = _mm512_maskz_loadu_ps(m[DW3X_MASKS + DW3X_DOWN], t + W);               \
            const __m512 s0 = DW3X_SUM(left, right);                                                  \
            dw3x_finish(s0, in, (RES) ? rc + 16 * (ptrdiff_t)v : NULL, ACT, (ACT) != AOTC_ACT_NONE, lo, hi, leak, \
                        yc + 16 * (ptrdiff_t)v);                                                      \
            p0 = c0, p1 = c1, p2 = c2, c0 = n0, c1 = n1, c2 = n2;                                     \
        }                                                                                             \
    }

/* Output planes [begin, end) (plane n * out_c + o), for the pool (aotc_threads.h). */
static void dw3x_planes(void *arg, int32_t begin, int32_t end) {
    const dw3x_job *J = (const dw3x_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t W = p->in_size[2], mult = p->out_c / p->in_c, act = p->act, nv = J->nv;
    const ptrdiff_t hw = (ptrdiff_t)p->in_size[1] * W;
    DW3X_ACT_CONSTS(p, act)
    int32_t plane, v;
    for (plane = begin; plane < end; ++plane) {
        const int32_t n = plane / p->out_c, o = plane % p->out_c;
        const float *xc = J->x + ((ptrdiff_t)n * p->in_c + o / mult) * hw;
        const float *k = J->w + (ptrdiff_t)o * 9;
        const float *rc = J->res != NULL ? J->res + (ptrdiff_t)plane * hw : NULL;
        float *yc = J->y + (ptrdiff_t)plane * hw;
        const __m512 b = _mm512_set1_ps(J->bias != NULL ? J->bias[o] : 0.0f);
        const int32_t ahead = (plane + DW3X_AHEAD) % p->out_c; /* a later plane's weights */
        if (plane + DW3X_AHEAD < end)
            x86c_prefetch_plane(J->w + (ptrdiff_t)ahead * 9, 9, J->bias != NULL ? J->bias + ahead : NULL);
        DW3X_WEIGHTS(k)
        const uint16_t *m = J->m;
        if (rc == NULL && act == AOTC_ACT_NONE) { /* the common cases: no residual, nothing or a clamp */
            DW3X_PLANE(0, AOTC_ACT_NONE)
        } else if (rc == NULL && act == AOTC_ACT_CLAMP) {
            DW3X_PLANE(0, AOTC_ACT_CLAMP)
        } else {
            DW3X_PLANE(rc != NULL, act)
        }
    }
}
#undef DW3X_PLANE

/* Stride 1 on larger planes (rows of at most 16 DW3X_MAX_VECS): each output row in vectors of 16 as
 * DW3X_PLANE goes along a flat plane, its tap rows the rows above and below (zero outside the image),
 * the three masks of a vector (its outputs; those whose left, right tap is inside the row) made once
 * per call. Issue 24: MobileNet-v2's and EfficientNet's 112 x 112 x 32 convs took 167-183 us in the
 * portable kernels (onnxruntime 85-142).
 * DW3X_RR output rows at a time (issue 64): the DW3X_RR + 2 input rows' vectors are loaded and shifted once for
 * the output rows that read each (3 loads and 6 shifts per output vector when a row at a time, 2 and 4 now), and
 * the masks and branches of a vector are shared by its rows; each output's sum is formed in DW3X_SUM's order (the
 * same bits). EfficientNet-B0's 56 x 56 x 144 conv 129 -> 112 us, its 112 x 112 x 32 one 101 -> 85 (single-conv
 * runners, min of 5, Zen 5); 3 rows at a time was no faster and 4 slower (spills). */
#define DW3X_RR 2
static MK_INLINE void dw3x_rows_s1_body(void *arg, int32_t begin, int32_t end, int clamp) {
    const dw3x_job *J = (const dw3x_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t H = p->in_size[1], W = p->in_size[2], mult = p->out_c / p->in_c, act = p->act, nv = J->nv;
    const ptrdiff_t hw = (ptrdiff_t)H * W;
    DW3X_ACT_CONSTS(p, act)
    int32_t plane, oy, v, j, r;
    for (plane = begin; plane < end; ++plane) {
        const int32_t n = plane / p->out_c, o = plane % p->out_c;
        const float *xp = J->x + ((ptrdiff_t)n * p->in_c + o / mult) * hw;
        const float *k = J->w + (ptrdiff_t)o * 9;
        const float *rp = J->res != NULL ? J->res + (ptrdiff_t)plane * hw : NULL;
        float *yp = J->y + (ptrdiff_t)plane * hw;
        const __m512 b = _mm512_set1_ps(J->bias != NULL ? J->bias[o] : 0.0f);
        const int32_t ahead = (plane + DW3X_AHEAD) % p->out_c; /* a later plane's weights */
        if (plane + DW3X_AHEAD < end)
            x86c_prefetch_plane(J->w + (ptrdiff_t)ahead * 9, 9, J->bias != NULL ? J->bias + ahead : NULL);
        DW3X_WEIGHTS(k)
        for (oy = 0; oy < H; oy += DW3X_RR) {
            /* input rows oy - 1 + j: c[j] the current vector of centre taps, l[j] its left taps */
            const float *xr[DW3X_RR + 2];
            __mmask16 rv[DW3X_RR + 2];
            __m512 c[DW3X_RR + 2], l[DW3X_RR + 2];
            const uint16_t *m = J->m;
            _Pragma("GCC unroll 6") for (j = 0; j < DW3X_RR + 2; ++j) {
                const int32_t iy = oy - 1 + j;
                rv[j] = iy >= 0 && iy < H ? (__mmask16)0xFFFF : (__mmask16)0;
                xr[j] = xp + (ptrdiff_t)iy * W;
                c[j] = _mm512_maskz_loadu_ps(rv[j] & m[0], xr[j]);
                l[j] = DW3X_SHIFT(m[1], c[j], _mm512_setzero_ps(), 15);
            }
            for (v = 0; v < nv; ++v, m += 3) {
                const __mmask16 in = m[0], right = m[2], next = m[3], nleft = m[4];
                __m512 t0[DW3X_RR], t1[DW3X_RR], t2[DW3X_RR];
                _Pragma("GCC unroll 6") for (j = 0; j < DW3X_RR + 2; ++j) {
                    const __m512 nx = _mm512_maskz_loadu_ps(rv[j] & next, xr[j] + 16 * (ptrdiff_t)v + 16);
                    const __m512 rt = DW3X_SHIFT(right, nx, c[j], 1);
                    if (j < DW3X_RR) t0[j] = _mm512_fmadd_ps(k2, rt, _mm512_fmadd_ps(k1, c[j], _mm512_fmadd_ps(k0, l[j], b)));
                    if (j >= 1 && j - 1 < DW3X_RR)
                        t1[j - 1] = _mm512_fmadd_ps(k5, rt, _mm512_fmadd_ps(k4, c[j], _mm512_mul_ps(k3, l[j])));
                    if (j >= 2) t2[j - 2] = _mm512_fmadd_ps(k8, rt, _mm512_fmadd_ps(k7, c[j], _mm512_mul_ps(k6, l[j])));
                    l[j] = DW3X_SHIFT(nleft, nx, c[j], 15);
                    c[j] = nx;
                }
                _Pragma("GCC unroll 4") for (r = 0; r < DW3X_RR; ++r) {
                    const ptrdiff_t q = (ptrdiff_t)(oy + r) * W + 16 * (ptrdiff_t)v;
                    if (oy + r < H)
                        dw3x_finish(_mm512_add_ps(t0[r], _mm512_add_ps(t1[r], t2[r])), in, rp != NULL ? rp + q : NULL,
                                    act, clamp, lo, hi, leak, yp + q);
                }
            }
        }
    }
}
/* dw3x_rows_s1_body without the clamp for a conv with no activation, with it for the others (dw3x_finish) */
static MK_NOINLINE void dw3x_rows_s1(void *arg, int32_t begin, int32_t end) {
    if (((const dw3x_job *)arg)->p->act == AOTC_ACT_NONE) {
        dw3x_rows_s1_body(arg, begin, end, 0);
    } else {
        dw3x_rows_s1_body(arg, begin, end, 1);
    }
}
#undef DW3X_RR
#undef DW3X_SUM
#undef DW3X_SHIFT

/* The whole conv, where it applies (2-D, 3 x 3, stride 1, no dilation, pads of 1 on every side, one
 * input channel per group, planes of at most 16 DW3X_MAX_VECS outputs): 1, else 0 (nothing done). */
static int dw3x_s1(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                   float *y) {
    const int32_t H = p->in_size[1], W = p->in_size[2];
    const int32_t hw = H * W, nv = (hw + 15) / 16;
    uint16_t m[DW3X_MASKS * (DW3X_MAX_VECS + 1)];
    dw3x_job J;
    int32_t v, l, oy = 0, ox = 0;
    if (p->in_size[0] != 1 || p->kernel[0] != 1 || p->kernel[1] != 3 || p->kernel[2] != 3 || p->strides[1] != 1 ||
        p->strides[2] != 1 || p->dilations[1] != 1 || p->dilations[2] != 1 || p->pads[1] != 1 || p->pads[2] != 1 ||
        p->out_size[1] != H || p->out_size[2] != W || p->group != p->in_c || p->in_nhwc ||
        (p->act != AOTC_ACT_NONE && p->act != AOTC_ACT_CLAMP && p->act != AOTC_ACT_LEAKY)) {
        return 0;
    }
    if (nv > DW3X_MAX_VECS) { /* row by row (dw3x_rows_s1): per vector of a row its outputs, left, right taps */
        const int32_t nr = (W + 15) / 16;
        if (nr > DW3X_MAX_VECS) return 0;
        for (v = 0; v < nr; ++v) {
            const unsigned in = (unsigned)x86c_lanes(16 * (ptrdiff_t)v, 0, W);
            m[3 * v] = (uint16_t)in;
            m[3 * v + 1] = (uint16_t)(v == 0 ? in & ~1u : in);
            m[3 * v + 2] = (uint16_t)(in & ~(unsigned)x86c_lanes(16 * (ptrdiff_t)v, W - 1, W));
        }
        m[3 * nr] = m[3 * nr + 1] = m[3 * nr + 2] = 0; /* past the row's last vector: nothing */
        m[3 * nr + 3] = m[3 * nr + 4] = 0;
        J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y, J.m = m, J.nv = nr;
        aotc_parallel_for(dw3x_rows_s1, &J, p->batch * p->out_c);
        return 1;
    }
    for (v = 0; v < nv; ++v) { /* the masks: output (oy, ox) of lane l, its rows and columns inside */
        unsigned in = 0, up = 0, down = 0, left = 0, right = 0;
        for (l = 0; l < 16 && 16 * v + l < hw; ++l) {
            const unsigned bit = 1u << l;
            in |= bit;
            up |= oy > 0 ? bit : 0u;
            down |= oy < H - 1 ? bit : 0u;
            left |= ox > 0 ? bit : 0u;
            right |= ox < W - 1 ? bit : 0u;
            if (++ox == W) ox = 0, ++oy;
        }
        m[DW3X_MASKS * v + DW3X_UP] = (uint16_t)up, m[DW3X_MASKS * v + DW3X_IN] = (uint16_t)in;
        m[DW3X_MASKS * v + DW3X_DOWN] = (uint16_t)down, m[DW3X_MASKS * v + DW3X_LEFT] = (uint16_t)left;
        m[DW3X_MASKS * v + DW3X_RIGHT] = (uint16_t)right;
    }
    for (l = 0; l < DW3X_MASKS; ++l) m[DW3X_MASKS * nv + l] = 0; /* past the last vector: nothing (its loads are all masked off) */
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y, J.m = m, J.nv = nv;
    aotc_parallel_for(dw3x_planes, &J, p->batch * p->out_c);
    return 1;
}

/* Stride 2 (pads of 0 or 1 at the start), output rows of at most 15 DW3X_S2_MAX_VECS: row by row, each
 * output row in vectors of 15 outputs (whose taps span 31 columns). A tap row's input for a vector is
 * loaded once, 32 columns from column 30 j - pl (two masked loads, zero outside the row; j the
 * vector), and its three taps are
 * picked out of those 32 by vpermt2ps (columns 2 ox + kx), zeroed where the column is outside:
 * 2 loads, 3 permutes and 3 multiply-adds per tap row and vector, where the portable kernels split planes by parity or de-interleave through
 * the stack (VWW's 12 x 12 -> 6 x 6 x 64 and 6 x 6 -> 3 x 3 x 128). On wide rows too (issue 24:
 * MobileNet-v2's 112 x 112 -> 56 x 56 x 96 took 263 us in the portable kernel, 2.4 x onnxruntime's). */
#define DW3X_S2_MAX_VECS 64
static MK_INLINE void dw3x_planes_s2_body(void *arg, int32_t begin, int32_t end, int clamp) {
    const dw3x_job *J = (const dw3x_job *)arg;
    const aotc_conv_params *p = J->p;
    const int32_t H = p->in_size[1], W = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t pt = p->pads[1], pl = p->pads[2], mult = p->out_c / p->in_c, act = p->act;
    const ptrdiff_t hw = (ptrdiff_t)H * W, ohw = (ptrdiff_t)OH * OW;
    DW3X_ACT_CONSTS(p, act)
    /* lane l, tap column kx: window column 2 l + kx (column 2 l + kx - pl of the row) */
    const __m512i i0 = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i i1 = _mm512_add_epi32(i0, _mm512_set1_epi32(1)), i2 = _mm512_add_epi32(i0, _mm512_set1_epi32(2));
    const int32_t nb = (OW + 14) / 15;
    int32_t plane, oy, ky, j;
    for (plane = begin; plane < end; ++plane) {
        const int32_t n = plane / p->out_c, o = plane % p->out_c;
        const float *xc = J->x + ((ptrdiff_t)n * p->in_c + o / mult) * hw - pl;
        const float *k = J->w + (ptrdiff_t)o * 9;
        const float *rc = J->res != NULL ? J->res + (ptrdiff_t)plane * ohw : NULL;
        float *yc = J->y + (ptrdiff_t)plane * ohw;
        const __m512 b = _mm512_set1_ps(J->bias != NULL ? J->bias[o] : 0.0f);
        const int32_t ahead = (plane + DW3X_AHEAD) % p->out_c; /* a later plane's weights */
        if (plane + DW3X_AHEAD < end)
            x86c_prefetch_plane(J->w + (ptrdiff_t)ahead * 9, 9, J->bias != NULL ? J->bias + ahead : NULL);
        DW3X_WEIGHTS(k)
        for (j = 0; j < nb; ++j) {
            /* vector j's masks: its window's columns inside the row, its three taps', its outputs */
            const uint16_t *m = J->m + 6 * j;
            const __mmask16 wlo = m[0], whi = m[1], e0 = m[2], e1 = m[3], e2 = m[4], out = m[5];
            for (oy = 0; oy < OH; ++oy) {
                __m512 s0 = b, s1 = _mm512_setzero_ps(), s2 = s1;
                for (ky = 0; ky < 3; ++ky) {
                    const int32_t iy = 2 * oy + ky - pt;
                    const float *r = xc + (ptrdiff_t)iy * W + 30 * j;
                    const __m512 w0 = ky == 0 ? k0 : ky == 1 ? k3 : k6, w1 = ky == 0 ? k1 : ky == 1 ? k4 : k7;
                    const __m512 w2 = ky == 0 ? k2 : ky == 1 ? k5 : k8;
                    __m512 a, c;
                    if (iy < 0 || iy >= H) continue; /* a row of padding */
                    a = _mm512_maskz_loadu_ps(wlo, r), c = _mm512_maskz_loadu_ps(whi, r + 16);
                    s0 = _mm512_fmadd_ps(w0, _mm512_maskz_permutex2var_ps(e0, a, i0, c), s0);
                    s1 = _mm512_fmadd_ps(w1, _mm512_maskz_permutex2var_ps(e1, a, i1, c), s1);
                    s2 = _mm512_fmadd_ps(w2, _mm512_maskz_permutex2var_ps(e2, a, i2, c), s2);
                }
                s0 = _mm512_add_ps(s0, _mm512_add_ps(s1, s2));
                dw3x_finish(s0, out, rc != NULL ? rc + (ptrdiff_t)oy * OW + 15 * j : NULL, act, clamp, lo, hi, leak,
                            yc + (ptrdiff_t)oy * OW + 15 * j);
            }
        }
    }
}
/* dw3x_planes_s2_body without the clamp for a conv with no activation, with it for the others (dw3x_finish) */
static MK_NOINLINE void dw3x_planes_s2(void *arg, int32_t begin, int32_t end) {
    if (((const dw3x_job *)arg)->p->act == AOTC_ACT_NONE) {
        dw3x_planes_s2_body(arg, begin, end, 0);
    } else {
        dw3x_planes_s2_body(arg, begin, end, 1);
    }
}

static int dw3x_s2(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                   float *y) {
    const int32_t W = p->in_size[2], OW = p->out_size[2], pl = p->pads[2];
    const int32_t nb = (OW + 14) / 15;
    uint16_t m[6 * DW3X_S2_MAX_VECS];
    dw3x_job J;
    int32_t c, l, kx, j;
    if (p->in_size[0] != 1 || p->kernel[0] != 1 || p->kernel[1] != 3 || p->kernel[2] != 3 || p->strides[1] != 2 ||
        p->strides[2] != 2 || p->dilations[1] != 1 || p->dilations[2] != 1 || p->pads[1] > 1 || pl > 1 ||
        nb > DW3X_S2_MAX_VECS ||
        p->group != p->in_c || p->in_nhwc || (p->act != AOTC_ACT_NONE && p->act != AOTC_ACT_CLAMP && p->act != AOTC_ACT_LEAKY)) {
        return 0;
    }
    memset(m, 0, sizeof m);
    for (j = 0; j < nb; ++j) {
        for (c = 0; c < 32; ++c) { /* window column c of vector j is row column 30 j + c - pl */
            if (30 * j + c - pl >= 0 && 30 * j + c - pl < W) m[6 * j + c / 16] |= (uint16_t)(1u << (c % 16));
        }
        for (l = 0; l < 15 && 15 * j + l < OW; ++l) { /* lane l, output 15 j + l: tap kx reads column 2 (15 j + l) + kx - pl */
            m[6 * j + 5] |= (uint16_t)(1u << l);
            for (kx = 0; kx < 3; ++kx) {
                const int32_t col = 2 * (15 * j + l) + kx - pl;
                if (col >= 0 && col < W) m[6 * j + 2 + kx] |= (uint16_t)(1u << l);
            }
        }
    }
    J.p = p, J.x = x, J.w = w, J.bias = bias, J.res = res, J.y = y, J.m = m, J.nv = 0;
    aotc_parallel_for(dw3x_planes_s2, &J, p->batch * p->out_c);
    return 1;
}

#undef DW3X_WEIGHTS
#undef DW3X_ACT_CONSTS
#undef DW3X_AHEAD
#endif

/* Stride 1 or 2 where the paths above apply: 1, else 0 (nothing done). */
int aotc_conv_dw3_avx512(const aotc_conv_params *p, const float *x, const float *w, const float *bias, const float *res,
                      float *y) {
#if defined(__AVX512F__) && !defined(AOTC_NO_X86_DW3)
    return dw3x_s1(p, x, w, bias, res, y) || dw3x_s2(p, x, w, bias, res, y);
#else
    (void)p, (void)x, (void)w, (void)bias, (void)res, (void)y;
    return 0;
#endif
}
