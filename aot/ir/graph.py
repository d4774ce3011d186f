"""The compiler's intermediate representation: plain dataclasses.

A Graph is a list of Nodes in execution (topological) order over named Tensors.
Every tensor has a static shape and a dtype; constants carry their numpy data.
Operator attributes are already canonical (opset differences resolved by the
frontend), so later stages never look at the ONNX opset again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from aot.errors import AotcError

# dtype names are numpy's; these are the ones a bundle can hold.
DTYPES = ("float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool",
          "float16", "bfloat16",  # the halves: computed in float32 (aot/frontend/onnx/canonical/halves.py)
          "int4", "uint4", "int2", "uint2",  # one per byte, low bits (as ml_dtypes): Cast and views only
          "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",  # their bits: Cast and views
          "float4_e2m1fn", "float8_e8m0fnu")  # likewise (float4: one per byte, low bits, as ml_dtypes)


def np_dtype(name: str) -> np.dtype:
    """numpy's dtype for a dtype name (DTYPES', metadata.json's). bfloat16, float8 and the 4- and 2-bit
    integers are ml_dtypes' types, which numpy knows by name only once ml_dtypes is imported: onnx
    imports it, but `aotc run` reads a bundle without onnx (issue 48)."""
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes  # installed with onnx

        if not hasattr(ml_dtypes, name):
            raise
        return np.dtype(getattr(ml_dtypes, name))

# The nodes that open, divide and close a Loop's C for-loop and a run-time If's if/else, around
# their bodies' nodes (aot/frontend/onnx/loops.py, aot/frontend/onnx/branches.py); the emitter writes them.
CONTROL_MARKERS = ("LoopBegin", "LoopEnd", "IfBegin", "IfElse", "IfEnd")


@dataclass
class Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    data: np.ndarray | None = None  # set for constants (initializers, folded values)

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize


@dataclass
class Node:
    op: str
    name: str
    inputs: list[str]  # "" marks an omitted optional input
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    origin: tuple[str, ...] = ()  # ONNX nodes this node stands for, when not just itself (e.g. Conv+BN)

    def describe(self) -> str:
        return f"node '{self.name}' ({self.op})"

    def sources(self) -> tuple[str, ...]:
        """Names of the ONNX nodes this node computes."""
        return self.origin or (self.name,)


@dataclass
class Function:
    """An outlined region: a subgraph handed to one compiler (vendor) as a unit."""

    global_symbol: str
    compiler: str
    graph: Graph
    composite: str | None = None  # pattern name when the function is a composite


@dataclass
class GraphInfo:
    """What the import learns of the model as a whole and later stages read, as typed fields (DESIGN.md:
    no side channel through graph metadata). Each says who writes it."""

    opset: int | None = None  # the model's default-domain opset (the ONNX import)
    # rows known only at run time (aot/frontend/onnx/bounded.py, loops.py): tensor -> its bounded axis, and
    # tensor -> the producer output whose extent it has
    bounded: dict[str, int] = field(default_factory=dict)
    extent_root: dict[str, str] = field(default_factory=dict)
    # a quantized model's I/O: name -> {scale, zero_point, dtype} (the import), and what --quantized-io
    # changed (aot/passes/quantized_io.py), None without it
    io_quantization: dict[str, dict] = field(default_factory=dict)
    quantized_io: dict | None = None
    # state inputs and their start values (aot/frontend/tflite/state.py): input name -> its entry
    state: dict[str, dict] = field(default_factory=dict)
    # inputs declared empty, which the bundle makes constants: [{name, shape, dtype}] (the ONNX import)
    pruned_inputs: list[dict] = field(default_factory=list)
    # inputs pinned at compile time (--input-value): [{name, dtype, shape, value}] (the ONNX import)
    pinned_inputs: list[dict] = field(default_factory=list)
    # tensors whose shape the ONNX import guessed by running their node on zeros (to_ir.py), which no
    # declaration pins: a node that reads run-time values to fill such a shape is refused
    guessed_shapes: set[str] = field(default_factory=set)
    # sequence / optional inputs and outputs and the tensors holding them: {"inputs": {name: spec},
    # "outputs": {...}}, spec {"sequence": [tensors]} or {"optional": tensor, {"sequence": ...} or None}
    # (aot/frontend/onnx/sequences.py)
    structured_io: dict[str, dict] = field(default_factory=dict)
    # outputs a frontend gave another type than the file declares, with what the user must know of them:
    # name -> note (ZipMap's maps returned as their probability tensor: aot/frontend/onnx/sklearn_ops.py)
    output_notes: dict[str, dict] = field(default_factory=dict)
    # the folded ONNX model, which `aotc partition -o` writes a partition back into (keep_onnx)
    folded_onnx: Any = None
    # a vendor function's record of its own passes and options (accel_sim's transform)
    vendor_passes: list[str] = field(default_factory=list)
    vendor_options: dict[str, str] = field(default_factory=dict)
    vendor_extra: dict[str, Any] = field(default_factory=dict)  # other keys a vendor keeps (Graph.meta)
    # the vendors' graph passes that changed the main graph before partitioning: vendor -> pass names
    vendor_graph_passes: dict[str, list[str]] = field(default_factory=dict)

    def copy(self) -> GraphInfo:
        """A copy whose tables can change without changing this one's."""
        return replace(self, bounded=dict(self.bounded), extent_root=dict(self.extent_root),
                       io_quantization=dict(self.io_quantization), state=dict(self.state),
                       pruned_inputs=list(self.pruned_inputs), pinned_inputs=list(self.pinned_inputs),
                       guessed_shapes=set(self.guessed_shapes),
                       structured_io=dict(self.structured_io), output_notes=dict(self.output_notes),
                       vendor_passes=list(self.vendor_passes),
                       vendor_options=dict(self.vendor_options), vendor_extra=dict(self.vendor_extra),
                       vendor_graph_passes={k: list(v) for k, v in self.vendor_graph_passes.items()})


