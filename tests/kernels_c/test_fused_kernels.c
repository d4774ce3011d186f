/* The fused elementwise loops (aotc_fused.h: the code generator writes each fused tree as one loop,
 * aot/kernels/fused.py) against their reference, the unfused ops (fused_ref.c: each op by its own
 * elementwise kernel): random trees of 2 to 8 ops of every op fused.py fuses, on inputs, earlier
 * values and constants, over 0 to 300 elements, inputs with specials (NaN, +-inf, +-0, subnormals,
 * FLT_MAX); bit for bit (NaN matching any NaN), as fuse_elementwise.py promises. Each op's C
 * expression comes from fused.py itself: tests/kernels_c/test_kernels_c.py writes them into fused_ops.h (a
 * function fused_<Op> each, with the op's expression on its parameters, and the lists FUSED_UNARY
 * and FUSED_BINARY); an op there without its kernel in the table below fails the test.
 *
 *     test_fused_kernels [seed] [trees] */
#include "aotc_elementwise.h"
#include "aotc_fused.h"
#include "fused_ops.h"
#include "kernels_ref.h"
#include "test_compare.h"

typedef float (*unary_expr)(float);
typedef float (*binary_expr)(float, float);
typedef struct {
    const char *name;
    unary_expr expr;
} unary_op;
typedef struct {
    const char *name;
    binary_expr expr;
} binary_op;
#define UNARY_ENTRY(OP) {#OP, fused_##OP},
#define BINARY_ENTRY(OP) {#OP, fused_##OP},
static const unary_op UNARY[] = {FUSED_UNARY(UNARY_ENTRY)};
static const binary_op BINARY[] = {FUSED_BINARY(BINARY_ENTRY)};
#define N_UNARY (int32_t)(sizeof UNARY / sizeof UNARY[0])
#define N_BINARY (int32_t)(sizeof BINARY / sizeof BINARY[0])

/* each ONNX op's elementwise kernel: what the graph ran before the fusion */
static const struct {
    const char *name;
    aotc_fused_unary_fn unary;
    aotc_fused_binary_fn binary;
} KERNELS[] = {
    {"Relu", aotc_relu_f32, NULL}, {"Sigmoid", aotc_sigmoid_f32, NULL}, {"Tanh", aotc_tanh_f32, NULL},
    {"Neg", aotc_neg_f32, NULL},   {"Abs", aotc_abs_f32, NULL},         {"Reciprocal", aotc_reciprocal_f32, NULL},
    {"Sqrt", aotc_sqrt_f32, NULL}, {"Exp", aotc_exp_f32, NULL},         {"Add", NULL, aotc_add_f32},
    {"Sub", NULL, aotc_sub_f32},   {"Mul", NULL, aotc_mul_f32},         {"Div", NULL, aotc_div_f32},
    {"Max", NULL, aotc_max_f32},   {"Min", NULL, aotc_min_f32},
};

static int kernel_of(const char *name, aotc_fused_step *st) {
    size_t i;
    for (i = 0; i < sizeof KERNELS / sizeof KERNELS[0]; ++i) {
        if (strcmp(KERNELS[i].name, name) == 0) {
            st->unary = KERNELS[i].unary, st->binary = KERNELS[i].binary;
            return 1;
        }
    }
    printf("fused op %s: no elementwise kernel for it in tests/kernels_c/test_fused_kernels.c: MISMATCH\n", name);
    return 0;
}

#define MAX_STEPS 8
#define MAX_INPUTS 3

