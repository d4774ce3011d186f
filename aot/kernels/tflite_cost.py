"""A cycle estimate per kernel choice of the M-profile int8 kernels that a --ram-budget trades (issue 67,
"monotone budgets"): CONV_2D's DSP tile of positions, DEPTHWISE_CONV_2D's run of sums (a shortened run leaves
the 3 x 3 band path), FULLY_CONNECTED's blocks, and runs of layers fused in row bands (their calls, the rows
moved between bands). The planner compares the schedules that meet a budget by it (aot/compiler.py
select_and_plan) and keeps the cheapest.

The estimate is of the work a choice adds over the layer's work at its largest blocks, not of the layer's
work itself: every schedule computes the same MACs, so only the parts that depend on the choice are counted,
each a count the choice fixes (features) times a constant in M4 est. cycles (COST), per kernel path:

  CONV_2D (tfl_conv_s8_dsp, a call over P positions, K = kh kw c in kq quads, oc in groups of 4, tile np):
      calls * (COST["call"] + groups * COST["conv_call_group"])
      + [the residual ADD fused, aotc_tfl_conv_add_s8] calls * COST["conv_add_call"] (its two tables of the ADD's
      rescaled inputs by byte, 512 words, built each call: a run in row bands builds them once a band)
      + ceil(P / np) * (COST["conv_tile"] + COST["conv_tile_quad"] * kq * groups)
      (a tile gathers its patches, then reads every group's widened weights once: smaller tiles read them
      more often)
  DEPTHWISE_CONV_2D (tfl_depthwise_s8_dsp, c / 4 groups, P positions, runs of r sums):
      calls * COST["call"] + (c / 4) ceil(P / r) * COST["dw_run"]
      + [a 3 x 3 layer whose run was shortened: the band path is left] P * c * COST["dw_unbanded_mac"] (per
      output element, so per MAC / 9)
      + (c / 4) * COST["dw_call_group"] a call (each group's set-up: its weights' sums, its terms)
      + [its output overlapping its input: the planner's "overlap", which the kernel finds at run time] a call
      per output row and group, (c / 4) oh * COST["dw_overlap_row"] (not on the ring of rows, nor at column
      stride 2 where that path's calls cover every column: _stride2_whole)
      + [a layer taller than wide (ow < oh) called on y over x or on a band of no more rows than columns: its
      path by columns lost] P * c * COST["dw_no_column"]
  FULLY_CONNECTED in blocks ("blocks", kq, ob over nq quads of input, out outputs; the whole rows' paths
      on interleaved weights count 0):
      out * 4 nq * COST["fc_mac"] (weights not interleaved) + ceil(out / ob) ceil(nq / kq) * COST["fc_block"]
      + out (ceil(nq / kq) - 1) * COST["fc_partial"] (the sums stored and loaded again a chunk)
      + [kq < nq: x widened again for each block of outputs] (ceil(out / ob) - 1) nq * COST["fc_rewiden"]
  FULLY_CONNECTED on the plain loop (no scratch at all for the DSP path): out * in * COST["fc_plain_mac"]
  DEPTHWISE_CONV_2D of a depth multiplier above 1 without scratch (the plain loop, not tfl_depthwise_s8_mult):
      its MACs * COST["dw_mult_plain_mac"]; of a multiplier of 4, 8, ... (its path beside the plain loop,
      AOTC_TFL_DW_SMALL_MULT4) its MACs * COST["dw_mult4_plain_mac"]
  A run in row bands: each band's layer calls as above on the band's rows, plus the rows kept from the band
      before moved to each line buffer's top: bytes * COST["band_move_byte"]; a run from a channels-first input's
      TRANSPOSE, the bytes copied channels-last * COST["band_transpose_byte"] (below 0: a faster copy than the
      unbudgeted aotc_transpose2d's).
      A grouped pair (an expansion and its stride-2 depthwise a group of channels at a time: each group's calls as
      above on its channels) adds the expansion's outputs and MACs computed again (COST["band_recompute_out"],
      ["band_recompute_mac"]) and the depthwise's output bytes copied to the group's channels
      (COST["band_group_copy_byte"]).
  That TRANSPOSE written over its input instead (aot/kernels/transpose_in_place.py): its bytes *
      COST["transpose_in_place_byte"] (over aotc_transpose2d's).

On the M55 (Helium's kernels, `helium=True`, constants COST_HELIUM in M55 est. cycles) the budget trades other
things: Helium's CONV_2D (tfl_conv_s8_mve) takes a 1 x 1 layer 4 output channels over every position only where y
is apart from x, so an overlapped output costs (per position and per output: mve_pw_overlap_pos, _out; per output
where its requantisation is not Helium's usual one, mve_pw_overlap_unusual_out); its 3 x 3
DEPTHWISE_CONV_2D (tfl_depthwise_s8_mve) runs the same whatever the overlap, and pays its set-up per call (4
channels' taps and terms a group: mve_dw_group_call), as long as its ring of rows fits the scratch: a run of sums
shortened below a row's span leaves the DSP path to run the layer (per output: mve_dw_lost_out); the other depthwise
layers take the DSP paths, counted as on the M4 (COST's constants: not fitted on the M55). A run in row bands
moves, copies and recomputes rows at the M55's own costs (band_move_byte, band_group_copy_byte, band_recompute_*:
fitted on its runs).

Other nodes (and the host's kernels) count 0: their choices are not traded by a budget on the paths this
models. COST's constants were fitted (least squares, non-negative) to the est. cycles that `aotc curve
--target mps2-an386 --curve ram --points 16` measured at every point of the MLPerf Tiny four and TFLM's
micro_speech, and to DS-CNN's schedules forced one by one (aotc's qemu plugin, Release; the fit and its
residuals: bench/cost_fit.py; the runs: COST's comment)."""

