"""Bounded data-dependent shapes (issue 18): NonMaxSuppression's and NonZero's outputs, and what a
detection tail computes from them, planned at a compile-time bound and run on their extent.

A static plan cannot hold a tensor whose rows depend on the data, but it can hold its largest
form. NonMaxSuppression selects at most max_output_boxes_per_class x classes x batches rows (a
constant; boxes x classes x batches when it is read at run time and that is at most
IMPLIED_NMS_BYTES), NonZero at most its input's size; `--max-dim TENSOR:AXIS=N` sets or lowers a bound
(the kernel stops at it). The producer's output is planned at the bound along its bounded axis
and its kernel returns the rows it wrote, the *extent*.

The ops a detection tail applies to such a tensor keep its rows apart (a row of the output is made
from the same row of the input): Gather/GatherND by the selected indices, Gather and Slice along
another axis, views that keep the axis outermost (Squeeze, Unsqueeze, Reshape, Flatten), Cast and
elementwise ops whose other operands repeat along the axis, Split and Concat along another axis. Their
outputs are bounded too, with the same extent (the same *root*); the emitter runs them on the
extent's rows only. Any other reader is refused in one line that names the node.

graph.info.bounded: {tensor: axis} (shared with Loop's run-time scan outputs);
graph.info.extent_root: {tensor: the producer output whose extent it has}.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor
from aot.ir.evaluate import evaluate_node
from aot.ir.extents import PRODUCERS, REDUCE_ALL, Sym, sym_binary, sym_eval, sym_monotone, sym_tensors
from aot.ir.schemas import ELEMENTWISE_OPS

# NonMaxSuppression with max_output_boxes_per_class read at run time: every box of every class as the
# bound up to this size of the output (int64 [rows, 3]); beyond it --max-dim says how many
IMPLIED_NMS_BYTES = 64 * 1024
VIEW_OPS = ("Squeeze", "Unsqueeze", "Reshape", "Flatten", "Identity")


def _nelem(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def row_contiguous(shape: tuple[int, ...], axis: int) -> bool:
    """The axis is the outermost one that is not 1: each of its rows is one contiguous block."""
    return _nelem(shape[:axis]) == 1


class BoundedImport:
    """The bounded tensors as the import meets them, node by node (to_ir.py)."""

    def __init__(self, max_dims: dict[tuple[str, int], int]):
        self.max_dims = dict(max_dims)
        self.axis: dict[str, int] = {}
        self.root: dict[str, str] = {}
        self.used_dims: set[tuple[str, int]] = set()
        # Shape of a bounded tensor and arithmetic on it: its values (Sym) and its own (static) shape
        self.shapes: dict[str, list[Sym]] = {}
        self.sym_shape: dict[str, tuple[int, ...]] = {}
        self.pending: list[Node] = []  # RowsValue nodes to put before the node being imported
        self._tensors: dict[str, Tensor] = {}
        self._joined: dict[tuple, str] = {}  # Concat along rows: the roots it joins -> its root
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
        self._opsets, self._tensors = opsets, tensors
        if pn.op_type in PRODUCERS and pn.domain in ("", "ai.onnx"):
            return self._producer(pn, node, tensors), True
        sym = [i for i in pn.input if i in self.shapes]
        if sym:
            done = self._symbolic(pn, node, tensors, sym)
            if done is not None:
                return done
            for i in dict.fromkeys(sym):  # any other reader: the values written into a tensor at run time
                self._materialize(i, node, tensors)
        read = [i for i in pn.input if i in self.axis]
        if not read:
            return None
        if pn.op_type == "Shape" and len(pn.input) == 1:
            dims: list[Sym] = [int(d) for d in tensors[read[0]].shape]
            dims[self.axis[read[0]]] = ("rows", read[0])
            start, end = int(node.attrs.get("start", 0)), node.attrs.get("end")
            dims = dims[start:None if end is None else int(end)]
            self.shapes[pn.output[0]], self.sym_shape[pn.output[0]] = dims, (len(dims),)
            return {}, False
        if pn.op_type == "TopK" and pn.input[0] in self.axis:
            return self._topk(pn, node, tensors)
        return self._evaluate(pn, node, tensors, opsets, read), True

    def _materialize(self, name: str, node: Node, tensors: dict[str, Tensor]) -> None:
        """A RowsValue node that writes the run-time values of `name` (int64) for a reader that is
        not shape arithmetic (an If's condition, a comparison)."""
        vals, shape = self.shapes.pop(name), self.sym_shape.pop(name)
        tensors[name] = Tensor(name, shape, "int64")
        self.pending.append(Node("RowsValue", f"{name}/rows_value", [], [name], {"values": vals}))

    def _symbolic(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor],
                  sym: list[str]) -> tuple[dict[str, Tensor], bool] | None:
        """A node reading run-time integers made from extents (a Shape of bounded rows): shape
        arithmetic is followed at compile time (dropped); Reshape's target, TopK's k and
        ConstantOfShape's shape are taken from it. None: any other reader (the caller writes the
        values into a tensor for it)."""
        def vals(name: str) -> tuple[list[Sym], tuple[int, ...]] | None:
            if name in self.shapes:
                return self.shapes[name], self.sym_shape[name]
            t = tensors.get(name)
            if t is None or t.data is None or np.asarray(t.data).dtype.kind not in "iu":
                return None
            return [int(v) for v in np.asarray(t.data).reshape(-1)], tuple(t.shape)

        op, ins = pn.op_type, [vals(i) if i else None for i in pn.input]
        out = pn.output[0] if pn.output else ""

        def give(values: list[Sym], shape: tuple[int, ...]) -> tuple[dict[str, Tensor], bool]:
            self.shapes[out], self.sym_shape[out] = values, shape
            return {}, False

        if op == "Reshape" and pn.input[1] in sym and pn.input[0] not in sym:
            dims = self.shapes[pn.input[1]]
            target = np.array([d if isinstance(d, int) else -1 for d in dims], np.int64)
            if sum(not isinstance(d, int) for d in dims) > 1:
                return None
            name = f"{pn.input[1]}/rows_as_-1"
            tensors[name] = Tensor(name, target.shape, "int64", target)
            pn.input[1] = node.inputs[1] = name
            return None if pn.input[0] not in self.axis else self.infer(pn, node, tensors, self._opsets)
        if op == "TopK" and pn.input[1] in sym and pn.input[0] not in sym:
            return self._topk(pn, node, tensors)
        if op == "ConstantOfShape":
            dims = self.shapes[pn.input[0]]
            if len(dims) == 1 and not isinstance(dims[0], int) and dims[0][0] == "rows":
                return self._fill_rows(pn, node, tensors, dims[0][1])
            return None
        if any(v is None for v, i in zip(ins, pn.input, strict=True) if i):
            return None
        x, xs = ins[0]  # type: ignore[misc]
        if op in ("Identity", "Squeeze", "Unsqueeze", "Reshape", "Flatten") or \
                (op == "Cast" and int(node.attrs.get("to", 0)) in (6, 7)):
            shape = evaluate_node(pn, [np.zeros(xs, np.int64), *[None if v is None else np.asarray(
                v[0], np.int64).reshape(v[1]) for v in ins[1:]]], self._opsets)[0].shape
            return give(list(x), tuple(shape))
        if op == "Gather" and len(xs) == 1 and int(node.attrs.get("axis", 0)) in (0, -1):
            idx, ishape = ins[1]  # type: ignore[misc]
            return give([x[int(k) % len(x)] for k in idx], ishape)
        if op == "Concat" and all(len(v[1]) == 1 for v in ins if v):
            return give([d for v in ins if v for d in v[0]], (sum(len(v[0]) for v in ins if v),))
        reduce = {"ReduceMin": "min", "ReduceMax": "max", "ReduceProd": "mul", "ReduceSum": "add"}
        if op in reduce and len(pn.input) == 1 and len(xs) <= 1 and x:
            acc = x[0]
            for d in x[1:]:
                acc = sym_binary(reduce[op], acc, d)
            keep = int(node.attrs.get("keepdims", 1))
            return give([acc], (1,) * len(xs) if keep else ())
        binary = {"Min": "min", "Max": "max", "Add": "add", "Sub": "sub", "Mul": "mul"}
        if op in binary and len(ins) == 2 and ins[1] is not None:
            y, ys = ins[1]
            if len(x) == len(y) or 1 in (len(x), len(y)):
                n = max(len(x), len(y))
                res = [sym_binary(binary[op], x[k % len(x)], y[k % len(y)]) for k in range(n)]
                return give(res, xs if len(xs) >= len(ys) else ys)
        return None

    def _topk(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor]) -> tuple[dict[str, Tensor], bool]:
        """TopK whose k is made from extents (torchvision's min(300, rows)): planned at k's bound,
        its outputs a new extent (min(k, the rows it reads))."""
        if pn.input[1] in self.shapes:
            k_vals = self.shapes[pn.input[1]]
        else:
            data = tensors[pn.input[1]].data
            if data is None:
                raise AotcError("its k is computed at run time: aotc needs it constant or made from extents",
                                node=node)
            k_vals = [int(np.asarray(data).reshape(-1)[0])]
        if len(k_vals) != 1 or not sym_monotone(k_vals[0]):
            raise AotcError("its k is computed at run time from extents in a way aotc cannot bound", node=node)
        k = k_vals[0]
        bound = sym_eval(k, self._bounds(k))
        x = tensors[pn.input[0]]
        axis = int(node.attrs.get("axis", -1)) % len(x.shape)
        if pn.input[0] in self.axis and self.axis[pn.input[0]] != axis:
            raise AotcError(f"it takes the top k along axis {axis} of '{pn.input[0]}', whose rows known only at run "
                            f"time are along axis {self.axis[pn.input[0]]}", node=node)
        bound = max(1, min(bound, x.shape[axis]))
        name = f"{pn.input[1]}/bound"
        tensors[name] = Tensor(name, (1,), "int64", np.array([bound], np.int64))
        pn.input[1] = node.inputs[1] = name
        node.attrs["k_rows"] = k  # the rows it keeps: min(k, the rows it reads)
        shape = list(x.shape)
        shape[axis] = bound
        values, indices = pn.output[0], pn.output[1] if len(pn.output) > 1 else ""
        out = {values: Tensor(values, tuple(shape), x.dtype)}
        if indices:
            out[indices] = Tensor(indices, tuple(shape), "int64")
        for o in out:
            self.axis[o], self.root[o] = axis, values
        return out, True

    def _fill_rows(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor],
                   rows_of: str) -> tuple[dict[str, Tensor], bool]:
        """ConstantOfShape(Shape(rows)) (torchvision's labels): FillRows, one value per row of the extent."""
        value = node.attrs.get("value")
        arr = numpy_helper.to_array(value) if value is not None else np.zeros(1, np.float32)
        out = pn.output[0]
        bound = tensors[rows_of].shape[self.axis[rows_of]]
        node.op, node.inputs = "FillRows", [rows_of]
        node.attrs = {"value": arr.reshape(-1)[:1]}
        self.axis[out], self.root[out] = 0, self.root[rows_of]
        return {out: Tensor(out, (bound,), arr.dtype.name)}, True

    def _bounds(self, e: Sym) -> dict[str, int]:
        return {t: self._tensors[t].shape[self.axis[t]] for t in sym_tensors(e)}

    def _unique(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor]) -> dict[str, Tensor]:
        """Unique without a declared count: Y, indices and counts planned at every slice distinct, their
        rows (along the axis for Y) the count, one extent; inverse_indices has its static shape."""
        x, y = tensors[pn.input[0]], pn.output[0]
        axis = node.attrs.get("axis")
        a = 0 if axis is None else int(axis) % max(len(x.shape), 1)
        if axis is not None and _nelem(x.shape[:a]) != 1:
            raise AotcError(f"its count is not declared and its slices along axis {a} of {list(x.shape)} are not "
                            "outermost: declare the outputs' shapes", node=node)
        dim = x.size if axis is None else x.shape[a]
        bound = self._bound(y, a, dim, "", node)
        shape = (bound,) if axis is None else (*x.shape[:a], bound, *x.shape[a + 1:])
        outs = {y: Tensor(y, shape, x.dtype)}
        self.axis[y], self.root[y] = a, y
        for k, o in enumerate(pn.output[1:4], start=1):
            if o:
                outs[o] = Tensor(o, (dim,) if k == 2 else (bound,), "int64")
                if k != 2:
                    self.axis[o], self.root[o] = 0, y
        return outs

    def _producer(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor]) -> dict[str, Tensor]:
        y = pn.output[0]
        if pn.op_type == "Unique":
            return self._unique(pn, node, tensors)
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
            why = "max_output_boxes_per_class is computed at run time"
            if per_class is None:  # read at run time (the kernel reads it): each box is selected at most once a
                # class, a bound taken while its rows are small; a detector's thousands of boxes need --max-dim
                every = boxes[1] * scores[1] * scores[0]
                if every * 3 * 8 <= IMPLIED_NMS_BYTES:
                    model = every
                else:
                    why += f", and every box of every class is {every} rows"
            bound = self._bound(y, 0, model, why, node)
            shape, axis = (bound, 3), 0
        self.axis[y], self.root[y] = axis, y
        return {y: Tensor(y, shape, "int64")}

    def _evaluate(self, pn: onnx.NodeProto, node: Node, tensors: dict[str, Tensor],
                  opsets: list, read: list[str]) -> dict[str, Tensor]:
        """Run the node on zeros at the bound and at one row more: the output axis that grows is
        its bounded axis (none: it reads the tensor whole, refused but for a reduction of it all).
        Its outputs share the extent of what they read, but for the readers that make a new one
        (check_bounded decides for good): TopK, Concat and Slice along the rows, Gather of rows."""
        op, roots = pn.op_type, [self.root[i] for i in read]
        root = roots[0]
        new_root = ""
        if op == "Gather" and len(read) == 2:  # rows of the data by rows of indices: the indices' extent
            root = self.root[pn.input[1]]
        elif op == "Concat" and all(i in self.axis for i in pn.input if i):
            key = ("Concat", *roots)
            new_root = self._joined.setdefault(key, pn.output[0])
        elif op == "TopK" and pn.input[0] in self.axis:
            new_root = pn.output[0]
        elif op == "Slice" and pn.input[0] in self.axis:
            x = tensors[pn.input[0]]
            a = self.axis[pn.input[0]]
            res = evaluate_node(pn, [np.zeros(x.shape, x.dtype), *[None if not i else tensors[i].data
                                                                    for i in pn.input[1:]]], opsets)[0]
            if res.shape[a] != x.shape[a]:  # keep[:300]: a new extent, min(300, rows)
                o = pn.output[0]
                self.axis[o], self.root[o] = a, o
                return {o: Tensor(o, tuple(res.shape), x.dtype)}
        elif len(set(roots)) > 1:
            raise AotcError(f"it reads tensors with different run-time extents ({', '.join(read)}), which aotc "
                            "does not compile", node=node)
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
        out: dict[str, Tensor] = {}
        for o, a, b in zip(pn.output, results[0], results[1], strict=False):
            if not o:
                continue
            grew = [k for k, (x, y) in enumerate(zip(a.shape, b.shape, strict=False)) if x != y]
            if op in REDUCE_ALL and len(a.shape) == len(b.shape) and not grew and a.size == 1:
                out[o] = Tensor(o, tuple(int(d) for d in a.shape), np.dtype(a.dtype).name)  # max of all the rows
                continue
            if len(a.shape) != len(b.shape) or len(grew) != 1:
                raise AotcError(f"it reads a tensor whose rows are known only at run time "
                                f"({', '.join(i for i in pn.input if i in self.axis)}) as a whole (its output '{o}' "
                                "does not follow those rows), which aotc does not compile", node=node)
            out[o] = Tensor(o, tuple(int(d) for d in a.shape), np.dtype(a.dtype).name)
            self.axis[o], self.root[o] = grew[0], new_root or root
        return out

    def if_outputs(self, bounded: dict[str, int]) -> None:
        """An If whose branches give an output different rows (an empty tensor or a bounded one):
        a new extent, set by the branch that runs."""
        for o, a in bounded.items():
            self.axis[o], self.root[o] = a, o

    def finish(self, graph: Graph) -> None:
        unused = set(self.max_dims) - self.used_dims
        if unused:
            name, axis = sorted(unused)[0]
            raise AotcError(f"--max-dim {name}:{axis}: '{name}' is not a tensor whose rows depend on the data "
                            f"along axis {axis} (NonMaxSuppression's, NonZero's and an undeclared Unique's outputs "
                            "are)")
        if self.axis:
            graph.info.bounded.update(self.axis)
            graph.info.extent_root.update(self.root)


