/* ONNX LSTM, GRU and RNN (aotc_recurrent.h): per direction, one GEMM for every step's input
 * projection, then a loop over the steps, each a recurrent GEMM over the batch and the gates. */
#include "aotc_recurrent.h"
#include "fast_math.h"

#include <math.h>
#include <string.h>

/* the quantized LSTM's products by AVX-512 VNNI where the build has it */
#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && !defined(AOTC_NO_INTRINSICS)
#define AOTC_LSTM_Q8_VNNI 1
#include <immintrin.h>
#else
#define AOTC_LSTM_Q8_VNNI 0
#endif

static inline float sigmoid_poly(float v) { return 1.0f / (1.0f + aotc_exp_poly(-v)); }

/* tanh from e^-2|v|; near 0, where 1 - e^-2|v| cancels, its series to v^5. */
static inline float tanh_poly(float v) {
    const float a = fabsf(v), e = aotc_exp_poly(-2.0f * a), v2 = v * v;
    const float t = (1.0f - e) / (1.0f + e);
    const float small = v * (1.0f + v2 * (-1.0f / 3.0f + v2 * (2.0f / 15.0f)));
    return a < 0.03f ? small : (v < 0.0f ? -t : t);
}

static float act_one(int32_t kind, float alpha, float beta, float v) {
    switch (kind) {
    case AOTC_RNN_ACT_RELU: return v > 0.0f ? v : 0.0f;
    case AOTC_RNN_ACT_TANH: return tanh_poly(v);
    case AOTC_RNN_ACT_SIGMOID: return sigmoid_poly(v);
    case AOTC_RNN_ACT_AFFINE: return alpha * v + beta;
    case AOTC_RNN_ACT_LEAKY_RELU: return v >= 0.0f ? v : alpha * v;
    case AOTC_RNN_ACT_THRESHOLDED_RELU: return v > alpha ? v : 0.0f;
    case AOTC_RNN_ACT_SCALED_TANH: return alpha * tanh_poly(beta * v);
    case AOTC_RNN_ACT_HARD_SIGMOID: {
        const float s = alpha * v + beta;
        return s < 0.0f ? 0.0f : (s > 1.0f ? 1.0f : s);
    }
    case AOTC_RNN_ACT_ELU: return v >= 0.0f ? v : alpha * (expf(v) - 1.0f);
    case AOTC_RNN_ACT_SOFTSIGN: return v / (1.0f + fabsf(v));
    default: return v > 20.0f ? v : log1pf(expf(v)); /* AOTC_RNN_ACT_SOFTPLUS */
    }
}

/* x[0, n) = act(clip(x)): the switch is outside the loops of the common functions. */
static void activate(const aotc_rnn_activation *a, float clip, float *x, int32_t n) {
    int32_t j;
    if (clip > 0.0f) {
        for (j = 0; j < n; ++j) x[j] = x[j] < -clip ? -clip : (x[j] > clip ? clip : x[j]);
    }
    if (a->kind == AOTC_RNN_ACT_SIGMOID) {
        for (j = 0; j < n; ++j) x[j] = sigmoid_poly(x[j]);
    } else if (a->kind == AOTC_RNN_ACT_TANH) {
        for (j = 0; j < n; ++j) x[j] = tanh_poly(x[j]);
    } else {
        for (j = 0; j < n; ++j) x[j] = act_one(a->kind, a->alpha, a->beta, x[j]);
    }
}

/* [w | r] (n rows, one per gate unit: k_w columns of w, then k_r of r; r's rows from r_rows on
 * read as zero) transposed and packed as aotc_gemm.h's packed B of k_w + k_r rows. r NULL: w alone. */
static void pack_transposed(const float *w, int32_t k_w, const float *r, int32_t k_r, int32_t r_rows, int32_t n,
                            float *dst) {
    const int32_t panels = (n + AOTC_GEMM_PANEL - 1) / AOTC_GEMM_PANEL, k = k_w + (r ? k_r : 0);
    int32_t q, p, jj;
    for (q = 0; q < panels; ++q) {
        for (p = 0; p < k; ++p) {
            float *row = dst + ((ptrdiff_t)q * k + p) * AOTC_GEMM_PANEL;
            for (jj = 0; jj < AOTC_GEMM_PANEL; ++jj) {
                const int32_t j = q * AOTC_GEMM_PANEL + jj;
                float v = 0.0f;
                if (j < n && p < k_w) v = w[(ptrdiff_t)j * k_w + p];
                else if (j < n && j < r_rows) v = r[(ptrdiff_t)j * k_r + (p - k_w)];
                row[jj] = v;
            }
        }
    }
}

