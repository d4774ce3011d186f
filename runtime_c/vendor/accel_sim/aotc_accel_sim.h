/* accel_sim: the runtime of a simulated accelerator (docs/accel_sim-isa.md is the spec).
 *
 * Two layers, as a real NPU driver has:
 *   - the device: aotc_accel_sim_execute() runs a program (header, region table, 16-byte
 *     instructions, constants) against bound main-memory regions and a scratchpad, and
 *     counts cycles with the cost model whose parameters the program header carries;
 *   - the driver: aotc_accel_sim_invoke() binds DLTensors and the caller's workspace to the
 *     program's regions, checking each against the program's region table.
 * Everything a program or a tensor says is validated; any problem gives one of the error codes
 * below, never a crash. No OS, no malloc: the scratchpad is the first bytes of the workspace
 * the host planned for the call (see aotc_accel_sim_invoke), and the simulator's own state is
 * a few KiB on the stack. C99. */
#ifndef AOTC_ACCEL_SIM_H
#define AOTC_ACCEL_SIM_H

#include <stdint.h>

#include "dltensor.h"

/* --- error codes (0 = success); "AS" in the top bytes ------------------------------------- */
#define AOTC_ACCEL_SIM_E_TRUNCATED 0x41530001 /* the program is shorter than its header says */
#define AOTC_ACCEL_SIM_E_MAGIC 0x41530002     /* not an accel_sim program */
#define AOTC_ACCEL_SIM_E_VERSION 0x41530003   /* a format version this runtime does not know */
#define AOTC_ACCEL_SIM_E_HEADER 0x41530004    /* inconsistent header fields */
#define AOTC_ACCEL_SIM_E_CHECKSUM 0x41530005  /* CRC-32 mismatch: the program is corrupted */
#define AOTC_ACCEL_SIM_E_REGIONS 0x41530006   /* bad region table */
#define AOTC_ACCEL_SIM_E_BINDING 0x41530007   /* a tensor or buffer does not match its region */
#define AOTC_ACCEL_SIM_E_OPCODE 0x41530008    /* unknown opcode */
#define AOTC_ACCEL_SIM_E_OPERAND 0x41530009   /* bad flags, register index or geometry */
#define AOTC_ACCEL_SIM_E_DMA_BOUNDS 0x4153000a /* DMA outside its main-memory region */
#define AOTC_ACCEL_SIM_E_SPM_BOUNDS 0x4153000b /* scratchpad overflow */
#define AOTC_ACCEL_SIM_E_ALIGN 0x4153000c     /* misaligned scratchpad operand */
#define AOTC_ACCEL_SIM_E_OVERLAP 0x4153000d   /* an output overlaps an input it may not */
#define AOTC_ACCEL_SIM_E_NO_END 0x4153000e    /* the last instruction is not END */
#define AOTC_ACCEL_SIM_E_READONLY 0x4153000f  /* DMA store into a read-only region */
#define AOTC_ACCEL_SIM_E_WATCHDOG 0x41530010  /* the run would exceed the header's cycle limit */

/* --- the binary format (little-endian) -------------------------------------------------- */
#define AOTC_ACCEL_SIM_MAGIC 0x4d495341u /* "ASIM" */
#define AOTC_ACCEL_SIM_VERSION 1u
#define AOTC_ACCEL_SIM_HEADER_BYTES 64u
#define AOTC_ACCEL_SIM_REGION_BYTES 32u
#define AOTC_ACCEL_SIM_INSN_BYTES 16u
#define AOTC_ACCEL_SIM_MAX_REGIONS 64u
#define AOTC_ACCEL_SIM_MAX_NDIM 6u
#define AOTC_ACCEL_SIM_MAX_SPM (16u * 1024u * 1024u) /* largest scratchpad a header may declare */
#define AOTC_ACCEL_SIM_MAX_DIM 0xffffffu             /* largest value of any dimension register */