def _reason(node: Node, graph: Graph, axis: dict[str, int], root: dict[str, str],
            joined: dict[tuple, str]) -> str | None:
    """Why `node` cannot run on the extent of the bounded tensors it reads (None: it can); sets
    the bounded axis and root of its outputs."""

    t = graph.tensors
    read = [i for i in node.inputs if i in axis]
    ins = [i for i in node.inputs if i]
    r = root[read[0]]
    outs = [o for o in node.outputs if o]
    op = node.op
    if op not in ("Gather", "Concat") and any(root[i] != r for i in read):
        return f"it reads tensors with different run-time extents ({', '.join(read)})"

    def out_axis(a: int) -> str | None:
        for o in outs:
            if not row_contiguous(t[o].shape, a) or a >= len(t[o].shape):
                return f"its output '{o}' {list(t[o].shape)} would not have the run-time rows outermost"
            axis[o], root[o] = a, r
        return None

    first = node.inputs[0]
    if op in VIEW_OPS or op == "Cast" or op in ELEMENTWISE_OPS:
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
                k = len(t[i].shape) - len(oshape) + ka
                if op not in VIEW_OPS and t[i].shape != t[read[0]].shape and (
                        k != axis[i] or not row_contiguous(t[i].shape, k)):
                    return f"its inputs '{i}' and '{read[0]}' do not have their run-time rows on one axis"
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
        if data in axis and idx in axis:  # rows of the data (the kept ones) by indices into its extent
            if g_axis != axis[data] or not row_contiguous(t[data].shape, g_axis):
                return f"it gathers '{data}' along an axis other than its run-time rows"
            if not row_contiguous(t[idx].shape, axis[idx]) or t[idx].dtype not in ("int64", "int32"):
                return f"its indices '{idx}' do not have the run-time rows outermost"
            r = root[idx]
            return out_axis(g_axis + axis[idx])
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
        if node.attrs["starts"][a] != 0 or node.attrs["steps"][a] != 1:
            return f"it slices the run-time rows of '{first}' other than from the first, one by one"
        if t[outs[0]].shape[a] != t[first].shape[a]:  # keep[:300]: min(300, rows), a new extent
            if not row_contiguous(t[first].shape, a):
                return f"its input '{first}' does not have the run-time rows outermost"
            r = outs[0]
        return out_axis(a)
    if op == "FillRows":
        return out_axis(0)
    if op == "ExactRows":  # a declared row count (pin_declared_rows): static from here on
        return None
    if op in REDUCE_ALL:  # the max over every row written (torchvision's boxes.max())
        if _nelem(t[outs[0]].shape) != 1 or t[first].dtype != "float32":
            return "it reduces the run-time rows along some axes only (or not float32)"
        if not row_contiguous(t[first].shape, axis[first]):
            return f"its input '{first}' does not have the run-time rows outermost"
        return None
    if op == "TopK":
        a = int(node.attrs.get("axis", -1)) % len(t[first].shape)
        if a != axis[first] or not row_contiguous(t[first].shape, a):
            return f"it takes the top k of '{first}' along an axis other than its run-time rows"
        r = outs[0]
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
        if int(node.attrs.get("axis", 0)) % len(t[first].shape) == a:  # torch.cat of per-class results
            if any(axis[i] != a or not row_contiguous(t[i].shape, a) for i in ins):
                return "it joins along run-time rows that are not each input's outermost axis"
            r = joined.setdefault(tuple(root[i] for i in ins), outs[0])  # same extents joined: same extent
            return out_axis(a)
        if any(root[i] != r for i in ins):
            return f"it reads tensors with different run-time extents ({', '.join(read)})"
        return out_axis(a)
    if op == "Transpose":  # NonZero's [rank, rows] to [rows, rank]
        perm = list(node.attrs.get("perm", [1, 0]))
        if len(t[first].shape) == 2 and perm == [1, 0] and axis[first] == 1:
            axis[outs[0]], root[outs[0]] = 0, r
            return None
        return f"it transposes a tensor whose rows are known only at run time (perm {perm})"
    return f"{op} cannot read '{read[0]}', whose rows are known only at run time"


