"""accel_sim instruction by instruction: the C simulator against the numpy reference model
(same outputs, same error codes, same cycle counts) and both against plain numpy formulas of
each instruction's meaning, in float32 and int8. Programs are assembled with ProgramBuilder
and run on numpy buffers through ctypes."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

from aot.paths import runtime_dir
from aot.vendor.accel_sim import isa, refmodel
from aot.vendor.accel_sim.device import DeviceConfig
from aot.vendor.accel_sim.isa import (
    F_ACC,
    F_AVG,
    F_BIAS,
    F_CLIP,
    F_FSCALE,
    F_REQUANT,
    DType,
    Err,
    Insn,
    Kind,
    Op,
    Program,
    ProgramBuilder,
    Region,
    f32_bits,
    i32_bits,
    pair,
)
from aot.vendor.accel_sim.native import NativeRuntime

CFG = DeviceConfig()
SPM = 32 * 1024
NPDT = {DType.F32: np.float32, DType.I8: np.int8, DType.I32: np.int32, DType.U8: np.uint8}


@pytest.fixture(scope="module")
def rt(tmp_path_factory) -> NativeRuntime:
    return NativeRuntime.build(tmp_path_factory.mktemp("accel_sim"))


def program(b: ProgramBuilder, regions: list[Region], consts: bytes = b"", spm: int = SPM) -> bytes:
    b.end()
    consts = consts + b"\0" * (-len(consts) % 4)
    return Program(CFG, [Region(Kind.CONST, "uint8", (len(consts),)), *regions], b.insns, consts, spm).to_bytes()


def run_both(rt: NativeRuntime, blob: bytes, bound: list[np.ndarray], spm: np.ndarray | None = None):
    """Run on the C simulator and the reference model from the same initial state; both must
    agree on the error code and the statistics. Returns (C buffers, C spm, model buffers, model spm)."""
    spm = np.zeros(SPM, np.uint8) if spm is None else spm
    c_bound, c_spm = [b.copy() for b in bound], spm.copy()
    rc, c_stats = rt.execute(blob, c_bound, c_spm)
    m_bound, m_spm = [b.copy() for b in bound], spm.copy()
    try:
        m_stats = refmodel.execute(blob, m_bound, m_spm)
        m_rc = 0
    except refmodel.SimError as e:
        m_rc, m_stats = int(e.code), None
    assert rc == m_rc, f"C returned {rc:#x}, the model {m_rc:#x}"
    if rc == 0:
        assert c_stats == m_stats
        assert refmodel.timing(blob) == m_stats  # the cost model does not depend on the data
    return c_bound, c_spm, m_bound, m_spm, rc


def spm_with(*chunks: tuple[int, np.ndarray]) -> np.ndarray:
    spm = np.zeros(SPM, np.uint8)
    for at, arr in chunks:
        raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        spm[at:at + raw.size] = raw
    return spm


def spm_get(spm: np.ndarray, at: int, dtype, shape) -> np.ndarray:
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return spm[at:at + n].view(dtype).reshape(shape)


def compute_only(setup: dict[str, int], op: Op, flags: int, b: int = 0, c: int = 0, d: int = 0) -> bytes:
    """A program of register writes and one compute instruction on the scratchpad."""
    pb = ProgramBuilder(CFG)
    pb.set(**setup)
    pb.emit(op, flags, 0, b, c, d)
    return program(pb, [])


# --- the C header and the Python ISA agree ----------------------------------------------------

def test_c_header_defines_the_same_numbers():
    text = (runtime_dir() / "vendor" / "accel_sim" / "aotc_accel_sim.h").read_text()
    defines = {m[0]: int(m[1], 0) for m in re.findall(r"#define AOTC_ACCEL_SIM_(\w+) \(?(0x[0-9a-fA-F]+|\d+)u?", text)}
    for e in Err:
        assert defines[f"E_{e.name}"] == e.value, e
    for name in ("MAGIC", "VERSION", "HEADER_BYTES", "REGION_BYTES", "INSN_BYTES", "MAX_REGIONS", "MAX_NDIM"):
        assert defines[name] == getattr(isa, name), name
    assert defines["DTYPE_MASK"] == isa.DTYPE_MASK
    dtypes = re.findall(r"AOTC_ACCEL_SIM_(F32|I8|I32|U8) = (\d)", text)
    assert {k: int(v) for k, v in dtypes} == {d.name: d.value for d in DType}
    for f in ("F_ACC", "F_AVG", "F_BIAS", "F_CLIP", "F_REQUANT", "F_FSCALE"):
        assert defines[f] == getattr(isa, f), f
    ops = {m[0]: int(m[1], 16) for m in re.findall(r"AOTC_ACCEL_SIM_OP_(\w+) = (0x[0-9a-fA-F]+)", text)}
    assert ops == {o.name: o.value for o in Op}
    regs = re.search(r"enum \{\s*AOTC_ACCEL_SIM_R_DMA_N1(.*?)AOTC_ACCEL_SIM_NUM_REGS", text, re.S)
    names = ["DMA_N1"] + re.findall(r"AOTC_ACCEL_SIM_R_(\w+)", regs.group(1))
    assert names == [r.name for r in isa.Reg]
    kinds = re.findall(r"AOTC_ACCEL_SIM_(CONST|INPUT|OUTPUT|SCRATCH) = (\d)", text)
    assert {k: int(v) for k, v in kinds} == {k.name: k.value for k in Kind}


# --- DMA --------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_dma_moves_strided_3d_blocks(rt, seed):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 256, 4096, dtype=np.uint8)
    n2, n1, row = int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 40))
    es1 = int(rng.integers(0, 2)) * row + int(rng.integers(0, 30))  # may be 0: a broadcast source
    es2 = n1 * max(es1, 1) + int(rng.integers(0, 50))
    ss1 = row + int(rng.integers(0, 8))
    ss2 = n1 * ss1 + int(rng.integers(0, 8))
    ext0, spm0, dst0 = int(rng.integers(0, 200)), int(rng.integers(0, 64)), int(rng.integers(0, 300))
    b = ProgramBuilder(CFG)
    b.dma(Op.LOAD, 1, ext0, spm0, row, n1, es1, ss1, n2, es2, ss2)
    # and back out, to other strides
    b.dma(Op.STORE, 2, dst0, spm0, row, n1, row + 3, ss1, n2, n1 * (row + 3) + 5, ss2)
    blob = program(b, [Region(Kind.INPUT, "uint8", (4096,)), Region(Kind.OUTPUT, "uint8", (4096,))])
    (c_in, c_out), c_spm, (_, m_out), m_spm, rc = run_both(rt, blob, [src, np.zeros(4096, np.uint8)])
    assert rc == 0
    assert np.array_equal(c_spm, m_spm) and np.array_equal(c_out, m_out)
    for q in range(n2):
        for p in range(n1):
            want = src[ext0 + q * es2 + p * es1:][:row]
            assert np.array_equal(c_spm[spm0 + q * ss2 + p * ss1:][:row], want)
            assert np.array_equal(c_out[dst0 + q * (n1 * (row + 3) + 5) + p * (row + 3):][:row], want)


# --- CONV -------------------------------------------------------------------------------------

def conv_reference(x, w, bias, stride, pad, dil, groups, oh, ow, zp=0):
    """Plain loops over kernel taps: x [c, ih, iw] (taps outside it are zero), w [oc, c/g, kh, kw]."""
    c, ih, iw = x.shape
    oc, cin_g, kh, kw = w.shape
    acc = np.zeros((oc, oh, ow), np.float64 if x.dtype == np.float32 else np.int64)
    xv = x.astype(acc.dtype) - zp
    for o in range(oc):
        g = o // (oc // groups)
        for ky in range(kh):
            for kx in range(kw):
                for y in range(oh):
                    for xx in range(ow):
                        iy, ix = y * stride[0] + ky * dil[0] - pad[0], xx * stride[1] + kx * dil[1] - pad[1]
                        if 0 <= iy < ih and 0 <= ix < iw:
                            acc[o, y, xx] += xv[g * cin_g:(g + 1) * cin_g, iy, ix] @ w[o, :, ky, kx].astype(acc.dtype)
    if bias is not None:
        acc += bias.astype(acc.dtype)[:, None, None]
    return acc


CONV_CASES = {  # c, ih, iw, oc, oh, ow, k, stride, pad, dil, groups
    "3x3_pad": (3, 7, 6, 5, 7, 6, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    "strided": (4, 9, 9, 6, 4, 4, (3, 3), (2, 2), (0, 0), (1, 1), 1),
    "dilated": (2, 9, 8, 3, 5, 4, (3, 2), (1, 2), (0, 1), (2, 2), 1),
    "grouped": (6, 5, 5, 4, 5, 5, (3, 3), (1, 1), (1, 1), (1, 1), 2),
    "depthwise": (8, 6, 6, 8, 3, 3, (3, 3), (2, 2), (1, 1), (1, 1), 8),
    "1x1": (16, 4, 4, 24, 4, 4, (1, 1), (1, 1), (0, 0), (1, 1), 1),
    "tile_past_edge": (3, 4, 5, 2, 6, 7, (3, 3), (1, 1), (2, 2), (1, 1), 1),
    "all_padding": (2, 0, 0, 3, 2, 2, (3, 3), (1, 1), (1, 1), (1, 1), 1),
}


def conv_regs(c, ih, iw, oc, oh, ow, k, stride, pad, dil, groups) -> dict[str, int]:
    return dict(IFM_C=c, IFM_H=ih, IFM_W=iw, OFM_C=oc, OFM_H=oh, OFM_W=ow, KERNEL=pair(*k), STRIDE=pair(*stride),
                PAD=pair(*pad), DILATION=pair(*dil), GROUPS=groups)


@pytest.mark.parametrize("case", sorted(CONV_CASES))
@pytest.mark.parametrize("flags", [0, F_BIAS, F_BIAS | F_CLIP, F_ACC | F_BIAS])
def test_conv_f32(rt, case, flags):
    c, ih, iw, oc, oh, ow, k, stride, pad, dil, groups = CONV_CASES[case]
    rng = np.random.default_rng(len(case) + flags)
    x = rng.standard_normal((c, ih, iw)).astype(np.float32)
    w = rng.standard_normal((oc, c // groups, *k)).astype(np.float32)
    bias = rng.standard_normal(oc).astype(np.float32)
    old = rng.standard_normal((oc, oh, ow)).astype(np.float32)
    X, W, B, Y = 0, 8192, 12288, 16384
    regs = conv_regs(c, ih, iw, oc, oh, ow, k, stride, pad, dil, groups)
    regs.update(BIAS_ADDR=B, ACT_MIN=f32_bits(-0.5), ACT_MAX=f32_bits(1.0))
    blob = compute_only(regs, Op.CONV, DType.F32 | flags, X, W, Y)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((X, x), (W, w), (B, bias), (Y, old)))
    assert rc == 0
    want = conv_reference(x, w, bias if flags & F_BIAS else None, stride, pad, dil, groups, oh, ow)
    if flags & F_ACC:
        want = want + old
    if flags & F_CLIP:
        want = np.clip(want, -0.5, 1.0)
    for got in (c_spm, m_spm):
        np.testing.assert_allclose(spm_get(got, Y, np.float32, (oc, oh, ow)), want, rtol=1e-5, atol=1e-5)


def quant_params(rng, n) -> tuple[np.ndarray, np.ndarray]:
    mult = rng.integers(1 << 30, (1 << 31) - 1, n).astype(np.int32)
    shift = rng.integers(-12, 3, n).astype(np.int32)
    return mult, shift


def requantize_scalar(x: int, mult: int, shift: int) -> int:
    """TFLite's MultiplyByQuantizedMultiplier, one value at a time, with Python integers."""
    left, right = max(shift, 0), max(-shift, 0)
    x = max(min(x * (1 << left), 2**31 - 1), -(2**31))
    if x == mult == -(2**31):
        hi = 2**31 - 1
    else:
        v = x * mult + ((1 << 30) if x * mult >= 0 else 1 - (1 << 30))
        hi = abs(v) // (1 << 31) * (1 if v >= 0 else -1)  # C division truncates toward zero
    mask = (1 << right) - 1
    return (hi >> right) + ((hi & mask) > (mask >> 1) + (hi < 0))


