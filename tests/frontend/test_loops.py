"""ONNX Loops as exporters write them (issue 26; aot/frontend/onnx/loops.py), against onnxruntime with the
error relative to each output's own scale.

The committed models (examples/export_loops.py; CI needs neither TensorFlow nor torch): Keras 3 LSTM
and GRU spotters through tf2onnx (a counted condition, carried weights, a Gather on a counter, a scan
output), a tf.while_loop whose condition depends on the data, a torch.jit.script loop and a nested
one. Hand-written here: a tf2onnx-style loop with counters, and a data-dependent loop with a scan output
whose rows the C API reports (early stop, at M, zero steps). And the refusals, in aotc's own words.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import Case, shared_build

from aot.compiler import Options, compile_model, lower
from aot.errors import AotcError
from aot.plan import assert_no_overlap

MODELS = Path(__file__).resolve().parents[1] / "models"
EXPORTED = ["kws_lstm_keras", "kws_gru_keras", "kws_lstm_keras_stream", "loop_script", "loop_list", "loop_nested"]
T, I, H = 9, 5, 6


def _vi(name: str, shape: list[int] | None, dtype: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def _c(name: str, value: object) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def _weights() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal((I, H)).astype(np.float32) * 0.5,
            rng.standard_normal((H, H)).astype(np.float32) * 0.5)


def counted_rnn() -> onnx.ModelProto:
    """As tf2onnx writes a while loop: M = INT64_MAX, a counter carried and compared with a constant
    (Less, And), the weights read from the outer scope, the input row by a Gather on the iteration."""
    w, r = _weights()
    body = helper.make_graph([
        helper.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
        helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
        helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
        helper.make_node("Add", ["xw", "hr"], ["s0"]),
        helper.make_node("Tanh", ["s0"], ["h_out"]),
        helper.make_node("Add", ["cnt_in", "one"], ["cnt_out"]),
        helper.make_node("Less", ["cnt_out", "limit"], ["lt"]),
        helper.make_node("And", ["cond_in", "lt"], ["cond_out"]),
        helper.make_node("Identity", ["h_out"], ["h_scan"]),
    ], "body", [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL), _vi("h_in", None),
                _vi("cnt_in", None, TensorProto.INT64)],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("h_out", None), _vi("cnt_out", None, TensorProto.INT64),
         _vi("h_scan", None)], [_c("one", np.int64(1)), _c("limit", np.int64(T - 2))])
    graph = helper.make_graph([
        helper.make_node("Loop", ["M", "c0", "h0", "cnt0"], ["h_last", "cnt_last", "hs"], body=body, name="rnn"),
        helper.make_node("Relu", ["hs"], ["y"]),
    ], "g", [_vi("X", [T, 1, I]), _vi("h0", [1, H])], [_vi("y", None), _vi("h_last", None)],
        [_c("M", np.int64(2**63 - 1)), _c("c0", np.bool_(True)), _c("cnt0", np.int64(0)), _c("W", w), _c("R", r)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def until_rnn(scan_read: bool = False, m: int | None = T) -> onnx.ModelProto:
    """A loop that runs while the sum of its state stays under a threshold input, at most M steps,
    its states as a scan output (rows known at run time); the initial condition is computed too."""
    w, r = _weights()
    body = helper.make_graph([
        helper.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
        helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
        helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
        helper.make_node("Add", ["xw", "hr"], ["s0"]),
        helper.make_node("Tanh", ["s0"], ["h_out"]),
        helper.make_node("ReduceSum", ["h_out"], ["tot"], keepdims=0),
        helper.make_node("Less", ["tot", "thr"], ["go"]),
        helper.make_node("Identity", ["h_out"], ["h_scan"]),
    ], "body", [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL), _vi("h_in", [1, H])],
        [_vi("go", [], TensorProto.BOOL), _vi("h_out", [1, H]), _vi("h_scan", [1, H])])
    nodes = [helper.make_node("Less", ["thr0", "thr"], ["c0"]),
             helper.make_node("Loop", ["M" if m is not None else "", "c0", "h0"], ["h_last", "hs"], body=body,
                              name="until")]
    outputs = [_vi("hs", None), _vi("h_last", [1, H])]
    if scan_read:
        nodes.append(helper.make_node("Relu", ["hs"], ["y"], name="reads_rows"))
        outputs[0] = _vi("y", None)
    inits = [_c("W", w), _c("R", r), _c("thr0", np.float32(-100))] + ([_c("M", np.int64(m))] if m is not None else [])
    graph = helper.make_graph(nodes, "g", [_vi("X", [T, 1, I]), _vi("h0", [1, H]), _vi("thr", [])], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _feeds(model: onnx.ModelProto, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in model.graph.input}


def _case(case_id: str, model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> Case:
    case = Case(case_id, model, feeds, scratch_floor=0)
    case.relative = True
    return case


THRESHOLDS = {"zero_steps": -100.0, "early": 0.5, "at_m": 100.0}  # until_rnn: how far it runs on _feeds(seed=3)
HALVINGS = {"zero_steps": 100.0, "early": 5.0, "at_m": 1e-9}  # loop_while_data: 0, 2 and M = 16 halvings


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    cases = [_case(name, onnx.load(str(MODELS / f"{name}.onnx")), {}) for name in EXPORTED]
    for c in cases:
        c.feeds = _feeds(c.model)
    cases.append(_case("counted_rnn", counted_rnn(), _feeds(counted_rnn())))
    until = until_rnn()
    base = _feeds(until, seed=3)
    for k, thr in THRESHOLDS.items():
        cases.append(_case(f"until_{k}", until, {**base, "thr": np.array(thr, np.float32)}))
    for vendor in ("cref", "accel_sim"):  # body nodes offloaded like top-level ones
        lstm = onnx.load(str(MODELS / "kws_lstm_keras.onnx"))
        cases.append(_case(f"lstm_{vendor}", lstm, _feeds(lstm)))
        cases[-1].vendors = (vendor,)
    halve = onnx.load(str(MODELS / "loop_while_data.onnx"))
    for k, thr in HALVINGS.items():
        cases.append(_case(f"while_{k}", halve, {"x": np.arange(1, 9, dtype=np.float32),
                                                  "threshold": np.array(thr, np.float32)}))
    return shared_build(cases, tmp_path_factory.mktemp("loops"))


@pytest.mark.parametrize("name", [*EXPORTED, "counted_rnn"])
def test_loop_matches_onnxruntime(build, name):
    assert "Loop" in {n.op_type for n in build.cases[name].model.graph.node}
    build.check(name)


@pytest.mark.parametrize("vendor", ["cref", "accel_sim"])
def test_body_nodes_go_to_a_vendor(build, vendor):
    build.check(f"lstm_{vendor}")
    functions = build.meta[f"lstm_{vendor}"]["partition"]
    assert functions and all(f["compiler"] == vendor for f in functions)
    nodes = [n["name"] for n in build.meta[f"lstm_{vendor}"]["nodes"]]
    begin, end = (next(k for k, n in enumerate(nodes) if n.endswith(s)) for s in ("/begin", "/end"))
    symbols = {f["symbol"] for f in functions}
    calls = [k for k, n in enumerate(nodes) if n in symbols]
    assert any(begin < k < end for k in calls), (calls, begin, end)


@pytest.mark.parametrize("stop", list(THRESHOLDS))
def test_runtime_condition_reports_the_rows_written(build, stop):
    build.check(f"until_{stop}")  # compares shapes too: the rows the extent field reports
    rows = build.run(f"until_{stop}")[0].shape[0]
    assert {"zero_steps": rows == 0, "early": 0 < rows < T, "at_m": rows == T}[stop], rows
    (hs,) = [o for o in build.meta[f"until_{stop}"]["outputs"] if o["name"] == "hs"]
    assert hs["shape"] == [T, 1, H] and hs["extent"] == {"axis": 0, "max": T, "field": "hs_extent"}


@pytest.mark.parametrize("stop", list(HALVINGS))
def test_tf_while_loop_on_the_data(build, stop):
    build.check(f"while_{stop}")
    steps = int(build.run(f"while_{stop}")[1])
    assert {"zero_steps": steps == 0, "early": steps == 2, "at_m": steps == 16}[stop], steps


def test_keras_lstm_is_one_c_loop_with_weights_in_flash():
    """The weights tf2onnx carries through the loop stay constants (not copied into the arena each
    call); the C has one for-loop, not 49 copies of the cell; the arena is at the tight bound, and the
    scan output of which the graph reads only the last row keeps one row."""
    model = onnx.load(str(MODELS / "kws_lstm_keras.onnx"))
    bundle = compile_model(model, Options(name="kws"))
    c = bundle.files["src/kws.c"]
    assert c.count("for (; aotc_step0 < INT64_C(49); ++aotc_step0)") == 1
    assert c.count("aotc_sgemm_f32(") <= 3
    mem = bundle.metadata["memory"]
    # no 74 KB of weights in it, nor the 49 rows of h: the graph reads only the last (a Slice), so one is kept
    assert mem["arena_bytes"] < 49 * 64 * 4, mem
    assert mem["arena_bytes"] == mem["tight_bound_bytes"], mem


def test_new_carried_values_are_written_over_the_old_ones():
    """The LSTM's h and c are written straight into their states (nothing reads the old value after the
    new one is written): no copy at the loop's end. The GRU's h too; its counter is read by the Gather
    after its Add, so it keeps its copy, beside the copy of the last row (the values are checked against
    onnxruntime above)."""
    lstm = compile_model(onnx.load(str(MODELS / "kws_lstm_keras.onnx")), Options(name="kws")).files["src/kws.c"]
    assert lstm.count("its new value was written over it") == 2, lstm
    gru = compile_model(onnx.load(str(MODELS / "kws_gru_keras.onnx")), Options(name="kws")).files["src/kws.c"]
    end = gru[gru.index("end of Loop"):]
    assert end.count("its new value was written over it") == 1 and end[:end.index("}")].count("memcpy(") == 2, end


def test_values_read_in_the_body_live_to_the_loop_end():
    from aot.compiler import select_and_plan

    graph = lower(until_rnn())
    _, plan = select_and_plan(graph, "host", {})
    assert_no_overlap(plan)
    steps = {n.name: k for k, n in enumerate(graph.nodes)}
    end = next(steps[n.name] for n in graph.nodes if n.op == "LoopEnd")
    for t in ("X", "thr"):  # read every step: never overwritten before the last
        assert plan.buffer_of(t).last >= end, t


# --- refusals, in aotc's words ------------------------------------------------------------------------------
def _refusal(model: onnx.ModelProto) -> str:
    with pytest.raises(AotcError) as e:
        compile_model(model)
    line = e.value.one_line()
    assert "known results" not in line and "Unable to find" not in line, line
    return line


def test_runtime_condition_without_a_bound_is_refused():
    line = _refusal(until_rnn(m=None))
    assert line == ("node 'until' (Loop): its initial condition 'c0' is computed at run time, and it has no "
                    "maximum trip count: aotc needs a bound on its steps"), line


def test_rows_known_at_run_time_read_by_a_node_are_refused():
    line = _refusal(until_rnn(scan_read=True))
    assert line.startswith("Loop 'until': scan output 'hs' has a row count known only at run time"), line
    assert "node 'reads_rows' reads it" in line, line


def test_runtime_max_trip_count_is_refused():
    model = counted_rnn()
    model.graph.input.append(_vi("m_in", [], TensorProto.INT64))
    model.graph.node[0].input[0] = "m_in"
    line = _refusal(model)
    assert line.startswith("node 'rnn' (Loop): its maximum trip count 'm_in' is computed at run time"), line


def runtime_m_rnn(declared: int | None = T, through_cast: bool = False) -> onnx.ModelProto:
    """M and the initial condition graph inputs, the condition passed through (as ONNX's Range expansion
    writes it); the scan output declared with `declared` rows (on a Cast of it with through_cast)."""
    w, r = _weights()
    body = helper.make_graph([
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
        helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
        helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
        helper.make_node("Add", ["xw", "hr"], ["s0"]),
        helper.make_node("Tanh", ["s0"], ["h_out"]),
        helper.make_node("Identity", ["h_out"], ["h_scan"]),
    ], "body", [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL), _vi("h_in", [1, H])],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("h_out", [1, H]), _vi("h_scan", [1, H])])
    rows = [declared, 1, H] if declared is not None else None
    nodes = [helper.make_node("Loop", ["m", "go", "h0"], ["h_last", "hs"], body=body, name="runtime_m")]
    outputs = [_vi("hs", rows), _vi("h_last", [1, H])]
    if through_cast:
        nodes.append(helper.make_node("Cast", ["hs"], ["hs_cast"], to=TensorProto.FLOAT))
        outputs[0] = _vi("hs_cast", rows)
    graph = helper.make_graph(nodes, "g", [_vi("X", [T, 1, I]), _vi("h0", [1, H]),
                                           _vi("m", [], TensorProto.INT64), _vi("go", [], TensorProto.BOOL)],
                              outputs, [_c("W", w), _c("R", r)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _runtime_m_case(case_id: str, m: int, go: bool, through_cast: bool = False) -> Case:
    model = runtime_m_rnn(T - 2, through_cast)
    feeds = _feeds(runtime_m_rnn(T - 2))
    feeds.update(m=np.array(m, np.int64), go=np.array(go))
    return _case(case_id, model, feeds)


@pytest.mark.parametrize("through_cast", [False, True])
def test_runtime_max_trip_count_takes_the_declared_rows(tmp_path, through_cast):
    """M read at run time, the scan output declared with M's rows: compiled for that count, as onnxruntime."""
    case = _runtime_m_case("runtime_m", T - 2, True, through_cast)
    shared_build([case], tmp_path).check("runtime_m")


