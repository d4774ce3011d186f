"""Footprint of a built bundle: what the model costs in flash and RAM, measured on the build.

    aotc footprint OUT        -> OUT/footprint.json, and a summary line

Sizes are read from the ELF section headers of the built library and program with the
rules of binutils' `size` (Berkeley format), so they agree with `<triple>-size`:
an allocated section is *text* when it is code or read-only (so text includes rodata and
the weights), else *data* when it has contents, else *bss*.

- model (the library lib<name>.a, what the model adds to a firmware): what a firmware's link of the
  library with --gc-sections keeps, measured by that link (the target's linker, `ld -r --gc-sections`
  from the global symbols of the model's own objects, src/<name>.c's entry points: the kernels' members
  they pull in and, of those, the sections they reach; libc, libm and the compiler's helpers stay
  outside, undefined): flash = text + data of it (data's initial values are stored in flash too);
  RAM = arena + data + bss + worst stack depth of <name>_init/<name>_run. `archive` keeps the
  sizes of the whole archive (`size -t lib<name>.a`: every function of every kernel file shipped,
  called or not), an upper bound; where no linker is found (or it cannot link so), flash is that. The stack depth
  comes from GCC's -fcallgraph-info=su (.ci files: each function's frame from
  -fstack-usage, and the call graph): the deepest path from the entry points, summing
  frames. Functions outside the bundle (libm, compiler helpers) have no frame information
  and are listed as not counted.
- image (the runner program): text, data and bss of the whole program, and for bare-metal
  boards the bytes in each memory region of the board's linker script (flash counts the
  initial values of .data at their load address).

metadata.json is the compile-time record (arena and weight sizes from the plan);
footprint.json is the post-build record.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aot.errors import AotcError
from aot.targets import STACK_RESERVE, bundle_target

SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHT_SYMTAB, SHT_NOBITS = 2, 8
STT_FUNC, STT_FILE = 2, 4
PT_LOAD = 1


@dataclass
class Section:
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int

    @property
    def berkeley(self) -> str | None:
        """binutils size's class: text, data, bss, or None (not allocated)."""
        if not self.flags & SHF_ALLOC:
            return None
        if self.flags & SHF_EXECINSTR or not self.flags & SHF_WRITE:
            return "text"
        return "data" if self.type != SHT_NOBITS else "bss"


@dataclass
class Symbol:
    name: str
    addr: int  # without the Thumb bit
    size: int
    file: str | None = None  # a local (static) function's source file (the symbol table's STT_FILE before it)
    local: bool = False


@dataclass
class Elf:
    sections: list[Section]
    segments: list[tuple[int, int, int, int, int]]  # PT_LOAD: offset, vaddr, paddr, filesz, memsz
    functions: list[Symbol]  # the symbol table's functions (none when stripped), by address
    defined_globals: list[str] = field(default_factory=list)  # global (and weak) symbols it defines, any type

    def sizes(self) -> dict[str, int]:
        out = {"text": 0, "data": 0, "bss": 0}
        for s in self.sections:
            kind = s.berkeley
            if kind:
                out[kind] += s.size
        return out

    def load_address(self, s: Section) -> int:
        if s.type != SHT_NOBITS:
            for off, _vaddr, paddr, filesz, _memsz in self.segments:
                if off <= s.offset < off + filesz:
                    return paddr + (s.offset - off)
        return s.addr


