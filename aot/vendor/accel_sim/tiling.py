"""Tile sizes: how a layer is cut so its working set fits the scratchpad.

One planner per layer kind searches tile shapes, keeps those whose buffers fit the
scratchpad (double-buffered if they can be: two of each streamed buffer, so the DMA fills one
while the MAC array works on the other), and picks the cheapest by an estimate of the cost
model. The checkers ask the same planners, so a node is refused exactly when no tile fits.

8-bit layers (`eight_bit=True`) move one byte per activation and weight, carry a float32 scale
per output channel beside their int32 bias, and use the MAC array at four times the rate; a
convolution cut into input-channel tiles accumulates int32 partial sums and requantises them on
the vector unit, a matrix product keeps all of K in one tile (its requantisation is per column).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from aot.vendor.accel_sim.device import DeviceConfig
from aot.vendor.accel_sim.energy import estimate_pj

F32 = 4  # bytes per float32 (and per int32 bias, partial sum or float32 scale)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def r4(n: int) -> int:
    """Bytes rounded up to a multiple of 4: each scratchpad buffer starts 4-byte aligned."""
    return -(-n // 4) * 4


def candidates(n: int) -> list[int]:
    """Tile lengths worth trying for a dimension of n: n, ceil(n/2), ceil(n/3), ..., 1 (each
    gives a different number of tiles)."""
    out: set[int] = set()
    k = 1
    while k <= n:
        t = cdiv(n, k)
        out.add(t)
        k = cdiv(n, t - 1) if t > 1 else n + 1
    return sorted(out, reverse=True)


@dataclass(frozen=True)
class ConvGeom:
    """A 2-D convolution (or a pooling window: oc == c, groups == c, no weights)."""

    n: int
    c: int
    h: int
    w: int
    oc: int
    oh: int
    ow: int
    kh: int
    kw: int
    sh: int = 1
    sw: int = 1
    dh: int = 1
    dw: int = 1
    pt: int = 0
    pl: int = 0
    groups: int = 1

    @property
    def cin_g(self) -> int:
        return self.c // self.groups

    @property
    def cout_g(self) -> int:
        return self.oc // self.groups

    def in_rows(self, oh_t: int) -> int:
        """Input rows an oh_t-row output tile reads (at most the whole input)."""
        return min((oh_t - 1) * self.sh + (self.kh - 1) * self.dh + 1, self.h)

    def in_cols(self, ow_t: int) -> int:
        return min((ow_t - 1) * self.sw + (self.kw - 1) * self.dw + 1, self.w)

    def macs(self) -> int:
        return self.n * self.oc * self.oh * self.ow * self.cin_g * self.kh * self.kw


@dataclass(frozen=True)
class ConvTiles:
    oc_t: int  # output channels per tile (whole groups when groups > 1)
    ic_t: int  # input channels per MAC instruction (a group's when groups > 1)
    oh_t: int
    ow_t: int
    nbuf: int  # 2: double-buffered input/output tiles, 1: single
    w_bufs: int  # weight buffers: 1 when one weight tile serves the whole layer
    in_bytes: int
    w_bytes: int  # weights + bias (+ scales, 8-bit) of one tile
    out_bytes: int
    spm_bytes: int
    estimate: int  # estimated cycles
    acc_bytes: int = 0  # 8-bit, several input-channel tiles: int32 partial sums of one tile
    # which data stays in the scratchpad while the other streams: "weights" (output-channel tiles
    # outermost: a weight tile is loaded once, the input tiles again for each), or "inputs"
    # (spatial tiles outermost: an input tile is loaded once and serves every output-channel tile,
    # the weights streamed again for each; one input-channel tile, not grouped)
    reuse: str = "weights"
    dma_estimate: int = 0  # estimated DMA bytes
    energy_estimate: float = 0.0  # estimated pJ that depend on the tiling (energy.estimate_pj)


def _spatial(oh: int, ow: int) -> Iterable[tuple[int, int]]:
    """Output tiles: whole rows first (long DMA rows), then single rows cut in columns."""
    for t in candidates(oh):
        yield t, ow
    for t in candidates(ow)[1:]:
        yield 1, t


def _dma(cfg: DeviceConfig, rows: int, row_bytes: int) -> int:
    return cfg.dma_setup_cycles + rows * cdiv(row_bytes, cfg.dma_bytes_per_cycle)


def conv_mac_cycles(cfg: DeviceConfig, taps: int, in_ch: int, out_ch: int, groups: int, eight_bit: bool = False) -> int:
    """The device's cycles for one CONV of `taps` = output pixels x kernel taps."""
    cin_g, cout_g = in_ch // groups, out_ch // groups
    rows, cols = (2 * cfg.mac_rows, 2 * cfg.mac_cols) if eight_bit else (cfg.mac_rows, cfg.mac_cols)
    if cin_g == 1:
        return cfg.op_setup_cycles + taps * cdiv(out_ch, rows)
    return cfg.op_setup_cycles + taps * groups * cdiv(cout_g, rows) * cdiv(cin_g, cols)


