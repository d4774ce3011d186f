"""The tests' own layout (issue 49): a folder per stage or subject, each named with its purpose in
tests/README.md, so a new test lands beside the tests of what it tests instead of in a flat tests/."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _listed() -> dict[str, str]:
    """tests/README.md's folder list: folder -> its one line."""
    text = (TESTS / "README.md").read_text()
    section = text.split("## Folders", 1)[1].split("\n## ", 1)[0]
    return {m[1]: m[2] for m in re.finditer(r"^- `([a-z0-9_]+)/`: (.+)$", section, re.M)}


def _folders() -> list[Path]:
    return sorted(p for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


def test_no_test_module_directly_in_tests():
    flat = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert not flat, f"{flat} sit directly in tests/: put each into the folder of the stage it tests (tests/README.md)"


def test_every_folder_says_what_it_holds():
    listed = _listed()
    folders = {p.name for p in _folders()}
    assert folders - listed.keys() == set(), "folders without their line in tests/README.md's folder list"
    assert listed.keys() - folders == set(), "tests/README.md lists folders that do not exist"


def test_test_modules_sit_one_folder_deep():
    """pytest imports a test module by its file name with its folder on sys.path (no __init__.py): one
    level of folders, and no two modules of one name."""
    modules = sorted(TESTS.rglob("test_*.py"))
    deep = [str(p.relative_to(TESTS)) for p in modules if len(p.relative_to(TESTS).parts) > 2]
    assert not deep, f"test modules deeper than one folder: {deep}"
    twice = [name for name, n in Counter(p.name for p in modules).items() if n > 1]
    assert not twice, f"test modules of the same name in two folders: {twice}"
