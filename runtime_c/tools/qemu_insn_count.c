/* A qemu TCG plugin (plugin API version 1, as qemu 7.2 exports) that counts the guest instructions
 * executed and prints "insns: N" on stderr when qemu exits. Used by `aotc bench` on a board: the
 * same count as `-singlestep -d nochain,exec` (one log line per instruction) at normal TCG speed.
 * Debian ships no qemu-plugin.h, so the few entry points it uses are declared here.
 *
 * With the argument pcs=FILE it also writes, per translated block's start address, the instructions
 * executed in blocks starting there ("address count" lines, hex and decimal): `aotc bench --profile`
 * maps them to the image's functions (a block never spans two functions: each ends at a branch).
 *
 * With cycles=CORE it also estimates the cycles of a Cortex-M core ("cycles: N" on stderr, a third
 * column in the pcs= file), for memory with no wait states, from table-driven timing rules (each
 * rule's source is beside it below; docs/firmware.md "How the cycles are estimated" states them and
 * what is not modelled: caches, TCM and flash wait states, bus contention):
 *
 *   m4   Cortex-M4: the instruction timing table of Arm's Cortex-M4 TRM (DDI 0439) and its rules for
 *        neighbouring loads and stores, the address-generation stall and the pipeline refill P.
 *   m33  Cortex-M33: Arm publishes no cycle table for it; the M4's table (LLVM schedules the M33 with
 *        its Cortex-M4 model), with what its pipeline description changes: the address of a load or
 *        store is generated in the second of its three stages, so a single load or store issues in 1
 *        cycle (not 2, no pipelining rule) and an instruction that reads the register a load just
 *        loaded waits 1 (load-use); branches resolve in stage 2, P = 1. Not modelled: its dual issue
 *        of some 16-bit pairs (an overestimate where code has them).
 *   m7   Cortex-M7: an in-order dual-issue model (the M7 TRM DDI 0489's pipeline description and the
 *        issue rules and latencies of LLVM's Cortex-M7 scheduling model, ARMScheduleM7.td, from
 *        Arm): two instructions issue in a cycle unless the second reads a result not yet ready,
 *        or both need the one store port, MAC, FPU, branch or DSP/bitfield (slot 0 only) unit, or
 *        either is single-issue (LDM/STM, LDRD/STRD, TBB/TBH, divides, VLDM/VSTM, 64-bit VLDR/VSTR,
 *        barriers, MSR/MRS); results are ready after 1 cycle (ALU, word load), 2 (multiplies, byte
 *        and halfword loads, saturating ops), 3 (a VMOV to a core register); an address register is
 *        read a cycle earlier (+1), a multiply-accumulate's accumulator and a store's data a cycle
 *        later (-1); branches are
 *        predicted: a direct B/BL costs no refill, a conditional branch is predicted as it went the
 *        last time (not taken the first time) and costs P (default 4) when mispredicted, an indirect
 *        one (BX, POP/LDR of the PC, TBB) always P. Floating-point registers are not tracked.
 *   m55  Cortex-M55: the M4's table for scalar code (LLVM: "a lot like the M4/M33"), with two 16-bit
 *        instructions issued in one cycle when one of them is a MOV/ADD/SUB #imm, MOV, extend, IT, NOP or
 *        B and the second does not read the first's result (LLVM's M55 model); Helium (MVE)
 *        instructions take two beats of 64 bits each on one of three pipes (load/store, integer,
 *        multiply/float), 2 cycles, and an instruction on another pipe than the MVE instruction just
 *        before starts in its second beat (1 cycle: VLDR then VMLADAV overlap); gathers/scatters 4
 *        cycles; VPST, VPNOT, VCTP, DLS, WLS 1; a low-overhead loop's LE costs 1 + P when it is not
 *        the loop the core's one-entry loop cache holds (the last LE taken) and 0 when it is.
 *
 * Options: p=N (the refill of a taken or mispredicted branch; defaults m4 2, m33 1, m7 4, m55 2),
 * align=1 (m4: one more cycle when a branch lands on a 32-bit instruction that is not word aligned),
 * div=N (SDIV/UDIV, default 7: the TRMs give 2 to 12 by the operands), unaligned=0 (do not charge
 * unaligned loads and stores), detail=FILE (instructions and cycles per timing class),
 * ws=ORIGIN:SIZE:N (hex origin and size, N cycles: every data access in that range costs N more, an
 * assumed wait state per access of a slower memory; up to 8 ranges; docs/firmware.md "Memory pools"),
 * mark=ADDR (hex, up to 16) with marks=FILE: each time a block starting at a marked address runs, a line
 * "k insns cycles" goes to FILE (the mark's index in the order given, the counts so far): `aotc bench --nodes`
 * marks the model's run function and aotc_tap, which the generated code calls after each node, so the
 * counts between two marks are one node's.
 *
 *     cc -O2 -shared -fPIC -o libinsn_count.so runtime_c/tools/qemu_insn_count.c
 *     qemu-system-arm ... -plugin ./libinsn_count.so[,arg=pcs=FILE][,arg=cycles=m4] -kernel runner.elf */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_RW = 3 };

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                                  void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                                     uint64_t imm);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *), void *userdata);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
extern const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
extern size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, void (*cb)(unsigned int, void *),
                                                 enum qemu_plugin_cb_flags flags, void *userdata);
extern void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
                                             void (*cb)(unsigned int, qemu_plugin_meminfo_t, uint64_t, void *),
                                             enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
                                             void *userdata);
extern unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;

/* pcs=FILE: an open-addressing table of block start addresses, never resized (the counters'
 * addresses are baked into the translated code) */
#define SLOTS (1u << 18)
typedef struct {
    uint64_t pc;
    uint64_t count;
    uint64_t cycles;
    int used;
} slot;
static slot *table;
static char *pcs_path;

/* mark= and marks=: the marked block addresses and every time one ran, in order */
#define MAX_MARKS 16
static uint64_t mark_at[MAX_MARKS];
static unsigned n_marks;
static char *marks_path;
typedef struct {
    uint64_t k, insns, cycles;
} hit;
static hit *hits;
static size_t n_hits, cap_hits;

static slot *slot_for(uint64_t pc) {
    uint32_t h = (uint32_t)((pc >> 1) * 2654435761u) & (SLOTS - 1);
    while (table[h].used && table[h].pc != pc) h = (h + 1) & (SLOTS - 1);
    table[h].used = 1;
    table[h].pc = pc;
    return &table[h];
}

/* --- the timing models ---------------------------------------------------------------------------
 *
 * Each instruction is decoded (Thumb-2 encodings, ARMv7-M ARM chapter A5, FPv4-SP chapter A6; MVE and
 * the low-overhead branches of Armv8.1-M for the M55) into a timing class. Its cycles are base +
 * per_reg x N (N: registers or words a load/store multiple moves; halved, rounded up, where `half` is
 * set: the M7's 64-bit load/store path), plus P when it writes the PC (P: the pipeline refill). */
enum cls {
    ALU, MUL, DIV, LOAD, STORE, STORE_REG, DUAL, MULTI, BRANCH, TABLE_BRANCH, IT,
    FP, FP_MAC, FP_DIV, FP_MOV2, FP_LOAD, FP_STORE, FP_LOAD64, FP_STORE64, FP_MULTI, OTHER,
    MVE_LS, MVE_INT, MVE_MUL, MVE_GATHER, MVE_SYS, LOB, LE, NCLS
};
typedef struct {
    const char *name;
    unsigned base, per_reg, half;
} timing;
/* The Cortex-M4 (TRM DDI 0439, "Processor instruction timings" and the FPU's table): also the base of
 * the M33's and the M55's tables, which change the rows listed after it. */
