"""Optional outputs (issue 21) and models written the way older exporters wrote them.

Older exporters (opsets 7 to 9) declare every output an op has: Dropout's mask, MaxPool's
Indices, BatchNormalization's statistics. An optional output nothing reads is dropped on import
(aot/frontend/onnx/optional_outputs.py); one that is read is computed as ONNX defines it in inference
(Dropout's mask all true from opset 12, MaxPool's Indices), or refused in one line where inference
does not define it. BatchNormalization before opset 14 is the exception: declaring its statistics
outputs is what makes it training mode (onnxruntime then normalises by the batch's statistics even
when nothing reads them), so it is refused rather than answered differently from onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from modelcheck import compile_build_run
from modelcheck import reference as ort_reference
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from opcheck import Case, model_case, shared_build

from aot.compiler import Options, compile_model, partition_model
from aot.errors import AotcError
from aot.frontend import import_model
from aot.frontend.onnx.optional_outputs import drop_unread_optional_outputs

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _vi(name: str, dtype: int = F, shape: list | None = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(nodes: list, inputs: list, outputs: list, opset: int, inits: list = ()) -> onnx.ModelProto:
    model = helper.make_model(helper.make_graph(nodes, "m", inputs, outputs, list(inits)),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)
    return model


def _bn_params(c: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"scale": (rng.standard_normal(c) * 0.5 + 1).astype(np.float32),
            "bias": (rng.standard_normal(c) * 0.1).astype(np.float32),
            "mean": (rng.standard_normal(c) * 0.1).astype(np.float32),
            "var": (np.abs(rng.standard_normal(c)) + 0.5).astype(np.float32)}


# --- the rule on import -----------------------------------------------------------------------

def test_unread_optional_outputs_are_dropped_before_any_check():
    """Dropout's mask and MaxPool's Indices, declared and unread (opset 8): gone from the IR."""
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "idx"], kernel_shape=[2, 2], storage_order=1),
             helper.make_node("Dropout", ["p"], ["y", "mask"], ratio=0.5)]
    g = import_model(_model(nodes, [_vi("x", shape=[1, 2, 4, 4])], [_vi("y")], 8))
    pool, drop = g.nodes
    assert pool.op == "MaxPool" and pool.outputs == ["p"] and "storage_order" not in pool.attrs
    assert drop.op == "Identity" and drop.outputs == ["y"]
    assert "idx" not in g.tensors and "mask" not in g.tensors


def test_only_the_unread_ones_go():
    """LayerNormalization (opset 17): Mean unread becomes "", InvStdDev read stays; trailing "" are cut."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), n) for n in ("s", "b")]
    both = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], name="ln")
    last = helper.make_node("LayerNormalization", ["y", "s", "b"], ["z", "mean2", "inv2"], name="ln2")
    m = _model([both, last], [_vi("x", shape=[2, 4])], [_vi("z"), _vi("inv")], 17, inits)
    dropped = drop_unread_optional_outputs(m, 17)
    assert list(m.graph.node[0].output) == ["y", "", "inv"]
    assert list(m.graph.node[1].output) == ["z"]
    assert dropped == [("ln", "mean"), ("ln2", "mean2"), ("ln2", "inv2")]


def test_an_output_read_inside_a_subgraph_is_kept():
    then = helper.make_graph([helper.make_node("Identity", ["mask"], ["o"])], "then", [], [_vi("o", B)])
    other = helper.make_graph([helper.make_node("Identity", ["mask"], ["o2"])], "else", [], [_vi("o2", B)])
    nodes = [helper.make_node("Dropout", ["x"], ["y", "mask"]),
             helper.make_node("If", ["c"], ["r"], then_branch=then, else_branch=other)]
    m = _model(nodes, [_vi("x", shape=[3]), _vi("c", B, [])], [_vi("y"), _vi("r", B)], 13)
    assert drop_unread_optional_outputs(m, 13) == []
    assert list(m.graph.node[0].output) == ["y", "mask"]


def test_batchnorm_statistics_outputs_are_refused_before_opset_14_and_dropped_after():
    """Before opset 14 declaring them selects training mode: refused even though nothing reads them."""
    for opset in (7, 9):
        bn = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv", "sm", "sv"])
        m = _model([bn], [_vi("x", shape=[1, 2, 3, 3])], [_vi("y")], opset)
        with pytest.raises(AotcError, match="training mode before opset 14"):
            drop_unread_optional_outputs(m, opset)
    bn = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"])
    m = _model([bn], [_vi("x", shape=[1, 2, 3, 3])], [_vi("y")], 15)
    assert [o for _, o in drop_unread_optional_outputs(m, 15)] == ["rm", "rv"]


