/* TFLite's integer UNIDIRECTIONAL_SEQUENCE_LSTM (LiteRT's 8x8_16) and SVDF (aotc_tflite_int8.h). */
#include "tflite_int8_internal.h"

/* --- the integer LSTM: gemmlowp's FixedPoint<int16_t, I> (aotc_tflite_int8.h) --------------------- */
static int16_t wrap16(int32_t v) { return (int16_t)(uint16_t)(uint32_t)v; }
static int16_t sat16(int32_t v) { return (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v); }

/* SaturatingRoundingDoublingHighMul on int16 */
static int16_t mul16(int16_t a, int16_t b) {
    if (a == -32768 && b == -32768) return 32767;
    int32_t ab = (int32_t)a * b;
    return (int16_t)((ab + (ab >= 0 ? 1 << 14 : 1 - (1 << 14))) / (1 << 15));
}

static int16_t shl16(int32_t x, int32_t e) { return sat16(x * (1 << e)); }

/* exp(a) for a in [-1/4, 0), Q0.15 */
static int16_t exp_quarter16(int16_t a) {
    const int16_t ct = 28918, third = 10923;  /* exp(-1/8), 1/3 in Q0.15 */
    int16_t x = wrap16(a + 4096), x2 = mul16(x, x), x3 = mul16(x2, x), x4 = mul16(x2, x2);
    int16_t t = (int16_t)divide_by_pot(wrap16(mul16(wrap16(divide_by_pot(x4, 2) + x3), third) + x2), 1);
    return sat16(ct + mul16(ct, wrap16(x + t)));
}

/* exp(a) for a <= 0 in Q(bits).(15 - bits), bits <= 5 -> Q0.15 */
static int16_t exp_negative16(int16_t a, int32_t bits) {
    /* exp(-1/4), exp(-1/2), exp(-1), exp(-2), exp(-4), exp(-8), exp(-16) in Q0.15 */
    static const int16_t factors[7] = {25520, 19875, 12055, 4435, 600, 11, 0};
    int32_t frac = 15 - bits, quarter = 1 << (frac - 2);
    int16_t amq = wrap16((a & (quarter - 1)) - quarter);
    int16_t result = exp_quarter16(shl16(amq, bits));
    int32_t remainder = wrap16(amq - a);
    for (int32_t k = 0; k < 7; ++k)
        if (bits > k - 2 && (remainder & (1 << (frac + k - 2)))) result = mul16(result, factors[k]);
    /* gemmlowp: below -32 (reachable with more than 5 integer bits) exp is 0; the factors above stop at
     * exp(-16), so without this a = -33 gave exp(-1) (the LSTM's tanh of a cell beyond 16 with tanh_bits 5, 6) */
    if (bits > 5 && a < -(32 << frac)) result = 0;
    return a == 0 ? 32767 : result;
}

/* 2 / (1 + a) for a in [0, 1] (Q0.15), Q2.13: three Newton-Raphson steps */
static int16_t newton16(int16_t a) {
    int32_t s = a + 32767;
    int16_t half = (int16_t)((s + (s >= 0 ? 1 : -1)) / 2);
    int16_t x = wrap16(23130 + mul16(half, -15420));  /* 48/17 and -32/17 in Q2.13 */
    for (int32_t i = 0; i < 3; ++i) x = wrap16(x + shl16(mul16(x, wrap16(8192 - mul16(half, x))), 2));
    return x;
}

static int16_t logistic16(int16_t a) {  /* Q3.12 -> Q0.15 */
    if (a == 0) return 16384;
    int16_t r = shl16(newton16(exp_negative16(a > 0 ? wrap16(-a) : a, 3)), 1);
    return a > 0 ? r : wrap16(32767 - r);
}

static int16_t tanh16(int16_t a, int32_t bits) {  /* Q(bits).(15 - bits) -> Q0.15 */
    if (a == 0) return 0;
    int16_t t = shl16(wrap16(newton16(exp_negative16(a < 0 ? a : wrap16(-a), bits + 1)) - 8192), 2);
    return a < 0 ? wrap16(-t) : t;
}

static int32_t dot8(const int8_t *a, const int8_t *b, int32_t n) {
    int32_t acc = 0;
    for (int32_t k = 0; k < n; ++k) acc += a[k] * b[k];
    return acc;
}

/* each cell's gates read all of x_t and h_(t-1) but only its own c: h_t is written to y's row t while
 * h_(t-1) is read from row t-1 (or h0), and c is updated in place in c_next */
