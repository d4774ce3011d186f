"""The random ops with a seed (issue 51), drawn as onnx's reference implementation draws them: numpy's
legacy RandomState(seed), a Mersenne Twister seeded afresh at each run (runtime_c/kernels/random/random.c),
so a seeded op gives the reference's values, the same every run. Today Dropout with training_mode true or
read at run time (its ratio read at run time too); an unseeded random op is refused on import."""

from __future__ import annotations

from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext, fixed_scratch
from aot.kernels.c_defines import define

MT_WORDS = define("aotc_random.h", "AOTC_MT19937_WORDS")  # the generator's state: the kernel's scratch


def _emit_dropout(ctx: NodeContext) -> None:
    x, y = ctx.inputs[0], ctx.outputs[0]
    ratio = ctx.inputs[1] if len(ctx.inputs) > 1 else ""
    training = ctx.inputs[2] if len(ctx.inputs) > 2 else ""
    mask = ctx.outputs[1] if len(ctx.outputs) > 1 else ""
    seed = int(ctx.attrs["seed"])
    ctx.comment(f"Dropout with seed {seed}: numpy's RandomState({seed}).uniform draws, as onnx's reference")
    ctx.call("aotc_dropout_f32", f"{ctx.tensor(y).size}u", f"{seed}u", ctx.ptr(x), ctx.ptr(ratio), ctx.ptr(training),
             ctx.ptr(y), ctx.ptr(mask), ctx.scratch("uint32_t"))


def _check_dropout(node: Node, graph: Graph) -> str | None:
    seed = node.attrs.get("seed")
    if seed is None or not 0 <= int(seed) < 2**32:
        return "a training Dropout without a seed in 0 .. 2^32 - 1 draws an unspecified mask"
    ratio = node.inputs[1] if len(node.inputs) > 1 else ""
    if ratio and (graph.tensors[ratio].dtype != "float32" or graph.tensors[ratio].size != 1):
        return "ratio must be one float32"
    training = node.inputs[2] if len(node.inputs) > 2 else ""
    if training and graph.tensors[training].size != 1:
        return "training_mode must be one bool"
    return None


OPS: dict[str, HostOp] = {
    "Dropout": HostOp(_emit_dropout, family="random", dtypes=("float32",), check=_check_dropout,
                      kernels=(fixed_scratch("aotc_dropout_f32", lambda n, g: MT_WORDS * 4),)),
}
