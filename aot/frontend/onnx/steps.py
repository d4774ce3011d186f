"""The ONNX import as a named list of steps, over two IRs: the ONNX steps check and fold the
ModelProto; `to-ir` turns it into the IR; the IR steps check it against what the file declared and
make every node canonical. Each step reads and writes one ImportState, so a tool or a test can stop
after any step (`run_import`) and look at what it left; `import_model` runs them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import onnx

from aot.errors import AotcError, OnnxNodeName
from aot.frontend.onnx import contrib
from aot.frontend.onnx.bounded import BoundedImport, check_bounded
from aot.frontend.onnx.canonical import canonicalize
from aot.frontend.onnx.control_flow import flatten_control_flow
from aot.frontend.onnx.fold import fold_to_fixed_point, refuse_control_flow
from aot.frontend.onnx.foreign import FOREIGN_OPS, NOTES_KEY, lower_foreign, lowerable
from aot.frontend.onnx.functions import expand_functions, expandable
from aot.frontend.onnx.load import (
    MAX_OPSET,
    MIN_OPSET,
    check_input_shapes,
    copy_model,
    empty_inputs_to_constants,
    fix_input_shapes,
    fix_named_dims,
    io_quantization,
    metadata_json,
    name_nodes,
    opset_of,
    pin_input_values,
    reduces_empty,
    sanitize,
)
from aot.frontend.onnx.loops import scans_to_loops, sequences_to_scans
from aot.frontend.onnx.old_opsets import upgrade
from aot.frontend.onnx.optional_outputs import drop_unread_optional_outputs
from aot.frontend.onnx.sequences import expand_inputs, has_structured_io, lower_sequences, uses_sequences
from aot.frontend.onnx.skeleton import skeleton
from aot.frontend.onnx.tfidf import lower_tfidf
from aot.frontend.onnx.to_ir import to_ir
from aot.frontend.onnx.validate import (
    check_declarations,
    check_declared,
    declare_outputs,
    node_inference_errors,
    restore_declarations,
    take_declarations,
)
from aot.ir import Graph
from aot.ir.vendor_ops import vendor_domains, vendor_op


@dataclass
class ImportState:
    """What the steps hand on: the import's arguments, the ONNX model (until and after `to-ir`: the
    folded model is what `aotc partition -o` writes back), and from `to-ir` on the IR graph."""

    model: onnx.ModelProto
    name: str | None = None
    input_shapes: dict[str, tuple[int, ...]] | None = None
    max_dims: dict[tuple[str, int], int] | None = None
    keep_onnx: bool = True
    owned: bool = False
    input_values: dict[str, object] | None = None  # --input-value: inputs pinned to constants
    dims: dict[str, int] | None = None  # --dim: named dimensions fixed wherever they appear
    opset: int = 0
    declared: dict[str, onnx.TypeProto] = field(default_factory=dict)  # the file's output/value_info types
    graph: Graph | None = None
    inconsistent: list[AotcError] = field(default_factory=list)  # raised after canonicalize's own checks
    pruned: list[dict] = field(default_factory=list)  # inputs declared empty, made constants (empty-inputs)
    pinned: list[dict] = field(default_factory=list)  # inputs pinned by --input-value (input-values)
    # sequence / optional inputs and outputs: {"inputs": {name: spec}, "outputs": {...}} (sequences.py), and
    # the inputs' values sequence-inputs hands to sequences
    structured_io: dict[str, dict] = field(default_factory=dict)
    structured_values: dict = field(default_factory=dict)

    @property
    def ir(self) -> Graph:
        assert self.graph is not None, "the IR exists from the to-ir step on"
        return self.graph


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[ImportState], None]

    @property
    def doc(self) -> str:
        return (self.run.__doc__ or "").strip().splitlines()[0]


# --- the ONNX steps ----------------------------------------------------------------------

def _foreign_ops(s: ImportState) -> None:
    """The ai.onnx.ml and training ops that are formulas over ai.onnx ops, written as those (foreign.py)."""
    if any(lowerable(n) for n in s.model.graph.node):
        if not s.owned:
            s.model, s.owned = copy_model(s.model), True
        lower_foreign(s.model)


def _opset(s: ImportState) -> None:
    """The default-domain opset, one aotc reads (1 to 6 by upgrading it, the next steps)."""
    if not any(imp.domain in ("", "ai.onnx") for imp in s.model.opset_import):
        # a model of another domain's ops alone (ai.onnx.ml, ai.onnx.preview.training): its first node named (on
        # a copy without the weights, its nodes named as own-copy names them)
        _domains(ImportState(name_nodes(skeleton(s.model))))
    s.opset = opset_of(s.model)
    if not 1 <= s.opset <= MAX_OPSET:
        raise AotcError(f"opset {s.opset} is not supported (aotc reads opsets 1 to {MAX_OPSET})")


def _domains(s: ImportState) -> None:
    """Every node of a domain aotc reads (ai.onnx, the com.microsoft ops it knows, aotc.tflite, the
    ai.onnx.preview ops expanded into their function bodies, the ops of the compile's vendors' domains)."""
    for n in s.model.graph.node:
        if vendor_op(n.domain, n.op_type) is not None:  # an op of a vendor of this compile (Vendor.ops)
            continue
        if n.domain in vendor_domains():
            vendor = vendor_domains()[n.domain]
            raise AotcError(f"vendor {vendor} defines no op {n.op_type} in its domain '{n.domain}'",
                            node=OnnxNodeName(n))
        if not contrib.is_supported(n) and not expandable(n):  # an op of a preview domain onnx defines as a function
            known = ", ".join(contrib.CONTRIB_OPS + contrib.FLOAT_OPS)
            only = f" (of it aotc reads {known})" if n.domain == contrib.DOMAIN else \
                f" (of it aotc reads {', '.join(FOREIGN_OPS[n.domain])})" if n.domain in FOREIGN_OPS else ""
            if not only and n.domain not in ("ai.onnx.ml", "ai.onnx.preview.training") and "." in n.domain:
                only = " (an op a vendor defines is read when that vendor is given: --vendor NAME)"
            raise AotcError(f"operator domain '{n.domain}' is not supported{only}", node=OnnxNodeName(n))


def _own_copy(s: ImportState) -> None:
    """The import's own copy of the model (unless handed over), every node named uniquely."""
    s.model = name_nodes(s.model if s.owned else copy_model(s.model))


