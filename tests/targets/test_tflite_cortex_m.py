"""TFLite int8 models on the Cortex-M boards (issue 27): the DSP-extension paths
(tflite_int8_*.c: CONV_2D through quant_dsp.h's SMLAD block, DEPTHWISE_CONV_2D by SMLABB / SMLATT,
FULLY_CONNECTED by quant_dsp.h's aotc_dsp_gemv4) and Helium's on the M55 (tflite_int8_mve.h's dot products: CONV_2D
and FULLY_CONNECTED by VMLADAVA, the requantisation by VQRDMULH) must give LiteRT's reference
kernels' outputs bit for bit, as the plain loops do on the host.

The MLPerf Tiny models of bench/keras_mlperf_int8.py, each on a few seeded inputs, built with
warnings as errors at one of the three levels (the inline assembly's register allocation differs):
DS-CNN on the M4 at -O3 (a 10 x 4 stride-2 conv on one channel, the row-at-a-time gather; 3 x 3
depthwise on small planes, through the padded span; 1 x 1 convs); ResNet-8 on the M4 (3 x 3 convs
over 576 rows, several blocks of quads; stride 2; the 1 x 1 shortcuts); MobileNet-v1 on the M4 at
-Os (depthwise on planes too large to pad: runs of inside windows, borders one at a time, stride
2); DS-CNN at -Os on the M55 (Helium's conv in place and gathered, its FC, the vector
requantisation of the depthwise sums); DS-CNN on the M4 again with AOTC_DSP_NO_ASM (the assembly's
C twins, as compilers without GNU assembly build them). ResNet-8's convs with their residual ADD fused
(aotc_tfl_conv_add_s8) on the M4 (a DSP tile through the ADD's tables), the M55 (Helium's) and the M3
(the plain loop, add_one per element). The ADDs of tests/models/tflite/ops_int8 on the M4 (tables from the
plan's scratch). tests/models/tflite/padded_int8 on the M4: its PADs folded into the convs (issue 53). VWW,
ResNet-8 and DS-CNN (without the assembly) on the M4 with --widened-weights (issue 52). DS-CNN on the M33
(mps2-an505) and ResNet-8 on the M7 (mps2-an500) at -Os: the same DSP paths (issue 68); the autoencoder at -O3 and
VWW at -Os on the M7, through its own schedules of the dense layers' and the 4 x 2 block's loops.
Slow: the autoencoder (FULLY_CONNECTED of 8 outputs and of 8 inputs) on the M4 at -O2, on the M55, and
without the assembly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool, run_checked

from aot.build import cmake_exe, run_bundle

# qemu board runs that one fixture builds together: the whole file in the full tier (tests/README.md)
pytestmark = pytest.mark.full

HERE = Path(__file__).resolve().parents[1]
MODELS = HERE.parent / "bench" / "models" / "keras"
RUNS = [("kws_dscnn_int8", "mps2-an386", "Release", ""), ("ic_resnet8_int8", "mps2-an386", "Release", ""),
        ("vww_mobilenet_int8", "mps2-an386", "MinSizeRel", ""), ("kws_dscnn_int8", "mps3-an547", "MinSizeRel", ""),
        ("kws_dscnn_int8", "mps2-an386", "Release", "-DAOTC_DSP_NO_ASM"),
        # the fused CONV_2D + residual ADD (TflConv2DAdd) through Helium's conv and the M3's plain loop
        ("ic_resnet8_int8", "mps3-an547", "Release", ""), ("ic_resnet8_int8", "mps2-an385", "MinSizeRel", ""),
        # ADDs left alone (tests/models/tflite): the tabulated DSP path, its tables in the plan's scratch
        ("ops_int8", "mps2-an386", "MinSizeRel", ""),
        # PADs folded into the convs and the max pool (issue 53): the DSP depthwise paths with pads wider than
        # SAME's and asymmetric, windows wholly in the padding
        ("padded_int8", "mps2-an386", "Release", ""),
        # a 1-channel DEPTHWISE_CONV_2D of multiplier 8 (TFLM's micro_speech layer): the depthwise multiplier path
        # (tfl_depthwise_s8_mult; padded_int8 above has one of 8 channels, multiplier 2, pads wider than SAME's)
        ("dwmult_int8", "mps2-an386", "Release", ""),
        # the same layer on the M55 in the conv form (DepthwiseAsConv): Helium's CONV_2D over a 10 x 8 x 1 patch
        ("dwmult_int8", "mps3-an547", "MinSizeRel", ""),
        # the M33 (mps2-an505) and the M7 (mps2-an500) take the M4's DSP-extension paths (issue 68)
        ("kws_dscnn_int8", "mps2-an505", "Release", ""), ("ic_resnet8_int8", "mps2-an500", "MinSizeRel", ""),
        # the M7's own schedules (quant_dsp.h, AOTC_DSP_M7): the dense layers' interleaved quads, the 4 x 2 block's
        ("ad_autoencoder_int8", "mps2-an500", "Release", ""), ("vww_mobilenet_int8", "mps2-an500", "MinSizeRel", "")]
# --ram-budget at the least arena aotc reaches (issue 53): the convs' outputs overlapping their inputs (the graph
# input's too), the DSP paths' tiles below their floor and the depthwise path's shorter runs of sums; Helium's
# CONV_2D on the M55; the M3's plain loops (a fifth field: the budget)
# (VWW on the M4 at 37,184 B: tests/plan/test_choice.py's run under qemu, against LiteRT's reference too)
RUNS += [("kws_dscnn_int8", "mps2-an386", "Release", "", 10112),
         ("kws_dscnn_int8", "mps3-an547", "Release", "", 10112),
         # below the peak layer's tensors: runs of convs in row bands (aot/plan/bands.py), the VWW target on
         # the M3's plain loops (its outputs over their inputs too: 37,152 B there, a VWW compile under a budget more,
         # added nothing), KWS's least with bands (the first conv's 10 x 4 window over the input) on the M55
         ("vww_mobilenet_int8", "mps2-an385", "MinSizeRel", "", 30200),
         ("kws_dscnn_int8", "mps3-an547", "Release", "", 9808)]
# --widened-weights (issue 52): the DSP CONV_2D path on weights widened in flash, doubled where it requantises in
# the MAC kernel (VWW's 1 x 1 convs), not where a patch is several blocks of quads (ResNet-8's 3 x 3 x 64 convs,
# their residual ADDs fused), in C without the assembly, and in row bands (the fifth field: the budget, 0 none;
# the sixth: the option)
RUNS += [("vww_mobilenet_int8", "mps2-an386", "Release", "", 0, "--widened-weights"),
         ("ic_resnet8_int8", "mps2-an386", "Release", "", 0, "--widened-weights"),
         ("kws_dscnn_int8", "mps2-an386", "MinSizeRel", "-DAOTC_DSP_NO_ASM", 0, "--widened-weights")]
# the autoencoder's FULLY_CONNECTED layers take the paths of DS-CNN's last layer (64 -> 12): slow only
SLOW_RUNS = [("ad_autoencoder_int8", "mps2-an386", "RelWithDebInfo", ""),
             ("ad_autoencoder_int8", "mps3-an547", "Release", ""),
             ("ad_autoencoder_int8", "mps2-an386", "Release", "-DAOTC_DSP_NO_ASM"),
             # --widened-weights under a RAM budget, in row bands (each layer's band of rows a tile its own, fewer
             # positions): its compile alone is most of a minute (87 s in CI); the full tier runs VWW at this budget on
             # the M3 and widened unbudgeted on the M4, and cli/test_widened_weights.py the banded run's metadata
             ("vww_mobilenet_int8", "mps2-an386", "MinSizeRel", "", 30200, "--widened-weights")]
INFERENCES = 3


def _run(cmd: list[str], cflags: str = "") -> None:
    run_checked(cmd, {**os.environ, "CFLAGS": cflags} if cflags else None)


def _board(root: Path, name: str, board: str, build_type: str, cflags: str, budget: int = 0, option: str = ""
           ) -> tuple[list[list[np.ndarray]], list[np.ndarray]]:
    """The board's outputs for each seeded input, and LiteRT's reference outputs (stacked by run)."""
    model, out = MODELS / f"{name}.tflite", root / f"{name}-{board}-{build_type}{cflags}{budget or ''}{option}"
    if not model.exists():  # a test model rather than an MLPerf one
        model = HERE / "models" / "tflite" / f"{name}.tflite"
    _run([sys.executable, "-m", "aot.cli", str(model), "-o", str(out), "--target", board, "--build-type", build_type,
          *(["--ram-budget", str(budget)] if budget else []), *([option] if option else [])])
    # the flags in a build directory of its own: aotc configured `out` already, and CMake reads CFLAGS at a
    # directory's first configure only (a second one kept the cached flags, and -DAOTC_DSP_NO_ASM went unused)
    build = root / f"{out.name}-cflags" if cflags else out
    _run([cmake_exe(), "-S", str(out / "bundle"), "-B", str(build), f"-DCMAKE_BUILD_TYPE={build_type}",
          f"-DCMAKE_TOOLCHAIN_FILE={out / 'bundle' / 'target' / 'toolchain.cmake'}", "-DAOTC_WARNINGS_AS_ERRORS=ON"],
         cflags)
    _run([cmake_exe(), "--build", str(build)])
    if cflags:
        cache = (build / "CMakeCache.txt").read_text()
        assert all(f in cache for f in cflags.split()), f"{cflags} not in {build}'s flags"
    meta = json.loads((out / "bundle" / "metadata.json").read_text())
    rng = np.random.default_rng(11)
    feeds = [[rng.integers(-128, 128, s["shape"]).astype(np.int8) for s in meta["inputs"]] for _ in range(INFERENCES)]
    ours = []
    for inputs in feeds:
        got, _ = run_bundle(build, meta, inputs)
        ours.append([got[s["name"]] for s in meta["outputs"]])
    np.savez(root / f"{out.name}_in.npz", **{f"input_{k}": np.stack([f[k] for f in feeds])
                                             for k in range(len(meta["inputs"]))})
    _run([sys.executable, str(HERE / "tflite_reference.py"), str(model), str(root / f"{out.name}_in.npz"),
          str(root / f"{out.name}_ref.npz"), "--runs"])
    ref = np.load(root / f"{out.name}_ref.npz")
    return ours, [ref[f"output_{k}"] for k in range(len(meta["outputs"]))]


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """Each run's future, by its key: the default runs started at once, two builds at a time; a
    slow run when its test asks."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    if os.environ.get("CI", "").lower() != "true":  # CI installs LiteRT: fail there, not skip
        pytest.importorskip("ai_edge_litert")
    root = tmp_path_factory.mktemp("tflite_boards")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {run: pool.submit(_board, root, *run) for run in RUNS}

        def get(run: tuple):
            if run not in futures:
                futures[run] = pool.submit(_board, root, *run)
            return futures[run].result()

        yield get


