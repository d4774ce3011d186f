# aotc toolchain file: qemu's mps2-an385 board, Arm Cortex-M3, no FPU (soft float).
#   cmake -S bundle -B build -DCMAKE_TOOLCHAIN_FILE=<this file>
set(AOTC_BOARD mps2-an385)
set(AOTC_CPU_FLAGS "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/arm-none-eabi.cmake)
