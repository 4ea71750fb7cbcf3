# Linux arm64 with Debian's gcc-aarch64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(ND_CROSS_TRIPLET aarch64-linux-gnu)

find_program(CMAKE_C_COMPILER NAMES ${ND_CROSS_TRIPLET}-gcc REQUIRED)
# try_compile projects read this file again: hand them the same settings
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ND_CROSS_DEPS ND_CROSS_WINEPREFIX)
set(CMAKE_FIND_ROOT_PATH /usr/${ND_CROSS_TRIPLET} ${ND_CROSS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs the programs under qemu-user with the arm64 sysroot
find_program(ND_QEMU_AARCH64 qemu-aarch64)
if(ND_QEMU_AARCH64)
  # The cross toolchain's own C library first: where Debian's arm64 libc6 is also installed
  # (multiarch, for the .NET runs), the loader under -L would otherwise read the host's
  # ld.so.cache and mix the two C libraries (programs hang in their first thread).
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ND_QEMU_AARCH64} -L /usr/${ND_CROSS_TRIPLET}
      -E LD_LIBRARY_PATH=/usr/${ND_CROSS_TRIPLET}/lib -E ND_TEST_EMULATOR=qemu-aarch64)
endif()
