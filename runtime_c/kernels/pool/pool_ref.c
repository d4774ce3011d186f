/* Reference kernels of the pool family (declared in kernels_ref.h): MaxPool and AveragePool
 * one output at a time, every tap of its window tested. The optimised window pools (pool.c)
 * are checked against these; the global pools are plain loops already. */
#include "kernels_ref.h"

#include <float.h>

/* One window: its max (-FLT_MAX with no tap inside the input) or its sum, and the taps that
 * the average divides by (inside the input; with count_include_pad, inside the padded input). */
static void window(const aotc_pool_params *p, const float *xplane, const int32_t *o, float *max, float *sum,
                   int32_t *count) {
    int32_t k[3], pos[3], d, inside, counted;
    *max = -FLT_MAX;
    *sum = 0.0f;
    *count = 0;
    for (k[0] = 0; k[0] < p->kernel[0]; ++k[0]) {
        for (k[1] = 0; k[1] < p->kernel[1]; ++k[1]) {
            for (k[2] = 0; k[2] < p->kernel[2]; ++k[2]) {
                inside = counted = 1;
                for (d = 0; d < 3; ++d) {
                    pos[d] = o[d] * p->strides[d] - p->pads_begin[d] + k[d] * p->dilations[d];
                    if (pos[d] < 0 || pos[d] >= p->in[d]) inside = 0;
                    if (pos[d] < -p->pads_begin[d] || pos[d] >= p->in[d] + p->pads_end[d]) counted = 0;
                }
                if (inside) {
                    const float v = xplane[((ptrdiff_t)pos[0] * p->in[1] + pos[1]) * p->in[2] + pos[2]];
                    *max = v > *max ? v : *max;
                    *sum += v;
                }
                if (p->count_include_pad ? counted : inside) ++*count;
            }
        }
    }
}

/* Every output of every plane: its window's max (is_max) or mean. */
static void pool_ref(const aotc_pool_params *p, const float *x, float *y, int is_max) {
    const ptrdiff_t in_plane = (ptrdiff_t)p->in[0] * p->in[1] * p->in[2];
    int32_t c, o[3], count;
    float max, sum;
    for (c = 0; c < p->planes; ++c) {
        for (o[0] = 0; o[0] < p->out[0]; ++o[0]) {
            for (o[1] = 0; o[1] < p->out[1]; ++o[1]) {
                for (o[2] = 0; o[2] < p->out[2]; ++o[2]) {
                    window(p, x + c * in_plane, o, &max, &sum, &count);
                    *y++ = is_max ? max : count > 0 ? sum / (float)count : 0.0f;
                }
            }
        }
    }
}

void aotc_maxpool_ref_f32(const aotc_pool_params *p, const float *x, float *y) { pool_ref(p, x, y, 1); }

void aotc_avgpool_ref_f32(const aotc_pool_params *p, const float *x, float *y) { pool_ref(p, x, y, 0); }
