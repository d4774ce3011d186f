"""The vendor test kit: run the catalogue (aot/testing/cases.py) through one vendor and say, case by
case, whether the vendor claimed it and, if it did, whether its code computes what onnxruntime does.

A wrong claim is the failure that matters: a vendor that refuses an op costs speed, one that takes an
op and computes it wrongly breaks the user's model. So each case is partitioned for the vendor alone;
its functions show what the vendor took (and the refusals why it left the rest), all cases are built
into one shared library (the shared build of aot/testing/shared.py, the vendor's CMake lines included),
run, and compared.

    from aot.testing import run_kit
    report = run_kit("mine")                 # or a Vendor object
    print(report.summary())
    assert report.ok, report.summary()

`aotc vendor-test NAME` does the same from the command line (aot/testing/cli.py).
"""

from __future__ import annotations

import dataclasses
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aot.testing.cases import catalogue, select
from aot.testing.shared import Case, SharedBuild, assert_close, onnxruntime, reference, shared_build
from aot.vendor import Artifact, CodegenContext, Vendor, find_vendor

PASSED, FAILED, NOT_CLAIMED, BUILD_ERROR = "passed", "FAILED", "not claimed", "build error"


@dataclass
class CaseResult:
    """One case through the vendor: `status` is PASSED or FAILED (claimed), NOT_CLAIMED (`detail`: the
    vendor's refusal), or BUILD_ERROR (aotc or the C compiler stopped: `detail` says where)."""

    case: str  # the case's id
    ops: tuple[str, ...]  # the case's ONNX ops
    status: str  # PASSED, FAILED, NOT_CLAIMED or BUILD_ERROR
    claimed_ops: tuple[str, ...] = ()  # the ONNX ops the vendor's functions compute
    max_error: float | None = None  # the largest difference from the reference, over every output
    detail: str = ""  # the refusal, the failed comparison or the build error, in the kit's words

    @property
    def claimed(self) -> bool:
        """Whether the vendor took any of the case's nodes."""
        return bool(self.claimed_ops)