def pin_declared_rows(graph: Graph, name: str, dtype: str, dims: list[int | str | None]) -> bool:
    """A graph output whose rows depend on the data but whose declaration fixes how many (ONNX's
    NonMaxSuppression node tests declare the rows their data selects): the output gets the declared
    shape, copied from the bounded tensor by an ExactRows node, and a run whose data gives another
    count returns AOTC_ERR_SHAPE. False (nothing changed) when the declaration is not such a count."""
    t = graph.tensors[name]
    axis = graph.info.bounded.get(name)
    if axis is None or name not in graph.outputs or name not in graph.info.extent_root or dtype != t.dtype \
            or len(dims) != len(t.shape):
        return False
    rows = dims[axis]
    if not isinstance(rows, int) or not 0 < rows < t.shape[axis] or any(
            isinstance(d, int) and d != s for k, (d, s) in enumerate(zip(dims, t.shape, strict=True)) if k != axis):
        return False
    inner = f"{name}_bounded"
    while inner in graph.tensors:
        inner += "_"
    for node in graph.nodes:
        node.inputs = [inner if i == name else i for i in node.inputs]
        node.outputs = [inner if o == name else o for o in node.outputs]
    info = graph.info
    info.bounded = {(inner if k == name else k): a for k, a in info.bounded.items()}
    info.extent_root = {(inner if k == name else k): (inner if r == name else r) for k, r in info.extent_root.items()}
    graph.tensors[inner] = Tensor(inner, t.shape, t.dtype)
    graph.tensors[name] = Tensor(name, t.shape[:axis] + (rows,) + t.shape[axis + 1:], t.dtype)
    graph.nodes.append(Node("ExactRows", f"{name}_exact_rows", [inner], [name]))
    return True


