"""Where aotc's own files are: the C runtime and the CMake target files."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    # A source checkout (pip install -e) keeps them beside aot/; a wheel ships them inside it.
    for candidate in (_HERE.parent / name, _HERE / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"aotc installation is incomplete: no {name}/ directory")


def runtime_dir() -> Path:
    return _find("runtime_c")


def cmake_dir() -> Path:
    return _find("cmake")
