/* TFLM's SignalRfft and SignalIrfft (aotc_tflm_signal.h): kissfft 1.3.0's real FFT and its inverse as TFLM
 * builds them (signal/src/kiss_fft_wrappers: FIXED_POINT 16 and 32, and float), bit for bit for the
 * integers. One body (tflm_signal_fft_body.h) for the three scalar types; the twiddles and the input order
 * are the compiler's tables. Portable C99, no allocation: each transform runs in place in its output. */
#include "aotc_tflm_signal.h"
#include "tflm_signal_internal.h"

#include <string.h>

/* On cores with the DSP extension (the M4, M33, M55) a complex product of int16 pairs is two instructions:
 * SMUSD (re: the low halves' product less the high halves') and SMUADX (im: the crossed products added), the
 * very sums the plain C forms (their magnitudes stay below 2^31: the twiddles' are at most 32767). */
#if defined(__ARM_FEATURE_DSP) && !defined(AOTC_NO_INTRINSICS)
#include <arm_acle.h>
static inline uint32_t fft_pair(const int16_t *v) {
    uint32_t w;
    memcpy(&w, v, 4); /* (re, im): re in the low half */
    return w;
}
#define FFT_CMUL_SUMS(a, b, re, im) \
    re = __smusd(fft_pair(a), fft_pair(b)); \
    im = __smuadx(fft_pair(a), fft_pair(b))
#endif

/* int16: 15 fraction bits, products in int32 */
#define FFT_T int16_t
#define FFT_SUFFIX(f) f##_i16
#define FFT_MUL(a, b) ((int32_t)(a) * (b))
#define FFT_ROUND(v) wrap16(((v) + (1 << 14)) >> 15)
#define FFT_DIV(x, k) FFT_ROUND(FFT_MUL(x, 32767 / (k)))
#define FFT_ADD(a, b) wrap16((int32_t)(a) + (b))
#define FFT_SUB(a, b) wrap16((int32_t)(a) - (b))
#define FFT_NEG(a) wrap16(-(int32_t)(a))
#define FFT_HALF_SUM(a, b) wrap16(((int32_t)(a) + (b)) >> 1)
#define FFT_HALF_DIFF(a, b) wrap16(((int32_t)(a) - (b)) >> 1)
#define FFT_IRFFT_SCALE(z, len) ((void)0)
#include "tflm_signal_fft_body.h"

/* int32: 31 fraction bits, products in int64 */
#define FFT_T int32_t
#define FFT_SUFFIX(f) f##_i32
#define FFT_MUL(a, b) ((int64_t)(a) * (b))
#define FFT_ROUND(v) wrap32(((v) + ((int64_t)1 << 30)) >> 31)
#define FFT_DIV(x, k) FFT_ROUND(FFT_MUL(x, 2147483647 / (k)))
#define FFT_ADD(a, b) wrap32((int64_t)(a) + (b))
#define FFT_SUB(a, b) wrap32((int64_t)(a) - (b))
#define FFT_NEG(a) wrap32(-(int64_t)(a))
#define FFT_HALF_SUM(a, b) (wrap32((int64_t)(a) + (b)) >> 1)
#define FFT_HALF_DIFF(a, b) (wrap32((int64_t)(a) - (b)) >> 1)
#define FFT_IRFFT_SCALE(z, len) ((void)0)
#include "tflm_signal_fft_body.h"

/* float: no scaling in the butterflies; TFLM's IrfftFloatApply divides the result by fft_length */
static void irfft_scale_f32(float *z, int32_t len) {
    int32_t i;
    for (i = 0; i < len; ++i) z[i] /= (float)len;
}
#define FFT_T float
#define FFT_SUFFIX(f) f##_f32
#define FFT_MUL(a, b) ((a) * (b))
#define FFT_ROUND(v) (v)
#define FFT_DIV(x, k) ((void)(k), (x))
#define FFT_ADD(a, b) ((a) + (b))
#define FFT_SUB(a, b) ((a) - (b))
#define FFT_NEG(a) (-(a))
#define FFT_HALF_SUM(a, b) (((a) + (b)) * 0.5f)
#define FFT_HALF_DIFF(a, b) (((a) - (b)) * 0.5f)
#define FFT_IRFFT_SCALE(z, len) irfft_scale_f32(z, len)
#include "tflm_signal_fft_body.h"
