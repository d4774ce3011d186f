"""Memory pools on the boards (issue 53): a model whose arena exceeds the fast pool, compiled with two pools
on mps2-an386 (RAM, PSRAM) and with two and three on mps3-an547 (DTCM "RAM", SRAM, DDR), built and run under
qemu-system-arm: each pool's array is in the region of its name in the ELF (arm-none-eabi-nm), and the
outputs are bit for bit the one-pool build's on the same board; on the host too."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool, run_checked
from poolmodels import pooled_model

from aot.build import cmake_exe
from aot.targets import get_target

# qemu board runs that one fixture builds together: the whole file in the full tier (tests/README.md)
pytestmark = pytest.mark.full

AOTC = [sys.executable, "-m", "aot.cli"]

# (target, label, --memory-pool values); the label "one" is the build without pools
BUILDS = [
    ("host", "one", ()), ("host", "two", ("fast:64K", "slow:1M")),
    ("mps2-an386", "one", ()), ("mps2-an386", "two", ("RAM:64K", "PSRAM:1M")),
    ("mps3-an547", "one", ()), ("mps3-an547", "two", ("RAM:48K", "DDR:1M")),
    ("mps3-an547", "three", ("RAM:24K", "SRAM:40K", "DDR:1M")),
]


def build_and_run(root: Path, target: str, label: str, pools: tuple[str, ...]) -> tuple[Path, dict, np.ndarray]:
    out = root / f"{target}-{label}"
    run_checked([*AOTC, str(root / "pooled.onnx"), "-o", str(out), "--no-configure", "--target", target,
         *(a for p in pools for a in ("--memory-pool", p))])
    run_checked([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON"])
    run_checked([cmake_exe(), "--build", str(out)])
    res = root / f"{target}-{label}.npz"
    run_checked([*AOTC, "run", str(out), "--inputs", str(root / "in.npz"), "--outputs", str(res)])
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    return out, meta, np.load(res)[meta["outputs"][0]["name"]]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    require_tool("arm-none-eabi-gcc", "qemu-system-arm", "arm-none-eabi-nm")
    root = tmp_path_factory.mktemp("pools")
    model = pooled_model()
    onnx.save(model, root / "pooled.onnx")
    np.savez(root / "in.npz", **zoo.random_inputs(model))
    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2))) as pool:
        futures = {(t, label): pool.submit(build_and_run, root, t, label, p) for t, label, p in BUILDS}
        return {k: f.result() for k, f in futures.items()}


def symbols(elf: Path) -> dict[str, int]:
    lines = run_checked(["arm-none-eabi-nm", str(elf)]).stdout.splitlines()
    return {parts[2]: int(parts[0], 16) for parts in (line.split() for line in lines) if len(parts) == 3}


def region_of(target: str, address: int) -> str:
    return next(r.name for r in get_target(target).regions if r.origin <= address < r.origin + r.size)


@pytest.mark.parametrize("target,label", [(t, label) for t, label, p in BUILDS if p])
def test_pooled_build_is_bit_exact_with_one_pool(built, target, label):
    _, meta, got = built[(target, label)]
    _, one_meta, want = built[(target, "one")]
    assert np.array_equal(got, want)
    pools = meta["memory"]["pools"]
    assert len(pools) == len(label == "two" and "ab" or "abc")
    assert all(p["bytes"] > 0 for p in pools)
    assert pools[0]["bytes"] < one_meta["memory"]["arena_bytes"]  # the arena exceeds the first pool
    assert "pools" not in one_meta["memory"]


@pytest.mark.parametrize("target,label", [(t, label) for t, label, p in BUILDS if p and t != "host"])
def test_each_pool_is_in_the_region_of_its_name(built, target, label):
    out, meta, _ = built[(target, label)]
    syms = symbols(out / "runner.elf")
    pools = meta["memory"]["pools"]
    assert region_of(target, syms["arena"]) == pools[0]["name"]  # the runner's arena: the first pool
    regions = {pools[0]["name"]}
    for p in pools[1:]:
        at = syms[f"pooled_pool_{p['name']}"]
        assert region_of(target, at) == p["name"]
        regions.add(region_of(target, at))
        sections = run_checked(["arm-none-eabi-objdump", "-h", str(out / "runner.elf")]).stdout
        assert f".aotc_pool_{p['name']}" in sections
    assert len(regions) == len(pools)  # distinct memories
    run_checked([*AOTC, "footprint", str(out)])  # the footprint report: bytes per pool, and the regions they fill
    report = json.loads((out / "footprint.json").read_text())
    assert report["model"]["pools"] == {p["name"]: {"bytes": p["bytes"], "section": p["section"]} for p in pools}
    for p in pools[1:]:
        assert report["image"]["regions"][p["name"]]["used_bytes"] >= p["bytes"]
