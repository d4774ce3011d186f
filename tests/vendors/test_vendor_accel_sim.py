"""The accel_sim vendor end to end: what it takes and refuses, ops and whole models compiled
to its programs and run on its C simulator matching onnxruntime, layers far larger than the
scratchpad, the per-function report (metadata.json, `aotc partition --show`, the runner's
cycle counter), the driver's tensor checks, a sanitized build, and a Cortex-M board.

Numerics share one C build (tests/opcheck.py): every case is compiled by aotc with the
vendor, all their C (host code, programs, the simulator) goes into one library."""

from __future__ import annotations

import ctypes
import os
from dataclasses import replace

import numpy as np
import onnx
import pytest
import zoo
from conftest import require_tool
from modelcheck import aotc, build_bundle
from onnx import TensorProto, helper, numpy_helper
from opcheck import Case, assert_close, model_case, reference, shared_build

from aot.compiler import Options, codegen_functions, partition_model
from aot.vendor.accel_sim import VENDOR, DeviceConfig, make_vendor
from aot.vendor.accel_sim.isa import Err

ANY_REGION = replace(VENDOR, keep_region=None)  # offloads even a lone elementwise op


def tiny(spm: int) -> object:
    return replace(make_vendor(DeviceConfig(spm_bytes=spm)), keep_region=None)


# --- small graphs -------------------------------------------------------------------------------

