"""onnxruntime's attention ops of its transformer optimizer (com.microsoft Attention, MultiHeadAttention) and
EmbedLayerNormalization, rewritten onto ONNX ops: the projections as MatMul and Add, the attention itself as
onnxruntime's CPU kernel computes it (AttentionCPUBase: a GEMM a head for the scores, the mask added, a
softmax, a GEMM for the values; as MatMul, Mul, Add, Softmax, MatMul, which ran faster here than ONNX
Attention's one-pass kernel at BERT's sizes), with onnxruntime's masks turned into the additive float mask
its PrepareMask builds:

- mask_index [B]: the keys at or after each batch's end position are masked;
- [2 B]: end positions, then start positions (left padding): keys before the start are masked too;
- [B, T] and [B, S, T]: 0 masks a key, anything above 0 keeps it;
- unidirectional: key j of query row i is masked when j > P + i (P the past's length).

A key the mask masks gets mask_filter_value (-10000 by default) added to its score, not minus infinity: a
row whose every key is masked takes the softmax of those sums, as onnxruntime does. A key causality masks
gets the lowest float instead (it then weighs 0 whatever else was added; probed against onnxruntime with a
small mask_filter_value), the query rows placed after the past. attention_bias is added to the mask first
(onnxruntime's order).
"""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import Builder, shape_of
from aot.frontend.onnx.canonical.norm import layer_norm, softmax
from aot.frontend.onnx.canonical.quant import quantize_linear
from aot.ir import Graph, Node, Tensor


def _input(node: Node, k: int) -> str:
    return node.inputs[k] if len(node.inputs) > k else ""


def _output(node: Node, k: int) -> str:
    return node.outputs[k] if len(node.outputs) > k else ""


def _read(graph: Graph, name: str) -> bool:
    return bool(name) and name in (set(graph.consumers()) | set(graph.outputs))


def _float32(node: Node, graph: Graph, ks: tuple[int, ...]) -> None:
    for k in ks:
        name = _input(node, k)
        if name and graph.tensors[name].dtype != "float32":
            raise AotcError(f"{node.op} of {graph.tensors[name].dtype} is not supported (float32 only)", node=node)


def _keep(b: Builder, node: Node, graph: Graph, mask: str, batch: int, seq: int, total: int,
          what: str) -> tuple[str, tuple[int, ...]]:
    """A bool tensor, true where a key is kept, of shape [B, T] (1-D and 2-D masks) or [B, S, T]."""
    shape = shape_of(graph, mask)
    if graph.tensors[mask].dtype != "int32":
        raise AotcError(f"{node.op}'s {what} of {graph.tensors[mask].dtype} is not supported (int32)", node=node)
    if shape in ((batch,), (2 * batch,)):
        positions = b.tensor((1, total), np.arange(total, dtype=np.int32)[None], dtype="int32")
        ends = mask
        if shape == (2 * batch,):
            ends = b.add("Slice", [mask], (batch,), {"starts": [0], "steps": [1]}, dtype="int32")
            starts = b.add("Slice", [mask], (batch,), {"starts": [batch], "steps": [1]}, dtype="int32")
            starts = b.add("Reshape", [starts], (batch, 1), dtype="int32")
            after = b.add("GreaterOrEqual", [positions, starts], (batch, total), dtype="bool")
        ends = b.add("Reshape", [ends], (batch, 1), dtype="int32")
        keep = b.add("Less", [positions, ends], (batch, total), dtype="bool")
        if shape == (2 * batch,):
            keep = b.add("And", [keep, after], (batch, total), dtype="bool")
        return keep, (batch, 1, 1, total)
    if shape in ((batch, total), (batch, seq, total)):
        zero = b.tensor((), np.array(0, np.int32), dtype="int32")
        keep = b.add("Greater", [mask, zero], shape, dtype="bool")
        return keep, (batch, 1, 1, total) if len(shape) == 2 else (batch, 1, seq, total)
    raise AotcError(f"{node.op}'s {what} of shape {list(shape)} is not supported ([{batch}], [{2 * batch}], "
                    f"[{batch}, {total}] or [{batch}, {seq}, {total}])", node=node)


