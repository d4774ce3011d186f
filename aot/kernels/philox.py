"""TFLite's seeded random ops (issue 50): RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL (aotc.tflite's TflRandom),
and MULTINOMIAL (TflMultinomial), run by runtime_c/kernels/philox/philox.c, LiteRT's Philox4x32-10 stream. The
generator's counter is state the caller carries (input `<out>_state`, output `<out>_state_next`), so successive
calls give LiteRT's successive invokes, and `<name>_reset_state` restarts the stream where a fresh interpreter
starts it. STABLEHLO_RNG_BIT_GENERATOR (TflRngBitGenerator): Philox4x32-10 or ThreeFry2x32-20 words of its uint64
state input, as LiteRT's kernel, a pure function of that input."""

from __future__ import annotations

from aot.csource.format import c_int
from aot.ir import Graph, Node
from aot.ir import tflite_ops as tfl
from aot.kernels.base import HostOp, NodeContext, fixed_scratch
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


def _emit_multinomial(ctx: NodeContext) -> None:
    logits, state = ctx.inputs
    y, nxt = ctx.outputs
    batch, classes = ctx.shape(logits)
    samples = ctx.shape(y)[1]
    key0, key1 = int(ctx.attrs["key0"]) % 2**32, int(ctx.attrs["key1"]) % 2**32
    p = ctx.params("aotc_philox_multinomial_params", {
        "batch": c_int(batch), "classes": c_int(classes), "samples": c_int(samples), "key0": f"{key0:#x}u",
        "key1": f"{key1:#x}u", "out64": str(int(ctx.tensor(y).dtype == "int64")),
    }, comment=f"MULTINOMIAL: {samples} draws from each of {batch} rows of {classes} logits, Philox4x32-10 keyed "
               f"{key1:#010x}{key0:08x}, counter {state} -> {nxt}")
    ctx.call("aotc_philox_multinomial", p, ctx.ptr(state), ctx.ptr(logits), ctx.ptr(y), ctx.ptr(nxt),
             ctx.scratch("double"))


def _check_multinomial(node: Node, graph: Graph) -> str | None:
    logits, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    if len(logits.shape) != 2 or logits.shape[1] < 1:
        return f"logits {list(logits.shape)} are not [batch, classes >= 1]"
    if y.dtype not in ("int32", "int64") or len(y.shape) != 2 or y.shape[0] != logits.shape[0]:
        return f"output {y.dtype} {list(y.shape)} is not int32 or int64 [{logits.shape[0]}, num_samples]"
    if graph.tensors[node.inputs[1]].size != COUNTER_WORDS:
        return f"the counter state is not {COUNTER_WORDS} words"
    return None


def _emit_rng_bits(ctx: NodeContext) -> None:
    (state,) = ctx.inputs
    nxt, y = ctx.outputs
    threefry = bool(int(ctx.attrs["threefry"]))
    out = ctx.tensor(y)
    wide = int(out.dtype in ("int64", "uint64"))
    words = ctx.tensor(state).size
    kind = "ThreeFry2x32-20" if threefry else "Philox4x32-10"
    ctx.comment(f"STABLEHLO_RNG_BIT_GENERATOR: {out.size} {out.dtype} of {kind} from the state {state} ({words} words) "
                f"-> {nxt}")
    if threefry:
        ctx.call("aotc_rng_bits_threefry", ctx.ptr(state), ctx.ptr(nxt), f"{out.size}u", str(wide), ctx.ptr(y))
    else:
        ctx.call("aotc_rng_bits_philox", f"{words}u", ctx.ptr(state), ctx.ptr(nxt), f"{out.size}u", str(wide),
                 ctx.ptr(y))


def _check_rng_bits(node: Node, graph: Graph) -> str | None:
    state, nxt = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    sizes = (2,) if int(node.attrs["threefry"]) else (2, 3)
    if len(state.shape) != 1 or state.size not in sizes or nxt.dtype != "uint64" \
            or tuple(nxt.shape) != tuple(state.shape):
        return f"the state {state.dtype} {list(state.shape)} is not uint64 of {' or '.join(map(str, sizes))} words"
    if graph.tensors[node.outputs[1]].dtype not in ("int32", "uint32", "int64", "uint64"):
        return "the output is not int32, uint32, int64 or uint64"
    return None


OPS: dict[str, HostOp] = {
    tfl.RANDOM: HostOp(_emit_random, family="philox", dtypes=("uint32",), check=_check_random),
    tfl.MULTINOMIAL: HostOp(_emit_multinomial, family="philox", dtypes=("float32",), check=_check_multinomial,
                            kernels=(fixed_scratch("aotc_philox_multinomial",
                                                   lambda n, g: 8 * g.tensors[n.inputs[0]].shape[1]),)),
    tfl.RNG_BIT_GENERATOR: HostOp(_emit_rng_bits, family="philox", dtypes=("uint64",), check=_check_rng_bits),
}
