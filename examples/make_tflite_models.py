"""Make the small .tflite models under tests/models/tflite/ as firmware teams make them (issue 29).

Keras -> tf.lite.TFLiteConverter, float and full-int8 post-training quantisation with a
representative dataset. Needs TensorFlow, which neither aotc nor its tests do: run it in a venv
of its own and commit the files it writes:

    python -m venv /work/venvs/tf && /work/venvs/tf/bin/pip install tensorflow-cpu
    /work/venvs/tf/bin/python examples/make_tflite_models.py [OUT_DIR [MODEL...]]

The large models (LARGE below: MobileNetV2 224, about 4 MB a file) are made only when named, and are
not committed (bench/models/large/ is git-ignored); `bench/arenas.py --large` makes them on demand:

    /work/venvs/tf/bin/python examples/make_tflite_models.py bench/models/large mobilenet_v2_224
"""

from __future__ import annotations

import sys
from pathlib import Path

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


def relu_0_to_1(tflite: bytes) -> bytes:
    """Each RELU whose one reader is a MINIMUM with the constant 1 becomes RELU_0_TO_1 (the MINIMUM is
    then a no-op): the op TFLite has for clip(x, 0, 1), which no Keras layer converts to."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(tflite, 0)
    sg, ops = m.subgraphs[0], sch.BuiltinOperator

    def code(o):
        return m.operatorCodes[o.opcodeIndex].builtinCode

    def one(t):
        buf = m.buffers[sg.tensors[t].buffer].data
        if buf is None or len(buf) == 0:
            return False
        q = sg.tensors[t].quantization
        v = np.frombuffer(bytes(buf), np.int8 if sg.tensors[t].type == 9 else np.float32).astype(np.float64)
        if q is not None and q.scale is not None and len(q.scale):
            v = (v - q.zeroPoint[0]) * q.scale[0]
        return v.size == 1 and abs(v[0] - 1.0) < 1e-2
    index = None
    for o in sg.operators:
        if code(o) != ops.RELU:
            continue
        readers = [r for r in sg.operators if o.outputs[0] in list(r.inputs)]
        if len(readers) == 1 and code(readers[0]) == ops.MINIMUM and any(one(t) for t in readers[0].inputs):
            if index is None:
                oc = sch.OperatorCodeT()
                oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = ops.RELU_0_TO_1, 127, 1
                m.operatorCodes.append(oc)
                index = len(m.operatorCodes) - 1
            o.opcodeIndex = index
    assert index is not None, "no RELU before a MINIMUM(1)"
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def not_equal(tflite: bytes) -> bytes:
    """The converter leaves a NOT_EQUAL float (a DEQUANTIZE before it) where it quantizes EQUAL: each
    EQUAL of a constant second input becomes NOT_EQUAL (the same arithmetic, the answer negated)."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(tflite, 0)
    sg, ops = m.subgraphs[0], sch.BuiltinOperator
    equal = [o for o in sg.operators if m.operatorCodes[o.opcodeIndex].builtinCode == ops.EQUAL
             and m.buffers[sg.tensors[o.inputs[1]].buffer].data is not None
             and len(m.buffers[sg.tensors[o.inputs[1]].buffer].data)]
    assert equal, "no EQUAL of a constant"
    oc = sch.OperatorCodeT()
    oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = ops.NOT_EQUAL, ops.NOT_EQUAL, 2
    m.operatorCodes.append(oc)
    for o in equal:
        o.opcodeIndex = len(m.operatorCodes) - 1
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


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