def additive_mask(b: Builder, node: Node, graph: Graph, mask: str, bias: str, batch: int, heads: int, seq: int,
                  total: int) -> str:
    """The float mask onnxruntime adds to the scaled scores, broadcastable to [B, N, S, T], or "" for none
    (causality is ONNX Attention's is_causal)."""
    fill = float(node.attrs.get("mask_filter_value", -10000.0))
    out, shape = "", ()
    if mask:
        keep, shape = _keep(b, node, graph, mask, batch, seq, total, "mask")
        zero, filled = b.tensor((), np.array(0.0, np.float32)), b.tensor((), np.array(fill, np.float32))
        scores = b.add("Where", [keep, zero, filled], shape_of(graph, keep))
        out = b.add("Reshape", [scores], shape)
    if bias:
        bias_shape = shape_of(graph, bias)
        if len(bias_shape) != 4 or bias_shape[0] not in (1, batch) or bias_shape[1] not in (1, heads) \
                or bias_shape[2:] != (seq, total):
            raise AotcError(f"{node.op}'s attention_bias of shape {list(bias_shape)} is not supported "
                            f"([{batch} or 1, {heads} or 1, {seq}, {total}])", node=node)
        if out:  # onnxruntime: the bias, then the mask added to it
            full = tuple(max(x, y) for x, y in zip(bias_shape, shape, strict=True))
            out = b.add("Add", [bias, out], full)
        else:
            out = bias
    return out


def _project(b: Builder, x: str, w: np.ndarray, bias: np.ndarray | None, shape: tuple[int, ...]) -> str:
    """x @ w (+ bias) for constant w and bias: [B, S, H_in] -> [B, S, w's columns]."""
    out_shape = (*shape[:-1], w.shape[1])
    y = b.add("MatMul", [x, b.tensor(w.shape, np.ascontiguousarray(w, np.float32))], out_shape)
    if bias is not None:
        y = b.add("Add", [y, b.tensor(bias.shape, np.ascontiguousarray(bias, np.float32))], out_shape)
    return y


