/* Recurrent layers, float32: ONNX LSTM, GRU and RNN, forward, reverse and bidirectional,
 * as one loop over the sequence on the GEMM core (aotc_gemm.h).
 *
 * Per direction: one product projects every step's input at once (X * W^T + bias, into
 * `work`), then each step does the recurrent product H * R^T for the whole batch and the gates
 * elementwise. With little memory (step_proj) there is no projection ahead: each step's one
 * product [x_t | H] * [W^T; R^T] gives its whole pre-activation. W and R arrive packed for the GEMM core (the compiler packs constant
 * weights once; weights computed at run time are packed into `work` by the kernel). */
#ifndef AOTC_RECURRENT_H
#define AOTC_RECURRENT_H

#include "aotc_common.h"
#include "aotc_gemm.h"

#define AOTC_CELL_LSTM 0
#define AOTC_CELL_GRU 1
#define AOTC_CELL_RNN 2

/* The spec's activation functions (alpha, beta as the spec defines them for each). */
#define AOTC_RNN_ACT_RELU 0
#define AOTC_RNN_ACT_TANH 1
#define AOTC_RNN_ACT_SIGMOID 2
#define AOTC_RNN_ACT_AFFINE 3
#define AOTC_RNN_ACT_LEAKY_RELU 4
#define AOTC_RNN_ACT_THRESHOLDED_RELU 5
#define AOTC_RNN_ACT_SCALED_TANH 6
#define AOTC_RNN_ACT_HARD_SIGMOID 7
#define AOTC_RNN_ACT_ELU 8
#define AOTC_RNN_ACT_SOFTSIGN 9
#define AOTC_RNN_ACT_SOFTPLUS 10

typedef struct {
    int32_t kind; /* AOTC_RNN_ACT_* */
    float alpha;
    float beta;
} aotc_rnn_activation;

/* One direction's weights. A NULL packed pointer means the weight is a run-time input: the
 * kernel packs it into work (at the offsets below) before the direction runs. */
typedef struct {
    const float *w;    /* W^T, input x gates*hidden, packed (aotc_gemm.h); step_proj: [W^T; R^T] (GRU: R's
                        * h rows as zero), (input+hidden) x gates*hidden; or NULL */
    const float *r;    /* R^T, hidden x gates*hidden (GRU: z and r columns only), packed, or NULL */
    const float *r_h;  /* GRU: Rh^T, hidden x hidden, packed, or NULL */
    const float *bias; /* gates*hidden added to the projection (Wb + Rb; GRU with
                        * linear_before_reset: Wbh alone for h), or NULL: none / from run-time B */
    const float *rb_h; /* GRU with linear_before_reset: Rbh, added to H * Rh^T; or NULL */
} aotc_rnn_weights;

typedef struct {
    int32_t cell;       /* AOTC_CELL_* */
    int32_t gates;      /* 4 (LSTM: i, o, f, c), 3 (GRU: z, r, h), 1 (RNN) */
    int32_t seq;        /* steps */
    int32_t batch;
    int32_t input;      /* features of X */
    int32_t hidden;
    int32_t directions; /* 1 or 2 */
    int32_t reverse;    /* directions == 1: the direction runs backward */
    int32_t layout;     /* 0: X [seq, batch, input], Y [seq, dirs, batch, hidden], states [dirs, batch, hidden];
                         * 1: X [batch, seq, input], Y [batch, seq, dirs, hidden], states [batch, dirs, hidden] */
    float clip;         /* > 0: gate inputs clipped to [-clip, clip] before their activations; 0: none */
    int32_t linear_before_reset; /* GRU */
    int32_t input_forget;        /* LSTM: forget gate = 1 - input gate */
    aotc_rnn_activation act[2][3]; /* per direction: LSTM f, g, h; GRU f, g; RNN f */
    aotc_rnn_weights weights[2];
    int32_t step_proj;       /* 0: every step's projection at once (seq*batch rows of work) before the loop;
                              * 1: none: each step's one product [x_t | H] * [W^T; R^T] (+ bias) gives the
                              * whole pre-activation (batch rows of work: the planner had no room) */
    aotc_sgemm_params proj;  /* step_proj 0: seq*batch x input by input x gates*hidden, + bias (row broadcast) */
    aotc_sgemm_params rec;   /* step_proj 0: batch x hidden by hidden x gates*hidden (GRU: 2*hidden);
                              * 1: batch x (input+hidden) by (input+hidden) x gates*hidden, + bias */
    aotc_sgemm_params rec_h; /* GRU: batch x hidden by hidden x hidden: (r * H) Rh^T, or with
                              * linear_before_reset H Rh^T + Rbh */
    /* work layout, in floats from work */
    int32_t off_proj, off_xh, off_gates, off_h, off_c, off_rh, off_w, off_r, off_r_h, off_bias, off_rb_h;
} aotc_rnn_params;