@dataclass
class Graph:
    name: str
    nodes: list[Node]
    tensors: dict[str, Tensor]
    inputs: list[str]
    outputs: list[str]
    functions: dict[str, Function] = field(default_factory=dict)
    info: GraphInfo = field(default_factory=lambda: GraphInfo())  # what the import learnt of the model as a whole

    # --- a vendor's record of its function, as the vendor guide has written it since vendors began -------
    @property
    def meta(self) -> dict[str, Any]:
        """What a vendor's transform records of its function (`vendor_passes`, `vendor_options` and any key
        of its own), as the dict docs/vendor-guide.md shows: `graph.meta = {**graph.meta, ...}`. aotc's
        stages read and write the typed `info` instead."""
        return {**({"vendor_passes": list(self.info.vendor_passes)} if self.info.vendor_passes else {}),
                **({"vendor_options": dict(self.info.vendor_options)} if self.info.vendor_options else {}),
                **self.info.vendor_extra}

    @meta.setter
    def meta(self, value: dict[str, Any]) -> None:
        rest = {k: v for k, v in value.items() if k not in ("vendor_passes", "vendor_options")}
        self.info = replace(self.info, vendor_passes=list(value.get("vendor_passes", [])),
                            vendor_options=dict(value.get("vendor_options", {})), vendor_extra=rest)

    # --- queries -------------------------------------------------------------
    def tensor(self, name: str) -> Tensor:
        return self.tensors[name]

    def producers(self) -> dict[str, Node]:
        return {out: n for n in self.nodes for out in n.outputs if out}

    def consumers(self) -> dict[str, list[Node]]:
        uses: dict[str, list[Node]] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i:
                    uses.setdefault(i, []).append(n)
        return uses

    def const(self, name: str) -> np.ndarray | None:
        """The constant value of tensor `name`, or None if it is computed at run time."""
        if not name:
            return None
        t = self.tensors.get(name)
        return None if t is None else t.data

    def constants_read(self) -> list[str]:
        """The constants some node reads (inside composite bodies too), in first-use order: what a build of
        this graph stores, where `tensors` may still hold constants a pass replaced and nothing reads."""
        seen: dict[str, None] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i and i in self.tensors and self.tensors[i].is_const:
                    seen.setdefault(i)
            body = n.attrs.get("body")
            if isinstance(body, Graph):
                seen.update(dict.fromkeys(body.constants_read()))
        return list(seen)

    def activations(self) -> list[Tensor]:
        """Tensors computed at run time (not constants, not graph inputs)."""
        inputs = set(self.inputs)
        seen: list[Tensor] = []
        for n in self.nodes:
            for o in n.outputs:
                if o and o not in inputs:
                    seen.append(self.tensors[o])
        return seen

    def subgraph(self, nodes: list[Node], name: str, outputs: list[str]) -> Graph:
        """`nodes` as a Graph of their own: the tensors they touch, and as inputs the non-constant
        tensors they read from outside (in first-use order)."""
        produced = {o for n in nodes for o in n.outputs if o}
        inputs: list[str] = []
        names: set[str] = set()
        for n in nodes:
            for i in n.inputs:
                if not i:
                    continue
                names.add(i)
                if i not in produced and not self.tensors[i].is_const and i not in inputs:
                    inputs.append(i)
            names.update(o for o in n.outputs if o)
        return Graph(name=name, nodes=nodes, tensors={k: self.tensors[k] for k in names}, inputs=inputs,
                     outputs=outputs, info=GraphInfo(opset=self.info.opset))

    def copy(self) -> Graph:
        return Graph(
            name=self.name,
            nodes=[Node(n.op, n.name, list(n.inputs), list(n.outputs), dict(n.attrs), n.origin) for n in self.nodes],
            tensors=dict(self.tensors),
            inputs=list(self.inputs),
            outputs=list(self.outputs),
            functions=dict(self.functions),
            info=self.info.copy(),
        )

    # --- invariants ----------------------------------------------------------
    def scopes(self) -> dict[str, tuple[str, ...]]:
        """Each node's control scope: the markers of the loops and branches around it, outermost
        first. Nodes of different scopes must not run as one vendor call."""
        stack: list[str] = []
        out: dict[str, tuple[str, ...]] = {}
        for n in self.nodes:
            if n.op in ("LoopEnd", "IfElse", "IfEnd") and stack:
                stack.pop()
            out[n.name] = tuple(stack)
            if n.op in ("LoopBegin", "IfBegin", "IfElse"):
                stack.append(n.name)
        return out

    def verify(self) -> None:
        """Raise if the graph breaks an invariant later stages rely on."""
        defined = set(self.inputs) | {t.name for t in self.tensors.values() if t.is_const}
        names = set()
        for n in self.nodes:
            if n.name in names:
                raise AotcError(f"duplicate node name '{n.name}'", node=n)
            names.add(n.name)
            for i in n.inputs:
                if i and i not in defined:
                    raise AotcError(f"input '{i}' is used before it is defined", node=n)
            for o in n.outputs:
                if not o:
                    continue
                if o in defined:
                    raise AotcError(f"tensor '{o}' is defined twice", node=n)
                if o not in self.tensors:
                    raise AotcError(f"output '{o}' has no shape or dtype", node=n)
                defined.add(o)
        for o in self.outputs:
            if o not in defined:
                raise AotcError(f"graph output '{o}' is never computed")