static const timing TIMING_M4[NCLS] = {
    /* class            name            base per_reg   instructions (TRM cycles) */
    [ALU] =          {"alu",           1, 0, 0},  /* MOV ADD SUB logic shifts CMP extend bitfield saturate SIMD (1) */
    [MUL] =          {"mul",           1, 0, 0},  /* MUL MLA MLS SMULL UMULL SMLAL UMLAL SMLAD SMUAD SMLAxy ... (1) */
    [DIV] =          {"div",           7, 0, 0},  /* SDIV UDIV (2 to 12 by the operands; option div=N) */
    [LOAD] =         {"load",          2, 0, 0},  /* LDR LDRB LDRH LDRSB LDRSH LDREX (2; 1 pipelined after a load) */
    [STORE] =        {"store",         1, 0, 0},  /* STR STRB STRH with an immediate offset (always 1) */
    [STORE_REG] =    {"store_reg",     2, 0, 0},  /* STR STRB STRH with a register offset, STREX (2; 1 pipelined) */
    [DUAL] =         {"ldrd_strd",     1, 1, 0},  /* LDRD STRD (1+N, N=2; never pipelined) */
    [MULTI] =        {"ldm_stm",       1, 1, 0},  /* LDM STM PUSH POP (1+N) */
    [BRANCH] =       {"branch",        1, 0, 0},  /* B BL BX BLX CBZ CBNZ (1, +P when taken) */
    [TABLE_BRANCH] = {"tbb_tbh",       2, 0, 0},  /* TBB TBH (2+P) */
    [IT] =           {"it",            1, 0, 0},  /* IT (1) */
    [FP] =           {"fp",            1, 0, 0},  /* VADD VSUB VMUL VNMUL VABS VNEG VCMP VCVT VMOV VMRS VMSR (1;
                                                     VMOV core <-> single: 1 as measured on silicon) */
    [FP_MAC] =       {"fp_mac",        3, 0, 0},  /* VMLA VMLS VNMLA VNMLS VFMA VFMS VFNMA VFNMS (3) */
    [FP_DIV] =       {"fp_div_sqrt",  14, 0, 0},  /* VDIV VSQRT (14) */
    [FP_MOV2] =      {"fp_mov2",       2, 0, 0},  /* VMOV of two core registers (2) */
    [FP_LOAD] =      {"vldr",          2, 0, 0},  /* VLDR.32 (2; 1 pipelined after a load) */
    [FP_STORE] =     {"vstr",          2, 0, 0},  /* VSTR.32 (2; 1 pipelined after a load) */
    [FP_LOAD64] =    {"vldr64",        3, 0, 0},  /* VLDR.64 (3) */
    [FP_STORE64] =   {"vstr64",        3, 0, 0},  /* VSTR.64 (3) */
    [FP_MULTI] =     {"vldm_vstm",     1, 1, 0},  /* VLDM VSTM VPUSH VPOP (1+N words) */
    [OTHER] =        {"other",         1, 0, 0},  /* NOP hints barriers MRS MSR CPS SVC BKPT PLD (1) */
    /* Helium and the low-overhead loops (the M55 only; an M4 never decodes them) */
    [MVE_LS] =       {"mve_ldst",      2, 0, 0},  /* VLDR* VSTR* VLD2x VLD4x: two beats */
    [MVE_INT] =      {"mve_int",       2, 0, 0},  /* VADD VSUB VAND VMAX VSHR VQADD VMOVN VDUP ...: two beats */
    [MVE_MUL] =      {"mve_mul_fp",    2, 0, 0},  /* VMUL VMLA VMLADAV VMLAV VADDV VQDMULH VFMA VCMP ...: two beats */
    [MVE_GATHER] =   {"mve_gather",    4, 0, 0},  /* VLDR/VSTR with vector offsets: an element a cycle (4 words) */
    [MVE_SYS] =      {"mve_sys",       1, 0, 0},  /* VPST VPNOT VCTP */
    [LOB] =          {"dls_wls",       1, 0, 0},  /* DLS WLS DLSTP WLSTP LCTP */
    [LE] =           {"le",            0, 0, 0},  /* LE LETP: 0 when the loop cache holds the loop, else 1+P */
};
/* The other cores' rows that differ from the M4's (each with its source) */
typedef struct {
    unsigned cls;
    timing t;
} diff;
static const diff M33_DIFF[] = {
    /* the address is generated in the M33's second pipeline stage (the M3/M4: the third), so a single
     * load or store issues in 1 cycle, a dependent instruction right after a load waiting 1 more */
    {LOAD, {"load", 1, 0, 0}}, {STORE_REG, {"store_reg", 1, 0, 0}},
    {FP_LOAD, {"vldr", 1, 0, 0}}, {FP_STORE, {"vstr", 1, 0, 0}},
};
static const diff M7_DIFF[] = {
    /* the M7: cycles an instruction occupies the issue stage (latencies and pairing: m7_issue()); a
     * load/store multiple moves two registers a cycle on its 64-bit path (an assumption: no published
     * figure), divides and the FPU's divide and square root block the pipe (LLVM's M7 model: 7; 16) */
    {LOAD, {"load", 1, 0, 0}}, {STORE_REG, {"store_reg", 1, 0, 0}}, {DUAL, {"ldrd_strd", 1, 0, 0}},
    {MULTI, {"ldm_stm", 0, 1, 1}}, {TABLE_BRANCH, {"tbb_tbh", 2, 0, 0}}, {FP_MAC, {"fp_mac", 1, 0, 0}},
    {FP_DIV, {"fp_div_sqrt", 16, 0, 0}}, {FP_MOV2, {"fp_mov2", 1, 0, 0}}, {FP_LOAD, {"vldr", 1, 0, 0}},
    {FP_STORE, {"vstr", 1, 0, 0}}, {FP_LOAD64, {"vldr64", 1, 0, 0}}, {FP_STORE64, {"vstr64", 1, 0, 0}},
    {FP_MULTI, {"vldm_vstm", 0, 1, 1}},
};
enum { CORE_M4, CORE_M33, CORE_M7, CORE_M55 };
static const struct {
    const char *name;
    const diff *diffs;
    size_t n_diffs;
    unsigned refill; /* P by default */
} CORES[] = {
    [CORE_M4] = {"m4", NULL, 0, 2},
    [CORE_M33] = {"m33", M33_DIFF, sizeof M33_DIFF / sizeof *M33_DIFF, 1},
    [CORE_M7] = {"m7", M7_DIFF, sizeof M7_DIFF / sizeof *M7_DIFF, 4},
    [CORE_M55] = {"m55", NULL, 0, 2},
};
static int core = CORE_M4;
static timing TIMING[NCLS]; /* the chosen core's table: TIMING_M4 with its diffs */

static unsigned class_cycles(unsigned cls, unsigned n) {
    const timing *t = &TIMING[cls];
    return t->base + t->per_reg * (t->half ? (n + 1) / 2 : n);
}