# --- read optional outputs, and what is refused ---------------------------------------------------

def _dropout_case(case_id: str, opset: int, training: bool | None = None, consume_mask: bool = False) -> Case:
    """Dropout reading its mask: as a graph output, or (consume_mask) through Cast and Mul."""
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    inputs, inits = ["x"], []
    if training is not None:
        inits = [numpy_helper.from_array(np.array(0.3, np.float32), "ratio"),
                 numpy_helper.from_array(np.array(training), "training_mode")]
        inputs += ["ratio", "training_mode"]
    nodes = [helper.make_node("Dropout", inputs, ["y", "mask"], name="drop")]
    outputs = [_vi("y"), _vi("mask", B)]
    if consume_mask:
        nodes += [helper.make_node("Cast", ["mask"], ["maskf"], to=F), helper.make_node("Mul", ["y", "maskf"], ["z"])]
        outputs = [_vi("z")]
    return model_case(case_id, helper.make_graph(nodes, case_id, [_vi("x", shape=[2, 3, 4])], outputs, inits),
                      {"x": x}, opset)


def _bn_case(case_id: str, opset: int, outputs: tuple[str, ...] = ("y",), read: tuple[str, ...] = ("y",),
             **attrs) -> Case:
    c = 3
    params = _bn_params(c)
    inits = [numpy_helper.from_array(v, k) for k, v in params.items()]
    bn = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], list(outputs), name="bn",
                          **attrs)
    x = (np.random.default_rng(2).standard_normal((4, c, 5, 5)) * 2 + 1).astype(np.float32)
    graph = helper.make_graph([bn], case_id, [_vi("x", shape=[4, c, 5, 5])], [_vi(r) for r in read], inits)
    case = model_case(case_id, graph, {"x": x}, opset)
    p = {k: v[None, :, None, None] for k, v in params.items()}  # the inference formula, for onnxruntime's refusals
    case.expected = [((x - p["mean"]) / np.sqrt(p["var"] + 1e-5) * p["scale"] + p["bias"]).astype(np.float32)]
    return case


CASES = [
    # a read mask from opset 12: all true, as a graph output or feeding other nodes
    _dropout_case("mask_opset12", 12),
    _dropout_case("mask_opset13_consumed", 13, consume_mask=True),
    _dropout_case("mask_opset22", 22),
    _dropout_case("mask_training_mode_false", 13, training=False),
    # opset 15+ with training_mode=0: extra outputs are invalid (onnxruntime refuses the model), unread
    # ones are dropped, and Y is the inference formula
    _bn_case("bn_opset15_unread_outputs", 15, outputs=("y", "rm", "rv"), training_mode=0),
    _bn_case("bn_opset9_y_only", 9),
]
for _c in CASES:
    if not _c.id.startswith("bn_opset15"):
        _c.expected = None  # onnxruntime's answer


def _bn_training_case(case_id: str, opset: int, read: tuple[str, ...], **attrs) -> Case:
    """training_mode=1 (issue 51): Y by the batch's own statistics and the running ones updated, against onnx's
    reference (its formula, the batch's population variance)."""
    case = _bn_case(case_id, opset, outputs=("y", "rm", "rv"), read=read, training_mode=1, **attrs)
    case.expected = [r for r, name in zip(ReferenceEvaluator(case.model).run(None, case.feeds), read, strict=True)]
    return case


CASES += [_bn_training_case("bn_training_mode_1_all_outputs", 15, ("y", "rm", "rv"), momentum=0.8),
          _bn_training_case("bn_training_mode_1_y_only", 14, ("y",), epsilon=1e-3)]


