"""runtime_c/kernels/symbols.json, which picks the kernel files a bundle compiles, says what the
kernels' objects say: which file defines and calls which runtime function; runtime_c/vendor/symbols.json
what the vendors' runtime files define. A bundle renames every symbol they record under its name
(runtime/aotc_symbols.h), and no runtime file, compiled as a bundle ships it, defines any other.

    python3 -m pytest tests/kernels_c/test_runtime_symbols.py --update-symbols    # rewrite them after a C change
"""

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import require_tool

from aot.emit_c.runtime_files import (
    SYMBOLS_FILE,
    THREADS_FLAGS,
    SymbolConfig,
    aotc_symbols_header,
    family_files,
    kernel_families,
    runtime_symbols_all,
    scan_symbols,
    scan_vendor_symbols,
    shippable_runtime_files,
    sources_by_build,
    used_sources,
    vendor_runtime_sources,
    write_symbols,
    write_vendor_symbols,
)
from aot.paths import kernel_file, kernels_dir, runtime_dir
from aot.vendor.base import VENDOR_SYMBOLS_FILE
from aot.vendor.dnnl.probe import find_onednn


@pytest.mark.full  # (it compiles every kernel file: ~20 s of the fast tier's CPU)
def test_symbols_manifest_is_current(request):
    if request.config.getoption("--update-symbols"):
        write_symbols()
    recorded = json.loads((kernels_dir() / SYMBOLS_FILE).read_text())
    if recorded != scan_symbols():
        pytest.fail(f"runtime_c/kernels/{SYMBOLS_FILE} is stale: run pytest {__file__} --update-symbols")


def _onednn_include() -> Path:
    dnnl = find_onednn()
    if dnnl is None:  # the dnnl extra brings it (pip install -e '.[test,dnnl]'), as CI installs it
        message = "oneDNN 3.x not found: dnnl/aotc_dnnl.c cannot be compiled"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return dnnl.include


@pytest.mark.full
def test_vendor_symbols_manifest_is_current(request):
    include = _onednn_include()
    if request.config.getoption("--update-symbols"):
        write_vendor_symbols([include])
    recorded = json.loads((runtime_dir() / "vendor" / VENDOR_SYMBOLS_FILE).read_text())
    if recorded != scan_vendor_symbols([include]):
        pytest.fail(f"runtime_c/vendor/{VENDOR_SYMBOLS_FILE} is stale: run pytest {__file__} --update-symbols")


# The builds whose objects a bundle's renaming must cover: the host's (as a --threads bundle builds: it defines
# what a plain build does and the pool's entry points), the Cortex-M4's DSP paths and the M55's Helium paths.
RENAME_BUILDS = {
    "host": ("gcc", "nm", THREADS_FLAGS),
    "cortex-m4": ("arm-none-eabi-gcc", "arm-none-eabi-nm",
                  ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")),
    # a --flash-budget's portable kernels
    "cortex-m4-portable": ("arm-none-eabi-gcc", "arm-none-eabi-nm",
                           ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
                            "-DAOTC_NO_INTRINSICS=1")),
    "cortex-m55": ("arm-none-eabi-gcc", "arm-none-eabi-nm", ("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard")),
}
PREFIX = SymbolConfig().prefix  # (any configuration's)


@pytest.mark.full
@pytest.mark.parametrize("build", RENAME_BUILDS)
def test_runtime_files_define_only_names_under_the_bundle_prefix(tmp_path, build):
    """Every runtime C file, laid out as a bundle ships it (kernels flat in runtime/, a vendor's in vendor/<v>/)
    with an aotc_symbols.h that renames every symbol the two manifests record, compiles to an object that
    defines global symbols only under the prefix and names no runtime symbol unprefixed: each file includes
    aotc_common.h or dltensor.h before it declares one, and the manifests miss none that a build defines."""
    cc, nm, flags = RENAME_BUILDS[build]
    require_tool(cc, nm)
    host = build == "host"
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    for h in ("aotc_common.h", "dltensor.h"):
        shutil.copy(runtime_dir() / "include" / h, runtime / h)
    families = [f for f in kernel_families() if host or f != "threads"]  # bare metal has no thread pool
    for f in dict.fromkeys(f for fam in families for f in family_files(fam)):
        shutil.copy(kernel_file(f), runtime / f)
    sources = sorted(runtime.glob("*.c"))
    vendor_dirs = {}
    if host:  # the vendors' runtimes build for the host (the dnnl one needs oneDNN)
        for src in vendor_runtime_sources():
            d = tmp_path / "vendor" / src.parent.name
            if not d.is_dir():
                shutil.copytree(src.parent, d, ignore=shutil.ignore_patterns("tools"))
            vendor_dirs[d / src.name] = d
        sources += list(vendor_dirs)
    recorded = set(runtime_symbols_all())  # what every bundle's aotc_symbols.h renames
    (runtime / "aotc_symbols.h").write_text(aotc_symbols_header(SymbolConfig()))
    extra = [f"-I{_onednn_include()}"] if host else []

    def wrong(src: Path) -> list[str]:
        obj = tmp_path / f"{src.parent.name}_{src.stem}.o"
        includes = [f"-I{vendor_dirs[src]}"] if src in vendor_dirs else []
        subprocess.run([cc, "-std=c99", "-O0", *flags, *includes, f"-I{runtime}", *extra, "-c", str(src), "-o",
                        str(obj)], check=True, capture_output=True)
        rows = [ln.split() for ln in subprocess.run([nm, str(obj)], check=True, capture_output=True,
                                                    text=True).stdout.splitlines()]
        defined = [r[-1] for r in rows if len(r) == 3 and r[1].isupper() and r[1] != "U"]
        named = [r[-1] for r in rows if r[0] == "U" and r[-1] in recorded]
        return [f"{src.name} defines {s}" for s in defined if not s.startswith(PREFIX)] + \
               [f"{src.name} calls {s} by its own name" for s in named]

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for found in pool.map(wrong, sources) for p in found]
    assert len(sources) > 80
    assert not problems, ("outside the bundle's prefix (a symbol no manifest records: --update-symbols; one "
                          f"declared before aotc_common.h or dltensor.h is included: include it first): {problems}")


