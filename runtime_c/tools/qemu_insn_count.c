/* A qemu TCG plugin (plugin API version 1, as qemu 7.2 exports) that counts the guest instructions
 * executed and prints "insns: N" on stderr when qemu exits. Used by `aotc bench` on a board: the
 * same count as `-singlestep -d nochain,exec` (one log line per instruction) at normal TCG speed.
 * Debian ships no qemu-plugin.h, so the few entry points it uses are declared here.
 *
 * With the argument pcs=FILE it also writes, per translated block's start address, the instructions
 * executed in blocks starting there ("address count" lines, hex and decimal): `aotc bench --profile`
 * maps them to the image's functions (a block never spans two functions: each ends at a branch).
 *
 *     cc -O2 -shared -fPIC -o libinsn_count.so runtime_c/tools/qemu_insn_count.c
 *     qemu-system-arm ... -plugin ./libinsn_count.so[,arg=pcs=FILE] -kernel runner.elf */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                                  void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                                     uint64_t imm);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *), void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;

/* pcs=FILE: an open-addressing table of block start addresses, never resized (the counters'
 * addresses are baked into the translated code) */
#define SLOTS (1u << 18)
typedef struct {
    uint64_t pc;
    uint64_t count;
    int used;
} slot;
static slot *table;
static char *pcs_path;

static uint64_t *counter_for(uint64_t pc) {
    uint32_t h = (uint32_t)((pc >> 1) * 2654435761u) & (SLOTS - 1);
    while (table[h].used && table[h].pc != pc) h = (h + 1) & (SLOTS - 1);
    table[h].used = 1;
    table[h].pc = pc;
    return &table[h].count;
}

/* each translated block adds its instruction count every time it runs */
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    const size_t n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
    if (table != NULL) qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                                                counter_for(qemu_plugin_tb_vaddr(tb)), n);
}

static void at_qemu_exit(qemu_plugin_id_t id, void *userdata) {
    (void)id;
    (void)userdata;
    fprintf(stderr, "insns: %llu\n", (unsigned long long)executed);
    if (table != NULL) {
        FILE *f = fopen(pcs_path, "w");
        uint32_t i;
        if (f == NULL) {
            fprintf(stderr, "insn_count: cannot write %s\n", pcs_path);
            return;
        }
        for (i = 0; i < SLOTS; ++i)
            if (table[i].used && table[i].count)
                fprintf(f, "%llx %llu\n", (unsigned long long)table[i].pc, (unsigned long long)table[i].count);
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
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_qemu_exit, NULL);
    return 0;
}
