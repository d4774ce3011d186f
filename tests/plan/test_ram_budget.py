"""--ram-budget (issue 53): the plan meets the budget or aotc refuses in one line naming the peak; what
was traded is in metadata.json and the footprint report; without a budget nothing changes. The planner's
techniques on small graphs with their ops' memory written here (in-place over any input, outputs
overlapping their inputs), on random chains, then on the MLPerf Tiny models through the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool
from hypothesis import given, settings
from hypothesis import strategies as st
from test_planner import Choice

from aot.compiler import Options, compile_file
from aot.footprint import summary
from aot.ir import Graph, Node, Tensor
from aot.kernels.tflite_int8 import overlap_bytes
from aot.plan import BudgetError, OpMemory, Plan, plan_memory

MODELS = Path(__file__).resolve().parents[2] / "bench" / "models" / "keras"
KWS = MODELS / "kws_dscnn_int8.tflite"


def memory(overlap: dict[str, int] | None = None, inplace_any: frozenset[str] = frozenset(),
           scratch: dict[str, int] | None = None) -> OpMemory:
    """Relu runs in place over input 0; under a budget an op named in inplace_any over any input of its
    shape; a Conv's output may start overlap[op name] bytes below its input."""
    overlap, scratch = overlap or {}, scratch or {}

    def inplace_input(n: Node, g: Graph) -> int | None:
        return 0 if n.op == "Relu" else None

    def inplace_inputs(n: Node, g: Graph) -> tuple[int, ...]:
        y = g.tensors[n.outputs[0]]
        return tuple(k for k, i in enumerate(n.inputs) if n.name in inplace_any and g.tensors[i].shape == y.shape)

    return OpMemory(lambda n: False, inplace_input, lambda n, g, budget: Choice(scratch.get(n.name, 0)),
                    inplace_inputs=inplace_inputs, overlap=lambda n, g: overlap.get(n.name) if n.op == "Conv" else None)


def chain(nodes: list[tuple[str, list[str], str, int]], outputs=("out",)) -> Graph:
    """nodes: (op, inputs, output, bytes); node k is named n<k>; the graph input x is 16 bytes."""
    tensors = {"x": Tensor("x", (16,), "int8")}
    ns = []
    for k, (op, ins, out, n) in enumerate(nodes):
        tensors[out] = Tensor(out, (n,), "int8")
        ns.append(Node(op, f"n{k}", list(ins), [out]))
    return Graph("g", ns, tensors, ["x"], list(outputs))


def check_bytes(g: Graph, p: Plan, overlap: dict[str, int]) -> None:
    """No two tensors alive at one step share a byte, except a tensor and what is written in place over
    it (same offset) and an overlapped output and its input, the output at least overlap[node] bytes below."""
    first = {o: k for k, n in enumerate(g.nodes) for o in n.outputs}
    last = {t: max([k for k, n in enumerate(g.nodes) if t in n.inputs] + [first.get(t, 0)]) for t in g.tensors}
    for t in g.outputs:
        last[t] = len(g.nodes) - 1
    allowed = {(n.inputs[0], n.outputs[0]): overlap[n.name] for n in g.nodes if n.name in overlap}
    ts = [t for t in g.tensors if t in p.offsets]
    for a in ts:
        for b in ts:
            if a >= b or max(first.get(a, 0), first.get(b, 0)) > min(last[a], last[b]):
                continue
            (oa, na), (ob, nb) = (p.offsets[a], g.tensors[a].nbytes), (p.offsets[b], g.tensors[b].nbytes)
            if oa + na <= ob or ob + nb <= oa or oa == ob:
                continue
            pair = (a, b) if (a, b) in allowed else (b, a)
            assert pair in allowed, f"{a} [{oa}, {oa + na}) and {b} [{ob}, {ob + nb}) overlap"
            assert p.offsets[pair[1]] <= p.offsets[pair[0]] - allowed[pair], (pair, p.offsets)


def test_no_budget_or_a_budget_met_changes_nothing():
    g = chain([("Conv", ["x"], "a", 256), ("Conv", ["a"], "b", 256), ("Conv", ["b"], "out", 64)])
    ops = memory({"n1": 32, "n2": 16})
    plain = plan_memory(g, ops)
    met = plan_memory(g, ops, ram_budget=plain.arena_bytes)
    assert plain.budget is None and met.offsets == plain.offsets and met.arena_bytes == plain.arena_bytes
    assert met.budget == {"ram_budget_bytes": plain.arena_bytes, "arena_bytes": plain.arena_bytes,
                          "unbudgeted_arena_bytes": plain.arena_bytes, "traded": {}}


