"""The generated C of three small models, checked in: a change to the compiler shows its diff here.

    python3 -m pytest tests/emit/test_goldens.py --update-goldens    # rewrite them after a deliberate change

The goldens are text a reviewer reads (tests/emit/goldens/<case>/): the header, the entry point, the
CMake file and the metadata; the runtime kernels are compared by their own tests. The hash of the kernel
configuration (aotc_<hash8>_, runtime/aotc_symbols.h), which any change to a runtime C file changes, is written
as `xxxxxxxx` in them: it is a digest of those files, not the compiler's output.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
import zoo

from aot.compiler import Options, compile_model

GOLDENS = Path(__file__).parent / "goldens"
# case -> (zoo model, options): a host CNN, an MLP on a Cortex-M board, a partitioned model
CASES = {
    # the same goldens on any machine: a host without AVX-512, whose kernels (conv_avx512.py, pool.py) are not chosen
    "lenet_host": ("lenet", Options(name="lenet", host_isa="generic")),
    "mlp_mps2_an386": ("mlp", Options(name="mlp", target="mps2-an386")),
    "lenet_cref": ("lenet", Options(name="lenet", vendors=("cref",), host_isa="generic")),
}


def _files(case: str) -> dict[str, str]:
    model, options = CASES[case]
    bundle = compile_model(zoo.build(model), options, source=f"{model}.onnx")
    name = bundle.name
    keep = [f"include/{name}.h", f"src/{name}.c", "CMakeLists.txt", "metadata.json"]
    keep += sorted(p for p in bundle.files if p.startswith("vendor/") and p.endswith((".c", ".h")))
    config = re.escape(bundle.metadata["symbol_prefix"].removeprefix("aotc_").removesuffix("_"))
    return {p: re.sub(rf"\b(aotc_|AOTC_SYMBOLS_CONFIG_){config}", r"\1xxxxxxxx", bundle.files[p])
            for p in keep if isinstance(bundle.files.get(p), str)}


@pytest.mark.parametrize("case", CASES)
def test_generated_c_matches_golden(case, request):
    files = _files(case)
    folder = GOLDENS / case
    if request.config.getoption("--update-goldens"):
        for old in folder.rglob("*") if folder.exists() else ():
            if old.is_file() and old.relative_to(folder).as_posix() not in files:
                old.unlink()
        for rel, text in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
        return
    assert folder.is_dir(), f"no goldens for {case}: run pytest {__file__} --update-goldens"
    stored = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert stored == set(files), f"files differ: {sorted(stored ^ set(files))}"
    for rel, text in files.items():
        want = (folder / rel).read_text()
        if text != want:
            diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                                f"golden/{rel}", f"now/{rel}", n=2))
            pytest.fail(f"{case}/{rel} differs from its golden (--update-goldens if intended):\n{diff[:6000]}")
