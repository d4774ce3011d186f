/* A qemu TCG plugin (plugin API version 1, as qemu 7.2 exports) that counts the guest instructions
 * executed and prints "insns: N" on stderr when qemu exits. Used by `aotc bench` on a board: the
 * same count as `-singlestep -d nochain,exec` (one log line per instruction) at normal TCG speed.
 * Debian ships no qemu-plugin.h, so the few entry points it uses are declared here.
 *
 * With the argument pcs=FILE it also writes, per translated block's start address, the instructions
 * executed in blocks starting there ("address count" lines, hex and decimal): `aotc bench --profile`
 * maps them to the image's functions (a block never spans two functions: each ends at a branch).
 *
 * With cycles=m4 it also estimates Cortex-M4 cycles ("cycles: N" on stderr, a third column in the
 * pcs= file) from the timing rules of Arm's Cortex-M4 Technical Reference Manual (the TIMING table
 * and the rules below it; docs/firmware.md states them and what is not modelled). Options: p=N (the
 * pipeline refill of a taken branch, default 2: the TRM gives 1 to 3), align=1 (one more cycle when a
 * branch lands on a 32-bit instruction that is not word aligned), div=N (SDIV/UDIV, default 7: the
 * TRM gives 2 to 12 by the operands), unaligned=0 (do not charge unaligned loads and stores),
 * detail=FILE (instructions and cycles per timing class), ws=ORIGIN:SIZE:N (hex origin and size, N
 * cycles: every data access in that range costs N more, an assumed wait state per access of a
 * slower memory; up to 8 ranges; docs/firmware.md "Memory pools").
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

static slot *slot_for(uint64_t pc) {
    uint32_t h = (uint32_t)((pc >> 1) * 2654435761u) & (SLOTS - 1);
    while (table[h].used && table[h].pc != pc) h = (h + 1) & (SLOTS - 1);
    table[h].used = 1;
    table[h].pc = pc;
    return &table[h];
}

/* --- the Cortex-M4 timing model ------------------------------------------------------------------
 *
 * Each instruction is decoded (Thumb-2 encodings, ARMv7-M ARM chapter A5, FPv4-SP chapter A6) into a
 * timing class. Its cycles are base + per_reg x N (N: registers or words a load/store multiple
 * moves), plus P when it writes the PC (P: the TRM's pipeline refill, 1 to 3; option p=N). */
enum cls {
    ALU, MUL, DIV, LOAD, STORE, STORE_REG, DUAL, MULTI, BRANCH, TABLE_BRANCH, IT,
    FP, FP_MAC, FP_DIV, FP_MOV2, FP_LOAD, FP_STORE, FP_LOAD64, FP_STORE64, FP_MULTI, OTHER, NCLS
};
static struct {
    const char *name;
    unsigned base, per_reg;
} TIMING[NCLS] = {
    /* class            name            base per_reg   instructions (TRM cycles) */
    [ALU] =          {"alu",           1, 0},  /* MOV ADD SUB logic shifts CMP extend bitfield saturate SIMD (1) */
    [MUL] =          {"mul",           1, 0},  /* MUL MLA MLS SMULL UMULL SMLAL UMLAL SMLAD SMUAD SMLAxy ... (1) */
    [DIV] =          {"div",           7, 0},  /* SDIV UDIV (2 to 12 by the operands; option div=N) */
    [LOAD] =         {"load",          2, 0},  /* LDR LDRB LDRH LDRSB LDRSH LDREX (2; 1 pipelined after a load) */
    [STORE] =        {"store",         1, 0},  /* STR STRB STRH with an immediate offset (always 1) */
    [STORE_REG] =    {"store_reg",     2, 0},  /* STR STRB STRH with a register offset, STREX (2; 1 pipelined) */
    [DUAL] =         {"ldrd_strd",     1, 1},  /* LDRD STRD (1+N, N=2; never pipelined) */
    [MULTI] =        {"ldm_stm",       1, 1},  /* LDM STM PUSH POP (1+N) */
    [BRANCH] =       {"branch",        1, 0},  /* B BL BX BLX CBZ CBNZ (1, +P when taken) */
    [TABLE_BRANCH] = {"tbb_tbh",       2, 0},  /* TBB TBH (2+P) */
    [IT] =           {"it",            1, 0},  /* IT (1) */
    [FP] =           {"fp",            1, 0},  /* VADD VSUB VMUL VNMUL VABS VNEG VCMP VCVT VMOV VMRS VMSR (1;
                                                  VMOV core <-> single: 1 as measured on silicon) */
    [FP_MAC] =       {"fp_mac",        3, 0},  /* VMLA VMLS VNMLA VNMLS VFMA VFMS VFNMA VFNMS (3) */
    [FP_DIV] =       {"fp_div_sqrt",  14, 0},  /* VDIV VSQRT (14) */
    [FP_MOV2] =      {"fp_mov2",       2, 0},  /* VMOV of two core registers (2) */
    [FP_LOAD] =      {"vldr",          2, 0},  /* VLDR.32 (2; 1 pipelined after a load) */
    [FP_STORE] =     {"vstr",          2, 0},  /* VSTR.32 (2; 1 pipelined after a load) */
    [FP_LOAD64] =    {"vldr64",        3, 0},  /* VLDR.64 (3) */
    [FP_STORE64] =   {"vstr64",        3, 0},  /* VSTR.64 (3) */
    [FP_MULTI] =     {"vldm_vstm",     1, 1},  /* VLDM VSTM VPUSH VPOP (1+N words) */
    [OTHER] =        {"other",         1, 0},  /* NOP hints barriers MRS MSR CPS SVC BKPT PLD (1) */
};
/* The rules between neighbours (TRM, "Load/store timings"):
 *  - pipelining: a single load or store (PIPE) right after a single load (LOAD1) takes one cycle
 *    less, unless the load's destination forms its address; nothing pipelines after a store;
 *  - address generation: a load or store whose address uses a register the instruction just before
 *    computed (a data-processing one, DP) stalls one cycle;
 *  - a branch taken (BRANCH_COND, decided by the address the next block starts at) adds P; an
 *    instruction that always writes the PC (REFILL) adds P;
 *  - an unaligned LDR/STR/LDRH/STRH (from the address it accessed) adds 1, a word on an odd address 2. */
