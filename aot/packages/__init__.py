"""Platform packages (`aotc package OUT --platform P`): a compiled bundle's library as firmware engineers take
libraries in, a Zephyr module, an ESP-IDF component, an Arduino library, a PlatformIO library or a CMSIS-Pack.

The bundle's CMakeLists.txt says what its library compiles and how (aot/packages/cmake_read.py); a package
carries those files in the platform's layout with a manifest that builds them the same way as far as the
platform lets a library say so (aot/packages/platforms.py). docs/firmware.md, "Platform packages", says what
each package holds and how it was validated.
"""

from __future__ import annotations

import json
from pathlib import Path

from aot.emit_c.bundle import Bundle
from aot.errors import AotcError
from aot.packages.library import Library, read_library
from aot.packages.platforms import WRITERS, PackageOptions

PLATFORMS = tuple(WRITERS)
MARK = "aotc_package.json"  # what makes a folder a package aotc wrote (and may replace)


def package_files(lib: Library, platform: str, options: PackageOptions) -> dict[str, str | bytes]:
    """Every file of `platform`'s package of `lib`, by its path in the package, with the package's record."""
    if platform not in WRITERS:
        raise AotcError(f"unknown platform '{platform}' (known: {', '.join(PLATFORMS)})")
    parts = options.version.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise AotcError(f"--package-version {options.version}: give MAJOR.MINOR.PATCH, e.g. 1.0.0 (every platform's "
                        "manifest takes that form)")
    files = WRITERS[platform](lib, options)
    files[MARK] = json.dumps({"platform": platform, "name": lib.name, "package_version": options.version,
                              "aotc_version": lib.aotc_version, "source": lib.source_model,
                              "target": lib.isa.target, "assumes": lib.isa.summary(),
                              "files": sorted(files)}, indent=2) + "\n"
    return files


def default_destination(out: Path, platform: str, lib: Library) -> Path:
    """OUT/packages/<platform>/<folder>: the folder named as the platform expects the library's (an Arduino
    library's folder is its name, an ESP-IDF component's its component name)."""
    folder = f"aotc_{lib.name}" if platform == "zephyr" else lib.name
    return out / "packages" / platform / folder


def check_destination(dest: Path, force: bool) -> None:
    """A package folder is new, empty, or a package aotc wrote (replaced whole); anything else needs --force."""
    if not dest.exists():
        return
    if not dest.is_dir():
        raise AotcError(f"-o '{dest}' is a file; give a folder for the package")
    if force or (dest / MARK).is_file() or not any(dest.iterdir()):
        return
    raise AotcError(f"-o '{dest}' holds files aotc did not write; give a new or empty folder, or add --force to "
                    "replace it with the package")


def write_package(out: Path, platform: str, dest: Path | None = None, options: PackageOptions | None = None,
                  force: bool = False) -> tuple[Path, Library]:
    """Write `platform`'s package of the bundle in `out` to `dest` (default: default_destination), replacing
    the folder whole; nothing is left half-written. Returns the folder and the library it holds."""
    lib = read_library(out)
    files = package_files(lib, platform, options or PackageOptions())
    dest = dest if dest is not None else default_destination(out, platform, lib)
    check_destination(dest, force)
    Bundle(lib.name, files).write(dest)
    return dest, lib
