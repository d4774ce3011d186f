"""Placing the plan's buffers in the arena (step 4 of planner.py's algorithm): greedy by several
orders, each buffer at the lowest offset where it meets no placed buffer live at the same steps,
then a squeaky-wheel repair and seeded random orders when the lower bound is missed. A buffer whose
tensors overlap inside it is placed by its segments (rectangles of bytes x steps)."""

from __future__ import annotations

import functools
import itertools
import random
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aot.plan.buffers import ALIGNMENT, Buffer, Plan, _align, _changes


def _segments(b: Buffer, children: dict[int, list[Buffer]]) -> list[tuple[int, int, int, int]]:
    """b's own bytes from the step that writes it, and each slice's (recursively) from the step
    that writes the slice until b takes over. children: id of a buffer -> its slices."""
    segs = [(0, b.nbytes, b.first, b.last)]
    for c in children.get(id(b), ()):
        segs += [(c.delta + d, n, f, min(last, b.first - 1)) for d, n, f, last in _segments(c, children)]
    return segs


def _slabs(b: Buffer) -> list[tuple[int, int, int, list[tuple[int, int]]]]:
    """b's lifetime cut where its set of live segments changes (_changes), with each piece's live
    bytes and byte ranges, adjacent ones merged: (first, last, bytes, [(start, end)]). A Concat's
    output written slice by slice is a staircase of k segments; as k pieces of one range each, a
    query at one step meets one piece, not the k slices. The result is shared: do not change it."""
    segs = b.segs
    if len(segs) == 1:
        d, n, f, last = segs[0]
        return [(f, last, n, [(d, d + n)])]
    return _slabs_of(tuple(segs))


@functools.lru_cache(maxsize=64)  # the bounds and each scratch share's placement ask for the same buffers
def _slabs_of(segs: tuple[tuple[int, int, int, int], ...]) -> list[tuple[int, int, int, list[tuple[int, int]]]]:
    """_slabs of a buffer with several segments (a Concat's output), by its segments. The ranges
    are updated where segments start or end: redone from the live ones only when one ends or a
    new one starts below the last range (touching ranges merge whatever the order otherwise)."""
    out = []
    live: set[int] = set()
    total = 0
    ranges: list[tuple[int, int]] = []
    for first, last, started, ended in _changes(list(segs)):
        live.difference_update(ended)
        live.update(started)
        total += sum(segs[i][1] for i in started) - sum(segs[i][1] for i in ended)
        new = sorted(segs[i] for i in started)
        if ended or (ranges and new and new[0][0] < ranges[-1][0]):
            ranges, new = [], sorted(segs[i] for i in live)
        for d, n, _, _ in new:
            if ranges and d <= ranges[-1][1]:
                ranges[-1] = (ranges[-1][0], max(ranges[-1][1], d + n))
            else:
                ranges.append((d, d + n))
        if live:
            out.append((first, last, total, list(ranges)))
    return out


def _rects(b: Buffer) -> list[tuple[int, int, int, int]]:
    """b's bytes over time as (delta, nbytes, first, last) rectangles covering exactly what its
    segments cover: a placement that misses these misses the segments, and the other way round.
    A range live in consecutive pieces of _slabs is one rectangle."""
    slabs = _slabs(b)
    if len(slabs) == 1 and len(slabs[0][3]) == 1:
        f, last, _, ((s, e),) = slabs[0]
        return [(s, e - s, f, last)]
    done: list[tuple[int, int, int, int]] = []
    open_: dict[tuple[int, int], list[int]] = {}  # byte range -> [first, last] still extendable
    for f, last, _, ranges in slabs:
        now = {}
        for r in ranges:
            span = open_.pop(r, None)
            if span is not None and span[1] == f - 1:
                span[1] = last
            else:
                if span is not None:
                    done.append((r[0], r[1] - r[0], span[0], span[1]))
                span = [f, last]
            now[r] = span
        done += [(r[0], r[1] - r[0], f0, l0) for r, (f0, l0) in open_.items()]
        open_ = now
    done += [(r[0], r[1] - r[0], f0, l0) for r, (f0, l0) in open_.items()]
    return done


