/* accel_sim: device simulator and driver (spec: docs/accel_sim-isa.md).
 *
 * A program runs in two passes: a static one over the header, region table and every
 * instruction (aotc_accel_sim_validate), then execution, where each instruction's dynamic
 * operands (register values, scratchpad and main-memory extents) are checked before it
 * has any effect. Execution is sequential; the cost model times it as the hardware would run
 * it, with the DMA engine, the MAC array and the vector unit working concurrently, each
 * instruction waiting for the instructions whose scratchpad or main-memory bytes it touches.
 * All arithmetic on untrusted values is done in uint64_t with saturation, so no corrupted
 * program can overflow an index. Tensor data is read with memcpy (no alignment or aliasing
 * assumptions); the host is assumed little-endian, as the program format is. */
#include "aotc_accel_sim.h"

#include <string.h>

#define RING 32u      /* instructions the hazard tracker remembers */
#define MAX_QUEUE 16u /* largest queue_depth a header may declare */
#define SAT 0x10000000000ull /* 2^40: any extent this large is out of bounds anywhere */

enum { UNIT_DMA, UNIT_MAC, UNIT_VEC, N_UNITS };
enum { SPACE_SPM = 0 }; /* hazard address spaces: 0 the scratchpad, 1 + k main-memory region k */

typedef struct {
    uint8_t op, flags;
    uint16_t a;
    uint32_t b, c, d;
} insn_t;

typedef struct {
    uint32_t n_insns, const_bytes, spm_bytes, spm_capacity;
    uint16_t n_regions, dma_bw, dma_setup, mac_rows, mac_cols, vec_lanes, op_setup, queue_depth;
    uint64_t cycle_limit;
    const uint8_t *regions, *insns, *consts;
} header_t;

typedef struct {
    uint8_t kind, code, bits, ndim;
    uint32_t bytes;
    uint32_t shape[AOTC_ACCEL_SIM_MAX_NDIM];
} region_t;

typedef struct {
    uint8_t space;
    uint64_t lo, hi; /* [lo, hi); empty when lo == hi */
} range_t;

/* A checked range, kept compactly by the hazard tracker (every checked extent fits 32 bits). */
typedef struct {
    uint32_t lo, hi;
    uint8_t space;
} span_t;

typedef struct {
    span_t reads[4];
    span_t write;
    uint64_t end;
} inflight_t;

typedef struct {
    const header_t *h;
    uint32_t reg[AOTC_ACCEL_SIM_NUM_REGS];
    const uint8_t *rbase[AOTC_ACCEL_SIM_MAX_REGIONS];
    uint8_t *wbase[AOTC_ACCEL_SIM_MAX_REGIONS]; /* NULL for read-only regions */
    uint64_t rbytes[AOTC_ACCEL_SIM_MAX_REGIONS];
    uint8_t *spm;
    uint64_t spm_bytes;
    /* cost model */
    uint64_t issue;                          /* cycle the next instruction issues at */
    uint64_t unit_free[N_UNITS];             /* cycle each unit finishes its queue */
    uint64_t queue[N_UNITS][MAX_QUEUE];      /* start cycles of each unit's last queue_depth ops */
    uint64_t queued[N_UNITS];                /* ops each unit has taken */
    inflight_t ring[RING];
    uint32_t ring_n;
    uint64_t floor;                          /* end of the latest op that left the ring */
    uint64_t last_end;
    aotc_accel_sim_stats st;
} machine_t;

/* --- little helpers ----------------------------------------------------------------------- */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32); }

static float ldf(const uint8_t *p) { float v; memcpy(&v, p, 4); return v; }
static void stf(uint8_t *p, float v) { memcpy(p, &v, 4); }
static int32_t ldi(const uint8_t *p) { int32_t v; memcpy(&v, p, 4); return v; }
static void sti(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }
static float bits_f(uint32_t u) { float v; memcpy(&v, &u, 4); return v; }

/* a * b and a + b, saturating at SAT: extents past it fail every bounds check. */
static uint64_t smul(uint64_t a, uint64_t b) {
    if (a == 0 || b == 0) return 0;
    if (a >= SAT || b >= SAT || a > SAT / b) return SAT;
    return a * b;
}
static uint64_t sadd(uint64_t a, uint64_t b) { return (a >= SAT || b >= SAT || a + b >= SAT) ? SAT : a + b; }
static uint64_t cdiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static int32_t sat32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v; }
/* min(max(v, lo), hi), as ONNX Clip: hi wins when lo > hi; a NaN passes through. */
static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}
static float clampf(float v, float lo, float hi) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* CRC-32 (IEEE 802.3, as zlib), four bits at a time. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, uint64_t n) {
    static const uint32_t t[16] = {
        0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu, 0x76dc4190u, 0x6b6b51f4u, 0x4db26158u, 0x5005713cu,
        0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu, 0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu};
    uint64_t i;
    for (i = 0; i < n; ++i) {
        crc ^= p[i];
        crc = (crc >> 4) ^ t[crc & 15u];
        crc = (crc >> 4) ^ t[crc & 15u];
    }
    return crc;
}

/* --- static validation -------------------------------------------------------------------- */

static int32_t parse_header(const uint8_t *p, uint64_t n, header_t *h) {
    static const uint8_t zero[4] = {0, 0, 0, 0};
    uint64_t total;
    uint32_t crc;
    if (p == 0 || n < AOTC_ACCEL_SIM_HEADER_BYTES) return AOTC_ACCEL_SIM_E_TRUNCATED;
    if (rd32(p) != AOTC_ACCEL_SIM_MAGIC) return AOTC_ACCEL_SIM_E_MAGIC;
    if (rd16(p + 4) != AOTC_ACCEL_SIM_VERSION) return AOTC_ACCEL_SIM_E_VERSION;
    if (rd16(p + 6) != AOTC_ACCEL_SIM_HEADER_BYTES) return AOTC_ACCEL_SIM_E_HEADER;
    h->n_insns = rd32(p + 16);
    h->const_bytes = rd32(p + 20);
    h->n_regions = rd16(p + 32);
    total = (uint64_t)AOTC_ACCEL_SIM_HEADER_BYTES + (uint64_t)AOTC_ACCEL_SIM_REGION_BYTES * h->n_regions +
            (uint64_t)AOTC_ACCEL_SIM_INSN_BYTES * h->n_insns + h->const_bytes;
    if (rd32(p + 8) != total) return AOTC_ACCEL_SIM_E_HEADER;
    if (n < total) return AOTC_ACCEL_SIM_E_TRUNCATED;
    if (n > total) return AOTC_ACCEL_SIM_E_HEADER;
    crc = crc32_update(0xffffffffu, p, 12);
    crc = crc32_update(crc, zero, 4);
    crc = crc32_update(crc, p + 16, total - 16) ^ 0xffffffffu;
    if (crc != rd32(p + 12)) return AOTC_ACCEL_SIM_E_CHECKSUM;
    h->spm_bytes = rd32(p + 24);
    h->spm_capacity = rd32(p + 28);
    h->dma_bw = rd16(p + 36);
    h->dma_setup = rd16(p + 38);
    h->mac_rows = rd16(p + 40);
    h->mac_cols = rd16(p + 42);
    h->vec_lanes = rd16(p + 44);
    h->op_setup = rd16(p + 46);
    h->queue_depth = rd16(p + 48);
    h->cycle_limit = rd64(p + 56);
    if (rd16(p + 34) != 0 || rd16(p + 50) != 0 || rd32(p + 52) != 0) return AOTC_ACCEL_SIM_E_HEADER;
    if (h->spm_capacity > AOTC_ACCEL_SIM_MAX_SPM || h->spm_bytes > h->spm_capacity) return AOTC_ACCEL_SIM_E_HEADER;
    if (h->dma_bw == 0 || h->mac_rows == 0 || h->mac_cols == 0 || h->vec_lanes == 0 || h->queue_depth == 0 ||
        h->queue_depth > MAX_QUEUE || h->cycle_limit == 0)
        return AOTC_ACCEL_SIM_E_HEADER;
    h->regions = p + AOTC_ACCEL_SIM_HEADER_BYTES;
    h->insns = h->regions + (uint64_t)AOTC_ACCEL_SIM_REGION_BYTES * h->n_regions;
    h->consts = h->insns + (uint64_t)AOTC_ACCEL_SIM_INSN_BYTES * h->n_insns;
    return 0;
}

