"""ONNX sequences and optionals whose lengths and presence are known at compile time, lowered on import
to the tensors they hold (issue 51).

A sequence of static length is, at compile time, a list of tensor names: SequenceConstruct / Empty /
Insert / Erase / At / Length, SplitToSequence and ConcatFromSequence become the list operations
they are, and the tensor ops they imply (Split, Concat, Unsqueeze); a position computed at run time
stacks the elements (a Concat, so their shapes must agree) and Gathers the one it names. An optional
is present or absent at compile time: Optional, OptionalHasElement (a constant) and
OptionalGetElement vanish. SequenceMap, and a Loop over sequences with a constant trip count, are
unrolled: their body's nodes once per element / step, renamed apart.

At the bundle's boundary a sequence input or output `x` of N elements is the N tensors `x.0` ..
`x.N-1` (each an ordinary input or output of `<name>_run`, in that order, where `x` stood); the
compile takes the length from their shapes (`--input-shape x.0=3,4 --input-shape x.1=5,4`). An
optional input is present (the tensor or sequence it holds) unless pinned absent
(`--input-value x=none`); an absent optional output is no output. metadata.json's `structured_io`
says, for each such input and output, which tensors hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper

from aot.errors import AotcError, OnnxNodeName

SEQUENCE_OPS = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceErase",
                "SequenceLength", "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional",
                "OptionalHasElement", "OptionalGetElement"}
MAX_UNROLL = 4096  # elements or steps one sequence op / Loop is unrolled to


@dataclass
class Seq:
    """A sequence value: its elements' tensor names, and their element type."""

    items: list[str]
    elem_type: int = 0


@dataclass
class Opt:
    """An optional value: None (absent), a tensor name or a Seq."""

    value: str | Seq | None


Value = str | Seq | Opt


def _kind(tp: onnx.TypeProto) -> str:
    return tp.WhichOneof("value") or ""


def has_structured_io(model: onnx.ModelProto) -> bool:
    """Whether any graph input or output is a sequence or an optional."""
    return any(_kind(v.type) in ("sequence_type", "optional_type") for v in [*model.graph.input, *model.graph.output])


def uses_sequences(model: onnx.ModelProto) -> bool:
    """Whether the model has a sequence or optional anywhere (its boundary, a node of the main graph or a body)."""
    def ops(g: onnx.GraphProto):
        for n in g.node:
            yield n.op_type
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    yield from ops(a.g)
                for sg in a.graphs:
                    yield from ops(sg)
    return has_structured_io(model) or any(op in SEQUENCE_OPS for op in ops(model.graph))


def expand_inputs(model: onnx.ModelProto, shapes: dict[str, tuple[int, ...]],
                  values: dict[str, object]) -> tuple[dict[str, dict], dict[str, Value]]:
    """Sequence and optional graph inputs -> the tensor inputs that hold them (`x.0` .. for a sequence,
    whose length is the count of `x.k` shapes given; an optional's own name, or nothing when pinned
    `none`). Consumes the `none` pins from `values`. Returns metadata's record {input: spec}, and the
    inputs' values for lower_sequences."""
    record: dict[str, dict] = {}
    new_inputs: list[onnx.ValueInfoProto] = []
    env: dict[str, Value] = {}
    for vi in model.graph.input:
        kind = _kind(vi.type)
        if kind not in ("sequence_type", "optional_type"):
            new_inputs.append(vi)
            continue
        given = values.get(vi.name)
        if kind == "optional_type":
            if isinstance(given, str) and given.strip().lower() == "none":
                del values[vi.name]
                env[vi.name] = Opt(None)
                record[vi.name] = {"optional": None}
                continue
            inner = vi.type.optional_type.elem_type
            if _kind(inner) == "tensor_type":
                t = helper.make_value_info(vi.name, inner)
                new_inputs.append(t)
                env[vi.name] = Opt(vi.name)
                record[vi.name] = {"optional": vi.name}
                continue
            if _kind(inner) != "sequence_type":
                raise AotcError(f"input '{vi.name}' is an optional of a {_kind(inner)}, which aotc does not support")
            seq, tensors = _sequence_input(vi.name, inner, shapes)
            new_inputs += tensors
            env[vi.name] = Opt(seq)
            record[vi.name] = {"optional": {"sequence": seq.items}}
            continue
        seq, tensors = _sequence_input(vi.name, vi.type, shapes)
        new_inputs += tensors
        env[vi.name] = seq
        record[vi.name] = {"sequence": seq.items}
    if record:
        del model.graph.input[:]
        model.graph.input.extend(new_inputs)
    return record, env


