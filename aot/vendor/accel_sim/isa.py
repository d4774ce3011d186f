"""The accel_sim instruction set and program format, as Python values (spec: docs/accel_sim-isa.md).

The C runtime (runtime_c/vendor/accel_sim/aotc_accel_sim.h) defines the same numbers; a test
reads that header and checks every one against this module, so the two cannot drift apart.

A program is one little-endian byte string:

    header (64 B) | region table (32 B per region) | instructions (16 B each) | constants

`Program` holds the parts and serialises them (`to_bytes`, with the CRC-32); `ProgramBuilder`
is the assembler the compiler and the tests use: it tracks register values so a SET is only
emitted when a register changes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from aot.vendor.accel_sim.device import DeviceConfig

MAGIC = 0x4D495341  # "ASIM"
VERSION = 1
HEADER_BYTES = 64
REGION_BYTES = 32
INSN_BYTES = 16
MAX_REGIONS = 64
MAX_NDIM = 6
MAX_SPM = 16 * 1024 * 1024
MAX_DIM = 0xFFFFFF
NUM_REGS = 32


class Err(IntEnum):
    """Error codes returned by the runtime (0 is success)."""

    TRUNCATED = 0x41530001
    MAGIC = 0x41530002
    VERSION = 0x41530003
    HEADER = 0x41530004
    CHECKSUM = 0x41530005
    REGIONS = 0x41530006
    BINDING = 0x41530007
    OPCODE = 0x41530008
    OPERAND = 0x41530009
    DMA_BOUNDS = 0x4153000A
    SPM_BOUNDS = 0x4153000B
    ALIGN = 0x4153000C
    OVERLAP = 0x4153000D
    NO_END = 0x4153000E
    READONLY = 0x4153000F
    WATCHDOG = 0x41530010


class Kind(IntEnum):
    """Region kinds: where a main-memory region comes from."""

    CONST = 0  # the program's constants section (read-only)
    INPUT = 1  # a function input (read-only)
    OUTPUT = 2  # a function output
    SCRATCH = 3  # intermediates, in the workspace after the scratchpad


class Op(IntEnum):
    SET = 0x01
    LOAD = 0x02
    STORE = 0x03
    CONV = 0x10
    MATMUL = 0x11
    POOL = 0x20
    VADD = 0x30
    VMUL = 0x31
    VMAX = 0x32
    VCLIP = 0x33
    VREQ = 0x34
    END = 0x3F


class DType(IntEnum):
    """Flags bits 0-1: the element type of an instruction's activations (CONV/MATMUL: weights are
    float32 for F32 and int8 for both 8-bit types)."""

    F32 = 0
    I8 = 1
    I32 = 2
    U8 = 3


EIGHT_BIT = (DType.I8, DType.U8)
INT_RANGE = {DType.I8: (-128, 127), DType.U8: (0, 255), DType.I32: (-(1 << 31), (1 << 31) - 1)}


DTYPE_MASK = 0x03
F_ACC = 0x04  # CONV/MATMUL: accumulate onto the output
F_AVG = 0x04  # POOL: average instead of max
F_BIAS = 0x08  # CONV/MATMUL: add bias[channel]
F_CLIP = 0x10  # clamp to [ACT_MIN, ACT_MAX]
F_REQUANT = 0x20  # CONV/MATMUL/POOL 8-bit: requantise to 8 bits; VADD 8-bit: quantized add
F_FSCALE = 0x40  # with REQUANT: the table at QUANT_ADDR holds float32 scales (else fixed-point mult, shift)


class Reg(IntEnum):
    """Configuration registers, 32 bits each; pairs pack (y/h low 16 bits, x/w high 16 bits)."""

    DMA_N1 = 0
    DMA_N2 = 1
    DMA_EXT_S1 = 2
    DMA_EXT_S2 = 3
    DMA_SPM_S1 = 4
    DMA_SPM_S2 = 5
    IFM_C = 6
    IFM_H = 7
    IFM_W = 8
    OFM_C = 9
    OFM_H = 10
    OFM_W = 11
    KERNEL = 12
    STRIDE = 13
    PAD = 14
    DILATION = 15
    GROUPS = 16
    BIAS_ADDR = 17
    QUANT_ADDR = 18
    IFM_ZP = 19
    OFM_ZP = 20
    ACT_MIN = 21
    ACT_MAX = 22
    MM_M = 23
    MM_N = 24
    MM_K = 25
    V_OUTER = 26
    V_INNER = 27
    VB_SO = 28
    VB_SI = 29


# DLPack dtype codes, as the region table stores them.
DL_CODES = {"int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64), "uint8": (1, 8),
            "float32": (2, 32), "float64": (2, 64)}

_HEADER = struct.Struct("<IHHIIIIIIHHHHHHHHHHIQ")
_REGION = struct.Struct("<BBBBI6I")
_INSN = struct.Struct("<BBHIII")
assert _HEADER.size == HEADER_BYTES and _REGION.size == REGION_BYTES and _INSN.size == INSN_BYTES


def pair(lo: int, hi: int) -> int:
    """Two 16-bit fields in one register (KERNEL, STRIDE, PAD, DILATION): h/y low, w/x high."""
    return (int(lo) & 0xFFFF) | ((int(hi) & 0xFFFF) << 16)


def f32_bits(v: float) -> int:
    """A float32 as the register value holding it (ACT_MIN/ACT_MAX of float ops)."""
    return int(np.array(v, dtype=np.float32).view(np.uint32))


def i32_bits(v: int) -> int:
    return int(v) & 0xFFFFFFFF


@dataclass(frozen=True)
class Insn:
    op: int
    flags: int = 0
    a: int = 0
    b: int = 0
    c: int = 0
    d: int = 0

    def encode(self) -> bytes:
        return _INSN.pack(self.op, self.flags, self.a, self.b, self.c, self.d)

    @staticmethod
    def decode(raw: bytes) -> Insn:
        return Insn(*_INSN.unpack(raw))


@dataclass(frozen=True)
class Region:
    """One entry of the region table: a main-memory buffer the program reads or writes."""

    kind: Kind
    dtype: str  # numpy name; CONST and SCRATCH are uint8
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    def encode(self) -> bytes:
        code, bits = DL_CODES[self.dtype]
        shape = list(self.shape) + [0] * (MAX_NDIM - len(self.shape))
        return _REGION.pack(int(self.kind), code, bits, len(self.shape), self.nbytes, *shape)


@dataclass
class Program:
    """An accel_sim program: what the device runs, self-contained but for its bound regions."""

    config: DeviceConfig
    regions: list[Region]  # regions[0] is CONST; then inputs, outputs, at most one SCRATCH
    insns: list[Insn]
    consts: bytes
    spm_bytes: int  # scratchpad the program uses (<= config.spm_bytes)
    cycle_limit: int = 1 << 62

    def to_bytes(self) -> bytes:
        c = self.config
        body = (b"".join(r.encode() for r in self.regions) + b"".join(i.encode() for i in self.insns)
                + bytes(self.consts))
        total = HEADER_BYTES + len(body)
        header = _HEADER.pack(MAGIC, VERSION, HEADER_BYTES, total, 0, len(self.insns), len(self.consts),
                              self.spm_bytes, c.spm_bytes, len(self.regions), 0, c.dma_bytes_per_cycle,
                              c.dma_setup_cycles, c.mac_rows, c.mac_cols, c.vec_lanes, c.op_setup_cycles,
                              c.queue_depth, 0, 0, self.cycle_limit)
        return with_checksum(header + body)


def with_checksum(blob: bytes) -> bytes:
    """`blob` with its header's CRC-32 field set (CRC of the program with that field zero)."""
    zeroed = blob[:12] + b"\0\0\0\0" + blob[16:]
    return blob[:12] + struct.pack("<I", zlib.crc32(zeroed)) + blob[16:]


