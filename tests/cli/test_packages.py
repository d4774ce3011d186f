"""Platform packages (`aotc package OUT --platform P`, aot/packages): for examples/zoo.py's mlp compiled for
mps2-an386, each platform's package is written, its manifest parses with the fields the platform requires, and
its sources compile as the platform's build sees them (its include layout, its way of giving flags), with
arm-none-eabi-gcc for a Cortex-M4F at -O2 -Wall -Wextra -Werror; ESP-IDF's also with the host's gcc. The
CMake-based packages (Zephyr, ESP-IDF) are built through their own CMakeLists.txt with stand-ins for the
platform's functions. In the full tier the Arduino example sketch runs under qemu and prints the checksum the
bundle's runner prints. The platforms' own tools from PyPI check the manifests in bench/package_tools.py."""

from __future__ import annotations

import configparser
import hashlib
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import onnx
import pytest
import yaml
import zoo
from conftest import compiler_launcher, require_tool, tiered
from modelcheck import aotc

from aot.build import cmake_exe, ninja_exe
from aot.packages import MARK, PLATFORMS

M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
STRICT = ["-O2", "-Wall", "-Wextra", "-Werror"]
VERSION = "2.3.4"
QEMU = ["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none", "-serial", "none",
        "-semihosting-config", "enable=on,target=native"]


@pytest.fixture(scope="module")
def mlp_out(tmp_path_factory) -> Path:
    """zoo's mlp compiled for mps2-an386 (its weights in a blob linked by .incbin), written, not configured."""
    work = tmp_path_factory.mktemp("mlp")
    onnx.save(zoo.mlp(), work / "mlp.onnx")
    aotc(work / "mlp.onnx", "-o", work / "out", "--target", "mps2-an386", "--no-configure")
    return work / "out"


def _package(out: Path, platform: str, dest: Path, *extra: str) -> Path:
    ran = aotc("package", out, "--platform", platform, "-o", dest, "--package-version", VERSION, *extra)
    assert ran.stdout.startswith(f"aotc: wrote {dest} ({platform} package of mlp {VERSION}"), ran.stdout
    assert "compiled for target mps2-an386" in ran.stdout
    return dest


def _gcc(cc: str, flags: list[str], source: Path, obj: Path, cwd: Path) -> Path:
    r = subprocess.run([*compiler_launcher(), cc, *flags, "-c", str(source), "-o", str(obj)], cwd=cwd,
                       capture_output=True, text=True)
    assert r.returncode == 0, f"{cc} {source}:\n{r.stderr[-3000:]}"
    return obj


def _section(obj: Path, section: str) -> bytes:
    """The bytes of `section` in the ARM object `obj`."""
    out = obj.with_suffix(".section")
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", f"--only-section={section}", str(obj), str(out)],
                   check=True)
    return out.read_bytes()


