"""The five platform packages of a bundle's library: the files of each, in memory.

Each writer takes the Library (aot/packages/library.py: what the bundle compiles, read from its CMakeLists.txt)
and returns package path -> content. The manifests carry the model's name, the package version and the aotc
version, and state the core the bundle was compiled for; where the platform has a way to give one library its
own definitions, options and C standard, they are those of the bundle's CMakeLists.txt.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import jinja2

from aot.csource.format import C_TYPES, c_comment
from aot.errors import AotcError
from aot.packages.library import Library
from aot.packages.weights_c import blob_source, c_array

_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("aot.packages", "templates"),
    trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
)
_TEMPLATES.filters["c_comment"] = c_comment
_TEMPLATES.filters["yaml_str"] = lambda s: json.dumps(str(s), ensure_ascii=False)  # a double-quoted YAML scalar

Files = dict[str, str | bytes]
CMSIS_VENDOR = "aotc"
# Cores by what a CMSIS-Pack condition may require of them (PACK.xsd's DcoreEnum)
_ALWAYS_DSP = ("Cortex-M4", "Cortex-M7")
_MAYBE_DSP = ("Cortex-M33", "Cortex-M35P", "Cortex-M52", "Cortex-M55", "Cortex-M85", "Star-MC1")
_HELIUM = ("Cortex-M52", "Cortex-M55", "Cortex-M85")
_ANY_M = ("Cortex-M0", "Cortex-M0+", "Cortex-M1", "Cortex-M3", "Cortex-M23", "SC000", "SC300", *_ALWAYS_DSP,
          *_MAYBE_DSP)


@dataclass(frozen=True)
class PackageOptions:
    """What the user says of the package beyond the bundle: its version and project page."""
    version: str = "1.0.0"
    url: str | None = None


def _io(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "ctype": C_TYPES.get(e["dtype"], "uint8_t")} for e in entries]


def _context(lib: Library, platform: str, opts: PackageOptions) -> dict[str, Any]:
    meta = lib.meta
    mem = meta.get("memory", {})
    inputs = _io(meta.get("inputs", []))
    return dict(
        name=lib.name, NAME=lib.name.upper(), version=opts.version, url=opts.url, platform=platform,
        aotc_version=lib.aotc_version, source_model=lib.source_model, isa=lib.isa.summary(),
        isa_explain=lib.isa.explain(),
        arena_bytes=mem.get("arena_bytes", "?"), weights_bytes=mem.get("weights_bytes", "?"),
        inputs=inputs, outputs=_io(meta.get("outputs", [])), states=any("state" in i for i in inputs),
        definitions=lib.definitions, c_standard=lib.cmake.c_standard, c_options=lib.cmake.c_options,
        blob=lib.blob, blob_dir=str(PurePosixPath(lib.blob.asm).parent) if lib.blob else None,
        blob_bytes=len(lib.files[lib.blob.data]) if lib.blob else 0,
        blob_c=f"{lib.name}_weights_blob.c", separate=lib.separate_weights is not None,
        separate_path=lib.separate_weights, separate_name=PurePosixPath(lib.separate_weights or "").name,
        public_includes=lib.public_include_dirs, private_includes=lib.private_include_dirs,
        kconfig=f"AOTC_{lib.name.upper()}", module=f"aotc_{lib.name}", shown=16,
    )


def _readme(ctx: dict[str, Any], title: str, what: str, checked: str, **extra: Any) -> str:
    return _TEMPLATES.get_template("README.md.j2").render(
        {**ctx, "platform_title": title, "platform_what": what, "checked": checked, **extra})


def _split_definition(d: str) -> dict[str, str]:
    name, eq, value = d.partition("=")
    return {"name": name, "value": value if eq else "1"}


def esp_note(lib: Library) -> str:
    isa = lib.isa
    if isa.portable or not (isa.dsp or isa.helium):
        return ""
    stops = "" if isa.helium else ", and a kernel chosen for the DSP extension's layout stops the build (#error)"
    return (f"the bundle was compiled for {isa.description}, with kernels chosen for "
            f"{'Helium' if isa.helium else 'the Arm DSP extension'}; on an ESP chip they take their portable "
            f"paths{stops}: compile the model for mps2-an385 (Cortex-M3: portable C kernels) to package it for "
            "ESP-IDF.")


def zephyr(lib: Library, opts: PackageOptions) -> Files:
    """A Zephyr module: zephyr/module.yml, Kconfig (CONFIG_AOTC_<NAME>), CMakeLists.txt with zephyr_library()."""
    ctx = _context(lib, "zephyr", opts)
    cpu = lib.isa.cpu
    symbol = f"CPU_{cpu.upper().replace('-', '_')}" if cpu and re.fullmatch(r"cortex-m\d+", cpu) else None
    ctx.update(sources=[*lib.c_sources, *([lib.blob.asm] if lib.blob else [])], cpu_symbol=symbol,
               cpu_description=lib.isa.description, cpu_flags=lib.isa.cpu_flags or "",
               isa_lines=_wrap(f"It was {lib.isa.summary()}. {lib.isa.explain()}", 66))
    files: Files = dict(lib.files)
    files["zephyr/module.yml"] = _TEMPLATES.get_template("zephyr_module.yml.j2").render(ctx)
    files["Kconfig"] = _TEMPLATES.get_template("zephyr_Kconfig.j2").render(ctx)
    files["CMakeLists.txt"] = _TEMPLATES.get_template("zephyr_CMakeLists.txt.j2").render(ctx)
    files["README.md"] = _readme(ctx, "Zephyr module", "a Zephyr module", CHECKED["zephyr"],
                                 definitions_how="zephyr_library_compile_definitions()",
                                 options_how="zephyr_library_compile_options() carries them")
    return files


def esp_idf(lib: Library, opts: PackageOptions) -> Files:
    """An ESP-IDF component: idf_component.yml, CMakeLists.txt with idf_component_register()."""
    ctx = _context(lib, "esp-idf", opts)
    note = esp_note(lib)
    ctx.update(sources=[*lib.c_sources, *([lib.blob.asm] if lib.blob else [])], esp_note=note,
               portable_for_esp=not note,
               description=f"Model {lib.name} ({lib.source_model}) compiled to C by aotc {lib.aotc_version}: "
                           f"{lib.isa.summary()}.")
    files: Files = dict(lib.files)
    files["idf_component.yml"] = _TEMPLATES.get_template("esp_idf_component.yml.j2").render(ctx)
    files["CMakeLists.txt"] = _TEMPLATES.get_template("esp_idf_CMakeLists.txt.j2").render(ctx)
    files["README.md"] = _readme(ctx, "ESP-IDF component", "an ESP-IDF component", CHECKED["esp-idf"],
                                 definitions_how="target_compile_definitions() on the component's library",
                                 options_how="target_compile_options() carries them")
    return files


def _prologue(lib: Library, why: str) -> str:
    """Definitions the bundle's CMakeLists.txt gives the library, as lines before each of its C files, for a
    platform with no per-library definitions."""
    if not lib.definitions:
        return ""
    lines = [f"/* aotc package: the bundle's CMakeLists.txt compiles the library with these; {why} */"]
    for d in map(_split_definition, lib.definitions):
        lines += [f"#ifndef {d['name']}", f"#define {d['name']} {d['value']}", "#endif"]
    return "\n".join(lines) + "\n"


def _example(ctx: dict[str, Any], lib: Library, folder: str) -> Files:
    """examples/<name>/<name>.ino: run once, print the outputs; with the weights file as C beside it."""
    files: Files = {f"{folder}/{lib.name}.ino": _TEMPLATES.get_template("example.ino.j2").render(ctx)}
    if lib.separate_weights:
        data = lib.files[lib.separate_weights]
        text = c_array(f"{lib.name}_weights_file", data, section=None, align=64,
                       comment=f"The weights file {lib.separate_weights} (--separate-weights), for the example.")
        files[f"{folder}/{lib.name}_weights_file.c"] = text.replace(
            "#include <stdint.h>\n", "#include <stddef.h>\n#include <stdint.h>\n") + \
            f"const size_t {lib.name}_weights_file_size = {len(data)}u;\n"
    return files


def arduino(lib: Library, opts: PackageOptions) -> Files:
    """An Arduino library (specification 1.5): library.properties, src/<name>.h, src/aotc/ (the model and the
    kernels, flat), examples/<name>/<name>.ino."""
    ctx = _context(lib, "arduino", opts)
    files: Files = {}
    inner = "src/aotc"
    placed: dict[str, str] = {}  # package path -> bundle path, to refuse two files of one name
    prologue = _prologue(lib, "Arduino gives a library no compiler flags")

    def put(path: str, rel: str, content: str | bytes) -> None:
        if path in placed:
            raise AotcError(f"--platform arduino puts the library's files in one folder, and {placed[path]} and {rel} "
                            "have the same name")
        placed[path] = rel
        files[path] = content

    for rel in lib.public_headers:
        put(f"src/{PurePosixPath(rel).name}", rel, lib.files[rel])
    for rel in lib.incbins:  # a C file's .incbin finds its file through the include path: only src/ is on it
        put(f"src/{PurePosixPath(rel).name}", rel, lib.files[rel])
    for rel in [r for r in [*lib.private_headers, *lib.c_sources] if r not in lib.incbins]:
        content = lib.files[rel]
        if rel in lib.c_sources and prologue:
            content = prologue.encode() + content
        put(f"{inner}/{PurePosixPath(rel).name}", rel, content)
    if lib.blob:
        put(f"{inner}/{ctx['blob_c']}", lib.blob.asm,
            prologue + blob_source(lib.blob, lib.files[lib.blob.data], lib.aotc_version))
    if lib.separate_weights:
        files[f"extras/{ctx['separate_name']}"] = lib.files[lib.separate_weights]
    files["extras/metadata.json"] = lib.files["metadata.json"]
    ctx["paragraph"] = (f"Compiled from {lib.source_model} for {lib.isa.summary()}. Arena {ctx['arena_bytes']} bytes "
                        f"(the caller's), weights {ctx['weights_bytes']} bytes of const data. The example runs it "
                        "once.")
    ctx["url"] = opts.url or PLACEHOLDER_URL
    files["library.properties"] = _TEMPLATES.get_template("arduino_library.properties.j2").render(ctx)
    files.update(_example(ctx, lib, f"examples/{lib.name}"))
    files["README.md"] = _readme(ctx, "Arduino library", "an Arduino library", CHECKED["arduino"],
                                 definitions_how="written at the top of each of its C files: Arduino gives a "
                                 "library no compiler flags", options_how="Arduino cannot give a library options: "
                                 "the core's apply")
    return files


def platformio(lib: Library, opts: PackageOptions) -> Files:
    """A PlatformIO library: library.json (build.srcFilter, includeDir, flags), the bundle's layout, the
    weights blob as C, examples/<name>/<name>.ino."""
    ctx = _context(lib, "platformio", opts)
    files: Files = {rel: b for rel, b in lib.files.items() if not lib.blob or rel not in (lib.blob.asm, lib.blob.data)}
    sources = list(lib.c_sources)
    if lib.blob:
        blob_c = str(PurePosixPath(lib.blob.asm).parent / ctx["blob_c"])
        files[blob_c] = blob_source(lib.blob, lib.files[lib.blob.data], lib.aotc_version)
        sources.append(blob_c)
    flags = [f"-I{d}" for d in lib.private_include_dirs]
    flags += [f"-std={lib.cmake.c_standard}"] if lib.cmake.c_standard else []
    flags += [f"-D{d}" for d in lib.definitions] + lib.cmake.c_options
    manifest: dict[str, Any] = {
        "name": lib.name,
        "version": opts.version,
        "description": f"Model {lib.name} ({lib.source_model}) compiled to C by aotc {lib.aotc_version}: "
                       f"{lib.isa.summary()}. Arena {ctx['arena_bytes']} bytes, weights {ctx['weights_bytes']} bytes.",
        "keywords": ["aotc", "machine learning", "inference", "neural network"],
        "authors": [{"name": f"aotc {lib.aotc_version} (generated)"}],
        **({"homepage": opts.url} if opts.url else {}),
        "frameworks": "*",
        "platforms": "*",
        "headers": [PurePosixPath(h).name for h in lib.public_headers],
        "build": {
            "srcDir": ".",
            "includeDir": lib.public_include_dirs[0] if lib.public_include_dirs else "include",
            "srcFilter": [f"+<{s}>" for s in sources],
            "flags": flags,
        },
        "examples": [{"name": f"{lib.name}_run_once", "base": f"examples/{lib.name}",
                      "files": sorted(PurePosixPath(p).name for p in _example(ctx, lib, "x"))}],
    }
    files["library.json"] = json.dumps(manifest, indent=2) + "\n"
    files.update(_example(ctx, lib, f"examples/{lib.name}"))
    files["README.md"] = _readme(ctx, "PlatformIO library", "a PlatformIO library", CHECKED["platformio"],
                                 definitions_how="library.json's build.flags", options_how="library.json's "
                                 "build.flags carry them")
    return files


def _accepts(lib: Library) -> tuple[list[dict[str, str]], str]:
    """The cores a CMSIS-Pack condition accepts for the bundle, and the condition's description."""
    isa = lib.isa
    if isa.helium:
        return [{"Dcore": c, "Dmve": "FP_MVE"} for c in _HELIUM], \
            "cores with Helium and its floats (Cortex-M52, M55, M85), as the kernels were chosen for"
    if isa.dsp:
        return [*({"Dcore": c} for c in _ALWAYS_DSP), *({"Dcore": c, "Ddsp": "DSP"} for c in _MAYBE_DSP)], \
            "cores with the Arm DSP extension (Cortex-M4, M7, and M33, M35P, M52, M55, M85, Star-MC1 with DSP), " \
            "as the kernels were chosen for"
    return [{"Dcore": c} for c in _ANY_M], "any Cortex-M core (portable C kernels)"


