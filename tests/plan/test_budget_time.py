"""The --ram-budget search's remembered answers (issue 67, compile time): each gives what working it out again gives."""

from __future__ import annotations

from pathlib import Path

import pytest

import aot.compiler as compiler
import aot.kernels.tflite_bands as tb
import aot.kernels.tflite_cost as tc
from aot.compiler import Options, compile_file
from aot.errors import AotcError
from aot.ir import Graph, Node

PERSON = Path(__file__).resolve().parents[1] / "models" / "tflite" / "person_int8.tflite"
BUDGET = 7000  # person_int8 on the M4: met only by a run of its first layers in row bands


def _person_asks(monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple], list[tuple]]:
    """The run fits (tflite_bands._fit, with the run's memo) and band estimates (tflite_cost._band_calls, summed)
    that compiling person_int8 at BUDGET on the M4 asks for."""
    fits: list[tuple] = []
    calls: list[tuple] = []
    real_fit, real_calls = tb._fit, tc._band_calls

    def fit(node, graph, budget, least, choose, memo=None):  # noqa: ANN001, ANN202
        fits.append((node, graph, budget, least, choose, memo))
        return real_fit(node, graph, budget, least, choose, memo)

    def band_calls(layers, geometry, own, graph, d, out, helium, summed):  # noqa: ANN001, ANN202
        calls.append((layers, geometry, own, graph, d, dict(out), helium))
        return real_calls(layers, geometry, own, graph, d, out, helium, summed)

    monkeypatch.setattr(tb, "_fit", fit)
    monkeypatch.setattr(tc, "_band_calls", band_calls)
    compile_file(PERSON, Options(name="person", target="mps2-an386", ram_budget=BUDGET))
    monkeypatch.undo()
    return fits, calls


def test_a_runs_remembered_fits_are_its_fits_worked_out_afresh(monkeypatch):
    """Every run fit the search made with the run's memo (_RunMemo: its layers' kernels and layouts from the fits
    at other budgets) is the fit made with none, and so is every band estimate summed by call shape (its terms'
    keys in the same order, the same values)."""
    fits, calls = _person_asks(monkeypatch)
    assert fits and calls and any(f[5] is not None and f[5].kernels and f[5].layouts for f in fits)
    for node, graph, budget, least, choose, memo in fits:
        assert repr(tb._fit(node, graph, budget, least, choose, memo)) == \
            repr(tb._fit(node, graph, budget, least, choose)), (node.name, budget)
    summed = 0
    for layers, geometry, own, graph, d, start, helium in calls:
        fast, slow = dict(start), dict(start)
        summed += tc._band_calls(layers, geometry, own, graph, d, fast, helium, True)
        tc._band_calls(layers, geometry, own, graph, d, slow, helium, False)
        assert list(fast.items()) == list(slow.items())
    assert summed == len(calls)  # every term exact: summed each time


def _graph() -> Graph:
    return Graph("g", [Node("Relu", "a", ["x"], ["y"])], {}, ["x"], ["y"])


def test_select_and_plan_once_answers_a_second_ask_as_the_first_left_it(monkeypatch):
    """_select_and_plan_once: the same graph and arguments asked again get the first answer, the graph's nodes and
    tensors as that call left them (its runs fused), once only; other arguments, and a refusal, as select_and_plan
    gives them."""
    asked: list[tuple] = []

    def fake(graph, target, artifacts, scratch_floor=0):  # noqa: ANN001, ANN202
        asked.append((target, scratch_floor))
        if scratch_floor < 0:
            raise AotcError("refused")
        graph.nodes[:] = [Node("Relu", f"fused{len(asked)}", ["x"], ["y"])]
        graph.tensors[f"t{len(asked)}"] = len(asked)
        return ("selection", len(asked)), ("plan", len(asked))

    monkeypatch.setattr(compiler, "select_and_plan", fake)
    monkeypatch.setattr(compiler, "_SELECT_AND_PLAN", compiler.inspect.signature(fake))
    planned: dict = {}
    art: dict = {}  # the artifacts: by identity
    g = _graph()
    given = list(g.nodes)
    first = compiler._select_and_plan_once(planned, g, "host", art)
    fused = list(g.nodes)
    g.nodes[:] = given
    g.tensors.clear()
    assert compiler._select_and_plan_once(planned, g, "host", art, scratch_floor=0) == first and len(asked) == 1
    assert g.nodes == fused and g.tensors == {"t1": 1}
    g.nodes[:] = given
    assert compiler._select_and_plan_once(planned, g, "host", art)[1] == ("plan", 2)  # used once
    g.nodes[:] = given
    assert compiler._select_and_plan_once(planned, g, "host", art, 8)[1] == ("plan", 3)
    for _ in range(2):
        g.nodes[:] = given
        with pytest.raises(AotcError, match="refused"):
            compiler._select_and_plan_once(planned, g, "host", art, -1)
    assert len(asked) == 4
