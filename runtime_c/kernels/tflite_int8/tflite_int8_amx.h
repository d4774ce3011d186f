/* The direct CONV_2D of tflite_int8_packed.c on Intel AMX (TDPBUSD: tiles of 16 rows x 64 bytes, u8 x s8 into int32,
 * sums modulo 2^32 as vpdpbusd's), built with AMX-TILE and AMX-INT8 (-march=sapphirerapids or later, -march=native
 * on such a host) beside AVX-512 VNNI, on Linux x86-64, without AOTC_NO_INTRINSICS (TFL_PK_AMX). Included by
 * tflite_int8_packed.c after its VNNI output stage (tfl_pk_out, tfl_pk_store_rq), which the sums go through
 * unchanged: bit for bit the VNNI path's.
 *
 * The packed weights are already AMX's B layout: a block of 16 channels is kq quads of 64 bytes (16 channels x 4
 * bytes), so 16 consecutive quads are a B tile (stride 64). The A tile is 16 positions x 16 quads of one kernel row's
 * run: positions of one output row are sw c bytes apart in the span, a tile loaded in place at that stride; 16
 * positions not so (an output row's end crossed, the run's last ones) are copied a row each into a tile on the stack
 * (tfl_amx_gather). A kernel row's run of rq quads goes 16 quads a tile; its last rq % 16 (the tail) with a B tile
 * whose rows past them are zero (copied on the stack), its A tile read in place past the run (TFL_PK_SLACK: 64 bytes
 * past the span) times those zeros. A step: 2 A tiles (32 positions) x 2 B tiles (32 channels) into 4 C tiles, the
 * 8 tile registers; the C tiles then stored on the stack and requantised 16 channels at a time.
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

#define TFL_AMX_MIN_QUADS 16 /* the shortest patch (quads) the tiles take: a B tile's rows; shorter ones (a stem's,
                              * a 1 x 1 conv's on 32 channels or fewer) waste most of each tile: VNNI */

/* whether the tiles take the direct CONV_2D p (the process granted them) */
static int tfl_amx_takes(const aotc_tfl_conv_params *p) {
    return p->kh * tfl_pk_row_quads(p) >= TFL_AMX_MIN_QUADS && tfl_amx_allowed();
}

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

/* A tile's source: positions t .. t + 15 of the run (n of them), quad q0 of kernel row j; in place (*stride: sw c)
 * where they are 16 at that stride, else copied into buf (64 bytes a position; the rows past n left as they are:
 * their sums are not stored) */
TFL_PK_INLINE const uint8_t *tfl_amx_a(const uint8_t *const *a, int32_t t, int32_t n, int inplace, int64_t at,
                                       uint8_t *buf) {
    int32_t i;
    if (inplace) return a[t] + at;
    for (i = 0; i < 16 && t + i < n; ++i) _mm512_storeu_si512(buf + 64 * i, _mm512_loadu_si512(a[t + i] + at));
    return buf;
}

/* whether positions t .. t + 15 of the run (n) are 16 at a stride of s bytes */
static int tfl_amx_strided(const uint8_t *const *a, int32_t t, int32_t n, int64_t s) {
    int32_t i;
    if (t + 16 > n) return 0;
    for (i = 1; i < 16; ++i)
        if (a[t + i] - a[t + i - 1] != s) return 0;
    return 1;
}

/* up to 32 positions from t (ma: 1 or 2 A tiles) x up to 2 blocks of 16 channels (mb: 1 or 2 B tiles; wb the first
 * block's weights, wstep bytes to the next), kh runs of rq quads each (rowstep apart), into sums[tile][16][16]
 * (tile 2 ia + ib) */
TFL_PK_INLINE void tfl_amx_step(const uint8_t *const *a, int32_t t, int32_t n, const int inplace[2], int64_t stride,
                                int32_t kh, int64_t rowstep, int32_t rq, const int8_t *wb, int64_t wstep, int ma,
                                int mb, uint8_t *abuf, uint8_t *bbuf, int32_t *sums) {
    const int32_t tail = rq % 16;
    int32_t j, q0, i;
    _tile_zero(0);
    if (mb > 1) _tile_zero(1);
    if (ma > 1) _tile_zero(2);
    if (ma > 1 && mb > 1) _tile_zero(3);
    for (j = 0; j < kh; ++j)
        for (q0 = 0; q0 < rq; q0 += 16) {
            const int64_t at = j * rowstep + 4 * q0, wq = (int64_t)64 * ((int64_t)j * rq + q0);
            const uint8_t *a0 = tfl_amx_a(a, t, n, inplace[0], at, abuf);
            const int8_t *b0 = wb + wq, *b1 = wb + wstep + wq;
            int64_t bs = 64;
            if (q0 + 16 > rq) { /* the run's tail: its weights' rows, zeros after them */
                for (i = 0; i < tail; ++i) {
                    _mm512_storeu_si512(bbuf + 64 * i, _mm512_loadu_si512(b0 + 64 * i));
                    if (mb > 1) _mm512_storeu_si512(bbuf + 1024 + 64 * i, _mm512_loadu_si512(b1 + 64 * i));
                }
                b0 = (const int8_t *)bbuf, b1 = (const int8_t *)bbuf + 1024;
            }
            _tile_loadd(4, a0, inplace[0] ? stride : 64);
            _tile_loadd(6, b0, bs);
            _tile_dpbusd(0, 4, 6);
            if (mb > 1) {
                _tile_loadd(7, b1, bs);
                _tile_dpbusd(1, 4, 7);
            }
            if (ma > 1) {
                const uint8_t *a1 = tfl_amx_a(a, t + 16, n, inplace[1], at, abuf + 1024);
                _tile_loadd(5, a1, inplace[1] ? stride : 64);
                _tile_dpbusd(2, 5, 6);
                if (mb > 1) _tile_dpbusd(3, 5, 7);
            }
        }
    _tile_stored(0, sums, 64);
    if (mb > 1) _tile_stored(1, sums + 256, 64);
    if (ma > 1) _tile_stored(2, sums + 512, 64);
    if (ma > 1 && mb > 1) _tile_stored(3, sums + 768, 64);
}

