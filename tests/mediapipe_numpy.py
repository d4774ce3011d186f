"""MediaPipe's custom TFLite ops in numpy, loop for loop as the published kernels
(google/mediapipe, mediapipe/util/tflite/operations/*.cc) compute them, in float32: the reference
for aotc's lowerings (LiteRT does not register these ops). NHWC throughout; `padding` is TfLitePadding
(1 SAME, 2 VALID), `activation` TfLiteFusedActivation."""

from __future__ import annotations

import numpy as np

SAME, VALID = 1, 2
_LOWEST = np.finfo(np.float32).min


def transpose_conv_bias(x: np.ndarray, w: np.ndarray, bias: np.ndarray, padding: int, stride_w: int,
                        stride_h: int) -> np.ndarray:
    """Convolution2DTransposeBias: w is [O, kh, kw, I]; each input pixel scattered through the filter
    onto an output started at the bias."""
    n, h, wd, _ = x.shape
    o, kh, kw, _ = w.shape
    ph = max(0, kh - (h - 1) % stride_h - 1) if padding == SAME else 0
    pw = max(0, kw - (wd - 1) % stride_w - 1) if padding == SAME else 0
    oh, ow = stride_h * (h - 1) + kh - ph, stride_w * (wd - 1) + kw - pw
    y = np.empty((n, oh, ow, o), np.float32)
    y[...] = bias.astype(np.float32)
    for b in range(n):
        for iy in range(h):
            for ix in range(wd):
                for fy in range(kh):
                    for fx in range(kw):
                        oy, ox = iy * stride_h - ph // 2 + fy, ix * stride_w - pw // 2 + fx
                        if 0 <= oy < oh and 0 <= ox < ow:
                            y[b, oy, ox] += (w[:, fy, fx, :] @ x[b, iy, ix]).astype(np.float32)
    return y


def _pool_out(size: int, filt: int, stride: int, padding: int) -> int:
    return (size + stride - 1) // stride if padding == SAME else (size - filt + stride) // stride


