/* What the tflm_signal kernels share (tflm_signal.c, tflm_signal_fft.c): TFLM's wrapping stores. */
#ifndef AOTC_TFLM_SIGNAL_INTERNAL_H
#define AOTC_TFLM_SIGNAL_INTERNAL_H

#include <stdint.h>

/* a value stored into an int16 as TFLM's C++ stores it: its low 16 bits */
static inline int16_t wrap16(int32_t v) {
    const uint16_t u = (uint16_t)(uint32_t)v;
    return u < 0x8000u ? (int16_t)u : (int16_t)((int32_t)u - 65536);
}

/* a value stored into an int32 as TFLM's C++ stores a wider sum: its low 32 bits */
static inline int32_t wrap32(int64_t v) {
    const uint32_t u = (uint32_t)(uint64_t)v;
    return u < 0x80000000u ? (int32_t)u : (int32_t)((int64_t)u - 4294967296LL);
}

#endif /* AOTC_TFLM_SIGNAL_INTERNAL_H */
