"""Check the platform packages (`aotc package`) with the platforms' own tools from PyPI, outside the test suite.

    python bench/package_tools.py --make-venv /tmp/pkgtools            # once: the tools, in a venv of their own
    python bench/package_tools.py --venv /tmp/pkgtools [OUT] [--pack-xsd PACK.xsd]
           [--zephyr-module-script zephyr/scripts/zephyr_module.py] [--arduino-schemas arduino-lint/etc/schemas]

OUT is an `aotc MODEL -o OUT` folder (default: examples/zoo.py's mlp compiled for mps2-an386 in a temporary
folder). Each package is written to a temporary folder and checked:

- esp-idf: `compote -W component pack` (idf-component-manager) validates idf_component.yml and packs it;
- platformio: `pio pkg pack` (platformio) validates library.json and packs it; the tarball must hold the
  sources build.srcFilter names;
- zephyr: Kconfig loaded by kconfiglib (Zephyr's Kconfig parser) inside the menu Zephyr generates for a module,
  with no warning; with --zephyr-module-script (a Zephyr tree's scripts/zephyr_module.py, which is not on PyPI:
  west does not read module.yml), module.yml through its process_module/process_cmake/process_kconfig;
- cmsis-pack: with --pack-xsd (the Open-CMSIS-Pack specification's schema/PACK.xsd, not on PyPI), the .pdsc
  validated by xmlschema. (cmsis-pack-manager reads .pdsc files for their devices only, and takes malformed ones
  without a word: it is no check.)
- arduino: with --arduino-schemas (arduino-lint's etc/schemas: arduino-lint itself is a Go program, not on
  PyPI), library.properties validated by jsonschema against its specification and strict schemas.

The tools stay out of aotc's dependencies and CI: they are large (platformio) or reach their registries.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TOOLS = ["idf-component-manager", "platformio", "kconfiglib", "pykwalify", "pyyaml", "xmlschema", "jsonschema"]

KCONFIG_CHECK = r"""
import sys, kconfiglib
wrapper, symbol = sys.argv[1], sys.argv[2]
k = kconfiglib.Kconfig(wrapper, warn_to_stderr=False)
assert not k.warnings, k.warnings
s = k.syms[symbol]
assert s.type == kconfiglib.BOOL and s.nodes[0].prompt, "not a bool option with a prompt"
assert "REQUIRES_FULL_LIBC" in [t[0].name for t in s.selects], "does not select REQUIRES_FULL_LIBC"
print("kconfiglib: " + symbol + " is a bool option selecting REQUIRES_FULL_LIBC, no warnings")
"""

ZEPHYR_CHECK = r"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("zephyr_module", sys.argv[1])
zm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(zm)
module = sys.argv[2]
meta = zm.process_module(module)
assert meta, "not a Zephyr module"
cmake = zm.process_cmake(module, meta)
kconfig = zm.process_kconfig(module, meta)
assert cmake.strip().split(":")[-1] != '""', cmake
assert "osource" in kconfig, kconfig
open(sys.argv[3], "w").write(kconfig)
print("zephyr_module.py: module " + meta["name"] + ", CMake " + cmake.strip().split(":")[-1] + ", Kconfig menu written")
"""

PDSC_CHECK = r"""
import sys, xmlschema
xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])
print("xmlschema: " + sys.argv[2].rsplit("/", 1)[-1] + " is valid against " + sys.argv[1])
"""

ARDUINO_CHECK = r"""
import json, sys
from pathlib import Path
from jsonschema import Draft7Validator
from referencing import Registry, Resource
schemas = Path(sys.argv[1])
props = {}
for line in Path(sys.argv[2]).read_text().splitlines():
    if line and not line.startswith("#"):
        key, _, value = line.partition("=")
        props[key] = value
resources = [(p.name, Resource.from_contents(json.loads(p.read_text()))) for p in schemas.glob("*.json")]
registry = Registry().with_resources(resources)
for kind in ("", "-strict"):
    name = "arduino-library-properties" + kind + "-schema.json"
    errors = list(Draft7Validator(json.loads((schemas / name).read_text()), registry=registry,
                                  format_checker=Draft7Validator.FORMAT_CHECKER).iter_errors(props))
    assert not errors, [e.message for e in errors]
    print("jsonschema: library.properties valid against " + name)
"""


def _run(cmd: list[str], what: str) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{what} failed ({' '.join(cmd[:3])} ...):\n{(r.stdout + r.stderr)[-3000:]}")
    return r.stdout


