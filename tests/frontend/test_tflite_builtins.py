"""Issue 50's last builtins, against LiteRT on models written with the schema (tflite_written.py): quantized
FLOOR_DIV / FLOOR_MOD on the raw integers as LiteRT computes them, and int32 FLOOR_DIV; and (issue 64) quantized
MEAN over any adjacent axes (the converter's int8 LayerNormalization)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import tiered
from modelcheck import aotc, build_bundle, run_bundle
from tflite_reference import reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tflite import _require_litert  # noqa: E402
from tflite_written import Written, compare  # noqa: E402


# the fast tier builds nothing under the sanitizers (tests/README.md): the cases without them stand for the rest
@pytest.mark.parametrize("op", tiered(["FLOOR_DIV", "FLOOR_MOD"], {"FLOOR_DIV"}))
@pytest.mark.parametrize("dtype", tiered(["int8", "int16", "int32"], {"int32"}))
def test_floor_div_mod_integers(tmp_path, op, dtype):
    """int8 and int16 (quantized, scales unlike) and int32: every output bit for bit as BUILTIN_REF, the
    extremes of the type, a broadcast divisor, mixed signs (not the least value // -1: out of the type, LiteRT's
    double-to-integer cast of it is undefined, and its loops disagree)."""
    _require_litert()
    info = np.iinfo(np.dtype(dtype))
    quant = dtype != "int32"
    w = Written()
    a = w.tensor([2, 3, 8], dtype, quant=(0.05, -3 if dtype == "int8" else 0) if quant else None)
    b = w.tensor([3, 8], dtype, quant=(0.04, 5 if dtype == "int8" else 0) if quant else None)
    y = w.tensor([2, 3, 8], dtype, quant=(0.07, 1 if dtype == "int8" else 0) if quant else None)
    w.op(op, [a, b], [y])
    model = w.save(tmp_path / "m.tflite", [a, b], [y])
    rng = np.random.default_rng(1)
    lo, hi = max(info.min, -40000), min(info.max, 40000)
    xa = rng.integers(lo, hi + 1, (2, 3, 8)).astype(dtype)
    xb = rng.integers(-9, 10, (3, 8)).astype(dtype)
    xb[xb == 0] = 7
    xa[0, 0, :4] = [info.min, info.min, info.max, 0]
    xb[0, :4] = [-2, 1, -1, -3]
    xb[1, :3] = [info.max, info.min, info.min + 1] if dtype != "int32" else [3, -3, 5]
    compare(model, [xa, xb], sanitize=dtype == "int8")


# (operand shape, indices shape, options, result shape): StableHLO gather dimension numbers LiteRT runs
GATHERS = {
    # torch.index_select / tf.gather along axis 0: one index per row, index_vector_dim past the last
    "rows": ([5, 3], [4], dict(offsetDims=[1], collapsedSliceDims=[0], startIndexMap=[0], indexVectorDim=1,
                               sliceSizes=[1, 3]), [4, 3]),
    # gather_nd: index vectors in the last dimension, points of a 3-D operand
    "points": ([4, 5, 6], [2, 3, 2], dict(offsetDims=[2], collapsedSliceDims=[0, 1], startIndexMap=[0, 1],
                                           indexVectorDim=2, sliceSizes=[1, 1, 6]), [2, 3, 6]),
    # windows (no collapsed dims) whose starts LiteRT clips into the operand, index_vector_dim first,
    # start_index_map reordered, offset dims before the batch dim
    "windows": ([6, 7], [2, 3], dict(offsetDims=[0, 1], collapsedSliceDims=[], startIndexMap=[1, 0], indexVectorDim=0,
                                     sliceSizes=[2, 3]), [2, 3, 3]),
    # one start component for dim 1 only (dim 0 from 0), offset dim in the middle
    "middle": ([3, 8, 2], [2, 2, 1], dict(offsetDims=[2, 3], collapsedSliceDims=[1], startIndexMap=[1],
                                          indexVectorDim=2, sliceSizes=[3, 1, 2]), [2, 2, 3, 2]),
}


@pytest.mark.parametrize("index_type", tiered(["int32", "int64"], {"int32"}))
@pytest.mark.parametrize("case", tiered(sorted(GATHERS), {"rows", "points"}))
def test_stablehlo_gather(tmp_path, case, index_type):
    """STABLEHLO_GATHER against BUILTIN_REF: run-time float operand and indices, indices past both ends (clipped
    as LiteRT clips them)."""
    _require_litert()
    shape, ishape, opts, yshape = GATHERS[case]
    w = Written()
    x, i, y = w.tensor(shape, "float32"), w.tensor(ishape, index_type), w.tensor(yshape, "float32")
    w.op("STABLEHLO_GATHER", [x, i], [y], ("StablehloGatherOptions", opts))
    model = w.save(tmp_path / "m.tflite", [x, i], [y])
    rng = np.random.default_rng(2)
    compare(model, [rng.standard_normal(shape).astype(np.float32),
                    rng.integers(-3, max(shape) + 3, ishape).astype(index_type)], sanitize=index_type == "int64")


# (operand, indices, updates, options)
SCATTERS = {
    "rows": ([5, 3], [4, 1], [4, 3], dict(updateWindowDims=[1], insertedWindowDims=[0], scatterDimsToOperandDims=[0],
                                          indexVectorDim=1)),
    "points": ([4, 5], [3, 2], [3], dict(updateWindowDims=[], insertedWindowDims=[0, 1],
                                         scatterDimsToOperandDims=[0, 1], indexVectorDim=1)),
    # whole windows, some partly past the operand's end (LiteRT writes the elements inside), index vectors first
    "windows": ([6, 7], [2, 2], [3, 2, 4], dict(updateWindowDims=[0, 2], insertedWindowDims=[],
                                                scatterDimsToOperandDims=[1, 0], indexVectorDim=0)),
    # index_vector_dim in the middle: one component, for operand dim 1; a batch of 2 x 2 (LiteRT's kernel crashes
    # on an index_vector_dim past the indices' last dimension, which aotc takes)
    "middle": ([3, 6], [2, 1, 2], [2, 3, 2], dict(updateWindowDims=[1], insertedWindowDims=[1],
                                                  scatterDimsToOperandDims=[1], indexVectorDim=1)),
}


def _scatter_region(w: Written, dtype: str, body: str | None) -> int:
    """A scatter's update computation as a new subgraph: (old, update) -> body(old, update), or the update alone
    (body None: a plain overwrite); returns its subgraph index."""
    region = w.subgraph()
    a, c = w.tensor([], dtype, sg=region), w.tensor([], dtype, sg=region)
    region.inputs = [a, c]
    if body is None:
        region.outputs = [c]
    else:
        r = w.tensor([], dtype, sg=region)
        w.op(body, [a, c], [r], sg=region)
        region.outputs = [r]
    return len(w.m.subgraphs) - 1


def _scatter_model(tmp_path: Path, case: str, body: str | None, dtype: str, index_type: str) -> Path:
    shape, ishape, ushape, opts = SCATTERS[case]
    w = Written()
    x, i, u, y = (w.tensor(shape, dtype), w.tensor(ishape, index_type), w.tensor(ushape, dtype),
                  w.tensor(shape, dtype))
    w.op("STABLEHLO_SCATTER", [x, i, u], [y],
         ("StablehloScatterOptions", {**opts, "updateComputationSubgraphIndex": _scatter_region(w, dtype, body)}))
    return w.save(tmp_path / "m.tflite", [x, i, u], [y])


_BODIES = (None, "STABLEHLO_ADD", "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM", "STABLEHLO_MINIMUM")


# the full tier every case with a plain update and with ADD, and each other region on "rows"; all with --tier all;
# the fast tier a plain update of rows and of points
@pytest.mark.parametrize(("case", "body"), [
    pytest.param(c, r, marks=() if r is None and c in ("rows", "points") else pytest.mark.full
                 if r in _BODIES[:2] or c == "rows" else pytest.mark.slow)
    for c in sorted(SCATTERS) for r in _BODIES])
def test_stablehlo_scatter(tmp_path, case, body):
    """STABLEHLO_SCATTER against BUILTIN_REF, each update computation region LiteRT takes (none: replace; one
    STABLEHLO_ADD / _MULTIPLY / _MAXIMUM / _MINIMUM): repeated targets (applied in order), targets past the operand's
    end (skipped, element by element)."""
    _require_litert()
    shape, ishape, ushape, _ = SCATTERS[case]
    model = _scatter_model(tmp_path, case, body, "float32", "int32")
    rng = np.random.default_rng(3)
    idx = rng.integers(0, max(shape) + 2, ishape).astype(np.int32)
    compare(model, [rng.standard_normal(shape).astype(np.float32), idx, rng.standard_normal(ushape).astype(np.float32)],
            sanitize=body == "STABLEHLO_ADD")


@pytest.mark.parametrize("dtype", tiered(["int8", "int32"], {"int8"}))
def test_stablehlo_scatter_integers(tmp_path, dtype):
    """A plain update of integers, int64 indices, bit for bit."""
    _require_litert()
    model = _scatter_model(tmp_path, "rows", None, dtype, "int64")
    rng = np.random.default_rng(4)
    compare(model, [rng.integers(-100, 100, [5, 3]).astype(dtype), np.array([[1], [4], [9], [1]], np.int64),
                    rng.integers(-100, 100, [4, 3]).astype(dtype)])


@pytest.mark.full
@pytest.mark.parametrize("body", ["STABLEHLO_ADD", "STABLEHLO_MAXIMUM"])
@pytest.mark.parametrize("dtype", ["int8", "int32"])
def test_stablehlo_scatter_integer_computations(tmp_path, dtype, body):
    """ADD and MAXIMUM regions on integers against BUILTIN_REF: values over the whole range, so sums wrap (two's
    complement, as LiteRT's), repeated targets, one past the operand's end; built with the sanitizers."""
    _require_litert()
    model = _scatter_model(tmp_path, "rows", body, dtype, "int32")
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    compare(model, [rng.integers(info.min, info.max, [5, 3], dtype=dtype, endpoint=True),
                    np.array([[1], [4], [1], [7]], np.int32),
                    rng.integers(info.min, info.max, [4, 3], dtype=dtype, endpoint=True)], sanitize=True)

@pytest.mark.full
def test_scatter_nd_integer_sums(tmp_path):
    """SCATTER_ND (zeros with the updates added, ScatterND's add) on int32 against BUILTIN_REF: a repeated index
    sums, wrapping as LiteRT's sum does; built with the sanitizers."""
    _require_litert()
    w = Written()
    i, u = w.tensor([5, 1], "int32"), w.tensor([5, 3], "int32")
    s, y = w.tensor([2], "int32", data=np.array([4, 3], np.int32)), w.tensor([4, 3], "int32")
    w.op("SCATTER_ND", [i, u, s], [y])
    model = w.save(tmp_path / "m.tflite", [i, u], [y])
    info = np.iinfo(np.int32)
    compare(model, [np.array([[1], [3], [1], [0], [1]], np.int32),
                    np.random.default_rng(6).integers(info.min, info.max, [5, 3], dtype=np.int32, endpoint=True)],
            sanitize=True)

@pytest.mark.parametrize(("op", "dtype"), tiered([("STABLEHLO_AND", "bool"), ("STABLEHLO_AND", "int8"),
                                                  ("STABLEHLO_AND", "int32"), ("STABLEHLO_SHIFT_LEFT", "int8"),
                                                  ("STABLEHLO_SHIFT_LEFT", "int16"), ("STABLEHLO_SHIFT_LEFT", "int32")],
                                                 {("STABLEHLO_AND", "int8"), ("STABLEHLO_SHIFT_LEFT", "int16")}))
def test_stablehlo_bitwise(tmp_path, op, dtype):
    """STABLEHLO_AND and _SHIFT_LEFT against LiteRT's default kernels (its reference resolver has neither): negative
    values, shift amounts over the whole range LiteRT defines ([0, 31]: int8 and int16 truncate to 0 from their
    width up), bit for bit."""
    _require_litert()
    w = Written()
    a, c, y = w.tensor([3, 16], dtype), w.tensor([3, 16], dtype), w.tensor([3, 16], dtype)
    w.op(op, [a, c], [y])
    model = w.save(tmp_path / "m.tflite", [a, c], [y])
    rng = np.random.default_rng(5)
    if dtype == "bool":
        xa, xc = rng.integers(0, 2, (3, 16)).astype(bool), rng.integers(0, 2, (3, 16)).astype(bool)
    else:
        info = np.iinfo(dtype)
        xa = rng.integers(info.min, info.max + 1, (3, 16)).astype(dtype)
        xc = (rng.integers(0, 32, (3, 16)) if op == "STABLEHLO_SHIFT_LEFT"
              else rng.integers(info.min, info.max + 1, (3, 16))).astype(dtype)
    compare(model, [xa, xc], builtin=True, sanitize=dtype == "int32")


@pytest.mark.parametrize(("lo", "hi", "bits"), tiered([(-1.0, 1.0, 8), (-0.3, 2.7, 8), (0.1, 3.0, 4), (-6.0, -0.5, 16),
                                                       (-2.0, 1.5, 2)], {(0.1, 3.0, 4)}))
def test_fake_quant(tmp_path, lo, hi, bits):
    """FAKE_QUANT against BUILTIN_REF: ranges nudged to put 0 on the grid (both ends excluding 0 too), values
    outside the range, exact ties of the grid (rounded away from zero)."""
    _require_litert()
    from aot.frontend.tflite.resolver import fake_quant_range

    w = Written()
    x, y = w.tensor([4, 64], "float32"), w.tensor([4, 64], "float32")
    w.op("FAKE_QUANT", [x], [y], ("FakeQuantOptions", {"min": lo, "max": hi, "numBits": bits, "narrowRange": False}))
    model = w.save(tmp_path / "m.tflite", [x], [y])
    rng = np.random.default_rng(6)
    xs = rng.uniform(lo - 1, hi + 1, (4, 64)).astype(np.float32)
    nlo, _, scale = fake_quant_range(lo, hi, bits)
    xs[0] = nlo + (np.arange(64, dtype=np.float32) + np.float32(0.5)) * scale  # halfway between steps
    compare(model, [xs])


@pytest.mark.parametrize("combiner", tiered([0, 1, 2], {1}))
@pytest.mark.parametrize("rank", tiered([2, 3], {3}))
def test_embedding_lookup_sparse(tmp_path, combiner, rank):
    """EMBEDDING_LOOKUP_SPARSE (SUM, MEAN, SQRTN) against BUILTIN_REF: run-time ids, indices and weights in the
    sparse tensor's canonical order, a 3-D table, empty output rows, repeated ids, within 1e-5."""
    _require_litert()
    dense = [3, 4] if rank == 2 else [2, 3, 5]
    n = 9
    w = Written()
    ids, ind = w.tensor([n], "int32"), w.tensor([n, rank], "int32")
    shp = w.tensor([rank], "int32", data=np.array(dense, np.int32))
    wt = w.tensor([n], "float32")
    value = w.tensor([6, 2, 3], "float32", data=np.random.default_rng(7).standard_normal([6, 2, 3]))
    y = w.tensor([*dense[:-1], 2, 3], "float32")
    w.op("EMBEDDING_LOOKUP_SPARSE", [ids, ind, shp, wt, value], [y], ("EmbeddingLookupSparseOptions",
                                                                      {"combiner": combiner}))
    model = w.save(tmp_path / "m.tflite", [ids, ind, wt], [y])
    rng = np.random.default_rng(8)
    buckets = int(np.prod(dense[:-1]))
    flat = np.sort(rng.choice(np.delete(np.arange(buckets), 1), n))  # row 1 empty; sorted, some repeated
    lead = np.stack(np.unravel_index(flat, dense[:-1]), axis=1)
    indices = np.concatenate([lead, rng.integers(0, dense[-1], (n, 1))], axis=1).astype(np.int32)
    compare(model, [rng.integers(0, 6, n).astype(np.int32), indices, rng.uniform(0.1, 2, n).astype(np.float32)])


@pytest.mark.parametrize("index", tiered([0, 1, 2, -1, 7], {1, 7}))
def test_stablehlo_case(tmp_path, index):
    """STABLEHLO_CASE of three branches (ADD, MUL, and one passing an input through) against LiteRT's default
    kernels (its reference resolver has none), the run-time index in range and out of it (the last branch)."""
    _require_litert()
    w = Written()
    i, x, c = w.tensor([], "int32"), w.tensor([2, 5], "float32"), w.tensor([2, 5], "float32")
    y = w.tensor([2, 5], "float32")
    branches = []
    for op in ("ADD", "MUL", None):
        sg = w.subgraph()
        a, d = w.tensor([2, 5], "float32", sg=sg), w.tensor([2, 5], "float32", sg=sg)
        sg.inputs = [a, d]
        if op is None:
            sg.outputs = [d]
        else:
            r = w.tensor([2, 5], "float32", sg=sg)
            w.op(op, [a, d], [r], sg=sg, options=(f"{op.title()}Options", {}))
            sg.outputs = [r]
        branches.append(len(w.m.subgraphs) - 1)
    w.op("STABLEHLO_CASE", [i, x, c], [y], ("StablehloCaseOptions", {"branchSubgraphIndices": branches}))
    model = w.save(tmp_path / "m.tflite", [i, x, c], [y])
    rng = np.random.default_rng(9)
    compare(model, [np.array(index, np.int32), rng.standard_normal([2, 5]).astype(np.float32),
                    rng.standard_normal([2, 5]).astype(np.float32)], builtin=True)


@pytest.mark.parametrize("dtype", tiered(["int8", "int16"], {"int8"}))
def test_stablehlo_gather_quantized_constant_indices(tmp_path, dtype):
    """A quantized operand (int8, 16x8's int16) gathered by constant indices (folded into one Gather), then
    scattered back by a plain update: LiteRT moves the raw integers, bit for bit as BUILTIN_REF."""
    _require_litert()
    q = (0.05, -3 if dtype == "int8" else 0)
    w = Written()
    x = w.tensor([5, 4], dtype, quant=q)
    idx = w.tensor([3, 1], "int32", data=np.array([[4], [0], [2]], np.int32))
    g = w.tensor([3, 4], dtype, quant=q)
    w.op("STABLEHLO_GATHER", [x, idx], [g], ("StablehloGatherOptions", dict(
        offsetDims=[1], collapsedSliceDims=[0], startIndexMap=[0], indexVectorDim=1, sliceSizes=[1, 4])))
    y = w.tensor([5, 4], dtype, quant=q)
    region = w.subgraph()
    a, c = w.tensor([], dtype, sg=region), w.tensor([], dtype, sg=region)
    region.inputs, region.outputs = [a, c], [c]
    idx2 = w.tensor([3, 1], "int32", data=np.array([[1], [3], [1]], np.int32))
    w.op("STABLEHLO_SCATTER", [x, idx2, g], [y], ("StablehloScatterOptions", dict(
        updateWindowDims=[1], insertedWindowDims=[0], scatterDimsToOperandDims=[0], indexVectorDim=1,
        updateComputationSubgraphIndex=1)))
    model = w.save(tmp_path / "m.tflite", [x], [g, y])
    info = np.iinfo(dtype)
    compare(model, [np.random.default_rng(10).integers(info.min, info.max + 1, [5, 4]).astype(dtype)])


def _refusal(tmp_path: Path, w: Written, ins: list[int], outs: list[int]) -> str:
    model = w.save(tmp_path / "m.tflite", ins, outs)
    run = aotc(model, "-o", tmp_path / "out", "--no-configure", check=False)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    return run.stderr


@pytest.mark.parametrize(("case", "says"), [
    ("STABLEHLO_ABS", "LiteRT has no kernel for it"),
    ("DENSIFY", "LiteRT's kernel takes a constant sparse tensor only"),
    ("FAKE_QUANT", "narrow_range"),
    ("STABLEHLO_SCATTER", "add computation on bool is not supported"),
    ("LSH_PROJECTION", "SPARSE of 32 bits"),
    ("RANDOM_UNIFORM", "seed and seed2 are 0: LiteRT seeds it from the clock"),
    ("RANDOM_STANDARD_NORMAL", "seed and seed2 are 0: LiteRT seeds it from the clock"),
    ("MULTINOMIAL", "seed and seed2 are 0: LiteRT seeds it from the clock"),
])
def test_refused_in_one_line(tmp_path, case, says):
    """What LiteRT has no kernel for, refuses itself, or aotc does not do yet: one line naming the op, exit 2."""
    pytest.importorskip("ai_edge_litert")
    w = Written()
    dtype = "bool" if case == "STABLEHLO_SCATTER" else "float32"
    x, y = w.tensor([2, 3], dtype), w.tensor([2, 3], dtype)
    ins = [x]
    if case == "FAKE_QUANT":
        w.op(case, [x], [y], ("FakeQuantOptions", {"min": -1.0, "max": 1.0, "numBits": 8, "narrowRange": True}))
    elif case == "STABLEHLO_SCATTER":
        i, u = w.tensor([1, 1], "int32"), w.tensor([1, 3], dtype)
        region = w.subgraph()
        a, c, r = (w.tensor([], dtype, sg=region) for _ in range(3))
        w.op("STABLEHLO_ADD", [a, c], [r], sg=region)
        region.inputs, region.outputs = [a, c], [r]
        w.op(case, [x, i, u], [y], ("StablehloScatterOptions", dict(
            updateWindowDims=[1], insertedWindowDims=[0], scatterDimsToOperandDims=[0], indexVectorDim=1,
            updateComputationSubgraphIndex=1)))
        ins = [x, i, u]
    elif case == "LSH_PROJECTION":
        h, y = w.tensor([2, 32], "float32", data=np.ones([2, 32], np.float32)), w.tensor([2], "int32")
        w.op(case, [h, x], [y], ("LSHProjectionOptions", {"type": 1}))
    else:
        w.op(case, [x], [y])
    err = _refusal(tmp_path, w, ins, [y])
    assert case in err and says in err, err


# LSH_PROJECTION's inputs: (dtype, row shape) putting the key (4 seed bytes + a row) in each of farmhash
# Fingerprint64's length classes: 4-7 and 8-16 bytes, 17-32, 33-64, and blocks of 64 past it (68, 128, 132, 164)
_LSH_ROWS = [("int8", [2]), ("float32", [1]), ("float32", [3]), ("float32", [4]), ("int32", [7]), ("float32", [8]),
             ("float32", [15]), ("float32", [16]), ("int32", [31]), ("float32", [2, 16]), ("float32", [40])]


@pytest.mark.parametrize("weighted", tiered([False, True], {False}))
def test_lsh_projection(tmp_path, weighted):
    """LSH_PROJECTION SPARSE and DENSE against BUILTIN_REF bit for bit: one model of one op a row size (int8,
    int32 and float32 inputs; keys of every farmhash length class), 8 x 16 seeds (DENSE) and 6 x 12 (SPARSE)
    each, and SPARSE of 31 bits and DENSE of 32; a single row (each bit the sign of one Fingerprint64) and several;
    weighted under ASan/UBSan."""
    _require_litert()
    rng = np.random.default_rng(50 + weighted)
    w = Written()
    ins, outs, feeds = [], [], []
    # and the widest: SPARSE of 31 bits (the offsets i * 2^31 wrap in int32, as LiteRT's), DENSE of 32
    for k, (dtype, row) in enumerate([*_LSH_ROWS, ("float32", [5]), ("float32", [6])]):
        rows = 1 if k % 3 == 0 else 3 + k % 4
        sparse = k % 2 == 0
        num_hash, num_bits = (6, 12) if sparse else (8, 16)
        if k >= len(_LSH_ROWS):
            num_hash, num_bits = (5, 31) if sparse else (3, 32)
        seeds = rng.standard_normal([num_hash, num_bits]).astype(np.float32) * 10
        h = w.tensor([num_hash, num_bits], "float32", data=seeds)
        x = w.tensor([rows, *row], dtype)
        wt = w.tensor([rows], "float32") if weighted else -1
        y = w.tensor([num_hash if sparse else num_hash * num_bits], "int32")
        w.op("LSH_PROJECTION", [h, x, wt] if weighted else [h, x], [y],
             ("LSHProjectionOptions", {"type": 1 if sparse else 2}))
        ins += [x] + ([wt] if weighted else [])
        outs.append(y)
        if dtype == "float32":
            feeds.append(rng.standard_normal([rows, *row]).astype(np.float32))
        else:
            info = np.iinfo(np.dtype(dtype))
            feeds.append(rng.integers(info.min, info.max, [rows, *row], endpoint=True).astype(dtype))
        if weighted:
            feeds.append(rng.uniform(-2, 2, rows).astype(np.float32))
    model = w.save(tmp_path / "m.tflite", ins, outs)
    compare(model, feeds, sanitize=weighted)


# RFFT2D cases: (input shape, fft_length) -- equal, cropped, padded, cropped rows and padded columns, batch dims,
# one row (tf.signal.stft's frames), and the least lengths (1 row, 2 columns)
_RFFT2D = [([8, 16], [8, 16]), ([2, 6, 20], [4, 16]), ([3, 5], [8, 8]), ([1, 5, 3], [4, 8]), ([2, 3, 4, 8], [4, 8]),
           ([2, 1, 64], [1, 64]), ([2, 3], [1, 2]), ([4, 2], [2, 2])]


@pytest.mark.full
def test_rfft2d_complex_abs_real_imag(tmp_path):
    """RFFT2D (complex64 held as float32 (re, im) pairs: DFTs along the last two axes) read by COMPLEX_ABS, REAL
    and IMAG, and through a RESHAPE, within 1e-5 of BUILTIN_REF's output scale, under ASan/UBSan: fft_length equal
    to, smaller than (cropped) and larger than (zero-padded) the input, batch dimensions, lengths of 1 and 2 (the
    powers of two LiteRT's fft2d requires: other lengths are refused by LiteRT and so by aotc)."""
    _require_litert()
    rng = np.random.default_rng(50)
    w = Written()
    ins, outs, feeds = [], [], []
    for k, (shape, fl) in enumerate(_RFFT2D):
        x = w.tensor(shape, "float32")
        c_shape = [*shape[:-2], fl[0], fl[1] // 2 + 1]
        c = w.tensor(c_shape, "complex64")
        w.op("RFFT2D", [x, w.tensor([2], "int32", data=np.array(fl, np.int32))], [c])
        readers = ["COMPLEX_ABS", "REAL", "IMAG"] if k % 2 == 0 else ["COMPLEX_ABS"]
        for op in readers:
            y = w.tensor(c_shape, "float32")
            w.op(op, [c], [y])
            outs.append(y)
        if k == 1:  # a complex tensor reshaped, then read
            flat = [c_shape[0], int(np.prod(c_shape[1:]))]
            r, y = w.tensor(flat, "complex64"), w.tensor(flat, "float32")
            w.op("RESHAPE", [c, w.tensor([2], "int32", data=np.array(flat, np.int32))], [r],
                 ("ReshapeOptions", {"newShape": flat}))
            w.op("IMAG", [r], [y])
            outs.append(y)
        ins.append(x)
        feeds.append(rng.standard_normal(shape).astype(np.float32) * (1 + k))
    model = w.save(tmp_path / "m.tflite", ins, outs)
    compare(model, feeds, sanitize=True)


@pytest.mark.parametrize(("case", "says"), [
    ("not_pow2", "not a pair of powers of two"),
    ("one_column", "fft_length of 1 column"),
    ("output", "complex64 graph output"),
    ("input", "a graph input"),
    ("other_op", "ADD of complex64 tensor"),
])
def test_complex64_refused_in_one_line(tmp_path, case, says):
    """complex64 stays inside the graph: a complex graph input or output, or a complex tensor another op reads, is
    refused naming the op; so is an fft_length LiteRT's kernel refuses (not powers of two) or gets wrong (1 column:
    fft2d's rdft reads a second sample)."""
    pytest.importorskip("ai_edge_litert")
    w = Written()
    x = w.tensor([6, 6], "float32")
    fl = {"not_pow2": [6, 6], "one_column": [2, 1]}.get(case, [8, 8])
    c = w.tensor([fl[0], fl[1] // 2 + 1], "complex64")
    y = w.tensor([fl[0], fl[1] // 2 + 1], "float32")
    ins, outs = [x], [y]
    if case == "input":
        ins, outs = [c], [y]
        w.op("REAL", [c], [y])
    else:
        w.op("RFFT2D", [x, w.tensor([2], "int32", data=np.array(fl, np.int32))], [c])
        if case == "other_op":
            s = w.tensor([fl[0], fl[1] // 2 + 1], "complex64")
            w.op("ADD", [c, c], [s], ("AddOptions", {}))
            w.op("REAL", [s], [y])
        elif case == "output":
            outs = [c]
        else:
            w.op("COMPLEX_ABS", [c], [y])
    err = _refusal(tmp_path, w, ins, outs)
    assert says in err, err


# (output shape, seed, seed2): sizes not a multiple of 4 (a last Philox block cut short) and one that is; seed only,
# seed2 only, both. LiteRT keeps the file's int64 seeds in ints: negative ones sign-extend (both words of key and
# counter set), 2**40 + 3 is 3 and 2**33 + 1 is 1, 2**32 - 5 is -5
_RANDOMS = [([3, 5], 7, 0), ([7], 0, 11), ([2, 3, 3], -5, 2**40 + 3), ([1], 2**33 + 1, -9), ([4, 4], 123, 456),
            ([5, 1], 0, 2**32 - 5)]

_LITERT_RUNS = """
import sys, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
it = Interpreter(model_path=sys.argv[1], experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
it.allocate_tensors()
feeds, outs = np.load(sys.argv[3]), {}
for r in range(int(sys.argv[4])):
    for k, d in enumerate(it.get_input_details()):
        it.set_tensor(d["index"], feeds[f"run{r}_input_{k}"])
    it.invoke()
    for k, d in enumerate(it.get_output_details()):
        outs[f"run{r}_output_{k}"] = it.get_tensor(d["index"]).copy()
np.savez(sys.argv[2], **outs)
"""


def _streams_like_litert(tmp_path: Path, model: Path, runs: list[list[np.ndarray]], sanitize: bool) -> dict:
    """len(runs) calls of `model`'s bundle (built -Werror, with `sanitize` under ASan/UBSan), each fed the run's
    inputs and the state the call before left (the first call's left to `aotc run`, which starts it from the
    metadata's start value), against as many invokes of one BUILTIN_REF interpreter: every output bit for bit.
    LiteRT's outputs, by f"run{r}_output_{k}"."""
    import subprocess

    np.savez(tmp_path / "feeds.npz",
             **{f"run{r}_input_{k}": v for r, run in enumerate(runs) for k, v in enumerate(run)})
    subprocess.run([sys.executable, "-c", _LITERT_RUNS, str(model), str(tmp_path / "ref.npz"),
                    str(tmp_path / "feeds.npz"), str(len(runs))], check=True)
    ref = np.load(tmp_path / "ref.npz")
    out = tmp_path / "out"
    meta = build_bundle(model, out, sanitize=sanitize)
    data = [s for s in meta["inputs"] if "state" not in s]
    states = [s for s in meta["inputs"] if "state" in s]
    assert [s["dtype"] for s in states] == ["uint32"] * len(states) and states
    n_out = len(meta["outputs"]) - len(states)
    carried: dict[str, np.ndarray] = {}
    for r, run in enumerate(runs):
        res = run_bundle(out, {s["name"]: v for s, v in zip(data, run, strict=True)} | carried)
        for k, spec in enumerate(meta["outputs"][:n_out]):
            got, want = res[spec["name"]], ref[f"run{r}_output_{k}"]
            assert got.shape == want.shape and got.dtype == want.dtype, (r, k, got.shape, want.shape, got.dtype)
            bits = f"u{got.itemsize}"
            assert np.array_equal(got.view(bits), want.view(bits)), \
                f"call {r}, output {k}: {(got != want).sum()} of {want.size} differ"
        carried = {s["name"]: res[s["state"]["next"]] for s in states}
    return ref


@pytest.mark.parametrize("op", tiered(["RANDOM_UNIFORM", "RANDOM_STANDARD_NORMAL"], {"RANDOM_UNIFORM"}))
def test_random_seeded_streams_like_litert(tmp_path, op):
    """RANDOM_UNIFORM / RANDOM_STANDARD_NORMAL with a seed: one model of six ops (_RANDOMS), three calls of the
    bundle, each op's Philox counter carried from one call's `<out>_state_next` to the next's `<out>_state`,
    against three invokes of one BUILTIN_REF interpreter, bit for bit (the normal's logf / sinf / cosf are the
    same libm's); the normal built under ASan/UBSan."""
    _require_litert()
    w = Written()
    outs = []
    for shape, seed, seed2 in _RANDOMS:
        s = w.tensor([len(shape)], "int32", data=np.array(shape, np.int32))
        y = w.tensor(shape, "float32")
        w.op(op, [s], [y], ("RandomOptions", {"seed": seed, "seed2": seed2}))
        outs.append(y)
    model = w.save(tmp_path / "m.tflite", [], outs)
    ref = _streams_like_litert(tmp_path, model, [[], [], []], sanitize=op == "RANDOM_STANDARD_NORMAL")
    assert not np.array_equal(ref["run0_output_0"], ref["run1_output_0"])  # the stream moved on


# (batch, classes, num_samples, seed, seed2, output type)
_MULTINOMIALS = [(2, 5, 7, 7, 0, "int64"), (3, 4, 10, 0, 11, "int32"), (1, 9, 1, -5, 2**40 + 3, "int64"),
                 (4, 3, 6, 123, 456, "int32"), (2, 6, 2, 9, 9, "int32")]


@pytest.mark.full
def test_multinomial_seeded_streams_like_litert(tmp_path):
    """MULTINOMIAL with a seed: one model of five ops (_MULTINOMIALS: int32 and int64 draws, an odd number a row so
    a Philox block serves two rows, one draw), run-time logits with a -inf and a +inf (both left out of the
    sums, as LiteRT's) and a row of all -inf (every draw `classes`), three calls against three invokes, bit for
    bit; under ASan/UBSan."""
    _require_litert()
    rng = np.random.default_rng(51)
    w = Written()
    ins, outs = [], []
    for batch, classes, samples, seed, seed2, dtype in _MULTINOMIALS:
        x = w.tensor([batch, classes], "float32")
        n = w.tensor([], "int32", data=np.array(samples, np.int32))
        y = w.tensor([batch, samples], dtype)
        w.op("MULTINOMIAL", [x, n], [y], ("RandomOptions", {"seed": seed, "seed2": seed2}))
        ins.append(x)
        outs.append(y)
    model = w.save(tmp_path / "m.tflite", ins, outs)
    runs = []
    for _ in range(3):
        run = [(rng.standard_normal([b, c]) * 2).astype(np.float32) for b, c, *_ in _MULTINOMIALS]
        run[0][0, 1], run[0][1, 2] = -np.inf, np.inf
        run[3][2, :] = -np.inf
        runs.append(run)
    _streams_like_litert(tmp_path, model, runs, sanitize=True)


# STABLEHLO_RNG_BIT_GENERATOR's ops of one model: (algorithm, state input, output dtype, output shape). States a (2
# words) and b (3 words) random, c (2) and d (3) with their counters about to carry into the high word (c) and
# to wrap past 2^64 (d; Philox's upper counter words stay); sizes whole blocks, short last blocks, one element, and
# past the AVX2 paths' 8 blocks (65 and 38 words)
_RNG_ALGORITHMS = {"DEFAULT": 0, "PHILOX": 1, "THREEFRY": 2}
_RNG_BITS = [("DEFAULT", "a", "uint32", [2, 5]), ("DEFAULT", "b", "int64", [3]), ("PHILOX", "b", "uint32", [7]),
             ("PHILOX", "a", "int32", [4, 4]), ("PHILOX", "c", "uint64", [3, 1, 3]), ("PHILOX", "d", "int32", [9]),
             ("PHILOX", "d", "uint64", [1]), ("DEFAULT", "c", "int32", [1]), ("THREEFRY", "a", "uint32", [7]),
             ("THREEFRY", "c", "int32", [2, 3]), ("THREEFRY", "a", "int64", [5]), ("THREEFRY", "c", "uint64", [2, 2]),
             ("THREEFRY", "a", "uint32", [1]), ("PHILOX", "b", "uint32", [5, 13]), ("THREEFRY", "c", "int64", [19])]


@pytest.mark.full
def test_rng_bit_generator_like_litert(tmp_path):
    """STABLEHLO_RNG_BIT_GENERATOR against BUILTIN_REF, bit for bit, outputs and output states, in one model (one
    bundle of 19 ops, under ASan/UBSan): every algorithm (DEFAULT is Philox) and output dtype LiteRT takes,
    Philox's 2- and 3-word states, run-time states (_RNG_BITS) and a constant one, and a state passed on from one op to
    the next (Philox's output state into ThreeFry, then ThreeFry's into Philox) as a JAX program threads it."""
    _require_litert()
    w = Written()
    states = {k: w.tensor([n], "uint64") for k, n in (("a", 2), ("b", 3), ("c", 2), ("d", 3))}
    outs = []

    def rng(algorithm: str, state: int, dtype: str, shape: list[int]) -> int:
        nxt, y = w.tensor(w.sg.tensors[state].shape, "uint64"), w.tensor(shape, dtype)
        w.op("STABLEHLO_RNG_BIT_GENERATOR", [state], [nxt, y],
             ("StablehloRngBitGeneratorOptions", {"algorithm": _RNG_ALGORITHMS[algorithm]}))
        outs.extend([nxt, y])
        return nxt

    for algorithm, key, dtype, shape in _RNG_BITS:
        rng(algorithm, states[key], dtype, shape)
    const = w.tensor([3], "uint64", data=np.array([2**63 + 5, 2**32 - 1, 77], np.uint64))
    rng("PHILOX", const, "uint32", [6])
    rng("PHILOX", rng("THREEFRY", rng("PHILOX", states["a"], "uint32", [5]), "int64", [3]), "uint64", [2])
    model = w.save(tmp_path / "m.tflite", list(states.values()), outs)
    gen = np.random.default_rng(60)
    a, b, c, d = (gen.integers(0, 2**64, n, dtype=np.uint64) for n in (2, 3, 2, 3))
    c[1], d[1] = np.uint64(2**32 - 2), np.uint64(2**64 - 2)
    compare(model, [a, b, c, d], sanitize=True)


def _values(gen: np.random.Generator, dtype: str, shape: list[int]) -> np.ndarray:
    """Integers over the whole range (sums and products wrap), float16 normals times 4."""
    if dtype == "float16":
        return (gen.standard_normal(shape) * 4).astype(np.float16)
    info = np.iinfo(dtype)
    return gen.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _gather_scatter_model(w: Written, cases: list[tuple[str, str, str | None]], gen: np.random.Generator):
    """One op a case (op, dtype, STABLEHLO_SCATTER's region body or None), each on inputs of its own: GATHER along
    axis 1 and GATHER_ND of index pairs on a [5, 4] operand; SCATTER_ND of rows into [5, 3]; STABLEHLO_GATHER's and
    _SCATTER's "rows" cases (GATHERS, SCATTERS). Indices past the end where LiteRT defines them (STABLEHLO_GATHER
    clips; STABLEHLO_SCATTER skips), repeated targets. Returns the inputs, outputs and feeds."""
    ins, outs, feeds = [], [], []

    def inp(shape, dtype, value):
        t = w.tensor(shape, dtype)
        ins.append(t)
        feeds.append(value)
        return t

    for op, dtype, body in cases:
        if op == "GATHER":
            x, i = inp([5, 4], dtype, _values(gen, dtype, [5, 4])), inp([2, 3], "int32", gen.integers(0, 4, [2, 3],
                                                                                                    dtype=np.int32))
            y = w.tensor([5, 2, 3], dtype)
            w.op("GATHER", [x, i], [y], ("GatherOptions", {"axis": 1, "batchDims": 0}))
        elif op == "GATHER_ND":
            x = inp([5, 4], dtype, _values(gen, dtype, [5, 4]))
            i = inp([3, 2], "int32", np.array([[4, 3], [0, 1], [4, 3]], np.int32))
            y = w.tensor([3], dtype)
            w.op("GATHER_ND", [x, i], [y])
        elif op == "SCATTER_ND":
            i = inp([4, 1], "int32", np.array([[1], [3], [1], [0]], np.int32))
            u = inp([4, 3], dtype, _values(gen, dtype, [4, 3]))
            y = w.tensor([5, 3], dtype)
            w.op("SCATTER_ND", [i, u, w.tensor([2], "int32", data=np.array([5, 3], np.int32))], [y])
        elif op == "STABLEHLO_GATHER":
            shape, ishape, opts, yshape = GATHERS["rows"]
            x = inp(shape, dtype, _values(gen, dtype, shape))
            i = inp(ishape, "int32", np.array([4, -2, 9, 0], np.int32))
            y = w.tensor(yshape, dtype)
            w.op("STABLEHLO_GATHER", [x, i], [y], ("StablehloGatherOptions", opts))
        else:
            shape, ishape, ushape, opts = SCATTERS["rows"]
            x = inp(shape, dtype, _values(gen, dtype, shape))
            i = inp(ishape, "int32", np.array([[1], [4], [1], [7]], np.int32))
            u = inp(ushape, dtype, _values(gen, dtype, ushape))
            y = w.tensor(shape, dtype)
            region = _scatter_region(w, dtype, body)
            w.op("STABLEHLO_SCATTER", [x, i, u], [y],
                 ("StablehloScatterOptions", {**opts, "updateComputationSubgraphIndex": region}))
        outs.append(y)
    return ins, outs, feeds


# the gathers and scatters in the types LiteRT 2.3.0 takes beyond float32 and the signed ints of the tests above
# (probed with both resolvers): GATHER and GATHER_ND take float16 and uint8, not uint16 or uint32 ("Type 'UINT16'
# is not supported by gather"); SCATTER_ND uint8, not float16, int16, uint16 or uint32; STABLEHLO_GATHER and
# STABLEHLO_SCATTER (every region) all of float16, uint8, uint16, uint32 and int16
_GATHER_SCATTER_TYPES = [
    *[(op, t, None) for op in ("GATHER", "GATHER_ND") for t in ("float16", "uint8")],
    ("SCATTER_ND", "uint8", None),
    *[("STABLEHLO_GATHER", t, None) for t in ("float16", "uint8", "uint16", "uint32")],
    *[("STABLEHLO_SCATTER", t, body) for t in ("float16", "uint8", "uint16", "uint32", "int16") for body in _BODIES],
]


@pytest.mark.full
def test_gather_scatter_other_types_like_litert(tmp_path):
    """_GATHER_SCATTER_TYPES against BUILTIN_REF in one model (one bundle, under ASan/UBSan), bit for bit: float16
    moved, and combined as LiteRT's Eigen::half (each op in float32, rounded back to float16), the unsigned and
    int16 regions wrapping."""
    _require_litert()
    w = Written()
    ins, outs, feeds = _gather_scatter_model(w, _GATHER_SCATTER_TYPES, np.random.default_rng(61))
    model = w.save(tmp_path / "m.tflite", ins, outs)
    refs = list(reference(model, feeds, tmp_path).values())
    out = tmp_path / "out"
    meta = build_bundle(model, out, sanitize=True)
    res = run_bundle(out, feeds)
    ours = [res[s["name"]] for s in meta["outputs"]]
    for case, got, ref in zip(_GATHER_SCATTER_TYPES, ours, refs, strict=True):
        assert got.dtype == ref.dtype and got.shape == ref.shape, (case, got.dtype, ref.dtype)
        assert np.array_equal(got.view(f"u{got.itemsize}"), ref.view(f"u{ref.itemsize}")), (case, got, ref)


# (input shape, axes, keep_dims): the last axis of a layer norm (the converter's int8 LayerNormalization), H and W
# with and without keep_dims, the leading axis, axes a size-1 axis separates, and all of them
MEANS = {
    "last": ([2, 8, 16], [-1], True), "hw": ([1, 5, 4, 8], [1, 2], True), "hw_dropped": ([2, 5, 4, 8], [2, 1], False),
    "first": ([6, 5], [0], False), "across_one": ([3, 1, 4, 5], [0, 2], True), "all": ([3, 4, 5], [0, 1, 2], True),
}


@pytest.mark.parametrize("scales", ["unlike", "alike"])
@pytest.mark.parametrize("dtype", tiered(["int8", "int16"], {"int8"}))
@pytest.mark.parametrize("case", tiered(sorted(MEANS), {"last", "hw_dropped"}))
def test_quantized_mean_over_adjacent_axes(tmp_path, case, dtype, scales):
    """Quantized MEAN over any axes no other axis of more than one element separates, bit for bit as BUILTIN_REF:
    the input's and output's scales unlike and alike (LiteRT's reference kernel takes another branch for each,
    which round alike). MEAN over axes another axis separates is refused in one line."""
    _require_litert()
    shape, axes, keep = MEANS[case]
    zero = (3, -5) if dtype == "int8" else (0, 0)
    y_scale = 0.02 if scales == "unlike" else 0.05
    reduced = {a % len(shape) for a in axes}
    yshape = [1 if a in reduced else d for a, d in enumerate(shape)] if keep else \
        [d for a, d in enumerate(shape) if a not in reduced]
    w = Written()
    x, ax = w.tensor(shape, dtype, quant=(0.05, zero[0])), w.tensor([len(axes)], "int32", data=axes)
    y = w.tensor(yshape, dtype, quant=(y_scale, zero[1] if scales == "unlike" else zero[0]))
    w.op("MEAN", [x, ax], [y], ("ReducerOptions", {"keepDims": keep}))
    model = w.save(tmp_path / "m.tflite", [x], [y])
    info = np.iinfo(np.dtype(dtype))
    rng = np.random.default_rng(7)
    compare(model, [rng.integers(max(info.min, -3000), min(info.max, 3000) + 1, shape).astype(dtype)])


def test_quantized_mean_over_separated_axes_is_refused(tmp_path):
    w = Written()
    x, ax = w.tensor([2, 3, 4], "int8", quant=(0.05, 0)), w.tensor([2], "int32", data=[0, 2])
    y = w.tensor([1, 3, 1], "int8", quant=(0.05, 0))
    w.op("MEAN", [x, ax], [y], ("ReducerOptions", {"keepDims": True}))
    model = w.save(tmp_path / "m.tflite", [x], [y])
    ran = aotc(model, "-o", tmp_path / "out", check=False)
    assert (ran.returncode, ran.stderr.strip()) == (
        2, "aotc: error: node 'MEAN_0' (MEAN): quantized MEAN over axes [0, 2] of [2, 3, 4], which other axes "
           "separate, is not supported")
