"""The aotc command.

    aotc MODEL.onnx -o OUT [--target T] [--name N]     compile; OUT/bundle + CMake build tree OUT
    aotc run OUT --inputs IN.npz --outputs OUT.npz      run the built runner
    aotc bench OUT [--inputs IN.npz] [--repeat N] [--instructions]
                                                        bundle vs onnxruntime, same inputs, one run
    aotc footprint OUT                                  flash and RAM of the built bundle -> OUT/footprint.json
    aotc compare [MODEL.onnx] OUT [--inputs IN.npz] [--tolerance T] [--lsb N]
                                                        every intermediate tensor vs onnxruntime: a table
                                                        of error per node, naming the first node beyond
                                                        tolerance (also inside vendor functions); exit 0
                                                        if none, 1 if one diverges (aot/compare.py)
    aotc partition MODEL.onnx --vendor V [--annotate F] -o P.onnx [--show]   the partition as ONNX
    aotc --list-targets                                 the targets, with their memory
"""

from __future__ import annotations

import argparse
import sys
import traceback
import warnings
from pathlib import Path

from aot import __version__
from aot.errors import AotcError

SUBCOMMANDS = ("run", "bench", "footprint", "partition")
EXIT_BAD_INPUT = 2  # the model, an option or a file the user gave is at fault: the message says what to change
EXIT_INTERNAL = 3  # aotc itself failed


def _compile_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aotc", description="Compile an ONNX model to a standalone C project.",
                                epilog="Other commands: aotc run OUT ..., aotc bench OUT ... (see aotc run -h); "
                                "aotc compare [MODEL] OUT: error of every intermediate tensor against onnxruntime, "
                                "naming the first node that diverges (see aotc compare -h).")
    p.add_argument("model", help="the ONNX model file")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output directory (bundle + build tree)")
    p.add_argument("--target", default="host",
                   help="target to configure the build for (default: host; see --list-targets)")
    p.add_argument("--list-targets", action="store_true", help="list the targets with their memory, and exit")
    p.add_argument("--name", help="C name of the model (default: the file's stem)")
    _vendor_args(p)
    p.add_argument("--no-configure", action="store_true", help="write OUT/bundle only, do not run CMake")
    p.add_argument("--print-plan", action="store_true", help="print the memory plan as an ASCII chart")
    p.add_argument("--scratch-floor", type=int, metavar="BYTES", default=0,
                   help="kernel scratch any step may use beyond the memory spare at that step (default 0: the "
                        "arena is the tight bound); more lets some kernels take larger blocks, for RAM")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("--version", action="version", version=f"aotc {__version__}")
    return p


def _input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    name, _, dims = text.rpartition("=")
    try:
        shape = tuple(int(d) for d in dims.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=D0,D1,... (e.g. input=1,3,224,224), got '{text}'") from None
    if not name:
        raise argparse.ArgumentTypeError(f"expected NAME=D0,D1,..., got '{text}'")
    return name, shape


def _vendor_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input-shape", action="append", default=[], type=_input_shape, metavar="NAME=D0,D1,...",
                   help="static shape for an input with dynamic dimensions (repeat per input)")
    p.add_argument("--vendor", action="append", default=[], metavar="V",
                   help="offload what vendor V takes (repeat; the order is the priority)")
    p.add_argument("--annotate", metavar="FILE", help="manual annotation (JSON): nodes or regions per target")


