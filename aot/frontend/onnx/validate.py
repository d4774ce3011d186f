"""What a model declares, checked before it is believed or anything is allocated from it.

- `check_declared`: every element type is one ONNX knows; every declared shape and every
  initializer (and tensor attribute) is under the tensor size limit (aot/limits.py); every
  initializer holds exactly as much data as its dims say (the onnx checker catches only too little).
- `take_declarations` / `restore_declarations` / `check_declarations`: the types and shapes declared
  on graph outputs and value_info are hints. They are taken off the model before shape inference
  (onnx's non-strict inference would otherwise keep a declared shape over the one it infers), put
  back only where inference knows nothing (a shape that depends on a graph input's value), and
  compared with what the graph computes: a contradiction is refused (onnxruntime refuses such
  models or warns and uses the inferred shape; aotc never runs a model whose I/O differ from
  what it says). A declared dim that is a name, -1, or 0 where the graph computes rows is what
  exporters write for "unknown" (issue 51): the computed dim is taken; a positive one that differs
  is a contradiction.
- `check_node_outputs`: before a node is evaluated (constant folding, or shape inference by
  evaluation), the sizes of its outputs, as onnx infers them for that node from its inputs' types
  and small constant values, are checked against the limit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from aot.errors import AotcError
from aot.frontend.onnx.bounded import pin_declared_rows
from aot.ir import Graph, Tensor
from aot.ir.held import is_held
from aot.limits import check_tensor

_KNOWN = {v for v in TensorProto.DataType.values() if v != TensorProto.UNDEFINED}
_PACKED_4BIT = {getattr(TensorProto, n) for n in ("INT4", "UINT4", "FLOAT4E2M1") if hasattr(TensorProto, n)}
_COMPLEX = {TensorProto.COMPLEX64, TensorProto.COMPLEX128}
_SMALL_VALUE = 4096  # constant inputs up to this many elements are shown to onnx's node inference
# what some exporters write for a dimension they do not know, on outputs and value_info (tf2onnx,
# hand-patched models): taken as unknown there, like a symbolic name. On a graph input it stays refused.
UNKNOWN_DIM = -1


def elem_name(elem_type: int) -> str:
    """numpy-style name of an ONNX element type (float32, int64, ...), or what onnx calls it."""
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).name
    except Exception:
        try:
            return TensorProto.DataType.Name(elem_type).lower()
        except ValueError:
            return f"elem_type {elem_type}"


def _itemsize(elem_type: int) -> float:
    if elem_type in _PACKED_4BIT:
        return 0.5
    try:
        return float(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).itemsize)
    except Exception:
        return 1.0


def _shape_text(dims: Sequence[int | str | None]) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


# --- what protobuf parses lazily ------------------------------------------------------------------------
def check_text(msg: object) -> None:
    """Every string of the model is valid UTF-8. protobuf decodes them when they are read: a bad
    byte would surface far from the file (as bytes where a str is expected, or a UnicodeDecodeError)."""
    from google.protobuf.descriptor import FieldDescriptor

    try:
        for fd, value in msg.ListFields():  # type: ignore[attr-defined]
            if fd.type == FieldDescriptor.TYPE_MESSAGE:
                for m in (value if _repeated(fd) else [value]):
                    check_text(m)
            elif fd.type == FieldDescriptor.TYPE_STRING:
                bad = next((v for v in (value if _repeated(fd) else [value]) if not isinstance(v, str)), None)
                if bad is not None:
                    raise AotcError(f"the {fd.name} {bad!r} is not valid UTF-8")
    except UnicodeDecodeError as e:
        raise AotcError(f"a name or string in it is not valid UTF-8 ({e.object[:40]!r})") from e


def _repeated(fd: object) -> bool:
    repeated = getattr(fd, "is_repeated", None)  # protobuf 5+; older ones have only the label
    return repeated if repeated is not None else fd.label == fd.LABEL_REPEATED  # type: ignore[attr-defined]


def check_int_attributes(node: onnx.NodeProto, describe: object) -> None:
    """Integer attributes become 32-bit fields of the C kernels' parameters: refuse any beyond that
    range (except data, as in Constant, and Slice's starts and ends, where INT64_MAX means "to the end")."""
    if node.op_type in ("Constant", "Slice", "ConstantOfShape"):
        return
    for a in node.attribute:
        values = [a.i] if a.type == AttributeProto.INT else list(a.ints) if a.type == AttributeProto.INTS else []
        bad = [v for v in values if not -(2**31) <= v < 2**31]
        if bad:
            raise AotcError(f"attribute '{a.name}' holds {bad[0]}, beyond the 32-bit integers aotc's kernels take",
                            node=describe)


# --- declared sizes and initializer data ----------------------------------------------------------
def check_declared(model: onnx.ModelProto) -> None:
    g = model.graph
    for kind, infos in (("input", g.input), ("graph output", g.output), ("value", g.value_info)):
        for vi in infos:
            if not vi.type.HasField("tensor_type"):
                continue
            tt = vi.type.tensor_type
            what = f"{kind} '{vi.name}'"
            if tt.elem_type and tt.elem_type not in _KNOWN:
                raise AotcError(f"{what} has element type {tt.elem_type}, which ONNX does not define")
            if not tt.HasField("shape"):
                continue
            dims: list[int | str | None] = []
            for k, d in enumerate(tt.shape.dim):
                if d.HasField("dim_value"):
                    if d.dim_value < 0 and not (kind != "input" and d.dim_value == UNKNOWN_DIM):
                        raise AotcError(f"{what} declares dimension {k} as {d.dim_value}")
                    if d.dim_value < 0:
                        dims.append(None)  # an output's -1: unknown (take_declarations clears it)
                        continue
                    dims.append(int(d.dim_value))
                else:
                    dims.append(d.dim_param or None)
            known = [d if isinstance(d, int) else 1 for d in dims]
            if math.prod(known) * _itemsize(tt.elem_type) > 2**31 - 1:
                check_tensor(what, elem_name(tt.elem_type), known, int(math.ceil(_itemsize(tt.elem_type))))
    for init in g.initializer:
        check_tensor_proto(init, f"initializer '{init.name}'")
    for n in g.node:
        for a in n.attribute:
            for t in ([a.t] if a.type == AttributeProto.TENSOR else list(a.tensors)
                      if a.type == AttributeProto.TENSORS else []):
                check_tensor_proto(t, f"node '{n.name}' ({n.op_type}): attribute '{a.name}'")


def check_tensor_proto(t: TensorProto, what: str) -> None:
    """A tensor in the model file: known type, dims under the limit, exactly the data its dims say."""
    dt = t.data_type
    if dt not in _KNOWN:
        raise AotcError(f"{what} has data type {dt}, which ONNX does not define")
    dims = [int(d) for d in t.dims]
    if any(d < 0 for d in dims):
        raise AotcError(f"{what} has a negative dimension {dims}")
    name = elem_name(dt)
    size = _itemsize(dt)
    check_tensor(what, name, dims, int(math.ceil(size)))
    n = math.prod(dims)
    if is_held(t):  # its data became an array of these dims (aot/ir/held.py)
        return
    if t.data_location == TensorProto.EXTERNAL:
        raise AotcError(f"{what} keeps its data in an external file, which was not loaded")
    if dt == TensorProto.STRING:
        have, want, unit = len(t.string_data), n, "strings"
    elif t.HasField("raw_data"):
        have, want, unit = len(t.raw_data), int(math.ceil(n * size)), "bytes"
    else:
        field = helper.tensor_dtype_to_field(dt)
        per = 2 if dt in _COMPLEX else 1
        have, unit = len(getattr(t, field)), f"values in {field}"
        want = (n + 1) // 2 if dt in _PACKED_4BIT else n * per
    if have != want:
        raise AotcError(f"{what} holds {have} {unit} of data, but {name}{_shape_text(dims)} needs {want}")


# --- declarations: hints taken off, then compared -----------------------------------------------------
def take_declarations(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """The types declared on graph outputs and value_info, removed from `model` (in place): shape
    inference then infers them rather than trusting them. Graph inputs and initializers stay: they
    are what the model is."""
    g = model.graph
    declared: dict[str, onnx.TypeProto] = {}
    for vi in list(g.value_info) + list(g.output):
        if vi.HasField("type"):
            tp = declared.setdefault(vi.name, onnx.TypeProto())
            tp.CopyFrom(vi.type)
            if tp.HasField("tensor_type") and tp.tensor_type.HasField("shape"):
                for d in tp.tensor_type.shape.dim:
                    if d.HasField("dim_value") and d.dim_value == UNKNOWN_DIM:
                        d.ClearField("dim_value")  # unknown, as a dim without value or name
    for vi in g.output:
        vi.ClearField("type")
    del g.value_info[:]
    return declared


def restore_declarations(model: onnx.ModelProto, declared: dict[str, onnx.TypeProto]) -> None:
    """Where onnx's inference (after folding) left a value's type or shape unknown, its declaration is
    the only static information there is: e.g. a Reshape whose shape is a graph input, as in ONNX's
    node tests. Put it back there (in place), so the graph uses it rather than a guess from
    evaluating the node on zeros. A declaration that contradicts a dimension inference knows is
    not put back (check_declarations refuses it)."""
    g = model.graph
    infos = {vi.name: vi for vi in list(g.value_info) + list(g.output)}
    fixed = {vi.name for vi in g.input} | {t.name for t in g.initializer}
    for name, tp in declared.items():
        if name in fixed or tp.WhichOneof("value") != "tensor_type":
            continue
        vi = infos.get(name)
        if vi is None:
            vi = g.value_info.add()
            vi.name = name
        have, want = vi.type.tensor_type, tp.tensor_type
        if not have.elem_type and want.elem_type:
            have.elem_type = want.elem_type
        if not want.HasField("shape") or not all(d.HasField("dim_value") for d in want.shape.dim):
            continue
        if have.HasField("shape") and all(d.HasField("dim_value") for d in have.shape.dim):
            continue  # inference knows it: compared, not replaced
        if have.HasField("shape") and (len(have.shape.dim) != len(want.shape.dim) or any(
                h.HasField("dim_value") and h.dim_value != w.dim_value for h, w in zip(have.shape.dim, want.shape.dim,
                                                                                      strict=True))):
            continue
        have.shape.CopyFrom(want.shape)


def check_declarations(graph: Graph, declared: dict[str, onnx.TypeProto]) -> None:
    """Refuse a declared type or shape that contradicts what the graph computes (names still in
    the graph: values folded away are not checked)."""
    outputs = set(graph.outputs)
    for name, tp in declared.items():
        t = graph.tensors.get(name)
        if t is None:
            continue
        what = f"{'graph output' if name in outputs else 'value'} '{name}'"
        kind = tp.WhichOneof("value")
        if kind is None:
            continue
        if kind != "tensor_type":
            raise AotcError(f"{what} is declared a {kind.replace('_type', '')}, but the graph computes a tensor "
                            f"{t.dtype}{_shape_text(t.shape)}")
        tt = tp.tensor_type
        decl_dtype = elem_name(tt.elem_type) if tt.elem_type else t.dtype
        decl_dims: list[int | str | None] = list(t.shape)
        agree = decl_dtype == t.dtype
        if tt.HasField("shape"):
            decl_dims = [int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
                         for d in tt.shape.dim]
            if len(decl_dims) == len(t.shape):  # a declared 0 where the graph computes rows: 0 as "unknown"
                decl_dims = [None if d == 0 and s > 0 else d for d, s in zip(decl_dims, t.shape, strict=True)]
            agree = agree and len(decl_dims) == len(t.shape) and all(
                not isinstance(d, int) or d == s for d, s in zip(decl_dims, t.shape, strict=True))
        if not agree and _onnx_inference_is_wrong(graph, name, decl_dtype, decl_dims):
            graph.tensors[name] = Tensor(name, tuple(int(d) for d in decl_dims), t.dtype)  # type: ignore[arg-type]
            continue
        if not agree and decl_dtype == t.dtype and pin_declared_rows(graph, name, decl_dtype, decl_dims):
            continue
        if not agree:
            raise AotcError(f"{what} is declared {decl_dtype}{_shape_text(decl_dims)}, but the graph computes "
                            f"{t.dtype}{_shape_text(t.shape)}: correct or remove the declaration")


def _onnx_inference_is_wrong(graph: Graph, name: str, dtype: str, dims: list[int | str | None]) -> bool:
    """The one known case where onnx's shape inference, not the declaration, is wrong: a ceil_mode
    pool whose last window would start past the input (onnxruntime and the ONNX reference drop it,
    inference keeps it; ONNX's own node tests declare the smaller shape). There the declared shape
    of an output that no node reads is kept, and the pool's canonical form checks it against the
    window arithmetic (aot/frontend/onnx/canonical/pool.py)."""
    t = graph.tensors[name]
    producer = next((n for n in graph.nodes if name in n.outputs), None)
    return (producer is not None and producer.op in ("MaxPool", "AveragePool")
            and int(producer.attrs.get("ceil_mode", 0)) == 1 and dtype == t.dtype
            and all(isinstance(d, int) for d in dims) and len(dims) == len(t.shape)
            and not any(name in n.inputs for n in graph.nodes))


def declare_outputs(model: onnx.ModelProto, graph: Graph) -> None:
    """Give the graph outputs of `model` the types and shapes the graph computes (after
    check_declarations: they agree with any declaration), so the model written back is complete."""
    for vi in model.graph.output:
        t = graph.tensors.get(vi.name)
        if t is not None:
            vi.type.CopyFrom(helper.make_tensor_type_proto(helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype)),
                                                           list(t.shape)))


