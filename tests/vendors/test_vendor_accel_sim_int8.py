"""accel_sim on int8 models: onnxruntime's quantize_static models (QDQ and QOperator, int8 and uint8
activations) compiled with --vendor accel_sim run their integer layers on the device, bit-exact
with aotc's host int8 kernels (the same requantisation arithmetic) and so within 1 LSB of
onnxruntime; layers far larger than a small scratchpad; the cycle report; a Cortex-M board.

Each model is built twice into one shared library: with the vendor and without it (the host
kernels). With every 8-bit activation exposed as an output (examples/quantize.py
expose_integers), every integer tensor of the device's run is compared with the host's; without,
the residual adds fuse into the convolutions (accel_sim.qconv_add) and the outputs still agree."""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from modelcheck import aotc, build_bundle
from onnx import TensorProto, helper, numpy_helper
from opcheck import Case, shared_build
from quantize import expose_integers, quantized

from aot.compiler import Options, partition_model
from aot.vendor.accel_sim import VENDOR, DeviceConfig, isa, make_vendor

MODELS = [("lenet", "QDQ", "int8"), ("lenet", "QOperator", "uint8"), ("resnet", "QDQ", "int8"),
          ("resnet", "QOperator", "uint8"), ("mobilenetv2", "QDQ", "int8"), ("mobilenetv2", "QOperator", "uint8")]
INTEGER_OPS = {"QLinearConv", "QGemm", "QLinearMatMul", "QLinearAdd", "QLinearGlobalAveragePool", "MaxPool",
               "Flatten", "Reshape"}  # what the device takes of these models: all but the float boundary


def tiny(spm: int) -> object:
    return replace(make_vendor(DeviceConfig(spm_bytes=spm)), keep_region=None)


