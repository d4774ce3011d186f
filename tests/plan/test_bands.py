"""Fused row bands under --ram-budget (issue 53, aot/plan/bands.py, aot/kernels/tflite_bands.py, aot/select.py
fuse_in_bands): the bands' geometry against a numpy model of the layers' rows (every output row computed once, from the
rows it needs, the line buffers holding them), then person_int8 with a budget only bands meet: the
plan says which run was banded, R and the bytes saved; outputs identical to the unbudgeted bundle's
and to LiteRT's reference kernels, on the host under ASan/UBSan and on the M4 under qemu."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool
from hypothesis import given, settings
from hypothesis import strategies as st
from modelcheck import sanitize_args

from aot.build import cmake_exe, run_bundle
from aot.compiler import Options, compile_file
from aot.footprint import budget_summary, summary
from aot.kernels import tflite_cost
from aot.kernels.tflite_bands import ALIGNMENT, Layer, overlap, schedule, schedule_fine
from aot.plan import ALIGNMENT as PLAN_ALIGNMENT
from aot.plan import BudgetError

HERE = Path(__file__).resolve().parents[1]
PERSON = HERE / "models" / "tflite" / "person_int8.tflite"
BUDGET = 7000  # person_int8 on the M4: 14,528 B without a budget, 11,840 B the least without bands


def _simulate(layers: list[Layer], rows: int, fine: bool = False) -> None:
    """Run the schedule (schedule_fine's where fine) on row indices: each line buffer a list of the rows it holds
    by position (a keep of (0, 0) moves nothing, as the emitter's memmove of 0 rows), each layer's call checked to
    read exactly the input rows its output rows need (pad_top and h as the kernels take them) and the last output
    written once, every row; the run's output never over input rows a later band reads, at the overlap's offset."""
    sched = (schedule_fine if fine else schedule)(layers, rows)
    assert sched is not None
    bufs: list[list[int]] = [[] for _ in layers[:-1]]
    written: list[int] = []
    computed: list[set[int]] = [set() for _ in layers]
    below = overlap(layers, sched)
    reads: list[tuple[int, int]] = []  # (band, lowest input row layer 0 reads)
    for b, band in enumerate(sched.bands):
        fresh: list[set[int]] = [set() for _ in layers[:-1]]  # per buffer, the rows written in this band
        for k, (src, n) in enumerate(band.keep):
            if n:
                bufs[k] = bufs[k][src:src + n]
        for j, (lay, call) in enumerate(zip(layers, band.calls, strict=True)):
            if not call.oh:
                continue
            src = list(range(call.x_row, call.x_row + call.h)) if j == 0 else \
                bufs[j - 1][call.x_row:call.x_row + call.h]
            assert len(src) == call.h and src == list(range(src[0], src[0] + call.h)), (b, j, src)
            if j == 0:
                reads.append((b, src[0]))
            elif sched.carried is not None and not sched.carried[j - 1]:  # its rows never stay to the next band
                assert fresh[j - 1].issuperset(src), (b, j, src)
            first = src[0] - call.pad_top  # the image row the kernel's row -pad_top stands for
            assert (first + lay.p) % lay.s == 0, (b, j, first)
            out_rows = []
            for oy in range(call.oh):
                taps = [oy * lay.s - call.pad_top + i * lay.d for i in range(lay.k)]
                inside = [src[0] + t for t in taps if 0 <= t < call.h]
                g = (first + lay.p) // lay.s + oy  # this output row in the image
                want = [r for r in (g * lay.s - lay.p + i * lay.d for i in range(lay.k)) if 0 <= r < lay.h]
                assert inside == want, (b, j, oy, inside, want)
                out_rows.append(g)
            if not lay.recompute:  # nothing computed twice, but a grouped expansion's rows (its buffer keeps none)
                assert not computed[j].intersection(out_rows), (b, j, out_rows)
            computed[j].update(out_rows)
            if j == len(layers) - 1:
                assert out_rows == list(range(call.y_row, call.y_row + call.oh))
                written += out_rows
            else:
                buf = bufs[j]
                # written after the rows kept (where the keep dropped all of them or moved none: from its top, or
                # after those held, as the schedule says)
                assert call.y_row == len(buf) or (call.y_row == 0 and band.keep[j] == (0, 0)), (b, j, call.y_row)
                bufs[j] = buf[:call.y_row] + out_rows
                fresh[j].update(out_rows)
                assert len(bufs[j]) <= sched.buffer_rows[j]
    assert written == list(range(layers[-1].oh))
    for b, band in enumerate(sched.bands):
        end = band.calls[-1].y_row + band.calls[-1].oh
        for bb, r in reads:  # a grouped pair alone: its later groups read the band's input after it wrote
            if bb > b or (bb == b and len(layers) == 2 and layers[0].recompute):
                assert end * layers[-1].out_row - below <= r * layers[0].in_row, (b, bb)


def _chain(spec: list[tuple[int, int, int, int]], h: int, width: int = 3) -> list[Layer]:
    """Layers from (k, s, p, d) each, the first reading h rows; rows `width` bytes long throughout."""
    layers = []
    for k, s, p, d in spec:
        oh = (h + 2 * p - (k - 1) * d - 1) // s + 1
        layers.append(Layer(h, oh, k, s, p, d, width, width))
        h = oh
    return layers


def test_line_buffers_keep_the_plans_alignment():
    assert ALIGNMENT == PLAN_ALIGNMENT


def test_bands_of_mobilenets_first_stage():
    """pw -> dw stride 2 -> pw on 16 rows: the depthwise's input keeps k - s = 1 row between bands, its
    buffer 2R + 1 rows; the last output's rows each computed once."""
    layers = _chain([(1, 1, 0, 1), (3, 2, 1, 1), (1, 1, 0, 1)], 16)
    for rows in (1, 2, 3, 8):
        _simulate(layers, rows)
    sched = schedule(layers, 2)
    assert sched.buffer_rows == (5, 2) and len(sched.bands) == 4
    assert [band.keep[0][1] for band in sched.bands] == [0, 1, 1, 1]


def test_a_grouped_expansions_buffer_keeps_no_rows():
    """pw -> dw stride 2 -> pw with the expansion's line buffer recomputed (a grouped pair, Layer.recompute): it
    keeps no row between bands, each band computes the 2R + 1 rows the depthwise reads (its halo row again), so
    the expansion computes 16 + 7 rows over 8 bands of 1 row where it computed 16; the other buffers as before."""
    plain = _chain([(1, 1, 0, 1), (3, 2, 1, 1), (1, 1, 0, 1)], 16)
    layers = [dataclasses.replace(plain[0], recompute=True), *plain[1:]]
    for rows in (1, 2, 3, 8):
        _simulate(layers, rows)
    sched = schedule(layers, 1)
    assert sched.buffer_rows == schedule(plain, 1).buffer_rows == (3, 1)
    assert all(band.keep[0] == (0, 0) for band in sched.bands)
    assert [band.calls[0].oh for band in sched.bands] == [2] + [3] * 7
    assert sum(band.calls[0].oh for band in schedule(plain, 1).bands) == 16


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 3), st.integers(0, 3), st.integers(1, 2), st.booleans()),
                min_size=2, max_size=4), st.integers(6, 40), st.integers(1, 6))
