/* What both instantiations of quant_impl.h (quant_int8.c, quant_uint8.c) are compiled with: the level on
 * DSP cores and the vector paths the target has. Included once, before quant_impl.h. */
#ifndef AOTC_QUANT_CONFIG_H
#define AOTC_QUANT_CONFIG_H

#include "aotc_quant.h"

#include <math.h>   /* fmaf */
#include <string.h> /* memcpy */

/* On cores with the DSP extension the int8 kernels are the network: at -Os, gcc stops inlining and
 * if-converting their inner loops (10-15 % more instructions than at -O2), so quant_int8.c and quant_uint8.c are built
 * at -O2 whatever the level (issue 27: speed that does not depend on it). */
#if defined(__OPTIMIZE_SIZE__) && defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")
#endif

/* With AVX-512 VNNI (a -march that has it), the convolutions of quant_avx512vnni.h: byte dot products by
 * vpdpbusd, requantisation 16 lanes at a time. */
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#define AOTC_QUANT_VNNI 1
#else
#define AOTC_QUANT_VNNI 0
#endif

/* With AVX2 and not VNNI (an x86-64-v3 build): the patch quads' sums by vpmaddwd (quant_impl.h
 * qconv_quad_lanes). */
#if !AOTC_QUANT_VNNI && defined(__AVX2__) && !defined(AOTC_NO_INTRINSICS)
#include <immintrin.h>
#define AOTC_QUANT_AVX2 1
#else
#define AOTC_QUANT_AVX2 0
#endif

/* With the Arm DSP extension (Cortex-M4, M33, M55), dual 16-bit multiply-accumulates. */
#include "quant_dsp.h"

#endif
