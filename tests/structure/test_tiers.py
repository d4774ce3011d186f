"""The suite's tiers (tests/README.md): the default run is the fast tier, and no test file leaves it
entirely, so a change that breaks any file's subject fails the quick check, not only CI's full run."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import WITHOUT_FAST, item_tier, part_of, recorded_test_times

# Files whose every test is of a kind the fast tier leaves out (tests/README.md), each in the full tier whole
# (`pytestmark = pytest.mark.full`), their subject's fast tests elsewhere:
FULL_TIER_FILES = {
    # qemu board runs from builds one module fixture makes together (a fast test of theirs would cost the whole
    # file): the targets family's fast tests are tests/targets/test_targets.py and test_m4_cycles.py
    "tests/targets/test_pools_boards.py", "tests/targets/test_tflite_cortex_m.py",
    "tests/targets/test_quant_cortex_m.py", "tests/targets/test_tflm_signal_cortex_m.py",
    # the sanitizers and qemu again over kernels the fast tier builds plain (tests/kernels_c/test_kernels_c.py,
    # the op tests)
    "tests/kernels/test_sanitized_ops.py", "tests/kernels_c/test_overlap_kernels.py",
    # the wheel and sdist, each in a fresh virtual environment
    "tests/cli/test_install.py",
}


def test_every_test_file_keeps_a_test_in_the_fast_tier(request: pytest.FixtureRequest):
    """Of the files this run collected (the whole of tests/ when run as the README says), each but the
    files of FULL_TIER_FILES has at least one test that no `full` or `slow` mark keeps out of the fast tier."""
    without = sorted(set(request.config.stash.get(WITHOUT_FAST, [])) - FULL_TIER_FILES)
    assert not without, f"no test of {', '.join(without)} runs in the fast tier: leave one unmarked"


@pytest.mark.parametrize(("marks", "tier"), [((), "fast"), (("full",), "full"), (("slow",), "all"),
                                             (("full", "slow"), "all"), (("fast", "full"), "full"),
                                             (("full", "fast"), "fast")])
def test_marks_place_a_test_in_its_tier(request: pytest.FixtureRequest, marks: tuple[str, ...], tier: str):
    """`full` puts a test in the full tier and `slow` in the exhaustive one, whichever else it is marked; of
    `fast` and `full`, the mark added last (the closest: a case's over its module's) decides."""
    item = pytest.Function.from_parent(request.node.parent, name=request.node.name, callobj=lambda: None)
    for mark in marks:
        item.add_marker(mark, append=False)  # each as if closer than the one before
    assert item_tier(item) == tier


class _Item:
    def __init__(self, nodeid: str):
        self.nodeid = nodeid


def test_parts_split_each_sweep_and_cover_every_test():
    """--part K/N (.ci/run: half the full tier's own tests a commit): the parts are disjoint and cover every test,
    a function of N cases or more runs in every part, its cases spread evenly, and a test keeps its part however
    many other tests a run collects."""
    items = [_Item(f"tests/a.py::test_sweep[{k}]") for k in range(7)] + [_Item("tests/a.py::test_one")] + \
        [_Item(f"tests/b.py::test_pair[{k}]") for k in range(2)]
    for n in (2, 3):
        parts = part_of(items, n, times={})
        assert sorted(parts) == sorted(i.nodeid for i in items) and set(parts.values()) <= set(range(n))
        sweep = [parts[f"tests/a.py::test_sweep[{k}]"] for k in range(7)]
        assert all(sweep.count(p) in (7 // n, 7 // n + 1) for p in range(n))
        assert len({parts[f"tests/b.py::test_pair[{k}]"] for k in range(2)}) == 2  # a pair: two parts
        alone = part_of([i for i in items if "test_sweep" in i.nodeid], n, times={})
        assert all(alone[k] == parts[k] for k in alone)


def test_timed_tests_balance_the_parts():
    """The tests suite_times.json times take the parts that even out their seconds, whatever a run collects: three
    long tests of one case each fall in three parts (by the hash alone, two of the recorded ones of 50-90 s fell in
    one), a timed sweep runs in every part, and the untimed cases keep the hash's turns."""
    times = {"tests/a.py::test_ladder": 90.0, "tests/b.py::test_budgets": 84.0, "tests/c.py::test_cycles": 74.0,
             **{f"tests/d.py::test_boards[{k}]": 20.0 for k in range(6)}}
    items = [_Item(t) for t in times] + [_Item(f"tests/d.py::test_boards[{k}]") for k in range(6, 9)]
    parts = part_of(items, 3, times)
    assert sorted(parts[t] for t in list(times)[:3]) == [0, 1, 2]
    assert {parts[f"tests/d.py::test_boards[{k}]"] for k in range(6)} == {0, 1, 2}
    load = [sum(s for t, s in times.items() if parts[t] == p) for p in range(3)]
    assert max(load) - min(load) <= 20.0
    untimed = [parts[f"tests/d.py::test_boards[{k}]"] for k in range(6, 9)]
    assert sorted(untimed) == [0, 1, 2]
    assert part_of(items[:2], 3, times) == {t: parts[t] for t in list(times)[:2]}


def test_the_recorded_times_name_tests_that_exist(request):
    """A test suite_times.json times that no longer exists (renamed, moved) would be scheduled by its hash and
    unbalance the parts: every recorded file and function is still there."""
    recorded = recorded_test_times()
    assert recorded, "tests/suite_times.json has no full_tests: python tests/suite_times.py LOG full"
    repo = Path(request.config.rootpath)
    gone = sorted({t.split("::")[0] for t in recorded if not (repo / t.split("::")[0]).is_file()})
    assert not gone, f"tests/suite_times.json times tests of files that are gone: {gone}"
    missing = sorted({t.split("[")[0] for t in recorded
                      if (repo / t.split("::")[0]).is_file() and
                      f"def {t.split('::')[-1].split('[')[0]}(" not in (repo / t.split("::")[0]).read_text()})
    assert not missing, f"tests/suite_times.json times test functions that are gone: {missing[:5]}"
