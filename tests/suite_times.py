"""Writes tests/suite_times.json, the seconds each test file took, from the log of a full default run with
--durations=0 (`python -m pytest -q --durations=0 > LOG`): tests/conftest.py starts the longest files first.

    python tests/suite_times.py LOG
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path


def file_times(log: str) -> dict[str, float]:
    times: dict[str, float] = defaultdict(float)
    for m in re.finditer(r"^\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+?\.py)::", log, re.MULTILINE):
        times[m.group(2)] += float(m.group(1))
    return {f: round(t, 1) for f, t in sorted(times.items(), key=lambda kv: -kv[1])}


if __name__ == "__main__":
    times = file_times(Path(sys.argv[1]).read_text())
    out = Path(__file__).resolve().parent / "suite_times.json"
    out.write_text(json.dumps(times, indent=0) + "\n")
    print(f"{out}: {len(times)} files, {sum(times.values()):.0f} s")
