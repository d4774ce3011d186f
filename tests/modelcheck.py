"""Whole models through the path a user takes (aotc MODEL -o OUT, cmake --build OUT, aotc run) and
onnxruntime's answer for them: shared by the model tests of every test folder (a test module is not
importable from another folder, a helper module in tests/ is).

`aotc(...)` runs the command in this process: its own parser, checks, messages and exit codes, without
starting a Python and importing onnx and numpy again for each call (a second of CPU each, twice a model
test). The tests of the command line itself (tests/cli/) run it as a user does, in a process of its own.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from aot.build import build, cmake_exe, configure

AOTC = [sys.executable, "-m", "aot.cli"]
# a bundle's C under AddressSanitizer and UndefinedBehaviorSanitizer, as CMake options of its build tree. A Release
# build of it compiles at -O1, as AddressSanitizer's documentation advises: gcc instruments the unrolled AVX-512 conv
# kernels several times faster than at -O3 (a float conv bundle: 15 s of compile against 71 s); the bundles' -O3
# code is built and checked without the sanitizers.
# (The level goes in CMAKE_C_FLAGS_RELEASE: CMake puts the build type's flags after CMAKE_C_FLAGS, so an -O1 there
# compiled at the Release -O3: a sanitized QLinearConv bundle's quant_uint8.c took 61 s, against 4 s at -O0.)
RELEASE_AT_O1 = "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG"
RELEASE_AT_O0 = "-DCMAKE_C_FLAGS_RELEASE=-O0 -DNDEBUG"
SANITIZE = ("-DCMAKE_C_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer",
            RELEASE_AT_O1, "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
# ... but unoptimised where the bundle's runtime has the ONNX int8 (QDQ / QOperator) kernels and none of the
# families whose code runs long unoptimised (tests/kernels_c/kernel_builds.py's SANITIZED_AT_O1): gcc instruments
# quant_int8.c's kernels at -O1 ten times as slowly (a QDQ chain's bundle: 15.9 s of CPU against 1.6 s at -O0).
SLOW_AT_O1 = {"quant_int8.c", "quant_uint8.c"}
FAST_ONLY_AT_O1 = ("tflite_int8", "conv")


def sanitize_args(bundle: Path) -> tuple[str, ...]:
    """SANITIZE for the bundle written in `bundle` (its runtime/ folder decides the level, as above)."""
    from aot.emit_c.runtime_files import family_files

    files = {f.name for f in (Path(bundle) / "runtime").glob("*.c")}
    if files & SLOW_AT_O1 and not any(files & set(family_files(fam)) for fam in FAST_ONLY_AT_O1):
        return tuple(RELEASE_AT_O0 if a == RELEASE_AT_O1 else a for a in SANITIZE)
    return SANITIZE


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def aotc(*args: object, check: bool = True) -> Ran:
    """`aotc ARGS` in this process (aot.cli.main); with `check`, a non-zero exit fails with what it printed."""
    from aot.cli import main

    out, err = io.StringIO(), io.StringIO()
    environ = dict(os.environ)
    # main() silences library warnings for the rest of its process, and `aotc run` sets OMP_NUM_THREADS for a
    # vendor's threads: here, for the call only
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:  # argparse's refusal of an option: exit 2, its message on stderr
            code = e.code if isinstance(e.code, int) else 1
        finally:
            os.environ.clear()
            os.environ.update(environ)
    ran = Ran(code, out.getvalue(), err.getvalue())
    if check:
        assert code == 0, f"aotc {' '.join(map(str, args))} exited {code}: {ran.stderr[-3000:]}"
    return ran


def sanitizing() -> bool:
    """Whether a test that asks for the sanitizers gets them: in the full tier, not in the fast one, which
    builds nothing under them (their compile takes 6 to 18 times as long) and checks the same numbers plain."""
    from conftest import current_tier

    return current_tier() != "fast"


def build_bundle(model: Path, out: Path, *options: object, target: str = "host", sanitize: bool = False,
                 cmake_args: tuple[str, ...] = ()) -> dict:
    """`aotc MODEL -o OUT OPTIONS`, OUT configured for `target` as aotc configures it, with -Werror (and with
    `sanitize`, the sanitizers, in the tiers that build them: sanitizing()), then `cmake --build OUT`: the
    bundle's metadata.json."""
    aotc(model, "-o", out, "--target", target, "--no-configure", *options)
    sanitizers = sanitize_args(out / "bundle") if sanitize and sanitizing() else ()
    configure(out, target, ["-DAOTC_WARNINGS_AS_ERRORS=ON", *sanitizers, *cmake_args])  # (the fast tier: -Os)
    build(out)
    return json.loads((out / "bundle" / "metadata.json").read_text())


def run_bundle(out: Path, feeds: dict[str, np.ndarray] | list[np.ndarray], *options: object) -> dict[str, np.ndarray]:
    """`aotc run OUT` on `feeds` (by the model's input names, or a list in its input order): outputs by name."""
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    if not isinstance(feeds, dict):
        feeds = {s["name"]: v for s, v in zip(meta["inputs"], feeds, strict=True)}
    inputs, outputs = out.parent / f"{out.name}_in.npz", out.parent / f"{out.name}_res.npz"
    np.savez(inputs, **feeds)
    aotc("run", out, "--inputs", inputs, "--outputs", outputs, *options)
    with np.load(outputs) as res:
        return {k: res[k] for k in res.files}


def global_symbols(lib: Path, nm: str = "nm") -> list[str]:
    """The global symbols the static library `lib` defines (nm's upper-case types but U), sorted."""
    out = subprocess.run([nm, "-g", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
    return sorted({r[-1] for r in (ln.split() for ln in out.splitlines()) if len(r) == 3 and r[1].isupper()})


def outside_prefix(lib: Path, name: str, prefix: str, nm: str = "nm") -> list[str]:
    """The global symbols lib<name>.a defines that begin neither with `<name>_` (its API, weights, vendor
    functions) nor with `prefix`, its kernel configuration's (metadata.json's symbol_prefix, aotc_<hash8>_, which
    runtime/aotc_symbols.h gives its runtime C): none, so that several bundles link into one program."""
    return [s for s in global_symbols(lib, nm) if not s.startswith((f"{name}_", prefix))]


def reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's outputs for `feeds`, on one thread."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


def compile_build_run(tmp_path: Path, model: onnx.ModelProto, feeds: dict[str, np.ndarray], name: str,
                      cmake_args: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """The bundle's metadata.json and its outputs for `feeds`, built under tmp_path by the user's three commands."""
    src, out = tmp_path / f"{name}.onnx", tmp_path / "out"
    onnx.save(model, src)
    aotc(src, "-o", out)
    if cmake_args:
        subprocess.run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(out), *cmake_args],
                       check=True, capture_output=True)
    build(out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    return meta, run_bundle(out, feeds)
