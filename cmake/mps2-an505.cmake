# aotc toolchain file: qemu's mps2-an505 board, Arm Cortex-M33 with single-precision FPU and DSP.
#   cmake -S bundle -B build -DCMAKE_TOOLCHAIN_FILE=<this file>
set(AOTC_BOARD mps2-an505)
set(AOTC_CPU_FLAGS "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/arm-none-eabi.cmake)
