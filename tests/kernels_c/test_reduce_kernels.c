/* The reduce kernels (aotc_reduce.h, reduce.c) against the references (reduce_ref.c) over random
 * shapes: ranks 1 to 5 with any pattern of kept and reduced dims (merged as the compiler merges
 * them, or not: the kernels take either), the innermost dim kept or reduced, runs shorter and longer
 * than the kernel's 8 lanes; inputs of exactly their size, outputs starting as NaN; a quarter of the
 * shapes with NaN, infinities, signed zeros and subnormals among the inputs. Max and Min are compared exactly;
 * the sums within the bound of float (float64) rounding of their terms' magnitudes in any order
 * (below), the logarithms absolutely. Every float32 and float64 entry point; Det and the Swish with its planes'
 * means (below).
 *
 *     test_reduce_kernels [seed] [shapes per entry point] */
#include "aotc_reduce.h"
#include "kernels_ref.h"
#include "test_compare.h"

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUM_SQUARE, R_LOG_SUM, R_LOG_SUM_EXP, R_COUNT };
static const char *const OPS[R_COUNT] = {"sum", "mean", "max", "min", "prod", "l1", "l2", "sum_square",
                                         "log_sum", "log_sum_exp"};

typedef void (*reduce_f32)(const aotc_reduce_params *, const float *, float *);
typedef void (*reduce_f64)(const aotc_reduce_params *, const double *, double *);
static const reduce_f32 F32[R_COUNT] = {aotc_reduce_sum_f32, aotc_reduce_mean_f32, aotc_reduce_max_f32,
                                        aotc_reduce_min_f32, aotc_reduce_prod_f32, aotc_reduce_l1_f32,
                                        aotc_reduce_l2_f32, aotc_reduce_sum_square_f32, aotc_reduce_log_sum_f32, NULL};
static const reduce_f32 F32_REF[R_COUNT] = {
    aotc_reduce_sum_ref_f32, aotc_reduce_mean_ref_f32,       aotc_reduce_max_ref_f32,     aotc_reduce_min_ref_f32,
    aotc_reduce_prod_ref_f32, aotc_reduce_l1_ref_f32,        aotc_reduce_l2_ref_f32,      aotc_reduce_sum_square_ref_f32,
    aotc_reduce_log_sum_ref_f32, aotc_reduce_log_sum_exp_ref_f32};
static const reduce_f64 F64[R_COUNT] = {aotc_reduce_sum_f64, aotc_reduce_mean_f64, aotc_reduce_max_f64,
                                        aotc_reduce_min_f64, aotc_reduce_prod_f64, aotc_reduce_l1_f64,
                                        aotc_reduce_l2_f64, aotc_reduce_sum_square_f64, aotc_reduce_log_sum_f64, NULL};
static const reduce_f64 F64_REF[R_COUNT] = {
    aotc_reduce_sum_ref_f64, aotc_reduce_mean_ref_f64,       aotc_reduce_max_ref_f64,     aotc_reduce_min_ref_f64,
    aotc_reduce_prod_ref_f64, aotc_reduce_l1_ref_f64,        aotc_reduce_l2_ref_f64,      aotc_reduce_sum_square_ref_f64,
    aotc_reduce_log_sum_ref_f64, aotc_reduce_log_sum_exp_ref_f64};

static int64_t x_size(const aotc_reduce_params *p) {
    int64_t n = 1;
    int32_t k;
    for (k = 0; k < p->rank; ++k) n *= p->shape[k];
    return n;
}

/* A random reduction of at most 3000 inputs: dims of 1 to 9, each kept or reduced (at least one
 * reduced), merged half of the time as the compiler merges them; y contiguous over the kept dims. */
