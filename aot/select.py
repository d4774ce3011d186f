"""select: which kernels may run each host node on the target, from the one kernel table.

For every node left to the host after partitioning, the table (aot/kernels, HostOp.kernels)
lists candidate kernels, cheapest first; select keeps those that apply to the node's shapes,
attributes and dtypes on this target, and refuses the nodes no kernel takes: all of them at
once, in one line grouped by op (aot/unsupported.py). Which candidate
runs depends on the memory spare at the node's step, which only the planner knows: the
planner calls `choose` with that budget and records the KernelChoice it keeps, and the emitter
writes that record. Vendor functions (Call nodes) take the workspace their codegen asked for.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from aot.errors import AotcError
from aot.ir import CONTROL_MARKERS, Graph, Node
from aot.kernels import HOST_OPS, nchw_bands
from aot.kernels import transpose_in_place as transpose_in_place_op
from aot.kernels.base import NO_SCRATCH, Candidate, HostOp, KernelChoice, TargetTraits
from aot.kernels.tflite_bands import band_run
from aot.kernels.tflite_bands import layer_of as tflite_layer_of
from aot.plan import OpMemory
from aot.unsupported import NO_KERNEL, UnsupportedNodes


@dataclass(frozen=True)
class NodeKernels:
    """The kernels that may run one node, in order of preference."""

    op: HostOp | None  # None: a vendor function's Call
    candidates: tuple[Candidate, ...]
    traits: TargetTraits = TargetTraits()  # the target they were selected for


Selection = dict[str, NodeKernels]

def host_op(node: Node, graph: Graph) -> HostOp:
    """The node's table entry, or a one-line refusal naming it."""
    op = HOST_OPS.get(node.op)
    if op is None:
        raise AotcError(NO_KERNEL, node=node)
    reason = op.reject_reason(node, graph)
    if reason:
        raise AotcError(reason, node=node)
    return op


def refusal(node: Node, graph: Graph) -> tuple[HostOp | None, str | None]:
    """The node's table entry and why it cannot run it (None: it can); (None, None): no entry."""
    op = HOST_OPS.get(node.op)
    return op, (op.reject_reason(node, graph) if op is not None else None)


def select_kernels(graph: Graph, traits: TargetTraits, workspace: Mapping[str, int] | None = None) -> Selection:
    """Every node's candidate kernels; `workspace`: arena bytes each vendor function needs, by symbol.
    Nodes the table cannot run are refused together (UnsupportedNodes)."""
    workspace = workspace or {}
    selection: Selection = {}
    refused: list[tuple[Node, str | None]] = []
    for node in graph.nodes:
        if node.op in CONTROL_MARKERS:  # written by the emitter itself (aot/ir.py)
            selection[node.name] = NodeKernels(None, (NO_SCRATCH,))
            continue
        if node.op == "Call":
            fixed = KernelChoice(node.attrs["function"], workspace.get(node.attrs["function"], 0))
            selection[node.name] = NodeKernels(None, (Candidate(fixed.kernel, lambda n, g, b, c=fixed: c),))
            continue
        op, reason = refusal(node, graph)
        if op is None or reason:
            refused.append((node, reason))
            continue
        selection[node.name] = candidates(node, graph, traits)
    if refused:
        raise UnsupportedNodes(refused)
    return selection


def candidates(node: Node, graph: Graph, traits: TargetTraits) -> NodeKernels:
    """The kernels of the table that apply to a host node on the target."""
    op = host_op(node, graph)
    kernels = tuple(k for k in op.kernels if k.applies_on(node, graph, traits))
    if traits.threads > 1 and any(k.facts.threaded for k in kernels):
        # with a pool, the kernels that split their work over it (KernelFacts.threaded: output-channel tiles
        # and row bands, output planes, column blocks of a 1 x 1 conv's GEMM and of a Gemm's, Winograd's
        # lanes); all but Winograd's need no scratch per thread (its lanes, one per thread, are kept for the
        # whole run: KernelChoice.kept; the GEMM's threads copy B blocks into their own stack). (Elementwise
        # ops have no table of kernels; aotc_swish_f32 splits too.)
        # The op's last candidate stays behind them: under a RAM budget a threaded kernel's least scratch may not
        # fit, and the last one always does.
        kernels = (*(k for k in kernels if k.facts.threaded), *(kernels[-1:] if not kernels[-1].facts.threaded else ()))
    if not kernels:  # the table's last candidate of each op applies everywhere: a table bug
        raise AotcError(f"no {node.op} kernel applies on this target", node=node)
    return NodeKernels(op, kernels, traits)


