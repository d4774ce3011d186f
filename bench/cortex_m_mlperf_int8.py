"""Issue 27 item 4: the four MLPerf Tiny networks as full-int8 models on the Cortex-M boards, against
TFLM with CMSIS-NN: instructions per inference under qemu at -O3, -O2 and -Os.

    python bench/cortex_m_mlperf_int8.py [--models kws_dscnn ... ic02_resnet_large] [--forms tflite tflite-ww onnx ...]
                                         [--configs an386:O3 an386:O2 an386:Os an505:O3 an500:O3 an547:O3]
                                         [--keep DIR] [--json FILE] [--record] [--profile] [--m4-cycles-tool]

The models are bench/keras_mlperf_int8.py's: NAME_int8.tflite (TFLiteConverter full-int8) and
NAME_int8.onnx (quantize_static QDQ of the folded fp32 ONNX), whose graph input and output are float;
form onnx-qio compiles that .onnx with --quantized-io (int8 input and output, as the .tflite has), fed
the onnx form's float inputs quantized with the metadata's scale and zero point, its int8 outputs
compared with the integers of onnxruntime's last QuantizeLinear; form tflite-ww compiles the .tflite
with --widened-weights (the conv weights also stored widened for SMLAD: flash for cycles). Each is
compiled for the board at each level (CMake's Release = -O3, RelWithDebInfo = -O2, MinSizeRel = -Os,
`aotc --build-type`) and one inference is counted as `aotc bench` does: (count(3 runs) - count(1 run)) / 2
with aotc's qemu plugin, which also estimates the cycles of the board's core (aot.bench.CYCLE_MODELS: the M4 of
an386, the M33 of an505, the M7 of an500, the M55 of an547; docs/firmware.md, "How the cycles are estimated"; "-" on
the M3). IC02 (MLPerf Tiny v1.4's wider ResNet, ../shared/models, .tflite only) is measured as the four are. The
outputs of the
board's run are compared on the same seeded inputs with onnxruntime (.onnx; identical is the
target) or LiteRT's reference kernels (.tflite, BUILTIN_REF, which TFLM matches bit for bit), as
the share of identical elements and the largest LSB difference. --m4-cycles-tool also counts each M4 build's
cycles with the separate m4-cycles qemu plugin (../shared/tools/m4-cycles, which the project's first M4 cycle
figures came from), the same (3 - 1) / 2 way: the estimate of aotc's plugin checked against it.

TFLM cannot be built here: the anchors are issue 27's published TFLM + CMSIS-NN figures on the M4
(arm-none-eabi-gcc 12.2, TFLM's own levels): instructions and tensor arena per model. The targets
are 0.7x TFLM's instructions and 0.9x its arena.

Prints a markdown table: per model, form and board/level, the instructions (millions), per MAC, the
core's estimated cycles (millions) and per MAC, the ratio to TFLM's instructions, the arena against
TFLM's, the image's code bytes (its functions) and .text; then per core the estimate against the best published
MLPerf Tiny figure for that core (issue 68's table: cycles = latency x clock; on the M55, the M85's cycles per MAC;
IC02 against 0.8x the core's best IC01 rate). --record adds the rows to
bench/results/cortex_m_mlperf_int8.json, which docs/firmware.md's tables are rendered from (bench/docs_tables.py).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]

import record  # noqa: E402
from quantcheck import output_lsb  # noqa: E402

from aot.bench import board_counts, format_board_profile, graph_macs, insn_count_plugin, tflite_macs  # noqa: E402
from aot.build import RUN_TIMEOUT_S, build, runner_command, runner_path  # noqa: E402
from aot.footprint import parse_elf  # noqa: E402
from aot.npz import bundle_outputs, onnx_feeds, quantize_io  # noqa: E402
from aot.targets import bundle_target  # noqa: E402

MODELS_DIR = ROOT / "bench" / "models" / "keras"
# issue 27: TFLM + CMSIS-NN on mps2-an386 (instructions per inference, tensor arena bytes)
TFLM = {"kws_dscnn": (7.70e6, 22.8e3), "ic_resnet8": (29.9e6, 55.0e3), "vww_mobilenet": (24.1e6, 100.6e3),
        "ad_autoencoder": (0.60e6, 16.0e3)}
TARGET_INSN, TARGET_ARENA = 0.7, 0.9
# published M4 cycles per inference to set the estimate beside (not the same measure: real boards, from flash
# with wait states): X-CUBE-AI 10.2 on a NUCLEO-L4R5ZI (KWS, IC, VWW), Plumerai's inference engine (AD)
PUBLISHED_M4_CYCLES = {"kws_dscnn": (5.21e6, "X-CUBE-AI 10.2"), "ic_resnet8": (19.88e6, "X-CUBE-AI 10.2"),
                       "vww_mobilenet": (10.73e6, "X-CUBE-AI 10.2"), "ad_autoencoder": (0.486e6, "Plumerai")}
# issue 68: the best published MLPerf Tiny closed-division cycles per core (tiny_results v1.2/v1.3, latency x
# clock): the M33 (NUCLEO-U575ZI / U385RG) and the M7 (NUCLEO-H7A3ZI) per inference; the M55, which has none, against
# the M85 + Helium's (EK-RA8D1, TFLM + CMSIS-NN) cycles per MAC
PUBLISHED = {"an386": {m: (c, sw) for m, (c, sw) in PUBLISHED_M4_CYCLES.items()},
             "an505": {"kws_dscnn": (4.64e6, "X-CUBE-AI 10.2"), "vww_mobilenet": (9.48e6, "X-CUBE-AI 10.2"),
                       "ic_resnet8": (16.69e6, "Plumerai"), "ad_autoencoder": (0.495e6, "Bosch HALE")},
             "an500": {"kws_dscnn": (3.17e6, "X-CUBE-AI 9.0"), "vww_mobilenet": (6.67e6, "X-CUBE-AI 9.0"),
                       "ic_resnet8": (11.44e6, "X-CUBE-AI 9.0"), "ad_autoencoder": (0.303e6, "Bosch HALE")}}
PUBLISHED_M85_PER_MAC = {"kws_dscnn": 0.63, "vww_mobilenet": 0.86, "ic_resnet8": 0.33, "ad_autoencoder": 0.96}
IC02 = "ic02_resnet_large"  # no published result: the target is 0.8x the core's best IC01 rate
IC02_FILE = ROOT.parent / "shared" / "models" / "mlperf_tiny_ic02_resnet_large_int8.tflite"
BOARDS = {"an386": "mps2-an386", "an505": "mps2-an505", "an500": "mps2-an500", "an547": "mps3-an547",
          "an385": "mps2-an385"}
LEVELS = {"O3": "Release", "O2": "RelWithDebInfo", "Os": "MinSizeRel"}
M4_CYCLES_TOOL = ROOT.parent / "shared" / "tools" / "m4-cycles" / "cyclecount.c"


def inputs_for(meta: dict, seed: int = 0) -> list[np.ndarray]:
    """Seeded inputs: standard normal for float inputs, and quantized with the input's scale and zero
    point for --quantized-io ones (the same values as the float form's); uniform over the range for
    other int8 ones."""
    rng = np.random.default_rng(seed)
    out = []
    for s in meta["inputs"]:
        if s["dtype"] == "int8" and "scale" in s and meta.get("quantized_io"):
            out.append(quantize_io(s, rng.standard_normal(s["shape"]).astype(np.float32)))
        elif s["dtype"] == "int8":
            out.append(rng.integers(-128, 128, s["shape"]).astype(np.int8))
        else:
            out.append(rng.standard_normal(s["shape"]).astype(s["dtype"]))
    return out


def references(model: Path, meta: dict, inputs: list[np.ndarray], work: Path) -> list[np.ndarray]:
    """onnxruntime's outputs (.onnx), or LiteRT's reference kernels' (.tflite), in the bundle's order."""
    if model.suffix == ".onnx":
        import onnxruntime as ort

        sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        names = [s["name"] for s in meta["outputs"]]
        floats = {i.name for i in sess.get_inputs() if i.type == "tensor(float)"}
        got = bundle_outputs(meta, dict(zip(names, sess.run(names, onnx_feeds(meta, inputs, floats)), strict=True)))
        return [got[n] for n in names]  # --quantized-io: the integers before the output's DequantizeLinear
    np.savez(work / "ref_in.npz", **{f"input_{k}": x for k, x in enumerate(inputs)})
    subprocess.run([sys.executable, str(ROOT / "tests" / "tflite_reference.py"), str(model),
                    str(work / "ref_in.npz"), str(work / "ref_out.npz")], check=True, capture_output=True)
    got = np.load(work / "ref_out.npz")
    return [got[f"output_{k}"] for k in range(len(meta["outputs"]))]


def m4_cycles_tool(work: Path) -> Path:
    """The m4-cycles plugin, built into `work` with the host's cc (it needs no qemu headers)."""
    so = work / "libcyclecount.so"
    if not so.is_file():
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(M4_CYCLES_TOOL)], check=True)
    return so


