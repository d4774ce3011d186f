/* The attention kernel (aotc_attention.h, attention.c) against its reference (attention_ref.c) over
 * random shapes: grouped and multi-query heads, 3-D and 4-D layouts of Q, K, V and Y (strides), a key
 * and value cache, present outputs or none, no mask, bool and float masks (some keys -inf) broadcast
 * over batch, heads or rows, the mask shorter than the keys, causal, sliding windows, softcap, valid
 * key counts per batch (nonpad_kv_len), every qk_mode; scratch exactly (1 + head_dim) * keys floats,
 * every buffer exactly its size, outputs starting as NaN. present_key and present_value are copies:
 * exact. The rest within bounds from the kernel's float arithmetic, u = 2^-24: a score is a sum of D
 * products, within (D + 4) u of D max|q| max|k| times |scale| (Higham 3.1), + 4 u of |score| + |mask|
 * for the softcap (libm's tanhf, within a few ulp) and the mask's addition: ds. A
 * softmax of T keys from e^x within 1 ulp (fast_math.h) is then within 2 ds + (T + 12) u of each
 * probability (qk_mode 3: absolute, as p <= 1), and the output, a sum of T of them times values,
 * within (2 ds + (2 T + 16) u) max|v|. Scores (qk_mode 0 to 2): ds.
 *
 *     test_attention_kernels [seed] [shapes] */
#include "aotc_attention.h"
#include "kernels_ref.h"
#include "test_compare.h"

#define U (1.0 / 16777216.0)

/* Strides of a [batch, heads, len, dim] tensor stored as 4-D, or as 3-D [batch, len, heads * dim]. */
static aotc_attention_strides layout(int three_d, int32_t heads, int32_t len, int32_t dim) {
    aotc_attention_strides s;
    s.b = heads * len * dim;
    s.h = three_d ? dim : len * dim;
    s.s = three_d ? heads * dim : dim;
    return s;
}

static void print_case(const aotc_attention_params *p, int nonpad, int present) {
    printf("  batch %d, heads %d/%d, q_len %d, kv_len %d, past %d, dims %d/%d, mask %d (len %d, strides %d %d %d), "
           "causal %d, window %d %d, scale %g, softcap %g, qk_mode %d, nonpad %d, present %d\n",
           (int)p->batch, (int)p->q_heads, (int)p->kv_heads, (int)p->q_len, (int)p->kv_len, (int)p->past_len,
           (int)p->head_dim, (int)p->v_head_dim, (int)p->mask_kind, (int)p->mask_len, (int)p->mask.b, (int)p->mask.h,
           (int)p->mask.s, (int)p->causal, (int)p->left_window, (int)p->right_window, (double)p->scale,
           (double)p->softcap, (int)p->qk_mode, nonpad, present);
}