/* Region kinds (region table). */
enum { AOTC_ACCEL_SIM_CONST = 0, AOTC_ACCEL_SIM_INPUT = 1, AOTC_ACCEL_SIM_OUTPUT = 2, AOTC_ACCEL_SIM_SCRATCH = 3 };

/* Opcodes. */
enum {
    AOTC_ACCEL_SIM_OP_SET = 0x01,    /* reg[a + k] = (b, c, d)[k] for k < flags (1..3) */
    AOTC_ACCEL_SIM_OP_LOAD = 0x02,   /* DMA region a @ b -> scratchpad @ c, rows of d bytes */
    AOTC_ACCEL_SIM_OP_STORE = 0x03,  /* DMA scratchpad @ c -> region a @ b, rows of d bytes */
    AOTC_ACCEL_SIM_OP_CONV = 0x10,   /* MAC array: 2-D convolution, ifm @ b, weights @ c, ofm @ d */
    AOTC_ACCEL_SIM_OP_MATMUL = 0x11, /* MAC array: y[M,N] = a[M,K] . w[N,K]^T, a @ b, w @ c, y @ d */
    AOTC_ACCEL_SIM_OP_POOL = 0x20,   /* vector unit: max/average pooling, ifm @ b, ofm @ d */
    AOTC_ACCEL_SIM_OP_VADD = 0x30,   /* vector unit: y @ d = a @ b + b' @ c (broadcast strides) */
    AOTC_ACCEL_SIM_OP_VMUL = 0x31,
    AOTC_ACCEL_SIM_OP_VMAX = 0x32,
    AOTC_ACCEL_SIM_OP_VCLIP = 0x33,  /* y @ d = clamp(x @ b, ACT_MIN, ACT_MAX) */
    AOTC_ACCEL_SIM_OP_VREQ = 0x34,   /* int32 @ b -> 8 bits @ d, per-row params @ QUANT_ADDR */
    AOTC_ACCEL_SIM_OP_END = 0x3f
};

/* Instruction flags. */
#define AOTC_ACCEL_SIM_DTYPE_MASK 0x03u /* bits 0-1: 0 float32, 1 int8, 2 int32, 3 uint8 */
enum { AOTC_ACCEL_SIM_F32 = 0, AOTC_ACCEL_SIM_I8 = 1, AOTC_ACCEL_SIM_I32 = 2, AOTC_ACCEL_SIM_U8 = 3 };
#define AOTC_ACCEL_SIM_F_ACC 0x04u     /* CONV/MATMUL: add to the output already there */
#define AOTC_ACCEL_SIM_F_AVG 0x04u     /* POOL: average (else max) */
#define AOTC_ACCEL_SIM_F_BIAS 0x08u    /* CONV/MATMUL: add bias[oc] from BIAS_ADDR */
#define AOTC_ACCEL_SIM_F_CLIP 0x10u    /* CONV/MATMUL/VADD/VMUL/VMAX: clamp to [ACT_MIN, ACT_MAX] */
#define AOTC_ACCEL_SIM_F_REQUANT 0x20u /* CONV/MATMUL/POOL 8-bit: requantise (QUANT_ADDR); VADD: quantized add */
#define AOTC_ACCEL_SIM_F_FSCALE 0x40u  /* with REQUANT: float32 scales at QUANT_ADDR (else int32 mult, shift) */

