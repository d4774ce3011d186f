"""Lowering: one partitioned function becomes one accel_sim program.

Main memory as the program sees it:

    region 0        constants: packed weights and biases (in the program itself)
    regions 1..     the function's inputs, then its outputs (the DLTensors of the call)
    last region     scratch: the function's intermediates, planned by liveness

Each layer is cut into tiles by tiling.py and streamed through the scratchpad: LOAD the input
(and weight) tiles, compute, STORE the output tile. Consecutive tiles alternate between two
sets of scratchpad buffers, so the DMA engine loads tile i+1 (and stores tile i-1) while the
MAC array or vector unit works on tile i; the device's hazard tracking orders each access
after the ones it depends on. Every layer starts its scratchpad allocation afresh (the
previous layer's buffers are dead once its last STORE has read them, which the hazard
tracking also enforces).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from aot.errors import AotcError
from aot.ir import Function
from aot.qmath import INT_RANGE
from aot.vendor.accel_sim import refmodel
from aot.vendor.accel_sim.device import DeviceConfig
from aot.vendor.accel_sim.energy import energy_pj
from aot.vendor.accel_sim.isa import (
    F_ACC,
    F_AVG,
    F_BIAS,
    F_CLIP,
    F_FSCALE,
    F_REQUANT,
    DType,
    Kind,
    Op,
    Program,
    ProgramBuilder,
    Region,
    f32_bits,
    i32_bits,
    pair,
)
from aot.vendor.accel_sim.layers import (
    BinaryLayer,
    ClipLayer,
    ConcatLayer,
    ConvLayer,
    GemmLayer,
    Layer,
    PoolLayer,
    TransposeLayer,
    ViewLayer,
)
from aot.vendor.accel_sim.nodes import decode, is_device_node, tiles_of
from aot.vendor.accel_sim.refmodel import QADD_PARAMS
from aot.vendor.accel_sim.tiling import F32, plan_conv, plan_gemm, plan_pool, r4
from aot.vendor.accel_sim.transform import device_function

_VECTOR_OP = {"Add": Op.VADD, "Mul": Op.VMUL, "Max": Op.VMAX}
_DTYPE = {"float32": DType.F32, "int8": DType.I8, "uint8": DType.U8}
_ALIGN = 16  # alignment of constants and scratch tensors in main memory


def _round(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class Place:
    """Where a tensor's bytes are in main memory: a region and an offset in it."""

    region: int
    offset: int


class Scratchpad:
    """Bump allocation of one layer's buffers."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.top = 0

    def take(self, nbytes: int) -> int:
        at = self.top
        self.top += _round(max(nbytes, 1), 4)
        if self.top > self.capacity:
            raise AotcError(f"accel_sim: a tile needs {self.top} bytes of scratchpad, the device has "
                            f"{self.capacity}")
        return at


class Recorder:
    """Stands in for the ProgramBuilder while a tile's instructions are decided, so they can be
    emitted later in pipelined order (register SETs are elided at that point, in final order)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def set(self, **regs: int) -> None:
        self.calls.append(("set", (), regs))

    def emit(self, *args: int) -> None:
        self.calls.append(("emit", args, {}))

    def dma(self, *args: int) -> None:
        self.calls.append(("dma", args, {}))

    def replay(self, b: ProgramBuilder) -> None:
        for name, args, kwargs in self.calls:
            getattr(b, name)(*args, **kwargs)


@dataclass
class Step:
    """One tile's work: the DMA loads it needs, then what it does with them (compute, store)."""

    loads: Recorder = field(default_factory=Recorder)
    work: Recorder = field(default_factory=Recorder)


@dataclass
class Lowered:
    program: Program
    blob: bytes
    stats: refmodel.Stats
    scratch_bytes: int
    layers: list[Layer] = field(default_factory=list)
    spm_access_bytes: int = 0  # what the units read and write in the scratchpad (energy.py)

    @property
    def energy_pj(self) -> float:
        return energy_pj(self.stats, self.spm_access_bytes)


