"""Which files of runtime_c/kernels/ a bundle ships for each host kernel family.

One naming rule (runtime_c/kernels/README.md) says which files make up family F:

    aotc_F.h        its API: the params structs and entry points generated code calls
    F.c             its kernels, or
    F_<strategy>.c  one file per optimised strategy (conv_implicit.c, conv_im2col.c, ...)
    F_ref.c         its reference kernels: built by the C tests (tests/kernels_c/), never shipped

plus the kernel-internal headers those files include (e.g. microkernel.h), found by reading
their #include lines. A family's kernels may call another family's (conv calls the GEMM core):
the op says so (HostOp.needs) and the bundle then ships that family's files too.

Of a family's sources, a bundle compiles only those that define a function its code calls, and
what those call in turn (`used_sources`): a LeNet needs conv_implicit.c, not the eight other conv
strategies, and a host build takes a quarter of the time. Which file defines and calls which
function is read from the compiled objects (many kernels are stamped out by macros, so the source
text does not say), kept in runtime_c/kernels/symbols.json. tests/kernels_c/test_runtime_symbols.py fails
when it is stale; `pytest tests/kernels_c/test_runtime_symbols.py --update-symbols` rewrites it.

The calls are recorded for a build without AVX-512F and one with it, which differ: with it, the x86
paths' entries (conv_*_avx512.c, pool_max_*_avx512.c) never call their plain kernel. `sources_by_build`
gives the files every build compiles and those only a build without AVX-512F does, which the
bundle's CMakeLists.txt adds when a configure check finds the build lacks it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import subprocess
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from aot.paths import kernel_file, kernel_include_flags, kernels_dir, runtime_dir

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


@functools.cache
def family_files(family: str) -> tuple[str, ...]:
    """The files under runtime_c/kernels/ that a bundle calling kernel family `family` needs:
    headers first (aotc_<family>.h, then the local headers they and the sources include), then
    the sources to compile."""
    folder = kernels_dir() / family
    header = f"aotc_{family}.h"
    if not (folder / header).is_file():
        raise ValueError(f"no kernel family {family!r}: runtime_c/kernels/{family}/{header} does not exist")
    sources = sorted(p.name for p in folder.glob(f"{family}*.c")
                     if p.stem == family or (p.stem.startswith(f"{family}_") and p.stem != f"{family}_ref"))
    headers, todo = [header], [header, *sources]
    while todo:
        for name in _INCLUDE.findall(kernel_file(todo.pop()).read_text()):
            if name not in headers and _is_kernel_file(name):
                headers.append(name)
                todo.append(name)
    return (*headers, *sources)


def _is_kernel_file(name: str) -> bool:
    try:
        return kernel_file(name).is_file()
    except FileNotFoundError:
        return False


def kernel_families() -> list[str]:
    """Every host kernel family in runtime_c/kernels/ (a folder of its own with an aotc_<family>.h)."""
    return sorted(p.parent.name for p in kernels_dir().glob("*/aotc_*.h") if p.stem == f"aotc_{p.parent.name}")


SYMBOLS_FILE = "symbols.json"
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


@functools.cache
def _symbols() -> dict[str, dict[str, list[str]]]:
    return json.loads((kernels_dir() / SYMBOLS_FILE).read_text())


def defining_files(symbol: str) -> list[str]:
    """The kernel files (runtime_c/kernels/) that define C function `symbol`, by the manifest."""
    return sorted(f for f, row in _symbols().items() if symbol in row["defines"])


def used_sources(candidates: Iterable[str], calling_code: Iterable[str], calls: str = "calls") -> list[str]:
    """The files of `candidates` (kernel .c files, in order) that the bundle must compile: those
    defining a function that `calling_code` (the generated C, the vendors' C) names, closed over
    what those files call (`calls`: in a build without AVX-512F; "calls_avx512f": with it). A file
    missing from the manifest is kept, to be safe."""
    table = _symbols()
    candidates = list(dict.fromkeys(candidates))
    definer = {sym: f for f in candidates if f in table for sym in table[f]["defines"]}
    named = {tok for text in calling_code for tok in _IDENT.findall(text)}
    keep = {f for f in candidates if f not in table}
    todo = [definer[t] for t in named if t in definer]
    while todo:
        f = todo.pop()
        if f not in keep:
            keep.add(f)
            todo += [definer[s] for s in table[f][calls] if s in definer]
    return [f for f in candidates if f in keep]


def sources_by_build(candidates: Iterable[str], calling_code: Iterable[str]) -> tuple[list[str], list[str]]:
    """used_sources split by build, each in candidates' order: the files every build compiles (those
    a build with AVX-512F needs), and those only a build without AVX-512F needs. Built with it, the
    x86 paths' entries never call their plain kernel (runtime_c/kernels/common/paths_avx512.h), so a bundle
    whose nodes all take such paths need not compile conv_implicit.c or pool_max.c."""
    candidates, calling_code = list(candidates), list(calling_code)
    every = used_sources(candidates, calling_code, calls="calls_avx512f")
    return every, [f for f in used_sources(candidates, calling_code) if f not in every]


# A build with AVX-512F, as -march=native makes on a host that has it: its files call other functions
# (an x86 path's entry never calls its plain kernel, runtime_c/kernels/common/paths_avx512.h). The features
# past F change no file's calls to another (checked against -march=icelake-server's).
AVX512F_FLAGS = ("-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mfma", "-mavx2")
# A --threads bundle's build (its CMakeLists.txt defines AOTC_THREADS=N).
THREADS_FLAGS = ("-DAOTC_THREADS=2",)


def defined_symbols(kernel_sources: Iterable[str]) -> list[str]:
    """The global symbols (functions and data) that the kernel files `kernel_sources` define, by the
    manifest, sorted."""
    table = _symbols()
    return sorted({s for f in kernel_sources if f in table for s in table[f]["defines"]})


def runtime_symbols_all() -> list[str]:
    """Every global symbol (function or datum) that a file of aotc's runtime C can define in a bundle: the
    kernels' (runtime_c/kernels/symbols.json) and the built-in vendors' runtimes' (runtime_c/vendor/symbols.json),
    sorted. A bundle renames them all (aotc_symbols.h), not only those of the files it ships, so that the header
    is one file for every bundle of a kernel configuration."""
    from aot.vendor.base import vendor_symbols_table

    return sorted({*(s for row in _symbols().values() for s in row["defines"]),
                   *(s for row in vendor_symbols_table().values() for s in row["defines"])})


def shippable_runtime_files() -> list[Path]:
    """The C files of runtime_c/ that a bundle can ship (sorted): include/'s headers, every kernel family's
    files, the built-in vendors' runtimes (runtime_c/vendor/<v>/, not their tools/). Not the families' reference
    kernels (F_ref.c, the C tests' alone): a change to one changes no bundle, so it must not rename every bundle's
    symbols (runtime_digest)."""
    rt = runtime_dir()
    found = [*rt.glob("include/*"), *kernels_dir().rglob("*"), *rt.glob("vendor/*/*")]
    return sorted(p for p in found if p.is_file() and p.suffix in (".c", ".h")
                  and not (p.parent.parent == kernels_dir() and p.name == f"{p.parent.name}_ref.c"))


@functools.cache
def runtime_digest() -> str:
    """sha256 of aotc's runtime C (shippable_runtime_files: their paths and bytes), once per process: the part
    of a bundle's kernel configuration (SymbolConfig) that tells one aotc's kernels from another's."""
    rt = runtime_dir()
    h = hashlib.sha256()
    for p in shippable_runtime_files():
        data = p.read_bytes()
        h.update(f"{p.relative_to(rt).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class SymbolConfig:
    """A bundle's kernel configuration: what decides the code its runtime C compiles to, and so the prefix of
    the names its objects define (aotc_<hash8>_, hash8 a hash of all of this). Bundles of one configuration
    define the same code under the same names: linked into one program, the linker keeps one copy (the
    same code, whichever); bundles of another configuration (another aotc's kernels, --flash-budget's
    portable kernels, --threads, another target or --host-isa, another vendor runtime, other M-profile paths
    left out) define names of their own, so no bundle runs another's kernels. What changes only the choice of
    kernels (which files a bundle ships, their "assumes" checks, --fast-math, --ram-budget) or only their
    optimisation level (a --flash-budget's -O2 and -Os: the same results) is not part of it. `paths`: the
    M-profile conv and depthwise paths none of the model's layers takes (aot/kernels/dsp_paths.py), which the
    bundle does not compile (their macros 0 in aotc_symbols.h); none left out keys the prefix as before."""
    target: str = "host"
    host_isa: str | None = None  # --host-isa's level (a host bundle's kernels built for it): None on a cross target
    threads: int = 1  # --threads: > 1 builds the kernels with AOTC_THREADS=threads
    portable: bool = False  # a --flash-budget's portable kernels: built with AOTC_NO_INTRINSICS
    toolchain: str = ""  # a digest of the target's CMake files that set its compile flags (targets.toolchain_digest)
    # a third-party vendor runtime's global symbols (Artifact.symbols beyond the built-in ones) and a digest of
    # its files (vendor_digest), which key the prefix too
    vendor_symbols: tuple[str, ...] = ()
    vendor_digest: str = ""
    paths: tuple[str, ...] = ()  # the M-profile path macros left out (aot/kernels/dsp_paths.py), sorted

    def key(self, paths: Iterable[str] | None = None) -> dict[str, object]:
        """What keys the configuration's hash: `paths` the left-out path macros counted (by default all)."""
        left_out = list(self.paths if paths is None else paths)
        return {"runtime_c": runtime_digest(), "target": self.target, "toolchain": self.toolchain,
                "host_isa": self.host_isa, "threads": self.threads if self.threads > 1 else 1,
                "portable": self.portable, "vendor_symbols": list(self.vendor_symbols),
                "vendor_digest": self.vendor_digest, **({"paths_left_out": left_out} if left_out else {})}

    @property
    def hash8(self) -> str:
        """The whole configuration's hash (AOTC_SYMBOLS_CONFIG_<hash8>, which the model's .c checks)."""
        return _hash8(self.key())

    @property
    def prefix(self) -> str:
        """The prefix of every name, keyed by all of the configuration but the M-profile paths left out."""
        return f"aotc_{_hash8(self.key(paths=()))}_"

    def prefix_of(self, file: str) -> str:
        """The prefix of the names kernel file `file` defines: `prefix`, and where the file's code depends on path
        macros left out (dsp_paths.FILE_PATHS: the conv's and the depthwise's files), a part more keyed by
        those. So bundles that differ only in their paths share every other object (and a compiler cache's
        hits), and no bundle calls a conv or depthwise compiled with another's paths."""
        from aot.kernels.dsp_paths import FILE_PATHS

        own = sorted(set(self.paths) & set(FILE_PATHS.get(file, ())))
        return f"{self.prefix}p{_hash8(self.key(paths=own))[:6]}_" if own else self.prefix

    def describe(self) -> str:
        return (f"target {self.target}" + (f", host ISA {self.host_isa}" if self.host_isa else "")
                + (f", threads {self.threads} (AOTC_THREADS)" if self.threads > 1 else ", one thread")
                + (", portable kernels (AOTC_NO_INTRINSICS)" if self.portable else ", ISA paths")
                + (f", vendor runtime {self.vendor_digest[:16]} ({len(self.vendor_symbols)} symbols)"
                   if self.vendor_symbols else "")
                + (f", {len(self.paths)} M-profile paths left out" if self.paths else ""))


def _hash8(key: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:8]


def vendor_digest(files: Iterable[tuple[str, str | bytes]]) -> str:
    """sha256 of a vendor runtime's files (path, content): part of the kernel configuration (SymbolConfig)."""
    h = hashlib.sha256()
    for rel, content in sorted(files, key=lambda f: f[0]):
        data = content.encode() if isinstance(content, str) else bytes(content)
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def aotc_symbols_header(config: SymbolConfig, symbols: Iterable[str] | None = None) -> str:
    """runtime/aotc_symbols.h of every bundle of kernel configuration `config`: a `#define <symbol>
    <prefix><symbol>` line for each global symbol aotc's runtime C can define (`symbols`: by default
    runtime_symbols_all() and the configuration's vendor symbols), so that the bundle's objects define only
    names under the configuration's prefix and any number of bundles link into one program. One file for
    the configuration, whichever model or files: no model's name is in it, so a compiler cache finds the
    kernels' objects of one bundle for another. aotc_common.h and dltensor.h include it first
    (runtime_c/include/aotc_symbols.h, which renames nothing, stands in for it in this tree), so a build of
    the bundle's files by any build system takes it: no flag is needed."""
    names = sorted({*(runtime_symbols_all() if symbols is None else symbols), *config.vendor_symbols})
    prefix = config.prefix
    owner = {s: f for f, row in _symbols().items() for s in row["defines"]}
    lines = ["/* Generated by aotc. The names in the objects of the global functions and data of aotc's runtime C",
             " * (the kernels, the vendors' runtimes), for every bundle of one kernel configuration:",
             f" *   {config.describe()}",
             f" *   runtime C sha256 {runtime_digest()}",
             f" * Each takes the prefix {prefix}, a hash of that configuration: bundles of one configuration",
             " * define the same code under the same names (linked into one program, the linker keeps one copy),",
             " * bundles of another configuration names of their own (docs/firmware.md, \"Several models in one",
             " * image\"). aotc_common.h and dltensor.h, which every file of the bundle includes before it declares",
             " * anything, include this file first. */",
             "#ifndef AOTC_SYMBOLS_H", "#define AOTC_SYMBOLS_H", "",
             f"#define AOTC_SYMBOLS_CONFIG_{config.hash8} 1 /* src/<model>.c checks it reads its configuration's */",
             ""]
    lines += [f"#define {s} {config.prefix_of(owner[s]) if s in owner else prefix}{s}" for s in names]
    if config.paths:  # the M-profile paths none of the model's layers takes: not compiled (aotc_tflite_int8.h)
        lines += ["", "/* the M-profile conv and depthwise paths left out (aot/kernels/dsp_paths.py) */",
                  *(f"#define {m} 0" for m in config.paths)]
    lines += ["", "#endif /* AOTC_SYMBOLS_H */", ""]
    return "\n".join(lines)


def _object_symbols(nm_output: str) -> tuple[list[str], set[str]]:
    """From `nm OBJECT`'s lines: the global symbols the object defines (code, data, read-only data, bss),
    sorted, and those it references undefined."""
    rows = [ln.split() for ln in nm_output.splitlines()]
    return sorted(r[-1] for r in rows if len(r) == 3 and r[1] in "TDRB"), {r[-1] for r in rows if r[0] == "U"}


def scan_symbols(cc: str = "gcc") -> dict[str, dict[str, list[str]]]:
    """Compile every shipped kernel source (at -O0: quick, and a call the optimiser would drop
    only keeps a file it did not need) and read its object's symbols with nm: the global functions
    and data each defines, and the runtime functions (defined by another kernel file) it calls, built
    with no ISA flags (`calls`) and with AVX512F_FLAGS (`calls_avx512f`). A file that reads
    AOTC_THREADS is also built as a --threads bundle builds it (threads.c defines its pool's entry
    points only then): its `defines` are those of both builds, as a bundle renames them
    (aotc_symbols_header)."""
    files = sorted({f for fam in kernel_families() for f in family_files(fam) if f.endswith(".c")})

    def symbols(f: str, flags: tuple[str, ...], tmp: str) -> tuple[list[str], set[str]]:
        obj = Path(tmp) / f"{f}.{'_'.join(flags).replace('-', '').replace('=', '') or 'plain'}.o"
        subprocess.run([cc, "-std=c99", "-O0", *flags, *kernel_include_flags(), "-c",
                        str(kernel_file(f)), "-o", str(obj)], check=True)
        return _object_symbols(subprocess.run(["nm", str(obj)], check=True, capture_output=True, text=True).stdout)

    threaded = [f for f in files if "AOTC_THREADS" in kernel_file(f).read_text()]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=2) as pool:
        found = dict(zip(files, pool.map(lambda f: symbols(f, (), tmp), files), strict=True))
        avx512 = dict(zip(files, pool.map(lambda f: symbols(f, AVX512F_FLAGS, tmp), files), strict=True))
        threads = dict(zip(threaded, pool.map(lambda f: symbols(f, THREADS_FLAGS, tmp), threaded), strict=True))
    if differ := [f for f in files if avx512[f][0] != found[f][0]]:  # one `defines` serves both builds
        raise RuntimeError(f"{', '.join(differ)}: define other functions when built with AVX-512F")
    defines = {f: sorted({*d, *(threads[f][0] if f in threads else ())}) for f, (d, _) in found.items()}
    every = {s for d in defines.values() for s in d}
    return {f: {"defines": defines[f], "calls": sorted(u & every), "calls_avx512f": sorted(avx512[f][1] & every)}
            for f, (_, u) in found.items()}


def write_symbols() -> Path:
    path = kernels_dir() / SYMBOLS_FILE
    path.write_text(json.dumps(scan_symbols(), indent=1, sort_keys=True) + "\n")
    _symbols.cache_clear()
    return path


def vendor_runtime_sources() -> list[Path]:
    """The C files under runtime_c/vendor/<vendor>/ that vendors ship into bundles (not their tools/)."""
    return sorted((runtime_dir() / "vendor").glob("*/*.c"))


def scan_vendor_symbols(include_dirs: Iterable[Path] = (), cc: str = "gcc") -> dict[str, dict[str, list[str]]]:
    """The global symbols each vendor runtime file defines (runtime_c/vendor/symbols.json, keyed
    "<vendor>/<file>.c"), read from its object as scan_symbols reads the kernels'. `include_dirs`: what a
    vendor's headers need besides runtime_c (oneDNN's include/ for dnnl/aotc_dnnl.c)."""
    rt = runtime_dir()
    flags = [f"-I{rt / 'include'}", *kernel_include_flags(), *(f"-I{d}" for d in include_dirs)]
    out: dict[str, dict[str, list[str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, src in enumerate(vendor_runtime_sources()):
            obj = Path(tmp) / f"{k}.o"
            subprocess.run([cc, "-std=c99", "-O0", f"-I{src.parent}", *flags, "-c", str(src), "-o", str(obj)],
                           check=True)
            nm = subprocess.run(["nm", str(obj)], check=True, capture_output=True, text=True).stdout
            out[src.relative_to(rt / "vendor").as_posix()] = {"defines": _object_symbols(nm)[0]}
    return out


def write_vendor_symbols(include_dirs: Iterable[Path] = ()) -> Path:
    from aot.vendor.base import VENDOR_SYMBOLS_FILE, vendor_symbols_table

    path = runtime_dir() / "vendor" / VENDOR_SYMBOLS_FILE
    path.write_text(json.dumps(scan_vendor_symbols(include_dirs), indent=1, sort_keys=True) + "\n")
    vendor_symbols_table.cache_clear()
    return path
