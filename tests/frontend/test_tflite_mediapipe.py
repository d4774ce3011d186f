"""MediaPipe's custom TFLite ops (issue 50): models of them written with TFLite's schema, compiled, built
and run, against tests/mediapipe_numpy.py (the published kernels in numpy; LiteRT does not register
these ops). examples/mediapipe_models.py checks MediaPipe's own models the same way."""

from __future__ import annotations

import os
from pathlib import Path

import mediapipe_numpy as mp
import numpy as np
import pytest
from conftest import tiered
from modelcheck import aotc, build_bundle, run_bundle

F32 = 0  # TensorType.FLOAT32


def _schema():
    if os.environ.get("CI", "").lower() != "true":
        pytest.importorskip("ai_edge_litert")
    from ai_edge_litert import schema_py_generated as sch

    return sch


def _model(inputs: list[tuple], ops: list[tuple[str, list, list[tuple], bytes]], outputs: list[int]) -> bytes:
    """A .tflite file: `inputs` (their shapes, float32), then each op (its custom code, its inputs: tensor
    indices, or (shape, float32 data) for a constant, its outputs' shapes, its custom options); the model's
    outputs are the tensors `outputs` indexes."""
    import flatbuffers

    sch = _schema()
    m, sg = sch.ModelT(), sch.SubGraphT()
    m.version, m.buffers, m.subgraphs, m.operatorCodes, sg.tensors, sg.operators = 3, [sch.BufferT()], [sg], [], [], []

    def tensor(shape, data=None) -> int:
        t = sch.TensorT()
        t.shape, t.type, t.name, t.buffer = list(shape), F32, f"t{len(sg.tensors)}".encode(), len(m.buffers)
        buf = sch.BufferT()
        if data is not None:
            buf.data = np.frombuffer(np.ascontiguousarray(data, np.float32).tobytes(), np.uint8)
        m.buffers.append(buf)
        sg.tensors.append(t)
        return len(sg.tensors) - 1

    sg.inputs = [tensor(s) for s in inputs]
    for name, ins, outs, options in ops:
        if name not in [c.customCode for c in m.operatorCodes]:
            c = sch.OperatorCodeT()
            c.builtinCode = c.deprecatedBuiltinCode = sch.BuiltinOperator.CUSTOM
            c.customCode, c.version = name, 1
            m.operatorCodes.append(c)
        o = sch.OperatorT()
        o.opcodeIndex = [c.customCode for c in m.operatorCodes].index(name)
        o.inputs = [i if isinstance(i, int) else tensor(*i) for i in ins]
        o.outputs = [tensor(s) for s in outs]
        o.customOptions = list(options)
        o.customOptionsFormat = sch.CustomOptionsFormat.FLEXBUFFERS
        sg.operators.append(o)
    sg.outputs = outputs
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def _ints(*v: int) -> bytes:
    return np.array(v, "<i4").tobytes()


def _pool_options(padding: int, sw: int, sh: int, fw: int, fh: int, act: int) -> bytes:
    return _ints(padding, sw, sh, fw, fh, act, 0, 0, 0, 0)  # TfLitePoolParams, `computed` zero as the converter's


def _run(tmp_path: Path, model: bytes, feeds: list[np.ndarray], sanitized: bool = False) -> list[np.ndarray]:
    """The model compiled, built warning-free (under ASan and UBSan if `sanitized`) and run on `feeds`."""
    path, out = tmp_path / "m.tflite", tmp_path / "out"
    path.write_bytes(model)
    meta = build_bundle(path, out, sanitize=sanitized)
    res = run_bundle(out, feeds)
    return [res[s["name"]] for s in meta["outputs"]]


# (input shape, pool (padding, sw, sh, fw, fh, activation), transpose conv (padding, sw, sh), its weights' shape)
CASES = {
    "same": ((1, 8, 9, 3), (mp.SAME, 2, 2, 3, 3, 3), (mp.SAME, 2, 2), (4, 3, 3, 3)),
    "valid": ((2, 6, 8, 2), (mp.VALID, 2, 2, 2, 2, 0), (mp.VALID, 2, 1), (3, 2, 3, 2)),
    "tall": ((1, 5, 4, 3), (mp.SAME, 1, 2, 2, 3, 1), (mp.SAME, 1, 3), (2, 4, 1, 3)),
}


