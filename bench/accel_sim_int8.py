"""accel_sim's cycle report for the zoo's int8 models against their float32 versions.

    python bench/accel_sim_int8.py [--models lenet resnet mobilenetv2] [--spm 65536]

Each model is quantized by onnxruntime's quantize_static (examples/quantize.py; QDQ with int8
activations and QOperator with uint8), partitioned for accel_sim and lowered; the numbers come
from the device's cost model (data-independent, the same the C simulator counts): simulated
cycles, MAC utilisation (useful MACs over the run's peak: R x C per cycle for float32 work,
4 x R x C for 8-bit), DMA bytes, scratchpad peak and program size, summed over the model's
accel_sim functions. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import zoo  # noqa: E402
from quantize import quantized  # noqa: E402

from aot.compiler import Options, codegen_functions, partition_model  # noqa: E402
from aot.vendor.accel_sim import DeviceConfig, make_vendor  # noqa: E402


def report(model, name: str, cfg: DeviceConfig) -> dict[str, float]:
    parted = partition_model(model, Options(name=name, vendors=(make_vendor(cfg),)))
    reps = [a.report for a in codegen_functions(parted.graph, "host", parted.vendors).values()]
    cycles = sum(r["cycles"] for r in reps)
    busy = sum(r["mac_utilisation"] * r["cycles"] for r in reps)  # each function's share, weighted
    host = sorted({n.op for n in parted.graph.nodes if n.op != "Call"})
    return {"functions": len(reps), "cycles": cycles, "mac_utilisation": busy / cycles if cycles else 0.0,
            "macs": sum(r["macs"] for r in reps), "dma_bytes": sum(r["dma_bytes"] for r in reps),
            "spm_peak_bytes": max(r["spm_peak_bytes"] for r in reps),
            "program_bytes": sum(r["program_bytes"] for r in reps), "host": ", ".join(host) or "-"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["lenet", "resnet", "mobilenetv2"])
    ap.add_argument("--spm", type=int, default=64 * 1024)
    args = ap.parse_args()
    cfg = DeviceConfig(spm_bytes=args.spm)
    print(f"accel_sim: {cfg.spm_bytes // 1024} KiB scratchpad, {cfg.mac_rows}x{cfg.mac_cols} fp32 / "
          f"{2 * cfg.mac_rows}x{2 * cfg.mac_cols} int8 MAC array, {cfg.dma_bytes_per_cycle} B/cycle DMA\n")
    print("| model | form | functions | cycles | vs fp32 | MAC util. | MACs | DMA bytes | SPM peak | program B "
          "| on the host |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in args.models:
        fp32 = zoo.build(name)
        rows = [("fp32", report(fp32, name, cfg))]
        for fmt, act in (("QDQ", "int8"), ("QOperator", "uint8")):
            rows.append((f"{fmt} {act}", report(quantized(fp32, fmt, activations=act), name, cfg)))
        base = rows[0][1]["cycles"]
        for form, r in rows:
            print(f"| {name} | {form} | {r['functions']} | {r['cycles']:,} | {base / r['cycles']:.2f}x | "
                  f"{r['mac_utilisation']:.1%} | {r['macs']:,} | {r['dma_bytes']:,} | {r['spm_peak_bytes']:,} | "
                  f"{r['program_bytes']:,} | {r['host']} |")


if __name__ == "__main__":
    main()