def _sequence_input(name: str, tp: onnx.TypeProto, shapes: dict[str, tuple[int, ...]]
                    ) -> tuple[Seq, list[onnx.ValueInfoProto]]:
    elem = tp.sequence_type.elem_type
    if _kind(elem) != "tensor_type":
        raise AotcError(f"input '{name}' is a sequence of a {_kind(elem) or 'unknown type'}: aotc takes sequences "
                        "of tensors")
    n = 0
    while f"{name}.{n}" in shapes:
        n += 1
    if n == 0:
        raise AotcError(f"input '{name}' is a sequence, whose length aotc needs at compile time: give each "
                        f"element's shape, --input-shape {name}.0=D0,D1,... --input-shape {name}.1=...")
    items = [f"{name}.{k}" for k in range(n)]
    tensors = []
    for item in items:
        t = onnx.TypeProto()
        t.tensor_type.elem_type = elem.tensor_type.elem_type
        if elem.tensor_type.HasField("shape"):
            t.tensor_type.shape.CopyFrom(elem.tensor_type.shape)
        tensors.append(helper.make_value_info(item, t))
    return Seq(items, elem.tensor_type.elem_type), tensors


@dataclass
class _Lowering:
    opset: int
    shapes: dict[str, tuple[int, ...]]
    consts: dict[str, np.ndarray] = field(default_factory=dict)
    out: list[onnx.NodeProto] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    tag: int = 0
    model: onnx.ModelProto | None = None  # its inputs and initializers, for shape_of

    def shape_of(self, name: str) -> tuple[int, ...] | None:
        """A tensor's static shape: from the model's inference, else inferred on the nodes lowered so far
        (a tensor computed from a sequence's elements)."""
        if name not in self.shapes and self.model is not None:
            m = onnx.ModelProto()
            m.CopyFrom(self.model)
            del m.graph.node[:]
            m.graph.node.extend(self.out)
            del m.graph.output[:]
            m.graph.output.append(helper.make_value_info(name, onnx.TypeProto()))
            self.shapes.update(_static_shapes(m))
        return self.shapes.get(name)

    def named(self, original: str, suffix: str) -> str:
        """The name of a node output's value: its own in the main graph, a fresh one in an unrolled copy."""
        return self.fresh(original + suffix) if suffix else original

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}_{k}", k + 1
        self.used.add(name)
        return name

    def emit(self, op: str, inputs: list[str], base: str, n_out: int = 1, **attrs: object) -> list[str]:
        outs = [self.fresh(f"{base}_{k}" if n_out > 1 else base) for k in range(n_out)]
        self.out.append(helper.make_node(op, inputs, outs, name=self.fresh(f"{base}/{op}"), **attrs))
        return outs

    def const(self, arr: np.ndarray, base: str) -> str:
        name = self.emit("Constant", [], base, value=numpy_helper.from_array(np.asarray(arr), base))[0]
        self.consts[name] = np.asarray(arr)
        return name

    def unsqueeze(self, x: str, axis: int, base: str) -> str:
        if self.opset >= 13:
            return self.emit("Unsqueeze", [x, self.const(np.array([axis], np.int64), base + "_axes")], base)[0]
        return self.emit("Unsqueeze", [x], base, axes=[axis])[0]

    def squeeze(self, x: str, axis: int, base: str) -> str:
        if self.opset >= 13:
            return self.emit("Squeeze", [x, self.const(np.array([axis], np.int64), base + "_axes")], base)[0]
        return self.emit("Squeeze", [x], base, axes=[axis])[0]


def _attr(node: onnx.NodeProto, name: str, default: object = None) -> object:
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    for a in node.attribute:
        if a.name == "value":
            return numpy_helper.to_array(a.t)
        if a.name in ("value_int", "value_float"):
            return np.array(helper.get_attribute_value(a), np.int64 if a.name == "value_int" else np.float32)
        if a.name in ("value_ints", "value_floats"):
            return np.array(helper.get_attribute_value(a), np.int64 if a.name == "value_ints" else np.float32)
    return None


