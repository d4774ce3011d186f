# aotc toolchain file: qemu's mps2-an386 board, Arm Cortex-M4 with single-precision FPU.
#   cmake -S bundle -B build -DCMAKE_TOOLCHAIN_FILE=<this file>
set(AOTC_BOARD mps2-an386)
set(AOTC_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/arm-none-eabi.cmake)
