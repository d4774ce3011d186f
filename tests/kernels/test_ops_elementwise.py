"""Elementwise ops against onnxruntime: unary activations (Gelu with both approximations) and broadcasting
binary ops."""

from __future__ import annotations

import math
import re
import subprocess

import numpy as np
import pytest
from conftest import require_tool
from opcheck import as_float64, node_case, op_case, shared_build

from aot.paths import kernel_file, kernel_include_flags

UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Erf", "Floor", "Ceil", "Softplus", "Reciprocal"]
POSITIVE = ["Log", "Sqrt"]

CASES = [op_case(f"{op.lower()}", op, {"x": (2, 3, 4, 5)}) for op in UNARY]
CASES += [op_case(f"{op.lower()}", op, {"x": (3, 7)}, positive=True) for op in POSITIVE]
CASES += [
    op_case("hardswish", "HardSwish", {"x": np.linspace(-5, 5, 40, dtype=np.float32).reshape(4, 10)}, opset=14),
    op_case("leakyrelu_default", "LeakyRelu", {"x": (4, 6)}),
    op_case("leakyrelu_alpha", "LeakyRelu", {"x": (4, 6)}, attrs={"alpha": 0.3}),
    op_case("elu", "Elu", {"x": (4, 6)}, attrs={"alpha": 0.7}),
    op_case("hardsigmoid", "HardSigmoid", {"x": (4, 6)}, attrs={"alpha": 0.3, "beta": 0.4}),
    op_case("clip_attrs_opset6", "Clip", {"x": (4, 6)}, attrs={"min": -0.5, "max": 0.5}, opset=7),
    op_case("clip_inputs", "Clip", {"x": (4, 6)}, consts={"lo": np.array(0, np.float32),
                                                         "hi": np.array(6, np.float32)}, opset=13),
    op_case("clip_min_only", "Clip", {"x": (4, 6)}, consts={"lo": np.array(-0.1, np.float32)}, opset=12),
    op_case("clip_max_only", "Clip", {"x": (4, 6)}, consts={"hi": np.array(0.2, np.float32)},
            input_order=["x", "", "hi"], opset=13),
    # bounds of shape [1], as converters write them (the spec says scalars; onnxruntime takes them)
    op_case("clip_bounds_of_shape_1", "Clip", {"x": (4, 6)}, consts={"lo": np.array([-0.3], np.float32),
                                                                    "hi": np.array([0.4], np.float32)}, opset=13),
]

# NaN, infinities and signed zeros through the activations, the clamps' edge values too: the result
# must be onnxruntime's (HardSigmoid(NaN) and Celu(NaN) are NaN there, not 1 and 0 as fmaxf/fminf gave)
_edges = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, -3.0, 3.0, -2.5, -1.0, -0.5, 0.5, 1.0, 2.5,
                   -7.0, 7.0, 1e30, -1e30], np.float32).reshape(2, 9)
CASES += [op_case(f"{op.lower()}_{tag}_edges", op, {"x": _edges}, attrs=attrs, opset=opset)
          for op, tag, attrs, opset in [
    ("HardSwish", "default", {}, 14),
    ("HardSigmoid", "default", {}, 13),
    ("HardSigmoid", "attrs", {"alpha": 0.3, "beta": 0.4}, 13),
    ("Celu", "default", {}, 13),
    ("Celu", "alpha", {"alpha": 0.7}, 13),
    ("Relu", "default", {}, 13),
    ("LeakyRelu", "alpha", {"alpha": 0.3}, 13),
    ("Elu", "alpha", {"alpha": 0.7}, 13),
    ("Selu", "default", {}, 13),
    ("ThresholdedRelu", "default", {}, 13),
    ("Shrink", "attrs", {"lambd": 0.5, "bias": 0.1}, 13),
    ("Softsign", "default", {}, 13),
    ("Abs", "default", {}, 13),
    ("Clip", "attrs", {"min": -0.5, "max": 0.5}, 7),
]]