static void read_region(const header_t *h, uint32_t k, region_t *r) {
    const uint8_t *p = h->regions + (uint64_t)AOTC_ACCEL_SIM_REGION_BYTES * k;
    uint32_t d;
    r->kind = p[0];
    r->code = p[1];
    r->bits = p[2];
    r->ndim = p[3];
    r->bytes = rd32(p + 4);
    for (d = 0; d < AOTC_ACCEL_SIM_MAX_NDIM; ++d) r->shape[d] = rd32(p + 8 + 4 * d);
}

static int32_t check_regions(const header_t *h) {
    uint32_t k, d;
    int prev_kind = -1;
    if (h->n_regions == 0 || h->n_regions > AOTC_ACCEL_SIM_MAX_REGIONS) return AOTC_ACCEL_SIM_E_REGIONS;
    for (k = 0; k < h->n_regions; ++k) {
        region_t r;
        uint64_t bytes;
        read_region(h, k, &r);
        if (r.kind > AOTC_ACCEL_SIM_SCRATCH || (int)r.kind < prev_kind) return AOTC_ACCEL_SIM_E_REGIONS;
        if ((k == 0) != (r.kind == AOTC_ACCEL_SIM_CONST)) return AOTC_ACCEL_SIM_E_REGIONS;
        if (r.kind == AOTC_ACCEL_SIM_SCRATCH && prev_kind == AOTC_ACCEL_SIM_SCRATCH) return AOTC_ACCEL_SIM_E_REGIONS;
        prev_kind = r.kind;
        if (r.code > kDLFloat || (r.bits != 8 && r.bits != 16 && r.bits != 32 && r.bits != 64) ||
            r.ndim > AOTC_ACCEL_SIM_MAX_NDIM)
            return AOTC_ACCEL_SIM_E_REGIONS;
        bytes = r.bits / 8u;
        for (d = 0; d < AOTC_ACCEL_SIM_MAX_NDIM; ++d) {
            if (d < r.ndim) bytes = smul(bytes, r.shape[d]);
            else if (r.shape[d] != 0) return AOTC_ACCEL_SIM_E_REGIONS;
        }
        if (bytes != r.bytes) return AOTC_ACCEL_SIM_E_REGIONS;
        if (k == 0 && r.bytes != h->const_bytes) return AOTC_ACCEL_SIM_E_REGIONS;
    }
    return 0;
}

static void decode(const uint8_t *p, insn_t *i) {
    i->op = p[0];
    i->flags = p[1];
    i->a = rd16(p + 2);
    i->b = rd32(p + 4);
    i->c = rd32(p + 8);
    i->d = rd32(p + 12);
}

static int writable(uint8_t kind) { return kind == AOTC_ACCEL_SIM_OUTPUT || kind == AOTC_ACCEL_SIM_SCRATCH; }

static int eight_bit(uint32_t dt) { return dt == AOTC_ACCEL_SIM_I8 || dt == AOTC_ACCEL_SIM_U8; }

/* Static checks of one instruction: its opcode, flags and the operands fixed in it. */
static int32_t check_insn(const header_t *h, const insn_t *i) {
    const uint32_t dt = i->flags & AOTC_ACCEL_SIM_DTYPE_MASK;
    switch (i->op) {
    case AOTC_ACCEL_SIM_OP_SET:
        if (i->flags < 1 || i->flags > 3 || (uint32_t)i->a + i->flags > AOTC_ACCEL_SIM_NUM_REGS)
            return AOTC_ACCEL_SIM_E_OPERAND;
        if ((i->flags < 3 && i->d != 0) || (i->flags < 2 && i->c != 0)) return AOTC_ACCEL_SIM_E_OPERAND;
        return 0;
    case AOTC_ACCEL_SIM_OP_LOAD:
    case AOTC_ACCEL_SIM_OP_STORE: {
        region_t r;
        if (i->flags != 0) return AOTC_ACCEL_SIM_E_OPERAND;
        if (i->a >= h->n_regions) return AOTC_ACCEL_SIM_E_DMA_BOUNDS;
        read_region(h, i->a, &r);
        if (i->op == AOTC_ACCEL_SIM_OP_STORE && !writable(r.kind)) return AOTC_ACCEL_SIM_E_READONLY;
        return 0;
    }
    case AOTC_ACCEL_SIM_OP_CONV:
    case AOTC_ACCEL_SIM_OP_MATMUL:
        if ((i->flags & ~0x7fu) != 0 || dt == AOTC_ACCEL_SIM_I32 || i->a != 0) return AOTC_ACCEL_SIM_E_OPERAND;
        if ((i->flags & AOTC_ACCEL_SIM_F_REQUANT) && (!eight_bit(dt) || (i->flags & AOTC_ACCEL_SIM_F_ACC)))
            return AOTC_ACCEL_SIM_E_OPERAND;
        if ((i->flags & AOTC_ACCEL_SIM_F_FSCALE) && !(i->flags & AOTC_ACCEL_SIM_F_REQUANT)) return AOTC_ACCEL_SIM_E_OPERAND;
        return 0;
    case AOTC_ACCEL_SIM_OP_POOL:
        if ((i->flags & ~(AOTC_ACCEL_SIM_DTYPE_MASK | AOTC_ACCEL_SIM_F_AVG | AOTC_ACCEL_SIM_F_CLIP |
                          AOTC_ACCEL_SIM_F_REQUANT | AOTC_ACCEL_SIM_F_FSCALE)) != 0 ||
            dt == AOTC_ACCEL_SIM_I32 || i->a != 0 || i->c != 0)
            return AOTC_ACCEL_SIM_E_OPERAND;
        /* REQUANT: the window's sum requantised (8-bit, not AVG); CLIP only with it */
        if ((i->flags & (AOTC_ACCEL_SIM_F_REQUANT | AOTC_ACCEL_SIM_F_CLIP)) &&
            (!eight_bit(dt) || (i->flags & AOTC_ACCEL_SIM_F_AVG) || !(i->flags & AOTC_ACCEL_SIM_F_REQUANT)))
            return AOTC_ACCEL_SIM_E_OPERAND;
        if ((i->flags & AOTC_ACCEL_SIM_F_FSCALE) && !(i->flags & AOTC_ACCEL_SIM_F_REQUANT)) return AOTC_ACCEL_SIM_E_OPERAND;
        return 0;
    case AOTC_ACCEL_SIM_OP_VADD:
    case AOTC_ACCEL_SIM_OP_VMUL:
    case AOTC_ACCEL_SIM_OP_VMAX: {
        const uint32_t q = i->flags & (AOTC_ACCEL_SIM_F_REQUANT | AOTC_ACCEL_SIM_F_FSCALE);
        if ((i->flags & ~(AOTC_ACCEL_SIM_DTYPE_MASK | AOTC_ACCEL_SIM_F_CLIP | AOTC_ACCEL_SIM_F_REQUANT |
                          AOTC_ACCEL_SIM_F_FSCALE)) != 0 || i->a != 0)
            return AOTC_ACCEL_SIM_E_OPERAND;
        /* the quantized add: VADD, 8-bit, REQUANT and FSCALE together */
        if (q != 0 && (i->op != AOTC_ACCEL_SIM_OP_VADD || !eight_bit(dt) ||
                       q != (AOTC_ACCEL_SIM_F_REQUANT | AOTC_ACCEL_SIM_F_FSCALE)))
            return AOTC_ACCEL_SIM_E_OPERAND;
        return 0;
    }
    case AOTC_ACCEL_SIM_OP_VCLIP:
        if ((i->flags & ~AOTC_ACCEL_SIM_DTYPE_MASK) != 0 || i->a != 0 || i->c != 0) return AOTC_ACCEL_SIM_E_OPERAND;
        return 0;
    case AOTC_ACCEL_SIM_OP_VREQ:
        if ((i->flags & ~(AOTC_ACCEL_SIM_DTYPE_MASK | AOTC_ACCEL_SIM_F_CLIP | AOTC_ACCEL_SIM_F_FSCALE)) != 0 ||
            dt == AOTC_ACCEL_SIM_I32 || i->a != 0 || i->c != 0)
            return AOTC_ACCEL_SIM_E_OPERAND;
        return 0;
    case AOTC_ACCEL_SIM_OP_END:
        if (i->flags != 0 || i->a != 0 || i->b != 0 || i->c != 0 || i->d != 0) return AOTC_ACCEL_SIM_E_OPERAND;
        return 0;
    default:
        return AOTC_ACCEL_SIM_E_OPCODE;
    }
}

