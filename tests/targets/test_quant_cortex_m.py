"""int8 models on the Cortex-M boards (issue 14): the DSP extension's kernels on the M4 and M55
(runtime_c/kernels/quant/quant_dsp.h), plain C and the integer requantisation on the M3, through the
user's path (aotc --target -> cmake --build -> aotc run under qemu).

Every 8-bit activation is a graph output (examples/quantize.py expose_integers), and each must be
bit for bit what the host build computes (the same integer arithmetic, whatever the instructions),
and within test_quant's tolerance of onnxruntime. The kernels themselves are checked shape by shape
against their definition on these boards by tests/kernels_c/test_quant_kernels.c (tests/kernels_c/test_kernels_c.py).
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool, run_checked
from opcheck import Case, shared_build
from quantcheck import float_reference, integer_reference, quantized_feeds, residual_block
from quantize import expose_integers, quantized

from aot.build import cmake_exe

# qemu board runs that one fixture builds together: the whole file in the full tier (tests/README.md)
pytestmark = pytest.mark.full

AOTC = [sys.executable, "-m", "aot.cli"]
# (zoo model, quantizer format, activations, board): DS-CNN (a 10 x 4 stride-2 conv, depthwise and
# pointwise convs, a gemm) and ResNet-8 (stride-2 and 1 x 1 convs, adds) on the M4; MobileNet v2
# (depthwise at stride 2, expansions) on the M55; LeNet on the M3
RUNS = [("dscnn_kws", "QDQ", "int8", "mps2-an386"), ("resnet", "QOperator", "uint8", "mps2-an386"),
        ("mobilenetv2", "QDQ", "int8", "mps3-an547"), ("lenet", "QOperator", "uint8", "mps2-an385")]


def reference(case: Case) -> list[np.ndarray]:
    """onnxruntime with its default optimisations, one thread (as tests/kernels/test_quant.py; not imported
    from there: that module quantizes its whole model list when loaded)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(case.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, case.feeds)


def _case(name: str, fmt: str, activations: str) -> Case:
    fp32 = zoo.build(name)
    model = expose_integers(quantized(fp32, fmt, activations=activations))
    return Case(f"{name}_{fmt}_{activations}", model, zoo.random_inputs(fp32, seed=7))


