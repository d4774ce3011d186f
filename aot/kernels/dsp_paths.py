"""Which M-profile paths of the TFLite int8 CONV_2D and DEPTHWISE_CONV_2D kernels a bundle compiles (issue 67).

tfl_conv_s8_dsp and tfl_depthwise_s8_dsp choose among their paths at run time (1 x 1 by rows, 3 channels, the sums
requantised in the MAC kernel or apart, doubled or not; the depthwise ring, columns, stride 2, the plain paths; each
in a kernel for an output zero point of -128 and one for the others), so the linker keeps every path's code in any
model with such a layer: the depthwise file's 40 KB on the KWS DS-CNN, which takes about a third of it. The
compiler knows each layer's shapes and requantisation, so it knows the paths the layers take: the others are left
out of the bundle's kernel configuration (runtime/aotc_symbols.h defines their AOTC_TFL_* macros 0, aotc_tflite_int8.h
says what each path is) and their code is not compiled at all.

What is decided here mirrors the C dispatchers' tests on what they read (a path's test here taking in at least the
layers the C sends there), and a prediction that missed would cost instructions, never a result: a path left out
falls to one compiled (the band, else the plain loop), the same integers (tests/kernels/test_dsp_paths.py builds
bundles with each path left out and compares). Being part of the kernel configuration, the paths key the prefix
of the names the conv's and the depthwise's files define (SymbolConfig.prefix_of): two bundles that compile
different paths define different names there, and the same names, from the same objects, for every other kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from aot.ir import Graph, Node
from aot.kernels.base import KernelChoice
from aot.kernels.tflite_int8 import (
    DSP_DW_RUN,
    _conv_dsp_scratch,
    _depthwise_band,
    _dsp_fused,
    _dw_fused,
    dsp_block_quads,
)

# every path macro (aotc_tflite_int8.h), all 1 by default
DW_PATHS = ("AOTC_TFL_DW_DSP", "AOTC_TFL_DW_PRE", "AOTC_TFL_DW_RING", "AOTC_TFL_DW_SAME", "AOTC_TFL_DW_COLUMNS",
            "AOTC_TFL_DW_S2", "AOTC_TFL_DW_PLAIN", "AOTC_TFL_DW_FLOOR", "AOTC_TFL_DW_SIGN", "AOTC_TFL_DW_MULT",
            "AOTC_TFL_DW_MULT_WIDE", "AOTC_TFL_DW_COMPACT", "AOTC_TFL_DW_LOOP_SMALL", "AOTC_TFL_DW_MULT_COMPACT",
            "AOTC_TFL_DW_LOOP_MULT4", "AOTC_TFL_DW_SMALL_MULT4")
CONV_PATHS = ("AOTC_TFL_CONV_ROWS", "AOTC_TFL_CONV_RGB", "AOTC_TFL_CONV_FUSED", "AOTC_TFL_CONV_SINGLE",
              "AOTC_TFL_CONV_DBL", "AOTC_TFL_CONV_FLOOR", "AOTC_TFL_CONV_SIGN", "AOTC_TFL_CONV_ODD",
              "AOTC_TFL_CONV_PLAIN", "AOTC_TFL_CONV_RESIDUAL", "AOTC_TFL_CONV_LAST", "AOTC_TFL_CONV_COMPACT")
# FULLY_CONNECTED's: its DSP path (left out at the "fc-compact" --flash-budget level and after, the compact one instead)
# and the compact one's two outputs a turn (left out at "fc-small": one a turn); on the M55 neither's rows are compiled
# where Helium's FULLY_CONNECTED is (tflite_int8_fc.c TFL_FC_DSP_ROWS: it takes every layer they would)
FC_PATHS = ("AOTC_TFL_FC_DSP", "AOTC_TFL_FC_PAIRS")
# the DSP path's blocks under a RAM budget (tfl_fc_s8_dsp_blocks: x widened kq quads, the sums of ob outputs at a
# time; the smallest DSP path's chunks of x), compiled only where a layer's choice takes them: beside the whole rows'
# loop they cost every unbudgeted build cycles and flash (issue 67)
FC_BLOCK_PATHS = ("AOTC_TFL_FC_BLOCKS",)
# the compact conv path's 2 x 2 kernel and, in its one-position form, its two channels a turn (left out at the
# "conv-small" and "conv-smallest" levels)
SMALL_CONV_PATHS = ("AOTC_TFL_CONV_2X2", "AOTC_TFL_CONV_PAIRS")
# the compact multiplier path's two positions a turn (left out at the "dwm-single" level: one a turn)
MULTC_PATHS = ("AOTC_TFL_DW_MULTC_PAIRS",)
# the plain depthwise loop's faster form at depth multiplier 1 without divisions (kept at the "dw-plain" level alone;
# left out at the levels after it where a layer has multiplier 1, and on the M55, whose Helium depthwise takes those)
LOOP_M1_PATHS = ("AOTC_TFL_DW_LOOP_M1",)
PATHS = DW_PATHS + CONV_PATHS + FC_PATHS + FC_BLOCK_PATHS + SMALL_CONV_PATHS + MULTC_PATHS + LOOP_M1_PATHS
# the portable kernels' faster loops (--flash-budget level "portable"; "portable-small" leaves them out)
PORTABLE_FAST = "AOTC_TFL_PORTABLE_FAST"
# the portable kernels' conv and depthwise dot products by Helium intrinsics on the M55 (the "portable-mve" level, issue
# 67; left out at the portable levels after it, and read only where Helium and AOTC_NO_INTRINSICS are both there)
PORTABLE_MVE = "AOTC_TFL_PORTABLE_MVE"
# and their outputs requantised 4 channels a vector (left out at "portable-mve-dots": one by one in C), and the
# depthwise loop's by Helium (left out at "portable-mve-conv": the conv's alone)
PORTABLE_MVE_RQ = "AOTC_TFL_PORTABLE_MVE_RQ"
PORTABLE_MVE_DW = "AOTC_TFL_PORTABLE_MVE_DW"
# the depthwise loop's requantisation by vectors and the conv's fused ADD's (left out at "portable-mve-rqconv": the
# conv's outputs alone requantised 4 channels a vector)
PORTABLE_MVE_RQ_DW = "AOTC_TFL_PORTABLE_MVE_RQ_DW"
PORTABLE_MVE_RQ_ADD = "AOTC_TFL_PORTABLE_MVE_RQ_ADD"
# and the conv 4 output channels at a time over every position, its dot products of x's bytes as they are, x's zero
# point taken off by the weights' sums (the "portable-mve-s8" level; left out at the portable-mve levels after it)
PORTABLE_MVE_S8 = "AOTC_TFL_PORTABLE_MVE_S8"
# or the convs 4 output channels at a time over every position by 8-bit dot products, x's zero point taken off by the
# weights' sums, in less code: the pointwise layers', and the windows' where windows above 1 x 1 lead (the
# "portable-mve-dot8" level, each where it applies: dot8_paths; left out at the others)
PORTABLE_MVE_PW = "AOTC_TFL_PORTABLE_MVE_PW"
PORTABLE_MVE_WIN = "AOTC_TFL_PORTABLE_MVE_WIN"
# Helium's 3 x 3 depthwise only with the DSP depthwise paths (0: on its own, where a level leaves those out)
MVE_DW_WITH_DSP = "AOTC_TFL_DW_MVE_WITH_DSP"
# Helium's kernels by family (issue 67), left out at the M55's --flash-budget levels between them and the portable
# kernels (aot/flash.py HELIUM_LEVELS): FULLY_CONNECTED's, the 3 x 3 depthwise's, CONV_2D's (and the fused ADD's conv)
MVE_FAMILIES = {"fc": "AOTC_TFL_MVE_FC", "dw": "AOTC_TFL_MVE_DW", "conv": "AOTC_TFL_MVE_CONV",
                "fc-quad": "AOTC_TFL_MVE_FC_QUAD",  # (fc-quad: FULLY_CONNECTED's 4 outputs a dot product)
                "conv-fast": "AOTC_TFL_MVE_CONV_FAST",  # (conv-fast: its faster loops, the general one kept)
                "conv-quad": "AOTC_TFL_MVE_CONV_QUAD",  # (conv-quad: the general loop's 4 channels a dot product)
                "dw-compact": "AOTC_TFL_MVE_DW_COMPACT",  # (where "dw" is off: Helium's compact depthwise loop)
                # and the DSP extension's code of the layers that do little of the work, which the M55's last Helium
                # level leaves out too (their plain loops then: FULLY_CONNECTED's smallest DSP path, AVERAGE_POOL_2D's)
                "fc-dsp": "AOTC_TFL_FC_SMALL", "pool-dsp": "AOTC_TFL_POOL_DSP"}
# the kernel files whose code reads the path macros (tests/kernels/test_dsp_paths.py checks no other does): their
# names take a prefix keyed by the paths left out of them (SymbolConfig.prefix_of), every other file's do not
FILE_PATHS = {"tflite_int8_conv.c": (*CONV_PATHS, *SMALL_CONV_PATHS, PORTABLE_FAST, MVE_FAMILIES["conv"],
                                     MVE_FAMILIES["conv-fast"], MVE_FAMILIES["conv-quad"], PORTABLE_MVE,
                                     PORTABLE_MVE_RQ, PORTABLE_MVE_DW, PORTABLE_MVE_S8, PORTABLE_MVE_RQ_ADD,
                                     PORTABLE_MVE_PW, PORTABLE_MVE_WIN),
              "tflite_int8_depthwise.c": (*DW_PATHS, *MULTC_PATHS, *LOOP_M1_PATHS, PORTABLE_FAST, MVE_DW_WITH_DSP,
                                          MVE_FAMILIES["dw"], MVE_FAMILIES["dw-compact"], PORTABLE_MVE, PORTABLE_MVE_RQ,
                                          PORTABLE_MVE_DW, PORTABLE_MVE_RQ_DW),
              "tflite_int8_fc.c": (*FC_PATHS, *FC_BLOCK_PATHS, PORTABLE_FAST, MVE_FAMILIES["fc"],
                                   MVE_FAMILIES["fc-quad"], MVE_FAMILIES["fc-dsp"]),
              "tflite_int8_pool.c": (MVE_FAMILIES["pool-dsp"],)}

_CONV = ("aotc_tfl_conv_s8", "aotc_tfl_conv_add_s8")

# the specialised paths, which a --flash-budget level ("general", aot/flash.py) leaves out however the layers are:
# 1 x 1 by rows and 3 channels by the general patch path, the depthwise ring, columns and stride 2 by the band, the
# doubled sums by the sums as they are, the last block requantised in the kernel by the store
SPECIALISED = ("AOTC_TFL_CONV_ROWS", "AOTC_TFL_CONV_RGB", "AOTC_TFL_CONV_DBL", "AOTC_TFL_CONV_FLOOR",
               "AOTC_TFL_CONV_SIGN", "AOTC_TFL_CONV_LAST", "AOTC_TFL_DW_RING", "AOTC_TFL_DW_SAME",
               "AOTC_TFL_DW_COLUMNS", "AOTC_TFL_DW_S2", "AOTC_TFL_DW_FLOOR", "AOTC_TFL_DW_SIGN")


def depthwise_paths(node: Node, graph: Graph, choice: KernelChoice) -> set[str]:
    """The paths tfl_depthwise_s8_pre and tfl_depthwise_s8_dsp may take on the node (its choice: the plan's run of
    sums in detail where a RAM budget shortened it)."""
    a = node.attrs
    _, h, w, c = graph.tensors[node.inputs[0]].shape
    _, oh, ow, oc = graph.tensors[node.outputs[0]].shape
    if oc != c:  # a depth multiplier above 1: tfl_depthwise_s8_mult where it has scratch (in C past 5 column pairs)
        wide = {"AOTC_TFL_DW_MULT_WIDE"} if a["kernel"][1] > 10 else set()
        return {"AOTC_TFL_DW_MULT", *wide} if choice.scratch > 0 else set()
    shortened = choice.detail is not None
    band = _depthwise_band(node, shortened)
    need: set[str] = {"AOTC_TFL_DW_DSP"}
    if choice.facts.widened_weights:
        need.add("AOTC_TFL_DW_PRE")
    if not (band and _dw_fused(node, graph)):  # a group the fused 3 x 3 paths do not take
        need.add("AOTC_TFL_DW_PLAIN")
    if not band or a["y_min"] != -128 or a["y_max"] != 127:
        return need
    sh, sw = a["strides"]
    run = min(DSP_DW_RUN, oh * ow)
    ph, pw = (oh - 1) * sh + 3, (ow - 1) * sw + 3
    rounding = "AOTC_TFL_DW_FLOOR" if a["y_zero"] == -128 else "AOTC_TFL_DW_SIGN"
    if sh <= 2 and ow < oh and 3 * ph <= 3 * pw + 4 * run:  # tfl_dsp_dw_columns (y apart from x)
        need.add("AOTC_TFL_DW_COLUMNS")
        return need
    if sw == 1 and 12 * ((ow + 1) // 2 + 1) <= 4 * run + 3 * pw:  # tfl_dsp_dwp_fits: the ring
        need |= {"AOTC_TFL_DW_RING", rounding}
        pt, pl = a["pads"][0], a["pads"][1]
        if pl == 1 and ow == w and pt == 1 and sh == 1 and oh == h and (ow % 6 == 0 or ow == 3):  # tfl_dsp_dwp_same
            need.add("AOTC_TFL_DW_SAME")
    elif sw == 2:
        need |= {"AOTC_TFL_DW_S2", rounding}
    return need


def conv_paths(node: Node, graph: Graph, choice: KernelChoice) -> set[str]:
    """The paths tfl_conv_s8_dsp may take on the node at its tile (choice.detail), as it decides them: 1 x 1 by
    rows, 3 channels 3 x 3, the sums requantised in the MAC kernel (fused) or apart (the last block's, or the only
    one's, by tfl_dsp_mac4x2_rqa where a group takes it), doubled (and by which zero point's kernels), an odd
    last position."""
    a = node.attrs
    n, h, w, c = graph.tensors[node.inputs[0]].shape
    _, oh, ow, oc = graph.tensors[node.outputs[0]].shape
    kh, kw = a["kernel"]
    k = kh * kw * c
    kq = -(-k // 4)
    kc, groups, total = dsp_block_quads(kq), -(-oc // 4), n * oh * ow
    words, np_ = _conv_dsp_scratch(node, graph, choice.detail or 10**9)
    words //= 4
    need: set[str] = set()
    rows = kh == kw == 1 and tuple(a["strides"]) == (1, 1) and a["pads"][0] == a["pads"][1] == 0 and oh == h \
        and ow == w and c % 4 == 0
    if rows:
        need.add("AOTC_TFL_CONV_ROWS")
    if c == 3 and kh == kw == 3 and tuple(a["dilations"]) == (1, 1) and kq == kc == 7:
        need.add("AOTC_TFL_CONV_RGB")
    if not _dsp_fused(node, graph, choice.detail or 10**9):
        need.add("AOTC_TFL_CONV_PLAIN")
        if a["y_min"] == -128 and a["y_max"] == 127 and oc >= 4:  # (tfl_dsp_rqa_terms's groups)
            need.add("AOTC_TFL_CONV_LAST")
        return need
    need.add("AOTC_TFL_CONV_FUSED")
    if total % 2:
        need.add("AOTC_TFL_CONV_ODD")
    # the doubled sums as the C weighs them (its `dbl`), at the tile it takes: more positions where its scratch
    # holds no run of sums (no fused ADD)
    widened = choice.facts.widened_weights  # then widened and doubled at compile time, with the terms (dsp_rq)
    wxw = 0 if widened else 8 * kc
    if node.op != "TflConv2DAdd":
        more = ((words - wxw - (0 if widened else 24)) // (2 * kc)) & ~1
        np_ = min(more, (total + 1) & ~1)
    save = 4 * np_ * groups
    cost_p = 2 * np_ * kc if rows else save
    cost_w = 0 if widened else 8 * kc * groups
    dbl = (2 if cost_p < save else 0) if cost_p < cost_w else (1 if cost_w < save else 0)
    if dbl:
        need |= {"AOTC_TFL_CONV_DBL", "AOTC_TFL_CONV_FLOOR" if a["y_zero"] == -128 else "AOTC_TFL_CONV_SIGN"}
    else:
        need.add("AOTC_TFL_CONV_SINGLE")
    return need


def layers(graph: Graph, choices: dict[str, KernelChoice]) -> Iterable[tuple[Node, KernelChoice]]:
    """Every node with its kernel choice, a run in row bands' layers each with its own (aot/kernels/tflite_bands.py;
    an ONNX run's, aot/kernels/nchw_bands.py, a choice per band shape: each of them)."""
    for node in graph.nodes:
        if (c := choices.get(node.name)) is None:
            continue
        inner = getattr(c.detail, "inner", None)
        if not inner:
            yield node, c
            continue
        from aot.kernels.tflite_bands import run_nodes  # (it imports this module's kernels)

        for m in run_nodes(node):  # a grouped pair's: each group's node
            picked = inner[m.name]
            yield from ((m, k) for k in (picked if isinstance(picked, tuple) else (picked,)))


