"""Which files of runtime_c/kernels/ a bundle ships for each host kernel family.

One naming rule (runtime_c/kernels/README.md) says which files make up family F:

    aotc_F.h        its API: the params structs and entry points generated code calls
    F.c             its kernels, or
    F_<strategy>.c  one file per optimised strategy (conv_implicit.c, conv_im2col.c, ...)
    F_ref.c         its reference kernels: built by the C tests (tests/c/), never shipped

plus the kernel-internal headers those files include (e.g. microkernel.h), found by reading
their #include lines. A family's kernels may call another family's (conv calls the GEMM core):
the op says so (HostOp.needs) and the bundle then ships that family's files too.
"""

from __future__ import annotations

import functools
import re

from aot.paths import runtime_dir

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


@functools.cache
def family_files(family: str) -> tuple[str, ...]:
    """The files under runtime_c/kernels/ that a bundle calling kernel family `family` needs:
    headers first (aotc_<family>.h, then the local headers they and the sources include), then
    the sources to compile."""
    kernels = runtime_dir() / "kernels"
    header = f"aotc_{family}.h"
    if not (kernels / header).is_file():
        raise ValueError(f"no kernel family {family!r}: runtime_c/kernels/{header} does not exist")
    sources = sorted(p.name for p in kernels.glob(f"{family}*.c")
                     if p.stem == family or (p.stem.startswith(f"{family}_") and p.stem != f"{family}_ref"))
    headers, todo = [header], [header, *sources]
    while todo:
        for name in _INCLUDE.findall((kernels / todo.pop()).read_text()):
            if name not in headers and (kernels / name).is_file():
                headers.append(name)
                todo.append(name)
    return (*headers, *sources)


def kernel_families() -> list[str]:
    """Every host kernel family in runtime_c/kernels/ (one aotc_<family>.h each)."""
    return sorted(p.stem.removeprefix("aotc_") for p in (runtime_dir() / "kernels").glob("aotc_*.h"))
