"""The one rule for C identifiers, comments and strings made from ONNX names (aot/csource/names.py)."""

from __future__ import annotations

import re
import subprocess

import pytest

from aot.csource.names import RESERVED, CNames, c_comment, c_ident, c_string, is_reserved, is_safe_ident
from aot.frontend import sanitize

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@pytest.mark.parametrize("name", ["NULL", "int", "static", "restrict", "EOF", "SIZE_MAX", "errno", "stdin", "class",
                                  "_Bool", "__x", "_X", "3x", "", "a*/b", "line\nbreak", 'q"', "é", "I", "E2BIG",
                                  "aotc_run", "DLTensor", "kDLCPU", "bool", "true", "x" * 500])
def test_identifier_is_valid_and_never_reserved(name):
    for prefix in ("", "t_", "w_"):
        ident = c_ident(name, prefix)
        assert IDENT.fullmatch(ident) and not is_reserved(ident) and is_safe_ident(ident), (name, ident)
        assert len(ident) <= 66


def test_ordinary_names_keep_their_spelling():
    assert c_ident("conv1_out") == "conv1_out"
    assert c_ident("conv1.weight", "w_") == "w_conv1_weight"
    assert c_ident("input") == "input"  # only names that could clash are escaped
    assert c_ident("int") == "v_int" and c_ident("NULL") == "v_NULL"
    assert {"int", "errno", "NULL"} <= RESERVED | {"NULL"}


def test_long_names_stay_distinct():
    a, b = "x" * 100 + "a", "x" * 100 + "b"
    assert c_ident(a) != c_ident(b) and len(c_ident(a)) == 64


def test_scope_makes_identifiers_unique_and_stable():
    names = CNames(prefixes=("model_",))
    a = names.name(("t", "x.y"), "x.y", "t_")
    b = names.name(("t", "x_y"), "x_y", "t_")
    assert (a, b) == ("t_x_y", "t_x_y_1")
    assert names.name(("t", "x.y"), "ignored") == a
    assert names.fresh("run", "model_").startswith("v_model_")  # the bundle's own names are not taken
    fields = CNames(fold_case=True)
    assert [fields.name(n, n) for n in ("ab", "Ab", "aB")] == ["ab", "Ab_1", "aB_2"]


@pytest.mark.parametrize("text", ["a*/b", "/*", "*//*", "/*/", "line\nbreak\r\n", "\u2028\u2029\x85\x0b\x0c",
                                  "\x00\x01", "\udcff", "ok é"])
def test_comment_text_neither_ends_nests_nor_breaks_lines(text):
    c = c_comment(text)
    assert "*/" not in c and "/*" not in c
    assert len(f"/* {c} */".splitlines()) == 1
    c.encode("utf-8")  # writable


def test_string_literal_compiles_to_the_same_bytes(tmp_path):
    text = 'a"b\\c?%s\n\t??/é'
    src = tmp_path / "s.c"
    src.write_text(f'#include <stdio.h>\nint main(void) {{ fputs({c_string(text)}, stdout); return 0; }}\n')
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-o", str(tmp_path / "s"), str(src)], check=True)
    assert subprocess.run([str(tmp_path / "s")], capture_output=True).stdout == text.encode()


@pytest.mark.parametrize("name", ["int", "main", "test", "all", "aotc_common", "dltensor", "9lives", "m", "x" * 300,
                                  "NULL", "errno"])
def test_model_name_is_a_safe_prefix_and_file_name(name):
    s = sanitize(name)
    assert IDENT.fullmatch(s) and s == s.lower() and len(s) <= 54
    assert is_safe_ident(s) and not s.startswith(("aotc", "dltensor")) and s not in ("main", "test", "all", "m")
