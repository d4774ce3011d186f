"""A plan across several memory pools (issue 53): --memory-pool NAME:BYTES, or a board's memory map.

The planner (planner.py) makes one arena; this module then splits its buffers over pools given in
order of speed, fastest first:
  - graph inputs and outputs (and the slots of copied outputs) stay in pool 0, the arena the caller
    passes to <name>_run, so the header's I/O offsets and <name>_arena_io keep their meaning;
  - the other buffers go, hottest first, to the fastest pool that still has room at every step of their
    lifetime. "Hot" is a documented proxy for reads per byte (_heat): each node is charged `work`
    accesses, its output's elements, times the elements of its weight per output channel where it has
    a weight of two or more dimensions (the MACs of a conv, Gemm or MatMul); each non-constant input
    is read max(1, work / its elements) times per element and each output written once; a buffer's
    heat is its tensors' accesses over its bytes, a kernel's scratch is charged the node's work;
  - each pool is then placed by the planner's placement (placement.py _place_best); where fragmentation
    leaves one over its size, its coldest buffer moves to the next pool and the pool is placed again.
A buffer never straddles pools: it is placed whole in one, and slices placed inside it (a Concat's
inputs) go with it. Weights are not planned here: they stay where the target puts read-only data
(flash), whatever the pools.

Offsets stay in one address space, so every comparison of offsets the emitter makes (views, in-place
ops, Concat slices) means what it did: pool k's bytes are [base, base + nbytes) of it. The emitter turns
an offset into its pool's pointer (aot/emit_c/model.py), pool 0 being the `arena` argument and each
other pool a static array in its own section, .bss.aotc_pool_<name> (a board's linker script maps it to
the region of that name; a host build takes it as plain .bss)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aot.errors import AotcError
from aot.ir import Graph, Node
from aot.plan.buffers import Buffer, Plan, _align
from aot.plan.placement import _lower_bound, _place_best, _slabs

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNITS = {"": 1, "K": 1024, "KB": 1024, "KIB": 1024, "M": 1024 * 1024, "MB": 1024 * 1024, "MIB": 1024 * 1024}


@dataclass(frozen=True)
class PoolSpec:
    """A pool as given: its name (a C identifier; on a board, one of its regions) and its bytes."""
    name: str
    capacity: int


@dataclass
class Pool:
    """A pool as planned: the bytes used, where they start in the plan's one address space."""
    name: str
    capacity: int
    base: int = 0
    nbytes: int = 0
    buffers: list[Buffer] = field(default_factory=list)

    @property
    def section(self) -> str:
        return f".bss.aotc_pool_{self.name}"

    def as_dict(self, plan: Plan) -> dict[str, Any]:
        tensors = sum(len(_tensors_of(b, plan)) for b in self.buffers)
        return {"name": self.name, "bytes": self.nbytes, "capacity_bytes": self.capacity,
                "section": None if self is plan.pools[0] else self.section, "buffers": len(self.buffers),
                "tensors": tensors}


def parse_pool(text: str) -> PoolSpec:
    """--memory-pool NAME:BYTES (BYTES may end in K or M, powers of 1024)."""
    name, sep, size = text.partition(":")
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", size)
    if not sep or not _NAME.fullmatch(name) or m is None or m.group(2).upper() not in _UNITS:
        raise AotcError(f"--memory-pool {text}: give NAME:BYTES, NAME a C identifier, BYTES a number "
                        "(K or M for KiB or MiB), e.g. RAM:256K")
    nbytes = int(m.group(1)) * _UNITS[m.group(2).upper()]
    if nbytes <= 0:
        raise AotcError(f"--memory-pool {text}: a pool needs more than 0 bytes")
    return PoolSpec(name, nbytes)


def check_specs(specs: tuple[PoolSpec, ...]) -> None:
    """Pool names once each."""
    seen: set[str] = set()
    for s in specs:
        if s.name in seen:
            raise AotcError(f"--memory-pool {s.name}: given twice (one size per pool)")
        seen.add(s.name)


