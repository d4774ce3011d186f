"""Bounded data-dependent shapes (issue 18): NonMaxSuppression's and NonZero's outputs, and what a
detection tail computes from them, planned at a compile-time bound and run on their extent.

A static plan cannot hold a tensor whose rows depend on the data, but it can hold its largest
form. NonMaxSuppression selects at most max_output_boxes_per_class x classes x batches rows (a
constant), NonZero at most its input's size; `--max-dim TENSOR:AXIS=N` sets or lowers a bound
(the kernel stops at it). The producer's output is planned at the bound along its bounded axis
and its kernel returns the rows it wrote, the *extent*.

The ops a detection tail applies to such a tensor keep its rows apart (a row of the output is made
from the same row of the input): Gather/GatherND by the selected indices, Gather and Slice along
another axis, views that keep the axis outermost (Squeeze, Unsqueeze, Reshape, Flatten), Cast and
elementwise ops whose other operands repeat along the axis, Split and Concat along another axis. Their
outputs are bounded too, with the same extent (the same *root*); the emitter runs them on the
extent's rows only. Any other reader is refused in one line that names the node.

graph.meta["bounded"]: {tensor: axis} (shared with Loop's run-time scan outputs);
graph.meta["extent_root"]: {tensor: the producer output whose extent it has}.
"""

from __future__ import annotations

import numpy as np
import onnx

from aot.errors import AotcError
from aot.frontend.fold import evaluate_node
from aot.ir import Graph, Node, Tensor

PRODUCERS = ("NonMaxSuppression", "NonZero")
VIEW_OPS = ("Squeeze", "Unsqueeze", "Reshape", "Flatten", "Identity")


