"""The Keras and tf_keras models of make_tflite_models.py, which the TFLiteConverter writes as firmware
teams make them (float, full-int8, 16x8, dynamic-range)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

keras = tf.keras
L = keras.layers

def sine() -> keras.Model:
    """TFLM's hello_world: a 16-16-1 MLP fitted to sin(x) on [0, 2 pi]."""
    m = keras.Sequential([keras.Input((1,), batch_size=1), L.Dense(16, activation="relu"),
                          L.Dense(16, activation="relu"), L.Dense(1)])
    x = np.random.default_rng(0).uniform(0, 2 * np.pi, (1000, 1)).astype(np.float32)
    m.compile("adam", "mse")
    m.fit(x, np.sin(x), epochs=30, batch_size=32, verbose=0)
    return m

def keyword() -> keras.Model:
    """A DS-CNN keyword spotter on a 49 x 10 MFCC map, as MLPerf Tiny's (smaller)."""
    return keras.Sequential([
        keras.Input((49, 10, 1), batch_size=1),
        L.Conv2D(16, (10, 4), strides=2, padding="same", activation="relu"),
        L.DepthwiseConv2D(3, padding="same", activation="relu"),
        L.Conv2D(16, 1, activation="relu"),
        L.DepthwiseConv2D(3, padding="same"), L.ReLU(max_value=6.0),
        L.Conv2D(16, 1, activation="relu"),
        L.AveragePooling2D((25, 5)),
        L.Flatten(),
        L.Dense(12),
        L.Softmax(),
    ])

def person() -> keras.Model:
    """A tiny person-detect-like CNN on a 48 x 48 grey image (MobileNet-v1 blocks)."""
    return keras.Sequential([
        keras.Input((48, 48, 1), batch_size=1),
        L.Conv2D(8, 3, strides=2, padding="same", activation="relu6"),
        L.DepthwiseConv2D(3, padding="same", activation="relu6"),
        L.Conv2D(16, 1, activation="relu6"),
        L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6"),
        L.Conv2D(16, 1, activation="relu6"),
        L.MaxPooling2D(2),
        L.GlobalAveragePooling2D(),
        L.Dense(2),
        L.Softmax(),
    ])

def ops() -> keras.Model:
    """The rest of the float op list: PAD, STRIDED_SLICE, CONCATENATION, ADD, SUB, MUL, LOGISTIC,
    TANH, LEAKY_RELU, TRANSPOSE_CONV, MEAN, RESHAPE."""
    x = keras.Input((12, 12, 3), batch_size=1)
    a = L.Conv2D(8, 3, padding="valid", activation="tanh")(L.ZeroPadding2D(1)(x))
    b = L.Conv2D(8, 3, padding="same", activation="sigmoid")(x)
    c = L.Concatenate(axis=-1)([a, b])
    d = L.Conv2D(8, 1)(c)
    e = L.LeakyReLU(negative_slope=0.2)(L.Add()([d, a]))
    f = L.Multiply()([L.Subtract()([e, b]), d])
    g = L.Conv2DTranspose(4, 3, strides=2, padding="same")(f)
    h = L.Lambda(lambda t: t[:, 1:21:2, 2:22, :])(g)
    i = L.Lambda(lambda t: tf.reduce_mean(t, axis=[1, 2]))(h)
    j = L.Reshape((2, 2))(L.Dense(4, activation="relu")(i))
    return keras.Model(x, j)

def residual() -> keras.Model:
    """A ResNet-8-like block of MLPerf Tiny's image classifier (smaller): conv, two convs and a
    shortcut ADD, global average pool, FC, softmax."""
    x = keras.Input((16, 16, 3), batch_size=1)
    a = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    b = L.Conv2D(8, 3, padding="same", activation="relu")(a)
    b = L.Conv2D(8, 3, padding="same")(b)
    c = L.ReLU()(L.Add()([a, b]))
    d = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(c)
    e = L.GlobalAveragePooling2D()(d)
    return keras.Model(x, L.Softmax()(L.Dense(10)(e)))

def split() -> keras.Model:
    """The int8 convs' splits over a --threads pool (tests/kernels/test_threads.py): CONV_2D of 80 channels (two
    chunks of 64, the last 16 wide) over 400 positions (runs of 64, the last 16), a residual ADD fused into a 1 x 1
    conv, DEPTHWISE_CONV_2D 3 x 3 (the byte path) and 5 x 5 at stride 2 (the 16-bit path), a dilated conv (the
    tiles of patches, on one thread)."""
    x = keras.Input((20, 20, 8), batch_size=1)
    a = L.Conv2D(80, 3, padding="same", activation="relu")(x)
    b = L.DepthwiseConv2D(3, padding="same", activation="relu")(a)
    c = L.Add()([a, L.Conv2D(80, 1)(b)])
    d = L.DepthwiseConv2D(5, strides=2, padding="same", activation="relu")(c)
    e = L.Conv2D(24, 3, dilation_rate=2, padding="same", activation="relu")(d)
    return keras.Model(x, L.Dense(10)(L.GlobalAveragePooling2D()(e)))

