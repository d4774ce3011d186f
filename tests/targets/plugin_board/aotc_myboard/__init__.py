"""myboard-m4: a Cortex-M4F board with less memory than qemu's mps2-an386 (512 KiB of flash, 128 KiB of
RAM, no PSRAM) at the same addresses, so that its programs run on that qemu machine. It ships its own
linker script and CMake toolchain file, which aotc copies into every bundle for the board."""

from importlib.resources import files

from aot.targets import KIB, Region, cortex_m_board

HERE = files(__name__)

BOARD = cortex_m_board(
    "myboard-m4",
    cpu="cortex-m4",
    regions=(Region("FLASH", 0x00000000, 512 * KIB, "flash"),
             Region("RAM", 0x20000000, 128 * KIB, "SRAM")),
    qemu_machine="mps2-an386",
    description="MyBoard (Arm Cortex-M4F), bare metal, qemu-system-arm -M mps2-an386 (semihosting)",
    linker_script=HERE / "myboard-m4.ld",
    toolchain=HERE / "myboard-m4.cmake",
)
