"""float16 and bfloat16 (issue 16): computed in float32, each op's result rounded to nearest even into its
half type, as onnxruntime and onnx's reference do for one op. The reference is onnx's evaluator (numpy),
which rounds a float16 op's float32 result once; bfloat16 cases stick to ops it also rounds once. And the
2- and 4-bit integers, which only Cast and the views take."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from opcheck import model_case, shared_build

from aot.compiler import Options, compile_model

RNG = np.random.default_rng(16)
ONNX_TYPE = {"float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16, "float32": TensorProto.FLOAT,
             "float64": TensorProto.DOUBLE, "int32": TensorProto.INT32, "int64": TensorProto.INT64,
             "bool": TensorProto.BOOL}
NP_TYPE = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def _data(shape: tuple[int, ...], dtype: str, scale: float = 2.0) -> np.ndarray:
    x = (RNG.standard_normal(shape) * scale).astype(np.float32)
    return x.astype(NP_TYPE.get(dtype, dtype))


def half_case(case_id: str, nodes: list, feeds: dict[str, np.ndarray], outputs: dict[str, str],
              inits: dict[str, np.ndarray] | None = None, opset: int = 19):
    graph = helper.make_graph(
        nodes, case_id,
        [helper.make_tensor_value_info(k, ONNX_TYPE[v.dtype.name], v.shape) for k, v in feeds.items()],
        [helper.make_tensor_value_info(k, ONNX_TYPE[dt], None) for k, dt in outputs.items()],
        [onnx.numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    case = model_case(case_id, graph, feeds, opset, atol_scale=1e-3)  # about one float16 ulp
    case.expected = ReferenceEvaluator(case.model).run(None, feeds)
    return case


def node(op: str, ins: list[str], outs: list[str] | None = None, **attrs):
    return helper.make_node(op, ins, outs or ["y"], **attrs)


CASES = []
for dt in ("float16", "bfloat16"):
    CASES += [
        half_case(f"add_broadcast_{dt}", [node("Add", ["a", "b"])], {"a": _data((2, 3, 4), dt), "b": _data((4,), dt)},
                  {"y": dt}),
        half_case(f"mul_const_{dt}", [node("Mul", ["a", "c"])], {"a": _data((3, 5), dt)}, {"y": dt},
                  inits={"c": _data((5,), dt)}),
        half_case(f"relu_transpose_{dt}", [node("Relu", ["a"], ["r"]), node("Transpose", ["r"], perm=[1, 0])],
                  {"a": _data((3, 5), dt)}, {"y": dt}),
        half_case(f"cast_from_float32_{dt}", [node("Cast", ["a"], to=ONNX_TYPE[dt])],
                  {"a": (RNG.standard_normal((4, 33)) * 300).astype(np.float32)}, {"y": dt}),
        half_case(f"cast_to_float32_{dt}", [node("Cast", ["a"], to=TensorProto.FLOAT)], {"a": _data((4, 9), dt, 1e3)},
                  {"y": "float32"}),
        half_case(f"cast_to_int64_{dt}", [node("Cast", ["a"], to=TensorProto.INT64)], {"a": _data((17,), dt, 50)},
                  {"y": "int64"}),
        half_case(f"greater_{dt}", [node("Greater", ["a", "b"])], {"a": _data((3, 4), dt), "b": _data((3, 4), dt)},
                  {"y": "bool"}),
        # a chain: every op's result rounded to the half type before the next reads it
        half_case(f"chain_{dt}", [node("Mul", ["a", "b"], ["m"]), node("Add", ["m", "a"], ["s"]),
                                  node("Sub", ["s", "b"])],
                  {"a": _data((5, 7), dt), "b": _data((5, 7), dt)}, {"y": dt}),
    ]
CASES += [
    half_case("cast_float64_to_float16", [node("Cast", ["a"], to=TensorProto.FLOAT16)],
              {"a": np.array([0.0, -0.0, 1e-8, 6e-8, 65504.0, 65519.0, 65520.0, 1e6, -3.14159, np.inf], np.float64)},
              {"y": "float16"}),
    half_case("cast_float16_to_bfloat16", [node("Cast", ["a"], to=TensorProto.BFLOAT16)],
              {"a": _data((3, 11), "float16", 100)}, {"y": "bfloat16"}),
    half_case("cast_int32_to_float16", [node("Cast", ["a"], to=TensorProto.FLOAT16)],
              {"a": np.array([0, 1, -7, 2049, 65504, 70000, -100000], np.int32)}, {"y": "float16"}),
    half_case("subnormals_float16", [node("Cast", ["a"], to=TensorProto.FLOAT16)],
              {"a": np.array([2.0**-25, 2.0**-25 * 1.0001, 3 * 2.0**-25, 2.0**-24 * 1.5, 2.0**-14 * 0.999, -2.0**-20],
                             np.float32)}, {"y": "float16"}),
    half_case("sigmoid_float16", [node("Sigmoid", ["a"])], {"a": _data((4, 8), "float16")}, {"y": "float16"}),
    half_case("matmul_float16", [node("MatMul", ["a", "b"])], {"a": _data((3, 8), "float16", 0.5),
                                                               "b": _data((8, 5), "float16", 0.5)}, {"y": "float16"}),
    half_case("softmax_float16", [node("Softmax", ["a"], axis=-1)], {"a": _data((3, 10), "float16")}, {"y": "float16"},
              opset=13),
    half_case("isnan_float16", [node("IsNaN", ["a"])], {"a": np.array([1.0, np.nan, -np.inf, 0.0], np.float16)},
              {"y": "bool"}),
]


# int4/uint4/int2/uint2 (one per byte, in its low bits, as ml_dtypes holds them): Cast both ways, wrapping
SMALL = {"int4": TensorProto.INT4, "uint4": TensorProto.UINT4, "int2": TensorProto.INT2, "uint2": TensorProto.UINT2}
ONNX_TYPE.update(SMALL)
ONNX_TYPE["int8"] = TensorProto.INT8
for small, code in SMALL.items():
    CASES += [
        half_case(f"cast_float32_to_{small}", [node("Cast", ["a"], to=code)],
                  {"a": np.array([-9.5, -8, -3, -1.7, 0, 1, 2.9, 7, 8, 15.5, 16, np.nan], np.float32)}, {"y": small},
                  opset=25),
        half_case(f"cast_int32_to_{small}", [node("Cast", ["a"], to=code)],
                  {"a": np.array([-300, -9, -2, -1, 0, 1, 3, 9, 300], np.int32)}, {"y": small}, opset=25),
        half_case(f"cast_{small}_to_float32", [node("Cast", ["a"], to=TensorProto.FLOAT)],
                  {"a": np.arange(-8, 16).astype(small)}, {"y": "float32"}, opset=25),
        half_case(f"cast_{small}_to_int8_reshaped", [node("Reshape", ["a", "s"], ["r"]),
                                                     node("Cast", ["r"], to=TensorProto.INT8)],
                  {"a": np.arange(-8, 16).astype(small)}, {"y": "int8"}, inits={"s": np.array([4, 6], np.int64)},
                  opset=25),
    ]
for c in CASES[-16:]:
    c.model.ir_version = 11


# the float8 types (their bits, one byte): Cast to them saturating or not, and back
F8 = {"float8_e4m3fn": TensorProto.FLOAT8E4M3FN, "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
      "float8_e5m2": TensorProto.FLOAT8E5M2, "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ}
ONNX_TYPE.update(F8)
_F8_IN = np.array([0.0, -0.0, 1e-9, -3e-3, 0.3, -1.7, 17.2, 239.0, 250.0, 448.0, 470.0, 6e4, -1e6, np.inf, -np.inf,
                   np.nan], np.float32)
for f8, code in F8.items():
    for sat in (1, 0):
        CASES.append(half_case(f"cast_float32_to_{f8}_saturate{sat}", [node("Cast", ["a"], to=code, saturate=sat)],
                               {"a": _F8_IN}, {"y": f8}, opset=21))
    CASES.append(half_case(f"cast_float16_to_{f8}", [node("Cast", ["a"], to=code)], {"a": _data((3, 7), "float16", 30)},
                           {"y": f8}, opset=21))
    CASES.append(half_case(f"cast_{f8}_to_float32", [node("Cast", ["a"], to=TensorProto.FLOAT)],
                           {"a": np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, f8))}, {"y": "float32"},
                           opset=21))


# float4 e2m1 (one per byte, low bits) and float8 e8m0 (issue 51): Cast both ways, Cast-24's round_mode,
# QuantizeLinear / DequantizeLinear of float4; against onnx's reference (ml_dtypes, numpy_helper.to_float8e8m0)
NARROW = {"float4_e2m1fn": TensorProto.FLOAT4E2M1, "float8_e8m0fnu": TensorProto.FLOAT8E8M0}
ONNX_TYPE.update(NARROW)
_F4_IN = np.array([0.0, -0.0, 0.24, 0.25, 0.26, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.01, 6.0, 6.9, 7.0, -1e9, np.inf,
                   -np.inf, np.nan, -0.1], np.float32)
# no zeros, infinities or float subnormals, where aotc follows Cast's spec table and the reference does not (below)
_E8_IN = np.array([1.2e-38, 0.124, 0.125, 0.5, 1.0, 1.1, 1.5, 1.4999, 3.0, -6.0, 2.0**127, 3e38, np.nan], np.float32)
for src in ("float32", "float16"):
    with np.errstate(over="ignore"):  # -1e9 is -inf in float16
        _x = _F4_IN.astype(src)
    CASES.append(half_case(f"cast_{src}_to_float4", [node("Cast", ["a"], to=TensorProto.FLOAT4E2M1)], {"a": _x},
                           {"y": "float4_e2m1fn"}, opset=23))
    CASES.append(half_case(f"cast_float4_to_{src}", [node("Cast", ["a"], to=ONNX_TYPE[src])],
                           {"a": np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)}, {"y": src}, opset=23))
    CASES.append(half_case(f"cast_float8e8m0_to_{src}", [node("Cast", ["a"], to=ONNX_TYPE[src])],
                           {"a": np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)}, {"y": src}, opset=24))
for mode in ("up", "down", "nearest"):
    for sat in (1, 0):
        CASES.append(half_case(f"cast_float32_to_float8e8m0_{mode}_saturate{sat}",
                               [node("Cast", ["a"], to=TensorProto.FLOAT8E8M0, saturate=sat, round_mode=mode)],
                               {"a": _E8_IN if sat else _E8_IN[:-2]}, {"y": "float8_e8m0fnu"}, opset=24))

def _e8m0_spec_table(sat: int, mode: str, expected: list[int]):
    """Cast to float8e8m0 of 0, infinity and float subnormals by Cast's spec table (E8M0_MIN = 2^-127 for what
    is below it with saturate, NaN without; infinity E8M0_MAX or NaN) and by rounding 2^-127 .. 2^-126."""
    x = np.array([0.0, np.inf, 2.0**-130, 2.0**-127, 1.2 * 2.0**-127, 1.6 * 2.0**-127], np.float32)
    case = half_case(f"cast_float8e8m0_spec_table_{mode}_saturate{sat}",
                     [node("Cast", ["a"], to=TensorProto.FLOAT8E8M0, saturate=sat, round_mode=mode)], {"a": x},
                     {"y": "float8_e8m0fnu"}, opset=24)
    case.expected = [np.array(expected, np.uint8).view(ml_dtypes.float8_e8m0fnu)]
    return case


CASES += [
    _e8m0_spec_table(1, "up", [0, 0xfe, 0, 0, 1, 1]),
    _e8m0_spec_table(1, "nearest", [0, 0xfe, 0, 0, 0, 1]),
    _e8m0_spec_table(0, "nearest", [0xff, 0xff, 0xff, 0, 0, 1]),
    _e8m0_spec_table(0, "down", [0xff, 0xff, 0xff, 0, 0, 0]),
    half_case("quantize_float4_per_axis", [node("QuantizeLinear", ["x", "s", "z"], axis=1)],
              {"x": (RNG.standard_normal((2, 3, 4)) * 40).astype(np.float32),
               "s": np.array([3.0, 5.5, 9.0], np.float32), "z": np.zeros(3, ml_dtypes.float4_e2m1fn)},
              {"y": "float4_e2m1fn"}, opset=23),
    half_case("dequantize_float4", [node("DequantizeLinear", ["q", "s"])],
              {"q": np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn), "s": np.array(0.5, np.float32)},
              {"y": "float32"}, opset=23),
]


# QuantizeLinear/DequantizeLinear the integer kernels do not take (run-time scales; 16/4/2-bit; float8): float ops
ONNX_TYPE.update({"int16": TensorProto.INT16, "uint16": TensorProto.UINT16})
_QX = (RNG.standard_normal((2, 3, 4)) * 40).astype(np.float32)
CASES += [
    half_case("quantize_int16_runtime_scale", [node("QuantizeLinear", ["x", "s", "z"])],
              {"x": _QX * 100, "s": np.array(0.37, np.float32), "z": np.array(-12, np.int16)}, {"y": "int16"},
              opset=21),
    half_case("quantize_uint4_per_axis", [node("QuantizeLinear", ["x", "s", "z"], axis=1)],
              {"x": _QX, "s": np.array([3.0, 5.5, 9.0], np.float32),
               "z": np.array([8, 2, 0], np.uint8).astype("uint4")},
              {"y": "uint4"}, opset=21),
    half_case("quantize_e4m3fn_runtime_scale", [node("QuantizeLinear", ["x", "s", "z"])],
              {"x": _QX, "s": np.array(0.05, np.float32), "z": np.zeros((1,), ml_dtypes.float8_e4m3fn)},
              {"y": "float8_e4m3fn"}, opset=21),
    half_case("dequantize_int16_per_axis", [node("DequantizeLinear", ["q", "s", "z"], axis=2)],
              {"q": (RNG.integers(-3000, 3000, (2, 3, 4))).astype(np.int16),
               "s": np.array([0.1, 2, 3, 0.25], np.float32),
               "z": np.array([0, -5, 7, 100], np.int16)}, {"y": "float32"}, opset=21),
    half_case("dequantize_int8_runtime_scale", [node("DequantizeLinear", ["q", "s", "z"])],
              {"q": np.arange(-128, 128, 8, dtype=np.int8), "s": np.array(0.125, np.float32),
               "z": np.array(3, np.int8)}, {"y": "float32"}, opset=21),
    half_case("dequantize_e5m2_float16_scale", [node("DequantizeLinear", ["q", "s"])],
              {"q": np.arange(0, 256, 3, dtype=np.uint8).view(ml_dtypes.float8_e5m2), "s": np.array(0.5, np.float16)},
              {"y": "float16"}, opset=21),
]


# a Loop carrying a float16 value: its body computes in float32 on its own, the carried value stays float16
_body = helper.make_graph(
    [node("Cast", ["v"], ["vf"], to=TensorProto.FLOAT), node("Mul", ["vf", "k"], ["mf"]),
     node("Cast", ["mf"], ["v_out"], to=TensorProto.FLOAT16), node("Identity", ["cond"], ["cond_out"])],
    "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v", TensorProto.FLOAT16, [2, 3])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v_out", TensorProto.FLOAT16, [2, 3])],
    [onnx.numpy_helper.from_array(np.array(1.37, np.float32), "k")])
CASES.append(half_case("loop_float16_state", [node("Loop", ["n", "c", "a"], ["y"], body=_body)],
                       {"a": _data((2, 3), "float16")}, {"y": "float16"},
                       inits={"n": np.array(4, np.int64), "c": np.array(True)}, opset=16))


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_reference(built, case_id):
    case = built.cases[case_id]
    ours = built.run(case_id)
    for o, r in zip(ours, case.expected, strict=True):
        assert o.dtype == r.dtype and o.shape == r.shape
        if r.dtype.name in SMALL:
            np.testing.assert_array_equal(o.view(np.uint8), r.view(np.uint8))
        elif r.dtype.name in F8 or r.dtype.name in NARROW:  # as floats (NaN bits may differ); float4 by its bits too
            if r.dtype.name == "float4_e2m1fn":
                np.testing.assert_array_equal(o.view(np.uint8), r.view(np.uint8))
            np.testing.assert_array_equal(o.astype(np.float32), r.astype(np.float32))
        elif r.dtype.name in ("float16", "bfloat16"):  # bit for bit (both round the float32 result once)
            same = (o.view(np.uint16) == r.view(np.uint16)) | (np.isnan(o.astype(np.float32))
                                                                & np.isnan(r.astype(np.float32)))
            if case_id.startswith(("sigmoid", "matmul", "softmax")):  # float32 math may differ in the last bit
                np.testing.assert_allclose(o.astype(np.float32), r.astype(np.float32), rtol=2e-3, atol=1e-3)
            else:
                assert same.all(), (o[~same], r[~same])
        else:
            np.testing.assert_array_equal(o, r)


def test_halves_keep_their_type_at_the_interface():
    """The C function takes and returns the half bits (uint16_t); only the inside is float32."""
    case = next(c for c in CASES if c.id == "chain_float16")
    bundle = compile_model(case.model, Options(name="m"))
    assert [s["dtype"] for s in bundle.metadata["inputs"]] == ["float16", "float16"]
    assert [s["dtype"] for s in bundle.metadata["outputs"]] == ["float16"]
