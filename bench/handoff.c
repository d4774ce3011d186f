/* What data passed between the two cores costs: CPU 1 reads or writes a 1 MiB buffer that it wrote itself,
 * that CPU 0 wrote last, or that CPU 0 read last (both hold it), and prints the rate of each (best of 30).
 * Why: on this VM the two vCPUs sometimes sit far apart (bench/pingpong.c: a round trip of about 350 ns
 * against 50-100), and then a core reads what the other wrote at about a third of the rate of its own data,
 * and writes what the other read at about a thirtieth: a --threads bundle whose kernels hand their data from
 * one thread to the other pays for it (issue 24; aot/kernels/winograd.py's THREADS_MIN_INTENSITY).
 * CPU 0 waits with a pause instruction between polls, as runtime_c/kernels/threads/threads.c does: a poll without
 * one slowed CPU 1's own accesses too.
 *
 *     cc -O2 -mavx512f -pthread bench/handoff.c -o handoff && ./handoff */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLOATS (1 << 18) /* 1 MiB */
#define REPEAT 30

static float *buf;
static volatile int stage; /* 1: CPU 0's turn, 2: CPU 1's, 9: stop */
static volatile float sink;
static int before; /* what CPU 0 does first: 0 nothing, 1 write, 2 read */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void write_all(float v) {
    int i;
    for (i = 0; i < FLOATS; i += 16) _mm512_store_ps(buf + i, _mm512_set1_ps(v));
}

static float read_all(void) {
    __m512 s = _mm512_setzero_ps();
    int i;
    for (i = 0; i < FLOATS; i += 16) s = _mm512_add_ps(s, _mm512_load_ps(buf + i));
    return _mm512_reduce_add_ps(s);
}

static void *cpu0(void *arg) {
    (void)arg;
    pin(0);
    for (;;) {
        while (stage != 1) {
            if (stage == 9) return NULL;
            _mm_pause();
        }
        if (before == 1) write_all(1.0f);
        if (before == 2) sink = read_all();
        stage = 2;
    }
}

int main(void) {
    static const char *first[] = {"its own data", "data CPU 0 wrote", "data CPU 0 read"};
    pthread_t t;
    int writes, r;
    buf = aligned_alloc(64, FLOATS * sizeof(float));
    memset(buf, 0, FLOATS * sizeof(float));
    pin(1);
    pthread_create(&t, NULL, cpu0, NULL);
    for (before = 0; before < 3; ++before)
        for (writes = 0; writes < 2; ++writes) {
            double best = 1e9;
            for (r = 0; r < REPEAT; ++r) {
                double t0;
                write_all(2.0f); /* CPU 1 owns the buffer */
                stage = 1;
                while (stage != 2) _mm_pause();
                t0 = now();
                if (writes) write_all(3.0f);
                else sink = read_all();
                t0 = now() - t0;
                if (t0 < best) best = t0;
            }
            printf("CPU 1 %s %-16s %6.1f GB/s\n", writes ? "writes" : "reads ", first[before],
                   FLOATS * sizeof(float) / best * 1e-9);
        }
    stage = 9;
    pthread_join(t, NULL);
    free(buf);
    return 0;
}
