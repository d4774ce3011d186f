"""The numbers the compiler shares with the C kernels, read from the kernels' own #define lines.

A block size, limit or threshold that both a kernel and the compiler's choice of it depend on is
defined once, in runtime_c/kernels/ beside the code that uses it; the compiler reads it from there
(`define("aotc_gemm.h", "AOTC_GEMM_PANEL")`) instead of restating it, so that the two cannot drift
apart. Only a plain `#define NAME <integer>` line counts, wherever it stands (a constant a kernel
defines under a target's #if is still that constant); a name defined twice (a value per target, as
AOTC_GEMM_MR) is no one fact, and asking for it is an error, as is asking for a name the file lacks.
"""

from __future__ import annotations

import functools
import re

from aot.paths import kernel_file

_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)(\(?)\s*(.*)$")
_INT = re.compile(r"^\(?\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*\)?$")
_COMMENT = re.compile(r"/\*.*?(\*/|$)|//.*$")


def parse_defines(text: str) -> dict[str, int | None]:
    """Each object-like macro of C source `text` defined as an integer literal (decimal or hex, with or
    without parentheses and suffix, comments stripped): its value; None for a name defined more than
    once with different values (the header picks one per target)."""
    out: dict[str, int | None] = {}
    for line in text.splitlines():
        m = _DEFINE.match(line)
        if m is None or m.group(2):  # not a #define, or a function-like macro
            continue
        value = _INT.match(_COMMENT.sub("", m.group(3)).strip())
        if value is None:
            continue
        name, number = m.group(1), int(value.group(1), 0)
        out[name] = number if out.get(name, number) == number else None  # a second, other value: no one fact
    return out


@functools.cache
def _file_defines(file: str) -> dict[str, int | None]:
    return parse_defines(kernel_file(file).read_text())


_READ: dict[str, dict[str, int]] = {}  # what define() has returned, by file


def define(file: str, name: str) -> int:
    """Integer macro `name` of runtime_c/kernels/<file>; LookupError if the file does not define it as one
    integer (a compiler bug: the C and this module disagree on where the fact lives)."""
    value = _file_defines(file).get(name)
    if value is None:
        how = "defines it more than once" if name in _file_defines(file) else "has no #define of it as an integer"
        raise LookupError(f"runtime_c/kernels/{file} {how}: {name}")
    _READ.setdefault(file, {})[name] = value
    return value


def read() -> dict[str, dict[str, int]]:
    """Every number define() has returned so far, by file: what tests/kernels_c/test_scratch_facts.py checks against
    the C compiler's view of the same files."""
    return {file: dict(names) for file, names in _READ.items()}
