"""Host ops of the 'tflite_int8' family: TFLite's integer kernels, NHWC int8, with its fixed-point
requantisation (runtime_c/kernels/tflite_int8/, a file per strategy: tflite_int8_conv.c, ...). The nodes
come from the TFLite frontend (aot/frontend/tflite/int8.py), which has computed every multiplier, shift
and clamp; the emitters only lay them out. They are separate ops from the QLinear family because TFLite's arithmetic is
not onnxruntime's (fixed-point multipliers, not float scales) and its layout is NHWC.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from aot.csource.format import c_float, c_int
from aot.ir import Graph, Node
from aot.kernels.base import Candidate, HostOp, KernelChoice, KernelFacts, NodeContext, TargetTraits, by_type
from aot.kernels.c_defines import define
from aot.kernels.quant import interleave_rows
from aot.kernels.quant_gemm import dsp_dense_kernels
from aot.qmath import residual_linear


def _requant_arrays(ctx: NodeContext) -> tuple[str, str]:
    return (ctx.const_array("mult", np.asarray(ctx.attrs["mult"], np.int32)),
            ctx.const_array("shift", np.asarray(ctx.attrs["shift"], np.int32)))


def _bias(ctx: NodeContext) -> str:
    return ctx.ptr(ctx.inputs[2]) if len(ctx.inputs) > 2 and ctx.inputs[2] else "NULL"


def _conv_kernel(node: Node, graph: Graph) -> str:
    """The C function that runs a conv node, by its op and input type (16x8: _s16)."""
    fn = {"TflDepthwiseConv2D": "aotc_tfl_depthwise_s8", "TflTransposeConv": "aotc_tfl_transpose_conv_s8",
          "TflConv2DAdd": "aotc_tfl_conv_add_s8"}.get(node.op, "aotc_tfl_conv_s8")
    return fn.replace("_s8", "_s16") if graph.tensors[node.inputs[0]].dtype == "int16" else fn


def _emit_conv(ctx: NodeContext) -> None:
    p = _conv_params(ctx)
    fn = ctx.choice.kernel
    if fn.endswith("_packed"):
        wp, bias = _packed_weights(ctx)
        ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), wp, bias, ctx.ptr(ctx.outputs[0]), ctx.scratch("uint8_t"))
        return
    scratch = [ctx.scratch("uint32_t")] if fn in ("aotc_tfl_conv_s8", "aotc_tfl_depthwise_s8") else []
    ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]), _bias(ctx), ctx.ptr(ctx.outputs[0]), *scratch)


def _conv_params(ctx: NodeContext) -> str:
    """The node's aotc_tfl_conv_params."""
    a = ctx.attrs
    n, h, w, c = ctx.shape(ctx.inputs[0])
    _, oh, ow, oc = ctx.shape(ctx.outputs[0])
    mult, shift = _requant_arrays(ctx)
    depthwise = ctx.node.op == "TflDepthwiseConv2D"
    p = ctx.params("aotc_tfl_conv_params", {
        "n": c_int(n), "h": c_int(h), "w": c_int(w), "c": c_int(c), "oh": c_int(oh), "ow": c_int(ow),
        "oc": c_int(oc), "kh": c_int(a["kernel"][0]), "kw": c_int(a["kernel"][1]), "sh": c_int(a["strides"][0]),
        "sw": c_int(a["strides"][1]), "dh": c_int(a["dilations"][0]), "dw": c_int(a["dilations"][1]),
        "pad_top": c_int(a["pads"][0]), "pad_left": c_int(a["pads"][1]),
        "depth_multiplier": c_int(oc // c if depthwise else 1), "x_zero": c_int(a["x_zero"]),
        "y_zero": c_int(a["y_zero"]), "y_min": c_int(a["y_min"]), "y_max": c_int(a["y_max"]),
        "mult": mult, "shift": shift,
        # the M-profile path's tile of positions (_fit_conv)
        **({"dsp_tile": c_int(ctx.choice.detail)} if ctx.choice.facts.isa == "m-profile" and ctx.choice.detail
           else {}),
        **(_widened_fields(ctx) if ctx.choice.facts.widened_weights else {}),
        **({"dsp_usual": c_int(1)} if ctx.choice.facts.isa == "m-profile" and _dsp_usual(ctx) else {}),
        **_dw_half_base(ctx),
    }, comment=f"{ctx.node.op} NHWC {[n, h, w, c]} -> {[n, oh, ow, oc]}, TFLite requantisation")
    return p


def _dsp_usual(ctx: NodeContext) -> bool:
    """p->dsp_usual: a CONV_2D whose every channel takes the DSP path's usual requantisation (tfl_dsp_usual: the
    clamp's top 127, its bottom -128 or above, _usual_requant's bounds at DSP_CONV_RIGHT), which tfl_conv_s8_dsp
    then does not check again a call."""
    if ctx.node.op not in ("TflConv2D", "TflConv2DAdd"):
        return False
    a, x = ctx.attrs, ctx.graph.tensors[ctx.node.inputs[0]]
    k = a["kernel"][0] * a["kernel"][1] * x.shape[3]
    return a["y_max"] == 127 and a["y_min"] >= -128 and \
        _usual_requant(k, _bias_of(ctx.node, ctx.graph), a["mult"], a["shift"], DSP_CONV_RIGHT)


def _dw_half_base(ctx: NodeContext) -> dict[str, str]:
    """p->dsp_dwb (dw_half_base) on the DSP path's kernel (not --widened-weights', whose dsp_dw holds the whole
    set-up), where the bundle compiles the ring that reads it (a --flash-budget level may leave it out) and Helium's
    depthwise does not take the layer first (the M55: it takes every layer dsp_dwb would be given)."""
    em = ctx.emitter
    if ctx.choice.facts != M_PROFILE or ctx.choice.kernel != "aotc_tfl_depthwise_s8" or getattr(em, "helium", False) \
            or "AOTC_TFL_DW_RING" in getattr(em, "paths_left_out", ()):
        return {}
    if (half := dw_half_base(ctx.node, ctx.graph)) is None:
        return {}
    return {"dsp_dwb": ctx.const_array("dwb", half, "each channel's bias less x_zero times its 9 weights' sum: the "
                                                   "ring path's sums' start, halved")}


def dw_half_base(node: Node, graph: Graph) -> np.ndarray | None:
    """p->dsp_dwb of a stride-1 3 x 3 DEPTHWISE_CONV_2D of depth multiplier 1 with the ring's clamp, at least as wide
    as tall (a layer taller than wide goes by columns, tfl_dsp_dw_columns, which does not read it: KWS DS-CNN's 25 x 5):
    each channel's bias less x_zero times its 9 weights' sum, so the ring path's set-up of a group does not sum the
    weights a call (4 bytes a channel); only where every channel passes that set-up's tests (tfl_dsp_dw_ring_setup:
    the sum in [-2^29, 2^29), a right shift in [1, 22], a multiplier not negative), which the C then does not make.
    None where not."""
    a = node.attrs
    if node.op != "TflDepthwiseConv2D" or tuple(a["kernel"]) != (3, 3) or tuple(a["strides"]) != (1, 1) or \
            tuple(a["dilations"]) != (1, 1) or a["y_min"] != -128 or a["y_max"] != 127:
        return None
    x, y, w = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]], graph.tensors[node.inputs[1]].data
    c, (_, oh, ow, oc) = x.shape[3], y.shape
    if x.dtype != "int8" or y.dtype != "int8" or c != oc or c % 4 or ow < oh or w is None or \
            len(node.inputs) > 2 and node.inputs[2] and graph.tensors[node.inputs[2]].data is None:
        return None
    half = _bias_of(node, graph) - int(a["x_zero"]) * np.asarray(w, np.int64).reshape(9, c).sum(axis=0)
    right, mult = -np.asarray(a["shift"], np.int64), np.asarray(a["mult"], np.int64)
    if not (np.all((half >= -(1 << 29)) & (half < 1 << 29)) and np.all((right >= 1) & (right <= 22))
            and np.all(mult >= 0)):
        return None
    return np.ascontiguousarray(half.astype(np.int32))


def _dsp_fused(node: Node, graph: Graph, tile: int) -> bool:
    """Whether tfl_conv_s8_dsp requantises in the MAC kernel (its `fused`): one block of quads, whole groups
    of channels, the lower clamp at -128, tfl_dsp_usual's bounds, at least 6 positions a tile. The widened
    weights are doubled where it holds (saving the requantisation's shift); the C reads doubled ones only where
    it finds it so (else it widens w itself, as without them: slower, the same results)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    a = node.attrs
    k = a["kernel"][0] * a["kernel"][1] * x.shape[3]
    kq, oc = -(-k // 4), y.shape[3]
    if kq > DSP_KC or oc % 4 or a["y_min"] != -128 or a["y_max"] != 127 or _conv_dsp_scratch(node, graph, tile)[1] < 6:
        return False
    return _usual_requant(k, _bias_of(node, graph), a["mult"], a["shift"], DSP_CONV_RIGHT)


def _bias_of(node: Node, graph: Graph) -> np.ndarray:
    """The node's constant bias (zeros where it has none) as int64, a channel each."""
    oc = graph.tensors[node.outputs[0]].shape[3]
    if len(node.inputs) > 2 and node.inputs[2]:
        return np.asarray(graph.const(node.inputs[2]), np.int64).reshape(-1)
    return np.zeros(oc, np.int64)


def _usual_requant(k: int, bias: np.ndarray, mult: Sequence[int], shift: Sequence[int], right_max: int = 22) -> bool:
    """The DSP paths' usual requantisation on every channel (tfl_dsp_usual with right_max DSP_CONV_RIGHT, and
    tfl_dsp_dw_usual with k = 9): a right shift in [1, right_max], no INT32_MIN multiplier, k products and the bias
    below 2^30 in size."""
    return all(int(m) != INT32_MIN and 1 <= -int(s) <= right_max and k * DSP_PRODUCT_MAX + abs(int(b)) < 1 << 30
               for m, s, b in zip(mult, shift, bias, strict=True))