def _default_out(work: Path) -> Path:
    sys.path.insert(0, str(REPO / "examples"))
    import onnx
    import zoo

    from aot.cli import main

    onnx.save(zoo.mlp(), work / "mlp.onnx")
    out = work / "mlp_m4"
    if main([str(work / "mlp.onnx"), "-o", str(out), "--target", "mps2-an386", "--no-configure"]) != 0:
        raise SystemExit("compiling examples/zoo.py's mlp failed")
    return out


def check(out: Path, venv: Path, work: Path, args: argparse.Namespace) -> list[str]:
    """Write each package of `out` and check it with the tools in `venv`: one line per check."""
    from aot.packages import write_package
    from aot.packages.library import read_library

    py, lines, name = str(venv / "bin" / "python"), [], read_library(out).name
    for platform in args.platforms:
        dest, lib = write_package(out, platform, work / platform / (f"aotc_{name}" if platform == "zephyr" else name))
        if platform == "esp-idf":
            _run([str(venv / "bin" / "compote"), "-W", "component", "pack", "--project-dir", str(dest),
                  "--name", lib.name, "--dest-dir", str(work / "compote")], "compote component pack")
            lines.append(f"esp-idf: compote -W component pack: idf_component.yml valid, "
                         f"{next((work / 'compote').glob('*.tgz')).name} written")
        elif platform == "platformio":
            (work / "pio").mkdir(exist_ok=True)
            _run([str(venv / "bin" / "pio"), "pkg", "pack", str(dest), "-o", str(work / "pio")], "pio pkg pack")
            tarball = next((work / "pio").glob("*.tar.gz"))
            names = set(tarfile.open(tarball).getnames())
            manifest = json.loads((dest / "library.json").read_text())
            wanted = {f.strip("+<>") for f in manifest["build"]["srcFilter"]}
            assert wanted <= names, wanted - names
            lines.append(f"platformio: pio pkg pack: library.json valid, {tarball.name} holds the {len(wanted)} "
                         "sources build.srcFilter names")
        elif platform == "zephyr":
            wrapper = work / "Kconfig.zephyr"
            menu = f'osource "{dest / "Kconfig"}"\n'
            if args.zephyr_module_script:
                print(_run([py, "-c", ZEPHYR_CHECK, str(args.zephyr_module_script), str(dest), str(work / "menu")],
                           "zephyr_module.py").strip())
                menu = (work / "menu").read_text()
                lines.append("zephyr: module.yml read by Zephyr's scripts/zephyr_module.py (schema, cmake, kconfig)")
            wrapper.write_text("config REQUIRES_FULL_LIBC\n\tbool\n" + menu)
            lines.append("zephyr: " + _run([py, "-c", KCONFIG_CHECK, str(wrapper), f"AOTC_{lib.name.upper()}"],
                                           "kconfiglib").strip())
        elif platform == "cmsis-pack" and args.pack_xsd:
            pdsc = next(dest.glob("*.pdsc"))
            checked = _run([py, "-c", PDSC_CHECK, str(args.pack_xsd), str(pdsc)], "xmlschema")
            lines.append("cmsis-pack: " + checked.strip())
        elif platform == "arduino" and args.arduino_schemas:
            for line in _run([py, "-c", ARDUINO_CHECK, str(args.arduino_schemas), str(dest / "library.properties")],
                             "jsonschema").splitlines():
                lines.append("arduino: " + line)
        else:
            lines.append(f"{platform}: written to {dest}; no tool given for it (see --help)")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="?", type=Path, help="an aotc output folder (default: zoo mlp for mps2-an386)")
    p.add_argument("--venv", type=Path, help="a venv holding the tools (--make-venv writes one)")
    p.add_argument("--make-venv", type=Path, metavar="DIR", help="create DIR as a venv with the tools, and exit")
    p.add_argument("--platforms", nargs="+", default=["zephyr", "esp-idf", "arduino", "platformio", "cmsis-pack"])
    p.add_argument("--pack-xsd", type=Path, help="PACK.xsd of the Open-CMSIS-Pack specification")
    p.add_argument("--zephyr-module-script", type=Path, help="scripts/zephyr_module.py of a Zephyr tree")
    p.add_argument("--arduino-schemas", type=Path, help="arduino-lint's etc/schemas folder")
    args = p.parse_args()
    if args.make_venv:
        _run([sys.executable, "-m", "venv", str(args.make_venv)], "python -m venv")
        _run([str(args.make_venv / "bin" / "pip"), "install", "-q", *TOOLS], "pip install")
        print(f"tools installed in {args.make_venv}: {', '.join(TOOLS)}")
        return 0
    if not args.venv:
        p.error("give --venv DIR (a venv with the tools: --make-venv DIR writes one)")
    work = Path(tempfile.mkdtemp(prefix="aotc-package-tools-"))
    try:
        out = args.out or _default_out(work)
        for line in check(out, args.venv, work, args):
            print(line)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