@dataclass
class Header:
    magic: int
    version: int
    header_bytes: int
    total_bytes: int
    checksum: int
    n_insns: int
    const_bytes: int
    spm_bytes: int
    spm_capacity: int
    n_regions: int
    reserved0: int
    dma_bytes_per_cycle: int
    dma_setup_cycles: int
    mac_rows: int
    mac_cols: int
    vec_lanes: int
    op_setup_cycles: int
    queue_depth: int
    reserved1: int
    reserved2: int
    cycle_limit: int

    @staticmethod
    def parse(blob: bytes) -> Header:
        return Header(*_HEADER.unpack(blob[:HEADER_BYTES]))

    @property
    def config(self) -> DeviceConfig:
        return DeviceConfig(spm_bytes=self.spm_capacity, dma_bytes_per_cycle=self.dma_bytes_per_cycle,
                            dma_setup_cycles=self.dma_setup_cycles, mac_rows=self.mac_rows, mac_cols=self.mac_cols,
                            vec_lanes=self.vec_lanes, op_setup_cycles=self.op_setup_cycles,
                            queue_depth=self.queue_depth)


def parse_regions(blob: bytes, n: int) -> list[tuple[int, int, int, int, int, tuple[int, ...]]]:
    """Raw region entries: (kind, code, bits, ndim, bytes, shape)."""
    out = []
    for k in range(n):
        kind, code, bits, ndim, nbytes, *shape = _REGION.unpack_from(blob, HEADER_BYTES + REGION_BYTES * k)
        out.append((kind, code, bits, ndim, nbytes, tuple(shape)))
    return out


