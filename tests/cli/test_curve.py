"""`aotc curve` (issue 67, aot/curve.py): the budgets stepped down from what each compile reached to the least the
compiler accepts, the Pareto front and the dominated points (a looser budget slower than a tighter one) kept and
named, the SVG well-formed; on fakes in the fast tier, and one real run on the MLPerf Tiny autoencoder under qemu in
the full tier."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import require_tool

from aot.cli import main
from aot.curve import Curve, Point, _sync, descend, format_table, levels, mark_dominated, next_budget, ram_curve, svg
from aot.plan import BudgetError

ROOT = Path(__file__).resolve().parents[2]
AUTOENCODER = ROOT / "bench" / "models" / "keras" / "ad_autoencoder_int8.tflite"
SVG = "{http://www.w3.org/2000/svg}"


def _plans(arenas: list[int]):
    """A fake planner: the plans it has (arenas, largest first); a budget gets the largest that fits, or None."""
    def compile_at(budget: int) -> int | None:
        return next((a for a in arenas if a <= budget), None)
    return compile_at


def test_levels_spread_evenly_from_the_top_down_to_the_least():
    assert levels(1000, 100, 4) == [700, 400, 100]
    assert levels(1000, 100, 2) == [100]
    assert levels(1000, 100, None) is None
    assert levels(100, 100, 5) is None  # nothing below the top to try


def test_next_budget_is_below_what_was_reached_and_stops_at_the_least():
    assert next_budget(500, None, 100) == 499
    assert next_budget(500, [700, 400, 100], 100) == 400
    assert next_budget(400, [700, 400, 100], 100) == 100
    assert next_budget(100, [700, 400, 100], 100) is None
    assert next_budget(1, None, None) is None


def test_every_plan_when_asked_for_all_points():
    """Without a grid each budget is just below the last arena reached: every plan once, ending at the least,
    and no budget below it tried (the refusal of a 1-byte budget already named the least)."""
    arenas = [950, 900, 610, 600, 300, 120]
    calls: list[int] = []
    fake = _plans(arenas)
    reached, refused = descend(lambda b: calls.append(b) or fake(b), 1000, 120, None)
    assert [a for _, a in reached] == arenas
    assert [b for b, _ in reached] == [999, 949, 899, 609, 599, 299]
    assert calls == [b for b, _ in reached] and refused == []


def test_a_grid_of_points_never_lands_twice_on_one_plan():
    """With N points the budgets are the grid's levels below each arena reached: a plan that jumps over several
    levels is not compiled again, and the least is the last budget."""
    reached, _ = descend(_plans([950, 420, 410, 100]), 1000, 100, 4)
    assert reached == [(700, 420), (400, 100)]
    reached, _ = descend(_plans([980, 650, 390, 100]), 1000, 100, 4)
    assert reached == [(700, 650), (400, 390), (100, 100)]


def test_a_refusal_above_the_least_is_recorded_and_the_descent_goes_on():
    fake = _plans([900, 500, 100])
    reached, refused = descend(lambda b: None if b == 400 else fake(b), 1000, 100, 4)
    assert refused == [400] and reached == [(700, 500), (100, 100)]


def test_without_a_grid_a_refusal_above_the_least_goes_straight_to_the_least():
    fake = _plans([900, 500, 100])
    calls: list[int] = []
    reached, refused = descend(lambda b: calls.append(b) or (None if 200 <= b < 500 else fake(b)), 1000, 100, None)
    assert reached == [(999, 900), (899, 500), (100, 100)] and refused == [499] and calls == [999, 899, 499, 100]


def test_without_a_known_least_the_first_refusal_ends_it():
    """The flash curve: each budget just below the flash reached, until the compiler refuses."""
    reached, refused = descend(_plans([900, 880, 300]), 1000, None, None)
    assert reached == [(999, 900), (899, 880), (879, 300)] and refused == [299]


def test_a_compile_over_its_budget_is_an_error():
    with pytest.raises(Exception, match="over it"):
        descend(lambda b: b + 1, 1000, 100, None)


def _curve() -> Curve:
    """A curve with the issue's case: the looser budget (40,000 B) slower than a tighter one (30,200 B)."""
    pts = [Point(None, 56_000, 1000, 900), Point(40_000, 39_000, 1099, 990, "overlap"),
           Point(30_200, 30_176, 1010, 910, "overlap, tiles"), Point(28_512, 28_512, 1127, 1000, "bands")]
    c = Curve("ram", "vww.tflite", "mps2-an386", "est. cycles", pts, least=28_512)
    mark_dominated(c.points)
    return c