enum { LOAD1 = 1, PIPE = 2, MEM = 4, DP = 8, REFILL = 16, BRANCH_COND = 32, WIDE = 64, UNALIGNABLE = 128 };

typedef struct {
    uint8_t cls, n, flags;
    uint16_t writes; /* core registers written (bit r) */
    uint16_t addr;   /* core registers the address is formed from */
} insn;

#define R(r) ((uint16_t)(1u << (r)))

static insn mk(unsigned cls, unsigned flags, uint16_t writes, uint16_t addr) {
    insn i = {(uint8_t)cls, 0, (uint8_t)flags, writes, addr};
    return i;
}
/* a register as an address: the PC (literal loads) is never computed by a neighbour */
static uint16_t A(unsigned r) { return r == 15 ? 0 : R(r); }
static insn load1(unsigned rt, uint16_t addr, int unalignable) {
    if (rt == 15) return mk(LOAD, MEM | REFILL, 0, addr); /* LDR PC: 2+P */
    return mk(LOAD, LOAD1 | PIPE | MEM | (unalignable ? UNALIGNABLE : 0), R(rt), addr);
}
static insn store1(int reg_offset, uint16_t addr, int unalignable) {
    return mk(reg_offset ? STORE_REG : STORE, PIPE | MEM | (unalignable ? UNALIGNABLE : 0), 0, addr);
}
static insn multi(int load, unsigned rn, unsigned list, int writeback) {
    insn i = mk(MULTI, MEM, 0, A(rn));
    i.n = (uint8_t)__builtin_popcount(list);
    if (load) i.writes = (uint16_t)(list & 0x7fff);
    if (writeback) i.writes |= R(rn);
    if (load && (list & 0x8000)) i.flags |= REFILL; /* POP/LDM with the PC: 1+N+P */
    return i;
}
static insn dp(unsigned rd) { /* a data-processing instruction writing rd (15: none, or a branch) */
    return rd == 15 ? mk(ALU, REFILL, 0, 0) : mk(ALU, DP, R(rd), 0);
}