def blocks_model() -> onnx.ModelProto:
    """A small float CNN with every layer accel_sim takes in 8 bits: a 16 -> 32 channel conv + ReLU,
    residual adds with the conv's output first and second, a strided depthwise conv, max pool,
    global average pool, dense layer."""
    rng = np.random.default_rng(3)
    inits: list[onnx.TensorProto] = []

    def w(*shape: int, scale: float = 0.2) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32),
                                             f"w{len(inits)}"))
        return inits[-1].name

    n = helper.make_node
    nodes = [n("Conv", ["x", w(32, 16, 3, 3), w(32, scale=0.1)], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             n("Relu", ["c1"], ["r1"], name="relu1"),
             n("Conv", ["r1", w(32, 32, 3, 3, scale=0.08), w(32, scale=0.1)], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
             n("Add", ["c2", "r1"], ["a2"], name="add2"), n("Relu", ["a2"], ["r2"], name="relu2"),
             n("Conv", ["r2", w(32, 32, 1, 1), w(32, scale=0.1)], ["c3"], name="conv3"),
             n("Add", ["r2", "c3"], ["a3"], name="add3"),
             n("Conv", ["a3", w(32, 1, 3, 3), w(32, scale=0.1)], ["c4"], pads=[1, 1, 1, 1], strides=[2, 2], group=32,
               name="depthwise"),
             n("Relu", ["c4"], ["r4"], name="relu4"),
             n("MaxPool", ["r4"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
             n("GlobalAveragePool", ["p"], ["g"], name="gap"), n("Flatten", ["g"], ["f"], name="flatten"),
             n("Gemm", ["f", w(10, 32), w(10, scale=0.1)], ["y"], transB=1, name="fc")]
    g = helper.make_graph(nodes, "blocks", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 20, 20])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def _pair(case_id: str, model: onnx.ModelProto, feeds: dict, vendor=VENDOR) -> list[Case]:
    return [Case(f"{case_id}_device", model, feeds, vendors=(vendor,)), Case(f"{case_id}_host", model, feeds)]


BLOCK_FORMS = (("QDQ", "int8"), ("QOperator", "uint8"))
SPMS = (1024, 4096)  # every layer tiled; the fused residual adds tiled too


@functools.cache
def blocks() -> onnx.ModelProto:
    return blocks_model()


@functools.cache
def cases() -> dict[str, Case]:
    """The cases by id, quantized when a test first asks (onnxruntime's quantizer on 8 models took 9 s of every
    worker's collection at import): CASE_IDS, in that order."""
    out: list[Case] = []
    for name, fmt, act in MODELS:
        fp32 = zoo.build(name)
        q = quantized(fp32, fmt, activations=act)
        feeds = zoo.random_inputs(fp32, seed=7)
        out += _pair(f"{name}_{fmt}_{act}", expose_integers(q), feeds)
        out.append(Case(f"{name}_{fmt}_{act}_fused_device", q, feeds, vendors=(VENDOR,)))
    feeds = zoo.random_inputs(blocks(), seed=7)
    for fmt, act in BLOCK_FORMS:
        q = quantized(blocks(), fmt, activations=act)
        out += _pair(f"blocks_{fmt}_{act}", expose_integers(q), feeds)
        for spm in SPMS:
            out.append(Case(f"blocks_{fmt}_{act}_tiled{spm}_device", expose_integers(q), feeds, vendors=(tiny(spm),)))
            out.append(Case(f"blocks_{fmt}_{act}_tiled{spm}_fused_device", q, feeds, vendors=(tiny(spm),)))
    assert [c.id for c in out] == CASE_IDS
    return {c.id: c for c in out}


CASE_IDS = [i for name, fmt, act in MODELS for i in (f"{name}_{fmt}_{act}_device", f"{name}_{fmt}_{act}_host",
                                                     f"{name}_{fmt}_{act}_fused_device")]
CASE_IDS += [i for fmt, act in BLOCK_FORMS for i in (
    f"blocks_{fmt}_{act}_device", f"blocks_{fmt}_{act}_host",
    *(f"blocks_{fmt}_{act}_tiled{spm}{fused}_device" for spm in SPMS for fused in ("", "_fused")))]
DEVICE_IDS = [i for i in CASE_IDS if i.endswith("_device")]


def host_twin(case_id: str) -> str:
    """The host build of the same model: for a fused or tiled case, the exposed model's (whose first
    outputs are the model's own)."""
    base = case_id.removesuffix("_device").removesuffix("_fused")
    base = base.split("_tiled")[0]
    return f"{base}_host"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    build = shared_build(list(cases().values()), tmp_path_factory.mktemp("accel_sim_int8"))
    build.ensure([host_twin(i) for i in DEVICE_IDS if i in build.libs])  # what the device cases are compared with
    return build


def reference(case: Case) -> list[np.ndarray]:
    """onnxruntime with its default optimisations (QDQ groups fused to integer kernels), one thread."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(case.model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, case.feeds)


def compare_integers(ours: list[np.ndarray], refs: list[np.ndarray]) -> tuple[float, int]:
    """(share of integers identical, largest difference in LSB), as tests/kernels/test_quant.py measures."""
    equal = total = worst = 0
    for o, r in zip(ours, refs, strict=True):
        assert o.shape == r.shape and o.dtype == r.dtype
        if r.dtype.kind in "iu":
            diff = np.abs(o.astype(np.int64) - r.astype(np.int64))
            equal, total, worst = equal + int((diff == 0).sum()), total + diff.size, max(worst, int(diff.max()))
    return (equal / total if total else 1.0), worst


def offloaded_ops(case_id: str) -> tuple[set[str], set[str]]:
    """(ops run on accel_sim, ops left on the host) of a case's partition."""
    g = partition_model(cases()[case_id].model, Options(vendors=cases()[case_id].vendors)).graph
    host = {n.op for n in g.nodes if n.op != "Call"}
    device = set()
    for fn in g.functions.values():
        for n in fn.graph.nodes:
            device |= {m.op for m in n.attrs["body"].nodes} if n.op == "Composite" else {n.op}
    return device, host


@pytest.mark.parametrize("case_id", DEVICE_IDS)
def test_device_is_bit_exact_with_the_host_kernels(results, case_id):
    ours, host = results.run(case_id), results.run(host_twin(case_id))
    assert len(ours) <= len(host)
    for k, (o, h) in enumerate(zip(ours, host, strict=False)):  # (a fused case: the model's own outputs)
        assert o.dtype == h.dtype and np.array_equal(o, h), f"{case_id} output {k}: {int((o != h).sum())} differ"
    functions = results.meta[case_id]["partition"]
    assert any(f["macs"] for f in functions)
    for f in functions:  # (a function of pools alone has no MACs)
        assert f["compiler"] == "accel_sim" and f["int8_macs"] == f["macs"]
        assert (f["mac_utilisation"] > 0) == (f["macs"] > 0) and f["mac_utilisation"] <= 1
        assert 0 < f["spm_peak_bytes"] <= f["device"]["spm_bytes"]


@pytest.mark.parametrize("case_id", [i for i in DEVICE_IDS if "_fused" not in i])
def test_within_one_lsb_of_onnxruntime(results, case_id):
    case = results.cases[case_id]
    share, worst = compare_integers(results.run(case_id), reference(case))
    assert worst <= 1 and share >= 0.999, f"{case_id}: {share:.4%} identical, max {worst} LSB"


@pytest.mark.parametrize("case_id", [i for i in DEVICE_IDS if "_tiled" not in i])
def test_integer_layers_run_on_the_device(case_id):
    device, host = offloaded_ops(case_id)
    # (exposed, a lone Flatten between the host's Q/DQ pairs is not worth a device call)
    assert host <= {"QuantizeLinear", "DequantizeLinear"} | (set() if "_fused" in case_id else {"Flatten"}), host
    assert device and device <= INTEGER_OPS, device
    if "_fused" in case_id and not case_id.startswith("lenet"):
        g = partition_model(cases()[case_id].model, Options(vendors=(VENDOR,))).graph
        (fn,) = g.functions.values()
        assert any(n.op == "Composite" and n.attrs["composite"] == "accel_sim.qconv_add" for n in fn.graph.nodes)


def _opcodes(program: bytes) -> set[int]:
    h = isa.Header.parse(program)
    start = isa.HEADER_BYTES + isa.REGION_BYTES * h.n_regions
    return {program[start + isa.INSN_BYTES * k] for k in range(h.n_insns)}


@pytest.mark.parametrize("spm", [1024, 4096])
def test_tiled_layers_use_the_8bit_instructions(spm):
    """At 1 KiB the 3x3 convolutions are cut in input-channel tiles: int32 partial sums, then VREQ;
    the fused residual adds are quantized VADDs; weights are one byte each, biases four."""
    from aot.compiler import codegen_functions

    case = cases()[f"blocks_QDQ_int8_tiled{spm}_fused_device"]
    parted = partition_model(case.model, Options(name="blocks", vendors=case.vendors))
    (art,) = codegen_functions(parted.graph, "host", parted.vendors).values()
    program = next(v for k, v in art.files.items() if k.endswith(".asim"))
    ops = _opcodes(program)
    assert {isa.Op.CONV, isa.Op.MATMUL, isa.Op.POOL, isa.Op.VADD} <= ops
    assert (isa.Op.VREQ in ops) == (spm == 1024)
    weights = sum(int(np.prod(t.dims)) for t in blocks().graph.initializer if len(t.dims) > 1)
    biases = sum(int(np.prod(t.dims)) for t in blocks().graph.initializer if len(t.dims) == 1)
    consts = isa.Header.parse(program).const_bytes
    assert weights + 4 * biases <= consts < weights + 12 * biases + 1024  # int8 weights, int32 bias, f32 scales


def test_int8_is_faster_than_fp32_on_the_device():
    """The same network in float32 and in int8: the 8-bit MAC array and one-byte DMA make the
    int8 program several times faster (the numbers of docs/accel_sim-isa.md's table)."""
    from aot.compiler import codegen_functions

    for name in ("resnet", "mobilenetv2"):
        fp32 = zoo.build(name)
        reports = []
        for model in (fp32, quantized(fp32, "QDQ")):
            parted = partition_model(model, Options(name=name, vendors=("accel_sim",)))
            (art,) = codegen_functions(parted.graph, "host", parted.vendors).values()
            reports.append(art.report)
        f, q = reports
        assert q["macs"] == q["int8_macs"] == f["macs"] and f["int8_macs"] == 0
        assert q["cycles"] * 2 < f["cycles"], (name, q["cycles"], f["cycles"])
        assert q["dma_bytes"] * 2 < f["dma_bytes"]


# --- the user's path on a Cortex-M board ------------------------------------------------------------

@pytest.mark.full
@pytest.mark.parametrize("case_id", ["lenet_QDQ_int8_device", "mobilenetv2_QDQ_int8_device",
                                     "resnet_QOperator_uint8_fused_device"])  # (exposed, com.microsoft ops have
def test_on_a_cortex_m_board(results, tmp_path, case_id):                     # untyped outputs the CLI refuses)
    """mps2-an386 (Cortex-M4F) under qemu-system-arm: aotc -> cmake -> aotc run, the same integers
    as the device simulated on the host (every activation of the QDQ models) and the same cycles
    as the report."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    case = cases()[case_id]
    onnx.save(case.model, tmp_path / "m.onnx")
    out = tmp_path / "out"
    meta = build_bundle(tmp_path / "m.onnx", out, "--vendor", "accel_sim", target="mps2-an386")
    np.savez(tmp_path / "in.npz", **case.feeds)
    r = aotc("run", out, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "res.npz")
    board = np.load(tmp_path / "res.npz")
    for spec, want in zip(meta["outputs"], results.run(case.id), strict=True):
        assert np.array_equal(board[spec["name"]], want), spec["name"]
    for f in meta["partition"]:
        assert f"aotc: {f['symbol']}.cycles={f['cycles']}" in r.stdout.splitlines()
