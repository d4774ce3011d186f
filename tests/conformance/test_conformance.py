"""The ONNX node-test suite: opt-in (`pytest --tier all`), since it compiles ~1000 models.

A case may be refused with a clear message; it may never be answered wrongly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "run_node_tests.py"


@pytest.mark.slow
def test_onnx_node_tests_are_passed_or_refused():
    r = subprocess.run([sys.executable, str(SCRIPT), "--by-op"], capture_output=True, text=True, timeout=3000)
    print(r.stdout)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = r.stdout.splitlines()[0]
    assert " 0 failed" in summary, r.stdout


@pytest.mark.full
@pytest.mark.parametrize("name", ["test_bitcast", "test_dft_", "test_castlike_FLOAT_to",
                                  "test_compress|test_det_|test_maxunpool|test_col2im|test_tensorscatter|_blocked|"
                                  "integer"])
def test_more_slices_of_the_node_tests(name):
    """Views across types, a run-time axis read by the kernel (DFT-20), the float16/bfloat16/float8 casts; issue
    51's ops (Compress, Det, MaxUnpool, Col2Im, TensorScatter, blocked Q/DQ, Conv/MatMulInteger)."""
    r = subprocess.run([sys.executable, str(SCRIPT), "--filter", name], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert " 0 failed" in r.stdout.splitlines()[0], r.stdout


@pytest.mark.full
def test_run_time_parameters_the_declared_shapes_pin():
    """Issue 51: Slice's starts/ends/axes/steps, Pad's pads and TopK's k given as model inputs, with the output
    shapes declared: compiled (the kernels read the values), every case passed but TopK's uint64 one."""
    cases = "^test_(slice|top_k|(constant|edge|reflect|wrap)_pad)"
    r = subprocess.run([sys.executable, str(SCRIPT), "--filter", cases], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = r.stdout.splitlines()[0]
    passed = int(summary.split(" passed")[0].split()[-1])
    assert " 0 failed" in summary and passed >= 20, r.stdout


def test_a_small_slice_of_the_node_tests(tmp_path):
    """A fast sample in the normal suite: Pow cases (incl. integer exponents) pass or are refused, never wrong."""
    r = subprocess.run([sys.executable, str(SCRIPT), "--filter", "test_pow"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert " 0 failed" in r.stdout.splitlines()[0], r.stdout


@pytest.mark.full
def test_a_slice_of_the_node_tests_through_aotc_run():
    """Issue 48: node tests the shared-library run passed failed through `aotc run` on their data saved
    with np.savez (a 0-d output, bfloat16 and float8_e5m2 inputs, float8 and int4 outputs, empty inputs
    the bundle made constants); each now goes the user's way and passes."""
    cases = ["test_size", "test_bitcast_scalar_float32_to_int32", "test_attention_4d_causal_bf16",
             "test_cast_FLOAT8E5M2_to_FLOAT", "test_cast_FLOAT_to_FLOAT8E4M3FN", "test_cast_FLOAT_to_INT4",
             "test_castlike_FLOAT_to_BFLOAT16", "test_reduce_sum_empty_axes_input_noop", "test_tril_zero"]
    r = subprocess.run([sys.executable, str(SCRIPT), "--cli", "--filter", f"^({'|'.join(cases)})$"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[0] == f"{len(cases)} cases: {len(cases)} passed, 0 refused, 0 failed", r.stdout


@pytest.mark.full
def test_the_sequence_and_optional_node_tests():
    """Issue 51: sequences of static length and optionals known at compile time pass (the sequence / optional
    inputs and outputs as their tensors, bundle_feeds and regroup); what needs a run-time length is refused."""
    r = subprocess.run([sys.executable, str(SCRIPT), "--filter", "sequence|optional|test_identity_opt"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    passed = int(r.stdout.split(" passed")[0].split()[-1])
    assert " 0 failed" in r.stdout.splitlines()[0] and passed >= 37, r.stdout


@pytest.mark.full
def test_sequences_through_aotc_run():
    """A sequence input and output (x.0, x.1 in the .npz files), an optional one, an absent optional pinned none."""
    cases = ["test_sequence_map_add_2_sequences", "test_optional_get_element_optional_sequence", "test_identity_opt",
             "test_optional_has_element_empty_optional_input"]
    r = subprocess.run([sys.executable, str(SCRIPT), "--cli", "--filter", f"^({'|'.join(cases)})$"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[0] == f"{len(cases)} cases: {len(cases)} passed, 0 refused, 0 failed", r.stdout


@pytest.mark.full
def test_the_groups_emx_passed_and_aotc_refused():
    """Issue 51: the ai.onnx.ml and training models (Binarizer, ArrayFeatureExtractor, TreeEnsemble, Adagrad, Adam,
    Momentum; simple's Gradient), float4e2m1 / float8e8m0 casts and Q/DQ, seeded training Dropout, TfIdfVectorizer,
    training BatchNormalization, Unique without declared shapes, Pow of an integer base by a float exponent and
    uint64 TopK: passed; the two Unique cases along an inner axis and the string LabelEncoders stay refused."""
    cases = ("ai_onnx_ml|adagrad|adam|momentum|test_gradient_of|E2M1|e2m1|e8m0|training_dropout|tfidf|"
             "batchnorm_.*training|test_unique|test_pow_types_int|top_k_uint64")
    r = subprocess.run([sys.executable, str(SCRIPT), "--filter", cases], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    summary = r.stdout.splitlines()[0]
    passed, refused = int(summary.split(" passed")[0].split()[-1]), int(summary.split(" refused")[0].split()[-1])
    assert " 0 failed" in summary and passed >= 58 and refused <= 6, r.stdout
