"""`aotc vendor-test NAME`: the vendor test kit (aot/testing/kit.py) from the command line, so a vendor
package is checked without writing Python: exit 0 when every case the vendor claimed matches onnxruntime,
1 when one does not (or a case does not build), 2 for a bad argument (an unknown vendor, op or option)."""

from __future__ import annotations

import argparse
from pathlib import Path

from aot.errors import AotcError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aotc vendor-test",
        description="Run aotc's catalogue of op cases (Conv, Gemm, pooling, activations, int8, fused chains ...) "
        "through one vendor: each case is partitioned for it, every case is built into one shared library and "
        "compared with onnxruntime. Says per case whether the vendor claimed it and, if so, whether it passed; "
        "exit 1 if a claimed case failed or a case did not build.")
    p.add_argument("vendor", help="the vendor, by the name it is installed under (as --vendor takes it)")
    p.add_argument("--ops", metavar="OP,OP", help="only the cases made of these ops (e.g. Conv,Relu: the Conv cases, "
                   "the Relu cases and Conv+Relu)")
    p.add_argument("--list", action="store_true", help="list the cases (with --ops, those chosen) and build nothing")
    p.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML (not claimed: skipped)")
    p.add_argument("--vendor-opt", metavar="KEY=VALUE", action="append", default=[],
                   help="an option of the vendor, as `aotc --vendor-opt V.KEY=VALUE` takes it (V. may be left out)")
    p.add_argument("--keep-regions", action="store_true",
                   help="let the vendor send regions it finds too small back to the host (its keep_region), as "
                   "a compile does; by default every case it takes is offloaded, one-node cases included")
    p.add_argument("-I", dest="include_dirs", metavar="DIR", action="append", default=[],
                   help="a folder of headers the vendor's C needs (when its codegen gives no CMake lines that "
                   "find them)")
    p.add_argument("-L", dest="lib_dirs", metavar="DIR", action="append", default=[],
                   help="a folder of libraries to link from (also the run's search path)")
    p.add_argument("-l", dest="libs", metavar="NAME", action="append", default=[], help="a library to link")
    p.add_argument("--work", metavar="DIR", help="build in DIR and keep it (default: a temporary folder)")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per case, not only the failures")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _vendor_options(vendor: str, given: list[str]) -> list[tuple[str, str]]:
    out = []
    for text in given:
        key, sep, value = text.partition("=")
        key = key.removeprefix(f"{vendor}.")
        if not sep or not key or "." in key:
            raise AotcError(f"--vendor-opt takes KEY=VALUE (or {vendor}.KEY=VALUE), not '{text}'")
        out.append((key, value))
    return out


def vendor_test(argv: list[str]) -> int:
    """The command: its exit status."""
    from aot.progress import status
    from aot.testing.cases import catalogue, catalogue_ops, select
    from aot.testing.kit import run_kit
    from aot.vendor import find_vendor

    args = parser().parse_args(argv)
    ops = None
    if args.ops:
        ops = [op.strip() for op in args.ops.split(",") if op.strip()]
        unknown = sorted(set(ops) - set(catalogue_ops()))
        if unknown:
            raise AotcError(f"--ops: no case holds {', '.join(unknown)} (the catalogue's ops: "
                            f"{', '.join(catalogue_ops())})")
    cases = select(catalogue(), ops)
    if args.list:
        for c in cases:
            print(f"{c.id:<36} {','.join(c.ops)}")
        return 0
    if not cases:
        raise AotcError(f"--ops {args.ops}: no case is made of these ops alone (add the ops they chain with)")
    vendor = find_vendor(args.vendor)  # an unknown vendor is refused before any work
    options = _vendor_options(vendor.name, args.vendor_opt)
    vendor.resolve_options(dict(options))
    work = Path(args.work) if args.work else None
    libs = [f for d in args.lib_dirs for f in (f"-L{d}", f"-Wl,-rpath,{d}")] + [f"-l{n}" for n in args.libs]
    with status(f"building and running {len(cases)} cases through {vendor.name}"):
        report = run_kit(vendor, cases, every_region=not args.keep_regions, vendor_options=options,
                              workdir=work, include_dirs=[Path(d) for d in args.include_dirs], libs=libs)
    print(report.summary(verbose=args.verbose), end="")
    if args.junit:
        report.write_junit(args.junit)
        print(f"aotc: wrote {args.junit}")
    return 0 if report.ok else 1