REFUSED = [
    ("mask_read_opset10", _dropout_case("r", 10).model, "mask before opset 12 has no value in inference"),
    ("mask_read_opset7", _model([helper.make_node("Dropout", ["x"], ["y", "m"])], [_vi("x", shape=[2, 3])],
                                [_vi("y"), _vi("m")], 7), "mask before opset 12"),
    ("dropout_training_true", _dropout_case("r", 13, training=True).model, r"training_mode \(input 2\) is true "
     "and the node has no seed"),
    ("dropout_training_at_run_time",
     _model([helper.make_node("Dropout", ["x", "", "t"], ["y"])], [_vi("x", shape=[2, 3]), _vi("t", B, [])],
            [_vi("y")], 13), "computed at run time"),
    ("bn_opset9_statistics_unread", _bn_case("r", 9, outputs=("y", "rm", "rv", "sm", "sv")).model,
     "training mode before opset 14"),
    ("bn_opset7_statistics_read", _bn_case("r", 7, outputs=("y", "rm", "rv", "sm", "sv"), read=("y", "rm")).model,
     "training mode before opset 14"),
    ("bn_training_mode_0_read", _bn_case("r", 15, outputs=("y", "rm", "rv"), read=("y", "rm"),
                                         training_mode=0).model, "has no statistics outputs"),
]


@pytest.mark.parametrize("case_id,model,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_in_one_line(case_id, model, message):
    with pytest.raises(AotcError, match=message) as e:
        compile_model(model)
    assert "\n" not in e.value.one_line()


def test_onnxruntime_takes_declared_batchnorm_statistics_as_training():
    """Why the opset-9 case above is refused: onnxruntime's Y uses the batch's statistics, not the inputs'."""
    case = _bn_case("ort", 9, outputs=("y", "rm", "rv", "sm", "sv"))
    (y,) = ort_reference(case.model, case.feeds)
    assert not np.allclose(y, case.expected[0], atol=1e-3)
    x = case.feeds["x"]
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    p = {k: v[None, :, None, None] for k, v in _bn_params(3).items()}
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5) * p["scale"] + p["bias"], atol=1e-4)


# --- models written the way older exporters wrote them ---------------------------------------------

class _Net:
    """A few layers with helper, every op declaring the outputs an old exporter wrote."""

    def __init__(self, opset: int, seed: int = 0):
        self.opset, self.rng = opset, np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.k = 0

    def name(self, kind: str) -> str:
        self.k += 1
        return f"{kind}{self.k}"

    def node(self, op: str, inputs: list[str], n_out: int = 1, **attrs) -> str:
        base = self.name(op.lower())
        outs = [f"{base}_out"] + [f"{base}_extra{j}" for j in range(1, n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=base, **attrs))
        return outs[0]

    def const(self, value: np.ndarray) -> str:
        name = self.name("w")
        self.inits.append(numpy_helper.from_array(np.asarray(value, np.float32), name))
        return name

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0, bn: bool = False,
             bn_outputs: int = 1) -> str:
        w = self.const(self.rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)))
        attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4}
        if not bn:
            return self.node("Relu", [self.node("Conv", [x, w, self.const(self.rng.standard_normal(cout) * 0.1)],
                                                **attrs)])
        y = self.node("Conv", [x, w], **attrs)
        p = _bn_params(cout, int(self.rng.integers(1000)))
        attrs = {"epsilon": 1e-3, "momentum": 0.9, **({"spatial": 1} if self.opset < 9 else {})}
        y = self.node("BatchNormalization", [y, *(self.const(p[k]) for k in ("scale", "bias", "mean", "var"))],
                      n_out=bn_outputs, **attrs)
        return self.node("Relu", [y])

    def maxpool(self, x: str, k: int, stride: int, pad: int = 0) -> str:
        """With its Indices output declared (opset 8+), as exporters of the time did."""
        return self.node("MaxPool", [x], n_out=2 if self.opset >= 8 else 1, kernel_shape=[k, k],
                         strides=[stride, stride], pads=[pad] * 4, **({"storage_order": 0} if self.opset >= 8 else {}))

    def dropout(self, x: str) -> str:
        return self.node("Dropout", [x], n_out=2, ratio=0.5)  # with its mask, which nothing reads

    def model(self, name: str, x_shape: list[int], y: str, extra_outputs: tuple = ()) -> onnx.ModelProto:
        outputs = [_vi(y)] + [_vi(o, I64) for o in extra_outputs]
        return _model(self.nodes, [_vi("data", shape=x_shape)], outputs, self.opset, self.inits)


def squeezenet_like(opset: int = 8) -> onnx.ModelProto:
    """SqueezeNet 1.1 as the model zoo's opset 7-9 exports: fire modules, Dropout with its mask, Softmax."""
    n = _Net(opset)
    x = n.conv("data", 3, 16, 3, stride=2)
    x = n.maxpool(x, 3, 2)
    for squeeze, expand, cin in ((4, 16, 16), (4, 16, 32)):
        s = n.conv(x, cin, squeeze, 1)
        x = n.node("Concat", [n.conv(s, squeeze, expand, 1), n.conv(s, squeeze, expand, 3, pad=1)], axis=1)
    x = n.maxpool(x, 3, 2)
    x = n.dropout(x)
    x = n.conv(x, 32, 10, 1)
    x = n.node("GlobalAveragePool", [x])
    return n.model("squeezenet_like", [1, 3, 33, 33], n.node("Softmax", [x]))


