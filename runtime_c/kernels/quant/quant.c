/* Quantized kernels (aotc_quant.h). The kernels are written once, in quant_impl.h, over an
 * element type QT; this file instantiates them for int8 (_i8) and uint8 (_u8) activations. */
#include "aotc_quant.h"

/* On cores with the DSP extension the int8 kernels are the network: at -Os, gcc stops inlining and
 * if-converting their inner loops (10-15 % more instructions than at -O2), so this file is built
 * at -O2 whatever the level (issue 27: speed that does not depend on it). */
#if defined(__OPTIMIZE_SIZE__) && defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")
#endif

#include <math.h>   /* fmaf */
#include <string.h> /* memcpy */

/* With AVX-512 VNNI (a -march that has it), the convolutions of quant_avx512vnni.h: byte dot products by
 * vpdpbusd, requantisation 16 lanes at a time. */
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#define AOTC_QUANT_VNNI 1
#else
#define AOTC_QUANT_VNNI 0
#endif

/* With the Arm DSP extension (Cortex-M4, M33, M55), dual 16-bit multiply-accumulates. */
#include "quant_dsp.h"

#define QT int8_t
#define QT_MIN (-128)
#define QT_MAX 127
#define AOTC_Q(name) aotc_##name##_i8
#define AOTC_QOFFSET 128 /* the patches hold x + 128 as unsigned bytes */
#include "quant_impl.h"
#undef QT
#undef QT_MIN
#undef QT_MAX
#undef AOTC_Q
#undef AOTC_QOFFSET

#define QT uint8_t
#define QT_MIN 0
#define QT_MAX 255
#define AOTC_Q(name) aotc_##name##_u8
#define AOTC_QOFFSET 0
#include "quant_impl.h"
#undef QT
#undef QT_MIN
#undef QT_MAX
#undef AOTC_Q
#undef AOTC_QOFFSET

void aotc_dequantize_i32(const aotc_qaxis *p, const int32_t *x, float *y) {
    int32_t o, c, i;
    for (o = 0; o < p->outer; ++o) {
        for (c = 0; c < p->channels; ++c) {
            const float s = p->scale[c];
            const int32_t z = p->zero[c];
            for (i = 0; i < p->inner; ++i) *y++ = (float)(*x++ - z) * s;
        }
    }
}