/* The M4's rules between neighbours (TRM, "Load/store timings"):
 *  - pipelining: a single load or store (PIPE) right after a single load (LOAD1) takes one cycle
 *    less, unless the load's destination forms its address; nothing pipelines after a store;
 *  - address generation: a load or store whose address uses a register the instruction just before
 *    computed (a data-processing one, DP) stalls one cycle;
 *  - a branch taken (BRANCH_COND, decided by the address the next block starts at) adds P; an
 *    instruction that always writes the PC (REFILL) adds P;
 *  - an unaligned LDR/STR/LDRH/STRH (from the address it accessed) adds 1, a word on an odd address 2.
 * The M33 drops the pipelining rule (its loads take 1) and adds load-use; the M55 keeps them for scalar
 * code; the M7 has its own issue model (m7_issue). */
enum {
    LOAD1 = 1, PIPE = 2, MEM = 4, DP = 8, REFILL = 16, BRANCH_COND = 32, WIDE = 64, UNALIGNABLE = 128,
    NARROW = 256,   /* a byte or halfword load (the M7: its result a cycle later) */
    SINGLE = 512,   /* the M7 issues it alone */
    SLOT0 = 1024,   /* the M7's DSP/bitfield instructions: first of a pair only, one a cycle */
    DIRECT = 2048,  /* B, BL: the M7's branch target cache predicts them */
    TO_CORE = 4096, /* an FPU instruction writing a core register (the M7: ready 3 cycles later) */
    SAT = 8192,     /* SSAT USAT QADD QSUB QDADD QASX USAD8 ... (the M7: ready 2 cycles later) */
    DUAL16 = 16384, /* the M55 issues it beside another 16-bit instruction: MOV/ADD/SUB #imm, MOV, extend, IT, B */
};
enum { PIPE_NONE, PIPE_LS, PIPE_INT, PIPE_MUL }; /* the M55's Helium pipes */

typedef struct {
    uint8_t cls, n, pipe;
    uint16_t flags;
    uint16_t writes; /* core registers written (bit r) */
    uint16_t wb;     /* of them, a base register written back (ready at once on the M7) */
    uint16_t addr;   /* core registers the address is formed from */
    uint16_t reads;  /* core registers read (the address's included) */
    uint16_t late;   /* of them, read a cycle late on the M7: a multiply-accumulate's accumulator, a store's data */
} insn;

#define R(r) ((uint16_t)(1u << (r)))

static insn mk(unsigned cls, unsigned flags, uint16_t writes, uint16_t addr) {
    insn i = {(uint8_t)cls, 0, PIPE_NONE, (uint16_t)flags, writes, 0, addr, addr, 0};
    return i;
}
/* a register as an address or an operand: the PC (literal loads) is never computed by a neighbour */
static uint16_t A(unsigned r) { return r == 15 ? 0 : R(r); }
static insn with_reads(insn i, uint16_t reads) {
    i.reads |= reads & 0x7fff;
    return i;
}
static insn load1(unsigned rt, uint16_t addr, int unalignable) {
    if (rt == 15) return mk(LOAD, MEM | REFILL, 0, addr); /* LDR PC: 2+P */
    return mk(LOAD, LOAD1 | PIPE | MEM | (unalignable ? UNALIGNABLE : 0), R(rt), addr);
}
static insn store1(int reg_offset, uint16_t addr, int unalignable, unsigned rt) {
    insn i = mk(reg_offset ? STORE_REG : STORE, PIPE | MEM | (unalignable ? UNALIGNABLE : 0), 0, addr);
    i.late = (uint16_t)(A(rt) & ~addr);
    return with_reads(i, A(rt));
}
static insn multi(int load, unsigned rn, unsigned list, int writeback) {
    insn i = mk(MULTI, MEM | SINGLE, 0, A(rn));
    i.n = (uint8_t)__builtin_popcount(list);
    if (load) i.writes = (uint16_t)(list & 0x7fff);
    else i.reads |= (uint16_t)(list & 0x7fff);
    if (writeback) i.writes |= R(rn), i.wb = R(rn);
    if (load && (list & 0x8000)) i.flags |= REFILL; /* POP/LDM with the PC: 1+N+P */
    return i;
}
static insn dp(unsigned rd, uint16_t reads) { /* a data-processing instruction writing rd (15: none, or a branch) */
    return with_reads(rd == 15 ? mk(ALU, REFILL, 0, 0) : mk(ALU, DP, R(rd), 0), reads);
}

static insn decode16(unsigned h) {
    unsigned lo = h & 7, rd8 = (h >> 8) & 7, r3 = (h >> 3) & 7, r6 = (h >> 6) & 7;
    if ((h >> 14) == 0) { /* shift (immediate), add, subtract, move, compare */
        unsigned top = h >> 11;
        if (top < 3) return with_reads(mk(ALU, DP, R(lo), 0), R(r3));
        if (top == 3) /* ADD/SUB register or 3-bit immediate */
            return with_reads(mk(ALU, DP | ((h & 0x400) ? DUAL16 : 0), R(lo), 0),
                              (uint16_t)(R(r3) | ((h & 0x400) ? 0 : R(r6))));
        if (top == 5) return with_reads(mk(ALU, DP, 0, 0), R(rd8)); /* CMP immediate */
        return with_reads(mk(ALU, DP | DUAL16, R(rd8), 0), top == 4 ? 0 : R(rd8)); /* MOV, ADD, SUB #imm8 */
    }
    if ((h >> 10) == 0x10) { /* data processing (register) */
        unsigned op = (h >> 6) & 15;
        return with_reads(mk(op == 13 ? MUL : ALU, DP, (op == 8 || op == 10 || op == 11) ? 0 : R(lo), 0),
                          (uint16_t)(R(lo) | R(r3)));
    }
    if ((h >> 10) == 0x11) { /* special data processing, BX, BLX */
        unsigned op = (h >> 8) & 3, rd = ((h >> 4) & 8) | lo, rm = (h >> 3) & 15;
        if (op == 3) return with_reads(mk(BRANCH, REFILL, (h & 0x80) ? R(14) : 0, 0), A(rm));
        if (op == 1) return with_reads(mk(ALU, DP, 0, 0), (uint16_t)(A(rd) | A(rm)));
        if (op == 2 && rd != 15) return with_reads(mk(ALU, DP | DUAL16, R(rd), 0), A(rm)); /* MOV */
        return dp(rd, (uint16_t)(A(rm) | (op == 0 ? A(rd) : 0)));
    }
    if ((h >> 11) == 9) return load1(rd8, 0, 0); /* LDR (literal) */
    if ((h >> 12) == 5) { /* load/store, register offset */
        unsigned op = (h >> 9) & 7;
        uint16_t addr = R(r6) | R(r3);
        int wide = op == 0 || op == 1 || op == 4 || op == 5 || op == 7;
        insn i = op < 3 ? store1(1, addr, wide, lo) : load1(lo, addr, wide);
        if (op == 3 || op == 6 || op == 7) i.flags |= NARROW; /* LDRSB LDRB LDRSH (LDRH: 5) */
        if (op == 5) i.flags |= NARROW;
        return i;
    }
    if ((h >> 13) == 3 || (h >> 12) == 8) { /* LDR/STR word and byte, LDRH/STRH, immediate offset */
        int wide = (h >> 12) != 7;
        insn i = (h & 0x800) ? load1(lo, R(r3), wide) : store1(0, R(r3), wide, lo);
        if ((h >> 12) != 6) i.flags |= NARROW;
        return i;
    }
    if ((h >> 12) == 9) return (h & 0x800) ? load1(rd8, R(13), 1) : store1(0, R(13), 1, rd8); /* SP-relative */
    if ((h >> 12) == 10) return with_reads(mk(ALU, DP, R(rd8), 0), (h & 0x800) ? R(13) : 0); /* ADR, ADD Rd, SP */
    if ((h >> 12) == 11) { /* miscellaneous */
        if ((h & 0xf500) == 0xb100) return with_reads(mk(BRANCH, BRANCH_COND, 0, 0), R(lo)); /* CBZ, CBNZ */
        if ((h & 0xff00) == 0xb000) return with_reads(mk(ALU, DP, R(13), 0), R(13));           /* ADD/SUB SP, #imm */
        if ((h & 0xfe00) == 0xb400) return multi(0, 13, (h & 0xff) | ((h & 0x100) << 6), 1); /* PUSH (LR) */
        if ((h & 0xfe00) == 0xbc00) return multi(1, 13, (h & 0xff) | ((h & 0x100) << 7), 1); /* POP (PC) */
        if ((h & 0xff00) == 0xb200 || (h & 0xff00) == 0xba00) /* extend, REV */
            return with_reads(mk(ALU, DP | SLOT0 | ((h & 0xff00) == 0xb200 ? DUAL16 : 0), R(lo), 0), R(r3));
        if ((h & 0xff00) == 0xbf00 && (h & 15)) return mk(IT, DUAL16, 0, 0);
        if ((h & 0xff00) == 0xbf00) return mk(OTHER, DUAL16, 0, 0); /* NOP and hints */
        return mk(OTHER, SINGLE, 0, 0);                        /* BKPT, CPS */
    }
    if ((h >> 12) == 12) return multi((h >> 11) & 1, rd8, h & 0xff, !((h & 0x800) && (h & (1u << rd8))));
    if ((h >> 12) == 13) { /* B<c>; UDF and SVC */
        unsigned cond = (h >> 8) & 15;
        return cond >= 14 ? mk(OTHER, SINGLE, 0, 0) : mk(BRANCH, BRANCH_COND | DUAL16, 0, 0);
    }
    if ((h >> 11) == 0x1c) return mk(BRANCH, REFILL | DIRECT | DUAL16, 0, 0); /* B */
    return mk(OTHER, 0, 0, 0);
}