def test_an_output_overlaps_its_input_by_the_bytes_the_kernel_allows():
    # a (256 B) -> b (256 B): apart 512 B; b may start 32 B below a: 288 B
    g = chain([("Conv", ["x"], "a", 256), ("Conv", ["a"], "b", 256), ("Conv", ["b"], "out", 16)])
    overlap = {"n1": 32}
    p = plan_memory(g, memory(overlap), ram_budget=300)
    assert p.arena_bytes <= 300 and p.offsets["b"] == p.offsets["a"] - 32
    check_bytes(g, p, overlap)
    assert p.budget["traded"]["overlap"]["nodes"] == ["n1"] and p.budget["traded"]["overlap"]["extra_macs"] == 0
    assert p.budget["unbudgeted_arena_bytes"] == 512


def test_a_run_of_overlapped_outputs_grows_down():
    # each output 32 or 48 B below its input: the run's buffer moves its older tensors up (272 B in all, its
    # tensors 192 to 208 B a step), no two overlap but as allowed
    g = chain([("Conv", ["x"], "a", 160), ("Conv", ["a"], "b", 160), ("Conv", ["b"], "c", 160),
               ("Conv", ["c"], "d", 160), ("Conv", ["d"], "out", 16)])
    overlap = {"n1": 32, "n2": 32, "n3": 48}
    p = plan_memory(g, memory(overlap), ram_budget=280)
    assert p.arena_bytes <= 280
    assert p.offsets["b"] == p.offsets["a"] - 32 and p.offsets["c"] == p.offsets["b"] - 32
    assert p.offsets["d"] == p.offsets["c"] - 48
    check_bytes(g, p, overlap)


def test_an_input_still_read_later_is_not_written_over():
    # a is read again by n3: n1's output may not overlap it, so nothing can be done
    g = chain([("Conv", ["x"], "a", 256), ("Conv", ["a"], "b", 256), ("Conv", ["b"], "c", 16),
               ("Add", ["a", "c"], "out", 16)])
    ops = memory({"n1": 32})
    with pytest.raises(BudgetError) as e:
        plan_memory(g, ops, ram_budget=300)
    assert e.value.least_bytes == plan_memory(g, ops).arena_bytes == 528
    assert "step 2, node n2 (Conv)" in str(e.value) and "n0's output 256 B" in str(e.value)


def test_an_elementwise_op_writes_over_either_input_that_dies_under_a_budget():
    # n2 adds a (read again at n3) and b (dies at n2), n3 a and c (both die): without a budget each output is new
    g = chain([("Conv", ["x"], "a", 128), ("Conv", ["a"], "b", 128), ("Add", ["a", "b"], "c", 128),
               ("Add", ["a", "c"], "out", 128)])
    ops = memory(inplace_any=frozenset({"n2", "n3"}))
    plain = plan_memory(g, ops)
    assert plain.offsets["c"] != plain.offsets["b"] and plain.arena_bytes == 384
    p = plan_memory(g, ops, ram_budget=256)
    assert p.offsets["c"] == p.offsets["b"] and p.arena_bytes == 256
    traded = p.budget["traded"]["inplace"]
    assert traded["bytes_saved"] == 128 and traded["nodes"] == ["n2", "n3"] and traded["extra_macs"] == 0


def test_the_refusal_names_the_peak_and_the_least_arena():
    g = chain([("Conv", ["x"], "a", 256), ("Conv", ["a"], "b", 256), ("Conv", ["b"], "out", 16)])
    with pytest.raises(BudgetError) as e:
        plan_memory(g, memory({"n1": 32}), ram_budget=100)
    msg = str(e.value)
    assert "\n" not in msg
    assert e.value.least_bytes == 288
    assert msg.startswith("--ram-budget 100 B: the least arena aotc reaches is 288 B")
    assert "step 1, node n1 (Conv)" in msg and "n1's output over n0's output 288 B" in msg
    plan_memory(g, memory({"n1": 32}), ram_budget=e.value.least_bytes)  # the least is accepted


@settings(max_examples=150, deadline=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=2, max_size=10), skips=st.lists(st.integers(0, 9), max_size=4),
       below=st.lists(st.integers(0, 6), min_size=10, max_size=10), share=st.floats(0.3, 1.0))
def test_random_chains_meet_the_budget_or_refuse(sizes, skips, below, share):
    """Chains of Convs (some overlapping their inputs by random offsets) with additions of earlier
    tensors: under any budget the plan fits it and keeps every tensor alive apart (but the overlaps
    allowed), or the refusal's least arena is accepted."""
    nodes, names = [], ["x"]
    for k, n in enumerate(sizes):
        nodes.append(("Conv", [names[-1]], f"t{k}", 16 * n))
        names.append(f"t{k}")
    for s in skips:  # a later Add reads an earlier tensor: it lives on, its consumer may not overlap it
        if s < len(sizes) - 1:
            nodes.append(("Add", [names[s + 1], names[-1]], f"s{len(names)}", 16))
            names.append(f"s{len(names)}")
    nodes.append(("Conv", [names[-1]], "out", 16))
    g = chain(nodes)
    overlap = {f"n{k}": 16 * below[k] for k in range(len(sizes)) if below[k]}
    ops = memory(overlap)
    plain = plan_memory(g, ops)
    budget = max(16, int(share * plain.arena_bytes))
    try:
        p = plan_memory(g, ops, ram_budget=budget)
    except BudgetError as e:
        assert e.least_bytes > budget
        p = plan_memory(g, ops, ram_budget=e.least_bytes)
        budget = e.least_bytes
    assert p.arena_bytes <= budget
    check_bytes(g, p, overlap)


