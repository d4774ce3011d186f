"""Pooling ops against onnxruntime: MaxPool, AveragePool (1-D, 2-D, 3-D), GlobalMaxPool, GlobalAveragePool."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from opcheck import model_case, op_case, shared_build

from aot.compiler import compile_model, lower
from aot.errors import AotcError
from aot.kernels.base import NO_BUDGET_LIMIT, TargetTraits
from aot.select import candidates, choose


def _pool(case_id: str, op: str, shape: tuple, opset: int = 13, **attrs) -> object:
    return op_case(case_id, op, {"x": shape}, attrs=attrs, opset=opset)


CASES = []
for op, tag in (("MaxPool", "max"), ("AveragePool", "avg")):
    CASES += [
        # 2-D basics
        _pool(f"{tag}_2d_k2s2", op, (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2]),
        _pool(f"{tag}_2d_k3s1_odd", op, (2, 3, 7, 9), kernel_shape=[3, 3]),
        _pool(f"{tag}_2d_k3s2_pad1", op, (1, 4, 9, 9), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        _pool(f"{tag}_2d_asym_pads", op, (1, 2, 7, 6), kernel_shape=[3, 2], strides=[1, 2], pads=[2, 0, 1, 1]),
        _pool(f"{tag}_2d_rect_kernel", op, (1, 2, 10, 5), kernel_shape=[4, 1], strides=[3, 1], pads=[1, 0, 2, 0]),
        _pool(f"{tag}_2d_kernel_eq_input", op, (1, 2, 5, 5), kernel_shape=[5, 5]),
        # ceil_mode (opset 10+): windows running into and past the end padding
        _pool(f"{tag}_2d_ceil", op, (1, 2, 8, 8), opset=10, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        _pool(f"{tag}_2d_ceil_pads", op, (1, 3, 7, 10), opset=12, kernel_shape=[3, 2], strides=[2, 3],
              pads=[1, 0, 1, 1], ceil_mode=1),
        _pool(f"{tag}_2d_ceil_112", op, (1, 2, 112, 112), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        _pool(f"{tag}_2d_ceil_no_effect", op, (1, 2, 9, 9), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        # auto_pad, resolved by canonical/base.py
        _pool(f"{tag}_2d_same_upper", op, (1, 2, 7, 8), kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_UPPER"),
        _pool(f"{tag}_2d_same_lower", op, (1, 2, 7, 8), kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_LOWER"),
        _pool(f"{tag}_2d_same_upper_s1", op, (1, 2, 6, 6), kernel_shape=[4, 4], auto_pad="SAME_UPPER"),
        _pool(f"{tag}_2d_same_lower_s1", op, (1, 2, 6, 6), kernel_shape=[4, 4], auto_pad="SAME_LOWER"),
        _pool(f"{tag}_2d_same_k1_s2", op, (1, 2, 9, 9), kernel_shape=[1, 1], strides=[2, 2], auto_pad="SAME_UPPER"),
        _pool(f"{tag}_2d_valid", op, (1, 2, 9, 8), kernel_shape=[3, 3], strides=[2, 2], auto_pad="VALID"),
        _pool(f"{tag}_2d_same_upper_opset7", op, (1, 2, 5, 5), opset=7, kernel_shape=[2, 2], auto_pad="SAME_UPPER"),
        # rows longer than pool.c combines on the stack (POOL_ROW_MAX): window rows one input row at a time
        _pool(f"{tag}_2d_long_rows", op, (1, 2, 4, 600), kernel_shape=[3, 3], strides=[1, 2], pads=[1, 1, 1, 1]),
        # 1-D and 3-D
        _pool(f"{tag}_1d", op, (2, 3, 11), kernel_shape=[3], strides=[2]),
        _pool(f"{tag}_1d_pads_ceil", op, (1, 2, 10), opset=11, kernel_shape=[4], strides=[3], pads=[2, 1],
              ceil_mode=1),
        _pool(f"{tag}_3d", op, (1, 2, 5, 6, 7), kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1]),
        # opset variants
        _pool(f"{tag}_2d_opset7", op, (1, 2, 6, 6), opset=7, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        _pool(f"{tag}_2d_opset21", op, (1, 2, 6, 6), opset=21, kernel_shape=[3, 3], strides=[2, 2],
              pads=[1, 1, 1, 1]),
    ]

# dilations: MaxPool from opset 10, AveragePool from opset 19
for op, tag, opset in (("MaxPool", "max", 10), ("AveragePool", "avg", 19)):
    CASES += [
        _pool(f"{tag}_2d_dilated", op, (1, 2, 9, 9), opset=opset, kernel_shape=[3, 3], dilations=[2, 2]),
        _pool(f"{tag}_2d_dilated_pads_strides", op, (1, 2, 10, 9), opset=opset, kernel_shape=[2, 3],
              strides=[2, 1], dilations=[3, 2], pads=[1, 2, 1, 0]),
        _pool(f"{tag}_1d_dilated_ceil", op, (1, 2, 12), opset=opset, kernel_shape=[3], strides=[2],
              dilations=[2], pads=[1, 1], ceil_mode=1),
        # with dilation a window can straddle the input without any tap in it
        _pool(f"{tag}_1d_dilated_empty_window", op, (1, 2, 1), opset=opset, kernel_shape=[2], dilations=[2],
              pads=[1, 1]),
        _pool(f"{tag}_3d_dilated", op, (1, 1, 6, 6, 6), opset=opset, kernel_shape=[2, 2, 2], dilations=[2, 1, 2],
              pads=[1, 1, 1, 1, 1, 0], ceil_mode=1, strides=[2, 2, 2]),
        _pool(f"{tag}_2d_same_k1_dilated", op, (1, 2, 7, 7), opset=opset, kernel_shape=[1, 1], strides=[2, 2],
              dilations=[2, 2], auto_pad="SAME_LOWER"),
    ]

# count_include_pad (AveragePool only): both ways, with padding and ceil windows past the padding
for cip in (0, 1):
    CASES += [
        _pool(f"avg_cip{cip}_pads", "AveragePool", (1, 2, 6, 7), kernel_shape=[3, 3], pads=[1, 2, 2, 1],
              count_include_pad=cip),
        _pool(f"avg_cip{cip}_ceil_pads", "AveragePool", (1, 2, 7, 7), opset=11, kernel_shape=[3, 3],
              strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=cip),
        _pool(f"avg_cip{cip}_ceil_past_pad", "AveragePool", (1, 2, 8, 5), opset=19, kernel_shape=[4, 3],
              strides=[3, 3], pads=[0, 1, 1, 0], ceil_mode=1, count_include_pad=cip),
        _pool(f"avg_cip{cip}_same_upper", "AveragePool", (1, 2, 7, 6), kernel_shape=[3, 4], strides=[2, 1],
              auto_pad="SAME_UPPER", count_include_pad=cip),
        _pool(f"avg_cip{cip}_1d_opset7", "AveragePool", (1, 3, 9), opset=7, kernel_shape=[4], pads=[3, 2],
              count_include_pad=cip),
        _pool(f"avg_cip{cip}_3d_ceil", "AveragePool", (1, 2, 5, 4, 6), opset=10, kernel_shape=[2, 3, 3],
              strides=[2, 2, 2], pads=[1, 0, 1, 0, 1, 1], ceil_mode=1, count_include_pad=cip),
        _pool(f"avg_cip{cip}_dilated", "AveragePool", (1, 2, 8, 9), opset=19, kernel_shape=[3, 2],
              dilations=[2, 3], pads=[2, 1, 1, 1], count_include_pad=cip),
    ]

# a window longer than the padded input still gives one output (onnxruntime rounds the size toward zero)
CASES += [
    _pool("max_window_longer_than_input", "MaxPool", (1, 2, 2, 5), kernel_shape=[4, 2], strides=[3, 2]),
    _pool("avg_window_longer_than_input", "AveragePool", (1, 2, 3, 5), kernel_shape=[5, 2], strides=[6, 2],
          pads=[1, 0, 0, 0]),
    _pool("avg_cip1_window_longer_than_input_opset19", "AveragePool", (1, 2, 2, 5), opset=19,
          kernel_shape=[4, 2], strides=[3, 2], count_include_pad=1),
]

# one window per plane inside the input (pool.c's sum in lanes): Keras's AveragePooling2D to 1 x 1 in a
# DS-CNN (24 of 25 rows), windows wider than the lanes with partial rows, 3-D, end padding the window misses
CASES += [
    _pool("avg_one_window_kws", "AveragePool", (1, 4, 25, 5), kernel_shape=[24, 5], strides=[24, 5]),
    _pool("avg_one_window_partial_rows", "AveragePool", (1, 3, 20, 37), kernel_shape=[19, 33]),
    _pool("avg_one_window_3d", "AveragePool", (1, 2, 4, 5, 6), kernel_shape=[3, 5, 4], strides=[4, 5, 6]),
    _pool("avg_one_window_end_pad_cip1", "AveragePool", (1, 2, 6, 6), kernel_shape=[5, 5], strides=[5, 5],
          pads=[0, 0, 1, 1], count_include_pad=1),
    _pool("gavg_2d_long", "GlobalAveragePool", (2, 3, 17, 19)),
]

# MaxPool over rows wider than a vector of 16 outputs (pool_avx512.h's AVX-512 path on hosts with it):
# 3 x 3 and 2 x 2 at strides 1 and 2, odd and even widths, pads 0 and 1, ceil_mode, outputs on a
# multiple of 16 (the last window reaching into the next 16's columns), and a wider window
CASES += [
    _pool("max_2d_k3s2_ceil_wide", "MaxPool", (1, 3, 13, 67), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    _pool("max_2d_k3s2_pad1_32_out", "MaxPool", (1, 2, 10, 64), kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1]),
    _pool("max_2d_k2s2_wide", "MaxPool", (2, 2, 8, 70), kernel_shape=[2, 2], strides=[2, 2]),
    _pool("max_2d_k3s1_pad1_wide", "MaxPool", (1, 2, 6, 40), kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    _pool("max_2d_k2s1_16_out", "MaxPool", (1, 2, 5, 17), kernel_shape=[2, 2]),
    _pool("max_2d_k3s1_nopad_wide", "MaxPool", (1, 2, 7, 35), kernel_shape=[3, 3]),
    _pool("max_2d_k5s2_pad2", "MaxPool", (1, 2, 9, 50), kernel_shape=[5, 5], strides=[2, 2], pads=[2, 2, 2, 2]),
    _pool("max_2d_k3s2_ceil_pad1_odd", "MaxPool", (1, 2, 11, 33), opset=12, kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1], ceil_mode=1),
]

# MaxPool specifics: storage_order alone is harmless (it only shapes the Indices output)
CASES += [
    _pool("max_2d_storage_order_no_indices", "MaxPool", (1, 2, 4, 4), opset=8, kernel_shape=[2, 2],
          storage_order=1),
    _pool("max_2d_opset8", "MaxPool", (1, 3, 8, 8), opset=8, kernel_shape=[2, 2], strides=[2, 2]),
    op_case("max_2d_negative_values", "MaxPool",
            {"x": -np.abs(np.random.default_rng(1).standard_normal((1, 2, 5, 5))).astype(np.float32) - 1.0},
            attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
]


def _indices(case_id: str, shape: tuple, opset: int = 12, x: np.ndarray | None = None, read: bool = True,
             **attrs):
    """MaxPool declaring its Indices output, read (a graph output) or not (only Y is)."""
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], name="maxpool_node", **attrs)
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if read:
        outputs.append(helper.make_tensor_value_info("i", TensorProto.INT64, None))
    graph = helper.make_graph([node], case_id, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              outputs)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32) if x is None else x
    return model_case(case_id, graph, {"x": x}, opset)


def _windows_without_winner() -> np.ndarray:
    """Windows of -inf and of NaN: each window starts from its first tap, so -inf and a leading NaN stay."""
    x = np.random.default_rng(4).standard_normal((2, 2, 6, 6)).astype(np.float32)
    x[0, 0, :2, :2] = -np.inf
    x[1, 1, 2:4, 2:4] = np.nan
    return x


# LpPool (issue 16): the p-norm of each window, as an AveragePool counting the pads, times the window size
CASES += [
    op_case("lp_2d_p2", "LpPool", {"x": (2, 3, 7, 6)}, attrs={"kernel_shape": [3, 2], "strides": [2, 1]}, opset=18),
    op_case("lp_2d_p1_pads", "LpPool", {"x": (1, 2, 5, 5)}, attrs={"kernel_shape": [3, 3], "p": 1,
                                                                  "pads": [1, 1, 1, 1]}, opset=18),
    op_case("lp_1d_p3", "LpPool", {"x": (2, 2, 9)}, attrs={"kernel_shape": [3], "p": 3}, opset=18),
    op_case("lp_2d_same_upper", "LpPool", {"x": (1, 2, 6, 7)}, attrs={"kernel_shape": [2, 3], "strides": [2, 2],
                                                                     "auto_pad": "SAME_UPPER"}, opset=11),
]

# Indices (opset 8+): the argmax as an int64 index into the flattened N x C x spatial input (with the
# batch and channel offset), row major (storage_order 0) or column major (1); first of equal values wins
CASES += [
    _indices("idx_2d_k2s2", (2, 3, 6, 6), kernel_shape=[2, 2], strides=[2, 2]),
    _indices("idx_2d_k2s2_col", (2, 3, 6, 6), kernel_shape=[2, 2], strides=[2, 2], storage_order=1),
    _indices("idx_2d_pads_col", (2, 2, 5, 7), kernel_shape=[3, 3], strides=[2, 1], pads=[1, 0, 1, 1],
             storage_order=1),
    _indices("idx_2d_pads_row", (2, 2, 5, 7), kernel_shape=[3, 3], strides=[2, 1], pads=[1, 0, 1, 1]),
    _indices("idx_2d_ceil_col", (1, 2, 7, 8), opset=10, kernel_shape=[3, 2], strides=[2, 3], ceil_mode=1,
             storage_order=1),
    _indices("idx_2d_dilated", (2, 2, 9, 8), opset=10, kernel_shape=[2, 3], dilations=[3, 2],
             pads=[1, 1, 0, 1], storage_order=1),
    _indices("idx_2d_same_upper", (1, 3, 7, 6), kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_UPPER"),
    _indices("idx_2d_opset8_col", (2, 2, 4, 6), opset=8, kernel_shape=[2, 2], storage_order=1),
    _indices("idx_2d_opset22", (1, 2, 6, 5), opset=22, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    _indices("idx_2d_ties", (2, 2, 6, 6), kernel_shape=[3, 3], strides=[1, 2], pads=[1, 1, 1, 1],
             x=np.random.default_rng(5).integers(-1, 2, (2, 2, 6, 6)).astype(np.float32)),
    _indices("idx_2d_no_winner", (2, 2, 6, 6), kernel_shape=[2, 2], strides=[2, 2], x=_windows_without_winner()),
    _indices("idx_2d_no_winner_col", (2, 2, 6, 6), kernel_shape=[2, 2], strides=[2, 2], storage_order=1,
             x=_windows_without_winner()),
    _indices("idx_1d", (2, 3, 11), kernel_shape=[3], strides=[2], pads=[1, 1]),
    _indices("idx_1d_col", (2, 3, 11), kernel_shape=[3], strides=[2], storage_order=1),
    _indices("idx_3d", (2, 2, 4, 5, 6), kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1]),
    _indices("idx_3d_col", (2, 2, 4, 5, 6), kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 1],
             storage_order=1),
    # with dilation a window can have no tap inside the input: -FLT_MAX, position -1 on each spatial dim
    _indices("idx_1d_dilated_empty_window", (1, 2, 1), opset=10, kernel_shape=[2], dilations=[2], pads=[1, 1]),
    _indices("idx_2d_dilated_empty_windows", (1, 2, 1, 4), opset=10, kernel_shape=[2, 1], dilations=[2, 1],
             pads=[1, 0, 1, 0]),
    _indices("idx_2d_dilated_empty_windows_col", (1, 2, 1, 4), opset=10, kernel_shape=[2, 1], dilations=[2, 1],
             pads=[1, 0, 1, 0], storage_order=1),
    # declared but read by nothing: dropped on import, the plain kernel runs
    _indices("idx_unread", (1, 2, 6, 6), opset=8, read=False, kernel_shape=[2, 2], storage_order=1),
]


def _declared(case_id: str, op: str, x_shape: tuple, y_shape: tuple, opset: int, **attrs):
    """A model whose output shape is declared (as in ONNX's node tests) rather than inferred."""
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], case_id, [helper.make_tensor_value_info("x", 1, x_shape)],
                              [helper.make_tensor_value_info("y", 1, y_shape)])
    x = np.random.default_rng(0).standard_normal(x_shape).astype(np.float32)
    return model_case(case_id, graph, {"x": x}, opset)