static insn decode16(unsigned h) {
    unsigned lo = h & 7, rd8 = (h >> 8) & 7;
    if ((h >> 14) == 0) { /* shift (immediate), add, subtract, move, compare */
        unsigned top = h >> 11;
        if (top == 5) return mk(ALU, DP, 0, 0); /* CMP immediate */
        return mk(ALU, DP, top >= 4 ? R(rd8) : R(lo), 0);
    }
    if ((h >> 10) == 0x10) { /* data processing (register) */
        unsigned op = (h >> 6) & 15;
        insn i = mk(op == 13 ? MUL : ALU, DP, (op == 8 || op == 10 || op == 11) ? 0 : R(lo), 0);
        return i;
    }
    if ((h >> 10) == 0x11) { /* special data processing, BX, BLX */
        unsigned op = (h >> 8) & 3, rd = ((h >> 4) & 8) | lo;
        if (op == 3) return mk(BRANCH, REFILL, (h & 0x80) ? R(14) : 0, 0);
        if (op == 1) return mk(ALU, DP, 0, 0);
        return dp(rd);
    }
    if ((h >> 11) == 9) return load1(rd8, 0, 0); /* LDR (literal) */
    if ((h >> 12) == 5) { /* load/store, register offset */
        unsigned op = (h >> 9) & 7;
        uint16_t addr = R((h >> 6) & 7) | R((h >> 3) & 7);
        int wide = op == 0 || op == 1 || op == 4 || op == 5 || op == 7;
        return op < 3 ? store1(1, addr, wide) : load1(lo, addr, wide);
    }
    if ((h >> 13) == 3 || (h >> 12) == 8) { /* LDR/STR word and byte, LDRH/STRH, immediate offset */
        int wide = (h >> 12) != 7;
        return (h & 0x800) ? load1(lo, R((h >> 3) & 7), wide) : store1(0, R((h >> 3) & 7), wide);
    }
    if ((h >> 12) == 9) return (h & 0x800) ? load1(rd8, R(13), 1) : store1(0, R(13), 1); /* SP-relative */
    if ((h >> 12) == 10) return mk(ALU, DP, R(rd8), 0);                               /* ADR, ADD Rd, SP */
    if ((h >> 12) == 11) { /* miscellaneous */
        if ((h & 0xf500) == 0xb100) return mk(BRANCH, BRANCH_COND, 0, 0); /* CBZ, CBNZ */
        if ((h & 0xff00) == 0xb000) return mk(ALU, DP, R(13), 0);          /* ADD/SUB SP, #imm */
        if ((h & 0xfe00) == 0xb400) return multi(0, 13, (h & 0xff) | ((h & 0x100) << 6), 1); /* PUSH (LR) */
        if ((h & 0xfe00) == 0xbc00) return multi(1, 13, (h & 0xff) | ((h & 0x100) << 7), 1); /* POP (PC) */
        if ((h & 0xff00) == 0xb200 || (h & 0xff00) == 0xba00) return mk(ALU, DP, R(lo), 0); /* extend, REV */
        if ((h & 0xff00) == 0xbf00 && (h & 15)) return mk(IT, 0, 0, 0);
        return mk(OTHER, 0, 0, 0); /* NOP and hints, BKPT, CPS */
    }
    if ((h >> 12) == 12) return multi((h >> 11) & 1, rd8, h & 0xff, !((h & 0x800) && (h & (1u << rd8))));
    if ((h >> 12) == 13) { /* B<c>; UDF and SVC */
        unsigned cond = (h >> 8) & 15;
        return cond >= 14 ? mk(OTHER, 0, 0, 0) : mk(BRANCH, BRANCH_COND, 0, 0);
    }
    if ((h >> 11) == 0x1c) return mk(BRANCH, REFILL, 0, 0); /* B */
    return mk(OTHER, 0, 0, 0);
}

/* FPv4-SP: the coprocessor space with coprocessor 10 (single) or 11 (double) */
static insn decode_fp(unsigned h1, unsigned h2) {
    unsigned op1 = (h1 >> 4) & 0x3f, rn = h1 & 15, rt = h2 >> 12, dbl = (h2 >> 8) & 1;
    if (((h2 >> 9) & 7) != 5) return mk(OTHER, 0, 0, 0);
    if ((op1 & 0x3e) == 0x04) /* VMOV two core registers <-> two singles or a double */
        return mk(FP_MOV2, (h1 & 0x10) ? DP : 0, (h1 & 0x10) ? (uint16_t)(R(rt) | R(rn)) : 0, 0);
    if ((op1 & 0x20) == 0) { /* extension register load/store */
        int load = h1 & 0x10, p = (h1 >> 8) & 1, w = (h1 >> 5) & 1;
        if (p && !w) /* VLDR, VSTR */
            return dbl ? mk(load ? FP_LOAD64 : FP_STORE64, MEM, 0, A(rn))
                       : mk(load ? FP_LOAD : FP_STORE, (load ? LOAD1 : 0) | PIPE | MEM, 0, A(rn));
        insn i = mk(FP_MULTI, MEM, w ? R(rn) : 0, A(rn)); /* VLDM VSTM VPUSH VPOP: N = words */
        i.n = (uint8_t)(h2 & 0xff);
        return i;
    }
    if ((op1 & 0x30) == 0x20 && !(h2 & 0x10)) { /* data processing */
        unsigned opc = ((h1 >> 5) & 4) | ((h1 >> 4) & 3);
        static const uint8_t BY_OPC[8] = {FP_MAC, FP_MAC, FP, FP, FP_DIV, FP_MAC, FP_MAC, FP};
        if (opc == 7 && (h1 & 15) == 1 && ((h2 >> 6) & 3) == 3) return mk(FP_DIV, 0, 0, 0); /* VSQRT */
        return mk(BY_OPC[opc], 0, 0, 0);
    }
    if ((op1 & 0x30) == 0x20) /* VMOV core <-> single, VMRS, VMSR */
        return mk(FP, (h1 & 0x10) ? DP : 0, (h1 & 0x10) && rt != 15 ? R(rt) : 0, 0);
    return mk(OTHER, 0, 0, 0);
}

