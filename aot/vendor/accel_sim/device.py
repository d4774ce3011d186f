"""The device's configuration: scratchpad size and the cost model's parameters.

A program records the configuration it was compiled for in its header, and the simulator
times it with those numbers, so one runtime simulates any configuration. The defaults
describe a small microcontroller-class NPU: 64 KiB of scratchpad, a 128-bit DMA port, an
8x8 fp32 MAC array (16x16 for int8) and a 16-lane vector unit.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceConfig:
    spm_bytes: int = 64 * 1024  # scratchpad SRAM capacity
    dma_bytes_per_cycle: int = 16  # DMA bandwidth: a row of n bytes takes ceil(n / this) cycles
    dma_setup_cycles: int = 32  # fixed cost of each LOAD/STORE (descriptor fetch, bus latency)
    mac_rows: int = 8  # fp32 MAC array: output channels per cycle (int8: twice as many)
    mac_cols: int = 8  # fp32 MAC array: input channels per cycle (int8: twice as many)
    vec_lanes: int = 16  # vector unit: fp32/int32 elements per cycle (int8: four times as many)
    op_setup_cycles: int = 16  # fixed cost of each MAC-array or vector-unit instruction
    queue_depth: int = 8  # instructions each unit can hold before the front end stalls

    @property
    def macs_per_cycle(self) -> int:
        """Peak fp32 MACs per cycle."""
        return self.mac_rows * self.mac_cols

    def __post_init__(self) -> None:
        if not 256 <= self.spm_bytes <= 16 * 1024 * 1024:
            raise ValueError(f"scratchpad of {self.spm_bytes} bytes: choose 256 B .. 16 MiB")
        for name in ("dma_bytes_per_cycle", "mac_rows", "mac_cols", "vec_lanes"):
            if not 1 <= getattr(self, name) <= 0xFFFF:
                raise ValueError(f"{name} must be in 1..65535")
        if not 1 <= self.queue_depth <= 16:
            raise ValueError("queue_depth must be in 1..16")
