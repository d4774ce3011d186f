"""Loop and If bodies into the graph's one node list, innermost first (aot/frontend/onnx/loops.py and
aot/frontend/onnx/branches.py say how each is laid out between its marker nodes)."""

from __future__ import annotations

from aot.frontend.onnx.branches import flatten_if
from aot.frontend.onnx.loops import flatten_loop
from aot.ir import Graph, Node


def flatten_control_flow(graph: Graph, top: bool = True) -> None:
    """Each Loop and If node of `graph` (and of their bodies) -> its markers and body nodes, in place."""
    if not any(n.op in ("Loop", "If") for n in graph.nodes):
        return
    used = set(graph.outputs) | {i for n in graph.nodes for i in n.inputs if i}
    names = set(graph.tensors)
    node_names = {n.name for n in graph.nodes}
    out: list[Node] = []
    for n in graph.nodes:
        if n.op == "Loop":
            flatten_control_flow(n.attrs["body"], top=False)
            out += flatten_loop(graph, n, used, names, node_names, top)
        elif n.op == "If":
            flatten_control_flow(n.attrs["then"], top=False)
            flatten_control_flow(n.attrs["else"], top=False)
            out += flatten_if(graph, n, names, node_names)
        else:
            out.append(n)
    graph.nodes = out
