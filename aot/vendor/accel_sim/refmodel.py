"""A reference model of the accel_sim device in numpy: the ISA's semantics, executable.

It mirrors runtime_c/vendor/accel_sim/accel_sim.c check for check (same error codes, in the
same order) and cycle for cycle (same cost model), while computing with whole-array numpy
operations, so it reads as the specification of each instruction. Tests run programs through
both and compare; the compiler runs it without data (`timing`) to report a function's cycles,
DMA traffic and scratchpad use, which do not depend on the data.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from aot.qmath import fma32
from aot.vendor.accel_sim.isa import (
    DTYPE_MASK,
    EIGHT_BIT,
    F_ACC,
    F_AVG,
    F_BIAS,
    F_CLIP,
    F_FSCALE,
    F_REQUANT,
    INT_RANGE,
    MAX_DIM,
    NUM_REGS,
    DType,
    Err,
    Header,
    Insn,
    Op,
    Reg,
)
from aot.vendor.accel_sim.validate import (
    MAX_QUEUE,
    SPM,
    Range,
    SimError,
    sadd,
    smul,
    spm_range,
    validate,
    writable_kind,
)

RING = 32
DMA, MAC, VEC = 0, 1, 2
_NP = {DType.F32: np.float32, DType.I8: np.int8, DType.I32: np.int32, DType.U8: np.uint8}


@dataclass
class Stats:
    """What a run did (the C runtime's aotc_accel_sim_stats)."""

    cycles: int = 0
    dma_bytes: int = 0
    macs: int = 0
    int8_macs: int = 0  # of which with 8-bit operands (the array does four times as many per cycle)
    mac_slots: int = 0
    dma_busy_cycles: int = 0
    mac_busy_cycles: int = 0
    vec_busy_cycles: int = 0
    spm_peak_bytes: int = 0
    instructions: int = 0


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _dim_ok(v: int, lo: int) -> bool:
    return lo <= v <= MAX_DIM


def _lo16(v: int) -> int:
    return v & 0xFFFF


def _hi16(v: int) -> int:
    return v >> 16


def _s32(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


def _f32(v: int) -> np.float32:
    return np.array(v, dtype=np.uint32).view(np.float32)[()]


def requantize(x: np.ndarray, mult: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplier, elementwise (int64 arrays; the shift is clamped
    to [-31, 30] and x << left saturates to int32, where TFLite leaves both undefined)."""
    x, mult = np.asarray(x, np.int64), np.asarray(mult, np.int64)
    shift = np.clip(np.asarray(shift, np.int64), -31, 30)
    left, right = np.maximum(shift, 0), np.maximum(-shift, 0)
    x = np.clip(x << left, -(1 << 31), (1 << 31) - 1)
    ab = x * mult
    v = ab + np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    hi = np.where(v >= 0, v // (1 << 31), -((-v) // (1 << 31)))  # C division: toward zero
    hi = np.where((x == -(1 << 31)) & (mult == -(1 << 31)), (1 << 31) - 1, hi)
    mask = (np.int64(1) << right) - 1
    rem = hi & mask
    threshold = (mask >> 1) + (hi < 0)
    return (hi >> right) + (rem > threshold)


def round_half_even(f: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(f, np.float32)).astype(np.int64)


def clamp_f32(f: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """min(max(f, lo), hi) in float32, hi winning when they cross; a NaN becomes lo (then hi if lo > hi)."""
    lo, hi = np.float32(lo), np.float32(hi)
    f = np.where(np.asarray(f, np.float32) > lo, f, lo)
    return np.where(f < hi, f, hi).astype(np.float32)


def requantize_float(acc: np.ndarray, scale: np.ndarray, lo: int, hi: int, zp: int) -> np.ndarray:
    """The float output stage (MLAS's requantisation): zp + round_half_even(clamp((float)acc * scale,
    lo - zp, hi - zp)); acc int32 values, scale float32, [lo, hi] the output range."""
    with np.errstate(all="ignore"):
        f = np.asarray(acc, np.int64).astype(np.int32).astype(np.float32) * np.asarray(scale, np.float32)
    return zp + round_half_even(clamp_f32(f, np.float32(lo - zp), np.float32(hi - zp)))


@dataclass
class Machine:
    """Registers, memories and the cost model's state while a program runs."""

    h: Header
    mem: list[np.ndarray | None]  # uint8 views of each region (None: timing only)
    writable: list[bool]
    sizes: list[int]
    spm: np.ndarray | None
    reg: list[int] = field(default_factory=lambda: [0] * NUM_REGS)
    issue: int = 0
    unit_free: list[int] = field(default_factory=lambda: [0, 0, 0])
    queue: list[list[int]] = field(default_factory=lambda: [[0] * MAX_QUEUE for _ in range(3)])
    queued: list[int] = field(default_factory=lambda: [0, 0, 0])
    ring: deque = field(default_factory=deque)  # (end, write range or None, read ranges) of recent ops
    floor: int = 0
    last_end: int = 0
    st: Stats = field(default_factory=Stats)
    spm_access_bytes: int = 0  # bytes each unit instruction reads or writes in the scratchpad (energy.py)

    @property
    def functional(self) -> bool:
        return self.spm is not None

    # --- cost model -------------------------------------------------------------------
    def schedule(self, unit: int, dur: int, reads: list[Range], write: Range) -> None:
        q = self.h.queue_depth
        slot = self.queued[unit] % q
        t = self.issue
        if self.queued[unit] >= q:
            t = max(t, self.queue[unit][slot])
        start = max(t, self.unit_free[unit], self.floor)
        w = (write.space, write.lo, write.hi) if write.lo < write.hi else None
        rs = tuple((r.space, r.lo, r.hi) for r in reads if r.lo < r.hi)
        self.spm_access_bytes += sum(r[2] - r[1] for r in rs if r[0] == SPM) + (w[2] - w[1] if w and w[0] == SPM else 0)
        for end, ow, ors in self.ring:
            if end <= start:  # finished before this could start anyway
                continue
            hit = w is not None and (
                (ow is not None and w[0] == ow[0] and w[1] < ow[2] and ow[1] < w[2])
                or any(w[0] == r[0] and w[1] < r[2] and r[1] < w[2] for r in ors))
            if hit or (ow is not None and any(r[0] == ow[0] and r[1] < ow[2] and ow[1] < r[2] for r in rs)):
                start = end
        end = start + dur
        if end > self.h.cycle_limit:
            raise SimError(Err.WATCHDOG)
        self.queue[unit][slot] = start
        self.queued[unit] += 1
        self.unit_free[unit] = end
        if len(self.ring) == RING:
            self.floor = max(self.floor, self.ring.popleft()[0])
        self.ring.append((end, w, rs))
        self.last_end = max(self.last_end, end)
        self.issue = t + 1
        if unit == DMA:
            self.st.dma_busy_cycles += dur
        elif unit == MAC:
            self.st.mac_busy_cycles += dur
        else:
            self.st.vec_busy_cycles += dur

    # --- scratchpad access --------------------------------------------------------------
    def check_spm(self, r: Range, align: int) -> None:
        if r.hi > self.h.spm_bytes:
            raise SimError(Err.SPM_BOUNDS, f"[{r.lo}, {r.hi}) past {self.h.spm_bytes}")
        if r.lo % align:
            raise SimError(Err.ALIGN, f"address {r.lo}")

    def touch(self, *ranges: Range) -> None:
        for r in ranges:
            if r.hi > r.lo:
                self.st.spm_peak_bytes = max(self.st.spm_peak_bytes, r.hi)

    def get(self, addr: int, dtype: type, n: int) -> np.ndarray:
        size = np.dtype(dtype).itemsize
        return self.spm[addr: addr + n * size].view(dtype).copy()

    def put(self, addr: int, values: np.ndarray) -> None:
        raw = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
        self.spm[addr: addr + raw.size] = raw

    def lanes(self, dt: int) -> int:
        return self.h.vec_lanes * (4 if dt in EIGHT_BIT else 1)

    def act_f32(self) -> tuple[np.float32, np.float32]:
        return _f32(self.reg[Reg.ACT_MIN]), _f32(self.reg[Reg.ACT_MAX])

    def act_int(self) -> tuple[int, int]:
        return _s32(self.reg[Reg.ACT_MIN]), _s32(self.reg[Reg.ACT_MAX])


def _check_alias(y: Range, x: Range, same_ok: bool) -> None:
    if y.overlaps(x) and not (same_ok and y.lo == x.lo and y.hi == x.hi):
        raise SimError(Err.OVERLAP)


def _clip_f32(y: np.ndarray, lo: np.float32, hi: np.float32) -> np.ndarray:
    """min(max(y, lo), hi) as ONNX Clip (hi wins when lo > hi), letting NaN through."""
    y = np.where(y < lo, lo, y)
    return np.where(y > hi, hi, y).astype(np.float32)


# --- instructions ----------------------------------------------------------------------------

def op_dma(m: Machine, i: Insn) -> None:
    load = i.op == Op.LOAD
    r = m.reg
    n1, n2 = r[Reg.DMA_N1], r[Reg.DMA_N2]
    es1, es2, ss1, ss2 = r[Reg.DMA_EXT_S1], r[Reg.DMA_EXT_S2], r[Reg.DMA_SPM_S1], r[Reg.DMA_SPM_S2]
    row = i.d
    if not (_dim_ok(n1, 1) and _dim_ok(n2, 1) and _dim_ok(row, 1)):
        raise SimError(Err.OPERAND, "DMA geometry")
    ext_hi = sadd(sadd(sadd(i.b, smul(n2 - 1, es2)), smul(n1 - 1, es1)), row)
    spm_hi = sadd(sadd(sadd(i.c, smul(n2 - 1, ss2)), smul(n1 - 1, ss1)), row)
    if ext_hi > m.sizes[i.a]:
        raise SimError(Err.DMA_BOUNDS, f"[{i.b}, {ext_hi}) past region {i.a} of {m.sizes[i.a]} bytes")
    if spm_hi > m.h.spm_bytes:
        raise SimError(Err.SPM_BOUNDS, f"DMA to [{i.c}, {spm_hi})")
    d1, d2 = (ss1, ss2) if load else (es1, es2)
    if (n1 > 1 and d1 < row) or (n2 > 1 and d2 < sadd(smul(n1 - 1, d1), row)):
        raise SimError(Err.OVERLAP, "DMA destination rows overlap")
    ext = Range(1 + i.a, i.b, ext_hi)
    spm = spm_range(i.c, spm_hi - i.c)
    dur = m.h.dma_setup_cycles + smul(n1 * n2, cdiv(row, m.h.dma_bytes_per_cycle))
    if load:
        m.schedule(DMA, dur, [ext], spm)
    else:
        m.schedule(DMA, dur, [spm], ext)
    if m.functional:
        planes, rows = np.meshgrid(np.arange(n2, dtype=np.int64), np.arange(n1, dtype=np.int64), indexing="ij")
        cols = np.arange(row, dtype=np.int64)
        e_idx = (i.b + planes * es2 + rows * es1)[..., None] + cols
        s_idx = (i.c + planes * ss2 + rows * ss1)[..., None] + cols
        if load:
            m.spm[s_idx] = m.mem[i.a][e_idx]
        else:
            m.mem[i.a][e_idx] = m.spm[s_idx]
    m.touch(spm)
    m.st.dma_bytes += n1 * n2 * row


def _table_bytes(flags: int, channels: int) -> int:
    """Bytes of the requantisation table at QUANT_ADDR: float32 scales, or int32 mult and shift."""
    return (4 if flags & F_FSCALE else 8) * channels


def _out_type(flags: int) -> DType:
    """The 8-bit type a requantising instruction writes (VREQ: 0 reads as int8)."""
    return DType.U8 if flags & DTYPE_MASK == DType.U8 else DType.I8


def _check_out_zp(m: Machine, i: Insn) -> None:
    """A float requantisation adds OFM_ZP last: it must lie in the output type's range."""
    if i.flags & F_FSCALE and i.op != Op.VADD:  # (a quantized VADD has its zero point in its bias)
        lo, hi = INT_RANGE[_out_type(i.flags)]
        if not lo <= _s32(m.reg[Reg.OFM_ZP]) <= hi:
            raise SimError(Err.OPERAND, "OFM_ZP outside the output type's range")


def _out_range(m: Machine, flags: int) -> tuple[int, int]:
    """The 8-bit output type's range, or with CLIP [ACT_MIN, ACT_MAX] each brought into it."""
    lo, hi = INT_RANGE[_out_type(flags)]
    if flags & F_CLIP:
        amin, amax = m.act_int()
        return min(max(amin, lo), hi), min(max(amax, lo), hi)
    return lo, hi


def _requant_stage(m: Machine, flags: int, acc: np.ndarray, table: int, channels: int, channel_axis: int) -> np.ndarray:
    """int32 values (int64 array) -> the 8-bit output type, per-channel parameters at `table`."""
    shape = [1] * acc.ndim
    shape[channel_axis] = channels
    t = _out_type(flags)
    zp = _s32(m.reg[Reg.OFM_ZP])
    if flags & F_FSCALE:
        scale = m.get(table, np.float32, channels).reshape(shape)
        lo, hi = _out_range(m, flags)
        y = requantize_float(acc, scale, lo, hi, zp)
    else:
        q = m.get(table, np.int32, 2 * channels).astype(np.int64)
        y = zp + requantize(acc, q[:channels].reshape(shape), q[channels:].reshape(shape))
        if flags & F_CLIP:
            y = np.clip(y, *m.act_int())
    lo, hi = INT_RANGE[t]
    return np.clip(y, lo, hi).astype(_NP[t])


def _mac_operands(m: Machine, i: Insn, in_elems: int, w_elems: int, out_elems: int, channels: int,
                  compute: int, macs: int) -> None:
    f32 = (i.flags & DTYPE_MASK) == DType.F32
    esz, osz = (4 if f32 else 1), (1 if i.flags & F_REQUANT else 4)
    reads = [spm_range(i.b, smul(in_elems, esz)), spm_range(i.c, smul(w_elems, esz))]
    if i.flags & F_BIAS:
        reads.append(spm_range(m.reg[Reg.BIAS_ADDR], 4 * channels))
    if i.flags & F_REQUANT:
        reads.append(spm_range(m.reg[Reg.QUANT_ADDR], _table_bytes(i.flags, channels)))
    out = spm_range(i.d, smul(out_elems, osz))
    for k, rr in enumerate(reads):
        m.check_spm(rr, esz if k < 2 else 4)
    m.check_spm(out, osz)
    for rr in reads:
        _check_alias(out, rr, False)
    m.schedule(MAC, m.h.op_setup_cycles + compute, reads, out)
    m.touch(*reads, out)
    m.st.macs += macs
    if not f32:
        m.st.int8_macs += macs
    m.st.mac_slots += smul(compute, m.h.mac_rows * m.h.mac_cols * (1 if f32 else 4))


def _output_stage(m: Machine, i: Insn, acc: np.ndarray, bias: np.ndarray | None, channel_axis: int,
                  channels: int) -> np.ndarray:
    """acc: float64 or int64 sums (ACC already added), channels along `channel_axis`."""
    shape = [1] * acc.ndim
    shape[channel_axis] = channels
    if (i.flags & DTYPE_MASK) == DType.F32:
        y = acc if bias is None else acc + bias.astype(np.float64).reshape(shape)
        y = y.astype(np.float32)
        return _clip_f32(y, *m.act_f32()) if i.flags & F_CLIP else y
    y = acc if bias is None else acc + bias.astype(np.int64).reshape(shape)
    y = np.clip(y, -(1 << 31), (1 << 31) - 1)
    if i.flags & F_REQUANT:
        return _requant_stage(m, i.flags, y, m.reg[Reg.QUANT_ADDR], channels, channel_axis)
    if i.flags & F_CLIP:
        y = np.clip(y, *m.act_int())
    return y.astype(np.int32)


def _windows(c: int, ih: int, iw: int, oh: int, ow: int, kh: int, kw: int, sh: int, sw: int, pt: int, pl: int,
             dh: int, dw: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index arrays (rows [kh,1,oh,1], cols [1,kw,1,ow]) into the input and a validity mask
    [kh,kw,oh,ow]: which taps of each output's window fall inside the ih x iw tile."""
    iy = (np.arange(oh) * sh)[None, :] + (np.arange(kh) * dh)[:, None] - pt  # [kh, oh]
    ix = (np.arange(ow) * sw)[None, :] + (np.arange(kw) * dw)[:, None] - pl  # [kw, ow]
    vy, vx = (iy >= 0) & (iy < ih), (ix >= 0) & (ix < iw)
    mask = vy[:, None, :, None] & vx[None, :, None, :]
    rows = np.clip(iy, 0, max(ih - 1, 0))[:, None, :, None]
    cols = np.clip(ix, 0, max(iw - 1, 0))[None, :, None, :]
    return rows, cols, mask


def op_conv(m: Machine, i: Insn) -> None:
    r = m.reg
    c, ih, iw = r[Reg.IFM_C], r[Reg.IFM_H], r[Reg.IFM_W]
    oc, oh, ow = r[Reg.OFM_C], r[Reg.OFM_H], r[Reg.OFM_W]
    kh, kw = _lo16(r[Reg.KERNEL]), _hi16(r[Reg.KERNEL])
    sh, sw = _lo16(r[Reg.STRIDE]), _hi16(r[Reg.STRIDE])
    pt, pl = _lo16(r[Reg.PAD]), _hi16(r[Reg.PAD])
    dh, dw = _lo16(r[Reg.DILATION]), _hi16(r[Reg.DILATION])
    g = r[Reg.GROUPS]
    dt = i.flags & DTYPE_MASK
    f32 = dt == DType.F32
    if not (_dim_ok(c, 1) and _dim_ok(ih, 0) and _dim_ok(iw, 0) and _dim_ok(oc, 1) and _dim_ok(oh, 1)
            and _dim_ok(ow, 1) and 0 not in (kh, kw, sh, sw, dh, dw) and _dim_ok(g, 1) and c % g == 0
            and oc % g == 0):
        raise SimError(Err.OPERAND, "CONV geometry")
    _check_out_zp(m, i)
    cin_g, cout_g = c // g, oc // g
    rows, cols = m.h.mac_rows * (1 if f32 else 2), m.h.mac_cols * (1 if f32 else 2)
    taps = smul(smul(oh, ow), smul(kh, kw))
    if cin_g == 1:
        compute = smul(taps, cdiv(oc, rows))
    else:
        compute = smul(smul(taps, g), smul(cdiv(cout_g, rows), cdiv(cin_g, cols)))
    _mac_operands(m, i, smul(smul(c, ih), iw), smul(smul(oc, cin_g), smul(kh, kw)), smul(smul(oc, oh), ow), oc,
                  compute, smul(smul(oc, smul(oh, ow)), smul(cin_g, smul(kh, kw))))
    if not m.functional:
        return
    x = m.get(i.b, _NP[DType(dt)], c * ih * iw).reshape(c, ih, iw)
    w = m.get(i.c, np.float32 if f32 else np.int8, oc * cin_g * kh * kw).reshape(g, cout_g, cin_g, kh, kw)
    x = x.astype(np.float64) if f32 else x.astype(np.int64) - _s32(r[Reg.IFM_ZP])
    ri, ci, mask = _windows(c, ih, iw, oh, ow, kh, kw, sh, sw, pt, pl, dh, dw)
    patches = x[:, ri, ci] * mask if ih and iw else np.zeros((c, kh, kw, oh, ow), x.dtype)  # [c, kh, kw, oh, ow]
    patches = patches.reshape(g, cin_g, kh, kw, oh, ow)
    acc = np.einsum("goikl,giklyx->goyx", w.astype(patches.dtype), patches).reshape(oc, oh, ow)
    if i.flags & F_ACC:
        acc = acc + m.get(i.d, np.float32 if f32 else np.int32, oc * oh * ow).reshape(oc, oh, ow)
    bias = m.get(r[Reg.BIAS_ADDR], np.float32 if f32 else np.int32, oc) if i.flags & F_BIAS else None
    m.put(i.d, _output_stage(m, i, acc, bias, 0, oc))


def op_matmul(m: Machine, i: Insn) -> None:
    r = m.reg
    mm, nn, kk = r[Reg.MM_M], r[Reg.MM_N], r[Reg.MM_K]
    dt = i.flags & DTYPE_MASK
    f32 = dt == DType.F32
    if not (_dim_ok(mm, 1) and _dim_ok(nn, 1) and _dim_ok(kk, 1)):
        raise SimError(Err.OPERAND, "MATMUL geometry")
    _check_out_zp(m, i)
    rows, cols = m.h.mac_rows * (1 if f32 else 2), m.h.mac_cols * (1 if f32 else 2)
    compute = smul(mm, smul(cdiv(nn, rows), cdiv(kk, cols)))
    _mac_operands(m, i, smul(mm, kk), smul(nn, kk), smul(mm, nn), nn, compute, smul(smul(mm, nn), kk))
    if not m.functional:
        return
    a = m.get(i.b, _NP[DType(dt)], mm * kk).reshape(mm, kk)
    w = m.get(i.c, np.float32 if f32 else np.int8, nn * kk).reshape(nn, kk)
    if f32:
        acc = a.astype(np.float64) @ w.astype(np.float64).T
    else:
        acc = (a.astype(np.int64) - _s32(r[Reg.IFM_ZP])) @ w.astype(np.int64).T
    if i.flags & F_ACC:
        acc = acc + m.get(i.d, np.float32 if f32 else np.int32, mm * nn).reshape(mm, nn)
    bias = m.get(r[Reg.BIAS_ADDR], np.float32 if f32 else np.int32, nn) if i.flags & F_BIAS else None
    m.put(i.d, _output_stage(m, i, acc, bias, 1, nn))


def op_pool(m: Machine, i: Insn) -> None:
    r = m.reg
    c, ih, iw = r[Reg.IFM_C], r[Reg.IFM_H], r[Reg.IFM_W]
    oh, ow = r[Reg.OFM_H], r[Reg.OFM_W]
    kh, kw = _lo16(r[Reg.KERNEL]), _hi16(r[Reg.KERNEL])
    sh, sw = _lo16(r[Reg.STRIDE]), _hi16(r[Reg.STRIDE])
    pt, pl = _lo16(r[Reg.PAD]), _hi16(r[Reg.PAD])
    dh, dw = _lo16(r[Reg.DILATION]), _hi16(r[Reg.DILATION])
    dt = i.flags & DTYPE_MASK
    esz = 4 if dt == DType.F32 else 1
    if not (_dim_ok(c, 1) and _dim_ok(ih, 0) and _dim_ok(iw, 0) and _dim_ok(oh, 1) and _dim_ok(ow, 1)
            and 0 not in (kh, kw, sh, sw, dh, dw)):
        raise SimError(Err.OPERAND, "POOL geometry")
    _check_out_zp(m, i)
    src = spm_range(i.b, smul(smul(c, ih), smul(iw, esz)))
    out = spm_range(i.d, smul(smul(c, oh), smul(ow, esz)))
    reads = [src]
    if i.flags & F_REQUANT:
        reads.append(spm_range(m.reg[Reg.QUANT_ADDR], _table_bytes(i.flags, c)))
    for k, rr in enumerate(reads):
        m.check_spm(rr, esz if k == 0 else 4)
    m.check_spm(out, esz)
    for rr in reads:
        _check_alias(out, rr, False)
    m.schedule(VEC, m.h.op_setup_cycles + cdiv(smul(smul(c, smul(oh, ow)), smul(kh, kw)), m.lanes(dt)), reads, out)
    m.touch(*reads, out)
    if not m.functional:
        return
    x = m.get(i.b, _NP[DType(dt)], c * ih * iw).reshape(c, ih, iw)
    ri, ci, mask = _windows(c, ih, iw, oh, ow, kh, kw, sh, sw, pt, pl, dh, dw)
    count = mask.sum(axis=(0, 1))
    if i.flags & F_REQUANT:  # the sum of the window's (x - IFM_ZP), requantised
        if ih and iw:
            taps = x[:, ri, ci].astype(np.int64) - _s32(r[Reg.IFM_ZP])
            s = np.where(mask, taps, 0).sum(axis=(1, 2))
        else:
            s = np.zeros((c, oh, ow), np.int64)
        y = _requant_stage(m, i.flags, np.clip(s, -(1 << 31), (1 << 31) - 1), m.reg[Reg.QUANT_ADDR], c, 0)
    elif not (ih and iw):
        y = np.zeros((c, oh, ow), x.dtype)
    elif dt == DType.F32:
        taps = x[:, ri, ci].astype(np.float64)
        if i.flags & F_AVG:
            total = np.where(mask, taps, 0.0).sum(axis=(1, 2))
            y = np.where(count > 0, total / np.maximum(count, 1), 0.0).astype(np.float32)
        else:
            best = np.where(mask, taps, -np.inf).max(axis=(1, 2))
            y = np.where(count > 0, best, 0.0).astype(np.float32)
    else:
        taps = x[:, ri, ci].astype(np.int64)
        if i.flags & F_AVG:
            s = np.where(mask, taps, 0).sum(axis=(1, 2))
            n = np.maximum(count, 1)
            y = np.where(s >= 0, (s + n // 2) // n, -((-s + n // 2) // n))
        else:
            y = np.where(mask, taps, -(1 << 40)).max(axis=(1, 2))
        y = np.where(count > 0, y, 0).astype(x.dtype)
    m.put(i.d, y)


def _vector_shape(m: Machine) -> tuple[int, int]:
    outer, inner = m.reg[Reg.V_OUTER], m.reg[Reg.V_INNER]
    if not (_dim_ok(outer, 1) and _dim_ok(inner, 1)):
        raise SimError(Err.OPERAND, "vector shape")
    return outer, inner


def _int_result(y: np.ndarray, dt: int) -> np.ndarray:
    lo, hi = INT_RANGE[DType(dt)]
    return np.clip(y, lo, hi).astype(_NP[DType(dt)])


QADD_PARAMS = 12  # VADD with REQUANT: a_mult, b_mult, bias (float32) at QUANT_ADDR


def op_binary(m: Machine, i: Insn) -> None:
    outer, inner = _vector_shape(m)
    so, si = m.reg[Reg.VB_SO], m.reg[Reg.VB_SI]
    dt = i.flags & DTYPE_MASK
    quant = bool(i.flags & F_REQUANT)
    esz = 4 if dt in (DType.F32, DType.I32) else 1
    n = outer * inner
    ra = spm_range(i.b, smul(n, esz))
    rb = spm_range(i.c, smul(sadd(sadd(smul(outer - 1, so), smul(inner - 1, si)), 1), esz))
    out = spm_range(i.d, smul(n, esz))
    reads = [ra, rb] + ([spm_range(m.reg[Reg.QUANT_ADDR], QADD_PARAMS)] if quant else [])
    for rr in (ra, rb, out):
        m.check_spm(rr, esz)
    if quant:
        m.check_spm(reads[2], 4)
    _check_alias(out, ra, True)
    _check_alias(out, rb, so == inner and si == 1)
    if quant:
        _check_alias(out, reads[2], False)
    # a quantized add computes in 32-bit floats: one element per lane
    m.schedule(VEC, m.h.op_setup_cycles + cdiv(n, m.h.vec_lanes if quant else m.lanes(dt)), reads, out)
    m.touch(*reads, out)
    if not m.functional:
        return
    npdt = _NP[DType(dt)]
    a = m.get(i.b, npdt, n).reshape(outer, inner)
    span = (outer - 1) * so + (inner - 1) * si + 1
    b = m.get(i.c, npdt, span)[np.arange(outer)[:, None] * so + np.arange(inner)[None, :] * si]
    if quant:
        am, bm, bias = m.get(reads[2].lo, np.float32, 3)
        v = fma32(a.astype(np.float32), am, fma32(b.astype(np.float32), bm, bias))
        lo, hi = _out_range(m, i.flags)
        m.put(i.d, _int_result(round_half_even(clamp_f32(v, lo, hi)), dt))
        return
    if dt != DType.F32:
        a, b = a.astype(np.int64), b.astype(np.int64)
    y = a + b if i.op == Op.VADD else a * b if i.op == Op.VMUL else np.where(a > b, a, b)
    if dt == DType.F32:
        y = _clip_f32(y, *m.act_f32()) if i.flags & F_CLIP else y.astype(np.float32)
    else:
        y = _int_result(np.clip(y, *m.act_int()) if i.flags & F_CLIP else y, dt)
    m.put(i.d, y)


def op_clip(m: Machine, i: Insn) -> None:
    outer, inner = _vector_shape(m)
    dt = i.flags & DTYPE_MASK
    esz = 4 if dt in (DType.F32, DType.I32) else 1
    n = outer * inner
    src, out = spm_range(i.b, smul(n, esz)), spm_range(i.d, smul(n, esz))
    m.check_spm(src, esz)
    m.check_spm(out, esz)
    _check_alias(out, src, True)
    m.schedule(VEC, m.h.op_setup_cycles + cdiv(n, m.lanes(dt)), [src], out)
    m.touch(src, out)
    if not m.functional:
        return
    x = m.get(i.b, _NP[DType(dt)], n)
    if dt == DType.F32:
        m.put(i.d, _clip_f32(x, *m.act_f32()))
    else:
        m.put(i.d, _int_result(np.clip(x.astype(np.int64), *m.act_int()), dt))


def op_requant(m: Machine, i: Insn) -> None:
    outer, inner = _vector_shape(m)
    _check_out_zp(m, i)
    n = outer * inner
    src = spm_range(i.b, smul(n, 4))
    qp = spm_range(m.reg[Reg.QUANT_ADDR], _table_bytes(i.flags, outer))
    out = spm_range(i.d, n)
    m.check_spm(src, 4)
    m.check_spm(qp, 4)
    m.check_spm(out, 1)
    _check_alias(out, src, False)
    _check_alias(out, qp, False)
    m.schedule(VEC, m.h.op_setup_cycles + cdiv(n, m.lanes(DType.I32)), [src, qp], out)
    m.touch(src, qp, out)
    if not m.functional:
        return
    x = m.get(i.b, np.int32, n).reshape(outer, inner).astype(np.int64)
    m.put(i.d, _requant_stage(m, i.flags, x, qp.lo, outer, 0))


_OPS = {Op.LOAD: op_dma, Op.STORE: op_dma, Op.CONV: op_conv, Op.MATMUL: op_matmul, Op.POOL: op_pool,
        Op.VADD: op_binary, Op.VMUL: op_binary, Op.VMAX: op_binary, Op.VCLIP: op_clip, Op.VREQ: op_requant}


def execute(blob: bytes, bound: list[np.ndarray] | None = None, spm: np.ndarray | None = None) -> Stats:
    """Run a program: `bound[k]` is region k + 1 as a writable numpy array (any dtype; its bytes
    are used in place), `spm` a uint8 array of at least the header's spm_bytes. With no buffers,
    only the checks and the cost model run (the numbers do not depend on the data)."""
    return _run(blob, bound, spm).st


def _run(blob: bytes, bound: list[np.ndarray] | None = None, spm: np.ndarray | None = None) -> Machine:
    p = validate(blob)
    h = p.header
    functional = bound is not None
    mem: list[np.ndarray | None] = [np.frombuffer(p.consts, np.uint8)]
    sizes, writable = [h.const_bytes], [False]
    for k, (kind, *_rest) in enumerate(p.regions[1:], start=1):
        nbytes = p.regions[k][4]
        if functional:
            if len(bound) != h.n_regions - 1:
                raise SimError(Err.BINDING, "region count")
            buf = bound[k - 1].reshape(-1).view(np.uint8)
            if buf.size < nbytes:
                raise SimError(Err.BINDING, f"region {k} is {buf.size} bytes, needs {nbytes}")
            mem.append(buf)
        else:
            mem.append(None)
        sizes.append(nbytes)
        writable.append(writable_kind(kind))
    if functional:
        spm = np.zeros(h.spm_bytes, np.uint8) if spm is None else spm
        if spm.size < h.spm_bytes:
            raise SimError(Err.BINDING, "scratchpad smaller than the header's spm_bytes")
    m = Machine(h, mem, writable, sizes, spm if functional else None)
    for i in p.insns:
        m.st.instructions += 1
        if i.op == Op.SET:
            for k, v in enumerate((i.b, i.c, i.d)[: i.flags]):
                m.reg[i.a + k] = v
            m.issue += 1
        elif i.op == Op.END:
            m.issue += 1
            break
        else:
            _OPS[Op(i.op)](m, i)
    m.st.cycles = max(m.issue, m.last_end)
    return m


def timing(blob: bytes) -> Stats:
    """Cycles, DMA bytes and scratchpad use of a program: its checks and cost model, no data."""
    return execute(blob)


def profile(blob: bytes) -> tuple[Stats, int]:
    """timing(), and the bytes the units read and write in the scratchpad (for the energy
    estimate; the device does not count them, so they are not among its Stats)."""
    m = _run(blob)
    return m.st, m.spm_access_bytes


def spm_reserve(spm_bytes: int) -> int:
    """Where the scratch region starts in the workspace (the C driver's layout)."""
    return -(-spm_bytes // 64) * 64


__all__ = ["SimError", "Stats", "execute", "fma32", "profile", "requantize", "requantize_float", "spm_reserve",
           "timing", "validate"]