def cmsis_pack(lib: Library, opts: PackageOptions) -> Files:
    """A CMSIS-Pack: <vendor>.<name>.pdsc (a component Machine Learning:aotc:<name> with a condition on the core),
    its files, and the same zipped as <vendor>.<name>.<version>.pack."""
    ctx = _context(lib, "cmsis-pack", opts)
    files: Files = {rel: b for rel, b in lib.files.items() if not lib.blob or rel not in (lib.blob.asm, lib.blob.data)}
    sources = list(lib.c_sources)
    if lib.blob:
        blob_c = str(PurePosixPath(lib.blob.asm).parent / ctx["blob_c"])
        files[blob_c] = blob_source(lib.blob, lib.files[lib.blob.data], lib.aotc_version)
        sources.append(blob_c)
    accepts, text = _accepts(lib)
    pack_name = re.sub(r"[^A-Za-z0-9_-]", "_", lib.name)
    pack_file = f"{CMSIS_VENDOR}.{pack_name}.{opts.version}.pack"
    ctx.update(vendor=CMSIS_VENDOR, pack=pack_name, sources=sources, accepts=accepts, condition_text=text,
               condition_id=f"aotc {lib.name} core", public_headers=lib.public_headers,
               definitions=[_split_definition(d) for d in lib.definitions], separate=lib.separate_weights,
               others=[*lib.incbins, *([lib.separate_weights] if lib.separate_weights else [])],
               url=opts.url or PLACEHOLDER_URL, pack_file=pack_file,
               description=f"Model {lib.name} ({lib.source_model}) compiled to C by aotc {lib.aotc_version}",
               component_text=f"Model {lib.name}: {lib.isa.summary()}")
    files[f"{CMSIS_VENDOR}.{pack_name}.pdsc"] = _TEMPLATES.get_template("cmsis.pdsc.j2").render(ctx)
    files["README.md"] = _readme({**ctx, "definitions": lib.definitions}, "CMSIS-Pack", "a CMSIS-Pack",
                                 CHECKED["cmsis-pack"], definitions_how="the component's pre-include header",
                                 options_how="a pack cannot give a component options: set them in the project")
    files[pack_file] = _zip(files)
    return files


