"""mynpu's transform: its own passes over each of its functions before codegen (Vendor.transform).

1. mynpu.fuse_residual: each Conv, and each composite of one (patterns.py), becomes one `mynpu.Conv` node
   whose epilogue adds the residual and rectifies as it writes each output.
2. mynpu.nhwc: the device computes channels last. With `boundary_layout="NHWC"` aotc hands the function
   its tensors in NHWC and the graph begins and ends with Transposes back to the model's layout; this pass
   folds them: every activation of rank 3..5 inside is NHWC from then on (its shape permuted, its name
   kept, so that taps find the model's tensor), mynpu.Conv takes NHWC. A boundary tensor that comes
   without those Transposes (a function written by `aotc partition --transform`, before aotc placed
   them) gets an explicit Transpose, which the device runs (mynpu_permute).
3. mynpu.block_weights: each conv's weights OIHW -> OIHW<B>o at compile time: output channels in blocks
   of B (the option `block`, 4 or 8), the innermost axis, padded with zeros to a multiple of B: one
   weight load then feeds B accumulators. The blocked array replaces the model's in the bundle.

Each pass copies the graph it is given, and runs through aotc's runner (run_passes_tracked), which
verifies the graph after each and says which changed it (`aotc partition --show` lists them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from aot.ir import Function, Graph, Node, Tensor
from aot.vendor import Pass, run_passes_tracked

CONV = "mynpu.Conv"  # mynpu's own node: inputs [x, w, bias or "", residual or ""]
NHWC_NAMES = "mynpu_nhwc"  # graph.meta key: NHWC tensor -> the model's (NCHW) tensor it holds


def channels_last(rank: int) -> tuple[int, ...] | None:
    """The permutation NC... -> N...C for ranks 3..5 (NCW, NCHW, NCDHW), None for other ranks."""
    return (0, *range(2, rank), 1) if 3 <= rank <= 5 else None


def inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for k, p in enumerate(perm):
        inv[p] = k
    return inv


class FuseResidual(Pass):
    """Conv and its composites (conv_relu, conv_add, conv_add_relu) -> one mynpu.Conv each."""

    name = "mynpu.fuse_residual"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        out: list[Node] = []
        for n in g.nodes:
            if n.op == "Conv":
                out.append(_conv_node(n, n, None, relu=False, fused=""))
            elif n.op == "Composite" and n.attrs["composite"].startswith("mynpu.conv"):
                body = n.attrs["body"].nodes
                conv = next(b for b in body if b.op == "Conv")
                add = next((b for b in body if b.op == "Add"), None)
                residual = None if add is None else next(i for i in add.inputs if i != conv.outputs[0])
                out.append(_conv_node(n, conv, residual, relu=any(b.op == "Relu" for b in body),
                                      fused=n.attrs["composite"]))
            else:
                out.append(n)
        g.nodes = out
        return g


def _conv_node(node: Node, conv: Node, residual: str | None, relu: bool, fused: str) -> Node:
    """`node` (a Conv or a composite holding `conv`) as a mynpu.Conv, in the model's layout until mynpu.nhwc."""
    bias = conv.inputs[2] if len(conv.inputs) > 2 else ""
    a = conv.attrs
    attrs = {"kernel_shape": list(a["kernel_shape"]), "strides": list(a["strides"]), "pads": list(a["pads"]),
             "group": a["group"], "relu": int(relu), "layout": "NCHW", "fused": fused}
    return Node(CONV, node.name, [conv.inputs[0], conv.inputs[1], bias, residual or ""], list(node.outputs),
                attrs, node.sources())