def left_out(graph: Graph, choices: dict[str, KernelChoice], general: bool = False,
             plain_depthwise: bool = False, compact_depthwise: bool = False,
             compact_conv: bool = False, compact_fc: bool = False, small_fc: bool = False,
             small_conv: int = 0, helium: bool = False, single_dwm: bool = False,
             mve_off: tuple[str, ...] = (), plain_m1: bool = True) -> tuple[str, ...]:
    """The path macros (PATHS) no layer of the graph takes, sorted: what the bundle's kernel configuration sets 0.
    Only where the M-profile DSP kernels are chosen (their facts' isa), so that other bundles' configuration is
    unchanged. `general` (a --flash-budget level): the SPECIALISED paths too, the layers then by the general
    ones (the fused sums as they are where they were doubled); `plain_depthwise` (the level after): every depthwise
    path, the depthwise layers then by the plain loop; `compact_depthwise` (the level between them, issue 67): every
    depthwise path but AOTC_TFL_DW_COMPACT, which no layer takes otherwise (the C takes it only where DSP and MULT
    are 0), the depthwise layers then by tfl_depthwise_s8_compact, and AOTC_TFL_DW_MULT_COMPACT where a layer has a
    depth multiplier above 1 (tfl_depthwise_s8_multc, taken only where MULT is 0; the compact one only where a layer
    has none); `compact_conv` (issue 67): every conv path but the fused ADD's and AOTC_TFL_CONV_COMPACT (taken only
    where FUSED and PLAIN are 0), the convs by tfl_conv_s8_compact; `compact_fc` (issue 67): AOTC_TFL_FC_DSP where a
    FULLY_CONNECTED layer takes the M-profile kernel, the layers then by the compact rows (tfl_fc_rows_compact, two
    outputs a turn), and with `small_fc` AOTC_TFL_FC_PAIRS too (one output a turn), the FC paths left out only so;
    AOTC_TFL_FC_BLOCKS wherever no FULLY_CONNECTED layer takes a RAM budget's blocks, but on the M55 (a model of
    FULLY_CONNECTED layers alone sets its macros too there); `small_conv` (1 or 2, with compact_conv): AOTC_TFL_CONV_2X2
    (the compact conv one position at a time, tfl_conv_s8_small) and at 2 AOTC_TFL_CONV_PAIRS too (one channel a turn),
    left out only so; AOTC_TFL_DW_SMALL_MULT4 only where a layer of a depth multiplier of 4, 8, ... has no scratch (a
    --ram-budget's: the plain loop's multiplier-4 path then beside its smallest form, issue 67); `single_dwm` (with
    compact_depthwise, issue 67): AOTC_TFL_DW_MULTC_PAIRS where a layer has a depth
    multiplier above 1 (the compact multiplier path one position a turn), left out only so; without `plain_m1` (with
    plain_depthwise: the levels after "dw-plain", issue 67), AOTC_TFL_DW_LOOP_M1 where a layer has depth multiplier 1
    (the plain loop's faster form then divides at every multiplier: 36 B less), and so on the M55 too, whose Helium
    depthwise takes those layers. On the M55 (`helium`) the
    depthwise levels keep Helium's 3 x 3 depthwise (MVE_DW_WITH_DSP 0): without it they ran KWS DS-CNN at 2.5x the
    general level's est. cycles there. `mve_off` (the M55's levels after
    those, issue 67): the MVE_FAMILIES named ("fc", "dw", "conv") where a layer of theirs is in the model, their
    Helium kernels not compiled ("conv-fast", "conv-quad": Helium's conv's faster loops, its 4 channels a dot
    product; "fc-quad": Helium's FULLY_CONNECTED 4 outputs a dot product, one then; "fc-dsp", "pool-dsp":
    FULLY_CONNECTED's smallest DSP path and AVERAGE_POOL_2D's DSP path, their plain loops then);
    with "dw" but not "dw-compact" off and `compact_depthwise`, the depthwise layers of multiplier 1 by
    Helium's compact loop (tfl_depthwise_s8_mvec), AOTC_TFL_DW_COMPACT then left out unless such a layer has under 8
    channels (the loop's least); with both off every depthwise layer by Helium's loop of last resort
    (tfl_depthwise_s8_mves), the compact DSP paths left out (where a layer of multiplier 1 has the families compiled
    out: elsewhere, depth multipliers above 1 alone, the bundle stays as with "dw" off)."""
    need: set[str] = set(FC_PATHS) | set(SMALL_CONV_PATHS) | set(MULTC_PATHS) | set(LOOP_M1_PATHS)
    dsp = depthwise = multiplier = mult4 = starved_mult4 = conv = fc = narrow = False
    families: set[str] = set()  # Helium's that have a layer (mve_off)
    for node, c in layers(graph, choices):
        # (il4: "arm-dsp"; Helium's path, whose layers the DSP path took before it had a candidate: "helium")
        fc = fc or c.kernel == "aotc_tfl_fc_s8" and c.facts.isa in ("m-profile", "arm-dsp", "helium")
        # (a RAM budget's blocks: tflite_int8.py _fc_blocked's choice)
        if c.kernel == "aotc_tfl_fc_s8" and isinstance(c.detail, tuple) and c.detail[:1] == ("blocks",):
            need.update(FC_BLOCK_PATHS)
        families |= ({"conv", "conv-fast", "conv-quad"} if c.kernel in _CONV
                     else {"fc", "fc-quad"} if c.kernel == "aotc_tfl_fc_s8" else set())
        if c.kernel == "aotc_tfl_conv_add_s8":  # whichever path: the ADD's code is tfl_conv_s8's
            need.add("AOTC_TFL_CONV_RESIDUAL")
        if c.facts.isa == "helium" and c.kernel in _CONV:  # Helium's conv (tfl_conv_s8_mve) takes the layer before
            dsp = True                                       # the DSP paths, which it leaves none of (issue 67)
        if c.facts.isa != "m-profile" or c.kernel not in (*_CONV, "aotc_tfl_depthwise_s8"):
            continue
        dsp = True
        if c.kernel == "aotc_tfl_depthwise_s8":  # (a depth multiplier above 1: its own compact path)
            cout, cin = graph.tensors[node.outputs[0]].shape[-1], graph.tensors[node.inputs[0]].shape[-1]
            mult = cout != cin
            multiplier, depthwise = multiplier or mult, depthwise or not mult
            narrow = narrow or not mult and cin < 8  # (Helium's compact loop takes 8 channels or more)
            mult4 = mult4 or mult and cout // cin % 4 == 0
            if mult and cout // cin % 4 == 0 and not c.scratch:  # a budget left it no scratch: the plain loop's
                starved_mult4 = True                               # multiplier-4 path beside its smallest form
        conv = conv or c.kernel != "aotc_tfl_depthwise_s8"
        need |= depthwise_paths(node, graph, c) if c.kernel == "aotc_tfl_depthwise_s8" else conv_paths(node, graph, c)
    # the plain depthwise loop in its smallest form (a DSP path's fallback), but at the level where it takes the
    # depthwise layers (plain_depthwise: its faster form, the window clipped once a position)
    need.add("AOTC_TFL_DW_LOOP_SMALL")
    if plain_depthwise or compact_depthwise:
        need -= set(DW_PATHS)
    if compact_depthwise and not plain_depthwise:
        need |= {"AOTC_TFL_DW_LOOP_SMALL", *(["AOTC_TFL_DW_COMPACT"] if depthwise else []),
                 *(["AOTC_TFL_DW_MULT_COMPACT"] if multiplier else [])}
    if mult4 or not plain_depthwise:  # (where the plain loop's faster form is not compiled it is never compiled in)
        need.add("AOTC_TFL_DW_LOOP_MULT4")
    if starved_mult4 and not (plain_depthwise or compact_depthwise):
        need.add("AOTC_TFL_DW_SMALL_MULT4")
    if compact_conv:
        need -= set(CONV_PATHS) - {"AOTC_TFL_CONV_RESIDUAL"}
        if conv:
            need.add("AOTC_TFL_CONV_COMPACT")
    if general:
        need = (need - set(SPECIALISED)) | ({"AOTC_TFL_CONV_SINGLE"} if "AOTC_TFL_CONV_FUSED" in need else set())
    if compact_conv and conv and small_conv:
        need -= set(SMALL_CONV_PATHS[:small_conv])
    if compact_fc and fc:
        need -= {"AOTC_TFL_FC_DSP", *(["AOTC_TFL_FC_PAIRS"] if small_fc else [])}
    if single_dwm and compact_depthwise and not plain_depthwise and multiplier:
        need -= set(MULTC_PATHS)
    if plain_depthwise and depthwise and (helium or not plain_m1):
        need -= set(LOOP_M1_PATHS)
    if helium and depthwise and compact_depthwise and "dw" in mve_off and "dw-compact" not in mve_off and not narrow:
        need.discard("AOTC_TFL_DW_COMPACT")  # Helium's compact loop takes the layers of multiplier 1 instead
    if helium and depthwise and compact_depthwise and {"dw", "dw-compact"} <= set(mve_off):  # Helium's loop of last
        need -= {"AOTC_TFL_DW_COMPACT", "AOTC_TFL_DW_MULT_COMPACT"}  # resort takes every layer (compiled: MVE_DW 0)
    alone = {MVE_DW_WITH_DSP} if helium and depthwise and (plain_depthwise or compact_depthwise) else set()
    families |= {"dw", "dw-compact"} if depthwise else set()  # (Helium's depthwise: multiplier 1's)
    # (FULLY_CONNECTED's smallest DSP path, where it is compiled and the layers do under half the model's work)
    families |= {"fc-dsp"} if fc and compact_fc and small_fc and not fc_pairs_pay(graph) else set()
    families |= {"pool-dsp"} if any(n.op == "TflAveragePool2D" for n in graph.nodes) else set()  # (no kernel choice)
    alone |= {MVE_FAMILIES[f] for f in mve_off if f in families} if helium else set()
    if helium:  # (Helium's FULLY_CONNECTED: the DSP rows, blocks and all, compiled only where a level leaves it out)
        need.update(FC_BLOCK_PATHS)
    return tuple(sorted((set(PATHS) - need) | alone)) if dsp or fc and (compact_fc or not helium) else ()


