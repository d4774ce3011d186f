/* The direct CONV_2D of tflite_int8_packed.c on Intel AMX (TDPBUSD: tiles of 16 rows x 64 bytes, u8 x s8 into int32,
 * sums modulo 2^32 as vpdpbusd's), built with AMX-TILE and AMX-INT8 (-march=sapphirerapids or later, -march=native
 * on such a host) beside AVX-512 VNNI, on Linux x86-64, without AOTC_NO_INTRINSICS (TFL_PK_AMX). Included by
 * tflite_int8_packed.c after its VNNI output stage (tfl_pk_out, tfl_pk_store_rq), which the sums go through
 * unchanged: bit for bit the VNNI path's.
 *
 * A GEMM: positions (M) x the patch's quads (K) x output channels (N). The packed weights are already AMX's B
 * layout: a block of 16 channels is kq quads of 64 bytes (16 channels x 4 bytes), 16 consecutive quads a B tile
 * (stride 64). The A tiles (16 positions x 16 quads) are read where the patches already are, in one of three ways
 * (tfl_amx_mode), chosen per layer:
 *
 * - TFL_AMX_SPAN (stride 1, each kernel row's kw c bytes whole tiles: ResNet's 3 x 3 and 1 x 1 convs on 64n
 *   channels): in place in the span (tfl_pk_span_rows), over a grid of pw columns a row: virtual position
 *   p = oy pw + ox is at p c in the span, its kernel row j rowstep further, so 16 consecutive virtual positions are
 *   one tile at stride c. The positions with ox >= ow (the span's last kw - 1 columns, 2 of 9 at 7 x 7) are
 *   computed and not stored. No copy of A at all.
 * - TFL_AMX_COMPACT (1 x 1 at a stride > 1): x's positions the windows read, unsigned, into the scratch as a
 *   compact image of oh x ow rows (instead of the span), then as SPAN over it.
 *   A 1 x 1 conv on c not a multiple of 64 (MobileNetV2's 24, 96, 144, 160) reads its last K tile in place too,
 *   past each position's c bytes into the next one's, times B tiles whose rows past c are zeros: that tile's weights
 *   copied a step onto the stack (the old path's trick; no packing of A, whose copy costs more than a few channels'
 *   work).
 * - TFL_AMX_PACK (other shapes whose patch is at most TFL_AMX_PACK_MAX bytes: the 7 x 7 stem on 3 channels):
 *   the patches of 32 positions packed on the stack from the span, kq quads padded to whole tiles with zeros.
 *   The B tiles then read past kq (the next block's weights, times A's zeros); the last block's last tile, whose
 *   read would pass the weights' end, from a copy padded with zeros.
 *
 * The blocking: C tiles of 2 x 2 (32 positions x 32 channels) in the tile registers over the whole K loop (2 A and
 * 2 B tiles a step of 16 quads), then stored to the stack and requantised 16 channels at a time. The loops over
 * M and N in the order that streams less (tfl_amx_conv: each pass over M streams all the weights, each pass over N
 * all of A): a 56 x 56 layer holds its few weights while its rows go by, a 7 x 7 one its few rows while its
 * weights go by. The last tile of a batch's positions starts 16 before their end (overlapping the one before it,
 * whose rows it does not store again), so that no tile reads past the span.
 *
 * The stack: a call takes up to about 90 KB of it (the ADD's table of 64 KB, PACK's 16 KB of patches, the C tiles
 * and copies of B), static frames that `aotc footprint` counts; the VNNI path takes a few KB.
 *
 * Linux gives a process the AMX state only once asked (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): asked
 * on the first call, the answer kept in a static (the one global of these kernels); refused, the VNNI path runs.
 * Each thread running items loads the tile configuration itself (tfl_amx_begin) and releases the tiles after them. */
#ifndef AOTC_TFLITE_INT8_AMX_H
#define AOTC_TFLITE_INT8_AMX_H

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && TFL_PK_VNNI && defined(__linux__) && defined(__x86_64__) && \
    !defined(AOTC_NO_INTRINSICS)
#define TFL_PK_AMX 1
#else
#define TFL_PK_AMX 0
#endif

#if TFL_PK_AMX
/* whether this process may use the tiles: asked of Linux once (arch_prctl(ARCH_REQ_XCOMP_PERM 0x1023,
 * XFEATURE_XTILEDATA 18); by the system call itself: the bundle builds as C99, where glibc declares no syscall) */
static int tfl_amx_allowed(void) {
    static int state; /* 0: not asked yet, 1: granted, -1: refused */
    int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (s == 0) {
        long r;
        __asm__ volatile("syscall" : "=a"(r) : "a"(158L /* SYS_arch_prctl */), "D"(0x1023L), "S"(18L)
                         : "rcx", "r11", "memory");
        s = r == 0 ? 1 : -1;
        __atomic_store_n(&state, s, __ATOMIC_RELAXED);
    }
    return s > 0;
}

#define TFL_AMX_MIN_QUADS 16    /* the shortest patch (quads) the tiles take: a B tile's rows; shorter ones (a 1 x 1
                                 * conv's on 32 channels or fewer) waste most of each tile: VNNI */
