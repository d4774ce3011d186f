"""Ops of the ai.onnx.ml and ai.onnx.preview.training domains that are formulas over ai.onnx ops,
lowered on import to those ops (issue 51), so they compile as any other graph does.

The training ops Adagrad, Adam and Momentum are deterministic updates of their inputs (a learning rate
R, an iteration count T, tensors X, their gradients G and accumulated state): computing one is inference
of that formula, as onnx's reference implementation writes it (onnx/reference/ops/aionnx_preview_training).
Gradient, of a graph made of Add, Sub, Mul, Div and Neg on operands of one shape, becomes the
reverse-mode derivative written out as ops. Binarizer and ArrayFeatureExtractor of ai.onnx.ml are a
comparison and a Gather, TreeEnsemble matrix arithmetic on its comparisons (tree_ensemble.py); the ops
skl2onnx writes for scikit-learn's estimators are sklearn_ops.py's (issue 69). Anything
else of those domains stays as it is and is refused by name (steps.py `_domains`), as is a node whose
attributes or types the lowering does not cover.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from aot.errors import AotcError, OnnxNodeName
from aot.frontend.onnx.load import metadata_json
from aot.frontend.onnx.sklearn_ops import LOWERINGS as SKLEARN_OPS
from aot.frontend.onnx.sklearn_ops import MlContext

ML = "ai.onnx.ml"
TRAINING = "ai.onnx.preview.training"
NOTES_KEY = "aotc.output_notes"  # metadata_props: notes on outputs a lowering retyped (sklearn_ops.py)
DEFAULT_OPSET = 18  # the ai.onnx opset a model of these domains alone is read at (its ops are the same from 13 on)
_FLOATS = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64}


class _Builder:
    """Nodes appended in order for one foreign node; intermediate names derived from its name."""

    def __init__(self, node: onnx.NodeProto, base: str, elem: int, initializers: list[onnx.TensorProto]):
        self.node, self.base, self.elem = node, base, elem
        self.nodes: list[onnx.NodeProto] = []
        self.initializers = initializers
        self.k = 0

    def _name(self, tag: str) -> str:
        self.k += 1
        return f"{self.base}/{tag}_{self.k}"

    def const(self, value: float | int | np.ndarray, dtype: type | None = None) -> str:
        """A scalar (or array) initializer, of the node's float type unless `dtype` says."""
        name = self._name("const")
        arr = np.asarray(value, dtype=dtype or _FLOATS[self.elem])
        self.initializers.append(numpy_helper.from_array(arr, name))
        return name

    def array(self, value: np.ndarray) -> str:
        """An initializer of `value` as it is (its own dtype)."""
        return self.const(value, value.dtype.type)

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs: object) -> str:
        name = self._name(op_type)
        output = out or name
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], name=name, **attrs))
        return output


def _attrs(node: onnx.NodeProto) -> dict[str, object]:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _float_attr(attrs: dict[str, object], name: str, default: float | None, node: onnx.NodeProto) -> float:
    if name in attrs:
        return float(attrs[name])  # type: ignore[arg-type]
    if default is None:
        raise AotcError(f"attribute '{name}' is required", node=OnnxNodeName(node))
    return default


def _groups(node: onnx.NodeProto, per: int) -> list[list[str]]:
    """The per-tensor operands of an optimizer node: inputs R, T, then `per` runs of n (X..., G..., ...)."""
    rest = list(node.input[2:])
    if len(rest) % per or not rest:
        raise AotcError(f"{len(node.input)} inputs do not divide into R, T and {per} runs of tensors",
                        node=OnnxNodeName(node))
    n = len(rest) // per
    return [[rest[j * n + i] for j in range(per)] for i in range(n)]


def _reg_grad(b: _Builder, x: str, g: str, norm: float) -> str:
    """G + norm * X, the gradient with its regularization term (X's own gradient when norm is 0)."""
    return b.op("Add", b.op("Mul", b.const(norm), x), g) if norm else g


def _adagrad(b: _Builder, attrs: dict[str, object]) -> None:
    node = b.node
    norm = _float_attr(attrs, "norm_coefficient", 0.0, node)
    eps = _float_attr(attrs, "epsilon", 1e-6, node)
    decay = _float_attr(attrs, "decay_factor", 0.0, node)
    r, t = b.op("Cast", node.input[0], to=b.elem), b.op("Cast", node.input[1], to=b.elem)
    rate = b.op("Div", r, b.op("Add", b.const(1.0), b.op("Mul", t, b.const(decay))))  # R / (1 + T * decay)
    groups = _groups(node, 3)
    n = len(groups)
    for i, (x, g, h) in enumerate(groups):
        gr = _reg_grad(b, x, g, norm)
        h_new = b.op("Add", h, b.op("Mul", gr, gr), out=node.output[n + i] if len(node.output) > n + i else None)
        scale = b.op("Add", b.op("Sqrt", h_new), b.const(eps))
        if node.output[i]:
            b.op("Sub", x, b.op("Div", b.op("Mul", rate, gr), scale), out=node.output[i])


