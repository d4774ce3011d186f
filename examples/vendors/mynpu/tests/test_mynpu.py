"""mynpu's own tests, as a vendor package keeps them (after `pip install .[test]`: `pytest tests`).

aotc's test kit (aot.testing) runs its catalogue of op cases through mynpu against onnxruntime; the
package's example model checks mynpu's own op against its QuantizeLinear + DequantizeLinear twin; and the
transform's passes are checked on a function of their own. aotc's repository runs the same through the
command line (tests/vendors/test_mynpu_example.py)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from aotc_mynpu import VENDOR
from aotc_mynpu.examples import requant_model
from aotc_mynpu.transform import CONV, transform

from aot.build import build, configure, run_bundle
from aot.compiler import Options, compile_model, partition_model
from aot.testing import run_kit


@pytest.mark.parametrize("block", ["4", "8"])
def test_kit(block):
    """Every case mynpu claims computes what onnxruntime does; it claims what its checkers say it should."""
    report = run_kit(VENDOR, vendor_options=[("block", block)])
    assert report.ok, report.summary()
    assert {"Conv", "Relu", "Add", "Gemm"} <= report.claimed_ops()


def test_requant_model(tmp_path):
    bundle = compile_model(requant_model(), Options(vendors=(VENDOR,)))
    (fn,) = bundle.metadata["partition"]
    assert fn["ops"] == [CONV, "com.mynpu.Requant", CONV]
    bundle.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(0).standard_normal((1, 3, 12, 12)).astype(np.float32)
    outputs, _ = run_bundle(tmp_path / "out", bundle.metadata, [x])
    ours = outputs["y"]
    twin = ort.InferenceSession(requant_model(reference=True).SerializeToString(), providers=["CPUExecutionProvider"])
    (ref,) = twin.run(None, {"x": x})
    assert np.abs(ours - ref).max() <= 1e-4 * max(1.0, float(np.abs(ref).max()))


def test_transform_blocks_weights_and_folds_layouts():
    """One function through mynpu's passes: its convs fused with their residual and Relu, the weights blocked
    OIHW8o, the activations inside NHWC."""
    parted = partition_model(requant_model(), Options(vendors=(VENDOR,)))
    (fn,) = parted.graph.functions.values()
    out = transform(fn, {"block": "8", "graph_passes": "on"})
    assert out.graph.meta["vendor_passes"] == ["mynpu.fuse_residual", "mynpu.nhwc", "mynpu.block_weights"]
    convs = [n for n in out.graph.nodes if n.op == CONV]
    assert [c.attrs["fused"] for c in convs] == ["mynpu.conv_relu", "mynpu.conv_add_relu"]
    w = out.graph.tensors[convs[0].inputs[1]].data
    original = fn.graph.tensors["w1"].data
    assert w.shape == (1, 3, 3, 3, 8) and np.array_equal(w.transpose(0, 4, 1, 2, 3).reshape(original.shape), original)
    assert out.graph.tensors[convs[0].outputs[0]].shape == (1, 12, 12, 8)  # r1, NHWC inside