def lstm_variants(tflite: bytes) -> bytes:
    """The LSTM variants LiteRT's kernel runs and the converter writes only from TF's composite LSTM cells
    (`tf._implements` LSTMCellSimple / LayerNormalizedLstmCellSimple, as the builtin LSTM op): CIFG (no
    input gate: inputs 1, 5, 12 absent), peepholes (9-11), layer normalisation coefficients (20-23)
    and a projection (16, 17; the output and h shrink to its size), on the converted float file."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(tflite, 0)
    sg = m.subgraphs[0]
    rng = np.random.default_rng(7)
    lstms = [o for o in sg.operators
             if m.operatorCodes[o.opcodeIndex].builtinCode == sch.BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM]
    assert len(lstms) == 2

    def const(values: np.ndarray, name: str) -> int:
        t = sch.TensorT()
        t.shape, t.type, t.name = list(values.shape), sch.TensorType.FLOAT32, name.encode()
        buf = sch.BufferT()
        buf.data = np.frombuffer(values.astype(np.float32).tobytes(), np.uint8)
        t.buffer = len(m.buffers)
        m.buffers.append(buf)
        sg.tensors.append(t)
        return len(sg.tensors) - 1
    n_cell, n_proj = 8, 5
    for k, op in enumerate(lstms):
        ins = list(op.inputs) + [-1] * (24 - len(op.inputs))
        cifg = k == 0
        if cifg:
            ins[1] = ins[5] = ins[12] = -1
        for j in (10, 11) if cifg else (9, 10, 11):
            ins[j] = const(rng.uniform(-0.5, 0.5, n_cell), f"lstm{k}_peephole{j}")
        for j in (21, 22, 23) if cifg else (20, 21, 22, 23):
            ins[j] = const(rng.uniform(0.5, 1.5, n_cell), f"lstm{k}_layer_norm{j}")
        if cifg:
            ins[16] = const(rng.uniform(-0.6, 0.6, (n_proj, n_cell)), "lstm0_projection")
            ins[17] = const(rng.uniform(-0.1, 0.1, n_proj), "lstm0_projection_bias")
            for j in (5, 6, 7, 8):  # the recurrent weights read the projected h
                if ins[j] >= 0:
                    ins[j] = const(rng.uniform(-0.5, 0.5, (n_cell, n_proj)), f"lstm0_recurrent{j}")
            sg.tensors[ins[18]].shape = [1, n_proj]
            sg.tensors[op.outputs[0]].shape = [1, 10, n_proj]
            sg.tensors[op.outputs[0]].shapeSignature = None
            op.builtinOptions.projClip = 0.8
        op.inputs = ins
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def stream():
    """A streaming keyword model as firmware runs it: one 6-value frame per call into a stateful tf_keras
    LSTM (its h and c in resource variables: CALL_ONCE, VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE; the
    one step a WHILE loop), a Dense head."""
    import tf_keras

    x = tf_keras.Input((1, 6), batch_size=1)
    return tf_keras.Model(x, tf_keras.layers.Dense(3)(tf_keras.layers.LSTM(8, stateful=True)(x)))


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


def requant_outputs(tflite: bytes) -> bytes:
    """QUANTIZE ops the converter writes only between mixed-precision parts: the TRANSPOSE_CONV's output
    (int16) requantised to int8 at 3 times its scale and back (zero point 5 on the int8 side), and to int32 at
    2^-8 of its scale and back; the four results become outputs. LiteRT's reference runs them all
    (TFLM also has int8 -> int32, which LiteRT refuses)."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(tflite, 0)
    sg = m.subgraphs[0]
    oc = sch.OperatorCodeT()
    oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = (sch.BuiltinOperator.QUANTIZE,) * 2 + (1,)
    m.operatorCodes.append(oc)
    code = len(m.operatorCodes) - 1
    out = next(o.outputs[0] for o in sg.operators
               if m.operatorCodes[o.opcodeIndex].builtinCode == sch.BuiltinOperator.TRANSPOSE_CONV)
    src = sg.tensors[out]

    def quantize(x: int, dtype: int, scale: float, zero: int, name: str) -> int:
        t = sch.TensorT()
        t.shape, t.type, t.name = list(src.shape), dtype, name.encode()
        t.quantization = sch.QuantizationParametersT()
        t.quantization.scale, t.quantization.zeroPoint = [scale], [zero]
        t.buffer = len(m.buffers)
        m.buffers.append(sch.BufferT())
        sg.tensors.append(t)
        op = sch.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = code, [x], [len(sg.tensors) - 1]
        sg.operators.append(op)
        return len(sg.tensors) - 1
    scale = float(src.quantization.scale[0])
    u8 = quantize(out, sch.TensorType.INT8, scale * 3, 5, "u_int8")
    u32 = quantize(out, sch.TensorType.INT32, scale / 2 ** 8, 0, "u_int32")
    sg.outputs = [*sg.outputs, u8, quantize(u8, sch.TensorType.INT16, scale, 0, "u_int8_int16"), u32,
                  quantize(u32, sch.TensorType.INT16, scale * 2, 0, "u_int32_int16")]
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


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


class Written:
    """A TFLite model written op by op with the schema, for what the converter does not write: ops it
    has no Keras layer for (SVDF, L2_POOL_2D), or writes only where shapes are dynamic (SHAPE, FILL,
    ZEROS_LIKE, BROADCAST_ARGS), or rewrites (EMBEDDING_LOOKUP becomes a GATHER)."""

    def __init__(self):
        from tensorflow.lite.python import schema_py_generated as sch

        self.sch = sch
        self.m, self.sg = sch.ModelT(), sch.SubGraphT()
        self.m.version, self.m.buffers, self.m.subgraphs, self.m.operatorCodes = 3, [sch.BufferT()], [self.sg], []
        self.sg.tensors, self.sg.operators = [], []

    def tensor(self, shape, dtype, scale=None, zero=None, data=None, variable=False) -> int:
        sch, t = self.sch, self.sch.TensorT()
        t.shape, t.type, t.name, t.isVariable = list(shape), dtype, f"t{len(self.sg.tensors)}".encode(), variable
        if scale is not None:
            t.quantization = sch.QuantizationParametersT()
            t.quantization.scale, t.quantization.zeroPoint = [scale], [zero]
        buf = sch.BufferT()
        if data is not None:
            buf.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
        t.buffer = len(self.m.buffers)
        self.m.buffers.append(buf)
        self.sg.tensors.append(t)
        return len(self.sg.tensors) - 1

    def op(self, code, inputs, outputs, options_type=0, options=None, version=1, options2=None) -> None:
        codes = [c.builtinCode for c in self.m.operatorCodes]
        if code not in codes:
            c = self.sch.OperatorCodeT()
            c.builtinCode, c.deprecatedBuiltinCode, c.version = code, min(code, 127), version
            self.m.operatorCodes.append(c)
        o = self.sch.OperatorT()
        o.opcodeIndex = [c.builtinCode for c in self.m.operatorCodes].index(code)
        o.inputs, o.outputs, o.builtinOptionsType, o.builtinOptions = inputs, outputs, options_type, options
        if options2 is not None:  # (type, options) in builtin_options_2, where the StableHLO ops keep theirs
            o.builtinOptions2Type, o.builtinOptions2 = options2
        self.sg.operators.append(o)

    def finish(self, inputs: list[int], outputs: list[int]) -> bytes:
        import flatbuffers

        self.sg.inputs, self.sg.outputs = inputs, outputs
        fb = flatbuffers.Builder(0)
        fb.Finish(self.m.Pack(fb), file_identifier=b"TFL3")
        return bytes(fb.Output())


