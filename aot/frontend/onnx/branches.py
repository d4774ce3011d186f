"""ONNX If with a condition known only at run time: a C `if`/`else` around each branch's kernel calls.

(An If whose condition is known at compile time never gets here: aot/frontend/onnx/fold.py inlines
its branch.) Each branch is imported as a model of its own, as a Loop's body is
(aot/frontend/onnx/loops.py): the outer scope's constants are its initializers, so they fold in, and
the outer scope's run-time values are inputs read in place. Both branches must give each output
one static shape and dtype: the arena has one plan.

`flatten_if` then puts the branches' nodes into the graph between three markers, so passes,
kernel selection, planning and emission see one node list:

    IfBegin(cond) -> slots        opens `if (cond) {`; the slots are the If outputs' bytes
    ...then branch...
    IfElse(slots, then results)   copies the then results into the slots; `} else {`
    ...else branch...
    IfEnd(slots, else results)    copies the else results into the slots; `}` -> the If outputs

Planning in program order is safe across the two branches: a value the then branch reads last
is read by nothing the else branch or later runs, and the slots live through both branches.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from aot.errors import AotcError
from aot.frontend.onnx.loops import adopt_tensors, free_names, fresh_name, own_outputs, value_info
from aot.ir import Graph, Node, Tensor

BRANCHES = ("then_branch", "else_branch")


class _IfNode:
    """Names the If in refusals (as errors on IR nodes print)."""

    def __init__(self, name: str):
        self.name = name

    def describe(self) -> str:
        return f"If '{self.name}'"


def import_if(node: onnx.NodeProto, tensors: dict[str, Tensor], model: onnx.ModelProto,
              import_model: Callable[..., Graph]) -> tuple[Node, dict[str, Tensor]]:
    """The If as one IR node holding its two compiled branches (flattened by `flatten_if`), and the
    tensors of its outputs."""
    where = _IfNode(node.name)
    cond = tensors.get(node.input[0]) if node.input and node.input[0] else None
    if cond is None:
        raise AotcError("has no condition input", node=where)
    if cond.size != 1:
        raise AotcError(f"its condition '{cond.name}' has {cond.size} elements; an If takes exactly one", node=where)
    branches: list[Graph] = []
    for key in BRANCHES:
        body = next((a.g for a in node.attribute if a.name == key and a.type == onnx.AttributeProto.GRAPH), None)
        if body is None:
            raise AotcError(f"has no {key}", node=where)
        if len(body.output) != len(node.output):
            raise AotcError(f"its {key} gives {len(body.output)} outputs, the If has {len(node.output)}", node=where)
        try:
            branches.append(import_model(_branch_model(node, key, body, tensors, model), f"{node.name}_{key}"))
        except AotcError as e:
            raise AotcError(f"in its {key}: {e.one_line()}", node=where) from e
    then_g, else_g = branches
    out_tensors: dict[str, Tensor] = {}
    bounded: dict[str, int] = {}
    for k, name in enumerate(node.output):
        if not name:
            continue
        a, b = then_g.tensors[then_g.outputs[k]], else_g.tensors[else_g.outputs[k]]
        differ = [d for d, (x, y) in enumerate(zip(a.shape, b.shape, strict=False)) if x != y]
        if len(a.shape) == len(b.shape) and len(differ) == 1 and a.dtype == b.dtype:
            # rows that depend on the branch taken (torchvision: an empty tensor, or NMS's kept rows):
            # planned at the larger, the rows written reported as an extent (aot/frontend/onnx/bounded.py)
            shape = tuple(max(x, y) for x, y in zip(a.shape, b.shape, strict=True))
            out_tensors[name] = Tensor(name, shape, a.dtype)
            bounded[name] = differ[0]
            continue
        if a.shape != b.shape or a.dtype != b.dtype:
            raise AotcError(f"output '{name}' is {a.dtype}{list(a.shape)} from its then_branch and "
                            f"{b.dtype}{list(b.shape)} from its else_branch; aotc needs one static shape",
                            node=where)
        out_tensors[name] = Tensor(name, a.shape, a.dtype)
    outer = dict.fromkeys(t for g in branches for t in g.inputs)
    ir = Node("If", node.name, [cond.name, *outer], list(node.output),
              {"then": then_g, "else": else_g, "bounded_outputs": bounded})
    return ir, out_tensors


def _branch_model(node: onnx.NodeProto, key: str, body: onnx.GraphProto, tensors: dict[str, Tensor],
                  model: onnx.ModelProto) -> onnx.ModelProto:
    """The branch as a model: the outer run-time values it reads are its inputs, the outer
    constants its initializers; each output a value of its own (an Identity where it would be an
    input, a constant, or another output)."""
    g = onnx.GraphProto()
    g.CopyFrom(body)
    g.name = f"{node.name}_{key}"
    del g.input[:]
    for name in free_names(body):
        t = tensors.get(name)
        if t is None:
            raise AotcError(f"its {key} reads '{name}', which is not defined before the If",
                            node=_IfNode(node.name))
        if t.is_const:
            g.initializer.append(numpy_helper.from_array(np.asarray(t.data), name))
        else:
            g.input.append(value_info(name, t))
    own_outputs(g, f"{node.name}/{key}", copy_unproduced=True)
    out = helper.make_model(g, opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    return out


def flatten_if(graph: Graph, node: Node, names: set[str], node_names: set[str]) -> list[Node]:
    """The If node -> IfBegin, the then branch's nodes, IfElse, the else branch's nodes, IfEnd
    (the branches renamed apart, and already flattened themselves)."""
    kept = [k for k, o in enumerate(node.outputs) if o]
    if not kept:
        return []  # nothing reads the If
    slots = []
    for k in kept:
        t = graph.tensors[node.outputs[k]]
        slots.append(fresh_name(f"{node.name}/{node.outputs[k]}_slot", names))
        graph.tensors[slots[-1]] = Tensor(slots[-1], t.shape, t.dtype)
    then_nodes, then_results = _adopt(graph, node, "then", kept, names, node_names)
    else_nodes, else_results = _adopt(graph, node, "else", kept, names, node_names)
    middle = []
    for s in slots:
        middle.append(fresh_name(f"{s}_then", names))
        graph.tensors[middle[-1]] = Tensor(middle[-1], graph.tensors[s].shape, graph.tensors[s].dtype)
    attrs = {"if": node.name, "bounded": dict(node.attrs.get("bounded_outputs", {}))}
    begin = Node("IfBegin", fresh_name(f"{node.name}/begin", node_names), [node.inputs[0]], slots, attrs)
    other = Node("IfElse", fresh_name(f"{node.name}/else", node_names), [*slots, *then_results], middle, attrs)
    end = Node("IfEnd", fresh_name(f"{node.name}/end", node_names), [*middle, *else_results],
               [node.outputs[k] for k in kept], attrs)
    return [begin, *then_nodes, other, *else_nodes, end]


def _adopt(graph: Graph, node: Node, key: str, kept: list[int], names: set[str],
           node_names: set[str]) -> tuple[list[Node], list[str]]:
    """A branch's nodes and tensors under names of the graph, and its kept results' names."""
    branch: Graph = node.attrs[key]
    rename = {t: t for t in branch.inputs}  # outer run-time values, read in place
    adopt_tensors(graph, branch, rename, f"{node.name}/{key}", names)
    nodes = [Node(n.op, fresh_name(f"{node.name}/{key}/{n.name}", node_names),
                  [rename[i] if i else "" for i in n.inputs], [rename[o] if o else "" for o in n.outputs],
                  dict(n.attrs), n.origin) for n in branch.nodes]
    return nodes, [rename[branch.outputs[k]] for k in kept]