static int check(void) {
    aotc_attention_params p;
    int32_t total, group, mb, mh, ms, j;
    size_t qn, kn, vn, yn, pkn, pvn, mn = 0, qkn, i;
    float *q, *k, *v, *past_k = NULL, *past_v = NULL, *y, *ref, *pk = NULL, *pv = NULL, *rpk = NULL, *rpv = NULL;
    float *qk = NULL, *rqk = NULL, *scores;
    void *mask = NULL;
    int64_t *nonpad = NULL;
    double ds, tol_y, tol_p, *tol;
    float vmax = 0.0f, mmax = 0.0f;
    const int present = chance(1, 2), three_d = chance(1, 2);
    int bad = 0;
    memset(&p, 0, sizeof p);
    p.batch = rand_int(1, 2), p.kv_heads = rand_int(1, 3), group = rand_int(1, 3), p.q_heads = p.kv_heads * group;
    p.q_len = rand_int(1, 9), p.kv_len = rand_int(1, 12), p.past_len = chance(1, 3) ? rand_int(1, 8) : 0;
    p.head_dim = rand_int(1, 20), p.v_head_dim = chance(1, 2) ? p.head_dim : rand_int(1, 20);
    total = p.past_len + p.kv_len;
    p.q = layout(three_d, p.q_heads, p.q_len, p.head_dim), p.k = layout(three_d, p.kv_heads, p.kv_len, p.head_dim);
    p.v = layout(three_d, p.kv_heads, p.kv_len, p.v_head_dim), p.y = layout(three_d, p.q_heads, p.q_len, p.v_head_dim);
    p.mask_kind = rand_int(0, 2), p.causal = chance(1, 2);
    p.left_window = chance(1, 4) ? rand_int(0, 4) : -1, p.right_window = chance(1, 4) ? rand_int(0, 4) : -1;
    p.scale = (chance(1, 2) ? 1.0f : 2.0f * rand_float()) / sqrtf((float)p.head_dim);
    p.softcap = chance(1, 4) ? 0.5f + 4.0f * fabsf(rand_float()) : 0.0f;
    p.qk_mode = rand_int(-1, 3);
    qn = (size_t)p.batch * p.q.b, kn = (size_t)p.batch * p.k.b, vn = (size_t)p.batch * p.v.b, yn = (size_t)p.batch * p.y.b;
    pkn = (size_t)p.batch * p.kv_heads * total * p.head_dim, pvn = (size_t)p.batch * p.kv_heads * total * p.v_head_dim;
    qkn = (size_t)p.batch * p.q_heads * p.q_len * total;
    q = test_alloc(qn), k = test_alloc(kn), v = test_alloc(vn), y = test_alloc_nan(yn), ref = test_alloc_nan(yn);
    scores = test_alloc_nan((size_t)(1 + p.head_dim) * total);
    if (p.past_len > 0) {
        past_k = test_alloc((size_t)p.batch * p.kv_heads * p.past_len * p.head_dim);
        past_v = test_alloc((size_t)p.batch * p.kv_heads * p.past_len * p.v_head_dim);
    }
    if (present) pk = test_alloc_nan(pkn), pv = test_alloc_nan(pvn), rpk = test_alloc_nan(pkn), rpv = test_alloc_nan(pvn);
    if (p.qk_mode >= 0) qk = test_alloc_nan(qkn), rqk = test_alloc_nan(qkn);
    if (p.mask_kind) { /* [B or 1, H or 1, q_len or 1, mask_len] */
        p.mask_len = chance(1, 4) ? rand_int(1, total) : total;
        ms = chance(3, 4) ? p.mask_len : 0, mh = chance(1, 2) ? (ms ? p.q_len * ms : p.mask_len) : 0;
        mb = chance(1, 2) ? (mh ? p.q_heads * mh : ms ? p.q_len * ms : p.mask_len) : 0;
        p.mask.b = mb, p.mask.h = mh, p.mask.s = ms;
        mn = (size_t)(mb ? p.batch * mb : mh ? p.q_heads * mh : ms ? p.q_len * ms : p.mask_len);
        if (p.mask_kind == 1) {
            uint8_t *m = (uint8_t *)test_alloc_bytes(mn);
            for (i = 0; i < mn; ++i) m[i] = chance(3, 4);
            mask = m;
        } else {
            float *m = test_alloc(mn);
            for (i = 0; i < mn; ++i) m[i] = chance(1, 6) ? -INFINITY : 2.0f * m[i];
            for (i = 0; i < mn; ++i) mmax = fabsf(m[i]) > mmax && m[i] != -INFINITY ? fabsf(m[i]) : mmax;
            mask = m;
        }
    }
    if (chance(1, 4)) {
        nonpad = (int64_t *)malloc((size_t)p.batch * sizeof(int64_t));
        for (j = 0; j < p.batch; ++j) nonpad[j] = rand_int(1, total);
    }
    aotc_attention_f32(&p, q, k, v, mask, past_k, past_v, nonpad, y, pk, pv, qk, scores);
    aotc_attention_ref_f32(&p, q, k, v, mask, past_k, past_v, nonpad, ref, rpk, rpv, rqk);
    for (i = 0; i < vn; ++i) vmax = fabsf(v[i]) > vmax ? fabsf(v[i]) : vmax;
    for (i = 0; past_v != NULL && i < (size_t)p.batch * p.kv_heads * p.past_len * p.v_head_dim; ++i)
        vmax = fabsf(past_v[i]) > vmax ? fabsf(past_v[i]) : vmax;
    { /* |q|, |k| < 1 */
        const double smax = fabs((double)p.scale) * p.head_dim;
        ds = (p.head_dim + 4.0) * U * smax + 4.0 * U * (smax + mmax);
    }
    tol_p = 2.0 * ds + (total + 12.0) * U;
    tol_y = (2.0 * ds + (2.0 * total + 16.0) * U) * vmax;
    tol = (double *)malloc((qkn > yn ? qkn : yn) * sizeof(double) + 1);
    for (i = 0; i < yn; ++i) tol[i] = tol_y;
    bad = test_differs_tol("aotc_attention_f32", NULL, y, ref, tol, yn);
    if (!bad && qk != NULL) {
        for (i = 0; i < qkn; ++i) tol[i] = p.qk_mode == 3 ? tol_p : ds;
        bad = test_differs_tol("aotc_attention_f32 (qk output)", NULL, qk, rqk, tol, qkn);
    }
    if (!bad && present && (memcmp(pk, rpk, pkn * sizeof(float)) != 0 || memcmp(pv, rpv, pvn * sizeof(float)) != 0)) {
        printf("aotc_attention_f32: present_key or present_value differs\n");
        bad = 1;
    }
    if (bad) print_case(&p, nonpad != NULL, present);
    free(q), free(k), free(v), free(past_k), free(past_v), free(y), free(ref), free(pk), free(pv), free(rpk), free(rpv);
    free(qk), free(rqk), free(scores), free(mask), free(nonpad), free(tol);
    return bad;
}

