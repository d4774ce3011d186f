/* The pool's workers get at least AOTC_WORKER_STACK of stack, whatever the C library's default for a new thread:
 * each worker writes a 512 KiB buffer on its stack (as a kernel's stack buffers would, at a smaller size). Run by
 * test_kernels_c.py with RLIMIT_STACK at 256 KiB, which glibc takes as a new thread's default: without the
 * pool's stack attribute the workers overflow. Prints "ok" when every worker ran its share. */
#include <stdint.h>
#include <stdio.h>

#ifndef AOTC_THREADS /* (test_kernels_c.py builds it with -DAOTC_THREADS=3; the clang check compiles it alone) */
#define AOTC_THREADS 3
#endif
#include "aotc_threads.h"

#define DEEP (512 * 1024)

static volatile int32_t ran[AOTC_THREADS];

/* every page of a DEEP buffer on this thread's stack (not inlined: its frame is only made on a worker) */
static __attribute__((noinline)) int32_t touch_deep(void) {
    volatile uint8_t buffer[DEEP];
    int32_t i;
    for (i = 0; i < DEEP; i += 1024) buffer[i] = (uint8_t)i;
    return buffer[DEEP - 1024] == (uint8_t)(DEEP - 1024) ? 1 : 0;
}

static void deep_task(void *ctx, int32_t begin, int32_t end) {
    int32_t t = aotc_thread_index();
    (void)ctx;
    /* the caller's own stack is the process's, set by the rlimit: not what this test checks */
    ran[t] += t == 0 ? end - begin : (end - begin) * touch_deep();
}

int main(void) {
    int32_t round, t, total = 0, workers_ran = 0;
    if (aotc_threads_start() != 0) {
        printf("no pool: its threads could not start\n");
        return 1;
    }
    for (round = 0; round < 50; ++round) aotc_parallel_for(deep_task, NULL, 64);
    aotc_threads_stop();
    for (t = 0; t < AOTC_THREADS; ++t) {
        total += ran[t];
        workers_ran += t > 0 && ran[t] > 0;
    }
    printf("%s: %d items, %d workers ran\n", total == 50 * 64 && workers_ran > 0 ? "ok" : "MISMATCH", total,
           workers_ran);
    return 0;
}
