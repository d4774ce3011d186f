# aotc: common part of the Cortex-M toolchain files (GNU Arm Embedded gcc, newlib-nano with
# librdimon semihosting). The including file sets AOTC_BOARD (qemu -M name) and AOTC_CPU_FLAGS.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(AOTC_CROSS_PREFIX "arm-none-eabi-" CACHE STRING "Prefix of the cross tools (arm-none-eabi-gcc ...)")
set(CMAKE_C_COMPILER ${AOTC_CROSS_PREFIX}gcc)
set(CMAKE_ASM_COMPILER ${AOTC_CROSS_PREFIX}gcc)
set(AOTC_SIZE ${AOTC_CROSS_PREFIX}size)
# The compiler checks cannot link without a startup file and linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(AOTC_BARE_METAL ON)
set(AOTC_TARGET_DIR ${CMAKE_CURRENT_LIST_DIR})
set(CMAKE_C_FLAGS_INIT "${AOTC_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${AOTC_CPU_FLAGS}")
# The specs go in the link flags only (CMake passes compile flags to the link step too).
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs --specs=rdimon.specs -nostartfiles -Wl,--gc-sections")
set(CMAKE_EXECUTABLE_SUFFIX_C ".elf")
set(CMAKE_EXECUTABLE_SUFFIX_ASM ".elf")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest (and add_test) run executables on the board under qemu; the program's exit code
# comes back through semihosting. Executable arguments cannot follow -kernel: a test that
# needs them passes `-semihosting-config ...,arg=` itself (aotc run does).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-system-arm -M ${AOTC_BOARD} -nographic -monitor none -serial none
    -semihosting-config enable=on,target=native -kernel)