def _tfl(op: str, x: tuple[int, ...], y: tuple[int, ...], k: tuple[int, int], s: tuple[int, int],
         pads: tuple[int, int]) -> int | None:
    w = (1, *k, y[3]) if op == "TflDepthwiseConv2D" else (y[3], *k, x[3])
    tensors = {"x": Tensor("x", x, "int8"), "w": Tensor("w", w, "int8", np.zeros(w, np.int8)),
               "y": Tensor("y", y, "int8")}
    node = Node(op, "c", ["x", "w"], ["y"], {"kernel": list(k), "strides": list(s), "dilations": [1, 1],
                                             "pads": list(pads)})
    return overlap_bytes(node, Graph("g", [node], tensors, ["x"], ["y"]))


def test_overlap_bytes_of_the_issues_layers():
    # a 1 x 1 conv writes position P's oc bytes after reading its c: an expansion starts out - in + c below
    assert _tfl("TflConv2D", (1, 48, 48, 8), (1, 48, 48, 16), (1, 1), (1, 1), (0, 0)) == 48 * 48 * 8 + 16
    assert _tfl("TflConv2D", (1, 14, 14, 96), (1, 14, 14, 24), (1, 1), (1, 1), (0, 0)) == 32  # 24 rounded up
    # KWS's 3 x 3 depthwise, pad 1: a row of 5 positions and 2 more behind (the window's first row), 64 channels
    assert _tfl("TflDepthwiseConv2D", (1, 25, 5, 64), (1, 25, 5, 64), (3, 3), (1, 1), (1, 1)) == 7 * 64
    # MobileNetV2's stride-2 depthwise (SAME: pads 0 above): its output rows are half as long as the input's,
    # so the output trails the windows by one position of 96 channels; with PyTorch's pad 1 (folded) too
    assert _tfl("TflDepthwiseConv2D", (1, 112, 112, 96), (1, 56, 56, 96), (3, 3), (2, 2), (0, 0)) == 96
    assert _tfl("TflDepthwiseConv2D", (1, 112, 112, 96), (1, 56, 56, 96), (3, 3), (2, 2), (1, 1)) == 96
    # a multiple of the channels where the DSP path goes 4 channels at a time over the image: 12 -> 48
    assert _tfl("TflDepthwiseConv2D", (1, 3, 3, 12), (1, 2, 2, 12), (3, 3), (2, 2), (1, 1)) == 48
    assert _tfl("TflConv2D", (2, 4, 4, 8), (2, 4, 4, 8), (1, 1), (1, 1), (0, 0)) is None  # batches above 1


@pytest.mark.full  # (9 s of the fast tier's run in CI: its budget tests are the autoencoder's and the bands')
def test_kws_within_the_issues_budget():
    """MLPerf Tiny's DS-CNN on the M4 within 12.0 KB (issue 53's target; 19,968 B without a budget): its
    convs overlapping their inputs, smaller blocks where the budget is tight."""
    b = compile_file(KWS, Options(name="kws", target="mps2-an386", ram_budget=12000))
    mem = b.metadata["memory"]
    assert mem["arena_bytes"] <= 12000 and mem["ram_budget"]["unbudgeted_arena_bytes"] == 19968
    assert len(mem["ram_budget"]["traded"]["overlap"]["nodes"]) >= 4
    plain = compile_file(KWS, Options(name="kws", target="mps2-an386"))
    assert "ram_budget" not in plain.metadata["memory"]


def test_dense_layers_scratch_is_traded_under_a_budget():
    """MLPerf Tiny's autoencoder (FULLY_CONNECTED only) on the M4: the DSP path's widened input row is scratch a
    budget may refuse (issue 67: 3,584 B without a budget, at most 1,600 B asked): the path then goes in blocks
    that fit (bench: 1.127x the unbudgeted est. cycles at 1,600 B, bit-exact; the plain loop took 3.6x)."""
    model = MODELS / "ad_autoencoder_int8.tflite"
    b = compile_file(model, Options(name="ad", target="mps2-an386", ram_budget=1600))
    mem = b.metadata["memory"]
    assert mem["arena_bytes"] <= 1600 and mem["ram_budget"]["unbudgeted_arena_bytes"] == 3584
    assert "scratch" in mem["ram_budget"]["traded"]
    code = b.files["src/ad.c"]
    assert code.count(".kq = ") >= 2  # the DSP path in blocks (x a chunk at a time, some outputs at a time)
    looser = compile_file(model, Options(name="ad", target="mps2-an386", ram_budget=3000))
    assert 1600 < looser.metadata["memory"]["arena_bytes"] <= 3000  # a looser budget keeps what scratch fits


