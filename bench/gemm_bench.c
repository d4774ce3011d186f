/* The GEMM core (aotc_sgemm_f32) on transformer shapes, in GFLOP/s, against a baseline build of it
 * (before_sgemm_f32: bench/gemm_bench.py compiles the baseline's gemm.c with its entry points renamed and
 * links both here).
 *
 *     gemm_bench [min_ms] [rounds]
 *
 * One line per shape: "name m k n before after ratio before_peak after_peak", each the median over `rounds` (default 7) rounds that
 * time the baseline and the new core back to back (alternating which goes first), each timing the best of 3
 * of at least min_ms (default 10) of this thread's CPU time: load on a shared machine hits both alike, and
 * the ratio is per round; then the FMA peak (peak_gflops) for min_ms, and each build's share of it in that
 * round ("before_peak after_peak": medians). B is a constant weight packed as the compiler packs it (panels of
 * AOTC_GEMM_PANEL columns, k rows each, zero-padded) with a bias row as C_in, or (the attention products,
 * "plain") a run-time row-major B with the core's work memory. The first line, "peak", is the FMA rate of
 * independent multiply-add chains in registers (AVX-512 when built with it), measured in the same run. */
#define _POSIX_C_SOURCE 199309L
#include "aotc_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    const char *name;
    int32_t m, k, n, plain;
} shape;

static const shape SHAPES[] = {
    /* ViT-tiny (d 192, MLP 768, 197 tokens): qkv, proj, fc1, fc2; a head's q k^T and attn v */
    {"vit_qkv", 197, 192, 576, 0},  {"vit_proj", 197, 192, 192, 0}, {"vit_fc1", 197, 192, 768, 0},
    {"vit_fc2", 197, 768, 192, 0},  {"vit_qk", 197, 64, 197, 1},    {"vit_av", 197, 197, 64, 1},
    /* 128 tokens and wider layers */
    {"t128_192", 128, 192, 192, 0}, {"t128_fc1", 128, 256, 1024, 0}, {"t128_fc2", 128, 1024, 256, 0},
    {"t197_768", 197, 768, 768, 0}, {"t197_1024", 197, 1024, 1024, 0}, {"t128_plain", 128, 256, 256, 1},
    /* not transformers (no regression): a 1 x 1 conv's product on a run-time 56 x 56 plane (conv_pointwise),
     * a few rows (batch 3), a short k (a 3 x 3 conv on one channel), a Winograd-like block */
    {"pw_56x56", 64, 64, 3136, 1},  {"rows_3", 3, 512, 1000, 0},    {"k_9", 196, 9, 64, 0},
    {"wino_64", 64, 128, 256, 0},
};

static volatile float sink;

#if defined(__AVX512F__)
#include <immintrin.h>
/* GFLOP/s of 24 independent chains of 512-bit multiply-adds */
static double peak_gflops(double min_s) {
    __m512 v[24];
    const __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(1e-9f);
    long reps = 0;
    int i;
    double t0, t;
    for (i = 0; i < 24; ++i) v[i] = _mm512_set1_ps((float)i);
    t0 = now_s();
    do {
        long r;
        for (r = 0; r < 100000; ++r) {
            _Pragma("GCC unroll 24") for (i = 0; i < 24; ++i) v[i] = _mm512_fmadd_ps(v[i], x, y);
        }
        reps += 100000;
        t = now_s() - t0;
    } while (t < min_s);
    for (i = 1; i < 24; ++i) v[0] = _mm512_add_ps(v[0], v[i]);
    sink = _mm512_reduce_add_ps(v[0]);
    return (double)reps * 24 * 16 * 2 / t * 1e-9;
}
#else
static double peak_gflops(double min_s) {
    (void)min_s;
    return 0.0;
}
#endif

static float frand(void) { return (float)rand() / (float)RAND_MAX - 0.5f; }

typedef void (*sgemm_fn)(const aotc_sgemm_params *, const float *, const float *, const float *, float *, float *);
void before_sgemm_f32(const aotc_sgemm_params *p, const float *a, const float *b, const float *c_in, float *c,
                      float *work);

/* seconds per product, the best of 3 timings of at least min_s */
static double time_product(sgemm_fn f, const aotc_sgemm_params *p, const float *a, const float *b, const float *ci,
                           float *c, float *work, double min_s) {
    double best = 1e30;
    int round;
    for (round = 0; round < 3; ++round) {
        long reps = 0;
        const double t0 = now_s();
        double t;
        do {
            f(p, a, b, ci, c, work);
            ++reps;
            t = now_s() - t0;
        } while (t < min_s);
        if (t / reps < best) best = t / reps;
    }
    return best;
}

