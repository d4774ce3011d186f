"""The vendor API reference, docs/vendor-api.md: every name a vendor package may import from aotc, with its
signature and its docstring (a dataclass's fields with the comments beside them in the source), and the
canonical attributes of the ops a vendor's checker sees, generated from the code so that it cannot drift.

    python -m aot.vendor_api_page > docs/vendor-api.md

tests/vendors/test_vendor_api_page.py checks that the committed page is current, that every name on it says
what it is for, and that the ops the shipped vendors check are in the attribute table.

The API is the list below (API): what a vendor imports, nothing else of aotc being its to import
(docs/vendor-guide.md, section 2). The attribute table is not written by hand: each op is imported as a
one-node ONNX model (a probe) through aotc's ONNX import and the passes that run before partitioning, and the
node a checker would be given is read back.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import io
import re
import textwrap
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

REGENERATE = "python -m aot.vendor_api_page > docs/vendor-api.md"
SET_BY_AOTC = "set by aotc"  # the default column of a field the constructor does not take (init=False)


@dataclass(frozen=True)
class Section:
    """A part of the page: a title, a paragraph, and the names it documents as (module, name), each
    imported from `module` (the shortest public path to it)."""

    title: str
    intro: str
    items: tuple[tuple[str, str], ...]


API: tuple[Section, ...] = (
    Section("Declaring a vendor", "A vendor package makes one `Vendor` and registers it under the `aotc.vendors` "
            "entry-point group; aotc finds it by name (`--vendor NAME`).",
            (("aot.vendor", "Vendor"), ("aot.vendor", "VendorOption"), ("aot.vendor", "VendorOp"),
             ("aot.ir.vendor_ops", "Infer"), ("aot.vendor.base", "Checker"), ("aot.vendor", "Verdict"),
             ("aot.vendor", "ACCEPT"), ("aot.vendor", "Reject"), ("aot.vendor.base", "Transform"),
             ("aot.vendor", "Layout"), ("aot.vendor", "check_vendor"), ("aot.vendor", "find_vendor"),
             ("aot.vendor", "available_vendors"))),
    Section("Codegen", "`Vendor.codegen(function, context)` turns one partitioned function into C: what it is "
            "given, what it returns, and the workspace planner it may use.",
            (("aot.vendor.base", "Codegen"), ("aot.vendor", "CodegenContext"), ("aot.vendor", "Artifact"),
             ("aot.plan.workspace", "WorkspacePlan"), ("aot.plan.workspace", "Life"),
             ("aot.plan.workspace", "plan_lives"))),
    Section("Errors", "How a vendor refuses (raise `AotcError`) and how its mistakes are reported (`VendorError`): "
            "aotc runs every hook of a vendor inside `in_vendor`.",
            (("aot.errors", "AotcError"), ("aot.vendor", "VendorError"), ("aot.errors", "in_vendor"))),
    Section("The IR", "What checkers, patterns, passes, transforms and codegen read: a `Graph` of `Node`s in "
            "execution order over named `Tensor`s, every shape static, every attribute canonical (section 8).",
            (("aot.ir", "Graph"), ("aot.ir", "Node"), ("aot.ir", "Tensor"), ("aot.ir", "Function"),
             ("aot.ir", "GraphInfo"), ("aot.ir", "DTYPES"), ("aot.ir", "np_dtype"), ("aot.ir", "CONTROL_MARKERS"))),
    Section("Patterns", "`Vendor.patterns`: chains of ops a vendor takes as one `Composite` node (module "
            "`aot.partition.pattern`).",
            tuple(("aot.partition.pattern", n) for n in ("Composite", "P", "X", "Const", "Opt", "Alt", "Wildcard",
                                                        "Pattern", "MatchState", "match_at"))),
    Section("Passes", "A vendor's own graph rewrites: `Vendor.graph_passes` (before partitioning) and the passes "
            "its `transform` runs on each of its functions.",
            (("aot.vendor", "Pass"), ("aot.vendor", "run_passes_tracked"), ("aot.passes.base", "run_passes"),
             ("aot.passes.base", "verify_graph"))),
    Section("Testing", "The vendor test kit and the shared build it runs on, shipped in the wheel "
            "(`pip install aotc[testing]` for onnxruntime, the reference).",
            tuple(("aot.testing", n) for n in ("run_kit", "Report", "CaseResult", "catalogue", "op_case",
                                              "node_case", "model_case", "Case", "shared_build", "SharedBuild"))),
)


# --- reading the source --------------------------------------------------------------------------------------

@functools.cache
def _module_source(module: str) -> str:
    return inspect.getsource(importlib.import_module(module))


@functools.cache
def _class_source(cls: type) -> tuple[str, ast.ClassDef]:
    """A class's source, dedented, and its parsed definition (inspect.getsource parses the whole module: once
    per class)."""
    source = textwrap.dedent(inspect.getsource(cls))
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.ClassDef)
    return source, body


def _comments(source: str) -> dict[int, str]:
    """Line (1-based) -> the text of the comment on it."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string.lstrip("#").strip()
    return out


