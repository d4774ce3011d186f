"""Host C for one graph: weights, params, tensor pointers into the arena, one call per node."""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np

from aot.csource.format import C_TYPES, CNames, c_comment
from aot.csource.tap import c_tap
from aot.csource.weights import StoredArray, WeightStore
from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor
from aot.ir.extents import PRODUCERS, REDUCE_ALL
from aot.kernels.base import KernelChoice, NodeContext
from aot.plan import ALIGNMENT, Plan
from aot.plan.pools import pool_array, pool_at
from aot.select import Selection
from aot.vendor.base import Artifact

DL_DTYPES = {
    "float32": ("kDLFloat", 32), "float64": ("kDLFloat", 64), "int8": ("kDLInt", 8), "int16": ("kDLInt", 16),
    "int32": ("kDLInt", 32), "int64": ("kDLInt", 64), "uint8": ("kDLUInt", 8), "bool": ("kDLBool", 8),
    "uint16": ("kDLUInt", 16), "uint32": ("kDLUInt", 32), "uint64": ("kDLUInt", 64),
    "float16": ("kDLFloat", 16), "bfloat16": ("kDLBfloat", 16),
    # 2- and 4-bit integers: one per byte (its low bits), so the DLTensor says 8 bits of storage
    "int4": ("kDLInt", 8), "uint4": ("kDLUInt", 8), "int2": ("kDLInt", 8), "uint2": ("kDLUInt", 8),
    "float8_e4m3fn": ("kDLFloat", 8), "float8_e4m3fnuz": ("kDLFloat", 8), "float8_e5m2": ("kDLFloat", 8),
    "float8_e5m2fnuz": ("kDLFloat", 8), "float4_e2m1fn": ("kDLFloat", 8), "float8_e8m0fnu": ("kDLFloat", 8),
}

