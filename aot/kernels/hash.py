"""Hashing ops (issue 50): TFLite's LSH_PROJECTION (aotc.tflite's TflLshProjection), run by
runtime_c/kernels/hash/hash.c, whose Fingerprint64 is farmhash's, the hash LiteRT's kernel signs each input
row by, so the bits are LiteRT's."""

from __future__ import annotations

import math

from aot.csource.format import c_int
from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext, fixed_scratch
from aot.kernels.c_defines import define
from aot.kernels.shape import check_sizes

KEY_BYTES = define("aotc_hash.h", "AOTC_LSH_KEY_BYTES")  # the seed's bytes before each row's in a key


def _row_bytes(node: Node, graph: Graph) -> int:
    x = graph.tensors[node.inputs[1]]
    return math.prod(x.shape[1:]) * x.itemsize


def _emit_lsh(ctx: NodeContext) -> None:
    hash_, x = ctx.inputs[0], ctx.inputs[1]
    weight = ctx.inputs[2] if len(ctx.inputs) > 2 else ""
    num_hash, num_bits = ctx.shape(hash_)
    rows = ctx.shape(x)[0]
    sparse = int(ctx.attrs["sparse"])
    row_bytes = _row_bytes(ctx.node, ctx.graph)
    p = ctx.params("aotc_lsh_params", {
        "num_hash": c_int(num_hash), "num_bits": c_int(num_bits), "rows": c_int(rows),
        "row_bytes": c_int(row_bytes), "sparse": c_int(sparse),
    }, comment=f"LSH_PROJECTION {'SPARSE' if sparse else 'DENSE'}: {num_hash} x {num_bits} seeds over {rows} rows "
               f"of {row_bytes} B{', weighted' if weight else ''}")
    ctx.call("aotc_lsh_projection", p, ctx.ptr(hash_), ctx.ptr(x), ctx.ptr(weight), ctx.ptr(ctx.outputs[0]),
             ctx.scratch("uint8_t"))


def _check_lsh(node: Node, graph: Graph) -> str | None:
    t = graph.tensors
    hash_, x = t[node.inputs[0]], t[node.inputs[1]]
    weight = t[node.inputs[2]] if len(node.inputs) > 2 and node.inputs[2] else None
    if hash_.dtype != "float32" or len(hash_.shape) != 2 or hash_.shape[1] > 32:
        return f"hash {hash_.dtype} {list(hash_.shape)} is not float32 [num_hash, num_bits <= 32]"
    if int(node.attrs["sparse"]) and hash_.shape[1] > 31:
        return "SPARSE of 32 bits shifts 1 by 32 in LiteRT's kernel (undefined)"
    if not x.shape:
        return "the input is a scalar (LiteRT's kernel takes rank >= 1)"
    if weight is not None and (weight.dtype != "float32" or weight.shape != x.shape[:1]):
        return f"weight {weight.dtype} {list(weight.shape)} is not float32 [{x.shape[0]}]"
    return check_sizes(node, graph)


def _lsh_scratch(node: Node, graph: Graph) -> int:
    """aotc_hash.h's key: AOTC_LSH_KEY_BYTES and a row."""
    return KEY_BYTES + _row_bytes(node, graph)


OPS: dict[str, HostOp] = {
    "TflLshProjection": HostOp(_emit_lsh, family="hash", dtypes=("float32",), check=_check_lsh,
                               kernels=(fixed_scratch("aotc_lsh_projection", _lsh_scratch),)),
}
