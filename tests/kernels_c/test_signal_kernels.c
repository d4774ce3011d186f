/* The DFT kernel (aotc_signal.h, signal.c) against its reference (signal_ref.c) over random shapes:
 * real and complex input and output, m below n (a dft_length shorter than the axis), outer and inner
 * dims; half of the time the weights are a true DFT's (forward or inverse, one-sided or not), else
 * random. Inputs and tables of exactly their size, outputs starting as NaN. The tolerance: each
 * output is a sum of 2m products (each exact in double, rounded once in float), so within
 * (2m + 4) u of the sum of their magnitudes, u = 2^-24 (Higham 3.1).
 *
 *     test_signal_kernels [seed] [shapes] */
#include "aotc_signal.h"
#include "kernels_ref.h"
#include "test_compare.h"

static void print_case(const aotc_dft_params *p) {
    printf("  outer %d, n %d, m %d, inner %d, k %d, in_c %d, out_c %d\n", (int)p->outer, (int)p->n, (int)p->m,
           (int)p->inner, (int)p->k, (int)p->in_c, (int)p->out_c);
}

static int check(void) {
    aotc_dft_params p;
    float *wr, *wi, *x, *x0, *y, *ref, *ax;
    double *tol;
    size_t xn, yn, wn, i;
    int bad, dft = chance(1, 2);
    memset(&p, 0, sizeof p);
    p.outer = rand_int(1, 3), p.n = rand_int(1, 40), p.inner = rand_int(1, 4);
    p.m = chance(1, 3) ? rand_int(1, p.n) : p.n;
    p.k = dft && chance(1, 2) ? p.m / 2 + 1 : rand_int(1, 40); /* (one-sided) */
    p.in_c = rand_int(1, 2), p.out_c = rand_int(1, 2);
    wn = (size_t)p.k * p.m, xn = (size_t)p.outer * p.n * p.inner * p.in_c, yn = (size_t)p.outer * p.k * p.inner * p.out_c;
    wr = test_alloc(wn), wi = test_alloc(wn), x = test_alloc(xn), y = test_alloc_nan(yn), ref = test_alloc(yn);
    p.wr = wr, p.wi = wi;
    if (dft) { /* e^(-+2 pi i j t / m): forward or inverse (scaled by 1 / m) */
        const double sign = chance(1, 2) ? -1.0 : 1.0, scale = sign > 0 ? 1.0 / p.m : 1.0;
        int32_t j, t;
        for (j = 0; j < p.k; ++j) {
            for (t = 0; t < p.m; ++t) {
                const double a = 6.283185307179586 * (double)((int64_t)j * t % p.m) / p.m;
                wr[(size_t)j * p.m + t] = (float)(cos(a) * scale), wi[(size_t)j * p.m + t] = (float)(sign * sin(a) * scale);
            }
        }
    }
    x0 = test_copy(x, xn), ax = test_alloc(xn);
    tol = (double *)malloc(yn * sizeof(double) + 1);
    aotc_dft_f32(&p, x, y);
    aotc_dft_ref_f32(&p, x, ref);
    { /* the magnitude of each output's terms: the map with |wr| + |wi| on |ar| + |ai|, real */
        aotc_dft_params q = p;
        float *aw = test_abs(wr, wn), *awi = test_abs(wi, wn), *mag = test_alloc(yn / p.out_c * 2);
        for (i = 0; i < wn; ++i) aw[i] += awi[i], awi[i] = 0.0f;
        for (i = 0; i < xn; i += p.in_c) ax[i] = fabsf(x[i]) + (p.in_c == 2 ? fabsf(x[i + 1]) : 0.0f);
        for (i = 1; i < xn; i += p.in_c) if (p.in_c == 2) ax[i] = 0.0f;
        q.wr = aw, q.wi = awi, q.out_c = 2;
        aotc_dft_ref_f32(&q, ax, mag);
        for (i = 0; i < yn; ++i) tol[i] = (2.0 * p.m + 4.0) / 16777216.0 * mag[i / p.out_c * 2];
        free(aw), free(awi), free(mag);
    }
    bad = test_differs_tol("aotc_dft_f32", NULL, y, ref, tol, yn);
    if (!bad && memcmp(x, x0, xn * sizeof(float)) != 0) printf("aotc_dft_f32: changed its input\n"), bad = 1;
    if (bad) print_case(&p);
    free(wr), free(wi), free(x), free(x0), free(ax), free(y), free(ref), free(tol);
    return bad;
}

/* The reference on a DFT worked out by hand: x = [1, 2, 3, 4] real, forward, complex output:
 * X = [10, -2 + 2i, -2, -2 - 2i]. */
static int check_reference(void) {
    static const float x[4] = {1, 2, 3, 4}, want[8] = {10, 0, -2, 2, -2, 0, -2, -2};
    static const float wr[16] = {1, 1, 1, 1, 1, 0, -1, 0, 1, -1, 1, -1, 1, 0, -1, 0};
    static const float wi[16] = {0, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0, 0, 0, 1, 0, -1};
    aotc_dft_params p;
    float y[8];
    memset(&p, 0, sizeof p);
    p.outer = 1, p.n = 4, p.m = 4, p.inner = 1, p.k = 4, p.in_c = 1, p.out_c = 2, p.wr = wr, p.wi = wi;
    aotc_dft_ref_f32(&p, x, y);
    return test_differs("aotc_dft_ref_f32", y, want, NULL, 8);
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int bad = check_reference();
    int32_t i;
    for (i = 0; i < shapes && !bad; ++i) bad = check();
    printf("%-34s %s (%d shapes)\n", "aotc_dft_f32", bad ? "MISMATCH" : "ok", (int)i);
    return bad;
}
