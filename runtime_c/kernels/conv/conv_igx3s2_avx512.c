/* aotc_conv_igx3s2_f32: 3 x 3 convs at stride 2 on AVX-512, in register blocks of 16 positions x 16
 * output channels, the even and odd columns split by vpermt2ps (conv_ig_avx512.h says why and how). */
#include "conv_ig_avx512.h"

#if IGX_ON
#define IGX3S2_TAP(T, V)                                                                              \
    {                                                                                                 \
        const __m512 v_ = (V);                                                                        \
        const float *wr = wc + (T) * PANEL;                                                           \
        _Pragma("GCC unroll 16") for (m = 0; m < 16; ++m) acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(wr[m]), v_, acc[m]); \
    }

/* How a vector's 16 lanes map onto output positions:
 *   flat   16 outputs in a run of the plane, as igx3 does. A run that crosses the end of an output row
 *          (rows not a multiple of 16 wide: ResNet-18's 28 and 14) takes its lanes past the end from
 *          the next row: each load is two masked loads, the row's own columns and, into the lanes after
 *          them, the next output row's (two input rows down). The lane on the seam feeds the last
 *          output's third tap and the next row's first: with a left pad of 1 the second is padding, and
 *          the first tap's vector drops it (a masked move). So runs cross rows only with a left pad of
 *          1, on rows where no run spans three (OW >= 16 - gcd(16, OW)); rows of 16k never cross.
 *   pairs  (OW <= 8, input rows <= 16): two output rows, lanes [0, OW) and [OW, 2 OW), each input row
 *          whole in one vector, every tap's columns picked by one vpermt2ps with a per-tap index set up
 *          once. A column past a row shorter than 16 is a zero lane of its load; the one tap that can fall
 *          outside the loads (column -1 with a left pad, column 16 of a 16-wide row without) is zeroed by
 *          its permute's mask: a kernel per left pad, as a test in the loop over the taps cost ResNet-8's
 *          8 x 8 conv 7 %.
 * Both store a contiguous run of the output plane. */
typedef struct {
    __m512i idx[3];  /* pairs: per tap column, lane l's input column (b's are 16 up) */
    __mmask16 on[3]; /* pairs: the lanes whose tap column lies in the row */
} igx3s2_pairs_map;

static igx3s2_pairs_map igx3s2_pairs_for(const aotc_conv_params *p) {
    const int32_t IW = p->in_size[2], OW = p->out_size[2], pl = p->pads[2];
    igx3s2_pairs_map M;
    int32_t kx, l;
    for (kx = 0; kx < 3; ++kx) {
        int32_t at[16];
        M.on[kx] = 0;
        for (l = 0; l < 16; ++l) {
            const int32_t second = l >= OW, col = 2 * (second ? l - OW : l) + kx - pl;
            const int32_t used = l < 2 * OW && col >= 0;
            at[l] = used && col < 16 ? col + (second ? 16 : 0) : 0; /* past IW: a zero lane */
            M.on[kx] = (__mmask16)(M.on[kx] | (used && col < IW ? 1u << l : 0u));
        }
        M.idx[kx] = _mm512_loadu_si512(at);
    }
    return M;
}

typedef struct {
    igx_job job;
    igx3s2_pairs_map map;
} igx3s2_job;

/* lanes [lo, hi) of 16 */
static inline __mmask16 igx3s2_span(ptrdiff_t lo, ptrdiff_t hi) { return (__mmask16)(igx_lanes(hi) & ~igx_lanes(lo)); }

/* flat: one row's columns, or a row's and the next output row's across the seam (the second masked load
 * fills the lanes the first left) */
#define IGX3S2_ROW_LOAD(V) _mm512_maskz_loadu_ps(V##m[ky], xc + V##o[ky])
#define IGX3S2_SEAM_LOAD(V) _mm512_mask_loadu_ps(IGX3S2_ROW_LOAD(V), V##n[ky], xc + V##o[ky] + next)
/* flat: the sum over the input channels and taps; TAP0 is the first tap's vector made from e0 */
#define IGX3S2_RUN(LOAD, TAP0)                                                                         \
    for (c = 0; c < cg; ++c) {                                                                         \
        const float *xc = xg + (ptrdiff_t)c * in_plane;                                                \
        _Pragma("GCC unroll 3") for (ky = 0; ky < 3; ++ky) {                                           \
            const float *wc = wb + ((ptrdiff_t)c * 9 + ky * 3) * PANEL;                                \
            const __m512 a = LOAD(a), b = LOAD(b), e = LOAD(c);                                        \
            const __m512 e0 = _mm512_permutex2var_ps(a, even, b);                                      \
            IGX3S2_TAP(0, TAP0)                                                                        \
            IGX3S2_TAP(1, _mm512_permutex2var_ps(a, odd, b))                                           \
            IGX3S2_TAP(2, _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(e), _mm512_castps_si512(e0), 1))) \
        }                                                                                              \
    }