#define TFL_AMX_PACK_MAX 512    /* the longest patch (bytes, padded) TFL_AMX_PACK packs: 32 of them on the stack */
#ifndef TFL_AMX_N_OUTER_BYTES
#define TFL_AMX_N_OUTER_BYTES (1 << 20) /* weights (bytes) past which N outer may stream less than M outer */
#endif
#ifndef TFL_AMX_PF
#define TFL_AMX_PF 4 /* K steps ahead the weights' tiles are prefetched */
#endif
#ifndef TFL_AMX_PF_BYTES
#define TFL_AMX_PF_BYTES (192 * 1024) /* weights (bytes) up to which they are not (ResNet-50's at 56 x 56 and 28 x 28,
                                       * 16 to 147 KiB, in the cache: 1 % faster so; its 262 KiB at 14 x 14 slower) */
#endif
#define TFL_AMX_NONE 0
#define TFL_AMX_SPAN 1
#define TFL_AMX_COMPACT 2
#define TFL_AMX_PACK 3

/* how the tiles read the direct CONV_2D p's patches (TFL_AMX_NONE: they do not take it) */
static int tfl_amx_mode(const aotc_tfl_conv_params *p) {
    const int32_t rq = tfl_pk_row_quads(p), kq = p->kh * rq, pw = (p->ow - 1) * p->sw + p->kw;
    if (!tfl_pk_direct(p) || kq < TFL_AMX_MIN_QUADS) return TFL_AMX_NONE;
    if (p->kh == 1 && p->kw == 1 && p->oh * p->ow >= 16)
        return p->sh == 1 && p->sw == 1 ? TFL_AMX_SPAN : TFL_AMX_COMPACT;
    if (p->sh == 1 && p->sw == 1 && rq % 16 == 0 && (p->oh - 1) * pw + p->ow >= 16) return TFL_AMX_SPAN;
    if (64 * ((kq + 15) / 16) <= TFL_AMX_PACK_MAX) return TFL_AMX_PACK;
    return TFL_AMX_NONE;
}

/* whether the tiles take the direct CONV_2D p (the process granted them) */
static int tfl_amx_takes(const aotc_tfl_conv_params *p) { return tfl_amx_mode(p) != TFL_AMX_NONE && tfl_amx_allowed(); }

/* the tile configuration (palette 1): every tile 16 rows x 64 bytes; C tiles 0-3, A tiles 4-5, B tiles 6-7 */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tfl_amx_config;

static void tfl_amx_begin(void) {
    tfl_amx_config c;
    int i;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (i = 0; i < 8; ++i) c.colsb[i] = 64, c.rows[i] = 16;
    _tile_loadconfig(&c);
}

/* ma (1, 2) A tiles (a0, a1: their first position's first quad; lda bytes between positions, kernel row j rowstep
 * further, kt tiles of 16 quads a kernel row) x mb (1, 2) blocks of 16 channels' weights (b0, b1; each K tile 1024
 * bytes on; the last K tile from b0z, b1z instead) over rows kernel rows, into c[tile][16][16] (tile 2 ia + ib).
 * pf: the weights prefetched (1) or not (0: small weights, in the cache) */
TFL_PK_INLINE void tfl_amx_gemm(const uint8_t *a0, const uint8_t *a1, int64_t lda, int32_t rows, int64_t rowstep,
                                int32_t kt, const int8_t *b0, const int8_t *b1, const int8_t *b0z, const int8_t *b1z,
                                int ma, int mb, int pf, int32_t *c) {
    const int32_t tiles = rows * kt;
    int32_t j, k, kk = 0;
    _tile_zero(0);
    if (mb > 1) _tile_zero(1);
    if (ma > 1) _tile_zero(2);
    if (ma > 1 && mb > 1) _tile_zero(3);
    for (j = 0; j < rows; ++j)
        for (k = 0; k < kt; ++k, ++kk) {
            const int64_t at = j * rowstep + 64 * k;
            const int last = kk == tiles - 1;
            if (pf && kk + TFL_AMX_PF < tiles) { /* the weights' tiles TFL_AMX_PF steps on, into L1 */
                int i;
                for (i = 0; i < 16; ++i) {
                    _mm_prefetch((const char *)(b0 + (int64_t)1024 * (kk + TFL_AMX_PF) + 64 * i), _MM_HINT_T0);
                    if (mb > 1) _mm_prefetch((const char *)(b1 + (int64_t)1024 * (kk + TFL_AMX_PF) + 64 * i), _MM_HINT_T0);
                }
            }
            _tile_loadd(4, a0 + at, lda);
            _tile_loadd(6, last ? b0z : b0 + (int64_t)1024 * kk, 64);
            _tile_dpbusd(0, 4, 6);
            if (mb > 1) {
                _tile_loadd(7, last ? b1z : b1 + (int64_t)1024 * kk, 64);
                _tile_dpbusd(1, 4, 7);
            }
            if (ma > 1) {
                _tile_loadd(5, a1 + at, lda);
                _tile_dpbusd(2, 5, 6);
                if (mb > 1) _tile_dpbusd(3, 5, 7);
            }
        }
    _tile_stored(0, c, 64);
    if (mb > 1) _tile_stored(1, c + 256, 64);
    if (ma > 1) _tile_stored(2, c + 512, 64);
    if (ma > 1 && mb > 1) _tile_stored(3, c + 768, 64);
}