def parse_elf(data: bytes) -> Elf:
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    is64, endian = data[4] == 2, "<" if data[5] == 1 else ">"
    if is64:
        phoff, shoff = struct.unpack_from(endian + "QQ", data, 0x20)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHHHH", data, 0x36)
    else:
        phoff, shoff = struct.unpack_from(endian + "II", data, 0x1C)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHHHH", data, 0x2A)
    raw = []
    for i in range(shnum):
        at = shoff + i * shentsize
        if is64:
            name, typ, flags, addr, offset, size = struct.unpack_from(endian + "IIQQQQ", data, at)
        else:
            name, typ, flags, addr, offset, size = struct.unpack_from(endian + "IIIIII", data, at)
        raw.append((name, typ, flags, addr, offset, size))
    strtab = raw[shstrndx] if shnum else None

    def name_of(off: int) -> str:
        if strtab is None:
            return ""
        start = strtab[4] + off
        return data[start:data.index(b"\0", start)].decode(errors="replace")

    sections = [Section(name_of(n), t, f, a, o, s) for n, t, f, a, o, s in raw[1:]]
    segments = []
    for i in range(phnum):
        at = phoff + i * phentsize
        if is64:
            typ, _flags, off, vaddr, paddr, filesz, memsz = struct.unpack_from(endian + "IIQQQQQ", data, at)
        else:
            typ, off, vaddr, paddr, filesz, memsz = struct.unpack_from(endian + "IIIIII", data, at)
        if typ == PT_LOAD:
            segments.append((off, vaddr, paddr, filesz, memsz))
    functions, defined_globals = [], []
    for i, sec in enumerate(raw):
        if i == 0 or sec[1] != SHT_SYMTAB:
            continue
        link = struct.unpack_from(endian + "I", data, shoff + i * shentsize + (40 if is64 else 24))[0]
        names_at = raw[link][4]
        entry = 24 if is64 else 16
        file = None
        for at in range(sec[4], sec[4] + sec[5] - entry + 1, entry):
            if is64:
                st_name, info, _other, shndx, value, size = struct.unpack_from(endian + "IBBHQQ", data, at)
            else:
                st_name, value, size, info, _other, shndx = struct.unpack_from(endian + "IIIBBH", data, at)
            name = data[names_at + st_name:data.index(b"\0", names_at + st_name)].decode(errors="replace")
            if info >> 4 in (1, 2) and shndx != 0 and name:  # STB_GLOBAL, STB_WEAK, defined here
                defined_globals.append(name)
            if info & 0xF == STT_FILE:
                file = name
            elif info & 0xF == STT_FUNC and shndx != 0:  # defined here
                local = info >> 4 == 0
                functions.append(Symbol(name, value & ~1, size, file if local else None, local))
    functions.sort(key=lambda f: f.addr)
    return Elf(sections, segments, functions, defined_globals)


