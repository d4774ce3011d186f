/* Reference kernel of the recurrent family (declared in kernels_ref.h): ONNX LSTM, GRU and RNN
 * from the operator's equations, one direction, batch entry, step and gate unit at a time, in
 * double, on the op's own W, R and B tensors (never the kernel's packed ones). */
#include "kernels_ref.h"

#include <math.h>
#include <stdlib.h>

/* The ONNX activation functions (alpha and beta as the spec defines them for each). */
static double act(const aotc_rnn_activation *a, double v) {
    switch (a->kind) {
    case AOTC_RNN_ACT_RELU: return v > 0.0 ? v : 0.0;
    case AOTC_RNN_ACT_TANH: return tanh(v);
    case AOTC_RNN_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case AOTC_RNN_ACT_AFFINE: return a->alpha * v + a->beta;
    case AOTC_RNN_ACT_LEAKY_RELU: return v >= 0.0 ? v : a->alpha * v;
    case AOTC_RNN_ACT_THRESHOLDED_RELU: return v > a->alpha ? v : 0.0;
    case AOTC_RNN_ACT_SCALED_TANH: return a->alpha * tanh(a->beta * v);
    case AOTC_RNN_ACT_HARD_SIGMOID: return fmax(0.0, fmin(1.0, a->alpha * v + a->beta));
    case AOTC_RNN_ACT_ELU: return v >= 0.0 ? v : a->alpha * (exp(v) - 1.0);
    case AOTC_RNN_ACT_SOFTSIGN: return v / (1.0 + fabs(v));
    default: return v > 0.0 ? v + log1p(exp(-v)) : log1p(exp(v)); /* AOTC_RNN_ACT_SOFTPLUS: log(1 + e^v) */
    }
}

/* act(clip(v)): the clip (clip > 0) bounds an activation's input. */
static double act_clipped(const aotc_rnn_activation *a, double clip, double v) {
    if (clip > 0.0) v = v < -clip ? -clip : v > clip ? clip : v;
    return act(a, v);
}

/* Row `row` of W (input x[0, input)) plus row `row` of R times h, plus Wb + Rb at row (b may be NULL). */
static double gate_input(const aotc_rnn_params *p, const float *wd, const float *rd, const float *bd, int32_t row,
                         const float *xt, const double *h) {
    double s = bd != NULL ? (double)bd[row] + bd[p->gates * p->hidden + row] : 0.0;
    int32_t q;
    for (q = 0; q < p->input; ++q) s += (double)wd[(ptrdiff_t)row * p->input + q] * xt[q];
    for (q = 0; h != NULL && q < p->hidden; ++q) s += (double)rd[(ptrdiff_t)row * p->hidden + q] * h[q];
    return s;
}

