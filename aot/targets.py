"""Targets: what `--target` names, and what a bundle needs to build and run there.

A target is a CMake toolchain file in cmake/ (none for the host) plus how to run its
programs: directly, under qemu-user (Linux on Arm and RISC-V), or under qemu-system-arm
with semihosting (bare-metal Cortex-M boards). Bare-metal boards also have memory
regions; `fit_bundle` checks that a model fits them before anything is written, picks
where its large weights and its arena go, and copies the board support (toolchain file,
startup code, linker scripts) into the bundle's target/ folder so the bundle builds
anywhere on its own.

Besides the built-in table (TARGETS), a package registers targets under the `aotc.targets`
entry-point group (a Target, a list of them, or a function returning either); a registered
target ships its own files (Target.files: toolchain file, linker script, ...) into bundle/target/
as the built-in ones ship theirs from cmake/. `cortex_m_board` declares a Cortex-M board.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aot import limits
from aot.errors import AotcError
from aot.limits import MAX_ARENA_BYTES
from aot.paths import cmake_dir

if TYPE_CHECKING:
    from aot.emit_c import Bundle

KIB, MIB = 1024, 1024 * 1024

# What the runner image needs besides the model, in bytes. The linker script asserts the
# stack and heap reserve again at link time (sections.ld).
CODE_RESERVE = 128 * KIB  # startup, runner, newlib-nano, kernels: in flash
STACK_RESERVE = 32 * KIB  # AOTC_STACK_SIZE in sections.ld
HEAP_RESERVE = 16 * KIB  # AOTC_HEAP_MIN: newlib's stdio buffers
DATA_RESERVE = 8 * KIB  # .data + .bss of the runner and libc
RUNNER_TIMES_BYTES = 8 * 1000  # the runner's table of timings (MAX_REPEAT doubles on bare metal)


@dataclass(frozen=True)
class Region:
    """A memory region as named in the board's linker script."""
    name: str  # FLASH, RAM, PSRAM, ...
    origin: int
    size: int
    what: str  # what the board's documentation calls it


BUILT_IN = "built-in"  # Target.origin of the targets in TARGETS


@dataclass(frozen=True)
class Target:
    """Everything aotc needs to know of a target: how to build for it, run on it, and fit a model to it."""
    name: str
    description: str
    toolchain: str | None = None  # file in cmake/, None for the host compiler (or a toolchain.cmake in `files`)
    emulator: tuple[str, ...] = ()  # command prefix that runs a built program
    kind: str = "host"  # host | linux | bare-metal
    # bare metal: the board's name, which names its linker script cortex-m/<board>.ld (and for the built-in
    # boards, qemu-system-arm's -M machine; a registered board's machine is in `emulator`)
    board: str | None = None
    regions: tuple[Region, ...] = ()
    weights_regions: tuple[str, ...] = ()  # where the weights blob may go, in order of preference
    arena_regions: tuple[str, ...] = ()  # where the arena may go, in order of preference
    rodata_region: str = "FLASH"  # where read-only data (small weights, constants) goes
    executable_suffix: str = ""
    compiler: str | None = None  # the cross compiler the toolchain file names
    apt: tuple[str, ...] = ()  # Debian packages that provide the compiler and the emulator
    # SSE2 or NEON as its C compiler is configured (aot/kernels TargetTraits: register block widths)
    vector_unit: bool = True
    helium: bool = False  # Arm's M-profile vector extension (MVE), which gcc vectorises for
    dsp: bool = False  # the Arm DSP extension (SMLAD and the like: Cortex-M4, M7, M33, M55)
    # a registered target's own files for bundle/target/ (path there -> text), which take the place of
    # cmake/'s of the same path: its toolchain.cmake, its cortex-m/<board>.ld, its cortex-m/startup.c ...
    # (a mapping is kept as sorted (path, text) pairs, so that a Target stays hashable)
    files: Mapping[str, str] | tuple[tuple[str, str], ...] = ()
    origin: str = BUILT_IN  # where it came from: built-in, or the package and entry point that registered it

    def __post_init__(self) -> None:
        if isinstance(self.files, Mapping):
            object.__setattr__(self, "files", tuple(sorted(self.files.items())))

    def file(self, path: str) -> str | None:
        """The text of its own file `path` (relative to bundle/target/), None when it has none."""
        return dict(self.files).get(path)

    @property
    def has_toolchain(self) -> bool:
        """Cross compiled: a toolchain file from cmake/ or of its own."""
        return bool(self.toolchain) or self.file("toolchain.cmake") is not None

    @property
    def flash_bytes(self) -> int | None:
        return self.region("FLASH").size if self.regions else None

    @property
    def ram_bytes(self) -> int | None:
        return self.region("RAM").size if self.regions else None

    def region(self, name: str) -> Region:
        return next(r for r in self.regions if r.name == name)

    @property
    def emulated(self) -> bool:
        return bool(self.emulator)

    def memory_summary(self) -> str:
        if not self.regions:
            return "memory: the OS's"
        return ", ".join(f"{r.what} {human(r.size)}" for r in self.regions)


