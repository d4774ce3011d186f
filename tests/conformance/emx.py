"""The backend test cases through emx-onnx-cgen, for run_node_tests.py --emx: the same case folders,
the same inputs, the same comparison with the reference outputs, so its numbers stand beside aotc's.

emx-onnx-cgen is not a test dependency of aotc: `pip install emx-onnx-cgen==1.4.0` into the venv
that runs this (it is never run by the test suite or CI). Each case goes through emx's own ONNX
backend (`emx_onnx_cgen.onnx_backend.run_model`: its compiler, the C built with the system cc -O2,
the testbench run on the case's inputs), in a worker process with a time limit.

An outcome is `passed`; `refused: ...` when emx's compiler raises one of its own errors
(CompilerError: an unsupported op, a shape it cannot infer); `FAILED: ...` for a wrong answer; and
`ERROR (...)` for anything else (an exception that is not emx's refusal, C that does not compile, a
testbench that crashes, the time limit).
"""

from __future__ import annotations

import multiprocessing
import signal
from pathlib import Path

import numpy as np

TIMEOUT_S = 300


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError(f"no answer in {TIMEOUT_S} s")


def _as_reference(ours: object, ref: object) -> object:
    """emx's backend decodes its testbench's JSON to numpy itself; where the dtype it picks differs from
    the reference's (the harness's plumbing, not its C), the values are compared in the reference's."""
    if isinstance(ref, list) and isinstance(ours, list):
        return [_as_reference(o, r) for o, r in zip(ours, ref, strict=False)] + ours[len(ref):]
    if isinstance(ref, np.ndarray) and isinstance(ours, np.ndarray) and ours.dtype != ref.dtype:
        try:
            return ours.astype(ref.dtype)
        except (TypeError, ValueError):
            return ours
    return ours


def one_case(d: Path) -> tuple[str, str]:
    """(case, outcome) of one case folder through emx-onnx-cgen."""
    from emx_onnx_cgen.errors import CompilerError
    from emx_onnx_cgen.onnx_backend import run_model
    from run_node_tests import check_outputs, load_case

    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        case = load_case(d)
        try:
            ours = run_model(case.model, list(case.feeds.values()))
        except CompilerError as e:
            return d.name, f"refused: {type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e) else ''}"
        except Exception as e:
            text = str(e).strip().replace("\n", " ")
            where = "C does not compile" if text.startswith("C compilation failed") else \
                "run" if text.startswith("Execution failed") else type(e).__name__
            return d.name, f"ERROR ({where}): {text[:200]}"
        try:
            check_outputs([_as_reference(o, r) for o, r in zip(ours, case.expected, strict=False)]
                          + list(ours[len(case.expected):]), case.expected)
        except AssertionError as e:
            return d.name, f"FAILED: {str(e)[:200]}"
        except Exception as e:  # an output it gave back in a form that cannot be compared
            return d.name, f"FAILED: {type(e).__name__}: {str(e)[:200]}"
        return d.name, "passed"
    except TimeoutError as e:
        return d.name, f"ERROR (timeout): {e}"
    finally:
        signal.alarm(0)


def run_emx(dirs: list[tuple[str, Path]], jobs: int = 2) -> dict[str, str]:
    """{case: outcome} of every case folder through emx-onnx-cgen, `jobs` cases at once (a fresh worker
    every 50 cases: the C builds leave memory behind)."""
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(jobs, maxtasksperchild=50) as pool:
        return dict(pool.imap_unordered(one_case, [d for _, d in dirs], chunksize=4))