def _adam(b: _Builder, attrs: dict[str, object]) -> None:
    node = b.node
    norm = _float_attr(attrs, "norm_coefficient", 0.0, node)
    post = _float_attr(attrs, "norm_coefficient_post", 0.0, node)
    alpha = _float_attr(attrs, "alpha", 0.9, node)
    beta = _float_attr(attrs, "beta", 0.999, node)
    eps = _float_attr(attrs, "epsilon", 1e-6, node)
    r, t = b.op("Cast", node.input[0], to=b.elem), b.op("Cast", node.input[1], to=b.elem)
    # bias correction from the second step on: R * sqrt(1 - beta^T) / (1 - alpha^T) where T > 0, else R
    corrected = b.op("Div", b.op("Mul", r, b.op("Sqrt", b.op("Sub", b.const(1.0), b.op("Pow", b.const(beta), t)))),
                     b.op("Sub", b.const(1.0), b.op("Pow", b.const(alpha), t)))
    rate = b.op("Where", b.op("Greater", node.input[1], b.const(0, np.int64)), corrected, r)
    groups = _groups(node, 4)
    n = len(groups)
    for i, (x, g, v, h) in enumerate(groups):
        gr = _reg_grad(b, x, g, norm)
        v_new = b.op("Add", b.op("Mul", b.const(alpha), v), b.op("Mul", b.const(1.0 - alpha), gr),
                     out=node.output[n + i] if len(node.output) > n + i and node.output[n + i] else None)
        h_new = b.op("Add", b.op("Mul", b.const(beta), h), b.op("Mul", b.const(1.0 - beta), b.op("Mul", gr, gr)),
                     out=node.output[2 * n + i] if len(node.output) > 2 * n + i and node.output[2 * n + i] else None)
        if node.output[i]:
            scale = b.op("Add", b.op("Sqrt", h_new), b.const(eps))
            x_new = b.op("Sub", x, b.op("Mul", rate, b.op("Div", v_new, scale)))
            b.op("Mul", b.const(1.0 - post), x_new, out=node.output[i])


def _momentum(b: _Builder, attrs: dict[str, object]) -> None:
    node = b.node
    norm = _float_attr(attrs, "norm_coefficient", None, node)
    alpha = _float_attr(attrs, "alpha", None, node)
    beta = _float_attr(attrs, "beta", None, node)
    mode = attrs.get("mode", b"standard")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("standard", "nesterov"):
        raise AotcError(f"Momentum mode '{mode}' is neither 'standard' nor 'nesterov'", node=OnnxNodeName(node))
    r = b.op("Cast", node.input[0], to=b.elem)
    # the gradient's coefficient is 1 at the first step (T = 0), beta after
    beta_t = b.op("Where", b.op("Greater", node.input[1], b.const(0, np.int64)), b.const(beta), b.const(1.0))
    groups = _groups(node, 3)
    n = len(groups)
    for i, (x, g, v) in enumerate(groups):
        gr = _reg_grad(b, x, g, norm)
        v_new = b.op("Add", b.op("Mul", b.const(alpha), v), b.op("Mul", beta_t, gr),
                     out=node.output[n + i] if len(node.output) > n + i and node.output[n + i] else None)
        if node.output[i]:
            step = v_new if mode == "standard" else b.op("Add", gr, b.op("Mul", b.const(alpha), v_new))
            b.op("Sub", x, b.op("Mul", r, step), out=node.output[i])


def _binarizer(b: _Builder, attrs: dict[str, object]) -> None:
    threshold = _float_attr(attrs, "threshold", 0.0, b.node)
    dtype = helper.tensor_dtype_to_np_dtype(b.elem)
    if dtype.kind == "i" and threshold != int(threshold):  # compared as the input's type, as numpy does
        above = b.op("Greater", b.op("Cast", b.node.input[0], to=TensorProto.DOUBLE), b.const(threshold, np.float64))
    else:
        above = b.op("Greater", b.node.input[0], b.const(threshold, dtype))
    b.op("Cast", above, to=b.elem, out=b.node.output[0])


