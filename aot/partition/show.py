"""Seeing the partition: a table of functions, refusal reasons, and a picture with regions coloured."""

from __future__ import annotations

import html
import shutil
import subprocess
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from aot.ir import Graph, Node
from aot.passes.fuse_residual import explain_lines

_COLOURS = ["#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69", "#fccde5", "#ffffb3"]


def function_table(graph: Graph, reports: dict[str, dict] | None = None) -> str:
    """One row per function; then each function's scalar report fields (Artifact.report: what its
    vendor's codegen says about it, e.g. simulated cycles), when `reports` are given."""
    rows = [("function", "vendor", "ops", "in bytes", "out bytes")]
    for sym, fn in graph.functions.items():
        g = fn.graph
        counts = Counter(n.attrs["composite"] if n.op == "Composite" else n.op for n in g.nodes)
        ops = ", ".join(op if k == 1 else f"{op} x{k}" for op, k in counts.items())
        rows.append((sym, fn.compiler, ops, str(sum(g.tensors[t].nbytes for t in g.inputs)),
                     str(sum(g.tensors[t].nbytes for t in g.outputs))))
    host = [n for n in graph.nodes if n.op != "Call"]
    widths = [max(len(r[k]) for r in rows) for k in range(5)]
    lines = ["  ".join(c.ljust(w) if k < 3 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append(f"{len(graph.functions)} functions; {len(host)} nodes stay on the host"
                 + (f" ({', '.join(sorted({n.op for n in host}))})" if host else ""))
    for vendor, passes in graph.info.vendor_graph_passes.items():  # its rewrites of the graph before partitioning
        lines.append(f"  {vendor}: graph passes={','.join(passes)}")
    for sym, fn in graph.functions.items():  # what the vendor's own passes did (its transform records it)
        passes = fn.graph.info.vendor_passes
        if passes is not None and "passes" not in (reports or {}).get(sym, {}):
            lines.append(f"  {sym}: passes={','.join(passes) or 'none'}")
    for sym, report in (reports or {}).items():
        fields = [f"{k}={v}" for k, v in report.items() if isinstance(v, (int, float, str))]
        if fields:
            lines.append(f"  {sym}: {' '.join(fields)}")
    return "\n".join(lines) + "\n"


def explain(graph: Graph, refusals: Mapping[str, Mapping[str, str]]) -> str:
    """Why each host node stayed there: `refusals` (Partitioned.refusals) holds each vendor's reason."""
    host = [n for n in graph.nodes if n.op != "Call"]
    lines = ["why these nodes stay on the host:"] if host else []
    for n in host:
        why = refusals.get(n.name, {})
        reason = "; ".join(f"{v}: {r}" for v, r in why.items()) or "placed on the host by hand"
        lines.append(f"  {n.name} ({n.op}): {reason}")
    lines += folds(graph)
    lines += explain_lines(graph)  # what the host code then fuses
    return "\n".join(lines) + ("\n" if lines else "")


def folds(graph: Graph) -> list[str]:
    """Each node that stands for several ONNX nodes (a BatchNorm or constant Mul/Add folded into a
    Conv, a Pad into its pads, transposes merged: the simplification passes record them in origin)."""
    nodes = [(n, "") for n in graph.nodes if n.op != "Call"]
    nodes += [(m, f" [{fn.global_symbol}]") for fn in graph.functions.values() for m in fn.graph.nodes]
    lines = [f"  {n.name} ({n.op}){where}: {', '.join(n.sources())}" for n, where in nodes if len(n.sources()) > 1]
    return ["folded (node: the ONNX nodes it computes):", *lines] if lines else []


def _dot(graph: Graph) -> str:
    colour = {v: _COLOURS[k % len(_COLOURS)] for k, v in
              enumerate(dict.fromkeys(fn.compiler for fn in graph.functions.values()))}
    out = ["digraph partition {", '  rankdir=TB; node [shape=box, style="rounded,filled", fillcolor=white, '
           'fontname="Helvetica", fontsize=10]; edge [fontsize=8, color="#777777"];']
    producer: dict[str, str] = {}

    def node_id(n: Node, prefix: str = "") -> str:
        return _dot_id(prefix + n.name)

    for t in graph.inputs:
        out.append(f'  {_dot_id("in:" + t)} [label="{_label(t)}", shape=ellipse, fillcolor="#eeeeee"];')
        producer[t] = _dot_id("in:" + t)
    for n in graph.nodes:
        if n.op == "Call":
            fn = graph.functions[n.attrs["function"]]
            out.append(f'  subgraph "cluster_{fn.global_symbol}" {{ label="{fn.global_symbol} [{fn.compiler}]"; '
                       f'style=filled; fillcolor="{colour[fn.compiler]}40"; color="{colour[fn.compiler]}";')
            for m in fn.graph.nodes:
                label = m.attrs["composite"] if m.op == "Composite" else m.op
                out.append(f'    {node_id(m)} [label="{_label(label)}\\n{_label(m.name)}", '
                           f'fillcolor="{colour[fn.compiler]}"];')
                for o in m.outputs:
                    producer[o] = node_id(m)
            out.append("  }")
        else:
            out.append(f'  {node_id(n)} [label="{_label(n.op)}\\n{_label(n.name)}"];')
            for o in n.outputs:
                producer[o] = node_id(n)
    for n in graph.nodes:
        inner = graph.functions[n.attrs["function"]].graph.nodes if n.op == "Call" else [n]
        for m in inner:
            for i in m.inputs:
                if i in producer:
                    out.append(f"  {producer[i]} -> {node_id(m)};")
    for t in graph.outputs:
        out.append(f'  {_dot_id("out:" + t)} [label="{_label(t)}", shape=ellipse, fillcolor="#eeeeee"];')
        if t in producer:
            out.append(f'  {producer[t]} -> {_dot_id("out:" + t)};')
    out.append("}")
    return "\n".join(out) + "\n"


def _dot_id(text: str) -> str:
    """Any name as a quoted DOT identifier (ONNX names may hold quotes, backslashes, newlines)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


def _label(text: str) -> str:
    """A name inside a DOT label="...": HTML-escaped, backslashes and line breaks as DOT escapes."""
    return html.escape(text).replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def write_picture(graph: Graph, base: Path) -> Path:
    """base.svg rendered by Graphviz when `dot` is installed, else a self-contained base.html."""
    dot = _dot(graph)
    base = Path(base)
    if shutil.which("dot"):
        svg = base.with_suffix(".svg")
        subprocess.run(["dot", "-Tsvg", "-o", str(svg)], input=dot, text=True, check=True)
        return svg
    page = base.with_suffix(".html")
    page.write_text("<!doctype html><meta charset=utf-8><title>aotc partition</title>"
                    "<p>Graphviz is not installed; this is the graph in DOT (paste into any DOT viewer):</p>"
                    f"<pre>{html.escape(dot)}</pre><pre>{html.escape(function_table(graph))}</pre>\n")
    return page
