"""Every C function under runtime_c/ is at most 200 lines (issue 49), signature to closing brace.

A function longer than a screenful or three is where ISA paths pile up as `#if` blocks; the rule
for variants (a variant whose scratch, packing or accepted shapes differ is its own entry point
chosen by the compiler, `#if` only swaps instructions under an identical contract) keeps each
one short. Also a script listing the longest functions:

    python tests/structure/test_c_function_lengths.py [--over N] [--top K]

The scanner is a brace matcher over the source with comments, string and character literals
blanked out and preprocessor lines skipped; each branch of an `#if`/`#elif`/`#else` chain starts
at the depth of the `#if`, so a function whose branches each open a loop still balances, and a
function defined in an `#else` branch is seen. (A function written inside a `#define` is not.)
A top-level `{` after a `)` opens a function body; the function starts at the first line after
the previous top-level `;`, `}` or preprocessor line.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime_c"
LIMIT = 200
# functions allowed past LIMIT, each with the reason it cannot be split: none
ALLOWED: dict[str, str] = {}


@dataclass(frozen=True)
class CFunction:
    path: Path
    name: str
    first: int  # 1-based line of the signature's first line
    last: int  # 1-based line of the closing brace

    @property
    def lines(self) -> int:
        return self.last - self.first + 1


def _blank(text: str) -> str:
    """The text with comments and string/char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _lines(text: str) -> list[tuple[str, str]]:
    """The blanked lines, each as (kind, code): kind is "if", "else" (also #elif), "endif", "pp"
    (another directive or a continuation line; code empty) or "code". The C++ branch of an
    `#ifdef __cplusplus` (extern "C" {) is emptied."""
    out: list[tuple[str, str]] = []
    cxx: list[bool] = []  # per open #if: its current branch is C++ only
    cont = False
    for line in _blank(text).split("\n"):
        s = line.strip()
        if cont or s.startswith("#"):
            kind = "pp"
            if not cont:
                word, rest = re.match(r"#\s*(\w*)(.*)", s).groups()
                if word in ("if", "ifdef", "ifndef"):
                    cxx.append("__cplusplus" in rest and word != "ifndef")
                    kind = "if"
                elif word in ("elif", "else") and cxx:
                    cxx[-1] = False
                    kind = "else"
                elif word == "endif" and cxx:
                    cxx.pop()
                    kind = "endif"
            cont = line.rstrip().endswith("\\")
            out.append((kind, ""))
        else:
            out.append(("code", "" if any(cxx) else line))
    return out


_SIGNATURE = re.compile(r"(\w+(?:\s*\(\s*\w+\s*\))?)\s*\((?:[^()]|\([^()]*\))*\)[\s\w()]*$")
_AGGREGATE = re.compile(r"\b(?:typedef|struct|union|enum)\b[\s\w]*$")


def c_functions(path: Path) -> list[CFunction]:
    """The function definitions of a C source or header, with their line spans. Each branch of
    an `#if` chain starts at the brace depth the chain started at, and after `#endif` the depth
    is the first branch's (the branches of a chain open and close alike)."""
    found: list[CFunction] = []
    depth = 0
    start = 0  # first line (0-based) the next top-level declaration may start on
    head = ""  # top-level text since the last ; { or }
    open_line = name = None
    chains: list[list[int | None]] = []  # per open #if: [depth at #if, depth after its first branch]
    for ln, (kind, line) in enumerate(_lines(path.read_text())):
        if kind == "if":
            chains.append([depth, None])
        elif kind == "else" and chains:
            if chains[-1][1] is None:
                chains[-1][1] = depth
            depth = chains[-1][0]
        elif kind == "endif" and chains:
            at_if, first = chains.pop()
            depth = depth if first is None else first
        if depth == 0 and not head.strip() and not line.strip():
            start = ln + 1
        for ch in line:
            if depth == 0:
                if ch == "{":
                    # (a struct or union opened after a function-like macro's use, which defines a function the
                    # scanner cannot see, is not that function's body)
                    m = None if _AGGREGATE.search(head) else _SIGNATURE.search(head)
                    open_line, name = (start, re.sub(r"\s+", "", m.group(1))) if m else (None, None)
                    depth = 1
                    head = ""
                elif ch in ";}":
                    head = ""
                    start = ln + 1
                else:
                    head += ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    if name is not None:
                        found.append(CFunction(path, name, open_line + 1, ln + 1))
                    name = None
                    start = ln + 1
                    head = ""
        if depth == 0:
            head += "\n"
    if depth != 0:
        raise ValueError(f"{path}: braces do not balance (depth {depth} at the end)")
    return found