def _array_feature_extractor(b: _Builder, attrs: dict[str, object], shapes: dict[str, list[int]]) -> None:
    """Gather on the last axis with the indices flattened; a 1-d input gives one row (onnxruntime's and
    onnx's reference's shape)."""
    node = b.node
    x_shape, i_shape = shapes.get(node.input[0]), shapes.get(node.input[1])
    if x_shape is None or i_shape is None:
        raise AotcError("ArrayFeatureExtractor needs its inputs' shapes at compile time", node=OnnxNodeName(node))
    # indices whose count is known at run time only (an ArgMax of a [None, C] tensor): -1, the one such dim
    count = -1 if None in i_shape else int(np.prod(i_shape, dtype=np.int64))
    flat = b.op("Reshape", node.input[1], b.const(np.array([count], np.int64), np.int64))
    # a dimension known at run time only (None, a [None, F] input's rows) is copied from the gathered tensor
    out_shape = [1, count] if len(x_shape) == 1 else [0 if d is None else d for d in x_shape[:-1]] + [count]
    picked = b.op("Gather", node.input[0], flat, axis=-1)
    b.op("Reshape", picked, b.const(np.array(out_shape, np.int64), np.int64), out=node.output[0])


_OPTIMIZERS: dict[str, Callable[[_Builder, dict[str, object]], None]] = {
    "Adagrad": _adagrad, "Adam": _adam, "Momentum": _momentum}


# the ops of each domain written as ai.onnx ops here
FOREIGN_OPS = {TRAINING: ("Adagrad", "Adam", "Gradient", "Momentum"),
               ML: ("ArrayFeatureExtractor", "Binarizer", "TreeEnsemble", *sorted(SKLEARN_OPS))}


def lowerable(node: onnx.NodeProto) -> bool:
    """Whether `node` is one of the foreign ops this module writes as ai.onnx ops."""
    return node.op_type in FOREIGN_OPS.get(node.domain, ())


def _types(model: onnx.ModelProto) -> tuple[dict[str, int], dict[str, list[int]]]:
    g = model.graph
    elems: dict[str, int] = {}
    shapes: dict[str, list[int]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        if vi.type.HasField("tensor_type"):
            elems[vi.name] = vi.type.tensor_type.elem_type
            if vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value")
                                                            for d in vi.type.tensor_type.shape.dim):
                shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    for init in g.initializer:
        elems[init.name], shapes[init.name] = init.data_type, list(init.dims)
    return elems, shapes


