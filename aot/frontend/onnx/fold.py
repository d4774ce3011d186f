"""Shape inference and constant folding on the ONNX model, iterated to a fixed point.

ONNX shape inference stops at values computed at run time from shapes
(Shape -> Gather -> Concat -> Reshape). Folding such chains turns them into
initializers, after which inference can see through the Reshape, which may
expose more folding. Folding evaluates nodes with onnx's own reference
implementation, so every op's semantics come from the ONNX project, not us.

An If whose condition folds to a constant is replaced by the branch it takes
(`_inline_constant_ifs`): the branch's nodes join the graph with unique names,
its values are renamed apart, its outputs become the If's, and what it reads
of the outer scope is read as before. Its nodes may then fold in turn.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from aot.errors import AotcError, OnnxNodeName
from aot.frontend.onnx import contrib
from aot.frontend.onnx.loops import fresh_name, loop_refusal
from aot.frontend.onnx.skeleton import adopt_inference, skeleton
from aot.frontend.onnx.validate import check_node_outputs
from aot.ir import Node
from aot.ir.evaluate import evaluate_node, static_shapes
from aot.ir.held import initializer_value
from aot.unsupported import UnsupportedNodes

# Ops whose result is not a function of their inputs.
_NONDETERMINISTIC = {
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
}
MAX_ROUNDS = 32
# Quantization ops stay in the graph even on constant inputs: the QDQ rewrite (aot/passes/qdq.py)
# reads the integer weights behind a DequantizeLinear, and folds what it does not fuse itself
# (onnx's reference evaluator has no DequantizeLinear below opset 19).
_QUANT = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
          "MatMulInteger", "ConvInteger"}


def infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """onnx's shape inference, with the com.microsoft ops' shapes filled in between its rounds; on
    the model's skeleton (no large weights: aot/frontend/onnx/skeleton.py), taken back into `model`."""
    light = skeleton(model)
    for _ in range(MAX_ROUNDS):
        try:
            light = shape_inference.infer_shapes(light, check_type=False, strict_mode=False, data_prop=True)
        except Exception as e:  # onnx raises a variety of types for inconsistent models
            raise AotcError(f"shape inference failed: {str(e).splitlines()[0]}") from e
        if not contrib.fill_shapes(light):
            break
    adopt_inference(model, light)
    return model


def read_names(graph: onnx.GraphProto) -> set[str]:
    """Every name a node of `graph` or of its subgraphs (If/Loop/Scan bodies) reads, and the
    subgraphs' outputs (which may be outer-scope values)."""
    names: set[str] = set()
    for node in graph.node:
        names.update(i for i in node.input if i)
        for sub in _subgraphs(node):
            names |= read_names(sub) | {o.name for o in sub.output}
    return names


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    out: list[onnx.GraphProto] = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def _all_names(graph: onnx.GraphProto, names: set[str]) -> set[str]:
    """Every value name of `graph` and its subgraphs, into `names`."""
    names.update(i.name for i in graph.initializer)
    names.update(v.name for v in list(graph.input) + list(graph.output) + list(graph.value_info))
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
        for sub in _subgraphs(node):
            _all_names(sub, names)
    return names


def _rename_reads(graph: onnx.GraphProto, renamed: dict[str, str]) -> None:
    """In a subgraph: reads of renamed outer values follow the new names, except where the subgraph
    defines the name itself (shadows it)."""
    own = {i.name for i in graph.initializer} | {v.name for v in graph.input} | \
        {o for n in graph.node for o in n.output}
    renamed = {k: v for k, v in renamed.items() if k not in own}
    for node in graph.node:
        for k, i in enumerate(node.input):
            node.input[k] = renamed.get(i, i)
        for sub in _subgraphs(node):
            _rename_reads(sub, renamed)
    for o in graph.output:
        o.name = renamed.get(o.name, o.name)


def _condition(node: onnx.NodeProto, consts: dict[str, np.ndarray]) -> bool | None:
    """The If's condition when it is a constant, else None."""
    value = consts.get(node.input[0]) if node.input and node.input[0] else None
    if value is None:
        return None
    if value.size != 1:
        raise AotcError(f"the condition '{node.input[0]}' has {value.size} elements; an If takes exactly one",
                        node=OnnxNodeName(node))
    return bool(value.reshape(-1)[0])