def _nelem(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def row_contiguous(shape: tuple[int, ...], axis: int) -> bool:
    """The axis is the outermost one that is not 1: each of its rows is one contiguous block."""
    return _nelem(shape[:axis]) == 1


class BoundedImport:
    """The bounded tensors as the import meets them, node by node (load.py's _to_ir)."""

    def __init__(self, max_dims: dict[tuple[str, int], int]):
        self.max_dims = dict(max_dims)
        self.axis: dict[str, int] = {}
        self.root: dict[str, str] = {}
        self.used_dims: set[tuple[str, int]] = set()
        self.shapes: dict[str, list[int | None]] = {}  # Shape of a bounded tensor: None at the rows
        self._opsets: list = []

    def _bound(self, out: str, axis: int, model_bound: int | None, why: str, node: Node) -> int:
        user = self.max_dims.get((out, axis))
        if user is not None:
            self.used_dims.add((out, axis))
        if model_bound is None and user is None:
            raise AotcError(f"output '{out}' has rows known only at run time and no bound ({why}): "
                            f"give one with --max-dim {out}:{axis}=N", node=node)
        bound = min(b for b in (model_bound, user) if b is not None)
        return max(bound, 1)  # a bound of 0 rows: one row planned, never written

    def infer(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor],
              opsets: list) -> tuple[dict[str, Tensor], bool] | None:
        """The outputs of `pn` at their bound when it makes or reads a bounded tensor, and whether the
        node stays (None: it does neither). A Shape of a bounded tensor that only sets a Reshape's
        target (as torch writes an index's result shape) is followed symbolically and dropped: the
        Reshape gets a constant target with -1 for the rows. Any other reader that does not keep the
        rows apart is refused."""
        self._opsets = opsets
        if pn.op_type in PRODUCERS and pn.domain in ("", "ai.onnx"):
            return self._producer(pn, node, tensors), True
        sym = [i for i in pn.input if i in self.shapes]
        if sym:
            return self._symbolic(pn, node, tensors, sym)
        read = [i for i in pn.input if i in self.axis]
        if not read:
            return None
        if pn.op_type == "Shape" and len(pn.input) == 1 and not pn.attribute:
            dims: list[int | None] = list(tensors[read[0]].shape)
            dims[self.axis[read[0]]] = None
            self.shapes[pn.output[0]] = dims
            return {}, False
        roots = {self.root[i] for i in read}
        if len(roots) > 1:
            raise AotcError(f"it reads tensors with different run-time extents ({', '.join(read)}), which aotc "
                            "does not compile", node=node)
        return self._evaluate(pn, node, tensors, opsets), True

    def _symbolic(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor],
                  sym: list[str]) -> tuple[dict[str, Tensor], bool]:
        """A node reading the shape of a bounded tensor (a vector with one run-time entry)."""
        def const(name: str) -> list[int] | None:
            t = tensors.get(name)
            return None if t is None or t.data is None else [int(v) for v in np.asarray(t.data).reshape(-1)]

        op = pn.op_type
        if op == "Concat" and all(i in self.shapes or const(i) is not None for i in pn.input):
            self.shapes[pn.output[0]] = [d for i in pn.input for d in (self.shapes.get(i) or const(i) or [])]
            return {}, False
        if op == "Reshape" and pn.input[1] in sym and pn.input[0] not in sym:
            dims = self.shapes[pn.input[1]]
            target = np.array([-1 if d is None else d for d in dims], np.int64)
            name = f"{pn.input[1]}/rows_as_-1"
            tensors[name] = Tensor(name, target.shape, "int64", target)
            pn.input[1] = node.inputs[1] = name
            return None if pn.input[0] not in self.axis else self.infer(pn, node, tensors, self._opsets)
        raise AotcError(f"it reads the shape of a tensor whose rows are known only at run time ('{sym[0]}'), "
                        "which aotc follows only into a Reshape's target (through Concat)", node=node)

    def _producer(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor]) -> dict[str, Tensor]:
        y = pn.output[0]
        if pn.op_type == "NonZero":
            x = tensors[pn.input[0]]
            bound = self._bound(y, 1, x.size, "", node)
            shape = (len(x.shape), bound)
            axis = 1
        else:
            scores = tensors[pn.input[1]].shape
            boxes = tensors[pn.input[0]].shape
            if len(scores) != 3 or len(boxes) != 3:
                raise AotcError(f"boxes {list(boxes)} and scores {list(scores)} must be 3-D", node=node)
            m = tensors[pn.input[2]].data if len(pn.input) > 2 and pn.input[2] else np.zeros(1, np.int64)
            per_class = None if m is None else min(max(int(np.asarray(m).reshape(-1)[0]), 0), boxes[1])
            model = None if per_class is None else per_class * scores[1] * scores[0]
            bound = self._bound(y, 0, model, "max_output_boxes_per_class is computed at run time", node)
            shape, axis = (bound, 3), 0
        self.axis[y], self.root[y] = axis, y
        return {y: Tensor(y, shape, "int64")}

    def _evaluate(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor],
                  opsets: list) -> dict[str, Tensor]:
        """Run the node on zeros at the bound and at one row more: the output axis that grows is
        its bounded axis (none: it reads the tensor whole, refused)."""
        results = []
        for extra in (0, 1):
            args: list[np.ndarray | None] = []
            for i in pn.input:
                if not i:
                    args.append(None)
                    continue
                t = tensors[i]
                shape = list(t.shape)
                if i in self.axis:
                    shape[self.axis[i]] += extra
                args.append(t.data if t.is_const else np.zeros(shape, t.dtype))
            try:
                results.append(evaluate_node(pn, args, opsets))
            except Exception as e:
                raise AotcError(f"it reads a tensor whose rows are known only at run time "
                                f"({', '.join(i for i in pn.input if i in self.axis)}), and its output shapes "
                                f"cannot be worked out ({str(e).splitlines()[0] if str(e) else e})", node=node) from e
        root = self.root[next(i for i in pn.input if i in self.axis)]
        out: dict[str, Tensor] = {}
        for o, a, b in zip(pn.output, results[0], results[1], strict=False):
            if not o:
                continue
            grew = [k for k, (x, y) in enumerate(zip(a.shape, b.shape, strict=False)) if x != y]
            if len(a.shape) != len(b.shape) or len(grew) != 1:
                raise AotcError(f"it reads a tensor whose rows are known only at run time "
                                f"({', '.join(i for i in pn.input if i in self.axis)}) as a whole (its output '{o}' "
                                "does not follow those rows), which aotc does not compile", node=node)
            out[o] = Tensor(o, tuple(int(d) for d in a.shape), np.dtype(a.dtype).name)
            self.axis[o], self.root[o] = grew[0], root
        return out

    def finish(self, graph: Graph) -> None:
        unused = set(self.max_dims) - self.used_dims
        if unused:
            name, axis = sorted(unused)[0]
            raise AotcError(f"--max-dim {name}:{axis}: '{name}' is not a tensor whose rows depend on the data "
                            f"along axis {axis} (NonMaxSuppression's and NonZero's outputs are)")
        if self.axis:
            graph.meta.setdefault("bounded", {}).update(self.axis)
            graph.meta.setdefault("extent_root", {}).update(self.root)


