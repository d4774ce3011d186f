"""A dnnl function's graph -> the tables its C describes: tensors, ops with post-ops, constants.

Each node (or composite) becomes one oneDNN op (aotc_dnnl_op in runtime_c/vendor/dnnl/aotc_dnnl.h).
Whatever can be decided at compile time is decided here, so the runtime stays a plain loop:
ONNX dilations become oneDNN's (d - 1), Gemm's alpha, beta and transB are folded into [K, N]
weights and a bias row, a bias Add after a Conv is folded into the Conv's bias, and pads are
adjusted for ceil_mode pooling. int8 convolutions and dense layers get their requantisation as
oneDNN's scales, zero points and a clip post-op (quant.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aot.errors import AotcError
from aot.ir import Function, Graph, Node
from aot.passes.fuse_activation import FuseActivation
from aot.vendor.dnnl.checkers import BINARY, ELTWISE, VIEWS, binary_operands
from aot.vendor.dnnl.quant import QLinear, qadd, qlinear


@dataclass
class PostOp:
    kind: str  # "ELTWISE", "SUM", "BINARY" or "SWISH" (the last one only: run by the runtime, not oneDNN)
    alg: str = "0"
    alpha: float = 0.0
    beta: float = 0.0
    tensor: str | None = None  # SUM: the residual; BINARY: the second operand


@dataclass
class Op:
    kind: str  # CONV, MATMUL, POOL, BNORM, LRN, SOFTMAX, BINARY, ELTWISE, CONCAT, RESHAPE
    what: str  # for the C comment: composite or op name, and the ONNX node
    inputs: list[str]
    output: str
    alg: str = "0"
    fields: dict[str, Any] = field(default_factory=dict)  # other aotc_dnnl_op fields
    post: list[PostOp] = field(default_factory=list)


@dataclass
class TensorEntry:
    name: str
    shape: tuple[int, ...]
    kind: str  # INPUT, OUTPUT, INTERNAL, CONST
    dtype: str = "float32"  # float32, int8, uint8 or int32
    index: int = 0
    last_use: int = -1


@dataclass
class Lowered:
    tensors: dict[str, TensorEntry]
    ops: list[Op]
    consts: list[tuple[str, np.ndarray]]  # CONST tensors' data, by index

    def tensor_id(self, name: str) -> int:
        return list(self.tensors).index(name)


class _Lowering:
    def __init__(self, graph: Graph):
        self.g: Graph = graph
        self.tensors: dict[str, TensorEntry] = {}
        self.consts: list[tuple[str, np.ndarray]] = []
        self.ops: list[Op] = []
        for k, t in enumerate(self.g.inputs):
            self.tensors[t] = TensorEntry(t, self.g.tensors[t].shape, "INPUT", self.g.tensors[t].dtype, k)

    # --- tensors ------------------------------------------------------------------------
    def use(self, name: str) -> str:
        """Register a tensor of the function graph (constants get an index into the weights)."""
        if name not in self.tensors:
            value = self.g.const(name)
            if value is not None:
                return self.const(name, value, self.g.tensors[name].dtype)
            self.tensors[name] = TensorEntry(name, self.g.tensors[name].shape, "INTERNAL", self.g.tensors[name].dtype)
        return name

    def const(self, name: str, value: np.ndarray, dtype: str = "float32") -> str:
        """A constant for the op tables: registered once under `name`."""
        if name not in self.tensors:
            arr = np.ascontiguousarray(np.asarray(value, dtype=dtype))
            self.tensors[name] = TensorEntry(name, tuple(arr.shape), "CONST", dtype, len(self.consts))
            self.consts.append((name, arr))
        return name

    def output(self, name: str, shape: tuple[int, ...] | None = None) -> str:
        self.tensors[name] = TensorEntry(name, shape or self.g.tensors[name].shape, "INTERNAL",
                                         self.g.tensors[name].dtype)
        return name

    def emit(self, op: Op) -> None:
        op.inputs = [self.use(i) if i else "" for i in op.inputs]
        for p in op.post:
            if p.tensor:
                self.use(p.tensor)
        self.output(op.output)
        self.ops.append(op)

    # --- nodes ------------------------------------------------------------------------------
    def node(self, n: Node) -> None:
        if n.op == "Composite":
            self.composite(n)
        elif n.op == "Conv":
            self.conv(n, n.name, None, [])
        elif n.op in ("Gemm", "MatMul"):
            self.dense(n, n.name, n.outputs[0], None, [])
        elif n.op == "QLinearConv":
            self.qconv(n)
        elif n.op in ("QGemm", "QLinearMatMul"):
            self.qdense(n)
        elif n.op == "QLinearAdd":
            self.qadd(n)
        elif n.op in ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"):
            self.pool(n)
        elif n.op == "ReduceMean":
            self.reduce_mean(n)
        elif n.op == "BatchNormalization":
            self.batchnorm(n, n.name, n.outputs[0], relu=False)
        elif n.op == "LRN":
            a = n.attrs
            self.emit(Op("LRN", f'LRN "{n.name}"', [n.inputs[0]], n.outputs[0],
                         fields={"local_size": a["size"], "alpha": a["alpha"], "beta": a["beta"], "k": a["bias"]}))
        elif n.op in ("Softmax", "LogSoftmax"):
            a = n.attrs
            alg = "dnnl_softmax_accurate" if n.op == "Softmax" else "dnnl_softmax_log"
            self.emit(Op("SOFTMAX", f'{n.op} "{n.name}"', [n.inputs[0]], n.outputs[0], alg,
                         {"kernel": [a["outer"], a["n"], a["inner"]]}))
        elif n.op in BINARY:
            s0, s1 = binary_operands(n, self.g)
            self.emit(Op("BINARY", f'{n.op} "{n.name}"', [s0, s1], n.outputs[0], BINARY[n.op]))
        elif n.op in ELTWISE:
            alg, alpha, beta = ELTWISE[n.op](n.attrs)
            self.emit(Op("ELTWISE", f'{n.op} "{n.name}"', [n.inputs[0]], n.outputs[0], alg,
                         {"alpha": alpha, "beta": beta}))
        elif n.op == "Concat":
            self.emit(Op("CONCAT", f'Concat "{n.name}"', list(n.inputs), n.outputs[0],
                         fields={"axis": n.attrs["axis"]}))
        elif n.op in VIEWS:
            self.emit(Op("RESHAPE", f'{n.op} "{n.name}"', [n.inputs[0]], n.outputs[0]))
        else:
            raise AotcError("the dnnl vendor has no lowering for this op", node=n)

    def composite(self, n: Node) -> None:
        """Core op, then its bias Adds (folded), a residual Add (sum post-op), an activation."""
        body = n.attrs["body"]
        core, rest = body.nodes[0], body.nodes[1:]
        what = f'{n.attrs["composite"]} "{n.name}"'
        value, extra_bias, post = core.outputs[0], None, []
        for m in rest:
            if m.op == "Add":
                other = m.inputs[1] if m.inputs[0] == value else m.inputs[0]
                c = body.const(other)
                if c is not None:
                    extra_bias = c if extra_bias is None else extra_bias + c
                else:
                    post.append(PostOp("SUM", tensor=other))
            elif m.op in ELTWISE:
                alg, alpha, beta = ELTWISE[m.op](m.attrs)
                post.append(PostOp("ELTWISE", alg, alpha, beta))
            value = m.outputs[0]
        if core.op == "Conv":
            self.conv(core, what, extra_bias, post, out=n.outputs[0], graph=body)
        elif core.op == "BatchNormalization":
            self.batchnorm(core, what, n.outputs[0], relu=True, graph=body)
        else:
            self.dense(core, what, n.outputs[0], extra_bias, post, graph=body)

    def conv(self, n: Node, what: str, extra_bias: np.ndarray | None, post: list[PostOp],
             out: str | None = None, graph: Graph | None = None) -> None:
        g = graph or self.g
        a = n.attrs
        nd = len(a["kernel_shape"])
        out = out or n.outputs[0]
        cout = g.tensors[n.inputs[1]].shape[0]
        bias = g.const(n.inputs[2]) if len(n.inputs) > 2 and n.inputs[2] else None
        inputs = [n.inputs[0], self.const(n.inputs[1], g.const(n.inputs[1]))]
        if extra_bias is not None:
            total = extra_bias.reshape(-1).astype(np.float64) + (0.0 if bias is None else bias.astype(np.float64))
            inputs.append(self.const(f"{n.name}__bias", np.broadcast_to(total, (cout,))))
        elif bias is not None:
            inputs.append(self.const(n.inputs[2], bias))
        fields = {"strides": a["strides"], "dilation": [d - 1 for d in a["dilations"]], "pad_l": a["pads"][:nd],
                  "pad_r": a["pads"][nd:], "groups": a["group"]}
        self.emit(Op("CONV", what, inputs, out, fields=fields, post=post))

    def dense(self, n: Node, what: str, out: str, extra_bias: np.ndarray | None, post: list[PostOp],
              graph: Graph | None = None) -> None:
        """Gemm / MatMul -> matmul with weights [K, N] and an optional bias row [1, N] (or [M, N])."""
        g = graph or self.g
        b = g.const(n.inputs[1]).astype(np.float64)
        bias = None
        if n.op == "Gemm":
            a = n.attrs
            b = (b.T if a["transB"] else b) * a["alpha"]
            if len(n.inputs) > 2 and n.inputs[2]:
                bias = g.const(n.inputs[2]).astype(np.float64) * a["beta"]
        m, k_n = g.tensors[out].shape[:-1], b.shape[1]
        if extra_bias is not None:
            bias = extra_bias.astype(np.float64) if bias is None else bias + extra_bias
        inputs = [n.inputs[0], self.const(f"{n.name}__weights", b)]
        if bias is not None:
            rows = int(np.prod(m)) if bias.ndim == 2 and bias.shape[0] > 1 else 1
            inputs.append(self.const(f"{n.name}__bias", np.broadcast_to(bias, (rows, k_n))))
        self.emit(Op("MATMUL", what, inputs, out, post=post))

    def quant_inputs(self, n: Node, q: QLinear, bias_shape: tuple[int, ...]) -> list[str]:
        """[weights, bias, source zero point, destination zero point] ("" for no bias, and for a zero
        point of 0: the primitive then has none)."""
        def zero_point(what: str, value: int) -> str:
            return self.const(f"{n.name}__{what}", [value], "int32") if value else ""

        return [self.const(f"{n.name}__weights", q.weights, "int8"),
                self.const(f"{n.name}__bias", q.bias.reshape(bias_shape)) if q.bias is not None else "",
                zero_point("x_zero", q.x_zero), zero_point("y_zero", q.y_zero)]

    def quant_post(self, n: Node, q: QLinear, scale_shape: tuple[int, ...]) -> list[PostOp]:
        """The requantisation as post-ops on (float)(acc + bias): times each channel's scale (a binary
        post-op over a [1, C, 1...] tensor), clipped to a fused Relu / Clip's range, rounded half to
        even, so that the destination zero point is added to a whole number (quant.py)."""
        scales = self.const(f"{n.name}__scales", q.scale.reshape(scale_shape))
        post = [PostOp("BINARY", "dnnl_binary_mul", tensor=scales)]
        if q.clip is not None:
            post.append(PostOp("ELTWISE", "dnnl_eltwise_clip", *q.clip))
        if q.y_zero:
            post.append(PostOp("ELTWISE", "dnnl_eltwise_round"))
        return post

    def qconv(self, n: Node) -> None:
        """QLinearConv -> an int8 convolution: inputs [x, weights, bias, scales, x_zero, y_zero]."""
        q = qlinear(n, self.g)
        a = n.attrs
        nd = len(a["kernel_shape"])
        fields = {"strides": a["strides"], "dilation": [d - 1 for d in a["dilations"]], "pad_l": a["pads"][:nd],
                  "pad_r": a["pads"][nd:], "groups": a["group"], "quant": 1}
        scale_shape = (1, -1, *[1] * nd)  # broadcast over the output [N, C, spatial...]
        self.emit(Op("CONV", f'QLinearConv "{n.name}"', [q.x, *self.quant_inputs(n, q, (-1,))], q.y, fields=fields,
                     post=self.quant_post(n, q, scale_shape)))

    def qdense(self, n: Node) -> None:
        """QGemm / QLinearMatMul -> an int8 matmul of A viewed as [M, K] and weights [K, N]."""
        q = qlinear(n, self.g)
        inputs = self.quant_inputs(n, q, (1, -1))  # the bias a row [1, N], as the float matmul takes it
        self.emit(Op("MATMUL", f'{n.op} "{n.name}"', [q.x, *inputs], q.y, fields={"quant": 1},
                     post=self.quant_post(n, q, (1, -1))))

    def qadd(self, n: Node) -> None:
        """QLinearAdd -> binary add: inputs [src0, src1, src0's scale, src1's scale] (quant.QAdd)."""
        q = qadd(n, self.g)
        s0, s1 = binary_operands(n, self.g)
        swapped = (s0, s1) != (n.inputs[0], n.inputs[3])  # b has the output's shape, a broadcasts
        mults = (q.b_mult, q.a_mult) if swapped else (q.a_mult, q.b_mult)
        scales = [self.const(f"{n.name}__scale{k}", [m]) for k, m in enumerate(mults)]
        post = [PostOp("ELTWISE", "dnnl_eltwise_linear", 1.0, q.bias)]
        if q.clip is not None:
            post.append(PostOp("ELTWISE", "dnnl_eltwise_clip", *q.clip))
        self.emit(Op("BINARY", f'QLinearAdd "{n.name}"', [s0, s1, *scales], n.outputs[0], "dnnl_binary_add",
                     fields={"quant": 1}, post=post))

    def pool(self, n: Node) -> None:
        x = self.g.tensors[n.inputs[0]].shape
        y = self.g.tensors[n.outputs[0]].shape
        spatial = x[2:]
        if n.op.startswith("Global"):
            kernel, strides, dil, pad_l, pad_r = list(spatial), [1] * len(spatial), [1] * len(spatial), \
                [0] * len(spatial), [0] * len(spatial)
            alg = "dnnl_pooling_max" if n.op == "GlobalMaxPool" else "dnnl_pooling_avg_exclude_padding"
        else:
            a = n.attrs
            nd = len(a["kernel_shape"])
            kernel, strides, dil = a["kernel_shape"], a["strides"], a["dilations"]
            pad_l, pad_r = list(a["pads"][:nd]), list(a["pads"][nd:])
            for i in range(nd):
                # oneDNN wants (in + pad_l + pad_r - extent) / stride + 1 == out exactly (floor);
                # the padding the windows really reach gives that, in ceil_mode too
                needed = (y[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - spatial[i] - pad_l[i]
                if needed >= 0:
                    pad_r[i] = needed
            if n.op == "MaxPool":
                alg = "dnnl_pooling_max"
            elif a["count_include_pad"]:
                alg = "dnnl_pooling_avg_include_padding"
            else:
                alg = "dnnl_pooling_avg_exclude_padding"
        fields = {"kernel": kernel, "strides": strides, "dilation": [d - 1 for d in dil], "pad_l": pad_l,
                  "pad_r": pad_r}
        self.emit(Op("POOL", f'{n.op} "{n.name}"', [n.inputs[0]], n.outputs[0], alg, fields))

    def reduce_mean(self, n: Node) -> None:
        """ReduceMean over the spatial axes -> the average pooling of GlobalAveragePool; without
        keepdims, into [N, C, 1...] first and then a view of it as the output's dims."""
        x = self.g.tensors[n.inputs[0]].shape
        kept = (*x[:2], *[1] * (len(x) - 2))
        out = n.outputs[0]
        if not n.attrs["keepdims"]:
            out = f"{n.outputs[0]}__kept"
            self.tensors[out] = TensorEntry(out, kept, "INTERNAL", self.g.tensors[n.outputs[0]].dtype)
        nd = len(x) - 2
        fields = {"kernel": list(x[2:]), "strides": [1] * nd, "dilation": [0] * nd, "pad_l": [0] * nd,
                  "pad_r": [0] * nd}
        op = Op("POOL", f'ReduceMean "{n.name}"', [n.inputs[0]], out, "dnnl_pooling_avg_exclude_padding", fields)
        if n.attrs["keepdims"]:
            self.emit(op)
        else:
            op.inputs = [self.use(n.inputs[0])]
            self.ops.append(op)
            self.emit(Op("RESHAPE", f'ReduceMean "{n.name}" (keepdims=0)', [out], n.outputs[0]))

    def batchnorm(self, n: Node, what: str, out: str, relu: bool, graph: Graph | None = None) -> None:
        g = graph or self.g
        params = [self.const(i, g.const(i)) for i in n.inputs[1:5]]
        flags = "dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift" + (" | dnnl_fuse_norm_relu" if relu else "")
        self.emit(Op("BNORM", what, [n.inputs[0], *params], out,
                     fields={"epsilon": n.attrs["epsilon"], "flags": flags}))