static int32_t validate(const uint8_t *program, uint64_t program_bytes, header_t *h) {
    uint32_t k;
    int32_t rc = parse_header(program, program_bytes, h);
    if (rc) return rc;
    rc = check_regions(h);
    if (rc) return rc;
    for (k = 0; k < h->n_insns; ++k) {
        insn_t i;
        decode(h->insns + (uint64_t)AOTC_ACCEL_SIM_INSN_BYTES * k, &i);
        rc = check_insn(h, &i);
        if (rc) return rc;
    }
    if (h->n_insns == 0 || h->insns[(uint64_t)AOTC_ACCEL_SIM_INSN_BYTES * (h->n_insns - 1)] != AOTC_ACCEL_SIM_OP_END)
        return AOTC_ACCEL_SIM_E_NO_END;
    return 0;
}

int32_t aotc_accel_sim_validate(const uint8_t *program, uint64_t program_bytes) {
    header_t h;
    return validate(program, program_bytes, &h);
}

/* --- cost model --------------------------------------------------------------------------- */

static int overlaps(const range_t *x, const range_t *y) {
    return x->space == y->space && x->lo < x->hi && y->lo < y->hi && x->lo < y->hi && y->lo < x->hi;
}

static int overlaps_span(const range_t *x, const span_t *y) {
    return x->space == y->space && x->lo < x->hi && y->lo < y->hi && x->lo < y->hi && y->lo < x->hi;
}

static span_t span(const range_t *r) {
    span_t s;
    s.lo = (uint32_t)r->lo;
    s.hi = (uint32_t)r->hi;
    s.space = r->space;
    return s;
}

/* Time one unit instruction: it issues when the front end reaches it and its unit's queue has
 * room, starts when its unit is free and every earlier instruction it conflicts with (it reads
 * what they write, or writes what they read or write) has finished. Errors if the run would
 * pass the header's cycle limit; nothing has been changed then. */
static int32_t schedule(machine_t *m, int unit, uint64_t dur, const range_t *reads, uint32_t n_reads,
                        const range_t *write) {
    const uint32_t q = m->h->queue_depth;
    const uint32_t slot = (uint32_t)(m->queued[unit] % q);
    uint64_t t = m->issue, start, end;
    uint32_t k, r;
    inflight_t *e;
    if (m->queued[unit] >= q) t = max64(t, m->queue[unit][slot]);
    start = max64(max64(t, m->unit_free[unit]), m->floor);
    for (k = 0; k < m->ring_n && k < RING; ++k) {
        const inflight_t *o = &m->ring[k];
        int hit = overlaps_span(write, &o->write);
        for (r = 0; r < 4; ++r) hit = hit || overlaps_span(write, &o->reads[r]);
        for (r = 0; r < n_reads; ++r) hit = hit || overlaps_span(&reads[r], &o->write);
        if (hit) start = max64(start, o->end);
    }
    if (dur > m->h->cycle_limit || start > m->h->cycle_limit - dur) return AOTC_ACCEL_SIM_E_WATCHDOG;
    end = start + dur;
    m->queue[unit][slot] = start;
    m->queued[unit] += 1;
    m->unit_free[unit] = end;
    e = &m->ring[m->ring_n % RING];
    if (m->ring_n >= RING) m->floor = max64(m->floor, e->end);
    memset(e, 0, sizeof *e);
    for (r = 0; r < n_reads && r < 4; ++r) e->reads[r] = span(&reads[r]);
    e->write = span(write);
    e->end = end;
    m->ring_n += 1;
    m->last_end = max64(m->last_end, end);
    m->issue = t + 1;
    if (unit == UNIT_DMA) m->st.dma_busy_cycles += dur;
    if (unit == UNIT_MAC) m->st.mac_busy_cycles += dur;
    if (unit == UNIT_VEC) m->st.vec_busy_cycles += dur;
    return 0;
}

/* --- operand checks ----------------------------------------------------------------------- */

static range_t spm_range(uint64_t addr, uint64_t bytes) {
    range_t r;
    r.space = SPACE_SPM;
    r.lo = addr;
    r.hi = sadd(addr, bytes);
    if (bytes == 0) r.hi = r.lo;
    return r;
}

/* In the scratchpad, and aligned to its element size. */
static int32_t check_spm(machine_t *m, const range_t *r, uint32_t align) {
    if (r->hi > m->spm_bytes) return AOTC_ACCEL_SIM_E_SPM_BOUNDS;
    if (r->lo % align != 0) return AOTC_ACCEL_SIM_E_ALIGN;
    return 0;
}

static void touch_spm(machine_t *m, const range_t *r) {
    if (r->hi > r->lo && r->hi > m->st.spm_peak_bytes) m->st.spm_peak_bytes = (uint32_t)r->hi;
}

/* y may be disjoint from x or, when `same_ok`, be exactly x. */
static int32_t check_alias(const range_t *y, const range_t *x, int same_ok) {
    if (!overlaps(y, x)) return 0;
    if (same_ok && y->lo == x->lo && y->hi == x->hi) return 0;
    return AOTC_ACCEL_SIM_E_OVERLAP;
}

static int dim_ok(uint32_t v, uint32_t min) { return v >= min && v <= AOTC_ACCEL_SIM_MAX_DIM; }

/* --- DMA ---------------------------------------------------------------------------------- */

static int32_t op_dma(machine_t *m, const insn_t *i) {
    const int load = i->op == AOTC_ACCEL_SIM_OP_LOAD;
    const uint32_t n1 = m->reg[AOTC_ACCEL_SIM_R_DMA_N1], n2 = m->reg[AOTC_ACCEL_SIM_R_DMA_N2];
    const uint64_t es1 = m->reg[AOTC_ACCEL_SIM_R_DMA_EXT_S1], es2 = m->reg[AOTC_ACCEL_SIM_R_DMA_EXT_S2];
    const uint64_t ss1 = m->reg[AOTC_ACCEL_SIM_R_DMA_SPM_S1], ss2 = m->reg[AOTC_ACCEL_SIM_R_DMA_SPM_S2];
    const uint64_t row = i->d;
    uint64_t ext_hi, spm_hi, dst_s1, dst_s2, dur;
    range_t ext, spm;
    uint32_t p, q;
    int32_t rc;
    if (!dim_ok(n1, 1) || !dim_ok(n2, 1) || !dim_ok(i->d, 1)) return AOTC_ACCEL_SIM_E_OPERAND;
    ext_hi = sadd(sadd(sadd(i->b, smul(n2 - 1, es2)), smul(n1 - 1, es1)), row);
    spm_hi = sadd(sadd(sadd(i->c, smul(n2 - 1, ss2)), smul(n1 - 1, ss1)), row);
    if (ext_hi > m->rbytes[i->a]) return AOTC_ACCEL_SIM_E_DMA_BOUNDS;
    if (spm_hi > m->spm_bytes) return AOTC_ACCEL_SIM_E_SPM_BOUNDS;
    /* the destination's rows must not overlap one another (the source's may: a broadcast) */
    dst_s1 = load ? ss1 : es1;
    dst_s2 = load ? ss2 : es2;
    if ((n1 > 1 && dst_s1 < row) || (n2 > 1 && dst_s2 < sadd(smul(n1 - 1, dst_s1), row)))
        return AOTC_ACCEL_SIM_E_OVERLAP;
    ext.space = (uint8_t)(1 + i->a);
    ext.lo = i->b;
    ext.hi = ext_hi;
    spm = spm_range(i->c, spm_hi - i->c);
    dur = m->h->dma_setup + smul((uint64_t)n1 * n2, cdiv(row, m->h->dma_bw));
    rc = load ? schedule(m, UNIT_DMA, dur, &ext, 1, &spm) : schedule(m, UNIT_DMA, dur, &spm, 1, &ext);
    if (rc) return rc;
    for (q = 0; q < n2; ++q) {
        for (p = 0; p < n1; ++p) {
            const uint64_t e = i->b + q * es2 + p * es1, s = i->c + q * ss2 + p * ss1;
            if (load) memcpy(m->spm + s, m->rbase[i->a] + e, (size_t)row);
            else memcpy(m->wbase[i->a] + e, m->spm + s, (size_t)row);
        }
    }
    touch_spm(m, &spm);
    m->st.dma_bytes += (uint64_t)n1 * n2 * row;
    return 0;
}