def choose(node: Node, graph: Graph, kernels: NodeKernels, budget: int, least: bool = False) -> KernelChoice:
    """The first candidate that fits `budget` bytes of scratch; the last one always does. `least`: a
    candidate's blocks may go below their usual floor (Candidate.fit_least: a RAM budget's "tiles")."""
    for k in kernels.candidates:
        if least and k.fit_least is not None:
            choice = k.fit_least(node, graph, budget)
        elif k.fit_on:
            choice = k.fit_on(node, graph, budget, kernels.traits)
        else:
            choice = k.fit(node, graph, budget)
        if choice is not None:
            if k.symbols and choice.kernel not in k.symbols:  # docs/kernels.md lists a candidate's symbols
                raise AssertionError(f"kernel table: a {node.op} candidate chose {choice.kernel}, not one of "
                                     f"its functions {', '.join(k.symbols)} ({node.name})")
            return dataclasses.replace(choice, assumes={**choice.assumes, **k.assumes(kernels.traits)}, facts=k.facts)
    raise AssertionError(f"kernel table: no {node.op} candidate fits a budget of {budget} ({node.name})")


def transpose_in_place(graph: Graph, i: int, selection: Selection) -> Graph | None:
    """The graph with step i, a channels-first input's Transpose to NHWC, as the node that writes it over its
    input (aot/kernels/transpose_in_place.py, under a --ram-budget: aot/plan/bands.py), its kernel entered in
    `selection`; None where it may not be."""
    node = graph.nodes[i]
    if not transpose_in_place_op.applies(node, graph):
        return None
    new = transpose_in_place_op.node_in_place(node)
    selection[new.name] = NodeKernels(transpose_in_place_op.HOSTOP, (transpose_in_place_op.CANDIDATE,),
                                      selection[node.name].traits)
    return Graph(graph.name, [*graph.nodes[:i], new, *graph.nodes[i + 1:]], graph.tensors, graph.inputs,
                 graph.outputs, graph.functions, graph.info)


def fuse_in_bands(graph: Graph, i: int, j: int, selection: Selection, grouped: bool | int = False) -> Graph | None:
    """The graph with steps i..j one node running them in row bands (aot/kernels/tflite_bands.py, under a
    --ram-budget: aot/plan/bands.py), its kernel entered in `selection`; the layers' own entries stay, as
    its fit chooses each layer's kernel from them (a group's node from its layer's). grouped: its expansions and
    the depthwise layers after them a group of channels at a time (tflite_bands.grouped_pairs; an int: that many
    channels a group), None where the run has none such."""
    if nchw_bands.layer_of(graph.nodes[i], graph) is not None:  # the ONNX route's NCHW convs (nchw_bands.py)
        if grouped:
            return None
        node, op, kernel = nchw_bands.band_run(graph, i, j, lambda m, g, budget, least, kernel: _choose_on(
            m, g, selection[m.name], budget, least, kernel), lambda m: selection[m.name].op,
            lambda m: choose(m, graph, selection[m.name], WHOLE).kernel)
    else:
        if any(tflite_layer_of(m, graph) is None for m in graph.nodes[i:j + 1]):
            return None  # a run reaching a layer of the NCHW route (runs_through takes either kind a step)
        made = band_run(graph, i, j, lambda m, g, budget, least: choose(
            m, g, selection[m.attrs.get("group_of", m.name)], budget, least), grouped)
        if made is None:
            return None
        node, op, kernel = made
    selection[node.name] = NodeKernels(op, (kernel,), selection[graph.nodes[i].name].traits)
    tensors = {**graph.tensors, **node.attrs["group_tensors"]} if node.attrs.get("group_tensors") else graph.tensors
    return Graph(graph.name, [*graph.nodes[:i], node, *graph.nodes[j + 1:]], tensors, graph.inputs,
                 graph.outputs, graph.functions, graph.info)


WHOLE = 1 << 40  # a float layer's kernel on its whole tensors, without a budget: the one its band calls take


def _choose_on(node: Node, graph: Graph, kernels: NodeKernels, budget: int, least: bool,
               kernel: str | None) -> KernelChoice | None:
    """choose among the node's candidates that apply on `graph`'s shapes (a band's) and, given `kernel`, run
    that C function; None where none does."""
    ok = tuple(k for k in kernels.candidates if k.applies_on(node, graph, kernels.traits)
               and (kernel is None or k.kernel == kernel))
    if not ok:
        return None
    for room in (budget, WHOLE):  # a kernel kept for its results may need more than the budget leaves
        try:
            return choose(node, graph, NodeKernels(kernels.op, ok, kernels.traits), room, least)
        except AssertionError:
            continue
    return None