def widen_weights(w: np.ndarray, doubled: bool) -> np.ndarray:
    """CONV_2D's int8 weights [oc][k] as tfl_conv_s8_dsp widens each group of 4 channels a block (the last
    group's past oc repeating its last channel): [group][quad][8] words, aotc_dsp_widen_weights4's (bytes 0 and
    2 of the 4 channels' quads as 16-bit halves, then bytes 1 and 3), rows past k zeros; each doubled where
    `doubled` (tfl_dsp_widen_weights4x2's)."""
    oc, k = w.shape
    kq, groups = -(-k // 4), -(-oc // 4)
    rows = np.zeros((4 * groups, 4 * kq), np.int32)
    rows[:oc, :k] = w
    rows[oc:] = rows[oc - 1]
    q = rows.reshape(groups, 4, kq, 4).transpose(0, 2, 1, 3) * (2 if doubled else 1)  # [group][quad][channel][byte]
    half = q.astype(np.uint32) & 0xFFFF
    return np.ascontiguousarray(np.concatenate([half[..., 0] | half[..., 2] << 16, half[..., 1] | half[..., 3] << 16],
                                               axis=2).astype(np.uint32))


def widened_bytes(node: Node, graph: Graph, tile: int) -> int:
    """The flash the node's widened weights take (widen_weights), from its weights' shape [oc, kh, kw, c] (a
    layer of a run in row bands keeps them, not its activations), and where its MAC kernel requantises at the
    plan's tile (_dsp_fused) its terms (requant_terms: 64 bytes a group of 4 channels); DEPTHWISE_CONV_2D's
    set-up (depthwise_blocks: 4 DSP_DW_BLOCK bytes a group of 4 channels), less the dsp_dwb it stands for."""
    if node.op == "TflDepthwiseConv2D":
        oc = graph.tensors[node.outputs[0]].shape[3]
        return 4 * DSP_DW_BLOCK * (oc // 4) - (4 * oc if dw_half_base(node, graph) is not None else 0)
    oc, *rest = graph.tensors[node.inputs[1]].shape
    terms = 64 * (oc // 4) if _dsp_fused(node, graph, tile) else 0
    return 32 * -(-oc // 4) * -(-math.prod(rest) // 4) + terms


def _widened_fields(ctx: NodeContext) -> dict[str, str]:
    """aotc_tfl_conv_params' dsp_wx and dsp_wx_dbl: the weights widened at compile time (--widened-weights);
    DEPTHWISE_CONV_2D's dsp_dw (depthwise_blocks)."""
    if ctx.node.op == "TflDepthwiseConv2D":
        a = ctx.attrs
        w = np.asarray(ctx.const(ctx.inputs[1]), np.int8)
        dw = ctx.const_array("dw", depthwise_blocks(w, _bias_of(ctx.node, ctx.graph), a["mult"], a["shift"],
                                                    a["x_zero"], a["y_zero"]),
                             "the fused 3 x 3 set-up (--widened-weights): per group of 4 channels the 9 taps' weights "
                             "widened and doubled, each channel's mult, ra, right, the sums' start")
        return {"dsp_dw": dw}
    doubled = _dsp_fused(ctx.node, ctx.graph, ctx.choice.detail)
    w = np.asarray(ctx.const(ctx.inputs[1]), np.int8)
    wx = ctx.const_array("wx", widen_weights(w.reshape(w.shape[0], -1), doubled),
                         "the weights widened for SMLAD (--widened-weights): [group of 4 channels][quad][8] words, "
                         + ("doubled, " if doubled else "") + "aotc_dsp_widen_weights4's layout")
    if not doubled:
        return {"dsp_wx": wx, "dsp_wx_dbl": c_int(0)}
    # where the MAC kernel requantises, its terms too (64 bytes a group of 4 channels), read in place with the
    # weights by tfl_dsp_groups_rqb (not built a group and tile)
    a = ctx.attrs
    rq = ctx.const_array("rq", requant_terms(_bias_of(ctx.node, ctx.graph), a["mult"], a["shift"], a["y_zero"]),
                         "the MAC kernel's requantisation terms (--widened-weights): per group of 4 channels, each "
                         "bias doubled, then each channel's mult, ra, right")
    return {"dsp_wx": wx, "dsp_wx_dbl": c_int(1), "dsp_rq": rq}


def requant_terms(bias: np.ndarray, mult: Sequence[int], shift: Sequence[int], y_zero: int) -> np.ndarray:
    """aotc_tfl_conv_params' dsp_rq: tfl_dsp_group_rq's block of each group of 4 channels (oc a multiple of 4, every
    channel's right shift above 0: tfl_dsp_usual's), 16 words: the 4 biases doubled, then each channel's mult,
    ra = 2^(right-1) + y_zero 2^right and right."""
    oc = len(bias)
    right = -np.asarray(shift, np.int64)
    terms = np.stack([np.asarray(mult, np.int64), (1 << (right - 1)) + y_zero * (1 << right), right], axis=1)
    block = np.concatenate([2 * np.asarray(bias, np.int64).reshape(oc // 4, 4), terms.reshape(oc // 4, 12)], axis=1)
    return np.ascontiguousarray(((block + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32))


def depthwise_blocks(w: np.ndarray, bias: np.ndarray, mult: Sequence[int], shift: Sequence[int], x_zero: int,
                     y_zero: int) -> np.ndarray:
    """aotc_tfl_conv_params' dsp_dw: tfl_depthwise_s8_dsp's fused 3 x 3 set-up of each group of 4 channels (weights
    [1, 3, 3, oc], oc a multiple of 4), DSP_DW_BLOCK words: each tap's [c0, c2] and [c1, c3] doubled as 16-bit halves
    (the run-time SXTB16 and SADD16's wq), each channel's mult, ra = 2^(right-1) + y_zero 2^right, right
    (tfl_dsp_dw_usual's), then each channel's sums' start: 2 bias - 2 x_zero times its 9 weights' sum, mod 2^32."""
    taps = np.asarray(w, np.int64).reshape(9, -1)  # [tap][channel]
    oc = taps.shape[1]
    q = (2 * taps).reshape(9, oc // 4, 4).transpose(1, 0, 2) & 0xFFFF  # [group][tap][channel]
    wq = np.stack([q[..., 0] | q[..., 2] << 16, q[..., 1] | q[..., 3] << 16], axis=2).reshape(oc // 4, 18)
    right = -np.asarray(shift, np.int64)
    terms = np.stack([np.asarray(mult, np.int64), (1 << (right - 1)) + y_zero * (1 << right), right], axis=1)
    base = 2 * np.asarray(bias, np.int64) - 2 * x_zero * taps.sum(axis=0)
    block = np.concatenate([wq, terms.reshape(oc // 4, 12), base.reshape(oc // 4, 4)], axis=1)
    return np.ascontiguousarray((block % (1 << 32)).astype(np.uint32))


def _dw_fused(node: Node, graph: Graph) -> bool:
    """Whether tfl_depthwise_s8_dsp takes every group of the node by its fused 3 x 3 path (TFL_DSP_DW_BAND at the
    kernel's own run, depth multiplier 1, channels a multiple of 4, tfl_dsp_dw_usual's conditions on each group):
    where dsp_dw's set-up at compile time stands for the run time's."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    a = node.attrs
    c, oc = x.shape[3], y.shape[3]
    if x.dtype != "int8" or y.dtype != "int8" or oc != c or c % 4 or not _depthwise_band(node, False) \
            or a["y_min"] != -128 or a["y_max"] != 127 or graph.tensors[node.inputs[1]].data is None \
            or len(node.inputs) > 2 and node.inputs[2] and graph.tensors[node.inputs[2]].data is None:
        return False
    return _usual_requant(9, _bias_of(node, graph), a["mult"], a["shift"])


def _widens_dw(node: Node, graph: Graph, traits: TargetTraits) -> bool:
    """--widened-weights on a core with SMLAD: an int8 DEPTHWISE_CONV_2D whose every group the fused 3 x 3 path
    takes (_dw_fused), its set-up then emitted (dsp_dw)."""
    return traits.widened_weights and traits.dsp and not traits.portable and _dw_fused(node, graph)


def _widens(node: Node, graph: Graph, traits: TargetTraits) -> bool:
    """--widened-weights on a core with SMLAD: an int8 CONV_2D with constant weights that the DSP path takes."""
    return traits.widened_weights and (traits.dsp or traits.helium) and not traits.portable and \
        graph.tensors[node.inputs[1]].data is not None and _conv_dsp_scratch(node, graph)[1] >= 2


def _emit_conv_add(ctx: NodeContext) -> None:
    """CONV_2D with its residual ADD fused (aot/passes/fuse_residual.py): aotc_tfl_conv_add_s8, the
    output written over the residual where the plan put them in one buffer."""
    p = _conv_params(ctx)
    r = _residual_params(ctx)
    if ctx.choice.kernel.endswith("_packed"):
        wp, bias = _packed_weights(ctx)
        ctx.call(ctx.choice.kernel, p, r, ctx.ptr(ctx.inputs[0]), wp, bias, ctx.ptr(ctx.inputs[3]),
                 ctx.ptr(ctx.outputs[0]), ctx.scratch("uint8_t"))
        return
    scratch = ctx.scratch("uint32_t") if ctx.choice.scratch else "NULL"
    ctx.call(ctx.choice.kernel, p, r, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]), _bias(ctx),
             ctx.ptr(ctx.inputs[3]), ctx.ptr(ctx.outputs[0]), scratch)


def _residual_params(ctx: NodeContext) -> str:
    """The fused conv's aotc_tfl_residual_params: the ADD's."""
    y = ctx.outputs[0]
    first = bool(ctx.attrs["conv_is_x1"])
    return ctx.params("aotc_tfl_residual_params", {
        "add": "{" + ", ".join(f".{k} = {v}" for k, v in _binary_fields(ctx, ctx.attrs["add"], "TflAdd", y,
                                                                           y, y).items()) + "}",
        "conv_x1": c_int(int(first)),
        **(_residual_linear(ctx) if ctx.choice.kernel.endswith("_packed") else {}),
    }, comment=f"the residual ADD fused into the conv: {'conv + residual' if first else 'residual + conv'}, "
               "TFLite requantisation")


def _residual_linear(ctx: NodeContext) -> dict[str, str]:
    """The packed kernel's fields lin_a, lin_b, lin_c, lin_sh (aotc_tflite_int8.h): the fused ADD as one linear form
    of the conv's output and the residual's byte, where quant.residual_linear finds one exact on every pair."""
    a = ctx.attrs["add"]
    form = residual_linear((a.get("x1_zero", 0), a.get("x2_zero", 0), a.get("y_zero", 0)), tuple(a["m"]),
                           (a["y_min"], a["y_max"]), (ctx.attrs["y_min"], ctx.attrs["y_max"]),
                           bool(ctx.attrs["conv_is_x1"]))
    if form[3] == 0:
        return {}
    return {f"lin_{k}": c_int(v) for k, v in zip(("a", "b", "c", "sh"), form, strict=True)}


# the DSP paths' blocks, which the scratch sizes below follow (aotc_tflite_int8.h, which computes the same sizes)
DSP_KC, DSP_NP_MAX, DSP_PATCH_WORDS, DSP_ACC_WORDS = (define("aotc_tflite_int8.h", f"TFL_DSP_{n}")
                                                      for n in ("KC", "NP_MAX", "PATCH_WORDS", "ACC_WORDS"))
DSP_NP_MAX_OTHER = 64  # the plan's largest tile but for 1 x 1 stride-1 convs (DSP_NP_MAX's: aotc_tflite_int8.h)
DSP_TAPS, DSP_DW_RUN, DSP_DW_PAD, DSP_DW_BLOCK = (define("aotc_tflite_int8.h", f"TFL_DSP_{n}")
                                                 for n in ("TAPS", "DW_RUN", "DW_PAD", "DW_BLOCK"))
# CONV_2D's usual requantisation's largest right shift (tfl_dsp_usual's; the depthwise path's stays at 22)
DSP_CONV_RIGHT = define("aotc_tflite_int8.h", "TFL_DSP_CONV_RIGHT")
# tflite_int8_dsp.h's TFL_DSP_PRODUCT_MAX (defined there for the DSP builds only): the largest |(x - x_zero) w|
DSP_PRODUCT_MAX = 255 * 128
DSP_NP_MIN = 28  # the smallest tile the plan gives CONV_2D: fewer positions cost more than the memory saves
# ... unless its patches would pass this (_min_tile): 9 KiB, as the ONNX route's PATCH_FLOOR (aot/kernels/quant.py);
# on ResNet-8 (its residual ADDs fused, so less memory spare at the 3 x 3 convs' steps) 4 KiB cost 5 % more
# instructions than 9 KiB, which keeps the arena at 0.82x TFLM's
DSP_PATCH_FLOOR_WORDS = 2304


def dsp_block_quads(kq: int) -> int:
    """Quads of patch rows a block of tfl_conv_s8_dsp (aotc_tflite_int8.h's TFL_DSP_BLOCK_QUADS): all kq up to
    DSP_KC, else the fewest blocks of at most DSP_KC, balanced."""
    blocks = -(-kq // DSP_KC) if kq > DSP_KC else 1
    return -(-kq // blocks)


def _conv_dsp_scratch(node: Node, graph: Graph, tile: int = DSP_NP_MAX, block: int = 0) -> tuple[int, int]:
    """tfl_conv_s8_dsp's scratch at up to `tile` positions a tile (even): the tile's patches, one
    group of 4 channels' widened weights and the sums, in words as the C kernel lays them out; and the
    tile it takes (0: the path does not apply). Helium's path on the M55 takes _conv_mve_scratch instead.
    `block`: blocks of at most that many quads, unbalanced (the last the rest: the kernel's before
    TFL_DSP_BLOCK_QUADS; _min_tile's bound), not the kernel's."""
    n, _, _, c = graph.tensors[node.inputs[0]].shape
    _, oh, ow, oc = graph.tensors[node.outputs[0]].shape
    kh, kw = node.attrs["kernel"]
    if node.op not in ("TflConv2D", "TflConv2DAdd") or graph.tensors[node.inputs[0]].dtype != "int8":
        return 0, 0
    k = kh * kw * c
    kq = -(-k // 4)
    kc, groups, total = min(kq, block) if block else dsp_block_quads(kq), -(-oc // 4), n * oh * ow
    big = (kh, kw) == (1, 1) and tuple(node.attrs["strides"]) == (1, 1)
    most = DSP_NP_MAX if big else DSP_NP_MAX_OTHER
    np_ = min((DSP_PATCH_WORDS // (2 * kc)) & ~1, most) if kc else 0
    if kq > kc and np_ * 4 * groups > DSP_ACC_WORDS:
        np_ = (DSP_ACC_WORDS // (4 * groups)) & ~1
    np_ = min(np_, (total + 1) & ~1, tile)
    if np_ < 2 or k == 0:
        return 0, 0
    return 4 * (2 * np_ * kc + 8 * kc + (4 * np_ * groups if kq > kc else 4 * np_)), np_


def _min_tile(node: Node, graph: Graph) -> int:
    """The tile the plan gives CONV_2D even where its step spares less memory: DSP_NP_MIN positions,
    or fewer where their patches would pass DSP_PATCH_FLOOR_WORDS (long patch rows: the arena then
    grows by 9 KiB at most); then fewer while its scratch passes what that tile took with the 2 x 2
    block's one channel pair of weights and sums (the 4 x 2 block's 4 channels take 4 kc + 2 np words
    more), so that the floor, which sets the arena where memory is tight, stays where it was. Those with
    blocks of DSP_KC quads, the last the rest, as before the kernel balanced them (TFL_DSP_BLOCK_QUADS); the
    balanced blocks' tile then the most positions within that tile's scratch (more where the blocks are
    smaller: IC02's 3 x 3 x 40 layers 16 and 18 -> 20 and 24 positions, in no more memory)."""
    kh, kw = node.attrs["kernel"]
    kq = -(-kh * kw * graph.tensors[node.inputs[0]].shape[3] // 4)
    kc, oc = min(kq, DSP_KC), graph.tensors[node.outputs[0]].shape[3]
    if not kc:
        return 2
    np_ = max(2, min(DSP_NP_MIN, (DSP_PATCH_FLOOR_WORDS // (2 * kc)) & ~1))
    cap = 4 * (2 * np_ * kc + 4 * kc + (2 * np_ * ((oc + 1) // 2) if kq > kc else 2 * np_))
    while np_ > 2 and _conv_dsp_scratch(node, graph, np_, DSP_KC)[0] > cap:
        np_ -= 2
    if dsp_block_quads(kq) == kc:
        return np_
    # (with a fused ADD, its tile of conv outputs too: np oc bytes, in words)
    outs = (lambda t: 4 * -(-t * oc // 4)) if node.op == "TflConv2DAdd" else (lambda t: 0)  # noqa: E731
    bytes_ = _conv_dsp_scratch(node, graph, np_, DSP_KC)[0] + outs(np_)
    more = np_
    while _conv_dsp_scratch(node, graph, more + 2)[1] == more + 2 and \
            _conv_dsp_scratch(node, graph, more + 2)[0] + outs(more + 2) <= bytes_:
        more += 2
    while more > 2 and _conv_dsp_scratch(node, graph, more)[0] + outs(more) > bytes_:
        more -= 2
    return more


# _tiles' answers by what they read of the node (its op, kernel, strides, input and output shapes): a band run's
# fused graphs make new nodes of the same layers at every trial; bounded
_TILES: dict[tuple, tuple[list[tuple[int, int]], int]] = {}
_TILES_MAX = 4096


def _tiles(node: Node, graph: Graph) -> tuple[list[tuple[int, int]], int]:
    """CONV_2D's tiles as its fits descend them, (scratch, tile) from the largest, each the next 2 positions
    fewer, down to 2 (or the path's (0, 0)), and its _min_tile: worked out once a layer's shape, not at every
    budget a RAM budget's search fits the node to (MobileNetV2: millions of _conv_dsp_scratch calls)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    key = (node.op, tuple(node.attrs["kernel"]), tuple(node.attrs.get("strides", ())), tuple(x.shape), x.dtype,
           tuple(y.shape))
    hit = _TILES.get(key)
    if hit is None:
        chain = [_conv_dsp_scratch(node, graph, DSP_NP_MAX)]
        while chain[-1][1] > 2:
            chain.append(_conv_dsp_scratch(node, graph, chain[-1][1] - 2))
        if len(_TILES) >= _TILES_MAX:
            _TILES.clear()
        hit = _TILES[key] = (chain, _min_tile(node, graph))
    return hit


def _descend(node: Node, graph: Graph, budget: int, least: bool, extra: Callable[[int], int]) -> tuple[int, int]:
    """The first of _tiles whose scratch with `extra` of its tile fits the budget, or the floor's: _min_tile's,
    `least` 2 positions'."""
    chain, min_tile = _tiles(node, graph)
    floor = 2 if least else min_tile
    k = 0
    while chain[k][0] + extra(chain[k][1]) > budget and chain[k][1] > floor:
        k += 1
    return chain[k]


def _fit_conv_add(node: Node, graph: Graph, budget: int, least: bool = False) -> KernelChoice:
    """_fit_conv's tile, after the ADD's tables, with a tile of conv outputs (AOTC_TFL_RESIDUAL_TABLES)."""
    oc = graph.tensors[node.outputs[0]].shape[3]
    extra = lambda np_: 4 * RESIDUAL_TABLE_WORDS + -(-np_ * oc // 4) * 4  # noqa: E731
    size, np_ = _descend(node, graph, budget, least, extra)
    return KernelChoice(_conv_kernel(node, graph), size + extra(np_), detail=np_)


RESIDUAL_TABLE_WORDS = define("aotc_tflite_int8.h", "AOTC_TFL_RESIDUAL_TABLES")
MVE_K, MVE_OC = define("aotc_tflite_int8.h", "TFL_MVE_K"), define("aotc_tflite_int8.h", "TFL_MVE_OC")


def _conv_mve_scratch(node: Node, graph: Graph, fused: bool = False) -> int:
    """Helium's CONV_2D scratch in bytes (aotc_tflite_int8.h's tfl_mve_conv_words): the channels' weight
    sums, a position's patch and, with a fused ADD, a position's conv outputs; 0 where the path does
    not take the shape (the DSP path's then runs)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    if node.op not in ("TflConv2D", "TflConv2DAdd") or x.dtype != "int8":
        return 0
    kh, kw = node.attrs["kernel"]
    k, oc = kh * kw * x.shape[3], y.shape[3]
    if oc < 4 or oc > MVE_OC or k > MVE_K:
        return 0
    return 4 * (oc + -(-k // 4) + (-(-oc // 4) if fused else 0))


def _fit_conv(node: Node, graph: Graph, budget: int, least: bool = False) -> KernelChoice:
    """The depthwise path's fixed scratch; CONV_2D's largest tile of positions whose scratch fits
    the memory its step can spare (the kernel reads each widened weight block once a tile), down to
    _min_tile, which it takes anyway (above the tight bound); `least` (a RAM budget's "tiles"): down to
    2 positions, the DSP path's least."""
    if node.op == "TflDepthwiseConv2D":
        return _fit_depthwise(node, graph, budget) if least else \
            KernelChoice(_conv_kernel(node, graph), _depthwise_dsp_scratch(node, graph))
    size, np_ = _descend(node, graph, budget, least, lambda np_: 0)
    return KernelChoice(_conv_kernel(node, graph), size, detail=np_)


def _fit_depthwise(node: Node, graph: Graph, budget: int) -> KernelChoice:
    """A RAM budget's "tiles": the depthwise DSP path's runs of sums shortened until its scratch fits
    the budget (p->dsp_tile), down to an output row where the 3 x 3 path copies the padded span (it
    needs a row a run), else to DSP_DW_RUN_MIN positions: more calls of the requantisation, the same
    sums."""
    full = _depthwise_dsp_scratch(node, graph)
    if full <= budget:
        return KernelChoice(_conv_kernel(node, graph), full)
    _, oh, ow, _ = graph.tensors[node.outputs[0]].shape
    if _multiplier(node, graph) > 1:  # tfl_depthwise_s8_mult: runs of a row's positions, down to one; below that
        most = run = min(DSP_DW_RUN, oh * ow, ow)  # the plain loop, which takes none (its weights and ring do not
        while run > 1 and _depthwise_dsp_scratch(node, graph, run) > budget:  # shrink: micro_speech's 3,328 B)
            run -= 1
        if _depthwise_dsp_scratch(node, graph, run) > budget:
            return KernelChoice(_conv_kernel(node, graph), 0)
        return KernelChoice(_conv_kernel(node, graph), _depthwise_dsp_scratch(node, graph, run),
                            detail=run if run < most else None)
    most = min(DSP_DW_RUN, oh * ow)
    padded = _depthwise_dsp_scratch(node, graph, most, shortened=True) > 4 * 4 * most
    floor = min(ow if padded else DSP_DW_RUN_MIN, most)
    run = most
    while run > floor and _depthwise_dsp_scratch(node, graph, run) > budget:
        run -= 1
    if padded and _depthwise_dsp_scratch(node, graph, run) > budget:  # a run below the row leaves the padded span
        short = max(min(budget // 16, ow - 1), min(DSP_DW_RUN_MIN, most))  # (issue 67): 4 words of sums a position,
        run = min(run, short)  # never longer than the row's run (a row narrower than DSP_DW_RUN_MIN: KWS's 5)
    return KernelChoice(_conv_kernel(node, graph), _depthwise_dsp_scratch(node, graph, run),
                        detail=run if run < most else None)


DSP_DW_RUN_MIN = 16  # the shortest run a RAM budget gives the depthwise path where it does not copy the span


def _depthwise_band(node: Node, shortened: bool) -> bool:
    """Whether the depthwise DSP path goes by bands (aotc_tflite_int8.h's TFL_DSP_DW_BAND): a 3 x 3
    window of dilation 1, column stride 1 or 2, each output row's 3 input rows copied, any row length;
    not where a RAM budget has `shortened` the run of sums (the plan then writes p->dsp_tile)."""
    a = node.attrs
    return not shortened and tuple(a["kernel"]) == (3, 3) and tuple(a["dilations"]) == (1, 1) \
        and a["strides"][1] in (1, 2)


def _multiplier(node: Node, graph: Graph) -> int:
    """A DEPTHWISE_CONV_2D's depth multiplier: its output channels over its input's."""
    return graph.tensors[node.outputs[0]].shape[3] // max(graph.tensors[node.inputs[0]].shape[3], 1)


def _depthwise_dsp_scratch(node: Node, graph: Graph, run: int = DSP_DW_RUN, shortened: bool | None = None) -> int:
    """tfl_depthwise_s8_dsp's scratch: the sums of a run of positions' 4 channels (up to `run`: the
    plan's p->dsp_tile), then the band (3 rows of the span's width) or the padded span of 4 channels
    that the 3 x 3 paths copy (words, as the C kernel lays them out); `shortened`: whether the plan
    writes the run (p->dsp_tile), by default where it is below the kernel's own. At a depth multiplier
    above 1, tfl_depthwise_s8_mult's (aotc_tflite_int8.h's tfl_dsp_dwm_words): the run's sums (within an output
    row), the weights of an input channel in blocks of 4 outputs with their terms, the ring of 16-bit input rows."""
    a = node.attrs
    _, _, _, c = graph.tensors[node.inputs[0]].shape
    _, oh, ow, oc = graph.tensors[node.outputs[0]].shape
    kh, kw = a["kernel"]
    if (m := _multiplier(node, graph)) > 1:
        if graph.tensors[node.inputs[0]].dtype != "int8" or a["dilations"][1] != 1:
            return 0
        kq, run = -(-kw // 2), min(DSP_DW_RUN, oh * ow, run, ow)
        row = ((ow - 1) * a["strides"][1] + 2 * kq + 3) & ~1  # TFL_DSP_DWM_ROW: halfwords, whole words
        span = (kh - 1) * a["dilations"][0] + 1  # the ring's input rows, each twice
        return 4 * (4 * (run + 2) + -(-m // 4) * (16 + 4 * kh * kq) + span * row)
    if graph.tensors[node.inputs[0]].dtype != "int8" or oc != c or c % 4 or kh * kw > DSP_TAPS:
        return 0
    most, run = min(DSP_DW_RUN, oh * ow), min(DSP_DW_RUN, oh * ow, run)
    ph = (oh - 1) * a["strides"][0] + (kh - 1) * a["dilations"][0] + 1
    pw = (ow - 1) * a["strides"][1] + (kw - 1) * a["dilations"][1] + 1
    if _depthwise_band(node, run < most if shortened is None else shortened):
        pad = 3 * pw
    else:
        pad = ph * pw if kh == kw == 3 and ph * pw <= DSP_DW_PAD and ow <= run else 0
    return 4 * (4 * run + pad)


def overlap_bytes(node: Node, graph: Graph) -> int | None:
    """How many bytes below its input an int8 CONV_2D's or DEPTHWISE_CONV_2D's output may start (a RAM
    budget's "overlap", aot/plan/planner.py): the output then overwrites only input bytes no later
    read needs. None for other types and batches above 1.

    Every kernel of the two ops (tflite_int8.c, tflite_int8_dsp.h, tflite_int8_mve.h) goes through the
    output positions in order (row by row, across each row) and writes a position's outputs after
    reading what it needs, or before reading nothing else but its own window: the plain loops position
    by position, a channel at a time; CONV_2D's DSP path a tile of positions, every patch of the tile
    gathered before any output of it is stored; Helium's CONV_2D a position's patch, then its channels.
    So position P's outputs, at [P oc, (P + 1) oc) from the output's start, may overwrite any input
    byte below the lowest one that a window of P or of a later position reads, L(P): the output starts
    D >= (P + 1) oc - L(P) bytes below the input, for every P. A window's lowest byte is at least
    that of its first row and column clamped to the image (its taps in the padding read nothing).

    DEPTHWISE_CONV_2D's DSP path goes 4 channels at a time over every position instead, re-reading the
    whole input for each 4: there D is also a multiple of the channels (and oc = c), so that an output
    byte of channel k lands on an input byte of channel k, which no later 4 channels read, at a
    position D / c before it, the same bound channel by channel. At a depth multiplier above 1 its path goes
    input channel by input channel, each writing outputs of every position before the next reads its input:
    no overlap there unless the input has one channel (then it goes row by row, each output row after the band of
    its windows' input rows is copied: within the bound above)."""
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    if node.op not in ("TflConv2D", "TflDepthwiseConv2D") or x.dtype != "int8" or y.dtype != "int8" \
            or len(x.shape) != 4 or x.shape[0] != 1 or y.size == 0:
        return None
    if node.op == "TflDepthwiseConv2D" and x.shape[3] > 1 and y.shape[3] != x.shape[3]:
        return None
    _, _, w, c = x.shape
    _, oh, ow, oc = y.shape
    a = node.attrs
    rows = np.maximum(np.arange(oh, dtype=np.int64) * a["strides"][0] - a["pads"][0], 0)
    cols = np.maximum(np.arange(ow, dtype=np.int64) * a["strides"][1] - a["pads"][1], 0)
    lowest = ((rows[:, None] * w + cols[None, :]) * c).ravel()
    later = np.minimum.accumulate(lowest[::-1])[::-1]  # L(P): the lowest byte P or a later position reads
    below = max(int(np.max((np.arange(1, oh * ow + 1, dtype=np.int64) * oc) - later)), 0)
    granule = math.lcm(16, c) if node.op == "TflDepthwiseConv2D" else 16
    return -(-below // granule) * granule


HELIUM, M_PROFILE, HOST = KernelFacts(isa="helium"), KernelFacts(isa="m-profile"), KernelFacts(isa="host")
HOST_THREADED = KernelFacts(isa="host", threaded=True)
M_WIDENED = KernelFacts(isa="m-profile", widened_weights=True)  # the DSP path on weights widened in flash
PACK_PATCH_BYTES = define("aotc_tflite_int8.h", "TFL_PK_PATCH_BYTES")
PACK_SLACK = define("aotc_tflite_int8.h", "TFL_PK_SLACK")
PACK_DW_MAX_KH = define("aotc_tflite_int8.h", "TFL_PK_DW_MAX_KH")  # the band's rows: taller kernels take the plain loop
PACK_BLOCK = 16  # output channels a block of the packed weights (tflite_int8_packed.c: one vector of sums)
INT32_MIN = -(1 << 31)


def pack_kp(k: int) -> int:
    """Bytes of a packed row of k weights (or of a patch): whole quads (aotc_tflite_int8.h's tfl_pk_kp)."""
    return 4 * -(-k // 4)


def _packs(node: Node, graph: Graph) -> bool:
    """Whether tflite_int8_packed.c takes the node: int8 CONV_2D (with its ADD fused), DEPTHWISE_CONV_2D of depth
    multiplier 1 (at most PACK_DW_MAX_KH rows tall) or FULLY_CONNECTED, its weights constant, no multiplier INT32_MIN
    (which TFLite's double rounding saturates: quantize_multiplier never writes it)."""
    x, w = graph.tensors[node.inputs[0]], graph.tensors[node.inputs[1]]
    if x.dtype != "int8" or w.data is None or len(node.inputs) > 2 and node.inputs[2] and \
            graph.tensors[node.inputs[2]].data is None:
        return False
    if node.op == "TflDepthwiseConv2D" and (graph.tensors[node.outputs[0]].shape[3] != x.shape[3]
                                           or node.attrs["kernel"][0] > PACK_DW_MAX_KH):
        return False
    mults = [*node.attrs["mult"], *(node.attrs["add"]["m"][::2] if node.op == "TflConv2DAdd" else ())]
    return INT32_MIN not in (int(m) for m in mults)



PACK_DW_SLACK = define("aotc_tflite_int8.h", "TFL_PK_DW_SLACK")


def _packed_scratch(node: Node, graph: Graph) -> int:
    """tflite_int8_packed.c's scratch in bytes (aotc_tflite_int8.h's aotc_tfl_conv_s8_packed_scratch_bytes):
    CONV_2D's span of x (tfl_pk_span_bytes), whose windows it reads in place, at dilation 1 across; else a tile
    of patches (tfl_pk_conv_tile_positions of them, pack_kp bytes each); DEPTHWISE_CONV_2D its band
    (aotc_tfl_depthwise_s8_packed_scratch_bytes)."""
    if node.op == "TflDepthwiseConv2D":  # the band: kh rows of the columns an output row spans, 16 channels
        ow, (kh, kw) = graph.tensors[node.outputs[0]].shape[2], node.attrs["kernel"]
        span = (ow - 1) * node.attrs["strides"][1] + (kw - 1) * node.attrs["dilations"][1] + 1
        return kh * span * 16 + PACK_DW_SLACK
    n, _, _, c = graph.tensors[node.inputs[0]].shape
    _, oh, ow, _ = graph.tensors[node.outputs[0]].shape
    (kh, kw), (sh, sw), (dh, dw) = node.attrs["kernel"], node.attrs["strides"], node.attrs["dilations"]
    kp = pack_kp(kh * kw * c)
    tile = max(8, PACK_PATCH_BYTES // kp // 8 * 8)
    if dw == 1:  # the span, its windows read in place
        return n * ((oh - 1) * sh + (kh - 1) * dh + 1) * ((ow - 1) * sw + kw) * c + PACK_SLACK
    return min(tile, n * oh * ow) * kp


def packed_candidate(fn: str, scratch: Callable[[Node, Graph], int], threaded: bool = False) -> Candidate:
    """A host kernel of tflite_int8_packed.c: taken at any step without a RAM budget (its scratch raises the
    arena a little; the plain loop is 5-100x slower), but under one (Candidate.fit_least) only where its
    scratch fits the step's spare memory, else the next candidate (the plain loop, none). `threaded`: it splits
    its work over a --threads pool (CONV_2D: runs of positions x chunks of channels; DEPTHWISE_CONV_2D: blocks
    of channels x output rows, each thread's band on its stack)."""
    def least(n: Node, g: Graph, budget: int) -> KernelChoice | None:
        return KernelChoice(fn, size) if (size := scratch(n, g)) <= budget else None

    return Candidate(fn, lambda n, g, budget: KernelChoice(fn, scratch(n, g)), applies=lambda n, g, t: _packs(n, g),
                     facts=HOST_THREADED if threaded else HOST, fit_least=least)


def _packed_weights(ctx: NodeContext) -> tuple[str, str]:
    """The packed weights and the folded bias of a node tflite_int8_packed.c runs (aotc_tflite_int8.h, "The host's
    packed kernels"): rows of weights in quads, blocks of PACK_BLOCK rows, the bias less the zero point's share
    (x_zero for the depthwise taps, 128 + x_zero for the unsigned patches), modulo 2^32."""
    w = np.asarray(ctx.const(ctx.inputs[1]), np.int8)
    has_bias = len(ctx.inputs) > 2 and ctx.inputs[2]
    depthwise = ctx.node.op == "TflDepthwiseConv2D"
    rows = w.reshape(-1, w.shape[-1]).T if depthwise else w.reshape(w.shape[0], -1)  # [channel][tap] or [oc][k]
    n, k = rows.shape
    if ctx.node.op != "TflFullyConnected" and not depthwise and ctx.attrs["dilations"][1] == 1:
        # the windows read in place (tfl_pk_direct): each kernel row of kw c weights padded to whole quads
        kh = w.shape[1]
        run = k // kh
        rows = np.pad(rows.reshape(n, kh, run), ((0, 0), (0, 0), (0, pack_kp(run) - run))).reshape(n, -1)
    blocks = -(-n // PACK_BLOCK)
    bias = np.zeros(blocks * PACK_BLOCK, np.int64)
    if has_bias:
        bias[:n] = np.asarray(ctx.const(ctx.inputs[2]), np.int64).reshape(-1)
    zero = int(ctx.attrs["x_zero"]) + (0 if depthwise else 128)
    bias[:n] -= zero * rows.astype(np.int64).sum(axis=1)  # (the padding's zeros add nothing)
    k = rows.shape[1]
    folded = ((bias + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)
    padded = np.zeros((blocks * PACK_BLOCK, k if depthwise else pack_kp(k)), np.int8)
    padded[:n, :k] = rows
    if depthwise:  # [block][tap][16] int32, each (uint16_t)w
        packed = padded.reshape(blocks, PACK_BLOCK, k).transpose(0, 2, 1).astype(np.int16).view(np.uint16)
        wp = ctx.const_array("wp", np.ascontiguousarray(packed.astype(np.int32)),
                             "the taps' weights as (uint16_t)w, blocks of 16 channels")
    else:  # [block][quad][16][4]
        packed = padded.reshape(blocks, PACK_BLOCK, -1, 4).transpose(0, 2, 1, 3)
        wp = ctx.const_array("wp", np.ascontiguousarray(packed), "weights in quads, blocks of 16 output channels")
    return wp, ctx.const_array("bias", folded, f"the bias less {zero} x each row's sum of weights (mod 2^32)")
# the DSP paths' scratch: none of it is read where the bundle is built without them (TargetTraits.portable)
_not_portable = lambda n, g, t: not t.portable  # noqa: E731
# On the M-profile boards CONV_2D and DEPTHWISE_CONV_2D's DSP paths, and Helium's CONV_2D on the M55, take
# their scratch from the plan, as TFLM's kernels take theirs from the tensor arena; the host kernels need none.
def _conv_kernels(s8: str, helium: bool) -> tuple[Candidate, ...]:
    """A conv op's kernels: s8 (its int8 C function), or its _s16 for 16x8; Helium's CONV_2D path and the DSP
    path on weights widened in flash (CONV_2D's) where `helium`."""
    s16 = s8.replace("_s8", "_s16")
    mve = Candidate(s8, lambda n, g, budget: KernelChoice(_conv_kernel(n, g), _conv_mve_scratch(n, g)),
                    applies=lambda n, g, t: t.mve_conv and _conv_mve_scratch(n, g) > 0, facts=HELIUM)
    packed = packed_candidate(f"{s8}_packed", _packed_scratch, threaded=True)
    widened = Candidate(s8, _fit_conv, facts=M_WIDENED, applies=_widens,
                        fit_least=lambda n, g, budget: _fit_conv(n, g, budget, least=True))
    # DEPTHWISE_CONV_2D's set-up at compile time: only at the kernel's own run (a shortened one, p->dsp_tile, is
    # not TFL_DSP_DW_BAND's: the next candidate's then)
    widened_dw = Candidate(s8, _fit_conv, facts=M_WIDENED, applies=_widens_dw,
                           fit_least=lambda n, g, budget: c if (c := _fit_depthwise(n, g, budget)).detail is None
                           else None)
    return (packed, *((mve, widened) if helium else (widened_dw,) if s8 == "aotc_tfl_depthwise_s8" else ()),
            Candidate(s8, _fit_conv, facts=M_PROFILE, also=(s16,), applies=_not_portable,
                      fit_least=lambda n, g, budget: _fit_conv(n, g, budget, least=True)),
            by_type(_conv_kernel, s8, s16))


# the fused CONV_2D + ADD: on the M-profile boards the ADD's tables and a tile of conv outputs besides
# the conv's scratch; the host's plain loop needs none
CONV_ADD_KERNELS = (
    packed_candidate("aotc_tfl_conv_add_s8_packed", _packed_scratch, threaded=True),
    Candidate("aotc_tfl_conv_add_s8", lambda n, g, budget: KernelChoice(
        "aotc_tfl_conv_add_s8", 4 * RESIDUAL_TABLE_WORDS + _conv_mve_scratch(n, g, True)),
              applies=lambda n, g, t: t.mve_conv and _conv_mve_scratch(n, g, True) > 0, facts=HELIUM),
    Candidate("aotc_tfl_conv_add_s8", _fit_conv_add, facts=M_WIDENED, applies=_widens,
              fit_least=lambda n, g, budget: _fit_conv_add(n, g, budget, least=True)),
    Candidate("aotc_tfl_conv_add_s8", _fit_conv_add, facts=M_PROFILE, applies=_not_portable,
              fit_least=lambda n, g, budget: _fit_conv_add(n, g, budget, least=True)),
    by_type(_conv_kernel, "aotc_tfl_conv_add_s8"),
)


def _emit_fc(ctx: NodeContext) -> None:
    a = ctx.attrs
    out, inner = ctx.shape(ctx.inputs[1])
    rows = ctx.tensor(ctx.inputs[0]).size // inner
    mult, shift = _requant_arrays(ctx)
    if ctx.choice.kernel == "aotc_tfl_fc_s8_packed":
        p = ctx.params("aotc_tfl_fc_params", {
            "rows": c_int(rows), "in": c_int(inner), "out": c_int(out), "x_zero": c_int(a["x_zero"]),
            "y_zero": c_int(a["y_zero"]), "y_min": c_int(a["y_min"]), "y_max": c_int(a["y_max"]),
            "mult": mult, "shift": shift, "il4": "0",
        }, comment=f"FULLY_CONNECTED {rows} x {inner} -> {out}, TFLite requantisation; weights packed in quads, "
                   "blocks of 16 rows")
        wp, bias = _packed_weights(ctx)
        ctx.call(ctx.choice.kernel, p, ctx.ptr(ctx.inputs[0]), wp, bias, ctx.ptr(ctx.outputs[0]),
                 ctx.scratch("uint8_t"))
        return
    il4 = ctx.choice.detail == "il4"
    blocks = ctx.choice.detail[1:] if isinstance(ctx.choice.detail, tuple) and ctx.choice.detail[0] == "blocks" else ()
    p = ctx.params("aotc_tfl_fc_params", {
        "rows": c_int(rows), "in": c_int(inner), "out": c_int(out), "x_zero": c_int(a["x_zero"]),
        "y_zero": c_int(a["y_zero"]), "y_min": c_int(a["y_min"]), "y_max": c_int(a["y_max"]),
        "mult": mult, "shift": shift, "il4": c_int(int(il4)),
        **({"kq": c_int(blocks[0]), "ob": c_int(blocks[1])} if blocks else {}),
    }, comment=f"FULLY_CONNECTED {rows} x {inner} -> {out}, TFLite requantisation"
               + ("; weights interleaved by blocks of 4 rows" if il4 else "")
               + (f"; --ram-budget: x widened {4 * blocks[0]} inputs, {blocks[1]} outputs at a time" if blocks else ""))
    if il4:
        w = ctx.const_array("w", interleave_rows(np.asarray(ctx.const(ctx.inputs[1]), np.int8), 4))
        ctx.call(ctx.choice.kernel, p, ctx.ptr(ctx.inputs[0]), w, _bias(ctx), ctx.ptr(ctx.outputs[0]),
                 ctx.scratch("uint32_t"))
        return
    if ctx.dtype(ctx.inputs[0]) == "int16":
        ctx.call(ctx.choice.kernel, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]), _bias(ctx),
                 ctx.ptr(ctx.outputs[0]))
    else:
        ctx.call(ctx.choice.kernel, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]), _bias(ctx),
                 ctx.ptr(ctx.outputs[0]), ctx.scratch("uint32_t"))


def _fc_shape(node: Node, graph: Graph) -> tuple[int, int, bool]:
    """in, out (0, 0 where the input is not int8: no DSP path), and whether the weights may be
    interleaved by blocks of 4 rows (constant int8 weights, in and out multiples of 4)."""
    if graph.tensors[node.inputs[0]].dtype != "int8":
        return 0, 0, False
    w = graph.tensors[node.inputs[1]]
    out, inner = w.shape
    return inner, out, w.data is not None and out % 4 == 0 and inner % 4 == 0 and inner > 0


# On the M-profile boards the DSP path (tflite_int8_fc.c) takes its scratch from the plan, as
# TFLM's kernels take theirs from the tensor arena; on the host the packed kernel a row of the input
# (tflite_int8_packed_fc.c); the plain loop needs none.
FC_PACKED = packed_candidate("aotc_tfl_fc_s8_packed", lambda n, g: pack_kp(g.tensors[n.inputs[1]].shape[1]),
                             threaded=True)  # several rows (VNNI): panels of 64 outputs over a --threads pool
_FC_DENSE = dsp_dense_kernels(
    _fc_shape, lambda n, g: "aotc_tfl_fc_s16" if g.tensors[n.inputs[0]].dtype == "int16" else "aotc_tfl_fc_s8",
    ("aotc_tfl_fc_s8", "aotc_tfl_fc_s16"))


def _fc_blocked(node: Node, graph: Graph, budget: int) -> KernelChoice | None:
    """Under a RAM budget's "tiles": the DSP path in blocks, its scratch AOTC_TFL_FC_SCRATCH_KQ(kq, ob) within
    what the budget leaves: the sums of ob outputs at a time (all, while they fit) over x widened kq quads at a
    time (all, while they fit; else chunks, widened again for each block of outputs). A budget between the
    whole rows' scratch and none keeps SMLAD, for a few more loads and stores a block."""
    inner, out, _ = _fc_shape(node, graph)
    nq = inner // 4
    if out < 4 or out % 4 or nq < 1 or budget < 8 + 16:
        return None
    if 8 * nq + 4 * out <= budget:
        return None  # the whole rows fit: the usual candidates
    from aot.kernels.tflite_cost import fc_blocks_estimate  # (it reads this module's constants)

    # of the blockings that fit, the one with the least estimated cycles (issue 67: the first that fit, all the
    # outputs over chunks of x before fewer outputs over all of it, cost the autoencoder 5 % at 3,396 B against
    # 3,208 B): a larger budget only adds blockings, so it never gets a dearer one
    fits = [(min(nq, (budget - 4 * ob) // 8), ob) for ob in range(4, out + 1, 4) if budget - 4 * ob >= 8]
    kq, ob = min(fits, key=lambda f: (fc_blocks_estimate(out, inner, *f), -(8 * f[0] + 4 * f[1])))
    return KernelChoice("aotc_tfl_fc_s8", 8 * kq + 4 * ob, detail=("blocks", kq, ob))


def _fc_mve(node: Node, graph: Graph) -> bool:
    """Helium's FULLY_CONNECTED path takes the layer (tfl_fc_s8_mve: int8 x, 4 outputs or more, an input): it
    reads x as it is, so the DSP path's widened row is never used and the layer needs no scratch (issue 67: the
    M55's plans gave it 1,792 and 2,816 B on the MLPerf Tiny autoencoder, the arena 3,584 B where 768 B ran as fast)."""
    inner, out, _ = _fc_shape(node, graph)
    return out >= 4 and inner >= 1


# on the M55 the layers Helium's path takes need no scratch (the first candidate: no budget trades it); the rest
# (fewer than 4 outputs, or a flash level without AOTC_TFL_MVE_FC) take the DSP path's scratch as on the M4
FC_MVE = Candidate("aotc_tfl_fc_s8", lambda n, g, budget: KernelChoice("aotc_tfl_fc_s8"),
                   applies=lambda n, g, t: t.mve_fc and _fc_mve(n, g), facts=HELIUM)
FC_KERNELS = (FC_PACKED, FC_MVE, *_FC_DENSE[:2],
              Candidate("aotc_tfl_fc_s8", lambda n, g, budget: None, facts=M_PROFILE, fit_least=_fc_blocked),
              _FC_DENSE[2])


def _emit_pool(ctx: NodeContext) -> None:
    a = ctx.attrs
    n, h, w, c = ctx.shape(ctx.inputs[0])
    _, oh, ow, _ = ctx.shape(ctx.outputs[0])
    p = ctx.params("aotc_tfl_pool_params", {
        "n": c_int(n), "h": c_int(h), "w": c_int(w), "c": c_int(c), "oh": c_int(oh), "ow": c_int(ow),
        "kh": c_int(a["kernel"][0]), "kw": c_int(a["kernel"][1]), "sh": c_int(a["strides"][0]),
        "sw": c_int(a["strides"][1]), "pad_top": c_int(a["pads"][0]), "pad_left": c_int(a["pads"][1]),
        "y_min": c_int(a["y_min"]), "y_max": c_int(a["y_max"]),
    }, comment=f"{ctx.node.op} NHWC {[n, h, w, c]} -> {[n, oh, ow, c]}")
    fn = "aotc_tfl_avgpool_s8" if ctx.node.op == "TflAveragePool2D" else "aotc_tfl_maxpool_s8"
    if ctx.dtype(ctx.inputs[0]) == "int16":
        fn = fn.replace("_s8", "_s16")
    ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_softmax(ctx: NodeContext) -> None:
    if ctx.dtype(ctx.inputs[0]) == "int16":
        _emit_softmax16(ctx)
        return
    a = ctx.attrs
    shape = ctx.shape(ctx.inputs[0])
    depth = shape[-1]
    p = ctx.params("aotc_tfl_softmax_params", {
        "rows": c_int(ctx.tensor(ctx.inputs[0]).size // depth), "depth": c_int(depth), "mult": c_int(a["mult"]),
        "shift": c_int(a["shift"]), "diff_min": c_int(a["diff_min"]),
    }, comment=f"SOFTMAX over the last axis of {list(shape)}, TFLite fixed point")
    fn = "aotc_tfl_softmax_s8_s16" if ctx.dtype(ctx.outputs[0]) == "int16" else "aotc_tfl_softmax_s8"
    ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_softmax16(ctx: NodeContext) -> None:
    a = ctx.attrs
    shape = ctx.shape(ctx.inputs[0])
    depth = shape[-1]
    exp_table = ctx.const_array("exp", np.asarray(a["exp_table"], np.int16), "exp on [-10, 0], 513 anchors")
    recip_table = ctx.const_array("recip", np.asarray(a["recip_table"], np.int16), "1 / (1 + x) on [0, 1], 513 anchors")
    p = ctx.params("aotc_tfl_softmax16_params", {
        "rows": c_int(ctx.tensor(ctx.inputs[0]).size // depth), "depth": c_int(depth), "mult": c_int(a["mult"]),
        "shift": c_int(a["shift"]), "exp_table": exp_table, "recip_table": recip_table,
    }, comment=f"16x8 SOFTMAX over the last axis of {list(shape)}, LiteRT's interpolated tables")
    ctx.call("aotc_tfl_softmax_s16", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_act16(ctx: NodeContext) -> None:
    a = ctx.attrs
    table = ctx.const_array("sigmoid", np.asarray(a["table"], np.uint16), "sigmoid(i / 24), 0.16 fixed point")
    p = ctx.params("aotc_tfl_act16_params", {
        "count": c_int(ctx.tensor(ctx.outputs[0]).size), "mult": c_int(a["mult"]), "shift": c_int(a["shift"]),
        "table": table,
    }, comment=f"16x8 {a['what']} of {list(ctx.shape(ctx.outputs[0]))}, interpolated sigmoid table")
    fn = "aotc_tfl_tanh_s16" if a["what"] == "TANH" else "aotc_tfl_logistic_s16"
    ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_mean(ctx: NodeContext) -> None:
    a = ctx.attrs
    n, count, c = a["dims"]
    p = ctx.params("aotc_tfl_mean_params", {
        "n": c_int(n), "hw": c_int(count), "c": c_int(c), "x_zero": c_int(a["x_zero"]), "y_zero": c_int(a["y_zero"]),
        "mult": c_int(a["mult"]), "shift": c_int(a["shift"]),
    }, comment=f"MEAN of {list(ctx.shape(ctx.inputs[0]))} as {n} x {count} x {c}, the {count} averaged; TFLite "
               "requantisation")
    fn = "aotc_tfl_mean_s16" if ctx.dtype(ctx.inputs[0]) == "int16" else "aotc_tfl_mean_s8"
    ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _steps(shape: tuple[int, ...], out: tuple[int, ...]) -> list[int]:
    """An input's element steps along y's 6 (padded) axes: 0 where it is broadcast."""
    shape = (1,) * (6 - len(shape)) + tuple(shape)
    steps, stride = [0] * 6, 1
    for d in range(5, -1, -1):
        steps[d] = stride if shape[d] == out[d] and shape[d] != 1 else 0
        stride *= shape[d]
    return steps


def _binary_fields(ctx: NodeContext, a: dict, op: str, x1_name: str, x2_name: str, y_name: str) -> dict[str, str]:
    """aotc_tfl_binary_params of a binary op with attributes a, inputs x1, x2 and output y."""
    m1, s1, m2, s2, mult, shift = a.get("m", [0] * 6)
    y = tuple(ctx.shape(y_name))
    x1, x2 = tuple(ctx.shape(x1_name)), tuple(ctx.shape(x2_name))
    broadcast = not (x1 == y and x2 == y)
    dims = (1,) * (6 - len(y)) + y
    c_list = lambda v: "{" + ", ".join(c_int(int(e)) for e in v) + "}"  # noqa: E731
    return {
        "count": c_int(ctx.tensor(y_name).size), "x1_zero": c_int(a.get("x1_zero", 0)),
        "x2_zero": c_int(a.get("x2_zero", 0)), "y_zero": c_int(a.get("y_zero", 0)), "y_min": c_int(a["y_min"]),
        "y_max": c_int(a["y_max"]), "m1": c_int(m1), "s1": c_int(s1), "m2": c_int(m2), "s2": c_int(s2),
        "mult": c_int(mult), "shift": c_int(shift), "subtract": c_int(int(op == "TflSub")),
        "broadcast": c_int(int(broadcast)), "dims": c_list(dims), "st1": c_list(_steps(x1, dims)),
        "st2": c_list(_steps(x2, dims)),
    }


def _emit_binary(ctx: NodeContext) -> None:
    x1, x2 = (tuple(ctx.shape(i)) for i in ctx.inputs[:2])
    y = tuple(ctx.shape(ctx.outputs[0]))
    p = ctx.params("aotc_tfl_binary_params", _binary_fields(ctx, ctx.attrs, ctx.node.op, *ctx.inputs[:2],
                                                            ctx.outputs[0]),
                   comment=f"{ctx.node.op} of {list(x1)} and {list(x2)} -> {list(y)}, TFLite requantisation")
    fn = ctx.choice.kernel
    scratch = [ctx.scratch("uint32_t") if ctx.choice.scratch else "NULL"] if fn == "aotc_tfl_add_s8" else []
    ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]), ctx.ptr(ctx.outputs[0]), *scratch)


def _binary_kernel(node: Node, graph: Graph) -> str:
    """The C function that runs a binary op, by its op and input type."""
    if graph.tensors[node.inputs[0]].dtype == "int16":  # 16x8: ADD, SUB (add's kernel, p->subtract), MUL, MAX, MIN
        return {"TflMul": "aotc_tfl_mul_s16", "TflMaximum": "aotc_tfl_max_s16", "TflMinimum": "aotc_tfl_min_s16"}.get(
            node.op, "aotc_tfl_add_s16")
    return {"TflMul": "aotc_tfl_mul_s8", "TflMaximum": "aotc_tfl_max_s8", "TflMinimum": "aotc_tfl_min_s8"}.get(
        node.op, "aotc_tfl_add_s8")


ADD_SCRATCH_WORDS = define("aotc_tflite_int8.h", "AOTC_TFL_ADD_SCRATCH")
ADD_MIN = define("aotc_tflite_int8.h", "AOTC_TFL_ADD_MIN")


def _add_tables(node: Node, graph: Graph) -> bool:
    """Whether tflite_int8_elementwise.c's tabulated ADD / SUB takes the node: int8, same shapes, ADD_MIN elements."""
    x1, x2, y = (graph.tensors[t] for t in (*node.inputs[:2], node.outputs[0]))
    return x1.dtype == "int8" and x1.shape == x2.shape == y.shape and y.size >= ADD_MIN


# On the M-profile boards the tabulated ADD / SUB's tables and sums come from the plan, not the stack
ADD_KERNELS = (
    Candidate("aotc_tfl_add_s8", lambda n, g, budget: KernelChoice("aotc_tfl_add_s8", 4 * ADD_SCRATCH_WORDS),
              applies=lambda n, g, t: _add_tables(n, g), facts=KernelFacts(isa="arm-dsp")),
    by_type(_binary_kernel, "aotc_tfl_add_s8", "aotc_tfl_add_s16"),
)


def _emit_lut(ctx: NodeContext) -> None:
    lut = np.asarray(ctx.attrs["table"], np.int8)  # outputs for inputs -128..127
    table = ctx.const_array("table", np.roll(lut, 128), "outputs by the input's byte (uint8_t)x")
    p = ctx.params("aotc_tfl_lut_params", {"count": c_int(ctx.tensor(ctx.outputs[0]).size), "table": table},
                   comment=f"{ctx.attrs.get('what', 'elementwise')} of {list(ctx.shape(ctx.outputs[0]))} "
                           "by a 256-entry table")
    ctx.call("aotc_tfl_lut_s8", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_compare(ctx: NodeContext) -> None:
    """int8 EQUAL ... GREATER_EQUAL (tflite_int8_mobile.c): bool out, inputs broadcast as ADD's."""
    a = ctx.attrs
    fields = _binary_fields(ctx, {**a, "y_min": 0, "y_max": 1}, ctx.node.op, *ctx.inputs[:2], ctx.outputs[0])
    x1, x2 = (list(ctx.shape(i)) for i in ctx.inputs[:2])
    p = ctx.params("aotc_tfl_binary_params", fields,
                   comment=f"{a['what']} of {x1} and {x2}, each input rescaled as TFLite's comparisons")
    suffix = "s16" if ctx.dtype(ctx.inputs[0]) == "int16" else "s8"
    ctx.call(f"aotc_tfl_{str(a['what']).lower()}_{suffix}", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]),
             ctx.ptr(ctx.outputs[0]))


def _emit_prelu(ctx: NodeContext) -> None:
    a = ctx.attrs
    m1, s1, m2, s2 = a["m"]
    attrs = {"y_min": a["y_min"], "y_max": a["y_max"], "x1_zero": a["x_zero"], "x2_zero": a["alpha_zero"],
             "y_zero": a["y_zero"], "m": [m1, s1, m2, s2, 0, 0]}
    p = ctx.params("aotc_tfl_binary_params", _binary_fields(ctx, attrs, ctx.node.op, *ctx.inputs[:2],
                                                            ctx.outputs[0]),
                   comment=f"PRELU of {list(ctx.shape(ctx.inputs[0]))} by alpha {list(ctx.shape(ctx.inputs[1]))}, "
                           "TFLite requantisation")
    suffix = "s16" if ctx.dtype(ctx.inputs[0]) == "int16" else "s8"
    ctx.call(f"aotc_tfl_prelu_{suffix}", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]), ctx.ptr(ctx.outputs[0]))


def _emit_sum_requant(ctx: NodeContext) -> None:
    """Quantized SUM's float32 rescaling of the int32 sums (tflite_int8_mobile.c), as LiteRT's default kernel."""
    a = ctx.attrs
    y = ctx.outputs[0]
    p = ctx.params("aotc_tfl_sum_params", {
        "count": c_int(ctx.tensor(y).size), "scale": c_float(a["scale"]), "bias": c_float(a["bias"]),
        "y_zero": c_int(a["y_zero"]), "y_min": c_int(a["y_min"]), "y_max": c_int(a["y_max"]),
    }, comment="SUM's int32 sums rescaled in float32, as LiteRT's default kernel")
    suffix = "s16" if ctx.dtype(y) == "int16" else "s8"
    ctx.call(f"aotc_tfl_sum_requant_{suffix}", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(y))


def _emit_sum(ctx: NodeContext) -> None:
    """Quantized SUM over the middle axis of [outer, n, inner]: int32 sums, then SUM_REQUANT's float32 rescaling
    (tflite_int8_mobile.c), as LiteRT's default kernel."""
    a = ctx.attrs
    x, y = ctx.inputs[0], ctx.outputs[0]
    n, inner = int(a["n"]), int(a["inner"])
    p = ctx.params("aotc_tfl_reduce_sum_params", {
        "outer": c_int(ctx.tensor(x).size // max(n * inner, 1)), "n": c_int(n), "inner": c_int(inner),
        "scale": c_float(a["scale"]), "bias": c_float(a["bias"]), "y_zero": c_int(a["y_zero"]),
        "y_min": c_int(a["y_min"]), "y_max": c_int(a["y_max"]),
    }, comment=f"SUM of {list(ctx.shape(x))} as [outer, {n}, {inner}] over n, the int32 sums rescaled in float32, "
               "as LiteRT's default kernel")
    suffix = "s16" if ctx.dtype(x) == "int16" else "s8"
    ctx.call(f"aotc_tfl_reduce_sum_{suffix}", p, ctx.ptr(x), ctx.ptr(y))


def _emit_l2norm(ctx: NodeContext) -> None:
    """int8 L2_NORMALIZATION over the last axis (tflite_int8_mobile.c)."""
    shape = list(ctx.shape(ctx.inputs[0]))
    depth = shape[-1] if shape else 1
    p = ctx.params("aotc_tfl_l2norm_params", {
        "rows": c_int(ctx.tensor(ctx.inputs[0]).size // max(depth, 1)), "depth": c_int(depth),
        "x_zero": c_int(ctx.attrs["x_zero"]),
    }, comment=f"L2_NORMALIZATION of {shape} over its last axis, TFLite's inverse square root")
    ctx.call("aotc_tfl_l2norm_s8", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_reduce_prod(ctx: NodeContext) -> None:
    """REDUCE_PROD over the last axis of [rows, n] (tflite_int8_mobile.c)."""
    shape = list(ctx.shape(ctx.inputs[0]))
    a = ctx.attrs
    p = ctx.params("aotc_tfl_prod_params", {
        "rows": c_int(ctx.tensor(ctx.inputs[0]).size // shape[-1]), "n": c_int(shape[-1]), "x_zero": c_int(a["x_zero"]),
        "y_zero": c_int(a["y_zero"]), "mult": c_int(a["mult"]), "shift": c_int(a["shift"]),
    }, comment=f"REDUCE_PROD of {shape} over its last axis, each product rescaled as LiteRT's")
    suffix = "s16" if ctx.dtype(ctx.inputs[0]) == "int16" else "s8"
    ctx.call(f"aotc_tfl_reduce_prod_{suffix}", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_log_softmax(ctx: NodeContext) -> None:
    """int8 LOG_SOFTMAX over the last axis (tflite_int8_mobile.c)."""
    shape = list(ctx.shape(ctx.inputs[0]))
    a = ctx.attrs
    p = ctx.params("aotc_tfl_log_softmax_params", {
        "rows": c_int(ctx.tensor(ctx.inputs[0]).size // shape[-1]), "depth": c_int(shape[-1]),
        **{k: c_int(a[k]) for k in ("mult", "shift", "reverse_mult", "reverse_shift", "diff_min")},
    }, comment=f"LOG_SOFTMAX of {shape} over its last axis, gemmlowp's fixed point as LiteRT's")
    ctx.call("aotc_tfl_log_softmax_s8", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_div(ctx: NodeContext) -> None:
    """DIV (tflite_int8_mobile.c): a divisor at its zero point fails the run, as LiteRT's invoke does."""
    x1, x2 = (list(ctx.shape(i)) for i in ctx.inputs[:2])
    p = ctx.params("aotc_tfl_binary_params", _binary_fields(ctx, ctx.attrs, ctx.node.op, *ctx.inputs[:2],
                                                            ctx.outputs[0]),
                   comment=f"DIV of {x1} by {x2}, TFLite's reciprocal and requantisation")
    suffix = "s16" if ctx.dtype(ctx.inputs[0]) == "int16" else "s8"
    ctx.line(f"if (aotc_tfl_div_{suffix}({p}, {ctx.ptr(ctx.inputs[0])}, {ctx.ptr(ctx.inputs[1])}, "
             f"{ctx.ptr(ctx.outputs[0])}) != 0) return AOTC_ERR_SHAPE;")


def _emit_leaky_relu16(ctx: NodeContext) -> None:
    m_id, s_id, m_a, s_a = ctx.attrs["m"]
    p = ctx.params("aotc_tfl_binary_params", {
        "count": c_int(ctx.tensor(ctx.outputs[0]).size), "m1": c_int(m_id), "s1": c_int(s_id), "m2": c_int(m_a),
        "s2": c_int(s_a), "y_min": c_int(ctx.attrs.get("y_min", -32768)), "y_max": c_int(ctx.attrs.get("y_max", 32767)),
    }, comment=f"16x8 {'LEAKY_RELU' if 'y_min' not in ctx.attrs else 'RELU'} of {list(ctx.shape(ctx.outputs[0]))}, "
               "TFLite requantisation")
    ctx.call("aotc_tfl_leaky_relu_s16", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_lstm8(ctx: NodeContext) -> None:
    a = ctx.attrs
    batch, steps, n_input = ctx.shape(ctx.inputs[0])
    n_cell = ctx.shape(ctx.inputs[1])[0] // 4
    c_list = lambda v: "{" + ", ".join(c_int(int(e)) for e in v) + "}"  # noqa: E731
    p = ctx.params("aotc_tfl_lstm8_params", {
        "batch": c_int(batch), "steps": c_int(steps), "n_input": c_int(n_input), "n_cell": c_int(n_cell),
        "mult": c_list(a["mult"]), "shift": c_list(a["shift"]), "hidden_mult": c_int(a["hidden_mult"]),
        "hidden_shift": c_int(a["hidden_shift"]), "hidden_zero": c_int(a["hidden_zero"]),
        "cell_shift": c_int(a["cell_shift"]), "tanh_bits": c_int(a["tanh_bits"]), "clip": c_int(a["clip"]),
    }, comment=f"integer UNIDIRECTIONAL_SEQUENCE_LSTM, {steps} steps of {n_input} -> {n_cell}, LiteRT's 8x8_16")
    ctx.call("aotc_tfl_lstm_s8", p, *(ctx.ptr(i) for i in ctx.inputs[:7]), *(ctx.ptr(o) for o in ctx.outputs[:3]))


def _emit_svdf(ctx: NodeContext) -> None:
    a = ctx.attrs
    batch, n_input = ctx.shape(ctx.inputs[0])
    n_filter, n_memory = ctx.shape(ctx.inputs[2])
    p = ctx.params("aotc_tfl_svdf_params", {
        "batch": c_int(batch), "n_input": c_int(n_input), "n_filter": c_int(n_filter), "n_memory": c_int(n_memory),
        "rank": c_int(a["rank"]), "x_zero": c_int(a["x_zero"]), "y_zero": c_int(a["y_zero"]),
        "mult1": c_int(a["mult1"]), "shift1": c_int(a["shift1"]), "mult2": c_int(a["mult2"]),
        "shift2": c_int(a["shift2"]),
    }, comment=f"integer SVDF, {n_filter} filters of rank {a['rank']} over {n_memory} steps, LiteRT's arithmetic")
    bias = ctx.ptr(ctx.inputs[3]) if ctx.inputs[3] else "NULL"
    ctx.call("aotc_tfl_svdf_s8", p, *(ctx.ptr(i) for i in ctx.inputs[:3]), bias, ctx.ptr(ctx.inputs[4]),
             ctx.ptr(ctx.outputs[0]), ctx.ptr(ctx.outputs[1]))


def _emit_batch_matmul(ctx: NodeContext) -> None:
    """BATCH_MATMUL (tflite_int8_matmul.c): the matrices' element strides from adj_x / adj_y, each input's
    steps along y's batch dims (0 where broadcast), as LiteRT's reference loops."""
    a = ctx.attrs
    s1, s2, y = (tuple(ctx.shape(t)) for t in (*ctx.inputs[:2], ctx.outputs[0]))
    m, n = y[-2], y[-1]
    k = s1[-2] if a["adj_x"] else s1[-1]
    batch = (1,) * (5 - len(y)) + y[:-2]

    def steps(shape: tuple[int, ...], size: int) -> list[int]:
        dims, out, stride = (1,) * (5 - len(shape)) + shape[:-2], [0, 0, 0], size
        for d in range(2, -1, -1):
            out[d] = stride if dims[d] == batch[d] and dims[d] != 1 else 0
            stride *= dims[d]
        return out
    c_list = lambda v: "{" + ", ".join(c_int(int(e)) for e in v) + "}"  # noqa: E731
    wide = ctx.dtype(ctx.inputs[0]) == "int16"
    p = ctx.params("aotc_tfl_matmul_params", {
        "batch": c_list(batch), "st1": c_list(steps(s1, m * k)), "st2": c_list(steps(s2, k * n)),
        "m": c_int(m), "k": c_int(k), "n": c_int(n),
        "a_row": c_int(1 if a["adj_x"] else k), "a_col": c_int(m if a["adj_x"] else 1),
        "b_row": c_int(1 if a["adj_y"] else n), "b_col": c_int(k if a["adj_y"] else 1),
        "x1_zero": c_int(a["x1_zero"]), "x2_zero": c_int(a["x2_zero"]), "y_zero": c_int(a["y_zero"]),
        "mult": c_int(a["mult"]), "shift": c_int(a["shift"]),
        "y_min": c_int(-32768 if wide else -128), "y_max": c_int(32767 if wide else 127),
    }, comment=f"BATCH_MATMUL {list(s1)}{'^T' if a['adj_x'] else ''} x {list(s2)}{'^T' if a['adj_y'] else ''} -> "
               f"{list(y)}, TFLite requantisation")
    ctx.call(ctx.choice.kernel, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]),
             ctx.ptr(ctx.outputs[0]))


def _matmul_kernel(node: Node, graph: Graph) -> str:
    x1, x2 = (graph.tensors[t].dtype for t in node.inputs[:2])
    return {"int8": "aotc_tfl_batch_matmul_s8", "int16": "aotc_tfl_batch_matmul_s16"}[x2] if x1 == x2 \
        else "aotc_tfl_batch_matmul_s16_s8"


def _emit_resize_bilinear(ctx: NodeContext) -> None:
    a = ctx.attrs
    n, h, w, c = ctx.shape(ctx.inputs[0])
    _, oh, ow, _ = ctx.shape(ctx.outputs[0])
    p = ctx.params("aotc_tfl_resize_params", {
        "n": c_int(n), "h": c_int(h), "w": c_int(w), "c": c_int(c), "oh": c_int(oh), "ow": c_int(ow),
        "scale_h": c_int(a["scale_h"]), "scale_w": c_int(a["scale_w"]), "half_pixel": c_int(a["half_pixel"]),
    }, comment=f"RESIZE_BILINEAR NHWC {[n, h, w, c]} -> {[n, oh, ow, c]}, TFLite's integer interpolation")
    fn = "aotc_tfl_resize_bilinear_s16" if ctx.dtype(ctx.inputs[0]) == "int16" else "aotc_tfl_resize_bilinear_s8"
    ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_squared_difference(ctx: NodeContext) -> None:
    x1, x2 = (list(ctx.shape(i)) for i in ctx.inputs[:2])
    p = ctx.params("aotc_tfl_binary_params", _binary_fields(ctx, ctx.attrs, ctx.node.op, *ctx.inputs[:2],
                                                            ctx.outputs[0]),
                   comment=f"SQUARED_DIFFERENCE of {x1} and {x2}, TFLite requantisation")
    ctx.call("aotc_tfl_squared_difference_s8", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.inputs[1]),
             ctx.ptr(ctx.outputs[0]))


def _emit_abs16(ctx: NodeContext) -> None:
    p = ctx.params("aotc_tfl_binary_params", {
        "count": c_int(ctx.tensor(ctx.outputs[0]).size), "mult": c_int(ctx.attrs["mult"]),
        "shift": c_int(ctx.attrs["shift"]), "y_min": c_int(-32768), "y_max": c_int(32767),
    }, comment=f"16x8 ABS of {list(ctx.shape(ctx.outputs[0]))}, TFLite requantisation")
    ctx.call("aotc_tfl_abs_s16", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_sqrt16(ctx: NodeContext) -> None:
    p = ctx.params("aotc_tfl_quantize_params", {
        "count": c_int(ctx.tensor(ctx.outputs[0]).size), "scale": c_float(ctx.attrs["x_scale"]),
        "x_zero": "0", "y_zero": "0", "mult": "0", "shift": "0", "y_scale": c_float(ctx.attrs["y_scale"]),
    }, comment=f"16x8 SQRT of {list(ctx.shape(ctx.outputs[0]))}: sqrtf(x_scale x) / y_scale, truncated")
    ctx.call("aotc_tfl_sqrt_s16", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


def _emit_lut16(ctx: NodeContext) -> None:
    table = ctx.const_array("table", np.asarray(ctx.attrs["table"], np.int16), "513 anchors over the int16 range")
    p = ctx.params("aotc_tfl_lut16_params", {"count": c_int(ctx.tensor(ctx.outputs[0]).size), "table": table},
                   comment=f"16x8 {ctx.attrs['what']} of {list(ctx.shape(ctx.outputs[0]))} by LiteRT's "
                           "interpolated table")
    ctx.call("aotc_tfl_lut_s16", p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


_SUFFIX = {"int8": "s8", "int16": "s16", "int32": "s32", "uint8": "u8"}


def _emit_quantize(ctx: NodeContext) -> None:
    a, op = ctx.attrs, ctx.node.op
    count = c_int(ctx.tensor(ctx.outputs[0]).size)
    if op == "TflRequantize":
        fields = {"count": count, "scale": "0.0f", "x_zero": c_int(a["x_zero"]), "y_zero": c_int(a["y_zero"]),
                  "mult": c_int(a["mult"]), "shift": c_int(a["shift"])}
    else:
        fields = {"count": count, "scale": c_float(a["scale"]), "x_zero": c_int(a.get("x_zero", 0)),
                  "y_zero": c_int(a.get("y_zero", 0)), "mult": "0", "shift": "0"}
    p = ctx.params("aotc_tfl_quantize_params", fields, comment=f"{op} of {list(ctx.shape(ctx.outputs[0]))}")
    fn = {"TflQuantize": "aotc_tfl_quantize_f32_s8", "TflDequantize": "aotc_tfl_dequantize_s8_f32",
          "TflRequantize": "aotc_tfl_requantize_s8"}[op]
    x_type, y_type = ctx.dtype(ctx.inputs[0]), ctx.dtype(ctx.outputs[0])
    if op == "TflRequantize" and x_type != y_type:  # between integer types
        fn = f"aotc_tfl_requantize_{_SUFFIX[x_type]}_{_SUFFIX[y_type]}"
    elif "int16" in (x_type, y_type):  # 16x8 activations
        fn = fn.replace("_s8", "_s16")
    ctx.call(fn, p, ctx.ptr(ctx.inputs[0]), ctx.ptr(ctx.outputs[0]))


OPS: dict[str, HostOp] = {
    "TflConv2D": HostOp(_emit_conv, family="tflite_int8", dtypes=("int8", "int16"),
                        kernels=_conv_kernels("aotc_tfl_conv_s8", helium=True), overlap=overlap_bytes),
    "TflDepthwiseConv2D": HostOp(_emit_conv, family="tflite_int8", dtypes=("int8", "int16"),
                                 kernels=_conv_kernels("aotc_tfl_depthwise_s8", helium=False),
                                 overlap=overlap_bytes),
    "TflFullyConnected": HostOp(_emit_fc, family="tflite_int8", dtypes=("int8", "int16"), kernels=FC_KERNELS),
    "TflAveragePool2D": HostOp(_emit_pool, family="tflite_int8", dtypes=("int8", "int16")),
    "TflMaxPool2D": HostOp(_emit_pool, family="tflite_int8", dtypes=("int8", "int16")),
    "TflSoftmax": HostOp(_emit_softmax, family="tflite_int8", dtypes=("int8", "int16")),
    "TflMean": HostOp(_emit_mean, family="tflite_int8", dtypes=("int8", "int16")),
    "TflAct16": HostOp(_emit_act16, family="tflite_int8", dtypes=("int16",)),
    "TflLstm8": HostOp(_emit_lstm8, family="tflite_int8", dtypes=("int8",)),
    "TflSvdf": HostOp(_emit_svdf, family="tflite_int8", dtypes=("int8",)),
    "TflLeakyRelu16": HostOp(_emit_leaky_relu16, family="tflite_int8", dtypes=("int16",)),
    "TflTransposeConv": HostOp(_emit_conv, family="tflite_int8", dtypes=("int8", "int16"),
                               kernels=(by_type(_conv_kernel, "aotc_tfl_transpose_conv_s8",
                                                "aotc_tfl_transpose_conv_s16"),)),
    # input 3, the residual, is read at each element just before the sum is written there
    "TflConv2DAdd": HostOp(_emit_conv_add, family="tflite_int8", dtypes=("int8",), inplace=3,
                           kernels=CONV_ADD_KERNELS),
    # under a RAM budget the binary ops write over either input of the output's shape (the plain loop,
    # TFL_BINARY, reads an element of each input, then writes y's; the DSP ADD reads a run of 256, then
    # writes it), the table lookup over its input
    **{op: HostOp(_emit_binary, family="tflite_int8", dtypes=("int8", "int16"), kernels=ADD_KERNELS,
                  budget_inplace=(0, 1))
       for op in ("TflAdd", "TflSub")},
    "TflMul": HostOp(_emit_binary, family="tflite_int8", dtypes=("int8", "int16"),
                     kernels=(by_type(_binary_kernel, "aotc_tfl_mul_s8", "aotc_tfl_mul_s16"),), budget_inplace=(0, 1)),
    **{op: HostOp(_emit_binary, family="tflite_int8", dtypes=("int8", "int16"),
                  kernels=(by_type(_binary_kernel, fn, fn.replace("_s8", "_s16")),), budget_inplace=(0, 1))
       for op, fn in (("TflMaximum", "aotc_tfl_max_s8"), ("TflMinimum", "aotc_tfl_min_s8"))},
    "TflLut": HostOp(_emit_lut, family="tflite_int8", dtypes=("int8",), budget_inplace=(0,)),
    "TflCompare": HostOp(_emit_compare, family="tflite_int8", dtypes=("int8", "int16")),
    "TflPrelu": HostOp(_emit_prelu, family="tflite_int8", dtypes=("int8", "int16")),
    "TflDiv": HostOp(_emit_div, family="tflite_int8", dtypes=("int8", "int16")),
    "TflReduceProd": HostOp(_emit_reduce_prod, family="tflite_int8", dtypes=("int8", "int16")),
    "TflLogSoftmax": HostOp(_emit_log_softmax, family="tflite_int8", dtypes=("int8",)),
    "TflL2Norm": HostOp(_emit_l2norm, family="tflite_int8", dtypes=("int8",)),
    "TflSumRequant": HostOp(_emit_sum_requant, family="tflite_int8", dtypes=("int32",)),
    "TflSum": HostOp(_emit_sum, family="tflite_int8", dtypes=("int8", "int16")),
    "TflBatchMatMul": HostOp(_emit_batch_matmul, family="tflite_int8", dtypes=("int8", "int16"),
                             kernels=(dataclasses.replace(  # int8 (VNNI): the batch's products over a --threads pool
                                 by_type(_matmul_kernel, "aotc_tfl_batch_matmul_s8", "aotc_tfl_batch_matmul_s16",
                                         "aotc_tfl_batch_matmul_s16_s8"), facts=KernelFacts(threaded=True)),)),
    "TflResizeBilinear": HostOp(_emit_resize_bilinear, family="tflite_int8", dtypes=("int8", "int16")),
    "TflSquaredDifference": HostOp(_emit_squared_difference, family="tflite_int8", dtypes=("int8",)),
    "TflAbs16": HostOp(_emit_abs16, family="tflite_int8", dtypes=("int16",), budget_inplace=(0,)),
    "TflSqrt16": HostOp(_emit_sqrt16, family="tflite_int8", dtypes=("int16",), budget_inplace=(0,)),
    "TflLut16": HostOp(_emit_lut16, family="tflite_int8", dtypes=("int16",), budget_inplace=(0,)),
    "TflQuantize": HostOp(_emit_quantize, family="tflite_int8", dtypes=("float32",)),
    "TflDequantize": HostOp(_emit_quantize, family="tflite_int8", dtypes=("int8", "int16")),
    "TflRequantize": HostOp(_emit_quantize, family="tflite_int8", dtypes=("int8", "int16", "int32", "uint8")),
}