def _inline_constant_ifs(model: onnx.ModelProto) -> bool:
    """Each If of the main graph whose condition is a constant -> the nodes of its branch."""
    g = model.graph
    consts = _Constants(g.initializer)
    if not any(n.op_type == "If" and n.domain in ("", "ai.onnx") and _condition(n, consts) is not None
               for n in g.node):
        return False
    names = _all_names(g, set())
    node_names = {n.name for n in g.node}
    out: list[onnx.NodeProto] = []
    for node in g.node:
        taken = _condition(node, consts) if node.op_type == "If" and node.domain in ("", "ai.onnx") else None
        if taken is None:
            out.append(node)
            continue
        branch = next((a.g for a in node.attribute if a.name == ("then_branch" if taken else "else_branch")), None)
        if branch is None:
            raise AotcError(f"the If has no {'then' if taken else 'else'}_branch", node=OnnxNodeName(node))
        out.extend(_inline_branch(g, node, branch, names, node_names))
    del g.node[:]
    g.node.extend(out)
    return True


def _inline_branch(g: onnx.GraphProto, node: onnx.NodeProto, branch: onnx.GraphProto, names: set[str],
                   node_names: set[str]) -> list[onnx.NodeProto]:
    """The branch's nodes as nodes of `g`, computing the If's outputs."""
    if len(branch.output) != len(node.output):
        raise AotcError(f"the branch '{branch.name}' has {len(branch.output)} outputs, the If {len(node.output)}",
                        node=OnnxNodeName(node))
    if branch.sparse_initializer:
        raise AotcError("a sparse initializer in an If branch is not supported", node=OnnxNodeName(node))

    produced = {o for n in branch.node for o in n.output if o}
    renamed: dict[str, str] = {}
    identities: list[tuple[str, str]] = []  # (source, If output) where a branch output is not a node's own
    for src, dst in zip((o.name for o in branch.output), node.output, strict=True):
        if src in produced and src not in renamed:
            renamed[src] = dst
        else:  # an outer-scope value, a branch initializer, or a value given to two outputs
            identities.append((src, dst))
    for name in sorted(produced - set(renamed)) + [i.name for i in branch.initializer]:
        renamed[name] = fresh_name(f"{node.name}__{name}", names)
    for init in branch.initializer:
        copy = onnx.TensorProto()
        copy.CopyFrom(init)
        copy.name = renamed[init.name]
        g.initializer.append(copy)
    nodes: list[onnx.NodeProto] = []
    for k, bn in enumerate(branch.node):
        n = onnx.NodeProto()
        n.CopyFrom(bn)
        n.name = fresh_name(f"{node.name}/{bn.name or f'{bn.op_type}_{k}'}", node_names)
        n.input[:] = [renamed.get(i, i) for i in n.input]
        n.output[:] = [renamed.get(o, o) for o in n.output]
        for sub in _subgraphs(n):
            _rename_reads(sub, renamed)
        nodes.append(n)
    for src, dst in identities:
        nodes.append(helper.make_node("Identity", [renamed.get(src, src)], [dst],
                                      name=fresh_name(f"{node.name}/{dst}", node_names)))
    return nodes


def refuse_control_flow(model: onnx.ModelProto, declared: dict[str, onnx.TypeProto] | None = None) -> None:
    """After folding: control flow left in the main graph is refused, all of it in one line (`declared`: the
    output declarations set aside meanwhile, which can give a Loop's count)."""
    refused: list[tuple[Node, str | None]] = []
    for n in model.graph.node:
        if n.op_type == "Loop" and n.domain in ("", "ai.onnx"):  # compiled by aot/frontend/onnx/loops.py, if it can be
            reason = loop_refusal(model, n, declared)
            if reason:
                refused.append((Node(n.op_type, n.name, list(n.input), list(n.output)), reason))
            continue
        if not _subgraphs(n):
            continue
        if n.op_type == "If" and n.domain in ("", "ai.onnx"):  # compiled by aot/frontend/onnx/branches.py
            continue
        reason = f"control flow ({n.op_type}, with a subgraph) is not supported"
        refused.append((Node(n.op_type, n.name, list(n.input), list(n.output)), reason))
    if refused:
        raise UnsupportedNodes(refused)