void aotc_rnn_ref_f32(const aotc_rnn_params *p, const float *x, const float *w, const float *r, const float *b,
                      const int32_t *seq_lens, const float *initial_h, const float *initial_c, const float *peep,
                      float *y, float *y_h, float *y_c) {
    const int32_t hid = p->hidden, gh = p->gates * hid;
    double *h = (double *)malloc(4 * (size_t)hid * sizeof(double) + 1), *c = h + hid, *nh = c + hid, *rh = nh + hid;
    int32_t d, bt, s, t, j, q;
    for (d = 0; d < p->directions; ++d) {
        const int32_t backward = p->directions == 2 ? d == 1 : p->reverse;
        const float *wd = w + (ptrdiff_t)d * gh * p->input, *rd = r + (ptrdiff_t)d * gh * hid;
        const float *bd = b != NULL ? b + (ptrdiff_t)d * 2 * gh : NULL, *pd = peep != NULL ? peep + (ptrdiff_t)d * 3 * hid : NULL;
        const aotc_rnn_activation *f = &p->act[d][0], *g = &p->act[d][1], *ha = &p->act[d][2];
        for (bt = 0; bt < p->batch; ++bt) {
            const ptrdiff_t state = (p->layout == 0 ? (ptrdiff_t)d * p->batch + bt : (ptrdiff_t)bt * p->directions + d) * hid;
            int32_t len = seq_lens != NULL ? seq_lens[bt] : p->seq;
            len = len < 0 ? 0 : len > p->seq ? p->seq : len;
            for (j = 0; j < hid; ++j) {
                h[j] = initial_h != NULL ? initial_h[state + j] : 0.0;
                c[j] = initial_c != NULL ? initial_c[state + j] : 0.0;
            }
            for (s = 0; s < p->seq; ++s) {
                const ptrdiff_t yt = p->layout == 0 ? ((ptrdiff_t)s * p->directions + d) * p->batch + bt
                                                    : ((ptrdiff_t)bt * p->seq + s) * p->directions + d;
                const float *xt;
                if (s >= len) { /* past the entry's length: Y is 0 */
                    for (j = 0; y != NULL && j < hid; ++j) y[yt * hid + j] = 0.0f;
                    continue;
                }
                t = backward ? len - 1 - s : s;
                xt = x + (p->layout == 0 ? (ptrdiff_t)t * p->batch + bt : (ptrdiff_t)bt * p->seq + t) * p->input;
                for (j = 0; j < hid; ++j) {
                    if (p->cell == AOTC_CELL_LSTM) { /* gates i, o, f, c; peepholes i, o, f */
                        const double it = act_clipped(f, p->clip, gate_input(p, wd, rd, bd, j, xt, h) + (pd ? pd[j] * c[j] : 0.0));
                        const double ft = p->input_forget ? 1.0 - it
                                          : act_clipped(f, p->clip, gate_input(p, wd, rd, bd, 2 * hid + j, xt, h) +
                                                                       (pd ? pd[2 * hid + j] * c[j] : 0.0));
                        const double ct = act_clipped(g, p->clip, gate_input(p, wd, rd, bd, 3 * hid + j, xt, h));
                        const double cn = ft * c[j] + it * ct;
                        const double ot = act_clipped(f, p->clip, gate_input(p, wd, rd, bd, hid + j, xt, h) + (pd ? pd[hid + j] * cn : 0.0));
                        nh[j] = ot * act(ha, cn);
                        rh[j] = cn;
                    } else if (p->cell == AOTC_CELL_RNN) {
                        nh[j] = act_clipped(f, p->clip, gate_input(p, wd, rd, bd, j, xt, h));
                    } else { /* GRU, gates z, r, h */
                        const double zt = act_clipped(f, p->clip, gate_input(p, wd, rd, bd, j, xt, h));
                        double pre = gate_input(p, wd, rd, bd, 2 * hid + j, xt, NULL), rec = 0.0;
                        if (bd != NULL) pre -= bd[gh + 2 * hid + j]; /* Rbh goes with the recurrent product */
                        for (q = 0; q < hid; ++q) { /* rt (Ht-1 Rh^T + Rbh), or (rt Ht-1) Rh^T + Rbh */
                            const double rq = act_clipped(f, p->clip, gate_input(p, wd, rd, bd, hid + q, xt, h));
                            rec += (double)rd[(ptrdiff_t)(2 * hid + j) * hid + q] * (p->linear_before_reset ? h[q] : rq * h[q]);
                        }
                        rec += bd != NULL ? bd[gh + 2 * hid + j] : 0.0;
                        if (p->linear_before_reset) rec *= act_clipped(f, p->clip, gate_input(p, wd, rd, bd, hid + j, xt, h));
                        nh[j] = (1.0 - zt) * act_clipped(g, p->clip, pre + rec) + zt * h[j];
                    }
                }
                for (j = 0; j < hid; ++j) {
                    h[j] = nh[j];
                    if (p->cell == AOTC_CELL_LSTM) c[j] = rh[j];
                }
                /* the step's output goes to Y at its own time t (a reverse direction fills Y backward) */
                for (j = 0; y != NULL && j < hid; ++j) {
                    const ptrdiff_t at = p->layout == 0 ? ((ptrdiff_t)t * p->directions + d) * p->batch + bt
                                                        : ((ptrdiff_t)bt * p->seq + t) * p->directions + d;
                    y[at * hid + j] = (float)h[j];
                }
            }
            for (j = 0; j < hid; ++j) { /* the last step's state; zero for an empty sequence */
                if (y_h != NULL) y_h[state + j] = len > 0 ? (float)h[j] : 0.0f;
                if (y_c != NULL) y_c[state + j] = len > 0 ? (float)c[j] : 0.0f;
            }
        }
    }
    free(h);
}