def lower_sequences(model: onnx.ModelProto, opset: int, inputs: dict[str, Value]) -> dict[str, dict]:
    """The model's sequences and optionals lowered to tensors, in place (the module's docstring);
    `inputs`: the sequence / optional inputs' values (expand_inputs). Returns metadata's record of the
    sequence / optional outputs {output: spec}."""
    g = model.graph
    env: dict[str, Value] = dict(inputs)
    shapes = _static_shapes(model)
    low = _Lowering(opset, shapes, model=model)
    low.consts = {i.name: numpy_helper.to_array(i) for i in g.initializer
                  if i.data_location != onnx.TensorProto.EXTERNAL and np.prod(i.dims) <= 64}
    low.used = {n.name for n in g.node} | {o for n in g.node for o in n.output} | {i.name for i in g.input} | \
        {i.name for i in g.initializer} | set(_all_names(g))
    _run(low, list(g.node), env, {}, "")
    record: dict[str, dict] = {}
    outputs: list[onnx.ValueInfoProto] = []
    for vi in g.output:
        v = env.get(vi.name, vi.name)
        if isinstance(v, str) and _kind(vi.type) not in ("sequence_type", "optional_type"):
            if v != vi.name:
                low.out.append(helper.make_node("Identity", [v], [vi.name], name=low.fresh(f"{vi.name}/Identity")))
            outputs.append(vi)
            continue
        spec, tensors = _output(low, vi, v)
        record[vi.name] = spec
        outputs += tensors
    if not outputs:
        raise AotcError("every output of the model is an absent optional or an empty sequence: nothing to compute")
    del g.node[:]
    g.node.extend(low.out)
    del g.output[:]
    g.output.extend(outputs)
    return record


def _output(low: _Lowering, vi: onnx.ValueInfoProto, v: Value) -> tuple[dict, list[onnx.ValueInfoProto]]:
    elem = _declared_elem(vi.type)

    def tensor(src: str, name: str) -> onnx.ValueInfoProto:
        if src != name:
            low.out.append(helper.make_node("Identity", [src], [name], name=low.fresh(f"{name}/Identity")))
            low.used.add(name)
        return helper.make_value_info(name, elem)

    def seq(s: Seq) -> tuple[dict, list[onnx.ValueInfoProto]]:
        names = [f"{vi.name}.{k}" for k in range(len(s.items))]
        return {"sequence": names}, [tensor(src, n) for src, n in zip(s.items, names, strict=True)]

    if isinstance(v, Seq):
        return seq(v)
    if isinstance(v, Opt):
        if v.value is None:
            return {"optional": None}, []
        if isinstance(v.value, Seq):
            spec, ts = seq(v.value)
            return {"optional": spec}, ts
        return {"optional": vi.name}, [tensor(v.value, vi.name)]
    if _kind(vi.type) == "optional_type":  # a tensor where the model declares an optional: present
        return {"optional": vi.name}, [tensor(v, vi.name)]
    raise AotcError(f"graph output '{vi.name}' is declared a sequence, but the graph computes a tensor")


def _declared_elem(tp: onnx.TypeProto) -> onnx.TypeProto:
    """The tensor type (its element type alone) a sequence / optional output's tensors are declared."""
    while _kind(tp) in ("sequence_type", "optional_type"):
        tp = tp.sequence_type.elem_type if _kind(tp) == "sequence_type" else tp.optional_type.elem_type
    out = onnx.TypeProto()
    out.tensor_type.elem_type = tp.tensor_type.elem_type if _kind(tp) == "tensor_type" else 0
    return out


def _static_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    """Tensor shapes onnx's inference finds (the main graph's), where static."""
    from aot.frontend.onnx.skeleton import skeleton

    try:
        inferred = onnx.shape_inference.infer_shapes(skeleton(model), check_type=False, strict_mode=False,
                                                     data_prop=True)
    except Exception:
        return {}
    out: dict[str, tuple[int, ...]] = {}
    for vi in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        tt = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and tt.HasField("shape") and \
                all(d.HasField("dim_value") for d in tt.shape.dim):
            out[vi.name] = tuple(d.dim_value for d in tt.shape.dim)
    return out


def _all_names(g: onnx.GraphProto):
    for n in g.node:
        yield n.name
        yield from n.output
        for a in n.attribute:
            for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                yield from (i.name for i in sg.input)
                yield from _all_names(sg)


