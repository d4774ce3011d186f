/* The GEMM core and the ONNX Gemm / MatMul kernels (aotc_gemm.h, gemm.c) against the
 * references (gemm_ref.c) over random shapes: plain, padded and packed B, transposed and
 * strided A, every form of C_in (none, a row, a column, a scalar, a matrix, C itself), alpha
 * and beta, the fused residual and activations, k past one k-block (AOTC_GEMM_KC), with and
 * without work memory. Every operand is a heap buffer of exactly its size (a strided operand:
 * up to its last element), outputs start as NaN, and the inputs must come back as they were.
 *
 *     test_gemm_kernels [seed] [shapes per entry point] */
#include "aotc_gemm.h"
#include "kernel_test.h"
#include "test_compare.h"
#include "kernels_ref.h"

#define PANEL AOTC_GEMM_PANEL
#define MAX_MACS 1500000

static int32_t ceil16(int32_t v) { return (v + PANEL - 1) / PANEL * PANEL; }

/* Floats from the first to the last element of a rows x cols matrix with these strides. */
static size_t span(int32_t rows, int32_t cols, int32_t rs, int32_t cs) {
    return rows > 0 && cols > 0 ? (size_t)(rows - 1) * rs + (size_t)(cols - 1) * cs + 1 : 0;
}

enum { B_PLAIN, B_PADDED, B_PACKED };                               /* how B is laid out */
enum { CIN_NONE, CIN_ROW, CIN_COLUMN, CIN_SCALAR, CIN_MATRIX, CIN_C }; /* what C_in is */

typedef struct {
    aotc_sgemm_params p; /* (p.res: set when the operands are made) */
    int b_layout, cin, res, work;
} gemm_case;

static void draw_activation(aotc_sgemm_params *p) {
    switch (rand_int(0, 3)) {
    case 1: p->act = AOTC_ACT_CLAMP, p->act_lo = 0.0f, p->act_hi = INFINITY; break;
    case 2: p->act = AOTC_ACT_CLAMP, p->act_lo = -0.25f, p->act_hi = 0.5f; break;
    case 3: p->act = AOTC_ACT_LEAKY, p->act_alpha = 0.125f; break;
    default: p->act = AOTC_ACT_NONE; break;
    }
}

/* A random product C = A * B of m x k by k x n, B laid out as b_layout. */
static void draw_product(aotc_sgemm_params *p, int b_layout, int may_transpose_a) {
    const int32_t size = rand_int(0, 9);
    memset(p, 0, sizeof *p);
    /* mostly small; some past a k-block, some with many rows (several blocks of A) */
    p->m = size == 0 ? rand_int(60, 200) : rand_int(1, size < 5 ? 13 : 40);
    p->n = rand_int(1, chance(1, 2) ? 20 : 50);
    p->k = size == 1 ? rand_int(AOTC_GEMM_KC - 3, AOTC_GEMM_KC + 40) : size == 2 ? rand_int(0, 2) : rand_int(1, 40);
    if (may_transpose_a && chance(1, 3)) { /* A stored k x m (transposed), rows of lda */
        p->a_rs = 1, p->a_cs = p->m + (chance(1, 2) ? 0 : rand_int(1, 5));
    } else {
        p->a_rs = p->k + (chance(1, 2) ? 0 : rand_int(1, 5)), p->a_cs = 1;
    }
    if (b_layout == B_PACKED) {
        p->b_rs = PANEL, p->b_ps = p->k * PANEL, p->b_padded = 1;
    } else if (b_layout == B_PADDED) { /* rows of whole panels (and more), as the im2col blocks */
        p->b_rs = ceil16(p->n) + (chance(1, 2) ? 0 : PANEL * rand_int(1, 2)), p->b_ps = PANEL, p->b_padded = 1;
    } else {
        p->b_rs = p->n + (chance(1, 2) ? 0 : rand_int(1, 20)), p->b_ps = PANEL, p->b_padded = 0;
    }
    p->ldc = p->n + (chance(1, 2) ? 0 : rand_int(1, 5));
    p->alpha = chance(1, 2) ? 1.0f : rand_float();
    p->beta = chance(1, 2) ? 1.0f : rand_float();
}

/* Floats of B: up to its last element, or (padded) to the end of its last panel row. */
static size_t b_floats(const aotc_sgemm_params *p, int b_layout) {
    if (p->k == 0) return 0;
    if (b_layout == B_PACKED) return (size_t)ceil16(p->n) * p->k;
    return (size_t)(p->k - 1) * p->b_rs + (b_layout == B_PADDED ? ceil16(p->n) : p->n);
}

