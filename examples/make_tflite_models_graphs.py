"""The models make_tflite_models.py converts from tf.functions (TF ops whose shapes Keras 3 cannot infer;
made in float only)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def builtins_graph():
    """Builtins of LiteRT's resolvers the converter writes from TF ops, as a tf.function (Keras 3 cannot
    infer these Lambdas' shapes): POW, SIGN, ATAN2, REDUCE_ALL / REDUCE_ANY, ONE_HOT (with an index
    cast from values), MATRIX_DIAG, MATRIX_SET_DIAG, SCATTER_ND (a repeated index: sums), the four
    UNSORTED_SEGMENT_* and SEGMENT_SUM, TOPK_V2, REVERSE_SEQUENCE, LOCAL_RESPONSE_NORMALIZATION and
    BUCKETIZE (made in float only)."""
    rng = np.random.default_rng(0)
    w = tf.constant(rng.standard_normal((1, 1, 8, 8)).astype(np.float32) * 0.5)

    def f(x):
        y = tf.nn.conv2d(x, w, 1, "SAME")
        p = tf.pow(tf.abs(x) + 0.5, y) + tf.sign(y) + tf.math.atan2(x, y)
        ra = (tf.cast(tf.reduce_all(y > -0.5, axis=-1), tf.float32)
              + tf.cast(tf.reduce_any(y > 0.5, axis=2), tf.float32)[:, :, :1])
        ids = tf.cast(tf.clip_by_value(y * 2.0 + 2.0, 0, 4), tf.int32)
        oh = tf.one_hot(ids[:, :, :, 0], 5, on_value=2.0, off_value=-1.0, axis=-1)
        dg = tf.linalg.diag(y[:, 0, 0, :4]) + tf.linalg.set_diag(y[:, 0, :, :4], y[:, 0, 0, 4:])
        sc = tf.scatter_nd([[1], [3], [1]], y[0, :3, 0, :], [5, 8])
        us = (tf.math.unsorted_segment_sum(y[0, 0], [0, 2, 0, 1], 3)
              + tf.math.unsorted_segment_max(y[0, 1], [2, 2, 0, 1], 3)
              + tf.math.unsorted_segment_min(y[0, 2], [1, 0, 0, 2], 3)
              + tf.math.unsorted_segment_prod(y[0, 3], [0, 1, 1, 2], 3) + tf.math.segment_sum(y[0, 1], [0, 0, 1, 2]))
        tk = tf.math.top_k(y, 3)
        rs = tf.reverse_sequence(y[:, 0], [3], seq_axis=1, batch_axis=0)
        lrn = tf.nn.local_response_normalization(y, 2, 1.5, 0.3, 0.75)
        bk = tf.cast(tf.raw_ops.Bucketize(input=y, boundaries=[-0.5, 0.0, 0.25, 1.0]), tf.float32)
        return [p, ra, oh, dg, sc, us, tk.values, tk.indices, rs, lrn, bk, y * 4.0]
    return f, [tf.TensorSpec((1, 4, 4, 8), tf.float32)]

def ints_graph():
    """Integer builtins (made in float only): BITWISE_XOR, SIGN and POW of int32, REVERSE_SEQUENCE along
    axes other than ONNX's 0 and 1, DYNAMIC_UPDATE_SLICE with a start computed at run time (clamped)."""
    from tensorflow.compiler.tf2xla.python import xla

    def f(x, u, start):
        a = tf.bitwise.bitwise_xor(x, 0x5A5A)
        r = tf.bitwise.bitwise_xor(x, tf.constant([1, 3, 7, 30], tf.int32))
        s = tf.sign(x) * tf.pow(tf.abs(x) % 7, 3)
        rs = tf.reverse_sequence(tf.cast(x, tf.float32), [2, 4, 1], seq_axis=2, batch_axis=1)
        d = xla.dynamic_update_slice(tf.cast(x, tf.float32), u, start)
        return [a, r, s, rs, d]
    return f, [tf.TensorSpec((2, 3, 4), tf.int32), tf.TensorSpec((1, 2, 3), tf.float32),
               tf.TensorSpec((3,), tf.int32)]

def conv3d_graph():
    """CONV_3D (SAME) and CONV_3D_TRANSPOSE (stride 2) on NDHWC volumes (made in float only)."""
    rng = np.random.default_rng(0)
    k = tf.constant(rng.standard_normal((3, 3, 3, 3, 4)).astype(np.float32) * 0.3)
    kt = tf.constant(rng.standard_normal((2, 2, 2, 2, 4)).astype(np.float32) * 0.3)

    def f(x):
        a = tf.nn.conv3d(x, k, [1, 1, 1, 1, 1], "SAME")
        return [a, tf.nn.conv3d_transpose(a, kt, [1, 8, 12, 12, 2], [1, 2, 2, 2, 1], "SAME")]
    return f, [tf.TensorSpec((1, 4, 6, 6, 3), tf.float32)]