class ToNHWC(Pass):
    """The function's activations channels last, the boundary Transposes folded (module docstring)."""

    name = "mynpu.nhwc"

    def run(self, graph: Graph) -> Graph:
        if any(n.op == CONV and n.attrs["layout"] == "NHWC" for n in graph.nodes):
            return graph  # already: a function written after this pass and read back
        g = graph.copy()
        rename: dict[str, str] = {}  # a tensor the model's layout had -> the NHWC tensor that replaces it
        body: list[Node] = []
        for n in g.nodes:
            rank = len(g.tensors[n.outputs[0]].shape)
            perm = channels_last(rank)
            if n.op == "Transpose" and perm is not None and n.inputs[0] in g.inputs \
                    and n.attrs["perm"] == inverse(perm):
                rename[n.outputs[0]] = n.inputs[0]  # aotc's input transpose: read the NHWC input itself
            elif n.op == "Transpose" and perm is not None and n.outputs[0] in g.outputs \
                    and n.attrs["perm"] == list(perm) and n.inputs[0] not in g.inputs:
                rename[n.inputs[0]] = n.outputs[0]  # aotc's output transpose: write the NHWC output directly
            else:
                body.append(n)
        for n in body:
            n.inputs = [rename.get(i, i) for i in n.inputs]
            n.outputs = [rename.get(o, o) for o in n.outputs]
        onnx_name = {new: old for old, new in rename.items()}
        nhwc: dict[str, str] = {}  # NHWC tensor -> the model's tensor
        for n in body:
            for t in (*n.inputs, *n.outputs):
                if t and not g.tensors[t].is_const and channels_last(len(g.tensors[t].shape)) is not None:
                    nhwc[t] = onnx_name.get(t, t)
        head, tail = [], []
        for t in list(nhwc):
            perm = channels_last(len(g.tensors[t].shape))
            if t in g.inputs and t not in onnx_name:  # an input in the model's layout: transposed here
                moved = _fresh(g, f"{t}__nhwc", _permuted(g.tensors[t], perm))
                head.append(Node("Transpose", f"{t}__to_nhwc", [t], [moved], {"perm": list(perm)}))
                _rename(body, t, moved)
                nhwc[moved] = nhwc.pop(t)
            elif t in g.outputs and t not in onnx_name:  # an output in the model's layout: transposed back
                moved = _fresh(g, f"{t}__nhwc", _permuted(g.tensors[t], perm))
                tail.append(Node("Transpose", f"{t}__from_nhwc", [moved], [t], {"perm": inverse(perm)}))
                _rename(body, t, moved)
                nhwc[moved] = nhwc.pop(t)
            elif t not in g.inputs and t not in g.outputs:
                g.tensors[t] = _permuted(g.tensors[t], perm)
        for n in body:
            if n.op == CONV:
                n.attrs["layout"] = "NHWC"
        g.nodes = [*head, *body, *tail]
        used = {t for n in g.nodes for t in (*n.inputs, *n.outputs)} | set(g.inputs) | set(g.outputs)
        g.tensors = {k: v for k, v in g.tensors.items() if k in used}
        g.meta = {**g.meta, NHWC_NAMES: nhwc}
        return g


def _permuted(t: Tensor, perm: Sequence[int]) -> Tensor:
    return Tensor(t.name, tuple(t.shape[p] for p in perm), t.dtype, t.data)


def _fresh(g: Graph, base: str, like: Tensor) -> str:
    name, k = base, 1
    while name in g.tensors:
        name, k = f"{base}_{k}", k + 1
    g.tensors[name] = Tensor(name, like.shape, like.dtype)
    return name


def _rename(nodes: list[Node], old: str, new: str) -> None:
    for n in nodes:
        n.inputs = [new if i == old else i for i in n.inputs]
        n.outputs = [new if o == old else o for o in n.outputs]


class BlockWeights(Pass):
    """Each mynpu.Conv's weights OIHW -> OIHW<B>o (module docstring); a conv already blocked is left alone."""

    name = "mynpu.block_weights"

    def __init__(self, block: int) -> None:
        self.block = block

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        for n in g.nodes:
            if n.op != CONV or "block" in n.attrs:
                continue
            w = g.tensors[n.inputs[1]].data.astype(np.float32)  # [O, I, kh, kw]
            b, blocks = self.block, -(-w.shape[0] // self.block)
            padded = np.zeros((blocks * b, *w.shape[1:]), np.float32)
            padded[:w.shape[0]] = w
            blocked = padded.reshape(blocks, b, *w.shape[1:]).transpose(0, 2, 3, 4, 1).copy()  # [O/B, I, kh, kw, B]
            name = _fresh(g, f"{n.inputs[1]}__oihw{b}o", Tensor("", blocked.shape, "float32"))
            g.tensors[name] = Tensor(name, blocked.shape, "float32", blocked)
            n.inputs[1] = name
            n.attrs["block"] = b
        return g


def transform(fn: Function, options: Mapping[str, str]) -> Function:
    """mynpu's passes over one function, with the user's options (--vendor-opt mynpu.block=8); what fired
    is recorded in the graph's meta, for `aotc partition --show` and metadata.json."""
    passes = [FuseResidual(), ToNHWC(), BlockWeights(int(options["block"]))]
    graph, fired = run_passes_tracked(fn.graph, passes)
    graph.meta = {**graph.meta, "vendor_passes": fired, "vendor_options": dict(options)}
    return Function(fn.global_symbol, fn.compiler, graph, fn.composite)