def _upgrade_opset(s: ImportState) -> None:
    """Opsets 1 to 6 upgraded to the lowest aotc compiles (aot/frontend/onnx/old_opsets.py)."""
    if s.opset < MIN_OPSET:
        s.model = name_nodes(upgrade(s.model, s.opset, MIN_OPSET))
        s.opset = MIN_OPSET


def _drop_unread_outputs(s: ImportState) -> None:
    """Optional outputs nobody reads are dropped, before any op is checked."""
    drop_unread_optional_outputs(s.model, s.opset)


def _sequence_inputs(s: ImportState) -> None:
    """Sequence and optional inputs -> the tensors that hold them (aot/frontend/onnx/sequences.py)."""
    if has_structured_io(s.model):
        s.input_shapes = dict(s.input_shapes or {})
        s.input_values = dict(s.input_values or {})
        record, s.structured_values = expand_inputs(s.model, s.input_shapes, s.input_values)
        if record:
            s.structured_io["inputs"] = record


def _sequences(s: ImportState) -> None:
    """Sequences of static length and optionals known present or absent, lowered to their tensors."""
    if not uses_sequences(s.model):
        return
    if not s.structured_io and any(n.op_type == "Loop" for n in s.model.graph.node):
        return  # a Loop building a list (torch.stack of a Python list) is loops.py's sequences_to_scans
    record = lower_sequences(s.model, s.opset, s.structured_values)
    if record:
        s.structured_io["outputs"] = record


def _input_shapes(s: ImportState) -> None:
    """--dim and --input-shape: the inputs' dynamic dimensions fixed, by name and by input."""
    if s.dims:
        fix_named_dims(s.model, s.dims)
    if s.input_shapes:
        fix_input_shapes(s.model, s.input_shapes)


def _input_values(s: ImportState) -> None:
    """--input-value: the inputs pinned at compile time become constants, so what they decide folds."""
    if s.input_values:
        s.pinned = pin_input_values(s.model, s.input_values)


def _check_declared(s: ImportState) -> None:
    """Declared sizes and initializer data checked, before anything is allocated from them."""
    check_declared(s.model)


