"""The models make_tflite_models.py writes op by op with the TFLite schema: ops no Keras layer or TF op
converts to."""

from __future__ import annotations

import numpy as np


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

def lstm_step(hybrid: bool = False, share: bool = False) -> bytes:
    """The builtin LSTM op (one step of [batch, n_in], the full kernel; the converter writes it only from TF's
    composite LSTM cells, so written with the schema): batch 2, 5 inputs, 6 cells, all four gates, cell clip 3, h
    and c in variable tensors. hybrid: the eight gate weights int8 with a scale each (LiteRT's hybrid LSTM). share:
    an ADD reads h's variable tensor before the LSTM (the state the call starts from) and one after it (the state
    the LSTM leaves), as the converter shares an LSTM's state tensor with a WHILE (varshare_float)."""
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
    if not share:
        w.op(w.sch.BuiltinOperator.LSTM, ins, [y], w.sch.BuiltinOptions.LSTMOptions, o)
        return w.finish([x], [y])
    h, outs = ins[18], []
    for when in ("before", "after"):
        if when == "after":
            w.op(w.sch.BuiltinOperator.LSTM, ins, [y], w.sch.BuiltinOptions.LSTMOptions, o)
        outs.append(w.tensor([2, 6], t.FLOAT32))
        w.op(w.sch.BuiltinOperator.ADD, [h, w.tensor([6], t.FLOAT32, data=np.full(6, 0.5, np.float32))], [outs[-1]],
             w.sch.BuiltinOptions.AddOptions, w.sch.AddOptionsT())
    return w.finish([x], [outs[0], y, outs[1]])

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


def composite_float() -> bytes:
    """STABLEHLO_COMPOSITE (what ai-edge-torch writes for a named block; written with the schema): the op on the
    input and a constant, its decomposition subgraph tanh(a * a + c) - a, and a second composite reusing it."""
    from flatbuffers import flexbuffers

    w = Written()
    sch, t, op = w.sch, w.sch.TensorType, w.sch.BuiltinOperator
    x = w.tensor([2, 3], t.FLOAT32)
    c = w.tensor([2, 3], t.FLOAT32, data=np.random.default_rng(19).standard_normal((2, 3)).astype(np.float32))
    sub = sch.SubGraphT()
    sub.name, sub.operators = b"decomposition", []
    main = w.sg
    w.sg = sub
    sub.tensors = []
    a, k = w.tensor([2, 3], t.FLOAT32), w.tensor([2, 3], t.FLOAT32)
    sq, s1, th, out = (w.tensor([2, 3], t.FLOAT32) for _ in range(4))
    w.op(op.MUL, [a, a], [sq], w.sch.BuiltinOptions.MulOptions, w.sch.MulOptionsT())
    w.op(op.ADD, [sq, k], [s1], w.sch.BuiltinOptions.AddOptions, w.sch.AddOptionsT())
    w.op(op.TANH, [s1], [th])
    w.op(op.SUB, [th, a], [out], w.sch.BuiltinOptions.SubOptions, w.sch.SubOptionsT())
    sub.inputs, sub.outputs = [a, k], [out]
    w.sg = main
    w.m.subgraphs.append(sub)
    y1, y2 = w.tensor([2, 3], t.FLOAT32), w.tensor([2, 3], t.FLOAT32)
    for src, dst in ((x, y1), (y1, y2)):
        o = sch.StableHLOCompositeOptionsT()
        o.name, o.decompositionSubgraphIndex, o.version = b"odml.tanh_square", 1, 1
        o.compositeAttributes = list(flexbuffers.Dumps({"scale": 1.0}))
        o.compositeAttributesFormat = sch.CustomOptionsFormat.FLEXBUFFERS
        w.op(op.STABLEHLO_COMPOSITE, [src, c], [dst], options2=(sch.BuiltinOptions2.StableHLOCompositeOptions, o))
    return w.finish([x], [y1, y2])


def window_float() -> bytes:
    """REDUCE_WINDOW and STABLEHLO_REDUCE_WINDOW, which no converter path writes from Keras (written with the
    schema): REDUCE_WINDOW ADD from 0.5 over [1, 3, 2, 1] windows with strides [1, 2, 1, 1] and dilations [1, 1, 2, 1],
    MAXIMUM over [1, 2, 2, 1] windows, MINIMUM of int32; STABLEHLO_REDUCE_WINDOW with a STABLEHLO_MAXIMUM body,
    padding with its init value (-inf) and strides (a max pool), and one with an ADD body and window dilations."""
    w = Written()
    sch, t, op = w.sch, w.sch.TensorType, w.sch.BuiltinOperator
    x = w.tensor([1, 6, 7, 3], t.FLOAT32)
    k = w.tensor([2, 5], t.INT32)

    def i64(v):
        return w.tensor([len(v)], t.INT64, data=np.array(v, np.int64))

    def scalar(v, dtype=t.FLOAT32):
        return w.tensor([], dtype, data=np.array(v, np.float32 if dtype == t.FLOAT32 else np.int32))

    outs = []
    for src, init, fn, dims, strides, dil, shape, dtype in (
            (x, scalar(0.5), 1, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], [1, 2, 5, 3], t.FLOAT32),
            (x, scalar(-3.0), 4, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 5, 6, 3], t.FLOAT32),
            (k, scalar(7, t.INT32), 3, [2, 2], [1, 2], [1, 1], [1, 2], t.INT32)):
        outs.append(w.tensor(shape, dtype))
        o = sch.ReduceWindowOptionsT()
        o.reduceFunction = fn
        w.op(op.REDUCE_WINDOW, [src, init, i64(dims), i64(strides), i64(dil)], [outs[-1]],
             options2=(sch.BuiltinOptions2.ReduceWindowOptions, o))
    bodies = []
    for code in (op.STABLEHLO_MAXIMUM, op.STABLEHLO_ADD):
        sub = sch.SubGraphT()
        sub.name, sub.operators, sub.tensors = b"body", [], []
        main, w.sg = w.sg, sub
        a, c, r = (w.tensor([], t.FLOAT32) for _ in range(3))
        w.op(code, [a, c], [r])
        sub.inputs, sub.outputs = [a, c], [r]
        w.sg = main
        w.m.subgraphs.append(sub)
        bodies.append(len(w.m.subgraphs) - 1)
    for body, init, dims, strides, dil, pads, shape in (
            (bodies[0], scalar(-np.inf), [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], [0, 0, 1, 1, 1, 1, 0, 0],
             [1, 3, 4, 3]),
            (bodies[1], scalar(0.0), [1, 2, 2, 2], [1, 1, 2, 1], [1, 2, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0], [1, 4, 3, 2])):
        outs.append(w.tensor(shape, t.FLOAT32))
        o = sch.StablehloReduceWindowOptionsT()
        o.windowDimensions, o.windowStrides, o.windowDilations = dims, strides, dil
        o.baseDilations, o.padding, o.bodySubgraphIndex = [1, 1, 1, 1], pads, body
        w.op(op.STABLEHLO_REDUCE_WINDOW, [x, init], [outs[-1]],
             options2=(sch.BuiltinOptions2.StablehloReduceWindowOptions, o))
    return w.finish([x, k], outs)
