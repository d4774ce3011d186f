"""What a host op is to the code generator: how to emit its call, and what the planner must know.

Each family module (elementwise.py, conv.py, ...) exports a table OPS: {onnx op: HostOp}.
An emitter receives a NodeContext: the node, C expressions for its tensors, and
ways to declare a params struct and append lines to the entry point. Shapes are
static, so everything an emitter computes (strides, loop bounds, packed
weights) is done here in Python, and the C kernel only loops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from aot.csource.format import C_TYPES, DTYPE_SUFFIX, c_comment
from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor

if TYPE_CHECKING:
    from aot.emit_c.model import ModelEmitter


NO_BUDGET_LIMIT = 1 << 62  # a scratch budget that constrains nothing


@dataclass(frozen=True)
class HostOp:
    emit: Callable[[NodeContext], None]
    family: str  # runtime_c/kernels/<family>.c and aotc_<family>.h hold the kernels
    needs: tuple[str, ...] = ()  # other kernel families its kernels call (e.g. conv needs gemm)
    dtypes: tuple[str, ...] = ("float32",)  # dtypes of input 0 the kernels take
    view: bool = False  # output is input 0 reinterpreted: no data moves
    inplace: int | None = None  # index of an input the output may overwrite (elementwise ops)
    # bytes of arena scratch during the call, given a budget (the bytes free at its step): ops
    # that can work in smaller blocks fit it; the emitter sees the same budget (ctx.scratch_budget)
    scratch: Callable[[Node, Graph, int], int] | None = None
    check: Callable[[Node, Graph], str | None] | None = None  # reason the node cannot be compiled

    def reject_reason(self, node: Node, graph: Graph) -> str | None:
        first = next((i for i in node.inputs if i), None)
        if first is not None and graph.tensors[first].dtype not in self.dtypes:
            return f"dtype {graph.tensors[first].dtype} is not supported (supported: {', '.join(self.dtypes)})"
        return self.check(node, graph) if self.check else None


class NodeContext:
    """One node's view of the emitter."""

    def __init__(self, emitter: ModelEmitter, node: Node, index: int):
        self.emitter = emitter
        self.node = node
        self.index = index
        self.graph = emitter.graph

    # --- tensors ---------------------------------------------------------------
    def tensor(self, name: str) -> Tensor:
        return self.graph.tensors[name]

    def shape(self, name: str) -> tuple[int, ...]:
        return self.graph.tensors[name].shape

    def dtype(self, name: str) -> str:
        return self.graph.tensors[name].dtype

    def const(self, name: str) -> np.ndarray | None:
        return self.graph.const(name)

    @property
    def inputs(self) -> list[str]:
        return self.node.inputs

    @property
    def outputs(self) -> list[str]:
        return self.node.outputs

    @property
    def attrs(self) -> dict:
        return self.node.attrs

    def ptr(self, name: str) -> str:
        """C expression for the data of tensor `name` (a typed pointer), or NULL if omitted."""
        if not name:
            return "NULL"
        return self.emitter.pointer(name)

    def scratch(self, ctype: str = "float") -> str:
        return self.emitter.scratch_pointer(self.node, ctype)

    @property
    def scratch_budget(self) -> int:
        """The budget the planner sized this node's scratch for (HostOp.scratch)."""
        return self.emitter.plan.scratch_budgets.get(self.node.name, NO_BUDGET_LIMIT)

    def suffix(self, name: str) -> str:
        return DTYPE_SUFFIX[self.dtype(name)]

    def ctype(self, name: str) -> str:
        return C_TYPES[self.dtype(name)]

    # --- output ---------------------------------------------------------------
    def params(self, ctype: str, fields: dict[str, str], comment: str = "") -> str:
        """Declare `static const <ctype> p_<node> = {...};` and return its address expression."""
        return self.emitter.declare_params(self.node, ctype, fields, comment)

    def const_array(self, suffix: str, values: np.ndarray, comment: str = "") -> str:
        """Declare a derived constant array (e.g. packed weights); returns its name."""
        return self.emitter.declare_derived(self.node, suffix, values, comment)

    def call(self, fn: str, *args: str) -> None:
        self.emitter.line(f"{fn}({', '.join(args)});")

    def line(self, text: str) -> None:
        self.emitter.line(text)

    def comment(self, text: str) -> None:
        self.emitter.line(f"/* {c_comment(text)} */")

    def fail(self, message: str) -> AotcError:
        return AotcError(message, node=self.node)