def svdf_int8() -> bytes:
    """A full-integer SVDF as TFLM's keyword_scrambled has (no Keras layer converts to SVDF; it came from
    TF1 speech models), written with the schema: int8 [1, 12] input, 8 filters of rank 2 over 5 steps
    (int8 feature weights, int16 time weights and state, int32 bias, RELU), then an int8 -> int16
    SOFTMAX (output zero point -32768, scale 1/65536), and a QUANTIZE int16 -> int32 as that model ends."""
    w = Written()
    sch, t = w.sch, w.sch.TensorType
    rng = np.random.default_rng(11)
    x = w.tensor([1, 12], t.INT8, 0.05, -3)
    wf = w.tensor([8, 12], t.INT8, 0.003, 0, rng.integers(-127, 128, (8, 12)).astype(np.int8))
    wt = w.tensor([8, 5], t.INT16, 5e-5, 0, rng.integers(-20000, 20000, (8, 5)).astype(np.int16))
    bias = w.tensor([4], t.INT32, 2e-7, 0, rng.integers(-20000, 20000, 4).astype(np.int32))
    state = w.tensor([1, 40], t.INT16, 0.004, 0, variable=True)
    y = w.tensor([1, 4], t.INT8, 0.1, -128)
    opts = sch.SVDFOptionsT()
    opts.rank, opts.fusedActivationFunction = 2, sch.ActivationFunctionType.RELU
    w.op(sch.BuiltinOperator.SVDF, [x, wf, wt, bias, state], [y], sch.BuiltinOptions.SVDFOptions, opts, version=4)
    p = w.tensor([1, 4], t.INT16, 1 / 65536, -32768)
    soft = sch.SoftmaxOptionsT()
    soft.beta = 1.0
    w.op(sch.BuiltinOperator.SOFTMAX, [y], [p], sch.BuiltinOptions.SoftmaxOptions, soft)
    q = w.tensor([1, 4], t.INT32, 1 / 32768, 0)
    w.op(sch.BuiltinOperator.QUANTIZE, [p], [q])
    return w.finish([x], [y, p, q])


def svdf_written(hybrid: bool = False) -> bytes:
    """A float SVDF (written with the schema, as svdf_int8): [2, 12] input, 8 filters of rank 2 over 5 steps, a
    bias, RELU, the state in a variable tensor. hybrid: feature and time weights int8 with a scale each (LiteRT's
    hybrid SVDF), the input quantized asymmetrically."""
    w = Written()
    sch, t = w.sch, w.sch.TensorType
    rng = np.random.default_rng(18)

    def weights(shape):
        v = rng.standard_normal(shape).astype(np.float32) * 0.5
        if not hybrid:
            return w.tensor(shape, t.FLOAT32, data=v)
        scale = float(np.abs(v).max()) / 127
        return w.tensor(shape, t.INT8, scale, 0, data=np.clip(np.round(v / scale), -127, 127).astype(np.int8))

    x = w.tensor([2, 12], t.FLOAT32)
    ins = [x, weights([8, 12]), weights([8, 5]), w.tensor([4], t.FLOAT32, data=rng.standard_normal(4).astype(
        np.float32) * 0.1), w.tensor([2, 40], t.FLOAT32, variable=True)]
    y = w.tensor([2, 4], t.FLOAT32)
    opts = sch.SVDFOptionsT()
    opts.rank, opts.fusedActivationFunction, opts.asymmetricQuantizeInputs = 2, sch.ActivationFunctionType.RELU, \
        hybrid
    w.op(sch.BuiltinOperator.SVDF, ins, [y], sch.BuiltinOptions.SVDFOptions, opts)
    return w.finish([x], [y])


def detect_float() -> bytes:
    """TFLite_Detection_PostProcess, the custom op SSD detectors end in (issue 50), written with the schema and
    a flexbuffer of options: float box encodings [1, 64, 4] and class predictions [1, 64, 4] (a background
    column and 3 classes), 64 constant anchors on an 8 x 8 grid, LiteRT's fast NMS, 5 detections."""
    from flatbuffers import flexbuffers

    w = Written()
    sch, t = w.sch, w.sch.TensorType
    g = (np.arange(8, dtype=np.float32) + 0.5) / 8
    anchors = np.stack([np.repeat(g, 8), np.tile(g, 8), np.full(64, 0.25, np.float32),
                        np.full(64, 0.25, np.float32)], 1).astype(np.float32)
    enc, cls = w.tensor([1, 64, 4], t.FLOAT32), w.tensor([1, 64, 4], t.FLOAT32)
    anc = w.tensor([64, 4], t.FLOAT32, data=anchors)
    outs = [w.tensor(s, t.FLOAT32) for s in ([1, 5, 4], [1, 5], [1, 5], [1])]
    code = sch.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = sch.BuiltinOperator.CUSTOM
    code.customCode, code.version = "TFLite_Detection_PostProcess", 1
    w.m.operatorCodes.append(code)
    o = sch.OperatorT()
    o.opcodeIndex, o.inputs, o.outputs = len(w.m.operatorCodes) - 1, [enc, cls, anc], outs
    o.customOptions = list(flexbuffers.Dumps({
        "max_detections": 5, "max_classes_per_detection": 1, "detections_per_class": 100, "use_regular_nms": False,
        "nms_score_threshold": 0.3, "nms_iou_threshold": 0.6, "num_classes": 3, "y_scale": 10.0, "x_scale": 10.0,
        "h_scale": 5.0, "w_scale": 5.0}))
    o.customOptionsFormat = sch.CustomOptionsFormat.FLEXBUFFERS
    w.sg.operators.append(o)
    return w.finish([enc, cls], outs)


