"""The files and folders a user names on the command line, checked before any work starts.

A compile can take minutes and a run under qemu longer: a typo in `-o` must not cost that, and
must not end in a traceback after the work is done. Each check raises an AotcError in one line.
"""

from __future__ import annotations

import os
from pathlib import Path

from aot.errors import AotcError

BUNDLE_MARK = Path("bundle") / "metadata.json"  # what makes a folder an aotc output


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _check_creatable(path: Path, what: str) -> None:
    """`path` does not exist: its nearest existing ancestor must be a folder we may write into."""
    base = _nearest_existing(path)
    if not base.is_dir():
        raise AotcError(f"{what} '{path}': '{base}' is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise AotcError(f"{what} '{path}': no permission to write in '{base}'")


def check_output_dir(out: Path, force: bool = False) -> None:
    """OUT of `aotc MODEL -o OUT`: new, empty, or an earlier aotc output (which is replaced).
    A folder holding other files is refused without --force: aotc would write beside them."""
    if not out.exists():
        _check_creatable(out, "-o")
        return
    if not out.is_dir():
        raise AotcError(f"-o '{out}' is a file; give a folder for the bundle and its build")
    if not os.access(out, os.W_OK | os.X_OK):
        raise AotcError(f"-o '{out}': no permission to write in it")
    if force or (out / BUNDLE_MARK).is_file():
        return
    others = sorted(p.name for p in out.iterdir())
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise AotcError(f"-o '{out}' is a folder aotc did not write (it holds {shown}); give a new or empty "
                        "folder, or add --force to write the bundle and build files beside them")


def check_output_file(path: Path, option: str) -> None:
    """A file aotc will write (`partition -o P.onnx`, `run --outputs O.npz`): its folder exists
    and is writable, and the path is not a folder."""
    if path.is_dir():
        raise AotcError(f"{option} '{path}' is a folder; give a file name")
    folder = path.absolute().parent
    if not folder.is_dir():
        raise AotcError(f"{option} '{path}': folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise AotcError(f"{option} '{path}': no permission to write it")


def check_input_file(path: Path, option: str) -> None:
    if not path.is_file():
        raise AotcError(f"{option} '{path}': " + ("is a folder, not a file" if path.is_dir() else "no such file"))
