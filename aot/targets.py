"""Targets: what `--target` names, and what a bundle needs to build and run there.

A target is a CMake toolchain file in cmake/ (none for the host) plus how to run its
programs: directly, under qemu-user (Linux on Arm and RISC-V), or under qemu-system-arm
with semihosting (bare-metal Cortex-M boards). Bare-metal boards also have memory
regions; `fit_bundle` checks that a model fits them before anything is written, picks
where its large weights and its arena go, and copies the board support (toolchain file,
startup code, linker scripts) into the bundle's target/ folder so the bundle builds
anywhere on its own.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    toolchain: str | None = None  # file in cmake/, None for the host compiler
    emulator: tuple[str, ...] = ()  # command prefix that runs a built program
    kind: str = "host"  # host | linux | bare-metal
    board: str | None = None  # qemu-system-arm -M name (bare metal)
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
    dsp: bool = False  # the Arm DSP extension (SMLAD and the like: Cortex-M4, M33, M55)

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
    _board("mps3-an547", "Arm Cortex-M55 (FPU, Helium)", _AN547, ("CODE_SRAM", "DDR"), ("RAM", "SRAM", "DDR"),
           rodata="CODE_SRAM", helium=True, dsp=True),
    _linux("aarch64-linux", "64-bit Arm", "qemu-aarch64", "aarch64-linux-gnu", "arm64", True),
    _linux("armv7-linux", "32-bit Arm (ARMv7-A, hard float)", "qemu-arm", "arm-linux-gnueabihf", "armhf", False),
    _linux("riscv64-linux", "64-bit RISC-V", "qemu-riscv64", "riscv64-linux-gnu", "riscv64", False),
)}


@functools.cache
def host_has_avx512() -> bool:
    """This machine's CPU has AVX-512F (Linux: /proc/cpuinfo), so a host build with -march=native has it."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512f" in line for line in f)
    except OSError:
        return False


# The ISA levels a host bundle's kernel choice can assume (--host-isa; metadata.json "host_isa"). They
# are what the choice tells apart, no more: the x86 kernels' AVX-512 paths (conv_avx512.py, pool.py) exist
# in a build with AVX-512F, and every other kernel is portable C that the build's -march=native
# vectorises as it can. By default a host bundle assumes the compiling machine's level, which makes
# its bytes depend on that machine; a named level makes them the same on any machine.
HOST_ISAS = {
    "avx512f": "the kernels' AVX-512 paths: for a build with AVX-512F (-march=native on a CPU that has it)",
    "generic": "portable C kernels only: for any CPU (x86 without AVX-512F, Arm, ...)",
}


def host_isa(given: str | None, target: Target) -> str | None:
    """The ISA level a bundle for `target` assumes: `given` (--host-isa), else the compiling machine's;
    None for a cross target, whose level is the target's own."""
    if target.kind != "host":
        if given is not None:
            raise AotcError(f"--host-isa {given}: target {target.name} is not the host "
                            "(the level is for --target host; a cross target's CPU is the target's own)")
        return None
    if given is None:
        return "avx512f" if host_has_avx512() else "generic"
    if given not in HOST_ISAS:
        raise AotcError(f"unknown host ISA level '{given}' (known: {', '.join(HOST_ISAS)})")
    return given


@functools.cache
def toolchain_digest(name: str) -> str:
    """sha256 of the CMake files that set target `name`'s compile flags (its toolchain file and, on a board, the
    flags the boards share), "" for the host: part of a bundle's kernel configuration (emit_c SymbolConfig)."""
    t = get_target(name)
    if t.toolchain is None:
        return ""
    files = [cmake_dir() / t.toolchain, *([cmake_dir() / "cortex-m" / "arm-none-eabi.cmake"]
                                          if t.kind == "bare-metal" else [])]
    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise AotcError(f"unknown target '{name}' (known: {', '.join(TARGETS)})") from None


def require_tools(target: Target, *, build: bool = True, run: bool = False) -> None:
    """Refuse, with the packages to install, when the target's compiler (to build) or its
    emulator (to run) is missing."""
    import shutil

    tools = [target.compiler] if build and target.compiler else []
    if run and target.emulator:
        tools.append(target.emulator[0])
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise AotcError(f"target {target.name} needs {', '.join(missing)}, which is not installed "
                        f"(Debian/Ubuntu: apt-get install {' '.join(target.apt)})")


def list_targets() -> str:
    """The table `aotc --list-targets` prints."""
    width = max(len(n) for n in TARGETS)
    return "".join(f"{t.name:<{width}}  {t.description}; {t.memory_summary()}\n" for t in TARGETS.values())


def human(n: int) -> str:
    """Bytes for people: 4 MiB, 320.5 KiB, 208 B."""
    for unit, size in (("MiB", MIB), ("KiB", KIB)):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} B"


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
    """The files of bundle/target/ for `target`."""
    src = cmake_dir()
    files = {"target/board.cmake": (src / "board.cmake").read_text()}
    if target.toolchain:
        files["target/toolchain.cmake"] = (src / target.toolchain).read_text()
    if target.kind == "bare-metal":
        cm = src / "cortex-m"
        for f in ("arm-none-eabi.cmake", "startup.c", "aotc_board.h", "sections.ld", f"{target.board}.ld"):
            files[f"target/cortex-m/{f}"] = (cm / f).read_text()
        assert placement is not None
        files["target/cortex-m/aotc_regions.ld"] = (
            f"/* aotc: where this model's large weights and the runner's arena go on {target.board}\n"
            f" * (chosen by aotc's fit check; see metadata.json \"target_info\"). */\n"
            f'REGION_ALIAS("AOTC_WEIGHTS", {placement.weights_region});\n'
            f'REGION_ALIAS("AOTC_ARENA", {placement.arena_region});\n' + _pool_sections(placement))
    return files