def ifconst_graph():
    """Constants the converter passes into control flow as operands (made in float only): an IF whose
    branches read a conv's weights and a reshape's shape from the outer graph (one branch scales and
    transposes them first, which aotc then does at compile time), and a WHILE on the IF's result."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 3, 4, 4)).astype(np.float32)
    w2 = rng.standard_normal((64, 64)).astype(np.float32) * 0.2

    def f(x, flag):
        k, shape, m = tf.constant(w), tf.constant([1, 64]), tf.constant(w2)
        y = tf.cond(flag[0] > 0, lambda: tf.reshape(tf.nn.conv2d(x, k, 1, "SAME"), shape),
                    lambda: tf.reshape(tf.nn.conv2d(x, k * 0.5, 1, "SAME") + 1.0, shape))
        _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, m))), (0, y))
        return [y, h]
    return f, [tf.TensorSpec((1, 4, 4, 4), tf.float32), tf.TensorSpec((1,), tf.float32)]

def resolver2_graph():
    """More builtins of LiteRT's reference resolver from TF ops (made in float only): RIGHT_SHIFT of int32 by constant
    and run-time amounts (negative and too large ones clamped), CAST to and from uint8, uint16 and uint32, BITCAST
    of float32 to int32, SPARSE_TO_DENSE with a default."""
    def f(x, k, s):
        a = tf.bitwise.right_shift(k, tf.constant([1, 2, 3, 31], tf.int32))
        r = tf.bitwise.right_shift(k, s)
        u = tf.cast(tf.cast(k, tf.uint16), tf.int32) + tf.cast(tf.cast(k, tf.uint32) + 3, tf.int32)
        d = tf.compat.v1.sparse_to_dense([[0, 1], [2, 3], [1, 0]], [3, 4], x[0, :3], default_value=-1.0)
        return [a, r, u, tf.bitcast(x, tf.int32), d, tf.cast(tf.cast(k, tf.uint8), tf.int32)]
    return f, [tf.TensorSpec((2, 4), tf.float32), tf.TensorSpec((4,), tf.int32), tf.TensorSpec((4,), tf.int32)]

def bounded_graph():
    """Builtins whose outputs the data sizes (issue 50; made in float only): WHERE (and a GATHER_ND of the elements
    it finds), UNIQUE of int32 (idx int32) and of float32 (idx int64), NON_MAX_SUPPRESSION_V4
    (tf.image.non_max_suppression) and _V5 (tf.image.non_max_suppression_with_scores: soft NMS, sigma 0.5, and
    hard, sigma 0)."""
    def f(x, v, boxes, scores):
        w = tf.where(x > 0.5)
        u, idx = tf.unique(v)
        uf, idxf = tf.unique(x[0], out_idx=tf.int64)
        s4 = tf.image.non_max_suppression(boxes, scores, 6, iou_threshold=0.5, score_threshold=0.1)
        s5, sc5 = tf.image.non_max_suppression_with_scores(boxes, scores, 5, iou_threshold=0.6, score_threshold=0.2,
                                                           soft_nms_sigma=0.5)
        h5, hs5 = tf.image.non_max_suppression_with_scores(boxes, scores, 7, iou_threshold=0.4)
        return [w, tf.gather_nd(x, w), u, idx, uf, idxf, s4, s5, sc5, h5, hs5]
    return f, [tf.TensorSpec((3, 4), tf.float32), tf.TensorSpec((12,), tf.int32), tf.TensorSpec((16, 4), tf.float32),
               tf.TensorSpec((16,), tf.float32)]

def spectrum_graph():
    """complex64 inside the graph (issue 50; made in float only): a magnitude spectrogram as YAMNet's front end
    makes it (tf.signal.stft: RFFT2D then COMPLEX_ABS), and a 2-D real FFT cropping rows and padding columns
    whose REAL and IMAG parts are read (tf.signal.rfft2d, tf.math.real, tf.math.imag)."""
    def f(wave, image):
        spec = tf.abs(tf.signal.stft(wave, frame_length=48, frame_step=16, fft_length=64))
        z = tf.signal.rfft2d(image, fft_length=[4, 16])
        return [spec, tf.math.real(z), tf.math.imag(z)]
    return f, [tf.TensorSpec((2, 256), tf.float32), tf.TensorSpec((1, 6, 10), tf.float32)]


# written from a tf.function, float only
GRAPHS = {"spectrum": spectrum_graph, "resolver2": resolver2_graph, "bounded": bounded_graph,
          "builtins": builtins_graph, "ints": ints_graph, "conv3d": conv3d_graph, "ifconst": ifconst_graph}