void aotc_tfl_lstm_s8(const aotc_tfl_lstm8_params *p, const int8_t *x, const int8_t *wx, const int8_t *wh,
                      const int32_t *bx, const int32_t *bh, const int8_t *h0, const int16_t *c0, int8_t *y,
                      int8_t *h_next, int16_t *c_next) {
    int32_t n = p->n_cell;
    for (int64_t k = 0; k < (int64_t)p->batch * n; ++k) c_next[k] = c0[k];
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t t = 0; t < p->steps; ++t) {
            const int8_t *xt = x + ((int64_t)b * p->steps + t) * p->n_input;
            const int8_t *hp = t ? y + ((int64_t)b * p->steps + t - 1) * n : h0 + (int64_t)b * n;
            int8_t *ht = y + ((int64_t)b * p->steps + t) * n;
            for (int32_t k = 0; k < n; ++k) {
                int16_t gate[4];
                for (int32_t g = 0; g < 4; ++g) {
                    int32_t row = g * n + k;
                    int32_t ax = requant_double(bx[row] + dot8(wx + (int64_t)row * p->n_input, xt, p->n_input),
                                                p->mult[g], p->shift[g]);
                    int32_t ah = requant_double(bh[row] + dot8(wh + (int64_t)row * n, hp, n), p->mult[4 + g],
                                                p->shift[4 + g]);
                    int16_t pre = sat16(sat16(ax) + ah);
                    gate[g] = g == 2 ? tanh16(pre, 3) : logistic16(pre);
                }
                int16_t *c = c_next + (int64_t)b * n + k;
                int32_t v = sat16(wrap16(divide_by_pot(gate[1] * *c, 15)) +
                                  wrap16(divide_by_pot(gate[0] * gate[2], p->cell_shift)));
                if (p->clip > 0) v = v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
                *c = (int16_t)v;
                int16_t th = p->tanh_bits >= 0 ? tanh16(*c, p->tanh_bits) : gate[0];
                ht[k] = clamp8(requant_double(gate[3] * th, p->hidden_mult, p->hidden_shift) + p->hidden_zero,
                               -128, 127);
            }
        }
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t k = 0; k < n; ++k) h_next[(int64_t)b * n + k] = y[((int64_t)b * p->steps + p->steps - 1) * n + k];
}

/* --- SVDF, full integer (LiteRT's EvalIntegerSVDF) ------------------------------------------------ */
void aotc_tfl_svdf_s8(const aotc_tfl_svdf_params *p, const int8_t *x, const int8_t *wf, const int16_t *wt,
                      const int32_t *bias, const int16_t *state, int8_t *y, int16_t *state_next) {
    const int32_t n_unit = p->n_filter / p->rank, row = p->n_memory * p->n_filter;
    const int64_t size = (int64_t)p->batch * row;
    /* the state shifted left by one (the whole buffer, as LiteRT's std::copy), then each filter's newest
     * column: its feature sum, requantised to the state's scale and saturated to int16 */
    memmove(state_next, state + 1, (size_t)(size - 1) * sizeof(int16_t));
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t f = 0; f < p->n_filter; ++f) {
            const int8_t *xb = x + (int64_t)b * p->n_input, *wr = wf + (int64_t)f * p->n_input;
            int32_t acc = 0;
            for (int32_t k = 0; k < p->n_input; ++k) acc += wr[k] * (xb[k] - p->x_zero);
            int32_t v = requant_double(acc, p->mult1, p->shift1);
            state_next[(int64_t)b * row + (int64_t)f * p->n_memory + p->n_memory - 1] =
                (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
        }
    /* each unit: the time weights against its rank filters' memories, summed, plus the bias */
    for (int32_t b = 0; b < p->batch; ++b)
        for (int32_t u = 0; u < n_unit; ++u) {
            int32_t sum = bias ? bias[u] : 0;
            for (int32_t r = 0; r < p->rank; ++r) {
                const int32_t f = u * p->rank + r;
                const int16_t *sr = state_next + (int64_t)b * row + (int64_t)f * p->n_memory;
                const int16_t *tr = wt + (int64_t)f * p->n_memory;
                int32_t dot = 0;
                for (int32_t k = 0; k < p->n_memory; ++k) dot += tr[k] * sr[k];
                sum += dot;
            }
            y[(int64_t)b * n_unit + u] = clamp8(requant_double(sum, p->mult2, p->shift2) + p->y_zero, -128, 127);
        }
}
