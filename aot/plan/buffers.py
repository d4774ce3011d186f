"""The memory plan's records: a Buffer (tensors sharing bytes over a range of steps, with its segments
when tensors overlap inside it), the Plan (each tensor's offset in the one arena, the bounds beside
it, and the chart plan.txt draws), and the 16-byte alignment every tensor keeps."""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field, replace
from typing import Any

ALIGNMENT = 16


@dataclass
class Buffer:
    id: int
    nbytes: int
    first: int
    last: int
    tensors: list[str] = field(default_factory=list)
    offset: int = -1
    parent: Buffer | None = None  # a slice of this buffer (a Concat input written in place) ...
    delta: int = 0  # ... starting this many bytes into it
    # (delta, nbytes, first, last): which bytes are live when; a buffer holding slices written
    # before it (Concat inputs) has one per slice besides its own. Empty: the whole, first..last.
    segments: list[tuple[int, int, int, int]] = field(default_factory=list)

    @property
    def segs(self) -> list[tuple[int, int, int, int]]:
        return self.segments or [(0, self.nbytes, self.first, self.last)]

    def live_bytes(self, step: int) -> int:
        return sum(n for _, n, f, last in self.segs if f <= step <= last)


@dataclass
class Plan:
    offsets: dict[str, int]  # arena tensor (graph inputs and outputs included) -> byte offset
    aliases: dict[str, str]  # view of a constant -> the constant whose pointer it shares
    scratch: dict[str, int]  # node name -> offset of its scratch space
    buffers: list[Buffer]
    arena_bytes: int
    lower_bound_bytes: int
    peak_step: int
    steps: list[str]  # node names in execution order
    tight_bound_bytes: int = 0  # see the module docstring
    io_bytes: int = 0  # bytes of the graph inputs and outputs (all in the arena)
    scratch_budgets: dict[str, int] = field(default_factory=dict)  # node -> the budget its scratch was sized for
    choices: dict[str, Any] = field(default_factory=dict)  # node -> what OpMemory.choose gave at that budget
    output_offsets: dict[str, int] = field(default_factory=dict)  # graph output -> its slot (see copied_outputs)
    copied_outputs: list[str] = field(default_factory=list)  # outputs no node writes: copied in at the end
    slices: list[Buffer] = field(default_factory=list)  # buffers placed inside others (Concat inputs)
    techniques: dict[str, list[str]] = field(default_factory=dict)  # a RAM budget's technique -> the nodes it took
    budget: dict[str, Any] | None = None  # what meeting --ram-budget traded (plan_memory), None without one
    # --memory-pool / a board's memory map (aot/plan/pools.py): the pools the buffers went to, fastest first.
    # Offsets stay in one address space: pool k's bytes start at pools[k].base, pool 0 is the caller's
    # arena (arena_bytes is then its size). Empty: one arena, as without pools.
    pools: list[Any] = field(default_factory=list)
    scratch_buffers: dict[str, Buffer] = field(default_factory=dict)  # node -> the buffer of its scratch
    # vendor function -> the offset of its persistent state (Artifact.state_bytes): after every other byte of
    # the arena, alive from init through every run, shared with nothing (reserve_state)
    state_offsets: dict[str, int] = field(default_factory=dict)
    output_buffers: dict[str, Buffer] = field(default_factory=dict)  # copied output -> the buffer of its slot

    def buffer_of(self, tensor: str) -> Buffer | None:
        """The buffer (or slice) holding tensor. Emitters ask for every tensor, so this looks it up
        in a dict built on first use (rebuilt if the buffer lists are replaced or grow), not by a
        search through every buffer."""
        key = (id(self.buffers), len(self.buffers), id(self.slices), len(self.slices))
        cached = self.__dict__.get("_buffer_index")
        if cached is None or cached[0] != key:
            index: dict[str, Buffer] = {}
            for b in (*self.buffers, *self.slices):
                for t in b.tensors:
                    index.setdefault(t, b)
            cached = self.__dict__["_buffer_index"] = (key, index)
        b = cached[1].get(tensor)
        if b is not None and tensor in b.tensors:
            return b
        for b in (*self.buffers, *self.slices):  # a buffer's tensors edited since the index was built
            if tensor in b.tensors:
                return b
        return None

    def chart(self, width: int = 64) -> str:
        """ASCII picture of the arena: a row per step, a letter per live buffer (TFLM's PrintMemoryPlan)."""
        total = self.pools[-1].base + self.pools[-1].nbytes if self.pools else self.arena_bytes
        if not total:
            return "(empty arena)\n"
        scale = max(1, -(-total // width))
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        rows = [f"arena {self.arena_bytes} bytes, lower bound {self.lower_bound_bytes}; "
                f"one column = {scale} bytes"]
        if self.pools:
            rows[0] = (f"{len(self.pools)} pools, " + ", ".join(
                f"{p.name} {p.nbytes} bytes from column {p.base // scale}" for p in self.pools)
                + f"; lower bound {self.lower_bound_bytes}; one column = {scale} bytes")
        # step -> (buffer, its columns then): worked out once per piece of a buffer's lifetime
        # (_chart_pieces), not per step and segment
        live: list[list[tuple[Buffer, list]]] = [[] for _ in self.steps]
        for b in self.buffers:
            for f, last, marks in _chart_pieces(b, scale, width):
                for step in range(max(f, 0), min(last + 1, len(live))):
                    live[step].append((b, marks))
        for step, name in enumerate(self.steps):
            line = ["."] * width
            owner: dict[int, tuple[Buffer, int, int]] = {}
            for b, marks in live[step]:
                for c, (start, end), ranges in marks:
                    other = owner.get(c)
                    if other is None:
                        owner[c], line[c] = (b, start, end), letters[b.id % len(letters)]
                    elif other[0] is not b and any(other[1] < e and s < other[2] for s, e in ranges):
                        line[c] = "!"  # two live buffers share bytes: a planner bug
            rows.append(f"{step:4d} {''.join(line)} {name}")
        return "\n".join(rows) + "\n"


def _chart_pieces(b: Buffer, scale: int, width: int,
                  ) -> list[tuple[int, int, list[tuple[int, tuple[int, int], list[tuple[int, int]]]]]]:
    """The chart columns b claims, per piece of its lifetime (_changes): (first, last, [(column,
    byte range of the first live segment claiming it, the byte ranges of all that claim it,
    adjacent ones merged)]). A column shows the buffer holding the byte at its middle; a segment
    holding no middle claims its first column. Columns are updated only where segments start or
    end, so a Concat's staircase of k slices costs about k, not k squared."""
    half = scale // 2
    segs = b.segs
    claims: list[tuple[int, int, range | list[int]]] = []  # segment -> (start, end, columns)
    for d, n, _, _ in segs:
        start, end = b.offset + d, b.offset + d + n
        span = range(max(0, -(-(start - half) // scale)), min(width, -(-(end - half) // scale)))
        claims.append((start, end, span or [min(start // scale, width - 1)]))
    if len(segs) == 1:
        start, end, span = claims[0]
        return [(segs[0][2], segs[0][3], [(c, (start, end), [(start, end)]) for c in span])]
    appendable = all(n > 0 for _, n, _, _ in segs)  # else merging depends on order: always redo it
    claimants: dict[int, list[int]] = {}  # column -> live segments claiming it, in segs order
    entry: dict[int, tuple[tuple[int, int], list[tuple[int, int]]]] = {}  # column -> its mark
    out, live = [], 0
    for first, last, started, ended in _changes(segs):
        redo: set[int] = set()
        for i in ended:
            for c in claims[i][2]:
                claimants[c].remove(i)
                redo.add(c)
        added: dict[int, list[int]] = {}
        for i in started:
            for c in claims[i][2]:
                bisect.insort(claimants.setdefault(c, []), i)
                added.setdefault(c, []).append(i)
        for c in redo | added.keys():
            ids = claimants[c]
            if not ids:
                del claimants[c], entry[c]
                continue
            merged = entry[c][1] if c in entry else []
            new = sorted(claims[i][:2] for i in added.get(c, ()))
            if c in redo or not appendable or (merged and new and new[0][0] < merged[-1][0]):
                merged, new = [], sorted(claims[i][:2] for i in ids)
            for start, end in new:
                if merged and start < end and merged[-1][0] < merged[-1][1] and start <= merged[-1][1]:
                    merged[-1] = (merged[-1][0], max(merged[-1][1], end))
                else:  # empty ranges stay apart: one strictly inside another buffer still counts
                    merged.append((start, end))
            entry[c] = (claims[ids[0]][:2], merged)
        live += len(started) - len(ended)
        if live:
            out.append((first, last, [(c, head, list(merged)) for c, (head, merged) in entry.items()]))
    return out


def _align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def _changes(segs: list[tuple[int, int, int, int]]) -> list[tuple[int, int, list[int], list[int]]]:
    """The pieces of a lifetime made of segments (delta, nbytes, first, last): (first, last, the
    segments that start at first, those that ended at first - 1), cut at every step where the set
    of live segments changes. A piece may have none live (a gap)."""
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, (_, _, f, last) in enumerate(segs):
        if f <= last:
            starts.setdefault(f, []).append(i)
            ends.setdefault(last + 1, []).append(i)
    cuts = sorted(starts.keys() | ends.keys())
    return [(a, z - 1, starts.get(a, []), ends.get(a, [])) for a, z in itertools.pairwise(cuts)]


def reserve_state(plan: Plan, state_bytes: dict[str, int]) -> Plan:
    """`plan` with each vendor function's persistent state (bytes by symbol) placed after its arena, aligned:
    the arena grows by their sum. The states are no tensor's, so no step may reuse them."""
    offset = _align(plan.arena_bytes)
    offsets = {}
    for symbol, nbytes in state_bytes.items():
        if nbytes > 0:
            offsets[symbol] = offset
            offset += _align(nbytes)
    if not offsets:
        return plan
    return replace(plan, arena_bytes=offset, state_offsets=offsets)
