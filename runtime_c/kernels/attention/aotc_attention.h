/* Attention (ONNX opsets 23-25): scaled dot-product attention with masks, causal and sliding
 * windows, grouped/multi-query heads and a key/value cache, in one pass per query row. */
#ifndef AOTC_ATTENTION_H
#define AOTC_ATTENTION_H

#include "aotc_common.h" /* first: the bundle's names for these functions */
#include <stdint.h>

/* Element strides of a [batch, heads, sequence, features] view: 3-D tensors [B, S, H * D] and
 * 4-D tensors [B, H, S, D] are both read through them, so no transpose is materialised. */
typedef struct {
    int32_t b, h, s;
} aotc_attention_strides;

typedef struct {
    int32_t batch;
    int32_t q_heads, kv_heads;   /* q head h reads kv head h / (q_heads / kv_heads) */
    int32_t q_len, kv_len;       /* query rows, and new keys in K and V */
    int32_t past_len;            /* keys in past_key / past_value, before the new ones */
    int32_t head_dim, v_head_dim;
    aotc_attention_strides q, k, v, y;
    int32_t mask_kind;           /* 0: none; 1: bool (0 masks the key); 2: float, added to the score */
    aotc_attention_strides mask; /* per (batch, head, query row); 0 where the mask broadcasts */
    int32_t mask_len;            /* keys the mask covers: keys beyond it are masked */
    int32_t causal;              /* key j is seen by row i iff j <= i + offset */
    int32_t left_window, right_window; /* -1: unbounded; else i + offset - left <= j <= i + offset + right */
    float scale;                 /* applied to q . k */
    float softcap;               /* > 0: scores become softcap * tanh(score / softcap) */
    int32_t qk_mode;             /* -1: no qk output; 0/1: scores; 2: scores + mask; 3: probabilities */
} aotc_attention_params;

/* present_key/value [B, kv_heads, past_len + kv_len, D] (NULL when not wanted, and then the keys
 * are read from past and K directly); nonpad_kv_len: int64 [B] valid keys per batch, or NULL;
 * scores: scratch of (1 + head_dim) * (past_len + kv_len) floats. */
void aotc_attention_f32(const aotc_attention_params *p, const float *q, const float *k, const float *v,
                        const void *mask, const float *past_key, const float *past_value,
                        const int64_t *nonpad_kv_len, float *y, float *present_key, float *present_value,
                        float *qk_out, float *scores);

#endif /* AOTC_ATTENTION_H */