# --- a node's outputs, before it is evaluated ------------------------------------------------------------
def _infer_node(node: onnx.NodeProto, inputs: Sequence[tuple[str, tuple[int, ...]] | None],
                values: Sequence[np.ndarray | None], opsets: Sequence[onnx.OperatorSetIdProto]
                ) -> dict[str, onnx.TypeProto] | None:
    """onnx's shape inference for one node from its inputs' (dtype, shape) and small constant values;
    None where onnx has no schema for it. Raises onnx's InferenceError when the node is inconsistent."""
    version = next((int(o.version) for o in opsets if o.domain == node.domain
                    or (o.domain in ("", "ai.onnx") and node.domain in ("", "ai.onnx"))), None)
    try:
        schema = onnx.defs.get_schema(node.op_type, version or onnx.defs.onnx_opset_version(), node.domain)
    except Exception:
        return None  # an op onnx does not know: refused where its lowering is looked up
    types: dict[str, onnx.TypeProto] = {}
    data: dict[str, TensorProto] = {}
    for name, info, value in zip(node.input, inputs, values, strict=False):
        if not name or info is None:
            continue
        dtype, shape = info
        try:
            types[name] = helper.make_tensor_type_proto(helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(shape))
            if value is not None and np.size(value) <= _SMALL_VALUE:
                data[name] = numpy_helper.from_array(np.asarray(value), name)
        except Exception:
            return None
    try:
        return onnx.shape_inference.infer_node_outputs(schema, node, types, data, opset_imports=list(opsets))
    except onnx.shape_inference.InferenceError:
        raise
    except Exception:
        return None


