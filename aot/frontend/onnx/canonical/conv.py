"""Conv and ConvTranspose: explicit window attributes (kernel_shape, strides, dilations, pads; no
auto_pad), as aot/kernels/conv.py reads them. (QLinearConv and ConvInteger take Conv's: quant.py.)"""

from __future__ import annotations

from aot.errors import AotcError
from aot.frontend.onnx.canonical.base import shape_of, window_attrs
from aot.ir import Graph, Node


def conv(node: Node, graph: Graph, opset: int) -> None:
    """auto_pad SAME_* is refused where onnxruntime departs from the ONNX spec: with dilations
    (it rejects them) and when the stride outgrows the kernel so that the total padding is
    below -1 (it shifts the windows; at -1 both agree with no padding)."""
    x = shape_of(graph, node.inputs[0])
    kernel = tuple(node.attrs.get("kernel_shape", shape_of(graph, node.inputs[1])[2:]))
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if any(d != 1 for d in node.attrs.get("dilations", [])):
            raise AotcError(f"Conv with auto_pad {auto_pad} and dilations > 1 is not supported "
                            "(onnxruntime rejects it)", node=node)
        strides = node.attrs.get("strides", [1] * len(kernel))
        for i, (n, k, s) in enumerate(zip(x[2:], kernel, strides, strict=True)):
            if (-(-n // s) - 1) * s + k - n < -1:
                raise AotcError(f"Conv with auto_pad {auto_pad}: on spatial axis {i} stride {s} outgrows kernel "
                                f"{k} so far that the padding is negative; not supported", node=node)
    window_attrs(node, x, kernel)
    node.attrs.setdefault("group", 1)
    w = shape_of(graph, node.inputs[1])  # W against X's channels: the kernel table's check (aot/kernels/conv.py)
    if len(node.inputs) > 2 and node.inputs[2] and shape_of(graph, node.inputs[2]) != w[:1]:
        # onnx's inference does not look at B: a short one would be read past
        raise AotcError(f"B is {list(shape_of(graph, node.inputs[2]))}, but W {list(w)} has {w[0]} filters", node=node)


def conv_transpose(node: Node, graph: Graph, opset: int) -> None:
    x = shape_of(graph, node.inputs[0])
    w = shape_of(graph, node.inputs[1])
    y = shape_of(graph, node.outputs[0])
    nd = len(x) - 2
    kernel = list(node.attrs.get("kernel_shape", w[2:]))
    strides = list(node.attrs.get("strides", [1] * nd))
    dilations = list(node.attrs.get("dilations", [1] * nd))
    out_pad = list(node.attrs.get("output_padding", [0] * nd))
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER") and any(out_pad):
        raise AotcError("ConvTranspose with auto_pad SAME_* and output_padding is not supported "
                        "(onnx shape inference and onnxruntime disagree on its output size)", node=node)
    if "output_shape" in node.attrs or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        # total padding follows from the (known) output size
        begin, end = [], []
        for i in range(nd):
            total = strides[i] * (x[2 + i] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1 - y[2 + i]
            if total < 0:
                raise AotcError(f"ConvTranspose output size {y[2 + i]} is larger than the full output "
                                f"{y[2 + i] + total} (negative padding)", node=node)
            # ONNX (and onnxruntime): SAME_UPPER puts the odd unit at the end; SAME_LOWER and an
            # output_shape without auto_pad put it at the start (explicit pads are then ignored)
            if auto_pad == "SAME_UPPER":
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
        pads = begin + end
    elif auto_pad == "VALID":
        pads = [0] * 2 * nd
    else:
        pads = list(node.attrs.get("pads", [0] * 2 * nd))
    node.attrs = dict(kernel_shape=kernel, strides=strides, dilations=dilations, pads=pads,
                      output_padding=out_pad, group=node.attrs.get("group", 1))