def test_a_looser_budget_slower_than_a_tighter_one_is_dominated_and_named():
    c = _curve()
    assert [p.budget for p in c.dominated()] == [40_000]
    assert c.dominated()[0].dominated_by == 30_200
    assert [p.budget for p in c.front()] == [28_512, 30_200, None]
    text = format_table(c)
    assert "dominated: --ram-budget 40,000 (arena 39,000 B) runs 1,099 est. cycles (1.099x), --ram-budget 30,200 " \
           "(30,176 B) 1,010 (1.010x): 8.81 % more for 8,824 B more" in text
    assert text.count("dominated") == 2  # its row's mark and the sentence


def test_a_margin_under_the_noise_is_called_a_tie():
    pts = [Point(None, 100, 100_000, 1), Point(90, 90, 100_050, 1), Point(80, 80, 100_040, 1)]
    c = Curve("ram", "m", "mps2-an386", "est. cycles", pts)
    mark_dominated(c.points)
    assert format_table(c).rstrip().endswith("0.01 % more for 10 B more (a tie)")


def test_equal_points_do_not_dominate_each_other_and_the_unbudgeted_can_be_dominated():
    pts = [Point(None, 100, 50, 50), Point(99, 90, 50, 50), Point(80, 80, 60, 60), Point(70, 80, 60, 60)]
    mark_dominated(pts)
    assert [p.dominated_by for p in pts] == [99, None, None, None]


def test_the_svg_is_well_formed_with_a_panel_per_curve_and_the_dominated_marked():
    ram = _curve()
    flash = Curve("flash", "vww.tflite", "mps2-an386", "est. cycles",
                  [Point(None, 120_000, 1000, 900), Point(119_999, 110_000, 1004, 903, "level O2"),
                   Point(109_999, 60_000, 11_000, 9_000, "level portable")])
    mark_dominated(flash.points)
    root = ET.fromstring(svg([ram, flash]))
    assert root.tag == f"{SVG}svg" and float(root.get("width")) > float(root.get("height"))
    panels = root.findall(f"{SVG}g[@class='panel']")
    assert [p.get("id") for p in panels] == ["ram", "flash"]
    ram_panel = panels[0]
    assert len(ram_panel.findall(f"{SVG}circle[@class='point']")) == 3
    crossed = ram_panel.findall(f"{SVG}g[@class='dominated']")
    assert len(crossed) == 1 and "--ram-budget 40,000" in crossed[0].find(f"{SVG}title").text
    tips = [t.text for t in ram_panel.iter(f"{SVG}title")]
    assert any("--ram-budget none: arena 56,000 B" in t for t in tips)
    assert not panels[1].findall(f"{SVG}g[@class='dominated']")
    # the staircase through the front's points, which all lie inside the plot
    front = ram_panel.find(f"{SVG}polyline[@class='front']").get("points").split()
    assert len(front) == 1 + 2 * 2
    frame = ram_panel.find(f"{SVG}rect")
    x0, y0 = float(frame.get("x")), float(frame.get("y"))
    x1, y1 = x0 + float(frame.get("width")), y0 + float(frame.get("height"))
    for c in ram_panel.iter(f"{SVG}circle"):
        if c.get("class") == "point":
            assert x0 <= float(c.get("cx")) <= x1 and y0 <= float(c.get("cy")) <= y1


def test_names_in_the_svg_are_escaped():
    c = _curve()
    c.model = "a<b>&c.tflite"
    assert ET.fromstring(svg([c])) is not None


def test_a_curve_survives_its_json():
    c = _curve()
    back = Curve.from_dict(json.loads(json.dumps(c.to_dict())))
    assert back.to_dict() == c.to_dict() and [p.budget for p in back.dominated()] == [40_000]


class _FakeMeasurer:
    """Cycles from the arena: a plan per arena, as a fake build and qemu run."""
    target = "mps2-an386"

    def __init__(self, cycles: dict[int, int]):
        self.cycles = cycles
        self.built: list[int] = []

    def measure(self, kind: str, bundle: SimpleNamespace, say: object = None,
                label: str = "") -> tuple[int, int, bool | None]:
        arena = bundle.metadata["memory"]["arena_bytes"]
        self.built.append(arena)
        return self.cycles[arena], self.cycles[arena], True