def _run(low: _Lowering, nodes: list[onnx.NodeProto], env: dict[str, Value], rename: dict[str, str],
         suffix: str) -> None:
    """Lower `nodes` into low.out: env maps names to their sequence / optional values (and, within an
    unrolled body, its inputs' tensors); `rename` maps the body's own names to this copy's."""
    for node in nodes:
        _lower(low, node, env, rename, suffix)


def _val(env: dict[str, Value], rename: dict[str, str], name: str) -> Value:
    if name in env:
        return env[name]
    return rename.get(name, name)


def _tensor(node: onnx.NodeProto, env: dict[str, Value], rename: dict[str, str], k: int) -> str:
    if k >= len(node.input) or not node.input[k]:
        return ""
    v = _val(env, rename, node.input[k])
    if isinstance(v, Opt) and isinstance(v.value, str):
        return v.value
    if not isinstance(v, str):
        what = "a sequence" if isinstance(v, Seq) else \
            "an absent optional" if v.value is None else "an optional sequence"
        raise AotcError(f"input {k} ('{node.input[k]}') is {what}, which {node.op_type} does not take",
                        node=OnnxNodeName(node))
    return v


def _seq(node: onnx.NodeProto, env: dict[str, Value], rename: dict[str, str], k: int = 0) -> Seq:
    v = _val(env, rename, node.input[k])
    if isinstance(v, Opt) and isinstance(v.value, Seq):
        return v.value
    if not isinstance(v, Seq):
        raise AotcError(f"input {k} ('{node.input[k]}') is a tensor, which {node.op_type} does not take as its "
                        "input_sequence", node=OnnxNodeName(node))
    return v


def _position(low: _Lowering, node: onnx.NodeProto, name: str, n: int, insert: bool) -> int | str:
    """A position input: an int in range when constant (negative counted from the end), else the
    tensor holding it made non-negative (a run-time position)."""
    if name in low.consts:
        p = int(np.asarray(low.consts[name]).reshape(-1)[0])
        hi = n if insert else n - 1
        if not -n <= p <= hi:
            raise AotcError(f"position {p} is out of range for a sequence of {n} tensors", node=OnnxNodeName(node))
        return p + n if p < 0 else p
    base = f"{node.name}/pos"
    p64 = low.emit("Cast", [name], base + "_i64", to=onnx.TensorProto.INT64)[0]
    neg = low.emit("Less", [p64, low.const(np.array(0, np.int64), base + "_zero")], base + "_neg")[0]
    wrapped = low.emit("Add", [p64, low.const(np.array(n, np.int64), base + "_n")], base + "_wrapped")[0]
    scalar = low.emit("Where", [neg, wrapped, p64], base + "_nonneg")[0]
    return low.emit("Reshape", [scalar, low.const(np.array([], np.int64), base + "_scalar")], base)[0]


def _stacked(low: _Lowering, node: onnx.NodeProto, items: list[str]) -> str:
    """The elements stacked on a new axis 0 (a Concat: their shapes must be one)."""
    shapes = {low.shapes.get(i) for i in items}
    if len(shapes) > 1 and None not in shapes:
        raise AotcError(f"a position computed at run time picks among tensors of shapes "
                        f"{sorted(list(s) for s in shapes)}: aotc needs one shape (or a constant position)",
                        node=OnnxNodeName(node))
    rows = [low.unsqueeze(i, 0, f"{node.name}/row{k}") for k, i in enumerate(items)]
    return low.emit("Concat", rows, f"{node.name}/stacked", axis=0)[0]


def _pick(low: _Lowering, node: onnx.NodeProto, stacked: str, index: str, base: str) -> str:
    return low.emit("Gather", [stacked, index], base, axis=0)[0]


