"""DepthwiseAsConv: a 1-channel int8 DEPTHWISE_CONV_2D (depth multiplier m) becomes the CONV_2D it is, its
weights [1, kh, kw, m] as [m, kh, kw, 1]; other depthwise layers stay; on the DSP cores without Helium (M4,
M33, M7) the pass is left out, the depthwise kernels' multiplier path being the faster there, and the M55 takes
the conv form, Helium's CONV_2D being the faster (aot/compiler.py default_pipeline). Bit-exactness with LiteRT on
the host, the M4 and the M55: tests/frontend/test_tflite.py and tests/targets/test_tflite_cortex_m.py (dwmult_int8)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from aot.compiler import Options, partition_model
from aot.frontend import load_model
from aot.ir import tflite_ops as tfl

MODELS = Path(__file__).resolve().parents[1] / "models" / "tflite"


def test_one_channel_depthwise_is_a_conv_with_its_weights_transposed():
    g = partition_model(load_model(str(MODELS / "dwmult_int8.tflite")), Options()).graph
    (conv,) = [n for n in g.nodes if n.op in (tfl.CONV_2D, tfl.DEPTHWISE_CONV_2D)]
    assert conv.op == tfl.CONV_2D
    w = g.tensors[conv.inputs[1]]
    assert w.shape == (8, 10, 8, 1) and w.data is not None
    assert g.tensors[conv.outputs[0]].shape[-1] == 8 and len(np.asarray(conv.attrs["mult"])) == 8


@pytest.mark.parametrize(("target", "op"), [
    ("mps2-an386", tfl.DEPTHWISE_CONV_2D), ("mps2-an505", tfl.DEPTHWISE_CONV_2D), ("mps2-an500", tfl.DEPTHWISE_CONV_2D),
    ("mps3-an547", tfl.CONV_2D), ("host", tfl.CONV_2D)])
def test_dsp_cores_keep_the_depthwise_layer(target, op):
    """The M4, M33 and M7 take micro_speech's layer by tfl_depthwise_s8_mult (no pass); the M55 by Helium's CONV_2D
    (TFLM micro_speech 426,197 est. cycles against 486,358 by the multiplier path), the host by the packed conv."""
    g = partition_model(load_model(str(MODELS / "dwmult_int8.tflite")), Options(target=target)).graph
    assert [n.op for n in g.nodes if n.op in (tfl.CONV_2D, tfl.DEPTHWISE_CONV_2D)] == [op]


def test_depthwise_of_several_channels_stays():
    g = partition_model(load_model(str(MODELS / "split_int8.tflite")), Options()).graph
    assert sum(n.op == tfl.DEPTHWISE_CONV_2D for n in g.nodes) == 2
