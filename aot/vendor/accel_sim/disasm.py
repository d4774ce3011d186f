"""Print an accel_sim program as text: header, regions, one line per instruction.

    python -m aot.vendor.accel_sim.disasm out/bundle/vendor/accel_sim/lenet_accel_sim_0.asim
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aot.vendor.accel_sim import refmodel
from aot.vendor.accel_sim.isa import (
    DTYPE_MASK,
    F_ACC,
    F_BIAS,
    F_CLIP,
    F_FSCALE,
    F_REQUANT,
    HEADER_BYTES,
    INSN_BYTES,
    REGION_BYTES,
    DType,
    Header,
    Insn,
    Kind,
    Op,
    Reg,
    parse_regions,
)

_CODES = {0: "int", 1: "uint", 2: "float"}


def _flags(i: Insn) -> str:
    """e.g. i8.bias.requant.fscale: the data type (VREQ: the 8-bit type it writes), then the flags."""
    dt = DType(i.flags & DTYPE_MASK)
    names = [("u8" if dt == DType.U8 else "i8") if i.op == Op.VREQ else dt.name.lower()]
    acc_or_avg = "avg" if i.op == Op.POOL else "acc"
    for bit, name in ((F_ACC, acc_or_avg), (F_BIAS, "bias"), (F_CLIP, "clip"), (F_REQUANT, "requant"),
                      (F_FSCALE, "fscale")):
        if i.flags & bit:
            names.append(name)
    return ".".join(names)


def line(i: Insn) -> str:
    op = Op(i.op).name if i.op in Op._value2member_map_ else f"?{i.op:#04x}"
    if i.op == Op.SET:
        regs = [Reg(i.a + k).name if i.a + k < len(Reg) else f"r{i.a + k}" for k in range(min(i.flags, 3))]
        return f"SET    {' '.join(f'{r}={v}' for r, v in zip(regs, (i.b, i.c, i.d), strict=False))}"
    if i.op == Op.LOAD:
        return f"LOAD   region {i.a} @ {i.b} -> spm {i.c}, rows of {i.d} B"
    if i.op == Op.STORE:
        return f"STORE  spm {i.c} -> region {i.a} @ {i.b}, rows of {i.d} B"
    if i.op == Op.END:
        return "END"
    return f"{op + '.' + _flags(i):<22} b={i.b} c={i.c} d={i.d}"


def disassemble(blob: bytes) -> str:
    h = Header.parse(blob)
    out = [f"accel_sim program v{h.version}: {h.n_insns} instructions, {h.const_bytes} bytes of constants, "
           f"scratchpad {h.spm_bytes} of {h.spm_capacity} bytes",
           f"device: DMA {h.dma_bytes_per_cycle} B/cycle (+{h.dma_setup_cycles} per transfer), MAC array "
           f"{h.mac_rows}x{h.mac_cols} ({2 * h.mac_rows}x{2 * h.mac_cols} 8-bit), vector {h.vec_lanes} lanes, "
           f"{h.op_setup_cycles} cycles per operation, queues of {h.queue_depth}; watchdog at {h.cycle_limit} cycles"]
    for k, (kind, code, bits, ndim, nbytes, shape) in enumerate(parse_regions(blob, h.n_regions)):
        name = Kind(kind).name.lower() if kind in Kind._value2member_map_ else f"kind {kind}"
        out.append(f"region {k}: {name} {_CODES.get(code, '?')}{bits}{list(shape[:ndim])} ({nbytes} B)")
    start = HEADER_BYTES + REGION_BYTES * h.n_regions
    for k in range(h.n_insns):
        raw = blob[start + INSN_BYTES * k: start + INSN_BYTES * (k + 1)]
        out.append(f"{k:6d}  {line(Insn.decode(raw))}")
    try:
        st = refmodel.timing(blob)
        out.append(f"cost model: {st.cycles} cycles, {st.dma_bytes} DMA bytes, {st.macs} MACs "
                   f"({st.int8_macs} of them 8-bit), scratchpad peak {st.spm_peak_bytes} B")
    except refmodel.SimError as e:
        out.append(f"the device refuses this program: {e}")
    return "\n".join(out) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("program", type=Path)
    print(disassemble(p.parse_args().program.read_bytes()), end="")


if __name__ == "__main__":
    main()
