"""ONNX Loop as exporters write it (issue 26): a C `for` loop around the body's own kernel calls.

At import, each Loop of the (folded) graph is compiled in three steps:

1. Its trip count, at compile time (`trip_count`). The count is M when the condition is absent or
   passes through; otherwise the part of the body that computes the condition (and the
   loop-carried values it reads, e.g. tf2onnx's counters) is run step by step with onnx's
   reference evaluator, from their constant initial values, until it turns false or reaches M.
   A condition that reads anything computed at run time is refused by name.
2. Its body, as a model of its own (`_body_model`) imported by the same frontend as the graph:
   the iteration number and the carried values are its inputs (with the outer shapes), the
   condition input is the constant true (the loop runs only while it is), the outer scope's
   constants are its initializers (so loop-invariant work folds away) and the outer scope's
   run-time values are inputs read in place. Nested Loops compile the same way, recursively.
3. `flatten_loop`, after canonicalisation (aot/frontend/onnx/control_flow.py): the body's nodes join
   the graph between a LoopBegin and a LoopEnd node, so passes, kernel selection, planning and
   emission see one node list.
   LoopBegin copies the initial values into each carried value's state and opens the C loop
   (writing the iteration number); LoopEnd copies the new values into the states, each scan row
   into its row of the scan output, and closes it. Its outputs (final values, scan outputs) are
   the states' and scan buffers' own bytes (the planner joins them). The planner keeps every
   value the body reads from before the loop live to its LoopEnd (read again each step).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from aot.errors import AotcError
from aot.ir import CONTROL_MARKERS, Graph, Node, Tensor
from aot.ir.evaluate import static_shapes
from aot.ir.held import initializer_value

MAX_COUNTED_STEPS = 100_000  # a condition still true after this many steps, with no M, is refused
MAX_SCAN_ROWS = 2**31 - 1  # the rows a scan output of a run-time loop may be planned at


class _LoopNode:
    """Names the Loop in refusals (as errors on IR nodes print)."""

    def __init__(self, node: onnx.NodeProto):
        self.node = node

    def describe(self) -> str:
        return f"Loop '{self.node.name}'"


class _IRLoop:
    def __init__(self, node: Node):
        self.node = node

    def describe(self) -> str:
        return f"Loop '{self.node.name}'"


def _graph_attr(node: onnx.NodeProto, name: str) -> onnx.GraphProto:
    for a in node.attribute:
        if a.name == name and a.type == onnx.AttributeProto.GRAPH:
            return a.g
    raise AotcError(f"has no '{name}' graph", node=_LoopNode(node))


def free_names(graph: onnx.GraphProto) -> list[str]:
    """Names `graph` (and its subgraphs) reads from an enclosing scope, in first-read order."""
    defined = {i.name for i in graph.initializer} | {v.name for v in graph.input}
    out: dict[str, None] = {}
    for n in graph.node:
        reads = [i for i in n.input if i]
        for a in n.attribute:
            subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs) if (
                a.type == onnx.AttributeProto.GRAPHS) else []
            for sub in subs:
                reads += free_names(sub)
        for i in reads:
            if i not in defined:
                out[i] = None
        defined.update(o for o in n.output if o)
    for o in graph.output:
        if o.name not in defined:
            out[o.name] = None
    return list(out)


def value_info(name: str, t: Tensor) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype)), list(t.shape))


def _const_of(tensors: dict[str, Tensor], name: str) -> np.ndarray | None:
    t = tensors.get(name) if name else None
    return None if t is None else t.data


# --- 1. the trip count ----------------------------------------------------------------------------
class _RunTime(Exception):
    """The condition depends on a value computed at run time (the message names it)."""


def declared_rows(node: onnx.NodeProto, model: onnx.ModelProto | None,
                  declared: dict[str, onnx.TypeProto] | None = None) -> int | None:
    """The row count a scan output of the Loop is declared with (in the graph's outputs or value_info, or
    `declared`, the declarations set aside while folding; or those of the Identity / Cast its only reader
    feeds), or None."""
    if model is None:
        return None
    g = model.graph
    rows: dict[str, int] = {}  # a value's first dimension, where one of its types gives it
    for name, t in [*((v.name, v.type) for v in [*g.output, *g.value_info]), *(declared or {}).items()]:
        dims = t.tensor_type.shape.dim if t.HasField("tensor_type") else []
        if dims and dims[0].HasField("dim_value") and dims[0].dim_value > 0:
            rows.setdefault(name, int(dims[0].dim_value))
    n_carried = len(node.input) - 2
    for name in node.output[n_carried:]:
        seen = 0
        while name and seen < 8:
            if name in rows:
                return rows[name]
            readers = [n for n in g.node if name in n.input]
            if len(readers) != 1 or readers[0].op_type not in ("Identity", "Cast"):
                break
            name, seen = readers[0].output[0], seen + 1
    return None


def _runtime_trips(node: onnx.NodeProto, tensors: dict[str, Tensor], model: onnx.ModelProto | None,
                   declared: dict[str, onnx.TypeProto] | None = None) -> int | None:
    """A maximum trip count M computed at run time, with a condition absent or passed through unchanged, and a
    scan output of declared length N: the loop is compiled for N steps, the run checks M (and the initial
    condition) against it (AOTC_ERR_SHAPE when they differ). None when that does not apply."""
    m_name = node.input[0] if node.input else ""
    if not m_name or _const_of(tensors, m_name) is not None:
        return None
    body = _graph_attr(node, "body")
    if len(body.input) < 2 or not body.output:
        return None
    cond_in, cond_out = body.input[1].name, body.output[0].name
    passed = cond_out == cond_in or any(n.op_type == "Identity" and list(n.input) == [cond_in]
                                        and list(n.output) == [cond_out] for n in body.node)
    if not passed:
        return None
    return declared_rows(node, model, declared)


def loop_steps(node: onnx.NodeProto, tensors: dict[str, Tensor], opsets: list,
               model: onnx.ModelProto | None = None,
               declared: dict[str, onnx.TypeProto] | None = None) -> tuple[int, str | None]:
    """(the trip count, None) when it is known at compile time (or, M computed at run time, given by a scan
    output's declared length: `_runtime_trips`); else (its bound M, why the condition is a run-time one): the
    C loop then stops at the first false condition or at M."""
    rows = _runtime_trips(node, tensors, model, declared)
    if rows is not None:
        return rows, None
    try:
        return trip_count(node, tensors, opsets), None
    except _RunTime as e:
        m_name = node.input[0] if node.input else ""
        limit = None if not m_name else int(np.asarray(_const_of(tensors, m_name)).reshape(-1)[0])
        if limit is None:
            raise AotcError(f"{e}, and it has no maximum trip count: aotc needs a bound on its steps",
                            node=_LoopNode(node)) from None
        return max(limit, 0), str(e)


def trip_count(node: onnx.NodeProto, tensors: dict[str, Tensor], opsets: list) -> int:
    """How many times the body runs, worked out at compile time; _RunTime when it is not known
    before the model runs; a refusal for a loop that would not stop."""
    where = _LoopNode(node)
    body = _graph_attr(node, "body")
    m_name = node.input[0] if len(node.input) > 0 else ""
    c_name = node.input[1] if len(node.input) > 1 else ""
    limit = None
    if m_name:
        m = _const_of(tensors, m_name)
        if m is None:
            raise AotcError(f"its maximum trip count '{m_name}' is computed at run time; aotc needs it at "
                            "compile time (or a condition it can count, or a scan output of declared length)",
                            node=where)
        limit = int(np.asarray(m).reshape(-1)[0])
    cond = True
    if c_name:
        c = _const_of(tensors, c_name)
        if c is None:
            raise _RunTime(f"its initial condition '{c_name}' is computed at run time")
        cond = bool(np.asarray(c).reshape(-1)[0])
    if limit is not None and limit <= 0 or not cond:
        return 0
    ins = [v.name for v in body.input]
    iter_name, cond_in, carried_in = ins[0], ins[1], ins[2:]
    outs = [v.name for v in body.output]
    cond_out, carried_out = outs[0], outs[1:1 + len(carried_in)]
    if cond_out == cond_in:  # passed through: only M stops the loop
        if limit is None:
            raise AotcError("it has no maximum trip count and its condition never changes: it would not stop",
                            node=where)
        return limit
    producer = {o: n for n in body.node for o in n.output if o}
    inits = {i.name for i in body.initializer}
    needed_outs = [cond_out]  # the body outputs the condition needs, worked out to a closure
    carried_needed: list[int] = []
    nodes: set[int] = set()
    order = {id(n): k for k, n in enumerate(body.node)}
    stack = [cond_out]
    seen: set[str] = set()
    while stack:
        name = stack.pop()
        if name in seen or not name:
            continue
        seen.add(name)
        if name in producer:
            n = producer[name]
            if order[id(n)] not in nodes:
                nodes.add(order[id(n)])
                stack += [i for i in n.input if i]
                for a in n.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        stack += free_names(a.g)
            continue
        if name in inits or name in (iter_name, cond_in):
            continue
        if name in carried_in:
            j = carried_in.index(name)
            if j not in carried_needed:
                if _const_of(tensors, node.input[2 + j]) is None:
                    raise _RunTime(f"its condition '{cond_out}' depends on the loop-carried value '{name}', whose "
                                   f"initial value '{node.input[2 + j]}' is computed at run time")
                carried_needed.append(j)
                needed_outs.append(carried_out[j])
                stack.append(carried_out[j])
            continue
        if _const_of(tensors, name) is None:
            raise _RunTime(f"its condition '{cond_out}' depends on '{name}', which is computed at run time")
    step = _condition_model(node, body, sorted(nodes), carried_needed, needed_outs, tensors, opsets)
    state = {carried_in[j]: np.asarray(_const_of(tensors, node.input[2 + j])) for j in carried_needed}
    k = 0
    bound = limit if limit is not None else MAX_COUNTED_STEPS
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        while k < bound and cond:
            feeds = {**state, iter_name: np.array(k, dtype=np.int64), cond_in: np.array(True)}
            try:
                values = step.run(None, {n: v for n, v in feeds.items() if n in step.input_names})
            except Exception as e:
                raise AotcError(f"evaluating its condition at step {k} failed ({str(e).splitlines()[0]})",
                                node=where) from e
            cond = bool(np.asarray(values[0]).reshape(-1)[0])
            state = {carried_in[j]: np.asarray(v) for j, v in zip(carried_needed, values[1:], strict=True)}
            k += 1
    if cond and limit is None:
        raise AotcError(f"it has no maximum trip count and its condition is still true after {k} steps",
                        node=where)
    return k


def _condition_model(node: onnx.NodeProto, body: onnx.GraphProto, nodes: list[int], carried: list[int],
                     outputs: list[str], tensors: dict[str, Tensor], opsets: list) -> ReferenceEvaluator:
    """The body's nodes that compute the condition (and the carried values it reads), as a model."""
    ins = [v.name for v in body.input]
    picked = [body.node[k] for k in nodes]
    sub = helper.make_graph(picked, "condition", [], [helper.make_value_info(o, onnx.TypeProto()) for o in outputs])
    sub.initializer.extend(body.initializer)
    defined = {i.name for i in body.initializer}
    names = [ins[0], ins[1], *(ins[2 + j] for j in carried)]
    for name in names:
        sub.input.append(helper.make_value_info(name, onnx.TypeProto()))
        defined.add(name)
    for name in free_names(sub):
        if name not in defined and _const_of(tensors, name) is not None:
            sub.initializer.append(numpy_helper.from_array(np.asarray(_const_of(tensors, name)), name))
    model = helper.make_model(sub, opset_imports=opsets)
    model.ir_version = onnx.IR_VERSION
    try:
        return ReferenceEvaluator(model)
    except Exception as e:
        raise AotcError(f"cannot evaluate its condition ({str(e).splitlines()[0]})", node=_LoopNode(node)) from e


def loop_refusal(model: onnx.ModelProto, node: onnx.NodeProto,
                 declared: dict[str, onnx.TypeProto] | None = None) -> str | None:
    """Why the Loop cannot be counted or bounded, from the graph's constants alone (None: it can),
    so it is refused together with the rest of the graph's control flow."""
    consts = {i.name: Tensor(i.name, tuple(i.dims), "float32", initializer_value(i))
              for i in model.graph.initializer}
    try:
        loop_steps(node, consts, list(model.opset_import), model, declared)
    except AotcError as e:
        return e.message
    return None


# --- 2. the body, imported as a model of its own ----------------------------------------------------
def import_loop(node: onnx.NodeProto, tensors: dict[str, Tensor], model: onnx.ModelProto,
                import_model: Callable[..., Graph]) -> tuple[Node, dict[str, Tensor]]:
    """The Loop as one IR node holding its compiled body (flattened by `flatten_loop`), and the
    tensors of its outputs."""
    where = _LoopNode(node)
    opsets = list(model.opset_import)
    body = _graph_attr(node, "body")
    n_carried = len(node.input) - 2
    if len(body.input) != 2 + n_carried:
        raise AotcError(f"its body takes {len(body.input)} inputs; a Loop with {n_carried} carried values needs "
                        f"{2 + n_carried}", node=where)
    if len(body.output) < 1 + n_carried:
        raise AotcError(f"its body has {len(body.output)} outputs, fewer than the condition and {n_carried} "
                        "carried values", node=where)
    n_scan = len(body.output) - 1 - n_carried
    if len(node.output) > n_carried + n_scan:
        raise AotcError(f"it has {len(node.output)} outputs; its body gives {n_carried + n_scan}", node=where)
    for k, v in enumerate(node.input[2:]):
        if not v or v not in tensors:
            raise AotcError(f"its loop-carried input {k} is {'omitted' if not v else f'unknown ({v!r})'}",
                            node=where)
    trips, runtime = loop_steps(node, tensors, opsets, model)
    checked = _runtime_trips(node, tensors, model) is not None  # M (and the condition) checked at run time
    ins, outs = [v.name for v in body.input], [v.name for v in body.output]
    # a carried value the body passes through unchanged (tf2onnx carries the weights so) is its
    # initial value at every step: a constant stays a constant, a run-time value is read in place
    invariant = [j for j in range(n_carried) if outs[1 + j] == ins[2 + j]]
    variant = [j for j in range(n_carried) if j not in invariant]
    inner, outer_of = _body_model(node, body, tensors, model, invariant, keep_condition=runtime is not None)
    try:
        graph = import_model(inner, f"{node.name}_body")
    except AotcError as e:
        raise AotcError(f"in its body: {e.one_line()}", node=where) from e
    results = graph.outputs[1:] if runtime else graph.outputs
    new_values = dict(zip(variant, results[:len(variant)], strict=True))
    scan_rows = results[len(variant):]
    out_tensors: dict[str, Tensor] = {}
    for k, name in enumerate(node.output):
        if not name:
            continue
        if k < n_carried:
            init = tensors[node.input[2 + k]]
            new = graph.tensors[new_values[k]] if k in new_values else init
            if init.shape != new.shape or init.dtype != new.dtype:
                raise AotcError(f"loop-carried value '{body.input[2 + k].name}' starts as {init.dtype}"
                                f"{list(init.shape)} and becomes {new.dtype}{list(new.shape)}; aotc needs one static "
                                "shape", node=where)
            out_tensors[name] = Tensor(name, init.shape, init.dtype)
        else:
            row = graph.tensors[scan_rows[k - n_carried]]
            if trips == 0:
                raise AotcError(f"scan output '{name}' would have no rows (the loop runs 0 times): empty tensors "
                                "are not supported", node=where)
            if runtime and trips > MAX_SCAN_ROWS:
                raise AotcError(f"scan output '{name}' has no row bound ({runtime}, and its maximum trip count is "
                                f"{trips})", node=where)
            out_tensors[name] = Tensor(name, (trips, *row.shape), row.dtype)
    outer = [outer_of.get(i, i) for i in graph.inputs[1 + len(variant):]]
    cond_init = node.input[1] if runtime and len(node.input) > 1 else ""
    # checked: M, then the initial condition (if any), both read at run time, last
    check = [node.input[0], *([node.input[1]] if len(node.input) > 1 and node.input[1] else [])] if checked else []
    ir = Node("Loop", node.name, [*node.input[2:], *dict.fromkeys(outer), *([cond_init] if cond_init else []),
                                  *check],
              list(node.output), {"body": graph, "trip_count": trips, "n_carried": n_carried, "variant": variant,
                                  "invariant": invariant, "outer_of": outer_of, "runtime": runtime,
                                  "cond_init": cond_init, "check": len(check)})
    return ir, out_tensors


def _body_model(node: onnx.NodeProto, body: onnx.GraphProto, tensors: dict[str, Tensor],
                model: onnx.ModelProto, invariant: list[int],
                keep_condition: bool) -> tuple[onnx.ModelProto, dict[str, str]]:
    """The body as a model: inputs the iteration number, the carried values and the outer
    run-time values it reads; the condition input the constant true; outer constants initializers.
    Also: the outer value each invariant carried input (a body input here) stands for."""
    where = _LoopNode(node)
    g = onnx.GraphProto()
    g.CopyFrom(body)
    g.name = f"{node.name}_body"
    ins = list(g.input)
    del g.input[:]
    iter_name, cond_name = ins[0].name, ins[1].name
    g.input.append(helper.make_tensor_value_info(iter_name, onnx.TensorProto.INT64, []))
    outer_of: dict[str, str] = {}
    for j, (v, init) in enumerate(zip(ins[2:], node.input[2:], strict=True)):
        if j not in invariant:
            g.input.append(value_info(v.name, tensors[init]))
    for j in invariant:
        v, init = ins[2 + j], tensors[node.input[2 + j]]
        if init.is_const:
            g.initializer.append(numpy_helper.from_array(np.asarray(init.data), v.name))
        else:
            g.input.append(value_info(v.name, init))
            outer_of[v.name] = init.name
    g.initializer.append(numpy_helper.from_array(np.array(True), cond_name))
    for name in free_names(body):
        if name in (iter_name, cond_name) or name in {v.name for v in ins}:
            continue
        t = tensors.get(name)
        if t is None:
            raise AotcError(f"its body reads '{name}', which is not defined before the Loop", node=where)
        if t.is_const:
            g.initializer.append(numpy_helper.from_array(np.asarray(t.data), name))
        else:
            g.input.append(value_info(name, t))
    for j in sorted(invariant, reverse=True):
        del g.output[1 + j]
    if not keep_condition:
        del g.output[0]  # the condition: counted at compile time (trip_count)
    own_outputs(g, f"{node.name}_body", copy_unproduced=False)  # a carried value that is also a scan row
    out = helper.make_model(g, opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    return out, outer_of


def own_outputs(g: onnx.GraphProto, prefix: str, copy_unproduced: bool) -> None:
    """Each output of a subgraph a value of its own, so its import gives it a tensor: an Identity for a
    value given twice and, with `copy_unproduced`, for an input or constant given straight back. The
    declared output types are cleared: they are hints, the subgraph's own inference decides."""
    produced = {o for n in g.node for o in n.output if o}
    seen: set[str] = set()
    for k, o in enumerate(g.output):
        o.ClearField("type")
        if o.name in seen or (copy_unproduced and o.name not in produced):
            copy = f"{prefix}__output_{k}"
            g.node.append(helper.make_node("Identity", [o.name], [copy], name=f"{prefix}/output_{k}"))
            o.name = copy
        seen.add(o.name)


# --- 3. the body's nodes in the graph --------------------------------------------------------------
def adopt_tensors(graph: Graph, body: Graph, rename: dict[str, str], prefix: str, names: set[str]) -> None:
    """A body's tensors into `graph`, those `rename` does not name yet under fresh names below
    `prefix`, but a constant the graph holds under the same name and value, which keeps it."""
    for name, t in body.tensors.items():
        if name in rename:
            continue
        outer = graph.tensors.get(name)
        if t.is_const and outer is not None and outer.is_const and outer.dtype == t.dtype and \
                outer.shape == t.shape and np.array_equal(outer.data, t.data):  # an outer constant
            rename[name] = name
        else:
            rename[name] = fresh_name(f"{prefix}/{name}", names)
    for name, t in body.tensors.items():
        if rename[name] not in graph.tensors:
            graph.tensors[rename[name]] = Tensor(rename[name], t.shape, t.dtype, t.data)


def _last_row_only(graph: Graph, scan: str, trips: int) -> bool:
    """Whether every reader of the scan output takes its last row alone (a Slice, as tf2onnx writes a
    Keras layer's last output), so the loop need keep one row, not all."""
    readers = [n for n in graph.nodes if scan in n.inputs]
    t = graph.tensors[scan]
    return bool(readers) and scan not in graph.outputs and all(
        n.op == "Slice" and n.inputs[0] == scan and n.attrs.get("starts", [None])[0] == trips - 1
        and all(st == 1 for st in n.attrs["steps"]) and all(v == 0 for v in n.attrs["starts"][1:])
        and graph.tensors[n.outputs[0]].shape == (1, *t.shape[1:]) for n in readers)


def fresh_name(base: str, used: set[str]) -> str:
    name, k = base, 1
    while name in used:
        name, k = f"{base}_{k}", k + 1
    used.add(name)
    return name


def flatten_loop(graph: Graph, loop: Node, used: set[str], names: set[str], node_names: set[str],
                 top: bool) -> list[Node]:
    """The Loop node -> LoopBegin, its body's nodes (renamed apart, already flattened), LoopEnd. Carried
    values nothing reads after the loop, and only their own update reads in the body (tf2onnx's
    counters, once the condition is counted), are dropped; so are scan outputs nothing reads."""
    body: Graph = loop.attrs["body"]
    trips, variant, invariant = loop.attrs["trip_count"], loop.attrs["variant"], loop.attrs["invariant"]
    nc, ncv, runtime = loop.attrs["n_carried"], len(variant), loop.attrs["runtime"]
    iter_in, carried_in, outer = body.inputs[0], body.inputs[1:1 + ncv], body.inputs[1 + ncv:]
    cond_out = [body.outputs[0]] if runtime else []
    results = body.outputs[len(cond_out):]
    carried_out, rows = results[:ncv], results[ncv:]
    finals = [loop.outputs[j] if j < len(loop.outputs) else "" for j in variant]
    scans = [loop.outputs[nc + k] if nc + k < len(loop.outputs) else "" for k in range(len(rows))]
    after = [Node("Identity", fresh_name(f"{loop.name}/{loop.outputs[j]}", node_names), [loop.inputs[j]],
                  [loop.outputs[j]]) for j in invariant if j < len(loop.outputs) and loop.outputs[j] in used]
    # what the loop must compute: outputs read after it, and the carried values the body reads for them
    keep_c = {j for j in range(ncv) if finals[j] and finals[j] in used}
    keep_s = [k for k in range(len(rows)) if scans[k] and scans[k] in used]
    if runtime:  # its rows depend on the data: reported as a graph output's extent, read by nothing
        for k in keep_s:
            readers = [n.name for n in graph.nodes if scans[k] in n.inputs]
            if readers or not top or scans[k] not in graph.outputs:
                raise AotcError(f"scan output '{scans[k]}' has a row count known only at run time ({runtime}); "
                                "aotc reports it for a graph output, but here "
                                f"{'node ' + repr(readers[0]) + ' reads it' if readers else 'it is not one'}",
                                node=_IRLoop(loop))
            graph.info.bounded[scans[k]] = 0
    producer = {o: nd for nd in body.nodes for o in nd.outputs if o}
    while True:
        reads: set[str] = set()
        stack = [*cond_out, *(carried_out[j] for j in keep_c), *(rows[k] for k in keep_s)]
        while stack:
            t = stack.pop()
            if t in reads:
                continue
            reads.add(t)
            if t in producer:
                stack += [i for i in producer[t].inputs if i]
        more = {j for j in range(ncv) if carried_in[j] in reads} - keep_c
        if not more:
            break
        keep_c |= more
    kept_c = sorted(keep_c)
    if not kept_c and not keep_s:
        return after  # nothing the loop computes is read
    rename: dict[str, str] = {}
    for t in outer:
        rename[t] = loop.attrs["outer_of"].get(t, t)
    for j in kept_c:
        rename[carried_in[j]] = fresh_name(f"{loop.name}/{carried_in[j]}", names)
    rename[iter_in] = fresh_name(f"{loop.name}/{iter_in}", names)
    adopt_tensors(graph, body, rename, loop.name, names)
    scan_bufs, last_only = [], []
    for k in keep_s:
        last_only.append(not runtime and _last_row_only(graph, scans[k], trips))
        if last_only[-1]:  # only the last step's row is read: one row, rewritten each step
            t = graph.tensors[scans[k]]
            graph.tensors[scans[k]] = Tensor(t.name, (1, *t.shape[1:]), t.dtype)
            for reader in graph.nodes:
                if scans[k] in reader.inputs:
                    reader.op, reader.attrs = "Identity", {}
        buf = fresh_name(f"{loop.name}/{scans[k]}_rows", names)
        graph.tensors[buf] = Tensor(buf, graph.tensors[scans[k]].shape, graph.tensors[scans[k]].dtype)
        scan_bufs.append(buf)
    states = [rename[carried_in[j]] for j in kept_c]
    attrs = {"loop": loop.name, "trip_count": trips, "n_carried": len(kept_c), "n_scan": len(keep_s),
             "runtime": runtime, "scans": [scans[k] for k in keep_s], "last_only": last_only}
    cond_init = [loop.attrs["cond_init"]] if loop.attrs["cond_init"] else []
    check = loop.inputs[len(loop.inputs) - loop.attrs.get("check", 0):] if loop.attrs.get("check", 0) else []
    begin = Node("LoopBegin", fresh_name(f"{loop.name}/begin", node_names),
                 [*(loop.inputs[variant[j]] for j in kept_c), *cond_init, *check],
                 [*states, rename[iter_in], *scan_bufs], {**attrs, "cond_init": bool(cond_init), "check": len(check)})
    hoisted: list[Node] = []  # loop-invariant: reads only values from before the loop, runs once before it
    nodes = [begin]
    before = {rename[t] for t in outer} | {t for t, v in graph.tensors.items() if v.is_const}
    for nd in body.nodes:
        if not reads.intersection(nd.outputs):
            continue  # computes only what the loop no longer needs (its condition, dropped counters)
        new = Node(nd.op, fresh_name(f"{loop.name}/{nd.name}", node_names),
                   [rename.get(i, i) if i else "" for i in nd.inputs], [rename[o] if o else "" for o in nd.outputs],
                   dict(nd.attrs), nd.origin)
        if new.op not in CONTROL_MARKERS and all(not i or i in before for i in new.inputs):
            hoisted.append(new)
            before.update(o for o in new.outputs if o)
        else:
            nodes.append(new)
    finals_out = []
    for j in kept_c:
        if finals[j]:
            finals_out.append(finals[j])
        else:
            f = fresh_name(f"{loop.name}/{carried_in[j]}_final", names)
            graph.tensors[f] = Tensor(f, graph.tensors[states[len(finals_out)]].shape,
                                      graph.tensors[states[len(finals_out)]].dtype)
            finals_out.append(f)
    end = Node("LoopEnd", fresh_name(f"{loop.name}/end", node_names),
               [*states, *scan_bufs, *(rename[carried_out[j]] for j in kept_c), *(rename[rows[k]] for k in keep_s),
                *(rename[c] for c in cond_out)], [*finals_out, *(scans[k] for k in keep_s)], dict(attrs))
    nodes.append(end)
    return hoisted + nodes + after


# --- Scan, as the Loop it is ------------------------------------------------------------------------
def scans_to_loops(model: onnx.ModelProto, opset: int) -> bool:
    """Each Scan (opset 9+) of the main graph -> a Loop of its sequence length whose body Gathers each
    scan input's element at the step (from the end for a reversed input), then the Scan's body; a
    scan output stored in reverse is reversed after the loop (a Slice), one on another axis moved
    there (a Transpose). In place; True if any Scan was rewritten. Scan-8 (batched) is left as it is."""
    g = model.graph
    if opset < 9 or not any(n.op_type == "Scan" and n.domain in ("", "ai.onnx") for n in g.node):
        return False
    shapes = static_shapes(model)
    out: list[onnx.NodeProto] = []
    used = {v.name for v in list(g.input) + list(g.output) + list(g.value_info)} | {i.name for i in g.initializer}
    used |= {o for n in g.node for o in n.output}
    for n in g.node:
        if n.op_type != "Scan" or n.domain not in ("", "ai.onnx"):
            out.append(n)
            continue
        out += _scan_as_loop(g, n, shapes, used)
    del g.node[:]
    g.node.extend(out)
    return True


def _scan_as_loop(g: onnx.GraphProto, n: onnx.NodeProto, shapes: dict, used: set[str]) -> list[onnx.NodeProto]:
    where = _LoopNode(n)
    attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
    body: onnx.GraphProto = attrs["body"]
    m = int(attrs["num_scan_inputs"])
    states, xs = list(n.input[:len(n.input) - m]), list(n.input[len(n.input) - m:])
    in_axes = list(attrs.get("scan_input_axes", [0] * m))
    in_dirs = list(attrs.get("scan_input_directions", [0] * m))
    k = len(body.output) - len(states)
    out_axes = list(attrs.get("scan_output_axes", [0] * k))
    out_dirs = list(attrs.get("scan_output_directions", [0] * k))

    def fresh(base: str) -> str:
        return fresh_name(f"{n.name}/{base}", used)

    lengths = set()
    for x, axis in zip(xs, in_axes, strict=True):
        shape = shapes.get(x)
        if shape is None:
            raise AotcError(f"scan input '{x}' has no static shape", node=where)
        lengths.add(shape[axis if axis >= 0 else axis + len(shape)])
    if len(lengths) != 1:
        raise AotcError(f"its scan inputs have different lengths {sorted(lengths)}", node=where)
    length = lengths.pop()
    new = onnx.GraphProto()
    new.CopyFrom(body)
    new.name = f"{n.name}_loop_body"
    elems = list(new.input[len(states):])
    state_ins = list(new.input[:len(states)])
    it, cond = fresh("i"), fresh("cond")
    del new.input[:]
    new.input.extend([helper.make_tensor_value_info(it, onnx.TensorProto.INT64, []),
                      helper.make_tensor_value_info(cond, onnx.TensorProto.BOOL, []), *state_ins])
    pre = []
    for x, e, axis, rev in zip(xs, elems, in_axes, in_dirs, strict=True):
        idx = it
        if rev:
            last = fresh("last")
            new.initializer.append(numpy_helper.from_array(np.array(length - 1, np.int64), last))
            idx = fresh("rev_i")
            pre.append(helper.make_node("Sub", [last, it], [idx], name=idx))
        pre.append(helper.make_node("Gather", [x, idx], [e.name], name=fresh("element"), axis=int(axis)))
    nodes = [*pre, *new.node]
    del new.node[:]
    new.node.extend(nodes)
    outs = list(new.output)
    del new.output[:]
    new.output.extend([helper.make_tensor_value_info(cond, onnx.TensorProto.BOOL, []), *outs])
    trips = fresh("length")
    g.initializer.append(numpy_helper.from_array(np.array(length, np.int64), trips))
    raw = [o if (not d and not a) or not o else fresh(f"{o}_rows")
           for o, a, d in zip(n.output[len(states):], out_axes, out_dirs, strict=False)]
    loop = helper.make_node("Loop", [trips, "", *states], [*n.output[:len(states)], *raw], name=n.name, body=new)
    result = [loop]
    for o, r, a, d in zip(n.output[len(states):], raw, out_axes, out_dirs, strict=False):
        if not o or o == r:
            continue
        cur = r
        if d:  # written in reverse: the last step's row first
            ends = fresh("ends")
            g.initializer.extend([numpy_helper.from_array(np.array([-1], np.int64), fresh("starts")),
                                  numpy_helper.from_array(np.array([-(2**63)], np.int64), ends)])
            starts = g.initializer[-2].name
            axes0, step = fresh("axes"), fresh("steps")
            g.initializer.extend([numpy_helper.from_array(np.array([0], np.int64), axes0),
                                  numpy_helper.from_array(np.array([-1], np.int64), step)])
            nxt = o if not a else fresh(f"{o}_reversed")
            result.append(helper.make_node("Slice", [cur, starts, ends, axes0, step], [nxt], name=fresh("reverse")))
            cur = nxt
        if a:
            rank = len(_elem_rank(body, len(states) + list(n.output[len(states):]).index(o))) + 1
            axis = a if a >= 0 else a + rank
            perm = list(range(1, rank))
            perm.insert(axis, 0)
            result.append(helper.make_node("Transpose", [cur], [o], name=fresh("to_axis"), perm=perm))
    return result


def _elem_rank(body: onnx.GraphProto, k: int) -> list[int]:
    """The dims of body output k as declared (only its rank is used)."""
    t = body.output[k].type.tensor_type
    if not t.HasField("shape"):
        raise AotcError(f"the Scan body's output '{body.output[k].name}' declares no rank; aotc needs it to move "
                        "its scan axis")
    return list(t.shape.dim)


# --- a list appended to each step, as torch.jit.script writes it ----------------------------------------
def _declared_rank(body: onnx.GraphProto, name: str) -> int | None:
    for vi in list(body.value_info) + list(body.output) + list(body.input):
        if vi.name == name and vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            return len(vi.type.tensor_type.shape.dim)
    return None


def sequences_to_scans(model: onnx.ModelProto) -> bool:
    """A Loop carrying a sequence that starts empty (SequenceEmpty), gets one tensor appended each step
    (SequenceInsert without a position) and is read after the loop only by ConcatFromSequence with
    new_axis = 1 (torch.stack of a Python list) -> the Loop's scan output of those tensors, moved to
    the stacking axis (a Transpose). In place, after shape inference (the row's rank places the axis);
    what does not match is left as it is. True if any was rewritten."""
    g = model.graph
    producer = {o: n for n in g.node for o in n.output if o}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}
    drop: list[onnx.NodeProto] = []
    for loop in [n for n in g.node if n.op_type == "Loop" and n.domain in ("", "ai.onnx")]:
        body = _graph_attr(loop, "body")
        nc = len(loop.input) - 2
        for j in reversed(range(nc)):
            init, seq_in, seq_out = loop.input[2 + j], body.input[2 + j].name, body.output[1 + j].name
            final = loop.output[j] if j < len(loop.output) else ""
            start = producer.get(init)
            insert = next((b for b in body.node if seq_out in b.output), None)
            concats = readers.get(final, [])
            if (start is None or start.op_type != "SequenceEmpty" or len(readers.get(init, [])) != 1
                    or insert is None or insert.op_type != "SequenceInsert" or len(insert.input) != 2
                    or insert.input[0] != seq_in or final in outputs or not concats
                    or any(b is not insert and seq_in in b.input for b in body.node)
                    or any(c.op_type != "ConcatFromSequence" or
                           helper.get_attribute_value(next((a for a in c.attribute if a.name == "new_axis"),
                                                           helper.make_attribute("new_axis", 0))) != 1
                           for c in concats)):
                continue
            row = insert.input[1]
            rank = _declared_rank(body, row)
            if rank is None:
                continue
            body.node.remove(insert)
            del body.input[2 + j]
            del body.output[1 + j]
            body.output.append(helper.make_value_info(row, onnx.TypeProto()))
            del loop.input[2 + j]
            del loop.output[j]
            stacked = f"{loop.name}/{final}_stacked"
            loop.output.append(stacked)
            drop.append(start)
            for c in concats:
                axis = next((a.i for a in c.attribute if a.name == "axis"), 0)
                axis = axis + rank + 1 if axis < 0 else axis
                del c.attribute[:]
                del c.input[:]
                c.input.append(stacked)
                c.op_type = "Identity" if axis == 0 else "Transpose"
                if axis:
                    perm = list(range(1, rank + 1))
                    perm.insert(axis, 0)
                    c.attribute.append(helper.make_attribute("perm", perm))
    for n in drop:
        g.node.remove(n)
    return bool(drop)