def _placement_rects(buffers: list[Buffer]) -> dict[int, list[tuple[int, int, int, int]]]:
    """buffer id -> what _place checks: its rectangles (_rects), or its segments as they are when
    some segment holds no bytes (a zero-byte range between two merged ones would be lost)."""
    if any(n == 0 for b in buffers for _, n, _, _ in b.segs):
        return {b.id: b.segs for b in buffers}
    return {b.id: _rects(b) for b in buffers}


def _live_per_step(buffers: list[Buffer], steps: int) -> list[int]:
    """Bytes of the buffers live at each step, each rounded up to the alignment: a difference
    array over the pieces of each buffer's lifetime, so linear in buffers plus steps."""
    delta = [0] * (steps + 1)
    for b in buffers:
        for f, last, n, _ in _slabs(b):
            f, last = max(f, 0), min(last, steps - 1)
            if f <= last:
                delta[f] += _align(n)
                delta[last + 1] -= _align(n)
    return list(itertools.accumulate(delta[:steps]))


def _occupied_per_step(buffers: list[Buffer], steps: int) -> tuple[list[int], bool]:
    """Bytes no placement of the buffers can leave out at each step, and whether every live range starts
    aligned. The buffers live at a step hold disjoint byte ranges (each buffer's: the union of its live
    segments, _slabs' ranges), so an arena has at least their lengths summed; where every range starts at an
    aligned offset each also holds the gap up to the next aligned byte (the next range cannot start in it),
    so its length aligned up counts. Unlike _live_per_step (each buffer's live bytes aligned up), this never
    exceeds what _place reaches, also where a slice starts unaligned. Scratch added later is aligned
    (one range at its buffer's start) only where the flag says every range is."""
    aligned = not any(d % ALIGNMENT for b in buffers for d, _, _, _ in b.segs)
    size = _align if aligned else int
    delta = [0] * (steps + 1)
    for b in buffers:
        for f, last, _, ranges in _slabs(b):
            f, last = max(f, 0), min(last, steps - 1)
            if f <= last:
                n = sum(size(e - s) for s, e in ranges)
                delta[f] += n
                delta[last + 1] -= n
    return list(itertools.accumulate(delta[:steps])), aligned


def _arena_floor(occupied: list[int], aligned: bool, scratch: list[Buffer]) -> int:
    """The least arena any placement of the buffers behind `occupied` (_occupied_per_step) and the scratch
    buffers (one range each, from their offset) reaches: the most bytes held at one step, aligned up, as
    _place's arena always is (aligned offsets, each buffer's top aligned). Compared with what a search
    needs, it skips the trial placements that cannot win."""
    total = list(occupied)
    for b in scratch:
        n = _align(b.nbytes) if aligned else b.nbytes
        for step in range(max(b.first, 0), min(b.last, len(total) - 1) + 1):
            total[step] += n
    return _align(max(total, default=0))


def _lower_bound(buffers: list[Buffer], steps: int) -> tuple[int, int]:
    """Largest total of buffer bytes live at one step, and that step."""
    live = _live_per_step(buffers, steps)
    peak = max(range(steps), key=live.__getitem__, default=0)
    return (live[peak] if live else 0), peak


_ORDERS: tuple[Callable[[Buffer], tuple], ...] = (
    lambda b: (-b.nbytes, b.first),                      # largest first (TFLM)
    lambda b: (-(b.nbytes * (b.last - b.first + 1)), b.first),  # largest area first
    lambda b: (b.first, -b.nbytes),                      # in execution order
    lambda b: (-(b.last - b.first), -b.nbytes),          # longest-lived first
)


# _place_best's results by the buffers' shapes in the order given (a RAM budget's search plans the same buffers
# again and again: VWW at 30,200 B places 12,996 distinct sets in 29,876 calls), least recently used dropped
# first. Keys and offsets are packed (_shape_key: some 2 KB a set of 50 buffers), so a full cache stays near 30 MB
_PLACED: dict[bytes, tuple[int, array]] = {}
_PLACED_MAX = 16384


