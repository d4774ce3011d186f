/* The round trip of one cache line between two cores (CPUs 0 and 1): each thread waits for the
 * other's write to a shared flag and answers it. bench/threads.py runs it before each round: on this
 * VM the two vCPUs sometimes sit far apart (a round trip of about 340 ns against 60-80), and in those
 * phases a --threads bundle whose kernels pass data between the cores runs up to 1.5 x as long.
 *
 *     cc -O2 -pthread bench/pingpong.c -o pingpong && ./pingpong     (prints the round trip in ns) */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#define TRIPS 100000

static volatile int flag __attribute__((aligned(64)));

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *answer(void *arg) {
    int i;
    (void)arg;
    pin(1);
    for (i = 0; i < TRIPS; ++i) {
        while (flag != 1) {
        }
        flag = 0;
    }
    return NULL;
}

int main(void) {
    pthread_t t;
    struct timespec a, b;
    int i;
    pin(0);
    if (pthread_create(&t, NULL, answer, NULL) != 0) return 1;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (i = 0; i < TRIPS; ++i) {
        flag = 1;
        while (flag != 0) {
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    printf("%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / TRIPS);
    return 0;
}
