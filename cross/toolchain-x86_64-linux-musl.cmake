# Linux x86-64 with musl (Debian's musl-tools): the programs run natively on this machine, through
# Debian's musl loader (/lib/ld-musl-x86_64.so.1).
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(ND_CROSS_MUSL_GCC musl-gcc)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-musl.cmake)