static insn decode32(unsigned h1, unsigned h2) {
    unsigned op1 = (h1 >> 11) & 3, op2 = (h1 >> 4) & 0x7f, rn = h1 & 15, rt = h2 >> 12, rd = (h2 >> 8) & 15;
    insn i;
    if (op1 == 1) {
        if ((op2 & 0x64) == 0x00) return multi((h1 >> 4) & 1, rn, h2, (h1 >> 5) & 1); /* LDM STM PUSH POP */
        if ((op2 & 0x64) == 0x04) { /* load/store dual or exclusive, table branch */
            unsigned o1 = (h1 >> 7) & 3, o2 = (h1 >> 4) & 3, o3 = (h2 >> 4) & 15;
            if (o1 == 0 && o2 == 0) return mk(STORE_REG, PIPE | MEM, R(rd), A(rn));          /* STREX */
            if (o1 == 0 && o2 == 1) return load1(rt, A(rn), 0);                                /* LDREX */
            if (o1 == 1 && o2 == 0) return mk(STORE_REG, PIPE | MEM, R(h2 & 15), A(rn));     /* STREXB/H */
            if (o1 == 1 && o2 == 1) {
                if (o3 == 0 || o3 == 1) return mk(TABLE_BRANCH, MEM | REFILL, 0, A(rn) | R(h2 & 15)); /* TBB TBH */
                return load1(rt, A(rn), 0);                                                     /* LDREXB/H */
            }
            i = mk(DUAL, MEM, (h1 & 0x20) ? R(rn) : 0, A(rn)); /* LDRD STRD */
            i.n = 2;
            if (h1 & 0x10) i.writes |= R(rt) | R(rd);
            return i;
        }
        if ((op2 & 0x60) == 0x20) return mk(ALU, DP, rd == 15 ? 0 : R(rd), 0); /* data processing (shifted reg) */
        return decode_fp(h1, h2);
    }
    if (op1 == 2) {
        if (!(h2 & 0x8000)) return mk(ALU, DP, rd == 15 ? 0 : R(rd), 0); /* data processing (immediate) */
        switch ((h2 >> 12) & 5) {                                        /* branches, misc control */
        case 0:
            if (((h1 >> 7) & 7) != 7) return mk(BRANCH, BRANCH_COND, 0, 0); /* B<c> */
            if ((op2 & 0x7e) == 0x3e) return mk(OTHER, DP, R(rd), 0);       /* MRS */
            if (op2 == 0x3b && ((h2 >> 4) & 15) == 6) return mk(OTHER, REFILL, 0, 0); /* ISB: 1+P */
            return mk(OTHER, 0, 0, 0);                                     /* MSR, hints, DSB, DMB */
        case 1: return mk(BRANCH, REFILL, 0, 0);                          /* B */
        case 5: return mk(BRANCH, REFILL, R(14), 0);                      /* BL */
        default: return mk(OTHER, 0, 0, 0);
        }
    }
    /* op1 == 3 */
    if ((op2 & 0x71) == 0x00) { /* store single data item */
        unsigned o1 = (h1 >> 5) & 7;
        int reg = !(o1 & 4) && (h2 & 0x0fc0) == 0, wb = !(o1 & 4) && (h2 & 0x0900) == 0x0900;
        i = store1(reg, A(rn) | (reg ? R(h2 & 15) : 0), (o1 & 3) != 0);
        if (wb) i.writes |= R(rn);
        return i;
    }
    if ((op2 & 0x61) == 0x01 && (op2 & 0x06) != 0x06) { /* load byte, halfword, word; PLD PLI */
        int reg = !(h1 & 0x80) && rn != 15 && (h2 & 0x0fc0) == 0;
        int wb = !(h1 & 0x80) && rn != 15 && (h2 & 0x0900) == 0x0900;
        int size = (op2 >> 1) & 3; /* 0 byte, 1 halfword, 2 word */
        if (rt == 15 && size != 2) return mk(OTHER, 0, 0, 0); /* PLD, PLI */
        i = load1(rt, A(rn) | (reg ? R(h2 & 15) : 0), size != 0);
        if (wb) i.writes |= R(rn);
        return i;
    }
    if ((op2 & 0x70) == 0x20) return mk(ALU, DP, R(rd), 0); /* data processing (register) */
    if ((op2 & 0x78) == 0x30) return mk(MUL, DP, R(rd), 0); /* multiply, multiply accumulate */
    if ((op2 & 0x78) == 0x38) {                            /* long multiply, divide */
        unsigned o1 = (h1 >> 4) & 7;
        if ((o1 == 1 || o1 == 3) && ((h2 >> 4) & 15) == 15) return mk(DIV, DP, R(rd), 0);
        return mk(MUL, DP, R(rt) | R(rd), 0);
    }
    if (op2 & 0x40) return decode_fp(h1, h2);
    return mk(OTHER, 0, 0, 0);
}