def _fold_once(model: onnx.ModelProto) -> bool:
    g = model.graph
    consts = _Constants(g.initializer)
    shapes = static_shapes(model)
    keep: list[onnx.NodeProto] = []
    folded: dict[str, np.ndarray] = {}
    for node in g.node:
        value = _try_fold(node, consts, shapes, list(model.opset_import))
        if value is None:
            keep.append(node)
            continue
        for name, arr in zip(node.output, value, strict=False):
            if name:
                consts[name] = arr
                folded[name] = arr
    if not folded:
        return False
    graph_outputs = {o.name for o in g.output}
    # A folded graph output stays computable: keep its node as an Identity of a constant.
    del g.node[:]
    g.node.extend(keep)
    used = read_names(g) | graph_outputs  # what the kept nodes and their subgraphs (If branches) read
    for name, arr in folded.items():
        if name in used:
            g.initializer.append(numpy_helper.from_array(np.asarray(arr, order="C"), name))
    return True


class _Constants(dict):
    """The initializers' values, each read from its proto when first asked for: a round of folding
    then reads only the constants of nodes that fold, not every weight of the model again."""

    def __init__(self, initializers: Iterable[onnx.TensorProto]):
        super().__init__()
        self._protos = {i.name: i for i in initializers}

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in self._protos

    def __missing__(self, name: str) -> np.ndarray:
        value = self[name] = initializer_value(self._protos[name])
        return value

    def get(self, name: str, default: np.ndarray | None = None) -> np.ndarray | None:
        return self[name] if name in self else default


def _try_fold(node: onnx.NodeProto, consts: dict[str, np.ndarray],
              shapes: dict[str, tuple[int, ...] | None], opsets: list) -> list[np.ndarray] | None:
    if node.domain not in ("", "ai.onnx") or node.op_type in _NONDETERMINISTIC or node.op_type in _QUANT:
        return None
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return None
    op = node.op_type
    if op.startswith("Reduce") and node.input and node.input[0] in consts and consts[node.input[0]].size == 0:
        return _reduce_of_empty(node, consts[node.input[0]], shapes.get(node.output[0]), opsets)
    if op in ("Shape", "Size"):
        shape = shapes.get(node.input[0])
        if shape is None or any(d < 0 for d in shape):  # a negative dim is refused with its node, on import
            return None
        inputs: list[np.ndarray | None] = [np.broadcast_to(np.float32(0), shape)]  # the shape, no data
    else:
        if any(i and i not in consts for i in node.input):
            return None
        inputs = [consts.get(i) if i else None for i in node.input]
        if op != "Constant" and not any(x is not None for x in inputs):
            return None
        check_node_outputs(node, [None if x is None else (x.dtype.name, x.shape) for x in inputs], inputs, opsets,
                           OnnxNodeName(node))  # before anything of an output's size is allocated
    try:
        return evaluate_node(node, inputs, opsets)
    except Exception as e:
        raise AotcError(f"cannot evaluate constant: {str(e).splitlines()[0]}",
                        node=OnnxNodeName(node)) from e


def _reduce_of_empty(node: onnx.NodeProto, x: np.ndarray, out: tuple[int, ...] | None,
                     opsets: list) -> list[np.ndarray] | None:
    """A Reduce of an empty tensor, whatever its axes (they may be a run-time input): each element of a
    non-empty output reduces an empty set, so is the op's identity (0, 1, -inf, ...), which onnx's own
    evaluator gives for a reduction of all of an empty vector."""
    if out is None or any(d < 0 for d in out):
        return None
    if 0 in out:
        return [np.zeros(out, x.dtype)]
    probe = helper.make_node(node.op_type, ["in0"], ["out0"], domain=node.domain, keepdims=0)
    value = evaluate_node(probe, [np.zeros((0,), x.dtype)], opsets)[0]
    return [np.full(out, value, dtype=value.dtype)]


def fold_to_fixed_point(model: onnx.ModelProto) -> onnx.ModelProto:
    model = infer_shapes(model)
    for _ in range(MAX_ROUNDS):
        folded = _fold_once(model)
        if not _inline_constant_ifs(model) and not folded:
            break
        del model.graph.value_info[:]
        model = infer_shapes(model)
    return model
