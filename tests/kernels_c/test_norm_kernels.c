/* The norm kernels (aotc_norm.h, norm.c) against the references (norm_ref.c) over random shapes:
 * every entry point, in place half of the time where the kernel allows it, rows of 1 to 700 (past
 * the statistics' chunks of AOTC_NORM_CHUNK and lanes of AOTC_NORM_LANES), inputs with an offset
 * up to 1000 times their spread (the shifted sums' case), Softmax along the last axis and along one
 * with inner dims (its scratch exactly 2 * inner floats), a few -inf among Softmax's inputs.
 * Tolerances, u = 2^-24, from the kernels' float arithmetic (the references are double):
 *   BatchNormalization: 2 u of |x scale| + |shift| (a multiply and an add); the preparation 3 u of
 *     scale, 4 u of |beta| + |mean scale|.
 *   InstanceNormalization, LayerNormalization: a shifted sum of n squares is within (n + 4) u of
 *     8 R^2, R the row's largest |x - mean| (Higham 4.2; the shift x[0] is within 2R of every x),
 *     so 1 / sqrt(var + epsilon) = a within 4 (n + 4) u R^2 a^2 relative, the mean within (n + 4)
 *     u 2R: y within (n + 8) u |scale| a R (4 R^2 a^2 + 2) + 4 u (|y| + |bias|); and the mean as a
 *     float is only within u |mean| (of which x - mean keeps all: 2 u |mean| a |scale| more; and
 *     InstanceNormalization's x a + (bias - mean a) rounds x a: 2 u |x| a |scale|). Mean (summed in
 *     double) 2 u of |mean| + u R; inv_std_dev its relative bound. With stash_type double: 4 u of
 *     |x a scale| + |bias| (three float roundings after the statistics).
 *   RMSNormalization: ((n + 4) u / 2 + 4 u) |y|; in double 4 u |y|.
 *   LayerNormalization over the middle dim ([rows, n, inner], 1 to 80 positions: blocks of
 *     AOTC_NORM_INNER_BLOCK and tails): against the row reference on the transposed input, the row
 *     kernel's bound.
 *   LRN: (|beta| (k + 4) + 12) u |y|, k the window's channels (its float sum of squares, then powf
 *     within 4 ulp, a division).
 *   Softmax: e^(x - max) within 1 ulp (fast_math.h) of e^(x - max rounded), that rounding within
 *     D u relative (D = max - min of the line); a sum of n: (n + 2D + 12) u |y|. LogSoftmax: the
 *     same relative error of the sum, absolute in its log, + u D + 2 u |y|.
 *
 *     test_norm_kernels [seed] [shapes per entry point] */
#include "aotc_norm.h"
#include "kernels_ref.h"
#include "test_compare.h"

#define U (1.0 / 16777216.0)

enum { N_BATCHNORM, N_PREPARE, N_INSTANCE, N_LAYER, N_LAYER_F64, N_RMS, N_RMS_F64, N_LRN, N_SOFTMAX, N_LOG_SOFTMAX,
       N_LAYER_INNER, N_COUNT };
static const char *const NAMES[N_COUNT] = {
    "aotc_batchnorm_f32", "aotc_batchnorm_prepare_f32", "aotc_instance_norm_f32", "aotc_layer_norm_f32",
    "aotc_layer_norm_f64stats_f32", "aotc_rms_norm_f32", "aotc_rms_norm_f64stats_f32", "aotc_lrn_f32",
    "aotc_softmax_f32", "aotc_log_softmax_f32", "aotc_layer_norm_inner_f32"};

/* n values offset + spread * [-1, 1): the offset 0 or, a third of the time, up to 1000 spreads. */
static float *draw_row_values(size_t n) {
    const float spread = ldexpf(1.0f, (int)rand_int(-3, 3));
    const float offset = chance(1, 3) ? spread * (float)rand_int(-1000, 1000) : 0.0f;
    float *x = test_alloc(n);
    size_t i;
    for (i = 0; i < n; ++i) x[i] = offset + spread * x[i];
    return x;
}