@pytest.mark.parametrize("case", ["3x3_pad", "strided", "grouped", "depthwise", "tile_past_edge"])
@pytest.mark.parametrize("mode", ["int32", "requant", "requant_clip", "acc"])
def test_conv_int8(rt, case, mode):
    c, ih, iw, oc, oh, ow, k, stride, pad, dil, groups = CONV_CASES[case]
    rng = np.random.default_rng(7 + len(case) + len(mode))
    x = rng.integers(-128, 128, (c, ih, iw)).astype(np.int8)
    w = rng.integers(-128, 128, (oc, c // groups, *k)).astype(np.int8)
    bias = rng.integers(-5000, 5000, oc).astype(np.int32)
    old = rng.integers(-10000, 10000, (oc, oh, ow)).astype(np.int32)
    mult, shift = quant_params(rng, oc)
    zp_in, zp_out = -3, 5
    X, W, B, Q, Y = 0, 4096, 8192, 9216, 12288
    modes = {"int32": 0, "requant": F_REQUANT, "requant_clip": F_REQUANT | F_CLIP, "acc": F_ACC}
    flags = DType.I8 | F_BIAS | modes[mode]
    regs = conv_regs(c, ih, iw, oc, oh, ow, k, stride, pad, dil, groups)
    regs.update(BIAS_ADDR=B, QUANT_ADDR=Q, IFM_ZP=i32_bits(zp_in), OFM_ZP=i32_bits(zp_out), ACT_MIN=i32_bits(-100),
                ACT_MAX=i32_bits(90))
    blob = compute_only(regs, Op.CONV, flags, X, W, Y)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((X, x), (W, w), (B, bias), (Q, mult), (Q + 4 * oc, shift),
                                                             (Y, old)))
    assert rc == 0
    acc = conv_reference(x, w, bias, stride, pad, dil, groups, oh, ow, zp=zp_in)
    if mode == "acc":
        acc = acc + old
    if mode in ("int32", "acc"):
        want, got_dtype = np.clip(acc, -(2**31), 2**31 - 1).astype(np.int32), np.int32
    else:
        want = np.array([[[zp_out + requantize_scalar(int(v), int(mult[o]), int(shift[o])) for v in row]
                          for row in acc[o]] for o in range(oc)])
        if mode == "requant_clip":
            want = np.clip(want, -100, 90)
        want, got_dtype = np.clip(want, -128, 127).astype(np.int8), np.int8
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, Y, got_dtype, (oc, oh, ow)), want)


