"""`aotc package OUT --platform P [-o DIR]`: the bundle in OUT as a platform package (aot/packages)."""

from __future__ import annotations

import argparse
from pathlib import Path

from aot.packages import PLATFORMS, write_package
from aot.packages.platforms import PLACEHOLDER_URL, PackageOptions, esp_note


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aotc package",
        description="Write the library of a compiled bundle as a platform package: a Zephyr module, an ESP-IDF "
        "component, an Arduino library, a PlatformIO library or a CMSIS-Pack. The package compiles what the "
        "bundle's CMakeLists.txt compiles, with its definitions where the platform allows, and its manifest "
        "names the model, the aotc version and the core the bundle was compiled for (docs/firmware.md, "
        "\"Platform packages\").")
    p.add_argument("out", metavar="OUT", help="a directory written by `aotc MODEL -o OUT` (or its bundle/ folder)")
    p.add_argument("--platform", required=True, choices=PLATFORMS, metavar="P",
                   help=f"the package to write: {', '.join(PLATFORMS)}")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="the package's folder (default: OUT/packages/P/NAME, aotc_NAME for Zephyr): new, empty, or "
                   "a package aotc wrote, which is replaced whole")
    p.add_argument("--package-version", default="1.0.0", metavar="X.Y.Z",
                   help="the package's version in its manifest (default 1.0.0); the aotc version that compiled the "
                   "model is recorded beside it")
    p.add_argument("--url", help="the project page the manifests name (Arduino's library.properties requires one: "
                   f"without --url it gets {PLACEHOLDER_URL})")
    p.add_argument("--force", action="store_true", help="replace DIR even if it holds files aotc did not write")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def package_command(argv: list[str]) -> int:
    """Parse `aotc package` arguments, write the package, say where and what it assumes."""
    args = _parser().parse_args(argv)
    dest, lib = write_package(Path(args.out), args.platform, Path(args.output) if args.output else None,
                              PackageOptions(version=args.package_version, url=args.url), force=args.force)
    print(f"aotc: wrote {dest} ({args.platform} package of {lib.name} {args.package_version}; {lib.isa.summary()})")
    if args.platform == "esp-idf" and (note := esp_note(lib)):
        print(f"aotc: note: {note}")
    if args.platform in ("arduino", "cmsis-pack") and not args.url:
        print(f"aotc: note: the manifest's url is {PLACEHOLDER_URL}; give --url for your project's page")
    return 0
