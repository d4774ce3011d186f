"""TfIdfVectorizer of integer tokens written as ai.onnx ops on import (issue 51): its pool, skips and
weights are attributes, so counting the pool's n-grams in a row is comparisons of shifted slices.

For each gram length n (min_gram_length .. max_gram_length) and skip distance d (1 .. max_skip_count + 1;
unigrams once, as onnx's reference and onnxruntime count them), the n tokens at i, i + d, ..., i + (n-1) d are
compared with every pool n-gram ([B, P_n, L] booleans, one And per token), and a MatMul with ones sums the
matches over i. The counts of all lengths are mapped to their output columns (ngram_indexes) by a MatMul with
a 0/1 matrix (small integers: exact in float), then weighted by the mode (TF, IDF, TFIDF). A string pool
(pool_strings) is refused: aotc has no strings.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from aot.errors import AotcError, OnnxNodeName


def _grams(attrs: dict, node: onnx.NodeProto) -> list[tuple[int, list[tuple[int, ...]]]]:
    """(n, the pool's n-grams in order) for each gram length the pool holds; the ids run over them in order."""
    pool = [int(v) for v in attrs.get("pool_int64s", [])]
    starts = [int(c) for c in attrs.get("ngram_counts", [])]
    out = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(pool)
        n = k + 1
        if end < start or (end - start) % n:
            raise AotcError(f"ngram_counts {starts} does not split pool_int64s of {len(pool)} into {n}-grams",
                            node=OnnxNodeName(node))
        out.append((n, [tuple(pool[i:i + n]) for i in range(start, end, n)]))
    return out


def lower_tfidf(model: onnx.ModelProto, opset: int) -> bool:
    """Every top-level TfIdfVectorizer of integer input and static shape replaced by its ops, in place."""
    if not any(n.op_type == "TfIdfVectorizer" and n.domain in ("", "ai.onnx") for n in model.graph.node):
        return False
    g = model.graph
    shapes = {vi.name: vi.type.tensor_type for vi in [*g.input, *g.value_info]}
    nodes: list[onnx.NodeProto] = []
    changed = False
    for k, node in enumerate(g.node):
        if node.op_type != "TfIdfVectorizer" or node.domain not in ("", "ai.onnx"):
            nodes.append(node)
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("pool_strings"):
            raise AotcError("TfIdfVectorizer of strings (pool_strings) is not supported: aotc has no strings",
                            node=OnnxNodeName(node))
        tt = shapes.get(node.input[0])
        if tt is None or tt.elem_type not in (TensorProto.INT32, TensorProto.INT64) or \
                not all(d.HasField("dim_value") for d in tt.shape.dim) or len(tt.shape.dim) not in (1, 2):
            nodes.append(node)  # refused later, as an op without a kernel
            continue
        nodes.extend(_lowered(node, k, [d.dim_value for d in tt.shape.dim], tt.elem_type, attrs, opset, g))
        changed = True
    del g.node[:]
    g.node.extend(nodes)
    return changed


def _lowered(node: onnx.NodeProto, k: int, dims: list[int], elem: int, attrs: dict, opset: int,
             g: onnx.GraphProto) -> list[onnx.NodeProto]:
    base = node.name or f"TfIdfVectorizer_{k}"
    out: list[onnx.NodeProto] = []
    count = [0]

    def name(tag: str) -> str:
        count[0] += 1
        return f"{base}/{tag}_{count[0]}"

    def const(value: np.ndarray) -> str:
        n = name("const")
        g.initializer.append(numpy_helper.from_array(value, n))
        return n

    def op(op_type: str, *inputs: str, result: str | None = None, **kw: object) -> str:
        n = name(op_type)
        out.append(helper.make_node(op_type, list(inputs), [result or n], name=n, **kw))
        return result or n

    def take(x: str, start: int, length: int) -> str:  # x[:, start:start + length]
        if opset >= 10:
            return op("Slice", x, const(np.array([start], np.int64)), const(np.array([start + length], np.int64)),
                      const(np.array([1], np.int64)))
        return op("Slice", x, axes=[1], starts=[start], ends=[start + length])

    lo, hi = int(attrs.get("min_gram_length", 1)), int(attrs.get("max_gram_length", 1))
    max_skip = int(attrs.get("max_skip_count", 0))
    mode = attrs.get("mode", b"TF")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    indexes = [int(i) for i in attrs.get("ngram_indexes", [])]
    weights = [float(w) for w in attrs.get("weights", [])]
    if mode not in ("TF", "IDF", "TFIDF"):
        raise AotcError(f"TfIdfVectorizer mode '{mode}' is not one of TF, IDF, TFIDF", node=OnnxNodeName(node))
    if not 1 <= lo <= hi or max_skip < 0:
        raise AotcError(f"gram lengths {lo} .. {hi} and max_skip_count {max_skip} are not valid",
                        node=OnnxNodeName(node))
    grams = _grams(attrs, node)
    n_ids = sum(len(gs) for _, gs in grams)
    if len(indexes) != n_ids or any(i < 0 for i in indexes):
        raise AotcError(f"ngram_indexes has {len(indexes)} entries for {n_ids} n-grams", node=OnnxNodeName(node))
    every = [gram for _, gs in grams for gram in gs]
    if len(set(every)) != len(every):
        raise AotcError("the pool holds an n-gram twice", node=OnnxNodeName(node))
    out_size = max(indexes, default=-1) + 1
    if weights and len(weights) != out_size:
        raise AotcError(f"{len(weights)} weights for {out_size} outputs", node=OnnxNodeName(node))
    rows, c = (1, dims[0]) if len(dims) == 1 else (dims[0], dims[1])
    x = op("Reshape", node.input[0], const(np.array([rows, c], np.int64)))
    dtype = np.int32 if elem == TensorProto.INT32 else np.int64
    per_length = []  # [rows, P_n] float counts, in pool order
    for n, gs in grams:
        if not gs:
            continue
        if not lo <= n <= hi:  # never counted: zeros in its columns
            per_length.append(const(np.zeros((rows, len(gs)), np.float32)))
            continue
        pool = np.array(gs, dtype)  # [P_n, n]
        sums = []
        for d in range(1, (1 if n == 1 else max_skip + 1) + 1):
            length = c - (n - 1) * d  # the starts i whose n tokens lie in the row
            if length <= 0:
                continue
            match = ""
            for t in range(n):
                tokens = op("Reshape", take(x, t * d, length), const(np.array([rows, 1, length], np.int64)))
                eq = op("Equal", tokens, const(pool[:, t].reshape(-1, 1)))  # [rows, P_n, length]
                match = eq if not match else op("And", match, eq)
            hits = op("MatMul", op("Cast", match, to=TensorProto.FLOAT), const(np.ones((length, 1), np.float32)))
            sums.append(op("Reshape", hits, const(np.array([rows, len(gs)], np.int64))))
        if not sums:
            per_length.append(const(np.zeros((rows, len(gs)), np.float32)))
            continue
        total = sums[0]
        for s in sums[1:]:
            total = op("Add", total, s)
        per_length.append(total)
    to_columns = np.zeros((max(n_ids, 1), max(out_size, 1)), np.float32)
    for j, column in enumerate(indexes):
        to_columns[j, column] = 1.0
    if per_length:
        counts = per_length[0] if len(per_length) == 1 else op("Concat", *per_length, axis=1)
        freq = op("MatMul", counts, const(to_columns[:n_ids, :out_size]))
    else:
        freq = const(np.zeros((rows, out_size), np.float32))
    w = const(np.array(weights or [1.0] * out_size, np.float32))
    if mode == "IDF":
        freq = op("Where", op("Greater", freq, const(np.array(0.0, np.float32))), w,
                  const(np.array(0.0, np.float32)))
    elif mode == "TFIDF" and weights:
        freq = op("Mul", freq, w)
    shape = [out_size] if len(dims) == 1 else [rows, out_size]
    op("Reshape", freq, const(np.array(shape, np.int64)), result=node.output[0])
    return out
