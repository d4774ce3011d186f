/* asim_check: run accel_sim program files on zero-filled buffers; print each one's error code.
 *
 *   asim_check PROGRAM...      prints "<rc> <cycles> <file>" per program, rc in hex
 *
 * A tool for testing the runtime against corrupted programs: every program and every buffer
 * gets its own heap block of exactly its size, so AddressSanitizer reports any access past
 * one. Region and scratchpad sizes come from the (untrusted) header, capped at 16 MiB; a
 * program whose table cannot be read is still run, with no buffers. Not part of any bundle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotc_accel_sim.h"

#define CAP (16u * 1024u * 1024u)

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint8_t *read_file(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (uint8_t *)malloc(*size > 0 ? (size_t)*size : 1u);
    if (buf && *size > 0 && fread(buf, 1, (size_t)*size, f) != (size_t)*size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    int k;
    for (k = 1; k < argc; ++k) {
        aotc_accel_sim_buffer bound[AOTC_ACCEL_SIM_MAX_REGIONS];
        aotc_accel_sim_stats st;
        uint32_t n_bound = 0, r, spm_bytes = 0;
        uint8_t *spm;
        long size = 0;
        int32_t rc;
        uint8_t *prog = read_file(argv[k], &size);
        if (!prog) {
            fprintf(stderr, "asim_check: cannot read %s\n", argv[k]);
            return 2;
        }
        if (size >= (long)AOTC_ACCEL_SIM_HEADER_BYTES) {
            uint32_t n_regions = prog[32] | (prog[33] << 8);
            spm_bytes = rd32(prog + 24) < CAP ? rd32(prog + 24) : CAP;
            if (n_regions > AOTC_ACCEL_SIM_MAX_REGIONS) n_regions = AOTC_ACCEL_SIM_MAX_REGIONS;
            for (r = 1; r < n_regions; ++r) {
                const long at = (long)AOTC_ACCEL_SIM_HEADER_BYTES + (long)AOTC_ACCEL_SIM_REGION_BYTES * r;
                uint32_t bytes = at + 8 <= size ? rd32(prog + at + 4) : 0;
                if (bytes > CAP) bytes = CAP;
                bound[n_bound].data = calloc(bytes ? bytes : 1u, 1);
                bound[n_bound].bytes = bytes;
                n_bound++;
            }
        }
        spm = (uint8_t *)calloc(spm_bytes ? spm_bytes : 1u, 1);
        (void)aotc_accel_sim_validate(prog, (uint64_t)size);
        (void)aotc_accel_sim_workspace_bytes(prog, (uint64_t)size);
        rc = aotc_accel_sim_execute(prog, (uint64_t)size, bound, n_bound, spm, spm_bytes, &st);
        printf("%lx %lu %s\n", (unsigned long)(uint32_t)rc, (unsigned long)st.cycles, argv[k]);
        for (r = 0; r < n_bound; ++r) free(bound[r].data);
        free(spm);
        free(prog);
    }
    return 0;
}
