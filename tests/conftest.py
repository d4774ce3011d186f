"""Shared test helpers: the example zoo on sys.path, and tool requirements that never skip in CI."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "examples"))


def require_tool(*names: str) -> None:
    """Skip when a tool is missing on a developer machine; fail when CI=true (CI installs it)."""
    missing = [n for n in names if shutil.which(n) is None]
    if not missing:
        return
    message = f"required tool(s) not installed: {', '.join(missing)}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI must install them: see .ci/run)")
    pytest.skip(message)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite tests/goldens/ from the current compiler (tests/test_goldens.py)")
    parser.addoption("--update-symbols", action="store_true",
                     help="rewrite runtime_c/kernels/symbols.json from the kernel objects (test_runtime_symbols.py)")


# The modules that take longest (pytest --durations, summed by file), run first: pytest-xdist hands
# whole files to the workers in collection order (--dist loadfile), so a long file collected last
# kept one core busy alone at the end of the run.
LONGEST_FIRST = ("test_sanitized_ops", "test_ops_index", "test_kernels_c", "test_tflite", "test_bundle_quality",
                 "test_detection", "test_vendor_dnnl", "test_torchvision_detection", "test_recurrent_models",
                 "test_vendor_accel_sim_int8", "test_install", "test_models", "test_fuzz_inputs")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest modules first (LONGEST_FIRST); under AOTC_TEST_SAMPLE=k, deselect the op cases
    that opcheck.shared_build leaves out."""
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).stem, len(rank)))  # stable: file order kept
    if int(os.environ.get("AOTC_TEST_SAMPLE", "1")) <= 1:
        return
    from opcheck import sampled

    keep, drop = [], []
    for item in items:
        case_id = getattr(item, "callspec", None) and item.callspec.params.get("case_id")
        (drop if isinstance(case_id, str) and not sampled(case_id) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
