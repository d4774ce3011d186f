"""The supported-ops page: which ONNX ops aotc compiles, with which dtypes, from which opset,
and which vendors take them, generated from the kernel table so it cannot drift from the code.

    aotc ops              the table on the terminal
    aotc ops Conv         one op
    aotc ops --markdown   docs/ops.md (tests/kernels/test_ops_page.py checks the committed page is current)

An op is listed when a host kernel runs it, when the frontend rewrites it into ops that do, or
when the frontend removes or folds it. Any op whose inputs are all constants is folded at
compile time whatever it is; the page does not list those.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import onnx.defs

from aot.frontend.onnx.canonical import RULES
from aot.frontend.onnx.contrib import CONTRIB_OPS as _QOPS
from aot.frontend.onnx.contrib import DOMAIN as CONTRIB_DOMAIN
from aot.frontend.onnx.contrib import FLOAT_OPS, ONNX_DOMAIN_OPS
from aot.frontend.onnx.foreign import FOREIGN_OPS
from aot.frontend.onnx.load import MAX_OPSET, MIN_OPSET
from aot.kernels import HOST_OPS

CONTRIB_OPS = _QOPS + FLOAT_OPS  # every com.microsoft op aotc reads

# Ops the frontend handles itself, before any kernel: how.
FRONTEND = {
    "Constant": "becomes a weight",
    "Shape": "folded: shapes are static",
    "Size": "folded: shapes are static",
    "If": "folded to its branch when the condition is known at compile time, else a C if/else around its "
          "branches' kernels (each output of one static shape)",
    "Loop": "a C loop around its body's kernels: trip count counted at compile time, a run-time condition "
            "bounded by M, or a run-time M checked against a scan output's declared rows",
    "Scan": "rewritten as the Loop over its sequence (opset 9+)",
    "Dropout": "removed in inference (a mask that is read becomes a constant); in training with a seed, the "
               "kernel draws its mask as onnx's reference does (numpy's RandomState(seed))",
    "Upsample": "rewritten as Resize",
    "TfIdfVectorizer": "lowered on import to comparisons of shifted slices and sums (integer tokens; no strings)",
    "Sum": "rewritten as a chain of Add",
    "Mean": "rewritten as a chain of Add and a Div",
    "CastLike": "rewritten as Cast",
    "Einsum": "lowered to Transpose, Reshape, ReduceSum and MatMul (1 or 2 operands, no diagonals)",
    "ReverseSequence": "lowered to a Gather of the (batch, time) rows; their indices are a constant when "
                       "sequence_lens is, else computed at run time",
    # sequences of static length and optionals known at compile time (aot/frontend/onnx/sequences.py)
    **{op: "lowered on import: a sequence of static length is its tensors" for op in (
        "SequenceEmpty", "SequenceConstruct", "SequenceLength", "SequenceInsert", "SequenceErase")},
    "SequenceAt": "lowered on import: the element (a constant position), or a Gather of the elements "
                  "stacked (a run-time one)",
    "SplitToSequence": "lowered on import to a Split (split constant or absent)",
    "ConcatFromSequence": "lowered on import to a Concat (of the elements unsqueezed: new_axis)",
    "SequenceMap": "unrolled on import: its body once per element",
    "Col2Im": "lowered to a ScatterElements adding the columns at their image positions (a constant map); "
              "a run-time block_shape must be the one the shapes fit",
    "TensorScatter": "lowered to a ScatterElements at each batch's write index on (linear or circular)",
    "MaxUnpool": "lowered to a ScatterND of X at its indices into zeros (a Pad for a larger output_shape; a "
                 "run-time output_shape must be the declared output's)",
    **{op: "lowered on import: an optional is present or absent at compile time" for op in (
        "Optional", "OptionalHasElement", "OptionalGetElement")},
}


# ai.onnx.ml and ai.onnx.preview.training ops written as ai.onnx ops on import (foreign.py, gradient.py)
FOREIGN = {
    "Adagrad": "lowered on import to its update formula in ai.onnx ops",
    "Adam": "lowered on import to its update formula in ai.onnx ops",
    "Momentum": "lowered on import to its update formula in ai.onnx ops (standard or nesterov)",
    "Gradient": "lowered on import to the reverse-mode derivative through Add, Sub, Mul, Div and Neg of one shape",
    "Binarizer": "lowered on import to Greater and Cast",
    "ArrayFeatureExtractor": "lowered on import to a Gather on the last axis",
    "TreeEnsemble": "lowered on import to comparisons and MatMuls over its root-to-leaf paths (SUM, AVERAGE; no "
                    "post_transform)",
    # scikit-learn's estimators as skl2onnx writes them (sklearn_ops.py)
    "LinearClassifier": "lowered on import to Gemm, ArgMax and its post_transform (NONE, LOGISTIC, SOFTMAX, "
                        "SOFTMAX_ZERO, PROBIT)",
    "LinearRegressor": "lowered on import to Gemm (post_transform NONE or PROBIT)",
    "SVMClassifier": "lowered on import to its kernel (LINEAR, POLY, RBF, SIGMOID) against the support vectors, "
                     "one-vs-one votes and, for two classes, Platt's probability (more classes with probability: "
                     "refused)",
    "SVMRegressor": "lowered on import to its kernel against the support vectors and a MatMul",
    "TreeEnsembleClassifier": "lowered on import as TreeEnsemble is, then its base values and post_transform "
                              "(SUM, AVERAGE)",
    "TreeEnsembleRegressor": "lowered on import as TreeEnsemble is, then its base values (SUM, AVERAGE)",
    "Normalizer": "lowered on import to the row's L1, L2 or MAX and a Div",
    "Scaler": "lowered on import to Sub and Mul",
    "Imputer": "lowered on import to a comparison and Where (numbers)",
    "OneHotEncoder": "lowered on import to comparisons with its integer categories",
    "LabelEncoder": "lowered on import to comparisons and Where (number keys and values)",
    "ZipMap": "as a model output: the [N, classes] probability tensor it wraps (metadata.json names the classes)",
}


@dataclass(frozen=True)
class OpRow:
    op: str
    domain: str  # "" for ai.onnx
    how: str  # "kernel" or what the frontend does with it
    dtypes: tuple[str, ...]  # of input 0, where a kernel runs it
    opsets: tuple[int, ...]  # the op's versions (since_version) that aotc reads
    vendors: tuple[str, ...]  # built-in vendors that take it


@functools.cache
def _since_versions() -> dict[str, tuple[int, ...]]:
    """ai.onnx op -> its versions (since_version) up to the highest opset aotc reads, read once."""
    since: dict[str, set[int]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == "" and s.since_version <= MAX_OPSET:
            since.setdefault(s.name, set()).add(s.since_version)
    return {op: tuple(sorted(vs)) for op, vs in since.items()}


def _versions(op: str, domain: str) -> tuple[int, ...]:
    if domain:
        return ()
    since = _since_versions().get(op, ())
    first = [v for v in since if v <= MIN_OPSET][-1:]  # the version in force at the lowest opset read
    return tuple(first + [v for v in since if v > MIN_OPSET])


def _vendor_ops() -> dict[str, tuple[str, ...]]:
    """op -> the built-in vendors whose checkers take it (plugins are not part of the page)."""
    from importlib.metadata import entry_points

    from aot.vendor import GROUP

    taken: dict[str, list[str]] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if not ep.value.startswith("aot.vendor."):
            continue
        for op in ep.load().checkers:
            taken.setdefault(op, []).append(ep.name)
    return {op: tuple(vs) for op, vs in taken.items()}


def _is_onnx(op: str) -> bool:
    return onnx.defs.has(op)


def rows() -> list[OpRow]:
    vendors = _vendor_ops()
    out = []
    names = {op for op in HOST_OPS if _is_onnx(op) or op in CONTRIB_OPS}
    names |= {op for op in RULES if _is_onnx(op) or op in CONTRIB_OPS + ONNX_DOMAIN_OPS} | set(FRONTEND)
    # com.microsoft ops named as ONNX ops of another meaning: their IR names carry the domain
    shadowed = {op for op in RULES if op.startswith(f"{CONTRIB_DOMAIN}.")}
    for op in sorted(names | shadowed, key=lambda o: (o.removeprefix(f"{CONTRIB_DOMAIN}."), o in shadowed)):
        if op in shadowed:
            out.append(OpRow(op.removeprefix(f"{CONTRIB_DOMAIN}."), CONTRIB_DOMAIN,
                             "rewritten by the frontend into other ops", (), (), vendors.get(op, ())))
            continue
        domain = CONTRIB_DOMAIN if op in CONTRIB_OPS and not _is_onnx(op) else ""
        # onnxruntime's own ops in the ONNX domain (no schema there: no versions)
        domain = "onnxruntime's, ONNX domain" if op in ONNX_DOMAIN_OPS else domain
        host = HOST_OPS.get(op)
        if host is not None:
            how, dtypes = "kernel" + (f" ({FRONTEND[op]})" if op in FRONTEND else ""), host.dtypes
        elif op in FRONTEND:
            how, dtypes = FRONTEND[op], ()
        else:
            how, dtypes = "rewritten by the frontend into other ops", ()
        out.append(OpRow(op, domain, how, tuple(dtypes), _versions(op, domain), vendors.get(op, ())))
    for domain, ops in FOREIGN_OPS.items():
        out.extend(OpRow(op, domain, FOREIGN[op], (), (), ()) for op in ops)
    return sorted(out, key=lambda r: r.op)


def _cells(r: OpRow) -> list[str]:
    return [r.op + (f" ({r.domain})" if r.domain else ""), r.how, ", ".join(r.dtypes) or "-",
            ", ".join(map(str, r.opsets)) or "-", ", ".join(r.vendors) or "-"]


HEAD = ["op", "how", "dtypes (input 0)", "versions read (since)", "vendors"]


def markdown() -> str:
    table = rows()
    lines = [
        "# Supported ops",
        "",
        "Generated from the kernel table by `aotc ops --markdown`; do not edit. aotc reads opsets "
        f"{MIN_OPSET} to {MAX_OPSET} (1 to {MIN_OPSET - 1} upgraded to {MIN_OPSET} on import). \"kernel\": a host C "
        "kernel runs the op, for the dtypes listed "
        "(of its first input). Versions are the op's own (since_version) that fall in that range. Vendors "
        "are the built-in ones whose checkers take the op (they may refuse some attributes; `aotc partition "
        "--show --explain` says why). Any op whose inputs are all constants is folded at compile time and is "
        "not listed.",
        "",
        f"{len(table)} ops.",
        "",
        "| " + " | ".join(HEAD) + " |",
        "|" + "---|" * len(HEAD),
    ]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(r)) + " |" for r in table]
    return "\n".join(lines) + "\n"


def text(op: str | None = None) -> str:
    table = rows()
    if op is not None:
        match = [r for r in table if r.op.lower() == op.lower()]
        if not match:
            return f"{op}: not compiled by aotc (unless all its inputs are constants: then it is folded)\n"
        return "".join(f"{h}: {c}\n" for r in match for h, c in zip(HEAD, _cells(r), strict=True))
    cells = [HEAD, *(_cells(r) for r in table)]
    widths = [min(max(len(c[k]) for c in cells), 48) for k in range(len(HEAD))]
    return "".join("  ".join(c[k].ljust(widths[k]) for k in range(len(HEAD))).rstrip() + "\n" for c in cells) + \
        f"{len(table)} ops; aotc ops OP for one, aotc ops --markdown for docs/ops.md\n"