@pytest.mark.parametrize(("m", "go"), [(T - 3, True), (T - 1, True), (0, True), (T - 2, False)])
def test_runtime_max_trip_count_other_than_the_declared_rows_returns_an_error_code(tmp_path, m, go):
    case = _runtime_m_case("runtime_m_other", m, go)
    with pytest.raises(AssertionError, match="returned -2"):
        shared_build([case], tmp_path).run("runtime_m_other")


def test_runtime_max_trip_count_without_declared_rows_is_refused():
    line = _refusal(runtime_m_rnn(declared=None))
    assert line.startswith("node 'runtime_m' (Loop): its maximum trip count 'm' is computed at run time"), line
    assert "or a scan output of declared length" in line, line


@pytest.mark.full
def test_a_loop_that_never_stops_is_refused():
    model = counted_rnn()
    loop = model.graph.node[0]
    loop.input[0] = ""  # no M; the counter's limit never reached
    body = loop.attribute[0].g
    body.node[5].input[1] = "zero"  # cnt_out = cnt_in + 0
    body.initializer.append(_c("zero", np.int64(0)))
    line = _refusal(model)
    assert line.startswith("node 'rnn' (Loop): it has no maximum trip count and its condition is still true "
                           "after"), line


def test_an_error_in_the_body_names_the_loop():
    model = counted_rnn()
    body = model.graph.node[0].attribute[0].g
    body.node[1].input[1] = "R"  # [1,5] x [6,6]
    line = _refusal(model)
    assert line.startswith("Loop 'rnn': in its body: node 'MatMul_1' (MatMul)"), line