/* Inputs as ONNX names them (NULL when omitted or when the compiler packed them: w, r, b);
 * outputs y, y_h, y_c may each be NULL (not computed). seq_lens: per batch entry, steps that
 * are valid; Y past them is zero, Y_h / Y_c hold the last valid step (zero for a length of 0). */
void aotc_rnn_f32(const aotc_rnn_params *p, const float *x, const float *w, const float *r, const float *b,
                  const int32_t *seq_lens, const float *initial_h, const float *initial_c, const float *peep,
                  float *y, float *y_h, float *y_c, float *work);

/* The quantized LSTM's weight panels: columns a panel (64: the fastest of 16 to 128 on AVX-512, gcc -O3). */
#define AOTC_LSTM_Q8_PANEL 64

/* com.microsoft DynamicQuantizeLSTM (onnxruntime's quantize_dynamic for an LSTM), as onnxruntime's CPU
 * kernel computes it: 8-bit W and R; X (every step at once) and each step's H quantized to uint8 with
 * the scale and zero point of their own range (DynamicQuantizeLinear's formula), multiplied in int32,
 * each product scaled to float by (the input's scale * the weight's, per gate unit) and summed: x W,
 * then + h R, then + bias; then LSTM's gates. One direction's weights: */
typedef struct {
    const int8_t *w;       /* W: input x gates*hidden int8 (uint8 weights stored less 128), in panels of
                            * AOTC_LSTM_Q8_PANEL columns: each panel's input rows in quads (the rows past the
                            * input zero), each quad column by column, its 4 rows together (VPDPBUSD's order);
                            * the last panel's missing columns zero */
    const int32_t *w_sums; /* per column of w: its sum of (w - w_zero) */
    const float *w_scale;  /* per gate unit */
    const int8_t *r;       /* R: hidden x gates*hidden int8, in panels as w */
    const int32_t *r_sums;
    const float *r_scale;
    const float *bias;     /* Wb + Rb, or NULL: none */
    int32_t w_zero, r_zero; /* as stored (uint8 weights' less 128) */
} aotc_lstm_q8_weights;

typedef struct {
    aotc_rnn_params rnn; /* the LSTM's shapes, clip, input_forget and activations (layout 0; its GEMM
                          * fields and offsets are not used) */
    aotc_lstm_q8_weights weights[2];
    /* work layout, in bytes from work: a chunk's X quantized (chunk*batch*input), H quantized (batch*hidden), the
     * int32 products of H R (batch*gates*hidden) and of a chunk's X W (chunk*batch*gates*hidden), the gates,
     * H and C (floats) */
    int32_t off_xq, off_hq, off_acc, off_xacc, off_gates, off_h, off_c;
    int32_t chunk; /* steps whose X W are one product (W read once for them) */
} aotc_lstm_q8_params;

void aotc_lstm_q8_f32(const aotc_lstm_q8_params *p, const float *x, const float *initial_h, const float *initial_c,
                      const float *peep, float *y, float *y_h, float *y_c, uint8_t *work);

#endif /* AOTC_RECURRENT_H */
