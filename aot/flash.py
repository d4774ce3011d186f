"""--flash-budget: the bundle's flash (its library's code and constants, as `aotc footprint` counts them)
within a budget, or a refusal naming what takes it and the least aotc reaches.

The weights are stored as the model gives them (int8 stays int8: the M-profile conv paths widen a block
of weights into scratch at run time, never in flash), so what the compiler controls is the code: its
optimisation level and which kernel paths a bundle compiles. A number for the flash is not guessed: the
library is built at compile time with the target's compiler, by the bundle's own CMakeLists.txt at the
build type it will be configured with, and measured as `aotc footprint` measures it (text + data of what a
firmware's link of lib<name>.a with --gc-sections keeps from the model's entry points: aot/footprint.py
kept_sizes, by the target's linker). So the compiler's figure is the footprint's for that build
type, byte for byte (tests/cli/test_flash_budget.py compares them).

The levels, tried in order while the library is over the budget, the smallest (the last) measured second so
that a budget none meets is refused after two builds (`fit`). Each costs instructions, none changes a result:
every kernel path gives the same integers or floats as the others, and the optimisation level does not change
the arithmetic, ISO C without contraction. Without a budget the library compiles only the
M-profile conv and depthwise paths its layers take (aot/kernels/dsp_paths.py); the levels go on from there,
kernel family by kernel family:

- "unwidened" (only with --widened-weights, which stores the int8 CONV_2D weights the DSP path reads also
  widened, twice their bytes): the weights widened at run time instead, as without the option; this and the
  levels after it drop them;
- "cold-Os": the kernel files whose layers do under 5 % of the model's work (a KWS DS-CNN's pool,
  FULLY_CONNECTED and softmax) and the model's own .c at -Os, the others at the build type's level;
- "O2": the library at -O2 instead of the build type's (-O3 for Release): less unrolling and inlining; left out
  where convs of a window above 1 x 1 do most of the work (dsp_paths.windowed_convs_lead, DSP targets): their DSP
  path's C ran slower at -O2 than at -Os on the M4 (IC ResNet-8 0.15 %), so a budget O2 meets takes Os (issue 67,
  monotone budgets);
- "Os": at -Os;
- "fc-compact" (issue 67): at -Os, and FULLY_CONNECTED by its compact DSP path (AOTC_TFL_FC_DSP 0: the DSP path's
  widening and store, its 4-output assembly replaced by tfl_fc_rows_compact, two outputs a turn in C, one quad a turn;
  about 0.6 KB less); the levels after it keep it. Where FULLY_CONNECTED does little of the work about 1.00x
  (micro_speech 1.03x); the MLPerf Tiny autoencoder (FULLY_CONNECTED only) 1.04x -> 1.43x level none's est. cycles
  on the M4;
- "general": at -Os, and the specialised M-profile paths left out (dsp_paths.SPECIALISED: 1 x 1 convs by rows,
  the depthwise ring, columns and stride 2, the doubled sums): the layers by the general DSP paths (the conv's
  patches, the depthwise band);
- "dw-compact" (issue 67): as "general", and the depthwise layers by the compact DSP path (tfl_depthwise_s8_compact:
  any shape, 4 channels a tap by SXTB16 and SMLABB / SMLATT, about 1.2 KB of code at -Os), those of depth multiplier
  above 1 by the compact multiplier path (tfl_depthwise_s8_multc: SMLAD on 16-bit column pairs in C, about 1.6 KB
  against the multiplier path's 3 KB), no other depthwise code;
- "conv-compact" (issue 67): as "dw-compact", and the convs by the compact DSP path (tfl_conv_s8_compact: a position's
  patch widened once, two output channels' SMLADs a quad, four quads a turn, each output requantised alone, two
  positions' outputs clamped at once by SSUB16 and SEL; about 1.2 KB at -Os), no other conv code but the fused ADD's
  (none linked where the model fuses none): IC ResNet-8 1.47x the general level's est. cycles on the M4, VWW MobileNet
  1.44x dw-compact's (1.56x and 1.51x before those);
- "dwm-single" (issue 67): as "conv-compact", and the depthwise layers of depth multiplier above 1 by the compact
  multiplier path one position a turn (AOTC_TFL_DW_MULTC_PAIRS 0: no second position's sums, each output by
  requant_double, no SSAT terms; about 0.5 KB less): TFLM micro_speech 1.53x -> 2.22x -> dw-plain's 3.13x level none's
  est. cycles on the M4 (dw-compact went to dw-plain's 4.14x before, 2.71x a step); elsewhere conv-compact's bundle;
- "dw-plain": as "conv-compact", and the depthwise layers by the plain loop (no depthwise DSP code; the loop in its
  faster form, AOTC_TFL_DW_LOOP_SMALL 0: the window clipped once a position, 4 output channels at a time; where a
  layer's depth multiplier is 4, 8, ... its 4 channels read one input value a tap, AOTC_TFL_DW_LOOP_MULT4, by a window
  function of two taps a turn, each tap's 4 weights one word widened by SXTB16 into SMLABB / SMLATB: TFLM
  micro_speech 6.5x -> 4.1x -> 3.1x level none's est. cycles; at depth multiplier 1 its 4 channels' input offsets 0
  to 3, not four divisions a window, AOTC_TFL_DW_LOOP_M1, 36 B, at this level alone: person_detect 1.504x -> 1.489x
  dwm-single's on the M4, while the levels after it, smaller, keep KWS DS-CNN's fc-small -> portable at 1.48x);
- "fc-small" (issue 67): as "dw-plain", and FULLY_CONNECTED by its smallest DSP path (AOTC_TFL_FC_PAIRS 0 too: one
  output a turn, two quads a turn, each output requantised at once, no sums in scratch and no store loop; about 0.6 KB
  less again), and the plain depthwise loop's divisions at depth multiplier 1 back (AOTC_TFL_DW_LOOP_M1 0, 36 B less):
  the autoencoder 2.05x level none's est. cycles, 1.00x to 1.03x dw-plain's elsewhere;
- "conv-small" (issue 67): as "fc-small", and where the portable kernels' faster loops do not pay (their layers under
  half the model's work: IC ResNet-8's 3 x 3 convs; elsewhere the same bundle as fc-small) the convs by the compact
  path one position at a time (AOTC_TFL_CONV_2X2 0: tfl_conv_s8_small, its patch widened once, two output channels
  and two quads a turn in C, a chunk of channels' sums then requantised by requant_double; no 2 x 2 assembly, two
  positions' widening: about 1.0 KB less; the channels' SMMLAR terms once a call where the scratch holds them): IC
  ResNet-8 1.51x -> 2.17x level none's est. cycles;
- "conv-smallest" (issue 67): as "conv-small", one output channel and one quad a turn (AOTC_TFL_CONV_PAIRS 0; about
  0.2 KB less): IC ResNet-8 2.96x, so that it steps general's 1.03x -> 1.51x -> 2.17x -> 2.96x -> portable's 4.20x
  (fc-small to portable 2.63x before these, general to conv-compact 1.56x);
- "portable": at -Os, and the portable kernels instead of the ISA paths (the DSP extension's and
  Helium's on Cortex-M, AVX on x86: AOTC_NO_INTRINSICS, and select without those candidates, nor the
  TFLite int8 convs' M-profile ones, whose scratch only the DSP paths read: those kernels take none; the
  ONNX int8 convs keep their M-profile blocks, plain C that M-profile builds need). The TFLite int8 convs' and
  depthwise layers' plain loops then take their faster forms (issue 67), as the unbudgeted plain-C builds do not:
  the 1 x 1 convs two output channels by two positions (paired in y's order) a block, each byte pair of x and of w
  loaded once for 4 MACs, without the input offset (by the weights' sums); the other convs 4 output channels at a
  time; the depthwise layers of multiplier 1 4 channels over every position, the others 4 output channels at a
  time; the requantisation's terms once a channel (KWS 5.39x -> 4.16x level none's est. cycles on the M4, VWW
  6.10x -> 4.57x, for about 2.7 KB). (A level between "dw-plain" and this that drops the convs' DSP code alone
  measured 0.97x this level's cycles at 2.6-4 KB more on the M4 with the loops before these: so there is none.)
  A depthwise layer of depth multiplier 4, 8, ... takes the plain loop's path for it (AOTC_TFL_DW_LOOP_MULT4, in plain
  C: its 4 channels read one input value a tap) at every portable level, compiled only where a layer has such a
  multiplier (dsp_paths.mult4_layers; TFLM micro_speech 6.70x -> 4.30x level none's est. cycles for 288 B).
  FULLY_CONNECTED there takes 4 outputs at a time (the autoencoder 5.15x -> 2.56x; their loop a function of its own,
  tfl_fc_dot4_plain, so that -Os spills none of its 12 registers: 3.37x before). The faster loops are compiled
  only where their layers (the 1 x 1 convs, the depthwise ones of multiplier 1, FULLY_CONNECTED) do at least half
  the model's work (dsp_paths.portable_fast_pays; on IC ResNet-8's 3 x 3 convs they were larger and no faster);
- "portable-fc2" (issue 67): as "portable-small", but FULLY_CONNECTED two outputs a turn where it does at least half the
  model's work (dsp_paths.fc_pairs_pay; AOTC_TFL_FC_PAIRS 1: 128 B more than one a turn on the autoencoder, 3.55x level
  none's est. cycles against 5.15x); elsewhere the same bundle as portable-small;
- "portable-small": as "portable", in the smallest loops (AOTC_TFL_PORTABLE_FAST 0, a part of the kernel
  configuration, and AOTC_TFL_FC_PAIRS 0): the least flash, as the portable level was before its faster loops.

(A level that builds the library of the one before, as conv-small where the faster portable loops pay, is measured
once: fit takes the first of them, but portable-fc2 where it builds portable-small's is named as that.)
So the autoencoder steps Os 1.04x -> fc-compact 1.43x -> fc-small 2.05x -> portable 2.56x -> portable-fc2 3.55x ->
portable-small 5.15x level none's est. cycles on the M4 (under 1.5x a step; Os went to portable's 3.37x before).

On the M55 (Helium) the ladder skips HELIUM_SKIPPED and, after conv-smallest, takes HELIUM_LEVELS (issue 67): Helium's
kernels left out family by family (their macros AOTC_TFL_MVE_* in the kernel configuration, dsp_paths.MVE_FAMILIES),
then the portable kernels with Helium's dot products (AOTC_TFL_PORTABLE_MVE*, dsp_paths.PORTABLE_MVE: gcc 12 does not
vectorise the plain loops' int8 dot products for Helium, at -Os or -O3), before the portable levels:
- "mve-fc": FULLY_CONNECTED by the smallest DSP path;
- "mve-conv-compact": Helium's conv in its general loop alone (a position's patch, 4 channels a dot product);
- "mve-dw-compact": the depthwise layers of multiplier 1 by Helium's compact loop (tfl_depthwise_s8_mvec: 8 channels a
  vector in 16-bit lanes, any window), the compact DSP depthwise only where such a layer has under 8 channels;
- "mve-dw-small": every depthwise layer by Helium's loop of last resort (tfl_depthwise_s8_mves: 4 channels a vector in
  32-bit lanes, their input bytes gathered), no DSP depthwise;
- "mve-conv-single8": Helium's conv each output channel's dot product alone, 16 bytes a turn in 8-bit lanes
  (tfl_mve_dot1_8), 4 channels requantised as one vector;
- "mve-conv-single": as mve-conv-single8, and FULLY_CONNECTED (where it does under half the model's work) and
  AVERAGE_POOL_2D by their plain loops;
- "portable-mve-s8": the portable kernels, the conv 4 output channels at a time over every position by 8-bit dot
  products (tfl_conv_s8_pmve8), x's zero point taken off by the weights' sums; the rest as portable-mve (larger and
  slower than mve-conv-single on the four models measured, so a budget there takes mve-conv-single);
- "portable-mve-dot8": portable-mve, and the convs that do the work so in less code, one noinline 8-bit dot product
  call a window (tfl_pmve_dot8), x's zero point taken off by the weights' dot products with x_zero's bytes: the
  pointwise layers (tfl_conv_s8_pmve_pw: KWS DS-CNN, VWW MobileNet), or where windows above 1 x 1 lead, the layers
  whose window rows are whole vectors (tfl_conv_s8_pmve_win: IC ResNet-8's 3 x 3), each compiled only where its layers
  are (dsp_paths.dot8_paths; TFLM micro_speech: portable-mve's library);
- "portable-mve": the portable conv and depthwise loops' dot products by Helium (tfl_pmve_dot4, tfl_pmve_dw4), their
  outputs and the conv's fused ADD requantised 4 channels a vector;
- "portable-mve-rqconv": the conv's outputs alone requantised by vectors, the depthwise's and the fused ADD's in C;
- "portable-mve-dots": the dot products alone by Helium; "portable-mve-conv": the conv's alone.
Their bundles and the portable levels' on the M55 leave the conv's fused ADD code out where the model fuses none, and
portable-mve-conv is then no larger than portable (KWS DS-CNN 34,544 B against 34,552 B), so fit refuses a budget the
last level misses only after them. Each step of the M55's ladder is under 1.5x in est. cycles on KWS DS-CNN, VWW
MobileNet, IC ResNet-8 and TFLM micro_speech (2026-11-29), and on the MLPerf Tiny autoencoder since Helium's
FULLY_CONNECTED one output at a time (dsp_paths.fc_one_paths; Os to the portable kernels 7.5x before, and the portable
levels now larger than Os: no budget takes them); the ratios, the levels tried and dropped and their history
are in docs/firmware.md ("The M55's ladder"; mve-conv-single -> portable-mve, 1.52x on KWS DS-CNN and 1.86x on IC
ResNet-8 after mve-conv-single took the 8-bit dot products, split by portable-mve-dot8 on 2026-11-29).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aot.emit_c import Bundle
from aot.errors import AotcError
from aot.footprint import (
    SHF_ALLOC,
    SHF_EXECINSTR,
    archive_members,
    cmake_linker,
    code_by_file,
    linked,
    model_roots,
    parse_elf,
)


@dataclass(frozen=True)
class FlashLevel:
    name: str
    opt: str | None  # the optimisation flag the library's C gets after the build type's, None: the build type's
    portable: bool  # the portable kernels: AOTC_NO_INTRINSICS and no ISA-path candidates
    what: str  # what it trades, for metadata.json and the footprint's summary
    cost: str  # what it cost where measured (bench/flash_budget.py, docs/firmware.md)
    widened: bool = True  # keeps --widened-weights' constants (where the option was given)
    cold: bool = False  # only the bundle's cold sources (Bundle.cold_sources) at `opt`, the others as the build type
    general: bool = False  # the specialised M-profile paths left out (aot/kernels/dsp_paths.py SPECIALISED)
    plain_dw: bool = False  # every M-profile depthwise path left out: the depthwise layers by the plain loop
    compact_dw: bool = False  # every M-profile depthwise path but the compact one: the depthwise layers by it
    compact_conv: bool = False  # every M-profile conv path but the compact one (and the fused ADD's): the convs by it
    compact_fc: bool = False  # FULLY_CONNECTED's DSP path left out: its layers by the compact one
    small_fc: bool = False  # and the compact one in its smallest loop (one output a turn)
    small_conv: int = 0  # the compact conv one position at a time (1), one channel a turn (2), where portable's pay not
    fc_pairs: bool = False  # in the smallest loops, FULLY_CONNECTED two outputs a turn where it does half the work
    small: bool = False  # the portable kernels' smallest loops (AOTC_TFL_PORTABLE_FAST 0): the least flash
    single_dwm: bool = False  # the compact multiplier depthwise path one position a turn (AOTC_TFL_DW_MULTC_PAIRS 0)
    plain_m1: bool = False  # with plain_dw, depth multiplier 1 without divisions (AOTC_TFL_DW_LOOP_M1; dw-plain alone)
    mve_off: tuple[str, ...] = ()  # Helium's kernel families left out (the M55's levels: dsp_paths.MVE_FAMILIES)
    mve_loops: int = 0  # with `portable` on the M55, the portable loops by Helium (dsp_paths.PORTABLE_MVE): 3 the
    # conv's and depthwise's dot products and requantisation, 2 their dot products, 1 the conv's; 4 as 3, the conv 4
    # channels over every position by 8-bit dot products (PORTABLE_MVE_S8); 5 as 3, the pointwise or windowed convs so
    # in less code (PORTABLE_MVE_PW, _WIN: dsp_paths.dot8_paths)
    rq_conv_only: bool = False  # with mve_loops 3: the conv's outputs alone requantised by vectors (PORTABLE_MVE_RQ_DW,
    # _RQ_ADD left out: the depthwise's and the fused ADD's in C)


LEVELS = (
    FlashLevel("none", None, False, "as without a budget", "none"),
    FlashLevel("cold-Os", "-Os", False, "the kernel files whose layers do under 5 % of the model's work and the "
               "model's own .c compiled at -Os (for size), the others at the build type's level",
               "at most 1.003x the est. cycles on the M4 (MLPerf Tiny int8 four, TFLM micro_speech; "
               "bench/flash_budget.py, docs/firmware.md)",
               cold=True),
    FlashLevel("O2", "-O2", False, "the library compiled at -O2 instead of the build type's level (-O3 for "
               "Release): less unrolling and inlining",
               "at most 1.008x the est. cycles of -O3 on the M4 (KWS DS-CNN, VWW MobileNet int8; docs/firmware.md)"),
    FlashLevel("Os", "-Os", False, "the library compiled at -Os (for size)",
               "at most 1.016x the est. cycles of -O3 on the M4 (KWS DS-CNN, VWW MobileNet int8; docs/firmware.md)"),
    FlashLevel("fc-compact", "-Os", False, "the library at -Os, FULLY_CONNECTED by its compact DSP path (two outputs "
               "a turn, a rolled SMLAD loop in C) instead of the 4-output one in assembly",
               "1.00x to 1.03x the est. cycles of Os on the M4 where FULLY_CONNECTED does little of the work (KWS "
               "DS-CNN, VWW MobileNet, IC ResNet-8 1.00x, TFLM micro_speech 1.03x), the MLPerf Tiny autoencoder 1.38x "
               "(bench/flash_budget.py)", compact_fc=True),
    FlashLevel("general", "-Os", False, "the library at -Os with the specialised M-profile conv and depthwise "
               "paths left out (1 x 1 by rows, the depthwise ring, columns and stride 2, doubled sums): the layers "
               "by the general DSP paths",
               "1.00x to 1.28x the est. cycles of -Os on the M4 (KWS DS-CNN 1.12x, VWW MobileNet 1.28x, IC "
               "ResNet-8 1.02x; bench/flash_budget.py, docs/firmware.md)", general=True, compact_fc=True),
    FlashLevel("dw-compact", "-Os", False, "the library at -Os, the convs by the general DSP paths and the depthwise "
               "layers by the compact DSP path (one loop of 4 channels a tap, no ring, band, columns or stride-2 code; "
               "a depth multiplier above 1 by the compact multiplier path: SMLAD on column pairs in C, no ring)",
               "1.29x to 1.48x the est. cycles of the general level on the M4 (KWS DS-CNN 1.41x, VWW MobileNet 1.29x, "
               "TFLM micro_speech's depth multiplier 8 layer 1.48x; bench/flash_budget.py)", general=True,
               compact_dw=True, compact_fc=True),
    FlashLevel("conv-compact", "-Os", False, "the library at -Os, the convs and the depthwise layers by the compact "
               "DSP paths (two positions' patches and 2 x 2 SMLADs a quad; 4 channels a tap): no other conv or "
               "depthwise code",
               "1.3x to 1.5x the est. cycles of the dw-compact level on the M4 (KWS DS-CNN 1.29x, VWW MobileNet "
               "1.44x, IC ResNet-8 1.47x; bench/flash_budget.py)", general=True, compact_dw=True, compact_conv=True,
               compact_fc=True),
    FlashLevel("dwm-single", "-Os", False, "as conv-compact, and the depthwise layers of depth multiplier above 1 by "
               "the compact multiplier path one position a turn (no second position's sums or store)",
               "1.45x the est. cycles of conv-compact on the M4 for 0.5 KB less (TFLM micro_speech; elsewhere the "
               "conv-compact bundle; bench/flash_budget.py)",
               general=True, compact_dw=True, compact_conv=True, compact_fc=True, single_dwm=True),
    FlashLevel("dw-plain", "-Os", False, "the library at -Os, the convs by the compact DSP path and the depthwise "
               "layers by the plain loop (no depthwise DSP code)",
               "1.30x to 1.49x the est. cycles of the level before on the M4 (KWS DS-CNN 1.30x, VWW MobileNet "
               "1.36x, TFLM person_detect 1.49x: the plain depthwise loop, its window clipped once a position, 4 "
               "channels at a time, depth multiplier 1 without divisions; TFLM micro_speech 1.42x dwm-single's; "
               "bench/flash_budget.py)",
               general=True, plain_dw=True, compact_conv=True, compact_fc=True, plain_m1=True),
    FlashLevel("fc-small", "-Os", False, "as dw-plain, and FULLY_CONNECTED by its smallest DSP path (one output a "
               "turn, requantised at once: no sums in scratch), the plain depthwise loop dividing at every depth "
               "multiplier",
               "1.00x to 1.03x the est. cycles of dw-plain on the M4 where FULLY_CONNECTED does little of the work "
               "(the plain depthwise loop dividing at multiplier 1 too: KWS DS-CNN 1.03x, person_detect 1.01x), the "
               "autoencoder 1.43x fc-compact's (bench/flash_budget.py)",
               general=True, plain_dw=True, compact_conv=True, compact_fc=True, small_fc=True),
    FlashLevel("conv-small", "-Os", False, "as fc-small, and the convs by the compact DSP path one position at a "
               "time, two output channels a turn in C, where the portable kernels' faster loops do not pay",
               "1.44x the est. cycles of fc-small on the M4 for 1.1 KB less (IC ResNet-8; elsewhere the fc-small "
               "bundle; bench/flash_budget.py)",
               general=True, plain_dw=True, compact_conv=True, compact_fc=True, small_fc=True, small_conv=1),
    FlashLevel("conv-smallest", "-Os", False, "as conv-small, one output channel a turn",
               "1.36x the est. cycles of conv-small on the M4 for 0.2 KB less (IC ResNet-8; bench/flash_budget.py)",
               general=True, plain_dw=True, compact_conv=True, compact_fc=True, small_fc=True, small_conv=2),
    FlashLevel("portable", "-Os", True, "the library at -Os with the portable kernels instead of the ISA paths "
               "(AOTC_NO_INTRINSICS: no DSP-extension, Helium or AVX code; the TFLite int8 kernels then take no "
               "scratch), in their faster loops (1 x 1 convs in 2 x 2 blocks, FULLY_CONNECTED 4 outputs at a time)",
               "1.2x to 1.5x the est. cycles of the level before on the M4 (KWS DS-CNN 1.48x, VWW MobileNet 1.34x, "
               "IC ResNet-8 1.42x, TFLM micro_speech 1.37x, the autoencoder 1.25x; bench/flash_budget.py)"),
    FlashLevel("portable-fc2", "-Os", True, "the portable kernels in their smallest loops (AOTC_TFL_PORTABLE_FAST 0), "
               "FULLY_CONNECTED two outputs a turn where it does half the model's work",
               "1.39x the est. cycles of the portable level on the M4 for 88 B less on the autoencoder (elsewhere the "
               "portable-small bundle; bench/flash_budget.py)", small=True, fc_pairs=True),
    FlashLevel("portable-small", "-Os", True, "the portable kernels in their smallest loops (AOTC_TFL_PORTABLE_FAST "
               "0): the least flash",
               "1.0x to 1.6x the est. cycles of the portable level on the M4 for 0.2-2.7 KB less (the autoencoder "
               "1.45x portable-fc2's; bench/flash_budget.py)",
               small=True),
)

UNWIDENED = FlashLevel("unwidened", None, False, "the CONV_2D weights widened at run time, not stored widened "
                       "(--widened-weights dropped)",
                       "1.034x the est. cycles of the widened weights on the M4 (VWW MobileNet int8, 12.79 M against "
                       "12.36 M at -O3; IC ResNet-8 1.056x; docs/firmware.md)",
                       widened=False)


# levels measured slower on the M55 than a smaller level after them (`aotc curve --target mps3-an547 --curve flash`,
# est. cycles against level none: "O2" 1.054x and 1.023x against "Os"'s 1.024x and 1.002x on KWS DS-CNN and VWW
# MobileNet; "general" 1.042x and 1.021x against "dw-compact"'s 1.025x and 1.002x, Helium's kernels taking the
# layers at both), so a budget there skips them
HELIUM_SKIPPED = frozenset({"O2", "general"})


_DSP_SMALL = dict(general=True, compact_conv=True, compact_fc=True, small_fc=True)
# The M55's levels between Helium's kernels and the portable ones (issue 67), after conv-smallest (on the M55 the
# fc-small bundle: Helium's convs take the layers there), each leaving out one more of Helium's kernel families
# (AOTC_TFL_MVE_FC, _DW, _CONV: dsp_paths.MVE_FAMILIES), the layers then by the DSP levels' paths as on the M4
HELIUM_LEVELS = (
    FlashLevel("mve-fc", "-Os", False, "as fc-small, and FULLY_CONNECTED by its smallest DSP path instead of Helium's "
               "(no Helium FULLY_CONNECTED code)",
               "1.00x the est. cycles of fc-small on the M55 where FULLY_CONNECTED does little of the work (KWS "
               "DS-CNN; aotc curve --target mps3-an547, docs/firmware.md)", **_DSP_SMALL, plain_dw=True,
               mve_off=("fc",)),
    FlashLevel("mve-conv-compact", "-Os", False, "as mve-fc, and Helium's CONV_2D in its general loop alone (a "
               "position's patch, 4 channels a dot product, requantised by the general vector form; no 1 x 1, "
               "grouped or window-row assembly loops)",
               "1.22x to 1.35x the est. cycles of mve-fc on the M55 for 1.7 KB less (KWS DS-CNN 1.29x, VWW MobileNet "
               "1.35x, IC ResNet-8 1.22x; aotc curve --target mps3-an547, docs/firmware.md)", **_DSP_SMALL,
               plain_dw=True, mve_off=("fc", "conv-fast")),
    FlashLevel("mve-dw-compact", "-Os", False, "as mve-conv-compact, and the depthwise layers of multiplier 1 by "
               "Helium's compact loop instead of its 3 x 3 depthwise (8 channels a vector in 16-bit lanes, any window, "
               "stride or dilation; no assembly, no compact DSP depthwise)",
               "1.25x to 1.26x the est. cycles of mve-conv-compact on the M55 for 3.2 KB less (KWS DS-CNN 1.25x, VWW "
               "MobileNet 1.26x; IC ResNet-8, no depthwise layer, its bundle); faster than the compact DSP depthwise's "
               "former level mve-dw in less flash (each level compiled alone, Release, mps3-an547; docs/firmware.md)",
               **_DSP_SMALL,
               compact_dw=True, mve_off=("fc", "conv-fast", "dw")),
    FlashLevel("mve-dw-small", "-Os", False, "as mve-dw-compact, and every depthwise layer by Helium's loop of last "
               "resort (4 channels a vector in 32-bit lanes, their input bytes gathered; no compact loop, no DSP "
               "depthwise)",
               "1.30x to 1.35x the est. cycles of mve-dw-compact on the M55 for 0.7 KB less (KWS DS-CNN 1.35x, VWW "
               "MobileNet 1.30x; IC ResNet-8, no depthwise layer, its bundle), then mve-conv-single8 1.13x and 1.15x "
               "its (each level compiled alone, Release, mps3-an547; docs/firmware.md)",
               **_DSP_SMALL, compact_dw=True, mve_off=("fc", "conv-fast", "dw", "dw-compact")),
    FlashLevel("mve-conv-single8", "-Os", False, "as mve-dw-small, and Helium's CONV_2D each output channel's dot "
               "product alone, 16 bytes a turn in 8-bit lanes (VMLADAVA.S8), 4 channels still requantised as one "
               "vector",
               "1.39x the est. cycles of mve-conv-compact on the M55 for 32 B less (IC ResNet-8, no depthwise layer), "
               "then mve-conv-single 1.01x its for 1.6 KB less; KWS DS-CNN 1.13x mve-dw-small's for 16 B less, then "
               "mve-conv-single 1.02x (VWW MobileNet 1.15x, 1.00x; docs/firmware.md)",
               **_DSP_SMALL, compact_dw=True, mve_off=("fc", "conv-fast", "dw", "dw-compact", "conv-quad")),
    FlashLevel("mve-conv-single", "-Os", False, "as mve-dw-small, and Helium's CONV_2D each output channel's dot "
               "product alone, 16 bytes a turn in 8-bit lanes (VMLADAVA.S8, as mve-conv-single8), 4 channels still "
               "requantised as one vector; FULLY_CONNECTED (where it does under half the model's work) and "
               "AVERAGE_POOL_2D by their plain loops (no DSP code of theirs)",
               "1.02x to 1.03x the est. cycles of mve-conv-single8 on the M55 for 0.8 to 1.6 KB less (KWS DS-CNN "
               "2.66x level none's, VWW MobileNet 2.66x, TFLM micro_speech 1.79x, IC ResNet-8 1.72x), then "
               "portable-mve-dot8 1.24x, 1.04x and 1.47x its (KWS, VWW, IC ResNet-8; portable-mve 1.52x, 1.39x and "
               "1.86x before it), micro_speech portable-mve 1.39x (each level compiled alone, Release, mps3-an547; "
               "docs/firmware.md)",
               **_DSP_SMALL, compact_dw=True,
               mve_off=("fc", "conv-fast", "dw", "dw-compact", "conv-quad", "fc-dsp", "pool-dsp")),
    FlashLevel("portable-mve-s8", "-Os", True, "the portable kernels with Helium's dot products and requantisation "
               "(as portable-mve), the conv 4 output channels at a time over every position, its dot products of x's "
               "bytes as they are (16 a VMLADAVA.S8), x's zero point taken off by the weights' sums",
               "1.2x to 2.0x the est. cycles of the level before it on the M55 for 0.2 to 1.5 KB less (KWS DS-CNN 2.0x "
               "mve-conv-compact's; VWW MobileNet 1.20x the compact DSP depthwise's; IC ResNet-8 1.64x "
               "mve-conv-compact's), then portable-mve 1.50x, 1.23x and 1.58x its (aotc curve --target mps3-an547, "
               "docs/firmware.md)", mve_loops=4),
    FlashLevel("portable-mve-dot8", "-Os", True, "the portable kernels with Helium's dot products and requantisation "
               "(as portable-mve), and the convs that do the work 4 output channels at a time over every position by "
               "dot products of x's bytes as they are (16 a VMLADAVA.S8), x's zero point taken off by the weights' "
               "sums: the pointwise layers, or where windows above 1 x 1 lead, the layers whose window rows are whole "
               "vectors",
               "1.24x the est. cycles of mve-conv-single on the M55 for 14 B less, then portable-mve 1.22x its (KWS "
               "DS-CNN); VWW MobileNet 1.04x and 1.34x; IC ResNet-8 1.47x for 0.9 KB less, then 1.26x; TFLM "
               "micro_speech, no such layer, portable-mve's library (bench/flash_budget.py, docs/firmware.md)",
               mve_loops=5),
    FlashLevel("portable-mve", "-Os", True, "the portable kernels (as the portable level), their conv and depthwise "
               "loops' dot products by a few Helium instructions (8 bytes a VMLADAVA.S16; 4 channels a tap) and their "
               "outputs (and the conv's fused ADD) requantised 4 channels a vector",
               "1.42x the est. cycles of mve-dw on the M55 for 4.2 KB less (KWS DS-CNN; VWW MobileNet 1.47x), IC "
               "ResNet-8 2.59x mve-conv-compact's for 4.0 KB less (aotc curve --target mps3-an547, docs/firmware.md)",
               mve_loops=3),
    FlashLevel("portable-mve-rqconv", "-Os", True, "the portable kernels with Helium's dot products (as portable-mve), "
               "the conv's outputs alone requantised 4 channels a vector: the depthwise layers' and the fused ADD's "
               "one by one in C",
               "1.30x the est. cycles of portable-mve on the M55 for 116 B less (KWS DS-CNN; VWW MobileNet 1.30x, IC "
               "ResNet-8 1.41x for 28 B less), then portable-mve-dots 1.18x, 1.26x and 1.19x its (1.54x, 1.64x and "
               "1.68x from portable-mve before; docs/firmware.md)", mve_loops=3, rq_conv_only=True),
    FlashLevel("portable-mve-dots", "-Os", True, "the portable kernels, their conv and depthwise loops' dot products "
               "by a few Helium instructions (as portable-mve), their outputs requantised one by one in C",
               "1.47x the est. cycles of portable-mve on the M55 for 296 B less (KWS DS-CNN; VWW MobileNet 1.58x, IC "
               "ResNet-8 1.69x for 432 B less; docs/firmware.md)", mve_loops=2),
    FlashLevel("portable-mve-conv", "-Os", True, "the portable kernels, their conv loop's dot products by a few Helium "
               "instructions (as portable-mve), the depthwise loop in C",
               "1.17x the est. cycles of portable-mve-dots on the M55 for 136 B less (KWS DS-CNN; VWW MobileNet 1.16x; "
               "IC ResNet-8, no depthwise layer, the same bundle), no larger than the portable level at 0.59x its "
               "cycles (docs/firmware.md)", mve_loops=1),
)


def levels(widened_weights: bool, helium: bool = False, o2: bool = True) -> tuple[FlashLevel, ...]:
    """The levels a --flash-budget tries: with --widened-weights, dropping its constants first, then the
    others without them; on the M55 (`helium`) without HELIUM_SKIPPED, and HELIUM_LEVELS before the portable ones;
    without O2 where it is known no faster than Os (`o2` False: dsp_paths.windowed_convs_lead), so that a budget O2
    would meet takes the smaller Os, not a slower point (issue 67, monotone budgets)."""
    skipped = (HELIUM_SKIPPED if helium else frozenset()) | (frozenset() if o2 else {"O2"})
    ladder = tuple(lv for lv in LEVELS if lv.name not in skipped) or LEVELS
    at = next((i + 1 for i, lv in enumerate(ladder) if lv.name == "conv-smallest"), None)  # (None: a ladder narrowed
    if helium and at is not None:  # to a level, as tests and bench/flash_budget.py narrow LEVELS)
        ladder = (*ladder[:at], *HELIUM_LEVELS, *ladder[at:])
    if not widened_weights:
        return ladder
    return (ladder[0], UNWIDENED, *(replace(level, widened=False) for level in ladder[1:]))


@dataclass
class FlashMeasure:
    """The library's flash as the footprint counts it: text + data of what a --gc-sections link of lib<name>.a
    keeps (the whole archive's where it cannot be linked so), its code by source file."""
    total: int
    code: int  # executable sections
    constants: int  # the rest: weights, constant arrays, params
    code_by_file: dict[str, int] = field(default_factory=dict)  # most first

    def describe(self) -> str:
        files = ", ".join(f"{f} {b:,} B" for f, b in list(self.code_by_file.items())[:4])
        return f"weights and constants {self.constants:,} B, code {self.code:,} B ({files})"


def with_level(bundle: Bundle, level: FlashLevel) -> Bundle:
    """The bundle whose CMakeLists.txt compiles its library at the level's flag and defines."""
    if level.opt is None and not level.portable:
        return bundle
    lines = [f"# --flash-budget, level {level.name} (aot/flash.py): {level.what}"]
    if level.opt and level.cold:
        if bundle.cold_sources:
            lines.append(f"if(CMAKE_C_COMPILER_ID MATCHES \"GNU|Clang\")\n"
                         f"  set_source_files_properties({' '.join(bundle.cold_sources)}\n"
                         f"    PROPERTIES COMPILE_OPTIONS {level.opt})\nendif()")
    elif level.opt:
        lines.append(f"if(CMAKE_C_COMPILER_ID MATCHES \"GNU|Clang\")\n"
                     f"  target_compile_options({bundle.name} PRIVATE $<$<COMPILE_LANGUAGE:C>:{level.opt}>)\nendif()")
    if level.portable:
        lines.append(f"target_compile_definitions({bundle.name} PRIVATE AOTC_NO_INTRINSICS=1)")
    text = bundle.files["CMakeLists.txt"]
    anchor = "if(AOTC_TAPS)\n"
    if anchor not in text:
        raise AotcError("--flash-budget: the bundle's CMakeLists.txt has no place for the library's flags")
    files = {**bundle.files, "CMakeLists.txt": text.replace(anchor, "\n".join(lines) + "\n" + anchor, 1)}
    return Bundle(bundle.name, files, bundle.metadata, bundle.cold_sources)


def measure(bundle: Bundle, target: str, build_type: str) -> FlashMeasure:
    """Build the bundle's library (not the runner) in a scratch tree with the target's compiler at
    `build_type`, and measure it as aotc footprint does."""
    from aot.build import cmake_exe, configure

    work = Path(tempfile.mkdtemp(prefix="aotc-flash-"))
    try:
        bundle.write(work / "bundle")
        configure(work, target, [f"-D{bundle.name.upper()}_BUILD_RUNNER=OFF"], build_type)
        r = subprocess.run([cmake_exe(), "--build", str(work), "--target", bundle.name, "-j", "2"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            tail = " ".join((r.stdout + r.stderr).strip().splitlines()[-3:])
            raise AotcError(f"--flash-budget: building the library to measure it failed: {tail}")
        own = {Path(f).name for f in bundle.files if f.startswith("src/") and Path(f).suffix in (".c", ".S")
               and Path(f).name != "runner.c"}
        return library_flash(work / f"lib{bundle.name}.a", cmake_linker(work), own)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def library_flash(lib: Path, linker: str | None = None, own: set[str] | frozenset[str] = frozenset()) -> FlashMeasure:
    """text + data (binutils size's classes) of what `linker`'s --gc-sections link of the library keeps from the
    global symbols of the model's own objects (`own`: their source files' names), as aotc footprint counts it;
    of the archive's members where there is no such link. Split into code and constants."""
    kept = linked(lib, linker, model_roots(lib, set(own))) if linker else None
    if kept is not None:
        sizes = {k: v for k, v in kept.sizes().items() if k != "bss"}
        ex = sum(s.size for s in kept.sections if s.flags & SHF_ALLOC and s.flags & SHF_EXECINSTR)
        files = {f.removesuffix(".obj").removesuffix(".o"): b for f, b in code_by_file(kept, lib)[0].items()
                 if f != "(other)"}
        return FlashMeasure(sum(sizes.values()), ex, sum(sizes.values()) - ex, files)
    code = constants = 0
    by_file: dict[str, int] = {}
    for member, body in archive_members(lib.read_bytes()):
        if body[:4] != b"\x7fELF":
            continue
        elf = parse_elf(body)
        kinds = {k: v for k, v in elf.sizes().items() if k != "bss"}
        ex = sum(s.size for s in elf.sections if s.flags & SHF_ALLOC and s.flags & SHF_EXECINSTR)
        code += ex
        constants += sum(kinds.values()) - ex
        if ex:
            name = member.removesuffix(".obj").removesuffix(".o")
            by_file[name] = by_file.get(name, 0) + ex
    return FlashMeasure(code + constants, code, constants,
                        dict(sorted(by_file.items(), key=lambda kv: -kv[1])))


def fit(budget: int, ladder: Sequence[FlashLevel], bundle_at: Callable[[FlashLevel], Bundle], target: str,
        build_type: str) -> Bundle:
    """The bundle at the first level of `ladder` whose library meets the budget (`bundle_at(level)`: the
    compiler's bundle for a level, before with_level), metadata.json saying what was traded; else
    FlashBudgetError. Each level measured is a library build, so the last (smallest) level is measured right
    after the first: a budget no level meets is refused after two builds, not one a level, for one build more
    where a level between meets it (on the M55, whose portable-mve levels can be smaller than the last, a budget the
    last misses is refused after those too). A level that builds what another measured did (same files and flags: a
    "general" on a model without M-profile paths) takes its measure."""
    measured: list[tuple[tuple[Any, ...], FlashMeasure]] = []
    tried: list[tuple[FlashLevel, FlashMeasure]] = []

    def at(level: FlashLevel) -> tuple[Bundle, FlashMeasure]:
        bundle = bundle_at(level)
        key = (bundle.files, level.opt, level.portable, level.cold)  # a level's own flags go in with_level
        bundle = with_level(bundle, level)
        got = next((m for k, m in measured if k == key), None) or measure(bundle, target, build_type)
        measured.append((key, got))
        tried.append((level, got))
        tried.sort(key=lambda t: ladder.index(t[0]))
        return bundle, got

    def kept(level: FlashLevel, bundle: Bundle, got: FlashMeasure) -> Bundle:
        bundle.metadata["flash_budget"] = report(budget, build_type, level, got, tried)
        bundle.files["metadata.json"] = json.dumps(bundle.metadata, indent=2) + "\n"
        return bundle

    first, *between, last = [*ladder, ladder[-1]] if len(ladder) == 1 else ladder
    bundle, got = at(first)
    if got.total <= budget:
        return kept(first, bundle, got)
    smallest, least = (bundle, got) if last is first else at(last)
    # the M55's portable-mve levels can take less than the portable ones after them (KWS DS-CNN: portable-mve-conv's
    # 34,544 B against portable's 34,552 B, the conv's dot products in Helium smaller than in C): a budget the last
    # misses is then refused only after them
    below = any(lv.mve_loops for lv in between)
    if least.total > budget and not below:
        raise FlashBudgetError(refusal(budget, tried), min(m.total for _, m in tried))
    for level in between:
        bundle, got = at(level)
        if got is least and level.fc_pairs:  # portable-fc2 where FULLY_CONNECTED does little: portable-small's library,
            break  # named as that
        if got.total <= budget:
            return kept(level, bundle, got)
    if least.total > budget:
        raise FlashBudgetError(refusal(budget, tried), min(m.total for _, m in tried))
    return kept(last, smallest, least)


def report(budget: int, build_type: str, level: FlashLevel, got: FlashMeasure,
           tried: list[tuple[FlashLevel, FlashMeasure]]) -> dict[str, Any]:
    """metadata.json's flash_budget: the budget, the flash measured at the level kept and without the
    budget, what the level traded and each level tried on the way."""
    first = tried[0][1]
    return {
        "flash_budget_bytes": budget,
        "flash_bytes": got.total,
        "unbudgeted_flash_bytes": first.total,
        "weights_and_constants_bytes": got.constants,
        "code_bytes": got.code,
        "code_bytes_by_file": got.code_by_file,
        "level": level.name,
        "traded": {"what": level.what, "bytes_saved": first.total - got.total, "cost": level.cost},
        "levels_tried": [{"level": lv.name, "flash_bytes": m.total, "code_bytes": m.code} for lv, m in tried],
        "measured": f"lib<name>.a built at compile time by the bundle's CMakeLists.txt, build type {build_type}, "
                    "text + data as aotc footprint's model.flash_bytes (configure with the same build type)",
    }


class FlashBudgetError(AotcError):
    """--flash-budget below the least flash any level reaches (least_bytes: for tools that step budgets down,
    aot/curve.py)."""

    def __init__(self, message: str, least_bytes: int):
        super().__init__(message)
        self.least_bytes = least_bytes


def refusal(budget: int, tried: list[tuple[FlashLevel, FlashMeasure]]) -> str:
    """One line: the budget, what takes the flash, and the least any level reached (and at which)."""
    level, least = min(tried, key=lambda t: t[1].total)
    first = tried[0][1]
    return (f"--flash-budget {budget:,} B: the library needs {first.total:,} B of flash ({first.describe()}); "
            f"the least aotc reaches is {least.total:,} B at level {level.name} ({level.what}: {least.describe()}); "
            "the weights are stored as the model gives them, so a smaller budget needs a smaller model")
