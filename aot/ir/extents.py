"""Rows known only at run time (aot/frontend/onnx/bounded.py): which ops produce them, and the run-time
integers made from them. The frontend builds these expressions, the kernels and the emitter write them
as C; they are the IR's, so no stage reads another's for them."""

from __future__ import annotations

PRODUCERS = ("NonMaxSuppression", "NonZero", "Unique")  # (Unique: when its count is not declared)
REDUCE_ALL = ("ReduceMax", "ReduceMin", "ReduceSum")  # over every element of a bounded tensor: its extent


# A run-time integer made from extents (the value of a Shape of bounded rows and the arithmetic torch
# writes on it): an int, ("rows", tensor) for the extent of `tensor`, or (op, a, b) with op one of
# SYM_OPS. Kept in node attributes and written as C by `sym_c`.
Sym = int | tuple
SYM_OPS = {"min": min, "max": max, "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}
_SYM_C = {"min": "AOTC_MIN_I64({a}, {b})", "max": "AOTC_MAX_I64({a}, {b})", "add": "({a} + {b})",
          "sub": "({a} - {b})", "mul": "({a} * {b})"}


def sym_eval(e: Sym, rows: dict[str, int]) -> int:
    """The value of `e` with each extent given in `rows`."""
    if isinstance(e, int):
        return e
    if e[0] == "rows":
        return rows[e[1]]
    return int(SYM_OPS[e[0]](sym_eval(e[1], rows), sym_eval(e[2], rows)))


def sym_tensors(e: Sym) -> set[str]:
    """The tensors whose extents `e` reads."""
    if isinstance(e, int):
        return set()
    if e[0] == "rows":
        return {e[1]}
    return sym_tensors(e[1]) | sym_tensors(e[2])


def sym_monotone(e: Sym) -> bool:
    """No subtraction: the value at the bounds bounds the value."""
    return isinstance(e, int) or e[0] == "rows" or (e[0] != "sub" and sym_monotone(e[1]) and sym_monotone(e[2]))


def sym_c(e: Sym, extent: object) -> str:
    """C expression of `e`; extent(tensor) names the local holding its rows."""
    if isinstance(e, int):
        return f"INT64_C({e})"
    if e[0] == "rows":
        return str(extent(e[1]))  # type: ignore[operator]
    return _SYM_C[e[0]].format(a=sym_c(e[1], extent), b=sym_c(e[2], extent))


def sym_binary(op: str, a: Sym, b: Sym) -> Sym:
    if isinstance(a, int) and isinstance(b, int):
        return int(SYM_OPS[op](a, b))
    return (op, a, b)