@dataclass
class ProgramBuilder:
    """The assembler: emits instructions, skipping SETs of registers that already hold the value.

    Registers start at zero, as on the device."""

    config: DeviceConfig = field(default_factory=DeviceConfig)
    insns: list[Insn] = field(default_factory=list)
    regs: list[int] = field(default_factory=lambda: [0] * NUM_REGS)

    def set(self, **values: int) -> None:
        """SET registers by name (Reg members), e.g. set(IFM_C=3, IFM_H=8); one SET per run of
        up to three consecutive registers that change."""
        changed = sorted((int(Reg[k]), int(v) & 0xFFFFFFFF) for k, v in values.items()
                         if self.regs[int(Reg[k])] != int(v) & 0xFFFFFFFF)
        k = 0
        while k < len(changed):
            run = [changed[k]]
            while len(run) < 3 and k + len(run) < len(changed) and changed[k + len(run)][0] == run[-1][0] + 1:
                run.append(changed[k + len(run)])
            vals = [v for _, v in run] + [0] * (3 - len(run))
            self.insns.append(Insn(Op.SET, len(run), run[0][0], *vals))
            for r, v in run:
                self.regs[r] = v
            k += len(run)

    def emit(self, op: int, flags: int = 0, a: int = 0, b: int = 0, c: int = 0, d: int = 0) -> None:
        self.insns.append(Insn(int(op), int(flags), int(a), int(b), int(c), int(d)))

    def dma(self, op: Op, region: int, ext: int, spm: int, row_bytes: int, n1: int = 1, ext_s1: int = 0,
            spm_s1: int = 0, n2: int = 1, ext_s2: int = 0, spm_s2: int = 0) -> None:
        """LOAD or STORE of n2 planes x n1 rows x row_bytes; strides of unused dimensions are
        left as they are (they do not matter when the count is 1)."""
        regs = {"DMA_N1": n1, "DMA_N2": n2}
        if n1 > 1:
            regs.update(DMA_EXT_S1=ext_s1, DMA_SPM_S1=spm_s1)
        if n2 > 1:
            regs.update(DMA_EXT_S2=ext_s2, DMA_SPM_S2=spm_s2)
        self.set(**regs)
        self.emit(op, 0, region, ext, spm, row_bytes)

    def end(self) -> None:
        self.emit(Op.END)
