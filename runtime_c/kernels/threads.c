/* The pool behind aotc_threads.h: POSIX threads, one mutex and two condition variables. A
 * region bumps a generation counter under the mutex and broadcasts; each worker runs its share
 * and the last to finish signals the caller. Workers and their state are static: created at
 * start, nothing allocated per region. Without AOTC_THREADS > 1 start and stop do nothing. */
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#endif
#include "aotc_threads.h"

#if defined(AOTC_THREADS) && AOTC_THREADS > 1

#define WORKERS (AOTC_THREADS - 1)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER; /* a new region (or stop) for the workers */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* the region's last worker finished */
static struct {
    pthread_t thread[WORKERS];
    int32_t started;     /* workers running */
    int32_t stop;
    uint32_t generation; /* regions so far */
    uint32_t base;       /* generation at the last start */
    int32_t pending;     /* workers still in the current region */
    aotc_task_fn fn;
    void *ctx;
    int32_t count;
} pool;

static int32_t share(int32_t count, int32_t t) {
    return (int32_t)((int64_t)count * t / AOTC_THREADS);
}

static void *aotc_threads_worker(void *arg) {
    const int32_t t = (int32_t)(intptr_t)arg; /* 1 .. WORKERS; the caller is 0 */
    uint32_t seen;
    pthread_mutex_lock(&lock);
    seen = pool.base; /* the regions before the start are not ours; those after it are, even if
                       * they began before this thread got the lock */
    for (;;) {
        while (!pool.stop && pool.generation == seen) pthread_cond_wait(&wake, &lock);
        if (pool.stop) break;
        seen = pool.generation;
        {
            const aotc_task_fn fn = pool.fn;
            void *const ctx = pool.ctx;
            const int32_t b = share(pool.count, t), e = share(pool.count, t + 1);
            pthread_mutex_unlock(&lock);
            if (b < e) fn(ctx, b, e);
            pthread_mutex_lock(&lock);
        }
        if (--pool.pending == 0) pthread_cond_signal(&done);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

void aotc_parallel_run(aotc_task_fn fn, void *ctx, int32_t count) {
    if (pool.started < WORKERS || count < 2) { /* no pool (not started, or torn down): one thread */
        fn(ctx, 0, count);
        return;
    }
    pthread_mutex_lock(&lock);
    pool.fn = fn, pool.ctx = ctx, pool.count = count;
    pool.pending = WORKERS;
    ++pool.generation;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    if (share(count, 1) > 0) fn(ctx, 0, share(count, 1));
    pthread_mutex_lock(&lock);
    while (pool.pending > 0) pthread_cond_wait(&done, &lock);
    pthread_mutex_unlock(&lock);
}

int32_t aotc_threads_start(void) {
    int32_t t;
    if (pool.started == WORKERS) return 0;
    pool.stop = 0;
    pool.base = pool.generation;
    for (t = 0; t < WORKERS; ++t) {
        if (pthread_create(&pool.thread[t], NULL, aotc_threads_worker, (void *)(intptr_t)(t + 1)) != 0) {
            pool.started = t;
            aotc_threads_stop();
            return -1;
        }
    }
    pool.started = WORKERS;
    return 0;
}

void aotc_threads_stop(void) {
    int32_t t, n = pool.started;
    if (n == 0) return;
    pthread_mutex_lock(&lock);
    pool.stop = 1;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    for (t = 0; t < n; ++t) pthread_join(pool.thread[t], NULL);
    pool.started = 0;
}

#else

int32_t aotc_threads_start(void) {
    return 0;
}

void aotc_threads_stop(void) {}

#endif
