"""Recorded benchmark results (bench/results/): what docs/firmware.md's tables are rendered from.

A bench script given `--record` writes its rows to bench/results/<script>.json with where they were measured:
the aotc commit (and whether aot/ or runtime_c/ differed from it), the date, the command and the machine. A file
holds runs: a new run's rows replace the rows of earlier runs with the same key (a model, a model and level, ...),
so a subset can be measured again without losing the rest, and each row keeps the run it came from.
"""

from __future__ import annotations

import datetime
import json
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# what the numbers depend on: a change here after the commit makes the run not that commit's
MEASURED_PATHS = ("aot", "runtime_c", "pyproject.toml")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def _version(cmd: Sequence[str]) -> str:
    """The tool's first line of --version, or "missing"."""
    try:
        r = subprocess.run([*cmd, "--version"], capture_output=True, text=True)
    except OSError:
        return "missing"
    return (r.stdout or r.stderr).splitlines()[0].strip() if (r.stdout or r.stderr) else "missing"


def _script() -> str:
    """The script run, relative to the checkout when it is in it."""
    p = Path(sys.argv[0]).resolve()
    return p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else sys.argv[0]


def provenance() -> dict[str, Any]:
    """Where and when a run measured: the commit, local changes to what is measured, the date, the machine."""
    dirty = _git("status", "--porcelain", "--", *MEASURED_PATHS).splitlines()
    return {"commit": _git("rev-parse", "HEAD"),
            # the last commit that changed what is measured: the same kernels and compiler as at `commit`
            "aotc_commit": _git("log", "-1", "--format=%H", "HEAD", "--", *MEASURED_PATHS),
            "commit_date": _git("show", "-s", "--format=%cs", "HEAD"),
            "uncommitted_changes": [line[3:] for line in dirty],
            "date": datetime.date.today().isoformat(),
            "command": "python " + shlex.join([_script(), *sys.argv[1:]]),
            "machine": {"system": f"{platform.system()} {platform.machine()}", "python": platform.python_version(),
                        "qemu": _version(["qemu-system-arm"]), "cc": _version(["arm-none-eabi-gcc"])}}


# taken when the script imports this module, as it starts: the commit measured, not the one at the end of a long run
STARTED = provenance()


def path_for(script: str) -> Path:
    return RESULTS / f"{Path(script).stem}.json"


def load(script: str) -> dict[str, Any]:
    """A script's recorded runs ({"script", "runs": [{provenance..., "rows": [...]}]}); none yet: no runs."""
    p = path_for(script)
    return json.loads(p.read_text()) if p.is_file() else {"script": f"bench/{Path(script).name}", "runs": []}


def record(script: str, rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any],
           notes: str = "") -> Path:
    """Add this run's rows to the script's results file; earlier runs lose their rows of the same keys (and
    a run left without rows goes). Returns the file written."""
    data = load(script)
    mine = {key(r) for r in rows}
    kept = []
    for run in data["runs"]:
        run["rows"] = [r for r in run["rows"] if key(r) not in mine]
        if run["rows"]:
            kept.append(run)
    kept.append({**STARTED, **({"notes": notes} if notes else {}), "rows": rows})
    data["runs"] = kept
    RESULTS.mkdir(parents=True, exist_ok=True)
    p = path_for(script)
    p.write_text(json.dumps(data, indent=1, default=_plain) + "\n")
    return p


def _plain(v: Any) -> Any:
    """numpy scalars and the like as plain numbers."""
    if hasattr(v, "item"):
        return v.item()
    raise TypeError(f"not JSON: {type(v).__name__}")