/* FPv4-SP / FPv5: the coprocessor space with coprocessor 10 (single) or 11 (double) */
static insn decode_fp(unsigned h1, unsigned h2) {
    unsigned op1 = (h1 >> 4) & 0x3f, rn = h1 & 15, rt = h2 >> 12, dbl = (h2 >> 8) & 1;
    if (((h2 >> 9) & 7) != 5) return mk(OTHER, 0, 0, 0);
    if ((op1 & 0x3e) == 0x04) { /* VMOV two core registers <-> two singles or a double */
        insn i = mk(FP_MOV2, (h1 & 0x10) ? DP | TO_CORE : 0, (h1 & 0x10) ? (uint16_t)(R(rt) | R(rn)) : 0, 0);
        return (h1 & 0x10) ? i : with_reads(i, (uint16_t)(A(rt) | A(rn)));
    }
    if ((op1 & 0x20) == 0) { /* extension register load/store */
        int load = h1 & 0x10, p = (h1 >> 8) & 1, w = (h1 >> 5) & 1;
        if (p && !w) /* VLDR, VSTR */
            return dbl ? mk(load ? FP_LOAD64 : FP_STORE64, MEM | SINGLE, 0, A(rn))
                       : mk(load ? FP_LOAD : FP_STORE, (load ? LOAD1 : 0) | PIPE | MEM, 0, A(rn));
        insn i = mk(FP_MULTI, MEM | SINGLE, w ? R(rn) : 0, A(rn)); /* VLDM VSTM VPUSH VPOP: N = words */
        i.wb = w ? R(rn) : 0;
        i.n = (uint8_t)(h2 & 0xff);
        return i;
    }
    if ((op1 & 0x30) == 0x20 && !(h2 & 0x10)) { /* data processing */
        unsigned opc = ((h1 >> 5) & 4) | ((h1 >> 4) & 3);
        static const uint8_t BY_OPC[8] = {FP_MAC, FP_MAC, FP, FP, FP_DIV, FP_MAC, FP_MAC, FP};
        if (opc == 7 && (h1 & 15) == 1 && ((h2 >> 6) & 3) == 3) return mk(FP_DIV, SINGLE, 0, 0); /* VSQRT */
        return mk(BY_OPC[opc], BY_OPC[opc] == FP_DIV ? SINGLE : 0, 0, 0);
    }
    if ((op1 & 0x30) == 0x20) { /* VMOV core <-> single, VMRS, VMSR */
        insn i = mk(FP, (h1 & 0x10) ? DP | TO_CORE : 0, (h1 & 0x10) && rt != 15 ? R(rt) : 0, 0);
        return (h1 & 0x10) ? i : with_reads(i, A(rt));
    }
    return mk(OTHER, 0, 0, 0);
}

/* Helium (MVE) on the M55, by the encodings of the Armv8.1-M ARM: which pipe an instruction's two beats
 * go down (LLVM's Cortex-M55 model, ARMScheduleM55.td, assigns them; a few rare ones land on another of
 * the three, which changes only whether a neighbour overlaps). 0: not MVE. */
static int decode_mve(unsigned h1, unsigned h2, insn *out) {
    unsigned cp = (h2 >> 8) & 15;
    if ((h1 & 0xef00) == 0xef00) { /* vector data processing: multiplies and float on the MUL/FP pipe */
        *out = mk(MVE_INT, 0, 0, 0);
        if (!(h1 & 0x80) && cp >= 9 && cp != 10) out->cls = MVE_MUL;
    } else if ((h1 & 0xee00) == 0xec00 && cp >= 14 && (h1 & 0x0120)) { /* loads and stores */
        *out = mk((h1 & 0xfe00) == 0xfc00 && cp == 15 ? MVE_GATHER : MVE_LS, MEM, 0, A(h1 & 15));
        if (h1 & 0x20) out->writes = out->wb = A(h1 & 15); /* post- or pre-indexed: the base written back */
    } else if ((h1 & 0xee00) == 0xec00 && cp >= 14) {    /* VMOV two lanes <-> two core registers */
        *out = mk(MVE_INT, 0, 0, 0);
    } else if ((h1 & 0xef00) == 0xee00 && cp >= 14) {
        if ((h1 & 0xffbf) == 0xfe31 && (h2 & 0x0fff) == 0x0f4d) *out = mk(MVE_SYS, 0, 0, 0); /* VPST, VPNOT */
        else if ((h1 & 0x80) && !(h2 & 0x41)) *out = mk(MVE_MUL, 0, 0, 0);  /* VMLADAV VMLAV VADDV VADDLV ... */
        else if (!(h1 & 0x80) && cp == 14 && ((h2 & 0x40) || !(h2 & 1)))
            *out = mk(MVE_MUL, 0, 0, 0);                                    /* by a scalar: VMUL VMLA VFMA VQRDMULH */
        else if ((h1 & 0xff81) == 0xfe01 && cp == 15 && (h2 & 1)) *out = mk(MVE_MUL, 0, 0, 0); /* VCMP, VPT */
        else *out = mk(MVE_INT, 0, 0, 0);                                   /* VMOVN VQMOVN VSHRN VMOVL ... */
    } else if ((h1 & 0xff90) == 0xee80 && (h2 & 0x0f5f) == 0x0b10) {
        *out = mk(MVE_INT, 0, 0, 0); /* VDUP */
    } else {
        return 0;
    }
    out->pipe = out->cls == MVE_LS || out->cls == MVE_GATHER ? PIPE_LS : out->cls == MVE_INT ? PIPE_INT : PIPE_MUL;
    return 1;
}

