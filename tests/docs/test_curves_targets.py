"""bench/curves.py --target (issue 67, the curves on the M55 board): the board chosen reaches the compiles and the
build, a recorded row carries it and replaces only the same model's row on the same board (rows recorded before,
without a target, are the M4's), and bench/docs_tables.py renders each board's rows in its own block and pictures.
Nothing here builds or runs a model: the curves are fakes."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
from test_firmware_numbers import _bench_module

from aot.curve import Curve, Point


@pytest.fixture(scope="module")
def curves() -> ModuleType:
    return _bench_module("curves")


@pytest.fixture(scope="module")
def docs_tables() -> ModuleType:
    return _bench_module("docs_tables")


def _curve(kind: str, target: str, cycles: list[int]) -> Curve:
    """A curve of len(cycles) points, the bytes falling by 100 a point from 1,000 (the first unbudgeted)."""
    pts = [Point(None if k == 0 else 1000 - 100 * k + 50, 1000 - 100 * k, c, c) for k, c in enumerate(cycles)]
    return Curve(kind, "ad_autoencoder_int8.tflite", target, "est. cycles", pts, least=1000 - 100 * len(cycles))


def _row(target: str | None, cycles: list[int], flash: bool = True) -> dict:
    row = {"model": "ad_autoencoder_int8.tflite", "points": 16, "ram": _curve("ram", target or "mps2-an386",
                                                                               cycles).to_dict(),
           "flash": _curve("flash", target or "mps2-an386", cycles).to_dict() if flash else None}
    if target is not None:
        row["target"] = target
    return row


def test_the_target_reaches_the_compiles_and_the_measurer(curves: ModuleType, monkeypatch, tmp_path: Path):
    """--target mps3-an547: every compile's Options and the Measurer's board are the M55's, the row says so, and
    --no-flash leaves the flash curve out."""
    seen: dict[str, list] = {"options": [], "measurer": []}

    def fake_ram(model, compile_at, measurer, points, say):
        seen["measurer"].append(measurer.target)
        compile_at(None)
        compile_at(500)
        return _curve("ram", measurer.target, [100, 90])

    monkeypatch.setattr(curves, "compile_file", lambda m, o: seen["options"].append(o) or
                        SimpleNamespace(metadata={"memory": {"arena_bytes": 1}}))
    monkeypatch.setattr(curves, "ram_curve", fake_ram)
    monkeypatch.setattr(curves, "flash_curve", lambda *a: pytest.fail("--no-flash measured the flash curve"))
    recorded: list = []
    monkeypatch.setattr(curves.record, "record", lambda script, rows, key: recorded.append((rows, key)) or "x")
    monkeypatch.setattr(sys, "argv", ["curves.py", "--target", "mps3-an547", "--models", "ad_autoencoder",
                                      "--no-flash", "--keep", str(tmp_path), "--record"])
    curves.main()
    assert seen["measurer"] == ["mps3-an547"]
    assert [o.target for o in seen["options"]] == ["mps3-an547"] * 2
    assert [o.ram_budget for o in seen["options"]] == [None, 500]
    kept = sorted(p.name for p in (tmp_path / "mps3-an547" / "ad_autoencoder" / "metadata-ram").iterdir())
    assert kept == ["500.json", "none.json"], "each RAM point's metadata.json kept under --keep"
    (rows, key), = recorded
    assert rows[0]["target"] == "mps3-an547" and rows[0]["flash"] is None
    assert key is curves.row_key


def test_a_row_replaces_only_the_same_model_on_the_same_board(curves: ModuleType):
    """The M55's row of a model leaves the M4's (recorded without a target) in place; a new M4 row replaces it."""
    old_m4, m55, new_m4 = _row(None, [10]), _row("mps3-an547", [5]), _row("mps2-an386", [9])
    assert curves.row_target(old_m4) == "mps2-an386"
    assert curves.row_key(m55) != curves.row_key(old_m4)
    assert curves.row_key(new_m4) == curves.row_key(old_m4)


def test_each_board_has_its_block_and_pictures(docs_tables: ModuleType):
    """The M4's block and pictures hold only the M4's rows (those without a target too), the M55's only the
    M55's, drawn as <model>_m55.svg; a row without its flash curve (--no-flash) renders the RAM table alone."""
    run = {"commit": "a" * 40, "aotc_commit": "a" * 40, "date": "2026-11-29", "command": "python bench/curves.py"}
    data = {"runs": [{**run, "rows": [_row(None, [100, 90, 95])]},
                     {**run, "command": "python bench/curves.py --target mps3-an547",
                      "rows": [_row("mps3-an547", [50, 40], flash=False)]}]}
    m4, m55 = docs_tables.curves(data), docs_tables.curves_m55(data)
    assert "(curves/ad_autoencoder.svg)" in m4 and "_m55.svg" not in m4 and "95 |" in m4
    assert "(curves/ad_autoencoder_m55.svg)" in m55 and "95 |" not in m55 and "40 |" in m55
    assert "--target mps3-an547" in m55 and "mps3-an547" not in m4
    assert "`--flash-budget`" in m4 and "`--flash-budget`" not in m55
    pictures = docs_tables.curve_pictures(data)
    assert sorted(p.name for p in pictures) == ["ad_autoencoder.svg", "ad_autoencoder_m55.svg"]
    assert pictures[docs_tables.CURVES / "ad_autoencoder_m55.svg"].count('class="panel"') == 1
