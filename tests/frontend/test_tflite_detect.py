"""TFLite_Detection_PostProcess (issue 50): the custom op every SSD-style detector ends in, compiled, built and
run against LiteRT's own kernel (its reference resolver registers the op), on models written here with the
schema and a flexbuffer of options: float32 and uint8 inputs as LiteRT runs them, int8 ones against LiteRT on
the same model in uint8 (q + 128 with zero point + 128 is the same value: LiteRT refuses int8), the fast and the
regular NMS, scores with many ties, fewer detections than max_detections, every score under the threshold;
and a whole SSD-style detector that TensorFlow's converter wrote (tests/models/tflite/ssd_tiny_*.tflite).

LiteRT leaves the rows it does not write as the tensor held them (its fast path writes num_detections x
max_classes_per_detection rows, the regular one num_detections): those rows are compared where LiteRT writes
them, and aotc's must be zeros. Boxes to 1e-5, classes, scores and num_detections exactly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import tiered
from modelcheck import aotc, build_bundle, run_bundle
from tflite_reference import reference

HERE = Path(__file__).resolve().parents[1]
NAME = "TFLite_Detection_PostProcess"


def _require_litert() -> None:
    """Skipped without ai-edge-litert on a developer machine, failed in CI (which installs the test extra)."""
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("ai-edge-litert is not installed (CI installs the test extra)")
        pytest.skip("ai-edge-litert is not installed (pip install ai-edge-litert)")


def _options(**kw) -> dict:
    o = dict(max_detections=5, max_classes_per_detection=1, detections_per_class=4, use_regular_nms=False,
             nms_score_threshold=0.3, nms_iou_threshold=0.5, num_classes=4, y_scale=10.0, x_scale=10.0,
             h_scale=5.0, w_scale=5.0)
    o.update(kw)
    return o


def detection_model(opts: dict, boxes: int, columns: int, anchors: np.ndarray, dtype: str = "float32",
                    quant: tuple = ((0.05, 128), (1 / 255, 0), (0.004, 0)), stride: int = 4,
                    declare_outputs: bool = True) -> bytes:
    """A .tflite file of one TFLite_Detection_PostProcess: inputs box encodings [1, boxes, stride] and class
    predictions [1, boxes, columns] of `dtype` (quantized by quant's (scale, zero) for encodings, scores,
    anchors), constant anchors [boxes, 4] of that type, four float32 outputs."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as sch
    from flatbuffers import flexbuffers

    m, sg = sch.ModelT(), sch.SubGraphT()
    m.version, m.buffers, m.subgraphs, m.operatorCodes, sg.tensors, sg.operators = 3, [sch.BufferT()], [sg], [], [], []
    types = {"float32": sch.TensorType.FLOAT32, "uint8": sch.TensorType.UINT8, "int8": sch.TensorType.INT8}

    def tensor(shape, ttype, q=None, data=None) -> int:
        t = sch.TensorT()
        t.shape, t.type, t.name, t.buffer = list(shape), ttype, f"t{len(sg.tensors)}".encode(), len(m.buffers)
        if q is not None:
            t.quantization = sch.QuantizationParametersT()
            t.quantization.scale, t.quantization.zeroPoint = [q[0]], [q[1]]
        buf = sch.BufferT()
        if data is not None:
            buf.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        m.buffers.append(buf)
        sg.tensors.append(t)
        return len(sg.tensors) - 1

    quantized = dtype != "float32"
    qb, qc, qa = quant if quantized else (None, None, None)
    enc = tensor([1, boxes, stride], types[dtype], qb)
    cls = tensor([1, boxes, columns], types[dtype], qc)
    anc = tensor([boxes, 4], types[dtype], qa, anchors)
    rows = opts["max_detections"] * opts["max_classes_per_detection"]
    shapes = [[1, rows, 4], [1, rows], [1, rows], [1]] if declare_outputs else [[], [], [], []]
    outs = [tensor(s, sch.TensorType.FLOAT32) for s in shapes]
    code = sch.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = sch.BuiltinOperator.CUSTOM
    code.customCode, code.version = NAME, 1
    m.operatorCodes.append(code)
    op = sch.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [enc, cls, anc], outs
    op.customOptions = list(flexbuffers.Dumps(opts))
    op.customOptionsFormat = sch.CustomOptionsFormat.FLEXBUFFERS
    sg.operators.append(op)
    sg.inputs, sg.outputs = [enc, cls], outs
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def _anchors(rng: np.random.Generator, boxes: int) -> np.ndarray:
    """Anchors (y, x, h, w) around a few centres, so that decoded boxes overlap."""
    a = np.empty((boxes, 4), np.float32)
    a[:, 0] = rng.integers(1, 4, boxes) * 0.25 + rng.uniform(-0.03, 0.03, boxes)
    a[:, 1] = rng.integers(1, 4, boxes) * 0.25 + rng.uniform(-0.03, 0.03, boxes)
    a[:, 2:] = rng.uniform(0.15, 0.3, (boxes, 2))
    return a