/* --- requantisation (TFLite's MultiplyByQuantizedMultiplier) -------------------------------- */

static int32_t requantize(int32_t x, int32_t mult, int32_t shift) {
    int32_t left, right, hi;
    int64_t ab, mask, rem, threshold, q;
    if (shift > 30) shift = 30;
    if (shift < -31) shift = -31;
    left = shift > 0 ? shift : 0;
    right = shift > 0 ? 0 : -shift;
    x = sat32((int64_t)x * ((int64_t)1 << left));
    if (x == INT32_MIN && mult == INT32_MIN) {
        hi = INT32_MAX;
    } else {
        ab = (int64_t)x * mult;
        q = (ab + (ab >= 0 ? ((int64_t)1 << 30) : 1 - ((int64_t)1 << 30))) / ((int64_t)1 << 31);
        hi = (int32_t)q;
    }
    if (right == 0) return hi;
    mask = ((int64_t)1 << right) - 1;
    rem = (int64_t)hi & mask;
    threshold = (mask >> 1) + (hi < 0 ? 1 : 0);
    q = hi >= 0 ? ((int64_t)hi >> right) : -((-(int64_t)hi + mask) >> right); /* floor division */
    return (int32_t)(q + (rem > threshold ? 1 : 0));
}

/* --- float requantisation (onnxruntime's MlasRequantizeOutput) ------------------------------ */

/* f rounded half to even, for |f| <= 2^22: adding and taking back 1.5 * 2^23 leaves no fraction
 * bits (IEEE single precision, round to nearest; the outputs' bounds keep |f| small). */
static int32_t round_even(float f) {
    const float t = f + 12582912.0f;
    return (int32_t)(t - 12582912.0f);
}

/* min(max(f, lo), hi), hi winning when they cross; a NaN becomes lo (then hi if lo > hi). */
static float clamp_lo_hi(float f, float lo, float hi) {
    f = f > lo ? f : lo;
    return f < hi ? f : hi;
}

/* C99's fmaf (a * b + c, rounded once) without libm: the product is exact in double; the sum,
 * rounded to double, is made round-to-odd with its error (Knuth's TwoSum), which then rounds
 * correctly to float (53 >= 24 + 2 bits). refmodel.fma32 is the same computation. */
static float fma32(float a, float b, float c) {
    const double p = (double)a * (double)b, cd = (double)c;
    double s = p + cd;
    const double bb = s - p;
    const double e = (p - (s - bb)) + (cd - bb);
    uint64_t u;
    memcpy(&u, &s, sizeof u);
    if (e != 0.0 && s != 0.0 && (u & 1u) == 0 && (u & 0x7ff0000000000000ull) != 0x7ff0000000000000ull) {
        u = ((s > 0.0) == (e > 0.0)) ? u + 1u : u - 1u; /* one unit toward the exact sum */
        memcpy(&s, &u, sizeof s);
    }
    return (float)s;
}

/* The 8-bit type a requantising instruction writes (VREQ's 0 reads as int8), and its range. */
static uint32_t out_type(uint32_t flags) {
    return (flags & AOTC_ACCEL_SIM_DTYPE_MASK) == AOTC_ACCEL_SIM_U8 ? AOTC_ACCEL_SIM_U8 : AOTC_ACCEL_SIM_I8;
}
static int64_t type_min(uint32_t t) { return t == AOTC_ACCEL_SIM_U8 ? 0 : -128; }
static int64_t type_max(uint32_t t) { return t == AOTC_ACCEL_SIM_U8 ? 255 : 127; }

/* The output range: the 8-bit type's, or with CLIP [ACT_MIN, ACT_MAX] each brought into it. */
static void out_range(const machine_t *m, uint32_t flags, int64_t *lo, int64_t *hi) {
    const uint32_t t = out_type(flags);
    *lo = type_min(t);
    *hi = type_max(t);
    if (flags & AOTC_ACCEL_SIM_F_CLIP) {
        *lo = clamp64((int32_t)m->reg[AOTC_ACCEL_SIM_R_ACT_MIN], type_min(t), type_max(t));
        *hi = clamp64((int32_t)m->reg[AOTC_ACCEL_SIM_R_ACT_MAX], type_min(t), type_max(t));
    }
}

/* A float requantisation adds OFM_ZP last: it must lie in the output type's range. */
static int32_t check_out_zp(const machine_t *m, const insn_t *i) {
    const int64_t zp = (int32_t)m->reg[AOTC_ACCEL_SIM_R_OFM_ZP];
    const uint32_t t = out_type(i->flags);
    if ((i->flags & AOTC_ACCEL_SIM_F_FSCALE) && i->op != AOTC_ACCEL_SIM_OP_VADD &&
        (zp < type_min(t) || zp > type_max(t)))
        return AOTC_ACCEL_SIM_E_OPERAND;
    return 0;
}

/* Bytes of the requantisation table of `n` channels: float32 scales, or int32 mult then shift. */
static uint64_t table_bytes(uint32_t flags, uint64_t n) { return ((flags & AOTC_ACCEL_SIM_F_FSCALE) ? 4u : 8u) * n; }

/* One int32 value through the requantising output stage, channel `ch` of `n` (table at QUANT_ADDR). */
static int64_t requant_out(const machine_t *m, uint32_t flags, int32_t acc, const uint8_t *table, uint32_t ch,
                           uint32_t n) {
    const int32_t zp = (int32_t)m->reg[AOTC_ACCEL_SIM_R_OFM_ZP];
    const uint32_t t = out_type(flags);
    int64_t v;
    if (flags & AOTC_ACCEL_SIM_F_FSCALE) {
        int64_t lo, hi;
        out_range(m, flags, &lo, &hi);
        v = (int64_t)round_even(clamp_lo_hi((float)acc * ldf(table + 4u * ch), (float)(lo - zp), (float)(hi - zp))) + zp;
    } else {
        v = (int64_t)zp + requantize(acc, ldi(table + 4u * ch), ldi(table + 4u * ((uint64_t)n + ch)));
        if (flags & AOTC_ACCEL_SIM_F_CLIP)
            v = clamp64(v, (int32_t)m->reg[AOTC_ACCEL_SIM_R_ACT_MIN], (int32_t)m->reg[AOTC_ACCEL_SIM_R_ACT_MAX]);
    }
    return clamp64(v, type_min(t), type_max(t));
}

static void st_8bit(uint8_t *p, uint32_t t, int64_t v) {
    if (t == AOTC_ACCEL_SIM_U8) *p = (uint8_t)v;
    else *(int8_t *)p = (int8_t)v;
}

/* The output stage shared by CONV and MATMUL (8-bit): int32, or requantised to 8 bits. */
static void store_int(machine_t *m, const insn_t *i, uint8_t *dst, int64_t acc, uint32_t ch, uint32_t n) {
    const int32_t lo = (int32_t)m->reg[AOTC_ACCEL_SIM_R_ACT_MIN], hi = (int32_t)m->reg[AOTC_ACCEL_SIM_R_ACT_MAX];
    int64_t v = sat32(acc);
    if (i->flags & AOTC_ACCEL_SIM_F_REQUANT) {
        st_8bit(dst, out_type(i->flags),
                requant_out(m, i->flags, (int32_t)v, m->spm + m->reg[AOTC_ACCEL_SIM_R_QUANT_ADDR], ch, n));
        return;
    }
    if (i->flags & AOTC_ACCEL_SIM_F_CLIP) v = clamp64(v, lo, hi);
    sti(dst, (int32_t)v);
}

/* An 8-bit activation: int8 or uint8 by the instruction's type. */
static int64_t ld_8bit(const uint8_t *p, uint32_t dt) { return dt == AOTC_ACCEL_SIM_U8 ? (int64_t)*p : (int8_t)*p; }

/* --- MAC array ---------------------------------------------------------------------------- */

