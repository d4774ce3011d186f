"""The vendor API reference (docs/vendor-api.md) is generated from the code: the committed page must be current,
every public name a vendor imports must say what it is for, and the attribute table must cover the ops the
shipped vendors' checkers take."""

from __future__ import annotations

import importlib
from pathlib import Path

from aot.vendor_api_page import (
    API,
    NOTES,
    REGENERATE,
    attribute_rows,
    describe,
    markdown,
    undocumented,
    vendor_checked_ops,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "vendor-api.md"


def test_docs_vendor_api_page_is_current():
    assert DOCS.read_text() == markdown(), f"regenerate it: {REGENERATE}"


def test_every_name_aot_vendor_and_aot_ir_export_is_on_the_page_and_says_what_it_is_for():
    on_page = {id(getattr(importlib.import_module(m), n)) for s in API for m, n in s.items}
    for module in ("aot.vendor", "aot.ir", "aot.partition.pattern"):
        mod = importlib.import_module(module)
        for name in mod.__all__:
            assert describe(module, name), f"{module}.{name} has no docstring (or comment, for a constant)"
            assert id(getattr(mod, name)) in on_page, f"{module}.{name} is exported but not on the page (API)"


def test_every_field_method_and_property_on_the_page_is_documented():
    assert not undocumented(), f"say what each is for (a docstring, or a comment beside a field): {undocumented()}"


def test_the_attribute_table_covers_the_ops_the_shipped_vendors_check():
    seen = {r.node.split("(")[0] for _, rows in attribute_rows() for r in rows}
    missing = {op: vendors for op, vendors in vendor_checked_ops().items() if op not in seen}
    assert not missing, f"add a probe (aot/vendor_api_page.py, PROBES) for the ops a vendor checks: {missing}"
    assert {"Conv", "Gemm", "Softmax", "LayerNormalization", "Resize", "Attention"} <= seen


def test_each_note_names_an_attribute_the_import_gives():
    given = {(r.node.split("(")[0], r.attr) for _, rows in attribute_rows() for r in rows if r.type}
    assert not set(NOTES) - given, f"notes of attributes no probe's node has: {sorted(set(NOTES) - given)}"
    conv = next(rows for p, rows in attribute_rows() if p.op == "Conv")
    assert {r.attr: r.value for r in conv}["pads"] == "[0, 0, 0, 0]"
    assert {r.attr: r.status for r in conv}["auto_pad"] == "resolved"
