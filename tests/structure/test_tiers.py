"""The suite's tiers (tests/README.md): the default run is the fast tier, and no test file leaves it
entirely, so a change that breaks any file's subject fails the quick check, not only CI's full run."""

from __future__ import annotations

import pytest
from conftest import WITHOUT_FAST, item_tier

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
