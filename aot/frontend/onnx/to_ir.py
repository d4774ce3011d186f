"""The ONNX model, folded, into the IR: tensors with static shapes and dtypes, nodes checked (the
import step `to-ir`, steps.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper

from aot.errors import AotcError
from aot.frontend.onnx import contrib
from aot.frontend.onnx.bounded import BoundedImport
from aot.frontend.onnx.branches import import_if
from aot.frontend.onnx.load import opset_of
from aot.frontend.onnx.loops import import_loop
from aot.frontend.onnx.validate import check_int_attributes, check_node_outputs, check_node_types, elem_name
from aot.ir import DTYPES, Graph, Node, Tensor
from aot.ir.evaluate import evaluate_node, static_shapes
from aot.ir.held import initializer_value
from aot.limits import check_tensor


def _elem_dtype(elem_type: int, what: str, node: object = None) -> str:
    dt = elem_name(elem_type)
    if dt not in DTYPES:
        raise AotcError(f"{what} has dtype {dt}, which aotc does not support", node=node)
    return dt


def to_ir(model: onnx.ModelProto, name: str, bounded: BoundedImport | None,
          import_model: Callable[..., Graph]) -> Graph:
    """The folded ModelProto as the IR: every tensor with its static shape and dtype (onnx's inference,
    else our own by evaluation), each node checked; Loop and If bodies imported by `import_model`."""
    g = model.graph
    opsets = list(model.opset_import)
    tensors: dict[str, Tensor] = {}
    declared_inputs = {vi.name for vi in g.input}
    for init in g.initializer:
        arr = initializer_value(init)
        kind = "input" if init.name in declared_inputs else "initializer"  # an input: an empty one, made constant
        dt = _elem_dtype(init.data_type, f"{kind} '{init.name}'")
        check_tensor(f"initializer '{init.name}'", dt, arr.shape, arr.dtype.itemsize)
        tensors[init.name] = Tensor(init.name, tuple(arr.shape), dt, np.asarray(arr, order="C"))
    shapes = static_shapes(model)
    types: dict[str, int] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            types[vi.name] = vi.type.tensor_type.elem_type

    inputs = [vi.name for vi in g.input if vi.name not in tensors]
    for i in inputs:
        if i not in types:
            raise AotcError(f"input '{i}' has no element type")
        tensors[i] = Tensor(i, shapes[i], _elem_dtype(types[i], f"input '{i}'"))

    nodes: list[Node] = []
    guessed: set[str] = set()  # outputs whose shape came from running their node on zeros
    for pn in g.node:
        node_name = pn.name
        if pn.op_type == "Loop" and pn.domain in ("", "ai.onnx"):
            loop, outs = import_loop(pn, tensors, model, import_model)
            tensors.update(outs)
            nodes.append(loop)
            continue
        if pn.op_type == "If" and pn.domain in ("", "ai.onnx"):  # a run-time condition: constant ones are folded
            branch, outs = import_if(pn, tensors, model, import_model)
            tensors.update(outs)
            nodes.append(branch)
            if bounded is not None:
                bounded.if_outputs(branch.attrs.get("bounded_outputs", {}))
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in pn.attribute}
        attrs = {key: (v.decode() if isinstance(v, bytes) else v) for key, v in attrs.items()}
        node = Node(contrib.ir_op(pn), node_name, list(pn.input), list(pn.output), attrs)
        check_node_types(pn, tensors, opset_of(model), node)
        check_int_attributes(pn, node)
        # a Unique whose count the model declares is compiled to it (aot/kernels/index.py); else bounded
        declared_unique = pn.op_type == "Unique" and shapes.get(pn.output[0]) is not None
        at_bound = bounded.infer(pn, node, tensors, opsets) if bounded is not None and not declared_unique else None
        if bounded is not None and bounded.pending:  # run-time integers made from extents, written for it
            nodes += bounded.pending
            bounded.pending = []
        if at_bound is not None:  # makes or reads rows known only at run time: shapes at the bound
            tensors.update(at_bound[0])
            if at_bound[1]:  # (a Shape of such rows is followed into the Reshape it sets, then dropped)
                nodes.append(node)
            continue
        missing = [o for o in pn.output if o and (shapes.get(o) is None or o not in types)]
        if missing and pn.op_type.startswith("Reduce"):
            _shape_from_reader(pn, g, shapes, types)
            missing = [o for o in pn.output if o and (shapes.get(o) is None or o not in types)]
        if missing and pn.op_type == "Range" and pn.input and pn.input[0] in tensors:
            _range_shape_from_readers(pn, g, shapes, types, tensors[pn.input[0]].dtype)
            missing = [o for o in pn.output if o and (shapes.get(o) is None or o not in types)]
        if missing:
            _infer_by_evaluation(pn, node, tensors, shapes, types, opsets)
            guessed.update(missing)
        for o in pn.output:
            if not o:
                continue
            if shapes.get(o) is None or o not in types:
                raise AotcError(f"cannot infer a static shape for output '{o}'", node=node)
            dt = _elem_dtype(types[o], f"output '{o}'", node)
            check_tensor(f"output '{o}'", dt, shapes[o], np.dtype(dt).itemsize, node=node)
            tensors[o] = Tensor(o, shapes[o], dt)
        nodes.append(node)

    outputs = [vi.name for vi in g.output]
    if not outputs:
        raise AotcError("the model has no graph outputs: there is nothing to compute")
    if len(set(outputs)) != len(outputs):
        twice = next(o for o in outputs if outputs.count(o) > 1)
        raise AotcError(f"graph output '{twice}' is listed more than once")
    for o in outputs:
        if o not in tensors:
            raise AotcError(f"graph output '{o}' is never computed")
    graph = Graph(name=name, nodes=nodes, tensors=tensors, inputs=inputs, outputs=outputs)
    graph.info.guessed_shapes = guessed
    return graph


_SAME_SHAPE = {"Sqrt", "Log", "Exp", "Abs", "Neg", "Identity", "Relu", "Sigmoid", "Tanh", "Reciprocal", "Floor",
               "Ceil", "Cast", "CastLike"}


def _shape_from_reader(pn: onnx.NodeProto, g: onnx.GraphProto, shapes: dict, types: dict) -> None:
    """A Reduce whose axes are computed at run time (an expanded function's ReduceSum of a graph input) has
    no inferred shape; where an elementwise op of one input reads it and has a known (declared) shape,
    that is its shape too, rather than a guess from running it on zeros."""
    out = at = pn.output[0]
    for _ in range(8):  # along a chain of them (Log then CastLike, as ONNX's function bodies write)
        reader = next((r for r in g.node if r.op_type in _SAME_SHAPE and r.input and r.input[0] == at and r.output),
                      None)
        if reader is None:
            return
        at = reader.output[0]
        known = shapes.get(at)
        if known is not None and pn.input and pn.input[0] in types:
            shapes[out], types[out] = known, types[pn.input[0]]
            return


_ELEMENTWISE_UNARY = _SAME_SHAPE | {"Cos", "Sin", "Tan", "Sqrt", "Erf", "Softplus", "Sign", "Round"}
_ELEMENTWISE_BINARY = {"Add", "Sub", "Mul", "Div", "Pow"}


def _range_shape_from_readers(pn: onnx.NodeProto, g: onnx.GraphProto, shapes: dict, types: dict,
                              dtype: str) -> None:
    """A Range whose start/limit/delta are computed at run time (a window function's expanded body) has no
    inferred length; where chains of elementwise readers (unary ops, binary ones whose other operand is a
    single value or of no inferred shape either) reach a tensor of known 1-D shape (the declared output), that
    is its length too, rather than a guess from running it on zeros. Its kernel checks the run-time values
    against it (aot/kernels/index.py)."""
    out = pn.output[0]
    stack, seen = [out], {out}
    while stack and len(seen) < 64:
        at = stack.pop()
        for r in g.node:
            if not r.output or at not in r.input or r.output[0] in seen:
                continue
            others = [i for i in r.input if i and i != at]
            if not (r.op_type in _ELEMENTWISE_UNARY and r.input[0] == at or r.op_type in _ELEMENTWISE_BINARY and all(
                    shapes.get(i) is None or len(shapes[i]) <= 1 and int(np.prod(shapes[i])) == 1 for i in others)):
                continue
            known = shapes.get(r.output[0])
            if known is not None:
                if len(known) == 1:
                    shapes[out], types[out] = known, helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
                return
            seen.add(r.output[0])
            stack.append(r.output[0])


def _infer_by_evaluation(pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor],
                         shapes: dict, types: dict, opsets: list) -> None:
    """Our own shape inference where ONNX's stops: run the node on zeros of the known input shapes
    (the quantization ops and com.microsoft's by rule: the reference evaluator lacks them)."""
    own = contrib.output_type(pn, {k: t.shape for k, t in tensors.items()},
                              {k: helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype)) for k, t in tensors.items()})
    if own is not None:
        shapes[pn.output[0]], types[pn.output[0]] = own
        return
    args: list[np.ndarray | None] = []
    for i in pn.input:
        if not i:
            args.append(None)
            continue
        t = tensors.get(i)
        if t is None:
            return
        args.append(t.data if t.is_const else None)
    check_node_outputs(pn, [None if not i else (tensors[i].dtype, tensors[i].shape) for i in pn.input], args,
                       opsets, node)  # before its outputs are allocated
    args = [None if not i else a if a is not None else np.zeros(tensors[i].shape, tensors[i].dtype)
            for i, a in zip(pn.input, args, strict=True)]
    try:
        results = evaluate_node(pn, args, opsets)
    except Exception as e:
        raise AotcError(f"cannot infer output shapes ({str(e).splitlines()[0] if str(e) else e})",
                        node=node) from e
    for o, r in zip(pn.output, results, strict=False):
        if o:
            shapes[o] = tuple(r.shape)
            types[o] = helper.np_dtype_to_tensor_dtype(r.dtype)