/* a direct CONV_2D on the tiles: the layer, its A, and its loops */
typedef struct {
    const aotc_tfl_conv_params *p;
    const tfl_pk_out *o;
    int relu;           /* its output stage takes TFL_AMX_RQ_RELU where its blocks take u32 */
    const int8_t *x, *wp, *res;
    const int32_t *bias;
    int8_t *y;
    uint8_t *a;         /* SPAN: the span; COMPACT: the compact image; PACK: the span */
    int mode, n_outer;  /* the loop over N outside the one over M */
    int pf;             /* tfl_amx_gemm's prefetch of the weights */
    int64_t lda, rowstep, bstep; /* A: bytes between positions, kernel rows, batches */
    int32_t grid;       /* SPAN, COMPACT: virtual positions a row (pw, ow) */
    int32_t mv;         /* positions a batch (virtual: the last real one's + 1) */
    int32_t rows, kt;   /* kernel rows the tiles read apart (SPAN: kh; else 1), K tiles each */
    int32_t nb;         /* blocks of 16 channels */
    int32_t mpairs;     /* tile pairs (32 positions) a batch */
    const int8_t *zlast; /* PACK with a K tail: the last block's last K tile, padded with zeros; else NULL */
    int32_t tail;       /* SPAN, COMPACT of a 1 x 1 conv on c not a multiple of 64: the last K tile's quads (its B
                         * tiles copied a step, padded with zeros: A's rows past c are the next position's bytes) */
} tfl_amx_job;

/* the output rows of the tile pair from virtual position p0 of batch b: off[r] the position's index in y (-1: not
 * stored: past mv, or a column past ow) */
static void tfl_amx_rows(const tfl_amx_job *J, int32_t b, int32_t p0, int64_t *off) {
    const aotc_tfl_conv_params *p = J->p;
    int32_t r, v, ox, oy;
    if (J->mode == TFL_AMX_PACK) {
        for (r = 0; r < 32; ++r) off[r] = p0 + r < J->mv ? (int64_t)b * J->mv + p0 + r : -1;
        return;
    }
    oy = p0 / J->grid, ox = p0 % J->grid;
    for (r = 0, v = p0; r < 32; ++r, ++v) {
        off[r] = v < J->mv && ox < p->ow ? ((int64_t)b * p->oh + oy) * p->ow + ox : -1;
        if (++ox == J->grid) ox = 0, ++oy;
    }
}

/* The output stage on the tiles' sums: the VNNI path's (tfl_pk_out, tfl_pk_rq: bit for bit tfl_pk_store_rq), a C
 * tile's 16 rows at a time in place on the stack, the loop's form constant (issue 64: the stage of 13 operations a
 * 16 outputs, the fused ADD by a table's gather and a narrowing store a row, was 40 % of an int8 ResNet-50's time on
 * the tiles), then narrowed by tfl_pk_pack4 two or four rows a store. The requantisation's forms: */
#define TFL_AMX_RQ_Z 0    /* tfl_pk_requant_z */
#define TFL_AMX_RQ_FAST 1 /* tfl_pk_requant_fast (tfl_pk_rq_fast) */
#define TFL_AMX_RQ_U32 2  /* tfl_pk_requant_u32 (the block's u32) */
/* u32 less its correction of negative sums where the conv has no ADD and its range starts at or above its zero point
 * (y_min >= y_zero, a ReLU's): a sum a < t (a negative product a m) gives floor((a m + 2^30 + 2^(30 + e)) / 2^(31 +
 * e)) <= 0 uncorrected (e >= 1), so that the output, z or less, is y_min either way */
#define TFL_AMX_RQ_RELU 3
/* the fused ADD's forms */
#define TFL_AMX_ADD_NONE 0
#define TFL_AMX_ADD_LIN 1 /* the compiler's linear form (tfl_pk_lin) */
#define TFL_AMX_ADD_ANY 2 /* tfl_pk_out_lanes */

/* 16 sums a (the bias added) requantised by rq in the form */
TFL_PK_INLINE __m512i tfl_amx_rq(const tfl_pk_out *o, const tfl_pk_rq *rq, __m512i a, int form) {
    if (form == TFL_AMX_RQ_RELU) {
        const __m512i hi = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
        const __m512i a2 = _mm512_add_epi32(a, a);
        const __m512i we = _mm512_add_epi64(_mm512_mul_epi32(a2, rq->u_m), rq->u_ce);
        const __m512i wo = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a2, 32), rq->u_mo), rq->u_co);
        return _mm512_srav_epi32(_mm512_permutex2var_epi32(we, hi, wo), rq->u_sh);
    }
    if (form == TFL_AMX_RQ_U32) return tfl_pk_requant_u32(a, rq->u_m, rq->u_mo, rq->u_ce, rq->u_co, rq->u_t, rq->u_sh);
    if (form == TFL_AMX_RQ_FAST)
        return tfl_pk_requant_fast(a, rq->q.mult, rq->q.mult_odd, rq->q.k_e, rq->q.k_o, rq->q.fix_e, rq->q.fix_o,
                                   rq->q.sh_e, rq->sh_o1);
    return tfl_pk_requant_z(rq, a, o->yz);
}