def _empty_inputs(s: ImportState) -> None:
    """An input of a static zero-size dimension becomes an empty constant."""
    s.pruned = empty_inputs_to_constants(s.model)


def _check_input_shapes(s: ImportState) -> None:
    """Every input a tensor of static shape."""
    check_input_shapes(s.model)


def _tfidf(s: ImportState) -> None:
    """TfIdfVectorizer of integer tokens written as comparisons and sums (tfidf.py)."""
    if lower_tfidf(s.model, s.opset):
        name_nodes(s.model)


def _expand_functions(s: ImportState) -> None:
    """Ops onnx defines as functions that aotc has no kernel for: replaced by their bodies (functions.py)."""
    if expand_functions(s.model, s.opset):
        name_nodes(s.model)  # the bodies' nodes, which come unnamed


def _take_declarations(s: ImportState) -> None:
    """The declared output and value_info types set aside: inferred, then compared."""
    s.declared = take_declarations(s.model)


def _fold(s: ImportState) -> None:
    """Constants folded to a fixed point; an If of a constant condition becomes its branch."""
    s.model = fold_to_fixed_point(s.model)


def _scans_to_loops(s: ImportState) -> None:
    """A Scan becomes the Loop over its sequence, a list appended each step a scan output; folded again."""
    if scans_to_loops(s.model, s.opset) | sequences_to_scans(s.model):  # aot/frontend/onnx/loops.py
        s.model = fold_to_fixed_point(s.model)


def _refuse_control_flow(s: ImportState) -> None:
    """What is left of If/Loop/Scan that aotc cannot compile is refused, before any evaluator sees a subgraph."""
    refuse_control_flow(s.model, s.declared)


def _drop_branch_outputs(s: ImportState) -> None:
    """Unread optional outputs of the nodes that came out of an If's branch are dropped."""
    drop_unread_optional_outputs(s.model, s.opset)


def _restore_declarations(s: ImportState) -> None:
    """The declared types restored where inference knows nothing."""
    restore_declarations(s.model, s.declared)


def _fold_empty_reduces(s: ImportState) -> None:
    """A Reduce of nothing, pinned by its declared output shape, folded now."""
    if reduces_empty(s.model):
        s.model = fold_to_fixed_point(s.model)
        restore_declarations(s.model, s.declared)


# --- the IR steps --------------------------------------------------------------------------

def _to_ir(s: ImportState) -> None:
    """The folded model as the IR: static shapes and dtypes, each node checked, bounded rows followed."""
    bounded = BoundedImport(s.max_dims or {})
    s.graph = to_ir(s.model, s.name or sanitize(s.model.graph.name or "model"), bounded, import_model)
    s.graph.info.pruned_inputs = s.pruned  # inputs the bundle does not take, which `aotc run` accepts
    s.graph.info.pinned_inputs = s.pinned  # likewise, with the value they were pinned to (--input-value)
    s.graph.info.structured_io = s.structured_io  # the tensors of the sequence / optional inputs and outputs
    bounded.finish(s.graph)


def _check_declarations(s: ImportState) -> None:
    """The inferred types and shapes against the declared ones."""
    check_declarations(s.ir, s.declared)


def _inference_errors(s: ImportState) -> None:
    """Nodes whose inputs onnx's inference finds inconsistent, noted (raised after canonicalize's checks)."""
    s.inconsistent = node_inference_errors(s.model, s.ir.tensors)


def _declare_outputs(s: ImportState) -> None:
    """The model's outputs declared with the types and shapes the IR found."""
    declare_outputs(s.model, s.ir)


def _meta(s: ImportState) -> None:
    """What later stages read of the model: its opset, a frontend's I/O quantisation and state, the ONNX."""
    graph = s.ir
    graph.info.opset = s.opset
    graph.info.io_quantization = io_quantization(s.model)
    state = metadata_json(s.model, "aotc.state")  # state inputs' next outputs and start values (TFLite's)
    if state:
        graph.info.state = state
    notes = metadata_json(s.model, NOTES_KEY)  # outputs the ai.onnx.ml lowerings retyped (sklearn_ops.py)
    if notes:
        graph.info.output_notes = {k: v for k, v in notes.items() if k in graph.outputs}
    if s.keep_onnx:
        graph.info.folded_onnx = s.model  # the folded model, which a partition is written back into


