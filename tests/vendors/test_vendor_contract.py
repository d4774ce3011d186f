"""What a third-party vendor found wrong with the vendor contract (issue 65), each fixed and held here:
compare never holds a tensor a pass redefined against the model's, a vendor's exception is its own one-line
error (not "a bug in aotc"), the weights figure is what the bundle stores, two functions writing one library
file with different contents are refused, and a region a vendor sends back goes to the next vendor."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import onnx
import pytest
from conftest import first_fast
from modelcheck import reference, run_bundle
from onnx import TensorProto, helper, numpy_helper

from aot.build import build, configure
from aot.cli import main
from aot.compiler import Options, compile_model, partition_model
from aot.errors import AotcError, VendorError
from aot.ir import Function, Graph, Node, Tensor
from aot.ir.vendor_ops import VendorOp
from aot.partition.layout import apply_boundary_layouts
from aot.passes.base import Pass
from aot.plan.pools import PoolSpec
from aot.vendor import ACCEPT, Artifact, CodegenContext, Layout, Reject, Vendor, find_vendor

CREF = find_vendor("cref")


def dense_model(act: str = "HardSigmoid", n: int = 6) -> onnx.ModelProto:
    """x[2, 8] @ W + b -> act: a dense layer a vendor takes, and an activation it does not."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
             helper.make_node("Add", ["mm", "b"], ["z"], name="bias"),
             helper.make_node(act, ["z"], ["y"], name="act")]
    inits = [numpy_helper.from_array(rng.standard_normal((8, n)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b")]
    g = helper.make_graph(nodes, "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 8))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, n))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def vendor(name: str, **changes) -> Vendor:
    """cref under another name, with some of its hooks replaced."""
    parts = dict(checkers=CREF.checkers, patterns=CREF.patterns, codegen=CREF.codegen, keep_region=CREF.keep_region)
    return Vendor(name, **{**parts, **changes})


# --- 1. compare: a tensor a pass redefined is not held against the model's ---------------------------

@pytest.mark.full
def test_compare_never_holds_a_folded_tensor_against_the_models(tmp_path, capsys):
    """fold-affine folds HardSigmoid's alpha * x + beta into the dense layer before it: the layer's output is
    then not the model's tensor `z`. cref takes the layer and leaves the Clip to the host, so the tensor crosses
    a function boundary and is tapped; under its old name compare reported it as a divergence."""
    src, out = tmp_path / "dense.onnx", tmp_path / "out"
    onnx.save(dense_model(), src)
    assert main([str(src), "-o", str(out), "--vendor", "cref", "--no-configure"]) == 0
    rc = main(["compare", str(out)])
    stdout = capsys.readouterr().out
    assert rc == 0, stdout
    assert "DIVERGES" not in stdout and "aotc: no divergence" in stdout, stdout
    assert "without a counterpart in onnxruntime" in stdout  # the folded tensor, said so


def test_folded_hardsigmoid_gives_the_producer_a_new_output_name():
    parted = partition_model(dense_model(), Options(vendors=("cref",)))
    fn = next(iter(parted.graph.functions.values()))
    assert "z" not in fn.graph.outputs and fn.graph.outputs[0].startswith("z__affine"), fn.graph.outputs
    assert "y" in parted.graph.outputs


# --- 2. an exception in vendor code is the vendor's one-line error ---------------------------------

def _raises(*_args) -> None:
    raise ValueError("mine has no lowering for Add (add24)")


@pytest.mark.parametrize(("hook", "changes"), [
    ("codegen of model_broken_0", {"codegen": _raises}),
    ("checker for Relu", {"checkers": {**CREF.checkers, "Relu": _raises}}),
    ("keep_region", {"keep_region": _raises}),
    ("transform of model_broken_0", {"transform": _raises}),
])
def test_vendor_exception_names_vendor_and_hook(hook, changes):
    with pytest.raises(VendorError) as e:
        compile_model(dense_model("Relu"), Options(vendors=(vendor("broken", **changes),)))
    text = e.value.one_line()
    assert text.startswith(f"vendor broken, {hook}"), text
    assert "ValueError: mine has no lowering for Add (add24)" in text
    assert "an error in vendor broken's code, not in aotc or your model" in text and "\n" not in text


def test_vendor_refusal_keeps_its_message_and_exit_2(tmp_path, capsys, monkeypatch):
    def refuse(fn: Function, ctx: CodegenContext) -> Artifact:
        raise AotcError("mine cannot place 6 channels", node=fn.graph.nodes[0])

    mine = vendor("mine", codegen=refuse)
    monkeypatch.setattr("aot.vendor.find_vendor", lambda name: mine)
    monkeypatch.setattr("aot.compiler.find_vendor", lambda name: mine)
    src = tmp_path / "dense.onnx"
    onnx.save(dense_model("Relu"), src)
    assert main([str(src), "-o", str(tmp_path / "out"), "--vendor", "mine"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("aotc: error: vendor mine, codegen of dense_mine_0: node 'act' (Composite): "), err
    assert err.endswith("mine cannot place 6 channels") and "bug" not in err and "\n" not in err
    assert not (tmp_path / "out").exists()  # nothing half-written


# --- 4. weights_bytes: what the bundle stores ------------------------------------------------------

def _reblock(fn: Function, options) -> Function:
    """A vendor pass that stores the dense layer's weights in its own layout: a new constant replaces the old,
    which stays in the function's tensors but nothing reads it."""
    g = fn.graph.copy()
    node = next(n for n in g.nodes if n.op == "Composite")
    body = node.attrs["body"]
    mm = next(n for n in body.nodes if n.op in ("MatMul", "Gemm"))
    w = g.tensors[mm.inputs[1]]
    g.tensors["w_blocked"] = body.tensors["w_blocked"] = Tensor("w_blocked", w.shape, "float32", w.data * 1.0)
    mm.inputs[1] = "w_blocked"
    node.inputs = ["w_blocked" if i == w.name else i for i in node.inputs]
    return Function(fn.global_symbol, fn.compiler, g, fn.composite)


def test_weights_bytes_counts_what_the_bundle_stores():
    plain = compile_model(dense_model("Relu", 64), Options(vendors=("cref",)))
    reblocked = compile_model(dense_model("Relu", 64), Options(vendors=(vendor("cref", transform=_reblock),)))
    stored = plain.metadata["memory"]["weights_bytes"]
    assert stored == (8 * 64 + 64) * 4
    assert reblocked.metadata["memory"]["weights_bytes"] == stored  # not the unread 8 x 64 floats besides


def test_a_vendor_may_say_what_it_stores():
    def codegen(fn: Function, ctx: CodegenContext) -> Artifact:
        return Artifact(**{**CREF.codegen(fn, ctx).__dict__, "weights_bytes": 1234})

    b = compile_model(dense_model("Relu"), Options(vendors=(vendor("mine", codegen=codegen),)))
    assert b.metadata["memory"]["weights_bytes"] == 1234


# --- 8. one library file, two contents ------------------------------------------------------------

def test_library_file_with_two_contents_is_refused_by_name():
    def codegen(fn: Function, ctx: CodegenContext) -> Artifact:
        art = CREF.codegen(fn, ctx)
        art.files["lib/device.c"] = f"/* built for {fn.global_symbol} */\n"
        return art

    two_layers = dense_model("Relu")
    m = two_layers.graph
    m.node[2].output[0] = "r"
    rng = np.random.default_rng(1)
    m.initializer.extend([numpy_helper.from_array(rng.standard_normal((6, 4)).astype(np.float32), "w2")])
    m.node.extend([helper.make_node("Tanh", ["r"], ["t"], name="host_tanh"),
                   helper.make_node("MatMul", ["t", "w2"], ["y"], name="mm2")])
    del m.output[:]
    m.output.extend([helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 4))])
    only_dense = {k: v for k, v in CREF.checkers.items() if k != "Tanh"}
    with pytest.raises(VendorError, match=r"vendor mine, codegen of model_mine_1: writes vendor/mine/lib/device.c "
                                          r"with other contents than model_mine_0's codegen did"):
        compile_model(two_layers, Options(vendors=(vendor("mine", codegen=codegen, checkers=only_dense),)))


# --- 7. a region a vendor sends back goes to the next vendor --------------------------------------

def test_region_sent_back_is_offered_to_the_next_vendor():
    """first takes Relu alone but keeps no region without a dense layer; second takes dense+relu. Before, the
    Relu stayed with first's checker, second's dense+relu never matched, and first's region went to the host."""
    first = Vendor("first", checkers={"Relu": lambda n, g: ACCEPT}, codegen=CREF.codegen,
                   keep_region=lambda nodes, g: False)
    second = vendor("second")
    parted = partition_model(dense_model("Relu"), Options(vendors=(first, second)))
    (fn,) = parted.graph.functions.values()
    assert fn.compiler == "second"
    assert [n.attrs.get("composite") for n in fn.graph.nodes] == ["cref.dense_relu"]
    assert not [n for n in parted.graph.nodes if n.op != "Call"]  # nothing left on the host


def test_node_every_vendor_sends_back_stays_on_the_host_with_their_reasons():
    first = Vendor("first", checkers={"Relu": lambda n, g: ACCEPT}, codegen=CREF.codegen,
                   keep_region=lambda nodes, g: False)
    second = vendor("second", keep_region=lambda *a: False)
    parted = partition_model(dense_model("Relu"), Options(vendors=(first, second)))
    assert not parted.graph.functions
    assert parted.refusals["act"]["first"] == "first sent its region back (keep_region)"
    assert parted.refusals["act"]["second"] == "second sent its region back (keep_region)"



# --- 5. a vendor's intermediates planned by aotc's planner ------------------------------------------

def chain_model(width: int = 64) -> onnx.ModelProto:
    """dense -> five elementwise ops -> dense: one cref function with six intermediates of 4 x width floats."""
    rng = np.random.default_rng(2)
    ops = [("Relu", []), ("Mul", ["c"]), ("Add", ["d"]), ("Sigmoid", []), ("Tanh", [])]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["t0"], name="mm1")]
    for k, (op, extra) in enumerate(ops):
        nodes.append(helper.make_node(op, [f"t{k}", *extra], [f"t{k + 1}"], name=f"{op.lower()}{k}"))
    nodes.append(helper.make_node("MatMul", [f"t{len(ops)}", "w2"], ["y"], name="mm2"))
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("w1", (width, width)), ("w2", (width, width)), ("c", (width,)), ("d", (width,)))]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (4, width))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (4, width))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_vendor_workspace_is_planned_not_stacked():
    b = compile_model(chain_model(), Options(vendors=("cref",)))
    (fn,) = b.metadata["partition"]
    one = 4 * 64 * 4
    # the elementwise ops write over their inputs: one buffer; stacked one after another, it took six
    assert fn["workspace_bytes"] == one