# ceil_mode dropping a last window that would start past the input: ONNX shape inference keeps it (refused
# below), but a declared output shape that drops it, as in ONNX's test_maxpool_2d_ceil_output_size_reduce_by_one,
# compiles and matches
CASES += [
    _declared("max_ceil_reduce_by_one_declared", "MaxPool", (1, 1, 2, 2), (1, 1, 1, 1), 12,
              kernel_shape=[1, 1], strides=[2, 2], ceil_mode=1),
    _declared("avg_ceil_reduce_by_one_declared", "AveragePool", (1, 2, 5, 3), (1, 2, 2, 2), 19,
              kernel_shape=[2, 2], strides=[3, 2], pads=[1, 0, 1, 1], ceil_mode=1, count_include_pad=1),
]

# global pools: any spatial rank
for op, tag in (("GlobalMaxPool", "gmax"), ("GlobalAveragePool", "gavg")):
    CASES += [
        _pool(f"{tag}_1d", op, (2, 3, 7)),
        _pool(f"{tag}_2d", op, (2, 5, 7, 9)),
        _pool(f"{tag}_3d", op, (1, 3, 4, 5, 6)),
        _pool(f"{tag}_1x1", op, (1, 4, 1, 1)),
        _pool(f"{tag}_opset7", op, (1, 3, 6, 6), opset=7),
    ]