# --- MATMUL -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [(1, 10, 64), (5, 7, 3), (3, 17, 33)])
@pytest.mark.parametrize("dtype", ["f32", "i8", "i8_requant"])
def test_matmul(rt, dims, dtype):
    m, n, k = dims
    rng = np.random.default_rng(m * 100 + n)
    A, W, B, Q, Y = 0, 4096, 8192, 9216, 12288
    regs = dict(MM_M=m, MM_N=n, MM_K=k, BIAS_ADDR=B, QUANT_ADDR=Q, IFM_ZP=i32_bits(2), OFM_ZP=i32_bits(-7),
                ACT_MIN=f32_bits(0.0) if dtype == "f32" else i32_bits(-128), ACT_MAX=f32_bits(np.inf) if dtype == "f32"
                else i32_bits(127))
    if dtype == "f32":
        a = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        blob = compute_only(regs, Op.MATMUL, DType.F32 | F_BIAS | F_CLIP, A, W, Y)
        _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((A, a), (W, w), (B, bias)))
        want = np.maximum(a.astype(np.float64) @ w.T.astype(np.float64) + bias, 0)
        for got in (c_spm, m_spm):
            np.testing.assert_allclose(spm_get(got, Y, np.float32, (m, n)), want, rtol=1e-5, atol=1e-5)
        return
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    w = rng.integers(-128, 128, (n, k)).astype(np.int8)
    bias = rng.integers(-1000, 1000, n).astype(np.int32)
    mult, shift = quant_params(rng, n)
    requant = dtype == "i8_requant"
    blob = compute_only(regs, Op.MATMUL, DType.I8 | F_BIAS | (F_REQUANT if requant else 0), A, W, Y)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((A, a), (W, w), (B, bias), (Q, mult), (Q + 4 * n, shift)))
    acc = (a.astype(np.int64) - 2) @ w.T.astype(np.int64) + bias
    if requant:
        want = np.clip([[-7 + requantize_scalar(int(acc[i, j]), int(mult[j]), int(shift[j])) for j in range(n)]
                        for i in range(m)], -128, 127).astype(np.int8)
    else:
        want = acc.astype(np.int32)
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, Y, want.dtype, (m, n)), want)


# --- POOL -------------------------------------------------------------------------------------

def pool_reference(x, k, stride, pad, dil, oh, ow, average):
    c, ih, iw = x.shape
    out = np.zeros((c, oh, ow), np.float64)
    for y in range(oh):
        for xx in range(ow):
            taps = [x[:, iy, ix].astype(np.float64) for ky in range(k[0]) for kx in range(k[1])
                    for iy, ix in [(y * stride[0] + ky * dil[0] - pad[0], xx * stride[1] + kx * dil[1] - pad[1])]
                    if 0 <= iy < ih and 0 <= ix < iw]
            if taps:
                t = np.stack(taps)
                out[:, y, xx] = t.sum(0) / len(taps) if average else t.max(0)
    return out


POOL_CASES = {  # c, ih, iw, oh, ow, k, stride, pad, dil
    "2x2": (3, 8, 8, 4, 4, (2, 2), (2, 2), (0, 0), (1, 1)),
    "3x3_pad": (2, 7, 5, 4, 3, (3, 3), (2, 2), (1, 1), (1, 1)),
    "ceil_overhang": (2, 6, 6, 3, 3, (3, 3), (2, 2), (0, 0), (1, 1)),
    "dilated": (1, 9, 9, 5, 5, (2, 2), (1, 1), (0, 0), (3, 3)),
    "global": (5, 6, 7, 1, 1, (6, 7), (1, 1), (0, 0), (1, 1)),
}


@pytest.mark.parametrize("case", sorted(POOL_CASES))
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("dtype", ["f32", "i8"])
def test_pool(rt, case, average, dtype):
    c, ih, iw, oh, ow, k, stride, pad, dil = POOL_CASES[case]
    rng = np.random.default_rng(len(case))
    x = (rng.standard_normal((c, ih, iw)).astype(np.float32) if dtype == "f32"
         else rng.integers(-128, 128, (c, ih, iw)).astype(np.int8))
    regs = dict(IFM_C=c, IFM_H=ih, IFM_W=iw, OFM_H=oh, OFM_W=ow, KERNEL=pair(*k), STRIDE=pair(*stride),
                PAD=pair(*pad), DILATION=pair(*dil))
    flags = (DType.F32 if dtype == "f32" else DType.I8) | (F_AVG if average else 0)
    blob = compute_only(regs, Op.POOL, flags, 0, 0, 8192)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((0, x)))
    assert rc == 0
    want = pool_reference(x, k, stride, pad, dil, oh, ow, average)
    for got in (c_spm, m_spm):
        y = spm_get(got, 8192, x.dtype, (c, oh, ow))
        if dtype == "f32":
            np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
        else:  # int8 average rounds half away from zero
            assert np.array_equal(y, (np.sign(want) * np.floor(np.abs(want) + 0.5)).astype(np.int8))


