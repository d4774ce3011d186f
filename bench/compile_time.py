"""Compile time against graph size, on synthetic models built in memory (issue 13: near-linear).

    python bench/compile_time.py [--sizes 500 1000 2000 5000 10000] [--hidden 32] [--repeat 3]
                                 [--dag-sizes 250 1000] [--no-convnext] [--profile] [--top 30]

Three model families, so a superlinear pass shows up as seconds per 1,000 nodes growing with size:
  gru       an unrolled GRU-like recurrence of plain ops (Slice, Concat, MatMul, Add, Sigmoid, Split,
            Tanh, Mul, Sub), 15 nodes a step, plus one Concat of every step's state (the sequence
            output); a small hidden size keeps the weights small, so the time is the compiler's own
  convnext  a ConvNeXt-T-shaped conv net (depths 3-3-9-3): depthwise 7x7, channel LayerNorm in plain
            ops, pointwise convs with an Erf GELU, layer scale, residual adds (a few hundred nodes)
  dag       MatMuls between random widths with residual Adds to recent tensors of the same width:
            the planner's greedy orders miss the lower bound here, so its squeaky-wheel repair
            runs, to its budget where it misses too (the case that made a ConvNeXt-sized graph
            spend 43 s placing buffers)

Times `aot.compiler.compile_file` (what `aotc MODEL -o OUT --no-configure` runs; no C build), the
median of --repeat runs for graphs under 2,000 nodes, one run above. Prints a markdown table;
--profile prints the top cProfile entries (cumulative time) of the largest GRU compile.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from aot.compiler import Options, compile_file

GRU_NODES_PER_STEP = 15


class _Model:
    """Nodes and initializers collected while a model is written; fresh names by counter."""

    def __init__(self, seed: int = 0) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def name(self, kind: str) -> str:
        self.count += 1
        return f"{kind}{self.count}"

    def const(self, value: np.ndarray, kind: str = "c") -> str:
        name = self.name(kind)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weights(self, *shape: int) -> str:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 2 else shape[0]
        return self.const((self.rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), "w")

    def op(self, op: str, inputs: list[str], n_out: int = 1, **attrs) -> list[str]:
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name("n"), **attrs))
        return outs

    def __call__(self, op: str, *inputs: str, **attrs) -> str:
        return self.op(op, list(inputs), **attrs)[0]

    def build(self, name: str, inputs: list[onnx.ValueInfoProto], outputs: list[str]) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs,
                                  [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                                  self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def gru_model(nodes: int, hidden: int = 32, features: int = 16) -> onnx.ModelProto:
    """About `nodes` ONNX nodes: steps of z, r = sigmoid([x, h] Wzr + b); n = tanh(x Wn + r * (h Un));
    h = (1 - z) * n + z * h. Outputs: the last state and every step's state concatenated."""
    steps = max(1, (nodes - 1) // GRU_NODES_PER_STEP)
    m = _Model()
    w_zr, b_zr = m.weights(features + hidden, 2 * hidden), m.const(np.zeros(2 * hidden, np.float32), "b")
    w_n, u_n = m.weights(features, hidden), m.weights(hidden, hidden)
    one, axes = m.const(np.ones((1, 1), np.float32)), m.const(np.array([0], np.int64))
    h = m.const(np.zeros((1, hidden), np.float32), "h0")
    states = []
    for t in range(steps):
        x = m("Slice", "x", m.const(np.array([t], np.int64)), m.const(np.array([t + 1], np.int64)), axes)
        zr = m("Sigmoid", m("Add", m("MatMul", m("Concat", x, h, axis=1), w_zr), b_zr))
        z, r = m.op("Split", [zr], 2, axis=1)
        n = m("Tanh", m("Add", m("MatMul", x, w_n), m("Mul", r, m("MatMul", h, u_n))))
        h = m("Add", m("Mul", m("Sub", one, z), n), m("Mul", z, h))
        states.append(h)
    seq = m("Concat", *states, axis=0)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, (steps, features))]
    return m.build(f"gru{steps}", inputs, [h, seq])


