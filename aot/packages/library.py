"""A compiled bundle seen as a library to package: its files, how they compile, what they assume of the core.

Everything comes from the bundle itself: the sources, include folders and definitions from its CMakeLists.txt
(aot/packages/cmake_read.py), the weights blob's symbol and section from its .S file, the model's I/O and
sizes from metadata.json, the compiler flags of the core it was compiled for from target/toolchain.cmake.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from aot.errors import AotcError
from aot.packages.cmake_read import CMakeLibrary, read_cmake


@dataclass(frozen=True)
class Blob:
    """The large weights linked by .incbin: the .S that declares the symbol, the .bin it includes."""
    asm: str  # bundle-relative, e.g. src/mlp_weights.S
    data: str  # src/mlp_weights.bin
    symbol: str
    section: str
    align: int


@dataclass(frozen=True)
class Isa:
    """The core a bundle was compiled for, as a package states it (and a CMSIS-Pack condition requires it)."""
    target: str
    kind: str  # bare-metal | linux | host
    description: str
    cpu: str | None  # gcc's -mcpu, e.g. cortex-m4
    cpu_flags: str | None  # the target's compile flags, e.g. -mcpu=cortex-m4 -mthumb -mfloat-abi=hard ...
    dsp: bool  # kernels with the Arm DSP extension's paths
    helium: bool  # kernels with Helium (MVE) paths
    portable: bool  # built with AOTC_NO_INTRINSICS (a --flash-budget level): no ISA paths at all

    def summary(self) -> str:
        """One line for manifests: the target, its core and the compiler flags the bundle was compiled with."""
        ext = "Helium (MVE)" if self.helium else "the Arm DSP extension" if self.dsp else None
        core = self.description + (f" with {ext}" if ext else "")
        flags = f"; {self.cpu_flags}" if self.cpu_flags else ""
        kernels = "; portable C kernels (AOTC_NO_INTRINSICS)" if self.portable else ""
        return f"compiled for target {self.target} ({core}{flags}){kernels}"

    def explain(self) -> str:
        """What building for another core does, for READMEs and help texts."""
        if self.portable or not (self.dsp or self.helium):
            return ("Its kernels are portable C: any core with a C99 compiler builds them; the compiler's own "
                    "flags for the core decide the code.")
        if self.helium:
            return ("Kernels with Helium paths take them where the compiler defines __ARM_FEATURE_MVE (build with "
                    "the core's -mcpu); elsewhere their portable paths run, with kernels chosen for an M55: "
                    "recompile the model for a target of the core you build for.")
        return ("Kernels with DSP-extension paths take them where the compiler defines __ARM_FEATURE_DSP (build "
                "with the core's -mcpu), and a kernel aotc chose for those instructions (an int8 GEMM's interleaved "
                "weights) stops a build for a core without them (#error): recompile the model for a target of the "
                "core you build for.")


@dataclass
class Library:
    """What a platform package carries of a bundle, and how it compiles."""
    name: str
    meta: dict[str, Any]
    cmake: CMakeLibrary
    c_sources: list[str]  # bundle-relative, compiled as C
    blob: Blob | None
    separate_weights: str | None  # --separate-weights: the weights file the firmware loads (not compiled)
    public_headers: list[str]  # include/<name>.h
    private_headers: list[str]  # runtime/*.h, vendor headers: for the library's own sources only
    files: dict[str, bytes]  # every file above, bundle-relative path -> bytes
    isa: Isa
    incbins: list[str]  # files a C source's inline assembly includes by .incbin (a vendor's weights), found
    # through the include path (gcc passes -I to the assembler)

    @property
    def aotc_version(self) -> str:
        return str(self.meta.get("aotc_version", "?"))

    @property
    def source_model(self) -> str:
        return PurePosixPath(str(self.meta.get("source", "model"))).name

    @property
    def definitions(self) -> list[str]:
        """NAME=VALUE of every definition the library is compiled with (PRIVATE and PUBLIC)."""
        return [d for _, d in self.cmake.definitions]

    @property
    def private_include_dirs(self) -> list[str]:
        return self.cmake.private_includes

    @property
    def public_include_dirs(self) -> list[str]:
        return self.cmake.public_includes

    def text(self, rel: str) -> str:
        return self.files[rel].decode()


def _blob(bundle: Path, asm: str, data: str | None) -> Blob:
    """The symbol, section and alignment the .S gives the bytes it .incbin's (weights.S.j2)."""
    text = (bundle / asm).read_text()
    glob = re.search(r"^\s*\.global\s+(\w+)", text, re.M)
    section = re.search(r"^\s*\.section\s+([\w.]+)", text, re.M)
    align = re.search(r"^\s*\.balign\s+(\d+)", text, re.M)
    incbin = re.search(r'^\s*\.incbin\s+"([^"]+)"', text, re.M)
    if not (glob and section and align and incbin):
        raise AotcError(f"{bundle / asm}: not the weights file aotc writes (.global, .section, .balign, .incbin)")
    folder = PurePosixPath(asm).parent
    path = data or str(folder / incbin.group(1))
    if PurePosixPath(path).name != incbin.group(1):
        raise AotcError(f"{bundle / asm} includes {incbin.group(1)}, but the CMakeLists.txt says it depends on {path}")
    return Blob(asm, path, glob.group(1), section.group(1), int(align.group(1)))


