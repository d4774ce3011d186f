"""The pass protocol (after xDSL's ModulePass): a name and a pure run(graph) -> graph.

`run_passes` is the runner: each pass, then the verifier on what it returned, so a pass
that breaks an invariant is named at once rather than surfacing as odd C later. The
value a pass maps may be a Graph (verified by `verify_graph`) or a typed value that
carries one (partitioning's state, with its own verify)."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from typing import ClassVar, Protocol, TypeVar

from aot.errors import AotcError
from aot.ir import Graph, Node


class Pass:
    """A graph rewrite: subclass it, name it, and write `run`. aotc's passes, a vendor's graph_passes and the
    passes its transform runs are all Passes, run by run_passes (verified after each)."""

    name: ClassVar[str] = "pass"  # how `aotc partition --show` and errors after it name the pass

    def run(self, graph: Graph) -> Graph:  # pragma: no cover - interface
        """The graph rewritten: a new Graph (`graph.copy()` first) or `graph` itself when nothing applies;
        never changes `graph` in place. What it returns must verify (verify_graph)."""
        raise NotImplementedError


def fresh_tensor_name(graph: Graph, base: str) -> str:
    """`base`, or `base1`, `base2`, ...: the first that names no tensor of `graph` (for a tensor a pass adds)."""
    return _first_unused(base, graph.tensors)


def fresh_node_name(graph: Graph, base: str) -> str:
    """`base`, or `base1`, `base2`, ...: the first that names no node of `graph` (for a node a pass adds)."""
    return _first_unused(base, {n.name for n in graph.nodes})


def _first_unused(base: str, taken: Container[str]) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}{k}", k + 1
    return name


V = TypeVar("V")


class Step(Protocol[V]):
    """Anything with a name that maps a value to a value of the same kind (a Pass is a Step[Graph])."""

    @property
    def name(self) -> str: ...

    def run(self, value: V, /) -> V: ...


def verify_graph(graph: Graph) -> None:
    """Graph.verify(), and what it does not look at: every Composite body and Function graph
    verifies; each Call names a Function of the graph, of its compiler, with its inputs and outputs
    (same names, shapes, dtypes); every Function is called exactly once."""
    graph.verify()
    called: set[str] = set()
    for n in graph.nodes:
        if n.op == "Composite":
            body = n.attrs.get("body")
            if not isinstance(body, Graph) or not n.attrs.get("compiler"):
                raise AotcError("composite node without a body graph or a compiler", node=n)
            verify_graph(body)
            if list(body.outputs) != list(n.outputs):
                raise AotcError(f"composite body computes {body.outputs}, the node says {n.outputs}", node=n)
            missing = [i for i in body.inputs if i not in n.inputs]
            if missing:
                raise AotcError(f"composite body reads {', '.join(missing)}, which the node does not take", node=n)
        elif n.op == "Call":
            _verify_call(graph, n, called)
    uncalled = [s for s in graph.functions if s not in called]
    if uncalled:
        raise AotcError(f"function(s) {', '.join(uncalled)} in the graph are never called")


def _verify_call(graph: Graph, n: Node, called: set[str]) -> None:
    symbol = n.attrs.get("function")
    fn = graph.functions.get(symbol)
    if fn is None:
        raise AotcError(f"calls function '{symbol}', which the graph does not hold", node=n)
    if symbol in called:
        raise AotcError(f"function '{symbol}' is called twice", node=n)
    called.add(symbol)
    if fn.global_symbol != symbol or fn.compiler != n.attrs.get("compiler"):
        raise AotcError(f"calls '{symbol}' for {n.attrs.get('compiler')}, but the function is "
                        f"'{fn.global_symbol}' for {fn.compiler}", node=n)
    for kind, mine, theirs in (("inputs", n.inputs, fn.graph.inputs), ("outputs", n.outputs, fn.graph.outputs)):
        if list(mine) != list(theirs):
            raise AotcError(f"{kind} {list(mine)} differ from function '{symbol}''s {list(theirs)}", node=n)
        for t in mine:
            a, b = graph.tensors[t], fn.graph.tensors[t]
            if a.shape != b.shape or a.dtype != b.dtype:
                raise AotcError(f"tensor '{t}' is {a.dtype}{list(a.shape)} here but {b.dtype}{list(b.shape)} "
                                f"in function '{symbol}'", node=n)
    verify_graph(fn.graph)


def _fingerprint(graph: Graph) -> list[tuple]:
    """What a pass may change: the nodes (op, name, tensors, scalar attributes) and the tensors."""
    scalar = (int, float, str, bool, list, tuple)
    return [*((n.op, n.name, tuple(n.inputs), tuple(n.outputs),
               repr(sorted((k, v) for k, v in n.attrs.items() if isinstance(v, scalar)))) for n in graph.nodes),
            tuple(sorted(graph.tensors)), tuple(graph.inputs), tuple(graph.outputs)]


def run_passes_tracked(graph: Graph, passes: Iterable[Pass]) -> tuple[Graph, list[str]]:
    """run_passes, also saying which passes changed the graph (for `aotc partition --show`: a vendor's
    transform reports what fired on each of its functions)."""
    fired: list[str] = []
    for p in passes:
        before = _fingerprint(graph)
        graph = run_passes(graph, [p])
        if _fingerprint(graph) != before:
            fired.append(p.name)
    return graph, fired


def run_passes(value: V, passes: Iterable[Step[V]], verify: Callable[[V], None] = verify_graph) -> V:  # type: ignore[assignment]
    """Run each pass in order, verifying what it returns; a broken result names the pass."""
    for p in passes:
        value = p.run(value)
        try:
            verify(value)
        except AotcError as e:
            raise AotcError(f"after pass '{p.name}': {e.message}", node=e.node) from e
    return value
