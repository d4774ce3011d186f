/* ONNX MaxPool, float32, on channels-last tensors ([N, (D,) (H,) W, C]; values only). Written for the host
 * side of a vendor's NHWC boundary (aot/partition/layout.py): a MaxPool between two NHWC calls runs on their
 * tensors as they are instead of between a Transpose to NCHW and one back, each a copy of the tensor live
 * beside it. Each output pixel's channels are one contiguous run, so the loop over them is the inner one
 * (compilers vectorise it) and every tap inside the input is read once. The same values as aotc_maxpool_f32:
 * padding never wins, a window with no tap inside the input gives -FLT_MAX, a NaN never wins. */
#include <float.h>

#include "aotc_pool.h"
#include "aotc_threads.h"

#define MAX_OF(v, x) ((x) > (v) ? (x) : (v))

typedef struct {
    const aotc_pool_params *p;
    int32_t channels;
    const float *x;
    float *y;
} maxpool_nhwc_job;

/* the output rows [begin, end) of all batches, a row being (n, od, oh): out[2] pixels of `channels` values */
static void maxpool_nhwc_rows(void *ctx, int32_t begin, int32_t end) {
    const maxpool_nhwc_job *J = (const maxpool_nhwc_job *)ctx;
    const aotc_pool_params *p = J->p;
    const int32_t ch = J->channels;
    int32_t row;
    for (row = begin; row < end; ++row) {
        const int32_t oh = row % p->out[1], od = (row / p->out[1]) % p->out[0], n = row / (p->out[1] * p->out[0]);
        const float *xb = J->x + (int64_t)n * p->in[0] * p->in[1] * p->in[2] * ch;
        float *y = J->y + (int64_t)row * p->out[2] * ch;
        int32_t ow, c, kd, kh, kw;
        for (ow = 0; ow < p->out[2]; ++ow, y += ch) {
            for (c = 0; c < ch; ++c) y[c] = -FLT_MAX;
            for (kd = 0; kd < p->kernel[0]; ++kd) {
                const int32_t d = od * p->strides[0] - p->pads_begin[0] + kd * p->dilations[0];
                if (d < 0 || d >= p->in[0]) continue;
                for (kh = 0; kh < p->kernel[1]; ++kh) {
                    const int32_t h = oh * p->strides[1] - p->pads_begin[1] + kh * p->dilations[1];
                    if (h < 0 || h >= p->in[1]) continue;
                    for (kw = 0; kw < p->kernel[2]; ++kw) {
                        const int32_t w = ow * p->strides[2] - p->pads_begin[2] + kw * p->dilations[2];
                        const float *AOTC_RESTRICT x;
                        if (w < 0 || w >= p->in[2]) continue;
                        x = xb + (((int64_t)d * p->in[1] + h) * p->in[2] + w) * ch;
                        for (c = 0; c < ch; ++c) y[c] = MAX_OF(y[c], x[c]);
                    }
                }
            }
        }
    }
}

/* p->planes is the batch N here (the channels are `channels`); rows split across the thread pool of a
 * --threads bundle (one call otherwise). */
void aotc_maxpool_nhwc_f32(const aotc_pool_params *p, int32_t channels, const float *AOTC_RESTRICT x,
                           float *AOTC_RESTRICT y) {
    maxpool_nhwc_job J;
    J.p = p, J.channels = channels, J.x = x, J.y = y;
    aotc_parallel_for(maxpool_nhwc_rows, &J, p->planes * p->out[0] * p->out[1]);
}
