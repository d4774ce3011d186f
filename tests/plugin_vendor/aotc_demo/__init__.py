"""demo: a third-party aotc vendor in one file. It takes Relu and LeakyRelu (float32), and a
fused "demo.scale_relu" composite (Mul by a constant, then Relu), and emits plain C loops.

Everything it needs from aotc comes through `aot.vendor` and the CodegenContext: C text
helpers (`ctx.format`) and the weight store (`ctx.weights`) that holds its constants."""

from __future__ import annotations

from aot.ir import Function, Graph, Node
from aot.partition.pattern import Composite, Const, P, X
from aot.vendor import ACCEPT, Artifact, CodegenContext, Reject, Vendor


def check_float(node: Node, graph: Graph):
    if graph.tensors[node.inputs[0]].dtype != "float32":
        return Reject("demo takes float32 only")
    return ACCEPT


def same_shape_or_scalar(node: Node, graph: Graph) -> bool:
    c = graph.const(node.inputs[1])
    out = graph.tensors[node.outputs[0]]
    return c is not None and c.dtype == "float32" and (c.size == 1 or c.shape == out.shape)


PATTERNS = (Composite("demo.scale_relu", P("Relu", P("Mul", X, Const(), check=same_shape_or_scalar))),)


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
                codegen=codegen, description="third-party example vendor")
