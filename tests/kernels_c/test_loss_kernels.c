/* The loss kernels (aotc_loss.h, loss.c) against the references (loss_ref.c) over random shapes:
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss for float and double scores, int64 and
 * int32 targets, each reduction, with and without weights and an ignore_index, targets outside
 * [0, c) too; every target ignored sometimes (a mean of 0 / 0: NaN in both). Outputs start as NaN.
 *
 * NLL is the same double sums in the same order: compared exactly. SoftmaxCrossEntropyLoss takes
 * LogSoftmax in double as its ONNX body writes it, (x - max) - log(sum), where loss.c subtracts
 * max + log(sum) from x: the two doubles differ by a few units of 2^-52 of the terms' size
 * (|x| + |max| + log(sum) <= mag = 2 spread + 3, spread the scores' bound), which near a
 * log-probability of 0 is all of it (cancellation). So a log-probability may differ by 2^-50 mag, and
 * stored as float by one more rounding (2^-23 of its size); a loss term is one such times its weight
 * (< 2.1), a sum or mean of count terms (all >= 0) within count times that, over the weights' sum
 * for the mean (>= 0.1), plus the rounding of the result (2^-21 of its size in float, 2^-50 in double).
 *
 *     test_loss_kernels [seed] [shapes per entry point] */
#include "aotc_loss.h"
#include "kernel_test.h"
#include "kernels_ref.h"

static void *alloc_nan(size_t n, size_t size) {
    uint8_t *b = (uint8_t *)malloc(n > 0 ? n * size : 1);
    size_t i;
    if (b == NULL) {
        printf("out of memory\n");
        exit(2);
    }
    for (i = 0; i < n; ++i) {
        if (size == 4) { const float f = NAN; memcpy(b + i * 4, &f, 4); }
        else { const double d = NAN; memcpy(b + i * 8, &d, 8); }
    }
    return b;
}

static double value(const void *b, size_t i, int f64) {
    return f64 ? ((const double *)b)[i] : (double)((const float *)b)[i];
}

/* |y - ref| <= rel |ref| + abs, bit for bit where both are 0, NaN matching NaN */
static int differs(const char *what, const void *y, const void *ref, size_t n, int f64, double rel, double abs) {
    size_t i;
    for (i = 0; i < n; ++i) {
        const double a = value(y, i, f64), b = value(ref, i, f64);
        if (a != a && b != b) continue;
        if (!(a == b || fabs(a - b) <= rel * fabs(b) + abs)) {
            printf("%s: element %lu of %lu is %.17g, reference %.17g (tolerance %.3g)\n", what, (unsigned long)i,
                   (unsigned long)n, a, b, rel * fabs(b) + abs);
            return 1;
        }
    }
    return 0;
}

