"""Winograd's minimal filtering for 3 x 3 same-size convs at stride 1 (Lavin and Gray 2015): the two
kernels, F(2 x 2, 3 x 3) (conv_winograd.c) and F(4 x 4, 3 x 3) (conv_winograd4.c), their limits, the
model of their speed-up over the direct kernels that decides which a conv takes, and the weights
transformed at compile time.

F(m x m, 3 x 3) computes each m x m tile of outputs from an (m + 2) x (m + 2) block of inputs with
(m + 2)^2 products per channel pair instead of 9 m^2: 2.25 x fewer for m = 2, 4 x fewer for m = 4,
paid for by the transforms (additions, streamed through scratch) and by weights (m + 2)^2 / 9 as large.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from aot.kernels.c_defines import define
from aot.kernels.gemm import PANEL  # tiles per panel of the GEMM core's packed B

# With --threads, the most floats of a thread's lane of a Winograd conv's scratch (bands are cut to fit), and
# the output channels of the products it holds where the conv runs by blocks of them (aotc_conv.h's
# AOTC_WINO_LANE_M; by bands, all of them: Variant.lane_floats)
LANE_FLOATS = define("aotc_conv.h", "AOTC_WINO_LANE_FLOATS")
LANE_M = define("aotc_conv.h", "AOTC_WINO_LANE_M")
# By blocks of LANE_M output channels, a thread's products took this much longer than the whole products of
# the same band on one thread (ResNet-50's 256-channel 14 x 14 convs, the two-thread bundle run on one: 760
# against 630 us), besides each thread transforming the band's input: Variant.band_rows's estimate
BLOCK_COST = 1.2
PITCH_PAD = define("aotc_conv.h", "AOTC_WINO_PITCH_PAD")  # floats past each of V's and M's matrices (4 KiB aliasing)
NARROW = 8  # columns of the GEMM core's narrow tiles, which take a last panel's few columns (gemm.c's NH)


def _panels(tiles: int) -> int:
    """The GEMM core's panels of PANEL tiles that hold `tiles` (a last one partly filled)."""
    return -(-tiles // PANEL)


@dataclass(frozen=True)
class Variant:
    """One Winograd kernel: its tile, the limits of its stack buffers (aotc_conv.h), and the fitted
    model of its speed-up (gain)."""

    kernel: str
    m: int  # outputs per tile side
    g: np.ndarray  # the filter transform G, (m + 2) x 3: U = G g G^T
    tw_max: int  # tiles per tile row
    band_tiles: int  # tiles per band (the band's V and M stay near the L2 cache)
    rows_max: int  # tile rows per band
    min_tiles: int  # on fewer, streaming the larger weights costs more than the products save
    # the same on an AVX2 host without AVX-512, whose direct kernels run fewer products a cycle
    min_tiles_avx2: int
    in_cost: float  # the output transform's cost, in multiply-adds of input channels
    out_cost: float  # the input transform's, in output channels
    lane_cost: float  # a tile row's idle lanes (its row transform runs in whole steps of `step` tiles)
    step: int
    count_spatial: bool  # whether the tiles' outputs past the plane count against it
    # its results round more than a direct sum's, past DESIGN.md's tolerance on some inputs: taken only
    # with --fast-math (TargetTraits.fast_math)
    rounds_more: bool
    macros: dict[str, str] = field(default_factory=dict)  # the limits' names in aotc_conv.h

    @property
    def products(self) -> int:
        return (self.m + 2) ** 2

    def tiles(self, out_h: int, out_w: int) -> tuple[int, int]:
        """(tile rows, tiles per row)"""
        return math.ceil(out_h / self.m), math.ceil(out_w / self.m)

    def applies(self, out_h: int, out_w: int, avx2: bool = False) -> bool:
        """Whether the plane's tiles fit the kernel's rows and are enough (avx2: for an AVX2 host without AVX-512)."""
        th, tw = self.tiles(out_h, out_w)
        return tw <= self.tw_max and th * tw >= (self.min_tiles_avx2 if avx2 else self.min_tiles)

    def gain(self, in_c: int, out_c: int, out_h: int, out_w: int) -> float:
        """The expected speed-up over the direct kernels: the products saved times the share of the
        GEMM's columns (whole panels, and a narrow tile for a last panel of a few) and, for F(4 x 4), of the
        tiles' outputs the plane fills, over 1 + the
        transforms' costs, the input's shared by the output channels and the output's by the input
        channels, and the idle lanes of tile rows shorter than a step shared by the input channels."""
        th, tw = self.tiles(out_h, out_w)
        tiles = th * tw
        last = tiles % PANEL
        used = tiles / (tiles - last + (NARROW if 0 < last <= NARROW else PANEL if last else 0))
        if self.count_spatial:
            used *= out_h * out_w / (tiles * self.m * self.m)
        idle = math.ceil(tw / self.step) * self.step / tw - 1
        saved = 9 * self.m * self.m / self.products
        return saved * used / (1 + (self.in_cost + self.lane_cost * idle) / in_c + self.out_cost / out_c)

    def lane_floats(self, rows: int, tw: int, th: int, in_c: int, out_c: int, threads: int) -> tuple[int, bool]:
        """A lane's floats with threads, and whether the conv runs by bands (aotc_conv.h's
        aotc_conv_winograd_lane_floats: at least `threads` bands of `rows` tile rows, each thread a band's V and
        the products of every output channel within LANE_FLOATS), else by blocks of LANE_M output channels."""
        tp = _panels(rows * tw) * PANEL
        full = self.products * ((in_c + out_c) * tp + 2 * PITCH_PAD)
        if math.ceil(th / rows) >= threads and full <= LANE_FLOATS:
            return full, True
        return self.products * ((in_c + LANE_M) * tp + 2 * PITCH_PAD), False

    def runs_by_bands(self, out_h: int, out_w: int, in_c: int, out_c: int, threads: int) -> bool:
        """Whether some band of the limits lets the conv run by bands on `threads` threads (lane_floats)."""
        th, tw = self.tiles(out_h, out_w)
        return threads > 1 and any(self.lane_floats(rows, tw, th, in_c, out_c, threads)[1]
                                   for rows in range(1, max(1, min(th, self.rows_max, self.band_tiles // tw)) + 1))

    def band_rows(self, out_h: int, out_w: int, in_c: int, out_c: int, budget: int,
                  threads: int = 1) -> tuple[int, int] | None:
        """(tile rows per band, scratch bytes): of the bands the limits and the budget allow, the tallest
        of those whose GEMMs run the fewest columns, the band's transformed inputs (in_c x tiles) and
        products (out_c x tiles) in scratch; None if not even one tile row fits. With threads, a lane per
        thread (lane_floats), each at most LANE_FLOATS and the lanes within the budget, and the bands that
        keep the busiest thread's columns fewest: by bands, a thread's bands (a share of them, rounded up);
        by blocks of output channels, its share of the blocks of all the columns, BLOCK_COST as dear.

        A band's GEMMs run its tiles rounded up to whole panels: a narrow tile for a last few columns took
        as long as a whole panel in the measurements (ResNet-18's 64 ch 56 x 56 conv, 28 tiles per row: bands
        of 8 rows, 224 tiles, 1548 us; of 7 rows, 196 tiles, 1622 us)."""
        th, tw = self.tiles(out_h, out_w)
        best: tuple[float, int, int, int] | None = None  # (busiest thread's columns, columns, -rows, scratch)
        for rows in range(max(1, min(th, self.rows_max, self.band_tiles // tw)), 0, -1):
            full, last = divmod(th, rows)
            columns = (full * _panels(rows * tw) + _panels(last * tw)) * PANEL
            busiest: float = columns
            if threads > 1:
                lane, by_bands = self.lane_floats(rows, tw, th, in_c, out_c, threads)
                if lane > LANE_FLOATS:
                    continue
                scratch = threads * lane * 4
                blocks = math.ceil(out_c / LANE_M)
                busiest = (math.ceil(math.ceil(th / rows) / threads) * _panels(rows * tw) * PANEL if by_bands
                           else columns * math.ceil(blocks / threads) / blocks * BLOCK_COST)
            else:
                scratch = self.products * ((in_c + out_c) * _panels(rows * tw) * PANEL + 2 * PITCH_PAD) * 4
            if scratch > budget:
                continue
            key = (busiest, columns, -rows, scratch)
            if best is None or key < best:
                best = key
        return None if best is None else (-best[2], best[3])

    def weights(self, w: np.ndarray) -> np.ndarray:
        """The (m + 2)^2 matrices U[e] (out_c x in_c) the kernel reads: G g G^T of each 3 x 3 filter g,
        computed in float64, element e = (m + 2) i + j of the result."""
        u = np.einsum("ik,mckl,jl->ijmc", self.g, np.asarray(w, np.float64), self.g)
        return u.reshape(self.products, w.shape[0], w.shape[1]).astype(np.float32)


def _limits(prefix: str) -> dict:
    """A variant's limits, tw_max, band_tiles and rows_max, as aotc_conv.h defines them (<prefix>_TW_MAX,
    _BAND_MAX, _ROWS_MAX), and those names (Variant.macros)."""
    names = {"tw_max": f"{prefix}_TW_MAX", "band_tiles": f"{prefix}_BAND_MAX", "rows_max": f"{prefix}_ROWS_MAX"}
    return {**{attr: define("aotc_conv.h", name) for attr, name in names.items()}, "macros": names}


# The models were fitted to single convs on an AVX-512 core (issue 24). F(2 x 2), direct -> Winograd:
# 64 ch 56 x 56 1.40 x, 128 ch 28 x 28 1.60 x, 256 ch 14 x 14 1.63 x, SqueezeNet's 32 -> 128 27 x 27
# 1.10 x, 64 -> 256 13 x 13 1.01 x, 48 -> 192 13 x 13 0.93 x, ResNet-8's 32 ch 16 x 16 1.00 x; on fewer
# tiles than min_tiles ResNet-18's 7 x 7 x 512 convs (16 tiles) ran 4 % slower. F(4 x 4), the same
# convs: 1.85, 1.9, 2.13, 1.31, 1.51 and 1.36 x. At AVX2 without AVX-512 (a generic x86 host built for
# x86-64-v3; issue 64), where the direct kernels do half the products a cycle, F(2 x 2) on ResNet-50's 7 x 7 x 512
# convs (16 tiles) took 1.66 ms against the implicit GEMM's 1.89 (AOTC_TAP per node in the model, load 3-4).
F2 = Variant("aotc_conv_winograd_f32", 2, np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5],
                                                   [0.0, 0.0, 1.0]]),
             **_limits("AOTC_WINO"), min_tiles=32, min_tiles_avx2=16, in_cost=26.6, out_cost=12.4, lane_cost=8.0,
             step=16, count_spatial=False, rounds_more=False)
F4 = Variant("aotc_conv_winograd4_f32", 4, np.array([[1 / 4, 0.0, 0.0], [-1 / 6, -1 / 6, -1 / 6],
                                                    [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
                                                    [1 / 24, -1 / 12, 1 / 6], [0.0, 0.0, 1.0]]),
             **_limits("AOTC_WINO4"), min_tiles=8, min_tiles_avx2=8, in_cost=22.1, out_cost=49.8, lane_cost=13.2,
             step=8, count_spatial=True, rounds_more=True)
VARIANTS = (F4, F2)
MIN_GAIN = 1.05  # taken where the model expects at least this speed-up
# With --threads, where a conv cannot run by bands (Variant.lane_floats), Winograd only where its products do
# at least this many multiply-adds per float of V and M (in_c out_c / (in_c + out_c)). Why: by blocks of output
# channels each thread transforms the whole band's input into a lane of its own (conv_winograd.h, so that no
# band passes between the cores), work the products must pay for: in such lanes ResNet-18's 64-channel convs
# (intensity 32; one block of 64 channels, so one thread) took 1360-1400 us at two threads, against 1010 on
# the implicit GEMM; its 128- and 256-channel ones (64, 128) 720-780 us against 1010-1170.
THREADS_MIN_INTENSITY = 64


def assumes(v: Variant, threads: int = 1) -> dict[str, int]:
    """The limits the compiler's bands keep to, by their aotc_conv.h names: the generated code checks them."""
    lanes = {"AOTC_WINO_LANE_M": LANE_M, "AOTC_WINO_LANE_FLOATS": LANE_FLOATS} if threads > 1 else {}
    return {**{name: getattr(v, attr) for attr, name in v.macros.items()}, **lanes}


def threads_allow(v: Variant, in_c: int, out_c: int, out_h: int, out_w: int, threads: int) -> bool:
    """Whether v may take the conv on `threads` threads: one thread, a conv that runs by bands, or one of
    intensity THREADS_MIN_INTENSITY or more."""
    return (threads <= 1 or in_c * out_c >= THREADS_MIN_INTENSITY * (in_c + out_c)
            or v.runs_by_bands(out_h, out_w, in_c, out_c, threads))


def best(in_c: int, out_c: int, out_h: int, out_w: int, fast_math: bool, threads: int = 1,
         avx2: bool = False) -> Variant | None:
    """The variant with the largest expected gain that applies (with fast_math, those that round more
    too; avx2: on an AVX2 host without AVX-512, Variant.applies), if it reaches MIN_GAIN; with threads, one that
    runs by bands (Variant.runs_by_bands), or any where the conv's intensity reaches THREADS_MIN_INTENSITY."""
    gains = [(v.gain(in_c, out_c, out_h, out_w), v) for v in VARIANTS
             if v.applies(out_h, out_w, avx2) and (fast_math or not v.rounds_more)
             and threads_allow(v, in_c, out_c, out_h, out_w, threads)]
    gain, v = max(gains, key=lambda g: g[0], default=(0.0, None))
    return v if gain >= MIN_GAIN else None