/* Largest |x - mean| and the mean of n values, in double. */
static double spread_of(const float *x, int32_t n, double *mean) {
    double s = 0.0, r = 0.0;
    int32_t i;
    for (i = 0; i < n; ++i) s += x[i];
    *mean = s / n;
    for (i = 0; i < n; ++i) r = fabs(x[i] - *mean) > r ? fabs(x[i] - *mean) : r;
    return r;
}

static int check_batchnorm(void) {
    const int32_t batch = rand_int(1, 3), channels = rand_int(1, 8), inner = rand_int(1, 60);
    const size_t n = (size_t)batch * channels * inner;
    const int in_place = chance(1, 2);
    float *x = test_alloc(n), *x0 = test_copy(x, n), *scale = test_alloc((size_t)channels);
    float *shift = test_alloc((size_t)channels), *y = in_place ? x : test_alloc_nan(n), *ref = test_alloc(n);
    double *tol = (double *)malloc(n * sizeof(double));
    size_t i;
    int bad;
    aotc_batchnorm_f32(batch, channels, inner, x, scale, shift, y);
    aotc_batchnorm_ref_f32(batch, channels, inner, x0, scale, shift, ref);
    for (i = 0; i < n; ++i) {
        const int32_t c = (int32_t)(i / (size_t)inner % (size_t)channels);
        tol[i] = 2.0 * U * (fabs((double)x0[i] * scale[c]) + fabs((double)shift[c]));
    }
    bad = test_differs_tol(NAMES[N_BATCHNORM], x0, y, ref, tol, n);
    if (bad) printf("  batch %d, channels %d, inner %d, in place %d\n", (int)batch, (int)channels, (int)inner, in_place);
    if (!in_place) free(y);
    free(x), free(x0), free(scale), free(shift), free(ref), free(tol);
    return bad;
}

static int check_prepare(void) {
    aotc_batchnorm_prepare_params p;
    float *gamma, *beta, *mean, *var, *scale, *shift, *rscale, *rshift;
    double *tol;
    int32_t c;
    int bad;
    p.channels = rand_int(1, 64), p.epsilon = chance(1, 2) ? 1e-5f : ldexpf(1.0f, (int)rand_int(-20, -2));
    gamma = test_alloc((size_t)p.channels), beta = test_alloc((size_t)p.channels), mean = test_alloc((size_t)p.channels);
    var = test_alloc((size_t)p.channels), scale = test_alloc_nan((size_t)p.channels);
    shift = test_alloc_nan((size_t)p.channels), rscale = test_alloc((size_t)p.channels);
    rshift = test_alloc((size_t)p.channels), tol = (double *)malloc((size_t)p.channels * sizeof(double));
    for (c = 0; c < p.channels; ++c) var[c] = fabsf(var[c]) * 4.0f;
    aotc_batchnorm_prepare_f32(&p, gamma, beta, mean, var, scale, shift);
    aotc_batchnorm_prepare_ref_f32(&p, gamma, beta, mean, var, rscale, rshift);
    for (c = 0; c < p.channels; ++c) tol[c] = 3.0 * U * fabs((double)rscale[c]);
    bad = test_differs_tol(NAMES[N_PREPARE], NULL, scale, rscale, tol, (size_t)p.channels);
    for (c = 0; c < p.channels; ++c) tol[c] = 4.0 * U * (fabs((double)beta[c]) + fabs((double)mean[c] * rscale[c]));
    bad = bad || test_differs_tol("aotc_batchnorm_prepare_f32 (shift)", NULL, shift, rshift, tol, (size_t)p.channels);
    free(gamma), free(beta), free(mean), free(var), free(scale), free(shift), free(rscale), free(rshift), free(tol);
    return bad;
}

/* InstanceNormalization and LayerNormalization (with and without bias, mean, inv_std_dev; stats
 * in float or double) and RMSNormalization: rows of n elements, tolerances as above. */
