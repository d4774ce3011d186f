"""The replay gate (tests/replay.py): every bundle of its cases, file by file, as tests/replay.json has it.
A refactoring move must leave it unchanged; a change that must change output regenerates the manifest in
the same commit (python tests/replay.py --update) and says why.

Also what makes the gate possible: --host-isa, which names the ISA level a host bundle's kernels are
chosen for instead of taking the compiling machine's from /proc/cpuinfo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib

import numpy as np
import onnx
import pytest
import replay
from onnx import TensorProto, helper, numpy_helper

from aot import cli
from aot.compiler import Options, compile_model
from aot.errors import AotcError


def test_bundles_match_the_replay_manifest():
    """Every case but the dnnl ones (next test), which need oneDNN and a given CPU level; the fast tier's
    one case in twice AOTC_TEST_SAMPLE (eight: a fixed choice by name; one in four, 109 cases, took 14 s of the
    fast tier), the full tier's every one."""
    every = [c for c in replay.cases() if not replay.is_dnnl(c)]
    share = 2 * int(os.environ.get("AOTC_TEST_SAMPLE", "1"))
    selected = [c for c in every if share <= 2 or zlib.crc32(c.id.encode()) % share == 0]
    got = replay.compile_cases(selected)
    want = replay.from_manifest(replay.load())
    if diffs := replay.differences({c.id: want[c.id] for c in selected if c.id in want}, got):
        pytest.fail(replay.report(diffs))
    assert set(want) - {c.id for c in replay.cases() if replay.is_dnnl(c)} == {c.id for c in every}, \
        "cases differ: --update"


def test_dnnl_bundles_match_the_replay_manifest():
    manifest = replay.load()
    machine, why = replay.dnnl_machine()
    if machine != manifest["dnnl"]:
        pytest.skip(why or f"the manifest's dnnl cases were made with {manifest['dnnl']}, this machine has {machine}")
    selected = [c for c in replay.cases() if replay.is_dnnl(c)]
    got = replay.compile_in_child(selected, replay.DNNL_ENV)
    want = replay.from_manifest(manifest)
    if diffs := replay.differences({c.id: want[c.id] for c in selected if c.id in want}, got):
        pytest.fail(replay.report(diffs))


@pytest.mark.full
def test_replay_is_the_same_under_other_hash_seeds():
    """Set and dict order must not reach a bundle: a sample of cases (every target, a vendor, int8 on the
    boards), compiled in processes with two fixed hash seeds, is as the manifest has it."""
    ids = ["zoo:inception host-avx512f", "zoo:densenet host-generic", "zoo:squeezenet mps2-an386",
           "zoo:mobilenetv2 mps3-an547 --vendor cref", "tests/models/tflite/person_int8.tflite mps2-an386",
           "tests/models/tflite/residual_16x8.tflite mps3-an547", "tests/models/vit_tiny.onnx host-avx512f",
           "zoo:mobilenetv2 mps2-an386 --vendor accel_sim"]
    sample = [c for c in replay.cases() if c.id in ids]
    assert len(sample) == len(ids)
    want = replay.from_manifest(replay.load())
    for seed in ("1", "4242"):
        got = replay.compile_in_child(sample, {"PYTHONHASHSEED": seed})
        assert not (diffs := replay.differences({i: want[i] for i in ids}, got)), replay.report(diffs)


def test_manifest_is_as_update_writes_it():
    """The committed manifest is in the form --update writes (not edited by hand), and reading it back
    gives what was written."""
    text = replay.MANIFEST.read_text()
    manifest = json.loads(text)
    assert replay.dumps(replay.to_manifest(replay.from_manifest(manifest), manifest["dnnl"])) == text
    assert set(replay.from_manifest(manifest)) == {c.id for c in replay.cases()}, "cases differ: --update"


def test_a_changed_file_is_named_with_its_case_and_the_update_command():
    want = {"zoo:lenet mps3-an547": {"src/lenet.c": "a", "plan.txt": "b"}, "zoo:mlp host-generic": {"x": "c"}}
    got = {"zoo:lenet mps3-an547": {"src/lenet.c": "A", "plan.txt": "b", "new.h": "d"}}
    diffs = replay.differences(want, got)
    assert diffs == ["zoo:lenet mps3-an547: new.h is new", "zoo:lenet mps3-an547: src/lenet.c changed",
                     "zoo:mlp host-generic: case not compiled (in the manifest, no longer in tests/replay.py's cases)"]
    text = replay.report(diffs)
    assert "python tests/replay.py --update" in text
    assert ("python examples/zoo.py lenet -o lenet.onnx && aotc lenet.onnx -o out --no-configure --target "
            "mps3-an547") in text
    assert replay.differences(want, want) == []