def shapes_float() -> bytes:
    """Builtins of TFLM's resolver the converter writes only for dynamic shapes or never (float, written
    with the schema): L2_POOL_2D (2 x 2, SAME), SHAPE, ZEROS_LIKE, FILL of a run-time value,
    BROADCAST_ARGS of a run-time shape and a constant one, EMBEDDING_LOOKUP of ids computed by ARG_MAX."""
    w = Written()
    sch, t, op, opt = w.sch, w.sch.TensorType, w.sch.BuiltinOperator, w.sch.BuiltinOptions
    rng = np.random.default_rng(12)
    x = w.tensor([1, 4, 6, 3], t.FLOAT32)
    pool = sch.Pool2DOptionsT()
    pool.padding, pool.strideW, pool.strideH, pool.filterWidth, pool.filterHeight = sch.Padding.SAME, 1, 1, 2, 2
    l2 = w.tensor([1, 4, 6, 3], t.FLOAT32)
    w.op(op.L2_POOL_2D, [x], [l2], opt.Pool2DOptions, pool)
    zeros = w.tensor([1, 4, 6, 3], t.FLOAT32)
    w.op(op.ZEROS_LIKE, [x], [zeros])
    y = w.tensor([1, 4, 6, 3], t.FLOAT32)
    w.op(op.ADD, [l2, zeros], [y], opt.AddOptions, sch.AddOptionsT())
    shape_opts = sch.ShapeOptionsT()
    shape_opts.outType = t.INT32
    shape = w.tensor([4], t.INT32)
    w.op(op.SHAPE, [x], [shape], opt.ShapeOptions, shape_opts)
    other = w.tensor([2], t.INT32, data=np.array([6, 1], np.int32))
    both = w.tensor([4], t.INT32)
    w.op(op.BROADCAST_ARGS, [shape, other], [both])
    mean_opts = sch.ReducerOptionsT()
    mean_opts.keepDims = False
    axes = w.tensor([4], t.INT32, data=np.arange(4, dtype=np.int32))
    mean = w.tensor([], t.FLOAT32)
    w.op(op.MEAN, [x, axes], [mean], opt.ReducerOptions, mean_opts)
    dims = w.tensor([2], t.INT32, data=np.array([2, 3], np.int32))
    filled = w.tensor([2, 3], t.FLOAT32)
    w.op(op.FILL, [dims, mean], [filled])
    arg_opts = sch.ArgMaxOptionsT()
    arg_opts.outputType = t.INT32
    last = w.tensor([], t.INT32, data=np.array(3, np.int32))
    arg = w.tensor([1, 4, 6], t.INT32)
    w.op(op.ARG_MAX, [x, last], [arg], opt.ArgMaxOptions, arg_opts)
    flat_shape = w.tensor([1], t.INT32, data=np.array([24], np.int32))
    reshape_opts = sch.ReshapeOptionsT()
    reshape_opts.newShape = [24]
    ids = w.tensor([24], t.INT32)
    w.op(op.RESHAPE, [arg, flat_shape], [ids], opt.ReshapeOptions, reshape_opts)
    params = w.tensor([3, 5], t.FLOAT32, data=rng.standard_normal((3, 5)).astype(np.float32))
    rows = w.tensor([24, 5], t.FLOAT32)
    w.op(op.EMBEDDING_LOOKUP, [ids, params], [rows])
    return w.finish([x], [y, shape, both, filled, rows])


def stablehlo_float() -> bytes:
    """The float builtins of LiteRT's reference resolver the converter folds or writes only from StableHLO
    (written with the schema): STABLEHLO_ADD, _MULTIPLY, _MAXIMUM, _MINIMUM, RANK of the input, RANGE of
    constants (added to the maximum), DILATE of the input (by 2, 1 and 3, padded with -0.5), STABLEHLO_PAD (edge
    padding positive and negative, interior padding)."""
    w = Written()
    t, op = w.sch.TensorType, w.sch.BuiltinOperator
    x = w.tensor([2, 3, 4], t.FLOAT32)
    c = w.tensor([2, 3, 4], t.FLOAT32, data=np.random.default_rng(13).standard_normal((2, 3, 4)).astype(np.float32))
    vals = {}
    for name in ("STABLEHLO_ADD", "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM", "STABLEHLO_MINIMUM"):
        vals[name] = w.tensor([2, 3, 4], t.FLOAT32)
        w.op(getattr(op, name), [x, c] if name != "STABLEHLO_MULTIPLY" else [x, vals["STABLEHLO_ADD"]], [vals[name]])
    rank = w.tensor([], t.INT32)
    w.op(op.RANK, [x], [rank])
    dilations = w.tensor([3], t.INT32, data=np.array([2, 1, 3], np.int32))
    pad = w.tensor([], t.FLOAT32, data=np.array(-0.5, np.float32))
    dilated = w.tensor([3, 3, 10], t.FLOAT32)
    w.op(op.DILATE, [x, dilations, pad], [dilated])
    pad_opts = w.sch.StablehloPadOptionsT()
    pad_opts.edgePaddingLow, pad_opts.edgePaddingHigh, pad_opts.interiorPadding = [1, -1, 0], [0, 2, -2], [1, 0, 2]
    padded = w.tensor([4, 4, 8], t.FLOAT32)  # 2 + 1 interior + 1 low; 3 - 1 + 2; 4 + 6 interior - 2
    w.op(op.STABLEHLO_PAD, [x, pad], [padded], options2=(w.sch.BuiltinOptions2.StablehloPadOptions, pad_opts))
    limits = [w.tensor([], t.FLOAT32, data=np.array(v, np.float32)) for v in (1.0, 3.0, 0.5)]
    rng_ = w.tensor([4], t.FLOAT32)
    w.op(op.RANGE, limits, [rng_])
    y = w.tensor([2, 3, 4], t.FLOAT32)
    w.op(op.ADD, [vals["STABLEHLO_MAXIMUM"], rng_], [y], w.sch.BuiltinOptions.AddOptions, w.sch.AddOptionsT())
    return w.finish([x], [vals["STABLEHLO_MULTIPLY"], vals["STABLEHLO_MINIMUM"], y, rank, dilated, padded])


