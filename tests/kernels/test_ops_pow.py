"""Pow by a constant exponent (issue 64): an integer or half an integer up to 8 is computed in a fused loop by
multiplies, a square root and a division (aot/kernels/fused.py, pow_expression), never by powf per element.
Every kind of exponent against onnxruntime on negative bases, zeros of both signs, infinities and NaN, with
its NaNs, infinities and signed zeros exactly; the C has no powf for them, and keeps it for the others."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from opcheck import model_case, reference, shared_build

from aot.compiler import Options, compile_model

# name -> exponent: squares and cubes (onnxruntime's own x * x, x * x * x), other integers, 0 and 1, their
# negatives (a division), halves (a square root)
EXPONENTS = {"square": 2.0, "cube": 3.0, "fourth": 4.0, "seventh": 7.0, "eighth": 8.0, "zero": 0.0, "one": 1.0,
             "minus_one": -1.0, "minus_two": -2.0, "minus_three": -3.0, "minus_eight": -8.0, "half": 0.5,
             "one_and_half": 1.5, "two_and_half": 2.5, "minus_half": -0.5, "minus_one_and_half": -1.5,
             "seven_and_half": 7.5}
# kept on powf: not a multiple of 1/2, or beyond 8
LIBM_EXPONENTS = {"third": 1.0 / 3.0, "nine": 9.0, "eight_and_half": 8.5, "minus_nine_and_half": -9.5}

_EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1e-20, -1e-20, 1e20,
          -1e20, 1e-3, 7.5, -7.5, 1e5, 3e-39]
X = np.concatenate([np.array(_EDGES, np.float32),
                    np.random.default_rng(64).standard_normal(65).astype(np.float32) * 4]).reshape(3, 1, 29)


def _pow_model(case_id: str, exponents: dict[str, float]):
    """x -> one Pow per exponent (a scalar initializer, as tf2onnx writes it; "cube" of shape [1])."""
    nodes, inits, outs = [], [], []
    for name, e in exponents.items():
        value = np.array([e] if name == "cube" else e, np.float32)
        inits.append(numpy_helper.from_array(value, f"e_{name}"))
        nodes.append(helper.make_node("Pow", ["x", f"e_{name}"], [f"y_{name}"], name=f"pow_{name}"))
        outs.append(helper.make_tensor_value_info(f"y_{name}", TensorProto.FLOAT, list(X.shape)))
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
                              outs, inits)
    return model_case(case_id, graph, {"x": X})


def _gelu_tanh_model():
    """GELU's tanh form as tf2onnx writes tf.nn.gelu(approximate=True): Pow(x, 3.0) inside the tree."""
    c = {"k": 0.044715, "s": 0.7978845608028654, "one": 1.0, "half": 0.5, "three": 3.0}
    nodes = [helper.make_node("Pow", ["x", "three"], ["cube"]), helper.make_node("Mul", ["k", "cube"], ["kc"]),
             helper.make_node("Add", ["x", "kc"], ["inner"]), helper.make_node("Mul", ["s", "inner"], ["si"]),
             helper.make_node("Tanh", ["si"], ["t"]), helper.make_node("Add", ["one", "t"], ["onep"]),
             helper.make_node("Mul", ["half", "x"], ["hx"]), helper.make_node("Mul", ["hx", "onep"], ["y"])]
    graph = helper.make_graph(nodes, "gelu_tanh_pow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 33])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 33])],
                              [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in c.items()])
    return model_case("gelu_tanh_pow", graph,
                      {"x": np.linspace(-9, 9, 132, dtype=np.float32).reshape(4, 33)})


CASES = [_pow_model("pow_by_multiplies", EXPONENTS), _pow_model("pow_by_libm", LIBM_EXPONENTS), _gelu_tanh_model()]
BY_ID = {c.id: c for c in CASES}


@pytest.fixture(scope="module")
def results():
    return shared_build(CASES)


def _assert_pow_close(ours: np.ndarray, ref: np.ndarray, what: str) -> None:
    """NaNs, infinities and the sign of zeros exactly; finite values within 1e-6 relative (a few ulp: x^8 by
    squaring rounds three times), or 1e-37 absolute where they are subnormal."""
    assert np.array_equal(np.isnan(ours), np.isnan(ref)), f"{what}: NaNs differ\n{ours}\n{ref}"
    inf = np.isinf(ref)
    assert np.array_equal(ours[inf], ref[inf]) and not np.isinf(ours[~inf]).any(), f"{what}: infinities differ"
    zero = ref == 0
    assert np.array_equal(np.signbit(ours[zero]), np.signbit(ref[zero])), f"{what}: signs of zeros differ"
    finite = np.isfinite(ref)
    np.testing.assert_allclose(ours[finite], ref[finite], rtol=1e-6, atol=1e-37, err_msg=what)


@pytest.mark.parametrize("case", ["pow_by_multiplies", "pow_by_libm"])
def test_pow_by_a_constant_matches_onnxruntime(results, case):
    """Each exponent's output against onnxruntime's (its Pow: x * x, x * x * x, else powf)."""
    ours, refs = results.run(case), reference(BY_ID[case])
    names = list(EXPONENTS if case == "pow_by_multiplies" else LIBM_EXPONENTS)
    for name, o, r in zip(names, ours, refs, strict=True):
        _assert_pow_close(o, r, f"{case}: Pow(x, {name})")


def test_squares_and_cubes_are_onnxruntimes_bits(results):
    ours, refs = results.run("pow_by_multiplies"), reference(BY_ID["pow_by_multiplies"])
    for k, name in enumerate(EXPONENTS):
        if name in ("square", "cube"):
            assert np.array_equal(ours[k].view(np.uint32), refs[k].view(np.uint32)), name


def test_gelu_with_pow_matches_onnxruntime(results):
    results.check("gelu_tanh_pow")


def _c(case_id: str) -> dict[str, str]:
    bundle = compile_model(BY_ID[case_id].model, Options(name=case_id))
    return {k: v for k, v in bundle.files.items() if isinstance(v, str)}


def test_no_powf_for_integer_and_half_integer_exponents():
    """Each Pow is a loop of its own in the model's C, by multiplies and sqrtf; no file of the bundle calls
    powf or the Pow kernel (elementwise_math.c is not even shipped)."""
    files = _c("pow_by_multiplies")
    c = files["src/pow_by_multiplies.c"]
    assert c.count("for (size_t aotc_i = 0;") == len(EXPONENTS), c
    # (runtime/aotc_symbols.h, the renaming table, names every runtime symbol)
    assert not [k for k, v in files.items() if ("powf(" in v or "aotc_pow_f32" in v) and k != "runtime/aotc_symbols.h"]
    assert "aotc_pow_half_f32(" in c


def test_gelu_is_one_kernel_without_powf():
    """tf2onnx's tanh GELU with its x^3 as Pow(x, 3): FuseNorm takes the whole chain as one Gelu (tanh form),
    whose kernel computes the cube by multiplies: no loop of the chain's own and nothing calls powf."""
    c = _c("gelu_tanh_pow")["src/gelu_tanh_pow.c"]
    assert "aotc_gelu_tanh_f32(" in c and "for (size_t aotc_i" not in c, c
    assert "aotc_pow_f32" not in c and "powf(" not in c, c


def test_other_exponents_keep_powf():
    c = _c("pow_by_libm")["src/pow_by_libm.c"]
    assert c.count("aotc_pow_f32(") == len(LIBM_EXPONENTS) and "for (size_t aotc_i" not in c, c
