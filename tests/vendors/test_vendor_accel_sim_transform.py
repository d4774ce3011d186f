"""accel_sim's own passes (issue 20): its transform rewrites each function into its own nodes,
the user picks a goal with --vendor-opt, the two goals give different programs with a trade-off
(cycles against energy) and the same outputs, and a partition written after the transform
compiles to the same program."""

from __future__ import annotations

import hashlib
import subprocess

import numpy as np
import onnx
import pytest
import zoo
from modelcheck import AOTC, aotc
from onnx import TensorProto, helper, numpy_helper

from aot.compiler import Options, codegen_functions, partition_model
from aot.errors import AotcError
from aot.frontend import load_model
from aot.ir import Function
from aot.vendor.accel_sim import DeviceConfig, refmodel
from aot.vendor.accel_sim.lower import lower_function
from aot.vendor.accel_sim.nodes import is_device_node


def functions(model: onnx.ModelProto, goal: str | None = None, name: str = "m") -> dict[str, tuple[Function, dict]]:
    """Each accel_sim function after the transform, and its report."""
    opts = (("accel_sim", "goal", goal),) if goal else ()
    parted = partition_model(model, Options(name=name, vendors=("accel_sim",), vendor_options=opts))
    arts = codegen_functions(parted.graph, "host", parted.vendors, parted.options)
    return {s: (parted.graph.functions[s], a.report) for s, a in arts.items()}


def run_program(fn: Function, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The function's program on the numpy model of the device."""
    low = lower_function(fn, DeviceConfig())
    g = fn.graph
    outs = [np.zeros(g.tensors[t].shape, g.tensors[t].dtype) for t in g.outputs]
    bound = [np.ascontiguousarray(feeds[t]) for t in g.inputs] + outs
    if low.scratch_bytes:
        bound.append(np.zeros(low.scratch_bytes, np.uint8))
    refmodel.execute(low.blob, bound)
    return outs


@pytest.mark.parametrize("name", ["resnet", "mobilenetv2"])
def test_goals_trade_cycles_for_energy(name):
    """Each function becomes accel_sim nodes; the energy goal's program spends fewer pJ and the
    latency goal's fewer cycles, on two models of the zoo."""
    model = zoo.build(name)
    lat, en = functions(model, "latency"), functions(model, "energy")
    assert functions(model).keys() == lat.keys()  # latency is the default
    for sym in lat:
        fn, r_lat = lat[sym]
        _, r_en = en[sym]
        assert all(is_device_node(n) for n in fn.graph.nodes)
        assert {"accel_sim.to_device", "accel_sim.tile"} <= set(r_lat["passes"].split(","))
        assert (r_lat["goal"], r_en["goal"]) == ("latency", "energy")
        assert r_en["energy_nj"] < r_lat["energy_nj"] and r_lat["cycles"] < r_en["cycles"], (r_lat, r_en)
        assert r_en["dma_bytes"] < r_lat["dma_bytes"]


def test_goals_compute_the_same_outputs():
    """The two goals' programs tile differently (another summation order for float32): their outputs
    agree to float32 rounding, on the numpy model of the device."""
    model = zoo.build("resnet")
    feeds = zoo.random_inputs(model)
    (fa, _), = functions(model, "latency").values()
    (fb, _), = functions(model, "energy").values()
    a, b = run_program(fa, feeds), run_program(fb, feeds)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)