def rnn_written(hybrid: bool = False) -> bytes:
    """LiteRT's basic RNN builtins, which no Keras layer converts to (a Keras SimpleRNN becomes a WHILE; written
    with the schema): RNN (one step, batch 2, TANH) and UNIDIRECTIONAL_SEQUENCE_RNN (batch-major, 4 steps, RELU;
    time-major, 3 steps, TANH), each with its hidden state in a variable tensor. hybrid: the weights int8 with a
    scale each (LiteRT's hybrid RNN kernels; the RNN's input quantized asymmetrically, the sequences' not)."""
    w = Written()
    sch, t, op, opt = w.sch, w.sch.TensorType, w.sch.BuiltinOperator, w.sch.BuiltinOptions
    rng = np.random.default_rng(14)

    def weights(shape):
        v = rng.standard_normal(shape).astype(np.float32) * 0.4
        if not hybrid:
            return w.tensor(shape, t.FLOAT32, data=v)
        scale = float(np.abs(v).max()) / 127
        return w.tensor(shape, t.INT8, scale, 0, data=np.clip(np.round(v / scale), -127, 127).astype(np.int8))

    def rnn(code, x, x_shape, out_shape, units, act, asym, time_major=None):
        n_in, batch = x_shape[-1], x_shape[1] if time_major else x_shape[0]
        ins = [x, weights([units, n_in]), weights([units, units]),
               w.tensor([units], t.FLOAT32, data=rng.standard_normal(units).astype(np.float32) * 0.1),
               w.tensor([batch, units], t.FLOAT32, variable=True)]
        y = w.tensor(out_shape, t.FLOAT32)
        if time_major is None:
            o = sch.RNNOptionsT()
            w.op(code, ins, [y], opt.RNNOptions, o)
        else:
            o = sch.SequenceRNNOptionsT()
            o.timeMajor = time_major
            w.op(code, ins, [y], opt.SequenceRNNOptions, o)
        o.fusedActivationFunction, o.asymmetricQuantizeInputs = act, asym
        return y

    x1, x2, x3 = w.tensor([2, 3], t.FLOAT32), w.tensor([1, 4, 3], t.FLOAT32), w.tensor([3, 2, 3], t.FLOAT32)
    a = sch.ActivationFunctionType
    y1 = rnn(op.RNN, x1, [2, 3], [2, 5], 5, a.TANH, True)
    y2 = rnn(op.UNIDIRECTIONAL_SEQUENCE_RNN, x2, [1, 4, 3], [1, 4, 6], 6, a.RELU, False, False)
    y3 = rnn(op.UNIDIRECTIONAL_SEQUENCE_RNN, x3, [3, 2, 3], [3, 2, 4], 4, a.TANH, False, True)
    return w.finish([x1, x2, x3], [y1, y2, y3])


def lstm_step(hybrid: bool = False) -> bytes:
    """The builtin LSTM op (one step of [batch, n_in], the full kernel; the converter writes it only from TF's
    composite LSTM cells, so written with the schema): batch 2, 5 inputs, 6 cells, all four gates, cell clip 3, h
    and c in variable tensors. hybrid: the eight gate weights int8 with a scale each (LiteRT's hybrid LSTM)."""
    w = Written()
    sch, t = w.sch, w.sch.TensorType
    rng = np.random.default_rng(15)

    def weights(shape):
        v = rng.standard_normal(shape).astype(np.float32) * 0.5
        if not hybrid:
            return w.tensor(shape, t.FLOAT32, data=v)
        scale = float(np.abs(v).max()) / 127
        return w.tensor(shape, t.INT8, scale, 0, data=np.clip(np.round(v / scale), -127, 127).astype(np.int8))

    x = w.tensor([2, 5], t.FLOAT32)
    ins = [x, *(weights([6, 5]) for _ in range(4)), *(weights([6, 6]) for _ in range(4)), -1, -1, -1,
           *(w.tensor([6], t.FLOAT32, data=rng.standard_normal(6).astype(np.float32) * 0.2) for _ in range(4)), -1, -1,
           w.tensor([2, 6], t.FLOAT32, variable=True), w.tensor([2, 6], t.FLOAT32, variable=True), -1, -1, -1, -1]
    y = w.tensor([2, 6], t.FLOAT32)
    o = sch.LSTMOptionsT()
    o.fusedActivationFunction, o.cellClip, o.asymmetricQuantizeInputs = sch.ActivationFunctionType.TANH, 3.0, hybrid
    w.op(w.sch.BuiltinOperator.LSTM, ins, [y], w.sch.BuiltinOptions.LSTMOptions, o)
    return w.finish([x], [y])


