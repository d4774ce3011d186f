"""Fused row bands (issue 53, docs/fused-tiles.md): a run of convs around a --ram-budget's peak step
executed band by band, R rows of the run's last output at a time over the full width, each tensor
between two of its layers a line buffer of the rows a band needs (the rows kept from the band before
moved to its top, so nothing is computed twice).

This module is the choice: which runs (runs_through) and the driver that fuses them only when
plan_memory's techniques cannot meet the budget (plan_with_bands). The geometry (which rows each layer
computes in each band, the line buffers, the fused node's fit and C) is aot/kernels/tflite_bands.py's;
the fusing of a run into one node aot/select.py's fuse_in_bands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aot.ir import Graph, Node
from aot.plan.buffers import Plan
from aot.plan.placement import _live_per_step
from aot.plan.planner import BudgetError

MAX_RUN = 10  # layers a fused run holds at most
MAX_FUSED = 8  # runs fused in one model at most (one per peak the budget is over)
# a grouped pair's channels a group where its groups of tflite_bands.GROUP leave the plan over the budget: half the
# expansion's line buffer and staging block, twice the calls (fuse(graph, i, j, SMALL_GROUP)); then, where the plan
# is still over, SMALLER_GROUPS in turn (_smaller_groups)
SMALLER_GROUPS = (8, 4)
SMALL_GROUP = SMALLER_GROUPS[0]


def runs_through(graph: Graph, step: int, layer_of: Callable[[Node, Graph], Any]) -> list[tuple[int, int]]:
    """The runs [i, j] (steps, j > i) containing `step` that may be fused: consecutive layers that
    layer_of takes (not None; its .last_only: the layer may only end a run, .first_only: only start one),
    each after the first reading the one before it as its input 0, every tensor between two of them read
    only by the next (not a graph output): it lives only in line buffers."""
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
        second = layer_of(nodes[a + 1], graph) if a + 1 < len(nodes) else None
        return (first is not None and not first.last_only and second is not None and not second.first_only
                and nodes[a + 1].inputs[0] == t
                and readers.get(t) == 1 and t not in graph.outputs)

    lo = step
    while lo > 0 and step - lo + 1 < MAX_RUN and linked(lo - 1):
        lo -= 1
    hi = step
    while hi - lo + 1 < 2 * MAX_RUN and linked(hi):
        hi += 1
    return [(i, j) for i in range(lo, step + 1) for j in range(max(step, i + 1), hi + 1) if j - i < MAX_RUN]


def plan_with_bands(graph: Graph, plan: Callable[[Graph, int | None], Plan],
                    layer_of: Callable[[Node, Graph], Any], fuse: Callable[..., Graph | None],
                    ram_budget: int | None,
                    estimate: Callable[[Graph, Plan], float] | None = None,
                    in_place: Callable[[Graph, int], Graph | None] | None = None) -> tuple[Graph, Plan]:
    """The plan (plan: plan_memory under ram_budget), with runs of layers around the peak fused in row
    bands only when the budget cannot be met otherwise: at the peak step of the least arena, every run
    through it (runs_through) is fused in turn (fuse: the graph with steps i..j one band node, whose
    choice sizes its bands to the budget) and planned; of those that meet the budget the one with the
    fewest kernel calls is kept, else the one with the least arena, then the fewest bytes live at the
    worst step of the layers the runs span (the peak each run was to take down: a run that leaves one of
    them as high as before did not), then the fewest bytes over the budget over all steps (_pressure
    counts both), and the next peak is tried from there; with `estimate` (a schedule's estimated cycles,
    aot/plan/choice.py) the run meeting the budget with the least estimate instead of the fewest calls. With
    `in_place` (the graph with step i, a channels-first input's Transpose that may start a run, written over its
    input: aot/kernels/transpose_in_place.py; None where it may not be), each run through the peak from such a
    Transpose is offered also as that Transpose in place and the runs from the conv after it (which then read an
    NHWC image that frees a whole row a row read), compared with the others by the same keys. The run chosen is
    tried as well with its expansions and the stride-2 depthwise layers after them a group of channels at a time
    (fuse(graph, i, j, True), None where it has no such pair: aot/kernels/tflite_bands.py grouped_pairs), which
    recomputes the expansion's halo rows and is kept where it is better by the same order: by less memory, or
    where it alone meets the budget (every run grouped as a candidate of its own led the greedy choice astray: on
    the host MobileNetV2 224 stopped at 535,200 B where the runs without groups reach 301,056 B). With `estimate`,
    a run that meets the budget is also planned at tighter budgets (_tighter), and where the plan kept has the
    in-place TRANSPOSE or grouped pairs, the search is made again without them and the plan with the lesser
    estimate kept (those forms take less memory at each peak, so the greedy order takes them whatever their
    cycles). The refusal, when none meets it, names the least arena with bands and its peak."""
    try:
        return graph, plan(graph, ram_budget)
    except BudgetError as e:
        if ram_budget is None or e.least is None:
            raise
        first = e
    plan = _memo(plan)  # the searches below plan the same fused graphs again (the plain one's first peak, _tighter)
    try:
        g, p = _search(graph, plan, layer_of, fuse, ram_budget, estimate, in_place, True, first)
    except BudgetError as refused:
        # the greedy order compares the runs by what they leave live at once; the run from a channels-first input's
        # TRANSPOSE copied in its bands can leave less than the TRANSPOSE in place and the runs after it, whose
        # forms go further down later (TFLM's MobileNetV2 on the M55: 230,496 B against 279,552 B at the first
        # peak, then a least of 223,872 B against 170,656 B on the M4, which took the in-place form): where the
        # budget is not met, the search again with the in-place form only
        if in_place is None:
            raise
        try:
            g, p = _search(graph, plan, layer_of, fuse, ram_budget, estimate, in_place, True, first, True)
        except BudgetError as again:
            raise (again if again.least_bytes < refused.least_bytes else refused) from None
    if estimate is None or not _new_forms(g):
        return g, p
    # the plain forms' search (the runs as they are, the TRANSPOSE copied in the run's bands): the new forms take
    # less memory at each peak, so the greedy order prefers them whatever their cycles, and a budget the plain
    # runs also meet never saw them (TFLM's MobileNetV2 at 262,144 B: in place and grouped 1.017x, plain 0.999x)
    try:
        plain = _search(graph, plan, layer_of, fuse, ram_budget, estimate, None, False, first)
    except BudgetError:
        return g, p
    return plain if estimate(*plain) < estimate(g, p) else (g, p)


def _memo(plan: Callable[[Graph, int | None], Plan]) -> Callable[[Graph, int | None], Plan]:
    """plan, each graph (by its nodes' names: a fused run's name says its steps and form) and budget planned once,
    its refusal too."""
    done: dict[tuple[tuple[str, ...], int | None], Plan | BudgetError] = {}

    def planned(g: Graph, budget: int | None) -> Plan:
        key = (tuple(n.name for n in g.nodes), budget)
        if key not in done:
            try:
                done[key] = plan(g, budget)
            except BudgetError as e:
                done[key] = e
        got = done[key]
        if isinstance(got, BudgetError):
            raise got
        return got
    return planned


TIGHTER = (15 / 16, 7 / 8, 3 / 4)  # the budgets, as shares of the budget given, a run that meets it is planned at too


def _tighter(g: Graph, p: Plan, plan: Callable[[Graph, int | None], Plan], budget: int,
             estimate: Callable[[Graph, Plan], float]) -> Plan:
    """The plan of graph g (a run fused) with the least estimate of p (its plan under the budget) and g's plans under
    the TIGHTER budgets that it meets too: the planner sizes the bands and the kernels' blocks, and stops its
    trades, at the budget, so a tighter budget may plan the same runs faster (issue 67: a written NCHW model's run
    of CONV_2D_3..DEPTHWISE_CONV_2D_5 estimated 211 K cycles at 26,000 B and 486 K at 28,000 B, where another run
    was taken). Each such plan meets every looser budget, which then keeps it."""
    best, cost = p, estimate(g, p)
    for share in TIGHTER:
        if int(budget * share) < p.arena_bytes // 2:
            break
        try:
            q = plan(g, int(budget * share))
        except BudgetError:
            break
        if (c := estimate(g, q)) < cost:
            best, cost = q, c
    return best


def _new_forms(graph: Graph) -> bool:
    """Whether a fused graph holds a TRANSPOSE written over its input or a run with grouped pairs."""
    return any(n.attrs.get("over_input") or n.attrs.get("groups") for n in graph.nodes)


def _search(graph: Graph, plan: Callable[[Graph, int | None], Plan], layer_of: Callable[[Node, Graph], Any],
            fuse: Callable[..., Graph | None], ram_budget: int, estimate: Callable[[Graph, Plan], float] | None,
            in_place: Callable[[Graph, int], Graph | None] | None, grouping: bool,
            first: BudgetError, prefer_in_place: bool = False) -> tuple[Graph, Plan]:
    """plan_with_bands' greedy search from the plan without bands (first: its refusal); grouping: the run chosen
    is tried with its pairs a group of channels at a time too; prefer_in_place: a Transpose that may be written over
    its input starts no run copying it, only its in-place form and the runs after it are candidates."""
    err = first
    assert err.least is not None
    original = graph
    fused: list[Node] = []
    resumed = False
    while True:
        for _ in range(MAX_FUSED):
            best: tuple[tuple[int, ...], Graph, Plan | BudgetError] | None = None
            peak = err.least.peak_step
            runs = runs_through(graph, peak, layer_of)
            lo, hi = min((i for i, _ in runs), default=0), max((j for _, j in runs), default=0)
            beside = _runs_beside(graph, peak, layer_of, runs) if estimate is not None else []

            def tried(i: int, j: int, grouped: bool | int, permuted: Graph | None, graph: Graph = graph,
                      beside: list[tuple[int, int]] = beside, lo: int = lo, hi: int = hi,
                      fused: list[Node] = fused) -> tuple[tuple[Any, ...], Graph, Plan | BudgetError] | None:
                """Steps i..j fused (of `permuted` where given: the graph with its input's Transpose in place; grouped:
                their pairs a group of channels at a time), planned, and their key."""
                base = graph if permuted is None else permuted
                g = fuse(base, i, j, True) if grouped else fuse(base, i, j)
                if g is None:  # no pair of the run to take a group of channels at a time
                    return None
                try:
                    p: Plan | BudgetError = plan(g, ram_budget)
                except BudgetError as e:
                    if e.least is None:
                        raise
                    p = e
                band = g.nodes[i]
                if permuted is None and (i, j) in beside and not isinstance(p, Plan):
                    return None  # beside the peak: a candidate only where it meets the budget
                if isinstance(p, Plan) and estimate is not None:
                    p = _tighter(g, p, plan, ram_budget, estimate)
                if isinstance(p, Plan):  # by the estimated cycles where given (aot/plan/choice.py), else the calls
                    key = (0, estimate(g, p) if estimate is not None else _calls(p, fused + [band]), j - i, grouped)
                else:
                    live = _pressure(p.least, g)  # the steps lo..hi less the layers the run took into one node
                    key = (1, p.least_bytes, max(live[lo:hi - (j - i) + 1], default=0), _over(live, ram_budget), j - i,
                           grouped)
                return key, g, p

            chosen: tuple[int, int, Graph | None] | None = None
            after = _runs_after_in_place(graph, runs, layer_of, in_place)
            starts = {i - 1 for i, _, _ in after} if prefer_in_place else set()  # the Transposes that may go in place
            for i, j, permuted in [*((i, j, None) for i, j in [*runs, *beside] if not starts & set(range(i, j + 1))),
                                   *after]:
                t = tried(i, j, False, permuted)
                if t is not None and (best is None or t[0] < best[0]):
                    best, chosen = t, (i, j, permuted)
            if grouping and chosen is not None and (chosen[2] is not None or chosen[:2] in runs):
                t = tried(*chosen[:2], True, chosen[2])  # the run chosen, its pairs a group of channels at a time
                if t is not None and best is not None and t[0] < best[0]:
                    best = t
                if best is not None and best[0][0] == 1:  # still over: groups of half as many channels (issue 67)
                    t = tried(*chosen[:2], SMALL_GROUP, chosen[2])
                    if t is not None and t[0] < best[0]:
                        best = t
            was = _pressure(err.least, graph)
            if best is None or (isinstance(best[2], BudgetError) and best[0][1:4] >= (
                    err.least_bytes, max(was[lo:hi + 1], default=0), _over(was, ram_budget))):
                break  # no run through the peak, or none that brings the plan closer to the budget
            graph = best[1]
            fused.append(next(n for n in graph.nodes if n.name not in {m.name for m in fused}
                              and n.attrs.get("band_run")))
            if isinstance(best[2], Plan):
                return graph, _reported(best[2], graph, original, plan, first)
            err = best[2]
        if not fused:
            break
        # still over: the grouped runs fused a second time in groups of SMALLER_GROUPS channels (issue 67)
        was = err.least.peak_step
        graph, met = _smaller_groups(graph, plan, fuse, ram_budget, err)
        if isinstance(met, Plan):
            return graph, _reported(met, graph, original, plan, first)
        err = met
        fused = [n for n in graph.nodes if n.attrs.get("band_run")]
        # the smaller groups took the run off the peak, to another step as high (TFLM's MobileNetV2 on the M55: the
        # first run's and a depthwise layer's both 181,632 B): the search goes on from there, once
        if resumed or err.least is None or err.least.peak_step == was:
            break
        resumed = True
    convs = "int8 convs" if any(n.op.startswith("Tfl") for n in original.nodes) else "convs"  # TFLite's or ONNX's
    if not fused:
        raise BudgetError(f"{first}; no run of {convs} through its peak can go in row bands (fused tiles) "
                          "to take less", first.least_bytes, first.least)
    raise BudgetError(str(err).replace(TECHNIQUES_SAID, TECHNIQUES_SAID[:-1] + f", and runs of {convs} in row "
                                       f"bands: {', '.join(n.name for n in fused)})"), err.least_bytes, err.least)


def _reported(p: Plan, graph: Graph, original: Graph, plan: Callable[[Graph, int | None], Plan],
              first: BudgetError) -> Plan:
    """p, the plan that met the budget, its budget report against the graph as it was, without the budget, and
    with the runs in bands it took."""
    if p.budget is not None:
        p.budget["unbudgeted_arena_bytes"] = plan(original, None).arena_bytes
        p.budget["traded"]["bands"] = _bands_report(graph, p, first.least_bytes)
    return p


def replanned(g: Graph, p: Plan, plan: Callable[[Graph, int | None], Plan], budget: int) -> Plan | None:
    """g, a graph plan_with_bands fused runs of at a tighter budget (p: its plan there), planned at `budget`: the
    same runs given the room the looser budget leaves (their bands, the kernels' blocks, the overlaps taken on past
    it: plan_memory), its report as p's (the arena without a budget, the runs in bands). None where g fused nothing
    (the plan at `budget` is the greedy's own) or its plan does not meet `budget`."""
    bands = (p.budget or {}).get("traded", {}).get("bands")
    if not bands:
        return None
    try:
        q = plan(g, budget)
    except BudgetError:
        return None
    if q.budget is not None and p.budget is not None:
        q.budget["unbudgeted_arena_bytes"] = p.budget["unbudgeted_arena_bytes"]
        q.budget["traded"]["bands"] = _bands_report(g, q, p.arena_bytes + bands["bytes_saved"])
    return q


def _smaller_groups(graph: Graph, plan: Callable[[Graph, int | None], Plan], fuse: Callable[..., Graph | None],
                    ram_budget: int, err: BudgetError) -> tuple[Graph, Plan | BudgetError]:
    """Each fused run with a grouped pair (its node "..._grouped") fused again from its layers in groups of
    SMALLER_GROUPS channels in turn, kept where the plan then meets the budget (returned at once) or its least arena
    falls: each halves the expansion's line buffer and staging block for twice the pair's calls, so tried only once
    the driver has nothing else to take and the plan is still over the budget (a looser budget never pays those
    calls: TFLM's MobileNetV2 224, whose first run the driver fuses while other steps are far over, ties on every key
    there)."""
    best: Plan | BudgetError = err
    for n in list(graph.nodes):
        if not (n.attrs.get("band_run") and n.attrs.get("groups") and n.name.endswith("_grouped")):
            continue
        i = graph.nodes.index(n)
        layers = n.attrs["layers"]
        base = Graph(graph.name, [*graph.nodes[:i], *layers, *graph.nodes[i + 1:]], graph.tensors, graph.inputs,
                     graph.outputs, graph.functions, graph.info)
        for size in SMALLER_GROUPS:
            g = fuse(base, i, i + len(layers) - 1, size)
            if g is None:
                continue
            try:
                return g, plan(g, ram_budget)
            except BudgetError as e:
                off_peak = e.least is not None and isinstance(best, BudgetError) and best.least is not None and \
                    best.least.peak_step == i and e.least.peak_step != i  # as high, but elsewhere now
                if e.least is None or not isinstance(best, BudgetError) or \
                        (e.least_bytes >= best.least_bytes and not (off_peak and e.least_bytes == best.least_bytes)):
                    break
                graph, best = g, e
    return graph, best


def _runs_beside(graph: Graph, peak: int, layer_of: Callable[[Node, Graph], Any],
                 through: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs through the steps next to the peak that do not contain it: the peak's own plan may meet the budget
    by a trade that adds no work there (its output overlapping its input) once a run beside it takes the bytes
    of the next step down, where a run through the peak would leave the layer's faster path (issue 67: VWW on
    the M4, a 3 x 3 depthwise layer in bands loses its SAME function; the run after it, which a tighter budget
    took, ran 33 K est. cycles faster than the run through it that the looser budgets took)."""
    seen = set(through)
    out: list[tuple[int, int]] = []
    for step in (peak - 1, peak + 1):
        for r in runs_through(graph, step, layer_of):
            if r not in seen and not r[0] <= peak <= r[1]:
                seen.add(r)
                out.append(r)
    return out


def _runs_after_in_place(graph: Graph, runs: list[tuple[int, int]], layer_of: Callable[[Node, Graph], Any],
                         in_place: Callable[[Graph, int], Graph | None] | None) -> list[tuple[int, int, Graph]]:
    """For each first step of `runs` whose layer may only start a run (a channels-first input's Transpose:
    tflite_bands.transpose_layer) and that `in_place` writes over its input, the runs from the step after it in
    that graph (runs_through there: the conv reading the NHWC image), each with the graph it is fused in."""
    if in_place is None:
        return []
    out: list[tuple[int, int, Graph]] = []
    for i in sorted({i for i, _ in runs}):
        first = layer_of(graph.nodes[i], graph)
        if first is None or not first.first_only or (g := in_place(graph, i)) is None:
            continue
        out.extend((a, b, g) for a, b in runs_through(g, i + 1, layer_of) if a == i + 1)
    return out


# how the planner's refusal names the techniques it tried (aot/plan/planner.py _refusal)
TECHNIQUES_SAID = "(in-place ops and outputs overlapping their inputs where the kernels allow)"


def _pressure(p: Plan | None, graph: Graph) -> list[int]:
    """The bytes live at each step of a plan over the budget, counting the tensors and each fused run's line
    buffers for bands of one row (_least_lines), not the kernels' scratch: in a plan over the budget every
    node's scratch grows into the room left under the arena's peak elsewhere, which says nothing of how far a
    run can go down (TFLM's MobileNetV2 224: the run from its input's TRANSPOSE looked worse than the one
    after it, which the driver then took, and the TRANSPOSE could start no run: --ram-budget 245,088 B was
    refused though a budget of 1 B found it, and 300,000 B too)."""
    if p is None:
        return []
    scratch = {id(b) for b in p.scratch_buffers.values()}
    live = _live_per_step([b for b in p.buffers if id(b) not in scratch], max(len(p.steps), 1))
    for n in graph.nodes:
        b = p.scratch_buffers.get(n.name) if n.attrs.get("band_run") else None
        if b is not None and b.first < len(live):
            live[b.first] += _least_lines(n) or 0
    return live


def _over(live: list[int], budget: int) -> int:
    """The bytes live over the budget, summed over the steps: where the arena is over it, how much a fused
    run took off the other steps over it too (steps sharing a peak are fused one run at a time)."""
    return sum(max(n - budget, 0) for n in live)


def _least_lines(n: Node) -> int | None:
    """A fused run's line buffers at bands of one row (its least memory besides the kernels' scratch: the
    node's "least_lines", aot/kernels/tflite_bands.py band_run); None where it does not say."""
    return n.attrs.get("least_lines")


def _calls(p: Plan, bands: list[Node]) -> int:
    """The kernel calls of the fused runs at the bands the plan chose (their choice's detail.calls)."""
    return sum(p.choices[n.name].detail.calls for n in bands if n.name in p.choices)


def _bands_report(graph: Graph, p: Plan, before: int) -> dict[str, Any]:
    """metadata.json's memory.ram_budget.traded.bands: per fused run what its choice reports (its layers,
    R, the bands, the line buffers' and kernel scratch bytes, the kernel calls against one a layer); the
    bytes saved against the least arena without bands."""
    runs = [{"node": n.name, **p.choices[n.name].detail.report()} for n in graph.nodes
            if n.attrs.get("band_run") and n.name in p.choices]
    # a channels-first input's Transpose written over the input (aot/kernels/transpose_in_place.py), where the plan
    # put its output at the input's bytes
    permuted = [n.name for n in graph.nodes if n.attrs.get("over_input")
                and p.offsets.get(n.outputs[0], -1) == p.offsets.get(n.inputs[0])]
    return {"what": "runs of layers executed in row bands of their last output, line buffers between them",
            "bytes_saved": before - p.arena_bytes, "nodes": [r["node"] for r in runs], "runs": runs,
            **({"transposed_in_place": permuted} if permuted else {})}