def _check_nms(node: Node, graph: Graph, axis: dict[str, int], root: dict[str, str]) -> str | None:
    """NonMaxSuppression over boxes whose rows are known at run time (torchvision's batched_nms):
    one batch, one class, boxes and scores of one extent."""
    t = graph.tensors
    boxes, scores = node.inputs[:2]
    if boxes not in axis and scores not in axis:
        return None
    if boxes not in axis or scores not in axis or root[boxes] != root[scores]:
        return "its boxes and scores do not have the same run-time rows"
    if axis[boxes] != 1 or axis[scores] != 2 or t[scores].shape[:2] != (1, 1):
        return "its run-time rows are not the boxes of one batch and one class"
    return None


def check_bounded(graph: Graph) -> None:
    """Every reader of a bounded tensor runs on its extent (else one line naming the node); the
    bounded axes and roots of what they compute are (re)derived, since passes may rename."""
    bounded = graph.info.bounded
    roots = graph.info.extent_root
    axis = {k: v for k, v in bounded.items() if k in roots and roots[k] == k}
    root = {k: k for k in axis}
    joined: dict[tuple, str] = {}
    in_loop = 0
    t = graph.tensors
    for node in graph.nodes:
        in_loop += (node.op == "LoopBegin") - (node.op == "LoopEnd")
        if node.op == "Unique" and node.outputs[0] not in bounded:
            continue  # its count declared: not bounded
        if node.op in PRODUCERS:
            if in_loop:  # its rows would change every step
                raise AotcError(f"{node.op} inside a Loop body is not supported (its rows are known only at "
                                "run time): move it after the loop", node=node)
            y = node.outputs[0]
            axis[y], root[y] = (1 if node.op == "NonZero" else bounded[y] if node.op == "Unique" else 0), y
            for k, o in enumerate(node.outputs[1:4], start=1):  # Unique's indices and counts: Y's rows
                if node.op == "Unique" and o and k != 2:
                    axis[o], root[o] = 0, y
            reason = _check_nms(node, graph, axis, root) if node.op == "NonMaxSuppression" else None
        elif node.op in ("IfElse", "IfEnd"):
            reason = None
            n = len(node.outputs)
            for k, res in enumerate(node.inputs[n:]):
                out = node.outputs[k]
                if res in axis and out not in axis and node.op == "IfEnd":
                    reason = f"its branch result '{res}' has run-time rows but the If output does not"
            if node.op == "IfEnd":
                for o, a in node.attrs.get("bounded", {}).items():
                    axis[o], root[o] = a, o
        elif node.op == "RowsValue" or not any(i in axis for i in node.inputs if i):
            continue
        elif node.op in ("LoopBegin", "LoopEnd", "Call", "IfBegin"):
            reason = "a loop, a branch condition or a vendor function reads it"
        else:
            reason = _reason(node, graph, axis, root, joined)
        if reason:
            read = next((i for i in node.inputs if i in axis), node.inputs[0])
            raise AotcError(f"it reads '{read}', whose rows are known only at run time (at most "
                            f"{t[read].shape[axis[read]] if read in axis else '?'}), and {reason}: aotc runs only "
                            "the ops of a detection tail on such rows (Gather, GatherND, Slice, views, Cast, "
                            "elementwise, Split, Concat, TopK, NonMaxSuppression, a reduction of all of them)",
                            node=node)
    loop_bounded = {k: v for k, v in bounded.items() if k not in roots}
    graph.info.bounded = {**loop_bounded, **axis}
    graph.info.extent_root = root


__all__ = ["BoundedImport", "check_bounded", "row_contiguous"]