# HardSwish and HardSigmoid give onnxruntime's bits (v / 6 taken as v * (1 / 6), as its kernel does)
_wide_hs = np.linspace(-8, 8, 4001, dtype=np.float32).reshape(1, 4001)
CASES += [op_case("hardswish_exact", "HardSwish", {"x": _wide_hs}, opset=14),
          op_case("hardsigmoid_sixth_exact", "HardSigmoid", {"x": _wide_hs}, attrs={"alpha": 1 / 6, "beta": 0.5})]
for _c in CASES[-2:]:
    _c.atol_scale = 0.0

# Gelu (opset 20): erf and tanh forms, over the range where 1 + erf(x) cancels (x << 0) and saturates (x >> 0)
_wide = np.linspace(-12, 12, 97, dtype=np.float32).reshape(1, 97)
for approximate in ("none", "tanh"):
    for tag, x in (("4d", (2, 3, 4, 5)), ("wide_range", _wide), ("scaled", (3, 64))):
        case = op_case(f"gelu_{approximate}_{tag}", "Gelu", {"x": x}, opset=20, attrs={"approximate": approximate})
        if tag == "scaled":
            case.feeds["x"] = case.feeds["x"] * np.float32(8.0)
        case.relative = True
        CASES.append(case)
CASES += [op_case(f"{op.lower()}_float64", op, {"x": np.linspace(0.1, 30, 24).reshape(4, 6)}, out_dtype="float64")
          for op in ("Exp", "Log", "Sqrt")]
CASES.append(op_case("mish", "Mish", {"x": np.linspace(-25, 25, 60, dtype=np.float32).reshape(3, 20)}, opset=18))
CASES.append(op_case("gelu_default_attr", "Gelu", {"x": (5, 7)}, opset=20))
CASES.append(op_case("gelu_opset28", "Gelu", {"x": (5, 7)}, opset=28, attrs={"approximate": "tanh"}))
CASES[-1].model.ir_version = 10

# float64 (elementwise_f64.c): the activations above in double, error within 1e-12; onnx's reference evaluator
# where onnxruntime's CPU provider has no double kernel of the op (its Erf rounds to float32: Erf and Gelu's
# expected outputs are math.erf's)
_F64_FROM = [f"{op.lower()}" for op in UNARY] + [
    "leakyrelu_alpha", "elu", "hardsigmoid", "clip_inputs", "gelu_none_4d", "gelu_tanh_wide_range", "mish",
    *(c.id for c in CASES if c.id.endswith("_edges") and not c.id.startswith("celu"))]
_F64_FROM += [op.lower() for op in ("Round", "Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh")]
CASES += [op_case(op.lower(), op, {"x": np.linspace(-3.5, 3.5, 30, dtype=np.float32).reshape(5, 6)})
          for op in ("Round", "Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh")]
CASES += [op_case(f"{op.lower()}_float64", op, {"x": np.linspace(lo, hi, 30).reshape(5, 6)}, out_dtype="float64")
          for op, lo, hi in (("Asin", -0.95, 0.95), ("Acos", -0.95, 0.95), ("Atanh", -0.95, 0.95),
                             ("Acosh", 1.0, 9.0))]
CASES[-4:] = [as_float64(c, c.id) for c in CASES[-4:]]
_BY_ID = {c.id: c for c in CASES}
CASES += [as_float64(_BY_ID[i]) for i in _F64_FROM]
_erf = np.vectorize(math.erf, otypes=[np.float64])
for _c in CASES[-len(_F64_FROM):]:
    if _c.id == "erf_f64":
        _c.expected = [_erf(_c.feeds["x"])]
    elif _c.id == "gelu_none_4d_f64":
        _c.expected = [0.5 * _c.feeds["x"] * (1.0 + _erf(_c.feeds["x"] / math.sqrt(2.0)))]
    elif _c.id == "gelu_tanh_wide_range_f64":  # (onnx's evaluator takes the constants in float32)
        _x = _c.feeds["x"]
        _c.expected = [0.5 * _x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (_x + 0.044715 * _x ** 3)))]