def test_bands_compute_every_row_once_from_the_rows_it_needs(spec, h, rows):
    again = [r for *_, r in spec]  # a layer whose output's line buffer keeps nothing: its rows computed again
    spec = [(k, s, min(p, (k - 1) * d), d) for k, s, p, d, _ in spec]
    layers = [dataclasses.replace(lay, recompute=r) for lay, r in zip(_chain(spec, h), again, strict=True)]
    if any(lay.oh < 1 for lay in layers):
        return
    if schedule(layers, rows) is None:  # a band reading only padding: not fused
        return
    _simulate(layers, rows)
    if schedule_fine(layers, rows) is not None:
        _simulate(layers, rows, fine=True)


def test_fine_bands_hold_one_call_of_rows():
    """schedule_fine (issue 67) on MobileNetV2 224's first run after its input's TRANSPOSE in place (stem 3 x 3
    stride 2, depthwise 3 x 3, projection, the grouped expansion recomputed, depthwise stride 2, projection): the
    stem's output holds the 3 rows one depthwise call reads (4 in schedule's bands of one row), the depthwise's
    output 1 (2), the rest as before; every row computed once but the expansion's, from the rows it needs."""
    layers = [Layer(224, 112, 3, 2, 1, 1, 672, 3584), Layer(112, 112, 3, 1, 1, 1, 3584, 3584),
              Layer(112, 112, 1, 1, 0, 1, 3584, 1792), Layer(112, 112, 1, 1, 0, 1, 1792, 256, recompute=True),
              Layer(112, 56, 3, 2, 1, 1, 256, 5376), Layer(56, 56, 1, 1, 0, 1, 5376, 1344)]
    assert schedule(layers, 1).buffer_rows == (4, 2, 3, 3, 1)
    fine = schedule_fine(layers, 1)
    assert fine.buffer_rows == (3, 1, 3, 3, 1)
    assert sum(c.oh for band in fine.bands for c in band.calls[:3]) == 3 * 112
    _simulate(layers, 1, fine=True)
    _simulate(layers, 2, fine=True)
    assert fine.carried == (True, False, True, False, False)