def slice_part(n: Node, g: Graph) -> list[int] | None:
    """[byte offset] of a Slice's output in its input when it is one contiguous block of it (steps 1, one
    axis cut, every axis before it of size 1), else None."""
    x, y = g.tensors[n.inputs[0]], g.tensors[n.outputs[0]]
    if any(s != 1 for s in n.attrs["steps"]) or y.size == 0:
        return None
    cut = [k for k, (a, b) in enumerate(zip(x.shape, y.shape, strict=True)) if a != b]
    if len(cut) > 1 or (cut and math.prod(x.shape[:cut[0]]) != 1):
        return None
    k = cut[0] if cut else 0
    return [n.attrs["starts"][k] * math.prod(x.shape[k + 1:]) * x.itemsize]


def op_memory(selection: Selection) -> OpMemory:
    """The planner's view of the selected kernels."""

    def is_view(n: Node) -> bool:
        op = selection[n.name].op
        return bool(op and op.view)

    def inplace_input(n: Node, g: Graph) -> int | None:
        op = selection[n.name].op
        if op is None or op.inplace is None or op.inplace >= len(n.inputs):
            return None
        src, dst = g.tensors[n.inputs[op.inplace]], g.tensors[n.outputs[0]]
        same = src.shape == dst.shape or (op.inplace_reordered and src.nbytes == dst.nbytes)
        return op.inplace if same and src.dtype == dst.dtype else None

    def overwrites(n: Node, g: Graph, t: str) -> bool:
        op = selection[n.name].op
        if op is None or n.inputs.count(t) != 1 or not n.outputs:
            return False
        if not (op.inplace_any or op.inplace == n.inputs.index(t)):
            return False
        src, dst = g.tensors[t], g.tensors[n.outputs[0]]
        return src.shape == dst.shape and src.dtype == dst.dtype

    def inplace_inputs(n: Node, g: Graph) -> tuple[int, ...]:
        op = selection[n.name].op
        if op is None or not n.outputs or not n.outputs[0]:
            return ()
        dst = g.tensors[n.outputs[0]]
        return tuple(i for i in op.budget_inplace if i < len(n.inputs) and n.inputs[i]
                     and g.tensors[n.inputs[i]].shape == dst.shape and g.tensors[n.inputs[i]].dtype == dst.dtype)

    overlaps: dict[tuple[int, int], tuple[Node, Graph, int | None]] = {}

    def overlap(n: Node, g: Graph) -> int | None:
        """The op's overlap, remembered as the fits are (below): a RAM budget's every plan asks it of each node."""
        hit = overlaps.get((id(n), id(g)))
        if hit is None or hit[0] is not n or hit[1] is not g:
            op = selection[n.name].op
            hit = overlaps[id(n), id(g)] = (n, g, op.overlap(n, g) if op is not None and op.overlap is not None
                                            else None)
        return hit[2]

    def rows_at_run_time(n: Node, g: Graph) -> bool:
        """It reads rows known only at run time (aot/frontend/onnx/bounded.py): its emitter moves them."""
        return any(t in g.info.extent_root for t in [*n.inputs, *n.outputs] if t)

    def slices(n: Node, g: Graph) -> list[int] | None:
        if n.op != "Concat" or not n.inputs or rows_at_run_time(n, g):  # joined rows are packed, not in place
            return None
        out = g.tensors[n.outputs[0]]
        if math.prod(out.shape[:n.attrs["axis"]]) != 1:  # slices along an inner axis are not contiguous
            return None
        sizes = [g.tensors[i].nbytes for i in n.inputs]
        return [sum(sizes[:k]) for k in range(len(sizes))]

    def parts(n: Node, g: Graph) -> list[int] | None:
        if rows_at_run_time(n, g):
            return None
        if n.op == "Slice":
            return slice_part(n, g)
        if n.op != "Split" or not n.outputs or not all(n.outputs):
            return None
        x = g.tensors[n.inputs[0]]
        if math.prod(x.shape[:n.attrs["axis"]]) != 1:  # parts along an inner axis are not contiguous
            return None
        sizes = [g.tensors[o].nbytes for o in n.outputs]
        return [sum(sizes[:k]) for k in range(len(sizes))]

    # choose's answers, remembered: a RAM budget's search asks each node's fit at the same spare bytes again and
    # again (VWW at 30,200 B: 539,598 asks, 94,852 distinct). The objects asked about are kept with each answer, so
    # an id reused by a later object never finds another's.
    fits: dict[tuple[int, int, int, int, bool], tuple[Node, Graph, NodeKernels, KernelChoice]] = {}

    def fit(n: Node, g: Graph, budget: int, least: bool = False) -> KernelChoice:
        kernels = selection[n.name]
        key = (id(n), id(g), id(kernels), budget, least)
        hit = fits.get(key)
        if hit is None or hit[0] is not n or hit[1] is not g or hit[2] is not kernels:
            hit = fits[key] = (n, g, kernels, choose(n, g, kernels, budget, least))
        return hit[3]

    return OpMemory(is_view, inplace_input, fit, slices, parts, overwrites, inplace_inputs, overlap,
                    lambda n, g, budget: fit(n, g, budget, least=True))