CASES += [op_case(f"{op.lower()}_nan_inf_float64", op, {"x": _edges.astype(np.float64)}, attrs=attrs,
                  out_dtype="bool") for op, attrs in (("IsNaN", {}), ("IsInf", {}), ("IsInf", {"detect_negative": 0}))]
CASES[-1].id = "isinf_positive_nan_inf_float64"
CASES.append(op_case("prelu_channel_float64", "PRelu", {"x": np.linspace(-2, 2, 36).reshape(1, 4, 3, 3)},
                     consts={"slope": np.array([0.1, 0.2, 0.3, 0.4]).reshape(4, 1, 1)}, out_dtype="float64",
                     opset=16))
CASES[-1].atol_scale = 1e-12

BROADCASTS = [
    ("same", (2, 3, 4), (2, 3, 4)),
    ("scalar", (2, 3, 4), ()),
    ("scalar_left", (), (2, 3, 4)),
    ("row", (2, 3, 4), (4,)),
    ("channel", (1, 8, 5, 5), (8, 1, 1)),
    ("outer", (3, 1), (1, 4)),
    ("middle", (2, 1, 4), (1, 3, 1)),
    ("rank5", (2, 1, 3, 1, 2), (1, 4, 1, 5, 1)),
]
for op in ["Add", "Sub", "Mul", "Div", "Max", "Min"]:
    for tag, a, b in BROADCASTS:
        CASES.append(op_case(f"{op.lower()}_{tag}", op, {"a": a, "b": b}))
CASES += [
    op_case("pow_const_exponent", "Pow", {"a": (3, 4)}, consts={"b": np.array(2.0, np.float32)}, positive=True),
    op_case("pow_broadcast", "Pow", {"a": (3, 4), "b": (4,)}, positive=True),
    # an integer base by a float exponent: in double, truncated to the base's type (onnxruntime's answer)
    op_case("pow_int32_by_float", "Pow", {"a": np.array([[1, -2, 3], [7, 0, -5]], np.int32),
                                          "b": np.array([4.0, 2.5, 0.5], np.float32)}, out_dtype="int32"),
    op_case("pow_int64_by_double", "Pow", {"a": np.array([2, 3, 9, 10], np.int64),
                                           "b": np.array([10.0, 0.5, 1.5, -1.0], np.float64)}, out_dtype="int64"),
    op_case("prelu_channel", "PRelu", {"x": (1, 4, 3, 3)}, consts={"slope": np.array([[[0.1]], [[0.2]],
                                                                                      [[0.3]], [[0.4]]],
                                                                                     np.float32)}),
    op_case("prelu_scalar", "PRelu", {"x": (2, 5)}, consts={"slope": np.array([0.25], np.float32)}),
    op_case("add_const_b", "Add", {"a": (2, 8)}, consts={"b": np.arange(8, dtype=np.float32)}),
    op_case("sum_three", "Sum", {"a": (2, 3), "b": (3,), "c": (2, 1)}),
    op_case("sum_one", "Sum", {"a": (2, 3)}),
    op_case("max_three_opset8", "Max", {"a": (2, 3), "b": (2, 3), "c": (2, 3)}, opset=8),
    op_case("min_two", "Min", {"a": (2, 3), "b": (1, 3)}),
    op_case("mean_three", "Mean", {"a": (2, 3), "b": (3,), "c": (2, 1)}),
    op_case("mean_two", "Mean", {"a": (4, 5), "b": (4, 5)}),
    op_case("mean_one", "Mean", {"a": (2, 3)}),
]



def _swiglu(case_id: str, shape: tuple, **attrs) -> object:
    """SwiGLU (28), compiled as onnx's function body (issue 51), checked against its formula
    Y = A * sigmoid(alpha * A) * B: onnxruntime has no kernel for the Swish-24 its body uses."""
    rng = np.random.default_rng(28)
    a, b = (rng.standard_normal(shape).astype(np.float32) * 3 for _ in range(2))
    case = node_case(case_id, "SwiGLU", {"a": a, "b": b}, ["a", "b"], ["y"], 28, **attrs)
    alpha = np.float64(attrs.get("alpha", 1.0))
    case.expected = [(a * (1 / (1 + np.exp(-alpha * a))) * b).astype(np.float32)]
    return case


