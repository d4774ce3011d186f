/* The recurrent kernel (aotc_recurrent.h, recurrent.c, on the GEMM core) against its reference
 * (recurrent_ref.c) over random LSTMs, GRUs and RNNs: forward, reverse and bidirectional, both
 * layouts, batch entries of their own lengths (0 included) or none, initial states or none,
 * peepholes, input_forget, clip, linear_before_reset, every activation function, B or none; W, R
 * and B each either a run-time input (the kernel packs it into its work memory) or packed here as
 * the compiler packs constants (aot/kernels/recurrent.py); the projection of every step ahead or one
 * product a step (step_proj, W and R stacked). aotc_rnn_params and the work layout are filled as
 * recurrent.py fills them; the work memory is exactly its size, the outputs start as NaN.
 * Tolerance: a gate's input is a sum of K = input + hidden + 2 products, within (K + 4) u of S, the
 * sum of their magnitudes (u = 2^-24, Higham 3.1); the activations add a few ulp (fast_math.h's
 * sigmoid and tanh within 3); the weights are drawn so that each row of R sums to at most 1/2 in
 * magnitude, so an error in H shrinks through a step, and LSTM's cell (f <= 1 for the bounded gates)
 * carries it at most linearly: 4 seq (K + 16) u (S + 1) max(1, |states|).
 *
 *     test_recurrent_kernels [seed] [shapes per cell] */
#include "aotc_recurrent.h"
#include "kernels_ref.h"
#include "test_compare.h"

#define PANEL AOTC_GEMM_PANEL
#define ALIGN 16