def test_a_fine_runs_layout_shares_bytes_never_live_at_once():
    """_layout on the run above (its 3 x 3 depthwise's output, the expansion's group, the stride-2 depthwise's output
    and the staging block live within a band only; each layer's scratch during its calls; the stem's first row and
    the projection's first 1 until their readers' calls, _head): no two blocks live at once overlap (a grouped pair's
    two layers live at once: their calls alternate), and the run needs 23,328 B: 16,128 B through the band (the
    stem's 3 rows, the projection's 3) and 8,512 B for the pair's 3 blocks and its two layers' scratch (one block:
    their calls take turns) besides, less the 1,632 B of them the stem's first row holds, where the line buffers one
    after another took 28,224 B."""
    from aot.kernels.tflite_bands import Group, _layout

    layers = [Layer(224, 112, 3, 2, 1, 1, 672, 3584), Layer(112, 112, 3, 1, 1, 1, 3584, 3584),
              Layer(112, 112, 1, 1, 0, 1, 3584, 1792), Layer(112, 112, 1, 1, 0, 1, 1792, 896, recompute=True),
              Layer(112, 56, 3, 2, 1, 1, 896, 5376), Layer(56, 56, 1, 1, 0, 1, 5376, 1344)]
    sched = schedule_fine(layers, 1)
    buffers = sched.buffer_bytes(layers)
    assert sum(buffers) + 448 == 28224
    scratch = {0: 1024, 1: 512, 2: 3616, 3: 320, 4: 256, 5: 2048}
    at, total = _layout(layers, [Group(3, 8, ((None, None),) * 12)], sched, buffers, 448, scratch)
    assert total == 16128 + 2688 + 448 + 5376 + 320 - 1632  # the pair's two kernels' scratch one block
    assert at["scratch3"] == at["scratch4"]
    live = {f"line{k}": ((0, 5) if sched.carried[k] else (k, k + 1)) for k in range(5)}
    live |= {"stage": (3, 4), **{f"scratch{m}": (m, m) for m in scratch}, "scratch3": (3, 4), "scratch4": (3, 4),
             "line4": (3, 5), "line0": (0, 2), "line0+": (0, 5), "line2": (0, 4), "line2+": (0, 5)}
    # (the pair's calls alternate a group at a time; the stem's first row is read last by the depthwise's call, but
    # by the next band's in the band that calls the projection only, the projection's first by the pair's)
    size = {**{f"line{k}": b for k, b in enumerate(buffers)}, "stage": 448, "line0": 3584, "line0+": 7168,
            "line2": 1792, "line2+": 3584, **{f"scratch{m}": b for m, b in scratch.items()}}
    assert at["line0+"] == at["line0"] + 3584 and at["line2+"] == at["line2"] + 1792
    for a in at:
        for b in at:
            if a < b and live[a][0] <= live[b][1] and live[b][0] <= live[a][1] and {a, b} != {"scratch3", "scratch4"}:
                assert at[a] + size[a] <= at[b] or at[b] + size[b] <= at[a], (a, b, at)


