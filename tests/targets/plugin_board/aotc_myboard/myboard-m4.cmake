# myboard-m4's CMake toolchain file (shipped by the aotc-myboard package; aotc copies it into every
# bundle for the board as target/toolchain.cmake).
set(AOTC_BOARD myboard-m4)
set(AOTC_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m/arm-none-eabi.cmake)
# qemu has no machine of this name: its programs run on the mps2-an386 machine, whose memory holds the board's.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none
    -semihosting-config enable=on,target=native -kernel)