/* 16 sums a (with the bias) through the output stage but its last clamp (the ADD fused: the residual's 16 at res) */
TFL_PK_INLINE __m512i tfl_amx_lanes(const tfl_pk_out *o, const tfl_pk_rq *rq, __m512i a, const int8_t *res,
                                    __mmask16 m, int form, int add) {
    __m512i v;
    if (add == TFL_AMX_ADD_ANY) return tfl_pk_out_lanes(o, rq, a, res, m);
    v = tfl_amx_rq(o, rq, a, form);
    if (add == TFL_AMX_ADD_LIN)
        v = tfl_pk_lin(o, _mm512_min_epi32(_mm512_max_epi32(v, o->lo), o->hi),
                       _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, res)));
    return v;
}

/* the 16 rows of a C tile (c, 16 sums a row) plus the bias through the output stage but its last clamp, in place
 * (the ADD fused: row r's residual at rp[r] + at; rq, o copied: the stores to c may alias them) */
TFL_PK_INLINE void tfl_amx_stage(const tfl_pk_out *op, const tfl_pk_rq *rqp, __m512i bias, int32_t *c,
                                 const int8_t *const *rp, int64_t at, __mmask16 m, int form, int add) {
    const tfl_pk_out o = *op;
    const tfl_pk_rq rq = *rqp;
    int r;
    for (r = 0; r < 16; ++r)
        _mm512_store_si512(c + 16 * r, tfl_amx_lanes(&o, &rq, _mm512_add_epi32(_mm512_load_si512(c + 16 * r), bias),
                                                      rp[r] + at, m, form, add));
}

/* The output stage of one M tile's two blocks (c, c + 256: the sums of channels at and at + 16; q0, q1 their
 * requantisations, of one form) straight from their C tiles to y, two rows a pack (tfl_pk_pack4: row r's 32
 * channels, then row r + 1's), row r to position off[r] (none where -1), m1 the second block's channels: no
 * staging of the sums through the stack (o, q0, q1 copied: the stores to y may alias them) */
TFL_PK_INLINE void tfl_amx_out2(const tfl_pk_out *op, const tfl_pk_rq *q0p, const tfl_pk_rq *q1p, __m512i bias0,
                                __m512i bias1, const int32_t *c, const int64_t *off, const int8_t *const *rp,
                                int64_t at, int8_t *y, int32_t oc, __mmask16 m1, int form, int add) {
    const tfl_pk_out o = *op;
    const tfl_pk_rq q0 = *q0p, q1 = *q1p;
    const __mmask32 mm = 0xFFFFu | (__mmask32)m1 << 16;
    int r;
    for (r = 0; r < 16; r += 2) {
        const __m512i v00 = tfl_amx_lanes(&o, &q0, _mm512_add_epi32(_mm512_load_si512(c + 16 * r), bias0), rp[r] + at,
                                          0xFFFF, form, add);
        const __m512i v01 = tfl_amx_lanes(&o, &q1, _mm512_add_epi32(_mm512_load_si512(c + 256 + 16 * r), bias1),
                                          rp[r] + at + 16, m1, form, add);
        const __m512i v10 = tfl_amx_lanes(&o, &q0, _mm512_add_epi32(_mm512_load_si512(c + 16 * r + 16), bias0),
                                          rp[r + 1] + at, 0xFFFF, form, add);
        const __m512i v11 = tfl_amx_lanes(&o, &q1, _mm512_add_epi32(_mm512_load_si512(c + 256 + 16 * r + 16), bias1),
                                          rp[r + 1] + at + 16, m1, form, add);
        const __m512i v = tfl_pk_pack4(&o, v00, v01, v10, v11);
        if (off[r] >= 0) _mm256_mask_storeu_epi8(y + off[r] * oc, mm, _mm512_castsi512_si256(v));
        if (off[r + 1] >= 0) _mm256_mask_storeu_epi8(y + off[r + 1] * oc, mm, _mm512_extracti64x4_epi64(v, 1));
    }
}

/* the form of a block's requantisation (relu: the layer's) */
static int tfl_amx_form(const tfl_pk_rq *rq, int relu) {
    return rq->u32 ? (relu ? TFL_AMX_RQ_RELU : TFL_AMX_RQ_U32) : tfl_pk_rq_fast(rq) ? TFL_AMX_RQ_FAST : TFL_AMX_RQ_Z;
}