def convnext_model(size: int = 64, dims: tuple[int, ...] = (16, 32, 64, 128),
                   depths: tuple[int, ...] = (3, 3, 9, 3)) -> onnx.ModelProto:
    """ConvNeXt-T's structure at a small width and input (so weights stay small)."""
    m = _Model()
    half, eps, root2 = (m.const(np.array(v, np.float32)) for v in (0.5, 1e-6, np.sqrt(2.0)))

    def conv(x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1) -> str:
        w, b = m.weights(cout, cin // group, k, k), m.const(np.zeros(cout, np.float32), "b")
        pad = (k - 1) // 2 if stride == 1 else 0
        return m("Conv", x, w, b, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group)

    def layer_norm(x: str, c: int) -> str:  # over channels, in plain ops
        d = m("Sub", x, m("ReduceMean", x, axes=[1]))
        var = m("ReduceMean", m("Mul", d, d), axes=[1])
        y = m("Div", d, m("Sqrt", m("Add", var, eps)))
        return m("Add", m("Mul", y, m.const(np.ones((1, c, 1, 1), np.float32), "g")),
                 m.const(np.zeros((1, c, 1, 1), np.float32), "beta"))

    def gelu(x: str) -> str:
        return m("Mul", m("Mul", x, m("Add", m("Erf", m("Div", x, root2)), m.const(np.float32(1.0)))), half)

    x = layer_norm(conv("x", 3, dims[0], 4, stride=4), dims[0])
    for stage, (c, depth) in enumerate(zip(dims, depths, strict=True)):
        if stage:
            x = conv(layer_norm(x, dims[stage - 1]), dims[stage - 1], c, 2, stride=2)
        for _ in range(depth):
            y = gelu(conv(layer_norm(conv(x, c, c, 7, group=c), c), c, 4 * c, 1))
            y = m("Mul", conv(y, 4 * c, c, 1), m.const(np.full((1, c, 1, 1), 1e-6, np.float32), "ls"))
            x = m("Add", x, y)
    x = m("ReduceMean", layer_norm(x, dims[-1]), axes=[2, 3], keepdims=0)
    x = m("Gemm", x, m.weights(10, dims[-1]), m.const(np.zeros(10, np.float32), "b"), transB=1)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 3, size, size))]
    return m.build("convnext", inputs, [x])


def dag_model(nodes: int, widths: tuple[int, ...] = (8, 32, 128, 512), seed: int = 0) -> onnx.ModelProto:
    """About `nodes` nodes: x = MatMul(x, W[w_in, w_out]) at a random width, then Add of a tensor
    of that width among the last 12 (kept alive across steps) or a Relu; weights shared per pair."""
    m = _Model(seed)
    weights: dict[tuple[int, int], str] = {}
    x, width = "x", widths[0]
    made = [(x, width)]
    for _ in range(nodes // 2):
        out = int(m.rng.choice(widths))
        if (width, out) not in weights:
            weights[width, out] = m.weights(width, out)
        y = m("MatMul", x, weights[width, out])
        same = [t for t, w in made[-12:-1] if w == out]
        x, width = (m("Add", y, same[int(m.rng.integers(len(same)))]) if same else m("Relu", y)), out
        made.append((x, width))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, widths[0]))]
    return m.build(f"dag{nodes}", inputs, [x])


def time_compile(model: onnx.ModelProto, repeat: int, work: Path) -> float:
    """Median seconds of compile_file on the saved model (loading included, no C build)."""
    path = work / f"{model.graph.name}.onnx"
    onnx.save(model, path)
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        compile_file(path, Options(name=model.graph.name))
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def profile_compile(model: onnx.ModelProto, work: Path, top: int) -> None:
    path = work / f"{model.graph.name}.onnx"
    onnx.save(model, path)
    prof = cProfile.Profile()
    prof.enable()
    compile_file(path, Options(name=model.graph.name))
    prof.disable()
    print(f"\n## cProfile: {model.graph.name} ({len(model.graph.node)} nodes), top {top} by cumulative time\n")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(top)
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(top)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="*", default=[500, 1000, 2000, 5000, 10000],
                   help="GRU graph sizes in ONNX nodes (approximate)")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--dag-sizes", type=int, nargs="*", default=[250, 1000],
                   help="sizes of the DAG whose placement misses the lower bound")
    p.add_argument("--repeat", type=int, default=3, help="runs per graph under 2,000 nodes (median)")
    p.add_argument("--no-convnext", action="store_true")
    p.add_argument("--profile", action="store_true", help="cProfile the largest GRU graph's compile")
    p.add_argument("--top", type=int, default=30)
    args = p.parse_args()
    models = [gru_model(n, args.hidden) for n in sorted(args.sizes)]
    if not args.no_convnext:
        models.append(convnext_model())
    models += [dag_model(n) for n in sorted(args.dag_sizes)]
    rows = ["| model | nodes | seconds | s / 1,000 nodes |", "|---|---:|---:|---:|"]
    with tempfile.TemporaryDirectory(prefix="aotc-ct-") as tmp:
        for model in models:
            n = len(model.graph.node)
            secs = time_compile(model, args.repeat if n < 2000 else 1, Path(tmp))
            rows.append(f"| {model.graph.name} | {n} | {secs:.2f} | {secs * 1000 / n:.2f} |")
            print(rows[-1], file=sys.stderr, flush=True)
        print("\n".join(rows))
        if args.profile and args.sizes:
            profile_compile(gru_model(max(args.sizes), args.hidden), Path(tmp), args.top)


if __name__ == "__main__":
    main()