@pytest.mark.full
def test_cli_refuses_in_one_line_and_reports_what_was_traded(tmp_path):
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(KWS), "-o", str(tmp_path / "a"), "--no-configure",
                        "--target", "mps2-an386", "--ram-budget", "5000"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    least = re.search(r"--ram-budget 5,000 B: the least arena aotc reaches is ([\d,]+) B", r.stderr)
    assert least and int(least.group(1).replace(",", "")) <= 12000, r.stderr  # the issue's target: 12.0 KB
    assert "(TflBandRun)" in r.stderr and "runs of int8 convs in row bands" in r.stderr  # aot/plan/bands.py
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(KWS), "-o", str(tmp_path / "b"), "--no-configure",
                        "--target", "mps2-an386", "--ram-budget", "12000"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "aotc: --ram-budget 12000 B: arena " in r.stdout and "overlap saved" in r.stdout
    meta = json.loads((tmp_path / "b" / "bundle" / "metadata.json").read_text())
    budget = meta["memory"]["ram_budget"]
    assert budget["ram_budget_bytes"] == 12000 and budget["arena_bytes"] == meta["memory"]["arena_bytes"] <= 12000
    report = {"name": "kws", "target": "mps2-an386",
              "model": {"flash_bytes": 1, "ram_bytes": 2, "arena_bytes": budget["arena_bytes"], "data": 0, "bss": 0,
                        "stack_bytes": 0, "ram_budget": budget}}
    assert f"--ram-budget 12000 B: arena {budget['arena_bytes']} B (without the budget 19968 B)" in summary(report)


# (op, window, stride, output channels, fused activation: 3 RELU6) after the TRANSPOSE
NCHW_LAYERS = (("CONV_2D", 3, 2, 8, 3), ("DEPTHWISE_CONV_2D", 3, 1, 8, 0), ("CONV_2D", 1, 1, 4, 0))


def _nchw_conv_model(path: Path, layers: tuple[tuple[str, int, int, int, int], ...] = NCHW_LAYERS,
                     size: int = 40) -> Path:
    """A PyTorch-style int8 model as TFLite converters keep it: a 1 x 3 x size x size (NCHW) input, its
    TRANSPOSE to NHWC, then `layers` (SAME padding). With NCHW_LAYERS (CONV_2D 3 x 3 stride 2, 3 -> 8, RELU6;
    DEPTHWISE_CONV_2D 3 x 3; a 1 x 1 CONV_2D, 8 -> 4) its unbudgeted peak is the TRANSPOSE: the input and its
    NHWC copy, 9,600 B."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
    from tflite_written import Written

    rng = np.random.default_rng(7)
    w = Written()
    x = w.tensor([1, 3, size, size], "int8", quant=(0.02, -5))
    perm = w.tensor([4], "int32", np.array([0, 2, 3, 1], np.int32))
    t = w.tensor([1, size, size, 3], "int8", quant=(0.02, -5))
    w.op("TRANSPOSE", [x, perm], [t], ("TransposeOptions", {}))
    prev, scale, h, ic = t, 0.02, size, 3
    for op, k, s, oc, act in layers:
        shape = [1, k, k, oc] if op == "DEPTHWISE_CONV_2D" else [oc, k, k, ic]
        wt = w.tensor(shape, "int8", rng.integers(-127, 128, shape).astype(np.int8), quant=(0.01, 0))
        bias = w.tensor([oc], "int32", rng.integers(-3000, 3000, oc).astype(np.int32), quant=(scale * 0.01, 0))
        h = -(-h // s)
        y = w.tensor([1, h, h, oc], "int8", quant=(0.05, 3))
        fields = {"padding": 0, "strideW": s, "strideH": s, "fusedActivationFunction": act,
                  "dilationWFactor": 1, "dilationHFactor": 1}
        if op == "DEPTHWISE_CONV_2D":
            w.op(op, [prev, wt, bias], [y], ("DepthwiseConv2DOptions", {**fields, "depthMultiplier": 1}))
        else:
            w.op(op, [prev, wt, bias], [y], ("Conv2DOptions", fields))
        prev, scale, ic = y, 0.05, oc
    return w.save(path, [x], [prev])


def _no_transpose_in_place(monkeypatch) -> None:
    """The driver offers no TRANSPOSE written over its input (aot/kernels/transpose_in_place.py), which on the
    host takes less than a run from the TRANSPOSE: the runs in row bands from it are what is left to test."""
    import aot.compiler

    monkeypatch.setattr(aot.compiler, "transpose_in_place", lambda graph, i, selection: None)


def test_a_channels_first_inputs_transpose_starts_a_run_in_bands(tmp_path, monkeypatch):
    """Issue 67: a TFLite model with PyTorch's NCHW input peaks at its TRANSPOSE (the input and its NHWC copy:
    TFLM's MobileNetV2 224 could not go below 301,056 B). The TRANSPOSE may start a run in row bands, each
    band's rows of the three planes copied channels-last into the first line buffer, the run's output over
    the first plane's rows read: a budget under the TRANSPOSE's peak is met (6,048 B the least), and the host
    bundle (built -Werror) gives every output element of LiteRT's reference kernels."""
    from modelcheck import build_bundle, run_bundle
    from tflite_reference import reference

    _no_transpose_in_place(monkeypatch)
    model = _nchw_conv_model(tmp_path / "nchw.tflite")
    # the least arena was 9,600 B on the host (the TRANSPOSE's input and output) before it could start a run
    meta = build_bundle(model, tmp_path / "banded", "--ram-budget", "6400")
    mem = meta["memory"]
    assert mem["arena_bytes"] <= 6400, mem["arena_bytes"]
    runs = mem["ram_budget"]["traded"]["bands"]["runs"]
    assert runs[0]["layers"][0] == "TRANSPOSE_0" and len(runs[0]["layers"]) >= 2, runs
    rng = np.random.default_rng(3)
    feeds = [rng.integers(-128, 128, (1, 3, 40, 40)).astype(np.int8)]
    want = list(reference(model, feeds, tmp_path).values())[0]
    got = run_bundle(tmp_path / "banded", feeds)[meta["outputs"][0]["name"]]
    assert got.shape == want.shape and np.array_equal(got, want)


