"""Sizing a region's workspace: run its init once, at compile time, in a probe program.

How much memory a oneDNN region needs depends on the CPU (blocked layouts pad channels to 8
on AVX2, 16 on AVX-512) and on the primitives oneDNN picks, whose scratchpads it alone knows.
No formula in the compiler can know these portably, so codegen builds a small program from the
region's own tables and the same runtime (runtime_c/vendor/dnnl), linked with the same oneDNN
the bundle will use, runs its init in probe mode (no weights), and reads back every workspace
buffer with its size and lifetime. `plan()` then places them; the generated init checks that
the machine it runs on needs no more (AOTC_DNNL_E_WORKSPACE otherwise).
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import hashlib
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from aot.errors import AotcError
from aot.paths import install_command, kernel_file, kernel_include_flags, runtime_dir

INSTALL_HINT = (f"install oneDNN 3.x with: {install_command('dnnl')}  "
                "(or the onednn-cpu-gomp and onednn-devel-cpu-gomp wheels)")
ALIGN = 64


@dataclass(frozen=True)
class OneDNN:
    root: Path  # holds include/oneapi/dnnl/dnnl.h and lib/libdnnl.so
    version: str

    @property
    def include(self) -> Path:
        return self.root / "include"

    @property
    def lib(self) -> Path:
        return self.root / "lib"


def find_onednn() -> OneDNN | None:
    """oneDNN 3.x under $DNNL_ROOT when it is set (the bundle's CMake then looks only there too),
    else where pip puts this Python's data files (the wheels' include/, lib/). A build whose CPU
    runtime is SYCL (the `onednn` wheels since 2024) is skipped: docs/dnnl.md, Which oneDNN."""
    roots = ((os.environ["DNNL_ROOT"],) if os.environ.get("DNNL_ROOT")
             else (sys.prefix, sysconfig.get_paths()["data"], site.getuserbase()))
    for root in filter(None, dict.fromkeys(roots)):
        header = Path(root) / "include" / "oneapi" / "dnnl" / "dnnl_version.h"
        if not header.is_file() or not any((Path(root) / "lib").glob("libdnnl.so*")):
            continue
        config = header.with_name("dnnl_config.h")
        if config.is_file() and re.search(r"#define DNNL_CPU_RUNTIME\s+DNNL_RUNTIME_SYCL\b", config.read_text()):
            continue
        text = header.read_text()
        parts = [re.search(rf"#define DNNL_VERSION_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
        if None in parts:
            continue
        version = ".".join(p.group(1) for p in parts)
        if int(version.split(".")[0]) >= 3:
            return OneDNN(Path(root), version)
    return None


def require_onednn() -> OneDNN:
    found = find_onednn()
    if found is None:
        where = (f" in DNNL_ROOT={os.environ['DNNL_ROOT']} (a SYCL-runtime build, as the `onednn` wheels are, "
                 "does not count: docs/dnnl.md)" if os.environ.get("DNNL_ROOT") else "")
        raise AotcError(f"the dnnl vendor needs oneDNN 3.x, which was not found{where}: {INSTALL_HINT}")
    return found


# dnnl_cpu_isa_t (dnnl_types.h): each ISA's value holds the bits of those it extends
ISA_AVX2_VNNI, ISA_AVX512_CORE_VNNI = 0xF, 0x67


@functools.cache
def cpu_isa(root: Path) -> int:
    """dnnl_get_effective_cpu_isa() of the oneDNN under `root` on this machine (ONEDNN_MAX_CPU_ISA
    applies, as in the probe): 0 when the library cannot be loaded."""
    for lib in sorted((root / "lib").glob("libdnnl.so*")):
        try:
            return int(ctypes.CDLL(str(lib)).dnnl_get_effective_cpu_isa())
        except (OSError, AttributeError):
            continue
    return 0


def int8_exact() -> str | None:
    """None when oneDNN's int8 convolutions and matmuls compute exactly here, else why not.

    Without VNNI (AVX-VNNI or AVX512-VNNI) oneDNN multiplies 8-bit integers with VPMADDUBSW, whose
    16-bit pair sums saturate, and halves s8 weights to keep them from saturating
    (doc/advanced/int8_computations.md): results then differ from onnxruntime by many LSB."""
    dnnl = find_onednn()
    if dnnl is None:
        return f"oneDNN 3.x was not found ({INSTALL_HINT})"
    isa = cpu_isa(dnnl.root)
    if any(isa & vnni == vnni for vnni in (ISA_AVX2_VNNI, ISA_AVX512_CORE_VNNI)):
        return None
    return "oneDNN's int8 kernels are exact only with VNNI (AVX-VNNI or AVX512-VNNI), which this CPU lacks"


@dataclass
class Buffer:
    slot: int
    bytes: int
    first: int
    last: int


@dataclass
class Step:
    """One primitive a run executes: its oneDNN kind, for a reorder where it sits (entry: from a
    region input, exit: into a region output, inside: between two primitives; "-" otherwise),
    and the implementation oneDNN chose."""
    kind: str
    where: str
    op: int  # the op of the region's table it serves (lower.Lowered.ops)
    tensor: int  # a reorder: the tensor (table index) it reads, else -1
    layout: int  # a reorder: the layout it writes (the runtime's LAYOUTS: 0 plain, 1 nhwc, 2, 3 blocked), else -1
    impl: str


@dataclass
class ProbeResult:
    buffers: list[Buffer]
    slots: int
    steps: int
    trace: list[Step] = field(default_factory=list)

    def reorders(self) -> dict[str, int]:
        """Reorders per run by place: {"entry": n, "exit": n, "inside": n}."""
        counts = {"entry": 0, "exit": 0, "inside": 0}
        for s in self.trace:
            if s.kind == "reorder":
                counts[s.where] += 1
        return counts


_CACHE: dict[str, Path] = {}


def _cc() -> str:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"


def _runtime_object(dnnl: OneDNN, threads: int) -> Path:
    """The runtime compiled once per process (and per runtime source and thread count: it runs
    oneDNN on the bundle's threads, as the bundle's own runtime does, which sizes the per-thread
    scratchpads the probe measures)."""
    rt = runtime_dir()
    src = rt / "vendor" / "dnnl" / "aotc_dnnl.c"
    key = hashlib.sha256(src.read_bytes() + (rt / "vendor" / "dnnl" / "aotc_dnnl.h").read_bytes()
                         + kernel_file("fast_math.h").read_bytes() + str(dnnl.root).encode()
                         + str(threads).encode()).hexdigest()[:16]
    obj = _CACHE.get(key)
    if obj is None or not obj.is_file():
        cache_dir = Path(tempfile.mkdtemp(prefix="aotc-dnnl-probe-"))
        atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)  # nothing left in the user's /tmp
        obj = cache_dir / "aotc_dnnl.o"
        _run([_cc(), "-std=c99", "-O1", "-c", str(src), *([f"-DAOTC_THREADS={threads}"] if threads > 1 else []),
              *kernel_include_flags(), f"-I{dnnl.include}", "-o", str(obj)],
             "compiling the dnnl runtime for the probe")
        _CACHE[key] = obj
    return obj


def _run(cmd: list[str], what: str, env: dict[str, str] | None = None) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        detail = (r.stderr or r.stdout).strip().splitlines()
        raise AotcError(f"dnnl vendor: {what} failed: {detail[-1] if detail else f'exit {r.returncode}'}")
    return r.stdout


def run_probe(source: str, symbol: str, threads: int = 1) -> ProbeResult:
    """Build and run the probe program `source` (a region's tables + main) for a bundle whose runs
    use `threads` threads (--threads)."""
    dnnl = require_onednn()
    with tempfile.TemporaryDirectory(prefix="aotc-dnnl-") as tmp:
        work = Path(tmp)
        obj = _runtime_object(dnnl, threads)
        (work / "probe.c").write_text(source)
        exe = work / "probe"
        rt = runtime_dir()
        _run([_cc(), "-std=c99", "-O0", str(work / "probe.c"), str(obj), f"-I{rt / 'include'}",
              f"-I{rt / 'vendor' / 'dnnl'}", f"-I{dnnl.include}", f"-L{dnnl.lib}", f"-Wl,-rpath,{dnnl.lib}",
              "-ldnnl", "-ldl", "-o", str(exe)], f"building the workspace probe of {symbol}")
        out = _run([str(exe)], f"the workspace probe of {symbol} (oneDNN refused a primitive)")
    buffers = [Buffer(*map(int, m.groups())) for m in re.finditer(r"^slot (\d+) (\d+) (-?\d+) (-?\d+)$", out, re.M)]
    counts = re.search(r"^slots (\d+) steps (\d+)$", out, re.M)
    if counts is None:
        raise AotcError(f"dnnl vendor: the workspace probe of {symbol} printed no plan")
    trace = [Step(m[1], m[2], int(m[3]), int(m[4]), int(m[5]), m[6])
             for m in re.finditer(r"^step \d+ (\S+) (\S+) (-?\d+) (-?\d+) (-?\d+) (.*)$", out, re.M)]
    return ProbeResult(buffers, int(counts.group(1)), int(counts.group(2)), trace)


def plan(buffers: list[Buffer], n_steps: int) -> tuple[dict[int, int], int]:
    """Offsets for buffers whose lifetimes (step ranges) overlap never overlap in memory.
    Greedy: largest first, each at the lowest aligned offset that fits among the placed
    buffers alive at the same time. Returns ({slot: offset}, total bytes)."""
    spans = {b.slot: (b.first, b.last) if b.first >= 0 else (0, n_steps) for b in buffers}
    placed: list[tuple[int, int, int]] = []  # (offset, end, slot)
    offsets: dict[int, int] = {}
    for b in sorted(buffers, key=lambda b: (-b.bytes, b.slot)):
        first, last = spans[b.slot]
        busy = sorted((o, e) for o, e, s in placed if not (spans[s][1] < first or last < spans[s][0]))
        offset = 0
        for o, e in busy:
            if offset + b.bytes <= o:
                break
            offset = max(offset, -(-e // ALIGN) * ALIGN)
        offsets[b.slot] = offset
        placed.append((offset, offset + b.bytes, b.slot))
    total = max((e for _, e, _ in placed), default=0)
    return offsets, -(-total // ALIGN) * ALIGN
