"""The aotc command.

    aotc MODEL -o OUT [--target T] [--name N]          compile (.onnx or .tflite); OUT/bundle + CMake build tree
    aotc run OUT --inputs IN.npz [--outputs OUT.npz]    run the built runner; print a summary of the outputs
    aotc bench OUT [--inputs IN.npz] [--repeat N] [--instructions]
                                                        bundle vs onnxruntime (LiteRT for a bundle from a
                                                        .tflite file), same inputs, one run; on a
                                                        Cortex-M board: instructions per inference and per
                                                        MAC under qemu, and estimated cycles on the M4
    aotc footprint OUT                                  flash and RAM of the built bundle -> OUT/footprint.json
    aotc curve MODEL --target BOARD -o DIR              the RAM-versus-cycles and flash-versus-cycles points the
                                                        budgets reach on a board: a table, DIR/curve.svg and
                                                        DIR/curve.json (aot/curve.py)
    aotc package OUT --platform P [-o DIR]              the bundle's library as a Zephyr module, ESP-IDF component,
                                                        Arduino or PlatformIO library, or CMSIS-Pack (aot/packages)
    aotc compare [MODEL] OUT [--inputs IN.npz] [--tolerance T] [--lsb N] [--reference-kernels ref|builtin|default]
                                                        every intermediate tensor vs onnxruntime (LiteRT
                                                        for a .tflite model): a table of error per node,
                                                        naming the first node beyond tolerance (also inside
                                                        vendor functions); exit 0 if none, 1 if one
                                                        diverges (aot/compare.py)
    aotc partition MODEL.onnx --vendor V [--annotate F] -o P.onnx [--show]   the partition as ONNX
    aotc ops [OP] [--tflite] [--markdown]               the supported ops (ONNX, or TFLite builtins), from the tables
    aotc vendor-test NAME [--ops OP,OP] [--junit FILE]  the vendor test kit: op cases through one vendor vs
                                                        onnxruntime; exit 1 if a claimed case fails (aot/testing)
    aotc --list-targets                                 the targets, with their memory
    aotc --list-vendors                                 the vendors installed, with what they take
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from pathlib import Path

from aot import __version__
from aot.build import BUILD_TYPES, default_build_type
from aot.errors import AotcError
from aot.plan.pools import PoolSpec, parse_pool
from aot.targets import HOST_ISAS
from aot.user_paths import check_input_file, check_output_dir, check_output_file

SUBCOMMANDS = ("run", "bench", "footprint", "partition")
EXIT_BAD_INPUT = 2  # the model, an option or a file the user gave is at fault: the message says what to change
EXIT_INTERNAL = 3  # aotc itself failed


COMMANDS = """commands:
  aotc MODEL -o OUT               compile an .onnx or .tflite file (this page)
  aotc run OUT --inputs IN.npz    run the built bundle and summarise its outputs   (aotc run -h)
  aotc bench OUT                  time the bundle against onnxruntime, same threads (aotc bench -h)
  aotc compare [MODEL] OUT        error of every intermediate tensor against onnxruntime or LiteRT (aotc compare -h)
  aotc footprint OUT              flash and RAM of the built bundle                 (aotc footprint -h)
  aotc curve MODEL --target B -o DIR
                                  RAM and flash versus cycles, each point a budget to pass (aotc curve -h)
  aotc package OUT --platform P   the library as a package: Zephyr, ESP-IDF, Arduino, PlatformIO, CMSIS-Pack
  aotc partition MODEL --vendor V -o P.onnx
                                  the partition between vendors, as ONNX; --show draws it (aotc partition -h)
  aotc ops [OP] [--tflite]        the ops aotc compiles: ONNX (docs/ops.md), TFLite builtins (docs/tflite-ops.md)
  aotc vendor-test NAME           check a vendor's claimed ops against onnxruntime (aotc vendor-test -h)
  aotc --list-targets             targets, with their memory
  aotc --list-vendors             vendors installed, with what they take