def work(node: Node, graph: Graph) -> int:
    """A layer's work (aot/emit_c/bundle.py cold_sources): its multiply-accumulates where it has weights (output
    elements times the window's or row's inputs a channel), else its output elements."""
    out = sum(graph.tensors[t].size for t in node.outputs if t in graph.tensors)
    if node.op in ("TflConv2D", "TflConv2DAdd", "TflDepthwiseConv2D", "TflFullyConnected") and len(node.inputs) > 1:
        w = graph.tensors[node.inputs[1]].shape
        per = (w[1] * w[2] if node.op == "TflDepthwiseConv2D" else int(np.prod(w[1:]))) if len(w) > 1 else 1
        return out * max(int(per), 1)
    return out


def _lead(graph: Graph, takes: Callable[[Node], bool]) -> bool:
    """Whether the layers `takes` picks do at least half the model's work (MACs, dsp_paths.work)."""
    picked = total = 0
    for n in graph.nodes:
        w = work(n, graph)
        total += w
        picked += w if takes(n) else 0
    return 2 * picked >= total


def _conv(n: Node) -> bool:
    return n.op in ("TflConv2D", "TflConv2DAdd")


def _kernel(n: Node) -> tuple[int, ...]:
    return tuple(n.attrs.get("kernel", ()))