static insn decode32(unsigned h1, unsigned h2) {
    unsigned op1 = (h1 >> 11) & 3, op2 = (h1 >> 4) & 0x7f, rn = h1 & 15, rt = h2 >> 12, rd = (h2 >> 8) & 15;
    uint16_t rnm = (uint16_t)(A(rn) | A(h2 & 15));
    insn i;
    if (core == CORE_M55 && (op1 == 1 || op1 == 3) && (op2 & 0x40) && decode_mve(h1, h2, &i)) return i;
    if (op1 == 1) {
        if ((op2 & 0x64) == 0x00) return multi((h1 >> 4) & 1, rn, h2, (h1 >> 5) & 1); /* LDM STM PUSH POP */
        if ((op2 & 0x64) == 0x04) { /* load/store dual or exclusive, table branch */
            unsigned o1 = (h1 >> 7) & 3, o2 = (h1 >> 4) & 3, o3 = (h2 >> 4) & 15;
            if (o1 == 0 && o2 == 0) /* STREX */
                return with_reads(mk(STORE_REG, PIPE | MEM | SINGLE, R(rd), A(rn)), A(rt));
            if (o1 == 0 && o2 == 1) return load1(rt, A(rn), 0); /* LDREX */
            if (o1 == 1 && o2 == 0) /* STREXB/H */
                return with_reads(mk(STORE_REG, PIPE | MEM | SINGLE, R(h2 & 15), A(rn)), A(rt));
            if (o1 == 1 && o2 == 1) {
                if (o3 == 0 || o3 == 1) /* TBB TBH */
                    return mk(TABLE_BRANCH, MEM | REFILL | SINGLE, 0, (uint16_t)(A(rn) | R(h2 & 15)));
                i = load1(rt, A(rn), 0); /* LDREXB/H */
                i.flags |= NARROW;
                return i;
            }
            i = mk(DUAL, MEM | SINGLE, (h1 & 0x20) ? R(rn) : 0, A(rn)); /* LDRD STRD */
            i.wb = (h1 & 0x20) ? R(rn) : 0;
            i.n = 2;
            if (h1 & 0x10) i.writes |= R(rt) | R(rd);
            else i.reads |= (uint16_t)(A(rt) | A(rd)), i.late = (uint16_t)((A(rt) | A(rd)) & ~A(rn));
            return i;
        }
        if ((op2 & 0x60) == 0x20) /* data processing (shifted register); PKHBT PKHTB use the M7's slot 0 */
            return with_reads(mk(ALU, DP | ((h1 & 0x01e0) == 0x00c0 ? SLOT0 : 0), rd == 15 ? 0 : R(rd), 0), rnm);
        return decode_fp(h1, h2);
    }
    if (op1 == 2) {
        if (core == CORE_M55 && (h1 & 0xff80) == 0xf000 && (h2 & 0xf001) == 0xc001) { /* LE LETP; WLS WLSTP */
            if ((h1 & 0xffcf) == 0xf00f) return mk(LE, BRANCH_COND, R(14), 0);
            return with_reads(mk(LOB, BRANCH_COND, R(14), 0), A(rn));
        }
        if (core == CORE_M55 && (h1 & 0xff80) == 0xf000 && h2 == 0xe001) /* DLS DLSTP LCTP */
            return with_reads(mk(LOB, 0, R(14), 0), A(rn));
        if (core == CORE_M55 && (h1 & 0xffc0) == 0xf000 && h2 == 0xe801) { /* VCTP */
            i = mk(MVE_SYS, 0, 0, 0);
            i.pipe = PIPE_INT;
            return i;
        }
        if (!(h2 & 0x8000)) { /* data processing (immediate): SSAT USAT BFI BFC SBFX UBFX use the M7's slot 0 */
            unsigned op = op2 & 0x1f;
            int plain = (h1 & 0x0200) != 0;
            i = mk(ALU, DP | (plain && op >= 0x10 ? SLOT0 : 0) | (plain && (op & 0x15) == 0x10 ? SAT : 0),
                   rd == 15 ? 0 : R(rd), 0);
            if (plain && op == 0x04) return i;                                    /* MOVW */
            return with_reads(i, (uint16_t)(A(rn) | (plain && (op == 0x0c || op == 0x16) ? R(rd) : 0))); /* MOVT BFI */
        }
        switch ((h2 >> 12) & 5) { /* branches, misc control */
        case 0:
            if (((h1 >> 7) & 7) != 7) return mk(BRANCH, BRANCH_COND, 0, 0);  /* B<c> */
            if ((op2 & 0x7e) == 0x3e) return mk(OTHER, DP | SINGLE, R(rd), 0); /* MRS */
            if (op2 == 0x3b && ((h2 >> 4) & 15) == 6) return mk(OTHER, REFILL | SINGLE, 0, 0); /* ISB: 1+P */
            if (op2 == 0x3a && (h2 & 0x0700) == 0) return mk(OTHER, 0, 0, 0);   /* NOP.W and hints */
            return with_reads(mk(OTHER, SINGLE, 0, 0), A(rn));                   /* MSR, DSB, DMB */
        case 1: return mk(BRANCH, REFILL | DIRECT, 0, 0);                       /* B */
        case 5: return mk(BRANCH, REFILL | DIRECT, R(14), 0);                   /* BL */
        default: return mk(OTHER, SINGLE, 0, 0);
        }
    }
    /* op1 == 3 */
    if ((op2 & 0x71) == 0x00) { /* store single data item */
        unsigned o1 = (h1 >> 5) & 7;
        int reg = !(o1 & 4) && (h2 & 0x0fc0) == 0, wb = !(o1 & 4) && (h2 & 0x0900) == 0x0900;
        i = store1(reg, A(rn) | (reg ? R(h2 & 15) : 0), (o1 & 3) != 0, rt);
        if (wb) i.writes |= R(rn), i.wb = R(rn);
        return i;
    }
    if ((op2 & 0x61) == 0x01 && (op2 & 0x06) != 0x06) { /* load byte, halfword, word; PLD PLI */
        int reg = !(h1 & 0x80) && rn != 15 && (h2 & 0x0fc0) == 0;
        int wb = !(h1 & 0x80) && rn != 15 && (h2 & 0x0900) == 0x0900;
        int size = (op2 >> 1) & 3; /* 0 byte, 1 halfword, 2 word */
        if (rt == 15 && size != 2) return mk(OTHER, 0, 0, 0); /* PLD, PLI */
        i = load1(rt, A(rn) | (reg ? R(h2 & 15) : 0), size != 0);
        if (size != 2) i.flags |= NARROW;
        if (wb) i.writes |= R(rn), i.wb = R(rn);
        return i;
    }
    if ((op2 & 0x70) == 0x20) { /* data processing (register): shifts by a register, or the M7's slot-0 ops */
        unsigned o1 = (h1 >> 4) & 15, o2 = (h2 >> 4) & 15;
        int shift = !(o1 & 8) && o2 == 0;
        int sat = ((o1 & 8) && (o2 & 0xb) == 1) || ((o1 & 0xc) == 8 && (o2 & 0xc) == 8 && o1 == 8); /* Q16/8, QADD */
        return with_reads(mk(ALU, DP | (shift ? 0 : SLOT0) | (sat ? SAT : 0), R(rd), 0), rnm);
    }
    if ((op2 & 0x78) == 0x30) { /* multiply, multiply accumulate */
        i = with_reads(mk(MUL, DP, R(rd), 0), (uint16_t)(rnm | A(rt)));
        i.late = A(rt);
        return i;
    }
    if ((op2 & 0x78) == 0x38) { /* long multiply, divide */
        unsigned o1 = (h1 >> 4) & 7;
        if ((o1 == 1 || o1 == 3) && ((h2 >> 4) & 15) == 15) return with_reads(mk(DIV, DP | SINGLE, R(rd), 0), rnm);
        i = with_reads(mk(MUL, DP, R(rt) | R(rd), 0), rnm);
        if (o1 >= 4) i.late = (uint16_t)(A(rt) | A(rd)), i.reads |= i.late; /* SMLAL UMLAL SMLALD ... */
        return i;
    }
    if (op2 & 0x40) return decode_fp(h1, h2);
    return mk(OTHER, 0, 0, 0);
}