# --- vector unit ------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [Op.VADD, Op.VMUL, Op.VMAX])
@pytest.mark.parametrize("dtype", [DType.F32, DType.I8, DType.I32, DType.U8])
@pytest.mark.parametrize("broadcast", ["same", "scalar", "per_row", "per_column", "in_place"])
@pytest.mark.parametrize("clip", [False, True])
def test_vector_binary(rt, op, dtype, broadcast, clip):
    outer, inner = 5, 13
    so, si = {"same": (inner, 1), "scalar": (0, 0), "per_row": (1, 0), "per_column": (0, 1),
              "in_place": (inner, 1)}[broadcast]
    npdt = NPDT[dtype]
    rng = np.random.default_rng(int(op) + 10 * int(dtype))
    if dtype == DType.F32:
        a, bvec = (rng.standard_normal(n).astype(np.float32) for n in (outer * inner, outer * inner))
        lo, hi = f32_bits(-0.5), f32_bits(0.75)
    else:
        small, big = {DType.I8: (-100, 100), DType.U8: (0, 256), DType.I32: (-(2**31) + 1, 2**31 - 1)}[dtype]
        a, bvec = (rng.integers(small, big, n).astype(npdt) for n in (outer * inner, outer * inner))
        lo, hi = (i32_bits(30), i32_bits(200)) if dtype == DType.U8 else (i32_bits(-50), i32_bits(60))
    A, B = 0, 4096
    Y = A if broadcast == "in_place" else 8192
    regs = dict(V_OUTER=outer, V_INNER=inner, VB_SO=so, VB_SI=si, ACT_MIN=lo, ACT_MAX=hi)
    blob = compute_only(regs, op, dtype | (F_CLIP if clip else 0), A, B, Y)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((A, a), (B, bvec)))
    assert rc == 0
    bb = bvec[np.arange(outer)[:, None] * so + np.arange(inner)[None, :] * si].reshape(-1)
    if dtype == DType.F32:
        want = {Op.VADD: a + bb, Op.VMUL: a * bb, Op.VMAX: np.maximum(a, bb)}[op]
        want = np.clip(want, -0.5, 0.75) if clip else want
    else:
        a64, b64 = a.astype(np.int64), bb.astype(np.int64)
        want = {Op.VADD: a64 + b64, Op.VMUL: a64 * b64, Op.VMAX: np.maximum(a64, b64)}[op]
        if clip:
            want = np.clip(want, 30, 200) if dtype == DType.U8 else np.clip(want, -50, 60)
        info = np.iinfo(npdt)
        want = np.clip(want, info.min, info.max).astype(npdt)
    for got in (c_spm, m_spm):  # float32 adds, multiplies and clamps are exact: bit-equal
        assert np.array_equal(spm_get(got, Y, npdt, (outer * inner,)), want)


@pytest.mark.parametrize("dtype", [DType.F32, DType.I8, DType.I32, DType.U8])
def test_vclip(rt, dtype):
    npdt = NPDT[dtype]
    x = (np.linspace(-3, 3, 40).astype(np.float32) if dtype == DType.F32
         else np.arange(0, 240, 6).astype(npdt) if dtype == DType.U8 else np.arange(-60, 60, 3).astype(npdt))
    lo, hi = (f32_bits(0.0), f32_bits(np.inf)) if dtype == DType.F32 else (i32_bits(-10), i32_bits(20))
    blob = compute_only(dict(V_OUTER=4, V_INNER=10, ACT_MIN=lo, ACT_MAX=hi), Op.VCLIP, dtype, 0, 0, 0)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((0, x)))
    want = np.maximum(x, 0) if dtype == DType.F32 else np.clip(x, -10, 20)
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, 0, npdt, (40,)), want)


@pytest.mark.parametrize("clip", [False, True])
def test_vreq(rt, clip):
    rng = np.random.default_rng(3)
    outer, inner = 6, 11
    x = np.concatenate([rng.integers(-(2**31), 2**31 - 1, outer * inner - 6),
                        [-(2**31), 2**31 - 1, 0, -1, 1, 12345]]).astype(np.int32)
    mult, shift = quant_params(rng, outer)
    mult[0], shift[0], shift[1], shift[2] = -(2**31), 0, 30, -31  # the extremes
    regs = dict(V_OUTER=outer, V_INNER=inner, QUANT_ADDR=4096, OFM_ZP=i32_bits(3), ACT_MIN=i32_bits(-20),
                ACT_MAX=i32_bits(100))
    blob = compute_only(regs, Op.VREQ, F_CLIP if clip else 0, 0, 0, 8192)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((0, x), (4096, mult), (4096 + 4 * outer, shift)))
    want = np.array([3 + requantize_scalar(int(x[o * inner + i]), int(mult[o]), int(shift[o]))
                     for o in range(outer) for i in range(inner)])
    if clip:
        want = np.clip(want, -20, 100)
    want = np.clip(want, -128, 127).astype(np.int8)
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, 8192, np.int8, (outer * inner,)), want)


# --- 8-bit requantisation with float scales (onnxruntime's arithmetic) --------------------------

def mlas_requant(acc: int, scale: np.float32, lo: int, hi: int, zp: int) -> int:
    """aotc_requant (runtime_c/kernels/quant/aotc_quant.h), one value at a time: float32 product,
    clamp to the output range less the zero point, round half to even, add the zero point."""
    f = np.float32(np.float32(acc) * np.float32(scale))
    f = min(max(f, np.float32(lo - zp)), np.float32(hi - zp))
    return int(np.rint(f)) + zp