from __future__ import annotations

from typing import Any

from aot.ir import Graph, Node
from aot.kernels.base import KernelChoice
from aot.kernels.c_defines import define

DSP_DW_RUN = define("aotc_tflite_int8.h", "TFL_DSP_DW_RUN")  # (tflite_int8.py's; imported from there: a circle)
# CONV_2D's DSP blocks (tflite_int8.py's, likewise): _undoubled's
DSP_KC, DSP_NP_MAX, DSP_PATCH_WORDS, DSP_CONV_RIGHT = (define("aotc_tflite_int8.h", f"TFL_DSP_{n}")
                                                       for n in ("KC", "NP_MAX", "PATCH_WORDS", "CONV_RIGHT"))
DSP_NP_MAX_OTHER, DSP_PRODUCT_MAX = 64, 255 * 128

# est. cycles (M4, aotc's TRM timing plugin), fitted by bench/cost_fit.py to 170 measured schedules: the budgeted
# points of `aotc curve --curve ram --points 16` on KWS, VWW, IC and micro_speech (the greedy planner before these
# options), 16 of DS-CNN's options forced one by one at 7 budgets, 18 of VWW's at 28128, 29637, 31146, 41712 and
# 43221 and 83 of the autoencoder's at 2457-768 planned under three sets of constants (cost_fit.py --measure), each
# point compiled again under the COST it was planned with, rms residual 92,664 est. cycles (DS-CNN runs 4.4 M, VWW
# 10.9 M); the measurements and the command: bench/results/cost_fit/, cost_fit.py. The terms fitted to 0 were not
# told apart from the others there. Refitted with VWW's (issue 67, costfit): conv_tile 477 -> 1775 and
# conv_tile_quad 40.62 -> 31.52 have VWW at 28128 take "bands, no slower overlaps" (13,871,667 est. cycles under
# qemu) over "greedy" (14,008,088), whose 79 tiles more the old values estimated 33 K cheaper. The FULLY_CONNECTED
# terms are the autoencoder's forced points' (costfit3): fitted with their features under other constants' blocks
# (costfit2, fc_rewiden 0) the autoencoder at 1518 took 1,504 B that ran 1.2 % slower than main's 1,456 B.
COST: dict[str, float] = {
    "call": 232.6,
    "conv_call_group": 0.0,
    "conv_tile": 1775.0,
    "conv_tile_quad": 31.52,
    "dw_run": 1254.0,
    "dw_unbanded_mac": 32.27,
    "dw_call_group": 0.0,
    "dw_overlap_row": 235.4,
    # measured, not fitted (issue 67, costfit; the refit made it 7.354): tflm_kws_int8's DEPTHWISE_CONV_2D_21
    # overlapped and off its path by columns (4,000 outputs) ran tfl_depthwise_s8_dsp, tfl_dsp_dw_band_cols and
    # tfl_dsp_dw3x3_band_rq 145,486 est. cycles against 146,113 apart (`aotc bench --profile`, mps2-an386 Release)
    "dw_no_column": 0.0,
    "fc_mac": 0.3178,
    "fc_block": 43.61,
    "fc_partial": 15.47,
    "fc_plain_mac": 7.623,
    "fc_rewiden": 14.03,
    # measured, not fitted (issue 67, costfit3; fitted 0): VWW at --ram-budget 43221 in "bands, no slower overlaps"
    # (41,568 B) against "greedy" (43,104 B), the rows kept moved to the line buffer's top: memmove 1,831 est.
    # cycles for 1,536 bytes (`aotc bench --profile`, mps2-an386 Release)
    "band_move_byte": 1.192,
    # measured, not fitted (issue 67): VWW's DEPTHWISE_CONV_2D_1 (48 x 48 x 8, SAME, on the ring) in 5 bands of a run
    # ran tfl_dsp_dwp6_row_floor + tfl_dsp_dwp_rows 363,722 est. cycles against 340,409 in tfl_dsp_dwp6_same_floor
    # whole (its 18,432 outputs; aotc bench --profile, mps2-an386 Release, --ram-budget 37184 and 35674)
    "dw_ring_band_out": 1.265,
    # measured, not fitted (the fit's runs had no such layer): TFLM micro_speech's depthwise layer (multiplier 8,
    # 10 x 8 windows, 320,000 MACs) on the plain loop 11,665,373 est. cycles in all against 539,821 by
    # tfl_depthwise_s8_mult (aotc bench, mps2-an386 Release, --ram-budget 4600 and 10000)
    "dw_mult_plain_mac": 34.8,
    # measured, not fitted (issue 67): the same layer by AOTC_TFL_DW_SMALL_MULT4's path, tfl_dw_m4_window 1,227,120 and
    # aotc_tfl_depthwise_s8 319,374 est. cycles (aotc bench --profile, mps2-an386 Release, --ram-budget 4720)
    "dw_mult4_plain_mac": 4.833,
    # measured, not fitted (issue 67), against the unbudgeted aotc_transpose2d of a channels-first input of bytes,
    # with the copy_run it calls (TFLM's MobileNetV2 224, 3 x 224 x 224: 2,129,416 + 4,415,488 = 6,544,904 est.
    # cycles, 43.5 a byte; the first measurement, 14.15 a byte, counted aotc_transpose2d's own cycles only):
    # aotc_transpose2d_in_place over the input 2,157,710 (its cycles from their leaders; no budget against
    # --ram-budget 262144 compiled at 85c2b64, `aotc bench --profile`, mps2-an386 Release); the copy channels-last
    # in a run in row bands from the TRANSPOSE: band_transpose_byte's comment
    "transpose_in_place_byte": -29.15,
    # the copy channels-last in a run in row bands from the TRANSPOSE, against the same aotc_transpose2d and copy_run:
    # the run function's own est. cycles, 789 without a budget, 922,136 at --ram-budget 262144 (TFLM's MobileNetV2
    # 224, its run from the TRANSPOSE in 56 bands: 6.12 a byte), at add725f's parent, `aotc bench --profile`,
    # mps2-an386 Release (the first measurement, -8.064 a byte, left out copy_run as above)
    "band_transpose_byte": -37.36,
    # measured, not fitted: a grouped pair of a run in bands (aot/kernels/tflite_bands.py Group), whose expansion's
    # rows are computed again (its halo, each band) and whose depthwise output is copied from the staging block to
    # the group's channels; pooled over two measurements (`aotc bench --profile`, mps2-an386 Release): TFLM's
    # MobileNetV2 224 at --ram-budget 262144 (CONV_2D_2..CONV_2D_9 grouped, 19 bands of 3 rows: 193,536 outputs and
    # 3,096,576 MACs computed again) against no budget, aotc_dsp_mac4x2 +4,024,777 and tfl_dsp_store_usual +
    # tfl_conv_s8_dsp +7,934,327 est. cycles, less the 533,227 the conv_tile terms count; and tests/plan/
    # test_ram_budget.py's model (64 x 64 NCHW, 1 x 1 8 -> 48 then a stride-2 3 x 3 depthwise) at --ram-budget 18000
    # (grouped) against 21000 (not): 23,040 outputs (184,320 MACs) computed again, aotc_dsp_mac4x2 +307,932,
    # tfl_dsp_store + tfl_conv_s8_dsp +1,172,148; the run's loop (12,288 bytes copied) 14,119 more
    "band_recompute_out": 39.59,
    "band_recompute_mac": 1.321,
    "band_group_copy_byte": 1.15,
    # measured, not fitted (issue 67): aotc_tfl_conv_add_s8's own est. cycles a call on the DSP path, its residual
    # tables (AOTC_TFL_RESIDUAL_TABLES) built each call: IC ResNet-8 at --ram-budget 31795 (CONV_2D_2 in 32 bands
    # of a row, 34 calls in all) 922,028 and at 30630 (11 bands of 3 rows, 13 calls) 352,550, 27,118 a call either
    # way (`aotc bench --profile`-like cycle profile, mps2-an386 Release, aotc a6853a3); fitted to 0 with "call"
    # before, the fit's runs had too few banded fused ADDs to tell it apart: the planner took the 1-row bands at 2.55 %
    # more est. cycles than the tighter budget's 3 rows
    "conv_add_call": 27118.0,
    # measured, not fitted (issue 67, costfit): a CONV_2D whose tile is too small for its sums to be doubled
    # (_undoubled), per output: TFLM's tflm_kws_int8 without a budget, CONV_2D_20 (4,000 outputs) at a tile of 34
    # (aotc_dsp_mac4x2_rq) against 40 (aotc_dsp_mac4x2_rq3), the MAC kernels +14,812 est. cycles in all
    # (`aotc bench --profile`, mps2-an386 Release)
    "conv_undoubled_out": 3.703,
}


