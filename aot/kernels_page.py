"""The kernel table's manifest, docs/kernels.md: for every host op with a table of kernels, its candidates
in order of preference, the C function each calls, the runtime file that defines it, and the candidate's
facts (KernelFacts), generated from the table so that it cannot drift from the code.

    python -m aot.kernels_page > docs/kernels.md

tests/kernels/test_kernels_page.py checks that the committed page is current and that every function it names is
defined by a file of the op's kernel families (runtime_c/kernels/symbols.json, itself checked against the
compiled sources by tests/kernels_c/test_runtime_symbols.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from aot.emit_c.runtime_files import defining_files
from aot.kernels import HOST_OPS
from aot.kernels.base import Candidate


@dataclass(frozen=True)
class Row:
    """One candidate of an op's table."""

    op: str  # the ops whose table it is, by name
    rank: int  # 1: the op's first choice
    symbols: tuple[str, ...]  # the C functions it calls (the first for int8 / float32, the others by input type)
    files: tuple[str, ...]  # runtime_c/kernels/ files defining them, in the symbols' order
    facts: str  # its KernelFacts in words ("-": plain C, a scratch argument)


def _facts(c: Candidate) -> str:
    f = c.facts
    words = [*(["threaded"] if f.threaded else []), *(["fast-math only"] if f.rounds_more else []),
             *([f"ISA {f.isa}"] if f.isa else []), *(["no scratch argument"] if f.scratch_arg is False else []),
             *(["packed W^T"] if f.packed_weights else []),
             *(["widened weights (--widened-weights)"] if f.widened_weights else [])]
    return ", ".join(words) or "-"


def rows() -> list[Row]:
    """Every candidate of every table that names its C functions; ops sharing a table (Conv, FusedConv and
    ConvTranspose) listed together, by their first name."""
    sharing: dict[tuple[Candidate, ...], list[str]] = {}
    for op, host in sorted(HOST_OPS.items()):
        if any(c.symbols for c in host.kernels):
            sharing.setdefault(host.kernels, []).append(op)
    return [Row(", ".join(ops), rank, c.symbols, tuple(", ".join(defining_files(s)) or "?" for s in c.symbols),
                _facts(c))
            for kernels, ops in sharing.items() for rank, c in enumerate(kernels, 1)]


def emitter_named() -> list[str]:
    """The ops whose emitter names the C function itself, by the node's type (a single kernel, no table)."""
    return sorted(op for op, host in HOST_OPS.items() if not any(c.symbols for c in host.kernels))


def markdown() -> str:
    table = rows()
    lines = [
        "# Kernel table",
        "",
        "Generated from the kernel table (aot/kernels/, `HostOp.kernels`) by `python -m aot.kernels_page`; do not "
        "edit. For each op with a table, its candidate kernels in order of preference: a node takes the first "
        "that applies on the target and fits the memory its step can spare (aot/select.py). A candidate calls "
        "the first C function listed for an int8 or float32 input and the others for other input types or ops "
        "sharing the table; the file is the runtime_c/kernels/ source that defines it (symbols.json). Facts: "
        "`threaded` splits its work over a `--threads` pool, `fast-math only` rounds more than a direct sum, "
        "`ISA` is the instruction set its path is written for (taken only where the target has it), "
        "`no scratch argument`: its C function takes none (stated for the conv and MaxPool kernels), "
        "`packed W^T`: it reads weights packed at compile time in the GEMM core's panels, `widened weights`: "
        "with `--widened-weights`, weights widened to 16-bit halves at compile time (stored beside the int8 ones).",
        "",
        f"{sum(len(r.op.split(', ')) for r in table if r.rank == 1)} ops with a table, "
        f"{sum(1 for r in table if r.rank == 1)} tables, {len(table)} candidates.",
        "",
        "| op | # | C function | file | facts |",
        "|---|---|---|---|---|",
    ]
    for r in table:
        lines.append(f"| {r.op if r.rank == 1 else ''} | {r.rank} | {'<br>'.join(r.symbols)} | "
                     f"{'<br>'.join(r.files)} | {r.facts} |")
    lines += ["", "The other host ops have a single kernel (views: none), whose C function their emitter names by "
              "the node's type: "
              + ", ".join(emitter_named()) + ".", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