def _quantize(x: np.ndarray, scale: float, zero: int, dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(np.round(x / scale) + zero, info.min, info.max).astype(dtype)


def _run(out: Path, feeds: list[np.ndarray]) -> list[np.ndarray]:
    """`aotc run` of the bundle in `out` on `feeds`: its outputs in the model's order."""
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    res = run_bundle(out, feeds)
    return [res[spec["name"]] for spec in meta["outputs"]]


def _compare(ours: list[np.ndarray], ref: list[np.ndarray], opts: dict, what: str) -> int:
    """Our outputs equal LiteRT's in the rows it writes and are zeros elsewhere; returns num_detections."""
    num = int(ref[3][0])
    assert ours[3].tolist() == ref[3].tolist(), f"{what}: num_detections {ours[3]} vs LiteRT's {ref[3]}"
    mc = opts["max_classes_per_detection"]
    written = np.zeros(opts["max_detections"] * mc, bool)
    if opts["use_regular_nms"]:
        written[:num] = True
    else:
        for n in range(num):
            written[n * mc: n * mc + min(mc, opts["num_classes"])] = True
    boxes, classes, scores = ours[0][0], ours[1][0], ours[2][0]
    assert np.abs(boxes[written] - ref[0][0][written]).max(initial=0) <= 1e-5, f"{what}: boxes differ"
    assert np.array_equal(classes[written], ref[1][0][written]), \
        f"{what}: classes {classes[written]} vs LiteRT's {ref[1][0][written]}"
    assert np.array_equal(scores[written], ref[2][0][written]), f"{what}: scores differ"
    assert not boxes[~written].any() and not classes[~written].any() and not scores[~written].any(), \
        f"{what}: rows past the detections are not zeros"
    return num


def _draws(rng: np.random.Generator, boxes: int, columns: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(what, encodings, scores) in float: scores on a few levels (ties), a few boxes over the threshold
    (fewer detections than max), every score under the threshold."""
    enc = lambda: rng.normal(0, 1.5, (1, boxes, 4)).astype(np.float32)  # noqa: E731
    ties = (rng.integers(0, 5, (1, boxes, columns)) * 0.2).astype(np.float32)
    few = np.full((1, boxes, columns), 0.1, np.float32)
    few[0, rng.choice(boxes, 3, replace=False), rng.integers(1, columns, 3)] = 0.9  # 3 over the threshold
    low = rng.uniform(0, 0.25, (1, boxes, columns)).astype(np.float32)
    return [("ties", enc(), ties), ("fewer than max", enc(), few), ("all under the threshold", enc(), low)]


@pytest.mark.parametrize("regular", [False, True], ids=["fast", "regular"])
@pytest.mark.parametrize("dtype", tiered(["float32", "uint8", "int8"], {"uint8"}))
def test_detection_postprocess_matches_litert(tmp_path, dtype, regular):
    _require_litert()
    rng = np.random.default_rng(3 + regular)
    boxes, classes = 40, 4
    columns = classes + 1  # a background column first
    opts = _options(use_regular_nms=regular)
    anchors = _anchors(rng, boxes)
    qb, qc, qa = (0.05, 128), (1 / 255, 0), (0.004, 0)
    if dtype == "float32":
        model_anchors = anchors
    else:
        model_anchors = _quantize(anchors, *qa, "uint8")
    model = tmp_path / f"detect_{dtype}.tflite"
    ref_model = tmp_path / "detect_ref.tflite"  # LiteRT runs int8 as the same values in uint8
    if dtype == "int8":
        shift = lambda q: (q[0], q[1] - 128)  # noqa: E731
        model.write_bytes(detection_model(opts, boxes, columns, (model_anchors.astype(np.int16) - 128).astype(np.int8),
                                          "int8", (shift(qb), shift(qc), shift(qa))))
        ref_model.write_bytes(detection_model(opts, boxes, columns, model_anchors, "uint8", (qb, qc, qa)))
    else:
        model.write_bytes(detection_model(opts, boxes, columns, model_anchors, dtype, (qb, qc, qa)))
        ref_model = model
    out = tmp_path / f"out_{model.stem}"
    build_bundle(model, out, sanitize=True)  # the bundle under ASan and UBSan
    nums = []
    for what, enc, scores in _draws(rng, boxes, columns):
        if dtype == "float32":
            feeds = ref_feeds = [enc, scores]
        else:
            ref_feeds = [_quantize(enc, *qb, "uint8"), _quantize(scores, *qc, "uint8")]
            feeds = ref_feeds if dtype == "uint8" else [(f.astype(np.int16) - 128).astype(np.int8) for f in ref_feeds]
        ref = list(reference(ref_model, ref_feeds, tmp_path).values())
        nums.append(_compare(_run(out, feeds), ref, opts, what))
    assert nums[0] == opts["max_detections"] and 0 < nums[1] < opts["max_detections"] and nums[2] == 0, nums


@pytest.mark.full
def test_detection_postprocess_several_classes_per_detection(tmp_path):
    """The fast path with max_classes_per_detection 3 of 4 classes and 5 (more than the classes: LiteRT leaves
    the fifth row of each detection unwritten), no background column, keypoints after the box encodings
    (stride 6), outputs declared without shapes. Each box's class scores are distinct: on equal ones LiteRT's
    order is its std::partial_sort's, which aotc does not copy (it takes the lower class first, as TFLM)."""
    _require_litert()
    rng = np.random.default_rng(7)
    boxes, classes = 30, 4
    for mc in (3, 5):
        opts = _options(max_classes_per_detection=mc, max_detections=4, nms_score_threshold=0.2)
        model = tmp_path / f"detect_mc{mc}.tflite"
        model.write_bytes(detection_model(opts, boxes, classes, _anchors(rng, boxes), stride=6,
                                          declare_outputs=mc == 3))
        out = tmp_path / f"out_{model.stem}"
        build_bundle(model, out)
        enc = rng.normal(0, 1.5, (1, boxes, 6)).astype(np.float32)
        scores = np.argsort(rng.uniform(size=(1, boxes, classes)), axis=2).astype(np.float32) / 4 + \
            rng.uniform(0, 0.2, (1, boxes, 1)).astype(np.float32)
        ref = list(reference(model, [enc, scores], tmp_path).values())
        assert _compare(_run(out, [enc, scores]), ref, opts, f"max_classes_per_detection {mc}") == 4


def _refused(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "bad.tflite"
    path.write_bytes(data)
    run = aotc(path, "-o", tmp_path / "out", "--no-configure", check=False)
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    return run.stderr


@pytest.mark.parametrize("case, message", [
    ("negative anchor", "anchor 3 has a negative height or width"),
    ("iou threshold", "nms_iou_threshold 0 is not in (0, 1]"),
    ("columns", "num_classes 2 with 5 class columns"),
    ("max_detections", "max_detections 0, max_classes_per_detection 1"),
])
def test_detection_postprocess_refused_in_one_line(tmp_path, case, message):
    """What LiteRT fails on when it runs is refused at compile time, in one line naming the op."""
    _require_litert()
    rng = np.random.default_rng(0)
    anchors = _anchors(rng, 8)
    opts = _options()
    if case == "negative anchor":
        anchors[3, 2] = -0.1
    elif case == "iou threshold":
        opts["nms_iou_threshold"] = 0.0
    elif case == "columns":
        opts["num_classes"] = 2
    else:
        opts["max_detections"] = 0
    err = _refused(tmp_path, detection_model(opts, 8, 5, anchors))
    assert message in err and f"node '{NAME}_0'" in err, err


@pytest.mark.parametrize("name", tiered(["ssd_tiny_float", "ssd_tiny_int8"], {"ssd_tiny_int8"}))
def test_ssd_model_end_to_end_matches_litert(tmp_path, name):
    """A whole SSD-style detector as TensorFlow's converter writes one (examples/make_ssd_tflite.py: convs, two
    heads' box encodings and sigmoid scores concatenated over 240 anchors, TFLite_Detection_PostProcess fused
    from an `experimental_implements` function; the int8 model's backbone full-integer, a DEQUANTIZE before the
    op): every output against LiteRT's on three images. The float backbone's scores may differ from LiteRT's in
    the last bit (its convs sum in another order), so boxes and scores to 1e-5 there, classes and num_detections
    exactly; the int8 model bit for bit."""
    _require_litert()
    model = HERE / "models" / "tflite" / f"{name}.tflite"
    out = tmp_path / f"out_{model.stem}"
    build_bundle(model, out)
    rng = np.random.default_rng(5)
    for k in range(3):
        image = rng.uniform(0, 1, (1, 64, 64, 3)).astype(np.float32)
        ours, ref = _run(out, [image]), list(reference(model, [image], tmp_path).values())
        assert [o.shape for o in ours] == [r.shape for r in ref]
        num = next(o for o in ours if o.shape == (1,))
        assert num[0] == next(r for r in ref if r.shape == (1,))[0] == 10, f"image {k}: {num}"
        for o, r in zip(ours, ref, strict=True):
            if name.endswith("int8"):
                assert np.array_equal(o, r), f"image {k}: {o} vs LiteRT's {r}"
            elif o.ndim == 3 or not np.array_equal(np.round(o), o):  # boxes, scores
                assert np.abs(o - r).max() <= 1e-5, f"image {k}: {o} vs LiteRT's {r}"
            else:  # classes, num_detections
                assert np.array_equal(o, r), f"image {k}: {o} vs LiteRT's {r}"
