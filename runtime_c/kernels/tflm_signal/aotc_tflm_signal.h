/* TFLM's signal library (tflite-micro signal/): the custom ops of its audio front end (SignalWindow,
 * SignalFftAutoScale, SignalRfft, SignalEnergy, SignalFilterBank, SignalFilterBankSquareRoot,
 * SignalFilterBankSpectralSubtraction, SignalPCAN, SignalFilterBankLog), each computing what TFLM's
 * reference code computes, bit for bit. The compiler tabulates what TFLM computes at init (the FFT's
 * twiddles, its input order, the log table); a stateful op reads its state from one buffer and
 * writes the next state to another, which the caller carries between runs. */
#ifndef AOTC_TFLM_SIGNAL_H
#define AOTC_TFLM_SIGNAL_H

#include "aotc_common.h"

#include <stddef.h>
#include <stdint.h>

/* the most radix stages of an FFT: 2^15 points (the complex FFT of half the real length) */
#define AOTC_TFLM_FFT_MAX_STAGES 16

/* SignalWindow: each row of n samples times the window, shifted right by `shift`, saturated to int16. */
void aotc_tflm_window_i16(int32_t rows, int32_t n, int32_t shift, const int16_t *x, const int16_t *w, int16_t *y);

/* SignalFftAutoScale: x shifted left by the bits its largest magnitude leaves free (0 when that is
 * -32768 or every sample is 0, as TFLM's MostSignificantBit32 with gcc); *scale_bits gets the shift. */
void aotc_tflm_fft_auto_scale_i16(int32_t n, const int16_t *x, int16_t *y, int32_t *scale_bits);

/* SignalRfft: kissfft 1.3.0's real FFT as TFLM builds it (kiss_fftr; FIXED_POINT 16 or 32, which scale by
 * 1 / fft_length as they go, or float). Each row of in_len samples is zero-padded to fft_length; the output
 * row is fft_length / 2 + 1 complex values (re, im). SignalIrfft: kiss_fftri, rows of n + 1 bins to
 * fft_length samples (float: divided by fft_length, as TFLM does; in_len unused). The complex FFT of
 * n = fft_length / 2 points runs its radix stages (radix[0] outermost, the order kissfft factors n: 4s,
 * then a 2) over the input taken in the order perm gives (perm[k]: which complex input lands at position
 * k); tw: the n twiddles, super_tw: the n / 2 of the real split, each (re, im) as kissfft rounds them, of
 * the kernel's scalar type (the inverse transform's for Irfft). */
typedef struct {
    int32_t rows, in_len, n, stages;
    int32_t radix[AOTC_TFLM_FFT_MAX_STAGES];
    const int16_t *perm;
    const void *tw;
    const void *super_tw;
} aotc_tflm_rfft_params;

void aotc_tflm_rfft_i16(const aotc_tflm_rfft_params *p, const int16_t *x, int16_t *y);
void aotc_tflm_rfft_i32(const aotc_tflm_rfft_params *p, const int32_t *x, int32_t *y);
void aotc_tflm_rfft_f32(const aotc_tflm_rfft_params *p, const float *x, float *y);
void aotc_tflm_irfft_i16(const aotc_tflm_rfft_params *p, const int16_t *x, int16_t *y);
void aotc_tflm_irfft_i32(const aotc_tflm_rfft_params *p, const int32_t *x, int32_t *y);
void aotc_tflm_irfft_f32(const aotc_tflm_rfft_params *p, const float *x, float *y);

/* SignalEnergy: re^2 + im^2 of complex bins [start, end) of x (n bins); TFLM leaves the others as
 * they were, aotc writes 0 there. */
void aotc_tflm_energy_i16(int32_t n, int32_t start, int32_t end, const int16_t *x, uint32_t *y);

/* SignalFilterBank: channels + 1 weighted sums of x, each channel's weights and unweights from
 * weight_starts[c] for widths[c] bins from freq_starts[c]; a channel's unweighted sum carries into
 * the next one, and the first (the sum below the lowest band) is dropped: y has `channels` values. */
typedef struct {
    int32_t channels;
    const int16_t *weights, *unweights, *freq_starts, *weight_starts, *widths;
} aotc_tflm_filter_bank_params;

void aotc_tflm_filter_bank(const aotc_tflm_filter_bank_params *p, const uint32_t *x, uint64_t *y);