def _run_layout(layers: list[Layer], sched, groups: list, scratch: dict[int, int], staging: int = 0,
                group_count: int = 2) -> int:
    """Run the schedule on the node's scratch as _layout places it, byte by byte (as the emitted band loop does: each
    carried line buffer's kept rows moved to its top, then each layer's call, its kernel scratch overwritten, its
    input rows read, its output rows written; a grouped pair a group at a time through the staging block), each row
    tagged with its tensor and image row: every read finds the rows the schedule says (_simulate's model by position),
    whatever other blocks wrote over the bytes in between. Returns the layout's bytes."""
    from aot.kernels.tflite_bands import _layout

    buffers = sched.buffer_bytes(layers)
    at, total = _layout(layers, groups, sched, buffers, staging, scratch)
    mem = np.full(total, -1, np.int64)
    bufs: list[list[int]] = [[] for _ in layers[:-1]]
    paired = {g.k for g in groups}

    def put(k: int, slot: int, row: int) -> None:
        o = at[f"line{k}"] + slot * layers[k].out_row
        mem[o:o + layers[k].out_row] = (k + 1) * 100_000 + row

    def check(k: int, slots: range) -> None:
        for slot in slots:
            o = at[f"line{k}"] + slot * layers[k].out_row
            assert (mem[o:o + layers[k].out_row] == (k + 1) * 100_000 + bufs[k][slot]).all(), (k, slot, bufs[k][slot])

    def clobber(name: str, nbytes: int) -> None:
        if nbytes:
            mem[at[name]:at[name] + nbytes] = -2

    for band in sched.bands:
        for k, (src, n) in enumerate(band.keep):
            if n and k not in paired:
                o, row = at[f"line{k}"], layers[k].out_row
                mem[o:o + n * row] = mem[o + src * row:o + (src + n) * row].copy()
                bufs[k] = bufs[k][src:src + n]
        for j, call in enumerate(band.calls):
            if not call.oh or j - 1 in paired:
                continue
            for _ in range(group_count if j in paired else 1):
                for m in ((j, j + 1) if j in paired else (j,)):
                    c = band.calls[m]
                    clobber(f"scratch{m}", scratch.get(m, 0))
                    if m > 0:
                        check(m - 1, range(c.x_row, c.x_row + c.h))
                    first = (bufs[m - 1][c.x_row] if m > 0 else c.x_row) - c.pad_top
                    out = [(first + layers[m].p) // layers[m].s + oy for oy in range(c.oh)]
                    if m in paired:
                        clobber("stage", staging)
                    if m < len(layers) - 1:
                        bufs[m] = bufs[m][:c.y_row] + out
                        for i, row in enumerate(out):
                            put(m, c.y_row + i, row)
    return total


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 3), st.integers(0, 3), st.integers(1, 2)),
                min_size=2, max_size=5), st.integers(6, 40), st.integers(1, 6), st.booleans(),
       st.lists(st.integers(0, 64), min_size=5, max_size=5), st.integers(1, 9))
def test_a_shared_layout_never_overwrites_rows_still_to_be_read(spec, h, rows, fine, scratch, width):
    """_layout's blocks (a carried line buffer's head rows free after its reader's call where every band allows it,
    _head; the rest through the band; the buffers read within a band and each layer's scratch only then) run byte
    by byte over schedule's and schedule_fine's bands of random chains: every read finds its rows."""
    spec = [(k, s, min(p, (k - 1) * d), d) for k, s, p, d in spec]
    layers = _chain(spec, h, width)
    if any(lay.oh < 1 for lay in layers):
        return
    sched = (schedule_fine if fine else schedule)(layers, rows)
    if sched is None:
        return
    _run_layout(layers, sched, [], {m: b for m, b in enumerate(scratch[:len(layers)])})


def test_the_stems_head_row_holds_the_grouped_pair():
    """MobileNetV2 224's first run in groups of 8 a row a call: the stem's output keeps 2 of its 3 rows a band, so
    its first row is free from the 3 x 3 depthwise's call to the next band's start wherever the pair runs; the pair's
    group buffer, staging block and scratch go there (1,632 B less than with the stem's rows live through the band),
    and a byte-level run of the bands finds every row it reads."""
    from aot.kernels.tflite_bands import Group, _layout

    layers = [Layer(224, 112, 3, 2, 1, 1, 672, 3584), Layer(112, 112, 3, 1, 1, 1, 3584, 3584),
              Layer(112, 112, 1, 1, 0, 1, 3584, 1792), Layer(112, 112, 1, 1, 0, 1, 1792, 896, recompute=True),
              Layer(112, 56, 3, 2, 1, 1, 896, 5376), Layer(56, 56, 1, 1, 0, 1, 5376, 1344)]
    groups = [Group(3, 8, ((None, None),) * 12)]
    scratch = {0: 1024, 1: 512, 2: 3616, 3: 320, 4: 256, 5: 2048}
    for rows in (1, 2, 3):
        for sched in (schedule(layers, rows), schedule_fine(layers, rows)):
            _run_layout(layers, sched, groups, scratch, 448 * (sched.bands[0].calls[4].oh or rows))
    sched = schedule_fine(layers, 1)
    at, total = _layout(layers, groups, sched, sched.buffer_bytes(layers), 448, scratch)
    assert at["line3"] < at["line0"] + 3584 and at["stage"] < at["line0"] + 3584
    assert total == 16128 + 2688 + 448 + 5376 + 320 - 1632 == _run_layout(layers, sched, groups, scratch, 448)