@dataclass
class Report:
    """Every case's result for one vendor; `ok` when no claimed case failed and every case built."""

    vendor: str  # the vendor's name
    results: list[CaseResult] = field(default_factory=list)  # one per case, in the catalogue's order
    every_region: bool = True  # the vendor's keep_region was set aside (one-node cases are worth offloading)
    seconds: float = 0.0  # the run's wall time

    def having(self, status: str) -> list[CaseResult]:
        """The results of that status (PASSED, FAILED, NOT_CLAIMED, BUILD_ERROR)."""
        return [r for r in self.results if r.status == status]

    @property
    def failed(self) -> list[CaseResult]:
        """The claimed cases whose results differ from the reference: the vendor's bugs."""
        return self.having(FAILED)

    @property
    def ok(self) -> bool:
        """Whether the vendor passes: no claimed case failed and every case built (what a CI asserts)."""
        return not self.having(FAILED) and not self.having(BUILD_ERROR)

    def claimed_ops(self) -> set[str]:
        """The ops the vendor took in at least one case."""
        return {op for r in self.results for op in r.claimed_ops}

    def by_op(self) -> dict[str, dict[str, int]]:
        """Per op: the cases holding it, those where the vendor took it, and how many of those passed."""
        table: dict[str, dict[str, int]] = {}
        for r in self.results:
            for op in r.ops:
                row = table.setdefault(op, {"cases": 0, "claimed": 0, "passed": 0, "failed": 0})
                row["cases"] += 1
                if op in r.claimed_ops:
                    row["claimed"] += 1
                    row["passed"] += r.status == PASSED
                    row["failed"] += r.status in (FAILED, BUILD_ERROR)
        return dict(sorted(table.items()))

    def counts(self) -> str:
        """The tally in one line: cases, claimed, passed, failed, not claimed, build errors."""
        claimed = [r for r in self.results if r.claimed]
        return (f"{len(self.results)} cases, {len(claimed)} claimed ({len(self.having(PASSED))} passed, "
                f"{len(self.having(FAILED))} FAILED), {len(self.having(NOT_CLAIMED))} not claimed, "
                f"{len(self.having(BUILD_ERROR))} build errors")

    def summary(self, verbose: bool = False) -> str:
        """The counts, each failure and build error, and a line per op (`verbose`: every case too)."""
        lines = [f"vendor-test {self.vendor}: {self.counts()} in {self.seconds:.1f} s"
                 + ("" if self.every_region else " (with the vendor's keep_region)")]
        shown = self.results if verbose else [r for r in self.results if r.status in (FAILED, BUILD_ERROR)]
        for r in shown:
            ops = ",".join(r.claimed_ops or r.ops)
            err = f" (max error {r.max_error:.3g})" if r.max_error is not None else ""
            lines.append(f"  {r.status:<12} {r.case} [{ops}]{err}{': ' + r.detail if r.detail else ''}")
        lines.append("  per op (cases: claimed, failed):")
        for op, row in self.by_op().items():
            failed = f", {row['failed']} FAILED" if row["failed"] else ""
            lines.append(f"    {op:<20} {row['cases']:>3}: {row['claimed']:>3} claimed{failed}")
        return "\n".join(lines) + "\n"

    def write_junit(self, path: Path | str) -> None:
        """JUnit XML, a test case per case (not claimed: skipped), for a CI's test report."""
        suite = ET.Element("testsuite", name=f"aotc.vendor-test.{self.vendor}", tests=str(len(self.results)),
                           failures=str(len(self.having(FAILED))), errors=str(len(self.having(BUILD_ERROR))),
                           skipped=str(len(self.having(NOT_CLAIMED))), time=f"{self.seconds:.3f}")
        for r in self.results:
            tc = ET.SubElement(suite, "testcase", classname=f"vendor-test.{self.vendor}", name=r.case)
            kind = {FAILED: "failure", BUILD_ERROR: "error", NOT_CLAIMED: "skipped"}.get(r.status)
            if kind:
                ET.SubElement(tc, kind, message=r.detail.splitlines()[0] if r.detail else r.status).text = r.detail
            ET.SubElement(tc, "system-out").text = (f"ops: {','.join(r.ops)}; claimed: {','.join(r.claimed_ops)}"
                                                     + (f"; max error {r.max_error:.6g}" if r.max_error is not None
                                                        else ""))
        root = ET.Element("testsuites")
        root.append(suite)
        ET.indent(root)
        Path(path).write_text(ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")


def run_kit(vendor: Vendor | str, cases: Sequence[Case] | None = None, *, ops: Iterable[str] | None = None,
                 every_region: bool = True, vendor_options: Sequence[tuple[str, str]] = (),
                 workdir: Path | None = None, include_dirs: Sequence[Path] = (), libs: Sequence[str] = (),
                 extra_flags: Sequence[str] = ()) -> Report:
    """Run `cases` (default: the catalogue; `ops`: only those made of these ops) through `vendor` (a
    Vendor, or the name it is installed under). `every_region`: set the vendor's keep_region aside, so a
    one-node case it takes is offloaded even when the vendor would leave so small a region to the host
    (what it computes is under test, not whether the region pays). `vendor_options`: (KEY, VALUE) pairs,
    as --vendor-opt gives them. The library builds with the vendor's CMake lines (Artifact.cmake), or,
    for a vendor without, with `include_dirs`, `libs` and `extra_flags`."""
    start = time.monotonic()
    onnxruntime()  # the reference: refused in one line before any work when it is missing
    base = find_vendor(vendor) if isinstance(vendor, str) else vendor
    cmake: dict[str, None] = {}

    def codegen(fn: object, ctx: CodegenContext) -> Artifact:  # the vendor's, noting its CMake lines
        art = base.codegen(fn, ctx)
        if art.cmake:
            cmake[art.cmake] = None
        return art

    changes: dict = {"codegen": codegen, **({"keep_region": None} if every_region else {})}
    under_test = dataclasses.replace(base, **changes)
    opts = tuple((base.name, k, v) for k, v in vendor_options)
    chosen = select(catalogue() if cases is None else cases, ops)
    kit_cases = [dataclasses.replace(c, vendors=(under_test,), vendor_options=opts) for c in chosen]
    build = shared_build(kit_cases, workdir, vendor_include_dirs=tuple(map(Path, include_dirs)), libs=tuple(libs),
                         extra_flags=tuple(extra_flags), vendor_cmake=lambda: list(cmake), sample=lambda _: True,
                         isolate=True, only=lambda case, partition: bool(_claimed_ops(case, partition, base.name)))
    results = [_result(build, c, base.name) for c in kit_cases]
    return Report(base.name, results, every_region, time.monotonic() - start)


def _claimed_ops(case: Case, partition: dict | None, vendor: str) -> tuple[str, ...]:
    """The ONNX ops of the case's nodes inside the vendor's functions."""
    if not partition:
        return ()
    op_of = {n.name: n.op_type for n in case.model.graph.node}
    nodes = [s for f in partition["functions"].values() if f["vendor"] == vendor for s in f["nodes"]]
    claimed = {op_of[s] for s in nodes if s in op_of}
    if nodes and not claimed:  # nodes the front end made: the case's ops, as the nearest answer
        claimed = set(case.ops)
    return tuple(op for op in case.ops if op in claimed)


def _refusal(partition: dict | None, vendor: str) -> str:
    if not partition:
        return ""
    reasons = [why[vendor] for why in partition["refusals"].values() if vendor in why]
    return "; ".join(dict.fromkeys(reasons)) or "no node offered to it"


def _max_error(ours: list[np.ndarray], refs: list[np.ndarray]) -> float | None:
    errs = []
    for o, r in zip(ours, refs, strict=False):
        r = np.asarray(r)
        if o.shape != r.shape or r.size == 0:
            continue
        a, b = o.astype(np.float64), r.astype(np.float64)
        finite = np.isfinite(a) & np.isfinite(b)
        errs.append(float(np.max(np.abs(a[finite] - b[finite]), initial=0.0)))
    return max(errs) if errs else None


def _result(build: SharedBuild, case: Case, vendor: str) -> CaseResult:
    partition = build.partitions.get(case.id)
    claimed = _claimed_ops(case, partition, vendor)
    if case.id in build.errors:
        e = build.errors[case.id]
        return CaseResult(case.id, case.ops, BUILD_ERROR, claimed, detail=f"{type(e).__name__}: {e}".strip())
    if not claimed:
        return CaseResult(case.id, case.ops, NOT_CLAIMED, detail=_refusal(partition, vendor))
    try:
        ours = build.run(case.id)
    except AssertionError as e:  # the bundle's run returned an error code
        return CaseResult(case.id, case.ops, FAILED, claimed, detail=str(e))
    refs = reference(case)
    err = _max_error(ours, refs)
    try:
        for k, (o, r) in enumerate(zip(ours, refs, strict=True)):
            assert_close(o, r, f"output {k}", case.atol_scale, case.relative, case.lsb)
    except (AssertionError, ValueError) as e:
        return CaseResult(case.id, case.ops, FAILED, claimed, err, str(e))
    return CaseResult(case.id, case.ops, PASSED, claimed, err)