/* tfl_amx_out2 where both blocks' requantisations have one form (else 0: nothing done), each form its own loop */
static int tfl_amx_out_pair(const tfl_pk_out *o, const tfl_pk_rq *rqs, int relu, const __m512i *bv, const int32_t *c,
                            const int64_t *off, const int8_t *const *rp, int64_t at, int8_t *y, int32_t oc,
                            __mmask16 m1) {
    const int form = tfl_amx_form(&rqs[0], relu);
    if (tfl_amx_form(&rqs[1], relu) != form) return 0;
#define TFL_AMX_OUT2(F, A) tfl_amx_out2(o, &rqs[0], &rqs[1], bv[0], bv[1], c, off, rp, at, y, oc, m1, F, A)
    if (o->add && !o->lin) TFL_AMX_OUT2(TFL_AMX_RQ_Z, TFL_AMX_ADD_ANY);
    else if (o->add && form == TFL_AMX_RQ_U32) TFL_AMX_OUT2(TFL_AMX_RQ_U32, TFL_AMX_ADD_LIN);
    else if (o->add && form == TFL_AMX_RQ_FAST) TFL_AMX_OUT2(TFL_AMX_RQ_FAST, TFL_AMX_ADD_LIN);
    else if (o->add) TFL_AMX_OUT2(TFL_AMX_RQ_Z, TFL_AMX_ADD_LIN);
    else if (form == TFL_AMX_RQ_RELU) TFL_AMX_OUT2(TFL_AMX_RQ_RELU, TFL_AMX_ADD_NONE);
    else if (form == TFL_AMX_RQ_U32) TFL_AMX_OUT2(TFL_AMX_RQ_U32, TFL_AMX_ADD_NONE);
    else if (form == TFL_AMX_RQ_FAST) TFL_AMX_OUT2(TFL_AMX_RQ_FAST, TFL_AMX_ADD_NONE);
    else TFL_AMX_OUT2(TFL_AMX_RQ_Z, TFL_AMX_ADD_NONE);
#undef TFL_AMX_OUT2
    return 1;
}

/* tfl_amx_stage of one block's C tile, each form its own loop (relu: the layer takes TFL_AMX_RQ_RELU) */
static void tfl_amx_stage_block(const tfl_pk_out *o, const tfl_pk_rq *rq, int relu, __m512i bias, int32_t *c,
                                const int8_t *const *rp, int64_t at, __mmask16 m) {
    const int form = tfl_amx_form(rq, relu);
    if (o->add && !o->lin) {
        tfl_amx_stage(o, rq, bias, c, rp, at, m, TFL_AMX_RQ_Z, TFL_AMX_ADD_ANY);
    } else if (o->add) {
        if (form == TFL_AMX_RQ_U32) tfl_amx_stage(o, rq, bias, c, rp, at, m, TFL_AMX_RQ_U32, TFL_AMX_ADD_LIN);
        else if (form == TFL_AMX_RQ_FAST) tfl_amx_stage(o, rq, bias, c, rp, at, m, TFL_AMX_RQ_FAST, TFL_AMX_ADD_LIN);
        else tfl_amx_stage(o, rq, bias, c, rp, at, m, TFL_AMX_RQ_Z, TFL_AMX_ADD_LIN);
    } else if (form == TFL_AMX_RQ_RELU) {
        tfl_amx_stage(o, rq, bias, c, rp, at, m, TFL_AMX_RQ_RELU, TFL_AMX_ADD_NONE);
    } else if (form == TFL_AMX_RQ_U32) {
        tfl_amx_stage(o, rq, bias, c, rp, at, m, TFL_AMX_RQ_U32, TFL_AMX_ADD_NONE);
    } else if (form == TFL_AMX_RQ_FAST) {
        tfl_amx_stage(o, rq, bias, c, rp, at, m, TFL_AMX_RQ_FAST, TFL_AMX_ADD_NONE);
    } else {
        tfl_amx_stage(o, rq, bias, c, rp, at, m, TFL_AMX_RQ_Z, TFL_AMX_ADD_NONE);
    }
}

/* one M tile's staged C tiles (c: mb blocks 256 sums apart, from channel c0; m the last one's channels) narrowed and
 * stored, row r to position off[r] of y (none where -1): two rows' 32 channels a pack where mb is 2, four rows' 16
 * where it is 1 */
static void tfl_amx_put(const tfl_pk_out *o, const int32_t *c, const int64_t *off, int mb, int8_t *y, int32_t oc,
                        __mmask16 m) {
    int r;
    if (mb > 1) {
        const __mmask32 mm = 0xFFFFu | (__mmask32)m << 16;
        for (r = 0; r < 16; r += 2) {
            const __m512i v = tfl_pk_pack4(o, _mm512_load_si512(c + 16 * r), _mm512_load_si512(c + 256 + 16 * r),
                                           _mm512_load_si512(c + 16 * r + 16), _mm512_load_si512(c + 256 + 16 * r + 16));
            if (off[r] >= 0) _mm256_mask_storeu_epi8(y + off[r] * oc, mm, _mm512_castsi512_si256(v));
            if (off[r + 1] >= 0) _mm256_mask_storeu_epi8(y + off[r + 1] * oc, mm, _mm512_extracti64x4_epi64(v, 1));
        }
        return;
    }
    for (r = 0; r < 16; r += 4) {
        const __m512i v = tfl_pk_pack4(o, _mm512_load_si512(c + 16 * r), _mm512_load_si512(c + 16 * r + 16),
                                       _mm512_load_si512(c + 16 * r + 32), _mm512_load_si512(c + 16 * r + 48));
        if (off[r] >= 0) _mm_mask_storeu_epi8(y + off[r] * oc, m, _mm512_castsi512_si128(v));
        if (off[r + 1] >= 0) _mm_mask_storeu_epi8(y + off[r + 1] * oc, m, _mm512_extracti32x4_epi32(v, 1));
        if (off[r + 2] >= 0) _mm_mask_storeu_epi8(y + off[r + 2] * oc, m, _mm512_extracti32x4_epi32(v, 2));
        if (off[r + 3] >= 0) _mm_mask_storeu_epi8(y + off[r + 3] * oc, m, _mm512_extracti32x4_epi32(v, 3));
    }
}