class G:
    """A graph under construction: runtime inputs, constant weights, nodes."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.feeds: dict[str, np.ndarray] = {}

    def input(self, name: str, shape: tuple[int, ...]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.feeds[name] = self.rng.standard_normal(shape).astype(np.float32)
        return name

    def const(self, shape: tuple[int, ...], scale: float = 0.3, positive: bool = False) -> str:
        name = f"c{len(self.inits)}"
        data = self.rng.standard_normal(shape) * scale
        self.inits.append(numpy_helper.from_array((np.abs(data) + 0.5 if positive else data).astype(np.float32), name))
        return name

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = f"t{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"n{len(self.nodes)}_{op.lower()}", **attrs))
        return out

    def case(self, case_id: str, outputs: list[str], vendor=ANY_REGION, opset: int = 13) -> Case:
        g = helper.make_graph(self.nodes, case_id, self.inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs], self.inits)
        c = model_case(case_id, g, self.feeds, opset)
        c.vendors = (vendor,)
        return c


def conv(case_id, x, w, bias=True, vendor=ANY_REGION, act=None, **attrs) -> Case:
    g = G(len(case_id))
    xi = g.input("x", x)
    y = g.node("Conv", [xi, g.const(w)] + ([g.const((w[0],), 0.1)] if bias else []), **attrs)
    if act:
        y = g.node(act, [y])
    return g.case(case_id, [y], vendor)


def single(case_id, op, shapes, consts=(), vendor=ANY_REGION, **attrs) -> Case:
    g = G(len(case_id))
    ins = [g.input(f"x{k}", s) for k, s in enumerate(shapes)] + [g.const(s) for s in consts]
    return g.case(case_id, [g.node(op, ins, **attrs)], vendor)


def matmul_bias_relu(case_id, a, k, n, vendor=ANY_REGION) -> Case:
    g = G(3)
    y = g.node("MatMul", [g.input("a", a), g.const((k, n))])
    y = g.node("Relu", [g.node("Add", [y, g.const((n,))])])
    return g.case(case_id, [y], vendor)


def residual_block(case_id, shape, vendor=ANY_REGION) -> Case:
    """Conv -> Add(x) -> ReLU: the fused residual composite."""
    g = G(4)
    x = g.input("x", shape)
    c = shape[1]
    y = g.node("Conv", [x, g.const((c, c, 3, 3)), g.const((c,), 0.1)], pads=[1, 1, 1, 1])
    return g.case(case_id, [g.node("Relu", [g.node("Add", [y, x])])], vendor)


def batchnorm_relu(case_id, shape, vendor=ANY_REGION) -> Case:
    g = G(6)
    c = shape[1]
    stats = [g.const((c,), positive=True), g.const((c,)), g.const((c,)), g.const((c,), positive=True)]
    y = g.node("BatchNormalization", [g.input("x", shape), *stats], epsilon=1e-3)
    return g.case(case_id, [g.node("Relu", [y])], vendor)


def views_and_concat(case_id, vendor=ANY_REGION) -> Case:
    """Conv, Concat with a constant, Flatten as an output (a copy), and a pooled branch."""
    g = G(5)
    x = g.input("x", (1, 4, 6, 6))
    y = g.node("Conv", [x, g.const((6, 4, 1, 1))])
    cat = g.node("Concat", [y, x, g.const((1, 2, 6, 6))], axis=1)
    flat = g.node("Flatten", [cat], axis=1)
    pooled = g.node("MaxPool", [cat], kernel_shape=[2, 2], strides=[2, 2])
    return g.case(case_id, [flat, pooled], vendor)


OP_CASES = [
    conv("conv_3x3_pad", (1, 3, 10, 10), (8, 3, 3, 3), pads=[1, 1, 1, 1]),
    conv("conv_stride2_nobias", (1, 4, 11, 9), (6, 4, 3, 3), bias=False, strides=[2, 2]),
    conv("conv_dilated_asym_pads", (1, 2, 12, 12), (3, 2, 3, 3), dilations=[2, 1], pads=[0, 1, 2, 0]),
    conv("conv_grouped", (1, 6, 8, 8), (9, 2, 3, 3), group=3, pads=[1, 1, 1, 1]),
    conv("conv_depthwise_relu6", (1, 8, 9, 9), (8, 1, 3, 3), group=8, strides=[2, 2], pads=[1, 1, 1, 1],
         act="Relu"),
    conv("conv_batch2_1x1", (2, 16, 5, 5), (24, 16, 1, 1)),
    conv("conv_5x5_relu", (1, 1, 28, 28), (6, 1, 5, 5), pads=[2, 2, 2, 2], act="Relu"),
    residual_block("conv_add_relu", (1, 8, 7, 7)),
    single("gemm_transB", "Gemm", [(3, 20)], [(7, 20), (7,)], transB=1),
    single("gemm_alpha_beta", "Gemm", [(2, 9)], [(9, 5), (1, 5)], alpha=0.5, beta=2.0),
    single("gemm_scalar_c", "Gemm", [(1, 4)], [(4, 3), ()], transB=0),
    matmul_bias_relu("matmul_add_relu", (4, 12), 12, 6),
    single("matmul_3d", "MatMul", [(2, 3, 5)], [(5, 4)]),
    single("maxpool_3x3_s2_pad", "MaxPool", [(1, 3, 9, 9)], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    single("maxpool_ceil", "MaxPool", [(1, 2, 10, 10)], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    single("avgpool_pad_excluded", "AveragePool", [(1, 3, 8, 8)], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    single("avgpool_2x2", "AveragePool", [(2, 4, 6, 6)], kernel_shape=[2, 2], strides=[2, 2]),
    single("global_avgpool", "GlobalAveragePool", [(1, 5, 7, 6)]),
    single("global_maxpool", "GlobalMaxPool", [(2, 3, 4, 4)]),
    single("add_same", "Add", [(2, 3, 4, 5), (2, 3, 4, 5)]),
    single("add_per_channel", "Add", [(1, 6, 4, 4)], [(1, 6, 1, 1)]),
    single("mul_scalar", "Mul", [(3, 7)], [()]),
    single("max_row", "Max", [(4, 9)], [(9,)]),
    single("mul_broadcast_first", "Mul", [(5,), (2, 5)]),
    single("sub_const", "Sub", [(2, 8)], [(2, 8)]),
    single("relu", "Relu", [(3, 50)]),
    single("clip", "Clip", [(3, 50)], [(), ()]),  # bounds are random: either order of min and max
    views_and_concat("concat_flatten_pool"),
    batchnorm_relu("batchnorm_relu", (2, 6, 5, 5)),
    single("transpose_to_nhwc", "Transpose", [(1, 4, 5, 6)], perm=[0, 2, 3, 1]),
    single("transpose_channel_shuffle", "Transpose", [(1, 3, 4, 5, 5)], perm=[0, 2, 1, 3, 4]),
]

TILED_CASES = [  # every layer much larger than its scratchpad
    conv("tiled_conv", (1, 16, 40, 40), (32, 16, 3, 3), vendor=tiny(4096), pads=[1, 1, 1, 1]),
    conv("tiled_conv_strided", (2, 8, 33, 31), (12, 8, 5, 5), vendor=tiny(2048), strides=[2, 3], pads=[2, 1, 2, 1],
         act="Relu"),
    conv("tiled_depthwise", (1, 32, 30, 30), (32, 1, 3, 3), vendor=tiny(1024), group=32, pads=[1, 1, 1, 1]),
    residual_block("tiled_residual", (1, 16, 20, 20), vendor=tiny(2048)),
    single("tiled_gemm", "Gemm", [(4, 1024)], [(130, 1024), (130,)], vendor=tiny(4096), transB=1),
    single("tiled_maxpool", "MaxPool", [(1, 8, 64, 64)], vendor=tiny(1024), kernel_shape=[3, 3], strides=[2, 2],
           pads=[1, 1, 1, 1]),
    single("tiled_global_avgpool", "GlobalAveragePool", [(1, 40, 15, 15)], vendor=tiny(2048)),
    single("tiled_add_per_channel", "Add", [(1, 32, 40, 40)], [(1, 32, 1, 1)], vendor=tiny(1024)),
    single("tiled_add_same", "Add", [(1, 3, 50, 50), (1, 3, 50, 50)], vendor=tiny(1024)),
    views_and_concat("tiled_concat_flatten", vendor=tiny(256)),
    batchnorm_relu("tiled_batchnorm", (1, 8, 50, 50), vendor=tiny(1024)),
    single("tiled_transpose", "Transpose", [(1, 16, 40, 40)], vendor=tiny(1024), perm=[0, 2, 3, 1]),
    single("tiled_transpose_rows", "Transpose", [(2, 6, 30, 40)], vendor=tiny(512), perm=[1, 0, 2, 3]),
]

def untileable_model() -> tuple[onnx.ModelProto, dict]:
    """A global pool whose one channel (160 KB) cannot fit 64 KiB, between convolutions."""
    g = G(9)
    x = g.input("x", (1, 2, 200, 200))
    y = g.node("Conv", [x, g.const((2, 2, 1, 1))])
    y = g.node("GlobalAveragePool", [y])
    y = g.node("Conv", [y, g.const((3, 2, 1, 1))])
    c = g.case("untileable", [y], VENDOR)
    return c.model, c.feeds


ZOO_CASES = []
for _name in sorted(zoo.MODELS):
    _m = zoo.build(_name)
    ZOO_CASES.append(Case(f"zoo_{_name}", _m, zoo.random_inputs(_m), vendors=(VENDOR,)))

UNTILEABLE = Case("untileable", *untileable_model(), vendors=(VENDOR,))
CASES = OP_CASES + TILED_CASES + ZOO_CASES + [UNTILEABLE]
BY_ID = {c.id: c for c in CASES}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("accel_sim_cases"))


def offloaded_nodes(meta: dict) -> set[str]:
    return {n for f in meta["partition"] if f["compiler"] == "accel_sim" for n in f["nodes"]}


@pytest.mark.parametrize("case_id", [c.id for c in OP_CASES + TILED_CASES])
def test_op_matches_onnxruntime_on_the_device(results, case_id):
    results.check(case_id)
    meta = results.meta[case_id]
    graph_nodes = {n.name for n in BY_ID[case_id].model.graph.node}
    assert offloaded_nodes(meta) == graph_nodes, "every node runs on accel_sim"


@pytest.mark.parametrize("case_id", [c.id for c in TILED_CASES])
def test_tiled_layers_stay_within_their_scratchpad(results, case_id):
    (fn,) = results.meta[case_id]["partition"]
    spm = fn["device"]["spm_bytes"]
    assert 0 < fn["spm_peak_bytes"] <= spm
    moved = sum(i["nbytes"] for i in fn["inputs"]) + sum(o["nbytes"] for o in fn["outputs"])
    assert max(moved, fn["program_bytes"]) > 8 * spm  # data or weights far larger than the scratchpad ...
    assert fn["dma_bytes"] >= moved  # ... and all of it went through the DMA engine


@pytest.mark.parametrize("case_id", [f"zoo_{name}" for name in sorted(zoo.MODELS)])
def test_zoo_model_matches_onnxruntime(results, case_id):
    results.check(case_id)
    meta = results.meta[case_id]
    assert meta["partition"] and all(f["compiler"] == "accel_sim" for f in meta["partition"])
    heavy = {"Conv", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool"}
    model = BY_ID[case_id].model
    assert {n.name for n in model.graph.node if n.op_type in heavy} <= offloaded_nodes(meta)
    for f in meta["partition"]:
        assert f["cycles"] > 0 and 0 < f["mac_utilisation"] <= 1 and f["spm_peak_bytes"] <= 64 * 1024


# --- partitioning -------------------------------------------------------------------------------

def where(graph) -> dict[str, str]:
    out = {}
    for n in graph.nodes:
        if n.op == "Call":
            for m in graph.functions[n.name].graph.nodes:
                out.update({s: n.attrs["compiler"] for s in m.sources()})
        else:
            out.update({s: "host" for s in n.sources()})
    return out


def test_resnet_fuses_residual_blocks_and_runs_whole():
    g = partition_model(zoo.resnet(), Options(name="resnet", vendors=("accel_sim",))).graph
    (fn,) = g.functions.values()
    ops = [n.attrs["composite"] if n.op == "Composite" else n.op for n in fn.graph.nodes]
    assert ops.count("accel_sim.conv_add_act") == 3 and "accel_sim.conv_act" in ops
    assert set(where(g).values()) == {"accel_sim"}


def test_zoo_partition():
    """Only Softmax and LRN stay on the host; everything else of the zoo runs on the device,
    each model as one function."""
    for name in sorted(zoo.MODELS):
        g = partition_model(zoo.build(name), Options(vendors=("accel_sim",))).graph
        host = {n.op for n in g.nodes if n.op != "Call"}
        assert host <= {"Softmax", "LRN"}, (name, host)
        assert len(g.functions) == (2 if name == "alexnet" else 1), name


def test_unsupported_ops_fall_back_to_the_host():
    parted = partition_model(zoo.alexnet(), Options(vendors=("accel_sim",)))
    lrn = next(n.name for n in zoo.alexnet().graph.node if n.op_type == "LRN")
    assert [n for n, w in where(parted.graph).items() if w == "host"] == [lrn]
    assert parted.refusals[lrn]["accel_sim"] == "accel_sim does not take LRN"


def test_layer_that_cannot_be_tiled_is_refused_and_runs_on_the_host(results):
    parted = partition_model(UNTILEABLE.model, Options(vendors=("accel_sim",)))
    g = parted.graph
    assert where(g)["n1_globalaveragepool"] == "host"
    assert "does not fit the 65536-byte scratchpad" in parted.refusals["n1_globalaveragepool"]["accel_sim"]
    assert sorted(where(g).values()) == ["accel_sim", "accel_sim", "host"]  # the convolutions still go
    results.check("untileable")


def test_giant_kernel_is_refused():
    g = G(1)
    y = g.node("Conv", [g.input("x", (1, 1, 130, 130)), g.const((1, 1, 130, 130))])
    model = g.case("giant", [y], VENDOR).model
    parted = partition_model(model, Options(vendors=("accel_sim",)))
    assert not parted.graph.functions
    assert "no tile of this convolution fits" in parted.refusals["n0_conv"]["accel_sim"]


def test_elementwise_alone_stays_on_the_host():
    """A region with no MAC-array or pooling layer is not worth a device round trip."""
    g = G(2)
    y = g.node("Relu", [g.node("Add", [g.input("a", (4, 4)), g.input("b", (4, 4))])])
    parted = partition_model(g.case("eltwise", [y]).model, Options(vendors=("accel_sim",)))
    assert not parted.graph.functions
    assert "sent its region back" in parted.refusals[parted.graph.nodes[0].name]["accel_sim"]


# --- reporting ----------------------------------------------------------------------------------

def test_report_is_in_metadata_and_partition_show(tmp_path):
    onnx.save(zoo.lenet(), tmp_path / "lenet.onnx")
    r = aotc("partition", tmp_path / "lenet.onnx", "--vendor", "accel_sim", "--show")
    parted = partition_model(zoo.lenet(), Options(name="lenet", vendors=("accel_sim",)))
    report = codegen_functions(parted.graph, "host", parted.vendors)["lenet_accel_sim_0"].report
    line = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("lenet_accel_sim_0:"))
    for key in ("cycles", "dma_bytes", "spm_peak_bytes", "mac_utilisation"):
        assert f"{key}={report[key]}" in line


def dltensor_types():
    class Device(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]

    class DType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", Device), ("ndim", ctypes.c_int32), ("dtype", DType),
                    ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                    ("byte_offset", ctypes.c_uint64)]
    return DLTensor


def test_driver_checks_the_tensors_it_is_given(results):
    """Call a generated function directly: a tensor of the wrong shape, dtype or device, or a
    workspace that is missing, gives the binding error, never a crash."""
    meta = results.meta["conv_3x3_pad"]
    (fn,) = meta["partition"]
    func = getattr(results.lib_for("conv_3x3_pad"), fn["symbol"])

    func.restype = ctypes.c_int32
    DLTensor = dltensor_types()
    x = np.zeros((1, 3, 10, 10), np.float32)
    y = np.zeros((1, 8, 10, 10), np.float32)
    ws = np.zeros(fn["workspace_bytes"] + 64, np.uint8)

    def call(x_shape=(1, 3, 10, 10), code=2, device=1, workspace=True):
        shapes = [(ctypes.c_int64 * 4)(*x_shape), (ctypes.c_int64 * 4)(*y.shape)]
        tx = DLTensor(x.ctypes.data, (device, 0), 4, (code, 32, 1), shapes[0], None, 0)
        ty = DLTensor(y.ctypes.data, (1, 0), 4, (2, 32, 1), shapes[1], None, 0)
        ins = (ctypes.POINTER(DLTensor) * 1)(ctypes.pointer(tx))
        outs = (ctypes.POINTER(DLTensor) * 1)(ctypes.pointer(ty))
        return func(ins, outs, ctypes.c_void_p(ws.ctypes.data if workspace else 0))

    assert call() == 0
    assert call(x_shape=(1, 3, 10, 11)) == Err.BINDING
    assert call(code=0) == Err.BINDING
    assert call(device=12) == Err.BINDING
    assert call(workspace=False) == Err.BINDING


# --- the user's path: CLI, CMake, runner -----------------------------------------------------------

def compile_build_run(tmp_path, model, feeds, target="host", cmake_args=()):
    """`model` with --vendor accel_sim for `target`, built with -Werror (modelcheck.build_bundle) and `cmake_args`,
    run by `aotc run` on `feeds`: the metadata, the outputs and what aotc run printed."""
    onnx.save(model, tmp_path / "m.onnx")
    out = tmp_path / "out"
    meta = build_bundle(tmp_path / "m.onnx", out, "--vendor", "accel_sim", target=target, cmake_args=cmake_args)
    np.savez(tmp_path / "in.npz", **feeds)
    r = aotc("run", out, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "res.npz")
    return meta, dict(np.load(tmp_path / "res.npz")), r.stdout


def check_outputs(meta, ours, model, feeds):
    refs = reference(Case("m", model, feeds))
    for spec, ref in zip(meta["outputs"], refs, strict=True):
        assert_close(ours[spec["name"]], ref, spec["name"])


def test_runner_prints_the_simulated_cycles(tmp_path):
    model = zoo.resnet()
    feeds = zoo.random_inputs(model)
    meta, ours, stdout = compile_build_run(tmp_path, model, feeds)
    check_outputs(meta, ours, model, feeds)
    for f in meta["partition"]:
        assert f"aotc: {f['symbol']}.cycles={f['cycles']}" in stdout.splitlines()


@pytest.mark.full
def test_sanitized_build_of_a_model(tmp_path):
    require_tool("gcc")
    model = zoo.squeezenet()
    feeds = zoo.random_inputs(model)
    flags = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    meta, ours, _ = compile_build_run(tmp_path, model, feeds, cmake_args=(
        "-DCMAKE_C_COMPILER=gcc", f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_EXE_LINKER_FLAGS={flags}"))
    check_outputs(meta, ours, model, feeds)


@pytest.mark.full
def test_on_a_cortex_m_board(tmp_path):
    """mps2-an386 (Cortex-M4F) under qemu-system-arm: same outputs as onnxruntime and the same
    simulated cycles as on the host."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    model = zoo.lenet()
    feeds = zoo.random_inputs(model)
    meta, ours, stdout = compile_build_run(tmp_path, model, feeds, target="mps2-an386")
    assert meta["target"] == "mps2-an386"
    check_outputs(meta, ours, model, feeds)
    (f,) = meta["partition"]
    assert f"aotc: {f['symbol']}.cycles={f['cycles']}" in stdout.splitlines()


def test_cli_refuses_nothing_it_cannot_place(tmp_path):
    """Every zoo model compiles with --vendor accel_sim (what the device refuses stays on the host)."""
    for name in ("shufflenet", "densenet"):
        onnx.save(zoo.build(name), tmp_path / f"{name}.onnx")
        r = aotc(tmp_path / f"{name}.onnx", "-o", tmp_path / name, "--vendor", "accel_sim", "--no-configure",
                 check=False)
        assert r.returncode == 0, r.stderr
    assert os.path.isfile(tmp_path / "densenet" / "bundle" / "vendor" / "accel_sim" / "accel_sim.c")
