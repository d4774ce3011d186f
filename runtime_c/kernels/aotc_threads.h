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
#define aotc_thread_index() 0
#endif

/* Start the AOTC_THREADS - 1 workers (0 on success, -1 if a thread could not be created: the
 * pool then stays stopped and runs go single-threaded); stop and join them. Both are idempotent. */
int32_t aotc_threads_start(void);
void aotc_threads_stop(void);

#endif /* AOTC_THREADS_H */
