"""Graph rewrites that are not partitioning. Each pass: Graph -> Graph, leaving a graph that verifies."""

from __future__ import annotations

from aot.ir import Graph
from aot.passes.base import Pass, run_passes, run_passes_tracked, verify_graph
from aot.passes.channel_norm import ChannelLayerNorm
from aot.passes.conv_nhwc import ConvReadsNHWC, ConvWritesNHWC
from aot.passes.depthwise_as_conv import DepthwiseAsConv
from aot.passes.drop_identity import DropIdentity
from aot.passes.fold_affine import FoldAffine
from aot.passes.fold_batchnorm import FoldBatchNorm
from aot.passes.fold_channel_scale import FoldChannelScale
from aot.passes.fold_pad import FoldPad
from aot.passes.fuse_activation import FuseActivation
from aot.passes.fuse_elementwise import FuseElementwise
from aot.passes.fuse_epilogue import FuseEpilogue
from aot.passes.fuse_norm import FuseNorm
from aot.passes.fuse_residual import FuseResidualAdd
from aot.passes.fuse_swish_mean import FuseSwishMean
from aot.passes.merge_products import MergeSummedProducts
from aot.passes.push_transpose import PushTransposeDown
from aot.passes.qdq import LowerQDQ
from aot.passes.remove_dead_nodes import RemoveDeadNodes
from aot.passes.simplify_layout import SimplifyLayout

# SimplifyLayout and FoldAffine (issue 28: what tf2onnx writes) after LowerQDQ, so quantized convs are
# QLinearConv by then and keep their own Mul/Adds; before partitioning, because cancelling transposes and
# folding constant affine ops into weights is right for every backend (vendors see the folded graph).
# FoldPad after LowerQDQ too, and after SimplifyLayout, which cancels Transposes that may stand between a
# Pad and its conv. PushTransposeDown first: it moves tf2onnx's Transposes past the elementwise ops between
# them until SimplifyLayout can cancel them.
DEFAULT_PIPELINE: tuple[Pass, ...] = (DropIdentity(), FoldBatchNorm(), LowerQDQ(), PushTransposeDown(),
                                      SimplifyLayout(), FoldPad(),
                                      DepthwiseAsConv(), FoldAffine(), MergeSummedProducts(), RemoveDeadNodes())
# After partitioning, on the nodes left to the host code generator.
# ChannelLayerNorm after FuseNorm (the LayerNormalization of a decomposed chain) and before ConvReadsNHWC,
# which would take the Transpose after a channels-first LayerNorm into the conv reading it.
# FuseSwishMean after FuseActivation, which makes the Swish of Sigmoid -> Mul.
# ConvReadsNHWC and ConvWritesNHWC last: the fused convs they rewrite to read a channels-last input
# and store a channels-last output in place of Transposes.
# FoldChannelScale is not here: it runs after these for --target host alone (compile_partitioned), given the
# kernel table's on_gemm_core (a microcontroller's 1 x 1 convs take the implicit GEMM with packed weights).
HOST_PIPELINE: tuple[Pass, ...] = (FuseNorm(), ChannelLayerNorm(), FuseActivation(), FuseEpilogue(), FuseResidualAdd(),
                                   FuseElementwise(), FuseSwishMean(), ConvReadsNHWC(),
                                   ConvWritesNHWC())


def simplify(graph: Graph, pipeline: tuple[Pass, ...] = DEFAULT_PIPELINE) -> Graph:
    """The graph rewrites, through the same verified runner as the partition steps."""
    return run_passes(graph, pipeline)


__all__ = ["DEFAULT_PIPELINE", "HOST_PIPELINE", "ChannelLayerNorm", "ConvReadsNHWC", "ConvWritesNHWC",
           "DepthwiseAsConv", "DropIdentity", "FoldAffine", "FoldBatchNorm", "FoldChannelScale", "FoldPad",
           "FuseActivation", "FuseElementwise", "FuseEpilogue", "FuseNorm", "FuseResidualAdd", "FuseSwishMean",
           "LowerQDQ", "MergeSummedProducts", "Pass", "PushTransposeDown", "RemoveDeadNodes", "SimplifyLayout",
           "run_passes", "run_passes_tracked", "simplify", "verify_graph"]
