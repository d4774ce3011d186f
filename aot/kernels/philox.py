"""TFLite's seeded random ops (issue 50): RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL (aotc.tflite's TflRandom),
run by runtime_c/kernels/philox/philox.c, LiteRT's Philox4x32-10 stream. The generator's counter is state the
caller carries (input `<out>_state`, output `<out>_state_next`), so successive calls give LiteRT's successive
invokes, and `<name>_reset_state` restarts the stream where a fresh interpreter starts it."""

from __future__ import annotations

from aot.ir import Graph, Node
from aot.ir import tflite_ops as tfl
from aot.kernels.base import HostOp, NodeContext
from aot.kernels.c_defines import define

COUNTER_WORDS = define("aotc_philox.h", "AOTC_PHILOX_COUNTER_WORDS")


def _emit_random(ctx: NodeContext) -> None:
    state = ctx.inputs[0]
    y, nxt = ctx.outputs
    normal = int(ctx.attrs["normal"])
    key0, key1 = int(ctx.attrs["key0"]) % 2**32, int(ctx.attrs["key1"]) % 2**32  # the seed's words, as int32 bits
    n = ctx.tensor(y).size
    ctx.comment(f"{'RANDOM_STANDARD_NORMAL' if normal else 'RANDOM_UNIFORM'} of {n} floats: Philox4x32-10 keyed "
                f"{key1:#010x}{key0:08x}, counter {state} -> {nxt}")
    ctx.call("aotc_philox_normal_f32" if normal else "aotc_philox_uniform_f32", f"{n}u", f"{key0:#x}u",
             f"{key1:#x}u", ctx.ptr(state), ctx.ptr(y), ctx.ptr(nxt))


def _check_random(node: Node, graph: Graph) -> str | None:
    state = graph.tensors[node.inputs[0]]
    if state.size != COUNTER_WORDS:
        return f"the counter state has {state.size} words, not {COUNTER_WORDS}"
    if graph.tensors[node.outputs[0]].dtype != "float32":
        return "the output is not float32"
    return None


OPS: dict[str, HostOp] = {
    tfl.RANDOM: HostOp(_emit_random, family="philox", dtypes=("uint32",), check=_check_random),
}