#define IGX3S2_KERNEL(NAME, PAIRS, L1)                                                                     \
    static void NAME(void *arg, int32_t begin, int32_t end) {                                          \
        const igx3s2_job *S = (const igx3s2_job *)arg;                                                 \
        const igx_job *J = &S->job;                                                                    \
        const aotc_conv_params *p = J->p;                                                              \
        const int32_t IH = p->in_size[1], IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2]; \
        const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group, blocks = mg / 16;             \
        const int32_t pt = p->pads[1], pl = p->pads[2];                                                \
        const ptrdiff_t in_plane = (ptrdiff_t)IH * IW, plane = (ptrdiff_t)OH * OW, k_rows = (ptrdiff_t)cg * 9; \
        const ptrdiff_t group_w = (ptrdiff_t)mg * k_rows, next = 2 * (ptrdiff_t)IW - 2 * (ptrdiff_t)OW; \
        const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0); \
        const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));                              \
        const __m512i i0 = S->map.idx[0], i1 = S->map.idx[1], i2 = S->map.idx[2];                      \
        const __mmask16 on0 = S->map.on[0], on2 = S->map.on[2];                                        \
        int32_t item, m, c, ky;                                                                        \
        for (item = begin; item < end; ++item) {                                                       \
            const int32_t v = item % J->nvec, jb = item / J->nvec % blocks, gi = item / J->nvec / blocks; \
            const int32_t g = gi % p->group, n = gi / p->group;                                        \
            const ptrdiff_t p0 = (PAIRS) ? 2 * (ptrdiff_t)v * OW : 16 * (ptrdiff_t)v;                  \
            const int32_t oy = (int32_t)(p0 / OW), ox = (int32_t)(p0 % OW), n0 = OW - ox;              \
            const __mmask16 in = (PAIRS) ? igx_lanes(plane - p0 < 2 * OW ? plane - p0 : 2 * OW) : igx_lanes(plane - p0); \
            const __mmask16 first = (PAIRS) || n0 >= 16 ? (__mmask16)0xFFFF : (__mmask16)~(1u << n0); \
            const float *xg = J->x + ((ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg) * in_plane;          \
            const float *wb = J->wt + g * group_w + (ptrdiff_t)jb * k_rows * PANEL;                    \
            const ptrdiff_t yo = ((ptrdiff_t)n * p->out_c + (ptrdiff_t)g * mg + (ptrdiff_t)jb * 16) * plane + p0; \
            ptrdiff_t ao[3], bo[3], co[3];                                                             \
            __mmask16 am[3], bm[3], cm[3], an[3], bn[3], cn[3];                                        \
            __m512 acc[16];                                                                            \
            for (ky = 0; ky < 3; ++ky) { /* per tap row: the loads' offsets and masks (0: padding) */ \
                const int32_t r0 = 2 * oy + ky - pt, r1 = r0 + 2;                                      \
                if (PAIRS) { /* a: input row r0 (output row oy), b: r0 + 2 (oy + 1), both whole */     \
                    ao[ky] = (ptrdiff_t)r0 * IW, bo[ky] = (ptrdiff_t)r1 * IW, co[ky] = 0;              \
                    am[ky] = r0 >= 0 && r0 < IH ? igx_lanes(IW) : 0;                                   \
                    bm[ky] = r1 >= 0 && r1 < IH && oy + 1 < OH ? igx_lanes(IW) : 0;                    \
                    cm[ky] = an[ky] = bn[ky] = cn[ky] = 0;                                             \
                } else {                                                                               \
                    /* load lane j: column c0 + j of row r0 up to the seam (lane 2 n0), column           \
                     * j - 2 n0 - pl of row r1 after it (at c0 + j + next from row r0's start) */      \
                    const int32_t c0 = 2 * ox - pl, ok0 = r0 >= 0 && r0 < IH, ok1 = r1 < IH && oy + 1 < OH && n0 < 16; \
                    const ptrdiff_t seam = 2 * (ptrdiff_t)n0 + 1, s1 = 2 * (ptrdiff_t)n0 + pl;         \
                    ao[ky] = (ptrdiff_t)r0 * IW + c0, bo[ky] = ao[ky] + 16, co[ky] = ao[ky] + 32;      \
                    am[ky] = ok0 ? (__mmask16)(igx3s2_span(-c0, IW - c0) & igx_lanes(seam)) : 0;       \
                    bm[ky] = ok0 ? (__mmask16)(igx3s2_span(-c0 - 16, IW - c0 - 16) & igx_lanes(seam - 16)) : 0; \
                    cm[ky] = ok0 ? (__mmask16)(igx3s2_span(-c0 - 32, IW - c0 - 32) & igx_lanes(seam - 32) & 1) : 0; \
                    an[ky] = ok1 ? (__mmask16)(igx3s2_span(s1, s1 + IW) & ~igx_lanes(seam)) : 0;       \
                    bn[ky] = ok1 ? (__mmask16)(igx3s2_span(s1 - 16, s1 + IW - 16) & ~igx_lanes(seam - 16)) : 0; \
                    cn[ky] = ok1 ? (__mmask16)(igx3s2_span(s1 - 32, s1 + IW - 32) & ~igx_lanes(seam - 32) & 1) : 0; \
                }                                                                                      \
            }                                                                                          \
            for (m = 0; m < 16; ++m) acc[m] = _mm512_set1_ps(J->bias != NULL ? J->bias[g * mg + jb * 16 + m] : 0.0f); \
            if (PAIRS) {                                                                               \
                for (c = 0; c < cg; ++c) {                                                             \
                    const float *xc = xg + (ptrdiff_t)c * in_plane;                                    \
                    _Pragma("GCC unroll 3") for (ky = 0; ky < 3; ++ky) {                               \
                        const float *wc = wb + ((ptrdiff_t)c * 9 + ky * 3) * PANEL;                    \
                        const __m512 a = _mm512_maskz_loadu_ps(am[ky], xc + ao[ky]);                   \
                        const __m512 b = _mm512_maskz_loadu_ps(bm[ky], xc + bo[ky]);                   \
                        IGX3S2_TAP(0, (L1) ? _mm512_maskz_permutex2var_ps(on0, a, i0, b)                \
                                           : _mm512_permutex2var_ps(a, i0, b))                         \
                        IGX3S2_TAP(1, _mm512_permutex2var_ps(a, i1, b))                                \
                        IGX3S2_TAP(2, (L1) ? _mm512_permutex2var_ps(a, i2, b)                          \
                                           : _mm512_maskz_permutex2var_ps(on2, a, i2, b))              \
                    }                                                                                  \
                }                                                                                      \
            } else if (n0 < 16) {                                                                      \
                IGX3S2_RUN(IGX3S2_SEAM_LOAD, _mm512_maskz_mov_ps(first, e0))                           \
            } else {                                                                                   \
                IGX3S2_RUN(IGX3S2_ROW_LOAD, e0)                                                        \
            }                                                                                          \
            x86c_finish16(p, acc, in, J->res != NULL ? J->res + yo : NULL, J->y + yo, plane);          \
        }                                                                                              \
    }
