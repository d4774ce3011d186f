/* The pool behind aotc_threads.h: POSIX threads that spin briefly, then block.
 *
 * A region publishes fn/ctx and each thread's share of the items, sets `pending` and bumps
 * `generation`; the caller and each worker claim chunks of the items until none is left
 * (run_chunks); each worker then decrements `pending`, and the caller waits for `pending` to reach 0.
 * MobileNet-v2 runs 52 regions of 10-300 us per inference, and a wake through a condition
 * variable (futex wake, then the scheduler) costs about 10 us each way: so a waiting thread
 * first polls the counter it waits on for up to AOTC_SPIN_US microseconds, with a pause
 * instruction between reads, as onnxruntime's pool does, and only then parks on a condition
 * variable (with a backoff when spins fail, see SPIN_UNTIL). The
 * counters are atomics (gcc/clang __atomic builtins, sequentially consistent where a thread
 * decides to sleep): a thread that parks first counts itself in `sleepers` (or sets
 * `caller_sleeps`) under the mutex and re-reads the counter; the other side changes the counter
 * and then reads that flag, and takes the mutex to signal only if someone parks. One of the two
 * always sees the other's write, so no wake is lost, and the hot path takes no lock.
 * Workers and their state are static: created at start, nothing allocated per region. Without
 * AOTC_THREADS > 1 start and stop do nothing. */
#if defined(AOTC_THREADS) && AOTC_THREADS > 1
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>
#endif
#include "aotc_threads.h"

#if defined(AOTC_THREADS) && AOTC_THREADS > 1

#define WORKERS (AOTC_THREADS - 1)

#ifndef AOTC_SPIN_US /* microseconds a waiting thread polls before it parks; 0 parks at once */
#define AOTC_SPIN_US 50
#endif

#ifndef AOTC_WORKER_STACK /* the least stack a worker gets: the kernels keep buffers of up to ~66 KiB on it (the
                           * AVX2 int8 depthwise), and some C libraries give a new thread less than that (musl:
                           * 128 KiB); glibc's default (the stack rlimit, 8 MiB) is larger and kept */
#define AOTC_WORKER_STACK (1024 * 1024)
#endif

#if defined(__x86_64__) || defined(__i386__)
#define aotc_pause() __builtin_ia32_pause()
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
#define aotc_pause() __asm__ __volatile__("yield" ::: "memory")
#else
#define aotc_pause() ((void)0)
#endif

/* Poll `cond` for AOTC_SPIN_US (the clock read every 32 pauses: a pause takes from a few to over
 * fifty nanoseconds by CPU and hypervisor, so a count of them is no measure of time), unless the
 * waiter `w` is backing off; sets ok when `cond` came true. A spin that ends in parking anyway
 * (the other thread is descheduled: a loaded machine) only burns a core the other thread needs:
 * so after a failed spin the waiter parks at once for its next `backoff` waits, doubling up to
 * MAX_BACKOFF while spins keep failing, and back to spinning every wait after one succeeds. */
#define MAX_BACKOFF 256
typedef struct {
    int32_t skip;    /* waits left to park at once */
    int32_t backoff; /* the last skip given */
} waiter;

#define SPIN_UNTIL(w, cond, ok)                                                         \
    do {                                                                                \
        if ((w)->skip > 0) {                                                            \
            --(w)->skip;                                                                \
        } else {                                                                        \
            const int64_t spin_t0_ = now_ns();                                          \
            int32_t spin_i_;                                                            \
            for (spin_i_ = 1; AOTC_SPIN_US > 0; ++spin_i_) {                            \
                if (cond) {                                                             \
                    ok = 1;                                                             \
                    break;                                                              \
                }                                                                       \
                aotc_pause();                                                           \
                if ((spin_i_ & 31) == 0 && now_ns() - spin_t0_ > AOTC_SPIN_US * 1000LL) \
                    break;                                                              \
            }                                                                           \
            if (ok) {                                                                   \
                (w)->backoff = 0;                                                       \
            } else if (AOTC_SPIN_US > 0) {                                              \
                (w)->backoff = (w)->backoff ? (w)->backoff * 2 : 1;                     \
                if ((w)->backoff > MAX_BACKOFF) (w)->backoff = MAX_BACKOFF;             \
                (w)->skip = (w)->backoff;                                               \
            }                                                                           \
        }                                                                               \
    } while (0)

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

#define LOAD(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_SEQ_CST)

/* Thread t's share of a region's items, [next, end): its own cache line, claimed from by its owner
 * and, once the owner's is empty, by the others. */
typedef struct {
    int32_t next; /* atomic: the share's first item not yet claimed */
    int32_t end;
    char pad[64 - 2 * sizeof(int32_t)];
} item_share;

static __thread int32_t thread_self; /* aotc_thread_index: 0 in the caller, set by each worker */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER; /* a new region (or stop) for the workers */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* the region's last worker finished */
static struct {
    pthread_t thread[WORKERS];
    int32_t started;       /* workers running (the caller's thread only) */
    uint32_t base;         /* generation at the last start */
    aotc_task_fn fn;       /* the region: written before `generation` is bumped */
    void *ctx;
    int32_t chunk;         /* items claimed at a time */
    item_share share[AOTC_THREADS]; /* thread t's items of the current region */
    uint32_t generation;   /* atomic: regions so far */
    int32_t stop;          /* atomic */
    int32_t pending;       /* atomic: workers still in the current region */
    int32_t sleepers;      /* atomic: workers parked (or parking) on `wake` */
    int32_t caller_sleeps; /* atomic: the caller parked (or parking) on `done` */
    waiter caller;         /* the caller's spin backoff */
} pool;