#define LOSS_CHECK(SFX, T, TI, F64)                                                                           \
    static int check_##SFX(int sce) {                                                                         \
        aotc_loss_params p;                                                                                   \
        const char *name = sce ? "aotc_softmax_cross_entropy_" #SFX : "aotc_nll_loss_" #SFX;                  \
        const float spread = chance(1, 4) ? 100.0f : 5.0f;                                                    \
        const double mag = 2.0 * spread + 3.0, eps = F64 ? ldexp(1.0, -50) : ldexp(1.0, -23);                  \
        double lp_abs, loss_abs;                                                                              \
        size_t xn, tn, yn, i;                                                                                 \
        T *x, *w, *y, *ref, *lp, *lp_ref;                                                                     \
        TI *target;                                                                                           \
        int bad;                                                                                              \
        p.n = rand_int(1, 4), p.c = rand_int(1, 10), p.d = rand_int(1, 6);                                    \
        p.reduction = (aotc_loss_reduction)rand_int(0, 2), p.has_ignore = chance(1, 2);                       \
        p.ignore_index = chance(1, 8) ? (chance(1, 2) ? INT64_MIN : INT64_MAX) : rand_int(-2, p.c + 1);       \
        xn = (size_t)p.n * p.c * p.d, tn = (size_t)p.n * p.d, yn = p.reduction == AOTC_LOSS_NONE ? tn : 1;    \
        x = (T *)malloc(xn * sizeof(T)), target = (TI *)malloc(tn * sizeof(TI));                              \
        w = chance(1, 2) ? (T *)malloc((size_t)p.c * sizeof(T)) : NULL;                                       \
        for (i = 0; i < xn; ++i) x[i] = (T)(rand_float() * spread);                                           \
        for (i = 0; w != NULL && i < (size_t)p.c; ++i) w[i] = (T)(0.1f + rand_float() + 1.0f);                \
        for (i = 0; i < tn; ++i) {                                                                            \
            target[i] = (TI)(chance(1, 8) ? rand_int(-2, p.c + 1) : rand_int(0, p.c - 1));                    \
            if (p.has_ignore && chance(1, 6) && p.ignore_index > INT32_MIN && p.ignore_index < INT32_MAX)     \
                target[i] = (TI)p.ignore_index;                                                               \
        }                                                                                                     \
        if (p.has_ignore && chance(1, 10) && p.ignore_index >= 0 && p.ignore_index < p.c)                     \
            for (i = 0; i < tn; ++i) target[i] = (TI)p.ignore_index; /* all ignored */                        \
        y = (T *)alloc_nan(yn, sizeof(T)), ref = (T *)alloc_nan(yn, sizeof(T));                               \
        lp = (T *)alloc_nan(xn, sizeof(T)), lp_ref = (T *)alloc_nan(xn, sizeof(T));                           \
        if (sce) {                                                                                            \
            aotc_softmax_cross_entropy_##SFX(&p, x, target, w, y, lp);                                        \
            aotc_softmax_cross_entropy_##SFX##_ref(&p, x, target, w, ref, lp_ref);                            \
        } else {                                                                                              \
            aotc_nll_loss_##SFX(&p, x, target, w, y);                                                         \
            aotc_nll_loss_##SFX##_ref(&p, x, target, w, ref);                                                 \
        }                                                                                                     \
        lp_abs = ldexp(mag, -50), loss_abs = 10.0 * (double)tn * 2.1 * (lp_abs + eps * mag);                  \
        bad = sce ? differs(name, y, ref, yn, F64, F64 ? ldexp(1.0, -50) : ldexp(1.0, -21), loss_abs) ||     \
                        differs(name, lp, lp_ref, xn, F64, F64 ? 0.0 : eps, lp_abs)                            \
                  : differs(name, y, ref, yn, F64, 0.0, 0.0);                                                 \
        if (bad) printf("  n %d, c %d, d %d, reduction %d, weights %d, ignore %d (%lld)\n", (int)p.n, (int)p.c, \
                        (int)p.d, (int)p.reduction, w != NULL, (int)p.has_ignore, (long long)p.ignore_index);  \
        free(x), free(target), free(w), free(y), free(ref), free(lp), free(lp_ref);                           \
        return bad;                                                                                           \
    }                                                                                                         \
    static int check_nll_##SFX(void) { return check_##SFX(0); }                                               \
    static int check_sce_##SFX(void) { return check_##SFX(1); }
LOSS_CHECK(f32_i64, float, int64_t, 0)
LOSS_CHECK(f32_i32, float, int32_t, 0)
LOSS_CHECK(f64_i64, double, int64_t, 1)
LOSS_CHECK(f64_i32, double, int32_t, 1)

/* The references on a case worked out by hand: scores [0, ln 3] for one sample, target 1:
 * log_prob = [ln 1/4, ln 3/4], the loss ln 4/3; weight 2 on class 1 and mean: still ln 4/3. */
static int check_reference(void) {
    const double scores[2] = {0.0, log(3.0)}, weights[2] = {1.0, 2.0};
    const int64_t target[1] = {1};
    aotc_loss_params p = {1, 2, 1, AOTC_LOSS_MEAN, 0, 0};
    double y, lp[2];
    int bad;
    aotc_softmax_cross_entropy_f64_i64_ref(&p, scores, target, weights, &y, lp);
    bad = fabs(y - log(4.0 / 3.0)) > 1e-15 || fabs(lp[0] - log(0.25)) > 1e-15 || fabs(lp[1] - log(0.75)) > 1e-15;
    if (bad) printf("the references: MISMATCH on a case worked out by hand\n");
    return bad;
}

typedef struct {
    const char *name;
    int (*check)(void);
} entry;

static const entry ENTRIES[] = {
    {"aotc_nll_loss_f32_i64", check_nll_f32_i64},
    {"aotc_nll_loss_f32_i32", check_nll_f32_i32},
    {"aotc_nll_loss_f64_i64", check_nll_f64_i64},
    {"aotc_nll_loss_f64_i32", check_nll_f64_i32},
    {"aotc_softmax_cross_entropy_f32_i64", check_sce_f32_i64},
    {"aotc_softmax_cross_entropy_f32_i32", check_sce_f32_i32},
    {"aotc_softmax_cross_entropy_f64_i64", check_sce_f64_i64},
    {"aotc_softmax_cross_entropy_f64_i32", check_sce_f64_i32},
};

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference();
    size_t e;
    int32_t i;
    for (e = 0; e < sizeof ENTRIES / sizeof ENTRIES[0]; ++e) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = ENTRIES[e].check();
        printf("%-34s %s (%d shapes)\n", ENTRIES[e].name, bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