def _reason(node: Node, graph: Graph, axis: dict[str, int], root: dict[str, str]) -> str | None:
    """Why `node` cannot run on the extent of the bounded tensors it reads (None: it can); sets
    the bounded axis and root of its outputs."""
    from aot.kernels.elementwise import OPS as ELEMENTWISE

    t = graph.tensors
    read = [i for i in node.inputs if i in axis]
    ins = [i for i in node.inputs if i]
    r = root[read[0]]
    if any(root[i] != r for i in read):
        return f"it reads tensors with different run-time extents ({', '.join(read)})"
    outs = [o for o in node.outputs if o]
    op = node.op

    def out_axis(a: int) -> str | None:
        for o in outs:
            if not row_contiguous(t[o].shape, a) or a >= len(t[o].shape):
                return f"its output '{o}' {list(t[o].shape)} would not have the run-time rows outermost"
            axis[o], root[o] = a, r
        return None

    first = node.inputs[0]
    if op in VIEW_OPS or op == "Cast" or op in ELEMENTWISE:
        if not row_contiguous(t[read[0]].shape, axis[read[0]]):
            return f"its input '{read[0]}' does not have the run-time rows outermost"
        o = outs[0]
        shape_in, a = t[read[0]].shape, axis[read[0]]
        row = _nelem(shape_in[a + 1:])
        oshape = t[o].shape
        # the output's bounded axis: where the rows land, the same row size (views) or the same rank
        cands = [k for k in range(len(oshape)) if oshape[k] == shape_in[a] and row_contiguous(oshape, k)
                 and (_nelem(oshape[k + 1:]) == row or op not in VIEW_OPS)]
        if op not in VIEW_OPS:
            cands = [len(oshape) - len(shape_in) + a] if len(oshape) >= len(shape_in) else []
        if not cands:
            return f"its output '{o}' {list(oshape)} does not keep the run-time rows of '{read[0]}' outermost"
        ka = cands[0]
        for i in ins:
            if i in axis:
                if t[i].shape != t[read[0]].shape and op not in VIEW_OPS:
                    return f"its inputs '{i}' and '{read[0]}' differ in shape"
                continue
            if op in VIEW_OPS:
                continue  # a shape input
            s = t[i].shape
            k = len(s) - len(oshape) + ka
            if 0 <= k < len(s) and s[k] != 1:
                return f"its input '{i}' {list(s)} does not repeat along the run-time rows"
        return out_axis(ka)
    if op == "Gather":
        data, idx = node.inputs[:2]
        g_axis = int(node.attrs.get("axis", 0)) % max(len(t[data].shape), 1)
        if data in axis and idx in axis:
            return "it gathers a run-time tensor by run-time indices"
        if data in axis:
            if g_axis == axis[data]:
                return f"it gathers along the run-time rows of '{data}'"
            a = axis[data]
            return out_axis(a if g_axis > a else a - 1 + len(t[idx].shape))
        if not row_contiguous(t[idx].shape, axis[idx]):
            return f"its indices '{idx}' do not have the run-time rows outermost"
        return out_axis(g_axis + axis[idx])
    if op == "GatherND":
        data, idx = node.inputs[:2]
        if data in axis:
            return f"it gathers from '{data}', whose rows are known only at run time"
        if int(node.attrs.get("batch_dims", 0)) != 0 or axis[idx] >= len(t[idx].shape) - 1:
            return "its run-time rows are not the indices' outer axis (batch_dims 0)"
        return out_axis(axis[idx])
    if op == "Slice":
        a = axis[first]
        if node.attrs["starts"][a] != 0 or node.attrs["steps"][a] != 1 or t[outs[0]].shape[a] != t[first].shape[a]:
            return f"it slices the run-time rows of '{first}'"
        return out_axis(a)
    if op == "Split":  # columns apart (torchvision splits boxes into x1, y1, x2, y2)
        a = axis[first]
        if int(node.attrs.get("axis", 0)) % len(t[first].shape) == a:
            return "it splits the run-time rows"
        return out_axis(a)
    if op == "Concat":
        a = axis[first]
        if any(i not in axis for i in ins):
            return "it joins a tensor whose rows are known only at run time with one whose rows are not"
        if int(node.attrs.get("axis", 0)) % len(t[first].shape) == a:
            return "it joins along the run-time rows"
        return out_axis(a)
    if op == "Transpose":  # NonZero's [rank, rows] to [rows, rank]
        perm = list(node.attrs.get("perm", [1, 0]))
        if len(t[first].shape) == 2 and perm == [1, 0] and axis[first] == 1:
            axis[outs[0]], root[outs[0]] = 0, r
            return None
        return f"it transposes a tensor whose rows are known only at run time (perm {perm})"
    return f"{op} cannot read '{read[0]}', whose rows are known only at run time"


