"""Static memory plan: one arena, an offset for every run-time tensor, graph I/O included.

The algorithm:
  1. Walk the nodes in execution order and group tensors into buffers:
     - each graph input is a buffer from the first step (the caller's data is copied in,
       or written there directly: <name>_arena_io); it is read-only;
     - a view (Reshape, Flatten, ...) joins its input's buffer: no copy;
     - an op that may run in place joins the buffer of the input it names
       when that buffer dies at this node (nothing reads it later);
     - a graph output's buffer lives to the last step;
     - under a RAM budget (plan_memory's ram_budget, --ram-budget) also, where needed: an op
       joins any input it may overwrite (OpMemory.inplace_inputs), a conv's output starts
       OpMemory.overlap bytes below its input in one buffer with it, written over the bytes
       the kernel has consumed (the buffer's segments follow its tensors: _overlaid_segments),
       and those may write over a graph input's slot as it dies.
  2. A buffer lives from the step that first writes it to the last step that reads it.
  3. A node's scratch space is a buffer that lives for its step only. Its size is the
     op's choice given a budget: the bytes left at that step under the peak of step 2's
     buffers, so kernels that can work in smaller blocks (im2col, the GEMM's B copies)
     fit in the slack instead of raising the peak. Scratch a kernel keeps (KernelChoice.kept: the
     Winograd kernels' lanes, one per thread) is one buffer for the whole run, shared by every
     such node, that no tensor overlaps.
  4. Place buffers greedily (placement.py; as TFLM's GreedyMemoryPlanner does): take them in
     some order, put each at the lowest offset where it overlaps no placed
     buffer that is live at the same time. Several orders are tried and the
     smallest arena wins; when none reaches the lower bound, a squeaky-wheel search
     reorders (the buffers that ended above the bound go earlier, round after round),
     then seeded random orders run if it misses too.
     This is a heuristic (optimal placement is NP-complete),
     so the plan reports the lower bound beside the arena size. Placed buffers are indexed by
     step, so placing one costs the buffers live beside it, not all placed before it: compile
     time grows about linearly with the graph (bench/compile_time.py).

Graph inputs and outputs live in the arena, as TFLM's do: the RAM a model needs for
activations is the arena alone, and an input's bytes are reused once it is dead. Callers
that keep their own I/O buffers still work: <name>_run copies them in and out.
Constants are weights, never in the arena; a view of one aliases its pointer.

Two bounds are reported beside the arena:
  tight_bound_bytes  the RAM the activations themselves need: the largest total of step 2's
                     buffers (views sharing, in-place ops sharing, I/O included, scratch
                     excluded) live at one step, each rounded up to the 16 bytes every
                     tensor is aligned to.
  lower_bound_bytes  the same with each step's scratch added: no placement of these
                     buffers can use less. The arena reaches the tight bound when every
                     scratch buffer fits in its step's slack and the placement is perfect.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from aot.errors import AotcError
from aot.ir import CONTROL_MARKERS, Graph, Node
from aot.plan.buffers import ALIGNMENT, Buffer, Plan, _align
from aot.plan.placement import (
    SCRATCH_SHARES,
    _arena_floor,
    _live_per_step,
    _occupied_per_step,
    _place_best,
    _segments,
)


@dataclass(frozen=True)
class OpMemory:
    """What the planner needs to know about an op, supplied by the code generator."""

    is_view: Callable[[Node], bool]
    inplace_input: Callable[[Node, Graph], int | None]
    # (node, graph, budget) -> the kernel that runs the node with `budget` bytes of scratch to spare
    # (anything with a `.scratch` in bytes: aot/kernels KernelChoice); the plan records the ones it keeps
    choose: Callable[[Node, Graph, int], Any]
    # byte offset of each input's contiguous slice in output 0 (Concat along an outer axis), or None
    slices: Callable[[Node, Graph], list[int] | None] = lambda n, g: None
    # byte offset of each output's contiguous part of input 0 (Split along an outer axis): the outputs
    # are those bytes of the input's buffer, no copy; None: the outputs are tensors of their own
    parts: Callable[[Node, Graph], list[int] | None] = lambda n, g: None
    # whether the node's output may overwrite input tensor t as it runs (t read only at the element
    # being written): a Loop's new carried value is then written over its old one
    overwrites: Callable[[Node, Graph, str], bool] = lambda n, g, t: False
    # under a RAM budget (plan_memory's ram_budget), the inputs besides inplace_input's that the output may
    # overwrite (every element read only where it is written: TFLite's int8 elementwise ops), in preference
    inplace_inputs: Callable[[Node, Graph], tuple[int, ...]] = lambda n, g: ()
    # under a RAM budget, how many bytes below input 0 the output may start, overlapping it (the kernel
    # writes no byte its later reads need: aot/kernels/tflite_int8.py overlap_bytes), a multiple of
    # ALIGNMENT; None: the output may not overlap its input
    overlap: Callable[[Node, Graph], int | None] = lambda n, g: None
    # under a RAM budget, choose with the kernels' blocks allowed below their usual floor (the least scratch
    # they run with: more instructions); None: as choose
    choose_least: Callable[[Node, Graph, int], Any] | None = None
    # vendor calls whose workspace holds some of their inputs and outputs (Artifact.workspace_boundary): node ->
    # (the workspace's bytes, tensor -> its offset in it). The workspace is a block of the plan (its pointer the
    # node's scratch), those tensors slices of it: an input live in it until the call, an output from the call.
    workspaces: Mapping[str, tuple[int, Mapping[str, int]]] = field(default_factory=dict)
    # under a RAM budget, the cycles a node's kernel choice is estimated to add (aot/kernels/tflite_cost.py): the
    # scratch the budget leaves is then shared out among the steps the way with the least estimate, not the
    # largest share; None: by the share (and the kernels' blocks sized to it)
    cost: Callable[..., float] | None = None




def _plan(graph: Graph, ops: OpMemory, scratch_floor: int = 0, techniques: frozenset[str] = frozenset(),
          top: int | None = None, overlap_nodes: frozenset[str] = frozenset(), quick: bool = False,
          need: int | None = None) -> Plan | None:
    """scratch_floor: bytes any node's scratch may use even where its step has no slack (above
    the tight bound then), so kernels keep their fast blocked paths; 0 holds the arena to the
    tight bound at the cost of slower kernels at the steps without slack.

    techniques (a RAM budget's, see plan_memory): "inplace", the inputs of ops.inplace_inputs
    overwritten too. overlap_nodes: nodes whose output starts ops.overlap bytes below their input 0,
    in one buffer with it. top: the arena the scratch may fill (a RAM budget): each step's scratch is
    sized for the memory under it, not only under the tensors' peak, where the arena stays within it.
    quick: the placement's greedy orders only (_place_best), for a RAM budget's trial plans.
    need: the caller wants the plan only if its arena is at most this (a trial against the best so far, a
    budget): None instead where it is larger. The attempts that no placement could bring to what they must beat
    (_arena_floor) are then not placed; a plan returned is the one planned without `need`."""
    consts = {t.name for t in graph.tensors.values() if t.is_const}
    inputs = [t for t in graph.inputs if t not in consts]
    outputs = set(graph.outputs)
    nsteps = max(len(graph.nodes), 1)
    last_use: dict[str, int] = {}
    for step, n in enumerate(graph.nodes):
        for i in n.inputs:
            if i:
                last_use[i] = step
    _extend_across_loops(graph, last_use)
    into_state = _states_written_in_place(graph, ops)

    buffers: list[Buffer] = []
    buffer_of: dict[str, Buffer] = {}
    aliases: dict[str, str] = {}
    deltas: dict[str, int] = {}  # tensor -> bytes into its buffer where it starts (a Split's parts)
    # id of a buffer holding outputs written over their inputs ("overlap") -> its groups in the order
    # they were written: [delta, nbytes, the step writing it (-1: the first)]
    overlaid: dict[int, list[list[int]]] = {}
    used: dict[str, list[str]] = {"inplace": [], "overlap": []}  # the nodes each technique took

    ids = itertools.count()

    def new_buffer(nbytes: int, step: int) -> Buffer:
        b = Buffer(next(ids), nbytes, step, step)
        buffers.append(b)
        return b

    for t in inputs:
        _join(buffer_of, new_buffer(graph.tensors[t].nbytes, 0), t)
    read_only = {id(buffer_of[t]) for t in inputs}
    # without a budget's techniques no op writes over an input's slot, though a run reuses it once the input is
    # dead (the header says: write the inputs before every run); with them an op may, as the input dies
    kept = set() if techniques or overlap_nodes else read_only
    blocks: dict[str, Buffer] = {}  # vendor call -> its workspace block (ops.workspaces)
    for step, n in enumerate(graph.nodes):
        if n.name in ops.workspaces:
            blocks[n.name] = _workspace_block(n, graph, ops.workspaces[n.name], step, new_buffer, buffer_of,
                                              last_use, read_only, outputs, deltas, overlaid)
            continue
        src = n.inputs[0] if n.inputs else ""
        parts = ops.parts(n, graph) if src in buffer_of else None
        if parts is not None:
            for out, delta in zip(n.outputs, parts, strict=True):
                if out:
                    _join(buffer_of, buffer_of[src], out)
                    deltas[out] = deltas.get(src, 0) + delta
            continue
        for k, out in enumerate(n.outputs):
            if not out or out in consts:
                continue
            t = graph.tensors[out]
            if out in into_state:  # a carried value's new value: written over its old one, no copy at the end
                _join(buffer_of, buffer_of[into_state[out]], out)
                continue
            if n.op in ("LoopEnd", "IfElse", "IfEnd"):  # a final value / scan output / If output is its
                # state's / scan buffer's / slot's bytes (aot/frontend/onnx/loops.py, branches.py)
                _join(buffer_of, buffer_of[n.inputs[k]], out)
                continue
            if k == 0 and ops.is_view(n):
                if src in buffer_of:
                    _join(buffer_of, buffer_of[src], out)
                    if src in deltas:
                        deltas[out] = deltas[src]
                    continue
                if src in consts:
                    aliases[out] = aliases.get(src, src)
                    continue
            first = ops.inplace_input(n, graph) if k == 0 else None
            more = ops.inplace_inputs(n, graph) if k == 0 and "inplace" in techniques else ()
            joined = False
            for idx in (first, *more):
                if idx is None or n.inputs[idx] not in buffer_of:
                    continue
                b = buffer_of[n.inputs[idx]]
                # a graph output is read after the last step: never written over
                dies_here = all(last_use.get(m, b.first) <= step for m in b.tensors) and not outputs.intersection(
                    b.tensors)
                # or also its input 0, where the op's output may start at input 0's start (ops.overlap 0: a run in row
                # bands whose residual is its input, TFLM's MobileNetV2 224's blocks, whose rows it writes after every
                # read of them, issue 67)
                used_once = n.inputs.count(n.inputs[idx]) == 1 or (
                    idx > 0 and n.inputs[idx] == n.inputs[0] and n.inputs.count(n.inputs[0]) == 2
                    and ops.overlap(n, graph) == 0)
                if id(b) not in kept and dies_here and used_once and b.nbytes >= t.nbytes:
                    _join(buffer_of, b, out)
                    if n.inputs[idx] in deltas:
                        deltas[out] = deltas[n.inputs[idx]]
                    if idx != first:
                        used["inplace"].append(n.name)
                    joined = True
                    break
            if joined:
                continue
            if k == 0 and n.name in overlap_nodes and _overlay(n, graph, ops, step, buffer_of, deltas, overlaid,
                                                               buffers, last_use, kept, outputs):
                used["overlap"].append(n.name)
                continue
            b = new_buffer(t.nbytes, step)
            _join(buffer_of, b, out)
            if k == 0:
                _write_inputs_in_place(n, graph, ops, step, b, buffer_of, last_use, read_only, outputs)

    # outputs no node writes (a constant, or an input listed as an output: the latter shares its slot)
    copied = [o for o in dict.fromkeys(graph.outputs) if o not in buffer_of]
    output_buffers = {o: new_buffer(graph.tensors[o].nbytes, nsteps - 1) for o in copied}
    produced_at = {o: step for step, n in enumerate(graph.nodes) for o in n.outputs if o}
    for b in buffers:
        if b.tensors:
            b.first = min(produced_at.get(t, 0) for t in b.tensors)
            b.last = max(max(last_use.get(t, b.first) for t in b.tensors), b.first)
            if outputs.intersection(b.tensors):
                b.last = nsteps - 1
    slices = [b for b in buffers if b.parent is not None]
    buffers = [b for b in buffers if b.parent is None]
    children: dict[int, list[Buffer]] = {}  # id of a buffer -> its slices, in order
    for c in slices:
        children.setdefault(id(c.parent), []).append(c)
    for b in buffers:
        if id(b) in children:
            b.segments = _segments(b, children)
            b.first = min(f for _, _, f, _ in b.segments)
        if id(b) in overlaid:
            b.segments = _overlaid_segments(b, overlaid[id(b)], produced_at, last_use, outputs, nsteps)
    for step, n in enumerate(graph.nodes):  # a block's own bytes at its call; inputs until it, outputs after
        if n.name in blocks:
            b = blocks[n.name]
            kids = children.get(id(b), [])
            b.segments = [(0, b.nbytes, step, step), *((c.delta, c.nbytes, c.first, step - 1) for c in kids
                                                       if c.first < step),
                          *((c.delta, c.nbytes, step + 1, c.last) for c in kids if c.first >= step and c.last > step)]
            b.first, b.last = min(s[2] for s in b.segments), max(s[3] for s in b.segments)

    live = _live_per_step(buffers, nsteps)
    tight = peak_live = max(live, default=0)
    occupied, aligned = _occupied_per_step(buffers, nsteps)

    choose = ops.choose_least if "tiles" in techniques and ops.choose_least is not None else ops.choose
    step_of = {n.name: step for step, n in enumerate(graph.nodes)}

    def prepare(top: int, share: float, shares: dict[str, float] | None = None,
                worth: Callable[[dict[str, Any]], bool] | None = None, like: tuple | None = None) -> tuple | None:
        """Each step's scratch sized for `share` of its slack under `top` bytes (`shares`: per node, where
        given), unplaced: (lower, peak, budgets, choices, scratch_buf, every); None where `worth` says the
        kernels chosen could not be kept anyway. like: (budgets, choices, name) of an attempt at the same top and
        share whose `shares` differ from these at node `name` alone: the other nodes' budgets are the same, and so
        are their kernels (choose is a function of the node and its budget), taken from there."""
        def budget(step: int, name: str) -> int:
            return max(int((shares or {}).get(name, share) * max(top - live[step], 0)), scratch_floor)

        if like is None:
            budgets = {n.name: budget(step, n.name) for step, n in enumerate(graph.nodes)}
            choices = {n.name: choose(n, graph, budgets[n.name]) for n in graph.nodes}
        else:
            budgets, choices, name = dict(like[0]), dict(like[1]), like[2]
            step = step_of[name]
            budgets[name] = budget(step, name)
            choices[name] = choose(graph.nodes[step], graph, budgets[name])
        kept = [n.name for n in graph.nodes if choices[n.name].scratch and getattr(choices[n.name], "kept", False)]
        scratch_buf = {n.name: Buffer(next(ids), size, step, step) for step, n in enumerate(graph.nodes)
                       if (size := choices[n.name].scratch) and n.name not in kept}
        if kept:  # one block for the whole run, shared by these nodes (KernelChoice.kept)
            block = Buffer(next(ids), max(choices[k].scratch for k in kept), 0, nsteps - 1)
            scratch_buf.update((k, block) for k in kept)
        if worth is not None and not worth(choices):
            return None
        every = [*buffers, *{id(b): b for b in scratch_buf.values()}.values()]
        lower, peak = _bound_with_scratch(live, every[len(buffers):])
        return lower, peak, budgets, choices, scratch_buf, every

    def placed(prep: tuple, limit: int | None) -> tuple | None:
        """prep placed: (arena, placement, *prep); None, unplaced, where no placement reaches `limit` or less."""
        lower, peak, budgets, choices, scratch_buf, every = prep
        if limit is not None and _arena_floor(occupied, aligned, every[len(buffers):]) > limit:
            return None
        arena, placement = _place_best(every, lower, quick)
        return arena, placement, lower, peak, budgets, choices, scratch_buf, every

    def attempt(top: int, share: float, shares: dict[str, float] | None = None,
                worth: Callable[[dict[str, Any]], bool] | None = None, limit: int | None = None,
                like: tuple | None = None) -> tuple | None:
        """prepare, then placed: None where `worth` refuses it or its arena would be over `limit`."""
        prep = prepare(top, share, shares, worth, like)
        return None if prep is None else placed(prep, limit)

    best = None
    if top is not None and top > peak_live:  # a budget: the scratch may fill it, the largest share that fits
        for share in SCRATCH_SHARES:
            tried = attempt(top, share, limit=top)  # None: over the top
            if tried is not None and tried[0] <= top:
                best = tried
                break
        if best is not None and ops.cost is not None:  # or a smaller share with a lower estimate, then more a step
            priced: dict[str, tuple[Any, float]] = {}  # node -> the last choice priced and its estimate

            def price(choices: dict[str, Any]) -> float:
                """ops.cost summed over the nodes in their order (each node's last estimate kept: the attempts
                mostly change one node's kernel)."""
                terms = []
                for n in graph.nodes:
                    c = choices[n.name]
                    hit = priced.get(n.name)
                    if hit is None or hit[0] is not c:
                        hit = priced[n.name] = (c, ops.cost(n, graph, c))  # type: ignore[misc]
                    terms.append(hit[1])
                return sum(terms)
            fit = (price(best[5]), -share, best, share)
            for smaller in (s for s in SCRATCH_SHARES if s < share):  # placed only where it would win
                t = attempt(top, smaller, worth=lambda c, k=smaller, at=fit[:2]: (price(c), -k) < at, limit=top)
                if t is not None and t[0] <= top:
                    fit = (price(t[5]), -smaller, t, smaller)
            _, _, best, share = fit
            best = _more_per_step(best, share, lambda shares, worth, like: attempt(top, share, shares, worth, top,
                                                                                  like), top, price)
        elif best is not None and share < SCRATCH_SHARES[0]:
            best = _more_per_step(best, share, lambda shares, worth, like: attempt(top, share, shares, worth, top,
                                                                                  like), top)
    # `need`'s cut: an attempt whose floor is over it is not placed. Its arena would be over `need` (so it is not the
    # plan wanted) and over the tight bound (so it would not have stopped the loop: were the best so far within
    # `need` and the loop still going, that best is over the tight bound, so `need` is too); the attempts within
    # `need` are placed as before, so the first least of them is what the loop keeps with or without the cut
    cut = None if need is None else max(need, _align(tight))
    for share in SCRATCH_SHARES if best is None else ():  # all the slack first (bigger blocks are faster),
        prep = prepare(peak_live, share)  # less if that fragments
        assert prep is not None
        # and one whose floor is the best's arena or more would not be kept (nor stop the loop: that best is over
        # the tight bound, so is its floor), whichever of it and `wider` the loop takes
        if best is not None:
            cut = best[0] - 1 if cut is None else min(cut, best[0] - 1)
        tried = placed(prep, cut)  # None: over the cut, as is `wider`
        if prep[0] > peak_live:
            # a kernel's smallest scratch raised the peak (it had no slack at its step): the other steps
            # may now use the slack under that peak too, where the arena does not grow
            wider_prep = prepare(prep[0], share)
            assert wider_prep is not None
            wider = placed(wider_prep, cut)
            if wider is not None and (tried is None or wider[0] <= tried[0]):
                tried = wider
        if tried is None:
            continue
        if best is None or tried[0] < best[0]:
            best = tried
        if tried[0] <= _align(tight):
            break
    if need is not None and (best is None or best[0] > need):
        return None
    arena, placement, lower, peak, budgets, choices, scratch_buf, buffers = best
    for b in buffers:
        b.offset = placement[b.id]
    for b in sorted(slices, key=lambda b: -b.id):  # outermost first
        b.offset = b.parent.offset + b.delta
    offsets = {t: b.offset + deltas.get(t, 0) for b in (*buffers, *slices) for t in b.tensors}
    output_offsets = {o: (output_buffers[o] if o in output_buffers else buffer_of[o]).offset + deltas.get(o, 0)
                      for o in graph.outputs}
    io = {*inputs, *graph.outputs}
    scratch_buf.update(blocks)  # a vendor call's workspace pointer is its block's
    return Plan(offsets=offsets, aliases=aliases, scratch={k: b.offset for k, b in scratch_buf.items()},
                buffers=buffers, arena_bytes=arena, lower_bound_bytes=lower, peak_step=peak,
                steps=[n.name for n in graph.nodes], tight_bound_bytes=tight,
                io_bytes=sum(graph.tensors[t].nbytes for t in io), scratch_budgets=budgets, choices=choices,
                output_offsets=output_offsets, copied_outputs=copied, slices=slices,
                techniques={k: v for k, v in used.items() if v}, scratch_buffers=scratch_buf,
                output_buffers=output_buffers)


def _remembered_cost(cost: Callable[..., float]) -> Callable[..., float]:
    """OpMemory.cost, remembered for every plan_memory given the same cost (a compile's budgeted searches: one
    cost, hundreds of plan_memory calls on the same graphs and fits): its plans price every node's choice, and the
    choices are the fits' remembered objects (select.op_memory), most of them the same from one attempt to the next
    (TFLM's MobileNetV2 at 262,144 B: 40 % of the compile was estimates). The objects asked about are kept with each
    answer, so an id reused by a later object never finds another's."""
    remembered = _REMEMBERED.get(id(cost))
    if remembered is not None and remembered.cost is cost:  # type: ignore[attr-defined]
        return remembered
    seen: dict[tuple[int, int, int, bool], tuple[Node, Graph, Any, float]] = {}

    def remembered(n: Node, g: Graph, choice: Any, overlapped: bool = False) -> float:
        key = (id(n), id(g), id(choice), overlapped)
        hit = seen.get(key)
        if hit is None or hit[0] is not n or hit[1] is not g or hit[2] is not choice:
            if len(seen) >= _REMEMBERED_MAX:
                seen.clear()
            hit = seen[key] = (n, g, choice, cost(n, g, choice, overlapped))
        return hit[3]

    remembered.cost = cost  # type: ignore[attr-defined]
    _REMEMBERED.clear()  # one cost at a time: the last one's estimates (a new compile's drop the old ones)
    _REMEMBERED[id(cost)] = remembered
    return remembered


_REMEMBERED: dict[int, Callable[..., float]] = {}  # id of the last OpMemory.cost -> its remembered estimates
_REMEMBERED_MAX = 1 << 20


def _bound_with_scratch(live: list[int], scratch: list[Buffer]) -> tuple[int, int]:
    """_lower_bound of the tensors' buffers (their bytes live per step: `live`) and the scratch buffers (each
    one piece, with no segments) together, the tensors' share not summed again for each attempt."""
    total = list(live)
    for b in scratch:
        n = _align(b.nbytes)
        for step in range(max(b.first, 0), min(b.last, len(total) - 1) + 1):
            total[step] += n
    peak = max(range(len(total)), key=total.__getitem__, default=0)
    return (total[peak] if total else 0), peak


def plan_memory(graph: Graph, ops: OpMemory, scratch_floor: int = 0, ram_budget: int | None = None,
                trade_to: int | None = None) -> Plan:
    """The plan (_plan). With ram_budget (bytes: --ram-budget), an arena within it or AotcError: the
    plan as without a budget where that fits; else, each only while the arena is still over it:
    in-place ops over more of their inputs ("inplace"); outputs overlapping their inputs
    ("overlap"), node by node, the steps with the most bytes live first, a node kept where the
    plan gets better (_better; overlaps elsewhere only move buffers around: a run of them grows
    down by each one's offset); kernel blocks below the plan's usual floor ("tiles",
    ops.choose_least), then more overlaps. The trial plans place their buffers quickly (the greedy
    orders); the one kept is placed again in full, its scratch sized for what the budget leaves at
    each step where that still fits. The first two cost no work (the same kernels, writing
    elsewhere); the kernels given less scratch than without a budget (smaller blocks, more
    instructions) are named. Plan.budget says what was traded; the refusal names the peak step of
    the least arena aotc reaches, what is alive there and that arena.

    trade_to (with ram_budget): the techniques are taken while the arena is over it instead of the budget (0:
    every one that makes the plan smaller), the scratch then sized for the budget: the schedule that takes
    every trade of room for no work and gives the room saved to the kernels' blocks (one of the schedules
    aot/compiler.py compares by their cycle estimates: aot/plan/choice.py)."""
    if ops.cost is not None:
        ops = replace(ops, cost=_remembered_cost(ops.cost))
    base = _plan(graph, ops, scratch_floor)
    goal = ram_budget if trade_to is None or ram_budget is None else min(trade_to, ram_budget)
    if goal is None or base.arena_bytes <= goal:
        if ram_budget is not None:
            base.budget = _budget_report(base, base, {}, ram_budget)
        return base
    tech: frozenset[str] = frozenset()
    best = base
    saved: dict[str, int] = {}
    chosen: set[str] = set()

    def trial(more: frozenset[str] = frozenset(), name: str | None = None, need: int | None = None) -> Plan | None:
        """The quick plan with these techniques and overlaps; with `need` (the best's arena), None where its arena
        is larger: it cannot be _better."""
        return _plan(graph, ops, scratch_floor, tech | more,
                     overlap_nodes=frozenset(chosen | ({name} if name else set())), quick=True, need=need)

    def keep(cur: Plan | None, what: str) -> bool:
        nonlocal best
        if cur is None or not _better(cur, best):
            return False
        saved[what] = saved.get(what, 0) + best.arena_bytes - cur.arena_bytes
        best = cur
        return True

    def overlaps(free: Callable[[Node], bool] = lambda n: True) -> None:
        """Overlap nodes while the arena is over the budget: the steps with the most bytes live first, a
        node kept where the plan gets better; each node tried once (of those `free` allows)."""
        nsteps = max(len(best.steps), 1)
        allowed = {n.name for n in graph.nodes if ops.overlap(n, graph) is not None and free(n)}
        tried: set[str] = set()
        while best.arena_bytes > goal:
            live = _live_per_step(best.buffers, nsteps)
            order = sorted(range(len(best.steps)), key=lambda k: -live[k])
            name = next((best.steps[k] for k in order if best.steps[k] in allowed
                         and best.steps[k] not in chosen and best.steps[k] not in tried), None)
            if name is None:
                return
            tried.add(name)
            if keep(trial(name=name, need=best.arena_bytes), "overlap"):
                chosen.add(name)

    first = trial()  # trials against trials: the same placement
    assert first is not None
    best = first
    if keep(trial(frozenset({"inplace"}), need=best.arena_bytes), "inplace"):
        tech = frozenset({"inplace"})
    overlaps()
    if best.arena_bytes > goal and ops.choose_least is not None and keep(trial(frozenset({"tiles"}),
                                                                                need=best.arena_bytes), "tiles"):
        tech |= {"tiles"}
        overlaps()
    nodes = frozenset(best.techniques.get("overlap", ()))
    least = _plan(graph, ops, scratch_floor, tech, overlap_nodes=nodes)  # placed in full
    if least.arena_bytes > ram_budget:
        raise BudgetError(_refusal(graph, least, ram_budget), least.arena_bytes, least)
    fitted = _plan(graph, ops, scratch_floor, tech, top=ram_budget, overlap_nodes=nodes)  # the scratch the budget
    chosen_plan = fitted if fitted.arena_bytes <= ram_budget and fitted.techniques == least.techniques else least
    if ops.cost is not None:
        # what a tighter budget would have traded and how it sized the scratch are tried too, so that a looser
        # budget is never estimated slower (issue 67): the overlaps taken on past the budget, which add no
        # work and leave the kernels more room (not those that slow a kernel down), and the scratch sized under
        # every top of a fixed ladder
        configs, said = [(tech, nodes, least)], dict(saved)
        goal = 0
        cost = ops.cost
        overlaps(lambda n: cost(n, graph, least.choices[n.name], True) <= cost(n, graph, least.choices[n.name]))
        more = frozenset(best.techniques.get("overlap", ()))
        if more != nodes:
            configs.append((tech, more, _plan(graph, ops, scratch_floor, tech, overlap_nodes=more)))
        chosen_plan = _cheapest_tops(graph, ops, scratch_floor, configs, ram_budget, chosen_plan)
        if frozenset(chosen_plan.techniques.get("overlap", ())) == nodes:
            saved = said  # the bytes the overlaps past the budget saved are not this plan's
    chosen_plan.budget = _budget_report(base, chosen_plan, saved, ram_budget)
    return chosen_plan


TOP_LADDER = 1.005  # the tops a budget's scratch is sized under: 1,024 B x 1.005^k, every one below the budget


def _ladder(low: int, high: int) -> list[int]:
    """The ladder's tops in (low, high), aligned: the same for every budget, so a looser one tries each top a
    tighter one does (and its own)."""
    tops, t = [], 1024.0
    while t < high:
        if t > low:
            tops.append(int(t) // ALIGNMENT * ALIGNMENT)
        t *= TOP_LADDER
    return list(dict.fromkeys(tops))


def _cheapest_tops(graph: Graph, ops: OpMemory, scratch_floor: int,
                   configs: list[tuple[frozenset[str], frozenset[str], Plan]], budget: int, chosen: Plan) -> Plan:
    """Of `chosen` (the first config's plan at the budget) and each config's plans with the scratch sized under
    the ladder's tops below the budget (the trial placements, then the best placed in full), the one within the
    budget with the least estimate (ops.cost, counting the overlaps that slow a kernel down)."""
    assert ops.cost is not None
    cost = ops.cost

    def price(p: Plan) -> float:
        over = set(p.techniques.get("overlap", ()))
        return sum(cost(n, graph, p.choices[n.name], n.name in over) for n in graph.nodes)

    best, best_price = chosen, price(chosen)
    for k, (tech, nodes, least) in enumerate(configs):
        tops = _ladder(least.arena_bytes, budget)
        found: tuple[float, int] | None = None
        for top in tops:
            p = _plan(graph, ops, scratch_floor, tech, top=top, overlap_nodes=nodes, quick=True, need=budget)
            cost_p = price(p) if p is not None else None
            if cost_p is not None and (found is None or cost_p < found[0]):
                found = (cost_p, top)
        for top in ([budget] if k else []) + ([found[1]] if found else []):  # the first's at the budget: chosen
            p = _plan(graph, ops, scratch_floor, tech, top=top, overlap_nodes=nodes, need=budget)
            if p is not None and (cost_p := price(p)) < best_price:
                best, best_price = p, cost_p
        if least.arena_bytes <= budget and price(least) < best_price:
            best, best_price = least, price(least)
    return best


def _more_per_step(best: tuple, share: float, attempt: Callable[..., tuple | None], top: int,
                   price: Callable[[dict[str, Any]], float] | None = None) -> tuple:
    """A budget's plan whose scratch took `share` of every step's slack: each node whose kernel took scratch
    offered a larger share of its own step's slack in turn, the largest the arena still fits `top` with, so
    that the steps with room above the drift of overlapped outputs get larger blocks (fewer instructions)
    though others cannot. price (OpMemory.cost summed over the kernels chosen): a larger share kept only where
    the estimate falls. Whether a share is better is known from the kernels it chooses, so only a better one is
    placed (attempt's `worth`)."""
    shares: dict[str, float] = {}
    best_price = price(best[5]) if price is not None else 0.0
    for name in [k for k, c in best[5].items() if c.scratch]:
        for more in (s for s in SCRATCH_SHARES if s > share):
            like = (best[4], best[5], name)  # best's shares are `shares`: the other nodes' kernels are best's
            if price is None:
                tried = attempt({**shares, name: more}, lambda c, k=name, was=best[5][name].scratch: c[k].scratch > was,
                                like)
            else:
                tried = attempt({**shares, name: more}, lambda c, was=best_price: price(c) < was, like)
            if tried is not None and tried[0] <= top:
                shares[name], best = more, tried
                if price is not None:
                    best_price = price(best[5])
                break
    return best


def _better(a: Plan, b: Plan) -> bool:
    """Whether plan a needs less than b: a smaller arena, else lower bound, else fewer bytes live over
    all steps (the steps sharing a peak are brought down one at a time)."""
    if (a.arena_bytes, a.lower_bound_bytes) != (b.arena_bytes, b.lower_bound_bytes):  # the bytes live summed
        return (a.arena_bytes, a.lower_bound_bytes) < (b.arena_bytes, b.lower_bound_bytes)  # only on a tie
    return sum(_live_per_step(a.buffers, max(len(a.steps), 1))) < sum(_live_per_step(b.buffers, max(len(b.steps), 1)))


class BudgetError(AotcError):
    """--ram-budget below the least arena aotc reaches (least_bytes: for tools that search for it)."""

    def __init__(self, message: str, least_bytes: int, least: Plan | None = None):
        super().__init__(message)
        self.least_bytes = least_bytes
        self.least = least  # the plan of the least arena (its peak_step: where fused bands would start)


# what a RAM budget may use, cheapest first: in-place ops over any input they may overwrite, outputs
# overlapping their inputs by what the kernel has consumed (neither adds work: the same kernels run),
# then smaller kernel blocks than the plan's usual floor (more instructions)
TECHNIQUES = {"inplace": "an elementwise op's output written over an input that dies there",
              "overlap": "a conv's output overlapping its input by the rows the kernel has consumed",
              "tiles": "kernel blocks below the plan's usual floor (less scratch, more instructions)"}


def _budget_report(base: Plan, chosen: Plan, saved: dict[str, int], ram_budget: int) -> dict[str, Any]:
    """metadata.json's memory.ram_budget: the budget, the arena without it, and per technique used the
    bytes it saved (the least arena before it against the one after), its nodes and extra work; the
    nodes whose kernels took less scratch than without a budget (smaller blocks: more instructions)."""
    traded: dict[str, Any] = {
        name: {"what": TECHNIQUES[name], "bytes_saved": saved[name], "nodes": chosen.techniques[name],
               "extra_macs": 0, "extra_instructions": 0}
        for name in ("inplace", "overlap") if name in saved and chosen.techniques.get(name)}
    less = {n: {"unbudgeted_bytes": base.choices[n].scratch, "bytes": c.scratch,
                **({"unbudgeted_tile": base.choices[n].detail, "tile": c.detail}
                   if isinstance(c.detail, int) and c.detail != base.choices[n].detail else {})}
            for n, c in chosen.choices.items() if n in base.choices and c.scratch < base.choices[n].scratch}
    if less:  # by the tiles technique, or by the slack left at their steps by the others
        traded["scratch"] = {"what": "kernels given less scratch than without the budget (smaller blocks, "
                                     "the same MACs, more instructions)", "nodes": less,
                             **({"tiles_bytes_saved": saved["tiles"]} if "tiles" in saved else {})}
    return {"ram_budget_bytes": ram_budget, "arena_bytes": chosen.arena_bytes,
            "unbudgeted_arena_bytes": base.arena_bytes, "traded": traded}


def _refusal(graph: Graph, p: Plan, ram_budget: int) -> str:
    """One line: the budget, the least arena, its peak step's node and op, the largest tensors alive
    there (named by the node writing them: TFLite's tensor names run long) and the scratch."""
    step = p.peak_step
    node = graph.nodes[step] if step < len(graph.nodes) else None
    writer = {o: k for k, n in enumerate(graph.nodes) for o in n.outputs if o}
    read = {i: k for k, n in enumerate(graph.nodes) for i in n.inputs if i}
    alive = []
    for b in p.buffers:
        live = b.live_bytes(step)
        if live and b.tensors:  # its tensors alive at the step (an output written over its input: both)
            names = dict.fromkeys(f"{graph.nodes[writer[t]].name}'s output" if t in writer else f"input '{t}'"
                                  for t in b.tensors if writer.get(t, -1) <= step
                                  and (read.get(t, -1) >= step or writer.get(t) == step or t in graph.outputs))
            alive.append((live, " over ".join(reversed(names)) or f"'{b.tensors[0]}'"))
    alive.sort(key=lambda a: -a[0])
    scratch = p.choices[node.name].scratch if node is not None and node.name in p.choices else 0
    shown = ", ".join(f"{t} {n:,} B" for n, t in alive[:3])
    rest = f" and {len(alive) - 3} more ({sum(n for n, _ in alive[3:]):,} B)" if len(alive) > 3 else ""
    where = f"step {step}, node {node.name} ({node.op})" if node is not None else f"step {step}"
    return (f"--ram-budget {ram_budget:,} B: the least arena aotc reaches is {p.arena_bytes:,} B (in-place ops "
            f"and outputs overlapping their inputs where the kernels allow); its peak is {where}, where "
            f"{shown}{rest} are alive" + (f", with {scratch:,} B of kernel scratch" if scratch else ""))
    # aot/plan/bands.py plan_with_bands adds what fused row bands reached


def _overlay(n: Node, graph: Graph, ops: OpMemory, step: int, buffer_of: dict[str, Buffer], deltas: dict[str, int],
             overlaid: dict[int, list[list[int]]], buffers: list[Buffer], last_use: dict[str, int],
             read_only: set[int], outputs: set[str]) -> bool:
    """Node n's output 0 written into its input 0's buffer, ops.overlap bytes below the input (the
    buffer grows down by what they do not overlap), where that input dies here, is a whole group of
    a buffer that is no Concat's slice or output and that no caller owns. The buffer's tensors then
    form groups by the step writing them (_overlaid_segments). False: not taken."""
    src, out = n.inputs[0] if n.inputs else "", n.outputs[0]
    below = ops.overlap(n, graph) if src in buffer_of else None
    if below is None:
        return False
    assert below >= 0 and below % ALIGNMENT == 0, below
    b = buffer_of[src]
    if (id(b) in read_only or b.parent is not None or any(c.parent is b for c in buffers)
            or n.inputs.count(src) != 1 or outputs.intersection(b.tensors)
            or any(last_use.get(m, step) > step for m in b.tensors)):
        return False
    groups = overlaid.get(id(b), [[0, b.nbytes, -1]])
    delta, nbytes, _ = groups[-1]
    if deltas.get(src, 0) != delta or graph.tensors[src].nbytes != nbytes:
        return False
    overlaid[id(b)] = groups
    at = delta - below
    if at < 0:  # the buffer grows down: everything in it moves up
        for t in b.tensors:
            deltas[t] = deltas.get(t, 0) - at
        for g in groups:
            g[0] -= at
        at = 0
    groups.append([at, graph.tensors[out].nbytes, step])
    _join(buffer_of, b, out)
    deltas[out] = at
    b.nbytes = max(d + m for d, m, _ in groups)
    return True


def _overlaid_segments(b: Buffer, groups: list[list[int]], produced_at: dict[str, int], last_use: dict[str, int],
                       outputs: set[str], nsteps: int) -> list[tuple[int, int, int, int]]:
    """The segments of a buffer whose outputs were written over their inputs (_overlay): each group
    (a tensor written at a step, with its views and in-place successors, the tensors made from the
    step it is written until the next group's) from the step after it is written to the step before the
    next is (its last read, the first group from the buffer's first step), and at each step that
    writes a group, the span of that group and the one it overlaps."""
    starts = [g[2] for g in groups]
    last = [-1] * len(groups)
    for t in b.tensors:
        k = bisect.bisect_right(starts, produced_at.get(t, 0)) - 1
        end = nsteps - 1 if t in outputs else last_use.get(t, produced_at.get(t, 0))
        last[k] = max(last[k], end)
    segs = []
    for k, (delta, nbytes, step) in enumerate(groups):
        first = b.first if k == 0 else step + 1
        end = groups[k + 1][2] - 1 if k + 1 < len(groups) else last[k]
        if first <= end:
            segs.append((delta, nbytes, first, end))
        if k:
            lo, hi = delta, max(groups[k - 1][0] + groups[k - 1][1], delta + nbytes)
            segs.append((lo, hi - lo, step, step))
    return segs


def _extend_across_loops(graph: Graph, last_use: dict[str, int]) -> None:
    """A value a loop body reads but that was written before the loop began is read again at every
    step: it lives to the loop's end (aot/frontend/onnx/loops.py: LoopBegin .. LoopEnd)."""
    begins: list[tuple[int, set[str]]] = []  # open loops: (step of LoopBegin, tensors written since)
    for step, n in enumerate(graph.nodes):
        if n.op == "LoopBegin":
            begins.append((step, set()))
        for _, written in begins:
            written.update(o for o in n.outputs if o)
        if n.op == "LoopEnd" and begins:
            first, written = begins.pop()
            for inner in graph.nodes[first + 1:step]:
                for i in inner.inputs:
                    if i and i not in written:
                        last_use[i] = max(last_use.get(i, step), step)


def _states_written_in_place(graph: Graph, ops: OpMemory) -> dict[str, str]:
    """{new value: state} for the carried values of a Loop whose new value can be written straight
    into the state's bytes, so the loop's end copies nothing (aot/frontend/onnx/loops.py): nothing in
    the body reads the old value (or a view of it) at or after the node that writes the new one,
    the end copies nothing out of it (another state's new value, a scan row), and nothing after
    the loop reads the new value under its own name."""
    readers: dict[str, list[int]] = {}
    produced: dict[str, int] = {}
    for step, n in enumerate(graph.nodes):
        for i in n.inputs:
            if i:
                readers.setdefault(i, []).append(step)
        for o in n.outputs:
            if o:
                produced[o] = step
    out: dict[str, str] = {}
    for end, loop_end in enumerate(graph.nodes):
        if loop_end.op != "LoopEnd":
            continue
        nc, ns = loop_end.attrs["n_carried"], loop_end.attrs["n_scan"]
        states, news = loop_end.inputs[:nc], loop_end.inputs[nc + ns:nc + ns + nc]
        sources = loop_end.inputs[nc + ns:]
        for state, new in zip(states, news, strict=True):
            at = produced.get(new)
            if at is None or new == state or new in out or new in graph.outputs or news.count(new) != 1:
                continue
            writer = graph.nodes[at]
            if writer.op in CONTROL_MARKERS or ops.is_view(writer) or ops.parts(writer, graph) is not None:
                continue
            same = {state}  # the state and the views of it, which read its bytes
            for n in graph.nodes[:end]:
                if n.inputs and n.inputs[0] in same and (ops.is_view(n) or ops.parts(n, graph) is not None):
                    same.update(o for o in n.outputs if o)
            if same.intersection(sources) or any(r > at or (r == at and not (t == state and ops.overwrites(
                    writer, graph, t))) for t in same for r in readers.get(t, []) if r != end):
                continue
            if any(r > end for r in readers.get(new, [])):
                continue
            out[new] = state
    return out




def _write_inputs_in_place(n: Node, graph: Graph, ops: OpMemory, step: int, out: Buffer,
                           buffer_of: dict[str, Buffer], last_use: dict[str, int], read_only: set[int],
                           outputs: set[str]) -> None:
    """A Concat whose inputs are contiguous slices of its output: each input whose buffer holds
    nothing else still needed becomes that slice, so its producer writes straight into the
    output and the Concat copies nothing for it."""
    deltas = ops.slices(n, graph)
    if deltas is None:
        return
    for x, delta in zip(n.inputs, deltas, strict=True):
        b = buffer_of.get(x)
        if b is not None and _free_to_nest(b, x, n, graph, step, last_use, read_only, outputs):
            b.parent, b.delta = out, delta


def _free_to_nest(b: Buffer, x: str, n: Node, graph: Graph, step: int, last_use: dict[str, int], read_only: set[int],
                  outputs: set[str]) -> bool:
    """Whether input x's buffer b may become a slice of a buffer node n writes (a Concat's output, a vendor
    call's workspace): b is x's bytes alone, read once by n and by nothing after it, no graph input or output."""
    return (b.parent is None and id(b) not in read_only and n.inputs.count(x) == 1
            and b.nbytes == graph.tensors[x].nbytes and not outputs.intersection(b.tensors)
            and all(last_use.get(m, step) <= step for m in b.tensors))


def _workspace_block(n: Node, graph: Graph, block: tuple[int, Mapping[str, int]], step: int,
                     new_buffer: Callable[[int, int], Buffer], buffer_of: dict[str, Buffer],
                     last_use: dict[str, int], read_only: set[int], outputs: set[str], deltas: dict[str, int],
                     overlaid: dict[int, list[list[int]]]) -> Buffer:
    """The vendor call n's workspace as a buffer of the plan, its inputs and outputs at their offsets in it
    (slices) where nothing else needs their bytes: an input whose buffer holds only tensors dead after the call,
    an output of its own. The others are placed as usual; their bytes in the block are left unused."""
    nbytes, inside = block
    w = new_buffer(nbytes, step)
    for x in dict.fromkeys(t for t in n.inputs if t in inside):
        b = buffer_of.get(x)
        if (b is not None and id(b) not in overlaid and x not in deltas
                and _free_to_nest(b, x, n, graph, step, last_use, read_only, outputs)):
            b.parent, b.delta = w, inside[x]
    for out in n.outputs:
        if not out:
            continue
        b = new_buffer(graph.tensors[out].nbytes, step)
        _join(buffer_of, b, out)
        if out in inside and out not in outputs:
            b.parent, b.delta = w, inside[out]
    return w


def _join(buffer_of: dict, b: Buffer, tensor: str) -> None:
    b.tensors.append(tensor)
    buffer_of[tensor] = b




























