"""The memory planner: small graphs checkable by hand, then properties on random chains."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from aot.emit_c.model import op_memory
from aot.ir import Graph, Node, Tensor
from aot.plan import assert_no_overlap, plan_memory


def graph(nodes: list[tuple[str, list[str], str, int]], inputs=("x",), outputs=("out",)) -> Graph:
    """nodes: (op, inputs, output, float count)."""
    tensors = {i: Tensor(i, (4,), "float32") for i in inputs}
    ns = []
    for k, (op, ins, out, n) in enumerate(nodes):
        tensors[out] = Tensor(out, (n,), "float32")
        ns.append(Node(op, f"n{k}", list(ins), [out]))
    return Graph("g", ns, tensors, list(inputs), list(outputs))


def test_two_buffers_that_never_meet_share_memory():
    # a (10 floats) dies at b; c (20 floats) is written after a died -> they overlap in space.
    g = graph([("Opaque", ["x"], "a", 10), ("Opaque", ["a"], "b", 20), ("Opaque", ["b"], "c", 20),
               ("Opaque", ["c"], "out", 4)])
    p = plan_memory(g, op_memory())
    assert_no_overlap(p)
    assert p.lower_bound_bytes == 160  # b and c live together at step 2
    assert p.arena_bytes == 160
    assert p.offsets["a"] == p.offsets["c"] or p.offsets["a"] >= 80


def test_elementwise_runs_in_place_when_input_dies():
    g = graph([("Opaque", ["x"], "a", 16), ("Relu", ["a"], "b", 16), ("Opaque", ["b"], "out", 4)])
    p = plan_memory(g, op_memory())
    assert p.offsets["a"] == p.offsets["b"]
    assert p.arena_bytes == 64


def test_no_in_place_when_input_is_still_needed():
    g = graph([("Opaque", ["x"], "a", 16), ("Relu", ["a"], "b", 16), ("Add", ["a", "b"], "out", 16)])
    p = plan_memory(g, op_memory())
    assert p.offsets["a"] != p.offsets["b"]
    assert_no_overlap(p)


def test_view_shares_its_input_bytes():
    g = graph([("Opaque", ["x"], "a", 16), ("Reshape", ["a"], "v", 16), ("Opaque", ["v"], "out", 4)])
    p = plan_memory(g, op_memory())
    assert p.offsets["v"] == p.offsets["a"] and p.arena_bytes == 64


def test_view_of_graph_input_is_an_alias():
    g = graph([("Reshape", ["x"], "v", 4), ("Opaque", ["v"], "out", 4)])
    p = plan_memory(g, op_memory())
    assert p.aliases == {"v": "x"} and p.arena_bytes == 0


def test_chart_marks_every_step():
    g = graph([("Opaque", ["x"], "a", 10), ("Opaque", ["a"], "b", 20), ("Opaque", ["b"], "out", 4)])
    chart = plan_memory(g, op_memory()).chart(width=20)
    assert len(chart.splitlines()) == 4 and "!" not in chart


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 64), st.integers(0, 3)), min_size=1, max_size=25))
def test_random_graphs_never_overlap(spec):
    """Each node reads its predecessor and maybe one earlier tensor; sizes random."""
    nodes, names = [], ["x"]
    for k, (n, back) in enumerate(spec):
        ins = [names[-1]] + ([names[-1 - back]] if back and len(names) > back else [])
        out = "out" if k == len(spec) - 1 else f"t{k}"
        nodes.append(("Opaque", ins, out, n))
        names.append(out)
    p = plan_memory(graph(nodes), op_memory())
    assert_no_overlap(p)
    assert p.lower_bound_bytes <= p.arena_bytes
    assert p.arena_bytes <= sum(-(-n * 4 // 16) * 16 for n, _ in spec)
    assert np.isfinite(p.arena_bytes)


def test_tight_bound_counts_io_and_shares_views_and_in_place():
    # x (4 floats, input) -> a (16) -> Relu in place -> Reshape view -> out (4, output)
    g = graph([("Opaque", ["x"], "a", 16), ("Relu", ["a"], "b", 16), ("Reshape", ["b"], "v", 16),
               ("Opaque", ["v"], "out", 4)])
    p = plan_memory(g, op_memory())
    # step 0: x + a = 80; steps 1-2: a/b/v share one 64-byte storage; step 3: v + out = 80 (x died at 0)
    assert p.tight_bound_bytes == 80
    assert p.io_bytes == 32
    assert p.arena_bytes + p.io_bytes >= p.tight_bound_bytes


def test_tight_bound_keeps_an_input_still_needed():
    g = graph([("Opaque", ["x"], "a", 16), ("Relu", ["a"], "b", 16), ("Add", ["a", "b"], "out", 16)])
    p = plan_memory(g, op_memory())
    assert p.tight_bound_bytes == 64 + 64 + 64  # a, b and out live at step 2 (x died at step 0)
