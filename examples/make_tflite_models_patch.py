"""Edits of converted .tflite files (make_tflite_models.py): what the converter writes differently or never,
made from what it wrote with the schema's object API."""

from __future__ import annotations

import numpy as np


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