# global pools over more than 3 spatial dims, which onnxruntime does not run: checked against numpy
SPEC_CASES = [_pool("gmax_4d_spatial", "GlobalMaxPool", (1, 2, 2, 3, 2, 3)),
              _pool("gavg_4d_spatial", "GlobalAveragePool", (2, 2, 3, 1, 2, 4))]


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES + SPEC_CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)


@pytest.mark.parametrize("case_id", [c.id for c in SPEC_CASES])
def test_global_pool_matches_numpy(built, case_id):
    x = built.cases[case_id].feeds["x"]
    (ours,) = built.run(case_id)
    reduce = np.max if case_id.startswith("gmax") else np.mean
    axes = tuple(range(2, x.ndim))
    np.testing.assert_allclose(ours, reduce(x, axis=axes, keepdims=True), rtol=1e-5, atol=1e-6)


# the float MaxPools built -march=native, as bundles are: on an AVX-512 host their 2-D windows take the kernels
# of pool_avx512.h's rows (a pool one of them is given and does not take aborts:
# runtime_c/kernels/common/paths_avx512.h); GlobalMaxPool's planes in AVX vectors (pool_global.c)
NATIVE = [c for c in CASES if c.model.graph.node[0].op_type in ("MaxPool", "GlobalMaxPool")
          and c.model.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT]


