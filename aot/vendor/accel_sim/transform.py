"""accel_sim's own passes (Vendor.transform): a partitioned function becomes accel_sim nodes
(nodes.py), optimised for the goal the user picked, before codegen lowers them.

    accel_sim.to_device         each ONNX node or composite -> one device node: a convolution with the
                                bias, activation and residual add its pattern fused; Gemm / MatMul with
                                its bias, weights packed [N][K]; explicit DMA nodes for layout changes
                                (Transpose), Concat, and a view copied to a function output (Copy)
    accel_sim.fuse_activation   a device Clip reading a Conv / MatMul / Vector that no one else reads:
                                the clamp moves into that node's output stage (no pass over the tensor)
    accel_sim.fuse_pool         a MaxPool (window = stride) after a Conv: each output tile pooled in
                                the scratchpad before it is stored (the unpooled tensor never leaves it)
    accel_sim.tile              each Conv / MatMul / Pool gets its tiling for the goal (`tile.*`): the
                                decomposition of a layer the array cannot take whole (output- and
                                input-channel tiles, K tiles accumulated in place, rows and columns),
                                and for a convolution which data stays resident (`tile.reuse`)

Goals (`--vendor-opt accel_sim.goal=...`): `latency` (the default) picks each layer's tiling by
the cost model's cycles; `energy` by the energy estimate (energy.py), then cycles. The passes run
through aotc's pass runner, which verifies the function's graph after each one, and record which
of them changed the function (`aotc partition --show`). A function already made of device nodes
(read back from a file `aotc partition` wrote after the transform) keeps its nodes and tilings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from aot.errors import AotcError
from aot.ir import Function, Graph, Node
from aot.passes.base import Pass, run_passes_tracked
from aot.vendor.accel_sim.device import DeviceConfig
from aot.vendor.accel_sim.layers import BinaryLayer, ClipLayer, ConvLayer, GemmLayer, PoolLayer, ViewLayer, layer_of
from aot.vendor.accel_sim.nodes import decode, encode, is_device_node, kind, set_tiles, tiles_of
from aot.vendor.accel_sim.tiling import GOALS, plan_conv, plan_gemm, plan_pool
from aot.vendor.base import VendorOption

OPTIONS = {"goal": VendorOption(GOALS, "what each layer's tiling minimises: cycles (latency) or the energy "
                                       "estimate (energy); docs/accel_sim-isa.md 6.1")}


def _used_tensors(graph: Graph) -> set[str]:
    return {t for n in graph.nodes for t in [*n.inputs, *n.outputs] if t} | set(graph.inputs) | set(graph.outputs)


def _prune(graph: Graph) -> None:
    """Drop the constants no node reads any more (the ONNX weights a device node repacked)."""
    used = _used_tensors(graph)
    for name in [t for t in graph.tensors if t not in used]:
        del graph.tensors[name]


class ToDeviceNodes(Pass):
    name = "accel_sim.to_device"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        nodes: list[Node] = []
        for n in graph.nodes:
            if is_device_node(n):
                nodes.append(n)
                continue
            layer = layer_of(n, graph)
            copy = isinstance(layer, ViewLayer) and layer.y in graph.outputs
            nodes.append(encode(layer, n.name, g, n.sources(), copy))
        g.nodes = nodes
        _prune(g)
        return g


class FuseActivation(Pass):
    """A Clip / Relu left alone (no pattern took it with its producer) joins the producer's output
    stage when the producer is float32 and clamps nothing yet."""

    name = "accel_sim.fuse_activation"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        readers: dict[str, int] = {}
        for n in g.nodes:
            for i in n.inputs:
                readers[i] = readers.get(i, 0) + 1
        producer = {n.outputs[0]: n for n in g.nodes}
        drop: set[str] = set()
        for n in g.nodes:
            if kind(n) != "Clip" or not is_device_node(n):
                continue
            src = producer.get(n.inputs[0])
            if src is None or readers.get(n.inputs[0]) != 1 or n.inputs[0] in g.outputs or src.name in drop:
                continue
            layer = decode(src, g)
            fusable = (isinstance(layer, ConvLayer) and layer.quant is None and layer.act is None) or \
                (isinstance(layer, GemmLayer) and layer.quant is None and layer.act is None) or \
                (isinstance(layer, BinaryLayer) and layer.qadd is None and layer.act is None)
            if not fusable:
                continue
            clip = decode(n, g)
            assert isinstance(clip, ClipLayer)
            src.attrs["act"] = list(clip.act)
            src.outputs = [n.outputs[0]]
            src.origin = (*src.sources(), *n.sources())
            drop.add(n.name)
        g.nodes = [n for n in g.nodes if n.name not in drop]
        _prune(g)
        return g


@dataclass
class FusePool(Pass):
    """A MaxPool whose window is its stride (no padding, no dilation) after a Conv no one else reads:
    each output tile of the convolution is pooled in the scratchpad before it is stored (POOL on the
    tile), so the unpooled tensor never goes to main memory and back. Taken when the tile rows and
    columns can be whole windows and the extra buffers fit."""

    cfg: DeviceConfig
    goal: str
    name = "accel_sim.fuse_pool"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        readers: dict[str, int] = {}
        for n in g.nodes:
            for i in n.inputs:
                readers[i] = readers.get(i, 0) + 1
        producer = {n.outputs[0]: n for n in g.nodes}
        drop: set[str] = set()
        for n in g.nodes:
            if not is_device_node(n) or kind(n) != "Pool" or n.inputs[0] in g.outputs or readers[n.inputs[0]] != 1:
                continue
            src = producer.get(n.inputs[0])
            if src is None or kind(src) != "Conv" or src.name in drop or tiles_of(src) is not None:
                continue
            pool, conv = decode(n, g), decode(src, g)
            assert isinstance(pool, PoolLayer) and isinstance(conv, ConvLayer)
            p, c = pool.geom, conv.geom
            window = (p.kh, p.kw)
            if pool.average or pool.quant is not None or conv.residual or conv.pool or (p.sh, p.sw) != window \
                    or (p.dh, p.dw, p.pt, p.pl) != (1, 1, 0, 0) or c.oh % p.kh or c.ow % p.kw \
                    or (p.oh, p.ow) != (c.oh // p.kh, c.ow // p.kw):
                continue
            if plan_conv(c, self.cfg, False, conv.quant is not None, self.goal, window) is None:
                continue
            src.attrs["pool"] = list(window)
            src.outputs = list(n.outputs)
            src.origin = (*src.sources(), *n.sources())
            drop.add(n.name)
        g.nodes = [n for n in g.nodes if n.name not in drop]
        _prune(g)
        return g


@dataclass
class Tile(Pass):
    cfg: DeviceConfig
    goal: str
    name = "accel_sim.tile"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        for n in g.nodes:
            if kind(n) not in ("Conv", "MatMul", "Pool") or tiles_of(n) is not None:
                continue
            layer = decode(n, g)
            if isinstance(layer, ConvLayer):
                t = plan_conv(layer.geom, self.cfg, layer.residual is not None, layer.quant is not None, self.goal,
                              layer.pool)
            elif isinstance(layer, GemmLayer):
                t = plan_gemm(layer.m, layer.n, layer.k, self.cfg, layer.quant is not None, self.goal)
            else:
                assert isinstance(layer, PoolLayer)
                itemsize = 4 if layer.dtype == "float32" else 1
                t = plan_pool(layer.geom, self.cfg, itemsize, layer.quant is not None, self.goal)
            if t is None:
                raise AotcError("accel_sim: no tiling of this layer fits the scratchpad", node=n)
            set_tiles(n, t)
        return g


def passes(cfg: DeviceConfig, options: Mapping[str, str]) -> tuple[Pass, ...]:
    goal = options.get("goal", "latency")
    return ToDeviceNodes(), FuseActivation(), FusePool(cfg, goal), Tile(cfg, goal)


def make_transform(cfg: DeviceConfig):  # noqa: ANN201 - the Vendor.transform signature
    def transform(fn: Function, options: Mapping[str, str]) -> Function:
        graph, fired = run_passes_tracked(fn.graph, passes(cfg, options))
        before = fn.graph.info.vendor_passes  # a function read back transformed keeps its record
        graph.info = replace(graph.info, vendor_passes=[*before, *(p for p in fired if p not in before)],
                             vendor_options=fn.graph.info.vendor_options or dict(options))
        return Function(fn.global_symbol, fn.compiler, graph, fn.composite)
    return transform


def device_function(fn: Function, cfg: DeviceConfig, options: Mapping[str, str] | None = None) -> Function:
    """`fn` made of device nodes (transformed with `options`, default goal, when it is not yet)."""
    if all(is_device_node(n) for n in fn.graph.nodes) and all(
            tiles_of(n) is not None for n in fn.graph.nodes if kind(n) in ("Conv", "MatMul", "Pool")):
        return fn
    return make_transform(cfg)(fn, options or {"goal": "latency"})


__all__ = ["OPTIONS", "FuseActivation", "FusePool", "Tile", "ToDeviceNodes", "device_function", "make_transform",
           "passes"]
