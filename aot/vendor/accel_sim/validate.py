"""The accel_sim program's static checks (the C runtime's aotc_accel_sim_validate, check for check and in
the same order), and what both they and the reference model's run-time checks count in: saturating
sizes and the address ranges an instruction reads and writes."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from aot.vendor.accel_sim.isa import (
    DTYPE_MASK,
    EIGHT_BIT,
    F_ACC,
    F_AVG,
    F_CLIP,
    F_FSCALE,
    F_REQUANT,
    HEADER_BYTES,
    INSN_BYTES,
    MAGIC,
    MAX_NDIM,
    MAX_REGIONS,
    MAX_SPM,
    NUM_REGS,
    REGION_BYTES,
    VERSION,
    DType,
    Err,
    Header,
    Insn,
    Kind,
    Op,
    parse_regions,
)

MAX_QUEUE = 16
SAT = 1 << 40
SPM = 0  # hazard space of the scratchpad; main-memory region k is space 1 + k


class SimError(Exception):
    """The device refused the program; `code` is the runtime's error code."""

    def __init__(self, code: Err, why: str = ""):
        self.code = Err(code)
        super().__init__(f"{self.code.name}" + (f": {why}" if why else ""))


def smul(a: int, b: int) -> int:
    if a == 0 or b == 0:
        return 0
    if a >= SAT or b >= SAT or a > SAT // b:
        return SAT
    return a * b


def sadd(a: int, b: int) -> int:
    return SAT if a >= SAT or b >= SAT or a + b >= SAT else a + b


@dataclass
class Range:
    space: int
    lo: int
    hi: int

    def overlaps(self, o: Range) -> bool:
        return self.space == o.space and self.lo < self.hi and o.lo < o.hi and self.lo < o.hi and o.lo < self.hi


def spm_range(addr: int, nbytes: int) -> Range:
    return Range(SPM, addr, addr if nbytes == 0 else sadd(addr, nbytes))


@dataclass
class Parsed:
    header: Header
    regions: list[tuple[int, int, int, int, int, tuple[int, ...]]]
    insns: list[Insn]
    consts: bytes


def validate(blob: bytes) -> Parsed:
    """The static checks (aotc_accel_sim_validate); raises SimError."""
    blob = bytes(blob)
    if len(blob) < HEADER_BYTES:
        raise SimError(Err.TRUNCATED, "shorter than a header")
    h = Header.parse(blob)
    if h.magic != MAGIC:
        raise SimError(Err.MAGIC)
    if h.version != VERSION:
        raise SimError(Err.VERSION)
    if h.header_bytes != HEADER_BYTES:
        raise SimError(Err.HEADER, "header_bytes")
    total = HEADER_BYTES + REGION_BYTES * h.n_regions + INSN_BYTES * h.n_insns + h.const_bytes
    if h.total_bytes != total:
        raise SimError(Err.HEADER, "total_bytes")
    if len(blob) < total:
        raise SimError(Err.TRUNCATED)
    if len(blob) > total:
        raise SimError(Err.HEADER, "longer than total_bytes")
    if zlib.crc32(blob[:12] + b"\0\0\0\0" + blob[16:]) != h.checksum:
        raise SimError(Err.CHECKSUM)
    if h.reserved0 or h.reserved1 or h.reserved2:
        raise SimError(Err.HEADER, "reserved fields")
    if h.spm_capacity > MAX_SPM or h.spm_bytes > h.spm_capacity:
        raise SimError(Err.HEADER, "scratchpad size")
    if (0 in (h.dma_bytes_per_cycle, h.mac_rows, h.mac_cols, h.vec_lanes, h.queue_depth, h.cycle_limit)
            or h.queue_depth > MAX_QUEUE):
        raise SimError(Err.HEADER, "cost parameters")
    regions = parse_regions(blob, h.n_regions)
    _check_regions(h, regions)
    start = HEADER_BYTES + REGION_BYTES * h.n_regions
    insns = [Insn.decode(blob[start + INSN_BYTES * k: start + INSN_BYTES * (k + 1)]) for k in range(h.n_insns)]
    for i in insns:
        _check_insn(h, regions, i)
    if not insns or insns[-1].op != Op.END:
        raise SimError(Err.NO_END)
    return Parsed(h, regions, insns, blob[start + INSN_BYTES * h.n_insns:])