@pytest.fixture(scope="module")
def built_native():
    return shared_build(NATIVE, extra_flags=("-march=native",))


@pytest.mark.parametrize("case_id", [c.id for c in NATIVE])
def test_maxpool_matches_onnxruntime_native(built_native, case_id):
    built_native.check(case_id)


@pytest.mark.parametrize("case_id,kernel", [
    ("max_2d_k3s2_ceil_wide", "aotc_maxpool_k3s2p0_f32"), ("max_2d_k3s2_pad1_32_out", "aotc_maxpool_k3s2p1_f32"),
    ("max_2d_k2s2_wide", "aotc_maxpool_k2s2p0_f32"), ("max_2d_k3s2_ceil_pad1_odd", "aotc_maxpool_k3s2p1_f32"),
    ("max_2d_k3s1_pad1_wide", "aotc_maxpool_k3s1p1_f32"), ("max_2d_k3s1_nopad_wide", "aotc_maxpool_k3s1p0_f32"),
    ("max_2d_k2s1_16_out", "aotc_maxpool_k2s1p0_f32"),
    ("max_2d_k5s2_pad2", "aotc_maxpool_avx512_f32"),
])
def test_maxpool_kernel_on_avx512_host(case_id, kernel):
    """Each window shape's AVX-512 kernel on an AVX-512 host, aotc_maxpool_f32 elsewhere."""
    graph = lower(next(c for c in CASES if c.id == case_id).model)
    node = next(n for n in graph.nodes if n.op == "MaxPool")
    for traits, want in ((TargetTraits(), "aotc_maxpool_f32"), (TargetTraits(avx512=True), kernel)):
        assert choose(node, graph, candidates(node, graph, traits), NO_BUDGET_LIMIT).kernel == want