def test_the_layout_from_the_top_fits_172000_b():
    """MobileNetV2 224's first run in groups of 8 a row a call at 172,000 B (21,472 B beside its 150,528 B input,
    issue 67): placed largest first from the bottom, the stride-2 depthwise's output row (5,376 B, live from the pair
    on) fits the stem's dead first row (3,584 B) only with 32 B of the blocks after it: 21,504 B. From the top down,
    the longest lived first, the stem's first row sits between that row and the 3 x 3 depthwise's output row, both
    dead at each other's calls: 21,472 B, and a byte-level run of the bands finds every row it reads."""
    from aot.kernels.tflite_bands import Group, _layout

    layers = [Layer(224, 112, 3, 2, 1, 1, 672, 3584), Layer(112, 112, 3, 1, 1, 1, 3584, 3584),
              Layer(112, 112, 1, 1, 0, 1, 3584, 1792), Layer(112, 112, 1, 1, 0, 1, 1792, 896, recompute=True),
              Layer(112, 56, 3, 2, 1, 1, 896, 5376), Layer(56, 56, 1, 1, 0, 1, 5376, 1344)]
    groups = [Group(3, 8, ((None, None),) * 12)]
    scratch = {0: 4832, 1: 1760, 2: 1696, 3: 320, 4: 400, 5: 3264}  # each layer's kernel at its room there
    sched = schedule_fine(layers, 1)
    at, total = _layout(layers, groups, sched, sched.buffer_bytes(layers), 448, scratch)
    assert total == 172000 - 150528 == _run_layout(layers, sched, groups, scratch, 448)
    assert at["line4"] < at["line0"] + 3584 and at["line0"] < at["line4"] + 5376  # over the stem's first row
    for rows in (1, 2):  # and where the other order is the lesser, it stays
        for s in (schedule(layers, rows), schedule_fine(layers, rows)):
            _run_layout(layers, s, groups, scratch, 448 * (s.bands[0].calls[4].oh or rows))


def test_the_staging_block_starts_below_the_group_rows():
    """The same run with its pair's depthwise node given (3 x 3, stride 2, no top or left padding): its staging block
    (448 B, one group's output row) starts 16 B below the group's rows, its input, which the depthwise overwrites only
    where no later position reads (tflite_int8.overlap_bytes' bound: position P's 8 outputs after the lowest input
    byte P or a later one reads, 16 (P - 1) B in); the two one block of 2,704 B where they took 3,136 B, and a
    byte-level run of the bands finds every row it reads. Without the node (the tests above) they stay apart."""
    from types import SimpleNamespace

    from aot.kernels.tflite_bands import Group, _layout, _stage_below

    layers = [Layer(224, 112, 3, 2, 1, 1, 672, 3584), Layer(112, 112, 3, 1, 1, 1, 3584, 3584),
              Layer(112, 112, 1, 1, 0, 1, 3584, 1792), Layer(112, 112, 1, 1, 0, 1, 1792, 896, recompute=True),
              Layer(112, 56, 3, 2, 0, 1, 896, 5376), Layer(56, 56, 1, 1, 0, 1, 5376, 1344)]
    dw = SimpleNamespace(attrs={"kernel": [3, 3], "strides": [2, 2], "pads": [0, 0, 1, 1]})
    groups = [Group(3, 8, ((None, dw),) * 12)]
    scratch = {0: 4832, 1: 1760, 2: 1696, 3: 768, 4: 768, 5: 3264}
    sched = schedule_fine(layers, 1)
    assert _stage_below(layers, groups, sched) == 16
    assert _stage_below(layers, [Group(3, 8, ((None, None),) * 12)], sched) is None
    at, total = _layout(layers, groups, sched, sched.buffer_bytes(layers), 448, scratch)
    assert at["line3"] == at["stage"] + 16
    assert total == 21472 == _run_layout(layers, sched, groups, scratch, 448)
    apart = _layout(layers, [Group(3, 8, ((None, None),) * 12)], sched, sched.buffer_bytes(layers), 448, scratch)
    assert apart[1] > 21472


