"""demo: a third-party aotc vendor in one file. It takes Relu and LeakyRelu (float32), and a
fused "demo.scale_relu" composite (Mul by a constant, then Relu), and emits plain C loops.
Its transform runs one pass of its own, demo.merge_relu (a Relu of a Relu is that Relu), unless
the user says `--vendor-opt demo.passes=none`.

Everything it needs from aotc comes through `aot.vendor` and the CodegenContext: C text
helpers (`ctx.format`) and the weight store (`ctx.weights`) that holds its constants."""

from __future__ import annotations

from collections.abc import Mapping

from aot.ir import Function, Graph, Node
from aot.partition.pattern import Composite, Const, P, X
from aot.vendor import ACCEPT, Artifact, CodegenContext, Pass, Reject, Vendor, VendorOption, run_passes_tracked


def check_float(node: Node, graph: Graph):
    if graph.tensors[node.inputs[0]].dtype != "float32":
        return Reject("demo takes float32 only")
    return ACCEPT


def same_shape_or_scalar(node: Node, graph: Graph) -> bool:
    c = graph.const(node.inputs[1])
    out = graph.tensors[node.outputs[0]]
    return c is not None and c.dtype == "float32" and (c.size == 1 or c.shape == out.shape)


PATTERNS = (Composite("demo.scale_relu", P("Relu", P("Mul", X, Const(), check=same_shape_or_scalar))),)


class MergeRelu(Pass):
    """Relu(Relu(x)) is Relu(x): the outer Relu goes, the inner one writes its output (when nothing
    else reads the inner one's)."""

    name = "demo.merge_relu"

    def run(self, graph: Graph) -> Graph:
        g = graph.copy()
        readers: dict[str, int] = {}
        for n in g.nodes:
            for i in n.inputs:
                readers[i] = readers.get(i, 0) + 1
        producer = {n.outputs[0]: n for n in g.nodes}
        drop = set()
        for n in g.nodes:
            inner = producer.get(n.inputs[0])
            if n.op == "Relu" and inner is not None and inner.op == "Relu" and inner.name not in drop \
                    and readers[n.inputs[0]] == 1 and n.inputs[0] not in g.outputs:
                inner.outputs = list(n.outputs)
                inner.origin = (*inner.sources(), *n.sources())
                producer[n.outputs[0]] = inner
                drop.add(n.name)
        g.nodes = [n for n in g.nodes if n.name not in drop]
        return g


def transform(fn: Function, options: Mapping[str, str]) -> Function:
    """The vendor's passes, through aotc's runner (which verifies the graph after each and says
    which changed it); what fired is recorded for `aotc partition --show`."""
    passes = [MergeRelu()] if options["passes"] == "all" else []
    graph, fired = run_passes_tracked(fn.graph, passes)
    graph.meta = {**graph.meta, "vendor_passes": fired}
    return Function(fn.global_symbol, fn.compiler, graph, fn.composite)


def codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    c = ctx.format  # aotc's C text helpers: exact float literals, identifiers, comments
    g, sym = fn.graph, fn.global_symbol
    lines, names = [], {}
    for k, t in enumerate(g.inputs):
        names[t] = f"((const float *)inputs[{k}]->data)"
    for k, t in enumerate(g.outputs):
        names[t] = f"((float *)outputs[{k}]->data)"
    offset = 0
    for n in g.nodes:  # intermediates live in the workspace the host planned for us
        for o in n.outputs:
            if o not in names:
                names[o] = f"((float *)((char *)workspace + {offset}))"
                offset += g.tensors[o].nbytes
    for n in g.nodes:
        size = g.tensors[n.outputs[0]].size
        x, y = names[n.inputs[0]], names[n.outputs[0]]
        if n.op == "Composite":
            mul = n.attrs["body"].nodes[0]
            k = g.const(mul.inputs[1])
            if k.size == 1:
                scale = c.c_float(float(k.reshape(-1)[0]))
            else:  # a constant array: into the weight store (a C array, or aotc's blob when large)
                scale = ctx.weights.add(c.c_ident(mul.inputs[1], "k_"), k, f'"{mul.inputs[1]}" float32') + "[i]"
            expr = f"(v = {scale} * {x}[i]) > 0.0f ? v : 0.0f"
        elif n.op == "Relu":
            expr = f"(v = {x}[i]) > 0.0f ? v : 0.0f"
        else:
            expr = f"(v = {x}[i]) >= 0.0f ? v : {c.c_float(n.attrs['alpha'])} * v"
        lines.append(f"    for (i = 0; i < {size}; ++i) {y}[i] = {expr}; /* {c.c_comment(n.name)} */")
    proto = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace)"
    weights = "".join(d + "\n" for d in ctx.weights.declarations())  # after the last add
    source = ("\n".join(ctx.weights_includes) + f'\n#include "{sym}.h"\n\n{weights}\n{proto} {{\n    long i;\n'
              "    float v;\n    (void)workspace;\n" + "\n".join(lines) + "\n    return 0;\n}\n")
    header = f'#include <stdint.h>\n#include "dltensor.h"\n{proto};\n'
    return Artifact(files={f"{sym}.c": source, f"{sym}.h": header}, sources=[f"{sym}.c"], header=f"{sym}.h",
                    workspace_bytes=offset)


VENDOR = Vendor("demo", checkers={"Relu": check_float, "LeakyRelu": check_float}, patterns=PATTERNS,
                codegen=codegen, transform=transform, description="third-party example vendor",
                options={"passes": VendorOption(("all", "none"), "run the vendor's passes (demo.merge_relu) or not")})