def _pad(stride: int, in_size: int, filt: int, out_size: int) -> int:
    """TFLite's ComputePadding (dilation 1)."""
    return max(((out_size - 1) * stride + filt - in_size) // 2, 0)


def _clamp(v: np.float32, activation: int) -> np.float32:
    lo, hi = {1: (0.0, None), 2: (-1.0, 1.0), 3: (0.0, 6.0)}.get(activation, (None, None))
    if lo is not None:
        v = max(v, np.float32(lo))
    if hi is not None:
        v = min(v, np.float32(hi))
    return np.float32(v)


def max_pool_argmax(x: np.ndarray, padding: int, stride_w: int, stride_h: int, filter_w: int, filter_h: int,
                    activation: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """MaxPoolingWithArgmax2D: each window's maximum (the first of equals) and, as float32, its place in
    the window, y * filter_w + x + 0.1."""
    n, h, w, c = x.shape
    oh, ow = _pool_out(h, filter_h, stride_h, padding), _pool_out(w, filter_w, stride_w, padding)
    pt, pl = _pad(stride_h, h, filter_h, oh), _pad(stride_w, w, filter_w, ow)
    y = np.empty((n, oh, ow, c), np.float32)
    index = np.empty((n, oh, ow, c), np.float32)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                y0, x0 = oy * stride_h - pt, ox * stride_w - pl
                for ch in range(c):
                    best, by, bx = _LOWEST, 0, 0
                    for fy in range(max(0, -y0), min(filter_h, h - y0)):
                        for fx in range(max(0, -x0), min(filter_w, w - x0)):
                            v = x[b, y0 + fy, x0 + fx, ch]
                            if v > best:
                                best, by, bx = v, fy, fx
                    y[b, oy, ox, ch] = _clamp(best, activation)
                    index[b, oy, ox, ch] = np.float32(by * filter_w + bx) + np.float32(0.1)
    return y, index


def max_unpooling(x: np.ndarray, index: np.ndarray, padding: int, stride_w: int, stride_h: int, filter_w: int,
                  filter_h: int) -> np.ndarray:
    """MaxUnpooling2D: zeros filter times larger, each input written where its index puts it."""
    del padding  # the kernel's padding comes from the sizes alone
    n, h, w, c = x.shape
    oh, ow = h * filter_h, w * filter_w
    pt, pl = _pad(stride_h, oh, filter_h, h), _pad(stride_w, ow, filter_w, w)
    y = np.zeros((n, oh, ow, c), np.float32)
    for b in range(n):
        for iy in range(h):
            for ix in range(w):
                for ch in range(c):
                    k = int(index[b, iy, ix, ch])  # C's float -> int: toward zero
                    y[b, iy * stride_h - pt + k // filter_w, ix * stride_w - pl + k % filter_w, ch] = x[b, iy, ix, ch]
    return y


def _dot(row: np.ndarray, v: tuple) -> np.float32:
    s = np.float32(0)
    for a, b in zip(row, v, strict=True):
        s = np.float32(s + np.float32(a) * np.float32(b))
    return s


def transform_landmarks(landmarks: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """TransformLandmarks version 2: [1, N, D] landmarks, each (x, y) through the matrix's first two rows
    as (x, y, 0, 1); z (D = 3) kept."""
    m = matrix.reshape(16)
    y = landmarks.astype(np.float32).copy()
    for k in range(landmarks.shape[1]):
        v = (landmarks[0, k, 0], landmarks[0, k, 1], 0.0, 1.0)
        y[0, k, 0], y[0, k, 1] = _dot(m[0:4], v), _dot(m[4:8], v)
    return y


def transform_tensor_bilinear(x: np.ndarray, matrix: np.ndarray, out_h: int, out_w: int,
                              align_corners: bool = True) -> np.ndarray:
    """TransformTensorBilinear (version 2 aligns corners, version 1 does not): [1, H, W, C] sampled at the
    matrix's first two rows times (x, y, 0, 1) for each output pixel, 0 outside the input."""
    _, h, w, c = x.shape
    m = matrix.reshape(16).astype(np.float32)
    rx, ry = m[0:4].copy(), m[4:8].copy()
    if align_corners:  # the kernel adds a double expression to a float
        for r in (rx, ry):
            r[3] = np.float32(np.float64(r[3]) + (np.float64(r[0]) * 0.5 + np.float64(r[1]) * 0.5 - 0.5))
    y = np.zeros((1, out_h, out_w, c), np.float32)

    def read(i: int, j: int) -> np.ndarray:
        return x[0, i, j] if 0 <= i < h and 0 <= j < w else np.zeros(c, np.float32)

    for oy in range(out_h):
        for ox in range(out_w):
            tx, ty = _dot(rx, (ox, oy, 0.0, 1.0)), _dot(ry, (ox, oy, 0.0, 1.0))
            if tx < 0 or tx > w - 1 or ty < 0 or ty > h - 1:
                continue
            fx, fy = int(np.floor(tx)), int(np.floor(ty))
            right, lower = np.float64(tx - fx), np.float64(ty - fy)
            upper = ((1.0 - right) * read(fy, fx) + right * read(fy, fx + 1)).astype(np.float32)
            low = ((1.0 - right) * read(fy + 1, fx) + right * read(fy + 1, fx + 1)).astype(np.float32)
            y[0, oy, ox] = (lower * low + (1.0 - lower) * upper).astype(np.float32)
    return y


def landmarks_to_transform_matrix(landmarks: np.ndarray, subset_idxs: list[int], left: int, right: int,
                                  target_rotation: float, out_h: int, out_w: int, scale_x: float,
                                  scale_y: float) -> np.ndarray:
    """Landmarks2TransformMatrix version 2: the [1, 4, 4] matrix from an out_h x out_w crop onto the
    subset's bounding box after rotating the left -> right landmark line to target_rotation."""
    f = np.float32
    flat = landmarks.reshape(-1).astype(np.float32)

    def xy(i: int) -> tuple[np.float32, np.float32]:
        return flat[3 * i], flat[3 * i + 1]

    (lx, ly), (rx, ry) = xy(left), xy(right)
    rotation = f(f(target_rotation) - np.arctan2(f(ry - ly), f(rx - lx), dtype=np.float32))
    c, s = np.cos(rotation, dtype=np.float32), np.sin(rotation, dtype=np.float32)
    pts = [(f(c * px + f(-s) * py), f(s * px + c * py)) for px, py in (xy(i) for i in subset_idxs)]
    min_x, max_x = min(p[0] for p in pts), max(p[0] for p in pts)
    min_y, max_y = min(p[1] for p in pts), max(p[1] for p in pts)
    width, height = f(max_x - min_x), f(max_y - min_y)
    mx, my = f(f(min_x + max_x) / f(2)), f(f(min_y + max_y) / f(2))
    cb, sb = np.cos(f(-rotation), dtype=np.float32), np.sin(f(-rotation), dtype=np.float32)
    crop_x, crop_y = f(cb * mx + f(-sb) * my), f(sb * mx + cb * my)
    t = np.eye(4, dtype=np.float32)
    t[0, 3], t[1, 3] = crop_x, crop_y
    rot = np.eye(4, dtype=np.float32)
    rot[:2, :2] = [[cb, -sb], [sb, cb]]
    scale = np.diag([f(f(scale_x) * width / f(out_w)), f(f(scale_y) * height / f(out_h)), 1, 1]).astype(np.float32)
    shift = np.eye(4, dtype=np.float32)
    shift[0, 3], shift[1, 3] = -out_w / 2.0, -out_h / 2.0
    return (t @ rot @ scale @ shift).astype(np.float32).reshape(1, 4, 4)