CASES += [_swiglu("swiglu", (3, 16)), _swiglu("swiglu_alpha", (2, 5, 7), alpha=1.702)]

@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


# --- the clamps' code: compares the compiler vectorises, no libm call per element ----------------------
CLAMPS = ("relu", "hard_swish", "hard_sigmoid", "clip")
_PACKED = re.compile(r"\bv?(mul|add|max|min|and|andn|or|blendv|cmp[a-z]*)ps\b")
X86_ISAS = {"baseline": [], "avx2": ["-march=haswell"], "avx512": ["-march=skylake-avx512"]}


def _functions(disassembly: str) -> dict[str, str]:
    """objdump -d's text per function symbol"""
    parts = re.split(r"^[0-9a-f]+ <([A-Za-z0-9_.]+)>:$", disassembly, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("isa", sorted(X86_ISAS))
def test_clamps_vectorise_on_x86(tmp_path, isa):
    """Relu, HardSwish, HardSigmoid and Clip as a bundle builds them (-O3): packed SSE/AVX arithmetic, on
    the baseline ISA and AVX2 as well as AVX-512 (whose masked arithmetic vectorised HardSwish's old
    form too). fmaxf/fminf per element kept HardSwish scalar: 76 % of a MobileNetV3's time."""
    require_tool("gcc", "objdump")
    obj = tmp_path / "elementwise.o"
    subprocess.run(["gcc", "-std=c99", "-O3", *X86_ISAS[isa], "-Wall", "-Wextra", "-Werror",
                    *kernel_include_flags(), "-c",
                    str(kernel_file("elementwise.c")), "-o", str(obj)], check=True)
    funcs = _functions(subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)], capture_output=True,
                                      text=True, check=True).stdout)
    scalar = [k for k in CLAMPS if not _PACKED.search(funcs[f"aotc_{k}_f32"])]
    assert not scalar, f"not vectorised at -O3 {' '.join(X86_ISAS[isa])}: {scalar}"


@pytest.mark.parametrize("target", ["x86-O2", "x86-O3", "m4-O3", "m4-O2", "m4-Os"])
def test_clamps_call_no_libm(tmp_path, target):
    """fmaxf/fminf are library calls wherever the FPU has no IEEE max (x86, the Cortex-M4's FPv4):
    elementwise.c calls neither, at any optimisation level."""
    arch, opt = target.split("-")
    cc, nm = ("gcc", "nm") if arch == "x86" else ("arm-none-eabi-gcc", "arm-none-eabi-nm")
    require_tool(cc, nm)
    cpu = [] if arch == "x86" else ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
    obj = tmp_path / "elementwise.o"
    subprocess.run([cc, "-std=c99", f"-{opt}", *cpu, "-Wall", "-Wextra", "-Werror", *kernel_include_flags(),
                    "-c", str(kernel_file("elementwise.c")),
                    "-o", str(obj)], check=True)
    undefined = subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True, check=True).stdout.split()
    assert not {"fmaxf", "fminf"} & set(undefined), undefined


def test_a_prelu_slope_that_does_not_broadcast_to_x_is_refused():
    """Issue 51: a slope [C] over X [N, C, L] (opset 6's per-channel form, kept as it was by onnx's version
    converter) passes onnx's inference but does not broadcast to X: refused, where it compiled to a wrong answer."""
    from aot.compiler import compile_model
    from aot.errors import AotcError

    case = op_case("prelu_bad_slope", "PRelu", {"x": (2, 3, 4)}, consts={"slope": np.ones(3, np.float32)})
    with pytest.raises(AotcError, match=r"\(PRelu\): PRelu slope of shape \[3\] does not broadcast to X of shape "
                                        r"\[2, 3, 4\]$"):
        compile_model(case.model)