def _qemu_system(board: str) -> tuple[str, ...]:
    return ("qemu-system-arm", "-M", board, "-nographic", "-monitor", "none", "-serial", "none")


_MPS2 = (
    Region("FLASH", 0x00000000, 4 * MIB, "flash (SSRAM1)"),
    Region("RAM", 0x20000000, 4 * MIB, "RAM (SSRAM2/3)"),
    Region("PSRAM", 0x21000000, 16 * MIB, "PSRAM"),
)
_AN505 = (  # the Secure aliases: the M33 boots in the Secure state
    Region("FLASH", 0x10000000, 4 * MIB, "flash (SSRAM1)"),
    Region("RAM", 0x38000000, 4 * MIB, "RAM (SSRAM2/3)"),
    Region("PSRAM", 0x80000000, 16 * MIB, "PSRAM"),
)
_AN500 = (
    Region("FLASH", 0x00000000, 4 * MIB, "flash (SSRAM1)"),
    Region("RAM", 0x20000000, 4 * MIB, "RAM (SSRAM2/3)"),
    Region("PSRAM", 0x60000000, 16 * MIB, "PSRAM"),
)
_AN547 = (
    Region("FLASH", 0x10000000, 512 * KIB, "flash (ITCM)"),
    Region("CODE_SRAM", 0x11000000, 2 * MIB, "code SRAM"),
    Region("RAM", 0x30000000, 512 * KIB, "RAM (DTCM)"),
    Region("SRAM", 0x31000000, 4 * MIB, "SRAM"),
    Region("DDR", 0x70000000, 256 * MIB, "DDR"),
)


def _board(name: str, cpu: str, regions: tuple[Region, ...], weights: tuple[str, ...],
           arena: tuple[str, ...], rodata: str = "FLASH", helium: bool = False, dsp: bool = False) -> Target:
    return Target(name, f"{cpu}, bare metal, qemu-system-arm -M {name} (semihosting)", toolchain=f"{name}.cmake",
                  emulator=_qemu_system(name), kind="bare-metal", board=name, regions=regions,
                  weights_regions=weights, arena_regions=arena, rodata_region=rodata, executable_suffix=".elf",
                  compiler="arm-none-eabi-gcc", vector_unit=False, helium=helium, dsp=dsp,
                  apt=("gcc-arm-none-eabi", "libnewlib-arm-none-eabi", "qemu-system-arm"))


def _linux(name: str, what: str, qemu: str, triple: str, deb_arch: str, vector_unit: bool) -> Target:
    return Target(name, f"Linux on {what}, {qemu} (static executables)", toolchain=f"{name}.cmake",
                  emulator=(qemu,), kind="linux", compiler=f"{triple}-gcc", vector_unit=vector_unit,
                  apt=(f"gcc-{triple}", f"libc6-dev-{deb_arch}-cross", "qemu-user"))


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("host", "the machine aotc runs on, with its default C compiler"),
    _board("mps2-an385", "Arm Cortex-M3 (no FPU)", _MPS2, ("FLASH", "PSRAM"), ("RAM", "PSRAM")),
    _board("mps2-an386", "Arm Cortex-M4F (FPU)", _MPS2, ("FLASH", "PSRAM"), ("RAM", "PSRAM"), dsp=True),
    _board("mps2-an505", "Arm Cortex-M33 (FPU, DSP)", _AN505, ("FLASH", "PSRAM"), ("RAM", "PSRAM"), dsp=True),
    _board("mps2-an500", "Arm Cortex-M7 (FPU, DSP)", _AN500, ("FLASH", "PSRAM"), ("RAM", "PSRAM"), dsp=True),
    _board("mps3-an547", "Arm Cortex-M55 (FPU, Helium)", _AN547, ("CODE_SRAM", "DDR"), ("RAM", "SRAM", "DDR"),
           rodata="CODE_SRAM", helium=True, dsp=True),
    _linux("aarch64-linux", "64-bit Arm", "qemu-aarch64", "aarch64-linux-gnu", "arm64", True),
    _linux("armv7-linux", "32-bit Arm (ARMv7-A, hard float)", "qemu-arm", "arm-linux-gnueabihf", "armhf", False),
    _linux("riscv64-linux", "64-bit RISC-V", "qemu-riscv64", "riscv64-linux-gnu", "riscv64", False),
)}


@functools.cache
def host_cpu_flags() -> frozenset[str]:
    """This machine's CPU flags (Linux: /proc/cpuinfo's first "flags" line), empty where it cannot be read."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((frozenset(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")),
                        frozenset())
    except OSError:
        return frozenset()


def host_has_avx512() -> bool:
    """This machine's CPU has AVX-512F, so a host build with -march=native has it."""
    return "avx512f" in host_cpu_flags()


def host_has_vnni() -> bool:
    """This machine's CPU has AVX-512 VNNI (beside AVX-512F), so a host build with -march=native has it."""
    return host_has_avx512() and "avx512_vnni" in host_cpu_flags()