@pytest.mark.full
def test_a_banded_transpose_through_an_expansion_identical_under_sanitizers(tmp_path, monkeypatch):
    """The run from the TRANSPOSE through a 1 x 1 expansion (8 -> 48) and a stride-2 depthwise conv (a
    64 x 64 input: 24,576 B the least before, the TRANSPOSE's input and output) at 20,000 B on the host
    under ASan and UBSan: every output element of LiteRT's reference kernels, on three inputs."""
    from modelcheck import build_bundle, run_bundle
    from tflite_reference import reference

    _no_transpose_in_place(monkeypatch)

    layers = (("CONV_2D", 3, 2, 8, 3), ("CONV_2D", 1, 1, 48, 3), ("DEPTHWISE_CONV_2D", 3, 2, 48, 3),
              ("CONV_2D", 1, 1, 8, 0))
    model = _nchw_conv_model(tmp_path / "expand.tflite", layers, 64)
    meta = build_bundle(model, tmp_path / "banded", "--ram-budget", "20000", sanitize=True)
    assert meta["memory"]["arena_bytes"] <= 20000
    assert meta["memory"]["ram_budget"]["traded"]["bands"]["runs"][0]["layers"][0] == "TRANSPOSE_0"
    rng = np.random.default_rng(5)
    for k in range(3):
        feeds = [rng.integers(-128, 128, (1, 3, 64, 64)).astype(np.int8)]
        want = list(reference(model, feeds, tmp_path).values())[0]
        got = run_bundle(tmp_path / "banded", feeds)[meta["outputs"][0]["name"]]
        assert np.array_equal(got, want), k


