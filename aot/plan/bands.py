"""Fused row bands (issue 53, docs/fused-tiles.md): a run of convs around a --ram-budget's peak step
executed band by band, R rows of the run's last output at a time over the full width, each tensor
between two of its layers a line buffer of the rows a band needs (the rows kept from the band before
moved to its top, so nothing is computed twice).

This module is the geometry and the choice: which rows each layer computes in each band, what its
call sees (x from which row, h rows, pad_top, oh rows written where), the buffers' rows, how far the
run's output may start below its input, and the driver that fuses runs only when plan_memory's
techniques cannot meet the budget (plan_with_bands). The op that runs a fused run and writes its C
is aot/kernels/tflite_bands.py."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aot.ir import Graph, Node
from aot.plan.buffers import ALIGNMENT, Plan
from aot.plan.placement import _live_per_step
from aot.plan.planner import BudgetError


@dataclass(frozen=True)
class Layer:
    """One conv of a run along the rows: its input's h rows of in_row bytes, its output's oh rows of
    out_row bytes, window k, stride s, top padding p, dilation d."""

    h: int
    oh: int
    k: int
    s: int
    p: int
    d: int
    in_row: int
    out_row: int
    last_only: bool = False  # it may only end a run (a conv with its residual ADD fused: it reads another tensor)


@dataclass(frozen=True)
class Call:
    """One layer's call in one band: its input from row x_row (of the run's input for the first layer,
    of its line buffer for the others: from the buffer's top), h rows of it, pad_top, and oh rows of
    output written from row y_row (of the run's output for the last layer, of its line buffer for the
    others). oh 0: the layer has no new rows in this band and is not called."""

    x_row: int
    h: int
    pad_top: int
    y_row: int
    oh: int


@dataclass(frozen=True)
class Band:
    """Before the calls, each line buffer's rows kept from the band before move to its top: (from row,
    rows), rows 0 where none are kept."""

    keep: tuple[tuple[int, int], ...]
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class Schedule:
    rows: int  # R: rows of the run's output a band
    bands: tuple[Band, ...]
    buffer_rows: tuple[int, ...]  # per tensor between two layers, the rows its line buffer holds

    def buffer_bytes(self, layers: list[Layer]) -> list[int]:
        """Each line buffer's bytes, rounded up to the alignment (they are laid out one after another)."""
        return [-(-r * layers[k].out_row // ALIGNMENT) * ALIGNMENT for k, r in enumerate(self.buffer_rows)]


def schedule(layers: list[Layer], rows: int) -> Schedule | None:
    """The bands of `rows` rows of the last layer's output. Going from the last layer back, a layer's
    new output rows [c0, c1) need input rows [max(c0 s - p, 0), min((c1 - 1) s - p + (k - 1) d + 1, h));
    a line buffer holds the rows its reader needs in this band, of which those it held already are kept
    (moved to its top) and the rest are computed by its writer now. None where some band's rows would
    read only padding (no input row at all): such runs are not fused."""
    n = len(layers)
    held = [(0, 0)] * (n - 1)  # per line buffer, the rows of its tensor it holds from its top
    most = [0] * (n - 1)
    bands = []
    for r0 in range(0, layers[-1].oh, rows):
        new = (r0, min(r0 + rows, layers[-1].oh))  # the rows layer j computes in this band
        calls = [Call(0, 0, 0, 0, 0)] * n
        keep = [(0, 0)] * (n - 1)
        for j in range(n - 1, -1, -1):
            lay, (c0, c1) = layers[j], new
            if c1 <= c0:  # nothing new: its input's buffer keeps what it holds, where it is
                new = (0, 0)
                continue
            n0 = max(c0 * lay.s - lay.p, 0)
            n1 = min((c1 - 1) * lay.s - lay.p + (lay.k - 1) * lay.d + 1, lay.h)
            if n1 <= n0:
                return None
            y_row = c0 if j == n - 1 else c0 - held[j][0]
            calls[j] = Call(n0 if j == 0 else 0, n1 - n0, lay.p - c0 * lay.s + n0, y_row, c1 - c0)
            if j > 0:
                h0, h1 = held[j - 1]
                assert n0 >= h0, (j, n0, h0)  # bands go down the image
                kept = h1 - n0 if h1 > n0 else 0
                keep[j - 1] = (n0 - h0, kept) if kept else (0, 0)
                held[j - 1] = (n0, n1)
                most[j - 1] = max(most[j - 1], n1 - n0)
                new = (max(n0, h1), n1)
        bands.append(Band(tuple(keep), tuple(calls)))
    return Schedule(rows, tuple(bands), tuple(most))


def overlap(layers: list[Layer], sched: Schedule) -> int:
    """How many bytes below the run's input its output may start (as one layer's may: the planner's
    "overlap"): a band writes its output rows after its first layer has read its input rows, and the
    bands after it read none below their first layer's first row, so the output's rows up to a band's
    end may overwrite the input below that row. A multiple of the alignment."""
    later, below = math.inf, 0
    for band in reversed(sched.bands):
        last, first = band.calls[-1], band.calls[0]
        if later != math.inf:
            below = max(below, (last.y_row + last.oh) * layers[-1].out_row - int(later) * layers[0].in_row)
        if first.oh:
            later = min(later, first.x_row)
    return -(-below // ALIGNMENT) * ALIGNMENT


def calls(sched: Schedule) -> int:
    """The kernel calls of a fused run (the per-call work is what bands add: each kernel's setup, its
    blocks cut at a band's edge)."""
    return sum(1 for band in sched.bands for c in band.calls if c.oh)


MAX_RUN = 8  # layers a fused run holds at most
MAX_FUSED = 8  # runs fused in one model at most (one per peak the budget is over)


def runs_through(graph: Graph, step: int, layer_of: Callable[[Node, Graph], Layer | None]) -> list[tuple[int, int]]:
    """The runs [i, j] (steps, j > i) containing `step` that may be fused: consecutive layers that
    layer_of takes, each after the first reading the one before it as its input 0, every tensor
    between two of them read only by the next (not a graph output): it lives only in line buffers."""
    nodes = graph.nodes
    if not 0 <= step < len(nodes) or layer_of(nodes[step], graph) is None:
        return []
    readers: dict[str, int] = {}
    for n in nodes:
        for t in n.inputs:
            if t:
                readers[t] = readers.get(t, 0) + 1

    def linked(a: int) -> bool:  # nodes a and a + 1 chain
        t, first = nodes[a].outputs[0], layer_of(nodes[a], graph)
        return (a + 1 < len(nodes) and first is not None and not first.last_only
                and layer_of(nodes[a + 1], graph) is not None and nodes[a + 1].inputs[0] == t
                and readers.get(t) == 1 and t not in graph.outputs)

    lo = step
    while lo > 0 and step - lo + 1 < MAX_RUN and linked(lo - 1):
        lo -= 1
    hi = step
    while hi - lo + 1 < 2 * MAX_RUN and linked(hi):
        hi += 1
    return [(i, j) for i in range(lo, step + 1) for j in range(max(step, i + 1), hi + 1) if j - i < MAX_RUN]


def plan_with_bands(graph: Graph, plan: Callable[[Graph, int | None], Plan],
                    layer_of: Callable[[Node, Graph], Layer | None], fuse: Callable[[Graph, int, int], Graph],
                    ram_budget: int | None) -> tuple[Graph, Plan]:
    """The plan (plan: plan_memory under ram_budget), with runs of layers around the peak fused in row
    bands only when the budget cannot be met otherwise: at the peak step of the least arena, every run
    through it (runs_through) is fused in turn (fuse: the graph with steps i..j one band node, whose
    choice sizes its bands to the budget) and planned; of those that meet the budget the one with the
    fewest kernel calls is kept, else the one with the least arena (then the fewest bytes over the
    budget over all steps: _excess), and the next peak is tried from there. The refusal, when none meets
    it, names the least arena with bands and its peak."""
    try:
        return graph, plan(graph, ram_budget)
    except BudgetError as e:
        if ram_budget is None or e.least is None:
            raise
        first = err = e
    original = graph
    fused: list[Node] = []
    for _ in range(MAX_FUSED):
        best: tuple[tuple[int, ...], Graph, Plan | BudgetError] | None = None
        for i, j in runs_through(graph, err.least.peak_step, layer_of):
            g = fuse(graph, i, j)
            try:
                p: Plan | BudgetError = plan(g, ram_budget)
            except BudgetError as e:
                if e.least is None:
                    raise
                p = e
            band = g.nodes[i]
            if isinstance(p, Plan):
                key = (0, _calls(p, fused + [band]), j - i)
            else:
                key = (1, p.least_bytes, _excess(p.least, ram_budget), j - i)
            if best is None or key < best[0]:
                best = (key, g, p)
        if best is None or (isinstance(best[2], BudgetError)
                            and best[0][1:3] >= (err.least_bytes, _excess(err.least, ram_budget))):
            break  # no run through the peak, or none that brings the plan closer to the budget
        graph = best[1]
        fused.append(next(n for n in graph.nodes if n.name not in {m.name for m in fused}
                          and n.attrs.get("band_run")))
        if isinstance(best[2], Plan):
            p = best[2]
            if p.budget is not None:  # against the graph as it was, without the budget
                p.budget["unbudgeted_arena_bytes"] = plan(original, None).arena_bytes
                p.budget["traded"]["bands"] = _bands_report(graph, p, first.least_bytes)
            return graph, p
        err = best[2]
    if not fused:
        raise BudgetError(f"{first}; no run of int8 convs through its peak can go in row bands (fused tiles) "
                          "to take less", first.least_bytes, first.least)
    raise BudgetError(str(err).replace(TECHNIQUES_SAID, TECHNIQUES_SAID[:-1] + ", and runs of int8 convs in row "
                                       f"bands: {', '.join(n.name for n in fused)})"), err.least_bytes, err.least)


# how the planner's refusal names the techniques it tried (aot/plan/planner.py _refusal)
TECHNIQUES_SAID = "(in-place ops and outputs overlapping their inputs where the kernels allow)"


def _excess(p: Plan | None, budget: int) -> int:
    """The bytes live over the budget, summed over the steps: where the arena is over it, how much a fused
    run took off the other steps over it too (steps sharing a peak are fused one run at a time)."""
    if p is None:
        return 0
    return sum(max(n - budget, 0) for n in _live_per_step(p.buffers, max(len(p.steps), 1)))


def _calls(p: Plan, bands: list[Node]) -> int:
    """The kernel calls of the fused runs at the bands the plan chose."""
    return sum(calls(p.choices[n.name].detail.schedule) for n in bands if n.name in p.choices)


def _bands_report(graph: Graph, p: Plan, before: int) -> dict[str, Any]:
    """metadata.json's memory.ram_budget.traded.bands: per fused run its layers, R, the bands, the line
    buffers' bytes and the kernel calls against one a layer; the bytes saved against the least arena
    without bands."""
    runs = []
    for n in graph.nodes:
        if not n.attrs.get("band_run") or n.name not in p.choices:
            continue
        d = p.choices[n.name].detail
        runs.append({"node": n.name, "layers": [m.name for m in n.attrs["layers"]], "rows": d.schedule.rows,
                     "bands": len(d.schedule.bands), "line_buffer_bytes": sum(d.buffers),
                     "kernel_scratch_bytes": d.kernel_scratch, "calls": calls(d.schedule),
                     "unbanded_calls": len(n.attrs["layers"])})
    return {"what": "runs of layers executed in row bands of their last output, line buffers between them",
            "bytes_saved": before - p.arena_bytes, "nodes": [r["node"] for r in runs], "runs": runs}