# --- refused at compile time ----------------------------------------------------------------

def _model(op: str, shape: tuple, opset: int = 13, outputs: tuple = ("y",), **attrs):
    return op_case("refused", op, {"x": shape}, attrs=attrs, opset=opset, outputs=list(outputs)).model


REFUSED = [
    ("same_dilated", _model("MaxPool", (1, 1, 7, 7), kernel_shape=[3, 3], dilations=[2, 2], auto_pad="SAME_UPPER"),
     "dilations"),
    ("same_negative_pad", _model("AveragePool", (1, 1, 9, 9), kernel_shape=[1, 1], strides=[5, 5],
                                 auto_pad="SAME_UPPER"), "negative padding"),
    # onnx shape inference keeps a last ceil_mode window that starts past the end; onnxruntime drops it
    ("ceil_window_past_end", _model("MaxPool", (1, 1, 2, 2), opset=10, kernel_shape=[1, 1], strides=[2, 2],
                                    ceil_mode=1), "start past the end"),
    # before opset 19 onnxruntime divides such a window by the whole kernel, from 19 on by the taps in the input
    ("avg_include_pad_window_longer_than_input", _model("AveragePool", (1, 1, 2), opset=11, kernel_shape=[4],
                                                        strides=[3], count_include_pad=1), "longer than the padded"),
    ("empty_output", _model("MaxPool", (1, 1, 2, 2), kernel_shape=[3, 1]), "no output"),
    ("pool_4d", _model("MaxPool", (1, 1, 3, 3, 3, 3), kernel_shape=[2, 2, 2, 2]), "4-D pooling"),
    ("global_rank2", _model("GlobalAveragePool", (2, 3)), "no spatial dims"),
    ("indices_storage_order_2", _indices("refused", (1, 1, 4, 4), kernel_shape=[2, 2], storage_order=2).model,
     "storage_order 2 is not valid"),
]


@pytest.mark.parametrize("case_id,model,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused(case_id, model, message):
    with pytest.raises(AotcError, match=message):
        compile_model(model)