def _leading(lines: list[str], lineno: int) -> list[str]:
    """The block of comment lines right above line `lineno` (1-based), section rulers (`# ---`) left out."""
    block: list[str] = []
    k = lineno - 2
    while k >= 0 and lines[k].strip().startswith("#"):
        block.insert(0, lines[k].strip().lstrip("#").strip())
        k -= 1
    return [b for b in block if not b.startswith("---")]


def _described(node: ast.stmt, lines: list[str], comments: dict[int, str]) -> tuple[str, bool]:
    """A statement's comments: the block above it and the ones on its lines; and whether there was a block
    above."""
    above = _leading(lines, node.lineno)
    beside = [comments[k] for k in range(node.lineno, (node.end_lineno or node.lineno) + 1) if k in comments
              and not lines[k - 1].strip().startswith("#")]
    return " ".join(above + beside), bool(above)


@dataclass(frozen=True)
class Field:
    """One annotated name of a class body (a dataclass field, a ClassVar), as the source writes it."""

    name: str
    type: str
    default: str  # "" when required
    doc: str


def _default(value: ast.expr | None) -> str:
    """A field's default as a reader wants it: `{}` for field(default_factory=dict), the factory's call."""
    if value is None:
        return ""
    if isinstance(value, ast.Call) and ast.unparse(value.func) == "field":
        kw = {k.arg: k.value for k in value.keywords}
        if "default" in kw:
            return ast.unparse(kw["default"])
        factory = kw.get("default_factory")
        if factory is None:
            return SET_BY_AOTC if "init" in kw else ""
        if isinstance(factory, ast.Lambda):
            return ast.unparse(factory.body)
        name = ast.unparse(factory)
        return {"dict": "{}", "list": "[]", "set": "set()"}.get(name, f"{name}()")
    text = ast.unparse(value)
    return "" if text.startswith("_") else text  # a private sentinel: required (Vendor.codegen)


def class_fields(cls: type) -> list[Field]:
    """The annotated names of `cls`'s body in source order, each with its comments (the block right above it
    and the one beside it)."""
    source, body = _class_source(cls)
    lines, comments = source.splitlines(), _comments(source)
    return [Field(stmt.target.id, ast.unparse(stmt.annotation), _default(stmt.value),
                  _described(stmt, lines, comments)[0])
            for stmt in body.body if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)]


