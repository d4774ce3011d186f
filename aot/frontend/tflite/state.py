"""The start value of the state a TFLite model keeps between invokes (issue 48).

aotc's library keeps no state: what TFLite keeps (an LSTM's or SVDF's variable tensors, resource
variables) becomes a graph input `<x>` and an output `<x>_next` that the caller carries. A new
sequence must start where a fresh interpreter starts, which the model defines:

- a variable tensor starts as LiteRT's ResetVariableTensor leaves it (tensor_utils.cc; TFLM's
  ResetVariableTensors is the same): every byte the tensor's zero point for int8, 0 for every other
  type (float, int16, ...). Not zeros for an int8 state: an integer LSTM's h with zero point -3 that
  starts at 0 starts at 3 LSB off. A buffer the file gives a variable tensor plays no part: LiteRT
  refuses such a file, TFLM allocates the tensor afresh and resets it as above.
- a resource variable starts from what the CALL_ONCE init subgraph assigns it (constants: a Keras
  stateful layer's zeros, or any values), and from zeros when nothing assigns it before it is read.

Each is recorded per state input in the model's metadata_props (STATE_KEY), read back by the
import stage into graph.info.state; the bundle writes it to metadata.json and as the generated
`<name>_reset_state`, and `aotc run` starts an input its .npz leaves out from it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from aot.errors import AotcError
from aot.frontend.tflite.reader import OpName, TflOp, TflTensor

if TYPE_CHECKING:
    import onnx

    from aot.frontend.tflite.builder import OnnxBuilder

STATE_KEY = "aotc.state"  # metadata_props: {input: {next, fill | values, source}}


def reset_value(t: TflTensor) -> int:
    """What LiteRT's ResetVariableTensor writes into every byte of variable tensor `t`: its zero point
    for int8, else 0 (so int8 and float32 0 as a value, whatever the type)."""
    if t.dtype == "int8" and t.quant is not None and len(t.quant.zero_point):
        return int(t.quant.zero_point[0])
    return 0


def reset_source(t: TflTensor) -> str:
    """Why variable tensor `t` starts from reset_value(t), in a few words (metadata.json, the C comment)."""
    what = "its zero point" if t.dtype == "int8" and reset_value(t) else "0"
    return f"{what}: TFLite's ResetVariableTensors of {t.dtype} variable tensor '{t.name}'"


def variable_input(b: OnnxBuilder, op: TflOp, k: int, name: str) -> str:
    """`name`, the graph input that carries variable tensor op.inputs[k] (a recurrent op's state) into the call.
    The converter may give that tensor to other ops too (a tf_keras SimpleRNN's WHILE starts from the zeros an
    LSTM's state tensor holds, the two sharing one buffer-less tensor): as in LiteRT, an op before this one reads
    the state the call starts from (this input: what it read is renamed), one after it the state this op leaves
    (record_state with `var`). Two recurrent ops updating one variable are refused."""
    var = op.inputs[k]
    if var in b.var_written:
        raise AotcError(f"its state tensor '{b.tensor(var).name}' is another recurrent op's state too, which aotc "
                        "does not compile", node=OpName(op))
    early = b.var_reads.pop(var, None)
    if early is not None:
        _rename(b.nodes, early, name)
    return name


def _rename(nodes: list[onnx.NodeProto], old: str, new: str) -> None:
    """Every read of `old` by `nodes` and the subgraphs of their attributes reads `new`."""
    for n in nodes:
        for j, i in enumerate(n.input):
            if i == old:
                n.input[j] = new
        for a in n.attribute:
            if a.g is not None and len(a.g.node):
                _rename(list(a.g.node), old, new)


def record_state(b: OnnxBuilder, name: str, nxt: str, dtype: str, shape: list[int] | tuple[int, ...],
                 value: np.ndarray | float, source: str, var: int = -1) -> None:
    """Note graph input `name` as state the caller carries to output `nxt`, starting from `value`
    (a scalar, or an array of the input's shape), and why that value (`source`, for the reader). `var`:
    the variable tensor the state is, which the ops after this one read as `nxt` (variable_input)."""
    if var >= 0:
        b.values[var] = {"nhwc": nxt}
        b.var_written.add(var)
    value = np.asarray(value).astype(dtype)
    try:
        flat = np.ascontiguousarray(np.broadcast_to(value, tuple(shape))).reshape(-1)
    except ValueError:
        raise AotcError(f"state '{name}' is {dtype}[{','.join(map(str, shape))}], but its start value "
                        f"({source}) has shape {list(value.shape)}") from None
    bits = flat.view(f"u{flat.itemsize}")  # bit patterns: -0.0 is not a fill of 0.0
    entry: dict = {"next": nxt, "source": source}
    if flat.size and np.all(bits == bits[0]):
        entry["fill"] = flat[0].item()
    else:
        entry["values"] = flat.tolist()
    b.state[name] = entry


def state_metadata(b: OnnxBuilder, model: onnx.ModelProto) -> None:
    """Write the recorded state's start values into `model`'s metadata_props (none without state)."""
    if b.state:
        model.metadata_props.add(key=STATE_KEY, value=json.dumps(b.state))
