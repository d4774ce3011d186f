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
 * bytes on; the last K tile from b0z, b1z instead) over rows kernel rows, into c[tile][16][16] (tile 2 ia + ib) */
TFL_PK_INLINE void tfl_amx_gemm(const uint8_t *a0, const uint8_t *a1, int64_t lda, int32_t rows, int64_t rowstep,
                                int32_t kt, const int8_t *b0, const int8_t *b1, const int8_t *b0z, const int8_t *b1z,
                                int ma, int mb, int32_t *c) {
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
            if (kk + TFL_AMX_PF < tiles) { /* the weights' tiles TFL_AMX_PF steps on, into L1 */
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

typedef struct tfl_amx_outk_s tfl_amx_outk;

/* a direct CONV_2D on the tiles: the layer, its A, and its loops */
typedef struct {
    const aotc_tfl_conv_params *p;
    const tfl_pk_out *o;
    const tfl_amx_outk *k; /* its output stage's constants */
    const int8_t *x, *wp, *res;
    const int32_t *bias;
    int8_t *y;
    uint8_t *a;         /* SPAN: the span; COMPACT: the compact image; PACK: the span */
    int mode, n_outer;  /* the loop over N outside the one over M */
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

/* The output stage of tfl_pk_store_rq, bit for bit, with what a layer's constants allow done in fewer instructions
 * (it is most of a 1 x 1 conv's time on the tiles: 64 sums an output): no left shift where no channel of the block
 * has one (tfl_amx_requant: tfl_x86_requant less its first shift); no clamp where the range is int8's own (the
 * narrowing then saturates); and the fused ADD's two input rescalings in 32-bit lanes (tfl_amx_rescale9), where
 * TFLite's ADD has them as it makes them: a multiplier m >= 0 without a left shift, a right shift e of 0 to 30. Its
 * input is d 2^20 with |d| = |x - zero| < 2^9, so SaturatingRoundingDoublingHighMul(d 2^20, m) = floor((d m 2^20 +
 * 2^30) / 2^31) = floor((d m + 2^10) / 2^11) = d (m >> 11) + floor((d (m & 2047) + 2^10) / 2^11): products under
 * 2^28 and 2^19; RoundingDivideByPOT(h, e) = floor((h + 2^(e - 1) - [h < 0]) / 2^e) for e > 0, h for e = 0. Where m
 * is 2^k (k >= 11) and e = 0 (the input of the larger scale: TFLite's multiplier 1/2, m = 2^30) that is d 2^(k - 11),
 * one shift (tfl_amx_rescale_pow2). */
struct tfl_amx_outk_s {
    const tfl_pk_out *o;
    int sat;   /* the conv's range is int8's (no ADD) or the ADD's is: the saturating narrowing clamps */
    int add32; /* the ADD's input rescalings in 32-bit lanes */
    int pow1, pow2; /* ... input 1 / 2's by a shift (m = 2^k, e = 0) */
    int shl_o; /* the ADD's output rescaling has a left shift */
    const uint8_t *lut; /* the ADD's outputs by (conv's output + 128) 256 + residual + 128, where made (tfl_amx_lut) */
    __m512i mh1, ml1, c1, sg1, mh2, ml2, c2, sg2;
    __m128i e1, e2, k1, k2;
};

TFL_PK_INLINE __m512i tfl_amx_requant(__m512i acc, const tfl_x86_rq *q, int shl) {
    const __m512i low = _mm512_set1_epi64(-((int64_t)1 << 30));
    const __m512i a = shl ? _mm512_sllv_epi32(acc, q->left) : acc;
    const __m512i pe = _mm512_mul_epi32(a, q->mult), po = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), q->mult_odd);
    __m512i te = _mm512_add_epi64(pe, q->k_e), to = _mm512_add_epi64(po, q->k_o);
    te = _mm512_mask_add_epi64(te, _mm512_cmplt_epi64_mask(pe, low), te, q->fix_e);
    to = _mm512_mask_add_epi64(to, _mm512_cmplt_epi64_mask(po, low), to, q->fix_o);
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srav_epi64(te, q->sh_e),
                                   _mm512_slli_epi64(_mm512_srav_epi64(to, q->sh_o), 32));
}

/* (sg: all ones for e > 0, else 0) */
TFL_PK_INLINE __m512i tfl_amx_rescale9(__m512i d, __m512i mh, __m512i ml, __m512i c, __m512i sg, __m128i e) {
    const __m512i lo = _mm512_srai_epi32(_mm512_add_epi32(_mm512_madd_epi16(d, ml), _mm512_set1_epi32(1024)), 11);
    const __m512i h = _mm512_add_epi32(_mm512_mullo_epi32(d, mh), lo);
    return _mm512_sra_epi32(_mm512_add_epi32(_mm512_add_epi32(h, c), _mm512_and_si512(_mm512_srai_epi32(h, 31), sg)), e);
}

