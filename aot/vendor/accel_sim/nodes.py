"""accel_sim's own nodes (domain `aotc.accel_sim`): what its transform rewrites a function into,
and all its codegen lowers.

One node per device layer, its op `accel_sim.<Kind>`:

    accel_sim.Conv       CONV tiles: a convolution with its bias, activation and residual add fused
    accel_sim.MatMul     MATMUL tiles: Gemm / MatMul (+ bias, activation), K accumulated in place
    accel_sim.Pool       POOL tiles
    accel_sim.Vector     VADD / VMUL / VMAX tiles (BatchNormalization: a VMUL and a VADD per tile)
    accel_sim.Clip       VCLIP tiles
    accel_sim.View       nothing: the same bytes under another shape
    accel_sim.Copy       DMA: a view whose result is a function output, copied there
    accel_sim.Transpose  DMA: a layout change (a gather with permuted strides)
    accel_sim.Concat     DMA: each input copied into its slice of the output

A node holds its layer record (layers.py) whole: tensors it reads as inputs (a label per input
in `fields`), its packed constants (weights laid out as the device reads them, biases,
requantisation scales) as constant tensors of the function, and every scalar as an attribute
(nested records flattened: `geom.kh`, `quant.x_zero`). The tiling pass adds `tile.*`
attributes. So a function of these nodes says everything the program is made from, can be written
as ONNX (attributes and initializers) and read back into the same program.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor
from aot.vendor.accel_sim.layers import (
    BinaryLayer,
    ClipLayer,
    ConcatLayer,
    ConvLayer,
    GemmLayer,
    Layer,
    PoolLayer,
    QAdd,
    Quant,
    TransposeLayer,
    ViewLayer,
)
from aot.vendor.accel_sim.tiling import ConvGeom, ConvTiles, GemmTiles, PoolTiles

PREFIX = "accel_sim."
DOMAIN = "aotc.accel_sim"
KIND = {ConvLayer: "Conv", GemmLayer: "MatMul", PoolLayer: "Pool", BinaryLayer: "Vector", ClipLayer: "Clip",
        ViewLayer: "View", TransposeLayer: "Transpose", ConcatLayer: "Concat"}
LAYER = {**{k: c for c, k in KIND.items()}, "Copy": ViewLayer}
TILES = {"Conv": ConvTiles, "MatMul": GemmTiles, "Pool": PoolTiles}
_NESTED = {"geom": ConvGeom, "quant": Quant, "qadd": QAdd}
_TENSORS = ("x", "a", "b", "residual", "xs")  # fields naming tensors the layer reads
_TUPLES = ("act", "pqr", "shape", "perm", "pool")


def is_device_node(node: Node) -> bool:
    return node.op.startswith(PREFIX)


def kind(node: Node) -> str:
    return node.op[len(PREFIX):]


def _scalar(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return [_scalar(x) for x in v]
    return v


def encode(layer: Layer, name: str, graph: Graph, origin: tuple[str, ...], copy: bool = False) -> Node:
    """The node of a layer record. Its constants are added to `graph` as tensors named after the node."""
    inputs: list[str] = []
    labels: list[str] = []
    attrs: dict[str, Any] = {}

    def const(label: str, data: np.ndarray) -> None:
        t = f"{name}.{label}"
        if t in graph.tensors:
            raise AotcError(f"accel_sim: tensor '{t}' already exists")
        data = np.ascontiguousarray(data)
        graph.tensors[t] = Tensor(t, tuple(data.shape), str(data.dtype), data)
        inputs.append(t)
        labels.append(label)

    for f in dataclasses.fields(layer):
        v = getattr(layer, f.name)
        if f.name == "y" or v is None:
            continue
        if f.name in _TENSORS and not isinstance(v, np.ndarray):
            for t in (v if isinstance(v, list) else [v]):
                inputs.append(t)
                labels.append(f.name)
        elif isinstance(v, np.ndarray):
            const(f.name, v)
        elif f.name == "extra":
            for op, data in v:
                const(f"extra.{op}", data)
        elif dataclasses.is_dataclass(v):
            for g in dataclasses.fields(v):
                sub = getattr(v, g.name)
                if isinstance(sub, np.ndarray):
                    const(f"{f.name}.{g.name}", sub)
                else:
                    attrs[f"{f.name}.{g.name}"] = _scalar(sub)
        else:
            attrs[f.name] = _scalar(v)
    attrs["fields"] = labels
    op = PREFIX + ("Copy" if copy else KIND[type(layer)])
    return Node(op, name, inputs, [layer.y], attrs, origin)


def decode(node: Node, graph: Graph) -> Layer:
    """The layer record of a device node."""
    cls = LAYER.get(kind(node))
    if cls is None:
        raise AotcError("accel_sim has no layer of this kind", node=node)
    a = node.attrs
    kw: dict[str, Any] = {"y": node.outputs[0]}
    nested: dict[str, dict[str, Any]] = {}
    extra: list[tuple[str, np.ndarray]] = []
    for label, t in zip(a["fields"], node.inputs, strict=True):
        data = graph.const(t)
        head, _, tail = label.partition(".")
        if head == "extra":
            extra.append((tail, data))
        elif tail:
            nested.setdefault(head, {})[tail] = data
        elif label == "xs":
            kw.setdefault("xs", []).append(t)
        elif label in _TENSORS and (data is None or label != "b"):
            kw[label] = t
        else:
            kw[label] = data
    for key, v in a.items():
        head, _, tail = key.partition(".")
        if key == "fields" or head == "tile":
            continue
        if tail:
            nested.setdefault(head, {})[tail] = v
        else:
            kw[key] = tuple(v) if key in _TUPLES else (list(v) if isinstance(v, (list, tuple)) else v)
    for head, values in nested.items():
        sub = _NESTED[head]
        kw[head] = sub(**{k: (np.float32(v) if sub is QAdd and k in ("a_mult", "b_mult", "bias") else v)
                          for k, v in values.items()})
    if extra:
        kw["extra"] = extra
    names = {f.name for f in dataclasses.fields(cls)}
    for f in dataclasses.fields(cls):  # a field encode() left out was None
        if f.name not in kw and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            kw[f.name] = None
    unknown = set(kw) - names
    if unknown:
        raise AotcError(f"accel_sim: {kind(node)} has no field(s) {', '.join(sorted(unknown))}", node=node)
    return cls(**kw)


def tiles_of(node: Node) -> ConvTiles | GemmTiles | PoolTiles | None:
    """The tiling the tiling pass chose for the node, or None."""
    cls = TILES.get(kind(node))
    values = {k[5:]: v for k, v in node.attrs.items() if k.startswith("tile.")}
    return cls(**values) if cls is not None and values else None


def set_tiles(node: Node, tiles: ConvTiles | GemmTiles | PoolTiles) -> None:
    node.attrs.update({f"tile.{k}": v for k, v in dataclasses.asdict(tiles).items()})


__all__ = ["DOMAIN", "PREFIX", "decode", "encode", "is_device_node", "kind", "set_tiles", "tiles_of"]