@pytest.mark.full
def test_a_channels_first_input_transposed_in_place_identical_under_sanitizers(tmp_path, monkeypatch):
    """Issue 67: the NCHW input's TRANSPOSE written over the input itself (aotc_transpose2d_in_place, each cycle
    of the permutation from its leader), the run in row bands then from the first conv, reading an NHWC image
    whose rows free a whole row each: the written model's least arena falls from 6,048 B (the run from the
    TRANSPOSE, the least without it) to 5,280 B, and at 5,408 B (refused without it) the host bundle under ASan
    and UBSan gives every output element of LiteRT's reference kernels on three inputs."""
    from modelcheck import aotc, build_bundle, run_bundle
    from tflite_reference import reference

    model = _nchw_conv_model(tmp_path / "nchw.tflite")
    meta = build_bundle(model, tmp_path / "in_place", "--ram-budget", "5408", sanitize=True)
    assert meta["memory"]["arena_bytes"] <= 5408
    bands = meta["memory"]["ram_budget"]["traded"]["bands"]
    assert bands["runs"][0]["layers"][0] == "CONV_2D_1" and bands["transposed_in_place"] == ["TRANSPOSE_0_in_place"]
    code = next((tmp_path / "in_place" / "bundle" / "src").glob("nchw.c")).read_text()
    assert "aotc_transpose2d_in_place(" in code and "aotc_transpose2d(" not in code
    rng = np.random.default_rng(11)
    for k in range(3):
        feeds = [rng.integers(-128, 128, (1, 3, 40, 40)).astype(np.int8)]
        want = list(reference(model, feeds, tmp_path).values())[0]
        got = run_bundle(tmp_path / "in_place", feeds)[meta["outputs"][0]["name"]]
        assert np.array_equal(got, want), k
    least = aotc(model, "-o", tmp_path / "least", "--no-configure", "--ram-budget", "1", check=False)
    assert "the least arena aotc reaches is 5,280 B" in least.stderr, least.stderr
    _no_transpose_in_place(monkeypatch)
    before = aotc(model, "-o", tmp_path / "before", "--no-configure", "--ram-budget", "5408", check=False)
    # (6,048 B before the runs a row a call and the shared layout of issue 67's last round, 5,808 B before a carried
    # line buffer's head rows were shared: tflite_bands._head)
    assert before.returncode != 0 and "the least arena aotc reaches is 5,648 B" in before.stderr, before.stderr


@pytest.mark.full
def test_an_expansion_and_its_stride_2_depthwise_go_a_group_of_channels_at_a_time(tmp_path, monkeypatch):
    """Issue 67: the run from the TRANSPOSE through a 1 x 1 expansion (8 -> 48) and a stride-2 depthwise conv holds
    3 rows of the 32 x 32 x 48 expansion (4,608 B) where bands alone reach their least (19,776 B on the host);
    taken 16 channels at a time (aot/kernels/tflite_bands.py Group: the halo row recomputed), 3 rows of 16 channels
    (1,536 B) and a staging block: 17,500 B is met, and the host bundle under ASan and UBSan gives every output
    element of LiteRT's reference kernels on three inputs. (The TRANSPOSE written over its input, which the host
    takes where it may, turned off: the grouped run from the banded TRANSPOSE is what this tests; the M4 and M55
    test below takes both.)"""
    from modelcheck import build_bundle, run_bundle
    from tflite_reference import reference

    _no_transpose_in_place(monkeypatch)

    layers = (("CONV_2D", 3, 2, 8, 3), ("CONV_2D", 1, 1, 48, 3), ("DEPTHWISE_CONV_2D", 3, 2, 48, 3),
              ("CONV_2D", 1, 1, 8, 0))
    model = _nchw_conv_model(tmp_path / "expand.tflite", layers, 64)
    meta = build_bundle(model, tmp_path / "grouped", "--ram-budget", "17500", sanitize=True)
    assert meta["memory"]["arena_bytes"] <= 17500
    run = meta["memory"]["ram_budget"]["traded"]["bands"]["runs"][0]
    assert run["node"].endswith("_grouped") and run["staging_bytes"] > 0, run
    assert run["layers"] == ["TRANSPOSE_0", "CONV_2D_1", "CONV_2D_2", "DEPTHWISE_CONV_2D_3", "CONV_2D_4"], run
    rng = np.random.default_rng(11)
    for k in range(3):
        feeds = [rng.integers(-128, 128, (1, 3, 64, 64)).astype(np.int8)]
        want = list(reference(model, feeds, tmp_path).values())[0]
        got = run_bundle(tmp_path / "grouped", feeds)[meta["outputs"][0]["name"]]
        assert np.array_equal(got, want), k


@pytest.mark.full
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_a_grouped_pair_on_the_m4_and_m55(tmp_path, board, monkeypatch):
    """The grouped pair above on the M4 (the DSP paths, each group's kernel and scratch its own) and the M55
    (Helium's CONV_2D and depthwise) under qemu: 18,000 B, under the least without groups (20,432 B on both),
    gives every output element of LiteRT's reference kernels. (The runs a row a call and the shared layout, with
    which the run meets 18,000 B without groups, turned off: the groups are what this tests.)"""
    require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    from modelcheck import build_bundle, run_bundle
    from tflite_reference import reference

    _without_fine_bands(monkeypatch)

    layers = (("CONV_2D", 3, 2, 8, 3), ("CONV_2D", 1, 1, 48, 3), ("DEPTHWISE_CONV_2D", 3, 2, 48, 3),
              ("CONV_2D", 1, 1, 8, 0))
    model = _nchw_conv_model(tmp_path / "expand.tflite", layers, 64)
    meta = build_bundle(model, tmp_path / "grouped", "--ram-budget", "18000", target=board)
    assert meta["memory"]["arena_bytes"] <= 18000
    assert meta["memory"]["ram_budget"]["traded"]["bands"]["runs"][0]["node"].endswith("_grouped")
    rng = np.random.default_rng(13)
    for k in range(2):
        feeds = [rng.integers(-128, 128, (1, 3, 64, 64)).astype(np.int8)]
        want = list(reference(model, feeds, tmp_path).values())[0]
        got = run_bundle(tmp_path / "grouped", feeds)[meta["outputs"][0]["name"]]
        assert np.array_equal(got, want), k


