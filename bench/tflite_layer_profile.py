"""Per-layer-kind times of an int8 .tflite host bundle beside OpenVINO's own per-layer profile, one thread each.

    python bench/tflite_layer_profile.py MODEL.tflite OUT [--isa avx2] [--repeat 50]

OUT is a directory `aotc MODEL -o OUT` wrote for the host (with --host-isa generic for --isa avx2). aotc's node times
are bench/node_profile.py's (AOTC_TAP as a clock read, the minimum over --repeat runs; with --isa avx2 built at
-march=x86-64-v3); OpenVINO's are its PERF_COUNT times (one thread, one stream, the minimum over --repeat runs per
layer; with --isa avx2 ONEDNN_MAX_CPU_ISA=AVX2 as bench/host_models.py sets it). Layers pair by kind, not by name
(OpenVINO renames them): a conv's kind is its kernel, stride, output plane and channels, read from the .tflite for
aotc and from OpenVINO's runtime graph. aotc fuses a residual ADD into the conv before it, OpenVINO into its conv as
a post-op, so both sides' 1 x 1 expand rows carry their ADDs. Why (issue 64): the whole-net ratio at AVX2 says how
far off ResNet-50 is, this says which kinds of layer.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.node_profile import bundle_profile  # noqa: E402

CFLAGS = {"native": None, "avx2": "-march=x86-64-v3"}
# OpenVINO's layer types under the .tflite op names aotc's rows take (its pads, transposes and reorders stay apart:
# aotc folds the pads into the next op and keeps NHWC throughout)
OV_TYPES = {"Pooling": "max_pool_2d", "FullyConnected": "fully_connected", "Reduce": "mean", "Softmax": "softmax"}


def conv_kind(kh: int, stride: int, oh: int, cin: int, cout: int) -> str:
    """The row a conv's time goes to."""
    if kh == 7:
        return f"stem 7x7 s{stride} -> {oh}x{oh}"
    return f"{kh}x{kh} s{stride} {oh}x{oh} {cin}->{cout}"


def aotc_kinds(model: Path, out: Path, isa: str, repeat: int) -> dict[str, list[float]]:
    """kind -> [us, nodes] of the bundle's taps, the kinds from the .tflite's ops (tap names end in the op index)."""
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(str(model))
    td = {t["index"]: t for t in it.get_tensor_details()}
    ops = {o["index"]: o for o in it._get_ops_details()}
    table: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for node, _, us in bundle_profile(out, repeat, CFLAGS[isa]):
        op = ops[int(node.rsplit("_", 1)[1])]
        if op["op_name"] == "CONV_2D":
            x, w = (td[i]["shape"] for i in op["inputs"][:2])
            y = td[op["outputs"][0]]["shape"]
            kind = conv_kind(int(w[1]), round(x[1] / y[1]), int(y[1]), int(x[3]), int(w[0]))
        else:
            kind = op["op_name"].lower()
        table[kind][0] += us
        table[kind][1] += 1
    return table


def openvino_kinds(model: Path, isa: str, repeat: int, compiles: int = 3) -> dict[str, list[float]]:
    """kind -> [us, layers] of OpenVINO's PERF_COUNT minima, convs' kinds from the runtime graph's shapes. Each
    kind's time is its least over `compiles` compiled models (on a loaded machine one compiled model's layer minima
    came out up to 2x apart from another's: the 6 3 x 3 convs on 14 x 14 5567 us once, 10258 once)."""
    if isa == "avx2":
        os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # read when oneDNN loads
    import openvino as ov

    core = ov.Core()
    m = core.read_model(str(model))
    shape = [int(d) for d in m.inputs[0].get_partial_shape().get_min_shape()]
    shape[0] = 1
    m.reshape(shape)
    tables = [openvino_once(core.compile_model(m, "CPU", {"PERF_COUNT": "YES", "INFERENCE_NUM_THREADS": "1",
                                                          "NUM_STREAMS": "1",
                                                          # f32 as aot.bench holds it: bf16 otherwise on a CPU with it
                                                          "INFERENCE_PRECISION_HINT": "f32"}), shape, repeat)
              for _ in range(compiles)]
    return {k: min((t[k] for t in tables if k in t), key=lambda r: r[0]) for k in set().union(*tables)}


def openvino_once(c, shape: list[int], repeat: int) -> dict[str, list[float]]:
    """openvino_kinds' table for one compiled model."""
    import numpy as np

    req = c.create_infer_request()
    x = np.random.default_rng(0).integers(-128, 127, size=shape).astype(c.inputs[0].element_type.to_dtype())
    best: dict[str, float] = {}
    for _ in range(repeat):
        req.infer({0: x})
        for p in req.profiling_info:
            us = p.real_time.total_seconds() * 1e6
            best[p.node_name] = min(us, best.get(p.node_name, us))
    kinds = {}
    for op in c.get_runtime_model().get_ordered_ops():
        name, typ = op.get_friendly_name(), op.get_rt_info()["layerType"].astype(str)
        if typ == "Convolution":
            x, w, y = (op.input(0).get_partial_shape(), op.input(1).get_partial_shape(), op.get_output_partial_shape(0))
            x, w, y = ([int(str(d)) for d in s] for s in (x, w, y))
            kinds[name] = conv_kind(w[-1], round(x[2] / y[2]), y[2], w[1], w[0])
        else:
            kinds[name] = OV_TYPES.get(typ, typ.lower())
    table: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for name, us in best.items():
        if us > 0:
            row = table[kinds.get(name, name)]
            row[0] += us
            row[1] += 1
    return dict(table)


def print_table(ours: dict[str, list[float]], theirs: dict[str, list[float]]) -> None:
    """Markdown rows in aotc's order of time."""
    print("| kind | aotc nodes | aotc us | OpenVINO layers | OpenVINO us | aotc / OpenVINO |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in sorted(set(ours) | set(theirs), key=lambda k: -ours.get(k, [0.0])[0]):
        a, b = ours.get(kind, [0.0, 0]), theirs.get(kind, [0.0, 0])
        ratio = f"{a[0] / b[0]:.2f}" if a[0] and b[0] else "-"
        print(f"| {kind} | {a[1]} | {a[0]:.0f} | {b[1]} | {b[0]:.0f} | {ratio} |")
    ta, tb = sum(r[0] for r in ours.values()), sum(r[0] for r in theirs.values())
    print(f"| all | | {ta:.0f} | | {tb:.0f} | {ta / tb:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("out", type=Path, help="the model's host bundle's output directory")
    ap.add_argument("--isa", choices=sorted(CFLAGS), default="native")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--compiles", type=int, default=3, help="OpenVINO: each kind's least time over this many compiles")
    args = ap.parse_args()
    print_table(aotc_kinds(args.model, args.out, args.isa, args.repeat),
                openvino_kinds(args.model, args.isa, args.repeat, args.compiles))


if __name__ == "__main__":
    main()
