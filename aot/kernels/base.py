"""The kernel table's entries: what each host op's kernels are, when each applies, and how they
are written into the entry point.

Each family module (elementwise.py, conv.py, ...) exports a table OPS: {onnx op: HostOp}. A
HostOp lists its candidate kernels in order of preference (the first that applies and fits
wins: the order is the cost model, cheapest first). *select* (aot/select.py) keeps the
candidates that apply to a node on the target; *plan* (aot/plan/) sizes each node's scratch by
asking its candidates, in order, to fit the memory spare at its step, and records the
KernelChoice; *emit* (aot/emit_c/) hands that choice to the op's emitter through a
NodeContext and decides nothing. Shapes are static, so everything an emitter computes
(strides, loop bounds, packed weights) is done here in Python, and the C kernel only loops.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from aot.csource.format import C_TYPES, DTYPE_SUFFIX, c_comment
from aot.errors import AotcError
from aot.ir import Graph, Node, Tensor

NO_BUDGET_LIMIT = 1 << 62  # a scratch budget that constrains nothing


@dataclass(frozen=True)
class KernelFacts:
    """What the stages after select need to know of a kernel besides when it applies and its scratch:
    stated once, at the kernel's entry in the table (Candidate.facts), and carried on the choice the
    planner keeps (KernelChoice.facts), so that no stage keeps a list of C names of its own."""

    threaded: bool = False  # splits its work over the pool of a --threads bundle (aotc_threads.h)
    rounds_more: bool = False  # rounds more than a direct sum, past DESIGN.md's tolerance: taken only with --fast-math
    isa: str = ""  # the instruction set its path is written for (ISAS): select takes it only where the target has it
    # its C function takes a scratch pointer (None: not stated, where the op's emitter passes what each of its
    # functions takes; the conv family's emitter reads it)
    scratch_arg: bool | None = None
    packed_weights: bool = False  # it reads W^T packed at compile time in the GEMM core's panels (gemm.c)
    # it reads the weights widened to 16-bit halves at compile time for SMLAD (--widened-weights: a constant in flash
    # beside the int8 weights, which its fallbacks read)
    widened_weights: bool = False


PLAIN = KernelFacts()  # a kernel of plain C: nothing more to know


@dataclass(frozen=True)
class KernelChoice:
    """One node's kernel, as the planner fixed it: emit writes exactly this."""

    kernel: str  # the C function the emitter calls ("" where the op's emitter names it, by the node's dtype)
    scratch: int = 0  # bytes of arena scratch during the call
    detail: Any = None  # the op's own record of the choice (block sizes, packing), for its emitter
    # C macros whose values this choice relies on (e.g. AOTC_GEMM_PANEL for packed weights): the
    # generated code refuses to compile against kernels built with other values
    assumes: Mapping[str, int] = field(default_factory=dict)
    # its scratch is kept for the whole run, one block that every node with kept scratch shares and no
    # tensor is placed over (the Winograd kernels' per-thread lanes: each thread's lines stay its own)
    kept: bool = False
    facts: KernelFacts = PLAIN  # its candidate's (select.choose fills them in)


def kept_scratch_bytes(choices: Iterable[Any]) -> int:
    """The block of scratch kept for the whole run (KernelChoice.kept): the largest such choice's, else 0."""
    return max((c.scratch for c in choices if getattr(c, "kept", False)), default=0)


