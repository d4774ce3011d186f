"""Corrupted and truncated accel_sim programs fed to the C runtime built with AddressSanitizer
and UndefinedBehaviorSanitizer (-fno-sanitize-recover=all: any report aborts the run).

Programs come from the compiler (whole partitioned functions, float32 and int8 models) and
from the assembler (the 8-bit instructions, fixed-point and float requantisation). Truncated
programs and programs with flipped bytes must always be refused with an error code;
corruptions that keep a valid checksum (what a bug in a compiler could produce) must give an
error code or run, never crash, and agree with the reference model."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
import zoo
from conftest import current_tier, require_tool
from onnx import TensorProto, helper, numpy_helper

from aot.compiler import Options, partition_model
from aot.paths import runtime_dir
from aot.vendor.accel_sim import DeviceConfig, isa, make_vendor, refmodel
from aot.vendor.accel_sim.isa import (
    F_BIAS,
    F_CLIP,
    F_FSCALE,
    F_REQUANT,
    DType,
    Err,
    Kind,
    Op,
    Program,
    ProgramBuilder,
    Region,
)
from aot.vendor.accel_sim.lower import lower_function
from aot.vendor.accel_sim.native import include_dirs, runtime_sources

SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g", "-O1")
CODES = {int(e) for e in Err} | {0}


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    require_tool(os.environ.get("CC", "cc"))
    out = tmp_path_factory.mktemp("asim") / "asim_check"
    src = runtime_dir() / "vendor" / "accel_sim" / "tools" / "asim_check.c"
    subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-Wall", "-Wextra", "-Werror", *SANITIZE,
                    *(f"-I{d}" for d in include_dirs()), str(src), *map(str, runtime_sources()), "-o", str(out)],
                   check=True)
    return out


def run_checker(checker, tmp_path, blobs: list[bytes]) -> list[tuple[int, int]]:
    """(error code, cycles) of each program, from one run of the sanitized checker."""
    files = []
    for k, blob in enumerate(blobs):
        f = tmp_path / f"p{k:05d}.asim"
        f.write_bytes(blob)
        files.append(str(f))
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS="print_stacktrace=1")
    r = subprocess.run([str(checker), *files], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "runtime error" not in r.stderr and "Sanitizer" not in r.stderr, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert len(lines) == len(blobs)
    return [(int(line.split()[0], 16), int(line.split()[1])) for line in lines]


def small_cnn():
    """Conv + residual add + ReLU, max pool, global pool, dense: every lowering path, small."""
    rng = np.random.default_rng(0)

    def w(*shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, f"w{len(inits)}")

    inits = []
    for shape in [(8, 3, 3, 3), (8,), (8, 8, 3, 3), (10, 8), (10,)]:
        inits.append(w(*shape))
    names = [i.name for i in inits]
    nodes = [helper.make_node("Conv", ["x", names[0], names[1]], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", names[2]], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
             helper.make_node("Add", ["c2", "r1"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["r2"], name="relu2"),
             helper.make_node("MaxPool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
             helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", names[3], names[4]], ["y"], transB=1, name="fc")]
    g = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def compiled(model, cfg: DeviceConfig) -> bytes:
    graph = partition_model(model, Options(vendors=(make_vendor(cfg),))).graph
    (fn,) = graph.functions.values()
    return lower_function(fn, cfg).blob


def int8_program() -> bytes:
    """int8 CONV with requantisation, VREQ, int8 VADD/POOL: the integer paths."""
    cfg = DeviceConfig()
    b = ProgramBuilder(cfg)
    b.dma(Op.LOAD, 1, 0, 0, 256)
    b.dma(Op.LOAD, 0, 0, 1024, 512)
    b.set(IFM_C=4, IFM_H=8, IFM_W=8, OFM_C=4, OFM_H=8, OFM_W=8, KERNEL=isa.pair(3, 3), STRIDE=isa.pair(1, 1),
          PAD=isa.pair(1, 1), DILATION=isa.pair(1, 1), GROUPS=1, BIAS_ADDR=1024 + 144, QUANT_ADDR=1024 + 160,
          IFM_ZP=1, OFM_ZP=isa.i32_bits(-2), ACT_MIN=isa.i32_bits(-128), ACT_MAX=127)
    b.emit(Op.CONV, DType.I8 | F_BIAS | F_REQUANT | F_CLIP, 0, 0, 1024, 2048)
    b.emit(Op.CONV, DType.I8 | F_BIAS, 0, 0, 1024, 4096)
    b.set(V_OUTER=4, V_INNER=64, VB_SO=64, VB_SI=1)
    b.emit(Op.VREQ, F_CLIP, 0, 4096, 0, 8192)
    b.emit(Op.VADD, DType.I8 | F_CLIP, 0, 2048, 8192, 2048)
    b.emit(Op.POOL, DType.I8, 0, 2048, 0, 3072)
    b.dma(Op.STORE, 2, 0, 3072, 256)
    b.end()
    rng = np.random.default_rng(1)
    consts = (rng.integers(-128, 128, 144).astype(np.int8).tobytes() + rng.integers(-99, 99, 4).astype(np.int32)
              .tobytes() + np.full(4, 1 << 30, np.int32).tobytes() + np.full(4, -3, np.int32).tobytes())
    consts += b"\0" * (512 - len(consts))
    return Program(cfg, [Region(Kind.CONST, "uint8", (512,)), Region(Kind.INPUT, "int8", (4, 8, 8)),
                         Region(Kind.OUTPUT, "int8", (4, 8, 8))], b.insns, consts, 16384).to_bytes()


def uint8_float_requant_program() -> bytes:
    """uint8 CONV requantised with float scales, VREQ, the quantized VADD and the requantised
    POOL sum: the float-scale paths."""
    cfg = DeviceConfig()
    b = ProgramBuilder(cfg)
    b.dma(Op.LOAD, 1, 0, 0, 256)
    b.dma(Op.LOAD, 0, 0, 1024, 512)
    b.set(IFM_C=4, IFM_H=8, IFM_W=8, OFM_C=4, OFM_H=8, OFM_W=8, KERNEL=isa.pair(3, 3), STRIDE=isa.pair(1, 1),
          PAD=isa.pair(1, 1), DILATION=isa.pair(1, 1), GROUPS=1, BIAS_ADDR=1024 + 144, QUANT_ADDR=1024 + 160,
          IFM_ZP=128, OFM_ZP=120, ACT_MIN=120, ACT_MAX=250)
    b.emit(Op.CONV, DType.U8 | F_BIAS | F_REQUANT | F_FSCALE | F_CLIP, 0, 0, 1024, 2048)
    b.emit(Op.CONV, DType.U8 | F_BIAS, 0, 0, 1024, 4096)
    b.set(V_OUTER=4, V_INNER=64, VB_SO=64, VB_SI=1)
    b.emit(Op.VREQ, DType.U8 | F_FSCALE | F_CLIP, 0, 4096, 0, 8192)
    b.set(V_OUTER=1, V_INNER=256, VB_SO=256, QUANT_ADDR=1024 + 176)
    b.emit(Op.VADD, DType.U8 | F_REQUANT | F_FSCALE | F_CLIP, 0, 2048, 8192, 2048)
    b.set(KERNEL=isa.pair(8, 8), OFM_H=1, OFM_W=1, QUANT_ADDR=1024 + 160)
    b.emit(Op.POOL, DType.U8 | F_REQUANT | F_FSCALE, 0, 2048, 0, 3072)
    b.dma(Op.STORE, 2, 0, 3072, 4)
    b.end()
    rng = np.random.default_rng(2)
    consts = (rng.integers(-128, 128, 144).astype(np.int8).tobytes() + rng.integers(-99, 99, 4).astype(np.int32)
              .tobytes() + np.full(4, 0.004, np.float32).tobytes() + np.array([0.7, 0.6, 5.5], np.float32).tobytes())
    consts += b"\0" * (512 - len(consts))
    return Program(cfg, [Region(Kind.CONST, "uint8", (512,)), Region(Kind.INPUT, "uint8", (4, 8, 8)),
                         Region(Kind.OUTPUT, "uint8", (4, 1, 1))], b.insns, consts, 16384).to_bytes()


@pytest.fixture(scope="module")
def programs() -> dict[str, bytes]:
    from quantize import quantized

    return {"lenet": compiled(zoo.lenet(), DeviceConfig()),
            "small_cnn_tiled": compiled(small_cnn(), DeviceConfig(spm_bytes=2048)),
            "int8": int8_program(),
            "uint8_float_requant": uint8_float_requant_program(),
            "lenet_int8": compiled(quantized(zoo.lenet(), "QDQ"), DeviceConfig()),
            "small_cnn_uint8_tiled": compiled(quantized(small_cnn(), "QOperator", activations="uint8"),
                                              DeviceConfig(spm_bytes=1024))}


def model_code(blob: bytes) -> int:
    try:
        refmodel.timing(blob)
    except refmodel.SimError as e:
        return int(e.code)
    return 0


def test_intact_programs_run_as_compiled(checker, tmp_path, programs):
    results = run_checker(checker, tmp_path, list(programs.values()))
    for (name, blob), (rc, cycles) in zip(programs.items(), results, strict=True):
        assert rc == 0, name
        assert cycles == refmodel.timing(blob).cycles, name


def test_truncated_programs_are_refused(checker, tmp_path, programs):
    rng = np.random.default_rng(0)
    blobs = []
    for blob in programs.values():
        h = isa.Header.parse(blob)
        cuts = {0, 1, 63, 64, 65, 64 + 32 * h.n_regions, len(blob) - 1, len(blob) - 16}
        cuts |= {int(c) for c in rng.integers(0, len(blob), 40)}
        blobs += [blob[:c] for c in sorted(cuts)]
    assert all(rc == Err.TRUNCATED for rc, _ in run_checker(checker, tmp_path, blobs))


def test_flipped_bytes_are_refused(checker, tmp_path, programs):
    rng = np.random.default_rng(1)
    blobs = []
    for blob in programs.values():
        h = isa.Header.parse(blob)
        code_end = 64 + 32 * h.n_regions + 16 * h.n_insns
        for k in range(150):  # mostly header, regions and instructions; some constants
            raw = bytearray(blob)
            for at in rng.integers(0, code_end if k % 5 else len(blob), int(rng.integers(1, 4))):
                raw[at] ^= int(rng.integers(1, 256))
            blobs.append(bytes(raw))
    results = run_checker(checker, tmp_path, blobs)
    assert all(rc != 0 for rc, _ in results)
    assert sum(rc == Err.CHECKSUM for rc, _ in results) > 0.9 * len(results)


def test_corruptions_with_a_valid_checksum_never_crash(checker, tmp_path, programs):
    """Bytes changed and the checksum recomputed: the runtime must survive on its other
    checks (opcodes, operands, DMA and scratchpad bounds, overlap, watchdog), and say what the
    reference model says. 200 corruptions a program, 50 in the fast tier (the 200 took 6.5 s of it)."""
    rng = np.random.default_rng(2)
    blobs = []
    for blob in programs.values():
        h = isa.Header.parse(blob)
        code_start, code_end = 64 + 32 * h.n_regions, 64 + 32 * h.n_regions + 16 * h.n_insns
        for k in range(50 if current_tier() == "fast" else 200):
            raw = bytearray(blob)
            lo = 16 if k % 4 == 0 else code_start  # a quarter also corrupt the header and region table
            for at in rng.integers(lo, code_end, int(rng.integers(1, 4))):
                if k % 3 == 0:  # a plausible value: a small number or a power of two
                    raw[at] = int(rng.choice([0, 1, 2, 3, 4, 0x10, 0x40, 0x80, 0xFF]))
                else:
                    raw[at] ^= int(rng.integers(1, 256))
            blobs.append(isa.with_checksum(bytes(raw)))
    results = run_checker(checker, tmp_path, blobs)
    codes = [rc for rc, _ in results]
    assert set(codes) <= CODES
    assert codes == [model_code(b) for b in blobs]
    assert len(set(codes)) >= 6  # the corruptions reach many different checks