/* One direction's weights as the loop reads them: the compiler's, or run-time ones packed into work.
 * With step_proj the input and recurrent weights are one stacked matrix [W^T; R^T] in `w`. */
static aotc_rnn_weights direction_weights(const aotc_rnn_params *p, int32_t d, const float *w, const float *r,
                                          const float *b, float *work) {
    aotc_rnn_weights out = p->weights[d];
    const int32_t hid = p->hidden, gh = p->gates * hid, gru = p->cell == AOTC_CELL_GRU;
    const int32_t rec_cols = gru ? 2 * hid : gh;
    const float *wd = w ? w + (ptrdiff_t)d * gh * p->input : NULL, *rd = r ? r + (ptrdiff_t)d * gh * hid : NULL;
    if (out.w == NULL) {
        pack_transposed(wd, p->input, p->step_proj ? rd : NULL, hid, rec_cols, gh, work + p->off_w);
        out.w = work + p->off_w;
    }
    if (out.r == NULL && !p->step_proj) {
        pack_transposed(rd, hid, NULL, 0, 0, rec_cols, work + p->off_r);
        out.r = work + p->off_r;
    }
    if (gru && out.r_h == NULL) {
        pack_transposed(rd + (ptrdiff_t)2 * hid * hid, hid, NULL, 0, 0, hid, work + p->off_r_h);
        out.r_h = work + p->off_r_h;
    }
    if (b != NULL) {
        const float *wb = b + (ptrdiff_t)d * 2 * gh, *rb = wb + gh;
        float *bias = work + p->off_bias;
        int32_t j;
        for (j = 0; j < gh; ++j) bias[j] = wb[j] + rb[j];
        if (gru && p->linear_before_reset) {
            float *rb_h = work + p->off_rb_h;
            for (j = 0; j < hid; ++j) {
                bias[2 * hid + j] = wb[2 * hid + j];
                rb_h[j] = rb[2 * hid + j];
            }
            out.rb_h = rb_h;
        }
        out.bias = bias;
    }
    return out;
}

static ptrdiff_t state_at(const aotc_rnn_params *p, int32_t d, int32_t b) {
    return (p->layout == 0 ? (ptrdiff_t)d * p->batch + b : (ptrdiff_t)b * p->directions + d) * p->hidden;
}

static ptrdiff_t y_at(const aotc_rnn_params *p, int32_t t, int32_t d, int32_t b) {
    const ptrdiff_t row = p->layout == 0 ? ((ptrdiff_t)t * p->directions + d) * p->batch + b
                                         : ((ptrdiff_t)b * p->seq + t) * p->directions + d;
    return row * p->hidden;
}

static ptrdiff_t x_row(const aotc_rnn_params *p, int32_t t, int32_t b) {
    return p->layout == 0 ? (ptrdiff_t)t * p->batch + b : (ptrdiff_t)b * p->seq + t;
}

static int32_t steps_of(const aotc_rnn_params *p, const int32_t *seq_lens, int32_t b) {
    int32_t n = seq_lens ? seq_lens[b] : p->seq;
    return n < 0 ? 0 : (n > p->seq ? p->seq : n);
}