def _partition_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aotc partition", description="Partition a model between vendors and write "
                                "it as ONNX, each region a local function in domain aotc.<vendor>.")
    p.add_argument("model", help="the ONNX model file")
    p.add_argument("-o", "--output", metavar="P.onnx", help="where to write the partitioned model")
    p.add_argument("--name", help="C name of the model (default: the file's stem)")
    _vendor_args(p)
    p.add_argument("--show", action="store_true", help="print a table of the functions and write a picture "
                   "of the graph (P.svg with Graphviz, else P.html) beside the output")
    p.add_argument("--explain", action="store_true", help="with --show: why each host node was not offloaded")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _compare_parser() -> argparse.ArgumentParser:
    from aot.compare import DEFAULT_LSB, DEFAULT_TOLERANCE

    p = argparse.ArgumentParser(
        prog="aotc compare", description="Run a debug build of OUT's bundle that reports every intermediate "
        "tensor (on the host, or under qemu for a cross target) and onnxruntime on the same inputs; print the "
        "error of each node's tensors in execution order and name the first node beyond tolerance, also "
        "inside vendor functions that expose their tensors. The debug build goes to OUT/compare/.",
        epilog="Exit status: 0 when every tensor is within tolerance, 1 when one diverges, 2 on bad input.")
    p.add_argument("model", nargs="?", metavar="MODEL.onnx",
                   help="the ONNX model for onnxruntime (default: the one OUT was compiled from)")
    p.add_argument("out", metavar="OUT", help="a directory written by `aotc MODEL -o OUT`")
    p.add_argument("--inputs", metavar="IN.npz", help="inputs keyed by the model's input names "
                   "(default: seeded random inputs of the right shapes and dtypes)")
    p.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE, metavar="T",
                   help="float tensors: max abs error allowed, times max(1, max |reference|) "
                   f"(default {DEFAULT_TOLERANCE:g})")
    p.add_argument("--lsb", type=int, default=DEFAULT_LSB, metavar="N",
                   help=f"int8/uint8/int16/int32 tensors: difference allowed in LSB (default {DEFAULT_LSB}); "
                   "int64 and bool tensors must be equal")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _run_parser(cmd: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"aotc {cmd}")
    p.add_argument("out", metavar="OUT", help="a directory written by `aotc MODEL -o OUT`")
    if cmd == "footprint":
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        return p
    p.add_argument("--inputs", metavar="IN.npz", required=cmd == "run", help="inputs keyed by the model's input names")
    if cmd == "run":
        p.add_argument("--outputs", metavar="OUT.npz", required=True, help="where to write the outputs")
        p.add_argument("--repeat", type=int, default=0, help="also time this many runs and print the median")
    else:
        p.add_argument("--repeat", type=int, default=50, help="timed runs per engine and round (default 50)")
        p.add_argument("--rounds", type=int, default=3,
                       help="rounds timing the bundle and onnxruntime back to back (default 3; medians over them)")
        p.add_argument("--instructions", action="store_true",
                       help="also count the instructions of one inference under valgrind --tool=callgrind")
        p.add_argument("--model", help="ONNX model for onnxruntime (default: the one OUT was compiled from)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    if not debug:  # a library's warning (e.g. numpy's, while folding constants) is not for the user
        warnings.simplefilter("ignore")
    try:
        if "--list-targets" in argv:
            from aot.targets import list_targets

            print(list_targets(), end="")
            return 0
        if argv and argv[0] == "partition":
            return _cmd_partition(_partition_parser().parse_args(argv[1:]))
        if argv and argv[0] == "compare":
            return _cmd_compare(_compare_parser().parse_args(argv[1:]))
        if argv and argv[0] in SUBCOMMANDS:
            args = _run_parser(argv[0]).parse_args(argv[1:])
            return {"run": _cmd_run, "bench": _cmd_bench, "footprint": _cmd_footprint}[argv[0]](args)
        return _cmd_compile(_compile_parser().parse_args(argv))
    except AotcError as e:
        if debug:
            traceback.print_exc()
        print(f"aotc: error: {e.one_line()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # not the model's fault: ours
        if debug:
            traceback.print_exc()
        what = f"{type(e).__name__}: {e}".replace("\n", " ")
        hint = "" if debug else "; rerun with --debug for the traceback"
        print(f"aotc: internal error (a bug in aotc, not in your model): {what}{hint}", file=sys.stderr)
        return EXIT_INTERNAL


def _cmd_compile(args: argparse.Namespace) -> int:
    from aot.build import configure
    from aot.compiler import Options, compile_file
    from aot.progress import status

    out = Path(args.output)
    with status(f"compiling {args.model}"):
        bundle = compile_file(args.model, Options(name=args.name, target=args.target, vendors=tuple(args.vendor),
                                                     annotate=args.annotate, input_shapes=tuple(args.input_shape),
                                                     scratch_floor=args.scratch_floor))
    bundle.write(out / "bundle")
    if args.print_plan:
        print(bundle.files.get("plan.txt", ""), end="")
    if not args.no_configure:
        with status(f"configuring {out} for {args.target}"):
            configure(out, args.target)
    mem = bundle.metadata["memory"]
    tight = mem["tight_bound_bytes"]
    over = "" if mem["arena_bytes"] <= tight else \
        f", {mem['arena_bytes'] - tight} of them kernel scratch above the tight bound"
    print(f"aotc: wrote {out / 'bundle'} ({bundle.name}: arena {mem['arena_bytes']} bytes, I/O included{over}; "
          f"weights {mem['weights_bytes']} bytes); build with: cmake --build {out}")
    return 0


def _cmd_partition(args: argparse.Namespace) -> int:
    from aot.compiler import Options, partition_model
    from aot.frontend import load_model
    from aot.partition.serialize import to_onnx
    from aot.partition.show import explain, function_table, write_picture

    if not args.output and not args.show:
        raise AotcError("nothing to do: give -o P.onnx and/or --show")
    source = str(Path(args.model).resolve())
    parted = partition_model(load_model(args.model), Options(name=args.name, vendors=tuple(args.vendor),
                                                              annotate=args.annotate,
                                                              input_shapes=tuple(args.input_shape)), source)
    graph = parted.graph
    if args.output:
        import onnx

        onnx.save(to_onnx(graph, graph.meta["onnx"]), args.output)
        print(f"aotc: wrote {args.output} ({len(graph.functions)} functions)")
    if args.show:
        from aot.compiler import codegen_functions

        try:  # each vendor's report on its functions (e.g. simulated cycles): needs their codegen
            reports = {sym: art.report for sym, art in codegen_functions(graph, "host", parted.vendors).items()}
        except AotcError as e:
            reports = {}
            print(f"aotc: note: no vendor reports ({e.one_line()})", file=sys.stderr)
        print(function_table(graph, reports), end="")
        if args.explain:
            print(explain(graph, parted.refusals), end="")
        base = Path(args.output or Path(args.model).with_suffix(".partition.onnx"))
        print(f"aotc: wrote {write_picture(graph, base)}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from aot.build import run_bundle
    from aot.npz import load_inputs, save_outputs

    out = Path(args.out)
    meta = _metadata(out)
    inputs = load_inputs(args.inputs, meta)
    outputs, median_ns = run_bundle(out, meta, inputs, repeat=args.repeat)
    save_outputs(args.outputs, outputs)
    if median_ns is not None:
        print(f"aotc: median {median_ns / 1e3:.1f} us per inference over {args.repeat} runs")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from aot.bench import bench_one, format_table

    out = Path(args.out)
    row = bench_one(out, _metadata(out), inputs_npz=args.inputs, repeat=args.repeat, model=args.model,
                    instructions=args.instructions, rounds=args.rounds)
    print(format_table([row]), end="")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from aot.compare import compare, format_table, verdict

    out = Path(args.out)
    result = compare(out, _metadata(out), model=args.model, inputs_npz=args.inputs, tolerance=args.tolerance,
                     lsb=args.lsb)
    print(format_table(result.rows), end="")
    print(verdict(result.rows, args.tolerance, args.lsb))
    print(f"aotc: both sides' tensors: {result.directory / 'taps.npz'}, {result.directory / 'reference.npz'}")
    return 1 if result.first else 0


def _cmd_footprint(args: argparse.Namespace) -> int:
    from aot.build import build
    from aot.footprint import summary, write_footprint
    from aot.progress import status

    out = Path(args.out)
    meta = _metadata(out)
    with status(f"building {out}"):
        build(out)
    print(summary(write_footprint(out, meta)))
    print(f"aotc: wrote {out / 'footprint.json'}")
    return 0


def _metadata(out: Path) -> dict:
    import json

    path = out / "bundle" / "metadata.json"
    if not path.is_file():
        raise AotcError(f"'{out}' holds no aotc bundle (no {path}); compile with: aotc MODEL.onnx -o {out}")
    return json.loads(path.read_text())


if __name__ == "__main__":
    sys.exit(main())