/* n (<= TFL_PK_RUN) positions of a direct CONV_2D (position t's patch: kh runs of rq quads, run j at a[t] + j
 * rowstep; positions of an output row sw c bytes apart) x the channels c_begin .. c_end - 1 (c_begin a multiple of
 * 16, at most 4 blocks), to y at the first position, by the tiles; the tile configuration loaded (tfl_amx_begin) */
static void tfl_amx_conv_run(const aotc_tfl_conv_params *p, const uint8_t *const *a, int32_t n, int64_t rowstep,
                             int32_t rq, const int8_t *wp, const int32_t *bias, int32_t c_begin, int32_t c_end,
                             const tfl_pk_out *o, int8_t *y, const int8_t *res) {
    const int32_t kh = p->kh, oc = p->oc, nb = (c_end - c_begin + 15) / 16;
    const int64_t stride = (int64_t)p->sw * p->c, wstep = (int64_t)64 * kh * rq;
    __attribute__((aligned(64))) uint8_t abuf[2048], bbuf[2048];
    __attribute__((aligned(64))) int32_t sums[1024];
    __m512i bv[4];
    tfl_x86_rq rqs[4];
    __mmask16 ms[4];
    int32_t t, r, jb, j;
    memset(abuf, 0, sizeof abuf), memset(bbuf, 0, sizeof bbuf);
    for (j = 0; j < nb; ++j) {
        const int32_t c = c_begin + 16 * j, left = c_end - c;
        ms[j] = (__mmask16)(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
        bv[j] = _mm512_maskz_loadu_epi32(ms[j], bias + c);
        rqs[j] = tfl_x86_rq_init(_mm512_maskz_loadu_epi32(ms[j], p->mult + c), _mm512_maskz_loadu_epi32(ms[j], p->shift + c));
    }
    for (t = 0; t < n; t += 32) {
        const int ma = n - t > 16 ? 2 : 1;
        int inplace[2];
        inplace[0] = tfl_amx_strided(a, t, n, stride), inplace[1] = ma > 1 && tfl_amx_strided(a, t + 16, n, stride);
        for (jb = 0; jb < nb; jb += 2) {
            const int mb = nb - jb > 1 ? 2 : 1;
            const int8_t *wb = wp + (int64_t)(c_begin / 16 + jb) * wstep;
            /* each its own code, the tiles' uses fixed */
            if (ma > 1 && mb > 1) tfl_amx_step(a, t, n, inplace, stride, kh, rowstep, rq, wb, wstep, 2, 2, abuf, bbuf, sums);
            else if (ma > 1) tfl_amx_step(a, t, n, inplace, stride, kh, rowstep, rq, wb, wstep, 2, 1, abuf, bbuf, sums);
            else if (mb > 1) tfl_amx_step(a, t, n, inplace, stride, kh, rowstep, rq, wb, wstep, 1, 2, abuf, bbuf, sums);
            else tfl_amx_step(a, t, n, inplace, stride, kh, rowstep, rq, wb, wstep, 1, 1, abuf, bbuf, sums);
            for (j = jb; j < jb + mb; ++j) { /* the sums plus the bias, requantised: position t + r, channel block j */
                const tfl_x86_rq q = rqs[j];
                const int32_t *s = sums + 256 * (j - jb);
                const int64_t c = c_begin + 16 * j;
                for (r = 0; r < 32 && t + r < n; ++r) {
                    const __m512i acc = _mm512_add_epi32(_mm512_load_si512(s + (r / 16) * 512 + (r % 16) * 16), bv[j]);
                    tfl_pk_store_rq(o, &q, acc, y + (int64_t)(t + r) * oc + c, res + (int64_t)(t + r) * oc + c, ms[j]);
                }
            }
        }
    }
}
#endif

#endif /* AOTC_TFLITE_INT8_AMX_H */
