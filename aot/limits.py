"""Size limits, checked before anything is allocated in proportion to a size a model declares.

A model file is small; the sizes it declares need not be. Every tensor shape aotc learns (declared
on an input, output or initializer, inferred by ONNX, or about to be computed by constant folding)
is checked against MAX_TENSOR_BYTES before aotc allocates anything of that size, and the arena
against MAX_ARENA_BYTES before the bundle is written.

- A tensor must be under 2 GiB: the C kernels count elements in 32-bit integers.
- The arena and the runner's copies of the inputs must be under 2 GiB together: the runner keeps
  them in static memory, which x86-64 and AArch64 link only below 2 GiB (the default code model),
  and the 32-bit targets aotc builds for address no more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from aot.errors import AotcError

MAX_TENSOR_BYTES = 2**31 - 1
MAX_ARENA_BYTES = 2**31 - 1


def human(nbytes: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes} bytes"


def tensor_bytes(shape: Sequence[int], itemsize: int) -> int:
    return math.prod(int(d) for d in shape) * int(itemsize)


def check_tensor(what: str, dtype: str, shape: Sequence[int], itemsize: int, node: object = None) -> None:
    """Refuse a tensor of `shape` (elements of `itemsize` bytes) over MAX_TENSOR_BYTES, or with a
    negative dimension, in one line."""
    if any(int(d) < 0 for d in shape):
        raise AotcError(f"{what} would be {dtype}[{','.join(str(int(d)) for d in shape)}]: a negative dimension "
                        "(the inputs and attributes do not fit together)", node=node)
    nbytes = tensor_bytes(shape, itemsize)
    if nbytes > MAX_TENSOR_BYTES:
        raise AotcError(f"{what} is {dtype}[{','.join(str(int(d)) for d in shape)}], {human(nbytes)} "
                        f"({nbytes} bytes): aotc refuses tensors of 2 GiB or more", node=node)