static int check_rows(int kind) {
    const int instance = kind == N_INSTANCE, f64 = kind == N_LAYER_F64 || kind == N_RMS_F64;
    const int rms = kind == N_RMS || kind == N_RMS_F64, in_place = chance(1, 2);
    const int with_bias = instance || (!rms && chance(2, 3)), with_stats = !instance && !rms && chance(2, 3);
    int32_t rows = rand_int(1, 4), n = chance(1, 4) ? rand_int(200, 700) : rand_int(1, 40), channels = 1, r, i;
    aotc_instance_norm_params ip;
    aotc_layer_norm_params lp;
    float *x, *x0, *y, *ref, *scale, *bias = NULL, *mean = NULL, *inv = NULL, *rmean = NULL, *rinv = NULL;
    double *dmean = NULL, *dinv = NULL, *rdmean = NULL, *rdinv = NULL, *tol;
    size_t total, params;
    int bad = 0;
    const float eps = chance(1, 2) ? 1e-5f : ldexpf(1.0f, (int)rand_int(-20, -2));
    if (instance) channels = rand_int(1, 4), rows = rand_int(1, 2) * channels;
    total = (size_t)rows * n, params = instance ? (size_t)channels : (size_t)n;
    x = draw_row_values(total), x0 = test_copy(x, total), y = in_place ? x : test_alloc_nan(total);
    ref = test_alloc(total), scale = test_alloc(params), tol = (double *)malloc(total * sizeof(double));
    if (with_bias) bias = test_alloc(params);
    if (with_stats && !f64) mean = test_alloc_nan((size_t)rows), inv = test_alloc_nan((size_t)rows);
    if (with_stats && f64) {
        dmean = test_alloc_f64((size_t)rows), dinv = test_alloc_f64((size_t)rows);
        rdmean = test_alloc_f64((size_t)rows), rdinv = test_alloc_f64((size_t)rows);
    }
    rmean = test_alloc((size_t)rows), rinv = test_alloc((size_t)rows);
    ip.batch = rows / channels, ip.channels = channels, ip.spatial = n, ip.epsilon = eps;
    lp.rows = rows, lp.n = n, lp.epsilon = eps;
    switch (kind) {
    case N_INSTANCE:
        aotc_instance_norm_f32(&ip, x, scale, bias, y);
        aotc_instance_norm_ref_f32(&ip, x0, scale, bias, ref);
        break;
    case N_LAYER:
        aotc_layer_norm_f32(&lp, x, scale, bias, y, mean, inv);
        aotc_layer_norm_ref_f32(&lp, x0, scale, bias, ref, rmean, rinv);
        break;
    case N_LAYER_F64:
        aotc_layer_norm_f64stats_f32(&lp, x, scale, bias, y, dmean, dinv);
        aotc_layer_norm_f64stats_ref_f32(&lp, x0, scale, bias, ref, rdmean, rdinv);
        break;
    case N_RMS:
        aotc_rms_norm_f32(&lp, x, scale, y);
        aotc_rms_norm_ref_f32(&lp, x0, scale, ref);
        break;
    default:
        aotc_rms_norm_f64stats_f32(&lp, x, scale, y);
        aotc_rms_norm_f64stats_ref_f32(&lp, x0, scale, ref);
        break;
    }
    for (r = 0; r < rows; ++r) {
        double m, R = spread_of(x0 + (size_t)r * n, n, &m), var = 0.0, a;
        for (i = 0; i < n; ++i) var += (x0[(size_t)r * n + i] - m) * (x0[(size_t)r * n + i] - m);
        a = 1.0 / sqrt(var / n + eps);
        for (i = 0; i < n; ++i) {
            const size_t at = (size_t)r * n + i;
            const double sc = fabs((double)scale[instance ? r % channels : i]);
            const double b = bias != NULL ? fabs((double)bias[instance ? r % channels : i]) : 0.0;
            if (rms) tol[at] = f64 ? 4.0 * U * fabs(ref[at]) : ((n + 4.0) * U / 2.0 + 4.0 * U) * fabs(ref[at]);
            else if (f64) tol[at] = 4.0 * U * (fabs((x0[at] - m) * a) * sc + b);
            else tol[at] = (n + 8.0) * U * sc * a * R * (4.0 * R * R * a * a + 2.0) + 4.0 * U * (fabs(ref[at]) + b) +
                           2.0 * U * (fabs(m) + (instance ? fabs((double)x0[at]) : 0.0)) * a * sc;
        }
        if (mean != NULL && !bad) {
            const double mt = 2.0 * U * fabs(m) + U * R, it = 4.0 * (n + 4.0) * U * R * R * a * a * a + 2.0 * U * a;
            bad = test_differs_tol("aotc_layer_norm_f32 (mean)", NULL, mean + r, rmean + r, &mt, 1) ||
                  test_differs_tol("aotc_layer_norm_f32 (inv_std_dev)", NULL, inv + r, rinv + r, &it, 1);
        }
        if (dmean != NULL && !bad) {
            bad = test_differs_f64("aotc_layer_norm_f64stats_f32 (mean)", dmean + r, rdmean + r, NULL, 0.0,
                                   (n + 8.0) * 1.2e-16 * (fabs(m) + R), 1) ||
                  test_differs_f64("aotc_layer_norm_f64stats_f32 (inv_std_dev)", dinv + r, rdinv + r, NULL,
                                   (n + 8.0) * 1.2e-16 * (4.0 * R * R * a * a + 2.0), 0.0, 1);
        }
    }
    bad = bad || test_differs_tol(NAMES[kind], x0, y, ref, tol, total);
    if (bad) printf("  rows %d, n %d, channels %d, epsilon %g, bias %d, stats %d, in place %d\n", (int)rows, (int)n,
                    (int)channels, (double)eps, with_bias, with_stats, in_place);
    if (!in_place) free(y);
    free(x), free(x0), free(ref), free(scale), free(bias), free(mean), free(inv), free(rmean), free(rinv);
    free(dmean), free(dinv), free(rdmean), free(rdinv), free(tol);
    return bad;
}