def node_work(n: Node, graph: Graph) -> int:
    """The accesses a node is charged (see the module docstring): its output's elements, times the
    elements of its largest weight per output channel where that weight has two or more dimensions."""
    outs = [graph.tensors[o] for o in n.outputs if o and o in graph.tensors]
    size = max((t.size for t in outs), default=0)
    weights = [graph.tensors[i] for i in n.inputs if i and i in graph.tensors and graph.tensors[i].is_const
               and len(graph.tensors[i].shape) >= 2]
    if not weights or not outs:
        return size
    w = max(weights, key=lambda t: t.size)
    cout = w.shape[0] if w.shape[0] in outs[0].shape else w.shape[-1]
    return size * max(w.size // max(cout, 1), 1)


def _heat(graph: Graph, plan: Plan, buffers: list[Buffer]) -> dict[int, float]:
    """Buffer id -> accesses per byte (the module docstring's proxy)."""
    accesses: dict[str, float] = {}
    for n in graph.nodes:
        work = node_work(n, graph)
        for i in dict.fromkeys(n.inputs):
            t = graph.tensors.get(i) if i else None
            if t is not None and not t.is_const and t.size:
                accesses[i] = accesses.get(i, 0.0) + t.size * max(1.0, work / t.size) * n.inputs.count(i)
        for o in n.outputs:
            if o and o in graph.tensors:
                accesses[o] = accesses.get(o, 0.0) + graph.tensors[o].size
    scratch: dict[int, float] = {}
    by_name = {n.name: n for n in graph.nodes}
    for node, b in plan.scratch_buffers.items():
        scratch[b.id] = scratch.get(b.id, 0.0) + node_work(by_name[node], graph)
    return {b.id: (sum(accesses.get(t, 0.0) for t in _tensors_of(b, plan)) + scratch.get(b.id, 0.0))
            / max(b.nbytes, 1) for b in buffers}


def _tensors_of(b: Buffer, plan: Plan) -> list[str]:
    """b's tensors and those of the slices placed inside it."""
    out = list(b.tensors)
    for s in plan.slices:
        if _top(s) is b:
            out += s.tensors
    return out


def _top(b: Buffer) -> Buffer:
    while b.parent is not None:
        b = b.parent
    return b


def assign_pools(graph: Graph, plan: Plan, specs: tuple[PoolSpec, ...],
                 state_bytes: Mapping[str, int] | None = None) -> Plan:
    """`plan` with its buffers split over `specs` (fastest first), or AotcError naming a buffer that no
    pool has room for. `state_bytes`: vendor functions' persistent state (symbol -> bytes), placed after
    pool 0's buffers, so that it is the arena's last bytes as without pools (reserve_state); pool 0's room
    for buffers is its size less theirs."""
    if not specs:
        return plan
    check_specs(specs)
    state = {sym: _align(n) for sym, n in (state_bytes or {}).items() if n > 0}
    if state and sum(state.values()) >= specs[0].capacity:
        raise AotcError(f"memory pools: the vendor functions' state ({sum(state.values()):,} B) leaves no room in "
                        f"pool {specs[0].name} ({specs[0].capacity:,} B), which holds it and the model's inputs "
                        "and outputs")
    specs = (PoolSpec(specs[0].name, specs[0].capacity - sum(state.values())), *specs[1:])
    nsteps = max(len(plan.steps), 1)
    buffers = list(plan.buffers)
    heat = _heat(graph, plan, buffers)
    io = {*graph.inputs, *graph.outputs}
    pinned = {b.id for b in buffers if io.intersection(_tensors_of(b, plan))}
    pinned |= {b.id for b in plan.output_buffers.values()}
    order = sorted(buffers, key=lambda b: (b.id not in pinned, -heat[b.id], -b.nbytes, b.id))
    pools = [Pool(s.name, s.capacity) for s in specs]
    live = [[0] * nsteps for _ in pools]

    def fits(b: Buffer, k: int) -> bool:
        return all(live[k][s] + _align(n) <= pools[k].capacity
                   for f, last, n, _ in _slabs(b) for s in range(max(f, 0), min(last, nsteps - 1) + 1))

    def add(b: Buffer, k: int, sign: int = 1) -> None:
        for f, last, n, _ in _slabs(b):
            for s in range(max(f, 0), min(last, nsteps - 1) + 1):
                live[k][s] += sign * _align(n)

    def put(b: Buffer, start: int) -> None:
        for k in ([0] if b.id in pinned else range(start, len(pools))):
            if fits(b, k):
                add(b, k)
                pools[k].buffers.append(b)
                return
        tried = [0] if b.id in pinned else list(range(start, len(pools)))
        raise AotcError(_refusal(graph, plan, b, [(pools[k], live[k]) for k in tried], b.id in pinned))

    for b in order:
        put(b, 0)
    offsets: dict[int, int] = {}
    for k, pool in enumerate(pools):
        while True:
            if not pool.buffers:
                break
            lower, _ = _lower_bound(pool.buffers, nsteps)
            size, placed = _place_best(pool.buffers, lower)
            if size <= pool.capacity:
                pool.nbytes = size
                offsets.update(placed)
                break
            movable = [b for b in pool.buffers if b.id not in pinned]
            if not movable or k + 1 == len(pools):
                raise AotcError(f"memory pools: the buffers given to pool {pool.name} need {size:,} bytes placed "
                                f"(fragmentation), over its {pool.capacity:,}; no slower pool to move them to "
                                f"(pools: {_sizes(pools)})")
            coldest = min(movable, key=lambda b: (heat[b.id], b.nbytes, -b.id))
            pool.buffers.remove(coldest)
            add(coldest, k, -1)
            put(coldest, k + 1)
    offset = _align(pools[0].nbytes)
    for sym, n in state.items():  # after pool 0's buffers: the arena's last bytes
        plan.state_offsets[sym] = offset
        offset += n
    if state:
        pools[0].nbytes, pools[0].capacity = offset, specs[0].capacity + sum(state.values())
    base = 0
    for pool in pools:
        pool.base = base
        base += _align(pool.nbytes)
    return _moved(plan, pools, offsets)


def _moved(plan: Plan, pools: list[Pool], local: dict[int, int]) -> Plan:
    """plan with every buffer at its pool's base + its offset in the pool."""
    shift: dict[int, int] = {}
    for pool in pools:
        for b in pool.buffers:
            shift[b.id] = pool.base + local[b.id] - b.offset
    for t in plan.offsets:
        b = plan.buffer_of(t)
        if b is not None:
            plan.offsets[t] += shift[_top(b).id]
    plan.scratch = {n: off + shift[plan.scratch_buffers[n].id] for n, off in plan.scratch.items()}
    for o in plan.output_offsets:
        b = plan.output_buffers.get(o) or plan.buffer_of(o)
        assert b is not None, o
        plan.output_offsets[o] += shift[_top(b).id]
    for s in plan.slices:
        s.offset += shift[_top(s).id]
    for b in plan.buffers:
        b.offset += shift[b.id]
    plan.pools = pools
    plan.arena_bytes = pools[0].nbytes
    return plan


def pool_at(pools: list[Pool], offset: int) -> Pool:
    """The pool holding `offset` of a plan's address space (a pool with bytes: an empty one holds none)."""
    holding = [p for p in pools if p.nbytes and p.base <= offset]
    return holding[-1] if holding else pools[0]


def _sizes(pools: list[Pool]) -> str:
    return ", ".join(f"{p.name} {p.capacity:,} B" for p in pools)


def _refusal(graph: Graph, plan: Plan, b: Buffer, tried: list[tuple[Pool, list[int]]], pinned: bool) -> str:
    """One line: the buffer (its first tensor and the node writing it, or the node whose scratch it is),
    its bytes and steps, and each pool it could have gone to with the bytes already in use then."""
    tensors = _tensors_of(b, plan)
    writer = {o: n for n in graph.nodes for o in n.outputs if o}
    if tensors:
        t = tensors[0]
        what = (f"tensor '{t}' (node {writer[t].name}, {writer[t].op})" if t in writer
                else f"graph input '{t}'")
    else:
        node = next((n for n, s in plan.scratch_buffers.items() if s is b), None)
        out = next((o for o, s in plan.output_buffers.items() if s is b), None)
        ops = {n.name: n.op for n in graph.nodes}
        what = (f"the scratch of node {node} ({ops[node]})" if node is not None
                else f"the slot of graph output '{out}'" if out is not None else f"buffer {b.id}")
    steps = range(max(b.first, 0), min(b.last, len(tried[0][1]) - 1) + 1)
    used = ", ".join(f"{p.name} {p.capacity:,} B with {max((live[s] for s in steps), default=0):,} B in use then"
                     for p, live in tried)
    why = " (graph inputs and outputs stay in the first pool, the caller's arena)" if pinned else ""
    return (f"memory pools: {what} needs {b.nbytes:,} bytes at steps {b.first}..{b.last} and cannot be split; "
            f"no pool has room{why}: {used}")


def pool_array(model: str, pool: str) -> str:
    """The C name of a pool's static array in a model's C (pools after the first, the arena)."""
    return f"{model}_pool_{pool}"
