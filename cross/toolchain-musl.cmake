# Linux with musl libc (Alpine's C library), with Debian's gcc and musl: the musl-gcc wrappers
# of musl-tools (x86-64) and of musl-dev:arm64 (aarch64-linux-musl-gcc, through multiarch) run
# the machine's gcc with musl's own specs file, so headers, start files and libc are musl's.
# Included by toolchain-x86_64-linux-musl.cmake and toolchain-aarch64-linux-musl.cmake, which
# set ND_CROSS_MUSL_GCC, ND_CROSS_MUSL_CFLAGS and the processor.
set(CMAKE_SYSTEM_NAME Linux)
find_program(CMAKE_C_COMPILER NAMES ${ND_CROSS_MUSL_GCC} REQUIRED)
# try_compile projects read this file again: hand them the same settings
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ND_CROSS_DEPS)
# only this build's dependencies (zlib, liburing, cmocka, libdeflate built for musl), never the
# machine's glibc builds of them
set(CMAKE_FIND_ROOT_PATH ${ND_CROSS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# musl's specs drop every system include folder (-nostdinc): the dependencies' headers, and
# the Linux UAPI headers that liburing.h includes (sub-build.cmake links them in there), come from
# the dependencies' prefix. cmocka.h defines uintptr_t itself unless told the C library did, and
# guesses its width from glibc's __WORDSIZE, which arm64 musl lacks: it did (<stdint.h>).
set(CMAKE_C_FLAGS_INIT "-isystem ${ND_CROSS_DEPS}/include -D_UINTPTR_T_DEFINED ${ND_CROSS_MUSL_CFLAGS}")
