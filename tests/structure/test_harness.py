"""The suite's own helpers (tests/conftest.py): what they promise the board tests that lean on them."""

from __future__ import annotations

import errno
import subprocess
import sys

import conftest
import pytest


def _flaky_run(fails: list[int]):
    """subprocess.run that raises OSError with each errno in `fails` in turn, then runs for real."""
    real = subprocess.run

    def run(*args, **kwargs):
        if fails:
            code = fails.pop(0)
            raise OSError(code, "simulated", args[0][0])
        return real(*args, **kwargs)
    return run


def test_a_start_refused_for_want_of_memory_is_tried_once_more(monkeypatch, capsys):
    monkeypatch.setattr(conftest.time, "sleep", lambda s: None)
    monkeypatch.setattr(conftest.subprocess, "run", _flaky_run([errno.EFAULT]))
    r = conftest.run_checked([sys.executable, "-c", "print('ran')"])
    assert r.stdout.strip() == "ran" and "trying once more" in capsys.readouterr().err
    monkeypatch.setattr(conftest.subprocess, "run", _flaky_run([errno.ENOMEM, errno.EFAULT]))
    with pytest.raises(OSError, match="simulated"):  # once more only
        conftest.run_checked([sys.executable, "-c", "pass"])
    monkeypatch.setattr(conftest.subprocess, "run", _flaky_run([errno.ENOENT]))
    with pytest.raises(OSError, match="simulated"):  # a missing program is the command's failure: not retried
        conftest.run_checked([sys.executable, "-c", "pass"])


def test_a_failing_command_fails_with_its_output():
    with pytest.raises(AssertionError, match="boom"):
        conftest.run_checked([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"])


def test_op_cases_left_out_are_built_only_when_a_test_asks(monkeypatch):
    """CI's full tier deselects the op cases that passed in its fast tier (conftest's --skip-passed); their modules'
    shared builds leave them out (aot.testing.shared.leave_out) and build one only when a test asks for it."""
    from aot.testing import shared

    monkeypatch.setattr(shared, "_LEFT_OUT", set())
    monkeypatch.setenv("AOTC_TEST_SAMPLE", "1")
    cases = [shared.op_case(name, "Relu", {"x": (2, 3)}, seed=k) for k, name in enumerate(("relu_kept", "relu_left"))]
    shared.leave_out(["relu_left"])
    built = shared.shared_build(cases)
    assert set(built.libs) == {"relu_kept"}
    built.check("relu_left")
    assert set(built.libs) == {"relu_kept", "relu_left"}
