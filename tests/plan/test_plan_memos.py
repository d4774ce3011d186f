"""The memos that make a --ram-budget's search faster (issue 67, plantime) change no answer: each is keyed by
everything its answer reads, and the shortcuts give what the full work gives."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from aot.compiler import Options, compile_file
from aot.kernels import tflite_cost
from aot.plan import planner

AUTOENCODER = Path(__file__).resolve().parents[2] / "bench" / "models" / "keras" / "ad_autoencoder_int8.tflite"


def _conv(mult: list[int], shift: list[int], bias: np.ndarray | None):
    """What tflite_cost._usual reads of a conv: its multipliers and shifts, and its bias by name in the graph."""
    node = SimpleNamespace(inputs=["x", "w", "b" if bias is not None else ""], attrs={"mult": mult, "shift": shift})
    graph = SimpleNamespace(const=lambda name: bias if name == "b" else None)
    return node, graph


def test_the_usual_requantisation_memo_tells_apart_every_field_it_reads():
    """_usual, remembered by _usual_key: pairs of convs that differ in one thing it reads (a multiplier, a shift,
    a bias, the depth k) and so in the answer, asked one after the other, each get their own answer. The planted
    bug: a key that leaves the bias out (the second conv of that pair then took the first one's answer)."""
    tflite_cost._USUAL.clear()
    big = np.array([(1 << 30) - 100, 0], np.int32)  # over tfl_dsp_usual's range with k 9 (9 * 255 * 128 more)
    pairs = [  # (mult, shift, bias, k) of the usual one, then the one changed
        (([1 << 30, 1 << 30], [-3, -3], None, 9), ([-(1 << 31), 1 << 30], [-3, -3], None, 9)),
        (([1 << 30, 1 << 30], [-3, -3], None, 9), ([1 << 30, 1 << 30], [-3, 0], None, 9)),
        (([1 << 30, 1 << 30], [-3, -3], np.array([5, 0], np.int32), 9), ([1 << 30, 1 << 30], [-3, -3], big, 9)),
        (([1 << 30, 1 << 30], [-3, -3], np.array([1 << 28, 0], np.int32), 9),
         ([1 << 30, 1 << 30], [-3, -3], np.array([1 << 28, 0], np.int32), 30000)),
    ]
    for usual, other in pairs:
        answers = []
        for mult, shift, bias, k in (usual, other):
            node, graph = _conv(mult, shift, bias)
            answers.append(tflite_cost._usual(node, graph, k))
            assert answers[-1] == tflite_cost._usual_uncached(mult, shift, bias, k)
        assert answers == [True, False]


def test_remembered_estimates_are_shared_across_plans_and_keep_objects_apart():
    """planner._remembered_cost: one memo for every plan_memory given the same cost (a new cost starts afresh), an
    estimate per node, graph, choice and overlap, each asked once."""
    calls = []

    def cost(n, g, c, overlapped=False):
        calls.append((n, c, overlapped))
        return float(len(calls))

    first = planner._remembered_cost(cost)
    assert planner._remembered_cost(cost) is first
    n, g, a, b = object(), object(), object(), object()
    assert [first(n, g, a), first(n, g, b), first(n, g, a, True), first(n, g, a)] == [1.0, 2.0, 3.0, 1.0]
    other = planner._remembered_cost(lambda n, g, c, overlapped=False: 0.0)
    assert other is not first and other(n, g, a) == 0.0


def test_more_per_step_gives_the_same_plan_with_the_other_nodes_kernels_taken_over(monkeypatch):
    """_more_per_step's attempts change one node's share: prepare then chooses that node's kernel alone and takes
    the others from the plan it tries to better (`like`). The autoencoder at 955 B (where every larger share tried
    is kept) plans the same with every kernel chosen again. The planted bug: `like` carrying the node's old budget
    into the new attempt (the share never grows: other blocks)."""
    used = []
    real = planner._more_per_step

    def spy(best, share, attempt, top, price=None):
        return real(best, share, lambda shares, worth, like: used.append(like) or attempt(shares, worth, like), top,
                    price)

    def without_like(best, share, attempt, top, price=None):
        return real(best, share, lambda shares, worth, like: attempt(shares, worth, None), top, price)

    plans = []
    for more in (spy, without_like):
        monkeypatch.setattr(planner, "_more_per_step", more)
        b = compile_file(AUTOENCODER, Options(name="m", target="mps2-an386", ram_budget=955))
        plans.append((b.metadata["memory"], b.metadata.get("kernels")))
    assert any(like is not None for like in used)
    assert plans[0] == plans[1]