/* The reference on a case worked out by hand: one head, keys k0 = [1, 0], k1 = [0, 1], values 2 and
 * 4, query [ln 3, 0], scale 1: probabilities e^ln3 / (e^ln3 + 1) = 3/4 and 1/4, output 2.5; causal
 * at row 0 (no cache) sees k0 alone: 2. */
static int check_reference(void) {
    static const float q[2] = {1.0986122887f, 0.0f}, k[4] = {1, 0, 0, 1}, v[2] = {2, 4};
    static const float want[1] = {2.5f}, want_causal[1] = {2.0f}, mag[1] = {1.0f};
    aotc_attention_params p;
    float y[1];
    int bad;
    memset(&p, 0, sizeof p);
    p.batch = p.q_heads = p.kv_heads = p.q_len = 1, p.kv_len = 2, p.head_dim = 2, p.v_head_dim = 1;
    p.q = layout(0, 1, 1, 2), p.k = layout(0, 1, 2, 2), p.v = layout(0, 1, 2, 1), p.y = layout(0, 1, 1, 1);
    p.left_window = p.right_window = -1, p.scale = 1.0f, p.qk_mode = -1;
    aotc_attention_ref_f32(&p, q, k, v, NULL, NULL, NULL, NULL, y, NULL, NULL, NULL);
    bad = test_differs("aotc_attention_ref_f32", y, want, mag, 1);
    p.causal = 1;
    aotc_attention_ref_f32(&p, q, k, v, NULL, NULL, NULL, NULL, y, NULL, NULL, NULL);
    return bad | test_differs("aotc_attention_ref_f32 (causal)", y, want_causal, mag, 1);
}

int main(int argc, char **argv) {
    const int32_t shapes = test_args(argc, argv, 300);
    int bad = check_reference();
    int32_t i;
    for (i = 0; i < shapes && !bad; ++i) bad = check();
    printf("%-34s %s (%d shapes)\n", "aotc_attention_f32", bad ? "MISMATCH" : "ok", (int)i);
    return bad;
}