def exact_fma(a: float, b: float, c: float) -> np.float32:
    """fmaf with rational arithmetic: the exact a * b + c, rounded to the nearest float32 (ties even)."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    g = np.float32(float(exact))  # a double rounding at most: correct it against the neighbours
    for cand in (np.nextafter(g, np.float32(-np.inf)), np.nextafter(g, np.float32(np.inf))):
        d, dg = abs(Fraction(float(cand)) - exact), abs(Fraction(float(g)) - exact)
        if d < dg or (d == dg and int(np.array(g).view(np.int32)) & 1):
            g = cand
    return g


def scales(rng, n: int) -> np.ndarray:
    """Requantisation scales as quantized models have them: x_scale * w_scale / y_scale."""
    return (rng.random(n) * 0.02 + 1e-4).astype(np.float32)


@pytest.mark.parametrize("case", ["3x3_pad", "strided", "grouped", "depthwise", "1x1", "all_padding"])
@pytest.mark.parametrize("dtype", [DType.I8, DType.U8])
@pytest.mark.parametrize("clip", [False, True])
def test_conv_8bit_float_requant(rt, case, dtype, clip):
    """CONV with REQUANT | FSCALE: bit-exact with aotc's host requantisation, int8 and uint8
    activations (weights int8), the input zero point subtracted from every tap inside the tile."""
    c, ih, iw, oc, oh, ow, k, stride, pad, dil, groups = CONV_CASES[case]
    rng = np.random.default_rng(11 + len(case) + int(dtype) + clip)
    lo_t, hi_t = isa.INT_RANGE[dtype]
    x = rng.integers(lo_t, hi_t + 1, (c, ih, iw)).astype(NPDT[dtype])
    w = rng.integers(-128, 128, (oc, c // groups, *k)).astype(np.int8)
    bias = rng.integers(-5000, 5000, oc).astype(np.int32)
    sc = scales(rng, oc)
    zp_in, zp_out = (-3, 5) if dtype == DType.I8 else (130, 120)
    act = (zp_out, zp_out + 90) if clip else (lo_t, hi_t)  # a fused ReLU and a Clip's upper bound
    X, W, B, Q, Y = 0, 4096, 8192, 9216, 12288
    regs = conv_regs(c, ih, iw, oc, oh, ow, k, stride, pad, dil, groups)
    regs.update(BIAS_ADDR=B, QUANT_ADDR=Q, IFM_ZP=i32_bits(zp_in), OFM_ZP=i32_bits(zp_out), ACT_MIN=i32_bits(act[0]),
                ACT_MAX=i32_bits(act[1]))
    flags = dtype | F_BIAS | F_REQUANT | F_FSCALE | (F_CLIP if clip else 0)
    blob = compute_only(regs, Op.CONV, flags, X, W, Y)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((X, x), (W, w), (B, bias), (Q, sc)))
    assert rc == 0
    acc = conv_reference(x, w, bias, stride, pad, dil, groups, oh, ow, zp=zp_in)
    want = np.array([[[mlas_requant(int(v), sc[o], *act, zp_out) for v in row] for row in acc[o]] for o in range(oc)])
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, Y, NPDT[dtype], (oc, oh, ow)), want.astype(NPDT[dtype]))
    stats = refmodel.timing(blob)
    assert stats.int8_macs == stats.macs == oc * oh * ow * (c // groups) * k[0] * k[1]


@pytest.mark.parametrize("dtype", [DType.I8, DType.U8])
def test_matmul_8bit_float_requant(rt, dtype):
    m, n, k = 3, 17, 40
    rng = np.random.default_rng(int(dtype))
    lo_t, hi_t = isa.INT_RANGE[dtype]
    a = rng.integers(lo_t, hi_t + 1, (m, k)).astype(NPDT[dtype])
    w = rng.integers(-128, 128, (n, k)).astype(np.int8)
    bias = rng.integers(-3000, 3000, n).astype(np.int32)
    sc = scales(rng, n)
    zp_in, zp_out = (7, -9) if dtype == DType.I8 else (128, 100)
    A, W, B, Q, Y = 0, 4096, 8192, 9216, 12288
    regs = dict(MM_M=m, MM_N=n, MM_K=k, BIAS_ADDR=B, QUANT_ADDR=Q, IFM_ZP=i32_bits(zp_in), OFM_ZP=i32_bits(zp_out))
    blob = compute_only(regs, Op.MATMUL, dtype | F_BIAS | F_REQUANT | F_FSCALE, A, W, Y)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((A, a), (W, w), (B, bias), (Q, sc)))
    assert rc == 0
    acc = (a.astype(np.int64) - zp_in) @ w.T.astype(np.int64) + bias
    want = np.array([[mlas_requant(int(acc[i, j]), sc[j], lo_t, hi_t, zp_out) for j in range(n)] for i in range(m)])
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, Y, NPDT[dtype], (m, n)), want.astype(NPDT[dtype]))


@pytest.mark.parametrize("case", sorted(POOL_CASES))
@pytest.mark.parametrize("dtype", [DType.I8, DType.U8])
def test_pool_sum_requantised(rt, case, dtype):
    """POOL with REQUANT: each window's sum of (x - IFM_ZP) over the taps inside the tile,
    requantised per channel (QLinearGlobalAveragePool: scale x_scale / (y_scale * size))."""
    c, ih, iw, oh, ow, k, stride, pad, dil = POOL_CASES[case]
    rng = np.random.default_rng(len(case) + int(dtype))
    lo_t, hi_t = isa.INT_RANGE[dtype]
    x = rng.integers(lo_t, hi_t + 1, (c, ih, iw)).astype(NPDT[dtype])
    sc = (np.float32(0.05) / (np.float32(0.04) * np.float32(k[0] * k[1])) * np.ones(c)).astype(np.float32)
    zp_in, zp_out = (-4, 3) if dtype == DType.I8 else (128, 131)
    regs = dict(IFM_C=c, IFM_H=ih, IFM_W=iw, OFM_H=oh, OFM_W=ow, KERNEL=pair(*k), STRIDE=pair(*stride),
                PAD=pair(*pad), DILATION=pair(*dil), QUANT_ADDR=4096, IFM_ZP=i32_bits(zp_in),
                OFM_ZP=i32_bits(zp_out))
    blob = compute_only(regs, Op.POOL, dtype | F_REQUANT | F_FSCALE, 0, 0, 8192)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((0, x), (4096, sc)))
    assert rc == 0
    sums = np.zeros((c, oh, ow), np.int64)
    for ch in range(c):
        for y in range(oh):
            for xx in range(ow):
                taps = [int(x[ch, iy, ix]) - zp_in for ky in range(k[0]) for kx in range(k[1])
                        for iy, ix in [(y * stride[0] + ky * dil[0] - pad[0], xx * stride[1] + kx * dil[1] - pad[1])]
                        if 0 <= iy < ih and 0 <= ix < iw]
                sums[ch, y, xx] = mlas_requant(sum(taps), sc[ch], lo_t, hi_t, zp_out)
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, 8192, NPDT[dtype], (c, oh, ow)), sums.astype(NPDT[dtype]))


@pytest.mark.parametrize("average", [False, True])
def test_pool_uint8(rt, average):
    c, ih, iw, oh, ow, k, stride, pad, dil = POOL_CASES["3x3_pad"]
    x = np.random.default_rng(5).integers(0, 256, (c, ih, iw)).astype(np.uint8)
    regs = dict(IFM_C=c, IFM_H=ih, IFM_W=iw, OFM_H=oh, OFM_W=ow, KERNEL=pair(*k), STRIDE=pair(*stride),
                PAD=pair(*pad), DILATION=pair(*dil))
    blob = compute_only(regs, Op.POOL, DType.U8 | (F_AVG if average else 0), 0, 0, 8192)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((0, x)))
    want = pool_reference(x, k, stride, pad, dil, oh, ow, average)
    want = np.floor(want + 0.5) if average else want
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, 8192, np.uint8, (c, oh, ow)), want.astype(np.uint8))


@pytest.mark.parametrize("dtype", [DType.I8, DType.U8])
@pytest.mark.parametrize("clip", [False, True])
def test_vadd_quantized(rt, dtype, clip):
    """VADD with REQUANT | FSCALE: onnxruntime's QLinearAdd, y = round(fma(a, a_mult, fma(b, b_mult,
    bias))) with the zero points in the bias, checked against exact rational arithmetic."""
    rng = np.random.default_rng(int(dtype) + 2 * clip)
    outer, inner = 4, 50
    lo_t, hi_t = isa.INT_RANGE[dtype]
    a = rng.integers(lo_t, hi_t + 1, outer * inner).astype(NPDT[dtype])
    b = rng.integers(lo_t, hi_t + 1, outer * inner).astype(NPDT[dtype])
    a_scale, b_scale, y_scale = np.float32(0.031), np.float32(0.027), np.float32(0.043)
    a_zero, b_zero, y_zero = (3, -7, 2) if dtype == DType.I8 else (128, 120, 125)
    am, bm = a_scale / y_scale, b_scale / y_scale
    bias = np.float32(y_zero) - (am * np.float32(a_zero) + bm * np.float32(b_zero))
    params = np.array([am, bm, bias], np.float32)
    act = (y_zero, hi_t - 10) if clip else (lo_t, hi_t)
    regs = dict(V_OUTER=outer, V_INNER=inner, VB_SO=inner, VB_SI=1, QUANT_ADDR=8192, ACT_MIN=i32_bits(act[0]),
                ACT_MAX=i32_bits(act[1]))
    blob = compute_only(regs, Op.VADD, dtype | F_REQUANT | F_FSCALE | (F_CLIP if clip else 0), 0, 4096, 0)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((0, a), (4096, b), (8192, params)))
    assert rc == 0
    want = [int(np.rint(min(max(exact_fma(float(x), am, exact_fma(float(y), bm, bias)), np.float32(act[0])),
                            np.float32(act[1])))) for x, y in zip(a, b, strict=True)]
    for got in (c_spm, m_spm):  # in place on a
        assert np.array_equal(spm_get(got, 0, NPDT[dtype], (outer * inner,)), np.array(want).astype(NPDT[dtype]))
    assert refmodel.timing(blob).vec_busy_cycles == CFG.op_setup_cycles + -(-outer * inner // CFG.vec_lanes)


def test_fma_is_exact_on_hard_cases(rt):
    """The simulator's fmaf (no libm) and the model's agree with exact arithmetic where a plain float
    or double computation would not: a * a_mult + bias within a rounding error of a tie k + 1/2, so
    the output integer depends on the one rounding. One quantized add per element, b_mult = 0."""
    rng = np.random.default_rng(9)
    n = 96
    a = rng.integers(-128, 128, n).astype(np.int8)
    am = (rng.random(n) * 2 + 0.01).astype(np.float32)
    k = rng.integers(-100, 100, n)
    bias = (k + 0.5 - a.astype(np.float64) * am.astype(np.float64)).astype(np.float32)
    bias[1::3] = np.nextafter(bias[1::3], np.float32(np.inf))
    bias[2::3] = np.nextafter(bias[2::3], np.float32(-np.inf))
    want = np.array([exact_fma(float(x), float(y), float(z)) for x, y, z in zip(a, am, bias, strict=True)])
    assert np.array_equal(refmodel.fma32(a.astype(np.float32), am, bias).view(np.int32), want.view(np.int32))
    naive = (a.astype(np.float32) * am + bias).astype(np.float32)
    assert not np.array_equal(np.rint(naive), np.rint(want))  # the cases do tell the two apart
    pb = ProgramBuilder(CFG)
    pb.set(V_OUTER=1, V_INNER=1, VB_SO=1, VB_SI=1)
    for j in range(n):
        pb.set(QUANT_ADDR=8192 + 16 * j)
        pb.emit(Op.VADD, DType.I8 | F_REQUANT | F_FSCALE, 0, j, 2048, 4096 + j)
    params = np.zeros((n, 4), np.float32)
    params[:, 0], params[:, 2] = am, bias
    _, c_spm, _, m_spm, rc = run_both(rt, program(pb, []), [], spm_with((0, a), (8192, params)))
    assert rc == 0
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, 4096, np.int8, (n,)), np.clip(np.rint(want), -128, 127).astype(np.int8))


@pytest.mark.parametrize("dtype", [DType.I8, DType.U8])
@pytest.mark.parametrize("clip", [False, True])
def test_vreq_float(rt, dtype, clip):
    """VREQ with FSCALE: int32 rows requantised with one float scale per row (what follows a
    CONV accumulated over several input-channel tiles)."""
    rng = np.random.default_rng(4 + int(dtype))
    outer, inner = 6, 11
    x = np.concatenate([rng.integers(-200000, 200000, outer * inner - 4), [-(2**31), 2**31 - 1, 0, -1]])
    x = x.astype(np.int32)
    sc = scales(rng, outer)
    sc[0] = np.float32(1e30)  # saturates both ways
    lo_t, hi_t = isa.INT_RANGE[dtype]
    zp = 3 if dtype == DType.I8 else 128
    act = (zp, hi_t - 5) if clip else (lo_t, hi_t)
    regs = dict(V_OUTER=outer, V_INNER=inner, QUANT_ADDR=4096, OFM_ZP=i32_bits(zp), ACT_MIN=i32_bits(act[0]),
                ACT_MAX=i32_bits(act[1]))
    blob = compute_only(regs, Op.VREQ, dtype | F_FSCALE | (F_CLIP if clip else 0), 0, 0, 8192)
    _, c_spm, _, m_spm, rc = run_both(rt, blob, [], spm_with((0, x), (4096, sc)))
    assert rc == 0
    want = np.array([mlas_requant(int(x[o * inner + i]), sc[o], *act, zp) for o in range(outer) for i in range(inner)])
    for got in (c_spm, m_spm):
        assert np.array_equal(spm_get(got, 8192, NPDT[dtype], (outer * inner,)), want.astype(NPDT[dtype]))


def test_int8_mac_array_is_four_times_as_wide():
    """The same 16-channel 1x1 convolution: an 8-bit CONV takes a quarter of float32's array cycles."""
    regs = conv_regs(16, 8, 8, 16, 8, 8, (1, 1), (1, 1), (0, 0), (1, 1), 1)
    f32 = refmodel.timing(compute_only(regs, Op.CONV, DType.F32, 0, 8192, 12288))
    i8 = refmodel.timing(compute_only(regs, Op.CONV, DType.I8, 0, 8192, 12288))
    u8 = refmodel.timing(compute_only(regs, Op.CONV, DType.U8, 0, 8192, 12288))
    taps = 8 * 8
    assert f32.mac_busy_cycles - CFG.op_setup_cycles == taps * 2 * 2
    assert i8.mac_busy_cycles - CFG.op_setup_cycles == u8.mac_busy_cycles - CFG.op_setup_cycles == taps
    assert (f32.int8_macs, i8.int8_macs) == (0, i8.macs) and f32.macs == i8.macs == 16 * 16 * taps


