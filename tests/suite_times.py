"""Writes a tier's entry of tests/suite_times.json, the seconds each test file took in a run of that tier, from
the run's log with --durations=0: tests/conftest.py starts the longest files of the tier it runs first.

    python -m pytest -q --tier fast --durations=0 > LOG && python tests/suite_times.py LOG fast
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent / "suite_times.json"


def file_times(log: str) -> dict[str, float]:
    times: dict[str, float] = defaultdict(float)
    for m in re.finditer(r"^\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+?\.py)::", log, re.MULTILINE):
        times[m.group(2)] += float(m.group(1))
    return {f: round(t, 1) for f, t in sorted(times.items(), key=lambda kv: -kv[1])}


def main(log: Path, tier: str) -> None:
    tiers = json.loads(OUT.read_text()) if OUT.is_file() else {}
    tiers[tier] = file_times(log.read_text())
    OUT.write_text(json.dumps(dict(sorted(tiers.items())), indent=1) + "\n")
    print(f"{OUT} [{tier}]: {len(tiers[tier])} files, {sum(tiers[tier].values()):.0f} s")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