# COST's constants measured directly, which bench/cost_fit.py keeps as they are (it fits the others)
MEASURED = frozenset({"conv_add_call", "conv_undoubled_out", "dw_no_column", "band_move_byte", "dw_mult_plain_mac",
                      "dw_mult4_plain_mac", "dw_ring_band_out",
                      "transpose_in_place_byte", "band_transpose_byte", "band_recompute_out", "band_recompute_mac",
                      "band_group_copy_byte"})

# est. cycles of the M55 (mps3-an547, aotc's Helium timing model; the module's docstring), measured on VWW
# MobileNet at aotc ebeafee (`aotc bench --profile`, Release): tfl_conv_s8_mve ran 94,094 more est. cycles with
# CONV_2D_2 (2,304 positions, 16 channels) overlapped, 249,136 more with 12 of the 1 x 1 layers (3,402 positions,
# 105,984 outputs): solved for a cost per position and one per output. The runs in row bands: mve_dw_group_call
# and the band terms below, fitted by bench/cost_fit_m55.py (non-negative least squares, each run's error relative
# to its measured extra) to 15 runs of TFLM's person_detect (--ram-budget 19040, 23884), VWW (27824, 33334), KWS
# (9808), IC ResNet-8 (26800) and TFLM's MobileNetV2 224 (172000, 181632) at aotc 0a54be1: each run's est. cycles
# (`aotc bench --nodes`, mps3-an547 Release) less its layers' without a budget. COST's (the M4's) band terms had put
# MobileNetV2's first run (TRANSPOSE_0..CONV_2D_9 grouped, 181632 B) at 41.0 M extra for 9.7 M measured, now 9.4 M:
# Helium recomputes a grouped expansion's halo rows at a fraction of the DSP path's cycles a MAC (band_recompute_mac
# 0, its outputs' cost in band_recompute_out). The runs' estimates went from 1.2-4.2x their measured extra to
# 0.8-1.2x (VWW's at 27824 from 1.17x to 0.56x; IC's conv run 0.2x before and after: its calls, which no Helium term
# counts). The DSP paths' terms are COST's.
COST_HELIUM: dict[str, float] = {
    **COST,
    "mve_pw_overlap_pos": 6.63,
    "mve_pw_overlap_out": 2.138,
    # the same where the layer's requantisation is not tfl_mve_requant_usual's (a clamp inside int8's range: ReLU6
    # at a zero point above -128), per output: TFLM's MobileNetV2 224 at --ram-budget 172000 (aotc d552bde), its
    # CONV_2D_29 (28 x 28, 32 -> 192) and CONV_2D_48 (14 x 14, 64 -> 384) overlapped ran 1,025,867 and 494,996 est.
    # cycles more than without a budget, 6.81 and 6.58 an output (`aotc bench --nodes`, mps3-an547 Release); the
    # usual terms above estimated a third of that
    "mve_pw_overlap_unusual_out": 6.736,
    "mve_dw_group_call": 726.81,  # (1,565 from VWW's one run of 6 bands before the fit)
    # a 3 x 3 depthwise Helium's kernel would take, run by another path instead (its scratch too small for Helium's
    # ring: a shortened run), per output, the more of two measurements (`aotc bench --nodes`, mps3-an547 Release):
    # TFLM's person_detect at --ram-budget 21462, DEPTHWISE_CONV_2D_5 (24 x 24 x 32) on 256 B of scratch 1,153,545 est.
    # cycles against 278,386 on Helium's path without a budget (47.48 an output); TFLM's MobileNetV2 224 at 181632,
    # DEPTHWISE_CONV_2D_21 (28 x 28 x 192, overlapping its input) 9,024,706 against 6,545,458 (16.47). Which path runs
    # it depends on the paths the bundle links (the plain loop where the DSP path's other forms are left out)
    "mve_dw_lost_out": 47.48,
    "band_move_byte": 1.528,  # (1.47: memmove's 4,844 for VWW's 3,296 bytes before the fit)
    "band_recompute_out": 10.166,
    "band_recompute_mac": 0.0,
    "band_group_copy_byte": 1.26,
    "conv_add_call": 0.0,  # (not measured on the M55, whose fused ADD takes Helium's conv: as before there)
}

