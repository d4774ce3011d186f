"""Tap points: the C statement that reports one tensor to `aotc compare` (aot/compare.py).

Generated code (the host's entry point, and vendor functions through `CodegenContext.tap`)
writes, right after the node that computes a tensor,

    AOTC_TAP("conv3", "relu4_out", "float32[1,6,28,28]", t_relu4_out, 18816u);

The macro (runtime_c/include/aotc_common.h) expands to nothing that runs unless the build defines
AOTC_TAPS (the debug variant `aotc compare` builds: `cmake -DAOTC_TAPS=ON`), where it calls the
runner's `aotc_tap`, which appends the node, tensor, type and bytes to a file. The node, tensor
and type are string literals, so a normal build keeps nothing of them; the record names its own
dtype and shape, so the tap file can be read without the compiler's IR.
"""

from __future__ import annotations

from collections.abc import Sequence

TAP_MAGIC = b"AOTCTAP1"  # first bytes of a tap file (the runner's 4th argument)


def c_string(text: str) -> str:
    """`text` as a C string literal (UTF-8; quotes, backslashes and control bytes escaped)."""
    out = []
    for b in text.encode():
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= b < 127 and ch != "?":  # '?' escaped: no trigraphs
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def tap_type(dtype: str, shape: Sequence[int]) -> str:
    """The type a tap record carries: dtype[d0,d1,...] (numpy dtype name; [] for a scalar)."""
    return f"{dtype}[{','.join(str(int(d)) for d in shape)}]"


def parse_tap_type(text: str) -> tuple[str, tuple[int, ...]]:
    dtype, _, dims = text.partition("[")
    dims = dims.rstrip("]")
    return dtype, tuple(int(d) for d in dims.split(",")) if dims else ()


def c_tap(node: str, tensor: str, dtype: str, shape: Sequence[int], data: str, nbytes: int) -> str:
    """The tap statement for `tensor` (computed by `node`) whose bytes are at the C expression `data`."""
    return (f"AOTC_TAP({c_string(node)}, {c_string(tensor)}, {c_string(tap_type(dtype, shape))}, "
            f"{data}, {int(nbytes)}u);")