def test_shared_files_are_hashed_once_and_expand_back():
    hashes = {"a host": {"runtime/k.c": "1", "src/a.c": "2"}, "b host": {"runtime/k.c": "1", "src/a.c": "3"},
              "c host": {"runtime/only.c": "4"}}
    m = replay.to_manifest(hashes, None)
    assert m["shared"] == {"runtime/k.c": "1"}  # src/a.c differs between cases, only.c is in one
    assert m["cases"]["a host"] == {"files": {"src/a.c": "2"}, "shared": ["runtime/k.c"]}
    assert replay.from_manifest(json.loads(replay.dumps(m))) == hashes


# --- --host-isa ------------------------------------------------------------------------------------

def conv3_model() -> onnx.ModelProto:
    """A 3 x 3 conv on 16 channels, which takes the AVX-512F path (igx3) only where that is assumed."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((16, 16, 3, 3)).astype(np.float32), "w")
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                          "conv3", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


# a machine's /proc/cpuinfo flags -> the level it detects
MACHINES = {"avx512f avx512_vnni": "avx512vnni", "avx512f": "avx512f", "avx2 fma": "generic",
            "avx2 avx512_vnni": "generic"}  # (AVX-VNNI's 256-bit form without AVX-512F is no AVX-512 level)


@pytest.mark.parametrize("flags", list(MACHINES))
def test_a_named_host_isa_gives_the_same_bundle_on_any_machine(monkeypatch, flags):
    monkeypatch.setattr("aot.targets.host_cpu_flags", lambda: frozenset(flags.split()))
    model = conv3_model()
    for isa, path_taken in (("avx512vnni", True), ("avx512f", True), ("generic", False)):
        b = compile_model(model, Options(name="conv3", host_isa=isa))
        assert ("aotc_conv_igx3_f32(" in b.files["src/conv3.c"]) == path_taken, isa
        assert json.loads(b.files["metadata.json"])["host_isa"] == isa
        assert ("AOTC_BUILD_HAS_AVX512VNNI" in b.files["CMakeLists.txt"]) == (isa == "avx512vnni")
    # unnamed, the level is this machine's, and recorded
    b = compile_model(model, Options(name="conv3"))
    assert json.loads(b.files["metadata.json"])["host_isa"] == MACHINES[flags]
    assert ("aotc_conv_igx3_f32(" in b.files["src/conv3.c"]) == (MACHINES[flags] != "generic")


def test_host_isa_is_for_the_host_only_and_a_known_level(tmp_path):
    onnx.save(conv3_model(), tmp_path / "m.onnx")
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"),
                        "--target", "mps2-an386", "--host-isa", "generic", "--no-configure"],
                       capture_output=True, text=True)
    assert r.returncode == cli.EXIT_BAD_INPUT == 2
    assert r.stderr.strip() == ("aotc: error: --host-isa generic: target mps2-an386 is not the host (the level is "
                                "for --target host; a cross target's CPU is the target's own)")
    assert not (tmp_path / "out").exists()
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"),
                        "--host-isa", "avx2"], capture_output=True, text=True)
    assert r.returncode == 2 and "invalid choice: 'avx2'" in r.stderr
    with pytest.raises(AotcError, match="unknown host ISA level 'avx2' \\(known: avx512vnni, avx512f, generic\\)"):
        compile_model(conv3_model(), Options(host_isa="avx2"))
    # a board's bundle records no host level
    b = compile_model(conv3_model(), Options(name="conv3", target="mps3-an547"))
    assert "host_isa" not in json.loads(b.files["metadata.json"])


@pytest.mark.full
def test_avx512vnni_level_from_the_cli_and_its_build_without_vnni_warns(tmp_path):
    """`--host-isa avx512vnni` is recorded in metadata.json; the bundle's CMake build says so where its flags
    lack VNNI (its QDQ convs' qconv_rows then gathers its weights, slower: Skylake-X), and not where they have it.
    A -march=skylake-avx512 build only configures here (the check needs the compiler, not the CPU)."""
    onnx.save(conv3_model(), tmp_path / "m.onnx")
    r = subprocess.run([sys.executable, "-m", "aot.cli", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"),
                        "--host-isa", "avx512vnni", "--no-configure"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    bundle = tmp_path / "out" / "bundle"
    assert json.loads((bundle / "metadata.json").read_text())["host_isa"] == "avx512vnni"
    for march, warns in (("skylake-avx512", True), ("icelake-server", False)):
        r = subprocess.run(["cmake", "-S", str(bundle), "-B", str(tmp_path / march), "-DAOTC_NATIVE=OFF",
                            f"-DCMAKE_C_FLAGS=-march={march}"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        said = " ".join(r.stderr.split())  # (CMake wraps the message)
        assert ("its kernels were chosen for AVX-512 VNNI (--host-isa avx512vnni)" in said) == warns, (march, said)