/* SignalFilterBankSquareRoot: each channel's integer square root (rounded as TFLM's Sqrt64),
 * shifted right by *scale_bits. */
void aotc_tflm_filter_bank_sqrt(int32_t n, const uint64_t *x, const int32_t *scale_bits, uint32_t *y);

/* SignalFilterBankSpectralSubtraction: the noise estimate (state, carried between runs) follows
 * each channel through a one-pole filter, even channels with `smoothing`, odd ones with
 * `alternate_smoothing` (both at scale 2^spectral_subtraction_bits), and y is x less the estimate,
 * at least x * min_signal_remaining. noise_next: the new estimate (may be `noise`). */
typedef struct {
    int32_t channels;
    uint32_t smoothing, one_minus_smoothing, alternate_smoothing, alternate_one_minus_smoothing;
    uint32_t min_signal_remaining, smoothing_bits, spectral_subtraction_bits;
    int32_t clamping;
} aotc_tflm_spectral_subtraction_params;

void aotc_tflm_spectral_subtraction(const aotc_tflm_spectral_subtraction_params *p, const uint32_t *x,
                                    const uint32_t *noise, uint32_t *y, uint32_t *noise_next);

/* SignalPCAN: per-channel automatic gain control: the gain read from the piecewise polynomial table
 * `lut` at the channel's noise estimate, the signal-to-noise ratio shrunk as TFLM's PcanShrink. */
void aotc_tflm_pcan(int32_t n, int32_t snr_shift, const uint32_t *x, const uint32_t *noise, const int16_t *lut,
                    uint32_t *y);

/* SignalFilterBankLog: output_scale * ln(x << correction_bits) in TFLM's fixed point (Log32), capped at
 * INT16_MAX; 0 where the shifted value is 0 or 1. log_lut: the 129 corrections of log2(1 + t) - t
 * at t = i / 128, scaled by 2^16 and rounded (the compiler's table), then a 0. */
void aotc_tflm_filter_bank_log(int32_t n, int32_t output_scale, int32_t correction_bits, const uint16_t *log_lut,
                               const uint32_t *x, int16_t *y);

/* The streaming ops keep TFLM's circular buffers as a plain state row the caller carries: the samples
 * held, oldest first, then (Framer, Stacker) their count; a kernel reads `state` and writes the next state
 * to `state_next` (another buffer). Where TFLM leaves an output it did not produce as it was (a frame not
 * yet complete), aotc writes 0s. */

/* SignalFramer: each of `outer` rows of n_frames * frame_step samples appended to the row's held samples,
 * a frame of the oldest frame_size given (and frame_step of them dropped) whenever that many are held;
 * *valid: 1 when every frame of the call was complete. State row: `capacity` samples, then the count
 * (TFLM's buffer capacity: frame_size rounded up to a multiple of frame_step). */
typedef struct {
    int32_t outer, n_frames, frame_size, frame_step, capacity;
} aotc_tflm_framer_params;

void aotc_tflm_framer_i16(const aotc_tflm_framer_params *p, const int16_t *x, const int16_t *state, int16_t *y,
                          uint8_t *valid, int16_t *state_next);

/* SignalStacker: one frame of `channels` samples appended (the first frame of a sequence also repeated
 * `left` times before it), and while channels * (left + right + 1) samples are held, those given and
 * channels * step dropped. State row: that many samples, their count, whether the first frame came. */
typedef struct {
    int32_t channels, left, right, step;
} aotc_tflm_stacker_params;

void aotc_tflm_stacker_i16(const aotc_tflm_stacker_params *p, const int16_t *x, const int16_t *state, int16_t *y,
                           uint8_t *valid, int16_t *state_next);

/* SignalOverlapAdd: each of `outer` rows of n_frames frames of frame_size added into the row's buffer
 * (the state row, frame_size values; int16 saturated), frame_step values of it given out a frame and
 * the buffer shifted by as many, zeros coming in. */
typedef struct {
    int32_t outer, n_frames, frame_size, frame_step;
} aotc_tflm_overlap_add_params;

void aotc_tflm_overlap_add_i16(const aotc_tflm_overlap_add_params *p, const int16_t *x, const int16_t *state,
                               int16_t *y, int16_t *state_next);
void aotc_tflm_overlap_add_f32(const aotc_tflm_overlap_add_params *p, const float *x, const float *state, float *y,
                               float *state_next);

#endif /* AOTC_TFLM_SIGNAL_H */
