/* Attention, one query row at a time: its scores against every key (one row of scratch, never
 * the [S_q, S_kv] matrix), the mask, a softmax, and the weighted sum of the values. The order of
 * the steps is the ONNX reference's: scale, softcap, mask (additive), softmax; a row whose mask
 * admits no key gives zeros. */
#include "aotc_attention.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const float *key_row(const aotc_attention_params *p, const float *k, const float *past, const float *present,
                            int32_t b, int32_t kh, int32_t j, int32_t dim, const aotc_attention_strides *st) {
    const int32_t total = p->past_len + p->kv_len;
    if (present) return present + ((size_t)(b * p->kv_heads + kh) * total + j) * dim;
    if (j < p->past_len) return past + ((size_t)(b * p->kv_heads + kh) * p->past_len + j) * dim;
    return k + (size_t)b * st->b + (size_t)kh * st->h + (size_t)(j - p->past_len) * st->s;
}

static void fill_present(const aotc_attention_params *p, const float *past, const float *x,
                         const aotc_attention_strides *st, int32_t dim, float *present) {
    const int32_t total = p->past_len + p->kv_len;
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t h = 0; h < p->kv_heads; ++h) {
            float *dst = present + (size_t)(b * p->kv_heads + h) * total * dim;
            if (p->past_len)
                memcpy(dst, past + (size_t)(b * p->kv_heads + h) * p->past_len * dim,
                       (size_t)p->past_len * dim * sizeof(float));
            for (int32_t j = 0; j < p->kv_len; ++j)
                memcpy(dst + (size_t)(p->past_len + j) * dim, x + (size_t)b * st->b + (size_t)h * st->h + (size_t)j * st->s,
                       (size_t)dim * sizeof(float));
        }
}

/* The additive bias of key j for row i: 0 or -INFINITY (or the float mask's value). */
static float bias(const aotc_attention_params *p, const void *mask, const int64_t *nonpad, int32_t b, int32_t h,
                  int32_t i, int32_t j) {
    float add = 0.0f;
    if (p->mask_kind) {
        if (j >= p->mask_len) return -INFINITY;
        const size_t at = (size_t)b * p->mask.b + (size_t)h * p->mask.h + (size_t)i * p->mask.s + (size_t)j;
        if (p->mask_kind == 1) {
            if (!((const uint8_t *)mask)[at]) return -INFINITY;
        } else {
            add = ((const float *)mask)[at];
        }
    }
    /* where row i sits among the keys: after the cache, or bottom-right against the valid keys */
    const int64_t offset = nonpad && !p->past_len ? nonpad[b] - p->q_len : p->past_len;
    const int64_t pos = (int64_t)i + offset;
    if (p->causal && j > pos) return -INFINITY;
    if (p->left_window >= 0 && pos - j > p->left_window) return -INFINITY;
    if (p->right_window >= 0 && j - pos > p->right_window) return -INFINITY;
    if (nonpad && j >= nonpad[b]) return -INFINITY;
    return add;
}

void aotc_attention_f32(const aotc_attention_params *p, const float *q, const float *k, const float *v,
                        const void *mask, const float *past_key, const float *past_value,
                        const int64_t *nonpad_kv_len, float *y, float *present_key, float *present_value,
                        float *qk_out, float *scores) {
    const int32_t total = p->past_len + p->kv_len, group = p->q_heads / p->kv_heads;
    if (present_key) fill_present(p, past_key, k, &p->k, p->head_dim, present_key);
    if (present_value) fill_present(p, past_value, v, &p->v, p->v_head_dim, present_value);
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t h = 0; h < p->q_heads; ++h)
            for (int32_t i = 0; i < p->q_len; ++i) {
                const float *qi = q + (size_t)b * p->q.b + (size_t)h * p->q.h + (size_t)i * p->q.s;
                float *yi = y + (size_t)b * p->y.b + (size_t)h * p->y.h + (size_t)i * p->y.s;
                float *qk = qk_out ? qk_out + ((size_t)(b * p->q_heads + h) * p->q_len + i) * total : NULL;
                float top = -INFINITY;
                int32_t seen = 0; /* keys the mask admits */
                for (int32_t j = 0; j < total; ++j) {
                    const float *kj = key_row(p, k, past_key, present_key, b, h / group, j, p->head_dim, &p->k);
                    float s = 0.0f;
                    for (int32_t d = 0; d < p->head_dim; ++d) s += qi[d] * kj[d];
                    s *= p->scale;
                    if (p->softcap > 0.0f) s = p->softcap * tanhf(s / p->softcap);
                    if (qk && p->qk_mode <= 1) qk[j] = s;
                    const float add = bias(p, mask, nonpad_kv_len, b, h, i, j);
                    if (add != -INFINITY) ++seen;
                    s += add;
                    if (qk && p->qk_mode == 2) qk[j] = s;
                    scores[j] = s;
                    if (s > top) top = s;
                }
                for (int32_t d = 0; d < p->v_head_dim; ++d) yi[d] = 0.0f;
                if (!seen) { /* no key to attend: zeros, as the reference gives */
                    if (qk && p->qk_mode == 3) memset(qk, 0, (size_t)total * sizeof(float));
                    continue;
                }
                float sum = 0.0f;
                for (int32_t j = 0; j < total; ++j) {
                    scores[j] = expf(scores[j] - top);
                    sum += scores[j];
                }
                const float inv = 1.0f / sum;
                for (int32_t j = 0; j < total; ++j) {
                    const float w = scores[j] * inv;
                    if (qk && p->qk_mode == 3) qk[j] = w;
                    const float *vj = key_row(p, v, past_value, present_value, b, h / group, j, p->v_head_dim, &p->v);
                    for (int32_t d = 0; d < p->v_head_dim; ++d) yi[d] += w * vj[d];
                }
            }
}