static void draw(aotc_reduce_params *p) {
    int32_t reduced[AOTC_MAX_RANK], rank, k, any = 0;
    int64_t stride = 1;
    do {
        memset(p, 0, sizeof *p);
        rank = rand_int(1, 5);
        for (k = 0; k < rank; ++k) {
            p->shape[k] = rand_int(1, chance(1, 4) ? 40 : 9);
            reduced[k] = chance(1, 2);
            any |= reduced[k];
        }
        if (!any) reduced[rand_int(0, rank - 1)] = 1;
        p->rank = rank;
    } while (x_size(p) > 3000);
    if (chance(1, 2)) { /* merge neighbours of one kind, as the compiler does */
        int32_t w = 0;
        for (k = 0; k < rank; ++k) {
            if (w > 0 && reduced[w - 1] == reduced[k]) {
                p->shape[w - 1] *= p->shape[k];
            } else {
                p->shape[w] = p->shape[k], reduced[w] = reduced[k], ++w;
            }
        }
        for (k = w; k < rank; ++k) p->shape[k] = 0;
        p->rank = w;
    }
    p->count = 1;
    for (k = p->rank - 1; k >= 0; --k) {
        p->y_strides[k] = reduced[k] ? 0 : (int32_t)stride;
        if (reduced[k]) p->count *= p->shape[k];
        else stride *= p->shape[k];
    }
    p->y_size = stride;
}

static void print_case(const aotc_reduce_params *p) {
    int32_t k;
    printf("  shape");
    for (k = 0; k < p->rank; ++k) printf(" %d%s", (int)p->shape[k], p->y_strides[k] == 0 ? "r" : "");
    printf(" (r: reduced), y_size %ld, count %ld\n", (long)p->y_size, (long)p->count);
}

/* Inputs for op: random in [-1, 1) times up to 4 (Prod: magnitudes in [0.5, 2), so that products of
 * hundreds stay normal floats; LogSum: positive), and with `specials` one in 16 a special value. */
static double draw_value(int op, int specials) {
    if (specials && chance(1, 16)) return (double)test_special_float(0);
    if (op == R_PROD) return (chance(1, 2) ? -1.0 : 1.0) * (1.25 + 0.75 * (double)rand_float());
    if (op == R_LOG_SUM) return 2.0 + (double)rand_float();
    return 4.0 * (double)rand_float();
}

/* The tolerance of output i. u is the unit roundoff (2^-24, or 2^-53 for float64), n the terms per
 * output. A sum of n terms in any order, each addition rounding once, is within (n - 1) u of the
 * sum of their magnitudes (Higham, Accuracy and Stability of Numerical Algorithms, 4.2); the kernels
 * add up to n terms in one lane and fold 8 lanes and y, so (n + 4) u * sum |x| bounds them, and a
 * product of n factors (n + 4) u * |product|. L2: half the relative error of its sum, + 1 ulp;
 * LogSum and LogSumExp: the relative error of the sum becomes an absolute one (LogSumExp's terms
 * e^(x - max) also carry the rounding of x - max, at most 8 u relative for |x - max| < 8 where
 * they matter, and 1 ulp of expf), + 1 ulp of the result. A square rounds to a subnormal or 0
 * below 2^-126 (float64: 2^-1022), an absolute error of up to tiny = 2^-149 (2^-1074) each. */
static double tolerance(int op, double u, double n, double ref, double mag) {
    const double g = (n + 4.0) * u, tiny = u < 1e-10 ? 4.9406564584124654e-324 : 1.4012984643e-45;
    switch (op) {
    case R_MAX: case R_MIN: return 0.0;
    case R_PROD: return g * fabs(ref) + 1e-300;
    case R_L2: return (g + 2.0 * u) * fabs(ref) + sqrt(n * tiny);
    case R_SUM_SQUARE: return (g + u) * fabs(ref) + n * tiny;
    case R_LOG_SUM: return g + 2.0 * u * fabs(ref);
    case R_LOG_SUM_EXP: return g + 32.0 * u + 2.0 * u * fabs(ref);
    case R_MEAN: return (g + u) * mag / n + 2.0 * u * fabs(ref);
    default: return g * mag; /* sum, l1 */
    }
}