/* aotc_layer_norm_inner_f32 on [rows, n, inner] against the row reference of its transpose [rows * inner, n]. */
static int check_inner(void) {
    const int32_t rows = rand_int(1, 3), n = rand_int(1, 48), inner = rand_int(1, 80), in_place = chance(1, 2);
    const int with_bias = chance(2, 3);
    const size_t total = (size_t)rows * n * inner;
    const float eps = chance(1, 2) ? 1e-6f : ldexpf(1.0f, (int)rand_int(-20, -2));
    aotc_layer_norm_inner_params p;
    aotc_layer_norm_params lp;
    float *x = draw_row_values(total), *x0 = test_copy(x, total), *y = in_place ? x : test_alloc_nan(total);
    float *xt = test_alloc(total), *rt = test_alloc(total), *ref = test_alloc(total), *scale = test_alloc((size_t)n);
    float *bias = with_bias ? test_alloc((size_t)n) : NULL;
    double *tol = (double *)malloc(total * sizeof(double));
    int32_t r, c, i;
    int bad;
    for (r = 0; r < rows; ++r)
        for (c = 0; c < n; ++c)
            for (i = 0; i < inner; ++i) xt[((size_t)r * inner + i) * n + c] = x0[((size_t)r * n + c) * inner + i];
    p.rows = rows, p.n = n, p.inner = inner, p.epsilon = eps;
    lp.rows = rows * inner, lp.n = n, lp.epsilon = eps;
    aotc_layer_norm_inner_f32(&p, x, scale, bias, y);
    aotc_layer_norm_ref_f32(&lp, xt, scale, bias, rt, NULL, NULL);
    for (r = 0; r < rows * inner; ++r) {
        const float *row = xt + (size_t)r * n;
        double m, R = spread_of(row, n, &m), var = 0.0, a;
        for (c = 0; c < n; ++c) var += (row[c] - m) * (row[c] - m);
        a = 1.0 / sqrt(var / n + eps);
        for (c = 0; c < n; ++c) {
            const size_t at = ((size_t)(r / inner) * n + c) * inner + (size_t)(r % inner);
            const double sc = fabs((double)scale[c]), b = bias != NULL ? fabs((double)bias[c]) : 0.0;
            ref[at] = rt[(size_t)r * n + c];
            tol[at] = (n + 8.0) * U * sc * a * R * (4.0 * R * R * a * a + 2.0) + 4.0 * U * (fabs(ref[at]) + b) +
                      2.0 * U * fabs(m) * a * sc;
        }
    }
    bad = test_differs_tol(NAMES[N_LAYER_INNER], x0, y, ref, tol, total);
    if (bad) printf("  rows %d, n %d, inner %d, epsilon %g, bias %d, in place %d\n", (int)rows, (int)n, (int)inner,
                    (double)eps, with_bias, (int)in_place);
    if (!in_place) free(y);
    free(x), free(x0), free(xt), free(rt), free(ref), free(scale), free(bias), free(tol);
    return bad;
}

