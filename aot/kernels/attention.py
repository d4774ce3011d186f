"""Host op Attention (ONNX opsets 23-25; kernel in runtime_c/kernels/attention/attention.c).

One kernel call does the whole op, a query row at a time: the row's scores live in one row of
scratch (beside one key/value head's keys, transposed), so the [S_q, S_kv] score matrix (and the
masks, the repeated heads of grouped-query attention, the transposes of 3-D inputs) is never
materialised. Everything shape-dependent (the
strides that read 3-D [B, S, H * D] and 4-D [B, H, S, D] tensors alike, the mask's broadcast
strides, the scale) is worked out here.
"""

from __future__ import annotations

import math

from aot.csource.format import c_float
from aot.ir import Graph, Node
from aot.kernels.base import HostOp, NodeContext, fixed_scratch

Q, K, V, MASK, PAST_KEY, PAST_VALUE, NONPAD = range(7)
Y, PRESENT_KEY, PRESENT_VALUE, QK = range(4)


def _input(node: Node, k: int) -> str:
    return node.inputs[k] if k < len(node.inputs) else ""


def _output(node: Node, k: int) -> str:
    return node.outputs[k] if k < len(node.outputs) else ""


def _geometry(node: Node, graph: Graph) -> dict[str, int]:
    """Batch, heads, lengths and head sizes, from the inputs' shapes and the head attributes."""
    q, k, v = (graph.tensors[node.inputs[i]].shape for i in (Q, K, V))
    past = _input(node, PAST_KEY)
    if len(q) == 3:
        qh, kvh = int(node.attrs["q_num_heads"]), int(node.attrs["kv_num_heads"])
        g = {"batch": q[0], "q_heads": qh, "kv_heads": kvh, "q_len": q[1], "kv_len": k[1],
             "head_dim": q[2] // qh, "v_head_dim": v[2] // kvh}
    else:
        g = {"batch": q[0], "q_heads": q[1], "kv_heads": k[1], "q_len": q[2], "kv_len": k[2],
             "head_dim": q[3], "v_head_dim": v[3]}
    g["past_len"] = graph.tensors[past].shape[2] if past else 0
    return g


def _strides(shape: tuple[int, ...], heads: int, dim: int) -> tuple[int, int, int]:
    """(batch, head, sequence) element strides of a [B, S, H * D] or [B, H, S, D] tensor."""
    if len(shape) == 3:
        return shape[1] * heads * dim, dim, heads * dim
    return shape[1] * shape[2] * dim, shape[2] * dim, dim


def _mask_strides(shape: tuple[int, ...], g: dict[str, int]) -> tuple[int, int, int]:
    """(batch, head, query row) strides of a mask broadcast to [B, H_q, S_q, T]: 0 where it broadcasts."""
    full = (1,) * (4 - len(shape)) + tuple(shape)
    strides, step = [0, 0, 0, 0], 1
    for axis in range(3, -1, -1):
        strides[axis] = step if full[axis] != 1 else 0
        step *= full[axis]
    return strides[0], strides[1], strides[2]


def _c_strides(strides: tuple[int, int, int]) -> str:
    return "{" + ", ".join(map(str, strides)) + "}"


def _check(node: Node, graph: Graph) -> str | None:
    for i, what in ((Q, "Q"), (K, "K"), (V, "V"), (PAST_KEY, "past_key"), (PAST_VALUE, "past_value")):
        name = _input(node, i)
        if name and graph.tensors[name].dtype != "float32":
            return f"{what} has dtype {graph.tensors[name].dtype}; only float32 attention is supported"
    ranks = {len(graph.tensors[node.inputs[i]].shape) for i in (Q, K, V)}
    if ranks not in ({3}, {4}):
        return f"Q, K and V must all be 3-D or all 4-D, got ranks {sorted(ranks)}"
    if ranks == {3} and not {"q_num_heads", "kv_num_heads"} <= set(node.attrs):
        return "3-D Q, K and V need the q_num_heads and kv_num_heads attributes"
    g = _geometry(node, graph)
    if g["q_heads"] % g["kv_heads"]:
        return f"{g['q_heads']} query heads are not a multiple of {g['kv_heads']} key/value heads"
    if bool(_input(node, PAST_KEY)) != bool(_input(node, PAST_VALUE)):
        return "past_key and past_value must be given together"
    if _input(node, NONPAD) and _input(node, PAST_KEY):
        return "nonpad_kv_seqlen cannot be combined with past_key/past_value (the spec forbids it)"
    mask = _input(node, MASK)
    if mask:
        t = graph.tensors[mask]
        if t.dtype not in ("bool", "float32"):
            return f"attn_mask has dtype {t.dtype}; bool or float32 is supported"
        total = g["past_len"] + g["kv_len"]
        full = (1,) * (4 - len(t.shape)) + tuple(t.shape)
        want = (g["batch"], g["q_heads"], g["q_len"])
        if len(t.shape) > 4 or any(d not in (1, w) for d, w in zip(full[:3], want, strict=True)) \
                or full[3] > total:
            return (f"attn_mask of shape {list(t.shape)} does not broadcast to "
                    f"[{g['batch']}, {g['q_heads']}, {g['q_len']}, {total}]")
    if _input(node, NONPAD) and graph.tensors[_input(node, NONPAD)].dtype != "int64":
        return "nonpad_kv_seqlen must be int64"
    return None


def _scratch(node: Node, graph: Graph) -> int:
    g = _geometry(node, graph)
    return 4 * (1 + g["head_dim"]) * (g["past_len"] + g["kv_len"])  # a row of scores, a head's keys transposed


def _emit(ctx: NodeContext) -> None:
    node, a = ctx.node, ctx.attrs
    g = _geometry(node, ctx.graph)
    shape = ctx.shape
    q_str = _strides(shape(node.inputs[Q]), g["q_heads"], g["head_dim"])
    k_str = _strides(shape(node.inputs[K]), g["kv_heads"], g["head_dim"])
    v_str = _strides(shape(node.inputs[V]), g["kv_heads"], g["v_head_dim"])
    y_str = _strides(shape(node.outputs[Y]), g["q_heads"], g["v_head_dim"])
    mask = _input(node, MASK)
    if mask:
        kind = 1 if ctx.dtype(mask) == "bool" else 2
        m_str, mask_len = _mask_strides(shape(mask), g), shape(mask)[-1] if shape(mask) else 1
    else:
        kind, m_str, mask_len = 0, (0, 0, 0), 0
    scale = float(a["scale"]) if "scale" in a else 1.0 / math.sqrt(g["head_dim"])
    qk = _output(node, QK)
    fields = {**{f: str(g[f]) for f in ("batch", "q_heads", "kv_heads", "q_len", "kv_len", "past_len",
                                        "head_dim", "v_head_dim")},
              "q": _c_strides(q_str), "k": _c_strides(k_str), "v": _c_strides(v_str), "y": _c_strides(y_str),
              "mask_kind": str(kind), "mask": _c_strides(m_str),
              "mask_len": str(mask_len), "causal": str(int(a.get("is_causal", 0))),
              "left_window": str(int(a.get("left_window_size", -1))),
              "right_window": str(int(a.get("right_window_size", -1))),
              "scale": c_float(scale), "softcap": c_float(float(a.get("softcap", 0.0))),
              "qk_mode": str(int(a.get("qk_matmul_output_mode", 0)) if qk else -1)}
    heads = f"{g['q_heads']}" + (f"/{g['kv_heads']} kv" if g["kv_heads"] != g["q_heads"] else "")
    p = ctx.params("aotc_attention_params", fields,
                   comment=f"Attention: {heads} heads, {g['q_len']} queries x {g['past_len'] + g['kv_len']} keys"
                           + (", causal" if a.get("is_causal") else ""))
    ctx.call("aotc_attention_f32", p, ctx.ptr(node.inputs[Q]), ctx.ptr(node.inputs[K]), ctx.ptr(node.inputs[V]),
             ctx.ptr(mask), ctx.ptr(_input(node, PAST_KEY)), ctx.ptr(_input(node, PAST_VALUE)),
             ctx.ptr(_input(node, NONPAD)), ctx.ptr(node.outputs[Y]), ctx.ptr(_output(node, PRESENT_KEY)),
             ctx.ptr(_output(node, PRESENT_VALUE)), ctx.ptr(qk), ctx.scratch("float"))


OPS: dict[str, HostOp] = {
    "Attention": HostOp(_emit, family="attention", check=_check, kernels=(fixed_scratch("", _scratch),)),
}