@dataclass(frozen=True)
class TargetTraits:
    """What kernel choice needs to know of the target's C compiler."""

    vector_unit: bool = True  # SSE2/NEON: the depthwise register blocks are AOTC_DW3_BLOCK = 8 wide, else 1
    # no vector unit at all (not Helium either): the kernels' register tiles live in scalar
    # registers (microkernel.h's MK_SCALAR_TILES), a Cortex-M4/M7/M33 and the like
    scalar_tiles: bool = False
    helium: bool = False  # Arm's M-profile vector extension (a Cortex-M55): kernels with its intrinsics
    # the Arm DSP extension's SMLAD without Helium (a Cortex-M4, M33): the dense layers' weights stored
    # interleaved for its paths (AOTC_DSP_IL)
    dsp: bool = False
    threads: int = 1  # --threads: more than 1 prefers the kernels that split their work over the pool
    # the bundle is for this machine (target host) and its CPU has AVX-512F, which the host build's
    # -march=native turns on: the kernels' AVX-512 paths (conv_ig_avx512.h ...) will exist
    avx512: bool = False
    # ... and AVX-512 VNNI too (--host-isa avx512vnni): the QDQ convs' qconv_rows (w_packed 2) may be planned, which
    # only a VNNI build runs fast (quant_avx512vnni.h; without VNNI its weights are gathered, slower than unpacked)
    vnni: bool = False
    # the bundle is for this machine (target host), not built portable: the int8 TFLite kernels on packed
    # weights (tflite_int8_packed.c: AVX-512 VNNI where the build has it, else plain C) will be taken
    host: bool = False
    # --fast-math: kernels that round more than a direct sum may be taken (Winograd's F(4 x 4, 3 x 3))
    fast_math: bool = False
    # a --flash-budget's portable kernels (aot/flash.py): the bundle is built with AOTC_NO_INTRINSICS, so no
    # candidate written for an ISA path applies (dsp, helium and avx512 are off), nor a candidate whose scratch
    # only such a path uses (their `applies` read this)
    portable: bool = False
    # --widened-weights: the M-profile DSP paths may read their weights widened at compile time (flash for cycles)
    widened_weights: bool = False
    # Helium's int8 CONV_2D path may be taken (a --flash-budget level of the M55 leaves it out, AOTC_TFL_MVE_CONV 0:
    # the convs then take the DSP paths' candidates and scratch, aot/flash.py)
    mve_conv: bool = True
    # Helium's int8 FULLY_CONNECTED path (AOTC_TFL_MVE_FC, tfl_fc_s8_mve: no scratch) is compiled; the M55's flash
    # levels from mve-fc on leave it out, the layers then by the DSP path, which widens x into the plan's scratch
    mve_fc: bool = True


# the instruction sets a kernel's path may be written for (KernelFacts.isa), and whether a target has each
ISAS: dict[str, Callable[[TargetTraits], bool]] = {
    "": lambda t: True,  # plain C, every target
    "avx512": lambda t: t.avx512,  # an AVX-512F host (the x86 paths, conv_*_avx512.c)
    "host": lambda t: t.host,  # the machine aotc runs on, any ISA level (tflite_int8_packed.c: #if per ISA)
    "helium": lambda t: t.helium,  # Arm's M-profile vector extension (a Cortex-M55)
    "arm-dsp": lambda t: t.dsp or t.helium,  # Arm's DSP extension (SMLAD): a Cortex-M4, M33, and every Helium core
    # a Cortex-M core's int8 paths (quant_dsp.h, tflite_int8_*.c: SMLAD where the core has it), which
    # take their blocks from the plan's scratch, not a small stack
    "m-profile": lambda t: t.scalar_tiles or t.helium,
}


@dataclass(frozen=True)
class Candidate:
    """A kernel of an op: when it applies (shapes, attributes, target) and, given the bytes of
    scratch its step can spare, the choice sized to fit them, or None if it does not fit."""

    kernel: str  # the C function it calls ("": the op's emitter names it, by the node's dtype)
    fit: Callable[[Node, Graph, int], KernelChoice | None]
    applies: Callable[[Node, Graph, TargetTraits], bool] = lambda n, g, t: True
    # kernel-header macros whose target values `applies` relied on (KernelChoice.assumes)
    assumes: Callable[[TargetTraits], Mapping[str, int]] = lambda t: {}
    # a fit that depends on the target too (the Winograd kernels' scratch per thread); used instead of fit
    fit_on: Callable[[Node, Graph, int, TargetTraits], KernelChoice | None] | None = None
    # under a RAM budget's "tiles" (aot/plan/planner.py): a fit whose blocks may go below fit's floor, down to
    # the least the kernel runs with (less scratch, more instructions); None: fit
    fit_least: Callable[[Node, Graph, int], KernelChoice | None] | None = None
    facts: KernelFacts = PLAIN
    # the other C functions it calls for other input types or ops that share it (the choice's kernel names the
    # one for the node); with `kernel`, what docs/kernels.md lists
    also: tuple[str, ...] = ()

    @functools.cached_property
    def symbols(self) -> tuple[str, ...]:
        """Every C function it may call (worked out once: select.choose checks each choice against it, some 10^5
        times in a RAM budget's search)."""
        return tuple(s for s in (self.kernel, *self.also) if s)

    def applies_on(self, node: Node, graph: Graph, target: TargetTraits) -> bool:
        """It runs on the target (its ISA) and applies to the node there."""
        return ISAS[self.facts.isa](target) and self.applies(node, graph, target)


