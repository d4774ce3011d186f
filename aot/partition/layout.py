"""The layout a vendor asks for at its functions' boundaries (Vendor.boundary_layout), e.g. channels last.

The DLTensor call hands a function its tensors as the model has them (NCHW for an ONNX conv net). A vendor
whose device keeps NHWC would transpose on every input and output inside its code. Instead, aotc moves the
change of layout to the host side of the call:

    host:      x --Transpose(p)--> x'  --Call-->  y' --Transpose(p^-1)--> y
    function:  x' --Transpose(p^-1)--> x  ... the vendor's nodes ...  y --Transpose(p)--> y'

Inside, the function still computes the model's tensors (its graph verifies and means what it meant), and
begins and ends with transposes the vendor folds into its own ops (a conv that reads NHWC, an elementwise op
that does not care). On the host, the transposes move down past ops that do not care about layout (PushTransposeDown:
elementwise ops, a Concat) and those between two such functions cancel (SimplifyLayout); a transpose of a
constant folds into it; those left run as host Transpose kernels.

A blocked layout (oneDNN's nChw8c, TVM's NCHW8c: [N, C/8, H, W, 8]) is no permutation of the axes: it is a
Reshape that splits C into [C/8, 8] (a view: no bytes move) and then a Transpose of the split shape
(`Layout(split, perm)`). The host side is Reshape -> Transpose, the function's head Transpose -> Reshape,
and between two calls the views merge and the transposes cancel as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aot.errors import AotcError, in_vendor
from aot.ir import Function, Graph, Node, Tensor
from aot.passes.base import fresh_node_name, fresh_tensor_name, verify_graph
from aot.passes.push_transpose import PushTransposeDown
from aot.passes.simplify_layout import SimplifyLayout

if TYPE_CHECKING:
    from aot.vendor.base import Vendor



@dataclass(frozen=True)
class Layout:
    """A tensor's layout at a boundary: reshaped to `split` (the same elements in the same order: a view;
    None for no reshape), then transposed by `perm` (over the axes of `split`)."""

    split: tuple[int, ...] | None  # the shape the tensor is first viewed as (its elements in order), or None
    perm: tuple[int, ...]  # then the permutation of those axes the function sees, as ONNX Transpose's perm


# (function, boundary tensor) -> the layout the vendor wants that tensor in (a permutation of its axes, or a
# Layout), or None for as it is
LayoutRule = Callable[[Function, Tensor], "Sequence[int] | Layout | None"]


def channels_last(fn: Function, tensor: Tensor) -> tuple[int, ...] | None:
    """NCHW (and NCW, NCDHW) as channels last: NHWC. Other ranks as they are."""
    rank = len(tensor.shape)
    return (0, *range(2, rank), 1) if 3 <= rank <= 5 else None


def channel_blocked(block: int) -> LayoutRule:
    """NCHW (and NCW, NCDHW) with the channels in blocks of `block`, the block innermost: [N, C/b, H, W, b]
    (oneDNN's nChw<b>c). A tensor of another rank, or whose channels are not a multiple of the block, as it is."""
    def rule(fn: Function, tensor: Tensor) -> Layout | None:
        shape = tuple(tensor.shape)
        if not 3 <= len(shape) <= 5 or shape[1] % block:
            return None
        split = (shape[0], shape[1] // block, block, *shape[2:])
        return Layout(split, (0, 1, *range(3, len(split)), 2))
    return rule


NAMED_LAYOUTS: dict[str, LayoutRule] = {"NHWC": channels_last}
_BLOCKED = re.compile(r"NC(?:W|HW|DHW)(\d+)c")  # NCHW8c: one name for every rank, as NHWC is


def layout_rule(vendor: Vendor) -> LayoutRule | None:
    """The vendor's boundary_layout as a rule: a name of NAMED_LAYOUTS or NCHW<b>c, a rule of its own, or None."""
    layout = vendor.boundary_layout
    if layout is None or callable(layout):
        return layout
    if layout in NAMED_LAYOUTS:
        return NAMED_LAYOUTS[layout]
    m = _BLOCKED.fullmatch(layout)
    if m and int(m.group(1)) > 1:
        return channel_blocked(int(m.group(1)))
    raise AotcError(f"vendor {vendor.name}: boundary_layout '{layout}' is none of "
                    f"{', '.join(NAMED_LAYOUTS)}, NCHW<b>c (or give a function)")


def apply_boundary_layouts(graph: Graph, vendors: Sequence[Vendor]) -> Graph:
    """`graph` (partitioned) with each function of a vendor that has a boundary_layout taking its inputs and
    giving its outputs in that layout, the transposes on the host side; then the host's inverse pairs cancel."""
    rules = {v.name: rule for v in vendors if (rule := layout_rule(v)) is not None}
    if not rules or not any(fn.compiler in rules for fn in graph.functions.values()):
        return graph
    g = graph.copy()
    out: list[Node] = []
    for n in g.nodes:
        fn = g.functions.get(n.attrs.get("function", "")) if n.op == "Call" else None
        if fn is None or fn.compiler not in rules:
            out.append(n)
            continue
        fg = fn.graph.copy()
        before, after, head, tail = [], [], [], []
        for k, t in enumerate(list(n.inputs)):
            layout = _layout(rules[fn.compiler], fn, fg.tensors[t])
            if layout is None:
                continue
            moved = _moved(g, t, layout, f"{t}__{fn.compiler}")
            before += _into(g, t, moved, layout, f"{n.name}_in{k}_layout", fresh=True)
            fg.tensors[moved] = g.tensors[moved]
            fg.inputs[fg.inputs.index(t)] = moved
            head += _out_of(fg, moved, t, layout, f"{fn.global_symbol}_in{k}_layout")
            n.inputs[k] = moved
        for k, t in enumerate(list(n.outputs)):
            layout = _layout(rules[fn.compiler], fn, fg.tensors[t])
            if layout is None:
                continue
            moved = _moved(g, t, layout, f"{t}__{fn.compiler}")
            fg.tensors[moved] = g.tensors[moved]
            tail += _into(fg, t, moved, layout, f"{fn.global_symbol}_out{k}_layout")
            fg.outputs[fg.outputs.index(t)] = moved
            after += _out_of(g, moved, t, layout, f"{n.name}_out{k}_layout", fresh=True)
            n.outputs[k] = moved
        fg.nodes = [*head, *fg.nodes, *tail]
        g.functions[fn.global_symbol] = Function(fn.global_symbol, fn.compiler, fg, fn.composite)
        out += [*before, n, *after]
    g.nodes = out
    return _rebind_calls(_simplified(g))


def _simplified(g: Graph) -> Graph:
    """The transposes moved down past host ops that do not care about layout (PushTransposeDown: a Concat
    of two functions' outputs, an Add, a Relu) or run channels last (a float MaxPool), then SimplifyLayout
    until nothing changes: a blocked pair cancels in steps (the views merge, then the transposes meet)."""
    g = PushTransposeDown(pools=True).run(g)
    while True:
        before = [(n.op, n.inputs) for n in g.nodes]
        g = SimplifyLayout().run(g)
        if [(n.op, n.inputs) for n in g.nodes] == before:
            return g


def _rebind_calls(g: Graph) -> Graph:
    """Where an inverse pair cancelled, a call reads the other function's tensor: the callee's graph renamed to
    match (the same shape and dtype), so that every call and its function agree again."""
    for n in g.nodes:
        if n.op != "Call":
            continue
        fn = g.functions[n.attrs["function"]]
        renames = {theirs: ours for ours, theirs in [*zip(n.inputs, fn.graph.inputs, strict=True),
                                                     *zip(n.outputs, fn.graph.outputs, strict=True)] if ours != theirs}
        if not renames:
            continue
        fg = fn.graph.copy()
        for m in fg.nodes:
            m.inputs = [renames.get(i, i) for i in m.inputs]
            m.outputs = [renames.get(o, o) for o in m.outputs]
        for old, new in renames.items():
            t = fg.tensors.pop(old)
            fg.tensors[new] = Tensor(new, t.shape, t.dtype, t.data)
        fg.inputs = [renames.get(t, t) for t in fg.inputs]
        fg.outputs = [renames.get(t, t) for t in fg.outputs]
        g.functions[fn.global_symbol] = Function(fn.global_symbol, fn.compiler, fg, fn.composite)
    verify_graph(g)
    return g


def _layout(rule: LayoutRule, fn: Function, tensor: Tensor) -> Layout | None:
    """The rule's answer for one boundary tensor, checked; None where it leaves the tensor as it is."""
    with in_vendor(fn.compiler, f"boundary_layout of {fn.global_symbol}"):
        got = rule(fn, tensor)
        if got is None:
            return None
        layout = got if isinstance(got, Layout) else Layout(None, tuple(int(p) for p in got))
        split = None if layout.split is None else tuple(int(d) for d in layout.split)
        perm = tuple(int(p) for p in layout.perm)
        axes = tensor.shape if split is None else split
        if split is not None and (any(d < 1 for d in split) or _count(split) != _count(tensor.shape)):
            raise AotcError(f"the split {list(split)} of '{tensor.name}' {list(tensor.shape)} does not keep its "
                            f"{_count(tensor.shape)} elements")
        if sorted(perm) != list(range(len(axes))):
            raise AotcError(f"{list(perm)} is no permutation of the {len(axes)} axes of '{tensor.name}'"
                            + ("" if split is None else f" split as {list(split)}"))
    if split == tuple(tensor.shape):
        split = None
    return None if split is None and perm == tuple(sorted(perm)) else Layout(split, perm)


def _count(shape: Sequence[int]) -> int:
    total = 1
    for d in shape:
        total *= int(d)
    return total


def _into(g: Graph, t: str, moved: str, layout: Layout, name: str, fresh: bool = False) -> list[Node]:
    """Nodes of `g` from the model's tensor `t` to `moved` in the layout: [Reshape to the split,] Transpose."""
    def node_name(base: str) -> str:
        return fresh_node_name(g, base) if fresh else base
    src, nodes = t, []
    if layout.split is not None:
        src = fresh_tensor_name(g, f"{t}__split")
        g.tensors[src] = Tensor(src, layout.split, g.tensors[t].dtype)
        nodes.append(Node("Reshape", node_name(f"{name}_split"), [t], [src], {}))
    return [*nodes, Node("Transpose", node_name(name), [src], [moved], {"perm": list(layout.perm)})]


def _out_of(g: Graph, moved: str, t: str, layout: Layout, name: str, fresh: bool = False) -> list[Node]:
    """Nodes of `g` from `moved` in the layout back to the model's tensor `t`: Transpose[, Reshape]."""
    def node_name(base: str) -> str:
        return fresh_node_name(g, base) if fresh else base
    if layout.split is None:
        return [Node("Transpose", node_name(name), [moved], [t], {"perm": _inverse(layout.perm)})]
    mid = fresh_tensor_name(g, f"{t}__split")
    g.tensors[mid] = Tensor(mid, layout.split, g.tensors[moved].dtype)
    return [Node("Transpose", node_name(name), [moved], [mid], {"perm": _inverse(layout.perm)}),
            Node("Reshape", node_name(f"{name}_merge"), [mid], [t], {})]


def _inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for k, p in enumerate(perm):
        inv[p] = k
    return inv


def _moved(g: Graph, t: str, layout: Layout, base: str) -> str:
    name = fresh_tensor_name(g, base)
    src = g.tensors[t]
    axes = src.shape if layout.split is None else layout.split
    g.tensors[name] = Tensor(name, tuple(axes[p] for p in layout.perm), src.dtype)
    return name