IN_PLACE_OP = "TransposeInPlace"  # aot/kernels/transpose_in_place.py's OP (imported from there: a circle)

# the ops whose choices the estimate counts (a band run counts through its layers)
ESTIMATED = frozenset({"TflConv2D", "TflConv2DAdd", "TflDepthwiseConv2D", "TflFullyConnected"})


def features(node: Node, graph: Graph, choice: Any, overlapped: bool = False,
             helium: bool = False) -> dict[str, float]:
    """The counts of the choice's added work (the module's docstring), by COST's keys; overlapped: the plan
    starts the node's output below its input, overlapping it (the planner's "overlap"); helium: on the M55's
    kernels (COST_HELIUM's keys)."""
    out: dict[str, float] = {}
    if node.attrs.get("band_run"):
        _band_features(node, graph, choice, out, helium)
    elif node.op == IN_PLACE_OP:  # a channels-first input permuted over itself (aot/kernels/transpose_in_place.py)
        _add(out, "transpose_in_place_byte", graph.tensors[node.inputs[0]].nbytes)
    elif isinstance(choice, KernelChoice):
        _layer_features(node, graph, choice, out, rows=None, overlapped=overlapped, helium=helium)
    return out


def estimate(node: Node, graph: Graph, choice: Any, overlapped: bool = False,
             cost: dict[str, float] | None = None, helium: bool = False) -> float:
    """The est. cycles the choice adds over the node's work at its largest blocks."""
    cost = (COST_HELIUM if helium else COST) if cost is None else cost
    return sum(cost[k] * v for k, v in features(node, graph, choice, overlapped, helium).items())


def plan_estimate(graph: Graph, plan: Any, cost: dict[str, float] | None = None, helium: bool = False) -> float:
    """A schedule's estimate (plan: aot/plan Plan, its choices and techniques): the sum over its nodes (graph:
    the schedule's graph, fused runs as one node)."""
    over = set(plan.techniques.get("overlap", ()))
    return sum(estimate(n, graph, plan.choices[n.name], n.name in over, cost, helium) for n in graph.nodes
               if n.name in plan.choices)


def overlap_costs(node: Node, graph: Graph, helium: bool = False) -> bool:
    """Whether the node's kernel runs more slowly with its output overlapping its input (the planner's
    "overlap"): DEPTHWISE_CONV_2D's DSP path, which checks at run time that y is apart from x before it
    takes its paths by rows and columns (tflite_int8_depthwise.c); CONV_2D's paths run the same. On the M55
    (helium) the other way round: Helium's 1 x 1 CONV_2D path over every position needs y apart from x, its
    3 x 3 depthwise runs the same (the DSP path's other depthwise layers as on the M4)."""
    if graph.tensors[node.inputs[0]].dtype != "int8":
        return False
    if helium:
        return (node.op == "TflConv2D" and _pointwise(node)) or \
            (node.op == "TflDepthwiseConv2D" and not _helium_depthwise(node, graph))
    return node.op == "TflDepthwiseConv2D"


