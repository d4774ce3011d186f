"""cref codegen: one C file per function, calling cref's own runtime (runtime_c/vendor/cref).

The generated function checks every DLTensor it is given against the shapes it
was compiled for, keeps its intermediates in the workspace the host planned for
it, and hands its weights to the context's weight store (exact hex-float arrays,
or the blob when they are large). It uses nothing of the host generator but what
the CodegenContext gives every vendor: this is the path a third-party vendor takes.
After each node it taps the node's output (ctx.tap), so `aotc compare` locates a
divergence at the node inside the function.
"""

from __future__ import annotations

import numpy as np

from aot.errors import AotcError
from aot.ir import Function, Graph, Node
from aot.paths import runtime_dir
from aot.vendor.base import Artifact, CodegenContext, runtime_symbols

_BINARY = {"Add": "AOTC_CREF_ADD", "Sub": "AOTC_CREF_SUB", "Mul": "AOTC_CREF_MUL"}
_UNARY = {"Relu": "AOTC_CREF_RELU", "Sigmoid": "AOTC_CREF_SIGMOID", "Tanh": "AOTC_CREF_TANH"}


class _Writer:
    def __init__(self, fn: Function, ctx: CodegenContext):
        self.fn = fn
        self.ctx = ctx
        self.g: Graph = fn.graph
        self.c = ctx.format
        self.weights = ctx.weights
        self.decls: list[str] = []
        self.body: list[str] = []
        self.names: dict[str, str] = {}
        self.idents = ctx.format.CNames(prefixes=(f"{fn.global_symbol}_",))  # C names made from ONNX names
        # its intermediates placed by aotc's arena planner; an elementwise op's output over its first input
        self.plan = ctx.plan_workspace(fn.graph, inplace=lambda n: 0 if n.op in _UNARY or n.op in _BINARY else None)
        self.workspace = self.plan.nbytes

    def ref(self, tensor: str) -> str:
        """C expression for a tensor's data inside the function."""
        if tensor in self.names:
            return self.names[tensor]
        g = self.g
        t = g.tensors[tensor]
        if t.is_const:
            self.names[tensor] = self.weights.add(self.idents.fresh(tensor, "w_"), t.data.astype(np.float32),
                                                  f'"{tensor}" float32[{",".join(map(str, t.shape))}]')
        elif tensor in g.inputs:
            self.names[tensor] = f"((const float *)inputs[{g.inputs.index(tensor)}]->data)"
        elif tensor in g.outputs:
            self.names[tensor] = f"((float *)outputs[{g.outputs.index(tensor)}]->data)"
        else:  # an intermediate: where the plan put it in the workspace
            self.names[tensor] = f"((float *)((uint8_t *)workspace + {self.plan.offsets[tensor]}u))"
        return self.names[tensor]

    def gemm(self, node_desc: str, a: str, b: str, c: str | None, y: str, trans_b: int, alpha: float,
             beta: float, relu: bool) -> None:
        g = self.g
        m, k = g.tensors[a].shape
        n = g.tensors[y].shape[1]
        c_kind = 0
        if c:
            cs = g.tensors[c].shape
            c_kind = 3 if int(np.prod(cs)) == 1 else 2 if cs == (m, n) and m != 1 else 1
        var = self.idents.fresh(node_desc, "p_")
        self.decls.append(
            f"static const aotc_cref_gemm_params {var} = {{ .m = {m}, .n = {n}, .k = {k}, .trans_b = {trans_b}, "
            f".alpha = {self.c.c_float(alpha)}, .beta = {self.c.c_float(beta)}, .c_kind = {c_kind}, "
            f".relu = {int(relu)} }};")
        self.body.append(f"aotc_cref_gemm_f32(&{var}, {self.ref(a)}, {self.ref(b)}, "
                         f"{self.ref(c) if c else 'NULL'}, {self.ref(y)});")

    def node(self, n: Node) -> None:
        self.body.append(f'/* {n.op} "{self.c.c_comment(n.name)}" */')
        if n.op == "Composite":
            self.composite(n)
        elif n.op == "Gemm":
            a = n.attrs
            self.gemm(n.name, n.inputs[0], n.inputs[1], n.inputs[2] if len(n.inputs) > 2 and n.inputs[2] else None,
                      n.outputs[0], a["transB"], a["alpha"], a["beta"], False)
        elif n.op == "MatMul":
            self.gemm(n.name, n.inputs[0], n.inputs[1], None, n.outputs[0], 0, 1.0, 1.0, False)
        elif n.op in _BINARY:
            a, b, y = n.inputs[0], n.inputs[1], n.outputs[0]
            size, b_len = self.g.tensors[y].size, self.g.tensors[b].size
            self.body.append(f"aotc_cref_binary_f32({_BINARY[n.op]}, {size}, {self.ref(a)}, {b_len}, "
                             f"{self.ref(b)}, {self.ref(y)});")
        elif n.op in _UNARY:
            size = self.g.tensors[n.outputs[0]].size
            self.body.append(f"aotc_cref_unary_f32({_UNARY[n.op]}, {size}, {self.ref(n.inputs[0])}, "
                             f"{self.ref(n.outputs[0])});")
        else:
            raise AotcError("cref codegen has no lowering for this op", node=n)
        for o in n.outputs:  # reported in aotc compare's debug build; nothing otherwise
            self.body.append(self.ctx.tap(n, self.g.tensors[o], self.ref(o)))

    def composite(self, n: Node) -> None:
        """cref.dense[_relu]: MatMul + bias Add (+ Relu), or Gemm (+ Relu) -> one gemm call."""
        body = n.attrs["body"].nodes
        relu = body[-1].op == "Relu"
        core = body[0]
        y = n.outputs[0]
        if core.op == "Gemm":
            a = core.attrs
            c = core.inputs[2] if len(core.inputs) > 2 and core.inputs[2] else None
            self.gemm(n.name, core.inputs[0], core.inputs[1], c, y, a["transB"], a["alpha"], a["beta"], relu)
        else:
            add = body[1]
            bias = next(i for i in add.inputs if i != core.outputs[0])
            self.gemm(n.name, core.inputs[0], core.inputs[1], bias, y, 0, 1.0, 1.0, relu)


def codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    w = _Writer(fn, ctx)
    for n in fn.graph.nodes:
        w.node(n)
    g, sym = fn.graph, fn.global_symbol
    checks = []
    for kind, names in (("inputs", g.inputs), ("outputs", g.outputs)):
        for k, t in enumerate(names):
            shape = g.tensors[t].shape
            var = f"shape_{kind}{k}"
            w.decls.append(f"static const int64_t {var}[{max(len(shape), 1)}] = "
                           f"{{{', '.join(map(str, shape)) or '0'}}};")
            checks.append(f"if (aotc_cref_check({kind}[{k}], {len(shape)}, {var})) return AOTC_CREF_BAD_TENSOR;")
    header = f"{sym}.h"
    proto = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace)"
    source = "\n".join([
        f"/* Generated by the cref vendor for function {sym} of model {ctx.model_name}. Do not edit. */",
        "#include <stddef.h>", *ctx.weights_includes, "", '#include "aotc_cref.h"', f'#include "{header}"', "",
        *[d + "\n" for d in ctx.weights.declarations()],
        *[d + "\n" for d in w.decls],
        f"{proto} {{",
        *["    " + c for c in checks],
        "    (void)workspace;",
        *["    " + line for line in w.body],
        "    return 0;",
        "}", "",
    ])
    guard = ctx.format.c_ident(sym).upper() + "_H"
    header_text = (f"/* cref function {sym}: DLTensor in, DLTensor out (see aot/vendor/base.py). */\n"
                   f"#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n\n#include \"dltensor.h\"\n\n"
                   f"{proto};\n\n#endif /* {guard} */\n")
    rt = runtime_dir() / "vendor" / "cref"
    return Artifact(
        files={f"{sym}.c": source, header: header_text, "aotc_cref.h": (rt / "aotc_cref.h").read_text(),
               "cref.c": (rt / "cref.c").read_text()},
        sources=[f"{sym}.c", "cref.c"],
        symbols=runtime_symbols("cref/cref.c"),
        header=header,
        workspace_bytes=w.workspace,
        report={"cref_calls": sum(1 for line in w.body if line.startswith("aotc_cref_"))},
    )
