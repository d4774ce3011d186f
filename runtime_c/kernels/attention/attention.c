/* Attention, one query row at a time: its scores against every key (one row of scratch, never
 * the [S_q, S_kv] matrix), the mask, a softmax, and the weighted sum of the values. The order of
 * the steps is the ONNX reference's: scale, softcap, mask (additive), softmax; a row whose mask
 * admits no key gives zeros.
 *
 * Speed: each key/value head's keys are first copied transposed ([D][T], the cache's and the new
 * ones together) into scratch, so a row's scores are D passes of a contiguous multiply-add over
 * the keys, which the compiler vectorises without reassociating any sum; the values are summed
 * row by row, contiguous over the head's features. The copy is made once per key/value head and
 * serves every query row of the query heads that share it. */
#include "aotc_attention.h"
#include "fast_math.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Key or value row j of head (b, kh): from the cache for j < past_len, else from the new K / V. */
static const float *kv_row(const aotc_attention_params *p, const float *x, const float *past,
                           const aotc_attention_strides *st, int32_t dim, int32_t b, int32_t kh, int32_t j) {
    if (j < p->past_len) return past + ((size_t)(b * p->kv_heads + kh) * p->past_len + j) * dim;
    return x + (size_t)b * st->b + (size_t)kh * st->h + (size_t)(j - p->past_len) * st->s;
}

static void fill_present(const aotc_attention_params *p, const float *past, const float *x,
                         const aotc_attention_strides *st, int32_t dim, float *present) {
    const int32_t total = p->past_len + p->kv_len;
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t h = 0; h < p->kv_heads; ++h)
            for (int32_t j = 0; j < total; ++j)
                memcpy(present + ((size_t)(b * p->kv_heads + h) * total + j) * dim, kv_row(p, x, past, st, dim, b, h, j),
                       (size_t)dim * sizeof(float));
}

/* The keys query row i may see, [*lo, *hi] (empty when *hi < *lo): the causal and sliding-window
 * frontiers around its position pos, the batch's count of valid keys, and the mask's length. */
static void key_range(const aotc_attention_params *p, int64_t pos, int64_t valid, int32_t *lo, int32_t *hi) {
    int64_t a = 0, z = valid - 1;
    if (p->causal && z > pos) z = pos;
    if (p->right_window >= 0 && z > pos + p->right_window) z = pos + p->right_window;
    if (p->left_window >= 0 && a < pos - p->left_window) a = pos - p->left_window;
    if (p->mask_kind && z > p->mask_len - 1) z = p->mask_len - 1;
    *lo = (int32_t)a;
    *hi = (int32_t)(z < a ? a - 1 : z);
}

/* Row i's scores in place: scaled, softcapped, the mask added (bool: -inf where it is 0), -inf
 * outside [lo, hi]. Returns how many keys stay finite-biased: 0 means the row sees no key. */
static int32_t bias_scores(const aotc_attention_params *p, const void *mask, size_t mask_row, int32_t lo, int32_t hi,
                           int32_t total, float *s, float *qk) {
    int32_t j, seen = 0;
    for (j = 0; j < total; ++j) s[j] *= p->scale;
    if (p->softcap > 0.0f)
        for (j = 0; j < total; ++j) s[j] = p->softcap * tanhf(s[j] / p->softcap);
    if (qk && p->qk_mode <= 1) memcpy(qk, s, (size_t)total * sizeof(float));
    for (j = 0; j < lo && j < total; ++j) s[j] = -INFINITY;
    for (j = hi + 1 > 0 ? hi + 1 : 0; j < total; ++j) s[j] = -INFINITY;
    if (p->mask_kind == 1) {
        const uint8_t *m = (const uint8_t *)mask + mask_row;
        for (j = lo; j <= hi; ++j) {
            seen += m[j] != 0;
            s[j] = m[j] ? s[j] : -INFINITY;
        }
    } else if (p->mask_kind == 2) {
        const float *m = (const float *)mask + mask_row;
        for (j = lo; j <= hi; ++j) {
            seen += m[j] != -INFINITY;
            s[j] += m[j];
        }
    } else {
        seen = hi - lo + 1 > 0 ? hi - lo + 1 : 0;
    }
    if (qk && p->qk_mode == 2) memcpy(qk, s, (size_t)total * sizeof(float));
    return seen;
}

/* Softmax of s over [lo, hi] in place (-inf scores weigh 0); keys outside weigh 0. */
static void softmax_range(float *s, int32_t lo, int32_t hi, int32_t total) {
    float top = -INFINITY, part[8] = {0}, sum = 0.0f;
    int32_t j, k;
#if AOTC_SOFTMAX_X86 /* 16 at a time (fast_math.h), where one chain of compares took half of the kernel's time */
    if (hi >= lo) top = aotc_max_avx512(s + lo, (size_t)(hi - lo + 1));
#else
    for (j = lo; j <= hi; ++j) top = s[j] > top ? s[j] : top;
#endif
    for (j = 0; j < lo && j < total; ++j) s[j] = 0.0f;
    for (j = hi + 1 > 0 ? hi + 1 : 0; j < total; ++j) s[j] = 0.0f;
    for (j = lo; j + 8 <= hi + 1; j += 8)
        for (k = 0; k < 8; ++k) {
            const float x = s[j + k];
            s[j + k] = x == -INFINITY ? 0.0f : aotc_exp_poly(x - top);
            part[k] += s[j + k];
        }
    for (; j <= hi; ++j) {
        s[j] = s[j] == -INFINITY ? 0.0f : aotc_exp_poly(s[j] - top);
        part[0] += s[j];
    }
    for (k = 0; k < 8; ++k) sum += part[k];
    for (j = lo; j <= hi; ++j) s[j] *= 1.0f / sum;
}

