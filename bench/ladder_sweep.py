"""Issue 67 / CI time: the budgeted planner's top ladder (aot/plan/planner.py TOP_LADDER) against another, case by
case: the chosen schedule's estimate, the arena and the compile's CPU seconds, one JSON line a case. Run one process
per ladder, side by side, and compare the lines (the stop note of 2026-11-30: 1.02 against 1.005 on the 30 budgeted
cases of bench/same_bundles.py but MobileNetV2, 29 the same estimate, 0.69x the CPU).

    python bench/ladder_sweep.py 1.02 > /tmp/ladder_102.jsonl
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from same_bundles import CASES, MOBILENET_V2, PLANTIME, ROOT  # noqa: E402

import aot.plan.planner as planner  # noqa: E402
from aot.compiler import Options, compile_file  # noqa: E402
from aot.errors import AotcError  # noqa: E402


def main() -> None:
    planner.TOP_LADDER = float(sys.argv[1])
    seen: set[str] = set()
    for name, model, target, budget in [*CASES, *PLANTIME]:
        if name in seen or model == MOBILENET_V2 or budget is None:
            continue
        seen.add(name)
        t0 = time.process_time()
        try:
            b = compile_file(ROOT / model, Options(name="m", target=target, ram_budget=budget))
            r = b.metadata["memory"]["ram_budget"]
            est = next((s.get("estimated_extra_cycles") for s in r.get("schedules", [])
                        if s["name"] == r.get("schedule")), None)
            arena = b.metadata["memory"]["arena_bytes"]
            row = {"case": name, "schedule": r.get("schedule"), "est": est, "arena": arena}
        except AotcError as e:
            row = {"case": name, "refused": str(e)[:80]}
        print(json.dumps({**row, "cpu": round(time.process_time() - t0, 1)}), flush=True)


if __name__ == "__main__":
    main()