/* pipelining and address-generation between two neighbours, in cycles (TRM rules above) */
static int between(const insn *prev, const insn *cur) {
    int d = 0;
    if ((prev->flags & LOAD1) && (cur->flags & PIPE) && !(prev->writes & cur->addr) && TIMING[cur->cls].base > 1)
        d -= 1;
    if ((prev->flags & DP) && (cur->flags & MEM) && (prev->writes & cur->addr)) d += 1;
    return d;
}

enum { TAKEN = NCLS, PIPELINED, AGU_STALL, UNALIGNED, WAIT, NROWS }; /* detail= rows past the classes */

/* one translated block: its cycles and what its neighbours' rules need to know of it */
typedef struct block {
    uint64_t vaddr, fallthrough;
    uint64_t cycles;     /* its instructions' cycles, the rules between them included */
    uint64_t execs;      /* how many times it ran (detail=) */
    slot *slot;          /* pcs= */
    insn first, last;
    uint8_t first_wide_unaligned;
    uint32_t rows[NROWS][2]; /* instructions and cycles per class and rule, one execution */
    struct block *next_block;
} block;

static int estimate, align_penalty, charge_unaligned = 1;
/* ws=: address ranges whose data accesses each cost `cycles` more (wait states, assumed) */
#define MAX_WAIT_RANGES 8
static struct { uint64_t origin, size; unsigned cycles; } waits[MAX_WAIT_RANGES];
static unsigned n_waits;
static unsigned refill = 2;
static uint64_t cycles, dyn[NROWS][2]; /* dyn: the rules decided at run time (detail=) */
static block *blocks, *prev_block;
static char *detail_path;