/* LSTM, gates i, o, f, c: g holds this step's whole pre-activation (projection and recurrent product). */
static void lstm_cell(const aotc_rnn_params *p, const aotc_rnn_activation *act, const float *peep, float *g,
                      float *h, float *c) {
    const int32_t n = p->hidden;
    float *gi = g, *go = g + n, *gf = g + 2 * n, *gc = g + 3 * n;
    int32_t j;
    if (peep) {
        for (j = 0; j < n; ++j) {
            gi[j] += peep[j] * c[j];
            gf[j] += peep[2 * n + j] * c[j];
        }
    }
    activate(&act[0], p->clip, gi, n);
    if (p->input_forget) {
        for (j = 0; j < n; ++j) gf[j] = 1.0f - gi[j];
    } else {
        activate(&act[0], p->clip, gf, n);
    }
    activate(&act[1], p->clip, gc, n);
    for (j = 0; j < n; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
    if (peep) {
        for (j = 0; j < n; ++j) go[j] += peep[n + j] * c[j];
    }
    activate(&act[0], p->clip, go, n);
    memcpy(gc, c, (size_t)n * sizeof(float));
    activate(&act[2], 0.0f, gc, n);
    for (j = 0; j < n; ++j) h[j] = go[j] * gc[j];
}

/* The state H lives in `work`: its own batch x hidden block, or (step_proj) the right part of the
 * rows [x_t | H] that the step's one product [x_t | H] * [W^T; R^T] reads. */
static void run_direction(const aotc_rnn_params *p, int32_t d, const aotc_rnn_weights *wt, const float *x,
                          const int32_t *seq_lens, const float *initial_h, const float *initial_c, const float *peep,
                          float *y, float *y_h, float *y_c, float *work) {
    const int32_t hid = p->hidden, gh = p->gates * hid, batch = p->batch, in = p->input;
    const int32_t backward = p->directions == 2 ? d == 1 : p->reverse;
    const int32_t fused = p->step_proj, hs = fused ? in + hid : hid; /* step between batch entries of H */
    const aotc_rnn_activation *act = p->act[d];
    float *proj = work + p->off_proj, *gates = work + p->off_gates, *c = work + p->off_c;
    float *xh = work + p->off_xh, *h = fused ? xh + in : work + p->off_h, *rh = work + p->off_rh;
    const float *pd = peep ? peep + (ptrdiff_t)d * 3 * hid : NULL;
    int32_t b, s, t, j, longest = 0;

    if (!fused) aotc_sgemm_f32(&p->proj, x, wt->w, wt->bias, proj, NULL);
    for (b = 0; b < batch; ++b) {
        const int32_t len = steps_of(p, seq_lens, b);
        if (len > longest) longest = len;
        if (fused) memset(xh + (ptrdiff_t)b * hs, 0, (size_t)in * sizeof(float));
        if (initial_h) memcpy(h + (ptrdiff_t)b * hs, initial_h + state_at(p, d, b), (size_t)hid * sizeof(float));
        else memset(h + (ptrdiff_t)b * hs, 0, (size_t)hid * sizeof(float));
        if (p->cell == AOTC_CELL_LSTM) {
            if (initial_c) memcpy(c + (ptrdiff_t)b * hid, initial_c + state_at(p, d, b), (size_t)hid * sizeof(float));
            else memset(c + (ptrdiff_t)b * hid, 0, (size_t)hid * sizeof(float));
        }
    }
    for (s = 0; s < longest; ++s) {
        if (fused) { /* each entry's x_t beside its H: one product gives the whole pre-activation */
            for (b = 0; b < batch; ++b) {
                const int32_t len = steps_of(p, seq_lens, b);
                if (s >= len) continue;
                t = backward ? len - 1 - s : s;
                memcpy(xh + (ptrdiff_t)b * hs, x + x_row(p, t, b) * in, (size_t)in * sizeof(float));
            }
            aotc_sgemm_f32(&p->rec, xh, wt->w, wt->bias, gates, NULL);
        } else {
            aotc_sgemm_f32(&p->rec, h, wt->r, NULL, gates, NULL);
        }
        if (p->cell == AOTC_CELL_GRU) {
            const int32_t lbr = p->linear_before_reset;
            for (b = 0; b < batch; ++b) { /* z and r, then the reset state r * H for the h gate's product */
                const int32_t len = steps_of(p, seq_lens, b);
                float *g = gates + (ptrdiff_t)b * gh;
                if (s >= len) {
                    if (!lbr) memset(rh + (ptrdiff_t)b * hid, 0, (size_t)hid * sizeof(float));
                    continue;
                }
                t = backward ? len - 1 - s : s;
                if (!fused) {
                    const float *xr = proj + x_row(p, t, b) * gh;
                    for (j = 0; j < 2 * hid; ++j) g[j] += xr[j];
                }
                activate(&act[0], p->clip, g, 2 * hid);
                if (!lbr) {
                    for (j = 0; j < hid; ++j) rh[(ptrdiff_t)b * hid + j] = g[hid + j] * h[(ptrdiff_t)b * hs + j];
                }
            }
            /* the h gate's recurrent product: (r * H) Rh^T added to the projection already in the gates
             * (fused) or written there; with linear_before_reset H Rh^T + Rbh, into rh when fused */
            aotc_sgemm_f32(&p->rec_h, lbr ? h : rh, wt->r_h, lbr ? wt->rb_h : (fused ? gates + 2 * hid : NULL),
                           fused && lbr ? rh : gates + 2 * hid, NULL);
        }
        for (b = 0; b < batch; ++b) {
            const int32_t len = steps_of(p, seq_lens, b);
            float *g = gates + (ptrdiff_t)b * gh, *hb = h + (ptrdiff_t)b * hs;
            const float *xr;
            if (s >= len) continue;
            t = backward ? len - 1 - s : s;
            xr = fused ? NULL : proj + x_row(p, t, b) * gh;
            if (p->cell == AOTC_CELL_LSTM) {
                if (xr) {
                    for (j = 0; j < gh; ++j) g[j] += xr[j];
                }
                lstm_cell(p, act, pd, g, hb, c + (ptrdiff_t)b * hid);
            } else if (p->cell == AOTC_CELL_GRU) {
                float *gz = g, *gr = g + hid, *gn = g + 2 * hid;
                if (p->linear_before_reset) { /* gn: x Wh + Wbh (+ H Rh^T + Rbh unless fused: then in rh) */
                    const float *hn = fused ? rh + (ptrdiff_t)b * hid : gn;
                    const float *xn = fused ? gn : xr + 2 * hid;
                    for (j = 0; j < hid; ++j) gn[j] = xn[j] + gr[j] * hn[j];
                } else if (xr) {
                    for (j = 0; j < hid; ++j) gn[j] += xr[2 * hid + j];
                }
                activate(&act[1], p->clip, gn, hid);
                for (j = 0; j < hid; ++j) hb[j] = (1.0f - gz[j]) * gn[j] + gz[j] * hb[j];
            } else {
                if (xr) {
                    for (j = 0; j < hid; ++j) g[j] += xr[j];
                }
                activate(&act[0], p->clip, g, hid);
                memcpy(hb, g, (size_t)hid * sizeof(float));
            }
            if (y) memcpy(y + y_at(p, t, d, b), hb, (size_t)hid * sizeof(float));
        }
    }
    for (b = 0; b < batch; ++b) {
        const int32_t len = steps_of(p, seq_lens, b);
        if (y) {
            for (t = len; t < p->seq; ++t) memset(y + y_at(p, t, d, b), 0, (size_t)hid * sizeof(float));
        }
        /* an empty sequence has no last step: its Y_h and Y_c are zero (as onnxruntime has them) */
        if (y_h && len == 0) memset(y_h + state_at(p, d, b), 0, (size_t)hid * sizeof(float));
        else if (y_h) memcpy(y_h + state_at(p, d, b), h + (ptrdiff_t)b * hs, (size_t)hid * sizeof(float));
        if (y_c && len == 0) memset(y_c + state_at(p, d, b), 0, (size_t)hid * sizeof(float));
        else if (y_c) memcpy(y_c + state_at(p, d, b), c + (ptrdiff_t)b * hid, (size_t)hid * sizeof(float));
    }
}

void aotc_rnn_f32(const aotc_rnn_params *p, const float *x, const float *w, const float *r, const float *b,
                  const int32_t *seq_lens, const float *initial_h, const float *initial_c, const float *peep,
                  float *y, float *y_h, float *y_c, float *work) {
    int32_t d;
    for (d = 0; d < p->directions; ++d) {
        const aotc_rnn_weights wt = direction_weights(p, d, w, r, b, work);
        run_direction(p, d, &wt, x, seq_lens, initial_h, initial_c, peep, y, y_h, y_c, work);
    }
}

/* ---- DynamicQuantizeLSTM (aotc_recurrent.h) ------------------------------------------------ */

/* The scale and zero point of x[0, n)'s range widened to hold 0 (DynamicQuantizeLinear's formula, as quant_impl.h's
 * aotc_dynamic_quantize_u8 and onnxruntime compute it); returns the zero point. Kept here so that a recurrent bundle
 * does not ship the quant family. */
static int32_t range_u8(int32_t n, const float *x, float *scale) {
    float lo = 0.0f, hi = 0.0f, s, zero_f;
    int32_t i;
    for (i = 0; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    s = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    zero_f = 0.0f - lo / s;
    zero_f = zero_f < 0.0f ? 0.0f : zero_f > 255.0f ? 255.0f : zero_f;
    *scale = s;
    return (int32_t)rintf(zero_f);
}

/* x[0, n) to uint8 by the scale s and zero point zero (range_u8's) */
static void to_u8(int32_t n, const float *x, float s, int32_t zero, uint8_t *q) {
    int32_t i;
    for (i = 0; i < n; ++i) {
        float f = x[i] / s;
        f = f < (float)(0 - zero) ? (float)(0 - zero) : f;
        f = f > (float)(255 - zero) ? (float)(255 - zero) : f;
        q[i] = (uint8_t)((int32_t)rintf(f) + zero);
    }
}

/* x[0, n) to uint8 by its own range (range_u8); returns the zero point */
static int32_t quantize_u8(int32_t n, const float *x, uint8_t *q, float *scale) {
    const int32_t zero = range_u8(n, x, scale);
    to_u8(n, x, *scale, zero, q);
    return zero;
}

/* A row's 4 values from a[4 g] on, those at or past k zero (the weights' padded rows are zero too). */
static uint32_t quad_u8(const uint8_t *a, int32_t g, int32_t k) {
    uint32_t q = 0;
    if (4 * g + 4 <= k) {
        memcpy(&q, a + 4 * g, 4);
    } else {
        int32_t i;
        for (i = 4 * g; i < k; ++i) q |= (uint32_t)a[i] << (8 * (i - 4 * g));
    }
    return q;
}

#if AOTC_LSTM_Q8_VNNI
/* One panel's 64 sums of a row by AVX-512 VNNI: each VPDPBUSD takes a quad of uint8 (the row's, broadcast)
 * times 16 columns' quads of int8, exactly (no saturation); two sets of accumulators, even and odd quads, so
 * that the sums' dependency chains are half as long. */
static void panel_sums(const uint8_t *a, int32_t k, const int8_t *panel, int32_t *sums) {
    __m512i s[8];
    const int32_t quads = (k + 3) / 4;
    int32_t g, v;
    for (v = 0; v < 8; ++v) s[v] = _mm512_setzero_si512();
    for (g = 0; 4 * g + 8 <= k; g += 2) {
        uint32_t q[2];
        const int8_t *b = panel + (ptrdiff_t)g * 4 * AOTC_LSTM_Q8_PANEL;
        __m512i a0, a1;
        memcpy(q, a + 4 * g, 8);
        a0 = _mm512_set1_epi32((int)q[0]);
        a1 = _mm512_set1_epi32((int)q[1]);
        for (v = 0; v < 4; ++v) {
            s[v] = _mm512_dpbusd_epi32(s[v], a0, _mm512_loadu_si512((const void *)(b + 64 * v)));
            s[4 + v] = _mm512_dpbusd_epi32(s[4 + v], a1, _mm512_loadu_si512((const void *)(b + 256 + 64 * v)));
        }
    }
    for (; g < quads; ++g) {
        const __m512i a0 = _mm512_set1_epi32((int)quad_u8(a, g, k));
        const int8_t *b = panel + (ptrdiff_t)g * 4 * AOTC_LSTM_Q8_PANEL;
        for (v = 0; v < 4; ++v) s[v] = _mm512_dpbusd_epi32(s[v], a0, _mm512_loadu_si512((const void *)(b + 64 * v)));
    }
    for (v = 0; v < 4; ++v) _mm512_storeu_si512((void *)(sums + 16 * v), _mm512_add_epi32(s[v], s[4 + v]));
}
#else
static void panel_sums(const uint8_t *a, int32_t k, const int8_t *panel, int32_t *sums) {
    const int32_t quads = (k + 3) / 4;
    int32_t g, j;
    for (j = 0; j < AOTC_LSTM_Q8_PANEL; ++j) sums[j] = 0;
    for (g = 0; g < quads; ++g) {
        const uint32_t q = quad_u8(a, g, k);
        const int32_t a0 = (int32_t)(q & 255u), a1 = (int32_t)((q >> 8) & 255u);
        const int32_t a2 = (int32_t)((q >> 16) & 255u), a3 = (int32_t)(q >> 24);
        const int8_t *b = panel + (ptrdiff_t)g * 4 * AOTC_LSTM_Q8_PANEL;
        for (j = 0; j < AOTC_LSTM_Q8_PANEL; ++j) {
            sums[j] += a0 * b[4 * j] + a1 * b[4 * j + 1] + a2 * b[4 * j + 2] + a3 * b[4 * j + 3];
        }
    }
}
#endif

/* acc[m][n] = sum over k of (a - a_zero)(b - b_zero): a m x k uint8; b k x n int8 in panels of
 * AOTC_LSTM_Q8_PANEL columns (aotc_lstm_q8_weights' layout); b_sums the columns' sums of (b - b_zero). */
static void matmul_u8s8(int32_t m, int32_t n, int32_t k, const uint8_t *a, int32_t a_zero, const int8_t *b,
                        int32_t b_zero, const int32_t *b_sums, int32_t *acc) {
    const int32_t quads = (k + 3) / 4;
    int32_t i, j, q, r;
    for (i = 0; i < m; ++i) {
        const uint8_t *ar = a + (ptrdiff_t)i * k;
        int32_t *row = acc + (ptrdiff_t)i * n, a_sum = 0;
        for (r = 0; r < k; ++r) a_sum += ar[r];
        for (q = 0; q < n; q += AOTC_LSTM_Q8_PANEL) {
            const int32_t width = n - q < AOTC_LSTM_Q8_PANEL ? n - q : AOTC_LSTM_Q8_PANEL;
            int32_t sums[AOTC_LSTM_Q8_PANEL];
            panel_sums(ar, k, b + (ptrdiff_t)q * 4 * quads, sums);
            for (j = 0; j < width; ++j) row[q + j] = sums[j] - b_zero * a_sum - a_zero * b_sums[q + j];
        }
    }
}

/* Cores with caches: a chunk of steps' X W as one product (aotc_lstm_q8_params' chunk), W read from L2 once for
 * the chunk, not once a step. A Cortex-M reads its flash at the same cost either way (the compiler gives it
 * chunks of one step), and compiles none of it. */
#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
#define LSTM_Q8_CHUNKS 1

/* matmul_u8s8 a panel at a time over up to 16 rows: the panel from L1 for each of them */
static void matmul_u8s8_rows(int32_t m, int32_t n, int32_t k, const uint8_t *a, int32_t a_zero, const int8_t *b,
                             int32_t b_zero, const int32_t *b_sums, int32_t *acc) {
    const int32_t quads = (k + 3) / 4;
    int32_t i0, i, j, q, r;
    for (i0 = 0; i0 < m; i0 += 16) {
        const int32_t rows = m - i0 < 16 ? m - i0 : 16;
        int32_t a_sums[16];
        for (i = 0; i < rows; ++i) {
            const uint8_t *ar = a + (ptrdiff_t)(i0 + i) * k;
            for (a_sums[i] = 0, r = 0; r < k; ++r) a_sums[i] += ar[r];
        }
        for (q = 0; q < n; q += AOTC_LSTM_Q8_PANEL) {
            const int32_t width = n - q < AOTC_LSTM_Q8_PANEL ? n - q : AOTC_LSTM_Q8_PANEL;
            const int8_t *panel = b + (ptrdiff_t)q * 4 * quads;
            for (i = 0; i < rows; ++i) {
                int32_t *row = acc + (ptrdiff_t)(i0 + i) * n, sums[AOTC_LSTM_Q8_PANEL];
                panel_sums(a + (ptrdiff_t)(i0 + i) * k, k, panel, sums);
                for (j = 0; j < width; ++j) row[q + j] = sums[j] - b_zero * a_sums[i] - a_zero * b_sums[q + j];
            }
        }
    }
}
#else
#define LSTM_Q8_CHUNKS 0
#endif

void aotc_lstm_q8_f32(const aotc_lstm_q8_params *p, const float *x, const float *initial_h, const float *initial_c,
                      const float *peep, float *y, float *y_h, float *y_c, uint8_t *work) {
    const aotc_rnn_params *rp = &p->rnn;
    const int32_t hid = rp->hidden, gh = 4 * hid, batch = rp->batch, in = rp->input, seq = rp->seq;
    uint8_t *xq = work + p->off_xq, *hq = work + p->off_hq;
    int32_t *acc = (int32_t *)(void *)(work + p->off_acc);
#if LSTM_Q8_CHUNKS
    int32_t *xacc = (int32_t *)(void *)(work + p->off_xacc);
    const int32_t chunk = p->chunk;
#endif
    float *gates = (float *)(void *)(work + p->off_gates), *h = (float *)(void *)(work + p->off_h);
    float *c = (float *)(void *)(work + p->off_c);
    float x_scale, h_scale;
    /* the scale and zero point of every step's input, for both directions (onnxruntime quantizes each direction's,
     * the same numbers); the steps' rows quantized as their products need them (xq holds a chunk's) */
    const int32_t x_zero = range_u8(seq * batch * in, x, &x_scale);
    int32_t d, b, s, j;
    for (d = 0; d < rp->directions; ++d) {
        const aotc_lstm_q8_weights *wt = &p->weights[d];
        const int32_t backward = rp->directions == 2 ? d == 1 : rp->reverse;
        const float *pd = peep ? peep + (ptrdiff_t)d * 3 * hid : NULL;
        for (b = 0; b < batch; ++b) {
            if (initial_h) memcpy(h + (ptrdiff_t)b * hid, initial_h + state_at(rp, d, b), (size_t)hid * sizeof(float));
            else memset(h + (ptrdiff_t)b * hid, 0, (size_t)hid * sizeof(float));
            if (initial_c) memcpy(c + (ptrdiff_t)b * hid, initial_c + state_at(rp, d, b), (size_t)hid * sizeof(float));
            else memset(c + (ptrdiff_t)b * hid, 0, (size_t)hid * sizeof(float));
        }
#if LSTM_Q8_CHUNKS
        int32_t t0 = 0; /* the first step of the chunk in xacc */
#endif
        for (s = 0; s < seq; ++s) {
            const int32_t t = backward ? seq - 1 - s : s;
            int32_t h_zero;
            /* x_t W: the step's batch rows of X */
            const int32_t *xa = acc;
#if LSTM_Q8_CHUNKS
            if (chunk > 1) {
                if (s % chunk == 0) { /* the next chunk's steps' X W in one product: t0 .. t0 + n - 1 */
                    const int32_t n = seq - s < chunk ? seq - s : chunk;
                    t0 = backward ? seq - s - n : s;
                    to_u8(n * batch * in, x + (ptrdiff_t)t0 * batch * in, x_scale, x_zero, xq);
                    matmul_u8s8_rows(n * batch, gh, in, xq, x_zero, wt->w, wt->w_zero, wt->w_sums, xacc);
                }
                xa = xacc + (ptrdiff_t)(t - t0) * batch * gh;
            } else
#endif
            {
                to_u8(batch * in, x + (ptrdiff_t)t * batch * in, x_scale, x_zero, xq);
                matmul_u8s8(batch, gh, in, xq, x_zero, wt->w, wt->w_zero, wt->w_sums, acc);
            }
            for (b = 0; b < batch; ++b) {
                for (j = 0; j < gh; ++j) {
                    gates[(ptrdiff_t)b * gh + j] = (float)xa[(ptrdiff_t)b * gh + j] * (x_scale * wt->w_scale[j]);
                }
            }
            /* + h R: the whole batch's H quantized together */
            h_zero = quantize_u8(batch * hid, h, hq, &h_scale);
            matmul_u8s8(batch, gh, hid, hq, h_zero, wt->r, wt->r_zero, wt->r_sums, acc);
            for (b = 0; b < batch; ++b) {
                float *g = gates + (ptrdiff_t)b * gh;
                for (j = 0; j < gh; ++j) g[j] += (float)acc[(ptrdiff_t)b * gh + j] * (h_scale * wt->r_scale[j]);
                if (wt->bias) {
                    for (j = 0; j < gh; ++j) g[j] += wt->bias[j];
                }
                lstm_cell(rp, rp->act[d], pd, g, h + (ptrdiff_t)b * hid, c + (ptrdiff_t)b * hid);
                if (y) memcpy(y + y_at(rp, t, d, b), h + (ptrdiff_t)b * hid, (size_t)hid * sizeof(float));
            }
        }
        for (b = 0; b < batch; ++b) {
            if (y_h) memcpy(y_h + state_at(rp, d, b), h + (ptrdiff_t)b * hid, (size_t)hid * sizeof(float));
            if (y_c) memcpy(y_c + state_at(rp, d, b), c + (ptrdiff_t)b * hid, (size_t)hid * sizeof(float));
        }
    }
}