# The ISA levels a host bundle's kernel choice can assume (--host-isa; metadata.json "host_isa"). They
# are what the choice tells apart, no more: the x86 kernels' AVX-512 paths (conv_avx512.py, pool.py) exist
# in a build with AVX-512F, and the QDQ convs' qconv_rows (quant_avx512vnni.h, w_packed 2) pays only in a build
# with VNNI too (without it the weights are read by the gathering path: Skylake-X 26 -> 33 ms on ResNet-18 QDQ);
# every other kernel is portable C that the build's -march=native vectorises as it can. By default a host bundle
# assumes the compiling machine's level, which makes its bytes depend on that machine; a named level makes them
# the same on any machine.
HOST_ISAS = {
    "avx512vnni": "avx512f's paths and the QDQ convs' VNNI-only one: for a build with AVX-512F and AVX-512 VNNI "
                  "(-march=native on Ice Lake, Zen 4 and later)",
    "avx512f": "the kernels' AVX-512 paths: for a build with AVX-512F (-march=native on a CPU that has it)",
    "generic": "portable C kernels only: for any CPU (x86 without AVX-512F, Arm, ...)",
}
AVX512_ISAS = ("avx512f", "avx512vnni")  # the levels whose builds have AVX-512F (the x86 paths are taken)


def host_isa(given: str | None, target: Target) -> str | None:
    """The ISA level a bundle for `target` assumes: `given` (--host-isa), else the compiling machine's;
    None for a cross target, whose level is the target's own."""
    if target.kind != "host":
        if given is not None:
            raise AotcError(f"--host-isa {given}: target {target.name} is not the host "
                            "(the level is for --target host; a cross target's CPU is the target's own)")
        return None
    if given is None:
        return "avx512vnni" if host_has_vnni() else "avx512f" if host_has_avx512() else "generic"
    if given not in HOST_ISAS:
        raise AotcError(f"unknown host ISA level '{given}' (known: {', '.join(HOST_ISAS)})")
    return given


def toolchain_digest(name: str) -> str:
    """sha256 of the CMake files that set target `name`'s compile flags, "" for the host: its toolchain file
    (cmake/'s, or a registered target's own toolchain.cmake) and, on a board, the flags the Cortex-M boards share
    (cortex-m/arm-none-eabi.cmake): part of a bundle's kernel configuration (emit_c SymbolConfig)."""
    t = get_target(name)
    if not t.has_toolchain:
        return ""
    paths = ["toolchain.cmake", *(["cortex-m/arm-none-eabi.cmake"] if t.kind == "bare-metal" else [])]
    h = hashlib.sha256()
    for path in paths:
        own = t.file(path)
        if own is not None:
            data = own.encode()
        else:
            data = (cmake_dir() / (t.toolchain if path == "toolchain.cmake" else path)).read_bytes()
        h.update(f"{path}\0{len(data)}\0".encode() + data)
    return h.hexdigest()


def get_target(name: str) -> Target:
    """The built-in or registered target `name`; refused in one line when unknown, when a package registers
    a built-in target's name or one another package registers too, or when its entry point is broken."""
    registered, problems = _registered()
    if name in problems:
        raise AotcError(problems[name])
    if name in TARGETS:
        return TARGETS[name]
    if name in registered:
        return registered[name]
    broken = [m for k, m in problems.items() if k.startswith(_BROKEN)]
    known = ", ".join([*TARGETS, *registered])
    raise AotcError(f"unknown target '{name}' (known: {known})"
                    + (f"; {len(broken)} target entry point(s) could not be loaded: {broken[0]}" if broken else ""))


def bundle_target(meta: Mapping[str, Any]) -> Target:
    """The target a bundle was compiled for (its metadata.json). Running or measuring it needs the target's
    emulator and memory map: when the package that registered it is gone, the error names that package."""
    name = meta.get("target", "host")
    try:
        return get_target(name)
    except AotcError as e:
        by = (meta.get("target_info") or {}).get("registered_by")
        if by and name not in _registered()[0]:
            raise AotcError(f"the bundle is for target {name}, registered by {by}, which is not installed: "
                            "install that package to run or measure it (building it needs only the bundle)") from e
        raise


def require_tools(target: Target, *, build: bool = True, run: bool = False) -> None:
    """Refuse, with the packages to install, when the target's compiler (to build) or its
    emulator (to run) is missing."""
    import shutil

    tools = [target.compiler] if build and target.compiler else []
    if run and target.emulator:
        tools.append(target.emulator[0])
    if run and target.kind != "host" and not target.emulator:
        raise AotcError(f"target {target.name} has no emulator to run its programs on this machine "
                        f"({target.origin}): run the runner on the device")
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise AotcError(f"target {target.name} needs {', '.join(missing)}, which is not installed "
                        f"(Debian/Ubuntu: apt-get install {' '.join(target.apt)})")


def list_targets() -> str:
    """The table `aotc --list-targets` prints: every target with its memory and where it came from, then a
    line for each entry point that could not be loaded (which the user's package must mend)."""
    registered, problems = _registered()
    targets = [*TARGETS.values(), *(t for n, t in registered.items() if n not in problems)]
    width = max(len(t.name) for t in targets)
    rows = [f"{t.name:<{width}}  {t.description}; {t.memory_summary()} [{t.origin}]\n" for t in targets]
    return "".join(rows + [f"(refused: {m})\n" for m in problems.values()])


