"""The ONNX graph a TFLite model is written into, and what every op's lowering needs from it: the
builder (each TFLite tensor's ONNX value by layout, fresh names, constants), the two layouts, and the
one-line error naming the op. A leaf of the TFLite frontend: the lowerings (ops.py, control.py,
int8.py, recurrent.py, state.py) import it, it imports none of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from aot.errors import AotcError
from aot.frontend.tflite.reader import OpName, TflModel, TflOp, TflTensor

NHWC, NCHW = "nhwc", "nchw"
TO_NCHW, TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


class OnnxBuilder:
    """The ONNX graph being written, and each TFLite tensor's value by layout."""

    def __init__(self, model: TflModel):
        self.m = model
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.value_infos: list[onnx.ValueInfoProto] = []  # the outputs of internal ops, which onnx cannot infer
        self.values: dict[int, dict[str, str]] = {}  # tensor index -> {layout: onnx name}
        self.used: set[str] = set()
        self.names = unique_names([t.name for t in model.tensors], self.used)
        self.extra_inputs: list[onnx.ValueInfoProto] = []  # state carried by the caller (recurrent.py)
        self.extra_outputs: list[onnx.ValueInfoProto] = []
        self.extra_quant: dict[str, dict] = {}  # the quantised state's {scale, zero_point}, for the header
        self.subgraphs: list[TflModel] = model.extra.get("subgraphs", [model])
        self.handles: dict[int, str] = {}  # resource tensor -> the variable's shared name
        self.variables: dict[str, dict[str, Any]] = {}  # shared name -> its current value, input, type
        self.nested = False  # a WHILE/IF subgraph (no resource variables there)
        self.state: dict[str, dict[str, Any]] = {}  # state input -> its next output and start value (state.py)
        self.initial: dict[str, np.ndarray] = {}  # resource variable -> what CALL_ONCE's init subgraph assigns
        self.lower: Callable[[OnnxBuilder], None] = _no_table  # the op table, lowering a (sub)graph (ops.py's)
        self.rows: set[int] = set()  # tensors whose rows the data decides (WHERE, UNIQUE: aotc's bounded outputs)
        # variable tensors (an LSTM's state) read by an op before their recurrent op: the name read, which that op's
        # state input takes; and those a recurrent op has updated (state.py's variable_input, record_state)
        self.var_reads: dict[int, str] = {}
        self.var_written: set[int] = set()

    def child(self, model: TflModel) -> OnnxBuilder:
        """A builder for a subgraph, writing into this one's current node list, sharing its names,
        initializers and state."""
        c = OnnxBuilder.__new__(OnnxBuilder)
        c.m, c.nodes, c.inits, c.value_infos, c.values, c.used = model, self.nodes, self.inits, self.value_infos, {}, \
            self.used
        c.names = unique_names([t.name for t in model.tensors], c.used)
        c.extra_inputs, c.extra_outputs, c.subgraphs = self.extra_inputs, self.extra_outputs, self.subgraphs
        c.extra_quant = self.extra_quant
        c.handles, c.variables, c.nested = {}, self.variables, True
        c.state, c.initial, c.lower, c.rows = self.state, self.initial, self.lower, self.rows
        c.var_reads, c.var_written = self.var_reads, self.var_written
        return c

    def _unique(self, name: str) -> str:
        return _unique(name, self.used)

    def fresh(self, hint: str) -> str:
        return self._unique(hint)

    def tensor(self, idx: int) -> TflTensor:
        return self.m.tensors[idx]

    def const(self, array: np.ndarray, hint: str) -> str:
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(np.array(array, order="C"), name))  # keeps 0-d scalars 0-d
        return name

    def node(self, op: str, inputs: list[str], outputs: list[str] | None = None, hint: str = "", **attrs) -> str:
        outs = outputs or [self.fresh(f"{hint or op}_out")]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.fresh(hint or op), **attrs))
        return outs[0]

    # --- values ------------------------------------------------------------------------
    def layouts(self, idx: int) -> dict[str, str]:
        return self.values.get(idx, {})

    def value(self, idx: int, layout: str = NHWC) -> str:
        """Tensor `idx` in `layout` (NCHW only for 4-D tensors), transposing at most once."""
        t = self.tensor(idx)
        if len(t.shape) != 4:
            layout = NHWC
        if t.variable and idx not in self.values and not self.nested:  # the state before its recurrent op runs
            self.var_reads[idx] = self.fresh(f"{self.names[idx]}_state")
            self.values[idx] = {NHWC: self.var_reads[idx]}
        if t.data is not None:
            have = self.values.setdefault(idx, {})
            if layout not in have:
                data = float_const(t)
                have[layout] = self.const(data.transpose(TO_NCHW) if layout == NCHW else data,
                                          self.names[idx] + ("_nchw" if layout == NCHW else ""))
            return have[layout]
        have = self.values.get(idx)
        if not have:
            raise AotcError(f"tensor '{t.name}' is read before any op computes it")
        if layout not in have:
            other = next(iter(have.values()))
            have[layout] = self.node("Transpose", [other], [self.fresh(f"{self.names[idx]}_{layout}")],
                                     hint=f"{self.names[idx]}_to_{layout}",
                                     perm=list(TO_NCHW if layout == NCHW else TO_NHWC))
        return have[layout]

    def prefers(self, idx: int) -> str:
        """The layout a layout-agnostic op should compute in: NCHW when its input already is."""
        have = self.layouts(idx)
        return NCHW if NCHW in have and len(self.tensor(idx).shape) == 4 else NHWC

    def set(self, idx: int, layout: str, name: str) -> None:
        if len(self.tensor(idx).shape) != 4:
            layout = NHWC
        self.values[idx] = {layout: name}

    def out_name(self, idx: int, layout: str) -> str:
        """The ONNX name of tensor `idx` computed in `layout` (graph outputs keep their own name in NHWC)."""
        if layout == NHWC or len(self.tensor(idx).shape) != 4:
            return self.names[idx]
        return self.fresh(self.names[idx] + "_nchw")