# --- the cost model -----------------------------------------------------------------------------

def streamed_program(double: bool, tiles: int = 6) -> bytes:
    """LOAD a tile, VADD a constant row to it, STORE it, for `tiles` tiles. With one buffer each
    load must wait for the previous store; with two, tile t+1 is loaded before tile t is
    computed (the DMA queue runs in order), so loads overlap compute."""
    b = ProgramBuilder(CFG)
    n = 1024
    b.dma(Op.LOAD, 0, 0, 3 * 4 * n, 4 * n)
    b.set(V_OUTER=1, V_INNER=n, VB_SO=0, VB_SI=1)

    def buf(t: int) -> int:
        return (t % 2) * 4 * n if double else 0

    if double:
        b.dma(Op.LOAD, 1, 0, buf(0), 4 * n)
    for t in range(tiles):
        if not double:
            b.dma(Op.LOAD, 1, t * 4 * n, buf(t), 4 * n)
        elif t + 1 < tiles:
            b.dma(Op.LOAD, 1, (t + 1) * 4 * n, buf(t + 1), 4 * n)
        b.emit(Op.VADD, DType.F32, 0, buf(t), 3 * 4 * n, buf(t))
        b.dma(Op.STORE, 2, t * 4 * n, buf(t), 4 * n)
    return program(b, [Region(Kind.INPUT, "float32", (tiles * n,)), Region(Kind.OUTPUT, "float32", (tiles * n,))],
                   np.ones(n, np.float32).tobytes())


