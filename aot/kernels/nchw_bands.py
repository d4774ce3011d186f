"""Row bands for the ONNX route's convs (issue 53, docs/fused-tiles.md "The ONNX route"): a run of
QLinearConv (the QDQ and QOperator int8 convs, depthwise or not) or float Conv layers, NCHW, fused into one
node that computes R rows of the run's last output at a time across all channels.

The rows each layer computes per band, and the line buffers between layers (the rows the next band reads
again kept, nothing computed twice), are aot/kernels/tflite_bands.py's schedule: a row of an NCHW tensor
"across all channels" is C x W elements, so the geometry is the same. What differs is the layout: a band of
rows of an NCHW tensor is C pieces a plane apart, and the kernels take the plane stride from their params
(in_h x in_w). So each call runs on a compact copy: its input rows gathered (from the run's input or the
line buffer, C x cap x W) into a staging block C x h x W, the layer's own kernel (chosen and emitted by its
op, unchanged, on a graph whose tensors are the band's shapes and whose pads are the band's) writing
M x oh x OW into the staging block after it, then scattered to the line buffer or the run's output. The
kernels do not change; each distinct band shape of a layer (first band, middle ones, last) gets its own
params and call, its kernel chosen for that shape at what the step spares.

Integer convs give identical results whichever kernel runs them; a float conv's result depends on its
kernel's order of operations, so a float layer's band calls take only the kernel its whole-tensor call
takes at the same memory (and a run whose band shapes that kernel does not take is not fused)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from aot.csource.format import C_TYPES, c_comment
from aot.ir import Graph, Node, Tensor
from aot.ir.schemas import reads_nhwc, writes_nhwc
from aot.kernels.base import Candidate, HostOp, KernelChoice, NodeContext
from aot.kernels.tflite_bands import ALIGNMENT, Layer, Schedule, calls, schedule

BAND_OP = "NchwBandRun"
OPS = ("QLinearConv", "QLinearConvAdd", "Conv", "FusedConv")
RESIDUAL = 9  # QLinearConvAdd's residual input (aot/kernels/quant.py _emit_qconv_add)
CALL_FIELDS = 6  # a call's (x row, h, pad_top, y row, oh, shape): shape indexes the layer's band shapes
KEEP_FIELDS = 4  # a line buffer's (first row kept, rows kept, plane pitch in rows before, plane pitch now)

Shape = tuple[int, int, int]  # a call's (h, pad_top, oh)


def _align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def _nhwc_to_nchw(node: Node, graph: Graph) -> bool:
    """A Transpose of a channels-last image to NCHW (a Keras export's input) whose input no NCHW conv writes: it
    may start a run (its rows are the image's rows), copied straight into the first line buffer."""
    if node.op != "Transpose" or list(node.attrs.get("perm", ())) != [0, 3, 1, 2]:
        return False
    x = graph.tensors[node.inputs[0]]
    if len(x.shape) != 4 or x.shape[0] != 1 or x.is_const or x.dtype not in ("int8", "uint8", "float32"):
        return False
    return not any(n.op in OPS and node.inputs[0] in n.outputs for n in graph.nodes)


def layer_of(node: Node, graph: Graph) -> Layer | None:
    """The node as a layer of a fused NCHW run: a 2-D QLinearConv (8-bit) or float Conv of one image, NCHW in and
    out, constant weights (and scales, zero points, bias), no fused residual; or a Transpose of a channels-last
    input to NCHW, which may only start a run; else None."""
    if not node.inputs or not node.outputs or not node.outputs[0] or any(
            t in graph.info.extent_root for t in (node.inputs[0], node.outputs[0])):
        return None
    if _nhwc_to_nchw(node, graph):
        x = graph.tensors[node.inputs[0]]
        return Layer(h=x.shape[1], oh=x.shape[1], k=1, s=1, p=0, d=1, in_row=x.shape[2] * x.shape[3] * x.itemsize,
                     out_row=x.shape[2] * x.shape[3] * x.itemsize)
    if node.op not in OPS:
        return None
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    a = node.attrs
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != 1 or y.size == 0 or len(a.get("kernel_shape", ())) != 2:
        return None
    consts = node.inputs[1:]
    if node.op in ("QLinearConv", "QLinearConvAdd"):
        if x.dtype not in ("int8", "uint8") or y.dtype != x.dtype:
            return None
        if node.op == "QLinearConvAdd":  # may only end a run: it reads its residual at the rows it writes
            res = graph.tensors[node.inputs[RESIDUAL]]
            if res.shape != y.shape or res.dtype != y.dtype:
                return None
            consts = [*node.inputs[1:RESIDUAL], *node.inputs[RESIDUAL + 1:]]
    else:
        if x.dtype != "float32" or y.dtype != "float32" or reads_nhwc(node) or writes_nhwc(node):
            return None
        consts = node.inputs[1:3]
        if any(node.inputs[3:]):  # a fused residual: read at other rows than the band's
            return None
    if any(t and not graph.tensors[t].is_const for t in consts):
        return None
    return Layer(h=x.shape[2], oh=y.shape[2], k=a["kernel_shape"][0], s=a["strides"][0], p=a["pads"][0],
                 d=a["dilations"][0], in_row=x.shape[1] * x.shape[3] * x.itemsize,
                 out_row=y.shape[1] * y.shape[3] * y.itemsize, last_only=node.op == "QLinearConvAdd")


def band_node(m: Node, graph: Graph, shape: Shape) -> tuple[Node, Graph]:
    """Layer m and the graph as its call on a band sees them: its input h rows, its output oh rows, its top
    pad the band's and its bottom pad what makes oh rows (the kernels read the start pads only)."""
    h, top, oh = shape
    a = m.attrs
    k, s, d = a["kernel_shape"][0], a["strides"][0], a["dilations"][0]
    pads = list(a["pads"])
    pads[0], pads[2] = top, max((oh - 1) * s + (k - 1) * d + 1 - h - top, 0)
    tensors = dict(graph.tensors)
    residual = [(m.inputs[RESIDUAL], oh)] if m.op == "QLinearConvAdd" else []
    for t, rows in ((m.inputs[0], h), (m.outputs[0], oh), *residual):
        full = graph.tensors[t]
        tensors[t] = Tensor(t, (full.shape[0], full.shape[1], rows, full.shape[3]), full.dtype)
    node = Node(m.op, m.name, m.inputs, m.outputs, {**a, "pads": pads}, m.origin)
    return node, Graph(graph.name, [node], tensors, graph.inputs, graph.outputs, graph.functions, graph.info)


@dataclass(frozen=True)
class NchwBandChoice:
    """KernelChoice.detail of a fused NCHW run: its bands; each line buffer's bytes; the staging block
    (the largest of any layer's staged input band then output band; `stage_in`: per layer where its output
    band starts in it; `direct`: per layer whether it writes straight into its line buffer); the kernels'
    scratch after it (one layer runs at a time); per layer its band shapes and the kernel chosen for each."""

    schedule: Schedule
    buffers: tuple[int, ...]
    stage_in: tuple[int, ...]
    direct: tuple[bool, ...]
    stage: int
    kernel_scratch: int
    shapes: tuple[tuple[Shape, ...], ...]
    inner: dict[str, tuple[KernelChoice, ...]]

    @property
    def calls(self) -> int:
        """The kernel calls of the run (what bands add: each call's setup and its copies in and out)."""
        return calls(self.schedule)

    def report(self) -> dict[str, Any]:
        """What metadata.json says of the run (aot/plan/bands.py's report)."""
        return {"layers": list(self.inner), "rows": self.schedule.rows, "bands": len(self.schedule.bands),
                "line_buffer_rows": list(self.schedule.buffer_rows), "line_buffer_bytes": sum(self.buffers),
                "staging_bytes": self.stage, "kernel_scratch_bytes": self.kernel_scratch, "calls": self.calls,
                "unbanded_calls": len(self.inner),
                "kernels": {m: sorted({c.kernel for c in cs}) for m, cs in self.inner.items()}}


# (layer as a band call sees it, its graph, budget, least, the C function it must run or None: any) -> its
# kernel, or None where none of the layer's candidates takes the shape (aot/select.py: the layer's own
# candidates that apply on the band's shapes)
ChooseShape = Callable[[Node, Graph, int, bool, str | None], KernelChoice | None]


def band_run(graph: Graph, i: int, j: int, choose: ChooseShape, op_of: Callable[[Node], HostOp],
             whole: Callable[[Node], str | None]) -> tuple[Node, HostOp, Candidate]:
    """Steps i..j of the graph as one NchwBandRun node (reading the run's input and every layer's constants,
    writing the run's output), its op and its one kernel, whose fit sizes the bands to the budget (_fit).
    `whole`: the kernel a float layer takes on its whole tensors (its band calls must take the same)."""
    layers = graph.nodes[i:j + 1]
    name = f"bands_{layers[0].name}_to_{layers[-1].name}"
    ins = list(dict.fromkeys([layers[0].inputs[0], *(t for m in layers for t in m.inputs[1:] if t)]))  # + residual
    geometry = [layer_of(m, graph) for m in layers]
    assert all(g is not None for g in geometry), name
    ops = [op_of(m) for m in layers]
    family = next(op.family for m, op in zip(layers, ops, strict=True) if m.op in OPS)
    needs = tuple(dict.fromkeys(f for op in ops for f in (op.family, *op.needs) if f != family))
    floats = {m.name: whole(m) for m in layers if graph.tensors[m.inputs[0]].dtype == "float32" and m.op in OPS}
    node = Node(BAND_OP, name, ins, [layers[-1].outputs[0]],
                {"band_run": True, "layers": layers, "geometry": geometry, "ops": ops, "kernels": floats},
                tuple(s for m in layers for s in m.sources()))
    fits: dict[tuple[int, bool], KernelChoice] = {}  # the planner asks again at the same budgets

    def fit(budget: int, least: bool) -> KernelChoice:
        if (budget, least) not in fits:
            fits[budget, least] = _fit(node, graph, budget, least, choose)
        return fits[budget, least]

    cand = Candidate("", lambda n, g, budget: fit(budget, False), fit_least=lambda n, g, budget: fit(budget, True))
    op = HostOp(emit=_emit_band_run, family=family, needs=needs,
                dtypes=(graph.tensors[layers[0].inputs[0]].dtype,))
    return node, op, cand


def _shapes(sched: Schedule, k: int) -> tuple[Shape, ...]:
    """Layer k's distinct call shapes in the bands, in order of first use."""
    return tuple(dict.fromkeys((c.calls[k].h, c.calls[k].pad_top, c.calls[k].oh)
                               for c in sched.bands if c.calls[k].oh))


def _direct(sched: Schedule, n: int) -> tuple[bool, ...]:
    """Per layer whether its output rows are, in every band it runs, exactly the rows its reader reads (a 1 x 1
    reader at stride 1, no rows kept): it writes them straight into the line buffer, without staging."""
    return tuple(k < n - 1 and all(not b.calls[k].oh or (b.calls[k].y_row == 0 and b.calls[k + 1].h == b.calls[k].oh
                                                          and not b.keep[k][1]) for b in sched.bands)
                 for k in range(n))


def _pitches(sched: Schedule) -> list[list[tuple[int, int]]]:
    """Per band, per line buffer: its plane pitch in rows before the band and in it. A line buffer is laid out
    as its reader's input (C x h x W, h the rows the reader reads this band), so the reader runs on it as it is;
    the kept rows move to the top of each plane at the new pitch."""
    out, now = [], [0] * (len(sched.bands[0].calls) - 1 if sched.bands else 0)
    for band in sched.bands:
        row = []
        for k in range(len(now)):
            reader = band.calls[k + 1]
            new = reader.h if reader.oh else now[k]
            row.append((now[k], new))
            now[k] = new
        out.append(row)
    return out


def _fit(node: Node, graph: Graph, budget: int, least: bool, choose: ChooseShape) -> KernelChoice:
    """The most rows a band whose line buffers, staging block and kernel scratch fit `budget` (the fewest
    calls), else one row (the least memory; the arena grows). Each band shape of each layer gets the kernel
    its choice takes with what the buffers and staging leave. A float layer whose band shapes its whole
    kernel does not take makes that band height unusable."""
    layers: list[Node] = node.attrs["layers"]
    geometry: list[Layer] = node.attrs["geometry"]
    floats: dict[str, str | None] = node.attrs["kernels"]
    fallback = None
    for rows in range(geometry[-1].oh, 0, -1):
        sched = schedule(geometry, rows)
        if sched is None:
            continue
        buffers = sched.buffer_bytes(geometry)
        lines = sum(buffers)
        shapes = [_shapes(sched, k) for k in range(len(layers))]
        convs = [m.op in OPS for m in layers]  # a Transpose copies straight into its line buffer: no staging
        direct = _direct(sched, len(layers))
        # only the first layer's input is gathered (the others read their line buffer as it is)
        stage_in = [_align(max(s[0] for s in shapes[0]) * geometry[0].in_row) if convs[0] else 0,
                    *[0] * (len(layers) - 1)]
        # an output band staged, and a fused residual's rows beside it
        stage = max(a + (_align(max(s[2] for s in sh) * g.out_row) * (1 + g.last_only) if c and not o else 0)
                    for a, sh, g, c, o in zip(stage_in, shapes, geometry, convs, direct, strict=True))
        if lines + stage > budget and rows > 1:
            continue
        inner: dict[str, tuple[KernelChoice, ...]] = {}
        scratch = 0
        for k, m in enumerate(layers):
            picked = []
            for shape in shapes[k] if convs[k] else ():
                choice = choose(*band_node(m, graph, shape), max(budget - lines - stage, 0), least,
                                floats.get(m.name))
                if choice is None:
                    break
                picked.append(choice)
                scratch = max(scratch, choice.scratch)
            else:
                inner[m.name] = tuple(picked)
                continue
            break
        if len(inner) < len(layers):
            continue
        scratch = _align(scratch)
        assumes = {k: v for cs in inner.values() for c in cs for k, v in c.assumes.items()}
        detail = NchwBandChoice(sched, tuple(buffers), tuple(stage_in), direct, stage, scratch, tuple(shapes),
                                inner)
        out = KernelChoice("", lines + stage + scratch, detail, assumes)
        if lines + stage + scratch <= budget:
            return out
        if fallback is None or out.scratch < fallback.scratch:
            fallback = out
    if fallback is None:  # no band height the layers' kernels take: as much as the layers take unfused
        return KernelChoice("", 1 << 40, None)
    return fallback


class _CallView:
    """The emitter as a layer's emitter sees it in one band shape: the band's graph (its tensors' rows), its
    choice for that shape, its input and output in the staging block, its scratch after the staging, and
    derived constants shared by the layer's calls (one copy of its weights whatever its shapes)."""

    def __init__(self, em: Any, graph: Graph, name: str, choice: KernelChoice, pointers: dict[str, str],
                 scratch: str, shared: dict[tuple[str, str, str], str], indent: str):
        self._em = em
        self.graph = graph
        self.choices = {**em.choices, name: choice}
        self._pointers = pointers
        self._scratch = scratch
        self._shared = shared
        self._indent = indent

    def pointer(self, tensor: str) -> str:
        return self._pointers.get(tensor) or self._em.pointer(tensor)

    def scratch_pointer(self, node: Node, ctype: str) -> str:
        if not self.choices[node.name].scratch:
            return "NULL"
        return f"({ctype} *)({self._scratch})"

    def declare_derived(self, node: Node, suffix: str, values: np.ndarray, comment: str) -> str:
        v = np.asarray(values, order="C")
        key = (node.name, suffix, f"{v.dtype}{v.shape}" + hashlib.sha256(v.tobytes()).hexdigest())
        if key not in self._shared:
            self._shared[key] = self._em.declare_derived(node, suffix, values, comment)
        return self._shared[key]

    def line(self, text: str) -> None:
        self._em.line("\n".join(self._indent + t if t else t for t in text.split("\n")))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._em, name)


def _emit_band_run(ctx: NodeContext) -> None:
    """The loop over the bands: each line buffer's kept rows moved to the top of each of its planes (at the
    plane pitch of its reader's input this band); then per layer its call for the band's shape, the first
    layer's input rows gathered into the staging block, each other layer reading its line buffer as it is, its
    output rows scattered to the next line buffer or the run's output (or written there straight where they
    are all its reader reads); from the table of rows the schedule worked out."""
    d: NchwBandChoice = ctx.choice.detail
    layers: list[Node] = ctx.node.attrs["layers"]
    ops: list[HostOp] = ctx.node.attrs["ops"]
    sched = d.schedule
    pitches = _pitches(sched)
    table = np.array([[v for keep, pitch in zip(band.keep, pitches[b], strict=True) for v in (*keep, *pitch)]
                      + [v for k, c in enumerate(band.calls)
                         for v in (*dataclasses.astuple(c), d.shapes[k].index((c.h, c.pad_top, c.oh)) if c.oh else 0)]
                      for b, band in enumerate(sched.bands)], np.int64)
    assert table.size == 0 or (table.min() > -(1 << 15) and table.max() < (1 << 15)), ctx.node.name
    width = table.shape[1]
    rows = ctx.const_array("bands", table.astype(np.int16).ravel(),
                           f"per band: each line buffer's (first row kept, rows kept, plane pitch before, plane "
                           f"pitch now), then each layer's call (x row, h, pad_top, y row, oh, shape): {ctx.node.name}")
    scratch = ctx.scratch("uint8_t")
    names = " -> ".join(m.name for m in layers)
    ctx.comment(f"{names}: {len(sched.bands)} bands of {sched.rows} row(s) of the last output, all channels; "
                f"line buffers of {', '.join(str(r) for r in sched.buffer_rows)} rows ({sum(d.buffers)} B), "
                f"{d.stage} B staging the first layer's input rows and the output rows a line buffer or the run's "
                f"output takes a plane at a time (NCHW), {d.kernel_scratch} B of kernel scratch in this node's "
                "scratch (aot/plan/bands.py)")
    ctx.line("{")
    at = 0
    for k, nbytes in enumerate(d.buffers):
        ctx.line(f"    uint8_t *const aotc_line{k} = {scratch} + {at}u; /* {c_comment(layers[k].outputs[0])}: "
                 f"{sched.buffer_rows[k]} rows of each of its planes at most */")
        at += nbytes
    if d.stage:
        ctx.line(f"    uint8_t *const aotc_stage = {scratch} + {at}u;")
    kernel_scratch = f"{scratch} + {at + d.stage}u"
    ctx.line(f"    for (int32_t aotc_b = 0; aotc_b < {len(sched.bands)}; ++aotc_b) {{")
    ctx.line(f"        const int16_t *const aotc_r = {rows} + (size_t)aotc_b * {width}u;")
    for k in range(len(d.buffers)):
        y = ctx.graph.tensors[layers[k].outputs[0]]
        row = y.shape[3] * y.itemsize
        f = KEEP_FIELDS * k
        move = (f"memmove(aotc_line{k} + (size_t)aotc_c * aotc_r[{f + 3}] * {row}u, aotc_line{k} + ((size_t)aotc_c * "
                f"aotc_r[{f + 2}] + (size_t)aotc_r[{f}]) * {row}u, (size_t)aotc_r[{f + 1}] * {row}u);")
        ctx.line(f"        if (aotc_r[{f + 1}] > 0) {{ /* planes further apart: the last first */")
        ctx.line(f"            if (aotc_r[{f + 3}] >= aotc_r[{f + 2}]) "
                 f"for (int32_t aotc_c = {y.shape[1] - 1}; aotc_c >= 0; --aotc_c) {move}")
        ctx.line(f"            else for (int32_t aotc_c = 0; aotc_c < {y.shape[1]}; ++aotc_c) {move}")
        ctx.line("        }")
    base = KEEP_FIELDS * len(d.buffers)
    last = len(layers) - 1
    shared: dict[tuple[str, str, str], str] = {}
    for k, m in enumerate(layers):
        f = base + CALL_FIELDS * k
        x, y = ctx.graph.tensors[m.inputs[0]], ctx.graph.tensors[m.outputs[0]]
        in_row, out_row = x.shape[3] * x.itemsize, y.shape[3] * y.itemsize
        if k == last:
            dst, pitch = f"(uint8_t *){ctx.ptr(m.outputs[0])}", f"{y.shape[2]}u"
        else:
            dst, pitch = f"aotc_line{k}", f"(size_t)aotc_r[{f + CALL_FIELDS + 1}]"  # its reader's h this band
        ctx.line(f"        if (aotc_r[{f + 4}] > 0) {{ /* {c_comment(m.name)} */")
        if m.op not in OPS:  # the input's channels-last rows, transposed into the line buffer's planes
            assert k == 0 and k != last, ctx.node.name
            t = C_TYPES[x.dtype]
            h, w, c = x.shape[1:]
            ctx.line(f"            const {t} *const aotc_x = {ctx.ptr(m.inputs[0])} + (size_t)aotc_r[{f}] * {w * c}u;")
            ctx.line(f"            for (int32_t aotc_i = 0; aotc_i < aotc_r[{f + 4}]; ++aotc_i) "
                     f"for (int32_t aotc_c = 0; aotc_c < {c}; ++aotc_c) {{")
            ctx.line(f"                {t} *const aotc_y = ({t} *)({dst} + (size_t)aotc_c * {pitch} * {out_row}u) + "
                     f"(size_t)(aotc_r[{f + 3}] + aotc_i) * {w}u;")
            ctx.line(f"                for (int32_t aotc_w = 0; aotc_w < {w}; ++aotc_w) "
                     f"aotc_y[aotc_w] = aotc_x[((size_t)aotc_i * {w} + (size_t)aotc_w) * {c}u + (size_t)aotc_c];")
            ctx.line("            }")
            ctx.line("        }")
            continue
        if k == 0:
            ctx.line(f"            const size_t aotc_in = (size_t)aotc_r[{f + 1}] * {in_row}u;")
            ctx.line(f"            for (int32_t aotc_c = 0; aotc_c < {x.shape[1]}; ++aotc_c) memcpy(aotc_stage + "
                     f"(size_t)aotc_c * aotc_in, (const uint8_t *){ctx.ptr(m.inputs[0])} + (size_t)aotc_c * "
                     f"{x.shape[2] * in_row}u + (size_t)aotc_r[{f}] * {in_row}u, aotc_in);")
            x_at = f"(({C_TYPES[x.dtype]} *)aotc_stage)"
        else:
            x_at = f"(({C_TYPES[x.dtype]} *)aotc_line{k - 1})"
        y_at = f"(({C_TYPES[y.dtype]} *)aotc_line{k})" if d.direct[k] else \
            f"(({C_TYPES[y.dtype]} *)(aotc_stage + {d.stage_in[k]}u))"
        pointers = {m.inputs[0]: x_at, m.outputs[0]: y_at}
        if not d.direct[k]:
            ctx.line(f"            const size_t aotc_out = (size_t)aotc_r[{f + 4}] * {out_row}u;")
        if m.op == "QLinearConvAdd":  # the residual's rows of the output band, beside it in the staging block
            assert k == last, ctx.node.name
            res_at = d.stage_in[k] + _align(max(s[2] for s in d.shapes[k]) * out_row * y.shape[1])
            ctx.line(f"            for (int32_t aotc_c = 0; aotc_c < {y.shape[1]}; ++aotc_c) memcpy(aotc_stage + "
                     f"{res_at}u + (size_t)aotc_c * aotc_out, (const uint8_t *){ctx.ptr(m.inputs[RESIDUAL])} + "
                     f"((size_t)aotc_c * {pitch} + (size_t)aotc_r[{f + 3}]) * {out_row}u, aotc_out);")
            pointers[m.inputs[RESIDUAL]] = f"(({C_TYPES[y.dtype]} *)(aotc_stage + {res_at}u))"
        ctx.line(f"            switch (aotc_r[{f + 5}]) {{")
        for s, shape in enumerate(d.shapes[k]):
            n, g = band_node(m, ctx.graph, shape)
            view = _CallView(ctx.emitter, g, m.name, d.inner[m.name][s], pointers, kernel_scratch, shared,
                             "                ")
            ctx.line(f"            {'default' if s == len(d.shapes[k]) - 1 else f'case {s}'}: "
                     f"/* {shape[0]} input rows, pad_top {shape[1]}, {shape[2]} output rows */")
            ops[k].emit(NodeContext(view, n, ctx.index))
            ctx.line("                break;")
        ctx.line("            }")
        if not d.direct[k]:
            ctx.line(f"            for (int32_t aotc_c = 0; aotc_c < {y.shape[1]}; ++aotc_c) "
                     f"memcpy({dst} + ((size_t)aotc_c * {pitch} + (size_t)aotc_r[{f + 3}]) * {out_row}u, "
                     f"aotc_stage + {d.stage_in[k]}u + (size_t)aotc_c * aotc_out, aotc_out);")
        ctx.line("        }")
    ctx.line("    }")
    ctx.line("}")