/* one tree: steps with their ops (index into UNARY or BINARY), operands, and the fused loop's value */
static int check(int32_t *ops_seen) {
    aotc_fused_step steps[MAX_STEPS];
    int32_t op[MAX_STEPS], s, k, count = rand_int(2, MAX_STEPS), inputs = rand_int(1, MAX_INPUTS);
    const size_t n = (size_t)rand_int(0, 300);
    float *in[MAX_INPUTS], *values = test_alloc_nan((size_t)(count - 1) * n), *y = test_alloc_nan(n);
    float *ref = test_alloc_nan(n);
    size_t i;
    int bad = 0;
    memset(steps, 0, sizeof steps);
    for (k = 0; k < inputs; ++k) {
        in[k] = test_alloc(n);
        for (i = 0; i < n; ++i) in[k][i] = chance(1, 12) ? test_special_float(1) : test_scaled_float(-3, 3);
    }
    for (s = 0; s < count; ++s) {
        const int unary = chance(1, 2);
        op[s] = unary ? rand_int(0, N_UNARY - 1) : N_UNARY + rand_int(0, N_BINARY - 1);
        ++ops_seen[op[s]];
        if (!kernel_of(unary ? UNARY[op[s]].name : BINARY[op[s] - N_UNARY].name, &steps[s])) return 1;
        for (k = 0; k < (unary ? 1 : 2); ++k) { /* an earlier value, an input, or (binary) a constant */
            const int32_t pick = rand_int(0, 5);
            if (s > 0 && pick <= 2) {
                steps[s].kind[k] = AOTC_FUSED_VALUE, steps[s].index[k] = rand_int(0, s - 1);
            } else if (!unary && pick == 5) {
                steps[s].kind[k] = AOTC_FUSED_CONSTANT, steps[s].constant[k] = test_scaled_float(-2, 2);
            } else {
                steps[s].kind[k] = AOTC_FUSED_INPUT, steps[s].index[k] = rand_int(0, inputs - 1);
            }
        }
    }
    aotc_fused_ref_f32(steps, count, n, (const float *const *)in, values, ref);
    for (i = 0; i < n; ++i) { /* the fused loop: one element through every step, in registers */
        float v[MAX_STEPS], a[2];
        for (s = 0; s < count; ++s) {
            for (k = 0; k < 2; ++k) {
                a[k] = steps[s].kind[k] == AOTC_FUSED_INPUT   ? in[steps[s].index[k]][i]
                       : steps[s].kind[k] == AOTC_FUSED_VALUE ? v[steps[s].index[k]]
                                                              : steps[s].constant[k];
            }
            v[s] = op[s] < N_UNARY ? UNARY[op[s]].expr(a[0]) : BINARY[op[s] - N_UNARY].expr(a[0], a[1]);
        }
        y[i] = v[count - 1];
    }
    for (i = 0; i < n && !bad; ++i) {
        if (memcmp(&y[i], &ref[i], sizeof(float)) != 0 && !(y[i] != y[i] && ref[i] != ref[i])) {
            printf("fused loop: element %lu of %lu is %.9g, unfused %.9g\n  ", (unsigned long)i, (unsigned long)n,
                   (double)y[i], (double)ref[i]);
            for (s = 0; s < count; ++s) {
                printf("v%d = %s(", (int)s, op[s] < N_UNARY ? UNARY[op[s]].name : BINARY[op[s] - N_UNARY].name);
                for (k = 0; k < (op[s] < N_UNARY ? 1 : 2); ++k) {
                    if (steps[s].kind[k] == AOTC_FUSED_CONSTANT) printf("%s%.9g", k ? ", " : "", (double)steps[s].constant[k]);
                    else printf("%s%s%d", k ? ", " : "", steps[s].kind[k] == AOTC_FUSED_INPUT ? "in" : "v", (int)steps[s].index[k]);
                }
                printf(") ");
            }
            printf("\n");
            bad = 1;
        }
    }
    for (k = 0; k < inputs; ++k) free(in[k]);
    free(values), free(y), free(ref);
    return bad;
}

int main(int argc, char **argv) {
    const int32_t trees = test_args(argc, argv, 1000);
    int32_t seen[N_UNARY + N_BINARY], t, i, missing = 0;
    int bad = 0;
    memset(seen, 0, sizeof seen);
    for (t = 0; t < trees && !bad; ++t) bad = check(seen);
    for (i = 0; i < N_UNARY + N_BINARY; ++i) missing += seen[i] == 0;
    printf("%-34s %s (%d trees, %d ops fused.py fuses, %d never drawn)\n", "fused loops (aotc_fused.h)",
           bad ? "MISMATCH" : "ok", (int)t, (int)(N_UNARY + N_BINARY), (int)missing);
    return bad;
}