/* Run chunks of the current region until none is left. Thread t (the caller 0, workers 1 ..) owns the
 * t-th of AOTC_THREADS consecutive shares of the items and claims chunks from its front; when its share
 * is empty it takes chunks from the others'. Why shares: consecutive kernels split their work the same
 * way (output channels, planes, rows), so the items a thread wrote in one region are mostly those it
 * reads in the next, and data stays in its core's cache: on a VM whose two vCPUs sit on different
 * dies, a line the other core wrote costs about 3 x to read, and one it read about 30 x to write
 * (bench/handoff.c). Why taking from the others: the cores of a VM or of a loaded machine do not run
 * at one speed (profiling MobileNet-v2 here, one thread's CPU time for its half of a region was up to
 * 3x the other's), and a thread that finishes early takes the rest. Which thread computes an item
 * changes nothing in it: each item is the same code in the same order, so the output is
 * bit-identical to one thread. */
static void run_chunks(aotc_task_fn fn, void *ctx, int32_t self, int32_t chunk) {
    int32_t k;
    for (k = 0; k < AOTC_THREADS; ++k) {
        item_share *s = &pool.share[(self + k) % AOTC_THREADS];
        for (;;) {
            const int32_t b = __atomic_fetch_add(&s->next, chunk, __ATOMIC_RELAXED);
            if (b >= s->end) break;
            fn(ctx, b, s->end - b > chunk ? b + chunk : s->end);
        }
    }
}

/* The next generation after `seen` (or `seen` itself once stopped): spin, then park. */
static uint32_t await_region(uint32_t seen, waiter *w) {
    uint32_t g = seen;
    int ok = 0;
    SPIN_UNTIL(w, (g = __atomic_load_n(&pool.generation, __ATOMIC_ACQUIRE)) != seen ||
                   __atomic_load_n(&pool.stop, __ATOMIC_ACQUIRE),
               ok);
    if (ok) return g;
    pthread_mutex_lock(&lock);
    __atomic_add_fetch(&pool.sleepers, 1, __ATOMIC_SEQ_CST);
    while ((g = LOAD(&pool.generation)) == seen && !LOAD(&pool.stop)) pthread_cond_wait(&wake, &lock);
    __atomic_sub_fetch(&pool.sleepers, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&lock);
    return g;
}

static void *aotc_threads_worker(void *arg) {
    const int32_t self = (int32_t)(intptr_t)arg;
    thread_self = self;
    /* the regions before the start are not ours; those after it are, even if they began before
     * this thread first looked (pthread_create orders `base` before this read) */
    uint32_t seen = pool.base;
    waiter w = {0, 0};
    for (;;) {
        seen = await_region(seen, &w);
        if (LOAD(&pool.stop)) break;
        run_chunks(pool.fn, pool.ctx, self, pool.chunk);
        if (__atomic_sub_fetch(&pool.pending, 1, __ATOMIC_SEQ_CST) == 0 && LOAD(&pool.caller_sleeps)) {
            pthread_mutex_lock(&lock);
            pthread_cond_signal(&done);
            pthread_mutex_unlock(&lock);
        }
    }
    return NULL;
}

void aotc_parallel_run(aotc_task_fn fn, void *ctx, int32_t count) {
    int ok = 0;
    int32_t t;
    if (pool.started < WORKERS || count < 2) { /* no pool (not started, or torn down): one thread */
        fn(ctx, 0, count);
        return;
    }
    pool.fn = fn, pool.ctx = ctx;
    pool.chunk = count / (4 * AOTC_THREADS) > 1 ? count / (4 * AOTC_THREADS) : 1; /* about 4 per thread */
    for (t = 0; t < AOTC_THREADS; ++t) {
        pool.share[t].end = (int32_t)((int64_t)count * (t + 1) / AOTC_THREADS);
        STORE(&pool.share[t].next, (int32_t)((int64_t)count * t / AOTC_THREADS));
    }
    STORE(&pool.pending, WORKERS);
    __atomic_add_fetch(&pool.generation, 1, __ATOMIC_SEQ_CST);
    if (LOAD(&pool.sleepers) > 0) {
        pthread_mutex_lock(&lock);
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&lock);
    }
    run_chunks(fn, ctx, 0, pool.chunk);
    SPIN_UNTIL(&pool.caller, __atomic_load_n(&pool.pending, __ATOMIC_ACQUIRE) == 0, ok);
    if (ok) return;
    pthread_mutex_lock(&lock);
    STORE(&pool.caller_sleeps, 1);
    while (LOAD(&pool.pending) > 0) pthread_cond_wait(&done, &lock);
    STORE(&pool.caller_sleeps, 0);
    pthread_mutex_unlock(&lock);
}

int32_t aotc_thread_index(void) {
    return thread_self;
}

int32_t aotc_threads_start(void) {
    int32_t t;
    if (pool.started == WORKERS) return 0;
    STORE(&pool.stop, 0);
    pool.base = LOAD(&pool.generation);
    pthread_attr_t attr;
    size_t stack = 0;
    if (pthread_attr_init(&attr) != 0) return -1;
    if (pthread_attr_getstacksize(&attr, &stack) == 0 && stack < AOTC_WORKER_STACK)
        (void)pthread_attr_setstacksize(&attr, AOTC_WORKER_STACK);
    for (t = 0; t < WORKERS; ++t) {
        if (pthread_create(&pool.thread[t], &attr, aotc_threads_worker, (void *)(intptr_t)(t + 1)) != 0) {
            pthread_attr_destroy(&attr);
            pool.started = t;
            aotc_threads_stop();
            return -1;
        }
    }
    pthread_attr_destroy(&attr);
    pool.started = WORKERS;
    return 0;
}

void aotc_threads_stop(void) {
    int32_t t, n = pool.started;
    if (n == 0) return;
    STORE(&pool.stop, 1);
    pthread_mutex_lock(&lock);
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