def bidi(hybrid: bool = False) -> bytes:
    """BIDIRECTIONAL_SEQUENCE_RNN (merged outputs, batch-major, TANH) and BIDIRECTIONAL_SEQUENCE_LSTM (two outputs,
    time-major, cell clip 2; a Keras Bidirectional layer converts to two unidirectional ops instead, so written
    with the schema), each direction's state in variable tensors. hybrid: every weight matrix int8 with a scale."""
    w = Written()
    sch, t, op, opt = w.sch, w.sch.TensorType, w.sch.BuiltinOperator, w.sch.BuiltinOptions
    rng = np.random.default_rng(16)

    def weights(shape):
        v = rng.standard_normal(shape).astype(np.float32) * 0.5
        if not hybrid:
            return w.tensor(shape, t.FLOAT32, data=v)
        scale = float(np.abs(v).max()) / 127
        return w.tensor(shape, t.INT8, scale, 0, data=np.clip(np.round(v / scale), -127, 127).astype(np.int8))

    def bias(n):
        return w.tensor([n], t.FLOAT32, data=rng.standard_normal(n).astype(np.float32) * 0.2)

    x1 = w.tensor([2, 4, 3], t.FLOAT32)  # batch 2, 4 steps
    ins = [x1]
    for units in (5, 4):  # each direction: W, R, bias, hidden state
        ins += [weights([units, 3]), weights([units, units]), bias(units)]
        ins.append(w.tensor([2, units], t.FLOAT32, variable=True))
    ins += [-1, -1, -1]  # no auxiliary input and weights
    y1 = w.tensor([2, 4, 9], t.FLOAT32)
    ro = sch.BidirectionalSequenceRNNOptionsT()
    ro.timeMajor, ro.fusedActivationFunction, ro.mergeOutputs = False, sch.ActivationFunctionType.TANH, True
    ro.asymmetricQuantizeInputs = hybrid
    w.op(op.BIDIRECTIONAL_SEQUENCE_RNN, ins, [y1], opt.BidirectionalSequenceRNNOptions, ro)
    x2 = w.tensor([3, 1, 4], t.FLOAT32)  # time-major: 3 steps, batch 1
    lins, states = [x2], []
    for cells in (4, 4):  # LiteRT wants the two directions' cells equal
        lins += [*(weights([cells, 4]) for _ in range(4)), *(weights([cells, cells]) for _ in range(4)), -1, -1, -1,
                 *(bias(cells) for _ in range(4)), -1, -1]
        states += [w.tensor([1, cells], t.FLOAT32, variable=True), w.tensor([1, cells], t.FLOAT32, variable=True)]
    lins += states + [-1] * 9
    fw, bw = w.tensor([3, 1, 4], t.FLOAT32), w.tensor([3, 1, 4], t.FLOAT32)
    lo = sch.BidirectionalSequenceLSTMOptionsT()
    lo.fusedActivationFunction, lo.cellClip, lo.mergeOutputs, lo.timeMajor = sch.ActivationFunctionType.TANH, 2.0, \
        False, True
    lo.asymmetricQuantizeInputs = hybrid
    w.op(op.BIDIRECTIONAL_SEQUENCE_LSTM, lins, [fw, bw], opt.BidirectionalSequenceLSTMOptions, lo)
    return w.finish([x1, x2], [y1, fw, bw])


def embed_hybrid() -> bytes:
    """EMBEDDING_LOOKUP of int8 rows into float32 (LiteRT's hybrid embedding lookup; written with the schema): a
    table with a scale per row and one with a single scale, looked up by ids that ARG_MAX computes."""
    w = Written()
    t, op, opt = w.sch.TensorType, w.sch.BuiltinOperator, w.sch.BuiltinOptions
    rng = np.random.default_rng(17)
    x = w.tensor([4, 10], t.FLOAT32)
    arg_opts = w.sch.ArgMaxOptionsT()
    arg_opts.outputType = t.INT32
    ids = w.tensor([4], t.INT32)
    w.op(op.ARG_MAX, [x, w.tensor([], t.INT32, data=np.array(1, np.int32))], [ids], opt.ArgMaxOptions, arg_opts)
    per_row = w.tensor([10, 6], t.INT8, data=rng.integers(-127, 128, (10, 6)).astype(np.int8))
    q = w.sch.QuantizationParametersT()
    q.scale, q.zeroPoint, q.quantizedDimension = list(rng.uniform(0.01, 0.1, 10)), [0] * 10, 0
    w.sg.tensors[per_row].quantization = q
    one = w.tensor([10, 3, 2], t.INT8, 0.037, 0, data=rng.integers(-127, 128, (10, 3, 2)).astype(np.int8))
    y1, y2 = w.tensor([4, 6], t.FLOAT32), w.tensor([4, 3, 2], t.FLOAT32)
    w.op(op.EMBEDDING_LOOKUP, [ids, per_row], [y1])
    w.op(op.EMBEDDING_LOOKUP, [ids, one], [y2])
    return w.finish([x], [y1, y2])