static int check(int op, int f64) {
    aotc_reduce_params p;
    size_t xn, yn, i;
    int bad = 0, specials;
    char name[48];
    draw(&p);
    specials = chance(1, 4) && op != R_PROD && op != R_LOG_SUM;
    xn = (size_t)x_size(&p), yn = (size_t)p.y_size;
    sprintf(name, "aotc_reduce_%s_%s", OPS[op], f64 ? "f64" : "f32");
    if (!f64) {
        float *x = test_alloc(xn), *x0, *ax, *y = test_alloc_nan(yn), *ref = test_alloc(yn), *mag = test_alloc(yn);
        float *scratch = op == R_LOG_SUM_EXP ? test_alloc_nan(yn) : NULL;
        double *tol = (double *)malloc(yn * sizeof(double) + 1);
        for (i = 0; i < xn; ++i) x[i] = (float)draw_value(op, specials);
        x0 = test_copy(x, xn), ax = test_abs(x, xn);
        if (op == R_LOG_SUM_EXP) aotc_reduce_log_sum_exp_f32(&p, x, y, scratch);
        else F32[op](&p, x, y);
        F32_REF[op](&p, x, ref);
        aotc_reduce_sum_ref_f32(&p, ax, mag);
        for (i = 0; i < yn; ++i) tol[i] = tolerance(op, 1.0 / 16777216.0, (double)p.count, ref[i], mag[i]);
        bad = test_differs_tol(name, NULL, y, ref, tol, yn);
        if (!bad && memcmp(x, x0, xn * sizeof(float)) != 0) printf("%s: changed its input\n", name), bad = 1;
        free(x), free(x0), free(ax), free(y), free(ref), free(mag), free(scratch), free(tol);
    } else {
        double *x = test_alloc_f64(xn), *ax = test_alloc_f64(xn), *y = test_alloc_f64(yn), *ref = test_alloc_f64(yn);
        double *mag = test_alloc_f64(yn), *scratch = op == R_LOG_SUM_EXP ? test_alloc_f64(yn) : NULL;
        for (i = 0; i < xn; ++i) x[i] = draw_value(op, specials), ax[i] = fabs(x[i]);
        for (i = 0; i < yn; ++i) y[i] = NAN;
        if (op == R_LOG_SUM_EXP) aotc_reduce_log_sum_exp_f64(&p, x, y, scratch);
        else F64[op](&p, x, y);
        F64_REF[op](&p, x, ref);
        aotc_reduce_sum_ref_f64(&p, ax, mag);
        for (i = 0; i < yn && !bad; ++i) {
            const double tol = tolerance(op, 1.0 / 9007199254740992.0, (double)p.count, ref[i], mag[i]);
            bad = test_differs_f64(name, y + i, ref + i, NULL, 0.0, tol, 1);
        }
        free(x), free(ax), free(y), free(ref), free(mag), free(scratch);
    }
    if (bad) print_case(&p);
    return bad;
}

/* Det of 1 to 4 matrices of 1 to 7 rows, against cofactor expansion: within float rounding of the
 * determinant plus the elimination's rounding of the Hadamard bound (the product of the rows' norms);
 * one case in 4 with a repeated row (determinant 0, up to that rounding). */
static int check_det(void) {
    const int32_t batch = rand_int(1, 4), n = rand_int(1, 7);
    const size_t nn = (size_t)n * n;
    float *x = test_alloc(batch * nn), *y = test_alloc((size_t)batch), *ref = test_alloc((size_t)batch);
    double *scratch = test_alloc_f64(nn);
    int32_t b, i, j;
    int bad = 0;
    for (i = 0; i < (int32_t)(batch * nn); ++i) x[i] = rand_float() * 4.0f;
    if (n > 1 && chance(1, 4))
        for (b = 0; b < batch; ++b)
            for (j = 0; j < n; ++j) x[b * nn + (size_t)(n - 1) * n + j] = x[b * nn + j];
    aotc_det_f32(batch, n, x, y, scratch);
    aotc_det_ref_f32(batch, n, x, ref);
    for (b = 0; b < batch && !bad; ++b) {
        double hadamard = 1.0, tol;
        for (i = 0; i < n; ++i) {
            double row = 0.0;
            for (j = 0; j < n; ++j) row += (double)x[b * nn + (size_t)i * n + j] * x[b * nn + (size_t)i * n + j];
            hadamard *= sqrt(row);
        }
        tol = fabs((double)ref[b]) * 2.0 / 16777216.0 + hadamard * 1e-12;
        if (fabs((double)y[b] - (double)ref[b]) > tol) {
            printf("aotc_det_f32: matrix %d of %d, n %d: %.9g, reference %.9g\n", (int)b, (int)batch, (int)n,
                   (double)y[b], (double)ref[b]);
            bad = 1;
        }
    }
    free(x), free(y), free(ref), free(scratch);
    return bad;
}