def test_fuse_activation_moves_a_lone_relu_into_the_matmul():
    """MatMul without a bias, then Relu: no pattern takes them together; the pass does."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                           helper.make_node("Relu", ["h"], ["y"], name="relu")], "mmr",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
                          [numpy_helper.from_array(w, "w")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    (fn, report), = functions(model).values()
    assert "accel_sim.fuse_activation" in report["passes"].split(",")
    assert [n.op for n in fn.graph.nodes] == ["accel_sim.MatMul"]
    x = rng.standard_normal((4, 16)).astype(np.float32)
    (y,) = run_program(fn, {"x": x})
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)


def test_vendor_options_are_checked():
    model = zoo.build("lenet")
    for opts, msg in ((("accel_sim", "goal", "speed"), "takes latency | energy, not 'speed'"),
                      (("accel_sim", "gaol", "energy"), "has no option 'gaol'"),
                      (("dnnl", "goal", "energy"), "vendor dnnl is not in use")):
        with pytest.raises(AotcError, match=msg):
            partition_model(model, Options(vendors=("accel_sim",), vendor_options=(opts,)))


def test_cli_refuses_a_bad_vendor_option_in_one_line(tmp_path):
    onnx.save(zoo.build("lenet"), tmp_path / "lenet.onnx")
    for arg, one_line in (("accel_sim.goal=fast", True), ("accel_sim.nope=1", True), ("demo2.goal=x", True),
                          ("goal=energy", False)):  # (the last: argparse's usage, then its one-line error)
        r = subprocess.run([*AOTC, str(tmp_path / "lenet.onnx"), "-o", str(tmp_path / "out"), "--vendor", "accel_sim",
                            "--vendor-opt", arg, "--no-configure"], capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert lines[-1].startswith("aotc") and (len(lines) == 1 or not one_line), r.stderr
    assert not (tmp_path / "out").exists()


def test_partition_written_after_the_transform_compiles_to_the_same_program(tmp_path):
    """`aotc partition --transform -o P.onnx`: the functions are accel_sim's nodes (domain
    aotc.accel_sim, the tiling as attributes); compiling P.onnx, even without the option, gives the
    program the goal gave."""
    onnx.save(zoo.build("resnet"), tmp_path / "resnet.onnx")
    p = tmp_path / "P.onnx"
    r = aotc("partition", tmp_path / "resnet.onnx", "--vendor", "accel_sim", "--vendor-opt", "accel_sim.goal=energy",
             "-o", p, "--transform", "--show", check=False)
    assert r.returncode == 0, r.stderr
    assert "passes=accel_sim.to_device,accel_sim.tile" in r.stdout and "goal=energy" in r.stdout
    written = onnx.load(p)
    (fn,) = [f for f in written.functions if f.domain == "aotc.accel_sim"]
    assert {n.op_type for n in fn.node} == {"Conv", "Pool", "View", "MatMul"}
    assert all(n.domain == "aotc.accel_sim" for n in fn.node)
    assert any(a.name == "tile.reuse" for n in fn.node for a in n.attribute)

    def program(model: onnx.ModelProto, opts: tuple = ()) -> bytes:
        parted = partition_model(model, Options(name="resnet", vendors=("accel_sim",), vendor_options=opts))
        (art,) = codegen_functions(parted.graph, "host", parted.vendors, parted.options).values()
        return hashlib.sha1(art.files[f"{next(iter(parted.graph.functions))}.asim"]).digest()

    energy = program(zoo.build("resnet"), (("accel_sim", "goal", "energy"),))
    assert program(load_model(p)) == energy
    assert program(zoo.build("resnet")) != energy


@pytest.mark.parametrize("transform", [False, True])
def test_int8_partition_round_trip(tmp_path, transform):
    """A QDQ model's partition written and read back (the Q/DQ pairs the import drops between region
    nodes go with the region; as the vendor's nodes, the function also takes the quantized input its
    ONNX nodes dequantize): the same program as compiling the model itself."""
    from quantize import quantized

    from aot.compiler import transform_functions
    from aot.partition.serialize import to_onnx

    model = quantized(zoo.build("lenet"), "QDQ")
    opts = Options(name="lenet", vendors=("accel_sim",), vendor_options=(("accel_sim", "goal", "energy"),))
    parted = partition_model(model, opts)
    done = transform_functions(parted.graph, parted.vendors, parted.options) if transform else None
    onnx.save(to_onnx(parted.graph, parted.graph.info.folded_onnx, done), tmp_path / "P.onnx")

    def programs(m: onnx.ModelProto, o: Options) -> dict[str, bytes]:
        p = partition_model(m, o)
        return {s: a.files[f"{s}.asim"] for s, a in codegen_functions(p.graph, "host", p.vendors, p.options).items()}

    assert programs(load_model(tmp_path / "P.onnx"), opts) == programs(model, opts)


@pytest.mark.parametrize("int8", [False, True])
def test_fuse_pool_is_exact_and_saves_cycles_and_dma(int8):
    """LeNet's conv -> relu -> 2x2 max pool pairs: the pool runs on each output tile in the
    scratchpad; outputs bit-identical to the program without the pass, fewer cycles and DMA bytes."""
    from aot.passes.base import run_passes_tracked
    from aot.vendor.accel_sim.transform import Tile, ToDeviceNodes

    model = zoo.build("lenet")
    if int8:
        from quantize import quantized
        model = quantized(model, "QDQ")
    parted = partition_model(model, Options(name="lenet", vendors=("accel_sim",)))
    (fn,) = parted.graph.functions.values()
    graph, _ = run_passes_tracked(fn.graph, [ToDeviceNodes(), Tile(DeviceConfig(), "latency")])
    unfused = Function(fn.global_symbol, fn.compiler, graph)
    (fused, report), = functions(model, name="lenet").values()
    assert "accel_sim.fuse_pool" in report["passes"].split(",")
    assert [n.attrs.get("pool") for n in fused.graph.nodes if n.op == "accel_sim.Conv"] == [[2, 2], [2, 2]]
    rng = np.random.default_rng(2)
    g = fn.graph
    feeds = {t: (rng.standard_normal(g.tensors[t].shape).astype(np.float32) if g.tensors[t].dtype == "float32"
                 else rng.integers(-128, 128, g.tensors[t].shape).astype(g.tensors[t].dtype)) for t in g.inputs}
    for a, b in zip(run_program(fused, feeds), run_program(unfused, feeds), strict=True):
        np.testing.assert_array_equal(a, b)
    cfg = DeviceConfig()
    before, after = lower_function(unfused, cfg).stats, lower_function(fused, cfg).stats
    assert after.cycles < before.cycles and after.dma_bytes < before.dma_bytes