def _depthwise_m1(n: Node, graph: Graph) -> bool:
    """A depthwise layer of depth multiplier 1 (as many output channels as input)."""
    return n.op == "TflDepthwiseConv2D" and (graph.tensors[n.outputs[0]].shape[-1]
                                             == graph.tensors[n.inputs[0]].shape[-1])


def portable_fast_pays(graph: Graph) -> bool:
    """Whether the portable kernels' faster loops (AOTC_TFL_PORTABLE_FAST: 1 x 1 convs in 2 x 2 blocks, depthwise
    layers of multiplier 1 over every position, FULLY_CONNECTED 4 outputs at a time) take at least half the model's
    work; else the portable level compiles the smallest loops, as fast where other layers do the work (IC ResNet-8's
    3 x 3 convs: 1.7 KB more for no fewer cycles)."""
    return _lead(graph, lambda n: (_conv(n) and _kernel(n) == (1, 1)) or _depthwise_m1(n, graph)
                 or n.op == "TflFullyConnected")


def fc_pairs_pay(graph: Graph) -> bool:
    """Whether FULLY_CONNECTED takes at least half the model's work (the autoencoder's all of it): then the portable
    kernels' smallest loops keep its two outputs a turn (AOTC_TFL_FC_PAIRS: 128 B more on the M4 for 1.45x fewer est.
    cycles, 5.15x -> 3.55x level none's), else one a turn, the smallest."""
    return _lead(graph, lambda n: n.op == "TflFullyConnected")


