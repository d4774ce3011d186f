"""Driving CMake and the runner: configure OUT for a target, build it, run it on arrays."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from aot.errors import AotcError
from aot.paths import cmake_dir
from aot.progress import status
from aot.targets import get_target


def cmake_exe() -> str:
    try:
        import cmake  # the PyPI package: a working cmake with `pip install` alone

        exe = Path(cmake.CMAKE_BIN_DIR) / "cmake"
        if exe.is_file():
            return str(exe)
    except ImportError:
        pass
    found = shutil.which("cmake")
    if not found:
        raise AotcError("cmake not found: install it with `pip install cmake`")
    return found


def _tail(text: str, n: int = 1) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return " | ".join((errors or lines)[-n:]) if lines else "(no output)"


def configure(out: Path, target: str, extra: list[str] | None = None) -> None:
    t = get_target(target)
    args = [cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release"]
    if t.toolchain:
        args.append(f"-DCMAKE_TOOLCHAIN_FILE={cmake_dir() / t.toolchain}")
    args += extra or []
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise AotcError(f"CMake could not configure {out} for target {target}: {_tail(r.stdout + r.stderr)}")


def build(out: Path) -> None:
    r = subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], capture_output=True, text=True)
    if r.returncode != 0:
        raise AotcError(f"building {out} failed: {_tail(r.stdout + r.stderr, 3)}")


def runner_path(out: Path) -> Path:
    return out / "runner"


def run_bundle(out: Path, meta: dict, inputs: list[np.ndarray], repeat: int = 0
               ) -> tuple[dict[str, np.ndarray], float | None]:
    """Run OUT's runner on `inputs` (model order); outputs keyed by name, and the median time."""
    runner = runner_path(out)
    if not runner.is_file():
        with status(f"building {out}"):
            build(out)
    target = get_target(meta.get("target", "host"))
    with tempfile.TemporaryDirectory(prefix="aotc-run-") as tmp:
        in_file, out_file = Path(tmp) / "inputs.bin", Path(tmp) / "outputs.bin"
        in_file.write_bytes(b"".join(np.asarray(x, order="C").tobytes() for x in inputs))
        cmd = [*target.emulator, str(runner.resolve()), str(in_file), str(out_file), str(repeat)]
        with status(f"running {out}" + (f" ({repeat} timed runs)" if repeat else "")):
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        if r.returncode != 0:
            raise AotcError(f"runner failed (exit {r.returncode}): {_tail(r.stderr + r.stdout)}")
        raw = out_file.read_bytes()
    outputs: dict[str, np.ndarray] = {}
    pos = 0
    for spec in meta["outputs"]:
        n = spec["nbytes"]
        outputs[spec["name"]] = np.frombuffer(raw[pos:pos + n], dtype=spec["dtype"]).reshape(spec["shape"]).copy()
        pos += n
    m = re.search(r"median_ns=([0-9.]+)", r.stdout)
    return outputs, float(m.group(1)) if m else None