/* Scratchpad operands of CONV and MATMUL: checked, then scheduled on the MAC array. */
static int32_t mac_operands(machine_t *m, const insn_t *i, uint64_t in_bytes, uint64_t w_bytes, uint64_t out_elems,
                            uint32_t channels, uint64_t compute, uint64_t macs) {
    const int f32 = (i->flags & AOTC_ACCEL_SIM_DTYPE_MASK) == AOTC_ACCEL_SIM_F32;
    const uint32_t esz = f32 ? 4u : 1u;
    const uint32_t osz = (i->flags & AOTC_ACCEL_SIM_F_REQUANT) ? 1u : 4u;
    range_t reads[4], out;
    uint32_t n = 0, k;
    int32_t rc;
    reads[n++] = spm_range(i->b, smul(in_bytes, esz));
    reads[n++] = spm_range(i->c, smul(w_bytes, esz));
    if (i->flags & AOTC_ACCEL_SIM_F_BIAS) reads[n++] = spm_range(m->reg[AOTC_ACCEL_SIM_R_BIAS_ADDR], 4ull * channels);
    if (i->flags & AOTC_ACCEL_SIM_F_REQUANT)
        reads[n++] = spm_range(m->reg[AOTC_ACCEL_SIM_R_QUANT_ADDR], table_bytes(i->flags, channels));
    out = spm_range(i->d, smul(out_elems, osz));
    for (k = 0; k < n; ++k) {
        rc = check_spm(m, &reads[k], k < 2 ? esz : 4u);
        if (rc) return rc;
    }
    rc = check_spm(m, &out, osz);
    if (rc) return rc;
    for (k = 0; k < n; ++k) {
        rc = check_alias(&out, &reads[k], 0);
        if (rc) return rc;
    }
    rc = schedule(m, UNIT_MAC, m->h->op_setup + compute, reads, n, &out);
    if (rc) return rc;
    for (k = 0; k < n; ++k) touch_spm(m, &reads[k]);
    touch_spm(m, &out);
    m->st.macs += macs;
    if (!f32) m->st.int8_macs += macs;
    m->st.mac_slots += smul(compute, (uint64_t)m->h->mac_rows * m->h->mac_cols * (f32 ? 1u : 4u));
    return 0;
}

static int32_t op_conv(machine_t *m, const insn_t *i) {
    const uint32_t *r = m->reg;
    const uint32_t c = r[AOTC_ACCEL_SIM_R_IFM_C], ih = r[AOTC_ACCEL_SIM_R_IFM_H], iw = r[AOTC_ACCEL_SIM_R_IFM_W];
    const uint32_t oc_n = r[AOTC_ACCEL_SIM_R_OFM_C], oh = r[AOTC_ACCEL_SIM_R_OFM_H], ow = r[AOTC_ACCEL_SIM_R_OFM_W];
    const uint32_t kh = r[AOTC_ACCEL_SIM_R_KERNEL] & 0xffffu, kw = r[AOTC_ACCEL_SIM_R_KERNEL] >> 16;
    const uint32_t sh = r[AOTC_ACCEL_SIM_R_STRIDE] & 0xffffu, sw = r[AOTC_ACCEL_SIM_R_STRIDE] >> 16;
    const uint32_t pt = r[AOTC_ACCEL_SIM_R_PAD] & 0xffffu, pl = r[AOTC_ACCEL_SIM_R_PAD] >> 16;
    const uint32_t dh = r[AOTC_ACCEL_SIM_R_DILATION] & 0xffffu, dw = r[AOTC_ACCEL_SIM_R_DILATION] >> 16;
    const uint32_t g = r[AOTC_ACCEL_SIM_R_GROUPS];
    const uint32_t dt = i->flags & AOTC_ACCEL_SIM_DTYPE_MASK;
    const int f32 = dt == AOTC_ACCEL_SIM_F32;
    const uint32_t esz = f32 ? 4u : 1u, osz = (i->flags & AOTC_ACCEL_SIM_F_REQUANT) ? 1u : 4u;
    uint32_t cin_g, cout_g, oc, oy, ox, icl, ky, kx;
    uint64_t taps, rows, cols, compute;
    int32_t rc;
    if (!dim_ok(c, 1) || !dim_ok(ih, 0) || !dim_ok(iw, 0) || !dim_ok(oc_n, 1) || !dim_ok(oh, 1) || !dim_ok(ow, 1) ||
        kh == 0 || kw == 0 || sh == 0 || sw == 0 || dh == 0 || dw == 0 || !dim_ok(g, 1) || c % g != 0 ||
        oc_n % g != 0)
        return AOTC_ACCEL_SIM_E_OPERAND;
    if ((rc = check_out_zp(m, i))) return rc;
    cin_g = c / g;
    cout_g = oc_n / g;
    rows = (uint64_t)m->h->mac_rows * (f32 ? 1u : 2u);
    cols = (uint64_t)m->h->mac_cols * (f32 ? 1u : 2u);
    taps = smul(smul(oh, ow), smul(kh, kw));
    compute = cin_g == 1 ? smul(taps, cdiv(oc_n, rows)) : smul(smul(taps, g), smul(cdiv(cout_g, rows), cdiv(cin_g, cols)));
    rc = mac_operands(m, i, smul(smul(c, ih), iw), smul(smul(oc_n, cin_g), smul(kh, kw)), smul(smul(oc_n, oh), ow),
                      oc_n, compute, smul(smul(oc_n, smul(oh, ow)), smul(cin_g, smul(kh, kw))));
    if (rc) return rc;
    for (oc = 0; oc < oc_n; ++oc) {
        const uint32_t ic0 = (oc / cout_g) * cin_g;
        const uint8_t *w = m->spm + i->c + (uint64_t)oc * cin_g * kh * kw * esz;
        for (oy = 0; oy < oh; ++oy) {
            for (ox = 0; ox < ow; ++ox) {
                uint8_t *dst = m->spm + i->d + (((uint64_t)oc * oh + oy) * ow + ox) * osz;
                float accf = 0.0f;
                int64_t acci = 0;
                if (i->flags & AOTC_ACCEL_SIM_F_ACC) {
                    accf = f32 ? ldf(dst) : 0.0f;
                    acci = f32 ? 0 : ldi(dst);
                }
                for (icl = 0; icl < cin_g; ++icl) {
                    const uint8_t *x = m->spm + i->b + (uint64_t)(ic0 + icl) * ih * iw * esz;
                    for (ky = 0; ky < kh; ++ky) {
                        const int64_t iy = (int64_t)oy * sh + (int64_t)ky * dh - pt;
                        if (iy < 0 || iy >= (int64_t)ih) continue;
                        for (kx = 0; kx < kw; ++kx) {
                            const int64_t ix = (int64_t)ox * sw + (int64_t)kx * dw - pl;
                            const uint64_t wi = ((uint64_t)icl * kh + ky) * kw + kx;
                            if (ix < 0 || ix >= (int64_t)iw) continue;
                            if (f32) {
                                accf += ldf(x + ((uint64_t)iy * iw + (uint64_t)ix) * 4u) * ldf(w + wi * 4u);
                            } else {
                                const int64_t xv = ld_8bit(x + (uint64_t)iy * iw + (uint64_t)ix, dt);
                                acci += (xv - (int32_t)r[AOTC_ACCEL_SIM_R_IFM_ZP]) * (int8_t)w[wi];
                            }
                        }
                    }
                }
                if (f32) {
                    if (i->flags & AOTC_ACCEL_SIM_F_BIAS) accf += ldf(m->spm + r[AOTC_ACCEL_SIM_R_BIAS_ADDR] + 4u * oc);
                    if (i->flags & AOTC_ACCEL_SIM_F_CLIP)
                        accf = clampf(accf, bits_f(r[AOTC_ACCEL_SIM_R_ACT_MIN]), bits_f(r[AOTC_ACCEL_SIM_R_ACT_MAX]));
                    stf(dst, accf);
                } else {
                    if (i->flags & AOTC_ACCEL_SIM_F_BIAS) acci += ldi(m->spm + r[AOTC_ACCEL_SIM_R_BIAS_ADDR] + 4u * oc);
                    store_int(m, i, dst, acci, oc, oc_n);
                }
            }
        }
    }
    return 0;
}