def fc_one_paths(graph: Graph, choices: dict[str, KernelChoice]) -> tuple[str, ...]:
    """What the M55's bundles leave out but at the portable levels (aot/emit_c/bundle.py): Helium's FULLY_CONNECTED 4
    outputs a dot product (AOTC_TFL_MVE_FC_QUAD: one output at a time then, every layer's, no other FULLY_CONNECTED
    code beside it) wherever a layer takes aotc_tfl_fc_s8. The one-output loop reads each weight once where the
    4-output path reads it twice (its dot products, then its sums): on the MLPerf Tiny autoencoder (FULLY_CONNECTED all
    the work) 1,396 -> 714 B of code at 0.78x the est. cycles without a budget, at -Os 546 B where the portable kernels
    take 554 B (so no --flash-budget level goes from Os to them in a 7.5x step); where it does little of the work
    (KWS DS-CNN, VWW MobileNet, IC ResNet-8, TFLM micro_speech) 676 B less flash and 0.01-0.15 % fewer est. cycles
    (docs/firmware.md, 2026-11-29)."""
    fc = any(c.kernel == "aotc_tfl_fc_s8" for _, c in layers(graph, choices))
    return (MVE_FAMILIES["fc-quad"],) if fc else ()


def windowed_convs_lead(graph: Graph) -> bool:
    """Whether the convs of a window above 1 x 1 (not depthwise) take at least half the model's work: their DSP
    path's C (tfl_conv_s8_dsp, tfl_dsp_patch) measured slower at -O2 than at -Os on the M4, so the --flash-budget
    level O2 is no faster than the smaller Os there (IC ResNet-8 17.02 M against 17.00 M est. cycles, 0.15 %; issue
    67, monotone budgets) and aot/flash.py leaves it out. Where other layers lead, O2 measured faster than Os or
    within 0.03 % (KWS DS-CNN 0.1 %, the autoencoder 1.4 %, TFLM micro_speech 0.9 % faster; VWW MobileNet and TFLM
    person_detect 0.01 % and 0.03 % slower)."""
    return _lead(graph, lambda n: _conv(n) and _kernel(n) != (1, 1))


