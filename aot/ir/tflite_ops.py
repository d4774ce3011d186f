"""aotc's internal TFLite integer ops (ONNX domain aotc.tflite) and the custom op TFLite_Detection_PostProcess,
declared once for every stage: the TFLite frontend writes them (aot/frontend/tflite/int8.py, recurrent.py and
detect.py), the import stage accepts them (aot/frontend/onnx/contrib.py), a host pass fuses two of them into a
third (aot/passes/fuse_residual.py), the kernels of aot/kernels/tflite_int8.py run them and aot/kernels/detect.py
the custom op (tests/structure/test_layering.py holds the lists equal),
and a vendor may claim any of them by name in its checkers, as it claims an ONNX op.

What every stage relies on: each op's inputs in order, its outputs and its attributes. The tensors
keep TFLite's NHWC layout and shapes (weights as the .tflite file holds them: a conv's [O, kh, kw, I],
a depthwise conv's [1, kh, kw, C * multiplier], FULLY_CONNECTED's [out, in]); weights and biases are
constants; an input whose name ends in "?" may be omitted ("" in the node's inputs). Every multiplier,
shift, zero point and clamp is an attribute computed once from the file's float32 scales, so a node's
arithmetic is TFLite's integer arithmetic with nothing left to compute in float:

- `mult`, `shift`: TFLite's fixed-point multipliers (Q31) and shifts (left > 0), per output channel
  for the convs and FULLY_CONNECTED, single ints elsewhere;
- `x_zero`, `y_zero`, `x1_zero`, `x2_zero`: zero points; `y_min`, `y_max`: the clamp of the fused
  activation in output integers; `y_shape`: the output's shape;
- `kernel`, `strides`, `dilations`: [h, w]; `pads`: [top, left] (TFLite's SAME puts the odd pixel after);
- `m`: the binary ops' [x1_mult, x1_shift, x2_mult, x2_shift, y_mult, y_shift] (ADD, SUB: the inputs
  rescaled after a left shift of 20, 15 for 16x8) or [0, 0, 0, 0, y_mult, y_shift] (MUL);
- `what`: the TFLite op a LUT or COMPARE node computes;
- `table`: a lookup table (256 int8 entries for LUT; LiteRT's interpolated uint16 table for ACT16),
  `what`: the TFLite op it computes (LOGISTIC, TANH, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

DOMAIN = "aotc.tflite"

# the op names (the TFLite builtin each stands for, in aotc's NHWC integer arithmetic)
FULLY_CONNECTED = "TflFullyConnected"
CONV_2D = "TflConv2D"
DEPTHWISE_CONV_2D = "TflDepthwiseConv2D"
TRANSPOSE_CONV = "TflTransposeConv"
AVERAGE_POOL_2D = "TflAveragePool2D"
MAX_POOL_2D = "TflMaxPool2D"
SOFTMAX = "TflSoftmax"
MEAN = "TflMean"
ADD = "TflAdd"
SUB = "TflSub"
MUL = "TflMul"
L2_NORM = "TflL2Norm"  # int8 L2_NORMALIZATION over the last axis
REDUCE_PROD = "TflReduceProd"  # int8 / int16 REDUCE_PROD over the last axis of [rows, n]
LOG_SOFTMAX = "TflLogSoftmax"  # int8 LOG_SOFTMAX over the last axis
SUM_REQUANT = "TflSumRequant"  # quantized SUM's int32 sums to int8 / int16, as LiteRT's default kernel
SUM = "TflSum"  # quantized SUM of int8 / int16 over the middle axis of [outer, n, inner], sums in int32
DIV = "TflDiv"  # int8 and 16x8 DIV (m: [0, 0, 0, 0, mult, shift], as MUL's)
MAXIMUM = "TflMaximum"
MINIMUM = "TflMinimum"
LUT = "TflLut"  # an int8 activation as a 256-entry table (LOGISTIC, TANH, LEAKY_RELU, HARD_SWISH, RELU*)
ACT16 = "TflAct16"  # 16x8 LOGISTIC / TANH by LiteRT's interpolated table
LEAKY_RELU16 = "TflLeakyRelu16"
QUANTIZE = "TflQuantize"  # float32 -> int8 / int16
DEQUANTIZE = "TflDequantize"  # int8 / int16 -> float32
REQUANTIZE = "TflRequantize"  # between int8, int16 and int32 (QUANTIZE of an integer input)
LSTM8 = "TflLstm8"  # the integer UNIDIRECTIONAL_SEQUENCE_LSTM, every step
SVDF = "TflSvdf"  # the full-integer SVDF
CONV_2D_ADD = "TflConv2DAdd"  # CONV_2D with its residual ADD (written by aot/passes/fuse_residual.py)
COMPARE = "TflCompare"  # EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL of int8 (`what`): bool out
PRELU = "TflPrelu"  # int8 PRELU, alpha broadcast
# the hybrid ops (float32 activations, int8 weights: dynamic-range quantisation), aot/kernels/tflite_hybrid.py
HYBRID_QUANTIZE = "TflHybridQuantize"  # float32 -> int8 per batch, with each batch's scale and offset
HYBRID_FULLY_CONNECTED = "TflHybridFullyConnected"
HYBRID_CONV_2D = "TflHybridConv2D"
HYBRID_DEPTHWISE_CONV_2D = "TflHybridDepthwiseConv2D"
HYBRID_TRANSPOSE_CONV = "TflHybridTransposeConv"
BATCH_MATMUL = "TflBatchMatMul"  # int8 and 16x8 BATCH_MATMUL (issue 50)
RESIZE_BILINEAR = "TflResizeBilinear"  # int8 and int16 RESIZE_BILINEAR, LiteRT's integer interpolation
SQUARED_DIFFERENCE = "TflSquaredDifference"  # int8 SQUARED_DIFFERENCE, inputs broadcast as ADD's
ABS16 = "TflAbs16"  # 16x8 ABS: |x| requantised (mult 0: the input's scale, no rescaling)
SQRT16 = "TflSqrt16"  # 16x8 SQRT: LiteRT's per-element float square root, truncated
LUT16 = "TflLut16"  # a 16x8 elementwise op by LiteRT's 513-anchor interpolated table (EXP, LOG, GELU, RSQRT)
# the custom op TFLite_Detection_PostProcess (float, uint8 or int8 inputs; float outputs)
DETECTION_POSTPROCESS = "TflDetectionPostProcess"
# NON_MAX_SUPPRESSION_V4 and _V5 (LiteRT's reference algorithm, soft NMS included), aot/kernels/detect.py
NON_MAX_SUPPRESSION = "TflNonMaxSuppression"
# LSH_PROJECTION (farmhash's Fingerprint64 of each input row), aot/kernels/hash.py
LSH_PROJECTION = "TflLshProjection"
# RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL with a seed (LiteRT's Philox4x32-10 stream), aot/kernels/philox.py
RANDOM = "TflRandom"
MULTINOMIAL = "TflMultinomial"  # MULTINOMIAL with a seed, the same stream
# STABLEHLO_RNG_BIT_GENERATOR: Philox4x32-10 or ThreeFry2x32-20 bits of its state input, the same family
RNG_BIT_GENERATOR = "TflRngBitGenerator"
# TFLM's signal library (aot/frontend/tflite/signal.py): its audio front end's custom ops
SIGNAL_WINDOW = "TflSignalWindow"
SIGNAL_FFT_AUTO_SCALE = "TflSignalFftAutoScale"
SIGNAL_RFFT = "TflSignalRfft"
SIGNAL_IRFFT = "TflSignalIrfft"
SIGNAL_ENERGY = "TflSignalEnergy"
SIGNAL_FILTER_BANK = "TflSignalFilterBank"
SIGNAL_FILTER_BANK_SQRT = "TflSignalFilterBankSquareRoot"
SIGNAL_SPECTRAL_SUBTRACTION = "TflSignalFilterBankSpectralSubtraction"
SIGNAL_PCAN = "TflSignalPcan"
SIGNAL_FILTER_BANK_LOG = "TflSignalFilterBankLog"
SIGNAL_FRAMER = "TflSignalFramer"
SIGNAL_STACKER = "TflSignalStacker"
SIGNAL_OVERLAP_ADD = "TflSignalOverlapAdd"


@dataclass(frozen=True)
class TflSchema:
    """One op's fixed facts: its inputs and outputs in order ("?": may be omitted), the attributes it
    always carries, and those it carries in some of its forms only."""

    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[str, ...]
    some_attrs: tuple[str, ...] = ()

    @property
    def required_inputs(self) -> int:
        return sum(not i.endswith("?") for i in self.inputs)


_REQUANT = ("y_min", "y_max", "y_shape", "x_zero", "y_zero", "mult", "shift")
_WINDOW = ("kernel", "strides", "dilations", "pads")
_CONV = _REQUANT + _WINDOW

SCHEMAS: dict[str, TflSchema] = {s.op: s for s in (
    TflSchema(FULLY_CONNECTED, ("x", "w", "bias?"), ("y",), _REQUANT),
    TflSchema(CONV_2D, ("x", "w", "bias?"), ("y",), _CONV),
    TflSchema(DEPTHWISE_CONV_2D, ("x", "w", "bias?"), ("y",), _CONV),
    TflSchema(TRANSPOSE_CONV, ("x", "w", "bias?"), ("y",), _CONV),
    TflSchema(AVERAGE_POOL_2D, ("x",), ("y",), ("y_min", "y_max", "y_shape", "kernel", "strides", "pads")),
    TflSchema(MAX_POOL_2D, ("x",), ("y",), ("y_min", "y_max", "y_shape", "kernel", "strides", "pads")),
    # int8 (also int8 -> int16): diff_min; 16x8: LiteRT's exp and reciprocal tables
    TflSchema(SOFTMAX, ("x",), ("y",), ("mult", "shift", "y_shape"), ("diff_min", "exp_table", "recip_table")),
    # dims: the input as [outer, count, inner], the count averaged
    TflSchema(MEAN, ("x",), ("y",), ("x_zero", "y_zero", "mult", "shift", "y_shape", "dims")),
    *(TflSchema(op, ("x1", "x2"), ("y",), ("y_min", "y_max", "y_shape", "x1_zero", "x2_zero", "y_zero", "m"))
      for op in (ADD, SUB, MUL, DIV)),
    *(TflSchema(op, ("x1", "x2"), ("y",), ("y_min", "y_max", "y_shape")) for op in (MAXIMUM, MINIMUM)),
    TflSchema(LUT, ("x",), ("y",), ("table", "what", "y_shape")),
    # x: int32 sums of the raw integers; y = round(x * scale + bias) + y_zero in float32, clamped
    TflSchema(SUM_REQUANT, ("x",), ("y",), ("scale", "bias", "y_zero", "y_min", "y_max")),
    # x viewed as [outer, n, inner]: y [outer, inner] = SUM_REQUANT's of the int32 sums over n (n * |x| < 2^31)
    TflSchema(SUM, ("x",), ("y",), ("n", "inner", "scale", "bias", "y_zero", "y_min", "y_max")),
    TflSchema(L2_NORM, ("x",), ("y",), ("x_zero", "y_shape")),  # y: scale 1/128, zero point 0
    TflSchema(REDUCE_PROD, ("x",), ("y",), ("x_zero", "y_zero", "mult", "shift")),
    # mult, shift, diff_min: SOFTMAX's (beta 1); reverse_mult, reverse_shift: 2^(31 - shift) / mult as a multiplier
    TflSchema(LOG_SOFTMAX, ("x",), ("y",), ("mult", "shift", "reverse_mult", "reverse_shift", "diff_min", "y_shape")),
    # m: [x1_mult, x1_shift, x2_mult, x2_shift, 0, 0], each input's own scale (after a left shift of 8)
    TflSchema(COMPARE, ("x1", "x2"), ("y",), ("what", "y_shape", "x1_zero", "x2_zero", "m")),
    # m: [mult, shift] of x >= x_zero, then of x times alpha; alpha_zero: alpha's zero point
    TflSchema(PRELU, ("x", "alpha"), ("y",), ("y_min", "y_max", "y_shape", "x_zero", "alpha_zero", "y_zero", "m")),
    TflSchema(ACT16, ("x",), ("y",), ("what", "mult", "shift", "table", "y_shape")),
    # adj_x / adj_y: x1 / x2 hold their matrices transposed (TFLite's options); the output's zero point and
    # multiplier (x1_scale x2_scale / y_scale); no fused activation
    TflSchema(BATCH_MATMUL, ("x1", "x2"), ("y",), ("x1_zero", "x2_zero", "y_zero", "mult", "shift", "adj_x", "adj_y",
                                                  "y_shape")),
    # scale_h, scale_w: the source step in 10-bit fixed point; half_pixel: half_pixel_centers
    TflSchema(RESIZE_BILINEAR, ("x",), ("y",), ("scale_h", "scale_w", "half_pixel", "y_shape")),
    # m: [x1_mult, x1_shift, x2_mult, x2_shift, y_mult, y_shift] (inputs rescaled after a left shift of 7)
    TflSchema(SQUARED_DIFFERENCE, ("x1", "x2"), ("y",), ("y_min", "y_max", "y_shape", "x1_zero", "x2_zero", "y_zero",
                                                         "m")),
    TflSchema(LUT16, ("x",), ("y",), ("table", "what", "y_shape")),  # table: 513 int16 anchors
    TflSchema(SQRT16, ("x",), ("y",), ("x_scale", "y_scale", "y_shape")),
    TflSchema(ABS16, ("x",), ("y",), ("mult", "shift", "y_shape")),  # float32 scales, zero points 0
    # m: (mult, shift) of x >= 0, then of x < 0; y_min, y_max: RELU's and RELU6's clamp (else int16's)
    TflSchema(LEAKY_RELU16, ("x",), ("y",), ("m", "y_shape"), ("y_min", "y_max")),
    TflSchema(QUANTIZE, ("x",), ("y",), ("scale", "y_zero")),
    TflSchema(DEQUANTIZE, ("x",), ("y",), ("scale", "x_zero")),
    TflSchema(REQUANTIZE, ("x",), ("y",), ("x_zero", "y_zero", "mult", "shift")),
    # wx, wh: the four gates' (input, forget, cell, output) int8 weights stacked; bx, bh: int32 biases with
    # the zero points folded in; h (int8) and c (int16): the state the caller carries
    TflSchema(LSTM8, ("x", "wx", "wh", "bx", "bh", "h", "c"), ("y", "h_next", "c_next"),
              ("mult", "shift", "hidden_mult", "hidden_shift", "hidden_zero", "cell_shift", "tanh_bits", "clip")),
    TflSchema(SVDF, ("x", "wf", "wt", "bias?", "state"), ("y", "state_next"),
              ("rank", "x_zero", "y_zero", "mult1", "shift1", "mult2", "shift2")),
    # the conv's inputs and attributes, the residual r, the ADD's attributes (`add`) and which ADD
    # operand the conv is (conv_is_x1); the output may take r's buffer
    TflSchema(CONV_2D_ADD, ("x", "w", "bias?", "residual"), ("y",), (*_CONV, "add", "conv_is_x1")),
    # hybrid: q (int8, x's shape), scale (float32 [batches]), offset (int32 [batches]) of each batch of x, a
    # batch `size` elements; asymmetric: LiteRT's AsymmetricQuantizeFloats, else SymmetricQuantizeFloats
    TflSchema(HYBRID_QUANTIZE, ("x",), ("q", "scale", "offset"), ("size", "asymmetric")),
    # w_scale: float32 per output channel; y_min, y_max: the fused activation as a float clamp; order: 1 for
    # LiteRT's reference per-channel conv, acc * w_scale * scale, else acc * (scale * w_scale)
    TflSchema(HYBRID_FULLY_CONNECTED, ("q", "scale", "offset", "w", "bias?"), ("y",), ("w_scale", "y_min", "y_max",
                                                                                        "y_shape")),
    *(TflSchema(op, ("q", "scale", "offset", "w", "bias?"), ("y",), ("w_scale", "y_min", "y_max", "y_shape", "order",
                                                                      "kernel", "strides", "dilations", "pads"))
      for op in (HYBRID_CONV_2D, HYBRID_DEPTHWISE_CONV_2D, HYBRID_TRANSPOSE_CONV)),
    # the custom op's flexbuffer options by their TFLite names; anchors: a float32 constant [boxes, 4]
    # (dequantized when the file's are quantized); box_scale, box_zero, score_scale, score_zero: the
    # quantized inputs' parameters (uint8, int8)
    TflSchema(DETECTION_POSTPROCESS, ("box_encodings", "class_predictions", "anchors"),
              ("boxes", "classes", "scores", "num_detections"),
              ("max_detections", "max_classes_per_detection", "detections_per_class", "use_regular_nms",
               "nms_score_threshold", "nms_iou_threshold", "num_classes", "y_scale", "x_scale", "h_scale", "w_scale"),
              ("box_scale", "box_zero", "score_scale", "score_zero")),
    # hash [num_hash, num_bits] (float32 seeds), input (any type; its first dimension the rows), weight [rows]
    # (float32); output int32: [num_hash] signatures (sparse 1) or [num_hash * num_bits] bits (sparse 0)
    # state: the Philox counter (uint32[4], carried by the caller); y float32 (its shape the file's constant),
    # state_next the counter after it; key0, key1: the seed's words; normal 1: RANDOM_STANDARD_NORMAL
    TflSchema(RANDOM, ("state",), ("y", "state_next"), ("normal", "key0", "key1")),
    # logits float32 [batch, classes], state as TflRandom's; y int32 or int64 [batch, num_samples] (its shape)
    TflSchema(MULTINOMIAL, ("logits", "state"), ("y", "state_next"), ("key0", "key1")),
    # state uint64 [2] (threefry 1; key, counter) or [2 | 3] (threefry 0: Philox, the counter's high half state[2]
    # or the key again); state_next: it with the counter moved on; y int32 / uint32 / int64 / uint64 (its shape
    # the file's): the generator's 32-bit words in order, a 64-bit element two of them (low first)
    TflSchema(RNG_BIT_GENERATOR, ("state",), ("state_next", "y"), ("threefry",)),
    TflSchema(LSH_PROJECTION, ("hash", "input", "weight?"), ("output",), ("sparse",)),
    # boxes [n, 4] (float32, any diagonal corners), scores [n]; indices (int32) and scores (float32) [max_output],
    # zeros past count (int32 []); the thresholds and sigma are the file's constants (V4: sigma 0)
    TflSchema(NON_MAX_SUPPRESSION, ("boxes", "scores"), ("indices", "selected_scores", "count"),
              ("max_output", "iou_threshold", "score_threshold", "sigma")),
    # TFLM's signal ops, their options by TFLM's names; state / state_next: the spectral subtraction's
    # noise estimate the caller carries (state_next is also what the op gives PCAN)
    TflSchema(SIGNAL_WINDOW, ("x", "weights"), ("y",), ("shift",)),
    TflSchema(SIGNAL_FFT_AUTO_SCALE, ("x",), ("y", "scale_bits"), ()),
    TflSchema(SIGNAL_RFFT, ("x",), ("y",), ("fft_length",)),
    TflSchema(SIGNAL_IRFFT, ("x",), ("y",), ("fft_length",)),
    TflSchema(SIGNAL_ENERGY, ("x",), ("y",), ("start_index", "end_index")),
    TflSchema(SIGNAL_FILTER_BANK, ("x", "weights", "unweights", "freq_starts", "weight_starts", "widths"), ("y",),
              ("num_channels",)),
    TflSchema(SIGNAL_FILTER_BANK_SQRT, ("x", "scale_bits"), ("y",), ()),
    TflSchema(SIGNAL_SPECTRAL_SUBTRACTION, ("x", "state"), ("y", "state_next"),
              ("smoothing", "one_minus_smoothing", "alternate_smoothing", "alternate_one_minus_smoothing",
               "min_signal_remaining", "smoothing_bits", "spectral_subtraction_bits", "clamping")),
    TflSchema(SIGNAL_PCAN, ("x", "noise_estimate", "gain_lut"), ("y",), ("snr_shift",)),
    TflSchema(SIGNAL_FILTER_BANK_LOG, ("x",), ("y",), ("output_scale", "input_correction_bits")),
    # the streaming ops' circular buffers as state rows (aotc_tflm_signal.h says their layout)
    TflSchema(SIGNAL_FRAMER, ("x", "state"), ("y", "valid", "state_next"), ("frame_size", "frame_step")),
    TflSchema(SIGNAL_STACKER, ("x", "state"), ("y", "valid", "state_next"),
              ("num_channels", "stacker_left_context", "stacker_right_context", "stacker_step")),
    TflSchema(SIGNAL_OVERLAP_ADD, ("x", "state"), ("y", "state_next"), ("frame_step",)),
)}

# the ops a .tflite model's import writes (the others come from passes)
IMPORTED_OPS = frozenset(op for op in SCHEMAS if op != CONV_2D_ADD)

__all__ = ["DOMAIN", "IMPORTED_OPS", "SCHEMAS", "TflSchema"]