/* one input's rescaling in 32-bit lanes: by a shift (pow) or tfl_amx_rescale9 */
TFL_PK_INLINE __m512i tfl_amx_rescale(__m512i d, int pow, __m128i k, __m512i mh, __m512i ml, __m512i c, __m512i sg,
                                      __m128i e) {
    return pow ? _mm512_sll_epi32(d, k) : tfl_amx_rescale9(d, mh, ml, c, sg, e);
}

/* whether m, s make a rescaling in 32-bit lanes, and whether a shift (by *k) */
static int tfl_amx_rescalable(int32_t m, int32_t s, int *pow, int32_t *k) {
    *pow = 0, *k = 0;
    if (m < 0 || s > 0 || s < -30) return 0;
    if (s == 0 && m >= 2048 && (m & (m - 1)) == 0) {
        while ((1 << (*k + 11)) != m) ++*k;
        *pow = 1;
    }
    return 1;
}

static void tfl_amx_outk_init(tfl_amx_outk *k, const tfl_pk_out *o, const aotc_tfl_conv_params *p,
                              const aotc_tfl_residual_params *r) {
    const aotc_tfl_binary_params *a = r != NULL ? &r->add : NULL;
    k->o = o;
    k->sat = a == NULL ? p->y_min <= -128 && p->y_max >= 127 : a->y_min <= -128 && a->y_max >= 127;
    int32_t k1, k2;
    k->add32 = a != NULL && tfl_amx_rescalable(a->m1, a->s1, &k->pow1, &k1) &&
               tfl_amx_rescalable(a->m2, a->s2, &k->pow2, &k2);
    k->shl_o = a != NULL && a->shift > 0;
    if (k->add32) {
        k->mh1 = _mm512_set1_epi32(a->m1 >> 11), k->ml1 = _mm512_set1_epi32(a->m1 & 2047);
        k->mh2 = _mm512_set1_epi32(a->m2 >> 11), k->ml2 = _mm512_set1_epi32(a->m2 & 2047);
        k->c1 = _mm512_set1_epi32(a->s1 < 0 ? 1 << (-a->s1 - 1) : 0);
        k->c2 = _mm512_set1_epi32(a->s2 < 0 ? 1 << (-a->s2 - 1) : 0);
        k->sg1 = _mm512_set1_epi32(a->s1 < 0 ? -1 : 0), k->sg2 = _mm512_set1_epi32(a->s2 < 0 ? -1 : 0);
        k->e1 = _mm_cvtsi32_si128(-a->s1), k->e2 = _mm_cvtsi32_si128(-a->s2);
        k->k1 = _mm_cvtsi32_si128(k1), k->k2 = _mm_cvtsi32_si128(k2);
    }
}

/* one row's 16 sums (with the bias) through the output stage to y (a residual at res where the ADD is fused) */
TFL_PK_INLINE void tfl_amx_store(const tfl_amx_outk *k, const tfl_x86_rq *q, int shl, int add, int add32, int sat,
                                 int pow1, int pow2, int lut, __m512i acc, int8_t *y, const int8_t *res, __mmask16 m) {
    const tfl_pk_out *o = k->o;
    __m512i v = _mm512_add_epi32(tfl_amx_requant(acc, q, shl), o->yz);
    if (add || !sat) v = _mm512_min_epi32(_mm512_max_epi32(v, o->lo), o->hi);
    if (add && lut) { /* the ADD's output from its table: a byte at each lane's index, read as a dword */
        const __m512i rv = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, res));
        const __m512i i = _mm512_add_epi32(_mm512_add_epi32(_mm512_slli_epi32(v, 8), rv), _mm512_set1_epi32(32896));
        _mm_mask_storeu_epi8(y, m, _mm512_cvtepi32_epi8(_mm512_i32gather_epi32(i, (const void *)k->lut, 1)));
        return;
    }
    if (add) {
        const __m512i rv = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, res));
        const __m512i x1 = o->conv_x1 ? v : rv, x2 = o->conv_x1 ? rv : v;
        __m512i a, b;
        if (add32) {
            a = tfl_amx_rescale(_mm512_sub_epi32(x1, o->z1), pow1, k->k1, k->mh1, k->ml1, k->c1, k->sg1, k->e1);
            b = tfl_amx_rescale(_mm512_sub_epi32(x2, o->z2), pow2, k->k2, k->mh2, k->ml2, k->c2, k->sg2, k->e2);
        } else {
            a = tfl_x86_requant(_mm512_slli_epi32(_mm512_sub_epi32(x1, o->z1), 20), &o->r1);
            b = tfl_x86_requant(_mm512_slli_epi32(_mm512_sub_epi32(x2, o->z2), 20), &o->r2);
        }
        v = _mm512_add_epi32(tfl_amx_requant(_mm512_add_epi32(a, b), &o->ro, k->shl_o), o->ayz);
        if (!sat) v = _mm512_min_epi32(_mm512_max_epi32(v, o->alo), o->ahi);
    }
    _mm_mask_storeu_epi8(y, m, sat ? _mm512_cvtsepi32_epi8(v) : _mm512_cvtepi32_epi8(v));
}

