/* aotc board support for Arm Cortex-M (see startup.c). Used by the runner only: the model
 * library never calls the board. */
#ifndef AOTC_BOARD_H
#define AOTC_BOARD_H

#include <stdint.h>

/* Start the cycle counter; returns its kind: "dwt" or "systick". */
const char *aotc_board_timer_init(void);
/* Core clock cycles since aotc_board_timer_init(). */
uint64_t aotc_board_cycles(void);
/* Stop the program; qemu exits with `code` (semihosting SYS_EXIT_EXTENDED). */
void aotc_board_exit(int code);

#endif /* AOTC_BOARD_H */