def fill_int8() -> bytes:
    """int8 SHAPE of an int8 tensor and FILL of an int8 value computed at run time (REDUCE_MAX over every
    axis), which the converter writes only where shapes are dynamic (written with the schema); FILL's
    output keeps its value's scale and zero point."""
    w = Written()
    sch, t, op, opt = w.sch, w.sch.TensorType, w.sch.BuiltinOperator, w.sch.BuiltinOptions
    x = w.tensor([1, 4, 6, 3], t.INT8, 0.05, -7)
    shape_opts = sch.ShapeOptionsT()
    shape_opts.outType = t.INT32
    shape = w.tensor([4], t.INT32)
    w.op(op.SHAPE, [x], [shape], opt.ShapeOptions, shape_opts)
    axes = w.tensor([4], t.INT32, data=np.arange(4, dtype=np.int32))
    reducer = sch.ReducerOptionsT()
    reducer.keepDims = False
    top = w.tensor([], t.INT8, 0.05, -7)
    w.op(op.REDUCE_MAX, [x, axes], [top], opt.ReducerOptions, reducer, version=2)
    dims = w.tensor([2], t.INT32, data=np.array([2, 3], np.int32))
    filled = w.tensor([2, 3], t.INT8, 0.05, -7)
    w.op(op.FILL, [dims, top], [filled], version=3)
    return w.finish([x], [shape, filled])


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


