"""mynpu's own tests, as a vendor package keeps them (after `pip install .[test]`: `pytest tests`), with no
more of aotc than its vendor API (docs/vendor-api.md): aot.testing, aot.ir, aot.vendor.

aotc's test kit runs its catalogue of op cases through mynpu against onnxruntime, then the package's example
model with mynpu's own op against its QuantizeLinear + DequantizeLinear twin; the transform's passes are
checked on a function made by hand. aotc's repository runs the same through the command line
(tests/vendors/test_mynpu_example.py)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from aotc_mynpu import VENDOR
from aotc_mynpu.examples import requant_model
from aotc_mynpu.transform import CONV, transform

from aot.ir import Function, Graph, Node, Tensor
from aot.testing import Case, run_kit


@pytest.mark.parametrize("block", ["4", "8"])
def test_kit(block):
    """Every case mynpu claims computes what onnxruntime does; it claims what its checkers say it should."""
    report = run_kit(VENDOR, vendor_options=[("block", block)])
    assert report.ok, report.summary()
    assert {"Conv", "Relu", "Add", "Gemm"} <= report.claimed_ops()


def test_requant_model():
    """The example model (com.mynpu.Requant between two convs) through mynpu, against its twin's outputs."""
    x = np.random.default_rng(0).standard_normal((1, 3, 12, 12)).astype(np.float32)
    twin = ort.InferenceSession(requant_model(reference=True).SerializeToString(),
                                          providers=["CPUExecutionProvider"])
    case = Case("requant", requant_model(), {"x": x}, expected=twin.run(None, {"x": x}))
    report = run_kit(VENDOR, [case])
    assert report.ok and report.results[0].claimed, report.summary(verbose=True)


def _function() -> Function:
    """A function as aotc hands it to mynpu: NHWC at its boundary, the model's NCHW inside between the
    transposes, a conv (5 output channels) and a Relu."""
    t = {name: Tensor(name, shape, "float32") for name, shape in
         (("x_nhwc", (1, 4, 4, 3)), ("x", (1, 3, 4, 4)), ("c", (1, 5, 4, 4)), ("r", (1, 5, 4, 4)),
          ("r_nhwc", (1, 4, 4, 5)))}
    w = np.arange(5 * 3 * 3 * 3, dtype=np.float32).reshape(5, 3, 3, 3)
    t["w"] = Tensor("w", w.shape, "float32", w)
    conv = {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1], "dilations": [1, 1], "group": 1}
    nodes = [Node("Transpose", "in_layout", ["x_nhwc"], ["x"], {"perm": [0, 3, 1, 2]}),
             Node("Conv", "conv", ["x", "w"], ["c"], conv),
             Node("Relu", "relu", ["c"], ["r"]),
             Node("Transpose", "out_layout", ["r"], ["r_nhwc"], {"perm": [0, 2, 3, 1]})]
    return Function("m_mynpu_0", "mynpu", Graph("m_mynpu_0", nodes, t, ["x_nhwc"], ["r_nhwc"]))


def test_transform_folds_layouts_and_blocks_weights():
    out = transform(_function(), {"block": "4", "graph_passes": "on"})
    g = out.graph
    assert g.meta["vendor_passes"] == ["mynpu.fuse_residual", "mynpu.nhwc", "mynpu.block_weights"]
    assert [n.op for n in g.nodes] == [CONV, "Relu"]  # the boundary transposes folded
    conv = g.nodes[0]
    assert conv.inputs[0] == "x_nhwc" and g.nodes[1].outputs == ["r_nhwc"]
    assert g.tensors["c"].shape == (1, 4, 4, 5)  # NHWC inside, under the model's name
    assert g.meta["mynpu_nhwc"]["r_nhwc"] == "r"  # for the taps
    blocked = g.tensors[conv.inputs[1]].data  # OIHW4o: 5 output channels in 2 blocks, padded with zeros
    w = _function().graph.tensors["w"].data
    assert blocked.shape == (2, 3, 3, 3, 4) and not blocked[1, ..., 1:].any()
    assert np.array_equal(blocked.transpose(0, 4, 1, 2, 3).reshape(8, 3, 3, 3)[:5], w)