def test_a_3x3_depthwise_under_a_budget_leaves_its_padded_span():
    """_fit_depthwise (a RAM budget's "tiles", issue 67): MobileNetV2's 3 x 3 depthwise a row a call (112 wide, 32
    channels) takes 3,168 B on its padded path, which needs a run of sums a row long; where the budget leaves less
    (1,760 B at 172,000 B) its run goes below the row (the unpadded path, 16 B a position), within the budget, down
    to DSP_DW_RUN_MIN positions; where the padded span fits, it stays."""
    from aot.ir import Graph, Node, Tensor
    from aot.kernels.tflite_int8 import DSP_DW_RUN_MIN, _depthwise_dsp_scratch, _fit_depthwise

    w = np.zeros((1, 3, 3, 32), np.int8)
    t = {"x": Tensor("x", (1, 3, 112, 32), "int8"), "w": Tensor("w", w.shape, "int8", w),
         "y": Tensor("y", (1, 1, 112, 32), "int8")}
    node = Node("TflDepthwiseConv2D", "dw", ["x", "w"], ["y"],
                {"kernel": [3, 3], "strides": [1, 1], "dilations": [1, 1], "pads": [0, 1, 0, 1],
                 "y_min": -128, "y_max": 127, "y_zero": -128})
    g = Graph("g", [node], t, ["x"], ["y"])
    padded = _depthwise_dsp_scratch(node, g)
    assert padded > 3000 and _fit_depthwise(node, g, padded).scratch == padded
    fit = _fit_depthwise(node, g, 1760)
    assert fit.scratch <= 1760 and fit.detail == 1760 // 16 < 112
    assert _fit_depthwise(node, g, 0).detail == DSP_DW_RUN_MIN


def test_a_narrow_rows_depthwise_keeps_its_row_run_under_any_budget():
    """_fit_depthwise on rows narrower than DSP_DW_RUN_MIN (KWS DS-CNN's 25 x 5 planes, 64 channels): where not even
    a run of a row fits, the run stays a row long (the padded path's least), never DSP_DW_RUN_MIN positions, which
    took more scratch and moved KWS's least arena from 9,872 to 10,048 B (mv2172's run below the row)."""
    from aot.ir import Graph, Node, Tensor
    from aot.kernels.tflite_int8 import _depthwise_dsp_scratch, _fit_depthwise

    w = np.zeros((1, 3, 3, 64), np.int8)
    t = {"x": Tensor("x", (1, 25, 5, 64), "int8"), "w": Tensor("w", w.shape, "int8", w),
         "y": Tensor("y", (1, 25, 5, 64), "int8")}
    node = Node("TflDepthwiseConv2D", "dw", ["x", "w"], ["y"],
                {"kernel": [3, 3], "strides": [1, 1], "dilations": [1, 1], "pads": [1, 1, 1, 1],
                 "y_min": -128, "y_max": 127, "y_zero": 0})
    g = Graph("g", [node], t, ["x"], ["y"])
    least = _fit_depthwise(node, g, 0)
    assert least.detail == 5 and least.scratch == _depthwise_dsp_scratch(node, g, 5) < _depthwise_dsp_scratch(node, g)


def _compile(out: Path, target: str, budget: int | None, flags: tuple[str, ...] = ()) -> dict:
    b = compile_file(PERSON, Options(name="person", target=target, ram_budget=budget))
    b.write(out / "bundle")
    return b.metadata


