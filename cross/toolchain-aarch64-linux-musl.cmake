# Linux arm64 with musl (Debian's musl-dev:arm64 over gcc-aarch64-linux-gnu): the programs run
# under qemu-user, whose loader is Debian's arm64 musl (/lib/ld-musl-aarch64.so.1 of musl:arm64).
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(ND_CROSS_MUSL_GCC aarch64-linux-musl-gcc)
# Debian's arm64 gcc calls atomics out of line by default, through libgcc code that asks glibc's
# __getauxval for the CPU's features; musl has no __getauxval: inline atomics (as Alpine's gcc)
set(ND_CROSS_MUSL_CFLAGS -mno-outline-atomics)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-musl.cmake)
find_program(ND_QEMU_AARCH64 qemu-aarch64)
if(ND_QEMU_AARCH64)
  # musl's loader and the program's libraries from the guest's own paths (qemu's default -L /)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ND_QEMU_AARCH64} -E ND_TEST_EMULATOR=qemu-aarch64)
endif()