MBV2_LAYERS = (("CONV_2D", 3, 2, 16, 3), ("DEPTHWISE_CONV_2D", 3, 1, 16, 3), ("CONV_2D", 1, 1, 8, 0),
               ("CONV_2D", 1, 1, 48, 3), ("DEPTHWISE_CONV_2D", 3, 2, 48, 3), ("CONV_2D", 1, 1, 8, 0))


def _without_fine_bands(monkeypatch) -> None:
    """The run's fit as before issue 67's last rounds: schedule's bands only, groups of 16 channels, the kernel
    scratch after the line buffers, the first form that fits (not the least estimate, no per-layer rooms)."""
    import aot.kernels.tflite_bands as tb
    import aot.plan.bands as pb

    monkeypatch.setattr(tb, "schedule_fine", lambda layers, rows: None)
    monkeypatch.setattr(tb, "_SCHEDULES", {})
    monkeypatch.setattr(pb, "SMALL_GROUP", True)
    monkeypatch.setattr(pb, "SMALLER_GROUPS", ())
    monkeypatch.setattr(tb, "_layout", lambda geometry, groups, sched, buffers, staging, scratch, lines_first=False: (
        {}, 1 << 40))
    monkeypatch.setattr(tb, "_counted", lambda choice: False)  # the first fit, no per-layer rooms, as then


@pytest.mark.full
def test_a_mobilenet_v2_stage_takes_a_row_a_call_under_sanitizers(tmp_path, monkeypatch):
    """Issue 67: MobileNetV2's first stage written small (NCHW input, its TRANSPOSE in place, stem 3 x 3 stride 2,
    depthwise 3 x 3, projection, expansion 8 -> 48 and its stride-2 depthwise grouped). The layers before the last
    a row a call (tflite_bands.schedule_fine: the stem's output holds 3 rows, not 4, the depthwise's 1, not 2) and
    the node's scratch laid out with bytes never live at once shared (tflite_bands._layout: the depthwise's output
    row, the grouped expansion's rows, the staging block, each layer's kernel scratch): at 16,600 B (the least with
    the layout one block after another 16,896 B, before all three 18,432 B) the host bundle under ASan and UBSan
    gives every output element of LiteRT's reference kernels on three inputs. Where the plan is still over, the
    grouped pair fused again in groups of 8, then 4 channels (bands._smaller_groups): the least falls to 15,104 B,
    in groups of 8 since _layout also places from the top down (mv2172; in groups of 4 before, 15,488 B at 8)."""
    from modelcheck import aotc, build_bundle, run_bundle
    from tflite_reference import reference

    model = _nchw_conv_model(tmp_path / "mbv2.tflite", MBV2_LAYERS, 64)
    meta = build_bundle(model, tmp_path / "fine", "--ram-budget", "16600", sanitize=True)
    assert meta["memory"]["arena_bytes"] <= 16600
    run = meta["memory"]["ram_budget"]["traded"]["bands"]["runs"][0]
    assert run["row_a_call"] and run["shared_layout"] and run["line_buffer_rows"][:2] == [3, 1], run
    rng = np.random.default_rng(17)
    for k in range(3):
        feeds = [rng.integers(-128, 128, (1, 3, 64, 64)).astype(np.int8)]
        want = list(reference(model, feeds, tmp_path).values())[0]
        got = run_bundle(tmp_path / "fine", feeds)[meta["outputs"][0]["name"]]
        assert np.array_equal(got, want), k
    least = aotc(model, "-o", tmp_path / "least", "--no-configure", "--ram-budget", "1", check=False)
    assert "the least arena aotc reaches is 15,104 B" in least.stderr and "_grouped8" in least.stderr, least.stderr
    _without_fine_bands(monkeypatch)
    before = aotc(model, "-o", tmp_path / "before", "--no-configure", "--ram-budget", "16600", check=False)
    assert before.returncode != 0 and "the least arena aotc reaches is 18,432 B" in before.stderr, before.stderr