def test_person_int8_within_a_budget_only_bands_meet():
    """Without bands the least arena is 11,840 B (the peak: the 24 x 24 x 16 expansion and the stride-2
    depthwise over it); 7,000 B is met by a run of the first four layers in bands, named in the report
    with its R and the bytes saved; a budget below the least with bands is refused in one line naming
    the peak step and that least."""
    meta = compile_file(PERSON, Options(name="person", target="mps2-an386", ram_budget=BUDGET)).metadata
    budget = meta["memory"]["ram_budget"]
    assert meta["memory"]["arena_bytes"] <= BUDGET and budget["unbudgeted_arena_bytes"] == 14528
    bands = budget["traded"]["bands"]
    run = bands["runs"][0]
    # (schedule_fine's bands are passes over the layers: more than the last output's rows / R)
    assert run["layers"][-1] == "DEPTHWISE_CONV_2D_3" and run["rows"] >= 1 and (
        run["bands"] == -(-12 // run["rows"]) or run.get("row_a_call") and run["bands"] > -(-12 // run["rows"]))
    assert bands["bytes_saved"] == 11840 - meta["memory"]["arena_bytes"]
    assert any(n["op"] == "TflBandRun" for n in meta["nodes"])
    report = {"name": "person", "target": "mps2-an386",
              "model": {"flash_bytes": 1, "ram_bytes": 2, "arena_bytes": meta["memory"]["arena_bytes"], "data": 0,
                        "bss": 0, "stack_bytes": 0, "ram_budget": budget}}
    assert f"row bands saved {bands['bytes_saved']} B on 1 runs of layers (CONV_2D_0..DEPTHWISE_CONV_2D_3: " \
        in budget_summary(budget) and budget_summary(budget) in summary(report)
    with pytest.raises(BudgetError) as e:
        compile_file(PERSON, Options(name="person", target="mps2-an386", ram_budget=2000))
    assert "its peak is step 0, node bands_" in str(e.value) and "row bands" in str(e.value)
    assert e.value.least_bytes < 11840
    plain = compile_file(PERSON, Options(name="person", target="mps2-an386")).metadata
    assert "ram_budget" not in plain["memory"] and not any(n["op"] == "TflBandRun" for n in plain["nodes"])


@pytest.mark.full
def test_the_fit_takes_the_least_estimate_of_what_fits(monkeypatch):
    """Issue 67: a run's fit compares the band heights and forms that fit the budget by the estimate
    (aot/kernels/tflite_cost.py) where the layers take the M-profile kernels: every fit person_int8 asks for at
    7,000 B on the M4 fits its budget wherever the first that fits (the most rows, as before) did, at no more
    estimated cycles than that one, and less at some; on the host, whose kernels the estimate does not count, the
    fit is the first that fits, as before."""
    import aot.kernels.tflite_bands as tb

    asked: list[tuple] = []
    real = tb._fit

    def spy(node, graph, budget, least, choose, memo=None):  # noqa: ANN001, ANN202
        asked.append((node, graph, budget, least, choose))
        return real(node, graph, budget, least, choose, memo)

    monkeypatch.setattr(tb, "_fit", spy)
    compile_file(PERSON, Options(name="person", target="mps2-an386", ram_budget=BUDGET))
    host = len(asked)
    compile_file(PERSON, Options(name="person", target="host", ram_budget=BUDGET))
    assert 0 < host < len(asked)
    chosen = [real(*a) for a in asked]
    monkeypatch.setattr(tb, "_estimate", lambda node, graph, choice: 0.0)  # the first that fits
    first = [real(*a) for a in asked]
    less = 0
    for k, (a, new, old) in enumerate(zip(asked, chosen, first, strict=True)):
        node, graph, budget = a[:3]
        assert new.scratch <= budget or old.scratch > budget, node.name
        if k >= host:
            assert new.detail.schedule == old.detail.schedule and new.scratch == old.scratch, node.name
            continue
        if old.scratch <= budget:
            got, was = tflite_cost.estimate(node, graph, new), tflite_cost.estimate(node, graph, old)
            assert got <= was, (node.name, budget, got, was)
            less += got < was
    assert less > 0


def _inputs(meta: dict, seeds: range) -> list[list[np.ndarray]]:
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        out.append([rng.integers(-128, 128, tuple(s["shape"])).astype(np.int8) for s in meta["inputs"]])
    return out


def _litert(tmp_path: Path, runs: list[list[np.ndarray]]) -> list[np.ndarray] | None:
    try:
        import ai_edge_litert  # noqa: F401
    except ImportError:
        return None
    np.savez(tmp_path / "runs_in.npz", input_0=np.stack([r[0] for r in runs]))
    ref = subprocess.run([sys.executable, str(HERE / "tflite_reference.py"), str(PERSON), str(tmp_path / "runs_in.npz"),
                          str(tmp_path / "runs_out.npz"), "--runs"], capture_output=True, text=True)
    assert ref.returncode == 0, ref.stderr[-2000:]
    return list(np.load(tmp_path / "runs_out.npz")["output_0"])


@pytest.mark.full
@pytest.mark.parametrize("budget", [BUDGET, 9000, 6000])
def test_banded_person_identical_on_the_host_under_sanitizers(tmp_path, budget):
    """The host bundle with bands (ASan and UBSan stop the runner on any finding) gives every output
    element of the unbudgeted bundle and of LiteRT's reference kernels."""
    metas = {}
    for name, b in (("banded", budget), ("plain", None)):
        out = tmp_path / name
        metas[name] = _compile(out, "host", b)
        subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON",
                        *(sanitize_args(out / "bundle") if name == "banded" else ())], check=True, capture_output=True)
        subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], check=True, capture_output=True)
    assert "bands" in metas["banded"]["memory"]["ram_budget"]["traded"]
    runs = _inputs(metas["banded"], range(6))
    refs = _litert(tmp_path, runs)
    for r, feeds in enumerate(runs):
        got, _ = run_bundle(tmp_path / "banded", metas["banded"], feeds)
        want, _ = run_bundle(tmp_path / "plain", metas["plain"], feeds)
        name = metas["banded"]["outputs"][0]["name"]
        assert np.array_equal(got[name], want[name]), r
        if refs is not None:
            assert np.array_equal(got[name], refs[r]), r


