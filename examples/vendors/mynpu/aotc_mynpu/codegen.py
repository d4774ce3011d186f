"""mynpu's codegen: one transformed function (transform.py) -> a C file of calls into the device library.

What the bundle gets for each function:

    vendor/mynpu/mynpu.h, mynpu.c     the device library (device/): the same bytes for every function, as
                                      aotc requires of a file that several functions ship
    vendor/mynpu/<symbol>.c, .h       the function: checks its DLTensors, runs each node in order

    int32_t <symbol>_init(void *state);      opens the device handle in the function's state
    int32_t <symbol>(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace, void *state);

Its intermediates live in the workspace, placed by aotc's planner (ctx.plan_workspace; Relu, Add and
Requant write over their first input). Weights and biases go to ctx.weights (blocked at compile time by
the transform). Every node's output is tapped for `aotc compare`: in the model's layout, which for an
NHWC tensor means a copy transposed back, made only in the debug variant (AOTC_TAPS).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from aot.errors import AotcError
from aot.ir import Function, Graph, Node, Tensor
from aot.vendor import Artifact, CodegenContext
from aotc_mynpu.ops import REQUANT_OP, requant_attrs
from aotc_mynpu.transform import CONV, NHWC_NAMES, channels_last, inverse

DEVICE = Path(__file__).parent / "device"
DEVICE_FILES = ("mynpu.h", "mynpu.c")
# the device library's global names: the bundle renames them under its kernel configuration's prefix (keyed by
# DEVICE_FILES' content), so that two models' bundles with mynpu functions link into one program
DEVICE_SYMBOLS = ["mynpu_open", "mynpu_begin", "mynpu_conv2d", "mynpu_relu", "mynpu_add", "mynpu_requant",
                  "mynpu_permute"]
# put before the bundle's copy of mynpu.h: the library itself knows nothing of aotc, and a firmware build of the
# bundle needs no flag for the renaming
RENAMES = "/* added by aotc_mynpu: the bundle's names for this library's functions */\n#include \"aotc_symbols.h\"\n\n"
DEVICE_BYTES = 24  # MYNPU_DEVICE_BYTES in device/mynpu.h (a C check fails the build if they differ)
IN_PLACE = ("Relu", "Add", REQUANT_OP)  # elementwise: the output may overwrite the first input
ERR_TENSOR = "MYNPU_ERR_TENSOR"


class _Writer:
    """The C of one function: declarations before it, statements in its body."""

    def __init__(self, fn: Function, ctx: CodegenContext) -> None:
        self.fn, self.ctx, self.g = fn, ctx, fn.graph
        self.c = ctx.format
        self.idents = ctx.format.CNames(prefixes=(f"{fn.global_symbol}_",))  # C names made from ONNX names
        self.plan = ctx.plan_workspace(self.g, inplace=lambda n: 0 if n.op in IN_PLACE else None)
        self.nhwc: dict[str, str] = self.g.meta.get(NHWC_NAMES, {})  # NHWC tensor -> the model's tensor
        self.decls: list[str] = []
        self.body: list[str] = []
        self.refs: dict[str, str] = {}
        self.tap_floats = 0  # the debug variant's buffer for taps transposed back to the model's layout
        self.tap_decls: list[str] = []  # and the tables of those transposes (declared in it only)
        self.macs = 0

    def ref(self, name: str) -> str:
        """The C expression of a tensor's data."""
        if name in self.refs:
            return self.refs[name]
        g, t = self.g, self.g.tensors[name]
        if t.is_const:
            dims = ",".join(map(str, t.shape))
            ref = self.ctx.weights.add(self.idents.fresh(name, "w_"), t.data.astype(np.float32),
                                       f'"{name}" float32[{dims}]')
        elif name in g.inputs:
            ref = f"((const float *)inputs[{g.inputs.index(name)}]->data)"
        elif name in g.outputs:
            ref = f"((float *)outputs[{g.outputs.index(name)}]->data)"
        else:  # an intermediate: where the plan put it
            ref = f"((float *)((uint8_t *)workspace + {self.plan.offsets[name]}u))"
        self.refs[name] = ref
        return ref

    def node(self, n: Node) -> None:
        self.body.append(f'/* {n.op} "{self.c.c_comment(n.name)}" */')
        y = self.g.tensors[n.outputs[0]]
        if n.op == CONV:
            self.conv(n)
        elif n.op == "Relu":
            self.body.append(f"mynpu_relu({y.size}u, {self.ref(n.inputs[0])}, {self.ref(y.name)});")
        elif n.op == "Add":
            self.body.append(f"mynpu_add({y.size}u, {self.ref(n.inputs[0])}, {self.ref(n.inputs[1])}, "
                             f"{self.ref(y.name)});")
        elif n.op == REQUANT_OP:
            scale, zero_point = requant_attrs(n.attrs)
            self.body.append(f"mynpu_requant({y.size}u, {self.c.c_float(scale)}, {zero_point}, "
                             f"{self.ref(n.inputs[0])}, {self.ref(y.name)});")
        elif n.op == "Transpose":
            self.transpose(n)
        else:  # the checkers never let one through; a hand-edited partition file could
            raise AotcError(f"mynpu has no lowering for {n.op}", node=n)
        self.tap(n, y)

    def conv(self, n: Node) -> None:
        g, a = self.g, n.attrs
        if a["layout"] != "NHWC" or "block" not in a:
            raise AotcError("mynpu codegen takes a mynpu.Conv its transform left NHWC and blocked", node=n)
        x, y = g.tensors[n.inputs[0]], g.tensors[n.outputs[0]]
        (nb, h, w, c), (_, oh, ow, oc) = x.shape, y.shape
        (kh, kw), (sh, sw), pads = a["kernel_shape"], a["strides"], a["pads"]
        depthwise = int(a["group"] != 1)
        params = self.idents.fresh(n.name, "p_")
        self.decls.append(
            f"static const mynpu_conv_params {params} = {{ .n = {nb}, .h = {h}, .w = {w}, .c = {c}, .oh = {oh}, "
            f".ow = {ow}, .oc = {oc}, .kh = {kh}, .kw = {kw}, .sh = {sh}, .sw = {sw}, .pad_top = {pads[0]}, "
            f".pad_left = {pads[1]}, .depthwise = {depthwise}, .block = {a['block']}, .relu = {a['relu']} }};")
        bias = self.ref(n.inputs[2]) if n.inputs[2] else "NULL"
        residual = self.ref(n.inputs[3]) if n.inputs[3] else "NULL"
        self.body.append(f"if ((rc = mynpu_conv2d(dev, &{params}, {self.ref(x.name)}, {self.ref(n.inputs[1])}, "
                         f"{bias}, {residual}, {self.ref(y.name)})) != 0) return rc;")
        self.macs += nb * oh * ow * oc * kh * kw * (1 if depthwise else c)

    def transpose(self, n: Node) -> None:
        """A boundary the function got in the model's layout (mynpu.nhwc): the device permutes it."""
        x = self.g.tensors[n.inputs[0]]
        self.body.append(self.permute(x.shape, n.attrs["perm"], self.ref(x.name), self.ref(n.outputs[0]), self.decls))

    def permute(self, shape: tuple[int, ...], perm: list[int], src: str, dst: str, decls: list[str]) -> str:
        """A call of mynpu_permute, its tables declared in `decls`."""
        dims, order = self.idents.fresh("dims", "k_"), self.idents.fresh("perm", "k_")
        rank = len(shape)
        decls.append(f"static const int32_t {dims}[{rank}] = {{{', '.join(map(str, shape))}}};")
        decls.append(f"static const int32_t {order}[{rank}] = {{{', '.join(map(str, perm))}}};")
        return f"if ((rc = mynpu_permute({rank}, {dims}, {order}, {src}, {dst})) != 0) return rc;"

    def tap(self, n: Node, y: Tensor) -> None:
        """Report y to `aotc compare` as the model's tensor: y itself, or (NHWC) a copy in the model's layout."""
        model_name = self.nhwc.get(y.name)
        if model_name is None:
            self.body.append(self.ctx.tap(n, y, self.ref(y.name)))
            return
        perm = inverse(channels_last(len(y.shape)))
        model = Tensor(model_name, tuple(y.shape[p] for p in perm), y.dtype)
        self.tap_floats = max(self.tap_floats, y.size)
        self.body += ["#if defined(AOTC_TAPS)",
                      self.permute(y.shape, perm, self.ref(y.name), f"{self.fn.global_symbol}_tap",
                                   self.tap_decls),
                      self.ctx.tap(n, model, f"{self.fn.global_symbol}_tap"),
                      "#endif"]