class Lowerer:
    def __init__(self, fn: Function, cfg: DeviceConfig):
        self.fn, self.cfg = fn, cfg
        g = fn.graph
        self.b = ProgramBuilder(cfg)
        self.consts = bytearray()
        self.regions: list[Region] = [Region(Kind.CONST, "uint8", (0,))]
        self.places: dict[str, Place] = {}
        for kind, names in ((Kind.INPUT, g.inputs), (Kind.OUTPUT, g.outputs)):
            for t in names:
                tensor = g.tensors[t]
                self.places[t] = Place(len(self.regions), 0)
                self.regions.append(Region(kind, tensor.dtype, tensor.shape))
        self.scratch_region = len(self.regions)
        self.scratch_bytes = 0
        self.spm_peak = 0
        if not all(is_device_node(n) for n in g.nodes):
            raise AotcError(f"accel_sim lowers its own nodes only: run its transform on {fn.global_symbol} first")
        self.layers = [decode(n, g) for n in g.nodes]
        self.tiles = {layer.y: tiles_of(n) for layer, n in zip(self.layers, g.nodes, strict=True)}

    # --- main memory ----------------------------------------------------------------------
    def const(self, data: np.ndarray) -> Place:
        """Append constant data (in its own dtype: float32, int8 weights, int32 biases) to region 0."""
        at = _round(len(self.consts), _ALIGN)
        self.consts.extend(b"\0" * (at - len(self.consts)))
        self.consts.extend(np.ascontiguousarray(data).tobytes())
        return Place(0, at)

    def place(self, tensor: str) -> Place:
        if tensor not in self.places:
            data = self.fn.graph.const(tensor)
            if data is None:
                raise AotcError(f"accel_sim: tensor '{tensor}' has no place in main memory")
            self.places[tensor] = self.const(np.asarray(data))
        return self.places[tensor]

    def plan_scratch(self) -> None:
        """Give each intermediate an offset in the scratch region: views share their source's
        bytes, and tensors whose lifetimes do not overlap share space (first fit)."""
        g = self.fn.graph
        outputs = set(g.outputs)
        root: dict[str, str] = {}
        for layer in self.layers:
            if isinstance(layer, ViewLayer) and layer.y not in outputs:
                root[layer.y] = root.get(layer.x, layer.x)
        last: dict[str, int] = {}
        for k, layer in enumerate(self.layers):
            for t in layer.reads():
                last[root.get(t, t)] = k
        live: list[tuple[int, int, int]] = []  # (offset, bytes, last use)
        for k, layer in enumerate(self.layers):
            live = [blk for blk in live if blk[2] >= k]
            y = layer.y
            if y in root or y in self.places:
                continue
            size = _round(g.tensors[y].nbytes, _ALIGN)
            at = 0
            for off, nbytes, _ in sorted(live):
                if at + size <= off:
                    break
                at = max(at, off + nbytes)
            live.append((at, size, last.get(y, k)))
            self.places[y] = Place(self.scratch_region, at)
            self.scratch_bytes = max(self.scratch_bytes, at + size)
        for y, src in root.items():
            self.places[y] = self.place(src)

    # --- emission ---------------------------------------------------------------------------
    @contextmanager
    def into(self, rec: Recorder) -> Iterator[None]:
        """Send instructions to `rec` instead of the program."""
        saved, self.b = self.b, rec  # type: ignore[assignment]
        try:
            yield
        finally:
            self.b = saved

    def pipeline(self, steps: list[Step], double: bool) -> None:
        """Emit the steps. Double-buffered, the loads of step i+1 are issued before the work
        of step i: the DMA engine executes its queue in order, so this is what lets it fetch
        the next tile while the current one is computed. Single-buffered, each step's loads
        must wait for the previous step's work, so the steps go one after the other."""
        if not double:
            for st in steps:
                st.loads.replay(self.b)
                st.work.replay(self.b)
            return
        if steps:
            steps[0].loads.replay(self.b)
        for k, st in enumerate(steps):
            if k + 1 < len(steps):
                steps[k + 1].loads.replay(self.b)
            st.work.replay(self.b)

    # --- DMA ------------------------------------------------------------------------------
    def block(self, op: Op, at: Place, ext: int, spm: int, dims: list[tuple[int, int, int]], row: int) -> None:
        """Move a block of `row`-byte rows; dims (outer to inner): (count, main-memory stride,
        scratchpad stride). Contiguous dimensions are merged into longer rows; a block of more
        than two dimensions becomes several instructions."""
        dims = [d for d in dims if d[0] > 1]
        while dims and dims[-1][1] == row and dims[-1][2] == row:
            row *= dims.pop()[0]
        if len(dims) > 2:
            count, es, ss = dims[0]
            for k in range(count):
                self.block(op, at, ext + k * es, spm + k * ss, dims[1:], row)
            return
        n1 = dims[-1] if dims else (1, 0, 0)
        n2 = dims[-2] if len(dims) == 2 else (1, 0, 0)
        self.b.dma(op, at.region, at.offset + ext, spm, row, n1[0], n1[1], n1[2], n2[0], n2[1], n2[2])

    def copy(self, src: Place, src_off: int, src_stride: int, dst: Place, dst_off: int, dst_stride: int,
             rows: int, row: int) -> None:
        """Main memory to main memory through the scratchpad, in double-buffered chunks."""
        spm = Scratchpad(self.cfg.spm_bytes)
        half = (self.cfg.spm_bytes // 2) // 4 * 4
        bufs = [spm.take(min(half, rows * row)) for _ in range(2)]
        self.spm_peak = max(self.spm_peak, spm.top)
        if row <= half:  # (first row, offset in the row, rows, bytes per row) of each chunk
            per = half // row
            pieces = [(r0, 0, min(per, rows - r0), row) for r0 in range(0, rows, per)]
        else:  # rows longer than a buffer go in several pieces
            pieces = [(r, c0, 1, min(half, row - c0)) for r in range(rows) for c0 in range(0, row, half)]
        steps = []
        for k, (r0, c0, n, nbytes) in enumerate(pieces):
            st, buf = Step(), bufs[k % 2]
            with self.into(st.loads):
                self.block(Op.LOAD, src, src_off + r0 * src_stride + c0, buf, [(n, src_stride, nbytes)], nbytes)
            with self.into(st.work):
                self.block(Op.STORE, dst, dst_off + r0 * dst_stride + c0, buf, [(n, dst_stride, nbytes)], nbytes)
            steps.append(st)
        self.pipeline(steps, double=True)

    # --- layers ---------------------------------------------------------------------------
    def lower(self) -> Lowered:
        self.plan_scratch()
        for layer in self.layers:
            if isinstance(layer, ConvLayer):
                self.conv(layer)
            elif isinstance(layer, GemmLayer):
                self.gemm(layer)
            elif isinstance(layer, PoolLayer):
                self.pool(layer)
            elif isinstance(layer, BinaryLayer):
                self.binary(layer)
            elif isinstance(layer, ClipLayer):
                self.clip(layer)
            elif isinstance(layer, ViewLayer):
                self.view(layer)
            elif isinstance(layer, TransposeLayer):
                self.transpose(layer)
            else:
                self.concat(layer)
        self.b.end()
        self.consts.extend(b"\0" * (-len(self.consts) % 4))
        self.regions[0] = Region(Kind.CONST, "uint8", (len(self.consts),))
        if self.scratch_bytes:
            self.regions.append(Region(Kind.SCRATCH, "uint8", (self.scratch_bytes,)))
        prog = Program(self.cfg, self.regions, self.b.insns, bytes(self.consts), max(self.spm_peak, 4))
        stats, spm_access = refmodel.profile(prog.to_bytes())
        # the watchdog: twice the expected cycles, so only a corrupted program can trip it
        prog.cycle_limit = 2 * stats.cycles + 100_000
        return Lowered(prog, prog.to_bytes(), stats, self.scratch_bytes, self.layers, spm_access)

    def _act_regs(self, act: tuple[float, float]) -> dict[str, int]:
        return {"ACT_MIN": f32_bits(act[0]), "ACT_MAX": f32_bits(act[1])}

    @staticmethod
    def _int_clip(lo: int, hi: int, dtype: str) -> tuple[int, dict[str, int]]:
        """(CLIP flag, registers) of an 8-bit output range: no clamp when it is the type's whole range."""
        if (lo, hi) == INT_RANGE[dtype]:
            return 0, {}
        return F_CLIP, {"ACT_MIN": i32_bits(lo), "ACT_MAX": i32_bits(hi)}

    def conv(self, L: ConvLayer) -> None:
        g, q = L.geom, L.quant
        t = self.tiles.get(L.y) or plan_conv(g, self.cfg, residual=L.residual is not None, eight_bit=q is not None,
                                             pool=L.pool)
        if t is None:
            raise AotcError(f"accel_sim: convolution {L.y} does not fit the scratchpad")
        act = F32 if q is None else 1  # bytes per activation and per weight
        dt = DType.F32 if q is None else _DTYPE[q.dtype]
        spm = Scratchpad(self.cfg.spm_bytes)
        ins = [spm.take(t.in_bytes) for _ in range(t.nbuf)]
        outs = [spm.take(t.out_bytes) for _ in range(t.nbuf)]
        ress = [spm.take(t.out_bytes) for _ in range(t.nbuf)] if L.residual else []
        accs = [spm.take(t.acc_bytes) for _ in range(t.nbuf)] if t.acc_bytes else []
        wbufs = [spm.take(t.w_bytes) for _ in range(t.w_bufs)]
        qadd_at = spm.take(QADD_PARAMS) if L.qadd else 0
        ph, pw = L.pool or (1, 1)  # a fused max pooling: each output tile pooled into pouts, stored from there
        pouts = [spm.take(r4(t.oc_t * (t.oh_t // ph) * (t.ow_t // pw) * act)) for _ in range(t.nbuf)] if L.pool else []
        self.spm_peak = max(self.spm_peak, spm.top)
        x, y = self.place(L.x), self.place(L.y)
        w = self.const(L.weights)
        bias = self.const(L.bias) if L.bias is not None else None
        scale = self.const(q.scale) if q is not None else None
        res = self.place(L.residual) if L.residual else None
        grouped = g.groups > 1
        ksz = g.kh * g.kw
        bias_at = r4(t.oc_t * t.ic_t * ksz * act)  # in a weight buffer, after the weights
        scale_at = bias_at + t.oc_t * F32  # 8-bit: the requantisation scales, after the bias
        plane_in, plane_out = g.h * g.w * act, g.oh * g.ow * act
        n_in = n_out = n_w = 0
        loaded: tuple[int, int] | None = None
        wbuf = wbufs[0]
        steps: list[Step] = []
        self.b.set(KERNEL=pair(g.kh, g.kw), STRIDE=pair(g.sh, g.sw), DILATION=pair(g.dh, g.dw))
        if q is not None:
            self.b.set(IFM_ZP=i32_bits(q.x_zero), OFM_ZP=i32_bits(q.y_zero))
        if L.qadd:
            self.block(Op.LOAD, self.const(L.qadd.params()), 0, qadd_at, [], QADD_PARAMS)
        if t.reuse == "weights":  # output-channel tiles outermost: each weight tile loaded once
            order = [(n, oc0, oy0, ox0) for n in range(g.n) for oc0 in range(0, g.oc, t.oc_t)
                     for oy0 in range(0, g.oh, t.oh_t) for ox0 in range(0, g.ow, t.ow_t)]
        else:  # spatial tiles outermost: each input tile loaded once, for every output-channel tile
            order = [(n, oc0, oy0, ox0) for n in range(g.n) for oy0 in range(0, g.oh, t.oh_t)
                     for ox0 in range(0, g.ow, t.ow_t) for oc0 in range(0, g.oc, t.oc_t)]
        in_tile: tuple[int, int, int] | None = None  # the input tile in the current buffer (reuse "inputs")
        buf = ins[0]
        for n, oc0, oy0, ox0 in order:
            ocs = min(t.oc_t, g.oc - oc0)
            if grouped:  # whole groups: their input channels, all of each group's weights
                ng = ocs // g.cout_g
                ic_tiles = [((oc0 // g.cout_g) * g.cin_g, ng * g.cin_g)]
            else:
                ng = 1
                ic_tiles = [(c0, min(t.ic_t, g.c - c0)) for c0 in range(0, g.c, t.ic_t)]
            ohs = min(t.oh_t, g.oh - oy0)
            iy = oy0 * g.sh - g.pt
            ry0, ry1 = max(iy, 0), min(iy + (ohs - 1) * g.sh + (g.kh - 1) * g.dh + 1, g.h)
            ows = min(t.ow_t, g.ow - ox0)
            ix = ox0 * g.sw - g.pl
            rx0, rx1 = max(ix, 0), min(ix + (ows - 1) * g.sw + (g.kw - 1) * g.dw + 1, g.w)
            rows, cols = max(ry1 - ry0, 0), max(rx1 - rx0, 0)
            out = outs[n_out % t.nbuf]
            acc = accs[n_out % t.nbuf] if accs else out  # where the CONVs write
            out_at = ((n * g.oc + oc0) * g.oh + oy0) * g.ow * act + ox0 * act
            out_dims = [(ocs, plane_out, ohs * ows * act), (ohs, g.ow * act, ows * act)]
            for k, (ic0, ics) in enumerate(ic_tiles):
                st = Step()
                steps.append(st)
                reload = t.reuse == "weights" or in_tile != (n, oy0, ox0)
                if reload:
                    buf = ins[n_in % t.nbuf]
                    n_in += 1
                    in_tile = (n, oy0, ox0)
                last = k == len(ic_tiles) - 1
                wic, wics = (0, g.cin_g) if grouped else (ic0, ics)
                with self.into(st.loads):
                    if rows and cols and reload:  # (a tile entirely in the padding reads nothing)
                        self.block(Op.LOAD, x, ((n * g.c + ic0) * g.h + ry0) * g.w * act + rx0 * act,
                                   buf, [(ics, plane_in, rows * cols * act), (rows, g.w * act, cols * act)],
                                   cols * act)
                    if loaded != (oc0, wic):
                        wbuf = wbufs[n_w % t.w_bufs]
                        n_w += 1
                        self.block(Op.LOAD, w, (oc0 * g.cin_g + wic) * ksz * act, wbuf,
                                   [(ocs, g.cin_g * ksz * act, wics * ksz * act)], wics * ksz * act)
                        if bias is not None:
                            self.block(Op.LOAD, bias, oc0 * F32, wbuf + bias_at, [], ocs * F32)
                        if scale is not None:
                            self.block(Op.LOAD, scale, oc0 * F32, wbuf + scale_at, [], ocs * F32)
                        loaded = (oc0, wic)
                    if last and res is not None:
                        self.block(Op.LOAD, res, out_at, ress[n_out % t.nbuf], out_dims, ows * act)
                flags = int(dt) | (F_ACC if k > 0 else 0)
                flags |= F_BIAS if last and bias is not None else 0
                regs = dict(IFM_C=ics, IFM_H=rows, IFM_W=cols, OFM_C=ocs, OFM_H=ohs, OFM_W=ows,
                            PAD=pair(ry0 - iy, rx0 - ix), GROUPS=ng, BIAS_ADDR=wbuf + bias_at)
                if L.pool:  # the POOL of the previous tile changed the window registers
                    regs.update(KERNEL=pair(g.kh, g.kw), STRIDE=pair(g.sh, g.sw), DILATION=pair(g.dh, g.dw))
                if q is None and last and L.act and res is None:
                    flags |= F_CLIP
                    regs.update(self._act_regs(L.act))
                clip, clip_regs = (0, {}) if q is None else self._int_clip(q.lo, q.hi, q.dtype)
                if q is not None and not accs:  # one input-channel tile: requantised at once
                    flags |= F_REQUANT | F_FSCALE | clip
                    regs.update(QUANT_ADDR=wbuf + scale_at, **clip_regs)
                with self.into(st.work):
                    self.b.set(**regs)
                    self.b.emit(Op.CONV, flags, 0, buf, wbuf, acc)
                    if not last:
                        continue
                    if accs:  # the int32 partial sums requantised on the vector unit
                        self.b.set(V_OUTER=ocs, V_INNER=ohs * ows, QUANT_ADDR=wbuf + scale_at, **clip_regs)
                        self.b.emit(Op.VREQ, int(dt) | F_FSCALE | clip, 0, acc, 0, out)
                    stored = out
                    if res is not None and L.qadd is None:  # the residual add and activation
                        vregs = dict(V_OUTER=1, V_INNER=ocs * ohs * ows, VB_SI=1)
                        vregs.update(self._act_regs(L.act) if L.act else {})
                        self.b.set(**vregs)
                        self.b.emit(Op.VADD, int(DType.F32) | (F_CLIP if L.act else 0), 0, out,
                                    ress[n_out % t.nbuf], out)
                    elif res is not None and L.qadd is not None:  # the quantized add, in place on a
                        qa = L.qadd
                        a_buf, b_buf = (ress[n_out % t.nbuf], out) if L.residual_first else \
                            (out, ress[n_out % t.nbuf])
                        qclip, qregs = self._int_clip(qa.lo, qa.hi, qa.dtype)
                        self.b.set(V_OUTER=1, V_INNER=ocs * ohs * ows, VB_SI=1, QUANT_ADDR=qadd_at, **qregs)
                        self.b.emit(Op.VADD, int(dt) | F_REQUANT | F_FSCALE | qclip, 0, a_buf, b_buf, a_buf)
                        stored = a_buf
                    if L.pool:  # pool the tile (whole windows), store the pooled tile
                        poh, pow_ = g.oh // ph, g.ow // pw
                        self.b.set(KERNEL=pair(ph, pw), STRIDE=pair(ph, pw), DILATION=pair(1, 1), IFM_C=ocs,
                                   IFM_H=ohs, IFM_W=ows, OFM_H=ohs // ph, OFM_W=ows // pw, PAD=pair(0, 0))
                        self.b.emit(Op.POOL, int(dt), 0, stored, 0, pouts[n_out % t.nbuf])
                        self.block(Op.STORE, y, ((n * g.oc + oc0) * poh + oy0 // ph) * pow_ * act + ox0 // pw * act,
                                   pouts[n_out % t.nbuf],
                                   [(ocs, poh * pow_ * act, (ohs // ph) * (ows // pw) * act),
                                    (ohs // ph, pow_ * act, (ows // pw) * act)], (ows // pw) * act)
                    else:
                        self.block(Op.STORE, y, out_at, stored, out_dims, ows * act)
            n_out += 1
        self.pipeline(steps, t.nbuf == 2)

    def gemm(self, L: GemmLayer) -> None:
        q = L.quant
        t = self.tiles.get(L.y) or plan_gemm(L.m, L.n, L.k, self.cfg, eight_bit=q is not None)
        if t is None:
            raise AotcError(f"accel_sim: matrix product {L.y} does not fit the scratchpad")
        act = F32 if q is None else 1
        dt = DType.F32 if q is None else _DTYPE[q.dtype]
        spm = Scratchpad(self.cfg.spm_bytes)
        abufs = [spm.take(t.a_bytes) for _ in range(t.nbuf)]
        ybufs = [spm.take(t.y_bytes) for _ in range(t.nbuf)]
        wbufs = [spm.take(t.w_bytes) for _ in range(t.w_bufs)]
        self.spm_peak = max(self.spm_peak, spm.top)
        a, y, w = self.place(L.a), self.place(L.y), self.const(L.weights)
        bias = self.const(L.bias) if L.bias is not None else None
        scale = self.const(q.scale) if q is not None else None
        bias_at = r4(t.n_t * t.k_t * act)
        scale_at = bias_at + t.n_t * F32
        if q is not None:
            self.b.set(IFM_ZP=i32_bits(q.x_zero), OFM_ZP=i32_bits(q.y_zero))
        n_a = n_y = n_w = 0
        loaded: tuple[int, int] | None = None
        wbuf = wbufs[0]
        steps: list[Step] = []
        k_tiles = list(range(0, L.k, t.k_t))
        for n0 in range(0, L.n, t.n_t):
            ns = min(t.n_t, L.n - n0)
            for m0 in range(0, L.m, t.m_t):
                ms = min(t.m_t, L.m - m0)
                ybuf = ybufs[n_y % t.nbuf]
                n_y += 1
                for j, k0 in enumerate(k_tiles):
                    ks = min(t.k_t, L.k - k0)
                    st = Step()
                    steps.append(st)
                    abuf = abufs[n_a % t.nbuf]
                    n_a += 1
                    with self.into(st.loads):
                        self.block(Op.LOAD, a, (m0 * L.k + k0) * act, abuf, [(ms, L.k * act, ks * act)], ks * act)
                        if loaded != (n0, k0):
                            wbuf = wbufs[n_w % t.w_bufs]
                            n_w += 1
                            self.block(Op.LOAD, w, (n0 * L.k + k0) * act, wbuf, [(ns, L.k * act, ks * act)], ks * act)
                            if bias is not None:
                                self.block(Op.LOAD, bias, n0 * F32, wbuf + bias_at, [], ns * F32)
                            if scale is not None:
                                self.block(Op.LOAD, scale, n0 * F32, wbuf + scale_at, [], ns * F32)
                            loaded = (n0, k0)
                    last = j == len(k_tiles) - 1
                    flags = int(dt) | (F_ACC if j > 0 else 0) | (F_BIAS if last and bias is not None else 0)
                    regs = dict(MM_M=ms, MM_N=ns, MM_K=ks, BIAS_ADDR=wbuf + bias_at)
                    if q is not None:  # one k tile (tiling.plan_gemm): requantised at once
                        clip, clip_regs = self._int_clip(q.lo, q.hi, q.dtype)
                        flags |= F_REQUANT | F_FSCALE | clip
                        regs.update(QUANT_ADDR=wbuf + scale_at, **clip_regs)
                    elif last and L.act:
                        flags |= F_CLIP
                        regs.update(self._act_regs(L.act))
                    with self.into(st.work):
                        self.b.set(**regs)
                        self.b.emit(Op.MATMUL, flags, 0, abuf, wbuf, ybuf)
                        if last:
                            self.block(Op.STORE, y, (m0 * L.n + n0) * act, ybuf, [(ms, L.n * act, ns * act)],
                                       ns * act)
        self.pipeline(steps, t.nbuf == 2)

    def pool(self, L: PoolLayer) -> None:
        g, q = L.geom, L.quant
        act = np.dtype(L.dtype).itemsize
        t = self.tiles.get(L.y) or plan_pool(g, self.cfg, act, table=q is not None)
        if t is None:
            raise AotcError(f"accel_sim: pooling {L.y} does not fit the scratchpad")
        spm = Scratchpad(self.cfg.spm_bytes)
        ins = [spm.take(t.in_bytes) for _ in range(t.nbuf)]
        outs = [spm.take(t.out_bytes) for _ in range(t.nbuf)]
        self.spm_peak = max(self.spm_peak, spm.top)
        x, y = self.place(L.x), self.place(L.y)
        scale = self.const(q.scale) if q is not None else None
        table_at = t.in_bytes - t.c_t * F32  # a requantised sum: the tile's scales after its data
        plane_in, plane_out = g.h * g.w * act, g.oh * g.ow * act
        flags = int(_DTYPE[L.dtype]) | (F_AVG if L.average else 0)
        if q is not None:
            flags |= F_REQUANT | F_FSCALE
            self.b.set(IFM_ZP=i32_bits(q.x_zero), OFM_ZP=i32_bits(q.y_zero))
        steps: list[Step] = []
        self.b.set(KERNEL=pair(g.kh, g.kw), STRIDE=pair(g.sh, g.sw), DILATION=pair(g.dh, g.dw))
        for n in range(g.n):
            for c0 in range(0, g.c, t.c_t):
                cs = min(t.c_t, g.c - c0)
                for oy0 in range(0, g.oh, t.oh_t):
                    ohs = min(t.oh_t, g.oh - oy0)
                    iy = oy0 * g.sh - g.pt
                    ry0, ry1 = max(iy, 0), min(iy + (ohs - 1) * g.sh + (g.kh - 1) * g.dh + 1, g.h)
                    for ox0 in range(0, g.ow, t.ow_t):
                        ows = min(t.ow_t, g.ow - ox0)
                        ix = ox0 * g.sw - g.pl
                        rx0, rx1 = max(ix, 0), min(ix + (ows - 1) * g.sw + (g.kw - 1) * g.dw + 1, g.w)
                        rows, cols = max(ry1 - ry0, 0), max(rx1 - rx0, 0)
                        buf, out = ins[len(steps) % t.nbuf], outs[len(steps) % t.nbuf]
                        st = Step()
                        steps.append(st)
                        with self.into(st.loads):
                            if rows and cols:
                                self.block(Op.LOAD, x, ((n * g.c + c0) * g.h + ry0) * g.w * act + rx0 * act, buf,
                                           [(cs, plane_in, rows * cols * act), (rows, g.w * act, cols * act)],
                                           cols * act)
                            if scale is not None:
                                self.block(Op.LOAD, scale, c0 * F32, buf + table_at, [], cs * F32)
                        regs = dict(IFM_C=cs, IFM_H=rows, IFM_W=cols, OFM_H=ohs, OFM_W=ows,
                                    PAD=pair(ry0 - iy, rx0 - ix))
                        if scale is not None:
                            regs.update(QUANT_ADDR=buf + table_at)
                        with self.into(st.work):
                            self.b.set(**regs)
                            self.b.emit(Op.POOL, flags, 0, buf, 0, out)
                            self.block(Op.STORE, y, ((n * g.c + c0) * g.oh + oy0) * g.ow * act + ox0 * act, out,
                                       [(cs, plane_out, ohs * ows * act), (ohs, g.ow * act, ows * act)], ows * act)
        self.pipeline(steps, t.nbuf == 2)

    def binary(self, L: BinaryLayer) -> None:
        p, q, r = L.pqr
        qa = L.qadd
        act = F32 if qa is None else 1
        spm = Scratchpad(self.cfg.spm_bytes)
        b = self.const(L.b) if isinstance(L.b, np.ndarray) else self.place(L.b)
        resident = (1 + len(L.extra)) * q * act <= self.cfg.spm_bytes // 4  # b (and extras) loaded once, whole
        bres = spm.take(q * act) if resident else 0
        if L.extra and not resident:
            raise AotcError(f"accel_sim: the per-channel constants of {L.y} do not fit the scratchpad")
        extras = [(op, spm.take(q * F32), self.const(data)) for op, data in L.extra]
        params = spm.take(QADD_PARAMS) if qa is not None else 0
        # for each of the two tile buffers (8-bit: less the slack of rounding its buffers to 4 bytes)
        half = (self.cfg.spm_bytes - spm.top) // 2 - (0 if qa is None else 8)
        extra = 0 if resident else act  # a tile row of r_t elements also needs its b element
        r_t = min(r, max(1, (half - extra) // act))
        q_t = max(1, min(q, half // (r_t * act + extra)))
        abufs = [spm.take(q_t * r_t * act) for _ in range(2)]
        bbufs = [] if resident else [spm.take(q_t * act) for _ in range(2)]
        self.spm_peak = max(self.spm_peak, spm.top)
        a, y = self.place(L.a), self.place(L.y)
        if resident:
            self.block(Op.LOAD, b, 0, bres, [], q * act)
        for _, at, src in extras:
            self.block(Op.LOAD, src, 0, at, [], q * F32)
        if qa is not None:
            self.block(Op.LOAD, self.const(qa.params()), 0, params, [], QADD_PARAMS)
            clip, clip_regs = self._int_clip(qa.lo, qa.hi, qa.dtype)
            regs = dict(VB_SO=1, VB_SI=0, QUANT_ADDR=params, **clip_regs)
            ops = [(L.op, None, int(_DTYPE[qa.dtype]) | F_REQUANT | F_FSCALE | clip)]
        else:
            regs = dict(VB_SO=1, VB_SI=0, **(self._act_regs(L.act) if L.act else {}))
            ops = [(L.op, None, int(DType.F32)), *((op, at, int(DType.F32)) for op, at, _ in extras)]
            ops[-1] = (*ops[-1][:2], ops[-1][2] | (F_CLIP if L.act else 0))  # the last one clamps
        steps: list[Step] = []
        for pi in range(p):
            for q0 in range(0, q, q_t):
                qs = min(q_t, q - q0)
                for r0 in range(0, r, r_t):
                    rs = min(r_t, r - r0)
                    abuf = abufs[len(steps) % 2]
                    baddr = bres + q0 * act if resident else bbufs[len(steps) % 2]
                    at = ((pi * q + q0) * r + r0) * act
                    dims = [(qs, r * act, rs * act)]
                    st = Step()
                    steps.append(st)
                    with self.into(st.loads):
                        self.block(Op.LOAD, a, at, abuf, dims, rs * act)
                        if not resident:
                            self.block(Op.LOAD, b, q0 * act, baddr, [], qs * act)
                    with self.into(st.work):  # in place: the result overwrites a's tile
                        self.b.set(V_OUTER=qs, V_INNER=rs, **regs)
                        for op, ext, flags in ops:
                            self.b.emit(_VECTOR_OP[op], flags, 0, abuf, baddr if ext is None else ext + q0 * F32, abuf)
                        self.block(Op.STORE, y, at, abuf, dims, rs * act)
        self.pipeline(steps, double=True)

    def clip(self, L: ClipLayer) -> None:
        spm = Scratchpad(self.cfg.spm_bytes)
        chunk = max(1, (self.cfg.spm_bytes // 2) // F32)
        bufs = [spm.take(min(chunk, L.size) * F32) for _ in range(2)]
        self.spm_peak = max(self.spm_peak, spm.top)
        x, y = self.place(L.x), self.place(L.y)
        self.b.set(**self._act_regs(L.act))
        steps: list[Step] = []
        for k, e0 in enumerate(range(0, L.size, chunk)):
            n = min(chunk, L.size - e0)
            st, buf = Step(), bufs[k % 2]
            steps.append(st)
            with self.into(st.loads):
                self.block(Op.LOAD, x, e0 * F32, buf, [], n * F32)
            with self.into(st.work):
                self.b.set(V_OUTER=1, V_INNER=n)
                self.b.emit(Op.VCLIP, int(DType.F32), 0, buf, 0, buf)
                self.block(Op.STORE, y, e0 * F32, buf, [], n * F32)
        self.pipeline(steps, double=True)

    def view(self, L: ViewLayer) -> None:
        src, dst = self.place(L.x), self.place(L.y)
        if src != dst:  # the result is a function output: copy it there
            nbytes = self.fn.graph.tensors[L.y].nbytes
            self.copy(src, 0, nbytes, dst, 0, nbytes, 1, nbytes)

    def transpose(self, L: TransposeLayer) -> None:
        """Gather the input with permuted strides into the scratchpad, store it densely: the
        output's innermost dimensions form each chunk (as many as fit half the scratchpad),
        the outer ones are loops. Dimensions that stay contiguous merge into long DMA rows."""
        src, dst = self.place(L.x), self.place(L.y)
        e = L.itemsize
        in_strides = [int(np.prod(L.shape[k + 1:], dtype=np.int64)) * e for k in range(len(L.shape))]
        out_shape = [L.shape[p] for p in L.perm]
        out_strides = [int(np.prod(out_shape[k + 1:], dtype=np.int64)) * e for k in range(len(out_shape))]
        dims = [(n, in_strides[p], out_strides[k]) for k, (n, p) in enumerate(zip(out_shape, L.perm, strict=True))]
        dims = [d for d in dims if d[0] > 1]
        row = e
        while dims and dims[-1][1] == row and dims[-1][2] == row:  # contiguous on both sides
            row *= dims.pop()[0]
        half = (self.cfg.spm_bytes // 2) // 4 * 4
        if row > half:  # no dimension is permuted inside a row longer than a buffer: copy pieces
            for idx in np.ndindex(*[d[0] for d in dims]):
                s_off = sum(i * d[1] for i, d in zip(idx, dims, strict=True))
                d_off = sum(i * d[2] for i, d in zip(idx, dims, strict=True))
                self.copy(src, s_off, row, dst, d_off, row, 1, row)
            return
        inner: list[tuple[int, int, int]] = []  # the chunk's dimensions, dense in the scratchpad
        size = row
        while dims and size * dims[-1][0] <= half:
            n, s_stride, _ = dims.pop()
            inner.insert(0, (n, s_stride, size))
            size *= n
        split = (1, 1, 0, 0)  # the next dimension, cut in blocks of k: (n, k, source and output strides)
        if dims:
            n, s_stride, d_stride = dims.pop()
            split = (n, max(1, half // size), s_stride, d_stride)
        n_split, k, s_split, d_split = split
        spm = Scratchpad(self.cfg.spm_bytes)
        bufs = [spm.take(size * min(k, n_split)) for _ in range(2)]
        self.spm_peak = max(self.spm_peak, spm.top)
        steps = []
        for idx in np.ndindex(*[d[0] for d in dims]):
            base_s = sum(i * d[1] for i, d in zip(idx, dims, strict=True))
            base_d = sum(i * d[2] for i, d in zip(idx, dims, strict=True))
            for b0 in range(0, n_split, k):
                kk = min(k, n_split - b0)
                st, buf = Step(), bufs[len(steps) % 2]
                with self.into(st.loads):
                    self.block(Op.LOAD, src, base_s + b0 * s_split, buf, [(kk, s_split, size), *inner], row)
                with self.into(st.work):  # the chunk is contiguous in the output
                    self.block(Op.STORE, dst, base_d + b0 * d_split, buf, [], kk * size)
                steps.append(st)
        self.pipeline(steps, double=True)

    def concat(self, L: ConcatLayer) -> None:
        y = self.place(L.y)
        off = 0
        for x, chunk in zip(L.xs, L.chunks, strict=True):
            self.copy(self.place(x), 0, chunk, y, off, L.row, L.outer, chunk)
            off += chunk


def lower_function(fn: Function, cfg: DeviceConfig) -> Lowered:
    """The program for `fn` (its device nodes; transformed for the default goal when it is not yet),
    with its cost-model statistics."""
    return Lowerer(device_function(fn, cfg), cfg).lower()


__all__ = ["Lowered", "Place", "lower_function"]