def dwmult() -> keras.Model:
    """TFLM's micro_speech layer: DEPTHWISE_CONV_2D of a 1-channel input, depth multiplier 8, a 10 x 8 window at
    stride 2 (aot/passes/depthwise_as_conv.py writes it as a CONV_2D), then FULLY_CONNECTED."""
    x = keras.Input((49, 40, 1), batch_size=1)
    a = L.DepthwiseConv2D((10, 8), strides=2, padding="same", depth_multiplier=8, activation="relu")(x)
    return keras.Model(x, L.Dense(4)(L.Flatten()(a)))


def moves() -> keras.Model:
    """Data movement between int8 convs: PAD, CONCATENATION, STRIDED_SLICE, RESHAPE."""
    x = keras.Input((10, 10, 4), batch_size=1)
    a = L.Conv2D(8, 3, padding="valid", activation="relu")(L.ZeroPadding2D(1)(x))
    b = L.Concatenate(axis=-1)([a, L.Conv2D(8, 1, activation="relu")(x)])
    c = L.Lambda(lambda t: t[:, 1:9:2, :, :])(L.Conv2D(8, 3, padding="same")(b))
    return keras.Model(x, L.Dense(5)(L.Reshape((4 * 10 * 8,))(c)))

def acts() -> keras.Model:
    """The elementwise activations on the input itself, so that a 256-element input reaches every int8
    value of each: LOGISTIC, TANH, LEAKY_RELU, HARD_SWISH, RELU, RELU6, MAXIMUM, MINIMUM."""
    x = keras.Input((8, 8, 4), batch_size=1)
    a = L.Activation("sigmoid")(x)
    b = L.Activation("tanh")(x)
    c = L.LeakyReLU(negative_slope=0.1)(x)
    d = L.Activation("hard_swish")(x)
    g = L.Maximum()([a, b])
    h = L.Minimum()([c, d])
    return keras.Model(x, [L.Concatenate()([g, h, L.ReLU()(x), L.ReLU(max_value=6.0)(x)])])

def excite() -> keras.Model:
    """A MobileNet-v3-like block: conv with HARD_SWISH, squeeze-and-excite (MEAN, two FULLY_CONNECTED,
    LOGISTIC, a MUL broadcast over H and W), a shortcut ADD, a TRANSPOSE_CONV upsampling, FC head."""
    x = keras.Input((8, 8, 4), batch_size=1)
    a = L.Conv2D(8, 3, padding="same", activation="hard_swish")(x)
    s = L.GlobalAveragePooling2D(keepdims=True)(a)
    s = L.Dense(8, activation="sigmoid")(L.Dense(4, activation="relu")(s))
    c = L.Add()([L.Multiply()([a, s]), L.Conv2D(8, 1)(x)])
    u = L.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu")(c)
    v = L.Conv2DTranspose(2, 2, strides=2, padding="valid")(c)
    return keras.Model(x, [u, L.Dense(3)(L.Flatten()(v))])

def shuffle() -> keras.Model:
    """int8 data movement and clamps no other model has: TILE, TRANSPOSE, RESIZE_NEAREST_NEIGHBOR (the
    converter keeps TILE and RESIZE in int8 only before another int8 op: a 1x1 conv each), and
    RELU_N1_TO_1 (clip_by_value to [-1, 1]) and ReLU(max_value=1) of a 1x1 conv that spreads the input
    over [-2, 2]. The converter writes ReLU(max_value=1) as RELU and MINIMUM(1), never as RELU_0_TO_1:
    `relu_0_to_1` below swaps that RELU for RELU_0_TO_1, the same function."""
    def spread(shape, dtype=None):
        return tf.eye(4, batch_shape=[1, 1], dtype=dtype) * 2.0

    x = keras.Input((6, 6, 4), batch_size=1)
    y = L.Conv2D(4, 1, kernel_initializer=spread)(x)
    a = L.Conv2D(4, 1)(L.Lambda(lambda t: tf.tile(t, [1, 2, 1, 3]))(y))
    b = L.Lambda(lambda t: tf.transpose(t, [0, 2, 1, 3]))(y)
    c = L.Conv2D(4, 1)(L.Lambda(lambda t: tf.image.resize(t, (12, 9), method="nearest"))(y))
    d = L.Lambda(lambda t: tf.clip_by_value(t, -1.0, 1.0))(y)
    return keras.Model(x, [a, b, c, d, L.ReLU(max_value=1.0)(y)])

def resize() -> keras.Model:
    """RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (Keras Resizing and bilinear UpSampling2D; float)."""
    x = keras.Input((6, 6, 4), batch_size=1)
    a = L.Resizing(12, 12, interpolation="nearest")(x)
    b = L.Resizing(12, 12, interpolation="bilinear")(x)
    c = L.UpSampling2D(2, interpolation="bilinear")(x)
    return keras.Model(x, [L.Add()([a, b]), c])

