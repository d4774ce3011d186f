"""Only the M-profile conv and depthwise paths a model's layers take are compiled (issue 67, aot/kernels/dsp_paths.py):
the paths left out are the kernel configuration's (runtime/aotc_symbols.h, the prefix of the conv's and depthwise's
names), the library a firmware links keeps none of their code, and a path left out never changes a result: with
every path left out each layer falls to one compiled (the band, the plain loop), the same integers as with every
path compiled and as with the paths predicted, on the M4 under qemu."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool

from aot.build import build, configure, run_bundle
from aot.compiler import Options, compile_file
from aot.footprint import measure
from aot.ir import Graph, Node, Tensor
from aot.kernels.base import KernelChoice
from aot.kernels.dsp_paths import (
    CONV_PATHS,
    FC_BLOCK_PATHS,
    FC_PATHS,
    FILE_PATHS,
    LOOP_M1_PATHS,
    MULTC_PATHS,
    PATHS,
    SMALL_CONV_PATHS,
    depthwise_paths,
    left_out,
)
from aot.kernels.tflite_int8 import M_PROFILE, _depthwise_dsp_scratch

ROOT = Path(__file__).resolve().parents[2]
KWS = ROOT / "bench" / "models" / "keras" / "kws_dscnn_int8.tflite"
VWW = ROOT / "bench" / "models" / "keras" / "vww_mobilenet_int8.tflite"
MICRO = ROOT / "bench" / "models" / "tflm" / "micro_speech_quantized.tflite"
IC = ROOT / "bench" / "models" / "keras" / "ic_resnet8_int8.tflite"
AD = ROOT / "bench" / "models" / "keras" / "ad_autoencoder_int8.tflite"


def _depthwise_graph(m: int, kernel: tuple[int, int]) -> Graph:
    """One int8 DEPTHWISE_CONV_2D of 2 input channels and depth multiplier m, kernel (kw across), SAME at stride 1."""
    kh, kw = kernel
    w = (1, kh, kw, 2 * m)
    t = {"x": Tensor("x", (1, 9, 14, 2), "int8"), "w": Tensor("w", w, "int8", np.zeros(w, np.int8)),
         "y": Tensor("y", (1, 9, 14, 2 * m), "int8")}
    node = Node("TflDepthwiseConv2D", "dw", ["x", "w"], ["y"],
                {"kernel": [kh, kw], "strides": [1, 1], "dilations": [1, 1], "pads": [(kh - 1) // 2, (kw - 1) // 2],
                 "y_min": -128, "y_max": 127, "y_zero": -128})
    return Graph("g", [node], t, ["x"], ["y"])


def _left_out(bundle) -> list[str]:
    return re.findall(r"^#define (AOTC_TFL_\w+) 0$", bundle.files["runtime/aotc_symbols.h"], re.M)


def test_the_paths_a_model_takes_are_predicted_from_its_layers():
    """KWS DS-CNN on the M4 (25 x 5 depthwise planes by columns, 1 x 1 convs by rows, sums requantised in the MAC
    kernel, doubled, zero point -128, 125 positions: an odd last one) keeps exactly those paths; micro_speech (one
    depthwise layer of depth multiplier 8, 10 x 8 windows) the multiplier path alone, and a 3 x 12 window of
    multiplier 2 its wide variant too; the ring and stride 2 are VWW MobileNet's. The paths left out key the prefix
    of the conv's and the depthwise's names: another set, other names; the host's bundles (no M-profile path) leave
    none out."""
    kws = compile_file(KWS, Options(name="kws", target="mps2-an386"))
    assert set(PATHS) - set(_left_out(kws)) == {"AOTC_TFL_DW_DSP", "AOTC_TFL_DW_COLUMNS", "AOTC_TFL_CONV_ROWS",
                                                "AOTC_TFL_CONV_FUSED", "AOTC_TFL_CONV_DBL", "AOTC_TFL_CONV_FLOOR",
                                                "AOTC_TFL_CONV_ODD", "AOTC_TFL_DW_LOOP_SMALL", "AOTC_TFL_DW_LOOP_MULT4",
                                                *FC_PATHS, *SMALL_CONV_PATHS, *MULTC_PATHS,
                                                *LOOP_M1_PATHS}  # (only by a budget)
    micro = compile_file(MICRO, Options(name="micro", target="mps2-an386"))
    vww = compile_file(VWW, Options(name="vww", target="mps2-an386"))
    assert set(PATHS) - set(_left_out(micro)) == {"AOTC_TFL_DW_MULT", "AOTC_TFL_DW_LOOP_SMALL",
                                                  "AOTC_TFL_DW_LOOP_MULT4", *FC_PATHS, *SMALL_CONV_PATHS,
                                                  *MULTC_PATHS, *LOOP_M1_PATHS}
    assert "AOTC_TFL_DW_DSP" not in _left_out(vww) and "AOTC_TFL_DW_MULT" in _left_out(vww)
    assert {"AOTC_TFL_DW_RING", "AOTC_TFL_DW_SAME", "AOTC_TFL_DW_S2"}.isdisjoint(_left_out(vww))
    # the conv's and the depthwise's names are keyed by the paths left out of them; every other kernel's are the
    # same in the three bundles (the same objects: a compiler cache compiles them once)
    names = [_names(b) for b in (kws, micro, vww)]
    assert kws.metadata["symbol_prefix"] == micro.metadata["symbol_prefix"] == vww.metadata["symbol_prefix"]
    assert all(v.startswith(kws.metadata["symbol_prefix"]) for n in names for v in n.values())
    for name in ("aotc_tfl_conv_s8", "aotc_tfl_depthwise_s8"):
        assert len({n[name] for n in names}) == 3, name
    assert len({n["aotc_tfl_fc_s8"] for n in names}) == 1
    host = compile_file(KWS, Options(name="kws", target="host"))
    assert not _left_out(host)
    wide = _depthwise_graph(2, (3, 12))
    (node,) = wide.nodes
    c = KernelChoice("aotc_tfl_depthwise_s8", _depthwise_dsp_scratch(node, wide), facts=M_PROFILE)
    assert depthwise_paths(node, wide, c) == {"AOTC_TFL_DW_MULT", "AOTC_TFL_DW_MULT_WIDE"}
    narrow = _depthwise_graph(3, (10, 8))
    assert depthwise_paths(narrow.nodes[0], narrow, c) == {"AOTC_TFL_DW_MULT"}


def test_fully_connecteds_blocks_are_compiled_only_where_a_budget_takes_them():
    """The autoencoder (FULLY_CONNECTED layers alone) leaves the DSP path's RAM-budget blocks out without a budget
    (beside the whole rows' loop they cost it 0.7 % of its est. cycles and 0.8 KB of flash on the M4, issue 67) and
    compiles them where a budget's choice takes them."""
    none = compile_file(AD, Options(name="ad", target="mps2-an386"))
    tight = compile_file(AD, Options(name="ad", target="mps2-an386", ram_budget=1600))
    assert set(FC_BLOCK_PATHS) <= set(_left_out(none))
    assert not set(FC_BLOCK_PATHS) & set(_left_out(tight))
    assert "x widened" in tight.files["src/ad.c"] and "x widened" not in none.files["src/ad.c"]


def test_heliums_conv_leaves_the_dsp_conv_paths_out_on_the_m55():
    """On the M55 Helium's CONV_2D (tfl_conv_s8_mve) takes every conv layer it is chosen for before the DSP paths, so
    a model whose convs are all Helium's compiles none of them, as one with an M-profile depthwise layer did already
    (KWS): micro_speech (its depthwise of one input channel runs as a conv) and IC ResNet-8 (convs and fused ADDs)
    left every conv path out but the fused ADD's where it has one (issue 67: all compiled before, 34.7 and 37.3 KB of
    conv code)."""
    conv = set(CONV_PATHS) - {"AOTC_TFL_CONV_RESIDUAL"}
    micro = compile_file(MICRO, Options(name="micro", target="mps3-an547"))
    ic = compile_file(IC, Options(name="ic", target="mps3-an547"))
    assert conv | {"AOTC_TFL_CONV_RESIDUAL"} <= set(_left_out(micro))
    assert conv <= set(_left_out(ic)) and "AOTC_TFL_CONV_RESIDUAL" not in _left_out(ic)
    assert not set(FC_PATHS) & set(_left_out(ic))  # (the FC's paths only by a flash level, as on the M4)


def _wide_depthwise_graph(c: int, m: int) -> Graph:
    """_depthwise_graph's layer (3 x 3) with c input channels."""
    g = _depthwise_graph(m, (3, 3))
    w = (1, 3, 3, c * m)
    g.tensors.update({"x": Tensor("x", (1, 9, 14, c), "int8"), "w": Tensor("w", w, "int8", np.zeros(w, np.int8)),
                      "y": Tensor("y", (1, 9, 14, c * m), "int8")})
    g.nodes[0].attrs.update(mult=np.full(c * m, 1 << 30, np.int32), shift=np.full(c * m, -4, np.int32))
    return g


def test_heliums_compact_depthwise_levels_leave_the_compact_dsp_path_out():
    """The M55's levels after mve-conv-compact (issue 67, aot/flash.py): at "mve-dw-compact" (Helium's 3 x 3 depthwise
    off) Helium's compact loop (AOTC_TFL_MVE_DW_COMPACT kept) takes the layers of multiplier 1 and 8 channels or more,
    so the compact DSP path is left out, but kept where such a layer has fewer channels (the loop's least); at
    "mve-dw-small" ("dw-compact" off too) Helium's loop of last resort takes every layer: no compact DSP path, nor the
    compact multiplier one (where a layer of multiplier 1 leaves Helium's depthwise out; a model of multipliers above 1
    alone keeps mve-dw-compact's configuration). The M4's levels (no `helium`) keep the compact DSP paths."""
    def out(g: Graph, mve_off: tuple[str, ...], helium: bool = True) -> set[str]:
        (node,) = g.nodes
        c = KernelChoice("aotc_tfl_depthwise_s8", _depthwise_dsp_scratch(node, g), facts=M_PROFILE)
        return set(left_out(g, {node.name: c}, general=True, compact_depthwise=True, helium=helium, mve_off=mve_off))

    compact, small = ("fc", "conv-fast", "dw"), ("fc", "conv-fast", "dw", "dw-compact")
    wide, narrow, mult = _wide_depthwise_graph(16, 1), _wide_depthwise_graph(4, 1), _wide_depthwise_graph(16, 2)
    got = out(wide, compact)
    assert "AOTC_TFL_DW_COMPACT" in got and "AOTC_TFL_MVE_DW" in got and "AOTC_TFL_MVE_DW_COMPACT" not in got
    got = out(narrow, compact)
    assert "AOTC_TFL_DW_COMPACT" not in got and "AOTC_TFL_MVE_DW_COMPACT" not in got
    got = out(wide, small)
    assert {"AOTC_TFL_DW_COMPACT", "AOTC_TFL_DW_MULT_COMPACT", "AOTC_TFL_MVE_DW", "AOTC_TFL_MVE_DW_COMPACT"} <= got
    assert {"AOTC_TFL_DW_COMPACT", "AOTC_TFL_DW_MULT_COMPACT"} <= out(narrow, small)
    # a multiplier above 1 alone: the compact multiplier path's at both (Helium's depthwise families have no layer)
    assert out(mult, compact) == out(mult, small) and "AOTC_TFL_DW_MULT_COMPACT" not in out(mult, small)
    assert "AOTC_TFL_MVE_DW" not in out(mult, small)
    assert "AOTC_TFL_DW_COMPACT" not in out(wide, compact, helium=False)


def test_the_plain_loops_multiplier_1_offsets_only_at_the_dw_plain_level():
    """AOTC_TFL_DW_LOOP_M1 (issue 67): the plain depthwise loop's faster form takes depth multiplier 1 without
    divisions at "dw-plain" (plain_m1) alone; the levels after it (plain_depthwise without plain_m1) leave it out where
    a layer has multiplier 1, not where none has (their bundle then dw-plain's), and on the M55 (Helium's depthwise
    takes those layers) at every level; without a budget it is kept (the unbudgeted configuration unchanged)."""
    def out(g: Graph, **level: bool) -> set[str]:
        (node,) = g.nodes
        c = KernelChoice("aotc_tfl_depthwise_s8", _depthwise_dsp_scratch(node, g), facts=M_PROFILE)
        return set(left_out(g, {node.name: c}, general=True, compact_conv=True, compact_fc=True, **level))

    m1, m3 = _wide_depthwise_graph(16, 1), _wide_depthwise_graph(16, 3)
    m1_path = "AOTC_TFL_DW_LOOP_M1"
    assert m1_path not in out(m1, plain_depthwise=True, plain_m1=True)  # dw-plain
    assert m1_path in out(m1, plain_depthwise=True, plain_m1=False, small_fc=True)  # fc-small
    assert m1_path in out(m1, plain_depthwise=True, plain_m1=True, helium=True)  # the M55's dw-plain
    assert m1_path not in out(m3, plain_depthwise=True, plain_m1=False, small_fc=True)
    assert m1_path not in out(m1, compact_depthwise=True, plain_m1=False) | out(m1)
    assert m1_path in FILE_PATHS["tflite_int8_depthwise.c"] and m1_path in PATHS


def test_a_multiplier_layer_left_no_scratch_keeps_the_plain_loops_multiplier_path():
    """A --ram-budget that leaves a depthwise layer of multiplier 4, 8, ... no scratch (micro_speech at 4,720 B) runs
    it on the plain loop: its multiplier-4 path is compiled beside the smallest form (AOTC_TFL_DW_SMALL_MULT4, issue
    67: 11.67 M -> 1.59 M est. cycles), not where the layer has scratch, nor for other multipliers, nor at the flash
    levels whose plain loop is the faster form (it has that path) or the compact one."""
    def out(g: Graph, scratch: bool, **level: bool) -> set[str]:
        (node,) = g.nodes
        c = KernelChoice("aotc_tfl_depthwise_s8", _depthwise_dsp_scratch(node, g) if scratch else 0, facts=M_PROFILE)
        return set(left_out(g, {node.name: c}, **level))

    m8, m3 = _depthwise_graph(8, (10, 8)), _depthwise_graph(3, (10, 8))
    assert "AOTC_TFL_DW_SMALL_MULT4" not in out(m8, False)
    assert "AOTC_TFL_DW_SMALL_MULT4" in out(m8, True) and "AOTC_TFL_DW_SMALL_MULT4" in out(m3, False)
    assert "AOTC_TFL_DW_SMALL_MULT4" in out(m8, False, plain_depthwise=True) & out(m8, False, compact_depthwise=True)
    micro = compile_file(MICRO, Options(name="micro", target="mps2-an386", ram_budget=4720))
    assert micro.metadata["memory"]["ram_budget"]["traded"]["scratch"]["nodes"]["DEPTHWISE_CONV_2D_1"]["bytes"] == 0
    assert "AOTC_TFL_DW_SMALL_MULT4" not in _left_out(micro) and "AOTC_TFL_DW_MULT" in _left_out(micro)


def _names(bundle) -> dict[str, str]:
    return dict(re.findall(r"^#define (aotc_\w+) (\w+)$", bundle.files["runtime/aotc_symbols.h"], re.M))


def test_only_the_files_keyed_by_the_paths_read_them():
    """A kernel file whose code reads a path macro must be in dsp_paths.FILE_PATHS (with those macros), or two
    bundles that differ in that path would define one name with two codes."""
    kernels = ROOT / "runtime_c" / "kernels"
    header = kernels / "tflite_int8" / "aotc_tflite_int8.h"  # the macros default to 1 there, beside their helpers
    helpers = {m.group(1) for m in re.finditer(r"^#define (\w+)\(.*AOTC_TFL_(?:DW|CONV)_", header.read_text(), re.M)}
    assert helpers  # (the pattern still finds them)
    readers = {}
    for f in sorted(kernels.rglob("*.[ch]")):
        text = f.read_text()
        macros = {*PATHS, *(m for ms in FILE_PATHS.values() for m in ms)}  # the portable loops' too
        if f != header and (used := {p for p in macros if p in text} | {h for h in helpers if h in text}):
            readers[f.name] = used
    assert set(readers) == set(FILE_PATHS), readers
    for name, used in readers.items():
        assert used - helpers <= set(FILE_PATHS[name]), (name, used)


@pytest.mark.full
def test_paths_left_out_give_the_same_outputs_and_the_link_keeps_none_of_their_code(tmp_path):
    """KWS, VWW and micro_speech (its depthwise layer of multiplier 8) on the M4, micro_speech and IC ResNet-8 on the
    M55 (Helium's convs), three ways: every path compiled (the kernels as before issue 67), the paths predicted, every
    path left out (the layers by the fused band and the plain loops). Outputs identical on seeded inputs; the
    predicted library is smaller than the whole one as `aotc footprint` counts it (what a --gc-sections link keeps)
    and costs no more instructions; everything left out costs more."""
    require_tool("qemu-system-arm", "arm-none-eabi-gcc")
    from aot.bench import board_counts, insn_count_plugin

    plugin = insn_count_plugin(tmp_path)
    for model, target in ((KWS, "mps2-an386"), (VWW, "mps2-an386"), (MICRO, "mps2-an386"), (MICRO, "mps3-an547"),
                          (IC, "mps3-an547")):
        b = compile_file(model, Options(name="m", target=target))
        sym = b.files["runtime/aotc_symbols.h"]
        without = re.sub(r"^#define AOTC_TFL_\w+ 0\n", "", sym, flags=re.M)
        every = without.replace("#endif /* AOTC_SYMBOLS_H */", "".join(f"#define {p} 0\n" for p in PATHS)
                                + "#endif /* AOTC_SYMBOLS_H */")
        got: dict[str, tuple[list[np.ndarray], int, int]] = {}
        for way, text in (("all", without), ("predicted", sym), ("none", every)):
            out = tmp_path / f"{model.stem}_{target}_{way}"
            b.files["runtime/aotc_symbols.h"] = text
            b.write(out / "bundle")
            configure(out, target, build_type="Release")
            build(out)
            meta = json.loads((out / "bundle" / "metadata.json").read_text())
            rng = np.random.default_rng(0)
            feeds = [rng.integers(-128, 128, tuple(i["shape"])).astype(np.int8) for i in meta["inputs"]]
            outs = []
            for s in range(2):
                y, _ = run_bundle(out, meta, [np.roll(f, s) for f in feeds])
                outs.append(y)
            count, _ = board_counts(out, meta, feeds, plugin)
            got[way] = (outs, count, measure(out, meta)["model"]["flash_bytes"])
        for way in ("predicted", "none"):
            for a, z in zip(got[way][0], got["all"][0], strict=True):
                assert all(np.array_equal(a[k], z[k]) for k in a), (model.stem, way)
        assert got["predicted"][2] < got["all"][2], model.stem
        assert got["predicted"][1] <= got["all"][1] * 1.001, model.stem
        if target == "mps2-an386":  # (on the M55 Helium takes the convs either way)
            assert got["none"][1] > got["predicted"][1], model.stem


@pytest.mark.full
def test_the_portable_level_takes_the_faster_loops_where_they_do_the_work(monkeypatch):
    """The portable level's faster loops (AOTC_TFL_PORTABLE_FAST) on KWS (its pointwise convs most of the work), the
    smallest ones on IC ResNet-8 (3 x 3 convs: the faster loops measured 1.9 KB larger and 0.5 % slower there) and
    micro_speech (its multiplier-8 depthwise layer); portable-small the smallest everywhere."""
    require_tool("arm-none-eabi-gcc")
    from aot import flash

    ic, levels = ROOT / "bench" / "models" / "keras" / "ic_resnet8_int8.tflite", flash.LEVELS
    for level_name in ("portable", "portable-small"):
        monkeypatch.setattr(flash, "LEVELS", tuple(lv for lv in levels if lv.name == level_name))
        for model, fast in ((KWS, level_name == "portable"), (ic, False), (MICRO, False)):
            b = compile_file(model, Options(name="m", target="mps2-an386", flash_budget=10**9))
            assert b.metadata["flash_budget"]["level"] == level_name
            assert ("AOTC_TFL_PORTABLE_FAST" not in _left_out(b)) == fast, (model.name, level_name)