static int check_lrn(void) {
    aotc_lrn_params p;
    const int32_t size = rand_int(1, 7);
    float *x, *y, *ref;
    double *tol;
    size_t n, i;
    int bad;
    p.batch = rand_int(1, 2), p.channels = rand_int(1, 12), p.spatial = rand_int(1, 40);
    p.before = (size - 1) / 2, p.after = size / 2; /* floor and ceil of (size - 1) / 2 */
    p.alpha_over_size = ldexpf(1.0f, (int)rand_int(-14, 0)) / (float)size;
    p.beta = 0.5f + 0.5f * fabsf(rand_float()), p.bias = 1.0f + fabsf(rand_float());
    n = (size_t)p.batch * p.channels * p.spatial;
    x = test_alloc(n), y = test_alloc_nan(n), ref = test_alloc(n), tol = (double *)malloc(n * sizeof(double));
    for (i = 0; i < n; ++i) x[i] *= 4.0f;
    aotc_lrn_f32(&p, x, y);
    aotc_lrn_ref_f32(&p, x, ref);
    for (i = 0; i < n; ++i) tol[i] = (fabs((double)p.beta) * (size + 4.0) + 12.0) * U * fabs(ref[i]);
    bad = test_differs_tol(NAMES[N_LRN], x, y, ref, tol, n);
    if (bad) printf("  batch %d, channels %d, spatial %d, size %d, alpha/size %g, beta %g, bias %g\n", (int)p.batch,
                    (int)p.channels, (int)p.spatial, (int)size, (double)p.alpha_over_size, (double)p.beta, (double)p.bias);
    free(x), free(y), free(ref), free(tol);
    return bad;
}

