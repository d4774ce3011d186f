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
    """A named value of static shape and dtype: a graph input, a constant (`data` set) or what a node computes.
    Graph.tensors holds every one a graph's nodes touch. Tensors may be shared between graphs (Graph.copy,
    subgraph): to change one, put a new Tensor under its name (`dataclasses.replace(t, shape=...)`) rather than
    assigning to its fields."""

    name: str  # its key in Graph.tensors, and how nodes' inputs and outputs name it
    shape: tuple[int, ...]  # static: every dim known at compile time (() for a scalar)
    dtype: str  # a name of DTYPES (numpy's: "float32", "int8", ...)
    data: np.ndarray | None = None  # set for constants (initializers, folded values): an array of this shape and dtype

    @property
    def is_const(self) -> bool:
        """Whether its value is known at compile time (`data` set): a weight a vendor may bake into its C."""
        return self.data is not None

    @property
    def size(self) -> int:
        """The number of elements (1 for a scalar)."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        """Bytes per element (one for the 4- and 2-bit types, which the bundle holds one per byte)."""
        return np.dtype(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        """Its bytes in memory, as a DLTensor or the workspace holds it: size * itemsize."""
        return self.size * self.itemsize


@dataclass
class Node:
    """One operation: `op` over the tensors named by `inputs`, writing those named by `outputs`, with its
    attributes in aotc's canonical form (docs/vendor-api.md, "Canonical attributes per op": constant parameter
    inputs made attributes, defaults filled in, axes non-negative). Inputs and outputs are positional, as in
    ONNX: an omitted optional input is "" (so that the ones after it keep their places), never left out;
    skip "" when walking a node's tensors (Graph.producers and consumers do)."""

    # the ONNX op type (e.g. "Conv"), an op of aotc's own ("Composite", "Call", "Tfl..."), or a vendor op's
    # `<domain>.<op_type>`
    op: str
    name: str  # unique in its graph (Graph.verify): the ONNX node's name, or a name the pass that made it chose
    inputs: list[str]  # tensor names in the op's input order; "" marks an omitted optional input
    outputs: list[str]  # tensor names in the op's output order; "" marks an omitted optional output
    # canonical attributes: name -> int, float, str, a list of them, an ndarray or a Graph (a body)
    attrs: dict[str, Any] = field(default_factory=dict)
    origin: tuple[str, ...] = ()  # ONNX nodes this node stands for, when not just itself (e.g. Conv+BN)

    def describe(self) -> str:
        """How messages name the node: `node 'conv1' (Conv)` (AotcError(..., node=node) prefixes it)."""
        return f"node '{self.name}' ({self.op})"

    def sources(self) -> tuple[str, ...]:
        """Names of the ONNX nodes this node computes: its `origin`, or its own name when it stands for itself.
        What `aotc compare`, taps and the partition report show, so a fused node is traced to the model's nodes;
        a pass that merges nodes sets the new one's origin to the sources of all it replaces."""
        return self.origin or (self.name,)


@dataclass
class Function:
    """An outlined region: a subgraph handed to one compiler (vendor) as a unit. The main graph calls it
    through a `Call` node (attrs `function`, `compiler`) whose inputs and outputs are `graph.inputs` and
    `graph.outputs`; codegen's C function takes them in that order."""

    global_symbol: str  # the C name of the function: unique in the bundle (`<model>_<vendor>_<k>`)
    compiler: str  # the vendor that compiles it
    graph: Graph  # its nodes, their tensors, and as inputs and outputs what crosses the region's boundary
    composite: str | None = None  # pattern name when the function is a composite


@dataclass
class GraphInfo:
    """What the import learns of the model as a whole and later stages read, as typed fields (DESIGN.md:
    no side channel through graph metadata). Each says who writes it."""

    opset: int | None = None  # the model's default-domain opset (the ONNX import)
    # rows known only at run time (aot/frontend/onnx/bounded.py, loops.py): tensor -> its bounded axis
    bounded: dict[str, int] = field(default_factory=dict)
    extent_root: dict[str, str] = field(default_factory=dict)  # tensor -> the producer output whose extent it has
    # a quantized model's I/O: name -> {scale, zero_point, dtype} (the import)
    io_quantization: dict[str, dict] = field(default_factory=dict)
    quantized_io: dict | None = None  # what --quantized-io changed (aot/passes/quantized_io.py), None without it
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
    # a vendor function's record of the passes its transform ran (accel_sim's), as Graph.meta shows it
    vendor_passes: list[str] = field(default_factory=list)
    vendor_options: dict[str, str] = field(default_factory=dict)  # the options its transform ran with
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
    """A model, a vendor's function or a composite's body: `nodes` in execution (topological) order over the
    tensors of `tensors`, which holds every tensor a node reads or writes (inputs, constants, intermediates,
    outputs), each with its static shape and dtype. A checker and a pattern read it; a pass or a transform
    returns a new one (`copy()` first), which must still `verify()`.

    To add a constant, put a Tensor with data under a new name and read it by that name:
    `graph.tensors["w2"] = Tensor("w2", w.shape, "float32", w)`. To add a node, insert it after the
    producers of its inputs, with a new name, its outputs' Tensors in `tensors`."""

    name: str  # the model's (or function's) name
    nodes: list[Node]  # in execution order: every node after the producers of its inputs
    # name -> Tensor, for every tensor the nodes touch (it may still hold constants nothing reads: constants_read)
    tensors: dict[str, Tensor]
    inputs: list[str]  # the run-time inputs, in order
    outputs: list[str]  # what the graph computes, in order
    # global_symbol -> a vendor's Function, once partitioned (each called by one Call node)
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
        """The Tensor named `name` (KeyError if the graph has none): `graph.tensors[name]`."""
        return self.tensors[name]

    def producers(self) -> dict[str, Node]:
        """Tensor name -> the node that writes it; graph inputs and constants have none. Computed afresh at each
        call (a walk of the nodes): keep the dict while the graph does not change."""
        return {out: n for n in self.nodes for out in n.outputs if out}

    def consumers(self) -> dict[str, list[Node]]:
        """Tensor name -> the nodes that read it, in graph order (a node once per input that names it);
        a tensor nothing reads is absent. A graph output is read from outside too: a tensor a fusion may
        keep inside is one with `len(consumers().get(t, [])) == 1 and t not in graph.outputs`. Computed
        afresh at each call."""
        uses: dict[str, list[Node]] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i:
                    uses.setdefault(i, []).append(n)
        return uses

    def const(self, name: str) -> np.ndarray | None:
        """The constant value of tensor `name` (its Tensor's data), or None if it is computed at run time, is
        "" (an omitted input) or names no tensor: how a checker or a pattern asks for a weight."""
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
        """A graph to change without changing this one, as a pass's first step: new Nodes (their input, output
        and attribute containers new too, the attribute values shared), a new `tensors` dict holding the same
        Tensor objects (replace an entry, never change a Tensor in place), new `inputs`, `outputs` and
        `functions` containers (the Functions shared), and `info` copied (GraphInfo.copy)."""
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
        """Raise an AotcError naming the node if the graph breaks an invariant later stages rely on:

        - node names are unique;
        - each node's inputs (but "") are defined before it: a graph input, a constant (a Tensor with data)
          or an output of an earlier node, so the node order is an execution order;
        - each output (but "") is defined once, by one node, never a graph input or a constant, and has a
          Tensor (its shape and dtype) in `tensors`;
        - each graph output is computed (or is an input or a constant).

        The pass runner calls it after every pass, a vendor's included (aot.passes.base.verify_graph, which
        also checks composite bodies, functions and calls), so a pass that breaks the graph is named at once."""
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