/* The fused ADD's outputs, all 65,536 of them, by the conv's output and the residual (int8 both; table[(v + 128) 256
 * + r + 128]), as tfl_pk_store_rq makes them (each input's 256 rescalings first, then the output's 65,536), into
 * table (65,536 bytes and 4 past them: read as dwords): a layer of many outputs (TFL_AMX_LUT_MIN) then reads each
 * from the table (a gather) instead of three rescalings a lane */
#ifndef TFL_AMX_LUT_MIN
#define TFL_AMX_LUT_MIN (1 << 17) /* outputs of a fused ADD past which its table pays */
#endif
static void tfl_amx_lut(const tfl_pk_out *o, uint8_t *table) {
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __attribute__((aligned(64))) int32_t ta[256], tb[256]; /* each input's rescaling, by its value + 128 */
    int32_t v, r0;
    for (r0 = 0; r0 < 256; r0 += 16) {
        const __m512i x = _mm512_add_epi32(iota, _mm512_set1_epi32(r0 - 128));
        _mm512_store_si512(ta + r0, tfl_x86_requant(_mm512_slli_epi32(_mm512_sub_epi32(x, o->z1), 20), &o->r1));
        _mm512_store_si512(tb + r0, tfl_x86_requant(_mm512_slli_epi32(_mm512_sub_epi32(x, o->z2), 20), &o->r2));
    }
    for (v = 0; v < 256; ++v) { /* the conv's value v - 128, the residual's r0 + 16 lanes - 128 */
        const __m512i cv = _mm512_set1_epi32(o->conv_x1 ? ta[v] : tb[v]);
        const int32_t *rt = o->conv_x1 ? tb : ta;
        for (r0 = 0; r0 < 256; r0 += 16) {
            __m512i t = _mm512_add_epi32(tfl_x86_requant(_mm512_add_epi32(cv, _mm512_load_si512(rt + r0)), &o->ro), o->ayz);
            t = _mm512_min_epi32(_mm512_max_epi32(t, o->alo), o->ahi);
            _mm_storeu_si128((__m128i *)(table + v * 256 + r0), _mm512_cvtepi32_epi8(t));
        }
    }
    memset(table + 65536, 0, 4);
}

/* the rows of one C tile (c: 16 rows x 16 channels; row r to position off[r], none where -1), each its own code by
 * the flags */
TFL_PK_INLINE void tfl_amx_out_rows(const tfl_amx_outk *k, const tfl_x86_rq *q, __m512i bias, const int32_t *c,
                                    const int64_t *off, int32_t oc, int8_t *y, const int8_t *res, __mmask16 m,
                                    int shl, int add, int add32, int sat, int pow1, int pow2, int lut) {
    int r;
    for (r = 0; r < 16; ++r)
        if (off[r] >= 0) {
            const int64_t at = off[r] * oc;
            tfl_amx_store(k, q, shl, add, add32, sat, pow1, pow2, lut, _mm512_add_epi32(_mm512_load_si512(c + 16 * r), bias), y + at,
                          res + at, m);
        }
}

/* the sums of one C tile (c: 16 rows x 16 channels; row r position off[r]) plus the bias, through the output stage,
 * to channel block c0 (m: its channels; shl: some channel's left shift) */
