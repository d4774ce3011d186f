"""aotc's qemu TCG plugin (runtime_c/tools/qemu_insn_count.c): built on demand with the host's C compiler, and
a bare-metal runner run under it. Its own module so that `aotc bench`'s whole-inference counts and its per-node
split (aot/bench_nodes.py) share it without importing each other."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from aot.errors import AotcError
from aot.targets import Target

__all__ = ["CYCLE_MODELS", "insn_count_plugin", "run_under_plugin"]


def insn_count_plugin(directory: Path) -> Path:
    """aotc's qemu TCG plugin that counts executed instructions (runtime_c/tools/qemu_insn_count.c),
    built with the host's C compiler into `directory` when missing or older than its source."""
    from aot.paths import runtime_dir

    src = runtime_dir() / "tools" / "qemu_insn_count.c"
    so = directory.resolve() / "libaotc_insn_count.so"  # qemu runs elsewhere: a relative path would not load
    if so.is_file() and so.stat().st_mtime >= src.stat().st_mtime:
        return so
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise AotcError("counting instructions under qemu needs a host C compiler (cc or gcc) to build "
                        "aotc's qemu plugin; install gcc")
    directory.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(so), str(src)], capture_output=True, text=True)
    if r.returncode != 0:
        raise AotcError(f"building aotc's qemu plugin failed: {r.stderr.strip()[-300:]}")
    return so


# Boards whose core's timing aotc's qemu plugin models (its cycles=<model> argument, docs/firmware.md "How
# the cycles are estimated"): the Cortex-M4 of mps2-an386 (the M4 TRM's tables), the M33 of mps2-an505, the
# M7 of mps2-an500 (dual issue) and the M55 of mps3-an547 (Helium's beats, low-overhead loops). Not the M3
# (an385: close to the M4, but its multiplies and long multiplies differ): `aotc bench` prints "-" there.
CYCLE_MODELS = {"mps2-an386": "m4", "mps2-an505": "m33", "mps2-an500": "m7", "mps3-an547": "m55"}


def run_under_plugin(target: Target, out: Path, runner: Path, plugin: Path, args: list[str], repeat: int,
                     cwd: Path) -> subprocess.CompletedProcess:
    """OUT's bare-metal runner under qemu with aotc's plugin and its `args`, on cwd's inputs.bin, doing `repeat`
    timed inferences after its first."""
    from aot.build import RUN_TIMEOUT_S, runner_command

    cmd = runner_command(target, runner, ["inputs.bin", "outputs.bin", str(repeat)])
    k = cmd.index("-kernel")
    cmd[k:k] = ["-plugin", ",".join([str(plugin), *(f"arg={a}" for a in args)])]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL,
                              timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AotcError(f"runner of {out} did not finish within {RUN_TIMEOUT_S} s under qemu") from None
