"""The floor under a trial plan's arena (placement._arena_floor, issue 67's compile time): a RAM budget's search
skips placing the attempts whose floor is over what they must beat, so the floor must never be above what a
placement reaches, and skipping must change no plan."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_planner import graph, host_memory, repair_graph

import aot.plan.planner as planner
from aot.compiler import Options, compile_file
from aot.plan import assert_no_overlap, plan_memory
from aot.plan.buffers import ALIGNMENT
from aot.plan.placement import _ORDERS, Buffer, _arena_floor, _occupied_per_step, _place, _place_best

PERSON = Path(__file__).resolve().parents[1] / "models" / "tflite" / "person_int8.tflite"


def _floor(buffers: list[Buffer]) -> int:
    steps = max((max(f, last) for b in buffers for _, _, f, last in b.segs), default=0) + 1
    occupied, aligned = _occupied_per_step(buffers, steps)
    return _arena_floor(occupied, aligned, [])


def _with_scratch(buffers: list[Buffer], scratch: list[Buffer]) -> int:
    steps = max((max(f, last) for b in buffers + scratch for _, _, f, last in b.segs), default=0) + 1
    occupied, aligned = _occupied_per_step(buffers, steps)
    return _arena_floor(occupied, aligned, scratch)


def _every_placement(buffers: list[Buffer]) -> list[int]:
    """The arenas of each greedy order (first and best fit), the quick search's and the full one's."""
    arenas = [_place(sorted(buffers, key=key), best_fit)[0] for key in _ORDERS for best_fit in (False, True)]
    bound = _floor(buffers)
    return [*arenas, _place_best(buffers, bound, True)[0], _place_best(buffers, bound)[0]]


def test_the_floor_stays_under_an_unaligned_slices_arena():
    """test_planner's Concat of odd sizes: a slice 664 bytes into its buffer, where the lower bound (each buffer's
    live bytes aligned up) is 16 bytes over the arena, 6,336 against 6,320. The floor counts unaligned ranges
    as they are."""
    spec = [(0, 16, 0, 5), (1, 88, 0, 1), (2, 288, 1, 2), (3, 1800, 2, 6), (4, 1752, 3, 4), (6, 1312, 5, 11),
            (7, 1456, 6, 7), (8, 180, 7, 8), (9, 664, 8, 10), (11, 772, 10, 11), (12, 140, 11, 13),
            (13, 904, 12, 13), (14, 1568, 13, 13)]
    buffers = [Buffer(*b) for b in spec]
    buffers.append(Buffer(10, 2416, 4, 12, segments=[(0, 2416, 9, 12), (664, 1752, 4, 8)]))
    assert _place_best(buffers, 6336)[0] == 6320
    assert 6000 < _floor(buffers) <= 6320


def test_the_floor_is_the_arena_where_the_placement_is_perfect():
    """test_planner's repair case (MobileNetV2's residual in miniature): the arena is the bound, 15 x 16 bytes,
    and so is the floor; with a scratch block beside the peak, the floor grows by it."""
    g = repair_graph()
    p = plan_memory(g, host_memory(g))
    assert p.arena_bytes == 15 * 16 == _floor(p.buffers)
    peak = max(range(len(p.steps)), key=lambda s: sum(b.live_bytes(s) for b in p.buffers))
    assert _with_scratch(p.buffers, [Buffer(99, 20, peak, peak)]) == 15 * 16 + 32  # 20 bytes take 32


segments = st.lists(st.tuples(st.integers(0, 96), st.integers(0, 200), st.integers(0, 9), st.integers(0, 4)),
                    min_size=1, max_size=4)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 400), st.integers(0, 9), st.integers(0, 5), st.booleans(), segments),
                min_size=1, max_size=14))
def test_no_placement_is_under_the_floor(spec):
    """Random buffers, some with segments at any delta (aligned or not, overlapping in time): every greedy order,
    the quick search and the full one reach the floor or more."""
    buffers = []
    for k, (n, first, span, with_segs, segs) in enumerate(spec):
        b = Buffer(k, n, first, first + span)
        if with_segs:
            b.segments = [(d, m, f, f + s) for d, m, f, s in segs]
            b.nbytes = max(d + m for d, m, _, _ in b.segments)
            b.first, b.last = min(s[2] for s in b.segments), max(s[3] for s in b.segments)
        buffers.append(b)
    floor = _floor(buffers)
    assert floor % ALIGNMENT == 0
    assert all(floor <= arena for arena in _every_placement(buffers))


def _chain(rng: random.Random) -> tuple:
    """A random chain (each node reads its predecessor and maybe an earlier tensor) with scratch: the even nodes'
    kernels need theirs whatever the budget (their least scratch raises the peak), the odd ones' take what the
    budget gives up to their wish. Its OpMemory and a budget of 50-100 % of its unbudgeted arena."""
    nodes, names, wish = [], ["x"], {}
    spec = [(rng.randint(1, 64), rng.randint(0, 3), rng.randint(0, 40)) for _ in range(rng.randint(2, 20))]
    for k, (n, back, scratch) in enumerate(spec):
        ins = [names[-1]] + ([names[-1 - back]] if back and len(names) > back else [])
        out = "out" if k == len(spec) - 1 else f"t{k}"
        nodes.append(("Opaque", ins, out, n))
        names.append(out)
        wish[f"n{k}"] = (scratch * 16, k % 2 == 0)
    g = graph(nodes)

    def scratch(n, g, budget):  # noqa: ANN001, ANN202
        most, fixed = wish[n.name]
        return most if fixed else min(most, max(budget, 0))

    ops = host_memory(g, scratch=scratch)
    return g, ops, plan_memory(g, ops).arena_bytes * rng.randint(50, 100) // 100


def test_skipping_changes_no_plan_under_a_budget(monkeypatch):
    """60 random chains planned under a budget: the plan (arena, offsets, scratch, bound; or the refusal's least
    arena) is the same as with the floor at 0, which skips nothing, and placements were skipped."""
    placements = [0]
    real = planner._place_best

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        placements[0] += 1
        return real(*args, **kwargs)

    def planned(g, ops, budget) -> tuple:  # noqa: ANN001
        try:
            p = plan_memory(g, ops, ram_budget=budget)
        except planner.BudgetError as e:
            return ("refused", e.least_bytes)
        assert_no_overlap(p)
        return p.arena_bytes, p.offsets, p.scratch, p.lower_bound_bytes

    monkeypatch.setattr(planner, "_place_best", counted)
    rng, floor = random.Random(3), planner._arena_floor
    skipped = 0
    for _ in range(60):
        g, ops, budget = _chain(rng)
        placements[0] = 0
        pruned, fewer = planned(g, ops, budget), placements[0]
        monkeypatch.setattr(planner, "_arena_floor", lambda occupied, aligned, scratch: 0)
        placements[0] = 0
        assert planned(g, ops, budget) == pruned
        skipped += placements[0] - fewer
        monkeypatch.setattr(planner, "_arena_floor", floor)
    assert skipped > 0


@pytest.mark.full
def test_skipping_changes_no_plan_of_a_budgeted_tflite_model(monkeypatch):
    """person_int8 on the M4 at 7,000 B (row bands, overlaps, smaller blocks, the cheapest schedule): the same
    bundle, file for file, with the floor at 0, which skips nothing; and the floor was asked for."""
    def compiled() -> dict:
        b = compile_file(PERSON, Options(name="person", target="mps2-an386", ram_budget=7000))
        return b.files

    skipped = []
    real = planner._arena_floor

    def counted(occupied, aligned, scratch):  # noqa: ANN001, ANN202
        floor = real(occupied, aligned, scratch)
        skipped.append(floor)
        return floor

    monkeypatch.setattr(planner, "_arena_floor", counted)
    pruned = compiled()
    monkeypatch.setattr(planner, "_arena_floor", lambda occupied, aligned, scratch: 0)
    assert compiled() == pruned
    assert skipped