def _cmake_build(project: Path, build: Path, cc: str, flags: list[str], asm_flags: list[str]) -> str:
    """Configure and build `project` with `cc` and `flags`; the build's commands (verbose)."""
    ninja = ninja_exe()
    gen = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else []
    cross = ["-DCMAKE_SYSTEM_NAME=Generic", "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY"] \
        if cc.startswith("arm-") else []
    launcher = [f"-DCMAKE_C_COMPILER_LAUNCHER={compiler_launcher()[0]}"] if compiler_launcher() else []
    r = subprocess.run([cmake_exe(), "-S", str(project), "-B", str(build), *gen, *cross, *launcher,
                        f"-DCMAKE_C_COMPILER={cc}", f"-DCMAKE_ASM_COMPILER={cc}",
                        f"-DCMAKE_C_FLAGS={' '.join(flags)}", f"-DCMAKE_ASM_FLAGS={' '.join(asm_flags)}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "CMake Warning" not in r.stderr, r.stderr[-3000:]  # e.g. the Zephyr module's check of the core
    r = subprocess.run([cmake_exe(), "--build", str(build), "-v"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "warning" not in (r.stdout + r.stderr).lower(), r.stdout[-4000:]
    return r.stdout


# Zephyr's library functions as a module's CMakeLists.txt uses them (zephyr/cmake/modules/extensions.cmake:
# a named static library linked to zephyr_interface, which carries the include folders to the application).
ZEPHYR_STUB = """cmake_minimum_required(VERSION 3.16)
project(zephyr_app C ASM)
set(CONFIG_{kconfig} y)          # prj.conf: CONFIG_{kconfig}=y
set(CONFIG_CPU_CORTEX_M4 y)      # the board's core
add_library(zephyr_interface INTERFACE)
macro(zephyr_library_named name)
  set(ZEPHYR_CURRENT_LIBRARY ${{name}})
  add_library(${{name}} STATIC "")
  target_link_libraries(${{name}} PUBLIC zephyr_interface)
endmacro()
function(zephyr_library_sources)
  target_sources(${{ZEPHYR_CURRENT_LIBRARY}} PRIVATE ${{ARGN}})
endfunction()
function(zephyr_include_directories)
  target_include_directories(zephyr_interface INTERFACE ${{ARGN}})
endfunction()
function(zephyr_library_include_directories)
  target_include_directories(${{ZEPHYR_CURRENT_LIBRARY}} PRIVATE ${{ARGN}})
endfunction()
function(zephyr_library_compile_definitions)
  target_compile_definitions(${{ZEPHYR_CURRENT_LIBRARY}} PRIVATE ${{ARGN}})
endfunction()
function(zephyr_library_compile_options)
  target_compile_options(${{ZEPHYR_CURRENT_LIBRARY}} PRIVATE ${{ARGN}})
endfunction()
add_subdirectory({module} modules/{name})
add_library(app STATIC app.c)
target_link_libraries(app PRIVATE zephyr_interface)
"""

# ESP-IDF's idf_component_register() as far as a component's CMakeLists.txt uses it (tools/cmake/component.cmake:
# the component's static library, COMPONENT_LIB, its INCLUDE_DIRS public and PRIV_INCLUDE_DIRS private).
ESP_IDF_STUB = """cmake_minimum_required(VERSION 3.16)
project(esp_app C ASM)
function(idf_component_register)
  cmake_parse_arguments(ARG "" "" "SRCS;INCLUDE_DIRS;PRIV_INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES" ${{ARGN}})
  add_library(__idf_{name} STATIC ${{ARG_SRCS}})
  target_include_directories(__idf_{name} PUBLIC ${{ARG_INCLUDE_DIRS}} PRIVATE ${{ARG_PRIV_INCLUDE_DIRS}})
  set(COMPONENT_LIB __idf_{name} PARENT_SCOPE)
endfunction()
add_subdirectory({component} esp-idf/{name})
add_library(app STATIC app.c)
target_link_libraries(app PRIVATE __idf_{name})
"""

APP_C = '#include "mlp.h"\nint app_main(void *arena) { return (int)mlp_init(arena); }\n'

# What an Arduino core gives a sketch, as far as the example uses it: Serial's print/println (to stdout),
# micros(); and the core's main(), which calls setup() (and would call loop() for ever).
ARDUINO_H = """#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#define HEX 16
#define DEC 10
class SerialStub {
 public:
  void begin(unsigned long) {}
  explicit operator bool() const { return true; }
  void print(const char *s) { fputs(s, stdout); }
  void print(char c) { putchar(c); }
  void print(long v, int base = DEC) { printf(base == HEX ? "%lX" : "%ld", v); }
  void print(unsigned long v, int base = DEC) { printf(base == HEX ? "%lX" : "%lu", v); }
  void print(int v, int base = DEC) { print((long)v, base); }
  void print(unsigned v, int base = DEC) { print((unsigned long)v, base); }
  void print(double v, int digits = 2) { printf("%.*f", digits, v); }
  template <typename T> void println(T v) { print(v); print('\\n'); }
  template <typename T> void println(T v, int f) { print(v, f); print('\\n'); }
};
extern SerialStub Serial;
unsigned long micros(void);
void setup(void);
void loop(void);
"""
ARDUINO_MAIN = """#include "Arduino.h"
SerialStub Serial;
unsigned long micros(void) { return 0; }
int main(int argc, char **argv) { (void)argc; (void)argv; setup(); return 0; }
"""


def _arduino_objects(pkg: Path, work: Path) -> list[Path]:
    """Every C file under src/ compiled with -Isrc (Arduino's build), and the example as C++ (the .ino is C++
    with Arduino.h included first; no exceptions or RTTI, as Arduino's cores compile) against the stand-in
    core. (Linked by gcc: Debian's arm-none-eabi has no libstdc++, which the sketch does not need.)"""
    core = work / "core"
    core.mkdir(exist_ok=True)
    (core / "Arduino.h").write_text(ARDUINO_H)
    (core / "main.cpp").write_text(ARDUINO_MAIN)
    objs = [_gcc("arm-none-eabi-gcc", [*M4, *STRICT, "-Isrc"], c, work / f"{c.stem}.o", pkg)
            for c in sorted((pkg / "src").rglob("*.c"))]
    sketch = work / "sketch.cpp"
    example = pkg / "examples" / "mlp"
    sketch.write_text('#include "Arduino.h"\n' + (example / "mlp.ino").read_text())
    cxx = [*M4, *STRICT, "-fno-exceptions", "-fno-rtti", "-fno-threadsafe-statics", f"-I{core}", f"-I{pkg / 'src'}"]
    objs.append(_gcc("arm-none-eabi-g++", cxx, sketch, work / "sketch.o", pkg))
    objs.append(_gcc("arm-none-eabi-g++", cxx, core / "main.cpp", work / "main.o", pkg))
    objs += [_gcc("arm-none-eabi-gcc", [*M4, *STRICT], c, work / f"{c.stem}.o", pkg) for c in example.glob("*.c")]
    return objs


@pytest.mark.parametrize("platform", PLATFORMS)
def test_manifest_parses_with_the_platforms_fields(mlp_out, tmp_path, platform):
    """Each manifest parses as its format and carries the name, the package version, the aotc version and the
    target; the library's files are in the package where its manifest says."""
    pkg = _package(mlp_out, platform, tmp_path / "pkg")
    record = json.loads((pkg / MARK).read_text())
    assert record["platform"] == platform and record["package_version"] == VERSION
    assert record["aotc_version"] == json.loads((mlp_out / "bundle" / "metadata.json").read_text())["aotc_version"]
    assert "README.md" in record["files"] and "mps2-an386" in (pkg / "README.md").read_text()
    if platform == "zephyr":
        module = yaml.safe_load((pkg / "zephyr" / "module.yml").read_text())
        assert module == {"name": "aotc_mlp", "build": {"cmake": ".", "kconfig": "Kconfig"}}
        kconfig = (pkg / "Kconfig").read_text()
        assert re.search(r"^config AOTC_MLP\n\tbool \"", kconfig, re.M) and "select REQUIRES_FULL_LIBC" in kconfig
        cmake = (pkg / "CMakeLists.txt").read_text()
        assert "if(CONFIG_AOTC_MLP)" in cmake and "zephyr_library_named(aotc_mlp)" in cmake
        assert "-mcpu=cortex-m4" in cmake and "-std=c99" in cmake
    elif platform == "esp-idf":
        manifest = yaml.safe_load((pkg / "idf_component.yml").read_text())
        assert manifest["version"] == VERSION and "aotc" in manifest["description"]
        assert "mps2-an386" in manifest["description"]
        cmake = (pkg / "CMakeLists.txt").read_text()
        assert "idf_component_register(" in cmake and '"src/mlp_weights.S"' in cmake
    elif platform == "arduino":
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string("[library]\n" + (pkg / "library.properties").read_text())
        props = dict(parser["library"])
        for field in ("name", "version", "author", "maintainer", "sentence", "paragraph", "category", "url",
                      "architectures"):
            assert props.get(field), f"library.properties lacks {field}"
        assert props["name"] == "mlp" and props["version"] == VERSION and props["includes"] == "mlp.h"
        assert props["category"] in ("Display", "Communication", "Signal Input/Output", "Sensors", "Device Control",
                                     "Timing", "Data Storage", "Data Processing", "Other")
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.\-]{0,62}", props["name"])
        assert "mps2-an386" in props["paragraph"]
        assert (pkg / "src" / "mlp.h").is_file() and (pkg / "examples" / "mlp" / "mlp.ino").is_file()
        assert not list((pkg / "src").rglob("*.S")) and not list((pkg / "src").rglob("*.bin"))
    elif platform == "platformio":
        manifest = json.loads((pkg / "library.json").read_text())
        assert manifest["name"] == "mlp" and manifest["version"] == VERSION
        build = manifest["build"]
        assert build["includeDir"] == "include" and (pkg / "include" / "mlp.h").is_file()
        assert "-Iruntime" in build["flags"] and "-std=c99" in build["flags"]
        for f in build["srcFilter"]:
            assert (pkg / f.strip("+<>")).is_file(), f
    else:
        pdsc = ET.parse(pkg / "aotc.mlp.pdsc").getroot()
        assert pdsc.tag == "package" and pdsc.get("schemaVersion")
        assert pdsc.findtext("vendor") == "aotc" and pdsc.findtext("name") == "mlp"
        assert pdsc.find("releases/release").get("version") == VERSION
        component = pdsc.find("components/component")
        assert component.get("Cclass") and component.get("Cversion") == VERSION
        cond = pdsc.find(f"conditions/condition[@id='{component.get('condition')}']")
        assert {a.get("Dcore") for a in cond.findall("accept")} >= {"Cortex-M4", "Cortex-M7"}
        files = component.findall("files/file")
        for f in files:
            assert (pkg / f.get("name")).exists(), f.get("name")
        with zipfile.ZipFile(pkg / f"aotc.mlp.{VERSION}.pack") as z:
            packed = set(z.namelist())
        assert "aotc.mlp.pdsc" in packed and {f.get("name") for f in files if f.get("category") == "source"} <= packed


# PlatformIO's and the CMSIS-Pack's compile the sources Arduino's does (with other include layouts): full tier
@pytest.mark.parametrize("platform", tiered(["arduino", "platformio", "cmsis-pack"], fast=["arduino"]))
def test_sources_compile_as_the_platform_builds_them(mlp_out, tmp_path, platform):
    """Arduino: every .c under src/ with -Isrc and the sketch as C++, linked; PlatformIO: the sources of
    build.srcFilter with build.flags and includeDir; CMSIS-Pack: the .pdsc's sources with its include paths.
    The weights blob, a C array in these packages, holds the bytes of the bundle's .bin in its section."""
    require_tool("arm-none-eabi-gcc", "arm-none-eabi-g++")
    pkg = _package(mlp_out, platform, tmp_path / "pkg")
    work = tmp_path / "obj"
    work.mkdir()
    if platform == "arduino":
        objs = _arduino_objects(pkg, work)
        r = subprocess.run(["arm-none-eabi-gcc", *M4, "--specs=nosys.specs", *map(str, objs), "-lm",
                            "-o", str(work / "sketch.elf")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
    elif platform == "platformio":
        build = json.loads((pkg / "library.json").read_text())["build"]
        flags = [*M4, *STRICT, f"-I{build['includeDir']}", *build["flags"]]
        objs = [_gcc("arm-none-eabi-gcc", flags, pkg / f.strip("+<>"), work / f"{Path(f.strip('+<>')).stem}.o", pkg)
                for f in build["srcFilter"]]
    else:
        component = ET.parse(pkg / "aotc.mlp.pdsc").getroot().find("components/component")
        files = component.findall("files/file")
        includes = [f"-I{Path(f.get('name')).parent}" for f in files if f.get("category") == "header"]
        includes += [f"-I{f.get('name')}" for f in files if f.get("category") == "include"]
        objs = [_gcc("arm-none-eabi-gcc", [*M4, *STRICT, *includes], pkg / f.get("name"),
                     work / f"{Path(f.get('name')).stem}.o", pkg) for f in files if f.get("category") == "source"]
    blob = next(o for o in objs if o.stem == "mlp_weights_blob")
    bundle_bin = (mlp_out / "bundle" / "src" / "mlp_weights.bin").read_bytes()
    assert hashlib.sha256(_section(blob, ".rodata.aotc_weights")).digest() == hashlib.sha256(bundle_bin).digest()


@pytest.mark.parametrize("platform", ["zephyr", "esp-idf"])
def test_cmake_packages_build_through_their_own_cmakelists(mlp_out, tmp_path, platform):
    """The package's CMakeLists.txt, with stand-ins for zephyr_library_*() / idf_component_register(), builds the
    bundle's sources (the weights by their .S and .bin), and the application finds the model's header; ESP-IDF's
    also with the host's gcc (there is no Xtensa or RISC-V ESP compiler here)."""
    require_tool("arm-none-eabi-gcc")
    pkg = _package(mlp_out, platform, tmp_path / ("aotc_mlp" if platform == "zephyr" else "mlp"))
    app = tmp_path / "app"
    app.mkdir()
    (app / "app.c").write_text(APP_C)
    stub = ZEPHYR_STUB.format(kconfig="AOTC_MLP", module=pkg, name="aotc_mlp") if platform == "zephyr" else \
        ESP_IDF_STUB.format(component=pkg, name="mlp")
    (app / "CMakeLists.txt").write_text(stub)
    compilers = [("arm-none-eabi-gcc", [*M4, *STRICT], M4)]
    if platform == "esp-idf":
        require_tool("gcc")
        compilers.append(("gcc", ["-std=gnu17", *STRICT], []))  # ESP-IDF compiles C as gnu17; the component adds c99
    for cc, flags, asm_flags in compilers:
        log = _cmake_build(app, tmp_path / f"build-{cc}", cc, flags, asm_flags)
        for src in ("src/mlp.c", "runtime/gemm.c", "runtime/norm.c", "src/mlp_weights.S"):
            assert src in log, f"{src} not built"
        assert "-std=c99" in log and f"-Wa,-I{pkg}/src" in log
        lib = next((tmp_path / f"build-{cc}").rglob("libaotc_mlp.a" if platform == "zephyr" else "lib__idf_mlp.a"))
        assert lib.stat().st_size > len((mlp_out / "bundle" / "src" / "mlp_weights.bin").read_bytes())


def test_definitions_and_options_reach_each_platform(mlp_out, tmp_path):
    """A --flash-budget level's AOTC_NO_INTRINSICS and -Os (aot/flash.py appends them to the CMakeLists.txt) go
    where each platform takes a library's own definitions and options, or are stated where it has none."""
    from aot.emit_c.bundle import Bundle
    from aot.flash import LEVELS, with_level

    portable = next(level for level in LEVELS if level.portable)
    out = tmp_path / "portable"
    shutil.copytree(mlp_out / "bundle", out / "bundle")
    cmake = out / "bundle" / "CMakeLists.txt"
    cmake.write_text(with_level(Bundle("mlp", {"CMakeLists.txt": cmake.read_text()}), portable).files["CMakeLists.txt"])
    pkgs = {p: _package(out, p, tmp_path / p) for p in PLATFORMS}
    zephyr = (pkgs["zephyr"] / "CMakeLists.txt").read_text()
    assert "zephyr_library_compile_definitions(AOTC_NO_INTRINSICS=1)" in zephyr and ":-Os>)" in zephyr
    esp = (pkgs["esp-idf"] / "CMakeLists.txt").read_text()
    assert "target_compile_definitions(${COMPONENT_LIB} PRIVATE AOTC_NO_INTRINSICS=1)" in esp and ":-Os>)" in esp
    flags = json.loads((pkgs["platformio"] / "library.json").read_text())["build"]["flags"]
    assert "-DAOTC_NO_INTRINSICS=1" in flags and "-Os" in flags
    for c in (pkgs["arduino"] / "src").rglob("*.c"):
        assert "#define AOTC_NO_INTRINSICS 1" in c.read_text().split("\n", 4)[2], c
    assert "Arduino cannot give a library options" in (pkgs["arduino"] / "README.md").read_text()
    pdsc = ET.parse(pkgs["cmsis-pack"] / "aotc.mlp.pdsc").getroot()
    assert "#define AOTC_NO_INTRINSICS 1" in pdsc.findtext("components/component/Pre_Include_Local_Component_h")
    cores = {a.get("Dcore") for a in pdsc.findall("conditions/condition/accept")}
    assert "Cortex-M0" in cores  # portable kernels: any Cortex-M


def test_refusals_are_one_line(mlp_out, tmp_path):
    """A folder with no bundle, a bundle that needs the --threads pool, a package folder holding other files:
    exit 2 and one line; --force replaces the folder."""
    ran = aotc("package", tmp_path, "--platform", "zephyr", check=False)
    assert ran.returncode == 2 and "holds no aotc bundle" in ran.stderr and len(ran.stderr.strip().splitlines()) == 1
    threaded = tmp_path / "threaded"
    shutil.copytree(mlp_out / "bundle", threaded / "bundle")
    cmake = threaded / "bundle" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text().replace("if(AOTC_TAPS)\n", "find_package(Threads REQUIRED)\nif(AOTC_TAPS)\n"))
    ran = aotc("package", threaded, "--platform", "arduino", check=False)
    assert ran.returncode == 2 and "--threads pool" in ran.stderr and len(ran.stderr.strip().splitlines()) == 1
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("keep")
    ran = aotc("package", mlp_out, "--platform", "esp-idf", "-o", busy, check=False)
    assert ran.returncode == 2 and "--force" in ran.stderr and (busy / "mine.txt").read_text() == "keep"
    aotc("package", mlp_out, "--platform", "esp-idf", "-o", busy, "--force")
    assert not (busy / "mine.txt").exists() and (busy / MARK).is_file()
    aotc("package", mlp_out, "--platform", "esp-idf", "-o", busy)  # a package aotc wrote is replaced
    ran = aotc("package", mlp_out, "--platform", "esp-idf", "--package-version", "1.0", check=False)
    assert ran.returncode == 2 and "MAJOR.MINOR.PATCH" in ran.stderr


@pytest.mark.full
def test_a_vendors_sources_and_weights_go_along(tmp_path):
    """LeNet with accel_sim's functions: the vendor's sources and the weights its C includes by .incbin are in the
    Arduino library (the .bin where -Isrc finds it) and in the pack, and the library compiles."""
    require_tool("arm-none-eabi-gcc", "arm-none-eabi-g++")
    onnx.save(zoo.lenet(), tmp_path / "lenet.onnx")
    out = tmp_path / "out"
    aotc(tmp_path / "lenet.onnx", "-o", out, "--target", "mps2-an386", "--vendor", "accel_sim", "--no-configure")
    ran = aotc("package", out, "--platform", "arduino", "-o", tmp_path / "arduino")
    assert ran.returncode == 0
    pkg = tmp_path / "arduino"
    assert (pkg / "src" / "lenet_accel_sim_0_weights.bin").is_file()
    assert (pkg / "src" / "aotc" / "accel_sim.c").is_file()
    for c in sorted((pkg / "src").rglob("*.c")):
        _gcc("arm-none-eabi-gcc", [*M4, *STRICT, "-Isrc"], c, tmp_path / f"{c.stem}.o", pkg)
    aotc("package", out, "--platform", "cmsis-pack", "-o", tmp_path / "pack")
    files = {f.get("name"): f.get("category") for f in ET.parse(tmp_path / "pack" / "aotc.lenet.pdsc").getroot()
             .findall("components/component/files/file")}
    assert files["vendor/accel_sim/accel_sim.c"] == "source" and files["vendor/accel_sim/"] == "include"
    assert files["vendor/accel_sim/lenet_accel_sim_0_weights.bin"] == "other"


def _run_sketch_under_qemu(out: Path, pkg: Path, work: Path) -> str:
    """The Arduino library and its example linked for the mps2-an386 board (the bundle's startup code and
    linker script, semihosting for Serial's output) and run under qemu: what it printed."""
    objs = _arduino_objects(pkg, work)
    board = out / "bundle" / "target" / "cortex-m"
    objs.append(_gcc("arm-none-eabi-gcc", [*M4, "-O2", "-DAOTC_BARE_METAL=1", f"-I{board}"], board / "startup.c",
                     work / "startup.o", work))
    elf = work / "sketch.elf"
    r = subprocess.run(["arm-none-eabi-gcc", *M4, "--specs=nano.specs", "--specs=rdimon.specs", "-nostartfiles",
                        "-u", "_printf_float", f"-T{board / 'mps2-an386.ld'}", f"-L{board}", "-Wl,--gc-sections",
                        *map(str, objs), "-lm", "-o", str(elf)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run(QEMU + ["-kernel", str(elf)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return r.stdout


@pytest.mark.full
@pytest.mark.parametrize("separate", [False, True], ids=["weights-blob", "separate-weights"])
def test_arduino_example_prints_the_runners_checksum_under_qemu(tmp_path, separate):
    """The Arduino library built as Arduino builds it and its example run on the M4 under qemu print the
    outputs' checksum the bundle's own runner prints for the same inputs (its self-test): the package computes
    what the bundle does. With --separate-weights the example loads the weights file from its copy."""
    require_tool("arm-none-eabi-gcc", "arm-none-eabi-g++", "qemu-system-arm")
    onnx.save(zoo.mlp(), tmp_path / "mlp.onnx")
    out = tmp_path / "out"
    aotc(tmp_path / "mlp.onnx", "-o", out, "--target", "mps2-an386", *(["--separate-weights"] if separate else []))
    r = subprocess.run([cmake_exe(), "--build", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]
    r = subprocess.run(QEMU + ["-kernel", str(out / "runner.elf")], capture_output=True, text=True, timeout=300)
    expected = re.search(r"self-test ran mlp: outputs checksum ([0-9a-f]+)", r.stdout)
    assert expected, r.stdout[-3000:] + r.stderr[-2000:]
    pkg = _package(out, "arduino", tmp_path / "pkg")
    if separate:
        assert (pkg / "extras" / "mlp_weights.bin").is_file()
        assert (pkg / "examples" / "mlp" / "mlp_weights_file.c").is_file()
    work = tmp_path / "obj"
    work.mkdir()
    printed = _run_sketch_under_qemu(out, pkg, work)
    got = re.search(r"mlp: outputs checksum ([0-9A-F]+)", printed)
    assert got and int(got.group(1), 16) == int(expected.group(1), 16), printed
    assert re.search(r"softmax12_out:( -?\d+\.\d{6}){10}\n", printed), printed
