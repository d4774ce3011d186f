/* Reference kernel of the attention family (declared in kernels_ref.h): ONNX Attention (opsets 23
 * to 25) from its definition, one query row and one key at a time, in double (each score computed
 * afresh wherever it is needed: no scratch). */
#include "kernels_ref.h"

#include <math.h>

/* Key (or value) j of kv head kh in batch b: the cache's for j < past_len, else the new ones'. */
static const float *key_at(const aotc_attention_params *p, const float *x, const float *past,
                           const aotc_attention_strides *st, int32_t dim, int32_t b, int32_t kh, int32_t j) {
    if (j < p->past_len) return past + (((ptrdiff_t)b * p->kv_heads + kh) * p->past_len + j) * dim;
    return x + (ptrdiff_t)b * st->b + (ptrdiff_t)kh * st->h + (ptrdiff_t)(j - p->past_len) * st->s;
}

/* The row's query, its batch and heads, its mask row, its position among the keys and the valid keys. */
typedef struct {
    const float *q, *k, *past_key;
    const void *mask;
    int32_t b, kh;
    ptrdiff_t mask_row;
    int64_t pos, valid;
} row_ctx;

/* Score of key j: q . k scaled, softcapped (*raw: this, the qk output of modes 0 and 1), then -inf if
 * a rule drops the key (past the valid keys or the mask's length, after the row's causal frontier,
 * outside its window, or 0 in a bool mask), plus a float mask's value. */
static double score(const aotc_attention_params *p, const row_ctx *r, int32_t j, double *raw) {
    const float *kj = key_at(p, r->k, r->past_key, &p->k, p->head_dim, r->b, r->kh, j);
    double s = 0.0;
    int32_t d;
    for (d = 0; d < p->head_dim; ++d) s += (double)r->q[d] * kj[d];
    s *= p->scale;
    if (p->softcap > 0.0f) s = p->softcap * tanh(s / p->softcap);
    if (raw != NULL) *raw = s;
    if (j >= r->valid || (p->causal && j > r->pos) || (p->mask_kind != 0 && j >= p->mask_len)) return -INFINITY;
    if ((p->left_window >= 0 && j < r->pos - p->left_window) || (p->right_window >= 0 && j > r->pos + p->right_window))
        return -INFINITY;
    if (p->mask_kind == 1) return ((const uint8_t *)r->mask)[r->mask_row + j] != 0 ? s : -INFINITY;
    if (p->mask_kind == 2) return s + ((const float *)r->mask)[r->mask_row + j];
    return s;
}

void aotc_attention_ref_f32(const aotc_attention_params *p, const float *q, const float *k, const float *v,
                            const void *mask, const float *past_key, const float *past_value,
                            const int64_t *nonpad_kv_len, float *y, float *present_key, float *present_value,
                            float *qk_out) {
    const int32_t total = p->past_len + p->kv_len, group = p->q_heads / p->kv_heads;
    int32_t b, h, i, j, d;
    row_ctx r;
    r.k = k, r.past_key = past_key, r.mask = mask;
    for (b = 0; b < p->batch; ++b) {
        for (h = 0; h < p->kv_heads; ++h) { /* present = [past; new] */
            for (j = 0; j < total; ++j) {
                const ptrdiff_t at = ((ptrdiff_t)b * p->kv_heads + h) * total + j;
                for (d = 0; present_key != NULL && d < p->head_dim; ++d)
                    present_key[at * p->head_dim + d] = key_at(p, k, past_key, &p->k, p->head_dim, b, h, j)[d];
                for (d = 0; present_value != NULL && d < p->v_head_dim; ++d)
                    present_value[at * p->v_head_dim + d] = key_at(p, v, past_value, &p->v, p->v_head_dim, b, h, j)[d];
            }
        }
        for (h = 0; h < p->q_heads; ++h) {
            for (i = 0; i < p->q_len; ++i) {
                float *yi = y + (ptrdiff_t)b * p->y.b + (ptrdiff_t)h * p->y.h + (ptrdiff_t)i * p->y.s;
                float *qk = qk_out != NULL ? qk_out + (((ptrdiff_t)b * p->q_heads + h) * p->q_len + i) * total : NULL;
                double top = -INFINITY, sum = 0.0, raw, s;
                r.q = q + (ptrdiff_t)b * p->q.b + (ptrdiff_t)h * p->q.h + (ptrdiff_t)i * p->q.s;
                r.b = b, r.kh = h / group;
                r.mask_row = (ptrdiff_t)b * p->mask.b + (ptrdiff_t)h * p->mask.h + (ptrdiff_t)i * p->mask.s;
                /* after the cache, or (keys padded per batch, no cache) bottom-right against the valid keys */
                r.valid = nonpad_kv_len != NULL && nonpad_kv_len[b] < total ? nonpad_kv_len[b] : total;
                r.pos = i + (nonpad_kv_len != NULL && p->past_len == 0 ? nonpad_kv_len[b] - p->q_len : p->past_len);
                for (j = 0; j < total; ++j) {
                    s = score(p, &r, j, &raw);
                    top = s > top ? s : top;
                    if (qk != NULL && p->qk_mode <= 2) qk[j] = (float)(p->qk_mode == 2 ? s : raw);
                }
                for (d = 0; d < p->v_head_dim; ++d) yi[d] = 0.0f;
                if (top == -INFINITY) { /* no key to attend to: zeros */
                    for (j = 0; qk != NULL && p->qk_mode == 3 && j < total; ++j) qk[j] = 0.0f;
                    continue;
                }
                for (j = 0; j < total; ++j) sum += exp(score(p, &r, j, NULL) - top);
                for (j = 0; qk != NULL && p->qk_mode == 3 && j < total; ++j) {
                    qk[j] = (float)(exp(score(p, &r, j, NULL) - top) / sum);
                }
                for (d = 0; d < p->v_head_dim; ++d) {
                    double acc = 0.0;
                    for (j = 0; j < total; ++j) {
                        acc += exp(score(p, &r, j, NULL) - top) / sum *
                               key_at(p, v, past_value, &p->v, p->v_head_dim, b, r.kh, j)[d];
                    }
                    yi[d] = (float)acc;
                }
            }
        }
    }
}
