"""A run of TFLite int8 CONV_2D / DEPTHWISE_CONV_2D layers fused in row bands (issue 53,
docs/fused-tiles.md): one node (TflBandRun) standing for the layers, whose scratch holds the line
buffers between them and the kernels' own scratch, and whose C is a loop over the bands calling the
layers' kernels unchanged, each on the rows of its band (x, h, pad_top, oh and y set per band from a
table). The geometry is aot/plan/bands.py's; the planner fuses a run only where a --ram-budget cannot
be met otherwise (plan_with_bands), and this module's fit picks the band height: the most rows whose
buffers and scratch fit the memory the step can spare (fewest calls), down to one row."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from aot.csource.format import c_comment
from aot.ir import Graph, Node, Tensor
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
    _residual_params,
)
from aot.plan.bands import Layer, Schedule, overlap, schedule
from aot.plan.buffers import ALIGNMENT

BAND_OP = "TflBandRun"
KEEP_FIELDS, CALL_FIELDS = 2, 5  # a line buffer's (from row, rows kept); a call's (x row, h, pad_top, y row, oh)


def layer_of(node: Node, graph: Graph) -> Layer | None:
    """The node as a layer of a fused run: an int8 CONV_2D or DEPTHWISE_CONV_2D of one image with constant
    weights and bias (the kernels take h, pad_top and oh from their params), else None."""
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


@dataclass(frozen=True)
class BandChoice:
    """KernelChoice.detail of a fused run: its bands, each line buffer's bytes, then the kernels' scratch
    (shared: one layer runs at a time), and each layer's own choice (its tile) for its calls."""

    schedule: Schedule
    buffers: tuple[int, ...]
    kernel_scratch: int
    inner: dict[str, KernelChoice]


def fuse(graph: Graph, i: int, j: int, selection: dict[str, Any]) -> Graph:
    """The graph with steps i..j one TflBandRun node (reading the run's input and every layer's weights,
    writing the run's output), its kernel entered in `selection` (the layers' own entries stay: the
    band's fit asks them for each layer's kernel)."""
    from aot.select import NodeKernels, choose  # select imports the planner, which this module's callers use

    layers = graph.nodes[i:j + 1]
    name = f"bands_{layers[0].name}_to_{layers[-1].name}"
    residual = layers[-1].inputs[3:4] if layers[-1].op == "TflConv2DAdd" else []  # read at the rows written
    ins = [layers[0].inputs[0], *residual, *[t for m in layers for t in m.inputs[1:3]]]
    geometry = [layer_of(m, graph) for m in layers]
    assert all(g is not None for g in geometry), name
    below = max((overlap(geometry, s) for r in range(1, geometry[-1].oh + 1)
                 if (s := schedule(geometry, r)) is not None), default=None)
    node = Node(BAND_OP, name, ins, [layers[-1].outputs[0]],
                {"band_run": True, "layers": layers, "geometry": geometry, "overlap": below},
                tuple(s for m in layers for s in m.sources()))
    kernels = {m.name: selection[m.name] for m in layers}

    @functools.lru_cache(maxsize=256)
    def fit(budget: int, least: bool) -> KernelChoice:
        return _fit(node, graph, budget, least, kernels, choose)

    cand = Candidate("", lambda n, g, budget: fit(budget, False), fit_least=lambda n, g, budget: fit(budget, True))
    traits = kernels[layers[0].name].traits
    # the output may be written over the residual, as the fused conv's is (each element read where it is written)
    op = dataclasses.replace(BAND_HOSTOP, inplace=1) if residual else BAND_HOSTOP
    selection[name] = NodeKernels(op, (cand,), traits)
    return Graph(graph.name, [*graph.nodes[:i], node, *graph.nodes[j + 1:]], graph.tensors, graph.inputs,
                 graph.outputs, graph.functions, graph.info)


def _fit(node: Node, graph: Graph, budget: int, least: bool, kernels: dict[str, Any], choose: Any) -> KernelChoice:
    """The most rows a band whose line buffers and kernel scratch fit `budget` (the fewest calls), else
    one row (the least memory; the arena grows). Each layer's kernel is chosen for its largest band call
    with what the buffers leave; its scratch is the most any of its calls needs at that choice."""
    layers, geometry = node.attrs["layers"], node.attrs["geometry"]
    fallback = None
    for rows in range(geometry[-1].oh, 0, -1):
        sched = schedule(geometry, rows)
        if sched is None:
            continue
        buffers = sched.buffer_bytes(geometry)
        lines = sum(buffers)
        if lines > budget and rows > 1:
            continue
        inner, scratch = {}, 0
        for k, m in enumerate(layers):
            shapes = sorted({(c.calls[k].h, c.calls[k].oh) for c in sched.bands if c.calls[k].oh},
                            key=lambda s: (s[1], s[0]))
            g0 = _band_graph(graph, m, *shapes[-1])
            choice = choose(m, g0, kernels[m.name], max(budget - lines, 0), least)
            inner[m.name] = choice
            scratch = max(scratch, *(_kernel_scratch(m, choice, _band_graph(graph, m, h, oh)) for h, oh in shapes))
        scratch = -(-scratch // ALIGNMENT) * ALIGNMENT
        assumes = {k: v for c in inner.values() for k, v in c.assumes.items()}
        out = KernelChoice("", lines + scratch, BandChoice(sched, tuple(buffers), scratch, inner), assumes)
        if lines + scratch <= budget:
            return out
        fallback = out
    assert fallback is not None, node.name
    return fallback


def _band_graph(graph: Graph, m: Node, h: int, oh: int) -> Graph:
    """The graph as layer m's call in a band sees it: its input h rows, its output oh rows."""
    tensors = dict(graph.tensors)
    for t, rows in ((m.inputs[0], h), (m.outputs[0], oh)):
        full = graph.tensors[t]
        tensors[t] = Tensor(t, (full.shape[0], rows, *full.shape[2:]), full.dtype)
    return Graph(graph.name, [m], tensors, graph.inputs, graph.outputs, graph.functions, graph.info)


def _kernel_scratch(m: Node, choice: KernelChoice, g: Graph) -> int:
    """The scratch layer m's C kernel uses on graph g's shapes at the choice's tile (what its
    *_dsp_scratch_bytes in aotc_tflite_int8.h computes from the band's params); 0 where it gets none."""
    if not choice.scratch:
        return 0
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

    def __init__(self, em: Any, inner: dict[str, KernelChoice]):
        self._em = em
        self.graph = em.graph
        self.choices = {**em.choices, **inner}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._em, name)