static void on_block(unsigned int vcpu, void *userdata) {
    block *b = userdata;
    uint64_t c = b->cycles;
    (void)vcpu;
    if (prev_block != NULL) {
        block *p = prev_block;
        int cond_taken = (p->last.flags & BRANCH_COND) && b->vaddr != p->fallthrough;
        int jumped = cond_taken || (p->last.flags & REFILL);
        int d = between(&p->last, &b->first);
        uint64_t extra = 0;
        if (cond_taken) extra += refill, dyn[TAKEN][0]++;
        if (jumped && align_penalty && b->first_wide_unaligned) extra += 1;
        if (extra) { /* the branch's cycles: charged to the block it ends */
            cycles += extra;
            dyn[TAKEN][1] += extra;
            if (p->slot) p->slot->cycles += extra;
        }
        if (d) {
            c = (uint64_t)((int64_t)c + d);
            dyn[d < 0 ? PIPELINED : AGU_STALL][0]++;
            dyn[d < 0 ? PIPELINED : AGU_STALL][1]++;
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
    block *b = userdata;
    (void)vcpu;
    if (size > 1 && (vaddr & (size - 1))) {
        unsigned extra = (size == 4 && (vaddr & 1)) ? 2 : 1;
        cycles += extra;
        dyn[UNALIGNED][0]++;
        dyn[UNALIGNED][1] += extra;
        if (b->slot) b->slot->cycles += extra;
    }
}

/* ws=: a data access in a range with wait states */
static void on_wait_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *userdata) {
    block *b = userdata;
    unsigned k;
    (void)vcpu;
    (void)info;
    for (k = 0; k < n_waits; ++k)
        if (vaddr - waits[k].origin < waits[k].size) {
            cycles += waits[k].cycles;
            dyn[WAIT][0]++;
            dyn[WAIT][1] += waits[k].cycles;
            if (b->slot) b->slot->cycles += waits[k].cycles;
            return;
        }
}

static void estimate_block(struct qemu_plugin_tb *tb, size_t n, slot *s) {
    block *b = calloc(1, sizeof *b);
    insn prev = mk(OTHER, 0, 0, 0);
    unsigned it_left = 0;
    size_t k;
    if (b == NULL) return;
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
        unsigned c = TIMING[i.cls].base + TIMING[i.cls].per_reg * i.n;
        if (size == 4) i.flags |= WIDE;
        if (it_left) { /* inside an IT block: a PC write is a conditional branch */
            --it_left;
            if (i.flags & REFILL) i.flags = (uint8_t)((i.flags & ~REFILL) | BRANCH_COND);
        }
        if (i.cls == IT) it_left = 4u - (unsigned)__builtin_ctz(h1 & 15);
        if (i.flags & REFILL) {
            c += refill;
            b->rows[TAKEN][0]++;
            b->rows[TAKEN][1] += refill;
        }
        b->rows[i.cls][0]++;
        b->rows[i.cls][1] += TIMING[i.cls].base + TIMING[i.cls].per_reg * i.n;
        if (k == 0) {
            b->first = i;
            b->first_wide_unaligned = size == 4 && (b->vaddr & 2);
        } else {
            int d = between(&prev, &i);
            c = (unsigned)((int)c + d);
            if (d < 0) b->rows[PIPELINED][0]++, b->rows[PIPELINED][1]++;
            if (d > 0) b->rows[AGU_STALL][0]++, b->rows[AGU_STALL][1]++;
        }
        b->cycles += c;
        if (charge_unaligned && (i.flags & UNALIGNABLE))
            qemu_plugin_register_vcpu_mem_cb(qi, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, b);
        if (n_waits)
            qemu_plugin_register_vcpu_mem_cb(qi, on_wait_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, b);
        if (k + 1 == n) b->fallthrough = qemu_plugin_insn_vaddr(qi) + size;
        prev = i;
    }
    b->last = prev;
    b->next_block = blocks;
    blocks = b;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, b);
}

/* each translated block adds its instruction count every time it runs */
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    const size_t n = qemu_plugin_tb_n_insns(tb);
    slot *s = table != NULL ? slot_for(qemu_plugin_tb_vaddr(tb)) : NULL;
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
    if (s != NULL) qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &s->count, n);
    if (estimate) estimate_block(tb, n, s);
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
                                            "wait(ws=)"};
        unsigned long long n = rows[r][0] + dyn[r][0], c = rows[r][1] + dyn[r][1];
        if (n || (r >= NCLS && (r != WAIT || n_waits))) fprintf(f, "%s %llu %s%llu\n", r < NCLS ? TIMING[r].name : RULES[r - NCLS], n,
                                    r == PIPELINED ? "-" : "", c);
    }
    fclose(f);
}

static void at_qemu_exit(qemu_plugin_id_t id, void *userdata) {
    (void)id;
    (void)userdata;
    fprintf(stderr, "insns: %llu\n", (unsigned long long)executed);
    if (estimate) fprintf(stderr, "cycles: %llu\n", (unsigned long long)cycles);
    if (estimate && detail_path != NULL) write_detail();
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

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
                                                               int argc, char **argv) {
    int i;
    (void)info;
    for (i = 0; i < argc; ++i) {
        if (strncmp(argv[i], "pcs=", 4) == 0) {
            pcs_path = argv[i] + 4;
            table = calloc(SLOTS, sizeof *table);
            if (table == NULL) return -1;
        } else if (strcmp(argv[i], "cycles=m4") == 0) {
            estimate = 1;
        } else if (strncmp(argv[i], "p=", 2) == 0) {
            refill = (unsigned)atoi(argv[i] + 2);
        } else if (strncmp(argv[i], "div=", 4) == 0) {
            TIMING[DIV].base = (unsigned)atoi(argv[i] + 4);
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
        } else {
            fprintf(stderr, "insn_count: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_qemu_exit, NULL);
    return 0;
}
