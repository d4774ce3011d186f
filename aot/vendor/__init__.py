"""Vendors are found, not listed: every backend, built-in or third-party, registers under the
`aotc.vendors` entry-point group (see pyproject.toml), so the core holds no list of names."""

from __future__ import annotations

from importlib.metadata import entry_points

from aot.errors import AotcError, VendorError
from aot.ir.vendor_ops import VendorOp
from aot.partition.layout import Layout
from aot.passes.base import Pass, run_passes_tracked
from aot.vendor.base import ACCEPT, Artifact, CodegenContext, Reject, Vendor, VendorOption, Verdict, check_vendor

GROUP = "aotc.vendors"


def available_vendors() -> list[str]:
    """The names of the installed vendors, built in or third-party (what `aotc --list-vendors` lists): those of
    the `aotc.vendors` entry points, not loaded."""
    return sorted({ep.name for ep in entry_points(group=GROUP)})


def find_vendor(name: str) -> Vendor:
    """The Vendor registered under `name`, loaded and checked (check_vendor), as `--vendor NAME` finds it; an
    unknown name, or an entry point that fails to load or gives no valid Vendor, is refused in one line
    (AotcError). A vendor's own tests get it this way to test what users will get."""
    matches = [ep for ep in entry_points(group=GROUP) if ep.name == name]
    if not matches:
        known = ", ".join(available_vendors()) or "none installed"
        raise AotcError(f"unknown vendor '{name}' (known: {known})")
    try:
        vendor = matches[0].load()
    except AotcError as e:  # e.g. Vendor(...) refused itself: no codegen
        raise AotcError(f"{e.one_line()} [entry point {name} = {matches[0].value}]") from e
    except Exception as e:
        raise AotcError(f"vendor '{name}' failed to load: {e}") from e
    check_vendor(vendor, name)
    return vendor


__all__ = ["ACCEPT", "Artifact", "CodegenContext", "Layout", "Pass", "Reject", "Vendor", "VendorError", "VendorOp",
           "VendorOption", "Verdict", "available_vendors", "check_vendor", "find_vendor", "run_passes_tracked"]