# --- targets registered by packages ---------------------------------------------------------

GROUP = "aotc.targets"
_BROKEN = "\0"  # prefix of the problems' keys for entry points that gave no target at all


@functools.cache
def _entry_points() -> tuple[EntryPoint, ...]:
    return tuple(entry_points(group=GROUP))


def _where(ep: EntryPoint) -> str:
    """The package and entry point, as --list-targets and the errors name them."""
    dist = getattr(ep, "dist", None)
    return (f"{dist.name} {dist.version}, " if dist is not None else "") + f"entry point {ep.name} = {ep.value}"


def _load(ep: EntryPoint) -> tuple[Target, ...]:
    """The targets an entry point gives: a Target, a list of them, or a function returning either."""
    what = f"target entry point {ep.name} = {ep.value}"
    try:
        obj = ep.load()
        if callable(obj) and not isinstance(obj, Target):
            obj = obj()
    except AotcError as e:  # e.g. cortex_m_board() refused its arguments
        raise AotcError(f"{e.one_line()} [{what}]") from e
    except Exception as e:  # the package's bug: one line, never a traceback
        raise AotcError(f"{what} failed to load: {type(e).__name__}: {e}") from e
    targets = (obj,) if isinstance(obj, Target) else tuple(obj) if isinstance(obj, (list, tuple)) else ()
    if not targets or not all(isinstance(t, Target) for t in targets):
        raise AotcError(f"{what} gives {type(obj).__name__}, not an aot.targets.Target or a list of them")
    try:
        return tuple(check_target(replace(t, origin=_where(ep))) for t in targets)
    except AotcError as e:
        raise AotcError(f"{e.one_line()} [{what}]") from e


@functools.cache
def _registered() -> tuple[dict[str, Target], dict[str, str]]:
    """Every registered target by name, and the problems by target name (a clash) or by _BROKEN + the entry
    point's name (it gave nothing), each one line. Loaded once per process, and only when a package
    registers something: with none installed, nothing is imported."""
    found: dict[str, Target] = {}
    problems: dict[str, str] = {}
    for ep in _entry_points():
        try:
            targets = _load(ep)
        except AotcError as e:
            problems[_BROKEN + ep.name] = e.one_line()
            continue
        for t in targets:
            if t.name in TARGETS:
                problems[t.name] = (f"target entry point {ep.name} = {ep.value} (group {GROUP}) registers "
                                    f"'{t.name}', the name of a built-in target: give it another name")
            elif t.name in found:
                problems[t.name] = (f"target '{t.name}' is registered twice, by {found[t.name].origin} and by "
                                    f"{t.origin}: uninstall one of the packages")
            else:
                found[t.name] = t
    return found, problems


def forget_registered() -> None:
    """Read the entry points again on the next look-up (after installing a package in this process)."""
    _entry_points.cache_clear()
    _registered.cache_clear()


def human(n: int) -> str:
    """Bytes for people: 4 MiB, 320.5 KiB, 208 B."""
    for unit, size in (("MiB", MIB), ("KiB", KIB)):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} B"


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\Z")  # a target's and a board's name: file names, CMake words
_GENERATED = "cortex-m/aotc_regions.ld"  # written per model by the fit check: no target ships its own


def check_target(t: Target) -> Target:
    """Refuse, in one line naming it, a registered target aotc could not build, fit or run a bundle for. Run
    when its entry point is loaded, so that a package's mistake shows at once, not halfway through a build."""
    if not isinstance(t.name, str) or not _NAME.match(t.name):
        raise AotcError(f"target name {t.name!r} is not a name (letters, digits and . _ + -, as in file names)")
    who = f"target {t.name}"
    if t.kind not in ("linux", "bare-metal"):
        raise AotcError(f"{who}: kind '{t.kind}' cannot be registered (linux or bare-metal: the host is aotc's)")
    for path, text in t.files:
        if not isinstance(path, str) or not isinstance(text, str) or not Path(path).parts \
                or Path(path).is_absolute() or ".." in Path(path).parts:
            raise AotcError(f"{who}: its file {path!r} must be a relative path under bundle/target/ with its text")
        if path == _GENERATED:
            raise AotcError(f"{who}: {path} is aotc's, written for each model after the fit check; drop it")
    if t.toolchain and not (cmake_dir() / t.toolchain).is_file():
        raise AotcError(f"{who}: toolchain '{t.toolchain}' is not a file of aotc's cmake/ (ship your own as "
                        "files['toolchain.cmake'])")
    if not t.has_toolchain:
        raise AotcError(f"{who}: no CMake toolchain file (files['toolchain.cmake'], or cortex_m_board() writes one)")
    if not isinstance(t.emulator, tuple) or not all(isinstance(a, str) for a in t.emulator):
        raise AotcError(f"{who}: emulator must be a tuple of strings (the command prefix that runs a program)")
    if t.kind == "bare-metal":
        _check_board(t, who)
    return t