def _lower(low: _Lowering, node: onnx.NodeProto, env: dict[str, Value], rename: dict[str, str],
           suffix: str) -> None:
    op = node.op_type if node.domain in ("", "ai.onnx") else ""
    outs = list(node.output)

    def bind(k: int, v: Value) -> None:
        if k < len(outs) and outs[k]:
            env[outs[k]] = v

    def ident(k: int, src: str) -> None:
        """Output k is the tensor `src` (an Identity, so its name is one of the graph's)."""
        if k < len(outs) and outs[k]:
            name = low.named(outs[k], suffix)
            low.out.append(helper.make_node("Identity", [src], [name], name=low.fresh(f"{node.name}{suffix}")))
            env[outs[k]] = name
            if src in low.consts:
                low.consts[name] = low.consts[src]

    if op == "SequenceEmpty":
        bind(0, Seq([], int(_attr(node, "dtype", onnx.TensorProto.FLOAT))))
    elif op == "SequenceConstruct":
        bind(0, Seq([_tensor(node, env, rename, k) for k in range(len(node.input))]))
    elif op == "SequenceLength":
        ident(0, low.const(np.array(len(_seq(node, env, rename).items), np.int64), f"{node.name}/length"))
    elif op == "SequenceInsert":
        s, t = _seq(node, env, rename), _tensor(node, env, rename, 1)
        n = len(s.items)
        pos = _tensor(node, env, rename, 2)
        p = n if not pos else _position(low, node, pos, n, True)
        if isinstance(p, int):
            bind(0, Seq(s.items[:p] + [t] + s.items[p:], s.elem_type))
        else:
            stacked = _stacked(low, node, [*s.items, t])
            items = []
            for k in range(n + 1):  # element k: s[k] before the position, t at it, s[k-1] after
                kk = low.const(np.array(k, np.int64), f"{node.name}/k{k}")
                before = low.emit("Less", [kk, p], f"{node.name}/before{k}")[0]
                at = low.emit("Equal", [kk, p], f"{node.name}/at{k}")[0]
                idx = low.emit("Where", [at, low.const(np.array(n, np.int64), f"{node.name}/t{k}"),
                                         low.const(np.array(max(k - 1, 0), np.int64), f"{node.name}/prev{k}")],
                               f"{node.name}/after{k}")[0]
                idx = low.emit("Where", [before, kk, idx], f"{node.name}/idx{k}")[0]
                items.append(_pick(low, node, stacked, idx, f"{node.name}/item{k}"))
            bind(0, Seq(items, s.elem_type))
    elif op == "SequenceErase":
        s = _seq(node, env, rename)
        n = len(s.items)
        if n == 0:
            raise AotcError("erases from an empty sequence", node=OnnxNodeName(node))
        pos = _tensor(node, env, rename, 1)
        p = n - 1 if not pos else _position(low, node, pos, n, False)
        if isinstance(p, int):
            bind(0, Seq(s.items[:p] + s.items[p + 1:], s.elem_type))
        else:
            stacked = _stacked(low, node, s.items)
            items = []
            for k in range(n - 1):  # element k: s[k] before the position, s[k+1] from it on
                kk = low.const(np.array(k, np.int64), f"{node.name}/k{k}")
                before = low.emit("Less", [kk, p], f"{node.name}/before{k}")[0]
                idx = low.emit("Where", [before, kk, low.const(np.array(k + 1, np.int64), f"{node.name}/next{k}")],
                               f"{node.name}/idx{k}")[0]
                items.append(_pick(low, node, stacked, idx, f"{node.name}/item{k}"))
            bind(0, Seq(items, s.elem_type))
    elif op == "SequenceAt":
        s = _seq(node, env, rename)
        n = len(s.items)
        if n == 0:
            raise AotcError("reads an element of an empty sequence", node=OnnxNodeName(node))
        p = _position(low, node, _tensor(node, env, rename, 1), n, False)
        if isinstance(p, int):
            ident(0, s.items[p])
        else:
            ident(0, _pick(low, node, _stacked(low, node, s.items), p, f"{node.name}/item"))
    elif op == "ConcatFromSequence":
        s = _seq(node, env, rename)
        if not s.items:
            raise AotcError("concatenates an empty sequence (its output has no shape)", node=OnnxNodeName(node))
        axis, new_axis = int(_attr(node, "axis", 0)), int(_attr(node, "new_axis", 0))
        items = s.items
        if new_axis:
            items = [low.unsqueeze(i, axis, f"{node.name}/row{k}") for k, i in enumerate(items)]
        ident(0, low.emit("Concat", items, f"{node.name}/concat", axis=axis)[0])
    elif op == "SplitToSequence":
        _split_to_sequence(low, node, env, rename, bind)
    elif op == "Optional":
        if node.input and node.input[0]:
            v = _val(env, rename, node.input[0])
            if isinstance(v, Opt):
                raise AotcError("an optional of an optional is not supported", node=OnnxNodeName(node))
            bind(0, Opt(v))
        else:
            bind(0, Opt(None))
    elif op == "OptionalHasElement":
        v = _val(env, rename, node.input[0]) if node.input and node.input[0] else Opt(None)
        present = not (isinstance(v, Opt) and v.value is None)
        ident(0, low.const(np.array(present), f"{node.name}/present"))
    elif op == "OptionalGetElement":
        v = _val(env, rename, node.input[0])
        if isinstance(v, Opt):
            if v.value is None:
                raise AotcError(f"input '{node.input[0]}' is an absent optional (known at compile time)",
                                node=OnnxNodeName(node))
            v = v.value
        if isinstance(v, Seq):
            bind(0, v)
        else:
            ident(0, v)
    elif op == "Identity" and node.input and not isinstance(_val(env, rename, node.input[0]), str):
        bind(0, _val(env, rename, node.input[0]))
    elif op == "SequenceMap":
        _sequence_map(low, node, env, rename, suffix)
    elif op == "Loop" and _loop_touches_sequences(node, env, rename):
        _unroll_loop(low, node, env, rename, suffix)
    else:
        _copy(low, node, env, rename, suffix)


