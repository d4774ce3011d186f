/* The kernels' scratch formulas (aotc_conv.h, aotc_gemm.h, aotc_tflite_int8.h, aotc_quant.h) behind plain entry
 * points, built for the host as a shared library that tests/kernels_c/test_scratch_facts.py loads with ctypes, to hold
 * the compiler's sizes (aot/kernels/conv.py, tflite_int8.py, quant.py) equal to them. Params arrive as int32 arrays
 * in the order below. */
#include <string.h>

#include "aotc_conv.h"
#include "aotc_gemm.h"
#include "aotc_quant.h"
#include "aotc_tflite_int8.h"

/* f: batch, group, in_c, out_c, in_size[3], out_size[3], kernel[3], strides[3], dilations[3], pads[3], kc, nc */
int64_t facts_conv(const char *kernel, const int32_t *f, int32_t threads) {
    aotc_conv_params p;
    int d;
    memset(&p, 0, sizeof p);
    p.batch = f[0], p.group = f[1], p.in_c = f[2], p.out_c = f[3];
    for (d = 0; d < 3; ++d) {
        p.in_size[d] = f[4 + d], p.out_size[d] = f[7 + d], p.kernel[d] = f[10 + d];
        p.strides[d] = f[13 + d], p.dilations[d] = f[16 + d], p.pads[d] = f[19 + d];
    }
    p.kc = f[22], p.nc = f[23];
    if (!strcmp(kernel, "aotc_conv_f32")) return aotc_conv_f32_scratch_bytes(&p);
    if (!strcmp(kernel, "aotc_conv_s1_f32")) return aotc_conv_s1_f32_scratch_bytes(&p);
    if (!strcmp(kernel, "aotc_conv_pointwise_f32")) return aotc_conv_pointwise_f32_scratch_bytes(&p);
    if (!strcmp(kernel, "aotc_conv_pointwise_t_f32")) return aotc_conv_pointwise_t_f32_scratch_bytes(&p);
    if (!strcmp(kernel, "aotc_conv_pointwise_strided_f32")) return aotc_conv_pointwise_strided_f32_scratch_bytes(&p);
    if (!strcmp(kernel, "aotc_conv_depthwise3x3_f32")) return aotc_conv_depthwise3x3_f32_scratch_bytes(&p);
    if (!strcmp(kernel, "aotc_conv3x3_flat_f32")) return aotc_conv3x3_flat_f32_scratch_bytes(&p);
    if (!strcmp(kernel, "aotc_conv_transpose_f32")) return aotc_conv_transpose_f32_scratch_bytes(&p);
    if (!strcmp(kernel, "aotc_conv_winograd_f32")) return aotc_conv_winograd_f32_scratch_bytes(&p, threads);
    if (!strcmp(kernel, "aotc_conv_winograd4_f32")) return aotc_conv_winograd4_f32_scratch_bytes(&p, threads);
    return -1; /* a kernel without scratch */
}

int64_t facts_sgemm_work(int32_t k) { return aotc_sgemm_work_bytes(k); }

/* f: n, h, w, c, oh, ow, oc, kh, kw, sh, sw, dh, dw, pad_top, pad_left, depth_multiplier, dsp_tile;
 * *np: CONV_2D's DSP tile */
int64_t facts_tfl(const char *path, const int32_t *f, int32_t *np) {
    aotc_tfl_conv_params p;
    memset(&p, 0, sizeof p);
    p.n = f[0], p.h = f[1], p.w = f[2], p.c = f[3], p.oh = f[4], p.ow = f[5], p.oc = f[6];
    p.kh = f[7], p.kw = f[8], p.sh = f[9], p.sw = f[10], p.dh = f[11], p.dw = f[12];
    p.pad_top = f[13], p.pad_left = f[14], p.depth_multiplier = f[15], p.dsp_tile = f[16];
    (void)tfl_dsp_conv_words(&p, np);
    if (!strcmp(path, "conv_dsp")) return aotc_tfl_conv_s8_dsp_scratch_bytes(&p);
    if (!strcmp(path, "conv_mve")) return aotc_tfl_conv_s8_mve_scratch_bytes(&p);
    if (!strcmp(path, "conv_add_dsp")) return aotc_tfl_conv_add_s8_dsp_scratch_bytes(&p);
    if (!strcmp(path, "conv_add_mve")) return aotc_tfl_conv_add_s8_mve_scratch_bytes(&p);
    if (!strcmp(path, "depthwise_dsp")) return aotc_tfl_depthwise_s8_dsp_scratch_bytes(&p);
    if (!strcmp(path, "conv_packed") || !strcmp(path, "conv_add_packed")) return aotc_tfl_conv_s8_packed_scratch_bytes(&p);
    if (!strcmp(path, "depthwise_packed")) return aotc_tfl_depthwise_s8_packed_scratch_bytes(&p);
    return -1;
}

int64_t facts_tfl_fc(int32_t in, int32_t out) {
    aotc_tfl_fc_params p;
    memset(&p, 0, sizeof p);
    p.in = in, p.out = out;
    return aotc_tfl_fc_s8_dsp_scratch_bytes(&p);
}

int64_t facts_tfl_fc_packed(int32_t in, int32_t out) {
    aotc_tfl_fc_params p;
    memset(&p, 0, sizeof p);
    p.in = in, p.out = out;
    return aotc_tfl_fc_s8_packed_scratch_bytes(&p);
}

int64_t facts_tfl_add(int64_t count, int32_t broadcast) {
    aotc_tfl_binary_params p;
    memset(&p, 0, sizeof p);
    p.count = count, p.broadcast = broadcast;
    return aotc_tfl_add_s8_dsp_scratch_bytes(&p);
}

/* f: batch, in_c, in_h, in_w, out_c, out_h, out_w, group, k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top,
 * pad_left, w_zero_any, w_packed, dw4, work; what: the scratch of aotc_qconv_patches_* (of a patch block of
 * tile positions) or aotc_qconv_depthwise_*, or the work of a target's path */
int64_t facts_qconv(const char *what, const int32_t *f, int32_t tile) {
    aotc_qconv_params p;
    memset(&p, 0, sizeof p);
    p.batch = f[0], p.in_c = f[1], p.in_h = f[2], p.in_w = f[3], p.out_c = f[4], p.out_h = f[5], p.out_w = f[6];
    p.group = f[7], p.k_h = f[8], p.k_w = f[9], p.stride_h = f[10], p.stride_w = f[11], p.dil_h = f[12];
    p.dil_w = f[13], p.pad_top = f[14], p.pad_left = f[15], p.w_zero_any = f[16], p.w_packed = f[17];
    p.dw4 = f[18], p.work = f[19];
    if (!strcmp(what, "patches")) return aotc_qconv_patches_scratch_bytes(&p, tile);
    if (!strcmp(what, "depthwise")) return aotc_qconv_depthwise_scratch_bytes(&p);
    if (!strcmp(what, "patches_avx512")) return aotc_qconv_patches_x86_work_bytes(&p, tile);
    if (!strcmp(what, "patches_arm-dsp")) return aotc_qconv_dsp_work_bytes(&p);
    if (!strcmp(what, "depthwise_avx512")) return aotc_qconv_depthwise_x86_work_bytes(&p);
    return -1;
}