def _checks(g: Graph, w: _Writer) -> list[str]:
    """The DLTensors the function is given must be what it was compiled for."""
    checks = []
    for kind, names in (("inputs", g.inputs), ("outputs", g.outputs)):
        for k, t in enumerate(names):
            shape = g.tensors[t].shape
            var = w.idents.fresh(f"shape_{kind}{k}", "k_")
            w.decls.append(f"static const int64_t {var}[{max(len(shape), 1)}] = "
                           f"{{{', '.join(map(str, shape)) or '0'}}};")
            checks.append(f"if (bad_tensor({kind}[{k}], {len(shape)}, {var})) return {ERR_TENSOR};")
    return checks


_BAD_TENSOR = """\
static int bad_tensor(const DLTensor *t, int32_t ndim, const int64_t *shape) {
    int32_t d;
    if (t == NULL || t->data == NULL || t->ndim != ndim || t->dtype.code != kDLFloat || t->dtype.bits != 32 ||
        t->dtype.lanes != 1 || t->strides != NULL)
        return 1;
    for (d = 0; d < ndim; ++d)
        if (t->shape[d] != shape[d]) return 1;
    return 0;
}
"""


def codegen(fn: Function, ctx: CodegenContext) -> Artifact:
    """C for one function (module docstring); Artifact.workspace_bytes is what aotc's planner placed, and
    `report` says what stacking the same buffers one after another would have taken."""
    w = _Writer(fn, ctx)
    for n in fn.graph.nodes:
        w.node(n)
    g, sym = fn.graph, fn.global_symbol
    checks = _checks(g, w)
    run = f"int32_t {sym}(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace, void *state)"
    init = f"int32_t {sym}_init(void *state)"
    tap_buffer = ["#if defined(AOTC_TAPS) /* the debug variant (aotc compare): taps in the model's layout */",
                  f"static float {sym}_tap[{w.tap_floats}];", *w.tap_decls, "#endif", ""] if w.tap_floats else []
    source = "\n".join([
        f"/* Generated by the mynpu vendor for function {sym} of model {ctx.model_name}. Do not edit. */",
        "#include <stddef.h>", *ctx.weights_includes, '#include "dltensor.h"', '#include "mynpu.h"',
        f'#include "{sym}.h"', "",
        *[d + "\n" for d in ctx.weights.declarations()],  # after the last add
        *w.decls, "", *tap_buffer, _BAD_TENSOR,
        f"{init} {{", "    return mynpu_open((mynpu_device *)state);", "}", "",
        f"{run} {{",
        "    mynpu_device *dev = (mynpu_device *)state;",
        "    int32_t rc;",
        "    (void)workspace;",
        *["    " + line for line in checks],
        "    if ((rc = mynpu_begin(dev)) != 0) return rc;",
        *["    " + line if not line.startswith("#") else line for line in w.body],
        "    return 0;", "}", ""])
    guard = ctx.format.c_ident(sym).upper() + "_H"
    header = (f"/* mynpu function {sym}: DLTensor in, DLTensor out; its state is a mynpu_device. */\n"
              f"#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n\n#include \"dltensor.h\"\n\n"
              f"{init};\n{run};\n\n#endif /* {guard} */\n")
    device = {f: (DEVICE / f).read_text() for f in DEVICE_FILES}
    # the bundle's copy of the library's header renames its names first (mynpu.c and the functions include it)
    device["mynpu.h"] = RENAMES + device["mynpu.h"]
    bump = sum(-(-t.nbytes // w.plan.alignment) * w.plan.alignment for t in g.activations()
               if t.name not in g.outputs and t.name in w.plan.offsets)
    return Artifact(
        files={f"{sym}.c": source, f"{sym}.h": f"{header}", **device},
        sources=[f"{sym}.c", "mynpu.c"],
        header=f"{sym}.h",
        workspace_bytes=w.plan.nbytes,
        state_bytes=DEVICE_BYTES,
        symbols=DEVICE_SYMBOLS,
        runtime=list(DEVICE_FILES),
        report={"mynpu_macs": w.macs, "mynpu_block": int(ctx.options["block"]),
                "workspace_stacked_bytes": bump, "workspace_lower_bound_bytes": w.plan.lower_bound},
    )