def _ml_context(model: onnx.ModelProto, opset: int) -> MlContext:
    """Element types and partial shapes (None for a dimension known at run time) of every tensor onnx's
    inference reaches, for the sklearn ops' lowerings (their inputs are often [None, F])."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - what inference cannot type, a lowering refuses by name
        inferred = model
    g = inferred.graph
    elems: dict[str, int] = {}
    dims: dict[str, list[int | None]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        if vi.type.HasField("tensor_type"):
            elems[vi.name] = vi.type.tensor_type.elem_type
            if vi.type.tensor_type.HasField("shape"):
                dims[vi.name] = [d.dim_value if d.HasField("dim_value") else None
                                 for d in vi.type.tensor_type.shape.dim]
    for init in g.initializer:
        elems[init.name], dims[init.name] = init.data_type, list(init.dims)
    ctx = MlContext(elems, dims, {o.name for o in model.graph.output})
    ctx.opset = opset
    ctx.constants = {i.name: i for i in g.initializer if np.prod(i.dims, dtype=np.int64) <= 64}
    return ctx


def _learn(ctx: MlContext, nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto],
           model: onnx.ModelProto) -> None:
    """The types and partial shapes of what `nodes` compute, learnt from onnx's inference on them alone, for
    the nodes after them (onnx's inference does not type every ai.onnx.ml op's outputs)."""
    if any(n.domain not in ("", "ai.onnx") for n in nodes):
        return
    made = {o for n in nodes for o in n.output if o}
    if all(o in ctx.elems and o in ctx.dims for o in made):
        return
    names = {i.name for i in inits}
    inputs = []
    for i in dict.fromkeys(x for n in nodes for x in n.input if x and x not in made and x not in names):
        if i not in ctx.elems:
            return
        inputs.append(helper.make_tensor_value_info(i, ctx.elems[i], ctx.dims.get(i)))
    values = [numpy_helper.from_array(numpy_helper.to_array(i), i.name) for i in inits]
    for n in nodes:
        for i in n.input:
            if i in ctx.constants and i not in names:
                values.append(ctx.constants[i])
                names.add(i)
    inputs = [v for v in inputs if v.name not in names]
    imports = [imp for imp in model.opset_import if imp.domain in ("", "ai.onnx")][:1] or \
        [helper.make_opsetid("", DEFAULT_OPSET)]
    mini = helper.make_model(helper.make_graph(nodes, "mini", inputs, [], values), opset_imports=imports)
    try:
        inferred = onnx.shape_inference.infer_shapes(mini, data_prop=True)
    except Exception:  # noqa: BLE001 - what inference cannot type, a later lowering refuses by name
        return
    for vi in inferred.graph.value_info:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            ctx.elems.setdefault(vi.name, vi.type.tensor_type.elem_type)
            if vi.type.tensor_type.HasField("shape") and vi.name not in ctx.dims:
                ctx.dims[vi.name] = [d.dim_value if d.HasField("dim_value") else None
                                     for d in vi.type.tensor_type.shape.dim]


def _retype_outputs(model: onnx.ModelProto, ctx: MlContext) -> None:
    """The outputs whose type a lowering changed (ZipMap's maps as their tensor, a string label as its class
    index) declared so, and their notes kept for metadata.json (metadata_props 'aotc.output_notes')."""
    for out in model.graph.output:
        if out.name in ctx.retyped:
            elem, dims = ctx.retyped[out.name]
            out.type.CopyFrom(helper.make_tensor_type_proto(elem, dims))
    if ctx.notes:
        notes = {**metadata_json(model, NOTES_KEY), **ctx.notes}
        kept = [p for p in model.metadata_props if p.key != NOTES_KEY]
        del model.metadata_props[:]
        model.metadata_props.extend(kept)
        model.metadata_props.append(onnx.StringStringEntryProto(key=NOTES_KEY, value=json.dumps(notes)))


def lower_foreign(model: onnx.ModelProto) -> bool:
    """Every top-level node `lowerable` replaced, in place, by the ai.onnx ops that compute it (an ai.onnx
    opset import added where the model has none); whether any was."""
    if not any(lowerable(n) for n in model.graph.node):
        return False
    imports = {imp.domain or "ai.onnx": imp.version for imp in model.opset_import}
    opset = imports.get("ai.onnx")
    if opset is not None and opset < 9:  # Where, and the forms of the ops written here
        return False
    if any(n.op_type == "Gradient" and n.domain == TRAINING for n in model.graph.node):
        from aot.frontend.onnx.gradient import lower_gradients  # the derivative, written out

        lower_gradients(model)
    elems, shapes = _types(model)
    ml_ops = (*SKLEARN_OPS, "ArrayFeatureExtractor")
    ctx = _ml_context(model, opset or DEFAULT_OPSET) if any(n.domain == ML and n.op_type in ml_ops
                                                            for n in model.graph.node) else None
    nodes: list[onnx.NodeProto] = []
    for k, node in enumerate(model.graph.node):
        if not lowerable(node) or node.op_type == "Gradient":
            nodes.append(node)
            if ctx is not None:
                _learn(ctx, [node], [], model)
            continue
        base = node.name or f"{node.op_type}_{k}"
        anchor = node.input[2] if node.domain == TRAINING and len(node.input) > 2 else node.input[0]
        elem = elems.get(anchor)
        if node.domain == TRAINING and elem not in _FLOATS:
            raise AotcError("a training op's tensors must be float or double", node=OnnxNodeName(node))
        b = _Builder(node, base, elem or TensorProto.FLOAT, [])
        attrs = _attrs(node)
        if node.op_type == "TreeEnsemble":
            from aot.frontend.onnx.tree_ensemble import lower_tree_ensemble

            b.nodes = lower_tree_ensemble(node, base, shapes, elems, b.array)
        elif node.op_type in SKLEARN_OPS and ctx is not None:
            SKLEARN_OPS[node.op_type](b, node, attrs, ctx)
        elif node.op_type == "ArrayFeatureExtractor":
            _array_feature_extractor(b, attrs, shapes if ctx is None else {**ctx.dims, **shapes})
        elif node.op_type == "Binarizer":
            if elem not in (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32):
                raise AotcError("Binarizer takes float, double, int64 or int32", node=OnnxNodeName(node))
            _binarizer(b, attrs)
        else:
            _OPTIMIZERS[node.op_type](b, attrs)
        nodes.extend(b.nodes)
        model.graph.initializer.extend(b.initializers)
        if ctx is not None:
            _learn(ctx, b.nodes if lowerable(node) else [node], b.initializers, model)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    if ctx is not None:
        _retype_outputs(model, ctx)
    if opset is None:
        model.opset_import.append(helper.make_opsetid("", DEFAULT_OPSET))
    used = {n.domain for n in model.graph.node}
    kept = [imp for imp in model.opset_import if imp.domain not in (ML, TRAINING) or imp.domain in used]
    del model.opset_import[:]
    model.opset_import.extend(kept)
    return True
