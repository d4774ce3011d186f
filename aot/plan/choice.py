"""A --ram-budget's schedule chosen by estimated cycles (issue 67, "monotone budgets").

Several ways of meeting a budget trade different work: smaller kernel blocks, row bands (aot/plan/bands.py), a
depthwise output written over its input (which its kernel then runs more slowly), or all the trades that cost
nothing with the room they save given to the kernels' blocks. Which is cheapest depends on the layers, so the
planner builds each (an option: a schedule, or BudgetError where it cannot meet the budget) and keeps the one
with the least estimate (aot/kernels/tflite_cost.py on the M-profile int8 kernels; the first option on ties,
so where the estimate cannot tell them apart the planner does what it did before).

Why a looser budget then costs no more: every option whose schedule does not depend on the budget beyond the
scratch it is given (the unbudgeted plan; "every free trade", which takes all of them whatever the budget) meets
every looser budget too, with at least the same scratch, so its estimate there is no higher; the minimum over
options cannot rise as the budget does except through the options that trade only while over the budget
(today's greedy), which a looser budget may leave at a different trade. So the greedy's schedules at a few tighter
budgets are options too (tighter_schedules: each meets the looser budget, planned there again with the room it
leaves), which a tighter budget's greedy choice then cannot beat at those budgets. tests/plan/test_choice.py
checks the estimate over a sweep of budgets on the MLPerf Tiny models, and `aotc curve` the measured cycles."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from aot.ir import Graph
from aot.plan.buffers import Plan
from aot.plan.planner import BudgetError

Option = tuple[str, Callable[[], tuple[Graph, Plan]]]

# the tighter budgets, as shares of the budget given, whose greedy schedules are options too (tighter_schedules):
# IC ResNet-8's greedy trades at 37,619 B took smaller blocks where at 36,454 B (0.969x) they took a run in bands
# and estimated 2.6x less; TFLM person_detect's at 27,500 B a run in bands of a row where 25,385 B (0.923x) took
# one of four rows. Two shares: each is a greedy search more (person_detect: about 25 s of CPU a share)
TIGHTER_BUDGETS = (31 / 32, 15 / 16)


def cheapest(options: Sequence[Option], estimate: Callable[[Graph, Plan], float]) -> tuple[Graph, Plan]:
    """The option's schedule with the least estimate (the first one on ties), its Plan.budget recording every
    option's arena and estimate ("schedules") and the chosen one's name ("schedule"). None meets the budget:
    the first option's BudgetError (the refusal as the planner words it)."""
    first: BudgetError | None = None
    tried: list[dict[str, Any]] = []
    best: tuple[float, int, Graph, Plan] | None = None
    for k, (name, build) in enumerate(options):
        try:
            graph, plan = build()
        except BudgetError as e:
            first = first or e
            tried.append({"name": name, "meets_budget": False, "least_arena_bytes": e.least_bytes})
            continue
        cost = float(estimate(graph, plan))
        tried.append({"name": name, "meets_budget": True, "arena_bytes": plan.arena_bytes,
                      "estimated_extra_cycles": round(cost)})
        if best is None or cost < best[0]:
            best = (cost, k, graph, plan)
    if best is None:
        assert first is not None, "no options"
        raise first
    _, k, graph, plan = best
    if plan.budget is not None:
        plan.budget["schedule"] = options[k][0]
        plan.budget["schedules"] = tried
    return graph, plan


def tighter_schedules(build: Callable[[int], tuple[Graph, Plan]], budget: int,
                      again: Callable[[Graph, Plan], Plan | None],
                      estimate: Callable[[Graph, Plan], float]) -> tuple[Graph, Plan]:
    """Of the schedules `build` (a budget's greedy search) makes at the TIGHTER_BUDGETS shares of `budget`, each
    also planned at `budget` itself (`again`: the same graph, its fused runs included, given the room the looser
    budget leaves; None where that plan does not meet it), the one with the least estimate, its report saying
    `budget` and the budget it was searched at ("searched_at_bytes"). Every one meets `budget`: a looser budget
    then never keeps a greedy schedule estimated above these. None at any share: the first share's BudgetError
    (a tighter budget refused: the looser ones are too)."""
    best: tuple[float, Graph, Plan, int] | None = None
    for share in TIGHTER_BUDGETS:
        at = int(budget * share)
        try:
            graph, plan = build(at)
        except BudgetError:
            if best is None:
                raise
            break
        for p in (plan, again(graph, plan)):
            if p is None or p.arena_bytes > budget:
                continue
            cost = estimate(graph, p)
            if best is None or cost < best[0]:
                best = (cost, graph, p, at)
    assert best is not None
    _, graph, plan, at = best
    if plan.budget is not None:
        plan.budget["ram_budget_bytes"] = budget
        plan.budget["searched_at_bytes"] = at
    return graph, plan
