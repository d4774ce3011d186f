"""Canonical attributes: resolve ONNX opset differences once, in one place.

ONNX moved many parameters from attributes to inputs over its versions (Clip's
min/max, Slice's starts/ends, Pad's pads, Squeeze's axes, Reduce axes, Resize's
scales ...) and changed some meanings (Softmax's axis before and after opset 13).
Each rule here turns a node of any supported opset into one canonical form:
constant parameter inputs become attributes, defaults are filled in, negative
axes are made positive, auto_pad becomes explicit pads. Kernels, passes and
vendors then see a single form and never look at the opset.
"""

from __future__ import annotations

from aot.errors import AotcError
from aot.frontend.onnx.canonical import contrib, quant
from aot.frontend.onnx.canonical.base import Rule
from aot.frontend.onnx.canonical.conv import conv, conv_transpose
from aot.frontend.onnx.canonical.einsum import einsum
from aot.frontend.onnx.canonical.elementwise import clip, gelu, mean, mish, pow_, prelu, variadic, with_defaults
from aot.frontend.onnx.canonical.gemm import gemm
from aot.frontend.onnx.canonical.halves import compute_halves_in_float
from aot.frontend.onnx.canonical.index import affine_grid, col2im, max_unpool, reverse_sequence, tensor_scatter
from aot.frontend.onnx.canonical.norm import (
    batchnorm,
    layer_norm,
    lp_normalization,
    mean_variance_normalization,
    softmax,
)
from aot.frontend.onnx.canonical.pool import lp_pool, pool
from aot.frontend.onnx.canonical.recurrent import dynamic_quantize_lstm, recurrent
from aot.frontend.onnx.canonical.reduce import reduce, reduce_bool
from aot.frontend.onnx.canonical.resize import resize
from aot.frontend.onnx.canonical.shape import (
    cast,
    cast_like,
    center_crop_pad,
    concat,
    dropout,
    from_declared_shape,
    gather,
    pad,
    slice_,
    split,
    topk,
    transpose,
    view,
)
from aot.frontend.onnx.canonical.signal import dft
from aot.ir import Graph, Node
from aot.unsupported import UnsupportedNodes


def canonicalize(graph: Graph, opset: int) -> None:
    """Every node in its canonical form. A node a rule refuses does not stop the others: one such
    node is refused with its rule's message, several in one line grouped by op (UnsupportedNodes)."""
    new_nodes: list[Node] = []
    refused: list[tuple[AotcError, Node]] = []
    for node in graph.nodes:
        rule = RULES.get(node.op)
        try:
            replaced = rule(node, graph, opset) if rule else None
        except AotcError as e:
            if getattr(e.node, "name", None) != node.name:  # a shim of the node (QLinear ops) counts as it
                raise
            refused.append((e, node))
            continue
        new_nodes.extend(replaced if replaced is not None else [node])
    if len(refused) == 1:
        raise refused[0][0]
    if refused:
        raise UnsupportedNodes([(node, e.message) for e, node in refused])
    graph.nodes = new_nodes
    compute_halves_in_float(graph)  # float16/bfloat16: every op but Cast and the byte movers in float32


RULES: dict[str, Rule] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "MaxPool": pool,
    "AveragePool": pool,
    "LpPool": lp_pool,
    "HannWindow": from_declared_shape,
    "HammingWindow": from_declared_shape,
    "BlackmanWindow": from_declared_shape,
    "ConstantOfShape": from_declared_shape,
    "CenterCropPad": center_crop_pad,
    "Mish": mish,
    "DFT": dft,
    "MeanVarianceNormalization": mean_variance_normalization,
    "AffineGrid": affine_grid,
    "ReverseSequence": reverse_sequence,
    "MaxUnpool": max_unpool,
    "Col2Im": col2im,
    "TensorScatter": tensor_scatter,
    "LpNormalization": lp_normalization,
    "Clip": clip,
    "LeakyRelu": with_defaults(alpha=0.01),
    "Elu": with_defaults(alpha=1.0),
    "HardSigmoid": with_defaults(alpha=0.2, beta=0.5),
    "LRN": with_defaults(alpha=1e-4, beta=0.75, bias=1.0),
    "InstanceNormalization": with_defaults(epsilon=1e-5),
    "Sum": variadic("Add"),
    "Mean": mean,
    "Max": variadic("Max"),
    "Min": variadic("Min"),
    "Softmax": softmax,
    "LogSoftmax": softmax,
    "Hardmax": softmax,
    "Einsum": einsum,
    "LayerNormalization": layer_norm,
    "RMSNormalization": layer_norm,
    "Gelu": gelu,
    "Reshape": view,
    "Flatten": view,
    "Squeeze": view,
    "Unsqueeze": view,
    "Concat": concat,
    "Split": split,
    "Slice": slice_,
    "Pad": pad,
    "TopK": topk,
    "Transpose": transpose,
    "Gather": gather,
    "ReduceMean": reduce,
    "ReduceSum": reduce,
    "ReduceMax": reduce_bool,
    "ReduceMin": reduce_bool,
    "ReduceProd": reduce,
    "ReduceL1": reduce,
    "ReduceL2": reduce,
    "ReduceSumSquare": reduce,
    "ReduceLogSum": reduce,
    "ReduceLogSumExp": reduce,
    "Resize": resize,
    "Upsample": resize,
    "BatchNormalization": batchnorm,
    "Dropout": dropout,
    "Cast": cast,
    "Pow": pow_,
    "PRelu": prelu,
    "CastLike": cast_like,
    "Gemm": gemm,
    "LSTM": recurrent,
    "GRU": recurrent,
    "RNN": recurrent,
    "DynamicQuantizeLSTM": dynamic_quantize_lstm,
}
RULES.update(contrib.RULES)  # onnxruntime's float com.microsoft ops (transformer optimizer)
RULES.update(quant.RULES)  # the QLinear ops, QuantizeLinear / DequantizeLinear, ConvInteger
