# aotc toolchain file: qemu's mps2-an500 board, Arm Cortex-M7 with double-precision FPU and DSP.
#   cmake -S bundle -B build -DCMAKE_TOOLCHAIN_FILE=<this file>
set(AOTC_BOARD mps2-an500)
set(AOTC_CPU_FLAGS "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/arm-none-eabi.cmake)
