"""`aotc bench OUT --nodes` on a board: one inference's instructions and estimated cycles per node.

The per-function profile (`--profile`) says which kernels the time goes to, not which layers: a kernel that
twenty convs call is one row. The debug variant `aotc compare` builds (OUT/compare, AOTC_TAPS) calls the runner's
`aotc_tap` right after each node; run without a taps file, that call returns at once. aotc's qemu plugin marks
the entries of the model's run function and of `aotc_tap` (its mark= and marks= arguments) and records the
instructions and cycles so far at each, so one node's counts are the difference between its tap and the one
before it (the first node's, from the run function's entry). A run with a taps file names the taps in order.

The tap calls cost a few instructions each and keep the tapped tensors' pointers live across them, so the
per-node sum can differ from `aotc bench`'s whole-inference count by a little; the table says by how much.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aot.errors import AotcError
from aot.qemu_plugin import CYCLE_MODELS, run_under_plugin


@dataclass(frozen=True)
class NodeCount:
    """One node's share of an inference on a board: the node (as the generated code taps it), the op and
    source nodes it comes from (metadata.json's source map), its instructions and estimated cycles."""
    node: str
    op: str
    sources: tuple[str, ...]
    instructions: int
    cycles: int | None


def node_counts(out: Path, meta: dict, inputs: list[np.ndarray], plugin: Path) -> list[NodeCount]:
    """Per node of the last of two inferences (the first warms nothing on a board, but the runner always
    makes it): the debug variant built (OUT/compare), run once to name its taps and once under the plugin."""
    from aot.build import run_bundle, runner_path
    from aot.compare import _labels, debug_variant, read_taps
    from aot.footprint import parse_elf
    from aot.targets import bundle_target

    target = bundle_target(meta)
    dbg = debug_variant(out, meta)
    taps_file = dbg / "taps.bin"
    taps_file.unlink(missing_ok=True)
    run_bundle(dbg, meta, inputs, taps=taps_file)
    nodes = [t.node for t in read_taps(taps_file)]
    if not nodes:
        raise AotcError(f"{dbg}'s runner tapped no tensor: no node to count")
    runner = runner_path(dbg, meta).resolve()
    funcs = {f.name: f.addr for f in parse_elf(runner.read_bytes()).functions}
    entry = f"{meta['name']}_run"
    if entry not in funcs or "aotc_tap" not in funcs:
        raise AotcError(f"{runner} has no symbol {entry if entry not in funcs else 'aotc_tap'}: cannot mark nodes")
    model = CYCLE_MODELS.get(target.name)
    with tempfile.TemporaryDirectory(prefix="aotc-nodes-") as tmp:
        (Path(tmp) / "inputs.bin").write_bytes(b"".join(np.asarray(x, order="C").tobytes() for x in inputs))
        marks = Path(tmp) / "marks.txt"
        args = [*([f"cycles={model}"] if model else []), f"mark={funcs[entry]:x}", f"mark={funcs['aotc_tap']:x}",
                f"marks={marks}"]
        r = run_under_plugin(target, dbg, runner, plugin, args, 1, Path(tmp))
        if r.returncode != 0 or not marks.is_file():
            raise AotcError(f"counting the nodes of {dbg} under qemu failed (exit {r.returncode}): "
                            f"{(r.stderr or r.stdout).strip()[-300:]}")
        hits = [tuple(int(v) for v in line.split()) for line in marks.read_text().splitlines()]
    starts = [i for i, h in enumerate(hits) if h[0] == 0]
    last = hits[starts[-1]:] if starts else []
    if len(starts) != 2 or len(last) != len(nodes) + 1:
        raise AotcError(f"{dbg}: {len(starts)} runs and {len(last) - 1 if last else 0} taps in the last under qemu, "
                        f"where 2 runs of {len(nodes)} taps each were expected")
    labels = _labels(meta)
    rows = []
    for node, (_, i0, c0), (_, i1, c1) in zip(nodes, last[:-1], last[1:], strict=True):
        op, sources, _, _ = labels.get(node, ("?", [], "", None))
        rows.append(NodeCount(node, op, tuple(sources), i1 - i0, c1 - c0 if model else None))
    return rows


def format_node_profile(rows: list[NodeCount], instructions: int, cycles: int | None) -> str:
    """The nodes in the order they run: instructions and estimated cycles, and their share of the whole
    inference `aotc bench` counted on the normal build (`instructions`, `cycles`)."""
    lines = ["| # | node | op | instructions | est. cycles | share |", "|---:|---|---|---:|---:|---:|"]
    total_i = sum(r.instructions for r in rows)
    total_c = sum(r.cycles for r in rows if r.cycles is not None) if cycles is not None else None
    whole = cycles if cycles is not None else instructions
    for n, r in enumerate(rows):
        part = r.cycles if cycles is not None and r.cycles is not None else r.instructions
        lines.append(f"| {n} | {r.node} | {r.op} | {r.instructions} | {'-' if r.cycles is None else r.cycles} | "
                     f"{part / max(whole, 1):.1%} |")
    summed = total_c if total_c is not None else total_i
    lines.append(f"| | (the nodes' sum; the normal build's inference: {instructions} instructions"
                 f"{'' if cycles is None else f', {cycles} est. cycles'}) | | {total_i} | "
                 f"{'-' if total_c is None else total_c} | {summed / max(whole, 1):.1%} |")
    return "\n".join(lines) + "\n"