def tool_counts(out: Path, meta: dict, inputs: list[np.ndarray], tool: Path) -> tuple[int, int]:
    """One inference's instructions and cycles by the m4-cycles plugin: (count(3 runs) - count(1 run)) / 2, as
    aot.bench.board_counts takes aotc's own."""
    runner = runner_path(out, meta).resolve()
    counts = []
    with tempfile.TemporaryDirectory(prefix="aotc-m4cycles-") as tmp:
        (Path(tmp) / "inputs.bin").write_bytes(b"".join(np.asarray(x, order="C").tobytes() for x in inputs))
        for repeat in (1, 3):
            cmd = runner_command(bundle_target(meta), runner, ["inputs.bin", "outputs.bin", str(repeat)])
            k = cmd.index("-kernel")
            cmd[k:k] = ["-plugin", f"{tool},arg=out={tmp}/counts.txt"]
            subprocess.run(cmd, cwd=tmp, check=True, capture_output=True, timeout=RUN_TIMEOUT_S)
            text = (Path(tmp) / "counts.txt").read_text()
            counts.append(tuple(int(v) for v in re.findall(r"(?:insns|cycles)=(\d+)", text)[:2]))
    (i1, c1), (i3, c3) = counts
    return (i3 - i1) // 2, (c3 - c1) // 2


