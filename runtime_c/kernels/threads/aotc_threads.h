/* The thread pool of a bundle compiled with `aotc --threads N` (Linux targets): N - 1 workers
 * started once by <name>_threads_init, parked on a condition variable between parallel
 * regions, and woken per region; nothing is allocated after the start. A kernel splits its
 * work into `count` independent items (output-channel tiles, output planes) and hands them to
 * aotc_parallel_for, whose threads claim chunks of consecutive items [begin, end) until none
 * is left, each first from its own share of them (thread t the t-th part, so that consecutive
 * kernels that split alike keep each thread on its own data), then from the others' (a faster
 * thread takes more); every item is computed by the same code in the same
 * order as on one thread, whichever thread takes it, so the results are bit-identical to N = 1.
 *
 * Without AOTC_THREADS > 1 (every build but a --threads one, and bare metal always) the pool
 * does not exist: aotc_parallel_for is the plain call fn(ctx, 0, count), and the kernels are
 * the single-threaded code. With it, a bundle whose pool is not started (or was torn down)
 * also runs everything on the calling thread. One run at a time: the pool serves one caller. */
#ifndef AOTC_THREADS_H
#define AOTC_THREADS_H

#include "aotc_common.h"

/* A parallel region's body: items [begin, end) of the region's work. */
typedef void (*aotc_task_fn)(void *ctx, int32_t begin, int32_t end);

#if defined(AOTC_THREADS) && AOTC_THREADS > 1
/* threads.c: the region on the pool; the caller runs the first share and waits for the rest. */
void aotc_parallel_run(aotc_task_fn fn, void *ctx, int32_t count);
#define aotc_parallel_for(fn, ctx, count) aotc_parallel_run(fn, ctx, count)
/* the calling thread's index in the pool: 0 for the caller, 1 .. AOTC_THREADS - 1 for the workers (a
 * kernel that keeps data per thread, in its part of scratch) */
int32_t aotc_thread_index(void);
#else
#define aotc_parallel_for(fn, ctx, count) (fn)(ctx, 0, count)
#undef aotc_thread_index /* a --threads bundle's aotc_symbols.h renames threads.c's function: built without the pool */
#define aotc_thread_index() 0
#endif

/* Non-temporal stores of n floats from x to y (any alignment), where the pool and SSE2 exist, for
 * kernels whose outputs are written much faster than they are computed (Winograd's lanes): such
 * outputs land on arena lines the other thread has read, and when the two cores sit on different dies
 * (a VM's vCPUs, or a machine's core complexes) each ordinary store to such a line waits for the other
 * core to give it up, about 30 x a local store (bench/handoff.c); a non-temporal store takes the line at
 * once, but the next reader then fetches it from memory. A line should go out all by these or all by
 * ordinary stores: a MaxPool that mixed them on a row's last line took 7 x as long. (MaxPool by these
 * alone: ResNet-18's at two threads 132 -> 57 us far, but SqueezeNet's next 1 x 1 conv, reading from
 * memory, 31 -> 97 us near: not used there.) The caller ends its part of the region with
 * aotc_stream_fence(). */
#if defined(AOTC_THREADS) && AOTC_THREADS > 1 && defined(__SSE2__) && !defined(AOTC_NO_INTRINSICS)
#define AOTC_STREAM_STORES 1
#include <emmintrin.h>
static inline void aotc_stream_f32(float *y, const float *x, int32_t n) {
    int32_t i;
    for (i = 0; i < n && ((uintptr_t)(y + i) & 15) != 0; ++i) _mm_stream_si32((int *)(y + i), *(const int *)(x + i));
    for (; i + 4 <= n; i += 4) _mm_stream_ps(y + i, _mm_loadu_ps(x + i));
    for (; i < n; ++i) _mm_stream_si32((int *)(y + i), *(const int *)(x + i));
}
#define aotc_stream_fence() _mm_sfence()
#else
#define AOTC_STREAM_STORES 0
#endif

/* Start the AOTC_THREADS - 1 workers (0 on success, -1 if a thread could not be created: the
 * pool then stays stopped and runs go single-threaded); stop and join them. Both are idempotent. */
int32_t aotc_threads_start(void);
void aotc_threads_stop(void);

#endif /* AOTC_THREADS_H */
