"""A small pattern language for composites: a pattern describes a tensor by how it is computed.

    P("Relu", P("Add", P("Conv", X, W), Const(), commutative=True))   # conv -> add bias -> relu
    P("Relu|Clip", ...)                     # alternatives by op name
    Opt(P("Add", inner, Const()), inner)    # an optional node: Add(inner, c) or just inner
    Alt(p1, p2)                             # either pattern
    P("Conv", X, W, attrs={"group": 1})     # attribute equal to a value ...
    P("Conv", X, W, attrs={"strides": lambda s: s == [1, 1]})   # ... or satisfying a predicate
    P("Gemm", X, W, check=lambda node, graph: ...)              # any other condition

Matching starts at a root node and walks up its inputs. A match is the list of
nodes it covers; every node but the root must feed only nodes of the match, so
the composite can replace them all by one node with one output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aot.ir import Graph, Node

__all__ = ["Alt", "Composite", "Const", "MatchState", "Opt", "P", "Pattern", "Wildcard", "X", "match_at"]


@dataclass
class MatchState:
    """A match in progress, which Pattern.match extends: the nodes covered so far and the names bound. What a
    pattern class of a vendor's own reads and returns."""

    graph: Graph  # the graph being matched
    producers: dict[str, Node]  # graph.producers(), computed once per partition
    claimed: set[str]  # node names already in another composite
    nodes: list[Node] = field(default_factory=list)  # the nodes matched so far, the root first
    bound: dict[str, Any] = field(default_factory=dict)  # pattern name -> Node or tensor name

    def fork(self) -> MatchState:
        """A copy to try one alternative on: a failed try leaves this state as it was."""
        return MatchState(self.graph, self.producers, self.claimed, list(self.nodes), dict(self.bound))


class Pattern:
    """What every pattern is: a description of how a tensor is computed. Subclass it for a test the classes
    here cannot express."""

    def match(self, tensor: str, st: MatchState) -> MatchState | None:  # pragma: no cover - interface
        """The state extended by the nodes that compute `tensor` as this pattern says (from a fork of `st`
        when it adds any), or None when `tensor` is not computed so."""
        raise NotImplementedError


@dataclass
class Wildcard(Pattern):
    """Any tensor: a graph input, a constant or another node's output (not part of the match)."""

    name: str | None = None  # binds the tensor's name in MatchState.bound under this name

    def match(self, tensor: str, st: MatchState) -> MatchState | None:
        if self.name:
            st.bound[self.name] = tensor
        return st


@dataclass
class Const(Pattern):
    """A constant tensor (weights, bias)."""

    name: str | None = None  # binds the tensor's name in MatchState.bound under this name

    def match(self, tensor: str, st: MatchState) -> MatchState | None:
        if not tensor or st.graph.const(tensor) is None:
            return None
        if self.name:
            st.bound[self.name] = tensor
        return st


@dataclass
class P(Pattern):
    """A node: op name(s) separated by '|', input patterns in order (none given: inputs unchecked)."""

    op: str  # the IR op, or several as "Relu|Clip"
    inputs: tuple[Pattern, ...] = ()  # one per input of the node, in order (a node of another count fails)
    # canonical attribute -> the value it must equal, or a predicate of the value (absent: None)
    attrs: dict[str, Any] = field(default_factory=dict)
    check: Callable[[Node, Graph], bool] | None = None  # any other condition on the node
    commutative: bool = False  # a two-input node may match its inputs in either order
    name: str | None = None  # binds the node in MatchState.bound under this name

    def __init__(self, op: str, *inputs: Pattern, attrs: dict | None = None,
                 check: Callable[[Node, Graph], bool] | None = None, commutative: bool = False,
                 name: str | None = None):
        self.op, self.inputs, self.attrs = op, tuple(inputs), dict(attrs or {})
        self.check, self.commutative, self.name = check, commutative, name

    def match(self, tensor: str, st: MatchState) -> MatchState | None:
        node = st.producers.get(tensor)
        if node is None or node.op not in self.op.split("|") or node.name in st.claimed:
            return None
        if any(n.name == node.name for n in st.nodes):
            return None
        for key, want in self.attrs.items():
            have = node.attrs.get(key)
            if not (want(have) if callable(want) else have == want):
                return None
        if self.check and not self.check(node, st.graph):
            return None
        st = st.fork()
        st.nodes.append(node)
        if self.name:
            st.bound[self.name] = node
        if not self.inputs:
            return st
        actual = [i for i in node.inputs]
        orders = [actual]
        if self.commutative and len(actual) == 2:
            orders.append(actual[::-1])
        for order in orders:
            if len(order) != len(self.inputs):
                continue
            result: MatchState | None = st
            for pat, t in zip(self.inputs, order, strict=True):
                result = pat.match(t, result.fork()) if result else None
            if result is not None:
                return result
        return None


@dataclass
class Opt(Pattern):
    """`pattern` if it matches, else `otherwise` on the same tensor (an optional node)."""

    pattern: Pattern  # tried first
    otherwise: Pattern  # tried on the same tensor when `pattern` fails (usually `pattern`'s own input)

    def match(self, tensor: str, st: MatchState) -> MatchState | None:
        return self.pattern.match(tensor, st.fork()) or self.otherwise.match(tensor, st.fork())


@dataclass
class Alt(Pattern):
    """The first of several patterns that matches."""

    options: tuple[Pattern, ...]  # in the order they are tried

    def __init__(self, *options: Pattern):
        self.options = options

    def match(self, tensor: str, st: MatchState) -> MatchState | None:
        for p in self.options:
            r = p.match(tensor, st.fork())
            if r is not None:
                return r
        return None


# Any tensor, unnamed: the inputs a pattern does not care about.
X = Wildcard()


@dataclass(frozen=True)
class Composite:
    """A named pattern a vendor takes as one unit, e.g. `cref.gemm_relu`; names are `<vendor>.<what>`. A match
    becomes one node of op "Composite" (attrs `composite`: the name, `compiler`: the vendor, `body`: the matched
    nodes as a Graph), which codegen receives inside its functions and compiles as a whole."""

    name: str  # `<vendor>.<what>`: the Composite node's attrs["composite"]
    pattern: Pattern  # describes the composite's one output, from its root node up
    check: Callable[[list[Node], Graph], bool] | None = None  # (the matched nodes, the graph) -> take it


def match_at(root: Node, composite: Composite, graph: Graph, producers: dict[str, Node],
             consumers: dict[str, list[Node]], claimed: set[str],
             order: dict[str, int] | None = None) -> list[Node] | None:
    """The nodes of `composite` rooted at `root`, in graph order (`order`: node name -> position,
    computed here when not given), or None. Interior results must stay inside."""
    if len(root.outputs) != 1:
        return None
    st = composite.pattern.match(root.outputs[0], MatchState(graph, producers, claimed))
    if st is None or st.nodes[0] is not root:
        return None
    names = {n.name for n in st.nodes}
    for n in st.nodes[1:]:
        for o in n.outputs:
            if o in graph.outputs or any(c.name not in names for c in consumers.get(o, [])):
                return None
    if composite.check and not composite.check(st.nodes, graph):
        return None
    if order is None:
        order = {n.name: k for k, n in enumerate(graph.nodes)}
    return sorted(st.nodes, key=lambda n: order[n.name])
