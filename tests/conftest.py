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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under AOTC_TEST_SAMPLE=k, deselect the op cases that opcheck.shared_build leaves out."""
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
