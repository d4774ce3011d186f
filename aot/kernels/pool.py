"""Host ops of the 'pool' family (kernels in runtime_c/kernels/pool*.c).

MaxPool / AveragePool arrive canonical (aot/frontend/onnx/canonical/pool.py): kernel_shape,
strides, dilations, explicit pads [begin..., end...], ceil_mode, count_include_pad, and an
output shape that agrees with the window arithmetic. 1-D and 2-D pools are passed to the
kernel as 3-D ones with leading 1s.

A MaxPool whose Indices output is read (canonical form: two outputs, and storage_order) runs
aotc_maxpool_indices_f32, which also writes each window's argmax as an int64 index into the
flattened N x C x spatial input; every other MaxPool runs aotc_maxpool_f32, or on an AVX-512 host
the kernel of its window's shape in registers (mp16_kernel), which then alone is compiled.

A float MaxPool marked channels last (aotc_in_nhwc and aotc_out_nhwc: PushTransposeDown moved a vendor
boundary's Transpose below it) has input [N, spatial..., C] and output [N, spatial..., C] and runs
aotc_maxpool_nhwc_f32.
"""

from __future__ import annotations

import numpy as np

from aot.csource.format import c_ints
from aot.ir import Graph, Node
from aot.ir.schemas import reads_nhwc
from aot.kernels.base import Candidate, HostOp, KernelChoice, KernelFacts, NodeContext, as_3d

MAX_SPATIAL = 3  # the kernels' params struct holds (d, h, w)


def _check_rank(node: Node, graph: Graph) -> str | None:
    rank = len(graph.tensors[node.inputs[0]].shape)
    if rank < 3:
        return f"input rank {rank} has no spatial dims (expected N, C, spatial...)"
    if rank - 2 > MAX_SPATIAL and node.op in ("MaxPool", "AveragePool"):
        return f"{rank - 2}-D pooling is not supported (1-D, 2-D and 3-D are)"
    return None


def _check_maxpool(node: Node, graph: Graph) -> str | None:
    if _dtype(node, graph) != "float32" and _has_indices(node):
        return "MaxPool's Indices output on integers is not supported"
    if reads_nhwc(node) and (_dtype(node, graph) != "float32" or _has_indices(node)):
        return "a channels-last MaxPool is float32 values only"  # (PushTransposeDown makes no other)
    return _check_rank(node, graph)



def pool_params(ctx: NodeContext) -> str:
    """The node's aotc_pool_params (canonical window attributes), declared; its C name. Channels last
    (reads_nhwc): planes is the batch, the spatial dims those between it and the channels."""
    xs, ys = ctx.shape(ctx.inputs[0]), ctx.shape(ctx.outputs[0])
    a = ctx.attrs
    nd = len(xs) - 2
    last = reads_nhwc(ctx.node)
    fields = {
        "planes": str(xs[0] if last else xs[0] * xs[1]),
        "in": c_ints(as_3d(xs[1:-1] if last else xs[2:], 1)),
        "out": c_ints(as_3d(ys[1:-1] if last else ys[2:], 1)),
        "kernel": c_ints(as_3d(a["kernel_shape"], 1)),
        "strides": c_ints(as_3d(a["strides"], 1)),
        "dilations": c_ints(as_3d(a.get("dilations", [1] * nd), 1)),
        "pads_begin": c_ints(as_3d(a["pads"][:nd], 0)),
        "pads_end": c_ints(as_3d(a["pads"][nd:], 0)),
        "count_include_pad": str(int(a.get("count_include_pad", 0))),
    }
    layout = " channels last" if last else ""
    note = (f"{ctx.node.op}{layout} {list(xs)} -> {list(ys)}: kernel {a['kernel_shape']}, strides {a['strides']}, "
            f"dilations {a.get('dilations', [1] * nd)}, pads {a['pads']}, ceil_mode {a.get('ceil_mode', 0)}")
    return ctx.params("aotc_pool_params", fields, comment=note)


def _emit_window(kernel: str):
    def emit(ctx: NodeContext) -> None:
        x, y = ctx.inputs[0], ctx.outputs[0]
        a = ctx.attrs
        nd = len(ctx.shape(x)) - 2
        p = pool_params(ctx)
        if ctx.choice.kernel == MAXPOOL_INDICES:
            order = a["storage_order"]
            ctx.comment(f"Indices: each max's position in the flattened input, {'column' if order else 'row'} "
                        f"major over the {nd} spatial dim{'s' if nd > 1 else ''} (storage_order {order})")
            ctx.call(MAXPOOL_INDICES, p, str(nd), str(order), ctx.ptr(x), ctx.ptr(y), ctx.ptr(ctx.outputs[1]))
        elif ctx.choice.kernel == MAXPOOL_NHWC:
            ctx.call(MAXPOOL_NHWC, p, str(ctx.shape(x)[-1]), ctx.ptr(x), ctx.ptr(y))
        elif ctx.choice.kernel:  # MaxPool's table names its kernel
            ctx.call(ctx.choice.kernel, p, ctx.ptr(x), ctx.ptr(y))
        else:
            ctx.call(f"aotc_{kernel}_f32", p, ctx.ptr(x), ctx.ptr(y))
    return emit