@pytest.mark.full
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_banded_person_identical_on_the_m4_and_m55(tmp_path, board):
    """On the M4 (mps2-an386 under qemu: the DSP paths, their scratch sized per band) and the M55
    (mps3-an547: Helium's CONV_2D) the banded bundle gives every output element of the unbudgeted one
    and of LiteRT's reference kernels."""
    require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    from aot.build import configure
    metas = {}
    for name, b in (("banded", BUDGET), ("plain", None)):
        metas[name] = _compile(tmp_path / name, board, b)
        configure(tmp_path / name, board)
    assert "bands" in metas["banded"]["memory"]["ram_budget"]["traded"]
    runs = _inputs(metas["banded"], range(3))
    refs = _litert(tmp_path, runs)
    name = metas["banded"]["outputs"][0]["name"]
    for r, feeds in enumerate(runs):
        got, _ = run_bundle(tmp_path / "banded", metas["banded"], feeds)
        want, _ = run_bundle(tmp_path / "plain", metas["plain"], feeds)
        assert np.array_equal(got[name], want[name]), r
        if refs is not None:
            assert np.array_equal(got[name], refs[r]), r
    assert json.loads((tmp_path / "banded" / "bundle" / "metadata.json").read_text())["memory"]["arena_bytes"] <= BUDGET


def test_kept_rows_sit_between_the_output_written_and_the_input_still_read():
    """keep_rows (issue 67) on MobileNetV2 224's first run in groups of 8 a row a call, its output written over its
    input from the same byte: each band that keeps rows saves the rows the next band's depthwise reads again, that
    band starts from exactly those, and from the save to the next band's move the store holds no byte of the input
    a band from then on reads and none of the output written by then. Where the gap cannot hold the store (the first
    bands) the expansion computes every row, as before; with no slot to reuse, nothing is kept."""
    from aot.kernels.tflite_bands import Group, keep_rows

    layers = [Layer(224, 112, 3, 2, 1, 1, 672, 3584), Layer(112, 112, 3, 1, 1, 1, 3584, 3584),
              Layer(112, 112, 1, 1, 0, 1, 3584, 1792), Layer(112, 112, 1, 1, 0, 1, 1792, 896, recompute=True),
              Layer(112, 56, 3, 2, 0, 1, 896, 5376), Layer(56, 56, 1, 1, 0, 1, 5376, 1344)]
    group = Group(3, 8, ((None, None),) * 12)
    sched = schedule_fine(layers, 1)
    assert keep_rows(sched, layers, group, None, 75264) is None
    kept = keep_rows(sched, layers, group, (0, 150528, 0), 75264)
    assert kept is not None and kept.rows == 1 and kept.nbytes == 12 * 896
    rows_read: list[tuple[int, int]] = []  # per band the expansion's rows the depthwise reads (absolute)
    done = 0
    for band in sched.bands:
        c = band.calls[4]
        rows_read.append((2 * done, min(2 * (done + c.oh) + 1, 112)) if c.oh else (0, 0))
        done += c.oh
    first_read = [min((b.calls[0].x_row * 672 for b in sched.bands[k:] if b.calls[0].oh), default=150528)
                  for k in range(len(sched.bands))]
    written = np.maximum.accumulate([(b.calls[5].y_row + b.calls[5].oh) * 1344 if b.calls[5].oh else 0
                                     for b in sched.bands])
    pair = [k for k, b in enumerate(sched.bands) if b.calls[4].oh]
    t = kept.table
    for a, b in zip(pair, pair[1:], strict=False):
        if t[a, 3]:  # a saves: b uses them, moved from where a put them
            assert t[b, 2] == t[a, 3] == rows_read[a][1] - rows_read[b][0] == 1 and t[b, 1] == t[a, 0]
            held = range(a, b)  # from a's save to b's move
            assert all(t[a, 0] + kept.nbytes <= first_read[k] for k in held)
            assert all(written[k] <= t[a, 0] for k in held)
        else:
            assert t[b, 2] == 0
    assert t[pair[0], 2] == 0 and 40 <= np.count_nonzero(t[:, 2]) < len(pair)
