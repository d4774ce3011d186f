"""Host ops of the 'conv' family: Conv and ConvTranspose (kernels in runtime_c/kernels/conv.c).

One params struct (aotc_conv_params) describes every convolution as 3-D: a 1-D or
2-D conv gets unit leading spatial dims, so 3-D convs come for free. Per node the
compiler picks the kernel:

    flat 3x3    2-D 3 x 3, no dilation, stride 1 with pads of 1 or stride 2 with start pads of
                0 or 1, at most FLAT_MAX_CG input channels per group (depthwise convs, RGB
                stems): per input plane, one flat pass over each output plane of its group,
                every tap a unit-stride read of a copy of the plane (stride 2: split by row and
                column parity), taps past a row's ends dropped by a mask; output written once
    depthwise   (the other) one input channel per group (not a single-channel input with several
                outputs): 2-D 3 x 3 at stride 1 or 2 with pads of 0 or 1 straight from the
                input, no scratch (runs of output rows in blocks of 8 outputs summed in
                registers; also at stride 2 where that beats the flat kernel); other 2-D 3 x 3
                at stride 1 or 2 on a zero-padded copy of each plane (stride 2: split into
                even and odd columns); other shapes a direct loop, no scratch
    pointwise   1 x 1 kernel, stride 1, no padding: the GEMM core on the input in place; on
                fewer positions than a panel (a 3 x 3 plane) and constant weights, X^T * W^T
                (W^T packed here), so the vectors run along the output channels
    implicit    every other 1-D or 2-D Conv with constant weights: Y^T = P * W^T with the patch
                matrix P never built (register tiles of positions x output channels read the
                input through a pointer per position; W^T packed here); no scratch, and faster
                than building patches. The rest (run-time weights, 3-D) take the three below:
    stride 1    2-D, stride 1, no dilation (narrow kernels): the input padded once in scratch,
                each patch-matrix row one copy from it, outputs on the padded width
    im2col      patch-matrix blocks of kc x nc in scratch, then the GEMM core
    direct      where the step has no memory to spare for even one patch block (the planner's
                scratch budget): direct loops, no scratch
    transpose   ConvTranspose: W^T * X into scratch, then added into the output (col2im)

Weights stay in ONNX layout for the GEMM paths (a group's [M/g, C/g * taps] block is already
the row-major A the GEMM core reads, and ConvTranspose reads it transposed by strides); the
implicit GEMM and X^T * W^T read each group's W^T, packed here in the core's panels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aot.csource.format import c_ints
from aot.emit_c.ops.base import NO_BUDGET_LIMIT, HostOp, NodeContext
from aot.emit_c.ops.gemm import KC, PANEL, WORK_BYTES, activation_fields, pack_b, residual, work_bytes
from aot.ir import Graph, Node

NC = 256  # output positions per im2col block: kc x nc floats of scratch (<= 256 KiB)
COLS_FLOATS = 64 * 1024  # ConvTranspose: floats of W^T * X kept in scratch per block
MAX_SPATIAL = 3
# 3 x 3 convs with at most this many input channels per group (depthwise, RGB stems) take the
# flat direct kernel: it costs a pass over each output plane per input channel, which beats
# im2col + GEMM (a copy of 9 x the input, and few rows per register tile) up to about here
FLAT_MAX_CG = 4
POINTWISE_T_NC = 256  # aotc_conv_pointwise_t_f32: output channels per block (positions x this in scratch)
# aotc_conv_depthwise3x3_direct_f32 computes an output row in blocks of DIRECT_DW_BLOCK outputs, the
# last one rounded up; at stride 2 it takes fewer instructions than the flat kernel (which first
# splits each input plane four ways) where that last block is nearly full: rows of OW outputs with
# OW % DIRECT_DW_BLOCK >= DIRECT_DW_S2_MIN_LAST (x86-64 AVX2: 0.78 to 0.96 x the flat kernel's
# instructions there, 1.0 to 1.3 x on other rows and at stride 1)
DIRECT_DW_BLOCK = 8
DIRECT_DW_S2_MIN_LAST = 5
# the kernels without a scratch argument (the others take one)
NO_SCRATCH_KERNELS = ("aotc_conv_depthwise_f32", "aotc_conv_direct_f32", "aotc_conv_implicit_f32",
                      "aotc_conv_depthwise3x3_direct_f32")
PACKED_WT_KERNELS = ("aotc_conv_pointwise_t_f32", "aotc_conv_implicit_f32")  # they read W^T packed at compile time


@dataclass(frozen=True)
class ConvPlan:
    kernel: str  # C function
    fields: dict[str, str]  # the aotc_conv_params
    scratch: int  # bytes
    what: str  # for the params comment


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _balanced_block(total: int, limit: int, multiple: int = 1) -> int:
    """Block size <= limit (rounded to `multiple` when it splits) cutting `total` into equal blocks."""
    if total <= limit:
        return total
    block = _ceil_div(total, _ceil_div(total, limit))
    return min(limit, _ceil_div(block, multiple) * multiple)


def _pad3(values: list[int] | tuple[int, ...], fill: int) -> list[int]:
    return [fill] * (MAX_SPATIAL - len(values)) + list(values)


def _patch_ldc(nc: int) -> int:
    """conv.c: patch rows are a whole, odd number of panels apart (no two rows of a panel share L1 sets)."""
    return (_ceil_div(nc, PANEL) | 1) * PANEL


def _blocks(k: int, npos: int, budget: int, fixed: int = 0, per_nc: int = 0) -> tuple[int, int] | None:
    """(kc, nc): patch-matrix blocks of kc <= KC rows by nc <= NC columns, as large as fit the
    budget with `fixed` more floats and `per_nc` more per column; None if not even 1 x PANEL fits."""
    kc = _balanced_block(k, KC)
    for limit in range(NC, 0, -PANEL):  # narrower blocks first: fewer columns cost little
        nc = _balanced_block(npos, limit, PANEL)
        if (fixed + kc * _patch_ldc(nc) + per_nc * nc) * 4 <= budget:
            return kc, nc
    nc = min(npos, PANEL)
    rows = (budget // 4 - fixed - per_nc * nc) // _patch_ldc(nc)  # then fewer rows
    return (_balanced_block(k, rows), nc) if rows >= 1 else None


def _conv_plan(node: Node, graph: Graph, budget: int = NO_BUDGET_LIMIT) -> ConvPlan:
    transpose = node.op == "ConvTranspose"
    x = graph.tensors[node.inputs[0]].shape
    y = graph.tensors[node.outputs[0]].shape
    a = node.attrs
    nd = len(x) - 2
    group = a["group"]
    kernel, strides, dilations, pads = a["kernel_shape"], a["strides"], a["dilations"], a["pads"]
    in_c, out_c = x[1], y[1]
    taps = math.prod(kernel)
    fields = {
        "batch": str(x[0]), "group": str(group), "in_c": str(in_c), "out_c": str(out_c),
        "in_size": c_ints(_pad3(x[2:], 1)), "out_size": c_ints(_pad3(y[2:], 1)),
        "kernel": c_ints(_pad3(kernel, 1)), "strides": c_ints(_pad3(strides, 1)),
        "dilations": c_ints(_pad3(dilations, 1)), "pads": c_ints(_pad3(pads[:nd], 0)),
        "kc": "0", "nc": "0", **activation_fields(node),
    }
    geometry = (f"{list(x)} -> {list(y)}, kernel {list(kernel)}, strides {list(strides)}, "
                f"dilations {list(dilations)}, pads {list(pads)}, group {group}")
    if transpose:
        rows = out_c // group * taps
        npos = math.prod(x[2:])
        nc = npos if rows * npos <= COLS_FLOATS else max(PANEL, COLS_FLOATS // rows // PANEL * PANEL)
        fields["nc"] = str(nc)
        return ConvPlan("aotc_conv_transpose_f32", fields, rows * nc * 4 + WORK_BYTES,
                        f"ConvTranspose {geometry}")
    # depthwise: one input channel per group (not one input channel feeding many outputs, e.g. a
    # first layer on a 1-channel spectrogram: a GEMM of out_c x taps, far faster below)
    dw = in_c // group == 1 and not (group == 1 and out_c > 1)
    direct = dw and _direct_dw3x3(nd, kernel, strides, dilations, pads)
    flat = _flat3x3_floats(kernel, strides, dilations, pads, x[2:], y[2:]) if nd == 2 else None
    flat_fits = in_c // group <= FLAT_MAX_CG and flat is not None and flat * 4 <= budget
    # the scratch-free depthwise kernel: where the flat one has no memory, or beats it (stride 2)
    if direct and (not flat_fits or strides[-1] == 2 and y[-1] % DIRECT_DW_BLOCK >= DIRECT_DW_S2_MIN_LAST):
        return ConvPlan("aotc_conv_depthwise3x3_direct_f32", fields, 0,
                        f"Conv (depthwise 3x3 straight from the input) {geometry}")
    if flat_fits:
        return ConvPlan("aotc_conv3x3_flat_f32", fields, flat * 4,
                        f"Conv (3x3, {in_c // group} input channel(s) per group: a flat pass per plane) {geometry}")
    if dw and _padded_dw3x3(nd, kernel, strides, dilations):
        s = strides[-1]
        rows, cols = (y[-2] - 1) * s + 3, (y[-1] - 1) * s + 3  # conv.c: aotc_conv_depthwise3x3_f32
        planes = rows * cols if s == 1 else 4 * _ceil_div(rows, 2) * _ceil_div(cols, 2)
        wide = y[-2] * (cols if s == 1 else _ceil_div(cols, 2))
        if (planes + wide) * 4 <= budget:  # else the direct loop below, without scratch
            return ConvPlan("aotc_conv_depthwise3x3_f32", fields, (planes + wide) * 4,
                            f"Conv (depthwise 3x3 on a padded plane) {geometry}")
    if dw:
        return ConvPlan("aotc_conv_depthwise_f32", fields, 0, f"Conv (depthwise) {geometry}")
    if all(k == 1 for k in kernel) and all(s == 1 for s in strides) and not any(pads):
        npos = math.prod(y[2:])
        # a few positions (a 3 x 3 plane): vectors along the output channels, W^T packed here,
        # nc channels at a time through scratch
        nc = min(_ceil_div(out_c // group, PANEL) * PANEL, POINTWISE_T_NC, budget // (npos * 4) // PANEL * PANEL)
        if npos < PANEL and npos != PANEL // 2 and nc > 0 and graph.const(node.inputs[1]) is not None:
            fields["nc"] = str(nc)
            return ConvPlan("aotc_conv_pointwise_t_f32", fields, npos * nc * 4,
                            f"Conv (1x1 on {npos} positions, as X^T * W^T) {geometry}")
        return ConvPlan("aotc_conv_pointwise_f32", fields, work_bytes(in_c // group, budget), f"Conv (1x1) {geometry}")
    if nd <= 2 and graph.const(node.inputs[1]) is not None:
        return ConvPlan("aotc_conv_implicit_f32", fields, 0, f"Conv (implicit GEMM, no scratch) {geometry}")
    oh, ow = y[-2], (y[-1] if nd >= 2 else 1)
    pw = ow + kernel[-1] - 1
    k = in_c // group * taps
    if nd == 2 and list(strides) == [1, 1] and list(dilations) == [1, 1] and (kernel[-1] - 1) * 4 <= ow:
        # stride 1: patch rows copied whole from a padded plane (junk columns <= 1/4 of the work)
        pad_floats = _ceil_div(in_c // group * (oh + kernel[0] - 1) * pw + kernel[-1], PANEL) * PANEL
        blocks = _blocks(k, oh * pw, budget, fixed=pad_floats, per_nc=out_c // group)
        if blocks is not None:  # else plain im2col, which needs no padded copy of the input
            kc, nc = blocks
            fields["kc"], fields["nc"] = str(kc), str(nc)
            return ConvPlan("aotc_conv_s1_f32", fields, (pad_floats + kc * _patch_ldc(nc) + out_c // group * nc) * 4,
                            f"Conv (stride 1 on a padded plane, blocks of {kc} x {nc}) {geometry}")
    blocks = _blocks(k, math.prod(y[2:]), budget)
    if blocks is None:  # no memory to spare at this step: direct loops, no scratch
        return ConvPlan("aotc_conv_direct_f32", fields, 0, f"Conv (direct, no scratch to spare) {geometry}")
    kc, nc = blocks
    fields["kc"], fields["nc"] = str(kc), str(nc)
    return ConvPlan("aotc_conv_f32", fields, kc * _patch_ldc(nc) * 4,
                    f"Conv (im2col, blocks of {kc} x {nc}) {geometry}")


def _flat3x3_floats(kernel: list[int], strides: list[int], dilations: list[int], pads: list[int],
                    in_hw: tuple[int, ...], out_hw: tuple[int, ...]) -> int | None:
    """Scratch floats of aotc_conv3x3_flat_f32 (conv.c) for a 2-D conv, or None where it does
    not apply: a 3 x 3 kernel, no dilation, and stride 1 with pads of 1 on every side, or stride
    2 with pads of 0 or 1 at the start (a left pad of 0 only if no output reads past input
    column 2 OW - 1: the split planes are OW wide)."""
    (ih, iw), (oh, ow) = in_hw, out_hw
    if list(kernel) != [3, 3] or list(dilations) != [1, 1]:
        return None
    mask = _ceil_div(oh * ow + 1, 16) * 16
    if list(strides) == [1, 1] and list(pads) == [1, 1, 1, 1]:
        return mask + (ih + 2) * iw + 2
    top, left = pads[0], pads[1]
    if list(strides) == [2, 2] and top in (0, 1) and left in (0, 1) and (left or 2 * ow >= iw):
        return mask + 4 * ((oh + 2) * ow + 2)
    return None


def _direct_dw3x3(nd: int, kernel: list[int], strides: list[int], dilations: list[int], pads: list[int]) -> bool:
    """aotc_conv_depthwise3x3_direct_f32 (conv.c): a 2-D 3 x 3 conv, strides (1, 1) or (2, 2), no
    dilation, pads of 0 or 1 on every side."""
    return _padded_dw3x3(nd, kernel, strides, dilations) and all(p in (0, 1) for p in pads)


def _padded_dw3x3(nd: int, kernel: list[int], strides: list[int], dilations: list[int]) -> bool:
    """A 2-D 3 x 3 depthwise conv with strides (1, 1) or (2, 2) and no dilation."""
    return nd == 2 and list(kernel) == [3, 3] and list(dilations) == [1, 1] and list(strides) in ([1, 1], [2, 2])


def _check(node: Node, graph: Graph) -> str | None:
    x = graph.tensors[node.inputs[0]].shape
    w = graph.tensors[node.inputs[1]].shape
    nd = len(x) - 2
    if not 1 <= nd <= MAX_SPATIAL:
        return f"{node.op} with {nd} spatial dims is not supported (1 to {MAX_SPATIAL})"
    if len(w) != len(x) or list(w[2:]) != list(node.attrs["kernel_shape"]):
        return f"{node.op} weight shape {list(w)} does not match kernel_shape {node.attrs['kernel_shape']}"
    group, in_c, out_c = node.attrs["group"], x[1], graph.tensors[node.outputs[0]].shape[1]
    if group < 1 or in_c % group or out_c % group:
        return f"{node.op} group {group} does not divide {in_c} input and {out_c} output channels"
    per_group = (w[0] == out_c and w[1] * group == in_c) if node.op != "ConvTranspose" else \
        (w[0] == in_c and w[1] * group == out_c)
    if not per_group:
        return f"{node.op} weight shape {list(w)} does not match {in_c} -> {out_c} channels in {group} groups"
    if any(p < 0 for p in node.attrs["pads"]):
        return f"{node.op} pads must not be negative, got {node.attrs['pads']}"
    if max(graph.tensors[t].size for t in (node.inputs[0], node.inputs[1], node.outputs[0])) > 2**31 - 1:
        return "tensor has more than 2^31 - 1 elements"
    return None


def _scratch(node: Node, graph: Graph, budget: int) -> int:
    return _conv_plan(node, graph, budget).scratch


def _emit(ctx: NodeContext) -> None:
    plan = _conv_plan(ctx.node, ctx.graph, ctx.scratch_budget)
    x, w = ctx.inputs[0], ctx.inputs[1]
    bias = ctx.inputs[2] if len(ctx.inputs) > 2 else ""
    p = ctx.params("aotc_conv_params", plan.fields, comment=plan.what)
    if plan.kernel in PACKED_WT_KERNELS:  # each group's W^T, packed (gemm.c's panels)
        group = ctx.attrs["group"]
        wg = np.asarray(ctx.const(w), np.float32).reshape(group, ctx.shape(ctx.outputs[0])[1] // group, -1)
        w_ptr = ctx.const_array("wt_packed", np.stack([pack_b(m.T) for m in wg]),
                                comment=f"W^T of {ctx.node.name}, packed per group")
    else:
        w_ptr = ctx.ptr(w)
    args = [p, ctx.ptr(x), w_ptr, ctx.ptr(bias)]
    if ctx.node.op != "ConvTranspose":
        args.append(ctx.ptr(residual(ctx.node)))
    args.append(ctx.ptr(ctx.outputs[0]))
    if plan.kernel not in NO_SCRATCH_KERNELS:
        args.append(ctx.scratch("float") if plan.scratch else "NULL")
    ctx.call(plan.kernel, *args)


OPS: dict[str, HostOp] = {
    "Conv": HostOp(_emit, family="conv", needs=("gemm",), scratch=_scratch, check=_check),
    # Conv with a fused epilogue (aot/passes/fuse_epilogue.py): + residual input 3, then the activation
    "FusedConv": HostOp(_emit, family="conv", needs=("gemm",), scratch=_scratch, check=_check),
    "ConvTranspose": HostOp(_emit, family="conv", needs=("gemm",), scratch=_scratch, check=_check),
}