def test_the_ram_curve_finds_the_least_from_the_refusal_and_measures_each_budget_once():
    cycles = {8000: 100, 7000: 104, 5000: 101, 3000: 150}

    def compile_at(budget: int | None) -> SimpleNamespace:
        if budget is not None and budget < 3000:
            raise BudgetError("refused", 3000)
        arena = max(a for a in cycles if budget is None or a <= budget)
        traded = {} if budget is None else {"traded": {"overlap": {}}}
        return SimpleNamespace(metadata={"memory": {"arena_bytes": arena, **({"ram_budget": traded} if traded
                                                                             else {})}})

    m = _FakeMeasurer(cycles)
    c = ram_curve("m.tflite", compile_at, m, 4, lambda what: nullcontext())  # type: ignore[arg-type]
    assert c.least == 3000
    # 4,666 already reaches the least: nothing is tried below it
    assert [(p.budget, p.nbytes) for p in c.points] == [(None, 8000), (6333, 5000), (4666, 3000)]
    assert m.built == [8000, 5000, 3000]
    c = ram_curve("m.tflite", compile_at, _FakeMeasurer(cycles), None, lambda what: nullcontext())  # type: ignore
    assert [p.budget for p in c.points] == [None, 7999, 6999, 4999]
    assert [p.budget for p in c.dominated()] == [7999] and c.dominated()[0].dominated_by == 6999
    assert c.points[1].traded == "overlap"


def test_sync_rewrites_only_what_changed(tmp_path: Path):
    """The reused build tree: unchanged files keep their time (no rebuild of the kernels), a file the bundle no
    longer has goes."""
    b = SimpleNamespace(files={"src/a.c": "int a;\n", "src/b.c": "int b;\n", "w.bin": bytearray(b"\1\2")})
    _sync(b, tmp_path)
    a = tmp_path / "bundle" / "src" / "a.c"
    os.utime(a, (1, 1))
    _sync(SimpleNamespace(files={"src/a.c": "int a;\n", "src/c.c": "int c;\n", "w.bin": b"\1\3"}), tmp_path)
    assert a.stat().st_mtime == 1
    assert not (tmp_path / "bundle" / "src" / "b.c").exists()
    assert (tmp_path / "bundle" / "w.bin").read_bytes() == b"\1\3"


def test_a_host_target_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["curve", str(AUTOENCODER), "--target", "host", "-o", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bare-metal board" in err
    assert not (tmp_path / "c").exists()


def test_a_folder_of_other_files_is_refused_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["curve", str(AUTOENCODER), "--target", "mps2-an386", "-o", str(tmp_path)]) == 2
    assert "did not write" in capsys.readouterr().err and (tmp_path / "notes.txt").read_text() == "mine"


def test_fewer_than_two_points_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as e:
        main(["curve", str(AUTOENCODER), "--target", "mps2-an386", "-o", str(tmp_path / "c"), "--points", "1"])
    assert e.value.code == 2 and "2 or more" in capsys.readouterr().err


@pytest.mark.full
def test_the_autoencoder_curves_on_the_m4(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """The real path: compiles at budgets stepped down to the least (the planner's refusal names it), each built
    and counted under qemu; every point's outputs the unbudgeted build's; the flash levels down to the refusal."""
    require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    out = tmp_path / "curve"
    assert main(["curve", str(AUTOENCODER), "--target", "mps2-an386", "-o", str(out), "--points", "4"]) == 0
    text = capsys.readouterr().out
    ram, flash = (Curve.from_dict(d) for d in json.loads((out / "curve.json").read_text()))
    assert ram.kind == "ram" and ram.metric == "est. cycles" and ram.least is not None
    assert ram.points[0].budget is None and 2 <= len(ram.points) <= 4
    budgets = [p.budget for p in ram.points[1:]]
    assert budgets == sorted(budgets, reverse=True) and ram.points[-1].nbytes == ram.least
    for before, p in zip(ram.points, ram.points[1:], strict=False):
        assert p.nbytes <= p.budget < before.nbytes  # each budget below the arena the last compile reached
    assert all(p.cycles > p.instructions // 2 > 0 and p.same_outputs for p in ram.points[1:])
    assert flash.points[0].traded == "" and flash.points[1].traded.startswith("level ")  # (aot/flash.py LEVELS)
    assert flash.least == flash.points[-1].nbytes
    assert all(a.nbytes > b.nbytes for a, b in zip(flash.points, flash.points[1:], strict=False))
    assert all(p.same_outputs for p in flash.points)
    assert flash.points[-1].cycles > 2 * flash.points[0].cycles  # the portable kernels
    assert "RAM versus est. cycles" in text and f"least --ram-budget accepted is {ram.least:,} B" in text
    root = ET.fromstring((out / "curve.svg").read_text())
    assert len(root.findall(f"{SVG}g[@class='panel']")) == 2
    assert not (out / "builds").exists()
