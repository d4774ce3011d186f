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