"""


def _nonnegative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _pool(text: str) -> PoolSpec:
    """--memory-pool NAME:BYTES (aot/plan/pools.py parse_pool); argparse turns the error into exit 2."""
    try:
        return parse_pool(text)
    except AotcError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix(f"--memory-pool {text}: ")) from None


def _wait_state(text: str) -> tuple[str, int]:
    """aotc bench --wait-state REGION:N."""
    region, sep, n = text.partition(":")
    if not sep or not region or not n.isdigit():
        raise argparse.ArgumentTypeError(f"give REGION:N (N cycles per access, a whole number), got '{text}'")
    return region, int(n)


def _positive(text: str) -> int:
    value = _nonnegative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be 1 or more, got 0")
    return value


def _compile_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aotc",
                                description="Compile an ONNX or TensorFlow Lite model to a standalone C project.",
                                epilog=COMMANDS, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the model: an ONNX file, or a .tflite file")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output folder (bundle + build tree): new, empty, or an earlier aotc output")
    p.add_argument("--force", action="store_true", help="write into OUT even if it holds files aotc did not write")
    p.add_argument("--target", default="host",
                   help="target to configure the build for (default: host; see --list-targets)")
    p.add_argument("--list-targets", action="store_true", help="list the targets with their memory, and exit")
    p.add_argument("--list-vendors", action="store_true", help="list the vendors installed, and exit")
    p.add_argument("--name", help="C name of the model (default: the file's stem)")
    _vendor_args(p)
    p.add_argument("--no-configure", action="store_true", help="write OUT/bundle only, do not run CMake")
    p.add_argument("--build-type", default=default_build_type(), choices=list(BUILD_TYPES),
                   help="CMake build type of the build tree OUT: Release -O3 (default, or what CMake's "
                        "CMAKE_BUILD_TYPE environment variable names), RelWithDebInfo -O2 -g, MinSizeRel -Os, "
                        "Debug -O0 -g")
    p.add_argument("--print-plan", action="store_true", help="print the memory plan as an ASCII chart")
    p.add_argument("--scratch-floor", type=_nonnegative, metavar="BYTES", default=0,
                   help="kernel scratch any step may use beyond the memory spare at that step (default 0: the "
                        "arena is the tight bound); more lets some kernels take larger blocks, for RAM")
    p.add_argument("--ram-budget", type=_positive, metavar="BYTES", default=None,
                   help="the arena must fit these bytes: where the usual plan does not, outputs are written over "
                        "the inputs they are made from where the kernels allow (no extra work), else aotc refuses "
                        "naming the peak step and the least arena it reaches; metadata.json's memory.ram_budget "
                        "says what was traded")
    p.add_argument("--flash-budget", type=_positive, metavar="BYTES", default=None,
                   help="make the library's flash (code and constants, as aotc footprint counts them) fit BYTES: "
                        "--widened-weights' copy dropped, the library at -O2, then -Os, then the portable kernels "
                        "instead of the ISA paths, each only while over (measured by building the library at "
                        "--build-type with the target's compiler), or refuse in one line naming what takes the "
                        "flash and the least reached; metadata.json's flash_budget says what was traded")
    p.add_argument("--separate-weights", action="store_true",
                   help="the model's weights in their own file, src/NAME_weights.bin (a header with the model's "
                        "id, size and CRC-32), not linked into the library: the firmware keeps it anywhere (external "
                        "flash, a file, an update partition) and hands it to NAME_load_weights before the first run, "
                        "which refuses another model's or a damaged one (docs/firmware.md)")
    p.add_argument("--memory-pool", type=_pool, metavar="NAME:BYTES", action="append", default=[],
                   help="a memory pool for the plan (repeat, fastest first; BYTES may end in K or M): the buffers "
                        "read most per byte go to the fastest pool with room, graph inputs and outputs stay in "
                        "the first (the caller's arena), the others are static arrays in sections "
                        ".bss.aotc_pool_NAME; on a board, NAME is a region (see --list-targets). Without it a "
                        "board's arena that does not fit its RAM is split over the board's memories")
    p.add_argument("--threads", type=_positive, metavar="N", default=1,
                   help="threads a run uses (host and Linux targets; default 1): N > 1 gives the bundle a pool of "
                        "N - 1 workers, started by <name>_threads_init(), and links pthreads")
    p.add_argument("--quantized-io", action="store_true",
                   help="quantized models: take the integers of the input's QuantizeLinear and give those of the "
                        "output's DequantizeLinear (scale and zero point in metadata.json and the header)")
    p.add_argument("--fast-math", action="store_true",
                   help="take kernels that are faster but round more than a direct sum: Winograd F(4x4, 3x3) for "
                        "3 x 3 convs (10-30 %% faster, errors up to about 10 x the default kernels'; see README)")
    p.add_argument("--widened-weights", action="store_true",
                   help="Cortex-M cores with SMLAD (M4, M7, M33): store the int8 CONV_2D weights also widened to "
                        "16-bit halves in the layout the DSP path multiplies (twice their bytes of flash more), "
                        "so no weights are widened at run time; with --flash-budget, dropping them is the first "
                        "trade. Recorded in metadata.json (widened_weights: nodes and bytes)")
    p.add_argument("--host-isa", choices=list(HOST_ISAS), metavar="LEVEL",
                   help="the CPU --target host's kernels are chosen for: avx512vnni (avx512f's paths and the QDQ "
                        "convs' VNNI-only one, for a build with AVX-512F and VNNI), avx512f (their AVX-512 paths, "
                        "for a build with AVX-512F) or generic (portable C only, for any CPU). Default: this "
                        "machine's, from /proc/cpuinfo; named, the bundle is the same on any machine. Recorded in "
                        "metadata.json")
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


def _dim(text: str) -> tuple[str, int]:
    name, eq, value = text.rpartition("=")
    try:
        size = int(value)
    except ValueError:
        size = 0
    if not (name and eq) or size < 1:
        raise argparse.ArgumentTypeError(f"expected NAME=SIZE with SIZE >= 1 (e.g. batch=1), got '{text}'")
    return name, size


def _input_value(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not (name and eq and value.strip()):
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE or NAME=V0,V1,... (e.g. sample_rate=16000), "
                                         f"got '{text}'")
    return name, value


def _vendor_opt(text: str) -> tuple[str, str, str]:
    target, eq, value = text.partition("=")
    vendor, dot, key = target.partition(".")
    if not (eq and dot and vendor and key and value):
        raise argparse.ArgumentTypeError(f"expected V.KEY=VALUE (e.g. accel_sim.goal=energy), got '{text}'")
    return vendor, key, value


def _max_dim(text: str) -> tuple[str, int, int]:
    target, _, rows = text.rpartition("=")
    name, _, axis = target.rpartition(":")
    try:
        value = (name, int(axis), int(rows))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected TENSOR:AXIS=N (e.g. selected:0=100), got '{text}'") from None
    if not name or value[1] < 0 or value[2] < 1:
        raise argparse.ArgumentTypeError(f"expected TENSOR:AXIS=N with AXIS >= 0 and N >= 1, got '{text}'")
    return value


def _vendor_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input-shape", action="append", default=[], type=_input_shape, metavar="NAME=D0,D1,...",
                   help="static shape for an input with dynamic dimensions (repeat per input)")
    p.add_argument("--dim", action="append", default=[], type=_dim, metavar="NAME=SIZE",
                   help="size of a named dynamic dimension (an ONNX dim_param such as 'batch' or 'sequence'), "
                        "wherever an input, output or intermediate declares it (repeat per name)")
    p.add_argument("--input-value", action="append", default=[], type=_input_value, metavar="NAME=VALUE",
                   help="pin an input at compile time (a sample rate, a mode flag: a number, or V0,V1,... for a "
                   "tensor; read as the input's dtype and shape): it becomes a constant, what it decides (an If's "
                   "branch, a shape) is compiled for that value, and the bundle no longer takes it (repeat per input)")
    p.add_argument("--max-dim", action="append", default=[], type=_max_dim, metavar="TENSOR:AXIS=N",
                   help="bound of a dimension the data decides (NonMaxSuppression's, NonZero's rows): the arena "
                   "holds N, the op stops at N (repeat per tensor)")
    p.add_argument("--vendor", action="append", default=[], metavar="V",
                   help="offload what vendor V takes (repeat; the order is the priority)")
    p.add_argument("--vendor-opt", action="append", default=[], type=_vendor_opt, metavar="V.KEY=VALUE",
                   help="an option of vendor V for this compile, e.g. accel_sim.goal=energy (repeat; "
                   "aotc --list-vendors lists each vendor's options)")
    p.add_argument("--annotate", metavar="FILE", help="manual annotation (JSON): nodes or regions per target")


def _partition_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aotc partition", description="Partition a model between vendors and write "
                                "it as ONNX, each region a local function in domain aotc.<vendor>.")
    p.add_argument("model", help="the model: an ONNX file, or a .tflite file")
    p.add_argument("-o", "--output", metavar="P.onnx", help="where to write the partitioned model")
    p.add_argument("--name", help="C name of the model (default: the file's stem)")
    _vendor_args(p)
    p.add_argument("--show", action="store_true", help="print a table of the functions; with -o, also write a "
                   "picture of the graph beside P.onnx (P.svg with Graphviz, else P.html)")
    p.add_argument("--explain", action="store_true", help="with --show: why each host node was not offloaded")
    p.add_argument("--transform", action="store_true", help="with -o: write each function as its vendor's "
                   "transform leaves it (the vendor's own nodes, domain aotc.<vendor>); compiling P.onnx gives the "
                   "same programs")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _compare_parser() -> argparse.ArgumentParser:
    from aot.compare import DEFAULT_LSB, DEFAULT_TOLERANCE
    from aot.refs import KERNELS

    p = argparse.ArgumentParser(
        prog="aotc compare", description="Run a debug build of OUT's bundle that reports every intermediate "
        "tensor (on the host, or under qemu for a cross target) and the model's reference on the same inputs: "
        "onnxruntime for an ONNX model, LiteRT for a .tflite file (every tensor kept, matched by TFLite tensor "
        "name). Print the error of each node's tensors in execution order and name the first node beyond "
        "tolerance, also inside vendor functions that expose their tensors. The debug build goes to OUT/compare/.",
        epilog="Exit status: 0 when every tensor is within tolerance, 1 when one diverges, 2 on bad input.")
    p.add_argument("model", nargs="?", metavar="MODEL",
                   help="the .onnx or .tflite model to compare with (default: the one OUT was compiled from)")
    p.add_argument("out", metavar="OUT", help="a directory written by `aotc MODEL -o OUT`")
    p.add_argument("--inputs", metavar="IN.npz", help="inputs keyed by the model's input names "
                   "(default: seeded random inputs of the right shapes and dtypes)")
    p.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE, metavar="T",
                   help="float tensors: max abs error allowed, times max(1, max |reference|) "
                   f"(default {DEFAULT_TOLERANCE:g})")
    p.add_argument("--lsb", type=int, default=None, metavar="N",
                   help=f"int8/uint8/int16/int32 tensors: difference allowed in LSB (default {DEFAULT_LSB} against "
                   "onnxruntime, 0 against LiteRT); int64 and bool tensors must be equal")
    p.add_argument("--reference-kernels", choices=KERNELS, default=None, metavar="K",
                   help="a .tflite model's LiteRT kernels: ref (its reference kernels, BUILTIN_REF, which the "
                   "bundle's integer kernels and TFLM's follow bit for bit: the default), builtin (its optimised "
                   "kernels, no delegate) or default (what LiteRT runs unasked: the optimised kernels with the "
                   "XNNPACK delegate)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _points(text: str) -> int | None:
    """aotc curve --points N (2 or more) or all."""
    if text == "all":
        return None
    value = _positive(text)
    if value < 2:
        raise argparse.ArgumentTypeError("give 2 or more (the unbudgeted build and the least budget), or all")
    return value


def _curve_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aotc curve", description="The RAM-versus-cycles and flash-versus-cycles points aotc reaches for a "
        "model on a bare-metal board, each one a budget you can pass: the model is compiled at a series of "
        "--ram-budget values from none down to the least the compiler accepts (each budget below the arena the "
        "last compile reached), and at --flash-budget values down the levels of aot/flash.py; each is built and "
        "one inference counted under qemu as `aotc bench` counts it (estimated cycles on the M4, mps2-an386; "
        "instructions on the other boards). Prints a table per curve, marks the dominated points (a looser "
        "budget that is slower than a tighter one) and writes DIR/curve.svg and DIR/curve.json.")
    p.add_argument("model", help="the model: an ONNX file, or a .tflite file")
    p.add_argument("--target", required=True, help="a bare-metal board (see --list-targets)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="where curve.svg and curve.json go")
    p.add_argument("--force", action="store_true", help="write into DIR even if it holds other files")
    p.add_argument("--curve", choices=("ram", "flash", "both"), default="both", help="which curves (default both)")
    p.add_argument("--points", type=_points, default=12, metavar="N|all",
                   help="RAM curve: at most N points, the budgets spread evenly from the unbudgeted arena down to "
                        "the least (default 12); all: every plan the planner has, each budget just below the last "
                        "arena (one build and qemu run each: slow on large models)")
    p.add_argument("--name", help="C name of the model (default: the file's stem)")
    p.add_argument("--build-type", default=default_build_type(), choices=list(BUILD_TYPES),
                   help="CMake build type the points are built at (default Release)")
    p.add_argument("--widened-weights", action="store_true",
                   help="compile every point with --widened-weights (the flash curve then starts by dropping them)")
    p.add_argument("--keep-builds", action="store_true", help="keep the build trees in DIR/builds")
    _vendor_args(p)
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _ops_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aotc ops", description="The ONNX ops aotc compiles: how, for which dtypes "
                                "and opsets, and which vendors take them (generated from the kernel table); with "
                                "--tflite, the TFLite builtins, float, int8 and 16x8.")
    p.add_argument("op", nargs="?", help="one op (default: all)")
    p.add_argument("--tflite", action="store_true", help="the TFLite builtin operators instead (docs/tflite-ops.md)")
    p.add_argument("--markdown", action="store_true",
                   help="print the page as Markdown (docs/ops.md; with --tflite, docs/tflite-ops.md)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _cmd_ops(args: argparse.Namespace) -> int:
    if args.tflite:
        from aot.tflite_ops_page import markdown, text
    else:
        from aot.ops_page import markdown, text
    print(markdown() if args.markdown else text(args.op), end="")
    return 0


def _run_parser(cmd: str) -> argparse.ArgumentParser:
    about = {"run": "Run the built bundle on inputs from an .npz file and summarise its outputs (top classes of "
             "a classifier).", "bench": "Time the bundle and onnxruntime (on the bundle's threads) back to back on the "
             "same inputs (with --tflite, LiteRT too; with --openvino, OpenVINO too), each with its CPU time per "
             "inference; a bundle compiled from a .tflite file against LiteRT on that "
             "file (one thread), unless --model gives an ONNX export of it. A bundle for a Cortex-M board runs under "
             "qemu instead: the instructions of one inference (and on the M4, M33, M7 and M55 boards, mps2-an386, "
             "mps2-an505, mps2-an500 and mps3-an547, its cycles estimated from the core's timing rules), per MAC and "
             "as a share of the floor, with the outputs' error against onnxruntime.",
             "footprint": "Build the bundle and measure its code, constants and RAM."}[cmd]
    p = argparse.ArgumentParser(prog=f"aotc {cmd}", description=about)
    p.add_argument("out", metavar="OUT", help="a directory written by `aotc MODEL -o OUT`")
    if cmd == "footprint":
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        return p
    p.add_argument("--inputs", metavar="IN.npz", required=cmd == "run", help="inputs keyed by the model's input names")
    if cmd == "run":
        p.add_argument("--outputs", metavar="OUT.npz", help="also write the outputs, keyed by name")
        p.add_argument("--header", metavar="VECTORS.h",
                       help="also write the inputs and the outputs computed for them as a C header of arrays, a test "
                            "vector for the firmware to check itself on the board (docs/firmware.md)")
        p.add_argument("--repeat", type=_nonnegative, default=0,
                       help="also time this many runs and print the median")
    else:
        p.add_argument("--repeat", type=_positive, default=50, help="timed runs per engine and round (default 50)")
        p.add_argument("--rounds", type=_positive, default=3,
                       help="rounds timing the bundle and onnxruntime back to back (default 3; medians over them)")
        p.add_argument("--instructions", action="store_true",
                       help="also count the instructions of one warm inference under valgrind --tool=callgrind, "
                            "on the bundle's threads: all of them, and the busiest thread's share")
        p.add_argument("--ort-threads", type=_nonnegative, metavar="N", default=None,
                       help="onnxruntime's intra-op threads (default: as many as the bundle uses, 1 unless it was "
                            "compiled with --threads N; 0: onnxruntime's default, one per core)")
        p.add_argument("--profile", action="store_true",
                       help="a Cortex-M bundle: also list the instructions (and the M4's estimated cycles) of one "
                       "inference per function")
        p.add_argument("--nodes", action="store_true",
                       help="a Cortex-M bundle: also list the instructions and estimated cycles of each node of one "
                            "inference (a copy built with AOTC_TAPS in OUT/compare, its tap calls marked under qemu)")
        p.add_argument("--wait-state", type=_wait_state, metavar="REGION:N", action="append", default=[],
                       help="a bundle for a board with a cycle model (M4, M33, M7, M55): charge N more estimated "
                            "cycles for every data access to the board's REGION (an assumed wait state; qemu models "
                            "none), e.g. PSRAM:2 (repeat per region)")
        p.add_argument("--model", help="ONNX model for onnxruntime (default: the one OUT was compiled from; "
                       "a .tflite file is timed in LiteRT instead); inputs and outputs named otherwise than the "
                       "bundle's (a tf2onnx export of its .tflite file) are matched by position when their count and "
                       "shapes agree")
        p.add_argument("--tflite", metavar="FILE.tflite",
                       help="a bundle compiled from ONNX: also time this .tflite file of the same network in LiteRT "
                       "(one thread, its default XNNPACK delegate) in the same rounds, and print bundle / LiteRT and "
                       "bundle / the faster")
        p.add_argument("--openvino", action="store_true",
                       help="also time OpenVINO (pip install openvino; its CPU plugin on one thread, the latency hint, "
                       "f32) on the model onnxruntime reads, or on the .tflite file a bundle was compiled from, in the "
                       "same rounds; the table adds its latency, CPU time, bundle / OpenVINO and the fastest engine")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _return_freed_weights() -> None:
    """glibc serves blocks over its mmap threshold with mmap, so freeing one returns it to the
    system; but that threshold rises to the size of each such block freed (up to 32 MiB), and from
    then on weights freed between passes (the unfolded convs after FoldBatchNorm, the arrays the IR
    replaced) stay in the heap, counted in the peak. A fixed threshold keeps every large array
    mmapped: ResNet-18's compile peaks 25 MiB lower. Only the CLI sets it: the process is ours."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD (glibc's default), now fixed
    except (OSError, AttributeError):  # not glibc (musl has no mallopt): its own allocator's business
        pass


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _return_freed_weights()
    debug = "--debug" in argv
    if not debug:  # a library's warning (e.g. numpy's, while folding constants) is not for the user
        warnings.simplefilter("ignore")
    try:
        if "--list-targets" in argv:
            from aot.targets import list_targets

            print(list_targets(), end="")
            return 0
        if "--list-vendors" in argv:
            print(_list_vendors(), end="")
            return 0
        if argv and argv[0] == "partition":
            return _cmd_partition(_partition_parser().parse_args(argv[1:]))
        if argv and argv[0] == "ops":
            return _cmd_ops(_ops_parser().parse_args(argv[1:]))
        if argv and argv[0] == "curve":
            return _cmd_curve(_curve_parser().parse_args(argv[1:]))
        if argv and argv[0] == "compare":
            return _cmd_compare(_compare_parser().parse_args(argv[1:]))
        if argv and argv[0] == "package":
            from aot.packages.cli import package_command

            return package_command(argv[1:])
        if argv and argv[0] == "vendor-test":
            from aot.testing.cli import vendor_test

            return vendor_test(argv[1:])
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
    except BrokenPipeError:  # `aotc ... | head`: the reader has gone, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:
        if debug:
            traceback.print_exc()
        if isinstance(e, OSError) and e.filename is not None:
            # a path the checks could not foresee (a full disk, a read-only mount): the user's to fix
            print(f"aotc: error: cannot write or read '{e.filename}': {e.strerror}", file=sys.stderr)
            return EXIT_BAD_INPUT
        what = f"{type(e).__name__}: {e}".replace("\n", " ")  # not the model's fault: ours
        hint = "" if debug else "; rerun with --debug for the traceback"
        print(f"aotc: internal error (a bug in aotc, not in your model): {what}{hint}", file=sys.stderr)
        return EXIT_INTERNAL


