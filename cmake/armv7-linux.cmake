# aotc toolchain file: Linux on 32-bit Arm (ARMv7-A, hard float) (Debian's arm-linux-gnueabihf cross compiler), run under qemu-arm.
#   cmake -S bundle -B build -DCMAKE_TOOLCHAIN_FILE=<this file>
# Executables are linked statically so that qemu-user needs no target sysroot (-L).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(AOTC_CROSS_PREFIX "arm-linux-gnueabihf-" CACHE STRING "Prefix of the cross tools")
set(CMAKE_C_COMPILER ${AOTC_CROSS_PREFIX}gcc)
set(CMAKE_ASM_COMPILER ${AOTC_CROSS_PREFIX}gcc)
set(AOTC_SIZE ${AOTC_CROSS_PREFIX}size)
set(AOTC_TARGET_DIR ${CMAKE_CURRENT_LIST_DIR})
set(CMAKE_C_FLAGS_INIT "")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm)