static void print_product(const char *what, const aotc_sgemm_params *p, int b_layout, int cin, int work) {
    printf("  %s: m %d n %d k %d, a_rs %d a_cs %d, B %s b_rs %d b_ps %d, ldc %d, C_in %d (cin_rs %d cin_cs %d), "
           "alpha %g beta %g, residual %d (res_rs %d), act %d, work %d\n",
           what, (int)p->m, (int)p->n, (int)p->k, (int)p->a_rs, (int)p->a_cs,
           b_layout == B_PACKED ? "packed" : b_layout == B_PADDED ? "padded" : "plain", (int)p->b_rs, (int)p->b_ps,
           (int)p->ldc, cin, (int)p->cin_rs, (int)p->cin_cs, (double)p->alpha, (double)p->beta, p->res != NULL,
           (int)p->res_rs, (int)p->act, work);
}

static int unchanged(const float *a, const float *b, size_t n) {
    return a == NULL || n == 0 || memcmp(a, b, n * sizeof(float)) == 0;
}

static size_t work_floats(int32_t k) { return (size_t)(k < AOTC_GEMM_KC ? k : AOTC_GEMM_KC) * PANEL; }

/* ---- aotc_sgemm_f32 -------------------------------------------------------------------------- */

static int check_sgemm(void) {
    aotc_sgemm_params p, q;
    const int b_layout = rand_int(B_PLAIN, B_PACKED), cin = rand_int(CIN_NONE, CIN_C), with_res = chance(1, 3);
    const int work = chance(1, 2);
    size_t an, bn, cn, cinn = 0, rn = 0, wn;
    float *a, *b, *c, *ci = NULL, *r = NULL, *c_ref, *mag, *a0, *b0, *ci0 = NULL, *r0 = NULL, *wk = NULL;
    float *aa, *ab, *aci = NULL, *ar;
    int bad;
    do {
        draw_product(&p, b_layout, 1);
    } while ((double)p.m * p.n * (p.k + 1) > MAX_MACS);
    draw_activation(&p);
    switch (cin) {
    case CIN_ROW: p.cin_rs = 0, p.cin_cs = 1, cinn = (size_t)p.n; break;
    case CIN_COLUMN: p.cin_rs = 1, p.cin_cs = 0, cinn = (size_t)p.m; break;
    case CIN_SCALAR: p.cin_rs = 0, p.cin_cs = 0, cinn = 1; break;
    case CIN_MATRIX: p.cin_rs = p.n + rand_int(0, 3), p.cin_cs = 1, cinn = span(p.m, p.n, p.cin_rs, 1); break;
    case CIN_C: p.cin_rs = p.ldc, p.cin_cs = 1; break;
    default: break;
    }
    an = span(p.m, p.k, p.a_rs, p.a_cs), bn = b_floats(&p, b_layout), cn = span(p.m, p.n, p.ldc, 1);
    a = test_alloc(an), b = test_alloc(bn), a0 = test_copy(a, an), b0 = test_copy(b, bn);
    /* C starts as NaN, or (accumulating into C) as random values: C_in */
    c = cin == CIN_C ? test_alloc(cn) : test_alloc_nan(cn);
    c_ref = test_copy(c, cn);
    mag = test_abs(c, cn);
    if (cinn > 0) ci = test_alloc(cinn), ci0 = test_copy(ci, cinn);
    if (with_res) {
        p.res_rs = p.n + rand_int(0, 3);
        rn = span(p.m, p.n, p.res_rs, 1);
        r = test_alloc(rn), r0 = test_copy(r, rn);
    }
    wn = work ? work_floats(p.k) : 0;
    if (wn > 0) wk = test_alloc_nan(wn);
    aa = test_abs(a, an), ab = test_abs(b, bn), ar = test_abs(r, rn);
    if (ci != NULL) aci = test_abs(ci, cinn);
    /* the reference, then its magnitudes: the same sums over |terms| */
    p.res = r;
    aotc_sgemm_ref_f32(&p, a, b, cin == CIN_C ? c_ref : ci, c_ref);
    q = p;
    q.alpha = fabsf(p.alpha), q.beta = fabsf(p.beta), q.res = ar, q.act = AOTC_ACT_NONE;
    aotc_sgemm_ref_f32(&q, aa, ab, cin == CIN_C ? mag : aci, mag);
    aotc_sgemm_f32(&p, a, b, cin == CIN_C ? c : ci, c, wk);
    bad = test_differs("aotc_sgemm_f32", c, c_ref, mag, cn);
    if (!bad && !(unchanged(a, a0, an) && unchanged(b, b0, bn) && unchanged(ci, ci0, cinn) && unchanged(r, r0, rn))) {
        printf("aotc_sgemm_f32: changed an input\n");
        bad = 1;
    }
    if (bad) print_product("aotc_sgemm_f32", &p, b_layout, cin, wk != NULL);
    free(a), free(b), free(c), free(ci), free(r), free(c_ref), free(mag), free(a0), free(b0), free(ci0), free(r0);
    free(wk), free(aa), free(ab), free(aci), free(ar);
    return bad;
}