def test_every_bundle_renames_every_runtime_symbol_and_hashes_every_shippable_file():
    """aotc_symbols.h renames every symbol the two manifests record, whichever files a bundle ships (so it is
    one file per configuration), and the runtime digest that keys the prefix covers every file a bundle can
    ship from runtime_c/: each family's, include/'s, the vendors' runtimes."""
    recorded = {s for row in json.loads((kernels_dir() / SYMBOLS_FILE).read_text()).values() for s in row["defines"]}
    recorded |= {s for row in json.loads((runtime_dir() / "vendor" / VENDOR_SYMBOLS_FILE).read_text()).values()
                 for s in row["defines"]}
    header = aotc_symbols_header(SymbolConfig())
    assert set(runtime_symbols_all()) == recorded and "aotc_cref_gemm_f32" in recorded
    assert all(f"#define {s} {SymbolConfig().prefix}{s}\n" in header for s in recorded)
    hashed = {p.relative_to(runtime_dir()).as_posix() for p in shippable_runtime_files()}
    shipped = {kernel_file(f).relative_to(runtime_dir()).as_posix() for fam in kernel_families()
               for f in family_files(fam)}
    shipped |= {f"include/{h}" for h in ("aotc_common.h", "dltensor.h")}
    shipped |= {p.relative_to(runtime_dir()).as_posix() for src in vendor_runtime_sources()
                for p in src.parent.glob("*.[ch]")}
    assert shipped <= hashed, sorted(shipped - hashed)
    assert not any(h.endswith("_ref.c") for h in hashed) and "kernels/tflite_int8/tflite_int8_ref.c" not in shipped


def test_used_sources_follow_calls_across_files():
    conv = ["conv_depthwise.c", "conv_implicit.c", "conv_pointwise.c", "gemm.c", "pool_max.c"]
    code = "aotc_conv_implicit_f32(&p, x, w, b, y); /* aotc_maxpool_f32 in a comment counts too */"
    used = used_sources(conv, [code])
    assert "conv_implicit.c" in used and "pool_max.c" in used and "conv_depthwise.c" not in used
    assert used == [f for f in conv if f in used]  # candidates' order kept
    assert used_sources(["not_in_manifest.c"], [""]) == ["not_in_manifest.c"]


def test_sources_by_build_leave_the_plain_kernels_to_builds_without_avx512f():
    """Built with AVX-512F an x86 path's entry does not call its plain kernel: code that calls only the entry
    needs conv_implicit.c (and gemm.c, which it calls) only without AVX-512F; code that also calls the plain
    kernel itself needs them in every build."""
    files = ["conv_igx3s2_avx512.c", "conv_implicit.c", "gemm.c", "pool_max.c", "pool_max_k3s2p1_avx512.c"]
    both = "aotc_conv_igx3s2_f32(&p, x, w, b, r, y); aotc_conv_implicit_f32(&q, x, w, b, r, y);"
    assert sources_by_build(files, [both]) == (["conv_igx3s2_avx512.c", "conv_implicit.c", "gemm.c"], [])
    paths = "aotc_conv_igx3s2_f32(&p, x, w, b, r, y); aotc_maxpool_k3s2p1_f32(&m, x, y);"
    assert sources_by_build(files, [paths]) == (["conv_igx3s2_avx512.c", "pool_max_k3s2p1_avx512.c"],
                                                ["conv_implicit.c", "gemm.c", "pool_max.c"])
    assert sources_by_build(["not_in_manifest.c"], [""]) == (["not_in_manifest.c"], [])
