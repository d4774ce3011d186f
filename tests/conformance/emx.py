"""The backend test cases through emx-onnx-cgen, for run_node_tests.py --emx: the same case folders,
the same inputs, the same comparison with the reference outputs, so its numbers stand beside aotc's.

emx-onnx-cgen is not a test dependency of aotc: `pip install emx-onnx-cgen==1.4.0` into the venv
that runs this (it is never run by the test suite or CI). Each case goes through emx's own ONNX
backend (`emx_onnx_cgen.onnx_backend.run_model`: its compiler, the C built with $CC or the system cc
at -O2, the testbench run on the case's inputs), in a worker process with a time limit. Give it
CC=clang: its 2- and 4-bit types are C23 `_BitInt`, which gcc 12 does not compile.

An outcome is `passed`; `refused: ...` when emx's compiler raises one of its own errors
(CompilerError: an unsupported op, a shape it cannot infer); `FAILED: ...` for a wrong answer; and
`ERROR (...)` for anything else (an exception that is not emx's refusal, C that does not compile, a
testbench that crashes, the time limit).
"""

from __future__ import annotations

import json
import multiprocessing
import signal
import tempfile
from pathlib import Path

import numpy as np

TIMEOUT_S = 300
# each outcome is appended here as it comes (a full run takes hours on 2 cores): a run that stops is
# resumed by the next, which only runs the cases not in it
OUTCOMES = Path(tempfile.gettempdir()) / "aotc-onnx-node-tests" / "emx-1.4.0-outcomes.jsonl"


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


def _spread(dirs: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """The model suites first, then the node cases every 8th first: a run cut short has an even sample."""
    models = [d for d in dirs if d[0] != "node"]
    node = [d for d in dirs if d[0] == "node"]
    return models + [node[k] for start in range(8) for k in range(start, len(node), 8)]


def run_emx(dirs: list[tuple[str, Path]], jobs: int = 2, limit_s: float = 0) -> dict[str, str]:
    """{case: outcome} of the case folders through emx-onnx-cgen, `jobs` cases at once (a fresh worker
    every 50 cases: the C builds leave memory behind). Outcomes already in OUTCOMES are read, not run
    again; `limit_s` > 0 stops starting cases after that many seconds (the cases not run are left out)."""
    import time

    done: dict[str, str] = {}
    if OUTCOMES.is_file():
        for line in OUTCOMES.read_text().splitlines():
            name, outcome = json.loads(line)
            done[name] = outcome
    todo = [d for _, d in _spread(dirs) if d.name not in done]
    start = time.monotonic()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(jobs, maxtasksperchild=50) as pool, OUTCOMES.open("a") as log:
        for name, outcome in pool.imap(one_case, todo, chunksize=1):
            done[name] = outcome
            log.write(json.dumps([name, outcome]) + "\n")
            log.flush()
            if limit_s and time.monotonic() - start > limit_s:
                pool.terminate()
                break
    return {d.name: done[d.name] for _, d in dirs if d.name in done}