/* ---- aotc_gemm_f32 --------------------------------------------------------------------------- */

static int check_gemm(void) {
    aotc_gemm_params g, q;
    aotc_sgemm_params *p = &g.gemm;
    const int pack = chance(1, 3), with_res = chance(1, 2), cin = rand_int(CIN_NONE, CIN_MATRIX);
    const int b_layout = pack ? B_PACKED : rand_int(B_PLAIN, B_PACKED);
    size_t an, bn, yn, cinn = 0, wn;
    float *a, *b, *c = NULL, *r = NULL, *y, *y_ref, *mag, *wk = NULL, *a0, *b0, *c0 = NULL, *r0 = NULL;
    float *aa, *ab, *ac, *ar;
    int bad;
    do {
        draw_product(p, b_layout, 1);
    } while ((double)p->m * p->n * (p->k + 1) > MAX_MACS || (pack && p->k == 0));
    draw_activation(p);
    g.pack_b = pack;
    p->ldc = p->n; /* Y is m x n; C_in broadcasts as ONNX's C */
    switch (cin) {
    case CIN_ROW: p->cin_rs = 0, p->cin_cs = 1, cinn = (size_t)p->n; break;
    case CIN_COLUMN: p->cin_rs = 1, p->cin_cs = 0, cinn = (size_t)p->m; break;
    case CIN_SCALAR: p->cin_rs = 0, p->cin_cs = 0, cinn = 1; break;
    case CIN_MATRIX: p->cin_rs = p->n, p->cin_cs = 1, cinn = (size_t)p->m * p->n; break;
    default: break;
    }
    an = span(p->m, p->k, p->a_rs, p->a_cs);
    bn = pack ? (size_t)p->n * p->k : b_floats(p, b_layout); /* pack_b: B is the run-time n x k B^T */
    yn = (size_t)p->m * p->n;
    a = test_alloc(an), b = test_alloc(bn), y = test_alloc_nan(yn), y_ref = test_alloc(yn), mag = test_alloc(yn);
    a0 = test_copy(a, an), b0 = test_copy(b, bn);
    if (cinn > 0) c = test_alloc(cinn), c0 = test_copy(c, cinn);
    if (with_res) r = test_alloc(yn), r0 = test_copy(r, yn);
    wn = pack ? (size_t)ceil16(p->n) * p->k : chance(1, 2) ? work_floats(p->k) : 0;
    if (wn > 0) wk = test_alloc_nan(wn);
    aa = test_abs(a, an), ab = test_abs(b, bn), ac = test_abs(c, cinn), ar = test_abs(r, yn);
    p->res = NULL; /* (aotc_gemm_f32 takes the residual as an argument) */
    aotc_gemm_ref_f32(&g, a, b, c, r, y_ref);
    q = g;
    q.gemm.alpha = fabsf(p->alpha), q.gemm.beta = fabsf(p->beta), q.gemm.act = AOTC_ACT_NONE;
    aotc_gemm_ref_f32(&q, aa, ab, ac, ar, mag);
    aotc_gemm_f32(&g, a, b, c, r, y, wk);
    bad = test_differs("aotc_gemm_f32", y, y_ref, mag, yn);
    if (!bad && !(unchanged(a, a0, an) && unchanged(b, b0, bn) && unchanged(c, c0, cinn) && unchanged(r, r0, yn))) {
        printf("aotc_gemm_f32: changed an input\n");
        bad = 1;
    }
    if (bad) printf("  pack_b %d, residual %d\n", pack, with_res), print_product("gemm", p, b_layout, cin, wk != NULL);
    free(a), free(b), free(c), free(r), free(y), free(y_ref), free(mag), free(wk), free(a0), free(b0), free(c0);
    free(r0), free(aa), free(ab), free(ac), free(ar);
    return bad;
}

/* ---- aotc_matmul_f32 ------------------------------------------------------------------------- */

