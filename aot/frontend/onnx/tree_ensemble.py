"""ai.onnx.ml's TreeEnsemble (opset 5) written as ai.onnx ops on import (issue 51): the trees are attributes,
so every root-to-leaf path is known at compile time and a prediction is matrix arithmetic on comparisons.

Each branch node's condition is computed for every row at once (X in double, gathered at the node's feature,
compared with its split as onnx's reference compares them; a set membership by equality with its members;
a NaN feature true where nodes_missing_value_tracks_true says). With C the conditions as 0/1 ([N, J]) and
A [J, P] holding +1 where path p takes node j's true branch and -1 where it takes the false one, a row
reaches the leaf of path p exactly when (C A)[:, p] equals the count of true branches on p (small integers:
exact in float). The reached paths times their leaves' weights, by target, give the SUM (or AVERAGE).
Refused by name: MIN and MAX aggregation, a post_transform (onnx's reference does not apply it), a set
holding 0 (the reference's reader ends a set there).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from aot.errors import AotcError, OnnxNodeName

MAX_PATHS = 1 << 16
_COMPARE = {0: "LessOrEqual", 1: "Less", 2: "GreaterOrEqual", 3: "Greater", 4: "Equal", 5: "NEQ", 6: "MEMBER"}


def _array(attrs: dict, name: str) -> np.ndarray | None:
    v = attrs.get(name)
    if v is None:
        return None
    return numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else np.asarray(v)


def _paths(attrs: dict, node: onnx.NodeProto) -> tuple[list[tuple[list[tuple[int, bool]], int]], dict[int, list]]:
    """Every root-to-leaf path ([(branch node, took its true branch)], leaf), and the member sets of the
    MEMBER nodes, read in the order onnx's reference builds the trees (depth first, true branch first)."""
    modes = [int(m) for m in _array(attrs, "nodes_modes")]
    true_ids, false_ids = list(attrs["nodes_truenodeids"]), list(attrs["nodes_falsenodeids"])
    true_leaf, false_leaf = list(attrs["nodes_trueleafs"]), list(attrs["nodes_falseleafs"])
    members = _array(attrs, "membership_values")
    stream = iter([] if members is None else members.tolist())
    sets: dict[int, list] = {}
    paths: list[tuple[list[tuple[int, bool]], int]] = []

    def walk(j: int, prefix: list[tuple[int, bool]], depth: int) -> None:
        if depth > len(modes) or len(paths) > MAX_PATHS:
            raise AotcError(f"its trees are not trees of at most {MAX_PATHS} leaves", node=OnnxNodeName(node))
        if modes[j] == 6 and j not in sets:
            got = []
            for v in stream:
                if v != v:
                    break
                if v == 0:
                    raise AotcError("a member set holds 0, where onnx's reference ends the set",
                                    node=OnnxNodeName(node))
                got.append(v)
            sets[j] = got
        for taken, child, is_leaf in ((True, true_ids[j], true_leaf[j]), (False, false_ids[j], false_leaf[j])):
            if is_leaf:
                paths.append(([*prefix, (j, taken)], int(child)))
            else:
                walk(int(child), [*prefix, (j, taken)], depth + 1)

    for root in attrs["tree_roots"]:
        r = int(root)
        if true_leaf[r] and false_leaf[r] and true_ids[r] == false_ids[r]:  # a tree that is one leaf
            paths.append(([], int(true_ids[r])))
        else:
            walk(r, [], 0)
    return paths, sets


