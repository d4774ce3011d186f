"""The rest of issue 50's quantized builtins: DIV on int8 and int16, PRELU and NEG on int16 (16x8),
L2_NORMALIZATION, REDUCE_PROD and LOG_SOFTMAX on int8, against LiteRT's reference kernels (BUILTIN_REF) and
tests/tflite_int8_numpy.py's DIV; SUM on int8 and int16 against LiteRT's default kernels (its reference reads the
data as uint8). One model per width holds every case (written with the schema: the converter quantizes DIV but writes
neither PRELU nor NEG in 16x8), built once under
AddressSanitizer and UndefinedBehaviorSanitizer and once for the Cortex-M4.

DIV is bit-exact with BUILTIN_REF wherever LiteRT's arithmetic is defined: its final RoundingDivideByPOT shifts by
more than 31 for small quotients (v1 of a few LSB over a large v2), which is undefined behaviour in C++ (LiteRT's x86
build masks the shift: 0 / 40 gives 1 LSB, -1 / 40 gives -128); there aotc rounds as the arithmetic defines (to 0),
as the numpy specification does, and the test counts those elements apart."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool, tiered
from modelcheck import aotc, build_bundle
from tflite_reference import reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tflite_int8_numpy as spec  # noqa: E402
from test_tflite_int8_math import Written  # noqa: E402


def _div_options(act: int = 0) -> tuple:
    return ("DivOptions", {"fusedActivationFunction": act})


# DIV cases: (x1 scale, zero), (x2 scale, zero), (y scale, zero), fused activation
DIV8 = (((0.05, -3), (0.05, 2), (0.1, 0), 0), ((0.02, 10), (0.1, -5), (0.02, -20), 1))
DIV16 = (((0.001, 0), (0.002, 0), (0.0005, 0), 0), ((0.0003, 0), (0.01, 0), (0.0002, 0), 1))


def int8_model() -> tuple[bytes, list[np.ndarray], list]:
    """Every int8 DIV case over every pair of int8 values (x1 a row of all 256, x2 a column of the 255 that are not
    its zero point, broadcast); the model, its inputs, and the cases in output order."""
    w = Written()
    ins, feeds = [], []
    for (s1, z1), (s2, z2), (sy, zy), act in DIV8:
        x1 = w.tensor([1, 256], "int8", s1, z1)
        x2 = w.tensor([255, 1], "int8", s2, z2)
        w.op("DIV", [x1, x2], ([255, 256], "int8", sy, zy), _div_options(act))
        ins += [x1, x2]
        feeds += [np.arange(-128, 128, dtype=np.int8).reshape(1, 256),
                  np.array([v for v in range(-128, 128) if v != z2], np.int8).reshape(255, 1)]
    return w.finish(ins), feeds, list(DIV8)


def int16_model() -> tuple[bytes, list[np.ndarray], list]:
    """16x8: DIV (x1 random and small values, x2 a column of nonzero values), PRELU (alpha per channel broadcast over
    H and W, and per element), NEG of every int16 value."""
    w, rng = Written(), np.random.default_rng(3)
    ins, feeds = [], []
    for (s1, _), (s2, _), (sy, _), act in DIV16:
        x1, x2 = w.tensor([1, 512], "int16", s1), w.tensor([128, 1], "int16", s2)
        w.op("DIV", [x1, x2], ([128, 512], "int16", sy), _div_options(act))
        ins += [x1, x2]
        v1 = np.concatenate([np.arange(-128, 128), rng.integers(-32768, 32768, 256)])
        v2 = rng.integers(-32768, 32768, 128)
        v2[:32] = np.arange(-16, 16)
        v2[v2 == 0] = 1
        feeds += [v1.astype(np.int16).reshape(1, 512), v2.astype(np.int16).reshape(128, 1)]
    x = w.tensor([1, 8, 8, 16], "int16", 0.002)
    for alpha_shape, ys in (([1, 1, 16], 0.0015), ([8, 8, 16], 0.003)):
        alpha = w.tensor(alpha_shape, "int8", 0.004, 0, rng.integers(-127, 128, alpha_shape).astype(np.int8))
        w.op("PRELU", [x, alpha], ([1, 8, 8, 16], "int16", ys))
    u = w.tensor([1, 256, 256], "int16", 1 / 4096)
    w.op("NEG", [u], ([1, 256, 256], "int16", 1 / 4096))
    ins += [x, u]
    feeds += [rng.integers(-32768, 32768, (1, 8, 8, 16)).astype(np.int16),
              np.arange(-32768, 32768).astype(np.int16).reshape(1, 256, 256)]
    return w.finish(ins), feeds, list(DIV16)


MODELS = {"int8": int8_model, "int16": int16_model}


def _compile_run(tmp_path: Path, width: str, target: str = "host", sanitize: bool = False
                 ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list]:
    """(ours, BUILTIN_REF's, the feeds, the DIV cases) for the width's model, built for `target` (-Werror; with
    `sanitize`, under ASan and UBSan)."""
    from aot.build import run_bundle

    data, feeds, cases = MODELS[width]()
    model = tmp_path / f"rest_{width}.tflite"
    model.write_bytes(data)
    out = tmp_path / "out"
    meta = build_bundle(model, out, target=target, sanitize=sanitize)
    ours, _ = run_bundle(out, meta, feeds)
    return [ours[s["name"]] for s in meta["outputs"]], list(reference(model, feeds, tmp_path).values()), feeds, cases


def _check(width: str, ours: list[np.ndarray], refs: list[np.ndarray], feeds: list[np.ndarray], cases: list) -> None:
    """DIV: ours equal to the numpy spec everywhere and to BUILTIN_REF where its shift is defined (at most 31),
    on most of the elements; the others (PRELU, NEG) equal to BUILTIN_REF."""
    from aot.frontend.tflite.quant import activation_range, div_multiplier

    dtype = np.int8 if width == "int8" else np.int16
    for k, ((s1, z1), (s2, z2), (sy, zy), act) in enumerate(cases):
        mult, shift = div_multiplier(s1, s2, sy)
        want, e = spec.div(feeds[2 * k], feeds[2 * k + 1], (z1, z2, zy), mult, shift,
                           activation_range(act, sy, zy, np.dtype(dtype).name))
        got, ref = ours[k], refs[k]
        assert got.dtype == ref.dtype == dtype and np.array_equal(got, want), f"DIV {k}: not the spec"
        defined = e <= 31
        assert defined.mean() > 0.9 and np.array_equal(got[defined], ref[defined]), \
            f"DIV {k}: {(got[defined] != ref[defined]).sum()} of {defined.sum()} differ from BUILTIN_REF"
    for got, ref in zip(ours[len(cases):], refs[len(cases):], strict=True):
        assert got.dtype == ref.dtype and np.array_equal(got, ref), f"{(got != ref).sum()} of {ref.size} differ"


@pytest.mark.parametrize("width", tiered(["int8", "int16"], {"int8"}))
def test_bit_exact_with_builtin_ref_sanitized(tmp_path, width):
    pytest.importorskip("ai_edge_litert")
    _check(width, *_compile_run(tmp_path, width, sanitize=True))


@pytest.mark.full
@pytest.mark.parametrize("width", ["int8", "int16"])
def test_bit_exact_with_builtin_ref_on_cortex_m4(tmp_path, width):
    """The same models for mps2-an386 (Cortex-M4F) under qemu."""
    pytest.importorskip("ai_edge_litert")
    require_tool("qemu-system-arm")
    require_tool("arm-none-eabi-gcc")
    _check(width, *_compile_run(tmp_path, width, target="mps2-an386"))


def test_div_by_the_zero_point_fails_the_run(tmp_path):
    """A divisor at its zero point: LiteRT's invoke fails (CheckNonZero), and so does the bundle's run
    (AOTC_ERR_SHAPE), writing nothing."""
    from aot.build import run_bundle

    w = Written()
    x1, x2 = w.tensor([1, 8], "int8", 0.05, -3), w.tensor([1, 8], "int8", 0.05, 2)
    w.op("DIV", [x1, x2], ([1, 8], "int8", 0.1, 0), _div_options())
    model = tmp_path / "div.tflite"
    model.write_bytes(w.finish([x1, x2]))
    out = tmp_path / "out"
    aotc(model, "-o", out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    ones = np.ones((1, 8), np.int8)
    ok, _ = run_bundle(out, meta, [ones, ones * 5])
    assert ok[meta["outputs"][0]["name"]].shape == (1, 8)
    bad = ones * 5
    bad[0, 3] = 2
    with pytest.raises(Exception, match="-2|shape|failed|error"):
        run_bundle(out, meta, [ones, bad])


def test_committed_copies_are_these_models():
    """tests/models/tflite/div_int8.tflite and sum_int8.tflite are int8_model() and sum_model("int8") as written here
    (the ops tests read the committed models: they are the ones with TflDiv and TflSumRequant)."""
    pytest.importorskip("ai_edge_litert")
    models = Path(__file__).resolve().parents[1] / "models" / "tflite"
    assert (models / "div_int8.tflite").read_bytes() == int8_model()[0]
    assert (models / "sum_int8.tflite").read_bytes() == sum_model("int8")[0]


def sum_model(width: str, more: bool = False) -> tuple[bytes, list[np.ndarray]]:
    """SUM over one axis, two axes (keep_dims) and every axis, of int8 or int16 (zero points 0) values; more: also
    axes apart (TflSum's Transpose), the last axis alone and the first (90 sums in a row: past TflSum's 64), and a
    second input [600, 64] summed over its 600 rows (int8: runs of 256 summed in int16), its first columns all the
    type's minimum, all its maximum (at a y scale where those sums stay in range)."""
    w, rng = Written(), np.random.default_rng(4)
    dtype, (xs, xz) = ("int8", (0.05, -3)) if width == "int8" else ("int16", (0.001, 0))
    x = w.tensor([2, 5, 6, 3], dtype, xs, xz)
    cases = [([2], False, [2, 5, 3], (0.2, 4)), ([1, 2], True, [2, 1, 1, 3], (1.1, -7)),
             ([0, 1, 2, 3], False, [], (3.7, 0))]
    if more:
        cases += [([0, 2], True, [1, 5, 1, 3], (0.6, 2)), ([1, 3], False, [2, 6], (0.5, -1)),
                  ([3], False, [2, 5, 6], (0.1, 3)), ([0], False, [5, 6, 3], (0.07, -2))]
    for axes, keep, shape, (ys, yz) in cases:
        w.op("SUM", [x, w.tensor([len(axes)], "int32", data=np.array(axes, np.int32))],
             (shape, dtype, ys, 0 if width == "int16" else yz), ("ReducerOptions", {"keepDims": keep}))
    info = np.iinfo(dtype)
    feeds = [rng.integers(info.min, info.max + 1, (2, 5, 6, 3)).astype(dtype)]
    if not more:
        return w.finish([x]), feeds
    x2 = w.tensor([600, 64], dtype, xs, xz)
    w.op("SUM", [x2, w.tensor([1], "int32", data=np.array([0], np.int32))], ([64], dtype, 700.0 * xs, 0),
         ("ReducerOptions", {"keepDims": False}))
    rows = rng.integers(info.min, info.max + 1, (600, 64))
    rows[:, 0], rows[:, 1] = info.min, info.max
    return w.finish([x, x2]), [*feeds, rows.astype(dtype)]


@pytest.mark.parametrize("board", tiered([False, True], {False}))
@pytest.mark.parametrize("width", tiered(["int8", "int16"], {"int8"}))
@pytest.mark.parametrize("more", tiered([False, True], {False}))
def test_sum_matches_litert_default_kernels(tmp_path, width, board, more):
    """Quantized SUM equal to LiteRT's default kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES), whose float32 rescaling
    of the int32 sums aotc repeats, on the host under ASan/UBSan and on mps2-an386; the reference kernel
    (BUILTIN_REF) reads the data as uint8 and differs."""
    pytest.importorskip("ai_edge_litert")
    if board:
        require_tool("qemu-system-arm")
        require_tool("arm-none-eabi-gcc")
    from aot.build import run_bundle

    data, feeds = sum_model(width, more)
    model = tmp_path / f"sum_{width}.tflite"
    model.write_bytes(data)
    out = tmp_path / "out"
    meta = build_bundle(model, out, target="mps2-an386" if board else "host", sanitize=not board)
    ours, _ = run_bundle(out, meta, feeds)
    default = list(reference(model, feeds, tmp_path, builtin=True).values())
    builtin_ref = list(reference(model, feeds, tmp_path).values())
    for out_spec, want in zip(meta["outputs"], default, strict=True):
        got = ours[out_spec["name"]]
        assert got.dtype == want.dtype and np.array_equal(got, want), (out_spec["name"], got, want)
    assert any(not np.array_equal(d, r) for d, r in zip(default, builtin_ref, strict=True))  # why not the reference


def l2norm_model() -> tuple[bytes, list[np.ndarray]]:
    """int8 L2_NORMALIZATION over the last axis: rows of random values, a row at the zero point (a sum of 0: LiteRT's
    inverse square root of 1), rows of one LSB, and rows long enough for sums past 2^29."""
    w, rng = Written(), np.random.default_rng(5)
    x1, x2 = w.tensor([1, 64, 16], "int8", 0.05, -3), w.tensor([2, 9000], "int8", 0.1, 4)
    for x, shape in ((x1, [1, 64, 16]), (x2, [2, 9000])):
        w.op("L2_NORMALIZATION", [x], (shape, "int8", 1 / 128, 0), ("L2NormOptions", {"fusedActivationFunction": 0}))
    a = rng.integers(-128, 128, (1, 64, 16))
    a[0, 0], a[0, 1], a[0, 2, :3] = -3, -2, (-4, -2, -3)
    b = rng.integers(-128, 128, (2, 9000))
    b[1] = np.where(rng.random(9000) < 0.5, -128, 127)
    return w.finish([x1, x2]), [a.astype(np.int8), b.astype(np.int8)]


@pytest.mark.parametrize("board", tiered([False, True], {False}))
def test_l2_normalization_bit_exact_with_builtin_ref(tmp_path, board):
    """int8 L2_NORMALIZATION equal to BUILTIN_REF and to tests/tflite_int8_numpy.py's, on the host under ASan/UBSan
    and on mps2-an386."""
    pytest.importorskip("ai_edge_litert")
    if board:
        require_tool("qemu-system-arm")
        require_tool("arm-none-eabi-gcc")
    from aot.build import run_bundle

    data, feeds = l2norm_model()
    model = tmp_path / "l2norm_int8.tflite"
    model.write_bytes(data)
    out = tmp_path / "out"
    meta = build_bundle(model, out, target="mps2-an386" if board else "host", sanitize=not board)
    ours, _ = run_bundle(out, meta, feeds)
    refs = reference(model, feeds, tmp_path).values()
    for out_spec, ref, x, zero in zip(meta["outputs"], refs, feeds, (-3, 4), strict=True):
        got = ours[out_spec["name"]]
        assert np.array_equal(got, spec.l2_normalization(x, zero)), out_spec["name"]
        assert got.dtype == ref.dtype and np.array_equal(got, ref), f"{(got != ref).sum()} of {ref.size} differ"


def prod_model(width: str) -> tuple[bytes, list[np.ndarray]]:
    """REDUCE_PROD of int8 (zero point -3) or int16 over the last axis, over axes 1 and 3 kept, and over all four."""
    w, rng = Written(), np.random.default_rng(6)
    dtype, (xs, xz), scales = (("int8", (0.05, -3), ((0.02, 5), (0.5, -9), (1e-5, 0))) if width == "int8" else
                               ("int16", (0.002, 0), ((0.0001, 0), (0.02, 0), (1e-9, 0))))
    x = w.tensor([2, 3, 4, 3], dtype, xs, xz)
    for (axes, keep, shape), (ys, yz) in zip((([3], False, [2, 3, 4]), ([1, 3], True, [2, 1, 4, 1]),
                                              ([0, 1, 2, 3], False, [])), scales, strict=True):
        w.op("REDUCE_PROD", [x, w.tensor([len(axes)], "int32", data=np.array(axes, np.int32))],
             (shape, dtype, ys, yz), ("ReducerOptions", {"keepDims": keep}))
    lim = 40 if width == "int8" else 1500
    return w.finish([x]), [rng.integers(-lim, lim, (2, 3, 4, 3)).astype(dtype)]


@pytest.mark.parametrize("width", tiered(["int8", "int16"], {"int8"}))
def test_reduce_prod_bit_exact_with_builtin_ref(tmp_path, width):
    """REDUCE_PROD of int8 and int16 equal to BUILTIN_REF, under ASan/UBSan: each product rescaled by LiteRT's int64
    requantisation (the multiplier rounded to 16 bits), the reduced axes taken in LiteRT's order."""
    pytest.importorskip("ai_edge_litert")
    from aot.build import run_bundle

    data, feeds = prod_model(width)
    model = tmp_path / f"prod_{width}.tflite"
    model.write_bytes(data)
    out = tmp_path / "out"
    meta = build_bundle(model, out, sanitize=True)
    ours, _ = run_bundle(out, meta, feeds)
    for out_spec, ref in zip(meta["outputs"], reference(model, feeds, tmp_path).values(), strict=True):
        got = ours[out_spec["name"]]
        assert got.dtype == ref.dtype and np.array_equal(got, ref), (out_spec["name"], got, ref)


LOG_SOFTMAX_SCALES = (0.004, 0.02, 0.1, 0.3, 1.0, 4.0, 40.0)


def log_softmax_model() -> tuple[bytes, list[np.ndarray]]:
    """int8 LOG_SOFTMAX over the last axis at input scales from 0.004 to 40 (the larger ones reach the output's -128
    and the bound below which LiteRT writes -128 outright; at 40 the multiplier saturates): rows of random values,
    rows all equal, rows of one 127 among -128s, rows of steps of one LSB; a row of 4000 equal values (a sum of
    exps near Q12.19's limit) and rows of one value."""
    w, rng = Written(), np.random.default_rng(7)
    xs = [w.tensor([64, 16], "int8", s, (-5 if k % 2 else 9)) for k, s in enumerate(LOG_SOFTMAX_SCALES)]
    xs += [w.tensor([2, 4000], "int8", 0.05, 0), w.tensor([3, 1], "int8", 0.1, 0)]
    for x in xs:
        w.op("LOG_SOFTMAX", [x], (list(w.sg.tensors[x].shape), "int8", 16 / 256, 127), ("LogSoftmaxOptions", {}))
    a = rng.integers(-128, 128, (64, 16))
    a[0], a[1], a[2], a[3] = 7, -128, -128, np.arange(-8, 8)
    a[2, 5] = 127
    a[4:12] = rng.integers(100, 128, (8, 16))  # near the maximum: many terms of the sum
    long = rng.integers(-128, 128, (2, 4000))
    long[0] = 3
    feeds = [np.roll(a, k, axis=1).astype(np.int8) for k in range(len(LOG_SOFTMAX_SCALES))]
    return w.finish(xs), [*feeds, long.astype(np.int8), np.array([[-128], [0], [127]], np.int8)]


@pytest.mark.parametrize("board", tiered([False, True], {False}))
def test_log_softmax_bit_exact_with_builtin_ref(tmp_path, board):

    """int8 LOG_SOFTMAX equal to BUILTIN_REF (LiteRT's reference_integer_ops::LogSoftmax), on the host under
    ASan/UBSan and on mps2-an386."""
    pytest.importorskip("ai_edge_litert")
    if board:
        require_tool("qemu-system-arm")
        require_tool("arm-none-eabi-gcc")
    from aot.build import run_bundle

    data, feeds = log_softmax_model()
    model = tmp_path / "log_softmax_int8.tflite"
    model.write_bytes(data)
    out = tmp_path / "out"
    meta = build_bundle(model, out, target="mps2-an386" if board else "host", sanitize=not board)
    ours, _ = run_bundle(out, meta, feeds)
    refs = list(reference(model, feeds, tmp_path).values())
    bad = []
    for out_spec, ref in zip(meta["outputs"], refs, strict=True):
        got = ours[out_spec["name"]]
        assert got.dtype == ref.dtype and got.shape == ref.shape
        if not np.array_equal(got, ref):
            bad.append(f"{out_spec['name']}: {(got != ref).sum()} of {ref.size} differ")
    assert not bad, bad
    assert (refs[-3] == -128).any() and (refs[0] > -128).all()  # the scales reach -128 or do not


@pytest.mark.parametrize(("x_scale", "y_quant", "says"), [
    (0.05, (0.1, 127), "needs output scale 16/256 and zero point 127"),
    (1e-8, (16 / 256, 127), "below 2^-26"),
])
def test_log_softmax_refused_by_name(tmp_path, x_scale, y_quant, says):
    """An int8 LOG_SOFTMAX LiteRT's LogSoftmaxPrepare refuses (the output's quantisation) or leaves undefined (an input
    scale whose left shift is 0) is refused in one line naming it (exit 2)."""
    pytest.importorskip("ai_edge_litert")
    w = Written()
    x = w.tensor([2, 8], "int8", x_scale)
    w.op("LOG_SOFTMAX", [x], ([2, 8], "int8", *y_quant), ("LogSoftmaxOptions", {}))
    model = tmp_path / "m.tflite"
    model.write_bytes(w.finish([x]))
    run = aotc(model, "-o", tmp_path / "out", "--no-configure", check=False)
    assert run.returncode == 2 and "LOG_SOFTMAX" in run.stderr and says in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