def archive_members(data: bytes) -> list[tuple[str, bytes]]:
    """The members of a Unix ar archive (GNU and BSD name forms), without symbol tables."""
    if data[:8] != b"!<arch>\n":
        raise ValueError("not an ar archive")
    pos, names, out = 8, b"", []
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode().strip()
        size = int(header[48:58].decode().strip())
        body = data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name == "//":
            names = body
            continue
        if name in ("/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            continue
        if name.startswith("#1/"):  # BSD: the name precedes the data
            n = int(name[3:])
            name, body = body[:n].rstrip(b"\0").decode(), body[n:]
        elif name.startswith("/") and name[1:].isdigit():
            start = int(name[1:])
            name = names[start:names.index(b"\n", start)].decode().rstrip("/")
        else:
            name = name.rstrip("/")
        out.append((name, body))
    return out


def library_sizes(path: Path) -> dict[str, int]:
    """text/data/bss summed over the archive's ELF members, as `size -t lib.a` totals them."""
    total = {"text": 0, "data": 0, "bss": 0}
    for _name, body in archive_members(path.read_bytes()):
        if body[:4] != b"\x7fELF":
            continue
        for k, v in parse_elf(body).sizes().items():
            total[k] += v
    return total


def model_roots(lib: Path, own: set[str]) -> list[str]:
    """The global symbols that the model's own objects (members whose source file is in `own`: src/<name>.c,
    its weights' .S) define: the entry points a firmware calls (<name>_init, <name>_run, ...), and so the
    roots of what its link keeps."""
    roots: list[str] = []
    for member, body in archive_members(lib.read_bytes()):
        if body[:4] == b"\x7fELF" and re.sub(r"\.(obj|o)$", "", member) in own:
            roots += parse_elf(body).defined_globals
    return sorted(set(roots))


def linked(lib: Path, linker: str | None, roots: list[str]) -> Elf | None:
    """The library as a firmware's link with --gc-sections keeps it from `roots`: `ld -r --gc-sections -u
    ROOT...` (a relocatable link: the members the roots pull in, of their sections those reachable; what the
    library does not define, libc's, libm's, the compiler's helpers, stays undefined), parsed; None where
    there is no linker or it does not link so (not a GNU-compatible ld: the archive's sizes stand)."""
    import shutil
    import subprocess
    import tempfile

    if not linker or not roots or not shutil.which(linker):
        return None
    with tempfile.TemporaryDirectory(prefix="aotc-link-") as tmp:
        out = Path(tmp) / "kept.o"
        r = subprocess.run([linker, "-r", "--gc-sections", *(f"-u{s}" for s in roots), str(lib), "-o", str(out)],
                           capture_output=True, text=True)
        if r.returncode != 0 or not out.is_file():
            return None
        return parse_elf(out.read_bytes())


def cmake_linker(build_dir: Path) -> str | None:
    """The linker a configured CMake build tree found (CMakeCache.txt's CMAKE_LINKER), or None."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    m = re.search(r"^CMAKE_LINKER:FILEPATH=(.+)$", cache.read_text(errors="replace"), re.M)
    return m.group(1).strip() if m and m.group(1).strip() and not m.group(1).endswith("-NOTFOUND") else None


def model_sources(bundle_dir: Path) -> set[str]:
    """The model's own source files of a bundle (src/, not the runner): their members are the link's roots."""
    return {p.name for p in (bundle_dir / "src").glob("*") if p.suffix in (".c", ".S") and p.name != "runner.c"}


def kept_sizes(lib: Path, build_dir: Path, own: set[str]) -> tuple[dict[str, int], Elf | None]:
    """text/data/bss of what a --gc-sections link of the library keeps (linked), with the kept object; the
    whole archive's (library_sizes) and None where it cannot be linked so."""
    kept = linked(lib, cmake_linker(build_dir), model_roots(lib, own))
    return (kept.sizes(), kept) if kept is not None else (library_sizes(lib), None)


# --- stack depth from GCC's call-graph files ---------------------------------------------------

_NODE = re.compile(r'^node: \{ title: "([^"]+)" label: "((?:[^"\\]|\\.)*)"')
_EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
_FRAME = re.compile(r"\\n(\d+) bytes \((static|dynamic|dynamic,bounded)\)")


@dataclass
class StackReport:
    bytes: int
    path: list[str]
    not_counted: list[str]  # callees without frame information (outside the bundle)
    dynamic: list[str]  # functions whose frame is dynamic (alloca/VLA)
    recursive: bool


def stack_depth(ci_files: list[Path], roots: list[str]) -> StackReport:
    frames: dict[str, int] = {}
    dynamic: set[str] = set()
    calls: dict[str, set[str]] = {}
    for f in ci_files:
        for line in f.read_text(errors="replace").splitlines():
            m = _NODE.match(line)
            if m:
                fm = _FRAME.search(m.group(2))
                if fm:
                    frames[m.group(1)] = int(fm.group(1))
                    if fm.group(2) != "static":
                        dynamic.add(m.group(1))
                continue
            m = _EDGE.match(line)
            if m:
                calls.setdefault(m.group(1), set()).add(m.group(2))
    memo: dict[str, tuple[int, list[str]]] = {}
    on_path: set[str] = set()
    unknown: set[str] = set()
    recursive = False

    def deepest(fn: str) -> tuple[int, list[str]]:
        nonlocal recursive
        if fn in memo:
            return memo[fn]
        if fn not in frames:
            unknown.add(fn)
            return 0, []
        if fn in on_path:
            recursive = True
            return 0, []
        on_path.add(fn)
        best: tuple[int, list[str]] = (0, [])
        for callee in sorted(calls.get(fn, ())):
            d = deepest(callee)
            if d[0] > best[0]:
                best = d
        on_path.discard(fn)
        memo[fn] = (frames[fn] + best[0], [fn, *best[1]])
        return memo[fn]

    results = [deepest(r) for r in roots if r in frames]
    top = max(results, default=(0, []))
    return StackReport(top[0], top[1], sorted(unknown), sorted(dynamic), recursive)


# --- the report ----------------------------------------------------------------------------------

def measure(out: Path, meta: dict) -> dict[str, Any]:
    """Footprint of the build tree OUT (already built)."""
    from aot.build import runner_path

    name = meta["name"]
    target = bundle_target(meta)
    lib = out / f"lib{name}.a"
    if not lib.is_file():
        raise AotcError(f"no {lib}: build first with: cmake --build {out}")
    archive = library_sizes(lib)
    lib_sizes, kept = kept_sizes(lib, out, model_sources(out / "bundle"))
    ci = sorted((out / "CMakeFiles" / f"{name}.dir").rglob("*.ci"))
    stack = stack_depth(ci, [f"{name}_init", f"{name}_run"])
    arena = int(meta["memory"]["arena_bytes"])
    model = {
        "library": lib.name,
        **lib_sizes,
        "counted": "what a --gc-sections link keeps from the model's entry points" if kept is not None
                   else "the whole archive (no linker to link it with --gc-sections)",
        "archive": archive,
        "flash_bytes": lib_sizes["text"] + lib_sizes["data"],
        "arena_bytes": arena,
        "stack_bytes": stack.bytes,
        "ram_bytes": arena + lib_sizes["data"] + lib_sizes["bss"] + stack.bytes,
        "stack": {
            "method": "gcc -fcallgraph-info=su" if ci else "unavailable (not built with GCC >= 10)",
            "deepest_path": stack.path,
            "not_counted": stack.not_counted,
            "dynamic_frames": stack.dynamic,
            "recursive": stack.recursive,
        },
    }
    pools = meta["memory"].get("pools")
    if pools:  # memory pools (aot/plan/pools.py): bytes per pool; those after the first are the library's bss
        model["pools"] = {p["name"]: {"bytes": p["bytes"], "section": p["section"]} for p in pools}
    budget = meta["memory"].get("ram_budget")
    if budget is not None:  # --ram-budget: the budget and what meeting it traded (aot/plan/planner.py)
        model["ram_budget"] = budget
    flash = meta.get("flash_budget")
    if flash is not None:  # --flash-budget (aot/flash.py): the compile-time figure beside this measurement
        model["flash_budget"] = {**flash, "measured_here_bytes": lib_sizes["text"] + lib_sizes["data"]}
    report: dict[str, Any] = {"name": name, "target": target.name, "model": model}
    runner = runner_path(out, meta)
    if runner.is_file():
        elf = parse_elf(runner.read_bytes())
        sizes = elf.sizes()
        image: dict[str, Any] = {"file": runner.name, **sizes, "flash_bytes": sizes["text"] + sizes["data"],
                                 "ram_bytes": sizes["data"] + sizes["bss"]}
        if target.regions:
            image["regions"] = region_usage(elf, target)
            image["stack_reserve_bytes"] = STACK_RESERVE
        image["code_bytes_by_file"], image["code_bytes_by_function"] = code_by_file(elf, lib)
        report["image"] = image
    return report


def code_by_file(image: Elf, lib: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Bytes of code the linker kept, per source file of the bundle (its kernels' files, the model's
    own .c), most first; code from outside the bundle (libc, libm, startup, the runner) is
    "(other)". A static function is its file's by the symbol table; a global one by the library
    member that defines it. Also per function of the bundle ("file:function", most first): which
    kernel of a family costs the flash."""
    owner: dict[str, str] = {}
    for member, body in archive_members(lib.read_bytes()):
        if body[:4] == b"\x7fELF":
            for f in parse_elf(body).functions:
                if not f.local:
                    owner.setdefault(f.name, re.sub(r"\.(obj|o)$", "", member))
    ours = set(owner.values())
    out: dict[str, int] = {}
    functions: dict[str, int] = {}
    for f in image.functions:
        where = f.file if f.local else owner.get(f.name)
        key = where if where in ours else "(other)"
        out[key] = out.get(key, 0) + f.size
        if where in ours and f.size:
            functions[f"{where}:{f.name}"] = functions.get(f"{where}:{f.name}", 0) + f.size
    def most_first(d: dict[str, int]) -> dict[str, int]:
        return dict(sorted(d.items(), key=lambda kv: -kv[1]))
    return most_first(out), most_first(functions)


def region_usage(elf: Elf, target) -> dict[str, dict[str, int]]:
    used = {r.name: 0 for r in target.regions}

    def region_of(addr: int) -> str | None:
        return next((r.name for r in target.regions if r.origin <= addr < r.origin + r.size), None)

    for s in elf.sections:
        if not s.flags & SHF_ALLOC or not s.size:
            continue
        where = {region_of(s.addr)}
        if s.type != SHT_NOBITS:
            where.add(region_of(elf.load_address(s)))  # .data: in RAM, and its initial values in flash
        for r in where - {None}:
            used[r] += s.size
    return {r.name: {"used_bytes": used[r.name], "size_bytes": r.size} for r in target.regions}


def write_footprint(out: Path, meta: dict) -> dict[str, Any]:
    report = measure(out, meta)
    (out / "footprint.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def summary(report: dict[str, Any]) -> str:
    from aot.targets import get_target, human

    m = report["model"]
    # only a board has flash: elsewhere the same bytes are the program's read-only image
    rom = "flash" if get_target(report["target"]).kind == "bare-metal" else "read-only image"
    line = (f"aotc: {report['name']} on {report['target']}: {rom} {human(m['flash_bytes'])} "
            f"({m['flash_bytes']} B: code, constants and weights), RAM {human(m['ram_bytes'])} "
            f"({m['ram_bytes']} B = arena {m['arena_bytes']} + data {m['data']} + bss {m['bss']} "
            f"+ stack {m['stack_bytes']})")
    if "pools" in m:
        line += "; memory pools " + ", ".join(f"{k} {v['bytes']} B" for k, v in m["pools"].items()) + \
            " (the first is the arena, the others in bss)"
    budget = m.get("ram_budget")
    if budget is not None:
        line += f"; {budget_summary(budget)}"
    if "flash_budget" in m:
        line += f"; {flash_budget_summary(m['flash_budget'])}"
    img = report.get("image")
    if img:
        line += f"; {img['file']}: text {img['text']} data {img['data']} bss {img['bss']}"
        if "regions" in img:
            line += " (" + ", ".join(f"{k} {human(v['used_bytes'])} of {human(v['size_bytes'])}"
                                     for k, v in img["regions"].items()) + ")"
        code = img.get("code_bytes_by_file") or {}
        if code:
            line += "; code bytes by file: " + ", ".join(f"{k} {v}" for k, v in list(code.items())[:6])
    return line


def budget_summary(budget: dict[str, Any]) -> str:
    """--ram-budget in a few words: the budget, the arena with and without it, the bytes each
    technique saved and what it cost."""
    line = (f"--ram-budget {budget['ram_budget_bytes']} B: arena {budget['arena_bytes']} B "
            f"(without the budget {budget['unbudgeted_arena_bytes']} B)")
    traded = budget.get("traded", {})
    parts = [f"{name} saved {t['bytes_saved']} B on {len(t['nodes'])} nodes, no extra work"
             for name, t in traded.items() if "bytes_saved" in t and name != "bands"]
    if "bands" in traded:  # aot/plan/bands.py: runs of layers in row bands, more kernel calls
        b = traded["bands"]
        parts.append(f"row bands saved {b['bytes_saved']} B on {len(b['runs'])} runs of layers ("
                     + ", ".join(f"{r['layers'][0]}..{r['layers'][-1]}: {r['bands']} bands of {r['rows']} rows, "
                                 f"{r['calls']} kernel calls for {r['unbanded_calls']}" for r in b["runs"]) + ")"
                     + "".join(f", {n} written over its input" for n in b.get("transposed_in_place", ())))
    if "scratch" in traded:
        s = traded["scratch"]
        parts.append(f"{len(s['nodes'])} kernels with less scratch (smaller blocks, more instructions)"
                     + (f", the smallest blocks saving {s['tiles_bytes_saved']} B" if "tiles_bytes_saved" in s else ""))
    return line + (": " + "; ".join(parts) if parts else ", nothing traded")


def flash_budget_summary(fb: dict[str, Any]) -> str:
    """--flash-budget in a few words (the CLI's and the footprint's summary lines)."""
    line = (f"--flash-budget {fb['flash_budget_bytes']} B: library flash {fb['flash_bytes']} B "
            f"(without the budget {fb['unbudgeted_flash_bytes']} B; weights and constants "
            f"{fb['weights_and_constants_bytes']} B, code {fb['code_bytes']} B)")
    if fb["level"] == "none":
        return line + ", nothing traded"
    return line + (f": level {fb['level']}, {fb['traded']['what']}, saved {fb['traded']['bytes_saved']} B "
                   f"(cost: {fb['traded']['cost']})")