def check_bounded(graph: Graph) -> None:
    """Every reader of a bounded tensor runs on its extent (else one line naming the node); the
    bounded axes and roots of what they compute are (re)derived, since passes may rename."""
    bounded = graph.meta.get("bounded", {})
    roots = graph.meta.get("extent_root", {})
    for node in graph.nodes:  # one in a Loop's or If's body: its rows would change every step
        if node.op in PRODUCERS and node.outputs[0] not in roots:
            raise AotcError(f"{node.op} inside a Loop or If body is not supported (its rows are known only at "
                            "run time): move it after the loop", node=node)
    if not roots:
        return
    axis = {k: v for k, v in bounded.items() if k in roots and roots[k] == k}
    root = {k: k for k in axis}
    for node in graph.nodes:
        if node.op in PRODUCERS:
            continue
        if not any(i in axis for i in node.inputs if i):
            continue
        if node.op in ("LoopBegin", "LoopEnd", "Call"):
            reason = "a loop or a vendor function reads it"
        else:
            reason = _reason(node, graph, axis, root)
        if reason:
            read = next(i for i in node.inputs if i in axis)
            raise AotcError(f"it reads '{read}', whose rows are known only at run time (at most "
                            f"{graph.tensors[read].shape[axis[read]]}), and {reason}: aotc runs only the ops of a "
                            "detection tail on such rows (Gather, GatherND, Slice of columns, views, Cast, "
                            "elementwise, Split and Concat of columns)", node=node)
    loop_bounded = {k: v for k, v in bounded.items() if k not in roots}
    graph.meta["bounded"] = {**loop_bounded, **axis}
    graph.meta["extent_root"] = root


__all__ = ["BoundedImport", "check_bounded", "row_contiguous"]