static int32_t op_matmul(machine_t *m, const insn_t *i) {
    const uint32_t *r = m->reg;
    const uint32_t mm = r[AOTC_ACCEL_SIM_R_MM_M], nn = r[AOTC_ACCEL_SIM_R_MM_N], kk = r[AOTC_ACCEL_SIM_R_MM_K];
    const uint32_t dt = i->flags & AOTC_ACCEL_SIM_DTYPE_MASK;
    const int f32 = dt == AOTC_ACCEL_SIM_F32;
    const uint32_t esz = f32 ? 4u : 1u, osz = (i->flags & AOTC_ACCEL_SIM_F_REQUANT) ? 1u : 4u;
    uint64_t compute, rows, cols;
    uint32_t y, x, k;
    int32_t rc;
    if (!dim_ok(mm, 1) || !dim_ok(nn, 1) || !dim_ok(kk, 1)) return AOTC_ACCEL_SIM_E_OPERAND;
    if ((rc = check_out_zp(m, i))) return rc;
    rows = (uint64_t)m->h->mac_rows * (f32 ? 1u : 2u);
    cols = (uint64_t)m->h->mac_cols * (f32 ? 1u : 2u);
    compute = smul(mm, smul(cdiv(nn, rows), cdiv(kk, cols)));
    rc = mac_operands(m, i, smul(mm, kk), smul(nn, kk), smul(mm, nn), nn, compute, smul(smul(mm, nn), kk));
    if (rc) return rc;
    for (y = 0; y < mm; ++y) {
        const uint8_t *a = m->spm + i->b + (uint64_t)y * kk * esz;
        for (x = 0; x < nn; ++x) {
            const uint8_t *w = m->spm + i->c + (uint64_t)x * kk * esz;
            uint8_t *dst = m->spm + i->d + ((uint64_t)y * nn + x) * osz;
            if (f32) {
                float acc = (i->flags & AOTC_ACCEL_SIM_F_ACC) ? ldf(dst) : 0.0f;
                for (k = 0; k < kk; ++k) acc += ldf(a + 4u * k) * ldf(w + 4u * k);
                if (i->flags & AOTC_ACCEL_SIM_F_BIAS) acc += ldf(m->spm + r[AOTC_ACCEL_SIM_R_BIAS_ADDR] + 4u * x);
                if (i->flags & AOTC_ACCEL_SIM_F_CLIP)
                    acc = clampf(acc, bits_f(r[AOTC_ACCEL_SIM_R_ACT_MIN]), bits_f(r[AOTC_ACCEL_SIM_R_ACT_MAX]));
                stf(dst, acc);
            } else {
                int64_t acc = (i->flags & AOTC_ACCEL_SIM_F_ACC) ? ldi(dst) : 0;
                for (k = 0; k < kk; ++k) acc += (ld_8bit(a + k, dt) - (int32_t)r[AOTC_ACCEL_SIM_R_IFM_ZP]) * (int8_t)w[k];
                if (i->flags & AOTC_ACCEL_SIM_F_BIAS) acc += ldi(m->spm + r[AOTC_ACCEL_SIM_R_BIAS_ADDR] + 4u * x);
                store_int(m, i, dst, acc, x, nn);
            }
        }
    }
    return 0;
}

/* --- vector unit -------------------------------------------------------------------------- */

static uint64_t lanes(const machine_t *m, uint32_t dtype) {
    return (uint64_t)m->h->vec_lanes * (eight_bit(dtype) ? 4u : 1u);
}

static int32_t op_pool(machine_t *m, const insn_t *i) {
    const uint32_t *r = m->reg;
    const uint32_t c = r[AOTC_ACCEL_SIM_R_IFM_C], ih = r[AOTC_ACCEL_SIM_R_IFM_H], iw = r[AOTC_ACCEL_SIM_R_IFM_W];
    const uint32_t oh = r[AOTC_ACCEL_SIM_R_OFM_H], ow = r[AOTC_ACCEL_SIM_R_OFM_W];
    const uint32_t kh = r[AOTC_ACCEL_SIM_R_KERNEL] & 0xffffu, kw = r[AOTC_ACCEL_SIM_R_KERNEL] >> 16;
    const uint32_t sh = r[AOTC_ACCEL_SIM_R_STRIDE] & 0xffffu, sw = r[AOTC_ACCEL_SIM_R_STRIDE] >> 16;
    const uint32_t pt = r[AOTC_ACCEL_SIM_R_PAD] & 0xffffu, pl = r[AOTC_ACCEL_SIM_R_PAD] >> 16;
    const uint32_t dh = r[AOTC_ACCEL_SIM_R_DILATION] & 0xffffu, dw = r[AOTC_ACCEL_SIM_R_DILATION] >> 16;
    const uint32_t dt = i->flags & AOTC_ACCEL_SIM_DTYPE_MASK;
    const int avg = (i->flags & AOTC_ACCEL_SIM_F_AVG) != 0, requant = (i->flags & AOTC_ACCEL_SIM_F_REQUANT) != 0;
    const uint32_t esz = dt == AOTC_ACCEL_SIM_F32 ? 4u : 1u;
    const int64_t izp = (int32_t)r[AOTC_ACCEL_SIM_R_IFM_ZP];
    uint32_t ch, oy, ox, ky, kx, n = 1, k;
    range_t reads[2], out;
    int32_t rc;
    if (!dim_ok(c, 1) || !dim_ok(ih, 0) || !dim_ok(iw, 0) || !dim_ok(oh, 1) || !dim_ok(ow, 1) || kh == 0 ||
        kw == 0 || sh == 0 || sw == 0 || dh == 0 || dw == 0)
        return AOTC_ACCEL_SIM_E_OPERAND;
    if ((rc = check_out_zp(m, i))) return rc;
    reads[0] = spm_range(i->b, smul(smul(c, ih), smul(iw, esz)));
    out = spm_range(i->d, smul(smul(c, oh), smul(ow, esz)));
    if (requant) reads[n++] = spm_range(r[AOTC_ACCEL_SIM_R_QUANT_ADDR], table_bytes(i->flags, c));
    for (k = 0; k < n; ++k)
        if ((rc = check_spm(m, &reads[k], k == 0 ? esz : 4u))) return rc;
    if ((rc = check_spm(m, &out, esz))) return rc;
    for (k = 0; k < n; ++k)
        if ((rc = check_alias(&out, &reads[k], 0))) return rc;
    rc = schedule(m, UNIT_VEC, m->h->op_setup + cdiv(smul(smul(c, smul(oh, ow)), smul(kh, kw)), lanes(m, dt)), reads,
                  n, &out);
    if (rc) return rc;
    for (k = 0; k < n; ++k) touch_spm(m, &reads[k]);
    touch_spm(m, &out);
    for (ch = 0; ch < c; ++ch) {
        const uint8_t *x = m->spm + i->b + (uint64_t)ch * ih * iw * esz;
        for (oy = 0; oy < oh; ++oy) {
            for (ox = 0; ox < ow; ++ox) {
                uint8_t *dst = m->spm + i->d + (((uint64_t)ch * oh + oy) * ow + ox) * esz;
                float best = 0.0f, sum = 0.0f;
                int64_t ibest = 0, isum = 0, zsum = 0, count = 0;
                for (ky = 0; ky < kh; ++ky) {
                    const int64_t iy = (int64_t)oy * sh + (int64_t)ky * dh - pt;
                    if (iy < 0 || iy >= (int64_t)ih) continue;
                    for (kx = 0; kx < kw; ++kx) {
                        const int64_t ix = (int64_t)ox * sw + (int64_t)kx * dw - pl;
                        const uint64_t at = (uint64_t)iy * iw + (uint64_t)ix;
                        if (ix < 0 || ix >= (int64_t)iw) continue;
                        if (dt == AOTC_ACCEL_SIM_F32) {
                            const float v = ldf(x + at * 4u);
                            sum += v;
                            if (count == 0 || v > best) best = v;
                        } else {
                            const int64_t v = ld_8bit(x + at, dt);
                            isum += v;
                            zsum += v - izp;
                            if (count == 0 || v > ibest) ibest = v;
                        }
                        count += 1;
                    }
                }
                if (dt == AOTC_ACCEL_SIM_F32) {
                    stf(dst, count == 0 ? 0.0f : avg ? sum / (float)count : best);
                } else if (requant) {
                    st_8bit(dst, out_type(i->flags),
                            requant_out(m, i->flags, sat32(zsum), m->spm + reads[1].lo, ch, c));
                } else {
                    int64_t v = ibest;
                    if (avg) v = count == 0 ? 0 : isum >= 0 ? (isum + count / 2) / count : -((-isum + count / 2) / count);
                    st_8bit(dst, dt, v);
                }
            }
        }
    }
    return 0;
}