def _id(run: tuple) -> str:
    m, b, t, f = run[:4]
    budget, option = (*run[4:], 0, "")[:2] if len(run) != 5 else (run[4], "")
    return f"{m}-{b}-{t}{'-no-asm' if f else ''}{f'-budget{budget}' if budget else ''}{option.replace('--', '-')}"


@pytest.mark.parametrize("run", [*RUNS, *(pytest.param(r, marks=pytest.mark.slow) for r in SLOW_RUNS)],
                         ids=[_id(r) for r in [*RUNS, *SLOW_RUNS]])
def test_int8_tflite_on_board_bit_exact_with_litert_reference(boards, run):
    name, board = run[:2]
    ours, refs = boards(run)
    for r, outs in enumerate(ours):
        for k, got in enumerate(outs):
            want = refs[k][r]
            assert got.dtype == want.dtype and got.shape == want.shape
            diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
            assert not diff.any(), f"{name} on {board}, run {r}: {int((diff > 0).sum())} elements differ, " \
                                   f"max {int(diff.max())} LSB"


def test_aotc_bench_on_a_board_bundle_from_a_tflite_file(tmp_path):
    """aotc bench on a Cortex-M bundle compiled from a .tflite file: the file itself in LiteRT is the reference
    (it was handed to onnxruntime: an internal error), the MACs are the file's convs' and dense layers'."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm", "cc")
    if os.environ.get("CI", "").lower() != "true":
        pytest.importorskip("ai_edge_litert")
    from aot.bench import tflite_macs

    model, out = HERE / "models" / "tflite" / "keyword_int8.tflite", tmp_path / "kw"
    _run([sys.executable, "-m", "aot.cli", str(model), "-o", str(out), "--target", "mps2-an386"])
    r = subprocess.run([sys.executable, "-m", "aot.cli", "bench", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("| keyword_int8 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert int(cells[4]) == tflite_macs(model) == 180192, row  # 4 convs and a dense layer, from the file's shapes
    assert float(cells[8]) == 0.0, row  # bit-exact with LiteRT on the same int8 inputs


_M33_PW = "aotc_dsp_mac4x2_rq3+aotc_dsp_mac2x4_rq3+aotc_dsp_mac2x4p7_rq3"  # the M33's conv kernels on VWW


def test_m7_and_m33_schedules_take_fewer_estimated_cycles_than_the_m4s_there(tmp_path):
    """The M7's and M33's schedules of the DSP loops (quant_dsp.h, AOTC_DSP_M7 and AOTC_DSP_M33) against the M4's on
    the same bundle (built again with the switch 0): the same outputs, and in the core's estimate fewer cycles. On the
    M7 (cycles=m7): the dense layers' interleaved quads (aotc_dsp_gemv4_il: 11 cycles a quad of 16 MACs, the M4's
    order 20), the pointwise convs' 4 x 2 block (aotc_dsp_mac4x2_rq3: 17 a quad of 32, the M4's 21; its requantisation
    interleaved) and the 6-wide depthwise rows (tfl_dsp_dwp6_same_floor); on the M33 (cycles=m33), the 4 x 2 block (28
    cycles a quad of 32, its first weight load pre-indexed with writeback: no ADD of the pointer and no load-use stall;
    the M4's order 30 there; with the ADD, 29, the kernel took 0.973 of the M4 order's cycles on VWW, then 0.945; its
    pair's epilogue and group start by single LDRs and STRs from sp, not LDMs and STMs (an LDM of N 1 + N cycles, an
    LDR 1), a pair's first quad from the 4 biases (4 loads, not 8 sums): 0.917, the bound 0.935) and the stride-2
    depthwise rows (tfl_dsp_dws2_floor: each column's load two instructions before its SXTB16s, 0.94; the fourth
    column's load before A's last multiply of the third, no load-use stall a kernel row: 0.928; the turn's sums from
    the base by 4 loads, not an LDM of 8, A's first multiplies accumulating onto B's, in both orders: 461,328 against
    497,824 est. cycles, 0.927, where the M33's order without its load-use fix took 0.94; the bound 0.93); on
    ResNet-8 (IC) on the M33 the same epilogue in aotc_dsp_mac4x2_rq and tfl_dsp_mac4x2_rqa (0.940 and 0.939 of the M4
    order's with the M33's quads alone, now 0.931 and 0.932). VWW's pointwise convs and RGB stem on the M33 then by its
    2 x 4 block (aotc_dsp_mac2x4_rq3, aotc_dsp_mac2x4p7_rq3; the M4's order does not take them: 2 channels x 4
    positions, a channel's terms serving 4 outputs), the kernels' sum against the M4 order's 4 x 2 block: 0.917 ->
    0.902 (6,775,044 against 7,513,820 est. cycles), the bound 0.91. The M33's SAME stride-1 depthwise turn
    (tfl_dsp_dwp6_same_floor: a kernel row's pairs in two registers, reloaded after their last multiplies, oc and y kept
    in the freed two through the turn: 0.983, the bound 0.99). VWW's depthwise dispatcher on the M33 (its C, a group's
    terms by tfl_dsp_dw_usual: ra as one shift, 143,762 -> 136,382 est. cycles; the stride-1 ring's groups set up in
    one pass, tfl_dsp_dw_ring_setup, the layer's tests once: 119,131; that set-up in assembly, the stride-2 path's
    facts a layer: 99,039) at most 105,000."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    from aot.bench import board_counts, insn_count_plugin

    plugin = insn_count_plugin(tmp_path)
    for name, board, switch, most in (
            ("ad_autoencoder_int8", "mps2-an500", "AOTC_DSP_M7", {"aotc_dsp_gemv4_il": 0.65}),
            ("vww_mobilenet_int8", "mps2-an500", "AOTC_DSP_M7", {"aotc_dsp_mac4x2_rq3": 0.9,
                                                                  "tfl_dsp_dwp6_same_floor": 0.95}),
            ("vww_mobilenet_int8", "mps2-an505", "AOTC_DSP_M33", {_M33_PW: 0.91,
                                                                  "tfl_dsp_dws2_floor": 0.93,
                                                                  "tfl_dsp_dwp6_same_floor": 0.99}),
            ("ic_resnet8_int8", "mps2-an505", "AOTC_DSP_M33", {"aotc_dsp_mac4x2_rq": 0.935,
                                                               "tfl_dsp_mac4x2_rqa": 0.935})):
        got = {}
        src = tmp_path / f"{name}-{board}"
        _run([sys.executable, "-m", "aot.cli", str(MODELS / f"{name}.tflite"), "-o", str(src), "--target", board,
              "--build-type", "Release"])
        for way, cflags in (("own", ""), ("m4", f"-D{switch}=0")):
            out = tmp_path / f"{src.name}-{way}"  # its own build directory: CFLAGS counts at the first configure only
            _run([cmake_exe(), "-S", str(src / "bundle"), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release",
                  "-DCMAKE_TOOLCHAIN_FILE=" + str(src / "bundle" / "target" / "toolchain.cmake"),
                  "-DAOTC_WARNINGS_AS_ERRORS=ON"], cflags)
            _run([cmake_exe(), "--build", str(out)])
            meta = json.loads((src / "bundle" / "metadata.json").read_text())
            feeds = [np.random.default_rng(5).integers(-128, 128, s["shape"]).astype(np.int8) for s in meta["inputs"]]
            ys, _ = run_bundle(out, meta, feeds)
            cycles: dict[str, int] = {}
            board_counts(out, meta, feeds, plugin, cycle_profile=cycles)
            got[way] = (ys, cycles)
        assert all(np.array_equal(got["own"][0][k], got["m4"][0][k]) for k in got["m4"][0]), (name, board)
        for function, share in most.items():  # (a + b: the kernels' sum)
            own, m4 = (sum(got[way][1].get(f, 0) for f in function.split("+")) for way in ("own", "m4"))
            assert own <= share * m4, (name, board, function, own, m4)
        if (name, board) == ("vww_mobilenet_int8", "mps2-an505"):
            assert got["own"][1]["tfl_depthwise_s8_dsp"] <= 105_000, got["own"][1]["tfl_depthwise_s8_dsp"]


def test_m55_resnet8_at_the_m85s_cycles_per_mac(tmp_path):
    """On the M55, ResNet-8 (IC) at or below the M85's published 0.33 cycles a MAC (issue 68), in the M55's estimate:
    its residual ADDs fused into CONV_2D (aotc_tfl_conv_add_s8) by tflite_int8_conv.c's tfl_mve_residual_fast (each
    input byte's rescaling from tables in the conv's scratch by gathers, the sum requantised as the DSP path's loop:
    about 8 est. cycles an element with the calls, where add_one's three requantisations in vectors took about 17),
    a patch's window rows in one loop (tfl_mve_copy_rows) and tfl_mve_dot_groups' 16-bit zeroing: 0.38 -> 0.32.
    Bit-exact with LiteRT's reference: RUNS' ic_resnet8_int8 on mps3-an547 and tests/kernels_c's Helium entries."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    from aot.bench import board_counts, insn_count_plugin

    plugin = insn_count_plugin(tmp_path)
    src = tmp_path / "ic-an547"
    _run([sys.executable, "-m", "aot.cli", str(MODELS / "ic_resnet8_int8.tflite"), "-o", str(src), "--target",
          "mps3-an547", "--build-type", "Release"])
    out = tmp_path / "build"
    _run([cmake_exe(), "-S", str(src / "bundle"), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release",
          "-DCMAKE_TOOLCHAIN_FILE=" + str(src / "bundle" / "target" / "toolchain.cmake"),
          "-DAOTC_WARNINGS_AS_ERRORS=ON"])
    _run([cmake_exe(), "--build", str(out)])
    meta = json.loads((src / "bundle" / "metadata.json").read_text())
    feeds = [np.random.default_rng(5).integers(-128, 128, s["shape"]).astype(np.int8) for s in meta["inputs"]]
    cycles: dict[str, int] = {}
    _, total = board_counts(out, meta, feeds, plugin, cycle_profile=cycles)
    elements = 32 * 32 * 16 + 16 * 16 * 32 + 8 * 8 * 64  # the three ADDs' outputs
    assert cycles["tfl_residual_run"] <= 10 * elements, cycles["tfl_residual_run"]
    assert total is not None and total <= 0.33 * 12501632, total  # the model's MACs


def test_m33_vww_conv_tiles_of_up_to_256_positions(tmp_path):
    """VWW's 1 x 1 stride-1 convs on the M33 (mps2-an505, -O3) take tiles of up to 256 positions where the step spares
    the memory (aotc_tflite_int8.h's TFL_DSP_NP_MAX; 64 before, as the plan still gives the other convs): each tile
    widens every group's weights and builds its terms again, so the 48 x 48 .. 12 x 12 layers' fewer tiles cost fewer
    cycles, the arena the same: the model 9,703,790 -> 9,626,330 est. cycles, 50,768 B of arena either way. Each conv
    also carries the compiler's word that its requantisation is the usual one (p->dsp_usual), so that
    tfl_conv_s8_dsp does not check every output channel again a call: 9,596,640. Its pointwise convs then by the M33's
    2 x 4 block (tflite_int8_dsp.h's aotc_dsp_mac2x4_rq3, issue 68: 2 channels x 4 positions, so a channel's terms
    serve 4 outputs and a block of 8 loads 2 biases; a position's 2 outputs one STRH): 9,512,688; its RGB stem's too
    (aotc_dsp_mac2x4p7_rq3: two pairs of 7 quads a block) and 1 x 1 tiles of whole blocks of 4: 9,494,519. Each
    stride-1 depthwise layer carries its biases less x_zero times the weights' sums (p->dsp_dwb), so the ring path's
    set-up of a group does not sum the weights a call, nor test the channels' terms (the compiler gives dsp_dwb where
    they pass; the dispatcher tfl_depthwise_s8_dsp 98,799 -> 81,796): 9,477,306 (X-CUBE-AI 10.2: 9.48 M), the bound
    9,485,000."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    from aot.bench import board_counts, insn_count_plugin

    plugin = insn_count_plugin(tmp_path)
    src, out = tmp_path / "vww-an505", tmp_path / "build"
    _run([sys.executable, "-m", "aot.cli", str(MODELS / "vww_mobilenet_int8.tflite"), "-o", str(src), "--target",
          "mps2-an505", "--build-type", "Release"])
    c = (src / "bundle" / "src" / "vww_mobilenet_int8.c").read_text()
    assert ".dsp_tile = 256," in c  # the 48 x 48 and 24 x 24 layers' tiles
    assert c.count(".dsp_usual = 1,") == 14  # every CONV_2D's
    assert c.count(".dsp_dwb = ") == 9  # every stride-1 DEPTHWISE_CONV_2D's
    _run([cmake_exe(), "-S", str(src / "bundle"), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release",
          "-DCMAKE_TOOLCHAIN_FILE=" + str(src / "bundle" / "target" / "toolchain.cmake"),
          "-DAOTC_WARNINGS_AS_ERRORS=ON"])
    _run([cmake_exe(), "--build", str(out)])
    meta = json.loads((src / "bundle" / "metadata.json").read_text())
    assert meta["memory"]["arena_bytes"] <= 50768, meta["memory"]
    feeds = [np.random.default_rng(5).integers(-128, 128, s["shape"]).astype(np.int8) for s in meta["inputs"]]
    cycles: dict[str, int] = {}
    _, total = board_counts(out, meta, feeds, plugin, cycle_profile=cycles)
    assert cycles.get("aotc_dsp_mac2x4_rq3", 0) > 5_000_000, cycles  # every pointwise layer's blocks of 4
    assert total is not None and total <= 9_485_000, total
    assert cycles["tfl_depthwise_s8_dsp"] <= 84_000, cycles["tfl_depthwise_s8_dsp"]


@pytest.mark.full
def test_dsp_dwb_only_on_the_rings_layers(tmp_path, monkeypatch):
    """p->dsp_dwb (4 bytes a channel of flash) only where the ring path reads it: a stride-1 3 x 3 depthwise layer at
    least as wide as tall (KWS DS-CNN's 25 x 5 layers go by columns, tfl_dsp_dw_columns: none), not on the M4's
    --widened-weights bundles (dsp_dw's set-up holds it), not at a --flash-budget level that leaves the ring out
    ("general": 4 KB of VWW's flash read by nothing), nor on the M55 (Helium's depthwise takes those layers), on each
    of VWW's 9 stride-1 layers."""
    from aot import flash
    from aot.compiler import Options, compile_file

    m55 = compile_file(MODELS / "vww_mobilenet_int8.tflite", Options(name="m", target="mps3-an547"))
    assert ".dsp_dwb = " not in m55.files["src/model_m.c"]

    monkeypatch.setattr(flash, "LEVELS", tuple(lv for lv in flash.LEVELS if lv.name == "general"))
    b = compile_file(MODELS / "vww_mobilenet_int8.tflite", Options(name="m", target="mps2-an505", flash_budget=10**9))
    assert ".dsp_dwb = " not in b.files["src/model_m.c"]
    src = tmp_path / "kws"
    _run([sys.executable, "-m", "aot.cli", str(MODELS / "kws_dscnn_int8.tflite"), "-o", str(src), "--target",
          "mps2-an505", "--build-type", "Release"])
    c = (src / "bundle" / "src" / "kws_dscnn_int8.c").read_text()
    assert c.count("TflDepthwiseConv2D") >= 4 and ".dsp_dwb = " not in c
    src = tmp_path / "vww"
    _run([sys.executable, "-m", "aot.cli", str(MODELS / "vww_mobilenet_int8.tflite"), "-o", str(src), "--target",
          "mps2-an386", "--build-type", "Release", "--widened-weights"])
    c = (src / "bundle" / "src" / "vww_mobilenet_int8.c").read_text()
    assert ".dsp_dw = " in c and ".dsp_dwb = " not in c