/* y += sum over j in [lo, hi] of w[j] * row j of x (rows `stride` apart): the sums for 8 features
 * at a time stay in registers across the rows, instead of a load and a store of y per row. */
static void weighted_rows(const float *restrict w, int32_t lo, int32_t hi, const float *restrict x, int32_t stride,
                          int32_t dim, float *restrict y) {
    enum { BLOCK = 8 };
    for (int32_t d0 = 0; d0 < dim; d0 += BLOCK) {
        const int32_t n = dim - d0 < BLOCK ? dim - d0 : BLOCK;
        float acc[BLOCK] = {0};
        if (n == BLOCK) {
            for (int32_t j = lo; j <= hi; ++j) {
                const float *xj = x + (size_t)j * stride + d0;
                for (int32_t d = 0; d < BLOCK; ++d) acc[d] += w[j] * xj[d];
            }
        } else {
            for (int32_t j = lo; j <= hi; ++j) {
                const float *xj = x + (size_t)j * stride + d0;
                for (int32_t d = 0; d < n; ++d) acc[d] += w[j] * xj[d];
            }
        }
        for (int32_t d = 0; d < n; ++d) y[d0 + d] += acc[d];
    }
}

void aotc_attention_f32(const aotc_attention_params *p, const float *q, const float *k, const float *v,
                        const void *mask, const float *past_key, const float *past_value,
                        const int64_t *nonpad_kv_len, float *y, float *present_key, float *present_value,
                        float *qk_out, float *scores) {
    const int32_t total = p->past_len + p->kv_len, group = p->q_heads / p->kv_heads, dim = p->head_dim;
    float *keys_t = scores + total; /* [dim][total]: one key/value head's keys, transposed */
    if (present_key) fill_present(p, past_key, k, &p->k, dim, present_key);
    if (present_value) fill_present(p, past_value, v, &p->v, p->v_head_dim, present_value);
    for (int32_t b = 0; b < p->batch; ++b) {
        /* where query row i sits among the keys: after the cache, or bottom-right against the valid keys */
        const int64_t valid = nonpad_kv_len ? (nonpad_kv_len[b] < total ? nonpad_kv_len[b] : total) : total;
        const int64_t offset = nonpad_kv_len && !p->past_len ? nonpad_kv_len[b] - p->q_len : p->past_len;
        for (int32_t kh = 0; kh < p->kv_heads; ++kh) {
            for (int32_t j = 0; j < total; ++j) {
                const float *kj = kv_row(p, k, past_key, &p->k, dim, b, kh, j);
                for (int32_t d = 0; d < dim; ++d) keys_t[(size_t)d * total + j] = kj[d];
            }
            const float *v_past = past_value ? kv_row(p, v, past_value, &p->v, p->v_head_dim, b, kh, 0) : NULL;
            const float *v_new = v + (size_t)b * p->v.b + (size_t)kh * p->v.h;
            for (int32_t h = kh * group; h < (kh + 1) * group; ++h)
                for (int32_t i = 0; i < p->q_len; ++i) {
                    const float *qi = q + (size_t)b * p->q.b + (size_t)h * p->q.h + (size_t)i * p->q.s;
                    float *yi = y + (size_t)b * p->y.b + (size_t)h * p->y.h + (size_t)i * p->y.s;
                    float *qk = qk_out ? qk_out + ((size_t)(b * p->q_heads + h) * p->q_len + i) * total : NULL;
                    const size_t mask_row = (size_t)b * p->mask.b + (size_t)h * p->mask.h + (size_t)i * p->mask.s;
                    int32_t lo, hi;
                    key_range(p, (int64_t)i + offset, valid, &lo, &hi);
                    for (int32_t j = 0; j < total; ++j) scores[j] = 0.0f;
                    for (int32_t d = 0; d < dim; ++d) {
                        const float qd = qi[d], *kd = keys_t + (size_t)d * total;
                        for (int32_t j = 0; j < total; ++j) scores[j] += qd * kd[j];
                    }
                    for (int32_t d = 0; d < p->v_head_dim; ++d) yi[d] = 0.0f;
                    if (!bias_scores(p, mask, mask_row, lo, hi, total, scores, qk)) {
                        /* no key to attend: zeros, as the reference gives */
                        if (qk && p->qk_mode == 3) memset(qk, 0, (size_t)total * sizeof(float));
                        continue;
                    }
                    softmax_range(scores, lo, hi, total);
                    if (qk && p->qk_mode == 3) memcpy(qk, scores, (size_t)total * sizeof(float));
                    if (lo < p->past_len)
                        weighted_rows(scores, lo, hi < p->past_len ? hi : p->past_len - 1, v_past, p->v_head_dim,
                                      p->v_head_dim, yi);
                    if (hi >= p->past_len)
                        weighted_rows(scores + p->past_len, lo > p->past_len ? lo - p->past_len : 0,
                                      hi - p->past_len, v_new, p->v.s, p->v_head_dim, yi);
                }
        }
    }
}
