"""A conv node's geometry as the conv family's kernel choice reads it (ConvGeometry), and the record of
the choice its emitter writes (ConvPlan). Its own module so that conv.py (the candidates) and conv_avx512.py
(which AVX-512 path a conv takes) both read it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

from aot.csource.format import c_ints
from aot.ir import Graph, Node
from aot.ir.schemas import reads_nhwc, writes_nhwc
from aot.kernels.base import KernelChoice, as_3d
from aot.kernels.gemm import GEMM_ASSUMES, activation_fields

CONV_ASSUMES = GEMM_ASSUMES  # packed W^T and patch blocks are in the GEMM core's panels


@dataclass(frozen=True)
class ConvPlan:
    kernel: str  # C function
    fields: dict[str, str]  # the aotc_conv_params
    scratch: int  # bytes
    what: str  # for the params comment
    lanes: int = 0  # Winograd with threads: its scratch is this many lanes, one per thread (conv_winograd.h)


@dataclass(frozen=True)
class ConvGeometry:
    """A conv node's geometry, as every candidate reads it."""

    node: Node
    graph: Graph
    x: tuple[int, ...]
    y: tuple[int, ...]
    nd: int
    group: int
    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    pads: list[int]
    dw: bool  # one input channel per group (not one input channel feeding many outputs, e.g. a
    #           first layer on a 1-channel spectrogram: a GEMM of out_c x taps, far faster)
    nhwc: bool = False  # X channels last (aot/passes/conv_nhwc.py); self.x is still N, C, spatial
    out_nhwc: bool = False  # Y stored channels last (aot/passes/conv_nhwc.py); self.y is still N, C, spatial

    @property
    def in_c(self) -> int:
        return self.x[1]

    @property
    def out_c(self) -> int:
        return self.y[1]

    @property
    def const_weights(self) -> bool:
        return self.graph.const(self.node.inputs[1]) is not None

    def fields(self) -> dict[str, str]:
        return {
            "batch": str(self.x[0]), "group": str(self.group), "in_c": str(self.in_c), "out_c": str(self.out_c),
            "in_size": c_ints(as_3d(self.x[2:], 1)), "out_size": c_ints(as_3d(self.y[2:], 1)),
            "kernel": c_ints(as_3d(self.kernel, 1)), "strides": c_ints(as_3d(self.strides, 1)),
            "dilations": c_ints(as_3d(self.dilations, 1)), "pads": c_ints(as_3d(self.pads[:self.nd], 0)),
            "kc": "0", "nc": "0", **activation_fields(self.node), **({"in_nhwc": "1"} if self.nhwc else {}),
            **({"out_nhwc": "1"} if self.out_nhwc else {}),
        }

    def choice(self, kernel: str, what: str, scratch: int = 0, **blocks: int) -> KernelChoice:
        fields = {**self.fields(), **{k: str(v) for k, v in blocks.items()}}
        geometry = (f"{list(self.x)} -> {list(self.y)}, kernel {list(self.kernel)}, strides {list(self.strides)}, "
                    f"dilations {list(self.dilations)}, pads {list(self.pads)}, group {self.group}")
        plan = ConvPlan(kernel, fields, scratch, f"{self.node.op} ({what}) {geometry}" if what else
                        f"{self.node.op} {geometry}")
        return KernelChoice(kernel, scratch, plan, CONV_ASSUMES)


def x_shape(node: Node, graph: Graph) -> tuple[int, ...]:
    """The conv's input shape as N, C, spatial (a channels-last input read in place: N, H, W, C)."""
    x = tuple(graph.tensors[node.inputs[0]].shape)
    return (x[0], x[-1], *x[1:-1]) if reads_nhwc(node) else x


def y_shape(node: Node, graph: Graph) -> tuple[int, ...]:
    """The conv's output shape as N, C, spatial (stored channels last: N, H, W, C)."""
    y = tuple(graph.tensors[node.outputs[0]].shape)
    return (y[0], y[-1], *y[1:-1]) if writes_nhwc(node) else y


def conv_geometry(node: Node, graph: Graph) -> ConvGeometry:
    x = x_shape(node, graph)
    y = y_shape(node, graph)
    a = node.attrs
    group = a["group"]
    dw = node.op != "ConvTranspose" and x[1] // group == 1 and not (group == 1 and y[1] > 1)
    return ConvGeometry(node, graph, x, y, len(x) - 2, group, list(a["kernel_shape"]), list(a["strides"]),
                 list(a["dilations"]), list(a["pads"]), dw, reads_nhwc(node), writes_nhwc(node))