def mult4_layers(graph: Graph) -> bool:
    """Whether a depthwise layer has a depth multiplier of 4, 8, ...: the portable kernels then compile the plain
    loop's path for them (AOTC_TFL_DW_LOOP_MULT4: 4 output channels of one input value a tap; TFLM micro_speech 6.7x ->
    4.2x level none's est. cycles on the M4 at the portable levels, about 100 B), else it is left out of their
    configuration, so that other models' portable bundles are as before."""
    for n in graph.nodes:
        if n.op == "TflDepthwiseConv2D":
            cin, cout = graph.tensors[n.inputs[0]].shape[-1], graph.tensors[n.outputs[0]].shape[-1]
            if cout != cin and cout // cin % 4 == 0:
                return True
    return False


def rq_conv_only_paths(graph: Graph, fused: bool) -> tuple[str, ...]:
    """What the M55's portable-mve-rqconv level leaves out (aot/flash.py): the depthwise loop's requantisation by
    vectors where a depthwise layer of multiplier 1 takes it, the fused ADD's by vectors where the model fuses one
    (`fused`); elsewhere nothing, so that the level builds portable-mve's library (TFLM micro_speech) and is measured
    once."""
    dw1 = any(_depthwise_m1(n, graph) for n in graph.nodes)
    return (*([PORTABLE_MVE_RQ_DW] if dw1 else []), *([PORTABLE_MVE_RQ_ADD] if fused else []))


