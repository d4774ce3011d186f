"""Static memory plan: one arena, an offset for every intermediate tensor.

The algorithm:
  1. Walk the nodes in execution order and group tensors into buffers:
     - a view (Reshape, Flatten, ...) joins its input's buffer: no copy;
     - an op that may run in place joins the buffer of the input it names
       when that buffer dies at this node (nothing reads it later);
     - a node's scratch space is a buffer that lives for that step only.
  2. A buffer lives from the step that first writes it to the last step that reads it.
  3. Place buffers greedily (as TFLM's GreedyMemoryPlanner does): take them in
     some order, put each at the lowest offset where it overlaps no placed
     buffer that is live at the same time. Several orders are tried and the
     smallest arena wins. This is a heuristic (optimal placement is NP-complete),
     so the plan reports the lower bound beside the arena size.

Graph inputs and outputs are owned by the caller and constants are weights:
neither is in the arena. A view of such a tensor becomes an alias of its pointer.

Two bounds are reported beside the arena:
  lower_bound_bytes  the largest total of arena buffer bytes (activations and kernel
                     scratch, after the grouping of step 1) live at one step: no
                     placement of these buffers can use less.
  tight_bound_bytes  the RAM the activations themselves need: the largest total, at
                     one step, of the bytes of all run-time tensors (graph inputs and
                     outputs included, constants and kernel scratch excluded) that are
                     live, where a view shares its input's storage and an op that may
                     write in place shares the storage of the input it names when that
                     input dies there (the same grouping as step 1; the caller's
                     inputs are read-only and its outputs are its own memory, so
                     neither is written in place). A graph input is live from the
                     first step, a graph output to the last. The RAM a
                     plan uses for activations is arena + caller-owned inputs and
                     outputs; the bundle reaches the bound when that total, less the
                     scratch live at the peak, is no more than it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aot.ir import Graph, Node

ALIGNMENT = 16


@dataclass
class Buffer:
    id: int
    nbytes: int
    first: int
    last: int
    tensors: list[str] = field(default_factory=list)
    offset: int = -1

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass
class Plan:
    offsets: dict[str, int]  # arena tensor -> byte offset
    aliases: dict[str, str]  # view of an input or constant -> the tensor whose pointer it shares
    scratch: dict[str, int]  # node name -> offset of its scratch space
    buffers: list[Buffer]
    arena_bytes: int
    lower_bound_bytes: int
    peak_step: int
    steps: list[str]  # node names in execution order
    tight_bound_bytes: int = 0  # see the module docstring
    io_bytes: int = 0  # caller-owned graph inputs and outputs (activations outside the arena)

    def buffer_of(self, tensor: str) -> Buffer | None:
        for b in self.buffers:
            if tensor in b.tensors:
                return b
        return None

    def chart(self, width: int = 64) -> str:
        """ASCII picture of the arena: a row per step, a letter per live buffer (TFLM's PrintMemoryPlan)."""
        if not self.arena_bytes:
            return "(empty arena)\n"
        scale = max(1, -(-self.arena_bytes // width))
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        rows = [f"arena {self.arena_bytes} bytes, lower bound {self.lower_bound_bytes}; "
                f"one column = {scale} bytes"]
        for step, name in enumerate(self.steps):
            line = ["."] * width
            owner: dict[int, Buffer] = {}
            for b in self.buffers:
                if not b.first <= step <= b.last:
                    continue
                # a column shows the buffer holding the byte at its middle (tiny buffers: their first column)
                cols = [c for c in range(width) if b.offset <= c * scale + scale // 2 < b.offset + b.nbytes]
                for c in cols or [min(b.offset // scale, width - 1)]:
                    other = owner.get(c)
                    if other is None:
                        owner[c], line[c] = b, letters[b.id % len(letters)]
                    elif other.offset < b.offset + b.nbytes and b.offset < other.offset + other.nbytes:
                        line[c] = "!"  # two live buffers share bytes: a planner bug
            rows.append(f"{step:4d} {''.join(line)} {name}")
        return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class OpMemory:
    """What the planner needs to know about an op, supplied by the code generator."""

    is_view: Callable[[Node], bool]
    inplace_input: Callable[[Node, Graph], int | None]
    scratch_bytes: Callable[[Node, Graph], int]


def _align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def plan_memory(graph: Graph, ops: OpMemory) -> Plan:
    external = set(graph.inputs) | set(graph.outputs) | {t.name for t in graph.tensors.values() if t.is_const}
    last_use: dict[str, int] = {}
    for step, n in enumerate(graph.nodes):
        for i in n.inputs:
            if i:
                last_use[i] = step

    buffers: list[Buffer] = []
    buffer_of: dict[str, Buffer] = {}
    aliases: dict[str, str] = {}
    scratch_buf: dict[str, Buffer] = {}

    def new_buffer(nbytes: int, step: int) -> Buffer:
        b = Buffer(len(buffers), nbytes, step, step)
        buffers.append(b)
        return b

    for step, n in enumerate(graph.nodes):
        src = n.inputs[0] if n.inputs else ""
        for k, out in enumerate(n.outputs):
            if not out or out in external:
                continue
            t = graph.tensors[out]
            if k == 0 and ops.is_view(n):
                if src in buffer_of:
                    _join(buffer_of, buffer_of[src], out)
                    continue
                if src in external:
                    aliases[out] = aliases.get(src, src)
                    continue
            if k == 0:
                idx = ops.inplace_input(n, graph)
                if idx is not None and n.inputs[idx] in buffer_of:
                    b = buffer_of[n.inputs[idx]]
                    dies_here = all(last_use.get(m, b.first) <= step for m in b.tensors)
                    used_once = n.inputs.count(n.inputs[idx]) == 1
                    if dies_here and used_once and b.nbytes >= t.nbytes:
                        _join(buffer_of, b, out)
                        continue
            b = new_buffer(t.nbytes, step)
            _join(buffer_of, b, out)
        nscratch = ops.scratch_bytes(n, graph)
        if nscratch:
            scratch_buf[n.name] = new_buffer(nscratch, step)

    produced_at = {o: step for step, n in enumerate(graph.nodes) for o in n.outputs if o}
    for b in buffers:
        if b.tensors:
            b.first = min(produced_at[t] for t in b.tensors)
            b.last = max(max(last_use.get(t, b.first) for t in b.tensors), b.first)

    lower, peak = _lower_bound(buffers, len(graph.nodes))
    arena = _place_best(buffers)
    offsets = {t: b.offset for b in buffers for t in b.tensors}
    io = {t for t in (*graph.inputs, *graph.outputs) if not graph.tensors[t].is_const}
    return Plan(offsets=offsets, aliases=aliases, scratch={k: b.offset for k, b in scratch_buf.items()},
                buffers=buffers, arena_bytes=arena, lower_bound_bytes=lower, peak_step=peak,
                steps=[n.name for n in graph.nodes], tight_bound_bytes=tight_bound(graph, ops),
                io_bytes=sum(graph.tensors[t].nbytes for t in io))


def tight_bound(graph: Graph, ops: OpMemory) -> int:
    """tight_bound_bytes (module docstring): live activation storage at the worst step, I/O included."""
    consts = {t.name for t in graph.tensors.values() if t.is_const}
    end = len(graph.nodes) - 1
    last_use: dict[str, int] = {}
    for step, n in enumerate(graph.nodes):
        for i in n.inputs:
            if i and i not in consts:
                last_use[i] = step
    storage: dict[str, list] = {}  # tensor -> [nbytes, first, last, members]
    inputs, outputs = set(graph.inputs), set(graph.outputs)

    def new(t: str, nbytes: int, first: int) -> None:
        storage[t] = [nbytes, first, first, [t]]

    def join(src: str, t: str) -> None:
        s = storage[src]
        s[3].append(t)
        storage[t] = s

    for t in graph.inputs:
        if t not in consts:
            new(t, graph.tensors[t].nbytes, 0)
    for step, n in enumerate(graph.nodes):
        src = n.inputs[0] if n.inputs else ""
        for k, out in enumerate(n.outputs):
            if not out:
                continue
            if k == 0 and ops.is_view(n) and src in storage:
                join(src, out)
                continue
            idx = ops.inplace_input(n, graph) if k == 0 and out not in outputs else None
            if idx is not None and n.inputs[idx] in storage and not inputs.intersection(storage[n.inputs[idx]][3]):
                s = storage[n.inputs[idx]]
                if all(last_use.get(m, step) <= step for m in s[3]) and n.inputs.count(n.inputs[idx]) == 1 \
                        and s[0] >= graph.tensors[out].nbytes:
                    join(n.inputs[idx], out)
                    continue
            new(out, graph.tensors[out].nbytes, step)
    unique = {id(s): s for s in storage.values()}.values()
    for s in unique:
        s[2] = max([s[1], *(last_use.get(m, s[1]) for m in s[3]), *(end for m in s[3] if m in outputs)])
    return max((sum(s[0] for s in unique if s[1] <= step <= s[2]) for step in range(len(graph.nodes))), default=0)


def _join(buffer_of: dict, b: Buffer, tensor: str) -> None:
    b.tensors.append(tensor)
    buffer_of[tensor] = b


def _lower_bound(buffers: list[Buffer], steps: int) -> tuple[int, int]:
    """Largest total of buffer bytes live at one step, and that step."""
    best, at = 0, 0
    for s in range(steps):
        live = sum(b.nbytes for b in buffers if b.first <= s <= b.last)
        if live > best:
            best, at = live, s
    return best, at


_ORDERS: tuple[Callable[[Buffer], tuple], ...] = (
    lambda b: (-b.nbytes, b.first),                      # largest first (TFLM)
    lambda b: (-(b.nbytes * (b.last - b.first + 1)), b.first),  # largest area first
    lambda b: (b.first, -b.nbytes),                      # in execution order
    lambda b: (-(b.last - b.first), -b.nbytes),          # longest-lived first
)


def _place_best(buffers: list[Buffer]) -> int:
    best_size, best_offsets = None, None
    for order in _ORDERS:
        size, offsets = _place(sorted(buffers, key=order))
        if best_size is None or size < best_size:
            best_size, best_offsets = size, offsets
    for b in buffers:
        b.offset = best_offsets[b.id]
    return best_size or 0


def _place(ordered: list[Buffer]) -> tuple[int, dict[int, int]]:
    placed: list[tuple[int, int, Buffer]] = []  # (offset, end, buffer)
    offsets: dict[int, int] = {}
    top = 0
    for b in ordered:
        need = _align(b.nbytes)
        conflicts = sorted((o, e) for o, e, p in placed if p.overlaps_in_time(b))
        offset = 0
        for o, e in conflicts:  # first gap that fits, scanning upwards
            if offset + need <= o:
                break
            offset = max(offset, _align(e))
        offsets[b.id] = offset
        placed.append((offset, offset + b.nbytes, b))
        top = max(top, offset + need)
    return top, offsets


def assert_no_overlap(plan: Plan) -> None:
    """For tests: no two buffers live at the same step share a byte."""
    bs = plan.buffers
    for i, a in enumerate(bs):
        for b in bs[i + 1:]:
            if a.overlaps_in_time(b) and a.offset < b.offset + b.nbytes and b.offset < a.offset + a.nbytes:
                raise AssertionError(f"buffers {a.tensors} and {b.tensors} overlap")