static void tfl_amx_out(const tfl_amx_job *J, const tfl_x86_rq *q, int shl, __m512i bias, const int32_t *c,
                        const int64_t *off, int32_t c0, __mmask16 m) {
    const tfl_amx_outk *k = J->k;
    const int32_t oc = J->p->oc;
    int8_t *y = J->y + c0;
    const int8_t *res = (J->res != NULL ? J->res : J->y) + c0;
    if (shl) { /* (rare: a multiplier past 1) */
        tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 1, k->o->add, 0, 0, 0, 0, 0);
    } else if (k->o->add && k->lut != NULL) {
        tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 0, 1, 0, 0, 0, 0, 1);
    } else if (!k->o->add) {
        if (k->sat) tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 0, 0, 0, 1, 0, 0, 0);
        else tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 0, 0, 0, 0, 0, 0, 0);
    } else if (k->add32 && k->sat) { /* (ResNet's: one input by a shift) */
        if (k->pow1 && !k->pow2) tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 0, 1, 1, 1, 1, 0, 0);
        else if (k->pow2 && !k->pow1) tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 0, 1, 1, 1, 0, 1, 0);
        else tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 0, 1, 1, 1, k->pow1, k->pow2, 0);
    } else if (k->add32) {
        tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 0, 1, 1, 0, k->pow1, k->pow2, 0);
    } else {
        tfl_amx_out_rows(k, q, bias, c, off, oc, y, res, m, 0, 1, 0, 0, 0, 0, 0);
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
    int32_t r, j, pos, ox, oy;
    for (r = 0, pos = p0; r < 32 && pos < J->mv; ++r, ++pos) {
        uint8_t *row = buf + (int64_t)r * kb;
        const uint8_t *src;
        ox = pos % p->ow, oy = pos / p->ow;
        src = J->a + (((int64_t)b * ph + oy * p->sh) * pw + ox * p->sw) * p->c;
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
    }
    for (np = n0; np < n1; ++np) {
        const int32_t c0 = 32 * np, mb = c0 + 16 < p->oc ? 2 : 1;
        const int8_t *b0 = J->wp + (int64_t)(2 * np) * wstep, *b1 = b0 + wstep;
        const int8_t *b0z = b0 + (int64_t)1024 * (tiles - 1), *b1z = b1 + (int64_t)1024 * (tiles - 1);
        __m512i bv[2];
        tfl_x86_rq rqs[2];
        __mmask16 ms[2];
        int shl[2];
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
            bv[j] = _mm512_maskz_loadu_epi32(ms[j], J->bias + cj);
            rqs[j] = tfl_x86_rq_init(_mm512_maskz_loadu_epi32(ms[j], p->mult + cj),
                                     _mm512_maskz_loadu_epi32(ms[j], p->shift + cj));
            shl[j] = _mm512_test_epi32_mask(rqs[j].left, rqs[j].left) != 0;
        }
        /* each its own code, the tiles' uses fixed */
        if (ma > 1 && mb > 1) tfl_amx_gemm(a0, a1, lda, J->rows, J->rowstep, J->kt, b0, b1, b0z, b1z, 2, 2, c);
        else if (ma > 1) tfl_amx_gemm(a0, a1, lda, J->rows, J->rowstep, J->kt, b0, b1, b0z, b1z, 2, 1, c);
        else if (mb > 1) tfl_amx_gemm(a0, a1, lda, J->rows, J->rowstep, J->kt, b0, b1, b0z, b1z, 1, 2, c);
        else tfl_amx_gemm(a0, a1, lda, J->rows, J->rowstep, J->kt, b0, b1, b0z, b1z, 1, 1, c);
        for (j = 0; j < mb; ++j) {
            tfl_amx_out(J, &rqs[j], shl[j], bv[j], c + 256 * j, o0, c0 + 16 * j, ms[j]);
            if (ma > 1) tfl_amx_out(J, &rqs[j], shl[j], bv[j], c + 512 + 256 * j, o1, c0 + 16 * j, ms[j]);
        }
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
    __attribute__((aligned(64))) uint8_t lut[65536 + 64];
    tfl_amx_job J;
    tfl_amx_outk k;
    int64_t at, bt;
    tfl_amx_outk_init(&k, o, p, r);
    k.lut = NULL;
    if (o->add && (int64_t)p->n * p->oh * p->ow * p->oc >= TFL_AMX_LUT_MIN) {
        tfl_amx_lut(o, lut);
        k.lut = lut;
    }
    J.k = &k, J.p = p, J.o = o, J.x = x, J.wp = wp, J.res = res, J.bias = bias, J.y = y, J.a = scratch, J.zlast = NULL, J.tail = 0;
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
     * in passes far apart: a 1 x 1 expansion at 14 x 14 took 10 % longer so.) */
    at = (int64_t)p->n * J.mv * 64 * J.rows * J.kt, bt = (int64_t)J.nb * 16 * 64 * J.rows * J.kt;
    J.n_outer = J.mode != TFL_AMX_PACK && bt > TFL_AMX_N_OUTER_BYTES &&
                bt + at * ((J.nb + 1) / 2) < at + bt * p->n * J.mpairs;
    {
        const int32_t items = J.n_outer ? (J.nb + 1) / 2 : p->n * J.mpairs;
        if (pool) aotc_parallel_for(tfl_amx_items, &J, items);
        else tfl_amx_items(&J, 0, items);
    }
}
#endif

#endif /* AOTC_TFLITE_INT8_AMX_H */
