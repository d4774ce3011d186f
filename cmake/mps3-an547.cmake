# aotc toolchain file: qemu's mps3-an547 board, Arm Cortex-M55 with FPU and Helium (MVE).
#   cmake -S bundle -B build -DCMAKE_TOOLCHAIN_FILE=<this file>
set(AOTC_BOARD mps3-an547)
set(AOTC_CPU_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/arm-none-eabi.cmake)