/* pipelining and address-generation between two neighbours, in cycles (the rules above; the M7's
 * issue model takes the place of these) */
static int between(const insn *prev, const insn *cur) {
    int d = 0;
    if (core == CORE_M7) return 0;
    if (core != CORE_M33 && (prev->flags & LOAD1) && (cur->flags & PIPE) && !(prev->writes & cur->addr) &&
        TIMING[cur->cls].base > 1)
        d -= 1;
    if (core == CORE_M33 && (prev->flags & LOAD1) &&  /* load-use (a store's data register is read later) */
        (prev->writes & (cur->cls == STORE || cur->cls == STORE_REG ? cur->addr : cur->reads)))
        d += 1;
    else if ((prev->flags & DP) && (cur->flags & MEM) && (prev->writes & cur->addr)) d += 1;
    /* the M55: an MVE instruction on another pipe than the one before starts in its second beat */
    if (prev->pipe && cur->pipe && prev->pipe != cur->pipe && prev->cls != MVE_SYS && cur->cls != MVE_SYS &&
        prev->cls != MVE_GATHER && cur->cls != MVE_GATHER)
        d -= 1;
    return d;
}

/* --- the M7's issue model ------------------------------------------------------------------------
 *
 * In order, two instructions a cycle at most, through one block from an idle pipe (registers ready,
 * no stall carried in from the block before: an optimistic cycle at most at a block's start). */
enum { U_STORE = 1, U_MAC = 2, U_FPU = 4, U_BRANCH = 8, U_SIMD = 16 }; /* units there is one of */

static unsigned m7_unit(const insn *i) {
    switch (i->cls) {
    case MUL: return U_MAC;
    case STORE: case STORE_REG: case FP_STORE: return U_STORE;
    case BRANCH: case TABLE_BRANCH: return U_BRANCH;
    case FP: case FP_MAC: case FP_DIV: case FP_MOV2: return U_FPU;
    case ALU: return (i->flags & SLOT0) ? U_SIMD : 0;
    default: return 0; /* ALU (two of them), loads (two ports), IT, NOP */
    }
}

/* cycles until the result of `i` can be read as an operand (LLVM's M7 model: ALU and word loads 1,
 * multiplies and byte/halfword loads 2, FPU to a core register 3) */
static int m7_latency(const insn *i) {
    if (i->flags & TO_CORE) return 3;
    if (i->cls == MUL || (i->flags & SAT)) return 2;
    if ((i->cls == LOAD || i->cls == DUAL || i->cls == MULTI) && (i->flags & NARROW)) return 2;
    return 1;
}

typedef struct {
    int cycle, n_group, busy; /* the current issue cycle, instructions issued in it, the pipe busy until */
    unsigned units, single;   /* units taken in the current cycle; a single-issue instruction took it */
    int ready[16], issued[16];
} m7_state;

static void m7_reset(m7_state *s) {
    int r;
    memset(s, 0, sizeof *s);
    for (r = 0; r < 16; ++r) s->issued[r] = -1;
}

/* issue `i` after the instructions before it; returns the cycle it issues in */
static int m7_issue(m7_state *s, const insn *i) {
    int need = s->busy > s->cycle ? s->busy : s->cycle, r, t;
    unsigned unit = m7_unit(i);
    int single = (i->flags & SINGLE) != 0;
    for (r = 0; r < 15; ++r) {
        if (!(i->reads & R(r))) continue;
        if (i->addr & R(r)) t = s->ready[r] + 1;         /* an address is formed in EX1, a cycle early */
        else if (i->late & R(r)) t = s->ready[r] - 1;    /* an accumulator or a store's data, a cycle late */
        else t = s->ready[r];
        if (t <= s->issued[r]) t = s->issued[r] + 1;     /* never beside what computes it */
        if (t > need) need = t;
    }
    if (need == s->cycle && s->n_group == 1 && !single && !s->single && !(i->flags & SLOT0) && !(s->units & unit)) {
        s->n_group = 2; /* pairs with the instruction before */
    } else if (need == s->cycle && s->n_group == 0) {
        s->n_group = 1;
    } else {
        s->cycle = need > s->cycle ? need : s->cycle + 1;
        if (s->busy > s->cycle) s->cycle = s->busy;
        s->n_group = 1, s->units = 0, s->single = 0;
    }
    s->units |= unit;
    s->single |= (unsigned)single;
    if (single) { /* alone in its cycle, and the pipe busy for its cycles */
        s->n_group = 2;
        s->busy = s->cycle + (int)class_cycles(i->cls, i->n);
        if (s->busy <= s->cycle) s->busy = s->cycle + 1;
    }
    for (r = 0; r < 15; ++r) {
        if (!(i->writes & R(r))) continue;
        s->ready[r] = s->cycle + ((i->wb & R(r)) ? 0 : m7_latency(i));
        s->issued[r] = (i->wb & R(r)) ? s->cycle - 1 : s->cycle;
    }
    return s->cycle;
}

static int m7_end(const m7_state *s) { /* cycles of the block so far */
    int end = s->n_group ? s->cycle + 1 : s->cycle;
    return s->busy > end ? s->busy : end;
}

enum { TAKEN = NCLS, PIPELINED, AGU_STALL, UNALIGNED, WAIT, OVERLAP, PAIRED, NROWS }; /* detail= rows past classes */

/* one translated block: its cycles and what its neighbours' rules need to know of it */
typedef struct block {
    uint64_t vaddr, fallthrough, last_pc;
    uint64_t cycles;     /* its instructions' cycles, the rules between them included */
    uint64_t execs;      /* how many times it ran (detail=) */
    slot *slot;          /* pcs= */
    insn first, last;
    uint8_t first_wide_unaligned;
    uint8_t taken_before; /* the M7: how its final conditional branch went the last time (its prediction) */
    uint8_t tail_pipe;    /* the M55: the pipe of its last MVE instruction, when only an LE follows it */
    uint32_t rows[NROWS][2]; /* instructions and cycles per class and rule, one execution */
    struct block *next_block;
} block;

static int estimate, align_penalty, charge_unaligned = 1, refill_given;
/* ws=: address ranges whose data accesses each cost `cycles` more (wait states, assumed) */
#define MAX_WAIT_RANGES 8
static struct { uint64_t origin, size; unsigned cycles; } waits[MAX_WAIT_RANGES];
static unsigned n_waits;
static unsigned refill = 2;
static uint64_t cycles, dyn[NROWS][2]; /* dyn: the rules decided at run time (detail=) */
static uint64_t loop_cache;            /* the M55: the address of the LE its loop cache holds (0: none) */
static block *blocks, *prev_block;
static char *detail_path;