static int64_t ld_elem(const uint8_t *p, uint32_t dt) { return eight_bit(dt) ? ld_8bit(p, dt) : ldi(p); }

static void st_elem(uint8_t *p, uint32_t dt, int64_t v) {
    if (eight_bit(dt)) st_8bit(p, dt, clamp64(v, type_min(dt), type_max(dt)));
    else sti(p, sat32(v));
}

#define QADD_PARAMS 12u /* VADD with REQUANT: a_mult, b_mult, bias (float32) at QUANT_ADDR */

static int32_t op_binary(machine_t *m, const insn_t *i) {
    const uint32_t *r = m->reg;
    const uint32_t outer = r[AOTC_ACCEL_SIM_R_V_OUTER], inner = r[AOTC_ACCEL_SIM_R_V_INNER];
    const uint64_t so = r[AOTC_ACCEL_SIM_R_VB_SO], si = r[AOTC_ACCEL_SIM_R_VB_SI];
    const uint32_t dt = i->flags & AOTC_ACCEL_SIM_DTYPE_MASK;
    const uint32_t esz = eight_bit(dt) ? 1u : 4u;
    const int clip = (i->flags & AOTC_ACCEL_SIM_F_CLIP) != 0, quant = (i->flags & AOTC_ACCEL_SIM_F_REQUANT) != 0;
    uint64_t n, o, k;
    range_t reads[3], out;
    float am = 0.0f, bm = 0.0f, qbias = 0.0f, qlo = 0.0f, qhi = 0.0f;
    int32_t rc;
    if (!dim_ok(outer, 1) || !dim_ok(inner, 1)) return AOTC_ACCEL_SIM_E_OPERAND;
    n = (uint64_t)outer * inner;
    reads[0] = spm_range(i->b, smul(n, esz));
    reads[1] = spm_range(i->c, smul(sadd(sadd(smul(outer - 1, so), smul(inner - 1, si)), 1), esz));
    reads[2] = spm_range(r[AOTC_ACCEL_SIM_R_QUANT_ADDR], QADD_PARAMS);
    out = spm_range(i->d, smul(n, esz));
    if ((rc = check_spm(m, &reads[0], esz)) || (rc = check_spm(m, &reads[1], esz)) || (rc = check_spm(m, &out, esz)))
        return rc;
    if (quant && (rc = check_spm(m, &reads[2], 4))) return rc;
    if ((rc = check_alias(&out, &reads[0], 1))) return rc;
    if ((rc = check_alias(&out, &reads[1], so == inner && si == 1))) return rc;
    if (quant && (rc = check_alias(&out, &reads[2], 0))) return rc;
    /* a quantized add computes in 32-bit floats: one element per lane */
    rc = schedule(m, UNIT_VEC, m->h->op_setup + cdiv(n, quant ? (uint64_t)m->h->vec_lanes : lanes(m, dt)), reads,
                  quant ? 3u : 2u, &out);
    if (rc) return rc;
    touch_spm(m, &reads[0]);
    touch_spm(m, &reads[1]);
    if (quant) {
        int64_t lo, hi;
        touch_spm(m, &reads[2]);
        am = ldf(m->spm + reads[2].lo);
        bm = ldf(m->spm + reads[2].lo + 4u);
        qbias = ldf(m->spm + reads[2].lo + 8u);
        out_range(m, i->flags, &lo, &hi);
        qlo = (float)lo;
        qhi = (float)hi;
    }
    touch_spm(m, &out);
    for (o = 0; o < outer; ++o) {
        for (k = 0; k < inner; ++k) {
            const uint8_t *pa = m->spm + i->b + (o * inner + k) * esz;
            const uint8_t *pb = m->spm + i->c + (o * so + k * si) * esz;
            uint8_t *py = m->spm + i->d + (o * inner + k) * esz;
            if (dt == AOTC_ACCEL_SIM_F32) {
                const float a = ldf(pa), b = ldf(pb);
                float y = i->op == AOTC_ACCEL_SIM_OP_VADD ? a + b : i->op == AOTC_ACCEL_SIM_OP_VMUL ? a * b : (a > b ? a : b);
                if (clip) y = clampf(y, bits_f(r[AOTC_ACCEL_SIM_R_ACT_MIN]), bits_f(r[AOTC_ACCEL_SIM_R_ACT_MAX]));
                stf(py, y);
            } else if (quant) { /* onnxruntime's QLinearAdd: fma(a, a_mult, fma(b, b_mult, bias)), rounded */
                const float a = (float)ld_elem(pa, dt), b = (float)ld_elem(pb, dt);
                st_8bit(py, dt, round_even(clamp_lo_hi(fma32(a, am, fma32(b, bm, qbias)), qlo, qhi)));
            } else {
                const int64_t a = ld_elem(pa, dt), b = ld_elem(pb, dt);
                int64_t y = i->op == AOTC_ACCEL_SIM_OP_VADD ? a + b : i->op == AOTC_ACCEL_SIM_OP_VMUL ? a * b : (a > b ? a : b);
                if (clip) y = clamp64(y, (int32_t)r[AOTC_ACCEL_SIM_R_ACT_MIN], (int32_t)r[AOTC_ACCEL_SIM_R_ACT_MAX]);
                st_elem(py, dt, y);
            }
        }
    }
    return 0;
}

static int32_t op_clip(machine_t *m, const insn_t *i) {
    const uint32_t *r = m->reg;
    const uint32_t outer = r[AOTC_ACCEL_SIM_R_V_OUTER], inner = r[AOTC_ACCEL_SIM_R_V_INNER];
    const uint32_t dt = i->flags & AOTC_ACCEL_SIM_DTYPE_MASK;
    const uint32_t esz = eight_bit(dt) ? 1u : 4u;
    uint64_t n, k;
    range_t in, out;
    int32_t rc;
    if (!dim_ok(outer, 1) || !dim_ok(inner, 1)) return AOTC_ACCEL_SIM_E_OPERAND;
    n = (uint64_t)outer * inner;
    in = spm_range(i->b, smul(n, esz));
    out = spm_range(i->d, smul(n, esz));
    if ((rc = check_spm(m, &in, esz)) || (rc = check_spm(m, &out, esz)) || (rc = check_alias(&out, &in, 1))) return rc;
    rc = schedule(m, UNIT_VEC, m->h->op_setup + cdiv(n, lanes(m, dt)), &in, 1, &out);
    if (rc) return rc;
    touch_spm(m, &in);
    touch_spm(m, &out);
    for (k = 0; k < n; ++k) {
        const uint8_t *px = m->spm + i->b + k * esz;
        uint8_t *py = m->spm + i->d + k * esz;
        if (dt == AOTC_ACCEL_SIM_F32)
            stf(py, clampf(ldf(px), bits_f(r[AOTC_ACCEL_SIM_R_ACT_MIN]), bits_f(r[AOTC_ACCEL_SIM_R_ACT_MAX])));
        else
            st_elem(py, dt, clamp64(ld_elem(px, dt), (int32_t)r[AOTC_ACCEL_SIM_R_ACT_MIN], (int32_t)r[AOTC_ACCEL_SIM_R_ACT_MAX]));
    }
    return 0;
}