def _check_board(t: Target, who: str) -> None:
    """A bare-metal target's memory map, as the fit check and its linker script read it."""
    if not all(isinstance(r, Region) for r in t.regions):
        raise AotcError(f"{who}: regions must be aot.targets.Region values")
    names = [r.name for r in t.regions]
    if len(set(names)) != len(names) or not {"FLASH", "RAM"} <= set(names):
        raise AotcError(f"{who}: its regions ({', '.join(names) or 'none'}) must have distinct names, among them "
                        "FLASH (code, constants) and RAM (stack, heap, data)")
    for r in t.regions:
        if not re.fullmatch(r"[A-Za-z_]\w*", r.name) or r.origin < 0 or r.size <= 0:
            raise AotcError(f"{who}: region {r.name!r} needs a linker-script name, an origin >= 0 and a size > 0")
    for what, order in (("weights_regions", t.weights_regions), ("arena_regions", t.arena_regions),
                        ("rodata_region", (t.rodata_region,))):
        if not order or not set(order) <= set(names):
            raise AotcError(f"{who}: {what} ({', '.join(order) or 'none'}) must name some of its regions "
                            f"({', '.join(names)})")
    if not isinstance(t.board, str) or not _NAME.match(t.board):
        raise AotcError(f"{who}: board must name its linker script, cortex-m/<board>.ld")
    toolchain = t.file("toolchain.cmake")
    if toolchain is not None and not re.search(rf"set\(\s*AOTC_BOARD\s+\"?{re.escape(t.board)}\"?\s*\)", toolchain):
        raise AotcError(f"{who}: its toolchain.cmake must set(AOTC_BOARD {t.board}), the name of its linker script "
                        "(target/board.cmake links with cortex-m/${AOTC_BOARD}.ld)")
    script = t.file(f"cortex-m/{t.board}.ld")
    if script is not None:
        check_linker_script(t, script)
    elif not (cmake_dir() / "cortex-m" / f"{t.board}.ld").is_file():
        raise AotcError(f"{who}: no linker script (files['cortex-m/{t.board}.ld'])")


def _ld_number(text: str) -> int | None:
    m = re.fullmatch(r"\s*(0[xX][0-9a-fA-F]+|\d+)\s*([KM]?)\s*", text)
    return int(m[1], 0) * {"": 1, "K": KIB, "M": MIB}[m[2]] if m else None


def linker_memory(script: str) -> dict[str, tuple[int | None, int | None]]:
    """The regions of a linker script's MEMORY block: name -> (origin, length), None where not a plain number."""
    text = re.sub(r"/\*.*?\*/", " ", script, flags=re.S)
    block = re.search(r"\bMEMORY\s*\{(.*?)\}", text, re.S)
    rows = re.finditer(r"(\w+)\s*(?:\([^)]*\))?\s*:\s*(?:ORIGIN|org|o)\s*=\s*([^,]+?)\s*,\s*"
                       r"(?:LENGTH|len|l)\s*=\s*([^\s,;]+)", block[1] if block else "")
    return {m[1]: (_ld_number(m[2]), _ld_number(m[3])) for m in rows}


def check_linker_script(t: Target, script: str) -> None:
    """A board's own linker script agrees with its declared regions (what the fit check counts on), and takes
    the fit check's placement and aotc's sections (INCLUDE aotc_regions.ld, sections.ld)."""
    who = f"target {t.name}: its linker script cortex-m/{t.board}.ld"
    memory = linker_memory(script)
    for r in t.regions:
        origin, size = memory.get(r.name, (None, None))
        if r.name not in memory:
            raise AotcError(f"{who} has no region {r.name} in its MEMORY block (declared: {human(r.size)} at "
                            f"0x{r.origin:08x})")
        if origin is None or size is None:
            raise AotcError(f"{who}: write region {r.name}'s ORIGIN and LENGTH as numbers (0x20000000, 128K), "
                            "which aotc can compare with the declaration")
        if (origin, size) != (r.origin, r.size):
            raise AotcError(f"{who} says {r.name} is {human(size)} at 0x{origin:08x}, the declaration "
                            f"{human(r.size)} at 0x{r.origin:08x}: the fit check would count the wrong memory")
    for needed in ("aotc_regions.ld", "sections.ld"):
        if not re.search(rf"^\s*INCLUDE\s+{re.escape(needed)}\s*$", script, re.M):
            raise AotcError(f"{who} must INCLUDE {needed} (after its MEMORY block and its "
                            'REGION_ALIAS("AOTC_RODATA", ...)): where the fit check put the weights and the arena')


# Cortex-M cores cortex_m_board() knows: gcc's flags (as the built-in boards' toolchain files), the DSP
# extension, Helium, and what --list-targets says of it.
CORTEX_M_CPUS: dict[str, tuple[str, bool, bool, str]] = {
    "cortex-m3": ("-mcpu=cortex-m3 -mthumb -mfloat-abi=soft", False, False, "Arm Cortex-M3 (no FPU)"),
    "cortex-m4": ("-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16", True, False, "Arm Cortex-M4F (FPU)"),
    "cortex-m7": ("-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16", True, False, "Arm Cortex-M7 (FPU)"),
    "cortex-m33": ("-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16", True, False,
                   "Arm Cortex-M33 (FPU)"),
    "cortex-m55": ("-mcpu=cortex-m55 -mthumb -mfloat-abi=hard", True, True, "Arm Cortex-M55 (FPU, Helium)"),
}