def _dtype(node: Node, graph: Graph) -> str:
    return graph.tensors[node.inputs[0]].dtype


def _has_indices(node: Node) -> bool:
    return len(node.outputs) > 1 and bool(node.outputs[1])


def _nchw_f32(node: Node, graph: Graph) -> bool:
    """A float MaxPool of values only in ONNX's layout: what the plain and AVX-512 kernels take."""
    return _dtype(node, graph) == "float32" and not _has_indices(node) and not reads_nhwc(node)


def mp16_kernel(node: Node, graph: Graph) -> str | None:
    """The float MaxPool's AVX-512F kernel for the node's window (pool_avx512.h), or None: 2-D windows without
    dilation of at most 17 columns at column stride 1 or 33 at 2, fewer leading pad columns than taps
    (mp16_fits); of 3 columns after 0 or 1 pad columns, or 2 after none, at stride 2 or 1, a kernel each."""
    xs, attrs = graph.tensors[node.inputs[0]].shape, node.attrs
    nd = len(xs) - 2
    if nd > 2 or any(d != 1 for d in attrs.get("dilations", [1] * nd)):
        return None
    kw, sw, pw = attrs["kernel_shape"][-1], attrs["strides"][-1], attrs["pads"][nd - 1]
    if pw >= kw or not ((sw == 1 and kw <= 17) or (sw == 2 and kw <= 33)):
        return None
    if (kw, pw) in ((3, 0), (3, 1), (2, 0)):
        return f"aotc_maxpool_k{kw}s{sw}p{pw}_f32"
    return "aotc_maxpool_avx512_f32"


NO_SCRATCH_ARG = KernelFacts(scratch_arg=False)  # MaxPool's kernels: none takes scratch


def _mp16(kernel: str) -> Candidate:
    return Candidate(kernel, lambda n, g, budget: KernelChoice(kernel),
                     applies=lambda n, g, t: _nchw_f32(n, g) and mp16_kernel(n, g) == kernel,
                     facts=KernelFacts(isa="avx512", scratch_arg=False))


MP16_KERNELS = (*(f"aotc_maxpool_k{kw}s{sw}p{pw}_f32" for sw in (2, 1) for kw, pw in ((3, 1), (3, 0), (2, 0))),
                "aotc_maxpool_avx512_f32")
MAXPOOL_INDICES = "aotc_maxpool_indices_f32"
MAXPOOL_NHWC = "aotc_maxpool_nhwc_f32"
# MaxPool's kernels: values and Indices (one window at a time) where Indices is read, else values only
MAXPOOL_KERNELS = (
    Candidate(MAXPOOL_NHWC, lambda n, g, budget: KernelChoice(MAXPOOL_NHWC),
              applies=lambda n, g, t: reads_nhwc(n), facts=NO_SCRATCH_ARG),
    # 8-bit integers (quantized models; aot/passes/qdq.py): values only
    Candidate("aotc_maxpool_i8", lambda n, g, budget: KernelChoice("aotc_maxpool_i8"),
              applies=lambda n, g, t: _dtype(n, g) == "int8" and not _has_indices(n), facts=NO_SCRATCH_ARG),
    Candidate("aotc_maxpool_u8", lambda n, g, budget: KernelChoice("aotc_maxpool_u8"),
              applies=lambda n, g, t: _dtype(n, g) == "uint8" and not _has_indices(n), facts=NO_SCRATCH_ARG),
    Candidate(MAXPOOL_INDICES, lambda n, g, budget: KernelChoice(MAXPOOL_INDICES),
              applies=lambda n, g, t: _has_indices(n), facts=NO_SCRATCH_ARG),
    # on an AVX-512 host, 2-D windows in registers: a kernel per group of window shapes, so a bundle
    # compiles only those its pools have
    *(_mp16(k) for k in MP16_KERNELS),
    Candidate("aotc_maxpool_f32", lambda n, g, budget: KernelChoice("aotc_maxpool_f32"),
              applies=lambda n, g, t: _nchw_f32(n, g), facts=NO_SCRATCH_ARG),
)


def _emit_global(kernel: str):
    def emit(ctx: NodeContext) -> None:
        x, y = ctx.inputs[0], ctx.outputs[0]
        xs = ctx.shape(x)
        size = int(np.prod(xs[2:], dtype=np.int64))
        ctx.call(f"aotc_{kernel}_f32", str(xs[0] * xs[1]), str(size), ctx.ptr(x), ctx.ptr(y))
    return emit


OPS: dict[str, HostOp] = {
    "MaxPool": HostOp(_emit_window("maxpool"), family="pool", check=_check_maxpool, kernels=MAXPOOL_KERNELS,
                      dtypes=("float32", "int8", "uint8")),
    "AveragePool": HostOp(_emit_window("avgpool"), family="pool", check=_check_rank),
    "GlobalMaxPool": HostOp(_emit_global("global_maxpool"), family="pool", check=_check_rank),
    "GlobalAveragePool": HostOp(_emit_global("global_avgpool"), family="pool", check=_check_rank),
}
