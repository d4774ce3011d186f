"""Driving CMake and the runner: configure OUT for a target, build it, run it on arrays."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

from aot.errors import AotcError
from aot.ir import np_dtype
from aot.paths import cmake_dir
from aot.progress import status
from aot.targets import Target, bundle_target, get_target, require_tools


def _installed_tool(name: str, bin_dir: str) -> str | None:
    """Program `name` from its PyPI package (`pip install` brings it; its directory is the module's
    attribute `bin_dir`), else from PATH, else None."""
    try:
        exe = Path(getattr(importlib.import_module(name), bin_dir)) / name
        if exe.is_file():
            return str(exe)
    except (ImportError, AttributeError):
        pass
    return shutil.which(name)


def cmake_exe() -> str:
    found = _installed_tool("cmake", "CMAKE_BIN_DIR")  # a working cmake with `pip install` alone
    if not found:
        raise AotcError("cmake not found: install it with `pip install cmake`")
    return found


def ninja_exe() -> str | None:
    """Ninja, when there is one (the PyPI package `pip install` brings, or the system's): with it a plain
    `cmake --build OUT` compiles the bundle's files on every core, where Make's default is one at a time
    (ResNet-18's host build: its kernel files take 9.5 s of CPU)."""
    return _installed_tool("ninja", "BIN_DIR")


def _tail(text: str, n: int = 1) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return " | ".join((errors or lines)[-n:]) if lines else "(no output)"


# CMake's build types and the optimisation gcc and clang get from each (CMAKE_C_FLAGS_<TYPE>).
BUILD_TYPES = {"Release": "-O3", "RelWithDebInfo": "-O2 -g", "MinSizeRel": "-Os", "Debug": "-O0 -g"}


def default_build_type() -> str:
    """Release, or what CMake's CMAKE_BUILD_TYPE environment variable names: CMake takes it for a new build
    tree, so a user who sets it expects the build trees aotc configures to take it too."""
    return os.environ.get("CMAKE_BUILD_TYPE") or "Release"


def configure(out: Path, target: str, extra: list[str] | None = None, build_type: str | None = None) -> None:
    """CMake-configure the build tree OUT from OUT/bundle for `target` at `build_type` (BUILD_TYPES; None:
    default_build_type())."""
    build_type = build_type or default_build_type()
    if build_type not in BUILD_TYPES:
        raise AotcError(f"unknown build type '{build_type}' (known: {', '.join(BUILD_TYPES)})")
    t = get_target(target)
    require_tools(t)
    # This Python's prefixes: where pip puts vendor libraries with CMake configs (e.g. oneDNN's wheels)
    prefixes = ";".join(dict.fromkeys([sys.prefix, sysconfig.get_paths()["data"]]))
    args = [cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), f"-DCMAKE_BUILD_TYPE={build_type}",
            f"-DCMAKE_PREFIX_PATH={prefixes}"]
    ninja = ninja_exe()
    generator = "Ninja" if ninja else "Unix Makefiles"
    args += ["-G", generator] + ([f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else [])
    toolchain = None
    if t.has_toolchain:  # the bundle's own copy, as a standalone build of the bundle would use
        bundled = out / "bundle" / "target" / "toolchain.cmake"
        if not bundled.is_file() and not t.toolchain:  # a registered target's file is in its bundles only
            raise AotcError(f"{out}/bundle has no target/toolchain.cmake for target {t.name}: compile for it again")
        toolchain = (bundled if bundled.is_file() else cmake_dir() / str(t.toolchain)).resolve()
        args.append(f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    _drop_stale_cache(out, toolchain, generator)
    args += extra or []
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise AotcError(f"CMake could not configure {out} for target {target}: "
                        f"{_cmake_message(r.stderr) or _tail(r.stdout + r.stderr)}")


def _cmake_message(stderr: str) -> str:
    """The text of the first `CMake Error at ...:` block (a message(FATAL_ERROR) says what to do)."""
    lines = stderr.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("CMake Error"):
            body = []
            for nxt in lines[k + 1:]:
                if nxt.strip() == "" and body:
                    break
                body.append(nxt.strip())
            return " ".join(b for b in body if b)
    return ""


def _drop_stale_cache(out: Path, toolchain: Path | None, generator: str) -> None:
    """A build tree configured for another target keeps its compiler, and one configured with another
    generator refuses this one: start it afresh."""
    cache = out / "CMakeCache.txt"
    if not cache.is_file():
        return
    text = cache.read_text(errors="replace")
    m = re.search(r"^CMAKE_TOOLCHAIN_FILE:[A-Z]+=(.*)$", text, re.MULTILINE)
    previous = m.group(1).strip() if m else ""
    g = re.search(r"^CMAKE_GENERATOR:INTERNAL=(.*)$", text, re.MULTILINE)
    if previous != (str(toolchain) if toolchain else "") or (g is not None and g.group(1).strip() != generator):
        cache.unlink()
        shutil.rmtree(out / "CMakeFiles", ignore_errors=True)


def build(out: Path) -> None:
    r = subprocess.run([cmake_exe(), "--build", str(out), "-j", "2"], capture_output=True, text=True)
    if r.returncode != 0:
        raise AotcError(f"building {out} failed: {_tail(r.stdout + r.stderr, 3)}")


def runner_path(out: Path, meta: dict | None = None) -> Path:
    suffix = bundle_target(meta or {}).executable_suffix
    return out / f"runner{suffix}"


RUN_TIMEOUT_S = 1800  # a hung program under qemu (a bare-metal fault loop) must not hang aotc


def runner_command(target: Target, runner: Path, args: list[str]) -> list[str]:
    """The command that runs `runner args...` for `target`: directly, under qemu-user, or on
    the board under qemu-system-arm, with argv and files through semihosting (relative file
    names resolve in qemu's working directory)."""
    if target.kind != "bare-metal":
        return [*target.emulator, str(runner), *args]
    semihosting = ",".join(["enable=on", "target=native", "arg=runner",
                            *(f"arg={a.replace(',', ',,')}" for a in args)])
    return [*target.emulator, "-semihosting-config", semihosting, "-kernel", str(runner)]


def read_outputs(out_file: Path, meta: dict, stdout: str) -> dict[str, np.ndarray]:
    """The outputs a runner wrote to `out_file` (in the model's order, then the rows of each output whose count is
    known only at run time), keyed by name; the vendors' counters its `stdout` reports (Artifact.counters) are
    shown."""
    raw = out_file.read_bytes()
    outputs: dict[str, np.ndarray] = {}
    pos = 0
    for spec in meta["outputs"]:
        n = spec["nbytes"]
        dtype = np_dtype(spec["dtype"])  # bfloat16, float8, int4 (one a byte, as ml_dtypes holds it): ml_dtypes'
        outputs[spec["name"]] = np.frombuffer(raw[pos:pos + n], dtype=dtype).reshape(spec["shape"]).copy()
        pos += n
    for spec in meta["outputs"]:  # rows known only at run time: the runner wrote how many after the outputs
        if "extent" in spec:
            rows = int(np.frombuffer(raw[pos:pos + 8], dtype="<i8")[0])
            pos += 8
            outputs[spec["name"]] = np.take(outputs[spec["name"]], np.arange(rows), axis=spec["extent"]["axis"])
    for counter in re.findall(r"^aotc-runner: counter (\S+=\S+)$", stdout, re.MULTILINE):
        print(f"aotc: {counter}")  # vendor counters of the run (Artifact.counters), e.g. simulated cycles
    return outputs


def run_bundle(out: Path, meta: dict, inputs: list[np.ndarray], repeat: int = 0, taps: Path | None = None,
               timing: dict[str, float] | None = None) -> tuple[dict[str, np.ndarray], float | None]:
    """Run OUT's runner on `inputs` (model order); outputs keyed by name, and the median time
    in ns (None when not measured: no repeats, or a target under emulation, whose timing
    says nothing about the device). With `taps`, the runner (built with AOTC_TAPS) writes the
    tensors it taps, which land in that file. `timing` receives the figures the runner printed
    (median_ns, min_ns, and cpu_ns, the process CPU time per timed inference, from a runner that
    reports it: one built before it did has none)."""
    target = bundle_target(meta)
    runner = runner_path(out, meta)
    require_tools(target, build=not runner.is_file(), run=True)
    if not runner.is_file():
        with status(f"building {out}"):
            build(out)
    if repeat and target.emulated:
        print(f"aotc: note: {target.name} runs under {target.emulator[0]}, whose timing is not "
              "meaningful for the device; no timing is reported (the runner prints median_cycles= "
              "on a real board)", file=sys.stderr)
        repeat = 0
    with tempfile.TemporaryDirectory(prefix="aotc-run-") as tmp:
        in_file, out_file = Path(tmp) / "inputs.bin", Path(tmp) / "outputs.bin"
        in_file.write_bytes(b"".join(np.asarray(x, order="C").tobytes() for x in inputs))
        args = [in_file.name, out_file.name, str(repeat)] + (["taps.bin"] if taps else [])
        cmd = runner_command(target, runner.resolve(), args)
        where = f" under {target.emulator[0]}" if target.emulated else ""
        with status(f"running {out}{where}" + (f" ({repeat} timed runs)" if repeat else "")):
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, stdin=subprocess.DEVNULL,
                                   timeout=RUN_TIMEOUT_S if target.emulated else None)
            except subprocess.TimeoutExpired:
                raise AotcError(f"runner of {out} did not finish within {RUN_TIMEOUT_S} s{where}") from None
        if r.returncode != 0:
            raise AotcError(f"runner failed (exit {r.returncode}{where}): {_tail(r.stderr + r.stdout)}")
        if not out_file.is_file():
            raise AotcError(f"runner of {out} wrote no outputs: {_tail(r.stderr + r.stdout)}")
        outputs = read_outputs(out_file, meta, r.stdout)
        if taps:
            if not (Path(tmp) / "taps.bin").is_file():
                raise AotcError(f"runner of {out} wrote no taps: {_tail(r.stderr + r.stdout)}")
            shutil.move(Path(tmp) / "taps.bin", taps)
    m = re.search(r"median_ns=([0-9.]+)", r.stdout)
    if timing is not None:
        line = re.search(r"^aotc-runner: runs=.*$", r.stdout, re.MULTILINE)
        timing.update({k: float(v) for k, v in re.findall(r"(\w+_ns)=([0-9.]+)", line.group(0) if line else "")})
    return outputs, float(m.group(1)) if m else None
