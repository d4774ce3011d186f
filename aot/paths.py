"""Where aotc's own files are: the C runtime and the CMake target files.

An installed package (wheel, sdist, `pip install .`) carries them inside itself, in aot/_data/
(setup.py puts them there). A source checkout keeps them beside aot/, where DESIGN.md's layout
has them; it is recognised by its own pyproject.toml, never by a folder name alone: an installed
aot/ sits in site-packages beside other distributions' folders (the CMake wheel's `cmake/`).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from aot.errors import AotcError

_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def data_root() -> Path:
    """The folder holding runtime_c/ and cmake/ for this copy of aot."""
    installed = _PACKAGE / "_data"
    if installed.is_dir():
        return installed
    checkout = _PACKAGE.parent
    if _is_aotc_checkout(checkout):
        return checkout
    raise AotcError(f"aotc's installation is incomplete: {installed} is missing (reinstall aotc)")


def _is_aotc_checkout(root: Path) -> bool:
    try:
        text = (root / "pyproject.toml").read_text()
    except OSError:
        return False
    return re.search(r'^\[project\][^\[]*^name\s*=\s*"aotc"', text, re.MULTILINE) is not None


def install_command(extra: str) -> str:
    """How to add a pip extra to this copy of aotc: in a source checkout (an editable install)
    `pip install -e '<checkout>[extra]'`, else `pip install 'aotc[extra]'`."""
    if not (_PACKAGE / "_data").is_dir() and _is_aotc_checkout(_PACKAGE.parent):
        return f"python3 -m pip install -e '{_PACKAGE.parent}[{extra}]'"
    return f"python3 -m pip install 'aotc[{extra}]'"


def runtime_dir() -> Path:
    return data_root() / "runtime_c"


def cmake_dir() -> Path:
    return data_root() / "cmake"


def kernels_dir() -> Path:
    """runtime_c/kernels/: a folder per kernel family (conv/, gemm/, ...) and common/ for what
    several share; its README.md and symbols.json sit at the top."""
    return runtime_dir() / "kernels"


@functools.cache
def kernel_dirs() -> tuple[Path, ...]:
    """The folders of runtime_c/kernels/ that hold kernel files: the include path of a build
    of them in this tree (a bundle ships the files it needs flat, in runtime/)."""
    return tuple(sorted(p for p in kernels_dir().iterdir() if p.is_dir()))


@functools.cache
def _kernel_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for d in kernel_dirs():
        for f in d.iterdir():
            if f.name in found:
                raise AotcError(f"runtime_c/kernels: {f.name} is in both {found[f.name].parent.name}/ and {d.name}/")
            found[f.name] = f
    return found


def kernel_file(name: str) -> Path:
    """The runtime_c/kernels/ file called `name`, whichever folder holds it: file names are unique
    across the folders (a bundle ships them flat), so a kernel's includes name no folder."""
    try:
        return _kernel_files()[name]
    except KeyError:
        raise FileNotFoundError(f"runtime_c/kernels has no file {name}") from None


def kernel_include_flags() -> list[str]:
    """-I flags for a compiler building runtime_c/kernels/ files in this tree."""
    return [f"-I{runtime_dir() / 'include'}", *(f"-I{d}" for d in kernel_dirs())]
