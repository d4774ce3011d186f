"""The model the memory-pool tests share (tests/plan/test_pools.py, tests/targets/test_pools_boards.py)."""

from __future__ import annotations

import onnx
import zoo


def pooled_model() -> onnx.ModelProto:
    """Three 3 x 3 convs with a skip: conv a's output (36 KiB) is read 36 times per element by the next
    conv and again by the Add; conv c's output (36 KiB) only once, by the Add. Arena 72 KiB in one pool."""
    b = zoo.Builder("pooled", opset=13)
    x = b.input("input", (1, 4, 24, 24))
    a = b.relu(b.conv(x, 16, 3))
    c = b.relu(b.conv(a, 16, 3))
    d = b.add(a, c)
    e = b.relu(b.conv(d, 16, 3, stride=2))
    return b.build([b.conv(e, 8, 1, pad=0)])