def _list_vendors() -> str:
    from aot.vendor import available_vendors, find_vendor

    rows = []
    for name in available_vendors():
        try:
            vendor = find_vendor(name)
            rows.append(f"  {name:<12} {vendor.description}")
            rows += [f"  {'':<12}   --vendor-opt {name}.{key}={'|'.join(opt.values)}  {opt.help}"
                     for key, opt in vendor.options.items()]
        except AotcError as e:
            rows.append(f"  {name:<12} (cannot load: {e.one_line()})")
    return "vendors (--vendor V):\n" + "\n".join(rows) + "\n"


def _cmd_compile(args: argparse.Namespace) -> int:
    import shutil

    from aot.build import configure, require_tools
    from aot.compiler import Options, compile_file
    from aot.progress import status
    from aot.targets import get_target
    from aot.vendor import find_vendor

    out = Path(args.output)
    check_input_file(Path(args.model), "model")
    check_output_dir(out, args.force)
    target = get_target(args.target)
    for v in args.vendor:  # a vendor that cannot build for the target is refused before any work
        find_vendor(v).check_target(target)
    with status(f"compiling {args.model}"):
        bundle = compile_file(args.model, Options(name=args.name, target=args.target, vendors=tuple(args.vendor),
                                                     vendor_options=tuple(args.vendor_opt), annotate=args.annotate,
                                                     input_shapes=tuple(args.input_shape), dims=tuple(args.dim),
                                                     input_values=tuple(args.input_value),
                                                     scratch_floor=args.scratch_floor, max_dims=tuple(args.max_dim),
                                                     threads=args.threads, quantized_io=args.quantized_io,
                                                     fast_math=args.fast_math, host_isa=args.host_isa,
                                                     widened_weights=args.widened_weights,
                                                     separate_weights=args.separate_weights,
                                                     ram_budget=args.ram_budget,
                                                     memory_pools=tuple(args.memory_pool),
                                                     flash_budget=args.flash_budget, build_type=args.build_type))
    # A missing cross compiler is refused after the compile, before anything is written: the refusals
    # that need no tool (vendor and target, a model too big for the board) read the same without it.
    if not args.no_configure:
        require_tools(target)
    created = not out.exists()
    bundle.write(out / "bundle")
    if not args.no_configure:
        try:
            with status(f"configuring {out} for {args.target}"):
                configure(out, args.target, build_type=args.build_type)
        except BaseException:
            if created:  # nothing half-made is left behind
                shutil.rmtree(out, ignore_errors=True)
            raise
    mem = bundle.metadata["memory"]
    tight = mem["tight_bound_bytes"]
    workspace = sum(f.get("workspace_bytes", 0) for f in bundle.metadata.get("partition", []))
    over = "" if mem["arena_bytes"] <= tight else \
        f", {mem['arena_bytes'] - tight} of them above what the tensors need" + \
        (" (vendor workspace and kernel scratch)" if workspace else " (kernel scratch)")
    print(f"aotc: wrote {out / 'bundle'} ({bundle.name}: arena {mem['arena_bytes']} bytes, I/O included{over}; "
          f"weights {mem['weights_bytes']} bytes); build with: cmake --build {out}")
    if "pools" in mem:
        print("aotc: memory pools, fastest first: " + ", ".join(
            f"{p['name']} {p['bytes']} of {p['capacity_bytes']} bytes" for p in mem["pools"])
            + " (the first is the arena; the weights are not in a pool)")
    if "ram_budget" in mem:
        from aot.footprint import budget_summary

        print(f"aotc: {budget_summary(mem['ram_budget'])}")
    if "flash_budget" in bundle.metadata:
        from aot.footprint import flash_budget_summary

        print(f"aotc: {flash_budget_summary(bundle.metadata['flash_budget'])}")
    for note in bundle.metadata.get("quantized_io", {}).get("notes", []):
        print(f"aotc: --quantized-io: {note}")
    if args.print_plan:
        print(bundle.files.get("plan.txt", ""), end="")
    return 0