def node_inference_errors(model: onnx.ModelProto, tensors: Mapping[str, Tensor]) -> list[AotcError]:
    """Each node that onnx's inference, run on that node alone with its inputs' types and shapes (and
    small constant values), finds inconsistent: a Gemm or MatMul whose inner dimensions differ, shapes
    that do not broadcast, ... Inference over the whole graph runs in non-strict mode, which drops
    these. Returned, not raised: canonicalization refuses much of this with its own words first."""
    errors = []
    opsets = list(model.opset_import)
    for node in model.graph.node:
        if any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in node.attribute):
            continue  # a Loop: its body is imported as a model of its own (aot/frontend/onnx/loops.py)
        inputs = [None if not i or i not in tensors else (tensors[i].dtype, tensors[i].shape) for i in node.input]
        values = [None if not i or i not in tensors else tensors[i].data for i in node.input]
        try:
            _infer_node(node, inputs, values, opsets)
        except onnx.shape_inference.InferenceError as e:
            text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if "ttribute" in text:
                continue  # attributes: the canonical form and the kernel table check them, in their words
            errors.append(AotcError(f"onnx's shape inference refuses it: {text.replace('[ShapeInferenceError] ', '')}",
                                    node=_Described(node)))
    return errors


class _Described:
    def __init__(self, node: onnx.NodeProto):
        self.node = node

    def describe(self) -> str:
        return f"node '{self.node.name}' ({self.node.op_type})"


