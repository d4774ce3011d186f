"""mynpu's development board, registered with aotc as a target of its own (entry-point group aotc.targets, in
pyproject.toml): `aotc MODEL --vendor mynpu --target mynpu-devkit`. A Cortex-M4F with mynpu beside it, 1 MiB
of flash and 512 KiB of SRAM at the addresses of qemu's mps2-an386 machine, so that its programs run there
(mynpu being imaginary, its device library runs on the M4). aotc writes the board's linker script and CMake
toolchain file from these facts and ships them in every bundle for it."""

from __future__ import annotations

from aot.targets import KIB, Region, cortex_m_board

DEVKIT = cortex_m_board(
    "mynpu-devkit",
    cpu="cortex-m4",
    regions=(Region("FLASH", 0x00000000, 1024 * KIB, "flash"),
             Region("RAM", 0x20000000, 512 * KIB, "SRAM")),
    qemu_machine="mps2-an386",
    description="mynpu devkit (Arm Cortex-M4F + mynpu), bare metal, qemu-system-arm -M mps2-an386 (semihosting)",
)