# A file a package ships: a pathlib.Path (or importlib.resources.files(pkg) / name) is read; a str is the text.
FileText = Any


def _text(x: FileText, what: str) -> str:
    if isinstance(x, str):
        if "\n" not in x and re.search(r"\.(ld|cmake|c|h|S)\Z", x):
            raise AotcError(f"{what} '{x}' looks like a file name: give a pathlib.Path for a file "
                            "(a str is the file's text)")
        return x
    try:
        return x.read_text() if hasattr(x, "read_text") else Path(os.fspath(x)).read_text()
    except (OSError, TypeError) as e:
        raise AotcError(f"cannot read {what} {x}: {getattr(e, 'strerror', None) or e}") from e


def cortex_m_board(name: str, *, cpu: str, regions: Iterable[Region], qemu_machine: str | None = None,
                   qemu_cpu: str | None = None, cpu_flags: str | None = None, description: str | None = None,
                   weights_regions: Iterable[str] | None = None, arena_regions: Iterable[str] | None = None,
                   rodata_region: str = "FLASH", linker_script: FileText = None, toolchain: FileText = None,
                   startup: FileText = None, files: Mapping[str, FileText] | None = None,
                   dsp: bool | None = None, helium: bool | None = None) -> Target:
    """A bare-metal Cortex-M board for a package to register (entry-point group aotc.targets), built with
    arm-none-eabi-gcc and aotc's Cortex-M support like the built-in boards, so that a vendor's own board needs
    no change to aotc. Its files ship in every bundle for it (bundle/target/): `linker_script` (default:
    one written from `regions`; yours must INCLUDE aotc_regions.ld and sections.ld), `toolchain` (default:
    one written from `cpu_flags`, the core's, and the qemu machine), `startup` (default: aotc's), and
    `files` (more, by their path under bundle/target/). `qemu_machine` (and `qemu_cpu`): what `aotc run`
    and ctest run its programs on, None for a board qemu does not emulate. `weights_regions` and
    `arena_regions` (where the fit check may put them, in order): by default FLASH or RAM, then the other
    regions."""
    regions = tuple(regions)
    known = CORTEX_M_CPUS.get(cpu)
    if known is None and cpu_flags is None:
        raise AotcError(f"board {name}: cpu '{cpu}' is not one aotc knows the flags of ({', '.join(CORTEX_M_CPUS)}):"
                        " give cpu_flags (and dsp, helium)")
    flags, core_dsp, core_helium, what = known or (cpu_flags, False, False, f"Arm {cpu}")
    flags = cpu_flags or flags
    emulator = (*_qemu_system(qemu_machine), *(("-cpu", qemu_cpu) if qemu_cpu else ())) if qemu_machine else ()
    runs = f"qemu-system-arm -M {qemu_machine} (semihosting)" if qemu_machine else "no emulator"
    others = tuple(r.name for r in regions if r.name not in ("FLASH", "RAM"))
    given = {f"cortex-m/{name}.ld": linker_script, "toolchain.cmake": toolchain, "cortex-m/startup.c": startup}
    own = {path: _text(x, f"board {name}'s {path}")
           for path, x in {**(files or {}), **{k: v for k, v in given.items() if v is not None}}.items()}
    own.setdefault(f"cortex-m/{name}.ld", _linker_script(name, regions, rodata_region))
    own.setdefault("toolchain.cmake", _toolchain(name, what, flags, emulator))
    target = Target(name, description or f"{what}, bare metal, {runs}", emulator=emulator, kind="bare-metal",
                    board=name, regions=regions,
                    weights_regions=tuple(weights_regions) if weights_regions is not None else ("FLASH", *others),
                    arena_regions=tuple(arena_regions) if arena_regions is not None else ("RAM", *others),
                    rodata_region=rodata_region, executable_suffix=".elf", compiler="arm-none-eabi-gcc",
                    vector_unit=False, helium=core_helium if helium is None else helium,
                    dsp=core_dsp if dsp is None else dsp, files=own,
                    apt=("gcc-arm-none-eabi", "libnewlib-arm-none-eabi", *(("qemu-system-arm",) if emulator else ())))
    return check_target(target)


def _linker_script(name: str, regions: tuple[Region, ...], rodata: str) -> str:
    """The linker script of a board declared without one: its regions, then aotc's placement and sections."""
    width = max((len(r.name) for r in regions), default=0)
    rows = [f"  {r.name:<{width}} ({'rx' if r.name == 'FLASH' else 'rwx'}) : ORIGIN = 0x{r.origin:08x}, "
            f"LENGTH = 0x{r.size:x}" for r in regions]
    return "\n".join([f"/* aotc: linker script for {name}, written by aotc from the board's declared regions. */",
                      "MEMORY", "{", *rows, "}", f'REGION_ALIAS("AOTC_RODATA", {rodata});',
                      "INCLUDE aotc_regions.ld", "INCLUDE sections.ld", ""])