static int check_matmul(void) {
    aotc_matmul_params mp, q;
    aotc_sgemm_params *p = &mp.gemm;
    const int b_layout = chance(1, 2) ? B_PACKED : B_PLAIN;
    /* batch matrices; A and B each have one (broadcast) or one per output */
    const int32_t batch = rand_int(1, 5), a_count = chance(1, 3) ? 1 : batch, b_count = chance(1, 3) ? 1 : batch;
    int32_t a_off[5], b_off[5], t;
    size_t a_step, b_step, an, bn, yn, wn;
    float *a, *b, *y, *y_ref, *mag, *wk = NULL, *a0, *b0, *aa, *ab;
    int bad;
    do {
        draw_product(p, b_layout, 0);
        p->ldc = p->n, p->b_rs = b_layout == B_PACKED ? PANEL : p->n, p->a_rs = p->k; /* MatMul: dense operands */
        p->alpha = 1.0f;
    } while ((double)batch * p->m * p->n * (p->k + 1) > MAX_MACS);
    a_step = (size_t)p->m * p->k;
    b_step = b_floats(p, b_layout);
    for (t = 0; t < batch; ++t) {
        a_off[t] = (int32_t)((size_t)(t % a_count) * a_step);
        b_off[t] = (int32_t)((size_t)(t % b_count) * b_step);
    }
    mp.batch = batch, mp.a_offsets = a_off, mp.b_offsets = b_off;
    an = a_count * a_step, bn = b_count * b_step, yn = (size_t)batch * p->m * p->n;
    a = test_alloc(an), b = test_alloc(bn), y = test_alloc_nan(yn), y_ref = test_alloc(yn), mag = test_alloc(yn);
    a0 = test_copy(a, an), b0 = test_copy(b, bn), aa = test_abs(a, an), ab = test_abs(b, bn);
    wn = b_layout == B_PLAIN && chance(1, 2) ? work_floats(p->k) : 0;
    if (wn > 0) wk = test_alloc_nan(wn);
    aotc_matmul_ref_f32(&mp, a, b, y_ref);
    q = mp;
    aotc_matmul_ref_f32(&q, aa, ab, mag);
    aotc_matmul_f32(&mp, a, b, y, wk);
    bad = test_differs("aotc_matmul_f32", y, y_ref, mag, yn);
    if (!bad && !(unchanged(a, a0, an) && unchanged(b, b0, bn))) {
        printf("aotc_matmul_f32: changed an input\n");
        bad = 1;
    }
    if (bad) printf("  batch %d (A %d, B %d)\n", (int)batch, (int)a_count, (int)b_count),
             print_product("matmul", p, b_layout, CIN_NONE, wk != NULL);
    free(a), free(b), free(y), free(y_ref), free(mag), free(wk), free(a0), free(b0), free(aa), free(ab);
    return bad;
}

/* ---- aotc_activate_f32 ----------------------------------------------------------------------- */

static int check_activate(void) {
    aotc_sgemm_params p;
    const size_t n = (size_t)rand_int(0, 100);
    float *x = test_alloc(n), *ref = test_alloc(n);
    size_t i;
    int bad;
    memset(&p, 0, sizeof p);
    draw_activation(&p);
    for (i = 0; i < n; ++i) {  /* subnormals and zeros at the bounds: Helium's compares flush them */
        if (chance(1, 4)) x[i] = test_special_float(0);
    }
    for (i = 0; i < n; ++i) ref[i] = aotc_activate_ref(x[i], p.act, p.act_lo, p.act_hi, p.act_alpha);
    aotc_activate_f32(x, (ptrdiff_t)n, p.act, p.act_lo, p.act_hi, p.act_alpha);
    bad = test_differs("aotc_activate_f32", x, ref, NULL, n);
    if (bad) printf("  n %d, act %d\n", (int)n, (int)p.act);
    free(x), free(ref);
    return bad;
}

/* The reference on a product small enough to work out by hand:
 * [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154], + a row bias [1 -1], then Relu. */
static int check_reference(void) {
    static const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, bias[2] = {1, -200};
    static const float expect[4] = {59, 0, 140, 0};
    aotc_sgemm_params p;
    float c[4];
    memset(&p, 0, sizeof p);
    p.m = 2, p.n = 2, p.k = 3, p.a_rs = 3, p.a_cs = 1, p.b_rs = 2, p.b_ps = PANEL, p.ldc = 2;
    p.cin_rs = 0, p.cin_cs = 1, p.alpha = 1.0f, p.beta = 1.0f, p.act = AOTC_ACT_CLAMP, p.act_lo = 0.0f;
    p.act_hi = INFINITY;
    aotc_sgemm_ref_f32(&p, a, b, bias, c);
    return test_differs("aotc_sgemm_ref_f32", c, expect, NULL, 4);
}

int main(int argc, char **argv) {
    static const char *const names[4] = {"aotc_sgemm_f32", "aotc_gemm_f32", "aotc_matmul_f32", "aotc_activate_f32"};
    static int (*const checks[4])(void) = {check_sgemm, check_gemm, check_matmul, check_activate};
    const int32_t shapes = test_args(argc, argv, 300);
    int failed = check_reference(), e;
    int32_t i;
    for (e = 0; e < 4; ++e) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = checks[e]();
        printf("%-34s %s (%d shapes)\n", names[e], bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