def _assignment(module: str, name: str) -> tuple[str, str]:
    """A module-level name's assignment as written (`NAME = value`) and its comments."""
    source = _module_source(module)
    lines, comments = source.splitlines(), _comments(source)
    for stmt in ast.parse(source).body:
        targets = (stmt.targets if isinstance(stmt, ast.Assign) else
                   [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            code = "\n".join(lines[stmt.lineno - 1:stmt.end_lineno])
            above = " ".join(_leading(lines, stmt.lineno))  # the code shows the comments inside it
            return code, above or _described(stmt, lines, comments)[0]
        if isinstance(stmt, ast.ImportFrom) and stmt.module and any(a.name == name for a in stmt.names):
            return _assignment(stmt.module, name)  # re-exported: where it is assigned
    raise KeyError(f"{module}.{name} is not assigned at module level")


# --- describing one object -----------------------------------------------------------------------------------

class _Raw:
    """Text shown as itself in a signature (annotations are strings under `from __future__ import annotations`)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _shown_default(value: object) -> _Raw:
    if callable(value) and hasattr(value, "__name__"):
        return _Raw(value.__name__)
    return _Raw(repr(value))


def signature(fn: Callable[..., Any], name: str = "") -> str:
    """`name(params) -> result` with annotations as the source writes them; `self` and `cls` left out."""
    sig = inspect.signature(fn)
    params = [p.replace(annotation=_Raw(p.annotation) if isinstance(p.annotation, str) else p.annotation,
                        default=p.default if p.default is p.empty else _shown_default(p.default))
              for p in sig.parameters.values() if p.name not in ("self", "cls")]
    ret = sig.return_annotation
    sig = sig.replace(parameters=params, return_annotation=_Raw(ret) if isinstance(ret, str) else ret)
    return f"{name or fn.__name__}{sig}"


def _own_doc(obj: object) -> str:
    """Its docstring, not one it inherits nor the one a dataclass makes up of its signature."""
    if inspect.isclass(obj):
        return inspect.cleandoc(ast.get_docstring(_class_source(obj)[1]) or "")
    doc = getattr(obj, "__doc__", None)
    return inspect.cleandoc(doc) if isinstance(doc, str) else ""


@dataclass(frozen=True)
class Member:
    """A method or property of a class on the page."""

    name: str
    kind: str  # "method", "static method", "class method", "property"
    signature: str
    doc: str


def class_members(cls: type, documented_bases: Sequence[type] = ()) -> list[Member]:
    """`cls`'s own public methods and properties, in source order. An override without a docstring of its own
    of a method that a class on the page documents is left out (the base's entry says it)."""
    fields = {f.name for f in class_fields(cls)}
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_") or name in fields:
            continue
        if isinstance(value, property):
            fn, kind = value.fget, "property" + (", settable" if value.fset else "")
        elif isinstance(value, staticmethod):
            fn, kind = value.__func__, "static method"
        elif isinstance(value, classmethod):
            fn, kind = value.__func__, "class method"
        elif inspect.isfunction(value):
            fn, kind = value, "method"
        else:
            continue
        doc = _own_doc(fn)
        if not doc and any(hasattr(b, name) for b in documented_bases if b is not cls and issubclass(cls, b)):
            continue
        sig = signature(fn, name)
        if kind.startswith("property"):
            sig = f"{name}: {sig.split(' -> ', 1)[1]}" if " -> " in sig else name
        out.append(Member(name, kind, sig, doc))
    return out


def _is_alias(obj: object) -> bool:
    """Whether a module-level value is a type (Callable[...], a union ...) rather than a constant."""
    return type(obj).__module__ in ("typing", "collections.abc", "types")


def describe(module: str, name: str) -> str:
    """What the page says a name is for: its docstring, or for a constant or type alias the comments at its
    assignment (an instance's class docstring does not count)."""
    obj = getattr(importlib.import_module(module), name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return _own_doc(obj)
    return _assignment(module, name)[1]


def undocumented() -> list[str]:
    """Every name, field, method and property on the page that says nothing of what it is for."""
    missing = []
    bases = _page_classes()
    for section in API:
        for module, name in section.items:
            if not describe(module, name):
                missing.append(f"{module}.{name}")
            obj = getattr(importlib.import_module(module), name)
            if inspect.isclass(obj):
                missing += [f"{module}.{name}.{f.name}" for f in class_fields(obj) if not f.doc]
                missing += [f"{module}.{name}.{m.name}" for m in class_members(obj, bases) if not m.doc]
    return missing


def _page_classes() -> list[type]:
    return [obj for s in API for m, n in s.items
            if inspect.isclass(obj := getattr(importlib.import_module(m), n))]


# --- markdown ------------------------------------------------------------------------------------------------

def _escape(text: str) -> str:
    """Prose for markdown: `<` outside code spans as an entity, so that `<symbol>` is not read as HTML."""
    parts = text.split("`")
    return "`".join(p.replace("<", "&lt;") if k % 2 == 0 else p for k, p in enumerate(parts))


def prose(doc: str) -> list[str]:
    """A docstring as markdown lines: indented blocks stay code blocks, the rest is escaped."""
    out: list[str] = []
    in_code = False
    for line in doc.splitlines():
        if line.startswith("    ") and (in_code or not out or not out[-1].strip()):
            in_code = True
            out.append(line)
            continue
        if line.strip():
            in_code = False
        out.append(_escape(line))
    return out


def _cell(text: str) -> str:
    """Prose in a table cell."""
    return _escape(text).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """Code in a table cell (GitHub's tables need `|` escaped inside code spans too)."""
    return "`" + text.replace("|", "\\|").replace("\n", " ") + "`"


def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def _defines_init(cls: type) -> bool:
    """Whether the class body writes its own __init__ (a dataclass's generated one is not shown)."""
    return any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in _class_source(cls)[1].body)


def _class_lines(module: str, name: str, cls: type, bases: Sequence[type]) -> list[str]:
    lines = [f"### `{name}`", "", f"`from {module} import {name}`", ""]
    fields = class_fields(cls)
    if _defines_init(cls):
        lines += ["    " + signature(vars(cls)["__init__"], name).removesuffix(" -> None"), ""]
    lines += [*prose(_own_doc(cls)), ""]
    if fields:
        if dataclasses.is_dataclass(cls):
            frozen = vars(cls)["__dataclass_params__"].frozen
            lines += [f"A {'frozen ' if frozen else ''}dataclass{'' if _defines_init(cls) else ' of these fields'}:",
                      ""]
        lines += ["| field | type | default | what for |", "|---|---|---|---|"]
        for f in fields:
            default = f.default if f.default == SET_BY_AOTC else _code(f.default) if f.default else "required"
            lines.append(f"| `{f.name}` | {_code(f.type)} | {default} | {_cell(f.doc)} |")
        lines.append("")
    for m in class_members(cls, bases):
        lines += [f"#### `{name}.{m.name}`", "", f"{m.kind}: `{m.signature}`", "", *prose(m.doc), ""]
    return lines


def _item_lines(module: str, name: str, bases: Sequence[type]) -> list[str]:
    obj = getattr(importlib.import_module(module), name)
    if inspect.isclass(obj):
        return _class_lines(module, name, obj, bases)
    if inspect.isfunction(obj):
        return [f"### `{name}`", "", f"`from {module} import {name}`", "", "    " + signature(obj, name), "",
                *prose(_own_doc(obj)), ""]
    code, doc = _assignment(module, name)
    kind = "type" if _is_alias(obj) else "constant"
    return [f"### `{name}`", "", f"`from {module} import {name}` ({kind})", "",
            *("    " + line for line in textwrap.dedent(code).splitlines()), "", *prose(doc), ""]


def api_lines() -> list[str]:
    bases = _page_classes()
    lines: list[str] = []
    for k, section in enumerate(API, 1):
        lines += [f"## {k}. {section.title}", "", _escape(section.intro), ""]
        for module, name in section.items:
            lines += _item_lines(module, name, bases)
    return lines


# --- the canonical attributes of each op, read from the import ------------------------------------------------

@dataclass(frozen=True)
class Probe:
    """A one-node ONNX model of `op`: its inputs in order, each a run-time input's shape (float32), a
    (shape, dtype) pair, a constant (an array) or "" (omitted); named by the op's schema."""

    op: str
    inputs: tuple[Any, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    opset: int = 18
    domain: str = ""
    outputs: int = 1
    names: tuple[str, ...] = ()  # input names where onnx has no schema (com.microsoft's ops)


F32, U8, I8, I32, I64 = np.float32, np.uint8, np.int8, np.int32, np.int64
X4 = (1, 4, 8, 8)


def _c(*values: float, dtype: type = F32) -> np.ndarray:
    return np.array(values if len(values) != 1 else values[0], dtype)


def _w(*shape: int) -> np.ndarray:
    return np.full(shape, 0.5, F32)


_Q = (_c(0.1), _c(0, dtype=U8))  # a scale and a uint8 zero point
_QW = (_c(0.1), _c(0, dtype=I8))  # an int8 weight's
_QNAMES_2 = ("A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale", "C_zero_point")

PROBES: tuple[Probe, ...] = (
    # convolution and pooling
    Probe("Conv", (X4, _w(6, 4, 3, 3), _w(6))),
    Probe("ConvTranspose", (X4, _w(4, 2, 3, 3))),
    Probe("MaxPool", (X4,), {"kernel_shape": [2, 2]}),
    Probe("AveragePool", (X4,), {"kernel_shape": [2, 2]}),
    Probe("GlobalAveragePool", (X4,)),
    Probe("GlobalMaxPool", (X4,)),
    Probe("LpPool", (X4,), {"kernel_shape": [2, 2]}),
    # matrix products
    Probe("Gemm", ((2, 5), _w(5, 3), _w(3))),
    Probe("MatMul", ((2, 5), _w(5, 3))),
    # normalisation and softmax
    Probe("BatchNormalization", (X4, _w(4), _w(4), _w(4), _w(4))),
    Probe("InstanceNormalization", (X4, _w(4), _w(4))),
    Probe("LayerNormalization", ((2, 3, 8), _w(8), _w(8))),
    Probe("RMSNormalization", ((2, 3, 8), _w(8)), opset=23),
    Probe("LRN", (X4,), {"size": 3}),
    Probe("LpNormalization", ((2, 8),)),
    Probe("Softmax", ((2, 3, 8),)),
    Probe("LogSoftmax", ((2, 3, 8),)),
    Probe("Hardmax", ((2, 3, 8),)),
    # activations
    *(Probe(op, (X4,)) for op in ("Relu", "Sigmoid", "Tanh", "HardSwish", "Softplus", "Softsign", "Exp", "Log",
                                  "Sqrt", "Abs", "Neg", "Reciprocal", "Erf", "Floor", "Ceil", "Round", "Sign")),
    Probe("LeakyRelu", (X4,)),
    Probe("Elu", (X4,)),
    Probe("Selu", (X4,)),
    Probe("Celu", (X4,), opset=18),
    Probe("HardSigmoid", (X4,)),
    Probe("ThresholdedRelu", (X4,)),
    Probe("Shrink", (X4,)),
    Probe("Gelu", (X4,), opset=20),
    Probe("Swish", (X4,), opset=24),
    Probe("Mish", (X4,)),
    Probe("PRelu", (X4, _w(4, 1, 1))),
    Probe("Clip", (X4, _c(0.0), _c(6.0))),
    # elementwise with two inputs
    *(Probe(op, (X4, X4)) for op in ("Add", "Sub", "Mul", "Div", "Max", "Min", "Pow")),
    Probe("Pow", (X4, _c(2.0))),
    *(Probe(op, (X4, X4)) for op in ("Equal", "Less", "Greater")),
    Probe("Where", (((2, 3), "bool"), (2, 3), (2, 3))),
    Probe("Sum", (X4, X4, X4)),
    Probe("Mean", (X4, X4)),
    # reductions
    *(Probe(op, ((2, 3, 8), _c(-1, dtype=I64).reshape(1))) for op in ("ReduceMean", "ReduceSum", "ReduceMax",
                                                                      "ReduceMin", "ReduceProd", "ReduceL2")),
    Probe("ReduceMean", ((2, 3, 8),)),
    Probe("ArgMax", ((2, 3, 8),)),
    Probe("TopK", ((2, 8), _c(3, dtype=I64).reshape(1)), outputs=2),
    Probe("CumSum", ((2, 8), _c(1, dtype=I64))),
    # data movement
    Probe("Reshape", (X4, _c(1, -1, dtype=I64))),
    Probe("Flatten", (X4,)),
    Probe("Squeeze", ((1, 4, 1, 8), _c(2, dtype=I64).reshape(1))),
    Probe("Unsqueeze", ((4, 8), _c(0, dtype=I64).reshape(1))),
    Probe("Transpose", (X4,)),
    Probe("Concat", (X4, X4), {"axis": -3}),
    Probe("Split", ((2, 6), _c(2, 4, dtype=I64)), {"axis": -1}, outputs=2),
    Probe("Slice", ((4, 6), _c(1, dtype=I64).reshape(1), _c(5, dtype=I64).reshape(1),
                    _c(-1, dtype=I64).reshape(1), _c(2, dtype=I64).reshape(1))),
    Probe("Gather", ((5, 8), _c(0, 3, dtype=I64))),
    Probe("GatherElements", ((2, 3), ((2, 3), "int64"))),
    Probe("Pad", (X4, _c(0, 0, 1, 1, 0, 0, 1, 1, dtype=I64))),
    Probe("Expand", ((3, 1), _c(3, 4, dtype=I64))),
    Probe("Tile", ((3, 1), _c(2, 4, dtype=I64))),
    Probe("DepthToSpace", (X4,), {"blocksize": 2}),
    Probe("SpaceToDepth", (X4,), {"blocksize": 2}),
    Probe("Resize", (X4, "", _c(1, 1, 2, 2))),
    Probe("Cast", (X4,), {"to": 6}),
    Probe("Identity", (X4,)),
    Probe("Dropout", (X4,)),
    # recurrent and attention
    Probe("LSTM", ((5, 1, 3), _w(1, 16, 3), _w(1, 16, 4)), {"hidden_size": 4}),
    Probe("GRU", ((5, 1, 3), _w(1, 12, 3), _w(1, 12, 4)), {"hidden_size": 4}),
    Probe("Attention", ((1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)), opset=23),
    Probe("Einsum", ((2, 3), (3, 4)), {"equation": "ij,jk->ik"}),
    # quantized
    Probe("QuantizeLinear", (X4, *_Q)),
    Probe("DequantizeLinear", ((X4, "uint8"), *_Q)),
    Probe("QLinearConv", ((X4, "uint8"), *_Q, np.ones((6, 4, 3, 3), I8), *_QW, *_Q)),
    Probe("QLinearMatMul", (((2, 5), "uint8"), *_Q, np.ones((5, 3), I8), *_QW, *_Q)),
    Probe("ConvInteger", ((X4, "uint8"), np.ones((6, 4, 3, 3), I8))),
    Probe("MatMulInteger", (((2, 5), "uint8"), np.ones((5, 3), I8))),
    Probe("QLinearAdd", ((X4, "uint8"), *_Q, (X4, "uint8"), *_Q, *_Q), domain="com.microsoft", names=_QNAMES_2),
    Probe("QLinearMul", ((X4, "uint8"), *_Q, (X4, "uint8"), *_Q, *_Q), domain="com.microsoft", names=_QNAMES_2),
    Probe("QLinearGlobalAveragePool", ((X4, "uint8"), *_Q, *_Q), domain="com.microsoft",
          names=("X", "x_scale", "x_zero_point", "y_scale", "y_zero_point")),
    Probe("QGemm", (((2, 5), "uint8"), *_Q, np.ones((5, 3), I8), *_QW, np.zeros(3, I32), *_Q),
          domain="com.microsoft", names=("A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "C",
                                         "y_scale", "y_zero_point")),
    # onnxruntime's transformer ops, rewritten on import
    Probe("FastGelu", ((2, 8),), domain="com.microsoft", names=("X",)),
    Probe("SkipLayerNormalization", ((1, 2, 8), (1, 2, 8), _w(8), _w(8)), domain="com.microsoft",
          names=("input", "skip", "gamma", "beta")),
)


@functools.cache
def _schema(op: str, opset: int, domain: str) -> Any:
    import onnx.defs

    try:
        return onnx.defs.get_schema(op, opset, domain)
    except onnx.defs.SchemaError:
        return None


def _input_names(p: Probe) -> list[str]:
    if p.names:
        return list(p.names)
    schema = _schema(p.op, p.opset, p.domain)
    formal = [i.name for i in schema.inputs] if schema else []
    names = []
    for k in range(len(p.inputs)):
        if k < len(formal) and formal[k] not in names:
            names.append(formal[k])
        else:  # a variadic input's further values: data_0, data_1 ...
            base = formal[-1] if formal else "in"
            names.append(f"{base[:-2] if base.endswith('_0') else base}_{k}")
    return names


def _model(p: Probe, attrs: dict[str, Any]) -> Any:
    import onnx
    from onnx import helper, numpy_helper

    from aot.testing.shared import tensor_type

    ins, inits, names = [], [], []
    for name, value in zip(_input_names(p), p.inputs, strict=True):
        if isinstance(value, str):
            names.append("")
            continue
        names.append(name)
        if isinstance(value, np.ndarray):
            inits.append(numpy_helper.from_array(value, name))
            continue
        shape, dtype = value if value and isinstance(value[-1], str) else (value, "float32")
        ins.append(helper.make_tensor_value_info(name, tensor_type(dtype), list(shape)))
    outs = [f"out{k}" if p.outputs > 1 else "out" for k in range(p.outputs)]
    node = helper.make_node(p.op, names, outs, name=f"{p.op.lower()}_node", domain=p.domain, **attrs)
    graph = helper.make_graph([node], "probe", ins, [onnx.ValueInfoProto(name=o) for o in outs], inits)
    opsets = [helper.make_opsetid("", p.opset), *([helper.make_opsetid(p.domain, 1)] if p.domain else [])]
    return helper.make_model(graph, opset_imports=opsets)


def _lowered(p: Probe, attrs: dict[str, Any]) -> Any:
    """The graph a checker is given for the probe: import, then the passes before partitioning."""
    from aot.frontend import import_model
    from aot.passes import simplify

    return simplify(import_model(_model(p, attrs), "probe", keep_onnx=False))


def _onnx_defaults(p: Probe) -> dict[str, Any]:
    """The op's attributes that its ONNX schema gives a default, with it."""
    from onnx import helper

    schema = _schema(p.op, p.opset, p.domain)
    out = {}
    for name, a in sorted((schema.attributes if schema else {}).items()):
        if a.default_value.type:
            value = helper.get_attribute_value(a.default_value)
            out[name] = value.decode() if isinstance(value, bytes) else value
    return out


def type_name(v: object) -> str:
    """The Python type of an attribute's value as the IR holds it (list[int], str, ndarray[float32] ...)."""
    if isinstance(v, (list, tuple)):
        inner = sorted({type_name(x) for x in v})
        kind = "list" if isinstance(v, list) else "tuple"
        return f"{kind}[{' | '.join(inner)}]" if inner else kind
    if isinstance(v, np.ndarray):
        return f"ndarray[{v.dtype}]"
    if isinstance(v, np.generic):
        return f"numpy.{type(v).__name__}"
    return type(v).__name__


def shown(v: object, limit: int = 60) -> str:
    if isinstance(v, np.ndarray):
        return f"array{list(v.shape)}"
    text = repr(v)
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass(frozen=True)
class AttrRow:
    """One attribute of one IR node of a probe."""

    node: str  # the IR node: op(inputs)
    attr: str  # "" for a node without attributes
    type: str  # its value's Python type ("" when the probe's node does not have it)
    value: str  # the probe's value
    status: str  # where it comes from: ALWAYS, OWN, AS_WRITTEN ..., RESOLVED, REWRITE, UNPROBED
    note: str  # NOTES'


# What the table cannot say of itself: what the less obvious attributes mean. Checked by the test: each names
# an attribute that the import does give the op.
NOTES: dict[tuple[str, str], str] = {
    ("Conv", "pads"): "[begin..., end...] per spatial axis (ONNX's order), auto_pad already resolved into it",
    ("Conv", "kernel_shape"): "from W when the model leaves it out",
    ("Conv", "group"): "input and output channels in `group` groups: depthwise when group == C (X's channels)",
    ("ConvTranspose", "pads"): "[begin..., end...]; output_shape and auto_pad resolved into it",
    ("MaxPool", "pads"): "[begin..., end...] per spatial axis, auto_pad resolved",
    ("AveragePool", "pads"): "[begin..., end...] per spatial axis, auto_pad resolved",
    ("AveragePool", "count_include_pad"): "1: the padding counts in each window's divisor",
    ("Gemm", "transA"): "Y = alpha * op(A) @ op(B) + beta * C, op transposing when 1",
    ("Softmax", "outer"): "the input as [outer, n, inner], normalised over n (both axis semantics, before "
                          "and after opset 13, resolved)",
    ("LogSoftmax", "outer"): "as Softmax's",
    ("Hardmax", "outer"): "as Softmax's",
    ("LayerNormalization", "rows"): "X as [rows, n], each row normalised on its own (n: the dims from axis on)",
    ("LayerNormalization", "stash"): "the dtype the statistics are computed in (ONNX's stash_type)",
    ("RMSNormalization", "rows"): "X as [rows, n], as LayerNormalization's",
    ("Clip", "min"): "inputs min and max (opset 11+) become attributes; a bound left out is -inf / inf",
    ("Slice", "starts"): "one per axis of the input (clamped, non-negative); ends follow from the output shape",
    ("Split", "split"): "each output's size along axis",
    ("Pad", "pads"): "[begin..., end...] for every axis (input pads and axes resolved)",
    ("Pad", "value"): "the constant_value input (0 when omitted), as a Python number",
    ("Resize", "scales"): "one per axis, from scales or sizes",
    ("Cast", "to"): "a dtype name of aot.ir.DTYPES (the output's), not ONNX's enum",
    ("ReduceMean", "axes"): "non-negative, sorted; input axes (opset 18+) become the attribute; every axis "
                            "when left out",
    ("ReduceSum", "axes"): "as ReduceMean's",
    ("Transpose", "perm"): "filled in (reversed axes) when the model leaves it out",
    ("Concat", "axis"): "non-negative",
    ("Gather", "axis"): "non-negative",
    ("QuantizeLinear", "axis"): "the per-axis scale's axis, non-negative; meaningless for a scalar scale",
    ("LSTM", "activations"): "per direction, each gate function as (name, alpha, beta)",
    ("Gelu", "approximate"): "'none' (erf) or 'tanh'",
}


ALWAYS, OWN, AS_WRITTEN, RESOLVED, REWRITE = "always", "aotc's", "as written", "resolved", "of the rewrite"
UNPROBED = "not probed (no ONNX default)"


def _kept(p: Probe, attr: str, value: Any) -> bool | None:
    """Whether the probe's node keeps `attr` when the model sets it to `value` (its ONNX default); None when
    the import refuses the node so."""
    from aot.errors import AotcError

    try:
        return any(n.op == p.op and attr in n.attrs for n in _lowered(p, {**p.attrs, attr: value}).nodes)
    except AotcError:
        return None


def _inputs(node: Any, names: list[str]) -> str:
    return f"{node.op}({', '.join(i if i in names else ('_' if not i else 'tmp') for i in node.inputs)})"


def probe_rows(p: Probe) -> list[AttrRow]:
    """The probe's IR nodes and their attributes, each with where it comes from (the page's legend): always
    (an ONNX attribute the node has, whether or not the model sets it), aotc's (not an ONNX attribute), as
    written (an ONNX attribute the node keeps only when the model sets it: a probe that sets it to its ONNX
    default tells), resolved (an ONNX attribute the node never keeps), of the rewrite (a node of another op)."""
    graph = _lowered(p, dict(p.attrs))
    names = _input_names(p)
    schema = _schema(p.op, p.opset, p.domain)
    onnx_attrs = set(schema.attributes) if schema else set()
    defaults = _onnx_defaults(p)
    rows: list[AttrRow] = []
    for node in graph.nodes:
        where = _inputs(node, names)
        attrs = node.attrs
        for attr in sorted(attrs):
            status = REWRITE if node.op != p.op else ALWAYS if attr in onnx_attrs else OWN
            rows.append(AttrRow(where, attr, type_name(attrs[attr]), shown(attrs[attr]), status,
                                NOTES.get((node.op, attr), "")))
        absent = sorted(onnx_attrs - set(attrs)) if node.op == p.op else []
        for attr in absent:
            if attr in p.attrs:
                status = RESOLVED
            elif attr in defaults:
                kept = _kept(p, attr, defaults[attr])
                status = (f"{AS_WRITTEN} (ONNX default {shown(defaults[attr])})" if kept else RESOLVED if kept is False
                          else f"refused when set (ONNX default {shown(defaults[attr])})")
            else:
                status = UNPROBED
            kind = type_name(defaults[attr]) if attr in defaults and status.startswith(AS_WRITTEN) else ""
            rows.append(AttrRow(where, attr, kind, "", status, NOTES.get((node.op, attr), "")))
        if not attrs and not absent:
            rows.append(AttrRow(where, "", "", "", "", ""))
    return rows


@functools.cache
def attribute_rows() -> tuple[tuple[Probe, tuple[AttrRow, ...]], ...]:
    """Every probe with its rows (imported once per process: about a second)."""
    return tuple((p, tuple(probe_rows(p))) for p in PROBES)


def probe_text(p: Probe) -> str:
    """The probe's node as the table's first column shows it: op, inputs (shape, dtype or constant), attributes."""
    parts = []
    for name, value in zip(_input_names(p), p.inputs, strict=True):
        if isinstance(value, str):
            parts.append("_")
        elif isinstance(value, np.ndarray):
            parts.append(f"{name}=const{list(value.shape)}")
        else:
            shape, dtype = value if value and isinstance(value[-1], str) else (value, "float32")
            parts.append(f"{name}{list(shape)}" + ("" if dtype == "float32" else f" {dtype}"))
    attrs = "".join(f", {k}={v!r}" for k, v in p.attrs.items())
    return f"{p.op}({', '.join(parts)}{attrs})" + (f" opset {p.opset}" if p.opset != 18 else "")


def attribute_lines() -> list[str]:
    lines = ["| probe (ONNX node imported) | IR node | attribute | type | value | status | note |",
             "|---|---|---|---|---|---|---|"]
    for p, rows in attribute_rows():
        first = True
        node = ""
        for r in rows:
            lines.append(f"| {_cell(probe_text(p)) if first else ''} | {'`' + r.node + '`' if r.node != node else ''} "
                         f"| {'`' + r.attr + '`' if r.attr else '-'} | {_code(r.type) if r.type else ''} | "
                         f"{_code(r.value) if r.value else ''} | {r.status} | {_cell(r.note)} |")
            first, node = False, r.node
    return lines


def vendor_checked_ops() -> dict[str, list[str]]:
    """op -> the built-in vendors whose checkers take it."""
    from importlib.metadata import entry_points

    from aot.vendor import GROUP

    out: dict[str, list[str]] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if ep.value.startswith("aot.vendor."):
            for op in ep.load().checkers:
                out.setdefault(op, []).append(ep.name)
    return dict(sorted(out.items()))


def markdown() -> str:
    api = [f"{k}. [{s.title}](#{_anchor(f'{k}. {s.title}')})" for k, s in enumerate(API, 1)]
    lines = [
        "# Vendor API reference",
        "",
        f"Generated from the code's docstrings, signatures and source comments by `{REGENERATE}`; do not edit "
        "(tests/vendors/test_vendor_api_page.py checks it is current). The guide that builds a vendor step by "
        "step is [vendor-guide.md](vendor-guide.md); this page is the reference of every name it uses. A vendor "
        "package imports these and nothing else of aotc: everything else reaches it through the codegen context.",
        "",
        *api,
        f"{len(API) + 1}. [Canonical attributes per op](#{_anchor(f'{len(API) + 1}. Canonical attributes per op')})",
        "",
        *api_lines(),
        f"## {len(API) + 1}. Canonical attributes per op",
        "",
        "A checker, a pattern's `attrs` and `check`, a pass and codegen read `node.attrs` in aotc's canonical form, "
        "whatever opset the model was written in: the frontend (aot/frontend/onnx/canonical/) turns constant "
        "parameter inputs into attributes (Clip's min and max, Pad's pads, Slice's starts, Reduce axes, Resize's "
        "scales ...) and drops those inputs, fills in defaults, makes axes non-negative and resolves auto_pad into "
        "explicit pads. A view (Reshape, Flatten, Squeeze, Unsqueeze) keeps its data input alone: its output "
        "tensor's shape says the rest.",
        "",
        "How this table is made: each row's probe, a one-node ONNX model (run-time inputs of the shapes shown, "
        "`const` for an initializer, `_` for an omitted input, opset 18 unless shown), is imported by "
        "`aot.frontend.import_model` and simplified by `aot.passes.simplify` (the passes that run before "
        "partitioning: the graph a checker is given, before any vendor's own graph passes), and each IR node's "
        "attrs are read back: the value column is the probe's. The status says where each attribute comes from: "
        f"**{ALWAYS}**: an ONNX attribute the node has whether or not the model sets it (its default filled in); "
        f"**{OWN}**: not an ONNX attribute, aotc's own (e.g. Softmax's outer, n and inner); **{AS_WRITTEN}**: an "
        "ONNX attribute the node has only when the model sets it (a second probe sets it to its default: read it "
        f"with `node.attrs.get(name, default)`); **{RESOLVED}**: an ONNX attribute the node never has (folded "
        f"into others, e.g. Conv's auto_pad into pads); **{REWRITE}**: a node of another op, which the import "
        "rewrote the probe into. An op without a canonical rule keeps its ONNX attributes as written. The IR node "
        "names its inputs by the probe's (ONNX's input names; `_`: omitted, `tmp`: a tensor of the rewrite).",
        "",
        *attribute_lines(),
        "",
        "Other ops of the host kernel table (aot/kernels/: `aotc ops`, docs/ops.md) reach checkers too; a .tflite "
        "model's integer ops (domain aotc.tflite, named `Tfl...`) are declared with their attributes in "
        "aot/ir/tflite_ops.py, and a vendor's own ops (`VendorOp`) keep their attributes as the model writes them.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