def lstm():
    """Two stacked Keras LSTMs and a Dense head, in Keras 2 (tf_keras: `pip install tf_keras`), whose
    LSTM the converter fuses into UNIDIRECTIONAL_SEQUENCE_LSTM (Keras 3's LSTM becomes a WHILE loop)."""
    import tf_keras

    x = tf_keras.Input((10, 6), batch_size=1)
    h = tf_keras.layers.LSTM(8, return_sequences=True)(x)
    return tf_keras.Model(x, tf_keras.layers.Dense(3)(tf_keras.layers.LSTM(5)(h)))

def variants():
    """Two tf_keras LSTMs side by side on one input (UNIDIRECTIONAL_SEQUENCE_LSTM each); `lstm_variants`
    then gives them the optional parts no Keras layer converts to: the first CIFG, peepholes, layer
    normalisation and a projection with bias and clip, the second all four gates with peepholes and
    layer normalisation (made in float only)."""
    import tf_keras

    x = tf_keras.Input((10, 6), batch_size=1)
    return tf_keras.Model(x, [tf_keras.layers.LSTM(8, return_sequences=True)(x),
                              tf_keras.layers.LSTM(8, return_sequences=True)(x)])

def stream():
    """A streaming keyword model as firmware runs it: one 6-value frame per call into a stateful tf_keras
    LSTM (its h and c in resource variables: CALL_ONCE, VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE; the
    one step a WHILE loop), a Dense head."""
    import tf_keras

    x = tf_keras.Input((1, 6), batch_size=1)
    return tf_keras.Model(x, tf_keras.layers.Dense(3)(tf_keras.layers.LSTM(8, stateful=True)(x)))

def rnnshare():
    """tf_keras SimpleRNNs beside Bidirectional LSTMs (made in float only): the converter gives the SimpleRNN's WHILE
    the backward LSTM's buffer-less state tensor as its initial state (both are zeros [1, 4]), so in LiteRT the
    WHILE starts from what that LSTM left in it. One SimpleRNN reads the LSTMs' sequences, one the input; a
    Bidirectional LSTM reads the second's last state, repeated."""
    import tf_keras

    layers = tf_keras.layers
    x = tf_keras.Input((6, 4), batch_size=1)
    a = layers.Bidirectional(layers.LSTM(4))(layers.RepeatVector(3)(layers.SimpleRNN(4)(x)))
    b = layers.SimpleRNN(4)(layers.Bidirectional(layers.LSTM(4, return_sequences=True))(x))
    return tf_keras.Model(x, [layers.Dense(2)(a), b])


def lstm3() -> keras.Model:
    """A Keras 3 LSTM over 10 steps, which the converter writes as a WHILE loop (cond and body subgraphs
    with GATHER, SPLIT, SLICE, CONCATENATION), and a Dense head."""
    x = keras.Input((10, 6), batch_size=1)
    return keras.Model(x, L.Dense(3)(L.LSTM(8)(x)))

def branch() -> keras.Model:
    """A data-dependent branch (tf.cond on the input's mean), which the converter writes as IF with a
    then and an else subgraph, between a conv and a Dense head."""

    class Gate(L.Layer):
        def call(self, x):
            return tf.cond(tf.reduce_mean(x) > 0.0, lambda: tf.nn.relu(x) * 2.0, lambda: tf.tanh(x) - 1.0)

    x = keras.Input((4, 4, 2), batch_size=1)
    return keras.Model(x, L.Dense(3)(L.Flatten()(L.Conv2D(4, 3, padding="same")(Gate()(x)))))

def gates() -> keras.Model:
    """16x8's own int16 algorithms (made in 16x8 only): LOGISTIC, TANH and LEAKY_RELU of a second input z
    of 65,536 values calibrated on [-12, 12] (past both tables' saturation), LOGISTIC and TANH of a 1x1
    conv that spreads x over [-6, 6]; ADD of inputs at unlike scales; MEAN; SOFTMAX over 8 channels of each
    of 256 pixels and over a Dense head."""
    def spread(shape, dtype=None):
        return tf.eye(8, batch_shape=[1, 1], dtype=dtype) * 6.0

    x = keras.Input((16, 16, 8), batch_size=1, name="x")
    z = keras.Input((256, 256), batch_size=1, name="z")
    y = L.Conv2D(8, 1, kernel_initializer=spread)(x)
    c = L.Add()([L.Activation("sigmoid")(y), L.Activation("tanh")(y)])
    m = L.GlobalAveragePooling2D()(L.Add()([c, x]))
    return keras.Model([x, z], [c, L.Softmax()(y), L.Softmax()(L.Dense(5)(m)), L.Activation("sigmoid")(z),
                                L.Activation("tanh")(z), L.LeakyReLU(negative_slope=0.2)(z)])

