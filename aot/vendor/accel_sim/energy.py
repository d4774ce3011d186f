"""The cost model's energy estimate: per-event constants (docs/accel_sim-isa.md, section 6.1).

Like the cycles, energy is data-independent, so the compiler computes a program's energy
without running it. Four kinds of event, each with a constant a goal trades against the others:

    useful MACs        E_MAC_F32 / E_MAC_8BIT per multiply-accumulate
    scratchpad bytes   E_SPM per byte a unit (DMA, MAC array, vector unit) reads or writes there
    DMA bytes          E_DMA per byte moved to or from main memory (the bus and the memory's side)
    static             E_STATIC per cycle the device is on (clock tree and leakage)

The figures are of the order published for a 45 nm process (Horowitz, ISSCC 2014: a 32-bit float
multiply-add about 4.6 pJ, an 8-bit one about 0.25 pJ, a 64 KiB SRAM read about 1 pJ per byte, off-
scratchpad memory one to two orders more); what matters for the goals is their ratio: a byte moved
by DMA costs about 20 scratchpad bytes, and one cycle of the whole device about 2 DMA bytes.
"""

from __future__ import annotations

from aot.vendor.accel_sim import refmodel

E_MAC_F32 = 4.6  # pJ per float32 MAC
E_MAC_8BIT = 0.25  # pJ per 8-bit MAC (int32 accumulation)
E_SPM = 0.5  # pJ per scratchpad byte read or written by a unit
E_DMA = 10.0  # pJ per byte moved between main memory and the scratchpad
E_STATIC = 20.0  # pJ per device cycle


def energy_pj(stats: refmodel.Stats, spm_access_bytes: int) -> float:
    """A program's energy in picojoules, from its statistics and its scratchpad traffic."""
    return ((stats.macs - stats.int8_macs) * E_MAC_F32 + stats.int8_macs * E_MAC_8BIT + spm_access_bytes * E_SPM
            + stats.dma_bytes * E_DMA + stats.cycles * E_STATIC)


def estimate_pj(cycles: int, dma_bytes: int, spm_bytes: int) -> float:
    """The part of the energy a tiling changes (the useful MACs do not depend on it)."""
    return dma_bytes * E_DMA + spm_bytes * E_SPM + cycles * E_STATIC


__all__ = ["E_DMA", "E_MAC_8BIT", "E_MAC_F32", "E_SPM", "E_STATIC", "energy_pj", "estimate_pj"]
