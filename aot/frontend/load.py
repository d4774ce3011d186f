"""ONNX import: read and check a model, fold constants, and build the IR with static shapes."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from aot.csource.names import is_reserved
from aot.errors import AotcError
from aot.frontend import contrib
from aot.frontend.bounded import BoundedImport, check_bounded
from aot.frontend.branches import import_if
from aot.frontend.canonical import canonicalize
from aot.frontend.control_flow import flatten_control_flow
from aot.frontend.fold import _Named, evaluate_node, fold_to_fixed_point, refuse_control_flow, static_shapes
from aot.frontend.held import initializer_value
from aot.frontend.loops import import_loop, scans_to_loops, sequences_to_scans
from aot.frontend.optional_outputs import drop_unread_optional_outputs
from aot.frontend.skeleton import skeleton
from aot.frontend.validate import (
    check_declarations,
    check_declared,
    check_int_attributes,
    check_node_outputs,
    check_node_types,
    check_text,
    declare_outputs,
    elem_name,
    node_inference_errors,
    restore_declarations,
    take_declarations,
)
from aot.ir import DTYPES, Graph, Node, Tensor
from aot.limits import MAX_TENSOR_BYTES, check_tensor, tensor_bytes

MIN_OPSET, MAX_OPSET = 7, 28  # 7..21 required; 22..28: see docs/opsets.md for what changed


def load_model(path: str | Path) -> onnx.ModelProto:
    """Read and check an ONNX file; any failure is one AotcError line."""
    path = Path(path)
    if not path.is_file():
        raise AotcError(f"cannot read model '{path}': no such file")
    from aot.frontend.tflite import is_tflite, load_tflite

    if is_tflite(path):  # the TFLite frontend writes the ONNX this stage reads (issue 29)
        return load_tflite(path)
    try:
        model = onnx.load(str(path))
    except Exception as e:
        raise AotcError(f"cannot read model '{path}': not a valid ONNX file ({_first_line(e)})") from e
    try:
        check_text(model)
    except AotcError as e:
        raise AotcError(f"cannot read model '{path}': {e.message}") from e
    if not model.graph.node and not model.graph.output:
        raise AotcError(f"cannot read model '{path}': not a valid ONNX file (empty graph)")
    try:
        onnx.checker.check_model(skeleton(model))  # large weights: checked against their dims below
    except Exception as e:
        # onnxruntime runs graphs whose outputs carry a type but no shape; so do we (shapes are inferred).
        if "Field 'shape' of 'type' is required but missing" not in str(e):
            raise AotcError(f"model '{path}' is malformed: {_first_line(e)}") from e
    return model


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def opset_of(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    raise AotcError("model imports no default-domain (ai.onnx) opset")


def import_model(model: onnx.ModelProto, name: str | None = None,
                 input_shapes: dict[str, tuple[int, ...]] | None = None,
                 max_dims: dict[tuple[str, int], int] | None = None, *, keep_onnx: bool = True,
                 owned: bool = False) -> Graph:
    """ModelProto -> IR Graph with static shapes, constants folded, attributes canonical;
    `max_dims` bounds data-dependent dims ({(tensor, axis): rows}, aot/frontend/bounded.py).
    `keep_onnx`: keep the folded ONNX in graph.meta["onnx"], which `aotc partition -o` writes back;
    a compile does without that copy of the weights. `owned`: the caller hands `model` over (it was
    loaded for this compile), so it is changed in place rather than copied."""
    opset = opset_of(model)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise AotcError(f"opset {opset} is not supported (aotc reads opsets {MIN_OPSET} to {MAX_OPSET})")
    for n in model.graph.node:
        if not contrib.is_supported(n):
            only = f" (of it aotc reads {', '.join(contrib.CONTRIB_OPS)})" if n.domain == contrib.DOMAIN else ""
            raise AotcError(f"operator domain '{n.domain}' is not supported{only}", node=_Named(n))
    model = name_nodes(model if owned else copy_model(model))
    drop_unread_optional_outputs(model, opset)  # before any op is checked
    if input_shapes:
        fix_input_shapes(model, input_shapes)
    check_declared(model)  # sizes and initializer data, before anything is allocated from them
    empty = empty_inputs_to_constants(model)
    _check_input_shapes(model)
    declared = take_declarations(model)  # output and value_info types: inferred, then compared
    model = fold_to_fixed_point(model)  # also: an If with a constant condition becomes its branch
    if scans_to_loops(model, opset) | sequences_to_scans(model):  # aot/frontend/loops.py: a Scan is the Loop
        model = fold_to_fixed_point(model)  # over its sequence; a list appended each step, a scan output
    refuse_control_flow(model)  # what is left of If/Loop/Scan, before any evaluator sees a subgraph
    drop_unread_optional_outputs(model, opset)  # those of nodes that came out of an If's branch
    restore_declarations(model, declared)  # where inference knows nothing
    if _reduces_empty(model):  # the declared output shape is what pins a Reduce of nothing: fold it now
        model = fold_to_fixed_point(model)
        restore_declarations(model, declared)
    bounded = BoundedImport(max_dims or {})
    graph = _to_ir(model, name or sanitize(model.graph.name or "model"), bounded)
    graph.meta["pruned_inputs"] = empty  # inputs the bundle does not take, which `aotc run` accepts (issue 48)
    bounded.finish(graph)
    check_declarations(graph, declared)
    inconsistent = node_inference_errors(model, graph.tensors)  # raised after canonicalize's own checks
    declare_outputs(model, graph)
    graph.meta["opset"] = opset
    graph.meta["io_quantization"] = _io_quantization(model)
    if keep_onnx:
        graph.meta["onnx"] = model  # the folded model, which a partition is written back into
    canonicalize(graph, opset)
    if inconsistent:
        raise inconsistent[0]
    flatten_control_flow(graph)  # Loop and run-time If bodies between their markers (aot/frontend/control_flow.py)
    check_bounded(graph)  # the readers of data-dependent rows run on their extent, or are refused
    graph.verify()
    return graph


def _io_quantization(model: onnx.ModelProto) -> dict[str, dict]:
    """{tensor: {scale, zero_point}} of the quantized inputs and outputs, which a frontend (TFLite's)
    recorded in the model's metadata_props for the header."""
    import json

    for p in model.metadata_props:
        if p.key == "aotc.io_quantization":
            return json.loads(p.value)
    return {}


def name_nodes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Give every node a unique name, so every later stage can name a node to the user."""
    used: set[str] = set()
    for k, n in enumerate(model.graph.node):
        n.name = _unique(n.name or f"{n.op_type}_{k}", used)
    return model


def copy_model(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def fix_input_shapes(model: onnx.ModelProto, shapes: dict[str, tuple[int, ...]]) -> None:
    """Give inputs static shapes (--input-shape): for models exported with a dynamic batch or size."""
    inputs = {vi.name: vi for vi in model.graph.input}
    for name, shape in shapes.items():
        if name not in inputs:
            raise AotcError(f"--input-shape names '{name}', which is not an input of the model "
                            f"(inputs: {', '.join(inputs)})")
        tt = inputs[name].type.tensor_type
        if tt.HasField("shape") and len(tt.shape.dim) != len(shape):
            raise AotcError(f"--input-shape gives input '{name}' rank {len(shape)}, the model says {len(tt.shape.dim)}")
        if any(d <= 0 for d in shape):
            raise AotcError(f"--input-shape for '{name}' must be positive sizes, got {list(shape)}")
        model_dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in tt.shape.dim]
        clash = [k for k, (m, d) in enumerate(zip(model_dims, shape, strict=True)) if m is not None and m != d]
        if clash:
            shown = [m if m is not None else "?" for m in model_dims]
            raise AotcError(f"--input-shape gives input '{name}' dimension {clash[0]} = {shape[clash[0]]}, but the "
                            f"model fixes it at {model_dims[clash[0]]} (shape {shown}); only its dynamic "
                            "dimensions (?) can be set")
        tt.shape.Clear()
        for d in shape:
            tt.shape.dim.add().dim_value = int(d)


def empty_inputs_to_constants(model: onnx.ModelProto) -> list[dict]:
    """An input with a static zero-size dimension holds nothing, so its value is known: it becomes an
    empty constant (no argument, no arena space), and what reads it folds (a CastLike's `like`, empty
    Reduce axes, a Reduce of an empty set). Returns their declarations: name, shape and dtype."""
    inits = {i.name for i in model.graph.initializer}
    empty: list[dict] = []
    for vi in model.graph.input:
        tt = vi.type.tensor_type
        if vi.name in inits or not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim]
        if 0 not in dims or any(d < 0 for d in dims):
            continue
        try:
            np_dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        except Exception:  # a type numpy cannot hold (string): left to the dtype check's refusal
            continue
        if np_dtype.kind in "OSU":
            continue
        # numpy refuses a shape whose other dimensions overflow, even holding nothing: the same limit as
        # any tensor, on the dimensions that are not zero
        if tensor_bytes([d for d in dims if d], np_dtype.itemsize) > MAX_TENSOR_BYTES:
            raise AotcError(f"input '{vi.name}' is {np_dtype}[{','.join(map(str, dims))}]: empty, but its other "
                            "dimensions are beyond the 2 GiB aotc takes for any tensor")
        model.graph.initializer.append(numpy_helper.from_array(np.zeros(dims, np_dtype), vi.name))
        empty.append({"name": vi.name, "shape": dims, "dtype": elem_name(tt.elem_type)})
    return empty


def _reduces_empty(model: onnx.ModelProto) -> bool:
    empty = {i.name for i in model.graph.initializer if 0 in i.dims}
    return any(n.op_type.startswith("Reduce") and n.input and n.input[0] in empty for n in model.graph.node)


def _check_input_shapes(model: onnx.ModelProto) -> None:
    inits = {i.name for i in model.graph.initializer}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise AotcError(f"input '{vi.name}' is not a tensor")
        if not tt.HasField("shape"):
            raise AotcError(f"input '{vi.name}' has no shape: aotc needs static shapes")
        for k, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value") and d.dim_value == 0:
                raise AotcError(f"input '{vi.name}' has a zero-size dimension {k}: empty tensors are not supported")
            if not d.HasField("dim_value") or d.dim_value < 0:
                what = f"'{d.dim_param}'" if d.dim_param else "unknown"
                raise AotcError(f"input '{vi.name}' has a dynamic dimension {k} ({what}): aotc needs static shapes; "
                                f"give them with --input-shape {vi.name}=D0,D1,...")


def _elem_dtype(elem_type: int, what: str, node: object = None) -> str:
    dt = elem_name(elem_type)
    if dt not in DTYPES:
        raise AotcError(f"{what} has dtype {dt}, which aotc does not support", node=node)
    return dt


def _to_ir(model: onnx.ModelProto, name: str, bounded: BoundedImport | None = None) -> Graph:
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
        node = Node(pn.op_type, node_name, list(pn.input), list(pn.output), attrs)
        check_node_types(pn, tensors, opset_of(model), node)
        check_int_attributes(pn, node)
        at_bound = bounded.infer(pn, node, tensors, opsets) if bounded is not None else None
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
        if missing:
            _infer_by_evaluation(pn, node, tensors, shapes, types, opsets)
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
    return Graph(name=name, nodes=nodes, tensors=tensors, inputs=inputs, outputs=outputs)


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


def _unique(name: str, used: set[str]) -> str:
    base, k = name, 1
    while name in used:
        name = f"{base}_{k}"
        k += 1
    used.add(name)
    return name


def sanitize(name: str) -> str:
    """The model's C name, made from `name`: lower-case [a-z0-9_], not leading with a digit, at most
    48 characters (it prefixes every public symbol and file name of the bundle), and none that a
    CMake target, a system library, the bundle's own files or the runtime's prefixes take."""
    s = re.sub(r"[^0-9a-zA-Z_]", "_", name).strip("_").lower() or "model"
    if len(s) > 48:
        s = s[:40].rstrip("_") + "_" + hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:7]
    if s[0].isdigit() or s in _RESERVED or is_reserved(s) or s.startswith(("aotc", "dlpack", "dltensor")):
        s = "model_" + s
    return s


# Names a bundle's CMake target must not take: system libraries it links, its own runner, CMake's
# reserved targets; and C keywords (the name is also an identifier prefix and a header name).
_RESERVED = {"m", "c", "dl", "rt", "pthread", "gcc", "runner", "aotc", "dnnl", "all", "clean", "help", "install",
             "test", "package", "package_source", "edit_cache", "rebuild_cache", "depend", "preinstall",
             "list_install_components", "install_strip", "install_local", "all_build", "zero_check", "run_tests",
             "main", "cref", "accel_sim"}