/* The references on a case worked out by hand: x [2, 3] = [[1, -2, 3], [4, 5, -6]] reduced over
 * axis 1 (sums 2 and 3; max 3 and 5; products -6 and -120) and over axis 0 (sums 5, 3, -3). */
static int check_reference(void) {
    static const float x[6] = {1, -2, 3, 4, 5, -6};
    static const float sum1[2] = {2, 3}, max1[2] = {3, 5}, prod1[2] = {-6, -120}, sum0[3] = {5, 3, -3};
    static const float l2_0[3] = {4.1231056256f, 5.3851648071f, 6.7082039325f};
    aotc_reduce_params p;
    float y[3];
    int bad = 0;
    memset(&p, 0, sizeof p);
    p.rank = 2, p.shape[0] = 2, p.shape[1] = 3, p.y_strides[0] = 1, p.y_size = 2, p.count = 3;
    aotc_reduce_sum_ref_f32(&p, x, y);
    bad |= test_differs("aotc_reduce_sum_ref_f32", y, sum1, NULL, 2);
    aotc_reduce_max_ref_f32(&p, x, y);
    bad |= test_differs("aotc_reduce_max_ref_f32", y, max1, NULL, 2);
    aotc_reduce_prod_ref_f32(&p, x, y);
    bad |= test_differs("aotc_reduce_prod_ref_f32", y, prod1, NULL, 2);
    p.y_strides[0] = 0, p.y_strides[1] = 1, p.y_size = 3, p.count = 2;
    aotc_reduce_sum_ref_f32(&p, x, y);
    bad |= test_differs("aotc_reduce_sum_ref_f32 (axis 0)", y, sum0, NULL, 3);
    aotc_reduce_l2_ref_f32(&p, x, y);
    bad |= test_differs("aotc_reduce_l2_ref_f32 (axis 0)", y, l2_0, NULL, 3);
    return bad;
}

/* ReduceMean of [rows, n] over its last axis (a global average pool's) bit for bit as pass_sum orders its adds (8
 * partial sums, the tail into the first, folded pairwise): reduce.c's rows path (pass_sum_rows, AVX-512 builds) keeps
 * that order, so that a bundle's outputs do not change with it. Returns 1 on a mismatch. */
static int check_rows_exact(void) {
    static const int32_t ns[] = {8, 9, 15, 16, 49, 63};
    int bad = 0;
    int32_t s, rows, o, i, l;
    for (s = 0; s < (int32_t)(sizeof ns / sizeof ns[0]); ++s) {
        for (rows = 1; rows <= 9 && !bad; rows += 2) {
            const int32_t n = ns[s];
            aotc_reduce_params p;
            float x[9 * 63], y[9];
            memset(&p, 0, sizeof p);
            p.rank = 2, p.shape[0] = rows, p.shape[1] = n, p.y_strides[0] = 1, p.y_size = rows, p.count = n;
            for (i = 0; i < rows * n; ++i) x[i] = (float)(4.0 * (double)rand_float()) * (chance(1, 2) ? 1.0f : 1e-3f);
            aotc_reduce_mean_f32(&p, x, y);
            for (o = 0; o < rows; ++o) {
                float acc[8] = {0}, want;
                for (i = 0; i + 8 <= n; i += 8) {
                    for (l = 0; l < 8; ++l) acc[l] += x[o * n + i + l];
                }
                for (; i < n; ++i) acc[0] += x[o * n + i];
                for (l = 4; l > 0; l /= 2) {
                    for (i = 0; i < l; ++i) acc[i] += acc[i + l];
                }
                want = (0.0f + acc[0]) / (float)n;
                if (memcmp(&want, &y[o], sizeof want) != 0) {
                    printf("ReduceMean [%d, %d]: row %d is %.9g, pass_sum's order %.9g\n", (int)rows, (int)n, (int)o,
                           (double)y[o], (double)want);
                    bad = 1;
                }
            }
        }
    }
    return bad;
}