def check_node_outputs(node: onnx.NodeProto, inputs: Sequence[tuple[str, tuple[int, ...]] | None],
                       values: Sequence[np.ndarray | None], opsets: Sequence[onnx.OperatorSetIdProto],
                       describe: object = None) -> None:
    """Refuse `node` before it is evaluated when onnx's inference for it says an output would be
    over the tensor limit. `inputs`: (numpy dtype name, shape) of each input, None if absent;
    `values`: the constant inputs' arrays (small ones are shown to the inference, e.g. the shape
    of an Expand), None where not constant."""
    try:
        out = _infer_node(node, inputs, values, opsets)
    except onnx.shape_inference.InferenceError:
        return  # inference refuses the node: evaluating it says why
    for name, tp in (out or {}).items():
        if not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
            continue
        tt = tp.tensor_type
        dims = [int(d.dim_value) if d.HasField("dim_value") else 1 for d in tt.shape.dim]
        if any(d < 0 for d in dims):
            continue
        check_tensor(f"output '{name}'", elem_name(tt.elem_type), dims, int(math.ceil(_itemsize(tt.elem_type))),
                     node=describe)


# --- input types against the op's schema ------------------------------------------------------------------
_TYPE_STR = {"float32": "float", "float64": "double", "bool": "bool", "int8": "int8", "int16": "int16",
             "int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
             "uint64": "uint64", "float16": "float16", "float8_e4m3fn": "float8e4m3fn",
             "float8_e4m3fnuz": "float8e4m3fnuz", "float8_e5m2": "float8e5m2", "float8_e5m2fnuz": "float8e5m2fnuz",
             "float4_e2m1fn": "float4e2m1", "float8_e8m0fnu": "float8e8m0"}