def _check_regions(h: Header, regions: list) -> None:
    if not 1 <= h.n_regions <= MAX_REGIONS:
        raise SimError(Err.REGIONS, "count")
    prev = -1
    for k, (kind, code, bits, ndim, nbytes, shape) in enumerate(regions):
        if kind > Kind.SCRATCH or kind < prev or (k == 0) != (kind == Kind.CONST):
            raise SimError(Err.REGIONS, f"region {k} kind")
        if kind == Kind.SCRATCH and prev == Kind.SCRATCH:
            raise SimError(Err.REGIONS, "two scratch regions")
        prev = kind
        if code > 2 or bits not in (8, 16, 32, 64) or ndim > MAX_NDIM:
            raise SimError(Err.REGIONS, f"region {k} dtype")
        size = bits // 8
        for d in range(MAX_NDIM):
            if d < ndim:
                size = smul(size, shape[d])
            elif shape[d] != 0:
                raise SimError(Err.REGIONS, f"region {k} shape")
        if size != nbytes or (k == 0 and nbytes != h.const_bytes):
            raise SimError(Err.REGIONS, f"region {k} size")


def writable_kind(kind: int) -> bool:
    """Whether a region of this kind may be stored to."""
    return kind in (Kind.OUTPUT, Kind.SCRATCH)


def _check_insn(h: Header, regions: list, i: Insn) -> None:
    dt = i.flags & DTYPE_MASK
    bad = SimError(Err.OPERAND, f"{i}")
    if i.op == Op.SET:
        if not 1 <= i.flags <= 3 or i.a + i.flags > NUM_REGS or (i.flags < 3 and i.d) or (i.flags < 2 and i.c):
            raise bad
    elif i.op in (Op.LOAD, Op.STORE):
        if i.flags:
            raise bad
        if i.a >= h.n_regions:
            raise SimError(Err.DMA_BOUNDS, "no such region")
        if i.op == Op.STORE and not writable_kind(regions[i.a][0]):
            raise SimError(Err.READONLY)
    elif i.op in (Op.CONV, Op.MATMUL):
        if i.flags & ~0x7F or dt == DType.I32 or i.a:
            raise bad
        if i.flags & F_REQUANT and (dt not in EIGHT_BIT or i.flags & F_ACC):
            raise bad
        if i.flags & F_FSCALE and not i.flags & F_REQUANT:
            raise bad
    elif i.op == Op.POOL:
        if i.flags & ~(DTYPE_MASK | F_AVG | F_CLIP | F_REQUANT | F_FSCALE) or dt == DType.I32 or i.a or i.c:
            raise bad
        if i.flags & (F_REQUANT | F_CLIP) and (dt not in EIGHT_BIT or i.flags & F_AVG or not i.flags & F_REQUANT):
            raise bad
        if i.flags & F_FSCALE and not i.flags & F_REQUANT:
            raise bad
    elif i.op in (Op.VADD, Op.VMUL, Op.VMAX):
        if i.flags & ~(DTYPE_MASK | F_CLIP | F_REQUANT | F_FSCALE) or i.a:
            raise bad
        if i.flags & (F_REQUANT | F_FSCALE) and (
                i.op != Op.VADD or dt not in EIGHT_BIT or (i.flags & (F_REQUANT | F_FSCALE)) != F_REQUANT | F_FSCALE):
            raise bad
    elif i.op == Op.VCLIP:
        if i.flags & ~DTYPE_MASK or i.a or i.c:
            raise bad
    elif i.op == Op.VREQ:
        if i.flags & ~(DTYPE_MASK | F_CLIP | F_FSCALE) or dt == DType.I32 or i.a or i.c:
            raise bad
    elif i.op == Op.END:
        if i.flags or i.a or i.b or i.c or i.d:
            raise bad
    else:
        raise SimError(Err.OPCODE, f"opcode {i.op:#x}")