/* aotc_swish_mean_f32 on 1 to 40 planes of 1 to 300 floats (or 1 or 2 longer than a work item): y within the
 * SiLU's 6 ulp of the reference (plus its absolute floor), each mean within the rounding of sums in 16 lanes of its
 * plane's terms' magnitudes plus those ulp (a mean off by one part in hw fails), in place (y = x) one case in 4. */
static int check_swish_mean(void) {
    static const int32_t sizes[] = {1, 7, 15, 16, 17, 31, 32, 33, 49, 196, 300, 4100};
    const int32_t hw = sizes[rand_int(0, (int32_t)(sizeof sizes / sizeof sizes[0]) - 1)];
    const int64_t planes = rand_int(1, hw > 300 ? 2 : 40); /* within the boards' heaps */
    const size_t n = (size_t)planes * (size_t)hw;
    const float alpha = chance(1, 2) ? 1.0f : 1.702f;
    const int inplace = chance(1, 4);
    float *x = test_alloc(n), *y = inplace ? x : test_alloc(n), *ry = test_alloc(n);
    float *mean = test_alloc((size_t)planes), *rmean = test_alloc((size_t)planes);
    int64_t c;
    size_t i;
    int bad = 0;
    for (i = 0; i < n; ++i) x[i] = rand_float() * 8.0f;
    aotc_swish_mean_ref_f32(planes, hw, x, ry, rmean, alpha);
    aotc_swish_mean_f32(planes, hw, x, y, mean, alpha);
    for (i = 0; i < n && !bad; ++i) {
        if (fabs((double)y[i] - (double)ry[i]) > test_ulps(ry[i], 6.0) + 1.2e-38) {
            printf("aotc_swish_mean_f32: %d planes of %d, y[%d] %.9g, reference %.9g\n", (int)planes, (int)hw, (int)i,
                   (double)y[i], (double)ry[i]);
            bad = 1;
        }
    }
    for (c = 0; c < planes && !bad; ++c) {
        double mag = 0.0;
        int32_t k;
        for (k = 0; k < hw; ++k) mag += fabs((double)ry[c * hw + k]);
        /* sums in 16 or 32 lanes (runs of 4096 added after): each lane's n / 16 terms, then the lanes; y's 6 ulp */
        const double tol = (mag / hw) * ((hw / 16.0 + 48.0) / 16777216.0 + 6.0 / 8388608.0);
        if (fabs((double)mean[c] - (double)rmean[c]) > tol + test_ulps(rmean[c], 2.0)) {
            printf("aotc_swish_mean_f32: %d planes of %d, mean[%d] %.9g, reference %.9g\n", (int)planes, (int)hw,
                   (int)c, (double)mean[c], (double)rmean[c]);
            bad = 1;
        }
    }
    free(x), free(ry), free(mean), free(rmean);
    if (!inplace) free(y);
    return bad;
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 200);
    int failed = check_reference(), op, f64;
    int32_t i;
    for (f64 = 0; f64 < 2; ++f64) {
        for (op = 0; op < R_COUNT; ++op) {
            int bad = 0;
            char name[48];
            for (i = 0; i < shapes && !bad; ++i) bad = check(op, f64);
            sprintf(name, "aotc_reduce_%s_%s", OPS[op], f64 ? "f64" : "f32");
            printf("%-34s %s (%d shapes)\n", name, bad ? "MISMATCH" : "ok", (int)i);
            failed |= bad;
        }
    }
    {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = check_det();
        printf("%-34s %s (%d shapes)\n", "aotc_det_f32", bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = check_swish_mean();
        printf("%-34s %s (%d shapes)\n", "aotc_swish_mean_f32", bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    {
        const int bad = check_rows_exact();
        printf("%-34s %s\n", "aotc_reduce_mean_f32 rows", bad ? "MISMATCH" : "ok (bit for bit)");
        failed |= bad;
    }
    return failed;
}