def _copy(low: _Lowering, node: onnx.NodeProto, env: dict[str, Value], rename: dict[str, str], suffix: str) -> None:
    """A node of no sequence: copied with its inputs' names (and, within an unrolled body, its own
    names and its subgraphs' made this copy's)."""
    new = onnx.NodeProto()
    new.CopyFrom(node)
    del new.input[:]
    new.input.extend([_tensor(node, env, rename, k) if i else "" for k, i in enumerate(node.input)])
    if suffix:
        new.name = low.fresh(node.name + suffix)
        del new.output[:]
        for o in node.output:
            if o:
                name = low.fresh(o + suffix)
                rename[o] = name
                new.output.append(name)
            else:
                new.output.append("")
    for a in new.attribute:
        for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
            _rename_subgraph(sg, env, rename, suffix, low)
    if node.op_type == "Constant" and not node.input:
        v = _constant_value(node)
        if v is not None and v.size <= 64:
            low.consts[new.output[0]] = v
    if node.op_type == "Identity" and new.input and new.input[0] in low.consts:
        low.consts[new.output[0]] = low.consts[new.input[0]]
    low.out.append(new)


def _rename_subgraph(g: onnx.GraphProto, env: dict[str, Value], rename: dict[str, str], suffix: str,
                     low: _Lowering) -> None:
    """A subgraph of a copied node: what it reads of the outer scope under this copy's names, and (in
    an unrolled body) its own names made this copy's."""
    own: dict[str, str] = {}
    if suffix:
        for i in g.input:
            own[i.name] = low.fresh(i.name + suffix)
        for n in g.node:
            n.name = low.fresh(n.name + suffix) if n.name else n.name
            for o in n.output:
                if o:
                    own[o] = low.fresh(o + suffix)
        for i in g.initializer:
            own[i.name] = low.fresh(i.name + suffix)
    for i in [*g.input, *g.output, *g.value_info]:
        i.name = own.get(i.name, _outer(env, rename, i.name))
    for i in g.initializer:
        i.name = own.get(i.name, i.name)
    for n in g.node:
        for k, x in enumerate(n.input):
            if x:
                n.input[k] = own.get(x, _outer(env, rename, x))
        for k, x in enumerate(n.output):
            if x:
                n.output[k] = own.get(x, x)
        for a in n.attribute:
            for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                _rename_subgraph(sg, env, {**rename, **own}, "", low)


def _outer(env: dict[str, Value], rename: dict[str, str], name: str) -> str:
    v = _val(env, rename, name)
    if isinstance(v, Opt) and isinstance(v.value, str):
        return v.value
    if not isinstance(v, str):
        raise AotcError(f"a subgraph reads the sequence or optional '{name}', which aotc has only as separate "
                        "tensors")
    return v


