"""Index arithmetic and the integer/bool elementwise ops against onnxruntime (issues 15 and 16): comparisons,
logical and bitwise ops, integer arithmetic with broadcasting, Where, Expand, Tile, ArgMax/ArgMin, Trilu,
CumSum, GatherElements, Mod, and the float unary ops added with them."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator
from opcheck import Case, model_case, op_case, shared_build, tensor_type

from aot.compiler import compile_model
from aot.errors import AotcError

RNG = np.random.default_rng(7)
INT_DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
NUMERIC = ["float32", "float64", *INT_DTYPES]


def _data(shape: tuple[int, ...], dtype: str, low: int = -20, high: int = 20) -> np.ndarray:
    if dtype == "bool":
        return np.asarray(RNG.random(shape) < 0.5)
    if dtype.startswith("float"):
        return np.asarray(RNG.standard_normal(shape), dtype)
    info = np.iinfo(dtype)
    return np.asarray(RNG.integers(max(low, info.min), min(high, info.max), size=shape, endpoint=True), dtype)


def _case(case_id: str, op: str, feeds: dict[str, np.ndarray], out_dtype: str, *, consts: dict | None = None,
          input_order: list[str] | None = None, attrs: dict | None = None, opset: int = 18):
    return op_case(case_id, op, feeds, consts=consts, input_order=input_order, attrs=attrs, out_dtype=out_dtype,
                   opset=opset)


BROADCASTS = [("same", (2, 3, 4), (2, 3, 4)), ("row", (2, 3, 4), (4,)), ("outer", (3, 1), (1, 4)),
              ("scalar", (2, 5), ())]
CASES = []

# arithmetic on every integer dtype and float64, with numpy broadcasting (Div: no zero divisors; ORT traps)
for op in ["Add", "Sub", "Mul", "Div", "Max", "Min"]:
    for dt in ["float64", *INT_DTYPES]:
        for tag, a, b in BROADCASTS[:3]:
            bv = _data(b, dt)
            if op == "Div" and not dt.startswith("float"):
                bv[bv == 0] = 3
            CASES.append(_case(f"{op.lower()}_{dt}_{tag}", op, {"a": _data(a, dt), "b": bv}, dt))
# integer overflow wraps as in onnxruntime
for dt in ["int8", "int32"]:
    big = np.iinfo(dt).max
    CASES.append(_case(f"add_{dt}_wraps", "Add", {"a": np.array([big, -big - 1, 5], dt),
                                                 "b": np.array([1, -1, 7], dt)}, dt))

# comparisons -> bool, every numeric dtype
for op in ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]:
    for dt in NUMERIC:
        for tag, a, b in BROADCASTS[1:3]:
            CASES.append(_case(f"{op.lower()}_{dt}_{tag}", op, {"a": _data(a, dt, -3, 3), "b": _data(b, dt, -3, 3)},
                               "bool", opset=19 if op in ("Equal",) else 16))
CASES.append(_case("equal_bool", "Equal", {"a": _data((3, 4), "bool"), "b": _data((4,), "bool")}, "bool", opset=19))
CASES.append(_case("less_nan", "Less", {"a": np.array([np.nan, 1, 2], np.float32),
                                        "b": np.array([1, np.nan, 3], np.float32)}, "bool"))

# logical and bitwise
for op in ["And", "Or", "Xor"]:
    for tag, a, b in BROADCASTS:
        CASES.append(_case(f"{op.lower()}_{tag}", op, {"a": _data(a, "bool"), "b": _data(b, "bool")}, "bool"))
CASES.append(_case("not", "Not", {"x": _data((3, 5), "bool")}, "bool"))
for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
    for dt in INT_DTYPES:
        CASES.append(_case(f"{op.lower()}_{dt}", op, {"a": _data((3, 4), dt, -100, 100),
                                                      "b": _data((4,), dt, -100, 100)}, dt))
for dt in INT_DTYPES:
    CASES.append(_case(f"bitwisenot_{dt}", "BitwiseNot", {"x": _data((3, 4), dt, -100, 100)}, dt))
for direction in ["LEFT", "RIGHT"]:
    CASES.append(_case(f"bitshift_{direction.lower()}", "BitShift",
                       {"a": _data((3, 4), "uint8", 0, 255), "b": _data((4,), "uint8", 0, 7)}, "uint8",
                       attrs={"direction": direction}))

for dt in ["uint16", "uint32", "uint64"]:  # past the width gives 0
    width = np.iinfo(dt).bits
    for direction in ["LEFT", "RIGHT"]:
        CASES.append(_case(f"bitshift_{direction.lower()}_{dt}", "BitShift",
                           {"a": _data((3, 4), dt, 0, 60000), "b": np.array([0, 1, width - 1, width + 3], dt)}, dt,
                           attrs={"direction": direction}))
# Pow: integers by squaring (wrapping), a float base by an integer exponent (ONNX lets the types differ)
for dt in ["int32", "int64"]:
    CASES.append(_case(f"pow_{dt}", "Pow", {"a": _data((3, 4), dt, -5, 5), "b": _data((4,), dt, 0, 9)}, dt,
                       opset=15))
    CASES.append(_case(f"pow_float32_by_{dt}", "Pow", {"a": _data((3, 4), "float32"), "b": _data((4,), dt, -3, 4)},
                       "float32", opset=15))
CASES.append(_case("pow_float32_by_const_uint32", "Pow", {"a": _data((3, 4), "float32")}, "float32",
                   consts={"b": np.array([0, 1, 2, 3], np.uint32)}, opset=15))

# signed BitShift (opset 28): arithmetic right shift, shifts below 0 or past the width; onnxruntime does not
# run opset 28, so onnx's reference evaluator is the reference
for dt in ["int8", "int16", "int32", "int64"]:
    for direction in ["LEFT", "RIGHT"]:
        width = np.iinfo(dt).bits
        b = np.array([-1, 0, 1, 3, width - 1, width, width + 5], dt)
        case = _case(f"bitshift_{direction.lower()}_{dt}", "BitShift", {"a": _data((3, 7), dt, -100, 100), "b": b},
                     dt, attrs={"direction": direction}, opset=28)
        case.model.ir_version = 13
        case.expected = ReferenceEvaluator(case.model).run(None, case.feeds)
        CASES.append(case)

# Mod: fmod=0 (sign of the divisor) for integers, fmod=1 (sign of the dividend) for every dtype
for dt in INT_DTYPES:
    for fmod in (0, 1):
        b = _data((3, 4), dt, -9, 9)
        b[b == 0] = 4
        CASES.append(_case(f"mod_{dt}_fmod{fmod}", "Mod", {"a": _data((3, 4), dt, -100, 100), "b": b}, dt,
                           attrs={"fmod": fmod}))
for dt in ["float32", "float64"]:
    CASES.append(_case(f"mod_{dt}_fmod1", "Mod", {"a": _data((3, 4), dt) * 10, "b": _data((4,), dt) + 3}, dt,
                       attrs={"fmod": 1}))

# floats with fmod=0: floored (numpy's np.mod; onnxruntime refuses it), signs of both kinds, zero remainders
for dt in ["float32", "float64"]:
    a = np.array([5.5, -5.5, 5.5, -5.5, 6.0, -6.0, 0.0, 1e-3], dt)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, -4.0, np.inf], dt)
    case = _case(f"mod_{dt}_floored", "Mod", {"a": a, "b": b}, dt, attrs={"fmod": 0})
    case.expected = ReferenceEvaluator(case.model).run(None, case.feeds)
    CASES.append(case)

# Clip of integers, and with bounds computed at run time (Max then Min)
CASES.append(_case("clip_int32_consts", "Clip", {"x": _data((3, 5), "int32")}, "int32",
                   consts={"lo": np.array(-4, np.int32), "hi": np.array(6, np.int32)}, opset=13))
CASES.append(_case("clip_int8_max_only", "Clip", {"x": _data((3, 5), "int8")}, "int8",
                   consts={"hi": np.array(3, np.int8)}, input_order=["x", "", "hi"], opset=13))
CASES.append(_case("clip_runtime_bounds", "Clip", {"x": _data((3, 5), "float32") * 3, "lo": np.array(-1.5, np.float32),
                                                   "hi": np.array(2.0, np.float32)}, "float32", opset=13))
CASES.append(_case("clip_runtime_min_only", "Clip", {"x": _data((4,), "float32"), "lo": np.array(0.2, np.float32)},
                   "float32", opset=13))

# unary ops on integers, and the float ones added with them
for dt in ["float32", "float64", "int8", "int16", "int32", "int64"]:
    CASES.append(_case(f"neg_{dt}", "Neg", {"x": _data((3, 4), dt)}, dt))
    CASES.append(_case(f"abs_{dt}", "Abs", {"x": _data((3, 4), dt)}, dt))
    CASES.append(_case(f"sign_{dt}", "Sign", {"x": _data((3, 4), dt, -2, 2)}, dt))
CASES.append(_case("round_halves", "Round", {"x": np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -3.7], np.float32)},
                   "float32"))
_unit = (RNG.random((3, 5)).astype(np.float32) * 1.8 - 0.9)
for op in ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Atanh", "Softsign"]:
    CASES.append(_case(op.lower(), op, {"x": _unit}, "float32"))
CASES.append(_case("acosh", "Acosh", {"x": _unit + 2.0}, "float32"))
CASES.append(_case("isnan", "IsNaN", {"x": np.array([1.0, np.nan, -np.inf, 0.0], np.float32)}, "bool"))
for op, attrs in [("Selu", {}), ("Selu", {"alpha": 2.0, "gamma": 3.0}), ("Celu", {}), ("Celu", {"alpha": 2.0}),
                  ("ThresholdedRelu", {}), ("ThresholdedRelu", {"alpha": 0.5}), ("Shrink", {}),
                  ("Shrink", {"lambd": 0.3, "bias": 0.2})]:
    CASES.append(_case(f"{op.lower()}_{len(attrs)}", op, {"x": _data((4, 6), "float32") * 2}, "float32",
                       attrs=attrs))

# Where: three-way broadcast, any dtype of X and Y
for dt in ["float32", "int64", "bool", "int8"]:
    CASES.append(_case(f"where_{dt}", "Where", {"c": _data((2, 1, 4), "bool"), "x": _data((3, 1), dt),
                                                "z": _data((2, 3, 4), dt)}, dt))
CASES.append(_case("where_scalar_y", "Where", {"c": _data((3, 4), "bool"), "x": _data((3, 4), "float32")},
                   "float32", consts={"z": np.array(-1e9, np.float32)}))

# Expand and Tile (shape and repeats constant, or inputs of the model)
for dt in ["float32", "int64", "bool"]:
    CASES.append(_case(f"expand_{dt}", "Expand", {"x": _data((3, 1), dt)}, dt,
                       consts={"shape": np.array([2, 1, 4], np.int64)}))
    CASES.append(_case(f"tile_{dt}", "Tile", {"x": _data((2, 3), dt)}, dt,
                       consts={"repeats": np.array([2, 3], np.int64)}))
CASES.append(_case("expand_smaller_shape", "Expand", {"x": _data((2, 3, 4), "float32")}, "float32",
                   consts={"shape": np.array([3, 1], np.int64)}))
CASES.append(_case("tile_rank4", "Tile", {"x": _data((2, 1, 3, 2), "int32")}, "int32",
                   consts={"repeats": np.array([1, 4, 2, 3], np.int64)}))

# ArgMax / ArgMin: axes, keepdims, select_last_index (ties), dtypes
for op in ["ArgMax", "ArgMin"]:
    for dt in ["float32", "float64", "int8", "uint8", "int32", "int64"]:
        for axis in (0, -1, 1):
            for keepdims in (0, 1):
                CASES.append(_case(f"{op.lower()}_{dt}_axis{axis}_keep{keepdims}", op,
                                   {"x": _data((3, 4, 5), dt, 0, 3)}, "int64",
                                   attrs={"axis": axis, "keepdims": keepdims}))
        CASES.append(_case(f"{op.lower()}_{dt}_last", op, {"x": _data((3, 4, 5), dt, 0, 2)}, "int64",
                           attrs={"axis": 1, "select_last_index": 1}))

# Trilu: upper/lower, k constant or read at run time, batches, any dtype
for upper in (0, 1):
    for k in (-2, -1, 0, 1, 3, 9):
        CASES.append(_case(f"trilu_u{upper}_k{k}", "Trilu", {"x": _data((2, 4, 5), "float32")}, "float32",
                           consts={"k": np.array(k, np.int64)}, attrs={"upper": upper}, opset=14))
    CASES.append(_case(f"trilu_u{upper}_nok", "Trilu", {"x": _data((5, 3), "int64")}, "int64",
                       attrs={"upper": upper}, opset=14))
    CASES.append(_case(f"trilu_u{upper}_runtime_k", "Trilu", {"x": _data((3, 6, 6), "bool"),
                                                             "k": np.array(-1, np.int64)}, "bool",
                       attrs={"upper": upper}, opset=14))

# CumSum: axes (constant or run-time, int32 or int64), exclusive, reverse, dtypes
for dt in ["float32", "float64", "int32", "int64"]:
    for axis in (0, 1, -1):
        for exclusive in (0, 1):
            for reverse in (0, 1):
                CASES.append(_case(f"cumsum_{dt}_a{axis}_e{exclusive}_r{reverse}", "CumSum",
                                   {"x": _data((3, 4, 2), dt)}, dt, consts={"axis": np.array(axis, np.int32)},
                                   attrs={"exclusive": exclusive, "reverse": reverse}, opset=14))
CASES.append(_case("cumsum_runtime_axis", "CumSum", {"x": _data((3, 4), "float32"),
                                                    "axis": np.array(1, np.int64)}, "float32", opset=14))

# GatherElements: axes, negative indices, int32/int64 indices, indices smaller than data
for axis in (0, 1, -1):
    for idt in ("int64", "int32"):
        idx = RNG.integers(-3, 3, size=(2, 3, 2)).astype(idt)
        CASES.append(_case(f"gather_elements_a{axis}_{idt}", "GatherElements",
                           {"data": _data((3, 3, 3), "float32"), "indices": idx}, "float32", attrs={"axis": axis},
                           opset=13))
CASES.append(_case("gather_elements_int64_data", "GatherElements",
                   {"data": _data((4, 5), "int64"), "indices": RNG.integers(0, 4, size=(6, 5)).astype(np.int64)},
                   "int64", attrs={"axis": 0}, opset=13))


# CumProd: the CumSum kernels multiplying
for dt in ["float32", "int64"]:
    for exclusive, reverse in ((0, 0), (1, 1)):
        CASES.append(_case(f"cumprod_{dt}_e{exclusive}_r{reverse}", "CumProd", {"x": _data((3, 4), dt, -3, 3)}, dt,
                           consts={"axis": np.array(1, np.int64)}, attrs={"exclusive": exclusive, "reverse": reverse},
                           opset=26))
        CASES[-1].model.ir_version = 13
        CASES[-1].expected = None  # onnxruntime may not run opset 26: the test falls back to onnx's evaluator

# Hardmax: opset 13's single axis and opset 11's flattened trailing dims
for opset in (11, 13):
    for axis in (0, 1, -1):
        CASES.append(_case(f"hardmax_opset{opset}_axis{axis}", "Hardmax", {"x": _data((3, 4, 5), "float32")},
                           "float32", attrs={"axis": axis}, opset=opset))
CASES.append(_case("hardmax_ties", "Hardmax", {"x": np.array([[1, 3, 3], [2, 2, 2]], np.float32)}, "float32"))

# EyeLike (k, dtype), OneHot (axes, negative indices, float indices, run-time values), Range (run-time start)
for k in (-1, 0, 2):
    CASES.append(_case(f"eyelike_k{k}", "EyeLike", {"x": _data((4, 5), "float32")}, "float32", attrs={"k": k}))
CASES.append(_case("eyelike_int64", "EyeLike", {"x": _data((3, 3), "int32")}, "int64",
                   attrs={"dtype": onnx.TensorProto.INT64}))
for axis in (-1, 0, 1):
    for idt in ("int64", "int32", "float32"):
        CASES.append(_case(f"onehot_axis{axis}_{idt}", "OneHot",
                           {"i": np.array([[1, -1, 3], [0, 2, 7]], idt), "values": np.array([-2, 5], np.float32)},
                           "float32", consts={"depth": np.array(4, np.int64)}, input_order=["i", "depth", "values"],
                           attrs={"axis": axis}, opset=11))
CASES.append(_case("range_float_runtime", "Range", {"start": np.array(1.5, np.float32)}, "float32",
                   consts={"limit": np.array(5.0, np.float32), "delta": np.array(0.5, np.float32)}, opset=11))
CASES[-1].model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = 7
CASES.append(_case("range_int64_negative", "Range", {}, "int64", consts={
    "start": np.array(10, np.int64), "limit": np.array(-3, np.int64), "delta": np.array(-4, np.int64)}, opset=11))

# issue 51: a Range whose limit (and the scale after it) are computed at run time, its length set by the
# declared output at the end of elementwise readers (a window function's expanded body); the kernel checks the
# run-time values give that length (AOTC_ERR_SHAPE otherwise)


def _window_like(case_id: str, n: float, declared: int) -> Case:
    nodes = [helper.make_node("Range", ["zero", "n", "one"], ["r"], name="range"),
             helper.make_node("Div", ["tau", "n"], ["inc"], name="inc"),
             helper.make_node("Mul", ["r", "inc"], ["angle"], name="angle"),
             helper.make_node("Cos", ["angle"], ["cos"], name="cos"),
             helper.make_node("Mul", ["angle", "two"], ["angle2"], name="angle2"),
             helper.make_node("Sin", ["angle2"], ["sin"], name="sin"),
             helper.make_node("Add", ["cos", "sin"], ["y"], name="y")]
    consts = [onnx.numpy_helper.from_array(np.array(v, np.float32), k)
              for k, v in (("zero", 0.0), ("one", 1.0), ("two", 2.0), ("tau", 6.2831855))]
    graph = helper.make_graph(nodes, case_id, [helper.make_tensor_value_info("n", onnx.TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [declared])], consts)
    return model_case(case_id, graph, {"n": np.array(n, np.float32)}, 17)


CASES.append(_window_like("range_runtime_limit_declared_downstream", 10.0, 10))
RANGE_WRONG = [_window_like("range_runtime_limit_other_length", 9.0, 10),
               _case("range_runtime_delta_other_length", "Range", {"delta": np.array(2, np.int64)}, "int64",
                     consts={"start": np.array(0, np.int64), "limit": np.array(9, np.int64)},
                     input_order=["start", "limit", "delta"], opset=11),
               _case("range_runtime_zero_delta", "Range", {"delta": np.array(0.0, np.float32)}, "float32",
                     consts={"start": np.array(0, np.float32), "limit": np.array(3, np.float32)},
                     input_order=["start", "limit", "delta"], opset=11)]
for _case_wrong, _n in zip(RANGE_WRONG[1:], (4, 3), strict=True):
    _case_wrong.model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = _n

# SpaceToDepth and DepthToSpace, both modes
for op, shape in (("SpaceToDepth", (2, 3, 4, 6)), ("DepthToSpace", (2, 8, 3, 2))):
    for mode in ("DCR", "CRD"):
        if op == "SpaceToDepth" and mode == "CRD":
            continue  # SpaceToDepth's mode is opset 26's; onnxruntime does not run it
        attrs = {"blocksize": 2, **({"mode": mode} if op == "DepthToSpace" else {})}
        CASES.append(_case(f"{op.lower()}_{mode}", op, {"x": _data(shape, "float32")}, "float32", attrs=attrs,
                           opset=13))

CASES.append(_case("isinf_both", "IsInf", {"x": np.array([1, np.inf, -np.inf, np.nan], np.float32)}, "bool"))
CASES.append(_case("isinf_positive", "IsInf", {"x": np.array([1, np.inf, -np.inf, np.nan], np.float32)}, "bool",
                   attrs={"detect_negative": 0}))
CASES.append(_case("isinf_negative", "IsInf", {"x": np.array([1, np.inf, -np.inf, np.nan], np.float32)}, "bool",
                   attrs={"detect_positive": 0}))

# ScatterElements (axes, negative indices, int32 indices, the reductions) and ScatterND (slices, reductions)
for axis in (0, 1, -1):
    for reduction in ("none", "add", "mul", "max", "min"):
        data = _data((4, 4, 4), "float32")
        shape = [4, 4, 4]
        shape[axis] = 3
        # 'none' with repeated indices depends on the order of writes: each position once along the axis
        idx = RNG.integers(-4, 4, size=shape) if reduction != "none" else \
            np.moveaxis(np.stack([RNG.permutation(4)[:3] for _ in range(16)]).reshape(4, 4, 3), -1, axis) - 1
        CASES.append(_case(f"scatter_elements_a{axis}_{reduction}", "ScatterElements",
                           {"data": data, "indices": idx.astype(np.int64), "updates": _data(tuple(shape), "float32")},
                           "float32", attrs={"axis": axis, "reduction": reduction}, opset=18))
CASES.append(_case("scatter_elements_int32_idx_int64_data", "ScatterElements",
                   {"data": _data((3, 5), "int64"), "indices": np.array([[4, 0, 2]], np.int32),
                    "updates": _data((1, 3), "int64")}, "int64", attrs={"axis": 1}, opset=13))
for reduction in ("none", "add", "mul", "max", "min"):
    CASES.append(_case(f"scatter_nd_rows_{reduction}", "ScatterND",
                       {"data": _data((4, 3, 2), "float32"),
                        "indices": np.array([[2], [0]] if reduction == "none" else [[2], [0], [2]], np.int64),
                        "updates": _data((2 if reduction == "none" else 3, 3, 2), "float32")}, "float32",
                       attrs={"reduction": reduction}, opset=18))
CASES.append(_case("scatter_nd_elements", "ScatterND",
                   {"data": _data((4, 3), "int32"), "indices": np.array([[[3, 1], [0, -1]]], np.int64),
                    "updates": _data((1, 2), "int32")}, "int32", opset=13))
# the reductions on integers: values over the whole range, so add and mul wrap (two's complement, as onnxruntime),
# repeated targets; float64 too (their own generator, so the cases above and below draw what they drew before)
SCATTER_RNG = np.random.default_rng(17)


def _full_range(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype.startswith("float"):
        return np.asarray(SCATTER_RNG.standard_normal(shape) * 4, dtype)
    info = np.iinfo(dtype)
    return SCATTER_RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


for dt in ("int32", "int64", "uint8", "int8", "uint64", "float64"):
    for reduction in ("add", "mul", "max", "min"):
        if dt in ("int8", "uint64", "float64") and reduction in ("mul", "min"):
            continue
        CASES.append(_case(f"scatter_elements_{dt}_{reduction}", "ScatterElements",
                           {"data": _full_range((3, 5), dt), "indices": SCATTER_RNG.integers(-5, 5, (3, 4)),
                            "updates": _full_range((3, 4), dt)}, dt, attrs={"axis": 1, "reduction": reduction}))
        CASES.append(_case(f"scatter_nd_{dt}_{reduction}", "ScatterND",
                           {"data": _full_range((4, 3), dt), "indices": np.array([[2], [-1], [2], [0], [2]], np.int64),
                            "updates": _full_range((5, 3), dt)}, dt, attrs={"reduction": reduction}))

# GatherND: whole slices, single elements, negative indices, batch_dims
CASES.append(_case("gather_nd_slices", "GatherND", {"data": _data((4, 3, 2), "float32"),
                                                    "indices": np.array([[[2], [-1]], [[0], [1]]], np.int64)},
                   "float32", opset=13))
CASES.append(_case("gather_nd_elements", "GatherND", {"data": _data((4, 3), "int64"),
                                                      "indices": np.array([[3, 1], [0, -2]], np.int64)},
                   "int64", opset=13))
CASES.append(_case("gather_nd_batch_dims", "GatherND", {"data": _data((2, 4, 3), "float32"),
                                                        "indices": np.array([[[1], [3]], [[0], [2]]], np.int64)},
                   "float32", attrs={"batch_dims": 1}, opset=13))

def _mask_model() -> onnx.ModelProto:
    """A causal mask as transformers build it: Range-free positions from a constant, Trilu, Equal,
    Where, ArgMax of the scores and CumSum of the positions, in one graph."""
    nodes = [
        helper.make_node("Trilu", ["ones"], ["tri"], upper=0),
        helper.make_node("Equal", ["tri", "zero"], ["masked"]),
        helper.make_node("Where", ["masked", "neg", "scores"], ["s"]),
        helper.make_node("ArgMax", ["s"], ["best"], axis=-1, keepdims=0),
        helper.make_node("CumSum", ["best", "ax"], ["pos"]),
        helper.make_node("Expand", ["pos", "shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mask",
        [helper.make_tensor_value_info("scores", tensor_type("float32"), (2, 6, 6))],
        [helper.make_tensor_value_info("y", tensor_type("int64"), None)],
        [onnx.numpy_helper.from_array(np.ones((6, 6), np.int64), "ones"),
         onnx.numpy_helper.from_array(np.array(0, np.int64), "zero"),
         onnx.numpy_helper.from_array(np.array(-1e9, np.float32), "neg"),
         onnx.numpy_helper.from_array(np.array(-1, np.int64), "ax"),
         onnx.numpy_helper.from_array(np.array([3, 2, 6], np.int64), "shape")])
    return model_case("causal_mask_chain", graph, {"scores": _data((2, 6, 6), "float32")}, opset=18)


CASES.append(_mask_model())


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    """onnxruntime is the reference; where it has no kernel for the dtype (Max on int16, Mod on int8, ...),
    onnx's reference evaluator is."""
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtNotImplemented

    try:
        built.check(case_id)
    except OrtNotImplemented:
        case = built.cases[case_id]
        case.expected = ReferenceEvaluator(case.model).run(None, case.feeds)
        built.check(case_id)


def test_a_scatter_reduction_on_bool_is_refused_by_name():
    """bool is scattered by a plain update only: a reduction is refused, naming it."""
    case = _case("scatter_add_bool", "ScatterND", {"data": np.zeros((3, 2), bool),
                                                   "indices": np.array([[1]], np.int64),
                                                   "updates": np.zeros((1, 2), bool)}, "bool",
                 attrs={"reduction": "add"})
    with pytest.raises(AotcError, match=r"ScatterND.*reduction 'add' on bool is not supported"):
        compile_model(case.model)

@pytest.mark.parametrize("case", RANGE_WRONG, ids=[c.id for c in RANGE_WRONG])
def test_run_time_range_values_for_another_length_return_an_error_code(case):
    """Range's start/limit/delta read at run time that do not give the compiled length: AOTC_ERR_SHAPE."""
    with pytest.raises(AssertionError, match="returned -2"):
        shared_build([case]).run(case.id)