static void charge(block *to, unsigned row, int64_t n) {
    cycles = (uint64_t)((int64_t)cycles + n);
    dyn[row][0]++;
    dyn[row][1] = (uint64_t)((int64_t)dyn[row][1] + n);
    if (to->slot) to->slot->cycles = (uint64_t)((int64_t)to->slot->cycles + n);
}

static void on_block(unsigned int vcpu, void *userdata) {
    block *b = userdata;
    uint64_t c = b->cycles;
    (void)vcpu;
    if (prev_block != NULL) {
        block *p = prev_block;
        int taken = b->vaddr != p->fallthrough;
        int cond_taken = (p->last.flags & BRANCH_COND) && taken;
        int d = between(&p->last, &b->first);
        uint64_t extra = 0;
        if (p->last.cls == LE) { /* the M55's loop end: free when the loop cache holds this loop */
            int hit = loop_cache == p->last_pc;
            if (!hit) extra += taken ? 1 + refill : 1;
            if (taken) loop_cache = p->last_pc;
            if (hit && p->tail_pipe && b->first.pipe && p->tail_pipe != b->first.pipe && b->first.cls != MVE_SYS &&
                b->first.cls != MVE_GATHER)
                d -= 1; /* the next turn's first MVE instruction overlaps the last one's second beat */
        } else if (core == CORE_M7 && (p->last.flags & BRANCH_COND)) { /* predicted as it went the last time */
            if (taken != p->taken_before) extra += refill;
            p->taken_before = (uint8_t)taken;
        } else if (cond_taken) {
            extra += refill;
        }
        if (cond_taken && core == CORE_M4 && align_penalty && b->first_wide_unaligned) extra += 1;
        if ((p->last.flags & REFILL) && core == CORE_M4 && align_penalty && b->first_wide_unaligned) extra += 1;
        if (core == CORE_M7 || p->last.cls == LE) d = d < 0 ? d : 0; /* no neighbour rule across a branch */
        if (extra) charge(p, TAKEN, (int64_t)extra); /* the branch's cycles: charged to the block it ends */
        if (d) {
            c = (uint64_t)((int64_t)c + d);
            dyn[d < 0 ? (b->first.pipe ? OVERLAP : PIPELINED) : AGU_STALL][0]++;
            dyn[d < 0 ? (b->first.pipe ? OVERLAP : PIPELINED) : AGU_STALL][1] += (uint64_t)(d < 0 ? -d : d);
        }
    }
    b->execs++;
    cycles += c;
    if (b->slot) b->slot->cycles += c;
    prev_block = b;
}

/* unaligned LDR/STR/LDRH/STRH: a halfword-aligned word or an odd halfword +1, a byte-aligned word +2 */
static void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata) {
    unsigned size = 1u << qemu_plugin_mem_size_shift(info);
    (void)vcpu;
    if (size > 1 && (vaddr & (size - 1))) charge(userdata, UNALIGNED, (size == 4 && (vaddr & 1)) ? 2 : 1);
}

/* ws=: a data access in a range with wait states */
static void on_wait_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata) {
    unsigned k;
    (void)vcpu;
    (void)info;
    for (k = 0; k < n_waits; ++k)
        if (vaddr - waits[k].origin < waits[k].size) {
            charge(userdata, WAIT, waits[k].cycles);
            return;
        }
}

static void estimate_block(struct qemu_plugin_tb *tb, size_t n, slot *s) {
    block *b = calloc(1, sizeof *b);
    insn prev = mk(OTHER, 0, 0, 0);
    unsigned it_left = 0, last_pipe = PIPE_NONE;
    int prev_narrow = 0, pair_free = 1; /* the M55's 16-bit pairs: the one before 16-bit, not the second of a pair */
    m7_state m7;
    int m7_before = 0;
    size_t k;
    if (b == NULL) return;
    m7_reset(&m7);
    b->vaddr = qemu_plugin_tb_vaddr(tb);
    b->slot = s;
    for (k = 0; k < n; ++k) {
        struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, k);
        const uint8_t *d = qemu_plugin_insn_data(qi);
        unsigned h1 = d[0] | (unsigned)d[1] << 8;
        /* the width from the first halfword: qemu 7.2 can report 6 bytes for an instruction before a page
         * boundary (it read the next halfword to see whether that one crosses) */
        size_t size = h1 >= 0xe800 && qemu_plugin_insn_size(qi) >= 4 ? 4 : 2;
        insn i = size == 4 ? decode32(h1, d[2] | (unsigned)d[3] << 8) : decode16(h1);
        unsigned base = class_cycles(i.cls, i.n);
        int c = (int)base;
        if (size == 4) i.flags |= WIDE;
        if (it_left) { /* inside an IT block: a PC write is a conditional branch */
            --it_left;
            if (i.flags & REFILL) i.flags = (uint16_t)((i.flags & ~REFILL) | BRANCH_COND);
        }
        if (i.cls == IT) it_left = 4u - (unsigned)__builtin_ctz(h1 & 15);
        if (core == CORE_M7 && (i.flags & DIRECT)) i.flags = (uint16_t)(i.flags & ~REFILL); /* predicted */
        if (i.flags & REFILL) {
            c += (int)refill;
            b->rows[TAKEN][0]++;
            b->rows[TAKEN][1] += refill;
        }
        b->rows[i.cls][0]++;
        b->rows[i.cls][1] += base;
        if (core == CORE_M7) { /* the issue model decides: what the block took before and after it */
            int end;
            m7_issue(&m7, &i);
            end = m7_end(&m7);
            c = end - m7_before + ((i.flags & REFILL) ? (int)refill : 0);
            if (end - m7_before != (int)base) { /* paired (< base) or stalled (> base) */
                int delta = end - m7_before - (int)base;
                b->rows[delta < 0 ? PIPELINED : AGU_STALL][0]++;
                b->rows[delta < 0 ? PIPELINED : AGU_STALL][1] += (uint32_t)(delta < 0 ? -delta : delta);
            }
            m7_before = end;
        } else if (k == 0) {
            b->first_wide_unaligned = size == 4 && (b->vaddr & 2);
        } else {
            int d = between(&prev, &i);
            if (core == CORE_M55 && pair_free && prev_narrow && size == 2 && ((prev.flags | i.flags) & DUAL16) &&
                !(prev.writes & i.reads)) { /* two 16-bit instructions in a cycle: the second's cycle saved */
                c -= 1;
                b->rows[PAIRED][0]++, b->rows[PAIRED][1]++;
                pair_free = 0;
            } else {
                pair_free = 1;
            }
            c += d;
            if (d < 0) b->rows[i.pipe ? OVERLAP : PIPELINED][0]++, b->rows[i.pipe ? OVERLAP : PIPELINED][1]++;
            if (d > 0) b->rows[AGU_STALL][0]++, b->rows[AGU_STALL][1]++;
        }
        if (k == 0) b->first = i;
        b->cycles = (uint64_t)((int64_t)b->cycles + c);
        prev_narrow = size == 2;
        if (i.pipe) last_pipe = i.pipe;
        else if (i.cls != LE) last_pipe = PIPE_NONE;
        if (charge_unaligned && (i.flags & UNALIGNABLE))
            qemu_plugin_register_vcpu_mem_cb(qi, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, b);
        if (n_waits)
            qemu_plugin_register_vcpu_mem_cb(qi, on_wait_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, b);
        if (k + 1 == n) b->fallthrough = qemu_plugin_insn_vaddr(qi) + size, b->last_pc = qemu_plugin_insn_vaddr(qi);
        prev = i;
    }
    b->last = prev;
    b->tail_pipe = (uint8_t)(prev.cls == LE ? last_pipe : PIPE_NONE);
    b->next_block = blocks;
    blocks = b;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, b);
}

