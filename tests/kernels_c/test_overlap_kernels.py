"""A RAM budget's "overlap" (aot/plan/planner.py): an int8 TFLite CONV_2D or DEPTHWISE_CONV_2D writing its
output D bytes below its input, over the bytes it has consumed, D from aot/kernels/tflite_int8.py's
overlap_bytes. tests/kernels_c/test_overlap_kernels.c runs each kernel on one allocation holding both (exactly
its size) against the same kernel on separate buffers, bit for bit: on the host under AddressSanitizer
and UndefinedBehaviorSanitizer (the plain loops), on the Cortex-M4 under qemu (the DSP paths: CONV_2D's
tiles, DEPTHWISE_CONV_2D 4 channels at a time over every position, at tiles and runs of sums a budget may
give) and on the Cortex-M55 (Helium's CONV_2D). With D one granule smaller most cases must differ: the
check sees an output written over input still to be read."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool
from kernel_builds import CORTEX_M4, TESTS_C, WARNINGS, compile_and_link, run_checked, sanitize_for

from aot.emit_c.runtime_files import family_files
from aot.ir import Graph, Node, Tensor
from aot.kernels.tflite_int8 import overlap_bytes
from aot.paths import cmake_dir, kernel_file

# ASan and qemu builds: the whole file in the full tier (tests/README.md; the fast tier builds these kernels
# plain in tests/kernels_c/test_kernels_c.py)
pytestmark = pytest.mark.full

FIELDS = ("op", "n", "h", "w", "c", "oh", "ow", "oc", "kh", "kw", "sh", "sw", "dh", "dw", "pt", "pl", "tile",
          "below", "granule")
# the layers of the models (KWS's 1 x 1 and 3 x 3 depthwise on 25 x 5 x 64, VWW's first conv and a
# stride-2 depthwise, MobileNetV2's expansion and stride-2 depthwise, smaller) besides the random ones
FIXED = [dict(op=1, h=25, w=5, c=64, oc=64, k=(3, 3), s=(1, 1), d=(1, 1), pads=(1, 1), ends=(1, 1)),
         dict(op=0, h=25, w=5, c=64, oc=64, k=(1, 1), s=(1, 1), d=(1, 1), pads=(0, 0), ends=(0, 0)),
         dict(op=0, h=48, w=48, c=3, oc=8, k=(3, 3), s=(2, 2), d=(1, 1), pads=(0, 0), ends=(1, 1)),
         dict(op=1, h=48, w=48, c=16, oc=16, k=(3, 3), s=(2, 2), d=(1, 1), pads=(0, 0), ends=(1, 1)),
         dict(op=0, h=28, w=28, c=16, oc=96, k=(1, 1), s=(1, 1), d=(1, 1), pads=(0, 0), ends=(0, 0)),
         dict(op=1, h=28, w=28, c=96, oc=96, k=(3, 3), s=(2, 2), d=(1, 1), pads=(1, 1), ends=(1, 1)),
         dict(op=0, h=14, w=14, c=96, oc=24, k=(1, 1), s=(1, 1), d=(1, 1), pads=(0, 0), ends=(0, 0))]


def _case(op: int, h: int, w: int, c: int, oc: int, k: tuple[int, int], s: tuple[int, int], d: tuple[int, int],
          pads: tuple[int, int], ends: tuple[int, int], tile: int = 0) -> dict[str, int] | None:
    """A case's fields, D from overlap_bytes on the node the frontend would make; None: no output, or no overlap
    the planner may take."""
    oh = (h + pads[0] + ends[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + pads[1] + ends[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh < 1 or ow < 1:
        return None
    name = "TflDepthwiseConv2D" if op else "TflConv2D"
    w_shape = (1, *k, oc) if op else (oc, *k, c)
    tensors = {"x": Tensor("x", (1, h, w, c), "int8"), "w": Tensor("w", w_shape, "int8", np.zeros(w_shape, np.int8)),
               "y": Tensor("y", (1, oh, ow, oc), "int8")}
    node = Node(name, "conv", ["x", "w"], ["y"], {"kernel": list(k), "strides": list(s), "dilations": list(d),
                                                  "pads": list(pads)})
    below = overlap_bytes(node, Graph("g", [node], tensors, ["x"], ["y"]))
    if below is None and op and oc != c and c > 1:  # the depth multiplier path goes input channel by channel,
        return None                                 # each over every position: no overlap planned (none to test)
    assert below is not None and below % 16 == 0
    return dict(op=op, n=1, h=h, w=w, c=c, oh=oh, ow=ow, oc=oc, kh=k[0], kw=k[1], sh=s[0], sw=s[1], dh=d[0], dw=d[1],
                pt=pads[0], pl=pads[1], tile=tile, below=below, granule=math.lcm(16, c) if op else 16)


def cases(count: int, seed: int, largest: int) -> list[dict[str, int]]:
    """The fixed layers, then random ones up to `largest` rows and columns: windows 1 x 1 to 5 x 5 and
    uneven, strides 1 and 2, dilation 2, pads from none to beyond SAME's, depth multipliers 1 and 2,
    channels that are and are not multiples of 4 (the DSP depthwise path's), tiles and runs a budget gives."""
    rng = np.random.default_rng(seed)
    out = [c for c in (_case(**f) for f in FIXED) if c is not None]
    while len(out) < count:
        op = int(rng.integers(2))
        k = [(1, 1), (3, 3), (3, 3), (5, 5), (1, 3), (3, 1), (10, 4)][rng.integers(7)]
        s = [(1, 1), (1, 1), (2, 2), (1, 2)][rng.integers(4)]
        d = [(1, 1), (1, 1), (1, 1), (2, 2)][rng.integers(4)]
        c = int(rng.choice([4, 8, 12, 16, 32, 64, 3, 5]) if op else rng.choice([1, 3, 4, 8, 16, 24, 32]))
        oc = c * int(rng.choice([1, 1, 1, 2])) if op else int(rng.choice([1, 4, 5, 8, 16, 32, 48, 96]))
        pads = (int(rng.integers(k[0])), int(rng.integers(k[1])))
        ends = (int(rng.integers(k[0])), int(rng.integers(k[1])))
        tile = 0 if rng.integers(3) == 0 else int(rng.integers(1, 33)) * (2 if op == 0 else int(rng.integers(1, 9)))
        case = _case(op, int(rng.integers(1, largest + 1)), int(rng.integers(1, largest + 1)), c, oc, k, s, d, pads,
                     ends, tile)
        if case is not None:
            out.append(case)
    return out


def write_cases(directory: Path, chosen: list[dict[str, int]]) -> None:
    rows = ",\n".join("    {" + ", ".join(str(c[f]) for f in FIELDS) + "}" for c in chosen)
    (directory / "overlap_cases.h").write_text(f"static const overlap_case CASES[] = {{\n{rows}\n}};\n")


def _sources() -> list[Path]:
    return [TESTS_C / "test_overlap_kernels.c",
            *(kernel_file(f) for f in family_files("tflite_int8") if f.endswith(".c"))]


def _check(out: str, chosen: list[dict[str, int]], share: float) -> None:
    """No mismatch, and with D a granule short at least `share` of the cases differ: the check does see an
    output written over input still to be read (not in every case: D is rounded up to its granule, a window's
    lowest byte is bounded from below, and the DSP paths read a tile's patches or a whole padded span of 4
    channels before writing any of its outputs)."""
    assert "MISMATCH" not in out and "overlap ok" in out, out
    differ, tighter = (int(v) for v in out.split("differs in ")[1].split()[0:3:2])
    assert tighter > len(chosen) // 2 and differ >= share * tighter, out


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict:
    return {"dir": tmp_path_factory.mktemp("objects")}


def test_overlapping_output_is_bit_exact_on_host_under_asan(tmp_path, objects):
    require_tool("gcc")
    chosen = cases(400, seed=1, largest=24)
    write_cases(tmp_path, chosen)
    exe = tmp_path / "test_overlap_kernels"
    compile_and_link(objects, "gcc", _sources(), [*WARNINGS, *sanitize_for("tflite_int8"), f"-I{tmp_path}"], exe)
    _check(run_checked([str(exe)], timeout=300), chosen, 0.5)  # 260 of 400 at seed 1


BOARDS = {"m4": ("mps2-an386", CORTEX_M4), "m55": ("mps3-an547", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"])}


@pytest.mark.parametrize("core", sorted(BOARDS))
def test_overlapping_output_is_bit_exact_on_cortex_m(tmp_path, objects, core):
    """The DSP paths on the M4, Helium's CONV_2D and the DSP depthwise path on the M55, under qemu."""
    require_tool("arm-none-eabi-gcc", "qemu-system-arm")
    board, cpu = BOARDS[core]
    chosen = cases(150 if core == "m4" else 60, seed=2, largest=20)
    write_cases(tmp_path, chosen)
    support = cmake_dir() / "cortex-m"
    exe = tmp_path / "test_overlap_kernels.elf"
    flags = [*WARNINGS, *cpu, "-O2", "-ffunction-sections", "-fdata-sections", f"-I{support}", f"-I{tmp_path}"]
    link = [f"-T{support / f'{board}.ld'}", f"-L{support}", "--specs=nano.specs", "--specs=rdimon.specs",
            "-nostartfiles", "-Wl,--gc-sections"]
    compile_and_link(objects, "arm-none-eabi-gcc", [*_sources(), support / "startup.c"], flags, exe, link)
    out = run_checked(["qemu-system-arm", "-M", board, "-nographic", "-monitor", "none", "-serial", "none",
                       "-semihosting-config", "enable=on,target=native,arg=test_overlap_kernels,arg=3",
                       "-kernel", str(exe)], timeout=600)
    _check(out, chosen, 0.1)  # the M4 22 of 150, the M55 20 of 60
