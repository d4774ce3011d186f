/* aotc board support for Arm Cortex-M (qemu mps2/mps3 boards): vector table, reset handler,
 * .data/.bss set-up, FPU/MVE enable, argv from semihosting, exit code through semihosting,
 * and a cycle counter (DWT CYCCNT when the core counts, else SysTick).
 * Built with newlib-nano + librdimon (--specs=nano.specs --specs=rdimon.specs -nostartfiles).
 * Firmware that has its own startup code does not need this file: the model library
 * itself needs no start-up support beyond a C runtime with .data/.bss initialised. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aotc_board.h"

/* Linker-script symbols (see sections.ld). */
extern uint32_t __stack_top, __data_start__, __data_end__, __data_load__, __bss_start__, __bss_end__;
extern int main(int argc, char **argv);
extern void initialise_monitor_handles(void);
extern void __libc_init_array(void);

void Reset_Handler(void);
void Default_Handler(void);
void SysTick_Handler(void);

/* One semihosting call (Arm semihosting v2: BKPT 0xAB on M-profile). */
static uint32_t semihost(uint32_t op, void *arg) {
    register uint32_t r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

#define SYS_GET_CMDLINE 0x15u
#define SYS_EXIT 0x18u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

void aotc_board_exit(int code) {
    /* SYS_EXIT_EXTENDED: qemu exits with `code`. */
    uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    (void)semihost(SYS_EXIT_EXTENDED, block);
    for (;;) {
    }
}

/* Any fault or unexpected interrupt: exit 134 (as a host process killed by SIGABRT). */
void Default_Handler(void) { aotc_board_exit(134); }

/* --- cycle counter --------------------------------------------------------------------------- */
#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define ICSR (*(volatile uint32_t *)0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)

static volatile uint32_t systick_wraps;
static int clock_kind; /* 0: not started, 1: DWT, 2: SysTick */

void SysTick_Handler(void) { systick_wraps++; }

const char *aotc_board_timer_init(void) {
    uint32_t before;
    volatile uint32_t spin;
    DEMCR |= 1u << 24; /* TRCENA */
    if ((DWT_CTRL & (1u << 25)) == 0u) { /* NOCYCCNT clear: the core has a cycle counter */
        DWT_CYCCNT = 0u;
        DWT_CTRL |= 1u;
        before = DWT_CYCCNT;
        for (spin = 0; spin < 100u; ++spin) {
        }
        if (DWT_CYCCNT != before) {
            clock_kind = 1;
            return "dwt";
        }
    }
    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0u;
    SYST_CSR = 7u; /* processor clock, interrupt on wrap, enable */
    clock_kind = 2;
    return "systick";
}

uint64_t aotc_board_cycles(void) {
    if (clock_kind == 1) {
        return DWT_CYCCNT;
    }
    if (clock_kind == 2) {
        uint32_t hi, lo, pending;
        do {
            hi = systick_wraps;
            lo = SYST_CVR;
            pending = ICSR & ICSR_PENDSTSET;
        } while (hi != systick_wraps);
        if (pending && lo > 0x007FFFFFu) { /* wrapped, interrupt not taken yet */
            ++hi;
        }
        return ((uint64_t)hi << 24) + (0x00FFFFFFu - lo);
    }
    return 0u;
}

/* --- argv from the semihosting command line ------------------------------------------------------ */
#define AOTC_MAX_ARGS 8
static char cmdline[256];
static char *argv_buf[AOTC_MAX_ARGS + 1];

static int read_args(void) {
    struct {
        char *buf;
        uint32_t len;
    } block = {cmdline, sizeof cmdline - 1u};
    int argc = 0;
    char *p = cmdline;
    if (semihost(SYS_GET_CMDLINE, &block) != 0u) {
        block.len = 0u;
    }
    cmdline[block.len < sizeof cmdline ? block.len : sizeof cmdline - 1u] = '\0';
    while (*p && argc < AOTC_MAX_ARGS) {
        while (*p == ' ') *p++ = '\0';
        if (!*p) break;
        argv_buf[argc++] = p;
        while (*p && *p != ' ') ++p;
    }
    if (argc == 0) {
        argv_buf[argc++] = (char *)"app";
    }
    argv_buf[argc] = 0;
    return argc;
}

void Reset_Handler(void) {
    int argc;
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    *(volatile uint32_t *)0xE000ED88u |= (0xFu << 20); /* CPACR: full access to CP10/CP11 (FPU, MVE) */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    memcpy(&__data_start__, &__data_load__, (size_t)((char *)&__data_end__ - (char *)&__data_start__));
    memset(&__bss_start__, 0, (size_t)((char *)&__bss_end__ - (char *)&__bss_start__));
    initialise_monitor_handles(); /* rdimon: semihosting stdin/stdout/stderr */
    __libc_init_array();
    argc = read_args();
    exit(main(argc, argv_buf));
}

/* -nostartfiles drops crti.o: the empty hooks __libc_init_array/__libc_fini_array call. */
void _init(void) {}
void _fini(void) {}

/* Cortex-M vector table: initial stack pointer, reset, 14 system exceptions. External
 * interrupts are not used by aotc; firmware with interrupts brings its own table. */
__attribute__((section(".isr_vector"), used)) void (*const aotc_vector_table[16])(void) = {
    (void (*)(void))(uintptr_t)&__stack_top, /* 0: initial SP */
    Reset_Handler,                           /* 1: Reset */
    Default_Handler,                         /* 2: NMI */
    Default_Handler,                         /* 3: HardFault */
    Default_Handler,                         /* 4: MemManage */
    Default_Handler,                         /* 5: BusFault */
    Default_Handler,                         /* 6: UsageFault */
    Default_Handler,                         /* 7: SecureFault (v8-M) */
    0, 0, 0,                                 /* 8-10: reserved */
    Default_Handler,                         /* 11: SVCall */
    Default_Handler,                         /* 12: DebugMonitor */
    0,                                       /* 13: reserved */
    Default_Handler,                         /* 14: PendSV */
    SysTick_Handler,                         /* 15: SysTick */
};