def _toolchain(name: str, what: str, flags: str, emulator: tuple[str, ...]) -> str:
    """The CMake toolchain file of a board declared without one, as cmake/<board>.cmake are for the built-in
    boards; it names the emulator itself, since the qemu machine need not be the board's name."""
    lines = [f"# aotc toolchain file: {name}, {what}, written by aotc from the board's declaration.",
             "#   cmake -S bundle -B build -DCMAKE_TOOLCHAIN_FILE=<this file>",
             f"set(AOTC_BOARD {name})", f'set(AOTC_CPU_FLAGS "{flags}")',
             "include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/arm-none-eabi.cmake)"]
    if emulator:
        lines += ["# ctest runs programs under qemu, on the machine that emulates this board",
                  f"set(CMAKE_CROSSCOMPILING_EMULATOR {' '.join(emulator)}",
                  "    -semihosting-config enable=on,target=native -kernel)"]
    else:
        lines += ["# no emulator: the runner runs on the board itself", "unset(CMAKE_CROSSCOMPILING_EMULATOR)"]
    return "\n".join(lines) + "\n"


# --- memory pools (aot/plan/pools.py) ------------------------------------------------------

def board_pools(target: Target, io_bytes: int, arena_in_each: bool = False) -> tuple[tuple[str, int], ...]:
    """A bare-metal board's memory map as pools, (region, bytes) fastest first (its arena regions, in the order the
    board prefers them), each with the bytes the runner leaves: the first (with arena_in_each, every
    one: what each could give a whole arena) less the runner's input copies and timings, RAM less the
    stack, heap and data reserve. () for a target without regions."""
    if target.kind != "bare-metal":
        return ()
    pools = []
    for k, name in enumerate(target.arena_regions):
        free = target.region(name).size
        if name == "RAM":
            free -= STACK_RESERVE + HEAP_RESERVE + DATA_RESERVE
        if k == 0 or arena_in_each:
            free -= io_bytes + RUNNER_TIMES_BYTES
        pools.append((name, max(free, 0)))
    return tuple(pools)


def check_pools(target: Target, names: tuple[str, ...]) -> None:
    """On a bare-metal board every pool is one of the regions an arena may go to, named as its linker
    script names it."""
    if target.kind != "bare-metal":
        return
    regions = ", ".join(f"{r} ({target.region(r).what}, {human(target.region(r).size)})"
                        for r in target.arena_regions)
    for name in names:
        if name not in target.arena_regions:
            raise AotcError(f"--memory-pool {name}: board {target.board} has no region '{name}' for data "
                            f"(its regions: {regions})")


# --- fit check ---------------------------------------------------------------------------

@dataclass
class Placement:
    """Where a model's memory goes on a board, and what it needs."""
    weights_region: str
    arena_region: str
    needs: dict[str, int] = field(default_factory=dict)
    pools: dict[str, int] = field(default_factory=dict)  # pools after the first (the arena): name -> bytes

    def as_dict(self) -> dict[str, Any]:
        return {"weights_blob": self.weights_region, "arena": self.arena_region, "bytes": dict(self.needs),
                **({"pools": {name: {"region": name, "bytes": n} for name, n in self.pools.items()}}
                   if self.pools else {})}


def place(target: Target, *, name: str, inline_weights: int, blob_weights: int, arena: int,
          io_bytes: int, pools: tuple[tuple[str, int], ...] = ()) -> Placement:
    """Choose regions for the weights blob and the runner's arena + I/O buffers on a board,
    or refuse with one line giving the sizes needed and available. `pools`: a plan across memory
    pools, (region, bytes) fastest first; the arena is the first pool's, in its region, and each
    other pool takes its bytes in the region of its name."""
    free = {r.name: r.size for r in target.regions}
    free["FLASH"] -= CODE_RESERVE
    free[target.rodata_region] -= inline_weights
    free["RAM"] -= STACK_RESERVE + HEAP_RESERVE + DATA_RESERVE
    arena_total = arena + io_bytes + RUNNER_TIMES_BYTES
    needs = {"code_reserve": CODE_RESERVE, "inline_weights": inline_weights, "weights_blob": blob_weights,
             "arena": arena, "runner_io": io_bytes + RUNNER_TIMES_BYTES,
             "stack_heap_reserve": STACK_RESERVE + HEAP_RESERVE + DATA_RESERVE}
    problems = []
    if free["FLASH"] < 0 or free[target.rodata_region] < 0:
        ro = target.region(target.rodata_region)
        problems.append(f"code and small weights need {human(CODE_RESERVE)} + {human(inline_weights)} "
                        f"({inline_weights} bytes), the board has {human(ro.size)} of {ro.what}")

    def choose(what: str, nbytes: int, order: tuple[str, ...]) -> str:
        for r in order:
            if free[r] >= nbytes:
                free[r] -= nbytes
                return r
        avail = " or ".join(f"{target.region(r).what} {human(max(free[r], 0))}" for r in order)
        problems.append(f"{what} need {human(nbytes)} ({nbytes} bytes), available: {avail}")
        return order[0]

    for pool, nbytes in pools[1:]:  # before the weights blob, which has a region to spare where these have not
        free[pool] -= nbytes
        if free[pool] < 0:
            problems.append(f"memory pool {pool} needs {human(nbytes)} ({nbytes} bytes), the board's "
                            f"{target.region(pool).what} has {human(max(free[pool] + nbytes, 0))} free")
    weights_region = (choose("weights", blob_weights, target.weights_regions) if blob_weights
                      else target.rodata_region)
    arena_region = choose("arena + runner I/O", arena_total, (pools[0][0],) if pools else target.arena_regions)
    if problems:
        raise AotcError(f"model '{name}' does not fit target {target.name}: " + "; ".join(problems)
                        + f" ({target.memory_summary()}; {human(CODE_RESERVE)} of flash and "
                          f"{human(STACK_RESERVE + HEAP_RESERVE + DATA_RESERVE)} of RAM kept for code, "
                          "stack and heap)")
    return Placement(weights_region, arena_region, needs, {p: n for p, n in pools[1:]})