def as_3d(values: list[int] | tuple[int, ...], fill: int) -> list[int]:
    """A 1-D or 2-D op's per-dim values as the kernels' 3-D params take them: `fill` in front (sizes,
    kernels, strides 1; pads 0)."""
    return [fill] * (3 - len(values)) + list(values)


def fixed_scratch(kernel: str, scratch: Callable[[Node, Graph], int]) -> Candidate:
    """A kernel whose scratch the budget cannot shrink."""
    return Candidate(kernel, lambda n, g, budget: KernelChoice(kernel, scratch(n, g)))


NO_SCRATCH = Candidate("", lambda n, g, budget: KernelChoice(""))


def by_type(kernel: Callable[[Node, Graph], str], *symbols: str) -> Candidate:
    """A kernel without scratch whose C function depends on the node (its input type, its op): kernel(node,
    graph), one of `symbols`."""
    return Candidate(symbols[0], lambda n, g, budget: KernelChoice(kernel(n, g)), also=symbols[1:])


@dataclass(frozen=True)
class HostOp:
    emit: Callable[[NodeContext], None]
    family: str  # runtime_c/kernels/<family>.c and aotc_<family>.h hold the kernels
    needs: tuple[str, ...] = ()  # other kernel families its kernels call (e.g. conv needs gemm)
    dtypes: tuple[str, ...] = ("float32",)  # dtypes of input 0 the kernels take
    view: bool = False  # output is input 0 reinterpreted: no data moves
    inplace: int | None = None  # index of an input the output may overwrite (elementwise ops)
    # the output is input `inplace`'s bytes reordered into another shape, which its kernel writes over them (a
    # channels-first input's Transpose to NHWC under a budget: aot/kernels/transpose_in_place.py)
    inplace_reordered: bool = False
    # every input of the output's shape is read only at the element being written (a fused loop), so
    # the output may overwrite any of them (a Loop's new carried value over its old one)
    inplace_any: bool = False
    # under a RAM budget (--ram-budget), the inputs the output may overwrite, in preference: each element read
    # only where it is written (those of the output's shape and dtype qualify)
    budget_inplace: tuple[int, ...] = ()
    # under a RAM budget, how many bytes below input 0 the output may start, overlapping it (every kernel of
    # the op writes no byte its later reads need), a multiple of 16; None: it may not
    overlap: Callable[[Node, Graph], int | None] | None = None
    # its kernels in order of preference; the last that applies must fit any budget
    kernels: tuple[Candidate, ...] = (NO_SCRATCH,)
    check: Callable[[Node, Graph], str | None] | None = None  # reason the node cannot be compiled

    def reject_reason(self, node: Node, graph: Graph) -> str | None:
        first = next((i for i in node.inputs if i), None)
        if first is not None and graph.tensors[first].dtype not in self.dtypes:
            return f"dtype {graph.tensors[first].dtype} is not supported (supported: {', '.join(self.dtypes)})"
        return self.check(node, graph) if self.check else None


class Emitter(Protocol):
    """What an op's emitter may ask of the code generator (aot/emit_c/model.py ModelEmitter)."""

    graph: Graph

    @property
    def choices(self) -> Mapping[str, KernelChoice]: ...
    def pointer(self, tensor: str) -> str: ...
    def scratch_pointer(self, node: Node, ctype: str) -> str: ...
    def declare_params(self, node: Node, ctype: str, fields: dict[str, str], comment: str) -> str: ...
    def declare_derived(self, node: Node, suffix: str, values: np.ndarray, comment: str) -> str: ...
    def line(self, text: str) -> None: ...
    def written_in_place(self, part: str, whole: str, byte_offset: int) -> bool: ...
    def spare_slots(self, node: Node, tensor: str) -> tuple[int, int, int] | None: ...


class NodeContext:
    """One node's view of the emitter."""

    def __init__(self, emitter: Emitter, node: Node, index: int):
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
    def choice(self) -> KernelChoice:
        """The kernel the planner fixed for this node."""
        return self.emitter.choices[self.node.name]

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
