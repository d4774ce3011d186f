"""int8 against fp32 on the Cortex-M boards: instructions per inference under qemu.

    python bench/cortex_m_int8.py [--boards mps2-an386 mps2-an385 mps3-an547]
                                  [--models resnet mobilenetv2 dscnn_kws] [--exec-log] [--keep DIR]

Each zoo model is compiled three ways (fp32; onnxruntime's quantize_static in QOperator form with
uint8 activations; QDQ with int8 activations, per-channel weights in both) for each board, built,
and run under qemu-system-arm K = 1 and K = 3 times in one image: (count(3) - count(1)) / 2 is one
inference, without startup, init and semihosting I/O (notes/toolchains.md, "Counting instructions
on a Cortex-M under qemu"). qemu has no timing model for these cores, so this is an instruction
count, not cycles.

The count comes from aotc's TCG plugin (runtime_c/tools/qemu_insn_count.c, built with the host's cc),
which runs at normal emulation speed; --exec-log counts instead one `-d nochain,exec` line per
instruction under -singlestep (the method in toolchains.md: the same numbers to within a few
hundred instructions, and tens of times slower: the M3's soft-float fp32 runs take hours).

Prints a markdown table: per model and board, the instructions (millions) of each form, and
fp32 / int8 (how many times fewer instructions the int8 bundle executes).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import zoo  # noqa: E402
from quantize import quantized  # noqa: E402

from aot.bench import insn_count_plugin  # noqa: E402
from aot.build import build, runner_command, runner_path  # noqa: E402
from aot.targets import get_target  # noqa: E402

FORMS = {  # name: (short tag, how the fp32 model becomes the one compiled)
    "fp32": ("fp32", lambda m: m),
    "int8 QOperator u8": ("qop_u8", lambda m: quantized(m, "QOperator", activations="uint8")),
    "int8 QDQ i8": ("qdq_i8", lambda m: quantized(m, "QDQ", activations="int8")),
}
BOARDS = ("mps2-an386", "mps2-an385", "mps3-an547")
CORES = {"mps2-an385": "M3", "mps2-an386": "M4F", "mps3-an547": "M55"}


def plugin(work: Path) -> Path:
    return insn_count_plugin(work)


def count(out: Path, meta: dict, repeat: int, plugin_so: Path | None) -> int:
    """Instructions of the runner doing `repeat` inferences (plus its startup and I/O)."""
    cmd = runner_command(get_target(meta["target"]), runner_path(out, meta).resolve(), ["in.bin", "out.bin",
                                                                                       str(repeat)])
    kernel = cmd.index("-kernel")
    if plugin_so is not None:
        cmd[kernel:kernel] = ["-plugin", str(plugin_so)]
        r = subprocess.run(cmd, cwd=out, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=True)
        return int(re.search(r"insns: (\d+)", r.stderr).group(1))
    cmd[kernel:kernel] = ["-singlestep", "-d", "nochain,exec"]
    p = subprocess.Popen(cmd, cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    n = sum(1 for line in p.stderr if line.startswith(b"Trace"))
    if p.wait() != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd)
    return n


def per_inference(model: onnx.ModelProto, board: str, out: Path, plugin_so: Path | None) -> int:
    src = out.with_suffix(".onnx")
    onnx.save(model, src)
    subprocess.run([sys.executable, "-m", "aot.cli", str(src), "-o", str(out), "--target", board], check=True,
                   stdout=subprocess.DEVNULL, cwd=ROOT)
    build(out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    rng = np.random.default_rng(0)
    (out / "in.bin").write_bytes(b"".join(rng.standard_normal(s["shape"]).astype(s["dtype"]).tobytes()
                                          for s in meta["inputs"]))
    return (count(out, meta, 3, plugin_so) - count(out, meta, 1, plugin_so)) // 2


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--boards", nargs="*", default=list(BOARDS))
    p.add_argument("--models", nargs="*", default=["resnet", "mobilenetv2", "dscnn_kws"])
    p.add_argument("--forms", nargs="*", default=list(FORMS), choices=list(FORMS))
    p.add_argument("--exec-log", action="store_true", help="count exec-log lines under -singlestep (slow)")
    p.add_argument("--keep", help="build here instead of a temporary directory")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-cortex-m-int8-"))
    work.mkdir(parents=True, exist_ok=True)
    plugin_so = None if args.exec_log else plugin(work)
    results: dict[tuple[str, str, str], int] = {}
    for name in args.models:
        fp32 = zoo.build(name)
        for form in args.forms:
            tag, convert = FORMS[form]
            model = convert(fp32)
            for board in args.boards:
                out = work / f"{name}_{tag}_{board}"
                results[name, form, board] = per_inference(model, board, out, plugin_so)
                print(f"  {name} {form} {board}: {results[name, form, board]}", file=sys.stderr)
    int8_forms = [f for f in args.forms if f != "fp32"]
    head = ["model", "board", *[f"{f} (M instr)" for f in args.forms]]
    if "fp32" in args.forms:
        head += [f"fp32 / {f}" for f in int8_forms]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in args.models:
        for board in args.boards:
            row = [name, f"{board} ({CORES.get(board, '?')})"]
            row += [f"{results[name, f, board] / 1e6:.2f}" for f in args.forms]
            if "fp32" in args.forms:
                row += [f"{results[name, 'fp32', board] / results[name, f, board]:.2f}x" for f in int8_forms]
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
