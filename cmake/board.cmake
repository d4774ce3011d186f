# aotc target support, included by the bundle's CMakeLists.txt after project(). Defines
#
#   aotc_board_executable(<target> [LINKER_SCRIPT <file>])
#       Make <target> a program for the configured board: on bare metal, add aotc's startup
#       code (vector table, reset handler, semihosting argv and exit code) and link with the
#       board's linker script (or yours), writing <target>.map; elsewhere it does nothing.
#   aotc_board_add_test(<name> <target>)
#       add_test() that runs <target> with no arguments (under qemu when cross compiling:
#       CMAKE_CROSSCOMPILING_EMULATOR comes from the toolchain file), with a timeout.
#
# Functions are global in CMake, so a firmware project that add_subdirectory()s the bundle
# can call them for its own executables.
if(AOTC_BOARD_SUPPORT_INCLUDED)
  return()
endif()
set(AOTC_BOARD_SUPPORT_INCLUDED ON)
set(AOTC_BOARD_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE INTERNAL "aotc board support files")

function(aotc_board_executable tgt)
  cmake_parse_arguments(ARG "" "LINKER_SCRIPT" "" ${ARGN})
  if(NOT AOTC_BARE_METAL)
    return()
  endif()
  set(dir ${AOTC_BOARD_DIR}/cortex-m)
  if(NOT ARG_LINKER_SCRIPT)
    set(ARG_LINKER_SCRIPT ${dir}/${AOTC_BOARD}.ld)
  endif()
  target_sources(${tgt} PRIVATE ${dir}/startup.c)
  target_include_directories(${tgt} PRIVATE ${dir})
  target_compile_definitions(${tgt} PRIVATE AOTC_BARE_METAL=1)
  target_link_options(${tgt} PRIVATE -T${ARG_LINKER_SCRIPT} -L${dir} -Wl,-Map=$<TARGET_FILE:${tgt}>.map)
  set_property(TARGET ${tgt} APPEND PROPERTY LINK_DEPENDS ${ARG_LINKER_SCRIPT}
               ${dir}/sections.ld ${dir}/aotc_regions.ld)
  if(AOTC_SIZE)
    add_custom_command(TARGET ${tgt} POST_BUILD COMMAND ${AOTC_SIZE} $<TARGET_FILE:${tgt}> VERBATIM)
  endif()
endfunction()

function(aotc_board_add_test name tgt)
  add_test(NAME ${name} COMMAND ${tgt} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(${name} PROPERTIES TIMEOUT 600)
endfunction()