def check_node_types(node: onnx.NodeProto, tensors: Mapping[str, Tensor], opset: int, describe: object) -> None:
    """Refuse a node whose inputs' types its ONNX schema does not allow, or that differ where the schema
    says they are one type (e.g. Gemm's A, B and C are all T). onnx's shape inference, which aotc runs
    without its type check, lets such models through; onnxruntime refuses them. `tensors`: the
    inputs known so far (the graph is topologically sorted)."""
    if node.domain not in ("", "ai.onnx"):
        return
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, "")
    except Exception:
        return  # an op onnx does not know: refused where its lowering is looked up
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    formals = list(schema.inputs)
    variadic = onnx.defs.OpSchema.FormalParameterOption.Variadic
    bound: dict[str, tuple[str, str]] = {}
    for k, name in enumerate(node.input):
        t = tensors.get(name) if name else None
        if t is None or not formals or (k >= len(formals) and formals[-1].option != variadic):
            continue
        formal = formals[min(k, len(formals) - 1)]
        ts = f"tensor({_TYPE_STR.get(t.dtype, t.dtype)})"
        type_str = formal.type_str
        if not (ts in allowed[type_str] if type_str in allowed else ts == type_str):
            raise AotcError(f"input {k} ('{name}') is {t.dtype}, which {node.op_type} does not take as its "
                            f"{formal.name}", node=describe)
        if type_str in allowed and (formal.is_homogeneous or k < len(formals)):
            first = bound.setdefault(type_str, (ts, name))
            if first[0] != ts:
                raise AotcError(f"inputs '{first[1]}' and '{name}' must have one type ({type_str}), but are "
                                f"{tensors[first[1]].dtype} and {t.dtype}", node=describe)