def _shape_key(buffers: list[Buffer], lower_bound: int, quick: bool) -> bytes:
    """What _place_best reads of the buffers, packed: per buffer its bytes, steps and segments (their count, 0
    where it has none: the whole buffer over its steps), then the bound and the mode."""
    words = [lower_bound, quick]
    for b in buffers:
        words += (b.nbytes, b.first, b.last, len(b.segments))
        for seg in b.segments:
            words += seg
    return array("q", words).tobytes()


def _place_best(buffers: list[Buffer], lower_bound: int, quick: bool = False) -> tuple[int, dict[int, int]]:
    """_place_best_uncached, remembered. The placement reads of a buffer only its bytes over time and its place
    in the list (ties in the orders keep it; the ids only name the buffers), so the same shapes in the same order
    place the same, whatever the ids."""
    key = _shape_key(buffers, lower_bound, quick)
    hit = _PLACED.pop(key, None)
    if hit is None:
        size, offsets = _place_best_uncached(buffers, lower_bound, quick)
        if len(_PLACED) >= _PLACED_MAX:
            del _PLACED[next(iter(_PLACED))]
        hit = (size, array("q", [offsets[b.id] for b in buffers]))
    _PLACED[key] = hit  # the most recent last
    return hit[0], {b.id: at for b, at in zip(buffers, hit[1], strict=True)}


def _place_best_uncached(buffers: list[Buffer], lower_bound: int, quick: bool = False
                         ) -> tuple[int, dict[int, int]]:
    """Greedy placement in several orders, first-fit and best-fit; if none reaches the lower bound,
    the squeaky-wheel search (_repair) reorders from the best of them, then seeded random orders
    run if it misses too. The smallest arena wins."""
    target = _align(lower_bound)
    place = _Placer(_placement_rects(buffers))
    best: tuple[int, dict[int, int], list[Buffer]] | None = None
    for key in _ORDERS:
        ordered = sorted(buffers, key=key)
        for best_fit in (False, True):  # stopped where it reaches the best so far (over the target)
            size, offsets = place(ordered, best_fit, None if best is None else best[0])
            if best is None or size < best[0]:
                assert offsets is not None  # not stopped
                best = (size, offsets, ordered)
        if best[0] <= target:
            return best[0], best[1]
    assert best is not None  # _ORDERS is not empty
    size, offsets = _repair(best[2], place.rects, target, best[:2], QUICK_REPAIR_ROUNDS if quick else REPAIR_ROUNDS,
                            place)
    if quick:  # a RAM budget's trial plans: a short repair, no random orders
        return size, offsets
    if size <= target and not any(d % ALIGNMENT for b in buffers for d, _, _, _ in b.segs):
        return size, offsets  # the bound is exact (every live range starts aligned): nothing beats it
    # seeded random orders that tend to put big buffers first, as many as the planner tried before
    # the repair (until they reach the target themselves): they rarely help, but with them no arena
    # is larger than it was. (A slice at an unaligned offset makes the bound a few bytes too high,
    # as each buffer's live bytes are rounded up, so one of them may still beat the repair.)
    rng = random.Random(0)
    greedy = best[0]  # what the orders without the repair have reached
    for attempt in range(len(_ORDERS), len(_ORDERS) + RANDOM_ORDERS):
        if greedy <= target or len(buffers) * (attempt - 1) > REPAIR_BUDGET:  # where they stopped
            break
        ordered = sorted(buffers, key=lambda b: -b.nbytes * rng.uniform(0.5, 1.5))
        for best_fit in (False, True):
            # an order is wanted only if it beats the best or reaches the target: stopped where it can do neither
            tried = place(ordered, best_fit, max(size, target + 1))
            greedy = min(greedy, tried[0])
            if tried[0] < size:
                assert tried[1] is not None  # not stopped
                size, offsets = tried
    return size, offsets


REPAIR_ROUNDS = 200  # squeaky-wheel rounds when the first orders miss the lower bound ...


RANDOM_ORDERS = 200  # ... and random orders when those miss it too ...