/* a marked block ran: the counts so far (its own block's included, as every mark's) */
static void on_mark(unsigned int vcpu, void *userdata) {
    (void)vcpu;
    if (n_hits == cap_hits) {
        hit *more = realloc(hits, (cap_hits = cap_hits ? 2 * cap_hits : 4096) * sizeof *hits);
        if (more == NULL) {
            fprintf(stderr, "insn_count: out of memory for marks\n");
            exit(1);
        }
        hits = more;
    }
    hits[n_hits].k = (uint64_t)(uintptr_t)userdata;
    hits[n_hits].insns = executed;
    hits[n_hits].cycles = cycles;
    ++n_hits;
}

/* each translated block adds its instruction count every time it runs */
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    const size_t n = qemu_plugin_tb_n_insns(tb);
    const uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
    slot *s = table != NULL ? slot_for(vaddr) : NULL;
    unsigned k;
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
    if (s != NULL) qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &s->count, n);
    if (estimate) estimate_block(tb, n, s);
    for (k = 0; k < n_marks; ++k)
        if (vaddr == mark_at[k])
            qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)k);
}

static void write_detail(void) {
    uint64_t rows[NROWS][2] = {{0}};
    const block *b;
    FILE *f = fopen(detail_path, "w");
    int r;
    if (f == NULL) {
        fprintf(stderr, "insn_count: cannot write %s\n", detail_path);
        return;
    }
    for (b = blocks; b != NULL; b = b->next_block)
        for (r = 0; r < NROWS; ++r) {
            rows[r][0] += b->execs * b->rows[r][0];
            rows[r][1] += b->execs * b->rows[r][1];
        }
    for (r = 0; r < NROWS; ++r) {
        static const char *const RULES[] = {"refill(+P)", "pipelined(-1)", "agu_stall(+1)", "unaligned(+1/+2)",
                                            "wait(ws=)", "mve_overlap(-1)", "dual_issued_16bit(-1)"};
        static const char *const M7_RULES[] = {"refill(+P)", "dual_issued(-1)", "stalled(+1)"};
        const char *rule = r < NCLS ? TIMING[r].name : core == CORE_M7 && r - NCLS < 3 ? M7_RULES[r - NCLS]
                                                                                       : RULES[r - NCLS];
        unsigned long long n = rows[r][0] + dyn[r][0], c = rows[r][1] + dyn[r][1];
        int show = n || (r >= NCLS && r != OVERLAP && r != PAIRED && (r != WAIT || n_waits));
        if (show)
            fprintf(f, "%s %llu %s%llu\n", rule, n,
                    r == PIPELINED || r == OVERLAP || r == PAIRED ? "-" : "", c);
    }
    fclose(f);
}

static void at_qemu_exit(qemu_plugin_id_t id, void *userdata) {
    (void)id;
    (void)userdata;
    fprintf(stderr, "insns: %llu\n", (unsigned long long)executed);
    if (estimate) fprintf(stderr, "cycles: %llu\n", (unsigned long long)cycles);
    if (estimate && detail_path != NULL) write_detail();
    if (marks_path != NULL) {
        FILE *f = fopen(marks_path, "w");
        size_t i;
        if (f == NULL) {
            fprintf(stderr, "insn_count: cannot write %s\n", marks_path);
        } else {
            for (i = 0; i < n_hits; ++i)
                fprintf(f, "%llu %llu %llu\n", (unsigned long long)hits[i].k, (unsigned long long)hits[i].insns,
                        (unsigned long long)hits[i].cycles);
            fclose(f);
        }
    }
    if (table != NULL) {
        FILE *f = fopen(pcs_path, "w");
        uint32_t i;
        if (f == NULL) {
            fprintf(stderr, "insn_count: cannot write %s\n", pcs_path);
            return;
        }
        for (i = 0; i < SLOTS; ++i)
            if (table[i].used && table[i].count) {
                fprintf(f, "%llx %llu", (unsigned long long)table[i].pc, (unsigned long long)table[i].count);
                if (estimate) fprintf(f, " %llu", (unsigned long long)table[i].cycles);
                fputc('\n', f);
            }
        fclose(f);
    }
}

/* the chosen core's table: the M4's with the core's rows */
static void choose_core(int which, int div) {
    size_t k;
    core = which;
    memcpy(TIMING, TIMING_M4, sizeof TIMING);
    for (k = 0; k < CORES[which].n_diffs; ++k) TIMING[CORES[which].diffs[k].cls] = CORES[which].diffs[k].t;
    if (div > 0) TIMING[DIV].base = (unsigned)div;
    if (!refill_given) refill = CORES[which].refill;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
                                                               int argc, char **argv) {
    int i, which = CORE_M4, div = 0;
    (void)info;
    for (i = 0; i < argc; ++i) {
        if (strncmp(argv[i], "pcs=", 4) == 0) {
            pcs_path = argv[i] + 4;
            table = calloc(SLOTS, sizeof *table);
            if (table == NULL) return -1;
        } else if (strncmp(argv[i], "cycles=", 7) == 0) {
            int k, found = 0;
            for (k = 0; k < (int)(sizeof CORES / sizeof *CORES); ++k)
                if (strcmp(argv[i] + 7, CORES[k].name) == 0) which = k, found = 1;
            if (!found) {
                fprintf(stderr, "insn_count: unknown core %s (m4, m33, m7, m55)\n", argv[i] + 7);
                return -1;
            }
            estimate = 1;
        } else if (strncmp(argv[i], "p=", 2) == 0) {
            refill = (unsigned)atoi(argv[i] + 2);
            refill_given = 1;
        } else if (strncmp(argv[i], "div=", 4) == 0) {
            div = atoi(argv[i] + 4);
        } else if (strncmp(argv[i], "align=", 6) == 0) {
            align_penalty = atoi(argv[i] + 6) != 0;
        } else if (strncmp(argv[i], "unaligned=", 10) == 0) {
            charge_unaligned = atoi(argv[i] + 10) != 0;
        } else if (strncmp(argv[i], "ws=", 3) == 0) {
            unsigned long long origin, size;
            unsigned n;
            if (n_waits == MAX_WAIT_RANGES || sscanf(argv[i] + 3, "%llx:%llx:%u", &origin, &size, &n) != 3) {
                fprintf(stderr, "insn_count: bad or too many ws= ranges: %s\n", argv[i]);
                return -1;
            }
            waits[n_waits].origin = origin, waits[n_waits].size = size, waits[n_waits].cycles = n;
            ++n_waits;
        } else if (strncmp(argv[i], "detail=", 7) == 0) {
            detail_path = argv[i] + 7;
        } else if (strncmp(argv[i], "mark=", 5) == 0) {
            if (n_marks == MAX_MARKS) {
                fprintf(stderr, "insn_count: more than %d mark= addresses\n", MAX_MARKS);
                return -1;
            }
            mark_at[n_marks++] = strtoull(argv[i] + 5, NULL, 16) & ~1ull; /* a Thumb symbol's address: bit 0 set */
        } else if (strncmp(argv[i], "marks=", 6) == 0) {
            marks_path = argv[i] + 6;
        } else {
            fprintf(stderr, "insn_count: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    choose_core(which, div);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_qemu_exit, NULL);
    return 0;
}