def _pointwise(node: Node) -> bool:
    """A 1 x 1 window at stride 1 and no padding: the layer Helium's CONV_2D reads in place (tfl_conv_s8_mve's
    `direct`)."""
    a = node.attrs
    return tuple(a["kernel"]) == (1, 1) and tuple(a["strides"]) == (1, 1) and not any(a.get("pads", ()))


def _helium_depthwise(node: Node, graph: Graph) -> bool:
    """The layers tfl_depthwise_s8_mve takes (its shape's tests: 3 x 3, dilation 1, multiplier 1, channels a
    multiple of 4, column stride 1 or 2, rows of 2 outputs or more)."""
    x, y, a = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]], node.attrs
    return (tuple(a["kernel"]) == (3, 3) and tuple(a["dilations"]) == (1, 1) and x.shape[3] == y.shape[3]
            and x.shape[3] % 4 == 0 and a["strides"][1] in (1, 2) and y.shape[2] >= 2)


def _ring(node: Node, c: int, oc: int, ow: int, choice: KernelChoice) -> bool:
    """Whether the DSP depthwise path takes the layer by its ring of input rows (tflite_int8_depthwise.c
    tfl_dsp_dwp_fits: 3 x 3, dilation 1, column stride 1, multiplier 1, the run of sums not shortened by a budget),
    which copies each input row out of x before it writes y: an overlapped output costs it nothing (VWW's
    DEPTHWISE_CONV_2D_1 and _5 overlapped ran tfl_dsp_dwp6_same_floor's 1,253,149 instructions as without)."""
    a = node.attrs
    if tuple(a["kernel"]) != (3, 3) or tuple(a["dilations"]) != (1, 1) or a["strides"][1] != 1 or c != oc \
            or c % 4 or (isinstance(choice.detail, int) and choice.detail > 0):
        return False
    run = DSP_DW_RUN
    return 12 * ((ow + 1) // 2 + 1) <= 4 * run + 3 * (ow + 2)


def _stride2_whole(node: Node, w: int, ow: int) -> bool:
    """Whether the DSP depthwise path at column stride 2 (tflite_int8_depthwise.c tfl_dsp_dws2: 3 x 3, dilation 1)
    takes the layer's inside rows in one call whether or not y overlaps x: its positions from the first column
    (no left padding) to the last (tfl_dsp_dws2_layer's `whole`: ox_lo 0, ke ow), so an overlapped output adds no
    call a row (TFLM person_detect's DEPTHWISE_CONV_2D_3, 48 x 48 -> 24 x 24 SAME, overlapped at --ram-budget 42307
    ran tfl_depthwise_s8_dsp and tfl_dsp_dws2_floor no slower than apart at 44422; the term counted it 17,184)."""
    a = node.attrs
    if tuple(a["kernel"]) != (3, 3) or tuple(a.get("dilations", (1, 1))) != (1, 1) or a["strides"][1] != 2:
        return False
    pl = int(a.get("pads", (0, 0))[1])
    ox_hi = 0
    while ox_hi < ow and 2 * ox_hi - pl + 2 < w:
        ox_hi += 1
    ox_lo = min((pl + 1) // 2, ox_hi)
    m = (ox_hi - ox_lo) // 2
    back = (ox_hi - ox_lo) % 2 == 0
    edge = (not back or m > 0) and ox_hi < ow and 2 * ox_hi - pl + 2 == w
    ke = ox_hi + 1 if edge else ox_lo + 2 * m
    return ox_lo == 0 and ke == ow


def _undoubled(node: Node, graph: Graph, tile: int, positions: int) -> bool:
    """Whether tfl_conv_s8_dsp, requantising in the MAC kernel (its `fused`, no fused ADD), leaves the sums undoubled
    at this tile (its `dbl` 0: aotc_dsp_mac4x2_rq, not _rq3): the weights widened a tile (not at compile time) cost
    8 kc words a group, doubling them pays only where that is below the shifts it saves (4 a position and group),
    so a tile of fewer than 2 kc positions (the kernel's own: the scratch's words less the widened weights' and 24,
    over 2 kc) takes the slower kernel; a 1 x 1 layer's rows are doubled instead, for 2 kc words a position
    (tflite_int8_conv.c). TFLM's tflm_kws_int8 CONV_2D_20 (10 x 8 x 1 -> 8, kc 20) at a tile of 34 against 40.
    (tflite_int8.py's _dsp_fused and _conv_dsp_scratch for one block of quads, restated: a circle at import.)"""
    a = node.attrs
    if not all(k in a for k in ("y_min", "y_max", "mult", "shift", "strides")) or len(node.inputs) < 2:
        return False
    x, y = graph.tensors[node.inputs[0]], graph.tensors[node.outputs[0]]
    k = a["kernel"][0] * a["kernel"][1] * x.shape[3]
    kc, oc = -(-k // 4), y.shape[3]
    pointwise = tuple(a["kernel"]) == (1, 1) and tuple(a["strides"]) == (1, 1)
    np_ = min((DSP_PATCH_WORDS // (2 * kc)) & ~1, DSP_NP_MAX if pointwise else DSP_NP_MAX_OTHER,
              (positions + 1) & ~1, tile)
    if kc > DSP_KC or oc % 4 or a["y_min"] != -128 or a["y_max"] != 127 or np_ < 6 or not _usual(node, graph, k):
        return False
    groups, words = oc // 4, 2 * np_ * kc + 8 * kc + 4 * np_
    np_ = min(((words - 8 * kc - 24) // (2 * kc)) & ~1, (positions + 1) & ~1)  # the kernel's tile
    rows = pointwise and not any(a.get("pads", ())) and x.shape[3] % 4 == 0 and x.shape[1:3] == y.shape[1:3]
    save, cost_w = 4 * np_ * groups, 8 * kc * groups
    cost_p = 2 * np_ * kc if rows else save
    return not (cost_p < save) if cost_p < cost_w else not (cost_w < save)


def _usual(node: Node, graph: Graph, k: int) -> bool:
    """tfl_dsp_usual's requantisation on every channel (tflite_int8.py's _usual_requant, restated), remembered by
    what it reads (_usual_key): a budget's search estimates each conv's choices some 10^5 times, and this check,
    a term per channel, was half the estimates' time (VWW at 34,100 B: 28.8 M terms)."""
    bias = graph.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    key = _usual_key(node.attrs["mult"], node.attrs["shift"], bias, k)
    hit = _USUAL.get(key)
    if hit is None:
        if len(_USUAL) >= _USUAL_MAX:
            _USUAL.clear()
        hit = _USUAL[key] = _usual_uncached(node.attrs["mult"], node.attrs["shift"], bias, k)
    return hit


# _usual's answers by _usual_key (a few per conv layer of the models compiled in one process)
_USUAL: dict[tuple[Any, ...], bool] = {}
_USUAL_MAX = 4096


def _usual_key(mult: Any, shift: Any, bias: Any, k: int) -> tuple[Any, ...]:
    """Everything _usual_uncached reads: the multipliers, shifts and biases by value, and k."""
    return (k, tuple(mult), tuple(shift),
            None if bias is None else (str(bias.dtype), bias.shape, bias.tobytes()))


def _usual_uncached(mult: Any, shift: Any, bias: Any, k: int) -> bool:
    bias = [0] * len(mult) if bias is None else [int(b) for b in bias.reshape(-1)]
    return all(int(m) != -(1 << 31) and 1 <= -int(s) <= DSP_CONV_RIGHT and k * DSP_PRODUCT_MAX + abs(b) < 1 << 30
               for m, s, b in zip(mult, shift, bias, strict=True))


def _add(out: dict[str, float], key: str, v: float) -> None:
    out[key] = out.get(key, 0.0) + v


def _layer_features(node: Node, graph: Graph, choice: KernelChoice, out: dict[str, float],
                    rows: tuple[int, int] | None, overlapped: bool = False, helium: bool = False) -> None:
    """One call of a layer; rows: (input rows, output rows) of a band's call, None for the whole tensors."""
    if not isinstance(choice, KernelChoice):  # an ONNX run's layer, a choice per band shape: no M-profile path
        return
    x = graph.tensors[node.inputs[0]]
    if helium and _helium_features(node, graph, choice, out, rows, overlapped):
        return
    if node.op == "TflFullyConnected" and not choice.scratch and x.dtype == "int8" and len(node.inputs) > 1 \
            and not getattr(choice.facts, "isa", ""):  # the plain loop: no scratch left for a DSP path
        w = graph.tensors[node.inputs[1]].shape
        _add(out, "fc_plain_mac", w[0] * w[1])
    if getattr(choice.facts, "isa", None) != "m-profile":
        return
    y = graph.tensors[node.outputs[0]] if node.outputs else None
    if node.op in ("TflConv2D", "TflConv2DAdd") and y is not None and len(y.shape) == 4:
        n, oh, ow, oc = y.shape
        if rows is not None:
            oh = rows[1]
        kh, kw = node.attrs["kernel"]
        kq, groups, positions = -(-kh * kw * x.shape[3] // 4), -(-oc // 4), n * oh * ow
        tile = choice.detail if isinstance(choice.detail, int) and choice.detail > 0 else positions
        tiles = -(-positions // max(tile, 1))
        _add(out, "call", 1)
        _add(out, "conv_call_group", groups)
        if node.op == "TflConv2DAdd":  # the fused ADD's tables, built each call
            _add(out, "conv_add_call", 1)
        _add(out, "conv_tile", tiles)
        _add(out, "conv_tile_quad", tiles * kq * groups)
        if node.op == "TflConv2D" and not getattr(choice.facts, "widened_weights", False) \
                and _undoubled(node, graph, tile, positions):  # (widened at compile time: doubled there)
            _add(out, "conv_undoubled_out", positions * oc)
    elif node.op == "TflDepthwiseConv2D" and y is not None and len(y.shape) == 4:
        n, full_oh, ow, oc = y.shape
        oh = full_oh if rows is None else rows[1]
        positions = n * oh * ow
        if oc != x.shape[3] and not choice.scratch:  # a depth multiplier above 1 without tfl_depthwise_s8_mult's
            kh, kw = node.attrs["kernel"]              # scratch: the plain loop (of 4, 8, ...: its own path)
            mult4 = oc // x.shape[3] % 4 == 0
            _add(out, "dw_mult4_plain_mac" if mult4 else "dw_mult_plain_mac", positions * oc * kh * kw)
            return
        run = choice.detail if isinstance(choice.detail, int) and choice.detail > 0 else min(positions, DSP_DW_RUN)
        _add(out, "call", 1)
        _add(out, "dw_call_group", oc / 4)
        _add(out, "dw_run", (oc / 4) * -(-positions // run))
        a = node.attrs
        if isinstance(choice.detail, int) and tuple(a["kernel"]) == (3, 3) and tuple(a["dilations"]) == (1, 1) \
                and a["strides"][1] in (1, 2):
            _add(out, "dw_unbanded_mac", positions * oc)
        ring = _ring(node, x.shape[3], oc, ow, choice)
        if overlapped and not ring and not _stride2_whole(node, x.shape[2], ow):
            # y not apart from x: a call a row (tflite_int8_depthwise.c; the ring's rows are copied out of x first,
            # apart or not, and the stride-2 path takes its inside rows in one call where it covers every column)
            _add(out, "dw_overlap_row", (oc / 4) * oh)
        if ring and oh < full_oh and a["strides"][0] == 1 and ow == x.shape[2] \
                and (ow % 6 == 0 or ow == 3):
            _add(out, "dw_ring_band_out", positions * oc)  # a band's rows: tfl_dsp_dwp_rows, not the SAME function
        if ow < full_oh and (overlapped or ow >= oh):  # the layer's path by columns lost (y over x, a band's rows)
            _add(out, "dw_no_column", positions * oc)
    elif node.op == "TflFullyConnected" and x.dtype == "int8" and len(node.inputs) > 1:
        outs, inner = graph.tensors[node.inputs[1]].shape
        if isinstance(choice.detail, tuple) and choice.detail[:1] == ("blocks",):
            for k, v in _fc_block_features(outs, inner, *choice.detail[1:]).items():
                _add(out, k, v)


def _helium_features(node: Node, graph: Graph, choice: KernelChoice, out: dict[str, float],
                     rows: tuple[int, int] | None, overlapped: bool) -> bool:
    """The M55's terms of a layer Helium's kernels take (the module's docstring); False where the DSP paths run
    it, counted as on the M4."""
    y = graph.tensors[node.outputs[0]] if node.outputs else None
    if y is None or len(y.shape) != 4 or graph.tensors[node.inputs[0]].dtype != "int8":
        return False
    n, oh, ow, oc = y.shape
    positions = n * (oh if rows is None else rows[1]) * ow
    if getattr(choice.facts, "isa", None) == "helium":  # CONV_2D, with or without the fused ADD
        if overlapped and node.op == "TflConv2D" and _pointwise(node):
            if _helium_usual(node):
                _add(out, "mve_pw_overlap_pos", positions)
                _add(out, "mve_pw_overlap_out", positions * oc)
            else:  # the path apart from x requantises a position at a time too: the other path's calls cost more
                _add(out, "mve_pw_overlap_unusual_out", positions * oc)
        return True
    if node.op == "TflDepthwiseConv2D" and _helium_depthwise(node, graph):
        if choice.scratch < 16 * ((ow - 1) * node.attrs["strides"][1] + 3):
            # its ring of 4 bands of a row's span does not fit the scratch (a shortened run's: the band left out),
            # so tfl_depthwise_s8_mve refuses the layer and the DSP path runs it
            _add(out, "mve_dw_lost_out", positions * oc)
        else:
            _add(out, "mve_dw_group_call", oc / 4)
        return True
    return False


def _helium_usual(node: Node) -> bool:
    """tfl_mve_requant_usual's requantisation (tflite_int8_mve.h): int8's own clamp, every shift to the right."""
    a = node.attrs
    return a["y_min"] == -128 and a["y_max"] == 127 and max(a["shift"], default=-1) < 0  # (a search's hot path)


def _fc_block_features(outs: int, inner: int, kq: int, ob: int) -> dict[str, float]:
    """FULLY_CONNECTED's DSP path in blocks of ob outputs over kq quads of x at a time (the docstring's terms)."""
    nq = inner // 4
    nob, chunks = -(-outs // ob), -(-nq // kq)
    return {"fc_mac": outs * inner, "fc_block": nob * chunks, "fc_partial": outs * (chunks - 1),
            "fc_rewiden": (nob - 1) * nq if kq < nq else 0}


def fc_blocks_estimate(outs: int, inner: int, kq: int, ob: int) -> float:
    """The est. cycles FULLY_CONNECTED's blocking adds (aot/kernels/tflite_int8.py _fc_blocked picks the least)."""
    return sum(COST[k] * v for k, v in _fc_block_features(outs, inner, kq, ob).items())


class _Terms(dict):  # type: ignore[type-arg]
    """What _add writes, in order: _layer_features' terms of one call, to be added to a sum later."""

    def __init__(self) -> None:
        super().__init__()
        self.terms: list[tuple[str, float]] = []

    def get(self, key: str, default: Any = None) -> Any:  # noqa: ARG002
        return 0.0

    def __setitem__(self, key: str, v: float) -> None:
        self.terms.append((key, v))


def _terms(node: Node, graph: Graph, choice: Any, rows: tuple[int, int], helium: bool) -> list[tuple[str, float]]:
    """_layer_features of a band's call as (key, value) in the order it adds them; remembered (the band search
    estimates the same layers' calls at the same choices again and again: tflite_bands._RunMemo keeps the choices),
    by the node, the choice and the node's tensors themselves (held with the entry, so that no id is reused)."""
    tensors = tuple(graph.tensors.get(t) for t in (*node.inputs, *node.outputs))
    key = (id(node), id(choice), rows, helium)
    hit = _TERMS.get(key)
    if hit is not None and hit[0] is node and hit[1] is choice \
            and all(a is b for a, b in zip(hit[2], tensors, strict=True)):
        return hit[3]
    rec = _Terms()
    _layer_features(node, graph, choice, rec, rows=rows, helium=helium)
    if len(_TERMS) >= _TERMS_MAX:
        _TERMS.clear()
    _TERMS[key] = (node, choice, tensors, rec.terms)
    return rec.terms


_TERMS: dict[tuple[int, int, tuple[int, int], bool], tuple[Node, Any, tuple[Any, ...], list[tuple[str, float]]]] = {}
_TERMS_MAX = 1 << 16


def _exact(v: float) -> bool:
    """Whether sums of v (and the other terms) are exact in floats: v a multiple of 1/4 below 2^40."""
    return abs(v) < 2 ** 40 and (v * 4).is_integer()


def _band_features(node: Node, graph: Graph, choice: Any, out: dict[str, float], helium: bool = False) -> None:
    """A fused run (aot/kernels/tflite_bands.py BandChoice): every layer's calls on its band rows, the rows
    moved to the line buffers' tops between bands. Remembered where `out` starts empty (features): the band search
    estimates many fits of one run that differ only in what the terms do not read (the bytes, their layout), with
    the same schedule and the same layers' choices (tflite_bands._RunMemo keeps them); by those objects themselves
    (held with the entry, so that no id is reused), with the run's layers and groups."""
    d = getattr(choice, "detail", None)
    if d is None or not hasattr(d, "schedule"):
        return
    if out:
        _band_features_uncached(node, graph, d, out, helium)
        return
    groups = node.attrs.get("groups", ())
    held = (d.schedule, *d.inner.values(), *node.attrs["layers"], *(n for g in groups for p in g.pairs for n in p))
    key = (tuple(map(id, held)), tuple(d.inner), helium)
    hit = _BANDS.get(key)
    if hit is None or not all(a is b for a, b in zip(hit[0], held, strict=True)):
        _band_features_uncached(node, graph, d, out, helium)
        if len(_BANDS) >= _BANDS_MAX:
            _BANDS.clear()
        _BANDS[key] = (held, dict(out))
    else:
        out.update(hit[1])


_BANDS: dict[tuple[Any, ...], tuple[tuple[Any, ...], dict[str, float]]] = {}
_BANDS_MAX = 1 << 14


def _band_features_uncached(node: Node, graph: Graph, d: Any, out: dict[str, float], helium: bool) -> None:
    layers, geometry = node.attrs["layers"], node.attrs["geometry"]
    groups = node.attrs.get("groups", ())
    own = {g.k + h: [p[h] for p in g.pairs] for g in groups for h in (0, 1)}
    start = dict(out)
    if not _band_calls(layers, geometry, own, graph, d, out, helium, True):
        out.clear()  # a term not exact in floats: the calls one by one, as they come
        out.update(start)
        _band_calls(layers, geometry, own, graph, d, out, helium, False)
    for g in groups:  # the expansion's rows computed again (its halo, for each band), the depthwise's output copied
        e, dw = layers[g.k], layers[g.k + 1]
        again = sum(band.calls[g.k].oh for band in d.schedule.bands) - geometry[g.k].oh
        _, _, w, c = graph.tensors[e.outputs[0]].shape
        _add(out, "band_recompute_out", again * w * c)
        _add(out, "band_recompute_mac", again * w * c * graph.tensors[e.inputs[0]].shape[3])
        _add(out, "band_group_copy_byte", graph.tensors[dw.outputs[0]].size)


def _band_calls(layers: list[Node], geometry: list[Any], own: dict[int, list[Node]], graph: Graph, d: Any,
                out: dict[str, float], helium: bool, summed: bool) -> bool:
    """_band_features' terms of every band: its layers' calls, the rows moved to the line buffers' tops, the input's
    rows transposed. summed: each call shape's terms worked out once (the bands' calls mostly repeat) and added at
    its first call, so that the terms enter `out` in the same order as call by call (plan_estimate sums their
    products in that order), the repeats added at the end times their count: exact where every term is a multiple
    of 1/4 far below 2^50 (_exact), whatever the order of the sums; False, `out` half done, where one is not."""
    shapes: dict[tuple[int, int, int], list[tuple[str, float]]] = {}
    repeats: dict[tuple[int, int, int], int] = {}
    for band in d.schedule.bands:
        for k, m in enumerate(layers):
            c = band.calls[k]
            if c.oh and m.op != "Transpose":
                shape = (k, c.h, c.oh)
                if summed and shape in repeats:
                    repeats[shape] += 1
                    continue
                terms = shapes.get(shape)
                if terms is None:
                    terms = shapes[shape] = [t for n in own.get(k, [m]) if n.name in d.inner  # a grouped pair's
                                             for t in _terms(n, graph, d.inner[n.name], (c.h, c.oh), helium)]
                    if summed and not all(_exact(v) for _, v in terms):
                        return False
                repeats[shape] = 0
                for key, v in terms:
                    _add(out, key, v)
        for k, (_, kept) in enumerate(band.keep):
            if kept:
                _add(out, "band_move_byte", kept * geometry[k].out_row)
        first = band.calls[0]
        if layers[0].op == "Transpose" and first.oh:  # a channels-first input's rows copied channels-last
            _add(out, "band_transpose_byte", first.oh * geometry[0].out_row)
    for shape, times in repeats.items():
        if times:
            for key, v in shapes[shape]:
                _add(out, key, v * times)
    return not summed or all(abs(v) < 2 ** 50 for v in out.values())