def runtime_functions() -> list[CFunction]:
    """Every function defined in runtime_c/'s .c and .h files, longest first."""
    fns = [f for p in sorted(RUNTIME.rglob("*.[ch]")) for f in c_functions(p)]
    return sorted(fns, key=lambda f: (-f.lines, str(f.path), f.first))


def _where(f: CFunction) -> str:
    return f"{f.path.relative_to(RUNTIME.parent)}:{f.first}:{f.name}"


def test_scanner_spans(tmp_path: Path) -> None:
    """The scanner finds each function's span through comments, strings, initialisers, structs,
    multi-line signatures and #if branches that each open a brace."""
    src = tmp_path / "x.c"
    src.write_text(
        '#include "x.h"\n'                      # 1
        "/* { not a brace */\n"                 # 2
        "static const int t[2] = {1, 2};\n"     # 3
        "typedef struct { int a; } s_t;\n"      # 4
        "\n"                                    # 5
        "static inline int\n"                   # 6
        "one(int a,\n"                          # 7
        "    int b) {\n"                        # 8
        '    const char *s = "}";  // }\n'      # 9
        "#if defined(X)\n"                      # 10
        "    for (;;) {\n"                      # 11
        "#else\n"                               # 12
        "    while (1) {\n"                     # 13
        "#endif\n"                              # 14
        "        return a + b + (s[0] == '{');\n"  # 15
        "    }\n"                               # 16
        "}\n"                                   # 17
        "#define M(x) { x }\n"                  # 18
        "void two(void) __attribute__((cold));\n"  # 19
        "void two(void)\n"                      # 20
        "{\n"                                   # 21
        "}\n"                                   # 22
        "#ifdef __cplusplus\n"                  # 23
        'extern "C" {\n'                        # 24
        "#endif\n"                              # 25
        "#if A\n"                               # 26
        "int three(void) { return 1; }\n"       # 27
        "#else\n"                               # 28
        "int Q(four)(int (*f)(int)) {\n"        # 29
        "    return f(0);\n"                    # 30
        "}\n"                                   # 31
        "#endif\n"                              # 32
        "#ifdef __cplusplus\n"                  # 33
        "}\n"                                   # 34
        "#endif\n"                              # 35
        "#define F(n) void n(void) { }\n"       # 36
        "F(five)\n"                             # 37: a function the scanner cannot see ...
        "typedef struct {\n"                    # 38: ... and no body of it
        "    int c;\n"                          # 39
        "} five_t;\n")                          # 40
    got = [(f.name, f.first, f.last) for f in c_functions(src)]
    assert got == [("one", 6, 17), ("two", 20, 22), ("three", 27, 27), ("Q(four)", 29, 31)]


def test_runtime_scanned() -> None:
    """The scanner sees the runtime's functions (a scanner that finds none would pass anything)."""
    names = {f.name for f in runtime_functions()}
    assert {"aotc_conv_implicit_f32", "aotc_gemm_f32"} <= names
    assert len(names) > 500


def test_c_functions_short() -> None:
    """No C function under runtime_c/ is longer than LIMIT lines, except those in ALLOWED (and
    each of those still is: an entry outlives its reason only as a failure here)."""
    fns = runtime_functions()
    over = [f for f in fns if f.lines > LIMIT and f.name not in ALLOWED]
    listed = "\n".join(f"  {f.lines:4d}  {_where(f)}" for f in over)
    assert not over, f"C functions over {LIMIT} lines (split them by ISA or by step):\n{listed}"
    stale = set(ALLOWED) - {f.name for f in fns if f.lines > LIMIT}
    assert not stale, f"ALLOWED lists functions of at most {LIMIT} lines: {sorted(stale)}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--over", type=int, default=100, help="list functions longer than this many lines")
    p.add_argument("--top", type=int, default=0, help="list at most this many (0: all)")
    args = p.parse_args()
    fns = [f for f in runtime_functions() if f.lines > args.over]
    for f in fns[:args.top or None]:
        print(f"{f.lines:5d}  {_where(f)}")


if __name__ == "__main__":
    main()