def _split_to_sequence(low: _Lowering, node: onnx.NodeProto, env: dict[str, Value], rename: dict[str, str],
                       bind) -> None:
    x = _tensor(node, env, rename, 0)
    shape = low.shape_of(x)
    if shape is None:
        raise AotcError(f"the shape of '{node.input[0]}' is not known at compile time", node=OnnxNodeName(node))
    axis = int(_attr(node, "axis", 0))
    axis = axis + len(shape) if axis < 0 else axis
    length = shape[axis]
    split = _tensor(node, env, rename, 1)
    keepdims = int(_attr(node, "keepdims", 1))
    if split and split not in low.consts:
        raise AotcError(f"split (input 1, '{node.input[1]}') is computed at run time: the sequence's length and "
                        "its elements' shapes would be known only then", node=OnnxNodeName(node))
    if not split:
        sizes = [1] * length
    else:
        sv = np.asarray(low.consts[split]).astype(np.int64)
        if sv.ndim == 0:
            c = int(sv)
            if c <= 0:
                raise AotcError(f"split {c} is not a positive size", node=OnnxNodeName(node))
            sizes = [c] * (length // c) + ([length % c] if length % c else [])
        else:
            sizes = [int(v) for v in sv.reshape(-1)]
            if sum(sizes) != length or any(v < 0 for v in sizes):
                raise AotcError(f"split {sizes} does not add up to the axis' {length}", node=OnnxNodeName(node))
        keepdims = 1
    if len(sizes) > MAX_UNROLL:
        raise AotcError(f"splits into {len(sizes)} tensors (aotc unrolls at most {MAX_UNROLL})",
                        node=OnnxNodeName(node))
    if 0 in sizes:
        raise AotcError("a split of size 0 makes an empty tensor, which aotc does not support", node=OnnxNodeName(node))
    base = f"{node.name}/part"
    if len(sizes) == 1:
        parts = [low.emit("Identity", [x], base)[0]]
    elif low.opset >= 13:
        parts = low.emit("Split", [x, low.const(np.array(sizes, np.int64), base + "_sizes")], base, len(sizes),
                         axis=axis)
    else:
        parts = low.emit("Split", [x], base, len(sizes), axis=axis, split=sizes)
    if not keepdims:
        parts = [low.squeeze(p, axis, f"{p}_squeezed") for p in parts]
    for p in parts:
        low.shapes[p] = tuple(1 if (k == axis and keepdims) else d for k, d in enumerate(shape)
                              if keepdims or k != axis)
    for p, c in zip(parts, sizes, strict=True):
        if keepdims:
            low.shapes[p] = tuple(c if k == axis else d for k, d in enumerate(shape))
    bind(0, Seq(parts))


def _inline_body(low: _Lowering, node: onnx.NodeProto, body: onnx.GraphProto, bound: list[Value],
                 env: dict[str, Value], rename: dict[str, str]) -> list[Value]:
    """One copy of `body` with its inputs bound to `bound`: its outputs' values."""
    low.tag += 1
    suffix = f"__{low.tag}"
    inner_env = dict(env)
    inner_rename = dict(rename)
    for vi, v in zip(body.input, bound, strict=True):
        if isinstance(v, str):
            inner_rename[vi.name] = v
            inner_env.pop(vi.name, None)
        else:
            inner_env[vi.name] = v
    for init in body.initializer:
        name = low.fresh(init.name + suffix)
        t = onnx.TensorProto()
        t.CopyFrom(init)
        t.name = name
        low.out.append(helper.make_node("Constant", [], [name], name=low.fresh(name + "/Constant"), value=t))
        inner_rename[init.name] = name
    body_nodes = [onnx.NodeProto() for _ in body.node]
    for copy, n in zip(body_nodes, body.node, strict=True):
        copy.CopyFrom(n)
    _run(low, body_nodes, inner_env, inner_rename, suffix)
    return [_val(inner_env, inner_rename, o.name) for o in body.output]


def _sequence_map(low: _Lowering, node: onnx.NodeProto, env: dict[str, Value], rename: dict[str, str],
                  suffix: str) -> None:
    body = _attr(node, "body")
    first = _seq(node, env, rename, 0)
    n = len(first.items)
    if n > MAX_UNROLL:
        raise AotcError(f"maps over {n} tensors (aotc unrolls at most {MAX_UNROLL})", node=OnnxNodeName(node))
    args: list[Value] = [_val(env, rename, i) for i in node.input]
    for k, a in enumerate(args):
        if isinstance(a, Seq) and len(a.items) != n:
            raise AotcError(f"input {k} has {len(a.items)} tensors, input 0 has {n}", node=OnnxNodeName(node))
        if isinstance(a, Opt):
            raise AotcError(f"input {k} is an optional, which SequenceMap does not take", node=OnnxNodeName(node))
    results: list[list[str]] = [[] for _ in node.output]
    for j in range(n):
        bound = [a.items[j] if isinstance(a, Seq) else a for a in args]
        outs = _inline_body(low, node, body, bound, env, rename)
        for k, o in enumerate(outs):
            if not isinstance(o, str):
                raise AotcError("its body returns a sequence or an optional, not a tensor", node=OnnxNodeName(node))
            results[k].append(o)
    for k, o in enumerate(node.output):
        if o:
            env[o] = Seq(results[k])


def _loop_touches_sequences(node: onnx.NodeProto, env: dict[str, Value], rename: dict[str, str]) -> bool:
    body = _attr(node, "body")
    reads = any(i and not isinstance(_val(env, rename, i), str) for i in node.input)
    inner = any(vi.type.HasField("sequence_type") or vi.type.HasField("optional_type")
                for vi in [*body.input, *body.output])
    return reads or inner or any(n.op_type in SEQUENCE_OPS for n in body.node)


def _unroll_loop(low: _Lowering, node: onnx.NodeProto, env: dict[str, Value], rename: dict[str, str],
                 suffix: str) -> None:
    """A Loop carrying a sequence or optional: unrolled, which needs its trip count at compile time
    and a condition that stays true."""
    body = _attr(node, "body")
    m_name, c_name = _tensor(node, env, rename, 0), _tensor(node, env, rename, 1)
    if not m_name or m_name not in low.consts:
        raise AotcError("a Loop over sequences needs its trip count at compile time (the sequences' lengths "
                        "would be known only at run time)", node=OnnxNodeName(node))
    if c_name and (c_name not in low.consts or not bool(np.asarray(low.consts[c_name]).reshape(-1)[0])):
        raise AotcError("a Loop over sequences needs its condition known true at compile time", node=OnnxNodeName(node))
    trips = int(np.asarray(low.consts[m_name]).reshape(-1)[0])
    if trips > MAX_UNROLL:
        raise AotcError(f"a Loop over sequences of {trips} steps (aotc unrolls at most {MAX_UNROLL})",
                        node=OnnxNodeName(node))
    carried: list[Value] = [_val(env, rename, i) for i in node.input[2:]]
    n_carried = len(carried)
    scans: list[list[str]] = [[] for _ in range(len(body.output) - 1 - n_carried)]
    true = low.const(np.array(True), f"{node.name}/cond")
    for step in range(trips):
        it = low.const(np.array(step, np.int64), f"{node.name}/iter{step}")
        outs = _inline_body(low, node, body, [it, true, *carried], env, rename)
        cond = outs[0]
        if not (isinstance(cond, str) and cond in low.consts and bool(np.asarray(low.consts[cond]).reshape(-1)[0])):
            raise AotcError("a Loop over sequences needs a condition that stays true at compile time (its body "
                            "computes it)", node=OnnxNodeName(node))
        carried = outs[1:1 + n_carried]
        for k, o in enumerate(outs[1 + n_carried:]):
            if not isinstance(o, str):
                raise AotcError("a scan output that is a sequence or an optional is not supported",
                                node=OnnxNodeName(node))
            scans[k].append(o)
    for k, o in enumerate(node.output):
        if not o:
            continue
        if k < n_carried:
            v = carried[k]
            if isinstance(v, str):
                name = low.named(o, suffix)
                low.out.append(helper.make_node("Identity", [v], [name], name=low.fresh(f"{node.name}{suffix}/{k}")))
                env[o] = name
            else:
                env[o] = v
        else:
            items = scans[k - n_carried]
            if not items:
                raise AotcError("a Loop of no step has empty scan outputs, which aotc does not support",
                                node=OnnxNodeName(node))
            rows = [low.unsqueeze(i, 0, f"{node.name}/scan{k}_{j}") for j, i in enumerate(items)]
            name = low.named(o, suffix)
            low.out.append(helper.make_node("Concat", rows, [name], name=low.fresh(f"{node.name}/scan{k}"), axis=0))
            env[o] = name
