"""A vendor function's workspace planned by aotc's placer: the vendor's intermediates and scratch, each with
its life in the function's steps, placed in as few bytes as the host's arena would take (TFLM's greedy
orders, then aotc's repair search: aot/plan/placement.py), instead of one after another.

A vendor calls it through `CodegenContext.plan_workspace` (its graph's intermediates, lives from its node
order) or `plan_lives` (any buffers it names, e.g. tiles of its own device memory)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from aot.errors import AotcError
from aot.ir import Graph, Node
from aot.plan.buffers import ALIGNMENT, Buffer
from aot.plan.placement import _lower_bound, _place_best


@dataclass(frozen=True)
class Life:
    """A buffer a vendor's code keeps from step `first` to step `last` (inclusive: steps are its calls)."""

    name: str  # its key in WorkspacePlan.offsets: unique among the lives planned together
    nbytes: int  # its size (0: placed nowhere, offset 0)
    first: int  # the first step it is live at (0-based)
    last: int  # the last step it is live at, >= first


@dataclass(frozen=True)
class WorkspacePlan:
    """Byte offsets into the function's workspace, and the bytes it needs (Artifact.workspace_bytes)."""

    offsets: Mapping[str, int]  # buffer (tensor) name -> offset, a multiple of `alignment`
    nbytes: int  # the workspace's size: Artifact.workspace_bytes
    lower_bound: int  # the most bytes live at one step: no placement needs fewer
    alignment: int = ALIGNMENT  # every offset's: the arena's alignment, which the workspace pointer has
    # the function's inputs and outputs placed inside the workspace too (plan_workspace's `boundary`): aotc puts
    # the call's tensors there, so the workspace reuses an input's bytes once it is read and an output's before
    # it is written, as the host's arena would; tensor -> offset (also in `offsets`)
    boundary: Mapping[str, int] = field(default_factory=dict)

    def scratch(self, node: str) -> int:
        """The offset of node's scratch (plan_workspace's `scratch`)."""
        return self.offsets[f"{node}#scratch"]


def plan_lives(lives: Sequence[Life]) -> WorkspacePlan:
    """Place `lives` so that no two live at one step share a byte."""
    names = [life.name for life in lives]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise AotcError(f"plan_workspace: buffer names repeat ({', '.join(twice)})")
    bad = [life.name for life in lives if life.nbytes < 0 or life.first < 0 or life.last < life.first]
    if bad:
        raise AotcError(f"plan_workspace: buffer(s) {', '.join(bad)} need nbytes >= 0 and 0 <= first <= last")
    buffers = [Buffer(k, life.nbytes, life.first, life.last, [life.name])
               for k, life in enumerate(lives) if life.nbytes]
    if not buffers:
        return WorkspacePlan({life.name: 0 for life in lives}, 0, 0)
    bound, _ = _lower_bound(buffers, max(b.last for b in buffers) + 1)
    total, offsets = _place_best(buffers, bound)
    placed = {b.tensors[0]: offsets[b.id] for b in buffers}
    return WorkspacePlan({life.name: placed.get(life.name, 0) for life in lives}, total, bound)


def graph_lives(graph: Graph, scratch: Mapping[str, int] | None = None,
                inplace: Callable[[Node], int | None] | None = None) -> tuple[list[Life], dict[str, str]]:
    """The lives of `graph`'s intermediates (neither constants nor the function's inputs and outputs, which
    its DLTensors hold), step k being graph.nodes[k], and of each node's `scratch` bytes at its own step.
    Composite nodes are one step (their bodies' tensors are the vendor's to keep). `inplace(node)`: the input
    whose bytes the node's output may overwrite as it runs (elementwise ops), or None; the output then shares
    that input's buffer where the input is an intermediate of the same size read by nothing later. Returns the
    lives and, for each tensor sharing another's buffer, that tensor."""
    scratch = dict(scratch or {})
    step = {n.name: k for k, n in enumerate(graph.nodes)}
    unknown = sorted(set(scratch) - set(step))
    if unknown:
        raise AotcError(f"plan_workspace: scratch for {', '.join(unknown)}, which are not nodes of the function")
    outside = set(graph.inputs) | set(graph.outputs)
    last_read = {t: k for k, n in enumerate(graph.nodes) for t in n.inputs if t}
    home: dict[str, str] = {}  # tensor -> the tensor whose buffer it is written into
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for k, n in enumerate(graph.nodes):
        for t in n.inputs:
            if t in home:
                last[home[t]] = k
        for j, t in enumerate(n.outputs):
            if not t or t in outside or graph.tensors[t].is_const:
                continue
            i = inplace(n) if inplace is not None and j == 0 else None
            src = n.inputs[i] if i is not None and i < len(n.inputs) else ""
            if src in home and last_read.get(src) == k and graph.tensors[src].nbytes == graph.tensors[t].nbytes:
                home[t] = home[src]  # written over its input: one buffer
            else:
                home[t] = t
                first[t] = k
            last[home[t]] = max(last.get(home[t], k), k)
    lives = [Life(t, graph.tensors[t].nbytes, first[t], last[t]) for t in first]
    lives += [Life(f"{n}#scratch", b, step[n], step[n]) for n, b in scratch.items()]
    return lives, {t: h for t, h in home.items() if t != h}


def plan_workspace(graph: Graph, scratch: Mapping[str, int] | None = None,
                   inplace: Callable[[Node], int | None] | None = None,
                   boundary: Collection[str] = ()) -> WorkspacePlan:
    """graph_lives placed by plan_lives; a tensor written over its input has that input's offset. `boundary`:
    inputs and outputs of the function placed with them, an input live until its last read, an output from
    the step writing it to the end (an input read by no node, or an output no node writes, is left out)."""
    lives, shared = graph_lives(graph, scratch, inplace)
    edge = boundary_lives(graph, boundary)
    plan = plan_lives([*lives, *edge])
    return replace(plan, offsets={**plan.offsets, **{t: plan.offsets[h] for t, h in shared.items()}},
                   boundary={life.name: plan.offsets[life.name] for life in edge})


def boundary_lives(graph: Graph, boundary: Collection[str]) -> list[Life]:
    """The lives of the function's inputs and outputs named in `boundary`, in its steps."""
    read = {t: k for k, n in enumerate(graph.nodes) for t in n.inputs if t}
    written = {t: k for k, n in enumerate(graph.nodes) for t in n.outputs if t}
    end = max(len(graph.nodes) - 1, 0)
    lives = []
    for t in dict.fromkeys(boundary):
        nbytes = graph.tensors[t].nbytes
        if t in graph.inputs and t not in graph.outputs and t in read:
            lives.append(Life(t, nbytes, 0, read[t]))
        elif t in graph.outputs and t not in graph.inputs and t in written:
            lives.append(Life(t, nbytes, written[t], end))
    return lives