/* n bytes from s to d: 64 at a time, the last ones by a masked load and store (a stem's kernel row is 21 to 24
 * bytes: a call of memcpy a row cost more than the tiles' work on it) */
TFL_PK_INLINE void tfl_amx_copy(uint8_t *d, const uint8_t *s, int32_t n) {
    for (; n >= 64; n -= 64, d += 64, s += 64) _mm512_storeu_si512(d, _mm512_loadu_si512(s));
    if (n > 0) {
        const __mmask64 m = _bzhi_u64(~0ull, (unsigned)n);
        _mm512_mask_storeu_epi8(d, m, _mm512_maskz_loadu_epi8(m, s));
    }
}

/* n zero bytes at d */
TFL_PK_INLINE void tfl_amx_zero(uint8_t *d, int32_t n) {
    for (; n >= 64; n -= 64, d += 64) _mm512_storeu_si512(d, _mm512_setzero_si512());
    if (n > 0) _mm512_mask_storeu_epi8(d, _bzhi_u64(~0ull, (unsigned)n), _mm512_setzero_si512());
}

/* the patches of positions p0 .. p0 + 31 (those before mv) of batch b into buf (kb bytes each, zeros past kq
 * quads), from the span */
static void tfl_amx_pack(const tfl_amx_job *J, int32_t b, int32_t p0, int32_t kb, uint8_t *buf) {
    const aotc_tfl_conv_params *p = J->p;
    const int32_t ph = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1, pw = (p->ow - 1) * p->sw + p->kw;
    const int32_t rq = tfl_pk_row_quads(p), kq = p->kh * rq;
    const int64_t col = (int64_t)p->sw * p->c;
    int32_t r, j, pos, ox = p0 % p->ow, oy = p0 / p->ow; /* (one division a pair, not two a position: issue 64) */
    const uint8_t *src = J->a + (((int64_t)b * ph + oy * p->sh) * pw + ox * p->sw) * p->c;
    for (r = 0, pos = p0; r < 32 && pos < J->mv; ++r, ++pos, src += col) {
        uint8_t *row = buf + (int64_t)r * kb;
        if (ox == p->ow) ox = 0, ++oy, src = J->a + ((int64_t)b * ph + oy * p->sh) * pw * p->c;
        ++ox;
        for (j = 0; j < p->kh; ++j) tfl_amx_copy(row + 4 * rq * j, src + j * J->rowstep, 4 * rq);
        tfl_amx_zero(row + 4 * kq, kb - 4 * kq);
    }
}