def _heads(b: Builder, x: str, shape: tuple[int, ...], heads: int, perm: list[int]) -> str:
    """[B, S, N * H] -> [B, S, N, H], transposed by `perm` ([0, 2, 1, 3]: [B, N, S, H]; [0, 2, 3, 1]: [B, N, H, S])."""
    split = (shape[0], shape[1], heads, shape[2] // heads)
    x = b.add("Reshape", [x], split)
    return b.add("Transpose", [x], tuple(split[p] for p in perm), {"perm": perm})


def _attend(b: Builder, node: Node, graph: Graph, opset: int, qkv: list[str], mask: str, past: tuple[str, str],
            heads: int, outs: list[str]) -> None:
    """softmax(scale * Q K^T + mask) V per head, as onnxruntime's CPU kernel computes it (one GEMM a head for
    the scores, the mask added to them, a softmax, one GEMM for the values): Q, K, V 3-D [B, S, N * H],
    the past [B, N, P, H] put before K and V (their concatenations the present outputs, outs[1:]), the causal
    part of the mask (unidirectional) the lowest float where key j > P + i, only when S > 1."""
    shapes = [shape_of(graph, n) for n in qkv]
    batch, seq = shapes[0][:2]
    head, v_head = shapes[0][2] // heads, shapes[2][2] // heads
    past_len = shape_of(graph, past[0])[2] if past[0] else 0
    total = past_len + shapes[1][1]
    q = _heads(b, qkv[0], shapes[0], heads, [0, 2, 1, 3])
    present = [o if o else None for o in (outs + ["", ""])[1:3]]
    if past[0] or present[0] or present[1]:
        k, v = (_heads(b, qkv[j], shapes[j], heads, [0, 2, 1, 3]) for j in (1, 2))
        kv = []
        for x, p, o, h in ((k, past[0], present[0], head), (v, past[1], present[1], v_head)):
            if p:
                x = b.add("Concat", [p, x], (batch, heads, total, h), {"axis": 2}, out=o)
            elif o:
                x = b.add("Identity", [x], None, out=o)
            if o:
                b.nodes[-1].name = f"{node.name}__{o}"
            kv.append(x)
        k_t = b.add("Transpose", [kv[0]], (batch, heads, head, total), {"perm": [0, 1, 3, 2]})
        v = kv[1]
    else:
        k_t = _heads(b, qkv[1], shapes[1], heads, [0, 2, 3, 1])
        v = _heads(b, qkv[2], shapes[2], heads, [0, 2, 1, 3])
    square = (batch, heads, seq, total)
    scores = b.add("MatMul", [q, k_t], square)
    scale = float(node.attrs.get("scale", 0.0)) or 1.0 / float(np.sqrt(head))
    scores = b.add("Mul", [scores, b.tensor((), np.array(scale, np.float32))], square)
    if int(node.attrs.get("unidirectional", 0)) and seq > 1:
        rows, cols = np.arange(seq)[:, None], np.arange(total)[None, :]
        lowest = np.finfo(np.float32).min
        causal = np.where(cols > past_len + rows, lowest, np.float32(0.0)).astype(np.float32)
        causal_name = b.tensor(causal.shape, causal)
        if mask:
            both = tuple(max(x, y) for x, y in zip(shape_of(graph, mask), (1, 1, seq, total), strict=True))
            mask = b.add("Add", [mask, causal_name], both)
        else:
            mask = causal_name
    if mask:
        scores = b.add("Add", [scores, mask], square)
    probs = b.add("Softmax", [scores], square, {"axis": -1})
    softmax(b.nodes[-1], graph, max(opset, 13))
    ctx = b.add("MatMul", [probs, v], (batch, heads, seq, v_head))
    ctx = b.add("Transpose", [ctx], (batch, seq, heads, v_head), {"perm": [0, 2, 1, 3]})
    b.add("Reshape", [ctx], None, out=outs[0])


def attention(node: Node, graph: Graph, opset: int) -> list[Node]:
    """com.microsoft Attention(input, weights, bias?, mask_index?, past?, attention_bias?) -> Q, K, V from
    constant slices of the packed weights and bias, then ONNX Attention with the additive mask (module
    docstring); past [2, B, N, P, H] split into ONNX's past_key and past_value, their present_key and
    present_value stacked into present [2, B, N, P + S, H]. past_present_share_buffer, past_sequence_length
    and do_rotary are refused."""
    _float32(node, graph, (0, 1, 2, 4, 5))
    if _input(node, 6) or int(node.attrs.get("past_present_share_buffer", 0)):
        raise AotcError("Attention with past_present_share_buffer (past_sequence_length) is not supported",
                        node=node)
    if int(node.attrs.get("do_rotary", 0)):
        raise AotcError("Attention do_rotary=1 is not supported", node=node)
    x, w_name = node.inputs[0], node.inputs[1]
    w = graph.const(w_name)
    bias = graph.const(_input(node, 2)) if _input(node, 2) else None
    if w is None or (_input(node, 2) and bias is None):
        raise AotcError("Attention's weights and bias must be constants", node=node)
    shape = shape_of(graph, x)
    if len(shape) != 3 or w.ndim != 2 or w.shape[0] != shape[2]:
        raise AotcError(f"Attention of input {list(shape)} and weights {list(w.shape)} is not supported "
                        "(input [B, S, H_in], weights [H_in, 3 H])", node=node)
    heads = int(node.attrs.get("num_heads", 0))
    sizes = [int(v) for v in node.attrs.get("qkv_hidden_sizes", [])] or [w.shape[1] // 3] * 3
    if heads <= 0 or len(sizes) != 3 or sum(sizes) != w.shape[1] or sizes[0] != sizes[1] \
            or any(v % heads for v in sizes):
        raise AotcError(f"Attention with num_heads {heads}, qkv sizes {sizes} and weights {list(w.shape)} "
                        "is not supported", node=node)
    b = Builder(node, graph)
    qkv, start = [], 0
    for size in sizes:
        qkv.append(_project(b, x, w[:, start:start + size], None if bias is None else bias[start:start + size],
                            shape))
        start += size
    return _packed_attention(b, node, opset, qkv, heads, sizes, _input(node, 3), _input(node, 4), _input(node, 5))


def _packed_attention(b: Builder, node: Node, opset: int, qkv: list[str], heads: int, sizes: list[int], mask: str,
                      past: str, bias: str) -> list[Node]:
    """Attention's and QAttention's part after the projections: past [2, B, N, P, H] split into past key and
    value, the present [2, B, N, P + S, H] their concatenations with K and V stacked (when read)."""
    graph = b.graph
    batch, seq = shape_of(graph, qkv[0])[:2]
    past_len, past_kv = 0, ("", "")
    head = sizes[0] // heads
    if past:
        p_shape = shape_of(graph, past)
        if len(p_shape) != 5 or p_shape[:3] != (2, batch, heads) or p_shape[4] != head or sizes[2] != sizes[0]:
            raise AotcError(f"{node.op}'s past of shape {list(p_shape)} is not supported ([2, {batch}, {heads}, "
                            f"P, {head}], Q, K and V of one width)", node=node)
        past_len = p_shape[3]
        halves = [b.tensor((1, *p_shape[1:])) for _ in range(2)]
        b.nodes.append(Node("Split", f"{node.name}__past", [past], halves, {"axis": 0, "split": [1, 1]},
                            node.sources()))
        past_kv = tuple(b.add("Reshape", [h], p_shape[1:]) for h in halves)
    total = past_len + seq
    mask = additive_mask(b, node, graph, mask, bias, batch, heads, seq, total)
    present = node.outputs[1] if len(node.outputs) > 1 and _read(graph, node.outputs[1]) else ""
    outs = [node.outputs[0]]
    if present:
        outs += [b.tensor((batch, heads, total, head)), b.tensor((batch, heads, total, sizes[2] // heads))]
    _attend(b, node, graph, opset, qkv, mask, past_kv, heads, outs)
    if present:
        stacked = [b.add("Reshape", [o], (1, *shape_of(graph, o))) for o in outs[1:]]
        b.add("Concat", stacked, None, {"axis": 0}, out=present)
        b.nodes[-1].name = f"{node.name}__present"
    return b.nodes


def _scalar(graph: Graph, node: Node, name: str, what: str) -> None:
    if graph.tensors[name].size != 1:
        raise AotcError(f"{node.op}'s {what} must be a single value, has shape {list(shape_of(graph, name))}",
                        node=node)


def q_attention(node: Node, graph: Graph, opset: int) -> list[Node]:
    """QAttention(input, weight, bias, input_scale, weight_scale, mask_index?, input_zero_point?,
    weight_zero_point?, past?): quantize_dynamic's Attention, its uint8 input (a DynamicQuantizeLinear's) times
    the constant int8/uint8 weight as MatMulInteger for each of Q, K and V, Cast to float, times input_scale *
    weight_scale (per tensor or per column), plus bias: onnxruntime's order (its GEMM's scale-and-bias output
    step); then Attention's rewrite."""
    ins = list(node.inputs) + [""] * (9 - len(node.inputs))
    x, w_name, bias_name, x_scale, w_scale_name, mask, x_zero, w_zero_name, past = ins[:9]
    _float32(node, graph, (2, 3, 4, 8))
    if int(node.attrs.get("do_rotary", 0)) or int(node.attrs.get("past_present_share_buffer", 0)):
        raise AotcError("QAttention with do_rotary or past_present_share_buffer is not supported", node=node)
    if graph.tensors[x].dtype != "uint8":
        raise AotcError(f"QAttention of a {graph.tensors[x].dtype} input is not supported (uint8)", node=node)
    consts = {k: graph.const(n) if n else None for k, n in (("w", w_name), ("bias", bias_name),
                                                           ("w_scale", w_scale_name), ("w_zero", w_zero_name))}
    if any(consts[k] is None for k in ("w", "bias", "w_scale")) or (w_zero_name and consts["w_zero"] is None):
        raise AotcError("QAttention's weight, bias, weight_scale and weight_zero_point must be constants", node=node)
    _scalar(graph, node, x_scale, "input_scale")
    if x_zero:
        _scalar(graph, node, x_zero, "input_zero_point")
    w, bias = consts["w"], consts["bias"]
    shape = shape_of(graph, x)
    heads = int(node.attrs.get("num_heads", 0))
    if len(shape) != 3 or w.ndim != 2 or w.shape[0] != shape[2] or heads <= 0 or w.shape[1] % (3 * heads):
        raise AotcError(f"QAttention of input {list(shape)}, weight {list(w.shape)} and num_heads {heads} is not "
                        "supported", node=node)
    width = w.shape[1] // 3
    w_scale = np.asarray(consts["w_scale"], np.float32).reshape(-1)
    w_zero = None if consts["w_zero"] is None else np.asarray(consts["w_zero"]).reshape(-1)
    for what, v in (("weight_scale", w_scale), ("weight_zero_point", w_zero)):
        if v is not None and v.size not in (1, 3 * width):
            raise AotcError(f"QAttention's {what} has {v.size} values (1 or {3 * width})", node=node)
    b = Builder(node, graph)
    out_shape = (shape[0], shape[1], width)
    qkv = []
    for j in range(3):
        cols = slice(j * width, (j + 1) * width)
        ins = [x, b.tensor((shape[2], width), np.ascontiguousarray(w[:, cols]), dtype=str(w.dtype))]
        ins.append(x_zero)
        if w_zero is not None:
            zero = w_zero if w_zero.size == 1 else w_zero[cols]
            ins.append(b.tensor(zero.shape if zero.size > 1 else (), np.ascontiguousarray(zero.reshape(
                zero.shape if zero.size > 1 else ())), dtype=str(w_zero.dtype)))
        while not ins[-1]:
            ins.pop()
        acc = b.add("MatMulInteger", ins, out_shape, dtype="int32")
        as_float = b.add("Cast", [acc], out_shape, {"to": "float32", "saturate": 1})
        part = w_scale if w_scale.size == 1 else w_scale[cols]
        part_name = b.tensor(() if part.size == 1 else (width,), part.reshape(() if part.size == 1 else (width,)))
        scale = b.add("Mul", [part_name, x_scale], tuple(np.broadcast_shapes(shape_of(graph, part_name),
                                                                            shape_of(graph, x_scale))))
        y = b.add("Mul", [as_float, scale], out_shape)
        qkv.append(b.add("Add", [y, b.tensor((width,), np.ascontiguousarray(bias[cols], np.float32))], out_shape))
    return _packed_attention(b, node, opset, qkv, heads, [width] * 3, mask, past, "")


def multi_head_attention(node: Node, graph: Graph, opset: int) -> list[Node]:
    """MultiHeadAttention(query, key, value, bias?, key_padding_mask?, attention_bias?, past_key?, past_value?)
    -> Q, K, V each plus its third of bias, then ONNX Attention with the additive mask (module docstring),
    past_key / past_value and present_key / present_value as ONNX's. 3-D query, key and value only (the packed
    forms and a 4-D key are refused), as are past_sequence_length, cache_indirection and a read qk."""
    _float32(node, graph, (0, 1, 2, 3, 5, 6, 7))
    for k, what in ((8, "past_sequence_length"), (9, "cache_indirection")):
        if _input(node, k):
            raise AotcError(f"MultiHeadAttention's input {what} is not supported", node=node)
    if len(node.outputs) > 3 and _read(graph, node.outputs[3]):
        raise AotcError("MultiHeadAttention's output qk is not supported", node=node)
    heads = int(node.attrs.get("num_heads", 0))
    q, k, v = node.inputs[0], _input(node, 1), _input(node, 2)
    shapes = [shape_of(graph, n) if n else () for n in (q, k, v)]
    if not k or not v or any(len(s) != 3 for s in shapes) or heads <= 0 or shapes[0][0] != shapes[1][0] \
            or shapes[1][:2] != shapes[2][:2] or shapes[0][2] != shapes[1][2] \
            or shapes[0][2] % heads or shapes[2][2] % heads:
        raise AotcError(f"MultiHeadAttention of query, key, value {[list(s) for s in shapes]} and num_heads "
                        f"{heads} is not supported (3-D [B, S, D], [B, L, D], [B, L, D_v]; packed QKV or KV and "
                        "a 4-D key are not)", node=node)
    batch, seq, width = shapes[0]
    kv_len, v_width = shapes[1][1], shapes[2][2]
    b = Builder(node, graph)
    qkv = [q, k, v]
    bias = _input(node, 3)
    if bias:
        if shape_of(graph, bias) != (2 * width + v_width,):
            raise AotcError(f"MultiHeadAttention's bias of shape {list(shape_of(graph, bias))} is not "
                            f"[{2 * width + v_width}]", node=node)
        start = 0
        for j, size in enumerate((width, width, v_width)):
            part = b.add("Slice", [bias], (size,), {"starts": [start], "steps": [1]})
            qkv[j] = b.add("Add", [qkv[j], part], shapes[j])
            start += size
    past = (_input(node, 6), _input(node, 7))
    if bool(past[0]) != bool(past[1]):
        raise AotcError("MultiHeadAttention needs past_key and past_value together", node=node)
    past_len = 0
    if past[0]:
        want = [(batch, heads, None, width // heads), (batch, heads, None, v_width // heads)]
        got = [shape_of(graph, p) for p in past]
        if any(len(g) != 4 or g[:2] != w[:2] or g[3] != w[3] for g, w in zip(got, want, strict=True)) \
                or got[0][2] != got[1][2]:
            raise AotcError(f"MultiHeadAttention's past_key and past_value of shapes {[list(g) for g in got]} "
                            f"are not supported ([{batch}, {heads}, P, head size])", node=node)
        past_len = got[0][2]
    total = past_len + kv_len
    mask = additive_mask(b, node, graph, _input(node, 4), _input(node, 5), batch, heads, seq, total)
    outs = [node.outputs[0]] + [_output(node, j) if _read(graph, _output(node, j)) else "" for j in (1, 2)]
    while not outs[-1]:
        outs.pop()
    _attend(b, node, graph, opset, qkv, mask, past, heads, outs)
    return b.nodes


def embed_layer_norm(node: Node, graph: Graph, opset: int) -> list[Node]:
    """EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding, segment_embedding?,
    gamma, beta, mask?, position_ids?) -> LayerNormalization over the last axis of (word + position) (+ segment)
    embeddings, gathered by the int32 ids; positions 0 .. S - 1 when position_ids is absent (a constant slice
    of the table), a [1, S] position_ids broadcast over the batch. Outputs: mask_index, each mask row's count
    of ones (0s without a mask), as onnxruntime's kernel counts them; embedding_sum, the sum before the norm."""
    ins = list(node.inputs) + [""] * (9 - len(node.inputs))
    if not all(ins[k] for k in (2, 3, 5, 6)):
        raise AotcError(f"{node.op} needs word_embedding, position_embedding, gamma and beta (inputs 2, 3, 5, 6)",
                        node=node)
    _float32(node, graph, (2, 3, 4, 5, 6))
    b = Builder(node, graph)
    return _embed(b, node, opset, ins[:9], None)


def _embed(b: Builder, node: Node, opset: int, ins: list[str], words: str | None) -> list[Node]:
    """EmbedLayerNormalization's rewrite on float tables (`words`: the word rows already looked up)."""
    graph = b.graph
    ids, seg_ids, word, pos, seg, gamma, beta, mask, pos_ids = ins
    for name in (ids, seg_ids, mask, pos_ids):
        if name and graph.tensors[name].dtype != "int32":
            raise AotcError(f"{node.op}'s integer inputs must be int32, {name} is {graph.tensors[name].dtype}",
                            node=node)
    if bool(seg_ids) != bool(seg):
        raise AotcError(f"{node.op} needs segment_ids and segment_embedding together", node=node)
    shape = shape_of(graph, ids)
    if len(shape) != 2 or len(shape_of(graph, word)) != 2:
        raise AotcError(f"{node.op} of input_ids {list(shape)} is not supported ([B, S])", node=node)
    batch, seq = shape
    hidden = shape_of(graph, word)[1]
    out_shape = (batch, seq, hidden)
    total = words or b.add("Gather", [word, ids], out_shape, {"axis": 0})
    table = graph.const(pos)
    if pos_ids:
        p_shape = shape_of(graph, pos_ids)
        if p_shape not in ((batch, seq), (1, seq)):
            raise AotcError(f"EmbedLayerNormalization's position_ids of shape {list(p_shape)} is not supported "
                            f"([{batch}, {seq}] or [1, {seq}])", node=node)
        positions = b.add("Gather", [pos, pos_ids], (*p_shape, hidden), {"axis": 0})
    elif table is not None and table.shape[0] >= seq:
        positions = b.tensor((seq, hidden), np.ascontiguousarray(table[:seq], np.float32))
    else:
        index = b.tensor((seq,), np.arange(seq, dtype=np.int32), dtype="int32")
        positions = b.add("Gather", [pos, index], (seq, hidden), {"axis": 0})
    total = b.add("Add", [total, positions], out_shape)
    embedding_sum = node.outputs[2] if len(node.outputs) > 2 and _read(graph, node.outputs[2]) else None
    if seg:
        segments = b.add("Gather", [seg, seg_ids], out_shape, {"axis": 0})
        total = b.add("Add", [total, segments], out_shape, out=embedding_sum)
    elif embedding_sum:
        b.add("Identity", [total], None, out=embedding_sum)
        total = embedding_sum
    for n in b.nodes:  # the node's own name is the LayerNormalization's
        n.name = f"{node.name}__sum" if n.name == node.name else n.name
    norm = Node("LayerNormalization", node.name, [total, gamma, beta], [node.outputs[0]],
                {"axis": -1, "epsilon": float(node.attrs.get("epsilon", 1e-12))}, node.sources())
    layer_norm(norm, graph, opset)
    b.nodes.append(norm)
    if len(node.outputs) > 1 and _read(graph, node.outputs[1]):
        index_out = node.outputs[1]
        if mask:
            if shape_of(graph, mask) != shape:
                raise AotcError(f"EmbedLayerNormalization's mask of shape {list(shape_of(graph, mask))} is not "
                                f"[{batch}, {seq}]", node=node)
            ones = b.add("Equal", [mask, b.tensor((), np.array(1, np.int32), dtype="int32")], shape, dtype="bool")
            ones = b.add("Cast", [ones], shape, {"to": "float32", "saturate": 1})
            count = b.add("ReduceSum", [ones], (batch,), {"axes": [1], "keepdims": 0})
            b.add("Cast", [count], (batch,), {"to": "int32", "saturate": 1}, out=index_out, dtype="int32")
            b.nodes[-1].name = f"{node.name}__mask_index"
        else:
            graph.tensors[index_out] = Tensor(index_out, (batch,), "int32", np.zeros((batch,), np.int32))
    return b.nodes


def _dequantized(graph: Graph, node: Node, q: str, scale: str, zero: str, what: str) -> np.ndarray:
    """A constant table's floats, (q - zero) * scale in float32 as onnxruntime dequantizes each value."""
    values = [graph.const(n) for n in (q, scale, zero)]
    if any(v is None for v in values):
        raise AotcError(f"{node.op}'s {what}, its scale and zero point must be constants", node=node)
    table, s, z = values
    if s.size != 1 or z.size != 1:
        raise AotcError(f"{node.op}'s {what} scale and zero point must be single values", node=node)
    diff = table.astype(np.int32) - np.int32(z.reshape(-1)[0])
    return (diff.astype(np.float32) * np.float32(s.reshape(-1)[0])).astype(np.float32)


def q_embed_layer_norm(node: Node, graph: Graph, opset: int) -> list[Node]:
    """QEmbedLayerNormalization (quantize_dynamic's EmbedLayerNormalization: int8/uint8 tables, gamma and beta,
    each with a scale and zero point): the word rows gathered as integers and dequantized at run time
    (DequantizeLinear: the table stays 8-bit), the small tables (positions, segments, gamma, beta) dequantized
    at compile time, each value (q - zero) * scale as onnxruntime computes it; then EmbedLayerNormalization's
    rewrite (outputs layernorm_out and mask_index_out)."""
    ins = list(node.inputs) + [""] * (18 - len(node.inputs))
    ids, seg_ids, word = ins[0], ins[1], ins[2]
    if not all(ins[k] for k in (2, 3, 5, 6, 8, 9, 11, 12, 13, 14, 16, 17)):
        raise AotcError("QEmbedLayerNormalization needs its tables, gamma, beta and their scales and zero points",
                        node=node)
    b = Builder(node, graph)
    floats = {}
    for k, what in ((3, "position_embedding"), (4, "segment_embedding"), (5, "gamma"), (6, "beta")):
        if ins[k]:
            value = _dequantized(graph, node, ins[k], ins[k + 6], ins[k + 11], what)
            floats[k] = b.tensor(value.shape, value)
    for n in (ins[8], ins[13]):
        if graph.const(n) is None or graph.tensors[n].size != 1:
            raise AotcError("QEmbedLayerNormalization's word_embedding scale and zero point must be constant single "
                            "values", node=node)
    shape = shape_of(graph, ids)
    if len(shape) != 2 or len(shape_of(graph, word)) != 2:
        raise AotcError(f"QEmbedLayerNormalization of input_ids {list(shape)} is not supported ([B, S])", node=node)
    out_shape = (*shape, shape_of(graph, word)[1])
    rows = b.add("Gather", [word, ids], out_shape, {"axis": 0}, dtype=graph.tensors[word].dtype)
    words = b.add("DequantizeLinear", [rows, ins[8], ins[13]], out_shape, {"axis": 1})
    quantize_linear(b.nodes[-1], graph, opset)
    return _embed(b, node, opset, [ids, seg_ids, word, floats[3], floats.get(4, ""), floats[5], floats[6], ins[7], ""],
                  words)


def _last_slice(b: Builder, x: str, shape: tuple[int, ...], start: int, stop: int) -> str:
    """x[..., start:stop]."""
    return b.add("Slice", [x], (*shape[:-1], stop - start), {"starts": [0] * (len(shape) - 1) + [start],
                                                             "steps": [1] * len(shape)})


def rotary_embedding(node: Node, graph: Graph, opset: int) -> list[Node]:
    """com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache): the first rotary_embedding_dim
    features of each head rotated, as onnxruntime's CPU kernel computes each output, x_i cos + sign x_j sin
    (halves, or pairs when interleaved), the other features copied; positions position_ids[0] + s for a
    [1] position_ids, else read per token. Input [B, S, N * H] (num_heads, or H from the caches) or
    [B, N, S, H]."""
    _float32(node, graph, (0, 2, 3))
    x, pos_ids, cos, sin = node.inputs[:4]
    shape, c_shape = shape_of(graph, x), shape_of(graph, cos)
    if graph.tensors[pos_ids].dtype != "int64" or len(c_shape) != 2 or shape_of(graph, sin) != c_shape \
            or len(shape) not in (3, 4):
        raise AotcError(f"RotaryEmbedding of input {list(shape)}, position_ids "
                        f"{graph.tensors[pos_ids].dtype}{list(shape_of(graph, pos_ids))} and caches {list(c_shape)} "
                        "is not supported", node=node)
    heads, rotary = int(node.attrs.get("num_heads", 0)), int(node.attrs.get("rotary_embedding_dim", 0))
    if len(shape) == 4:
        batch, heads, seq, head = shape
    else:
        batch, seq = shape[:2]
        head = shape[2] // heads if heads > 0 else 2 * c_shape[1]
        heads = shape[2] // head
    rotary = rotary or head
    half = rotary // 2
    if rotary % 2 or rotary > head or c_shape[1] != half or heads * head != (shape[1] * shape[3] if len(shape) == 4
                                                                            else shape[2]):
        raise AotcError(f"RotaryEmbedding with {heads} heads, rotary_embedding_dim {rotary} and caches "
                        f"{list(c_shape)} does not fit input {list(shape)}", node=node)
    b = Builder(node, graph)
    p_shape = shape_of(graph, pos_ids)
    if p_shape in ((1,), ()):
        positions = b.add("Add", [pos_ids, b.tensor((seq,), np.arange(seq, dtype=np.int64), dtype="int64")], (seq,),
                          dtype="int64")
        lead = (1, seq)
    elif p_shape == (batch, seq):
        positions, lead = pos_ids, (batch, seq)
    else:
        raise AotcError(f"RotaryEmbedding's position_ids of shape {list(p_shape)} is not supported ([1] or "
                        f"[{batch}, {seq}])", node=node)
    view = (batch, seq, heads, head) if len(shape) == 3 else shape
    # the caches' rows as [B or 1, S, 1, half] (3-D input) or [B or 1, 1, S, half] (4-D)
    c_view = (lead[0], seq, 1, half) if len(shape) == 3 else (lead[0], 1, seq, half)
    interleaved = bool(int(node.attrs.get("interleaved", 0)))
    if interleaved:
        c_view = (*c_view, 1)
    tables = [b.add("Reshape", [b.add("Gather", [t, positions], (*_p_shape_of(lead, p_shape), half), {"axis": 0})],
                    c_view) for t in (cos, sin)]
    x4 = b.add("Reshape", [x], view) if len(shape) == 3 else x
    part = _last_slice(b, x4, view, 0, rotary) if rotary < head else x4
    if interleaved:
        pairs = (*view[:-1], half, 2)
        part = b.add("Reshape", [part], pairs)
        first, second = (_last_slice(b, part, pairs, k, k + 1) for k in (0, 1))
        piece = (*view[:-1], half, 1)
    else:
        rot_view = (*view[:-1], rotary)
        first, second = (_last_slice(b, part, rot_view, k * half, (k + 1) * half) for k in (0, 1))
        piece = (*view[:-1], half)
    c, s = tables
    out1 = b.add("Sub", [b.add("Mul", [first, c], piece), b.add("Mul", [second, s], piece)], piece)
    out2 = b.add("Add", [b.add("Mul", [second, c], piece), b.add("Mul", [first, s], piece)], piece)
    rotated = b.add("Concat", [out1, out2], (*piece[:-1], 2 * piece[-1]), {"axis": len(piece) - 1})
    if interleaved:
        rotated = b.add("Reshape", [rotated], (*view[:-1], rotary))
    if rotary < head:
        rest = _last_slice(b, x4, view, rotary, head)
        rotated = b.add("Concat", [rotated, rest], view, {"axis": 3})
    b.add("Reshape" if len(shape) == 3 else "Identity", [rotated], None, out=node.outputs[0])
    return b.nodes


def _p_shape_of(lead: tuple[int, int], p_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The gathered rows' leading dims: [S] for a [1] position_ids (positions computed), else [B, S]."""
    return (lead[1],) if lead[0] == 1 and p_shape in ((1,), ()) else lead