@pytest.mark.parametrize("case", tiered(sorted(CASES), {"valid"}))
def test_mediapipe_ops_match_published_kernels(tmp_path, case):
    """Convolution2DTransposeBias, MaxPoolingWithArgmax2D and (where its windows tile: stride == filter)
    MaxUnpooling2D of the argmax's outputs. Small integer inputs, so windows hold equal maxima and the
    first must be the one indexed; the transposed conv within 1e-5, the pools exactly. One case under ASan
    and UBSan."""
    x_shape, pool, conv, w_shape = CASES[case]
    rng = np.random.default_rng(len(case))
    x = rng.integers(-4, 5, x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    bias = rng.standard_normal(w_shape[0]).astype(np.float32)
    want_t = mp.transpose_conv_bias(x, w, bias, *conv)
    want_v, want_i = mp.max_pool_argmax(x, *pool)
    ops = [("Convolution2DTransposeBias", [0, (w.shape, w), (bias.shape, bias)], [want_t.shape], _ints(*conv)),
           ("MaxPoolingWithArgmax2D", [0], [want_v.shape, want_v.shape], _pool_options(*pool))]
    outputs, want = [3, 4, 5], [want_t, want_v, want_i]  # tensors: x, w, bias, then the outputs
    unpool = pool[1:3] == pool[3:5]
    if unpool:
        want_u = mp.max_unpooling(want_v, want_i, *pool[:5])
        ops.append(("MaxUnpooling2D", [4, 5], [want_u.shape], _pool_options(*pool)))
        outputs.append(6)
        want.append(want_u)
    got = _run(tmp_path, _model([x_shape], ops, outputs), [x], sanitized=case == "same")
    assert got[0].shape == want_t.shape
    assert float(np.abs(got[0] - want_t).max()) <= 1e-5 * max(1.0, float(np.abs(want_t).max()))
    for k, name in enumerate(["max", "argmax", "unpooled"][:len(want) - 1], start=1):
        assert got[k].dtype == np.float32 and np.array_equal(got[k], want[k]), \
            f"{name}: {(got[k] != want[k]).sum()} of {want[k].size} differ"
    assert not unpool or np.count_nonzero(want[3]) > 0


def test_unpooling_whose_windows_overlap_refused_by_name(tmp_path):
    model = _model([(1, 4, 4, 1), (1, 4, 4, 1)],
                   [("MaxUnpooling2D", [0, 1], [(1, 12, 12, 1)], _pool_options(mp.SAME, 1, 1, 3, 3, 0))], [2])
    (tmp_path / "m.tflite").write_bytes(model)
    run = aotc(tmp_path / "m.tflite", "-o", tmp_path / "out", "--no-configure", check=False)
    assert run.returncode == 2, run.stderr
    assert "node 'MaxUnpooling2D_0' (CUSTOM): MaxUnpooling2D with stride 1x1 unlike its filter 3x3" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_short_options_refused_by_name(tmp_path):
    model = _model([(1, 4, 4, 1)], [("MaxPoolingWithArgmax2D", [0], [(1, 2, 2, 1)] * 2, _ints(1, 2, 2))], [1, 2])
    (tmp_path / "m.tflite").write_bytes(model)
    run = aotc(tmp_path / "m.tflite", "-o", tmp_path / "out", "--no-configure", check=False)
    assert run.returncode == 2 and "custom options are 12 bytes" in run.stderr, run.stderr


def test_custom_op_lists_agree():
    """The reader lets by, the op table lowers and the ops page lists the same custom ops."""
    from aot.frontend.tflite import ops, reader
    from aot.tflite_ops_page import CUSTOM_OPS

    assert reader.CUSTOM_LOWERED == ops.CUSTOM_LOWERED == set(CUSTOM_OPS)


def _flex_map(values: dict) -> bytes:
    """Custom options as MediaPipe's converter writes them: a flexbuffer map, lists as typed vectors."""
    from flatbuffers import flexbuffers

    b = flexbuffers.Builder()
    with b.Map():
        for k, v in values.items():
            b.Key(k)
            if isinstance(v, list):
                b.TypedVectorFromElements(v)
            elif isinstance(v, float):
                b.Float(v)
            else:
                b.Int(v)
    return bytes(b.Finish())


@pytest.mark.full
def test_mediapipe_face_ops_match_published_kernels(tmp_path):

    """Landmarks2TransformMatrix, TransformTensorBilinear (version 2, aligned corners; version 1, not) and
    TransformLandmarks (2-D and 3-D landmarks; one of them through the computed matrix), as the face
    landmark model with attention uses them: within 1e-5 of each output's scale. The matrix given to
    TransformTensorBilinear maps part of the output outside the image (zeros) and turns it. Under ASan and
    UBSan."""
    rng = np.random.default_rng(7)
    landmarks = rng.uniform(0, 40, (1, 30, 3)).astype(np.float32)
    image = rng.standard_normal((1, 12, 10, 4)).astype(np.float32)
    angle, scale = 0.4, 1.7
    matrix = np.eye(4, dtype=np.float32)
    matrix[:2, :2] = [[scale * np.cos(angle), -scale * np.sin(angle)], [scale * np.sin(angle), scale * np.cos(angle)]]
    matrix[:2, 3] = [1.3, -2.2]
    matrix = matrix.reshape(1, 4, 4)
    lm2 = rng.uniform(-5, 5, (1, 7, 2)).astype(np.float32)
    l2tm = {"left_rotation_idx": 3, "output_height": 16, "output_width": 12, "right_rotation_idx": 17, "scale_x": 1.5,
            "scale_y": 1.25, "subset_idxs": [3, 5, 8, 13, 17, 21, 22, 29, 1], "target_rotation_radians": 0.25}
    want_t = mp.landmarks_to_transform_matrix(landmarks, l2tm["subset_idxs"], 3, 17, 0.25, 16, 12, 1.5, 1.25)
    want = [want_t, mp.transform_tensor_bilinear(image, matrix, 6, 5),
            mp.transform_tensor_bilinear(image, matrix, 6, 5, align_corners=False),
            mp.transform_landmarks(lm2, matrix), mp.transform_landmarks(landmarks, want_t)]
    ops = [("Landmarks2TransformMatrix", [0], [(1, 4, 4)], _flex_map(l2tm)),
           ("TransformTensorBilinear", [1, 2], [(1, 6, 5, 4)], _flex_map({"output_height": 6, "output_width": 5})),
           ("TransformTensorBilinear", [1, 2], [(1, 6, 5, 4)], _flex_map({"output_size": [6, 5]})),
           ("TransformLandmarks", [3, 2], [lm2.shape], b""),
           ("TransformLandmarks", [0, 4], [landmarks.shape], b"")]
    got = _run(tmp_path, _model([landmarks.shape, image.shape, matrix.shape, lm2.shape], ops, [4, 5, 6, 7, 8]),
               [landmarks, image, matrix, lm2], sanitized=True)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.shape == w.shape, (k, g.shape, w.shape)
        err = float(np.abs(g.astype(np.float64) - w).max())
        assert err <= 1e-5 * max(1.0, float(np.abs(w).max())), f"output {k}: max error {err:.3g}"
    assert np.count_nonzero(want[1] == 0) > 0 and np.count_nonzero(want[1]) > 0  # both inside and outside


@pytest.mark.parametrize("name", ["Landmarks2TransformMatrix", "TransformLandmarks"])
def test_version_1_landmark_ops_refused_by_name(tmp_path, name):
    """Version 1 of these (4-D landmarks, other options) is not lowered: refused in one line, not misread."""
    ins, outs = ([0], [(1, 4, 4)]) if name == "Landmarks2TransformMatrix" else ([0, 1], [(1, 1, 1, 6)])
    model = _model([(1, 1, 1, 6), (1, 4, 4)], [(name, ins, outs, _flex_map({"dimensions": 3}))], [2])
    (tmp_path / "m.tflite").write_bytes(model)
    run = aotc(tmp_path / "m.tflite", "-o", tmp_path / "out", "--no-configure", check=False)
    assert run.returncode == 2, run.stderr
    assert f"node '{name}_0' (CUSTOM): {name} of [1, 1, 1, 6] is not supported" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