def test_a_body_node_without_a_kernel_is_named_with_its_loop():
    model = counted_rnn()
    model.graph.node[0].attribute[0].g.node[4].op_type = "Bernoulli"  # random: never in a bundle
    line = _refusal(model)
    assert line == ("node 'rnn/Bernoulli_4' (Bernoulli): operator is not supported by the host C generator"), line


def test_scan_output_of_an_unbounded_runtime_loop_is_refused():
    model = until_rnn(m=2**63 - 1)  # tf2onnx's M for a tf.while_loop with no maximum_iterations
    line = _refusal(model)
    assert line.startswith("Loop 'until': scan output 'hs' has no row bound (its initial condition 'c0' is computed "
                           "at run time, and its maximum trip count is 9223372036854775807)"), line


def _shuffle(swap: bool) -> onnx.ModelProto:
    """Carried values that take each other's old values: a <- b + x, b <- a (old), rows of the old a;
    `swap`: a <- b, b <- a, a cycle."""
    nodes = [helper.make_node("Identity", ["b_in"], ["a_out"]) if swap else
             helper.make_node("Add", ["b_in", "x"], ["a_out"]),
             helper.make_node("Identity", ["a_in"], ["b_out"]), helper.make_node("Identity", ["a_in"], ["row"])]
    body = helper.make_graph(nodes, "body", [_vi("i", [], TensorProto.INT64), _vi("c", [], TensorProto.BOOL),
                                             _vi("a_in", [2]), _vi("b_in", [2])],
                             [_vi("c_out", [], TensorProto.BOOL), _vi("a_out", [2]), _vi("b_out", [2]),
                              _vi("row", [2])])
    body.node.append(helper.make_node("Identity", ["c"], ["c_out"]))
    graph = helper.make_graph([helper.make_node("Loop", ["M", "", "a0", "b0"], ["a", "b", "rows"], body=body,
                                                name="shuffle")], "g",
                              [_vi("x", [2]), _vi("a0", [2]), _vi("b0", [2])], [_vi("a", [2]), _vi("b", [2]),
                                                                              _vi("rows", None)],
                              [_c("M", np.int64(4))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_carried_values_that_read_each_others_old_values(tmp_path):
    model = _shuffle(swap=False)
    feeds = {k: np.array(v, np.float32) for k, v in (("x", [1, 2]), ("a0", [3, 4]), ("b0", [5, 6]))}
    build = shared_build([_case("shuffle", model, feeds)], tmp_path)
    build.check("shuffle")


def test_a_cycle_of_carried_values_is_refused():
    line = _refusal(_shuffle(swap=True))
    assert "take each other's old values in a cycle" in line, line


def scan_model(in_axis: int = 0, in_dir: int = 0, out_axis: int = 0, out_dir: int = 0) -> onnx.ModelProto:
    """Scan (opset 9+): a running tanh-RNN over the rows of X along `in_axis`, the states stacked."""
    w, r = _weights()
    body = helper.make_graph([
        helper.make_node("MatMul", ["x_e", "W"], ["xw"]), helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
        helper.make_node("Add", ["xw", "hr"], ["s"]), helper.make_node("Tanh", ["s"], ["h_out"]),
        helper.make_node("Identity", ["h_out"], ["y_e"])],
        "body", [_vi("h_in", [1, H]), _vi("x_e", [1, I])], [_vi("h_out", [1, H]), _vi("y_e", [1, H])])
    x_shape = [T, 1, I] if in_axis == 0 else [1, T, I]
    graph = helper.make_graph([helper.make_node(
        "Scan", ["h0", "X"], ["h_last", "ys"], name="scan", body=body, num_scan_inputs=1,
        scan_input_axes=[in_axis], scan_input_directions=[in_dir], scan_output_axes=[out_axis],
        scan_output_directions=[out_dir])], "g", [_vi("X", x_shape), _vi("h0", [1, H])],
        [_vi("h_last", [1, H]), _vi("ys", None)], [_c("W", w), _c("R", r)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


@pytest.mark.parametrize("form", [(0, 0, 0, 0), (0, 1, 0, 0), (1, 0, 1, 0), (0, 0, 0, 1), (1, 1, 2, 1)])
def test_scan_matches_onnxruntime(tmp_path, form):
    model = scan_model(*form)
    build = shared_build([_case("scan", model, _feeds(model))], tmp_path)
    build.check("scan")