/* Configuration registers (32-bit). Packed pairs hold y/h in the low 16 bits, x/w in the high. */
enum {
    AOTC_ACCEL_SIM_R_DMA_N1, AOTC_ACCEL_SIM_R_DMA_N2, AOTC_ACCEL_SIM_R_DMA_EXT_S1, AOTC_ACCEL_SIM_R_DMA_EXT_S2,
    AOTC_ACCEL_SIM_R_DMA_SPM_S1, AOTC_ACCEL_SIM_R_DMA_SPM_S2,
    AOTC_ACCEL_SIM_R_IFM_C, AOTC_ACCEL_SIM_R_IFM_H, AOTC_ACCEL_SIM_R_IFM_W,
    AOTC_ACCEL_SIM_R_OFM_C, AOTC_ACCEL_SIM_R_OFM_H, AOTC_ACCEL_SIM_R_OFM_W,
    AOTC_ACCEL_SIM_R_KERNEL, AOTC_ACCEL_SIM_R_STRIDE, AOTC_ACCEL_SIM_R_PAD, AOTC_ACCEL_SIM_R_DILATION,
    AOTC_ACCEL_SIM_R_GROUPS, AOTC_ACCEL_SIM_R_BIAS_ADDR, AOTC_ACCEL_SIM_R_QUANT_ADDR,
    AOTC_ACCEL_SIM_R_IFM_ZP, AOTC_ACCEL_SIM_R_OFM_ZP, AOTC_ACCEL_SIM_R_ACT_MIN, AOTC_ACCEL_SIM_R_ACT_MAX,
    AOTC_ACCEL_SIM_R_MM_M, AOTC_ACCEL_SIM_R_MM_N, AOTC_ACCEL_SIM_R_MM_K,
    AOTC_ACCEL_SIM_R_V_OUTER, AOTC_ACCEL_SIM_R_V_INNER, AOTC_ACCEL_SIM_R_VB_SO, AOTC_ACCEL_SIM_R_VB_SI,
    AOTC_ACCEL_SIM_NUM_REGS = 32
};

/* What a run did, from the cost model (all counts are data-independent). */
typedef struct {
    uint64_t cycles;          /* device cycles from the first issue to the last unit going idle */
    uint64_t dma_bytes;       /* bytes moved by LOAD and STORE */
    uint64_t macs;            /* multiply-accumulates of CONV and MATMUL */
    uint64_t int8_macs;       /* of which on 8-bit operands (four times as many per cycle) */
    uint64_t mac_slots;       /* MAC-array capacity used: cycles * array size, summed over MAC ops */
    uint64_t dma_busy_cycles; /* cycles each unit was busy */
    uint64_t mac_busy_cycles;
    uint64_t vec_busy_cycles;
    uint32_t spm_peak_bytes;  /* highest scratchpad byte touched, + 1 */
    uint32_t instructions;    /* instructions executed, END included */
} aotc_accel_sim_stats;

/* A main-memory buffer bound to a region. */
typedef struct {
    void *data;
    uint64_t bytes;
} aotc_accel_sim_buffer;

/* Check a program without running it: header, checksum, region table, every instruction's
 * opcode, flags and static operands. 0 or an error code. */
int32_t aotc_accel_sim_validate(const uint8_t *program, uint64_t program_bytes);

/* The device: validate `program`, then run it. `bound[k]` is region k + 1 (region 0, the
 * constants, is the program's own); `spm` is the scratchpad, `spm_bytes` >= the header's
 * spm_bytes. `stats` may be NULL. On error the outputs are unspecified. */
int32_t aotc_accel_sim_execute(const uint8_t *program, uint64_t program_bytes, const aotc_accel_sim_buffer *bound,
                               uint32_t n_bound, uint8_t *spm, uint64_t spm_bytes, aotc_accel_sim_stats *stats);

/* Bytes of workspace aotc_accel_sim_invoke needs for `program`: the scratchpad, then the scratch
 * region at the next multiple of 64. 0 when the header is unreadable. */
uint64_t aotc_accel_sim_workspace_bytes(const uint8_t *program, uint64_t program_bytes);

/* The driver: bind inputs, outputs (checked against the region table: dtype, shape, compact
 * layout) and the workspace (scratchpad first, then the scratch region), and execute. */
int32_t aotc_accel_sim_invoke(const uint8_t *program, uint64_t program_bytes, const DLTensor *const *inputs,
                              uint32_t n_inputs, DLTensor *const *outputs, uint32_t n_outputs, void *workspace,
                              uint64_t workspace_bytes, aotc_accel_sim_stats *stats);

#endif /* AOTC_ACCEL_SIM_H */
