"""runtime_c/kernels/symbols.json, which picks the kernel files a bundle compiles, says what the
kernels' objects say: which file defines and calls which runtime function.

    python3 -m pytest tests/kernels_c/test_runtime_symbols.py --update-symbols    # rewrite it after a kernel change
"""

import json

import pytest

from aot.emit_c.runtime_files import SYMBOLS_FILE, scan_symbols, sources_by_build, used_sources, write_symbols
from aot.paths import kernels_dir


@pytest.mark.full  # (it compiles every kernel file: ~20 s of the fast tier's CPU)
def test_symbols_manifest_is_current(request):
    if request.config.getoption("--update-symbols"):
        write_symbols()
    recorded = json.loads((kernels_dir() / SYMBOLS_FILE).read_text())
    if recorded != scan_symbols():
        pytest.fail(f"runtime_c/kernels/{SYMBOLS_FILE} is stale: run pytest {__file__} --update-symbols")


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