def inception_like(opset: int, bn_outputs: int = 1, read_indices: bool = False) -> onnx.ModelProto:
    """An Inception block with BatchNormalization after each conv, as opset 7-9 exports wrote it."""
    n = _Net(opset, seed=1)
    x = n.conv("data", 3, 8, 3, stride=2, pad=1, bn=True, bn_outputs=bn_outputs)
    x = n.maxpool(x, 3, 2, pad=1)
    stem_pool = n.nodes[-1]
    b1 = n.conv(x, 8, 4, 1, bn=True, bn_outputs=bn_outputs)
    b2 = n.conv(n.conv(x, 8, 4, 1, bn=True), 4, 6, 3, pad=1, bn=True, bn_outputs=bn_outputs)
    b3 = n.conv(n.conv(x, 8, 2, 1, bn=True), 2, 4, 5, pad=2, bn=True)
    b4 = n.conv(n.maxpool(x, 3, 1, pad=1), 8, 4, 1, bn=True)
    x = n.node("Concat", [b1, b2, b3, b4], axis=1)
    x = n.node("GlobalAveragePool", [x])
    x = n.dropout(n.node("Flatten", [x], axis=1))
    w, b = n.const(n.rng.standard_normal((10, 18)) * 0.3), n.const(n.rng.standard_normal(10) * 0.1)
    y = n.node("Softmax", [n.node("Gemm", [x, w, b], transB=1)])
    indices = (stem_pool.output[1],) if read_indices else ()
    return n.model("inception_like", [2, 3, 24, 24], y, indices)


def _feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return {"data": np.random.default_rng(seed).standard_normal(shape).astype(np.float32)}


MODEL_CASES = [
    Case("squeezenet_like_opset7", squeezenet_like(7), _feeds(squeezenet_like(7))),
    Case("squeezenet_like_opset9", squeezenet_like(9), _feeds(squeezenet_like(9))),
    Case("inception_like_opset7", inception_like(7), _feeds(inception_like(7))),
    Case("inception_like_opset9", inception_like(9), _feeds(inception_like(9))),
    # the stem MaxPool's Indices read (a graph output): int64 positions into the flattened N x C x H x W input
    Case("inception_like_opset9_indices", inception_like(9, read_indices=True), _feeds(inception_like(9))),
    Case("inception_like_opset9_indices_accel_sim", inception_like(9, read_indices=True),
         _feeds(inception_like(9)), vendors=("accel_sim",)),
]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES + MODEL_CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES + MODEL_CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_read_mask_is_all_true(built):
    ours = built.run("mask_opset12")
    assert ours[1].dtype == np.bool_ and ours[1].all()


def test_squeezenet_like_opset8_through_the_cli(tmp_path):
    """aotc MODEL -o OUT, cmake --build OUT, aotc run: the path a user of a zoo export takes."""
    model = squeezenet_like(8)
    feeds = _feeds(model)
    meta, ours = compile_build_run(tmp_path, model, feeds, "squeezenet_like",
                                   cmake_args=("-DAOTC_WARNINGS_AS_ERRORS=ON",))
    (ref,) = ort_reference(model, feeds)
    np.testing.assert_allclose(ours[meta["outputs"][0]["name"]], ref, rtol=1e-4, atol=1e-5)


def test_inception_like_with_batchnorm_statistics_is_refused():
    """The same model with the statistics outputs declared: training mode before opset 14."""
    for opset in (7, 9):
        with pytest.raises(AotcError, match="training mode before opset 14"):
            compile_model(inception_like(opset, bn_outputs=5))


def test_maxpool_with_indices_stays_on_the_host():
    """Vendors pool float32 only: a MaxPool writing int64 Indices is left to the host kernel."""
    g = partition_model(inception_like(9, read_indices=True), Options(vendors=("accel_sim",))).graph
    pools = [n for n in g.nodes if n.op == "MaxPool"]
    assert len(pools) == 1 and len(pools[0].outputs) == 2
    assert any(n.op == "Call" for n in g.nodes)