def _vec(cfg: DeviceConfig, n: int, lanes: int) -> int:
    return cfg.op_setup_cycles + cdiv(n, lanes)


GOALS = ("latency", "energy")


def _better(goal: str, cycles: int, energy: float, best: ConvTiles | PoolTiles | GemmTiles | None) -> bool:
    """Whether a tiling beats the best so far: fewer cycles (latency), or less energy, then fewer
    cycles (energy). Ties keep the first found, so the latency choice is what it always was."""
    if best is None:
        return True
    if goal == "energy":
        return (energy, cycles) < (best.energy_estimate, best.estimate)
    return cycles < best.estimate


def _estimate(compute: int, dma: int, steps: int, nbuf: int) -> int:
    """Cycles of a layer: double-buffered, the longer of DMA and compute, plus one step of the
    shorter that cannot be hidden (filling and draining the pipeline); single, their sum."""
    if nbuf == 1:
        return compute + dma
    return max(compute, dma) + min(compute, dma) // max(steps, 1)


def plan_conv(g: ConvGeom, cfg: DeviceConfig, residual: bool = False, eight_bit: bool = False,
              goal: str = "latency", pool: tuple[int, int] | None = None) -> ConvTiles | None:
    """The best tiling of a convolution that fits for the goal (cycles or energy), or None. With
    `residual`, each output tile also needs a tile of the tensor added to it; with `pool` (a max
    pooling window equal to its stride), each output tile is pooled into another buffer, stored
    instead (its rows and columns whole windows)."""
    best: ConvTiles | None = None
    grouped = g.groups > 1
    act = 1 if eight_bit else F32
    per_channel = F32 + (F32 if eight_bit else 0)  # bias (+ scale) of each output channel
    oc_options = [k * g.cout_g for k in candidates(g.groups)] if grouped else candidates(g.oc)
    ic_options = [g.cin_g] if grouped else candidates(g.c)
    for oc_t in oc_options:
        n_oc = cdiv(g.oc, oc_t)
        for ic_t in ic_options:
            n_ic = 1 if grouped else cdiv(g.c, ic_t)
            in_ch = (oc_t // g.cout_g) * g.cin_g if grouped else ic_t
            w_bytes = r4(oc_t * ic_t * g.kh * g.kw * act) + oc_t * per_channel
            for oh_t, ow_t in _spatial(g.oh, g.ow):
                if pool and (oh_t % pool[0] or ow_t % pool[1]):
                    continue
                ih_t, iw_t = g.in_rows(oh_t), g.in_cols(ow_t)
                in_bytes = r4(in_ch * ih_t * iw_t * act)
                out_bytes = r4(oc_t * oh_t * ow_t * act)
                ph, pw = pool or (1, 1)
                pool_bytes = r4(oc_t * (oh_t // ph) * (ow_t // pw) * act) if pool else 0
                stored = pool_bytes if pool else out_bytes  # what each output tile stores
                acc_bytes = oc_t * oh_t * ow_t * F32 if eight_bit and n_ic > 1 else 0
                n_sp = cdiv(g.oh, oh_t) * cdiv(g.ow, ow_t)
                orders = ["weights"]
                if goal != "latency" and not grouped and n_ic == 1 and n_oc > 1 and n_sp > 1:
                    orders.append("inputs")
                for reuse, nbuf in ((r, k) for r in orders for k in (2, 1)):
                    w_bufs = 1 if n_oc * n_ic == 1 else nbuf
                    total = (nbuf * (in_bytes + out_bytes * (2 if residual else 1) + acc_bytes + pool_bytes)
                             + w_bufs * w_bytes + (16 if residual and eight_bit else 0))
                    if total > cfg.spm_bytes:
                        continue
                    mac = conv_mac_cycles(cfg, oh_t * ow_t * g.kh * g.kw, in_ch, oc_t,
                                          oc_t // g.cout_g if grouped else 1, eight_bit)
                    tiles = g.n * n_oc * n_sp
                    mac_total = tiles * n_ic * mac
                    if acc_bytes:  # the partial sums requantised on the vector unit
                        mac_total += tiles * _vec(cfg, oc_t * oh_t * ow_t, cfg.vec_lanes)
                    if pool:  # the POOL of each tile (on the vector unit, counted with the MACs)
                        mac_total += tiles * _vec(cfg, oc_t * oh_t * ow_t, cfg.vec_lanes * (4 if eight_bit else 1))
                    if reuse == "weights":
                        in_loads, w_loads = tiles * n_ic, g.n * n_oc * (1 if n_ic == 1 else n_sp * n_ic)
                    else:
                        in_loads, w_loads = g.n * n_sp, tiles
                    w_dma = (_dma(cfg, oc_t, ic_t * g.kh * g.kw * act)
                             + _dma(cfg, 1, oc_t * F32) * (2 if eight_bit else 1))
                    dma_total = (in_loads * _dma(cfg, in_ch * ih_t, iw_t * act)
                                 + tiles * _dma(cfg, oc_t * (oh_t // ph), (ow_t // pw) * act) * (2 if residual else 1)
                                 + w_loads * w_dma)
                    est = _estimate(mac_total, dma_total, tiles * n_ic, nbuf)
                    dma_bytes = (in_loads * in_bytes + tiles * stored * (2 if residual else 1)
                                 + w_loads * w_bytes)
                    spm = dma_bytes + tiles * n_ic * (in_bytes + w_bytes + out_bytes + acc_bytes) \
                        + tiles * out_bytes * (3 if residual else 0) + (tiles * (out_bytes + pool_bytes) if pool else 0)
                    energy = estimate_pj(est, dma_bytes, spm)
                    if _better(goal, est, energy, best):
                        best = ConvTiles(oc_t, ic_t, oh_t, ow_t, nbuf, w_bufs, in_bytes, w_bytes, out_bytes, total, est,
                                         acc_bytes, reuse, dma_bytes, energy)
    return best


@dataclass(frozen=True)
class PoolTiles:
    c_t: int
    oh_t: int
    ow_t: int
    nbuf: int
    in_bytes: int
    out_bytes: int
    spm_bytes: int
    estimate: int
    dma_estimate: int = 0
    energy_estimate: float = 0.0


def plan_pool(g: ConvGeom, cfg: DeviceConfig, itemsize: int = F32, table: bool = False,
              goal: str = "latency") -> PoolTiles | None:
    """With `table`, each tile also loads a float32 scale per channel (a requantised sum)."""
    best: PoolTiles | None = None
    lanes = cfg.vec_lanes * (4 if itemsize == 1 else 1)
    for c_t in candidates(g.c):
        for oh_t, ow_t in _spatial(g.oh, g.ow):
            in_bytes = r4(c_t * g.in_rows(oh_t) * g.in_cols(ow_t) * itemsize) + (c_t * F32 if table else 0)
            out_bytes = r4(c_t * oh_t * ow_t * itemsize)
            tiles = g.n * cdiv(g.c, c_t) * cdiv(g.oh, oh_t) * cdiv(g.ow, ow_t)
            for nbuf in (2, 1):
                total = nbuf * (in_bytes + out_bytes)
                if total > cfg.spm_bytes:
                    continue
                vec = tiles * _vec(cfg, c_t * oh_t * ow_t * g.kh * g.kw, lanes)
                dma = tiles * (_dma(cfg, c_t * g.in_rows(oh_t), g.in_cols(ow_t) * itemsize)
                               + _dma(cfg, c_t * oh_t, ow_t * itemsize) + (_dma(cfg, 1, c_t * F32) if table else 0))
                est = _estimate(vec, dma, tiles, nbuf)
                dma_bytes = tiles * (in_bytes + out_bytes)
                energy = estimate_pj(est, dma_bytes, 2 * dma_bytes)
                if _better(goal, est, energy, best):
                    best = PoolTiles(c_t, oh_t, ow_t, nbuf, in_bytes, out_bytes, total, est, dma_bytes, energy)
    return best


@dataclass(frozen=True)
class GemmTiles:
    m_t: int
    n_t: int
    k_t: int
    nbuf: int
    w_bufs: int
    a_bytes: int
    w_bytes: int  # weights + bias of one tile
    y_bytes: int
    spm_bytes: int
    estimate: int
    dma_estimate: int = 0
    energy_estimate: float = 0.0


def plan_gemm(m: int, n: int, k: int, cfg: DeviceConfig, eight_bit: bool = False,
              goal: str = "latency") -> GemmTiles | None:
    """y[m, n] = a[m, k] . w[n, k]^T + bias: tiles of m, n and k (k tiles accumulate; 8-bit: one k tile)."""
    best: GemmTiles | None = None
    act = 1 if eight_bit else F32
    rows, cols = (2 * cfg.mac_rows, 2 * cfg.mac_cols) if eight_bit else (cfg.mac_rows, cfg.mac_cols)
    for n_t in candidates(n):
        for k_t in [k] if eight_bit else candidates(k):
            w_bytes = r4(n_t * k_t * act) + n_t * F32 * (2 if eight_bit else 1)
            for m_t in candidates(m):
                a_bytes, y_bytes = r4(m_t * k_t * act), r4(m_t * n_t * act)
                n_n, n_k, n_m = cdiv(n, n_t), cdiv(k, k_t), cdiv(m, m_t)
                for nbuf in (2, 1):
                    w_bufs = 1 if n_n * n_k == 1 else nbuf
                    total = nbuf * (a_bytes + y_bytes) + w_bufs * w_bytes
                    if total > cfg.spm_bytes:
                        continue
                    ops = n_n * n_m * n_k
                    mac = ops * (cfg.op_setup_cycles + m_t * cdiv(n_t, rows) * cdiv(k_t, cols))
                    w_loads = n_n * (1 if n_k == 1 else n_m * n_k)
                    dma = (ops * _dma(cfg, m_t, k_t * act) + n_n * n_m * _dma(cfg, m_t, n_t * act)
                           + w_loads * (_dma(cfg, n_t, k_t * act) + _dma(cfg, 1, n_t * F32) * (2 if eight_bit else 1)))
                    est = _estimate(mac, dma, ops, nbuf)
                    dma_bytes = ops * a_bytes + n_n * n_m * y_bytes + w_loads * w_bytes
                    energy = estimate_pj(est, dma_bytes, dma_bytes + ops * (a_bytes + w_bytes + y_bytes))
                    if _better(goal, est, energy, best):
                        best = GemmTiles(m_t, n_t, k_t, nbuf, w_bufs, a_bytes, w_bytes, y_bytes, total, est, dma_bytes,
                                         energy)
    return best