MAX_POST = 3  # AOTC_DNNL_MAX_POST in aotc_dnnl.h


def lower(fn: Function) -> Lowered:
    graph = FuseActivation().run(fn.graph)  # SiLU (Sigmoid, Mul) as one Swish: a post-op below
    lw = _Lowering(graph)
    for n in graph.nodes:
        lw.node(n)
    _fold_activations(lw, set(graph.outputs))
    for k, t in enumerate(graph.outputs):
        lw.tensors[t].kind, lw.tensors[t].index = "OUTPUT", k
    _last_uses(lw)
    return Lowered(lw.tensors, lw.ops, lw.consts)


def _fold_activations(lw: _Lowering, outputs: set[str]) -> None:
    """An activation (ELTWISE) whose source is a float convolution's or matmul's result read by
    nothing else becomes that op's eltwise post-op: the patterns fuse single-use chains, this also
    takes the ones they cannot see, e.g. a SiLU's Swish after a Conv whose result the Sigmoid and the
    Mul both read (EfficientNet-B0: 49 of them), saving one pass over the tensor and its buffer. A
    swish becomes a SWISH post-op, which the runtime runs over the op's result right after it
    (aotc_dnnl_swish, 0.31 ns per float on AVX-512): oneDNN 3.2's own swish post-op added 3.0-3.4 ms to
    EfficientNet-B0's convolutions (0.5-1.9 ns per float; sums of per-primitive minimum times)."""
    reads: dict[str, int] = {}
    for op in lw.ops:
        for t in [*op.inputs, *(p.tensor for p in op.post if p.tensor)]:
            reads[t] = reads.get(t, 0) + 1
    producer = {op.output: op for op in lw.ops}
    kept = []
    for op in lw.ops:
        src = op.inputs[0] if op.kind == "ELTWISE" else None
        p = producer.get(src) if src else None
        if (p is not None and p.kind in ("CONV", "MATMUL") and not p.fields.get("quant") and len(p.post) < MAX_POST
                and reads.get(src) == 1 and src not in outputs and lw.tensors[src].kind == "INTERNAL"
                and not (p.post and p.post[-1].kind == "SWISH")):
            if op.alg == "dnnl_eltwise_swish":  # by the runtime, after the primitive: faster than oneDNN's
                p.post.append(PostOp("SWISH", op.alg, op.fields["alpha"]))
            else:
                p.post.append(PostOp("ELTWISE", op.alg, op.fields["alpha"], op.fields["beta"]))
            p.what += f" + {op.what}"
            p.output = op.output
            producer[op.output] = p
            del lw.tensors[src]
            continue
        kept.append(op)
    lw.ops = kept


def _last_uses(lw: _Lowering) -> None:
    """The last op reading each tensor, where reading a view counts as reading what it views
    (a RESHAPE output shares its input's bytes): an in-place sum may overwrite a residual only
    when nothing reads those bytes later."""
    root: dict[str, str] = {}
    for op in lw.ops:
        if op.kind == "RESHAPE":
            root[op.output] = root.get(op.inputs[0], op.inputs[0])
    last: dict[str, int] = {}
    for k, op in enumerate(lw.ops):
        for t in [*op.inputs, *(p.tensor for p in op.post if p.tensor)]:
            if t:
                last[root.get(t, t)] = k
    for name, entry in lw.tensors.items():
        entry.last_use = last.get(root.get(name, name), -1)
