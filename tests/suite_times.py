"""Writes a tier's entry of tests/suite_times.json, the seconds each test file took in a run of that tier, from
the run's log with --durations=0: tests/conftest.py starts the longest files of the tier it runs first.

    python -m pytest -q --tier fast --durations=0 > LOG && python tests/suite_times.py LOG fast

For the full tier, the log of its own tests (what .ci/run runs after the fast tier: `--skip-passed` of a fast run's
`--record-passed`); it also writes `full_tests`, the seconds of each of those tests that took 2 s or more, by which
conftest.part_of balances the parts CI runs in turn.

    python -m pytest -q --record-passed=P > /dev/null
    python -m pytest -q --tier full --skip-passed=P --durations=0 > LOG
    python tests/suite_times.py LOG full
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent / "suite_times.json"


_DURATION = re.compile(r"^\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+?\.py::.+?)\s*$", re.MULTILINE)
TIMED = 2.0  # seconds: the tests `full_tests` names (of the full tier's own: 367 of 3,564, 90 % of their time)


def _seconds(log: str) -> dict[str, float]:
    """Each test's seconds in the log's durations (setup, call and teardown added)."""
    seconds: dict[str, float] = defaultdict(float)
    for m in _DURATION.finditer(log):
        seconds[m.group(2)] += float(m.group(1))
    return seconds


def file_times(log: str) -> dict[str, float]:
    times: dict[str, float] = defaultdict(float)
    for test, s in _seconds(log).items():
        times[test.split("::", 1)[0]] += s
    return {f: round(t, 1) for f, t in sorted(times.items(), key=lambda kv: -kv[1])}


def test_times(log: str, least: float = TIMED) -> dict[str, float]:
    """Each test's seconds, the tests of `least` seconds or more."""
    return {t: round(s, 1) for t, s in sorted(_seconds(log).items(), key=lambda kv: -kv[1]) if s >= least}


def main(log: Path, tier: str) -> None:
    tiers = json.loads(OUT.read_text()) if OUT.is_file() else {}
    text = log.read_text()
    tiers[tier] = file_times(text)
    if tier == "full":
        tiers["full_tests"] = test_times(text)
    OUT.write_text(json.dumps(dict(sorted(tiers.items())), indent=1) + "\n")
    print(f"{OUT} [{tier}]: {len(tiers[tier])} files, {sum(tiers[tier].values()):.0f} s")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
