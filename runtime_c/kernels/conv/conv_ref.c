/* Reference kernels of the conv family (declared in kernels_ref.h): ONNX Conv and
 * ConvTranspose as the loops of their definitions, one output (Conv) or one input (Conv-
 * Transpose) element at a time, every tap tested against the image. Simple on purpose: the
 * optimised strategies (conv_*.c) are checked against these, never the other way round. */
#include "kernels_ref.h"

void aotc_conv_ref_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                       const float *res, float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t ID = p->in_size[0], IH = p->in_size[1], IW = p->in_size[2];
    const int32_t OD = p->out_size[0], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KD = p->kernel[0], KH = p->kernel[1], KW = p->kernel[2];
    int32_t n, o, od, oh, ow, c, kd, kh, kw;
    for (n = 0; n < p->batch; ++n) {
        for (o = 0; o < p->out_c; ++o) {
            const int32_t g = o / mg; /* the group of output channel o: input channels g * cg .. */
            for (od = 0; od < OD; ++od) {
                for (oh = 0; oh < OH; ++oh) {
                    for (ow = 0; ow < OW; ++ow) {
                        const ptrdiff_t at = (((ptrdiff_t)n * p->out_c + o) * OD + od) * OH * OW + (ptrdiff_t)oh * OW + ow;
                        float sum = 0.0f;
                        for (c = 0; c < cg; ++c) {
                            for (kd = 0; kd < KD; ++kd) {
                                for (kh = 0; kh < KH; ++kh) {
                                    for (kw = 0; kw < KW; ++kw) {
                                        const int32_t id = od * p->strides[0] - p->pads[0] + kd * p->dilations[0];
                                        const int32_t ih = oh * p->strides[1] - p->pads[1] + kh * p->dilations[1];
                                        const int32_t iw = ow * p->strides[2] - p->pads[2] + kw * p->dilations[2];
                                        const ptrdiff_t xc = (ptrdiff_t)n * p->in_c + (ptrdiff_t)g * cg + c;
                                        const ptrdiff_t wc = (ptrdiff_t)o * cg + c;
                                        if (id < 0 || id >= ID || ih < 0 || ih >= IH || iw < 0 || iw >= IW) continue;
                                        sum += x[((xc * ID + id) * IH + ih) * IW + iw] *
                                               w[((wc * KD + kd) * KH + kh) * KW + kw];
                                    }
                                }
                            }
                        }
                        if (bias != NULL) sum += bias[o];
                        if (res != NULL) sum += res[at];
                        y[at] = aotc_activate_ref(sum, p->act, p->act_lo, p->act_hi, p->act_alpha);
                    }
                }
            }
        }
    }
}

void aotc_conv_transpose_ref_f32(const aotc_conv_params *p, const float *x, const float *w, const float *bias,
                                 float *y) {
    const int32_t cg = p->in_c / p->group, mg = p->out_c / p->group;
    const int32_t ID = p->in_size[0], IH = p->in_size[1], IW = p->in_size[2];
    const int32_t OD = p->out_size[0], OH = p->out_size[1], OW = p->out_size[2];
    const int32_t KD = p->kernel[0], KH = p->kernel[1], KW = p->kernel[2];
    const ptrdiff_t out_plane = (ptrdiff_t)OD * OH * OW;
    int32_t n, o, i, id, ih, iw, m, kd, kh, kw;
    ptrdiff_t q;
    for (n = 0; n < p->batch; ++n) { /* every output starts as its channel's bias */
        for (o = 0; o < p->out_c; ++o) {
            for (q = 0; q < out_plane; ++q) y[((ptrdiff_t)n * p->out_c + o) * out_plane + q] = bias != NULL ? bias[o] : 0.0f;
        }
    }
    for (n = 0; n < p->batch; ++n) {
        for (i = 0; i < p->in_c; ++i) { /* input channel i feeds output channels g * mg .. of its group g */
            const int32_t g = i / cg;
            for (id = 0; id < ID; ++id) {
                for (ih = 0; ih < IH; ++ih) {
                    for (iw = 0; iw < IW; ++iw) {
                        const float v = x[((((ptrdiff_t)n * p->in_c + i) * ID + id) * IH + ih) * IW + iw];
                        for (m = 0; m < mg; ++m) {
                            const ptrdiff_t o = (ptrdiff_t)g * mg + m;
                            for (kd = 0; kd < KD; ++kd) {
                                for (kh = 0; kh < KH; ++kh) {
                                    for (kw = 0; kw < KW; ++kw) {
                                        const int32_t od = id * p->strides[0] - p->pads[0] + kd * p->dilations[0];
                                        const int32_t oh = ih * p->strides[1] - p->pads[1] + kh * p->dilations[1];
                                        const int32_t ow = iw * p->strides[2] - p->pads[2] + kw * p->dilations[2];
                                        const ptrdiff_t wi = ((ptrdiff_t)i * mg + m) * KD + kd;
                                        if (od < 0 || od >= OD || oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                                        y[(((ptrdiff_t)n * p->out_c + o) * OD + od) * OH * OW + (ptrdiff_t)oh * OW + ow] +=
                                            v * w[(wi * KH + kh) * KW + kw];
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