def arith() -> keras.Model:
    """16x8 SUB and MUL, each of two same-shape inputs and broadcast from a [1, 1, 1, C] input, and a
    TRANSPOSE_CONV with int64 biases and a fused RELU (made in 16x8 only; `requant_outputs` then adds
    QUANTIZE int16 -> int8 -> int16 and int16 -> int32 -> int16 at the transposed conv's output)."""
    x = keras.Input((6, 6, 4), batch_size=1, name="x")
    v = keras.Input((1, 1, 4), batch_size=1, name="v")
    a = L.Conv2D(4, 3, padding="same")(x)
    m = L.Multiply()([a, L.Subtract()([a, x])])
    u = L.Conv2DTranspose(3, 3, strides=2, padding="same", activation="relu",
                          bias_initializer=keras.initializers.RandomUniform(-0.5, 0.5))(m)
    return keras.Model([x, v], [u, L.Subtract()([x, v]), L.Multiply()([x, v])])

def pruned() -> keras.Model:
    """A 64-32-16 MLP pruned as tfmot's block pruning leaves it (issue 50): 3 of 4 blocks of 4 input
    weights zero in each Dense. Converted with `tf.lite.Optimize.EXPERIMENTAL_SPARSITY`, the float file
    stores both weights sparse with 1 x 4 blocks (block_map, a DENSE level of 4 inside a SPARSE_CSR one),
    the int8 file plain SPARSE_CSR (uint16 / uint8 index vectors); each behind a DENSIFY op."""
    x = keras.Input((64,), batch_size=1)
    m = keras.Model(x, L.Dense(16)(L.Dense(32, activation="relu")(x)))
    rng = np.random.default_rng(3)
    for layer in m.layers[1:]:
        w, bias = layer.get_weights()  # [in, out]: TFLite's FULLY_CONNECTED weight is [out, in]
        keep = np.repeat(rng.random((w.shape[0] // 4, w.shape[1])) < 0.25, 4, axis=0)
        layer.set_weights([w * keep, bias])
    return m

def mirror() -> keras.Model:
    """PRELU (Keras PReLU: alpha shared over H and W, and one alpha per element) and MIRROR_PAD (tf.pad
    with mode REFLECT and SYMMETRIC, which no Keras layer has) between convs (issue 50; float only)."""
    alpha = keras.initializers.RandomUniform(-0.5, 0.5)
    x = keras.Input((8, 8, 3), batch_size=1)
    a = L.PReLU(shared_axes=[1, 2], alpha_initializer=alpha)(L.Conv2D(4, 3, padding="same")(x))
    b = L.Lambda(lambda t: tf.pad(t, [[0, 0], [2, 1], [1, 2], [0, 0]], mode="REFLECT"))(a)
    c = L.Lambda(lambda t: tf.pad(t, [[0, 0], [1, 2], [2, 0], [0, 0]], mode="SYMMETRIC"))(L.Conv2D(4, 3)(b))
    d = L.Lambda(lambda t: tf.pad(t, [[0, 0], [0, 0], [3, 3], [0, 0]], mode="SYMMETRIC"))(x)
    return keras.Model(x, [L.PReLU(alpha_initializer=alpha)(c), d])

def resolver() -> keras.Model:
    """More of TFLM's resolver that the converter writes from TF ops (made in float only): FLOOR_MOD of
    floats and of integers, ROUND, LOGICAL_NOT, GELU (exact and approximate), REVERSE_V2,
    SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND."""
    x = keras.Input((4, 6, 8), batch_size=1)
    y = L.Conv2D(8, 1)(x)
    m = L.Lambda(lambda t: tf.math.floormod(t * 3.0, 0.7) + tf.math.floormod(t * 3.0, -0.7))(y)
    i = L.Lambda(lambda t: tf.cast(tf.math.floormod(tf.cast(t * 10.0, tf.int32), -3) +
                                   tf.math.floormod(tf.cast(t * 10.0, tf.int32), 4), tf.float32))(y)
    r = L.Lambda(lambda t: tf.round(t[0] * 4.0) + tf.cast(tf.logical_not(t[1] > t[0]), tf.float32))([y, x])
    g = L.Lambda(lambda t: tf.nn.gelu(t, approximate=False) + tf.nn.gelu(t * 2.0, approximate=True))(y)
    v = L.Lambda(lambda t: tf.reverse(t, [1, 2]))(g)  # LiteRT reverses along contiguous axes only
    w = np.random.default_rng(3).standard_normal((2, 2, 8, 8)).astype(np.float32) * 0.3
    d = L.Lambda(lambda t: tf.batch_to_space(tf.nn.conv2d(tf.space_to_batch_nd(t, [2, 2], [[0, 0], [1, 1]]), w, 1,
                                                          "SAME"), [2, 2], [[0, 0], [1, 1]]))(m)  # a dilated conv
    return keras.Model(x, [i, r, v, d])

def mathops() -> keras.Model:
    """Builtins of issue 50 a user's float model needs (made in float only): BATCH_MATMUL (runtime x
    runtime, adj_x / adj_y and a broadcast batch, as a mel-spectrogram front end's), SQUARED_DIFFERENCE,
    RSQRT, SELECT, SELECT_V2, GATHER_ND, SPACE_TO_DEPTH and DEPTH_TO_SPACE."""
    x = keras.Input((4, 4, 8), batch_size=1)
    y = L.Conv2D(8, 1)(x)
    sq = L.Lambda(lambda t: tf.math.squared_difference(t[0], t[1]))([x, y])
    r = L.Lambda(lambda t: tf.math.rsqrt(t * t + 0.5))(y)
    sel = L.Lambda(lambda t: tf.where(t[0] > 0.0, t[0], t[1]))([sq, r])
    sel = L.Lambda(lambda t: tf.where(t[0] > 1.0, t[1], 0.5))([r, sel])  # broadcast: SELECT_V2
    s2d = L.Lambda(lambda t: tf.nn.space_to_depth(t, 2))(sel)
    d2s = L.Lambda(lambda t: tf.nn.depth_to_space(t, 2))(L.Conv2D(8, 1)(s2d))
    g = L.Lambda(lambda t: tf.gather_nd(t, [[0, 1, 2], [0, 3, 0], [0, 2, 2]]))(x)
    a = L.Lambda(lambda t: tf.matmul(t[0], t[1], transpose_b=True))([x, y])
    b = L.Lambda(lambda t: tf.matmul(t[0], t[1], transpose_a=True))([x, y])
    c = L.Lambda(lambda t: tf.matmul(t[0], t[1][:, :1, :, :]))([a, y])  # [1, 4, 4, 4] x [1, 1, 4, 8]
    return keras.Model(x, [d2s, g, b, c])

def reduce() -> keras.Model:
    """More of TFLM's op resolver that is one ONNX op or two (made in float only): SIN, COS, SQUARE,
    FLOOR, NOT_EQUAL, LOG_SOFTMAX, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, ARG_MAX, ARG_MIN,
    PACK, UNPACK, SPLIT_V, ADD_N."""
    x = keras.Input((4, 4, 8), batch_size=1)
    y = L.Conv2D(8, 1)(x)
    a = L.Lambda(lambda t: tf.sin(t[0]) + tf.cos(t[1]) * tf.square(t[0]))([x, y])
    b = L.Lambda(lambda t: tf.where(tf.not_equal(tf.floor(t[0] * 2.0), 0.0), t[2], t[1]))([y, a, x])
    c = L.Lambda(lambda t: tf.nn.log_softmax(t, axis=-1))(b)
    r = L.Lambda(lambda t: tf.add_n([tf.reduce_sum(t, axis=1), tf.reduce_max(t, axis=2), tf.reduce_min(t, axis=1),
                                     tf.reduce_prod(t, axis=2)]))(c)
    am = L.Lambda(lambda t: tf.stack([tf.argmax(t, axis=-1, output_type=tf.int32),
                                      tf.argmin(t, axis=-1, output_type=tf.int32)], axis=1),
                  output_shape=(2, 4, 4))(y)
    u = L.Lambda(lambda t: tf.unstack(t, axis=1))(x)
    s1, s2 = L.Lambda(lambda t: tf.split(t, [3, 5], axis=-1))(y)
    return keras.Model(x, [r, am, L.Add()([u[0], u[3]]), s1, s2])

def melspec() -> keras.Model:
    """A mel-spectrogram front end (made in float only): the power of a [49, 65] spectrogram (SQUARE),
    a BATCH_MATMUL by a constant [65, 16] filter bank, a log (LOG of the energies plus 1e-6), and the
    same bank applied transposed (adj_y) to a second, [16, 65] layout of it."""
    bank = np.maximum(0.0, 1.0 - np.abs(np.linspace(0, 15, 65)[:, None] - np.arange(16)[None, :])).astype(np.float32)
    x = keras.Input((49, 65), batch_size=1)
    p = L.Lambda(lambda t: tf.square(t))(x)
    m = L.Lambda(lambda t: tf.math.log(tf.matmul(t, tf.constant(bank)) + 1e-6))(p)
    n = L.Lambda(lambda t: tf.matmul(t, tf.constant(bank.T[None]), transpose_b=True))(p)
    return keras.Model(x, [m, n])

def misc() -> keras.Model:
    """Still more of TFLM's op resolver (made in float only): CAST, FLOOR_DIV, CUMSUM,
    BROADCAST_TO, L2_NORMALIZATION."""
    x = keras.Input((4, 4, 8), batch_size=1)
    y = L.Conv2D(8, 1)(x)
    a = L.Lambda(lambda t: tf.cast(tf.logical_not(t[0] > t[1]), tf.float32) + tf.math.floordiv(t[0], 0.3))([x, y])
    c = L.Lambda(lambda t: tf.cumsum(t, axis=2))(y)
    d = L.Lambda(lambda t: tf.broadcast_to(t[:, :1], (1, 3, 4, 8)) * 2.0)(y)
    e = L.Lambda(lambda t: tf.math.l2_normalize(t, axis=-1))(y)
    return keras.Model(x, [a, c, d, e])

def padded() -> keras.Model:
    """Explicit pads the converter keeps as PAD ops, not being SAME's (issue 53: aotc folds them into the
    reader): PyTorch's pad of 1 before a stride-2 depthwise conv, asymmetric pads before a conv, one PAD
    read by a depthwise conv (depth multiplier 2) and a strided conv, a pad wider than its conv's kernel
    (outputs wholly in the padding), a dilated depthwise conv, a pad before a MAX_POOL_2D after a RELU and
    one before an AVERAGE_POOL_2D (which counts the padding, so that PAD stays)."""
    x = keras.Input((12, 12, 8), batch_size=1)
    a = L.DepthwiseConv2D(3, strides=2, activation="relu6")(L.ZeroPadding2D(1)(x))
    b = L.Conv2D(8, 3, activation="relu")(L.ZeroPadding2D(((2, 0), (1, 3)))(x))
    p = L.ZeroPadding2D(((1, 2), (2, 1)))(b)
    c = L.DepthwiseConv2D(3, depth_multiplier=2)(p)
    d = L.Conv2D(4, (2, 3), strides=(1, 2))(p)
    e = L.Conv2D(4, 2)(L.ZeroPadding2D(3)(a))
    f = L.DepthwiseConv2D(3, dilation_rate=2)(L.ZeroPadding2D(((3, 1), (2, 2)))(x))
    g = L.MaxPooling2D(3, strides=2)(L.ZeroPadding2D(1)(b))
    h = L.AveragePooling2D(2)(L.ZeroPadding2D(((0, 1), (1, 0)))(x))
    return keras.Model(x, [a, c, d, e, f, g, h])

def arrays(sixteen: bool = False) -> keras.Model:
    """int8 data movement (issue 50): GATHER, GATHER_ND, SLICE, SPLIT, SPLIT_V, PACK, UNPACK,
    SPACE_TO_DEPTH, DEPTH_TO_SPACE, BROADCAST_TO, MIRROR_PAD (REFLECT and SYMMETRIC), REVERSE_V2,
    SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, REDUCE_MAX, REDUCE_MIN, ARG_MAX and ARG_MIN after a conv:
    each keeps its input's scale and zero point. Also written 16x8 (`sixteen`) without the four the
    converter does not quantize to 16x8 (SPACE_TO_DEPTH, DEPTH_TO_SPACE, ARG_MAX, ARG_MIN). Each conv
    output has one reader: with several, the converter leaves some of them float."""
    x = keras.Input((4, 4, 8), batch_size=1)
    y = [L.Conv2D(8, 1)(x) for _ in range(4)]
    g = L.Lambda(lambda t: tf.gather(t, [3, 0, 2, 2], axis=-1))(y[0])
    a, b = L.Lambda(lambda t: tf.split(t, 2, axis=-1))(y[1])
    c, d = L.Lambda(lambda t: tf.split(t, [3, 5], axis=-1))(y[2])
    rv = L.Lambda(lambda t: tf.reverse(t, [1, 2]))(y[3])
    n = L.Lambda(lambda t: tf.gather_nd(t, [[0, 1, 2], [0, 3, 0], [0, 2, 2]]))(g)
    s = L.Lambda(lambda t: tf.slice(t, [0, 1, 0, 1], [1, 2, 3, 2]))(g)
    mx = L.Lambda(lambda t: tf.reduce_max(t, axis=[1, 2]))(g)
    p = L.Lambda(lambda t: tf.stack(t, axis=1))([a, b])
    u = L.Lambda(lambda t: tf.unstack(t, axis=2))(d)
    mr = L.Lambda(lambda t: tf.pad(t, [[0, 0], [2, 1], [1, 2], [0, 0]], mode="REFLECT"))(c)
    ms = L.Lambda(lambda t: tf.pad(t, [[0, 0], [1, 2], [2, 0], [0, 0]], mode="SYMMETRIC"))(c)
    bt = L.Lambda(lambda t: tf.broadcast_to(t[:, :1], (1, 3, 4, 8)))(rv)
    sb = L.Lambda(lambda t: tf.space_to_batch_nd(t, [2, 2], [[0, 0], [2, 0]]))(rv)
    bs = L.Lambda(lambda t: tf.batch_to_space(t, [2, 2], [[1, 0], [0, 1]]))(sb)
    mn = L.Lambda(lambda t: tf.reduce_min(t, axis=2, keepdims=True))(bt)
    outs = [n, s, mx, p, *u, mr, ms, bs, mn]
    if sixteen:
        return keras.Model(x, outs)
    s2d = L.Lambda(lambda t: tf.nn.space_to_depth(t, 2))(rv)
    d2s = L.Lambda(lambda t: tf.nn.depth_to_space(t, 2))(rv)
    am = L.Lambda(lambda t: tf.argmax(t, axis=-1, output_type=tf.int32), output_shape=(3, 4))(bt)
    an = L.Lambda(lambda t: tf.argmin(t, axis=1, output_type=tf.int32), output_shape=(4, 8))(bt)
    return keras.Model(x, [*outs, s2d, d2s, am, an])

def compare() -> keras.Model:
    """int8 arithmetic of issue 50 (int8 only): PRELU (alpha shared over H and W, and per element), the six
    comparisons of two differently quantized inputs and of an input and a constant (NOT_EQUAL: an EQUAL
    made NOT_EQUAL by not_equal, which the converter leaves float), SELECT_V2 of two
    inputs quantized alike, and the unary ABS, RSQRT, SQRT and LOG, each after a conv."""
    alpha = keras.initializers.RandomUniform(-0.5, 0.5)
    x = keras.Input((4, 4, 8), batch_size=1)
    y = [L.Conv2D(8, 1)(x) for _ in range(4)]
    p = L.PReLU(shared_axes=[1, 2], alpha_initializer=alpha)(y[0])
    q = L.PReLU(alpha_initializer=alpha)(y[1])
    def tests(t):
        u, v = t
        return tf.stack([tf.cast(c, tf.int32) for c in (tf.less(u, v), tf.less_equal(u, v), tf.greater(u, 0.1),
                                                        tf.greater_equal(v, u), tf.equal(u, v))],
                        axis=1)
    c = L.Lambda(tests)([y[0], y[2]])
    s = L.Lambda(lambda t: tf.where(t[0] > t[1], t[0], t[1] * 1.0))([y[2], y[3]])
    a = L.Lambda(lambda t: tf.abs(t))(y[3])
    ne = L.Lambda(lambda t: tf.cast(tf.equal(t, 0.05), tf.int32))(y[2])  # made NOT_EQUAL (not_equal)
    r = L.Lambda(lambda t: tf.math.rsqrt(tf.abs(t) + 0.1))(y[1])
    q2 = L.Lambda(lambda t: tf.sqrt(tf.abs(t)))(y[2])
    lg = L.Lambda(lambda t: tf.math.log(tf.abs(t) + 0.01))(y[0])
    return keras.Model(x, [p, q, c, s, a, ne, r, q2, lg])

def normq() -> keras.Model:
    """Issue 50's int8 normalisations and products (int8 only): L2_NORMALIZATION and LOG_SOFTMAX over the channels
    of a conv each, REDUCE_PROD over the channels of another (and over H and W with keep_dims, which the converter
    writes with the reduced axes not last)."""
    x = keras.Input((4, 4, 8), batch_size=1)
    y = [L.Conv2D(c, 1)(x) for c in (16, 4, 3, 8)]
    n = L.Lambda(lambda t: tf.math.l2_normalize(t, axis=-1))(y[0])
    p = L.Lambda(lambda t: tf.reduce_prod(t, axis=-1))(y[1])
    q = L.Lambda(lambda t: tf.reduce_prod(t, axis=[1, 2], keepdims=True))(y[2])
    s = L.Lambda(lambda t: tf.nn.log_softmax(t, axis=-1))(y[3])
    return keras.Model(x, [n, p, q, s])


def hybrid_mlp() -> keras.Model:
    """A Keras MLP on a batch of 2 for dynamic-range quantisation (issue 50): FULLY_CONNECTED with int8 weights
    (per channel, >= 1024 of them: the converter leaves smaller weights float) on float activations, fused
    RELU and TANH, and a small float Dense between; `symmetric_inputs` makes the last FC quantize its input
    symmetrically, as files from before asymmetric_quantize_inputs do."""
    x = keras.Input((64,), batch_size=2)
    h = L.Dense(48, activation="relu")(x)
    h = L.Dense(8)(h)
    h = L.Dense(128, activation="tanh")(h)
    return keras.Model(x, L.Dense(16)(h))

def hybrid_deconv() -> keras.Model:
    """TRANSPOSE_CONV for dynamic-range quantisation: Keras Conv2DTranspose with int8 weights per channel (LiteRT's
    HybridTransposeConv: its products scaled and summed in float), SAME at stride 2 with RELU, then VALID."""
    x = keras.Input((6, 6, 16), batch_size=1)
    h = L.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu")(x)
    return keras.Model(x, L.Conv2DTranspose(8, 4, padding="valid")(h))

def hybrid_lstm():
    """A tf_keras LSTM (UNIDIRECTIONAL_SEQUENCE_LSTM) for dynamic-range quantisation: its eight gate weights int8
    with a scale each (48 x 32 and 48 x 48: the converter leaves weights of fewer than 1024 elements float),
    asymmetric_quantize_inputs, a float Dense head on every step."""
    import tf_keras

    x = tf_keras.Input((5, 32), batch_size=1)
    h = tf_keras.layers.LSTM(48, return_sequences=True)(x)
    return tf_keras.Model(x, tf_keras.layers.Dense(4)(h))

def hybrid_conv(depthwise: bool = True) -> keras.Model:
    """A small conv net for dynamic-range quantisation: CONV_2D (per-channel int8 weights: LiteRT's asymmetric
    per-channel hybrid path), a grouped CONV_2D, a 128-channel DEPTHWISE_CONV_2D (multiplier 2) with stride 2
    and RELU6, a dilated CONV_2D, then a FULLY_CONNECTED. hybrid_conv_pt converts it with one scale per tensor
    (the symmetric per-tensor conv path) without the grouped conv (LiteRT refuses one scale there) and the
    depthwise conv (whose one scale LiteRT would read per channel, past its end)."""
    x = keras.Input((10, 10, 8), batch_size=2)
    h = L.Conv2D(32, 3, padding="same", activation="relu")(x)
    h = L.Conv2D(32, 3, padding="valid", groups=2 if depthwise else 1)(h)
    if depthwise:
        h = L.DepthwiseConv2D(3, strides=2, depth_multiplier=4, padding="same", activation="relu6")(h)
    h = L.Conv2D(8, 3, padding="same", dilation_rate=2)(h)
    return keras.Model(x, L.Dense(16)(L.Flatten()(h)))

def mathq(sixteen: bool = False) -> keras.Model:
    """Issue 50's quantized arithmetic, written int8 and 16x8: an attention head (FULLY_CONNECTED q, k, v;
    BATCH_MATMUL of q by k transposed, SOFTMAX, BATCH_MATMUL by v), RESIZE_BILINEAR (half-pixel centers and
    align_corners), SQUARED_DIFFERENCE from a MEAN (a variance, broadcast; int8 only: the converter writes
    it on int16 too, which LiteRT's kernel refuses), EXP, GELU, ABS and SQRT (int8 only: the converter has no
    16x8 SQRT), each after a conv."""
    x = keras.Input((6, 6, 8), batch_size=1)
    y = [L.Conv2D(8, 1)(x) for _ in range(4)]
    t = L.Reshape((36, 8))(y[0])
    q, k, v = (L.Dense(8)(t) for _ in range(3))
    scores = L.Lambda(lambda a: tf.matmul(a[0], a[1], transpose_b=True) * 0.35)([q, k])
    att = L.Lambda(lambda a: tf.matmul(tf.nn.softmax(a[0]), a[1]))([scores, v])
    r1 = L.Lambda(lambda a: tf.compat.v1.image.resize_bilinear(a, (9, 11), half_pixel_centers=True))(y[1])
    r2 = L.Lambda(lambda a: tf.compat.v1.image.resize_bilinear(a, (11, 11), align_corners=True))(y[1])
    var = L.Lambda(lambda a: tf.math.squared_difference(a, tf.reduce_mean(a, axis=[1, 2], keepdims=True)))(y[2])
    e = L.Lambda(lambda a: tf.exp(a))(y[3])
    g = L.Lambda(lambda a: tf.nn.gelu(a))(y[3])
    ab = L.Lambda(lambda a: tf.abs(a))(y[3])
    sq = L.Lambda(lambda a: tf.sqrt(tf.abs(a)))(y[2])
    return keras.Model(x, [att, r1, r2, e, g, ab] if sixteen else [att, r1, r2, var, e, g, ab, sq])

def mobilenet_v2_224() -> keras.Model:
    """Keras's MobileNetV2 at 224 x 224, alpha 1.0, seeded weights (no ImageNet download). Its stride-2
    depthwise convs pad (0, 1) explicitly (ZeroPadding2D, correct_pad), which the converter folds into
    SAME: the .tflite has no PAD."""
    return keras.applications.MobileNetV2(input_shape=(224, 224, 3), alpha=1.0, weights=None)

def mobilenet_v2_224_torchpad() -> keras.Model:
    """The same network with each ZeroPadding2D padding 1 on every side, as PyTorch's MobileNetV2 pads
    its stride-2 depthwise convs (a port of torchvision's weights has it, and so has TFLM's test model
    mobilenet_v2_quantized_1x3x224x224.tflite): the output sizes are unchanged, but (1, 1) is not SAME,
    so the converter keeps each pad as a PAD op before a VALID depthwise conv."""
    stock = mobilenet_v2_224()

    def torch_pad(layer):
        if isinstance(layer, L.ZeroPadding2D):
            return L.ZeroPadding2D(((1, 1), (1, 1)), name=layer.name)
        return layer.__class__.from_config(layer.get_config())
    model = keras.models.clone_model(stock, clone_function=torch_pad)
    model.set_weights(stock.get_weights())
    return model
