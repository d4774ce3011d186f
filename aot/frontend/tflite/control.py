"""TFLite's control flow and resource variables -> ONNX: WHILE as a Loop, IF as an If (their subgraphs
lowered by the builder's op table, `OnnxBuilder.lower`, which ops.py sets, so this module does not import
it), and VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE / CALL_ONCE as state the caller carries."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import onnx
from onnx import helper

from aot.errors import AotcError
from aot.frontend.tflite.builder import NHWC, OnnxBuilder, op_error, value_info
from aot.frontend.tflite.reader import TflModel, TflOp, TflTensor
from aot.frontend.tflite.state import record_state


def _value_infos(b: OnnxBuilder, model: TflModel, indices: list[int], names: list[str]) -> list[onnx.ValueInfoProto]:
    return [value_info(model.tensors[i], n) for i, n in zip(indices, names, strict=True)]


def _inline(b: OnnxBuilder, model: TflModel, inputs: list[str], constants: list[TflTensor | None] | None = None
            ) -> list[str]:
    """A subgraph's ops written into b's current node list on `inputs`; its outputs' names. An input
    whose outer value is a constant (`constants`) is that constant inside too (the converter passes
    a branch's weights and shapes in as operands), so the ops that need constants take it."""
    if len(model.inputs) != len(inputs) or (constants and len(constants) != len(inputs)):
        raise AotcError(f"subgraph '{model.extra.get('name')}' takes {len(model.inputs)} inputs; it is given "
                        f"{len(inputs)}")
    tensors = list(model.tensors)  # this inlining's own list: fold_constant_op writes into it
    if constants:
        for i, t in zip(model.inputs, constants, strict=True):
            if t is not None:
                tensors[i] = replace(tensors[i], data=t.data, quant=t.quant if tensors[i].quant is None
                                     else tensors[i].quant)
    c = b.child(replace(model, tensors=tensors))
    for i, name in zip(model.inputs, inputs, strict=True):
        c.values[i] = {NHWC: name}
    b.lower(c)
    return [c.value(o, NHWC) for o in model.outputs]


# ops a subgraph may apply to the constants passed in (the converter moves a branch's weight transpose,
# scaling and reshapes inside it): computed at compile time with numpy, so the op reading the result
# (a conv's weights, a reshape's shape) sees a constant
_FOLDABLE = {"TRANSPOSE": lambda x, p: np.transpose(x, p), "MUL": np.multiply, "ADD": np.add, "SUB": np.subtract,
             "RESHAPE": None, "SQUEEZE": None, "EXPAND_DIMS": None, "NEG": np.negative}


def fold_constant_op(b: OnnxBuilder, op: TflOp) -> bool:
    """Inside a WHILE or IF subgraph: compute `op` now when its inputs are constants (plain float32 or
    int32 tensors, no fused activation); True when it did."""
    fn = _FOLDABLE.get(op.op, 0)
    ins = [b.tensor(i) for i in op.inputs if i >= 0]
    if fn == 0 or not b.nested or len(op.outputs) != 1 or not ins or any(
            t.data is None or t.quant is not None or t.dtype not in ("float32", "int32") for t in ins):
        return False
    if getattr(op.options, "fusedActivationFunction", 0):
        return False
    y = b.tensor(op.outputs[0])
    if op.op == "TRANSPOSE" and sorted(int(p) for p in ins[1].data.reshape(-1)) != list(range(ins[0].data.ndim)):
        raise op_error(op, f"perm {ins[1].data.tolist()} is not a permutation of a rank-{ins[0].data.ndim} "
                       "input's axes")
    data = ins[0].data if fn is None else np.asarray(fn(*(t.data for t in ins)))
    if data.size != int(np.prod(y.shape, dtype=np.int64)):
        raise op_error(op, f"it computes {data.size} values; its output '{y.name}' is declared {list(y.shape)}")
    b.m.tensors[op.outputs[0]] = replace(y, data=np.ascontiguousarray(data, dtype=y.dtype).reshape(y.shape))
    return True


def _constants(b: OnnxBuilder, indices: list[int]) -> list[TflTensor | None]:
    return [b.tensor(i) if b.tensor(i).data is not None else None for i in indices]


def _outputs(op: TflOp, model: TflModel, n: int, role: str) -> None:
    """Refuse a subgraph that gives another number of outputs than `op` takes from it."""
    if len(model.outputs) != n:
        raise op_error(op, f"its {role} subgraph '{model.extra.get('name')}' gives {len(model.outputs)} output(s); "
                       f"{op.op} takes {n} from it")


def lower_while(b: OnnxBuilder, op: TflOp) -> None:
    """WHILE(cond, body) as an ONNX Loop with no trip count: the condition is the cond subgraph on the
    initial values (before the loop) and on each step's new values (in the body); aotc counts the
    steps at compile time when the condition depends on constants only (aot/frontend/onnx/loops.py)."""
    o = op.options
    cond_m, body_m = b.subgraphs[o.condSubgraphIndex], b.subgraphs[o.bodySubgraphIndex]
    _outputs(op, cond_m, 1, "condition")
    _outputs(op, body_m, len(op.inputs), "body")
    if len(op.outputs) != len(op.inputs):
        raise op_error(op, f"it has {len(op.inputs)} inputs and {len(op.outputs)} outputs; WHILE gives one output "
                       "per input")
    init = [b.value(i, NHWC) for i in op.inputs]
    cond0 = _inline(b, cond_m, init)[0]
    outer, b.nodes = b.nodes, []
    it, cond_in = b.fresh(f"{op.name}_iter"), b.fresh(f"{op.name}_cond_in")
    carried = [b.fresh(f"{op.name}_{body_m.tensors[i].name}") for i in body_m.inputs]
    new = _inline(b, body_m, carried)
    cond_new = _inline(b, cond_m, new)[0]
    outs = [b.node("Identity", [v], hint=f"{op.name}_out{k}") for k, v in enumerate([cond_new, *new])]
    body = helper.make_graph(
        b.nodes, f"{op.name}_body",
        [helper.make_tensor_value_info(it, onnx.TensorProto.INT64, []),
         helper.make_tensor_value_info(cond_in, onnx.TensorProto.BOOL, []),
         *_value_infos(b, body_m, body_m.inputs, carried)],
        [helper.make_tensor_value_info(outs[0], onnx.TensorProto.BOOL, []),
         *_value_infos(b, body_m, body_m.outputs, outs[1:])])
    b.nodes = outer
    names = [b.names[k] for k in op.outputs]
    b.node("Loop", ["", cond0, *init], names, hint=op.name, body=body)
    for k, name in zip(op.outputs, names, strict=True):
        b.values[k] = {NHWC: name}


def lower_if(b: OnnxBuilder, op: TflOp) -> None:
    """IF(cond, inputs...) as an ONNX If whose branches read the inputs from the outer scope."""
    o = op.options
    branches = []
    for k, index in enumerate((o.thenSubgraphIndex, o.elseSubgraphIndex)):
        sub = b.subgraphs[index]
        _outputs(op, sub, len(op.outputs), "then" if k == 0 else "else")
        outer, b.nodes = b.nodes, []
        results = _inline(b, sub, [b.value(i, NHWC) for i in op.inputs[1:]], _constants(b, op.inputs[1:]))
        outs = [b.node("Identity", [v], hint=f"{op.name}_{'then' if k == 0 else 'else'}{j}")
                for j, v in enumerate(results)]
        branches.append(helper.make_graph(b.nodes, f"{op.name}_{'then' if k == 0 else 'else'}", [],
                                          _value_infos(b, sub, sub.outputs, outs)))
        b.nodes = outer
    names = [b.names[k] for k in op.outputs]
    cond = b.value(op.inputs[0], NHWC)
    if len(b.tensor(op.inputs[0]).shape):
        cond = b.node("Reshape", [cond, b.const(np.array([], np.int64), "scalar")], hint=f"{op.name}_cond")
    b.node("If", [cond], names, hint=op.name, then_branch=branches[0], else_branch=branches[1])
    for k, name in zip(op.outputs, names, strict=True):
        b.values[k] = {NHWC: name}


def lower_case(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_CASE(index, inputs...) (LiteRT's default resolver): a chain of ONNX Ifs, branch k where index == k,
    the last branch for any other index (LiteRT's kernel takes the last one for an index out of range)."""
    branches = [b.subgraphs[int(i)] for i in (op.options.branchSubgraphIndices if op.options is not None else [])]
    t = b.tensor(op.inputs[0])
    if not branches or t.dtype != "int32" or int(np.prod(t.shape, dtype=np.int64)) != 1:
        raise op_error(op, "STABLEHLO_CASE needs branches and an int32 index of one element (as LiteRT's kernel)")
    for sub in branches:
        if len(sub.inputs) != len(op.inputs) - 1 or len(sub.outputs) != len(op.outputs):
            raise op_error(op, f"a STABLEHLO_CASE branch takes {len(sub.inputs)} inputs and gives {len(sub.outputs)} "
                           f"outputs, the op {len(op.inputs) - 1} and {len(op.outputs)}")
    index = b.node("Reshape", [b.value(op.inputs[0], NHWC), b.const(np.array([], np.int64), "scalar")],
                   hint=f"{op.name}_index")
    conds = [b.node("Equal", [index, b.const(np.int32(k), "k")], hint=f"{op.name}_is{k}")
             for k in range(len(branches) - 1)]
    ins, consts = [b.value(i, NHWC) for i in op.inputs[1:]], _constants(b, op.inputs[1:])

    def branch(k: int) -> onnx.GraphProto:
        outer, b.nodes = b.nodes, []
        if k == len(branches) - 1:
            results = _inline(b, branches[k], ins, consts)
        else:
            results = [b.fresh(f"{op.name}_from{k}_{j}") for j in range(len(op.outputs))]
            b.node("If", [conds[k]], results, hint=f"{op.name}_case{k}", then_branch=branch_of(k),
                   else_branch=branch(k + 1))
        outs = [b.node("Identity", [v], hint=f"{op.name}_b{k}_{j}") for j, v in enumerate(results)]
        graph = helper.make_graph(b.nodes, f"{op.name}_branch{k}", [],
                                  _value_infos(b, branches[k], branches[k].outputs, outs))
        b.nodes = outer
        return graph

    def branch_of(k: int) -> onnx.GraphProto:
        outer, b.nodes = b.nodes, []
        results = _inline(b, branches[k], ins, consts)
        outs = [b.node("Identity", [v], hint=f"{op.name}_only{k}_{j}") for j, v in enumerate(results)]
        graph = helper.make_graph(b.nodes, f"{op.name}_only{k}", [],
                                  _value_infos(b, branches[k], branches[k].outputs, outs))
        b.nodes = outer
        return graph

    names = [b.names[k] for k in op.outputs]
    if len(branches) == 1:
        for k, v in zip(op.outputs, _inline(b, branches[0], ins, consts), strict=True):
            b.values[k] = {NHWC: v}
        return
    b.node("If", [conds[0]], names, hint=op.name, then_branch=branch_of(0), else_branch=branch(1))
    for k, name in zip(op.outputs, names, strict=True):
        b.values[k] = {NHWC: name}


def lower_composite(b: OnnxBuilder, op: TflOp) -> None:
    """STABLEHLO_COMPOSITE: its decomposition subgraph inlined on the op's inputs (what LiteRT's kernel invokes;
    the composite's name and attributes, a hint for delegates, play no part)."""
    sub = b.subgraphs[op.options.decompositionSubgraphIndex]
    if len(sub.inputs) != len(op.inputs) or len(sub.outputs) != len(op.outputs):
        raise op_error(op, f"its decomposition subgraph takes {len(sub.inputs)} inputs and gives {len(sub.outputs)} "
                       f"outputs, the op {len(op.inputs)} and {len(op.outputs)}")
    results = _inline(b, sub, [b.value(i, NHWC) for i in op.inputs], _constants(b, op.inputs))
    for k, v in zip(op.outputs, results, strict=True):
        b.values[k] = {NHWC: v}


def _var_name(op: TflOp) -> str:
    name = op.options.sharedName if op.options is not None else b""
    return (name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name or "")) or f"var_{op.index}"


def var_handle(b: OnnxBuilder, op: TflOp) -> None:
    if b.nested:
        raise op_error(op, "resource variables inside a WHILE or IF subgraph are not supported")
    b.handles[op.outputs[0]] = _var_name(op)


def _handle(b: OnnxBuilder, op: TflOp) -> str:
    """The variable op's resource (its first input, a VAR_HANDLE's output)."""
    if op.inputs[0] not in b.handles:
        raise op_error(op, f"its input '{b.tensor(op.inputs[0]).name}' is not the handle a VAR_HANDLE made")
    return b.handles[op.inputs[0]]


def read_variable(b: OnnxBuilder, op: TflOp) -> None:
    """The variable's value: before any ASSIGN_VARIABLE in this call, a graph input of its own
    (the caller carries the state, docs/tflite.md), else the last value assigned."""
    name, y = _handle(b, op), b.tensor(op.outputs[0])
    v = b.variables.setdefault(name, {"current": None, "dtype": y.dtype, "shape": list(y.shape)})
    if v["current"] is None:
        v["current"] = v["input"] = b.fresh(f"{name}_state")
        b.extra_inputs.append(helper.make_tensor_value_info(v["current"], helper.np_dtype_to_tensor_dtype(
            np.dtype(y.dtype)), list(y.shape)))
    b.values[op.outputs[0]] = {NHWC: v["current"]}


def assign_variable(b: OnnxBuilder, op: TflOp) -> None:
    name, x = _handle(b, op), b.tensor(op.inputs[1])
    v = b.variables.setdefault(name, {"current": None, "dtype": x.dtype, "shape": list(x.shape)})
    v["current"] = b.value(op.inputs[1], NHWC)


def call_once(b: OnnxBuilder, op: TflOp) -> None:
    """CALL_ONCE(init): TFLite runs the init subgraph on the first invoke, to give the resource variables
    their initial values. aotc's caller carries the state, so these become the state's start values
    (metadata.json, `<name>_reset_state`): the init subgraph must assign constants (a Keras stateful
    layer's zeros, or any values), which is all it may do."""
    init = b.subgraphs[op.options.initSubgraphIndex]
    handles: dict[int, str] = {}
    for o in init.ops:
        if o.op == "VAR_HANDLE":
            handles[o.outputs[0]] = _var_name(o)
            continue
        value = init.tensors[o.inputs[1]].data if o.op == "ASSIGN_VARIABLE" and len(o.inputs) == 2 else None
        if o.op != "ASSIGN_VARIABLE" or value is None or o.inputs[0] not in handles:
            raise op_error(op, f"CALL_ONCE: an init subgraph that does more than assign constants to resource "
                           f"variables is not supported (its {o.op})")
        b.initial[handles[o.inputs[0]]] = value


def finish_variables(b: OnnxBuilder) -> None:
    """Each resource variable's value after the call, as an output of its own; one read before any
    assignment is state the caller carries (state.py), starting from CALL_ONCE's value."""
    for name, v in b.variables.items():
        nxt = b.fresh(f"{v.get('input') or b.fresh(name + '_state')}_next")
        b.node("Identity", [v["current"]], [nxt], hint=nxt)
        b.extra_outputs.append(helper.make_tensor_value_info(nxt, helper.np_dtype_to_tensor_dtype(np.dtype(v["dtype"])),
                                                             v["shape"]))
        if v.get("input"):  # read before any assignment: state the caller carries, from CALL_ONCE's value
            start = b.initial.get(name)
            record_state(b, v["input"], nxt, v["dtype"], v["shape"], 0 if start is None else start,
                         f"what CALL_ONCE's init subgraph assigns resource variable '{name}'" if start is not None
                         else f"zeros: nothing assigns resource variable '{name}' before it is read")
