"""A run of TFLite int8 CONV_2D / DEPTHWISE_CONV_2D layers fused in row bands (issue 53,
docs/fused-tiles.md): one node (TflBandRun) standing for the layers, whose scratch holds the line
buffers between them and the kernels' own scratch, and whose C is a loop over the bands calling the
layers' kernels unchanged, each on the rows of its band (x, h, pad_top, oh and y set per band from a
table). Here: the geometry (schedule: which rows each layer computes in each band, what its call sees,
the line buffers' rows; overlap), the fused node (band_run) and its fit, which picks the band height:
the most rows whose buffers and scratch fit the memory the step can spare (fewest calls), down to one
row. The planner fuses a run only where a --ram-budget cannot be met otherwise (aot/plan/bands.py
plan_with_bands, through aot/select.py fuse_in_bands)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from aot.csource.format import c_comment
from aot.ir import Graph, Node, Tensor
from aot.kernels import tflite_cost
from aot.kernels.base import Candidate, HostOp, KernelChoice, NodeContext
from aot.kernels.tflite_int8 import (
    DSP_DW_RUN,
    DSP_NP_MAX,
    RESIDUAL_TABLE_WORDS,
    _bias,
    _conv_dsp_scratch,
    _conv_kernel,
    _conv_mve_scratch,
    _conv_params,
    _depthwise_dsp_scratch,
    _packed_scratch,
    _residual_params,
)

ALIGNMENT = 16  # the plan's (aot/plan/buffers.py): the line buffers are laid out at multiples of it


@dataclass(frozen=True)
class Layer:
    """One conv of a run along the rows: its input's h rows of in_row bytes, its output's oh rows of
    out_row bytes, window k, stride s, top padding p, dilation d."""

    h: int
    oh: int
    k: int
    s: int
    p: int
    d: int
    in_row: int
    out_row: int
    last_only: bool = False  # it may only end a run (a conv with its residual ADD fused: it reads another tensor)
    first_only: bool = False  # it may only start a run (a Transpose of a channels-first input: transpose_layer)
    # bytes at the input's start that the rows before a row free (the run's output may be written over them:
    # overlap); None: in_row per row (a row is contiguous: NHWC), else one plane's row (NCHW: only the first
    # plane's rows are at the start)
    in_free: int | None = None
    # its output's line buffer keeps no rows between bands: every row its reader needs is computed again each band
    # (the expansion of a grouped pair, grouped_pairs: its buffer holds one group of channels at a time)
    recompute: bool = False


@dataclass(frozen=True)
class Call:
    """One layer's call in one band: its input from row x_row (of the run's input for the first layer,
    of its line buffer for the others: from the buffer's top), h rows of it, pad_top, and oh rows of
    output written from row y_row (of the run's output for the last layer, of its line buffer for the
    others). oh 0: the layer has no new rows in this band and is not called."""

    x_row: int
    h: int
    pad_top: int
    y_row: int
    oh: int


@dataclass(frozen=True)
class Band:
    """Before the calls, each line buffer's rows kept from the band before move to its top: (from row,
    rows), rows 0 where none are kept."""

    keep: tuple[tuple[int, int], ...]
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class Schedule:
    rows: int  # R: rows of the run's output a band
    bands: tuple[Band, ...]
    buffer_rows: tuple[int, ...]  # per tensor between two layers, the rows its line buffer holds
    fine: bool = False  # schedule_fine's: the layers before the last a row a call, a band a pass over the layers
    # per line buffer, whether rows stay in it from one band to the next (schedule_fine's: a buffer whose rows its
    # reader takes in the band they are written holds nothing between its writer's call and the next band: the
    # node's layout may put other bytes there, _layout); None: every buffer but a recomputed layer's keeps rows
    carried: tuple[bool, ...] | None = None

    def buffer_bytes(self, layers: list[Layer]) -> list[int]:
        """Each line buffer's bytes, rounded up to the alignment (they are laid out one after another)."""
        return [-(-r * layers[k].out_row // ALIGNMENT) * ALIGNMENT for k, r in enumerate(self.buffer_rows)]


def schedule(layers: list[Layer], rows: int) -> Schedule | None:
    """The bands of `rows` rows of the last layer's output. Going from the last layer back, a layer's
    new output rows [c0, c1) need input rows [max(c0 s - p, 0), min((c1 - 1) s - p + (k - 1) d + 1, h));
    a line buffer holds the rows its reader needs in this band, of which those it held already are kept
    (moved to its top) and the rest are computed by its writer now. None where some band's rows would
    read only padding (no input row at all): such runs are not fused."""
    n = len(layers)
    held = [(0, 0)] * (n - 1)  # per line buffer, the rows of its tensor it holds from its top
    most = [0] * (n - 1)
    bands = []
    for r0 in range(0, layers[-1].oh, rows):
        new = (r0, min(r0 + rows, layers[-1].oh))  # the rows layer j computes in this band
        calls = [Call(0, 0, 0, 0, 0)] * n
        keep = [(0, 0)] * (n - 1)
        for j in range(n - 1, -1, -1):
            lay, (c0, c1) = layers[j], new
            if c1 <= c0:  # nothing new: its input's buffer keeps what it holds, where it is
                new = (0, 0)
                continue
            n0 = max(c0 * lay.s - lay.p, 0)
            n1 = min((c1 - 1) * lay.s - lay.p + (lay.k - 1) * lay.d + 1, lay.h)
            if n1 <= n0:
                return None
            y_row = c0 if j == n - 1 else c0 - held[j][0]
            calls[j] = Call(n0 if j == 0 else 0, n1 - n0, lay.p - c0 * lay.s + n0, y_row, c1 - c0)
            if j > 0:
                h0, h1 = held[j - 1]
                assert n0 >= h0, (j, n0, h0)  # bands go down the image
                kept = h1 - n0 if h1 > n0 and not layers[j - 1].recompute else 0
                keep[j - 1] = (n0 - h0, kept) if kept else (0, 0)
                held[j - 1] = (n0, n1)
                most[j - 1] = max(most[j - 1], n1 - n0)
                new = (n0 + kept, n1)
        bands.append(Band(tuple(keep), tuple(calls)))
    return Schedule(rows, tuple(bands), tuple(most))


def schedule_fine(layers: list[Layer], rows: int) -> Schedule | None:
    """The bands of `rows` rows of the last layer's output with every layer before it computing one row a call
    (issue 67): a layer's rows are pulled as its reader needs them, one row at a time, so a line buffer holds the
    rows one call of its reader reads (k rows for a k x k window at stride 1) where schedule's holds those of a
    whole band's worth of its reader's rows (MobileNetV2 224's stem output 3 rows rather than 4, its 3 x 3
    depthwise's output 1 rather than 2). A recomputed layer (Layer.recompute) still computes every row its reader
    reads in one call. The calls, in the order they are pulled, are packed into passes over the layers (each a
    Band: each layer called at most once, in order), so a band may call only the first layers and the emitter and
    the estimate take it as they take schedule's. A line buffer's keep (0, 0) leaves its rows where they are (none
    kept, or nothing dropped); its rows below those its reader's next call reads are dropped at the start of the
    pass that first writes or reads it. None where a call would read only padding."""
    n = len(layers)
    done = [0] * n  # per layer, the rows it has computed (its next row), but a recomputed layer's
    held = [(0, 0)] * (n - 1)  # per line buffer, the rows of its tensor it holds from its top
    most = [0] * (n - 1)
    carried = [False] * (n - 1)
    passes: list[tuple[list[Call | None], list[tuple[int, int] | None]]] = []
    cur: list[int] = [n]  # the last layer called in the current pass (n: start a new one)

    def slot(j: int) -> tuple[list[Call | None], list[tuple[int, int] | None]]:
        if j <= cur[0]:
            passes.append(([None] * n, [None] * (n - 1)))
        cur[0] = j
        return passes[-1]

    def settle(keeps: list[tuple[int, int] | None], k: int, first: int) -> None:
        """Buffer k's rows below `first` dropped at the pass's start, where not settled this pass already."""
        if keeps[k] is not None:
            return
        h0, h1 = held[k]
        if layers[k].recompute or first >= h1:
            keeps[k], held[k] = (0, 0), (first, first)
        elif first > h0:
            keeps[k], held[k] = (first - h0, h1 - first), (first, h1)
        else:
            keeps[k] = (0, 0)
        carried[k] = carried[k] or held[k][1] > held[k][0]

    def pull(j: int, c0: int, c1: int, need: int = 0) -> bool:
        """Layer j's rows [c0, c1) computed (a recomputed layer's all of them again), one row a call but the
        last layer's and a recomputed layer's, its reader's pending call reading from row `need` on; False where
        a call would read only padding."""
        lay = layers[j]
        whole = j == n - 1 or lay.recompute
        if not whole:
            c0 = max(c0, done[j])
        step = c1 - c0 if whole else 1
        for a in range(c0, c1, max(step, 1)):
            b = min(a + step, c1)
            n0 = max(a * lay.s - lay.p, 0)
            n1 = min((b - 1) * lay.s - lay.p + (lay.k - 1) * lay.d + 1, lay.h)
            if n1 <= n0:
                return False
            if j > 0:
                if layers[j - 1].recompute:
                    if not pull(j - 1, n0, n1, n0):
                        return False
                elif done[j - 1] < n1 and not pull(j - 1, done[j - 1], n1, n0):
                    return False
            calls, keeps = slot(j)
            x_row = n0
            if j > 0:
                settle(keeps, j - 1, n0)
                x_row = n0 - held[j - 1][0]
                assert held[j - 1][0] <= n0 and n1 <= held[j - 1][1], (j, n0, n1, held[j - 1])
            if j < n - 1:
                settle(keeps, j, need)
                if held[j][1] != a:  # a recomputed layer's buffer: its rows from its top
                    held[j] = (a, a)
                y_row = a - held[j][0]
                held[j] = (held[j][0], b)
                most[j] = max(most[j], b - held[j][0])
            else:
                y_row = a
            calls[j] = Call(x_row, n1 - n0, lay.p - a * lay.s + n0, y_row, b - a)
            done[j] = max(done[j], b)
        return True

    for r0 in range(0, layers[-1].oh, rows):
        if not pull(n - 1, r0, min(r0 + rows, layers[-1].oh)):
            return None
        cur[0] = n
    none = Call(0, 0, 0, 0, 0)
    bands = tuple(Band(tuple(k or (0, 0) for k in keeps), tuple(c or none for c in calls)) for calls, keeps in passes)
    # a buffer's rows written in a pass its reader does not call in are carried to the next (settled there)
    for calls, _ in passes:
        for k in range(n - 1):
            if calls[k] is not None and calls[k + 1] is None:
                carried[k] = True
    return Schedule(rows, bands, tuple(most), fine=True, carried=tuple(carried))


def overlap(layers: list[Layer], sched: Schedule) -> int:
    """How many bytes below the run's input its output may start (as one layer's may: the planner's
    "overlap"): a band writes its output rows after its first layer has read its input rows, and the
    bands after it read none below their first layer's first row, so the output's rows up to a band's
    end may overwrite the input below that row (a grouped pair alone: below its own band's first row too).
    A multiple of the alignment."""
    later, below = math.inf, 0
    # a grouped pair alone (its expansion reads the run's input, its depthwise writes the run's output, a group at a
    # time): the groups after the first read the band's input rows after the first wrote its output rows
    alone = len(layers) == 2 and layers[0].recompute
    for band in reversed(sched.bands):
        last, first = band.calls[-1], band.calls[0]
        if alone and first.oh:
            later = min(later, first.x_row)
        if later != math.inf:
            free = layers[0].in_row if layers[0].in_free is None else layers[0].in_free
            below = max(below, (last.y_row + last.oh) * layers[-1].out_row - int(later) * free)
        if first.oh:
            later = min(later, first.x_row)
    return -(-below // ALIGNMENT) * ALIGNMENT


def calls(sched: Schedule) -> int:
    """The kernel calls of a fused run (the per-call work is what bands add: each kernel's setup, its
    blocks cut at a band's edge)."""
    return sum(1 for band in sched.bands for c in band.calls if c.oh)


BAND_OP = "TflBandRun"
KEEP_FIELDS, CALL_FIELDS = 2, 5  # a line buffer's (from row, rows kept); a call's (x row, h, pad_top, y row, oh)


CONV_OPS = ("TflConv2D", "TflDepthwiseConv2D", "TflConv2DAdd")


def layer_of(node: Node, graph: Graph) -> Layer | None:
    """The node as a layer of a fused run: an int8 CONV_2D or DEPTHWISE_CONV_2D of one image with constant
    weights and bias (the kernels take h, pad_top and oh from their params), or a channels-first input's
    Transpose to NHWC before one (transpose_layer), else None."""
    if node.op == "Transpose":
        return transpose_layer(node, graph)
    if node.op not in ("TflConv2D", "TflDepthwiseConv2D", "TflConv2DAdd") or not node.inputs or not node.outputs:
        return None
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    weights = node.inputs[1:3]
    if x.dtype != "int8" or y.dtype != "int8" or len(x.shape) != 4 or x.shape[0] != 1 or y.size == 0 \
            or any(i and not graph.tensors[i].is_const for i in weights) \
            or any(t in graph.info.extent_root for t in (*node.inputs, node.outputs[0]) if t):
        return None
    if node.op == "TflConv2DAdd" and graph.tensors[node.inputs[3]].shape != y.shape:
        return None
    a = node.attrs
    return Layer(h=x.shape[1], oh=y.shape[1], k=a["kernel"][0], s=a["strides"][0], p=a["pads"][0],
                 d=a["dilations"][0], in_row=x.shape[2] * x.shape[3], out_row=y.shape[2] * y.shape[3],
                 last_only=node.op == "TflConv2DAdd")


def transpose_layer(node: Node, graph: Graph) -> Layer | None:
    """A Transpose of a 1 x C x H x W tensor of bytes to 1 x H x W x C (a PyTorch model's NCHW input, as
    TFLite converters keep it) read by an int8 conv as its input and written by none: it may start a run,
    each band's rows of the C planes copied channels-last into the first line buffer (no kernel call), so
    the run needs no whole NHWC copy of the image beside it. Only the first plane's rows free bytes at the
    input's start (in_free): where the run's output may start below it (overlap)."""
    if list(node.attrs.get("perm", ())) != [0, 2, 3, 1] or len(node.inputs) < 1 or not node.outputs:
        return None
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    if len(x.shape) != 4 or x.shape[0] != 1 or x.is_const or x.dtype not in ("int8", "uint8") \
            or y.dtype != x.dtype or y.size == 0 \
            or any(t in graph.info.extent_root for t in (node.inputs[0], node.outputs[0])):
        return None
    readers = [n for n in graph.nodes if node.outputs[0] in n.inputs]
    if (len(readers) != 1 or readers[0].op not in CONV_OPS or readers[0].inputs[0] != node.outputs[0]
            or any(node.inputs[0] in n.outputs for n in graph.nodes if n.op in CONV_OPS)):
        return None
    _, c, h, w = x.shape
    return Layer(h=h, oh=h, k=1, s=1, p=0, d=1, in_row=w * c * x.itemsize, out_row=w * c * x.itemsize,
                 first_only=True, in_free=w * x.itemsize)


GROUP = 16  # a grouped pair's channels a group: a multiple of the DSP and Helium paths' step of 4 channels


@dataclass(frozen=True)
class Group:
    """A grouped pair of a run (grouped_pairs): the expansion at layer k (a 1 x 1 CONV_2D) and the depthwise layer
    after it run `size` channels at a time, each group a node of its own (its weights, bias, multipliers and shifts
    the group's, made at compile time) on tensors of `size` channels (the graph's group tensors): the expansion's
    rows the depthwise needs this band into a line buffer of one group (every row computed again each band, its
    halo too), the depthwise's rows into a staging block, copied to its output's channels of the group."""

    k: int
    size: int
    pairs: tuple[tuple[Node, Node], ...]  # per group: (the expansion's node, the depthwise's)


def grouped_pairs(layers: list[Node], graph: Graph, size: int = GROUP) -> list[int]:
    """The layers k of a run where a 1 x 1 stride-1 CONV_2D (the expansion) of C output channels is read only by a
    DEPTHWISE_CONV_2D of multiplier 1 at stride 2 or more after it, C a multiple of `size` above it: the pairs a
    run may take a group of channels at a time (MobileNetV2's expansions before each stride-2 depthwise, whose
    line buffer holds k rows of all C channels; a group's, k rows of `size`). A stride-1 depthwise would compute
    the expansion's rows k times over: not taken."""
    out = []
    for k in range(len(layers) - 1):
        e, d = layers[k], layers[k + 1]
        if e.op != "TflConv2D" or d.op != "TflDepthwiseConv2D" or d.inputs[0] != e.outputs[0]:
            continue
        a, b = e.attrs, d.attrs
        y, z = graph.tensors[e.outputs[0]], graph.tensors[d.outputs[0]]
        c = y.shape[3]
        if tuple(a["kernel"]) != (1, 1) or tuple(a["strides"]) != (1, 1) or any(a["pads"]) \
                or z.shape[3] != c or c % size or c <= size or not 2 <= b["strides"][0] < b["kernel"][0] \
                or graph.tensors[e.inputs[0]].dtype != "int8":
            continue
        out.append(k)
    return out


def run_nodes(node: Node) -> list[Node]:
    """A fused run's nodes that have kernel choices: its layers, a grouped pair's each group's nodes instead."""
    own = {g.k + h: [p[h] for p in g.pairs] for g in node.attrs.get("groups", ()) for h in (0, 1)}
    return [n for k, m in enumerate(node.attrs["layers"]) for n in own.get(k, [m])]


def _per_channel(v: Any, c: int, lo: int, hi: int) -> Any:
    """An attribute's channels lo..hi where it has one per channel (c of them), else itself."""
    return list(v)[lo:hi] if isinstance(v, (list, tuple, np.ndarray)) and len(v) == c else v


def _group_nodes(graph: Graph, e: Node, d: Node, size: int) -> tuple[tuple[tuple[Node, Node], ...], dict[str, Tensor]]:
    """Each group's expansion and depthwise node and the tensors they add: the weights and biases of the group's
    channels (the depthwise's contiguous per group: its weights are [1, kh, kw, C]), its `size`-channel outputs."""
    c = graph.tensors[e.outputs[0]].shape[3]
    tensors: dict[str, Tensor] = {}
    pairs = []

    def const(name: str, data: np.ndarray) -> str:
        tensors[name] = Tensor(name, tuple(data.shape), str(data.dtype), np.ascontiguousarray(data))
        return name

    def activ(name: str, like: str) -> str:
        t = graph.tensors[like]
        tensors[name] = Tensor(name, (*t.shape[:3], size), t.dtype)
        return name

    for g in range(c // size):
        lo, hi = g * size, (g + 1) * size
        nodes = []
        for m, x in ((e, e.inputs[0]), (d, f"{e.outputs[0]}__g{g}")):
            w = graph.const(m.inputs[1])
            w = w[lo:hi] if m is e else w[..., lo:hi]
            ins = [x, const(f"{m.inputs[1]}__g{g}", np.asarray(w))]
            if len(m.inputs) > 2 and m.inputs[2]:
                ins.append(const(f"{m.inputs[2]}__g{g}", np.asarray(graph.const(m.inputs[2])).reshape(-1)[lo:hi]))
            attrs = {**{k: _per_channel(v, c, lo, hi) for k, v in m.attrs.items()}, "group_of": m.name}
            nodes.append(Node(m.op, f"{m.name}__g{g}", ins, [activ(f"{m.outputs[0]}__g{g}", m.outputs[0])], attrs,
                              m.sources()))
        pairs.append((nodes[0], nodes[1]))
    return tuple(pairs), tensors


@dataclass(frozen=True)
class BandChoice:
    """KernelChoice.detail of a fused run: its bands, each line buffer's bytes, then the kernels' scratch
    (shared: one layer runs at a time), and each layer's own choice (its tile) for its calls."""

    schedule: Schedule
    buffers: tuple[int, ...]
    kernel_scratch: int
    inner: dict[str, KernelChoice]  # by layer, a grouped pair's by each group's node (Group.pairs)
    staging: int = 0  # the grouped pairs' depthwise output of one group, before its copy to the channels of the group
    layers: tuple[str, ...] = ()  # the run's layers (inner's keys where no pair is grouped)
    extra_calls: int = 0  # the grouped layers' calls besides one a band (a call a group)
    # the node's scratch laid out by _layout (each line buffer's, the staging block's and each layer's kernel scratch
    # offset, bytes that are never live at once shared); None: the line buffers one after another, the staging
    # block, then one block of kernel scratch shared by the layers
    layout: dict[str, int] | None = None

    @property
    def calls(self) -> int:
        """The kernel calls of a run (what bands add: each call's setup, its blocks cut at a band's edge)."""
        return calls(self.schedule) + self.extra_calls

    def report(self) -> dict[str, Any]:
        """What metadata.json says of the run (aot/plan/bands.py's report)."""
        layers = list(self.layers or self.inner)
        out = {"layers": layers, "rows": self.schedule.rows, "bands": len(self.schedule.bands),
               "line_buffer_rows": list(self.schedule.buffer_rows), "line_buffer_bytes": sum(self.buffers),
               "kernel_scratch_bytes": self.kernel_scratch, "calls": self.calls, "unbanded_calls": len(layers)}
        if self.staging:
            out["staging_bytes"] = self.staging
        if self.layout is not None:  # bytes shared by buffers never live at once (_layout)
            out["shared_layout"] = True
        if self.schedule.fine:  # schedule_fine's: the layers before the last a row a call, a band a pass
            out["row_a_call"] = True
        return out


# (layer, graph it sees, budget, least) -> its kernel: aot/select.py's choose over the layer's own candidates
ChooseLayer = Callable[[Node, Graph, int, bool], KernelChoice]


def band_run(graph: Graph, i: int, j: int, choose: ChooseLayer,
             grouped: bool | int = False) -> tuple[Node, HostOp, Candidate] | None:
    """Steps i..j of the graph as one TflBandRun node (reading the run's input, the residual of a fused
    ADD ending it, and every layer's weights; writing the run's output), its op (whose output may be
    written over the residual, as the fused conv's: each element read where it is written) and its one
    kernel, whose fit sizes the bands to the budget (_fit; `choose` gives each layer's kernel). grouped: its
    grouped_pairs a group of channels at a time (Group; the node's "group_tensors" are the tensors the groups
    add, which the graph it goes into must hold), None where it has none; an int: that many channels a group
    (GROUP where True; GROUP // 2 halves the expansion's line buffer and the staging block for twice the calls)."""
    layers = graph.nodes[i:j + 1]
    name = f"bands_{layers[0].name}_to_{layers[-1].name}"
    residual = layers[-1].inputs[3:4] if layers[-1].op == "TflConv2DAdd" else []
    geometry = [layer_of(m, graph) for m in layers]
    assert all(g is not None for g in geometry), name
    groups: list[Group] = []
    added: dict[str, Tensor] = {}
    size = GROUP if grouped is True else int(grouped)
    if grouped:
        for k in grouped_pairs(layers, graph, size):
            if groups and groups[-1].k == k - 1:  # a depthwise is in one pair at most
                continue
            pairs, tensors = _group_nodes(graph, layers[k], layers[k + 1], size)
            groups.append(Group(k, size, pairs))
            added.update(tensors)
            w = graph.tensors[layers[k].outputs[0]].shape[2]
            geometry[k] = dataclasses.replace(geometry[k], out_row=w * size, recompute=True)
            geometry[k + 1] = dataclasses.replace(geometry[k + 1], in_row=w * size)
        if not groups:
            return None
        name += "_grouped" if size == GROUP else f"_grouped{size}"
    by_layer = {g.k + h: [p[h] for p in g.pairs] for g in groups for h in (0, 1)}
    ins = [layers[0].inputs[0], *residual, *[t for k, m in enumerate(layers) if m.op != "Transpose"
                                             for n in by_layer.get(k, [m]) for t in n.inputs[1:3]]]
    below = max((overlap(geometry, s) for r in range(1, geometry[-1].oh + 1)
                 for s in _schedules(geometry, r, groups)), default=None)
    one = ([*_schedules(geometry, 1, groups)] or [None])[-1]  # its least line buffers (bands.py _least_lines)
    node = Node(BAND_OP, name, ins, [layers[-1].outputs[0]],
                {"band_run": True, "layers": layers, "geometry": geometry, "overlap": below,
                 "least_lines": sum(one.buffer_bytes(geometry)) + _staging(geometry, groups, one)
                 if one is not None else None, "groups": tuple(groups), "group_tensors": added},
                tuple(s for m in layers for s in m.sources()))
    full = Graph(graph.name, graph.nodes, {**graph.tensors, **added}, graph.inputs, graph.outputs, graph.functions,
                 graph.info) if added else graph
    fits, memo = _fits_of(layers, geometry, groups)

    def fit(budget: int, least: bool) -> KernelChoice:
        if (budget, least) not in fits:
            fits[budget, least] = _fit(node, full, budget, least, choose, memo)
        return fits[budget, least]

    cand = Candidate("", lambda n, g, budget: fit(budget, False), fit_least=lambda n, g, budget: fit(budget, True))
    return node, dataclasses.replace(BAND_HOSTOP, inplace=1) if residual else BAND_HOSTOP, cand


def _fits_of(layers: list[Node], geometry: list[Layer],
             groups: list[Group]) -> tuple[dict[tuple[int, bool], KernelChoice], _RunMemo]:
    """The fits already made of this run, by budget: the planner asks again at the same budgets, and the band
    search fuses the same layers anew in every trial (a new node, the same fit: it reads the layers, their
    geometry and groups only); and its layers' kernels as _fit_kernels chose them (each budget's fit tries many
    heights and forms, their layers' calls mostly of the same rows and room). Keyed by the layer objects
    themselves (kept with the entry, so an id reused by another compile's node never finds this one's)."""
    key = (tuple(map(id, layers)), tuple(geometry), tuple((g.k, g.size, len(g.pairs)) for g in groups))
    hit = _FITS.get(key)
    if hit is None or any(a is not b for a, b in zip(hit[0], layers, strict=True)):
        if len(_FITS) >= 1024:
            _FITS.clear()
        hit = _FITS[key] = (tuple(layers), {}, _RunMemo())
    return hit[1], hit[2]


class _RunMemo:
    """What a run's fits work out again and again at other budgets, by what it depends on within the run (its
    layers, geometry and groups fixed): _fit_kernels' answer for one layer by the layer's place in the run, the rows
    of its calls, its room and `least` (its nodes' choices in order, its scratch, the calls its groups add);
    _layout's by the band height, the form (fine), the layers' scratch and lines_first; each form's schedule and
    line bytes by height (form), each layer's call shapes by schedule (call_shapes); and each layer's distinct
    choices (interned)."""

    def __init__(self) -> None:
        self.kernels: dict[tuple[int, tuple[tuple[int, int], ...], int, bool], tuple[list[KernelChoice], int, int]] = {}
        self.layouts: dict[tuple[int, bool, tuple[tuple[int, int], ...], bool], tuple[dict[str, int], int]] = {}
        self.forms: dict[tuple[bool, bool, int], tuple[Schedule, list[int], int, int] | None] = {}
        self.shapes: dict[tuple[int, bool, int], tuple[tuple[int, int], ...]] = {}
        self.choices: dict[int, list[tuple[Node, KernelChoice]]] = {}
        self.live: dict[tuple[int, bool], list[list[tuple[int, int]]]] = {}

    def interned(self, node: Node, choice: KernelChoice) -> KernelChoice:
        """The node's choice as the object an equal choice of it was first given (the choices are frozen): the
        estimates remember their terms by the choices themselves (tflite_cost._terms, _band_features), and a layer
        takes the same kernel at most of the rooms its fits give it."""
        seen = self.choices.setdefault(id(node), [])
        for n, c in seen:
            if n is node and c == choice:
                return c
        seen.append((node, choice))
        return choice

    def form(self, geometry: list[Layer], groups: tuple[Group, ...], fine: bool, packed: bool,
             rows: int) -> tuple[Schedule, list[int], int, int] | None:
        """A form's schedule of bands of `rows` rows, its line buffers' bytes, its staging block's and the bytes of
        both (packed: as _layout shares them), whatever the budget; None where the form has no such schedule (or
        nothing _layout could share)."""
        key = (fine, packed, rows)
        if key not in self.forms:
            sched = next((s for s in _schedules(geometry, rows, groups) if s.fine == fine), None)
            if sched is None or (packed and not (sched.fine or groups)):
                self.forms[key] = None
            else:
                buffers = sched.buffer_bytes(geometry)
                staging = _staging(geometry, groups, sched)
                lines = self.layout(geometry, groups, sched, buffers, staging, {})[1] if packed \
                    else sum(buffers) + staging
                self.forms[key] = (sched, buffers, staging, lines)
        return self.forms[key]

    def call_shapes(self, sched: Schedule, k: int) -> tuple[tuple[int, int], ...]:
        """Layer k's call shapes (input rows, output rows) in the bands of `sched`, fewest output rows first."""
        key = (sched.rows, sched.fine, k)
        if key not in self.shapes:
            self.shapes[key] = tuple(sorted({(c.calls[k].h, c.calls[k].oh) for c in sched.bands if c.calls[k].oh},
                                            key=lambda s: (s[1], s[0])))
        return self.shapes[key]

    def live_blocks(self, geometry: list[Layer], groups: tuple[Group, ...], sched: Schedule, buffers: list[int],
                    staging: int) -> list[list[tuple[int, int]]]:
        """_live_blocks, remembered by the schedule (its buffers and staging follow from it within the run)."""
        key = (sched.rows, sched.fine)
        if key not in self.live:
            self.live[key] = _live_blocks(geometry, groups, sched, buffers, staging)
        return self.live[key]

    def layout(self, geometry: list[Layer], groups: tuple[Group, ...], sched: Schedule, buffers: list[int],
               staging: int, scratch: dict[int, int], lines_first: bool = False) -> tuple[dict[str, int], int]:
        """_layout, remembered (a copy of its offsets: each choice keeps its own)."""
        key = (sched.rows, sched.fine, tuple(scratch.items()), lines_first)
        hit = self.layouts.get(key)
        if hit is None:
            hit = self.layouts[key] = _layout(geometry, groups, sched, buffers, staging, scratch, lines_first)
        return dict(hit[0]), hit[1]


_FITS: dict[tuple[Any, ...], tuple[tuple[Node, ...], dict[tuple[int, bool], KernelChoice], _RunMemo]] = {}


def _schedules(geometry: list[Layer], rows: int, groups: list[Group] | tuple[Group, ...]) -> list[Schedule]:
    """The schedules of bands of `rows` rows a fit tries, most memory first: schedule's, then schedule_fine's where
    its line buffers take less (a row a call before the last layer: more calls, so only where the budget leaves
    no room for schedule's at this height; without a budget no run is fused)."""
    key = (tuple(geometry), rows, tuple((g.k, g.size, len(g.pairs)) for g in groups))
    if key not in _SCHEDULES:  # the planner fits a run at many budgets, each trying every height
        out = [s for s in (schedule(geometry, rows),) if s is not None]
        fine = schedule_fine(geometry, rows)
        if fine is not None and (not out or sum(fine.buffer_bytes(geometry)) + _staging(geometry, groups, fine)
                                 < sum(out[0].buffer_bytes(geometry)) + _staging(geometry, groups, out[0])):
            out.append(fine)
        if len(_SCHEDULES) > 4096:
            _SCHEDULES.clear()
        _SCHEDULES[key] = out
    return _SCHEDULES[key]


_SCHEDULES: dict[tuple[Any, ...], list[Schedule]] = {}


def _staging(geometry: list[Layer], groups: list[Group] | tuple[Group, ...], sched: Schedule) -> int:
    """The staging block of the grouped pairs: the most rows of one group's depthwise output a band writes."""
    most = 0
    for g in groups:
        rows = max((band.calls[g.k + 1].oh for band in sched.bands), default=0)
        most = max(most, rows * geometry[g.k + 1].out_row // (g.size * len(g.pairs)) * g.size)
    return -(-most // ALIGNMENT) * ALIGNMENT


def _fit(node: Node, graph: Graph, budget: int, least: bool, choose: ChooseLayer,
         memo: _RunMemo | None = None) -> KernelChoice:
    """The band height and form whose line buffers and kernel scratch fit `budget` with the least estimated cycles
    (aot/kernels/tflite_cost.py, on the M-profile kernels it counts), else one row (the least memory; the arena
    grows). Each layer's kernel is chosen for its largest band call with what the buffers leave; its scratch is the
    most any of its calls needs at that choice. A grouped pair's layers are chosen a group at a time (each group its
    own node, on its channels). The forms in turn: schedule's bands with the node's scratch one block after another,
    then with the shared layout (_layout: no more calls), then schedule_fine's bands (a row a call before the last
    layer: more calls) one block after another, then shared; where the estimate ties (the host's kernels, which it
    does not count) the first that fits in that order, the most rows first, as before issue 67's last round. The
    estimate compares, of each form, the first height that fits and each height with fewer bands (_heights): more
    rows a band are fewer calls but less room for the kernels' blocks, which the estimate weighs (issue 67)."""
    layers, geometry = node.attrs["layers"], node.attrs["geometry"]
    groups: tuple[Group, ...] = node.attrs.get("groups", ())
    by_layer = {g.k + h: [p[h] for p in g.pairs] for g in groups for h in (0, 1)}
    fallback = None
    best: tuple[float, KernelChoice] | None = None
    memo = memo or _RunMemo()
    for fine, packed in ((False, False), (False, True), (True, False), (True, True)):
        first = True  # this form's first height that fits: tried whatever its band count
        for rows in range(geometry[-1].oh, 0, -1):
            if not first and rows not in _heights(geometry[-1].oh):
                continue
            form = memo.form(geometry, groups, fine, packed, rows)
            if form is None:
                continue
            sched, buffers, staging, lines = form
            if lines > budget and rows > 1:
                continue
            rooms: list[int | dict[int, int]] = [max(budget - lines, 0)]
            for room in rooms:
                inner, per_layer, extra = _fit_kernels(graph, layers, sched, by_layer, choose, room, least, memo)
                scratch = max(per_layer.values(), default=0)
                layout, total = memo.layout(geometry, groups, sched, buffers, staging, per_layer,
                                            isinstance(room, dict)) if packed else (None, lines + scratch)
                if isinstance(room, dict) and total > budget and len(rooms) < 3 + 2 * SHRINK:  # the blocks placed
                    rooms.append({m: max(r - (total - budget), 0) for m, r in room.items()})  # around each other took
                    # more
                assumes = {k: v for c in inner.values() for k, v in c.assumes.items()}
                out = KernelChoice("", total, BandChoice(sched, tuple(buffers), scratch, inner, staging,
                                                         tuple(m.name for m in layers), extra, layout), assumes)
                if packed and len(rooms) == 1 and _counted(out):  # then each layer's kernel given the bytes above
                    # the blocks at its calls
                    rooms.append(_rooms(geometry, groups, sched, buffers, staging, budget, memo))
                    gaps = _rooms(geometry, groups, sched, buffers, staging, budget, memo, gaps=True)
                    if gaps != rooms[-1]:  # or the widest gap between them (a layout placed from the top down)
                        rooms.append(gaps)
                if total <= budget:
                    first = False
                    cost = _estimate(node, graph, out)
                    if best is None and not cost:
                        return out  # nothing the estimate counts (the host's kernels): the first that fits, as before
                    if best is None or cost < best[0]:
                        best = (cost, out)
                    continue
                if rows == 1 and room is rooms[0] and (fallback is None or out.scratch <= fallback.scratch):
                    fallback = out  # over the budget at every height: the least at one row
    if best is not None:
        return best[1]
    assert fallback is not None, node.name
    return fallback


SHRINK = 2  # the times a fit tries each layer's room less what its layout took over the budget (_rooms)


def _rooms(geometry: list[Layer], groups: tuple[Group, ...], sched: Schedule, buffers: list[int], staging: int,
           budget: int, memo: _RunMemo, gaps: bool = False) -> dict[int, int]:
    """Per layer, the bytes of `budget` above the blocks _layout keeps live during its calls (a grouped pair's two
    layers: during either), the most its kernel's scratch may take there; the layout of them all may still need
    more (the blocks placed around each other), which the fit checks."""
    live = memo.live_blocks(geometry, groups, sched, buffers, staging)
    out = {}
    for m, blocks in enumerate(live):
        out[m] = max(budget - max((b for _, b in blocks), default=0), 0)
        if gaps:  # the widest bytes under the budget clear of them (issue 67: _layout's from the top down leaves
            # the room at the bottom)
            top = 0
            for a, b in blocks:
                out[m] = max(out[m], min(a, budget) - -(-top // ALIGNMENT) * ALIGNMENT)
                top = max(top, b)
    return out


def _live_blocks(geometry: list[Layer], groups: tuple[Group, ...], sched: Schedule, buffers: list[int],
                 staging: int) -> list[list[tuple[int, int]]]:
    """Per layer, the (start, end) bytes of the blocks _layout keeps live during its calls, in order: _rooms's
    answer at any budget."""
    at, _ = _layout(geometry, groups, sched, buffers, staging, {})
    spans = _spans(geometry, groups, sched, buffers, staging, {})
    paired = {g.k + 1: g.k for g in groups}
    return [sorted((at[name], at[name] + nbytes) for name, nbytes, lo, hi in spans
                   if lo <= paired.get(m, m) <= hi and nbytes) for m in range(len(geometry))]


def _heights(oh: int) -> frozenset[int]:
    """The fewest rows a band of each count of bands takes (ceil(oh / bands)): of the heights with as many bands,
    the one with the most room left for the kernels' blocks, and the same calls."""
    if oh not in _HEIGHTS:
        _HEIGHTS[oh] = frozenset(-(-oh // b) for b in range(1, oh + 1))
    return _HEIGHTS[oh]


_HEIGHTS: dict[int, frozenset[int]] = {}


def _estimate(node: Node, graph: Graph, choice: KernelChoice) -> float:
    """The est. cycles a fit's choice adds (aot/kernels/tflite_cost.py), on the M55's terms where its layers took
    Helium's kernels; 0 where none of its layers took the M-profile kernels the estimate is of."""
    if not _counted(choice):
        return 0.0
    isas = {getattr(c.facts, "isa", None) for c in choice.detail.inner.values()}
    return tflite_cost.estimate(node, graph, choice, helium="helium" in isas)


def _counted(choice: KernelChoice) -> bool:
    """Whether some layer of a fit's choice took the M-profile kernels (the DSP paths, Helium's) the estimate is of."""
    return any(getattr(c.facts, "isa", None) in ("m-profile", "helium") for c in choice.detail.inner.values())


def _fit_kernels(graph: Graph, layers: list[Node], sched: Schedule, by_layer: dict[int, list[Node]],
                 choose: ChooseLayer, room: int | dict[int, int], least: bool,
                 memo: _RunMemo) -> tuple[dict[str, KernelChoice], dict[int, int], int]:
    """Each layer's kernel for its largest band call with `room` bytes (what the line buffers leave; per layer
    where a dict: _rooms), each layer's kernel scratch (the most any of its calls, a grouped pair's any group's,
    needs at its choice, aligned) and the calls the groups add. `memo`: the run's (_fits_of): a layer's answer
    depends only on the layer, its calls' rows, its room and `least`."""
    inner: dict[str, KernelChoice] = {}
    per_layer: dict[int, int] = {}
    extra = 0
    for k, m in enumerate(layers):
        if m.op == "Transpose":  # a copy in the band loop: no kernel, no scratch
            inner[m.name] = KernelChoice("", 0)
            continue
        shapes = memo.call_shapes(sched, k)
        own = by_layer.get(k, [m])
        mine = room if isinstance(room, int) else room[k]
        key = (k, shapes, mine, least)
        hit = memo.kernels.get(key)
        if hit is None:
            choices: list[KernelChoice] = []
            most = 0
            for n in own:
                choice = memo.interned(n, choose(n, _band_graph(graph, n, *shapes[-1]), mine, least))
                choices.append(choice)
                most = max(most, *(_kernel_scratch(n, choice, _band_graph(graph, n, h, oh)) for h, oh in shapes))
            calls = (len(own) - 1) * sum(1 for c in sched.bands if c.calls[k].oh)
            hit = memo.kernels[key] = (choices, -(-most // ALIGNMENT) * ALIGNMENT, calls)
        inner.update(zip((n.name for n in own), hit[0], strict=True))
        per_layer[k] = hit[1]
        extra += hit[2]
    return inner, per_layer, extra


def _layout(geometry: list[Layer], groups: tuple[Group, ...] | list[Group], sched: Schedule, buffers: list[int],
            staging: int, scratch: dict[int, int], lines_first: bool = False) -> tuple[dict[str, int], int]:
    """The node's scratch with bytes never live at once shared (issue 67): within a band, layer m's kernel scratch
    is live during its calls only, a line buffer whose rows do not stay to the next band (Schedule.carried, a
    recomputed layer's) from its writer's call to its reader's, a carried one's head rows (_head) from the
    band's start to its reader's call and the rest of it through the band, the staging block during its pair's (a
    grouped pair's two layers as one: their calls alternate). Placed largest first (lines_first: the line buffers
    and staging block, then the kernels' scratch, each largest first: where each layer's kernel was sized to the
    bytes above the blocks live at its calls, _rooms), each at the lowest offset (aligned) where its parts (a carried
    buffer's head and the rest after it) are clear of those live with them. The offsets by name (line<k>, stage,
    scratch<m>; line<k>+TAIL where the head is split off) and the bytes in all."""
    below = _stage_below(geometry, groups, sched) if staging else None
    items = _spans(geometry, groups, sched, buffers, staging, scratch, below)
    tails = {name[:-len(TAIL)]: (nbytes, lo, hi) for name, nbytes, lo, hi in items if name.endswith(TAIL)}
    pairs = {f"scratch{g.k + 1}": f"scratch{g.k}" for g in groups}

    def size(t: tuple[str, int, int, int]) -> int:
        return t[1] + tails.get(t[0], (0,))[0]
    heads = [t for t in items if not t[0].endswith(TAIL)]
    at, total = _place(sorted(heads, key=lambda t: (lines_first and t[0].startswith("scratch"), -size(t))), tails)
    # from the top down, the longest lived first: where a carried buffer's head rows are dead while two blocks live
    # after its reader's call would not both fit beside its rest, the head sits between them (issue 67: the stride-2
    # depthwise's output row over the stem's head row and the 3 x 3 depthwise's output row before it)
    down, low = _place(sorted(heads, key=lambda t: (t[0].startswith("scratch"), t[2] - t[3], -size(t))), tails, True)
    if low < total:
        at, total = down, low
    at.update({b: at[a] for b, a in pairs.items() if a in at})
    if below is not None:  # _spans' one block of the staging block and the group's rows after it
        at[f"line{groups[0].k}"] = at["stage"] + below
    return at, total


def _stage_below(geometry: list[Layer], groups: tuple[Group, ...] | list[Group], sched: Schedule) -> int | None:
    """How many bytes below its group's rows (the expansion's line buffer, its input) a run's one grouped pair's
    depthwise may write its staging block (issue 67: 16 B for MobileNetV2's 3 x 3 stride-2 depthwise in groups of 8,
    whose 448 B would otherwise take bytes of their own at the pair's calls): the bound aot/kernels/tflite_int8.py's
    overlap_bytes puts on every DEPTHWISE_CONV_2D kernel, a position's outputs written after every input byte below
    them that it or a later position reads, at each call's rows and top padding (the most). None where the run has
    more than one pair (they share the staging block) or its nodes are not given."""
    if len(groups) != 1 or groups[0].pairs[0][1] is None:
        return None
    g = groups[0]
    lay, a = geometry[g.k + 1], g.pairs[0][1].attrs
    c, w = g.size, geometry[g.k + 1].in_row // g.size
    ow = lay.out_row // (g.size * len(g.pairs))
    below = 0
    for call in {(c_.oh, c_.pad_top) for band in sched.bands for c_ in band.calls[g.k + 1:g.k + 2] if c_.oh}:
        oh, top = call
        rows = np.maximum(np.arange(oh, dtype=np.int64) * lay.s - top, 0)
        cols = np.maximum(np.arange(ow, dtype=np.int64) * a["strides"][1] - a["pads"][1], 0)
        lowest = ((rows[:, None] * w + cols[None, :]) * c).ravel()
        later = np.minimum.accumulate(lowest[::-1])[::-1]
        below = max(below, int(np.max(np.arange(1, oh * ow + 1, dtype=np.int64) * c - later)))
    return -(-below // math.lcm(ALIGNMENT, c)) * math.lcm(ALIGNMENT, c)


def _place(order: list[tuple[str, int, int, int]], tails: dict[str, tuple[int, int, int]],
           down: bool = False) -> tuple[dict[str, int], int]:
    """_layout's blocks placed in `order`, each at the lowest aligned offset where its parts are clear of the blocks
    live with them (down: from the top of the bytes down, each block's parts still in their order upwards); the
    offsets by name (line<k>+TAIL too) and the bytes in all."""
    placed: list[tuple[int, int, int, int]] = []  # (offset, end, lo, hi), from the top where down
    at: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for name, nbytes, lo, hi in order:
        parts = [(0, nbytes, lo, hi)] + ([(nbytes, *tails[name])] if name in tails else [])
        sizes[name] = -(-sum(p[1] for p in parts) // ALIGNMENT) * ALIGNMENT
        if down:  # the parts from the block's top
            parts = [(sizes[name] - rel - n, n, a, b) for rel, n, a, b in parts]
        at[name] = _lowest(placed, parts)
        placed += [(at[name] + rel, at[name] + rel + n, a, b) for rel, n, a, b in parts]
    total = max((e for _, e, _, _ in placed), default=0)
    if down:  # back to offsets from the bottom, aligned: the top rounded up to the alignment
        total = -(-total // ALIGNMENT) * ALIGNMENT
        at = {name: total - o - sizes[name] for name, o in at.items()}
    for name in tails:
        if name in at:
            at[name + TAIL] = at[name] + next(n for m, n, _, _ in order if m == name)
    return at, total


TAIL = "+"  # _spans' name of a carried line buffer's rows after its head (the two parts of one block)


def _lowest(placed: list[tuple[int, int, int, int]], parts: list[tuple[int, int, int, int]]) -> int:
    """The lowest aligned offset at which each part (its offset in the block, bytes, first and last layer live)
    overlaps no placed block live with it: past every block a part overlaps, until none does."""
    offset = 0
    while True:
        bump = max((e - rel for rel, n, lo, hi in parts if n for o, e, a, b in placed
                    if a <= hi and lo <= b and o < offset + rel + n and offset + rel < e), default=None)
        if bump is None:
            return offset
        offset = -(-bump // ALIGNMENT) * ALIGNMENT


def _spans(geometry: list[Layer], groups: tuple[Group, ...] | list[Group], sched: Schedule, buffers: list[int],
           staging: int, scratch: dict[int, int], below: int | None = None) -> list[tuple[str, int, int, int]]:
    """_layout's blocks: (name, bytes, first layer, last layer whose calls it is live during); a carried line
    buffer's rows after its head (_head) a block of their own (line<k>+TAIL), placed right after the head. below:
    _stage_below's answer where the caller has it (worked out here otherwise)."""
    n = len(geometry)
    ends = {g.k: g.k + 1 for g in groups}  # a grouped pair's expansion reads as long as its depthwise
    items: list[tuple[str, int, int, int]] = []
    for k, nbytes in enumerate(buffers):
        transient = geometry[k].recompute if sched.carried is None else not sched.carried[k]
        if transient:
            items.append((f"line{k}", nbytes, k, k + 1))
            continue
        head, reader = _head(sched, k, ends.get(k + 1, k + 1), geometry[k].out_row, ends)
        head = min(head, nbytes)
        if head:
            items.append((f"line{k}", head, 0, reader))
        if nbytes > head or not head:  # (a buffer of no bytes still has its offset)
            items.append((f"line{k}{TAIL}" if head else f"line{k}", nbytes - head, 0, n - 1))
    if below is None and staging:
        below = _stage_below(geometry, groups, sched)
    if below is not None:  # the staging block and the group's rows one block (the group's rows `below` bytes in)
        line = f"line{groups[0].k}"
        items = [("stage", -(-max(below + nbytes, staging) // ALIGNMENT) * ALIGNMENT, lo, hi) if name == line
                 else (name, nbytes, lo, hi) for name, nbytes, lo, hi in items]
    elif staging:
        items.append(("stage", staging, min(g.k for g in groups), max(g.k for g in groups) + 1))
    items += [(f"scratch{m}", nbytes, m, m) for m, nbytes in scratch.items() if nbytes]
    for g in groups:  # a grouped pair's two layers take turns a group at a time: what is live at either, at both;
        # their two kernels' scratch one block (never live at once: a call at a time)
        both = [t for t in items if t[0] in (f"scratch{g.k}", f"scratch{g.k + 1}")]
        if both:
            items = [t for t in items if t not in both] + [(f"scratch{g.k}", max(t[1] for t in both), g.k, g.k)]
        items = [(name, nbytes, g.k if lo == g.k + 1 else lo, g.k + 1 if hi == g.k else hi)
                 for name, nbytes, lo, hi in items]
    return items


def _head(sched: Schedule, k: int, reader: int, row: int, ends: dict[int, int]) -> tuple[int, int]:
    """Line buffer k's head (_dead_rows): the bytes at its top and the last layer whose calls they are live during,
    at or after its reader's (a grouped pair's layers as one: `ends`); of those with some bytes free after them, the
    one freeing the most bytes for the most layers. (0, reader) where none."""
    dead = _dead_rows(sched, k)
    n = len(dead)
    best = (0, reader)
    for hi in sorted({ends.get(m, m) for m in range(reader, n - 1)}):
        rows = min(dead[hi + 1:], default=0)
        if rows * (n - 1 - hi) > best[0] // row * (n - 1 - best[1]):
            best = (rows * row, hi)
    return best


def _dead_rows(sched: Schedule, k: int) -> tuple[int, ...]:
    """Per layer, the rows at the top of line buffer k whose bytes hold nothing read later during every call of that
    layer (the buffer's rows if it is never called): what a band's start moves to the top is read by that band's
    reader, and the rows below those the next band keeps are dead from then to its start (MobileNetV2's stem output:
    3 rows, 2 kept, the first free while the layers after the 3 x 3 depthwise run, in the bands that call them). A
    backward pass over the schedule: a row is live where it is read (its reader's call, a band's move from it) before
    it is written (its writer's call, a move to it)."""
    key = (id(sched), k)
    if key not in _DEAD or _DEAD[key][0] is not sched:
        rows = sched.buffer_rows[k]
        live: set[int] = set()
        dead = [rows] * len(sched.bands[0].calls) if sched.bands else []
        for band in reversed(sched.bands):
            for j in range(len(band.calls) - 1, -1, -1):
                c = band.calls[j]
                if not c.oh:
                    continue
                if j == k + 1:
                    live.update(range(c.x_row, c.x_row + c.h))
                elif j == k:
                    live.difference_update(range(c.y_row, c.y_row + c.oh))
                dead[j] = min(dead[j], min(live, default=rows))
            src, kept = band.keep[k]
            if kept:
                live.difference_update(range(kept))
                live.update(range(src, src + kept))
        if len(_DEAD) > 4096:
            _DEAD.clear()
        _DEAD[key] = (sched, tuple(dead))
    return _DEAD[key][1]


_DEAD: dict[tuple[int, int], tuple[Schedule, tuple[int, ...]]] = {}


def _band_graph(graph: Graph, m: Node, h: int, oh: int) -> Graph:
    """The graph as layer m's call in a band sees it: its input h rows, its output oh rows."""
    tensors = dict(graph.tensors)
    for t, rows in ((m.inputs[0], h), (m.outputs[0], oh)):
        full = graph.tensors[t]
        tensors[t] = Tensor(t, (full.shape[0], rows, *full.shape[2:]), full.dtype)
    return Graph(graph.name, [m], tensors, graph.inputs, graph.outputs, graph.functions, graph.info)


def _kernel_scratch(m: Node, choice: KernelChoice, g: Graph) -> int:
    """The scratch layer m's C kernel uses on graph g's shapes at the choice's tile (what its
    *_scratch_bytes in aotc_tflite_int8.h computes from the band's params); 0 where it gets none."""
    if not choice.scratch:
        return 0
    if choice.facts.isa == "host":  # tflite_int8_packed.c's, on the band's rows
        return _packed_scratch(m, g)
    if m.op == "TflConv2DAdd":  # the ADD's tables, the conv's scratch, then a tile of its outputs (_fit_conv_add)
        if choice.facts.isa == "helium":
            return 4 * RESIDUAL_TABLE_WORDS + _conv_mve_scratch(m, g, True)
        size, tile = _conv_dsp_scratch(m, g, choice.detail or DSP_NP_MAX)
        return size + 4 * RESIDUAL_TABLE_WORDS + -(-tile * g.tensors[m.outputs[0]].shape[3] // 4) * 4
    if choice.facts.isa == "helium":
        return _conv_mve_scratch(m, g)
    if m.op == "TflDepthwiseConv2D":
        return _depthwise_dsp_scratch(m, g, choice.detail or DSP_DW_RUN)
    return _conv_dsp_scratch(m, g, choice.detail or DSP_NP_MAX)[0]


class _InnerView:
    """The emitter as a fused layer's emitter sees it: the layer's own choice (its tile) for its params."""

    def __init__(self, em: Any, inner: dict[str, KernelChoice], added: dict[str, Tensor] | None = None):
        self._em = em
        g = em.graph  # with the tensors a grouped pair's groups add (their outputs are in no plan: line buffers)
        self.graph = Graph(g.name, g.nodes, {**added, **g.tensors}, g.inputs, g.outputs, g.functions, g.info) \
            if added else g
        self.choices = {**em.choices, **inner}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._em, name)


def _emit_band_run(ctx: NodeContext) -> None:
    """The loop over the bands: each line buffer's kept rows moved to its top, then each layer's kernel
    on its rows of the band (its params copied once, h, pad_top and oh set per band), from the table of
    rows aot/plan/bands.py worked out; a grouped pair's two layers a group at a time (_emit_group)."""
    d: BandChoice = ctx.choice.detail
    layers: list[Node] = ctx.node.attrs["layers"]
    geometry: list[Layer] = ctx.node.attrs["geometry"]
    groups = {g.k: g for g in ctx.node.attrs.get("groups", ())}
    sched = d.schedule
    view = _InnerView(ctx.emitter, d.inner, ctx.node.attrs.get("group_tensors"))
    table = np.array([[v for keep in band.keep for v in keep]
                      + [v for c in band.calls for v in dataclasses.astuple(c)] for band in sched.bands], np.int64)
    assert table.size == 0 or (table.min() > -(1 << 15) and table.max() < (1 << 15)), ctx.node.name
    width = table.shape[1]
    rows = ctx.const_array("bands", table.astype(np.int16).ravel(),
                           f"per band: each line buffer's (first row kept, rows kept), then each layer's call "
                           f"(x row, h, pad_top, y row, oh): {ctx.node.name}")
    scratch = ctx.scratch("uint8_t")
    names = " -> ".join(m.name for m in layers)
    said = "".join(f"; {layers[g.k].name} and {layers[g.k + 1].name} {len(g.pairs)} groups of {g.size} channels"
                   for g in groups.values())
    if sched.fine:
        said += "; the layers before the last a row a call, pulled as their readers need them (schedule_fine)"
    slot = ctx.emitter.spare_slots(ctx.node, layers[0].inputs[0])
    out_bytes = ctx.graph.tensors[layers[-1].outputs[0]].nbytes
    kept = {k: r for k, g in groups.items() if (r := keep_rows(sched, geometry, g, slot, out_bytes)) is not None}
    said += "".join(f"; {r.bands} of its bands start {layers[k].name}'s group rows from the {r.rows} row(s) a group "
                    f"the band before kept ({r.nbytes} B in the bytes of the input it has read, keep_rows)"
                    for k, r in kept.items())
    ctx.comment(f"{names}: {len(sched.bands)} bands of {sched.rows} row(s) of the last output, full width; "
                f"line buffers of {', '.join(str(r) for r in sched.buffer_rows)} rows "
                f"({sum(d.buffers)} B) and {d.kernel_scratch} B of kernel scratch in this node's scratch "
                f"(aot/plan/bands.py){said}")
    ctx.line("{")
    residual = ""
    for k, m in enumerate(layers):
        if m.op == "Transpose" or k - 1 in groups:
            continue
        if k in groups:
            for h, tag in ((0, "e"), (1, "d")):
                nodes = [p[h] for p in groups[k].pairs]
                params = ", ".join(_conv_params(NodeContext(view, n, ctx.index)) for n in nodes)  # copied a call
                ctx.line(f"    const aotc_tfl_conv_params *const aotc_p{k}{tag}[{len(nodes)}] = {{{params}}};")
                ctx.line(f"    const int8_t *const aotc_w{k}{tag}[{len(nodes)}] = "
                         f"{{{', '.join(ctx.ptr(n.inputs[1]) for n in nodes)}}};")
                ctx.line(f"    const int32_t *const aotc_b{k}{tag}[{len(nodes)}] = "
                         f"{{{', '.join(_bias(NodeContext(view, n, ctx.index)) for n in nodes)}}};")
            continue
        inner = NodeContext(view, m, ctx.index)
        p = _conv_params(inner)
        ctx.line(f"    aotc_tfl_conv_params aotc_p{k} = {p.lstrip('&')};")
        if m.op == "TflConv2DAdd":
            residual = _residual_params(inner)
    at = 0
    lay = d.layout  # _layout's offsets, bytes never live at once shared; None: one after another
    for k, nbytes in enumerate(d.buffers):
        what = f"{sched.buffer_rows[k]} rows of {geometry[k].out_row} B" + (
            f", one group of {groups[k].size} channels" if k in groups else "")
        ctx.line(f"    int8_t *const aotc_line{k} = (int8_t *)({scratch} + {lay[f'line{k}'] if lay else at}u); "
                 f"/* {c_comment(layers[k].outputs[0])}: {what} */")
        at += nbytes
    if d.staging:
        ctx.line(f"    int8_t *const aotc_stage = (int8_t *)({scratch} + {lay['stage'] if lay else at}u); "
                 f"/* a group's depthwise output rows ({d.staging} B) */")
        at += d.staging
    ks = f"(uint32_t *)({scratch} + {at}u)" if d.kernel_scratch else "NULL"

    def own(k: int, m: Node) -> str:
        """Layer k's kernel scratch (m: the node whose choice it is: the layer's, a group's)."""
        if not d.inner[m.name].scratch:
            return "NULL"
        return f"(uint32_t *)({scratch} + {lay[f'scratch{k}']}u)" if lay else ks
    ctx.line(f"    for (int32_t aotc_b = 0; aotc_b < {len(sched.bands)}; ++aotc_b) {{")
    ctx.line(f"        const int16_t *const aotc_r = {rows} + (size_t)aotc_b * {width}u;")
    for k in range(len(d.buffers)):
        if k in groups:  # recomputed each band: nothing kept
            continue
        row = geometry[k].out_row
        ctx.line(f"        memmove(aotc_line{k}, aotc_line{k} + (size_t)aotc_r[{2 * k}] * {row}u, "
                 f"(size_t)aotc_r[{2 * k + 1}] * {row}u);")
    base = KEEP_FIELDS * len(d.buffers)
    last = len(layers) - 1
    for k, m in enumerate(layers):
        f = base + CALL_FIELDS * k
        x = ctx.ptr(m.inputs[0]) if k == 0 else f"aotc_line{k - 1}"
        y = ctx.ptr(m.outputs[0]) if k == last else f"aotc_line{k}"
        if m.op == "Transpose":
            _emit_transpose_rows(ctx, m, f, x, y, geometry[k])
            continue
        if k - 1 in groups:
            continue
        if k in groups:
            _emit_group(ctx, d, groups[k], f, x, ctx.ptr(layers[k + 1].outputs[0]) if k + 1 == last
                        else f"aotc_line{k + 1}", geometry, own(k, groups[k].pairs[0][0]),
                        own(k + 1, groups[k].pairs[0][1]), kept.get(k))
            continue
        ctx.line(f"        if (aotc_r[{f + 4}] > 0) {{ /* {c_comment(m.name)} */")
        ctx.line(f"            aotc_p{k}.h = aotc_r[{f + 1}], aotc_p{k}.pad_top = aotc_r[{f + 2}], "
                 f"aotc_p{k}.oh = aotc_r[{f + 4}];")
        at_y = f"(size_t)aotc_r[{f + 3}] * {geometry[k].out_row}u"
        add = m.op == "TflConv2DAdd"  # the ADD's params after the conv's, the residual's rows before y's
        ctx.line(f"            {_conv_kernel(m, ctx.graph)}(&aotc_p{k}, {residual + ', ' if add else ''}{x} + "
                 f"(size_t)aotc_r[{f}] * {geometry[k].in_row}u, {ctx.ptr(m.inputs[1])}, "
                 f"{_bias(NodeContext(view, m, ctx.index))}, "
                 f"{ctx.ptr(m.inputs[3]) + ' + ' + at_y + ', ' if add else ''}{y} + {at_y}, {own(k, m)});")
        ctx.line("        }")
    ctx.line("    }")
    ctx.line("}")


@dataclass(frozen=True)
class KeptRows:
    """A grouped pair's expansion rows kept from one band to the next where bytes of the run's input allow
    (keep_rows): per band, where the kept rows are (bytes from the input's start), where they were (the last
    band that saved them stored them there: moved first), how many rows the expansion need not compute again and
    how many it saves for the next band."""

    table: np.ndarray  # [bands, 4] int32: at, moved from, rows used, rows saved (zeros where the pair is not called)
    rows: int  # the most rows saved a group
    nbytes: int  # the store: rows x the group's row x the groups

    @property
    def bands(self) -> int:
        """The bands that use kept rows."""
        return int(np.count_nonzero(self.table[:, 2]))


def keep_rows(sched: Schedule, geometry: list[Layer], g: Group, input_slot: tuple[int, int, int] | None,
              output_bytes: int) -> KeptRows | None:
    """Where a grouped pair's expansion may keep its rows between bands rather than compute them again (issue 67).
    Its line buffer holds one group's rows, so each band computes every row the depthwise reads, the rows the
    band before read too (a 3 x 3 stride-2 depthwise: 3 rows for 2 new, 1.5x the expansion's work). Those rows of
    every group take `groups x rows x row` bytes the budget has no room for at the run's start; but the run reads
    its input from the top down and writes its output (half as many bytes a band in MobileNetV2's first run) over
    the rows read, so the bytes between the output written and the input still to read grow band by band. From
    the band where they hold the store, the store sits at the top of that gap (moved up each band the pair runs)
    and the expansion computes only the rows it has not kept. `input_slot`: the run's input's (offset, bytes) and
    the output's offset in the arena (ModelEmitter.spare_slots), None where the input's bytes are not the run's
    to reuse; `output_bytes`: the output's. None where no band can keep a row."""
    k = g.k
    e, dw = geometry[k], geometry[k + 1]
    if input_slot is None or geometry[0].first_only or geometry[0].in_free is not None \
            or (e.k, e.s, e.p, e.d) != (1, 1, 0, 1):
        return None
    in_off, in_bytes, out_off = input_slot
    bands = sched.bands
    # the depthwise's input rows each band the pair runs: the rows the expansion computes (all of them: recompute)
    ranges: dict[int, tuple[int, int]] = {}
    c0 = 0
    for b, band in enumerate(bands):
        ce, cd = band.calls[k], band.calls[k + 1]
        if not cd.oh:
            continue
        c1 = c0 + cd.oh
        n0 = max(c0 * dw.s - dw.p, 0)
        n1 = min((c1 - 1) * dw.s - dw.p + (dw.k - 1) * dw.d + 1, dw.h)
        if (ce.oh, ce.h, ce.pad_top, ce.y_row, cd.x_row, cd.h) != (n1 - n0, n1 - n0, 0, 0, 0, n1 - n0):
            return None  # not the recomputing pair this assumes
        ranges[b] = (n0, n1)
        c0 = c1
    pair = sorted(ranges)
    overlaps = [max(0, ranges[a][1] - ranges[b][0]) for a, b in itertools.pairwise(pair)]
    if not any(overlaps) or any(ranges[b][0] < ranges[a][0] or ov >= ranges[b][1] - ranges[b][0]
                                for (a, b), ov in zip(itertools.pairwise(pair), overlaps, strict=True)):
        return None
    rows = max(overlaps)
    store = rows * e.out_row * len(g.pairs)
    # per band: the input's bytes no band from it on reads (its first layer's rows before the least it reads)
    dead, least = [0] * len(bands), in_bytes
    for b in range(len(bands) - 1, -1, -1):
        first = bands[b].calls[0]
        if first.oh:
            least = min(least, first.x_row * geometry[0].in_row)
        dead[b] = least
    # per band: the output's bytes written by its end
    written, most = [0] * len(bands), 0
    for b, band in enumerate(bands):
        last = band.calls[-1]
        if last.oh:
            most = max(most, (last.y_row + last.oh) * geometry[-1].out_row)
        written[b] = min(most, output_bytes)
    at: dict[int, int | None] = {}
    for i, b in enumerate(pair):
        until = pair[i + 1] - 1 if i + 1 < len(pair) else len(bands) - 1  # the store stays here until then
        s = (in_off + dead[b] - store) // ALIGNMENT * ALIGNMENT
        clear = s + store <= out_off or out_off + written[until] <= s
        at[b] = s - in_off if s >= in_off and clear else None
    table = np.zeros((len(bands), 4), np.int64)
    for i, (a, b) in enumerate(itertools.pairwise(pair)):
        if at[a] is None or at[b] is None or not overlaps[i]:
            continue
        table[a, 0], table[a, 3] = at[a], overlaps[i]  # a saves its last rows
        table[b, 0], table[b, 1], table[b, 2] = at[b], at[a], overlaps[i]  # b moves them up and starts with them
    if not table[:, 2].any():
        return None
    return KeptRows(table.astype(np.int32), rows, store)


def _emit_group(ctx: NodeContext, d: BandChoice, g: Group, f: int, x: str, y: str, geometry: list[Layer],
                own_e: str, own_d: str, kept: KeptRows | None = None) -> None:
    """A grouped pair's calls in a band (Group): per group, the expansion's rows the depthwise needs (all of them:
    its line buffer keeps none) from x into its line buffer of one group, the depthwise's new rows into the staging
    block, then copied to the group's channels of its output rows in y. With `kept` (keep_rows), a band's first
    rows of each group come from the store the band before saved them to, and the expansion computes the rest."""
    k, fd = g.k, f + CALL_FIELDS
    e, dw = g.pairs[0]
    ow_c = geometry[k + 1].out_row
    row = geometry[k].out_row
    layer_e, layer_d = ctx.node.attrs["layers"][k:k + 2]
    c = ow_c // ctx.graph.tensors[layer_d.outputs[0]].shape[2]
    ctx.line(f"        if (aotc_r[{fd + 4}] > 0) {{ /* {c_comment(layer_e.name)} and {c_comment(layer_d.name)}, "
             f"{len(g.pairs)} groups of {g.size} channels */")
    ctx.line(f"            int8_t *const aotc_y = {y} + (size_t)aotc_r[{fd + 3}] * {ow_c}u;")
    ctx.line(f"            const int32_t aotc_n = aotc_r[{fd + 4}] * {ow_c // c};")
    u = ""
    if kept is not None:
        table = ctx.const_array("kept", kept.table.ravel(),
                                f"per band: where {layer_e.name}'s kept rows are and were (bytes from the run's "
                                "input), the rows used and saved a group (keep_rows)")
        base = f"(int8_t *){ctx.ptr(ctx.node.attrs['layers'][0].inputs[0])}"
        ctx.line(f"            const int32_t *const aotc_kt = {table} + (size_t)aotc_b * 4u;")
        ctx.line(f"            int8_t *const aotc_keep = {base} + aotc_kt[0]; "
                 f"/* each group's {kept.rows} row(s) kept from the band before */")
        ctx.line("            const int32_t aotc_u = aotc_kt[2], aotc_v = aotc_kt[3];")
        ctx.line(f"            if (aotc_u > 0 && aotc_kt[1] != aotc_kt[0]) memmove(aotc_keep, {base} + aotc_kt[1], "
                 f"{kept.nbytes}u); /* up to where the input is read now */")
        u = " - aotc_u"
    ctx.line(f"            for (int32_t aotc_g = 0; aotc_g < {len(g.pairs)}; ++aotc_g) {{")
    ctx.line(f"                aotc_tfl_conv_params aotc_q = *aotc_p{k}e[aotc_g];")
    if kept is not None:
        ctx.line(f"                memcpy(aotc_line{k}, aotc_keep + (size_t)aotc_g * {kept.rows * row}u, "
                 f"(size_t)aotc_u * {row}u);")
    ctx.line(f"                aotc_q.h = aotc_r[{f + 1}]{u}, aotc_q.pad_top = aotc_r[{f + 2}], "
             f"aotc_q.oh = aotc_r[{f + 4}]{u};")
    shift = " + aotc_u" if kept is not None else ""
    ctx.line(f"                {_conv_kernel(layer_e, ctx.graph)}(&aotc_q, {x} + (size_t)(aotc_r[{f}]{shift}) * "
             f"{geometry[k].in_row}u, aotc_w{k}e[aotc_g], aotc_b{k}e[aotc_g], aotc_line{k} + "
             f"(size_t)(aotc_r[{f + 3}]{shift}) * {row}u, {own_e});")
    ctx.line(f"                aotc_q = *aotc_p{k}d[aotc_g];")
    ctx.line(f"                aotc_q.h = aotc_r[{fd + 1}], aotc_q.pad_top = aotc_r[{fd + 2}], "
             f"aotc_q.oh = aotc_r[{fd + 4}];")
    ctx.line(f"                {_conv_kernel(layer_d, ctx.graph)}(&aotc_q, aotc_line{k}, "
             f"aotc_w{k}d[aotc_g], aotc_b{k}d[aotc_g], aotc_stage, {own_d});")
    ctx.line("                for (int32_t aotc_i = 0; aotc_i < aotc_n; ++aotc_i) {")
    ctx.line(f"                    memcpy(aotc_y + (size_t)aotc_i * {c}u + (size_t)aotc_g * {g.size}u, "
             f"aotc_stage + (size_t)aotc_i * {g.size}u, {g.size}u);")
    ctx.line("                }")
    if kept is not None:
        ctx.line(f"                memcpy(aotc_keep + (size_t)aotc_g * {kept.rows * row}u, aotc_line{k} + "
                 f"(size_t)(aotc_r[{f + 4}] - aotc_v) * {row}u, (size_t)aotc_v * {row}u); /* for the next band */")
    ctx.line("            }")
    ctx.line("        }")


def _emit_transpose_rows(ctx: NodeContext, m: Node, f: int, x: str, y: str, lay: Layer) -> None:
    """A Transpose layer's call (transpose_layer): the band's h rows of each of the C planes from row x_row,
    written channels-last from row y_row of its line buffer."""
    _, c, h, w = ctx.graph.tensors[m.inputs[0]].shape
    ctx.line(f"        if (aotc_r[{f + 4}] > 0) {{ /* {c_comment(m.name)}: {c} planes to channels-last */")
    ctx.line(f"            const int8_t *const aotc_s = (const int8_t *){x} + (size_t)aotc_r[{f}] * {w}u;")
    ctx.line(f"            int8_t *const aotc_d = (int8_t *){y} + (size_t)aotc_r[{f + 3}] * {lay.out_row}u;")
    ctx.line(f"            for (int32_t aotc_i = 0; aotc_i < aotc_r[{f + 1}] * {w}; ++aotc_i) {{")
    ctx.line(f"                for (int32_t aotc_c = 0; aotc_c < {c}; ++aotc_c) {{")
    ctx.line(f"                    aotc_d[aotc_i * {c} + aotc_c] = aotc_s[(size_t)aotc_c * {h * w}u + (size_t)aotc_i];")
    ctx.line("                }")
    ctx.line("            }")
    ctx.line("        }")


def _overlap(node: Node, graph: Graph) -> int | None:
    """How far below the run's input its output may start: the most any band height allows (the
    bands are chosen after the overlap), aot/plan/bands.py overlap."""
    return node.attrs.get("overlap")


BAND_HOSTOP = HostOp(emit=_emit_band_run, family="tflite_int8", dtypes=("int8",), overlap=_overlap)
