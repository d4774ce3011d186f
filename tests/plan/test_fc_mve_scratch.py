"""On the M55 the int8 FULLY_CONNECTED layers Helium's path takes (tfl_fc_s8_mve: 4 outputs or more) are planned
without scratch (issue 67, the M55's RAM curve: the DSP path's widened row, which that path never reads, made the
MLPerf Tiny autoencoder's arena 3,584 B where 768 B ran as fast); the M4's plans, the layers of fewer outputs and the
flash levels that compile Helium's FC path out (mve_fc False) keep the DSP path's scratch."""

from __future__ import annotations

from pathlib import Path

from aot.compiler import Options, compile_file, partition_model, select_and_plan
from aot.frontend.onnx.load import load_model
from aot.passes import HOST_PIPELINE, simplify

ROOT = Path(__file__).resolve().parents[2]
AUTOENCODER = ROOT / "bench" / "models" / "keras" / "ad_autoencoder_int8.tflite"
VWW = ROOT / "bench" / "models" / "keras" / "vww_mobilenet_int8.tflite"


def _fc_scratch(model: Path, target: str, **kw: bool) -> dict[str, int]:
    """Each FULLY_CONNECTED layer's scratch in the plan without a budget."""
    g = simplify(partition_model(load_model(model), Options(target=target), keep_onnx=False).graph, HOST_PIPELINE)
    _, plan = select_and_plan(g, target, {}, **kw)
    return {n.name: plan.choices[n.name].scratch for n in g.nodes if n.op == "TflFullyConnected"}


def test_heliums_fc_layers_take_no_scratch_on_the_m55_only():
    m55, m4 = _fc_scratch(AUTOENCODER, "mps3-an547"), _fc_scratch(AUTOENCODER, "mps2-an386")
    assert m55 and set(m55.values()) == {0}, m55
    assert m4.keys() == m55.keys() and all(v > 0 for v in m4.values()), m4
    assert _fc_scratch(AUTOENCODER, "mps3-an547", mve_fc=False) == m4, "Helium's FC path compiled out: the DSP path's"


def test_a_layer_of_fewer_than_4_outputs_keeps_the_dsp_paths_scratch():
    """VWW MobileNet's classifier has 2 outputs: tfl_fc_s8_mve declines it, the DSP path widens x into scratch."""
    assert _fc_scratch(VWW, "mps3-an547") == _fc_scratch(VWW, "mps2-an386")
    assert all(v > 0 for v in _fc_scratch(VWW, "mps3-an547").values())


def test_the_m55_bundle_passes_no_scratch_and_its_arena_shrinks():
    bundle = compile_file(AUTOENCODER, Options(name="m", target="mps3-an547", build_type="Release"))
    c = bundle.files["src/model_m.c"]
    calls = [line for line in c.splitlines() if "aotc_tfl_fc_s8(&p_" in line]
    assert len(calls) == 10 and all(line.rstrip().endswith("NULL);") for line in calls)
    assert bundle.metadata["memory"]["arena_bytes"] == 768  # (3,584 B before: the M4's, which it still is)
    m4 = compile_file(AUTOENCODER, Options(name="m", target="mps2-an386", build_type="Release"))
    assert m4.metadata["memory"]["arena_bytes"] == 3584