def test_double_buffering_overlaps_loads_with_compute(rt):
    single, double = refmodel.timing(streamed_program(False)), refmodel.timing(streamed_program(True))
    assert double.cycles < single.cycles
    assert double.dma_busy_cycles == single.dma_busy_cycles and double.vec_busy_cycles == single.vec_busy_cycles
    # one set of buffers serialises everything; two hide the vector unit behind the DMA
    assert single.cycles >= single.dma_busy_cycles + single.vec_busy_cycles
    assert double.cycles < double.dma_busy_cycles + double.vec_busy_cycles
    for blob in (streamed_program(False), streamed_program(True)):
        x = np.arange(6 * 1024, dtype=np.float32)
        (_, y), *_ = run_both(rt, blob, [x, np.zeros_like(x)])
        assert np.array_equal(y, x + 1)


def test_dependent_instruction_waits_for_its_data(rt):
    """A compute instruction starts only when the LOAD of its operand has finished."""
    b = ProgramBuilder(CFG)
    b.dma(Op.LOAD, 1, 0, 0, 4096)
    b.set(V_OUTER=1, V_INNER=1024, ACT_MIN=f32_bits(0), ACT_MAX=f32_bits(1))
    b.emit(Op.VCLIP, DType.F32, 0, 0, 0, 0)
    blob = program(b, [Region(Kind.INPUT, "float32", (1024,))])
    st = refmodel.timing(blob)
    dma = CFG.dma_setup_cycles + 4096 // CFG.dma_bytes_per_cycle
    vec = CFG.op_setup_cycles + 1024 // CFG.vec_lanes
    # the LOAD issues at cycle 1 (after the SET of its geometry); the clip reads what it writes
    assert st.cycles == 1 + dma + vec
    assert st.dma_bytes == 4096 and st.spm_peak_bytes == 4096
    run_both(rt, blob, [np.zeros(1024, np.float32)])


# --- errors: the same code from C and from the model ------------------------------------------------

def _valid() -> tuple[ProgramBuilder, list[Region]]:
    b = ProgramBuilder(CFG)
    b.dma(Op.LOAD, 1, 0, 0, 64)
    return b, [Region(Kind.INPUT, "float32", (16,)), Region(Kind.OUTPUT, "float32", (16,))]


def _corrupt(blob: bytes, offset: int, data: bytes, fix_crc: bool = True) -> bytes:
    out = blob[:offset] + data + blob[offset + len(data):]
    return isa.with_checksum(out) if fix_crc else out


def _insn_offset(blob: bytes, k: int) -> int:
    h = isa.Header.parse(blob)
    return isa.HEADER_BYTES + isa.REGION_BYTES * h.n_regions + isa.INSN_BYTES * k