/* tile pair mp of batch b (32 positions) x the channel pairs n0 .. n1 - 1 (32 channels each) */
static void tfl_amx_block(const tfl_amx_job *J, int32_t b, int32_t mp, int32_t n0, int32_t n1, uint8_t *pack,
                          int8_t *zb) {
    const aotc_tfl_conv_params *p = J->p;
    const int32_t p0 = 32 * mp, kb = 64 * J->rows * J->kt, tiles = J->rows * J->kt;
    const int64_t wstep = (int64_t)64 * p->kh * tfl_pk_row_quads(p); /* a block's weights: kq quads */
    __attribute__((aligned(64))) int32_t c[1024];
    int64_t off[32], o0[16], o1[16];
    const int8_t *r0[16], *r1[16]; /* the rows' residuals (the ADD fused; else y) */
    const int8_t *res = J->res != NULL ? J->res : J->y;
    const uint8_t *a0, *a1;
    int64_t lda;
    int32_t s0, s1, np, j, r;
    const int ma = p0 + 16 < J->mv ? 2 : 1;
    if (J->mode == TFL_AMX_PACK) {
        tfl_amx_pack(J, b, p0, kb, pack);
        a0 = pack, a1 = pack + 16 * (int64_t)kb, lda = kb, s0 = p0, s1 = p0 + 16;
    } else { /* in place; a tile past mv starts 16 before it */
        s0 = p0 + 16 <= J->mv ? p0 : J->mv - 16;
        s1 = p0 + 32 <= J->mv ? p0 + 16 : J->mv - 16;
        lda = J->lda;
        a0 = J->a + b * J->bstep + s0 * lda, a1 = J->a + b * J->bstep + s1 * lda;
    }
    tfl_amx_rows(J, b, p0, off);
    for (r = 0; r < 16; ++r) { /* C row r of each tile: position s + r, stored where it is its pair's own */
        o0[r] = s0 + r >= p0 ? off[s0 + r - p0] : -1;
        o1[r] = ma > 1 && s1 + r >= p0 + 16 ? off[s1 + r - p0] : -1;
        r0[r] = res + (o0[r] > 0 ? o0[r] : 0) * p->oc, r1[r] = res + (o1[r] > 0 ? o1[r] : 0) * p->oc;
    }
    for (np = n0; np < n1; ++np) {
        const int32_t c0 = 32 * np, mb = c0 + 16 < p->oc ? 2 : 1;
        const int8_t *b0 = J->wp + (int64_t)(2 * np) * wstep, *b1 = b0 + wstep;
        const int8_t *b0z = b0 + (int64_t)1024 * (tiles - 1), *b1z = b1 + (int64_t)1024 * (tiles - 1);
        __m512i bv[2];
        tfl_pk_rq rqs[2];
        __mmask16 ms[2];
        if (J->zlast != NULL && 2 * np + 1 >= J->nb - 1) { /* the last block's last tile from the padded copy */
            if (2 * np == J->nb - 1) b0z = J->zlast;
            else b1z = J->zlast;
        }
        if (J->tail > 0) { /* the K tail's weights, zeros after them (zb: zeros past tail rows) */
            tfl_amx_copy((uint8_t *)zb, (const uint8_t *)b0z, 64 * J->tail);
            if (mb > 1) tfl_amx_copy((uint8_t *)zb + 1024, (const uint8_t *)b1z, 64 * J->tail);
            b0z = zb, b1z = zb + 1024;
        }
        for (j = 0; j < mb; ++j) {
            const int32_t cj = c0 + 16 * j, left = p->oc - cj;
            ms[j] = (__mmask16)(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
            const __m512i mult = _mm512_maskz_loadu_epi32(ms[j], p->mult + cj);
            const __m512i shift = _mm512_maskz_loadu_epi32(ms[j], p->shift + cj);
            bv[j] = _mm512_maskz_loadu_epi32(ms[j], J->bias + cj);
            rqs[j] = tfl_pk_rq_init(mult, shift, p->y_zero);
            tfl_pk_rq_u32(&rqs[j], mult, shift, p->y_zero, tfl_pk_sums_small(bv[j], 4 * (int64_t)p->kh * tfl_pk_row_quads(p)));
        }
        /* each its own code, the tiles' uses fixed */
        if (ma > 1 && mb > 1) tfl_amx_gemm(a0, a1, lda, J->rows, J->rowstep, J->kt, b0, b1, b0z, b1z, 2, 2, J->pf, c);
        else if (ma > 1) tfl_amx_gemm(a0, a1, lda, J->rows, J->rowstep, J->kt, b0, b1, b0z, b1z, 2, 1, J->pf, c);
        else if (mb > 1) tfl_amx_gemm(a0, a1, lda, J->rows, J->rowstep, J->kt, b0, b1, b0z, b1z, 1, 2, J->pf, c);
        else tfl_amx_gemm(a0, a1, lda, J->rows, J->rowstep, J->kt, b0, b1, b0z, b1z, 1, 1, J->pf, c);
        if (mb > 1 && tfl_amx_out_pair(J->o, rqs, J->relu, bv, c, o0, r0, c0, J->y + c0, p->oc, ms[1])) {
            if (ma > 1) tfl_amx_out_pair(J->o, rqs, J->relu, bv, c + 512, o1, r1, c0, J->y + c0, p->oc, ms[1]);
            continue;
        }
        for (j = 0; j < mb; ++j) {
            tfl_amx_stage_block(J->o, &rqs[j], J->relu, bv[j], c + 256 * j, r0, c0 + 16 * j, ms[j]);
            if (ma > 1) tfl_amx_stage_block(J->o, &rqs[j], J->relu, bv[j], c + 512 + 256 * j, r1, c0 + 16 * j, ms[j]);
        }
        tfl_amx_put(J->o, c, o0, mb, J->y + c0, p->oc, ms[mb - 1]);
        if (ma > 1) tfl_amx_put(J->o, c + 512, o1, mb, J->y + c0, p->oc, ms[mb - 1]);
    }
}

/* items [begin, end): M outer, each a tile pair of a batch x all channels; N outer, each a channel pair x all the
 * positions */
static void tfl_amx_items(void *ctx, int32_t begin, int32_t end) {
    const tfl_amx_job *J = (const tfl_amx_job *)ctx;
    const int32_t npairs = (J->nb + 1) / 2;
    __attribute__((aligned(64))) uint8_t pack[32 * TFL_AMX_PACK_MAX];
    __attribute__((aligned(64))) int8_t zb[2048];
    int32_t i, b, mp;
    memset(zb, 0, sizeof zb);
    tfl_amx_begin(); /* (this thread's tile configuration) */
    for (i = begin; i < end; ++i) {
        if (J->n_outer) {
            for (b = 0; b < J->p->n; ++b)
                for (mp = 0; mp < J->mpairs; ++mp) tfl_amx_block(J, b, mp, i, i + 1, pack, zb);
        } else {
            tfl_amx_block(J, i / J->mpairs, i % J->mpairs, 0, npairs, pack, zb);
        }
    }
    _tile_release();
}

/* COMPACT: output rows [r0, r1) (of all batches) of x's positions the windows read, unsigned, x_zero ^ 0x80 outside x */
static void tfl_amx_compact_rows(void *ctx, int32_t r0, int32_t r1) {
    const tfl_amx_job *J = (const tfl_amx_job *)ctx;
    const aotc_tfl_conv_params *p = J->p;
    const int8_t *x = J->x;
    const uint8_t zx = (uint8_t)((uint8_t)p->x_zero ^ 0x80u);
    int32_t r, ox;
    for (r = r0; r < r1; ++r) {
        const int32_t b = r / p->oh, iy = r % p->oh * p->sh - p->pad_top;
        uint8_t *row = J->a + (int64_t)r * p->ow * p->c;
        for (ox = 0; ox < p->ow; ++ox, row += p->c) {
            const int32_t ix = ox * p->sw - p->pad_left;
            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) tfl_pk_fill(row, zx, p->c);
            else tfl_pk_xor_copy(row, x + (((int64_t)b * p->h + iy) * p->w + ix) * p->c, p->c);
        }
    }
}