static int cmp_double(const void *x, const void *y) {
    const double u = *(const double *)x, v = *(const double *)y;
    return u < v ? -1 : u > v;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define MAX_ROUNDS 64

static void bench_shape(const shape *s, double min_s, int rounds) {
    const int32_t m = s->m, k = s->k, n = s->n, panels = (n + AOTC_GEMM_PANEL - 1) / AOTC_GEMM_PANEL;
    const size_t bn = s->plain ? (size_t)k * n : (size_t)panels * AOTC_GEMM_PANEL * k;
    float *a = malloc((size_t)m * k * sizeof(float)), *b = calloc(bn, sizeof(float));
    float *c = malloc((size_t)m * n * sizeof(float)), *bias = malloc((size_t)n * sizeof(float));
    float *work = malloc(AOTC_SGEMM_WORK_BYTES);
    aotc_sgemm_params p;
    double tb[MAX_ROUNDS], ta[MAX_ROUNDS], ratio[MAX_ROUNDS], pb[MAX_ROUNDS], pa[MAX_ROUNDS];
    const double flop = 2.0 * m * k * n;
    int32_t i, j, round;
    for (i = 0; i < m * k; ++i) a[i] = frand();
    for (i = 0; i < k; ++i)
        for (j = 0; j < n; ++j) {
            const size_t at = s->plain ? (size_t)i * n + j
                                       : ((size_t)(j / AOTC_GEMM_PANEL) * k + i) * AOTC_GEMM_PANEL + j % AOTC_GEMM_PANEL;
            b[at] = frand();
        }
    for (j = 0; j < n; ++j) bias[j] = frand();
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.a_rs = k, p.a_cs = 1, p.ldc = n, p.alpha = 1.0f, p.beta = 1.0f;
    if (s->plain) {
        p.b_rs = n, p.b_ps = AOTC_GEMM_PANEL, p.b_padded = 0;
    } else {
        p.b_rs = AOTC_GEMM_PANEL, p.b_ps = k * AOTC_GEMM_PANEL, p.b_padded = 1, p.cin_rs = 0, p.cin_cs = 1;
    }
    for (round = 0; round < rounds; ++round) {
        const float *ci = s->plain ? NULL : bias;
        float *w = s->plain ? work : NULL;
        if (round % 2 == 0) {
            tb[round] = time_product(before_sgemm_f32, &p, a, b, ci, c, w, min_s);
            ta[round] = time_product(aotc_sgemm_f32, &p, a, b, ci, c, w, min_s);
        } else {
            ta[round] = time_product(aotc_sgemm_f32, &p, a, b, ci, c, w, min_s);
            tb[round] = time_product(before_sgemm_f32, &p, a, b, ci, c, w, min_s);
        }
        ratio[round] = tb[round] / ta[round];
        tb[round] = flop / tb[round] * 1e-9, ta[round] = flop / ta[round] * 1e-9;
        pa[round] = peak_gflops(min_s); /* the peak in this round: the shares of it */
        pb[round] = tb[round] / pa[round], pa[round] = ta[round] / pa[round];
    }
    sink = c[0];
    printf("%s %d %d %d %.1f %.1f %.3f %.3f %.3f\n", s->name, (int)m, (int)k, (int)n, median(tb, rounds),
           median(ta, rounds), median(ratio, rounds), median(pb, rounds), median(pa, rounds));
    fflush(stdout);
    free(a), free(b), free(c), free(bias), free(work);
}

int main(int argc, char **argv) {
    const double min_s = (argc > 1 ? atof(argv[1]) : 10.0) * 1e-3;
    const int rounds = argc > 2 && atoi(argv[2]) > 0 ? (atoi(argv[2]) < MAX_ROUNDS ? atoi(argv[2]) : MAX_ROUNDS) : 7;
    const double peak0 = peak_gflops(10 * min_s);
    size_t i;
    srand(1);
    for (i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; ++i) bench_shape(&SHAPES[i], min_s, rounds);
    printf("peak 0 0 0 %.1f %.1f 1 1 1\n", peak0, peak_gflops(10 * min_s)); /* before and after the shapes */
    return 0;
}