REPAIR_BUDGET = 40_000  # ... each bounded by buffers x rounds, so big graphs stay fast


REPAIR_BUMP = 0.1  # priority a buffer above the target gains per round, in buffers' places


REPAIR_NOISE = 0.1  # random priority added at each reordering, in the same unit


REPAIR_STALL = 50  # rounds the repair goes on without a smaller arena


QUICK_REPAIR_ROUNDS = 20  # ... in a RAM budget's trial plans (plan_memory), which try no random orders


def _repair(ordered: list[Buffer], rects: dict[int, list[tuple[int, int, int, int]]], target: int,
            best: tuple[int, dict[int, int]], rounds: int = REPAIR_ROUNDS, place: _Placer | None = None
            ) -> tuple[int, dict[int, int]]:
    """Squeaky-wheel search (Joslin and Clements, 1999): place in priority order (first fit and best
    fit); every buffer that ends above the target gains priority, so the next round places it
    before the ones that pushed it up; a little noise in each reordering breaks cycles between
    buffers that push each other up by turns. Stops at the target, when the rounds run out, or
    after REPAIR_STALL rounds without a smaller arena.
    The greedy orders miss the bound where a small long-lived buffer must go under big ones placed
    before it (MobileNetV2's int8 residual beside two expansions: 65,536 B against 61,552 B); a
    few rounds move it first. Of 157 placements that the greedy and 200 random orders missed the
    bound on (out of 1,115 from the zoo's and MLPerf models, bench/compile_time.py's DAGs and
    random chains with skips), it brings 119 to the bound, placing half as many buffers in all."""
    n = len(ordered)
    place = place or _Placer(rects)
    top = place.extent.tops
    priority = {b.id: float(n - k) for k, b in enumerate(ordered)}
    rng = random.Random(0)
    high = {i for i, at in best[1].items() if at + top[i] > target}  # in the best greedy placement
    last_gain = 0
    for round_ in range(max(1, min(rounds, REPAIR_BUDGET // max(n, 1)))):
        if round_ - last_gain > REPAIR_STALL:
            break
        for i in high:
            priority[i] += REPAIR_BUMP * n
        ordered = sorted(ordered, key=lambda b: -(priority[b.id] + REPAIR_NOISE * n * rng.random()))
        high = set()
        for best_fit in (False, True):
            size, offsets = place(ordered, best_fit)
            if size < best[0]:
                best, last_gain = (size, offsets), round_
            if size <= target:
                return best
            high.update(i for i, at in offsets.items() if at + top[i] > target)
    return best


SCRATCH_SHARES = (1.0, 0.5, 0.25)  # of each step's slack, offered to its scratch in turn


@dataclass(frozen=True)
class _Extent:
    """What every placement of one set of buffers needs and no order changes: the steps their rectangles span
    (one more, and one for a start past the last), and each buffer's top (its highest byte above its offset,
    aligned). Worked out once per set: a RAM budget's search places a set in up to 50 orders."""

    steps: int
    tops: dict[int, int]


def _extent(rects: dict[int, list[tuple[int, int, int, int]]]) -> _Extent:
    steps = max((max(f, last) for mine in rects.values() for _, _, f, last in mine), default=-1) + 2
    return _Extent(steps, {i: max((_align(d + n) for d, n, _, _ in mine), default=0) for i, mine in rects.items()})


class _Placer:
    """_place for one set of buffers, remembered by the order: the repair's rounds and the random orders come
    back to orders placed before (a quarter of the placements in a RAM budget's search). Every caller places an
    order first fit, then best fit, which mostly choose the same offsets (person_detect at 19,040 B: 90 % of the
    buffers before they first differ, half the orders throughout): first fit keeps its state where best fit would
    first choose otherwise (_Fork), and best fit goes on from there."""

    def __init__(self, rects: dict[int, list[tuple[int, int, int, int]]]):
        self.rects, self.extent = rects, _extent(rects)
        self.done: dict[tuple[bool, tuple[int, ...]], tuple[int, dict[int, int]]] = {}
        # order -> where its best fit leaves first fit's (_Fork), or the arena a first fit stopped at before they
        # differed (a best fit stopped at that arena or less stops too: over what its caller wants)
        self.forks: dict[tuple[int, ...], _Fork | int] = {}

    def __call__(self, ordered: list[Buffer], best_fit: bool, stop: int | None = None
                 ) -> tuple[int, dict[int, int] | None]:
        """_place's (size, offsets), or with `stop` (size, None) where the arena reaches it: only a smaller one
        is wanted (size then at least `stop`, not always where _place would have stopped: no caller reads more
        of it than that). Only whole placements are remembered."""
        ids = tuple([b.id for b in ordered])
        hit = self.done.get((best_fit, ids))
        if hit is not None:
            return hit
        steps = self.extent.steps
        if not best_fit:
            state = _State([[] for _ in range(steps)], [[] for _ in range(steps)], {}, 0)
            size, offsets, fork = _place_from(ordered, 0, None, False, self.rects, self.extent.tops, state, stop,
                                              track=True)
            if fork is not None:
                self.forks[ids] = fork
            elif offsets is None:
                self.forks[ids] = size
            else:  # best fit places this order the same
                self.done[True, ids] = (size, offsets)
        else:
            fork = self.forks.get(ids)
            if isinstance(fork, int) and stop is not None and stop <= fork:
                return fork, None
            if isinstance(fork, _Fork):  # used once (its state goes on as best fit's)
                del self.forks[ids]
                size, offsets, _ = _place_from(ordered, fork.k, fork.chosen, True, self.rects, self.extent.tops,
                                               fork.state, stop)
            else:
                size, offsets = _place(ordered, True, self.rects, self.extent, stop)
        if offsets is None:
            return size, None
        hit = self.done[best_fit, ids] = (size, offsets)
        return hit


@dataclass
class _State:
    """A placement under way: step -> placed byte ranges live then, ... whose lifetime starts then; offsets; top."""

    live_at: list[list[tuple[int, int]]]
    starts_at: list[list[tuple[int, int]]]
    offsets: dict[int, int]
    top: int

    def copy(self) -> _State:
        return _State([r[:] for r in self.live_at], [r[:] for r in self.starts_at], dict(self.offsets), self.top)


@dataclass(frozen=True)
class _Fork:
    """A first fit's state before buffer k of its order, where best fit chooses offset `chosen` instead."""

    k: int
    chosen: int
    state: _State


def _place(ordered: list[Buffer], best_fit: bool = False,
           rects: dict[int, list[tuple[int, int, int, int]]] | None = None, extent: _Extent | None = None,
           stop: int | None = None) -> tuple[int, Any]:
    """Each buffer at the lowest offset where it fits (first fit), or in the narrowest gap that
    holds it (best fit; above everything if none). A buffer's bytes over time (its rectangles,
    _rects: what Buffer.segs covers) must miss those of every placed buffer live at the same
    time: each such pair forbids an open interval of offsets, and the gaps between those intervals
    are where it can go. Placed rectangles are indexed by step (live at it, or starting at it), so
    a buffer meets only the ones that overlap its lifetime, not every buffer placed before it.
    stop: where the arena reaches it, (that size so far, None): the caller wants only smaller arenas."""
    if rects is None:
        rects = _placement_rects(ordered)
    if extent is None:
        extent = _extent({b.id: rects[b.id] for b in ordered})
    state = _State([[] for _ in range(extent.steps)], [[] for _ in range(extent.steps)], {}, 0)
    size, offsets, _ = _place_from(ordered, 0, None, best_fit, rects, extent.tops, state, stop)
    return size, offsets


def _place_from(ordered: list[Buffer], start: int, first: int | None, best_fit: bool,
                rects: dict[int, list[tuple[int, int, int, int]]], tops: dict[int, int], state: _State,
                stop: int | None, track: bool = False) -> tuple[int, dict[int, int] | None, _Fork | None]:
    """_place of ordered[start:] onto `state` (changed), ordered[start] at offset `first` where given. track (first
    fit): best fit's choice worked out too, until the first buffer where it differs: the state before that buffer
    and best fit's offset for it are returned (a _Fork), else None."""
    live_at, starts_at, offsets, top = state.live_at, state.starts_at, state.offsets, state.top
    fork = None
    align = ALIGNMENT  # _align inlined below: this loop is a RAM budget's search's inner loop
    joined = itertools.chain.from_iterable
    for k in range(start, len(ordered)):
        b = ordered[k]
        mine = rects[b.id]
        if k == start and first is not None:
            chosen: int | None = first
        else:
            if len(mine) == 1 and mine[0][0] == 0:  # the common case: one range from the buffer's start
                _, below, f1, l1 = mine[0]
                # byte ranges [s, e) of overlapping lifetimes: forbid offsets (s - below, e)
                if l1 <= f1:
                    near = live_at[f1][:]
                else:
                    near = live_at[f1] + list(joined(starts_at[f1 + 1:l1 + 1] if f1 >= -1
                                                     else [starts_at[j] for j in range(f1 + 1, l1 + 1)]))
            else:
                below, near = 0, []  # each rect's ranges shifted to intervals of the buffer's offset
                for d1, n1, f1, l1 in mine:
                    near += [(s - d1 - n1, e - d1) for s, e in live_at[f1]]
                    for step in range(f1 + 1, l1 + 1):
                        if starts_at[step]:
                            near += [(s - d1 - n1, e - d1) for s, e in starts_at[step]]
            chosen, at = None, 0  # at: the highest end so far, aligned up
            if near:
                near.sort()
                cur = 0
                if best_fit or track:
                    narrowest, lowest = None, None
                    for s, hi in near:  # the open intervals (s - below, hi) of forbidden offsets, by start
                        lo = s - below
                        if lo >= at:  # offsets at..lo are free
                            if lowest is None:
                                lowest = at
                            if narrowest is None or lo - at < narrowest:
                                chosen, narrowest = at, lo - at
                        if hi > cur:
                            cur, at = hi, -(-hi // align) * align
                    if track:  # first fit: the lowest gap; best fit's differs: its fork
                        if (at if chosen is None else chosen) != (at if lowest is None else lowest):
                            fork = _Fork(k, at if chosen is None else chosen,
                                         _State(live_at, starts_at, offsets, top).copy())
                            track = False
                        chosen = lowest
                else:
                    for s, hi in near:
                        if s - below >= at:
                            chosen = at
                            break
                        if hi > cur:
                            cur, at = hi, -(-hi // align) * align
            if chosen is None:
                chosen = at  # above every conflicting buffer
        offsets[b.id] = chosen
        for d, n, f, last in mine:
            r = (chosen + d, chosen + d + n)
            starts_at[f].append(r)
            if f == last:
                live_at[f].append(r)
                continue
            for live in (live_at[f:last + 1] if f >= 0 else [live_at[j] for j in range(f, last + 1)]):
                live.append(r)
        if chosen + tops[b.id] > top:
            top = chosen + tops[b.id]
        if stop is not None and top >= stop:
            return top, None, fork
    return top, offsets, fork


def assert_no_overlap(plan: Plan) -> None:
    """For tests: no two buffers live at the same step share a byte. Checked step by step over
    the segments themselves (not the planner's rectangles), in byte order."""
    steps = max((last for b in plan.buffers for _, _, _, last in b.segs), default=-1) + 1
    live: list[list[tuple[int, int, int, Buffer]]] = [[] for _ in range(steps)]
    for k, b in enumerate(plan.buffers):
        for d, n, f, last in b.segs:
            for step in range(max(f, 0), last + 1):
                live[step].append((b.offset + d, b.offset + d + n, k, b))
    for segs in live:
        segs.sort(key=lambda s: s[:3])
        reach: list[tuple[int, int, int, Buffer]] = []  # earlier segments still reaching past this start
        for seg in segs:
            start, _, k, b = seg
            reach = [r for r in reach if r[1] > start]
            for r in reach:
                if r[2] != k and r[0] < seg[1]:  # r starts first: overlap unless a point
                    raise AssertionError(f"buffers {r[3].tensors} and {b.tensors} overlap")
            reach.append(seg)