def _cmd_partition(args: argparse.Namespace) -> int:
    from aot.compiler import Options, partition_model
    from aot.frontend import load_model
    from aot.partition.serialize import to_onnx
    from aot.partition.show import explain, function_table, write_picture

    if not args.output and not args.show:
        raise AotcError("nothing to do: give -o P.onnx and/or --show")
    check_input_file(Path(args.model), "model")
    if args.output:
        check_output_file(Path(args.output), "-o")
    source = str(Path(args.model).resolve())
    model = load_model(args.model, dict(args.input_shape))
    parted = partition_model(model, Options(name=args.name, vendors=tuple(args.vendor),
                                            vendor_options=tuple(args.vendor_opt), annotate=args.annotate,
                                            input_shapes=tuple(args.input_shape), dims=tuple(args.dim),
                                            input_values=tuple(args.input_value),
                                            max_dims=tuple(args.max_dim)), source)
    graph = parted.graph
    if args.output:
        import onnx

        from aot.compiler import transform_functions

        transformed = transform_functions(graph, parted.vendors, parted.options) if args.transform else None
        onnx.save(to_onnx(graph, graph.info.folded_onnx, transformed), args.output)
        print(f"aotc: wrote {args.output} ({len(graph.functions)} functions)")
    if args.show:
        from aot.compiler import codegen_functions
        from aot.partition.layout import apply_boundary_layouts

        shown = apply_boundary_layouts(graph, parted.vendors)  # the functions as a compile hands them over
        try:  # each vendor's report on its functions (e.g. simulated cycles): needs their codegen
            reports = {sym: art.report for sym, art in
                       codegen_functions(shown, "host", parted.vendors, parted.options).items()}
        except AotcError as e:
            reports = {}
            print(f"aotc: note: no vendor reports ({e.one_line()})", file=sys.stderr)
        print(function_table(shown, reports), end="")
        if args.explain:
            print(explain(graph, parted.refusals), end="")
        if args.output:  # never into the model's folder unasked: the picture goes beside P.onnx
            print(f"aotc: wrote {write_picture(graph, Path(args.output))}")
        else:
            print("aotc: give -o P.onnx to also draw the partition (P.svg) beside it")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from aot.bench import notes, vendor_threads
    from aot.build import run_bundle
    from aot.npz import describe, describe_rows, load_inputs, npz_path, raw_outputs, save_outputs

    out = Path(args.out)
    meta = _metadata(out)
    check_input_file(Path(args.inputs), "--inputs")
    if args.outputs:
        check_output_file(npz_path(args.outputs), "--outputs")
    if args.header:
        check_output_file(Path(args.header), "--header")
    inputs = load_inputs(args.inputs, meta, out / "bundle")
    vendor_threads(meta)
    outputs, median_ns = run_bundle(out, meta, inputs, repeat=args.repeat)
    print(f"aotc: ran {meta['name']} ({meta.get('target', 'host')}): {len(outputs)} output"
          f"{'s' if len(outputs) != 1 else ''}")
    for name, value in outputs.items():
        print(describe(name, value))
    by_rows: dict[int, list[str]] = {}  # outputs with run-time rows (a detector's): a table per row count
    for spec in meta["outputs"]:
        if spec.get("extent", {}).get("axis") == 0:
            by_rows.setdefault(outputs[spec["name"]].shape[0], []).append(spec["name"])
    for names in by_rows.values():
        print(describe_rows(outputs, names))
    if median_ns is not None:
        print(f"aotc: median {median_ns / 1e3:.1f} us per inference over {args.repeat} runs")
        for note in notes(meta):
            print(f"aotc: {note}")
    if args.header:
        from aot.vectors import vectors_header

        Path(args.header).write_text(vectors_header(meta, inputs, outputs, Path(args.inputs).name))
        print(f"aotc: wrote {args.header} (the inputs and these outputs as C arrays)")
    if args.outputs:
        print(f"aotc: wrote {save_outputs(args.outputs, outputs)}")
        raw = raw_outputs(outputs)
        if raw:  # numpy's .npz names no ml_dtypes type: they are kept as their bytes
            print(f"aotc: note: {', '.join(f'{k} ({outputs[k].dtype.name})' for k in raw)} written as raw bytes "
                  "(void), as .npz cannot name the type: read back with .view(ml_dtypes.<dtype>); "
                  "`aotc run --inputs` takes them as they are")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from aot.bench import bench_board, bench_one, format_board_profile, format_board_table, format_table
    from aot.targets import bundle_target

    out = Path(args.out)
    if args.inputs:
        check_input_file(Path(args.inputs), "--inputs")
    meta = _metadata(out)
    if bundle_target(meta).kind == "bare-metal":  # qemu has no timing: count instructions
        if args.openvino:
            raise AotcError(f"--openvino times engines on this host: {out} is built for a board, whose runs under "
                            "qemu are counted in instructions, not timed")
        row = bench_board(out, meta, inputs_npz=args.inputs, model=args.model, profile=args.profile,
                          wait_states=dict(args.wait_state), nodes=args.nodes)
        print(format_board_table([row]), end="")
        if args.profile:
            print("\n" + format_board_profile(row), end="")
        if row.nodes is not None:
            from aot.bench_nodes import format_node_profile

            print("\n" + format_node_profile(row.nodes, row.instructions, row.cycles), end="")
        return 0
    if args.nodes:
        raise AotcError(f"--nodes counts a board bundle's nodes under qemu: {out} is built for this host "
                        "(bench/node_profile.py times a host bundle's nodes)")
    row = bench_one(out, meta, inputs_npz=args.inputs, repeat=args.repeat, model=args.model,
                    instructions=args.instructions, rounds=args.rounds, tflite=args.tflite,
                    ort_threads=args.ort_threads, openvino=args.openvino)
    print(format_table([row]), end="")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from aot.compare import compare, format_table, verdict

    out = Path(args.out)
    if args.inputs:
        check_input_file(Path(args.inputs), "--inputs")
    result = compare(out, _metadata(out), model=args.model, inputs_npz=args.inputs, tolerance=args.tolerance,
                     lsb=args.lsb, kernels=args.reference_kernels)
    print(format_table(result.rows, result.reference.nodes), end="")
    print(verdict(result.rows, args.tolerance, result.lsb, result.reference))
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