def between_softmaxes(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` between two host Softmaxes: the vendor's call then reads and writes intermediates of the host."""
    g = model.graph
    first, last = g.node[0], g.node[-1]
    first.input[0], last.output[0] = "sx", "sy"
    g.node.insert(0, helper.make_node("Softmax", ["x"], ["sx"], name="soft_in"))
    g.node.append(helper.make_node("Softmax", ["sy"], ["y"], name="soft_out"))
    return model


@pytest.mark.parametrize("width", first_fast([64, 48]))
def test_vendor_workspace_holds_the_calls_tensors_so_the_arena_is_the_hosts(tmp_path, width):
    """The call's input (dead after it) and output (read later by the host) placed inside its workspace, each
    live only where it is: the vendor's intermediates reuse the input's bytes once read and the output's
    before written, so the arena with cref is the host's alone, not the host's plus a workspace beside its
    tensors; the bundle computes the same."""
    model = between_softmaxes(chain_model(width))
    host = compile_model(model, Options())
    b = compile_model(model, Options(vendors=("cref",)))
    (fn,) = b.metadata["partition"]
    assert fn["workspace_bytes"] == 2 * 4 * width * 4  # at most two of input, intermediates and output at once
    assert b.metadata["memory"]["arena_bytes"] == host.metadata["memory"]["arena_bytes"]
    b.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(12).standard_normal((4, width)).astype(np.float32)
    y = run_bundle(tmp_path / "out", {"x": x}, "--repeat", "2")["y"]
    assert np.abs(y - reference(model, {"x": x})[0]).max() <= 1e-5


def test_plan_workspace_without_inplace_keeps_two_buffers():
    from aot.plan.workspace import plan_workspace

    parted = partition_model(chain_model(), Options(vendors=("cref",)))
    (fn,) = parted.graph.functions.values()
    plan = plan_workspace(fn.graph)
    assert plan.nbytes == plan.lower_bound == 2 * 4 * 64 * 4


def test_plan_lives_never_overlaps_buffers_live_together():
    from aot.plan.workspace import Life, plan_lives

    rng = np.random.default_rng(3)
    lives = []
    for k in range(40):
        first = int(rng.integers(0, 20))
        lives.append(Life(f"b{k}", int(rng.integers(1, 5000)), first, first + int(rng.integers(0, 6))))
    plan = plan_lives(lives)
    assert plan.nbytes >= plan.lower_bound
    for a in lives:
        assert plan.offsets[a.name] % plan.alignment == 0 and plan.offsets[a.name] + a.nbytes <= plan.nbytes
        for b in lives:
            if a.name < b.name and a.first <= b.last and b.first <= a.last:
                oa, ob = plan.offsets[a.name], plan.offsets[b.name]
                assert oa + a.nbytes <= ob or ob + b.nbytes <= oa, (a, b)


# --- graph passes before partitioning (TVM's partition_for_<name>) -----------------------------------

class TanhAsSigmoid(Pass):
    """tanh(x) = 2 * sigmoid(2x) - 1: a vendor without Tanh takes it in ops it has."""

    name = "tanh-as-sigmoid"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        out: list[Node] = []
        for n in g.nodes:
            if n.op != "Tanh":
                out.append(n)
                continue
            x, y = n.inputs[0], n.outputs[0]
            t = g.tensors[x]
            two = f"{n.name}_two"
            g.tensors[two] = Tensor(two, (), "float32", np.array(2.0, np.float32))
            one = f"{n.name}_one"
            g.tensors[one] = Tensor(one, (), "float32", np.array(1.0, np.float32))
            mids = [f"{n.name}_{k}" for k in range(3)]
            for m in mids:
                g.tensors[m] = Tensor(m, t.shape, "float32")
            out += [Node("Mul", f"{n.name}_x2", [x, two], [mids[0]], origin=n.sources()),
                    Node("Sigmoid", f"{n.name}_sig", [mids[0]], [mids[1]], origin=n.sources()),
                    Node("Mul", f"{n.name}_s2", [mids[1], two], [mids[2]], origin=n.sources()),
                    Node("Sub", f"{n.name}_sub", [mids[2], one], [y], origin=n.sources())]
        g.nodes = out
        return g


class Breaks(Pass):
    name = "breaks"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        g.nodes = g.nodes[1:]  # the first node's output is now never computed
        return g


NO_TANH = {k: v for k, v in CREF.checkers.items() if k != "Tanh"}


def test_vendor_graph_pass_runs_before_partitioning_and_is_recorded(tmp_path):
    mine = vendor("mine", checkers=NO_TANH, graph_passes=(TanhAsSigmoid(),))
    model = dense_model("Tanh")
    b = compile_model(model, Options(vendors=(mine,)))
    assert b.metadata["vendor_graph_passes"] == {"mine": ["tanh-as-sigmoid"]}
    assert [n["op"] for n in b.metadata["nodes"]] == ["Call"]  # nothing left on the host: Tanh was rewritten
    off = compile_model(model, Options(vendors=(mine,), vendor_options=(("mine", "graph_passes", "off"),)))
    assert "vendor_graph_passes" not in off.metadata and "Tanh" in [n["op"] for n in off.metadata["nodes"]]
    # the rewrite computes the model: built and run against onnxruntime
    b.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(4).standard_normal((2, 8)).astype(np.float32)
    ours = run_bundle(tmp_path / "out", {"x": x})
    ref = reference(model, {"x": x})[0]
    assert np.abs(ours["y"] - ref).max() <= 1e-5


def test_vendor_graph_passes_are_listed_and_switchable(tmp_path, capsys, monkeypatch):
    mine = vendor("mine", checkers=NO_TANH, graph_passes=lambda options: [TanhAsSigmoid()])
    assert mine.options["graph_passes"].values == ("on", "off")
    monkeypatch.setattr("aot.vendor.find_vendor", lambda name: mine)
    monkeypatch.setattr("aot.compiler.find_vendor", lambda name: mine)
    src = tmp_path / "dense.onnx"
    onnx.save(dense_model("Tanh"), src)
    assert main(["partition", str(src), "--vendor", "mine", "--show"]) == 0
    assert "mine: graph passes=tanh-as-sigmoid" in capsys.readouterr().out


def test_broken_vendor_graph_pass_is_named():
    with pytest.raises(VendorError, match=r"^vendor mine, graph pass breaks: .*never computed|is used before"):
        compile_model(dense_model("Tanh"), Options(vendors=(vendor("mine", graph_passes=(Breaks(),)),)))


def test_partition_written_after_graph_passes_compiles_back(tmp_path, monkeypatch):
    """`aotc partition -o P.onnx` after a graph pass: the region names the ONNX node (Tanh) its four new nodes
    stand for; reading P.onnx back runs the pass again and puts all four in the region."""
    mine = vendor("mine", checkers=NO_TANH, graph_passes=(TanhAsSigmoid(),))
    monkeypatch.setattr("aot.vendor.find_vendor", lambda name: mine)
    monkeypatch.setattr("aot.compiler.find_vendor", lambda name: mine)
    src, parted = tmp_path / "dense.onnx", tmp_path / "parted.onnx"
    onnx.save(dense_model("Tanh"), src)
    assert main(["partition", str(src), "--vendor", "mine", "-o", str(parted)]) == 0
    b = compile_model(onnx.load(parted), Options())
    assert [n["op"] for n in b.metadata["nodes"]] == ["Call"]
    assert b.metadata["vendor_graph_passes"] == {"mine": ["tanh-as-sigmoid"]}


# --- 9. a vendor's own ops -------------------------------------------------------------------------

def _swizzle_infer(attrs, inputs):
    (shape, dtype), = inputs
    return [(shape, dtype)]


SWIZZLE = VendorOp("com.mynpu", "Swizzle", _swizzle_infer, doc="y = x with its last axis reversed")


def _swizzle_codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    """One com.mynpu.Swizzle: the last axis reversed, in plain C."""
    g, sym = fn.graph, fn.global_symbol
    (node,) = g.nodes
    shape = g.tensors[node.outputs[0]].shape
    rows, n = int(np.prod(shape[:-1])), shape[-1]
    proto = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace)"
    source = "\n".join([
        f'#include "{sym}.h"', "", f"{proto} {{",
        "    const float *x = (const float *)inputs[0]->data;",
        "    float *y = (float *)outputs[0]->data;",
        "    long r, j;", "    (void)workspace;",
        f"    for (r = 0; r < {rows}; ++r)",
        f"        for (j = 0; j < {n}; ++j) y[r * {n} + j] = x[r * {n} + {n - 1} - j];",
        "    return 0;", "}", ""])
    header = f'#include <stdint.h>\n#include "dltensor.h"\n{proto};\n'
    return Artifact(files={f"{sym}.c": source, f"{sym}.h": header}, sources=[f"{sym}.c"], header=f"{sym}.h")


def swizzle_model() -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Swizzle", ["r"], ["s"], name="sw", domain="com.mynpu"),
             helper.make_node("Sigmoid", ["s"], ["y"], name="sig")]
    g = helper.make_graph(nodes, "sw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 5))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 5))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.mynpu", 1)])
    m.ir_version = 8
    return m


def test_vendor_op_is_read_claimed_and_run(tmp_path):
    mynpu = Vendor("mynpu", ops=(SWIZZLE,), codegen=_swizzle_codegen)
    b = compile_model(swizzle_model(), Options(vendors=(mynpu,)))
    (fn,) = b.metadata["partition"]
    assert fn["compiler"] == "mynpu" and [n["op"] for n in b.metadata["nodes"]] == ["Relu", "Call", "Sigmoid"]
    b.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(5).standard_normal((2, 5)).astype(np.float32)
    y = run_bundle(tmp_path / "out", {"x": x})["y"]
    assert np.abs(y - 1 / (1 + np.exp(-np.maximum(x, 0)[:, ::-1]))).max() <= 1e-6


def test_vendor_op_without_its_vendor_is_refused_by_name():
    with pytest.raises(AotcError, match=r"node 'sw' \(Swizzle\): operator domain 'com.mynpu' is not supported "
                                        r"\(an op a vendor defines is read when that vendor is given"):
        compile_model(swizzle_model(), Options())
    other = Vendor("mynpu", ops=(replace(SWIZZLE, op_type="Shuffle"),), codegen=_swizzle_codegen)
    with pytest.raises(AotcError, match=r"node 'sw' \(Swizzle\): vendor mynpu defines no op Swizzle in its "
                                        r"domain 'com.mynpu'"):
        compile_model(swizzle_model(), Options(vendors=(other,)))


def test_vendor_op_its_vendor_refuses_is_refused_by_name():
    picky = Vendor("mynpu", ops=(SWIZZLE,), codegen=_swizzle_codegen,
                   checkers={"com.mynpu.Swizzle": lambda n, g: Reject("mynpu swizzles 8 columns at least")})
    with pytest.raises(AotcError, match=r"node 'sw' \(com.mynpu.Swizzle\): an op of vendor mynpu's domain "
                                        r"'com.mynpu', which only mynpu runs, and it did not take this one: "
                                        r"mynpu swizzles 8 columns at least"):
        compile_model(swizzle_model(), Options(vendors=(picky,)))


def test_vendor_op_infer_error_is_the_vendors():
    def bad(attrs, inputs):
        raise KeyError("axis")

    broken = Vendor("mynpu", ops=(replace(SWIZZLE, infer=bad),), codegen=_swizzle_codegen)
    with pytest.raises(VendorError, match=r"^vendor mynpu, infer of com.mynpu.Swizzle: node 'sw' \(Swizzle\): "
                                          r"KeyError: 'axis'"):
        compile_model(swizzle_model(), Options(vendors=(broken,)))


# --- per-instance state: an init that packs the weights into memory the plan reserves ---------------

def _packing_codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    """A MatMul whose init packs W transposed into the function's state; every run reads the packed copy."""
    g, sym = fn.graph, fn.global_symbol
    (node,) = g.nodes
    a, w, y = (g.tensors[t] for t in (*node.inputs, node.outputs[0]))
    (m, k), n = a.shape, w.shape[1]
    wname = ctx.weights.add(f"{sym}_w", w.data, "W as the model has it")
    run = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace, void *state)"
    init = f"int32_t {sym}_init(void *state)"
    source = "\n".join([
        *ctx.weights_includes, f'#include "{sym}.h"', "", *ctx.weights.declarations(), "",
        f"{init} {{", "    float *packed = (float *)state;", "    int i, j;",
        f"    for (j = 0; j < {n}; ++j) for (i = 0; i < {k}; ++i) packed[j * {k} + i] = {wname}[i * {n} + j];",
        "    return 0;", "}", "",
        f"{run} {{", "    const float *x = (const float *)inputs[0]->data;",
        "    float *out = (float *)outputs[0]->data;", "    const float *packed = (const float *)state;",
        "    int r, i, j;", "    (void)workspace;",
        f"    for (r = 0; r < {m}; ++r) for (j = 0; j < {n}; ++j) {{",
        "        float s = 0.0f;",
        f"        for (i = 0; i < {k}; ++i) s += x[r * {k} + i] * packed[j * {k} + i];",
        f"        out[r * {n} + j] = s;", "    }", "    return 0;", "}", ""])
    header = f'#include <stdint.h>\n#include "dltensor.h"\n{run};\n{init};\n'
    return Artifact(files={f"{sym}.c": source, f"{sym}.h": header}, sources=[f"{sym}.c"], header=f"{sym}.h",
                    state_bytes=w.nbytes)


def matmul_model() -> onnx.ModelProto:
    w = np.random.default_rng(6).standard_normal((8, 6)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "mm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 8))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 6))],
                          [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_vendor_state_is_reserved_initialised_and_kept(tmp_path):
    packer = Vendor("packer", checkers={"MatMul": lambda n, g: ACCEPT}, codegen=_packing_codegen)
    model = matmul_model()
    b = compile_model(model, Options(vendors=(packer,)))
    mem = b.metadata["memory"]
    (state,) = mem["vendor_state"].values()
    assert state["bytes"] == 8 * 6 * 4 and state["offset"] + 192 == mem["arena_bytes"]
    assert "_init((uint8_t *)arena + " in b.files["src/model.c"]
    assert "last 192 bytes hold the state" in b.files["include/model.h"]
    b.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(7).standard_normal((2, 8)).astype(np.float32)
    y = run_bundle(tmp_path / "out", {"x": x}, "--repeat", "3")["y"]  # runs after the first read the state too
    assert np.abs(y - reference(model, {"x": x})[0]).max() <= 1e-5


@pytest.mark.full
def test_vendor_state_with_memory_pools_is_the_first_pools_last_bytes(tmp_path):
    """--memory-pool splits the buffers over pools; the state stays the arena's (pool 0's) last bytes, pool 0's
    room for buffers being its size less the state's, and the bundle computes the same."""
    packer = Vendor("packer", checkers={"MatMul": lambda n, g: ACCEPT}, codegen=_packing_codegen)
    model = matmul_model()
    model.graph.node.extend([helper.make_node("Concat", ["y"] * 4, ["c"], name="cat", axis=1),
                             helper.make_node("Transpose", ["c"], ["t"], name="tr", perm=[1, 0]),
                             helper.make_node("Sigmoid", ["t"], ["s"], name="sig")])
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("s", TensorProto.FLOAT, (24, 2)))
    pools = (PoolSpec("fast", 512), PoolSpec("slow", 4096))
    b = compile_model(model, Options(vendors=(packer,), memory_pools=pools))
    mem = b.metadata["memory"]
    (state,) = mem["vendor_state"].values()
    first = mem["pools"][0]
    assert state["bytes"] == 192 and state["offset"] + 192 == first["bytes"] == mem["arena_bytes"] <= 512
    assert mem["pools"][1]["bytes"] == 192  # the Concat's output went to the second pool: pool 0 kept room
    b.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(7).standard_normal((2, 8)).astype(np.float32)
    got = run_bundle(tmp_path / "out", {"x": x}, "--repeat", "3")["s"]
    assert np.abs(got - reference(model, {"x": x})[0]).max() <= 1e-5
    with pytest.raises(AotcError, match=r"the vendor functions' state \(192 B\) leaves no room in pool fast"):
        compile_model(model, Options(vendors=(packer,), memory_pools=(PoolSpec("fast", 192), PoolSpec("slow", 4096))))


def test_vendor_state_comes_off_a_ram_budget():
    packer = Vendor("packer", checkers={"MatMul": lambda n, g: ACCEPT}, codegen=_packing_codegen)
    with pytest.raises(AotcError, match=r"vendor functions' state alone \(192 B\) exceeds it"):
        compile_model(matmul_model(), Options(vendors=(packer,), ram_budget=100))


# --- a layout at the functions' boundaries ----------------------------------------------------------

def _nhwc_unary_codegen(op: str, expr: str, shape: tuple[int, ...] = (1, 4, 5, 3),
                        head: tuple[str, ...] = ("Transpose",)):
    """A vendor that runs one elementwise op on NHWC data: its function is Transpose -> op -> Transpose, and
    the two transposes fold (an elementwise op does not care where the channels are). `shape`, `head`: the
    boundary tensor's shape and the nodes before the op for another layout."""
    def codegen(fn: Function, ctx: CodegenContext) -> Artifact:
        g, sym = fn.graph, fn.global_symbol
        assert [n.op for n in g.nodes] == [*head, op, *reversed(head)], [n.op for n in g.nodes]
        assert g.tensors[g.inputs[0]].shape == shape  # NHWC at the boundary
        size = g.tensors[g.outputs[0]].size
        proto = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace)"
        source = "\n".join([
            "#include <math.h>", f'#include "{sym}.h"', "", f"{proto} {{",
            "    const float *x = (const float *)inputs[0]->data;", "    float *y = (float *)outputs[0]->data;",
            "    long i;", "    (void)workspace;", f"    for (i = 0; i < {size}; ++i) y[i] = {expr};",
            "    return 0;", "}", ""])
        header = f'#include <stdint.h>\n#include "dltensor.h"\n{proto};\n'
        return Artifact(files={f"{sym}.c": source, f"{sym}.h": header}, sources=[f"{sym}.c"], header=f"{sym}.h",
                        cmake="target_link_libraries(${AOTC_TARGET} PRIVATE m)" if "exp" in expr else "")
    return codegen


def chw_model() -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Sigmoid", ["r"], ["y"], name="sig")]
    g = helper.make_graph(nodes, "chw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 3, 4, 5))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 3, 4, 5))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_boundary_layout_moves_transposes_to_the_host_where_they_cancel(tmp_path):
    relu = Vendor("relu_nhwc", checkers={"Relu": lambda n, g: ACCEPT}, boundary_layout="NHWC",
                  codegen=_nhwc_unary_codegen("Relu", "x[i] > 0.0f ? x[i] : 0.0f"))
    sig = Vendor("sig_nhwc", checkers={"Sigmoid": lambda n, g: ACCEPT}, boundary_layout="NHWC",
                 codegen=_nhwc_unary_codegen("Sigmoid", "1.0f / (1.0f + expf(-x[i]))"))
    model = chw_model()
    b = compile_model(model, Options(vendors=(relu, sig)))
    ops = [n["op"] for n in b.metadata["nodes"]]
    # the model's NCHW input to NHWC, the two calls with nothing between (the inverse pair cancelled), back
    assert ops == ["Transpose", "Call", "Call", "Transpose"], ops
    b.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(8).standard_normal((1, 3, 4, 5)).astype(np.float32)
    y = run_bundle(tmp_path / "out", {"x": x})["y"]
    assert np.abs(y - reference(model, {"x": x})[0]).max() <= 1e-6


POOLS = {  # MaxPool attributes: the usual stride-2 window, ceil_mode, dilated, a 1-D and a 3-D one
    "k3s2p1": ((1, 3, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "k2s2ceil": ((1, 3, 9, 7), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    "k3s1d2p2": ((1, 3, 8, 9), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 1, 2, 1]}),
    "1d": ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 0]}),
    "3d": ((1, 3, 4, 5, 6), {"kernel_shape": [2, 3, 3], "strides": [1, 2, 2], "pads": [0, 1, 1, 1, 0, 0]}),
}


def pool_concat_model(shape: tuple[int, ...], attrs: dict) -> onnx.ModelProto:
    """Relu (a vendor's) -> MaxPool -> Concat of it with itself (the host's) -> Sigmoid (another vendor's)."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["m"], name="pool", **attrs),
             helper.make_node("Concat", ["m", "m"], ["c"], name="cat", axis=1),
             helper.make_node("Sigmoid", ["c"], ["y"], name="sig")]
    g = helper.make_graph(nodes, "pc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m)


@pytest.mark.parametrize("pool", first_fast(POOLS))
def test_host_maxpool_and_concat_between_nhwc_calls_run_channels_last(tmp_path, pool):
    """The host's MaxPool and Concat between two NHWC vendors' calls: the Transposes to NCHW and back around
    them (each a copy of the tensor beside it: SqueezeNet 1.1 through mynpu took 6.31 MB of arena against the
    host's 3.93 MB) move below them and cancel; the pool runs channels last (aotc_maxpool_nhwc_f32)."""
    shape, attrs = POOLS[pool]
    model = pool_concat_model(shape, attrs)
    dims = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    last = (0, *range(2, len(shape)), 1)
    relu = Vendor("relu_nhwc", checkers={"Relu": lambda n, g: ACCEPT}, boundary_layout="NHWC",
                  codegen=_nhwc_unary_codegen("Relu", "x[i] > 0.0f ? x[i] : 0.0f", tuple(shape[i] for i in last)))
    sig = Vendor("sig_nhwc", checkers={"Sigmoid": lambda n, g: ACCEPT}, boundary_layout="NHWC",
                 codegen=_nhwc_unary_codegen("Sigmoid", "1.0f / (1.0f + expf(-x[i]))", tuple(dims[i] for i in last)))
    b = compile_model(model, Options(vendors=(relu, sig)))
    ops = [n["op"] for n in b.metadata["nodes"]]
    assert ops == ["Transpose", "Call", "MaxPool", "Concat", "Call", "Transpose"], ops
    assert "aotc_maxpool_nhwc_f32(" in b.files["src/model.c"]
    b.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    y = run_bundle(tmp_path / "out", {"x": x})["y"]
    assert np.abs(y - reference(model, {"x": x})[0]).max() <= 1e-6


def _blocked_bias_relu_codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    """Relu then a per-channel bias, computed in NCHW4c: the bias index is the block's and the lane's, so a
    wrong layout at the boundary gives wrong values."""
    g, sym = fn.graph, fn.global_symbol
    assert [n.op for n in g.nodes] == ["Transpose", "Reshape", "Relu", "Add", "Reshape", "Transpose"], g.nodes
    n, cb, h, w, c = g.tensors[g.inputs[0]].shape
    assert (n, cb, h, w, c) == (1, 2, 3, 5, 4)  # [N, C/4, H, W, 4]
    bias = g.tensors[g.nodes[3].inputs[1]].data.reshape(-1)
    proto = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace)"
    values = ", ".join(f"{float(v)!r}f" for v in bias)
    source = "\n".join([
        f'#include "{sym}.h"', "", f"static const float bias[{bias.size}] = {{{values}}};",
        "", f"{proto} {{", "    const float *x = (const float *)inputs[0]->data;",
        "    float *y = (float *)outputs[0]->data;", "    int b, p, l;", "    (void)workspace;",
        f"    for (b = 0; b < {cb}; ++b)", f"        for (p = 0; p < {h * w}; ++p)",
        f"            for (l = 0; l < {c}; ++l) {{", f"                long i = ((long)b * {h * w} + p) * {c} + l;",
        f"                y[i] = (x[i] > 0.0f ? x[i] : 0.0f) + bias[b * {c} + l];", "            }",
        "    return 0;", "}", ""])
    header = f'#include <stdint.h>\n#include "dltensor.h"\n{proto};\n'
    return Artifact(files={f"{sym}.c": source, f"{sym}.h": header}, sources=[f"{sym}.c"], header=f"{sym}.h")


def bias_model(channels: int) -> onnx.ModelProto:
    b = np.random.default_rng(9).standard_normal((1, channels, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "b"], ["a"], name="add"),
             helper.make_node("Sigmoid", ["a"], ["y"], name="sig")]
    g = helper.make_graph(nodes, "bias", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, channels, 3, 5))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, channels, 3, 5))],
                          [numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


@pytest.mark.full
def test_blocked_boundary_layout_hands_the_function_nchw4c(tmp_path):
    blk = Vendor("blk", checkers={"Relu": lambda n, g: ACCEPT, "Add": lambda n, g: ACCEPT}, boundary_layout="NCHW4c",
                 codegen=_blocked_bias_relu_codegen)
    model = bias_model(8)
    b = compile_model(model, Options(vendors=(blk,)))
    ops = [n["op"] for n in b.metadata["nodes"]]
    assert ops == ["Reshape", "Transpose", "Call", "Transpose", "Reshape", "Sigmoid"], ops
    b.write(tmp_path / "out" / "bundle")
    configure(tmp_path / "out", "host", ["-DAOTC_WARNINGS_AS_ERRORS=ON"])
    build(tmp_path / "out")
    x = np.random.default_rng(10).standard_normal((1, 8, 3, 5)).astype(np.float32)
    y = run_bundle(tmp_path / "out", {"x": x})["y"]
    assert np.abs(y - reference(model, {"x": x})[0]).max() <= 1e-6


def test_blocked_layouts_cancel_between_calls_and_skip_channels_not_a_multiple():
    def unary(name: str, op: str, channels: int) -> Vendor:
        return Vendor(name, checkers={op: lambda n, g: ACCEPT}, boundary_layout="NCHW4c",
                      codegen=_nhwc_unary_codegen(op, "x[i]", (1, channels // 4, 4, 5, 4), ("Transpose", "Reshape")))
    g8 = partition_model(_chw(8), Options(vendors=(unary("r4", "Relu", 8), unary("s4", "Sigmoid", 8))))
    g = apply_boundary_layouts(g8.graph, g8.vendors)
    # into the blocked layout once, out of it once: the inverse pair between the calls cancelled, views merged
    assert [n.op for n in g.nodes] == ["Reshape", "Transpose", "Call", "Call", "Transpose", "Reshape"], g.nodes
    g6 = partition_model(_chw(6), Options(vendors=(unary("r4", "Relu", 8),)))
    assert [n.op for n in apply_boundary_layouts(g6.graph, g6.vendors).nodes] == ["Call", "Sigmoid"]  # 6 % 4: as is


def _chw(channels: int) -> onnx.ModelProto:
    m = chw_model()
    for v in (*m.graph.input, *m.graph.output):
        v.type.tensor_type.shape.dim[1].dim_value = channels
    return m


def test_boundary_layout_split_that_loses_elements_is_the_vendors_error():
    bad = Vendor("bad", checkers={"Relu": lambda n, g: ACCEPT}, codegen=_nhwc_unary_codegen("Relu", "x[i]"),
                 boundary_layout=lambda fn, t: Layout((1, 3, 4, 4), (0, 1, 2, 3)))
    with pytest.raises(VendorError, match=r"^vendor bad, boundary_layout of model_bad_0: the split \[1, 3, 4, 4\] "
                                          r"of 'x' \[1, 3, 4, 5\] does not keep its 60 elements"):
        compile_model(chw_model(), Options(vendors=(bad,)))
    unknown = Vendor("unk", checkers={"Relu": lambda n, g: ACCEPT}, boundary_layout="NCHW1c",
                     codegen=_nhwc_unary_codegen("Relu", "x[i]"))
    with pytest.raises(AotcError, match=r"boundary_layout 'NCHW1c' is none of NHWC, NCHW<b>c"):
        compile_model(chw_model(), Options(vendors=(unknown,)))


def test_boundary_layout_that_is_no_permutation_is_the_vendors_error():
    bad = Vendor("bad", checkers={"Relu": lambda n, g: ACCEPT}, boundary_layout=lambda fn, t: (0, 1, 1, 2),
                 codegen=_nhwc_unary_codegen("Relu", "x[i]"))
    with pytest.raises(VendorError, match=r"^vendor bad, boundary_layout of model_bad_0: \[0, 1, 1, 2\] is no "
                                          r"permutation of the 4 axes of 'x'"):
        compile_model(chw_model(), Options(vendors=(bad,)))