def _pointwise(n: Node, graph: Graph) -> bool:
    """A conv tfl_conv_s8_pmve_pw takes: 1 x 1, stride 1, unpadded (its output the input's height and width)."""
    if not _conv(n) or _kernel(n) != (1, 1) or tuple(n.attrs.get("strides", (1, 1))) != (1, 1):
        return False
    return graph.tensors[n.outputs[0]].shape[1:3] == graph.tensors[n.inputs[0]].shape[1:3]


def _rows_whole(n: Node, graph: Graph) -> bool:
    """Whether a conv's window rows are whole vectors for tfl_conv_s8_pmve_win (kw c a multiple of 16, column dilation
    1): not a first conv's of one to three channels (KWS DS-CNN's, TFLM micro_speech's, IC ResNet-8's)."""
    kw, c = _kernel(n)[1], graph.tensors[n.inputs[0]].shape[-1]
    return kw * c % 16 == 0 and tuple(n.attrs.get("dilations", (1, 1)))[1] == 1


def dot8_paths(graph: Graph) -> tuple[str, ...]:
    """What the M55's portable-mve-dot8 level leaves out (aot/flash.py): the windows' 8-bit conv (PORTABLE_MVE_WIN) but
    where windows above 1 x 1 lead the model's work (windowed_convs_lead) and one of them has whole vector rows (IC
    ResNet-8's 3 x 3 layers; it takes the pointwise layers too), the pointwise one (PORTABLE_MVE_PW) where the other is
    compiled or no conv is pointwise; so that neither's code is compiled where no layer takes it (TFLM micro_speech:
    portable-mve's library, measured once)."""
    win = windowed_convs_lead(graph) and any(_conv(n) and _kernel(n) != (1, 1) and _rows_whole(n, graph)
                                             for n in graph.nodes)
    pw = not win and any(_pointwise(n, graph) for n in graph.nodes)
    return (*([] if win else [PORTABLE_MVE_WIN]), *([] if pw else [PORTABLE_MVE_PW]))