def _board_run(root: Path, case: Case, board: str, *flags: str) -> dict[str, np.ndarray]:
    d = root / f"{case.id}-{board}"
    d.mkdir(parents=True)
    src, out = d / "model.onnx", d / "out"
    onnx.save(case.model, src)
    run_checked([*AOTC, str(src), "-o", str(out), "--target", board, *flags])
    run_checked([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DAOTC_WARNINGS_AS_ERRORS=ON"])
    run_checked([cmake_exe(), "--build", str(out)])
    np.savez(d / "in.npz", **case.feeds)
    run_checked([*AOTC, "run", str(out), "--inputs", str(d / "in.npz"), "--outputs", str(d / "res.npz")])
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    assert meta["target"] == board
    return dict(np.load(d / "res.npz"))


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {c.id: c for c in (_case(m, f, a) for m, f, a, _ in RUNS)}


@pytest.fixture(scope="module")
def host(cases, tmp_path_factory):
    return shared_build(list(cases.values()), tmp_path_factory.mktemp("quant_host"))


@pytest.fixture(scope="module")
def boards(cases, tmp_path_factory):
    """Futures of the board runs, two builds at a time."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    root = tmp_path_factory.mktemp("quant_boards")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {(m, b): pool.submit(_board_run, root, cases[f"{m}_{f}_{a}"], b) for m, f, a, b in RUNS}
        yield futures


@pytest.mark.parametrize("name,fmt,activations,board", RUNS, ids=[f"{m}-{b}" for m, _, _, b in RUNS])
def test_int8_model_on_board_is_exact(cases, host, boards, name, fmt, activations, board):
    case = cases[f"{name}_{fmt}_{activations}"]
    ours = boards[(name, board)].result()
    names = [o.name for o in case.model.graph.output]
    assert set(ours) == set(names)
    on_host = dict(zip(names, host.run(case.id), strict=True))
    for k in names:  # the same integers as the host's kernels compute
        assert ours[k].dtype == on_host[k].dtype and ours[k].shape == on_host[k].shape, k
        if ours[k].dtype.kind in "iu":
            assert np.array_equal(ours[k], on_host[k]), f"{case.id} on {board}: {k} differs from the host build"
        else:
            assert np.allclose(ours[k], on_host[k], rtol=1e-5, atol=1e-6), k
    equal = total = worst = 0  # against onnxruntime: test_quant's measure
    for k, r in zip(names, reference(case), strict=True):
        if r.dtype.kind in "iu":
            diff = np.abs(ours[k].astype(np.int64) - r.astype(np.int64))
            equal, total = equal + int((diff == 0).sum()), total + diff.size
            worst = max(worst, int(diff.max(initial=0)))
    share = equal / total
    most, least = (4, 0.995) if float_reference(case) else (1, 0.999)
    assert worst <= most and share >= least, f"{case.id} on {board}: {share:.4%} identical, max {worst} LSB"


# the fused conv + residual ADD (aot/passes/fuse_residual.py, QLinearConvAdd) on each kind of board path:
# the DSP extension's patch blocks on the M4, Helium's on the M55 (int8 and uint8: its gathers of the
# residual differ), the plain loop on the M3 (whose last block of a 10 x 10 plane re-reads positions of
# the one before); (format, activations, residual first, board)
RESIDUAL_RUNS = [("QDQ", "int8", False, "mps2-an386"), ("QOperator", "uint8", True, "mps2-an386"),
                 ("QDQ", "int8", True, "mps2-an385"), ("QDQ", "int8", False, "mps3-an547"),
                 ("QOperator", "uint8", True, "mps3-an547")]


@pytest.mark.parametrize("fmt,activations,first,board", RESIDUAL_RUNS,
                         ids=[f"{f}-{a}{'-first' if r else ''}-{b}" for f, a, r, b in RESIDUAL_RUNS])
def test_fused_residual_add_on_board_is_the_unfused_pair(tmp_path, fmt, activations, first, board):
    """The fused kernel's stores (the ADD in them, the sum over the residual) give the host's separate
    QLinearConv and QLinearAdd's integers exactly, and onnxruntime's."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    fp32 = residual_block(first)
    model = quantized(fp32, fmt, activations=activations)
    feeds = zoo.random_inputs(fp32, seed=5)
    case = Case(f"residual_{fmt}_{activations}", model, feeds)
    unfused = Case(f"{case.id}_unfused", expose_integers(model), feeds)
    ours = _board_run(tmp_path, case, board)
    src = (tmp_path / f"{case.id}-{board}" / "out" / "bundle" / "src" / "model.c").read_text()
    assert f"aotc_qconv_patches_add_{'i8' if activations == 'int8' else 'u8'}(" in src
    assert "aotc_qadd_i8(" not in src and "aotc_qadd_u8(" not in src  # no ADD of its own
    host = shared_build([unfused], tmp_path / "host")
    name = model.graph.output[0].name
    np.testing.assert_array_equal(ours[name], host.run(unfused.id)[0], err_msg=f"{case.id} on {board}")
    ref = reference(case)[0]
    if ref.dtype.kind in "iu":
        assert np.array_equal(ours[name], ref)
    else:
        assert np.allclose(ours[name], ref, rtol=0, atol=1e-6) or float_reference(case)


def test_quantized_io_on_board_gives_onnxruntimes_integers(tmp_path):
    """--quantized-io on the M4: DS-CNN (QDQ) takes the int8 of its input's QuantizeLinear and gives
    the int8 its output's DequantizeLinear reads, through aotc run's npz of int8 under qemu: the
    host build's integers, and onnxruntime's exactly."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    fp32 = zoo.build("dscnn_kws")
    model = quantized(fp32, "QDQ", activations="int8")
    case = Case("qio_dscnn_kws", model, quantized_feeds(model, zoo.random_inputs(fp32, seed=7)), quantized_io=True)
    ours = _board_run(tmp_path, case, "mps2-an386", "--quantized-io")
    meta = json.loads((tmp_path / f"{case.id}-mps2-an386" / "out" / "bundle" / "metadata.json").read_text())
    assert meta["quantized_io"]["inputs"] == [model.graph.input[0].name] and meta["inputs"][0]["dtype"] == "int8"
    name = model.graph.output[0].name
    assert ours[name].dtype == np.int8
    host = shared_build([case], tmp_path / "host")
    np.testing.assert_array_equal(ours[name], host.run(case.id)[0])
    np.testing.assert_array_equal(ours[name], integer_reference(model, case.feeds)[0])