def _zip(files: Files) -> bytes:
    """The pack: every file at its path, the .pdsc at the top; fixed dates, so the same package gives the same
    bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            content = files[path]
            z.writestr(info, content.encode() if isinstance(content, str) else content)
    return buf.getvalue()


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


# The manifests that need a project page (Arduino's library.properties requires one, a pack's <url>) get this
# placeholder unless --url gives one: a reserved domain (RFC 2606), never someone's site.
PLACEHOLDER_URL = "https://example.com/aotc-package"

# What aotc's tests check of each package (README's last section): the package is written for a model compiled
# for mps2-an386 and ...
CHECKED = {
    "zephyr": "compile its sources through this CMakeLists.txt, with stand-ins for Zephyr's `zephyr_library_*()` "
              "functions, using arm-none-eabi-gcc for a Cortex-M4F (`-O2 -Wall -Wextra -Werror`). Not built in a "
              "Zephyr tree (no Zephyr SDK on the test machines); `bench/package_tools.py` checks module.yml against "
              "Zephyr's module schema and parses Kconfig with kconfiglib.",
    "esp-idf": "compile its sources through this CMakeLists.txt, with a stand-in for `idf_component_register()`, "
               "using arm-none-eabi-gcc for a Cortex-M4F and the host's gcc (`-O2 -Wall -Wextra -Werror`). Not built "
               "with ESP-IDF's Xtensa or RISC-V compilers (no ESP-IDF on the test machines); "
               "`bench/package_tools.py` checks idf_component.yml with idf-component-manager.",
    "arduino": "compile every C file under `src/` with `-Isrc`, as Arduino's build does, and the example sketch as "
               "C++ against a stand-in `Arduino.h`, using arm-none-eabi-gcc for a Cortex-M4F (`-O2 -Wall -Wextra "
               "-Werror`), and link them; in the full tier the example, linked for the board, runs under qemu and "
               "prints the outputs' checksum the bundle's runner prints. library.properties is checked against the "
               "specification's fields. Not "
               "built with arduino-cli or checked by arduino-lint (Go programs, not on the test machines).",
    "platformio": "compile the sources library.json's `build.srcFilter` names, with its `build.flags` and "
                  "include folders, using arm-none-eabi-gcc for a Cortex-M4F (`-O2 -Wall -Wextra -Werror`). Not "
                  "built by PlatformIO (its toolchains come from its own registry); `bench/package_tools.py` packs "
                  "it with `pio pkg pack`, which checks library.json.",
    "cmsis-pack": "compile the `.pdsc`'s source files with its include paths and pre-include header using "
                  "arm-none-eabi-gcc for a Cortex-M4F (`-O2 -Wall -Wextra -Werror`); the `.pack` is checked to "
                  "hold the same files. Not built by the CMSIS-Toolbox or Keil MDK (not on the test machines); "
                  "`bench/package_tools.py` validates the `.pdsc` against PACK.xsd when given the schema.",
}

WRITERS = {"zephyr": zephyr, "esp-idf": esp_idf, "arduino": arduino, "platformio": platformio,
           "cmsis-pack": cmsis_pack}