static int32_t op_requant(machine_t *m, const insn_t *i) {
    const uint32_t *r = m->reg;
    const uint32_t outer = r[AOTC_ACCEL_SIM_R_V_OUTER], inner = r[AOTC_ACCEL_SIM_R_V_INNER];
    uint64_t n, o, k;
    range_t reads[2], out;
    int32_t rc;
    if (!dim_ok(outer, 1) || !dim_ok(inner, 1)) return AOTC_ACCEL_SIM_E_OPERAND;
    if ((rc = check_out_zp(m, i))) return rc;
    n = (uint64_t)outer * inner;
    reads[0] = spm_range(i->b, smul(n, 4));
    reads[1] = spm_range(r[AOTC_ACCEL_SIM_R_QUANT_ADDR], table_bytes(i->flags, outer));
    out = spm_range(i->d, n);
    if ((rc = check_spm(m, &reads[0], 4)) || (rc = check_spm(m, &reads[1], 4)) || (rc = check_spm(m, &out, 1)) ||
        (rc = check_alias(&out, &reads[0], 0)) || (rc = check_alias(&out, &reads[1], 0)))
        return rc;
    rc = schedule(m, UNIT_VEC, m->h->op_setup + cdiv(n, lanes(m, AOTC_ACCEL_SIM_I32)), reads, 2, &out);
    if (rc) return rc;
    touch_spm(m, &reads[0]);
    touch_spm(m, &reads[1]);
    touch_spm(m, &out);
    for (o = 0; o < outer; ++o) {
        for (k = 0; k < inner; ++k)
            st_8bit(m->spm + i->d + o * inner + k, out_type(i->flags),
                    requant_out(m, i->flags, ldi(m->spm + i->b + 4u * (o * inner + k)), m->spm + reads[1].lo,
                                (uint32_t)o, outer));
    }
    return 0;
}

/* --- the device --------------------------------------------------------------------------- */

static int32_t run(machine_t *m) {
    const header_t *h = m->h;
    uint32_t pc;
    for (pc = 0; pc < h->n_insns; ++pc) {
        insn_t i;
        int32_t rc = 0;
        decode(h->insns + (uint64_t)AOTC_ACCEL_SIM_INSN_BYTES * pc, &i);
        m->st.instructions += 1;
        switch (i.op) {
        case AOTC_ACCEL_SIM_OP_SET: {
            const uint32_t v[3] = {i.b, i.c, i.d};
            uint32_t k;
            for (k = 0; k < i.flags; ++k) m->reg[i.a + k] = v[k];
            m->issue += 1;
            break;
        }
        case AOTC_ACCEL_SIM_OP_LOAD:
        case AOTC_ACCEL_SIM_OP_STORE: rc = op_dma(m, &i); break;
        case AOTC_ACCEL_SIM_OP_CONV: rc = op_conv(m, &i); break;
        case AOTC_ACCEL_SIM_OP_MATMUL: rc = op_matmul(m, &i); break;
        case AOTC_ACCEL_SIM_OP_POOL: rc = op_pool(m, &i); break;
        case AOTC_ACCEL_SIM_OP_VADD:
        case AOTC_ACCEL_SIM_OP_VMUL:
        case AOTC_ACCEL_SIM_OP_VMAX: rc = op_binary(m, &i); break;
        case AOTC_ACCEL_SIM_OP_VCLIP: rc = op_clip(m, &i); break;
        case AOTC_ACCEL_SIM_OP_VREQ: rc = op_requant(m, &i); break;
        case AOTC_ACCEL_SIM_OP_END:
            m->issue += 1;
            pc = h->n_insns;
            break;
        default: rc = AOTC_ACCEL_SIM_E_OPCODE; break; /* unreachable after validation */
        }
        if (rc) return rc;
    }
    m->st.cycles = max64(m->issue, m->last_end);
    return 0;
}

int32_t aotc_accel_sim_execute(const uint8_t *program, uint64_t program_bytes, const aotc_accel_sim_buffer *bound,
                               uint32_t n_bound, uint8_t *spm, uint64_t spm_bytes, aotc_accel_sim_stats *stats) {
    header_t h;
    machine_t m;
    uint32_t k;
    int32_t rc = validate(program, program_bytes, &h);
    if (stats) memset(stats, 0, sizeof *stats);
    if (rc) return rc;
    if (n_bound + 1u != h.n_regions || (n_bound > 0 && bound == 0) || (h.spm_bytes > 0 && spm == 0) ||
        spm_bytes < h.spm_bytes)
        return AOTC_ACCEL_SIM_E_BINDING;
    memset(&m, 0, sizeof m);
    m.h = &h;
    m.spm = spm;
    m.spm_bytes = h.spm_bytes;
    m.rbase[0] = h.consts;
    m.rbytes[0] = h.const_bytes;
    for (k = 1; k < h.n_regions; ++k) {
        region_t r;
        read_region(&h, k, &r);
        if (bound[k - 1].bytes < r.bytes || (r.bytes > 0 && bound[k - 1].data == 0)) return AOTC_ACCEL_SIM_E_BINDING;
        m.rbase[k] = (const uint8_t *)bound[k - 1].data;
        m.wbase[k] = writable(r.kind) ? (uint8_t *)bound[k - 1].data : 0;
        m.rbytes[k] = r.bytes;
    }
    rc = run(&m);
    if (stats) *stats = m.st;
    return rc;
}

/* --- the driver --------------------------------------------------------------------------- */

static uint64_t spm_reserve(uint32_t spm_bytes) { return ((uint64_t)spm_bytes + 63u) / 64u * 64u; }

uint64_t aotc_accel_sim_workspace_bytes(const uint8_t *program, uint64_t program_bytes) {
    header_t h;
    region_t last;
    if (validate(program, program_bytes, &h)) return 0;
    read_region(&h, h.n_regions - 1u, &last);
    return spm_reserve(h.spm_bytes) + (last.kind == AOTC_ACCEL_SIM_SCRATCH ? last.bytes : 0u);
}

/* 0 when t is a compact tensor of region r's dtype and shape. */
static int32_t check_tensor(const DLTensor *t, const region_t *r) {
    uint32_t d;
    int64_t expect = 1;
    if (t == 0 || (t->data == 0 && r->bytes > 0) || t->device.device_type != kDLCPU || t->ndim != r->ndim ||
        t->dtype.code != r->code ||
        t->dtype.bits != r->bits || t->dtype.lanes != 1 || (t->ndim > 0 && t->shape == 0))
        return AOTC_ACCEL_SIM_E_BINDING;
    for (d = 0; d < r->ndim; ++d)
        if (t->shape[d] != (int64_t)r->shape[d]) return AOTC_ACCEL_SIM_E_BINDING;
    if (t->strides != 0) { /* compact row-major strides are fine too */
        for (d = r->ndim; d-- > 0;) {
            if (r->shape[d] != 1 && t->strides[d] != expect) return AOTC_ACCEL_SIM_E_BINDING;
            expect *= (int64_t)r->shape[d];
        }
    }
    return 0;
}

int32_t aotc_accel_sim_invoke(const uint8_t *program, uint64_t program_bytes, const DLTensor *const *inputs,
                              uint32_t n_inputs, DLTensor *const *outputs, uint32_t n_outputs, void *workspace,
                              uint64_t workspace_bytes, aotc_accel_sim_stats *stats) {
    aotc_accel_sim_buffer bound[AOTC_ACCEL_SIM_MAX_REGIONS];
    header_t h;
    uint32_t k, n_in = 0, n_out = 0;
    uint8_t *ws = (uint8_t *)workspace;
    int32_t rc = validate(program, program_bytes, &h);
    if (stats) memset(stats, 0, sizeof *stats);
    if (rc) return rc;
    if (workspace_bytes < aotc_accel_sim_workspace_bytes(program, program_bytes) || (workspace_bytes > 0 && ws == 0))
        return AOTC_ACCEL_SIM_E_BINDING;
    for (k = 1; k < h.n_regions; ++k) {
        region_t r;
        const DLTensor *t = 0;
        read_region(&h, k, &r);
        if (r.kind == AOTC_ACCEL_SIM_SCRATCH) {
            bound[k - 1].data = ws + spm_reserve(h.spm_bytes);
            bound[k - 1].bytes = r.bytes;
            continue;
        }
        if (r.kind == AOTC_ACCEL_SIM_INPUT) {
            if (inputs && n_in < n_inputs) t = inputs[n_in];
            n_in += 1;
        } else {
            if (outputs && n_out < n_outputs) t = outputs[n_out];
            n_out += 1;
        }
        rc = check_tensor(t, &r);
        if (rc) return rc;
        bound[k - 1].data = t->data ? (uint8_t *)t->data + t->byte_offset : 0;
        bound[k - 1].bytes = r.bytes;
    }
    if (n_in != n_inputs || n_out != n_outputs) return AOTC_ACCEL_SIM_E_BINDING;
    return aotc_accel_sim_execute(program, program_bytes, bound, h.n_regions - 1u, ws, h.spm_bytes, stats);
}