def _err_programs() -> dict[str, tuple[bytes, Err]]:
    b, regions = _valid()
    ok = program(b, regions)
    cases: dict[str, tuple[bytes, Err]] = {
        "truncated_header": (ok[:40], Err.TRUNCATED),
        "truncated_body": (ok[:-16], Err.TRUNCATED),
        "bad_magic": (_corrupt(ok, 0, b"XSIM"), Err.MAGIC),
        "bad_version": (_corrupt(ok, 4, b"\x09\x00"), Err.VERSION),
        "bad_checksum": (_corrupt(ok, 100, b"\xff", fix_crc=False), Err.CHECKSUM),
        "trailing_bytes": (ok + b"\0" * 4, Err.HEADER),
        "reserved_field": (_corrupt(ok, 52, b"\x01"), Err.HEADER),
        "spm_over_capacity": (_corrupt(ok, 24, (1 << 20).to_bytes(4, "little")), Err.HEADER),
        "zero_bandwidth": (_corrupt(ok, 36, b"\0\0"), Err.HEADER),
        "region_kind": (_corrupt(ok, isa.HEADER_BYTES + isa.REGION_BYTES, b"\x07"), Err.REGIONS),
        "unknown_opcode": (_corrupt(ok, _insn_offset(ok, 1), b"\x77"), Err.OPCODE),
        "no_end": (_corrupt(ok, _insn_offset(ok, isa.Header.parse(ok).n_insns - 1), Insn(Op.SET, 1, 0, 1).encode()),
                   Err.NO_END),
        "bad_register": (_corrupt(ok, _insn_offset(ok, 0), Insn(Op.SET, 3, 30, 1, 1, 1).encode()), Err.OPERAND),
        "no_such_region": (_corrupt(ok, _insn_offset(ok, 0), Insn(Op.LOAD, 0, 9, 0, 0, 64).encode()), Err.DMA_BOUNDS),
        "store_to_input": (_corrupt(ok, _insn_offset(ok, 0), Insn(Op.STORE, 0, 1, 0, 0, 64).encode()), Err.READONLY),
    }
    for name, insns, err in [
        ("dma_past_region", [Insn(Op.SET, 2, isa.Reg.DMA_N1, 1, 1), Insn(Op.LOAD, 0, 1, 8, 0, 64)], Err.DMA_BOUNDS),
        ("dma_past_spm", [Insn(Op.SET, 2, isa.Reg.DMA_N1, 1, 1), Insn(Op.LOAD, 0, 1, 0, SPM - 32, 64)],
         Err.SPM_BOUNDS),
        ("dma_zero_rows", [Insn(Op.SET, 1, isa.Reg.DMA_N1, 0), Insn(Op.LOAD, 0, 1, 0, 0, 64)], Err.OPERAND),
        ("dma_rows_overlap", [Insn(Op.SET, 3, isa.Reg.DMA_N1, 2, 1, 0), Insn(Op.SET, 1, isa.Reg.DMA_SPM_S1, 8),
                              Insn(Op.LOAD, 0, 1, 0, 0, 16)], Err.OVERLAP),
        ("conv_spm_overflow", [Insn(Op.SET, 3, isa.Reg.IFM_C, 64, 64, 64), Insn(Op.SET, 3, isa.Reg.OFM_C, 1, 1, 1),
                               Insn(Op.SET, 3, isa.Reg.KERNEL, pair(1, 1), pair(1, 1), 0),
                               Insn(Op.SET, 2, isa.Reg.DILATION, pair(1, 1), 1), Insn(Op.CONV, 0, 0, 0, 0, 0)],
         Err.SPM_BOUNDS),
        ("conv_zero_stride", [Insn(Op.SET, 3, isa.Reg.IFM_C, 1, 1, 1), Insn(Op.SET, 3, isa.Reg.OFM_C, 1, 1, 1),
                              Insn(Op.SET, 1, isa.Reg.KERNEL, pair(1, 1)), Insn(Op.CONV, 0, 0, 0, 64, 128)],
         Err.OPERAND),
        ("misaligned", [Insn(Op.SET, 2, isa.Reg.MM_M, 1, 1), Insn(Op.SET, 1, isa.Reg.MM_K, 1),
                        Insn(Op.MATMUL, 0, 0, 2, 64, 128)], Err.ALIGN),
        ("output_overlaps_input", [Insn(Op.SET, 2, isa.Reg.MM_M, 2, 2), Insn(Op.SET, 1, isa.Reg.MM_K, 2),
                                   Insn(Op.MATMUL, 0, 0, 0, 64, 8)], Err.OVERLAP),
        ("requant_with_f32", [Insn(Op.CONV, F_REQUANT, 0, 0, 0, 0)], Err.OPERAND),
        ("conv_int32_operands", [Insn(Op.CONV, DType.I32, 0, 0, 0, 0)], Err.OPERAND),
        ("fscale_without_requant", [Insn(Op.MATMUL, DType.U8 | F_FSCALE, 0, 0, 0, 0)], Err.OPERAND),
        ("pool_average_requantised", [Insn(Op.POOL, DType.I8 | F_AVG | F_REQUANT, 0, 0, 0, 0)], Err.OPERAND),
        ("pool_clip_without_requant", [Insn(Op.POOL, DType.U8 | F_CLIP, 0, 0, 0, 0)], Err.OPERAND),
        ("quantized_vmul", [Insn(Op.VMUL, DType.I8 | F_REQUANT | F_FSCALE, 0, 0, 64, 128)], Err.OPERAND),
        ("quantized_vadd_fixed_point", [Insn(Op.VADD, DType.I8 | F_REQUANT, 0, 0, 64, 128)], Err.OPERAND),
        ("quantized_vadd_float32", [Insn(Op.VADD, DType.F32 | F_REQUANT | F_FSCALE, 0, 0, 64, 128)], Err.OPERAND),
        ("vreq_to_int32", [Insn(Op.VREQ, DType.I32, 0, 0, 0, 64)], Err.OPERAND),
        ("output_zero_point_out_of_range", [Insn(Op.SET, 2, isa.Reg.MM_M, 1, 1), Insn(Op.SET, 1, isa.Reg.MM_K, 1),
                                            Insn(Op.SET, 2, isa.Reg.QUANT_ADDR, 256, 0),
                                            Insn(Op.SET, 1, isa.Reg.OFM_ZP, 256),
                                            Insn(Op.MATMUL, DType.U8 | F_REQUANT | F_FSCALE, 0, 0, 64, 128)],
         Err.OPERAND),
        ("vector_partial_alias", [Insn(Op.SET, 2, isa.Reg.V_OUTER, 1, 8), Insn(Op.VADD, 0, 0, 0, 64, 4)],
         Err.OVERLAP),
    ]:
        pb = ProgramBuilder(CFG)
        pb.insns.extend(insns)
        cases[name] = (program(pb, regions), err)
    pb = ProgramBuilder(CFG)
    pb.dma(Op.LOAD, 1, 0, 0, 64)
    pb.end()
    slow = Program(CFG, [Region(Kind.CONST, "uint8", (0,)), *regions], pb.insns, b"", SPM, cycle_limit=10).to_bytes()
    cases["watchdog"] = (slow, Err.WATCHDOG)
    return cases


ERR_PROGRAMS = _err_programs()


@pytest.mark.parametrize("case", sorted(ERR_PROGRAMS))
def test_bad_programs_give_their_error_code(rt, case):
    blob, err = ERR_PROGRAMS[case]
    bound = [np.zeros(16, np.float32), np.zeros(16, np.float32)]
    _, _, _, _, rc = run_both(rt, blob, bound)
    assert rc == err, f"{case}: {rc:#x} != {err.name}"


def test_binding_errors(rt):
    b, regions = _valid()
    blob = program(b, regions)
    rc, _ = rt.execute(blob, [np.zeros(15, np.float32), np.zeros(16, np.float32)], np.zeros(SPM, np.uint8))
    assert rc == Err.BINDING  # an input smaller than its region
    rc, _ = rt.execute(blob, [np.zeros(16, np.float32)], np.zeros(SPM, np.uint8))
    assert rc == Err.BINDING  # a region left unbound
    rc, _ = rt.execute(blob, [np.zeros(16, np.float32)] * 2, np.zeros(SPM // 2, np.uint8))
    assert rc == Err.BINDING  # a scratchpad smaller than the program needs
