"""accel_sim's two goals (issue 20): cycles and energy of each function under goal=latency and
goal=energy, which of its passes fired, and how far the energy program's outputs are from the
latency program's (which is the program aotc made before the goals existed, byte for byte).

    python bench/accel_sim_goals.py [--models lenet resnet mobilenetv2] [--int8]

The numbers are the device's cost model (data-independent; the C simulator counts the same
cycles); outputs come from running both programs on the numpy model of the device with the
same random inputs (zoo.random_inputs). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import zoo  # noqa: E402

from aot.compiler import Options, codegen_functions, partition_model  # noqa: E402
from aot.ir import Function  # noqa: E402
from aot.vendor.accel_sim import DeviceConfig, refmodel  # noqa: E402
from aot.vendor.accel_sim.lower import lower_function  # noqa: E402


def functions(model, name: str, goal: str) -> dict[str, tuple[Function, dict]]:
    parted = partition_model(model, Options(name=name, vendors=("accel_sim",),
                                            vendor_options=(("accel_sim", "goal", goal),)))
    arts = codegen_functions(parted.graph, "host", parted.vendors, parted.options)
    return {s: (parted.graph.functions[s], a.report) for s, a in arts.items()}


def run(fn: Function, rng: np.random.Generator) -> list[np.ndarray]:
    """The program on the numpy device model, inputs drawn from `rng` (the same seed for both goals)."""
    low = lower_function(fn, DeviceConfig())
    g = fn.graph
    ins = []
    for t in g.inputs:
        ten = g.tensors[t]
        if ten.dtype == "float32":
            ins.append(rng.standard_normal(ten.shape).astype(np.float32))
        else:
            ins.append(rng.integers(-128 if ten.dtype == "int8" else 0, 128 if ten.dtype == "int8" else 256,
                                    ten.shape).astype(ten.dtype))
    outs = [np.zeros(g.tensors[t].shape, g.tensors[t].dtype) for t in g.outputs]
    bound = ins + outs + ([np.zeros(low.scratch_bytes, np.uint8)] if low.scratch_bytes else [])
    refmodel.execute(low.blob, bound)
    return outs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["lenet", "resnet", "mobilenetv2"])
    ap.add_argument("--int8", action="store_true", help="the models quantized (QDQ int8, examples/quantize.py)")
    args = ap.parse_args()
    print("| model | function | goal | cycles | energy (uJ) | DMA bytes | passes | max abs diff vs latency |")
    print("|---|---|---|---:|---:|---:|---|---:|")
    for name in args.models:
        model = zoo.build(name)
        if args.int8:
            from quantize import quantized
            model = quantized(model, "QDQ")
        lat, en = functions(model, name, "latency"), functions(model, name, "energy")
        for sym in lat:
            a = run(lat[sym][0], np.random.default_rng(1))
            b = run(en[sym][0], np.random.default_rng(1))
            diff = max(float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))) for x, y in zip(a, b,
                                                                                                          strict=True))
            for goal, (_, r) in (("latency", lat[sym]), ("energy", en[sym])):
                print(f"| {name} | {sym} | {goal} | {r['cycles']:,} | {r['energy_nj'] / 1000:.2f} | "
                      f"{r['dma_bytes']:,} | {r['passes'].replace('accel_sim.', '')} | "
                      f"{'-' if goal == 'latency' else f'{diff:.2g}'} |", flush=True)


if __name__ == "__main__":
    main()