def lower_tree_ensemble(node: onnx.NodeProto, base: str, shapes: dict[str, list[int]], elems: dict[str, int],
                        add_init: Callable[[np.ndarray], str]) -> list[onnx.NodeProto]:
    """The ai.onnx nodes that compute `node` (TreeEnsemble); initializers through add_init(value) -> name."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if int(attrs.get("aggregate_function", 1)) not in (0, 1):
        raise AotcError("TreeEnsemble aggregate_function MIN or MAX is not supported (SUM, AVERAGE)",
                        node=OnnxNodeName(node))
    if int(attrs.get("post_transform", 0)) != 0:
        raise AotcError("TreeEnsemble post_transform is not supported (onnx's reference does not apply it)",
                        node=OnnxNodeName(node))
    x_shape, elem = shapes.get(node.input[0]), elems.get(node.input[0])
    if x_shape is None or len(x_shape) != 2 or elem not in (TensorProto.FLOAT, TensorProto.DOUBLE):
        raise AotcError("TreeEnsemble is compiled for float or double X of static shape [N, F]",
                        node=OnnxNodeName(node))
    paths, sets = _paths(attrs, node)
    splits = _array(attrs, "nodes_splits").astype(np.float64)
    features = [int(f) for f in attrs["nodes_featureids"]]
    modes = [int(m) for m in _array(attrs, "nodes_modes")]
    tracks = [int(t) for t in attrs.get("nodes_missing_value_tracks_true", [0] * len(modes))]
    weights = _array(attrs, "leaf_weights").astype(np.float64)
    targets = [int(t) for t in attrs["leaf_targetids"]]
    n_targets = int(attrs.get("n_targets", max(targets, default=0) + 1))
    if any(not 0 <= f < x_shape[1] for f in features) or any(not 0 <= t < n_targets for t in targets):
        raise AotcError("a feature or target id is out of range", node=OnnxNodeName(node))
    rows = x_shape[0]
    out: list[onnx.NodeProto] = []
    count = [0]

    def op(op_type: str, *inputs: str, result: str | None = None, **kw: object) -> str:
        count[0] += 1
        name = f"{base}/{op_type}_{count[0]}"
        out.append(helper.make_node(op_type, list(inputs), [result or name], name=name, **kw))
        return result or name

    w = np.zeros((len(paths), n_targets), np.float64)
    for p, (_, leaf) in enumerate(paths):
        w[p, targets[leaf]] += weights[leaf]
    if int(attrs.get("aggregate_function", 1)) == 0:
        w /= len(attrs["tree_roots"])
    y = paths_matrix(op, add_init, node.input[0], paths, features, modes, splits, tracks, sets, w, node, rows)
    op("Cast", y, to=elem, result=node.output[0])
    return out


def paths_matrix(op: Callable[..., str], add_init: Callable[[np.ndarray], str], x: str,
                 paths: list[tuple[list[tuple[int, bool]], int]], features: list[int], modes: list[int],
                 splits: np.ndarray, tracks: list[int], sets: dict[int, list], w: np.ndarray,
                 node: onnx.NodeProto, rows: int | None = None) -> str:
    """[N, T] float32: the rows' reached paths times their weights `w` [paths, T] (shared by TreeEnsemble
    and ai.onnx.ml 1/3's TreeEnsembleClassifier / TreeEnsembleRegressor, sklearn_ops.py); op(op_type,
    *inputs, **attrs) appends a node and returns its output."""
    xd = op("Cast", x, to=TensorProto.DOUBLE)
    branch = sorted({j for p, _ in paths for j, _ in p})
    columns = []  # one [N, 1] 0/1 float per branch node, in `branch` order
    for j in branch:
        col = op("Gather", xd, add_init(np.array([features[j]], np.int64)), axis=1)  # [N, 1]
        kind = _COMPARE.get(modes[j])
        if kind is None:
            raise AotcError(f"node mode {modes[j]} is not one of BRANCH_LEQ .. BRANCH_MEMBER", node=OnnxNodeName(node))
        if kind == "MEMBER":
            hits = op("Cast", op("Equal", col, add_init(np.array(sets[j] or [np.nan], np.float64))),
                      to=TensorProto.FLOAT)
            cond = op("Greater", op("MatMul", hits, add_init(np.ones((max(len(sets[j]), 1), 1), np.float32))),
                      add_init(np.array(0.0, np.float32)))
        elif kind == "NEQ":
            cond = op("Not", op("Equal", col, add_init(np.array(splits[j], np.float64))))
        else:
            cond = op(kind, col, add_init(np.array(splits[j], np.float64)))
        if tracks[j]:
            cond = op("Or", cond, op("Not", op("Equal", col, col)))  # NaN: the only value unequal to itself
        columns.append(op("Cast", cond, to=TensorProto.FLOAT))
    a = np.zeros((max(len(branch), 1), len(paths)), np.float32)
    need = np.zeros(len(paths), np.float32)
    at = {j: k for k, j in enumerate(branch)}
    for p, (steps, _) in enumerate(paths):
        for j, taken in steps:
            a[at[j], p] += 1.0 if taken else -1.0
            need[p] += 1.0 if taken else 0.0
    if columns:
        c = columns[0] if len(columns) == 1 else op("Concat", *columns, axis=1)
        sums = op("MatMul", c, add_init(a))
    elif rows is not None:
        sums = add_init(np.zeros((rows, len(paths)), np.float32))
    else:  # every tree one leaf, rows known at run time: a column of zeros from X (no value is below -inf)
        c = op("Cast", op("Less", op("Gather", xd, add_init(np.array([0], np.int64)), axis=1),
                          add_init(np.array(-np.inf, np.float64))), to=TensorProto.FLOAT)
        sums = op("MatMul", c, add_init(a))
    reached = op("Cast", op("Equal", sums, add_init(need)), to=TensorProto.FLOAT)
    return op("MatMul", reached, add_init(w.astype(np.float32)))