def measure(model: Path, board: str, level: str, work: Path, profile: bool, qio: bool = False,
            widened: bool = False, tool: Path | None = None) -> dict:
    out = work / f"{model.stem}_{model.suffix[1:]}{'_qio' if qio else ''}{'_ww' if widened else ''}_{board}_{level}"
    subprocess.run([sys.executable, "-m", "aot.cli", str(model), "-o", str(out), "--target", BOARDS[board], "--force",
                    "--build-type", LEVELS[level], *(["--quantized-io"] if qio else []),
                    *(["--widened-weights"] if widened else [])],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    build(out)
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    inputs = inputs_for(meta)
    per_function: dict[str, int] | None = {} if profile else None
    cycle_profile: dict[str, int] | None = {} if profile else None
    outputs: dict = {}
    count, cycles = board_counts(out, meta, inputs, insn_count_plugin(work), per_function, cycle_profile,
                                 outputs=outputs)
    tool_insns, tool_cycles = tool_counts(out, meta, inputs, tool) if tool and board == "an386" else (None, None)
    refs = references(model, meta, inputs, work)
    # float outputs (a DequantizeLinear's) in LSB of its scale; integer outputs as they are
    steps = output_lsb(onnx.load(str(model))) if model.suffix == ".onnx" else [None] * len(refs)
    same = total = 0
    lsb = 0.0
    for s, r, step in zip(meta["outputs"], refs, steps, strict=True):
        got = outputs[s["name"]].astype(np.float64).reshape(-1)
        want = np.asarray(r).astype(np.float64).reshape(-1)
        diff = np.abs(got - want) / (step if s["dtype"].startswith("float") and step else 1.0)
        same, total = same + int(np.sum(diff == 0)), total + got.size
        lsb = max(lsb, float(np.max(diff, initial=0)))
    elf = parse_elf(runner_path(out, meta).read_bytes())
    return {"instructions": count, "cycles": cycles, "arena": meta["memory"]["arena_bytes"],
            "identical": same / max(total, 1),
            "max_lsb": lsb, "text": elf.sizes()["text"], "code": sum(f.size for f in elf.functions),
            "weights": meta["memory"]["weights_bytes"], "profile": per_function,
            "cycle_profile": cycle_profile or None,
            **({"tool_instructions": tool_insns, "tool_cycles": tool_cycles} if tool_cycles is not None else {})}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", default=list(TFLM), choices=[*TFLM, IC02])
    p.add_argument("--forms", nargs="*", default=["tflite", "onnx"],
                   choices=["tflite", "tflite-ww", "onnx", "onnx-qio"])
    p.add_argument("--configs", nargs="*", default=["an386:O3", "an386:O2", "an386:Os", "an547:O3"],
                   help="BOARD:LEVEL pairs; boards an386 (M4F), an505 (M33), an500 (M7), an547 (M55), an385 (M3); "
                   "levels O3 O2 Os")
    p.add_argument("--keep", help="build here instead of a temporary directory")
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--record", action="store_true",
                   help="add the rows to bench/results/cortex_m_mlperf_int8.json (docs/firmware.md's tables come "
                   "from it)")
    p.add_argument("--profile", action="store_true", help="also print each build's instructions per function")
    p.add_argument("--m4-cycles-tool", action="store_true",
                   help="also count the M4 builds' cycles with ../shared/tools/m4-cycles (a check of aotc's estimate)")
    args = p.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="aotc-mlperf-int8-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    tool = m4_cycles_tool(work) if args.m4_cycles_tool else None
    rows = []
    for name in args.models:
        macs = (tflite_macs(IC02_FILE) if name == IC02
                else graph_macs(onnx.load(str(MODELS_DIR / f"{name}_folded.onnx"))))
        for form in args.forms:
            if name == IC02 and not form.startswith("tflite"):
                continue  # IC02 is a .tflite file only
            model = IC02_FILE if name == IC02 else MODELS_DIR / f"{name}_int8.{form.split('-')[0]}"
            for config in args.configs:
                board, level = config.split(":")
                r = measure(model, board, level, work, args.profile, qio=form.endswith("-qio"),
                            widened=form.endswith("-ww"), tool=tool)
                r.update(model=name, form=form, board=board, level=level, macs=macs)
                rows.append(r)
                est = "" if r["cycles"] is None else f", {r['cycles']} est. cycles ({r['cycles'] / macs:.2f}/MAC)"
                print(f"  {name} {form} {board} -{level}: {r['instructions']} instructions "
                      f"({r['instructions'] / macs:.2f}/MAC){est}, arena {r['arena']} B, identical "
                      f"{r['identical']:.2%}, max {r['max_lsb']:.3g} LSB, code {r['code']} B", file=sys.stderr)
                if args.profile:
                    print(format_board_profile(_Row(r), top=12), file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps([{k: v for k, v in r.items() if "profile" not in k} for r in rows],
                                              indent=1))
    if args.record:
        key = lambda r: (r["model"], r["form"], r["board"], r["level"])  # noqa: E731
        plain = [{**{k: v for k, v in r.items() if "profile" not in k}, "tflm_instructions": TFLM[r["model"]][0],
                  "tflm_arena": TFLM[r["model"]][1], "published_m4_cycles": PUBLISHED_M4_CYCLES[r["model"]]}
                 for r in rows if r["model"] in TFLM]
        print(f"recorded in {record.record(__file__, plain, key=key)}", file=sys.stderr)
    print("| model | form | board -level | M instr (per MAC) | M est. cycles (per MAC) | / TFLM (target 0.7) "
          "| arena B (/ TFLM, target 0.9) | identical | max LSB | code B | text B |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        tflm_insn, tflm_arena = TFLM.get(r["model"], (float("nan"), float("nan")))
        ref = "ort" if r["form"].startswith("onnx") else "LiteRT ref"
        cyc = "-" if r["cycles"] is None else f"{r['cycles'] / 1e6:.2f} ({r['cycles'] / r['macs']:.2f})"
        print(f"| {r['model']} | {r['form']} | {r['board']} -{r['level']} | {r['instructions'] / 1e6:.2f} "
              f"({r['instructions'] / r['macs']:.2f}) | {cyc} | {r['instructions'] / tflm_insn:.2f} | {r['arena']} "
              f"({r['arena'] / tflm_arena:.2f}) | {r['identical']:.2%} vs {ref} | {r['max_lsb']:.3g} | {r['code']} "
              f"| {r['text']} |")
    print()
    print(published_table(rows))


def published_table(rows: list[dict]) -> str:
    """Per core, the estimate against the best published figure (issue 68): cycles per inference on the M4, M33
    and M7, cycles per MAC on the M55 (the M85's); IC02 against 0.8x the core's best IC01 cycles per MAC."""
    ic01_macs = 12501632
    lines = ["| model | form | board -level | M instr | M est. cycles | cycles/MAC | best published | ratio |",
             "|---|---|---|---:|---:|---:|---|---:|"]
    for r in rows:
        if r["cycles"] is None:
            continue
        per_mac = r["cycles"] / r["macs"]
        if r["board"] == "an547":
            best = PUBLISHED_M85_PER_MAC.get("ic_resnet8" if r["model"] == IC02 else r["model"])
            pub, ratio = (f"M85 {best:.2f}/MAC" + (" (IC01; target 0.8x)" if r["model"] == IC02 else ""),
                          per_mac / best) if best else ("-", None)
        elif r["model"] == IC02:
            ic01 = PUBLISHED.get(r["board"], {}).get("ic_resnet8")
            best = ic01[0] / ic01_macs if ic01 else None
            pub, ratio = (f"IC01 {best:.2f}/MAC ({ic01[1]}; target 0.8x)", per_mac / best) if best else ("-", None)
        else:
            pubc = PUBLISHED.get(r["board"], {}).get(r["model"])
            pub, ratio = (f"{pubc[0] / 1e6:.3g} M ({pubc[1]})", r["cycles"] / pubc[0]) if pubc else ("-", None)
        lines.append(f"| {r['model']} | {r['form']} | {r['board']} -{r['level']} | {r['instructions'] / 1e6:.2f} | "
                     f"{r['cycles'] / 1e6:.3f} | {per_mac:.3f} | {pub} | {'-' if ratio is None else f'{ratio:.2f}x'} |")
    return "\n".join(lines)


class _Row:
    """What format_board_profile reads of a BoardRow."""

    def __init__(self, r: dict):
        self.profile, self.instructions, self.macs = r["profile"], r["instructions"], r["macs"]
        self.cycle_profile = r["cycle_profile"]


if __name__ == "__main__":
    main()