static int32_t packed_size(int32_t k, int32_t n) { return (n + PANEL - 1) / PANEL * PANEL * k; }
static int32_t aligned(int32_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

/* [M1^T; M2^T] packed as the GEMM core's B (k1 + k2 rows, n columns): M1 [n][k1], M2 [n][k2] with its
 * rows from m2_rows on zero (M2 NULL: M1 alone) -- aot/kernels/gemm.py pack_b of the stacked transposes. */
static float *pack(const float *m1, int32_t k1, const float *m2, int32_t k2, int32_t m2_rows, int32_t n) {
    const int32_t k = k1 + (m2 != NULL ? k2 : 0), panels = (n + PANEL - 1) / PANEL;
    float *dst = test_alloc((size_t)packed_size(k, n));
    int32_t q, r, jj;
    for (q = 0; q < panels; ++q) {
        for (r = 0; r < k; ++r) {
            for (jj = 0; jj < PANEL; ++jj) {
                const int32_t j = q * PANEL + jj;
                float v = 0.0f;
                if (j < n && r < k1) v = m1[(size_t)j * k1 + r];
                else if (j < n && j < m2_rows) v = m2[(size_t)j * k2 + (r - k1)];
                dst[((size_t)q * k + r) * PANEL + jj] = v;
            }
        }
    }
    return dst;
}

static aotc_sgemm_params sgemm(int32_t m, int32_t n, int32_t k, int32_t a_rs, int32_t ldc, int32_t cin_rs,
                               int32_t cin_cs, float beta) {
    aotc_sgemm_params g;
    memset(&g, 0, sizeof g);
    g.m = m, g.n = n, g.k = k, g.a_rs = a_rs, g.a_cs = 1, g.b_rs = PANEL, g.b_ps = k * PANEL, g.b_padded = 1;
    g.ldc = ldc, g.cin_rs = cin_rs, g.cin_cs = cin_cs, g.alpha = 1.0f, g.beta = beta;
    return g;
}

static void print_case(const aotc_rnn_params *p, int w_const, int r_const, int b_kind, int lens, int init, int peep) {
    int32_t d, a;
    printf("  cell %d, seq %d, batch %d, input %d, hidden %d, directions %d, reverse %d, layout %d, clip %g, "
           "lbr %d, input_forget %d, step_proj %d, W %s, R %s, B %d (0 none, 1 run time, 2 constant), lengths %d, "
           "initial states %d, peepholes %d, activations",
           (int)p->cell, (int)p->seq, (int)p->batch, (int)p->input, (int)p->hidden, (int)p->directions, (int)p->reverse,
           (int)p->layout, (double)p->clip, (int)p->linear_before_reset, (int)p->input_forget, (int)p->step_proj,
           w_const ? "constant" : "run time", r_const ? "constant" : "run time", b_kind, lens, init, peep);
    for (d = 0; d < p->directions; ++d)
        for (a = 0; a < 3; ++a) printf(" %d(%g,%g)", (int)p->act[d][a].kind, (double)p->act[d][a].alpha, (double)p->act[d][a].beta);
    printf("\n");
}

/* A random activation: the cell's default most of the time. */
static aotc_rnn_activation draw_act(int32_t deflt) {
    aotc_rnn_activation a;
    a.kind = chance(2, 3) ? deflt : rand_int(0, 10);
    a.alpha = 0.25f + 0.5f * fabsf(rand_float()), a.beta = 0.5f * rand_float();
    if (a.kind == AOTC_RNN_ACT_THRESHOLDED_RELU) a.alpha = 0.25f * rand_float();
    return a;
}

static int check(int32_t cell) {
    aotc_rnn_params p;
    const int w_const = chance(1, 2), r_const = chance(1, 2), b_kind = rand_int(0, 2), with_lens = chance(1, 3);
    const int init = chance(1, 2), with_peep = cell == AOTC_CELL_LSTM && chance(1, 3);
    const int gru = cell == AOTC_CELL_GRU;
    int32_t hid, gh, dirs, d, j, cols, floats, *lens = NULL;
    float *x, *w, *r, *b = NULL, *ih = NULL, *ic = NULL, *peep = NULL, *work, *packed[2][5];
    float *y, *yh, *yc, *ry, *ryh, *ryc;
    size_t xn, yn, sn, i;
    double big = 1.0, wsum, tol_k;
    double *tol;
    int bad, k;
    memset(&p, 0, sizeof p);
    memset(packed, 0, sizeof packed);
    p.cell = cell, p.gates = cell == AOTC_CELL_LSTM ? 4 : gru ? 3 : 1;
    p.seq = rand_int(1, 6), p.batch = rand_int(1, 3), p.input = rand_int(1, 20), p.hidden = hid = rand_int(1, 20);
    p.directions = dirs = rand_int(1, 2), p.reverse = dirs == 1 && chance(1, 2), p.layout = chance(1, 2);
    p.clip = chance(1, 4) ? 0.5f + fabsf(rand_float()) : 0.0f;
    p.linear_before_reset = gru && chance(1, 2), p.input_forget = cell == AOTC_CELL_LSTM && chance(1, 4);
    p.step_proj = chance(1, 2);
    gh = p.gates * hid, cols = gru ? 2 * hid : gh;
    for (d = 0; d < dirs; ++d) {
        p.act[d][0] = draw_act(cell == AOTC_CELL_RNN ? AOTC_RNN_ACT_TANH : AOTC_RNN_ACT_SIGMOID);
        p.act[d][1] = draw_act(AOTC_RNN_ACT_TANH), p.act[d][2] = draw_act(AOTC_RNN_ACT_TANH);
    }
    xn = (size_t)p.seq * p.batch * p.input, yn = (size_t)p.seq * dirs * p.batch * hid, sn = (size_t)dirs * p.batch * hid;
    x = test_alloc(xn), w = test_alloc((size_t)dirs * gh * p.input), r = test_alloc((size_t)dirs * gh * hid);
    /* rows of W and R scaled so that each sums to at most 1/2 in magnitude */
    for (i = 0; i < (size_t)dirs * gh * p.input; ++i) w[i] *= 0.5f / (float)p.input;
    for (i = 0; i < (size_t)dirs * gh * hid; ++i) r[i] *= 0.5f / (float)hid;
    if (b_kind) b = test_alloc((size_t)dirs * 2 * gh);
    if (init) {
        ih = test_alloc(sn);
        if (cell == AOTC_CELL_LSTM) ic = test_alloc(sn);
    }
    if (with_peep) peep = test_alloc((size_t)dirs * 3 * hid);
    if (with_lens) {
        lens = (int32_t *)malloc((size_t)p.batch * sizeof(int32_t));
        for (j = 0; j < p.batch; ++j) lens[j] = rand_int(0, p.seq);
    }
    /* constants packed as the compiler packs them (recurrent.py _direction_weights) */
    for (d = 0; d < dirs; ++d) {
        const float *wd = w + (size_t)d * gh * p.input, *rd = r + (size_t)d * gh * hid;
        aotc_rnn_weights *wt = &p.weights[d];
        if (p.step_proj && w_const && r_const) wt->w = packed[d][0] = pack(wd, p.input, rd, hid, cols, gh);
        if (!p.step_proj && w_const) wt->w = packed[d][0] = pack(wd, p.input, NULL, 0, 0, gh);
        if (!p.step_proj && r_const) wt->r = packed[d][1] = pack(rd, hid, NULL, 0, 0, cols);
        if (gru && r_const) wt->r_h = packed[d][2] = pack(rd + (size_t)2 * hid * hid, hid, NULL, 0, 0, hid);
        if (b_kind == 2) {
            const float *wb = b + (size_t)d * 2 * gh, *rb = wb + gh;
            float *bias = packed[d][3] = test_alloc((size_t)gh);
            for (j = 0; j < gh; ++j) bias[j] = wb[j] + rb[j];
            if (gru && p.linear_before_reset) {
                float *rbh = packed[d][4] = test_alloc((size_t)hid);
                for (j = 0; j < hid; ++j) bias[2 * hid + j] = wb[2 * hid + j], rbh[j] = rb[2 * hid + j];
                wt->rb_h = rbh;
            }
            wt->bias = bias;
        }
    }
    { /* the work layout (recurrent.py _layout), each region aligned to 16 floats */
        const int32_t r_runtime = !r_const, b_runtime = b_kind == 1;
        int32_t sizes[11], at = 0;
        int32_t *offs[11];
        offs[0] = &p.off_proj, offs[1] = &p.off_xh, offs[2] = &p.off_h, offs[3] = &p.off_w, offs[4] = &p.off_r;
        offs[5] = &p.off_gates, offs[6] = &p.off_c, offs[7] = &p.off_rh, offs[8] = &p.off_r_h, offs[9] = &p.off_bias;
        offs[10] = &p.off_rb_h;
        if (p.step_proj) {
            sizes[0] = 0, sizes[1] = p.batch * (p.input + hid), sizes[2] = 0;
            sizes[3] = w_const && r_const ? 0 : packed_size(p.input + hid, gh), sizes[4] = 0;
        } else {
            sizes[0] = p.seq * p.batch * gh, sizes[1] = 0, sizes[2] = p.batch * hid;
            sizes[3] = w_const ? 0 : packed_size(p.input, gh), sizes[4] = r_runtime ? packed_size(hid, cols) : 0;
        }
        sizes[5] = p.batch * gh, sizes[6] = cell == AOTC_CELL_LSTM ? p.batch * hid : 0, sizes[7] = gru ? p.batch * hid : 0;
        sizes[8] = gru && r_runtime ? packed_size(hid, hid) : 0, sizes[9] = b_runtime ? gh : 0;
        sizes[10] = gru && b_runtime ? hid : 0;
        for (k = 0; k < 11; ++k) *offs[k] = at, at += aligned(sizes[k]);
        floats = at;
    }
    /* the products (recurrent.py _emit) */
    p.proj = sgemm(p.seq * p.batch, gh, p.input, p.input, gh, 0, 1, 1.0f);
    if (p.step_proj) p.rec = sgemm(p.batch, gh, p.input + hid, p.input + hid, gh, 0, 1, 1.0f);
    else p.rec = sgemm(p.batch, cols, hid, hid, gh, 0, 0, 0.0f);
    {
        const int lbr = p.linear_before_reset, step_lbr = p.step_proj && lbr;
        p.rec_h = sgemm(p.batch, gru ? hid : 0, hid, step_lbr ? p.input + hid : hid, step_lbr ? hid : gh,
                        lbr ? 0 : p.step_proj ? gh : 0, lbr || p.step_proj ? 1 : 0, 1.0f);
    }
    work = test_alloc_nan((size_t)floats);
    y = test_alloc_nan(yn), yh = test_alloc_nan(sn), yc = test_alloc_nan(sn);
    ry = test_alloc_nan(yn), ryh = test_alloc_nan(sn), ryc = test_alloc_nan(sn);
    {
        const int pass_w = !w_const || (p.step_proj && !r_const), pass_r = !r_const || (p.step_proj && !w_const);
        aotc_rnn_f32(&p, x, pass_w ? w : NULL, pass_r ? r : NULL, b_kind == 1 ? b : NULL, lens, ih, ic, peep, y, yh,
                     cell == AOTC_CELL_LSTM ? yc : NULL, work);
    }
    aotc_rnn_ref_f32(&p, x, w, r, b, lens, ih, ic, peep, ry, ryh, cell == AOTC_CELL_LSTM ? ryc : NULL);
    for (i = 0; i < yn; ++i) big = fabs(ry[i]) > big ? fabs(ry[i]) : big;
    for (i = 0; i < sn; ++i) big = fabs(ryc[i]) > big && cell == AOTC_CELL_LSTM ? fabs(ryc[i]) : big;
    for (i = 0; ih != NULL && i < sn; ++i) big = fabs(ih[i]) > big ? fabs(ih[i]) : big;
    wsum = 1.0 + 1.0 + (b != NULL ? 2.0 : 0.0) + (peep != NULL ? 2.0 * big : 0.0); /* |x| < 1, rows of W, R <= 1/2 */
    tol_k = 4.0 * p.seq * (p.input + hid + 2 + 16.0) / 16777216.0 * (wsum + 1.0) * big;
    tol = (double *)malloc(yn * sizeof(double));
    for (i = 0; i < yn; ++i) tol[i] = tol_k;
    bad = test_differs_tol("aotc_rnn_f32 (Y)", NULL, y, ry, tol, yn) || test_differs_tol("aotc_rnn_f32 (Y_h)", NULL, yh, ryh, tol, sn) ||
          (cell == AOTC_CELL_LSTM && test_differs_tol("aotc_rnn_f32 (Y_c)", NULL, yc, ryc, tol, sn));
    if (bad) print_case(&p, w_const, r_const, b_kind, with_lens, init, with_peep);
    for (d = 0; d < 2; ++d)
        for (k = 0; k < 5; ++k) free(packed[d][k]);
    free(x), free(w), free(r), free(b), free(ih), free(ic), free(peep), free(lens), free(work), free(y), free(yh);
    free(yc), free(ry), free(ryh), free(ryc), free(tol);
    return bad;
}

/* The reference on a step worked out by hand: an RNN (tanh) of input 1, hidden 1, W = 0.5, R = 0.25,
 * B = (0.1, 0.2), x = [1, 2], H0 = 0: H1 = tanh(0.5 + 0.3), H2 = tanh(1 + 0.25 H1 + 0.3). */
static int check_reference(void) {
    static const float x[2] = {1, 2}, w[1] = {0.5f}, r[1] = {0.25f}, b[2] = {0.1f, 0.2f};
    aotc_rnn_params p;
    float y[2], yh[1], want[2];
    const float mag[2] = {1, 1};
    memset(&p, 0, sizeof p);
    p.cell = AOTC_CELL_RNN, p.gates = 1, p.seq = 2, p.batch = 1, p.input = 1, p.hidden = 1, p.directions = 1;
    p.act[0][0].kind = AOTC_RNN_ACT_TANH;
    want[0] = (float)tanh(0.5 + (0.1 + (double)0.2f)), want[1] = (float)tanh(1.0 + 0.25 * tanh(0.5 + (0.1 + (double)0.2f)) + 0.3);
    aotc_rnn_ref_f32(&p, x, w, r, b, NULL, NULL, NULL, NULL, y, yh, NULL);
    return test_differs("aotc_rnn_ref_f32", y, want, mag, 2) | test_differs("aotc_rnn_ref_f32 (Y_h)", yh, want + 1, mag, 1);
}

int main(int argc, char **argv) {
    static const char *const NAMES[3] = {"aotc_rnn_f32 (LSTM)", "aotc_rnn_f32 (GRU)", "aotc_rnn_f32 (RNN)"};
    const int32_t shapes = test_args(argc, argv, 200);
    int failed = check_reference();
    int32_t cell, i;
    for (cell = 0; cell < 3; ++cell) {
        int bad = 0;
        for (i = 0; i < shapes && !bad; ++i) bad = check(cell);
        printf("%-34s %s (%d shapes)\n", NAMES[cell], bad ? "MISMATCH" : "ok", (int)i);
        failed |= bad;
    }
    return failed;
}