def check_arena(name: str, arena: int, io_bytes: int) -> None:
    """Refuse an arena that, with the runner's copies of the inputs, no target holds (aot/limits.py)."""
    if arena + io_bytes > MAX_ARENA_BYTES:
        raise AotcError(f"model '{name}' needs an arena of {limits.human(arena)} ({arena} bytes) and "
                        f"{limits.human(io_bytes)} of input copies in the runner: over the 2 GiB of static memory "
                        "any target aotc builds for can hold")


def fit_bundle(bundle: Bundle, target_name: str) -> Bundle:
    """Check that `bundle` fits `target_name` and add the target's build files to it
    (bundle/target/: toolchain file, board support, linker scripts with the chosen placement).
    Raises AotcError before anything is written when the model does not fit."""
    target = get_target(target_name)
    meta = bundle.metadata
    check_arena(bundle.name, int(meta["memory"]["arena_bytes"]), sum(int(x["nbytes"]) for x in meta["inputs"]))
    blob = bundle.files.get(f"src/{bundle.name}_weights.bin", b"")
    blob_bytes = len(blob)
    weights = int(meta["memory"]["weights_bytes"])
    info: dict[str, Any] = {"name": target.name, "kind": target.kind}
    if target.regions:
        io_bytes = sum(int(x["nbytes"]) for x in meta["inputs"])  # the runner's input copies (outputs: in the arena)
        pools = tuple((p["name"], int(p["bytes"])) for p in meta["memory"].get("pools", ()))
        placement = place(target, name=bundle.name, inline_weights=max(weights - blob_bytes, 0),
                          blob_weights=blob_bytes, arena=int(meta["memory"]["arena_bytes"]), io_bytes=io_bytes,
                          pools=pools)
        info.update(board=target.board,
                    regions={r.name: {"origin": r.origin, "bytes": r.size, "what": r.what} for r in target.regions},
                    placement=placement.as_dict())
    if target.origin != BUILT_IN:
        info["registered_by"] = target.origin
    bundle.files.update(target_files(target, placement if target.regions else None))
    meta["target_info"] = info
    bundle.files["metadata.json"] = json.dumps(meta, indent=2) + "\n"
    return bundle


def _pool_sections(placement: Placement) -> str:
    """The output sections of a plan's pools after the first (the arena's), each in the region of its
    name. They come before sections.ld's, so its *(.bss*) does not take them."""
    if not placement.pools:
        return ""
    lines = ["", "/* aotc: the memory pools after the arena (--memory-pool; metadata.json memory.pools), each",
             " * in its own region. Zero-initialised by the model's run, not by start-up. */", "SECTIONS", "{"]
    lines += [f"  .aotc_pool_{p} (NOLOAD) : ALIGN(64) {{ KEEP(*(.bss.aotc_pool_{p})) }} > {p}"
              for p in placement.pools]
    return "\n".join([*lines, "}"]) + "\n"


def target_files(target: Target, placement: Placement | None) -> dict[str, str]:
    """The files of bundle/target/ for `target`: cmake/'s, and a registered target's own (Target.files) in the
    place of cmake/'s of the same path, so that the bundle builds without the package that registered it."""
    src = cmake_dir()
    own = {f"target/{path}": text for path, text in target.files}
    files = {"target/board.cmake": (src / "board.cmake").read_text()}
    if target.toolchain:
        files["target/toolchain.cmake"] = (src / target.toolchain).read_text()
    if target.kind == "bare-metal":
        cm = src / "cortex-m"
        for f in ("arm-none-eabi.cmake", "startup.c", "aotc_board.h", "sections.ld", f"{target.board}.ld"):
            if f"target/cortex-m/{f}" not in own:
                files[f"target/cortex-m/{f}"] = (cm / f).read_text()
        assert placement is not None
        files["target/cortex-m/aotc_regions.ld"] = (
            f"/* aotc: where this model's large weights and the runner's arena go on {target.board}\n"
            f" * (chosen by aotc's fit check; see metadata.json \"target_info\"). */\n"
            f'REGION_ALIAS("AOTC_WEIGHTS", {placement.weights_region});\n'
            f'REGION_ALIAS("AOTC_ARENA", {placement.arena_region});\n' + _pool_sections(placement))
    files.update(own)
    return files
