"""`aotc curve`: the RAM-versus-cycles and flash-versus-cycles points the compiler reaches for a model on a
bare-metal board, each a budget a user can pass (issue 67, "the curve").

A point is one compile at a budget (`--ram-budget B`, `--flash-budget B`, or none), built and run once under
qemu as `aotc bench` counts it (aot/bench.py board_counts: estimated cycles on the M4, mps2-an386; the
instructions on the other boards). The budgets are chosen from what the compiles give back:

- RAM: the unbudgeted arena A and the least arena L (the planner's refusal of a 1-byte budget carries it,
  aot/plan BudgetError.least_bytes) bound the range. The next budget is always below the arena the last
  compile reached, so no two points are the same plan; with `points` it is the largest of `points - 1`
  levels spaced evenly from A down to L that is below it (the last level is L itself), without, just below
  the arena (every plan the planner has). It stops at L, or at a refusal where L is not known.
- flash: the same descent over --flash-budget, starting from the unbudgeted library's flash: each budget
  just below the flash reached, so each compile lands on the next level of aot/flash.py that is smaller,
  until the compiler refuses (the least it reaches).

The points that are dominated (another point needs no more bytes and no more cycles, and less of one) are
kept and named: a looser budget that runs slower than a tighter one is what a user raising a budget to buy
speed must know. The SVG is written here (no plotting library in the package's dependencies).
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from aot.errors import AotcError

OPTION = {"ram": "--ram-budget", "flash": "--flash-budget"}
# builds of one budget differ by this much in est. cycles (two runs of bench/curves.py's 73 points: 0.074 % at
# most, docs/firmware.md): a point dominated by less is called a tie
TIE = 0.001
AXIS = {"ram": "arena", "flash": "library flash"}


@dataclass
class Point:
    """One compile: the budget passed (None: none), the bytes it reached (the arena, or the library's flash),
    one inference's cost (est. cycles, or instructions where the board has no timing model) and what the
    budget traded."""
    budget: int | None
    nbytes: int
    cycles: int
    instructions: int
    traded: str = ""
    same_outputs: bool | None = None  # outputs identical to the unbudgeted build's
    dominated_by: int | None = None  # the budget of a point with no more bytes and no more cycles (0: none)

    @property
    def shown_budget(self) -> str:
        return "none" if self.budget is None else f"{self.budget:,}"


@dataclass
class Curve:
    """The points of one kind (ram or flash) for a model on a board, the least budget accepted and the
    budgets refused on the way."""
    kind: str
    model: str
    target: str
    metric: str  # "est. cycles" or "instructions"
    points: list[Point] = field(default_factory=list)
    least: int | None = None
    refused: list[int] = field(default_factory=list)

    @property
    def base(self) -> Point:
        """The unbudgeted point (the first)."""
        return self.points[0]

    def ratio(self, p: Point) -> float:
        return p.cycles / self.base.cycles if self.base.cycles else float("nan")

    def front(self) -> list[Point]:
        """The points no other point dominates, fewest bytes first."""
        return sorted((p for p in self.points if p.dominated_by is None), key=lambda p: (p.nbytes, p.cycles))

    def dominated(self) -> list[Point]:
        return [p for p in self.points if p.dominated_by is not None]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "target": self.target, "metric": self.metric,
                "least": self.least, "refused": self.refused, "points": [asdict(p) for p in self.points]}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Curve:
        c = Curve(d["kind"], d["model"], d["target"], d["metric"], [Point(**p) for p in d["points"]],
                  d.get("least"), list(d.get("refused", [])))
        mark_dominated(c.points)
        return c


# ---- choosing the budgets ----

def levels(top: int, least: int, points: int | None) -> list[int] | None:
    """The budgets a RAM descent may try below `top` down to `least` (the last is `least`): `points - 1`
    evenly spaced, or None for every byte (the descent then goes just below each arena reached)."""
    if points is None or top <= least:
        return None
    n = max(points - 1, 1)
    out = sorted({least + (top - least) * (n - k) // n for k in range(1, n + 1)} - {top}, reverse=True)
    return out or [least]


def next_budget(reached: int, grid: list[int] | None, least: int | None) -> int | None:
    """The budget after a compile that reached `reached` bytes: the largest level of `grid` below it (just
    below it without a grid); None when nothing below can be met (at or under the least)."""
    if least is not None and reached <= least:
        return None
    if grid is None:
        return reached - 1 if reached > 1 else None
    below = [g for g in grid if g < reached]
    return max(below) if below else None


def descend(compile_at: Callable[[int], int | None], top: int, least: int | None,
            points: int | None) -> tuple[list[tuple[int, int]], list[int]]:
    """The budgets to pass and the bytes each reached, from just below `top` (the unbudgeted figure) down:
    `compile_at(budget)` gives the bytes reached, or None when the compiler refuses the budget. A refusal
    above a known `least` is recorded and the descent goes on below it; otherwise it ends the descent."""
    grid = levels(top, least, points) if least is not None else None
    reached: list[tuple[int, int]] = []
    refused: list[int] = []
    budget = next_budget(top, grid, least)
    while budget is not None:
        got = compile_at(budget)
        if got is None:
            refused.append(budget)
            if least is None or budget <= least:
                break
            # the planner refused a budget it should meet: below, by the grid, or straight to the least (a byte
            # at a time could compile for every byte of a refused band)
            budget = next_budget(budget, grid, least) if grid is not None else least
            continue
        if got > budget:
            raise AotcError(f"the compile at budget {budget:,} B reached {got:,} B, over it")
        reached.append((budget, got))
        budget = next_budget(got, grid, least)
    return reached, refused


def mark_dominated(points: list[Point]) -> None:
    """Set each point's dominated_by: the budget (0 for none) of the point with the fewest cycles among
    those that take no more bytes and no more cycles, and less of one; None for the front."""
    for p in points:
        better = [q for q in points if q is not p and q.nbytes <= p.nbytes and q.cycles <= p.cycles
                  and (q.nbytes < p.nbytes or q.cycles < p.cycles)]
        best = min(better, key=lambda q: (q.cycles, q.nbytes), default=None)
        p.dominated_by = None if best is None else (best.budget or 0)


# ---- text ----

def _by_budget(curve: Curve, budget: int) -> Point:
    return next(p for p in curve.points if (p.budget or 0) == budget)


def format_table(curve: Curve) -> str:
    """The points as a table (tightest budget last), then the dominated ones in words."""
    opt, metric = OPTION[curve.kind], curve.metric
    head = [opt, f"{AXIS[curve.kind]} B", metric, "x unbudgeted", "outputs", "traded", ""]
    rows = []
    for p in curve.points:
        same = "" if p.same_outputs is None else ("same" if p.same_outputs else "DIFFER")
        mark = "" if p.dominated_by is None else "dominated"
        rows.append([p.shown_budget, f"{p.nbytes:,}", f"{p.cycles:,}", f"{curve.ratio(p):.3f}", same, p.traded,
                     mark])
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]
    right = {0, 1, 2, 3}

    def line(r: list[str]) -> str:
        cells = zip(r, widths, strict=True)
        return "  ".join(c.rjust(w) if k in right else c.ljust(w) for k, (c, w) in enumerate(cells)).rstrip()

    out = [f"{'RAM' if curve.kind == 'ram' else 'Flash'} versus {metric}: {curve.model} on {curve.target}, "
           f"{len(curve.points)} points"
           + (f"; the least {opt} accepted is {curve.least:,} B" if curve.least is not None else ""),
           line(head), *(line(r) for r in rows)]
    for p in curve.dominated():
        q = _by_budget(curve, p.dominated_by or 0)
        out.append(f"dominated: {opt} {p.shown_budget} ({AXIS[curve.kind]} {p.nbytes:,} B) runs {p.cycles:,} "
                   f"{metric} ({curve.ratio(p):.3f}x), {opt} {q.shown_budget} ({q.nbytes:,} B) "
                   f"{q.cycles:,} ({curve.ratio(q):.3f}x): {(p.cycles / q.cycles - 1) * 100:.2f} % more for "
                   f"{p.nbytes - q.nbytes:,} B more" + (" (a tie)" if p.cycles < q.cycles * (1 + TIE) else ""))
    if curve.refused:
        out.append(f"refused on the way: {', '.join(f'{b:,}' for b in curve.refused)}")
    return "\n".join(out) + "\n"


# ---- the picture ----

def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About n round values (1, 2 or 5 times a power of ten apart) covering lo..hi."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 5, 10) if s * mag >= raw)
    first = math.floor(lo / step) * step
    return [first + k * step for k in range(int(math.ceil((hi - first) / step)) + 1)]


def _log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2 and 5 times the powers of ten from the one at or below lo to the one at or above hi."""
    ladder = [d * 10.0 ** k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
              for d in (1, 2, 5)]
    first = max(v for v in ladder if v <= lo)
    last = min(v for v in ladder if v >= hi)
    return [v for v in ladder if first <= v <= last]


def _num(v: float) -> str:
    """An axis label: 12,000 or 1.5 M."""
    if abs(v) >= 1e6:
        return f"{v / 1e6:g} M"
    return f"{v:,.0f}"


def _panel(curve: Curve, x0: float, w: float, h: float) -> list[str]:
    """One curve's axes, front and dominated points, at x offset x0."""
    ml, mr, mt, mb = 70.0, 36.0, 52.0, 48.0
    xs = [p.nbytes for p in curve.points]
    ys = [p.cycles for p in curve.points]
    # cycles over a wide range (the portable kernels' 10x and more) on a log scale, so the small steps show
    ylog = min(ys) > 0 and max(ys) / min(ys) > 4
    xt, yt = _ticks(min(xs), max(xs)), (_log_ticks(min(ys), max(ys)) if ylog else _ticks(min(ys), max(ys)))
    xlo, xhi = xt[0], xt[-1]
    ylo, yhi = (math.log10(yt[0]), math.log10(yt[-1])) if ylog else (yt[0], yt[-1])
    pw, ph = w - ml - mr, h - mt - mb

    def px(v: float) -> float:
        return round(x0 + ml + (v - xlo) / ((xhi - xlo) or 1) * pw, 1)

    def py(v: float) -> float:
        u = math.log10(v) if ylog else v
        return round(mt + ph - (u - ylo) / ((yhi - ylo) or 1) * ph, 1)

    kind = "RAM" if curve.kind == "ram" else "Flash"
    s = [f'<g class="panel" id="{curve.kind}">',
         f'<text x="{x0 + w / 2:.1f}" y="20" text-anchor="middle" font-weight="bold">'
         f'{escape(f"{curve.model}: {kind} versus {curve.metric} on {curve.target}")}</text>',
         f'<rect x="{x0 + ml:.1f}" y="{mt:.1f}" width="{pw:.1f}" height="{ph:.1f}" fill="none" stroke="#888"/>']
    for v in xt:
        s.append(f'<line x1="{px(v)}" y1="{mt + ph:.1f}" x2="{px(v)}" y2="{mt + ph + 4:.1f}" stroke="#888"/>'
                 f'<text x="{px(v)}" y="{mt + ph + 16:.1f}" text-anchor="middle">{escape(_num(v))}</text>')
    for v in yt:
        s.append(f'<line x1="{x0 + ml - 4:.1f}" y1="{py(v)}" x2="{x0 + ml:.1f}" y2="{py(v)}" stroke="#888"/>'
                 f'<text x="{x0 + ml - 6:.1f}" y="{py(v) + 4:.1f}" text-anchor="end">{escape(_num(v))}</text>')
    s.append(f'<text x="{x0 + ml + pw / 2:.1f}" y="{h - 10:.1f}" text-anchor="middle">'
             f'{escape(AXIS[curve.kind])} (bytes; each point one {OPTION[curve.kind]})</text>')
    s.append(f'<text transform="translate({x0 + 14:.1f},{mt + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
             f'{escape(curve.metric)} per inference{" (log scale)" if ylog else ""}</text>')
    front = curve.front()
    if len(front) > 1:  # the staircase: between two points of the front, only the looser one's cycles are had
        pts = [f"{px(front[0].nbytes)},{py(front[0].cycles)}"]
        for a, b in zip(front, front[1:], strict=False):
            pts += [f"{px(b.nbytes)},{py(a.cycles)}", f"{px(b.nbytes)},{py(b.cycles)}"]
        s.append(f'<polyline class="front" points="{" ".join(pts)}" fill="none" stroke="#1f6fb4" '
                 f'stroke-width="1.5"/>')
    for p in curve.points:
        tip = escape(f"{OPTION[curve.kind]} {p.shown_budget}: {AXIS[curve.kind]} {p.nbytes:,} B, "
                     f"{p.cycles:,} {curve.metric} ({curve.ratio(p):.3f}x the unbudgeted)"
                     + (f", {p.traded}" if p.traded else ""))
        cx, cy = px(p.nbytes), py(p.cycles)
        if p.dominated_by is None:
            s.append(f'<circle class="point" cx="{cx}" cy="{cy}" r="3.5" fill="#1f6fb4"><title>{tip}</title>'
                     '</circle>')
        else:
            s.append(f'<g class="dominated"><title>{tip}; dominated</title>'
                     f'<circle cx="{cx}" cy="{cy}" r="5" fill="none" stroke="#c0392b" stroke-width="1.5"/>'
                     f'<line x1="{cx - 3.5}" y1="{cy - 3.5}" x2="{cx + 3.5}" y2="{cy + 3.5}" stroke="#c0392b"/>'
                     f'<line x1="{cx - 3.5}" y1="{cy + 3.5}" x2="{cx + 3.5}" y2="{cy - 3.5}" stroke="#c0392b"/></g>')
    lx, ly = x0 + ml + 8, 38.0  # the legend between the title and the plot: never over a point
    s.append(f'<circle cx="{lx:.1f}" cy="{ly - 4:.1f}" r="3.5" fill="#1f6fb4"/>'
             f'<text x="{lx + 8:.1f}" y="{ly:.1f}">the front (no other point is as small and as fast)</text>')
    if curve.dominated():
        s.append(f'<circle cx="{lx + 330:.1f}" cy="{ly - 4:.1f}" r="5" fill="none" stroke="#c0392b"/>'
                 f'<text x="{lx + 338:.1f}" y="{ly:.1f}">dominated ({len(curve.dominated())})</text>')
    s.append("</g>")
    return s


def svg(curves: list[Curve], width: float = 520, height: float = 340) -> str:
    """The curves side by side, one panel each: the front as a staircase, dominated points as red crosses,
    each point's budget and figures in its tooltip."""
    if not curves:
        raise ValueError("no curves to draw")
    total = width * len(curves)
    body = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {total:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
            f'<rect width="{total:.0f}" height="{height:.0f}" fill="white"/>']
    for k, c in enumerate(curves):
        body += _panel(c, k * width, width, height)
    body.append("</svg>")
    return "\n".join(body) + "\n"


# ---- measuring ----

def _sync(bundle: Any, tree: Path) -> None:
    """Write the bundle into tree/bundle, touching only the files whose bytes differ and removing the ones it
    no longer has: the next build recompiles only what the budget changed (the model's C), not the kernels."""
    root = tree / "bundle"
    for rel, content in bundle.files.items():
        path = root / rel
        data = content.encode() if isinstance(content, str) else bytes(content)
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if root.is_dir():
        keep = {str(Path(r)) for r in bundle.files}
        for path in sorted(root.rglob("*"), reverse=True):
            rel = str(path.relative_to(root))
            if path.is_file() and rel not in keep:
                path.unlink()


@dataclass
class Measurer:
    """Builds each point's bundle in one reused build tree per kind and counts one inference under qemu."""
    target: str
    build_type: str
    work: Path
    inputs: list[Any] | None = None
    inputs_of: Callable[[dict[str, Any]], list[Any]] | None = None  # the inputs for a bundle's metadata
    reference: dict[str, Any] | None = None
    _configured: set[str] = field(default_factory=set)

    def measure(self, kind: str, bundle: Any, say: Callable[[str], Any] = lambda what: nullcontext(),
                label: str = "") -> tuple[int, int, bool | None]:
        """(cycles or instructions, instructions, outputs the same as the first point's) of one inference;
        `say(what)` shows each step (the build, the counting) after `label`."""
        import numpy as np

        from aot.bench import board_counts, seeded_inputs
        from aot.build import build, configure
        from aot.qemu_plugin import CYCLE_MODELS, insn_count_plugin

        tree = self.work / f"build-{kind}"
        _sync(bundle, tree)
        if kind not in self._configured:
            configure(tree, self.target, build_type=self.build_type)
            self._configured.add(kind)
        with say(f"{label}building"):
            build(tree)
        meta = bundle.metadata
        if self.inputs is None:
            self.inputs = (self.inputs_of or seeded_inputs)(meta)
        outputs: dict[str, Any] = {}
        with say(f"{label}counting one inference under qemu"):
            insns, cycles = board_counts(tree, meta, self.inputs, insn_count_plugin(self.work),
                                         cycles=self.target in CYCLE_MODELS, outputs=outputs)
        if self.reference is None:
            self.reference = outputs
            same = None
        else:
            same = all(np.array_equal(outputs[k], self.reference[k]) for k in self.reference)
        return (cycles if cycles is not None else insns), insns, same


def _ram_traded(meta: dict[str, Any]) -> str:
    traded = (meta["memory"].get("ram_budget") or {}).get("traded") or {}
    names = {"in_place": "in place", "overlap": "overlap", "scratch": "tiles", "bands": "bands"}
    return ", ".join(names.get(k, k) for k in traded)


def ram_curve(model: str, compile_at: Callable[[int | None], Any], measurer: Measurer,
              points: int | None, say: Callable[[str], Any]) -> Curve:
    """The RAM curve: `compile_at(budget)` is the compile at --ram-budget budget (None: none), raising
    BudgetError when refused; `say(what)` is a context manager showing progress."""
    from aot.plan import BudgetError
    from aot.qemu_plugin import CYCLE_MODELS

    curve = Curve("ram", model, measurer.target, "est. cycles" if measurer.target in CYCLE_MODELS
                  else "instructions")

    def point(budget: int | None, bundle: Any) -> int:
        label = f"RAM point {len(curve.points) + 1}{f' of {points}' if points else ''}, {OPTION['ram']} " \
                f"{'none' if budget is None else f'{budget:,} B'}: "
        cycles, insns, same = measurer.measure("ram", bundle, say, label)
        arena = bundle.metadata["memory"]["arena_bytes"]
        curve.points.append(Point(budget, arena, cycles, insns, _ram_traded(bundle.metadata), same))
        return arena

    with say(f"compiling {model} without a budget"):
        first = compile_at(None)
    top = point(None, first)
    with say("finding the least --ram-budget"):
        try:
            curve.least = compile_at(1).metadata["memory"]["arena_bytes"]
        except BudgetError as e:
            curve.least = e.least_bytes

    def one(budget: int) -> int | None:
        with say(f"{OPTION['ram']} {budget:,} B: compiling"):
            try:
                bundle = compile_at(budget)
            except BudgetError:
                return None
        return point(budget, bundle)

    _, curve.refused = descend(one, top, curve.least, points)
    mark_dominated(curve.points)
    return curve


def flash_curve(model: str, compile_at: Callable[[int], Any], measurer: Measurer,
                say: Callable[[str], Any]) -> Curve:
    """The flash curve: `compile_at(budget)` is the compile at --flash-budget budget, raising
    FlashBudgetError when refused. The first point is the unbudgeted library (a budget it meets)."""
    from aot.flash import FlashBudgetError
    from aot.qemu_plugin import CYCLE_MODELS

    curve = Curve("flash", model, measurer.target, "est. cycles" if measurer.target in CYCLE_MODELS
                  else "instructions")

    def point(budget: int | None, bundle: Any) -> int:
        label = f"flash point {len(curve.points) + 1}, {OPTION['flash']} " \
                f"{'none' if budget is None else f'{budget:,} B'}: "
        cycles, insns, same = measurer.measure("flash", bundle, say, label)
        fb = bundle.metadata["flash_budget"]
        curve.points.append(Point(budget, fb["flash_bytes"], cycles, insns,
                                  "" if fb["level"] == "none" else f"level {fb['level']}", same))
        return fb["flash_bytes"]

    with say(f"compiling {model} and measuring its library's flash"):
        first = compile_at(1 << 62)  # met by the first level: the unbudgeted library, measured
    top = point(None, first)

    def one(budget: int) -> int | None:
        with say(f"{OPTION['flash']} {budget:,} B: compiling (each level tried is a library build)"):
            try:
                bundle = compile_at(budget)
            except FlashBudgetError as e:
                curve.least = e.least_bytes
                return None
        return point(budget, bundle)

    descend(one, top, None, None)
    mark_dominated(curve.points)
    return curve


def write_outputs(out: Path, curves: list[Curve]) -> list[Path]:
    """OUT/curve.json and OUT/curve.svg."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "curve.json").write_text(json.dumps([c.to_dict() for c in curves], indent=1) + "\n")
    (out / "curve.svg").write_text(svg(curves))
    return [out / "curve.json", out / "curve.svg"]


def scratch_dir(out: Path, keep: bool) -> Path:
    """Where the build trees go: OUT/builds when kept, else a temporary folder."""
    if keep:
        d = out / "builds"
        d.mkdir(parents=True, exist_ok=True)
        return d
    return Path(tempfile.mkdtemp(prefix="aotc-curve-"))


def drop(work: Path, keep: bool) -> None:
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