def _unique(name: str, used: set[str]) -> str:
    base, k = name or "t", 1
    while name in used:
        name, k = f"{base}_{k}", k + 1
    used.add(name)
    return name


def unique_names(names: list[str], used: set[str]) -> list[str]:
    """The ONNX name of each TFLite tensor of a (sub)graph, by index (reader.tensor_name's): its own name,
    with _1, _2, ... after a name already taken (`used`, which they join). The main graph's come first,
    before any name the lowerings make up, so a tensor's name depends on the file alone."""
    return [_unique(n, used) for n in names]


LAYOUT_NAME = re.compile(r"^(?P<base>.*)_(?P<layout>nchw|nhwc)(?:_\d+)?$")


def tensor_of(onnx_name: str, index: dict[str, int]) -> tuple[int, str] | None:
    """The TFLite tensor (its index in `index`: unique_names -> index of the main graph) whose value an ONNX
    value of the frontend holds, and in which layout: a tensor's own name is its value as the file holds it
    (NHWC), `<name>_nchw` its NCHW value (`out_name`, `value`), `<name>_nhwc` its NHWC value computed from
    that; a _k made unique after either. None for a value no TFLite tensor holds (what a lowering adds)."""
    if onnx_name in index:
        return index[onnx_name], NHWC
    m = LAYOUT_NAME.match(onnx_name)
    if m is None or m["base"] not in index:
        return None
    return index[m["base"]], m["layout"]


def _no_table(b: OnnxBuilder) -> None:
    raise AotcError("internal error: a TFLite subgraph lowered before the op table was set")


def value_info(t: TflTensor, name: str, run_rows: bool = False) -> onnx.ValueInfoProto:
    """The ONNX declaration of TFLite tensor `t` under `name`; run_rows: the dimensions its shape signature
    leaves to the run are left undeclared (rows the data decides: the import plans them at their bound)."""
    if t.dtype == "resource":  # a handle, not data: only the variable ops (VAR_HANDLE ...) hold one
        raise AotcError(f"tensor '{t.name}' is a resource handle where a value is needed (only VAR_HANDLE, "
                        "READ_VARIABLE and ASSIGN_VARIABLE take handles)")
    dims: list[int | str] = list(t.shape)
    if run_rows and len(t.signature) == len(dims):
        dims = [f"{name}_rows{k}" if s < 0 else d for k, (d, s) in enumerate(zip(dims, t.signature, strict=True))]
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype)), dims)


def float_const(t: TflTensor) -> np.ndarray:
    """Constant `t`'s data as an op reads it: float16 widened, quantized integers as they are."""
    data = t.data
    if data.dtype == np.float16:
        return data.astype(np.float32)
    if t.quant is not None and data.dtype in (np.int8, np.uint8) and t.dtype != "float32":
        return data  # the QUANTIZE/DEQUANTIZE ops read it as integers
    return data


def op_error(op: TflOp, message: str) -> AotcError:
    """The one-line user error of `op`, naming it."""
    return AotcError(message, node=OpName(op))


def float_weights(b: OnnxBuilder, op: TflOp, k: int) -> np.ndarray:
    """Input `k` of `op` as float32 weights, which must be constant."""
    t = b.tensor(op.inputs[k])
    if t.data is None:
        raise op_error(op, f"weights '{t.name}' are computed at run time; aotc needs constant weights")
    if t.dtype not in ("float32", "float16", "float64"):  # integers here would be read as their raw values
        raise op_error(op, f"{op.op} with {t.dtype} weights '{t.name}' on float inputs is not supported")
    return float_const(t).astype(np.float32)


__all__ = ["NCHW", "NHWC", "TO_NCHW", "TO_NHWC", "OnnxBuilder", "float_const", "float_weights",
           "op_error", "tensor_of", "unique_names"]
