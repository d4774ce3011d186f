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