def _state_copies(node: Node, pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (new value, state) copies at a Loop's end, ordered so that a state another copy reads
    (a carried value whose new value is another's old one) is read before it is written."""
    todo = [(s, d) for s, d in pairs if s != d]
    done: list[tuple[str, str]] = []
    while todo:
        ready = [(s, d) for s, d in todo if not any(s2 == d for s2, d2 in todo if d2 != d)]
        if not ready:
            raise AotcError(f"its carried values {', '.join(d for _, d in todo)} take each other's old values in a "
                            "cycle, which aotc does not compile yet", node=node)
        done += ready
        todo = [p for p in todo if p not in ready]
    return done


_POISON_MACROS = """/* Rows of a tensor past its run-time extent: under AddressSanitizer they are poisoned while the
 * tensor lives, so a kernel that read or wrote them would be reported; nothing otherwise. */
#if defined(__SANITIZE_ADDRESS__)
#define AOTC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AOTC_ASAN 1
#endif
#endif
#if defined(AOTC_ASAN)
#include <sanitizer/asan_interface.h>
#define AOTC_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define AOTC_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define AOTC_POISON(p, n) ((void)(p), (void)(n))
#define AOTC_UNPOISON(p, n) ((void)(p), (void)(n))
#endif
#define AOTC_MIN_I64(a, b) ((a) < (b) ? (a) : (b))
#define AOTC_MAX_I64(a, b) ((a) > (b) ? (a) : (b))"""


class _RowView:
    """The emitter as an op's emitter sees it inside the loop over a bounded tensor's rows: each
    bounded tensor of the node one row long, its pointer at row aotc_row."""

    def __init__(self, em: ModelEmitter, node: Node):
        self.em = em
        tensors = dict(em.graph.tensors)
        self.rows: dict[str, int] = {}
        for t in (t for t in [*node.inputs, *node.outputs] if t and t in em.bounded_axis):
            full, a = em.graph.tensors[t], em.bounded_axis[t]
            shape = list(full.shape)
            shape[a] = 1
            tensors[t] = Tensor(t, tuple(shape), full.dtype)
            self.rows[t] = int(np.prod(full.shape[a + 1:], dtype=np.int64))
        g = em.graph
        self.graph = Graph(g.name, g.nodes, tensors, g.inputs, g.outputs, g.functions, g.info)

    @property
    def choices(self) -> dict[str, KernelChoice]:
        return self.em.choices

    def pointer(self, tensor: str) -> str:
        p = self.em.pointer(tensor)
        return f"({p} + (size_t)aotc_row * {self.rows[tensor]}u)" if tensor in self.rows else p

    def scratch_pointer(self, node: Node, ctype: str) -> str:
        return self.em.scratch_pointer(node, ctype)

    def declare_params(self, node: Node, ctype: str, fields: dict[str, str], comment: str) -> str:
        return self.em.declare_params(node, ctype, fields, comment + " (one row)" if comment else "one row")

    def declare_derived(self, node: Node, suffix: str, values: np.ndarray, comment: str) -> str:
        return self.em.declare_derived(node, suffix, values, comment)

    def line(self, text: str) -> None:
        self.em.line("    " + text)

    def written_in_place(self, part: str, whole: str, byte_offset: int) -> bool:
        return False  # rows are copied one by one: nothing is planned in place inside them

    def spare_slots(self, node: Node, tensor: str) -> tuple[int, int, int] | None:
        return None  # a row of a bounded tensor: no whole slot to lend

    def extent_var(self, tensor: str) -> str:
        return self.em.extent_var(tensor)


class ModelEmitter:
    """Builds the text pieces of <name>.c for one graph."""

    def __init__(self, graph: Graph, name: str, selection: Selection, plan: Plan,
                 artifacts: dict[str, Artifact] | None = None, separate_weights: bool = False,
                 paths_left_out: tuple[str, ...] = (), helium: bool = False):
        self.graph = graph
        # the M-profile kernel paths the bundle does not compile (aot/kernels/dsp_paths.py left_out), and whether
        # Helium's kernels take the layers first (the M55): a node's params need not carry what only paths the
        # bundle does not run read
        self.paths_left_out = paths_left_out
        self.helium = helium
        self.name = name
        self.separate_weights = separate_weights  # --separate-weights: every constant in the unlinked blob
        self.artifacts = artifacts or {}
        self.ops = {n: k.op for n, k in selection.items() if k.op is not None}
        self.plan = plan
        self.families: set[str] = {f for op in self.ops.values() for f in (op.family, *op.needs)}
        self.decls: list[str] = []
        self.body: list[str] = []
        self.depth = 0  # C blocks open around the next line (loops, branches): its indent
        self.used: dict[str, None] = {}  # tensors referenced by the entry point, in first-use order
        self.used_consts: dict[str, None] = {}  # constants the emitted code refers to
        self.scratch_vars: dict[str, tuple[str, str]] = {}  # node -> (C name, type) of its scratch block
        self.weights = WeightStore(name)  # filled by emit_nodes(), once the used constants are known
        # Every identifier made from an ONNX name, in one scope (aot/csource/names.py): none may be
        # one of the bundle's own (<name>_run, <name>_weights, a vendor function's symbol, ...).
        self.names = CNames(prefixes=(f"{name}_",))
        self.fields = CNames(fold_case=True)  # struct fields of the I/O (also in upper-case macros)
        for t in dict.fromkeys([*graph.inputs, *graph.outputs]):
            self.fields.name(t, t)
        self.derived: dict[str, StoredArray] = {}
        self.last_read: dict[str, int] | None = None  # bounded tensor -> index of its last reader
        # tensors whose rows along an axis are known only at run time (aot/frontend/onnx/bounded.py): the
        # producer's output each takes its extent from
        self.extent_root: dict[str, str] = graph.info.extent_root
        self.bounded_axis: dict[str, int] = {t: a for t, a in graph.info.bounded.items()
                                             if t in self.extent_root}

    @property
    def choices(self) -> dict[str, KernelChoice]:
        """The kernel the plan kept for each node."""
        return self.plan.choices

    # --- naming ---------------------------------------------------------------
    def ident(self, tensor: str) -> str:
        """Unique C identifier for a tensor: t_<name> for data, w_<name> for constants."""
        prefix = "w_" if self.graph.tensors[tensor].is_const else "t_"
        return self.names.name(("tensor", tensor), tensor, prefix)

    def pointer(self, tensor: str) -> str:
        if tensor not in self.graph.tensors:
            raise KeyError(tensor)
        if self.graph.tensors[tensor].is_const:
            self.used_consts[tensor] = None
            return self.ident(tensor)
        if tensor in self.plan.aliases:  # a view of an input: declare what it aliases first
            self.pointer(self.plan.aliases[tensor])
        self.used[tensor] = None
        return self.ident(tensor)

    def scratch_pointer(self, node: Node, ctype: str) -> str:
        """The node's scratch block, declared once with its name and size, or NULL if it has none."""
        if node.name not in self.plan.scratch:
            return "NULL"
        if node.name not in self.scratch_vars:
            self.scratch_vars[node.name] = (self.names.fresh(node.name, "scratch_"), ctype)
        var, declared = self.scratch_vars[node.name]
        return var if declared == ctype else f"({ctype} *){var}"

    # --- declarations -----------------------------------------------------------
    def declare_params(self, node: Node, ctype: str, fields: dict[str, str], comment: str) -> str:
        var = self.names.fresh(node.name, "p_")
        body = ",\n".join(f"    .{k} = {v}" for k, v in fields.items())
        note = f"/* {c_comment(comment)} */\n" if comment else ""
        self.decls.append(f"{note}static const {ctype} {var} = {{\n{body},\n}};")
        return f"&{var}"

    def declare_derived(self, node: Node, suffix: str, values: np.ndarray, comment: str) -> str:
        var = self.names.fresh(f"{node.name}_{suffix}", "w_")
        self.derived[var] = StoredArray(var, np.asarray(values, order="C"), comment)
        return var

    def line(self, text: str) -> None:
        pad = "    " * self.depth
        self.body.append("\n".join(pad + t if t else t for t in text.split("\n")) if pad else text)

    # --- weights ----------------------------------------------------------------
    def _store_weights(self) -> WeightStore:
        """Every constant the code reads, through the weight store vendors use too (one blob policy)."""
        store = WeightStore(self.name, link_file=f"{self.name}_weights.S", separate=self.separate_weights)
        # arrays whose address a static initializer takes (a kernel's parameter table): printed with the code
        # even when the weights are apart from it (--separate-weights), as that address must be a constant
        in_code = set(re.findall(r"\b\w+\b", "\n".join(self.decls))) if self.separate_weights else set()
        for t in self.used_consts:  # only what the code uses: emitters may read derived copies instead
            tensor = self.graph.tensors[t]
            shape = ",".join(map(str, tensor.shape))
            ident = store.add(self.ident(t), np.asarray(tensor.data, dtype=tensor.dtype, order="C"),
                              f'initializer "{c_comment(t)}": {tensor.dtype}[{shape}]',
                              in_code=self.ident(t) in in_code)
            assert ident == self.ident(t), (ident, t)
        for var in list(self.derived):  # each let go once in the store's buffer: never all twice at once
            a = self.derived.pop(var)
            assert store.add(a.ident, a.data, a.comment, in_code=a.ident in in_code) == a.ident
            del a
        return store

    def weight_decls(self) -> list[str]:
        return self.weights.declarations()

    # --- entry point ----------------------------------------------------------------
    def emit_nodes(self) -> None:
        loops: list[str] = []  # the C counters of the loops open at this node, outermost first
        if self.bounded_axis:
            self.decls.append(_POISON_MACROS)
        for index, node in enumerate(self.graph.nodes):
            if node.op == "LoopBegin":
                loops.append(self._emit_loop_begin(index, node, len(loops)))
                continue
            if node.op == "LoopEnd":
                self._emit_loop_end(index, node, loops.pop())
                if not loops:  # an inner loop's results are rewritten every step of the outer one
                    self._emit_taps(node)
                continue
            if node.op in ("IfBegin", "IfElse", "IfEnd"):
                self._emit_branch_marker(index, node)
                if node.op == "IfEnd" and not loops:
                    self._emit_taps(node)
                if not loops:
                    self._poison_rows(index, node)
                continue
            if loops and node.op == "Call":  # a vendor function in a loop body: called every step
                self._emit_call(index, node)
                continue
            if loops:  # a body's values are rewritten every step: no taps there
                op = self.ops[node.name]
                self.line("")
                self.line(f'/* node {index}: {node.op} "{c_comment(node.name)}" [host, in a loop] */')
                if not (op.view and self._shares_storage(node.outputs[0], node.inputs[0])):
                    op.emit(NodeContext(self, node, index))
                continue
            if node.op == "Call":
                self._emit_call(index, node)
                self._emit_taps(node)
                continue
            op = self.ops[node.name]
            ins = ", ".join(i for i in node.inputs if i)
            outs = ", ".join(o for o in node.outputs if o)
            self.line("")
            self.line(f'/* node {index}: {node.op} "{c_comment(node.name)}" [host]: '
                      f"{c_comment(ins)} -> {c_comment(outs)} */")
            if op.view and self._shares_storage(node.outputs[0], node.inputs[0]):
                self.line("/* view: same bytes, no copy */")
            elif node.op not in PRODUCERS and any(i in self.bounded_axis for i in node.inputs if i):
                self._emit_on_extent(index, node)
            else:
                op.emit(NodeContext(self, node, index))
            self._emit_taps(node)
            self._poison_rows(index, node)
        for o in self.plan.copied_outputs:  # outputs that no node writes: constants
            self.line("")
            self.line(f'/* graph output "{c_comment(o)}" is a copy of a constant */')
            slot, nbytes = self.plan.output_offsets[o], self.graph.tensors[o].nbytes
            self.line(f"memcpy(a + {slot}u, {self.pointer(o)}, {nbytes}u);")
        self.weights = self._store_weights()

    def _emit_loop_begin(self, index: int, node: Node, depth: int) -> str:
        """A Loop's start (aot/frontend/onnx/loops.py): each carried value's state from its initial value,
        then the C loop, whose first statement writes the iteration number where the body reads it.
        A run-time condition: the loop runs while it holds, at most trip_count (M) times."""
        g, nc, a = self.graph, node.attrs["n_carried"], node.attrs
        states, iter_t = node.outputs[:nc], node.outputs[nc]
        steps = f"at most {a['trip_count']} steps, while its condition holds" if a["runtime"] else \
            f"{a['trip_count']} steps"
        self.line("")
        self.line(f'/* node {index}: Loop "{c_comment(a["loop"])}", {steps}: '
                  f"{c_comment(', '.join(node.inputs))} -> {c_comment(', '.join(states))} */")
        if a.get("check"):  # M read at run time (and the initial condition): they must give the compiled count
            m, cond = node.inputs[len(node.inputs) - a["check"]], node.inputs[len(node.inputs) - a["check"] + 1:]
            runs = f" || !{self.pointer(cond[0])}[0]" if cond else ""
            self.line(f"if ({self.pointer(m)}[0] != INT64_C({a['trip_count']}){runs})")
            self.line("    return AOTC_ERR_SHAPE; /* its steps differ from the scan outputs' declared rows */")
        for src, dst in zip(node.inputs, states, strict=False):
            self.line(f"memcpy({self.pointer(dst)}, {self.pointer(src)}, {g.tensors[dst].nbytes}u);")
        var = f"aotc_step{depth}"
        self.line("{")
        self.depth += 1
        self.line(f"int64_t {var} = 0;")
        guard = f"if ({self.pointer(node.inputs[-1])}[0]) " if a.get("cond_init") else ""
        self.line(f"{guard}for (; {var} < INT64_C({a['trip_count']}); ++{var}) {{")
        self.depth += 1
        if any(iter_t in n.inputs for n in g.nodes):
            self.line(f"{self.pointer(iter_t)}[0] = {var};")
        return var

    def _emit_loop_end(self, index: int, node: Node, var: str) -> None:
        """A Loop's end: the new carried values into their states, each scan row into its row of the
        scan output, the run-time condition tested, and the C loop closed. A scan output whose rows
        the condition decides reports them in the outputs struct (<field>_extent)."""
        g, nc, ns, a = self.graph, node.attrs["n_carried"], node.attrs["n_scan"], node.attrs
        states, bufs = node.inputs[:nc], node.inputs[nc:nc + ns]
        new, rows = node.inputs[nc + ns:nc + ns + nc], node.inputs[nc + ns + nc:nc + ns + nc + ns]
        self.line("")
        self.line(f'/* node {index}: end of Loop "{c_comment(a["loop"])}": the new carried values, '
                  "the scan rows */")
        if a["runtime"]:  # read before any state changes: the condition may be one of them
            self.line(f"const int {var}_go = {self.pointer(node.inputs[-1])}[0] != 0;")
        for src, dst, last in zip(rows, bufs, a["last_only"], strict=True):  # rows first: one may be an old state
            at = "" if last else f" + (size_t){var} * {g.tensors[src].size}u"  # last: only the last row is read
            self.line(f"memcpy({self.pointer(dst)}{at}, {self.pointer(src)}, {g.tensors[src].nbytes}u);")
        for src, dst in _state_copies(node, list(zip(new, states, strict=True))):
            if self.plan.offsets.get(src) == self.plan.offsets.get(dst) and src in self.plan.offsets:
                self.line(f"/* {c_comment(dst)}: its new value was written over it */")
                continue
            self.line(f"memcpy({self.pointer(dst)}, {self.pointer(src)}, {g.tensors[dst].nbytes}u);")
        if a["runtime"]:
            self.line(f"if (!{var}_go) {{ ++{var}; break; }}")
        self.depth -= 1
        self.line("}")
        for scan in a["scans"] if a["runtime"] else []:
            self.line(f"out->{self.extent_field(scan)} = {var};")
        self.line(f"(void){var};")
        self.depth -= 1
        self.line("}")
        for out, src in zip(node.outputs, [*states, *bufs], strict=True):
            self.pointer(out)  # the outputs are the states' and scan buffers' bytes
            if self.plan.offsets.get(out) != self.plan.offsets.get(src):
                self.line(f"memcpy({self.pointer(out)}, {self.pointer(src)}, {g.tensors[out].nbytes}u);")

    def _emit_branch_marker(self, index: int, node: Node) -> None:
        """A run-time If (aot/frontend/onnx/branches.py): `if (cond) {` at IfBegin; each branch's results
        copied into the If outputs' slots at IfElse (then) and IfEnd (else), which close the blocks."""
        g, name = self.graph, c_comment(node.attrs["if"])
        end = next((n for n in g.nodes if n.op == "IfEnd" and n.attrs["if"] == node.attrs["if"]), node)
        rows_of = {k: o for k, o in enumerate(end.outputs) if o in self.bounded_axis and self.extent_root.get(o) == o}
        if node.op == "IfBegin":
            self.line("")
            for o in rows_of.values():  # an output whose rows the branch taken decides
                self.line(f"int64_t {self.extent_var(o)} = 0; /* rows of {c_comment(o)}, set by the branch */")
            self.line(f'/* node {index}: If "{name}" on {c_comment(node.inputs[0])}, known at run time */')
            self.line(f"if ({self.pointer(node.inputs[0])}[0]) {{")
            self.depth += 1
            return
        n = len(node.outputs)
        slots, results = node.inputs[:n], node.inputs[n:]
        self.line("")
        self.line(f'/* node {index}: If "{name}": the {"then" if node.op == "IfElse" else "else"} '
                  "branch's results */")
        for k, (src, dst) in enumerate(zip(results, slots, strict=True)):
            nbytes = f"{g.tensors[dst].nbytes}u"
            if k in rows_of:  # only the rows the branch wrote: its extent, or its static rows
                out = rows_of[k]
                a = self.bounded_axis[out]
                row = int(np.prod(g.tensors[dst].shape[a + 1:], dtype=np.int64)) * g.tensors[dst].itemsize
                rows = self.extent_var(src) if src in self.bounded_axis else str(g.tensors[src].shape[a])
                self.line(f"{self.extent_var(out)} = {rows};")
                nbytes = f"(size_t){self.extent_var(out)} * {row}u"
            if self.plan.offsets.get(src) != self.plan.offsets.get(dst) or src not in self.plan.offsets:
                self.line(f"memmove({self.pointer(dst)}, {self.pointer(src)}, {nbytes});")
        self.depth -= 1
        self.line("} else {" if node.op == "IfElse" else "}")
        self.depth += node.op == "IfElse"
        for k, (out, src) in enumerate(zip(node.outputs, slots, strict=True)):
            self.pointer(out)  # the outputs are the slots' bytes
            if self.plan.offsets.get(out) != self.plan.offsets.get(src):
                nbytes = f"{g.tensors[out].nbytes}u"
                if k in rows_of:
                    a = self.bounded_axis[rows_of[k]]
                    row = int(np.prod(g.tensors[out].shape[a + 1:], dtype=np.int64)) * g.tensors[out].itemsize
                    nbytes = f"(size_t){self.extent_var(rows_of[k])} * {row}u"
                self.line(f"memcpy({self.pointer(out)}, {self.pointer(src)}, {nbytes});")

    def extent_var(self, tensor: str) -> str:
        """The C local holding the run-time rows of a bounded tensor (its producer's, which sets it)."""
        root = self.extent_root[tensor]
        return self.names.name(("extent", root), root, "rows_")

    def _emit_on_extent(self, index: int, node: Node) -> None:
        """A node reading bounded rows runs once per row written (aot/frontend/onnx/bounded.py made sure
        each output row comes from the same input rows): the op's own emitter, on one-row tensors
        whose pointers step by a row."""
        first = next(i for i in node.inputs if i in self.bounded_axis)
        rows = self.extent_var(first)
        if node.op == "Transpose":  # NonZero's [rank, bound] to [rows, rank]
            x, y = node.inputs[0], node.outputs[0]
            rank, bound = self.graph.tensors[x].shape
            self.line(f"/* on the {rows} columns written, of {bound} */")
            self.line(f"for (int64_t aotc_row = 0; aotc_row < {rows}; ++aotc_row) {{")
            self.line(f"    for (int64_t aotc_d = 0; aotc_d < {rank}; ++aotc_d) {self.pointer(y)}[aotc_row * {rank} "
                      f"+ aotc_d] = {self.pointer(x)}[aotc_d * {bound} + aotc_row];")
            self.line("}")
            return
        g, out = self.graph, node.outputs[0]
        if node.op in ("TopK", "FillRows", "ExactRows"):  # their emitters take the extents (aot/kernels/detect.py)
            self.ops[node.name].emit(NodeContext(self, node, index))
            return
        if node.op in REDUCE_ALL:
            self._emit_reduce_rows(node, first)
            return
        if out in self.bounded_axis and self.extent_root[out] == out:  # a new extent
            if node.op == "Concat":
                self._emit_concat_rows(node)
                return
            if node.op == "Slice":
                self._emit_prefix_rows(node)
                return
        if node.op == "Gather" and node.inputs[0] in self.bounded_axis and node.inputs[1] in self.bounded_axis:
            self._emit_gather_rows(node)
            return
        if node.op == "Concat" and out in self.bounded_axis and \
                self.bounded_axis[out] == int(node.attrs.get("axis", 0)) % len(g.tensors[out].shape):
            self._emit_concat_rows(node)  # the same extents joined again (boxes, scores, labels)
            return
        rows = self.extent_var(out) if out in self.bounded_axis else rows
        bound = self.graph.tensors[first].shape[self.bounded_axis[first]]
        self.line(f"/* on the {rows} rows written, of {bound} */")
        self.line(f"for (int64_t aotc_row = 0; aotc_row < {rows}; ++aotc_row) {{")
        self.ops[node.name].emit(NodeContext(_RowView(self, node), node, index))
        self.line("}")

    def _row_bytes(self, tensor: str) -> int:
        t, a = self.graph.tensors[tensor], self.bounded_axis[tensor]
        return int(np.prod(t.shape[a + 1:], dtype=np.int64)) * t.itemsize

    def _emit_concat_rows(self, node: Node) -> None:
        """torch.cat of per-class results along their rows: each input's extent after the last, the
        sum the output's extent (set here when it is a new one)."""
        out = node.outputs[0]
        ins = [i for i in node.inputs if i]
        total = " + ".join(self.extent_var(i) for i in ins)
        if self.extent_root[out] == out:
            self.line(f"const int64_t {self.extent_var(out)} = {total};")
        self.line("{")
        self.line("    uint8_t *aotc_at = (uint8_t *)" + self.pointer(out) + ";")
        for i in ins:
            self.line(f"    memcpy(aotc_at, {self.pointer(i)}, (size_t){self.extent_var(i)} * {self._row_bytes(i)}u);")
            self.line(f"    aotc_at += (size_t){self.extent_var(i)} * {self._row_bytes(i)}u;")
        self.line("    (void)aotc_at;")
        self.line("}")

    def _emit_prefix_rows(self, node: Node) -> None:
        """keep[:300]: the first rows of the extent, min(end, rows) of them (a new extent)."""
        x, out = node.inputs[0], node.outputs[0]
        bound = self.graph.tensors[out].shape[self.bounded_axis[out]]
        self.line(f"const int64_t {self.extent_var(out)} = AOTC_MIN_I64({self.extent_var(x)}, INT64_C({bound}));")
        self.line(f"memcpy({self.pointer(out)}, {self.pointer(x)}, (size_t){self.extent_var(out)} * "
                  f"{self._row_bytes(out)}u);")

    def _emit_gather_rows(self, node: Node) -> None:
        """Rows of bounded data by bounded indices (the kept ones): an index counts from the data's
        extent; one past it (never, from TopK or NonMaxSuppression) gives a row of zeros."""
        data, idx = node.inputs[:2]
        out = node.outputs[0]
        row = self._row_bytes(data)
        self.line(f"for (int64_t aotc_row = 0; aotc_row < {self.extent_var(idx)}; ++aotc_row) {{")
        self.line(f"    int64_t aotc_j = (int64_t){self.pointer(idx)}[aotc_row];")
        self.line(f"    uint8_t *aotc_to = (uint8_t *){self.pointer(out)} + (size_t)aotc_row * {row}u;")
        self.line(f"    if (aotc_j < 0) aotc_j += {self.extent_var(data)};")
        self.line(f"    if (aotc_j >= 0 && aotc_j < {self.extent_var(data)}) memcpy(aotc_to, "
                  f"(const uint8_t *){self.pointer(data)} + (size_t)aotc_j * {row}u, {row}u);")
        self.line(f"    else memset(aotc_to, 0, {row}u);")
        self.line("}")

    def _emit_reduce_rows(self, node: Node, x: str) -> None:
        """ReduceMax/Min/Sum of every element of the rows written (torchvision's boxes.max())."""
        y = node.outputs[0]
        op = node.op
        init = {"ReduceMax": "-INFINITY", "ReduceMin": "INFINITY", "ReduceSum": "0.0f"}[op]
        step = {"ReduceMax": "aotc_v > aotc_acc ? aotc_v : aotc_acc",
                "ReduceMin": "aotc_v < aotc_acc ? aotc_v : aotc_acc", "ReduceSum": "aotc_acc + aotc_v"}[op]
        n = f"(int64_t){self.extent_var(x)} * {self._row_bytes(x) // 4}"
        self.line("{")
        self.line(f"    float aotc_acc = {init};")
        self.line(f"    for (int64_t aotc_i = 0; aotc_i < {n}; ++aotc_i) {{")
        self.line(f"        const float aotc_v = {self.pointer(x)}[aotc_i];")
        self.line(f"        aotc_acc = {step};")
        self.line("    }")
        self.line(f"    {self.pointer(y)}[0] = aotc_acc;")
        self.line("}")

    def _poison_rows(self, index: int, node: Node) -> None:
        """Under AddressSanitizer, the rows of a bounded tensor past its extent are poisoned from
        its producer to its last reader (a kernel that touched them would be reported), then
        given back to the arena (later tensors may take those bytes)."""
        if not self.bounded_axis:
            return
        if self.last_read is None:
            self.last_read = {}
            for k, n in enumerate(self.graph.nodes):
                for i in n.inputs:
                    if i in self.bounded_axis:
                        self.last_read[i] = k
        for t in node.inputs:
            if t in self.bounded_axis and self.last_read.get(t) == index and t not in self.graph.outputs:
                self.line(self._rows_past(t, "AOTC_UNPOISON", whole=True))
        for t in node.outputs:
            if t in self.bounded_axis:
                self.line(self._rows_past(t, "AOTC_POISON"))
                if t not in self.last_read and t not in self.graph.outputs:
                    self.line(self._rows_past(t, "AOTC_UNPOISON", whole=True))

    @cached_property
    def read_in_place(self) -> frozenset[str]:
        """Graph inputs the nodes read from the caller's buffer, not copied into their arena slots first
        (a copy as long as the input, ~1 % of MobileNetV2 QDQ): those no other tensor's bytes meet while they
        are live (so nothing in place over them, no Concat slice), not graph outputs, states or bounded."""
        g, p = self.graph, self.plan
        if any(n.op in ("LoopBegin", "IfBegin") for n in g.nodes):  # bodies and branches: keep their plan as it is
            return frozenset()
        readers = g.consumers()
        return frozenset(t for t in g.inputs if t in p.offsets and t not in g.outputs and t not in g.info.state
                         and t not in self.bounded_axis and t not in p.aliases
                         and all(n.op != "Call" and n.name in self.ops for n in readers.get(t, []))
                         and self._alone_while_live(t))

    def _alone_while_live(self, tensor: str) -> bool:
        """True when no arena tensor but `tensor` (and its views) has bytes inside its slot before its last read."""
        p = self.plan
        own = p.buffer_of(tensor)
        if own is None or own.parent is not None or any(u != tensor and u not in p.aliases for u in own.tensors):
            return False
        lo, hi = p.offsets[tensor], p.offsets[tensor] + self.graph.tensors[tensor].nbytes
        for u, at in p.offsets.items():
            if u == tensor or u in p.aliases:
                continue
            b = p.buffer_of(u)
            end = at + self.graph.tensors[u].nbytes
            if at < hi and lo < end and (b is None or b.first <= own.last):
                return False
        return all(not (at < hi and lo < at + n) or step > own.last for at, n, step in self._scratch_spans())

    def _scratch_spans(self) -> list[tuple[int, int, int]]:
        """(offset, bytes, step) of every node's scratch block."""
        p = self.plan
        steps = {name: step for step, name in enumerate(p.steps)}
        return [(at, b.nbytes if (b := p.scratch_buffers.get(node)) is not None
                 else p.choices[node].scratch if node in p.choices else 1 << 62,
                 steps.get(node, -1)) for node, at in p.scratch.items()]

    def _rows_past(self, tensor: str, macro: str, whole: bool = False) -> str:
        """`macro(p, n)` over the bytes of `tensor` past its extent (all its bytes: `whole`)."""
        t, a = self.graph.tensors[tensor], self.bounded_axis[tensor]
        if whole:
            return f"{macro}({self.pointer(tensor)}, {t.nbytes}u);"
        outer, bound = int(np.prod(t.shape[:a], dtype=np.int64)), t.shape[a]
        row = int(np.prod(t.shape[a + 1:], dtype=np.int64)) * t.itemsize
        rows = self.extent_var(tensor)
        one = (f"{macro}((const uint8_t *){self.pointer(tensor)} + {{o}}(size_t){rows} * {row}u, "
               f"(size_t)({bound} - {rows}) * {row}u);")
        if outer == 1:
            return one.format(o="")
        return (f"for (size_t aotc_o = 0; aotc_o < {outer}u; ++aotc_o) "
                + one.format(o=f"aotc_o * {bound * row}u + "))

    def extent_field(self, tensor: str) -> str:
        """The outputs-struct field that reports how far a bounded output was written."""
        return self.fields.name(("extent", tensor), f"{self.io_field(tensor)}_extent")

    def _emit_taps(self, node: Node) -> None:
        """AOTC_TAP for each output, right after the node writes it (before a later node may reuse
        its arena bytes): nothing in a normal build, the tensor for `aotc compare` in its debug build."""
        for o in node.outputs:
            if o and o not in self.bounded_axis:  # bounded rows: only the extent is meaningful
                t = self.graph.tensors[o]
                self.line(c_tap(node.name, o, t.dtype, t.shape, self.pointer(o), t.nbytes))

    def io_copies(self) -> tuple[list[str], list[str]]:
        """Lines that copy the caller's inputs into their arena slots, and the outputs out of
        theirs, each skipped when the caller's pointer is the slot (<name>_arena_io)."""
        g = self.graph
        copy_in = [f"if (in->{self.io_field(t)} != (const void *)(a + {self.plan.offsets[t]}u)) "
                   f"memcpy(a + {self.plan.offsets[t]}u, in->{self.io_field(t)}, {g.tensors[t].nbytes}u);"
                   for t in g.inputs if t in self.plan.offsets and t not in self.read_in_place]
        copy_out = []
        for t in dict.fromkeys(g.outputs):
            at, field = self.plan.output_offsets[t], self.io_field(t)
            if t not in self.bounded_axis:
                copy_out.append(f"if (out->{field} != (void *)(a + {at}u)) memcpy(out->{field}, a + {at}u, "
                                f"{g.tensors[t].nbytes}u);")
                continue
            # the rows written, each block of them where the bound puts it: nothing past the extent is read
            tensor, axis, rows = g.tensors[t], self.bounded_axis[t], self.extent_var(t)
            outer, bound = int(np.prod(tensor.shape[:axis], dtype=np.int64)), tensor.shape[axis]
            row = int(np.prod(tensor.shape[axis + 1:], dtype=np.int64)) * tensor.itemsize
            copy_out.append(f"out->{self.extent_field(t)} = {rows};")
            copy = (f"memcpy((uint8_t *)out->{field} + {{o}}, a + {at}u + {{o}}, (size_t){rows} * {row}u);")
            if outer == 1:
                copy_out.append(f"if (out->{field} != (void *)(a + {at}u)) " + copy.format(o="0u"))
            else:
                copy_out.append(f"if (out->{field} != (void *)(a + {at}u)) for (size_t aotc_o = 0; aotc_o < {outer}u; "
                                f"++aotc_o) " + copy.format(o=f"aotc_o * {bound * row}u"))
            copy_out.append(self._rows_past(t, "AOTC_UNPOISON", whole=True))
        return copy_in, copy_out

    def _emit_call(self, index: int, node: Node) -> None:
        """A vendor function: DLTensors for its inputs and outputs, then the call (DESIGN.md's ABI)."""
        fn = self.graph.functions[node.attrs["function"]]
        sources = ", ".join(node.sources())
        self.line("")
        self.line(f'/* node {index}: function {fn.global_symbol} [{fn.compiler}]: '
                  f"{c_comment(', '.join(node.inputs))} -> {c_comment(', '.join(node.outputs))} */")
        self.line(f"/*   holds ONNX nodes: {c_comment(sources)} */")
        self.line("{")
        for kind, names in (("in", node.inputs), ("out", node.outputs)):
            for k, t in enumerate(names):
                self.line(f"    DLTensor {kind}{k} = {self._dltensor(t)};")
        ins = ", ".join(f"&in{k}" for k in range(len(node.inputs))) or "NULL"
        outs = ", ".join(f"&out{k}" for k in range(len(node.outputs)))
        self.line(f"    const DLTensor *const ins[] = {{{ins}}};")
        self.line(f"    DLTensor *const outs[] = {{{outs}}};")
        state = self.plan.state_offsets.get(fn.global_symbol)  # its persistent bytes (Artifact.state_bytes)
        tail = "" if state is None else f", (void *)(a + {state}u)"
        self.line(f"    const int32_t rc = {fn.global_symbol}(ins, outs, {self.scratch_pointer(node, 'void')}{tail});")
        self.line("    if (rc != 0) return rc;")
        self.line("}")

    def _dltensor(self, tensor: str) -> str:
        t = self.graph.tensors[tensor]
        code, bits = DL_DTYPES[t.dtype]
        shape = "NULL"
        if t.shape:
            var = self.names.get(("shape", tensor))
            if var is None:
                var = self.names.name(("shape", tensor), tensor, "s_")
                decl = f"static const int64_t {var}[{len(t.shape)}] = {{{', '.join(map(str, t.shape))}}};"
                self.decls.append(f'/* shape of "{c_comment(tensor)}" (in flash; DLTensor.shape is not const) */\n'
                                  f'{decl}')
            shape = f"(int64_t *){var}"
        return (f"{{(void *){self.pointer(tensor)}, {{kDLCPU, 0}}, {len(t.shape)}, {{{code}, {bits}, 1}}, "
                f"{shape}, NULL, 0}}")

    def _shares_storage(self, out: str, src: str) -> bool:
        return out in self.plan.aliases or self.written_in_place(out, src, 0)

    def spare_slots(self, node: Node, tensor: str) -> tuple[int, int, int] | None:
        """(its offset, its bytes, the offset of node's first output) where `tensor` is an input that `node` reads
        last, in an arena slot that holds nothing else while node runs but node's own outputs (which the plan may
        have put over it: an overlap): bytes of it that node has read for the last time are node's to reuse (a fused
        run keeps rows there, aot/kernels/tflite_bands.py). None otherwise (a graph input read in place from the
        caller's buffer, a graph output, a view, a tensor a later node reads)."""
        p, g = self.plan, self.graph
        if tensor not in p.offsets or tensor in p.aliases or tensor in g.outputs or tensor in self.read_in_place \
                or not node.outputs or node.outputs[0] not in p.offsets or p.pools or node.name not in p.steps:
            return None
        step = p.steps.index(node.name)
        if any(n.name in p.steps and p.steps.index(n.name) > step for n in g.consumers().get(tensor, [])):
            return None
        lo, hi = p.offsets[tensor], p.offsets[tensor] + g.tensors[tensor].nbytes
        mine = {tensor, *node.outputs}
        own = p.scratch_buffers.get(node.name)
        for b in [*p.buffers, *p.slices, *(s for s in p.scratch_buffers.values() if s is not own)]:
            if set(b.tensors) & mine:
                continue
            for delta, n, first, last in b.segs:
                at = b.offset + delta
                if first <= step <= last and at < hi and lo < at + n:
                    return None
        if node.name in p.scratch:  # the node's own scratch (at the plan's offset for it): apart from the slot
            at, n = p.scratch[node.name], own.nbytes if own is not None else 0
            if at < hi and lo < at + n:
                return None
        return lo, hi - lo, p.offsets[node.outputs[0]]

    def written_in_place(self, part: str, whole: str, byte_offset: int) -> bool:
        """True when the plan put tensor `part` at `byte_offset` inside `whole` (a Concat input)."""
        p = self.plan
        return part in p.offsets and whole in p.offsets and p.offsets[part] == p.offsets[whole] + byte_offset

    def io_field(self, tensor: str) -> str:
        """The struct field of a graph input or output (unique, also upper-cased in macros)."""
        return self.fields.name(tensor, tensor)

    def at(self, offset: int) -> str:
        """C for the byte at `offset` of the plan: `a + offset` in the arena, or, in a plan across memory
        pools (aot/plan/pools.py), in the pool holding it."""
        pools = self.plan.pools
        pool = pool_at(pools, offset) if pools else None
        if pool is None or pool is pools[0]:
            return f"a + {offset}u"
        return f"{pool_array(self.name, pool.name)} + {offset - pool.base}u"

    def pointer_decls(self) -> list[str]:
        """`float *t_x = ...;` for every tensor the entry point uses, with its plan."""
        g, p = self.graph, self.plan
        lines = []
        inputs, outputs = set(g.inputs), set(g.outputs)
        for t in self.used:
            tensor = g.tensors[t]
            ctype = C_TYPES[tensor.dtype]
            desc = f'"{c_comment(t)}" {tensor.dtype}[{",".join(map(str, tensor.shape))}]'
            ident = self.ident(t)
            role = "graph input" if t in inputs else "graph output" if t in outputs else ""
            if t in p.aliases:
                lines.append(f"const {ctype} *const {ident} = (const {ctype} *){self.ident(p.aliases[t])}; "
                             f"/* {desc}, view */")
            elif t in self.read_in_place:
                b = p.buffer_of(t)
                field, slot = f"in->{self.io_field(t)}", self.at(p.offsets[t])
                lines.append(f"const {ctype} *const {ident} = (const {ctype} *)((uintptr_t){field} % {ALIGNMENT}u "
                             f"== 0u ? {field} : memcpy({slot}, {field}, {tensor.nbytes}u)); "
                             f"/* {desc}, graph input read "
                             f"where the caller holds it (copied into its slot if not {ALIGNMENT}-byte aligned), "
                             f"live {b.first}..{b.last} */")
            else:
                b = p.buffer_of(t)
                const = "const " if t in inputs else ""
                lines.append(f"{const}{ctype} *const {ident} = ({const}{ctype} *)({self.at(p.offsets[t])}); "
                             f"/* {desc}{', ' + role if role else ''}, live {b.first}..{b.last} */")
        steps = {name: step for step, name in enumerate(p.steps)}
        for node, (var, ctype) in self.scratch_vars.items():
            block = p.scratch_buffers.get(node)
            what = (f"{block.nbytes} bytes of workspace for \"{c_comment(node)}\", holding tensors of its call"
                    if block is not None and not p.choices[node].scratch else
                    f"{p.choices[node].scratch} bytes of scratch for \"{c_comment(node)}\"")
            lines.append(f"{ctype} *const {var} = ({ctype} *)({self.at(p.scratch[node])}); "
                         f"/* {what} (step {steps[node]}) */")
        return lines