/* the direct CONV_2D p (tfl_amx_takes) on the tiles: its A made in scratch (the span, or COMPACT's image; the
 * span's rows by span_items), then the items over the pool where one is worth it (pool) */
static void tfl_amx_conv(const aotc_tfl_conv_params *p, const aotc_tfl_residual_params *r, const tfl_pk_out *o,
                         const int8_t *x, const int8_t *wp,
                         const int32_t *bias, const int8_t *res, int8_t *y, uint8_t *scratch, void *span_job,
                         void (*span_items)(void *, int32_t, int32_t), int pool) {
    const int32_t ph = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1, pw = (p->ow - 1) * p->sw + p->kw;
    const int32_t rq = tfl_pk_row_quads(p), kq = p->kh * rq;
    __attribute__((aligned(64))) int8_t zlast[1024];
    tfl_amx_job J;
    int64_t at, bt;
    J.relu = r == NULL && p->y_min >= p->y_zero, J.p = p, J.o = o, J.x = x, J.wp = wp, J.res = res, J.bias = bias, J.y = y, J.a = scratch, J.zlast = NULL, J.tail = 0;
    J.mode = tfl_amx_mode(p), J.nb = (p->oc + 15) / 16;
    if (J.mode == TFL_AMX_COMPACT) {
        if (pool) aotc_parallel_for(tfl_amx_compact_rows, &J, p->n * p->oh);
        else tfl_amx_compact_rows(&J, 0, p->n * p->oh);
        J.lda = p->c, J.rowstep = 0, J.bstep = (int64_t)p->oh * p->ow * p->c, J.grid = p->ow;
        J.mv = p->oh * p->ow, J.rows = 1, J.kt = (rq + 15) / 16, J.tail = rq % 16;
    } else {
        if (pool) aotc_parallel_for(span_items, span_job, p->n * ph);
        else span_items(span_job, 0, p->n * ph);
        J.rowstep = (int64_t)p->dh * pw * p->c, J.bstep = (int64_t)ph * pw * p->c;
        if (J.mode == TFL_AMX_SPAN) {
            J.lda = p->c, J.grid = pw, J.mv = (p->oh - 1) * pw + p->ow, J.rows = p->kh, J.kt = (rq + 15) / 16;
            J.tail = rq % 16; /* (1 x 1 only: tfl_amx_mode) */
        } else { /* PACK: the patches' kq quads in whole tiles */
            J.lda = 0, J.grid = p->ow, J.mv = p->oh * p->ow, J.rows = 1, J.kt = (kq + 15) / 16;
            if (kq % 16 != 0) { /* the last block's last K tile: its kq % 16 rows, zeros after them */
                memset(zlast, 0, sizeof zlast);
                memcpy(zlast, wp + ((int64_t)(J.nb - 1) * kq + (kq - kq % 16)) * 64, (size_t)(64 * (kq % 16)));
                J.zlast = zlast;
            }
        }
    }
    J.mpairs = (J.mv + 31) / 32;
    /* M outer (a pair's outputs written whole: 32 positions' rows of all channels), unless the weights are past what
     * the cache keeps between passes over them (TFL_AMX_N_OUTER_BYTES) and N outer streams less: each pass over M
     * reads all the weights (bt), each pass over N all of A (at). (N outer writes a row of y 32 channels at a time,
     * in passes far apart: a 1 x 1 expansion at 14 x 14 took 10 % longer so; ResNet-50's 7 x 7 stage, whose A is
     * small and weights 1 to 2.4 MiB a layer, took as long or longer in A/B runs on a loaded Xeon.) */
    at = (int64_t)p->n * J.mv * 64 * J.rows * J.kt, bt = (int64_t)J.nb * 16 * 64 * J.rows * J.kt;
    J.n_outer = J.mode != TFL_AMX_PACK && bt > TFL_AMX_N_OUTER_BYTES &&
                bt + at * ((J.nb + 1) / 2) < at + bt * p->n * J.mpairs;
    J.pf = bt > TFL_AMX_PF_BYTES;
    {
        const int32_t items = J.n_outer ? (J.nb + 1) / 2 : p->n * J.mpairs;
        if (pool) aotc_parallel_for(tfl_amx_items, &J, items);
        else tfl_amx_items(&J, 0, items);
    }
}
#endif

#endif /* AOTC_TFLITE_INT8_AMX_H */