IGX3S2_KERNEL(igx3s2_flat, 0, 0)
IGX3S2_KERNEL(igx3s2_pairs, 1, 0)
IGX3S2_KERNEL(igx3s2_pairs_pad1, 1, 1)
#undef IGX3S2_KERNEL
#undef IGX3S2_RUN
#undef IGX3S2_SEAM_LOAD
#undef IGX3S2_ROW_LOAD
#undef IGX3S2_TAP

static int32_t igx3s2_gcd16(int32_t n) {
    int32_t g = 16;
    while (n % g != 0) g /= 2;
    return g;
}

/* 1 if it ran the conv, else 0 (aot/kernels/conv_avx512.py picks the convs it runs on the same conditions) */
static int igx3s2(const aotc_conv_params *p, const float *x, const float *wt, const float *bias, const float *res,
                  float *y) {
    const int32_t mg = p->out_c / p->group, IW = p->in_size[2], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t pairs = OW <= 8 && IW <= 16, pl = p->pads[2];
    igx3s2_job S;
    if (p->out_nhwc != 0 || !igx_plain2d(p) || !x86c_act_ok(p) || p->kernel[1] != 3 || p->kernel[2] != 3 ||
        p->strides[1] != 2 || p->strides[2] != 2 || p->dilations[1] != 1 || p->dilations[2] != 1 || p->pads[1] > 1 ||
        pl > 1 || mg % 16 != 0 || !(pairs ? OW >= 6 : OW % 16 == 0 || (pl == 1 && OW >= 16 - igx3s2_gcd16(OW))))
        return 0;
    S.job = igx_job_for(p, x, wt, bias, res, y);
    S.map = igx3s2_pairs_for(p);
    if (pairs) S.job.nvec = (OH + 1) / 2;
    aotc_parallel_for(!pairs ? igx3s2_flat : pl ? igx3s2_pairs_pad1 : igx3s2_pairs, &S, p->batch * p->group * (mg / 16) * S.job.nvec);
    return 1;
}
#endif

void aotc_conv_igx3s2_f32(const aotc_conv_params *p, const float *x, const float *wt, const float *bias,
                          const float *res, float *y) {
#if IGX_ON
    if (igx3s2(p, x, wt, bias, res, y)) return;
    X86_PATH_MISSED("aotc_conv_igx3s2_f32");
#else
    aotc_conv_implicit_f32(p, x, wt, bias, res, y);
#endif
}