static int check_softmax(int log_softmax) {
    aotc_softmax_params p;
    float *x, *x0, *y, *ref, *scratch = NULL;
    double *tol;
    size_t n, i;
    int32_t o, k, c;
    int bad, in_place = chance(1, 2);
    p.outer = rand_int(1, 4), p.n = rand_int(1, chance(1, 4) ? 300 : 30), p.inner = chance(1, 2) ? 1 : rand_int(2, 9);
    n = (size_t)p.outer * p.n * p.inner;
    x = test_alloc(n);
    {
        const float scale = ldexpf(1.0f, (int)rand_int(0, 4));
        for (i = 0; i < n; ++i) x[i] = chance(1, 40) ? -INFINITY : scale * x[i];
        for (i = 0; i < n; i += (size_t)p.n * p.inner) x[i + (size_t)rand_int(0, p.n - 1) * p.inner] = 0.5f; /* finite */
    }
    x0 = test_copy(x, n), y = in_place ? x : test_alloc_nan(n), ref = test_alloc(n);
    tol = (double *)malloc(n * sizeof(double));
    if (p.inner > 1) scratch = test_alloc_nan(2 * (size_t)p.inner);
    if (log_softmax) {
        aotc_log_softmax_f32(&p, x, y, scratch);
        aotc_log_softmax_ref_f32(&p, x0, ref);
    } else {
        aotc_softmax_f32(&p, x, y, scratch);
        aotc_softmax_ref_f32(&p, x0, ref);
    }
    for (o = 0; o < p.outer; ++o) {
        for (c = 0; c < p.inner; ++c) {
            const float *line = x0 + (size_t)o * p.n * p.inner + c;
            double hi = -INFINITY, lo = INFINITY, d;
            for (k = 0; k < p.n; ++k) {
                const double v = line[(size_t)k * p.inner];
                if (v == -INFINITY) continue;
                hi = v > hi ? v : hi, lo = v < lo ? v : lo;
            }
            d = hi - lo;
            for (k = 0; k < p.n; ++k) {
                const size_t at = (size_t)o * p.n * p.inner + (size_t)k * p.inner + c;
                tol[at] = log_softmax ? (p.n + 3.0 * d + 12.0) * U + 2.0 * U * fabs(ref[at])
                                      : (p.n + 2.0 * d + 12.0) * U * fabs(ref[at]) + FLT_MIN;
            }
        }
    }
    bad = test_differs_tol(NAMES[log_softmax ? N_LOG_SOFTMAX : N_SOFTMAX], x0, y, ref, tol, n);
    if (bad) printf("  outer %d, n %d, inner %d, in place %d\n", (int)p.outer, (int)p.n, (int)p.inner, in_place);
    if (!in_place) free(y);
    free(x), free(x0), free(ref), free(scratch), free(tol);
    return bad;
}

static int check(int kind) {
    switch (kind) {
    case N_BATCHNORM: return check_batchnorm();
    case N_PREPARE: return check_prepare();
    case N_LRN: return check_lrn();
    case N_LAYER_INNER: return check_inner();
    case N_SOFTMAX: return check_softmax(0);
    case N_LOG_SOFTMAX: return check_softmax(1);
    default: return check_rows(kind);
    }
}

/* The references on rows worked out by hand: x = [1, 2, 3, 6] has mean 3 and variance 3.5, so
 * LayerNormalization (epsilon 0) is (x - 3) / sqrt(3.5); RMSNormalization x / sqrt(12.5); Softmax
 * of [0, ln 3] is [1/4, 3/4]. */
static int check_reference(void) {
    static const float x[4] = {1, 2, 3, 6}, ones[4] = {1, 1, 1, 1};
    static const float sm_x[2] = {0.0f, 1.0986122887f}, sm[2] = {0.25f, 0.75f};
    const float s35 = (float)(1.0 / sqrt(3.5)), s125 = (float)(1.0 / sqrt(12.5));
    const float ln[4] = {-2.0f * s35, -1.0f * s35, 0.0f, 3.0f * s35};
    const float rms[4] = {1.0f * s125, 2.0f * s125, 3.0f * s125, 6.0f * s125};
    aotc_layer_norm_params p = {1, 4, 0.0f};
    aotc_softmax_params sp = {1, 2, 1};
    float y[4], mag[4] = {1, 1, 1, 1};
    int bad = 0;
    aotc_layer_norm_ref_f32(&p, x, ones, NULL, y, NULL, NULL);
    bad |= test_differs("aotc_layer_norm_ref_f32", y, ln, mag, 4);
    aotc_rms_norm_ref_f32(&p, x, ones, y);
    bad |= test_differs("aotc_rms_norm_ref_f32", y, rms, mag, 4);
    aotc_softmax_ref_f32(&sp, sm_x, y);
    bad |= test_differs("aotc_softmax_ref_f32", y, sm, mag, 2);
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference(), kind;
    int32_t i;
    for (kind = 0; kind < N_COUNT; ++kind) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = check(kind);
        printf("%-34s %s (%d shapes)\n", NAMES[kind], bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