def _canonicalize(s: ImportState) -> None:
    """Every node in its canonical form (aot/frontend/onnx/canonical/)."""
    canonicalize(s.ir, s.opset)


def _refuse_inconsistent(s: ImportState) -> None:
    """The first node onnx's inference found inconsistent, refused."""
    if s.inconsistent:
        raise s.inconsistent[0]


def _flatten_control_flow(s: ImportState) -> None:
    """Loop and run-time If bodies between their markers (aot/frontend/onnx/control_flow.py)."""
    flatten_control_flow(s.ir)


def _check_bounded(s: ImportState) -> None:
    """The readers of data-dependent rows run on their extent, or are refused."""
    check_bounded(s.ir)


def _verify(s: ImportState) -> None:
    """The graph keeps the invariants later stages rely on (Graph.verify)."""
    s.ir.verify()


ONNX_STEPS: tuple[Step, ...] = (
    Step("foreign-ops", _foreign_ops),
    Step("opset", _opset),
    Step("domains", _domains),
    Step("own-copy", _own_copy),
    Step("upgrade-opset", _upgrade_opset),
    Step("drop-unread-outputs", _drop_unread_outputs),
    Step("sequence-inputs", _sequence_inputs),
    Step("input-shapes", _input_shapes),
    Step("input-values", _input_values),
    Step("check-declared", _check_declared),
    Step("empty-inputs", _empty_inputs),
    Step("check-input-shapes", _check_input_shapes),
    Step("sequences", _sequences),
    Step("tfidf", _tfidf),
    Step("expand-functions", _expand_functions),
    Step("take-declarations", _take_declarations),
    Step("fold", _fold),
    Step("scans-to-loops", _scans_to_loops),
    Step("refuse-control-flow", _refuse_control_flow),
    Step("drop-branch-outputs", _drop_branch_outputs),
    Step("restore-declarations", _restore_declarations),
    Step("fold-empty-reduces", _fold_empty_reduces),
)
IR_STEPS: tuple[Step, ...] = (
    Step("to-ir", _to_ir),
    Step("check-declarations", _check_declarations),
    Step("inference-errors", _inference_errors),
    Step("declare-outputs", _declare_outputs),
    Step("meta", _meta),
    Step("canonicalize", _canonicalize),
    Step("refuse-inconsistent", _refuse_inconsistent),
    Step("flatten-control-flow", _flatten_control_flow),
    Step("check-bounded", _check_bounded),
    Step("verify", _verify),
)
STEPS = ONNX_STEPS + IR_STEPS


def run_import(state: ImportState, steps: tuple[Step, ...] = STEPS) -> Iterator[Step]:
    """Run `steps` on `state` in order, yielding each once it has run (so the caller can look at
    the state it left, or stop)."""
    for step in steps:
        step.run(state)
        yield step


def import_model(model: onnx.ModelProto, name: str | None = None,
                 input_shapes: dict[str, tuple[int, ...]] | None = None,
                 max_dims: dict[tuple[str, int], int] | None = None, *, keep_onnx: bool = True,
                 owned: bool = False, input_values: dict[str, object] | None = None,
                 dims: dict[str, int] | None = None) -> Graph:
    """ModelProto -> IR Graph with static shapes, constants folded, attributes canonical;
    `max_dims` bounds data-dependent dims ({(tensor, axis): rows}, aot/frontend/onnx/bounded.py).
    `keep_onnx`: keep the folded ONNX in graph.info.folded_onnx, which `aotc partition -o` writes back;
    a compile does without that copy of the weights. `owned`: the caller hands `model` over (it was
    loaded for this compile), so it is changed in place rather than copied. `input_values`: inputs
    pinned to constants ({name: text or numbers}, --input-value); `dims`: named dimensions fixed ({name: size},
    --dim)."""
    state = ImportState(model, name, input_shapes, max_dims, keep_onnx, owned, input_values=input_values,
                        dims=dims)
    for _ in run_import(state):
        pass
    return state.ir


__all__ = ["IR_STEPS", "ONNX_STEPS", "STEPS", "ImportState", "Step", "import_model", "run_import"]