def _cmd_curve(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from aot.build import require_tools
    from aot.compiler import Options, compile_file
    from aot.curve import Measurer, drop, flash_curve, format_table, ram_curve, scratch_dir, write_outputs
    from aot.progress import status
    from aot.targets import get_target

    out = Path(args.output)
    check_input_file(Path(args.model), "model")
    if out.exists() and not args.force and not (out / "curve.json").is_file() and any(out.iterdir()):
        raise AotcError(f"-o '{out}' is a folder aotc curve did not write; give a new or empty folder, or --force")
    target = get_target(args.target)
    if target.kind != "bare-metal":
        raise AotcError(f"--target {args.target}: aotc curve counts one inference under qemu on a bare-metal "
                        "board (aotc --list-targets); time a host or Linux build with aotc bench")
    require_tools(target, build=True, run=True)
    base = Options(name=args.name, target=args.target, vendors=tuple(args.vendor),
                   vendor_options=tuple(args.vendor_opt), annotate=args.annotate,
                   input_shapes=tuple(args.input_shape), dims=tuple(args.dim),
                   input_values=tuple(args.input_value), max_dims=tuple(args.max_dim),
                   widened_weights=args.widened_weights, build_type=args.build_type)
    work = scratch_dir(out, args.keep_builds)
    measurer = Measurer(args.target, args.build_type, work)
    curves = []
    try:
        if args.curve in ("ram", "both"):
            curves.append(ram_curve(Path(args.model).name,
                                    lambda b: compile_file(args.model, replace(base, ram_budget=b)),
                                    measurer, args.points, status))
            print(format_table(curves[-1]))
        if args.curve in ("flash", "both"):
            curves.append(flash_curve(Path(args.model).name,
                                      lambda b: compile_file(args.model, replace(base, flash_budget=b)),
                                      measurer, status))
            print(format_table(curves[-1]))
    finally:
        drop(work, args.keep_builds)
    json_path, svg_path = write_outputs(out, curves)
    print(f"aotc: wrote {svg_path} and {json_path}")
    return 0


def _metadata(out: Path) -> dict:
    import json

    path = out / "bundle" / "metadata.json"
    if not path.is_file():
        raise AotcError(f"'{out}' holds no aotc bundle (no {path}); compile with: aotc MODEL.onnx -o {out}")
    return json.loads(path.read_text())


if __name__ == "__main__":
    sys.exit(main())
