"""A channels-first input's TRANSPOSE to NHWC written over the input itself (issue 67, docs/fused-tiles.md): under
a --ram-budget only, a PyTorch model's 1 x C x H x W input of bytes, which TFLite converters keep with a TRANSPOSE
(perm 0, 2, 3, 1) before the first conv, is permuted in its own slot at that step (runtime_c's
aotc_transpose2d_in_place: cycle following from each cycle's leader, which the compiler works out: no scratch; a
224 x 224 x 3 image has 14 cycles), so that the
image and its NHWC copy are never alive together and the run of convs after it reads an NHWC image whose rows free
a whole row of bytes each (aot/kernels/tflite_bands.py Layer.in_free None), not one plane's row.

The planner's driver (aot/plan/bands.py plan_with_bands) offers it beside the run in row bands that starts at the
TRANSPOSE (tflite_bands.transpose_layer) and keeps whichever its usual keys prefer; aot/kernels/tflite_cost.py
counts the permutation's cycles. Without a budget nothing here is used."""

from __future__ import annotations

import functools

import numpy as np

from aot.ir import Graph, Node
from aot.kernels.base import Candidate, HostOp, KernelChoice, NodeContext
from aot.kernels.tflite_bands import transpose_layer
from aot.kernels.tflite_cost import IN_PLACE_OP

# the node's op (tflite_cost counts it by it): a Transpose the plan writes over its input, an op of its own so that
# no run in row bands takes it as its first layer again (transpose_layer reads op "Transpose" only)
OP = IN_PLACE_OP
KERNEL = "aotc_transpose2d_in_place"


MAX_CYCLES = 1024  # leaders (4 bytes of flash each) a permutation may take: beyond, the Transpose is not offered


def applies(node: Node, graph: Graph) -> bool:
    """Whether the Transpose may be written over its input: a channels-first image of bytes to NHWC read by a
    conv (transpose_layer's), its input read by nothing else and no graph output (its bytes die at this step),
    small enough for the kernel's index arithmetic (C x H x W x min(C, 4) below 2^32) and of at most MAX_CYCLES
    cycles."""
    if node.op != "Transpose" or transpose_layer(node, graph) is None:
        return False
    x = node.inputs[0]
    _, c, h, w = graph.tensors[x].shape
    readers = [n for n in graph.nodes if x in n.inputs]
    return (len(readers) == 1 and readers[0].inputs.count(x) == 1 and x not in graph.outputs
            and c * h * w * min(c, 4) < 1 << 32 and leaders(c, h * w) is not None)


@functools.lru_cache(maxsize=16)
def leaders(rows: int, cols: int) -> tuple[int, ...] | None:
    """The least index of each cycle longer than one of the in-place transposition of a rows x cols matrix (the
    byte at i moves to i * rows mod (rows cols - 1)), found by following them all; None beyond MAX_CYCLES."""
    m1 = rows * cols - 1
    seen = bytearray(m1 + 1)
    out: list[int] = []
    for s in range(1, m1):
        if seen[s]:
            continue
        i, n = s, 0
        while True:
            i = i * rows % m1
            seen[i] = 1
            n += 1
            if i == s:
                break
        if n > 1:
            if len(out) == MAX_CYCLES:
                return None
            out.append(s)
    return tuple(out)


def node_in_place(node: Node) -> Node:
    """The Transpose as the node written over its input (its own name: the selection's entries are by name)."""
    return Node(OP, f"{node.name}_in_place", list(node.inputs[:1]), list(node.outputs[:1]),
                {"perm": list(node.attrs["perm"]), "over_input": True}, node.sources())


def _emit(ctx: NodeContext) -> None:
    """The permutation over the input where the plan put the output at the input's offset, else (a plan that did
    not write over the input) the usual transpose into the output."""
    x, y = ctx.inputs[0], ctx.outputs[0]
    _, c, h, w = ctx.shape(x)
    p = ctx.params("aotc_transpose2d_params", {"batch": "1", "rows": str(c), "cols": str(h * w), "elem_size": "1"},
                   comment=f"Transpose {list(ctx.shape(x))} perm [0, 2, 3, 1] -> {list(ctx.shape(y))}")
    if ctx.emitter.written_in_place(y, x, 0):
        cycles = leaders(c, h * w)
        assert cycles is not None, ctx.node.name
        table = ctx.const_array("leaders", np.array(cycles or (0,), np.uint32),
                                f"the least index of each of the {len(cycles)} cycles of the permutation")
        ctx.comment("channels-last over the input itself, cycle by cycle")
        ctx.call(KERNEL, p, ctx.ptr(y), table, str(len(cycles)))  # y: x's bytes (x's pointer is const)
    else:
        ctx.call("aotc_transpose2d", p, ctx.ptr(x), ctx.ptr(y))


CANDIDATE = Candidate(KERNEL, lambda n, g, budget: KernelChoice(KERNEL), also=("aotc_transpose2d",))
HOSTOP = HostOp(emit=_emit, family="shape", dtypes=("int8", "uint8"), inplace=0, inplace_reordered=True,
                kernels=(CANDIDATE,))
