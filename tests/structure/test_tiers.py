"""The suite's tiers (tests/README.md): the default run is the fast tier, and no test file leaves it
entirely, so a change that breaks any file's subject fails the quick check, not only CI's full run."""

from __future__ import annotations

import pytest
from conftest import WITHOUT_FAST, item_tier

# Files whose every test runs on a Cortex-M board under qemu from builds one module fixture makes together (a
# fast test of theirs would cost the whole file, on a machine with the tools): the targets family keeps its
# fast tests in tests/targets/test_targets.py and test_m4_cycles.py, and kernels_c/test_kernels_c_boards.py
# its board run.
BOARD_FILES = {"tests/targets/test_pools_boards.py", "tests/targets/test_tflite_cortex_m.py",
               "tests/targets/test_quant_cortex_m.py", "tests/targets/test_tflm_signal_cortex_m.py"}


def test_every_test_file_keeps_a_test_in_the_fast_tier(request: pytest.FixtureRequest):
    """Of the files this run collected (the whole of tests/ when run as the README says), each but the board
    files has at least one test that no `full` or `slow` mark keeps out of the fast tier."""
    without = sorted(set(request.config.stash.get(WITHOUT_FAST, [])) - BOARD_FILES)
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