def symmetric_inputs(tflite: bytes) -> bytes:
    """The last FULLY_CONNECTED with asymmetric_quantize_inputs false: LiteRT's symmetric input quantisation."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as sch

    m = sch.ModelT.InitFromPackedBuf(tflite, 0)
    fcs = [o for o in m.subgraphs[0].operators
           if m.operatorCodes[o.opcodeIndex].builtinCode == sch.BuiltinOperator.FULLY_CONNECTED]
    fcs[-1].builtinOptions.asymmetricQuantizeInputs = False
    fb = flatbuffers.Builder(0)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


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


# written from a tf.function, float only
GRAPHS = {"resolver2": resolver2_graph,
          "builtins": builtins_graph, "ints": ints_graph, "conv3d": conv3d_graph, "ifconst": ifconst_graph}


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


# dynamic-range quantisation (int8 weights, float activations: LiteRT's hybrid kernels), issue 50
HYBRID = {"hybrid_mlp": (hybrid_mlp, False), "hybrid_conv": (hybrid_conv, False),
          "hybrid_conv_pt": (lambda: hybrid_conv(False), True), "hybrid_lstm": (hybrid_lstm, False),
          "hybrid_deconv": (hybrid_deconv, False)}
# int4 weights (ai-edge-quantizer's recipes) of hybrid_mlp's float model
INT4 = {"int4_dynamic": "dynamic_wi4_afp32", "int4_weight_only": "weight_only_wi4_afp32"}
FP16 = ("keyword", "excite")  # also written with float16 weights (each behind a DEQUANTIZE), issue 50
SPARSE = ("pruned",)  # converted with EXPERIMENTAL_SPARSITY
FLOAT_IO = ("keyword",)  # also written int8 inside with float inputs and outputs
# also written 16x8 (int16 activations), moves also with float inputs and outputs
X16 = ("sine", "moves", "keyword", "person", "residual", "padded", "arrays", "mathq")
X16_ONLY = ("gates", "arith")  # written in 16x8 only
# their 16x8 files from other models
X16_MODELS = {"arrays": lambda: arrays(sixteen=True), "mathq": lambda: mathq(sixteen=True)}
MODELS = {"sine": sine, "keyword": keyword, "person": person, "ops": ops, "residual": residual, "moves": moves,
          "acts": acts, "excite": excite, "shuffle": shuffle, "resize": resize, "lstm": lstm,
          "stream": stream, "lstm3": lstm3, "branch": branch, "gates": gates, "arith": arith, "variants": variants,
          "pruned": pruned, "mirror": mirror, "mathops": mathops, "reduce": reduce, "melspec": melspec, "misc": misc,
          "resolver": resolver, "padded": padded, "arrays": arrays,
          "compare": compare, "mathq": mathq}
# made only when named (too large to commit), int8 only
LARGE = {"mobilenet_v2_224": mobilenet_v2_224, "mobilenet_v2_224_torchpad": mobilenet_v2_224_torchpad}
# resize is written float only (mathq has int8 and 16x8 RESIZE_BILINEAR); lstm is also written full-int8
# (the converter's integer LSTM)
INT8_ONLY = ("arrays", "compare", "mathq")  # no float file: its float lowerings are tested by other models
FLOAT_ONLY = ("resize", "stream", "lstm3", "branch", "variants", "mirror", "mathops", "reduce", "melspec", "misc",
              "resolver")


def representative(model: keras.Model):
    rng = np.random.default_rng(1)
    shape = (1, *model.inputs[0].shape[1:])

    def gen():
        for _ in range(100):
            if len(model.inputs) == 2:  # gates: x on [-1, 1], z on [-12, 12], by name (the file may order them)
                second = model.inputs[1].name.split(":")[0]
                yield {"x": rng.uniform(-1, 1, shape).astype(np.float32),
                       second: rng.uniform(*(-12, 12) if second == "z" else (-1, 1),
                                           (1, *model.inputs[1].shape[1:])).astype(np.float32)}
            elif shape == (1, 1):
                yield [rng.uniform(0, 2 * np.pi, shape).astype(np.float32)]
            else:
                yield [rng.uniform(-1, 1, shape).astype(np.float32)]
    return gen


def quantize_int4(model: keras.Model, recipe_name: str) -> bytes:
    """int4 weights as ai-edge-quantizer writes them (`pip install ai-edge-quantizer`): TensorType INT4, two values
    a byte, a scale per channel. dynamic_wi4_afp32: FULLY_CONNECTED reads them itself (LiteRT's hybrid kernel, the
    input quantized symmetrically); weight_only_wi4_afp32: a DEQUANTIZE of each, float arithmetic."""
    from ai_edge_quantizer import quantizer, recipe

    qt = quantizer.Quantizer(bytearray(convert(model, False)))
    qt.load_quantization_recipe(getattr(recipe, recipe_name)())
    return bytes(qt.quantize().quantized_model)


def convert_hybrid(model: keras.Model, per_tensor: bool = False) -> bytes:
    """Dynamic-range quantisation: Optimize.DEFAULT with no representative dataset (int8 weights, float32
    activations); per_tensor: one weight scale per tensor (the converter's per-channel switch off)."""
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if per_tensor:
        conv._experimental_disable_per_channel = True
    return conv.convert()


def convert(model: keras.Model, int8: bool, float_io: bool = False, x16: bool = False, fp16: bool = False,
            sparse: bool = False) -> bytes:
    """float_io: int8 inside, float32 inputs and outputs (QUANTIZE / DEQUANTIZE at the edges), the
    converter's default when inference_input_type is not set. x16: 16x8 (int16 activations, int8
    weights), with int16 inputs and outputs unless float_io. fp16: the converter's float16 quantisation
    (float16 weights, float32 arithmetic). sparse: pruned weights stored sparse."""
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if fp16:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.target_spec.supported_types = [tf.float16]
    if sparse:
        conv.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY, *([tf.lite.Optimize.DEFAULT] if int8 else [])]
    if int8:
        conv.optimizations = conv.optimizations or [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative(model)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
                                          if x16 else tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if not float_io:
            conv.inference_input_type = tf.int16 if x16 else tf.int8
            conv.inference_output_type = tf.int16 if x16 else tf.int8
    return conv.convert()


def main(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, write in (("svdf_int8", svdf_int8), ("shapes_float", shapes_float),  # written with the schema
                        ("stablehlo_float", stablehlo_float), ("rnn_float", rnn_written),
                        ("rnn_hybrid", lambda: rnn_written(True)), ("lstmstep_float", lstm_step),
                        ("lstmstep_hybrid", lambda: lstm_step(True)), ("bidi_float", bidi),
                        ("bidi_hybrid", lambda: bidi(True)), ("embed_hybrid", embed_hybrid),
                        ("svdf_float", svdf_written), ("svdf_hybrid", lambda: svdf_written(True)),
                        ("fill_int8", fill_int8), ("detect_float", detect_float)):
        if not names or name.split("_")[0] in names:
            (out / f"{name}.tflite").write_bytes(write())
            print(f"wrote {out / name}.tflite")
    for name, make in GRAPHS.items():
        if not names or name in names:
            f, specs = make()
            conv = tf.lite.TFLiteConverter.from_concrete_functions([tf.function(f).get_concrete_function(*specs)])
            path = out / f"{name}_float.tflite"
            path.write_bytes(conv.convert())
            print(f"wrote {path} ({path.stat().st_size} bytes)")
    for name, (make, per_tensor) in HYBRID.items():
        if not names or name in names:
            keras.utils.set_random_seed(0)
            data = convert_hybrid(make(), per_tensor)
            path = out / f"{name}.tflite"
            path.write_bytes(symmetric_inputs(data) if name == "hybrid_mlp" else data)
            print(f"wrote {path} ({path.stat().st_size} bytes)")
    for name, recipe_name in INT4.items():
        if not names or name in names:
            keras.utils.set_random_seed(0)
            path = out / f"{name}.tflite"
            path.write_bytes(quantize_int4(hybrid_mlp(), recipe_name))
            print(f"wrote {path} ({path.stat().st_size} bytes)")
    for name, make in {**MODELS, **LARGE}.items():
        if names and name not in names or not names and name in LARGE:
            continue
        keras.utils.set_random_seed(0)  # seeds tf_keras too (one TensorFlow random state)
        model = make()
        for int8 in ((True,) if name in LARGE or name in INT8_ONLY else () if name in X16_ONLY
                     else (False,) if name in FLOAT_ONLY else (False, True)):
            path = out / f"{name}_{'int8' if int8 else 'float'}.tflite"
            patch = {"shuffle": relu_0_to_1, "variants": lstm_variants, "compare": not_equal}.get(name, lambda d: d)
            path.write_bytes(patch(convert(model, int8, sparse=name in SPARSE)))
            print(f"wrote {path} ({path.stat().st_size} bytes)")
        if name in FP16:
            path = out / f"{name}_fp16.tflite"
            path.write_bytes(convert(model, False, fp16=True))
            print(f"wrote {path} ({path.stat().st_size} bytes)")
        if name in FLOAT_IO:
            path = out / f"{name}_int8_float_io.tflite"
            path.write_bytes(convert(model, True, float_io=True))
            print(f"wrote {path} ({path.stat().st_size} bytes)")
        if name in X16 + X16_ONLY:
            for float_io in (False, True) if name == "moves" else (False,):
                path = out / f"{name}_16x8{'_float_io' if float_io else ''}.tflite"
                if name in X16_MODELS:
                    keras.utils.set_random_seed(0)
                    model = X16_MODELS[name]()
                data = convert(model, True, float_io=float_io, x16=True)
                path.write_bytes(requant_outputs(data) if name == "arith" else data)
                print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests/models/tflite",
         sys.argv[2:])