@pytest.mark.full
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_a_mobilenet_v2_stage_a_row_a_call_on_the_m4_and_m55(tmp_path, board):
    """The stage above on the M4 (the DSP paths; the other layers' scratch in the grouped expansion's line buffer)
    and the M55 (Helium's) under qemu: 17,400 B, under the least before issue 67's last round (19,632 B on the M4)
    and the least with the line buffers one after another (17,552 B), gives every output element of LiteRT's
    reference kernels."""
    require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    from modelcheck import build_bundle, run_bundle
    from tflite_reference import reference

    model = _nchw_conv_model(tmp_path / "mbv2.tflite", MBV2_LAYERS, 64)
    meta = build_bundle(model, tmp_path / "fine", "--ram-budget", "17400", target=board)
    assert meta["memory"]["arena_bytes"] <= 17400
    run = meta["memory"]["ram_budget"]["traded"]["bands"]["runs"][0]
    assert run["row_a_call"] and run["shared_layout"], run
    rng = np.random.default_rng(19)
    for k in range(2):
        feeds = [rng.integers(-128, 128, (1, 3, 64, 64)).astype(np.int8)]
        want = list(reference(model, feeds, tmp_path).values())[0]
        got = run_bundle(tmp_path / "fine", feeds)[meta["outputs"][0]["name"]]
        assert np.array_equal(got, want), k


# MBV2_LAYERS with MobileNetV2's expansion ratio (8 -> 96): the stride-2 depthwise's output is more than the input,
# so the run goes on through the projection, whose output (8 channels) grows slower than the input is read
KEEP_LAYERS = (("CONV_2D", 3, 2, 16, 3), ("DEPTHWISE_CONV_2D", 3, 1, 16, 3), ("CONV_2D", 1, 1, 8, 0),
               ("CONV_2D", 1, 1, 96, 3), ("DEPTHWISE_CONV_2D", 3, 2, 96, 3), ("CONV_2D", 1, 1, 8, 0))


@pytest.mark.full
@pytest.mark.parametrize("board", ["host", "mps2-an386", "mps3-an547"])
def test_a_grouped_expansion_keeps_its_rows_in_the_input_read(tmp_path, board):
    """Issue 67: a grouped pair's expansion computes again each band the rows its stride-2 depthwise read the band
    before (its line buffer holds one group). Where the run's output grows slower than its input is read, the bytes
    between them hold each group's last row from one band to the next (tflite_bands.keep_rows), and the expansion
    computes only the rows it did not keep: at 17,000 B (the least arenas: 16,016 B on the host, 16,800 B on the M4,
    16,672 B on the M55), 11 of the 16 bands that call the pair start from kept rows, and the bundle (on the host
    under ASan and UBSan; on the M4's DSP paths and the M55's Helium ones under qemu) gives every output element of
    LiteRT's reference kernels."""
    if board != "host":
        require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    from modelcheck import build_bundle, run_bundle
    from tflite_reference import reference

    model = _nchw_conv_model(tmp_path / "keep.tflite", KEEP_LAYERS, 64)
    extra = {"sanitize": True} if board == "host" else {"target": board}
    meta = build_bundle(model, tmp_path / "keep", "--ram-budget", "17000", **extra)
    assert meta["memory"]["arena_bytes"] <= 17000
    run = meta["memory"]["ram_budget"]["traded"]["bands"]["runs"][0]
    assert "_grouped" in run["node"] and run["layers"][-1] == "CONV_2D_6", run
    code = (tmp_path / "keep" / "bundle" / "src" / "keep.c").read_text()
    assert re.search(r"11 of its bands start CONV_2D_4's group rows from the 1 row\(s\) a group", code), code[:2000]
    rng = np.random.default_rng(23)
    for k in range(3 if board == "host" else 2):
        feeds = [rng.integers(-128, 128, (1, 3, 64, 64)).astype(np.int8)]
        want = list(reference(model, feeds, tmp_path).values())[0]
        got = run_bundle(tmp_path / "keep", feeds)[meta["outputs"][0]["name"]]
        assert np.array_equal(got, want), k


def test_a_depthwise_multiplier_layer_takes_the_conv_form_where_its_own_path_has_no_room():
    """TFLM micro_speech's depthwise layer (one input channel, depth multiplier 8) runs tfl_depthwise_s8_mult on
    the M4, whose least scratch (3,376 B) is more than the conv's patches need: at 6,000 B it would get none and
    run the plain loop (11.67 M est. cycles against 1.18 M in the conv form, measured), so the layer takes the
    conv form there; with room for the path (8,000 B) and without a budget it stays depthwise; below the conv
    form's least (4,600 B) the plain loop is what fits."""
    micro = MODELS.parent / "tflm" / "micro_speech_quantized.tflite"

    def calls(budget: int | None) -> set[str]:
        b = compile_file(micro, Options(name="micro", target="mps2-an386", ram_budget=budget))
        assert budget is None or b.metadata["memory"]["arena_bytes"] <= budget
        return set(re.findall(r"\b(aotc_tfl_(?:conv|depthwise)_s8)\(", b.files["src/micro.c"]))

    assert calls(None) == calls(8000) == calls(4600) == {"aotc_tfl_depthwise_s8"}
    assert calls(6000) == {"aotc_tfl_conv_s8"}