def _emit_band_run(ctx: NodeContext) -> None:
    """The loop over the bands: each line buffer's kept rows moved to its top, then each layer's kernel
    on its rows of the band (its params copied once, h, pad_top and oh set per band), from the table of
    rows aot/plan/bands.py worked out."""
    d: BandChoice = ctx.choice.detail
    layers: list[Node] = ctx.node.attrs["layers"]
    geometry: list[Layer] = ctx.node.attrs["geometry"]
    sched = d.schedule
    view = _InnerView(ctx.emitter, d.inner)
    table = np.array([[v for keep in band.keep for v in keep]
                      + [v for c in band.calls for v in dataclasses.astuple(c)] for band in sched.bands], np.int64)
    assert table.size == 0 or (table.min() > -(1 << 15) and table.max() < (1 << 15)), ctx.node.name
    width = table.shape[1]
    rows = ctx.const_array("bands", table.astype(np.int16).ravel(),
                           f"per band: each line buffer's (first row kept, rows kept), then each layer's call "
                           f"(x row, h, pad_top, y row, oh): {ctx.node.name}")
    scratch = ctx.scratch("uint8_t")
    names = " -> ".join(m.name for m in layers)
    ctx.comment(f"{names}: {len(sched.bands)} bands of {sched.rows} row(s) of the last output, full width; "
                f"line buffers of {', '.join(str(r) for r in sched.buffer_rows)} rows "
                f"({sum(d.buffers)} B) and {d.kernel_scratch} B of kernel scratch in this node's scratch "
                "(aot/plan/bands.py)")
    ctx.line("{")
    residual = ""
    for k, m in enumerate(layers):
        inner = NodeContext(view, m, ctx.index)
        p = _conv_params(inner)
        ctx.line(f"    aotc_tfl_conv_params aotc_p{k} = {p.lstrip('&')};")
        if m.op == "TflConv2DAdd":
            residual = _residual_params(inner)
    at = 0
    for k, nbytes in enumerate(d.buffers):
        ctx.line(f"    int8_t *const aotc_line{k} = (int8_t *)({scratch} + {at}u); "
                 f"/* {c_comment(layers[k].outputs[0])}: {sched.buffer_rows[k]} rows of {geometry[k].out_row} B */")
        at += nbytes
    ks = f"(uint32_t *)({scratch} + {at}u)" if d.kernel_scratch else "NULL"
    ctx.line(f"    for (int32_t aotc_b = 0; aotc_b < {len(sched.bands)}; ++aotc_b) {{")
    ctx.line(f"        const int16_t *const aotc_r = {rows} + (size_t)aotc_b * {width}u;")
    for k in range(len(d.buffers)):
        row = geometry[k].out_row
        ctx.line(f"        memmove(aotc_line{k}, aotc_line{k} + (size_t)aotc_r[{2 * k}] * {row}u, "
                 f"(size_t)aotc_r[{2 * k + 1}] * {row}u);")
    base = KEEP_FIELDS * len(d.buffers)
    last = len(layers) - 1
    for k, m in enumerate(layers):
        f = base + CALL_FIELDS * k
        x = ctx.ptr(m.inputs[0]) if k == 0 else f"aotc_line{k - 1}"
        y = ctx.ptr(m.outputs[0]) if k == last else f"aotc_line{k}"
        own = ks if d.inner[m.name].scratch else "NULL"
        ctx.line(f"        if (aotc_r[{f + 4}] > 0) {{ /* {c_comment(m.name)} */")
        ctx.line(f"            aotc_p{k}.h = aotc_r[{f + 1}], aotc_p{k}.pad_top = aotc_r[{f + 2}], "
                 f"aotc_p{k}.oh = aotc_r[{f + 4}];")
        at_y = f"(size_t)aotc_r[{f + 3}] * {geometry[k].out_row}u"
        add = m.op == "TflConv2DAdd"  # the ADD's params after the conv's, the residual's rows before y's
        ctx.line(f"            {_conv_kernel(m, ctx.graph)}(&aotc_p{k}, {residual + ', ' if add else ''}{x} + "
                 f"(size_t)aotc_r[{f}] * {geometry[k].in_row}u, {ctx.ptr(m.inputs[1])}, "
                 f"{_bias(NodeContext(view, m, ctx.index))}, "
                 f"{ctx.ptr(m.inputs[3]) + ' + ' + at_y + ', ' if add else ''}{y} + {at_y}, {own});")
        ctx.line("        }")
    ctx.line("    }")
    ctx.line("}")


def _overlap(node: Node, graph: Graph) -> int | None:
    """How far below the run's input its output may start: the most any band height allows (the
    bands are chosen after the overlap), aot/plan/bands.py overlap."""
    return node.attrs.get("overlap")


BAND_HOSTOP = HostOp(emit=_emit_band_run, family="tflite_int8", dtypes=("int8",), overlap=_overlap)