def _isa(bundle: Path, meta: dict[str, Any], cmake: CMakeLibrary) -> Isa:
    """The core the bundle assumes: flags from target/toolchain.cmake, features from aotc's table of cores."""
    from aot.targets import AVX512_ISAS, CORTEX_M_CPUS, get_target

    target = str(meta.get("target", "host"))
    if meta.get("host_isa") in AVX512_ISAS:
        raise AotcError(f"the bundle's kernels were chosen for AVX-512 (--host-isa {meta['host_isa']}): recompile it "
                        "for the platform's core (a Cortex-M board with --target, or --target host --host-isa generic)")
    toolchain = bundle / "target" / "toolchain.cmake"
    flags = None
    if toolchain.is_file():
        m = re.search(r'set\(AOTC_CPU_FLAGS\s+"([^"]*)"\)', toolchain.read_text())
        flags = m.group(1) if m else None
    cpu_m = re.search(r"-mcpu=(\S+)", flags or "")
    cpu = cpu_m.group(1) if cpu_m else None
    kind = str((meta.get("target_info") or {}).get("kind", "host" if target == "host" else "bare-metal"))
    description, dsp, helium = target, False, False
    try:
        t = get_target(target)
        description = re.split(r", (?:bare metal|qemu)", t.description)[0]
        dsp, helium, kind = t.dsp, t.helium, t.kind
    except AotcError:  # a registered target whose package is gone: the bundle's own flags still say the core
        pass
    if cpu in CORTEX_M_CPUS:
        _, dsp, helium, description = CORTEX_M_CPUS[cpu]
    portable = any(d.split("=")[0] == "AOTC_NO_INTRINSICS" for _, d in cmake.definitions)
    return Isa(target, kind, description, cpu, flags, dsp and not portable, helium and not portable, portable)


def read_library(out: Path) -> Library:
    """The library of the bundle in `out` (an `aotc MODEL -o OUT` folder, or its bundle/ folder itself)."""
    bundle = out / "bundle" if (out / "bundle" / "metadata.json").is_file() else out
    if not (bundle / "metadata.json").is_file():
        raise AotcError(f"'{out}' holds no aotc bundle (no {out / 'bundle' / 'metadata.json'}); compile with: "
                        f"aotc MODEL -o {out}")
    meta = json.loads((bundle / "metadata.json").read_text())
    name = str(meta["name"])
    cmake_file = bundle / "CMakeLists.txt"
    if not cmake_file.is_file():
        raise AotcError(f"{bundle} has no CMakeLists.txt: not a whole aotc bundle")
    cmake = read_cmake(cmake_file.read_text(), name)
    asm = [s for s in cmake.sources if s.endswith((".S", ".s"))]
    c_sources = [s for s in cmake.sources if s.endswith(".c")]
    odd = [s for s in cmake.sources if s not in asm and s not in c_sources]
    if odd:
        raise AotcError(f"the bundle's library compiles {odd[0]}, which is neither C nor assembly")
    if len(asm) > 1:
        raise AotcError(f"the bundle's library has {len(asm)} assembly files; a package knows only the weights' one")
    blob = _blob(bundle, asm[0], cmake.asm_depends.get(asm[0])) if asm else None
    sep = (meta.get("memory") or {}).get("separate_weights")
    separate = str(sep["file"]) if sep else None
    public = sorted(p.relative_to(bundle).as_posix() for d in cmake.public_includes
                    for p in (bundle / d).rglob("*") if p.is_file())
    private = sorted(p.relative_to(bundle).as_posix() for d in cmake.private_includes
                     for p in (bundle / d).rglob("*") if p.is_file() and p.suffix != ".c")
    wanted = [*c_sources, *public, *private, "metadata.json"]
    if blob:
        wanted += [blob.asm, blob.data]
    if separate:
        wanted.append(separate)
    files = {}
    for rel in dict.fromkeys(wanted):
        path = bundle / rel
        if not path.is_file():
            raise AotcError(f"the bundle's CMakeLists.txt names {rel}, which is not in {bundle}")
        files[rel] = path.read_bytes()
    incbins = []
    for src in c_sources:
        for wanted_name in re.findall(r'\.incbin\s+\\?"([^"\\]+)', files[src].decode(errors="replace")):
            found = [rel for rel in private if PurePosixPath(rel).name == wanted_name]
            if not found:
                raise AotcError(f"{src} includes {wanted_name} by .incbin, which is in none of the library's "
                                "include folders")
            incbins.append(found[0])
    return Library(name, meta, cmake, c_sources, blob, separate, public, private, files, _isa(bundle, meta, cmake),
                   incbins)
