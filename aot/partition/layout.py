"""The layout a vendor asks for at its functions' boundaries (Vendor.boundary_layout), e.g. channels last.

The DLTensor call hands a function its tensors as the model has them (NCHW for an ONNX conv net). A vendor
whose device keeps NHWC would transpose on every input and output inside its code. Instead, aotc moves the
change of layout to the host side of the call:

    host:      x --Transpose(p)--> x'  --Call-->  y' --Transpose(p^-1)--> y
    function:  x' --Transpose(p^-1)--> x  ... the vendor's nodes ...  y --Transpose(p)--> y'

Inside, the function still computes the model's tensors (its graph verifies and means what it meant), and
begins and ends with transposes the vendor folds into its own ops (a conv that reads NHWC, an elementwise op
that does not care). On the host, the transposes between two such functions cancel (SimplifyLayout), and a
transpose of a constant folds into it; those left run as host Transpose kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from aot.errors import AotcError, in_vendor
from aot.ir import Function, Graph, Node, Tensor
from aot.passes.base import fresh_node_name, fresh_tensor_name, verify_graph
from aot.passes.simplify_layout import SimplifyLayout

if TYPE_CHECKING:
    from aot.vendor.base import Vendor

# (function, boundary tensor) -> the permutation the vendor wants that tensor in, or None for as it is
LayoutRule = Callable[[Function, Tensor], "Sequence[int] | None"]


def channels_last(fn: Function, tensor: Tensor) -> tuple[int, ...] | None:
    """NCHW (and NCW, NCDHW) as channels last: NHWC. Other ranks as they are."""
    rank = len(tensor.shape)
    return (0, *range(2, rank), 1) if 3 <= rank <= 5 else None


NAMED_LAYOUTS: dict[str, LayoutRule] = {"NHWC": channels_last}


def layout_rule(vendor: Vendor) -> LayoutRule | None:
    """The vendor's boundary_layout as a rule: a name of NAMED_LAYOUTS, a rule of its own, or None."""
    layout = vendor.boundary_layout
    if layout is None or callable(layout):
        return layout
    if layout not in NAMED_LAYOUTS:
        raise AotcError(f"vendor {vendor.name}: boundary_layout '{layout}' is none of "
                        f"{', '.join(NAMED_LAYOUTS)} (or give a function)")
    return NAMED_LAYOUTS[layout]


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
            perm = _perm(rules[fn.compiler], fn, fg.tensors[t])
            if perm is None:
                continue
            moved = _moved(g, t, perm, f"{t}__{fn.compiler}")
            before.append(Node("Transpose", fresh_node_name(g, f"{n.name}_in{k}_layout"), [t], [moved],
                               {"perm": list(perm)}))
            fg.tensors[moved] = g.tensors[moved]
            fg.inputs[fg.inputs.index(t)] = moved
            head.append(Node("Transpose", f"{fn.global_symbol}_in{k}_layout", [moved], [t],
                             {"perm": _inverse(perm)}))
            n.inputs[k] = moved
        for k, t in enumerate(list(n.outputs)):
            perm = _perm(rules[fn.compiler], fn, fg.tensors[t])
            if perm is None:
                continue
            moved = _moved(g, t, perm, f"{t}__{fn.compiler}")
            fg.tensors[moved] = g.tensors[moved]
            tail.append(Node("Transpose", f"{fn.global_symbol}_out{k}_layout", [t], [moved], {"perm": list(perm)}))
            fg.outputs[fg.outputs.index(t)] = moved
            after.append(Node("Transpose", fresh_node_name(g, f"{n.name}_out{k}_layout"), [moved], [t],
                              {"perm": _inverse(perm)}))
            n.outputs[k] = moved
        fg.nodes = [*head, *fg.nodes, *tail]
        g.functions[fn.global_symbol] = Function(fn.global_symbol, fn.compiler, fg, fn.composite)
        out += [*before, n, *after]
    g.nodes = out
    return _rebind_calls(SimplifyLayout().run(g))


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


def _perm(rule: LayoutRule, fn: Function, tensor: Tensor) -> list[int] | None:
    with in_vendor(fn.compiler, f"boundary_layout of {fn.global_symbol}"):
        perm = rule(fn, tensor)
        if perm is None:
            return None
        perm = [int(p) for p in perm]
        if sorted(perm) != list(range(len(tensor.shape))):
            raise AotcError(f"{perm} is no permutation of the {len(tensor.shape)} axes of '{tensor.name}'")
    return None if perm == sorted(perm) else perm


def _inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for k, p in enumerate(perm):
        inv[p] = k
    return inv


def _moved(g: Graph, t: str, perm: Sequence[int], base: str) -> str:
    name = fresh_tensor_name(g, base)
    src = g.tensors[t]
    g.tensors[name] = Tensor(name, tuple(src.shape[p] for p in perm), src.dtype)
    return name
